/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef HPM_STATE_H
#define HPM_STATE_H

/*
 * The heap's whole state. It lives in the first metadata region of the
 * source (for eal, a memzone that secondary processes find by name), and
 * holds addresses only of memory that every process maps at the same place.
 * The pointers to it and to the source's functions are per process.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_branch_prediction.h>
#include <rte_memory.h>

#include "hpm_malloc.h"
#include "arena.h"
#include "lcore_cache.h"
#include "meta.h"
#include "pagemap.h"
#include "poison.h"
#include "source.h"

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
	hpm_lock_t cache_lock;
	uint32_t ncaches;
	/** By slot: lcores, then threads without an lcore id (lcore_cache.h). */
	struct hpm_lcore_cache *caches[HPM_CACHE_SLOTS];
	struct hpm_meta meta;
	struct hpm_arena arenas[RTE_MAX_NUMA_NODES];
	struct hpm_pagemap pagemap;
};

/** This process's view of the state; NULL before initialisation. */
extern struct hpm_state *hpm_state;
/** Socket of a CPU in the heap's topology (fake or real); -1 if unknown. */
int hpm_state_socket_of_cpu(int cpu);

/**
 * Attach to the heap another process of the application made, unless this
 * process has one already; never makes one. 0 when there is a heap now,
 * -ENOENT when there is none. For every call that works on blocks or
 * statistics that may be another process's: a process's first call may be
 * a free of what another process allocated.
 */
int hpm_state_find(void);

/** Initialise with the defaults unless done: 0, or -errno with rte_errno set. */
int hpm_state_ensure(void);

static inline int
hpm_state_ready(void)
{
	if (likely(hpm_state != NULL))
		return 0;
	return hpm_state_ensure();
}

#ifdef HPM_CHECKER
/** At an API entry: stop poisoning, and open the heap, once another process shares it. */
void hpm_poison_sync(void);
#define HPM_POISON_SYNC() hpm_poison_sync()
#else
#define HPM_POISON_SYNC() ((void)0)
#endif

/*
 * Debug mode wraps the API from above (debug.c): it installs its operations
 * at load (hpm_debug_register(), an RTE_INIT constructor), the state turns
 * them on at creation or attach when the heap is in debug mode, and the API
 * calls them while hpm_debug is set. Process-local pointers: never in shared
 * memory.
 */
struct hpm_debug_ops {
	void *(*alloc)(const char *type, size_t size, unsigned int align, int socket,
		unsigned int flags);
	/** false if p is not a debug block (the caller reports it). */
	bool (*free)(void *p);
	void *(*realloc)(void *p, size_t size, unsigned int align, int socket);
	/** Usable size of a debug block (the size asked for), 0 if none. */
	size_t (*usable)(const void *p);
	/** Set up in a new state: 0 or -errno. */
	int (*init)(struct hpm_state *st, const struct hpm_source_ops *src);
	/** Join an attached state's records: true if the heap is in debug mode. */
	bool (*attach)(void);
	/** Forget the state (gone or left). */
	void (*fini)(void);
};

/** Debug mode's operations while it is on in this process, else NULL. */
extern const struct hpm_debug_ops *hpm_debug;

/** Install debug mode's operations (debug.c, at load). */
void hpm_debug_register(const struct hpm_debug_ops *ops);

/* The locked path, without debug mode: what debug blocks are made of (malloc.c). */
void *hpm_raw_alloc(size_t size, unsigned int align, int socket, unsigned int flags);
void hpm_raw_free(void *p);

#define HPM_ALLOC_F_ZERO 1u
#define HPM_ALLOC_F_CONTIG 2u

#endif /* HPM_STATE_H */
