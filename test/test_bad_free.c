/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Bad frees: for a block of every route (heap, 4 KiB granules, 64 KiB
 * granules, large units), freeing a foreign pointer (stack, libc, EAL's
 * rte_malloc, a non-canonical address), an interior pointer or a block
 * already freed is detected (hpm_bad_free_count() goes up by exactly one),
 * changes nothing (statistics, hpm_heap_check(), the contents of the victim
 * and of every other live block), and never makes hpmalloc hand a block out
 * twice: after a double free, a flood of allocations of the same kind gives
 * distinct, non-overlapping blocks that keep their contents. hpm_realloc() of
 * a bad pointer fails with EINVAL and changes nothing; hpm_malloc_validate()
 * and hpm_malloc_usable_size() say -1 and 0.
 *
 * usage: test_bad_free anon|eal
 */

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "hpm_malloc.h"
#include "test_common.h"

#define KIB(n) ((size_t)(n) << 10)
#define MIB(n) ((size_t)(n) << 20)

#define MAX_LIVE 64
#define MAX_FLOOD 32768

struct blk {
	uint8_t *p;
	size_t size;
	uint32_t seed;
};

/* One kind of block: a size and an alignment that select a route. */
struct kind {
	const char *name;
	size_t size;
	unsigned int align;
	/* blocks to allocate after the double free: twice what a page (or unit) holds */
	unsigned int flood;
};

static const struct kind kinds[] = {
	{"heap 64 B", 64, 0, 2 * (MIB(2) / 128)},
	{"heap 1000 B", 1000, 0, 2 * (MIB(2) / 1024)},
	{"4K granule 4096/4096", KIB(4), KIB(4), 2 * 512},
	{"4K granules 12K/8K", KIB(12), KIB(8), 2 * 128},
	{"4K granule run 64K/64K", KIB(64), KIB(64), 2 * 32},
	{"64K granules 384K/64K", KIB(384), KIB(64), 2 * 5},
	{"large 2M/2M", MIB(2), MIB(2), 16},
	{"large 5M", MIB(5), 0, 8},
};

/* Blocks that must keep their contents through every bad call. */
static struct blk live[MAX_LIVE];
static unsigned int nlive;
static struct blk flood[MAX_FLOOD];
static uint32_t next_seed = 1;
static bool eal_mode;

/* Hide a pointer's origin from the compiler (-Wfree-nonheap-object and friends). */
static void *volatile launder_slot;

static void *
launder(const void *p)
{
	launder_slot = (void *)(uintptr_t)p;
	return launder_slot;
}

static inline uint8_t
pattern(uint32_t seed, size_t off)
{
	return (uint8_t)(seed * 151u + off * 131u + (off >> 9) * 7u);
}

static void
fill(const struct blk *b)
{
	size_t i;

	for (i = 0; i < b->size; i++)
		b->p[i] = pattern(b->seed, i);
}

/* Offset of the first wrong byte, or size. */
static size_t
verify(const struct blk *b)
{
	size_t i;

	for (i = 0; i < b->size; i++)
		if (b->p[i] != pattern(b->seed, i))
			return i;
	return b->size;
}

static struct blk *
live_add(void *p, size_t size)
{
	struct blk *b;

	if (nlive >= MAX_LIVE) {
		fprintf(stderr, "too many live blocks\n");
		exit(1);
	}
	b = &live[nlive++];
	b->p = p;
	b->size = size;
	b->seed = next_seed++;
	fill(b);
	return b;
}

static void
live_remove(const void *p)
{
	unsigned int i;

	for (i = 0; i < nlive; i++)
		if (live[i].p == p) {
			live[i] = live[--nlive];
			return;
		}
}

/*
 * EAL's memzone header sits in the first 4 KiB granule of a chunk's first
 * unit (hpm_region::headed): the first run of a fresh heap starts past it,
 * and a free of the unit's start is a bad free that leaves EAL's header and
 * the heap as they were. (A run longer than the caches' 256 KiB: one run from
 * the locked path, not a batch.)
 */
