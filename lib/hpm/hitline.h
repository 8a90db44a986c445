/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef HPM_HITLINE_H
#define HPM_HITLINE_H

/*
 * The globals every hit path reads, in one cache line: the caches'
 * generation (lcore_cache.c), the owner table's slots and mask (owner.c) and
 * the first classes of the small-size table (lcore_cache.c). Apart, in three
 * modules' data and behind the owner table's own header page, they cost a
 * 64-byte alloc+free pair 4 lines of its 16 (cachegrind, bench_hit_path
 * cold-pair64); a mempool get+put touches 9. On a loaded machine each line
 * is a likely miss. The modules that own the values write them here, at
 * set-up and teardown; the hit paths only read.
 *
 * It sits in the bottom layer so that every layer may read it: it holds
 * values, not code, and calls nothing.
 */

#include <stdint.h>

#include <rte_common.h>

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
	/** Class per (size + 15) / 16 at alignments up to 64 (lcore_cache.h); 40 share the line. */
	uint8_t small_class[HPM_HIT_SMALL_CLASSES];
} __rte_cache_aligned;

extern struct hpm_hitline hpm_hit __attribute__((visibility("hidden"))); /* no GOT */

#endif /* HPM_HITLINE_H */
