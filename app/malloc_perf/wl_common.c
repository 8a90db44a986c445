/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * What the workloads share: their timed loops of pairs and bursts, their
 * cases (sizes and alignments), and the pools of fixed-size backends.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>

#include "malloc_perf.h"

void
mp_free_all(const struct mp_backend *be, void **blocks, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (blocks[i] != NULL)
			be->free(blocks[i]);
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

int
mp_burst_loop(struct mp_run *r, struct mp_lcore *lc, const struct mp_case *c, bool bulk,
	uint64_t min_bursts, bool timed, double *ns)
{
	const struct mp_backend *be = r->be;
	unsigned int b = r->cfg->burst, i;
	void *objs[MP_MAX_BURST];
	uint64_t n = 0, start, now;

	start = rte_rdtsc();
	do {
		if (bulk) {
			if (unlikely(mp_alloc_bulk(be, objs, b, c->size, c->align) != 0))
				return -ENOMEM;
			mp_free_bulk(be, objs, b);
		} else {
			for (i = 0; i < b; i++) {
				objs[i] = be->malloc(MP_TYPE, c->size, c->align);
				if (unlikely(objs[i] == NULL)) {
					while (i-- > 0)
						be->free(objs[i]);
					return -ENOMEM;
				}
			}
			for (i = 0; i < b; i++)
				be->free(objs[i]);
		}
		n++;
		mp_progress(lc, lc->ops + b);
		now = rte_rdtsc();
	} while (n < min_bursts || (timed && mp_more(r, n, now - start)));
	*ns = mp_ns(now - start) / (double)(n * b);
	return 0;
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

void
mp_lcores_str(const struct mp_config *cfg, unsigned int flags, char *buf, size_t len)
{
	unsigned int ids[RTE_MAX_LCORE], n = mp_run_lcores(cfg, flags, ids), i;
	size_t off;

	off = snprintf(buf, len, "%u lcore%s (", n, n > 1 ? "s" : "");
	for (i = 0; i < n && off < len; i++)
		off += snprintf(buf + off, len - off, "%s%u", i ? "," : "", ids[i]);
	if (off < len)
		snprintf(buf + off, len - off, ")");
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
