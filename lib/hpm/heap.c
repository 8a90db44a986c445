/* SPDX-License-Identifier: BSD-3-Clause */

#include <errno.h>
#include <string.h>
#include <time.h>
#include <sys/random.h>

#include <rte_bitops.h>

#include "bitrun.h"
#include "check.h"
#include "heap.h"
#include "log.h"
#include "poison.h"

/*
 * Block layout: a 16-byte header just below a 64-byte aligned payload.
 * A span's first header sits at offset 48; a zero-size sentinel header at
 * the span's end stops coalescing. The size word's high half is its tag
 * (heap.h); no valid header stays inside a block (a merge kills the headers
 * it absorbs), so that the next valid header says where a damaged block ends.
 */
#define BLK_HDR 16u
#define BLK_ALIGN 64u
#define BLK_MIN 64u
#define BLK_FREE 1u
#define BLK_PREV_FREE 2u
#define BLK_FLAGS (BLK_ALIGN - 1)
#define SPAN_FIRST (BLK_ALIGN - BLK_HDR)
#define SPAN_BLOCK_MAX (HPM_UNIT_SIZE - BLK_ALIGN)
/* blocks of a list looked at for a fit before taking a larger list's head */
#define SEARCH_BOUND 8

struct hpm_blk {
	/** Size of the block below, when it is free. */
	size_t prev_size;
	/** Size of this block (a multiple of 64) and flags; the tag in the high half. */
	uint64_t size;
	/* free blocks only: */
	struct hpm_blk *next_free;
	struct hpm_blk *prev_free;
};

uint64_t hpm_heap_key;
void (*hpm_heap_report)(const void *p, const char *op, const char *why);

void
hpm_heap_rekey(void)
{
	uint64_t key = 0;
	struct timespec ts;

	if (getrandom(&key, sizeof(key), GRND_NONBLOCK) != sizeof(key)) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		key = ((uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec) ^ (uintptr_t)&key;
		key *= UINT64_C(0xff51afd7ed558ccd);
	}
	/* the tags use the low half */
	hpm_heap_key = (uint32_t)key != 0 ? key : key | 1;
}

void
hpm_heap_attach(const struct hpm_heap *h)
{
	hpm_heap_key = h->key;
}

void
hpm_heap_init(struct hpm_heap *h, struct hpm_chunk_set *cs)
{
	memset(h, 0, sizeof(*h));
	h->cs = cs;
	if (hpm_heap_key == 0)
		hpm_heap_rekey();
	h->key = hpm_heap_key;
}

/*
 * The low half of the size word: size and flags. Plain reads: this module
 * writes headers only under the lock, and whole (blk_set()); the holder of a
 * live block reads its size word without the lock, never writes it.
 */
static inline size_t
blk_word(const struct hpm_blk *b)
{
	return (uint32_t)b->size;
}

static inline size_t
blk_size(const struct hpm_blk *b)
{
	return blk_word(b) & ~(size_t)BLK_FLAGS;
}

static inline bool
blk_is_free(const struct hpm_blk *b)
{
	return blk_word(b) & BLK_FREE;
}

static inline bool
blk_prev_is_free(const struct hpm_blk *b)
{
	return blk_word(b) & BLK_PREV_FREE;
}

static inline struct hpm_blk *
blk_next(const struct hpm_blk *b)
{
	return (struct hpm_blk *)((uintptr_t)b + blk_size(b));
}

static inline void *
blk_payload(const struct hpm_blk *b)
{
	return (uint8_t *)b + BLK_HDR;
}

static inline struct hpm_blk *
blk_of(const void *p)
{
	return (struct hpm_blk *)((uintptr_t)p - BLK_HDR);
}

/*
 * Headers and free lists live in memory poisoned for memory checkers: this
 * module is built without AddressSanitizer (meson.build), and opens them to
 * valgrind, which sees every access, as it touches them.
 */
static inline void
blk_open(const struct hpm_blk *b)
{
#ifdef HPM_VALGRIND
	HPM_UNPOISON(b, sizeof(*b));
#else
	RTE_SET_USED(b);
#endif
}

/*
 * Write a header's size and flags with their tag. Whole, at once: the
 * holder of a live block reads its size without the lock, to free it into a
 * cache; the size of a live block does not change, its flags may.
 */
static inline void
blk_set(struct hpm_blk *b, size_t word)
{
	uint32_t low = (uint32_t)word;

	__atomic_store_n(&b->size, (uint64_t)hpm_heap_tag(blk_payload(b), low) << 32 | low,
		__ATOMIC_RELAXED);
}

/* The header's tag matches: written by this module, not by an overflow. */
static inline bool
blk_ok(const struct hpm_blk *b)
{
	uint64_t w;

	blk_open(b);
	w = b->size;
	return (uint32_t)(w >> 32) == hpm_heap_tag(blk_payload(b), (uint32_t)w);
}

