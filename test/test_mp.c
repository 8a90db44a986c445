/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * One heap for a primary and a secondary process. The primary starts EAL on
 * lcore 0 and hpmalloc (which creates the heap), then runs this program again
 * as a secondary on lcore 1 (which attaches). Both allocate, fill, and send
 * blocks to the other through rte_rings; whoever receives a block checks its
 * contents and frees it: frees cross processes both ways, through the
 * per-lcore caches of both, every other call through hpm_inline.h's
 * functions. At the end both see the same statistics, back at the start,
 * and the heap checks.
 *
 * Then the failure cases: a secondary that exits with blocks outstanding,
 * and one that is killed (SIGKILL) while it holds blocks. The primary's heap
 * stays consistent and usable; its heap check finds the dead process and
 * gives its lcore's cache back, it frees the blocks the dead one left, and
 * is back at the start.
 *
 * With --in-process, the same exchange between two lcores of one process
 * instead, as the baseline of the cross-process rate (a measurement only).
 *
 * usage: test_mp [--duration SECONDS] [--in-process]
 *        test_mp --secondary PREFIX MODE   (run by the primary)
 */

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/wait.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_memzone.h>
#include <rte_pause.h>
#include <rte_ring.h>

#include "hpm_inline.h"
#include "hpm_malloc.h"
#include "test_common.h"

#define LEFT_MAX 64

/* Shared between the processes, in a memzone. */
struct ctl {
	volatile int stop;
	volatile int secondary_ready;
	volatile int secondary_drained;
	volatile int primary_quiet;
	volatile int secondary_done;
	uint64_t secondary_allocs;
	uint64_t secondary_frees;
	uint64_t secondary_bad;
	struct rte_malloc_socket_stats secondary_stats;
	unsigned int nleft;
	void *left[LEFT_MAX];
	size_t left_size[LEFT_MAX];
};

enum mode { MODE_CHURN, MODE_EXIT_HOLDING, MODE_KILLED_HOLDING };

static const char *const mode_names[] = {"churn", "exit", "killed"};

static size_t
pick(uint64_t *rs, unsigned int *align)
{
	unsigned int r = test_rand(rs) % 10;

	*align = r < 3 ? 4096 : r < 4 ? 65536 : 0;
	if (*align == 4096)
		return 4096;
	if (*align == 65536)
		return 65536;
	return 1 + test_rand(rs) % (r < 9 ? 1024 : 20000);
}

/* A message: the block and its size, packed for the ring (sizes < 2^16). */
static void *
pack(void *p, size_t size)
{
	return (void *)((uintptr_t)p | ((uintptr_t)size << 48));
}

static void *
unpack(void *m, size_t *size)
{
	*size = (uintptr_t)m >> 48;
	return (void *)((uintptr_t)m & ((UINT64_C(1) << 48) - 1));
}

static unsigned int
receive(struct rte_ring *in, uint64_t *frees, uint64_t *bad)
{
	void *msgs[32];
	unsigned int i, n = rte_ring_dequeue_burst(in, msgs, RTE_DIM(msgs), NULL);

	for (i = 0; i < n; i++) {
		size_t size;
		void *p = unpack(msgs[i], &size);

		if (!test_intact(p, size))
			(*bad)++;
		if (i & 1)
			hpm_free_inline(p);
		else
			hpm_free(p);
		(*frees)++;
	}
	return n;
}

/* One round: allocate and send a block, free whatever arrived. */
static void
churn_once(struct rte_ring *out, struct rte_ring *in, uint64_t *rs, uint64_t *allocs,
	uint64_t *frees, uint64_t *bad)
{
	unsigned int align;
	size_t size = pick(rs, &align);
	void *p =
		*allocs & 1 ? hpm_malloc_inline("mp", size, align) : hpm_malloc("mp", size, align);

	if (p != NULL) {
		test_fill(p, size);
		(*allocs)++;
		if (rte_ring_enqueue(out, pack(p, size)) != 0) {
			hpm_free(p);
			(*frees)++;
		}
	}
	receive(in, frees, bad);
}

