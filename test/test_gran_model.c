/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Granule pages against a first-fit model (the method of seed 000): random
 * allocations of runs of 1-64 granules with random alignments and random
 * frees, on pages of 512 and of 32 granules; every position the page gives
 * must be the model's lowest fitting position, every free must give back the
 * run's length, and the bitmaps must equal the model's at every step. Then
 * the bitmap engine alone on a table of 16384 granules, seed 000's size.
 */

#include <inttypes.h>
#include <stdbool.h>

#include "bitrun.h"
#include "gran.h"
#include "test_common.h"

#define MAX_GRAN 16384

struct model {
	unsigned int ngran;
	bool used[MAX_GRAN];
	bool dirty[MAX_GRAN];
	/* live runs: start and length */
	unsigned int run_pos[MAX_GRAN];
	unsigned int run_len[MAX_GRAN];
	unsigned int nruns;
};

static int
model_first_fit(const struct model *m, unsigned int n, unsigned int align)
{
	unsigned int p, i;

	for (p = 0; p + n <= m->ngran; p += align) {
		for (i = 0; i < n && !m->used[p + i]; i++)
			;
		if (i == n)
			return p;
	}
	return -1;
}

static void
model_take(struct model *m, unsigned int pos, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		m->used[pos + i] = true;
	m->run_pos[m->nruns] = pos;
	m->run_len[m->nruns] = n;
	m->nruns++;
}

static bool
page_matches(const struct hpm_gran *g, const struct model *m)
{
	unsigned int i, nfree = 0, lowfree = m->ngran, run = 0, longest = 0;

	for (i = 0; i < m->ngran; i++) {
		run = m->used[i] ? 0 : run + 1;
		longest = RTE_MAX(longest, run);
		if (hpm_bitrun_test(g->used, i) != m->used[i] ||
			hpm_bitrun_test(g->dirty, i) != m->dirty[i])
			return false;
		if (!m->used[i]) {
			nfree++;
			if (lowfree == m->ngran)
				lowfree = i;
		}
	}
	/* the longest free run decides the page's bin */
	return g->nfree == nfree && g->lowfree == lowfree && g->maxrun == longest;
}

static unsigned int
random_align(uint64_t *rs, unsigned int max)
{
	unsigned int log2 = test_rand(rs) % (rte_log2_u32(max) + 1);

	return 1u << log2;
}

/* n ops on one page of ngran granules; runs of 1..max_run granules. */
static void
run_page(unsigned int ngran, unsigned int max_run, unsigned long ops, uint64_t *rs)
{
	static struct model m;
	struct hpm_gran g;
	unsigned long op, allocs = 0, fails = 0, frees = 0;
	unsigned int shift = ngran == 512 ? 12 : 16;

	memset(&g, 0, sizeof(g));
	memset(&m, 0, sizeof(m));
	g.ngran = ngran;
	g.nfree = ngran;
	g.maxrun = ngran;
	g.shift = shift;
	m.ngran = ngran;
	for (op = 0; op < ops; op++) {
		/* phases that fill, drain and churn the page */
		unsigned int alloc_pct = (op / 20000) % 3 == 0 ? 75
			: (op / 20000) % 3 == 1                ? 50
							       : 30;
		bool do_alloc = m.nruns == 0 || test_rand(rs) % 100 < alloc_pct;

		if (do_alloc) {
			/* small runs dominate, as they do in use */
			unsigned int n = test_rand(rs) % 4 == 0 ? 1 + test_rand(rs) % max_run
								: 1 + test_rand(rs) % 4;
			unsigned int align = random_align(rs, max_run);
			int want = model_first_fit(&m, n, align);
			bool dirty_seen = false, dirty_want = false;
			int got = hpm_gran_page_take(&g, n, align, &dirty_seen);
			unsigned int i;

			CHECK(got == want, "%u granules align %u: page gives %d, first fit is %d",
				n, align, got, want);
			if (got != want)
				return;
			if (got < 0) {
				fails++;
				continue;
			}
			for (i = 0; i < n; i++) {
				dirty_want |= m.dirty[got + i];
				m.dirty[got + i] = true;
			}
			CHECK(dirty_seen == dirty_want, "run at %d: dirty %d, model %d", got,
				dirty_seen, dirty_want);
			model_take(&m, got, n);
			allocs++;
		} else {
			unsigned int k = test_rand(rs) % m.nruns, i;
			unsigned int pos = m.run_pos[k], n = m.run_len[k];
			unsigned int given = hpm_gran_page_give(&g, pos);

			CHECK(given == n, "free at %u: page frees %u granules, the run has %u", pos,
				given, n);
			if (given != n)
				return;
			for (i = 0; i < n; i++)
				m.used[pos + i] = false;
			m.run_pos[k] = m.run_pos[m.nruns - 1];
			m.run_len[k] = m.run_len[m.nruns - 1];
			m.nruns--;
			frees++;
		}
		if ((op & 255) == 0 || ngran == 32) {
			CHECK(page_matches(&g, &m), "op %lu: bitmaps differ from the model", op);
			if (test_failures)
				return;
		}
	}
	CHECK(page_matches(&g, &m), "end: bitmaps differ from the model");
	printf("page of %u granules: %lu ops, %lu allocations (%lu found no room), %lu frees\n",
		ngran, ops, allocs + fails, fails, frees);
}

