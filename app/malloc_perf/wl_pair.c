/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Throughput on every selected lcore at once: pair (alloc+free of one block),
 * burst (a burst of allocations, then their frees: a loop of single calls and
 * the bulk API), and scale (burst on one lcore, then on all of them: the
 * ratio is how the allocator scales).
 */

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>

#include "malloc_perf.h"

#define MAX_CASES 8u
#define WARM_PAIRS 1000u
#define WARM_BURSTS 64u

/* pair */

static const struct mp_case pair_defaults[] = {
	{64, 0, NULL},
	{1000, 0, NULL},
	{4096, 4096, NULL},
	{65536, 65536, NULL},
	{2u << 20, 2u << 20, NULL},
};

static void
pair_describe(const struct mp_config *cfg, char *buf, size_t len)
{
	char lc[64];

	mp_lcores_str(cfg, 0, lc, sizeof(lc));
	snprintf(buf, len, "pair: alloc+free of one block after a warm-up, on %s at once", lc);
}

static unsigned int
pair_metrics(const struct mp_config *cfg, struct mp_metric *m)
{
	struct mp_case cases[MAX_CASES];
	char names[MAX_CASES][MP_NAME_LEN];
	unsigned int nc = mp_cases(cfg, pair_defaults, RTE_DIM(pair_defaults), cases, names);
	unsigned int i, n = 0;

	for (i = 0; i < nc; i++) {
		snprintf(m[n].name, sizeof(m[n].name), "%s", cases[i].name);
		m[n].unit = "ns/pair";
		m[n++].flags = MP_M_TABLE | MP_M_LOWER;
	}
	for (i = 0; i < nc; i++) {
		snprintf(m[n].name, sizeof(m[n].name), "%s", cases[i].name);
		m[n].unit = "Mpairs/s";
		m[n++].flags = MP_M_SUM | MP_M_HIGHER | (cfg->nlcores > 1 ? MP_M_TABLE : 0);
	}
	return n;
}

static int
pair_run(struct mp_run *r, struct mp_lcore *lc)
{
	struct mp_case cases[MAX_CASES];
	char names[MAX_CASES][MP_NAME_LEN];
	unsigned int nc = mp_cases(r->cfg, pair_defaults, RTE_DIM(pair_defaults), cases, names);
	unsigned int i, k, warm = r->cfg->quick ? WARM_PAIRS / 10 : WARM_PAIRS;
	int rc = 0, prc;

	for (i = 0; i < nc; i++) {
		double ns = NAN;

		prc = mp_prepare(r, lc, cases[i].size, cases[i].align, 1);
		for (k = 0; k < warm && rc == 0 && prc == 0; k++) {
			void *p = r->be->malloc(MP_TYPE, cases[i].size, cases[i].align);

			if (p == NULL)
				rc = -ENOMEM;
			r->be->free(p);
		}
		mp_barrier(r);
		if (rc == 0 && prc == 0)
			rc = mp_pair_loop(r, lc, cases[i].size, cases[i].align, 64, &ns, NULL);
		lc->out[i] = ns;
		lc->out[nc + i] = 1e3 / ns;
		mp_unprepare(r, lc);
		if (rc == 0)
			rc = prc;
	}
	return rc;
}

const struct mp_workload mp_wl_pair = {
	.name = "pair",
	.help = "alloc+free pairs after a warm-up: 64 B, 1000 B, 4K/4K,\n"
		"64K/64K, 2M/2M (or --size/--align); every lcore at once",
	.flags = MP_WL_FIXED | MP_WL_NOALLOC,
	.describe = pair_describe,
	.metrics = pair_metrics,
	.run = pair_run,
};

/* burst */

static const struct mp_case burst_defaults[] = {
	{64, 0, NULL},
	{4096, 4096, NULL},
	{65536, 65536, NULL},
};

static void
burst_describe(const struct mp_config *cfg, char *buf, size_t len)
{
	char lc[64];

	mp_lcores_str(cfg, 0, lc, sizeof(lc));
	snprintf(buf, len,
		"burst: %u allocations then their %u frees, a loop of single calls and the bulk "
		"API, on %s at once",
		cfg->burst, cfg->burst, lc);
}

static unsigned int
burst_metrics(const struct mp_config *cfg, struct mp_metric *m)
{
	struct mp_case cases[MAX_CASES];
	char names[MAX_CASES][MP_NAME_LEN];
	unsigned int nc = mp_cases(cfg, burst_defaults, RTE_DIM(burst_defaults), cases, names);
	unsigned int i, n = 0, bulk;

	for (bulk = 0; bulk < 2; bulk++)
		for (i = 0; i < nc; i++) {
			snprintf(m[n].name, sizeof(m[n].name), "%u x %s%s", cfg->burst,
				cases[i].name, bulk ? " bulk" : "");
			m[n].unit = "ns/block";
			m[n++].flags = MP_M_TABLE | MP_M_LOWER;
		}
	for (bulk = 0; bulk < 2; bulk++)
		for (i = 0; i < nc; i++) {
			snprintf(m[n].name, sizeof(m[n].name), "%u x %s%s", cfg->burst,
				cases[i].name, bulk ? " bulk" : "");
			m[n].unit = "Mblocks/s";
			m[n++].flags = MP_M_SUM | MP_M_HIGHER | (cfg->nlcores > 1 ? MP_M_TABLE : 0);
		}
	return n;
}

static unsigned int
warm_bursts(const struct mp_run *r)
{
	return r->cfg->quick ? WARM_BURSTS / 8 : WARM_BURSTS;
}