static int
secondary_main(const char *prefix, enum mode mode)
{
	char prefix_arg[96];
	char *argv[] = {"test_mp", "-l", "1", "--no-pci", "--proc-type=secondary", prefix_arg,
		"--log-level=lib.eal:warning", NULL};
	const struct rte_memzone *mz;
	struct rte_ring *to_secondary, *to_primary;
	struct ctl *ctl;
	uint64_t frees = 0;
	unsigned int i;

	snprintf(prefix_arg, sizeof(prefix_arg), "--file-prefix=%s", prefix);
	if (rte_eal_init(RTE_DIM(argv) - 1, argv) < 0)
		return 2;
	mz = rte_memzone_lookup("mp_ctl");
	to_secondary = rte_ring_lookup("mp_to_secondary");
	to_primary = rte_ring_lookup("mp_to_primary");
	if (mz == NULL || to_secondary == NULL || to_primary == NULL)
		return 3;
	ctl = mz->addr;
	/* attaches to the primary's heap */
	if (hpm_init(NULL) != 0 || strcmp(hpm_source_name(), "eal") != 0)
		return 4;
	if (mode == MODE_CHURN) {
		uint64_t rs = 0x5ec0;

		ctl->secondary_ready = 1;
		while (!ctl->stop)
			churn_once(to_primary, to_secondary, &rs, &ctl->secondary_allocs,
				&ctl->secondary_frees, &ctl->secondary_bad);
		/* what is still on its way to us */
		while (receive(to_secondary, &frees, &ctl->secondary_bad) != 0)
			;
		ctl->secondary_frees += frees;
		hpm_cache_flush();
		ctl->secondary_drained = 1;
		/* the same view from both sides, once neither has anything in flight */
		while (!ctl->primary_quiet)
			rte_pause();
		hpm_malloc_get_socket_stats(0, &ctl->secondary_stats);
		hpm_fini(); /* detaches: the heap stays */
		ctl->secondary_done = 1;
		rte_eal_cleanup();
		return 0;
	}
	/* blocks outstanding: some handed out, some freed into this lcore's cache */
	for (i = 0; i < LEFT_MAX; i++) {
		ctl->left_size[i] = 100 + i * 50;
		ctl->left[i] = hpm_malloc("left", ctl->left_size[i], 0);
		if (ctl->left[i] == NULL)
			return 5;
		test_fill(ctl->left[i], ctl->left_size[i]);
	}
	for (i = 0; i < 16; i++)
		hpm_free(hpm_malloc("cached", 4096, 4096));
	ctl->nleft = LEFT_MAX;
	ctl->secondary_ready = 1;
	if (mode == MODE_EXIT_HOLDING)
		exit(0); /* no hpm_fini, no rte_eal_cleanup */
	for (;;)
		pause(); /* until SIGKILL */
}

