/* SPDX-License-Identifier: BSD-3-Clause */

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <rte_debug.h>
#include <rte_errno.h>

#include "arena.h"
#include "log.h"

void
hpm_arena_init(struct hpm_arena *a, int socket, int node, bool validate, struct hpm_meta *meta,
	struct hpm_pagemap *pagemap, const struct hpm_config *cfg, bool unit_iova_contig)
{
	memset(a, 0, sizeof(*a));
	hpm_lock_init(&a->lock);
	a->socket = socket;
	a->present = true;
	a->validate = validate;
	hpm_chunk_set_init(&a->cs, socket, node, meta, pagemap, cfg->chunk_size, cfg->retain_size,
		cfg->release_delay_ms, unit_iova_contig);
	hpm_gran_set_init(&a->gran, &a->cs);
	hpm_heap_init(&a->heap, &a->cs);
	hpm_slab_set_init(&a->slab, &a->cs);
}

bool
hpm_arena_release_spares_locked(struct hpm_arena *a)
{
	/* all three, whatever the first gave back */
	unsigned int released = hpm_gran_release_spares(&a->gran);

	released += hpm_heap_release_spares(&a->heap);
	released += hpm_slab_release_spares(&a->slab);
	return released != 0;
}

void
hpm_arena_torn(struct hpm_arena *a)
{
	rte_errno = ENOTRECOVERABLE;
	if (__atomic_exchange_n(&a->torn_told, 1, __ATOMIC_RELAXED) == 0)
		HPM_LOG(ERR,
			"socket %d: a process died holding the heap's lock: the heap may be "
			"half-changed; every later allocation, free and check on the socket "
			"fails (ENOTRECOVERABLE)",
			a->socket);
}

int
hpm_arena_stats(struct hpm_arena *a, const struct hpm_source_ops *src,
	struct rte_malloc_socket_stats *st, struct hpm_arena_parts *parts)
{
	unsigned int count = 0;
	size_t longest = 0, bytes = 0;

	if (!hpm_arena_lock(a))
		return -ENOTRECOVERABLE;
	if (!parts->held_only) {
		hpm_chunk_free_ranges(&a->cs, &count, &longest, &bytes);
		hpm_gran_free_ranges(&a->gran, &count, &longest, &bytes);
		hpm_heap_free_ranges(&a->heap, &count, &longest, &bytes);
		hpm_slab_free_ranges(&a->slab, &count, &longest, &bytes);
	}
	st->heap_totalsz_bytes = a->cs.total_bytes;
	st->heap_allocsz_bytes = a->alloc_bytes;
	st->heap_freesz_bytes = a->cs.total_bytes - a->alloc_bytes;
	st->greatest_free_size = longest;
	st->free_count = count;
	st->alloc_count = a->alloc_count;
	parts->nchunks =
		hpm_chunk_extents(&a->cs, src, parts->ext, parts->max, &parts->chunk_bytes);
	parts->empty_bytes = a->cs.empty_bytes;
	parts->free_bytes = bytes;
	parts->in_use_bytes = (size_t)a->cs.units_in_use << HPM_UNIT_SHIFT;
	parts->in_use_peak_bytes = (size_t)a->cs.units_in_use_peak << HPM_UNIT_SHIFT;
	hpm_unlock(&a->lock);
	return 0;
}

static unsigned int
verify_locked(struct hpm_arena *a)
{
	size_t live_bytes = 0;
	uint64_t live_count = 0;
	unsigned int bad;

	bad = hpm_chunk_verify(&a->cs);
	bad += hpm_gran_verify(&a->gran, &live_bytes, &live_count);
	bad += hpm_heap_verify(&a->heap, &live_bytes, &live_count);
	bad += hpm_slab_verify(&a->slab, &live_bytes, &live_count);
	if (bad == 0) {
		const struct hpm_chunk *c;
		unsigned int i;

		for (c = a->cs.chunks; c != NULL; c = c->next)
			for (i = 0; i < c->nunits; i++)
				if (c->units[i].role == HPM_UNIT_LARGE &&
					c->units[i].head == &c->units[i]) {
					live_bytes += (size_t)c->units[i].nunits << HPM_UNIT_SHIFT;
					live_count++;
				}
		if (live_bytes != a->alloc_bytes || live_count != a->alloc_count) {
			HPM_LOG(ERR,
				"check: socket %d: live %zu bytes in %" PRIu64
				" blocks, counted %zu in %" PRIu64,
				a->socket, live_bytes, live_count, a->alloc_bytes, a->alloc_count);
			bad++;
		}
	}
	return bad;
}

unsigned int
hpm_arena_verify(struct hpm_arena *a)
{
	unsigned int bad;

	if (!hpm_arena_lock(a))
		return 1;
	bad = verify_locked(a);
	hpm_unlock(&a->lock);
	return bad;
}

void
hpm_arena_validate_locked(struct hpm_arena *a)
{
	unsigned int bad = verify_locked(a);

	/* an overflow into a heap header is reported and repaired, not a broken invariant */
	if (bad != 0 && hpm_heap_repair(&a->heap) != 0)
		bad = verify_locked(a);
	if (bad != 0)
		rte_panic("hpm: socket %d: %u broken invariants (see above)\n", a->socket, bad);
}
