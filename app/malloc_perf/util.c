/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Small helpers that depend on nothing of the tool: sizes as text, random
 * sizes, pointer arrays, touching pages, the median.
 */

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_atomic.h>
#include <rte_common.h>

#include "malloc_perf.h"

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

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double
mp_median(double *v, unsigned int n)
{
	if (n == 0)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
