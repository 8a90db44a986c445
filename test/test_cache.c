/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Per-lcore caches under load. Two lcores and a plain pthread allocate mixed
 * sizes, fill every block with a pattern and hand blocks to each other
 * through rings: every block is checked by whoever frees it. After the run
 * everything is freed and the caches are flushed: the statistics are back at
 * their start, the heap checks. The hit paths see each thread's cache
 * binding as the cache layer wrote it. Then: a registered non-EAL thread gets a
 * cache that goes back when it unregisters; hpm_malloc_bulk() is all or
 * nothing when the source runs dry (fault injection), leaks nothing, and
 * works again when memory is back.
 *
 * usage: test_cache [--duration SECONDS]   (EAL with two lcores: -l 0-1)
 */

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_pause.h>
#include <rte_ring.h>

#include "arena.h"
#include "hpm_malloc.h"
#include "lcore_cache.h"
#include "source.h"
#include "state.h"
#include "test_common.h"

#define RING_SIZE 4096
#define MIB (UINT64_C(1) << 20)

struct msg {
	uint8_t *p;
	size_t size;
};

static struct rte_ring *to_worker, *to_main, *to_thread;
/* short runs and no blocks of whole units (HPM_TEST_OPS set: checking builds) */
static bool quick;
static bool stop;
static unsigned int worker_lcore;

struct counters {
	uint64_t allocs;
	uint64_t frees;
	uint64_t enomem;
	uint64_t bad;
};

/* Sizes the caches serve, and some they do not. */
static size_t
pick(uint64_t *rs, size_t *align)
{
	unsigned int r = test_rand(rs) % 100;

	*align = 0;
	if (r < 40)
		return 1 + test_rand(rs) % 1024; /* small classes */
	if (r < 65) {
		*align = 4096;
		return 4096; /* the 4 KiB class */
	}
	if (r < 75) {
		*align = 65536;
		return 65536; /* the 64 KiB class */
	}
	if (r < 90)
		return 1025 + test_rand(rs) % 8000; /* heap, no class */
	if (r < 99) {
		*align = 4096;
		return 4097 + test_rand(rs) % 60000; /* granule runs */
	}
	if (quick)
		return 100;
	return 2 * MIB + test_rand(rs) % MIB; /* units */
}

static struct msg *
make(uint64_t *rs, struct counters *c)
{
	struct msg *m;
	size_t align, size = pick(rs, &align);

	m = malloc(sizeof(*m));
	if (m == NULL)
		return NULL;
	m->size = size;
	m->p = hpm_malloc("cache", size, align);
	if (m->p == NULL) {
		c->enomem++;
		free(m);
		return NULL;
	}
	if (align != 0 && ((uintptr_t)m->p & (align - 1)) != 0)
		c->bad++;
	test_fill(m->p, size);
	c->allocs++;
	return m;
}

static void
consume(struct msg *m, struct counters *c)
{
	if (!test_intact(m->p, m->size))
		c->bad++;
	hpm_free(m->p);
	c->frees++;
	free(m);
}

/* Allocate, send, receive, check, free: the same loop on every thread. */
static void
churn(struct rte_ring *out, struct rte_ring *in, struct rte_ring *out2, uint64_t seed,
	struct counters *c)
{
	uint64_t rs = seed;
	void *got[32];
	unsigned int i, n;

	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		struct msg *m = make(&rs, c);

		if (m != NULL) {
			struct rte_ring *r = out2 != NULL && test_rand(&rs) % 4 == 0 ? out2 : out;

			/* a full ring: free it here */
			if (r == NULL || rte_ring_enqueue(r, m) != 0)
				consume(m, c);
		}
		n = in != NULL ? rte_ring_dequeue_burst(in, got, RTE_DIM(got), NULL) : 0;
		for (i = 0; i < n; i++)
			consume(got[i], c);
	}
}

static struct counters main_c, worker_c, thread_c;

static int
worker_main(void *arg)
{
	RTE_SET_USED(arg);
	churn(to_main, to_worker, NULL, 0x1234, &worker_c);
	hpm_cache_flush();
	return 0;
}

static void *
thread_main(void *arg)
{
	RTE_SET_USED(arg);
	/* no lcore id: a thread cache of its own */
	CHECK(rte_lcore_id() == LCORE_ID_ANY, "the pthread has lcore %u", rte_lcore_id());
	churn(NULL, to_thread, NULL, 0x5678, &thread_c);
	return NULL;
}

static void
drain(struct rte_ring *r, struct counters *c)
{
	void *m = NULL;

	while (rte_ring_dequeue(r, &m) == 0)
		consume(m, c);
}

