/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The workloads. Each one runs on one backend at a time, fills its metrics
 * and frees every block it allocated. A new workload is a run function, its
 * metrics and a row of mp_workloads[].
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_atomic.h>
#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_lcore.h>

#include "malloc_perf.h"

#define MIB (1024.0 * 1024.0)

/* Alloc+free pairs timed together between two TSC reads. */
#define PAIR_BATCH 16u

/* Array of n NULL pointers, written now so that no page fault lands in a timed loop. */
static void **
ptr_array(unsigned int n)
{
	size_t len = sizeof(void *) * RTE_MAX(n, 1u);
	void **a = malloc(len);

	if (a == NULL)
		return NULL;
	/* the barrier keeps the compiler from turning malloc+memset into calloc */
	rte_compiler_barrier();
	memset(a, 0, len);
	return a;
}

static void
free_all(const struct mp_backend *be, void **blocks, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		be->free(blocks[i]);
}

/*
 * Alloc+free pairs of one size, for at least min_pairs and then until the
 * time budget is spent or max_pairs are done: ns per pair.
 */
static int
pair_loop(const struct mp_backend *be, size_t size, unsigned int align, uint64_t budget,
	uint64_t min_pairs, uint64_t max_pairs, double *ns)
{
	uint64_t n = 0, start, now;
	unsigned int i;

	start = rte_rdtsc();
	do {
		for (i = 0; i < PAIR_BATCH; i++) {
			void *p = be->malloc(MP_TYPE, size, align);

			if (unlikely(p == NULL))
				return -ENOMEM;
			be->free(p);
		}
		n += PAIR_BATCH;
		now = rte_rdtsc();
	} while (n < min_pairs || (now - start < budget && n < max_pairs));
	*ns = mp_ns(now - start) / (double)n;
	return 0;
}

/* seed-grow (seed 004) */

#define GROW_ROUNDS 10u

static const struct mp_metric grow_metrics[GROW_ROUNDS] = {
	{"round 1", "ns/alloc", MP_METRIC_TABLE},
	{"round 2", "ns/alloc", 0},
	{"round 3", "ns/alloc", 0},
	{"round 4", "ns/alloc", 0},
	{"round 5", "ns/alloc", 0},
	{"round 6", "ns/alloc", 0},
	{"round 7", "ns/alloc", 0},
	{"round 8", "ns/alloc", 0},
	{"round 9", "ns/alloc", 0},
	{"round 10", "ns/alloc", MP_METRIC_TABLE},
};

static void
grow_describe(const struct mp_params *p, char *buf, size_t len)
{
	snprintf(buf, len,
		"seed-grow: %u rounds x %u x alloc(4096, align 4096), no free (seed 004)",
		GROW_ROUNDS, p->grow_per_round);
}

static int
grow_run(const struct mp_run *r, double *out)
{
	const struct mp_backend *be = r->be;
	unsigned int per = r->params->grow_per_round;
	void **blocks = ptr_array(GROW_ROUNDS * per);
	unsigned int n = 0, k, i;
	uint64_t t0, t1;
	int rc = 0;

	if (blocks == NULL)
		return -ENOMEM;
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
		out[k] = mp_ns(t1 - t0) / per;
	}
	free_all(be, blocks, n);
	free(blocks);
	return rc;
}

/* granule-full (seed 000) */

#define GRAN_BATCH 8u
#define GRAN_MIN_SAMPLES 11u
#define GRAN_MAX_SAMPLES 20001u
#define GRAN_WARMUP 64u

static const struct mp_metric gran_metrics[] = {
	{"alloc+free one", "ns/pair", MP_METRIC_TABLE},
	{"fill", "ns/alloc", MP_METRIC_TABLE},
};

static void
gran_describe(const struct mp_params *p, char *buf, size_t len)
{
	snprintf(buf, len,
		"granule-full: %u of %u blocks 4096/4096 used, alloc+free one, median (seed 000)",
		p->gran_blocks - p->gran_free, p->gran_blocks);
}

