/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Segment sources: what each source (anon, hugetlbfs, eal, eal with
 * --no-huge) promises, seen through the public API. hpm_init() picks the
 * source asked for and refuses a second call, a bad configuration and an
 * unusable source; zmalloc memory is zero, fresh and reused, on every route;
 * hpm_malloc_virt2iova() is the IOVA the system knows (rte_mem_virt2iova,
 * /proc/self/pagemap) or RTE_BAD_IOVA on anon; hpm_malloc_contig() blocks are
 * IOVA-contiguous at every page (ENOTSUP on anon); a heap that grew to 200 MiB
 * and was emptied keeps no more than retain_size plus a few spare units; after
 * hpm_fini() the source has every page back (free hugepages, memzones) and a
 * new hpm_init() works; sockets behave as the source allows (real placement
 * with hugepages, a wish without).
 *
 * usage: test_sources anon|hugetlbfs|eal|eal-nohuge
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <sys/stat.h>

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_memory.h>
#include <rte_memzone.h>

#include "hpm_malloc.h"
#include "test_common.h"

#define KIB(n) ((size_t)(n) << 10)
#define MIB(n) ((size_t)(n) << 20)
#define UNIT MIB(2)
#define RETAIN MIB(16)
/*
 * Units an empty heap may keep as spares: one per kind of unit that keeps a
 * spare (heap span, and a page per granule class: 4K and 64K, runs and
 * singles), and one more.
 */
#define SPARE_UNITS 6
#define RELEASE_DELAY_MS 200

enum mode { M_ANON, M_HUGETLBFS, M_EAL, M_EAL_NOHUGE };

/* Bytes of socket 0's chunks (its units, not its metadata: hpm_heap_get_stats()). */
static size_t
chunks0(void)
{
	struct hpm_heap_stats hs;

	return hpm_heap_get_stats(0, &hs) == 0 ? hs.chunk_bytes : 0;
}

static const char *const mode_names[] = {
	[M_ANON] = "anon",
	[M_HUGETLBFS] = "hugetlbfs",
	[M_EAL] = "eal",
	[M_EAL_NOHUGE] = "eal-nohuge",
};

static enum mode mode;
static int pagemap_fd = -1;

/* One route of the allocator: a size and an alignment that select it. */
struct route {
	const char *name;
	size_t size;
	unsigned int align;
};

static const struct route routes[] = {
	{"heap 100 B", 100, 0},
	{"heap 200 KiB", KIB(200), 0},
	{"4K granule 4K/4K", KIB(4), KIB(4)},
	{"4K granules 300 KiB", KIB(300), 0},
	{"4K granule run 64K/64K", KIB(64), KIB(64)},
	{"4K granule run 192K/64K", KIB(192), KIB(64)},
	{"64K granules 384K/64K", KIB(384), KIB(64)},
	{"large 2 MiB", MIB(2), 0},
	{"large 5 MiB", MIB(5), 0},
};

static bool
is_eal(void)
{
	return mode == M_EAL || mode == M_EAL_NOHUGE;
}

/* Memory is hugepages: sockets are real. */
static bool
is_huge(void)
{
	return mode == M_EAL || mode == M_HUGETLBFS;
}

/* Hugetlb memory mapped by this process (/proc/self/status), in bytes; -1 if unknown. */
static long long
self_hugetlb_bytes(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	long long kb = -1;
	char line[256];

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "HugetlbPages: %lld kB", &kb) == 1)
			break;
	fclose(f);
	return kb < 0 ? -1 : kb * 1024;
}

static void
count_zone(const struct rte_memzone *mz, void *arg)
{
	RTE_SET_USED(mz);
	(*(unsigned int *)arg)++;
}

static unsigned int
memzone_count(void)
{
	unsigned int n = 0;

	rte_memzone_walk(count_zone, &n);
	return n;
}

/* The IOVA of a byte from /proc/self/pagemap, read here: RTE_BAD_IOVA when unknown. */
static rte_iova_t
pagemap_iova(const void *va)
{
	uint64_t entry;

	if (pagemap_fd < 0)
		pagemap_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (pagemap_fd < 0)
		return RTE_BAD_IOVA;
	/* the page is present: hugetlbfs memory is populated, and we touch it */
	(void)*(const volatile uint8_t *)va;
	if (pread(pagemap_fd, &entry, sizeof(entry), (off_t)((uintptr_t)va / 4096) * 8) !=
		sizeof(entry))
		return RTE_BAD_IOVA;
	if (!(entry >> 63) || (entry & ((UINT64_C(1) << 55) - 1)) == 0)
		return RTE_BAD_IOVA;
	return (entry & ((UINT64_C(1) << 55) - 1)) * 4096 + (uintptr_t)va % 4096;
}

