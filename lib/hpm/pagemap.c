/* SPDX-License-Identifier: BSD-3-Clause */

#include <errno.h>

#include "pagemap.h"

#define LEAF_SIZE (sizeof(struct hpm_unit *) << HPM_PM_LEAF_BITS)

static struct hpm_unit **
leaf_get(struct hpm_pagemap *pm, struct hpm_meta *meta, const struct hpm_source_ops *src,
	uintptr_t a)
{
	struct hpm_unit ***slot = &pm->root[a >> (HPM_UNIT_SHIFT + HPM_PM_LEAF_BITS)];
	struct hpm_unit **leaf = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	struct hpm_unit **expected = NULL;

	if (leaf != NULL)
		return leaf;
	leaf = hpm_meta_alloc(meta, src, LEAF_SIZE);
	if (leaf == NULL)
		return NULL;
	/* two sockets' heaps may race for the same leaf: one wins */
	if (!__atomic_compare_exchange_n(slot, &expected, leaf, false, __ATOMIC_ACQ_REL,
		    __ATOMIC_ACQUIRE)) {
		hpm_meta_free(meta, src, leaf, LEAF_SIZE);
		leaf = expected;
	}
	return leaf;
}

int
hpm_pagemap_map(struct hpm_pagemap *pm, struct hpm_meta *meta, const struct hpm_source_ops *src,
	const void *va, size_t n, struct hpm_unit *units)
{
	uintptr_t a = (uintptr_t)va;
	size_t i;

	if ((a + (n << HPM_UNIT_SHIFT) - 1) >> HPM_PM_VA_BITS)
		return -ENOMEM;
	for (i = 0; i < n; i++, a += HPM_UNIT_SIZE) {
		struct hpm_unit **leaf = leaf_get(pm, meta, src, a);

		if (leaf == NULL) {
			hpm_pagemap_unmap(pm, va, i);
			return -ENOMEM;
		}
		__atomic_store_n(&leaf[(a >> HPM_UNIT_SHIFT) & ((1u << HPM_PM_LEAF_BITS) - 1)],
			&units[i], __ATOMIC_RELEASE);
	}
	return 0;
}

void
hpm_pagemap_unmap(struct hpm_pagemap *pm, const void *va, size_t n)
{
	uintptr_t a = (uintptr_t)va;
	size_t i;

	for (i = 0; i < n; i++, a += HPM_UNIT_SIZE) {
		struct hpm_unit **leaf = pm->root[a >> (HPM_UNIT_SHIFT + HPM_PM_LEAF_BITS)];

		if (leaf != NULL)
			__atomic_store_n(&leaf[(a >> HPM_UNIT_SHIFT) &
						 ((1u << HPM_PM_LEAF_BITS) - 1)],
				NULL, __ATOMIC_RELEASE);
	}
}
