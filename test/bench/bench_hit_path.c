/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The cache hit path in instructions: COUNT alloc+free pairs (or bursts) of
 * one kind on the main lcore, after a warm-up, nothing else. Run it under
 * callgrind twice, with COUNT and with 0, and divide the difference in
 * instructions by COUNT (devtools/hit-path-instructions.sh does): a figure
 * that does not depend on the machine's load, unlike nanoseconds.
 *
 * The reference, counted the same way: mempool-pair64 and mempool-bulk64 are
 * rte_mempool_get/put and get_bulk/put_bulk of 64-byte objects through a
 * per-lcore cache (what issue 14 measures hpmalloc against).
 *
 * With "time" after COUNT it also times the kind: COUNT operations in windows
 * of 256 (pairs; bursts: 8), each timed with the TSC, and prints the fastest
 * window, the 10th percentile and the median in ns per pair or per block. On
 * a shared machine the fastest windows are the ones no other load touched:
 * compare builds by them (LIB_DIR=... devtools/hit-path-instructions.sh
 * --time does, in turns).
 *
 * bench_hit_inline is this benchmark with the library's hit path compiled
 * into its loops (bench_hit_inline.c): what an inline fast path in the
 * public header would cost, against the calls into libhpm.so here.
 *
 * mix: 4096 live blocks of 16 B to 32 KiB (every class of single blocks
 * busy), each step a free of a random one and an allocation of a random
 * size: what the cache's layout costs in L1 misses when no class stays hot
 * (devtools/hit-path-instructions.sh --l1 counts them with cachegrind).
 *
 * cold-KIND (pairs): the same with the data cache swept before each pair,
 * as a packet's processing sweeps it between two calls in an application;
 * cold-none sweeps alone. Under cachegrind (--l1), cold-KIND's misses less
 * cold-none's are the cache lines a pair touches: what it costs when they
 * come from further away.
 *
 * usage: bench_hit_path KIND COUNT [time]
 *   KIND: pair64 pair1000 pair4k pair64k burst4k bulk4k bulk64 mix, locked-KIND
 *   (the same without caches: the locked path), mempool-pair64, mempool-bulk64,
 *   cold-KIND for pairs and cold-none
 */

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_mempool.h>

#include "hpm_malloc.h"

/* the calls the pair and burst kinds time (bench_hit_inline.c: the hit path inline) */
#ifndef BENCH_MALLOC
#define BENCH_MALLOC(size, align) hpm_malloc(NULL, size, align)
#define BENCH_FREE(p) hpm_free(p)
#endif

#define BURST 32
/* pairs a timed window holds (bursts: this / BURST) */
#define WINDOW 256
#define MIX_LIVE 4096

static void *volatile sink;
/* cold-KIND: sweep twice the simulated 32 KiB L1 before each pair */
static bool cold;
static volatile uint8_t sweep_buf[64 << 10] __rte_aligned(64);
static struct rte_mempool *pool;
static void *mix_live[MIX_LIVE];
static uint64_t mix_rs = 0x9e3779b97f4a7c15;

static size_t
mix_size(void)
{
	mix_rs ^= mix_rs << 13;
	mix_rs ^= mix_rs >> 7;
	mix_rs ^= mix_rs << 17;
	return 16 + (size_t)(mix_rs % 32753);
}

/* mix: count steps of a free of a random live block and an allocation of a random size */
static void
run_mix(long count)
{
	unsigned int k;
	long n;

	if (mix_live[0] == NULL)
		for (k = 0; k < MIX_LIVE; k++)
			mix_live[k] = BENCH_MALLOC(mix_size(), 0);
	for (n = 0; n < count; n++) {
		k = (unsigned int)(mix_size() % MIX_LIVE);
		BENCH_FREE(mix_live[k]);
		mix_live[k] = BENCH_MALLOC(mix_size(), 0);
	}
}

/* cold-KIND: count pairs of a kind (or sweeps alone: none), a sweep before each */
static void __attribute__((noinline))
run_cold(const char *kind, size_t size, unsigned int align, long count)
{
	/* decided before the loop: no string of the kind is read between sweeps */
	bool none = !strcmp(kind, "none"), mempool = !strcmp(kind, "mempool-pair64");
	unsigned int i;
	long n;
	void *p;

	for (n = 0; n < count; n++) {
		for (i = 0; i < sizeof(sweep_buf); i += 64)
			(void)sweep_buf[i];
		if (mempool) {
			if (rte_mempool_get(pool, &p) == 0) {
				sink = p;
				rte_mempool_put(pool, p);
			}
		} else if (!none) {
			p = BENCH_MALLOC(size, align);
			sink = p;
			BENCH_FREE(p);
		}
	}
}