static void
check_headed(void)
{
	uint8_t *p = hpm_malloc("bad_free", 300 << 10, 4096);
	uint8_t *base = RTE_PTR_ALIGN_FLOOR(p, 2u << 20);
	uint64_t count = hpm_bad_free_count();
	uint8_t head[128];

	CHECK(p != NULL && p == base + 4096, "first run at %p, unit at %p: not past a header",
		(void *)p, (void *)base);
	if (p == NULL || p != base + 4096) {
		hpm_free(p);
		return;
	}
	memcpy(head, base, sizeof(head));
	hpm_free(launder(base));
	CHECK(hpm_bad_free_count() == count + 1, "free of a headed unit's start not caught");
	CHECK(hpm_malloc_validate(base, NULL) < 0, "a headed unit's start validates");
	CHECK(memcmp(head, base, sizeof(head)) == 0, "EAL's header changed");
	CHECK(hpm_heap_check() == 0, "heap check after the free of a headed unit's start");
	hpm_free(p);
	CHECK(hpm_bad_free_count() == count + 1, "the run's free counted as bad");
}

static void
verify_live(const char *when)
{
	unsigned int i;

	for (i = 0; i < nlive; i++) {
		size_t at = verify(&live[i]);

		CHECK(at == live[i].size, "%s: live block %p (%zu B) changed at byte %zu", when,
			live[i].p, live[i].size, at);
	}
}

/* Statistics of every socket hpmalloc has, summed. */
static void
stats_sum(struct rte_malloc_socket_stats *sum)
{
	struct rte_malloc_socket_stats st;
	int s;

	memset(sum, 0, sizeof(*sum));
	for (s = 0; s < RTE_MAX_NUMA_NODES; s++) {
		if (hpm_malloc_get_socket_stats(s, &st) != 0)
			continue;
		sum->heap_totalsz_bytes += st.heap_totalsz_bytes;
		sum->heap_freesz_bytes += st.heap_freesz_bytes;
		sum->greatest_free_size = RTE_MAX(sum->greatest_free_size, st.greatest_free_size);
		sum->free_count += st.free_count;
		sum->alloc_count += st.alloc_count;
		sum->heap_allocsz_bytes += st.heap_allocsz_bytes;
	}
}

static void
check_stats_same(const char *what, const struct rte_malloc_socket_stats *a)
{
	struct rte_malloc_socket_stats b;

	stats_sum(&b);
	CHECK(a->alloc_count == b.alloc_count, "%s: alloc_count %u -> %u", what, a->alloc_count,
		b.alloc_count);
	CHECK(a->heap_allocsz_bytes == b.heap_allocsz_bytes, "%s: allocsz %zu -> %zu", what,
		a->heap_allocsz_bytes, b.heap_allocsz_bytes);
	CHECK(a->heap_totalsz_bytes == b.heap_totalsz_bytes, "%s: totalsz %zu -> %zu", what,
		a->heap_totalsz_bytes, b.heap_totalsz_bytes);
	CHECK(a->heap_freesz_bytes == b.heap_freesz_bytes && a->free_count == b.free_count &&
			a->greatest_free_size == b.greatest_free_size,
		"%s: free ranges changed: %zu B in %u (max %zu) -> %zu B in %u (max %zu)", what,
		a->heap_freesz_bytes, a->free_count, a->greatest_free_size, b.heap_freesz_bytes,
		b.free_count, b.greatest_free_size);
}

/*
 * ptr is not a live block: freeing it is counted once and changes nothing;
 * realloc fails with EINVAL and changes nothing; validate and usable_size
 * know it is no block.
 */
