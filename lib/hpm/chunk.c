/* SPDX-License-Identifier: BSD-3-Clause */

#include <errno.h>
#include <string.h>
#include <time.h>

#include <rte_errno.h>

#include "bitrun.h"
#include "check.h"
#include "chunk.h"
#include "log.h"
#include "owner.h"
#include "poison.h"

/* This process's reclaim callback (hpm_chunk_set_reclaim()). */
static hpm_chunk_reclaim_t reclaim;

void
hpm_chunk_set_reclaim(hpm_chunk_reclaim_t fn)
{
	reclaim = fn;
}

void
hpm_chunk_set_init(struct hpm_chunk_set *cs, int socket, int node, struct hpm_meta *meta,
	struct hpm_pagemap *pagemap, size_t chunk_size, size_t retain_size,
	uint64_t release_delay_ms, bool unit_iova_contig)
{
	memset(cs, 0, sizeof(*cs));
	cs->socket = socket;
	cs->node = node;
	cs->meta = meta;
	cs->pagemap = pagemap;
	cs->chunk_size = chunk_size;
	cs->retain_size = retain_size;
	cs->release_delay_ms = release_delay_ms;
	cs->unit_iova_contig = unit_iova_contig;
}

/*
 * Growth follows the heap (1/32 of it, rounded down to units) from one unit
 * up to the chunk size: a heap holds at most 1/32 more than it ever needed.
 * A source that uses memory of its own around each reservation (eal: EAL's
 * element header below a memzone takes the hugepage below a 2 MiB-aligned
 * one) makes small steps dear: there a step is at least LEAD_MIN_STEP, so
 * that the page costs at most 1/8 of the chunk (measured: the soak in 2 MiB
 * steps held 91 chunks, and 180 MiB of hugepages for their headers). Not
 * for a unit of short blocks (hpm_chunk_take()): a headed chunk (its header
 * in the first unit's hugepage, none below) of three units costs three
 * hugepages, its edge units (headed, maybe tailed) for pages of granules and
 * size classes, one unit for anything, and a chunk that small empties, and
 * goes back, sooner than one of eight (the soak: 212 -> 202 MiB held). Runs
 * of units and heap spans cannot use an edge unit (a chunk of three would
 * hold one unit for them, two hugepages idle: grow_short), and an edge unit
 * holds one run of 1 MiB where another holds two (1 MiB blocks in 256 MiB:
 * 234 in chunks of eight, 210 in chunks of three).
 */
#define LEAD_MIN_STEP (8 * HPM_UNIT_SIZE)
#define LEAD_MIN_STEP_SHORT (3 * HPM_UNIT_SIZE)

static size_t
grow_step(const struct hpm_chunk_set *cs, bool short_blocks)
{
	size_t step = RTE_ALIGN_FLOOR(cs->total_bytes / 32, HPM_UNIT_SIZE);
	size_t least = HPM_UNIT_SIZE;

	if (hpm_src != NULL && hpm_src->lead != 0)
		least = short_blocks ? LEAD_MIN_STEP_SHORT : LEAD_MIN_STEP;
	if (step < least)
		step = least;
	return RTE_MIN(step, cs->chunk_size);
}

/* Units [ord, ord + n) are free (free) or taken: the free map and its summary. */
static void
ords_mark_free(struct hpm_chunk_set *cs, unsigned int ord, unsigned int n, bool free)
{
	struct hpm_chunk_ords *o = cs->ords;
	unsigned int w;

	if (free)
		hpm_bitrun_set(o->free, ord, n);
	else
		hpm_bitrun_clear(o->free, ord, n);
	for (w = ord / 64; w <= (ord + n - 1) / 64; w++)
		if (o->free[w] != 0)
			o->free_sum[w / 64] |= UINT64_C(1) << (w % 64);
		else
			o->free_sum[w / 64] &= ~(UINT64_C(1) << (w % 64));
}

/* The free unit of lowest ordinal, or NULL. */
static struct hpm_unit *
ords_lowest_free(const struct hpm_chunk_set *cs)
{
	const struct hpm_chunk_ords *o = cs->ords;
	unsigned int s, w;

	if (o == NULL)
		return NULL;
	for (s = 0; s < RTE_DIM(o->free_sum); s++)
		if (o->free_sum[s] != 0) {
			w = s * 64 + rte_bsf64(o->free_sum[s]);
			return hpm_chunk_unit_at(cs, w * 64 + rte_bsf64(o->free[w]));
		}
	return NULL;
}

