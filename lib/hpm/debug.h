/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef HPM_DEBUG_MODE_H
#define HPM_DEBUG_MODE_H

/*
 * Debug mode (HPM_CFG_F_DEBUG, HPM_DEBUG=1 in the environment, or meson's
 * -Ddebug_mode=true): every block gets canaries before and after it, is
 * filled with a poison byte when freed, and is recorded with its type and
 * size (hpm_malloc_dump_leaks()); the heap is checked at every operation,
 * which all take the lock (no per-lcore caches). What rte_malloc's
 * RTE_MALLOC_DEBUG does, plus the leak report DPDK lacks.
 */

#include <stdbool.h>
#include <stddef.h>

/** Canaries of every live block: the number broken (logged). */
unsigned int hpm_debug_check_all(void);

#endif /* HPM_DEBUG_MODE_H */