/* A header a merge absorbs: made invalid, so that no walk takes it for a block. */
static inline void
blk_kill(struct hpm_blk *b)
{
	__atomic_store_n(&b->size, (uint64_t)(hpm_heap_tag(blk_payload(b), 0) ^ 1) << 32,
		__ATOMIC_RELAXED);
}

/* List of a block size: 8 lists per power of two, 16 per range [2^k, 2^(k+2)). */
static inline unsigned int
list_index(size_t size)
{
	unsigned int msb = rte_fls_u64(size) - 1;

	return (msb - 6) * 8 + ((size >> (msb - 3)) & 7);
}

/* First list whose every block is at least size bytes. */
static inline unsigned int
list_index_fit(size_t size)
{
	unsigned int msb = rte_fls_u64(size) - 1;

	return list_index(size + (UINT64_C(1) << (msb - 3)) - 1);
}

static void
list_insert(struct hpm_heap *h, struct hpm_blk *b)
{
	unsigned int i = list_index(blk_size(b));

	blk_open(b);
	b->prev_free = NULL;
	b->next_free = h->lists[i];
	if (b->next_free != NULL)
		b->next_free->prev_free = b;
	h->lists[i] = b;
	h->list_map[i / HPM_HEAP_LISTS_PER_RANGE] |= 1u << (i % HPM_HEAP_LISTS_PER_RANGE);
	h->range_map |= 1u << (i / HPM_HEAP_LISTS_PER_RANGE);
}

static void
list_remove(struct hpm_heap *h, struct hpm_blk *b)
{
	unsigned int i = list_index(blk_size(b));

	if (b->prev_free != NULL)
		b->prev_free->next_free = b->next_free;
	else
		h->lists[i] = b->next_free;
	if (b->next_free != NULL)
		b->next_free->prev_free = b->prev_free;
	if (h->lists[i] == NULL) {
		unsigned int r = i / HPM_HEAP_LISTS_PER_RANGE;

		h->list_map[r] &= ~(1u << (i % HPM_HEAP_LISTS_PER_RANGE));
		if (h->list_map[r] == 0)
			h->range_map &= ~(1u << r);
	}
}

/* Head of the first non-empty list at or after index i. */
static struct hpm_blk *
first_nonempty(const struct hpm_heap *h, unsigned int i)
{
	unsigned int r = i / HPM_HEAP_LISTS_PER_RANGE;
	uint32_t lists, ranges;

	if (i >= HPM_HEAP_LISTS)
		return NULL;
	lists = h->list_map[r] & (~0u << (i % HPM_HEAP_LISTS_PER_RANGE));
	if (lists == 0) {
		ranges = h->range_map & (~0u << (r + 1));
		if (r + 1 >= 32 || ranges == 0)
			return NULL;
		r = rte_bsf32(ranges);
		lists = h->list_map[r];
	}
	return h->lists[r * HPM_HEAP_LISTS_PER_RANGE + rte_bsf32(lists)];
}

/* Padding before an aligned payload inside b; fits if b holds pad + need. */
static inline size_t
blk_pad(const struct hpm_blk *b, size_t align)
{
	uintptr_t payload = (uintptr_t)blk_payload(b);

	return RTE_ALIGN_CEIL(payload, align) - payload;
}

/* A span's first header and its sentinel. */
static inline struct hpm_blk *
span_first(const struct hpm_unit *u)
{
	return (struct hpm_blk *)(u->va + SPAN_FIRST);
}

static inline struct hpm_blk *
span_end(const struct hpm_unit *u)
{
	return (struct hpm_blk *)(u->va + HPM_UNIT_SIZE - BLK_HDR);
}

static inline uint8_t
blk_state(const struct hpm_unit *u, const struct hpm_blk *b)
{
	return __atomic_load_n(hpm_heap_state(u, blk_payload(b)), __ATOMIC_RELAXED);
}

/* Tell the layer above (it counts and logs) of damage at the block whose payload is p. */
static void
report(const void *p, const char *why)
{
	if (hpm_heap_report != NULL)
		hpm_heap_report(p, "heap", why);
	else
		HPM_LOG(ERR, "heap: block %p: %s", p, why);
}

#define WHY_HEADER "block header overwritten (a write past the end of the block below?)"

/*
 * The links of free block b (its header checked, so its links are this
 * module's) agree with the list head and with its neighbours' links: it can
 * be unlinked. The neighbours' links are the words the unlink writes.
 */
static inline bool
unlink_ok(const struct hpm_heap *h, const struct hpm_blk *b)
{
	const struct hpm_blk *n = b->next_free, *p = b->prev_free;

	if (p == NULL ? h->lists[list_index(blk_size(b))] != b : p->next_free != b)
		return false;
	return n == NULL || n->prev_free == b;
}