/* What the system says the IOVA of a byte is. */
static rte_iova_t
reference_iova(const void *va)
{
	switch (mode) {
	case M_EAL:
	case M_EAL_NOHUGE:
		return rte_mem_virt2iova(va);
	case M_HUGETLBFS:
		return pagemap_iova(va);
	default:
		return RTE_BAD_IOVA;
	}
}

/* A socket below RTE_MAX_NUMA_NODES without memory, or -1. */
static int
absent_socket(void)
{
	char path[64];
	struct stat sb;
	unsigned int i;
	int s;

	for (s = 0; s < RTE_MAX_NUMA_NODES; s++) {
		bool present = false;

		if (is_eal()) {
			for (i = 0; i < rte_socket_count(); i++)
				present |= rte_socket_id_by_idx(i) == s;
		} else {
			snprintf(path, sizeof(path), "/sys/devices/system/node/node%d", s);
			present = stat(path, &sb) == 0 ||
				(s == 0 && stat("/sys/devices/system/node", &sb) != 0);
		}
		if (!present)
			return s;
	}
	return -1;
}

static size_t
first_nonzero(const void *p, size_t n)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i] != 0)
			return i;
	return n;
}

/* --- hpm_init --- */

static void
check_init_errors(void)
{
	struct hpm_config cfg;
	int rc;

	CHECK(hpm_source_name() == NULL, "initialised already: %s", hpm_source_name());
	hpm_config_defaults(&cfg);
	cfg.chunk_size = MIB(3);
	rc = hpm_init(&cfg);
	CHECK(rc == -EINVAL, "chunk_size 3 MiB: %d", rc);
	hpm_config_defaults(&cfg);
	cfg.chunk_size = MIB(1);
	rc = hpm_init(&cfg);
	CHECK(rc == -EINVAL, "chunk_size 1 MiB: %d", rc);
	hpm_config_defaults(&cfg);
	cfg.hugepage_size = KIB(4);
	rc = hpm_init(&cfg);
	CHECK(rc == -EINVAL, "hugepage_size 4 KiB: %d", rc);
	hpm_config_defaults(&cfg);
	cfg.source = (enum hpm_source_kind)42;
	rc = hpm_init(&cfg);
	CHECK(rc == -EINVAL, "source 42: %d", rc);
	hpm_config_defaults(&cfg);
	cfg.flags = RTE_BIT32(31);
	rc = hpm_init(&cfg);
	CHECK(rc == -EINVAL, "unknown flag: %d", rc);
	/* rounded up to a unit, SIZE_MAX wrapped to 0: a reservation of nothing, ENOMEM */
	hpm_config_defaults(&cfg);
	cfg.initial_size = SIZE_MAX;
	rc = hpm_init(&cfg);
	CHECK(rc == -EINVAL, "initial_size SIZE_MAX: %d", rc);
	if (!is_eal()) {
		hpm_config_defaults(&cfg);
		cfg.source = HPM_SOURCE_EAL;
		rc = hpm_init(&cfg);
		CHECK(rc == -ENODEV, "source eal without EAL: %d", rc);
	}
	CHECK(hpm_source_name() == NULL, "a failed hpm_init left %s initialised",
		hpm_source_name());
}

static int
init(unsigned int flags)
{
	static const enum hpm_source_kind kinds[] = {
		[M_ANON] = HPM_SOURCE_ANON,
		[M_HUGETLBFS] = HPM_SOURCE_HUGETLBFS,
		[M_EAL] = HPM_SOURCE_EAL,
		[M_EAL_NOHUGE] = HPM_SOURCE_EAL,
	};
	struct hpm_config cfg;
	const char *name;
	int rc;

	hpm_config_defaults(&cfg);
	cfg.source = kinds[mode];
	cfg.retain_size = RETAIN;
	cfg.release_delay_ms = RELEASE_DELAY_MS;
	/* small chunks: a chunk the spare pages keep is small */
	cfg.chunk_size = MIB(4);
	cfg.flags |= flags;
	rc = hpm_init(&cfg);
	CHECK(rc == 0, "hpm_init(%s): %d", mode_names[mode], rc);
	if (rc != 0)
		return rc;
	name = hpm_source_name();
	CHECK(name != NULL && strcmp(name, is_eal() ? "eal" : mode_names[mode]) == 0,
		"source name %s", name != NULL ? name : "(null)");
	return 0;
}