/* The longest free run and the last used granule before pos, against the model. */
static bool
table_scans_match(const uint64_t *map, const struct model *m, unsigned int pos)
{
	unsigned int i, run = 0, longest = 0, got_longest, nbits;
	int prev = -1, got_prev;

	for (i = 0; i < m->ngran; i++) {
		run = m->used[i] ? 0 : run + 1;
		longest = RTE_MAX(longest, run);
		if (m->used[i] && i < pos)
			prev = (int)i;
	}
	got_longest = hpm_bitrun_longest_clear(map, m->ngran);
	got_prev = hpm_bitrun_prev_set(map, pos);
	CHECK(got_longest == longest, "table: longest free run %u, model %u", got_longest, longest);
	CHECK(got_prev == prev, "table: last used before %u is %d, model %d", pos, got_prev, prev);
	/* a map that ends inside a word */
	nbits = 1 + pos % 500;
	for (i = 0, run = 0, longest = 0; i < nbits; i++) {
		run = m->used[i] ? 0 : run + 1;
		longest = RTE_MAX(longest, run);
	}
	got_longest = hpm_bitrun_longest_clear(map, nbits);
	CHECK(got_longest == longest, "table: longest free run below %u is %u, model %u", nbits,
		got_longest, longest);
	return got_longest == longest && got_prev == prev;
}

/* The engine alone on seed 000's table: 16384 granules, lowfree kept as gran.c keeps it. */
static void
run_table(unsigned long ops, uint64_t *rs)
{
	static uint64_t map[MAX_GRAN / 64];
	static struct model m;
	unsigned int lowfree = 0;
	unsigned long op;

	memset(map, 0, sizeof(map));
	memset(&m, 0, sizeof(m));
	m.ngran = MAX_GRAN;
	for (op = 0; op < ops; op++) {
		bool do_alloc = m.nruns == 0 || test_rand(rs) % 100 < (op < ops / 2 ? 80 : 45);

		if (do_alloc) {
			unsigned int n = 1 + test_rand(rs) % (test_rand(rs) % 2 ? 64 : 2);
			unsigned int align = random_align(rs, 64);
			int want = model_first_fit(&m, n, align);
			int got = hpm_bitrun_find(map, MAX_GRAN, lowfree, n, align, 0);

			CHECK(got == want, "table: %u align %u: %d, first fit %d", n, align, got,
				want);
			if (got != want)
				return;
			if (got < 0)
				continue;
			hpm_bitrun_set(map, got, n);
			model_take(&m, got, n);
			if ((unsigned int)got == lowfree) {
				int next = hpm_bitrun_next_clear(map, MAX_GRAN, got + n);

				lowfree = next < 0 ? MAX_GRAN : (unsigned int)next;
			}
		} else {
			unsigned int k = test_rand(rs) % m.nruns, i;

			hpm_bitrun_clear(map, m.run_pos[k], m.run_len[k]);
			for (i = 0; i < m.run_len[k]; i++)
				m.used[m.run_pos[k] + i] = false;
			lowfree = RTE_MIN(lowfree, m.run_pos[k]);
			m.run_pos[k] = m.run_pos[m.nruns - 1];
			m.run_len[k] = m.run_len[m.nruns - 1];
			m.nruns--;
		}
		if (op % 64 == 0 && !table_scans_match(map, &m, test_rand(rs) % (MAX_GRAN + 1)))
			return;
	}
	printf("table of %u granules: %lu ops, %u runs live at the end\n", MAX_GRAN, ops, m.nruns);
}

static void
check_engine_edges(void)
{
	uint64_t map[8] = {0};
	unsigned int longest;

	/* runs across word boundaries, phase, and the end of the map */
	hpm_bitrun_set(map, 0, 60);
	CHECK(hpm_bitrun_find(map, 512, 60, 8, 1, 0) == 60, "run across a word boundary");
	CHECK(hpm_bitrun_find(map, 512, 60, 8, 8, 0) == 64, "aligned run after a used prefix");
	CHECK(hpm_bitrun_find(map, 512, 60, 4, 4, 1) == 63, "phase 1 gives positions 3 mod 4");
	hpm_bitrun_set(map, 64, 448);
	CHECK(hpm_bitrun_find(map, 512, 60, 5, 1, 0) == -1, "no room for 5");
	CHECK(hpm_bitrun_find(map, 512, 60, 4, 1, 0) == 60, "exactly 4 left");
	longest = hpm_bitrun_longest_clear(map, 512);
	CHECK(longest == 4, "longest clear run %u", longest);
	CHECK(hpm_bitrun_count_clear_runs(map, 512) == 1, "one clear run");
	CHECK(hpm_bitrun_find(map, 32, 0, 33, 1, 0) == -1, "a run longer than the map");
	hpm_bitrun_clear(map, 0, 512);
	CHECK(hpm_bitrun_find(map, 32, 0, 32, 32, 0) == 0, "a whole 32-granule page");
	CHECK(hpm_bitrun_next_clear(map, 32, 32) == -1, "nothing past the end");
}

int
main(int argc, char **argv)
{
	uint64_t rs = test_seed(0x5eed0000);
	unsigned long ops = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000000;

	check_engine_edges();
	run_page(512, 64, ops, &rs);
	run_page(32, 32, ops / 4, &rs);
	run_table(ops / 10, &rs);
	return test_end("gran_model");
}
