/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * fork() after the heap is up: the child is another process and binds
 * anew. The forking thread's binding came into the child as it was: the
 * child pushed and popped its parent's lcore cache, which the EAL source
 * shares, with no lock while the parent did the same (243 and 250 blocks
 * overwritten by the other process in 300,000 pairs, 23 valid frees taken
 * for double frees). Parent and child each allocate two 64-byte blocks,
 * inline and through the calls, tag them with their own mark, spin a
 * moment and check the marks before freeing: no block is the other
 * process's, no free is refused, and the heap checks in both.
 *
 * fork() while another thread of the parent holds a lock of a private heap
 * (anon): the child's copy of the lock held the parent's pid, and the
 * child's first call spun for as long as the parent lived. Each of FORKS
 * children allocates once, while a thread of the parent allocates and frees
 * 3 MiB blocks (the locked path) in a loop: it ends within 2 s, with its
 * block or with ENOTRECOVERABLE (the lock it found held is torn there).
 */

#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_pause.h>

#include "hpm_inline.h"
#include "hpm_malloc.h"
#include "test_common.h"

#define PAIRS 100000

/* pairs each process makes: fewer in checking builds (HPM_TEST_OPS: every lock checks the heap) */
static long pairs = PAIRS;

/* Blocks of the other process's: their mark changed while this one held them. */
static unsigned long
run(long mark)
{
	unsigned long bad = 0;
	long i;
	int k;

	for (i = 0; i < pairs; i++) {
		volatile long *p =
			(i & 1) ? hpm_malloc_inline(NULL, 64, 0) : hpm_malloc(NULL, 64, 0);
		volatile long *q = hpm_malloc_inline(NULL, 64, 0);

		if (p == NULL || q == NULL) {
			bad++;
			break;
		}
		p[0] = mark;
		q[0] = mark;
		for (k = 0; k < 16; k++)
			rte_pause();
		bad += (p[0] != mark) + (q[0] != mark) + (p == q);
		hpm_free_inline((void *)(uintptr_t)q);
		if (i & 1)
			hpm_free_inline((void *)(uintptr_t)p);
		else
			hpm_free((void *)(uintptr_t)p);
	}
	return bad;
}

#define FORKS 20
#define BIG ((size_t)3 << 20)

static volatile int locker_stop;

static void *
locker(void *arg)
{
	RTE_SET_USED(arg);
	while (!locker_stop)
		hpm_free(hpm_malloc("locker", BIG, 0));
	return NULL;
}

static void
check_fork_while_locked(void)
{
	unsigned int i, hung = 0, torn = 0, other = 0;
	struct hpm_config cfg;
	int status, waited;
	pthread_t t;
	pid_t pid, r;

	hpm_config_defaults(&cfg);
	cfg.source = HPM_SOURCE_ANON;
	CHECK(hpm_init(&cfg) == 0, "hpm_init (anon)");
	CHECK(pthread_create(&t, NULL, locker, NULL) == 0, "locker thread");
	for (i = 0; i < FORKS; i++) {
		usleep(1000);
		pid = fork();
		if (pid == 0) {
			void *p = hpm_malloc("child", BIG, 0);

			_exit(p != NULL ? 0 : rte_errno == ENOTRECOVERABLE ? 4 : 3);
		}
		if (pid < 0)
			break;
		for (waited = 0; (r = waitpid(pid, &status, WNOHANG)) == 0 && waited < 2000;
			waited++)
			usleep(1000);
		if (r == 0) {
			hung++;
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
		} else if (WIFEXITED(status) && WEXITSTATUS(status) == 4) {
			torn++;
		} else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			other++;
		}
	}
	locker_stop = 1;
	pthread_join(t, NULL);
	printf("%u children forked while a thread allocates: %u hung, %u found a lock torn, "
	       "%u failed otherwise\n",
		i, hung, torn, other);
	CHECK(i == FORKS, "fork %u", i);
	CHECK(hung == 0, "%u children still in their first allocation after 2 s", hung);
	CHECK(other == 0, "%u children failed otherwise", other);
	CHECK(hpm_heap_check() == 0, "parent's heap check");
	hpm_fini();
}

int
main(void)
{
	unsigned long bad, child_bad = ~0ul;
	uint64_t bad_frees;
	int fds[2], status = 0;
	pid_t pid;

	if (getenv("HPM_TEST_OPS") != NULL)
		pairs = RTE_MIN(pairs, strtol(getenv("HPM_TEST_OPS"), NULL, 0) / 4);
	if (test_eal_init("fork", "-l", "0", "--no-pci", NULL) != 0)
		return TEST_SKIP;
	CHECK(hpm_init(NULL) == 0, "hpm_init");
	printf("source %s\n", hpm_source_name());
	hpm_free(hpm_malloc(NULL, 64, 0)); /* binds lcore 0's cache */
	bad_frees = hpm_bad_free_count();
	CHECK(pipe(fds) == 0, "pipe");
	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid < 0)
		return test_end("fork");
	/* EAL pinned this thread to core 0: the child runs on the other core, at once */
	if (pid == 0) {
		cpu_set_t cpus;

		CPU_ZERO(&cpus);
		CPU_SET(1, &cpus);
		if (sysconf(_SC_NPROCESSORS_ONLN) > 1)
			sched_setaffinity(0, sizeof(cpus), &cpus);
	}
	bad = run(pid == 0 ? 2 : 1);
	if (pid == 0) {
		unsigned long report = bad + (hpm_bad_free_count() - bad_frees) +
			(hpm_heap_check() != 0 ? 1000000 : 0);

		if (write(fds[1], &report, sizeof(report)) != sizeof(report))
			_exit(2);
		_exit(0);
	}
	CHECK(read(fds[0], &child_bad, sizeof(child_bad)) == sizeof(child_bad), "child's report");
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
		"child's exit");
	printf("blocks of the other process's or bad frees: parent %lu, child %lu\n", bad,
		child_bad);
	CHECK(bad == 0, "parent: %lu blocks overwritten by the child", bad);
	CHECK(child_bad == 0, "child: %lu blocks overwritten, bad frees or a heap check failed",
		child_bad);
	CHECK(hpm_bad_free_count() == bad_frees, "parent: %" PRIu64 " frees refused",
		hpm_bad_free_count() - bad_frees);
	CHECK(hpm_heap_check() == 0, "heap check");
	hpm_fini();
	check_fork_while_locked();
	return test_end("fork");
}
