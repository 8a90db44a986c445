/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The shim for static DPDK: this program links DPDK's static libraries with
 * libhpm_rte_wrap and the -Wl,--wrap= flags. Its rte_malloc calls and those
 * of the static DPDK libraries (librte_ring, librte_mempool) reach hpmalloc;
 * blocks EAL allocated during rte_eal_init() still free through rte_free().
 */

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "hpm_malloc.h"
#include "hpm_rte.h"
#include "test_common.h"

int
main(void)
{
	struct hpm_rte_stats s0, s1;
	struct rte_mempool *mp;
	struct rte_ring *r;
	size_t size;
	void *p;

	CHECK(hpm_rte_backend() == HPM_RTE_BACKEND_EAL, "routing before rte_eal_init");
	if (test_eal_init("shim_wrap", "-l", "0", "--no-pci", "--huge-unlink", NULL) < 0) {
		printf("SKIP: EAL cannot start\n");
		return TEST_SKIP;
	}
	CHECK(hpm_rte_backend() == HPM_RTE_BACKEND_HPM, "not routing after rte_eal_init");
	hpm_rte_stats(&s0);
	CHECK(s0.eal_early > 0, "EAL allocated nothing during rte_eal_init");

	p = rte_malloc("wrap", 1000, 0);
	CHECK(p != NULL && hpm_malloc_validate(p, NULL) == 0, "rte_malloc is not hpmalloc's");
	CHECK(rte_malloc_validate(p, &size) == 0 && size == 1024, "validate");
	CHECK(rte_malloc_virt2iova(p) == rte_mem_virt2iova(p), "virt2iova");
	rte_free(p);

	/* static libraries' calls are wrapped too */
	hpm_rte_stats(&s0);
	r = rte_ring_create("shim_wrap", 256, SOCKET_ID_ANY, 0);
	mp = rte_mempool_create("shim_wrap", 1023, 128, 32, 0, NULL, NULL, NULL, NULL,
		SOCKET_ID_ANY, 0);
	CHECK(r != NULL && mp != NULL, "ring and mempool: %s", rte_strerror(rte_errno));
	hpm_rte_stats(&s1);
	CHECK(s1.hpm_alloc >= s0.hpm_alloc + 3,
		"librte_ring and librte_mempool: %" PRIu64 " -> %" PRIu64, s0.hpm_alloc,
		s1.hpm_alloc);
	rte_mempool_free(mp);
	rte_ring_free(r);
	hpm_rte_stats(&s0);
	CHECK(s0.hpm_free >= s1.hpm_free + 3, "frees of static libraries");
	CHECK(hpm_bad_free_count() == 0, "bad frees");
	hpm_rte_stats_print(stdout);

	/* EAL frees its blocks of rte_eal_init() (service cores) through rte_free */
	CHECK(rte_eal_cleanup() == 0, "cleanup");
	hpm_rte_stats(&s1);
	CHECK(s1.eal_foreign > s0.eal_foreign, "EAL's blocks did not go back to EAL");
	/* (hpmalloc's state went with EAL's memory: no hpm_ call from here) */
	CHECK(hpm_rte_backend() == HPM_RTE_BACKEND_EAL, "routing after cleanup");
	hpm_rte_stats_print(stdout);
	if (test_failures != 0) {
		printf("shim_wrap: FAILED (%u checks)\n", test_failures);
		return 1;
	}
	printf("shim_wrap: passed\n");
	return 0;
}
