/* SPDX-License-Identifier: BSD-3-Clause */

#include "bitrun.h"

int
hpm_bitrun_next_clear(const uint64_t *map, unsigned int nbits, unsigned int from)
{
	unsigned int w = from / HPM_WORD_BITS;
	uint64_t free_bits;
	unsigned int pos;

	if (from >= nbits)
		return -1;
	free_bits = ~map[w] & (~UINT64_C(0) << (from % HPM_WORD_BITS));
	while (free_bits == 0) {
		if (++w * HPM_WORD_BITS >= nbits)
			return -1;
		free_bits = ~map[w];
	}
	pos = w * HPM_WORD_BITS + rte_bsf64(free_bits);
	return pos < nbits ? (int)pos : -1;
}

unsigned int
hpm_bitrun_next_set(const uint64_t *map, unsigned int from, unsigned int limit)
{
	unsigned int w = from / HPM_WORD_BITS;
	uint64_t used_bits;
	unsigned int pos;

	if (from >= limit)
		return limit;
	used_bits = map[w] & (~UINT64_C(0) << (from % HPM_WORD_BITS));
	while (used_bits == 0) {
		if (++w * HPM_WORD_BITS >= limit)
			return limit;
		used_bits = map[w];
	}
	pos = w * HPM_WORD_BITS + rte_bsf64(used_bits);
	return RTE_MIN(pos, limit);
}

bool
hpm_bitrun_all_set(const uint64_t *map, unsigned int pos, unsigned int n)
{
	while (n > 0) {
		unsigned int off = pos % HPM_WORD_BITS;
		unsigned int k = RTE_MIN(n, HPM_WORD_BITS - off);
		uint64_t mask = hpm_bitrun_mask(off, k);

		if ((map[pos / HPM_WORD_BITS] & mask) != mask)
			return false;
		pos += k;
		n -= k;
	}
	return true;
}

/* Clear bits of word w as set bits, those at nbits and past it cleared. */
static uint64_t
free_word(const uint64_t *map, unsigned int nbits, unsigned int w)
{
	unsigned int first = w * HPM_WORD_BITS;

	if (first >= nbits)
		return 0;
	return ~map[w] & hpm_bitrun_mask(0, RTE_MIN(nbits - first, HPM_WORD_BITS));
}

/*
 * Runs of up to a word, at alignments of up to a word: every start of a run
 * of n clear bits in a word at once, from the word and the next (a run may
 * cross into it), by halving shifts (log2 n of them), then the alignment's
 * positions. A fragmented page costs a few instructions per word, not a
 * look at each free run.
 */
static int
find_in_words(const uint64_t *map, unsigned int nbits, unsigned int from, unsigned int n,
	unsigned int align, unsigned int phase)
{
	unsigned int nwords = (nbits + HPM_WORD_BITS - 1) / HPM_WORD_BITS, w;
	/* bits at the positions p of a word with (p + phase) % align == 0 */
	uint64_t at = align == HPM_WORD_BITS ? 1 : ~UINT64_C(0) / ((UINT64_C(1) << align) - 1);
	uint64_t next = free_word(map, nbits, from / HPM_WORD_BITS);

	at <<= (align - phase % align) % align;
	for (w = from / HPM_WORD_BITS; w < nwords; w++) {
		uint64_t cur = next;
		unsigned __int128 run;
		unsigned int have = 1;
		uint64_t starts;

		next = free_word(map, nbits, w + 1);
		if (cur == 0)
			continue;
		run = cur | (unsigned __int128)next << HPM_WORD_BITS;
		while (have < n) {
			unsigned int s = RTE_MIN(have, n - have);

			run &= run >> s;
			have += s;
		}
		starts = (uint64_t)run & at;
		if (w == from / HPM_WORD_BITS)
			starts &= ~UINT64_C(0) << (from % HPM_WORD_BITS);
		if (starts != 0)
			return (int)(w * HPM_WORD_BITS + rte_bsf64(starts));
	}
	return -1;
}

int
hpm_bitrun_find(const uint64_t *map, unsigned int nbits, unsigned int from, unsigned int n,
	unsigned int align, unsigned int phase)
{
	unsigned int pos = from;

	if (n == 0 || n > nbits || from >= nbits)
		return -1;
	/* one bit anywhere: the next clear one (single granules) */
	if (n == 1 && align == 1)
		return hpm_bitrun_next_clear(map, nbits, from);
	if (n <= HPM_WORD_BITS && align <= HPM_WORD_BITS)
		return find_in_words(map, nbits, from, n, align, phase);
	for (;;) {
		int clear = hpm_bitrun_next_clear(map, nbits, pos);
		unsigned int used;

		if (clear < 0)
			return -1;
		pos = RTE_ALIGN_CEIL((unsigned int)clear + phase, align) - phase;
		if (pos > nbits - n)
			return -1;
		/* the run fits unless a used bit sits inside it: resume past it */
		used = hpm_bitrun_next_set(map, pos, pos + n);
		if (used == pos + n)
			return (int)pos;
		pos = used + 1;
	}
}

