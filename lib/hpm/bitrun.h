/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef HPM_BITRUN_H
#define HPM_BITRUN_H

/*
 * Runs of clear bits in a bitmap of 64-bit words (a set bit is a used
 * granule or unit). Searches read one word at a time and jump with
 * count-trailing-zeros, as the NuttX granule search does (seed 000); callers
 * start from their lowest free position, so a search never reads the used
 * prefix again.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_bitops.h>
#include <rte_common.h>

#define HPM_WORD_BITS 64u

static inline uint64_t
hpm_bitrun_mask(unsigned int from, unsigned int n)
{
	return (n >= HPM_WORD_BITS ? ~UINT64_C(0) : ((UINT64_C(1) << n) - 1)) << from;
}

/** Set bits [pos, pos + n). */
static inline void
hpm_bitrun_set(uint64_t *map, unsigned int pos, unsigned int n)
{
	while (n > 0) {
		unsigned int off = pos % HPM_WORD_BITS;
		unsigned int k = RTE_MIN(n, HPM_WORD_BITS - off);

		map[pos / HPM_WORD_BITS] |= hpm_bitrun_mask(off, k);
		pos += k;
		n -= k;
	}
}

/** Clear bits [pos, pos + n). */
static inline void
hpm_bitrun_clear(uint64_t *map, unsigned int pos, unsigned int n)
{
	while (n > 0) {
		unsigned int off = pos % HPM_WORD_BITS;
		unsigned int k = RTE_MIN(n, HPM_WORD_BITS - off);

		map[pos / HPM_WORD_BITS] &= ~hpm_bitrun_mask(off, k);
		pos += k;
		n -= k;
	}
}

static inline bool
hpm_bitrun_test(const uint64_t *map, unsigned int pos)
{
	return (map[pos / HPM_WORD_BITS] >> (pos % HPM_WORD_BITS)) & 1;
}

/**
 * First clear bit at or after from, or -1 when there is none below nbits.
 */
int hpm_bitrun_next_clear(const uint64_t *map, unsigned int nbits, unsigned int from);

/**
 * First set bit in [from, limit), or limit when there is none.
 */
unsigned int hpm_bitrun_next_set(const uint64_t *map, unsigned int from, unsigned int limit);

/** True when every bit of [pos, pos + n) is set. */
bool hpm_bitrun_all_set(const uint64_t *map, unsigned int pos, unsigned int n);

/**
 * Lowest position p >= from of a run of n clear bits inside nbits with
 * (p + phase) a multiple of align (a power of two, phase < align).
 * Callers pass their lowest clear bit as from. Returns -1 when there is none.
 */
int hpm_bitrun_find(const uint64_t *map, unsigned int nbits, unsigned int from, unsigned int n,
	unsigned int align, unsigned int phase);

/**
 * The highest position p of a run of n clear bits below nbits with p a
 * multiple of align, for n < align <= 64 (-1 otherwise, or when there is none).
 */
int hpm_bitrun_find_top(const uint64_t *map, unsigned int nbits, unsigned int n,
	unsigned int align);

/** Last set bit below pos, or -1 when there is none. */
int hpm_bitrun_prev_set(const uint64_t *map, unsigned int pos);

/** Length of the longest run of clear bits below nbits: a few steps per word. */
unsigned int hpm_bitrun_longest_clear(const uint64_t *map, unsigned int nbits);

/** Longest run of set bits in x. */
unsigned int hpm_bitrun_longest_ones(uint64_t x);

/**
 * hpm_bitrun_longest_clear() from each word's longest run of clear bits,
 * kept by the caller in inner[] (hpm_bitrun_longest_ones() of the word's
 * clear bits within nbits): a shift and a count per word, no scan of runs.
 */
unsigned int hpm_bitrun_longest_clear_from(const uint64_t *map, unsigned int nbits,
	const uint8_t *inner);

/** Number of maximal runs of clear bits below nbits. */
unsigned int hpm_bitrun_count_clear_runs(const uint64_t *map, unsigned int nbits);

#endif /* HPM_BITRUN_H */
