/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The rte_malloc shim linked before librte_eal: memory that rte_free() gave
 * back is EAL's again when rte_memzone_reserve() needs it (rings, mempools,
 * queues), as it is without the shim. With a fixed amount of hugepages
 * (--socket-mem 256 --socket-limit 256), 160 MiB of rte_malloc blocks are
 * freed, then a 150 MiB memzone and a 150 MiB mbuf pool (DPDK's mempool
 * library: rte_memzone_reserve_aligned() through the PLT) must fit.
 * Usage: test_shim_memzone
 */

#include <errno.h>

#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_memzone.h>

#include "hpm_rte.h"
#include "test_common.h"

#define NBLOCKS 160

static void
malloc_and_free(void)
{
	void *b[NBLOCKS];
	unsigned int i, n = 0;

	for (i = 0; i < NBLOCKS; i++)
		n += (b[i] = rte_malloc(NULL, 1 << 20, 0)) != NULL;
	CHECK(n == NBLOCKS, "%u of %u blocks of 1 MiB", n, NBLOCKS);
	for (i = 0; i < NBLOCKS; i++)
		rte_free(b[i]);
}

int
main(void)
{
	const struct rte_memzone *mz;
	struct rte_mempool *mp;

	if (test_hugepages_2m("free_hugepages") < 160) {
		printf("SKIP: needs 160 free 2 MiB hugepages\n");
		return TEST_SKIP;
	}
	if (test_eal_init("shim_memzone", "-l", "0", "--no-pci", "--socket-mem", "256",
		    "--socket-limit", "256", NULL) != 0) {
		printf("SKIP: EAL does not start\n");
		return TEST_SKIP;
	}
	malloc_and_free();
	mz = rte_memzone_reserve("hpmt_mz", 150 << 20, SOCKET_ID_ANY, 0);
	CHECK(mz != NULL, "150 MiB memzone after 160 MiB of rte_free(): %s",
		rte_strerror(rte_errno));
	if (mz != NULL)
		CHECK(rte_memzone_free(mz) == 0, "memzone free");
	malloc_and_free();
	/* 2176 + 128 + 64 bytes an mbuf: 64K of them, about 150 MiB */
	mp = rte_pktmbuf_pool_create("hpmt_mbufs", 65535, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
		SOCKET_ID_ANY);
	CHECK(mp != NULL, "150 MiB mbuf pool after 160 MiB of rte_free(): %s",
		rte_strerror(rte_errno));
	rte_mempool_free(mp);
	/* and rte_malloc still works once EAL has the memory back */
	malloc_and_free();
	return test_end("shim_memzone");
}
