/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * NUMA logic on a fake two-socket topology (hpm_config::fake_sockets) of the
 * hugetlbfs source, since this machine has one node: a block asked for on a
 * socket comes from that socket's heap (statistics per socket), and its pages
 * sit on the node the topology says (get_mempolicy); SOCKET_ID_ANY takes the
 * caller's socket first (CPU c is socket c % 2), then falls back to the other
 * when the caller's cannot grow; a block freed on an lcore of the other socket
 * goes back to its own socket's heap, never into the foreign lcore's cache.
 * SOCKET_ID_ANY takes the caller's socket for blocks no cache serves (4 MiB)
 * too, and hpm_realloc_socket() to the other socket moves the block there,
 * contents kept, even when its size would fit in place (1000 B, 4 -> 2 MiB).
 *
 * usage: test_numa   (EAL with lcores 0 and 1)
 */

#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <numa.h>
#include <numaif.h>
#include <pthread.h>
#include <sched.h>

#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include "hpm_malloc.h"
#include "source.h"
#include "test_common.h"

#define MIB(n) ((size_t)(n) << 20)
#define NBLOCKS 64

static unsigned int
live(int socket)
{
	struct rte_malloc_socket_stats st;

	if (hpm_malloc_get_socket_stats(socket, &st) != 0)
		return UINT32_MAX;
	return st.alloc_count;
}

static int
node_of(void *p)
{
	int node = -1;

	*(volatile char *)p = 1;
	if (get_mempolicy(&node, NULL, 0, p, MPOL_F_NODE | MPOL_F_ADDR) != 0)
		return -1;
	return node;
}

static void
placement(void)
{
	int nodes = numa_available() >= 0 ? numa_max_node() + 1 : 1;
	struct rte_malloc_socket_stats st;
	unsigned int before0 = live(0), before1 = live(1);
	int socket;

	CHECK(hpm_malloc_get_socket_stats(2, &st) == -1 && rte_errno == EINVAL,
		"socket 2 of a two-socket topology has stats");
	CHECK(hpm_malloc_socket("numa", 100, 0, 2) == NULL && rte_errno == EINVAL,
		"socket 2 of a two-socket topology gave a block");
	for (socket = 0; socket < 2; socket++) {
		void *small = hpm_malloc_socket("numa", 100, 0, socket);
		void *big = hpm_malloc_socket("numa", MIB(4), 0, socket);

		CHECK(small != NULL && big != NULL, "blocks on socket %d", socket);
		if (small == NULL || big == NULL)
			return;
		CHECK(node_of(small) == socket % nodes && node_of(big) == socket % nodes,
			"socket %d: pages on nodes %d and %d, expected %d", socket, node_of(small),
			node_of(big), socket % nodes);
		CHECK(live(socket) == (socket == 0 ? before0 : before1) + 2,
			"socket %d counts %u blocks", socket, live(socket));
		CHECK(live(1 - socket) == (socket == 0 ? before1 : before0),
			"the other socket's count moved");
		hpm_free(small);
		hpm_free(big);
	}
	printf("placement: sockets 0 and 1 on node(s) %d and %d of %d\n", 0 % nodes, 1 % nodes,
		nodes);
}

struct any_result {
	int cpu;
	unsigned int before[2];
	unsigned int after[2];
	void *p;
	/* a large block: the locked path, no cache */
	unsigned int big_before[2];
	unsigned int big_after[2];
	void *big;
};

static void *
any_on_cpu(void *arg)
{
	struct any_result *r = arg;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(r->cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0)
		return NULL;
	r->before[0] = live(0);
	r->before[1] = live(1);
	r->p = hpm_malloc("any", 1000, 0);
	r->after[0] = live(0);
	r->after[1] = live(1);
	r->big_before[0] = live(0);
	r->big_before[1] = live(1);
	r->big = hpm_malloc("any", MIB(4), 0);
	r->big_after[0] = live(0);
	r->big_after[1] = live(1);
	return NULL;
}

