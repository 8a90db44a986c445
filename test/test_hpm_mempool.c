/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Mempools on hpmalloc, with the standard drivers (ring_mp_mc, stack, bucket)
 * and several object sizes: create, populate, get every object, put them
 * back, free. Every memory chunk and object has the IOVA rte_mem_virt2iova()
 * gives, lies in hpmalloc's memory, and no two objects overlap; after the
 * free, hpmalloc holds exactly what it held before.
 * Usage: test_hpm_mempool [EAL options]   (e.g. --iova-mode=va, --no-huge -m 512)
 */

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "hpm_malloc.h"
#include "hpm_mempool.h"
#include "test_common.h"

/* Bytes hpmalloc's blocks hold, over every socket. */
static size_t
hpm_alloc_bytes(void)
{
	struct rte_malloc_socket_stats s;
	size_t sum = 0;
	unsigned int i;

	for (i = 0; i < rte_socket_count(); i++)
		if (hpm_malloc_get_socket_stats(rte_socket_id_by_idx(i), &s) == 0)
			sum += s.heap_allocsz_bytes;
	return sum;
}

struct walk {
	unsigned int chunks;
	unsigned int objs;
	unsigned int bad_iova;
	unsigned int foreign;
	uintptr_t *addrs;
	bool io;
};

static void
check_chunk(struct rte_mempool *mp, void *arg, struct rte_mempool_memhdr *m, unsigned int idx)
{
	struct walk *w = arg;

	RTE_SET_USED(mp);
	RTE_SET_USED(idx);
	w->chunks++;
	if (hpm_malloc_virt2iova(m->addr) == RTE_BAD_IOVA)
		w->foreign++;
	if (w->io &&
		(m->iova != rte_mem_virt2iova(m->addr) || m->iova != hpm_malloc_virt2iova(m->addr)))
		w->bad_iova++;
}

static void
check_obj(struct rte_mempool *mp, void *arg, void *obj, unsigned int idx)
{
	struct walk *w = arg;
	struct rte_mempool_objhdr *hdr = RTE_PTR_SUB(obj, sizeof(*hdr));

	RTE_SET_USED(idx);
	if (w->objs < mp->size)
		w->addrs[w->objs] = (uintptr_t)obj;
	w->objs++;
	if (hpm_malloc_virt2iova(obj) == RTE_BAD_IOVA)
		w->foreign++;
	if (w->io &&
		(rte_mempool_virt2iova(obj) != rte_mem_virt2iova(obj) ||
			hdr->iova != hpm_malloc_virt2iova(obj)))
		w->bad_iova++;
}

static int
cmp_addr(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;

	return x < y ? -1 : x > y;
}

/* Objects (with their headers and trailers) do not overlap. */
static unsigned int
overlaps(const struct rte_mempool *mp, uintptr_t *addrs, unsigned int n)
{
	size_t total = mp->header_size + mp->elt_size + mp->trailer_size;
	unsigned int i, bad = 0;

	qsort(addrs, n, sizeof(*addrs), cmp_addr);
	for (i = 1; i < n; i++)
		if (addrs[i] - addrs[i - 1] < total)
			bad++;
	return bad;
}

/*
 * Take every object the driver gives, one at a time, write all of it, give
 * them back; the number taken. (bucket does not give every object: compare
 * with DPDK's own populate.)
 */
static unsigned int
use_all(struct rte_mempool *mp, const char *what)
{
	unsigned int n = mp->size, i, got = 0;
	void **objs = calloc(n, sizeof(*objs));

	if (objs == NULL)
		return 0;
	for (i = 0; i < n; i++) {
		if (rte_mempool_get(mp, &objs[i]) != 0)
			break;
		memset(objs[i], (int)(i & 0xff), mp->elt_size);
		got++;
	}
	for (i = 0; i < got; i++)
		if (*(uint8_t *)objs[i] != (uint8_t)i ||
			((uint8_t *)objs[i])[mp->elt_size - 1] != (uint8_t)i) {
			CHECK(false, "%s: object %u overwritten", what, i);
			break;
		}
	rte_mempool_put_bulk(mp, objs, got);
	free(objs);
	return got;
}

