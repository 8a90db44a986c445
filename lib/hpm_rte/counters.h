/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef HPM_RTE_COUNTERS_H
#define HPM_RTE_COUNTERS_H

/*
 * The shim's counters: one cache line of counters per thread, written only
 * by its thread (no atomic operation on the fast path), summed when read.
 * The same thread-local block says whether the thread is inside a call the
 * shim passed on, to EAL or to hpmalloc: the rte_malloc calls EAL makes then
 * (EAL calling itself, or EAL's memzone code under hpmalloc's EAL source)
 * go straight to EAL.
 */

#include <stdint.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>

enum hpm_rte_op {
	HPM_RTE_OP_ALLOC,
	HPM_RTE_OP_FREE,
	HPM_RTE_OP_REALLOC,
	HPM_RTE_OP_OTHER,
	HPM_RTE_NOPS,
};

/* In the order of struct hpm_rte_stats. */
enum hpm_rte_counter {
	HPM_RTE_C_HPM = 0,                            /* + op */
	HPM_RTE_C_EAL = HPM_RTE_C_HPM + HPM_RTE_NOPS, /* + op */
	HPM_RTE_C_EARLY = HPM_RTE_C_EAL + HPM_RTE_NOPS,
	HPM_RTE_C_OFF,
	HPM_RTE_C_EXTERNAL,
	HPM_RTE_C_FOREIGN,
	HPM_RTE_C_MOVED,
	HPM_RTE_NCOUNTERS,
};

struct hpm_rte_slot {
	uint64_t c[HPM_RTE_NCOUNTERS];
} __rte_cache_aligned;

struct hpm_rte_tls {
	/** Depth of calls the shim passed on (to EAL or hpmalloc) on this thread. */
	uint32_t nested;
	/** This thread's counters; NULL until its first counted call. */
	struct hpm_rte_slot *slot;
};

extern __thread struct hpm_rte_tls hpm_rte_tls __attribute__((tls_model("initial-exec")));

/** Give the thread its counters (a slot of its own, or the shared one). */
struct hpm_rte_slot *hpm_rte_slot_bind(struct hpm_rte_tls *t);

/** Add to a counter of the shared slot (threads beyond the slots). */
void hpm_rte_count_shared(unsigned int c);

static __rte_always_inline void
hpm_rte_count(struct hpm_rte_tls *t, unsigned int c)
{
	struct hpm_rte_slot *s = t->slot;

	if (unlikely(s == NULL))
		s = hpm_rte_slot_bind(t);
	if (unlikely(s == NULL))
		hpm_rte_count_shared(c);
	else
		__atomic_store_n(&s->c[c], s->c[c] + 1, __ATOMIC_RELAXED);
}

/** A call served by hpmalloc. */
static __rte_always_inline void
hpm_rte_count_hpm(struct hpm_rte_tls *t, enum hpm_rte_op op)
{
	hpm_rte_count(t, HPM_RTE_C_HPM + op);
}

/** A call sent to EAL, and why. */
static __rte_always_inline void
hpm_rte_count_eal(struct hpm_rte_tls *t, enum hpm_rte_op op, enum hpm_rte_counter why)
{
	hpm_rte_count(t, HPM_RTE_C_EAL + op);
	hpm_rte_count(t, why);
}

#endif /* HPM_RTE_COUNTERS_H */
