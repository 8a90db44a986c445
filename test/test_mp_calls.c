/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * One heap across processes, for every call and every process (suite mp).
 * The primary runs this program again as secondaries, each on an lcore of
 * its own, and compares what they did with its own view of the heap:
 *
 *   first       for each public entry point, a secondary whose first
 *               hpmalloc call is that one, on blocks of every route (heap,
 *               4K and 64K granules, large) that the primary allocated: the
 *               effect matches the primary's, and after the drain the
 *               statistics equal the baseline, block for block, byte for byte
 *   before      a secondary that starts before the primary made a heap: it
 *               makes it, allocates, leaves; the primary's first call frees
 *   three       a primary and two secondaries exchange at least 10^6 blocks
 *               of mixed sizes in a ring of rte_rings, each block's contents
 *               checked at its free: 0 lost, 0 corrupt
 *   three-local the same exchange between three lcores of one process (the
 *               rate to compare with; checked the same way)
 *   cache-death a secondary killed with SIGKILL after freeing thousands of
 *               blocks into its cache: after the primary's next trim they
 *               are free, and allocated again (the heap does not grow)
 *   cache-death-check  the same, found by the primary's next check: every
 *               granule it freed is handed out again
 *   lock-death  a secondary killed while it holds the socket's heap lock:
 *               the primary does not hang; every later call on the socket
 *               fails with ENOTRECOVERABLE (the heap may be half-changed),
 *               and the heap is never used again
 *   attach-race a secondary looks at the heap (statistics, source name)
 *               over and over while the primary's hpm_init() fails 40 times
 *               (its initial_size more than --socket-limit): the zone the
 *               secondary found went away under it (SIGSEGV); now each
 *               look finds a heap or none, and never makes one
 *
 * usage: test_mp_calls CASE
 *        test_mp_calls --secondary PREFIX CASE [ARG]   (run by the primary)
 */

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_memzone.h>
#include <rte_pause.h>
#include <rte_ring.h>

#include "hpm_malloc.h"
#include "test_common.h"

/* the test hook of lock-death: a secondary takes the heap's lock and dies */
#include "arena.h"
#include "state.h"

#define CTL_ZONE "mpc_ctl"
#define NROUTES 4
#define NFREED_MAX 4096
#define DUMP_MAX 8192
/* blocks the ring of case three moves; HPM_TEST_OPS (checking builds) makes it fewer */
static uint64_t three_blocks = 1000000;
/* What case three's heap holds from the start: more than its rings can hold live. */
#define THREE_HEAP (size_t)(512u << 20)

static const size_t route_size[NROUTES] = {64, 4096, 65536, 3u << 20};
static const unsigned int route_align[NROUTES] = {0, 4096, 65536, 0};
static const char *const route_names[NROUTES] = {"64 B", "4K/4K", "64K/64K", "3 MiB"};

/* Shared between the processes, in a memzone. */
struct ctl {
	volatile int ready;
	volatile int done;
	volatile int stop;
	volatile int stopped[3];
	volatile int drained[3];
	int failures;
	void *blk[NROUTES];
	void *moved[NROUTES];
	/* what the secondary saw */
	int validate_rc[NROUTES];
	size_t validate_size[NROUTES];
	size_t usable[NROUTES];
	int owns[NROUTES];
	rte_iova_t iova[NROUTES];
	int rc;
	size_t trimmed;
	uint64_t count;
	struct rte_malloc_socket_stats stats;
	struct hpm_cache_stats cache;
	char dump[DUMP_MAX];
	/* three */
	uint64_t total_allocs;
	uint64_t allocs[3], frees[3], bad[3];
	/* cache-death */
	unsigned int nfreed;
	void *freed[NFREED_MAX];
	size_t freed_size[NFREED_MAX];
	uint64_t cached_blocks;
	/* attach-race */
	uint64_t looks, attaches;
};

static struct ctl *ctl;

/* A pattern that does not depend on where the block is: realloc moves it. */
static void
pattern_fill(void *p, size_t size, unsigned int seed)
{
	uint8_t *b = p;
	size_t i, step = size > 65536 ? 4093 : 1;

	for (i = 0; i < size; i += step)
		b[i] = (uint8_t)(i * 31 + seed);
	b[size - 1] = (uint8_t)(seed ^ 0x5a);
}

static bool
pattern_intact(const void *p, size_t size, unsigned int seed)
{
	const uint8_t *b = p;
	size_t i, step = size > 65536 ? 4093 : 1;

	for (i = 0; i < size - 1; i += step)
		if (b[i] != (uint8_t)(i * 31 + seed))
			return false;
	return b[size - 1] == (uint8_t)(seed ^ 0x5a);
}

static const char *self_path;
static char prefix[64];

static pid_t
spawn(const char *name, const char *arg)
{
	pid_t pid = fork();

	if (pid == 0) {
		execl(self_path, self_path, "--secondary", prefix, name, arg, (char *)NULL);
		_exit(127);
	}
	return pid;
}

static bool asan_skipped;

