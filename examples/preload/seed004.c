/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Seed 004 through the rte_malloc API, in a program that knows nothing of
 * hpmalloc: rounds of rte_malloc(4096, align 4096) without free, the time per
 * allocation in each round; then, if PAIRS is given, the time of an
 * rte_malloc+rte_free pair (64 B, and 4 KiB aligned 4 KiB). Compare
 *
 *   ./seed004 -l 0 --no-pci -- [ROUNDS [COUNT [PAIRS]]]
 *   hpm-preload ./seed004 -l 0 --no-pci -- [ROUNDS [COUNT [PAIRS]]]
 */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_malloc.h>

int
main(int argc, char **argv)
{
	unsigned int rounds = 10, count = 2000, pairs = 0, r, i, n = 0;
	int (*backend)(void);
	uint64_t start, cycles;
	void **blocks;
	int ret;

	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		fprintf(stderr, "cannot start EAL\n");
		return 1;
	}
	if (argc - ret > 1)
		rounds = (unsigned int)strtoul(argv[ret + 1], NULL, 0);
	if (argc - ret > 2)
		count = (unsigned int)strtoul(argv[ret + 2], NULL, 0);
	if (argc - ret > 3)
		pairs = (unsigned int)strtoul(argv[ret + 3], NULL, 0);
	blocks = calloc((size_t)rounds * count, sizeof(*blocks));
	if (blocks == NULL)
		return 1;
	*(void **)&backend = dlsym(RTLD_DEFAULT, "hpm_rte_backend");
	printf("seed 004: %u rounds x %u x rte_malloc(4096, 4096) on %s\n", rounds, count,
		backend != NULL && backend() == 1 ? "hpmalloc (shim)" : "EAL");
	for (r = 0; r < rounds; r++) {
		start = rte_rdtsc_precise();
		for (i = 0; i < count; i++) {
			blocks[n] = rte_malloc("seed004", 4096, 4096);
			if (blocks[n] == NULL) {
				fprintf(stderr, "out of memory after %u blocks\n", n);
				return 1;
			}
			n++;
		}
		cycles = rte_rdtsc_precise() - start;
		printf("round %2u: %10.1f ns/alloc\n", r + 1,
			(double)cycles * 1e9 / rte_get_tsc_hz() / count);
	}
	for (i = 0; i < n; i++)
		rte_free(blocks[i]);
	free(blocks);
	for (r = 0; pairs > 0 && r < 2; r++) {
		size_t size = r == 0 ? 64 : 4096;

		start = rte_rdtsc_precise();
		for (i = 0; i < pairs; i++)
			rte_free(rte_malloc("pair", size, r == 0 ? 0 : 4096));
		cycles = rte_rdtsc_precise() - start;
		printf("pair %4zu: %10.1f ns/pair\n", size,
			(double)cycles * 1e9 / rte_get_tsc_hz() / pairs);
	}
	rte_eal_cleanup();
	return 0;
}
