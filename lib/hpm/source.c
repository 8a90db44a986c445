/* SPDX-License-Identifier: BSD-3-Clause */

/* Choosing a source, and the reservations behind the fault injection hook. */

#include <errno.h>

#include "source.h"

const struct hpm_source_ops *hpm_src;

long hpm_source_fail_after = -1;

static bool
injected_failure(void)
{
	long left = __atomic_load_n(&hpm_source_fail_after, __ATOMIC_RELAXED);

	if (left < 0)
		return false;
	if (left == 0)
		return true;
	__atomic_sub_fetch(&hpm_source_fail_after, 1, __ATOMIC_RELAXED);
	return false;
}

int
hpm_source_reserve(const struct hpm_source_ops *src, struct hpm_region *r, size_t len, size_t align,
	int socket, unsigned int flags)
{
	if (injected_failure())
		return -ENOMEM;
	return src->reserve(r, len, align, socket, flags);
}

int
hpm_source_reserve_meta(const struct hpm_source_ops *src, struct hpm_region *r, size_t len,
	const char *name)
{
	if (injected_failure())
		return -ENOMEM;
	return src->reserve_meta(r, len, name);
}

const struct hpm_source_ops *
hpm_source_pick(enum hpm_source_kind kind, size_t hugepage_size)
{
	switch (kind) {
	case HPM_SOURCE_EAL:
		return hpm_source_eal_ready() ? &hpm_source_eal : NULL;
	case HPM_SOURCE_HUGETLBFS:
		hpm_source_hugetlbfs_set_page_size(hugepage_size);
		return hpm_source_hugepages_free(hugepage_size) > 0 ? &hpm_source_hugetlbfs : NULL;
	case HPM_SOURCE_ANON:
		return &hpm_source_anon;
	case HPM_SOURCE_AUTO:
		if (hpm_source_eal_ready())
			return &hpm_source_eal;
		if (hpm_source_hugepages_free(hugepage_size) > 0) {
			hpm_source_hugetlbfs_set_page_size(hugepage_size);
			return &hpm_source_hugetlbfs;
		}
		return &hpm_source_anon;
	}
	return NULL;
}