static int
burst_run(struct mp_run *r, struct mp_lcore *lc)
{
	struct mp_case cases[MAX_CASES];
	char names[MAX_CASES][MP_NAME_LEN];
	unsigned int nc = mp_cases(r->cfg, burst_defaults, RTE_DIM(burst_defaults), cases, names);
	unsigned int i, bulk;
	double warm;
	int rc = 0, prc;

	for (i = 0; i < nc; i++) {
		prc = mp_prepare(r, lc, cases[i].size, cases[i].align, r->cfg->burst);
		for (bulk = 0; bulk < 2; bulk++) {
			double ns = NAN;

			if (rc == 0 && prc == 0)
				rc = mp_burst_loop(r, lc, &cases[i], bulk, warm_bursts(r), false,
					&warm);
			mp_barrier(r);
			if (rc == 0 && prc == 0)
				rc = mp_burst_loop(r, lc, &cases[i], bulk, 4, true, &ns);
			lc->out[bulk * nc + i] = ns;
			lc->out[2 * nc + bulk * nc + i] = 1e3 / ns;
		}
		mp_unprepare(r, lc);
		if (rc == 0)
			rc = prc;
	}
	return rc;
}

const struct mp_workload mp_wl_burst = {
	.name = "burst",
	.help = "--burst (32) allocations then their frees: 64 B, 4K/4K,\n"
		"64K/64K (or --size/--align); a loop of single calls, and\n"
		"bulk: hpm_malloc_bulk/hpm_free_bulk, rte_mempool_get_bulk/\n"
		"put_bulk (the others loop); every lcore at once",
	.flags = MP_WL_FIXED | MP_WL_NOALLOC,
	.describe = burst_describe,
	.metrics = burst_metrics,
	.run = burst_run,
};

/* scale */

static struct mp_case
scale_case(const struct mp_config *cfg)
{
	struct mp_case c = {4096, 4096, NULL};

	if (cfg->size != 0) {
		c.size = cfg->size;
		c.align = cfg->align;
	}
	return c;
}

static void
scale_describe(const struct mp_config *cfg, char *buf, size_t len)
{
	struct mp_case c = scale_case(cfg);
	char lc[64], cs[MP_NAME_LEN];

	mp_lcores_str(cfg, MP_WL_ALL, lc, sizeof(lc));
	mp_case_name(cs, sizeof(cs), c.size, c.align);
	snprintf(buf, len, "scale: bursts of %u x %s (single calls) on 1 lcore, then on %s at once",
		cfg->burst, cs, lc);
}

static unsigned int
scale_metrics(const struct mp_config *cfg, struct mp_metric *m)
{
	unsigned int ids[RTE_MAX_LCORE], n = mp_run_lcores(cfg, MP_WL_ALL, ids);

	snprintf(m[0].name, sizeof(m[0].name), "1 lcore");
	m[0].unit = "Mblocks/s";
	m[0].flags = MP_M_TABLE | MP_M_HIGHER | MP_M_SUM;
	snprintf(m[1].name, sizeof(m[1].name), "%u lcore%s", n, n > 1 ? "s" : " (again)");
	m[1].unit = "Mblocks/s";
	m[1].flags = MP_M_TABLE | MP_M_HIGHER | MP_M_SUM;
	snprintf(m[2].name, sizeof(m[2].name), "%u lcore%s vs 1", n, n > 1 ? "s" : "");
	m[2].unit = "x";
	m[2].flags = MP_M_TABLE | MP_M_HIGHER;
	snprintf(m[3].name, sizeof(m[3].name), "%u lcore%s, per lcore", n, n > 1 ? "s" : "");
	m[3].unit = "ns/block";
	m[3].flags = MP_M_LOWER;
	return 4;
}

static int
scale_run(struct mp_run *r, struct mp_lcore *lc)
{
	struct mp_case c = scale_case(r->cfg);
	double ns = NAN, warm;
	int rc, prc;

	prc = mp_prepare(r, lc, c.size, c.align, r->cfg->burst);
	rc = prc;
	/* a timed warm-up on every lcore: a short first loop runs slower on a VM */
	if (rc == 0)
		rc = mp_burst_loop(r, lc, &c, false, warm_bursts(r), true, &warm);
	mp_barrier(r);
	if (lc->idx == 0 && rc == 0) {
		rc = mp_burst_loop(r, lc, &c, false, 4, true, &ns);
		lc->out[0] = 1e3 / ns;
	}
	mp_barrier(r);
	if (rc == 0)
		rc = mp_burst_loop(r, lc, &c, false, 4, true, &ns);
	lc->out[1] = 1e3 / ns;
	lc->out[3] = ns;
	mp_unprepare(r, lc);
	return rc;
}

/* the ratio, repetition by repetition */
static void
scale_derive(struct mp_results *res)
{
	unsigned int b, rep;

	for (b = 0; b < res->nbackends; b++)
		for (rep = 0; rep < res->nreps; rep++)
			*mp_value(res, 2, b, rep) =
				*mp_value(res, 1, b, rep) / *mp_value(res, 0, b, rep);
}

const struct mp_workload mp_wl_scale = {
	.name = "scale",
	.help = "bursts of --burst x 4K/4K (or --size/--align) on one lcore,\n"
		"then on every lcore at once (the main lcore too, except\n"
		"at the prompt): aggregate Mblocks/s and the ratio N vs 1",
	.flags = MP_WL_ALL | MP_WL_FIXED | MP_WL_NOALLOC,
	.describe = scale_describe,
	.metrics = scale_metrics,
	.run = scale_run,
	.derive = scale_derive,
};
