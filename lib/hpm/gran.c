/* SPDX-License-Identifier: BSD-3-Clause */

#include <errno.h>
#include <string.h>

#include "bitrun.h"
#include "check.h"
#include "gran.h"
#include "log.h"

void
hpm_gran_set_init(struct hpm_gran_set *gs, struct hpm_chunk_set *cs)
{
	memset(gs, 0, sizeof(*gs));
	gs->cs = cs;
}

static const struct {
	uint8_t shift;
	uint8_t role;
	uint16_t ngran;
} gran_classes[HPM_GRAN_NCLASS] = {
	[HPM_GRAN_4K] = {12, HPM_UNIT_G4K, HPM_UNIT_SIZE >> 12},
	[HPM_GRAN_64K] = {16, HPM_UNIT_G64K, HPM_UNIT_SIZE >> 16},
};

unsigned int
hpm_gran_shift(unsigned int cls)
{
	return gran_classes[cls].shift;
}

/*
 * The bin of a page whose longest free run is maxrun granules: the last of 1,
 * 2, 3, 4, 6, 8, 12 ... 512 that it reaches (two bins an octave, so that a
 * search passes over few pages whose run is too short).
 */
static unsigned int
bin_of(unsigned int maxrun)
{
	unsigned int f;

	if (maxrun <= 1)
		return maxrun == 0 ? HPM_GRAN_NO_BIN : 0;
	f = rte_fls_u32(maxrun) - 1;
	return 2 * f - 1 + (maxrun >= 3u << (f - 1));
}

static struct hpm_gran *
page_at(const struct hpm_gran_set *gs, unsigned int ord)
{
	return hpm_chunk_unit_at(gs->cs, ord)->gran;
}

/* Put page ord in level k (on), or take it out. */
static void
level_mark(struct hpm_gran_class *gc, unsigned int k, unsigned int ord, bool on)
{
	struct hpm_gran_bseg *seg = gc->segs[ord / HPM_GRAN_BSEG];
	unsigned int w = ord % HPM_GRAN_BSEG / 64;

	if (on) {
		seg->words[k][w] |= UINT64_C(1) << (ord % 64);
		seg->sums[k] |= UINT64_C(1) << w;
		gc->segs_with[k] |= UINT32_C(1) << (ord / HPM_GRAN_BSEG);
		return;
	}
	seg->words[k][w] &= ~(UINT64_C(1) << (ord % 64));
	if (seg->words[k][w] != 0)
		return;
	seg->sums[k] &= ~(UINT64_C(1) << w);
	if (seg->sums[k] != 0)
		return;
	gc->segs_with[k] &= ~(UINT32_C(1) << (ord / HPM_GRAN_BSEG));
}

/*
 * Put g in the levels its maxrun says: level k holds the pages of bin k and
 * above (a free run at least as long as the bin's least), none when full.
 */
static void
relist(struct hpm_gran_class *gc, struct hpm_gran *g)
{
	int bin = g->maxrun == 0 ? -1 : (int)bin_of(g->maxrun);
	int old = g->bin == HPM_GRAN_NO_BIN ? -1 : g->bin, k;

	if (bin == old)
		return;
	for (k = old + 1; k <= bin; k++)
		level_mark(gc, k, g->unit->ord, true);
	for (k = bin + 1; k <= old; k++)
		level_mark(gc, k, g->unit->ord, false);
	if (old >= 0)
		gc->inbin[old]--;
	if (bin >= 0)
		gc->inbin[bin]++;
	g->bin = bin < 0 ? HPM_GRAN_NO_BIN : (uint8_t)bin;
}

static void
bin_remove(struct hpm_gran_class *gc, struct hpm_gran *g)
{
	g->maxrun = 0;
	relist(gc, g);
}

/*
 * The lowest page at or past ordinal from in level k, or only in bin k (level
 * k, not k + 1) with exact; NULL if none.
 */
static struct hpm_gran *
page_find(const struct hpm_gran_set *gs, const struct hpm_gran_class *gc, unsigned int k,
	unsigned int from, bool exact)
{
	uint32_t segs = from >= HPM_ORD_MAX
		? 0
		: gc->segs_with[k] & (~UINT32_C(0) << (from / HPM_GRAN_BSEG));

	for (; segs != 0; segs &= segs - 1) {
		unsigned int s = rte_bsf32(segs), w = 0;
		const struct hpm_gran_bseg *seg = gc->segs[s];
		uint64_t sum;

		if (s == from / HPM_GRAN_BSEG)
			w = from % HPM_GRAN_BSEG / 64;
		for (sum = seg->sums[k] & (~UINT64_C(0) << w); sum != 0; sum &= sum - 1) {
			uint64_t word;

			w = rte_bsf64(sum);
			word = seg->words[k][w];
			if (exact && k + 1 < HPM_GRAN_NBIN)
				word &= ~seg->words[k + 1][w];
			if (s * HPM_GRAN_BSEG + w * 64 == RTE_ALIGN_FLOOR(from, 64u))
				word &= ~UINT64_C(0) << (from % 64);
			if (word != 0)
				return page_at(gs, s * HPM_GRAN_BSEG + w * 64 + rte_bsf64(word));
		}
	}
	return NULL;
}