static void
check_init_again(void)
{
	struct hpm_config cfg;
	int rc;

	hpm_config_defaults(&cfg);
	cfg.source = HPM_SOURCE_ANON;
	rc = hpm_init(&cfg);
	CHECK(rc == -EALREADY, "second hpm_init: %d", rc);
	rc = hpm_init(NULL);
	CHECK(rc == -EALREADY, "second hpm_init(NULL): %d", rc);
	CHECK(hpm_source_name() != NULL &&
			strcmp(hpm_source_name(), is_eal() ? "eal" : mode_names[mode]) == 0,
		"the second hpm_init changed the source to %s", hpm_source_name());
}

/* --- zeroed memory --- */

/* Size classes (no tag), which the routes above reach with 100 B only. */
static const struct route class_routes[] = {
	{"size class 64 B", 64, 0},
	{"size class 1000 B", 1000, 0},
	{"size class 3000 B", 3000, 0},
	{"size class 20000 B", 20000, 0},
};

static void
check_zero_routes(const struct route *rs, unsigned int n)
{
	unsigned int i, round;

	for (i = 0; i < n; i++) {
		const struct route *r = &rs[i];
		unsigned int reused = 0;
		void *p, *q;
		size_t nz;

		/* fresh */
		p = hpm_zmalloc("zero", r->size, r->align);
		CHECK(p != NULL, "%s: zmalloc: rte_errno %d", r->name, rte_errno);
		if (p == NULL)
			continue;
		nz = first_nonzero(p, r->size);
		CHECK(nz == r->size, "%s: fresh zmalloc byte %zu not zero", r->name, nz);
		memset(p, 0xa5, r->size);
		hpm_free(p);
		/* reused: dirty memory comes back, and must be zeroed */
		for (round = 0; round < 3; round++) {
			q = round == 1 ? hpm_calloc("zero", 1, r->size, r->align)
				       : hpm_zmalloc("zero", r->size, r->align);
			CHECK(q != NULL, "%s: zmalloc again: rte_errno %d", r->name, rte_errno);
			if (q == NULL)
				break;
			reused += q == p;
			nz = first_nonzero(q, r->size);
			CHECK(nz == r->size, "%s: reused zmalloc (round %u) byte %zu not zero",
				r->name, round, nz);
			memset(q, 0x5a, r->size);
			hpm_free(q);
			p = q;
		}
		printf("zero: %-24s fresh and reused (%u of 3 at the freed address)\n", r->name,
			reused);
	}
}

static void
check_zero(void)
{
	check_zero_routes(routes, RTE_DIM(routes));
	check_zero_routes(class_routes, RTE_DIM(class_routes));
	/* a dirty large block given back in part (realloc shrink) then grown again */
	{
		uint8_t *p = hpm_malloc("zero", MIB(6), 0), *q;
		size_t nz;

		CHECK(p != NULL, "6 MiB malloc");
		if (p != NULL) {
			memset(p, 0xee, MIB(6));
			p = hpm_realloc(p, MIB(2), 0);
			CHECK(p != NULL, "shrink to 2 MiB");
			q = hpm_zmalloc("zero", MIB(4), 0);
			CHECK(q != NULL, "zmalloc 4 MiB");
			if (q != NULL) {
				nz = first_nonzero(q, MIB(4));
				CHECK(nz == MIB(4), "zmalloc after shrink: byte %zu not zero", nz);
				hpm_free(q);
			}
			hpm_free(p);
		}
	}
}

/* --- IOVA --- */

