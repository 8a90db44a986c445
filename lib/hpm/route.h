/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef HPM_ROUTE_H
#define HPM_ROUTE_H

/*
 * Routing: which part of the allocator serves a request, by size and
 * alignment. This table is the one place where that is decided; the first
 * row that matches wins.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_common.h>

#include "heap.h"
#include "source.h"

enum hpm_route {
	HPM_ROUTE_HEAP,  /**< boundary-tag heap, 64-byte granularity */
	HPM_ROUTE_G4K,   /**< run of 4 KiB granules */
	HPM_ROUTE_G64K,  /**< run of 64 KiB granules */
	HPM_ROUTE_LARGE, /**< run of 2 MiB units */
	HPM_ROUTE_SLAB,  /**< size-class page: the smallest class large and aligned enough */
};

struct hpm_route_rule {
	size_t min_size;      /**< row matches sizes >= this */
	size_t min_align;     /**< and alignments >= this */
	size_t size_multiple; /**< and, if not 0, sizes that are multiples of this */
	size_t max_size;      /**< and, if not 0, sizes <= this */
	size_t max_align;     /**< and, if not 0, alignments <= this */
	bool small_heap;      /**< and only with HPM_CFG_F_SMALL_HEAP */
	enum hpm_route route;
};

#define HPM_KIB(n) ((size_t)(n) << 10)
#define HPM_MIB(n) ((size_t)(n) << 20)

/*
 * Why these rows:
 * - whole units for 2 MiB and more, and for alignments only units give
 *   (seed 002);
 * - a multiple of 64 KiB above 256 KiB takes exactly its 64 KiB granules,
 *   found in a single word per page; up to 256 KiB (a 64K-aligned 64 KiB
 *   block included) it is a run of 4 KiB granules, the longest the caches
 *   keep: in the pages that hold the other runs, 64 KiB blocks and runs
 *   share one high-water mark (test_soak held 190 -> 184 MiB for the same
 *   live memory, where pages of 64 KiB granules kept their own);
 * - any other 4K-or-more alignment, a multiple of 4 KiB, and sizes past the
 *   heap's range take 4 KiB granules: exactly their pages, no header, no
 *   alignment padding (seed 004's case costs one granule and never splits a
 *   free block); a 2M-aligned small block takes the first granules of a page
 *   and leaves the rest of it to others;
 * - so do sizes above 32 KiB: blocks of 32 to 256 KiB fragment the heap's
 *   2 MiB spans (the soak held 204 MiB of spans for them; 4 KiB granule
 *   runs hold them in less than half);
 * - with HPM_CFG_F_SMALL_HEAP, requests of up to 4144 bytes (a 4 KiB page
 *   and its 16-byte header) with no alignment above a cache line go to the
 *   heap, whose cache classes serve them;
 * - a size of 3 to 4 KiB that no class of at most 3.5 KiB holds at its
 *   alignment takes one 4 KiB granule, not a 5 or 6 KiB class;
 * - the rest, up to 32 KiB at up to 2 KiB alignment, goes to the size-class
 *   pages (slab.h): blocks of the smallest class whose size is at least the
 *   request's and whose natural alignment is at least the request's, with
 *   no header and no padding cut off a free block.
 */
static const struct hpm_route_rule hpm_route_table[] = {
	{.min_size = 0, .min_align = HPM_MIB(2) + 1, .route = HPM_ROUTE_LARGE},
	{.min_size = HPM_MIB(2), .min_align = 0, .route = HPM_ROUTE_LARGE},
	{.min_size = HPM_KIB(256) + HPM_KIB(64),
		.min_align = 0,
		.size_multiple = HPM_KIB(64),
		.route = HPM_ROUTE_G64K},
	{.min_size = 0, .min_align = HPM_KIB(4), .route = HPM_ROUTE_G4K},
	{.min_size = HPM_KIB(4),
		.min_align = 0,
		.size_multiple = HPM_KIB(4),
		.route = HPM_ROUTE_G4K},
	{.min_size = HPM_KIB(32) + 1, .min_align = 0, .route = HPM_ROUTE_G4K},
	{.max_size = 4144, .max_align = 64, .small_heap = true, .route = HPM_ROUTE_HEAP},
	{.min_size = 2049, .min_align = 2048, .max_size = 4096, .route = HPM_ROUTE_G4K},
	{.min_size = 3073, .min_align = 1024, .max_size = 4096, .route = HPM_ROUTE_G4K},
	{.min_size = 3585, .max_size = 4096, .route = HPM_ROUTE_G4K},
	{.min_size = 0, .min_align = 0, .route = HPM_ROUTE_SLAB},
};

/** The route of a request; small_heap: HPM_CFG_F_SMALL_HEAP is set. */
static __rte_always_inline enum hpm_route
hpm_route(size_t size, size_t align, bool small_heap)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(hpm_route_table); i++) {
		const struct hpm_route_rule *r = &hpm_route_table[i];

		if ((!r->small_heap || small_heap) && size >= r->min_size &&
			align >= r->min_align &&
			(r->size_multiple == 0 || (size & (r->size_multiple - 1)) == 0) &&
			(r->max_size == 0 || size <= r->max_size) &&
			(r->max_align == 0 || align <= r->max_align))
			return r->route;
	}
	return HPM_ROUTE_SLAB;
}

#endif /* HPM_ROUTE_H */