static void
bad_pointer(const char *kind, const char *what, const void *ptr)
{
	struct rte_malloc_socket_stats st;
	char desc[128];
	uint64_t count, after;
	size_t size = 777;
	void *q;

	snprintf(desc, sizeof(desc), "%s: %s (%p)", kind, what, ptr);
	stats_sum(&st);
	count = hpm_bad_free_count();

	hpm_free(launder(ptr));
	CHECK(hpm_bad_free_count() == count + 1, "%s: free counted %" PRIu64 " bad frees", desc,
		hpm_bad_free_count() - count);
	check_stats_same(desc, &st);
	CHECK(hpm_heap_check() == 0, "%s: heap check after free", desc);
	verify_live(desc);

	count = hpm_bad_free_count();
	rte_errno = 0;
	q = hpm_realloc(launder(ptr), 200, 0);
	CHECK(q == NULL, "%s: realloc gave %p", desc, q);
	CHECK(rte_errno == EINVAL, "%s: realloc: rte_errno %d", desc, rte_errno);
	after = hpm_bad_free_count();
	CHECK(after == count || after == count + 1, "%s: realloc counted %" PRIu64 " bad frees",
		desc, after - count);
	check_stats_same(desc, &st);
	CHECK(hpm_heap_check() == 0, "%s: heap check after realloc", desc);
	verify_live(desc);

	count = hpm_bad_free_count();
	CHECK(hpm_malloc_validate(ptr, &size) == -1, "%s: validate says it is a block", desc);
	CHECK(size == 777, "%s: validate wrote a size", desc);
	CHECK(hpm_malloc_validate(ptr, NULL) == -1, "%s: validate(NULL size)", desc);
	CHECK(hpm_malloc_usable_size(ptr) == 0, "%s: usable size %zu", desc,
		hpm_malloc_usable_size(ptr));
	CHECK(hpm_bad_free_count() == count, "%s: validate counted a bad free", desc);
	check_stats_same(desc, &st);
}

/* A live block, registered and filled. */
static struct blk *
alloc_live(const struct kind *k)
{
	void *p = hpm_malloc("bad_free", k->size, k->align);

	CHECK(p != NULL, "%s: malloc: rte_errno %d", k->name, rte_errno);
	if (p == NULL)
		return NULL;
	CHECK(((uintptr_t)p & (RTE_MAX(k->align, 64u) - 1)) == 0, "%s: %p misaligned", k->name, p);
	CHECK(hpm_malloc_usable_size(p) >= k->size, "%s: usable %zu", k->name,
		hpm_malloc_usable_size(p));
	return live_add(p, k->size);
}

static void
free_live(struct blk *b)
{
	uint64_t count = hpm_bad_free_count();
	void *p = b->p;
	size_t at = verify(b);

	CHECK(at == b->size, "block %p changed at byte %zu", b->p, at);
	live_remove(p);
	hpm_free(p);
	CHECK(hpm_bad_free_count() == count, "good free of %p counted as bad", p);
}

static int
blk_cmp(const void *a, const void *b)
{
	const struct blk *x = a, *y = b;

	return x->p < y->p ? -1 : x->p > y->p;
}

/*
 * After the double free: allocate many blocks of the kind; every block is
 * distinct, overlaps no other live block (usable sizes), and keeps its
 * contents while all of them are live.
 */