static void
check_iova(void)
{
	static const size_t offs[] = {0, 1, 63, 100, 4095, 4096, 4096 + 7, KIB(64) - 1, KIB(64),
		KIB(100), MIB(1) + 3, MIB(2) - 1, MIB(2), MIB(3) + 12345, MIB(5) - 1};
	unsigned int i, j, b, checked = 0, bad = 0;
	uint8_t *blocks[3];

	for (i = 0; i < RTE_DIM(routes); i++) {
		const struct route *r = &routes[i];

		/* several blocks of the route, live together: different places */
		for (b = 0; b < RTE_DIM(blocks); b++) {
			blocks[b] = hpm_malloc("iova", r->size, r->align);
			CHECK(blocks[b] != NULL, "%s: malloc", r->name);
		}
		for (b = 0; b < RTE_DIM(blocks); b++) {
			uint8_t *p = blocks[b];

			for (j = 0; p != NULL && j < RTE_DIM(offs); j++) {
				rte_iova_t got, want;

				if (offs[j] >= r->size)
					continue;
				got = hpm_malloc_virt2iova(p + offs[j]);
				if (mode == M_ANON) {
					want = RTE_BAD_IOVA;
				} else {
					want = reference_iova(p + offs[j]);
					CHECK(want != RTE_BAD_IOVA,
						"%s +%zu: the system knows no IOVA", r->name,
						offs[j]);
				}
				checked++;
				if (got != want && bad++ < 10)
					CHECK(got == want,
						"%s +%zu: iova 0x%" PRIx64
						", system says 0x%" PRIx64,
						r->name, offs[j], got, want);
			}
		}
		for (b = 0; b < RTE_DIM(blocks); b++)
			hpm_free(blocks[b]);
	}
	CHECK(bad == 0, "%u of %u IOVAs wrong", bad, checked);
	CHECK(hpm_malloc_virt2iova(NULL) == RTE_BAD_IOVA, "virt2iova(NULL)");
	CHECK(hpm_malloc_virt2iova(&checked) == RTE_BAD_IOVA, "virt2iova of a stack address");
	printf("iova: %u addresses checked against %s\n", checked,
		mode == M_ANON                ? "RTE_BAD_IOVA"
			: mode == M_HUGETLBFS ? "/proc/self/pagemap"
					      : "rte_mem_virt2iova");
}

/* Whether EAL can reserve an IOVA-contiguous memzone of size bytes right now. */
static bool
eal_can_contig(size_t size)
{
	const struct rte_memzone *mz = rte_memzone_reserve_aligned("sources_contig_probe", size,
		SOCKET_ID_ANY, RTE_MEMZONE_IOVA_CONTIG | RTE_MEMZONE_SIZE_HINT_ONLY, UNIT);

	if (mz == NULL)
		return false;
	rte_memzone_free(mz);
	return true;
}

static void
check_contig(void)
{
	static const size_t sizes[] = {KIB(64), MIB(2), MIB(8)};
	unsigned int i;

	for (i = 0; i < RTE_DIM(sizes); i++) {
		size_t size = sizes[i], off;
		unsigned int bad = 0;
		uint8_t *p;
		rte_iova_t base;

		rte_errno = 0;
		p = hpm_malloc_contig("contig", size, 0, SOCKET_ID_ANY);
		if (mode == M_ANON) {
			CHECK(p == NULL && rte_errno == ENOTSUP,
				"anon contig %zu: %p, rte_errno %d", size, p, rte_errno);
			hpm_free(p);
			continue;
		}
		if (p == NULL && rte_errno == ENOMEM && mode == M_EAL && !eal_can_contig(size)) {
			/* the eal source is bounded by EAL: accepted, and said */
			printf("contig: %zu bytes: ENOMEM, and EAL itself has no IOVA-contiguous "
			       "memzone of that size here\n",
				size);
			continue;
		}
		CHECK(p != NULL, "contig %zu: rte_errno %d", size, rte_errno);
		if (p == NULL)
			continue;
		CHECK(hpm_malloc_usable_size(p) >= size, "contig %zu: usable %zu", size,
			hpm_malloc_usable_size(p));
		base = hpm_malloc_virt2iova(p);
		CHECK(base != RTE_BAD_IOVA, "contig %zu: no IOVA", size);
		for (off = 0; off < size; off += 4096) {
			rte_iova_t got = hpm_malloc_virt2iova(p + off);
			rte_iova_t sys = reference_iova(p + off);

			if ((got != base + off || sys != base + off) && bad++ < 5)
				CHECK(false,
					"contig %zu +%zu: iova 0x%" PRIx64 " (system 0x%" PRIx64
					"), expected 0x%" PRIx64,
					size, off, got, sys, base + off);
		}
		CHECK(bad == 0, "contig %zu: %u pages out of line", size, bad);
		printf("contig: %zu bytes at IOVA 0x%" PRIx64 ", contiguous\n", size, base);
		hpm_free(p);
	}
}