/* Ordinals for a chunk of n units, the lowest run free, and their directory; 0 or -errno. */
static int
ords_take(struct hpm_chunk_set *cs, struct hpm_chunk *c)
{
	struct hpm_chunk_ords *o;
	unsigned int i, s;
	int ord;

	if (cs->ords == NULL) {
		cs->ords = hpm_meta_alloc(cs->meta, hpm_src, sizeof(*cs->ords));
		if (cs->ords == NULL)
			return -ENOMEM;
	}
	o = cs->ords;
	ord = hpm_bitrun_find(o->taken, HPM_ORD_MAX, 0, c->nunits, 1, 0);
	if (ord < 0) {
		HPM_LOG(ERR, "socket %d: more than %u units", cs->socket, HPM_ORD_MAX);
		return -ENOSPC;
	}
	for (s = ord / HPM_ORD_SEG; s <= (ord + c->nunits - 1) / HPM_ORD_SEG; s++)
		if (o->unit[s] == NULL) {
			o->unit[s] = hpm_meta_alloc(cs->meta, hpm_src,
				HPM_ORD_SEG * sizeof(*o->unit[s]));
			if (o->unit[s] == NULL)
				return -ENOMEM; /* a segment made stays for the next chunk */
		}
	hpm_bitrun_set(o->taken, ord, c->nunits);
	c->ord = ord;
	for (i = 0; i < c->nunits; i++) {
		c->units[i].ord = ord + i;
		o->unit[(ord + i) / HPM_ORD_SEG][(ord + i) % HPM_ORD_SEG] = &c->units[i];
	}
	ords_mark_free(cs, ord, c->nunits, true);
	/* edge units are for hpm_chunk_take_edge() alone */
	if (c->headed)
		ords_mark_free(cs, ord, 1, false);
	if (c->tailed)
		ords_mark_free(cs, ord + c->nunits - 1, 1, false);
	return 0;
}

static void
ords_give(struct hpm_chunk_set *cs, struct hpm_chunk *c)
{
	struct hpm_chunk_ords *o = cs->ords;
	unsigned int i;

	ords_mark_free(cs, c->ord, c->nunits, false);
	hpm_bitrun_clear(o->taken, c->ord, c->nunits);
	for (i = 0; i < c->nunits; i++)
		o->unit[(c->ord + i) / HPM_ORD_SEG][(c->ord + i) % HPM_ORD_SEG] = NULL;
}

static void
chunk_link(struct hpm_chunk_set *cs, struct hpm_chunk *c)
{
	c->prev = NULL;
	c->next = cs->chunks;
	if (cs->chunks != NULL)
		cs->chunks->prev = c;
	cs->chunks = c;
}

static void
chunk_unlink(struct hpm_chunk_set *cs, struct hpm_chunk *c)
{
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		cs->chunks = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	if (cs->hint == c)
		cs->hint = cs->chunks;
}

/*
 * Chunk descriptors are type-stable: a released chunk's descriptor, its
 * units included, never goes back to the metadata free lists, only to a
 * later chunk it has room for. Other processes' owner tables (owner.h) may
 * still point at its units; each of those rejects every pointer (no block
 * state, address 0, every offset bit in its mask) until it describes a unit
 * again, whose own address then decides. Handed to other metadata, a
 * descriptor came back zeroed or overwritten: a unit of address 0 and mask 0
 * passed a free's test for any pointer, whose block's first byte was then
 * read as its state byte (a secondary freed a 4 KiB block into the 64 KiB
 * class and handed it out as 64 KiB; test_owner_stale).
 */
static size_t
chunk_meta_size(unsigned int units)
{
	return sizeof(struct hpm_chunk) + units * sizeof(struct hpm_unit) +
		RTE_ALIGN_CEIL(units, 64) / 8;
}

/* A unit that no pointer passes: the mask first, so that it holds at every step. */
static void
unit_poison(struct hpm_unit *u)
{
	__atomic_store_n(&u->start_mask, UINT64_MAX, __ATOMIC_RELEASE);
	__atomic_store_n(&u->va, NULL, __ATOMIC_RELEASE);
	u->no_state = HPM_BLK_NONE;
	__atomic_store_n(&u->state, &u->no_state, __ATOMIC_RELEASE);
	u->role = HPM_UNIT_FREE;
}

