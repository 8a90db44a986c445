/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef HPM_BLOCK_H
#define HPM_BLOCK_H

/*
 * Live blocks, whatever part of the allocator holds them: their size, their
 * free, whether a cache holds them, and the report of bad pointers.
 */

#include <stdbool.h>
#include <stddef.h>

#include "arena.h"
#include "pagemap.h"
#include "poison.h"
#include "init.h"
#include "owner.h"
#include "unit.h"

/** hpm_block_unit() before this process has a heap: attach, then look. */
struct hpm_unit *hpm_block_unit_attach(const void *p);

/**
 * The unit of a pointer hpmalloc may own, or NULL, from the page map (the
 * owner table learns it: owner.h). A process whose first call frees or
 * looks at another process's block attaches to the heap here; the hit path
 * looks in the owner table, and comes here when it misses.
 */
static inline struct hpm_unit *
hpm_block_unit(const void *p)
{
	if (unlikely(hpm_state == NULL))
		return hpm_block_unit_attach(p);
	return hpm_owner_learn(&hpm_state->pagemap, p);
}

/** Bytes a live block holds (header and rounding included), 0 if p is not one. Lock held. */
size_t hpm_block_bytes(const struct hpm_unit *u, const void *p);

/** Usable bytes of a live block, 0 if p is not one. Lock held. */
size_t hpm_block_usable(const struct hpm_unit *u, const void *p);

/**
 * Free a live block into its arena; -EINVAL if p is not one, -EALREADY if it
 * is held by a per-lcore cache (a double free). Lock held.
 */
int hpm_block_free_locked(struct hpm_arena *a, struct hpm_unit *u, void *p);

/** A block of a cacheable kind that is in a cache (freed): lock held or not. */
bool hpm_block_in_cache(const struct hpm_unit *u, const void *p);

/**
 * The application may use size bytes from p (for memory checkers; poison.h):
 * all of what hpm_malloc_usable_size() says, rounding included.
 */
static inline void
hpm_block_open(void *p, size_t size)
{
	HPM_UNPOISON(p, size);
}

/** A block goes back: none of it is the application's, nor a heap block's header. */
static inline void
hpm_block_close(const struct hpm_unit *u, void *p, size_t usable)
{
	/*
	 * A heap block's header too: an overflow into it is caught. Not for
	 * valgrind, which would also see the heap's own reads of the header
	 * (a check's walk, a neighbour's free; ASan does not: heap.c is built
	 * without it); the heap's header checks catch such an overflow there.
	 */
#ifndef HPM_VALGRIND
	if (u->role == HPM_UNIT_SPAN)
		HPM_POISON((uint8_t *)p - 16, usable + 16);
	else
		HPM_POISON(p, usable);
#else
	HPM_POISON(p, usable);
#endif
	RTE_SET_USED(u);
	RTE_SET_USED(p);
	RTE_SET_USED(usable);
}

/** Count, and log (rate-limited), a bad pointer given to op. */
void hpm_bad_pointer(const void *ptr, const char *op, const char *why);

#endif /* HPM_BLOCK_H */
