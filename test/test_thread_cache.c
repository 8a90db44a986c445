/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Caches of plain threads through their lives, on anonymous memory (no EAL):
 *
 * budget: a thread that only frees (the consumer of a pipeline) keeps its
 *   cache to its byte budget. Main allocates 64 blocks each of 64 KiB, 6, 7,
 *   10, 14 KiB and 30000 B; a new thread frees them all; its cache may hold
 *   at most its budget (1 MiB here) and one block. Each class's limit used to
 *   start at 64 blocks, set by bytes only at the class's first locked event,
 *   which such a thread never has: it held 5.3 MiB.
 * key: with every pthread key taken (pthread_key_create() fails), a thread's
 *   first call binds a cache and leaves the application's keys alone (the
 *   library set its cache on key 0, someone else's, and that key's
 *   destructor got the cache).
 * exit: a thread whose exit destructor is past its check when another
 *   thread calls hpm_fini(): hpm_fini() waits until it has emptied its
 *   cache, then takes the metadata back (it used to take it from under the
 *   thread). The library's test hook holds the thread there while main
 *   starts hpm_fini().
 * threads: 40 threads that allocate at once, then exit (their slots hold no
 *   block after): while they run the
 *   caches number one more each, after they are gone as many as before
 *   (every slot ever used counted: a hundred threads gone made each cache's
 *   part of the heap a hundredth, and every quiet cache look busy).
 * reaper: a process that died while it gave a dead process's cache back
 *   leaves its pid, negated, as the cache's owner: a survivor gives the
 *   blocks back (the mark had no pid, and stayed: the blocks were lost,
 *   the lcore took the cache lock at every call). A thread plays the dead:
 *   it frees 8 blocks into its cache, writes the mark of a child process
 *   that has exited, and lets go of the cache without emptying it.
 * slots: a thread that found every thread slot taken (main's and 127 other
 *   threads') allocates on the locked path; once a slot is free again it
 *   gets a cache within a few thousand allocations (it kept none for good).
 *   While all are taken, the last slot's id has statistics, and the id past
 *   it is -EINVAL for hpm_cache_stats() and hpm_cache_flush_lcore().
 *
 * usage: test_thread_cache budget|key|exit|threads|reaper|slots
 */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hpm_malloc.h"
#include "lcore_cache.h"
#include "state.h"
#include "test_common.h"

#define PER_SIZE 64
#define MIB ((size_t)1 << 20)

static struct hpm_config
anon_config(void)
{
	struct hpm_config cfg;

	hpm_config_defaults(&cfg);
	cfg.source = HPM_SOURCE_ANON;
	return cfg;
}

/* budget */

static const size_t budget_sizes[] = {65536, 6144, 7168, 10240, 14336, 30000};
static void *budget_blocks[RTE_DIM(budget_sizes)][PER_SIZE];

static void *
budget_consumer(void *arg)
{
	struct hpm_cache_stats st;
	struct hpm_lcore_cache *c;
	unsigned int s, i;
	size_t budget;

	RTE_SET_USED(arg);
	for (s = 0; s < RTE_DIM(budget_sizes); s++)
		for (i = 0; i < PER_SIZE; i++)
			hpm_free(budget_blocks[s][i]);
	c = hpm_cache_get();
	CHECK(c != NULL, "budget: the thread has no cache");
	if (c == NULL)
		return NULL;
	budget = hpm_cache_budget(c);
	CHECK(hpm_cache_stats(c->lcore, -1, &st) == 0, "budget: stats");
	printf("budget: the thread's cache holds %" PRIu64 " blocks, %.2f MiB, after %" PRIu64
	       " flushes; its budget %.2f MiB\n",
		st.blocks, st.bytes / (double)MIB, st.flushes, budget / (double)MIB);
	CHECK(st.bytes <= budget + 65536, "budget: %" PRIu64 " bytes cached on a budget of %zu",
		st.bytes, budget);
	return NULL;
}

static void
case_budget(void)
{
	struct hpm_config cfg = anon_config();
	pthread_t t;
	unsigned int s, i;

	cfg.cache_budget_min = MIB;
	CHECK(hpm_init(&cfg) == 0, "hpm_init");
	for (s = 0; s < RTE_DIM(budget_sizes); s++)
		for (i = 0; i < PER_SIZE; i++) {
			budget_blocks[s][i] = hpm_malloc("budget", budget_sizes[s], 0);
			CHECK(budget_blocks[s][i] != NULL, "budget: malloc %zu", budget_sizes[s]);
		}
	CHECK(pthread_create(&t, NULL, budget_consumer, NULL) == 0, "pthread_create");
	pthread_join(t, NULL);
	CHECK(hpm_heap_check() == 0, "budget: heap check");
	hpm_fini();
}

/* key */

#define KEYS_MAX 2048
static pthread_key_t keys[KEYS_MAX];
static unsigned int nkeys;
static char markers[KEYS_MAX];
static unsigned int wrong_destructor_calls;

static void
key_destructor(void *value)
{
	/* only ever one of the markers */
	if ((char *)value < markers || (char *)value >= markers + KEYS_MAX)
		wrong_destructor_calls++;
}

static void *
key_thread(void *arg)
{
	unsigned int i, changed = 0;
	void *p;

	RTE_SET_USED(arg);
	for (i = 0; i < nkeys; i++)
		pthread_setspecific(keys[i], &markers[i]);
	p = hpm_malloc("key", 64, 0); /* the thread's first call: it binds a cache */
	CHECK(p != NULL, "key: malloc");
	hpm_free(p);
	for (i = 0; i < nkeys; i++)
		changed += pthread_getspecific(keys[i]) != &markers[i];
	CHECK(changed == 0, "key: %u of the application's %u keys changed", changed, nkeys);
	return NULL;
}

static int
case_key(void)
{
	struct hpm_config cfg = anon_config();
	pthread_t t;
	unsigned int i;

	while (nkeys < KEYS_MAX && pthread_key_create(&keys[nkeys], key_destructor) == 0)
		nkeys++;
	/* the library's key, unmade, is 0: the case needs key 0 to be the application's */
	if (nkeys == 0 || keys[0] != 0 || nkeys == KEYS_MAX) {
		printf("key: key 0 is not this program's, or keys do not run out: skipped\n");
		for (i = 0; i < nkeys; i++)
			pthread_key_delete(keys[i]);
		return TEST_SKIP;
	}
	printf("key: %u keys taken, none left\n", nkeys);
	CHECK(hpm_init(&cfg) == 0, "hpm_init");
	CHECK(pthread_create(&t, NULL, key_thread, NULL) == 0, "pthread_create");
	pthread_join(t, NULL);
	CHECK(wrong_destructor_calls == 0, "key: a key's destructor got %u values not its own",
		wrong_destructor_calls);
	CHECK(hpm_heap_check() == 0, "key: heap check");
	hpm_fini();
	for (i = 0; i < nkeys; i++)
		pthread_key_delete(keys[i]);
	return 0;
}

/* exit */

static uint32_t in_exit, fini_started, hook_done;

static void
exit_hook(void)
{
	unsigned int waited;

	__atomic_store_n(&in_exit, 1, __ATOMIC_SEQ_CST);
	for (waited = 0; !__atomic_load_n(&fini_started, __ATOMIC_SEQ_CST) && waited < 5000;
		waited++)
		usleep(1000);
	/* hpm_fini() runs meanwhile: it must wait for this thread, not take its cache */
	usleep(20000);
	__atomic_store_n(&hook_done, 1, __ATOMIC_SEQ_CST);
}

static void *
exit_thread(void *arg)
{
	void *p[8];
	unsigned int i;

	RTE_SET_USED(arg);
	for (i = 0; i < RTE_DIM(p); i++)
		p[i] = hpm_malloc("exit", 4096, 4096);
	for (i = 0; i < RTE_DIM(p); i++)
		hpm_free(p[i]);
	/* the cache holds the blocks: the exit destructor gives them back */
	return NULL;
}

static void
case_exit(void)
{
	struct hpm_config cfg = anon_config();
	unsigned int waited;
	pthread_t t;

	CHECK(hpm_init(&cfg) == 0, "hpm_init");
	hpm_cache_exit_hook = exit_hook;
	CHECK(pthread_create(&t, NULL, exit_thread, NULL) == 0, "pthread_create");
	for (waited = 0; !__atomic_load_n(&in_exit, __ATOMIC_SEQ_CST) && waited < 5000; waited++)
		usleep(1000);
	CHECK(in_exit, "exit: the thread's destructor never ran");
	__atomic_store_n(&fini_started, 1, __ATOMIC_SEQ_CST);
	hpm_fini();
	CHECK(__atomic_load_n(&hook_done, __ATOMIC_SEQ_CST),
		"exit: hpm_fini() returned while a thread was emptying its cache");
	pthread_join(t, NULL);
	hpm_cache_exit_hook = NULL;
	/* and the library is whole: a new heap, checked */
	CHECK(hpm_init(&cfg) == 0, "hpm_init again");
	CHECK(hpm_heap_check() == 0, "exit: heap check");
	hpm_fini();
}

/* threads */

#define NTHREADS 40
static pthread_barrier_t threads_up, threads_counted;

static void *
counted_thread(void *arg)
{
	void *p = hpm_malloc("threads", 256, 0);

	RTE_SET_USED(arg);
	CHECK(p != NULL, "threads: malloc");
	hpm_free(p);
	pthread_barrier_wait(&threads_up);
	/* main counts the caches now */
	pthread_barrier_wait(&threads_counted);
	return NULL;
}

static void
case_threads(void)
{
	struct hpm_config cfg = anon_config();
	struct hpm_lcore_cache *mine;
	pthread_t t[NTHREADS];
	unsigned int i, before, during, after;

	CHECK(hpm_init(&cfg) == 0, "hpm_init");
	hpm_free(hpm_malloc("threads", 256, 0)); /* main's own cache first */
	mine = hpm_cache_get();
	CHECK(mine != NULL, "threads: main has no cache");
	if (mine == NULL)
		return;
	before = __atomic_load_n(&hpm_state->ncaches, __ATOMIC_RELAXED);
	pthread_barrier_init(&threads_up, NULL, NTHREADS + 1);
	pthread_barrier_init(&threads_counted, NULL, NTHREADS + 1);
	for (i = 0; i < NTHREADS; i++)
		CHECK(pthread_create(&t[i], NULL, counted_thread, NULL) == 0, "pthread_create");
	pthread_barrier_wait(&threads_up);
	during = __atomic_load_n(&hpm_state->ncaches, __ATOMIC_RELAXED);
	pthread_barrier_wait(&threads_counted);
	for (i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	after = __atomic_load_n(&hpm_state->ncaches, __ATOMIC_RELAXED);
	printf("threads: caches %u before, %u while %u threads run, %u after\n", before, during,
		NTHREADS, after);
	CHECK(during == before + NTHREADS, "threads: %u caches while %u threads run, %u before",
		during, NTHREADS, before);
	CHECK(after == before, "threads: %u caches after the threads left, %u before", after,
		before);
	/* each gave its blocks back as it left: no slot but main's holds any */
	for (i = 0; i < HPM_CACHE_THREAD_SLOTS; i++) {
		struct hpm_cache_stats cs;

		if (i + HPM_CACHE_THREAD_SLOT0 == mine->lcore ||
			hpm_cache_stats(HPM_CACHE_THREAD_SLOT0 + i, -1, &cs) != 0)
			continue;
		CHECK(cs.blocks == 0,
			"threads: slot %u holds %" PRIu64 " blocks after its thread left", i,
			cs.blocks);
	}
	CHECK(hpm_heap_check() == 0, "threads: heap check");
	pthread_barrier_destroy(&threads_up);
	pthread_barrier_destroy(&threads_counted);
	hpm_fini();
}

/* reaper */

static struct hpm_lcore_cache *reaped_cache;

static void *
dead_thread(void *arg)
{
	pid_t dead = *(pid_t *)arg;
	struct hpm_lcore_cache *c;
	void *p[8];
	unsigned int i;

	for (i = 0; i < RTE_DIM(p); i++)
		p[i] = hpm_malloc("reaper", 4096, 4096);
	for (i = 0; i < RTE_DIM(p); i++)
		hpm_free(p[i]);
	c = hpm_cache_get();
	CHECK(c != NULL, "reaper: no cache");
	if (c == NULL)
		return NULL;
	reaped_cache = c;
	__atomic_store_n(&c->owner, hpm_cache_reaping(dead), __ATOMIC_RELEASE);
	/* gone as a dead process is: the cache as it is, the exit destructor finds it not ours */
	hpm_cache_tls.cache = &hpm_cache_none;
	hpm_cache_tls.gen = 0;
	return NULL;
}

static void
case_reaper(void)
{
	struct hpm_config cfg = anon_config();
	struct rte_malloc_socket_stats ss;
	struct hpm_cache_stats st;
	unsigned int reaped;
	pthread_t t;
	pid_t dead;

	dead = fork();
	if (dead == 0)
		_exit(0);
	CHECK(dead > 0 && waitpid(dead, NULL, 0) == dead, "a child that exits");
	CHECK(hpm_init(&cfg) == 0, "hpm_init");
	CHECK(pthread_create(&t, NULL, dead_thread, &dead) == 0, "pthread_create");
	pthread_join(t, NULL);
	if (reaped_cache == NULL)
		return;
	CHECK(hpm_cache_stats(reaped_cache->lcore, -1, &st) == 0 && st.blocks >= 8,
		"reaper: the cache holds %" PRIu64 " blocks", st.blocks);
	reaped = hpm_cache_reap(NULL);
	CHECK(hpm_cache_stats(reaped_cache->lcore, -1, &st) == 0 && st.blocks == 0,
		"reaper: %" PRIu64 " blocks left in the cache", st.blocks);
	printf("reaper: %u cache(s) given back; owner now %d\n", reaped,
		__atomic_load_n(&reaped_cache->owner, __ATOMIC_RELAXED));
	CHECK(reaped == 1 && __atomic_load_n(&reaped_cache->owner, __ATOMIC_RELAXED) == 0 &&
			__atomic_load_n(&reaped_cache->thread_held, __ATOMIC_RELAXED) == 0,
		"reaper: %u reaped, owner %d, held %u", reaped, reaped_cache->owner,
		reaped_cache->thread_held);
	CHECK(hpm_malloc_get_socket_stats(0, &ss) == 0 && ss.alloc_count == 0,
		"reaper: %zu blocks still allocated", (size_t)ss.alloc_count);
	CHECK(hpm_heap_check() == 0, "reaper: heap check");
	hpm_fini();
}

/* slots */

#define HOLDERS (HPM_CACHE_THREAD_SLOTS - 1)
static pthread_barrier_t holders_up;
static uint32_t let_first_go, let_all_go, slotless_done;

static void *
holder_thread(void *arg)
{
	bool first = (uintptr_t)arg == 0;

	hpm_free(hpm_malloc("slots", 64, 0));
	CHECK(hpm_cache_get() != NULL, "slots: a holder has no cache");
	pthread_barrier_wait(&holders_up);
	while (!__atomic_load_n(first ? &let_first_go : &let_all_go, __ATOMIC_ACQUIRE))
		usleep(1000);
	return NULL;
}

static void *
slotless_thread(void *arg)
{
	unsigned int i;

	RTE_SET_USED(arg);
	hpm_free(hpm_malloc("slots", 64, 0));
	CHECK(hpm_cache_get() == NULL, "slots: a cache with every slot taken");
	/* a slot comes free */
	__atomic_store_n(&let_first_go, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&slotless_done, __ATOMIC_ACQUIRE))
		usleep(1000);
	for (i = 0; i < 3 * 4096 && hpm_cache_get() == NULL; i++)
		hpm_free(hpm_malloc("slots", 64, 0));
	printf("slots: %u allocations after a slot came free, %s cache\n", i,
		hpm_cache_get() != NULL ? "a" : "no");
	CHECK(hpm_cache_get() != NULL, "slots: no cache after %u allocations, a slot free", i);
	return NULL;
}

static void
case_slots(void)
{
	struct hpm_config cfg = anon_config();
	pthread_t holders[HOLDERS], t;
	struct hpm_cache_stats cs;
	unsigned int i;

	CHECK(hpm_init(&cfg) == 0, "hpm_init");
	hpm_free(hpm_malloc("slots", 64, 0)); /* main's slot */
	pthread_barrier_init(&holders_up, NULL, HOLDERS + 1);
	for (i = 0; i < HOLDERS; i++)
		CHECK(pthread_create(&holders[i], NULL, holder_thread, (void *)(uintptr_t)i) == 0,
			"pthread_create");
	pthread_barrier_wait(&holders_up);
	CHECK(hpm_cache_stats(HPM_CACHE_THREAD_SLOT0 + HPM_CACHE_THREAD_SLOTS - 1, -1, &cs) == 0,
		"slots: the last slot's statistics");
	CHECK(hpm_cache_stats(HPM_CACHE_THREAD_SLOT0 + HPM_CACHE_THREAD_SLOTS, -1, &cs) == -EINVAL,
		"slots: statistics of the id past the last slot");
	CHECK(hpm_cache_flush_lcore(HPM_CACHE_THREAD_SLOT0 + HPM_CACHE_THREAD_SLOTS) == -EINVAL,
		"slots: flush of the id past the last slot");
	CHECK(pthread_create(&t, NULL, slotless_thread, NULL) == 0, "pthread_create");
	pthread_join(holders[0], NULL); /* its slot is free once it has exited */
	__atomic_store_n(&slotless_done, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	__atomic_store_n(&let_all_go, 1, __ATOMIC_RELEASE);
	for (i = 1; i < HOLDERS; i++)
		pthread_join(holders[i], NULL);
	pthread_barrier_destroy(&holders_up);
	CHECK(hpm_heap_check() == 0, "slots: heap check");
	hpm_fini();
}

int
main(int argc, char **argv)
{
	const char *which = argc > 1 ? argv[1] : "";
	int rc = 0;

	if (!strcmp(which, "budget"))
		case_budget();
	else if (!strcmp(which, "key"))
		rc = case_key();
	else if (!strcmp(which, "exit"))
		case_exit();
	else if (!strcmp(which, "threads"))
		case_threads();
	else if (!strcmp(which, "reaper"))
		case_reaper();
	else if (!strcmp(which, "slots"))
		case_slots();
	else {
		fprintf(stderr, "usage: %s budget|key|exit|threads|reaper|slots\n", argv[0]);
		return 2;
	}
	if (rc == TEST_SKIP)
		return test_end("thread_cache") == 0 ? TEST_SKIP : 1;
	return test_end("thread_cache");
}