/*
 * hugetlbfs: a contiguous block takes its own pages and no more. The source
 * draws a pool of pages to find a run of consecutive frames; the pages of
 * the pool outside the run must go back at once, though the file lives on
 * behind the run's mapping. The system's free count moves with other
 * processes too: the pages taken beyond those this process maps must be 0
 * in one of a few tries (they were the pool's other half in every try).
 */
static void
check_contig_pool(void)
{
	long least = LONG_MAX;
	unsigned int i;

	for (i = 0; i < 5 && least > 0; i++) {
		long f0, f1, unmapped;
		long long m0, m1;
		void *p;

		/* the block takes a new chunk, not one kept from before */
		hpm_heap_trim();
		f0 = test_hugepages_2m("free_hugepages");
		m0 = self_hugetlb_bytes();
		p = hpm_malloc_contig("contig_pool", MIB(4), 0, SOCKET_ID_ANY);
		f1 = test_hugepages_2m("free_hugepages");
		m1 = self_hugetlb_bytes();
		CHECK(p != NULL, "contig 4 MiB: rte_errno %d", rte_errno);
		if (p == NULL)
			return;
		unmapped = (f0 - f1) - (long)((m1 - m0) / (long long)UNIT);
		printf("contig pool: %ld hugepages taken, %lld mapped\n", f0 - f1,
			(m1 - m0) / (long long)UNIT);
		least = RTE_MIN(least, unmapped);
		hpm_free(p);
	}
	CHECK(least <= 0, "contig 4 MiB: %ld hugepages taken and not mapped, at best of %u tries",
		least, i);
}

/* --- sockets --- */

static void
check_sockets(void)
{
	struct rte_malloc_socket_stats st;
	int absent = absent_socket();
	void *p;

	p = hpm_malloc_socket("socket", 100, 0, 0);
	CHECK(p != NULL, "socket 0: rte_errno %d", rte_errno);
	hpm_free(p);
	p = hpm_malloc_socket("socket", MIB(4), 0, 0);
	CHECK(p != NULL, "socket 0, 4 MiB: rte_errno %d", rte_errno);
	hpm_free(p);
	p = hpm_zmalloc_socket("socket", KIB(4), KIB(4), 0);
	CHECK(p != NULL, "zmalloc socket 0: rte_errno %d", rte_errno);
	hpm_free(p);
	CHECK(hpm_malloc_get_socket_stats(0, &st) == 0, "stats socket 0");

	/* without hugepages every socket means SOCKET_ID_ANY, as in EAL */
	rte_errno = 0;
	p = hpm_malloc_socket("socket", 100, 0, RTE_MAX_NUMA_NODES);
	if (is_huge())
		CHECK(p == NULL && rte_errno == EINVAL,
			"socket RTE_MAX_NUMA_NODES: %p, rte_errno %d", p, rte_errno);
	else
		CHECK(p != NULL, "socket RTE_MAX_NUMA_NODES without hugepages: rte_errno %d",
			rte_errno);
	hpm_free(p);
	rte_errno = 0;
	p = hpm_malloc_socket("socket", MIB(4), 0, RTE_MAX_NUMA_NODES);
	if (is_huge())
		CHECK(p == NULL && rte_errno == EINVAL,
			"socket RTE_MAX_NUMA_NODES, 4 MiB: %p, rte_errno %d", p, rte_errno);
	else
		CHECK(p != NULL, "socket RTE_MAX_NUMA_NODES, 4 MiB, without hugepages: %d",
			rte_errno);
	hpm_free(p);
	rte_errno = 0;
	CHECK(hpm_malloc_get_socket_stats(RTE_MAX_NUMA_NODES, &st) == -1 && rte_errno == EINVAL,
		"stats socket RTE_MAX_NUMA_NODES: rte_errno %d", rte_errno);

	printf("sockets: absent socket %d, %s\n", absent,
		is_huge() ? "placement is real" : "a socket is a wish");
	if (absent < 0)
		return;
	rte_errno = 0;
	p = hpm_malloc_socket("socket", 100, 0, absent);
	if (is_huge())
		CHECK(p == NULL && rte_errno == EINVAL, "absent socket %d: %p, rte_errno %d",
			absent, p, rte_errno);
	else
		CHECK(p != NULL, "absent socket %d without hugepages: rte_errno %d", absent,
			rte_errno);
	hpm_free(p);
	rte_errno = 0;
	p = hpm_malloc_socket("socket", MIB(2), MIB(2), absent);
	if (is_huge())
		CHECK(p == NULL && rte_errno == EINVAL, "absent socket %d, 2 MiB: %p, rte_errno %d",
			absent, p, rte_errno);
	else
		CHECK(p != NULL, "absent socket %d, 2 MiB, without hugepages: rte_errno %d", absent,
			rte_errno);
	hpm_free(p);
	rte_errno = 0;
	p = hpm_malloc_socket("socket", 100, 0, -2);
	if (is_huge())
		CHECK(p == NULL && rte_errno == EINVAL, "socket -2: %p, rte_errno %d", p,
			rte_errno);
	else
		CHECK(p != NULL, "socket -2 without hugepages: rte_errno %d", rte_errno);
	hpm_free(p);
	if (is_huge()) {
		rte_errno = 0;
		p = hpm_malloc_contig("socket", KIB(64), 0, absent);
		CHECK(p == NULL && rte_errno == EINVAL, "contig on a bad socket: %p, rte_errno %d",
			p, rte_errno);
		hpm_free(p);
	}
	rte_errno = 0;
	CHECK(hpm_malloc_get_socket_stats(absent, &st) == -1 && rte_errno == EINVAL,
		"stats of absent socket %d: rte_errno %d", absent, rte_errno);
}

