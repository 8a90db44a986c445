/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * When the shim routes to hpmalloc: from the return of rte_eal_init() (EAL
 * memory, memzones and lcores are up then, and not before) to the call of
 * rte_eal_cleanup(); in a primary process, and in a secondary whose primary
 * has a heap; unless HPM_BACKEND=off.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_memzone.h>

#include "hpm_malloc.h"
#include "hpm_rte.h"
#include "real.h"
#include "shim.h"

RTE_LOG_REGISTER(hpm_rte_logtype, lib.hpm_rte, NOTICE);

int hpm_rte_mode = HPM_RTE_EARLY;

static void
set_mode(int mode)
{
	__atomic_store_n(&hpm_rte_mode, mode, __ATOMIC_RELEASE);
}

/* HPM_BACKEND: unset, "hpm" or "on" route to hpmalloc; "off" or "eal" do not. */
static bool
backend_off(const char **why)
{
	const char *env = getenv("HPM_BACKEND");

	if (env == NULL || *env == '\0' || strcmp(env, "hpm") == 0 || strcmp(env, "on") == 0)
		return false;
	if (strcmp(env, "off") == 0 || strcmp(env, "eal") == 0) {
		*why = "HPM_BACKEND=off";
		return true;
	}
	HPM_RTE_LOG(WARNING, "HPM_BACKEND=%s unknown (hpm, off): routing to hpmalloc", env);
	return false;
}

static void
start(void)
{
	struct hpm_config cfg;
	const char *why = NULL, *whose = "", *source;
	bool secondary;
	int rc;

	if (backend_off(&why)) {
		set_mode(HPM_RTE_OFF);
		HPM_RTE_LOG(NOTICE, "rte_malloc backend: EAL (%s)", why);
		return;
	}
	/*
	 * A secondary attaches to the heap of its primary, so that blocks go
	 * from one process to the other; a primary without hpmalloc frees
	 * through EAL, so then EAL serves the secondary too.
	 */
	secondary = rte_eal_process_type() != RTE_PROC_PRIMARY;
	/* (the zone exists when a process of the application runs hpmalloc on EAL) */
	if (secondary && rte_memzone_lookup(HPM_STATE_ZONE) == NULL) {
		set_mode(HPM_RTE_OFF);
		HPM_RTE_LOG(NOTICE,
			"rte_malloc backend: EAL (secondary process, the primary has no hpmalloc heap)");
		return;
	}
	hpm_config_defaults(&cfg);
	cfg.source = HPM_SOURCE_EAL;
	rc = hpm_init(&cfg);
	if (rc != 0 && rc != -EALREADY) {
		set_mode(HPM_RTE_OFF);
		HPM_RTE_LOG(ERR, "rte_malloc backend: EAL (hpm_init: %s)", strerror(-rc));
		return;
	}
	/*
	 * A heap the application made before EAL is up is on memory of its own
	 * (hugetlbfs, anonymous): no IOVA that EAL knows, no secondary sees
	 * it. rte_malloc stays EAL's; the application keeps its heap.
	 */
	source = hpm_source_name();
	if (rc == -EALREADY && (source == NULL || strcmp(source, "eal") != 0)) {
		set_mode(HPM_RTE_OFF);
		HPM_RTE_LOG(WARNING,
			"rte_malloc backend: EAL (the application's hpmalloc heap is on %s, not "
			"EAL's memory)",
			source != NULL ? source : "no memory");
		return;
	}
	if (secondary)
		whose = ", the primary's heap";
	else if (rc == -EALREADY)
		whose = ", started by the application";
	set_mode(HPM_RTE_ON);
	HPM_RTE_LOG(NOTICE, "rte_malloc backend: hpmalloc (source %s%s)", source, whose);
}

HPM_RTE_EXPORT int
HPM_RTE_FN(rte_eal_init)(int argc, char **argv)
{
	int ret = hpm_rte_eal()->eal_init(argc, argv);

	if (ret >= 0 && hpm_rte_mode_get() == HPM_RTE_EARLY)
		start();
	return ret;
}

HPM_RTE_EXPORT int
HPM_RTE_FN(rte_eal_cleanup)(void)
{
	/* drivers free their blocks during cleanup: hpmalloc serves to the end */
	int ret = hpm_rte_eal()->eal_cleanup();

	/* EAL memory, hpmalloc's with it, is gone: nothing may look at it now */
	if (hpm_rte_mode_get() == HPM_RTE_ON)
		set_mode(HPM_RTE_DONE);
	return ret;
}

enum hpm_rte_backend
hpm_rte_backend(void)
{
	return hpm_rte_mode_get() == HPM_RTE_ON ? HPM_RTE_BACKEND_HPM : HPM_RTE_BACKEND_EAL;
}