/* Run a secondary to its end; false (and a failure) unless it passed. */
static bool
run_secondary(const char *name, const char *arg)
{
	int status;
	pid_t pid;

	ctl->failures = 0;
	ctl->ready = 0;
	ctl->done = 0;
	pid = spawn(name, arg);
	waitpid(pid, &status, 0);
	if (test_asan_cannot_map(status)) {
		asan_skipped = true;
		return false;
	}
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0 && ctl->failures == 0,
		"secondary %s %s: status %d, %d failures", name, arg != NULL ? arg : "", status,
		ctl->failures);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 && ctl->failures == 0;
}

/* Start a secondary that stays; false when it exited first. */
static bool
start_secondary(const char *name, const char *arg, pid_t *pid)
{
	int status;

	ctl->failures = 0;
	ctl->ready = 0;
	*pid = spawn(name, arg);
	while (!ctl->ready)
		if (waitpid(*pid, &status, WNOHANG) == *pid) {
			if (test_asan_cannot_map(status))
				asan_skipped = true;
			else
				CHECK(false, "secondary %s exited early: status %d", name, status);
			return false;
		}
	return true;
}

static int
eal_start(const char *lcores, bool secondary, const char *limit)
{
	char prefix_arg[96], lcores_arg[32];
	char *argv[] = {"test_mp_calls", lcores_arg, "--no-pci", prefix_arg,
		secondary ? "--proc-type=secondary" : "--proc-type=primary",
		"--log-level=lib.eal:warning", TEST_EAL_SHARED_VA(char *)(uintptr_t) limit, NULL};

	snprintf(prefix_arg, sizeof(prefix_arg), "--file-prefix=%s", prefix);
	snprintf(lcores_arg, sizeof(lcores_arg), "--lcores=%s", lcores);
	return rte_eal_init(RTE_DIM(argv) - 1 - (limit == NULL), argv);
}

/* ------------------------------------------------------------------------ */
/* Secondaries */

static void
dump_to(char *buf, void (*dump)(FILE *))
{
	FILE *f = fmemopen(buf, DUMP_MAX - 1, "w");

	memset(buf, 0, DUMP_MAX);
	if (f != NULL) {
		dump(f);
		fclose(f);
	}
}

static void
dump_stats(FILE *f)
{
	hpm_malloc_dump_stats(f, NULL);
}

static void
dump_heaps(FILE *f)
{
	hpm_malloc_dump_heaps(f);
}

/* The secondary's first hpmalloc call is `call`. */
static void
first_call(const char *call)
{
	unsigned int i;
	int local;

	if (!strcmp(call, "free")) {
		for (i = 0; i < NROUTES; i++)
			hpm_free(ctl->blk[i]);
	} else if (!strcmp(call, "free_bulk")) {
		hpm_free_bulk(ctl->blk, NROUTES);
	} else if (!strcmp(call, "realloc")) {
		for (i = 0; i < NROUTES; i++)
			ctl->moved[i] = hpm_realloc(ctl->blk[i], 2 * route_size[i], route_align[i]);
	} else if (!strcmp(call, "validate")) {
		for (i = 0; i < NROUTES; i++)
			ctl->validate_rc[i] =
				hpm_malloc_validate(ctl->blk[i], &ctl->validate_size[i]);
	} else if (!strcmp(call, "usable_size")) {
		for (i = 0; i < NROUTES; i++)
			ctl->usable[i] = hpm_malloc_usable_size(ctl->blk[i]);
	} else if (!strcmp(call, "owns")) {
		for (i = 0; i < NROUTES; i++)
			ctl->owns[i] = hpm_malloc_owns(ctl->blk[i]);
		CHECK(!hpm_malloc_owns(&local), "owns a stack variable");
	} else if (!strcmp(call, "virt2iova")) {
		for (i = 0; i < NROUTES; i++)
			ctl->iova[i] = hpm_malloc_virt2iova(ctl->blk[i]);
	} else if (!strcmp(call, "stats")) {
		ctl->rc = hpm_malloc_get_socket_stats(0, &ctl->stats);
	} else if (!strcmp(call, "dump_stats")) {
		dump_to(ctl->dump, dump_stats);
	} else if (!strcmp(call, "dump_heaps")) {
		dump_to(ctl->dump, dump_heaps);
	} else if (!strcmp(call, "check")) {
		ctl->rc = hpm_heap_check();
	} else if (!strcmp(call, "trim")) {
		ctl->trimmed = hpm_heap_trim();
	} else if (!strcmp(call, "cache_flush")) {
		hpm_cache_flush();
		ctl->rc = hpm_cache_stats(1, -1, &ctl->cache);
	} else if (!strcmp(call, "cache_flush_lcore")) {
		ctl->rc = hpm_cache_flush_lcore(0);
	} else if (!strcmp(call, "cache_stats")) {
		ctl->rc = hpm_cache_stats(0, -1, &ctl->cache);
	} else if (!strcmp(call, "bad_free_count")) {
		ctl->count = hpm_bad_free_count();
	} else if (!strcmp(call, "source_name")) {
		const char *name = hpm_source_name();

		ctl->rc = name != NULL && strcmp(name, "eal") == 0 ? 0 : -1;
	} else if (!strcmp(call, "malloc")) {
		for (i = 0; i < NROUTES; i++) {
			ctl->moved[i] = hpm_malloc("first", route_size[i], route_align[i]);
			if (ctl->moved[i] != NULL)
				pattern_fill(ctl->moved[i], route_size[i], 100 + i);
		}
	} else {
		CHECK(false, "unknown call %s", call);
	}
}

