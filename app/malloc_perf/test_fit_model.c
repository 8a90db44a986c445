/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The best-fit yardstick (fit_model.h) against a brute-force reference:
 * fixed cases (best fit over first fit, alignment gaps, pages, merging,
 * bad input), then random steps where every placement is checked to be in
 * the smallest free range that could take it (the lowest of those), aligned,
 * within its page, and where live blocks and free ranges together cover
 * [0, top) exactly, every byte once.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fit_model.h"

static unsigned int failures;

#define CHECK(cond)                                                                        \
	do {                                                                               \
		if (!(cond)) {                                                             \
			fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #cond); \
			failures++;                                                        \
		}                                                                          \
	} while (0)

static void
fixed_cases(void)
{
	struct mp_fit_model m;
	size_t a, b, c, d;

	CHECK(mp_fit_init(&m, 3) == -EINVAL);
	CHECK(mp_fit_init(&m, 0) == 0);
	CHECK(mp_fit_alloc(&m, 0, 8) == SIZE_MAX);
	CHECK(mp_fit_alloc(&m, 8, 3) == SIZE_MAX);
	CHECK(mp_fit_alloc(&m, 8, 0) == SIZE_MAX);
	/* free ranges of 300 and then 100 bytes: 100 takes the second (first fit: the first) */
	a = mp_fit_alloc(&m, 300, 1);
	b = mp_fit_alloc(&m, 50, 1);
	c = mp_fit_alloc(&m, 100, 1);
	d = mp_fit_alloc(&m, 50, 1);
	CHECK(a == 0 && b == 300 && c == 350 && d == 450 && m.top == 500);
	CHECK(mp_fit_free(&m, a, 300) == 0 && mp_fit_free(&m, c, 100) == 0);
	CHECK(m.n == 2);
	CHECK(mp_fit_alloc(&m, 100, 1) == 350);
	CHECK(mp_fit_alloc(&m, 100, 1) == 0);
	/* a free of what is free, or past the top, is refused and changes nothing */
	CHECK(mp_fit_free(&m, 100, 10) == -EINVAL);
	CHECK(mp_fit_free(&m, 490, 20) == -EINVAL);
	CHECK(mp_fit_free(&m, 0, 0) == -EINVAL);
	CHECK(m.n == 1 && m.ranges[0].start == 100 && m.ranges[0].end == 300);
	/* alignment: the gap below stays free for the next block */
	CHECK(mp_fit_alloc(&m, 10, 512) == 512 && m.top == 522);
	CHECK(m.n == 2 && m.ranges[1].start == 500 && m.ranges[1].end == 512);
	CHECK(mp_fit_alloc(&m, 12, 4) == 500 && m.n == 1);
	/* neighbours merge: everything freed is one range */
	CHECK(mp_fit_free(&m, 0, 100) == 0 && mp_fit_free(&m, 300, 50) == 0);
	CHECK(mp_fit_free(&m, 350, 100) == 0 && mp_fit_free(&m, 450, 50) == 0);
	CHECK(mp_fit_free(&m, 500, 12) == 0 && mp_fit_free(&m, 512, 10) == 0);
	CHECK(m.n == 1 && m.ranges[0].start == 0 && m.ranges[0].end == 522);
	mp_fit_fini(&m);

	/* pages: a block that would cross one starts at the next */
	CHECK(mp_fit_init(&m, 4096) == 0);
	CHECK(mp_fit_alloc(&m, 4000, 8) == 0);
	CHECK(mp_fit_alloc(&m, 200, 8) == 4096 && m.top == 4296);
	CHECK(mp_fit_alloc(&m, 96, 8) == 4000);
	/* larger than a page: anywhere */
	CHECK(mp_fit_alloc(&m, 8192, 8) == 4296);
	mp_fit_fini(&m);
}

#define LIVE_MAX 512u
#define STEPS 200000u

static uint64_t
next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int
by_offset(const void *x, const void *y)
{
	const struct mp_fit_range *a = x, *b = y;

	return a->start < b->start ? -1 : a->start > b->start;
}