/* The lowest page at or past ordinal from in level k, or NULL. */
static struct hpm_gran *
page_next(const struct hpm_gran_set *gs, const struct hpm_gran_class *gc, unsigned int k,
	unsigned int from)
{
	return page_find(gs, gc, k, from, false);
}

/*
 * A new page of class cls, for a run of n granules aligned to align. An
 * edge unit gives up granules: a headed one (its first 4 KiB the source's)
 * its first, a tailed one (the source's header just past it) its last. 4
 * KiB granules take one first; 64 KiB granules (a 64 KiB granule less) only
 * when no other unit is free, rather than grow the heap while a chunk's
 * edge unit sits idle (when single 64 KiB granules were theirs, 2000 x
 * 64K/64K: 160 -> 144 MiB of chunks).
 */
static struct hpm_gran *
page_new(struct hpm_gran_set *gs, unsigned int cls, unsigned int n, unsigned int align)
{
	struct hpm_gran_class *gc = &gs->cls[cls];
	/* a unit both headed and tailed (a chunk of one) at worst */
	bool edge_fits =
		RTE_ALIGN_CEIL(hpm_gran_head_granules(gran_classes[cls].shift), align) + n + 1 <=
		gran_classes[cls].ngran;
	bool edge_first = edge_fits && gran_classes[cls].shift == 12;
	struct hpm_unit *u = edge_first ? hpm_chunk_take_edge(gs->cs) : NULL;
	/* runs of up to an eighth of a unit: the heap may grow in small chunks */
	bool short_runs = ((size_t)n << gran_classes[cls].shift) <= HPM_UNIT_SIZE / 8;
	struct hpm_gran *g;

	if (edge_fits && !edge_first)
		u = hpm_chunk_take_unit(gs->cs, gran_classes[cls].role, short_runs);
	else if (u == NULL) {
		/* never an edge unit: a run too long for one, or 4 KiB granules (edges first) */
		u = hpm_chunk_take(gs->cs, 1, 1, false, gran_classes[cls].role, short_runs);
		/* the set grew: its new chunk's edge unit, not one of the others */
		if (u != NULL && edge_first)
			u = hpm_chunk_swap_for_edge(gs->cs, u);
	}
	if (u == NULL)
		return NULL;
	if (gc->segs[u->ord / HPM_GRAN_BSEG] == NULL)
		gc->segs[u->ord / HPM_GRAN_BSEG] =
			hpm_meta_alloc(gs->cs->meta, hpm_src, sizeof(struct hpm_gran_bseg));
	g = gc->segs[u->ord / HPM_GRAN_BSEG] != NULL
		? hpm_meta_alloc(gs->cs->meta, hpm_src, sizeof(*g))
		: NULL;
	if (g == NULL) {
		hpm_chunk_give(gs->cs, u, 1);
		return NULL;
	}
	g->unit = u;
	hpm_gran_page_reset(g, gran_classes[cls].ngran - u->tailed, gran_classes[cls].shift,
		u->headed ? hpm_gran_head_granules(gran_classes[cls].shift) : 0);
	g->cls = cls;
	g->bin = HPM_GRAN_NO_BIN;
	if (u->dirty)
		hpm_bitrun_set(g->dirty, 0, g->ngran);
	u->gran = g;
	u->state = g->state;
	u->shift = (uint8_t)g->shift;
	u->start_mask = hpm_unit_start_mask(g->shift);
	u->role = gran_classes[cls].role;
	relist(gc, g);
	gc->npages++;
	gc->nempty++;
	return g;
}

/* Owner slot slot owns no page (its page, if any, is anyone's). */
static void
slot_clear(struct hpm_gran_class *gc, unsigned int slot)
{
	if (gc->own[slot] == NULL)
		return;
	gc->own[slot]->owner = 0;
	gc->own[slot] = NULL;
	gc->nowned--;
}