/*
 * The headers an operation on block b trusts are valid, and the free blocks
 * it unlinks are linked right. An overflow comes from a live block, into
 * the header after it: so a free b (to be taken) is checked, with its
 * links; a live b (to be freed or resized) is checked, with the block above
 * it (and its links when free) and the free block below when b's flag says
 * there is one. The header above a free block follows no live block: it is
 * not checked (that would cost every allocation, for a write after a free).
 */
static inline bool
around_ok(const struct hpm_heap *h, const struct hpm_blk *b, bool is_free)
{
	size_t off = (uintptr_t)b & (HPM_UNIT_SIZE - 1);
	const struct hpm_blk *next, *prev;
	size_t word = blk_word(b);

	if (!blk_ok(b) || !!(word & BLK_FREE) != is_free)
		return false;
	if (is_free)
		return unlink_ok(h, b);
	if (blk_size(b) < BLK_MIN || off + blk_size(b) > HPM_UNIT_SIZE - BLK_HDR)
		return false;
	next = blk_next(b);
	if (!blk_ok(next) || (blk_is_free(next) && !unlink_ok(h, next)))
		return false;
	if (word & BLK_PREV_FREE) {
		if (b->prev_size < BLK_MIN || b->prev_size % BLK_ALIGN ||
			b->prev_size > off - SPAN_FIRST)
			return false;
		prev = (const struct hpm_blk *)((uintptr_t)b - b->prev_size);
		if (!blk_ok(prev) || !blk_is_free(prev) || blk_size(prev) != b->prev_size ||
			!unlink_ok(h, prev))
			return false;
	}
	return true;
}

/*
 * Where the block at b ends when its header cannot say: at the next header
 * that is valid or whose state byte says a live block starts there (the
 * sentinel at the latest). No valid header is left inside a block.
 */
static struct hpm_blk *
damaged_end(const struct hpm_unit *u, const struct hpm_blk *b)
{
	const struct hpm_blk *end = span_end(u), *c = b;

	for (c = (const struct hpm_blk *)((uintptr_t)b + BLK_ALIGN); c < end;
		c = (const struct hpm_blk *)((uintptr_t)c + BLK_ALIGN))
		if (blk_state(u, c) != HPM_BLK_NONE || blk_ok(c))
			break;
	return (struct hpm_blk *)(uintptr_t)c;
}

/*
 * Rewrite the headers of a span from what is out of band where they are
 * damaged: a block's start from the chain of sizes, its end from
 * damaged_end(), whether it is free from its state byte; free neighbours
 * merge. The free lists are rebuilt after. The number of damaged headers.
 */
static unsigned int
span_repair(struct hpm_unit *u)
{
	struct hpm_blk *b = span_first(u), *end = span_end(u), *prev = NULL;
	unsigned int damaged = 0;

	while (b < end) {
		size_t off = (uintptr_t)b - (uintptr_t)u->va, size, flags;
		bool is_free = blk_state(u, b) == HPM_BLK_NONE;

		if (blk_ok(b) && blk_size(b) >= BLK_MIN &&
			off + blk_size(b) <= HPM_UNIT_SIZE - BLK_HDR) {
			size = blk_size(b);
			if (blk_is_free(b) != is_free) {
				report(blk_payload(b), "block header and state disagree");
				damaged++;
			}
		} else {
			size = (uintptr_t)damaged_end(u, b) - (uintptr_t)b;
			report(blk_payload(b), WHY_HEADER);
			damaged++;
		}
		if (is_free && prev != NULL && blk_is_free(prev)) {
			/* two free blocks in a row: one */
			blk_set(prev,
				(blk_size(prev) + size) | (blk_word(prev) & BLK_PREV_FREE) |
					BLK_FREE);
			blk_kill(b);
		} else {
			flags = is_free ? BLK_FREE : 0;
			if (prev != NULL && blk_is_free(prev)) {
				flags |= BLK_PREV_FREE;
				b->prev_size = blk_size(prev);
			}
			if (!blk_ok(b) || blk_word(b) != (size | flags))
				blk_set(b, size | flags);
			prev = b;
		}
		b = (struct hpm_blk *)((uintptr_t)b + size);
	}
	blk_open(end);
	if (!blk_ok(end) || blk_size(end) != 0) {
		report(blk_payload(end),
			"span sentinel overwritten (a write past the span's last block)");
		damaged++;
		blk_set(end, 0);
	}
	if (prev != NULL && blk_is_free(prev)) {
		end->prev_size = blk_size(prev);
		if (!blk_prev_is_free(end))
			blk_set(end, BLK_PREV_FREE);
	} else if (blk_prev_is_free(end)) {
		blk_set(end, 0);
	}
	return damaged;
}