/*
 * Objects a driver gives one at a time: all of them, but bucket (22.11) keeps
 * up to a bucket's worth back (with DPDK's own populate too).
 */
static size_t
bucket_size(void)
{
	/* the bucket driver's: a page, at most RTE_DRIVER_MEMPOOL_BUCKET_SIZE_KB */
	return RTE_MIN(rte_eal_has_hugepages() ? (size_t)RTE_PGSIZE_2M
					       : (size_t)sysconf(_SC_PAGESIZE),
		(size_t)RTE_DRIVER_MEMPOOL_BUCKET_SIZE_KB * 1024);
}

static unsigned int
expected_got(const struct rte_mempool *mp)
{
	size_t total = mp->header_size + mp->elt_size + mp->trailer_size;
	size_t per_bucket = (bucket_size() - RTE_CACHE_LINE_SIZE) / total;

	if (strcmp(rte_mempool_get_ops(mp->ops_index)->name, "bucket") != 0)
		return mp->size;
	return mp->size > per_bucket ? mp->size - per_bucket : 0;
}

static void
check_pool(struct rte_mempool *mp, const char *what)
{
	unsigned int got;

	struct walk w = {.io = !(mp->flags & RTE_MEMPOOL_F_NO_IOVA_CONTIG)};

	w.addrs = calloc(mp->size, sizeof(*w.addrs));
	if (w.addrs == NULL)
		return;
	rte_mempool_mem_iter(mp, check_chunk, &w);
	rte_mempool_obj_iter(mp, check_obj, &w);
	printf("%s: %u objects in %u chunks\n", what, w.objs, w.chunks);
	CHECK(w.objs == mp->size, "%s: %u objects of %u", what, w.objs, mp->size);
	CHECK(w.chunks >= 1 && w.foreign == 0, "%s: %u chunks, %u outside hpmalloc", what, w.chunks,
		w.foreign);
	CHECK(w.bad_iova == 0, "%s: %u wrong IOVAs", what, w.bad_iova);
	CHECK(overlaps(mp, w.addrs, RTE_MIN(w.objs, mp->size)) == 0, "%s: overlapping objects",
		what);
	free(w.addrs);
	CHECK(w.io == !(mp->flags & RTE_MEMPOOL_F_NON_IO), "%s: IO flag", what);
	got = use_all(mp, what);
	CHECK(got >= expected_got(mp), "%s: got %u objects, expected %u", what, got,
		expected_got(mp));
	CHECK(rte_mempool_avail_count(mp) == mp->size, "%s: %u of %u back", what,
		rte_mempool_avail_count(mp), mp->size);
}

static void
test_driver(const char *ops, unsigned int elt_size, unsigned int n, unsigned int flags)
{
	char what[64];
	struct rte_mempool *mp;
	size_t before = hpm_alloc_bytes(), during;
	int rc;

	snprintf(what, sizeof(what), "%s/%u/%u%s", ops, elt_size, n,
		flags & RTE_MEMPOOL_F_NO_IOVA_CONTIG ? "/noiova" : "");
	mp = rte_mempool_create_empty("hpmt_pool", n, elt_size, n >= 64 ? 32 : 0, 0, SOCKET_ID_ANY,
		flags);
	CHECK(mp != NULL, "%s: create_empty: %s", what, rte_strerror(rte_errno));
	if (mp == NULL)
		return;
	CHECK(rte_mempool_set_ops_byname(mp, ops, NULL) == 0, "%s: ops", what);
	rc = hpm_mempool_populate(mp);
	CHECK(rc == (int)n, "%s: populate: %d", what, rc);
	CHECK(hpm_mempool_populate(mp) == -EEXIST, "%s: populated twice", what);
	during = hpm_alloc_bytes();
	CHECK(during >= before + (size_t)n * elt_size, "%s: hpmalloc holds %zu, was %zu", what,
		during, before);
	if (rc == (int)n)
		check_pool(mp, what);
	rte_mempool_free(mp);
	CHECK(hpm_alloc_bytes() == before, "%s: after free hpmalloc holds %zu, was %zu", what,
		hpm_alloc_bytes(), before);
}