static void
page_release(struct hpm_gran_set *gs, struct hpm_gran *g)
{
	struct hpm_gran_class *gc = &gs->cls[g->cls];
	struct hpm_unit *u = g->unit;

	bin_remove(gc, g);
	if (g->owner != 0)
		slot_clear(gc, g->owner - 1u);
	gc->npages--;
	gc->nempty--;
	u->dirty = hpm_bitrun_next_set(g->dirty, 0, g->ngran) != g->ngran;
	u->gran = NULL;
	hpm_unit_no_blocks(u);
	hpm_meta_free(gs->cs->meta, hpm_src, g, sizeof(*g));
	hpm_chunk_give(gs->cs, u, 1);
}

/* Granules [pos, pos + n) changed hands: their words' inner runs, and the longest run. */
static void
used_changed(struct hpm_gran *g, unsigned int pos, unsigned int n)
{
	unsigned int w;

	for (w = pos / 64; w <= (pos + n - 1) / 64; w++) {
		unsigned int bits = RTE_MIN(g->ngran - w * 64, 64u);

		g->inner[w] = hpm_bitrun_longest_ones(~g->used[w] & hpm_bitrun_mask(0, bits));
	}
	g->maxrun = hpm_bitrun_longest_clear_from(g->used, g->ngran, g->inner);
}

void
hpm_gran_page_reset(struct hpm_gran *g, unsigned int ngran, unsigned int shift,
	unsigned int reserved)
{
	memset(g->used, 0, sizeof(g->used));
	memset(g->start, 0, sizeof(g->start));
	memset(g->state, 0, sizeof(g->state));
	hpm_bitrun_set(g->used, 0, reserved);
	g->ngran = ngran;
	g->reserved = reserved;
	g->nfree = ngran - reserved;
	g->lowfree = reserved;
	g->shift = shift;
	used_changed(g, 0, ngran);
}

static void
update_lowfree(struct hpm_gran *g, unsigned int from)
{
	int next = hpm_bitrun_next_clear(g->used, g->ngran, from);

	g->lowfree = next < 0 ? g->ngran : (uint16_t)next;
}

/*
 * The run hpm_gran_page_take() would take in g, or -1: the search alone.
 * First fit, but a run shorter than its alignment (a 4 KiB block aligned to
 * 64 KiB) from the top of the page: placed first-fit, such runs sit at the
 * aligned starts of the longest free ranges and cut them into pieces too
 * short for long runs. From the top they gather where they fit among
 * themselves (malloc_perf's mixed, one request in six at most 4 KiB at
 * 8-64 KiB alignment: held/live 1.43 -> 1.42; in 2 MiB growth steps, five
 * seeds, 1.436 -> 1.419).
 */
static int
page_run_find(const struct hpm_gran *g, unsigned int n, unsigned int align)
{
	return n > g->maxrun ? -1
		: n < align && align <= HPM_WORD_BITS
		? hpm_bitrun_find_top(g->used, g->ngran, n, align)
		: hpm_bitrun_find(g->used, g->ngran, g->lowfree, n, align, 0);
}

/* Take the free run of n granules at pos of g (page_run_find()'s). */
static void
page_take_at(struct hpm_gran *g, unsigned int pos, unsigned int n, bool *dirty)
{
	hpm_bitrun_set(g->used, pos, n);
	hpm_bitrun_set(g->start, pos, 1);
	g->state[pos] = HPM_BLK_USER;
	*dirty = hpm_bitrun_next_set(g->dirty, pos, pos + n) != pos + n;
	hpm_bitrun_set(g->dirty, pos, n);
	g->nfree -= n;
	if (pos == g->lowfree)
		update_lowfree(g, pos + n);
	used_changed(g, pos, n);
}

int
hpm_gran_page_take(struct hpm_gran *g, unsigned int n, unsigned int align, bool *dirty)
{
	int found = page_run_find(g, n, align);

	HPM_ASSERT(n >= 1 && n <= g->ngran && align >= 1 && (align & (align - 1)) == 0);
	if (found >= 0)
		page_take_at(g, (unsigned int)found, n, dirty);
	return found;
}

/*
 * Pages of a bin passed over before the search moves on: too short a longest
 * run (only in n's own bin), or one that fits only at the wrong alignment.
 */
#define SHORT_PROBES 16
#define MISALIGNED_PROBES 4

/*
 * The page of class cls to cut a run of n granules aligned to align from,
 * its index in *pos; NULL if no page has one within the look. The page is
 * the lowest of the lowest bin with room: pages of longer free runs are
 * left for longer runs (in the soak's mix, runs of 1 to 64 granules, a
 * model of it held 5-6% fewer pages than with the lowest page of any bin).
 * With unowned, pages a cache owns are passed over (counted with the short
 * ones): a cache's own page is for its hit path alone.
 */