static void span_release(struct hpm_heap *h, struct hpm_unit *u, struct hpm_blk *b);

/*
 * Repair every span and rebuild the free lists from them (arena lock held):
 * after damage was seen, before anything else is changed. The number of
 * damaged headers.
 */
static unsigned int
heap_fix(struct hpm_heap *h)
{
	unsigned int damaged = 0, i, last = list_index(SPAN_BLOCK_MAX);
	struct hpm_chunk *c;
	struct hpm_blk *b, *next;

	for (c = h->cs->chunks; c != NULL; c = c->next)
		for (i = 0; i < c->nunits; i++)
			if (c->units[i].role == HPM_UNIT_SPAN)
				damaged += span_repair(&c->units[i]);
	memset(h->lists, 0, sizeof(h->lists));
	memset(h->list_map, 0, sizeof(h->list_map));
	h->range_map = 0;
	h->nempty = 0;
	for (c = h->cs->chunks; c != NULL; c = c->next)
		for (i = 0; i < c->nunits; i++) {
			struct hpm_unit *u = &c->units[i];

			if (u->role != HPM_UNIT_SPAN)
				continue;
			for (b = span_first(u); b < span_end(u); b = blk_next(b))
				if (blk_is_free(b)) {
					list_insert(h, b);
					h->nempty += blk_size(b) == SPAN_BLOCK_MAX;
				}
		}
	/* a span the repair emptied: one empty span at most */
	for (b = h->lists[last]; b != NULL && h->nempty > 1; b = next) {
		next = b->next_free;
		if (blk_size(b) == SPAN_BLOCK_MAX)
			span_release(h, hpm_pagemap_lookup(h->cs->pagemap, b), b);
	}
	if (damaged == 0)
		report(NULL, "free list links overwritten: lists rebuilt");
	h->repaired += damaged;
	HPM_LOG(WARNING, "heap: %u damaged block header(s) repaired, free lists rebuilt", damaged);
	return damaged;
}

/* A free block that fits; NULL if none, or with *damaged set if damage was met. */
static struct hpm_blk *
find_block(const struct hpm_heap *h, size_t need, size_t align, bool *damaged)
{
	struct hpm_blk *b = h->lists[list_index(need)];
	unsigned int seen;

	/* a few blocks of the request's own list: the best fits */
	for (seen = 0; b != NULL && seen < SEARCH_BOUND; b = b->next_free, seen++) {
		if (!blk_ok(b) || !blk_is_free(b))
			goto damaged;
		if (blk_size(b) >= need + blk_pad(b, align))
			goto found;
	}
	/* any block of this list fits, whatever its alignment */
	b = first_nonempty(h, list_index_fit(need + align - BLK_ALIGN));
	if (b == NULL)
		return NULL;
found:
	if (around_ok(h, b, true))
		return b;
damaged:
	*damaged = true;
	return NULL;
}

/* find_block(), the heap repaired first if it met damage. */
static struct hpm_blk *
take_block(struct hpm_heap *h, size_t need, size_t align)
{
	bool damaged = false;
	struct hpm_blk *b = find_block(h, need, align, &damaged);

	if (likely(!damaged))
		return b;
	heap_fix(h);
	damaged = false;
	b = find_block(h, need, align, &damaged);
	if (damaged) {
		HPM_LOG(ERR, "heap: damage left after a repair");
		return NULL;
	}
	return b;
}

static void
set_prev_free(struct hpm_blk *next, const struct hpm_blk *b)
{
	blk_open(next);
	next->prev_size = blk_size(b);
	blk_set(next, blk_word(next) | BLK_PREV_FREE);
}

static void
clear_prev_free(struct hpm_blk *next)
{
	blk_open(next);
	blk_set(next, blk_word(next) & ~(size_t)BLK_PREV_FREE);
}

static int
span_new(struct hpm_heap *h)
{
	struct hpm_unit *u = hpm_chunk_take(h->cs, 1, 1, false, HPM_UNIT_SPAN, false);
	struct hpm_blk *b, *end;
	struct hpm_span *s;

	if (u == NULL)
		return -ENOMEM;
	/*
	 * No block fitted, so no span was empty; but to grow, the chunk set may
	 * have taken the caches' blocks back first, and that may have emptied
	 * one: use it, and keep the heap to one empty span.
	 */
	if (h->nempty > 0) {
		hpm_chunk_give(h->cs, u, 1);
		return 0;
	}
	s = hpm_meta_alloc(h->cs->meta, hpm_src, sizeof(*s));
	if (s == NULL) {
		hpm_chunk_give(h->cs, u, 1);
		return -ENOMEM;
	}
	u->span = s;
	u->state = s->state;
	u->shift = 6;
	u->start_mask = hpm_unit_start_mask(6);
	u->role = HPM_UNIT_SPAN;
	b = span_first(u);
	end = span_end(u);
	blk_open(b);
	blk_open(end);
	b->prev_size = 0;
	blk_set(b, SPAN_BLOCK_MAX | BLK_FREE);
	blk_set(end, 0);
	set_prev_free(end, b);
	list_insert(h, b);
	h->nspans++;
	h->nempty++;
	return 0;
}

