/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef HPM_STATE_H
#define HPM_STATE_H

/*
 * The heap's whole state. It lives in the first metadata region of the
 * source (for eal, a memzone that secondary processes find by name), and
 * holds addresses only of memory that every process maps at the same place.
 * The pointers to it (here) and to the source's functions (source.h) are per
 * process. Setting it up and tearing it down are the API's (init.h).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_branch_prediction.h>
#include <rte_memory.h>

#include "hpm_malloc.h"
#include "arena.h"
#include "meta.h"
#include "pagemap.h"
#include "source.h"

struct hpm_lcore_cache;
struct hpm_cache_xfer;

#define HPM_STATE_MAGIC UINT64_C(0x68706d616c6c6f63) /* "hpmalloc" */
#define HPM_STATE_ZONE "hpm_state"

struct hpm_state {
	uint64_t magic;
	struct hpm_config cfg;
	enum hpm_source_kind source;
	/** Sockets are only a preference (no hugepages), as EAL's --no-huge. */
	bool no_huge;
	/** Every 2 MiB unit of every chunk is IOVA-contiguous. */
	bool unit_iova_contig;
	uint32_t nsockets;
	int socket_ids[RTE_MAX_NUMA_NODES];
	/** NUMA node a socket's memory is bound to (itself, unless the topology is fake). */
	int node_of_socket[RTE_MAX_NUMA_NODES];
	/** Process that created the heap; the others attached to it. */
	int creator_pid;
	/** Another process attached: memory checkers' poison stops (poison.h). */
	uint32_t shared;
	/** Debug mode's records (debug.c). */
	void *debug_table;
	uint64_t bad_frees;
	/**
	 * The caches' (lcore_cache.h): a lock, their number (the lcores' and the
	 * thread slots a thread holds), and by slot lcores, then threads.
	 */
	hpm_lock_t cache_lock;
	uint32_t ncaches;
	struct hpm_lcore_cache *caches[HPM_CACHE_THREAD_SLOT0 + HPM_CACHE_THREAD_SLOTS];
	/** Each socket's transfer store between its caches (lcore_cache.h), made at first use. */
	struct hpm_cache_xfer *xfer[RTE_MAX_NUMA_NODES];
	struct hpm_meta meta;
	struct hpm_pagemap pagemap;
	/** Arenas [0, narenas): the highest socket id + 1, not RTE_MAX_NUMA_NODES. */
	uint32_t narenas;
	/**
	 * Indexed by socket id; an arena is present only for the heap's sockets.
	 * Sized to them: at 70 KiB an arena, 32 arenas held 2.2 MiB of hugepages
	 * on a machine of one socket.
	 */
	struct hpm_arena arenas[];
};

/** Whether socket s has an arena in state st. */
static inline bool
hpm_state_has_socket(const struct hpm_state *st, int s)
{
	return s >= 0 && (unsigned int)s < st->narenas && st->arenas[s].present;
}

/** This process's view of the state; NULL before initialisation. */
extern struct hpm_state *hpm_state;

/**
 * Read the machine's CPU to node map, once per process (before the state is
 * published: hpm_state_socket_of_cpu() only reads it). Thread-safe.
 */
void hpm_state_topology_init(void);

/** Socket of a CPU in the heap's topology (fake or real); -1 if unknown. */
int hpm_state_socket_of_cpu(int cpu);

#endif /* HPM_STATE_H */