/*
 * An object larger than a hugepage needs IOVA-contiguous pages. With IOVA as
 * VA every block has them; with IOVA as PA hpmalloc falls back on an
 * IOVA-contiguous block, which the machine may not have (DPDK's own populate
 * fails there more often: it does not fall back).
 */
static void
test_big_object(void)
{
	const unsigned int elt_size = 3000000;
	size_t before = hpm_alloc_bytes();
	struct rte_mempool *mp;
	int rc;

	mp = rte_mempool_create_empty("hpmt_big", 1, elt_size, 0, 0, SOCKET_ID_ANY, 0);
	CHECK(mp != NULL && rte_mempool_set_ops_byname(mp, "ring_mp_mc", NULL) == 0, "big pool");
	if (mp == NULL)
		return;
	rc = hpm_mempool_populate(mp);
	if (rc == 1)
		check_pool(mp, "big object");
	else if (rte_eal_iova_mode() == RTE_IOVA_PA)
		printf("big object: no IOVA-contiguous memory (%d)\n", rc);
	CHECK(rc == 1 || (rte_eal_iova_mode() == RTE_IOVA_PA && (rc == -ENOMEM || rc == -ENOBUFS)),
		"big object: %d", rc);
	rte_mempool_free(mp);
	CHECK(hpm_alloc_bytes() == before, "big object: memory not back");
}

static unsigned int obj_inits, pool_inits;

static void
count_obj(struct rte_mempool *mp, void *arg, void *obj, unsigned int idx)
{
	RTE_SET_USED(mp);
	RTE_SET_USED(arg);
	RTE_SET_USED(obj);
	RTE_SET_USED(idx);
	obj_inits++;
}

static void
count_pool(struct rte_mempool *mp, void *arg)
{
	RTE_SET_USED(mp);
	RTE_SET_USED(arg);
	pool_inits++;
}

static void
test_create(void)
{
	size_t before = hpm_alloc_bytes();
	struct rte_mempool *mp;

	mp = hpm_mempool_create("hpmt_create", 3000, 500, 16, 64, count_pool, NULL, count_obj, NULL,
		SOCKET_ID_ANY, RTE_MEMPOOL_F_SP_PUT | RTE_MEMPOOL_F_SC_GET);
	CHECK(mp != NULL, "hpm_mempool_create: %s", rte_strerror(rte_errno));
	if (mp == NULL)
		return;
	CHECK(pool_inits == 1 && obj_inits == 3000, "initialisers: %u %u", pool_inits, obj_inits);
	CHECK(strcmp(rte_mempool_get_ops(mp->ops_index)->name, "ring_sp_sc") == 0, "flags' ops");
	check_pool(mp, "hpm_mempool_create");
	rte_mempool_free(mp);
	CHECK(hpm_alloc_bytes() == before, "hpm_mempool_create: memory not back");
	CHECK(hpm_mempool_populate(NULL) == -EINVAL, "populate(NULL)");
	rte_errno = 0;
	CHECK(hpm_mempool_create("hpmt_create", 0, 64, 0, 0, NULL, NULL, NULL, NULL, SOCKET_ID_ANY,
		      0) == NULL &&
			rte_errno == EINVAL,
		"empty pool");
}