static void
span_release(struct hpm_heap *h, struct hpm_unit *u, struct hpm_blk *b)
{
	list_remove(h, b);
	h->nspans--;
	h->nempty--;
	u->dirty = 1;
	/* no valid header outlives the span: the unit's next span starts clean */
	blk_kill(b);
	blk_kill(span_end(u));
	hpm_meta_free(h->cs->meta, hpm_src, u->span, sizeof(struct hpm_span));
	u->span = NULL;
	hpm_unit_no_blocks(u);
	hpm_chunk_give(h->cs, u, 1);
}

/*
 * Cut b (allocated, no flags but PREV_FREE) to size; the rest becomes free.
 * The block above b and, if free, the one above it were checked.
 */
static void
split_tail(struct hpm_heap *h, struct hpm_blk *b, size_t size)
{
	size_t rest = blk_size(b) - size;
	struct hpm_blk *tail, *next;

	HPM_ASSERT(size >= BLK_MIN && size % BLK_ALIGN == 0 && size <= blk_size(b));
	if (rest < BLK_MIN)
		return;
	next = blk_next(b);
	blk_set(b, size | (blk_word(b) & BLK_PREV_FREE));
	tail = blk_next(b);
	blk_open(tail);
	if (blk_is_free(next)) {
		list_remove(h, next);
		rest += blk_size(next);
		blk_kill(next);
		next = (struct hpm_blk *)((uintptr_t)tail + rest);
	}
	blk_set(tail, rest | BLK_FREE);
	list_insert(h, tail);
	set_prev_free(next, tail);
}

void *
hpm_heap_alloc(struct hpm_heap *h, size_t size, size_t align, struct hpm_blockinfo *bi)
{
	size_t need = RTE_MAX(RTE_ALIGN_CEIL(size + BLK_HDR, BLK_ALIGN), (size_t)BLK_MIN);
	struct hpm_blk *b;
	struct hpm_unit *u;
	size_t pad;

	b = take_block(h, need, align);
	if (b == NULL) {
		if (need + align - BLK_ALIGN > SPAN_BLOCK_MAX || span_new(h) != 0)
			return NULL;
		b = take_block(h, need, align);
		if (b == NULL)
			return NULL;
	}
	list_remove(h, b);
	if (blk_size(b) == SPAN_BLOCK_MAX)
		h->nempty--;
	pad = blk_pad(b, align);
	if (pad != 0) {
		/* the padding stays a free block below the aligned one */
		struct hpm_blk *front = b;

		b = (struct hpm_blk *)((uintptr_t)front + pad);
		blk_open(b);
		blk_set(b, blk_size(front) - pad);
		blk_set(front, pad | BLK_FREE | (blk_word(front) & BLK_PREV_FREE));
		list_insert(h, front);
		set_prev_free(b, front);
	}
	blk_set(b, blk_word(b) & ~(size_t)BLK_FREE);
	split_tail(h, b, need);
	clear_prev_free(blk_next(b));
	u = hpm_pagemap_lookup(h->cs->pagemap, b);
	*hpm_heap_state(u, blk_payload(b)) = HPM_BLK_USER;
	bi->bytes = blk_size(b);
	bi->dirty = true;
	return blk_payload(b);
}

unsigned int
hpm_heap_release_spares(struct hpm_heap *h)
{
	unsigned int i = list_index(SPAN_BLOCK_MAX), released = 0;
	struct hpm_blk *b, *next;

again:
	/* empty spans are the blocks of the largest size */
	for (b = h->lists[i]; b != NULL && h->nempty > 0; b = next) {
		if (!blk_ok(b) || !blk_is_free(b) ||
			(blk_size(b) == SPAN_BLOCK_MAX && !unlink_ok(h, b))) {
			heap_fix(h);
			goto again;
		}
		next = b->next_free;
		if (blk_size(b) == SPAN_BLOCK_MAX) {
			span_release(h, hpm_pagemap_lookup(h->cs->pagemap, b), b);
			released++;
		}
	}
	return released;
}

/* Payloads whose state bytes share a cache line: 64 slots of 64 bytes. */
#define CARVE_LINE (RTE_CACHE_LINE_SIZE * BLK_ALIGN)

/* Offset of a block's payload in its span. */
static inline size_t
payload_off(const struct hpm_unit *u, const struct hpm_blk *b)
{
	return (const uint8_t *)blk_payload(b) - u->va;
}

