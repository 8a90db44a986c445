/* SPDX-License-Identifier: BSD-3-Clause */

#include <errno.h>
#include <inttypes.h>

#include "block.h"
#include "large.h"
#include "lcore_cache.h"
#include "log.h"

static uint64_t bad_pointers_before_init;

void
hpm_bad_pointer(const void *ptr, const char *op, const char *why)
{
	uint64_t *counter = hpm_state != NULL ? &hpm_state->bad_frees : &bad_pointers_before_init;
	uint64_t n = __atomic_add_fetch(counter, 1, __ATOMIC_RELAXED);

	/* rate-limited: the first few, then at powers of two */
	if (n <= 16 || (n & (n - 1)) == 0)
		HPM_LOG(ERR, "%s(%p): %s; heap left intact (%" PRIu64 " so far)", op, ptr, why, n);
}

/* The heap tells of the headers an overflow damaged as of bad pointers: counted, logged. */
static void __attribute__((constructor)) block_report_heap_damage(void)
{
	hpm_heap_report = hpm_bad_pointer;
}

uint64_t
hpm_bad_free_count(void)
{
	return hpm_state_find() == 0 ? __atomic_load_n(&hpm_state->bad_frees, __ATOMIC_RELAXED)
				     : bad_pointers_before_init;
}

struct hpm_unit *
hpm_block_unit_attach(const void *p)
{
	if (hpm_state_find() != 0)
		return NULL;
	return hpm_owner_learn(&hpm_state->pagemap, p);
}

size_t
hpm_block_bytes(const struct hpm_unit *u, const void *p)
{
	switch (u->role) {
	case HPM_UNIT_SPAN:
		return hpm_heap_block_size(u, p);
	case HPM_UNIT_G4K:
	case HPM_UNIT_G64K:
		return hpm_gran_block_size(u, p);
	case HPM_UNIT_LARGE:
		return hpm_large_block_size(u, p);
	case HPM_UNIT_SLAB:
		return hpm_slab_block_size(u, p);
	default:
		return 0;
	}
}

size_t
hpm_block_usable(const struct hpm_unit *u, const void *p)
{
	return u->role == HPM_UNIT_SPAN ? hpm_heap_usable(u, p) : hpm_block_bytes(u, p);
}

/* The state byte of a block of a span, a granule or slab page, NULL for other kinds. */
static uint8_t *
state_of(const struct hpm_unit *u, const void *p)
{
	if (u->role == HPM_UNIT_SPAN)
		return hpm_heap_state(u, p);
	if (u->role == HPM_UNIT_SLAB)
		return hpm_slab_state(u, p);
	if (hpm_unit_is_gran(u->role))
		return hpm_gran_state(u, p);
	return NULL;
}

bool
hpm_block_in_cache(const struct hpm_unit *u, const void *p)
{
	const uint8_t *state = state_of(u, p);

	return state != NULL && *state == HPM_BLK_CACHED;
}

int
hpm_block_free_locked(struct hpm_arena *a, struct hpm_unit *u, void *p)
{
	const uint8_t *state = state_of(u, p);
	size_t bytes = 0;
	int rc;

	if (state != NULL && *state == HPM_BLK_CACHED)
		return -EALREADY;
	if (state != NULL && hpm_blk_kind(*state) != HPM_BLK_USER)
		return -EINVAL;
#ifdef HPM_CHECKER
	/* a memory checker's view only: no lookup of the size otherwise */
	if (hpm_block_usable(u, p) != 0)
		hpm_block_close(u, p, hpm_block_usable(u, p));
#endif
	switch (u->role) {
	case HPM_UNIT_SPAN:
		rc = hpm_heap_free(&a->heap, u, p, &bytes);
		break;
	case HPM_UNIT_G4K:
	case HPM_UNIT_G64K:
		rc = hpm_gran_free(&a->gran, u, p, &bytes);
		break;
	case HPM_UNIT_LARGE:
		rc = hpm_large_free(&a->cs, u, p, &bytes);
		break;
	case HPM_UNIT_SLAB:
		rc = hpm_slab_free(&a->slab, u, p, &bytes);
		break;
	default:
		rc = -EINVAL;
	}
	if (rc == 0) {
		a->alloc_bytes -= bytes;
		a->alloc_count--;
	}
	return rc;
}
