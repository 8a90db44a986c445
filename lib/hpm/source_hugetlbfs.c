/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The hugetlbfs source: mmap(MAP_HUGETLB) without EAL, bound to the socket's
 * node and populated at once, so that a short pool is an error here and not a
 * SIGBUS later, and so that every page has its IOVA.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <sys/mman.h>

#include <linux/falloc.h>

#include "log.h"
#include "source_hugetlbfs.h"

#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif
#ifndef MFD_HUGE_SHIFT
#define MFD_HUGE_SHIFT 26
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

static size_t page_size = HPM_UNIT_SIZE;

void
hpm_source_hugetlbfs_set_page_size(size_t size)
{
	page_size = size >= (UINT64_C(1) << 30) ? (UINT64_C(1) << 30) : HPM_UNIT_SIZE;
}

static void
fill_region(struct hpm_region *r, void *va, size_t len, int socket)
{
	memset(r, 0, sizeof(*r));
	r->va = va;
	r->len = len;
	r->socket = socket < 0 ? 0 : socket;
	r->zeroed = 1;
	r->unit_iova_contig = 1;
	r->page_size_log2 = rte_log2_u64(page_size);
}

/* len bytes of address space aligned to align, mapped to nothing yet. */
static uint8_t *
reserve_va(size_t len, size_t align)
{
	size_t map_len = len + align;
	uint8_t *va =
		mmap(NULL, map_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	uint8_t *aligned;

	if (va == MAP_FAILED)
		return NULL;
	aligned = RTE_PTR_ALIGN_CEIL(va, align);
	if (aligned != va)
		munmap(va, aligned - va);
	munmap(aligned + len, map_len - (aligned - va) - len);
	return aligned;
}

struct frame {
	rte_iova_t iova;
	size_t page;
};

static int
frame_cmp(const void *a, const void *b)
{
	const struct frame *x = a, *y = b;

	return x->iova < y->iova ? -1 : x->iova > y->iova;
}

/*
 * IOVA-contiguous memory as EAL's legacy mode makes it: pool pages of a
 * hugetlbfs file, their frames read, the pages of a run of consecutive
 * frames mapped in frame order; the others go back at once.
 */
static int
reserve_contig(struct hpm_region *r, size_t len, size_t align, int socket, size_t pool)
{
	size_t need = len / page_size, i, run = 0, best = SIZE_MAX;
	struct frame *frames = NULL;
	uint8_t *tmp = MAP_FAILED, *va = NULL;
	int rc = -ENOMEM, fd;

	fd = memfd_create("hpm_contig",
		MFD_CLOEXEC | MFD_HUGETLB | (rte_log2_u64(page_size) << MFD_HUGE_SHIFT));
	if (fd < 0 || ftruncate(fd, pool * page_size) != 0)
		goto out;
	tmp = mmap(NULL, pool * page_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (tmp == MAP_FAILED || hpm_source_bind(tmp, pool * page_size, socket, true) != 0 ||
		madvise(tmp, pool * page_size, MADV_POPULATE_WRITE) != 0)
		goto out;
	frames = calloc(pool, sizeof(*frames));
	if (frames == NULL)
		goto out;
	for (i = 0; i < pool; i++) {
		frames[i].iova = hpm_source_pagemap_iova(tmp + i * page_size);
		frames[i].page = i;
		/* no frame numbers (no CAP_SYS_ADMIN): no run can be told from a pool */
		if (frames[i].iova == RTE_BAD_IOVA) {
			rc = -ENOTSUP;
			goto out;
		}
	}
	qsort(frames, pool, sizeof(*frames), frame_cmp);
	for (i = 0; i < pool && best == SIZE_MAX; i++) {
		run = i > 0 && frames[i].iova == frames[i - 1].iova + page_size ? run + 1 : 1;
		if (run == need)
			best = i + 1 - need;
	}
	if (best == SIZE_MAX)
		goto out;
	va = reserve_va(len, align);
	if (va == NULL)
		goto out;
	for (i = 0; i < need; i++)
		if (mmap(va + i * page_size, page_size, PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_FIXED, fd,
			    (off_t)(frames[best + i].page * page_size)) == MAP_FAILED) {
			munmap(va, len);
			goto out;
		}
	munmap(tmp, pool * page_size);
	tmp = MAP_FAILED;
	/* the file lives on while va maps it: the pages outside the run go now */
	for (i = 0; i < pool; i++)
		if ((i < best || i >= best + need) &&
			fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				(off_t)(frames[i].page * page_size), (off_t)page_size) != 0)
			HPM_LOG(WARNING,
				"hugetlbfs: cannot give back a page of a contiguous pool: %s",
				strerror(errno));
	fill_region(r, va, len, socket);
	rc = 0;
out:
	if (tmp != MAP_FAILED)
		munmap(tmp, pool * page_size);
	/* failed: no mapping holds the file, and its pages go with it */
	if (fd >= 0)
		close(fd);
	free(frames);
	return rc;
}

static int
reserve_plain(struct hpm_region *r, size_t len, size_t align, int socket)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB |
		(rte_log2_u64(page_size) << MAP_HUGE_SHIFT);
	uint8_t *range = NULL, *aligned;
	int rc;

	/*
	 * A larger alignment: the address range first, with no hugepage behind
	 * it, then the pages at its aligned start (a hugetlb mapping of len +
	 * align would reserve align's pages too, and fail where len's are free).
	 */
	if (align > page_size && (range = reserve_va(len, align)) == NULL)
		return -ENOMEM;
	aligned = mmap(range, len, PROT_READ | PROT_WRITE, flags | (range ? MAP_FIXED : 0), -1, 0);
	if (aligned == MAP_FAILED) {
		if (range != NULL)
			munmap(range, len);
		return -ENOMEM;
	}
	rc = hpm_source_bind(aligned, len, socket, true);
	if (rc == 0 && madvise(aligned, len, MADV_POPULATE_WRITE) != 0)
		rc = -ENOMEM;
	if (rc != 0) {
		munmap(aligned, len);
		return rc;
	}
	fill_region(r, aligned, len, socket);
	return 0;
}

