/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The statistics tell the truth about the memory held: what every socket's
 * heap_totalsz_bytes says the heap holds is what the process has mapped of
 * hugepages since hpm_init() (Shared_Hugetlb + Private_Hugetlb of
 * /proc/self/smaps_rollup), on the eal source: after growth over every route,
 * during and after churn with frees across lcores (blocks in caches and the
 * transfer store, counted once, as free), after a trim, and after hpm_fini()
 * (nothing left). And the parts add up: alloc + free = total, held = chunks +
 * metadata + overhead, chunks = live + cached + free.
 *
 * Tolerance: heap_totalsz_bytes counts every page one of the heap's memzones
 * (or the EAL header just below it) touches. A page EAL had mapped before
 * hpm_init() for itself may hold one of the heap's first memzones too: it is
 * counted by the heap and not in the difference since hpm_init(). So the
 * heap may say up to those pages (EAL's, measured before hpm_init(): 2 MiB
 * here) more, never less; this test makes no other EAL allocation. Exact
 * otherwise.
 *
 * And no hugepage holds an EAL header alone: a chunk's first unit holds its
 * memzone's header (hpm_region::headed), a metadata region fills its pages,
 * so what is held beyond chunks and metadata is at most a 4 KiB granule per
 * chunk and a page's rest per metadata region (a 2 MiB-aligned memzone took
 * a hugepage more for its header: 2 MiB per chunk).
 *
 * With --socket-mem (test_held prealloc), memzones are cut from memory EAL
 * mapped at start, whose free element ends anywhere: every chunk still has
 * all its units (a zone cut off a page boundary would hold one less: 14 MiB
 * of a 16 MiB chunk); what is held beyond them and the metadata stays under
 * a unit (the page a metadata region cut off a boundary shares).
 * Hugepages are mapped before hpm_init() there, so smaps says nothing.
 *
 * usage: test_held [prealloc]   (EAL with two lcores: -l 0-1)
 */

#include <inttypes.h>

#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_memory.h>
#include <rte_memzone.h>
#include <rte_launch.h>
#include <rte_ring.h>

#include "hpm_malloc.h"
#include "test_common.h"

#define MIB (UINT64_C(1) << 20)
#define NBLK 8000
#define RING_SIZE 4096

static size_t eal_mapped;
static void *blk[NBLK];
static struct rte_ring *ring;
static uint64_t rs = 0x4e1d;

/* Every socket's figures summed; false if a socket's are missing. */
static bool
sum_stats(struct rte_malloc_socket_stats *st, struct hpm_heap_stats *hs)
{
	struct rte_malloc_socket_stats s;
	struct hpm_heap_stats h;
	bool any = false;
	int i;

	memset(st, 0, sizeof(*st));
	memset(hs, 0, sizeof(*hs));
	for (i = 0; i < RTE_MAX_NUMA_NODES; i++) {
		if (hpm_malloc_get_socket_stats(i, &s) != 0)
			continue;
		CHECK(hpm_heap_get_stats(i, &h) == 0, "heap stats of socket %d", i);
		CHECK(s.heap_allocsz_bytes + s.heap_freesz_bytes == s.heap_totalsz_bytes,
			"socket %d: alloc %zu + free %zu != total %zu", i, s.heap_allocsz_bytes,
			s.heap_freesz_bytes, s.heap_totalsz_bytes);
		CHECK(h.held_bytes == s.heap_totalsz_bytes && h.live_bytes == s.heap_allocsz_bytes,
			"socket %d: parts say held %zu live %zu, stats %zu %zu", i, h.held_bytes,
			h.live_bytes, s.heap_totalsz_bytes, s.heap_allocsz_bytes);
		CHECK(h.chunk_bytes + h.meta_bytes + h.overhead_bytes == h.held_bytes,
			"socket %d: chunks %zu + meta %zu + overhead %zu != held %zu", i,
			h.chunk_bytes, h.meta_bytes, h.overhead_bytes, h.held_bytes);
		/* a heap span's last 64 bytes are a sentinel, in no block */
		CHECK(h.live_bytes + h.cached_bytes + h.free_bytes <= h.chunk_bytes &&
				h.live_bytes + h.cached_bytes + h.free_bytes +
						64 * (h.chunk_bytes / (2 * MIB)) >=
					h.chunk_bytes,
			"socket %d: live %zu + cached %zu + free %zu, chunks %zu", i, h.live_bytes,
			h.cached_bytes, h.free_bytes, h.chunk_bytes);
		/*
		 * Units in use: whole units of the chunks (a headed one counts its
		 * granule the chunk's bytes leave out), holding every block; the
		 * rest of the chunks is whole free units, counted free.
		 */
		CHECK(h.in_use_bytes % (2 * MIB) == 0 &&
				h.in_use_bytes <= h.chunk_bytes + (size_t)h.chunks * 4096 &&
				h.live_bytes + h.cached_bytes <= h.in_use_bytes &&
				h.chunk_bytes <= h.in_use_bytes + h.free_bytes &&
				h.in_use_peak_bytes >= h.in_use_bytes,
			"socket %d: units in use %zu (peak %zu), chunks %zu in %u, live %zu + cached %zu, free %zu",
			i, h.in_use_bytes, h.in_use_peak_bytes, h.chunk_bytes, h.chunks,
			h.live_bytes, h.cached_bytes, h.free_bytes);
		st->heap_totalsz_bytes += s.heap_totalsz_bytes;
		st->heap_allocsz_bytes += s.heap_allocsz_bytes;
		st->heap_freesz_bytes += s.heap_freesz_bytes;
		st->alloc_count += s.alloc_count;
		hs->held_bytes += h.held_bytes;
		hs->chunk_bytes += h.chunk_bytes;
		hs->meta_bytes += h.meta_bytes;
		hs->overhead_bytes += h.overhead_bytes;
		hs->cached_bytes += h.cached_bytes;
		hs->chunks += h.chunks;
		any = true;
	}
	return any;
}

