/* SPDX-License-Identifier: BSD-3-Clause */

/* Memory checkers and a heap shared by processes (see poison.h). */

#include "poison.h"

#ifdef HPM_CHECKER

#include "arena.h"
#include "state.h"

bool hpm_poison_enabled;

void
hpm_poison_sync(void)
{
	unsigned int i;

	if (!hpm_poison_enabled || hpm_state == NULL ||
		!__atomic_load_n(&hpm_state->shared, __ATOMIC_ACQUIRE))
		return;
	hpm_poison_enabled = false;
	for (i = 0; i < hpm_state->nsockets; i++) {
		struct hpm_arena *a = &hpm_state->arenas[hpm_state->socket_ids[i]];
		const struct hpm_chunk *c;

		if (!hpm_arena_lock(a))
			continue;
		for (c = a->chunks; c != NULL; c = c->next)
			HPM_UNPOISON(c->region.va, c->region.len);
		hpm_unlock(&a->lock);
	}
}

#endif
