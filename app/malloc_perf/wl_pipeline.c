/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * pipeline: what a DPDK pipeline does with its buffers. One lcore allocates
 * (an RX stage: a burst of single calls) and passes the blocks through an
 * rte_ring to another lcore, which frees them (a TX stage). Every free is of
 * a block that another lcore allocated: what a per-lcore cache must give
 * back to its owner. The lcores of the run go in pairs (0 -> 1, 2 -> 3, ...),
 * each pair with a single-producer single-consumer ring of its own; an odd
 * lcore left over waits. The figure is the blocks the consumers free per
 * second, summed over the pairs; `none` (if asked) gives the ring's own cost.
 */

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_pause.h>
#include <rte_ring.h>

#include "malloc_perf.h"

#define PIPE_RING_SIZE 1024u
#define PIPE_MAX_PAIRS (RTE_MAX_LCORE / 2)
#define PIPE_MAX_CASES 8u
/* blocks through the pipeline before the timed loop, so that both caches are warm */
#define PIPE_WARM_BLOCKS 65536u

static const struct mp_case pipe_defaults[] = {
	{64, 0, NULL},
	{4096, 4096, NULL},
};

/* What the two lcores of a pair share, for one phase. */
struct pipe_pair {
	struct rte_ring *ring;
	uint64_t total; /* blocks the producer enqueued, once done is set */
	int done;
} __rte_cache_aligned;

static struct {
	struct pipe_pair pairs[PIPE_MAX_PAIRS];
	unsigned int npairs;
} pipe;

static unsigned int
pipe_lcores(const struct mp_config *cfg)
{
	unsigned int ids[RTE_MAX_LCORE];

	return mp_run_lcores(cfg, MP_WL_ALL, ids);
}

static void pipe_teardown(void);

