/* SPDX-License-Identifier: BSD-3-Clause */

/* The allocators under test. A new one (glibc, mempool, ...) is a new row. */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_malloc.h>

#include <hpm_malloc.h>

#include "malloc_perf.h"

/* hpmalloc on EAL memzones, initialised explicitly after rte_eal_init(). */
static int
hpm_be_init(void)
{
	struct hpm_config cfg;
	int rc;

	hpm_config_defaults(&cfg);
	cfg.source = HPM_SOURCE_EAL;
	rc = hpm_init(&cfg);
	if (rc != 0)
		fprintf(stderr, "hpm: hpm_init: %s\n", strerror(-rc));
	return rc;
}

/* No live block: start again from an empty heap, as after hpm_init(). */
static int
hpm_be_trim(void)
{
	hpm_fini();
	return hpm_be_init();
}

const struct mp_backend mp_backends[] = {
	{
		.name = "hpm",
		.desc = "hpmalloc: hpm_malloc/hpm_free, EAL source (hpm_init after EAL)",
		.init = hpm_be_init,
		.fini = hpm_fini,
		.malloc = hpm_malloc,
		.free = hpm_free,
		.socket_stats = hpm_malloc_get_socket_stats,
		.trim = hpm_be_trim,
		.check = hpm_heap_check,
		.source = hpm_source_name,
	},
	{
		.name = "rte",
		.desc = "DPDK rte_malloc/rte_free (its heap state persists across runs)",
		.malloc = rte_malloc,
		.free = rte_free,
		.socket_stats = rte_malloc_get_socket_stats,
	},
};

const unsigned int mp_nbackends = RTE_DIM(mp_backends);
