/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Concurrent differential test. EAL lcores and plain pthreads (more threads
 * than CPUs, with random sched_yield, so that threads are preempted inside
 * the allocator) each run random malloc/zmalloc/calloc/realloc/free/bulk calls
 * (malloc and free half the time through hpm_inline.h)
 * over every route against a model of their own (an interval tree of their
 * live blocks: aligned, apart from each other, contents kept). Blocks travel
 * between threads through rte_rings (one for each pair of threads): each carries its owner, its
 * addressee, its size and the seed of its pattern in its first bytes, so that the thread that
 * receives it checks it whole before it frees it (hpm_free or hpm_free_bulk of another thread's
 * block) or adopts it into its own model (and later reallocs or frees it). Every thread validates
 * its live blocks (hpm_malloc_validate, hpm_malloc_usable_size) at intervals. At the end every
 * thread drains its blocks and its inbox and flushes its cache: the statistics are back at their
 * start, the heap checks, and the count of differences from the models is 0.
 *
 * usage: test_concurrent_diff [--ops N] [--threads P] [EAL options...]
 *   N operations in all (default 10^7), P plain pthreads beside the lcores
 *   (default 3); EAL runs on -l 0-1 unless options are given.
 * Environment: HPM_TEST_OPS (operations, over --ops), HPM_TEST_SEED.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <search.h>
#include <stdbool.h>
#include <time.h>

#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_ring.h>

#include "hpm_inline.h"
#include "hpm_malloc.h"
#include "test_common.h"

#define MIB (UINT64_C(1) << 20)
#define MAX_THREADS 16
#define MAX_LIVE 512
#define MAX_LIVE_BYTES (24 * MIB) /* a thread's */
#define RING_SIZE 1024
#define MAGIC UINT32_C(0x48504d43)
#define VALIDATE_EVERY 4096
#define MAX_REPORTS 20

/* What a block carries in its first bytes (every block has at least 32). */
struct hdr {
	uint32_t magic;
	uint16_t owner; /* the thread whose model holds it */
	uint16_t to;    /* the thread it was sent to, or the owner */
	uint64_t size;
	uint64_t seed;
	uint64_t check; /* of the fields above */
};

struct block {
	uint8_t *p;
	size_t size;
	size_t align;
	uint64_t seed;
};

struct counts {
	uint64_t ops;
	uint64_t blocks;
	uint64_t sent;
	uint64_t received;
	uint64_t adopted;
	uint64_t remote_frees;
	uint64_t validates;
	uint64_t yields;
	uint64_t enomem;
	uint64_t diffs;
};

struct worker {
	unsigned int id;
	bool lcore;
	uint64_t rs;
	uint64_t ops;
	/* inbox[from]: single-producer, single-consumer (TSan sees DPDK's SP/SC ring order) */
	struct rte_ring *inbox[MAX_THREADS];
	unsigned int next_inbox;
	unsigned int finished; /* atomic: what EAL's lcore wait does, TSan sees not */
	struct block live[MAX_LIVE];
	unsigned int nlive;
	size_t live_bytes;
	void *tree;
	struct counts c;
	pthread_t thread;
};

static struct worker *workers;
static unsigned int nworkers;
static unsigned int running;  /* workers still in their operations (atomic) */
static uint64_t in_flight;    /* blocks in rings (atomic) */
static unsigned int reported; /* differences printed (atomic) */

#define DIFF(w, ...)                                                                             \
	do {                                                                                     \
		(w)->c.diffs++;                                                                  \
		if (__atomic_fetch_add(&reported, 1, __ATOMIC_RELAXED) < MAX_REPORTS) {          \
			fprintf(stderr, "DIFF thread %u: %s:%d: ", (w)->id, __FILE__, __LINE__); \
			fprintf(stderr, __VA_ARGS__);                                            \
			fputc('\n', stderr);                                                     \
		}                                                                                \
	} while (0)

static inline uint64_t
hdr_check(const struct hdr *h)
{
	return (h->magic ^ ((uint64_t)h->owner << 32) ^ ((uint64_t)h->to << 48) ^ h->size) *
		UINT64_C(0x9e3779b97f4a7c15) ^
		h->seed;
}

static inline uint64_t
word(uint64_t seed, size_t off)
{
	return seed ^ (off * UINT64_C(0xff51afd7ed558ccd));
}

