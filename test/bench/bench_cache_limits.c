/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Seed 003's question, measured: how long should the per-lcore lists be?
 * For fixed cache limits and for the default rule (a share of the heap),
 * the cost per block of: a burst of 32 and of 256 4 KiB blocks on one
 * lcore (allocate all, free all), and a producer-consumer pair of lcores
 * (one allocates, the other frees through a ring) -- and the memory the
 * caches hold at the end. A benchmark: figures, no assertions.
 *
 * usage: bench_cache_limits   (EAL, lcores 0-1)
 */

#include <inttypes.h>
#include <stdlib.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_pause.h>
#include <rte_ring.h>

#include "hpm_malloc.h"

#define REPEAT 5
#define PC_OPS 2000000

static struct rte_ring *ring;
static volatile int pc_done;

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[n / 2];
}

static double
burst(unsigned int n)
{
	static void *objs[1024];
	unsigned int i, r, rounds = 4000000 / n;
	uint64_t t;

	for (i = 0; i < n; i++)
		objs[i] = hpm_malloc(NULL, 4096, 4096);
	for (i = 0; i < n; i++)
		hpm_free(objs[i]);
	t = rte_rdtsc();
	for (r = 0; r < rounds; r++) {
		for (i = 0; i < n; i++)
			objs[i] = hpm_malloc(NULL, 4096, 4096);
		for (i = 0; i < n; i++)
			hpm_free(objs[i]);
	}
	return (rte_rdtsc() - t) * 1e9 / rte_get_tsc_hz() / ((double)rounds * n);
}

static int
producer(void *arg)
{
	unsigned int i;

	(void)arg;
	for (i = 0; i < PC_OPS; i++) {
		void *p = hpm_malloc(NULL, 4096, 4096);

		while (rte_ring_enqueue(ring, p) != 0)
			rte_pause();
	}
	hpm_cache_flush();
	pc_done = 1;
	return 0;
}

static double
producer_consumer(unsigned int worker)
{
	unsigned int got = 0;
	void *objs[64];
	uint64_t t = rte_rdtsc();

	pc_done = 0;
	rte_eal_remote_launch(producer, NULL, worker);
	while (got < PC_OPS) {
		unsigned int i, n = rte_ring_dequeue_burst(ring, objs, 64, NULL);

		for (i = 0; i < n; i++)
			hpm_free(objs[i]);
		got += n;
	}
	rte_eal_wait_lcore(worker);
	return (rte_rdtsc() - t) * 1e9 / rte_get_tsc_hz() / PC_OPS;
}

static void
run(const char *name, unsigned int min, unsigned int max, unsigned int share, size_t warm)
{
	double b32[REPEAT], b256[REPEAT], pc[REPEAT];
	unsigned int worker = rte_get_next_lcore(-1, 1, 0), r;
	struct hpm_cache_stats cs0, cs1;
	struct hpm_config cfg;
	void *warm_block = NULL;

	hpm_config_defaults(&cfg);
	cfg.source = HPM_SOURCE_EAL;
	cfg.cache_min = min;
	cfg.cache_max = max;
	cfg.cache_share = share;
	if (hpm_init(&cfg) != 0) {
		printf("%-26s hpm_init: %s\n", name, rte_strerror(rte_errno));
		return;
	}
	/* a heap of this size, for the rule that follows it */
	if (warm != 0) {
		warm_block = hpm_malloc(NULL, warm, 0);
	}
	for (r = 0; r < REPEAT; r++) {
		b32[r] = burst(32);
		b256[r] = burst(256);
		pc[r] = producer_consumer(worker);
	}
	hpm_cache_stats(rte_lcore_id(), -1, &cs0);
	hpm_cache_stats(worker, -1, &cs1);
	printf("%-26s %7.1f %8.1f %9.1f %10.0f %8" PRIu64 "\n", name, median(b32, REPEAT),
		median(b256, REPEAT), median(pc, REPEAT), (cs0.bytes + cs1.bytes) / 1024.0,
		cs0.limit / hpm_cache_class_count());
	hpm_free(warm_block);
	hpm_fini();
}

int
main(int argc, char **argv)
{
	static const unsigned int limits[] = {16, 32, 64, 128, 224};
	unsigned int i;
	char name[64];

	if (rte_eal_init(argc, argv) < 0 || rte_lcore_count() < 2) {
		fprintf(stderr, "needs EAL with two lcores\n");
		return 77;
	}
	ring = rte_ring_create("limits", 4096, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	printf("ns per 4 KiB block (alloc+free), median of %d; cache memory held at the end\n",
		REPEAT);
	printf("%-26s %7s %8s %9s %10s %8s\n", "limit", "burst32", "burst256", "prod/cons",
		"held KiB", "avg lim");
	for (i = 0; i < RTE_DIM(limits); i++) {
		snprintf(name, sizeof(name), "fixed %u", limits[i]);
		run(name, limits[i], limits[i], 1, 0);
	}
	run("rule, 64 MiB heap", 64, 224, 32, 64 << 20);
	run("rule, 512 MiB heap", 64, 224, 32, 512 << 20);
	run("rule, 1 GiB heap", 64, 224, 32, 1024 << 20);
	rte_ring_free(ring);
	rte_eal_cleanup();
	return 0;
}