/* --- giving memory back --- */

#define BIG_N 80      /* x 2 MiB = 160 MiB */
#define SMALL_N 10240 /* x 4 KiB = 40 MiB */

static void
check_give_back(void)
{
	static void *big[BIG_N], *small[SMALL_N];
	struct rte_malloc_socket_stats st;
	unsigned int i, nbig = 0, nsmall = 0;
	size_t peak;

	for (i = 0; i < BIG_N; i++) {
		big[nbig] = hpm_malloc("give_back", MIB(2), 0);
		if (big[nbig] == NULL)
			break;
		memset(big[nbig++], 0x11, 64);
	}
	for (i = 0; i < SMALL_N; i++) {
		/* half 4K-aligned (granules), half not (heap) */
		small[nsmall] = hpm_malloc("give_back", KIB(4), i & 1 ? KIB(4) : 0);
		if (small[nsmall] == NULL)
			break;
		memset(small[nsmall++], 0x22, 64);
	}
	CHECK(nbig == BIG_N && nsmall == SMALL_N, "give back: %u/%u big, %u/%u small", nbig, BIG_N,
		nsmall, SMALL_N);
	CHECK(hpm_malloc_get_socket_stats(0, &st) == 0, "stats");
	peak = st.heap_totalsz_bytes;
	CHECK(peak >= (size_t)nbig * MIB(2) + (size_t)nsmall * KIB(4), "heap %zu at its peak",
		peak);
	/* free in an order that leaves holes until the end */
	for (i = 0; i < nsmall; i += 2)
		hpm_free(small[i]);
	for (i = 0; i < nbig; i += 2)
		hpm_free(big[i]);
	for (i = 1; i < nsmall; i += 2)
		hpm_free(small[i]);
	for (i = 1; i < nbig; i += 2)
		hpm_free(big[i]);
	/* what the lcore's cache holds goes back too */
	hpm_cache_flush();
	CHECK(hpm_heap_check() == 0, "heap check");
	CHECK(hpm_malloc_get_socket_stats(0, &st) == 0, "stats");
	CHECK(st.alloc_count == 0, "%u blocks left", st.alloc_count);
	/* empty chunks beyond the threshold wait for the release delay... */
	CHECK(chunks0() > RETAIN + SPARE_UNITS * UNIT,
		"empty chunks went back before the delay: heap %zu bytes", chunks0());
	usleep(2 * RELEASE_DELAY_MS * 1000);
	/* ... and go back at the next free that empties a chunk */
	big[0] = hpm_malloc("give_back", MIB(4), MIB(2));
	CHECK(big[0] != NULL, "4 MiB after the drain: rte_errno %d", rte_errno);
	hpm_free(big[0]);
	CHECK(hpm_malloc_get_socket_stats(0, &st) == 0, "stats");
	printf("give back: heap %zu MiB at its peak, %zu MiB when empty after the delay "
	       "(retain %zu MiB)\n",
		peak >> 20, chunks0() >> 20, RETAIN >> 20);
	CHECK(chunks0() <= RETAIN + SPARE_UNITS * MIB(4),
		"empty heap holds %zu bytes: more than retain_size %zu + %u chunks with spare pages",
		chunks0(), RETAIN, SPARE_UNITS);
	/* what the heap says it holds is what the source gave it: this process's hugepages */
	if (mode == M_HUGETLBFS && self_hugetlb_bytes() >= 0)
		CHECK(self_hugetlb_bytes() == (long long)chunks0(),
			"hugetlbfs: the process maps %lld bytes of hugepages, the heap says %zu",
			self_hugetlb_bytes(), chunks0());

	/* hpm_heap_trim() does not wait for the delay */
	for (nbig = 0; nbig < BIG_N / 2; nbig++)
		if ((big[nbig] = hpm_malloc("trim", MIB(2), 0)) == NULL)
			break;
	for (i = 0; i < nbig; i++)
		hpm_free(big[i]);
	hpm_cache_flush();
	CHECK(hpm_heap_trim() > 0, "trim gave nothing back");
	CHECK(hpm_malloc_get_socket_stats(0, &st) == 0 && chunks0() <= RETAIN,
		"after hpm_heap_trim() the heap holds %zu bytes", chunks0());
	CHECK(hpm_heap_trim() == 0, "a second trim gave something back");
}

