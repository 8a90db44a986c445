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

int
hpm_bitrun_find(const uint64_t *map, unsigned int nbits, unsigned int from, unsigned int n,
	unsigned int align, unsigned int phase)
{
	unsigned int pos = from;

	if (n == 0 || n > nbits)
		return -1;
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

unsigned int
hpm_bitrun_longest_clear(const uint64_t *map, unsigned int nbits)
{
	unsigned int best = 0;
	int clear = hpm_bitrun_next_clear(map, nbits, 0);

	while (clear >= 0) {
		unsigned int end = hpm_bitrun_next_set(map, (unsigned int)clear, nbits);

		best = RTE_MAX(best, end - (unsigned int)clear);
		clear = hpm_bitrun_next_clear(map, nbits, end);
	}
	return best;
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
