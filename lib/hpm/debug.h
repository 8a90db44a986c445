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

/** Debug mode is on in this process (a copy of the heap's configuration). */
extern bool hpm_debug_on;

/** Allocation in debug mode, the arguments already checked by nothing. */
void *hpm_debug_alloc(const char *type, size_t size, unsigned int align, int socket,
	unsigned int flags);

/** Free in debug mode; false if p is not a debug block (the caller reports it). */
bool hpm_debug_free(void *p);

/** Realloc in debug mode. */
void *hpm_debug_realloc(void *p, size_t size, unsigned int align, int socket);

/** Usable size of a debug block (the size asked for), 0 if none. */
size_t hpm_debug_usable(const void *p);

/** Canaries of every live block: the number broken (logged). */
unsigned int hpm_debug_check_all(void);

/** Set up (state created), join (state attached) and forget (state gone). */
struct hpm_state;
struct hpm_source_ops;
int hpm_debug_init(struct hpm_state *st, const struct hpm_source_ops *src);
void hpm_debug_attach(void);
void hpm_debug_fini(void);

/* the locked path, without debug mode: what debug blocks are made of */
void *hpm_raw_alloc(size_t size, unsigned int align, int socket, unsigned int flags);
void hpm_raw_free(void *p);

#define HPM_ALLOC_F_ZERO 1u
#define HPM_ALLOC_F_CONTIG 2u

#endif /* HPM_DEBUG_MODE_H */
