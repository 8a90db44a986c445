/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef HPM_LOCK_H
#define HPM_LOCK_H

/*
 * The heap's locks: a word that holds the pid of the process holding it, taken
 * with a compare-exchange and released with a store-release (DPDK 22.11's x86
 * rte_spinlock_unlock() is an xchg, a second locked instruction per
 * round-trip: a locked 64-byte alloc+free pair costs 53 ns with it, 43
 * without, on the project's VM). ThreadSanitizer understands these compiler
 * atomics, where it cannot see into DPDK's inline assembly.
 *
 * The owner's pid is what makes a lock robust across processes: a waiter
 * that has spun for a while asks whether the owner still lives, and when it
 * died holding the lock (killed in the middle of an operation), the lock is
 * marked torn for good, and every taker, now and later, is told so
 * (hpm_lock() returns false) instead of spinning for ever as rte_malloc's
 * heap lock would. What the lock protects may be half-changed: nothing
 * behind a torn lock is used again.
 */

#include <stdbool.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>

typedef struct {
	/** pid of the holder; 0 when free; HPM_LOCK_TORN once its holder died holding it. */
	int owner;
} hpm_lock_t;

#define HPM_LOCK_TORN (-1)
#define HPM_LOCK_INITIALIZER \
	{                    \
		0            \
	}

/** This process's pid, as locks record it (kept right across fork()). */
extern int hpm_lock_self;

/** Spin until the lock is free or its holder is found dead; false when torn. */
bool hpm_lock_wait(hpm_lock_t *l);

/** Whether a process lives (a zombie counts as dead). */
bool hpm_pid_alive(int pid);

/**
 * The state of /proc/<pid>/stat ('R', 'S', 'Z', ...: its thread group
 * leader's), 0 if unreadable.
 */
char hpm_proc_state(int pid);

static inline void
hpm_lock_init(hpm_lock_t *l)
{
	__atomic_store_n(&l->owner, 0, __ATOMIC_RELAXED);
}

/** Take the lock: true, or false when it is torn (then it is not held). */
static inline __rte_warn_unused_result bool
hpm_lock(hpm_lock_t *l)
{
	int expected = 0;

	if (likely(__atomic_compare_exchange_n(&l->owner, &expected, hpm_lock_self, false,
		    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)))
		return true;
	return hpm_lock_wait(l);
}

/** Take the lock if it is free now: true, or false (held, or torn) without waiting. */
static inline __rte_warn_unused_result bool
hpm_trylock(hpm_lock_t *l)
{
	int expected = 0;

	return __atomic_compare_exchange_n(&l->owner, &expected, hpm_lock_self, false,
		__ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

static inline void
hpm_unlock(hpm_lock_t *l)
{
	__atomic_store_n(&l->owner, 0, __ATOMIC_RELEASE);
}

/** Whether a process died holding the lock. */
static inline bool
hpm_lock_torn(const hpm_lock_t *l)
{
	return __atomic_load_n(&l->owner, __ATOMIC_RELAXED) == HPM_LOCK_TORN;
}

#endif /* HPM_LOCK_H */