static int
gran_run(const struct mp_run *r, double *out)
{
	const struct mp_backend *be = r->be;
	const struct mp_params *p = r->params;
	unsigned int n = p->gran_blocks, i, k, nsamples = 0;
	uint64_t rng = p->seed + r->rep, budget = mp_ms_cycles(p->budget_ms);
	void **blocks = ptr_array(n);
	unsigned int *order = malloc(sizeof(*order) * n);
	double *samples = malloc(sizeof(*samples) * GRAN_MAX_SAMPLES);
	uint64_t t0, t1, start;
	int rc = -ENOMEM;

	if (blocks == NULL || order == NULL || samples == NULL)
		goto out;
	t0 = rte_rdtsc();
	for (i = 0; i < n; i++) {
		blocks[i] = be->malloc(MP_TYPE, 4096, 4096);
		if (blocks[i] == NULL)
			goto out;
	}
	out[1] = mp_ns(rte_rdtsc() - t0) / n;
	/* free gran_free blocks chosen at random (a partial Fisher-Yates shuffle) */
	for (i = 0; i < n; i++)
		order[i] = i;
	for (i = 0; i < p->gran_free; i++) {
		unsigned int j = i + mp_rand(&rng) % (n - i), tmp = order[i];

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
	} while (nsamples < GRAN_MAX_SAMPLES &&
		(nsamples < GRAN_MIN_SAMPLES || t1 - start < budget));
	out[0] = mp_median(samples, nsamples);
	rc = 0;
out:
	if (blocks != NULL)
		free_all(be, blocks, n);
	free(blocks);
	free(order);
	free(samples);
	return rc;
}

/* pair */

static const struct {
	size_t size;
	unsigned int align;
} pair_sizes[] = {
	{64, 0},
	{1000, 0},
	{4096, 4096},
	{65536, 65536},
	{2u << 20, 2u << 20},
};

static const struct mp_metric pair_metrics[RTE_DIM(pair_sizes)] = {
	{"64 B", "ns/pair", MP_METRIC_TABLE},
	{"1000 B", "ns/pair", MP_METRIC_TABLE},
	{"4 KiB align 4 KiB", "ns/pair", MP_METRIC_TABLE},
	{"64 KiB align 64 KiB", "ns/pair", MP_METRIC_TABLE},
	{"2 MiB align 2 MiB", "ns/pair", MP_METRIC_TABLE},
};

static void
pair_describe(const struct mp_params *p, char *buf, size_t len)
{
	snprintf(buf, len, "pair: alloc+free of one block, after a warm-up, %" PRIu64 " ms each",
		p->budget_ms);
}

