/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * rte_mempool as a backend: the speed of light for fixed-size objects. A
 * workload that uses one size at a time (MP_WL_FIXED) calls prepare() with
 * that size, its alignment and how many blocks an lcore keeps at most; the
 * pool gets a per-lcore cache (up to 256 objects) when its objects are
 * small enough. An alignment beyond the cache line is honoured by objects
 * of size + align: the block is the aligned address inside, and the word
 * before it holds the object's address for the free.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mempool.h>

#include "malloc_perf.h"

/* what the pools of all lcores may take, to size the per-lcore caches */
#define POOL_CACHE_BUDGET (64u << 20)
#define POOL_CACHE_MAX 256u
#define POOL_CACHE_MIN 16u

static struct {
	struct rte_mempool *mp;
	size_t size;
	unsigned int align;
	bool shifted; /* align > cache line: blocks inside larger objects */
	unsigned int seq;
} pool;

static int
mempool_prepare(size_t size, unsigned int align, unsigned int max_live, unsigned int nlcores)
{
	char name[RTE_MEMPOOL_NAMESIZE];
	size_t elt;
	unsigned int cache, n;

	if (pool.mp != NULL)
		return -EBUSY;
	mp_backend_lock();
	pool.shifted = align > RTE_CACHE_LINE_SIZE;
	elt = pool.shifted ? size + align : RTE_MAX(size, sizeof(void *));
	if (elt > UINT32_MAX) {
		mp_backend_unlock();
		return -EINVAL;
	}
	nlcores = RTE_MAX(nlcores, 1u);
	cache = (unsigned int)RTE_MIN((size_t)POOL_CACHE_MAX,
		POOL_CACHE_BUDGET / elt / 2 / nlcores);
	if (cache < POOL_CACHE_MIN)
		cache = 0;
	n = nlcores * (max_live + cache + cache / 2 + 1) + 8;
	snprintf(name, sizeof(name), "mp_pool_%u", pool.seq++);
	/* no IOVA needed: objects larger than a page may span pages */
	pool.mp = rte_mempool_create(name, n, (unsigned int)elt, cache, 0, NULL, NULL, NULL, NULL,
		rte_socket_id() == (unsigned int)SOCKET_ID_ANY ? 0 : (int)rte_socket_id(),
		RTE_MEMPOOL_F_NO_IOVA_CONTIG);
	pool.size = size;
	pool.align = align;
	mp_backend_unlock();
	if (pool.mp == NULL) {
		fprintf(stderr, "mempool: %u objects of %zu bytes: %s\n", n, elt,
			rte_strerror(rte_errno));
		return -ENOMEM;
	}
	return 0;
}

static void
mempool_unprepare(void)
{
	mp_backend_lock();
	rte_mempool_free(pool.mp);
	pool.mp = NULL;
	mp_backend_unlock();
}

static inline void *
to_block(void *obj)
{
	void **p;

	if (!pool.shifted)
		return obj;
	p = RTE_PTR_ALIGN_CEIL(RTE_PTR_ADD(obj, sizeof(void *)), pool.align);
	p[-1] = obj;
	return p;
}

static inline void *
to_obj(void *block)
{
	return pool.shifted ? ((void **)block)[-1] : block;
}

static void *
mempool_malloc(const char *type, size_t size, unsigned int align)
{
	void *obj;

	RTE_SET_USED(type);
	if (unlikely(pool.mp == NULL || size > pool.size || align > RTE_MAX(pool.align, 64u))) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (unlikely(rte_mempool_get(pool.mp, &obj) != 0)) {
		rte_errno = ENOMEM;
		return NULL;
	}
	return to_block(obj);
}

static void
mempool_free(void *ptr)
{
	if (ptr != NULL)
		rte_mempool_put(pool.mp, to_obj(ptr));
}

static int
mempool_malloc_bulk(void **objs, unsigned int n, size_t size, unsigned int align)
{
	unsigned int i;

	if (unlikely(pool.mp == NULL || size > pool.size || align > RTE_MAX(pool.align, 64u)))
		return -EINVAL;
	if (unlikely(rte_mempool_get_bulk(pool.mp, objs, n) != 0))
		return -ENOMEM;
	if (pool.shifted)
		for (i = 0; i < n; i++)
			objs[i] = to_block(objs[i]);
	return 0;
}

static void
mempool_free_bulk(void *const *objs, unsigned int n)
{
	void *tmp[MP_MAX_BURST];
	unsigned int i;

	if (!pool.shifted) {
		rte_mempool_put_bulk(pool.mp, objs, n);
		return;
	}
	for (i = 0; i < n; i++)
		tmp[i] = to_obj(objs[i]);
	rte_mempool_put_bulk(pool.mp, tmp, n);
}

/* the pool, in heap terms: its objects are the heap */
static int
mempool_stats(int socket, struct rte_malloc_socket_stats *st)
{
	size_t elt;
	unsigned int used, avail;

	if (pool.mp == NULL || socket != pool.mp->socket_id)
		return -1;
	memset(st, 0, sizeof(*st));
	elt = pool.mp->elt_size;
	used = rte_mempool_in_use_count(pool.mp);
	avail = rte_mempool_avail_count(pool.mp);
	st->heap_totalsz_bytes = (size_t)pool.mp->size * elt;
	st->heap_allocsz_bytes = (size_t)used * elt;
	st->heap_freesz_bytes = (size_t)avail * elt;
	st->greatest_free_size = elt;
	st->alloc_count = used;
	st->free_count = avail;
	return 0;
}

static const char *
mempool_source(void)
{
	return "EAL memzones, a pool per size";
}

const struct mp_backend mp_be_mempool = {
	.name = "mempool",
	.desc = "rte_mempool get/put (bulk: get_bulk/put_bulk), fixed-size workloads only",
	.flags = MP_BE_FIXED,
	.malloc = mempool_malloc,
	.free = mempool_free,
	.malloc_bulk = mempool_malloc_bulk,
	.free_bulk = mempool_free_bulk,
	.prepare = mempool_prepare,
	.unprepare = mempool_unprepare,
	.socket_stats = mempool_stats,
	.source = mempool_source,
};
