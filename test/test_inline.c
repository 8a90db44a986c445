/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * hpm_inline.h's functions against the library's, linked as an application
 * links (libhpm.so: the thread's binding and the anchor across the library's
 * boundary):
 *  - after a thread's first call the inline paths are on (its binding has the
 *    anchor's generation), except in sanitizer builds, and a pair the cache
 *    serves makes no call into the library (the test's calls of hpm_malloc()
 *    and hpm_free() are wrapped and counted: ld --wrap), while what they
 *    leave to the library is a call each;
 *  - they take and give the same cache stacks as hpm_malloc()/hpm_free(): a
 *    block freed by one is what the other allocates next, for every size up
 *    to 32 KiB at alignments up to 64 B (granule runs aside), 4 KiB and
 *    64 KiB blocks, and requests they leave to the calls;
 *  - a random mix of both (sizes 1 B - 300 KiB, alignments up to 64 KiB),
 *    checked against a model: alignment, contents, no overlap, validate,
 *    the heap's check, and every byte back after the drain; blocks freed on a
 *    plain pthread and allocated there too;
 *  - bad input through them: bad alignments, sizes 0 and SIZE_MAX, double,
 *    interior and foreign frees (counted, the heap intact), NULL;
 *  - after hpm_fini() and hpm_init() no inline call sees the old caches.
 *
 * usage: test_inline [--ops N]   (EAL: -l 0-1)
 */

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>

#include <rte_errno.h>
#include <rte_lcore.h>

#include "hpm_inline.h"
#include "test_common.h"

#define MAX_LIVE 4096
#define CHECK_EVERY 65536

struct blk {
	uint8_t *p;
	size_t size;
};

/* Calls of hpm_malloc() and hpm_free() from this file, the inline functions' included. */
static unsigned long lib_calls;

void *__real_hpm_malloc(const char *type, size_t size, unsigned int align);
void __real_hpm_free(void *ptr);
void *__wrap_hpm_malloc(const char *type, size_t size, unsigned int align);
void __wrap_hpm_free(void *ptr);

void *
__wrap_hpm_malloc(const char *type, size_t size, unsigned int align)
{
	lib_calls++;
	return __real_hpm_malloc(type, size, align);
}

void
__wrap_hpm_free(void *ptr)
{
	lib_calls++;
	__real_hpm_free(ptr);
}

static struct blk live[MAX_LIVE];
static unsigned int nlive;
static uint64_t rs;

/* Sizes the inline paths serve, half the time; any other, the rest. */
static size_t
pick(unsigned int *align)
{
	unsigned int r = test_rand(&rs) % 100;

	if (r < 50) {
		static const unsigned int small_align[] = {0, 8, 16, 32, 64};

		*align = small_align[test_rand(&rs) % RTE_DIM(small_align)];
		return 1 + test_rand(&rs) % 4095;
	}
	if (r < 60) {
		*align = 4096;
		return 4096;
	}
	if (r < 65) {
		*align = 65536;
		return 65536;
	}
	*align = r < 80 ? 0 : 1u << (3 + test_rand(&rs) % 14);
	return 1 + test_rand(&rs) % (300u << 10);
}

static int
cmp_blk(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)((const struct blk *)a)->p,
		  y = (uintptr_t)((const struct blk *)b)->p;

	return x < y ? -1 : x > y;
}

/* The live set: no two blocks overlap, each validates with its size, the heap checks. */
static void
check_live(const char *when)
{
	struct blk sorted[MAX_LIVE];
	unsigned int i;
	size_t usable;

	memcpy(sorted, live, nlive * sizeof(live[0]));
	qsort(sorted, nlive, sizeof(sorted[0]), cmp_blk);
	for (i = 0; i + 1 < nlive; i++)
		CHECK(sorted[i].p + sorted[i].size <= sorted[i + 1].p, "%s: %p+%zu overlaps %p",
			when, sorted[i].p, sorted[i].size, sorted[i + 1].p);
	for (i = 0; i < nlive; i++) {
		CHECK(hpm_malloc_validate(live[i].p, &usable) == 0 && usable >= live[i].size,
			"%s: %p (%zu bytes) does not validate", when, live[i].p, live[i].size);
		CHECK(test_intact(live[i].p, live[i].size), "%s: %p damaged", when, live[i].p);
	}
	CHECK(hpm_heap_check() == 0, "%s: heap check", when);
}

