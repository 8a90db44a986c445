/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef HPM_CHUNK_H
#define HPM_CHUNK_H

/*
 * Chunks: regions a socket's arena took from the source, cut into 2 MiB
 * units. A bitmap per chunk says which units are in use; a run of free units
 * is found from a hint, the chunk where units were last freed or taken
 * (the "free area cache" of seed 001), so the search does not grow with the
 * heap. Chunks whose units are all free go back to the source once the
 * set holds more than the retain threshold of them.
 *
 * A socket's chunks are a chunk set: it lives in shared metadata (every
 * process maps it at the same address) and holds what chunk code needs,
 * the configuration included, so this layer reads no global state.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "meta.h"
#include "pagemap.h"
#include "source.h"
#include "unit.h"

/**
 * Units of a socket, at most (256 GiB of 2 MiB units): each unit has an
 * ordinal below this, a chunk's a run of them, the lowest run free when the
 * chunk came. Allocators take the lowest units with room first (address-
 * ordered first fit, with ordinals for addresses): the live blocks gather in
 * the first units and chunks, and the last ones empty and go back.
 */
#define HPM_ORD_MAX 131072u
#define HPM_ORD_WORDS (HPM_ORD_MAX / 64)
/** Ordinals per segment of the ordinal-to-unit directory, made as chunks come. */
#define HPM_ORD_SEG 4096u
#define HPM_ORD_NSEG (HPM_ORD_MAX / HPM_ORD_SEG)

/** A chunk set's ordinals: which are taken, which units are free, and their units. */
struct hpm_chunk_ords {
	/** Ordinals of the set's chunks. */
	uint64_t taken[HPM_ORD_WORDS];
	/** Free units (single units are taken from the lowest). */
	uint64_t free[HPM_ORD_WORDS];
	/** Bit w: free[w] is not 0. */
	uint64_t free_sum[HPM_ORD_WORDS / 64];
	/** Ordinal to unit, in segments of HPM_ORD_SEG. */
	struct hpm_unit **unit[HPM_ORD_NSEG];
};

struct hpm_chunk {
	struct hpm_region region;
	struct hpm_chunk *next;
	struct hpm_chunk *prev;
	uint32_t nunits;
	uint32_t nfree;
	/** No unit below lowfree is free. */
	uint32_t lowfree;
	uint32_t meta_size;
	/** Units the descriptor has room for (units[]; the bitmap used follows them). */
	uint32_t units_cap;
	/** When the chunk last became empty (ms, monotonic); 0 while in use. */
	uint64_t empty_since_ms;
	/** Ordinal of the first unit. */
	uint32_t ord;
	/** The first unit is headed (hpm_unit::headed): no other take gets it. */
	uint32_t headed;
	/** The last unit is tailed (hpm_unit::tailed): no other take gets it. */
	uint32_t tailed;
	/** Bytes of the units the heap can use: all, less a headed unit's head. */
	size_t bytes;
	/** Bit per unit, set when the unit is in use. */
	uint64_t *used;
	struct hpm_unit units[];
};

/** A socket's chunks; the arena's lock guards it. */
struct hpm_chunk_set {
	struct hpm_chunk *chunks;
	/** Where the next search for a run of free units starts (seed 001). */
	struct hpm_chunk *hint;
	/** Unit ordinals; made with the first chunk. */
	struct hpm_chunk_ords *ords;
	/**
	 * Descriptors of released chunks, for the next chunks (linked by next):
	 * never other metadata, since other processes' owner tables may still
	 * point at their units (chunk.c).
	 */
	struct hpm_chunk *spare;
	/** The metadata bytes they take (hpm_meta_bytes()). */
	size_t spare_bytes;
	/** Bytes taken from the source. */
	size_t total_bytes;
	/** Bytes of chunks whose every unit is free. */
	size_t empty_bytes;
	/** Earliest time (ms) an empty chunk can go back to the source; 0: none waits. */
	uint64_t release_due_ms;
	uint64_t chunks_reserved;
	uint64_t chunks_released;
	/** Units taken from the chunks now (pages, spans, large blocks), and their most at once. */
	uint32_t units_in_use;
	uint32_t units_in_use_peak;
	/**
	 * Chunks reserved to give hpm_chunk_take() units, by the role the
	 * caller takes them for: which allocator made the heap grow.
	 */
	uint64_t grown_for[HPM_UNIT_NROLES];
	int socket;
	/** NUMA node the socket's memory is bound to (itself, unless the topology is fake). */
	int node;
	/** The heap's metadata and page map (shared, like the set). */
	struct hpm_meta *meta;
	struct hpm_pagemap *pagemap;
	/** hpm_config's chunk_size, retain_size and release_delay_ms. */
	size_t chunk_size;
	size_t retain_size;
	uint64_t release_delay_ms;
	/** Every 2 MiB unit of every chunk is IOVA-contiguous. */
	bool unit_iova_contig;
};

