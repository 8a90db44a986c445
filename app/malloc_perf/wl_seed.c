/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The seed scenarios, on one lcore: seed-grow (seed 004), granule-full
 * (seed 000), contig (seed 002), and held (what the heap keeps for a set of
 * aligned blocks).
 */

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_errno.h>

#include "malloc_perf.h"

/* seed-grow (seed 004) */

#define GROW_ROUNDS 10u

static unsigned int
grow_per_round(const struct mp_config *cfg)
{
	return cfg->quick ? 200 : 2000;
}

static void
grow_describe(const struct mp_config *cfg, char *buf, size_t len)
{
	snprintf(buf, len,
		"seed-grow: %u rounds x %u x alloc(4096, align 4096), no free (seed 004)",
		GROW_ROUNDS, grow_per_round(cfg));
}

static unsigned int
grow_metrics(const struct mp_config *cfg, struct mp_metric *m)
{
	unsigned int k;

	RTE_SET_USED(cfg);
	for (k = 0; k < GROW_ROUNDS; k++) {
		snprintf(m[k].name, sizeof(m[k].name), "round %u", k + 1);
		m[k].unit = "ns/alloc";
		m[k].flags = MP_M_LOWER | (k == 0 || k == GROW_ROUNDS - 1 ? MP_M_TABLE : 0);
	}
	return GROW_ROUNDS;
}

static int
grow_run(struct mp_run *r, struct mp_lcore *lc)
{
	const struct mp_backend *be = r->be;
	unsigned int per = grow_per_round(r->cfg), n = 0, k, i;
	void **blocks = mp_ptr_array(GROW_ROUNDS * per);
	uint64_t t0, t1;
	int rc;

	if (blocks == NULL)
		return -ENOMEM;
	rc = mp_prepare(r, lc, 4096, 4096, GROW_ROUNDS * per);
	for (k = 0; k < GROW_ROUNDS && rc == 0; k++) {
		t0 = rte_rdtsc();
		for (i = 0; i < per; i++) {
			void *p = be->malloc(MP_TYPE, 4096, 4096);

			if (unlikely(p == NULL)) {
				rc = -ENOMEM;
				break;
			}
			blocks[n++] = p;
		}
		t1 = rte_rdtsc();
		mp_progress(lc, n);
		lc->out[k] = mp_ns(t1 - t0) / per;
	}
	mp_free_all(be, blocks, n);
	mp_unprepare(r, lc);
	free(blocks);
	return rc;
}

const struct mp_workload mp_wl_seed_grow = {
	.name = "seed-grow",
	.help = "10 rounds x 2000 x alloc(4096, align 4096) without free,\n"
		"ns/alloc per round (seed 004); one lcore",
	.flags = MP_WL_SINGLE | MP_WL_FIXED,
	.describe = grow_describe,
	.metrics = grow_metrics,
	.run = grow_run,
};

/* granule-full (seed 000) */

#define GRAN_BATCH 8u
#define GRAN_MIN_SAMPLES 11u
#define GRAN_MAX_SAMPLES 20001u
#define GRAN_WARMUP 64u

static unsigned int
gran_blocks(const struct mp_config *cfg)
{
	return cfg->quick ? 2048 : 16384;
}

static unsigned int
gran_free(const struct mp_config *cfg)
{
	return cfg->quick ? 173 : 1384;
}

static void
gran_describe(const struct mp_config *cfg, char *buf, size_t len)
{
	snprintf(buf, len,
		"granule-full: %u of %u blocks 4096/4096 used, alloc+free one, median (seed 000)",
		gran_blocks(cfg) - gran_free(cfg), gran_blocks(cfg));
}

static unsigned int
gran_metrics(const struct mp_config *cfg, struct mp_metric *m)
{
	RTE_SET_USED(cfg);
	snprintf(m[0].name, sizeof(m[0].name), "alloc+free one");
	m[0].unit = "ns/pair";
	m[0].flags = MP_M_TABLE | MP_M_LOWER;
	snprintf(m[1].name, sizeof(m[1].name), "fill");
	m[1].unit = "ns/alloc";
	m[1].flags = MP_M_TABLE | MP_M_LOWER;
	return 2;
}