static struct hpm_gran *
run_find(const struct hpm_gran_set *gs, unsigned int cls, unsigned int n, unsigned int align,
	bool unowned, int *pos)
{
	const struct hpm_gran_class *gc = &gs->cls[cls];
	/* from sure_bin up, every page has room at any alignment */
	unsigned int sure_bin = n + align - 2 == 0 ? 0 : bin_of(n + align - 2) + 1;
	unsigned int misaligned = MISALIGNED_PROBES, bin;
	struct hpm_gran *g;

	for (bin = bin_of(n); bin < HPM_GRAN_NBIN; bin++) {
		unsigned int shorts = SHORT_PROBES;

		if (gc->inbin[bin] == 0)
			continue;
		for (g = page_find(gs, gc, bin, 0, true); g != NULL;
			g = page_find(gs, gc, bin, g->unit->ord + 1, true)) {
			if (g->maxrun < n || (unowned && g->owner != 0)) {
				if (--shorts == 0)
					break;
				continue;
			}
			*pos = page_run_find(g, n, align);
			if (*pos >= 0)
				return g;
			if (misaligned != 0 && --misaligned == 0) {
				/* on from sure_bin (the loop's increment), if it is further */
				if (sure_bin > bin + 1)
					bin = sure_bin - 1;
				break;
			}
		}
	}
	return NULL;
}

/* Take a run of n granules aligned to align of class cls: its page, its index in *pos. */
static struct hpm_gran *
run_take(struct hpm_gran_set *gs, unsigned int cls, unsigned int n, unsigned int align, bool *dirty,
	int *pos)
{
	struct hpm_gran_class *gc = &gs->cls[cls];
	struct hpm_gran *g = run_find(gs, cls, n, align, false, pos);

	if (g == NULL) {
		g = page_new(gs, cls, n, align);
		if (g == NULL)
			return NULL;
		*pos = page_run_find(g, n, align);
		if (*pos < 0)
			return NULL;
	}
	if (hpm_gran_page_empty(g))
		gc->nempty--;
	page_take_at(g, (unsigned int)*pos, n, dirty);
	relist(gc, g);
	return g;
}

void *
hpm_gran_alloc(struct hpm_gran_set *gs, unsigned int cls, unsigned int n, unsigned int align,
	struct hpm_blockinfo *bi)
{
	int pos;
	struct hpm_gran *g = run_take(gs, cls, n, align, &bi->dirty, &pos);

	if (g == NULL)
		return NULL;
	bi->bytes = (size_t)n << g->shift;
	return g->unit->va + ((size_t)pos << g->shift);
}

unsigned int
hpm_gran_release_spares(struct hpm_gran_set *gs)
{
	unsigned int cls, released = 0;

	for (cls = 0; cls < HPM_GRAN_NCLASS; cls++) {
		struct hpm_gran_class *gc = &gs->cls[cls];
		/* empty pages are in the top level, edge ones (granules short) included */
		unsigned int top = bin_of(gran_classes[cls].ngran -
			hpm_gran_head_granules(gran_classes[cls].shift) - 1);
		struct hpm_gran *g = page_next(gs, gc, top, 0), *next;

		for (; g != NULL && gc->nempty > 0; g = next) {
			next = page_next(gs, gc, top, g->unit->ord + 1);
			if (hpm_gran_page_empty(g)) {
				page_release(gs, g);
				released++;
			}
		}
	}
	return released;
}

/* Page g becomes owner slot's (gran.h); the slot's page before is anyone's. */
static void
page_own(struct hpm_gran_class *gc, struct hpm_gran *g, unsigned int slot)
{
	if (g->owner != 0)
		slot_clear(gc, g->owner - 1u);
	slot_clear(gc, slot);
	g->owner = (uint16_t)(slot + 1);
	gc->own[slot] = g;
	gc->nowned++;
}

/*
 * The page the cache of lcore takes single granules from: its own while it
 * has free ones, else the fullest page no other lcore owns, else a new page,
 * else any page (memory is short: sharing a line is better than failing).
 */
static struct hpm_gran *
singles_page(struct hpm_gran_set *gs, unsigned int cls, unsigned int lcore)
{
	struct hpm_gran_class *gc = &gs->cls[cls];
	unsigned int probes = 0;
	struct hpm_gran *g;

	HPM_ASSERT(lcore < HPM_GRAN_CACHE_OWNERS); /* only caches take singles */
	g = gc->own[lcore];
	if (g != NULL && g->nfree > 0)
		return g;
	/* the lowest page with a free granule; a bounded look past pages other lcores own */
	for (g = page_next(gs, gc, 0, 0); g != NULL && probes < 16;
		g = page_next(gs, gc, 0, g->unit->ord + 1), probes++)
		if (g->owner == 0)
			goto claim;
	g = page_new(gs, cls, 1, 1);
	if (g == NULL)
		g = page_next(gs, gc, 0, 0);
	if (g == NULL)
		return NULL;
claim:
	page_own(gc, g, lcore);
	return g;
}