/* The secondary of case three: lcore `me` of the ring 0 -> 1 -> 2 -> 0. */
static unsigned int
three_receive(struct rte_ring *in, unsigned int me)
{
	void *msgs[32];
	unsigned int i, n = rte_ring_dequeue_burst(in, msgs, RTE_DIM(msgs), NULL);

	for (i = 0; i < n; i++) {
		size_t size = (uintptr_t)msgs[i] >> 48;
		void *p = (void *)((uintptr_t)msgs[i] & ((UINT64_C(1) << 48) - 1));

		if (!test_intact(p, size))
			ctl->bad[me]++;
		hpm_free(p);
		ctl->frees[me]++;
	}
	return n;
}

static size_t
three_pick(uint64_t *rs, unsigned int *align)
{
	unsigned int r = test_rand(rs) % 10;

	*align = r < 3 ? 4096 : r < 4 ? 65536 : 0;
	if (*align != 0)
		return *align * (1 + (r == 0));
	return 1 + test_rand(rs) % (r < 9 ? 1024 : 30000);
}

/*
 * The primary's secondaries in case three: a wait on them ends if one died.
 * One that drained and exited 0 while the primary was still in its last
 * loop (preempted between reading a stop flag and looking) has finished,
 * not died: its status is kept for the final check.
 */
static pid_t three_pids[2];
static bool three_reaped[2];
static int three_status[2];

static bool
three_peer_gone(unsigned int me)
{
	unsigned int i;
	int status;

	if (me != 0)
		return getppid() == 1; /* the primary is gone */
	for (i = 0; i < RTE_DIM(three_pids); i++)
		if (three_pids[i] > 0 && !three_reaped[i] &&
			waitpid(three_pids[i], &status, WNOHANG) == three_pids[i]) {
			three_reaped[i] = true;
			three_status[i] = status;
			if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && ctl->drained[i + 1])
				continue;
			CHECK(false, "three: secondary %u ended early: status %d", i + 1, status);
			three_pids[i] = 0;
			return true;
		}
	return false;
}

static void
three_run(unsigned int me, unsigned int n)
{
	char name[32];
	struct rte_ring *out, *in;
	uint64_t rs = 0x3e1 + me;
	unsigned int i;

	snprintf(name, sizeof(name), "mpc_ring%u", me);
	out = rte_ring_lookup(name);
	snprintf(name, sizeof(name), "mpc_ring%u", (me + n - 1) % n);
	in = rte_ring_lookup(name);
	CHECK(out != NULL && in != NULL, "rings");
	if (out == NULL || in == NULL)
		return;
	while (!ctl->stop) {
		if ((ctl->allocs[me] & 16383) == 0 && three_peer_gone(me)) {
			ctl->bad[me]++;
			break;
		}
		for (i = 0; i < 16; i++) {
			unsigned int align;
			size_t size = three_pick(&rs, &align);
			void *p = hpm_malloc("three", size, align);

			if (p == NULL) {
				ctl->bad[me]++;
				continue;
			}
			test_fill(p, size);
			ctl->allocs[me]++;
			if (rte_ring_enqueue(out,
				    (void *)((uintptr_t)p | ((uintptr_t)size << 48))) != 0) {
				hpm_free(p);
				ctl->frees[me]++;
			}
		}
		if (__atomic_add_fetch(&ctl->total_allocs, 16, __ATOMIC_RELAXED) >= three_blocks &&
			me == 0)
			ctl->stop = 1;
		three_receive(in, me);
	}
	/* nobody sends once all have stopped: then the rings drain */
	ctl->stopped[me] = 1;
	for (i = 0; i < n; i++)
		while (!ctl->stopped[i]) {
			three_receive(in, me);
			if (three_peer_gone(me)) {
				ctl->bad[me]++;
				return;
			}
		}
	while (three_receive(in, me) != 0)
		;
	hpm_cache_flush();
	ctl->drained[me] = 1;
}

/* What the secondary of cache-death leaves in its cache before it is killed. */
static void
fill_cache_and_wait(void)
{
	static const size_t sizes[] = {4096, 65536, 64, 200, 1000};
	static const unsigned int aligns[] = {4096, 65536, 0, 0, 0};
	static const unsigned int counts[] = {1500, 200, 600, 300, 100};
	struct hpm_cache_stats cs;
	unsigned int k, i, n = 0;

	for (k = 0; k < RTE_DIM(sizes); k++)
		for (i = 0; i < counts[k] && n < NFREED_MAX; i++) {
			ctl->freed[n] = hpm_malloc("dying", sizes[k], aligns[k]);
			ctl->freed_size[n] = sizes[k];
			if (ctl->freed[n] == NULL) {
				CHECK(false, "allocation %u", n);
				break;
			}
			n++;
		}
	ctl->nfreed = n;
	/* freed last-allocated first: the cache keeps the ones it can hold */
	for (i = n; i > 0; i--)
		hpm_free(ctl->freed[i - 1]);
	CHECK(hpm_cache_stats(rte_lcore_id(), -1, &cs) == 0, "cache stats");
	ctl->cached_blocks = cs.blocks;
	ctl->ready = 1;
	for (;;)
		pause();
}

