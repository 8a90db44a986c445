/* SPDX-License-Identifier: BSD-3-Clause */

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#include "hpm_inline.h"
#include "log.h"
#include "owner.h"

#define OWNER_SLOTS ((uintptr_t)1 << (HPM_OWNER_VA_BITS - HPM_UNIT_SHIFT))
#define OWNER_BYTES (OWNER_SLOTS * sizeof(struct hpm_unit *))
/* the map's mask at the end of a page of its own, so that its slots start a page */
#define OWNER_HEAD 4096

/* one empty slot: what hpm_inline.h's lookups read until the table is reserved */
static struct hpm_owner_map owner_none = {.mask = 0, .slot = {NULL}};

/* the table's slots once reserved, else NULL */
static struct hpm_unit **
owner_slots(void)
{
	return __atomic_load_n(&hpm_hit.owner_mask, __ATOMIC_ACQUIRE) != 0 ? hpm_hit.owner : NULL;
}

/*
 * What hpm_inline.h's functions read: the owner table here, the caches'
 * generation and small-size classes from lcore_cache.c. The generation of
 * no thread until the caches say (hpm_cache_gen_bump()).
 */
struct hpm_inline_anchor hpm_inline_v3 = {
	.gen = UINT64_MAX,
	.owner = (struct hpm_inline_owner *)&owner_none,
};

/* the inline free reads the map and its units through hpm_inline.h's layout */
static_assert(offsetof(struct hpm_inline_owner, mask) == offsetof(struct hpm_owner_map, mask) &&
		offsetof(struct hpm_inline_owner, slot) == offsetof(struct hpm_owner_map, slot) &&
		HPM_INLINE_UNIT_SHIFT == HPM_UNIT_SHIFT,
	"hpm_inline.h's owner table is the library's");
static_assert(offsetof(struct hpm_inline_unit, socket) == offsetof(struct hpm_unit, socket) &&
		offsetof(struct hpm_inline_unit, shift) == offsetof(struct hpm_unit, shift) &&
		offsetof(struct hpm_inline_unit, start_mask) ==
			offsetof(struct hpm_unit, start_mask) &&
		offsetof(struct hpm_inline_unit, va) == offsetof(struct hpm_unit, va) &&
		offsetof(struct hpm_inline_unit, state) == offsetof(struct hpm_unit, state) &&
		sizeof(((struct hpm_unit *)0)->socket) == sizeof(uint16_t) &&
		sizeof(((struct hpm_unit *)0)->start_mask) == sizeof(uint64_t),
	"hpm_inline.h's unit is the first line of the library's");

static pthread_mutex_t owner_lock = PTHREAD_MUTEX_INITIALIZER;

int
hpm_owner_init(void)
{
	void *t;
	int rc = 0;

	pthread_mutex_lock(&owner_lock);
	if (owner_slots() == NULL) {
		t = mmap(NULL, OWNER_HEAD + OWNER_BYTES, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (t == MAP_FAILED) {
			/* every lookup takes the page map's path: slower, not wrong */
			HPM_LOG(WARNING, "no address space for the owner table (%zu MiB): %s",
				OWNER_BYTES >> 20, strerror(errno));
			rc = -ENOMEM;
		} else {
			struct hpm_owner_map *m = (struct hpm_owner_map *)((uint8_t *)t +
				OWNER_HEAD - sizeof(uintptr_t));

			m->mask = OWNER_SLOTS - 1;
			__atomic_store_n(&hpm_hit.owner, m->slot, __ATOMIC_RELEASE);
			__atomic_store_n(&hpm_hit.owner_mask, m->mask, __ATOMIC_RELEASE);
			__atomic_store_n(&hpm_inline_v3.owner, (struct hpm_inline_owner *)m,
				__ATOMIC_RELEASE);
		}
	}
	pthread_mutex_unlock(&owner_lock);
	return rc;
}

void
hpm_owner_set(const void *va, size_t n, struct hpm_unit *units)
{
	struct hpm_unit **slot = owner_slots();
	uintptr_t i = (uintptr_t)va >> HPM_UNIT_SHIFT;
	size_t k;

	if (slot == NULL || i + n > OWNER_SLOTS)
		return;
	for (k = 0; k < n; k++)
		__atomic_store_n(&slot[i + k], units != NULL ? &units[k] : NULL, __ATOMIC_RELEASE);
}

struct hpm_unit *
hpm_owner_learn(const struct hpm_pagemap *pm, const void *p)
{
	struct hpm_unit **slot = owner_slots();
	struct hpm_unit *u = hpm_pagemap_lookup(pm, p);
	uintptr_t i = (uintptr_t)p >> HPM_UNIT_SHIFT;

	/* a stale entry goes too: the next lookup asks again (not one a mask wrapped to) */
	if (slot != NULL && i < OWNER_SLOTS && __atomic_load_n(&slot[i], __ATOMIC_ACQUIRE) != u)
		__atomic_store_n(&slot[i], u, __ATOMIC_RELEASE);
	return u;
}

void
hpm_owner_clear(void)
{
	struct hpm_unit **slot = owner_slots();

	/* the slots alone, on pages of their own: the mask stays */
	if (slot != NULL)
		(void)madvise(slot, OWNER_BYTES, MADV_DONTNEED);
}