/** Set up an empty chunk set. */
void hpm_chunk_set_init(struct hpm_chunk_set *cs, int socket, int node, struct hpm_meta *meta,
	struct hpm_pagemap *pagemap, size_t chunk_size, size_t retain_size,
	uint64_t release_delay_ms, bool unit_iova_contig);

/**
 * What gives units back before the set grows (the caches' reclaim, lock
 * held): true when it gave any. Process-local: a function pointer never goes
 * into shared memory.
 */
typedef bool (*hpm_chunk_reclaim_t)(struct hpm_chunk_set *cs);

/** Register this process's reclaim callback (the caches layer, at process init). */
void hpm_chunk_set_reclaim(hpm_chunk_reclaim_t fn);

/** The unit of ordinal ord, or NULL. */
static inline struct hpm_unit *
hpm_chunk_unit_at(const struct hpm_chunk_set *cs, unsigned int ord)
{
	struct hpm_unit **seg = cs->ords->unit[ord / HPM_ORD_SEG];

	return seg != NULL ? seg[ord % HPM_ORD_SEG] : NULL;
}

/**
 * Take n contiguous units, the first one's unit number a multiple of
 * align_units, IOVA-contiguous if contig; the set grows when none are free
 * (counted in grown_for[role]). A single unit is the free one of lowest
 * ordinal. The units keep role FREE: the caller gives them theirs (role).
 * short_blocks: a single unit for blocks of at most an eighth of a unit
 * (pages of granules or size classes), which lose little on a chunk's edge
 * units: the set may grow in smaller chunks (chunk.c, grow_step()). NULL
 * when the source has no memory (rte_errno set). Arena lock held.
 */
struct hpm_unit *hpm_chunk_take(struct hpm_chunk_set *cs, unsigned int n, unsigned int align_units,
	bool contig, enum hpm_unit_role role, bool short_blocks);

/**
 * Take one unit for a caller that can use an edge unit, headed or tailed
 * (less its first or last granule or frame): the free unit of lowest
 * ordinal, else a free edge unit rather than grow the set while it sits
 * idle, else hpm_chunk_take()'s (short_blocks: as there). Arena lock held.
 */
struct hpm_unit *hpm_chunk_take_unit(struct hpm_chunk_set *cs, enum hpm_unit_role role,
	bool short_blocks);

/**
 * Take a free edge unit (hpm_unit::headed or hpm_unit::tailed), the lowest;
 * NULL if none. For pages of granules and size classes, which leave its
 * first or last granule or frame. Arena lock held.
 */
struct hpm_unit *hpm_chunk_take_edge(struct hpm_chunk_set *cs);

/**
 * Unit u, just taken, swapped for the lowest free edge unit if there is one
 * (u goes back); u if none. The units' high-water mark (in_use_peak_bytes)
 * does not count both. Arena lock held.
 */
struct hpm_unit *hpm_chunk_swap_for_edge(struct hpm_chunk_set *cs, struct hpm_unit *u);

/** Try to extend the run of n units at u by more units in place. Arena lock held. */
bool hpm_chunk_extend(struct hpm_chunk_set *cs, struct hpm_unit *u, unsigned int n,
	unsigned int more);

/** Give back n units from u (role set to FREE here). Arena lock held. */
void hpm_chunk_give(struct hpm_chunk_set *cs, struct hpm_unit *u, unsigned int n);

/** Reserve a chunk of len bytes now (for hpm_config::initial_size). Arena lock held. */
int hpm_chunk_reserve(struct hpm_chunk_set *cs, size_t len);

/**
 * Give back empty chunks beyond the retain threshold that have been empty
 * for the release delay (all of them if now_ms is UINT64_MAX); the bytes
 * given back. Arena lock held.
 */
size_t hpm_chunk_release_idle(struct hpm_chunk_set *cs, uint64_t now_ms);

/** Every empty chunk back to the source now, retain_size and delay ignored; the bytes. */
size_t hpm_chunk_release_empty(struct hpm_chunk_set *cs);

/** Milliseconds of a monotonic clock, cheap enough for slow paths. */
uint64_t hpm_chunk_now_ms(void);

/** Return every chunk of the arena to the source (hpm_fini). */
void hpm_chunk_release_all(struct hpm_chunk_set *cs);

/** True when n units from u are IOVA-contiguous. */
bool hpm_chunk_run_iova_contig(const struct hpm_chunk *c, unsigned int pos, unsigned int n);

/**
 * The pages each chunk holds (hpm_source_extent()) into e, up to max; the
 * number of chunks, and their bytes in *bytes. Arena lock held.
 */
unsigned int hpm_chunk_extents(const struct hpm_chunk_set *cs, const struct hpm_source_ops *src,
	struct hpm_extent *e, unsigned int max, size_t *bytes);

/** Check the arena's chunks; returns the number of problems found (logged). */
unsigned int hpm_chunk_verify(const struct hpm_chunk_set *cs);

/** Free unit ranges of the arena: count, and the longest in bytes. */
void hpm_chunk_free_ranges(const struct hpm_chunk_set *cs, unsigned int *count, size_t *longest,
	size_t *bytes);

#endif /* HPM_CHUNK_H */