unsigned int
hpm_gran_take_singles(struct hpm_gran_set *gs, unsigned int cls, unsigned int lcore, void **objs,
	uint8_t **states, unsigned int n)
{
	struct hpm_gran_class *gc = &gs->cls[cls];
	unsigned int taken = 0;

	while (taken < n) {
		struct hpm_gran *g = singles_page(gs, cls, lcore);
		unsigned int w;

		if (g == NULL)
			break;
		if (hpm_gran_page_empty(g))
			gc->nempty--;
		/* a word of free granules at a time: no search per granule */
		for (w = g->lowfree / 64; w < HPM_GRAN_WORDS && taken < n && g->nfree > 0; w++) {
			unsigned int bits = g->ngran > w * 64 ? g->ngran - w * 64 : 0;
			uint64_t avail = ~g->used[w] & hpm_bitrun_mask(0, RTE_MIN(bits, 64u));
			uint64_t grab = 0;

			while (avail != 0 && taken < n) {
				uint64_t bit = avail & -avail;
				unsigned int pos = w * 64 + rte_bsf64(bit);

				objs[taken] = g->unit->va + ((size_t)pos << g->shift);
				states[taken++] = &g->state[pos];
				g->state[pos] = HPM_BLK_CACHED;
				grab |= bit;
				avail ^= bit;
			}
			g->used[w] |= grab;
			g->start[w] |= grab;
			g->dirty[w] |= grab;
			g->nfree -= __builtin_popcountll(grab);
		}
		update_lowfree(g, g->lowfree);
		used_changed(g, 0, g->ngran);
		relist(gc, g);
	}
	return taken;
}

/*
 * The page the cache of lcore takes runs of len 4 KiB granules at len from,
 * the run's index in *pos: its own (owner slot HPM_GRAN_CACHE_OWNERS +
 * lcore) while it has one, else one that no cache owns as run_find() picks
 * it, else a new page, else any page with one (memory is short: sharing a
 * line is better than failing).
 */
static struct hpm_gran *
aligned_runs_page(struct hpm_gran_set *gs, unsigned int lcore, unsigned int len, int *pos)
{
	struct hpm_gran_class *gc = &gs->cls[HPM_GRAN_4K];
	unsigned int slot = HPM_GRAN_CACHE_OWNERS + lcore;
	struct hpm_gran *g = gc->own[slot];

	if (g != NULL && (*pos = page_run_find(g, len, len)) >= 0)
		return g;
	g = run_find(gs, HPM_GRAN_4K, len, len, true, pos);
	if (g == NULL) {
		g = page_new(gs, HPM_GRAN_4K, len, len);
		*pos = g != NULL ? page_run_find(g, len, len) : -1;
	}
	if (g == NULL || *pos < 0)
		g = run_find(gs, HPM_GRAN_4K, len, len, false, pos);
	if (g != NULL)
		page_own(gc, g, slot);
	return g;
}

unsigned int
hpm_gran_take_aligned_runs(struct hpm_gran_set *gs, unsigned int lcore, unsigned int len,
	void **objs, uint8_t **states, unsigned int n)
{
	struct hpm_gran_class *gc = &gs->cls[HPM_GRAN_4K];
	unsigned int taken = 0;
	bool dirty;
	int pos;

	HPM_ASSERT(lcore < HPM_GRAN_CACHE_OWNERS); /* only caches take them */
	while (taken < n) {
		struct hpm_gran *g = aligned_runs_page(gs, lcore, len, &pos);

		if (g == NULL)
			break;
		if (hpm_gran_page_empty(g))
			gc->nempty--;
		page_take_at(g, (unsigned int)pos, len, &dirty);
		relist(gc, g);
		g->state[pos] = HPM_BLK_CACHED;
		objs[taken] = g->unit->va + ((size_t)pos << g->shift);
		states[taken++] = &g->state[pos];
	}
	return taken;
}

unsigned int
hpm_gran_take_runs(struct hpm_gran_set *gs, unsigned int len, unsigned int align, void **objs,
	uint8_t **states, unsigned int n)
{
	unsigned int i;
	bool dirty;
	int pos;

	for (i = 0; i < n; i++) {
		struct hpm_gran *g = run_take(gs, HPM_GRAN_4K, len, align, &dirty, &pos);

		if (g == NULL)
			break;
		g->state[pos] = HPM_BLK_CACHED;
		objs[i] = g->unit->va + ((size_t)pos << g->shift);
		states[i] = &g->state[pos];
	}
	return i;
}

