/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * A heap whose creator never finished (it died before publishing the
 * state's magic): hpm_init() waits 2 s for it, then fails with -ETIMEDOUT
 * (it counted usleep(1) calls as microseconds and waited 150 s, on every
 * call that sets the heap up); once the zone is gone, hpm_init() makes a
 * heap of its own, which works. While the creator lives, it waits on (a
 * 12 GiB initial_size took more than 2 s to reserve, and every process that
 * attached meanwhile failed): a creator that lives 3 s makes it wait 3 s.
 */

#include <errno.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rte_cycles.h>

#include <rte_memzone.h>

#include "hpm_malloc.h"
#include "meta.h"
#include "state.h"
#include "test_common.h"

int
main(void)
{
	const struct rte_memzone *mz;
	uint64_t start;
	double waited;
	pid_t pid;
	void *p;
	int rc;

	if (test_eal_init("attach_stuck", "-l", "0", "--no-pci", NULL) != 0)
		return TEST_SKIP;
	/* what a creator leaves when it dies before the magic: the zone, zeroed */
	mz = rte_memzone_reserve(HPM_STATE_ZONE, HPM_META_HDR_SIZE + sizeof(struct hpm_state),
		SOCKET_ID_ANY, 0);
	CHECK(mz != NULL, "memzone %s", HPM_STATE_ZONE);
	if (mz == NULL)
		return test_end("attach_stuck");
	memset(mz->addr, 0, mz->len);
	rc = hpm_init(NULL);
	CHECK(rc == -ETIMEDOUT, "hpm_init with an unfinished heap: %d", rc);
	/* a creator alive for 3 s */
	pid = fork();
	if (pid == 0) {
		sleep(3);
		_exit(0);
	}
	CHECK(pid > 0, "fork");
	((struct hpm_state *)((uint8_t *)mz->addr + HPM_META_HDR_SIZE))->creator_pid = (int)pid;
	start = rte_get_timer_cycles();
	rc = hpm_init(NULL);
	waited = (double)(rte_get_timer_cycles() - start) / rte_get_timer_hz();
	printf("a creator alive for 3 s: hpm_init() waited %.1f s\n", waited);
	CHECK(rc == -ETIMEDOUT && waited > 2.9, "a live creator's heap: %d after %.1f s", rc,
		waited);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	CHECK(rte_memzone_free(mz) == 0, "memzone free");
	rc = hpm_init(NULL);
	CHECK(rc == 0, "hpm_init after: %d", rc);
	if (rc == 0) {
		p = hpm_malloc("attach", 4096, 4096);
		CHECK(p != NULL, "malloc");
		hpm_free(p);
		CHECK(hpm_heap_check() == 0, "heap check");
		hpm_fini();
	}
	return test_end("attach_stuck");
}
