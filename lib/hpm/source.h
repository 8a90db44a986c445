/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef HPM_SOURCE_H
#define HPM_SOURCE_H

/*
 * The choice of a source, above the three sources, and the reservations
 * behind the fault injection hook. What a source is: source_util.h.
 */

#include <stdbool.h>
#include <stddef.h>

#include "hpm_malloc.h"
#include "source_anon.h"
#include "source_eal.h"
#include "source_hugetlbfs.h"
#include "source_util.h"

/** This process's functions of the heap's source (set at hpm_init() or attach). */
extern const struct hpm_source_ops *hpm_src;

/**
 * Source for a kind; HPM_SOURCE_AUTO picks eal when EAL is up, else
 * hugetlbfs when hugepages of the size asked for are free, else anon.
 * Returns NULL when the kind cannot be used here.
 */
const struct hpm_source_ops *hpm_source_pick(enum hpm_source_kind kind, size_t hugepage_size);

/**
 * Fault injection for tests: the source's reservations (chunks and
 * metadata) fail with -ENOMEM once this many more have succeeded; negative:
 * never (the default).
 */
extern long hpm_source_fail_after;

/** src->reserve() behind the fault injection hook. */
int hpm_source_reserve(const struct hpm_source_ops *src, struct hpm_region *r, size_t len,
	size_t align, int socket, unsigned int flags);

/** src->reserve_meta() behind the fault injection hook. */
int hpm_source_reserve_meta(const struct hpm_source_ops *src, struct hpm_region *r, size_t len,
	const char *name);

#endif /* HPM_SOURCE_H */