static void
flood_check(const struct kind *k)
{
	static struct blk all[MAX_FLOOD + MAX_LIVE];
	unsigned int i, n = 0, nall = 0, overlaps = 0, bad = 0;
	uint64_t count = hpm_bad_free_count();

	for (i = 0; i < k->flood && i < MAX_FLOOD; i++) {
		void *p = hpm_malloc("flood", k->size, k->align);

		if (p == NULL) {
			CHECK(p != NULL, "%s: flood block %u: rte_errno %d", k->name, i, rte_errno);
			break;
		}
		CHECK(((uintptr_t)p & (RTE_MAX(k->align, 64u) - 1)) == 0 &&
				hpm_malloc_usable_size(p) >= k->size,
			"%s: flood block %p: misaligned or usable size %zu", k->name, p,
			hpm_malloc_usable_size(p));
		flood[n].p = p;
		flood[n].size = k->size;
		flood[n].seed = next_seed++;
		fill(&flood[n]);
		n++;
	}
	/* every block with its usable size, flood and live alike, in address order */
	for (i = 0; i < n; i++) {
		all[nall] = flood[i];
		all[nall++].size = hpm_malloc_usable_size(flood[i].p);
	}
	for (i = 0; i < nlive; i++) {
		all[nall] = live[i];
		all[nall++].size = hpm_malloc_usable_size(live[i].p);
	}
	qsort(all, nall, sizeof(all[0]), blk_cmp);
	for (i = 0; i < nall; i++) {
		if (all[i].size == 0)
			bad++;
		if (i > 0 && all[i - 1].p + all[i - 1].size > all[i].p) {
			if (overlaps++ < 5)
				CHECK(false, "%s: block %p (%zu B) overlaps %p", k->name,
					all[i - 1].p, all[i - 1].size, all[i].p);
		}
	}
	CHECK(overlaps == 0, "%s: %u overlapping blocks after a double free", k->name, overlaps);
	CHECK(bad == 0, "%s: %u blocks without a usable size", k->name, bad);
	for (i = 0, bad = 0; i < n; i++)
		bad += verify(&flood[i]) != flood[i].size;
	CHECK(bad == 0, "%s: %u flood blocks lost their contents", k->name, bad);
	verify_live(k->name);
	CHECK(hpm_heap_check() == 0, "%s: heap check after the flood", k->name);
	for (i = 0; i < n; i++)
		hpm_free(flood[i].p);
	CHECK(hpm_bad_free_count() == count, "%s: good frees counted as bad", k->name);
}

static void
check_kind(const struct kind *k, const void *stack, const void *libc, const void *rte)
{
	static const size_t interior[] = {16, 64, 4096, 65536, MIB(2), MIB(2) + 4096};
	struct rte_malloc_socket_stats st0, st;
	struct blk *a, *v, *b;
	uint8_t *vp;
	char what[64];
	unsigned int i;

	printf("%s\n", k->name);
	stats_sum(&st0);
	/* the victim between two neighbours of its kind */
	a = alloc_live(k);
	v = alloc_live(k);
	b = alloc_live(k);
	if (a == NULL || v == NULL || b == NULL)
		return;
	vp = v->p;

	bad_pointer(k->name, "stack variable", stack);
	bad_pointer(k->name, "libc malloc block", libc);
	if (rte != NULL)
		bad_pointer(k->name, "rte_malloc block", rte);
	bad_pointer(k->name, "non-canonical address", (const void *)(UINTPTR_MAX - 4095));
	/* the owner table masks the index: this one reads the victim's entry */
	bad_pointer(k->name, "victim + 2^47", (const void *)((uintptr_t)vp + ((uintptr_t)1 << 47)));
	for (i = 0; i < RTE_DIM(interior); i++) {
		if (interior[i] >= k->size)
			continue;
		snprintf(what, sizeof(what), "interior p+%zu", interior[i]);
		bad_pointer(k->name, what, vp + interior[i]);
	}
	/* the victim is still a good block */
	CHECK(hpm_malloc_validate(vp, NULL) == 0, "%s: victim no longer valid", k->name);
	CHECK(verify(v) == v->size, "%s: victim changed", k->name);

	/* free it, then again */
	free_live(v);
	v = NULL;
	bad_pointer(k->name, "double free", vp);
	/* a third time, for good measure: still one count per call */
	bad_pointer(k->name, "triple free", vp);
	CHECK(hpm_heap_check() == 0, "%s: heap check", k->name);

	flood_check(k);

	free_live(a);
	free_live(b);
	stats_sum(&st);
	CHECK(st.alloc_count == st0.alloc_count, "%s: %u blocks, %u before", k->name,
		st.alloc_count, st0.alloc_count);
	CHECK(st.heap_allocsz_bytes == st0.heap_allocsz_bytes, "%s: %zu bytes, %zu before", k->name,
		st.heap_allocsz_bytes, st0.heap_allocsz_bytes);
	CHECK(hpm_heap_check() == 0, "%s: heap check at the end", k->name);
}