/* attach-race's secondary: look at the heap until the primary says stop. */
static void
look_until_stopped(void)
{
	struct rte_malloc_socket_stats st;

	ctl->ready = 1;
	while (!ctl->stop) {
		if (rte_memzone_lookup("hpm_state") == NULL)
			continue;
		ctl->looks++;
		(void)hpm_malloc_get_socket_stats(0, &st);
		if (hpm_source_name() != NULL) {
			ctl->attaches++;
			hpm_fini(); /* detaches */
		}
	}
}

static int
secondary_main(const char *call, const char *arg)
{
	const struct rte_memzone *mz;
	const char *lcores = arg != NULL ? arg : "1";

	if (eal_start(lcores, true, NULL) < 0)
		return 2;
	mz = rte_memzone_lookup(CTL_ZONE);
	if (mz == NULL)
		return 3;
	ctl = mz->addr;
	if (!strcmp(call, "lock")) {
		/* attach, then die holding socket 0's lock (the test hook) */
		if (hpm_init(NULL) != 0 || !hpm_arena_lock(&hpm_state->arenas[0]))
			return 4;
		ctl->ready = 1;
		for (;;)
			pause();
	}
	if (!strcmp(call, "cache-death"))
		fill_cache_and_wait();
	if (!strcmp(call, "attach-race")) {
		look_until_stopped();
		rte_eal_cleanup();
		return 0;
	}
	if (!strncmp(call, "three", 5)) {
		unsigned int me = (unsigned int)atoi(call + 5);

		ctl->ready = 1;
		three_run(me, 3);
	} else if (!strcmp(call, "before")) {
		first_call("malloc");
	} else {
		first_call(call);
	}
	ctl->failures += (int)test_failures;
	hpm_fini(); /* detaches: the heap stays */
	rte_eal_cleanup();
	return 0;
}

/* ------------------------------------------------------------------------ */
/* The primary's cases */

static void
blocks_alloc(unsigned int seed)
{
	unsigned int i;

	for (i = 0; i < NROUTES; i++) {
		ctl->blk[i] = hpm_malloc("primary", route_size[i], route_align[i]);
		CHECK(ctl->blk[i] != NULL, "%s block", route_names[i]);
		if (ctl->blk[i] != NULL)
			pattern_fill(ctl->blk[i], route_size[i], seed + i);
		ctl->moved[i] = NULL;
	}
}

static void
blocks_free(void)
{
	unsigned int i;

	for (i = 0; i < NROUTES; i++) {
		hpm_free(ctl->blk[i]);
		ctl->blk[i] = NULL;
	}
}

/* The heap is back where it started, as the primary sees it after its own flush. */
static void
at_baseline(const char *what, const struct rte_malloc_socket_stats *base)
{
	struct rte_malloc_socket_stats st;

	hpm_cache_flush();
	CHECK(hpm_heap_check() == 0, "%s: heap check", what);
	CHECK(hpm_malloc_get_socket_stats(0, &st) == 0 && st.alloc_count == base->alloc_count &&
			st.heap_allocsz_bytes == base->heap_allocsz_bytes,
		"%s: %u blocks, %zu bytes allocated; baseline %u, %zu", what, st.alloc_count,
		st.heap_allocsz_bytes, base->alloc_count, base->heap_allocsz_bytes);
}

static const char *const first_calls[] = {"free", "free_bulk", "realloc", "validate", "usable_size",
	"owns", "virt2iova", "stats", "dump_stats", "dump_heaps", "check", "trim", "cache_flush",
	"cache_flush_lcore", "cache_stats", "bad_free_count", "source_name", "malloc"};