/* After hpm_fini(), hpm_init() works again, and allocates from the same source. */
/*
 * Zones of a dead process that had this pid: the names this process's
 * source would take first (its count starts at 0). A secondary's chunk
 * outlives it, and pids are reused (or repeat across pid namespaces).
 */
#define STALE_ZONES 16
static const struct rte_memzone *stale[STALE_ZONES];

static void
make_stale_zones(void)
{
	char name[RTE_MEMZONE_NAMESIZE];
	unsigned int i;

	for (i = 0; i < STALE_ZONES; i++) {
		snprintf(name, sizeof(name), "hpm_%d_%u", (int)getpid(), i);
		stale[i] = rte_memzone_reserve(name, 64, SOCKET_ID_ANY, 0);
		CHECK(stale[i] != NULL, "stale zone %s", name);
	}
}

static void
free_stale_zones(void)
{
	unsigned int i;

	for (i = 0; i < STALE_ZONES; i++)
		CHECK(stale[i] != NULL && rte_memzone_free(stale[i]) == 0,
			"stale zone %u still there", i);
}

static void
check_reinit(void)
{
	unsigned int i;
	void *p[RTE_DIM(routes)];

	CHECK(hpm_source_name() == NULL, "hpm_fini left %s", hpm_source_name());
	check_init_errors();
	/* without caches: every block from the locked path, zeroed there */
	if (init(HPM_CFG_F_NO_CACHE) != 0)
		return;
	check_zero();
	for (i = 0; i < RTE_DIM(routes); i++) {
		p[i] = hpm_zmalloc("reinit", routes[i].size, routes[i].align);
		CHECK(p[i] != NULL, "after re-init: %s", routes[i].name);
		if (p[i] != NULL)
			CHECK(first_nonzero(p[i], routes[i].size) == routes[i].size,
				"after re-init: %s not zero", routes[i].name);
	}
	for (i = 0; i < RTE_DIM(routes); i++)
		hpm_free(p[i]);
	CHECK(hpm_heap_check() == 0, "heap check after re-init");
	CHECK(hpm_bad_free_count() == 0, "bad frees after re-init");
	hpm_fini();
	CHECK(hpm_source_name() == NULL, "second hpm_fini left %s", hpm_source_name());
}

