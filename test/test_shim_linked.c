/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The rte_malloc shim linked before librte_eal (no LD_PRELOAD): rte_malloc
 * memory is hpmalloc's, DPDK's libraries reach hpmalloc through the PLT,
 * blocks EAL allocated (during rte_eal_init, or behind the shim's back) still
 * validate, resize and free through the rte_ API, external heaps stay with
 * EAL, and the statistics add up.
 * Usage: test_shim_linked [off|early|mp|mp_off]
 *   off: HPM_BACKEND=off, everything to EAL;
 *   early: the application's own heap (anonymous memory) made before
 *   rte_eal_init(): rte_malloc stays EAL's;
 *   mp: a secondary process (this program again) attaches to the primary's
 *   heap, and each frees a block of the other's;
 *   mp_off: the primary with HPM_BACKEND=off, the secondary without: EAL
 *   serves both.
 */

#define _GNU_SOURCE
/* rte_free_sensitive() is experimental in DPDK */
#define ALLOW_EXPERIMENTAL_API
#include <dlfcn.h>
#include <errno.h>
#include <libgen.h>
#include <spawn.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_hash.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_memory.h>
#include <rte_memzone.h>
#include <rte_ring.h>

#include "hpm_malloc.h"
#include "hpm_rte.h"
#include "test_common.h"

/* EAL's own functions, behind the shim: found in librte_eal itself. */
static void *(*eal_malloc_socket)(const char *, size_t, unsigned int, int);
static int (*eal_socket_stats)(int, struct rte_malloc_socket_stats *);

static int
find_eal(void)
{
	Dl_info info;
	void *h;

	if (dladdr((void *)(uintptr_t)rte_memzone_lookup, &info) == 0)
		return -1;
	h = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
	if (h == NULL)
		return -1;
	*(void **)&eal_malloc_socket = dlsym(h, "rte_malloc_socket");
	*(void **)&eal_socket_stats = dlsym(h, "rte_malloc_get_socket_stats");
	return eal_malloc_socket != NULL && eal_socket_stats != NULL ? 0 : -1;
}

static struct hpm_rte_stats
stats(void)
{
	struct hpm_rte_stats s;

	hpm_rte_stats(&s);
	return s;
}

static unsigned int
eal_alloc_count(void)
{
	struct rte_malloc_socket_stats s;

	eal_socket_stats(rte_socket_id_by_idx(0), &s);
	return s.alloc_count;
}

static void
check_counters_add_up(void)
{
	struct hpm_rte_stats s = stats();

	CHECK(s.eal_alloc + s.eal_free + s.eal_realloc + s.eal_other ==
			s.eal_early + s.eal_off + s.eal_external + s.eal_foreign,
		"EAL calls and reasons differ");
	CHECK(hpm_rte_stats(NULL) == -EINVAL, "stats(NULL)");
}

/* rte_malloc memory is hpmalloc's, with rte_malloc's semantics. */
static void
test_hpm_blocks(void)
{
	/* opaque to the compiler, which would reject the overflow */
	volatile size_t huge = SIZE_MAX / 2;
	size_t size;
	char *p, *q;
	int i;

	p = rte_malloc("t", 1000, 0);
	CHECK(p != NULL && ((uintptr_t)p & 63) == 0, "rte_malloc");
	CHECK(hpm_malloc_validate(p, NULL) == 0, "rte_malloc block is not hpmalloc's");
	/* EAL's answer: the size rounded up to a cache line */
	CHECK(rte_malloc_validate(p, &size) == 0 && size == 1024, "validate size %zu", size);
	CHECK(rte_malloc_virt2iova(p) == rte_mem_virt2iova(p), "virt2iova");
	CHECK(rte_malloc_virt2iova(p) == hpm_malloc_virt2iova(p), "virt2iova vs hpm");
	memset(p, 0xa5, 1000);
	q = rte_realloc(p, 100000, 4096);
	CHECK(q != NULL && ((uintptr_t)q & 4095) == 0 && hpm_malloc_validate(q, NULL) == 0,
		"rte_realloc");
	for (i = 0; q != NULL && i < 1000; i++)
		if ((uint8_t)q[i] != 0xa5) {
			CHECK(false, "realloc lost byte %d", i);
			break;
		}
	rte_free(q);
	CHECK(rte_malloc_validate(q, NULL) == -1, "validate of a freed block");

	/*
	 * rte_realloc() of a block rounds the alignment up to a cache line, as
	 * EAL does: 48 and 3 are 64, 100 is 128; a new block's must be a power
	 * of two (EAL's rte_realloc(NULL) is rte_malloc()).
	 */
	p = rte_malloc("t", 100, 0);
	CHECK(p != NULL, "rte_malloc 100");
	if (p != NULL)
		memset(p, 0x5a, 100);
	q = p != NULL ? rte_realloc(p, 3000, 48) : NULL;
	CHECK(q != NULL && ((uintptr_t)q & 63) == 0 && hpm_malloc_validate(q, NULL) == 0,
		"rte_realloc to 3000 bytes, align 48");
	p = q != NULL ? rte_realloc(q, 200, 3) : NULL;
	CHECK(p != NULL && ((uintptr_t)p & 63) == 0, "rte_realloc to 200 bytes, align 3");
	q = p != NULL ? rte_realloc(p, 70000, 100) : NULL;
	CHECK(q != NULL && ((uintptr_t)q & 127) == 0, "rte_realloc to 70000 bytes, align 100");
	for (i = 0; q != NULL && i < 100; i++)
		if ((uint8_t)q[i] != 0x5a) {
			CHECK(false, "realloc with a rounded alignment lost byte %d", i);
			break;
		}
	rte_free(q != NULL ? q : p);
	CHECK(rte_realloc(NULL, 100, 48) == NULL && rte_errno == EINVAL,
		"rte_realloc(NULL), align 48: NULL and EINVAL, as rte_malloc()");

	p = rte_zmalloc_socket("t", 4096, 4096, rte_socket_id_by_idx(0));
	CHECK(p != NULL && hpm_malloc_validate(p, NULL) == 0, "rte_zmalloc_socket");
	for (i = 0; p != NULL && i < 4096; i++)
		if (p[i] != 0) {
			CHECK(false, "rte_zmalloc_socket not zeroed");
			break;
		}
	rte_free(p);
	p = rte_calloc("t", 100, 24, 0);
	CHECK(p != NULL && hpm_malloc_validate(p, NULL) == 0, "rte_calloc");
	rte_free(p);
	/* unlike EAL's, an overflowing calloc fails */
	rte_errno = 0;
	CHECK(rte_calloc("t", huge, 4, 0) == NULL && rte_errno == EINVAL, "calloc overflow");
	CHECK(rte_malloc("t", 0, 0) == NULL, "size 0");
	CHECK(rte_malloc("t", 64, 3) == NULL, "align 3");
	CHECK(rte_malloc_validate(NULL, NULL) == -1, "validate(NULL)");
	rte_free(NULL);
	CHECK(hpm_bad_free_count() == 0, "bad frees: %" PRIu64, hpm_bad_free_count());
}

/*
 * Bad frees stay hpmalloc's: an interior pointer, a double free, and the
 * double free of a large block whose units are all free now (EAL must not
 * take it for the memzone under hpmalloc's chunk).
 */
static void
test_bad_frees(void)
{
	uint64_t bad = hpm_bad_free_count();
	unsigned int n;
	char *p, *q;

	p = rte_malloc("bad", 8192, 0);
	rte_free(p + 64);
	rte_free(p);
	rte_free(p);
	q = rte_malloc("bad", 4 << 20, 0);
	CHECK(q != NULL && hpm_malloc_validate(q, NULL) == 0, "large block");
	rte_free(q);
	n = eal_alloc_count();
	rte_free(q);
	CHECK(hpm_bad_free_count() == bad + 3, "bad frees %" PRIu64 " -> %" PRIu64, bad,
		hpm_bad_free_count());
	CHECK(eal_alloc_count() == n, "EAL's heap changed: %u -> %u", n, eal_alloc_count());
	CHECK(hpm_heap_check() == 0, "heap check");
}

/* DPDK's libraries call rte_zmalloc_socket and rte_free through the PLT: the shim's. */
static void
test_libraries(void)
{
	struct rte_hash_parameters hp = {
		.name = "shim_linked",
		.entries = 1024,
		.key_len = sizeof(uint32_t),
		.socket_id = (int)rte_socket_id(),
	};
	struct hpm_rte_stats s0, s1, s2;
	struct rte_hash *h;
	struct rte_ring *r;

	s0 = stats();
	h = rte_hash_create(&hp);
	r = rte_ring_create("shim_linked", 1024, SOCKET_ID_ANY, 0);
	CHECK(h != NULL && r != NULL, "hash and ring");
	s1 = stats();
	CHECK(s1.hpm_alloc >= s0.hpm_alloc + 2 && s1.eal_alloc == s0.eal_alloc,
		"librte_hash and librte_ring did not allocate from hpmalloc (%" PRIu64
		" -> %" PRIu64 ")",
		s0.hpm_alloc, s1.hpm_alloc);
	rte_hash_free(h);
	rte_ring_free(r);
	s2 = stats();
	CHECK(s2.hpm_free >= s1.hpm_free + 2,
		"librte_hash and librte_ring did not free to hpmalloc");
}

/*
 * Blocks EAL owns: those net_null's probe allocated inside rte_eal_init()
 * (freed when the port closes), and some allocated behind the shim.
 */
static void
test_eal_blocks(void)
{
	struct hpm_rte_stats s0, s1;
	unsigned int n0;
	size_t size;
	uint64_t bad = hpm_bad_free_count();
	char *p, *q;
	int i;

	s0 = stats();
	CHECK(s0.eal_early >= 2, "only %" PRIu64 " calls before hpmalloc started", s0.eal_early);
	n0 = eal_alloc_count();
	CHECK(rte_eth_dev_count_avail() == 1, "net_null0 not probed");
	CHECK(rte_eth_dev_close(0) == 0, "close port 0");
	s1 = stats();
	CHECK(s1.eal_free >= s0.eal_free + 1 && s1.eal_foreign >= s0.eal_foreign + 1,
		"port close freed nothing through EAL");
	CHECK(eal_alloc_count() < n0, "EAL's heap did not get the port's blocks back");

	p = eal_malloc_socket("eal", 300, 0, SOCKET_ID_ANY);
	CHECK(p != NULL && hpm_malloc_validate(p, NULL) == -1, "EAL block");
	CHECK(rte_malloc_validate(p, &size) == 0 && size >= 300, "validate of an EAL block");
	CHECK(rte_malloc_virt2iova(p) == rte_mem_virt2iova(p), "virt2iova of an EAL block");
	n0 = eal_alloc_count();
	rte_free(p);
	CHECK(eal_alloc_count() == n0 - 1, "rte_free of an EAL block");

	/* rte_realloc moves EAL blocks into hpmalloc */
	p = eal_malloc_socket("eal", 200, 0, SOCKET_ID_ANY);
	for (i = 0; p != NULL && i < 200; i++)
		p[i] = (char)i;
	n0 = eal_alloc_count();
	s0 = stats();
	q = rte_realloc(p, 5000, 0);
	s1 = stats();
	CHECK(q != NULL && hpm_malloc_validate(q, NULL) == 0, "realloc did not move into hpmalloc");
	CHECK(s1.moved == s0.moved + 1 && eal_alloc_count() == n0 - 1, "moved block");
	for (i = 0; q != NULL && i < 200; i++)
		if (q[i] != (char)i) {
			CHECK(false, "moved block lost byte %d", i);
			break;
		}
	rte_free(q);
	CHECK(hpm_bad_free_count() == bad, "EAL blocks counted as bad frees");
}

#ifdef HPM_RTE_HAVE_FREE_SENSITIVE
/* rte_free_sensitive() (DPDK 25.07 on): hpmalloc's blocks to hpmalloc, EAL's to EAL. */
static void
test_free_sensitive(void)
{
	struct hpm_rte_stats s0, s1;
	uint64_t bad = hpm_bad_free_count();
	unsigned int n0;
	char *p;

	p = rte_malloc("key", 256, 0);
	CHECK(p != NULL && hpm_malloc_validate(p, NULL) == 0, "rte_malloc");
	memset(p, 0x5a, 256);
	s0 = stats();
	rte_free_sensitive(p);
	s1 = stats();
	CHECK(s1.hpm_free == s0.hpm_free + 1, "rte_free_sensitive did not reach hpmalloc");
	CHECK(hpm_malloc_validate(p, NULL) == -1, "block not freed");
	rte_free_sensitive(NULL);

	p = eal_malloc_socket("eal", 300, 0, SOCKET_ID_ANY);
	CHECK(p != NULL && hpm_malloc_validate(p, NULL) == -1, "EAL block");
	n0 = eal_alloc_count();
	s0 = stats();
	rte_free_sensitive(p);
	s1 = stats();
	CHECK(eal_alloc_count() == n0 - 1, "rte_free_sensitive of an EAL block");
	CHECK(s1.eal_foreign == s0.eal_foreign + 1, "EAL block not counted as foreign");
	CHECK(hpm_bad_free_count() == bad, "bad frees: %" PRIu64, hpm_bad_free_count() - bad);
}
#endif

/* External heaps stay with EAL, both ways. */
static void
test_external_heap(void)
{
	const size_t len = 4 << 20, pg = 4096;
	struct hpm_rte_stats s0, s1;
	char *mem, *p, *q, *h;
	int socket;

	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(mem != MAP_FAILED, "mmap");
	if (mem == MAP_FAILED)
		return;
	CHECK(rte_malloc_heap_create("shim_ext") == 0, "heap create");
	CHECK(rte_malloc_heap_memory_add("shim_ext", mem, len, NULL, 0, pg) == 0, "memory add");
	socket = rte_malloc_heap_get_socket("shim_ext");
	CHECK(socket >= RTE_MAX_NUMA_NODES, "external socket %d", socket);
	s0 = stats();
	p = rte_malloc_socket("ext", 1000, 0, socket);
	CHECK(p >= mem && p < mem + len && hpm_malloc_validate(p, NULL) == -1, "external block");
	CHECK(rte_malloc_validate(p, NULL) == 0, "validate of an external block");
	q = rte_realloc_socket(p, 3000, 0, socket);
	CHECK(q >= mem && q < mem + len, "realloc on the external heap");
	q = rte_realloc(q, 6000, 0);
	CHECK(q != NULL && hpm_malloc_validate(q, NULL) == -1, "realloc of external memory");
	rte_free(q);
	h = rte_malloc("hpm", 100, 0);
	if (h != NULL)
		strcpy(h, "moved");
	q = rte_realloc_socket(h, 200, 0, socket);
	CHECK(q >= mem && q < mem + len && strcmp(q, "moved") == 0, "hpmalloc block onto the heap");
	rte_free(q);
	/* a block of hpm_malloc()'s, every byte of it (debug mode: usable 100 exactly) */
	h = hpm_malloc("hpm", 100, 0);
	if (h != NULL) {
		size_t size = 0;

		memset(h, 'h', 100);
		CHECK(rte_malloc_validate(h, &size) == 0 && size >= 100 &&
				size == hpm_malloc_usable_size(h),
			"validate of hpm_malloc(100): size %zu, usable %zu", size,
			hpm_malloc_usable_size(h));
	}
	q = rte_realloc_socket(h, 200, 0, socket);
	CHECK(q >= mem && q < mem + len && q[0] == 'h' && q[63] == 'h' && q[64] == 'h' &&
			q[99] == 'h',
		"hpm_malloc(100) onto the heap: %p, bytes 64 and 99: %c %c", q, q ? q[64] : 0,
		q ? q[99] : 0);
	rte_free(q);
	s1 = stats();
	CHECK(s1.eal_external >= s0.eal_external + 4, "external calls %" PRIu64 " -> %" PRIu64,
		s0.eal_external, s1.eal_external);
	CHECK(s1.hpm_alloc == s0.hpm_alloc + 1, "external calls reached hpmalloc");
	CHECK(rte_malloc_heap_memory_remove("shim_ext", mem, len) == 0, "memory remove");
	CHECK(rte_malloc_heap_destroy("shim_ext") == 0, "heap destroy");
	munmap(mem, len);
}

/* The socket's statistics: EAL's heap, with hpmalloc's chunks seen through. */
static void
test_stats(void)
{
	int socket = rte_socket_id_by_idx(0);
	struct rte_malloc_socket_stats e, s0, s1, h;
	struct hpm_heap_stats hs;
	char buf[8192] = "";
	void *p;
	FILE *f;

	CHECK(rte_malloc_get_socket_stats(socket, &s0) == 0, "stats");
	eal_socket_stats(socket, &e);
	CHECK(hpm_malloc_get_socket_stats(socket, &h) == 0, "hpm stats");
	CHECK(s0.heap_totalsz_bytes == e.heap_totalsz_bytes, "total is not EAL's");
	CHECK(s0.heap_allocsz_bytes + s0.heap_freesz_bytes == s0.heap_totalsz_bytes,
		"alloc + free != total");
	CHECK(s0.greatest_free_size == e.greatest_free_size, "greatest free is not EAL's");
	/* hpmalloc's memzones less its live blocks are free; the rest of their pages EAL's */
	CHECK(hpm_heap_get_stats(socket, &hs) == 0 &&
			s0.heap_freesz_bytes ==
				e.heap_freesz_bytes + h.heap_freesz_bytes - hs.overhead_bytes,
		"free");
	/* blocks: EAL's own, and hpmalloc's in place of its memzones (each was one) */
	CHECK(s0.alloc_count == e.alloc_count - hs.chunks - hs.meta_regions + h.alloc_count,
		"blocks: %u, EAL's %u less %u memzones, and hpmalloc's %u", s0.alloc_count,
		e.alloc_count, hs.chunks + hs.meta_regions, h.alloc_count);
	p = rte_malloc("stats", 1 << 20, 0);
	CHECK(rte_malloc_get_socket_stats(socket, &s1) == 0, "stats");
	CHECK(s1.heap_allocsz_bytes >= s0.heap_allocsz_bytes + (1 << 20), "1 MiB not counted");
	CHECK(s1.alloc_count == s0.alloc_count + 1, "alloc count %u, %u before", s1.alloc_count,
		s0.alloc_count);
	rte_free(p);
	/* a block that takes a chunk of its own, kept when the block goes */
	p = rte_malloc("stats", 40 << 20, 0);
	CHECK(p != NULL, "40 MiB");
	rte_free(p);
	CHECK(rte_malloc_get_socket_stats(socket, &s1) == 0, "stats");
	CHECK(s1.alloc_count == s0.alloc_count, "alloc count %u after the 40 MiB block, %u before",
		s1.alloc_count, s0.alloc_count);
	CHECK(rte_malloc_get_socket_stats(-5, &s1) != 0, "stats of a bad socket");
	f = fmemopen(buf, sizeof(buf) - 1, "w");
	if (f != NULL) {
		rte_malloc_dump_stats(f, NULL);
		fclose(f);
	}
	CHECK(strstr(buf, "Heap id") != NULL && strstr(buf, "hpmalloc heaps") != NULL,
		"dump: %.200s", buf);
}

/* HPM_BACKEND=off: EAL serves everything. */
static void
test_off(void)
{
	struct hpm_rte_stats s;
	void *p;

	CHECK(hpm_rte_backend() == HPM_RTE_BACKEND_EAL, "backend not EAL");
	p = rte_malloc("off", 1000, 0);
	CHECK(p != NULL && hpm_malloc_validate(p, NULL) == -1, "block is hpmalloc's");
	CHECK(rte_malloc_validate(p, NULL) == 0, "validate");
	rte_free(p);
	s = stats();
	CHECK(s.hpm_alloc == 0 && s.hpm_free == 0 && s.eal_off >= 3, "off: %" PRIu64 " to hpmalloc",
		s.hpm_alloc);
}

/*
 * early: the application made a heap of its own before rte_eal_init() (on
 * ordinary memory here): rte_malloc stays EAL's, whose memory has IOVAs and
 * is seen by secondaries, and the application's heap stays its own (the
 * shim took any heap it found and served rte_malloc from that memory).
 */
static void
test_early(void)
{
	struct hpm_rte_stats s;
	void *p, *q;

	CHECK(hpm_rte_backend() == HPM_RTE_BACKEND_EAL, "backend not EAL");
	CHECK(hpm_source_name() != NULL && strcmp(hpm_source_name(), "anon") == 0,
		"the application's heap: %s", hpm_source_name() ? hpm_source_name() : "none");
	p = rte_malloc("early", 1000, 0);
	CHECK(p != NULL && rte_mem_virt2memseg(p, NULL) != NULL &&
			hpm_malloc_validate(p, NULL) == -1,
		"rte_malloc's block is not EAL's");
	CHECK(rte_malloc_validate(p, NULL) == 0, "validate");
	rte_free(p);
	q = hpm_malloc("early", 1000, 0);
	CHECK(q != NULL && rte_mem_virt2memseg(q, NULL) == NULL &&
			hpm_malloc_validate(q, NULL) == 0,
		"hpm_malloc's block is not the application's heap's");
	hpm_free(q);
	s = stats();
	CHECK(s.hpm_alloc == 0 && s.hpm_free == 0, "early: %" PRIu64 " to hpmalloc", s.hpm_alloc);
}

/* Blocks handed between the processes of the mp test, in a memzone. */
struct handover {
	char *from_primary;
	char *from_secondary;
};

#define HANDOVER_ZONE "shim_linked_mp"
#define HANDOVER_SIZE 3000

static bool
filled(const char *p, char c)
{
	size_t i;

	for (i = 0; i < HANDOVER_SIZE; i++)
		if (p[i] != c)
			return false;
	return true;
}

/*
 * The secondary: with a primary on hpmalloc it attaches to the primary's
 * heap (and frees a block of the primary's, and leaves one for it to free);
 * with a primary without, EAL serves it.
 */
static int
secondary(const char *prefix, bool expect_hpm)
{
	char opt[128];
	char *argv[] = {"shim_linked_secondary", "-l", "1", "--no-pci", "--proc-type=secondary",
		opt, "--log-level=lib.eal:warning", NULL};
	const struct rte_memzone *mz;
	struct handover *h;
	struct hpm_rte_stats s;
	size_t size;
	char *p;

	snprintf(opt, sizeof(opt), "--file-prefix=%s", prefix);
	if (rte_eal_init(RTE_DIM(argv) - 1, argv) < 0) {
		printf("secondary: EAL cannot start\n");
		return TEST_SKIP;
	}
	CHECK(rte_eal_process_type() == RTE_PROC_SECONDARY, "not a secondary");
	mz = rte_memzone_lookup(HANDOVER_ZONE);
	CHECK(mz != NULL, "no handover zone");
	if (expect_hpm && mz != NULL) {
		/* the secondary's first call: rte_free() of the primary's block */
		h = mz->addr;
		CHECK(filled(h->from_primary, 'p'), "the primary's block");
		rte_free(h->from_primary);
		hpm_rte_stats(&s);
		CHECK(s.hpm_free == 1 && s.eal_free == 0,
			"the secondary's first rte_free went to %s",
			s.hpm_free == 1 ? "hpmalloc" : "EAL");
		CHECK(hpm_malloc_validate(h->from_primary, NULL) == -1,
			"the primary's block is still live");
	}
	p = rte_zmalloc("secondary", 5000, 0);
	CHECK(rte_malloc_validate(p, &size) == 0 && size >= 5000, "secondary's validate");
	if (expect_hpm) {
		CHECK(hpm_rte_backend() == HPM_RTE_BACKEND_HPM, "secondary not on hpmalloc");
		CHECK(hpm_malloc_validate(p, NULL) == 0, "secondary's block is not hpmalloc's");
		if (mz != NULL) {
			h = mz->addr;
			h->from_secondary = rte_malloc("secondary", HANDOVER_SIZE, 0);
			if (h->from_secondary != NULL)
				memset(h->from_secondary, 's', HANDOVER_SIZE);
		}
	} else {
		CHECK(hpm_rte_backend() == HPM_RTE_BACKEND_EAL, "secondary on hpmalloc");
		CHECK(hpm_malloc_validate(p, NULL) == -1, "secondary's block is hpmalloc's");
	}
	rte_free(p);
	hpm_rte_stats(&s);
	if (expect_hpm)
		CHECK(s.hpm_alloc >= 2 && s.hpm_free >= 2 && s.eal_off == 0,
			"secondary's counters");
	else
		CHECK(s.hpm_alloc == 0 && s.hpm_free == 0 && s.eal_off >= 3,
			"secondary's counters");
	hpm_rte_stats_print(stdout);
	rte_eal_cleanup();
	printf("secondary: %s\n", test_failures ? "FAILED" : "passed");
	return test_failures != 0;
}

/*
 * EAL, with a file prefix of its own. Secondaries need the primary's
 * hugepage files: they are unlinked at once only without them.
 */
static int
eal_init(bool mp)
{
	char prefix[64];
	char *argv[] = {"shim_linked", prefix, "--log-level=lib.eal:warning", "-l", "0", "--no-pci",
		"--vdev=net_null0", mp ? NULL : "--huge-unlink", NULL};
	int argc = mp ? 7 : 8;

	snprintf(prefix, sizeof(prefix), "--file-prefix=hpmt_shim_linked_%d", (int)getpid());
	return rte_eal_init(argc, argv);
}

/* The file prefix of this process: the last part of its runtime directory. */
static void
file_prefix(char *buf, size_t len)
{
	char dir[256];

	snprintf(dir, sizeof(dir), "%s", rte_eal_get_runtime_dir());
	snprintf(buf, len, "%s", basename(dir));
}

/* Run this program as a secondary of ours (HPM_BACKEND unset); its exit status. */
static int
spawn_secondary(bool expect_hpm)
{
	char prefix[256], *argv[5], *envp[256];
	extern char **environ;
	int status, n = 0, i;
	pid_t pid;

	for (i = 0; environ[i] != NULL && n < 254; i++)
		if (strncmp(environ[i], "HPM_BACKEND=", 12) != 0 &&
			strncmp(environ[i], "ASAN_OPTIONS=", 13) != 0)
			envp[n++] = environ[i];
	/* DPDK's secondaries leak (librte_bus_vdev): not ours to report */
	envp[n++] = (char *)(uintptr_t) "ASAN_OPTIONS=detect_leaks=0";
	envp[n] = NULL;
	file_prefix(prefix, sizeof(prefix));
	argv[0] = (char *)(uintptr_t) "test_shim_linked";
	argv[1] = (char *)(uintptr_t) "secondary";
	argv[2] = prefix;
	argv[3] = (char *)(uintptr_t)(expect_hpm ? "hpm" : "eal");
	argv[4] = NULL;
	if (posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, envp) != 0)
		return -1;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/*
 * A primary and a secondary, blocks freed by the other process. Returns
 * TEST_SKIP when, under ASan, the secondary cannot map EAL's memory at the
 * primary's addresses (ASan's own mappings may be there).
 */
static int
test_mp(bool off)
{
	const struct rte_memzone *mz;
	uint64_t bad = off ? 0 : hpm_bad_free_count();
	struct hpm_rte_stats s0, s1;
	struct handover *h;
	int rc;

	mz = rte_memzone_reserve(HANDOVER_ZONE, sizeof(*h), SOCKET_ID_ANY, 0);
	CHECK(mz != NULL, "handover zone");
	if (mz == NULL)
		return 0;
	h = mz->addr;
	h->from_primary = rte_malloc("primary", HANDOVER_SIZE, 0);
	h->from_secondary = NULL;
	if (h->from_primary != NULL)
		memset(h->from_primary, 'p', HANDOVER_SIZE);
	rc = spawn_secondary(!off);
#if defined(__SANITIZE_ADDRESS__)
	if (rc == TEST_SKIP) {
		printf("SKIP: under ASan the secondary cannot map the primary's memory\n");
		rte_free(h->from_primary);
		rte_memzone_free(mz);
		return TEST_SKIP;
	}
#endif
	CHECK(rc == 0, "secondary failed: %d", rc);
	if (!off) {
		CHECK(h->from_secondary != NULL &&
				hpm_malloc_validate(h->from_secondary, NULL) == 0 &&
				filled(h->from_secondary, 's'),
			"the secondary's block");
		hpm_rte_stats(&s0);
		rte_free(h->from_secondary);
		hpm_rte_stats(&s1);
		CHECK(s1.hpm_free == s0.hpm_free + 1,
			"the secondary's block not freed by hpmalloc");
		CHECK(hpm_bad_free_count() == bad, "bad frees across processes");
	} else {
		rte_free(h->from_primary);
	}
	rte_memzone_free(mz);
	return 0;
}

/* Hugepage files of a primary that secondaries could attach to (no --huge-unlink). */
static void
remove_hugepage_files(const char *prefix)
{
	char mnt[256], path[512], type[64];
	FILE *f = fopen("/proc/mounts", "r");
	int i;

	while (f != NULL && fscanf(f, "%*s %255s %63s %*[^\n]", mnt, type) == 2) {
		if (strcmp(type, "hugetlbfs") != 0)
			continue;
		for (i = 0; i < 4096; i++) {
			snprintf(path, sizeof(path), "%s/%smap_%d", mnt, prefix, i);
			if (unlink(path) != 0 && errno == ENOENT && i > 64)
				break;
		}
	}
	if (f != NULL)
		fclose(f);
}

int
main(int argc, char **argv)
{
	bool mp = argc > 1 && strncmp(argv[1], "mp", 2) == 0;
	bool off = argc > 1 && (strcmp(argv[1], "off") == 0 || strcmp(argv[1], "mp_off") == 0);
	bool early = argc > 1 && strcmp(argv[1], "early") == 0;
	char prefix[256] = "";
	struct hpm_rte_stats s0, s1;
	int skip = 0;

	if (argc > 3 && strcmp(argv[1], "secondary") == 0)
		return secondary(argv[2], strcmp(argv[3], "hpm") == 0);
	if (off)
		setenv("HPM_BACKEND", "off", 1);
	else
		unsetenv("HPM_BACKEND");
	CHECK(hpm_rte_backend() == HPM_RTE_BACKEND_EAL, "routing before rte_eal_init");
	if (early) {
		struct hpm_config cfg;

		hpm_config_defaults(&cfg);
		cfg.source = HPM_SOURCE_ANON;
		CHECK(hpm_init(&cfg) == 0, "the application's heap before rte_eal_init");
	}
	if (eal_init(mp) < 0) {
		printf("SKIP: EAL cannot start\n");
		return TEST_SKIP;
	}
	if (find_eal() != 0) {
		printf("cannot find EAL's functions\n");
		return 1;
	}
	if (mp) {
		file_prefix(prefix, sizeof(prefix));
		skip = test_mp(off);
	} else if (off) {
		test_off();
	} else if (early) {
		test_early();
		hpm_fini();
	} else {
		CHECK(hpm_rte_backend() == HPM_RTE_BACKEND_HPM, "not routing after rte_eal_init");
		test_hpm_blocks();
		test_bad_frees();
		test_libraries();
		test_eal_blocks();
#ifdef HPM_RTE_HAVE_FREE_SENSITIVE
		test_free_sensitive();
#endif
		test_external_heap();
		test_stats();
	}
	check_counters_add_up();
	hpm_rte_stats_print(stdout);

	/* after cleanup EAL's memory is gone, hpmalloc's with it: nothing routes there */
	CHECK(rte_eal_cleanup() == 0, "cleanup");
	CHECK(hpm_rte_backend() == HPM_RTE_BACKEND_EAL, "routing after rte_eal_cleanup");
	s0 = stats();
	rte_free(NULL);
	s1 = stats();
	CHECK(s1.eal_free == s0.eal_free + 1 &&
			s1.eal_early + s1.eal_off == s0.eal_early + s0.eal_off + 1,
		"rte_free after cleanup did not go to EAL");
	if (mp)
		remove_hugepage_files(prefix);
	if (skip != 0 && test_failures == 0)
		return TEST_SKIP;
	if (test_failures != 0) {
		printf("shim_linked: FAILED (%u checks)\n", test_failures);
		return 1;
	}
	printf("shim_linked: passed\n");
	return 0;
}