/* Blocks freed by one path are what the other allocates next: the same stacks. */
static bool
same_stack(size_t size, unsigned int align)
{
	void *p, *q, *r;

	p = hpm_malloc(NULL, size, align);
	hpm_free(p);
	q = hpm_malloc_inline(NULL, size, align);
	hpm_free_inline(q);
	r = hpm_malloc(NULL, size, align);
	CHECK(p != NULL && q == p && r == p,
		"%zu bytes aligned %u: hpm_malloc %p, then inline %p, then hpm_malloc %p", size,
		align, p, q, r);
	CHECK(((uintptr_t)q & ((align != 0 ? align : 8) - 1)) == 0, "%p misaligned", q);
	hpm_free(r);
	return p != NULL && q == p && r == p;
}

/*
 * Every size up to 32 KiB at alignments up to 64 B (but the multiples of 4 KiB
 * above 4 KiB: granule runs, whose stacks hand out the most aligned run first),
 * 4 KiB and 64 KiB at their alignments, and what the inline functions leave
 * to the library.
 */
static void
same_stacks(void)
{
	static const struct {
		size_t size;
		unsigned int align;
	} other[] = {{4096, 4096}, {4096, 1024}, {65536, 65536}, {65536, 4096}, {65536, 0},
		{100, 128}, {1000, 4096}, {40000, 0}};
	unsigned int a, i, cases = 0, same = 0;
	size_t size;

	for (size = 1; size <= 32768; size++)
		for (a = 0; a <= 64; a = a == 0 ? 8 : a * 2) {
			if ((size > 4096 && (size & 4095) == 0) ||
				(size >= 4096 && a != 0 && a != 64))
				continue;
			cases++;
			same += same_stack(size, a);
		}
	for (i = 0; i < RTE_DIM(other); i++) {
		cases++;
		same += same_stack(other[i].size, other[i].align);
	}
	printf("same stacks: %u of %u requests\n", same, cases);
}

/*
 * Frees that alternate between classes, through both paths: a free pushes on
 * the stack its thread's hint names (the last free's) only when the block's
 * class agrees, so that every block goes back to its own class's stack,
 * whichever stack the hint named. A guess taken unchecked would put a block
 * on another class's stack, and that class's next allocation would return it.
 */
static void
hinted_frees(void)
{
	static const struct {
		size_t size;
		unsigned int align;
	} req[] = {{64, 0}, {1000, 64}, {4096, 4096}, {200, 0}, {65536, 65536}, {9000, 0}};
	void *b[RTE_DIM(req)][4], *p;
	unsigned int i, k, r;

	for (r = 0; r < 2; r++) {
		for (i = 0; i < RTE_DIM(req); i++)
			for (k = 0; k < 4; k++) {
				b[i][k] = hpm_malloc(NULL, req[i].size, req[i].align);
				CHECK(b[i][k] != NULL, "%zu bytes", req[i].size);
			}
		/* empty stacks with room: the frees below are all they hold */
		hpm_cache_flush();
		/* round 0: class after class (the hint never agrees); 1: a class's four in a row */
		for (k = 0; k < 4 * RTE_DIM(req); k++) {
			unsigned int c = r == 0 ? k % RTE_DIM(req) : k / 4,
				     n = r == 0 ? k / RTE_DIM(req) : k % 4;

			if ((c + n + r) & 1)
				hpm_free_inline(b[c][n]);
			else
				hpm_free(b[c][n]);
		}
		for (i = 0; i < RTE_DIM(req); i++)
			for (k = 4; k-- > 0;) {
				p = (i + k) & 1 ? hpm_malloc_inline(NULL, req[i].size, req[i].align)
						: hpm_malloc(NULL, req[i].size, req[i].align);
				CHECK(p == b[i][k],
					"round %u: %zu bytes aligned %u: %p from the cache, %p freed last",
					r, req[i].size, req[i].align, p, b[i][k]);
			}
		for (i = 0; i < RTE_DIM(req); i++)
			for (k = 0; k < 4; k++)
				hpm_free(b[i][k]);
		hpm_cache_flush();
	}
	CHECK(hpm_heap_check() == 0, "heap check after the alternating frees");
}

