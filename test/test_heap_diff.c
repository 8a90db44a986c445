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
 * usage: test_heap_diff --source anon|hugetlbfs|eal [--no-huge] [--ops N]
 */

#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <search.h>
#include <stdbool.h>

#include <rte_errno.h>

#include "hpm_malloc.h"
#include "test_common.h"

#define MAX_LIVE 4096
#define MAX_LIVE_BYTES (UINT64_C(256) << 20)
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

/* Visit the checked bytes of a block: all of a small one, edges and a byte per page of a big one. */
#define FOR_CHECKED(size, off, seed)                                                            \
	for (size_t _page = 0, off = 0; off < (size); off = (size) <= FULL_CHECK_SIZE ? off + 1 \
			: off + 1 < EDGE                                              ? off + 1 \
			: off + 1 >= (size)-EDGE                                      ? off + 1 \
			: (_page = RTE_ALIGN_CEIL(off + 1, 4096)) + (seed) % 4096 < (size)-EDGE \
			? _page + (seed) % 4096                                                 \
			: (size)-EDGE)

static void
fill(uint8_t *p, size_t size, uint64_t seed)
{
	FOR_CHECKED(size, off, seed)
	p[off] = pattern(seed, off);
}

static bool
intact(const uint8_t *p, size_t size, uint64_t seed)
{
	FOR_CHECKED(size, off, seed)
	if (p[off] != pattern(seed, off)) {
		fprintf(stderr, "block %p: byte %zu is %#x, want %#x\n", p, off, p[off],
			pattern(seed, off));
		return false;
	}
	return true;
}