static int
gran_run(struct mp_run *r, struct mp_lcore *lc)
{
	const struct mp_backend *be = r->be;
	unsigned int n = gran_blocks(r->cfg), i, k, nsamples = 0;
	void **blocks = mp_ptr_array(n);
	unsigned int *order = malloc(sizeof(*order) * n);
	double *samples = malloc(sizeof(*samples) * GRAN_MAX_SAMPLES);
	uint64_t t0, t1 = 0, start;
	int rc = -ENOMEM;

	if (blocks == NULL || order == NULL || samples == NULL)
		goto out;
	rc = mp_prepare(r, lc, 4096, 4096, n);
	if (rc != 0)
		goto out;
	rc = -ENOMEM;
	t0 = rte_rdtsc();
	for (i = 0; i < n; i++) {
		blocks[i] = be->malloc(MP_TYPE, 4096, 4096);
		if (blocks[i] == NULL)
			goto out;
	}
	lc->out[1] = mp_ns(rte_rdtsc() - t0) / n;
	/* free gran_free blocks chosen at random (a partial Fisher-Yates shuffle) */
	for (i = 0; i < n; i++)
		order[i] = i;
	for (i = 0; i < gran_free(r->cfg); i++) {
		unsigned int j = i + mp_rand(&lc->rng) % (n - i), tmp = order[i];

		order[i] = order[j];
		order[j] = tmp;
		be->free(blocks[order[i]]);
		blocks[order[i]] = NULL;
	}
	for (k = 0; k < GRAN_WARMUP; k++) {
		void *b = be->malloc(MP_TYPE, 4096, 4096);

		if (b == NULL)
			goto out;
		be->free(b);
	}
	start = rte_rdtsc();
	do {
		t0 = rte_rdtsc();
		for (k = 0; k < GRAN_BATCH; k++) {
			void *b = be->malloc(MP_TYPE, 4096, 4096);

			if (unlikely(b == NULL))
				goto out;
			be->free(b);
		}
		t1 = rte_rdtsc();
		samples[nsamples++] = mp_ns(t1 - t0) / GRAN_BATCH;
		mp_progress(lc, (uint64_t)nsamples * GRAN_BATCH);
	} while (nsamples < GRAN_MAX_SAMPLES &&
		(nsamples < GRAN_MIN_SAMPLES ||
			mp_more(r, (uint64_t)nsamples * GRAN_BATCH, t1 - start)));
	lc->out[0] = mp_median(samples, nsamples);
	rc = 0;
out:
	if (blocks != NULL)
		mp_free_all(be, blocks, n);
	mp_unprepare(r, lc);
	free(blocks);
	free(order);
	free(samples);
	return rc;
}

const struct mp_workload mp_wl_granule_full = {
	.name = "granule-full",
	.help = "16384 blocks of 4096/4096, 1384 freed at random, then\n"
		"alloc+free of one block, median (seed 000); one lcore",
	.flags = MP_WL_SINGLE | MP_WL_FIXED,
	.describe = gran_describe,
	.metrics = gran_metrics,
	.run = gran_run,
};

/* contig (seed 002) */

static const size_t contig_sizes[] = {2u << 20, 4u << 20, 16u << 20};
#define CONTIG_ALIGN (2u << 20)
#define CONTIG_MIN_PAIRS 8u

static void
contig_describe(const struct mp_config *cfg, char *buf, size_t len)
{
	RTE_SET_USED(cfg);
	snprintf(buf, len,
		"contig: alloc+free of 2, 4, 16 MiB aligned 2 MiB; IOVA-contiguous where the "
		"backend has a call for it (seed 002)");
}

static unsigned int
contig_metrics(const struct mp_config *cfg, struct mp_metric *m)
{
	unsigned int i, n = 0;
	char s[24];

	RTE_SET_USED(cfg);
	for (i = 0; i < RTE_DIM(contig_sizes); i++) {
		mp_size_str(s, sizeof(s), contig_sizes[i]);
		snprintf(m[n].name, sizeof(m[n].name), "%s", s);
		m[n].unit = "ns/pair";
		m[n++].flags = MP_M_TABLE | MP_M_LOWER;
		snprintf(m[n].name, sizeof(m[n].name), "%s IOVA-contig", s);
		m[n].unit = "ns/pair";
		m[n++].flags = MP_M_TABLE | MP_M_LOWER | MP_M_OPT;
	}
	return n;
}

static bool
contig_applies(const struct mp_config *cfg, const struct mp_backend *be, const char **why)
{
	RTE_SET_USED(cfg);
	if (be->flags & MP_BE_FIXED) {
		*why = "a pool of 16 MiB objects";
		return false;
	}
	return true;
}

/*
 * IOVA-contiguous pairs: NaN (not a failure) when the backend has none or
 * cannot here. Physically contiguous hugepages come and go with the machine
 * (where IOVA is PA, a memzone given back returns its pages to the kernel
 * and the next one gets others): memory that runs out after the first pair
 * is that too, and said.
 */
static int
contig_pairs(struct mp_run *r, struct mp_lcore *lc, size_t size, double *ns)
{
	const struct mp_backend *be = r->be;
	uint64_t n = 0, start, now;
	void *p;

	p = be->malloc_contig(size, CONTIG_ALIGN);
	if (p == NULL)
		return 0;
	be->free_contig(p);
	start = rte_rdtsc();
	do {
		p = be->malloc_contig(size, CONTIG_ALIGN);
		if (unlikely(p == NULL)) {
			fprintf(stderr,
				"contig: %s: no IOVA-contiguous %zu MiB after %" PRIu64
				" pairs: no figure\n",
				be->name, size >> 20, n + 1);
			return 0;
		}
		be->free_contig(p);
		n++;
		mp_progress(lc, lc->ops + 1);
		now = rte_rdtsc();
	} while (n < CONTIG_MIN_PAIRS || mp_more(r, n, now - start));
	*ns = mp_ns(now - start) / (double)n;
	return 0;
}