/* hpm_free_bulk() with bad pointers among good ones: the good ones go, one count per bad. */
static void
check_bulk(const void *stack)
{
	void *objs[6];
	uint8_t *p;
	uint64_t count;
	struct rte_malloc_socket_stats st0, st;

	stats_sum(&st0);
	objs[0] = hpm_malloc("bulk", 100, 0);
	objs[1] = hpm_malloc("bulk", KIB(4), KIB(4));
	p = hpm_malloc("bulk", KIB(64), KIB(64));
	CHECK(objs[0] != NULL && objs[1] != NULL && p != NULL, "bulk: malloc");
	if (objs[0] == NULL || objs[1] == NULL || p == NULL)
		return;
	objs[2] = launder(p + 4096);
	objs[3] = NULL;
	objs[4] = launder(stack);
	objs[5] = p;
	count = hpm_bad_free_count();
	hpm_free_bulk(objs, RTE_DIM(objs));
	CHECK(hpm_bad_free_count() == count + 2, "bulk: %" PRIu64 " bad frees counted, 2 made",
		hpm_bad_free_count() - count);
	stats_sum(&st);
	CHECK(st.alloc_count == st0.alloc_count, "bulk: %u blocks left, %u before", st.alloc_count,
		st0.alloc_count);
	CHECK(hpm_heap_check() == 0, "bulk: heap check");
}

/*
 * A block twice in one hpm_free_bulk() (and a third time in the next call):
 * the first goes, the others are bad frees; for each route a cache serves in
 * bulk (a size class, single granules, a run), the second time right after
 * the first, and after another block of the same page.
 */
static void
check_bulk_twice(void)
{
	static const struct {
		size_t size, align;
	} reqs[] = {{64, 0}, {1000, 64}, {KIB(4), KIB(4)}, {KIB(8), KIB(4)}, {KIB(64), KIB(64)}};
	struct rte_malloc_socket_stats st0, st;
	unsigned int r;

	stats_sum(&st0);
	for (r = 0; r < RTE_DIM(reqs); r++) {
		void *a = hpm_malloc("twice", reqs[r].size, (unsigned int)reqs[r].align);
		void *b = hpm_malloc("twice", reqs[r].size, (unsigned int)reqs[r].align);
		void *objs[5] = {a, a, b, a, NULL};
		uint64_t count = hpm_bad_free_count();

		CHECK(a != NULL && b != NULL, "twice: malloc %zu", reqs[r].size);
		if (a == NULL || b == NULL)
			continue;
		hpm_free_bulk(objs, RTE_DIM(objs));
		CHECK(hpm_bad_free_count() == count + 2,
			"twice, %zu B: %" PRIu64 " bad frees counted, 2 made", reqs[r].size,
			hpm_bad_free_count() - count);
		objs[0] = b;
		hpm_free_bulk(objs, 1);
		CHECK(hpm_bad_free_count() == count + 3,
			"twice, %zu B: %" PRIu64 " bad frees counted in both calls, 3 made",
			reqs[r].size, hpm_bad_free_count() - count);
		/* what went to the cache comes back once */
		a = hpm_malloc("twice", reqs[r].size, (unsigned int)reqs[r].align);
		b = hpm_malloc("twice", reqs[r].size, (unsigned int)reqs[r].align);
		CHECK(a != NULL && b != NULL && a != b, "twice, %zu B: %p and %p after",
			reqs[r].size, a, b);
		hpm_free(a);
		hpm_free(b);
	}
	hpm_cache_flush();
	stats_sum(&st);
	CHECK(st.alloc_count == st0.alloc_count && st.heap_allocsz_bytes == st0.heap_allocsz_bytes,
		"twice: %u blocks and %zu bytes left, %u and %zu before", st.alloc_count,
		st.heap_allocsz_bytes, st0.alloc_count, st0.heap_allocsz_bytes);
	CHECK(hpm_heap_check() == 0, "twice: heap check");
}

