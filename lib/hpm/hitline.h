/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef HPM_HITLINE_H
#define HPM_HITLINE_H

/*
 * The globals every hit path reads, in one cache line: the caches'
 * generation (lcore_cache.c), the owner table's slots and mask (owner.c),
 * the thread binding's TLS offset (below) and the first classes of the
 * small-size table (lcore_cache.c). Apart, in three modules' data, behind
 * the owner table's own header page and in the GOT, they cost a 64-byte
 * alloc+free pair 5 lines, here 1: a pair touches 11, a mempool get+put 9
 * (cachegrind, bench_hit_path cold-pair64). On a loaded machine each line
 * is a likely miss. The modules that own the values write them here, at
 * set-up and teardown; the hit paths only read.
 *
 * It sits in the bottom layer so that every layer may read it: it holds
 * values and the binding, and calls nothing.
 */

#include <stdint.h>

#include <rte_common.h>

#include "hpm_inline.h"

struct hpm_unit;

/** Entries of the small-size class table: sizes up to 4144 bytes, per (size + 15) / 16. */
#define HPM_HIT_SMALL_CLASSES (4144 / 16 + 1)

struct hpm_hitline {
	/** The caches' generation: bindings of another are void (lcore_cache.h). */
	uint64_t cache_gen;
	/** The owner table's slots (owner.h); a static one of a single empty slot at first. */
	struct hpm_unit **owner;
	/** The owner table's slots - 1; 0 for the static one. Written after owner. */
	uintptr_t owner_mask;
	/** hpm_cache_tls's offset from the thread pointer (hpm_hit_binding()). */
	uintptr_t tls_off;
	/** Class per (size + 15) / 16 at alignments up to 64 (lcore_cache.h); 32 share the line. */
	uint8_t small_class[HPM_HIT_SMALL_CLASSES];
} __rte_cache_aligned;

extern struct hpm_hitline hpm_hit __attribute__((visibility("hidden"))); /* no GOT */

/*
 * This thread's binding (hpm_inline.h's hpm_cache_tls) as the hit paths read
 * it. An initial-exec TLS variable of a shared library is at an offset from
 * the thread pointer that the GOT holds: one more line a pair touches. On
 * x86-64 the offset is kept in the line above instead, and the binding read
 * through %fs. Sanitizer builds, which cannot instrument %fs-relative
 * accesses, and other architectures go through the GOT.
 */
#if defined(__x86_64__) && defined(__SEG_FS)
/* hitline.c sets tls_off in every build (heap.c is built without ASan in an ASan build) */
#define HPM_HIT_TLS_OFF 1
#endif
#if defined(HPM_HIT_TLS_OFF) && !defined(HPM_INLINE_SANITIZED)
typedef const struct hpm_cache_binding __seg_fs hpm_binding_ref;
/* the binding's free_hint, which the hit paths write */
typedef struct hpm_cache_binding __seg_fs hpm_binding_mut;

static __rte_always_inline hpm_binding_ref *
hpm_hit_binding(void)
{
	return (hpm_binding_ref *)hpm_hit.tls_off;
}
#else
typedef const struct hpm_cache_binding hpm_binding_ref;
typedef struct hpm_cache_binding hpm_binding_mut;

static __rte_always_inline hpm_binding_ref *
hpm_hit_binding(void)
{
	return &hpm_cache_tls;
}
#endif

#endif /* HPM_HITLINE_H */
