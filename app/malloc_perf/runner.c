/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The runner: every selected workload on every backend that applies, for
 * each repetition (the order of the backends rotates), on the workload's
 * lcores at once (rte_eal_remote_launch; the main lcore runs its part itself
 * when it is selected and free). Per-lcore figures are reduced to one value
 * per run: summed (rates), the maximum, or averaged. It prints each
 * workload's table when it ends; its caller starts the stats line (stats.c,
 * which watches the runs through control.c) and prints the summary.
 */

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include "malloc_perf.h"

static struct mp_lcore lcs[RTE_MAX_LCORE];
static struct mp_hist *lc_hist[RTE_MAX_LCORE];

/* workloads whose setup() ran, for teardown at exit */
static const struct mp_workload *set_up[MP_MAX_WORKLOADS];
static unsigned int nset_up;

struct launch {
	const struct mp_workload *wl;
	struct mp_run *run;
	struct mp_lcore *lc;
	/* posted when a remote lcore's part ends; NULL for the main lcore's own */
	sem_t *done;
};

static struct launch launches[RTE_MAX_LCORE];

static int
worker_main(void *arg)
{
	struct launch *l = arg;

	l->lc->rc = l->wl->run(l->run, l->lc);
	if (l->done != NULL)
		sem_post(l->done);
	return 0;
}

/* Live blocks of a heap backend, all sockets; 0 for the others. */
static uint64_t
live_blocks(const struct mp_backend *be)
{
	uint64_t n = 0;
	unsigned int i;

	if (be->socket_stats == NULL || (be->flags & MP_BE_FIXED))
		return 0;
	for (i = 0; i < rte_socket_count(); i++) {
		struct rte_malloc_socket_stats st;

		if (be->socket_stats(rte_socket_id_by_idx(i), &st) == 0)
			n += st.alloc_count;
	}
	return n;
}

/* --check: the heap is consistent and every block of the run was freed. */
static int
check_after(const struct mp_backend *be, uint64_t live_before)
{
	uint64_t live = live_blocks(be);

	if (be->check != NULL && be->check() != 0) {
		fprintf(stderr, " (heap check failed)");
		return -EFAULT;
	}
	if (live != live_before) {
		fprintf(stderr, " (%" PRIu64 " live blocks before the run, %" PRIu64 " after)",
			live_before, live);
		return -EFAULT;
	}
	return 0;
}

