/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * pthreads: the burst workload (single calls) on threads that are not EAL
 * lcores, as an application's own threads are: made with pthread_create(),
 * never registered with EAL (rte_lcore_id() is LCORE_ID_ANY in them). The
 * run's lcore bursts first (the reference), then one plain pthread, then two
 * at once. Thread k is pinned to the CPUs of the k-th lcore of EAL's list
 * (the run's lcore first), so that two threads have two CPUs when EAL has
 * two lcores, and one thread runs where the lcore ran. Figures: ns per block
 * on the lcore, on one pthread and on each of two; the aggregate of one and
 * of two pthreads; 2 vs 1, and one pthread's time over the lcore's.
 */

#define _GNU_SOURCE /* pthread_attr_setaffinity_np, rte_cpuset_t */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_lcore.h>

#include "malloc_perf.h"

#define PT_MAX_CASES 8u
#define PT_THREADS 2u
#define PT_WARM_BURSTS 64u

enum {
	M_LCORE_NS,
	M_ONE_NS,
	M_TWO_NS,
	M_ONE_RATE,
	M_TWO_RATE,
	M_SCALING,
	M_VS_LCORE,
	M_COUNT,
};

static const struct mp_case pt_defaults[] = {
	{64, 0, NULL},
	{4096, 4096, NULL},
};

/* The threads start their timed loops together: once expect (0: not known yet) are ready. */
struct pt_start {
	unsigned int ready;
	unsigned int expect;
};

struct pt_thread {
	pthread_t tid;
	struct mp_run *r;
	const struct mp_case *c;
	struct pt_start *start;
	struct mp_lcore lc; /* its own progress, which the stats line does not see */
	double ns;
	int rc;
} __rte_cache_aligned;

static void
pt_describe(const struct mp_config *cfg, char *buf, size_t len)
{
	snprintf(buf, len,
		"pthreads: bursts of %u allocations then their frees (single calls) on lcore %u, "
		"then on 1 and on %u plain pthreads (not EAL lcores) at once",
		cfg->burst, cfg->lcores[0], PT_THREADS);
}

static unsigned int
pt_metrics(const struct mp_config *cfg, struct mp_metric *m)
{
	static const struct {
		const char *name, *unit;
		unsigned int flags;
	} d[M_COUNT] = {
		[M_LCORE_NS] = {"lcore", "ns/block", MP_M_TABLE | MP_M_LOWER},
		[M_ONE_NS] = {"1 pthread", "ns/block", MP_M_TABLE | MP_M_LOWER},
		[M_TWO_NS] = {"each of 2", "ns/block", MP_M_LOWER},
		[M_ONE_RATE] = {"1 pthread", "Mblocks/s", MP_M_HIGHER},
		[M_TWO_RATE] = {"2 pthreads", "Mblocks/s", MP_M_TABLE | MP_M_HIGHER},
		[M_SCALING] = {"2 vs 1", "x", MP_M_TABLE | MP_M_HIGHER},
		[M_VS_LCORE] = {"vs lcore", "x", MP_M_TABLE | MP_M_LOWER | MP_M_NORATIO},
	};
	struct mp_case cases[PT_MAX_CASES];
	char names[PT_MAX_CASES][MP_NAME_LEN];
	unsigned int nc = mp_cases(cfg, pt_defaults, RTE_DIM(pt_defaults), cases, names);
	unsigned int i, k, n = 0;

	for (i = 0; i < nc; i++)
		for (k = 0; k < M_COUNT; k++) {
			snprintf(m[n].name, sizeof(m[n].name), "%s, %s", cases[i].name, d[k].name);
			m[n].unit = d[k].unit;
			m[n++].flags = d[k].flags;
		}
	return n;
}

static unsigned int
warm_bursts(const struct mp_run *r)
{
	return r->cfg->quick ? PT_WARM_BURSTS / 8 : PT_WARM_BURSTS;
}

static void *
pt_main(void *arg)
{
	struct pt_thread *t = arg;
	double warm;

	t->rc = rte_lcore_id() == LCORE_ID_ANY ? 0 : -EINVAL;
	/* a timed warm-up, as scale's: a short first loop runs slower on a VM */
	if (t->rc == 0)
		t->rc = mp_burst_loop(t->r, &t->lc, t->c, false, warm_bursts(t->r), true, &warm);
	__atomic_add_fetch(&t->start->ready, 1, __ATOMIC_ACQ_REL);
	for (;;) {
		unsigned int expect = __atomic_load_n(&t->start->expect, __ATOMIC_ACQUIRE);

		if (expect != 0 && __atomic_load_n(&t->start->ready, __ATOMIC_ACQUIRE) >= expect)
			break;
		/* threads may share a CPU (EAL with one lcore): let the others run */
		sched_yield();
	}
	if (t->rc == 0)
		t->rc = mp_burst_loop(t->r, &t->lc, t->c, false, 4, true, &t->ns);
	return NULL;
}

/* n plain pthreads at once: ns per block on each (mean) and Mblocks/s together. */
static int
pt_threads(struct mp_run *r, const struct mp_case *c, unsigned int n, double *ns, double *rate)
{
	struct pt_thread t[PT_THREADS];
	unsigned int ids[RTE_MAX_LCORE], nids = mp_run_lcores(r->cfg, MP_WL_ALL, ids), i, made;
	struct pt_start start = {0, 0};
	pthread_attr_t attr;
	int rc = 0;

	for (made = 0; made < n; made++) {
		rte_cpuset_t cpus = rte_lcore_cpuset(ids[made % nids]);

		memset(&t[made], 0, sizeof(t[made]));
		t[made].r = r;
		t[made].c = c;
		t[made].start = &start;
		t[made].ns = NAN;
		rc = pthread_attr_init(&attr);
		if (rc == 0) {
			rc = pthread_attr_setaffinity_np(&attr, sizeof(cpus), &cpus);
			if (rc == 0)
				rc = pthread_create(&t[made].tid, &attr, pt_main, &t[made]);
			pthread_attr_destroy(&attr);
		}
		if (rc != 0) {
			fprintf(stderr, " (pthreads: cannot start a thread: %s)", strerror(rc));
			rc = -rc;
			break;
		}
	}
	/* go, with the threads there are */
	__atomic_store_n(&start.expect, RTE_MAX(made, 1u), __ATOMIC_RELEASE);
	*ns = 0;
	*rate = 0;
	for (i = 0; i < made; i++) {
		pthread_join(t[i].tid, NULL);
		if (rc == 0)
			rc = t[i].rc;
		*ns += t[i].ns / n;
		*rate += 1e3 / t[i].ns;
	}
	return rc;
}

static int
pt_run(struct mp_run *r, struct mp_lcore *lc)
{
	struct mp_case cases[PT_MAX_CASES];
	char names[PT_MAX_CASES][MP_NAME_LEN];
	unsigned int nc = mp_cases(r->cfg, pt_defaults, RTE_DIM(pt_defaults), cases, names);
	unsigned int i;
	double warm;
	int rc = 0;

	for (i = 0; i < nc && rc == 0; i++) {
		double *out = &lc->out[i * M_COUNT];
		double lcore_ns = NAN, ns1 = NAN, ns2 = NAN, rate1 = NAN, rate2 = NAN;

		/* the pool (rte_mempool) holds the lcore's cache and a burst per thread */
		rc = mp_prepare(r, lc, cases[i].size, cases[i].align,
			(PT_THREADS + 1) * r->cfg->burst);
		if (rc == 0)
			rc = mp_burst_loop(r, lc, &cases[i], false, warm_bursts(r), true, &warm);
		if (rc == 0)
			rc = mp_burst_loop(r, lc, &cases[i], false, 4, true, &lcore_ns);
		if (rc == 0)
			rc = pt_threads(r, &cases[i], 1, &ns1, &rate1);
		if (rc == 0)
			rc = pt_threads(r, &cases[i], PT_THREADS, &ns2, &rate2);
		mp_unprepare(r, lc);
		if (rc != 0)
			break;
		out[M_LCORE_NS] = lcore_ns;
		out[M_ONE_NS] = ns1;
		out[M_TWO_NS] = ns2;
		out[M_ONE_RATE] = rate1;
		out[M_TWO_RATE] = rate2;
		out[M_SCALING] = rate2 / rate1;
		out[M_VS_LCORE] = ns1 / lcore_ns;
	}
	return rc;
}

const struct mp_workload mp_wl_pthreads = {
	.name = "pthreads",
	.help = "bursts of --burst single calls, 64 B and 4K/4K (or\n"
		"--size/--align), on an lcore, then on 1 and on 2 plain\n"
		"pthreads (never registered with EAL) at once: ns/block,\n"
		"2 vs 1, and a pthread's time over the lcore's",
	.flags = MP_WL_SINGLE | MP_WL_FIXED | MP_WL_NOALLOC,
	.describe = pt_describe,
	.metrics = pt_metrics,
	.run = pt_run,
};