static int
pipe_setup(const struct mp_config *cfg)
{
	char name[RTE_RING_NAMESIZE];
	unsigned int i, n = pipe_lcores(cfg) / 2;
	int socket = (int)rte_socket_id();

	if (socket < 0)
		socket = 0;
	for (i = 0; i < n && i < PIPE_MAX_PAIRS; i++) {
		snprintf(name, sizeof(name), "mp_pipe_%u", i);
		pipe.pairs[i].ring = rte_ring_create(name, PIPE_RING_SIZE, socket,
			RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (pipe.pairs[i].ring == NULL) {
			fprintf(stderr, "pipeline: ring: %s\n", rte_strerror(rte_errno));
			pipe_teardown();
			return -ENOMEM;
		}
		pipe.npairs = i + 1;
	}
	return 0;
}

static void
pipe_teardown(void)
{
	unsigned int i;

	for (i = 0; i < pipe.npairs; i++) {
		rte_ring_free(pipe.pairs[i].ring);
		pipe.pairs[i].ring = NULL;
	}
	pipe.npairs = 0;
}

static bool
pipe_applies(const struct mp_config *cfg, const struct mp_backend *be, const char **why)
{
	RTE_SET_USED(be);
	if (pipe_lcores(cfg) < 2) {
		*why = "needs two lcores (EAL -l 0-1)";
		return false;
	}
	return true;
}

static void
pipe_describe(const struct mp_config *cfg, char *buf, size_t len)
{
	unsigned int n = pipe_lcores(cfg);
	char lc[64];

	mp_lcores_str(cfg, MP_WL_ALL, lc, sizeof(lc));
	snprintf(buf, len,
		"pipeline: bursts of %u allocations on one lcore, through a ring of %u, freed on "
		"another; %u pair%s of %s",
		cfg->burst, PIPE_RING_SIZE, n / 2, n / 2 != 1 ? "s" : "", lc);
}

static unsigned int
pipe_metrics(const struct mp_config *cfg, struct mp_metric *m)
{
	struct mp_case cases[PIPE_MAX_CASES];
	char names[PIPE_MAX_CASES][MP_NAME_LEN];
	unsigned int nc = mp_cases(cfg, pipe_defaults, RTE_DIM(pipe_defaults), cases, names);
	unsigned int i, n = 0;

	for (i = 0; i < nc; i++) {
		snprintf(m[n].name, sizeof(m[n].name), "%s", cases[i].name);
		m[n].unit = "Mblocks/s";
		m[n++].flags = MP_M_TABLE | MP_M_HIGHER | MP_M_SUM;
	}
	for (i = 0; i < nc; i++) {
		snprintf(m[n].name, sizeof(m[n].name), "%s, per pair", cases[i].name);
		m[n].unit = "ns/block";
		m[n++].flags = MP_M_LOWER;
	}
	return n;
}

/* The producer's side of a phase: at least min_blocks, then until the budget if timed. */
static int
produce(struct mp_run *r, struct mp_lcore *lc, struct pipe_pair *pp, const struct mp_case *c,
	uint64_t min_blocks, bool timed)
{
	const struct mp_backend *be = r->be;
	unsigned int b = r->cfg->burst, i, k;
	void *objs[MP_MAX_BURST];
	uint64_t n = 0, start, now;
	int rc = 0;

	start = rte_rdtsc();
	do {
		for (i = 0; i < b; i++) {
			objs[i] = be->malloc(MP_TYPE, c->size, c->align);
			if (unlikely(objs[i] == NULL)) {
				rc = -ENOMEM;
				break;
			}
		}
		for (k = 0; k < i;) {
			unsigned int e = rte_ring_sp_enqueue_burst(pp->ring, objs + k, i - k, NULL);

			if (e == 0)
				rte_pause();
			k += e;
		}
		n += i;
		mp_progress(lc, lc->ops + i);
		now = rte_rdtsc();
	} while (rc == 0 && (n < min_blocks || (timed && mp_more(r, n, now - start))));
	pp->total = n;
	__atomic_store_n(&pp->done, 1, __ATOMIC_RELEASE);
	return rc;
}

/* The consumer's side: free what comes until the producer is done and all came; ns/block. */
static double
consume(struct mp_run *r, struct mp_lcore *lc, struct pipe_pair *pp)
{
	const struct mp_backend *be = r->be;
	unsigned int b = r->cfg->burst, i, n;
	void *objs[MP_MAX_BURST];
	uint64_t freed = 0, start, end;

	start = rte_rdtsc();
	for (;;) {
		n = rte_ring_sc_dequeue_burst(pp->ring, objs, b, NULL);
		for (i = 0; i < n; i++)
			be->free(objs[i]);
		if (n != 0) {
			freed += n;
			mp_progress(lc, lc->ops + n);
			continue;
		}
		if (__atomic_load_n(&pp->done, __ATOMIC_ACQUIRE) && freed == pp->total)
			break;
		rte_pause();
	}
	end = rte_rdtsc();
	return freed != 0 ? mp_ns(end - start) / (double)freed : NAN;
}

static int
pipe_run(struct mp_run *r, struct mp_lcore *lc)
{
	struct mp_case cases[PIPE_MAX_CASES];
	char names[PIPE_MAX_CASES][MP_NAME_LEN];
	unsigned int nc = mp_cases(r->cfg, pipe_defaults, RTE_DIM(pipe_defaults), cases, names);
	unsigned int i, phase, p = lc->idx / 2;
	bool active = p < pipe.npairs && (lc->idx | 1) < r->nlc;
	bool producer = (lc->idx & 1) == 0;
	struct pipe_pair *pp = active ? &pipe.pairs[p] : NULL;
	uint64_t warm = r->cfg->quick ? PIPE_WARM_BLOCKS / 16 : PIPE_WARM_BLOCKS;
	int rc = 0, prc;

	for (i = 0; i < nc; i++) {
		double ns = NAN;

		/* a fixed-size pool holds the ring's blocks and a burst per lcore */
		prc = mp_prepare(r, lc, cases[i].size, cases[i].align,
			PIPE_RING_SIZE + r->cfg->burst);
		for (phase = 0; phase < 2; phase++) {
			if (active && producer) {
				pp->total = 0;
				__atomic_store_n(&pp->done, 0, __ATOMIC_RELAXED);
			}
			mp_barrier(r);
			if (active && producer) {
				/* after a failure, an empty phase: the consumer still ends */
				if (rc == 0 && prc == 0)
					rc = produce(r, lc, pp, &cases[i], phase ? 0 : warm, phase);
				else
					__atomic_store_n(&pp->done, 1, __ATOMIC_RELEASE);
			} else if (active) {
				ns = consume(r, lc, pp);
			}
			mp_barrier(r);
		}
		if (active && !producer) {
			lc->out[i] = 1e3 / ns;
			lc->out[nc + i] = ns;
		}
		mp_unprepare(r, lc);
		if (rc == 0)
			rc = prc;
	}
	return rc;
}

const struct mp_workload mp_wl_pipeline = {
	.name = "pipeline",
	.help = "one lcore allocates bursts of --burst blocks, a ring\n"
		"takes them to another lcore that frees them: 64 B,\n"
		"4K/4K (or --size/--align); lcores in pairs (the main\n"
		"lcore too, except at the prompt), aggregate Mblocks/s",
	.flags = MP_WL_ALL | MP_WL_FIXED | MP_WL_NOALLOC,
	.describe = pipe_describe,
	.metrics = pipe_metrics,
	.applies = pipe_applies,
	.setup = pipe_setup,
	.teardown = pipe_teardown,
	.run = pipe_run,
};
