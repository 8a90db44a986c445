/* SPDX-License-Identifier: BSD-3-Clause */

/* What the heap tells about itself: statistics, dumps, checks, addresses. */

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <rte_errno.h>

#include "block.h"
#include "debug.h"
#include "hpm_malloc.h"
#include "lcore_cache.h"
#include "poison.h"
#include "init.h"

int
hpm_malloc_get_socket_stats(int socket, struct rte_malloc_socket_stats *stats)
{
	size_t cached_bytes;
	uint64_t cached_blocks;

	/* statistics of a heap that does not exist yet: none, and none made */
	if (hpm_state_find() != 0) {
		rte_errno = EINVAL;
		return -1;
	}
	if (socket < 0 || socket >= RTE_MAX_NUMA_NODES || !hpm_state->arenas[socket].present ||
		stats == NULL) {
		rte_errno = EINVAL;
		return -1;
	}
	if (hpm_arena_stats(&hpm_state->arenas[socket], stats) != 0)
		return -1;
	/* blocks held by caches are free to the application */
	hpm_cache_held(socket, &cached_bytes, &cached_blocks);
	cached_bytes = RTE_MIN(cached_bytes, stats->heap_allocsz_bytes);
	stats->heap_allocsz_bytes -= cached_bytes;
	stats->heap_freesz_bytes += cached_bytes;
	stats->alloc_count -= RTE_MIN(cached_blocks, (uint64_t)stats->alloc_count);
	return 0;
}

void
hpm_malloc_dump_stats(FILE *f, const char *type)
{
	struct rte_malloc_socket_stats st;
	size_t cached_bytes;
	uint64_t cached_blocks;
	unsigned int i;

	RTE_SET_USED(type);
	if (hpm_state_find() != 0)
		return;
	for (i = 0; i < hpm_state->nsockets; i++) {
		int socket = hpm_state->socket_ids[i];

		if (hpm_malloc_get_socket_stats(socket, &st) != 0) {
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
		const struct hpm_cache_stack *cc = &c->cls[i];
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
