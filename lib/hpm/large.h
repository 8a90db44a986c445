/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef HPM_LARGE_H
#define HPM_LARGE_H

/*
 * Large blocks (seed 002): runs of whole units, contiguous in VA, taken from
 * and given back to the chunks in O(1) work per block (a bitmap range and a
 * role per unit), never page by page through the source.
 */

#include <stdbool.h>
#include <stddef.h>

#include "chunk.h"
#include "unit.h"

/** Allocate n units aligned to align_units units. Arena lock held. */
void *hpm_large_alloc(struct hpm_chunk_set *cs, unsigned int n, unsigned int align_units,
	bool contig, struct hpm_blockinfo *bi);

/** Free the block at p; -EINVAL if p is not a live block's start. Arena lock held. */
int hpm_large_free(struct hpm_chunk_set *cs, struct hpm_unit *u, const void *p, size_t *bytes);

/** Bytes of the live block at p, 0 if none. */
size_t hpm_large_block_size(const struct hpm_unit *u, const void *p);

/** Resize the block at p to n units in place; 0, or -1 if it cannot. Arena lock held. */
int hpm_large_resize(struct hpm_chunk_set *cs, struct hpm_unit *u, const void *p, unsigned int n,
	struct hpm_blockinfo *bi);

#endif /* HPM_LARGE_H */