/* All of a poisoned unit but what a free reads zeroed, for a new chunk. */
static void
unit_clear(struct hpm_unit *u)
{
	size_t tail = offsetof(struct hpm_unit, state) + sizeof(u->state);

	memset((uint8_t *)u, 0, offsetof(struct hpm_unit, start_mask));
	memset((uint8_t *)u + tail, 0, sizeof(*u) - tail);
}

/* The spare descriptor with room for n units, the fewest such; NULL if none. */
static struct hpm_chunk *
spare_take(struct hpm_chunk_set *cs, unsigned int n)
{
	struct hpm_chunk **at, **best = NULL, *c;
	uint32_t cap, meta_size;
	unsigned int i;

	for (at = &cs->spare; *at != NULL; at = &(*at)->next)
		if ((*at)->units_cap >= n &&
			(best == NULL || (*at)->units_cap < (*best)->units_cap))
			best = at;
	if (best == NULL)
		return NULL;
	c = *best;
	*best = c->next;
	cs->spare_bytes -= hpm_meta_bytes(c, c->meta_size);
	cap = c->units_cap;
	meta_size = c->meta_size;
	memset(c, 0, offsetof(struct hpm_chunk, units));
	c->units_cap = cap;
	c->meta_size = meta_size;
	for (i = 0; i < cap; i++)
		unit_clear(&c->units[i]);
	memset(&c->units[cap], 0, RTE_ALIGN_CEIL(cap, 64) / 8);
	return c;
}

/* c's descriptor to the spares; its units reject every pointer. */
static void
spare_give(struct hpm_chunk_set *cs, struct hpm_chunk *c)
{
	unsigned int i;

	for (i = 0; i < c->units_cap; i++)
		unit_poison(&c->units[i]);
	c->next = cs->spare;
	cs->spare = c;
	cs->spare_bytes += hpm_meta_bytes(c, c->meta_size);
}

/*
 * A chunk of len bytes aligned to align; with headed, one whose first unit
 * may hold the source's header (hpm_region::headed: a hugepage less).
 */