/*
 * A pair the cache serves makes no call; an allocation the inline function
 * leaves to the library makes one, and so does the free of a block of no
 * class it knows (granule runs).
 */
static void
no_calls(void)
{
	static const struct {
		size_t size;
		unsigned int align;
		unsigned int calls; /* per pair */
	} req[] = {{64, 0, 0}, {1, 8, 0}, {1000, 64, 0}, {3000, 16, 0}, {4095, 0, 0},
		{4096, 4096, 0}, {4096, 64, 0}, {65536, 65536, 0}, {65536, 0, 0}, {4100, 0, 1},
		{5000, 0, 0}, {9000, 64, 0}, {32768 - 64, 0, 0}, {100, 128, 1}, {5000, 256, 1},
		{8192, 4096, 2}, {8192, 0, 2}, {40000, 0, 2}};
	unsigned int i, k;

	for (i = 0; i < RTE_DIM(req); i++) {
		unsigned long expect = 1000ul * req[i].calls;

		/* warm: the class's stack has blocks and room */
		hpm_free_inline(hpm_malloc_inline(NULL, req[i].size, req[i].align));
		lib_calls = 0;
		for (k = 0; k < 1000; k++) {
			void *p = hpm_malloc_inline(NULL, req[i].size, req[i].align);

			CHECK(p != NULL, "%zu bytes aligned %u", req[i].size, req[i].align);
			hpm_free_inline(p);
		}
#if defined(HPM_INLINE_SANITIZED) || defined(HPM_VALGRIND)
		expect = 2000; /* the functions are the calls, or the library keeps them there */
#endif
		CHECK(lib_calls == expect,
			"1000 pairs of %zu bytes aligned %u: %lu calls into the library, %lu expected",
			req[i].size, req[i].align, lib_calls, expect);
	}
}

static void
alloc_one(unsigned int k)
{
	unsigned int align;
	size_t size = pick(&align);
	uint8_t *p = k & 1 ? hpm_malloc_inline(NULL, size, align) : hpm_malloc(NULL, size, align);

	CHECK(p != NULL, "%zu bytes aligned %u: %s", size, align, rte_strerror(rte_errno));
	if (p == NULL)
		return;
	CHECK(align == 0 || ((uintptr_t)p & (align - 1)) == 0, "%p not aligned %u", p, align);
	test_fill(p, size);
	live[nlive++] = (struct blk){.p = p, .size = size};
}

static void
free_one(unsigned int k)
{
	unsigned int i = test_rand(&rs) % nlive;
	struct blk b = live[i];

	live[i] = live[--nlive];
	CHECK(test_intact(b.p, b.size), "%p (%zu bytes) damaged before its free", b.p, b.size);
	if (k & 2)
		hpm_free_inline(b.p);
	else
		hpm_free(b.p);
}

