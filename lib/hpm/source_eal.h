/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef HPM_SOURCE_EAL_H
#define HPM_SOURCE_EAL_H

/* The eal source (source_eal.c). */

#include <stdbool.h>
#include <stddef.h>

#include "source_util.h"

/** The eal source's functions. */
extern const struct hpm_source_ops hpm_source_eal;

/*
 * Nonzero while this thread is in rte_memzone_reserve*() for hpmalloc, with
 * an arena's lock held: what EAL calls meanwhile (an rte_memzone_reserve()
 * wrapper that would trim the heap) must not take hpmalloc's locks.
 */
extern __thread unsigned int hpm_source_eal_depth;

/** True once rte_eal_init() has completed in this process. */
bool hpm_source_eal_ready(void);

#endif /* HPM_SOURCE_EAL_H */