unsigned int
hpm_heap_carve(struct hpm_heap *h, size_t block_size, void **objs, uint8_t **states, unsigned int n)
{
	struct hpm_blk *b, *blk = NULL;
	size_t total, prev_flag, head;
	struct hpm_unit *u;
	unsigned int i, m;

	b = take_block(h, block_size * n, BLK_ALIGN);
	if (b == NULL)
		b = take_block(h, block_size, BLK_ALIGN);
	if (b == NULL) {
		if (span_new(h) != 0)
			return 0;
		b = take_block(h, block_size * n, BLK_ALIGN);
		if (b == NULL)
			b = take_block(h, block_size, BLK_ALIGN);
		if (b == NULL)
			return 0;
	}
	list_remove(h, b);
	total = blk_size(b);
	if (total == SPAN_BLOCK_MAX)
		h->nempty--;
	prev_flag = blk_word(b) & BLK_PREV_FREE;
	u = hpm_pagemap_lookup(h->cs->pagemap, b);
	/*
	 * A batch starts on a line of state bytes of its own (64 of them: 4 KiB
	 * of payloads) when that costs little: the cache fast path writes the
	 * state bytes of the blocks it holds, and two lcores writing one line
	 * share it (2 KiB blocks on two lcores: 1.5x one lcore, not 2x). The
	 * head left before the batch stays a free block.
	 */
	head = RTE_ALIGN_CEIL(payload_off(u, b), CARVE_LINE) - payload_off(u, b);
	if (n > 1 && head != 0 && head * 4 <= block_size * n && head + block_size * n <= total) {
		blk_set(b, head | BLK_FREE | prev_flag);
		list_insert(h, b);
		b = (struct hpm_blk *)((uintptr_t)b + head);
		blk_open(b);
		b->prev_size = head;
		prev_flag = BLK_PREV_FREE;
		total -= head;
	}
	m = RTE_MIN((size_t)n, total / block_size);
	for (i = 0; i < m; i++) {
		blk = (struct hpm_blk *)((uintptr_t)b + i * block_size);
		blk_open(blk);
		blk_set(blk, block_size | (i == 0 ? prev_flag : 0));
		objs[i] = blk_payload(blk);
		states[i] = hpm_heap_state(u, objs[i]);
		*states[i] = HPM_BLK_CACHED;
	}
	total -= m * block_size;
	if (total != 0) {
		struct hpm_blk *tail = blk_next(blk);

		blk_open(tail);
		blk_set(tail, total | BLK_FREE);
		list_insert(h, tail);
		set_prev_free(blk_next(tail), tail);
	} else {
		clear_prev_free(blk_next(blk));
	}
	return m;
}

/* The block at p if its state is one of want (a mask of 1 << state), else NULL. */
static struct hpm_blk *
live_block(const struct hpm_unit *u, const void *p, unsigned int want)
{
	const uint8_t *state = hpm_heap_state(u, p);

	if (state == NULL || !((1u << hpm_blk_kind(*state)) & want) || *state == HPM_BLK_NONE)
		return NULL;
	return blk_of(p);
}

#define HELD_BY_USER (1u << HPM_BLK_USER)
#define HELD_BY_ANYONE ((1u << HPM_BLK_USER) | (1u << HPM_BLK_CACHED))

int
hpm_heap_free(struct hpm_heap *h, struct hpm_unit *u, void *p, size_t *bytes)
{
	struct hpm_blk *b = live_block(u, p, HELD_BY_ANYONE), *next;
	size_t size, word;

	if (b == NULL)
		return -EINVAL;
	/* the headers this free trusts, checked first: an overflow may have reached them */
	if (unlikely(!around_ok(h, b, false))) {
		heap_fix(h);
		if (!around_ok(h, b, false)) {
			HPM_LOG(ERR, "heap: block %p: damage left after a repair", p);
			return -EINVAL;
		}
	}
	*hpm_heap_state(u, p) = HPM_BLK_NONE;
	size = blk_size(b);
	word = blk_word(b);
	*bytes = size;
	next = blk_next(b);
	if (blk_is_free(next)) {
		list_remove(h, next);
		size += blk_size(next);
		blk_kill(next);
	}
	if (word & BLK_PREV_FREE) {
		struct hpm_blk *prev = (struct hpm_blk *)((uintptr_t)b - b->prev_size);

		list_remove(h, prev);
		size += blk_size(prev);
		blk_kill(b);
		b = prev;
		word = blk_word(prev);
	}
	blk_set(b, size | (word & BLK_PREV_FREE) | BLK_FREE);
	list_insert(h, b);
	set_prev_free(blk_next(b), b);
	if (blk_size(b) == SPAN_BLOCK_MAX && ++h->nempty > 1)
		span_release(h, u, b);
	return 0;
}