/* The words of a block's pattern: all up to 4 KiB, one per 512 B above, the last 64 B. */
static inline size_t
next_word(size_t off, size_t size)
{
	off += size <= 4096 || off + 8 >= size - 64 ? 8 : 512;
	if (size > 4096 && off < size - 64 && off + 512 >= size - 64)
		off = RTE_ALIGN_FLOOR(size - 64, 8);
	return off;
}

#define FOR_WORDS(size, off) \
	for (size_t off = sizeof(struct hdr); off + 8 <= (size); off = next_word(off, (size)))

static void
put_hdr(uint8_t *p, uint16_t owner, uint16_t to, size_t size, uint64_t seed)
{
	struct hdr *h = (struct hdr *)p;

	h->magic = MAGIC;
	h->owner = owner;
	h->to = to;
	h->size = size;
	h->seed = seed;
	h->check = hdr_check(h);
}

static void
fill(uint8_t *p, size_t size, uint64_t seed, uint16_t owner)
{
	put_hdr(p, owner, owner, size, seed);
	FOR_WORDS(size, off)
	memcpy(p + off, &(uint64_t){word(seed, off)}, 8);
}

/* Whether the words of a block of size bytes (below limit) at p are its pattern's. */
static bool
words_intact(const uint8_t *p, size_t size, uint64_t seed, size_t limit, size_t *bad)
{
	FOR_WORDS(size, off)
	{
		uint64_t v;

		if (off + 8 > limit)
			break;
		memcpy(&v, p + off, 8);
		if (v != word(seed, off)) {
			*bad = off;
			return false;
		}
	}
	return true;
}

static int
interval_cmp(const void *a, const void *b)
{
	const struct block *x = a, *y = b;

	if (x->p + x->size <= y->p)
		return -1;
	if (y->p + y->size <= x->p)
		return 1;
	return 0;
}

/* A request over the routes, weighted as an application's. */
static void
pick(struct worker *w, size_t *size, size_t *align)
{
	unsigned int r = test_rand(&w->rs) % 1000;
	uint64_t v = test_rand(&w->rs);

	if (r < 450) { /* small: size classes, heap */
		*size = 32 + v % (v & 1024 ? 992 : 224);
		*align = v & 2048 ? 64 : 0;
	} else if (r < 600) { /* medium heap */
		*size = 1025 + v % 15360;
		*align = 0;
	} else if (r < 800) { /* 4K/4K and its multiples */
		*size = 4096 * (1 + (v >> 20) % 2);
		*align = 4096;
	} else if (r < 900) { /* 64K/64K */
		*size = 65536;
		*align = v & 1 ? 65536 : 0;
	} else if (r < 980) { /* runs of 4 KiB granules */
		*size = 4097 + v % (256 * 1024);
		*align = 4096;
	} else if (r < 998) { /* beyond the heap */
		*size = 300 * 1024 + v % (700 * 1024);
		*align = 0;
	} else { /* whole 2 MiB units */
		*size = 2 * MIB + v % MIB;
		*align = v & 1 ? 2 * MIB : 0;
	}
}

static bool
add(struct worker *w, uint8_t *p, size_t size, size_t align, uint64_t seed)
{
	struct block *b = &w->live[w->nlive];
	size_t eff = align < 64 ? 64 : align, usable = 0;
	void **node;

	if (((uintptr_t)p & (eff - 1)) != 0)
		DIFF(w, "%p not aligned to %zu", p, eff);
	if (hpm_malloc_validate(p, &usable) != 0 || usable < size)
		DIFF(w, "validate %p: usable %zu < %zu", p, usable, size);
	b->p = p;
	b->size = size;
	b->align = align;
	b->seed = seed;
	node = tsearch(b, &w->tree, interval_cmp);
	if (node == NULL || *node != b) {
		DIFF(w, "block %p+%zu overlaps live block %p+%zu", p, size,
			node ? ((struct block *)*node)->p : NULL,
			node ? ((struct block *)*node)->size : 0);
		return false;
	}
	w->nlive++;
	w->live_bytes += size;
	return true;
}

static void
remove_at(struct worker *w, unsigned int k)
{
	struct block *b = &w->live[k], *last = &w->live[w->nlive - 1];

	tdelete(b, &w->tree, interval_cmp);
	w->live_bytes -= b->size;
	if (b != last) {
		tdelete(last, &w->tree, interval_cmp);
		*b = *last;
		tsearch(b, &w->tree, interval_cmp);
	}
	w->nlive--;
}

