/* SPDX-License-Identifier: BSD-3-Clause */

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#include "log.h"
#include "owner.h"

#define OWNER_SLOTS ((uintptr_t)1 << (HPM_OWNER_VA_BITS - HPM_UNIT_SHIFT))
#define OWNER_BYTES (OWNER_SLOTS * sizeof(struct hpm_unit *))
/* the map's mask at the end of a page of its own, so that its slots start a page */
#define OWNER_HEAD 4096

/* one empty slot: what every lookup reads until the table is reserved */
static struct hpm_owner_map owner_none = {.mask = 0, .slot = {NULL}};

struct hpm_unit **hpm_owner = owner_none.slot;

static pthread_mutex_t owner_lock = PTHREAD_MUTEX_INITIALIZER;

int
hpm_owner_init(void)
{
	void *t;
	int rc = 0;

	pthread_mutex_lock(&owner_lock);
	if (hpm_owner == owner_none.slot) {
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
			__atomic_store_n(&hpm_owner, m->slot, __ATOMIC_RELEASE);
		}
	}
	pthread_mutex_unlock(&owner_lock);
	return rc;
}

void
hpm_owner_set(const void *va, size_t n, struct hpm_unit *units)
{
	struct hpm_unit **slot = __atomic_load_n(&hpm_owner, __ATOMIC_ACQUIRE);
	uintptr_t i = (uintptr_t)va >> HPM_UNIT_SHIFT;
	size_t k;

	if (slot == owner_none.slot || i + n > OWNER_SLOTS)
		return;
	for (k = 0; k < n; k++)
		__atomic_store_n(&slot[i + k], units != NULL ? &units[k] : NULL, __ATOMIC_RELEASE);
}

struct hpm_unit *
hpm_owner_learn(const struct hpm_pagemap *pm, const void *p)
{
	struct hpm_unit **slot = __atomic_load_n(&hpm_owner, __ATOMIC_ACQUIRE);
	struct hpm_unit *u = hpm_pagemap_lookup(pm, p);
	uintptr_t i = (uintptr_t)p >> HPM_UNIT_SHIFT;

	/* a stale entry goes too: the next lookup asks again (not one a mask wrapped to) */
	if (slot != owner_none.slot && i < OWNER_SLOTS &&
		__atomic_load_n(&slot[i], __ATOMIC_ACQUIRE) != u)
		__atomic_store_n(&slot[i], u, __ATOMIC_RELEASE);
	return u;
}

void
hpm_owner_clear(void)
{
	struct hpm_unit **slot = __atomic_load_n(&hpm_owner, __ATOMIC_ACQUIRE);

	/* the slots alone, on pages of their own: the mask stays */
	if (slot != owner_none.slot)
		(void)madvise(slot, OWNER_BYTES, MADV_DONTNEED);
}
