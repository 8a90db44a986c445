/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef HPM_INIT_H
#define HPM_INIT_H

/*
 * Initialisation, attach and teardown of the heap's state (state.h): the
 * API's entry points, above the caches, which they set up per process.
 */

#include <stdbool.h>
#include <stddef.h>

#include <rte_branch_prediction.h>

#include "lcore_cache.h"
#include "poison.h"
#include "state.h"

/**
 * Attach to the heap another process of the application made, unless this
 * process has one already; never makes one. 0 when there is a heap now,
 * -ENOENT when there is none. For every call that works on blocks or
 * statistics that may be another process's: a process's first call may be
 * a free of what another process allocated.
 */
int hpm_state_find(void);

/**
 * hpm_state_find(), and the heap held until hpm_state_unpin(): hpm_fini()
 * waits. For EAL's telemetry thread, which reads the heap at any moment.
 * Nothing between may call hpm_init() or hpm_fini(). 0, or -ENOENT (not
 * held).
 */
int hpm_state_pin(void);

/** Let go of the heap hpm_state_pin() held. */
void hpm_state_unpin(void);

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
/** hpm_debug != NULL, as a flag: what the API's paths test (one compare). */
extern bool hpm_debug_on;

/** Install debug mode's operations (debug.c, at load). */
void hpm_debug_register(const struct hpm_debug_ops *ops);

/* The locked path, without debug mode: what debug blocks are made of (malloc.c). */
void *hpm_raw_alloc(size_t size, unsigned int align, int socket, unsigned int flags);
void hpm_raw_free(void *p);

#define HPM_ALLOC_F_ZERO 1u
#define HPM_ALLOC_F_CONTIG 2u

#endif /* HPM_INIT_H */