/* Compare one first call's effect with the primary's own view; free what is left. */
static void
first_compare(const char *call)
{
	char mine[DUMP_MAX];
	struct rte_malloc_socket_stats st;
	struct hpm_cache_stats cs;
	unsigned int i;
	size_t size;

	if (!strcmp(call, "free") || !strcmp(call, "free_bulk")) {
		for (i = 0; i < NROUTES; i++)
			CHECK(hpm_malloc_validate(ctl->blk[i], NULL) == -1,
				"%s: the %s block is still live", call, route_names[i]);
		return;
	}
	if (!strcmp(call, "realloc") || !strcmp(call, "malloc")) {
		for (i = 0; i < NROUTES; i++) {
			bool re = call[0] == 'r';
			size_t want = re ? 2 * route_size[i] : route_size[i];

			CHECK(ctl->moved[i] != NULL &&
					hpm_malloc_usable_size(ctl->moved[i]) >= want,
				"%s: %s block", call, route_names[i]);
			if (ctl->moved[i] != NULL)
				CHECK(pattern_intact(ctl->moved[i], route_size[i],
					      re ? (unsigned int)(1 + i) : (unsigned int)(100 + i)),
					"%s: %s block's contents", call, route_names[i]);
			if (re && ctl->moved[i] != ctl->blk[i])
				CHECK(hpm_malloc_validate(ctl->blk[i], NULL) == -1,
					"realloc: the old %s block is still live", route_names[i]);
			hpm_free(ctl->moved[i]);
		}
		if (call[0] == 'm')
			blocks_free();
		return;
	}
	for (i = 0; i < NROUTES; i++) {
		if (!strcmp(call, "validate"))
			CHECK(ctl->validate_rc[i] == 0 &&
					hpm_malloc_validate(ctl->blk[i], &size) == 0 &&
					ctl->validate_size[i] == size,
				"validate: %s block: rc %d size %zu (the primary: %zu)",
				route_names[i], ctl->validate_rc[i], ctl->validate_size[i], size);
		if (!strcmp(call, "usable_size"))
			CHECK(ctl->usable[i] >= route_size[i] &&
					ctl->usable[i] == hpm_malloc_usable_size(ctl->blk[i]),
				"usable_size: %s block: %zu, the primary %zu", route_names[i],
				ctl->usable[i], hpm_malloc_usable_size(ctl->blk[i]));
		if (!strcmp(call, "owns"))
			CHECK(ctl->owns[i] == 1, "owns: %s block", route_names[i]);
		if (!strcmp(call, "virt2iova"))
			CHECK(ctl->iova[i] != RTE_BAD_IOVA &&
					ctl->iova[i] == hpm_malloc_virt2iova(ctl->blk[i]),
				"virt2iova: %s block", route_names[i]);
	}
	if (!strcmp(call, "stats")) {
		CHECK(ctl->rc == 0 && hpm_malloc_get_socket_stats(0, &st) == 0 &&
				st.heap_totalsz_bytes == ctl->stats.heap_totalsz_bytes &&
				st.heap_allocsz_bytes == ctl->stats.heap_allocsz_bytes &&
				st.alloc_count == ctl->stats.alloc_count &&
				st.free_count == ctl->stats.free_count,
			"stats: the secondary saw %zu bytes in %u blocks of %zu; the primary %zu "
			"in %u of %zu",
			ctl->stats.heap_allocsz_bytes, ctl->stats.alloc_count,
			ctl->stats.heap_totalsz_bytes, st.heap_allocsz_bytes, st.alloc_count,
			st.heap_totalsz_bytes);
	}
	if (!strcmp(call, "dump_stats") || !strcmp(call, "dump_heaps")) {
		dump_to(mine, call[5] == 's' ? dump_stats : dump_heaps);
		CHECK(strstr(ctl->dump, "Heap id:0") != NULL && strcmp(mine, ctl->dump) == 0,
			"%s: the secondary's dump differs:\n%s\nthe primary's:\n%s", call,
			ctl->dump, mine);
	}
	if (!strcmp(call, "check"))
		CHECK(ctl->rc == 0, "check: %d", ctl->rc);
	if (!strcmp(call, "cache_flush"))
		CHECK(ctl->rc == 0 && ctl->cache.blocks == 0,
			"cache_flush: rc %d, %" PRIu64 " left", ctl->rc, ctl->cache.blocks);
	if (!strcmp(call, "cache_flush_lcore"))
		CHECK(ctl->rc == 0 && hpm_cache_stats(0, -1, &cs) == 0 && cs.blocks == 0,
			"cache_flush_lcore: the primary's lcore still holds %" PRIu64 " blocks",
			cs.blocks);
	if (!strcmp(call, "cache_stats"))
		CHECK(ctl->rc == 0 && hpm_cache_stats(0, -1, &cs) == 0 &&
				cs.blocks == ctl->cache.blocks && cs.hits == ctl->cache.hits &&
				cs.misses == ctl->cache.misses && ctl->cache.blocks > 0,
			"cache_stats: the secondary saw %" PRIu64 " blocks, the primary %" PRIu64,
			ctl->cache.blocks, cs.blocks);
	if (!strcmp(call, "bad_free_count"))
		CHECK(ctl->count == hpm_bad_free_count(), "bad_free_count: %" PRIu64 " vs %" PRIu64,
			ctl->count, hpm_bad_free_count());
	if (!strcmp(call, "source_name"))
		CHECK(ctl->rc == 0, "source_name");
	blocks_free();
}

static void
case_first(void)
{
	struct rte_malloc_socket_stats base, st;
	unsigned int c, i;
	void *spare[64];

	CHECK(hpm_init(NULL) == 0, "hpm_init");
	hpm_cache_flush();
	CHECK(hpm_malloc_get_socket_stats(0, &base) == 0, "stats");
	for (c = 0; c < RTE_DIM(first_calls) && !asan_skipped; c++) {
		const char *call = first_calls[c];

		blocks_alloc(1);
		if (!strcmp(call, "trim")) {
			/* empty chunks beyond what the heap keeps, within their release delay */
			for (i = 0; i < RTE_DIM(spare); i++)
				spare[i] = hpm_malloc("spare", 3u << 20, 0);
			for (i = 0; i < RTE_DIM(spare); i++)
				hpm_free(spare[i]);
		}
		if (!strcmp(call, "cache_flush_lcore") || !strcmp(call, "cache_stats"))
			hpm_free(hpm_malloc("cached", 200, 0)); /* the primary's cache holds some */
		CHECK(hpm_malloc_get_socket_stats(0, &st) == 0, "stats");
		if (!run_secondary(call, NULL))
			continue;
		if (!strcmp(call, "trim")) {
			struct rte_malloc_socket_stats after;

			CHECK(hpm_malloc_get_socket_stats(0, &after) == 0 && ctl->trimmed > 0 &&
					after.heap_totalsz_bytes + ctl->trimmed ==
						st.heap_totalsz_bytes,
				"trim: the secondary released %zu bytes; the heap went from %zu to %zu",
				ctl->trimmed, st.heap_totalsz_bytes, after.heap_totalsz_bytes);
		}
		first_compare(call);
		at_baseline(call, &base);
		printf("first call %s in a secondary: as in the primary\n", call);
	}
}

