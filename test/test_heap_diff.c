/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Heap differential test: random malloc/zmalloc/calloc/realloc/free with
 * sizes log-uniform from 1 B to 8 MiB and alignments from none to 2 MiB,
 * checked against a model of the live set: every block is aligned, lies
 * apart from every other live block (an interval tree), keeps the pattern
 * written into it (checked at free and across realloc), zmalloc and calloc
 * give zeros, hpm_malloc_validate knows every live block. After everything
 * is freed, the statistics are back at their start and the heap has given
 * its empty chunks back beyond the retain threshold.
 *
 * Two modes. mix (the default): sizes log-uniform from 1 B to 8 MiB,
 * alignments from none to 2 MiB. routes: a request picked for each route the
 * API has, by what it promises (small and medium heap sizes, 4 KiB and 64 KiB
 * multiples at their alignments and others, granule runs, 2 MiB and more,
 * IOVA-contiguous blocks), realloc from any route to any other, bulk
 * allocation and bulk free; the mix weighted as an application's, so that
 * 10^7 operations take a minute or two. --seeds N splits the operations
 * over N runs from N seeds, each drained and checked back at the baseline.
 * Every other malloc and free goes through hpm_inline.h (the library's
 * functions for what the inline path leaves to them).
 *
 * usage: test_heap_diff --source anon|hugetlbfs|eal [--no-huge] [--ops N]
 *                       [--mode mix|routes] [--seeds N] [--small-heap]
 * --small-heap: HPM_CFG_F_SMALL_HEAP (small requests from the heap's classes).
 * Environment: HPM_TEST_OPS (operations, over --ops), HPM_TEST_SEED (the first seed).
 */

#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <search.h>
#include <stdbool.h>
#include <time.h>

#include <rte_errno.h>

#include "hpm_inline.h"
#include "hpm_malloc.h"
#include "test_common.h"

#define MAX_LIVE 4096
#define MAX_LIVE_BYTES (routes ? UINT64_C(64) << 20 : UINT64_C(256) << 20)
#define FULL_CHECK_SIZE 8192
#define EDGE 2048
#define MIB (UINT64_C(1) << 20)

struct block {
	uint8_t *p;
	size_t size;
	size_t align;
	uint64_t seed;
};

static struct block live[MAX_LIVE];
static unsigned int nlive;
static size_t live_bytes;
static void *tree;
static uint64_t rs;
static bool routes;   /* --mode routes */
static bool has_iova; /* the source gives IOVAs: contiguous blocks can succeed */

static int
interval_cmp(const void *a, const void *b)
{
	const struct block *x = a, *y = b;

	if (x->p + x->size <= y->p)
		return -1;
	if (y->p + y->size <= x->p)
		return 1;
	return 0; /* overlap */
}

static inline uint8_t
pattern(uint64_t seed, size_t off)
{
	return (uint8_t)(seed + off * 131 + (off >> 9) * 7);
}

/*
 * The checked bytes of a block, as ranges [from, to): all of a small one; the
 * first and last EDGE bytes of a big one, and a byte per page between (at an
 * offset in the page the seed gives).
 */
static inline void
range_next(size_t size, uint64_t seed, size_t *from, size_t *to)
{
	size_t next;

	if (*to >= size) {
		*from = size;
		return;
	}
	next = RTE_ALIGN_CEIL(*to, 4096) + seed % 4096;
	if (*to < size - EDGE && next < size - EDGE) {
		*from = next;
		*to = next + 1;
		return;
	}
	*from = size - EDGE;
	*to = size;
}

#define FOR_RANGES(size, seed, from, to)                                                     \
	for (size_t from = 0, to = (size) <= FULL_CHECK_SIZE ? (size) : EDGE; from < (size); \
		range_next((size), (seed), &from, &to))

static void
fill(uint8_t *p, size_t size, uint64_t seed)
{
	FOR_RANGES(size, seed, from, to)
	for (size_t off = from; off < to; off++)
		p[off] = pattern(seed, off);
}

/* Whether the checked bytes below limit of a block with seed are at p. */
static bool
intact_below(const uint8_t *p, size_t size, uint64_t seed, size_t limit)
{
	FOR_RANGES(size, seed, from, to)
	{
		size_t end = RTE_MIN(to, limit), off;
		uint8_t diff = 0;

		for (off = from; off < end; off++)
			diff |= p[off] ^ pattern(seed, off);
		if (diff == 0)
			continue;
		for (off = from; p[off] == pattern(seed, off); off++)
			;
		fprintf(stderr, "block %p: byte %zu is %#x, want %#x\n", p, off, p[off],
			pattern(seed, off));
		return false;
	}
	return true;
}

static bool
intact(const uint8_t *p, size_t size, uint64_t seed)
{
	return intact_below(p, size, seed, size);
}

static bool
zeroed(const uint8_t *p, size_t size)
{
	FOR_RANGES(size, (uint64_t)0, from, to)
	{
		uint8_t any = 0;

		for (size_t off = from; off < to; off++)
			any |= p[off];
		if (any != 0)
			return false;
	}
	return true;
}

static size_t
random_size(void)
{
	unsigned int bits = 1 + test_rand(&rs) % 23; /* [2^(bits-1), 2^bits): 1 B .. 8 MiB */
	size_t lo = (size_t)1 << (bits - 1);

	return lo + test_rand(&rs) % lo;
}

static size_t
random_align(void)
{
	unsigned int k = test_rand(&rs) % 23;

	return k == 0 ? 0 : (size_t)1 << (k - 1); /* 0, 1, 2, ... 2 MiB */
}

/* The routes of --mode routes, by what the API promises; weights in 1/1000. */
enum route {
	R_SMALL,  /* 1 B - 1 KiB, alignments up to 256 (the size classes, the heap) */
	R_MEDIUM, /* 1 KiB - 32 KiB, not multiples of 4 KiB */
	R_4K,     /* 4 KiB multiples at 4K alignment, odd sizes at 4K - 32K alignments */
	R_64K,    /* 64 KiB multiples, at 64K alignment or none; small blocks at 64K - 1M */
	R_RUN,    /* 4 KiB - 1 MiB at 4K alignment: runs of granules */
	R_LARGE,  /* 2 MiB - 6 MiB, no alignment, 2 MiB or 4 MiB */
	R_COUNT,
};

static const unsigned int route_weight[R_COUNT] = {520, 150, 170, 100, 50, 10};
static const char *const route_name[R_COUNT] = {"small", "medium", "4k", "64k", "run", "large"};

static unsigned long route_count[R_COUNT];

static enum route
random_route(void)
{
	unsigned int r = test_rand(&rs) % 1000, i;

	for (i = 0; i < R_COUNT - 1 && r >= route_weight[i]; i++)
		r -= route_weight[i];
	route_count[i]++;
	return (enum route)i;
}

static void
route_request(enum route route, size_t *size, size_t *align)
{
	uint64_t r = test_rand(&rs);
	unsigned int k = r % 8;

	r >>= 3;
	switch (route) {
	case R_SMALL:
		*size = 1 + (k < 6 ? r % 128 : r % 1024);
		*align = k < 4 ? 0 : (size_t)4 << k; /* 0, 64, 128, 256, 512 */
		break;
	case R_MEDIUM:
		*size = 1025 + r % (31 * 1024);
		if (*size % 4096 == 0)
			*size += 64;
		*align = k < 6 ? 0 : (size_t)64 << (k - 5); /* 128, 256 */
		break;
	case R_4K:
		if (k < 5) {
			*size = 4096 * (1 + r % 4);
			*align = k < 4 ? 4096 : 0;
		} else {
			*size = 1 + r % 16384;
			*align = (size_t)4096 << (k - 5); /* 4K, 8K, 16K */
		}
		break;
	case R_64K:
		if (k < 6) {
			*size = 65536 * (1 + r % 3);
			*align = k < 4 ? 65536 : 0;
		} else {
			*size = 1 + r % 65536;
			*align = (size_t)65536 << (r % 5); /* 64K - 1M */
		}
		break;
	case R_RUN:
		*size = 4097 + r % (1024 * 1024);
		*align = 4096;
		break;
	default:
		*size = 2 * MIB + (k < 4 ? 0 : r % (4 * MIB));
		*align = k % 4 == 1 ? 2 * MIB : k % 4 == 2 ? 4 * MIB : 0;
		break;
	}
}

/* A request: in mix mode, any size and alignment; in routes mode, one route's. */
static void
pick(size_t *size, size_t *align)
{
	if (!routes) {
		*size = random_size();
		*align = random_align();
		return;
	}
	route_request(random_route(), size, align);
}

static void
add_block(uint8_t *p, size_t size, size_t align)
{
	struct block *b = &live[nlive];
	size_t eff = align < 64 ? 64 : align;
	size_t usable;
	void **node;

	CHECK(((uintptr_t)p & (eff - 1)) == 0, "%p not aligned to %zu", p, eff);
	CHECK(hpm_malloc_validate(p, &usable) == 0 && usable >= size,
		"validate %p: usable %zu < %zu", p, usable, size);
	b->p = p;
	b->size = size;
	b->align = align;
	b->seed = test_rand(&rs);
	node = tsearch(b, &tree, interval_cmp);
	CHECK(node != NULL && *node == b, "block %p+%zu overlaps live block %p+%zu", p, size,
		node ? ((struct block *)*node)->p : NULL, node ? ((struct block *)*node)->size : 0);
	if (node == NULL || *node != b)
		exit(test_end("heap_diff"));
	fill(p, size, b->seed);
	nlive++;
	live_bytes += size;
}

static void
remove_block(unsigned int k)
{
	struct block *b = &live[k], *last = &live[nlive - 1];

	tdelete(b, &tree, interval_cmp);
	live_bytes -= b->size;
	if (b != last) {
		/* move the last record into the hole, and its tree node with it */
		tdelete(last, &tree, interval_cmp);
		*b = *last;
		tsearch(b, &tree, interval_cmp);
	}
	nlive--;
}

enum {
	OP_MALLOC,
	OP_ZMALLOC,
	OP_CALLOC,
	OP_REALLOC,
	OP_FREE,
	OP_BULK,
	OP_FREE_BULK,
	OP_CONTIG,
	OP_COUNT
};

struct counts {
	unsigned long ops[OP_COUNT];
	unsigned long blocks; /* allocated, bulk blocks each */
	unsigned long enomem;
	unsigned long in_place;
	unsigned long contig_ok;
	unsigned long contig_enomem; /* no IOVA-contiguous run free: not a failure */
};

static void
do_alloc(int op, struct counts *c)
{
	size_t size, align, num = 1;
	uint8_t *p;

	pick(&size, &align);
	if (op == OP_CALLOC) {
		num = 1 + test_rand(&rs) % 16;
		size = RTE_MAX(size / num, (size_t)1);
	}
	if (op == OP_MALLOC)
		p = test_rand(&rs) & 1 ? hpm_malloc_inline("diff", size, align)
				       : hpm_malloc("diff", size, align);
	else
		p = op == OP_ZMALLOC ? hpm_zmalloc("diff", size, align)
				     : hpm_calloc("diff", num, size, align);
	size *= num;
	if (p == NULL) {
		CHECK(rte_errno == ENOMEM, "alloc %zu align %zu: NULL with rte_errno %d", size,
			align, rte_errno);
		c->enomem++;
		return;
	}
	if (op != OP_MALLOC)
		CHECK(zeroed(p, size), "%s %p (%zu B) is not zeroed",
			op == OP_ZMALLOC ? "zmalloc" : "calloc", p, size);
	add_block(p, size, align);
	c->blocks++;
}

/* hpm_malloc_bulk of up to 32 blocks of a route that is not whole units. */
static void
do_bulk(struct counts *c)
{
	unsigned int n = 1 + test_rand(&rs) % 32, i;
	void *objs[32];
	size_t size, align;
	int rc;

	route_request((enum route)(test_rand(&rs) % (R_RUN + 1)), &size, &align);
	if (nlive + n > MAX_LIVE || live_bytes + n * size > MAX_LIVE_BYTES)
		return;
	rc = hpm_malloc_bulk(objs, n, size, align, SOCKET_ID_ANY);
	if (rc != 0) {
		CHECK(rc == -ENOMEM, "bulk %u x (%zu, %zu): %d", n, size, align, rc);
		c->enomem++;
		return;
	}
	for (i = 0; i < n && test_failures == 0; i++)
		add_block(objs[i], size, align);
	c->blocks += n;
}

/* hpm_free_bulk of up to 16 live blocks (any routes), NULLs among them. */
static void
do_free_bulk(void)
{
	unsigned int n = 1 + test_rand(&rs) % 16, i, k;
	void *objs[16];

	n = RTE_MIN(n, nlive);
	for (i = 0; i < n; i++) {
		/* the last ones: what remove_block moves is then never one of these */
		k = nlive - 1;
		CHECK(intact(live[k].p, live[k].size, live[k].seed),
			"block %p (%zu B) damaged before its free", live[k].p, live[k].size);
		objs[i] = live[k].p;
		remove_block(k);
		if (test_rand(&rs) % 8 == 0 && i + 1 < n)
			objs[++i] = NULL;
	}
	hpm_free_bulk(objs, n);
}

/* hpm_malloc_contig: IOVA-contiguous where the source has IOVAs, ENOTSUP where not. */
static void
do_contig(struct counts *c)
{
	uint64_t r = test_rand(&rs);
	/* most within a hugepage (always contiguous), some across two */
	size_t size = 1 + (r >> 8) % (r % 4 == 0 ? 4 * MIB : 2 * MIB), align = r & 4 ? 4096 : 0,
	       off;
	rte_iova_t iova;
	uint8_t *p;

	p = hpm_malloc_contig("diff", size, align, SOCKET_ID_ANY);
	if (p == NULL) {
		CHECK(rte_errno == (has_iova ? ENOMEM : ENOTSUP),
			"contig %zu: NULL with rte_errno %d", size, rte_errno);
		c->contig_enomem += has_iova;
		return;
	}
	CHECK(has_iova, "a contiguous block from a source without IOVAs");
	iova = hpm_malloc_virt2iova(p);
	CHECK(iova != RTE_BAD_IOVA, "contig %p: no IOVA", p);
	for (off = RTE_ALIGN_CEIL((uintptr_t)p + 1, 4096) - (uintptr_t)p; off < size; off += 4096)
		if (hpm_malloc_virt2iova(p + off) != iova + off) {
			CHECK(false, "contig %p (%zu B): IOVA of byte %zu is not contiguous", p,
				size, off);
			break;
		}
	add_block(p, size, align);
	c->blocks++;
	c->contig_ok++;
}

static void
do_realloc(struct counts *c)
{
	unsigned int k = test_rand(&rs) % nlive;
	struct block old = live[k];
	size_t size, align;
	size_t old_usable = hpm_malloc_usable_size(old.p);
	uint8_t *p;

	pick(&size, &align);
	p = hpm_realloc(old.p, size, align);
	if (p == NULL) {
		CHECK(rte_errno == ENOMEM, "realloc to %zu: NULL with rte_errno %d", size,
			rte_errno);
		CHECK(intact(old.p, old.size, old.seed), "failed realloc damaged %p", old.p);
		c->enomem++;
		return;
	}
	c->in_place += p == old.p;
	/*
	 * A block of granules or of a size class (more than 8 KiB, less than a
	 * unit) shrunk below half of it moves: left in place, it would pin
	 * memory placed for the larger block.
	 */
	CHECK(p != old.p || size >= old_usable / 2 || old_usable <= 8192 ||
			old_usable >= (size_t)2 << 20,
		"realloc %p (%zu B usable) to %zu B stayed in place", old.p, old_usable, size);
	/* the common prefix moved with the block */
	CHECK(intact_below(p, old.size, old.seed, size), "realloc %p (%zu B) -> %p (%zu B): lost",
		old.p, old.size, p, size);
	remove_block(k);
	add_block(p, size, align);
}

static void
do_free(void)
{
	unsigned int k = test_rand(&rs) % nlive;
	struct block *b = &live[k];

	CHECK(intact(b->p, b->size, b->seed), "block %p (%zu B) damaged before its free", b->p,
		b->size);
	if (test_rand(&rs) & 1)
		hpm_free_inline(b->p);
	else
		hpm_free(b->p);
	remove_block(k);
}

static void
validate_all(void)
{
	unsigned int i;

	for (i = 0; i < nlive; i++) {
		size_t usable = 0;

		CHECK(hpm_malloc_validate(live[i].p, &usable) == 0 && usable >= live[i].size,
			"live block %p not valid", live[i].p);
	}
	CHECK(hpm_heap_check() == 0, "heap check with %u live blocks", nlive);
}

/* An operation: mix mode's five, or routes mode's eight. */
static int
random_op(void)
{
	unsigned int r = test_rand(&rs) % 100;

	if (!routes)
		return r < 30    ? OP_MALLOC
			: r < 40 ? OP_ZMALLOC
			: r < 50 ? OP_CALLOC
			: r < 70 ? OP_REALLOC
				 : OP_FREE;
	return r < 24    ? OP_MALLOC
		: r < 30 ? OP_ZMALLOC
		: r < 35 ? OP_CALLOC
		: r < 50 ? OP_REALLOC
		: r < 93 ? OP_FREE
		: r < 96 ? OP_BULK
		: r < 99 ? OP_FREE_BULK
			 : OP_CONTIG;
}

static struct rte_malloc_socket_stats peak;

/* ops operations from the current seed, then the drain; the statistics back at before. */
static void
run(unsigned long ops, const struct rte_malloc_socket_stats *before, struct counts *c)
{
	struct rte_malloc_socket_stats after;
	unsigned long i;

	for (i = 0; i < ops && test_failures == 0; i++) {
		int op = random_op();

		if (nlive == 0 && (op == OP_REALLOC || op == OP_FREE || op == OP_FREE_BULK))
			op = OP_MALLOC;
		if ((nlive >= MAX_LIVE || live_bytes >= MAX_LIVE_BYTES) && op != OP_REALLOC)
			op = OP_FREE;
		c->ops[op]++;
		switch (op) {
		case OP_REALLOC:
			do_realloc(c);
			break;
		case OP_FREE:
			do_free();
			break;
		case OP_BULK:
			do_bulk(c);
			break;
		case OP_FREE_BULK:
			do_free_bulk();
			break;
		case OP_CONTIG:
			do_contig(c);
			break;
		default:
			do_alloc(op, c);
		}
		if (i % 20000 == 0) {
			struct rte_malloc_socket_stats now;

			validate_all();
			hpm_malloc_get_socket_stats(0, &now);
			if (now.heap_totalsz_bytes > peak.heap_totalsz_bytes)
				peak = now;
		}
	}
	validate_all();
	while (nlive > 0 && test_failures == 0)
		do_free();
	/* what the lcore's cache holds goes back too */
	hpm_cache_flush();
	CHECK(hpm_heap_check() == 0, "heap check after the drain");
	CHECK(hpm_malloc_get_socket_stats(0, &after) == 0, "stats");
	CHECK(after.alloc_count == before->alloc_count, "alloc_count %u, was %u", after.alloc_count,
		before->alloc_count);
	CHECK(after.heap_allocsz_bytes == before->heap_allocsz_bytes,
		"heap_allocsz_bytes %zu, was %zu", after.heap_allocsz_bytes,
		before->heap_allocsz_bytes);
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int
main(int argc, char **argv)
{
	const char *source = "anon";
	unsigned long ops = 1000000, i, nseeds = 1, s, total = 0;
	struct rte_malloc_socket_stats before, after;
	struct hpm_heap_stats hs;
	struct hpm_config cfg;
	struct counts c = {0};
	bool no_huge = false, small_heap = false;
	uint64_t seed0;
	double t0;
	int rc;

	for (i = 1; i < (unsigned long)argc; i++) {
		if (!strcmp(argv[i], "--source") && i + 1 < (unsigned long)argc)
			source = argv[++i];
		else if (!strcmp(argv[i], "--ops") && i + 1 < (unsigned long)argc)
			ops = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--seeds") && i + 1 < (unsigned long)argc)
			nseeds = RTE_MAX(strtoul(argv[++i], NULL, 0), 1ul);
		else if (!strcmp(argv[i], "--mode") && i + 1 < (unsigned long)argc)
			routes = !strcmp(argv[++i], "routes");
		else if (!strcmp(argv[i], "--no-huge"))
			no_huge = true;
		else if (!strcmp(argv[i], "--small-heap"))
			small_heap = true;
	}
	if (getenv("HPM_TEST_OPS") != NULL)
		ops = strtoul(getenv("HPM_TEST_OPS"), NULL, 0);
	seed0 = test_seed(0xd1ff);
	hpm_config_defaults(&cfg);
	cfg.chunk_size = 8 * MIB;
	/* routes: what the drain frees stays for the next seed, and most frees keep it */
	cfg.retain_size = routes ? 128 * MIB : 32 * MIB;
	cfg.release_delay_ms = 0; /* at once: the drain below shows it */
	/* small requests from the boundary-tag heap, not size-class pages */
	if (small_heap)
		cfg.flags |= HPM_CFG_F_SMALL_HEAP;
	if (!strcmp(source, "eal")) {
		rc = no_huge ? test_eal_init("heap_diff", "-l", "0", "--no-pci", "--no-huge", "-m",
				       "1024", NULL)
			     : test_eal_init("heap_diff", "-l", "0", "--no-pci", NULL);
		if (rc != 0)
			return TEST_SKIP;
		cfg.source = HPM_SOURCE_EAL;
		has_iova = !no_huge && rte_eal_iova_mode() != RTE_IOVA_DC;
	} else {
		cfg.source = !strcmp(source, "hugetlbfs") ? HPM_SOURCE_HUGETLBFS : HPM_SOURCE_ANON;
	}
	rc = hpm_init(&cfg);
	if (rc == -ENODEV) {
		printf("source %s not available here: skipped\n", source);
		return TEST_SKIP;
	}
	CHECK(rc == 0, "hpm_init: %d", rc);
	if (cfg.source == HPM_SOURCE_HUGETLBFS) {
		void *probe = hpm_malloc("probe", 64, 0);

		has_iova = hpm_malloc_virt2iova(probe) != RTE_BAD_IOVA;
		hpm_free(probe);
	}
	printf("source %s%s, mode %s, %lu ops over %lu seed%s\n", hpm_source_name(),
		no_huge ? " (--no-huge)" : "", routes ? "routes" : "mix", ops, nseeds,
		nseeds > 1 ? "s" : "");
	CHECK(hpm_malloc_get_socket_stats(0, &before) == 0, "stats");

	t0 = now_s();
	for (s = 0; s < nseeds && test_failures == 0; s++) {
		unsigned long n = ops / nseeds + (s < ops % nseeds);
		double t = now_s();

		rs = seed0 + s * UINT64_C(0x9e3779b97f4a7c15);
		rs = rs != 0 ? rs : 1;
		run(n, &before, &c);
		total += n;
		printf("seed %" PRIu64 ": %lu ops in %.1f s, back at the baseline\n",
			seed0 + s * UINT64_C(0x9e3779b97f4a7c15), n, now_s() - t);
	}
	CHECK(hpm_malloc_get_socket_stats(0, &after) == 0, "stats");
	/* empty chunks beyond the retain threshold went back; each kind of page keeps one
	 * empty unit (granules of 4 KiB and of 64 KiB, heap spans, size-class pages) and
	 * the size-class pages an empty page (its unit), each of which may keep a chunk of
	 * at most chunk_size alive */
	CHECK(hpm_heap_get_stats(0, &hs) == 0 &&
			hs.chunk_bytes <= cfg.retain_size + 5 * cfg.chunk_size,
		"heap holds %zu B of chunks after the drain (retain %zu)", hs.chunk_bytes,
		cfg.retain_size);
	printf("ops: %lu in %.1f s; malloc %lu zmalloc %lu calloc %lu realloc %lu (%lu in place) "
	       "free %lu bulk %lu free_bulk %lu contig %lu (%lu given, %lu ENOMEM); %lu blocks; "
	       "ENOMEM %lu\n",
		total, now_s() - t0, c.ops[OP_MALLOC], c.ops[OP_ZMALLOC], c.ops[OP_CALLOC],
		c.ops[OP_REALLOC], c.in_place, c.ops[OP_FREE], c.ops[OP_BULK], c.ops[OP_FREE_BULK],
		c.ops[OP_CONTIG], c.contig_ok, c.contig_enomem, c.blocks, c.enomem);
	if (routes) {
		printf("requests by route:");
		for (i = 0; i < R_COUNT; i++)
			printf(" %s %lu", route_name[i], route_count[i]);
		printf("\n");
	}
	printf("heap: peak %.1f MiB held for %.1f MiB in blocks; after the drain %.1f MiB held, "
	       "%u blocks\n",
		peak.heap_totalsz_bytes / (double)MIB, peak.heap_allocsz_bytes / (double)MIB,
		after.heap_totalsz_bytes / (double)MIB, after.alloc_count);
	CHECK(c.enomem < ops / 100, "%lu allocations failed", c.enomem);
	hpm_fini();
	return test_end("heap_diff");
}