static struct hpm_chunk *
chunk_new(struct hpm_chunk_set *cs, size_t len, size_t align, bool contig, bool headed)
{
	struct hpm_region r;
	struct hpm_chunk *c;
	size_t meta_size;
	unsigned int i, n;
	uint8_t *base;
	int rc;

	rc = hpm_source_reserve(hpm_src, &r, len, align, cs->node,
		(contig ? HPM_RESERVE_CONTIG : 0) | (headed ? HPM_RESERVE_HEADED : 0));
	if (rc != 0) {
		rte_errno = rc == -ENOTSUP ? ENOTSUP : ENOMEM;
		return NULL;
	}
	/* a headed region's first unit holds the header; any other: the whole units in it */
	base = r.headed ? RTE_PTR_ALIGN_FLOOR((uint8_t *)r.va, HPM_UNIT_SIZE)
			: RTE_PTR_ALIGN_CEIL((uint8_t *)r.va, HPM_UNIT_SIZE);
	n = (uint8_t *)r.va + r.len > base ? ((uint8_t *)r.va + r.len - base) >> HPM_UNIT_SHIFT : 0;
	if (n == 0) {
		hpm_src->release(&r);
		rte_errno = ENOMEM;
		return NULL;
	}
	c = spare_take(cs, n);
	if (c == NULL) {
		meta_size = chunk_meta_size(n);
		c = hpm_meta_alloc(cs->meta, hpm_src, meta_size);
		if (c == NULL)
			goto fail_region;
		c->meta_size = meta_size;
		/*
		 * The room its metadata class gives (a power of two): as a spare, the
		 * descriptor then serves chunks of up to that many units. Made for n
		 * exactly, each chunk larger than the last left one more spare for
		 * good (1000 chunks growing by 2 MiB: 84 MiB of metadata, empty heap).
		 */
		c->units_cap = n;
		if (meta_size <= ((size_t)1 << HPM_META_MAX_LOG2))
			while (chunk_meta_size(c->units_cap + 1) <= hpm_meta_bytes(c, meta_size))
				c->units_cap++;
		for (i = n; i < c->units_cap; i++)
			unit_poison(&c->units[i]);
	}
	/* nothing of it is the application's until a block is handed out */
	HPM_POISON(r.va, r.len);
	c->region = r;
	c->nunits = n;
	c->nfree = n;
	c->used = (uint64_t *)&c->units[c->units_cap];
	c->headed = r.headed;
	/*
	 * A source with memory of its own around a region (eal: the header of
	 * EAL's next element follows a memzone) has it just past the region: a
	 * write past a block that ends at the last unit's end would damage it,
	 * unless the region holds a guard there (source_eal.c cuts memzones so).
	 * Without one, that unit is tailed: only pages that leave their last
	 * granule or frame take it.
	 */
	c->tailed = hpm_src->lead != 0 &&
		(uintptr_t)r.va + r.len <
			(uintptr_t)base + ((size_t)n << HPM_UNIT_SHIFT) + HPM_SOURCE_GUARD;
	c->bytes = ((size_t)n << HPM_UNIT_SHIFT) - (r.headed ? HPM_UNIT_HEAD_MAX : 0);
	for (i = 0; i < n; i++) {
		struct hpm_unit *u = &c->units[i];

		u->role = HPM_UNIT_FREE;
		hpm_unit_no_blocks(u);
		u->dirty = !r.zeroed;
		u->socket = cs->socket;
		u->index = i;
		u->chunk = c;
		u->va = base + ((size_t)i << HPM_UNIT_SHIFT);
		u->headed = i == 0 && r.headed;
		u->tailed = i == n - 1 && c->tailed;
		u->iova = hpm_src->has_iova && r.unit_iova_contig ? hpm_src->iova(&r, u->va)
								  : RTE_BAD_IOVA;
	}
	if (ords_take(cs, c) != 0)
		goto fail_meta;
	if (hpm_pagemap_map(cs->pagemap, cs->meta, hpm_src, base, n, c->units)) {
		ords_give(cs, c);
		goto fail_meta;
	}
	hpm_owner_set(base, n, c->units);
	chunk_link(cs, c);
	cs->total_bytes += c->bytes;
	cs->empty_bytes += c->bytes;
	cs->chunks_reserved++;
	return c;

fail_meta:
	/* a spare's units may be in other processes' tables: back to the spares */
	spare_give(cs, c);
fail_region:
	hpm_src->release(&r);
	rte_errno = ENOMEM;
	return NULL;
}

static void
chunk_release(struct hpm_chunk_set *cs, struct hpm_chunk *c)
{
	struct hpm_region r = c->region;

	chunk_unlink(cs, c);
	ords_give(cs, c);
	hpm_pagemap_unmap(cs->pagemap, c->units[0].va, c->nunits);
	hpm_owner_set(c->units[0].va, c->nunits, NULL);
	cs->total_bytes -= c->bytes;
	if (c->nfree == c->nunits)
		cs->empty_bytes -= c->bytes;
	cs->chunks_released++;
	spare_give(cs, c);
	HPM_UNPOISON(r.va, r.len);
	hpm_src->release(&r);
}

bool
hpm_chunk_run_iova_contig(const struct hpm_chunk *c, unsigned int pos, unsigned int n)
{
	unsigned int i;

	if (!c->region.unit_iova_contig || c->units[pos].iova == RTE_BAD_IOVA)
		return false;
	for (i = 1; i < n; i++)
		if (c->units[pos + i].iova !=
			c->units[pos].iova + ((rte_iova_t)i << HPM_UNIT_SHIFT))
			return false;
	return true;
}

static int
find_in_chunk(const struct hpm_chunk *c, unsigned int n, unsigned int align, bool contig)
{
	unsigned int phase = ((uintptr_t)c->units[0].va >> HPM_UNIT_SHIFT) & (align - 1);
	/* edge units are for hpm_chunk_take_edge() alone */
	unsigned int from = RTE_MAX(c->lowfree, c->headed), end = c->nunits - c->tailed;
	int pos;

	for (;;) {
		pos = hpm_bitrun_find(c->used, end, from, n, align, phase);
		if (pos < 0 || !contig || hpm_chunk_run_iova_contig(c, pos, n))
			return pos;
		from = pos + 1;
	}
}

