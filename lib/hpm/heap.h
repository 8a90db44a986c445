/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef HPM_HEAP_H
#define HPM_HEAP_H

/*
 * The heap (seed 004): boundary-tag blocks on spans of one unit. Free lists
 * are indexed by the half-open ranges [2^k, 2^(k+2)), each split TLSF-style
 * into 16 lists (8 per power of two); a bitmap of non-empty ranges and one of
 * non-empty lists inside each range find a usable list with two
 * count-trailing-zeros. A request first looks at a few blocks of its own
 * list, then takes the head of the first non-empty list whose every block
 * fits. Blocks are 64-byte multiples with a 16-byte header just below a
 * 64-byte aligned payload; a bitmap per span marks live payloads, so a free
 * of anything else is caught.
 *
 * A write of up to 64 bytes past a block reaches the next block's header
 * (and its free-list links, when it is free). So a header's size word
 * carries a tag in its high half, made of its low half (size and flags), of
 * the block's address and of a secret key per heap state (hpm_heap_tag()). Whoever trusts a header
 * checks its tag first: the cache's free path (hpm_heap_word_size()), a free, a merge with a
 * neighbour, a walk of a free list, the check. A damaged header is reported (hpm_heap_report) and
 * repaired from what is out of band: a block ends where the next valid header or live state byte is
 * (headers a merge absorbs are killed), it is free when its state byte says so; then the free lists
 * are rebuilt from the spans.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "chunk.h"
#include "unit.h"

#define HPM_HEAP_RANGES 8
#define HPM_HEAP_LISTS_PER_RANGE 16
#define HPM_HEAP_LISTS (HPM_HEAP_RANGES * HPM_HEAP_LISTS_PER_RANGE)
/** Largest request the heap serves; larger ones go to granule pages. */
#define HPM_HEAP_MAX (UINT64_C(256) << 10)

struct hpm_blk;

struct hpm_heap {
	/** The chunk set the spans come from. */
	struct hpm_chunk_set *cs;
	/** Bit k: a list of range [2^(6+2k), 2^(8+2k)) is not empty. */
	uint32_t range_map;
	uint16_t list_map[HPM_HEAP_RANGES];
	struct hpm_blk *lists[HPM_HEAP_LISTS];
	uint32_t nspans;
	/** Spans with no live block; one is kept, more go back to the chunk. */
	uint32_t nempty;
	/** Damaged headers found and repaired. */
	uint64_t repaired;
	/** Key of the header tags (hpm_heap_key in every process that uses the heap). */
	uint64_t key;
};

/**
 * Key of the header tags of this process's heaps; never 0 once a heap is set
 * up. A process that attaches to another's heap takes it (hpm_heap_attach()).
 */
extern uint64_t hpm_heap_key __attribute__((visibility("hidden"))); /* one load, no GOT */

/**
 * Where damage found in a header is told (the layer above sets it: a
 * function of this process, not of the shared heap); NULL: only logged.
 */
extern void (*hpm_heap_report)(const void *p, const char *op, const char *why);

/**
 * Tag of a header word whose low half is low, of the block whose payload is
 * at p: the low half of the payload's address xor the key xor the low half.
 * A change of the low half alone always shows, a header copied to another
 * address (less than 4 GiB away) never is valid, and a word written over it
 * whole (zeros, a pattern, data) is valid with a chance of 2^-32. Against
 * overflows, not against a program that reads headers to forge them: no
 * multiplication, the cache's free path pays a few instructions for it.
 */
static inline uint32_t
hpm_heap_tag(const void *p, uint32_t low)
{
	return (uint32_t)(uintptr_t)p ^ (uint32_t)hpm_heap_key ^ low;
}

/**
 * Block size in the header word w read at p - 8 (p a payload), or 0 when
 * the word's tag is wrong: the header was overwritten.
 */
static inline size_t
hpm_heap_word_size(uint64_t w, const void *p)
{
	uint32_t low = (uint32_t)w;

	return (uint32_t)(w >> 32) == hpm_heap_tag(p, low) ? low & ~(uint32_t)63 : 0;
}

/** Block states of a span: one byte per 64-byte slot (enum hpm_blk_state). */
struct hpm_span {
	uint8_t state[HPM_UNIT_SIZE / 64];
};

/** State byte of the block whose payload is at p, or NULL if none can start there. */
static inline uint8_t *
hpm_heap_state(const struct hpm_unit *u, const void *p)
{
	size_t off = (const uint8_t *)p - u->va;

	return (off & 63) == 0 ? &u->span->state[off >> 6] : NULL;
}

/** Set up an empty heap on a chunk set (keyed with hpm_heap_key, made if 0). */
void hpm_heap_init(struct hpm_heap *h, struct hpm_chunk_set *cs);

/** A new hpm_heap_key, for the heaps set up next (a new heap state). */
void hpm_heap_rekey(void);

/** This process uses the heap h another process set up: its key. */
void hpm_heap_attach(const struct hpm_heap *h);

/**
 * Find and repair damaged headers and free lists (each reported); the number
 * of damaged blocks found (1 for free-list links alone), 0 if none. Arena
 * lock held.
 */
unsigned int hpm_heap_repair(struct hpm_heap *h);

/** Allocate size bytes aligned to align (a power of two >= 64). Arena lock held. */
void *hpm_heap_alloc(struct hpm_heap *h, size_t size, size_t align, struct hpm_blockinfo *bi);

/**
 * Cut up to n blocks of block_size bytes (a multiple of 64) from one free
 * block, for a per-lcore cache; their payloads go to objs, their state bytes
 * (HPM_BLK_CACHED) to states. The number cut. Arena lock held.
 */
unsigned int hpm_heap_carve(struct hpm_heap *h, size_t block_size, void **objs, uint8_t **states,
	unsigned int n);

/** Free the block at p (a user's or a cache's); -EINVAL if p is not one. Arena lock held. */
int hpm_heap_free(struct hpm_heap *h, struct hpm_unit *u, void *p, size_t *bytes);

/**
 * Size in a block's header, 0 if the header is damaged (the caller holds the
 * block; memory checkers do not look into this module).
 */
size_t hpm_heap_header_size(const void *p);

/** Usable bytes of the block at p held by the application, 0 if none. */
size_t hpm_heap_usable(const struct hpm_unit *u, const void *p);

/**
 * Bytes (header and rounding included) of the block at p held by the
 * application, 0 if none. A damaged header is reported, and the size found
 * from what follows the block (its free repairs the header). Lock held.
 */
size_t hpm_heap_block_size(const struct hpm_unit *u, const void *p);

/** Resize the application's block at p in place; 0, or -1 if it cannot. Arena lock held. */
int hpm_heap_resize(struct hpm_heap *h, struct hpm_unit *u, void *p, size_t size,
	struct hpm_blockinfo *bi);

/** Give the empty spans kept for reuse back to their chunks: how many. Arena lock held. */
unsigned int hpm_heap_release_spares(struct hpm_heap *h);

/** Free blocks of the arena: count, the largest and the total in bytes. */
void hpm_heap_free_ranges(const struct hpm_heap *h, unsigned int *count, size_t *longest,
	size_t *bytes);

/**
 * Walk and check every span and list; returns the number of problems
 * (logged). Damaged headers are reported, not repaired, and the walk goes on.
 */
unsigned int hpm_heap_verify(const struct hpm_heap *h, size_t *live_bytes, uint64_t *live_count);

#endif /* HPM_HEAP_H */