int
hpm_bitrun_find_top(const uint64_t *map, unsigned int nbits, unsigned int n, unsigned int align)
{
	unsigned int w = (nbits + HPM_WORD_BITS - 1) / HPM_WORD_BITS, k;
	uint64_t starts;

	if (n == 0 || n >= align || align > HPM_WORD_BITS)
		return -1;
	/* a bit at every multiple of align in a word */
	starts = align == HPM_WORD_BITS ? 1 : ~UINT64_C(0) / ((UINT64_C(1) << align) - 1);
	while (w-- > 0) {
		unsigned int bits = RTE_MIN(nbits - w * HPM_WORD_BITS, HPM_WORD_BITS);
		uint64_t free_bits = ~map[w] & hpm_bitrun_mask(0, bits), fit = free_bits & starts;

		/* bit p stays when p .. p + n - 1 are free: an aligned run never crosses the word */
		for (k = 1; k < n && fit != 0; k++)
			fit &= free_bits >> k;
		if (fit != 0)
			return (int)(w * HPM_WORD_BITS + rte_fls_u64(fit) - 1);
	}
	return -1;
}

int
hpm_bitrun_prev_set(const uint64_t *map, unsigned int pos)
{
	unsigned int w;
	uint64_t used_bits;

	if (pos == 0)
		return -1;
	w = (pos - 1) / HPM_WORD_BITS;
	used_bits = map[w] & hpm_bitrun_mask(0, (pos - 1) % HPM_WORD_BITS + 1);
	while (used_bits == 0) {
		if (w-- == 0)
			return -1;
		used_bits = map[w];
	}
	return (int)(w * HPM_WORD_BITS + 63 - __builtin_clzll(used_bits));
}

/* Longest run of set bits in x: one step per run, not per bit of the longest. */
unsigned int
hpm_bitrun_longest_ones(uint64_t x)
{
	unsigned int best = 0, len;

	while (x != 0) {
		x >>= __builtin_ctzll(x);
		len = ~x == 0 ? HPM_WORD_BITS : (unsigned int)__builtin_ctzll(~x);
		best = RTE_MAX(best, len);
		if (len == HPM_WORD_BITS)
			break;
		x >>= len;
	}
	return best;
}

/*
 * A word at a time: the run carried in from below joins the word's low clear
 * bits; inside the word, its longest run, from inner[] when the caller keeps
 * them, else found (when the word has enough clear bits to beat the best).
 */
static inline unsigned int
longest_clear(const uint64_t *map, unsigned int nbits, const uint8_t *inner)
{
	unsigned int best = 0, carry = 0, w, nwords = (nbits + HPM_WORD_BITS - 1) / HPM_WORD_BITS;

	for (w = 0; w < nwords; w++) {
		unsigned int bits = RTE_MIN(nbits - w * HPM_WORD_BITS, HPM_WORD_BITS);
		uint64_t free_bits = ~map[w] & hpm_bitrun_mask(0, bits);

		if (free_bits == ~UINT64_C(0)) {
			carry += HPM_WORD_BITS;
			continue;
		}
		carry += __builtin_ctzll(~free_bits);
		best = RTE_MAX(best, carry);
		if (inner != NULL)
			best = RTE_MAX(best, (unsigned int)inner[w]);
		else if ((unsigned int)__builtin_popcountll(free_bits) > best)
			best = RTE_MAX(best, hpm_bitrun_longest_ones(free_bits));
		carry = bits == HPM_WORD_BITS ? __builtin_clzll(~free_bits) : 0;
	}
	return RTE_MAX(best, carry);
}

unsigned int
hpm_bitrun_longest_clear(const uint64_t *map, unsigned int nbits)
{
	return longest_clear(map, nbits, NULL);
}

unsigned int
hpm_bitrun_count_clear_runs(const uint64_t *map, unsigned int nbits)
{
	unsigned int runs = 0;
	int clear = hpm_bitrun_next_clear(map, nbits, 0);

	while (clear >= 0) {
		runs++;
		clear = hpm_bitrun_next_clear(map, nbits,
			hpm_bitrun_next_set(map, (unsigned int)clear, nbits));
	}
	return runs;
}

unsigned int
hpm_bitrun_longest_clear_from(const uint64_t *map, unsigned int nbits, const uint8_t *inner)
{
	return longest_clear(map, nbits, inner);
}
