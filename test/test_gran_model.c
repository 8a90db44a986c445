/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Granule pages against a first-fit model (the method of seed 000): random
 * allocations of runs of 1-64 granules with random alignments and random
 * frees, on pages of 512 and of 32 granules; every position the page gives
 * must be the model's lowest fitting position (its highest for a run shorter
 * than its alignment), every free must give back the
 * run's length, and the bitmaps must equal the model's at every step. Then
 * the bitmap engine alone on a table of 16384 granules, seed 000's size.
 * Then a socket's pages of 4 KiB granules on anonymous memory: every run
 * comes from the page of the lowest bin (by longest free run) and the lowest
 * unit ordinal in it that has room for it, or a page that would come first
 * cannot surely hold it (a free run of n + align - 1), a new page takes the
 * lowest free unit, and a drain gives every unit back.
 */

#include <inttypes.h>
#include <stdbool.h>

#include "bitrun.h"
#include "chunk.h"
#include "gran.h"
#include "meta.h"
#include "pagemap.h"
#include "source.h"
#include "source_anon.h"
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

/*
 * The lowest position p, a multiple of align, of n free granules, or with
 * top the highest; -1 when there is none.
 */
static int
model_scan(const struct model *m, unsigned int n, unsigned int align, bool top)
{
	unsigned int slots = n <= m->ngran ? (m->ngran - n) / align + 1 : 0, k, i;

	for (k = 0; k < slots; k++) {
		unsigned int p = (top ? slots - 1 - k : k) * align;

		for (i = 0; i < n && !m->used[p + i]; i++)
			;
		if (i == n)
			return (int)p;
	}
	return -1;
}

static int
model_first_fit(const struct model *m, unsigned int n, unsigned int align)
{
	return model_scan(m, n, align, false);
}

/*
 * Where a page puts a run: first fit, but a run shorter than its alignment
 * at the highest place that fits (gran.c keeps such runs apart).
 */
static int
model_fit(const struct model *m, unsigned int n, unsigned int align)
{
	return model_scan(m, n, align, n < align && align <= 64);
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
	hpm_gran_page_reset(&g, ngran, shift, 0);
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
			int want = model_fit(&m, n, align);
			bool dirty_seen = false, dirty_want = false;
			int got = hpm_gran_page_take(&g, n, align, &dirty_seen);
			unsigned int i;

			CHECK(got == want, "%u granules align %u: page gives %d, the model %d", n,
				align, got, want);
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

	/* runs shorter than their alignment, from the top */
	CHECK(hpm_bitrun_find_top(map, 512, 1, 16) == 496, "top: one granule at 64 KiB");
	CHECK(hpm_bitrun_find_top(map, 512, 15, 16) == 496, "top: 15 granules at 64 KiB");
	CHECK(hpm_bitrun_find_top(map, 511, 15, 16) == 496, "top: a tailed page's last fit");
	CHECK(hpm_bitrun_find_top(map, 510, 15, 16) == 480, "top: one granule short of it");
	CHECK(hpm_bitrun_find_top(map, 512, 1, 64) == 448, "top: one granule at 256 KiB");
	CHECK(hpm_bitrun_find_top(map, 32, 1, 16) == 16, "top: a 32-granule page");
	CHECK(hpm_bitrun_find_top(map, 512, 16, 16) == -1,
		"top: not for a run as long as its align");
	CHECK(hpm_bitrun_find_top(map, 512, 1, 128) == -1, "top: not past a word's alignment");
	hpm_bitrun_set(map, 497, 1);
	CHECK(hpm_bitrun_find_top(map, 512, 1, 16) == 496, "top: a used granule after the run");
	CHECK(hpm_bitrun_find_top(map, 512, 2, 16) == 480, "top: a used granule inside the run");
	hpm_bitrun_set(map, 0, 512);
	hpm_bitrun_clear(map, 2, 1);
	CHECK(hpm_bitrun_find_top(map, 512, 1, 2) == 2, "top: the only fit, in the lowest word");
	CHECK(hpm_bitrun_find_top(map, 512, 1, 4) == -1, "top: none at 4");
}

