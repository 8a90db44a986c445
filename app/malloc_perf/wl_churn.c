/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * A heap that changes, on one lcore: churn (fill, free a random part,
 * refill: seed 001's free-range search as the heap fragments) and mixed
 * (random sizes and alignments over a live set: time per operation, then
 * the memory held at the peak against the peak of live bytes).
 */

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>

#include "fit_model.h"
#include "malloc_perf.h"

/* churn */

#define CHURN_ROUNDS 10u
#define CHURN_MIN 64u
#define CHURN_MAX 65536u

static unsigned int
churn_slots(const struct mp_config *cfg)
{
	return cfg->quick ? 2048 : 16384;
}

static void
churn_describe(const struct mp_config *cfg, char *buf, size_t len)
{
	char s[2 * MP_NAME_LEN], a[MP_NAME_LEN];

	if (cfg->size != 0) {
		mp_case_name(s, sizeof(s), cfg->size, cfg->align);
	} else if (cfg->align != 0) {
		/* --align applies to the random sizes too: the title says so */
		mp_size_str(a, sizeof(a), cfg->align);
		snprintf(s, sizeof(s), "64 B - 64 KiB at random, align %s", a);
	} else {
		snprintf(s, sizeof(s), "64 B - 64 KiB at random");
	}
	snprintf(buf, len,
		"churn: %u blocks of %s; %u rounds of: free a random quarter, refill (seed 001)",
		churn_slots(cfg), s, CHURN_ROUNDS);
}

static unsigned int
churn_metrics(const struct mp_config *cfg, struct mp_metric *m)
{
	static const char *const names[] = {"fill", "refill round 1", "refill round 10",
		"refill, all rounds", "free, all rounds"};
	unsigned int i;

	RTE_SET_USED(cfg);
	for (i = 0; i < RTE_DIM(names); i++) {
		snprintf(m[i].name, sizeof(m[i].name), "%s", names[i]);
		m[i].unit = i == 4 ? "ns/free" : "ns/alloc";
		m[i].flags = MP_M_TABLE | MP_M_LOWER;
	}
	return RTE_DIM(names);
}

static bool
churn_applies(const struct mp_config *cfg, const struct mp_backend *be, const char **why)
{
	if ((be->flags & MP_BE_FIXED) && cfg->size == 0) {
		*why = "random sizes (give --size for one size)";
		return false;
	}
	return true;
}

static int
churn_run(struct mp_run *r, struct mp_lcore *lc)
{
	const struct mp_backend *be = r->be;
	const struct mp_config *cfg = r->cfg;
	unsigned int n = churn_slots(cfg), nfree = n / 4, i, k;
	void **blocks = mp_ptr_array(n);
	size_t *sizes = malloc(sizeof(*sizes) * n);
	unsigned int *order = malloc(sizeof(*order) * n);
	unsigned int align = cfg->align;
	double refill_ns = 0, free_ns = 0;
	uint64_t t0, t1;
	int rc = -ENOMEM;

	if (blocks == NULL || sizes == NULL || order == NULL)
		goto out;
	rc = mp_prepare(r, lc, cfg->size, cfg->align, n);
	if (rc != 0)
		goto out;
	rc = -ENOMEM;
	for (i = 0; i < n; i++) {
		sizes[i] =
			cfg->size != 0 ? cfg->size : mp_rand_size(&lc->rng, CHURN_MIN, CHURN_MAX);
		order[i] = i;
	}
	t0 = rte_rdtsc();
	for (i = 0; i < n; i++) {
		blocks[i] = be->malloc(MP_TYPE, sizes[i], align);
		if (unlikely(blocks[i] == NULL))
			goto out;
	}
	lc->out[0] = mp_ns(rte_rdtsc() - t0) / n;
	for (k = 0; k < CHURN_ROUNDS; k++) {
		/* a random quarter, and its new sizes, chosen before the clock starts */
		for (i = 0; i < nfree; i++) {
			unsigned int j = i + mp_rand(&lc->rng) % (n - i), tmp = order[i];

			order[i] = order[j];
			order[j] = tmp;
		}
		t0 = rte_rdtsc();
		for (i = 0; i < nfree; i++) {
			be->free(blocks[order[i]]);
			blocks[order[i]] = NULL;
		}
		t1 = rte_rdtsc();
		free_ns += mp_ns(t1 - t0) / nfree;
		for (i = 0; i < nfree; i++)
			if (cfg->size == 0)
				sizes[order[i]] = mp_rand_size(&lc->rng, CHURN_MIN, CHURN_MAX);
		t0 = rte_rdtsc();
		for (i = 0; i < nfree; i++) {
			unsigned int s = order[i];

			blocks[s] = be->malloc(MP_TYPE, sizes[s], align);
			if (unlikely(blocks[s] == NULL))
				goto out;
		}
		t1 = rte_rdtsc();
		mp_progress(lc, (uint64_t)(k + 1) * nfree);
		refill_ns += mp_ns(t1 - t0) / nfree;
		if (k == 0)
			lc->out[1] = mp_ns(t1 - t0) / nfree;
		if (k == CHURN_ROUNDS - 1)
			lc->out[2] = mp_ns(t1 - t0) / nfree;
	}
	lc->out[3] = refill_ns / CHURN_ROUNDS;
	lc->out[4] = free_ns / CHURN_ROUNDS;
	rc = 0;
out:
	if (blocks != NULL)
		mp_free_all(be, blocks, n);
	mp_unprepare(r, lc);
	free(blocks);
	free(sizes);
	free(order);
	return rc;
}

const struct mp_workload mp_wl_churn = {
	.name = "churn",
	.help = "16384 blocks of 64 B - 64 KiB at random (or --size), at\n"
		"--align if given; 10 rounds of: free a random quarter,\n"
		"refill it (seed 001); one lcore",
	.flags = MP_WL_SINGLE | MP_WL_FIXED,
	.describe = churn_describe,
	.metrics = churn_metrics,
	.applies = churn_applies,
	.run = churn_run,
};

/* mixed */

#define MIXED_MIN 16u
#define MIXED_MAX (256u << 10)
#define MIXED_RING 65536u /* random steps, drawn before the clock starts */
#define MIXED_SAMPLE 64u  /* memory sampled every so many steps */
/*
 * The memory pass replays at most slots x this (the ring in turn): long
 * enough that hpmalloc's memory held has stopped growing. Held over peak
 * live at 16, 32 and 64 x 4096 steps: hpmalloc 1.43, 1.47, 1.47; rte_malloc
 * 1.42, 1.44, 1.44; glibc 1.29-1.31; tcmalloc 1.52, 1.59, 1.67 and mimalloc
 * 1.66, 1.68, 1.72, still growing.
 */
#define MIXED_MEM_STEPS 64u

struct mixed_step {
	uint32_t slot;
	uint32_t align;
	size_t size;
};

static unsigned int
mixed_slots(const struct mp_config *cfg)
{
	return cfg->quick ? 512 : 4096;
}

static unsigned int
mixed_metrics(const struct mp_config *cfg, struct mp_metric *m)
{
	static const char *const names[] = {"alloc or free", "fill", "peak live", "peak held",
		"held/live"};
	static const char *const units[] = {"ns/op", "ns/alloc", "MiB", "MiB", "x"};
	unsigned int i;

	RTE_SET_USED(cfg);
	for (i = 0; i < RTE_DIM(names); i++) {
		snprintf(m[i].name, sizeof(m[i].name), "%s", names[i]);
		m[i].unit = units[i];
		m[i].flags = MP_M_TABLE | (i == 2 ? 0 : MP_M_LOWER);
	}
	return RTE_DIM(names);
}

static void
mixed_draw(uint64_t *rng, unsigned int nslots, struct mixed_step *s)
{
	s->slot = (uint32_t)(mp_rand(rng) % nslots);
	s->size = mp_rand_size(rng, MIXED_MIN, MIXED_MAX);
	s->align = 1u << (3 + mp_rand(rng) % 14);
}

struct mixed_state {
	void **blocks;
	size_t *sizes;
	struct mixed_step *fill, *ring;
	unsigned int n;
};

/* Steps of the memory pass: slots x MIXED_MEM_STEPS, or --iterations if fewer. */
static uint64_t
mixed_mem_steps(const struct mp_config *cfg, unsigned int nslots)
{
	uint64_t steps = (uint64_t)nslots * MIXED_MEM_STEPS;

	return cfg->iterations != 0 ? RTE_MIN(cfg->iterations, steps) : steps;
}

/* The fill and the ring of steps, both drawn before the clock starts. */
static void
mixed_draw_steps(uint64_t *rng, unsigned int nslots, struct mixed_step *fill,
	struct mixed_step *ring)
{
	unsigned int i;

	for (i = 0; i < nslots; i++)
		mixed_draw(rng, nslots, &fill[i]);
	for (i = 0; i < MIXED_RING; i++)
		mixed_draw(rng, nslots, &ring[i]);
}

/*
 * Held over peak live of a best fit with no overhead (fit_model.h) on the
 * memory pass's steps, and that peak live in *peak; page: 0, or blocks
 * kept within pages of that size. NAN if the model has no memory.
 */
static double
mixed_fit_ratio(const struct mixed_step *fill, const struct mixed_step *ring, unsigned int n,
	uint64_t steps, size_t page, double *peak)
{
	size_t *offs = malloc(sizeof(*offs) * n), *sizes = malloc(sizeof(*sizes) * n);
	double live = 0, peak_live = 0, ratio = NAN;
	struct mp_fit_model m;
	unsigned int i;
	uint64_t k;

	*peak = NAN;
	if (offs == NULL || sizes == NULL || mp_fit_init(&m, page) != 0)
		goto out;
	for (i = 0; i < n; i++) {
		offs[i] = mp_fit_alloc(&m, fill[i].size, fill[i].align);
		if (offs[i] == SIZE_MAX)
			goto fini;
		sizes[i] = fill[i].size;
		live += (double)sizes[i];
	}
	peak_live = live;
	for (k = 0; k < steps; k++) {
		const struct mixed_step *s = &ring[k % MIXED_RING];

		if (mp_fit_free(&m, offs[s->slot], sizes[s->slot]) != 0)
			goto fini;
		live -= (double)sizes[s->slot];
		offs[s->slot] = mp_fit_alloc(&m, s->size, s->align);
		if (offs[s->slot] == SIZE_MAX)
			goto fini;
		sizes[s->slot] = s->size;
		live += (double)s->size;
		peak_live = RTE_MAX(peak_live, live);
	}
	/* the model never gives memory back: its top is its peak */
	ratio = (double)m.top / peak_live;
	*peak = peak_live;
fini:
	mp_fit_fini(&m);
out:
	free(offs);
	free(sizes);
	return ratio;
}

/*
 * The title says what a best fit with no overhead would hold on the first
 * repetition's steps (drawn from the seed the runner gives it): a
 * yardstick for the backends' held/live (a second or two to compute, once
 * a table).
 */
static void
mixed_describe(const struct mp_config *cfg, char *buf, size_t len)
{
	unsigned int n = mixed_slots(cfg);
	uint64_t rng = mp_lcore_seed(cfg, 0, 0), steps = mixed_mem_steps(cfg, n);
	struct mixed_step *fill = malloc(sizeof(*fill) * n);
	struct mixed_step *ring = malloc(sizeof(*ring) * MIXED_RING);
	double peak = NAN, flat = NAN, paged = NAN;

	if (fill != NULL && ring != NULL) {
		mixed_draw_steps(&rng, n, fill, ring);
		flat = mixed_fit_ratio(fill, ring, n, steps, 0, &peak);
		paged = mixed_fit_ratio(fill, ring, n, steps, 2u << 20, &peak);
	}
	free(fill);
	free(ring);
	snprintf(buf, len,
		"mixed: %u live blocks of 16 B - 256 KiB aligned 8 B - 64 KiB at random; "
		"steps free one and allocate another; a best fit with no overhead would "
		"hold %.2fx its peak live of %.2f MiB, %.2fx with no block across 2 MiB",
		n, flat, peak / MP_MIB, paged);
}

/* The memory pass: the same steps, every page written, memory sampled. */
static int
mixed_memory(struct mp_run *r, struct mixed_state *st, uint64_t steps, double *out)
{
	const struct mp_backend *be = r->be;
	struct mp_memory m0, m;
	double live = 0, peak_live = 0, peak_held = 0;
	uint64_t k;
	unsigned int i;

	if (be->trim != NULL && be->trim() != 0)
		return -EIO;
	mp_backend_memory(be, &m0);
	for (i = 0; i < st->n; i++) {
		st->blocks[i] = be->malloc(MP_TYPE, st->fill[i].size, st->fill[i].align);
		if (st->blocks[i] == NULL)
			return -ENOMEM;
		mp_touch(st->blocks[i], st->fill[i].size);
		st->sizes[i] = st->fill[i].size;
		live += (double)st->sizes[i];
	}
	for (k = 0; k <= steps; k++) {
		const struct mixed_step *s = &st->ring[k % MIXED_RING];

		if (k % MIXED_SAMPLE == 0 || k == steps) {
			mp_backend_memory(be, &m);
			peak_held = RTE_MAX(peak_held, m.held - m0.held);
			peak_live = RTE_MAX(peak_live, live);
		}
		if (k == steps)
			break;
		be->free(st->blocks[s->slot]);
		live -= (double)st->sizes[s->slot];
		st->blocks[s->slot] = be->malloc(MP_TYPE, s->size, s->align);
		if (st->blocks[s->slot] == NULL)
			return -ENOMEM;
		mp_touch(st->blocks[s->slot], s->size);
		st->sizes[s->slot] = s->size;
		live += (double)s->size;
		peak_live = RTE_MAX(peak_live, live);
	}
	out[2] = peak_live / MP_MIB;
	out[3] = peak_held / MP_MIB;
	out[4] = peak_held / peak_live;
	return 0;
}

static int
mixed_run(struct mp_run *r, struct mp_lcore *lc)
{
	const struct mp_backend *be = r->be;
	struct mixed_state st;
	uint64_t k = 0, start, now, t0;
	unsigned int i;
	int rc = -ENOMEM;

	st.n = mixed_slots(r->cfg);
	st.blocks = mp_ptr_array(st.n);
	st.sizes = malloc(sizeof(*st.sizes) * st.n);
	st.fill = malloc(sizeof(*st.fill) * st.n);
	st.ring = malloc(sizeof(*st.ring) * MIXED_RING);
	if (st.blocks == NULL || st.sizes == NULL || st.fill == NULL || st.ring == NULL)
		goto out;
	mixed_draw_steps(&lc->rng, st.n, st.fill, st.ring);
	/* the timed pass: nothing written */
	t0 = rte_rdtsc();
	for (i = 0; i < st.n; i++) {
		st.blocks[i] = be->malloc(MP_TYPE, st.fill[i].size, st.fill[i].align);
		if (unlikely(st.blocks[i] == NULL))
			goto out;
	}
	start = rte_rdtsc();
	lc->out[1] = mp_ns(start - t0) / st.n;
	do {
		for (i = 0; i < 16; i++, k++) {
			const struct mixed_step *s = &st.ring[k % MIXED_RING];

			be->free(st.blocks[s->slot]);
			st.blocks[s->slot] = be->malloc(MP_TYPE, s->size, s->align);
			if (unlikely(st.blocks[s->slot] == NULL))
				goto out;
		}
		mp_progress(lc, 2 * k);
		now = rte_rdtsc();
	} while (mp_more(r, k, now - start));
	lc->out[0] = mp_ns(now - start) / (double)(2 * k);
	mp_free_all(be, st.blocks, st.n);
	memset(st.blocks, 0, sizeof(*st.blocks) * st.n);
	/*
	 * as many steps for every backend: a count from the settings, never from
	 * how many steps this backend's timed pass did (a slow one did fewer)
	 */
	rc = mixed_memory(r, &st, mixed_mem_steps(r->cfg, st.n), lc->out);
out:
	if (st.blocks != NULL)
		mp_free_all(be, st.blocks, st.n);
	free(st.blocks);
	free(st.sizes);
	free(st.fill);
	free(st.ring);
	return rc;
}

const struct mp_workload mp_wl_mixed = {
	.name = "mixed",
	.help = "4096 live blocks of 16 B - 256 KiB, aligned 8 B - 64 KiB, at\n"
		"random; each step frees one and allocates another: ns/op;\n"
		"then the same steps with every page written: peak memory\n"
		"held (heap, or RSS for the peers) vs peak live bytes;\n"
		"one lcore",
	.flags = MP_WL_SINGLE | MP_WL_TRIM,
	.describe = mixed_describe,
	.metrics = mixed_metrics,
	.run = mixed_run,
};