/*
 * A large block takes whole units: units in use rise by its length (and by
 * what a realloc adds), fall back when it goes, and their peak stays.
 */
static void
in_use_large(void)
{
	struct hpm_heap_stats h0, h1, h2;
	void *p, *q;

	CHECK(hpm_heap_get_stats(0, &h0) == 0, "heap stats");
	p = hpm_malloc("held", 8 * MIB, 2 * MIB);
	CHECK(p != NULL && hpm_heap_get_stats(0, &h1) == 0, "an 8 MiB block");
	/* grown to 12 MiB (in place when the next units are free, else moved): 4 units more */
	q = hpm_realloc(p, 12 * MIB, 2 * MIB);
	CHECK(q != NULL && hpm_heap_get_stats(0, &h2) == 0, "the block grown to 12 MiB");
	printf("units in use: %zu MiB with the block grown to 12 MiB (%s)\n", h2.in_use_bytes / MIB,
		q == p ? "in place" : "moved");
	CHECK(h2.in_use_bytes == h1.in_use_bytes + 4 * MIB,
		"units in use: %zu with an 8 MiB block, %zu with it grown to 12 MiB",
		h1.in_use_bytes, h2.in_use_bytes);
	p = hpm_realloc(q != NULL ? q : p, 8 * MIB, 2 * MIB);
	CHECK(p != NULL && hpm_heap_get_stats(0, &h1) == 0, "the block back to 8 MiB");
	hpm_free(p);
	CHECK(hpm_heap_get_stats(0, &h2) == 0, "heap stats");
	printf("units in use: %zu MiB, %zu with an 8 MiB block, %zu after (peak %zu MiB)\n",
		h0.in_use_bytes / MIB, h1.in_use_bytes / MIB, h2.in_use_bytes / MIB,
		h2.in_use_peak_bytes / MIB);
	CHECK(h1.in_use_bytes == h0.in_use_bytes + 8 * MIB && h2.in_use_bytes == h0.in_use_bytes,
		"units in use: %zu, %zu with an 8 MiB block, %zu after", h0.in_use_bytes,
		h1.in_use_bytes, h2.in_use_bytes);
	CHECK(h1.in_use_peak_bytes >= h0.in_use_bytes + 12 * MIB &&
			h2.in_use_peak_bytes == h1.in_use_peak_bytes,
		"peak of units in use: %zu with the block, %zu after (%zu before it)",
		h1.in_use_peak_bytes, h2.in_use_peak_bytes, h0.in_use_bytes);
}

