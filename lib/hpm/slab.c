/* SPDX-License-Identifier: BSD-3-Clause */

#include <errno.h>
#include <string.h>

#include "bitrun.h"
#include "check.h"
#include "log.h"
#include "slab.h"

/* m x 2^k, m 4 to 7, from 64 bytes; 4096 is a granule's (gran.h) */
const uint16_t hpm_slab_class_bytes[HPM_SLAB_NCLASS] = {
	64,
	128,
	192,
	256,
	320,
	384,
	448,
	512,
	640,
	768,
	896,
	1024,
	1280,
	1536,
	1792,
	2048,
	2560,
	3072,
	3584,
	5120,
	6144,
	7168,
	8192,
	10240,
	12288,
	14336,
	16384,
	20480,
	24576,
	28672,
	32768,
};

uint8_t hpm_slab_fit[HPM_SLAB_NALIGN][HPM_SLAB_MAX / 64 + 1];

/* Frames per page and blocks per page of each class. */
static uint8_t class_frames[HPM_SLAB_NCLASS];
static uint16_t class_blocks[HPM_SLAB_NCLASS];

#define FRAME_BYTES (UINT32_C(1) << HPM_SLAB_FRAME_SHIFT)
#define ALL_FRAMES UINT32_MAX
static_assert(HPM_SLAB_FRAMES == 32, "a unit's frames fit a 32-bit mask");

/*
 * A page is the fewest frames (1, 2 or 4) whose end wastes at most 1/16 of
 * them; the fit table takes, per alignment and size, the smallest class whose
 * blocks are large enough and aligned enough.
 */
static void __attribute__((constructor)) slab_classes_init(void)
{
	unsigned int c, row, i;

	for (c = 0; c < HPM_SLAB_NCLASS; c++) {
		uint32_t bytes = hpm_slab_class_bytes[c];
		unsigned int f;

		for (f = 1; f < 4; f *= 2)
			if ((f * FRAME_BYTES % bytes) * 16 <= f * FRAME_BYTES)
				break;
		class_frames[c] = (uint8_t)f;
		class_blocks[c] = (uint16_t)(f * FRAME_BYTES / bytes);
	}
	for (row = 0; row < HPM_SLAB_NALIGN; row++)
		for (i = 0; i <= HPM_SLAB_MAX / 64; i++) {
			uint32_t align = UINT32_C(64) << row;

			hpm_slab_fit[row][i] = HPM_SLAB_NO_CLASS;
			for (c = 0; c < HPM_SLAB_NCLASS; c++) {
				uint32_t bytes = hpm_slab_class_bytes[c];

				if (bytes >= i * 64 && (bytes & -bytes) >= align) {
					hpm_slab_fit[row][i] = (uint8_t)c;
					break;
				}
			}
		}
}

void
hpm_slab_set_init(struct hpm_slab_set *ss, struct hpm_chunk_set *cs)
{
	memset(ss, 0, sizeof(*ss));
	ss->cs = cs;
}

/* Frames [f, f + n) as a mask. */
static uint32_t
frame_mask(unsigned int f, unsigned int n)
{
	return (uint32_t)(((UINT64_C(1) << n) - 1) << f);
}

/* In (or out of) a list once: the flag says where it is, for the checks too. */
#define LIST_ONCE_ADD(head, elm)                           \
	do {                                               \
		if (!(elm)->listed) {                      \
			LIST_INSERT_HEAD(head, elm, link); \
			(elm)->listed = true;              \
		}                                          \
	} while (0)
#define LIST_ONCE_REMOVE(elm)                   \
	do {                                    \
		if ((elm)->listed) {            \
			LIST_REMOVE(elm, link); \
			(elm)->listed = false;  \
		}                               \
	} while (0)

/*
 * The unit's frames: all, less the first on a headed unit (hpm_unit::headed)
 * and the last on a tailed one (hpm_unit::tailed).
 */
static inline uint32_t
unit_frames(const struct hpm_unit *u)
{
	return ALL_FRAMES & ~(u->headed ? UINT32_C(1) : 0) &
		~(u->tailed ? UINT32_C(1) << (HPM_SLAB_FRAMES - 1) : 0);
}

/*
 * A unit for pages: a free one, else a chunk's edge unit (its first frame,
 * which holds the source's header, or its last, just below the source's
 * header of what follows, left out) rather than grow the heap while it sits
 * idle, else one the set finds or grows.
 */
