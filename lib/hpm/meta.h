/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef HPM_META_H
#define HPM_META_H

/*
 * Metadata arena: chunk and unit descriptors, granule bitmaps, span maps and
 * page map leaves live here, out of the memory handed to users, in memory
 * the source shares between processes. Classes carved from regions by a bump
 * pointer: powers of two from 64 B to 4 KiB, then every multiple of 4 KiB to
 * 1 MiB (a slab unit's 42 KiB took 64 KiB as a power of two, a cache 508 of
 * 512: in the soak 2.2 MiB of metadata went over one hugepage); larger
 * requests get a region of their own.
 */

#include <stddef.h>
#include <stdint.h>

#include "lock.h"

#include "source.h"

#define HPM_META_MIN_LOG2 6
/** Classes up to this are powers of two; above, multiples of it. */
#define HPM_META_PAGE_LOG2 12
#define HPM_META_PAGE (UINT64_C(1) << HPM_META_PAGE_LOG2)
#define HPM_META_MAX_LOG2 20
#define HPM_META_NCLASS \
	(HPM_META_PAGE_LOG2 - HPM_META_MIN_LOG2 + (1u << (HPM_META_MAX_LOG2 - HPM_META_PAGE_LOG2)))
#define HPM_META_REGION_SIZE (UINT64_C(1) << 20)
#define HPM_META_HDR_SIZE 64

struct hpm_meta_region {
	struct hpm_region region;
	struct hpm_meta_region *next;
	struct hpm_meta_region *prev;
};

struct hpm_meta {
	hpm_lock_t lock;
	uint8_t *bump;
	uint8_t *end;
	/** Freed blocks of each class, linked through their first word. */
	void *free[HPM_META_NCLASS];
	struct hpm_meta_region *regions;
	size_t reserved_bytes;
	size_t used_bytes;
};

/**
 * Reserve the first region, of at least first_len bytes, named name for
 * other processes. *bootstrap receives first_len zeroed bytes from it (the state that
 * holds the arena itself). 0 or -errno.
 */
int hpm_meta_bootstrap(const struct hpm_source_ops *src, size_t first_len, const char *name,
	void **bootstrap);

/** Prepare an arena whose first region (holding it) is first. */
void hpm_meta_init(struct hpm_meta *m, struct hpm_meta_region *first, size_t bootstrap_len);

/** Zeroed metadata of size bytes, cache-line aligned; NULL when the source is exhausted. */
void *hpm_meta_alloc(struct hpm_meta *m, const struct hpm_source_ops *src, size_t size);

/** Bytes metadata p of size bytes from hpm_meta_alloc() takes (its class, or its region). */
size_t hpm_meta_bytes(const void *p, size_t size);

/** Return metadata of size bytes from hpm_meta_alloc(). */
void hpm_meta_free(struct hpm_meta *m, const struct hpm_source_ops *src, void *p, size_t size);

/**
 * The pages each metadata region holds (hpm_source_extent(), with the
 * region's socket) into e, up to max; the number of regions, and their
 * bytes in *bytes. Takes the metadata lock.
 */
unsigned int hpm_meta_extents(struct hpm_meta *m, const struct hpm_source_ops *src,
	struct hpm_extent *e, unsigned int max, size_t *bytes);

/** Return every region to the source, the first (holding the arena) last. */
void hpm_meta_release_all(struct hpm_meta *m, const struct hpm_source_ops *src);

#endif /* HPM_META_H */
