/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Mempool object memory from hpmalloc: blocks sized by the driver's
 * calc_mem_size, added page by page (runs of IOVA-contiguous pages as one
 * chunk each), given back to hpmalloc when the pool is freed.
 */

#include <errno.h>
#include <stdbool.h>

#include <rte_errno.h>
#include <rte_mempool.h>

#include "hpm_malloc.h"
#include "hpm_mempool.h"

/*
 * The driver's pool data, once: what rte_mempool_populate_default() and
 * rte_mempool_populate_iova() do first (DPDK does not export it); calc_mem_size
 * of some drivers (bucket) needs it.
 */
static int
ops_alloc_once(struct rte_mempool *mp)
{
	int rc;

	if (mp->flags & RTE_MEMPOOL_F_POOL_CREATED)
		return 0;
	rc = rte_mempool_get_ops(mp->ops_index)->alloc(mp);
	if (rc != 0)
		return rc;
	mp->flags |= RTE_MEMPOOL_F_POOL_CREATED;
	return 0;
}

/* The driver's calc_mem_size, or the default one (rte_mempool_ops_calc_mem_size()). */
static ssize_t
calc_mem_size(const struct rte_mempool *mp, uint32_t n, uint32_t pg_shift, size_t *min_chunk,
	size_t *align)
{
	const struct rte_mempool_ops *ops = rte_mempool_get_ops(mp->ops_index);

	if (ops->calc_mem_size == NULL)
		return rte_mempool_op_calc_mem_size_default(mp, n, pg_shift, min_chunk, align);
	return ops->calc_mem_size(mp, n, pg_shift, min_chunk, align);
}

/*
 * The first chunk of a block owns it; rte_mempool_free() calls this once per
 * block. As with DPDK's own pools, the memory is EAL's again afterwards
 * (rte_memzone_reserve(), another pool): the chunks the block leaves empty
 * go back to the source at once, not after release_delay_ms, retain_size
 * included.
 */
static void
block_free(struct rte_mempool_memhdr *memhdr, void *opaque)
{
	RTE_SET_USED(memhdr);
	hpm_free(opaque);
	hpm_heap_trim_all();
}

/* The page at offset off of a run that starts at IOVA first continues it. */
static bool
iova_follows(rte_iova_t first, size_t off, rte_iova_t next)
{
	if (first == RTE_BAD_IOVA)
		return next == RTE_BAD_IOVA;
	return next == first + off;
}

/*
 * Add a block's objects to the pool. Without IOVA-contiguous objects (or
 * pages) the block is one chunk; otherwise each run of pages that follow each
 * other in IOVA is one. *owned says whether a chunk of the pool owns the
 * block now. Returns the number of objects added, or a negative errno.
 */
static int
populate_block(struct rte_mempool *mp, char *va, size_t len, size_t pg_sz, bool *owned)
{
	rte_mempool_memchunk_free_cb_t *cb = block_free;
	size_t off, run;
	int added = 0, rc;

	*owned = false;
	if (pg_sz == 0 || (mp->flags & RTE_MEMPOOL_F_NO_IOVA_CONTIG)) {
		rc = rte_mempool_populate_iova(mp, va, RTE_BAD_IOVA, len, cb, va);
		*owned = rc > 0;
		return rc;
	}
	for (off = 0; off < len && mp->populated_size < mp->size; off += run) {
		rte_iova_t iova = hpm_malloc_virt2iova(va + off);

		run = RTE_MIN((size_t)(RTE_PTR_ALIGN_CEIL(va + off + 1, pg_sz) - (va + off)),
			len - off);
		while (off + run < len &&
			iova_follows(iova, run, hpm_malloc_virt2iova(va + off + run)))
			run = RTE_MIN(run + pg_sz, len - off);
		rc = rte_mempool_populate_iova(mp, va + off, iova, run, cb, cb != NULL ? va : NULL);
		if (rc < 0)
			return rc;
		if (rc > 0) {
			added += rc;
			cb = NULL;
			*owned = true;
		}
	}
	return added;
}

static int
populate(struct rte_mempool *mp)
{
	size_t pg_sz, min_chunk, align, len, max_len = SIZE_MAX;
	bool need_iova = !(mp != NULL && (mp->flags & RTE_MEMPOOL_F_NO_IOVA_CONTIG));
	bool contig, owned, force_contig = false;
	uint32_t pg_shift = 0;
	ssize_t mem_size;
	void *block;
	int rc;

	if (mp == NULL)
		return -EINVAL;
	if (mp->nb_mem_chunks != 0)
		return -EEXIST;
	rc = ops_alloc_once(mp);
	if (rc != 0)
		return rc;
	/* the page size objects must not straddle (0: they may) */
	rc = rte_mempool_get_page_size(mp, &pg_sz);
	if (rc < 0)
		return rc;
	if (pg_sz != 0)
		pg_shift = rte_bsf64(pg_sz);
	while (mp->populated_size < mp->size) {
		mem_size = calc_mem_size(mp, mp->size - mp->populated_size, pg_shift, &min_chunk,
			&align);
		if (mem_size < 0)
			return (int)mem_size;
		/* a driver whose minimum chunk is all of it wants one IOVA-contiguous block */
		contig = need_iova && (force_contig || min_chunk == (size_t)mem_size);
		len = contig ? (size_t)mem_size : RTE_MIN((size_t)mem_size, max_len);
		block = contig ? hpm_malloc_contig("mempool", len, align, mp->socket_id)
			       : hpm_malloc_socket("mempool", len, align, mp->socket_id);
		if (block == NULL) {
			rc = rte_errno != 0 ? rte_errno : ENOMEM;
			/* smaller blocks, as rte_mempool_populate_default() does with memzones */
			if (rc != ENOMEM || contig || len / 2 < min_chunk)
				return -rc;
			max_len = len / 2;
			continue;
		}
		rc = populate_block(mp, block, len, pg_sz, &owned);
		if (!owned)
			hpm_free(block);
		if (rc < 0)
			return rc;
		if (rc > 0)
			continue;
		/*
		 * No object fits in a run of IOVA-contiguous pages: objects
		 * larger than a page, pages scattered (IOVA as PA). DPDK gives up
		 * there; an IOVA-contiguous block does it.
		 */
		if (contig || !need_iova)
			return -ENOBUFS;
		force_contig = true;
	}
	return (int)mp->size;
}

struct rte_mempool *
hpm_mempool_create(const char *name, unsigned int n, unsigned int elt_size, unsigned int cache_size,
	unsigned int private_data_size, rte_mempool_ctor_t *mp_init, void *mp_init_arg,
	rte_mempool_obj_cb_t *obj_init, void *obj_init_arg, int socket_id, unsigned int flags)
{
	struct rte_mempool *mp;
	int rc;

	/* the ring driver the flags name, as rte_mempool_create() */
	mp = rte_mempool_create_empty(name, n, elt_size, cache_size, private_data_size, socket_id,
		flags);
	if (mp == NULL)
		return NULL;
	if (mp_init != NULL)
		mp_init(mp, mp_init_arg);
	rc = hpm_mempool_populate(mp);
	if (rc < 0) {
		rte_mempool_free(mp);
		rte_errno = -rc;
		return NULL;
	}
	if (obj_init != NULL)
		rte_mempool_obj_iter(mp, obj_init, obj_init_arg);
	return mp;
}

int
hpm_mempool_populate(struct rte_mempool *mp)
{
	int rc = populate(mp);

	/* what a failed attempt made the heap take goes back to the source */
	if (rc < 0)
		hpm_heap_trim_all();
	return rc;
}
