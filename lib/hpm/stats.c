/* SPDX-License-Identifier: BSD-3-Clause */

/* What the heap tells about itself: statistics, dumps, checks, addresses. */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>

#include "block.h"
#include "debug.h"
#include "hpm_malloc.h"
#include "lcore_cache.h"
#include "poison.h"
#include "source_eal.h"
#include "init.h"

/* The socket that counts a metadata region of socket s: its own, or the first. */
static int
meta_socket(int s)
{
	return hpm_state_has_socket(hpm_state, s) ? s : hpm_state->socket_ids[0];
}

/*
 * A socket's figures: the arena's, the pages its chunks and its metadata
 * regions hold (counted once where they share one), and the caches' blocks
 * moved from allocated to free. held_only: heap_totalsz_bytes and hs's
 * held, chunk and meta bytes are right, the rest is not filled in (the
 * free ranges and the caches are not walked: trim's before and after).
 */
static int
socket_stats(int socket, struct rte_malloc_socket_stats *st, struct hpm_heap_stats *hs,
	bool held_only)
{
	struct hpm_arena_parts parts;
	struct hpm_extent *e = NULL;
	unsigned int cap = 64, n, nm, i;
	size_t cached_bytes, meta_all, meta_bytes = 0, held;
	uint64_t cached_blocks;

	/* statistics of a heap that does not exist yet: none, and none made */
	if (hpm_state_find() != 0 || !hpm_state_has_socket(hpm_state, socket)) {
		rte_errno = EINVAL;
		return -1;
	}
	for (;;) {
		struct hpm_extent *grown = realloc(e, cap * sizeof(*e));

		if (grown == NULL) {
			free(e);
			rte_errno = ENOMEM;
			return -1;
		}
		e = grown;
		memset(&parts, 0, sizeof(parts));
		parts.ext = e;
		parts.max = cap;
		parts.held_only = held_only;
		if (hpm_arena_stats(&hpm_state->arenas[socket], hpm_src, st, &parts) != 0) {
			free(e);
			return -1;
		}
		n = parts.nchunks < cap ? cap - parts.nchunks : 0;
		n = hpm_meta_extents(&hpm_state->meta, hpm_src, e + RTE_MIN(parts.nchunks, cap), n,
			&meta_all);
		if (parts.nchunks + n <= cap)
			break;
		cap = 2 * (parts.nchunks + n);
	}
	for (i = nm = 0; i < n; i++) {
		struct hpm_extent *m = &e[parts.nchunks + i];

		if (meta_socket(m->socket) != socket)
			continue;
		meta_bytes += m->len;
		e[parts.nchunks + nm++] = *m;
	}
	held = hpm_extents_bytes(e, parts.nchunks + nm);
	free(e);
	st->heap_totalsz_bytes = held;
	if (held_only)
		return 0;
	/* blocks held by caches are free to the application */
	hpm_cache_held(socket, &cached_bytes, &cached_blocks);
	cached_bytes = RTE_MIN(cached_bytes, st->heap_allocsz_bytes);
	st->heap_allocsz_bytes -= cached_bytes;
	st->alloc_count -= RTE_MIN(cached_blocks, (uint64_t)st->alloc_count);
	st->heap_freesz_bytes = held - st->heap_allocsz_bytes;
	*hs = (struct hpm_heap_stats){
		.held_bytes = held,
		.chunk_bytes = parts.chunk_bytes,
		.meta_bytes = meta_bytes,
		.overhead_bytes = held - parts.chunk_bytes - meta_bytes,
		.live_bytes = st->heap_allocsz_bytes,
		.cached_bytes = cached_bytes,
		.free_bytes = parts.free_bytes,
		.empty_chunk_bytes = parts.empty_bytes,
		.chunks = parts.nchunks,
		.meta_regions = nm,
		.in_use_bytes = parts.in_use_bytes,
		.in_use_peak_bytes = parts.in_use_peak_bytes,
	};
	return 0;
}

int
hpm_malloc_get_socket_stats(int socket, struct rte_malloc_socket_stats *stats)
{
	struct hpm_heap_stats hs;

	if (stats == NULL) {
		rte_errno = EINVAL;
		return -1;
	}
	return socket_stats(socket, stats, &hs, false);
}

int
hpm_heap_get_stats(int socket, struct hpm_heap_stats *stats)
{
	struct rte_malloc_socket_stats st;

	if (stats == NULL) {
		rte_errno = EINVAL;
		return -1;
	}
	return socket_stats(socket, &st, stats, false);
}

/* What every socket holds from the source (heap_totalsz_bytes summed). */
static size_t
held_bytes(void)
{
	struct rte_malloc_socket_stats st;
	struct hpm_heap_stats hs;
	int saved = rte_errno;
	size_t held = 0;
	unsigned int i;

	for (i = 0; i < hpm_state->nsockets; i++)
		if (socket_stats(hpm_state->socket_ids[i], &st, &hs, true) == 0)
			held += st.heap_totalsz_bytes;
	rte_errno = saved;
	return held;
}

/*
 * Every socket's empty chunks back to the source: beyond retain_size, or
 * all of them (all: a socket busy is skipped, since its holder may be this
 * thread, growing it: see hpm_heap_trim_all()).
 */
