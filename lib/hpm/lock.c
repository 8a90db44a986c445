/* SPDX-License-Identifier: BSD-3-Clause */

/* The slow path of the heap's locks: waiting, and finding a dead holder. */

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include <rte_pause.h>

#include "lock.h"
#include "log.h"

/*
 * Spins between two looks at the holder (rte_pause() is 10-140 cycles: a
 * look every 0.1-2 ms). A lock is held for at most a few microseconds
 * (a chunk's growth is the longest: tens of microseconds), so a holder that
 * is still there after a look is asked about, with one kill(pid, 0).
 */
#define LOOK_EVERY_SPINS (1u << 14)

int hpm_lock_self;

static void
self_refresh(void)
{
	hpm_lock_self = (int)getpid();
}

RTE_INIT(hpm_lock_setup)
{
	self_refresh();
	pthread_atfork(NULL, NULL, self_refresh);
}

char
hpm_proc_state(int pid)
{
	char path[32], buf[256], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (f == NULL)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* "pid (comm) S ...": the state follows the last ')' */
	p = strrchr(buf, ')');
	return p != NULL && p[1] == ' ' ? p[2] : 0;
}

/* The number of threads /proc/<pid>/status counts, 0 if unreadable. */
static unsigned int
threads_of(int pid)
{
	char path[32], line[128];
	unsigned int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "Threads: %u", &n) == 1)
			break;
	fclose(f);
	return n;
}

/*
 * A zombie (killed, not yet reaped by its parent) holds nothing any more.
 * Its leader's state alone does not say it: a main thread that called
 * pthread_exit() is a zombie while the process's other threads run.
 */
static bool
zombie(int pid)
{
	char state = hpm_proc_state(pid);

	return (state == 'Z' || state == 'X') && threads_of(pid) <= 1;
}

bool
hpm_pid_alive(int pid)
{
	if (pid <= 0)
		return false;
	if (kill(pid, 0) != 0 && errno == ESRCH)
		return false;
	return !zombie(pid);
}

bool
hpm_lock_wait(hpm_lock_t *l)
{
	unsigned int spins = 0;

	for (;;) {
		int owner = __atomic_load_n(&l->owner, __ATOMIC_RELAXED);

		if (owner == 0) {
			if (__atomic_compare_exchange_n(&l->owner, &owner, hpm_lock_self, false,
				    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
				return true;
			continue;
		}
		if (owner == HPM_LOCK_TORN)
			return false;
		if (++spins % LOOK_EVERY_SPINS == 0 && owner != hpm_lock_self &&
			!hpm_pid_alive(owner)) {
			/* one waiter tells; the others see it torn */
			if (__atomic_compare_exchange_n(&l->owner, &owner, HPM_LOCK_TORN, false,
				    __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
				HPM_LOG(ERR,
					"process %d died holding a heap lock (%p): what it "
					"protects may be half-changed and is not used again",
					owner, (void *)l);
			return false;
		}
		rte_pause();
	}
}