static void
test_mbufs(const char *ops)
{
	size_t before = hpm_alloc_bytes();
	struct rte_mbuf *m[64];
	struct rte_mempool *mp;
	unsigned int i;

	mp = hpm_pktmbuf_pool_create_by_ops("hpmt_mbuf", 4095, 64, 16, RTE_MBUF_DEFAULT_BUF_SIZE,
		SOCKET_ID_ANY, ops);
	CHECK(mp != NULL, "mbuf pool %s: %s", ops ? ops : "default", rte_strerror(rte_errno));
	if (mp == NULL)
		return;
	CHECK(rte_pktmbuf_data_room_size(mp) == RTE_MBUF_DEFAULT_BUF_SIZE &&
			rte_pktmbuf_priv_size(mp) == 16,
		"mbuf pool private data");
	CHECK(rte_pktmbuf_alloc_bulk(mp, m, RTE_DIM(m)) == 0, "mbuf alloc");
	for (i = 0; i < RTE_DIM(m); i++) {
		CHECK(rte_mbuf_data_iova(m[i]) == rte_mem_virt2iova(rte_pktmbuf_mtod(m[i], void *)),
			"mbuf %u data IOVA", i);
		CHECK(m[i]->buf_len == RTE_MBUF_DEFAULT_BUF_SIZE && m[i]->pool == mp, "mbuf %u", i);
		memset(m[i]->buf_addr, 0x5a, m[i]->buf_len);
	}
	rte_pktmbuf_free_bulk(m, RTE_DIM(m));
	check_pool(mp, ops != NULL ? ops : "mbuf default");
	rte_mempool_free(mp);
	CHECK(hpm_alloc_bytes() == before, "mbuf pool: memory not back");
}

int
main(int argc, char **argv)
{
	static const unsigned int sizes[] = {64, 200, 2048, 9000};
	static const char *const drivers[] = {"ring_mp_mc", "stack", "bucket"};
	char *eal_args[8] = {NULL};
	bool no_huge = false;
	unsigned int d, s;
	int i, n = 0, rc;

	for (i = 1; i < argc && n < 6; i++) {
		eal_args[n++] = argv[i];
		no_huge |= strcmp(argv[i], "--no-huge") == 0;
	}
	/* hugepage files go at once (EAL refuses the option without hugepages) */
	if (!no_huge)
		eal_args[n++] = (char *)(uintptr_t) "--huge-unlink";
	rc = test_eal_init("hpm_mempool", "-l", "0", "--no-pci", eal_args[0], eal_args[1],
		eal_args[2], eal_args[3], eal_args[4], eal_args[5], eal_args[6], NULL);
	if (rc < 0) {
		printf("SKIP: EAL cannot start\n");
		return TEST_SKIP;
	}
	printf("IOVA mode %s, %s\n", rte_eal_iova_mode() == RTE_IOVA_PA ? "PA" : "VA",
		rte_eal_has_hugepages() ? "hugepages" : "no hugepages");
	rc = hpm_init(NULL);
	CHECK(rc == 0, "hpm_init: %d", rc);
	for (d = 0; d < RTE_DIM(drivers); d++)
		for (s = 0; s < RTE_DIM(sizes); s++) {
			/*
			 * bucket (22.11, with DPDK's own populate too) loses
			 * 64-byte objects, and divides by zero for objects
			 * larger than a bucket
			 */
			if (strcmp(drivers[d], "bucket") == 0 &&
				(sizes[s] == 64 ||
					sizes[s] + 2 * RTE_CACHE_LINE_SIZE > bucket_size()))
				continue;
			test_driver(drivers[d], sizes[s], s < 2 ? 20000 : 3000, 0);
		}
	/* large objects, pools of many hugepages, objects without IOVA */
	test_driver("ring_mp_mc", 100000, 100, 0);
	test_driver("ring_mp_mc", 2048, 50000, 0);
	test_driver("stack", 1000, 1000, RTE_MEMPOOL_F_NO_IOVA_CONTIG);
	test_big_object();
	test_driver("ring_mp_mc", 3000000, 1, RTE_MEMPOOL_F_NO_IOVA_CONTIG);
	test_create();
	test_mbufs(NULL);
	test_mbufs("bucket");
	test_mbufs("stack");
	CHECK(hpm_bad_free_count() == 0, "bad frees");
	CHECK(hpm_heap_check() == 0, "heap check");
	return test_end("hpm_mempool");
}
