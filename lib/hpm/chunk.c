/* SPDX-License-Identifier: BSD-3-Clause */

#include <errno.h>
#include <string.h>
#include <time.h>

#include <rte_errno.h>

#include "arena.h"
#include "bitrun.h"
#include "check.h"
#include "chunk.h"
#include "lcore_cache.h"
#include "log.h"
#include "poison.h"
#include "state.h"

/*
 * Growth follows the heap (1/32 of it, rounded down to units) from one unit
 * up to the chunk size: a heap holds at most 1/32 more than it ever needed.
 */
static size_t
grow_step(const struct hpm_arena *a)
{
	size_t step = RTE_ALIGN_FLOOR(a->total_bytes / 32, HPM_UNIT_SIZE);

	if (step < HPM_UNIT_SIZE)
		step = HPM_UNIT_SIZE;
	return RTE_MIN(step, hpm_state->cfg.chunk_size);
}

static void
chunk_link(struct hpm_arena *a, struct hpm_chunk *c)
{
	c->prev = NULL;
	c->next = a->chunks;
	if (a->chunks != NULL)
		a->chunks->prev = c;
	a->chunks = c;
}

static void
chunk_unlink(struct hpm_arena *a, struct hpm_chunk *c)
{
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		a->chunks = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	if (a->hint == c)
		a->hint = a->chunks;
}

static struct hpm_chunk *
chunk_new(struct hpm_arena *a, size_t len, size_t align, bool contig)
{
	struct hpm_region r;
	struct hpm_chunk *c;
	size_t meta_size;
	unsigned int i, n;
	int rc;

	rc = hpm_source_reserve(hpm_src, &r, len, align,
		hpm_state->cfg.fake_sockets != 0 ? hpm_state->node_of_socket[a->socket] : a->socket,
		contig);
	if (rc != 0) {
		rte_errno = rc == -ENOTSUP ? ENOTSUP : ENOMEM;
		return NULL;
	}
	n = r.len >> HPM_UNIT_SHIFT;
	meta_size = sizeof(*c) + n * sizeof(struct hpm_unit) + RTE_ALIGN_CEIL(n, 64) / 8;
	c = hpm_meta_alloc(&hpm_state->meta, hpm_src, meta_size);
	if (c == NULL)
		goto fail_region;
	/* nothing of it is the application's until a block is handed out */
	HPM_POISON(r.va, r.len);
	c->region = r;
	c->nunits = n;
	c->nfree = n;
	c->meta_size = meta_size;
	c->used = (uint64_t *)&c->units[n];
	for (i = 0; i < n; i++) {
		struct hpm_unit *u = &c->units[i];

		u->role = HPM_UNIT_FREE;
		u->dirty = !r.zeroed;
		u->socket = a->socket;
		u->index = i;
		u->chunk = c;
		u->va = (uint8_t *)r.va + ((size_t)i << HPM_UNIT_SHIFT);
		u->iova = hpm_src->has_iova && r.unit_iova_contig ? hpm_src->iova(&r, u->va)
								  : RTE_BAD_IOVA;
	}
	if (hpm_pagemap_map(&hpm_state->pagemap, &hpm_state->meta, hpm_src, r.va, n, c->units))
		goto fail_meta;
	chunk_link(a, c);
	a->total_bytes += r.len;
	a->empty_bytes += r.len;
	a->chunks_reserved++;
	return c;

fail_meta:
	hpm_meta_free(&hpm_state->meta, hpm_src, c, meta_size);
fail_region:
	hpm_src->release(&r);
	rte_errno = ENOMEM;
	return NULL;
}

static void
chunk_release(struct hpm_arena *a, struct hpm_chunk *c)
{
	struct hpm_region r = c->region;

	chunk_unlink(a, c);
	hpm_pagemap_unmap(&hpm_state->pagemap, r.va, c->nunits);
	a->total_bytes -= r.len;
	if (c->nfree == c->nunits)
		a->empty_bytes -= r.len;
	a->chunks_released++;
	hpm_meta_free(&hpm_state->meta, hpm_src, c, c->meta_size);
	HPM_UNPOISON(r.va, r.len);
	hpm_src->release(&r);
}

