/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Latency histograms of TSC cycles: one bucket per cycle below 64, then 32
 * buckets per power of two (a relative error below 3.2%), up to 2^44 cycles.
 */

#include <string.h>

#include "malloc_perf.h"

void
mp_hist_reset(struct mp_hist *h)
{
	memset(h, 0, sizeof(*h));
}

void
mp_hist_merge(struct mp_hist *dst, const struct mp_hist *src)
{
	unsigned int i;

	if (src == NULL)
		return;
	for (i = 0; i < MP_HIST_BUCKETS; i++)
		dst->count[i] += src->count[i];
	dst->n += src->n;
	if (src->max > dst->max)
		dst->max = src->max;
}

double
mp_hist_bucket_top(unsigned int i)
{
	unsigned int e, sub;

	if (i < 64)
		return i + 1;
	e = (i - 64) / MP_HIST_SUB + 6;
	sub = (i - 64) % MP_HIST_SUB;
	return (double)((UINT64_C(1) << e) + ((uint64_t)(sub + 1) << (e - 5)));
}

double
mp_hist_quantile(const struct mp_hist *h, double q)
{
	uint64_t want, seen = 0;
	unsigned int i;

	if (h->n == 0)
		return 0;
	if (q >= 1)
		return (double)h->max;
	want = (uint64_t)(q * (double)h->n);
	if (want >= h->n)
		want = h->n - 1;
	for (i = 0; i < MP_HIST_BUCKETS; i++) {
		seen += h->count[i];
		if (seen > want)
			return RTE_MIN(mp_hist_bucket_top(i), (double)h->max);
	}
	return (double)h->max;
}