/* A block of the model whole: its header names its owner, its words are its pattern's. */
static bool
check_block(struct worker *w, const struct block *b, const char *when)
{
	const struct hdr *h = (const struct hdr *)b->p;
	size_t bad = 0;

	if (h->magic != MAGIC || h->check != hdr_check(h) || h->owner != w->id ||
		h->size != b->size || h->seed != b->seed) {
		DIFF(w, "%s: block %p (%zu B): header damaged (owner %u, size %" PRIu64 ")", when,
			b->p, b->size, h->owner, h->size);
		return false;
	}
	if (!words_intact(b->p, b->size, b->seed, b->size, &bad)) {
		DIFF(w, "%s: block %p (%zu B): word at %zu damaged", when, b->p, b->size, bad);
		return false;
	}
	return true;
}

static void
do_alloc(struct worker *w, unsigned int kind)
{
	size_t size, align, num = 1;
	uint64_t seed = test_rand(&w->rs);
	uint8_t *p;
	size_t i;

	pick(w, &size, &align);
	if (kind == 2) {
		num = 1 + seed % 4;
		size = RTE_MAX((size + num - 1) / num, (size_t)32);
	}
	/* malloc half the time through hpm_inline.h */
	if (kind == 0)
		p = seed & 1 ? hpm_malloc_inline("cdiff", size, align)
			     : hpm_malloc("cdiff", size, align);
	else
		p = kind == 1 ? hpm_zmalloc("cdiff", size, align)
			      : hpm_calloc("cdiff", num, size, align);
	size *= num;
	if (p == NULL) {
		if (rte_errno != ENOMEM)
			DIFF(w, "alloc %zu align %zu: NULL with rte_errno %d", size, align,
				rte_errno);
		w->c.enomem++;
		return;
	}
	if (kind != 0)
		for (i = 0; i < size; i += i < 4096 ? 1 : 4096)
			if (p[i] != 0) {
				DIFF(w, "zeroed %p (%zu B): byte %zu is %#x", p, size, i, p[i]);
				break;
			}
	if (add(w, p, size, align, seed))
		fill(p, size, seed, w->id);
	w->c.blocks++;
}

static void
do_realloc(struct worker *w)
{
	unsigned int k = test_rand(&w->rs) % w->nlive;
	struct block old = w->live[k];
	size_t size, align, bad = 0;
	uint8_t *p;

	if (!check_block(w, &old, "before realloc"))
		return;
	pick(w, &size, &align);
	p = hpm_realloc(old.p, size, align);
	if (p == NULL) {
		if (rte_errno != ENOMEM)
			DIFF(w, "realloc to %zu: NULL with rte_errno %d", size, rte_errno);
		w->c.enomem++;
		check_block(w, &old, "after a failed realloc");
		return;
	}
	/* the header and the words both sizes cover moved with the block */
	if (((struct hdr *)p)->magic != MAGIC || ((struct hdr *)p)->owner != w->id ||
		((struct hdr *)p)->size != old.size || ((struct hdr *)p)->seed != old.seed ||
		!words_intact(p, old.size, old.seed, size, &bad))
		DIFF(w, "realloc %p (%zu B) -> %p (%zu B): word at %zu lost", old.p, old.size, p,
			size, bad);
	remove_at(w, k);
	if (add(w, p, size, align, old.seed))
		fill(p, size, old.seed, w->id);
}

static void
free_at(struct worker *w, unsigned int k)
{
	struct block b = w->live[k];

	check_block(w, &b, "before free");
	remove_at(w, k);
	if (b.seed & 2)
		hpm_free_inline(b.p);
	else
		hpm_free(b.p);
}

static void
do_bulk(struct worker *w)
{
	unsigned int n = 1 + test_rand(&w->rs) % 32, i;
	void *objs[32];
	size_t size, align;
	int rc;

	do
		pick(w, &size, &align);
	while (size > 65536);
	if (w->nlive + n > MAX_LIVE || w->live_bytes + n * size > MAX_LIVE_BYTES)
		return;
	rc = hpm_malloc_bulk(objs, n, size, align, SOCKET_ID_ANY);
	if (rc != 0) {
		if (rc != -ENOMEM)
			DIFF(w, "bulk %u x (%zu, %zu): %d", n, size, align, rc);
		w->c.enomem++;
		return;
	}
	for (i = 0; i < n; i++) {
		uint64_t seed = test_rand(&w->rs);

		if (add(w, objs[i], size, align, seed))
			fill(objs[i], size, seed, w->id);
	}
	w->c.blocks += n;
}

