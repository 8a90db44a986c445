/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Debug mode: a write one byte past a block, or one byte before it, is found
 * by the canaries at free and by hpm_heap_check(); new blocks are filled with
 * the poison byte (zmalloc's with zeros), freed ones too; live blocks are
 * reported by type; a double free is refused. HPM_DEBUG=1 in the environment
 * turns it on without a configuration.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include <rte_errno.h>

#include "hpm_malloc.h"
#include "test_common.h"

static void
canaries(void)
{
	static const struct {
		size_t size;
		unsigned int align;
	} cases[] = {{1, 0}, {100, 0}, {1000, 128}, {4096, 4096}, {65536, 65536}, {5 << 20, 0},
		{100, 1 << 21}};
	unsigned int i;

	for (i = 0; i < RTE_DIM(cases); i++) {
		size_t size = cases[i].size, usable = 0;
		unsigned int align = cases[i].align;
		uint64_t before = hpm_debug_corruption_count();
		volatile uint8_t *p = hpm_malloc("canary", size, align);

		CHECK(p != NULL, "%zu/%u", size, align);
		if (p == NULL)
			continue;
		CHECK(align == 0 || ((uintptr_t)p & (align - 1)) == 0, "%zu/%u: misaligned", size,
			align);
		CHECK(hpm_malloc_validate((void *)(uintptr_t)p, &usable) == 0 && usable == size,
			"%zu/%u: usable %zu", size, align, usable);
		CHECK(p[0] == 0x6b && p[size - 1] == 0x6b, "%zu/%u: new block not poisoned", size,
			align);
		p[size] = 0; /* one past the end */
		CHECK(hpm_heap_check() == -EFAULT, "%zu/%u: heap check missed an overflow", size,
			align);
		CHECK(hpm_heap_check() == -EFAULT, "%zu/%u: second heap check missed it", size,
			align);
		hpm_free((void *)(uintptr_t)p);
		/* one block written outside its bounds: counted once, by two checks and the free */
		CHECK(hpm_debug_corruption_count() == before + 1,
			"%zu/%u: the overflow counted %" PRIu64 " times", size, align,
			hpm_debug_corruption_count() - before);
		CHECK(hpm_heap_check() == 0, "%zu/%u: heap check after the free", size, align);
		if (align <= 4096) {
			before = hpm_debug_corruption_count();
			p = hpm_malloc("canary", size, align);
			p[-1] = 0; /* one before the start */
			hpm_free((void *)(uintptr_t)p);
			CHECK(hpm_debug_corruption_count() == before + 1,
				"%zu/%u: underflow not found", size, align);
		}
	}
	printf("canaries: overflows and underflows found on every route\n");
}

static void
poison_and_zero(void)
{
	uint8_t *p = hpm_zmalloc("zero", 3000, 0), *q;
	size_t i;
	bool zero = true;

	for (i = 0; p != NULL && i < 3000; i++)
		zero &= p[i] == 0;
	CHECK(p != NULL && zero, "zmalloc in debug mode is not zero");
	memset(p, 0x11, 3000);
	q = hpm_realloc(p, 6000, 0);
	CHECK(q != NULL && q[0] == 0x11 && q[2999] == 0x11 && q[3000] == 0x6b,
		"realloc: contents kept, the rest poisoned");
	hpm_free(q);
#if !TEST_ASAN && !defined(HPM_VALGRIND)
	/* freed: poisoned (the memory is still mapped; ASan and valgrind report this read) */
	CHECK(q[0] == 0x6b && q[5999] == 0x6b, "freed block not poisoned: %#x", q[0]);
#endif
}

static void
double_free(void)
{
	uint64_t bad = hpm_bad_free_count();
	void *p = hpm_malloc("double", 200, 0);

	hpm_free(p);
	hpm_free(p);
	CHECK(hpm_bad_free_count() == bad + 1, "double free in debug mode not refused");
	CHECK(hpm_heap_check() == 0, "heap check after a double free");
}

static void
leaks(void)
{
	void *alpha[3], *beta[2];
	char *report = NULL;
	size_t len = 0;
	unsigned int i;
	FILE *f;

	for (i = 0; i < 3; i++)
		alpha[i] = hpm_malloc("alpha", 100, 0);
	beta[0] = hpm_malloc("beta", 1000, 4096);
	/* a realloc keeps the block's type: 500 bytes of beta's become 1000 */
	beta[1] = hpm_realloc(hpm_malloc("beta", 500, 0), 1000, 4096);
	f = open_memstream(&report, &len);
	hpm_malloc_dump_leaks(f);
	fclose(f);
	printf("%s", report);
	CHECK(strstr(report, "5 live blocks") != NULL, "leak report count");
	CHECK(strstr(report, "alpha") != NULL &&
			strstr(report, "       3 blocks          300 bytes") != NULL,
		"leak report for alpha");
	CHECK(strstr(report, "beta") != NULL &&
			strstr(report, "       2 blocks         2000 bytes") != NULL,
		"leak report for beta");
	free(report);
	for (i = 0; i < 3; i++)
		hpm_free(alpha[i]);
	for (i = 0; i < 2; i++)
		hpm_free(beta[i]);
	f = open_memstream(&report, &len);
	hpm_malloc_dump_leaks(f);
	fclose(f);
	CHECK(strstr(report, "0 live blocks") != NULL, "leaks after the frees: %s", report);
	free(report);
}

int
main(void)
{
	struct hpm_config cfg;

	hpm_config_defaults(&cfg);
	cfg.source = HPM_SOURCE_ANON;
	cfg.flags |= HPM_CFG_F_DEBUG;
	CHECK(hpm_init(&cfg) == 0, "hpm_init in debug mode");
	canaries();
	poison_and_zero();
	double_free();
	leaks();
	hpm_fini();

	/* the environment turns it on */
	setenv("HPM_DEBUG", "1", 1);
	hpm_config_defaults(&cfg);
	cfg.source = HPM_SOURCE_ANON;
	CHECK(hpm_init(&cfg) == 0, "hpm_init with HPM_DEBUG=1");
	{
		uint64_t before = hpm_debug_corruption_count();
		uint8_t *p = hpm_malloc("env", 50, 0);

		p[50] = 1;
		hpm_free(p);
		CHECK(hpm_debug_corruption_count() == before + 1, "HPM_DEBUG=1: no canaries");
	}
	hpm_fini();
	unsetenv("HPM_DEBUG");
	return test_end("debug");
}
