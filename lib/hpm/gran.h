/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef HPM_GRAN_H
#define HPM_GRAN_H

/*
 * Granule pages (seed 000): a unit cut into 512 granules of 4 KiB or 32 of
 * 64 KiB. The state is out of band: a bitmap of used granules, searched a
 * word at a time from lowfree, the lowest free granule; a bitmap of run
 * starts, so that a free needs no size and a pointer that is not a run's
 * start is caught; a bitmap of granules handed out before, so that zmalloc
 * clears only memory that may be dirty.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_config.h>

#include "chunk.h"
#include "unit.h"

/*
 * Single granules (the per-lcore caches' 4 KiB and 64 KiB classes) share
 * the pages of runs of their size: a single is a run of one, and fills the
 * holes that runs leave between them (pages of their own held 8-14 MiB more
 * in test_soak, tuning.rst).
 */
enum hpm_gran_class_id {
	HPM_GRAN_4K = 0, /**< runs (and single granules) of 4 KiB granules */
	HPM_GRAN_64K,    /**< runs of 64 KiB granules: multiples of 64 KiB above 256 KiB */
	HPM_GRAN_NCLASS,
};

#define HPM_GRAN_MAX 512u
#define HPM_GRAN_WORDS (HPM_GRAN_MAX / 64)
/**
 * Bins of pages by their longest free run, two an octave: 1, 2, 3, 4, 6, 8,
 * 12 ... 384, 512 granules or more.
 */
#define HPM_GRAN_NBIN 18u
/** A full page is in no bin. */
#define HPM_GRAN_NO_BIN 0xff
/** Ordinals (chunk.h) per segment of a class's bins, made as pages come. */
#define HPM_GRAN_BSEG 4096u
#define HPM_GRAN_NBSEG (HPM_ORD_MAX / HPM_GRAN_BSEG)

/** The bins' bits for HPM_GRAN_BSEG unit ordinals. */
struct hpm_gran_bseg {
	/** Bit w of sums[b]: words[b][w] is not 0. */
	uint64_t sums[HPM_GRAN_NBIN];
	/** Bit of each page in bin b, by its unit's ordinal. */
	uint64_t words[HPM_GRAN_NBIN][HPM_GRAN_BSEG / 64];
};

struct hpm_gran {
	uint64_t used[HPM_GRAN_WORDS];
	uint64_t start[HPM_GRAN_WORDS];
	uint64_t dirty[HPM_GRAN_WORDS];
	/** State of the run starting at each granule (enum hpm_blk_state). */
	uint8_t state[HPM_GRAN_MAX];
	struct hpm_unit *unit;
	uint16_t ngran;
	/** Granules [0, reserved) are not the heap's (a headed unit's first). */
	uint16_t reserved;
	uint16_t nfree;
	uint16_t lowfree;
	/** Longest run of free granules. */
	uint16_t maxrun;
	/**
	 * Longest run of free granules inside each word of used: maxrun comes
	 * from them and each word's ends, so a cut of the longest run costs a
	 * look at each word, not at each run.
	 */
	uint8_t inner[HPM_GRAN_WORDS];
	uint8_t shift;
	/** Bin the page is listed in, or HPM_GRAN_NO_BIN. */
	uint8_t bin;
	uint8_t cls;
	/** Slot + 1 of the cache taking single granules from this page, 0 if none. */
	uint16_t owner;
};

/**
 * Caches that may own a page of single granules, by slot: the lcores', then
 * the plain threads' (lcore_cache.h).
 */
#define HPM_GRAN_CACHE_OWNERS (RTE_MAX_LCORE + 128)
/**
 * Owner slots of a class: a cache's page of singles at its slot, its page of
 * 64 KiB runs (hpm_gran_take_aligned_runs()) at HPM_GRAN_CACHE_OWNERS + its
 * slot. Two pages: had its runs moved it to a page of their own while other
 * caches took the singles left in its page, two lcores' singles shared lines.
 */
#define HPM_GRAN_OWNERS (2 * HPM_GRAN_CACHE_OWNERS)

/**
 * Pages of one granule size in an arena. A level is a bitmap over the pages'
 * unit ordinals (chunk.h), with a summary bit per word and per segment, so
 * that the lowest page of any level is a few count-trailing-zeros away; a
 * bin is a level less the next. A run is cut from the page of the lowest
 * bin that has room, the lowest such page in it (best fit by page, then
 * address order): long free runs stay whole for long runs, live runs pack
 * into few pages and the others empty and go back.
 */
struct hpm_gran_class {
	/** Bit s of segs_with[b]: segment s has a page in bin b. */
	uint32_t segs_with[HPM_GRAN_NBIN];
	/** Bins' bits by segment of ordinals, made as needed, kept until the end. */
	struct hpm_gran_bseg *segs[HPM_GRAN_NBSEG];
	/** Pages whose longest free run is in bin b exactly (level b, not level b + 1). */
	uint32_t inbin[HPM_GRAN_NBIN];
	uint32_t npages;
	/** Pages with every granule free; one is kept, more go back to the chunk. */
	uint32_t nempty;
	/** Slots of own[] in use: a check counts owned pages, not every slot. */
	uint32_t nowned;
	/** The page each cache slot takes single granules from (owner says so). */
	struct hpm_gran *own[HPM_GRAN_OWNERS];
};

/** A socket's granule classes, on its chunk set; the arena's lock guards them. */
struct hpm_gran_set {
	struct hpm_chunk_set *cs;
	struct hpm_gran_class cls[HPM_GRAN_NCLASS];
};

/** Set up empty classes on a chunk set. */
void hpm_gran_set_init(struct hpm_gran_set *gs, struct hpm_chunk_set *cs);

