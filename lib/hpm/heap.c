/* SPDX-License-Identifier: BSD-3-Clause */

#include <errno.h>
#include <string.h>

#include <rte_bitops.h>

#include "bitrun.h"
#include "check.h"
#include "heap.h"
#include "log.h"
#include "poison.h"

/*
 * Block layout: a 16-byte header just below a 64-byte aligned payload.
 * A span's first header sits at offset 48; a zero-size sentinel header at
 * the span's end stops coalescing.
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
	/** Size of this block (a multiple of 64) and flags. */
	size_t size;
	/* free blocks only: */
	struct hpm_blk *next_free;
	struct hpm_blk *prev_free;
};

void
hpm_heap_init(struct hpm_heap *h, struct hpm_chunk_set *cs)
{
	memset(h, 0, sizeof(*h));
	h->cs = cs;
}

static inline size_t
blk_size(const struct hpm_blk *b)
{
	return b->size & ~(size_t)BLK_FLAGS;
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

/*
 * Headers and free lists live in memory poisoned for memory checkers: this
 * module is built without AddressSanitizer (meson.build), and opens them to
 * valgrind, which sees every access, as it touches them.
 */
static inline void
blk_open(struct hpm_blk *b)
{
#ifdef HPM_VALGRIND
	HPM_UNPOISON(b, sizeof(*b));
#else
	RTE_SET_USED(b);
#endif
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

static struct hpm_blk *
find_block(const struct hpm_heap *h, size_t need, size_t align)
{
	struct hpm_blk *b = h->lists[list_index(need)];
	unsigned int seen;

	/* a few blocks of the request's own list: the best fits */
	for (seen = 0; b != NULL && seen < SEARCH_BOUND; b = b->next_free, seen++)
		if (blk_size(b) >= need + blk_pad(b, align))
			return b;
	/* any block of this list fits, whatever its alignment */
	return first_nonempty(h, list_index_fit(need + align - BLK_ALIGN));
}

/*
 * Flags of a block that may be live: its holder reads its size, without the
 * lock, to free it into a cache; the size does not change, the word is
 * written whole.
 */
static void
set_flags_of_live(struct hpm_blk *b, size_t size)
{
	__atomic_store_n(&b->size, size, __ATOMIC_RELAXED);
}

static void
set_prev_free(struct hpm_blk *next, const struct hpm_blk *b)
{
	blk_open(next);
	next->prev_size = blk_size(b);
	set_flags_of_live(next, next->size | BLK_PREV_FREE);
}

static void
clear_prev_free(struct hpm_blk *next)
{
	blk_open(next);
	set_flags_of_live(next, next->size & ~(size_t)BLK_PREV_FREE);
}

static int
span_new(struct hpm_heap *h)
{
	struct hpm_unit *u = hpm_chunk_take(h->cs, 1, 1, false);
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
	u->start_mask = 63;
	u->role = HPM_UNIT_SPAN;
	b = (struct hpm_blk *)(u->va + SPAN_FIRST);
	blk_open(b);
	blk_open((struct hpm_blk *)(u->va + HPM_UNIT_SIZE - BLK_HDR));
	b->prev_size = 0;
	b->size = SPAN_BLOCK_MAX | BLK_FREE;
	end = blk_next(b);
	end->size = 0;
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
	hpm_meta_free(h->cs->meta, hpm_src, u->span, sizeof(struct hpm_span));
	u->span = NULL;
	hpm_unit_no_blocks(u);
	hpm_chunk_give(h->cs, u, 1);
}

/* Cut b (allocated, no flags but PREV_FREE) to size; the rest becomes free. */
static void
split_tail(struct hpm_heap *h, struct hpm_blk *b, size_t size)
{
	size_t rest = blk_size(b) - size;
	struct hpm_blk *tail, *next;

	HPM_ASSERT(size >= BLK_MIN && size % BLK_ALIGN == 0 && size <= blk_size(b));
	if (rest < BLK_MIN)
		return;
	b->size = size | (b->size & BLK_PREV_FREE);
	tail = blk_next(b);
	blk_open(tail);
	tail->size = rest | BLK_FREE;
	next = blk_next(tail);
	if (next->size & BLK_FREE) {
		list_remove(h, next);
		tail->size += blk_size(next);
		next = blk_next(tail);
	}
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

	b = find_block(h, need, align);
	if (b == NULL) {
		if (need + align - BLK_ALIGN > SPAN_BLOCK_MAX || span_new(h) != 0)
			return NULL;
		b = find_block(h, need, align);
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
		b->size = blk_size(front) - pad;
		front->size = pad | BLK_FREE | (front->size & BLK_PREV_FREE);
		list_insert(h, front);
		set_prev_free(b, front);
	}
	b->size &= ~(size_t)BLK_FREE;
	split_tail(h, b, need);
	clear_prev_free(blk_next(b));
	u = hpm_pagemap_lookup(h->cs->pagemap, b);
	*hpm_heap_state(u, blk_payload(b)) = HPM_BLK_USER;
	bi->bytes = blk_size(b);
	bi->dirty = true;
	return blk_payload(b);
}

void
hpm_heap_release_spares(struct hpm_heap *h)
{
	unsigned int i = list_index(SPAN_BLOCK_MAX);
	struct hpm_blk *b, *next;

	/* empty spans are the blocks of the largest size */
	for (b = h->lists[i]; b != NULL && h->nempty > 0; b = next) {
		next = b->next_free;
		if (blk_size(b) == SPAN_BLOCK_MAX)
			span_release(h, hpm_pagemap_lookup(h->cs->pagemap, b), b);
	}
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

	b = find_block(h, block_size * n, BLK_ALIGN);
	if (b == NULL)
		b = find_block(h, block_size, BLK_ALIGN);
	if (b == NULL) {
		if (span_new(h) != 0)
			return 0;
		b = find_block(h, block_size * n, BLK_ALIGN);
		if (b == NULL)
			b = find_block(h, block_size, BLK_ALIGN);
	}
	list_remove(h, b);
	total = blk_size(b);
	if (total == SPAN_BLOCK_MAX)
		h->nempty--;
	prev_flag = b->size & BLK_PREV_FREE;
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
		b->size = head | BLK_FREE | prev_flag;
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
		blk->size = block_size | (i == 0 ? prev_flag : 0);
		objs[i] = blk_payload(blk);
		states[i] = hpm_heap_state(u, objs[i]);
		*states[i] = HPM_BLK_CACHED;
	}
	total -= m * block_size;
	if (total != 0) {
		struct hpm_blk *tail = blk_next(blk);

		blk_open(tail);
		tail->size = total | BLK_FREE;
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

	if (b == NULL)
		return -EINVAL;
	*hpm_heap_state(u, p) = HPM_BLK_NONE;
	*bytes = blk_size(b);
	b->size |= BLK_FREE;
	next = blk_next(b);
	if (next->size & BLK_FREE) {
		list_remove(h, next);
		b->size += blk_size(next);
	}
	if (b->size & BLK_PREV_FREE) {
		struct hpm_blk *prev = (struct hpm_blk *)((uintptr_t)b - b->prev_size);

		list_remove(h, prev);
		prev->size += blk_size(b);
		b = prev;
	}
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

	return b == NULL ? 0 : blk_size(b);
}

size_t
hpm_heap_header_size(const void *p)
{
	return __atomic_load_n(&blk_of(p)->size, __ATOMIC_RELAXED) & ~(size_t)BLK_FLAGS;
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
	need = RTE_MAX(RTE_ALIGN_CEIL(size + BLK_HDR, BLK_ALIGN), (size_t)BLK_MIN);
	next = blk_next(b);
	if (need > blk_size(b)) {
		if (!(next->size & BLK_FREE) || blk_size(b) + blk_size(next) < need)
			return -1;
		list_remove(h, next);
		b->size += blk_size(next);
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

	for (i = 0; i < HPM_HEAP_LISTS; i++)
		for (b = h->lists[i]; b != NULL; b = b->next_free) {
			(*count)++;
			*longest = RTE_MAX(*longest, blk_size(b) - BLK_HDR);
			*bytes += blk_size(b);
		}
}

static bool
listed(const struct hpm_heap *h, const struct hpm_blk *b)
{
	const struct hpm_blk *l;

	for (l = h->lists[list_index(blk_size(b))]; l != NULL; l = l->next_free)
		if (l == b)
			return true;
	return false;
}

static unsigned int
check_span(const struct hpm_heap *h, const struct hpm_unit *u, size_t *live_bytes,
	uint64_t *live_count, unsigned int *free_blocks)
{
	const struct hpm_blk *b = (const struct hpm_blk *)(u->va + SPAN_FIRST);
	const struct hpm_blk *end = (const struct hpm_blk *)(u->va + HPM_UNIT_SIZE - BLK_HDR);
	bool prev_free = false;
	size_t prev_size = 0;
	unsigned int bad = 0;

	while (b < end) {
		size_t size = blk_size(b);
		bool is_free = b->size & BLK_FREE;
		bool live = *hpm_heap_state(u, blk_payload(b)) != HPM_BLK_NONE;

		if (size < BLK_MIN || size % BLK_ALIGN || (uintptr_t)b + size > (uintptr_t)end) {
			HPM_LOG(ERR, "check: span %p: block %p has size %zu", u->va, b, size);
			return bad + 1;
		}
		if (!!(b->size & BLK_PREV_FREE) != prev_free ||
			(prev_free && b->prev_size != prev_size)) {
			HPM_LOG(ERR, "check: span %p: block %p has a wrong boundary tag", u->va, b);
			bad++;
		}
		if (is_free && prev_free) {
			HPM_LOG(ERR, "check: span %p: free blocks %p and below not coalesced",
				u->va, b);
			bad++;
		}
		if (is_free == live || (is_free && !listed(h, b))) {
			HPM_LOG(ERR, "check: span %p: block %p free %d live %d", u->va, b, is_free,
				live);
			bad++;
		}
		if (is_free) {
			(*free_blocks)++;
		} else {
			*live_bytes += size;
			(*live_count)++;
		}
		prev_free = is_free;
		prev_size = size;
		b = blk_next(b);
	}
	if (b != end || blk_size(end) != 0 || !!(end->size & BLK_PREV_FREE) != prev_free) {
		HPM_LOG(ERR, "check: span %p: blocks do not end at the sentinel", u->va);
		bad++;
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
			b = (const struct hpm_blk *)(u->va + SPAN_FIRST);
			empty += blk_size(b) == SPAN_BLOCK_MAX;
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
		for (b = h->lists[i]; b != NULL; b = b->next_free) {
			listed_blocks++;
			if (!(b->size & BLK_FREE) || list_index(blk_size(b)) != i) {
				HPM_LOG(ERR, "check: heap list %u holds block %p of size %zu", i, b,
					blk_size(b));
				bad++;
			}
		}
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