/* A plain thread (no lcore, no cache) pinned to each CPU: its socket first. */
static void
caller_first(void)
{
	int cpu;

	for (cpu = 0; cpu < 2 && cpu < (int)sysconf(_SC_NPROCESSORS_ONLN); cpu++) {
		struct any_result r = {.cpu = cpu};
		pthread_t t;

		pthread_create(&t, NULL, any_on_cpu, &r);
		pthread_join(t, NULL);
		CHECK(r.p != NULL, "SOCKET_ID_ANY from CPU %d", cpu);
		CHECK(r.after[cpu % 2] == r.before[cpu % 2] + 1 &&
				r.after[1 - cpu % 2] == r.before[1 - cpu % 2],
			"SOCKET_ID_ANY from CPU %d did not take socket %d first", cpu, cpu % 2);
		CHECK(r.big != NULL && r.big_after[cpu % 2] == r.big_before[cpu % 2] + 1 &&
				r.big_after[1 - cpu % 2] == r.big_before[1 - cpu % 2],
			"SOCKET_ID_ANY, 4 MiB, from CPU %d did not take socket %d first", cpu,
			cpu % 2);
		hpm_free(r.p);
		hpm_free(r.big);
	}
	printf("SOCKET_ID_ANY: CPU 0 -> socket 0, CPU 1 -> socket 1\n");
}

/* The caller's socket cannot grow: SOCKET_ID_ANY goes to the other. */
static void *
fallback_on_cpu0(void *arg)
{
	void **p = arg;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	*p = hpm_malloc("fallback", MIB(8), 0);
	return NULL;
}

static void
fallback(void)
{
	void *warm, *p = NULL;
	unsigned int before0, before1;
	pthread_t t;

	/* socket 1 gets an empty 8 MiB to spare; socket 0 none */
	warm = hpm_malloc_socket("warm", MIB(8), 0, 1);
	hpm_free(warm);
	hpm_heap_trim(); /* keeps retain_size: the 8 MiB stay */
	before0 = live(0);
	before1 = live(1);
	hpm_source_fail_after = 0;
	pthread_create(&t, NULL, fallback_on_cpu0, &p);
	pthread_join(t, NULL);
	hpm_source_fail_after = -1;
	CHECK(p != NULL, "SOCKET_ID_ANY did not fall back: rte_errno %d", rte_errno);
	CHECK(live(1) == before1 + 1 && live(0) == before0,
		"the fallback block is not on socket 1 (%u -> %u, %u -> %u)", before0, live(0),
		before1, live(1));
	hpm_free(p);
	printf("fallback: socket 0 could not grow, SOCKET_ID_ANY took socket 1\n");
}

static void *blocks[NBLOCKS];

/* lcore 1 (CPU 1: socket 1) allocates for lcore 0 to free. */
static int
allocate_on_socket1(void *arg)
{
	unsigned int i;

	RTE_SET_USED(arg);
	for (i = 0; i < NBLOCKS; i++)
		blocks[i] = hpm_malloc("cross", i % 2 ? 4096 : 64, i % 2 ? 4096 : 0);
	return 0;
}

