/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The workload table, above the workloads: wl_seed.c (seed-grow,
 * granule-full, contig, held), wl_pair.c (pair, burst, scale), wl_churn.c
 * (churn, mixed), wl_paced.c (paced), fwd.c (fwd), wl_pipeline.c (pipeline)
 * and wl_pthreads.c (pthreads). What they share is below them, in
 * wl_common.c.
 */

#include <string.h>

#include <rte_common.h>

#include "malloc_perf.h"

static const struct mp_workload *const workloads[] = {
	&mp_wl_seed_grow,
	&mp_wl_granule_full,
	&mp_wl_pair,
	&mp_wl_burst,
	&mp_wl_scale,
	&mp_wl_pipeline,
	&mp_wl_pthreads,
	&mp_wl_contig,
	&mp_wl_churn,
	&mp_wl_mixed,
	&mp_wl_held,
	&mp_wl_paced,
	&mp_wl_fwd,
};

unsigned int
mp_workload_count(void)
{
	return RTE_DIM(workloads);
}

const struct mp_workload *
mp_workload_at(unsigned int i)
{
	return i < RTE_DIM(workloads) ? workloads[i] : NULL;
}

const struct mp_workload *
mp_workload_find(const char *name)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(workloads); i++)
		if (strcmp(workloads[i]->name, name) == 0)
			return workloads[i];
	return NULL;
}

bool
mp_workload_applies(const struct mp_workload *wl, const struct mp_config *cfg,
	const struct mp_backend *be, const char **why)
{
	*why = NULL;
	if ((be->flags & MP_BE_NOALLOC) && !(wl->flags & (MP_WL_NOALLOC | MP_WL_BASELINE))) {
		*why = "allocates and keeps blocks";
		return false;
	}
	if ((be->flags & MP_BE_FIXED) && !(wl->flags & MP_WL_FIXED)) {
		*why = "not one fixed size";
		return false;
	}
	if (wl->applies != NULL)
		return wl->applies(cfg, be, why);
	return true;
}
