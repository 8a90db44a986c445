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
 */

#define _GNU_SOURCE
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

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
	return test_end("fork");
}
