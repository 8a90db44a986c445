/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The hugetlbfs source: mmap(MAP_HUGETLB) without EAL, bound to the socket's
 * node and populated at once, so that a short pool is an error here and not a
 * SIGBUS later, and so that every page has its IOVA.
 */

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "log.h"
#include "source.h"

#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
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

static int
hugetlbfs_reserve(struct hpm_region *r, size_t len, size_t align, int socket, bool contig)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB |
		(rte_log2_u64(page_size) << MAP_HUGE_SHIFT);
	size_t map_len;
	uint8_t *va, *aligned;
	size_t head, i;
	int rc;

	len = RTE_ALIGN_CEIL(len, page_size);
	align = RTE_MAX(align, page_size);
	map_len = len + align - page_size;
	va = mmap(NULL, map_len, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (va == MAP_FAILED)
		return -ENOMEM;
	aligned = RTE_PTR_ALIGN_CEIL(va, align);
	head = aligned - va;
	if (head)
		munmap(va, head);
	if (map_len - head - len)
		munmap(aligned + len, map_len - head - len);
	rc = hpm_source_bind(aligned, len, socket, true);
	if (rc == 0 && madvise(aligned, len, MADV_POPULATE_WRITE) != 0)
		rc = -ENOMEM;
	if (rc != 0) {
		munmap(aligned, len);
		return rc;
	}
	memset(r, 0, sizeof(*r));
	r->va = aligned;
	r->len = len;
	r->socket = socket < 0 ? 0 : socket;
	r->zeroed = 1;
	r->unit_iova_contig = 1;
	r->page_size_log2 = rte_log2_u64(page_size);
	if (contig) {
		/* IOVA contiguity across pages is luck here: check it */
		rte_iova_t first = hpm_source_pagemap_iova(aligned);

		for (i = page_size; i < len; i += page_size)
			if (first == RTE_BAD_IOVA ||
					hpm_source_pagemap_iova(aligned + i) != first + i) {
				munmap(aligned, len);
				return -ENOMEM;
			}
	}
	return 0;
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