void
hpm_gran_disown(struct hpm_gran_set *gs, unsigned int lcore)
{
	unsigned int cls, k;

	HPM_ASSERT(lcore < HPM_GRAN_CACHE_OWNERS);
	for (cls = 0; cls < HPM_GRAN_NCLASS; cls++) {
		struct hpm_gran_class *gc = &gs->cls[cls];

		/* its page of singles, then of 64 KiB runs */
		for (k = lcore; k < HPM_GRAN_OWNERS; k += HPM_GRAN_CACHE_OWNERS)
			slot_clear(gc, k);
	}
}

/* Position of the run at p if its state is in want (a mask of 1 << state), or -1. */
static int
run_start(const struct hpm_unit *u, const void *p, unsigned int want)
{
	const struct hpm_gran *g = u->gran;
	size_t off = (const uint8_t *)p - u->va;
	unsigned int pos = off >> g->shift;

	if ((off & ((UINT64_C(1) << g->shift) - 1)) != 0 || pos >= g->ngran ||
		!hpm_bitrun_test(g->start, pos) || !((1u << hpm_blk_kind(g->state[pos])) & want) ||
		g->state[pos] == HPM_BLK_NONE)
		return -1;
	return pos;
}

#define HELD_BY_USER (1u << HPM_BLK_USER)
#define HELD_BY_ANYONE ((1u << HPM_BLK_USER) | (1u << HPM_BLK_CACHED))

/* A run ends at the next run's start or at the first free granule. */
static unsigned int
run_length(const struct hpm_gran *g, unsigned int pos)
{
	int next_free = hpm_bitrun_next_clear(g->used, g->ngran, pos + 1);

	/* the next start, looked for only up to the next free granule */
	return hpm_bitrun_next_set(g->start, pos + 1,
		       next_free < 0 ? g->ngran : (unsigned int)next_free) -
		pos;
}

unsigned int
hpm_gran_page_give(struct hpm_gran *g, unsigned int pos)
{
	unsigned int n = run_length(g, pos);

	g->state[pos] = HPM_BLK_NONE;
	hpm_bitrun_clear(g->start, pos, 1);
	hpm_bitrun_clear(g->used, pos, n);
	g->nfree += n;
	if (pos < g->lowfree)
		g->lowfree = pos;
	used_changed(g, pos, n);
	return n;
}

/* A page that gained free granules is listed; one empty page is kept. */
static void
page_gained(struct hpm_gran_set *gs, struct hpm_gran *g)
{
	struct hpm_gran_class *gc = &gs->cls[g->cls];

	relist(gc, g);
	if (hpm_gran_page_empty(g) && ++gc->nempty > 1)
		page_release(gs, g);
}

int
hpm_gran_free(struct hpm_gran_set *gs, struct hpm_unit *u, const void *p, size_t *bytes)
{
	struct hpm_gran *g = u->gran;
	int pos = run_start(u, p, HELD_BY_ANYONE);

	if (pos < 0)
		return -EINVAL;
	*bytes = (size_t)hpm_gran_page_give(g, pos) << g->shift;
	page_gained(gs, g);
	return 0;
}

size_t
hpm_gran_block_size(const struct hpm_unit *u, const void *p)
{
	int pos = run_start(u, p, HELD_BY_USER);

	return pos < 0 ? 0 : (size_t)run_length(u->gran, pos) << u->gran->shift;
}

int
hpm_gran_resize(struct hpm_gran_set *gs, struct hpm_unit *u, const void *p, unsigned int n,
	struct hpm_blockinfo *bi)
{
	struct hpm_gran *g = u->gran;
	int pos = run_start(u, p, HELD_BY_USER);
	unsigned int old, end;

	if (pos < 0)
		return -1;
	old = run_length(g, pos);
	end = pos + old;
	bi->dirty = false;
	if (n <= old) {
		bi->bytes = (size_t)n << g->shift;
		if (n < old) {
			hpm_bitrun_clear(g->used, pos + n, old - n);
			g->nfree += old - n;
			if (pos + n < g->lowfree)
				g->lowfree = pos + n;
			used_changed(g, pos + n, old - n);
			page_gained(gs, g);
		}
		return 0;
	}
	if (pos + n > g->ngran || hpm_bitrun_next_set(g->used, end, pos + n) != pos + n)
		return -1;
	hpm_bitrun_set(g->used, end, n - old);
	hpm_bitrun_set(g->dirty, end, n - old);
	g->nfree -= n - old;
	if (g->lowfree == end)
		update_lowfree(g, pos + n);
	used_changed(g, end, n - old);
	relist(&gs->cls[g->cls], g);
	bi->bytes = (size_t)n << g->shift;
	return 0;
}

