/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef HPM_RTE_H
#define HPM_RTE_H

/**
 * @file
 * The rte_malloc backend shim (libhpm_rte): what it tells about itself.
 *
 * libhpm_rte exports rte_malloc(), rte_zmalloc(), rte_calloc(), rte_realloc(),
 * their _socket forms, rte_free(), rte_malloc_validate(),
 * rte_malloc_get_socket_stats(), rte_malloc_dump_stats() and
 * rte_malloc_virt2iova(), and routes them to hpmalloc once rte_eal_init() has
 * returned (it wraps rte_eal_init() too). Loaded with LD_PRELOAD or linked
 * before librte_eal, it serves an unmodified DPDK application and DPDK's own
 * libraries. With a static DPDK, link libhpm_rte_wrap.a with the
 * -Wl,--wrap= flags of its pkg-config file (libhpm_rte_wrap) instead.
 *
 * What goes to EAL's own functions: every call before rte_eal_init() returns
 * and after rte_eal_cleanup(); pointers hpmalloc does not own (EAL allocated
 * them, e.g. during rte_eal_init()); external heaps (the sockets of
 * rte_malloc_heap_create()); everything in a secondary process whose primary
 * has no hpmalloc heap (a secondary attaches to its primary's heap, and blocks
 * can be freed by either process); everything when the environment has
 * HPM_BACKEND=off. With HPM_RTE_VERBOSE=1 the shim prints
 * its counters (hpm_rte_stats_print()) at exit.
 *
 * Choices where rte_malloc leaves room:
 *  - rte_realloc() of a block EAL owns moves it into hpmalloc (EAL's block
 *    is freed), unless the block or the requested socket is an external heap;
 *  - rte_malloc_get_socket_stats() reports the socket's memory as a whole:
 *    EAL's heap, with hpmalloc's chunks (memzones in it) replaced by what
 *    hpmalloc holds in them; greatest_free_size stays EAL's (what
 *    rte_memzone_reserve() and a new chunk can get);
 *  - rte_malloc_dump_stats() prints EAL's heaps, then hpmalloc's.
 */

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/** Where the shim sends rte_malloc calls now. */
enum hpm_rte_backend {
	/** EAL: before rte_eal_init() returns, after rte_eal_cleanup(), or routing off. */
	HPM_RTE_BACKEND_EAL = 0,
	/** hpmalloc (external heaps and EAL's own blocks still go to EAL). */
	HPM_RTE_BACKEND_HPM = 1,
};

/**
 * Calls the shim routed, counted where they entered it (calls that EAL makes
 * to itself under a call the shim forwarded are not counted). Every EAL call
 * has one reason: eal_alloc + eal_free + eal_realloc + eal_other ==
 * eal_early + eal_off + eal_external + eal_foreign.
 */
struct hpm_rte_stats {
	uint64_t hpm_alloc;    /**< rte_malloc/zmalloc/calloc (any form) served by hpmalloc */
	uint64_t hpm_free;     /**< rte_free() of hpmalloc blocks (NULL is not counted) */
	uint64_t hpm_realloc;  /**< rte_realloc() served by hpmalloc (moves included) */
	uint64_t hpm_other;    /**< validate, virt2iova and statistics answered with hpmalloc */
	uint64_t eal_alloc;    /**< allocations sent to EAL */
	uint64_t eal_free;     /**< rte_free() sent to EAL */
	uint64_t eal_realloc;  /**< rte_realloc() sent to EAL */
	uint64_t eal_other;    /**< validate, virt2iova and statistics sent to EAL */
	uint64_t eal_early;    /**< EAL calls before rte_eal_init() returned or after cleanup */
	uint64_t eal_off;      /**< EAL calls with routing off (HPM_BACKEND=off, primary without) */
	uint64_t eal_external; /**< EAL calls for an external heap */
	uint64_t eal_foreign;  /**< EAL calls for a pointer (or socket) hpmalloc does not own */
	uint64_t moved;        /**< blocks rte_realloc() moved from EAL into hpmalloc */
};

/**
 * Where rte_malloc calls go now.
 *
 * @return
 *   HPM_RTE_BACKEND_HPM once the shim routes to hpmalloc, else
 *   HPM_RTE_BACKEND_EAL.
 */
enum hpm_rte_backend hpm_rte_backend(void);

/**
 * Read the shim's counters (summed over threads; each thread's are exact, the
 * sum is a snapshot).
 *
 * @param stats
 *   Filled with the counters.
 * @return
 *   0, or -EINVAL if @p stats is NULL.
 */
int hpm_rte_stats(struct hpm_rte_stats *stats);

/**
 * Print the backend and the counters on one line, as "HPM_RTE stats:
 * backend=hpm hpm_alloc=N ..." (what HPM_RTE_VERBOSE=1 prints at exit).
 *
 * @param f
 *   Stream to print to.
 */
void hpm_rte_stats_print(FILE *f);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif /* HPM_RTE_H */
