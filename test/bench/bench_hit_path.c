/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The cache hit path in instructions: COUNT alloc+free pairs (or bursts) of
 * one kind on the main lcore, after a warm-up, nothing else. Run it under
 * callgrind twice, with COUNT and with 0, and divide the difference in
 * instructions by COUNT (devtools/hit-path-instructions.sh does): a figure
 * that does not depend on the machine's load, unlike nanoseconds.
 *
 * usage: bench_hit_path KIND COUNT [EAL options]
 *   KIND: pair64 pair1000 pair4k pair64k burst4k bulk4k bulk64, or locked-KIND
 *   (the same without caches: the locked path)
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>

#include "hpm_malloc.h"

#define BURST 32

static void *volatile sink;

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
	if (!strncmp(kind, "pair", 4)) {
		for (n = 0; n < count; n++) {
			void *p = hpm_malloc(NULL, size, align);

			sink = p;
			hpm_free(p);
		}
	} else if (!strcmp(kind, "burst4k")) {
		for (n = 0; n < count; n++) {
			for (i = 0; i < BURST; i++)
				objs[i] = hpm_malloc(NULL, size, align);
			for (i = 0; i < BURST; i++)
				hpm_free(objs[i]);
		}
	} else {
		for (n = 0; n < count; n++) {
			if (hpm_malloc_bulk(objs, BURST, size, align, SOCKET_ID_ANY) == 0)
				hpm_free_bulk(objs, BURST);
		}
	}
}

int
main(int argc, char **argv)
{
	char prefix[64];
	char *eal_argv[] = {argv[0], "-l", "0", "--no-pci", "--no-huge", "-m", "256", prefix,
		"--log-level=lib.eal:error", NULL};
	struct hpm_config cfg;
	const char *kind;
	long count;

	if (argc < 3)
		return 2;
	count = atol(argv[2]);
	/* locked-KIND: the same without caches, every call on the locked path */
	kind = strncmp(argv[1], "locked-", 7) == 0 ? argv[1] + 7 : argv[1];
	hpm_config_defaults(&cfg);
	if (kind != argv[1])
		cfg.flags |= HPM_CFG_F_NO_CACHE;
	/* runs side by side with other builds' (LIB_DIR): a prefix of its own */
	snprintf(prefix, sizeof(prefix), "--file-prefix=hpmt_hit_path_%d", (int)getpid());
	if (rte_eal_init((int)RTE_DIM(eal_argv) - 1, eal_argv) < 0 || hpm_init(&cfg) != 0)
		return 1;
	run(kind, 1000); /* warm: refills done, the cache in steady state */
	run(kind, count);
	hpm_fini();
	rte_eal_cleanup();
	return 0;
}