/* One run of a workload on a backend, on nlc lcores; out[] gets the reduced figures. */
static int
run_once(const struct mp_workload *wl, const struct mp_config *cfg, const struct mp_backend *be,
	const struct mp_results *res, unsigned int rep, double *out, struct mp_hist *hist)
{
	struct mp_run run;
	unsigned int i, m, self = rte_lcore_id(), nlc = res->nlc;
	int self_idx = -1, rc;
	unsigned int launched = 0;
	sem_t done;
	uint64_t live = 0;

	rc = be->attach != NULL ? be->attach() : 0;
	/* before the count of live blocks: trimming rte releases hpmalloc's memzones */
	if (rc == 0 && (wl->flags & MP_WL_TRIM) && be->trim != NULL)
		rc = be->trim();
	if (rc != 0)
		return rc;
	if (cfg->check)
		live = live_blocks(be);
	memset(&run, 0, sizeof(run));
	run.be = be;
	run.cfg = cfg;
	run.metrics = res->metrics;
	run.nmetrics = res->nmetrics;
	run.rep = rep;
	run.nlc = nlc;
	run.lc = lcs;
	run.budget = mp_budget_cycles(cfg);
	run.iters = cfg->iterations;
	for (i = 0; i < nlc; i++) {
		struct mp_lcore *lc = &lcs[i];

		lc->lcore_id = res->lcores[i];
		lc->idx = i;
		lc->ops = 0;
		lc->rc = 0;
		lc->rng = mp_lcore_seed(cfg, rep, i);
		for (m = 0; m < MP_MAX_METRICS; m++)
			lc->out[m] = NAN;
		lc->hist = NULL;
		if (wl->flags & MP_WL_HIST) {
			if (lc_hist[i] == NULL)
				lc_hist[i] = malloc(sizeof(*lc_hist[i]));
			if (lc_hist[i] == NULL)
				return -ENOMEM;
			mp_hist_reset(lc_hist[i]);
			lc->hist = lc_hist[i];
		}
		launches[i].wl = wl;
		launches[i].run = &run;
		launches[i].lc = lc;
		launches[i].done = NULL;
	}
	for (i = 0; i < nlc; i++) {
		if (res->lcores[i] == self) {
			self_idx = (int)i;
		} else if (rte_eal_get_lcore_state(res->lcores[i]) != WAIT) {
			fprintf(stderr, " (lcore %u is busy)", res->lcores[i]);
			return -EBUSY;
		}
	}
	if (sem_init(&done, 0, 0) != 0)
		return -errno;
	mp_status_set(wl->name, be, rep, cfg->repeat, nlc, lcs);
	for (i = 0; i < nlc; i++)
		if ((int)i != self_idx) {
			launches[i].done = &done;
			if (rte_eal_remote_launch(worker_main, &launches[i], res->lcores[i]) == 0)
				launched++;
			else
				lcs[i].rc = -EBUSY;
		}
	if (self_idx >= 0)
		worker_main(&launches[self_idx]);
	/*
	 * Block rather than spin or poll: the main lcore may share a CPU with a
	 * worker or with a thread a workload made (pthreads' second thread runs
	 * on the main lcore's CPU). Waking every 100 us to poll (5670 times a
	 * second), it cost that thread's 64 B bursts 7.7-9.6 ns per block
	 * against 7.2 now (2 vs 1 pthreads 1.77-1.86 -> 1.96-1.97).
	 */
	for (i = 0; i < launched; i++)
		while (sem_wait(&done) != 0 && errno == EINTR)
			;
	for (i = 0; i < nlc; i++)
		if ((int)i != self_idx)
			rte_eal_wait_lcore(res->lcores[i]);
	sem_destroy(&done);
	mp_status_set(NULL, NULL, 0, 0, 0, lcs);
	for (i = 0; i < nlc && rc == 0; i++)
		rc = lcs[i].rc;
	if (rc == 0 && cfg->check)
		rc = check_after(be, live);
	if (rc != 0)
		return rc;
	for (m = 0; m < res->nmetrics; m++) {
		unsigned int flags = res->metrics[m].flags, n = 0;
		double acc = 0;

		for (i = 0; i < nlc; i++) {
			double v = lcs[i].out[m];

			if (isnan(v))
				continue;
			if (flags & MP_M_MAX)
				acc = n == 0 ? v : RTE_MAX(acc, v);
			else
				acc += v;
			n++;
		}
		if (n == 0)
			out[m] = NAN;
		else if (flags & (MP_M_SUM | MP_M_MAX))
			out[m] = acc;
		else
			out[m] = acc / n;
	}
	if (hist != NULL)
		for (i = 0; i < nlc; i++)
			mp_hist_merge(hist, lcs[i].hist);
	return 0;
}

static int
setup_once(const struct mp_workload *wl, const struct mp_config *cfg)
{
	unsigned int i;
	int rc;

	if (wl->setup == NULL)
		return 0;
	for (i = 0; i < nset_up; i++)
		if (set_up[i] == wl)
			return 0;
	/* what setup() keeps in EAL's heap must not split the memory hpmalloc had */
	mp_backend_release_eal();
	rc = wl->setup(cfg);
	if (rc == 0 && nset_up < MP_MAX_WORKLOADS)
		set_up[nset_up++] = wl;
	return rc;
}

void
mp_workloads_teardown(void)
{
	while (nset_up > 0)
		set_up[--nset_up]->teardown();
}

/* The backends of one workload: those of cfg that apply, and `none` as a baseline. */
static void
choose_backends(const struct mp_workload *wl, const struct mp_config *cfg, struct mp_results *res)
{
	const struct mp_backend *none = mp_backend_find("none");
	bool have_none = false;
	const char *why;
	unsigned int i;

	for (i = 0; i < cfg->nbackends; i++) {
		const struct mp_backend *be = cfg->backends[i];

		have_none |= be == none;
		if (mp_workload_applies(wl, cfg, be, &why)) {
			res->backends[res->nbackends++] = be;
		} else {
			res->skipped[res->nskipped] = be;
			res->skipped_why[res->nskipped++] = why;
		}
	}
	if ((wl->flags & MP_WL_BASELINE) && !have_none && none != NULL &&
		res->nbackends < MP_MAX_BACKENDS)
		res->backends[res->nbackends++] = none;
}