#define SET_PAGES 256u
#define SET_LIVE 8192u

struct set_env {
	struct hpm_meta meta;
	struct hpm_pagemap pm;
	struct hpm_chunk_set cs;
	struct hpm_gran_set gs;
};

/* The pages of the set as the model sees them, by unit ordinal. */
static struct model set_pages[SET_PAGES];
static bool set_known[SET_PAGES];
static struct {
	uint8_t *p;
	unsigned int ord, pos, n;
} set_live[SET_LIVE];

static unsigned int
model_longest(const struct model *m)
{
	unsigned int i, run = 0, longest = 0;

	for (i = 0; i < m->ngran; i++) {
		run = m->used[i] ? 0 : run + 1;
		longest = RTE_MAX(longest, run);
	}
	return longest;
}

/* The bin of a page whose longest free run is longest (1 or more): two an octave. */
static unsigned int
model_bin(unsigned int longest)
{
	unsigned int f = rte_fls_u32(longest) - 1;

	return longest <= 1 ? 0 : 2 * f - 1 + (longest >= 3u << (f - 1));
}

/* Check one allocation of n granules aligned align at p against the model; the page's ordinal. */
static bool
set_check_alloc(struct set_env *e, uint8_t *p, unsigned int n, unsigned int align)
{
	struct hpm_unit *u = hpm_pagemap_lookup(&e->pm, p);
	unsigned int pos, q, sure, own;
	struct model *m;
	int want;

	if (u == NULL || u->role != HPM_UNIT_G4K || u->ord >= SET_PAGES) {
		CHECK(false, "run %p: not on a page of runs (unit %p)", (void *)p, (void *)u);
		return false;
	}
	pos = (p - u->va) >> 12;
	m = &set_pages[u->ord];
	if (!set_known[u->ord]) {
		/* a new page: the lowest free unit of the set's chunks */
		for (q = 0; q < u->ord; q++)
			if (!set_known[q] && hpm_chunk_unit_at(&e->cs, q) != NULL) {
				CHECK(false, "new page at ordinal %u, unit %u was free", u->ord, q);
				return false;
			}
		memset(m, 0, sizeof(*m));
		m->ngran = HPM_GRAN_MAX;
		set_known[u->ord] = true;
	}
	want = model_fit(m, n, align);
	if (want != (int)pos) {
		CHECK(false, "%u granules align %u on page %u: at %u, the model %d", n, align,
			u->ord, pos, want);
		return false;
	}
	/*
	 * Best fit by page: no page of a lower bin (1, 2, 3, 4, 6, 8, 12 ...
	 * granules of longest free run), nor a lower page of the same bin, surely
	 * had room: a free run of n + align - 1 granules, rounded up to a bin's
	 * least (the search passes over a few pages that may not fit, then only
	 * looks at the bins that must).
	 */
	for (sure = 1; sure < n + align - 1;)
		sure = (sure & (sure - 1)) != 0 ? sure / 3 * 4 : sure == 1 ? 2 : sure + sure / 2;
	own = model_longest(m);
	for (q = 0; q < SET_PAGES; q++) {
		unsigned int longest = set_known[q] ? model_longest(&set_pages[q]) : 0;

		if (q == u->ord || longest < sure)
			continue;
		if (model_bin(longest) < model_bin(own) ||
			(model_bin(longest) == model_bin(own) && q < u->ord)) {
			CHECK(false,
				"%u granules align %u on page %u (free run %u): page %u has a free run of %u",
				n, align, u->ord, own, q, longest);
			return false;
		}
	}
	model_take(m, pos, n);
	return true;
}