/* n more units in use: held memory follows their high-water mark, in chunk steps. */
static void
in_use_add(struct hpm_chunk_set *cs, unsigned int n)
{
	cs->units_in_use += n;
	cs->units_in_use_peak = RTE_MAX(cs->units_in_use_peak, cs->units_in_use);
}

static struct hpm_unit *
take_at(struct hpm_chunk_set *cs, struct hpm_chunk *c, unsigned int pos, unsigned int n)
{
	if (c->nfree == c->nunits) {
		cs->empty_bytes -= c->bytes;
		c->empty_since_ms = 0;
	}
	hpm_bitrun_set(c->used, pos, n);
	ords_mark_free(cs, c->ord + pos, n, false);
	c->nfree -= n;
	in_use_add(cs, n);
	if (pos == c->lowfree) {
		int next = hpm_bitrun_next_clear(c->used, c->nunits, pos + n);

		c->lowfree = next < 0 ? c->nunits : (unsigned int)next;
	}
	cs->hint = c;
	return &c->units[pos];
}

/*
 * Empty chunks back to the source, past their delay (any, at now_ms
 * UINT64_MAX), until no more than keep bytes of them are left; the bytes
 * given back.
 */
static size_t
release_empty(struct hpm_chunk_set *cs, uint64_t now_ms, size_t keep)
{
	uint64_t delay = cs->release_delay_ms;
	struct hpm_chunk *c, *next;
	size_t released = 0;

	/* the earliest moment a walk can release anything, for the next give */
	cs->release_due_ms = 0;
	for (c = cs->chunks; c != NULL && cs->empty_bytes > keep; c = next) {
		next = c->next;
		if (c->nfree != c->nunits)
			continue;
		if (c->empty_since_ms == 0)
			c->empty_since_ms = now_ms;
		if (now_ms != UINT64_MAX && now_ms - c->empty_since_ms < delay) {
			if (cs->release_due_ms == 0 ||
				c->empty_since_ms + delay < cs->release_due_ms)
				cs->release_due_ms = c->empty_since_ms + delay;
			continue;
		}
		released += c->bytes;
		chunk_release(cs, c);
	}
	return released;
}

/* The index of a free edge unit of c, the headed one first; -1 if none. */
static int
edge_free(const struct hpm_chunk *c)
{
	if (c->headed && !hpm_bitrun_test(c->used, 0))
		return 0;
	if (c->tailed && !hpm_bitrun_test(c->used, c->nunits - 1))
		return (int)c->nunits - 1;
	return -1;
}

struct hpm_unit *
hpm_chunk_take(struct hpm_chunk_set *cs, unsigned int n, unsigned int align_units, bool contig,
	enum hpm_unit_role role, bool short_blocks)
{
	/* the source's chunks may be tailed (chunk_new()): growth counts on it */
	const unsigned int tail = hpm_src->lead != 0;
	struct hpm_chunk *start = cs->hint != NULL ? cs->hint : cs->chunks;
	struct hpm_chunk *c = start;
	bool reclaimed = false, headed;
	size_t len, want;
	int pos;