static void
do_free_bulk(struct worker *w)
{
	unsigned int n = RTE_MIN(1 + test_rand(&w->rs) % 16, w->nlive), i;
	void *objs[16];

	for (i = 0; i < n; i++) {
		unsigned int k = w->nlive - 1;

		check_block(w, &w->live[k], "before free_bulk");
		objs[i] = w->live[k].p;
		remove_at(w, k);
	}
	hpm_free_bulk(objs, n);
}

/* Send a live block to another thread: out of the model, its header addressed. */
static void
do_send(struct worker *w)
{
	unsigned int k = test_rand(&w->rs) % w->nlive, to;
	struct block b = w->live[k];

	to = (w->id + 1 + test_rand(&w->rs) % (nworkers - 1)) % nworkers;
	if (!check_block(w, &b, "before send"))
		return;
	put_hdr(b.p, w->id, to, b.size, b.seed);
	__atomic_fetch_add(&in_flight, 1, __ATOMIC_RELAXED);
	if (rte_ring_sp_enqueue(workers[to].inbox[w->id], b.p) != 0) {
		/* a full inbox: free it here */
		__atomic_fetch_sub(&in_flight, 1, __ATOMIC_RELAXED);
		put_hdr(b.p, w->id, w->id, b.size, b.seed);
		free_at(w, k);
		return;
	}
	remove_at(w, k);
	w->c.sent++;
}

/* Blocks other threads sent: checked whole, then freed here (bulk or not) or adopted. */
static void
receive(struct worker *w, bool adopt)
{
	void *got[32], *frees[32];
	unsigned int n, i, nf = 0;

	/* one sender's ring a call, round them all */
	w->next_inbox = (w->next_inbox + 1) % nworkers;
	if (w->next_inbox == w->id)
		w->next_inbox = (w->next_inbox + 1) % nworkers;
	n = rte_ring_sc_dequeue_burst(w->inbox[w->next_inbox], got, RTE_DIM(got), NULL);
	for (i = 0; i < n; i++) {
		uint8_t *p = got[i];
		struct hdr *h = (struct hdr *)p;
		size_t usable = 0, bad = 0;

		if (h->magic != MAGIC || h->check != hdr_check(h) || h->to != w->id ||
			h->owner >= nworkers || h->owner == w->id) {
			DIFF(w, "received %p: header damaged (to %u, owner %u)", p, h->to,
				h->owner);
			continue; /* not freed: its size is unknown */
		}
		if (hpm_malloc_validate(p, &usable) != 0 || usable < h->size)
			DIFF(w, "received %p: validate: usable %zu < %" PRIu64, p, usable, h->size);
		if (!words_intact(p, h->size, h->seed, h->size, &bad))
			DIFF(w, "received %p (%" PRIu64 " B) from %u: word at %zu damaged", p,
				h->size, h->owner, bad);
		w->c.received++;
		if (adopt && w->nlive < MAX_LIVE && w->live_bytes + h->size <= MAX_LIVE_BYTES &&
			test_rand(&w->rs) % 2 == 0) {
			uint64_t seed = h->seed;
			size_t size = h->size;

			if (add(w, p, size, 0, seed))
				put_hdr(p, w->id, w->id, size, seed);
			w->c.adopted++;
			continue;
		}
		frees[nf++] = p;
	}
	w->c.remote_frees += nf;
	if (nf > 1 && test_rand(&w->rs) % 2 == 0) {
		hpm_free_bulk(frees, nf);
	} else {
		for (i = 0; i < nf; i++)
			if (i & 1)
				hpm_free_inline(frees[i]);
			else
				hpm_free(frees[i]);
	}
	if (n > 0)
		__atomic_fetch_sub(&in_flight, n, __ATOMIC_RELEASE);
}

static void
validate_live(struct worker *w)
{
	unsigned int i;

	for (i = 0; i < w->nlive; i++) {
		size_t usable = 0;

		if (hpm_malloc_validate(w->live[i].p, &usable) != 0 || usable < w->live[i].size ||
			hpm_malloc_usable_size(w->live[i].p) != usable)
			DIFF(w, "live block %p (%zu B): validate %zu", w->live[i].p,
				w->live[i].size, usable);
	}
	/* and a few contents */
	for (i = 0; i < 8 && w->nlive > 0; i++)
		check_block(w, &w->live[test_rand(&w->rs) % w->nlive], "validate");
	w->c.validates++;
}