/* Where a block goes in [start, end) at align within pages, or SIZE_MAX: by brute force. */
static size_t
reference_fit(size_t start, size_t end, size_t size, size_t align, size_t page)
{
	size_t off;

	for (off = RTE_ALIGN_CEIL(start, align); off + size <= end; off += align)
		if (page == 0 || size > page || off / page == (off + size - 1) / page)
			return off;
	return SIZE_MAX;
}

/* Live blocks and free ranges cover [0, top) exactly; the free ranges are apart. */
static void
check_cover(const struct mp_fit_model *m, const struct mp_fit_range *live, unsigned int nlive)
{
	static struct mp_fit_range all[2 * LIVE_MAX + 64];
	unsigned int n = 0, i;
	size_t at = 0;

	for (i = 0; i < m->n; i++) {
		CHECK(m->ranges[i].start < m->ranges[i].end);
		if (i > 0)
			CHECK(m->ranges[i - 1].end < m->ranges[i].start);
	}
	if (m->n + nlive > RTE_DIM(all)) {
		CHECK(!"too many ranges");
		return;
	}
	/* no ranges yet: a NULL array, which memcpy() may not be given even for 0 bytes */
	if (m->n > 0)
		memcpy(all, m->ranges, sizeof(*all) * m->n);
	memcpy(all + m->n, live, sizeof(*all) * nlive);
	n = m->n + nlive;
	qsort(all, n, sizeof(*all), by_offset);
	for (i = 0; i < n; i++) {
		CHECK(all[i].start == at);
		at = all[i].end;
	}
	CHECK(at == m->top);
}

static void
random_steps(size_t page, uint64_t seed)
{
	static struct mp_fit_range live[LIVE_MAX];
	struct mp_fit_model m;
	unsigned int nlive = 0, step, i;

	CHECK(mp_fit_init(&m, page) == 0);
	for (step = 0; step < STEPS && failures == 0; step++) {
		bool do_free = nlive == LIVE_MAX || (nlive > 0 && next(&seed) % 2 == 0);

		if (do_free) {
			i = next(&seed) % nlive;
			CHECK(mp_fit_free(&m, live[i].start, live[i].end - live[i].start) == 0);
			/* twice is refused */
			CHECK(mp_fit_free(&m, live[i].start, live[i].end - live[i].start) ==
				-EINVAL);
			live[i] = live[--nlive];
		} else {
			size_t size = 1 + next(&seed) % (next(&seed) % 4 == 0 ? 6000 : 300);
			size_t align = (size_t)1 << (next(&seed) % 13);
			size_t best_len = SIZE_MAX, want = SIZE_MAX, top = m.top, off;

			for (i = 0; i < m.n; i++) {
				size_t len = m.ranges[i].end - m.ranges[i].start;

				if (len < best_len &&
					(off = reference_fit(m.ranges[i].start, m.ranges[i].end,
						 size, align, page)) != SIZE_MAX) {
					best_len = len;
					want = off;
				}
			}
			/* none takes it: past the top, from the last range if it ends there */
			if (want == SIZE_MAX)
				want = reference_fit(m.n > 0 && m.ranges[m.n - 1].end == top
						? m.ranges[m.n - 1].start
						: top,
					SIZE_MAX, size, align, page);
			off = mp_fit_alloc(&m, size, align);
			CHECK(off != SIZE_MAX && off % align == 0 && off == want);
			CHECK(m.top == RTE_MAX(top, off + size));
			if (page != 0 && size <= page)
				CHECK(off / page == (off + size - 1) / page);
			live[nlive].start = off;
			live[nlive++].end = off + size;
		}
		if (step % 97 == 0)
			check_cover(&m, live, nlive);
	}
	/* the drain: one free range, all of it */
	while (nlive > 0) {
		nlive--;
		CHECK(mp_fit_free(&m, live[nlive].start, live[nlive].end - live[nlive].start) == 0);
	}
	CHECK(m.top == 0 || (m.n == 1 && m.ranges[0].start == 0 && m.ranges[0].end == m.top));
	mp_fit_fini(&m);
}

int
main(void)
{
	fixed_cases();
	random_steps(0, 0x1234567);
	random_steps(4096, 0x89abcdef);
	random_steps(65536, 42);
	if (failures != 0) {
		fprintf(stderr, "fit_model: %u failures\n", failures);
		return 1;
	}
	printf("fit_model: every placement a best fit, every byte accounted for\n");
	return 0;
}