static void
case_before(void)
{
	struct rte_malloc_socket_stats st;
	unsigned int i;

	/* nothing of hpmalloc's yet: the secondary's hpm_malloc makes the heap */
	if (!run_secondary("before", NULL))
		return;
	for (i = 0; i < NROUTES; i++) {
		CHECK(ctl->moved[i] != NULL &&
				pattern_intact(ctl->moved[i], route_size[i], 100 + i),
			"before: %s block", route_names[i]);
		hpm_free(ctl->moved[i]); /* the primary's first call */
	}
	CHECK(hpm_source_name() != NULL && strcmp(hpm_source_name(), "eal") == 0,
		"before: the primary attached");
	hpm_cache_flush();
	CHECK(hpm_heap_check() == 0, "before: heap check");
	CHECK(hpm_malloc_get_socket_stats(0, &st) == 0 && st.alloc_count == 0 &&
			st.heap_allocsz_bytes == 0,
		"before: %u blocks, %zu bytes left", st.alloc_count, st.heap_allocsz_bytes);
	printf("a secondary that came first made the heap; the primary freed its blocks\n");
}

static int
three_local_worker(void *arg)
{
	three_run((unsigned int)(uintptr_t)arg, 3);
	return 0;
}

/* A ring 0 -> 1 -> 2 -> 0 of processes (or of lcores of this process, local). */
static void
case_three(bool local)
{
	struct rte_malloc_socket_stats base;
	struct rte_ring *rings[3];
	char name[32];
	uint64_t start, allocs = 0, frees = 0, bad = 0;
	pid_t pids[2];
	unsigned int i, lcore;
	double seconds;
	struct hpm_config cfg;
	int status;

	/*
	 * Three processes spinning on two CPUs: a memzone reserved or freed
	 * while they run makes EAL ask every process to map or unmap it, and a
	 * reply that takes more than EAL's timeout (EAL: Request timed out)
	 * can leave EAL's memory locks held and the processes waiting on each
	 * other for good (one run in eight of the whole suite here). The heap
	 * holds what the run needs from the start (the first case grows it
	 * from a secondary).
	 */
	hpm_config_defaults(&cfg);
	if (!local) {
		cfg.initial_size = THREE_HEAP;
		cfg.retain_size = THREE_HEAP;
	}
	CHECK(hpm_init(&cfg) == 0, "hpm_init");
	hpm_cache_flush();
	CHECK(hpm_malloc_get_socket_stats(0, &base) == 0, "stats");
	for (i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "mpc_ring%u", i);
		rings[i] =
			rte_ring_create(name, 4096, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
		CHECK(rings[i] != NULL, "ring");
	}
	start = rte_get_timer_cycles();
	if (local) {
		i = 1;
		RTE_LCORE_FOREACH_WORKER (lcore)
			if (i < 3)
				rte_eal_remote_launch(three_local_worker, (void *)(uintptr_t)i++,
					lcore);
		CHECK(i == 3, "three lcores");
	} else {
		if (!start_secondary("three1", "1", &pids[0]))
			return;
		if (!start_secondary("three2", "2@0", &pids[1])) {
			kill(pids[0], SIGKILL);
			waitpid(pids[0], &status, 0);
			return;
		}
		three_pids[0] = pids[0];
		three_pids[1] = pids[1];
		three_reaped[0] = three_reaped[1] = false;
	}
	/* the primary's part; it stops everyone once the ring moved enough blocks */
	three_run(0, 3);
	if (local)
		rte_eal_mp_wait_lcore();
	else
		for (i = 0; i < 2; i++) {
			if (three_pids[i] == 0) {
				kill(pids[1 - i], SIGKILL); /* one died: the other cannot finish */
				continue;
			}
			if (three_reaped[i])
				status = three_status[i];
			else
				waitpid(pids[i], &status, 0);
			CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0 && ctl->failures == 0,
				"three: secondary %u status %d", i + 1, status);
		}
	seconds = (double)(rte_get_timer_cycles() - start) / rte_get_timer_hz();
	for (i = 0; i < 3; i++) {
		allocs += ctl->allocs[i];
		frees += ctl->frees[i];
		bad += ctl->bad[i];
	}
	printf("three %s: %" PRIu64 " blocks allocated, %" PRIu64 " freed, %" PRIu64
	       " corrupt or lost; %.2f M blocks/s (%.1f s)\n",
		local ? "lcores of one process" : "processes", allocs, frees, bad,
		allocs / seconds / 1e6, seconds);
	CHECK(allocs >= three_blocks, "three: only %" PRIu64 " blocks", allocs);
	CHECK(allocs == frees, "three: %" PRIu64 " allocated, %" PRIu64 " freed", allocs, frees);
	CHECK(bad == 0, "three: %" PRIu64 " corrupt", bad);
	at_baseline("three", &base);
	for (i = 0; i < 3; i++)
		rte_ring_free(rings[i]);
}