static void
work(struct worker *w)
{
	uint64_t i;

	for (i = 0; i < w->ops; i++) {
		unsigned int r = test_rand(&w->rs) % 100;

		if (w->nlive == 0 && r >= 35)
			r = 0;
		if ((w->nlive >= MAX_LIVE || w->live_bytes >= MAX_LIVE_BYTES) && r < 35)
			r = 60;
		if (r < 22)
			do_alloc(w, 0);
		else if (r < 28)
			do_alloc(w, 1);
		else if (r < 32)
			do_alloc(w, 2);
		else if (r < 35)
			do_bulk(w);
		else if (r < 47)
			do_realloc(w);
		else if (r < 80)
			free_at(w, test_rand(&w->rs) % w->nlive);
		else if (r < 83)
			do_free_bulk(w);
		else
			do_send(w);
		w->c.ops++;
		if (i % 8 == 0)
			receive(w, true);
		if (i % VALIDATE_EVERY == 0)
			validate_live(w);
		if (test_rand(&w->rs) % 64 == 0) {
			sched_yield();
			w->c.yields++;
		}
	}
	/* the drain: what this thread holds, then what others still send */
	while (w->nlive > 0)
		free_at(w, w->nlive - 1);
	__atomic_fetch_sub(&running, 1, __ATOMIC_RELEASE);
	for (;;) {
		receive(w, false);
		if (__atomic_load_n(&running, __ATOMIC_ACQUIRE) == 0 &&
			__atomic_load_n(&in_flight, __ATOMIC_ACQUIRE) == 0)
			break;
		sched_yield();
	}
	hpm_cache_flush();
	__atomic_store_n(&w->finished, 1, __ATOMIC_RELEASE);
}

static int
lcore_main(void *arg)
{
	work(arg);
	return 0;
}

