/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef HPM_SLAB_H
#define HPM_SLAB_H

/*
 * Size-class pages (tcmalloc's spans, mimalloc's pages): a unit cut into 32
 * frames of 64 KiB; a page is a run of 1, 2 or 4 frames (aligned to its
 * length) holding blocks of one class, with no header: the block's class is
 * its frame's, the free blocks a bitmap of the page. A class's block size is
 * m x 2^k (m 4 to 7), a multiple of 64 bytes, and every block is aligned to
 * the largest power of two that divides its size, since pages start on
 * 64 KiB: an aligned request takes the smallest class whose blocks are both
 * large enough and aligned enough, with no padding cut off a free block.
 * Blocks have state bytes like heap spans (one per 64 bytes, at each block's
 * start): a free needs no lock to tell a live block from a cached, free or
 * interior one. A page with no live block goes back to its unit, a unit with
 * no page back to the chunk set: memory held follows memory live.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#include <rte_common.h>

#include "chunk.h"
#include "unit.h"

/** Classes: 64 B to 32 KiB, m x 2^k with m 4 to 7, less 4 KiB (granules serve it). */
#define HPM_SLAB_NCLASS 31
/** Largest block of a class. */
#define HPM_SLAB_MAX 32768u
/** Distance between possible block starts: one state byte each. */
#define HPM_SLAB_STEP_SHIFT 6
#define HPM_SLAB_FRAME_SHIFT HPM_UNIT_FRAME_SHIFT
#define HPM_SLAB_FRAMES HPM_UNIT_FRAMES
/** Most blocks of a page: 64-byte blocks in one frame. */
#define HPM_SLAB_PAGE_BLOCKS 1024u
/** Alignments the fit table knows: 64 B (and less) to 2 KiB (4 KiB and more are granules). */
#define HPM_SLAB_NALIGN 6
/** A frame in no page. */
#define HPM_SLAB_NO_CLASS 0xff

/** A page: a run of frames holding blocks of one class. */
struct hpm_slab_page {
	/** Bit i set: block i is free in the page. */
	uint64_t free[HPM_SLAB_PAGE_BLOCKS / 64];
	/** Bit i set: block i was handed out since the page was made. */
	uint64_t handed[HPM_SLAB_PAGE_BLOCKS / 64];
	/** In its class's list of pages with free blocks (when listed). */
	LIST_ENTRY(hpm_slab_page) link;
	struct hpm_slab *slab;
	uint16_t nblocks;
	uint16_t nfree;
	/** Slot + 1 of the cache taking blocks from this page, 0 if none. */
	uint16_t owner;
	uint8_t cls;
	uint8_t first_frame;
	uint8_t frames;
	bool listed;
	/** The page's memory may be non-zero where no block was handed out yet. */
	bool dirty;
};

/** A unit of size-class pages (role HPM_UNIT_SLAB). */
struct hpm_slab {
	/** Bit f set: frame f is in no page. */
	uint32_t free_frames;
	/** Bit f set: frame f was in a page before (its memory may be non-zero). */
	uint32_t used_frames;
	struct hpm_unit *unit;
	/** In the set's list of units with free frames (when listed). */
	LIST_ENTRY(hpm_slab) link;
	bool listed;
	/** The page each frame belongs to, by the page's first frame. */
	uint8_t page_of[HPM_SLAB_FRAMES];
	struct hpm_slab_page page[HPM_SLAB_FRAMES];
	/** State bytes (enum hpm_blk_state), one per 64 bytes. */
	uint8_t state[HPM_UNIT_SIZE >> HPM_SLAB_STEP_SHIFT];
};

/**
 * Classes of this many bytes and more have no owner pages: the state bytes
 * of two blocks are a line (64 bytes, 4 KiB of blocks) apart.
 */
#define HPM_SLAB_SHARED_BYTES 4096u

/** Caches that may own a page, by slot (as granule pages: gran.h). */
#define HPM_SLAB_OWNERS (RTE_MAX_LCORE + 128)

/** The pages of one class in an arena. */
struct hpm_slab_class {
	/** Pages with free blocks that no cache owns. */
	LIST_HEAD(, hpm_slab_page) partial;
	uint32_t npages;
	/** Slots of own[] in use: a check counts owned pages, not every slot. */
	uint32_t nowned;
	/** The page each cache slot takes blocks from. */
	struct hpm_slab_page *own[HPM_SLAB_OWNERS];
};