/*
 * A page of 4 KiB granules takes the edge unit of the chunk the heap grew for
 * it (the unit that shares the chunk's header), and gives back the unit that
 * growth handed out: the peak of units in use counts one unit, not both.
 */
static void
in_use_peak_growth(void)
{
	struct hpm_heap_stats h0, h1;
	void *p;

	CHECK(hpm_heap_get_stats(0, &h0) == 0, "heap stats");
	p = hpm_malloc("held", 4096, 4096);
	CHECK(p != NULL && hpm_heap_get_stats(0, &h1) == 0, "a 4 KiB block");
	printf("a 4 KiB block: %u chunks (%u before), units in use %zu MiB, peak %zu MiB "
	       "(%zu, %zu before)\n",
		h1.chunks, h0.chunks, h1.in_use_bytes / MIB, h1.in_use_peak_bytes / MIB,
		h0.in_use_bytes / MIB, h0.in_use_peak_bytes / MIB);
	CHECK(h1.chunks == h0.chunks + 1 && h1.in_use_bytes == h0.in_use_bytes + 2 * MIB,
		"a 4 KiB block in a new heap: %u chunks (%u before), units in use %zu (%zu before)",
		h1.chunks, h0.chunks, h1.in_use_bytes, h0.in_use_bytes);
	CHECK(h1.in_use_peak_bytes == RTE_MAX(h0.in_use_peak_bytes, h1.in_use_bytes),
		"peak of units in use %zu, %zu in use (peak %zu before)", h1.in_use_peak_bytes,
		h1.in_use_bytes, h0.in_use_peak_bytes);
	hpm_free(p);
}

/* Held beyond chunks and metadata: a headed unit's granule per chunk, a page's rest per region. */
static void
no_header_pages(const char *when)
{
	struct hpm_heap_stats h;

	CHECK(hpm_heap_get_stats(0, &h) == 0, "heap stats");
	CHECK(h.overhead_bytes <= h.chunks * (size_t)4096 + h.meta_regions * (size_t)4096,
		"%s: %zu bytes held in neither chunks (%u) nor metadata (%u regions): EAL "
		"headers on pages of their own",
		when, h.overhead_bytes, h.chunks, h.meta_regions);
}

/* hpmalloc's memzones, by EAL's records: the pages they (and EAL's header below each) touch. */
#define MAX_ZONES 4096
static uintptr_t zstart[MAX_ZONES], zend[MAX_ZONES];
static unsigned int nzones;

static void
zone_cb(const struct rte_memzone *mz, void *arg)
{
	size_t pg = mz->hugepage_sz != 0 ? mz->hugepage_sz : 4096;

	RTE_SET_USED(arg);
	if (strncmp(mz->name, "hpm_", 4) != 0 || nzones >= MAX_ZONES)
		return;
	/* EAL's element header: the two cache lines below the zone */
	zstart[nzones] = RTE_ALIGN_FLOOR((uintptr_t)mz->addr - 2 * RTE_CACHE_LINE_SIZE, pg);
	zend[nzones++] = RTE_ALIGN_CEIL((uintptr_t)mz->addr + mz->len, pg);
}

/* Whether a page holds some of hpmalloc's memzones; counts the pages EAL maps and those. */
struct pages {
	size_t mapped;
	size_t hpm;
};

static int
page_cb(const struct rte_memseg_list *msl, const struct rte_memseg *ms, void *arg)
{
	struct pages *pg = arg;
	uintptr_t va = (uintptr_t)ms->addr;
	unsigned int i;

	RTE_SET_USED(msl);
	pg->mapped += ms->len;
	for (i = 0; i < nzones; i++)
		if (zstart[i] < va + ms->len && va < zend[i]) {
			pg->hpm += ms->len;
			break;
		}
	return 0;
}

/*
 * The heap's count against the machine's, now: what the heap says it holds
 * is exactly the pages its memzones touch by EAL's records, and the process
 * maps those and EAL's own (hpm_init() found those mapped; EAL's free pages
 * since hpm_init() are in the difference).
 */