void
hpm_gran_free_ranges(const struct hpm_gran_set *gs, unsigned int *count, size_t *longest,
	size_t *bytes)
{
	const struct hpm_chunk *c;
	unsigned int i;

	/* full pages are on no list: walk the units */
	for (c = gs->cs->chunks; c != NULL; c = c->next)
		for (i = 0; i < c->nunits; i++) {
			const struct hpm_unit *u = &c->units[i];
			const struct hpm_gran *g;

			if (!hpm_unit_is_gran(u->role))
				continue;
			g = u->gran;
			*count += hpm_bitrun_count_clear_runs(g->used, g->ngran);
			*longest = RTE_MAX(*longest, (size_t)g->maxrun << g->shift);
			*bytes += hpm_gran_unit_free_bytes(u);
		}
}

static unsigned int
check_page(const struct hpm_gran_set *gs, const struct hpm_unit *u, size_t *live_bytes,
	uint64_t *live_count)
{
	const struct hpm_gran *g = u->gran;
	unsigned int bad = 0, i, nfree = 0;
	int first_free = hpm_bitrun_next_clear(g->used, g->ngran, 0);
	unsigned int longest = hpm_bitrun_longest_clear(g->used, g->ngran), bin;
	const struct hpm_gran_class *gc = &gs->cls[g->cls];
	const struct hpm_gran_bseg *seg;
	bool listed = false;

	if (g->reserved != (u->headed ? hpm_gran_head_granules(g->shift) : 0) ||
		g->ngran != gran_classes[g->cls].ngran - u->tailed) {
		HPM_LOG(ERR,
			"check: granule page %p: %u granules reserved of %u, headed %u, tailed %u",
			u->va, g->reserved, g->ngran, u->headed, u->tailed);
		bad++;
	}
	for (i = 0; i < g->ngran; i++) {
		bool used = hpm_bitrun_test(g->used, i);

		if (!used)
			nfree++;
		/* the source's: used, never a block */
		if (i < g->reserved) {
			if (!used || hpm_bitrun_test(g->start, i) || g->state[i] != HPM_BLK_NONE) {
				HPM_LOG(ERR, "check: granule page %p: reserved granule %u in use",
					u->va, i);
				bad++;
			}
			continue;
		}
		if (hpm_bitrun_test(g->start, i) != (g->state[i] != HPM_BLK_NONE)) {
			HPM_LOG(ERR, "check: granule page %p: start bit and state of %u disagree",
				u->va, i);
			bad++;
		}
		if (hpm_bitrun_test(g->start, i)) {
			if (!used) {
				HPM_LOG(ERR,
					"check: granule page %p: start bit %u on a free granule",
					u->va, i);
				bad++;
			} else {
				*live_bytes += (size_t)run_length(g, i) << g->shift;
				(*live_count)++;
			}
		} else if (used && (i == g->reserved || !hpm_bitrun_test(g->used, i - 1))) {
			HPM_LOG(ERR, "check: granule page %p: run at %u has no start", u->va, i);
			bad++;
		}
	}
	if (nfree != g->nfree || (first_free >= 0 && (unsigned int)first_free < g->lowfree)) {
		HPM_LOG(ERR, "check: granule page %p: nfree %u/%u lowfree %u first free %d", u->va,
			g->nfree, nfree, g->lowfree, first_free);
		bad++;
	}
	for (i = 0; i < HPM_GRAN_WORDS && i * 64 < g->ngran; i++)
		if (g->inner[i] !=
			hpm_bitrun_longest_ones(~g->used[i] &
				hpm_bitrun_mask(0, RTE_MIN(g->ngran - i * 64, 64u)))) {
			HPM_LOG(ERR, "check: granule page %p: word %u's inner run %u is wrong",
				u->va, i, g->inner[i]);
			bad++;
		}
	if (g->maxrun != longest) {
		HPM_LOG(ERR, "check: granule page %p: maxrun %u, longest free run %u", u->va,
			g->maxrun, longest);
		bad++;
	}
	seg = gc->segs[u->ord / HPM_GRAN_BSEG];
	for (bin = 0; seg != NULL && bin < HPM_GRAN_NBIN; bin++) {
		bool in = (seg->words[bin][u->ord % HPM_GRAN_BSEG / 64] >> (u->ord % 64)) & 1;

		if (in != (g->bin != HPM_GRAN_NO_BIN && bin <= g->bin)) {
			HPM_LOG(ERR, "check: granule page %p: in level %u: %d, bin %u", u->va, bin,
				in, g->bin);
			bad++;
		}
		listed |= in;
	}
	if (g->owner != 0 &&
		(g->owner > HPM_GRAN_OWNERS || gs->cls[g->cls].own[g->owner - 1] != g)) {
		HPM_LOG(ERR, "check: granule page %p: owner %u does not list it", u->va, g->owner);
		bad++;
	}
	if (listed != (g->nfree > 0) || g->bin != bin_of(longest) || g->unit != u) {
		HPM_LOG(ERR, "check: granule page %p: listed %d in bin %u, nfree %u", u->va, listed,
			g->bin, g->nfree);
		bad++;
	}
	return bad;
}

