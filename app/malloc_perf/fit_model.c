/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * A yardstick for memory held, not an allocator: a best fit over one range
 * of offsets, with exact sizes, no metadata, no caches, free neighbours
 * merged at once. What it holds (the end of the range it used) is about
 * the least an allocator that places blocks one at a time can hold on a
 * given sequence of steps; the mixed workload prints it beside the
 * backends' figures. The free ranges are an array by offset: a best fit
 * looks at each, which is slow (seconds for the mixed workload's 262144
 * steps) but needs no more to be right.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fit_model.h"

int
mp_fit_init(struct mp_fit_model *m, size_t page)
{
	memset(m, 0, sizeof(*m));
	if (page != 0 && (page & (page - 1)) != 0)
		return -EINVAL;
	m->page = page;
	return 0;
}

void
mp_fit_fini(struct mp_fit_model *m)
{
	free(m->ranges);
	memset(m, 0, sizeof(*m));
}

/* Where a block of size at align goes in [start, end), or SIZE_MAX if it does not fit. */
static size_t
fit_in(const struct mp_fit_model *m, size_t start, size_t end, size_t size, size_t align)
{
	size_t off = RTE_ALIGN_CEIL(start, align);

	/* a block never crosses a page: the next page's start, aligned for any align <= page */
	if (m->page != 0 && size <= m->page && off / m->page != (off + size - 1) / m->page)
		off = RTE_ALIGN_CEIL(off + 1, m->page);
	return end >= off && end - off >= size ? off : SIZE_MAX;
}

/* Room for one more range at index i: 0 or -ENOMEM. */
static int
ranges_insert(struct mp_fit_model *m, unsigned int i, size_t start, size_t end)
{
	if (m->n == m->cap) {
		unsigned int cap = m->cap != 0 ? 2 * m->cap : 1024;
		struct mp_fit_range *r = realloc(m->ranges, sizeof(*r) * cap);

		if (r == NULL)
			return -ENOMEM;
		m->ranges = r;
		m->cap = cap;
	}
	memmove(&m->ranges[i + 1], &m->ranges[i], sizeof(*m->ranges) * (m->n - i));
	m->ranges[i].start = start;
	m->ranges[i].end = end;
	m->n++;
	return 0;
}

static void
ranges_remove(struct mp_fit_model *m, unsigned int i)
{
	memmove(&m->ranges[i], &m->ranges[i + 1], sizeof(*m->ranges) * (m->n - i - 1));
	m->n--;
}

/* Cut [off, off + size) out of free range i (it holds it): 0 or -ENOMEM. */
static int
range_cut(struct mp_fit_model *m, unsigned int i, size_t off, size_t size)
{
	struct mp_fit_range *r = &m->ranges[i];
	size_t end = r->end;

	if (off > r->start && off + size < end) {
		r->end = off;
		return ranges_insert(m, i + 1, off + size, end);
	}
	if (off > r->start)
		r->end = off;
	else if (off + size < end)
		r->start = off + size;
	else
		ranges_remove(m, i);
	return 0;
}

size_t
mp_fit_alloc(struct mp_fit_model *m, size_t size, size_t align)
{
	size_t best_len = SIZE_MAX, best_off = SIZE_MAX, off;
	unsigned int i, best = 0;

	if (size == 0 || align == 0 || (align & (align - 1)) != 0)
		return SIZE_MAX;
	for (i = 0; i < m->n; i++) {
		const struct mp_fit_range *r = &m->ranges[i];

		/* the smallest range that takes it; the lowest of those */
		if (r->end - r->start < best_len &&
			(off = fit_in(m, r->start, r->end, size, align)) != SIZE_MAX) {
			best_len = r->end - r->start;
			best_off = off;
			best = i;
		}
	}
	if (best_off != SIZE_MAX)
		return range_cut(m, best, best_off, size) == 0 ? best_off : SIZE_MAX;
	/* past the top: from the last free range if it ends there */
	i = m->n > 0 && m->ranges[m->n - 1].end == m->top ? m->n - 1 : m->n;
	off = fit_in(m, i < m->n ? m->ranges[i].start : m->top, SIZE_MAX, size, align);
	if (i < m->n) {
		if (off > m->ranges[i].start)
			m->ranges[i].end = off;
		else
			ranges_remove(m, i);
	} else if (off > m->top && ranges_insert(m, m->n, m->top, off) != 0) {
		return SIZE_MAX;
	}
	m->top = off + size;
	return off;
}

int
mp_fit_free(struct mp_fit_model *m, size_t off, size_t size)
{
	unsigned int lo = 0, hi = m->n, i;
	bool merge_below, merge_above;

	if (size == 0 || off + size > m->top)
		return -EINVAL;
	while (lo < hi) {
		unsigned int mid = (lo + hi) / 2;

		if (m->ranges[mid].start < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	i = lo;
	/* a block that overlaps a free range was never allocated */
	if ((i > 0 && m->ranges[i - 1].end > off) || (i < m->n && m->ranges[i].start < off + size))
		return -EINVAL;
	merge_below = i > 0 && m->ranges[i - 1].end == off;
	merge_above = i < m->n && m->ranges[i].start == off + size;
	if (merge_below && merge_above) {
		m->ranges[i - 1].end = m->ranges[i].end;
		ranges_remove(m, i);
	} else if (merge_below) {
		m->ranges[i - 1].end = off + size;
	} else if (merge_above) {
		m->ranges[i].start = off;
	} else {
		return ranges_insert(m, i, off, off + size);
	}
	return 0;
}