static size_t
trim(bool all)
{
	size_t released = 0, before;
	unsigned int i;

	if (hpm_state_find() != 0)
		return 0;
	before = held_bytes();
	if (all)
		hpm_cache_flush();
	else
		hpm_cache_reap(NULL);
	for (i = 0; i < hpm_state->nsockets; i++) {
		struct hpm_arena *a = &hpm_state->arenas[hpm_state->socket_ids[i]];

		if (all ? !hpm_trylock(&a->lock) : !hpm_arena_lock(a))
			continue;
		/* what the caches moved between them is free memory too */
		hpm_cache_xfer_drain_locked(a);
		/* the pages kept for reuse may be all that keeps a chunk */
		hpm_arena_release_spares_locked(a);
		released += all ? hpm_chunk_release_empty(&a->cs)
				: hpm_chunk_release_idle(&a->cs, UINT64_MAX);
		hpm_unlock(&a->lock);
	}
	if (released == 0)
		return 0;
	/* the pages given back: the chunks' and what the source held around them */
	released = held_bytes();
	return before > released ? before - released : 0;
}

size_t
hpm_heap_trim(void)
{
	return trim(false);
}

size_t
hpm_heap_trim_all(void)
{
	/* called back from inside hpmalloc's own reservation: its locks are held */
	return hpm_source_eal_depth != 0 ? 0 : trim(true);
}

void
hpm_malloc_dump_stats(FILE *f, const char *type)
{
	struct rte_malloc_socket_stats st;
	struct hpm_heap_stats hs;
	size_t cached_bytes;
	uint64_t cached_blocks;
	unsigned int i;

	RTE_SET_USED(type);
	if (hpm_state_find() != 0)
		return;
	for (i = 0; i < hpm_state->nsockets; i++) {
		int socket = hpm_state->socket_ids[i];

		if (hpm_malloc_get_socket_stats(socket, &st) != 0 ||
			hpm_heap_get_stats(socket, &hs) != 0) {
			fprintf(f, "Heap id:%d\n\tunusable: %s\n", socket, rte_strerror(rte_errno));
			continue;
		}
		hpm_cache_held(socket, &cached_bytes, &cached_blocks);
		fprintf(f, "Heap id:%d\n", socket);
		fprintf(f, "\tHeap name:hpm_socket_%d (%s)\n", socket, hpm_src->name);
		fprintf(f, "\tHeap_size:%zu,\n", st.heap_totalsz_bytes);
		fprintf(f, "\tFree_size:%zu,\n", st.heap_freesz_bytes);
		fprintf(f, "\tAlloc_size:%zu,\n", st.heap_allocsz_bytes);
		fprintf(f, "\tGreatest_free_size:%zu,\n", st.greatest_free_size);
		fprintf(f, "\tAlloc_count:%u,\n", st.alloc_count);
		fprintf(f, "\tFree_count:%u,\n", st.free_count);
		fprintf(f, "\tCache_size:%zu,\n", cached_bytes);
		fprintf(f, "\tCache_count:%" PRIu64 ",\n", cached_blocks);
		fprintf(f, "\tChunk_size:%zu,\n", hs.chunk_bytes);
		fprintf(f, "\tChunk_count:%u,\n", hs.chunks);
		fprintf(f, "\tEmpty_chunk_size:%zu,\n", hs.empty_chunk_bytes);
		fprintf(f, "\tIn_use_size:%zu,\n", hs.in_use_bytes);
		fprintf(f, "\tIn_use_peak_size:%zu,\n", hs.in_use_peak_bytes);
		fprintf(f, "\tMeta_size:%zu,\n", hs.meta_bytes);
		fprintf(f, "\tSource_overhead:%zu,\n", hs.overhead_bytes);
	}
}

int
hpm_cache_stats(unsigned int lcore_id, int cls, struct hpm_cache_stats *st)
{
	struct hpm_lcore_cache *c;
	unsigned int i;

	if (lcore_id >= HPM_CACHE_SLOTS || cls >= HPM_CACHE_NCLASS || st == NULL)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	c = hpm_state_find() == 0 ? __atomic_load_n(&hpm_state->caches[lcore_id], __ATOMIC_ACQUIRE)
				  : NULL;
	if (c == NULL)
		return -ENOENT;
	st->socket = c->socket;
	for (i = 0; i < HPM_CACHE_NCLASS; i++) {
		const struct hpm_cache_stack *cc = hpm_cache_stack(c, i);
		uint32_t len = __atomic_load_n(&cc->len, __ATOMIC_RELAXED);

		if (cls >= 0 && (unsigned int)cls != i)
			continue;
		st->hits += __atomic_load_n(&cc->hits, __ATOMIC_RELAXED);
		st->misses += __atomic_load_n(&cc->misses, __ATOMIC_RELAXED);
		st->flushes += __atomic_load_n(&cc->flushes, __ATOMIC_RELAXED);
		st->blocks += len;
		st->bytes += len * hpm_cache_class_bytes(i);
		st->limit += __atomic_load_n(&cc->limit, __ATOMIC_RELAXED);
	}
	return 0;
}

unsigned int
hpm_cache_class_count(void)
{
	return HPM_CACHE_NCLASS;
}

size_t
hpm_cache_class_size(unsigned int cls)
{
	if (cls >= HPM_CACHE_NCLASS)
		return 0;
	/* what a request may ask for: a small class's block less its header */
	return cls < HPM_CACHE_HEAP_NCLASS ? hpm_cache_class_bytes(cls) - 16
					   : hpm_cache_class_bytes(cls);
}

int
hpm_heap_check(void)
{
	unsigned int bad = 0, i;
	bool torn = false;

	if (hpm_state_find() != 0)
		return 0;
	HPM_POISON_SYNC();
	hpm_cache_reap(NULL);
	for (i = 0; i < hpm_state->nsockets; i++) {
		struct hpm_arena *a = &hpm_state->arenas[hpm_state->socket_ids[i]];

		bad += hpm_arena_verify(a);
		torn |= hpm_lock_torn(&a->lock);
	}
	bad += hpm_debug_check_all();
	if (torn)
		return -ENOTRECOVERABLE;
	return bad != 0 ? -EFAULT : 0;
}