static struct hpm_slab *
unit_new(struct hpm_slab_set *ss)
{
	struct hpm_unit *u = hpm_chunk_take_unit(ss->cs, HPM_UNIT_SLAB, true);
	struct hpm_slab *s;

	if (u == NULL)
		return NULL;
	s = hpm_meta_alloc(ss->cs->meta, hpm_src, sizeof(*s));
	if (s == NULL) {
		hpm_chunk_give(ss->cs, u, 1);
		return NULL;
	}
	memset(u->frame_cls, HPM_SLAB_NO_CLASS, sizeof(u->frame_cls));
	s->unit = u;
	s->free_frames = unit_frames(u);
	s->used_frames = u->dirty ? ALL_FRAMES : 0;
	u->slab = s;
	u->state = s->state;
	u->shift = HPM_SLAB_STEP_SHIFT;
	u->start_mask = hpm_unit_start_mask(HPM_SLAB_STEP_SHIFT);
	u->role = HPM_UNIT_SLAB;
	LIST_ONCE_ADD(&ss->units, s);
	ss->nunits++;
	ss->nempty++;
	return s;
}

static void
unit_release(struct hpm_slab_set *ss, struct hpm_slab *s)
{
	struct hpm_unit *u = s->unit;

	LIST_ONCE_REMOVE(s);
	ss->nunits--;
	ss->nempty--;
	u->dirty = s->used_frames != 0;
	u->slab = NULL;
	hpm_unit_no_blocks(u);
	hpm_meta_free(ss->cs->meta, hpm_src, s, sizeof(*s));
	hpm_chunk_give(ss->cs, u, 1);
}

/* The lowest run of n free frames starting on a multiple of n, or -1. */
static int
free_run(uint32_t free, unsigned int n)
{
	uint32_t m = free;
	unsigned int i;

	for (i = 1; i < n; i++)
		m &= free >> i;
	m &= n == 1 ? ALL_FRAMES : n == 2 ? UINT32_C(0x55555555) : UINT32_C(0x11111111);
	return m == 0 ? -1 : (int)rte_bsf32(m);
}

/* A new page of class cls, owned by nobody and listed nowhere; NULL when memory is short. */
static struct hpm_slab_page *
page_new(struct hpm_slab_set *ss, unsigned int cls)
{
	unsigned int n = class_frames[cls], i;
	struct hpm_slab_page *pg;
	struct hpm_slab *s;
	uint32_t mask;
	int f = -1;

	struct hpm_slab *best = NULL;
	int best_f = -1;

	/* the fullest unit that has room: the emptier ones may empty and go back */
	LIST_FOREACH (s, &ss->units, link)
		if ((f = free_run(s->free_frames, n)) >= 0 &&
			(best == NULL ||
				__builtin_popcount(s->free_frames) <
					__builtin_popcount(best->free_frames))) {
			best = s;
			best_f = f;
		}
	s = best;
	f = best_f;
	if (f < 0) {
		s = unit_new(ss);
		if (s == NULL)
			return NULL;
		/* pages are 1, 2 or 4 frames: a headed unit has room past its first */
		f = free_run(s->free_frames, n);
		HPM_ASSERT(f >= 0);
	}
	mask = frame_mask(f, n);
	if (s->free_frames == unit_frames(s->unit))
		ss->nempty--;
	s->free_frames &= ~mask;
	if (s->free_frames == 0)
		LIST_ONCE_REMOVE(s);
	pg = &s->page[f];
	memset(pg, 0, sizeof(*pg));
	pg->slab = s;
	pg->cls = (uint8_t)cls;
	pg->first_frame = (uint8_t)f;
	pg->frames = (uint8_t)n;
	pg->nblocks = class_blocks[cls];
	pg->nfree = pg->nblocks;
	pg->dirty = (s->used_frames & mask) != 0;
	hpm_bitrun_set(pg->free, 0, pg->nblocks);
	s->used_frames |= mask;
	for (i = 0; i < n; i++) {
		s->unit->frame_cls[f + i] = (uint8_t)cls;
		s->page_of[f + i] = (uint8_t)f;
	}
	ss->cls[cls].npages++;
	return pg;
}

