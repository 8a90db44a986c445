/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Whether a process that holds the heap's locks or caches still lives
 * (hpm_pid_alive(): torn locks, caches of dead processes given back). A
 * process whose main thread called pthread_exit() while another thread
 * runs shows its leader as a zombie in /proc/<pid>/stat: it was taken for
 * dead, its cache given back to the heap while its thread used it, and a
 * new thread of another process bound the same cache (blocks overwritten).
 * Here: alive while its thread runs, dead once the thread is gone and the
 * process is a zombie, dead once reaped.
 */

#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lock.h"
#include "test_common.h"

static int go[2];

static void *
lingering(void *arg)
{
	char c;

	RTE_SET_USED(arg);
	/* until the parent has looked */
	if (read(go[0], &c, 1) != 1)
		_exit(3);
	_exit(0);
}

/* A zombie leader until the state file says so: the kernel's exit is not instant. */
static bool
leader_is_zombie(pid_t pid)
{
	unsigned int tries;

	for (tries = 0; tries < 2000; tries++) {
		if (hpm_proc_state(pid) == 'Z')
			return true;
		usleep(1000);
	}
	return false;
}

int
main(void)
{
	unsigned int tries;
	pthread_t t;
	int status;
	pid_t pid;

	CHECK(pipe(go) == 0, "pipe");
	pid = fork();
	if (pid == 0) {
		if (pthread_create(&t, NULL, lingering, NULL) != 0)
			_exit(2);
		pthread_exit(NULL);
	}
	CHECK(pid > 0, "fork");
	if (pid <= 0)
		return test_end("pid_alive");
	CHECK(leader_is_zombie(pid), "the child's main thread never showed as a zombie");
	CHECK(hpm_pid_alive(pid), "a process with a running thread, its leader a zombie: dead");
	CHECK(write(go[1], "x", 1) == 1, "write");
	/* the last thread gone, not reaped: a zombie that holds nothing */
	CHECK(leader_is_zombie(pid), "not a zombie after its last thread");
	/* its threads' exits are seen late under valgrind: a while to settle */
	for (tries = 0; tries < 200 && hpm_pid_alive(pid); tries++)
		usleep(10000);
	CHECK(!hpm_pid_alive(pid), "a zombie process taken for alive");
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
	CHECK(!hpm_pid_alive(pid), "a reaped process taken for alive");
	CHECK(hpm_pid_alive(getpid()), "this process taken for dead");
	return test_end("pid_alive");
}