bool
hpm_chunk_run_iova_contig(const struct hpm_chunk *c, unsigned int pos, unsigned int n)
{
	unsigned int i;

	if (!c->region.unit_iova_contig || c->units[pos].iova == RTE_BAD_IOVA)
		return false;
	for (i = 1; i < n; i++)
		if (c->units[pos + i].iova !=
			c->units[pos].iova + ((rte_iova_t)i << HPM_UNIT_SHIFT))
			return false;
	return true;
}

static int
find_in_chunk(const struct hpm_chunk *c, unsigned int n, unsigned int align, bool contig)
{
	unsigned int phase = ((uintptr_t)c->region.va >> HPM_UNIT_SHIFT) & (align - 1);
	unsigned int from = c->lowfree;
	int pos;

	for (;;) {
		pos = hpm_bitrun_find(c->used, c->nunits, from, n, align, phase);
		if (pos < 0 || !contig || hpm_chunk_run_iova_contig(c, pos, n))
			return pos;
		from = pos + 1;
	}
}

static struct hpm_unit *
take_at(struct hpm_arena *a, struct hpm_chunk *c, unsigned int pos, unsigned int n)
{
	if (c->nfree == c->nunits) {
		a->empty_bytes -= c->region.len;
		c->empty_since_ms = 0;
	}
	hpm_bitrun_set(c->used, pos, n);
	c->nfree -= n;
	if (pos == c->lowfree) {
		int next = hpm_bitrun_next_clear(c->used, c->nunits, pos + n);

		c->lowfree = next < 0 ? c->nunits : (unsigned int)next;
	}
	a->hint = c;
	return &c->units[pos];
}

struct hpm_unit *
hpm_chunk_take(struct hpm_arena *a, unsigned int n, unsigned int align_units, bool contig)
{
	struct hpm_chunk *start = a->hint != NULL ? a->hint : a->chunks;
	struct hpm_chunk *c = start;
	bool reclaimed = false;
	size_t len;
	int pos;

	align_units = RTE_MAX(align_units, 1u);
search:
	/* from the hint round the list: usually the hint itself has room */
	while (c != NULL) {
		if (c->nfree >= n) {
			pos = find_in_chunk(c, n, align_units, contig);
			if (pos >= 0)
				return take_at(a, c, pos, n);
		}
		c = c->next != NULL ? c->next : a->chunks;
		if (c == start)
			break;
	}
	/* before asking the source: what the lcore caches hold may be enough */
	if (!reclaimed && hpm_cache_reclaim_locked(a)) {
		reclaimed = true;
		c = start = a->hint != NULL ? a->hint : a->chunks;
		goto search;
	}
	len = RTE_MAX(grow_step(a), (size_t)n << HPM_UNIT_SHIFT);
	/* a single unit is contiguous when the source's units are: no special memory */
	c = chunk_new(a, len, (size_t)align_units << HPM_UNIT_SHIFT,
		contig && (n > 1 || !hpm_state->unit_iova_contig));
	if (c == NULL)
		return NULL;
	pos = find_in_chunk(c, n, align_units, contig);
	if (pos < 0) {
		rte_errno = ENOMEM;
		return NULL;
	}
	return take_at(a, c, pos, n);
}

bool
hpm_chunk_extend(struct hpm_arena *a, struct hpm_unit *u, unsigned int n, unsigned int more)
{
	struct hpm_chunk *c = u->chunk;
	unsigned int end = u->index + n;

	RTE_SET_USED(a);
	if (end + more > c->nunits || hpm_bitrun_next_set(c->used, end, end + more) != end + more)
		return false;
	hpm_bitrun_set(c->used, end, more);
	c->nfree -= more;
	if (c->lowfree == end) {
		int next = hpm_bitrun_next_clear(c->used, c->nunits, end + more);

		c->lowfree = next < 0 ? c->nunits : (unsigned int)next;
	}
	return true;
}

void
hpm_chunk_give(struct hpm_arena *a, struct hpm_unit *u, unsigned int n)
{
	struct hpm_chunk *c = u->chunk;
	unsigned int i;
	uint64_t now;

	HPM_ASSERT(n >= 1 && u->index + n <= c->nunits && hpm_bitrun_all_set(c->used, u->index, n));
	for (i = 0; i < n; i++)
		u[i].role = HPM_UNIT_FREE;
	hpm_bitrun_clear(c->used, u->index, n);
	c->nfree += n;
	c->lowfree = RTE_MIN(c->lowfree, u->index);
	a->hint = c;
	if (c->nfree < c->nunits)
		return;
	a->empty_bytes += c->region.len;
	if (a->empty_bytes <= hpm_state->cfg.retain_size)
		return;
	if (hpm_state->cfg.release_delay_ms == 0) {
		chunk_release(a, c);
		return;
	}
	/* beyond the retain threshold: back to the source once idle long enough */
	now = hpm_chunk_now_ms();
	c->empty_since_ms = now;
	if (a->release_due_ms == 0 || now + hpm_state->cfg.release_delay_ms < a->release_due_ms)
		a->release_due_ms = now + hpm_state->cfg.release_delay_ms;
	if (now >= a->release_due_ms)
		hpm_chunk_release_idle(a, now);
}