/* A page with no live block goes back to its unit; a unit with no page, past one, too. */
static void
page_release(struct hpm_slab_set *ss, struct hpm_slab_page *pg)
{
	struct hpm_slab_class *sc = &ss->cls[pg->cls];
	struct hpm_slab *s = pg->slab;
	unsigned int i;

	HPM_ASSERT(pg->nfree == pg->nblocks && pg->owner == 0);
	LIST_ONCE_REMOVE(pg);
	sc->npages--;
	for (i = 0; i < pg->frames; i++)
		s->unit->frame_cls[pg->first_frame + i] = HPM_SLAB_NO_CLASS;
	s->free_frames |= frame_mask(pg->first_frame, pg->frames);
	pg->nblocks = 0;
	LIST_ONCE_ADD(&ss->units, s);
	if (s->free_frames == unit_frames(s->unit) && ++ss->nempty > 1)
		unit_release(ss, s);
}

/*
 * A page that lost its last live block (no owner) becomes the spare, and
 * the spare before it goes back to its unit: a class used by one block at a
 * time does not make and unmake a page per block.
 */
static void
page_emptied(struct hpm_slab_set *ss, struct hpm_slab_page *pg)
{
	struct hpm_slab_page *old = ss->spare;

	LIST_ONCE_REMOVE(pg);
	ss->spare = pg;
	if (old != NULL)
		page_release(ss, old);
}

/* An empty page for class cls, listed nowhere: the spare if it is of cls, or a new one. */
static struct hpm_slab_page *
page_get(struct hpm_slab_set *ss, unsigned int cls)
{
	struct hpm_slab_page *pg = ss->spare;

	if (pg == NULL || pg->cls != cls)
		return page_new(ss, cls);
	ss->spare = NULL;
	return pg;
}

static uint8_t *
block_at(const struct hpm_slab_page *pg, unsigned int i, size_t *off)
{
	*off = ((size_t)pg->first_frame << HPM_SLAB_FRAME_SHIFT) +
		(size_t)i * hpm_slab_class_bytes[pg->cls];
	return pg->slab->unit->va + *off;
}

/* Hand out block i of page pg in state st; its address. */
static void *
page_hand(struct hpm_slab_page *pg, unsigned int i, uint8_t st, uint8_t **state, bool *dirty)
{
	size_t off;
	uint8_t *p = block_at(pg, i, &off);

	*dirty = pg->dirty || hpm_bitrun_test(pg->handed, i);
	hpm_bitrun_clear(pg->free, i, 1);
	hpm_bitrun_set(pg->handed, i, 1);
	pg->nfree--;
	*state = &pg->slab->state[off >> HPM_SLAB_STEP_SHIFT];
	**state = st;
	return p;
}

void *
hpm_slab_alloc(struct hpm_slab_set *ss, unsigned int cls, struct hpm_blockinfo *bi)
{
	struct hpm_slab_class *sc = &ss->cls[cls];
	struct hpm_slab_page *pg = LIST_FIRST(&sc->partial);
	uint8_t *state;
	int i;
	void *p;

	HPM_ASSERT(cls < HPM_SLAB_NCLASS);
	if (pg == NULL) {
		pg = page_get(ss, cls);
		if (pg == NULL)
			return NULL;
		LIST_ONCE_ADD(&sc->partial, pg);
	}
	i = hpm_bitrun_next_set(pg->free, 0, pg->nblocks);
	HPM_ASSERT(i < pg->nblocks);
	p = page_hand(pg, (unsigned int)i, HPM_BLK_USER, &state, &bi->dirty);
	if (pg->nfree == 0)
		LIST_ONCE_REMOVE(pg);
	bi->bytes = hpm_slab_class_bytes[cls];
	return p;
}

/*
 * The page the cache of slot owner takes blocks from: its own while it has
 * free ones, else one with free blocks that no cache owns, else a new one.
 */
