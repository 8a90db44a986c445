/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The workload table and what the workloads share. The workloads live in
 * their own files: wl_seed.c (seed-grow, granule-full, contig, held),
 * wl_pair.c (pair, burst, scale), wl_churn.c (churn, mixed), wl_paced.c
 * (paced) and fwd.c (fwd).
 */

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_atomic.h>
#include <rte_common.h>
#include <rte_cycles.h>

#include "malloc_perf.h"

static const struct mp_workload *const workloads[] = {
	&mp_wl_seed_grow,
	&mp_wl_granule_full,
	&mp_wl_pair,
	&mp_wl_burst,
	&mp_wl_scale,
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

void **
mp_ptr_array(unsigned int n)
{
	size_t len = sizeof(void *) * RTE_MAX(n, 1u);
	void **a = malloc(len);

	if (a == NULL)
		return NULL;
	/* the barrier keeps the compiler from turning malloc+memset into calloc */
	rte_compiler_barrier();
	memset(a, 0, len);
	return a;
}

void
mp_free_all(const struct mp_backend *be, void **blocks, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (blocks[i] != NULL)
			be->free(blocks[i]);
}

void
mp_touch(void *p, size_t size)
{
	volatile uint8_t *b = p;
	size_t off;

	for (off = 0; off < size; off += 4096)
		b[off] = 1;
	b[size - 1] = 1;
}

size_t
mp_rand_size(uint64_t *rng, size_t lo, size_t hi)
{
	double l = log2((double)lo), h = log2((double)hi);
	double x = l + (h - l) * (double)(mp_rand(rng) >> 11) / (double)(UINT64_C(1) << 53);
	size_t s = (size_t)exp2(x);

	if (s < lo)
		s = lo;
	return s > hi ? hi : s;
}

/* Alloc+free pairs timed together between two TSC reads. */
#define PAIR_BATCH 16u

int
mp_pair_loop(struct mp_run *r, struct mp_lcore *lc, size_t size, unsigned int align,
	uint64_t min_pairs, double *ns, uint64_t *pairs)
{
	const struct mp_backend *be = r->be;
	uint64_t n = 0, start, now;
	unsigned int i;

	start = rte_rdtsc();
	do {
		for (i = 0; i < PAIR_BATCH; i++) {
			void *p = be->malloc(MP_TYPE, size, align);

			if (unlikely(p == NULL))
				return -ENOMEM;
			be->free(p);
		}
		n += PAIR_BATCH;
		mp_progress(lc, lc->ops + PAIR_BATCH);
		now = rte_rdtsc();
	} while (n < min_pairs || mp_more(r, n, now - start));
	*ns = mp_ns(now - start) / (double)n;
	if (pairs != NULL)
		*pairs = n;
	return 0;
}

void
mp_size_str(char *buf, size_t len, size_t size)
{
	if (size >= (1u << 20) && size % (1u << 20) == 0)
		snprintf(buf, len, "%zu MiB", size >> 20);
	else if (size >= 1024 && size % 1024 == 0)
		snprintf(buf, len, "%zu KiB", size >> 10);
	else
		snprintf(buf, len, "%zu B", size);
}

void
mp_case_name(char *buf, size_t len, size_t size, unsigned int align)
{
	char s[24], a[24];

	mp_size_str(s, sizeof(s), size);
	if (align <= 64) {
		snprintf(buf, len, "%s", s);
		return;
	}
	mp_size_str(a, sizeof(a), align);
	snprintf(buf, len, "%s align %s", s, a);
}

unsigned int
mp_cases(const struct mp_config *cfg, const struct mp_case *defaults, unsigned int ndefaults,
	struct mp_case *out, char names[][MP_NAME_LEN])
{
	unsigned int i;

	if (cfg->size != 0) {
		out[0].size = cfg->size;
		out[0].align = cfg->align;
		mp_case_name(names[0], MP_NAME_LEN, cfg->size, cfg->align);
		out[0].name = names[0];
		return 1;
	}
	for (i = 0; i < ndefaults; i++) {
		out[i] = defaults[i];
		mp_case_name(names[i], MP_NAME_LEN, defaults[i].size, defaults[i].align);
		out[i].name = names[i];
	}
	return ndefaults;
}

int
mp_prepare(struct mp_run *r, struct mp_lcore *lc, size_t size, unsigned int align,
	unsigned int max_live)
{
	if (r->be->prepare == NULL)
		return 0;
	if (lc->idx == 0)
		r->shared_rc = r->be->prepare(size, align, max_live, r->nlc);
	mp_barrier(r);
	return r->shared_rc;
}

void
mp_unprepare(struct mp_run *r, struct mp_lcore *lc)
{
	if (r->be->prepare == NULL)
		return;
	mp_barrier(r);
	if (lc->idx == 0 && r->shared_rc == 0)
		r->be->unprepare();
}