static int
contig_run(struct mp_run *r, struct mp_lcore *lc)
{
	unsigned int i;
	double warm;
	int rc;

	for (i = 0; i < RTE_DIM(contig_sizes); i++) {
		rc = mp_pair_loop(r, lc, contig_sizes[i], CONTIG_ALIGN, 1, &warm, NULL);
		if (rc == 0)
			rc = mp_pair_loop(r, lc, contig_sizes[i], CONTIG_ALIGN, CONTIG_MIN_PAIRS,
				&lc->out[2 * i], NULL);
		if (rc == 0 && r->be->malloc_contig != NULL)
			rc = contig_pairs(r, lc, contig_sizes[i], &lc->out[2 * i + 1]);
		if (rc != 0)
			return rc;
	}
	return 0;
}

const struct mp_workload mp_wl_contig = {
	.name = "contig",
	.help = "alloc+free of 2, 4 and 16 MiB aligned 2 MiB, and the same\n"
		"IOVA-contiguous (hpm_malloc_contig; rte: a memzone with\n"
		"RTE_MEMZONE_IOVA_CONTIG) (seed 002); one lcore",
	.flags = MP_WL_SINGLE,
	.describe = contig_describe,
	.metrics = contig_metrics,
	.applies = contig_applies,
	.run = contig_run,
};

/* held */

static unsigned int
held_4k(const struct mp_config *cfg)
{
	return cfg->quick ? 2000 : 20000;
}

static unsigned int
held_64k(const struct mp_config *cfg)
{
	return cfg->quick ? 200 : 2000;
}

static void
held_describe(const struct mp_config *cfg, char *buf, size_t len)
{
	snprintf(buf, len, "held: memory for %u x alloc(4096, 4096), then %u x alloc(65536, 65536)",
		held_4k(cfg), held_64k(cfg));
}

static const char *const held_names[] = {"live", "heap growth", "held", "held/live"};
static const char *const held_units[] = {"MiB", "MiB", "MiB", "x"};

static unsigned int
held_metrics(const struct mp_config *cfg, struct mp_metric *m)
{
	unsigned int i, k, n = 0;

	RTE_SET_USED(cfg);
	for (k = 0; k < 2; k++)
		for (i = 0; i < RTE_DIM(held_names); i++) {
			snprintf(m[n].name, sizeof(m[n].name), "%s: %s", k ? "64K/64K" : "4K/4K",
				held_names[i]);
			m[n].unit = held_units[i];
			m[n++].flags = MP_M_TABLE | (i >= 2 ? MP_M_LOWER | MP_M_OPT : 0);
		}
	return n;
}

/* Held below live cannot be: memory there before the run was reused (RSS: pages
 * a trim left resident; a heap: a free range other than the largest one). */
#define HELD_TOLERANCE 0.99

static int
held_case(const struct mp_backend *be, unsigned int n, size_t size, double *out)
{
	struct mp_memory m0, m1;
	void **blocks = mp_ptr_array(n);
	unsigned int i;
	int rc = 0;

	if (blocks == NULL)
		return -ENOMEM;
	/* retained empty memory would hide growth; EAL's heap cannot be trimmed */
	if (be->trim != NULL)
		rc = be->trim();
	mp_backend_memory(be, &m0);
	for (i = 0; i < n && rc == 0; i++) {
		blocks[i] = be->malloc(MP_TYPE, size, size);
		if (blocks[i] == NULL)
			rc = -ENOMEM;
		else if (m0.rss)
			mp_touch(blocks[i], size);
	}
	mp_backend_memory(be, &m1);
	out[0] = (double)n * size / MP_MIB;
	out[1] = (m1.total - m0.total) / MP_MIB;
	out[2] = (m1.held - m0.held) / MP_MIB;
	out[3] = out[2] / out[0];
	if (rc == 0 && out[2] < out[0] * HELD_TOLERANCE) {
		fprintf(stderr,
			"held: %s: %.1f MiB held for %.1f MiB live: memory from before the run "
			"was reused (%s); no figure\n",
			be->name, out[2], out[0],
			m0.rss ? "pages left resident" : "a free range other than the largest");
		out[2] = out[3] = NAN;
	}
	mp_free_all(be, blocks, n);
	free(blocks);
	if (be->trim != NULL && rc == 0)
		rc = be->trim();
	return rc;
}

static int
held_run(struct mp_run *r, struct mp_lcore *lc)
{
	int rc = held_case(r->be, held_4k(r->cfg), 4096, &lc->out[0]);

	return rc != 0 ? rc : held_case(r->be, held_64k(r->cfg), 65536, &lc->out[4]);
}

const struct mp_workload mp_wl_held = {
	.name = "held",
	.help = "memory held for 20000 x 4K/4K, then 2000 x 64K/64K: heap\n"
		"size less its largest free range (hpm, rte), RSS growth\n"
		"with every page written (libc-style peers); one lcore",
	.flags = MP_WL_SINGLE | MP_WL_TRIM,
	.describe = held_describe,
	.metrics = held_metrics,
	.run = held_run,
};
