/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * A mempool on hpmalloc gives its memory back to EAL when it is freed, or
 * when making it fails, as DPDK's own pools do: with a fixed amount of
 * hugepages (--socket-mem 256 --socket-limit 256), a memzone as large as the
 * freed pool fits right after rte_mempool_free(), and after a pool too large
 * to make.
 * Usage: test_hpm_mempool_giveback
 */

#include <errno.h>

#include <rte_errno.h>
#include <rte_memzone.h>
#include <rte_mempool.h>

#include "hpm_malloc.h"
#include "hpm_mempool.h"
#include "test_common.h"

static void
memzone_fits(size_t len, const char *after)
{
	const struct rte_memzone *mz = rte_memzone_reserve("hpmt_giveback", len, SOCKET_ID_ANY, 0);

	CHECK(mz != NULL, "%zu MiB memzone after %s: %s", len >> 20, after,
		rte_strerror(rte_errno));
	if (mz != NULL)
		CHECK(rte_memzone_free(mz) == 0, "memzone free");
}

int
main(void)
{
	struct rte_mempool *mp;

	if (test_hugepages_2m("free_hugepages") < 160) {
		printf("SKIP: needs 160 free 2 MiB hugepages\n");
		return TEST_SKIP;
	}
	if (test_eal_init("mempool_giveback", "-l", "0", "--no-pci", "--socket-mem", "256",
		    "--socket-limit", "256", NULL) != 0) {
		printf("SKIP: EAL does not start\n");
		return TEST_SKIP;
	}
	memzone_fits(180 << 20, "EAL start");
	/* about 160 MiB of objects */
	mp = hpm_mempool_create("hpmt_gb", 150000, 1000, 0, 0, NULL, NULL, NULL, NULL,
		SOCKET_ID_ANY, 0);
	CHECK(mp != NULL, "160 MiB pool: %s", rte_strerror(rte_errno));
	rte_mempool_free(mp);
	memzone_fits(180 << 20, "rte_mempool_free()");
	/* more than there is: fails, and leaves nothing behind */
	mp = hpm_mempool_create("hpmt_gb", 300, 1 << 20, 0, 0, NULL, NULL, NULL, NULL,
		SOCKET_ID_ANY, 0);
	CHECK(mp == NULL && rte_errno == ENOMEM, "300 MiB pool made with 256 MiB");
	rte_mempool_free(mp);
	memzone_fits(150 << 20, "a failed pool");
	return test_end("mempool_giveback");
}