static struct hpm_slab_page *
owned_page(struct hpm_slab_set *ss, unsigned int cls, unsigned int owner)
{
	struct hpm_slab_class *sc = &ss->cls[cls];
	struct hpm_slab_page *pg = sc->own[owner], *old;

	if (pg != NULL && pg->nfree > 0)
		return pg;
	pg = LIST_FIRST(&sc->partial);
	/* blocks of 4 KiB and more have state bytes a line apart: no page of their own */
	if (hpm_slab_class_bytes[cls] >= HPM_SLAB_SHARED_BYTES) {
		if (pg == NULL && (pg = page_get(ss, cls)) != NULL)
			LIST_ONCE_ADD(&sc->partial, pg);
		return pg;
	}
	if (pg != NULL)
		LIST_ONCE_REMOVE(pg);
	else if ((pg = page_get(ss, cls)) == NULL)
		return NULL;
	/*
	 * Read the slot only now: to grow, page_get() has the caches give back,
	 * this one included, whose slot is then empty and its page perhaps gone.
	 */
	old = sc->own[owner];
	if (old != NULL) {
		/* full: listed nowhere until a block of it comes back */
		old->owner = 0;
	} else {
		sc->nowned++;
	}
	pg->owner = (uint16_t)(owner + 1);
	sc->own[owner] = pg;
	return pg;
}

unsigned int
hpm_slab_take(struct hpm_slab_set *ss, unsigned int cls, unsigned int owner, void **objs,
	uint8_t **states, unsigned int n)
{
	unsigned int taken = 0;

	HPM_ASSERT(cls < HPM_SLAB_NCLASS && owner < HPM_SLAB_OWNERS);
	while (taken < n) {
		struct hpm_slab_page *pg = owned_page(ss, cls, owner);
		unsigned int w;

		if (pg == NULL)
			break;
		for (w = 0; w < HPM_SLAB_PAGE_BLOCKS / 64 && taken < n && pg->nfree > 0; w++) {
			while (pg->free[w] != 0 && taken < n) {
				unsigned int i = w * 64 + rte_bsf64(pg->free[w]);
				bool dirty;

				objs[taken] =
					page_hand(pg, i, HPM_BLK_CACHED, &states[taken], &dirty);
				taken++;
			}
		}
		/* a shared page taken empty leaves the list */
		if (pg->owner == 0 && pg->nfree == 0)
			LIST_ONCE_REMOVE(pg);
	}
	return taken;
}

/* A page no cache owns any more: listed if it has free blocks, released if it has no live one. */
static void
page_orphan(struct hpm_slab_set *ss, struct hpm_slab_page *pg)
{
	pg->owner = 0;
	if (pg->nfree == pg->nblocks)
		page_emptied(ss, pg);
	else if (pg->nfree > 0)
		LIST_ONCE_ADD(&ss->cls[pg->cls].partial, pg);
}

void
hpm_slab_disown(struct hpm_slab_set *ss, unsigned int owner)
{
	unsigned int cls;

	HPM_ASSERT(owner < HPM_SLAB_OWNERS);
	for (cls = 0; cls < HPM_SLAB_NCLASS; cls++) {
		struct hpm_slab_page *pg = ss->cls[cls].own[owner];

		if (pg != NULL) {
			ss->cls[cls].own[owner] = NULL;
			ss->cls[cls].nowned--;
			page_orphan(ss, pg);
		}
	}
}

/*
 * The page and index of the block at p if its state is in want (a mask of
 * 1 << state kind), or NULL.
 */
static struct hpm_slab_page *
block_find(const struct hpm_unit *u, const void *p, unsigned int want, unsigned int *index)
{
	const struct hpm_slab *s = u->slab;
	size_t off = (const uint8_t *)p - u->va, in;
	unsigned int frame = off >> HPM_SLAB_FRAME_SHIFT, bytes;
	const struct hpm_slab_page *pg;
	uint8_t st;

	if (off >= HPM_UNIT_SIZE || (off & ((UINT32_C(1) << HPM_SLAB_STEP_SHIFT) - 1)) != 0 ||
		u->frame_cls[frame] == HPM_SLAB_NO_CLASS)
		return NULL;
	pg = &s->page[s->page_of[frame]];
	bytes = hpm_slab_class_bytes[pg->cls];
	in = off - ((size_t)pg->first_frame << HPM_SLAB_FRAME_SHIFT);
	st = s->state[off >> HPM_SLAB_STEP_SHIFT];
	if (in % bytes != 0 || in / bytes >= pg->nblocks || st == HPM_BLK_NONE ||
		!((1u << hpm_blk_kind(st)) & want) || hpm_bitrun_test(pg->free, in / bytes))
		return NULL;
	*index = (unsigned int)(in / bytes);
	return (struct hpm_slab_page *)(uintptr_t)pg;
}

#define HELD_BY_USER (1u << HPM_BLK_USER)
#define HELD_BY_ANYONE ((1u << HPM_BLK_USER) | (1u << HPM_BLK_CACHED))

