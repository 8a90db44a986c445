/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef HPM_SOURCE_EAL_H
#define HPM_SOURCE_EAL_H

/* The eal source (source_eal.c). */

#include <stdbool.h>
#include <stddef.h>

#include "source_util.h"

/** The eal source's functions. */
extern const struct hpm_source_ops hpm_source_eal;

/** True once rte_eal_init() has completed in this process. */
bool hpm_source_eal_ready(void);

#endif /* HPM_SOURCE_EAL_H */