uint64_t
hpm_chunk_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	/* never 0: that means "in use" */
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + 1;
}

size_t
hpm_chunk_release_idle(struct hpm_arena *a, uint64_t now_ms)
{
	uint64_t delay = hpm_state->cfg.release_delay_ms;
	struct hpm_chunk *c, *next;
	size_t released = 0;

	/* the earliest moment a walk can release anything, for the next give */
	a->release_due_ms = 0;
	for (c = a->chunks; c != NULL && a->empty_bytes > hpm_state->cfg.retain_size; c = next) {
		next = c->next;
		if (c->nfree != c->nunits)
			continue;
		if (c->empty_since_ms == 0)
			c->empty_since_ms = now_ms;
		if (now_ms != UINT64_MAX && now_ms - c->empty_since_ms < delay) {
			if (a->release_due_ms == 0 || c->empty_since_ms + delay < a->release_due_ms)
				a->release_due_ms = c->empty_since_ms + delay;
			continue;
		}
		released += c->region.len;
		chunk_release(a, c);
	}
	return released;
}

int
hpm_chunk_reserve(struct hpm_arena *a, size_t len)
{
	len = RTE_ALIGN_CEIL(len, HPM_UNIT_SIZE);
	return chunk_new(a, len, HPM_UNIT_SIZE, false) != NULL ? 0 : -ENOMEM;
}

void
hpm_chunk_release_all(struct hpm_arena *a)
{
	while (a->chunks != NULL)
		chunk_release(a, a->chunks);
}

void
hpm_chunk_free_ranges(const struct hpm_arena *a, unsigned int *count, size_t *longest,
	size_t *bytes)
{
	const struct hpm_chunk *c;

	for (c = a->chunks; c != NULL; c = c->next) {
		*count += hpm_bitrun_count_clear_runs(c->used, c->nunits);
		*longest = RTE_MAX(*longest,
			(size_t)hpm_bitrun_longest_clear(c->used, c->nunits) << HPM_UNIT_SHIFT);
		*bytes += (size_t)c->nfree << HPM_UNIT_SHIFT;
	}
}

unsigned int
hpm_chunk_verify(const struct hpm_arena *a)
{
	const struct hpm_chunk *c;
	unsigned int bad = 0, i;
	size_t total = 0, empty = 0;

	for (c = a->chunks; c != NULL; c = c->next) {
		unsigned int nfree = 0;

		total += c->region.len;
		if (c->nfree == c->nunits)
			empty += c->region.len;
		for (i = 0; i < c->nunits; i++) {
			const struct hpm_unit *u = &c->units[i];
			bool used = hpm_bitrun_test(c->used, i);

			if (used != (u->role != HPM_UNIT_FREE)) {
				HPM_LOG(ERR, "check: unit %p role %u but used bit %d", u->va,
					u->role, used);
				bad++;
			}
			if (!used) {
				nfree++;
				if (i < c->lowfree) {
					HPM_LOG(ERR, "check: free unit %p below lowfree", u->va);
					bad++;
				}
			}
			if (hpm_pagemap_lookup(&hpm_state->pagemap, u->va) != u) {
				HPM_LOG(ERR, "check: page map does not find unit %p", u->va);
				bad++;
			}
		}
		if (nfree != c->nfree) {
			HPM_LOG(ERR, "check: chunk %p counts %u free units, has %u", c->region.va,
				c->nfree, nfree);
			bad++;
		}
	}
	if (total != a->total_bytes || empty != a->empty_bytes) {
		HPM_LOG(ERR, "check: socket %d: total %zu/%zu empty %zu/%zu", a->socket, total,
			a->total_bytes, empty, a->empty_bytes);
		bad++;
	}
	return bad;
}