static int
run_workload(const struct mp_workload *wl, const struct mp_config *cfg, struct mp_results *res)
{
	unsigned int rep, k, m, b;
	size_t nvalues, i;
	int rc;

	memset(res, 0, sizeof(*res));
	res->wl = wl;
	res->nreps = cfg->repeat;
	res->nmetrics = wl->metrics(cfg, res->metrics);
	res->ref = mp_reference(cfg);
	choose_backends(wl, cfg, res);
	res->nlc = mp_run_lcores(cfg, wl->flags, res->lcores);
	nvalues = (size_t)res->nmetrics * RTE_MAX(res->nbackends, 1u) * res->nreps;
	res->values = malloc(sizeof(*res->values) * nvalues);
	if (res->values == NULL)
		return -ENOMEM;
	for (i = 0; i < nvalues; i++)
		res->values[i] = NAN;
	if (wl->flags & MP_WL_HIST)
		for (b = 0; b < res->nbackends; b++) {
			res->hist[b] = calloc(1, sizeof(*res->hist[b]));
			if (res->hist[b] == NULL)
				return -ENOMEM;
		}
	snprintf(res->title, sizeof(res->title), "%s", wl->name);
	rc = setup_once(wl, cfg);
	if (rc != 0) {
		fprintf(stderr, "%s: cannot set up: %s\n", wl->name, strerror(-rc));
		res->failures++;
		return rc;
	}
	wl->describe(cfg, res->title, sizeof(res->title));
	for (rep = 0; rep < res->nreps && !mp_stop; rep++) {
		/* one line per repetition, when it is done: the stats line does not cut it */
		char line[512];
		size_t off = snprintf(line, sizeof(line), "%s: repetition %u/%u:", wl->name,
			rep + 1, res->nreps);

		for (k = 0; k < res->nbackends && !mp_stop; k++) {
			/* rotate the order so that no backend always runs first */
			double out[MP_MAX_METRICS];

			b = (k + rep) % res->nbackends;
			for (m = 0; m < MP_MAX_METRICS; m++)
				out[m] = NAN;
			rc = run_once(wl, cfg, res->backends[b], res, rep, out, res->hist[b]);
			if (off < sizeof(line))
				off += snprintf(line + off, sizeof(line) - off, " %s%s%s",
					res->backends[b]->name, rc != 0 ? " (failed: " : "",
					rc != 0 ? strerror(-rc) : "");
			if (rc != 0) {
				if (off < sizeof(line))
					off += snprintf(line + off, sizeof(line) - off, ")");
				res->failures++;
				continue;
			}
			for (m = 0; m < res->nmetrics; m++)
				*mp_value(res, m, b, rep) = out[m];
		}
		fprintf(stderr, "%s%s\n", line, mp_stop ? " (stopped)" : "");
	}
	res->stopped = mp_stop != 0;
	if (wl->derive != NULL)
		wl->derive(res);
	mp_report_table(res);
	return res->failures ? -EIO : 0;
}

int
mp_run_all(const struct mp_config *cfg, struct mp_results *res, unsigned int *nres)
{
	unsigned int i;
	int status_rc = 0;

	*nres = 0;
	mp_status_begin();
	for (i = 0; i < cfg->nworkloads && !mp_stop; i++) {
		if (run_workload(cfg->workloads[i], cfg, &res[i]) != 0)
			status_rc = -EIO;
		*nres = i + 1;
	}
	return status_rc;
}

void
mp_results_free(struct mp_results *res, unsigned int nres)
{
	unsigned int i, b;

	for (i = 0; i < nres; i++) {
		free(res[i].values);
		res[i].values = NULL;
		for (b = 0; b < MP_MAX_BACKENDS; b++) {
			free(res[i].hist[b]);
			res[i].hist[b] = NULL;
		}
	}
}