static int
hugetlbfs_reserve(struct hpm_region *r, size_t len, size_t align, int socket, unsigned int flags)
{
	bool contig = flags & HPM_RESERVE_CONTIG;
	size_t pool, free_pages;
	int rc;

	len = RTE_ALIGN_CEIL(len, page_size);
	align = RTE_MAX(align, page_size);
	if (!contig || len == page_size)
		return reserve_plain(r, len, align, socket);
	/* the kernel hands out hugepages in no particular frame order, though
	 * its pool is mostly in runs: draw 2x, then 8x the pages needed, then
	 * the whole free pool (as EAL's legacy mode does), and keep a run */
	free_pages = hpm_source_hugepages_free(page_size);
	for (pool = 2 * (len / page_size);; pool *= 4) {
		pool = RTE_MIN(pool, free_pages);
		if (pool < len / page_size)
			return -ENOMEM;
		rc = reserve_contig(r, len, align, socket, pool);
		if (rc == 0 || rc == -ENOTSUP)
			return rc;
		if (pool == free_pages)
			return -ENOMEM;
	}
}

static rte_iova_t
hugetlbfs_iova(const struct hpm_region *r, const void *va)
{
	RTE_SET_USED(r);
	return hpm_source_pagemap_iova(va);
}

const struct hpm_source_ops hpm_source_hugetlbfs = {
	.name = "hugetlbfs",
	.kind = HPM_SOURCE_HUGETLBFS,
	.hugepages = true,
	.has_iova = true,
	.reserve = hugetlbfs_reserve,
	.reserve_meta = hpm_source_mmap_meta,
	.release = hpm_source_munmap,
	.iova = hugetlbfs_iova,
	.sockets = hpm_source_numa_sockets,
};