static void
compare(const char *when)
{
	struct rte_malloc_socket_stats st, e;
	struct hpm_heap_stats hs;
	struct pages pg = {0};
	size_t mapped = test_hugetlb_mapped();

	if (!sum_stats(&st, &hs)) {
		CHECK(false, "%s: no statistics", when);
		return;
	}
	nzones = 0;
	rte_memzone_walk(zone_cb, NULL);
	rte_memseg_walk(page_cb, &pg);
	rte_malloc_get_socket_stats(rte_socket_id(), &e);
	printf("%-24s held %6.1f MiB (chunks %6.1f in %3u, meta %4.1f, overhead %5.1f; "
	       "live %6.1f, cached %4.1f); mapped %6.1f MiB, EAL's rest %4.1f\n",
		when, st.heap_totalsz_bytes / (double)MIB, hs.chunk_bytes / (double)MIB, hs.chunks,
		hs.meta_bytes / (double)MIB, hs.overhead_bytes / (double)MIB,
		st.heap_allocsz_bytes / (double)MIB, hs.cached_bytes / (double)MIB,
		mapped / (double)MIB,
		(mapped - RTE_MIN(mapped, st.heap_totalsz_bytes)) / (double)MIB);
	CHECK(st.heap_totalsz_bytes == pg.hpm,
		"%s: the heap says it holds %zu bytes, its %u memzones touch %zu bytes of pages",
		when, st.heap_totalsz_bytes, nzones, pg.hpm);
	CHECK(pg.mapped == mapped && e.heap_totalsz_bytes == mapped,
		"%s: EAL maps %zu bytes of pages (its heap %zu), the process %zu", when, pg.mapped,
		e.heap_totalsz_bytes, mapped);
	/* what is not the heap's is EAL's: its pages of before, and free ones */
	CHECK(st.heap_totalsz_bytes <= mapped &&
			mapped - st.heap_totalsz_bytes <= eal_mapped + e.heap_freesz_bytes,
		"%s: the heap says %zu, the process maps %zu (EAL's %zu before, %zu free)", when,
		st.heap_totalsz_bytes, mapped, eal_mapped, e.heap_freesz_bytes);
}

/* A size and alignment of every route: size classes, heap, granules, large. */
static size_t
pick(unsigned int *align)
{
	unsigned int r = test_rand(&rs) % 100;

	*align = 0;
	if (r < 40)
		return 16 + test_rand(&rs) % 1024;
	if (r < 60)
		return 1024 + test_rand(&rs) % (63 * 1024);
	if (r < 75) {
		*align = 4096;
		return 4096;
	}
	if (r < 85) {
		*align = 65536;
		return 65536;
	}
	if (r < 99 || test_rand(&rs) % 4 != 0)
		return 64 * 1024 + test_rand(&rs) % (192 * 1024);
	*align = 2 * MIB;
	return 2 * MIB + test_rand(&rs) % (2 * MIB);
}

static unsigned int
grow(unsigned int n)
{
	unsigned int i, align;

	for (i = 0; i < n; i++) {
		size_t size = pick(&align);

		blk[i] = hpm_malloc("held", size, align);
		CHECK(blk[i] != NULL, "block %u of %zu", i, size);
		if (blk[i] == NULL)
			break;
		memset(blk[i], 0x5a, RTE_MIN(size, (size_t)256));
	}
	return i;
}

/* The worker lcore allocates, the main lcore frees (across lcores), n blocks. */
static int
producer(void *arg)
{
	unsigned int n = (unsigned int)(uintptr_t)arg, i, align;
	uint64_t r = 0xfeed;

	for (i = 0; i < n; i++) {
		size_t size;
		void *p;

		r = r * 6364136223846793005u + 1;
		size = (r >> 33) % 3 == 0 ? 4096 : 64 + (r >> 40) % 2048;
		align = size == 4096 ? 4096 : 0;
		p = hpm_malloc("held", size, align);
		if (p == NULL)
			return -1;
		while (rte_ring_sp_enqueue(ring, p) != 0)
			rte_pause();
	}
	return 0;
}

static void
churn(unsigned int worker, unsigned int n)
{
	unsigned int got = 0;
	void *p;

	rte_eal_remote_launch(producer, (void *)(uintptr_t)n, worker);
	while (got < n) {
		if (rte_ring_sc_dequeue(ring, &p) == 0) {
			hpm_free(p);
			got++;
		}
	}
	CHECK(rte_eal_wait_lcore(worker) == 0, "the producer failed");
}

