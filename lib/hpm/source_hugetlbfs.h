/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef HPM_SOURCE_HUGETLBFS_H
#define HPM_SOURCE_HUGETLBFS_H

/* The hugetlbfs source (source_hugetlbfs.c). */

#include <stdbool.h>
#include <stddef.h>

#include "source_util.h"

/** The hugetlbfs source's functions. */
extern const struct hpm_source_ops hpm_source_hugetlbfs;

/** Set for hugetlbfs sources: the hugepage size to map. */
void hpm_source_hugetlbfs_set_page_size(size_t size);

#endif /* HPM_SOURCE_HUGETLBFS_H */