int
hpm_slab_free(struct hpm_slab_set *ss, struct hpm_unit *u, const void *p, size_t *bytes)
{
	struct hpm_slab_page *pg;
	unsigned int i;

	if (u->role != HPM_UNIT_SLAB || (pg = block_find(u, p, HELD_BY_ANYONE, &i)) == NULL)
		return -EINVAL;
	u->slab->state[((const uint8_t *)p - u->va) >> HPM_SLAB_STEP_SHIFT] = HPM_BLK_NONE;
	hpm_bitrun_set(pg->free, i, 1);
	pg->nfree++;
	*bytes = hpm_slab_class_bytes[pg->cls];
	if (pg->owner == 0) {
		if (pg->nfree == pg->nblocks)
			page_emptied(ss, pg);
		else
			LIST_ONCE_ADD(&ss->cls[pg->cls].partial, pg);
	}
	return 0;
}

size_t
hpm_slab_block_size(const struct hpm_unit *u, const void *p)
{
	unsigned int i;
	const struct hpm_slab_page *pg = block_find(u, p, HELD_BY_USER, &i);

	return pg == NULL ? 0 : hpm_slab_class_bytes[pg->cls];
}

uint8_t *
hpm_slab_state(const struct hpm_unit *u, const void *p)
{
	size_t off = (const uint8_t *)p - u->va;

	return off < HPM_UNIT_SIZE && (off & ((UINT32_C(1) << HPM_SLAB_STEP_SHIFT) - 1)) == 0
		? &u->slab->state[off >> HPM_SLAB_STEP_SHIFT]
		: NULL;
}

unsigned int
hpm_slab_release_spares(struct hpm_slab_set *ss)
{
	struct hpm_slab *s, *next;
	unsigned int released = 0;

	if (ss->spare != NULL) {
		struct hpm_slab_page *pg = ss->spare;

		ss->spare = NULL;
		page_release(ss, pg);
		released++;
	}
	for (s = LIST_FIRST(&ss->units); s != NULL && ss->nempty > 0; s = next) {
		next = LIST_NEXT(s, link);
		if (s->free_frames == unit_frames(s->unit)) {
			unit_release(ss, s);
			released++;
		}
	}
	return released;
}

/* Each slab unit of the set's chunks, in turn. */
#define FOR_EACH_SLAB(ss, c, i, u)                                 \
	for ((c) = (ss)->cs->chunks; (c) != NULL; (c) = (c)->next) \
		for ((i) = 0; (i) < (c)->nunits; (i)++)            \
			if (((u) = &(c)->units[i])->role == HPM_UNIT_SLAB)

void
hpm_slab_free_ranges(const struct hpm_slab_set *ss, unsigned int *count, size_t *longest,
	size_t *bytes)
{
	const struct hpm_chunk *c;
	const struct hpm_unit *u;
	unsigned int i, f;

	FOR_EACH_SLAB(ss, c, i, u)
	{
		const struct hpm_slab *s = u->slab;
		unsigned int run = 0;

		for (f = 0; f < HPM_SLAB_FRAMES; f++) {
			const struct hpm_slab_page *pg;

			if (!(unit_frames(u) & (UINT32_C(1) << f))) {
				/* an edge unit's frame past the header, or its last: in no block */
				run = 0;
				*bytes +=
					FRAME_BYTES - (f == 0 && u->headed ? HPM_UNIT_HEAD_MAX : 0);
				continue;
			}
			if (s->free_frames & (UINT32_C(1) << f)) {
				*count += run++ == 0;
				*bytes += FRAME_BYTES;
				*longest = RTE_MAX(*longest, (size_t)run * FRAME_BYTES);
				continue;
			}
			run = 0;
			pg = &s->page[s->page_of[f]];
			if (pg->first_frame != f)
				continue;
			/* the page's tail, past its last block: in no block, so counted here */
			*bytes += ((size_t)pg->frames << HPM_SLAB_FRAME_SHIFT) -
				(size_t)pg->nblocks * hpm_slab_class_bytes[pg->cls];
			if (pg->nfree == 0)
				continue;
			*count += pg->nfree;
			*bytes += (size_t)pg->nfree * hpm_slab_class_bytes[pg->cls];
			*longest = RTE_MAX(*longest, (size_t)hpm_slab_class_bytes[pg->cls]);
		}
	}
}