/* Allocate 4 KiB or 64 KiB granules until every one the dead secondary freed came back. */
static unsigned int
granules_again(size_t size, unsigned int want, size_t limit)
{
	void **again = calloc(limit, sizeof(*again));
	unsigned int i, seen = 0;
	size_t n = 0;

	while (again != NULL && seen < want && n < limit) {
		void *p = hpm_malloc("again", size, size);

		if (p == NULL)
			break;
		again[n++] = p;
		for (i = 0; i < ctl->nfreed; i++)
			if (ctl->freed[i] == p) {
				seen++;
				break;
			}
	}
	while (n > 0)
		hpm_free(again[--n]);
	free(again);
	return seen;
}

/*
 * A secondary dies with its cache full; the primary's trim (by_trim) or
 * check finds it dead and takes the blocks back. After a trim the pages
 * they emptied may have gone back to their chunk, so the check is that the
 * same blocks fit again without the heap growing; after a check the pages
 * stay, and every granule it freed is handed out again.
 */
static void
case_cache_death(bool by_trim)
{
	struct rte_malloc_socket_stats base, dead, st;
	struct hpm_cache_stats cs;
	struct hpm_config cfg;
	unsigned int i, n4k = 0, n64k = 0, seen4k, seen64k;
	uint64_t cached;
	void **again;
	int status;
	pid_t pid;

	/* the caches may hold half the heap: hundreds of each granule */
	hpm_config_defaults(&cfg);
	cfg.cache_share = 2;
	CHECK(hpm_init(&cfg) == 0, "hpm_init");
	CHECK(hpm_malloc_get_socket_stats(0, &base) == 0, "stats");
	if (!start_secondary("cache-death", NULL, &pid))
		return;
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	CHECK(hpm_cache_stats(1, -1, &cs) == 0 && cs.blocks == ctl->cached_blocks &&
			cs.blocks >= 500,
		"the dead secondary's cache holds %" PRIu64 " blocks (it said %" PRIu64 ")",
		cs.blocks, ctl->cached_blocks);
	cached = cs.blocks;
	CHECK(hpm_malloc_get_socket_stats(0, &dead) == 0, "stats");
	if (by_trim)
		hpm_heap_trim();
	else
		CHECK(hpm_heap_check() == 0, "check");
	CHECK(hpm_cache_stats(1, -1, &cs) == 0 && cs.blocks == 0,
		"after the %s the dead secondary's cache holds %" PRIu64 " blocks",
		by_trim ? "trim" : "check", cs.blocks);
	at_baseline("cache-death", &base);
	for (i = 0; i < ctl->nfreed; i++) {
		n4k += ctl->freed_size[i] == 4096;
		n64k += ctl->freed_size[i] == 65536;
	}
	if (by_trim) {
		/* all of it again, as the secondary had it: the heap has room for it */
		again = calloc(ctl->nfreed, sizeof(*again));
		for (i = 0; again != NULL && i < ctl->nfreed; i++) {
			unsigned int align = ctl->freed_size[i] >= 4096 ? ctl->freed_size[i] : 0;

			again[i] = hpm_malloc("again", ctl->freed_size[i], align);
			CHECK(again[i] != NULL, "allocation again");
		}
		/*
		 * Bar what this lcore's cache took beyond the blocks asked for (its
		 * limit follows the heap's size, which the dead secondary's did not
		 * have yet): a growth step of up to that much, no more. The dead
		 * cache's blocks not given back would need 10 MiB more.
		 */
		CHECK(hpm_cache_stats(rte_lcore_id(), -1, &cs) == 0, "cache stats");
		CHECK(hpm_malloc_get_socket_stats(0, &st) == 0 &&
				st.heap_totalsz_bytes <= dead.heap_totalsz_bytes +
						RTE_ALIGN_CEIL(cs.bytes, (size_t)4 << 20),
			"allocated again: the heap grew from %zu to %zu bytes (%zu in this lcore's "
			"cache)",
			dead.heap_totalsz_bytes, st.heap_totalsz_bytes, cs.bytes);
		for (i = 0; again != NULL && i < ctl->nfreed; i++)
			hpm_free(again[i]);
		free(again);
		at_baseline("cache-death, after", &base);
		printf("a secondary killed with %" PRIu64 " blocks in its cache: the trim gave "
		       "them back; its %u blocks allocated again in a heap of %zu bytes\n",
			cached, ctl->nfreed, st.heap_totalsz_bytes);
		return;
	}
	seen4k = granules_again(4096, n4k, dead.heap_totalsz_bytes / 4096 + 1024);
	seen64k = granules_again(65536, n64k, dead.heap_totalsz_bytes / 65536 + 64);
	CHECK(seen4k == n4k && seen64k == n64k,
		"allocated again: %u of %u 4 KiB and %u of %u 64 KiB granules", seen4k, n4k,
		seen64k, n64k);
	at_baseline("cache-death, after", &base);
	printf("a secondary killed with %" PRIu64 " blocks in its cache: the check gave them back; "
	       "%u + %u of its granules allocated again\n",
		cached, seen4k, seen64k);
}