static int
pair_run(const struct mp_run *r, double *out)
{
	uint64_t budget = mp_ms_cycles(r->params->budget_ms);
	unsigned int i;
	double warm;
	int rc;

	for (i = 0; i < RTE_DIM(pair_sizes); i++) {
		rc = pair_loop(r->be, pair_sizes[i].size, pair_sizes[i].align, budget / 5,
			PAIR_BATCH, 1000, &warm);
		if (rc == 0)
			rc = pair_loop(r->be, pair_sizes[i].size, pair_sizes[i].align, budget,
				4 * PAIR_BATCH, UINT64_MAX, &out[i]);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* held */

static const struct mp_metric held_metrics[] = {
	{"4K/4K: live", "MiB", MP_METRIC_TABLE},
	{"4K/4K: heap growth", "MiB", MP_METRIC_TABLE},
	{"4K/4K: held", "MiB", MP_METRIC_TABLE},
	{"4K/4K: held/live", "x", MP_METRIC_TABLE},
	{"64K/64K: live", "MiB", MP_METRIC_TABLE},
	{"64K/64K: heap growth", "MiB", MP_METRIC_TABLE},
	{"64K/64K: held", "MiB", MP_METRIC_TABLE},
	{"64K/64K: held/live", "x", MP_METRIC_TABLE},
};

static void
held_describe(const struct mp_params *p, char *buf, size_t len)
{
	snprintf(buf, len, "held: memory for %u x alloc(4096, 4096), then %u x alloc(65536, 65536)",
		p->held_4k, p->held_64k);
}

/*
 * Heap size, and what the heap holds: its size less its largest free range,
 * that is the memory that the blocks use with their headers, padding and the
 * gaps between them that no larger block can use. Summed over sockets.
 */
static void
heap_figures(const struct mp_backend *be, double *total, double *held)
{
	unsigned int i;

	*total = 0;
	*held = 0;
	for (i = 0; i < rte_socket_count(); i++) {
		struct rte_malloc_socket_stats st;

		if (be->socket_stats(rte_socket_id_by_idx(i), &st) != 0)
			continue;
		*total += (double)st.heap_totalsz_bytes;
		*held += (double)(st.heap_totalsz_bytes - st.greatest_free_size);
	}
}

static int
held_case(const struct mp_backend *be, unsigned int n, size_t size, double *out)
{
	double total0, held0, total1, held1;
	void **blocks = ptr_array(n);
	unsigned int i;
	int rc = 0;

	if (blocks == NULL)
		return -ENOMEM;
	/* retained empty memory would hide growth; EAL's heap cannot be trimmed */
	if (be->trim != NULL)
		rc = be->trim();
	heap_figures(be, &total0, &held0);
	for (i = 0; i < n && rc == 0; i++) {
		blocks[i] = be->malloc(MP_TYPE, size, size);
		if (blocks[i] == NULL)
			rc = -ENOMEM;
	}
	heap_figures(be, &total1, &held1);
	out[0] = (double)n * size / MIB;
	out[1] = (total1 - total0) / MIB;
	out[2] = (held1 - held0) / MIB;
	out[3] = out[2] / out[0];
	free_all(be, blocks, n);
	free(blocks);
	if (be->trim != NULL && rc == 0)
		rc = be->trim();
	return rc;
}

static int
held_run(const struct mp_run *r, double *out)
{
	int rc = held_case(r->be, r->params->held_4k, 4096, &out[0]);

	return rc != 0 ? rc : held_case(r->be, r->params->held_64k, 65536, &out[4]);
}

const struct mp_workload mp_workloads[] = {
	{
		.name = "seed-grow",
		.help = "10 rounds x 2000 x alloc(4096, align 4096) without free,\n"
			"ns/alloc per round (seed 004)",
		.describe = grow_describe,
		.metrics = grow_metrics,
		.nmetrics = RTE_DIM(grow_metrics),
		.run = grow_run,
	},
	{
		.name = "granule-full",
		.help = "16384 blocks of 4096/4096, 1384 freed at random, then\n"
			"alloc+free of one block, median (seed 000)",
		.describe = gran_describe,
		.metrics = gran_metrics,
		.nmetrics = RTE_DIM(gran_metrics),
		.run = gran_run,
	},
	{
		.name = "pair",
		.help = "alloc+free pairs after a warm-up: 64 B, 1000 B, 4K/4K,\n"
			"64K/64K, 2M/2M",
		.describe = pair_describe,
		.metrics = pair_metrics,
		.nmetrics = RTE_DIM(pair_metrics),
		.run = pair_run,
	},
	{
		.name = "held",
		.help = "heap growth and memory held for 20000 x 4K/4K, then\n"
			"2000 x 64K/64K; held = heap size less its largest free\n"
			"range: what the blocks take with headers, padding and gaps",
		.describe = held_describe,
		.metrics = held_metrics,
		.nmetrics = RTE_DIM(held_metrics),
		.run = held_run,
	},
};

const unsigned int mp_nworkloads = RTE_DIM(mp_workloads);