static unsigned int
check_page(const struct hpm_slab_set *ss, const struct hpm_slab_page *pg, size_t *live_bytes,
	uint64_t *live_count)
{
	const struct hpm_slab *s = pg->slab;
	unsigned int bad = 0, w, nfree = 0, nlive = 0, set = 0,
		     bytes = hpm_slab_class_bytes[pg->cls];
	size_t start = (size_t)pg->first_frame << HPM_SLAB_FRAME_SHIFT;
	size_t end = start + ((size_t)pg->frames << HPM_SLAB_FRAME_SHIFT), off;
	bool spare;

	if (pg->nblocks != class_blocks[pg->cls] || pg->frames != class_frames[pg->cls]) {
		HPM_LOG(ERR, "check: slab page %p: %u blocks in %u frames for class %u",
			s->unit->va + start, pg->nblocks, pg->frames, pg->cls);
		return 1;
	}
	/*
	 * Validate mode checks at every unlock, so a word at a time: each live
	 * block's state (the bitmap's clear bits), and as many state bytes set in
	 * the page as live blocks (a byte set anywhere else adds one).
	 */
	for (w = 0; w < HPM_SLAB_PAGE_BLOCKS / 64; w++) {
		unsigned int first = w * 64, left = pg->nblocks > first ? pg->nblocks - first : 0;
		uint64_t in_page = hpm_bitrun_mask(0, left < 64 ? left : 64);
		uint64_t live = ~pg->free[w] & in_page;

		if ((pg->free[w] & ~in_page) != 0) {
			HPM_LOG(ERR, "check: slab page %p: free bits past its %u blocks",
				s->unit->va + start, pg->nblocks);
			bad++;
		}
		nfree += __builtin_popcountll(pg->free[w] & in_page);
		for (; live != 0; live &= live - 1) {
			unsigned int b = w * 64 + rte_bsf64(live);
			uint8_t st = s->state[(start + (size_t)b * bytes) >> HPM_SLAB_STEP_SHIFT];

			if (hpm_blk_kind(st) != HPM_BLK_USER &&
				hpm_blk_kind(st) != HPM_BLK_CACHED) {
				HPM_LOG(ERR, "check: slab page %p: live block %u has state %u",
					s->unit->va + start, b, st);
				bad++;
			}
			*live_bytes += bytes;
			(*live_count)++;
			nlive++;
		}
	}
	for (off = start; off < end; off += 8 * 64) {
		uint64_t word;
		unsigned int k;

		memcpy(&word, &s->state[off >> HPM_SLAB_STEP_SHIFT], sizeof(word));
		for (k = 0; word != 0 && k < 8; k++, word >>= 8)
			set += (word & 0xff) != 0;
	}
	if (set != nlive) {
		HPM_LOG(ERR, "check: slab page %p: %u state bytes set for %u live blocks",
			s->unit->va + start, set, nlive);
		bad++;
	}
	/* an empty page no cache owns is the spare, listed nowhere (the lists: hpm_slab_verify()) */
	spare = ss->spare == pg;
	if (nfree != pg->nfree || pg->listed != (pg->owner == 0 && pg->nfree > 0 && !spare) ||
		(pg->owner == 0 && pg->nfree == pg->nblocks && !spare) ||
		(spare && (pg->owner != 0 || pg->nfree != pg->nblocks))) {
		HPM_LOG(ERR, "check: slab page %p: nfree %u/%u listed %d owner %u spare %d",
			s->unit->va + start, pg->nfree, nfree, pg->listed, pg->owner, spare);
		bad++;
	}
	if (pg->owner != 0 &&
		(pg->owner > HPM_SLAB_OWNERS || ss->cls[pg->cls].own[pg->owner - 1] != pg)) {
		HPM_LOG(ERR, "check: slab page %p: owner %u does not own it", s->unit->va + start,
			pg->owner);
		bad++;
	}
	return bad;
}