static void
stress(double seconds)
{
	struct rte_malloc_socket_stats before, after;
	struct hpm_cache_stats cs;
	uint64_t end;
	pthread_t thread;

	CHECK(hpm_malloc_get_socket_stats(0, &before) == 0, "stats");
	to_worker = rte_ring_create("to_worker", RING_SIZE, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	to_main = rte_ring_create("to_main", RING_SIZE, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	to_thread = rte_ring_create("to_thread", RING_SIZE, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (to_worker == NULL || to_main == NULL || to_thread == NULL) {
		CHECK(false, "rings: %s", rte_strerror(rte_errno));
		return;
	}
	__atomic_store_n(&stop, false, __ATOMIC_RELEASE);
	CHECK(pthread_create(&thread, NULL, thread_main, NULL) == 0, "pthread_create");
	rte_eal_remote_launch(worker_main, NULL, worker_lcore);
	end = rte_get_timer_cycles() + (uint64_t)(seconds * rte_get_timer_hz());
	/* the main lcore until the end; no timing is checked, only contents */
	while (rte_get_timer_cycles() < end && main_c.bad == 0 && worker_c.bad == 0 &&
		thread_c.bad == 0) {
		uint64_t rs = 0x9abc ^ main_c.allocs;
		void *got[32];
		unsigned int i, n;
		struct msg *m = make(&rs, &main_c);

		if (m != NULL) {
			struct rte_ring *r = test_rand(&rs) % 4 == 0 ? to_thread : to_worker;

			if (rte_ring_enqueue(r, m) != 0)
				consume(m, &main_c);
		}
		n = rte_ring_dequeue_burst(to_main, got, RTE_DIM(got), NULL);
		for (i = 0; i < n; i++)
			consume(got[i], &main_c);
	}
	__atomic_store_n(&stop, true, __ATOMIC_RELEASE);
	rte_eal_wait_lcore(worker_lcore);
	pthread_join(thread, NULL);
	drain(to_main, &main_c);
	drain(to_worker, &main_c);
	drain(to_thread, &main_c);
	printf("stress %.0f s: main %" PRIu64 " allocs, worker %" PRIu64 ", pthread %" PRIu64
	       "; %" PRIu64 " frees in all; ENOMEM %" PRIu64 "\n",
		seconds, main_c.allocs, worker_c.allocs, thread_c.allocs,
		main_c.frees + worker_c.frees + thread_c.frees,
		main_c.enomem + worker_c.enomem + thread_c.enomem);
	CHECK(main_c.bad + worker_c.bad + thread_c.bad == 0,
		"%" PRIu64 " blocks misaligned or damaged",
		main_c.bad + worker_c.bad + thread_c.bad);
	CHECK(main_c.allocs > 0 && worker_c.allocs > 0 && thread_c.allocs > 0,
		"every thread allocated");
	CHECK(main_c.allocs + worker_c.allocs + thread_c.allocs ==
			main_c.frees + worker_c.frees + thread_c.frees,
		"every block freed once");
	CHECK(hpm_cache_stats(rte_lcore_id(), -1, &cs) == 0 && cs.hits > 0,
		"the main lcore's cache served allocations");
	CHECK(hpm_cache_stats(worker_lcore, -1, &cs) == 0 && cs.hits > 0 && cs.blocks == 0,
		"the worker's cache served allocations and was flushed: %" PRIu64 " blocks",
		cs.blocks);
	hpm_cache_flush();
	CHECK(hpm_cache_stats(rte_lcore_id(), -1, &cs) == 0 && cs.blocks == 0 && cs.bytes == 0,
		"flushed main cache holds %" PRIu64 " blocks", cs.blocks);
	CHECK(hpm_heap_check() == 0, "heap check after the stress");
	CHECK(hpm_malloc_get_socket_stats(0, &after) == 0, "stats");
	CHECK(after.alloc_count == before.alloc_count &&
			after.heap_allocsz_bytes == before.heap_allocsz_bytes,
		"after the drain: %u blocks, %zu bytes (before %u, %zu)", after.alloc_count,
		after.heap_allocsz_bytes, before.alloc_count, before.heap_allocsz_bytes);
	rte_ring_free(to_worker);
	rte_ring_free(to_main);
	rte_ring_free(to_thread);
}

static void *
registered_main(void *arg)
{
	unsigned int *lcore = arg;
	struct hpm_cache_stats cs;
	void *p[16];
	unsigned int i;

	if (rte_thread_register() != 0) {
		CHECK(false, "rte_thread_register: %s", rte_strerror(rte_errno));
		return NULL;
	}
	*lcore = rte_lcore_id();
	for (i = 0; i < RTE_DIM(p); i++)
		p[i] = hpm_malloc("registered", 4096, 4096);
	for (i = 0; i < RTE_DIM(p); i++)
		hpm_free(p[i]);
	for (i = 0; i < RTE_DIM(p); i++)
		p[i] = hpm_malloc("registered", 64, 0);
	CHECK(hpm_cache_stats(*lcore, -1, &cs) == 0 && cs.hits > 0 && cs.blocks > 0,
		"a registered thread has a cache: %" PRIu64 " hits, %" PRIu64 " blocks", cs.hits,
		cs.blocks);
	for (i = 0; i < RTE_DIM(p); i++)
		hpm_free(p[i]);
	rte_thread_unregister();
	return NULL;
}

static void
registered_thread(void)
{
	struct hpm_cache_stats cs;
	unsigned int lcore = LCORE_ID_ANY;
	pthread_t t;

	CHECK(pthread_create(&t, NULL, registered_main, &lcore) == 0, "pthread_create");
	pthread_join(t, NULL);
	if (lcore == LCORE_ID_ANY)
		return;
	CHECK(hpm_cache_stats(lcore, -1, &cs) == 0 && cs.blocks == 0,
		"the cache of lcore %u went back when its thread unregistered: %" PRIu64 " blocks",
		lcore, cs.blocks);
	printf("registered thread: lcore %u had a cache, flushed at unregister\n", lcore);
}

/* Blocks live and bytes held by blocks, caches flushed. */
static void
snapshot(struct rte_malloc_socket_stats *st)
{
	hpm_cache_flush();
	CHECK(hpm_malloc_get_socket_stats(0, st) == 0, "stats");
}

/* The producer of the pipeline: blocks of 64 B to the main lcore, which frees them. */
static unsigned int pipe_sent;

static size_t pipe_size, pipe_align;

static int
pipe_producer(void *arg)
{
	unsigned int n = (unsigned int)(uintptr_t)arg, i;

	for (i = 0; i < n; i++) {
		uint64_t *p = hpm_malloc("pipe", pipe_size, pipe_align);

		if (p == NULL)
			break;
		p[0] = i;
		p[7] = ~(uint64_t)i;
		while (rte_ring_enqueue(to_main, p) != 0)
			rte_pause();
	}
	__atomic_store_n(&pipe_sent, i, __ATOMIC_RELEASE);
	hpm_cache_flush();
	return 0;
}

/* Every stack of every cache within its capacity: its length and its limit. */
static void
check_stacks(const char *when)
{
	unsigned int slot, cls, bad = 0;

	for (slot = 0; slot < RTE_DIM(hpm_state->caches); slot++) {
		const struct hpm_lcore_cache *c = hpm_state->caches[slot];

		for (cls = 0; c != NULL && cls < HPM_CACHE_NCLASS; cls++) {
			const struct hpm_cache_stack *cc = hpm_cache_stack(c, cls);
			/* their owners write them meanwhile (relaxed atomics, as statistics read
			 * them) */
			uint32_t len = __atomic_load_n(&cc->len, __ATOMIC_RELAXED);
			uint32_t limit = __atomic_load_n(&cc->limit, __ATOMIC_RELAXED);

			if (len > cc->cap || limit > cc->cap ||
				cc->cap != hpm_cache_class_cap(cls)) {
				if (bad++ < 3)
					printf("%s: cache %u class %u: len %u limit %u cap %u\n",
						when, slot, cls, len, limit, cc->cap);
			}
		}
	}
	CHECK(bad == 0, "%s: %u stacks past their capacity", when, bad);
}

/*
 * A pipeline: the worker allocates, the main lcore frees. The main lcore's
 * full cache gives batches to the socket's transfer store and the worker's
 * empty one takes them, without the heap; a trim gives what the store holds
 * back to the heap. Of 64 B blocks, then of classes whose stacks are short
 * (size-class pages of 8 KiB, runs of 20 KiB): the main lcore's cache takes
 * frees before any refill set its limit.
 */
struct pipe_end {
	unsigned int n;
	unsigned int got;
	unsigned int bad;
};

/* Free what the producer sends until it has sent its n blocks. */
static void
pipe_consume(struct pipe_end *e)
{
	while (e->got < e->n &&
		(__atomic_load_n(&pipe_sent, __ATOMIC_ACQUIRE) == UINT32_MAX ||
			e->got < __atomic_load_n(&pipe_sent, __ATOMIC_ACQUIRE))) {
		uint64_t *p = NULL;

		if (rte_ring_dequeue(to_main, (void **)&p) != 0)
			continue;
		e->bad += p[0] != e->got || p[7] != ~(uint64_t)e->got;
		e->got++;
		hpm_free(p);
	}
}

/*
 * The consumer in a plain thread whose cache a 64 B block bound: its frees
 * of the pipe's class take the hit path before any refill or flush of that
 * class set its limit; its stacks checked before its exit empties them.
 */
static void *
pipe_consumer_thread(void *arg)
{
	hpm_free(hpm_malloc("pipe", 64, 0));
	pipe_consume(arg);
	check_stacks("pipeline, plain thread");
	return NULL;
}

static void
pipeline(size_t size, size_t align, bool in_thread)
{
	const unsigned int n = quick ? 5000 : size > 64 ? 40000 : 400000;
	struct rte_malloc_socket_stats before, after;
	struct pipe_end e = {.n = n};
	const struct hpm_xfer_class *xc;
	uint64_t puts, gets;
	int cls = hpm_cache_class(size, align);
	pthread_t th;

	pipe_size = size;
	pipe_align = align;
	/* room in the heap: no growth (its reclaim flushes a cache whole) as the thread binds */
	if (in_thread)
		hpm_free(hpm_malloc("room", 32 * MIB, 0));

	snapshot(&before);
	to_main = rte_ring_create("pipe", RING_SIZE, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	CHECK(to_main != NULL && cls >= 0, "ring");
	if (to_main == NULL || cls < 0)
		return;
	xc = hpm_state->xfer[0] != NULL ? &hpm_state->xfer[0]->cls[cls] : NULL;
	puts = xc != NULL ? xc->puts : 0;
	gets = xc != NULL ? xc->gets : 0;
	__atomic_store_n(&pipe_sent, UINT32_MAX, __ATOMIC_RELAXED);
	rte_eal_remote_launch(pipe_producer, (void *)(uintptr_t)n, worker_lcore);
	if (in_thread && pthread_create(&th, NULL, pipe_consumer_thread, &e) == 0)
		pthread_join(th, NULL);
	else
		pipe_consume(&e);
	rte_eal_wait_lcore(worker_lcore);
	xc = hpm_state->xfer[0] != NULL ? &hpm_state->xfer[0]->cls[cls] : NULL;
	CHECK(e.got == n && e.bad == 0, "pipeline: %u of %u blocks, %u damaged", e.got, n, e.bad);
	/* how many batches depends on how the two lcores interleave: both ways, at least */
	CHECK(xc != NULL && xc->puts - puts > 0 && xc->gets - gets > 0,
		"pipeline: the transfer store took %" PRIu64 " and gave %" PRIu64 " batches",
		xc != NULL ? xc->puts - puts : 0, xc != NULL ? xc->gets - gets : 0);
	snapshot(&after);
	CHECK(after.alloc_count == before.alloc_count &&
			after.heap_allocsz_bytes == before.heap_allocsz_bytes,
		"pipeline: %u blocks, %zu bytes left (before %u, %zu)", after.alloc_count,
		after.heap_allocsz_bytes, before.alloc_count, before.heap_allocsz_bytes);
	hpm_heap_trim();
	CHECK(xc != NULL && xc->len == 0, "pipeline: the trim left %u blocks in the store",
		xc != NULL ? xc->len : 0);
	CHECK(hpm_heap_check() == 0, "pipeline: heap check");
	check_stacks("pipeline");
	printf("pipeline: %u blocks of %zu B aligned %zu from lcore %u to %s; the transfer "
	       "store moved %" PRIu64 " batches in, %" PRIu64 " out\n",
		n, size, align, worker_lcore, in_thread ? "a plain thread" : "the main lcore",
		xc != NULL ? xc->puts - puts : 0, xc != NULL ? xc->gets - gets : 0);
	rte_ring_free(to_main);
	to_main = NULL;
}

/* Pairs each plain thread makes (fewer in checking builds, where every lock checks the heap). */
static unsigned int plain_ops = 1000;

/* What a plain thread (no lcore id) saw of its own cache. */
struct plain_result {
	unsigned int slot;
	uint64_t hits, misses;
	bool all_allocated;
	pthread_barrier_t *hold;
};

static void *
plain_main(void *arg)
{
	struct plain_result *r = arg;
	struct hpm_cache_stats cs, cs0 = {0};
	unsigned int i;

	r->all_allocated = true;
	hpm_free(hpm_malloc("plain", 64, 0)); /* binds: the stats of its slot from here */
	r->slot = hpm_cache_tls.cache != &hpm_cache_none ? hpm_cache_tls.cache->lcore : 0;
	if (r->slot != 0)
		hpm_cache_stats(r->slot, -1, &cs0);
	for (i = 0; i < plain_ops; i++) {
		void *a = hpm_malloc("plain", 64, 0), *b = hpm_malloc("plain", 4096, 4096);

		r->all_allocated &= a != NULL && b != NULL;
		hpm_free(a);
		hpm_free(b);
	}
	if (r->slot != 0 && hpm_cache_stats(r->slot, -1, &cs) == 0) {
		r->hits = cs.hits - cs0.hits;
		r->misses = cs.misses - cs0.misses;
	}
	/* all hold their slots at once */
	if (r->hold != NULL)
		pthread_barrier_wait(r->hold);
	return NULL;
}

/*
 * Plain pthreads get caches of their own: lock-free hits, given back at
 * the thread's exit, the slot taken again by the next thread; when more
 * threads than slots live at once, the others take the locked path.
 */
static void
plain_threads(void)
{
	enum { MANY = HPM_CACHE_THREAD_SLOTS + 8 };
	static struct plain_result many[MANY];
	static pthread_t tids[MANY];
	struct rte_malloc_socket_stats before, after;
	struct plain_result r1 = {0}, r2 = {0};
	struct hpm_cache_stats cs;
	pthread_barrier_t hold;
	unsigned int i, cached = 0, locked = 0, distinct = 1;
	pthread_t t;

	snapshot(&before);
	CHECK(pthread_create(&t, NULL, plain_main, &r1) == 0, "pthread_create");
	pthread_join(t, NULL);
	CHECK(r1.all_allocated, "plain thread: allocations failed");
	CHECK(r1.slot >= HPM_CACHE_THREAD_SLOT0 && r1.hits >= 2 * plain_ops - plain_ops / 10 &&
			r1.misses < 50,
		"plain thread: slot %u, %" PRIu64 " hits, %" PRIu64 " misses", r1.slot, r1.hits,
		r1.misses);
	CHECK(hpm_cache_stats(r1.slot, -1, &cs) == 0 && cs.blocks == 0,
		"plain thread: its cache holds %" PRIu64 " blocks after its exit", cs.blocks);
	CHECK(pthread_create(&t, NULL, plain_main, &r2) == 0, "pthread_create");
	pthread_join(t, NULL);
	CHECK(r2.slot == r1.slot, "the next plain thread took slot %u, not %u", r2.slot, r1.slot);
	/* more threads than slots at once (not in checking builds: 136 threads convoy on the lock) */
	if (quick) {
		snapshot(&after);
		CHECK(after.alloc_count == before.alloc_count, "plain threads: %u blocks left",
			after.alloc_count);
		printf("plain threads: slot %u, %" PRIu64 " hits; many at once skipped (quick)\n",
			r1.slot, r1.hits);
		return;
	}
	pthread_barrier_init(&hold, NULL, MANY);
	for (i = 0; i < MANY; i++) {
		many[i].hold = &hold;
		CHECK(pthread_create(&tids[i], NULL, plain_main, &many[i]) == 0, "pthread_create");
	}
	for (i = 0; i < MANY; i++)
		pthread_join(tids[i], NULL);
	pthread_barrier_destroy(&hold);
	for (i = 0; i < MANY; i++) {
		unsigned int j;

		CHECK(many[i].all_allocated, "thread %u: allocations failed", i);
		if (many[i].slot == 0) {
			locked++;
			continue;
		}
		cached++;
		for (j = 0; j < i; j++)
			if (many[j].slot == many[i].slot)
				distinct = 0;
	}
	CHECK(cached == HPM_CACHE_THREAD_SLOTS && locked == MANY - cached && distinct,
		"%u threads at once: %u with a cache (%s), %u on the locked path", MANY, cached,
		distinct ? "distinct" : "shared", locked);
	snapshot(&after);
	CHECK(after.alloc_count == before.alloc_count &&
			after.heap_allocsz_bytes == before.heap_allocsz_bytes,
		"plain threads: %u blocks, %zu bytes left (before %u, %zu)", after.alloc_count,
		after.heap_allocsz_bytes, before.alloc_count, before.heap_allocsz_bytes);
	printf("plain threads: a cache each (slot %u: %" PRIu64 " hits, %" PRIu64
	       " misses), back at exit; %u at once: %u cached, %u locked\n",
		r1.slot, r1.hits, r1.misses, MANY, cached, locked);
}

static void
bulk_dry(size_t size, unsigned int align)
{
	struct rte_malloc_socket_stats base, now;
	unsigned int got, i, n;
	void **objs;
	int rc;

	snapshot(&base);
	/* more than the whole heap could hold */
	n = base.heap_totalsz_bytes / size + 64;
	objs = calloc(2 * n, sizeof(*objs));
	/* the heap may not grow any more: find how many fit, one call at a time */
	hpm_source_fail_after = 0;
	for (got = 0; got < 2 * n; got++) {
		objs[got] = hpm_malloc("dry", size, align);
		if (objs[got] == NULL)
			break;
	}
	CHECK(got < 2 * n && rte_errno == ENOMEM, "%zu/%u: the heap did not run dry (%u)", size,
		align, got);
	for (i = 0; i < got; i++)
		hpm_free(objs[i]);
	snapshot(&now);
	CHECK(now.alloc_count == base.alloc_count, "singles freed");
	/* one more than fits: nothing, and nothing held */
	memset(objs, 0x5a, 2 * n * sizeof(*objs));
	rc = hpm_malloc_bulk(objs, got + 1, size, align, SOCKET_ID_ANY);
	CHECK(rc == -ENOMEM, "bulk of %u (%u fit) of %zu/%u: %d", got + 1, got, size, align, rc);
	snapshot(&now);
	CHECK(now.alloc_count == base.alloc_count &&
			now.heap_allocsz_bytes == base.heap_allocsz_bytes,
		"a failed bulk left %u blocks, %zu bytes (before %u, %zu)", now.alloc_count,
		now.heap_allocsz_bytes, base.alloc_count, base.heap_allocsz_bytes);
	/* exactly what fits: all of it */
	rc = hpm_malloc_bulk(objs, got, size, align, SOCKET_ID_ANY);
	CHECK(rc == 0, "bulk of the %u that fit of %zu/%u: %d", got, size, align, rc);
	if (rc == 0) {
		for (i = 0; i < got; i++)
			test_fill(objs[i], size);
		for (i = 0; i < got; i++)
			CHECK(test_intact(objs[i], size), "bulk block %u damaged", i);
		CHECK(hpm_malloc_bulk(objs + got, 1, size, align, SOCKET_ID_ANY) == -ENOMEM,
			"one more after a full bulk");
		hpm_free_bulk(objs, got);
	}
	snapshot(&now);
	CHECK(now.alloc_count == base.alloc_count, "bulk freed: %u blocks", now.alloc_count);
	/* memory back: the heap grows again */
	hpm_source_fail_after = -1;
	rc = hpm_malloc_bulk(objs, got + 64, size, align, SOCKET_ID_ANY);
	CHECK(rc == 0, "bulk of %u once the source has memory again: %d", got + 64, rc);
	if (rc == 0)
		hpm_free_bulk(objs, got + 64);
	printf("bulk %zu/%u when dry: %u fit, %u refused whole\n", size, align, got, got + 1);
	free(objs);
}

/*
 * Two lcores never write state bytes on one cache line: their 4 KiB granules
 * and 64K/64K blocks (runs of 16 granules) come from pages each takes alone
 * (64 KiB runs from any page: 32 single calls on two lcores took 11.3-12.0
 * ns a block against 5.3), and their 2 KiB heap blocks from batches
 * that start on lines of state bytes of their own (one byte per 64 bytes of
 * payload: 4 KiB per line). The lcores take batches in turn; their blocks
 * are compared.
 */
#define APART_N 64

static void *apart_4k[2][APART_N], *apart_2k[2][APART_N], *apart_64k[2][APART_N];
/* even: the worker takes its next eighth of blocks; odd: the main lcore */
static uint32_t apart_turn;

static void
apart_take(int who)
{
	unsigned int i;

	for (i = 0; i < APART_N; i++) {
		if (i % (APART_N / 8) == 0)
			rte_wait_until_equal_32(&apart_turn, 2 * (i / (APART_N / 8)) + who,
				__ATOMIC_ACQUIRE);
		apart_4k[who][i] = hpm_malloc(NULL, 4096, 4096);
		apart_2k[who][i] = hpm_malloc(NULL, 2048, 0);
		apart_64k[who][i] = hpm_malloc(NULL, 65536, 65536);
		CHECK(apart_4k[who][i] != NULL && apart_2k[who][i] != NULL &&
				apart_64k[who][i] != NULL,
			"apart: block %u", i);
		if (i % (APART_N / 8) == APART_N / 8 - 1)
			__atomic_store_n(&apart_turn, apart_turn + 1, __ATOMIC_RELEASE);
	}
}

static void
apart_give(int who)
{
	unsigned int i;

	for (i = 0; i < APART_N; i++) {
		hpm_free(apart_4k[who][i]);
		hpm_free(apart_2k[who][i]);
		hpm_free(apart_64k[who][i]);
	}
	hpm_cache_flush();
}

static int
apart_worker(void *arg)
{
	RTE_SET_USED(arg);
	apart_take(0);
	/* the main lcore compares, then frees its blocks; then these */
	rte_wait_until_equal_32(&apart_turn, 100, __ATOMIC_ACQUIRE);
	apart_give(0);
	return 0;
}

static void
lcores_apart(void)
{
	struct rte_malloc_socket_stats before, after;
	unsigned int i, j, shared_pages = 0, shared_lines = 0, shared_64k = 0;

	CHECK(hpm_malloc_get_socket_stats(0, &before) == 0, "stats");
	rte_eal_remote_launch(apart_worker, NULL, worker_lcore);
	apart_take(1);
	for (i = 0; i < APART_N; i++)
		for (j = 0; j < APART_N; j++) {
			shared_pages +=
				(uintptr_t)apart_4k[0][i] >> 21 == (uintptr_t)apart_4k[1][j] >> 21;
			shared_lines +=
				(uintptr_t)apart_2k[0][i] >> 12 == (uintptr_t)apart_2k[1][j] >> 12;
			shared_64k += (uintptr_t)apart_64k[0][i] >> 21 ==
				(uintptr_t)apart_64k[1][j] >> 21;
		}
	CHECK(shared_pages == 0, "apart: %u pairs of 4 KiB granules of two lcores on one page",
		shared_pages);
	CHECK(shared_lines == 0, "apart: %u pairs of 2 KiB blocks of two lcores on one line",
		shared_lines);
	CHECK(shared_64k == 0, "apart: %u pairs of 64K/64K blocks of two lcores on one page",
		shared_64k);
	CHECK(hpm_heap_check() == 0, "apart: heap check");
	apart_give(1);
	__atomic_store_n(&apart_turn, 100, __ATOMIC_RELEASE);
	rte_eal_wait_lcore(worker_lcore);
	CHECK(hpm_malloc_get_socket_stats(0, &after) == 0, "stats");
	CHECK(after.alloc_count == before.alloc_count, "apart: %u blocks left (before %u)",
		after.alloc_count, before.alloc_count);
}

/*
 * A drain request (what the heap asks before it grows) reaches another
 * lcore's cache through its limit, set to 0 with the flag: the owner's next
 * call on that class misses, whatever its stack holds, flushes the whole
 * cache and is served; its limits are back after. Once through an alloc
 * (blocks on the stack), once through a free.
 */
#define DRAIN_N 16

/* 1: the worker filled its cache; 2: the main lcore asked; 3, 4: again, for the free */
static uint32_t drain_step;
static void *drain_keep;

static int
drain_worker(void *arg)
{
	void *objs[DRAIN_N];
	unsigned int i;

	RTE_SET_USED(arg);
	for (i = 0; i < DRAIN_N; i++)
		objs[i] = hpm_malloc(NULL, 4096, 4096);
	for (i = 0; i < DRAIN_N; i++)
		hpm_free(objs[i]);
	drain_keep = hpm_malloc(NULL, 100, 0); /* a block of another class, held */
	hpm_free(hpm_malloc(NULL, 100, 0));    /* and one cached */
	__atomic_store_n(&drain_step, 1, __ATOMIC_RELEASE);
	rte_wait_until_equal_32(&drain_step, 2, __ATOMIC_ACQUIRE);
	/* an alloc with blocks on the stack and limit 0 */
	objs[0] = hpm_malloc(NULL, 4096, 4096);
	CHECK(objs[0] != NULL, "drain: the alloc after the request");
	__atomic_store_n(&drain_step, 3, __ATOMIC_RELEASE);
	rte_wait_until_equal_32(&drain_step, 4, __ATOMIC_ACQUIRE);
	/* a free into a drained class, then one into a class that held nothing */
	hpm_free(objs[0]);
	hpm_free(drain_keep);
	__atomic_store_n(&drain_step, 5, __ATOMIC_RELEASE);
	return 0;
}

/* No drain pending, every limit back, nothing held but in classes a and b. */
static void
drain_expect(const struct hpm_lcore_cache *c, const char *when, unsigned int a, unsigned int b)
{
	unsigned int i;

	for (i = 0; i < HPM_CACHE_NCLASS; i++) {
		const struct hpm_cache_stack *cc = hpm_cache_stack(c, i);

		CHECK(__atomic_load_n(&cc->drain, __ATOMIC_RELAXED) == 0 &&
				__atomic_load_n(&cc->limit, __ATOMIC_RELAXED) != 0,
			"drain, %s: class %u: drain %u, limit %u", when, i, cc->drain, cc->limit);
		if (i != a && i != b)
			CHECK(cc->len == 0, "drain, %s: class %u holds %u", when, i, cc->len);
	}
}

static void
drain_request(void)
{
	struct rte_malloc_socket_stats before, after;
	struct hpm_lcore_cache *c;
	unsigned int c4k = (unsigned int)hpm_cache_class(4096, 4096);
	unsigned int c100 = (unsigned int)hpm_cache_class(100, 0);

	CHECK(hpm_malloc_get_socket_stats(0, &before) == 0, "stats");
	__atomic_store_n(&drain_step, 0, __ATOMIC_RELAXED);
	rte_eal_remote_launch(drain_worker, NULL, worker_lcore);
	rte_wait_until_equal_32(&drain_step, 1, __ATOMIC_ACQUIRE);
	c = __atomic_load_n(&hpm_state->caches[worker_lcore], __ATOMIC_ACQUIRE);
	CHECK(c != NULL && hpm_cache_stack(c, c4k)->len >= DRAIN_N &&
			hpm_cache_stack(c, c100)->len >= 1,
		"drain: the worker's cache holds its blocks");
	if (c == NULL) {
		/* the worker goes through its steps */
		__atomic_store_n(&drain_step, 2, __ATOMIC_RELEASE);
		rte_wait_until_equal_32(&drain_step, 3, __ATOMIC_ACQUIRE);
		__atomic_store_n(&drain_step, 4, __ATOMIC_RELEASE);
		rte_eal_wait_lcore(worker_lcore);
		return;
	}
	hpm_cache_request_drain(c->socket);
	CHECK(hpm_cache_stack(c, c4k)->drain == 1 && hpm_cache_stack(c, c4k)->limit == 0 &&
			hpm_cache_stack(c, c100)->limit == 0,
		"drain: asked: drain %u, limit %u", hpm_cache_stack(c, c4k)->drain,
		hpm_cache_stack(c, c4k)->limit);
	__atomic_store_n(&drain_step, 2, __ATOMIC_RELEASE);
	rte_wait_until_equal_32(&drain_step, 3, __ATOMIC_ACQUIRE);
	/* flushed, then a batch taken, less the one served */
	drain_expect(c, "after an alloc", c4k, c4k);
	CHECK(hpm_cache_stack(c, c4k)->len < hpm_cache_stack(c, c4k)->batch,
		"drain: class 4K holds %u (batch %u)", hpm_cache_stack(c, c4k)->len,
		hpm_cache_stack(c, c4k)->batch);
	/* again, for a free: a class with blocks is asked, an empty one is not */
	hpm_cache_request_drain(c->socket);
	CHECK(hpm_cache_stack(c, c4k)->limit == 0 && hpm_cache_stack(c, c100)->limit != 0 &&
			hpm_cache_stack(c, c100)->len == 0,
		"drain: asked again: limits %u, %u", hpm_cache_stack(c, c4k)->limit,
		hpm_cache_stack(c, c100)->limit);
	__atomic_store_n(&drain_step, 4, __ATOMIC_RELEASE);
	rte_wait_until_equal_32(&drain_step, 5, __ATOMIC_ACQUIRE);
	rte_eal_wait_lcore(worker_lcore);
	/* the free that found limit 0 flushed the cache, then pushed its block; then the other */
	CHECK(hpm_cache_stack(c, c4k)->len == 1 && hpm_cache_stack(c, c100)->len == 1,
		"drain: 4K, 100 B hold %u, %u", hpm_cache_stack(c, c4k)->len,
		hpm_cache_stack(c, c100)->len);
	drain_expect(c, "after a free", c4k, c100);
	hpm_cache_flush_lcore(worker_lcore);
	CHECK(hpm_malloc_get_socket_stats(0, &after) == 0, "stats");
	CHECK(after.alloc_count == before.alloc_count, "drain: %u blocks left (before %u)",
		after.alloc_count, before.alloc_count);
	printf("drain: a request reaches another lcore's alloc and free hit paths\n");
}

/*
 * The classes the fast paths compute (hpm_cache_class(), from a few compares
 * and a table) against the model they replaced, which asks the route table:
 * the same class for every size up to 260 KiB and every alignment, a class
 * that holds the request, on the route the table gives; and the class a
 * heap block of each class's size maps back to.
 */
static int
model_class(size_t size, size_t align, bool small_heap)
{
	if (small_heap && align <= 64 && size - 1 < HPM_CACHE_SMALL_MAX)
		return (int)((size + 15) / HPM_CACHE_BLOCK_STEP);
	if (small_heap && align <= 64 && size - 1 < HPM_CACHE_HEAP_MAX && size != 4096)
		return hpm_cache_wide_class(RTE_ALIGN_CEIL(size + 16, HPM_CACHE_BLOCK_STEP));
	if (size - 1 < 4096 && align <= 4096 && hpm_route(size, align, small_heap) == HPM_ROUTE_G4K)
		return HPM_CACHE_C4K;
	/* 64 KiB at up to 64 KiB: 16 granules at 64 KiB, a class of its own */
	if (size == 65536 && align <= 65536 && hpm_route(size, align, small_heap) == HPM_ROUTE_G4K)
		return HPM_CACHE_C64K;
	/* granule runs up to 256 KiB at up to 64 KiB */
	if (hpm_route(size, align, small_heap) == HPM_ROUTE_G4K && size <= 256 * 1024 &&
		align <= 65536) {
		unsigned int cls;

		/* the shortest run class long enough, its start aligned enough */
		for (cls = HPM_CACHE_C4K; cls < HPM_CACHE_NCLASS; cls++) {
			size_t bytes, start;

			/* the class of one 4 KiB-aligned granule is HPM_CACHE_C4K's */
			if ((cls != HPM_CACHE_C4K && cls < HPM_CACHE_RUN0) || cls == HPM_CACHE_RUN0)
				continue;
			bytes = hpm_cache_block_bytes(cls);
			start = cls >= HPM_CACHE_RUN0 ? hpm_cache_run_align(cls) : 4096;
			/* runs aligned as asked, 4 KiB at least */
			if (bytes >= size && start == RTE_MAX(align, (size_t)4096))
				return (int)cls;
		}
		return -1;
	}
	if (hpm_route(size, align, small_heap) == HPM_ROUTE_SLAB) {
		unsigned int cls;

		/* the smallest size-class page class large and aligned enough */
		for (cls = 0; cls < HPM_SLAB_NCLASS; cls++) {
			size_t bytes = hpm_slab_class_bytes[cls];

			if (bytes >= size && (bytes & -bytes) >= RTE_MAX(align, (size_t)64))
				return HPM_CACHE_SLAB0 + (int)cls;
		}
	}
	return -1;
}

static void
classes_match_routes(bool small_heap)
{
	unsigned int wrong = 0, served = 0, k, cls;
	size_t size, align;

	/* what hpm_init() does for a heap with (or without) HPM_CFG_F_SMALL_HEAP */
	hpm_cache_small_classes(small_heap);

	for (k = 0; k <= 18; k++) {
		align = k == 0 ? 0 : (size_t)1 << (k - 1);
		for (size = 1; size <= 260 * 1024; size++) {
			int got = hpm_cache_class(size, align);
			enum hpm_route want = got == HPM_CACHE_C4K ? HPM_ROUTE_G4K
				: got == HPM_CACHE_C64K            ? HPM_ROUTE_G4K
				: got >= HPM_CACHE_RUN0            ? HPM_ROUTE_G4K
				: got >= HPM_CACHE_SLAB0           ? HPM_ROUTE_SLAB
								   : HPM_ROUTE_HEAP;
			size_t natural = got >= HPM_CACHE_RUN0
				? hpm_cache_run_align((unsigned int)got)
				: got >= HPM_CACHE_SLAB0
				? hpm_cache_block_bytes((unsigned int)got) &
					-hpm_cache_block_bytes((unsigned int)got)
				: 64;

			if (got != model_class(size, align, small_heap) ||
				(got >= 0 &&
					(hpm_cache_class_usable((unsigned int)got) < size ||
						hpm_route(size, align, small_heap) != want ||
						((want == HPM_ROUTE_SLAB || got >= HPM_CACHE_RUN0) &&
							natural < align)))) {
				if (wrong++ < 5)
					printf("size %zu align %zu%s: class %d, model %d\n", size,
						align, small_heap ? " (small heap)" : "", got,
						model_class(size, align, small_heap));
			}
			served += got >= 0;
		}
	}
	CHECK(wrong == 0, "hpm_cache_class() and the route table's model: %u differ", wrong);
	CHECK(served >= HPM_CACHE_HEAP_MAX, "every small request has a class (%u served)", served);
	for (cls = 0; cls < HPM_CACHE_HEAP_NCLASS; cls++) {
		size_t bytes = hpm_cache_block_bytes(cls);

		CHECK((int)hpm_cache_size_class[bytes / 64] - 1 == (int)cls,
			"heap block of %zu bytes maps back to class %u", bytes, cls);
	}
	/*
	 * A run's free: its state byte's class (its length's, 4 KiB-aligned)
	 * and its address give the class of its length whose alignment is the
	 * address's, 64 KiB at most; a stack of that class may hand it out.
	 */
	for (cls = HPM_CACHE_RUN0 + 1; cls < HPM_CACHE_NCLASS; cls++) {
		uint8_t held = hpm_cache_user_state(cls);
		unsigned int shift;

		for (shift = 12; shift <= 21; shift++) {
			uintptr_t p = ((uintptr_t)0x1234 << 21) + ((uintptr_t)1 << shift);
			int got;

			if (((size_t)1 << shift) < hpm_cache_run_align(cls))
				continue;
			got = hpm_cache_run_class_at((int)(held >> 1) - 1, (const void *)p);
			CHECK(got >= HPM_CACHE_RUN0 && got < HPM_CACHE_NCLASS &&
					hpm_cache_run_granules((unsigned int)got) ==
						hpm_cache_run_granules(cls) &&
					hpm_cache_run_align((unsigned int)got) ==
						RTE_MIN((size_t)1 << shift, (size_t)65536),
				"run class %u at an address aligned to 2^%u: class %d", cls, shift,
				got);
		}
	}
}

/*
 * Single granules the locked path hands out (a bulk longer than a cache
 * holds) share their pages with runs, whose role names no cache class: their
 * state bytes carry it, so the lcore that frees them keeps some in its cache
 * (without it, every one went back under the lock).
 */
static void
locked_singles(size_t size)
{
	static void *objs[HPM_CACHE_CAP + 88];
	struct hpm_cache_stats cs;
	int cls = hpm_cache_class(size, size), rc;
	unsigned int i;

	hpm_cache_flush();
	rc = hpm_malloc_bulk(objs, RTE_DIM(objs), size, (unsigned int)size, SOCKET_ID_ANY);
	CHECK(rc == 0 && cls >= 0, "bulk of %zu x %zu/%zu: %d (class %d)", RTE_DIM(objs), size,
		size, rc, cls);
	if (rc != 0 || cls < 0)
		return;
	for (i = 0; i < RTE_DIM(objs); i++)
		hpm_free(objs[i]);
	CHECK(hpm_cache_stats(rte_lcore_id(), cls, &cs) == 0 && cs.blocks > 0,
		"%zu/%zu singles of the locked path, freed: %" PRIu64 " kept by the cache", size,
		size, cs.blocks);
	hpm_cache_flush();
	CHECK(hpm_heap_check() == 0, "heap check after the locked singles");
}

/* Bytes the main lcore's cache holds. */
static size_t
main_cached(void)
{
	struct hpm_cache_stats cs;

	return hpm_cache_stats(rte_lcore_id(), -1, &cs) == 0 ? cs.bytes : SIZE_MAX;
}

/*
 * A 120 KiB block (a run of 32 granules) and a 32 KiB one (8), freed:
 * whether the cache kept each, and the heap's live bytes back where they
 * were. Bulk and realloc too.
 */
static void
lean_case(bool lean)
{
	struct rte_malloc_socket_stats s0, s;
	void *objs[4], *p;
	size_t held;
	int rc;

	hpm_cache_flush();
	CHECK(main_cached() == 0, "%s: the cache is empty after a flush",
		lean ? "lean" : "default");
	CHECK(hpm_malloc_get_socket_stats(rte_socket_id(), &s0) == 0, "stats");
	p = hpm_malloc(NULL, 120 << 10, 4096);
	CHECK(p != NULL, "120 KiB");
	hpm_free(p);
	held = main_cached();
	CHECK(lean ? held == 0 : held >= (120u << 10),
		"%s: a freed 120 KiB run is %s the cache (it holds %zu bytes)",
		lean ? "lean" : "default", lean ? "not kept by" : "kept by", held);
	p = hpm_malloc(NULL, 32 << 10, 4096);
	CHECK(p != NULL, "32 KiB");
	hpm_free(p);
	CHECK(main_cached() >= held + (32u << 10), "%s: a freed 32 KiB run is kept (%zu bytes)",
		lean ? "lean" : "default", main_cached());
	hpm_cache_flush();
	rc = hpm_malloc_bulk(objs, RTE_DIM(objs), 200 << 10, 65536, SOCKET_ID_ANY);
	CHECK(rc == 0, "bulk of 200 KiB blocks: %d", rc);
	if (rc == 0) {
		CHECK(((uintptr_t)objs[0] & 65535) == 0, "aligned");
		hpm_free_bulk(objs, RTE_DIM(objs));
	}
	CHECK(!lean || main_cached() == 0, "lean: bulk frees of long runs are not kept (%zu bytes)",
		main_cached());
	p = hpm_malloc(NULL, 8 << 10, 4096);
	p = p != NULL ? hpm_realloc(p, 160 << 10, 4096) : NULL;
	CHECK(p != NULL && ((uintptr_t)p & 4095) == 0, "realloc 8 -> 160 KiB");
	p = p != NULL ? hpm_realloc(p, 12 << 10, 4096) : NULL;
	CHECK(p != NULL, "realloc 160 -> 12 KiB");
	hpm_free(p);
	hpm_cache_flush();
	CHECK(hpm_malloc_get_socket_stats(rte_socket_id(), &s) == 0 &&
			s.alloc_count == s0.alloc_count &&
			s.heap_allocsz_bytes == s0.heap_allocsz_bytes,
		"%s: live blocks and bytes back to %u and %zu (%u, %zu)", lean ? "lean" : "default",
		s0.alloc_count, s0.heap_allocsz_bytes, s.alloc_count, s.heap_allocsz_bytes);
	CHECK(hpm_heap_check() == 0, "%s: heap check", lean ? "lean" : "default");
}

/*
 * A run request finds a cached run of its length that is more aligned than
 * it asks: a 40 KiB block at 64 KiB alignment, freed, serves 40 KiB at 4, 8,
 * 16 and 32 KiB alignment, without a refill from the heap.
 */
static void
run_alignments(void)
{
	unsigned int k;

	for (k = 12; k <= 15; k++) {
		struct hpm_cache_stats before, after;
		void *p, *q;

		hpm_cache_flush();
		p = hpm_malloc(NULL, 40 << 10, 65536);
		CHECK(p != NULL && ((uintptr_t)p & 65535) == 0, "40 KiB at 64 KiB alignment");
		hpm_free(p);
		CHECK(hpm_cache_stats(rte_lcore_id(), -1, &before) == 0, "cache stats");
		q = hpm_malloc(NULL, 40 << 10, 1u << k);
		CHECK(hpm_cache_stats(rte_lcore_id(), -1, &after) == 0, "cache stats");
		CHECK(q == p && after.misses == before.misses,
			"40 KiB at 2^%u alignment: the cached 64 KiB-aligned run %p, no refill (got %p, "
			"%" PRIu64 " misses more)",
			k, p, q, after.misses - before.misses);
		hpm_free(q);
		/* freed again, it goes back to the class of its address's alignment */
		q = hpm_malloc(NULL, 40 << 10, 65536);
		CHECK(q == p, "then at 64 KiB alignment again: %p (got %p)", p, q);
		hpm_free(q);
	}
	CHECK(hpm_heap_check() == 0, "heap check after runs across alignments");
}

/*
 * A refill of a class of granule runs takes the run asked for, no more (a
 * batch of runs cut ahead of need splits the pages' free ranges); one of a
 * size class, a batch.
 */
static void
refill_amounts(void)
{
	static const struct {
		size_t size, align;
		bool run;
	} cases[] = {
		{4096, 65536, true},                  /* one granule at 64 KiB */
		{12288, 16384, true},                 /* three at 16 KiB */
		{40 << 10, 4096, true},               /* ten */
		{256, 0, false}, {4096, 4096, false}, /* the 4 KiB granule class */
	};
	unsigned int i;

	for (i = 0; i < RTE_DIM(cases); i++) {
		int cls = hpm_cache_class(cases[i].size, RTE_MAX(cases[i].align, (size_t)1));
		struct hpm_cache_stats st;
		void *p;

		hpm_cache_flush();
		p = hpm_malloc(NULL, cases[i].size, cases[i].align);
		CHECK(p != NULL && cls >= 0 && hpm_cache_stats(rte_lcore_id(), cls, &st) == 0,
			"%zu at %zu: class %d", cases[i].size, cases[i].align, cls);
		if (p == NULL || cls < 0)
			continue;
		CHECK(cases[i].run == (cls >= HPM_CACHE_RUN0),
			"%zu at %zu: class %d is %sa run class", cases[i].size, cases[i].align, cls,
			cases[i].run ? "not " : "");
		CHECK(cases[i].run ? st.blocks == 0 : st.blocks > 0,
			"%zu at %zu: the refill left %" PRIu64 " blocks in the cache (%s)",
			cases[i].size, cases[i].align, st.blocks,
			cases[i].run ? "none expected" : "a batch expected");
		hpm_free(p);
	}
	hpm_cache_flush();
}

/*
 * A class under a budget that allows twice its stack, refilled from the heap
 * while its stack is empty, takes the whole stack: a stream of allocations
 * without a free (seed 004) takes the lock once a limit, not once a batch.
 * Right after a drain, a refill takes a batch only.
 */
static void
refill_whole(void)
{
	static void *blocks[8 * HPM_CACHE_CAP];
	struct hpm_cache_stats before, after;
	struct hpm_cache_stack *cc;
	static void *grow[64];
	struct hpm_lcore_cache *c;
	unsigned int i, n, limit, g = 0;

	hpm_cache_flush();
	c = hpm_cache_get();
	CHECK(c != NULL, "refill whole: the main lcore has a cache");
	if (c == NULL)
		return;
	cc = hpm_cache_stack(c, HPM_CACHE_C4K);
	/*
	 * A heap large enough for the class's limit to reach its stack's
	 * capacity (a cache's part is 1/cache_share of the heap): grown by large
	 * blocks, kept after their free (retain_size). The stress before leaves
	 * more or less of it (a short run: a limit of 184).
	 */
	for (;;) {
		hpm_cache_flush();
		blocks[0] = hpm_malloc(NULL, 4096, 4096);
		if (cc->limit >= cc->cap || g == RTE_DIM(grow))
			break;
		hpm_free(blocks[0]);
		/* freed: if the heap cannot grow, the check below fails on NULL, not a freed block */
		blocks[0] = NULL;
		grow[g] = hpm_malloc(NULL, 16 << 20, 0);
		if (grow[g] == NULL)
			break;
		g++;
	}
	for (i = 0; i < g; i++)
		hpm_free(grow[i]);
	limit = cc->limit;
	CHECK(blocks[0] != NULL && limit == cc->cap && cc->fill_whole,
		"refill whole: 4 KiB class limit %u of %u, fill whole %d (after %u MiB of large "
		"blocks: the heap and an idle cache's budget allow the whole stack)",
		limit, cc->cap, cc->fill_whole, g * 16);
	CHECK(cc->len + 1 == limit || cc->len + 1 == cc->batch,
		"refill whole: the first refill left %u blocks (limit %u, batch %u)", cc->len,
		limit, cc->batch);
	CHECK(hpm_cache_stats(rte_lcore_id(), HPM_CACHE_C4K, &before) == 0, "stats");
	n = 8 * limit;
	for (i = 1; i < n; i++) {
		blocks[i] = hpm_malloc(NULL, 4096, 4096);
		CHECK(blocks[i] != NULL, "refill whole: block %u", i);
	}
	CHECK(hpm_cache_stats(rte_lcore_id(), HPM_CACHE_C4K, &after) == 0, "stats");
	/* a batch is half a limit: refills of batches would miss 14 times or more */
	CHECK(after.misses - before.misses <= n / limit + 1,
		"refill whole: %u allocations missed %" PRIu64 " times (limit %u, batch %u)", n - 1,
		after.misses - before.misses, limit, cc->batch);
	for (i = 0; i < n; i++)
		hpm_free(blocks[i]);
	hpm_cache_flush();
	/*
	 * a drain asked (as hpm_cache_request_drain() asks the other caches):
	 * the refill after it takes a batch, less the block served
	 */
	blocks[0] = hpm_malloc(NULL, 4096, 4096);
	__atomic_store_n(&cc->drain, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&cc->limit, 0, __ATOMIC_SEQ_CST);
	blocks[1] = hpm_malloc(NULL, 4096, 4096);
	CHECK(blocks[1] != NULL && cc->len < cc->batch,
		"refill whole: after a drain the 4 KiB class holds %u (batch %u)", cc->len,
		cc->batch);
	hpm_free(blocks[0]);
	hpm_free(blocks[1]);
	hpm_cache_flush();
	printf("refill whole: %u allocations of 4 KiB, %" PRIu64
	       " refills of up to %u (the heap grown by %u MiB first)\n",
		n, after.misses - before.misses + 1, limit, g * 16);
}

/* Bytes the main lcore's cache holds in the classes under its budget. */
static size_t
budget_held(void)
{
	struct hpm_cache_stats cs;
	unsigned int cls;
	size_t bytes = 0;

	for (cls = HPM_CACHE_BUDGET_CLASS0; cls < HPM_CACHE_NCLASS; cls++)
		if (hpm_cache_stats(rte_lcore_id(), (int)cls, &cs) == 0)
			bytes += cs.bytes;
	return bytes;
}

/* A request of class cls: its size in *size, its alignment; 0 if none. */
static size_t
budget_request(unsigned int cls, size_t *size)
{
	if (cls == HPM_CACHE_C4K || cls == HPM_CACHE_C64K) {
		*size = cls == HPM_CACHE_C4K ? 4096 : 65536;
		return *size;
	}
	*size = hpm_cache_class_bytes(cls);
	if (cls >= HPM_CACHE_RUN0)
		return hpm_cache_run_align(cls);
	return 64;
}

#define BUDGET_PER_CLASS 12
#define BUDGET_BURST 40

/*
 * The cache's byte budget: blocks of every class under it (granules, size
 * classes, runs of every length and alignment, 12 a class: more than 20 MiB,
 * of which the classes' own limits would keep about 12) freed into the main
 * lcore's cache; it keeps twice its budget at most (a class's limit is what
 * the others leave when it is set, the count of what they hold is refreshed
 * every 16th setting). Then bursts of 64 KiB blocks, half the budget each
 * (40 at most): the classes gone idle give their room up (each to an equal
 * share: together at most the budget), the bursts come from the cache, and
 * it holds at most twice its budget (the class in use holds up to its own
 * limit beside the others). With the default budget (8 MiB) twice the budget
 * is more than the classes' limits keep: the case with a budget of 2 MiB
 * (cache_budget_min) is the one that fails without it.
 */
static void
cache_budget(void)
{
	static void *blocks[HPM_CACHE_NCLASS][BUDGET_PER_CLASS];
	struct hpm_lcore_cache *c;
	struct hpm_cache_stats before, after;
	unsigned int cls, i, round, tried = 0;
	size_t budget, held, size, align;
	void *burst[BUDGET_BURST];
	unsigned int nburst;

	hpm_cache_flush();
	c = hpm_cache_get();
	CHECK(c != NULL, "budget: the main lcore has a cache");
	if (c == NULL)
		return;
	memset(blocks, 0, sizeof(blocks));
	for (cls = HPM_CACHE_BUDGET_CLASS0; cls < HPM_CACHE_NCLASS; cls++) {
		align = budget_request(cls, &size);
		if (!hpm_cache_keeps(cls) || hpm_cache_class(size, align) != (int)cls)
			continue;
		tried++;
		for (i = 0; i < BUDGET_PER_CLASS; i++) {
			blocks[cls][i] = hpm_malloc("budget", size, (unsigned int)align);
			CHECK(blocks[cls][i] != NULL, "budget: class %u, %zu bytes at %zu", cls,
				size, align);
		}
	}
	CHECK(tried > 100, "budget: %u classes tried", tried);
	for (cls = 0; cls < HPM_CACHE_NCLASS; cls++)
		for (i = 0; i < BUDGET_PER_CLASS; i++)
			hpm_free(blocks[cls][i]);
	budget = hpm_cache_budget(c);
	held = budget_held();
	nburst = (unsigned int)RTE_MIN((size_t)BUDGET_BURST, budget / 2 / 65536);
	printf("budget: %u classes, %zu bytes cached of a budget of %zu\n", tried, held, budget);
	CHECK(held > 0 && held <= 2 * budget,
		"budget: %zu bytes held against a budget of %zu after every class", held, budget);
	/* a class in use takes the room of those gone idle */
	for (round = 0; round < 64; round++) {
		for (i = 0; i < nburst; i++)
			burst[i] = hpm_malloc("budget", 65536, 65536);
		for (i = 0; i < nburst; i++) {
			CHECK(burst[i] != NULL, "budget: 64 KiB burst");
			hpm_free(burst[i]);
		}
	}
	CHECK(hpm_cache_stats(rte_lcore_id(), HPM_CACHE_C64K, &before) == 0, "budget: stats");
	for (i = 0; i < nburst; i++)
		burst[i] = hpm_malloc("budget", 65536, 65536);
	for (i = 0; i < nburst; i++)
		hpm_free(burst[i]);
	CHECK(hpm_cache_stats(rte_lcore_id(), HPM_CACHE_C64K, &after) == 0 &&
			after.misses == before.misses,
		"budget: a burst of %u x 64 KiB missed %" PRIu64
		" times after the others went idle",
		nburst, after.misses - before.misses);
	held = budget_held();
	printf("budget: after the bursts, %zu bytes cached, %" PRIu64 " x 64 KiB\n", held,
		after.blocks);
	CHECK(held <= 2 * budget, "budget: %zu bytes held against a budget of %zu after the bursts",
		held, budget);
	hpm_cache_flush();
	CHECK(hpm_heap_check() == 0, "heap check after the budget");
}

/*
 * The budget case on a fresh heap whose caches have a budget floor of
 * budget_min, then cfg's heap again. Fresh, so that the budget is the floor
 * all along: on the heap the stress left, chunks given back during the case
 * shrank the heap's part and the budget under it (cache_stress, once: a
 * burst missed). Of 64 MiB from the start: a class's own limit follows the
 * heap's size, and a heap grown only as far as the case needs (in chunks of
 * three units) left the 64 KiB class a limit of 16, short of a burst of 18.
 */
static void
budget_case(const struct hpm_config *cfg, size_t budget_min)
{
	struct hpm_config budgeted = *cfg;

	hpm_fini();
	budgeted.cache_budget_min = budget_min;
	budgeted.initial_size = 64u << 20;
	CHECK(hpm_init(&budgeted) == 0, "hpm_init, a cache budget of %zu", budget_min);
	cache_budget();
	hpm_fini();
	CHECK(hpm_init(cfg) == 0, "hpm_init, the defaults again");
}

/*
 * The budget follows activity: a cache that makes few of its socket's
 * locked refills and flushes keeps an eighth of the budget (more with its
 * part), the busy one all of it. The main lcore caches 64 KiB blocks (about
 * 3 MiB) while alone; then the worker churns bursts of 4 KiB granules for
 * two windows of events and more, while the main lcore frees a burst now and
 * then: its budget drops, and what it holds under it follows, also when it
 * frees runs of every cached length that it allocated before. Then the main
 * lcore alone is busy: its whole budget back.
 */
#define ACTIVE_MAIN_BLOCKS 48
#define ACTIVE_BURST 256
/* runs of 9 to 64 granules, 20 lengths, at 5 alignments, twice */
#define ACTIVE_SPREAD 200u

static size_t
active_spread_size(unsigned int i)
{
	return (size_t)(9 + (i % 20) * 55 / 19) << 12;
}

static uint32_t active_stop;

/* Locked refills and flushes: more blocks than the cache and the transfer store keep. */
static void
active_churn(unsigned int rounds)
{
	static void *objs[RTE_MAX_LCORE][ACTIVE_BURST];
	void **o = objs[rte_lcore_id()];
	unsigned int r, i;

	for (r = 0; r < rounds; r++) {
		for (i = 0; i < ACTIVE_BURST; i++)
			o[i] = hpm_malloc("active", 4096, 4096);
		for (i = 0; i < ACTIVE_BURST; i++) {
			CHECK(o[i] != NULL, "active: 4 KiB burst");
			hpm_free(o[i]);
		}
	}
}

static int
active_worker(void *arg)
{
	RTE_SET_USED(arg);
	while (!__atomic_load_n(&active_stop, __ATOMIC_ACQUIRE))
		active_churn(1);
	hpm_cache_flush();
	return 0;
}

/*
 * The locked events of c's socket so far, and c's budget; under the heap's
 * lock, which the counts are kept under (a ThreadSanitizer build runs this).
 */
static uint64_t
active_events(const struct hpm_lcore_cache *c, size_t *budget)
{
	const struct hpm_cache_xfer *x = hpm_state->xfer[c->socket];
	struct hpm_arena *a = &hpm_state->arenas[c->socket];
	uint64_t events;

	if (budget != NULL)
		*budget = 0;
	if (!hpm_arena_lock(a))
		return 0;
	events = x == NULL ? 0 : x->act_window * HPM_CACHE_ACT_WINDOW + x->act_now;
	if (budget != NULL)
		*budget = hpm_cache_budget(c);
	hpm_arena_unlock(a);
	return events;
}

/*
 * The whole budget of a cache now: its part of the heap (1/cache_share over
 * the caches), or of cache_budget_min, which the caches share.
 */
static size_t
budget_whole(const struct hpm_lcore_cache *c)
{
	struct hpm_arena *a = &hpm_state->arenas[c->socket];
	unsigned int n = RTE_MAX(__atomic_load_n(&hpm_state->ncaches, __ATOMIC_RELAXED), 1u);
	size_t whole = 0;

	if (!hpm_arena_lock(a))
		return 0;
	whole = RTE_MAX(a->cs.total_bytes / hpm_state->cfg.cache_share / n,
		hpm_state->cfg.cache_budget_min / n);
	hpm_arena_unlock(a);
	return whole;
}

/*
 * Blocks of a size-class page class that the churn (4 KiB granules) does not
 * use, under HPM_SLAB_SHARED_BYTES: a cache takes them from a page of its own.
 */
#define ACTIVE_PAGE_SIZE 3000u

/* Cache c owns a page of ACTIVE_PAGE_SIZE blocks (it takes blocks from it alone). */
static bool
owns_page(const struct hpm_lcore_cache *c)
{
	struct hpm_arena *a = &hpm_state->arenas[c->socket];
	int cls = hpm_slab_class(ACTIVE_PAGE_SIZE, 64);
	bool owns;

	if (cls < 0 || !hpm_arena_lock(a))
		return false;
	owns = a->slab.cls[cls].own[c->lcore] != NULL;
	hpm_arena_unlock(a);
	return owns;
}

static void
cache_activity(void)
{
	void *blocks[ACTIVE_MAIN_BLOCKS], *spread[ACTIVE_SPREAD];
	struct hpm_lcore_cache *c, *w;
	size_t full = 0, idle = 0, held, busy = 0, again = 0;
	uint64_t start;
	unsigned int i;

	hpm_cache_flush();
	active_churn(4); /* the main lcore's cache exists, and the worker's after */
	/* runs of every cached length and alignment, freed later while the main lcore is quiet */
	for (i = 0; i < ACTIVE_SPREAD; i++)
		spread[i] = hpm_malloc("spread", active_spread_size(i), 4096u << (i / 20 % 5));
	hpm_cache_flush();
	c = hpm_cache_get();
	CHECK(c != NULL, "activity: the main lcore has a cache");
	if (c == NULL)
		return;
	active_events(c, &full);
	for (i = 0; i < ACTIVE_MAIN_BLOCKS; i++)
		blocks[i] = hpm_malloc("active", ACTIVE_PAGE_SIZE, 0);
	for (i = 0; i < ACTIVE_MAIN_BLOCKS; i++)
		hpm_free(blocks[i]);
	CHECK(owns_page(c),
		"activity: the main lcore took its %u-byte blocks from no page of its own",
		ACTIVE_PAGE_SIZE);
	for (i = 0; i < ACTIVE_MAIN_BLOCKS; i++)
		blocks[i] = hpm_malloc("active", 65536, 65536);
	for (i = 0; i < ACTIVE_MAIN_BLOCKS; i++)
		hpm_free(blocks[i]);
	held = budget_held();
	printf("activity: budget %zu, %zu bytes cached while alone\n", full, held);
	CHECK(held >= ACTIVE_MAIN_BLOCKS / 2 * (size_t)65536,
		"activity: %zu bytes cached of %u x 64 KiB freed", held, ACTIVE_MAIN_BLOCKS);
	__atomic_store_n(&active_stop, 0, __ATOMIC_RELEASE);
	rte_eal_remote_launch(active_worker, NULL, worker_lcore);
	start = active_events(c, NULL);
	/*
	 * Two windows and more of the worker's events, and a burst of ours now
	 * and then: a pause of 20 times the burst's time, so that the part is
	 * about the same in a sanitizer's slow build; 32 bursts at least, for
	 * the trims (every 16th limit update) to run.
	 */
	for (i = 0; active_events(c, NULL) - start < 3 * HPM_CACHE_ACT_WINDOW || i < 32; i++) {
		uint64_t t0 = rte_get_timer_cycles(), us;

		active_churn(1);
		us = (rte_get_timer_cycles() - t0) * 1000000 / rte_get_timer_hz();
		rte_delay_us_sleep((unsigned int)RTE_MAX(20 * us, (uint64_t)2000));
	}
	active_events(c, &idle);
	held = budget_held();
	w = __atomic_load_n(&hpm_state->caches[worker_lcore], __ATOMIC_ACQUIRE);
	if (w != NULL)
		active_events(w, &busy);
	printf("activity: main lcore's budget %zu while the worker churns (worker's %zu), %zu "
	       "bytes cached\n",
		idle, busy, held);
	/* two caches now: the floor is shared */
	full = budget_whole(c);
	CHECK(busy == full, "activity: the busy worker's budget is %zu, not the whole %zu", busy,
		full);
	CHECK(idle <= full / 4,
		"activity: the main lcore's budget is %zu of %zu, little as it does", idle, full);
	CHECK(held <= 2 * idle, "activity: the main lcore caches %zu bytes on a budget of %zu",
		held, idle);
	/*
	 * Blocks come in from elsewhere (a ring, in an application) and the
	 * quiet main lcore frees them: its cache stays within its budget and
	 * one run, not a run or more of every class (counted only at trims, it
	 * filled class after class).
	 */
	for (i = 0; i < ACTIVE_SPREAD; i++)
		hpm_free(spread[i]);
	held = budget_held();
	active_events(c, &idle);
	printf("activity: %zu bytes cached after %u runs of 36 KiB - 256 KiB freed on a budget of "
	       "%zu\n",
		held, ACTIVE_SPREAD, idle);
	CHECK(held <= idle + (256u << 10),
		"activity: the quiet main lcore caches %zu bytes of the runs it freed, on a budget "
		"of %zu",
		held, idle);
	/* its page of those blocks is anyone's again: it took none since */
	CHECK(!owns_page(c),
		"activity: the main lcore, less busy than its share, still owns a "
		"page of %u-byte blocks",
		ACTIVE_PAGE_SIZE);
	__atomic_store_n(&active_stop, 1, __ATOMIC_RELEASE);
	rte_eal_wait_lcore(worker_lcore);
	/* the main lcore alone, two windows: its budget whole again */
	start = active_events(c, NULL);
	while (active_events(c, &again) - start < 2 * HPM_CACHE_ACT_WINDOW + 64)
		active_churn(1);
	full = budget_whole(c);
	CHECK(again == full, "activity: alone again, the main lcore's budget is %zu of %zu", again,
		full);
	hpm_cache_flush();
	CHECK(hpm_heap_check() == 0, "heap check after the activity case");
}

/*
 * The hit paths read the thread's binding through hpm_hit_binding() (on
 * x86-64, %fs at the offset hitline.c keeps): after a pair, it must be the
 * binding the cache layer wrote, bound to this generation, in every kind of
 * thread. Returns 0 when it is.
 */
static int
binding_seen(const char *who)
{
	hpm_binding_ref *t;

	hpm_free(hpm_malloc("binding", 64, 0));
	t = hpm_hit_binding();
	CHECK(t->cache == hpm_cache_tls.cache && t->gen == hpm_cache_tls.gen &&
			t->socket == hpm_cache_tls.socket,
		"%s: the hit paths' binding (cache %p, gen %" PRIu64 ", socket %d) is not the "
		"thread's (%p, %" PRIu64 ", %d)",
		who, (void *)t->cache, t->gen, t->socket, (void *)hpm_cache_tls.cache,
		hpm_cache_tls.gen, hpm_cache_tls.socket);
	CHECK(t->gen == hpm_hit.cache_gen && t->cache != &hpm_cache_none,
		"%s: not bound to a cache after a pair (gen %" PRIu64 " of %" PRIu64 ")", who,
		t->gen, hpm_hit.cache_gen);
	return 0;
}

static int
binding_lcore(void *arg)
{
	RTE_SET_USED(arg);
	return binding_seen("worker lcore");
}

static void *
binding_thread(void *arg)
{
	RTE_SET_USED(arg);
	binding_seen("plain pthread");
	return NULL;
}

static void
bindings(void)
{
	pthread_t th;

	binding_seen("main lcore");
	rte_eal_remote_launch(binding_lcore, NULL, worker_lcore);
	rte_eal_wait_lcore(worker_lcore);
	CHECK(pthread_create(&th, NULL, binding_thread, NULL) == 0, "pthread_create");
	pthread_join(th, NULL);
}

/* HPM_CFG_F_LEAN_CACHE: runs over 64 KiB bypass the caches; the defaults keep them. */
static void
lean_cache(struct hpm_config *cfg)
{
	lean_case(false);
	hpm_fini();
	cfg->flags |= HPM_CFG_F_LEAN_CACHE;
	CHECK(hpm_init(cfg) == 0, "hpm_init, lean caches");
	lean_case(true);
}

int
main(int argc, char **argv)
{
	struct hpm_config cfg;
	double seconds = 10;
	int i;

	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--duration") && i + 1 < argc)
			seconds = atof(argv[++i]);
	quick = getenv("HPM_TEST_OPS") != NULL;
	if (quick)
		plain_ops = 100;
	classes_match_routes(true);
	classes_match_routes(false);
	if (quick)
		seconds = 1;
	if (test_eal_init("cache", "-l", "0-1", "--no-pci", NULL) != 0)
		return TEST_SKIP;
	worker_lcore = rte_get_next_lcore(-1, 1, 0);
	if (worker_lcore >= RTE_MAX_LCORE) {
		printf("needs two lcores: skipped\n");
		return test_end("cache") == 0 ? TEST_SKIP : 1;
	}
	hpm_config_defaults(&cfg);
	cfg.source = HPM_SOURCE_EAL;
	cfg.chunk_size = 4 * MIB;
	/* no chunk goes back to the source: what fits when dry stays what fits */
	cfg.retain_size = 64 * 1024 * MIB;
	CHECK(hpm_init(&cfg) == 0, "hpm_init");
	bindings();
	/* then: the main lcore's cache frees blocks of classes it never refilled */
	pipeline(8000, 0, true);
	pipeline(20000, 4096, true);
	lcores_apart();
	drain_request();
	stress(seconds);
	registered_thread();
	plain_threads();
	pipeline(64, 0, false);
	bulk_dry(4096, 4096);
	bulk_dry(64, 0);
	bulk_dry(8192, 4096);
	locked_singles(4096);
	locked_singles(65536);
	CHECK(hpm_heap_check() == 0, "heap check at the end");
	run_alignments();
	refill_amounts();
	refill_whole();
	budget_case(&cfg, cfg.cache_budget_min);
	budget_case(&cfg, 2u << 20);
	cache_activity();
	lean_cache(&cfg);
	hpm_fini();
	return test_end("cache");
}