/* hpm_init() on the eal source with flags; 0 or its error, checked. */
static int
start(uint32_t flags)
{
	struct hpm_config cfg;
	int rc;

	hpm_config_defaults(&cfg);
	cfg.source = HPM_SOURCE_EAL;
	cfg.flags |= flags;
	rc = hpm_init(&cfg);
	CHECK(rc == 0, "hpm_init: %d", rc);
	return rc;
}

/* The heap checked, its n blocks freed, checked again, and hpmalloc ended. */
static void
drain(void *const *b, unsigned int n)
{
	unsigned int i;

	CHECK(hpm_heap_check() == 0, "heap check when full");
	for (i = 0; i < n; i++)
		hpm_free(b[i]);
	CHECK(hpm_heap_check() == 0, "heap check after the frees");
	hpm_fini();
}

/*
 * 64K/64K blocks (runs of 16 granules in pages of 4 KiB granules) take a
 * chunk's edge units (less the headed unit's first granule, the tailed
 * unit's last: a run of 16 each) before the heap grows: a fresh heap without
 * caches holds as many 64K/64K blocks as its units have 64 KiB, less two a
 * chunk, in the chunks it has.
 */
static void
headed_64k(void)
{
	struct rte_malloc_socket_stats st;
	struct hpm_heap_stats h, h1, sum;
	unsigned int cap, units, i, n = 0;

	if (start(HPM_CFG_F_NO_CACHE) != 0)
		return;
	/* the first block sets the heap up */
	blk[n++] = hpm_malloc("held", 65536, 65536);
	CHECK(blk[0] != NULL && hpm_heap_get_stats(0, &h) == 0, "first 64K/64K block");
	units = (unsigned int)((h.chunk_bytes + (size_t)h.chunks * 4096) / (2 * MIB));
	cap = units * 32 - 2 * h.chunks;
	CHECK(cap <= NBLK, "%u granules", cap);
	for (i = 1; i < cap && i < NBLK; i++) {
		blk[n] = hpm_malloc("held", 65536, 65536);
		CHECK(blk[n] != NULL, "64K/64K block %u", i);
		if (blk[n] == NULL)
			break;
		n++;
	}
	CHECK(sum_stats(&st, &sum) && hpm_heap_get_stats(0, &h1) == 0, "stats when full");
	printf("prealloc: %u x 64K/64K in %u chunks of %u units: %u chunks after\n", n, h.chunks,
		units, h1.chunks);
	CHECK(h1.chunks == h.chunks,
		"%u 64K/64K blocks, as many as %u units' granules less an edge unit's first "
		"and last, grew the heap from %u chunks to %u",
		n, units, h.chunks, h1.chunks);
	CHECK(h1.live_bytes == (size_t)n * 65536 && h1.free_bytes <= (size_t)h1.chunks * 2 * 65536,
		"live %zu free %zu for %u blocks", h1.live_bytes, h1.free_bytes, n);
	drain(blk, n);
}

/*
 * Size-class pages take a chunk's edge units too (the headed unit's first
 * 64 KiB frame left, the tailed unit's last): a fresh heap without caches
 * fills its first chunk with 2 KiB blocks (a frame each 32) to all but those
 * frames before it grows.
 */
static void
headed_slab(void)
{
	static void *small[16384];
	struct hpm_heap_stats h0, h;
	size_t live = 0;
	unsigned int i, n = 0;

	if (start(HPM_CFG_F_NO_CACHE) != 0)
		return;
	small[n++] = hpm_malloc("held", 2048, 0);
	CHECK(small[0] != NULL && hpm_heap_get_stats(0, &h0) == 0, "first 2 KiB block");
	for (i = 1; i < RTE_DIM(small); i++) {
		CHECK(hpm_heap_get_stats(0, &h) == 0, "heap stats");
		if (h.chunks != h0.chunks)
			break;
		live = h.live_bytes;
		small[n] = hpm_malloc("held", 2048, 0);
		CHECK(small[n] != NULL, "2 KiB block %u", i);
		if (small[n] == NULL)
			break;
		n++;
	}
	printf("prealloc: %zu bytes of 2 KiB blocks in %zu bytes of units before the heap grew\n",
		live, h0.chunk_bytes);
	CHECK(h.chunks == h0.chunks + 1, "%u blocks and the heap did not grow", n);
	CHECK(live + 2 * 65536 >= h0.chunk_bytes,
		"the heap grew with %zu bytes of 2 KiB blocks in %zu bytes of units", live,
		h0.chunk_bytes);
	drain(small, n);
}

