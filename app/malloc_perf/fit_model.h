/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef MP_FIT_MODEL_H
#define MP_FIT_MODEL_H

/*
 * A best fit over one range of offsets (fit_model.c): a yardstick for the
 * memory a workload's steps need, not an allocator.
 */

#include <stddef.h>

#include <rte_common.h>

/** A free range of offsets, [start, end). */
struct mp_fit_range {
	size_t start;
	size_t end;
};

/** The model: its free ranges by offset, and the end of what it used. */
struct mp_fit_model {
	struct mp_fit_range *ranges;
	unsigned int n;
	unsigned int cap;
	/** End of the range used so far: what the model holds. */
	size_t top;
	/** 0, or a power of two no block of at most this size may cross a multiple of. */
	size_t page;
};

/**
 * Start an empty model.
 *
 * @param page
 *   0, or a power of two: blocks of at most this size then never cross a
 *   multiple of it (as blocks that must stay within one hugepage).
 * @return
 *   0, or -EINVAL for a page that is not a power of two.
 */
int mp_fit_init(struct mp_fit_model *m, size_t page);

/** Free what the model holds. */
void mp_fit_fini(struct mp_fit_model *m);

/**
 * Place a block: the smallest free range that takes it at its alignment
 * (the lowest of those), else past the top.
 *
 * @return
 *   The block's offset, or SIZE_MAX for a size of 0, an alignment that is
 *   not a power of two, or no memory for the model's own array.
 */
size_t mp_fit_alloc(struct mp_fit_model *m, size_t size, size_t align);

/**
 * Give a block back; it merges with free neighbours.
 *
 * @return
 *   0, -EINVAL if [off, off + size) is not wholly allocated, or -ENOMEM.
 */
int mp_fit_free(struct mp_fit_model *m, size_t off, size_t size);

#endif /* MP_FIT_MODEL_H */