/*
 * A class's levels: a summary bit for each word and segment with a page,
 * listed bits in all (each page's levels; check_page() found each page in
 * its own), and each bin's count of pages.
 */
static unsigned int
check_bins(const struct hpm_gran_class *gc, unsigned int cls, unsigned int listed,
	const unsigned int *inbin)
{
	unsigned int bad = 0, bin, s, w, bits = 0;

	for (bin = 0; bin < HPM_GRAN_NBIN; bin++) {
		for (s = 0; s < HPM_GRAN_NBSEG; s++) {
			const struct hpm_gran_bseg *seg = gc->segs[s];
			bool any = false;

			for (w = 0; seg != NULL && w < HPM_GRAN_BSEG / 64; w++) {
				bool sum = (seg->sums[bin] >> w) & 1;

				if (sum != (seg->words[bin][w] != 0)) {
					HPM_LOG(ERR,
						"check: granule class %u: bin %u, word %u of segment %u and its summary bit disagree",
						cls, bin, w, s);
					bad++;
				}
				bits += __builtin_popcountll(seg->words[bin][w]);
				any |= sum;
			}
			if (any != ((gc->segs_with[bin] >> s) & 1)) {
				HPM_LOG(ERR,
					"check: granule class %u: bin %u, segment %u and its bit disagree",
					cls, bin, s);
				bad++;
			}
		}
		if (gc->inbin[bin] != inbin[bin]) {
			HPM_LOG(ERR,
				"check: granule class %u: %u pages counted in bin %u, %u there",
				cls, gc->inbin[bin], bin, inbin[bin]);
			bad++;
		}
	}
	if (bits != listed) {
		HPM_LOG(ERR, "check: granule class %u: %u bits in levels for %u", cls, bits,
			listed);
		bad++;
	}
	return bad;
}

unsigned int
hpm_gran_verify(const struct hpm_gran_set *gs, size_t *live_bytes, uint64_t *live_count)
{
	unsigned int bad = 0, i, cls, pages[HPM_GRAN_NCLASS] = {0}, empty[HPM_GRAN_NCLASS] = {0},
		     owned[HPM_GRAN_NCLASS] = {0}, listed[HPM_GRAN_NCLASS] = {0},
		     inbin[HPM_GRAN_NCLASS][HPM_GRAN_NBIN] = {{0}};
	const struct hpm_chunk *c;

	for (c = gs->cs->chunks; c != NULL; c = c->next)
		for (i = 0; i < c->nunits; i++) {
			const struct hpm_unit *u = &c->units[i];

			if (!hpm_unit_is_gran(u->role))
				continue;
			pages[u->gran->cls]++;
			empty[u->gran->cls] += hpm_gran_page_empty(u->gran);
			owned[u->gran->cls] += u->gran->owner != 0;
			if (u->gran->bin != HPM_GRAN_NO_BIN) {
				listed[u->gran->cls] += u->gran->bin + 1u;
				inbin[u->gran->cls][u->gran->bin]++;
			}
			bad += check_page(gs, u, live_bytes, live_count);
		}
	for (cls = 0; cls < HPM_GRAN_NCLASS; cls++) {
		/* each owned page is its slot's (check_page()): no slot may point elsewhere */
		if (owned[cls] != gs->cls[cls].nowned) {
			HPM_LOG(ERR, "check: granule class %u: %u slots in use, %u pages owned",
				cls, gs->cls[cls].nowned, owned[cls]);
			bad++;
		}
		bad += check_bins(&gs->cls[cls], cls, listed[cls], inbin[cls]);
		if (pages[cls] != gs->cls[cls].npages || empty[cls] != gs->cls[cls].nempty ||
			empty[cls] > 1) {
			HPM_LOG(ERR, "check: granule class %u: %u/%u pages, %u/%u empty", cls,
				pages[cls], gs->cls[cls].npages, empty[cls], gs->cls[cls].nempty);
			bad++;
		}
	}
	return bad;
}