static bool
zeroed(const uint8_t *p, size_t size)
{
	FOR_CHECKED(size, off, (uint64_t)0)
	if (p[off] != 0)
		return false;
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

struct counts {
	unsigned long ops[5];
	unsigned long enomem;
	unsigned long in_place;
};

enum { OP_MALLOC, OP_ZMALLOC, OP_CALLOC, OP_REALLOC, OP_FREE };

static void
do_alloc(int op, struct counts *c)
{
	size_t size = random_size(), align = random_align(), num = 1;
	uint8_t *p;

	if (op == OP_CALLOC) {
		num = 1 + test_rand(&rs) % 16;
		size = RTE_MAX(size / num, (size_t)1);
	}
	p = op == OP_MALLOC        ? hpm_malloc("diff", size, align)
		: op == OP_ZMALLOC ? hpm_zmalloc("diff", size, align)
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
}

static void
do_realloc(struct counts *c)
{
	unsigned int k = test_rand(&rs) % nlive;
	struct block old = live[k];
	size_t size = random_size(), align = random_align();
	uint8_t *p = hpm_realloc(old.p, size, align);

	if (p == NULL) {
		CHECK(rte_errno == ENOMEM, "realloc to %zu: NULL with rte_errno %d", size,
			rte_errno);
		CHECK(intact(old.p, old.size, old.seed), "failed realloc damaged %p", old.p);
		c->enomem++;
		return;
	}
	c->in_place += p == old.p;
	/* the common prefix moved with the block */
	FOR_CHECKED(old.size, off, old.seed)
	if (off < size && p[off] != pattern(old.seed, off)) {
		CHECK(false, "realloc %p (%zu B) -> %p (%zu B): byte %zu lost", old.p, old.size, p,
			size, off);
		break;
	}
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

int
main(int argc, char **argv)
{
	const char *source = "anon";
	unsigned long ops = 1000000, i;
	struct rte_malloc_socket_stats before, peak = {0}, after;
	struct hpm_config cfg;
	struct counts c = {0};
	bool no_huge = false;
	int rc;

	for (i = 1; i < (unsigned long)argc; i++) {
		if (!strcmp(argv[i], "--source") && i + 1 < (unsigned long)argc)
			source = argv[++i];
		else if (!strcmp(argv[i], "--ops") && i + 1 < (unsigned long)argc)
			ops = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--no-huge"))
			no_huge = true;
	}
	if (getenv("HPM_TEST_OPS") != NULL)
		ops = strtoul(getenv("HPM_TEST_OPS"), NULL, 0);
	rs = test_seed(0xd1ff);
	hpm_config_defaults(&cfg);
	cfg.chunk_size = 8 * MIB;
	cfg.retain_size = 32 * MIB;
	cfg.release_delay_ms = 0; /* at once: the drain below shows it */
	if (!strcmp(source, "eal")) {
		rc = no_huge ? test_eal_init("heap_diff", "-l", "0", "--no-pci", "--no-huge", "-m",
				       "1024", NULL)
			     : test_eal_init("heap_diff", "-l", "0", "--no-pci", NULL);
		if (rc != 0)
			return TEST_SKIP;
		cfg.source = HPM_SOURCE_EAL;
	} else {
		cfg.source = !strcmp(source, "hugetlbfs") ? HPM_SOURCE_HUGETLBFS : HPM_SOURCE_ANON;
	}
	rc = hpm_init(&cfg);
	if (rc == -ENODEV) {
		printf("source %s not available here: skipped\n", source);
		return TEST_SKIP;
	}
	CHECK(rc == 0, "hpm_init: %d", rc);
	printf("source %s%s, %lu ops\n", hpm_source_name(), no_huge ? " (--no-huge)" : "", ops);
	CHECK(hpm_malloc_get_socket_stats(0, &before) == 0, "stats");

	for (i = 0; i < ops && test_failures == 0; i++) {
		unsigned int r = test_rand(&rs) % 100;
		int op = r < 30  ? OP_MALLOC
			: r < 40 ? OP_ZMALLOC
			: r < 50 ? OP_CALLOC
			: r < 70 ? OP_REALLOC
				 : OP_FREE;

		if (nlive == 0 && (op == OP_REALLOC || op == OP_FREE))
			op = OP_MALLOC;
		if ((nlive >= MAX_LIVE || live_bytes >= MAX_LIVE_BYTES) && op != OP_REALLOC)
			op = OP_FREE;
		c.ops[op]++;
		switch (op) {
		case OP_REALLOC:
			do_realloc(&c);
			break;
		case OP_FREE:
			do_free();
			break;
		default:
			do_alloc(op, &c);
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
	CHECK(after.alloc_count == before.alloc_count, "alloc_count %u, was %u", after.alloc_count,
		before.alloc_count);
	CHECK(after.heap_allocsz_bytes == before.heap_allocsz_bytes,
		"heap_allocsz_bytes %zu, was %zu", after.heap_allocsz_bytes,
		before.heap_allocsz_bytes);
	/* empty chunks beyond the retain threshold went back; each kind of page keeps one
	 * empty unit (runs and single granules of 4 KiB and 64 KiB, heap spans), which may
	 * keep a chunk of at most chunk_size alive */
	CHECK(after.heap_totalsz_bytes <= cfg.retain_size + 5 * cfg.chunk_size,
		"heap holds %zu B after the drain (retain %zu)", after.heap_totalsz_bytes,
		cfg.retain_size);
	printf("ops: malloc %lu zmalloc %lu calloc %lu realloc %lu (%lu in place) free %lu; "
	       "ENOMEM %lu\n",
		c.ops[OP_MALLOC], c.ops[OP_ZMALLOC], c.ops[OP_CALLOC], c.ops[OP_REALLOC],
		c.in_place, c.ops[OP_FREE], c.enomem);
	printf("heap: peak %.1f MiB held for %.1f MiB in blocks; after the drain %.1f MiB held, "
	       "%u blocks\n",
		peak.heap_totalsz_bytes / (double)MIB, peak.heap_allocsz_bytes / (double)MIB,
		after.heap_totalsz_bytes / (double)MIB, after.alloc_count);
	CHECK(c.enomem < ops / 100, "%lu allocations failed", c.enomem);
	hpm_fini();
	return test_end("heap_diff");
}
