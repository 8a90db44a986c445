/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef HPM_ARENA_H
#define HPM_ARENA_H

/*
 * A socket's arena: its chunks, granule pages, heap and size-class pages
 * behind one lock.
 * It lives in shared metadata and holds no process-local pointer.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_branch_prediction.h>
#include <rte_malloc.h>
#include "hpm_malloc.h"
#include "lock.h"

#include "chunk.h"
#include "gran.h"
#include "heap.h"
#include "slab.h"

struct hpm_arena {
	hpm_lock_t lock;
	int socket;
	bool present;
	/** Check the whole arena at every unlock (HPM_CFG_F_VALIDATE). */
	bool validate;
	/** Bytes held by live blocks, header and rounding included. */
	size_t alloc_bytes;
	uint64_t alloc_count;
	/** hpm_arena_torn() has said so. */
	uint32_t torn_told;
	/** The layers below, each its own structure: chunks, granule classes, heap, slab. */
	struct hpm_chunk_set cs;
	struct hpm_gran_set gran;
	struct hpm_heap heap;
	struct hpm_slab_set slab;
};

/**
 * Set up an empty arena for a socket whose memory is bound to node, on the
 * heap's metadata and page map, with the chunk settings of cfg.
 */
void hpm_arena_init(struct hpm_arena *a, int socket, int node, bool validate, struct hpm_meta *meta,
	struct hpm_pagemap *pagemap, const struct hpm_config *cfg, bool unit_iova_contig);

/**
 * Give the empty pages, units and spans the block allocators keep for reuse
 * back to the chunks, lock held: true if it gave any back.
 */
bool hpm_arena_release_spares_locked(struct hpm_arena *a);

/** Check the arena, lock held; stop the process if it is broken. */
void hpm_arena_validate_locked(struct hpm_arena *a);

/** Say (once) that a socket's heap is torn, and set rte_errno to ENOTRECOVERABLE. */
void hpm_arena_torn(struct hpm_arena *a);

/**
 * Take the arena's lock: true, or false (rte_errno ENOTRECOVERABLE) when a
 * process died holding it: the arena may be half-changed, and every later
 * call on the socket fails (lock.h).
 */
static inline __rte_warn_unused_result bool
hpm_arena_lock(struct hpm_arena *a)
{
	if (likely(hpm_lock(&a->lock)))
		return true;
	hpm_arena_torn(a);
	return false;
}

static inline void
hpm_arena_unlock(struct hpm_arena *a)
{
	if (unlikely(a->validate))
		hpm_arena_validate_locked(a);
	hpm_unlock(&a->lock);
}

/** What hpm_arena_stats() finds besides EAL's figures. */
struct hpm_arena_parts {
	/** In: room for max extents, the pages of each chunk (hpm_chunk_extents()). */
	struct hpm_extent *ext;
	unsigned int max;
	/** In: only what is held (trim): no walk of the free ranges, which fills none of them. */
	bool held_only;
	/** Out: chunks (more than max: ext has the first max). */
	unsigned int nchunks;
	/** Out: bytes of the chunks, of those with every unit free, free in them. */
	size_t chunk_bytes;
	size_t empty_bytes;
	size_t free_bytes;
	/** Out: bytes of the units in use, now and at their most. */
	size_t in_use_bytes;
	size_t in_use_peak_bytes;
};

/**
 * Fill EAL-style statistics of the arena's chunks (heap_totalsz_bytes: their
 * bytes; heap_allocsz_bytes: blocks held, cached ones included), and parts.
 * Takes the lock: 0, or -ENOTRECOVERABLE.
 */
int hpm_arena_stats(struct hpm_arena *a, const struct hpm_source_ops *src,
	struct rte_malloc_socket_stats *st, struct hpm_arena_parts *parts);

/** Check every structure of the arena; the number of problems (logged). Takes the lock. */
unsigned int hpm_arena_verify(struct hpm_arena *a);

#endif /* HPM_ARENA_H */
