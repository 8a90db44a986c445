/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef HPM_LOCK_H
#define HPM_LOCK_H

/*
 * The heap's locks: rte_spinlock. Under ThreadSanitizer, DPDK's x86
 * spinlock (an xchg in inline assembly) is invisible to the tool, so the
 * same lock is taken with compiler atomics that it understands.
 */

#include <rte_pause.h>
#include <rte_spinlock.h>

#if defined(__SANITIZE_THREAD__)
#define HPM_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define HPM_TSAN 1
#endif
#endif

typedef rte_spinlock_t hpm_lock_t;

#define HPM_LOCK_INITIALIZER RTE_SPINLOCK_INITIALIZER

static inline void
hpm_lock_init(hpm_lock_t *l)
{
	rte_spinlock_init(l);
}

#ifdef HPM_TSAN
static inline void
hpm_lock(hpm_lock_t *l)
{
	while (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE) != 0)
		while (__atomic_load_n(&l->locked, __ATOMIC_RELAXED) != 0)
			rte_pause();
}

static inline void
hpm_unlock(hpm_lock_t *l)
{
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}
#else
static inline void
hpm_lock(hpm_lock_t *l)
{
	rte_spinlock_lock(l);
}

static inline void
hpm_unlock(hpm_lock_t *l)
{
	rte_spinlock_unlock(l);
}
#endif

#endif /* HPM_LOCK_H */
