/* SPDX-License-Identifier: BSD-3-Clause */

/* What the sources share: hugepage counts, NUMA binding and IOVA lookups, anonymous metadata. */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <numa.h>
#include <numaif.h>
#include <string.h>
#include <sys/mman.h>

#include "log.h"
#include "poison.h"
#include "source_util.h"

long
hpm_source_hugepages_free(size_t page_size)
{
	char path[128];
	long n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/mm/hugepages/hugepages-%zukB/free_hugepages",
		page_size >> 10);
	f = fopen(path, "r");
	if (f == NULL)
		return 0;
	if (fscanf(f, "%ld", &n) != 1)
		n = 0;
	fclose(f);
	return n;
}

unsigned int
hpm_source_numa_sockets(int *ids, unsigned int max)
{
	unsigned int n = 0;
	int node;

	if (numa_available() < 0) {
		ids[0] = 0;
		return 1;
	}
	for (node = 0; node <= numa_max_node() && n < max; node++)
		if (numa_bitmask_isbitset(numa_all_nodes_ptr, node))
			ids[n++] = node;
	if (n == 0)
		ids[n++] = 0;
	return n;
}

HPM_NO_SANITIZE_ADDRESS rte_iova_t
hpm_source_pagemap_iova(const void *va)
{
	const long page = sysconf(_SC_PAGESIZE);
	uint64_t entry;
	ssize_t got;
	int fd;

	/* the page must be present for its frame to be known */
	*(volatile const char *)va;
	fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return RTE_BAD_IOVA;
	got = pread(fd, &entry, sizeof(entry), (off_t)((uintptr_t)va / page) * sizeof(entry));
	close(fd);
	/* bit 63: present; bits 0-54: frame number, 0 without CAP_SYS_ADMIN */
	if (got != sizeof(entry) || !(entry >> 63) || (entry & ((UINT64_C(1) << 55) - 1)) == 0)
		return RTE_BAD_IOVA;
	return (entry & ((UINT64_C(1) << 55) - 1)) * page + ((uintptr_t)va % page);
}

int
hpm_source_bind(void *va, size_t len, int socket, bool strict)
{
	unsigned long mask[16] = {0};

	if (socket < 0 || numa_available() < 0)
		return 0;
	if ((unsigned int)socket >= sizeof(mask) * 8)
		return -EINVAL;
	mask[socket / (8 * sizeof(long))] |= 1UL << (socket % (8 * sizeof(long)));
	if (mbind(va, len, strict ? MPOL_BIND : MPOL_PREFERRED, mask, sizeof(mask) * 8, 0) != 0)
		return -errno;
	return 0;
}

int
hpm_source_mmap_meta(struct hpm_region *r, size_t len, const char *name)
{
	RTE_SET_USED(name);
	void *va = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (va == MAP_FAILED)
		return -ENOMEM;
	memset(r, 0, sizeof(*r));
	r->va = va;
	r->len = len;
	r->zeroed = 1;
	r->is_meta = 1;
	r->page_size_log2 = 12;
	return 0;
}

void
hpm_source_munmap(struct hpm_region *r)
{
	if (munmap(r->va, r->len) != 0)
		HPM_LOG(ERR, "munmap(%p, %zu): %s", r->va, r->len, strerror(errno));
}

struct hpm_extent
hpm_source_extent(const struct hpm_source_ops *src, const struct hpm_region *r)
{
	uintptr_t page = (uintptr_t)1 << r->page_size_log2;
	uintptr_t va = (uintptr_t)r->va;

	return (struct hpm_extent){
		.start = RTE_ALIGN_FLOOR(va - RTE_MIN(src->lead, va), page),
		.end = RTE_ALIGN_CEIL(va + r->len, page),
		.len = r->len,
		.socket = r->socket,
	};
}

static int
extent_cmp(const void *a, const void *b)
{
	const struct hpm_extent *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

size_t
hpm_extents_bytes(struct hpm_extent *e, unsigned int n)
{
	uintptr_t end = 0;
	size_t bytes = 0;
	unsigned int i;

	qsort(e, n, sizeof(*e), extent_cmp);
	for (i = 0; i < n; i++) {
		uintptr_t start = RTE_MAX(e[i].start, end);

		if (e[i].end > start) {
			bytes += e[i].end - start;
			end = e[i].end;
		}
	}
	return bytes;
}
