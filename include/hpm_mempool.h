/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef HPM_MEMPOOL_H
#define HPM_MEMPOOL_H

/**
 * @file
 * Mempools backed by hpmalloc (libhpm_mempool).
 *
 * An rte_mempool whose object memory comes from hpmalloc instead of memzones
 * of its own: the objects lie in blocks of hpmalloc's heap, populated page by
 * page with each page's IOVA (runs of IOVA-contiguous pages become one memory
 * chunk), and the blocks go back to hpmalloc when the pool is freed with
 * rte_mempool_free(). The pool itself (its header, per-lcore caches and the
 * driver's ring or stack) is DPDK's as usual. Every mempool driver that
 * populates through its populate and calc_mem_size operations works:
 * ring_mp_mc and the other ring variants, stack, bucket (its blocks are
 * aligned to the bucket size).
 */

#include <stdint.h>

#include <rte_mempool.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/**
 * Populate an empty mempool with object memory from hpmalloc, as
 * rte_mempool_populate_default() does with memzones.
 *
 * For pools made with rte_mempool_create_empty() and, if wanted,
 * rte_mempool_set_ops_byname(). The driver's calc_mem_size says how much
 * memory, with what alignment, and whether it must be one IOVA-contiguous
 * block (then it comes from hpm_malloc_contig()). If a large block cannot be
 * had, smaller ones are tried (down to the driver's minimum chunk). Objects
 * larger than a page that fit in no run of IOVA-contiguous pages (IOVA as PA)
 * get an IOVA-contiguous block, where rte_mempool_populate_default() fails.
 *
 * @param mp
 *   An empty mempool (no memory chunk yet).
 * @return
 *   The number of objects in the pool (its size), or a negative errno:
 *   -EINVAL for a NULL pool or a bad socket, -EEXIST if the pool already has
 *   memory, -ENOMEM when hpmalloc has no memory, or the driver's error. On
 *   failure the pool may hold some objects: free it with rte_mempool_free().
 */
int hpm_mempool_populate(struct rte_mempool *mp);

/**
 * Create a mempool with object memory from hpmalloc: rte_mempool_create()
 * with hpm_mempool_populate() in place of rte_mempool_populate_default().
 *
 * The parameters are those of rte_mempool_create(); the flags choose the
 * ring driver as there (RTE_MEMPOOL_F_SP_PUT, RTE_MEMPOOL_F_SC_GET). For
 * another driver, use rte_mempool_create_empty(), rte_mempool_set_ops_byname()
 * and hpm_mempool_populate().
 *
 * @param name
 *   Name of the pool.
 * @param n
 *   Number of objects.
 * @param elt_size
 *   Size of an object in bytes.
 * @param cache_size
 *   Size of the per-lcore caches (0: none).
 * @param private_data_size
 *   Size of the pool's private data.
 * @param mp_init
 *   Called once on the pool before it is populated, or NULL.
 * @param mp_init_arg
 *   Argument of @p mp_init.
 * @param obj_init
 *   Called on every object after population, or NULL.
 * @param obj_init_arg
 *   Argument of @p obj_init.
 * @param socket_id
 *   NUMA socket of the memory, or SOCKET_ID_ANY.
 * @param flags
 *   RTE_MEMPOOL_F_* flags, as for rte_mempool_create().
 * @return
 *   The pool, or NULL with rte_errno set (EINVAL, ENOMEM, EEXIST,
 *   ENAMETOOLONG, ENOSPC as rte_mempool_create()).
 */
struct rte_mempool *hpm_mempool_create(const char *name, unsigned int n, unsigned int elt_size,
	unsigned int cache_size, unsigned int private_data_size, rte_mempool_ctor_t *mp_init,
	void *mp_init_arg, rte_mempool_obj_cb_t *obj_init, void *obj_init_arg, int socket_id,
	unsigned int flags);

/**
 * Create a pool of packet mbufs with memory from hpmalloc: as
 * rte_pktmbuf_pool_create(), with the driver rte_mbuf_best_mempool_ops()
 * names.
 *
 * @param name
 *   Name of the pool.
 * @param n
 *   Number of mbufs.
 * @param cache_size
 *   Size of the per-lcore caches.
 * @param priv_size
 *   Size of the application's private area after each mbuf header; a
 *   multiple of RTE_MBUF_PRIV_ALIGN.
 * @param data_room_size
 *   Size of each mbuf's data buffer, headroom included
 *   (RTE_MBUF_DEFAULT_BUF_SIZE for the usual one).
 * @param socket_id
 *   NUMA socket of the memory, or SOCKET_ID_ANY.
 * @return
 *   The pool, or NULL with rte_errno set (EINVAL, ENOMEM, EEXIST, ...).
 */
struct rte_mempool *hpm_pktmbuf_pool_create(const char *name, unsigned int n,
	unsigned int cache_size, uint16_t priv_size, uint16_t data_room_size, int socket_id);

/**
 * As hpm_pktmbuf_pool_create(), with a given mempool driver: as
 * rte_pktmbuf_pool_create_by_ops().
 *
 * @param name
 *   Name of the pool.
 * @param n
 *   Number of mbufs.
 * @param cache_size
 *   Size of the per-lcore caches.
 * @param priv_size
 *   Size of the private area after each mbuf header; a multiple of
 *   RTE_MBUF_PRIV_ALIGN.
 * @param data_room_size
 *   Size of each mbuf's data buffer, headroom included.
 * @param socket_id
 *   NUMA socket of the memory, or SOCKET_ID_ANY.
 * @param ops_name
 *   Mempool driver ("ring_mp_mc", "stack", "bucket", ...), or NULL for
 *   rte_mbuf_best_mempool_ops().
 * @return
 *   The pool, or NULL with rte_errno set.
 */
struct rte_mempool *hpm_pktmbuf_pool_create_by_ops(const char *name, unsigned int n,
	unsigned int cache_size, uint16_t priv_size, uint16_t data_room_size, int socket_id,
	const char *ops_name);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif /* HPM_MEMPOOL_H */