/** A socket's size-class pages, on its chunk set; the arena's lock guards them. */
struct hpm_slab_set {
	struct hpm_chunk_set *cs;
	/** Units with free frames. */
	LIST_HEAD(, hpm_slab) units;
	uint32_t nunits;
	/** Units with no page: one is kept, more go back to the chunk set. */
	uint32_t nempty;
	/**
	 * The last page that lost its last block, kept (listed nowhere) for the
	 * next page of its class; NULL for none. One for the set: spares of
	 * every class would keep their units from going back.
	 */
	struct hpm_slab_page *spare;
	struct hpm_slab_class cls[HPM_SLAB_NCLASS];
};

/** Block size of each class. */
extern const uint16_t hpm_slab_class_bytes[HPM_SLAB_NCLASS];

/**
 * Per alignment (log2, 64 bytes and less in row 0) and size / 64 rounded up:
 * the smallest class whose blocks hold the size at the alignment, or
 * HPM_SLAB_NO_CLASS. Filled before main() (slab.c).
 */
extern uint8_t hpm_slab_fit[HPM_SLAB_NALIGN][HPM_SLAB_MAX / 64 + 1];

/** Class of a request of size bytes (1 to HPM_SLAB_MAX) at align (a power of two), or -1. */
static __rte_always_inline int
hpm_slab_class(size_t size, size_t align)
{
	unsigned int row = align <= 64 ? 0 : rte_log2_u64(align) - 6;
	unsigned int cls;

	if (size - 1 >= HPM_SLAB_MAX || row >= HPM_SLAB_NALIGN)
		return -1;
	cls = hpm_slab_fit[row][(size + 63) >> 6];
	return cls == HPM_SLAB_NO_CLASS ? -1 : (int)cls;
}

/** Class of the block that would start at p in slab unit u (u covers p). */
static __rte_always_inline unsigned int
hpm_slab_class_at(const struct hpm_unit *u, const void *p)
{
	return u->frame_cls[((const uint8_t *)p - u->va) >> HPM_SLAB_FRAME_SHIFT];
}

/** Set up empty classes on a chunk set. */
void hpm_slab_set_init(struct hpm_slab_set *ss, struct hpm_chunk_set *cs);

/** Allocate a block of class cls. Arena lock held. */
void *hpm_slab_alloc(struct hpm_slab_set *ss, unsigned int cls, struct hpm_blockinfo *bi);

/**
 * Take up to n blocks of class cls for the cache of slot owner into objs,
 * their state bytes (HPM_BLK_CACHED) into states, from a page of the cache's
 * own while it has free blocks (two caches writing state bytes of one line
 * would share it); the number taken. Arena lock held.
 */
unsigned int hpm_slab_take(struct hpm_slab_set *ss, unsigned int cls, unsigned int owner,
	void **objs, uint8_t **states, unsigned int n);

/** The cache of slot owner gives up the pages it owns. Arena lock held. */
void hpm_slab_disown(struct hpm_slab_set *ss, unsigned int owner);

/** Free the block at p (a user's or a cache's); -EINVAL if p is not one. Arena lock held. */
int hpm_slab_free(struct hpm_slab_set *ss, struct hpm_unit *u, const void *p, size_t *bytes);

/** Bytes of the block at p the application holds, 0 if none. */
size_t hpm_slab_block_size(const struct hpm_unit *u, const void *p);

/** State byte of the block that would start at p, or NULL if none can start there. */
uint8_t *hpm_slab_state(const struct hpm_unit *u, const void *p);

/**
 * Give the empty pages and units kept for reuse back to the chunk set: how
 * many. Arena lock held.
 */
unsigned int hpm_slab_release_spares(struct hpm_slab_set *ss);

/**
 * Free blocks and frames of the arena's slab units: count of ranges, the
 * longest, bytes (the tails of pages past their last block, in no block,
 * among them).
 */
void hpm_slab_free_ranges(const struct hpm_slab_set *ss, unsigned int *count, size_t *longest,
	size_t *bytes);

/** Check every slab unit and class; the number of problems found (logged). */
unsigned int hpm_slab_verify(const struct hpm_slab_set *ss, size_t *live_bytes,
	uint64_t *live_count);

#endif /* HPM_SLAB_H */
