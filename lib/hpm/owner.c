/* SPDX-License-Identifier: BSD-3-Clause */

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#include "log.h"
#include "owner.h"

#define OWNER_SLOTS ((uintptr_t)1 << (HPM_OWNER_VA_BITS - HPM_UNIT_SHIFT))
#define OWNER_BYTES (OWNER_SLOTS * sizeof(struct hpm_unit *))

struct hpm_owner_table hpm_owner;

static pthread_mutex_t owner_lock = PTHREAD_MUTEX_INITIALIZER;

int
hpm_owner_init(void)
{
	void *t;
	int rc = 0;

	pthread_mutex_lock(&owner_lock);
	if (hpm_owner.slot == NULL) {
		t = mmap(NULL, OWNER_BYTES, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (t == MAP_FAILED) {
			/* every lookup takes the page map's path: slower, not wrong */
			HPM_LOG(WARNING, "no address space for the owner table (%zu MiB): %s",
				OWNER_BYTES >> 20, strerror(errno));
			rc = -ENOMEM;
		} else {
			hpm_owner.slot = t;
			__atomic_store_n(&hpm_owner.nslots, OWNER_SLOTS, __ATOMIC_RELEASE);
		}
	}
	pthread_mutex_unlock(&owner_lock);
	return rc;
}

void
hpm_owner_set(const void *va, size_t n, struct hpm_unit *units)
{
	uintptr_t i = (uintptr_t)va >> HPM_UNIT_SHIFT;
	size_t k;

	if (hpm_owner.slot == NULL || i + n > OWNER_SLOTS)
		return;
	for (k = 0; k < n; k++)
		__atomic_store_n(&hpm_owner.slot[i + k], units != NULL ? &units[k] : NULL,
			__ATOMIC_RELEASE);
}

struct hpm_unit *
hpm_owner_learn(const struct hpm_pagemap *pm, const void *p)
{
	struct hpm_unit *u = hpm_pagemap_lookup(pm, p);

	/* a stale entry goes too: the next lookup asks again */
	if ((uintptr_t)p >> HPM_UNIT_SHIFT < hpm_owner.nslots && hpm_owner_lookup(p) != u) {
		uintptr_t i = (uintptr_t)p >> HPM_UNIT_SHIFT;

		__atomic_store_n(&hpm_owner.slot[i], u, __ATOMIC_RELEASE);
	}
	return u;
}

void
hpm_owner_clear(void)
{
	if (hpm_owner.slot != NULL)
		(void)madvise(hpm_owner.slot, OWNER_BYTES, MADV_DONTNEED);
}