static pid_t
spawn(const char *self, const char *prefix, enum mode mode)
{
	pid_t pid = fork();

	if (pid == 0) {
		execl(self, self, "--secondary", prefix, mode_names[mode], (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* True once the secondary is ready; false if it exited first (its status in *status). */
static bool
wait_ready(struct ctl *ctl, pid_t pid, int *status)
{
	while (!ctl->secondary_ready)
		if (waitpid(pid, status, WNOHANG) == pid) {
			if (!test_asan_cannot_map(*status))
				CHECK(false, "the secondary exited early: status %d", *status);
			return false;
		}
	return true;
}

/* A dead secondary left blocks and a cache: the primary takes them back. */
static void
failure_case(const char *self, const char *prefix, struct ctl *ctl, enum mode mode,
	const struct rte_malloc_socket_stats *base)
{
	struct rte_malloc_socket_stats st;
	struct hpm_cache_stats cs, blocks_after;
	unsigned int i, damaged = 0;
	int status;
	void *p;
	pid_t pid;

	memset(ctl, 0, sizeof(*ctl));
	pid = spawn(self, prefix, mode);
	if (!wait_ready(ctl, pid, &status)) {
		if (test_asan_cannot_map(status))
			printf("%s: skipped: under ASan the secondary cannot map the primary's "
			       "memory\n",
				mode_names[mode]);
		return;
	}
	if (mode == MODE_KILLED_HOLDING)
		kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	/* what the dead process had freed is in its lcore's cache, until a check finds it dead */
	CHECK(hpm_cache_stats(1, -1, &cs) == 0 && cs.blocks > 0,
		"%s: the dead secondary's cache holds its blocks", mode_names[mode]);
	CHECK(hpm_heap_check() == 0, "%s: heap check", mode_names[mode]);
	CHECK(hpm_cache_stats(1, -1, &blocks_after) == 0 && blocks_after.blocks == 0,
		"%s: the check gave the dead secondary's cache back: %" PRIu64 " blocks left",
		mode_names[mode], blocks_after.blocks);
	CHECK(hpm_malloc_get_socket_stats(0, &st) == 0 &&
			st.alloc_count == base->alloc_count + ctl->nleft,
		"%s: %u blocks live, expected %u left by the secondary", mode_names[mode],
		st.alloc_count, base->alloc_count + ctl->nleft);
	/* the heap is usable */
	p = hpm_malloc("after", 4096, 4096);
	CHECK(p != NULL, "%s: allocation after the death", mode_names[mode]);
	hpm_free(p);
	for (i = 0; i < ctl->nleft; i++) {
		damaged += !test_intact(ctl->left[i], ctl->left_size[i]);
		hpm_free(ctl->left[i]);
	}
	CHECK(damaged == 0, "%s: %u blocks left behind were damaged", mode_names[mode], damaged);
	hpm_cache_flush();
	CHECK(hpm_heap_check() == 0, "%s: heap check after the clean-up", mode_names[mode]);
	CHECK(hpm_malloc_get_socket_stats(0, &st) == 0 && st.alloc_count == base->alloc_count &&
			st.heap_allocsz_bytes == base->heap_allocsz_bytes,
		"%s: after the clean-up %u blocks, %zu bytes (start %u, %zu)", mode_names[mode],
		st.alloc_count, st.heap_allocsz_bytes, base->alloc_count, base->heap_allocsz_bytes);
	printf("%s: the secondary left %u blocks and %" PRIu64
	       " cached; heap consistent and usable; "
	       "all taken back by the primary\n",
		mode_names[mode], ctl->nleft, cs.blocks);
}

static struct rte_ring *baseline_to_worker, *baseline_to_main;
static volatile int baseline_stop;
static uint64_t baseline_allocs, baseline_frees, baseline_bad;

static int
baseline_worker(void *arg)
{
	uint64_t rs = 0x5ec0;

	RTE_SET_USED(arg);
	while (!baseline_stop)
		churn_once(baseline_to_main, baseline_to_worker, &rs, &baseline_allocs,
			&baseline_frees, &baseline_bad);
	while (receive(baseline_to_worker, &baseline_frees, &baseline_bad) != 0)
		;
	hpm_cache_flush();
	return 0;
}

/* The same exchange between lcores 0 and 1 of one process: the rate to compare with. */
static int
in_process(double seconds)
{
	char prefix_arg[96];
	char *eal_argv[] = {"test_mp", "-l", "0-1", "--no-pci", prefix_arg, "--huge-unlink=always",
		"--log-level=lib.eal:warning", NULL};
	uint64_t allocs = 0, frees = 0, bad = 0, rs = 0x9e1, end;
	unsigned int worker;

	snprintf(prefix_arg, sizeof(prefix_arg), "--file-prefix=hpmt_mpbase_%d", (int)getpid());
	if (rte_eal_init(RTE_DIM(eal_argv) - 1, eal_argv) < 0)
		return TEST_SKIP;
	worker = rte_get_next_lcore(-1, 1, 0);
	baseline_to_worker =
		rte_ring_create("base_w", 4096, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	baseline_to_main =
		rte_ring_create("base_m", 4096, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	CHECK(worker < RTE_MAX_LCORE && baseline_to_worker != NULL && baseline_to_main != NULL &&
			hpm_init(NULL) == 0,
		"setup");
	rte_eal_remote_launch(baseline_worker, NULL, worker);
	end = rte_get_timer_cycles() + (uint64_t)(seconds * rte_get_timer_hz());
	while (rte_get_timer_cycles() < end)
		churn_once(baseline_to_worker, baseline_to_main, &rs, &allocs, &frees, &bad);
	baseline_stop = 1;
	rte_eal_wait_lcore(worker);
	while (receive(baseline_to_main, &frees, &bad) != 0)
		;
	printf("in-process %.0f s: lcore 0 %" PRIu64 " allocs, lcore 1 %" PRIu64
	       "; %.2f M allocs/s in all, %" PRIu64 " damaged\n",
		seconds, allocs, baseline_allocs, (allocs + baseline_allocs) / seconds / 1e6,
		bad + baseline_bad);
	CHECK(allocs + baseline_allocs == frees + baseline_frees, "every block freed once");
	CHECK(bad + baseline_bad == 0, "blocks damaged");
	hpm_fini();
	return test_end("mp_in_process");
}

int
main(int argc, char **argv)
{
	char prefix[64], prefix_arg[96];
	char *eal_argv[] = {argv[0], "-l", "0", "--no-pci", "--proc-type=primary", prefix_arg,
		"--log-level=lib.eal:warning", TEST_EAL_SHARED_VA NULL};
	struct rte_malloc_socket_stats base, st;
	struct rte_ring *to_secondary, *to_primary;
	const struct rte_memzone *mz;
	uint64_t allocs = 0, frees = 0, bad = 0;
	double seconds = 5;
	struct ctl *ctl;
	int status, i;
	pid_t pid;

	if (argc == 4 && !strcmp(argv[1], "--secondary"))
		return secondary_main(argv[2],
			!strcmp(argv[3], "churn")          ? MODE_CHURN
				: !strcmp(argv[3], "exit") ? MODE_EXIT_HOLDING
							   : MODE_KILLED_HOLDING);
	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--duration") && i + 1 < argc)
			seconds = atof(argv[++i]);
	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--in-process"))
			return in_process(seconds);
	snprintf(prefix, sizeof(prefix), "hpmt_mp_%d", (int)getpid());
	snprintf(prefix_arg, sizeof(prefix_arg), "--file-prefix=%s", prefix);
	if (rte_eal_init(RTE_DIM(eal_argv) - 1, eal_argv) < 0)
		return TEST_SKIP;
	mz = rte_memzone_reserve("mp_ctl", sizeof(*ctl), SOCKET_ID_ANY, 0);
	to_secondary = rte_ring_create("mp_to_secondary", 4096, SOCKET_ID_ANY,
		RING_F_SP_ENQ | RING_F_SC_DEQ);
	to_primary = rte_ring_create("mp_to_primary", 4096, SOCKET_ID_ANY,
		RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (mz == NULL || to_secondary == NULL || to_primary == NULL)
		return 1;
	ctl = mz->addr;
	memset(ctl, 0, sizeof(*ctl));
	CHECK(hpm_init(NULL) == 0, "hpm_init in the primary");
	CHECK(hpm_malloc_get_socket_stats(0, &base) == 0, "stats");

	pid = spawn(argv[0], prefix, MODE_CHURN);
	if (!wait_ready(ctl, pid, &status) && test_asan_cannot_map(status)) {
		printf("SKIP: under ASan the secondary cannot map the primary's memory\n");
		hpm_fini();
		rte_ring_free(to_secondary);
		rte_ring_free(to_primary);
		rte_memzone_free(mz);
		status = test_end("mp");
		rte_eal_cleanup();
		test_remove_hugepage_files(prefix);
		return status == 0 ? TEST_SKIP : status;
	}
	/* a loop the primary leaves by time */
	{
		uint64_t end = rte_get_timer_cycles() + (uint64_t)(seconds * rte_get_timer_hz());
		uint64_t rs = 0x9e1;

		while (rte_get_timer_cycles() < end && bad == 0)
			churn_once(to_secondary, to_primary, &rs, &allocs, &frees, &bad);
	}
	ctl->stop = 1;
	while (!ctl->secondary_drained && waitpid(pid, &status, WNOHANG) == 0)
		receive(to_primary, &frees, &bad);
	while (receive(to_primary, &frees, &bad) != 0)
		;
	hpm_cache_flush();
	ctl->primary_quiet = 1;
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "secondary status %d", status);
	printf("churn %.0f s: primary %" PRIu64 " allocs, secondary %" PRIu64 "; %" PRIu64
	       " frees in all, %.2f M allocs/s, %" PRIu64 " damaged\n",
		seconds, allocs, ctl->secondary_allocs, frees + ctl->secondary_frees,
		(allocs + ctl->secondary_allocs) / seconds / 1e6, bad + ctl->secondary_bad);
	CHECK(allocs > 0 && ctl->secondary_allocs > 0, "both processes allocated");
	CHECK(bad + ctl->secondary_bad == 0, "blocks damaged across processes");
	CHECK(allocs + ctl->secondary_allocs == frees + ctl->secondary_frees,
		"every block freed once: %" PRIu64 " allocs, %" PRIu64 " frees",
		allocs + ctl->secondary_allocs, frees + ctl->secondary_frees);
	CHECK(hpm_heap_check() == 0, "heap check");
	CHECK(hpm_malloc_get_socket_stats(0, &st) == 0, "stats");
	CHECK(st.alloc_count == base.alloc_count &&
			st.heap_allocsz_bytes == base.heap_allocsz_bytes,
		"primary after the churn: %u blocks, %zu bytes (start %u, %zu)", st.alloc_count,
		st.heap_allocsz_bytes, base.alloc_count, base.heap_allocsz_bytes);
	CHECK(ctl->secondary_stats.heap_totalsz_bytes == st.heap_totalsz_bytes &&
			ctl->secondary_stats.alloc_count == st.alloc_count,
		"the secondary saw %zu bytes, %u blocks; the primary %zu, %u",
		ctl->secondary_stats.heap_totalsz_bytes, ctl->secondary_stats.alloc_count,
		st.heap_totalsz_bytes, st.alloc_count);

	failure_case(argv[0], prefix, ctl, MODE_EXIT_HOLDING, &base);
	failure_case(argv[0], prefix, ctl, MODE_KILLED_HOLDING, &base);

	hpm_fini();
	rte_ring_free(to_secondary);
	rte_ring_free(to_primary);
	rte_memzone_free(mz);
	status = test_end("mp");
	rte_eal_cleanup();
	test_remove_hugepage_files(prefix);
	return status;
}
