/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * paced: allocations at a target rate, as packets arrive at line rate (14.88
 * Mpps is 10 GbE, 148.8 Mpps 100 GbE, 64-byte frames). A token bucket on
 * each lcore makes one operation (alloc+free of a block) due every 1/rate;
 * the lcore waits for it, runs it and times it with rdtsc into a histogram.
 * An operation that starts more than one period after it was due is late;
 * when more than a descriptor ring's worth (512) are due at once, the excess
 * is dropped, as a NIC drops what its ring cannot hold.
 */

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>

#include "malloc_perf.h"

#define PACED_DEPTH 512u
#define PACED_FP 16 /* fraction bits of the due time */
#define PACED_SIZE 2048u

enum {
	M_TARGET,
	M_ACHIEVED,
	M_LATE,
	M_DROPPED,
	M_P50,
	M_P99,
	M_P999,
	M_MAX,
	M_COUNT,
};

static void
paced_case(const struct mp_config *cfg, size_t *size, unsigned int *align)
{
	*size = cfg->size != 0 ? cfg->size : PACED_SIZE;
	*align = cfg->size != 0 ? cfg->align : 0;
}

static void
paced_describe(const struct mp_config *cfg, char *buf, size_t len)
{
	char cs[MP_NAME_LEN];
	size_t size;
	unsigned int align;

	paced_case(cfg, &size, &align);
	mp_case_name(cs, sizeof(cs), size, align);
	snprintf(buf, len,
		"paced: alloc+free of %s at %g M/s per lcore on %u lcore%s; latency of each "
		"(rdtsc, with its own cost)",
		cs, cfg->rate, cfg->nlcores, cfg->nlcores > 1 ? "s" : "");
}

static unsigned int
paced_metrics(const struct mp_config *cfg, struct mp_metric *m)
{
	static const struct {
		const char *name, *unit;
		unsigned int flags;
	} d[M_COUNT] = {
		[M_TARGET] = {"target", "Mops/s", MP_M_SUM | MP_M_NORATIO},
		[M_ACHIEVED] = {"achieved", "Mops/s", MP_M_SUM | MP_M_HIGHER},
		[M_LATE] = {"late", "%", MP_M_LOWER | MP_M_NORATIO},
		[M_DROPPED] = {"dropped", "%", MP_M_LOWER | MP_M_NORATIO},
		[M_P50] = {"latency p50", "ns", MP_M_LOWER | MP_M_MAX},
		[M_P99] = {"latency p99", "ns", MP_M_LOWER | MP_M_MAX},
		[M_P999] = {"latency p99.9", "ns", MP_M_LOWER | MP_M_MAX},
		[M_MAX] = {"latency max", "ns", MP_M_LOWER | MP_M_MAX},
	};
	unsigned int i;

	RTE_SET_USED(cfg);
	for (i = 0; i < M_COUNT; i++) {
		snprintf(m[i].name, sizeof(m[i].name), "%s", d[i].name);
		m[i].unit = d[i].unit;
		m[i].flags = d[i].flags | MP_M_TABLE;
	}
	return M_COUNT;
}

static int
paced_run(struct mp_run *r, struct mp_lcore *lc)
{
	const struct mp_backend *be = r->be;
	double hz = (double)rte_get_tsc_hz(), period = hz / (r->cfg->rate * 1e6);
	uint64_t period_fp = (uint64_t)(period * (1 << PACED_FP));
	uint64_t due_fp = 0, done = 0, late = 0, dropped = 0, start, now, due, t1 = 0;
	struct mp_hist *h = lc->hist;
	unsigned int align, k;
	void *p;
	size_t size;
	int rc;

	paced_case(r->cfg, &size, &align);
	rc = mp_prepare(r, lc, size, align, 1);
	for (k = 0; k < 1000 && rc == 0; k++) {
		p = be->malloc(MP_TYPE, size, align);
		if (p == NULL)
			rc = -ENOMEM;
		be->free(p);
	}
	mp_barrier(r);
	if (rc != 0 || period_fp == 0)
		goto out;
	start = rte_rdtsc();
	do {
		due = start + (due_fp >> PACED_FP);
		/* an operation due past the budget is not waited for: the run would overrun */
		if (r->iters == 0 && due - start >= r->budget)
			break;
		do
			now = rte_rdtsc();
		while (now < due && !mp_stop);
		if (now < due)
			break;
		if (unlikely(now - due > period)) {
			uint64_t missed = (uint64_t)((double)(now - due) / period);

			late++;
			if (missed > PACED_DEPTH) {
				dropped += missed - PACED_DEPTH;
				due_fp += (missed - PACED_DEPTH) * period_fp;
			}
		}
		p = be->malloc(MP_TYPE, size, align);
		if (unlikely(p == NULL)) {
			rc = -ENOMEM;
			break;
		}
		be->free(p);
		t1 = rte_rdtsc();
		mp_hist_add(h, t1 - now);
		due_fp += period_fp;
		if ((++done & 1023) == 0)
			mp_progress(lc, done);
	} while (mp_more(r, done, t1 - start));
	if (rc == 0 && done > 0) {
		double ns_per_cycle = 1e9 / hz;
		/*
		 * done operations hold done + dropped periods of the bucket (the
		 * last one's included): done / (t1 - start) made 2 operations at 1/s
		 * 2/s; late ones stretch the time past that
		 */
		double span = RTE_MAX((double)(t1 - start), (double)(done + dropped) * period);

		lc->out[M_TARGET] = r->cfg->rate;
		lc->out[M_ACHIEVED] = (double)done * hz / span / 1e6;
		lc->out[M_LATE] = 100.0 * (double)late / (double)done;
		lc->out[M_DROPPED] = 100.0 * (double)dropped / (double)(done + dropped);
		lc->out[M_P50] = mp_hist_quantile(h, 0.5) * ns_per_cycle;
		lc->out[M_P99] = mp_hist_quantile(h, 0.99) * ns_per_cycle;
		lc->out[M_P999] = mp_hist_quantile(h, 0.999) * ns_per_cycle;
		lc->out[M_MAX] = (double)h->max * ns_per_cycle;
	}
out:
	mp_unprepare(r, lc);
	return rc;
}

const struct mp_workload mp_wl_paced = {
	.name = "paced",
	.help = "alloc+free of 2 KiB (or --size/--align) at --rate M/s per\n"
		"lcore (default 14.88; 148.8 for 100 GbE) from a token\n"
		"bucket: achieved rate, late and dropped operations, latency\n"
		"p50/p99/p99.9/max (rdtsc histograms); every lcore at once;\n"
		"none is the baseline",
	.flags = MP_WL_FIXED | MP_WL_NOALLOC | MP_WL_BASELINE | MP_WL_HIST,
	.describe = paced_describe,
	.metrics = paced_metrics,
	.run = paced_run,
};
