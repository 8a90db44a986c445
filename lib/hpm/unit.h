/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef HPM_UNIT_H
#define HPM_UNIT_H

/*
 * A unit is 2 MiB of a chunk, 2 MiB aligned. Each has one role at a time and
 * a descriptor out of band, found from any address by the page map.
 */

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_memory.h>

#include "source.h"

enum hpm_unit_role {
	HPM_UNIT_FREE = 0, /**< in a chunk, not in use */
	HPM_UNIT_SPAN,     /**< boundary-tag heap span */
	HPM_UNIT_G4K,      /**< page of 512 x 4 KiB granules, runs of any length */
	HPM_UNIT_G64K,     /**< page of 32 x 64 KiB granules, runs of any length */
	HPM_UNIT_LARGE,    /**< part of a block of whole units */
	HPM_UNIT_SLAB,     /**< size-class pages of 64 KiB frames (slab.h) */
	HPM_UNIT_NROLES,   /**< how many roles there are */
};

static inline int
hpm_unit_is_gran(unsigned int role)
{
	return role == HPM_UNIT_G4K || role == HPM_UNIT_G64K;
}

/*
 * State of a block, a byte out of band per possible block start (a granule,
 * or a 64-byte slot of a heap span or a slab unit). A byte, not a bit: whoever holds a
 * block may write its byte without a lock or an atomic operation, since no
 * one else writes that byte meanwhile.
 */
enum hpm_blk_state {
	HPM_BLK_NONE = 0,   /**< no block starts here, or it is free in the arena */
	HPM_BLK_USER = 1,   /**< handed out to the application */
	HPM_BLK_CACHED = 2, /**< held by a per-lcore cache */
};

/*
 * A block a cache handed out is HPM_BLK_USER with its cache class + 1 in the
 * seven bits above (lcore_cache.h), so that its free finds both in one byte;
 * the layers below see the kind alone: any odd byte is HPM_BLK_USER.
 */
static inline unsigned int
hpm_blk_kind(uint8_t state)
{
	return state & HPM_BLK_USER ? HPM_BLK_USER : state;
}

struct hpm_chunk;
struct hpm_gran;
struct hpm_slab;
struct hpm_span;

/** Frames of 64 KiB in a unit: a size-class page is made of whole frames (slab.h). */
#define HPM_UNIT_FRAME_SHIFT 16
#define HPM_UNIT_FRAMES (HPM_UNIT_SIZE >> HPM_UNIT_FRAME_SHIFT)

/*
 * The fields a free reads without the lock fill the first line, alone:
 * role, socket, shift, va, state and, for size-class pages, each frame's
 * class, so that a free finds a block's class one load after its unit.
 */
struct hpm_unit {
	uint8_t role;
	/** The memory may be non-zero: zmalloc must clear it. */
	uint8_t dirty;
	uint16_t socket;
	/** log2 of the distance between possible block starts (a state byte each). */
	uint8_t shift;
	/**
	 * The offset bits a block start has clear: (1 << shift) - 1, and every
	 * bit from HPM_UNIT_SIZE up (hpm_unit_start_mask()), so that one test
	 * also rejects an address outside the unit, below it included.
	 */
	uint64_t start_mask;
	/** Address of the unit's first byte. */
	uint8_t *va;
	/**
	 * State bytes (enum hpm_blk_state) of the blocks that may start in the
	 * unit, one per 1 << shift bytes; &no_state for a unit whose blocks have
	 * none (shift HPM_UNIT_SHIFT: its first byte alone is a block start).
	 */
	uint8_t *state;
	/** SLAB: the class of each frame's blocks, HPM_SLAB_NO_CLASS if in no page. */
	uint8_t frame_cls[HPM_UNIT_FRAMES];
	/* the second line: what the locked path reads */
	/** Index of the unit in its chunk. */
	uint32_t index;
	/**
	 * Place in the socket's order of units (chunk.h): the allocators below
	 * the caches take the lowest units with room first.
	 */
	uint32_t ord;
	/**
	 * The chunk's first unit holds the source's header in its first
	 * HPM_UNIT_HEAD_MAX bytes (hpm_region::headed): only a page of 4 KiB
	 * granules takes it, without its first granule.
	 */
	uint8_t headed;
	/**
	 * The chunk's last unit, with the source's memory past it (hpm_chunk::
	 * tailed): only pages of granules and size classes take it, without
	 * their last granule or frame, so that a write past a block never
	 * reaches the source's header of what follows (EAL's element header).
	 */
	uint8_t tailed;
	struct hpm_chunk *chunk;
	/** IOVA of the unit's first byte, RTE_BAD_IOVA when unknown. */
	rte_iova_t iova;
	union {
		struct hpm_gran *gran; /**< G4K, G64K */
		struct hpm_span *span; /**< SPAN */
		struct hpm_slab *slab; /**< SLAB */
		struct hpm_unit *head; /**< LARGE: the block's first unit */
	};
	/** LARGE, first unit: length of the block in units. */
	uint32_t nunits;
	/** The state of every address of a unit without state bytes: HPM_BLK_NONE. */
	uint8_t no_state;
} __rte_cache_aligned;

static_assert(offsetof(struct hpm_unit, index) == RTE_CACHE_LINE_SIZE,
	"what a free reads is the unit's first line");

/** The start mask of a unit whose block starts are 1 << shift bytes apart. */
static inline uint64_t
hpm_unit_start_mask(unsigned int shift)
{
	return ((UINT64_C(1) << shift) - 1) | ~(uint64_t)(HPM_UNIT_SIZE - 1);
}

/** A unit without blocks that have state bytes (free, large): its state reads NONE. */
static inline void
hpm_unit_no_blocks(struct hpm_unit *u)
{
	u->state = &u->no_state;
	u->shift = HPM_UNIT_SHIFT;
	u->start_mask = hpm_unit_start_mask(HPM_UNIT_SHIFT);
}

/** State byte of a possible block start at p in u (u covers p, u->state set). */
static inline uint8_t *
hpm_unit_state(const struct hpm_unit *u, const void *p)
{
	size_t off = (const uint8_t *)p - u->va;

	return (off & u->start_mask) == 0 ? &u->state[off >> u->shift] : NULL;
}

/** What an allocation took: for the statistics and for zmalloc. */
struct hpm_blockinfo {
	/** Bytes the block holds, header and rounding included. */
	size_t bytes;
	/** Bytes the application may use (set by the API layer). */
	size_t usable;
	/** The memory may be non-zero. */
	bool dirty;
};

#endif /* HPM_UNIT_H */
