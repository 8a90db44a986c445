/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef HPM_PAGEMAP_H
#define HPM_PAGEMAP_H

/*
 * Page map: address -> unit descriptor in O(1), a two-level radix table over
 * 2 MiB units of a 48-bit address space. Lookups take no lock; leaves are
 * installed once and live until hpm_fini().
 */

#include <stddef.h>
#include <stdint.h>

#include <rte_branch_prediction.h>

#include "meta.h"
#include "unit.h"

#define HPM_PM_VA_BITS 48
#define HPM_PM_LEAF_BITS 13
#define HPM_PM_ROOT_BITS (HPM_PM_VA_BITS - HPM_UNIT_SHIFT - HPM_PM_LEAF_BITS)

struct hpm_pagemap {
	struct hpm_unit **root[1u << HPM_PM_ROOT_BITS];
};

static inline struct hpm_unit *
hpm_pagemap_lookup(const struct hpm_pagemap *pm, const void *p)
{
	uintptr_t a = (uintptr_t)p;
	struct hpm_unit **leaf;

	if (unlikely(a >> HPM_PM_VA_BITS))
		return NULL;
	leaf = __atomic_load_n(&pm->root[a >> (HPM_UNIT_SHIFT + HPM_PM_LEAF_BITS)],
		__ATOMIC_ACQUIRE);
	if (unlikely(leaf == NULL))
		return NULL;
	return __atomic_load_n(&leaf[(a >> HPM_UNIT_SHIFT) & ((1u << HPM_PM_LEAF_BITS) - 1)],
		__ATOMIC_ACQUIRE);
}

/** Map n units from va to the descriptors units[0..n). 0 or -ENOMEM. */
int hpm_pagemap_map(struct hpm_pagemap *pm, struct hpm_meta *meta, const struct hpm_source_ops *src,
	const void *va, size_t n, struct hpm_unit *units);

/** Forget n units from va. */
void hpm_pagemap_unmap(struct hpm_pagemap *pm, const void *va, size_t n);

#endif /* HPM_PAGEMAP_H */