/* A plain pthread: the main lcore's blocks freed there, its own allocated and freed there. */
static void *
pthread_main(void *arg)
{
	unsigned int i, n = *(unsigned int *)arg;
	uint64_t trs = 0x7e57;

	for (i = 0; i < n; i++)
		hpm_free_inline(live[i].p);
	for (i = 0; i < n; i++) {
		unsigned int align = test_rand(&trs) % 2 ? 64 : 0;
		size_t size = 1 + test_rand(&trs) % 4095;

		live[i].p = hpm_malloc_inline(NULL, size, align);
		live[i].size = size;
		if (live[i].p != NULL)
			test_fill(live[i].p, size);
	}
	for (i = 0; i < n; i += 2) {
		hpm_free_inline(live[i].p);
		live[i].p = NULL;
	}
	return NULL;
}

static void
model(uint64_t ops)
{
	struct rte_malloc_socket_stats before, after;
	uint64_t bad = hpm_bad_free_count(), k;
	unsigned int i, n;
	pthread_t th;

	hpm_cache_flush();
	CHECK(hpm_malloc_get_socket_stats(rte_socket_id(), &before) == 0, "stats");
	for (k = 0; k < ops; k++) {
		unsigned int r = (unsigned int)test_rand(&rs);

		if (nlive == 0 || (r % 100 < 52 && nlive < MAX_LIVE))
			alloc_one(r >> 8);
		else
			free_one(r >> 8);
		if ((k + 1) % CHECK_EVERY == 0)
			check_live("model");
	}
	check_live("model, at the end");
	/* across threads: a plain pthread frees these, allocates its own, frees half */
	n = nlive;
	CHECK(pthread_create(&th, NULL, pthread_main, &n) == 0, "pthread_create");
	pthread_join(th, NULL);
	for (i = 0; i < n; i++)
		if (live[i].p != NULL) {
			CHECK(test_intact(live[i].p, live[i].size), "a pthread's block damaged");
			hpm_free_inline(live[i].p);
		}
	nlive = 0;
	hpm_cache_flush();
	CHECK(hpm_malloc_get_socket_stats(rte_socket_id(), &after) == 0, "stats");
	CHECK(after.alloc_count == before.alloc_count &&
			after.heap_allocsz_bytes == before.heap_allocsz_bytes,
		"after the drain: %u blocks, %zu bytes (before %u, %zu)", after.alloc_count,
		after.heap_allocsz_bytes, before.alloc_count, before.heap_allocsz_bytes);
	CHECK(hpm_bad_free_count() == bad, "%" PRIu64 " bad frees", hpm_bad_free_count() - bad);
	CHECK(hpm_heap_check() == 0, "heap check after the drain");
	printf("model: %" PRIu64 " operations, half of them inline, 0 differences\n", ops);
}

static void
bad_input(void)
{
	/* volatile: the compiler would refuse the sizes the test means */
	volatile size_t huge = SIZE_MAX;
	uint64_t bad = hpm_bad_free_count();
	uint8_t *p, *q, *r, *s;
	static uint8_t foreign[256] __rte_aligned(64);
	int on_stack;

	rte_errno = 0;
	CHECK(hpm_malloc_inline(NULL, 64, 3) == NULL && rte_errno == EINVAL, "align 3");
	rte_errno = 0;
	CHECK(hpm_malloc_inline(NULL, 64, 48) == NULL && rte_errno == EINVAL, "align 48");
	CHECK(hpm_malloc_inline(NULL, 0, 0) == NULL, "size 0");
	rte_errno = 0;
	CHECK(hpm_malloc_inline(NULL, huge, 0) == NULL && rte_errno == ENOMEM, "SIZE_MAX");
	rte_errno = 0;
	CHECK(hpm_malloc_inline(NULL, huge - 4095, 64) == NULL && rte_errno == ENOMEM,
		"SIZE_MAX - 4095");
	hpm_free_inline(NULL);
	CHECK(hpm_bad_free_count() == bad, "a free of NULL counted");

	p = hpm_malloc_inline(NULL, 64, 0);
	q = hpm_malloc_inline(NULL, 4096, 4096);
	CHECK(p != NULL && q != NULL, "blocks");
	hpm_free_inline(p);
	hpm_free_inline(p); /* double: the first went to the cache */
	CHECK(hpm_bad_free_count() == bad + 1, "double free: %" PRIu64 " counted",
		hpm_bad_free_count() - bad);
	hpm_free_inline(q + 64); /* interior */
	CHECK(hpm_bad_free_count() == bad + 2, "interior free");
	hpm_free_inline(&on_stack);
	hpm_free_inline(foreign);
	CHECK(hpm_bad_free_count() == bad + 4, "foreign frees: %" PRIu64 " counted in all",
		hpm_bad_free_count() - bad);
	/* the heap intact: the blocks come back as they were */
	CHECK(hpm_heap_check() == 0, "heap check after bad frees");
	r = hpm_malloc_inline(NULL, 64, 0);
	s = hpm_malloc_inline(NULL, 64, 0);
	CHECK(r == p && s != NULL && s != p, "the 64 B block back from the cache once: %p, %p", r,
		s);
	hpm_free_inline(r);
	hpm_free_inline(s);
	hpm_free_inline(q);
	hpm_cache_flush();
}