size_t
hpm_heap_block_size(const struct hpm_unit *u, const void *p)
{
	const struct hpm_blk *b = live_block(u, p, HELD_BY_USER);

	if (b == NULL)
		return 0;
	/* the block is sound, its header is not: told, and its true size (repaired at its free) */
	if (unlikely(!blk_ok(b))) {
		report(p, WHY_HEADER);
		return (uintptr_t)damaged_end(u, b) - (uintptr_t)b;
	}
	return blk_size(b);
}

size_t
hpm_heap_header_size(const void *p)
{
	return hpm_heap_word_size(__atomic_load_n(&blk_of(p)->size, __ATOMIC_RELAXED), p);
}

size_t
hpm_heap_usable(const struct hpm_unit *u, const void *p)
{
	size_t size = hpm_heap_block_size(u, p);

	return size == 0 ? 0 : size - BLK_HDR;
}

int
hpm_heap_resize(struct hpm_heap *h, struct hpm_unit *u, void *p, size_t size,
	struct hpm_blockinfo *bi)
{
	struct hpm_blk *b = live_block(u, p, HELD_BY_USER), *next;
	size_t need;

	if (b == NULL || size > HPM_HEAP_MAX)
		return -1;
	if (unlikely(!around_ok(h, b, false))) {
		heap_fix(h);
		if (!around_ok(h, b, false))
			return -1;
	}
	need = RTE_MAX(RTE_ALIGN_CEIL(size + BLK_HDR, BLK_ALIGN), (size_t)BLK_MIN);
	next = blk_next(b);
	if (need > blk_size(b)) {
		if (!blk_is_free(next) || blk_size(b) + blk_size(next) < need)
			return -1;
		list_remove(h, next);
		blk_set(b, (blk_size(b) + blk_size(next)) | (blk_word(b) & BLK_PREV_FREE));
		blk_kill(next);
		clear_prev_free(blk_next(b));
	}
	split_tail(h, b, need);
	bi->bytes = blk_size(b);
	bi->dirty = true;
	return 0;
}

void
hpm_heap_free_ranges(const struct hpm_heap *h, unsigned int *count, size_t *longest, size_t *bytes)
{
	const struct hpm_blk *b;
	unsigned int i;

	/* as far as the links can be trusted */
	for (i = 0; i < HPM_HEAP_LISTS; i++)
		for (b = h->lists[i]; b != NULL && blk_ok(b); b = b->next_free) {
			(*count)++;
			*longest = RTE_MAX(*longest, blk_size(b) - BLK_HDR);
			*bytes += blk_size(b);
		}
}

static bool
listed(const struct hpm_heap *h, const struct hpm_blk *b)
{
	const struct hpm_blk *l;

	for (l = h->lists[list_index(blk_size(b))]; l != NULL && blk_ok(l); l = l->next_free)
		if (l == b)
			return true;
	return false;
}

static unsigned int
check_span(const struct hpm_heap *h, const struct hpm_unit *u, size_t *live_bytes,
	uint64_t *live_count, unsigned int *free_blocks)
{
	const struct hpm_blk *b = span_first(u), *end = span_end(u);
	bool prev_free = false;
	size_t prev_size = 0;
	unsigned int bad = 0;

	while (b < end) {
		bool live = blk_state(u, b) != HPM_BLK_NONE;
		size_t size = blk_size(b);
		bool is_free = blk_is_free(b);

		if (!blk_ok(b)) {
			/* told, then stepped over: it ends where the next block starts */
			const struct hpm_blk *e = damaged_end(u, b);

			HPM_LOG(ERR,
				"check: span %p: block %p (%s): header overwritten (a write "
				"past the end of the block below?); it ends at %p",
				u->va, blk_payload(b), live ? "live" : "free", blk_payload(e));
			bad++;
			size = (uintptr_t)e - (uintptr_t)b;
			is_free = !live;
		} else {
			if (size < BLK_MIN || size % BLK_ALIGN ||
				(uintptr_t)b + size > (uintptr_t)end) {
				HPM_LOG(ERR, "check: span %p: block %p has size %zu", u->va, b,
					size);
				return bad + 1;
			}
			if (blk_prev_is_free(b) != prev_free ||
				(prev_free && b->prev_size != prev_size)) {
				HPM_LOG(ERR, "check: span %p: block %p has a wrong boundary tag",
					u->va, b);
				bad++;
			}
			if (is_free && prev_free) {
				HPM_LOG(ERR,
					"check: span %p: free blocks %p and below not coalesced",
					u->va, b);
				bad++;
			}
			if (is_free == live || (is_free && !listed(h, b))) {
				HPM_LOG(ERR, "check: span %p: block %p free %d live %d", u->va, b,
					is_free, live);
				bad++;
			}
		}
		if (is_free) {
			(*free_blocks)++;
		} else {
			*live_bytes += size;
			(*live_count)++;
		}
		prev_free = is_free;
		prev_size = size;
		b = (const struct hpm_blk *)((uintptr_t)b + size);
	}
	if (!blk_ok(end)) {
		HPM_LOG(ERR, "check: span %p: sentinel overwritten (a write past the last block?)",
			u->va);
		bad++;
	} else if (b != end || blk_size(end) != 0 || blk_prev_is_free(end) != prev_free) {
		HPM_LOG(ERR, "check: span %p: blocks do not end at the sentinel", u->va);
		bad++;
	}
	return bad;
}