int
main(int argc, char **argv)
{
	struct rte_malloc_socket_stats st;
	struct hpm_config cfg;
	uint64_t stack_var[8] = {0};
	uint64_t count;
	void *libc, *rte = NULL;
	unsigned int i;
	int rc;

	if (argc < 2 || (strcmp(argv[1], "anon") != 0 && strcmp(argv[1], "eal") != 0)) {
		fprintf(stderr, "usage: %s anon|eal\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	eal_mode = strcmp(argv[1], "eal") == 0;
	if (eal_mode && test_eal_init("bad_free", "-l", "0", "--no-pci", NULL) != 0) {
		printf("bad_free: EAL cannot start, skipped\n");
		return TEST_SKIP;
	}
	/* before hpm_init a foreign pointer is counted too, and initialises nothing */
	count = hpm_bad_free_count();
	hpm_free(launder(stack_var));
	CHECK(hpm_bad_free_count() == count + 1, "bad free before init not counted");
	hpm_free(NULL);
	CHECK(hpm_bad_free_count() == count + 1, "hpm_free(NULL) before init counted");
	CHECK(hpm_source_name() == NULL, "hpm_free initialised hpmalloc");

	hpm_config_defaults(&cfg);
	cfg.source = eal_mode ? HPM_SOURCE_EAL : HPM_SOURCE_ANON;
	rc = hpm_init(&cfg);
	CHECK(rc == 0, "hpm_init: %d", rc);
	if (rc != 0)
		return test_end("bad_free");
	printf("source %s\n", hpm_source_name());
	CHECK(hpm_bad_free_count() == 0, "count %" PRIu64 " right after hpm_init",
		hpm_bad_free_count());
	hpm_free(NULL);
	CHECK(hpm_bad_free_count() == 0, "hpm_free(NULL) counted");

	libc = malloc(100);
	CHECK(libc != NULL, "libc malloc");
	memset(libc, 0x3c, 100);
	if (eal_mode) {
		rte = rte_malloc("bad_free", 100, 0);
		CHECK(rte != NULL, "rte_malloc");
	}
	if (eal_mode)
		check_headed();
	/* bystanders: one block of every kind, live all along */
	for (i = 0; i < RTE_DIM(kinds); i++)
		alloc_live(&kinds[i]);

	for (i = 0; i < RTE_DIM(kinds); i++)
		check_kind(&kinds[i], stack_var, libc, rte);
	check_bulk(stack_var);
	check_bulk_twice();

	verify_live("end");
	while (nlive > 0)
		free_live(&live[nlive - 1]);
	stats_sum(&st);
	CHECK(st.alloc_count == 0, "%u blocks left", st.alloc_count);
	CHECK(st.heap_allocsz_bytes == 0, "%zu bytes left", st.heap_allocsz_bytes);
	CHECK(hpm_heap_check() == 0, "heap check at the end");
	printf("%" PRIu64 " bad frees counted\n", hpm_bad_free_count());
	hpm_fini();
	if (rte != NULL)
		rte_free(rte);
	for (i = 0; i < RTE_DIM(stack_var); i++)
		CHECK(stack_var[i] == 0, "stack variable changed");
	/* libc's block is intact: hpmalloc never wrote to it */
	for (i = 0; i < 100; i++)
		if (((uint8_t *)libc)[i] != 0x3c)
			break;
	CHECK(i == 100, "libc block changed at byte %u", i);
	free(libc);
	return test_end("bad_free");
}