	align_units = RTE_MAX(align_units, 1u);
search:
	/* a single unit: the lowest free one, so that the last chunks empty */
	if (n == 1 && align_units == 1 && !contig) {
		struct hpm_unit *u = ords_lowest_free(cs);

		if (u != NULL)
			return take_at(cs, u->chunk, u->index, 1);
	}
	/* from the hint round the list: usually the hint itself has room */
	while (c != NULL) {
		if (c->nfree >= n) {
			pos = find_in_chunk(c, n, align_units, contig);
			if (pos >= 0)
				return take_at(cs, c, pos, n);
		}
		c = c->next != NULL ? c->next : cs->chunks;
		if (c == start)
			break;
	}
	/* before asking the source: what the caches hold may be enough */
	if (!reclaimed && reclaim != NULL && reclaim(cs)) {
		reclaimed = true;
		c = start = cs->hint != NULL ? cs->hint : cs->chunks;
		goto search;
	}
	/* a tailed chunk (chunk_new()) has a unit less for runs */
	want = (size_t)(n + tail) << HPM_UNIT_SHIFT;
	len = RTE_MAX(grow_step(cs, short_blocks && n == 1 && !contig), want);
	/* a single unit is contiguous when the source's units are: no special memory */
	contig = contig && (n > 1 || !cs->unit_iova_contig);
	/* a headed chunk has a unit less for runs too: growth, not a chunk of exactly n */
	headed = align_units == 1 && !contig && len > want;
	c = chunk_new(cs, len, (size_t)align_units << HPM_UNIT_SHIFT, contig, headed);
	/*
	 * The source is short (EAL's --socket-limit, the hugepage pool) while
	 * the empty chunks kept for reuse add up to the request, though none
	 * holds it: they may be what keeps the source from giving it. Give them
	 * all back and ask once more. A request larger than all of them keeps
	 * them (every failed giant request emptied the heap: the fuzzer ran at
	 * half its speed, mapping its chunks again).
	 */
	if (c == NULL && len <= cs->empty_bytes) {
		release_empty(cs, UINT64_MAX, 0);
		c = chunk_new(cs, len, (size_t)align_units << HPM_UNIT_SHIFT, contig, headed);
	}
	/*
	 * A step, or a step at the request's alignment, may be more than the
	 * source gives (EAL refuses 16 MiB memzones aligned to 4 MiB and more,
	 * and a short source a step): the request's own units, at a unit's
	 * alignment, hold an aligned run of them (a headed chunk, one more; a
	 * tailed one, one more).
	 */
	if (c == NULL) {
		size_t own;

		headed = align_units == 1 && !contig;
		own = ((size_t)n + align_units - 1 + headed + tail) << HPM_UNIT_SHIFT;
		if (own < len || align_units > 1)
			c = chunk_new(cs, own, HPM_UNIT_SIZE, contig, headed);
	}
	if (c == NULL)
		return NULL;
	cs->grown_for[role]++;
	pos = find_in_chunk(c, n, align_units, contig);
	if (pos < 0) {
		rte_errno = ENOMEM;
		return NULL;
	}
	return take_at(cs, c, pos, n);
}

struct hpm_unit *
hpm_chunk_take_unit(struct hpm_chunk_set *cs, enum hpm_unit_role role, bool short_blocks)
{
	struct hpm_unit *u = ords_lowest_free(cs);

	if (u != NULL)
		return take_at(cs, u->chunk, u->index, 1);
	u = hpm_chunk_take_edge(cs);
	return u != NULL ? u : hpm_chunk_take(cs, 1, 1, false, role, short_blocks);
}

/* The lowest free edge unit's chunk, its position in *pos; NULL if none. */
static struct hpm_chunk *
edge_lowest(const struct hpm_chunk_set *cs, unsigned int *pos)
{
	struct hpm_chunk *c, *best = NULL;
	int at, best_at = -1;

	for (c = cs->chunks; c != NULL; c = c->next)
		if ((at = edge_free(c)) >= 0 &&
			(best == NULL || c->ord + at < best->ord + best_at)) {
			best = c;
			best_at = at;
		}
	*pos = (unsigned int)best_at;
	return best;
}

struct hpm_unit *
hpm_chunk_take_edge(struct hpm_chunk_set *cs)
{
	unsigned int pos;
	struct hpm_chunk *c = edge_lowest(cs, &pos);

	return c != NULL ? take_at(cs, c, pos, 1) : NULL;
}

struct hpm_unit *
hpm_chunk_swap_for_edge(struct hpm_chunk_set *cs, struct hpm_unit *u)
{
	unsigned int pos;
	struct hpm_chunk *c = edge_lowest(cs, &pos);
	struct hpm_unit *edge;

	if (c == NULL)
		return u;
	/*
	 * The edge first, u back after (given first, u could leave its new chunk
	 * empty, to go back to the source): not counted as a unit more in use.
	 */
	cs->units_in_use--;
	edge = take_at(cs, c, pos, 1);
	cs->units_in_use++;
	hpm_chunk_give(cs, u, 1);
	return edge;
}

bool
hpm_chunk_extend(struct hpm_chunk_set *cs, struct hpm_unit *u, unsigned int n, unsigned int more)
{
	struct hpm_chunk *c = u->chunk;
	unsigned int end = u->index + n;

	/* never onto a tailed unit */
	if (end + more > c->nunits - c->tailed ||
		hpm_bitrun_next_set(c->used, end, end + more) != end + more)
		return false;
	hpm_bitrun_set(c->used, end, more);
	ords_mark_free(cs, c->ord + end, more, false);
	c->nfree -= more;
	in_use_add(cs, more);
	if (c->lowfree == end) {
		int next = hpm_bitrun_next_clear(c->used, c->nunits, end + more);

		c->lowfree = next < 0 ? c->nunits : (unsigned int)next;
	}
	return true;
}