static void
run_set(unsigned long ops, uint64_t *rs)
{
	struct set_env *e;
	unsigned long op, news = 0;
	unsigned int nlive = 0, i, q;
	size_t bytes;
	void *p;
	int rc;

	hpm_src = &hpm_source_anon;
	rc = hpm_meta_bootstrap(hpm_src, sizeof(*e), "hpmt_gran_model", &p);
	CHECK(rc == 0, "metadata: %d", rc);
	if (rc != 0)
		return;
	e = p;
	hpm_meta_init(&e->meta, (struct hpm_meta_region *)((uint8_t *)e - HPM_META_HDR_SIZE),
		sizeof(*e));
	hpm_chunk_set_init(&e->cs, 0, -1, &e->meta, &e->pm, HPM_UNIT_SIZE * 8, 0, 0, false);
	hpm_gran_set_init(&e->gs, &e->cs);
	memset(set_known, 0, sizeof(set_known));
	for (op = 0; op < ops && !test_failures; op++) {
		/* fill to a few thousand runs, then churn: fragmented pages */
		bool do_alloc = nlive == 0 ||
			(nlive < SET_LIVE && test_rand(rs) % 100 < (nlive < 3000 ? 70 : 50));

		if (do_alloc) {
			unsigned int n = test_rand(rs) % 3 == 0 ? 1 + test_rand(rs) % 64
								: 1 + test_rand(rs) % 8;
			unsigned int align = random_align(rs, 16);
			unsigned int before = e->gs.cls[HPM_GRAN_4K].npages;
			struct hpm_blockinfo bi;
			uint8_t *run = hpm_gran_alloc(&e->gs, HPM_GRAN_4K, n, align, &bi);

			CHECK(run != NULL, "no run of %u granules", n);
			if (run == NULL)
				break;
			news += e->gs.cls[HPM_GRAN_4K].npages > before;
			if (!set_check_alloc(e, run, n, align)) {
				hpm_gran_free(&e->gs, hpm_pagemap_lookup(&e->pm, run), run, &bytes);
				break;
			}
			set_live[nlive].p = run;
			set_live[nlive].ord = hpm_pagemap_lookup(&e->pm, run)->ord;
			set_live[nlive].pos = (run - hpm_pagemap_lookup(&e->pm, run)->va) >> 12;
			set_live[nlive++].n = n;
		} else {
			unsigned int k = test_rand(rs) % nlive;
			struct model *m = &set_pages[set_live[k].ord];

			rc = hpm_gran_free(&e->gs, hpm_pagemap_lookup(&e->pm, set_live[k].p),
				set_live[k].p, &bytes);
			CHECK(rc == 0 && bytes == (size_t)set_live[k].n << 12,
				"free of %u granules: %d, %zu bytes", set_live[k].n, rc, bytes);
			for (i = 0; i < set_live[k].n; i++)
				m->used[set_live[k].pos + i] = false;
			set_live[k] = set_live[--nlive];
			/* an emptied page may go back (one empty page is kept) */
			for (q = 0; q < SET_PAGES; q++)
				if (set_known[q] &&
					(hpm_chunk_unit_at(&e->cs, q) == NULL ||
						hpm_chunk_unit_at(&e->cs, q)->role != HPM_UNIT_G4K))
					set_known[q] = false;
		}
		if (op % 4096 == 0)
			CHECK(hpm_gran_verify(&e->gs, &bytes, &(uint64_t){0}) == 0,
				"granule set check after %lu ops", op);
	}
	while (nlive > 0) {
		nlive--;
		hpm_gran_free(&e->gs, hpm_pagemap_lookup(&e->pm, set_live[nlive].p),
			set_live[nlive].p, &bytes);
	}
	hpm_gran_release_spares(&e->gs);
	CHECK(e->gs.cls[HPM_GRAN_4K].npages == 0 && e->cs.chunks == NULL,
		"after the drain: %u pages, chunks left %d", e->gs.cls[HPM_GRAN_4K].npages,
		e->cs.chunks != NULL);
	printf("pages of runs: %lu ops, %lu new pages\n", op, news);
	hpm_meta_release_all(&e->meta, hpm_src);
}

int
main(int argc, char **argv)
{
	uint64_t rs = test_seed(0x5eed0000);
	unsigned long ops = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000000;

	check_engine_edges();
	run_page(512, 64, ops, &rs);
	/* runs and alignments past a word of the bitmap: the search's general loop */
	run_page(512, 512, ops / 8, &rs);
	run_page(32, 32, ops / 4, &rs);
	run_table(ops / 10, &rs);
	run_set(ops / 4, &rs);
	return test_end("gran_model");
}