/** State byte of the run that would start at p, or NULL if p is not on a granule. */
static inline uint8_t *
hpm_gran_state(const struct hpm_unit *u, const void *p)
{
	size_t off = (const uint8_t *)p - u->va;
	struct hpm_gran *g = u->gran;

	return (off & ((UINT64_C(1) << g->shift) - 1)) == 0 ? &g->state[off >> g->shift] : NULL;
}

/**
 * Make g an empty page of ngran granules of 1 << shift bytes, the first
 * reserved of them never handed out (its page alone).
 */
void hpm_gran_page_reset(struct hpm_gran *g, unsigned int ngran, unsigned int shift,
	unsigned int reserved);

/** Every granule of g is free (but those reserved). */
static inline bool
hpm_gran_page_empty(const struct hpm_gran *g)
{
	return g->nfree + g->reserved == g->ngran;
}

/**
 * Take the lowest run of n free granules whose index is a multiple of align
 * in page g; *dirty says whether any of them was handed out before. Returns
 * the run's index, or -1. The page alone (its counts and maxrun): no lists,
 * no lock.
 */
int hpm_gran_page_take(struct hpm_gran *g, unsigned int n, unsigned int align, bool *dirty);

/**
 * Free the run that starts at index pos of page g (a live run's start); its
 * length. The page alone, as hpm_gran_page_take().
 */
unsigned int hpm_gran_page_give(struct hpm_gran *g, unsigned int pos);

/** log2 of the granule size of a class. */
unsigned int hpm_gran_shift(unsigned int cls);

/**
 * Allocate a run of n granules whose index is a multiple of align (both in
 * granules). Arena lock held.
 */
void *hpm_gran_alloc(struct hpm_gran_set *gs, unsigned int cls, unsigned int n, unsigned int align,
	struct hpm_blockinfo *bi);

/**
 * Take up to n single granules of class cls (HPM_GRAN_4K or HPM_GRAN_64K)
 * for the cache of lcore into objs, their state bytes
 * (HPM_BLK_CACHED) into states, whole words of a page at a time; the number
 * taken. An lcore takes from a page of its own while it can: the fast path
 * writes the state bytes of its blocks, and two lcores writing bytes of one
 * line would share it. Arena lock held.
 */
unsigned int hpm_gran_take_singles(struct hpm_gran_set *gs, unsigned int cls, unsigned int lcore,
	void **objs, uint8_t **states, unsigned int n);

/**
 * Take up to n runs of len 4 KiB granules aligned to len granules for the
 * cache of lcore into objs, their state bytes (HPM_BLK_CACHED) into states;
 * the number taken. As hpm_gran_take_singles(), from a page of the lcore's
 * own while it can (owner slot HPM_GRAN_CACHE_OWNERS + lcore, not its page
 * of singles): the hit paths of two lcores write no line of state bytes
 * together. Arena lock held.
 */
unsigned int hpm_gran_take_aligned_runs(struct hpm_gran_set *gs, unsigned int lcore,
	unsigned int len, void **objs, uint8_t **states, unsigned int n);

/**
 * Take up to n runs of len 4 KiB granules aligned to align granules for a
 * cache into objs, their state bytes (HPM_BLK_CACHED) into states; the
 * number taken. Arena lock held.
 */
unsigned int hpm_gran_take_runs(struct hpm_gran_set *gs, unsigned int len, unsigned int align,
	void **objs, uint8_t **states, unsigned int n);

/** The caches of lcore give up the pages they own. Arena lock held. */
void hpm_gran_disown(struct hpm_gran_set *gs, unsigned int lcore);

/** Free the run at p (a user's or a cache's); -EINVAL if p is not one. Arena lock held. */
int hpm_gran_free(struct hpm_gran_set *gs, struct hpm_unit *u, const void *p, size_t *bytes);

/** Bytes of the run at p held by the application, 0 if none. */
size_t hpm_gran_block_size(const struct hpm_unit *u, const void *p);

/** Resize the application's run at p to n granules in place; 0, or -1. Arena lock held. */
int hpm_gran_resize(struct hpm_gran_set *gs, struct hpm_unit *u, const void *p, unsigned int n,
	struct hpm_blockinfo *bi);

/** Give the empty pages kept for reuse back to their chunks: how many. Arena lock held. */
unsigned int hpm_gran_release_spares(struct hpm_gran_set *gs);

/** Granules a headed unit's page leaves for the source's header (HPM_UNIT_HEAD_MAX). */
static inline unsigned int
hpm_gran_head_granules(unsigned int shift)
{
	return (HPM_UNIT_HEAD_MAX + (1u << shift) - 1) >> shift;
}

/**
 * Bytes of a granule unit's page in no block: its free granules, on a
 * headed unit what its reserved granules hold past the source's header, and
 * on a tailed unit its last granule (no page of it).
 */
static inline size_t
hpm_gran_unit_free_bytes(const struct hpm_unit *u)
{
	const struct hpm_gran *g = u->gran;
	/* a headed page's first granule past the header: in no block, like a page's tail */
	size_t head_rest = u->headed ? ((size_t)g->reserved << g->shift) - HPM_UNIT_HEAD_MAX : 0;
	size_t tail = u->tailed ? (size_t)1 << g->shift : 0;

	return ((size_t)g->nfree << g->shift) + head_rest + tail;
}

/** Free granule runs of the arena: count, the longest and the total in bytes. */
void hpm_gran_free_ranges(const struct hpm_gran_set *gs, unsigned int *count, size_t *longest,
	size_t *bytes);

/** Check every page; returns the number of problems found (logged). */
unsigned int hpm_gran_verify(const struct hpm_gran_set *gs, size_t *live_bytes,
	uint64_t *live_count);

#endif /* HPM_GRAN_H */