void
hpm_chunk_give(struct hpm_chunk_set *cs, struct hpm_unit *u, unsigned int n)
{
	struct hpm_chunk *c = u->chunk;
	unsigned int i;
	uint64_t now;

	HPM_ASSERT(n >= 1 && u->index + n <= c->nunits && hpm_bitrun_all_set(c->used, u->index, n));
	for (i = 0; i < n; i++)
		u[i].role = HPM_UNIT_FREE;
	hpm_bitrun_clear(c->used, u->index, n);
	ords_mark_free(cs, u->ord, n, true);
	/* edge units are for hpm_chunk_take_edge() alone */
	if (u->headed)
		ords_mark_free(cs, u->ord, 1, false);
	if (u[n - 1].tailed)
		ords_mark_free(cs, u[n - 1].ord, 1, false);
	c->nfree += n;
	cs->units_in_use -= n;
	c->lowfree = RTE_MIN(c->lowfree, u->index);
	cs->hint = c;
	if (c->nfree < c->nunits) {
		/* another chunk's delay may be over: any give of units looks */
		if (cs->release_due_ms != 0 && (now = hpm_chunk_now_ms()) >= cs->release_due_ms)
			hpm_chunk_release_idle(cs, now);
		return;
	}
	cs->empty_bytes += c->bytes;
	if (cs->empty_bytes <= cs->retain_size)
		return;
	if (cs->release_delay_ms == 0) {
		chunk_release(cs, c);
		return;
	}
	/* beyond the retain threshold: back to the source once idle long enough */
	now = hpm_chunk_now_ms();
	c->empty_since_ms = now;
	if (cs->release_due_ms == 0 || now + cs->release_delay_ms < cs->release_due_ms)
		cs->release_due_ms = now + cs->release_delay_ms;
	if (now >= cs->release_due_ms)
		hpm_chunk_release_idle(cs, now);
}

uint64_t
hpm_chunk_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	/* never 0: that means "in use" */
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + 1;
}

size_t
hpm_chunk_release_idle(struct hpm_chunk_set *cs, uint64_t now_ms)
{
	return release_empty(cs, now_ms, cs->retain_size);
}

size_t
hpm_chunk_release_empty(struct hpm_chunk_set *cs)
{
	return release_empty(cs, UINT64_MAX, 0);
}

int
hpm_chunk_reserve(struct hpm_chunk_set *cs, size_t len)
{
	len = RTE_ALIGN_CEIL(len, HPM_UNIT_SIZE);
	return chunk_new(cs, len, HPM_UNIT_SIZE, false, true) != NULL ? 0 : -ENOMEM;
}

void
hpm_chunk_release_all(struct hpm_chunk_set *cs)
{
	while (cs->chunks != NULL)
		chunk_release(cs, cs->chunks);
}

/* The longest run of free units a run of units can take: edge units left out. */
static unsigned int
longest_inner(const struct hpm_chunk *c)
{
	unsigned int best = 0, end, lim = c->nunits - c->tailed;
	int pos = c->headed < lim ? hpm_bitrun_next_clear(c->used, lim, c->headed) : -1;

	while (pos >= 0) {
		end = hpm_bitrun_next_set(c->used, pos, lim);
		best = RTE_MAX(best, end - (unsigned int)pos);
		pos = end < lim ? hpm_bitrun_next_clear(c->used, lim, end) : -1;
	}
	return best;
}

void
hpm_chunk_free_ranges(const struct hpm_chunk_set *cs, unsigned int *count, size_t *longest,
	size_t *bytes)
{
	const struct hpm_chunk *c;

	for (c = cs->chunks; c != NULL; c = c->next) {
		bool head_free = c->headed && !hpm_bitrun_test(c->used, 0);
		/* a free edge unit is short of its head or tail: no part of a longest run */
		unsigned int run = c->headed || c->tailed
			? longest_inner(c)
			: hpm_bitrun_longest_clear(c->used, c->nunits);

		*count += hpm_bitrun_count_clear_runs(c->used, c->nunits);
		*longest = RTE_MAX(*longest, (size_t)run << HPM_UNIT_SHIFT);
		*bytes +=
			((size_t)c->nfree << HPM_UNIT_SHIFT) - (head_free ? HPM_UNIT_HEAD_MAX : 0);
	}
}