static void
case_lock_death(void)
{
	struct rte_malloc_socket_stats st;
	void *objs[8], *held, *cached;
	int status;
	pid_t pid;

	/* a lock taken for alive spins for ever: a failure in a minute, not a timeout */
	alarm(60);
	CHECK(hpm_init(NULL) == 0, "hpm_init");
	held = hpm_malloc("held", 3u << 20, 0);
	cached = hpm_malloc("cached", 100, 0);
	CHECK(held != NULL && cached != NULL, "blocks");
	if (!start_secondary("lock", NULL, &pid))
		return;
	kill(pid, SIGKILL);
	/* not reaped yet: a zombie holds nothing */
	rte_errno = 0;
	CHECK(hpm_malloc("after", 3u << 20, 0) == NULL && rte_errno == ENOTRECOVERABLE,
		"allocation on the torn socket: errno %d", rte_errno);
	waitpid(pid, &status, 0);
	rte_errno = 0;
	CHECK(hpm_malloc_socket("after", 5u << 20, 0, 0) == NULL && rte_errno == ENOTRECOVERABLE,
		"allocation on socket 0: errno %d", rte_errno);
	CHECK(hpm_malloc_bulk(objs, RTE_DIM(objs), 12288, 0, 0) == -ENOTRECOVERABLE, "bulk");
	CHECK(hpm_heap_check() == -ENOTRECOVERABLE, "check");
	CHECK(hpm_malloc_get_socket_stats(0, &st) == -1 && rte_errno == ENOTRECOVERABLE, "stats");
	CHECK(hpm_malloc_validate(held, NULL) == -1, "validate");
	CHECK(hpm_realloc(held, 6u << 20, 0) == NULL && rte_errno == ENOTRECOVERABLE, "realloc");
	hpm_free(held); /* stays with the torn heap; no hang */
	hpm_free(cached);
	CHECK(hpm_heap_trim() == 0, "trim");
	hpm_fini();
	alarm(0);
	printf("a secondary killed holding the heap's lock: no hang; every later call on the "
	       "socket failed with ENOTRECOVERABLE\n");
}

#define RACE_INITS 40

static void
case_attach_race(void)
{
	struct hpm_config cfg;
	unsigned int i, refused = 0;
	int status, rc;
	pid_t pid;

	if (!start_secondary("attach-race", NULL, &pid))
		return;
	hpm_config_defaults(&cfg);
	cfg.source = HPM_SOURCE_EAL;
	cfg.initial_size = (size_t)1 << 30; /* more than --socket-limit */
	for (i = 0; i < RACE_INITS; i++) {
		rc = hpm_init(&cfg);
		refused += rc == -ENOMEM;
		if (rc == 0)
			hpm_fini();
	}
	ctl->stop = 1;
	waitpid(pid, &status, 0);
	CHECK(refused == RACE_INITS, "%u of %u inits refused with ENOMEM", refused, RACE_INITS);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		"the secondary looking at the heap: status %d (signal %d)", status,
		WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	CHECK(ctl->attaches == 0, "the secondary attached %" PRIu64 " times to no heap",
		ctl->attaches);
	printf("attach-race: %u failed inits, the secondary looked %" PRIu64 " times\n", refused,
		ctl->looks);
	/* the heap the application makes next works */
	CHECK(hpm_init(NULL) == 0, "hpm_init after");
	CHECK(hpm_heap_check() == 0, "heap check after");
}

int
main(int argc, char **argv)
{
	const struct rte_memzone *mz;
	const char *which;
	int status;

	self_path = argv[0];
	if (getenv("HPM_TEST_OPS") != NULL)
		three_blocks = strtoull(getenv("HPM_TEST_OPS"), NULL, 0);
	if (argc >= 4 && !strcmp(argv[1], "--secondary")) {
		snprintf(prefix, sizeof(prefix), "%s", argv[2]);
		return secondary_main(argv[3], argc > 4 ? argv[4] : NULL);
	}
	if (argc != 2) {
		fprintf(stderr,
			"usage: %s first|before|three|three-local|cache-death[-check]|lock-death|"
			"attach-race\n",
			argv[0]);
		return 2;
	}
	which = argv[1];
	snprintf(prefix, sizeof(prefix), "hpmt_mpc_%d", (int)getpid());
	if (eal_start(!strcmp(which, "three-local") ? "0,1,2@0" : "0", false,
		    !strcmp(which, "attach-race") ? "--socket-limit=256" : NULL) < 0)
		return TEST_SKIP;
	mz = rte_memzone_reserve(CTL_ZONE, sizeof(*ctl), SOCKET_ID_ANY, 0);
	if (mz == NULL)
		return 1;
	ctl = mz->addr;
	memset(ctl, 0, sizeof(*ctl));
	if (!strcmp(which, "first"))
		case_first();
	else if (!strcmp(which, "before"))
		case_before();
	else if (!strcmp(which, "three"))
		case_three(false);
	else if (!strcmp(which, "three-local"))
		case_three(true);
	else if (!strcmp(which, "cache-death"))
		case_cache_death(true);
	else if (!strcmp(which, "cache-death-check"))
		case_cache_death(false);
	else if (!strcmp(which, "lock-death"))
		case_lock_death();
	else if (!strcmp(which, "attach-race"))
		case_attach_race();
	else
		CHECK(false, "unknown case %s", which);
	if (strcmp(which, "lock-death") != 0)
		hpm_fini();
	rte_memzone_free(mz);
	if (asan_skipped)
		printf("SKIP: under ASan a secondary cannot map the primary's memory\n");
	status = test_end(which);
	rte_eal_cleanup();
	test_remove_hugepage_files(prefix);
	return asan_skipped && status == 0 ? TEST_SKIP : status;
}