unsigned int
hpm_slab_verify(const struct hpm_slab_set *ss, size_t *live_bytes, uint64_t *live_count)
{
	unsigned int bad = 0, i, f, cls, units = 0, empty = 0, pages[HPM_SLAB_NCLASS] = {0},
		     owned[HPM_SLAB_NCLASS] = {0};
	unsigned int units_flagged = 0, units_listed = 0, pages_flagged = 0, pages_listed = 0;
	const struct hpm_slab_page *lp;
	const struct hpm_chunk *c;
	const struct hpm_unit *u;
	const struct hpm_slab *l;

	/* the lists once, then each flag against them by count: linear in the heap */
	LIST_FOREACH (l, &ss->units, link) {
		if (!l->listed || l->unit->role != HPM_UNIT_SLAB || l->unit->slab != l ||
			units_listed++ >= ss->nunits) {
			HPM_LOG(ERR, "check: slab unit list: %p listed wrong", (const void *)l);
			bad++;
			break;
		}
	}
	for (cls = 0; cls < HPM_SLAB_NCLASS; cls++) {
		unsigned int in_class = 0;

		LIST_FOREACH (lp, &ss->cls[cls].partial, link) {
			/* a bound on the walk: a list that loops is broken too */
			if (!lp->listed || lp->cls != cls || lp->owner != 0 || lp->nfree == 0 ||
				in_class++ >= ss->cls[cls].npages) {
				HPM_LOG(ERR, "check: slab class %u: page %p listed wrong", cls,
					(const void *)lp);
				bad++;
				break;
			}
		}
		pages_listed += in_class;
	}
	FOR_EACH_SLAB(ss, c, i, u)
	{
		const struct hpm_slab *s = u->slab;

		units++;
		units_flagged += s->listed;
		empty += s->free_frames == unit_frames(u);
		if (s->unit != u || u->state != s->state || s->listed != (s->free_frames != 0)) {
			HPM_LOG(ERR, "check: slab unit %p: descriptor or listing wrong (listed %d)",
				u->va, s->listed);
			bad++;
		}
		if ((s->free_frames & ~unit_frames(u)) != 0) {
			HPM_LOG(ERR, "check: slab unit %p: free frames %#x, headed %u, tailed %u",
				u->va, s->free_frames, u->headed, u->tailed);
			bad++;
		}
		for (f = 0; f < HPM_SLAB_FRAMES; f++) {
			bool is_free = (s->free_frames >> f) & 1;
			const struct hpm_slab_page *pg = &s->page[s->page_of[f]];

			if (!((unit_frames(u) >> f) & 1)) {
				if (u->frame_cls[f] != HPM_SLAB_NO_CLASS) {
					HPM_LOG(ERR,
						"check: slab unit %p: header frame %u in a page",
						u->va, f);
					bad++;
				}
				continue;
			}

			if (is_free != (u->frame_cls[f] == HPM_SLAB_NO_CLASS) ||
				(!is_free &&
					(pg->cls != u->frame_cls[f] || f < pg->first_frame ||
						f >= pg->first_frame + pg->frames))) {
				HPM_LOG(ERR, "check: slab unit %p: frame %u and its page disagree",
					u->va, f);
				bad++;
				continue;
			}
			if (!is_free && pg->first_frame == f) {
				pages[pg->cls]++;
				owned[pg->cls] += pg->owner != 0;
				pages_flagged += pg->listed;
				bad += check_page(ss, pg, live_bytes, live_count);
			}
		}
	}
	if (units_flagged != units_listed || pages_flagged != pages_listed) {
		HPM_LOG(ERR, "check: slab lists: %u/%u units, %u/%u pages listed", units_listed,
			units_flagged, pages_listed, pages_flagged);
		bad++;
	}
	if (units != ss->nunits || empty != ss->nempty || empty > 1) {
		HPM_LOG(ERR, "check: slab units %u/%u, %u/%u empty", units, ss->nunits, empty,
			ss->nempty);
		bad++;
	}
	for (cls = 0; cls < HPM_SLAB_NCLASS; cls++) {
		if (pages[cls] != ss->cls[cls].npages) {
			HPM_LOG(ERR, "check: slab class %u: %u/%u pages", cls, pages[cls],
				ss->cls[cls].npages);
			bad++;
		}
		/*
		 * Each owned page is its slot's (check_page()); as many slots in use
		 * as owned pages leaves none pointing elsewhere, without a walk of
		 * every slot.
		 */
		if (owned[cls] != ss->cls[cls].nowned) {
			HPM_LOG(ERR, "check: slab class %u: %u slots in use, %u pages owned", cls,
				ss->cls[cls].nowned, owned[cls]);
			bad++;
		}
	}
	return bad;
}