static void __attribute__((noinline)) run(const char *kind, long count)
{
	size_t size = 64;
	unsigned int align = 0, i;
	void *objs[BURST];
	long n;

	if (!strcmp(kind, "pair1000")) {
		size = 1000;
		align = 64;
	} else if (!strcmp(kind, "pair4k") || !strcmp(kind, "burst4k") || !strcmp(kind, "bulk4k")) {
		size = 4096;
		align = 4096;
	} else if (!strcmp(kind, "pair64k")) {
		size = 65536;
		align = 65536;
	}
	if (cold) {
		run_cold(kind, size, align, count);
	} else if (!strcmp(kind, "mix")) {
		run_mix(count);
	} else if (!strcmp(kind, "mempool-pair64")) {
		for (n = 0; n < count; n++) {
			void *p;

			if (rte_mempool_get(pool, &p) == 0) {
				sink = p;
				rte_mempool_put(pool, p);
			}
		}
	} else if (!strcmp(kind, "mempool-bulk64")) {
		for (n = 0; n < count; n++)
			if (rte_mempool_get_bulk(pool, objs, BURST) == 0)
				rte_mempool_put_bulk(pool, objs, BURST);
	} else if (!strncmp(kind, "pair", 4)) {
		for (n = 0; n < count; n++) {
			void *p = BENCH_MALLOC(size, align);

			sink = p;
			BENCH_FREE(p);
		}
	} else if (!strcmp(kind, "burst4k")) {
		for (n = 0; n < count; n++) {
			for (i = 0; i < BURST; i++)
				objs[i] = BENCH_MALLOC(size, align);
			for (i = 0; i < BURST; i++)
				BENCH_FREE(objs[i]);
		}
	} else {
		for (n = 0; n < count; n++) {
			if (hpm_malloc_bulk(objs, BURST, size, align, SOCKET_ID_ANY) == 0)
				hpm_free_bulk(objs, BURST);
		}
	}
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* count operations in windows, each timed: the fastest, the 10th percentile, the median */
static int
time_kind(const char *kind, long count)
{
	bool bursts = strstr(kind, "burst") != NULL || strstr(kind, "bulk") != NULL;
	long per = bursts ? WINDOW / BURST : WINDOW, nwin = RTE_MAX(count / per, 1L), w;
	uint64_t *t = malloc(sizeof(*t) * (size_t)nwin);
	double ns_per_tick = 1e9 / (double)rte_get_tsc_hz();

	if (t == NULL)
		return 1;
	for (w = 0; w < nwin; w++) {
		uint64_t start = rte_rdtsc_precise();

		run(kind, per);
		t[w] = rte_rdtsc_precise() - start;
	}
	qsort(t, (size_t)nwin, sizeof(*t), cmp_u64);
	/* per pair, or per block of a burst (alloc and free) */
	printf("%s: fastest %.2f p10 %.2f median %.2f ns per %s (%ld windows of %ld)\n", kind,
		t[0] * ns_per_tick / WINDOW, t[nwin / 10] * ns_per_tick / WINDOW,
		t[nwin / 2] * ns_per_tick / WINDOW, bursts ? "block" : "pair", nwin, per);
	free(t);
	return 0;
}

int
main(int argc, char **argv)
{
	char prefix[64];
	char *eal_argv[] = {argv[0], "-l", "0", "--no-pci", "--no-huge", "-m", "256", prefix,
		"--log-level=lib.eal:error", NULL};
	struct hpm_config cfg;
	const char *kind;
	unsigned int i;
	long count;

	if (argc < 3)
		return 2;
	count = atol(argv[2]);
	/* locked-KIND: the same without caches, every call on the locked path */
	kind = strncmp(argv[1], "locked-", 7) == 0 ? argv[1] + 7 : argv[1];
	cold = strncmp(kind, "cold-", 5) == 0;
	if (cold)
		kind += 5;
	hpm_config_defaults(&cfg);
	if (!strncmp(argv[1], "locked-", 7))
		cfg.flags |= HPM_CFG_F_NO_CACHE;
	/* runs side by side with other builds' (LIB_DIR): a prefix of its own */
	snprintf(prefix, sizeof(prefix), "--file-prefix=hpmt_hit_path_%d", (int)getpid());
	if (rte_eal_init((int)RTE_DIM(eal_argv) - 1, eal_argv) < 0 || hpm_init(&cfg) != 0)
		return 1;
	if (!strncmp(kind, "mempool-", 8)) {
		/* 64-byte objects, a per-lcore cache of 512 as the malloc_perf mempool backend's */
		pool = rte_mempool_create("hit_path", 4095, 64, 512, 0, NULL, NULL, NULL, NULL,
			SOCKET_ID_ANY, 0);
		if (pool == NULL)
			return 1;
	}
	/* warm: refills done, the cache in steady state (mix: its pages too) */
	run(kind, !strcmp(kind, "mix") ? 200000 : 1000);
	if (argc > 3 && !strcmp(argv[3], "time")) {
		if (time_kind(kind, count) != 0)
			return 1;
	} else {
		run(kind, count);
	}
	for (i = 0; i < MIX_LIVE; i++)
		BENCH_FREE(mix_live[i]);
	rte_mempool_free(pool);
	hpm_fini();
	rte_eal_cleanup();
	return 0;
}