static void
cross_socket_frees(void)
{
	unsigned int worker = rte_get_next_lcore(-1, 1, 0), i, before;
	struct hpm_cache_stats cs0, cs1;

	if (worker >= RTE_MAX_LCORE || rte_lcore_to_cpu_id(worker) % 2 != 1 ||
		rte_lcore_to_cpu_id(rte_lcore_id()) % 2 != 0) {
		printf("cross-socket frees: needs lcore 0 on CPU 0 and lcore 1 on CPU 1: skipped\n");
		return;
	}
	hpm_cache_flush();
	before = live(1);
	rte_eal_remote_launch(allocate_on_socket1, NULL, worker);
	rte_eal_wait_lcore(worker);
	for (i = 0; i < NBLOCKS; i++)
		CHECK(blocks[i] != NULL, "lcore %u allocation %u", worker, i);
	CHECK(hpm_cache_stats(worker, -1, &cs1) == 0 && cs1.socket == 1,
		"lcore %u's cache serves socket %d", worker, cs1.socket);
	CHECK(live(1) == before + NBLOCKS, "socket 1 counts %u blocks, expected %u", live(1),
		before + NBLOCKS);
	/* the main lcore (socket 0) frees them */
	for (i = 0; i < NBLOCKS; i++)
		hpm_free(blocks[i]);
	CHECK(hpm_cache_stats(rte_lcore_id(), -1, &cs0) == 0 ? cs0.blocks == 0 : true,
		"socket 1's blocks went into socket 0's cache: %" PRIu64, cs0.blocks);
	CHECK(live(1) == before, "socket 1 still counts %u blocks after the frees, expected %u",
		live(1), before);
	CHECK(hpm_heap_check() == 0, "heap check");
	printf("cross-socket frees: %u blocks of socket 1 freed on socket 0, back to socket 1\n",
		NBLOCKS);
}

/* hpm_realloc_socket() to the other socket: the block moves, whatever its size. */
static void
realloc_across(void)
{
	static const size_t from[] = {1000, MIB(4)}, to[] = {1000, MIB(2)};
	unsigned int i, before0, before1;
	uint8_t *p, *q;
	size_t k;

	for (i = 0; i < RTE_DIM(from); i++) {
		p = hpm_malloc_socket("across", from[i], 0, 0);
		CHECK(p != NULL, "%zu B on socket 0", from[i]);
		if (p == NULL)
			continue;
		for (k = 0; k < to[i]; k += 61)
			p[k] = (uint8_t)(k * 13);
		before0 = live(0);
		before1 = live(1);
		q = hpm_realloc_socket(p, to[i], 0, 1);
		CHECK(q != NULL && q != p, "%zu -> %zu B to socket 1: %p, was %p", from[i], to[i],
			(void *)q, (void *)p);
		if (q == NULL)
			continue;
		CHECK(live(1) == before1 + 1 && live(0) == before0 - 1,
			"%zu -> %zu B to socket 1: socket 0 counts %u -> %u, socket 1 %u -> %u",
			from[i], to[i], before0, live(0), before1, live(1));
		for (k = 0; k < to[i] && q[k] == (uint8_t)(k * 13); k += 61)
			;
		CHECK(k >= to[i], "%zu -> %zu B to socket 1: byte %zu", from[i], to[i], k);
		hpm_free(q);
	}
	printf("realloc to the other socket: 1000 B and 4 -> 2 MiB moved, contents kept\n");
}

int
main(void)
{
	struct hpm_config cfg;
	int rc;

	if (test_eal_init("numa", "-l", "0-1", "--no-pci", NULL) != 0)
		return TEST_SKIP;
	hpm_config_defaults(&cfg);
	cfg.source = HPM_SOURCE_HUGETLBFS;
	cfg.fake_sockets = 2;
	cfg.chunk_size = MIB(8);
	cfg.retain_size = MIB(16);
	rc = hpm_init(&cfg);
	if (rc == -ENODEV) {
		printf("no free hugepages for the hugetlbfs source: skipped\n");
		test_end("numa");
		return TEST_SKIP;
	}
	CHECK(rc == 0, "hpm_init: %d", rc);
	placement();
	caller_first();
	fallback();
	cross_socket_frees();
	realloc_across();
	hpm_fini();
	/* a fake topology is for the EAL-free sources only */
	hpm_config_defaults(&cfg);
	cfg.source = HPM_SOURCE_EAL;
	cfg.fake_sockets = 2;
	CHECK(hpm_init(&cfg) == -EINVAL, "fake sockets with the EAL source");
	return test_end("numa");
}