static void *
thread_main(void *arg)
{
	work(arg);
	return NULL;
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int
main(int argc, char **argv)
{
	struct rte_malloc_socket_stats before, after;
	unsigned long ops = 10000000, threads = 3, i;
	unsigned int lcore, nlcores = 0;
	struct counts all = {0};
	char *eal_args[16];
	int neal = 0, rc;
	uint64_t seed;
	double t0;

	for (i = 1; i < (unsigned long)argc; i++) {
		if (!strcmp(argv[i], "--ops") && i + 1 < (unsigned long)argc)
			ops = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--threads") && i + 1 < (unsigned long)argc)
			threads = strtoul(argv[++i], NULL, 0);
		else if (neal < 12)
			eal_args[neal++] = argv[i];
	}
	if (getenv("HPM_TEST_OPS") != NULL)
		ops = strtoul(getenv("HPM_TEST_OPS"), NULL, 0);
	seed = test_seed(0xc0d1ff);
	if (neal == 0) {
		eal_args[neal++] = (char *)(uintptr_t) "-l";
		eal_args[neal++] = (char *)(uintptr_t) "0-1";
	}
	eal_args[neal] = NULL;
	rc = test_eal_init("concurrent_diff", "--no-pci", neal > 0 ? eal_args[0] : NULL,
		neal > 1 ? eal_args[1] : NULL, neal > 2 ? eal_args[2] : NULL,
		neal > 3 ? eal_args[3] : NULL, neal > 4 ? eal_args[4] : NULL, NULL);
	if (rc != 0) {
		printf("EAL not available: skipped\n");
		return TEST_SKIP;
	}
	nlcores = rte_lcore_count();
	nworkers = RTE_MIN(nlcores + threads, (unsigned long)MAX_THREADS);
	if (nworkers < 2) {
		printf("one thread: nothing to cross; skipped\n");
		return test_end("concurrent_diff") == 0 ? TEST_SKIP : 1;
	}
	workers = calloc(nworkers, sizeof(*workers));
	CHECK(workers != NULL, "calloc");
	if (workers == NULL)
		return test_end("concurrent_diff");
	{
		struct hpm_config cfg;

		hpm_config_defaults(&cfg);
		cfg.source = HPM_SOURCE_EAL;
		rc = hpm_init(&cfg);
		CHECK(rc == 0, "hpm_init: %d", rc);
	}
	for (i = 0; i < nworkers; i++) {
		unsigned int from;

		workers[i].id = i;
		workers[i].lcore = i < nlcores;
		workers[i].rs = seed + i * UINT64_C(0x9e3779b97f4a7c15);
		workers[i].rs = workers[i].rs != 0 ? workers[i].rs : 1;
		workers[i].ops = ops / nworkers + (i < ops % nworkers);
		for (from = 0; from < nworkers; from++) {
			char name[32];

			if (from == i)
				continue;
			snprintf(name, sizeof(name), "cdiff_%lu_%u", i, from);
			workers[i].inbox[from] = rte_ring_create(name, RING_SIZE, SOCKET_ID_ANY,
				RING_F_SP_ENQ | RING_F_SC_DEQ);
			CHECK(workers[i].inbox[from] != NULL, "ring: %s", rte_strerror(rte_errno));
			if (workers[i].inbox[from] == NULL)
				return test_end("concurrent_diff");
		}
	}
	printf("%u threads (%u lcores, %u pthreads) on %ld CPUs, %lu ops\n", nworkers, nlcores,
		nworkers - nlcores, sysconf(_SC_NPROCESSORS_ONLN), ops);
	CHECK(hpm_malloc_get_socket_stats(0, &before) == 0, "stats");

	t0 = now_s();
	running = nworkers;
	for (i = nlcores; i < nworkers; i++)
		CHECK(pthread_create(&workers[i].thread, NULL, thread_main, &workers[i]) == 0,
			"pthread_create");
	i = 1;
	RTE_LCORE_FOREACH_WORKER (lcore)
		rte_eal_remote_launch(lcore_main, &workers[i++], lcore);
	work(&workers[0]);
	rte_eal_mp_wait_lcore();
	for (i = nlcores; i < nworkers; i++)
		pthread_join(workers[i].thread, NULL);

	for (i = 0; i < nworkers; i++) {
		struct counts *c = &workers[i].c;

		while (__atomic_load_n(&workers[i].finished, __ATOMIC_ACQUIRE) == 0)
			sched_yield();
		all.ops += c->ops;
		all.blocks += c->blocks;
		all.sent += c->sent;
		all.received += c->received;
		all.adopted += c->adopted;
		all.remote_frees += c->remote_frees;
		all.validates += c->validates;
		all.yields += c->yields;
		all.enomem += c->enomem;
		all.diffs += c->diffs;
		for (lcore = 0; lcore < nworkers; lcore++) {
			if (workers[i].inbox[lcore] == NULL)
				continue;
			CHECK(rte_ring_count(workers[i].inbox[lcore]) == 0,
				"inbox %lu from %u not empty", i, lcore);
			rte_ring_free(workers[i].inbox[lcore]);
		}
	}
	/* a worker lcore's cache, if its own flush left anything */
	RTE_LCORE_FOREACH_WORKER (lcore)
		hpm_cache_flush_lcore(lcore);
	hpm_cache_flush();
	CHECK(hpm_heap_check() == 0, "heap check after the drain");
	CHECK(hpm_malloc_get_socket_stats(0, &after) == 0, "stats");
	CHECK(after.alloc_count == before.alloc_count, "alloc_count %u, was %u", after.alloc_count,
		before.alloc_count);
	CHECK(after.heap_allocsz_bytes == before.heap_allocsz_bytes,
		"heap_allocsz_bytes %zu, was %zu", after.heap_allocsz_bytes,
		before.heap_allocsz_bytes);
	printf("ops: %" PRIu64 " in %.1f s; %" PRIu64 " blocks allocated, %" PRIu64
	       " sent through rings, %" PRIu64 " received (%" PRIu64 " adopted, %" PRIu64
	       " freed by the receiver), %" PRIu64 " validations of the live set, %" PRIu64
	       " yields, ENOMEM %" PRIu64 "\n",
		all.ops, now_s() - t0, all.blocks, all.sent, all.received, all.adopted,
		all.remote_frees, all.validates, all.yields, all.enomem);
	printf("differences from the models: %" PRIu64 "\n", all.diffs);
	CHECK(all.diffs == 0, "%" PRIu64 " differences", all.diffs);
	CHECK(all.ops == ops, "%" PRIu64 " ops of %lu", all.ops, ops);
	CHECK(all.sent == all.received, "%" PRIu64 " sent, %" PRIu64 " received", all.sent,
		all.received);
	CHECK(all.enomem < ops / 1000, "%" PRIu64 " allocations failed", all.enomem);
	free(workers);
	return test_end("concurrent_diff");
}