int
main(int argc, char **argv)
{
	struct rte_malloc_socket_stats rte0, rte1;
	unsigned int zones0 = 0, zones1;
	long pages0 = -1, pages1;
	long long hugetlb0 = -1;
	struct rte_malloc_socket_stats st;
	int rc = -1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (mode = M_ANON; argc > 1 && mode <= M_EAL_NOHUGE; mode++)
		if (strcmp(argv[1], mode_names[mode]) == 0)
			break;
	if (argc < 2 || mode > M_EAL_NOHUGE) {
		fprintf(stderr, "usage: %s anon|hugetlbfs|eal|eal-nohuge\n", argv[0]);
		return 2;
	}
	if (mode == M_EAL)
		rc = test_eal_init("sources", "-l", "0", "--no-pci", NULL);
	else if (mode == M_EAL_NOHUGE)
		rc = test_eal_init("sources", "-l", "0", "--no-pci", "--no-huge", "-m", "512",
			NULL);
	if (is_eal() && rc != 0) {
		printf("sources: EAL cannot start, skipped\n");
		return TEST_SKIP;
	}
	if (mode == M_HUGETLBFS && test_hugepages_2m("free_hugepages") < 128) {
		printf("sources: fewer than 128 free 2 MiB hugepages, skipped\n");
		return TEST_SKIP;
	}

	if (is_eal())
		make_stale_zones();
	check_init_errors();
	pages0 = test_hugepages_2m("free_hugepages");
	hugetlb0 = self_hugetlb_bytes();
	if (is_eal()) {
		zones0 = memzone_count();
		CHECK(rte_malloc_get_socket_stats(rte_socket_id_by_idx(0), &rte0) == 0,
			"rte stats");
	}
	if (init(0) != 0)
		return test_end("sources");
	printf("source %s\n", hpm_source_name());
	check_init_again();
	check_zero();
	check_iova();
	check_contig();
	if (mode == M_HUGETLBFS)
		check_contig_pool();
	check_sockets();
	check_give_back();
	CHECK(hpm_malloc_get_socket_stats(0, &st) == 0 && st.alloc_count == 0, "%u blocks left",
		st.alloc_count);
	CHECK(hpm_heap_check() == 0, "heap check");
	CHECK(hpm_bad_free_count() == 0, "%" PRIu64 " bad frees", hpm_bad_free_count());
	hpm_fini();

	/*
	 * The source has everything back. free_hugepages is the whole system's:
	 * other processes (tests run in parallel) move it, so it is printed;
	 * this process's own hugepages are what must be back to where they were.
	 */
	if (mode == M_HUGETLBFS) {
		pages1 = test_hugepages_2m("free_hugepages");
		printf("free hugepages: %ld before hpm_init, %ld after hpm_fini (system-wide)\n",
			pages0, pages1);
		CHECK(self_hugetlb_bytes() == hugetlb0,
			"hugepages mapped: %lld bytes before hpm_init, %lld after hpm_fini",
			hugetlb0, self_hugetlb_bytes());
	}
	if (is_eal()) {
		zones1 = memzone_count();
		CHECK(zones1 == zones0, "memzones: %u before hpm_init, %u after hpm_fini", zones0,
			zones1);
		CHECK(rte_malloc_get_socket_stats(rte_socket_id_by_idx(0), &rte1) == 0,
			"rte stats");
		CHECK(rte1.alloc_count == rte0.alloc_count &&
				rte1.heap_allocsz_bytes == rte0.heap_allocsz_bytes,
			"EAL heap: %u blocks / %zu bytes before, %u / %zu after", rte0.alloc_count,
			rte0.heap_allocsz_bytes, rte1.alloc_count, rte1.heap_allocsz_bytes);
		printf("EAL heap: %zu MiB before hpm_init, %zu MiB after hpm_fini\n",
			rte0.heap_totalsz_bytes >> 20, rte1.heap_totalsz_bytes >> 20);
	}
	check_reinit();
	if (mode == M_HUGETLBFS)
		CHECK(self_hugetlb_bytes() == hugetlb0,
			"hugepages mapped after the second hpm_fini: %lld bytes, %lld before",
			self_hugetlb_bytes(), hugetlb0);
	if (is_eal())
		CHECK(memzone_count() == zones0,
			"memzones after the second hpm_fini: %u, %u before", memzone_count(),
			zones0);
	if (is_eal())
		free_stale_zones();
	if (pagemap_fd >= 0)
		close(pagemap_fd);
	return test_end("sources");
}