/* --socket-mem: chunks cut from EAL's own memory have every unit. */
static int
prealloc(void)
{
	struct hpm_heap_stats h;
	size_t unit = 2 * MIB, head = 4096;
	unsigned int n;

	if (test_eal_init("held_prealloc", "-l", "0-1", "--no-pci", "--socket-mem", "256", NULL) !=
		0)
		return TEST_SKIP;
	headed_64k();
	headed_slab();
	if (start(0) != 0)
		return test_end("held_prealloc");
	/* about 80 MiB: every chunk cut from the 256 MiB EAL mapped at start */
	n = grow(NBLK / 4);
	CHECK(hpm_heap_get_stats(0, &h) == 0, "heap stats");
	printf("prealloc: %u blocks, %u chunks: %zu MiB of units, %zu bytes of overhead, %u "
	       "metadata regions\n",
		n, h.chunks, h.chunk_bytes / MIB, h.overhead_bytes, h.meta_regions);
	CHECK(h.chunks >= 3, "the blocks took %u chunks, not 3 or more", h.chunks);
	/*
	 * Every chunk headed: its units whole, the first 4 KiB EAL's. Held beyond
	 * them and the metadata: less than a unit (the first metadata region's
	 * page off a boundary), a 4 KiB head a chunk, a page's rest a region
	 * (not a unit a chunk).
	 */
	CHECK(h.overhead_bytes < unit + (h.chunks + h.meta_regions) * head,
		"%zu bytes held in neither chunks (%u) nor metadata (%u regions)", h.overhead_bytes,
		h.chunks, h.meta_regions);
	CHECK(hpm_heap_check() == 0, "heap check");
	hpm_fini();
	return test_end("held_prealloc");
}

int
main(int argc, char **argv)
{
	unsigned int worker, n, i;

	if (argc > 1 && strcmp(argv[1], "prealloc") == 0)
		return prealloc();
	if (test_eal_init("held", "-l", "0-1", "--no-pci", NULL) != 0)
		return TEST_SKIP;
	worker = rte_get_next_lcore(-1, 1, 0);
	ring = rte_ring_create("held_ring", RING_SIZE, SOCKET_ID_ANY,
		RING_F_SP_ENQ | RING_F_SC_DEQ);
	eal_mapped = test_hugetlb_mapped();
	if (worker >= RTE_MAX_LCORE || ring == NULL || eal_mapped == 0) {
		printf("needs two lcores and hugepages (smaps counts %zu bytes): skipped\n",
			eal_mapped);
		return test_end("held") == 0 ? TEST_SKIP : 1;
	}
	/* the ring is EAL's: the pages it took count before hpm_init() */
	eal_mapped = test_hugetlb_mapped();
	if (start(0) != 0)
		return test_end("held");
	in_use_peak_growth();
	blk[0] = hpm_malloc("held", 64, 0);
	compare("first block");
	hpm_free(blk[0]);

	n = grow(NBLK);
	compare("after growth");
	no_header_pages("after growth");
	in_use_large();
	/* holes everywhere: every other block */
	for (i = 0; i < n; i += 2)
		hpm_free(blk[i]);
	compare("half freed");
	for (i = 0; i < 4; i++) {
		churn(worker, 200000);
		compare("churn across lcores");
	}
	for (i = 1; i < n; i += 2)
		hpm_free(blk[i]);
	compare("all freed, caches full");
	hpm_cache_flush();
	hpm_cache_flush_lcore(worker);
	compare("caches flushed");
	CHECK(hpm_heap_trim() > 0, "the trim gave nothing back");
	compare("after the trim");
	CHECK(hpm_heap_check() == 0, "heap check");
	hpm_fini();
	CHECK(test_hugetlb_mapped() == eal_mapped,
		"after hpm_fini() the process maps %zu bytes of hugepages, %zu before hpm_init()",
		test_hugetlb_mapped(), eal_mapped);
	rte_ring_free(ring);
	return test_end("held");
}
