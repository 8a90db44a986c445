/* SPDX-License-Identifier: BSD-3-Clause */

/* Per-thread counters of routed calls, their sum, and the report at exit. */

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "hpm_rte.h"
#include "counters.h"
#include "shim.h"

#define NSLOTS 256

__thread struct hpm_rte_tls hpm_rte_tls __attribute__((tls_model("initial-exec")));

static struct hpm_rte_slot slots[NSLOTS];
static struct hpm_rte_slot shared_slot;
static unsigned int nslots;

static_assert(sizeof(struct hpm_rte_stats) == HPM_RTE_NCOUNTERS * sizeof(uint64_t),
	"struct hpm_rte_stats follows enum hpm_rte_counter");

struct hpm_rte_slot *
hpm_rte_slot_bind(struct hpm_rte_tls *t)
{
	unsigned int i = __atomic_fetch_add(&nslots, 1, __ATOMIC_RELAXED);

	/* slots are never reused: a thread that exits leaves its counts */
	t->slot = i < NSLOTS ? &slots[i] : NULL;
	return t->slot;
}

void
hpm_rte_count_shared(unsigned int c)
{
	__atomic_fetch_add(&shared_slot.c[c], 1, __ATOMIC_RELAXED);
}

int
hpm_rte_stats(struct hpm_rte_stats *stats)
{
	unsigned int n = RTE_MIN(__atomic_load_n(&nslots, __ATOMIC_RELAXED), (unsigned int)NSLOTS);
	uint64_t sum[HPM_RTE_NCOUNTERS];
	unsigned int i, c;

	if (stats == NULL)
		return -EINVAL;
	for (c = 0; c < HPM_RTE_NCOUNTERS; c++)
		sum[c] = __atomic_load_n(&shared_slot.c[c], __ATOMIC_RELAXED);
	for (i = 0; i < n; i++)
		for (c = 0; c < HPM_RTE_NCOUNTERS; c++)
			sum[c] += __atomic_load_n(&slots[i].c[c], __ATOMIC_RELAXED);
	memcpy(stats, sum, sizeof(*stats));
	return 0;
}

void
hpm_rte_stats_print(FILE *f)
{
	struct hpm_rte_stats s;
	int mode = hpm_rte_mode_get();

	hpm_rte_stats(&s);
	fprintf(f,
		"HPM_RTE stats: backend=%s hpm_alloc=%" PRIu64 " hpm_free=%" PRIu64
		" hpm_realloc=%" PRIu64 " hpm_other=%" PRIu64 " eal_alloc=%" PRIu64
		" eal_free=%" PRIu64 " eal_realloc=%" PRIu64 " eal_other=%" PRIu64
		" eal_early=%" PRIu64 " eal_off=%" PRIu64 " eal_external=%" PRIu64
		" eal_foreign=%" PRIu64 " moved=%" PRIu64 "\n",
		mode == HPM_RTE_ON || mode == HPM_RTE_DONE ? "hpm" : "eal", s.hpm_alloc, s.hpm_free,
		s.hpm_realloc, s.hpm_other, s.eal_alloc, s.eal_free, s.eal_realloc, s.eal_other,
		s.eal_early, s.eal_off, s.eal_external, s.eal_foreign, s.moved);
}

/* HPM_RTE_VERBOSE=1: the counters at exit, for people and test scripts. */
static void __attribute__((destructor)) report_at_exit(void)
{
	const char *v = getenv("HPM_RTE_VERBOSE");

	if (v != NULL && strcmp(v, "0") != 0 && *v != '\0') {
		hpm_rte_stats_print(stderr);
		fflush(stderr);
	}
}
