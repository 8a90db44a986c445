/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * An ordinary DPDK program that knows nothing of hpmalloc: rte_malloc and
 * friends, an rte_hash, an rte_ring, a mempool. Run it on hpmalloc unchanged:
 *
 *   hpm-preload ./preload_demo -l 0 --no-pci
 *
 * It only looks, at the end, whether the shim is there (dlsym), to print its
 * counters. With --expect-hpm (after --) it fails unless rte_malloc was
 * served by hpmalloc.
 */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_hash.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#define NBLOCKS 4096

/* What a control plane does: tables, buffers that grow, a ring, a pool. */
static int
work(void)
{
	struct rte_hash_parameters hp = {
		.name = "demo",
		.entries = 4096,
		.key_len = sizeof(uint32_t),
		.socket_id = (int)rte_socket_id(),
	};
	static void *blocks[NBLOCKS];
	struct rte_mempool *mp;
	struct rte_hash *h;
	struct rte_ring *r;
	unsigned int i;
	uint32_t k;

	for (i = 0; i < NBLOCKS; i++) {
		size_t size = 64 + (i * 7919) % 8192;

		blocks[i] = i % 3 ? rte_malloc("demo", size, i % 5 ? 0 : 4096)
				  : rte_zmalloc("demo", size, 0);
		if (blocks[i] == NULL)
			return -1;
		memset(blocks[i], 1, size);
	}
	for (i = 0; i < NBLOCKS; i += 2) {
		blocks[i] = rte_realloc(blocks[i], 20000, 0);
		if (blocks[i] == NULL)
			return -1;
	}
	h = rte_hash_create(&hp);
	r = rte_ring_create("demo", 1024, SOCKET_ID_ANY, 0);
	mp = rte_mempool_create("demo", 4095, 256, 32, 0, NULL, NULL, NULL, NULL, SOCKET_ID_ANY, 0);
	if (h == NULL || r == NULL || mp == NULL)
		return -1;
	for (k = 0; k < 1000; k++)
		if (rte_hash_add_key(h, &k) < 0)
			return -1;
	rte_mempool_free(mp);
	rte_ring_free(r);
	rte_hash_free(h);
	for (i = 0; i < NBLOCKS; i++)
		rte_free(blocks[i]);
	return 0;
}

int
main(int argc, char **argv)
{
	int (*backend)(void);
	void (*print)(FILE *);
	bool expect_hpm;
	int ret, on;

	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		fprintf(stderr, "cannot start EAL\n");
		return 1;
	}
	expect_hpm = argc - ret > 1 && strcmp(argv[ret + 1], "--expect-hpm") == 0;
	if (work() != 0) {
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	/* the shim's API, if it is loaded: libhpm_rte exports it */
	*(void **)&backend = dlsym(RTLD_DEFAULT, "hpm_rte_backend");
	*(void **)&print = dlsym(RTLD_DEFAULT, "hpm_rte_stats_print");
	on = backend != NULL && backend() == 1;
	printf("rte_malloc served by %s\n", on ? "hpmalloc" : "EAL");
	if (print != NULL)
		print(stdout);
	rte_eal_cleanup();
	if (expect_hpm && !on) {
		fprintf(stderr, "expected rte_malloc on hpmalloc (is libhpm_rte.so preloaded?)\n");
		return 1;
	}
	return 0;
}
