/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The anon source: ordinary anonymous memory, like EAL's --no-huge. Placement
 * is a preference, the kernel may back it with transparent hugepages, and it
 * has no IOVA (its pages can move).
 */

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "source_anon.h"

static int
anon_reserve(struct hpm_region *r, size_t len, size_t align, int socket, unsigned int flags)
{
	bool contig = flags & HPM_RESERVE_CONTIG;
	size_t map_len = len + align;
	uint8_t *va, *aligned;
	size_t head;

	if (contig)
		return -ENOTSUP;
	/* no MAP_NORESERVE: the kernel refuses what it could never back */
	va = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (va == MAP_FAILED)
		return -ENOMEM;
	aligned = RTE_PTR_ALIGN_CEIL(va, align);
	head = aligned - va;
	if (head)
		munmap(va, head);
	munmap(aligned + len, map_len - head - len);
	madvise(aligned, len, MADV_HUGEPAGE);
	hpm_source_bind(aligned, len, socket, false);
	memset(r, 0, sizeof(*r));
	r->va = aligned;
	r->len = len;
	r->socket = socket < 0 ? 0 : socket;
	r->zeroed = 1;
	r->page_size_log2 = 12;
	return 0;
}

static rte_iova_t
anon_iova(const struct hpm_region *r, const void *va)
{
	RTE_SET_USED(r);
	RTE_SET_USED(va);
	return RTE_BAD_IOVA;
}

const struct hpm_source_ops hpm_source_anon = {
	.name = "anon",
	.kind = HPM_SOURCE_ANON,
	.hugepages = false,
	.has_iova = false,
	.reserve = anon_reserve,
	.reserve_meta = hpm_source_mmap_meta,
	.release = hpm_source_munmap,
	.iova = anon_iova,
	.sockets = hpm_source_numa_sockets,
};