/* The free list i is sound: valid headers, links that agree; its length in *n. */
static unsigned int
check_list(const struct hpm_heap *h, unsigned int i, unsigned int *n)
{
	const struct hpm_blk *b, *prev = NULL;
	unsigned int bad = 0;

	for (b = h->lists[i]; b != NULL; prev = b, b = b->next_free) {
		if (!blk_ok(b)) {
			HPM_LOG(ERR,
				"check: heap list %u: block %p: header overwritten; the list "
				"is not followed further",
				i, blk_payload(b));
			return bad + 1;
		}
		(*n)++;
		if (!blk_is_free(b) || list_index(blk_size(b)) != i || b->prev_free != prev) {
			HPM_LOG(ERR, "check: heap list %u holds block %p of size %zu", i, b,
				blk_size(b));
			bad++;
		}
	}
	return bad;
}

unsigned int
hpm_heap_verify(const struct hpm_heap *h, size_t *live_bytes, uint64_t *live_count)
{
	unsigned int bad = 0, free_blocks = 0, listed_blocks = 0, spans = 0, empty = 0, i;
	const struct hpm_chunk *c;
	const struct hpm_blk *b;

	for (c = h->cs->chunks; c != NULL; c = c->next)
		for (i = 0; i < c->nunits; i++) {
			const struct hpm_unit *u = &c->units[i];

			if (u->role != HPM_UNIT_SPAN)
				continue;
			spans++;
			b = span_first(u);
			empty += blk_ok(b) && blk_size(b) == SPAN_BLOCK_MAX;
			bad += check_span(h, u, live_bytes, live_count, &free_blocks);
		}
	for (i = 0; i < HPM_HEAP_LISTS; i++) {
		bool mapped = (h->list_map[i / HPM_HEAP_LISTS_PER_RANGE] >>
				      (i % HPM_HEAP_LISTS_PER_RANGE)) &
			1;

		if (mapped != (h->lists[i] != NULL)) {
			HPM_LOG(ERR, "check: heap list %u: bitmap %d", i, mapped);
			bad++;
		}
		bad += check_list(h, i, &listed_blocks);
	}
	for (i = 0; i < HPM_HEAP_RANGES; i++)
		if (!!(h->range_map & (1u << i)) != (h->list_map[i] != 0)) {
			HPM_LOG(ERR, "check: heap range %u: bitmap disagrees", i);
			bad++;
		}
	if (listed_blocks != free_blocks || spans != h->nspans || empty != h->nempty || empty > 1) {
		HPM_LOG(ERR, "check: heap: %u listed / %u free blocks, %u/%u spans, %u/%u empty",
			listed_blocks, free_blocks, spans, h->nspans, empty, h->nempty);
		bad++;
	}
	return bad;
}

/* Every header valid and every free list sound: nothing to repair. */
static bool
heap_sound(const struct hpm_heap *h)
{
	const struct hpm_chunk *c;
	const struct hpm_blk *b;
	unsigned int i;

	for (c = h->cs->chunks; c != NULL; c = c->next)
		for (i = 0; i < c->nunits; i++) {
			const struct hpm_unit *u = &c->units[i];

			if (u->role != HPM_UNIT_SPAN)
				continue;
			for (b = span_first(u); b < span_end(u); b = blk_next(b))
				if (!blk_ok(b) || blk_size(b) < BLK_MIN ||
					(uintptr_t)b + blk_size(b) > (uintptr_t)span_end(u) ||
					blk_is_free(b) != (blk_state(u, b) == HPM_BLK_NONE))
					return false;
			if (b != span_end(u) || !blk_ok(b))
				return false;
		}
	for (i = 0; i < HPM_HEAP_LISTS; i++)
		for (b = h->lists[i]; b != NULL; b = b->next_free)
			if (!blk_ok(b) || !blk_is_free(b) || !unlink_ok(h, b))
				return false;
	return true;
}

unsigned int
hpm_heap_repair(struct hpm_heap *h)
{
	unsigned int n;

	if (heap_sound(h))
		return 0;
	n = heap_fix(h);
	return n != 0 ? n : 1; /* links alone */
}
