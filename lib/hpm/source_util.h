/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef HPM_SOURCE_UTIL_H
#define HPM_SOURCE_UTIL_H

/*
 * Segment sources hand out regions of memory and take them back.
 *
 * What a source promises:
 *  - reserve() gives len bytes (len and the address multiples of align, which
 *    is a multiple of HPM_UNIT_SIZE) on the requested socket, or fails with a
 *    negative errno and leaves nothing behind;
 *  - reserve_meta() gives len bytes of metadata memory, cache-line aligned,
 *    zeroed, that every process of the heap sees at the same address (name,
 *    if not NULL, lets another process find it);
 *  - the region's memory stays mapped until release();
 *  - zeroed says whether the memory is known to be zero;
 *  - iova() gives the IO address of a byte of the region, RTE_BAD_IOVA when
 *    the source has none.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_memory.h>

#include "hpm_malloc.h"

#define HPM_UNIT_SHIFT 21
#define HPM_UNIT_SIZE (UINT64_C(1) << HPM_UNIT_SHIFT)
/** Past this no source has the memory, and unit counts would overflow: the largest block. */
#define HPM_SIZE_MAX (UINT64_C(1) << 46)

/** A region of memory from a source; lives in shared metadata. */
struct hpm_region {
	void *va;
	size_t len;
	int socket;
	uint8_t zeroed;
	/** Every HPM_UNIT_SIZE unit is IOVA-contiguous (hugepages of 2 MiB and up, or IOVA as VA). */
	uint8_t unit_iova_contig;
	uint8_t is_meta;
	/**
	 * The region starts inside its first 2 MiB unit, past the source's own
	 * header (eal: EAL's element header at the start of the hugepage), so
	 * that no hugepage holds a header alone: that unit's first
	 * HPM_UNIT_HEAD_MAX bytes are not the heap's. Only for HPM_RESERVE_HEADED,
	 * which may also give a region that starts and ends anywhere: its units
	 * are the whole ones inside it.
	 */
	uint8_t headed;
	uint32_t page_size_log2;
	/** Source's handle (eal: the memzone, in EAL's shared configuration). */
	const void *handle;
};

/** reserve(): the units must be IOVA-contiguous. */
#define HPM_RESERVE_CONTIG 1u
/** reserve(): a region whose first unit holds the source's header (hpm_region::headed) will do. */
#define HPM_RESERVE_HEADED 2u
/** The most of a headed region's first unit that is not the heap's: one 4 KiB granule. */
#define HPM_UNIT_HEAD_MAX 4096u

struct hpm_source_ops {
	const char *name;
	enum hpm_source_kind kind;
	/** Memory is hugepages: socket placement is real, not advisory. */
	bool hugepages;
	/** Memory has IO addresses. */
	bool has_iova;
	/** len bytes aligned to align, or headed (see flags: HPM_RESERVE_*); 0 or -errno. */
	int (*reserve)(struct hpm_region *r, size_t len, size_t align, int socket,
		unsigned int flags);
	int (*reserve_meta)(struct hpm_region *r, size_t len, const char *name);
	void (*release)(struct hpm_region *r);
	rte_iova_t (*iova)(const struct hpm_region *r, const void *va);
	/** Fill ids with the sockets that have memory; return their number. */
	unsigned int (*sockets)(int *ids, unsigned int max);
	/**
	 * Bytes just below a region's start that the source uses for it (eal:
	 * EAL's element header before a memzone, and below it the guard of the
	 * memzone under it, HPM_SOURCE_GUARD; in the page below when the
	 * memzone is page-aligned); 0 for none. A source with a lead has its
	 * own memory past a region too: a chunk without HPM_SOURCE_GUARD bytes
	 * of its own past its last unit has that unit tailed (hpm_unit::tailed).
	 */
	size_t lead;
};

/**
 * Bytes of a region past its last unit that no block holds, so that a write
 * of up to 64 bytes past a block stays in the region (eal: the header of
 * EAL's next element follows a memzone).
 */
#define HPM_SOURCE_GUARD 64u

/** The pages a region holds, as the machine counts them: [start, end), with its socket. */
struct hpm_extent {
	uintptr_t start;
	uintptr_t end;
	/** The region's own bytes. */
	size_t len;
	int socket;
};

/* What the sources share (source_util.c). */

/** Free hugepages of a size in the system (0 when unknown). */
long hpm_source_hugepages_free(size_t page_size);

/** Sockets with memory according to libnuma (socket 0 alone without it). */
unsigned int hpm_source_numa_sockets(int *ids, unsigned int max);

/** IOVA of va from /proc/self/pagemap (touches the page), RTE_BAD_IOVA if unreadable. */
rte_iova_t hpm_source_pagemap_iova(const void *va);

/** Bind (strict) or prefer (not strict) a socket's node for a range; 0 or -errno. */
int hpm_source_bind(void *va, size_t len, int socket, bool strict);

/** Metadata for single-process sources: private anonymous memory. */
int hpm_source_mmap_meta(struct hpm_region *r, size_t len, const char *name);

/**
 * The pages region r holds: those that [va - lead, va + len) touches, in
 * the region's page size.
 */
struct hpm_extent hpm_source_extent(const struct hpm_source_ops *src, const struct hpm_region *r);

/** Bytes n extents cover together, pages they share counted once (sorts them). */
size_t hpm_extents_bytes(struct hpm_extent *e, unsigned int n);

/** Unmap a region of a single-process source. */
void hpm_source_munmap(struct hpm_region *r);

#endif /* HPM_SOURCE_UTIL_H */
