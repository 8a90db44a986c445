/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * A heap started before rte_eal_init() (the first call may come first; it
 * picks hugetlbfs or anonymous memory): the lcore callbacks were registered
 * only when EAL was up at the start, so a thread that called
 * rte_thread_unregister() kept its lcore's cache, and the next thread to
 * register got the same lcore id and bound the same cache: two threads on
 * one cache, with no lock (blocks handed out twice). Here the first thread
 * registers, allocates, unregisters: it no longer uses the lcore's cache,
 * whose blocks went back, and the second thread to get the id binds a cache
 * the first does not hold. And the caches counted (each cache's part of
 * the heap is 1/ncaches of it) come back to where they were once both
 * threads have unregistered: each lcore a thread ever registered on stayed
 * counted.
 */

#include <inttypes.h>
#include <pthread.h>

#include <rte_lcore.h>

#include "hpm_malloc.h"
#include "lcore_cache.h"
#include "state.h"
#include "test_common.h"

static unsigned int lcore_of[2];
static struct hpm_lcore_cache *cache_of[2];
static uint64_t blocks_after_unregister = UINT64_MAX;

static void *
first(void *arg)
{
	struct hpm_cache_stats cs;
	void *p;

	RTE_SET_USED(arg);
	if (rte_thread_register() != 0)
		return NULL;
	lcore_of[0] = rte_lcore_id();
	p = hpm_malloc("first", 256, 0);
	hpm_free(p); /* into the lcore's cache */
	rte_thread_unregister();
	if (hpm_cache_stats(lcore_of[0], -1, &cs) == 0)
		blocks_after_unregister = cs.blocks;
	hpm_free(hpm_malloc("first", 256, 0));
	cache_of[0] = hpm_cache_get();
	return NULL;
}

static void *
second(void *arg)
{
	RTE_SET_USED(arg);
	if (rte_thread_register() != 0)
		return NULL;
	lcore_of[1] = rte_lcore_id();
	hpm_free(hpm_malloc("second", 256, 0));
	cache_of[1] = hpm_cache_get();
	rte_thread_unregister();
	return NULL;
}

int
main(void)
{
	struct hpm_config cfg;
	unsigned int ncaches;
	pthread_t t;
	void *early;

	hpm_config_defaults(&cfg);
	cfg.source = HPM_SOURCE_ANON;
	CHECK(hpm_init(&cfg) == 0, "hpm_init before EAL");
	early = hpm_malloc("early", 64, 0);
	CHECK(early != NULL, "a block before EAL");
	if (test_eal_init("register_late", "-l", "0", "--no-pci", NULL) != 0) {
		hpm_free(early);
		hpm_fini();
		return TEST_SKIP;
	}
	hpm_free(hpm_malloc("main", 256, 0));
	ncaches = __atomic_load_n(&hpm_state->ncaches, __ATOMIC_RELAXED);
	CHECK(pthread_create(&t, NULL, first, NULL) == 0 && pthread_join(t, NULL) == 0, "first");
	CHECK(pthread_create(&t, NULL, second, NULL) == 0 && pthread_join(t, NULL) == 0, "second");
	CHECK(lcore_of[0] != 0 && lcore_of[0] == lcore_of[1], "lcore ids %u, %u", lcore_of[0],
		lcore_of[1]);
	CHECK(blocks_after_unregister == 0,
		"the lcore's cache after its thread unregistered: %" PRIu64 " blocks",
		blocks_after_unregister);
	CHECK(cache_of[0] != NULL && cache_of[0]->lcore != lcore_of[0],
		"after unregistering, the first thread still used lcore %u's cache", lcore_of[0]);
	CHECK(cache_of[0] != cache_of[1], "two threads bound one cache (slot %u)",
		cache_of[1] != NULL ? cache_of[1]->lcore : 0);
	CHECK(__atomic_load_n(&hpm_state->ncaches, __ATOMIC_RELAXED) == ncaches,
		"caches counted: %u before the threads, %u after", ncaches,
		__atomic_load_n(&hpm_state->ncaches, __ATOMIC_RELAXED));
	hpm_free(early);
	CHECK(hpm_heap_check() == 0, "heap check");
	hpm_fini();
	return test_end("register_late");
}
