/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef HPM_OWNER_H
#define HPM_OWNER_H

/*
 * The owner table: this process's flat view of the page map, one pointer per
 * 2 MiB unit of the 47-bit address space, so that a free finds its unit with
 * one load that depends on the pointer (the page map takes two, after a load
 * of the state). It is process-local address space reserved without backing
 * (512 MiB of it; a 4 KiB page is touched per GiB of heap), filled when this
 * process maps a chunk and, for the chunks of other processes, at the first
 * miss, from the shared page map (hpm_owner_learn()).
 *
 * An entry may be stale: another process may have released the chunk. The
 * descriptor it points to stays a unit descriptor (chunk descriptors are
 * type-stable, chunk.c): a released chunk's units reject every pointer, and
 * a later chunk's units cover their own addresses only. So a user checks
 * that the unit covers the pointer and asks the page map when it does not.
 * The table reads as empty when it could not be reserved: every call then
 * takes the page map's path.
 *
 * A lookup masks the index instead of comparing it with a bound: a pointer
 * beyond the 47 bits reads some entry, whose unit does not cover it (the
 * user's check sends it to the page map, which knows no such address). Until
 * the table is reserved, or when it cannot be, the map is a static one of a
 * single empty entry, mask 0. Entry 0 is always empty (no unit starts at
 * address 0): hpm_free(NULL) misses there.
 */

#include <stddef.h>
#include <stdint.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>

#include "hitline.h"
#include "pagemap.h"
#include "unit.h"

#define HPM_OWNER_VA_BITS 47

struct hpm_owner_map {
	/** Slots - 1 (a power of two less one); 0 for hpm_inline.h's static map of one slot. */
	uintptr_t mask;
	struct hpm_unit *slot[];
};

/**
 * The unit this process last knew at p: NULL, or a unit to check against p.
 * The slots and their mask are in the hit paths' line (hitline.h); the mask
 * is read first, and written last, so that a mask never bounds a smaller map.
 */
static __rte_always_inline struct hpm_unit *
hpm_owner_lookup(const void *p)
{
	uintptr_t mask = __atomic_load_n(&hpm_hit.owner_mask, __ATOMIC_ACQUIRE);
	struct hpm_unit **slot = __atomic_load_n(&hpm_hit.owner, __ATOMIC_RELAXED);

	return __atomic_load_n(&slot[((uintptr_t)p >> HPM_UNIT_SHIFT) & mask], __ATOMIC_ACQUIRE);
}

/** Whether unit u covers p (a stale entry does not). */
static __rte_always_inline int
hpm_owner_covers(const struct hpm_unit *u, const void *p)
{
	return (uintptr_t)((const uint8_t *)p - u->va) < HPM_UNIT_SIZE;
}

/** Reserve the table (once per process); 0, or -ENOMEM (the table reads empty). */
int hpm_owner_init(void);

/** Record n units from va (units[0..n)), or forget them with units NULL. */
void hpm_owner_set(const void *va, size_t n, struct hpm_unit *units);

/** The unit of p from the page map, recorded in the table (NULL when none). */
struct hpm_unit *hpm_owner_learn(const struct hpm_pagemap *pm, const void *p);

/** Forget every entry: this process leaves the heap. */
void hpm_owner_clear(void);

#endif /* HPM_OWNER_H */