unsigned int
hpm_chunk_extents(const struct hpm_chunk_set *cs, const struct hpm_source_ops *src,
	struct hpm_extent *e, unsigned int max, size_t *bytes)
{
	const struct hpm_chunk *c;
	unsigned int n = 0;

	*bytes = 0;
	for (c = cs->chunks; c != NULL; c = c->next, n++) {
		if (n < max)
			e[n] = hpm_source_extent(src, &c->region);
		*bytes += c->bytes;
	}
	return n;
}

unsigned int
hpm_chunk_verify(const struct hpm_chunk_set *cs)
{
	const struct hpm_chunk *c;
	unsigned int bad = 0, i, units = 0, free_units = 0, in_use = 0;
	size_t total = 0, empty = 0;

	for (c = cs->chunks; c != NULL; c = c->next) {
		unsigned int nfree = 0;

		units += c->nunits;
		in_use += c->nunits - c->nfree;
		/* a free edge unit is not in the free map */
		free_units += c->nfree - (c->headed && !hpm_bitrun_test(c->used, 0)) -
			(c->tailed && !hpm_bitrun_test(c->used, c->nunits - 1));

		total += c->bytes;
		if (c->nfree == c->nunits)
			empty += c->bytes;
		for (i = 0; i < c->nunits; i++) {
			const struct hpm_unit *u = &c->units[i];
			bool used = hpm_bitrun_test(c->used, i);

			if (used != (u->role != HPM_UNIT_FREE)) {
				HPM_LOG(ERR, "check: unit %p role %u but used bit %d", u->va,
					u->role, used);
				bad++;
			}
			if (!used) {
				nfree++;
				if (i < c->lowfree) {
					HPM_LOG(ERR, "check: free unit %p below lowfree", u->va);
					bad++;
				}
			}
			if (u->ord != c->ord + i || hpm_chunk_unit_at(cs, u->ord) != u ||
				hpm_bitrun_test(cs->ords->free, u->ord) !=
					(!used && !u->headed && !u->tailed) ||
				u->headed != (i == 0 && c->headed) ||
				u->tailed != (i == c->nunits - 1 && c->tailed)) {
				HPM_LOG(ERR, "check: unit %p: ordinal %u (chunk's %u), free bit %d",
					u->va, u->ord, c->ord, !used);
				bad++;
			}
			if (hpm_pagemap_lookup(cs->pagemap, u->va) != u) {
				HPM_LOG(ERR, "check: page map does not find unit %p", u->va);
				bad++;
			}
		}
		if (nfree != c->nfree) {
			HPM_LOG(ERR, "check: chunk %p counts %u free units, has %u", c->region.va,
				c->nfree, nfree);
			bad++;
		}
	}
	if (in_use != cs->units_in_use || cs->units_in_use_peak < in_use) {
		HPM_LOG(ERR, "check: %u units in use, %u counted (peak %u)", in_use,
			cs->units_in_use, cs->units_in_use_peak);
		bad++;
	}
	if (cs->ords != NULL) {
		unsigned int taken = 0, free = 0, w;

		for (w = 0; w < HPM_ORD_WORDS; w++) {
			taken += __builtin_popcountll(cs->ords->taken[w]);
			free += __builtin_popcountll(cs->ords->free[w]);
			if (((cs->ords->free_sum[w / 64] >> (w % 64)) & 1) !=
				(cs->ords->free[w] != 0)) {
				HPM_LOG(ERR,
					"check: socket %d: free units word %u and its summary bit disagree",
					cs->socket, w);
				bad++;
			}
		}
		if (taken != units || free != free_units) {
			HPM_LOG(ERR, "check: socket %d: %u ordinals for %u units, %u free for %u",
				cs->socket, taken, units, free, free_units);
			bad++;
		}
	}
	if (total != cs->total_bytes || empty != cs->empty_bytes) {
		HPM_LOG(ERR, "check: socket %d: total %zu/%zu empty %zu/%zu", cs->socket, total,
			cs->total_bytes, empty, cs->empty_bytes);
		bad++;
	}
	return bad;
}