int
main(int argc, char **argv)
{
	struct hpm_config cfg;
	uint64_t ops = 1000000;
	void *p;
	int i;

	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--ops") && i + 1 < argc)
			ops = strtoull(argv[++i], NULL, 0);
	if (test_eal_init("inline", "-l", "0-1", "--no-pci", NULL) != 0)
		return TEST_SKIP;
	rs = test_seed(0x1e1e);
	hpm_config_defaults(&cfg);
	CHECK(hpm_init(&cfg) == 0, "hpm_init");
	hpm_free(hpm_malloc(NULL, 64, 0)); /* binds this thread */
#if defined(HPM_INLINE_SANITIZED)
	printf("sanitizer build: hpm_inline.h's functions are the calls\n");
#elif defined(HPM_VALGRIND)
	/* the library marks blocks for valgrind on its own paths: the inline ones stay off */
	CHECK(hpm_inline_v3.gen == UINT64_MAX, "valgrind build: the inline paths are on");
#else
	CHECK(hpm_cache_tls.gen == hpm_inline_v3.gen && hpm_inline_v3.gen != UINT64_MAX,
		"the inline paths are off: the thread's generation %" PRIu64
		", the anchor's %" PRIu64,
		hpm_cache_tls.gen, hpm_inline_v3.gen);
#endif
	/*
	 * layout 3 moved the stacks: a program built against layout 1 or 2
	 * would misread them, so that it must not find its anchor and load
	 */
	CHECK(dlsym(RTLD_DEFAULT, "hpm_inline_v3") == (void *)&hpm_inline_v3 &&
			dlsym(RTLD_DEFAULT, "hpm_inline_v2") == NULL &&
			dlsym(RTLD_DEFAULT, "hpm_inline_v1") == NULL,
		"anchors: layout 3 %p (ours %p), 2 %p, 1 %p", dlsym(RTLD_DEFAULT, "hpm_inline_v3"),
		(void *)&hpm_inline_v3, dlsym(RTLD_DEFAULT, "hpm_inline_v2"),
		dlsym(RTLD_DEFAULT, "hpm_inline_v1"));
	same_stacks();
	hinted_frees();
	no_calls();
	bad_input();
	model(ops);

	/* a new heap: no inline call sees the caches of the old one */
	p = hpm_malloc_inline(NULL, 64, 0);
	hpm_free_inline(p);
	hpm_fini();
	CHECK(hpm_init(&cfg) == 0, "hpm_init again");
	p = hpm_malloc_inline(NULL, 64, 0);
	CHECK(p != NULL && hpm_malloc_validate(p, NULL) == 0, "a block of the new heap");
	hpm_free_inline(p);
	CHECK(hpm_heap_check() == 0, "heap check");
	hpm_fini();
	return test_end("inline");
}
