/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * What the threads of the tool share, below everything that runs: the stop
 * flag, the barrier of a run's lcores, which lcores a run takes, what runs
 * now (written by the runner, read by the stats line and the prompt), and
 * the lock that keeps a backend's state from being torn down under a reader.
 */

#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_pause.h>
#include <rte_rwlock.h>
#include <rte_spinlock.h>

#include "malloc_perf.h"

volatile int mp_stop;
bool mp_main_busy;

static struct {
	rte_spinlock_t lock;
	struct mp_status st;
} status = {.lock = RTE_SPINLOCK_INITIALIZER};

/* what the stats thread reads is not torn down under it */
static rte_rwlock_t be_lock = RTE_RWLOCK_INITIALIZER;

void
mp_status_get(struct mp_status *st)
{
	rte_spinlock_lock(&status.lock);
	*st = status.st;
	rte_spinlock_unlock(&status.lock);
}

void
mp_status_begin(void)
{
	rte_spinlock_lock(&status.lock);
	status.st.start_tsc = rte_rdtsc();
	rte_spinlock_unlock(&status.lock);
}

void
mp_status_set(const char *workload, const struct mp_backend *be, unsigned int rep,
	unsigned int nreps, unsigned int nlc, struct mp_lcore *lc)
{
	rte_spinlock_lock(&status.lock);
	status.st.running = workload != NULL;
	status.st.workload = workload;
	status.st.backend = be != NULL ? be->name : NULL;
	status.st.be = be;
	status.st.rep = rep;
	status.st.nreps = nreps;
	status.st.nlc = nlc;
	status.st.lc = lc;
	if (workload != NULL) {
		status.st.seq++;
		status.st.run_tsc = rte_rdtsc();
	}
	rte_spinlock_unlock(&status.lock);
}

void
mp_barrier(struct mp_run *r)
{
	unsigned int gen = __atomic_load_n(&r->bar_gen, __ATOMIC_ACQUIRE);

	if (__atomic_add_fetch(&r->bar_count, 1, __ATOMIC_ACQ_REL) == r->nlc) {
		__atomic_store_n(&r->bar_count, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&r->bar_gen, gen + 1, __ATOMIC_RELEASE);
		return;
	}
	while (__atomic_load_n(&r->bar_gen, __ATOMIC_ACQUIRE) == gen)
		rte_pause();
}

static bool
lcore_can_run(unsigned int id)
{
	return rte_lcore_is_enabled(id) && !(mp_main_busy && id == rte_get_main_lcore());
}

unsigned int
mp_run_lcores(const struct mp_config *cfg, unsigned int flags, unsigned int *out)
{
	unsigned int n = 0, id, i;

	if (flags & MP_WL_SINGLE) {
		out[0] = cfg->lcores[0];
		return 1;
	}
	if (!(flags & MP_WL_ALL)) {
		memcpy(out, cfg->lcores, sizeof(out[0]) * cfg->nlcores);
		return cfg->nlcores;
	}
	/* every lcore that can run: the selected ones first */
	for (i = 0; i < cfg->nlcores; i++)
		out[n++] = cfg->lcores[i];
	RTE_LCORE_FOREACH (id) {
		if (!lcore_can_run(id))
			continue;
		for (i = 0; i < n && out[i] != id; i++)
			;
		if (i == n)
			out[n++] = id;
	}
	return n;
}

void
mp_backend_lock(void)
{
	rte_rwlock_write_lock(&be_lock);
}

void
mp_backend_unlock(void)
{
	rte_rwlock_write_unlock(&be_lock);
}

bool
mp_backend_trylock_read(void)
{
	return rte_rwlock_read_trylock(&be_lock) == 0;
}

void
mp_backend_unlock_read(void)
{
	rte_rwlock_read_unlock(&be_lock);
}
