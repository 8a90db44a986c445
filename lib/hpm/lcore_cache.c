/* SPDX-License-Identifier: BSD-3-Clause */

#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_debug.h>
#include <rte_lcore.h>
#include <rte_pause.h>

#include "arena.h"
#include "lcore_cache.h"
#include "log.h"
#include "state.h"

struct hpm_lcore_cache hpm_cache_none = {.socket = -1};
/* Runs the caches keep, in granules: all of them, or up to 64 KiB (HPM_CFG_F_LEAN_CACHE) */
#define RUN_KEEP_ALL (HPM_CACHE_RUN_MAX >> 12)
#define RUN_KEEP_LEAN 16u
unsigned int hpm_cache_run_keep = RUN_KEEP_ALL;

/* hpm_inline.h's functions read the caches through its layout */
static_assert(HPM_INLINE_STACK0 == offsetof(struct hpm_lcore_cache, cls) &&
		HPM_INLINE_STACK_SIZE == sizeof(struct hpm_cache_stack_full) &&
		offsetof(struct hpm_lcore_cache, socket) == 0 &&
		HPM_INLINE_RUN0 == HPM_CACHE_RUN0 && HPM_INLINE_C4K == HPM_CACHE_C4K &&
		HPM_INLINE_C64K == HPM_CACHE_C64K && HPM_INLINE_BLK_CACHED == HPM_BLK_CACHED,
	"hpm_inline.h's cache is the library's");
static_assert(offsetof(struct hpm_inline_stack, len) == offsetof(struct hpm_cache_stack, len) &&
		offsetof(struct hpm_inline_stack, limit) ==
			offsetof(struct hpm_cache_stack, limit) &&
		offsetof(struct hpm_inline_stack, hits) == offsetof(struct hpm_cache_stack, hits) &&
		offsetof(struct hpm_inline_stack, held) == offsetof(struct hpm_cache_stack, held) &&
		offsetof(struct hpm_inline_stack, objs) == sizeof(struct hpm_cache_stack) &&
		sizeof(struct hpm_inline_obj) == sizeof(struct hpm_cache_obj) &&
		sizeof(hpm_inline_v3.small_class) == 4096 / 16 + 1 &&
		RTE_DIM(hpm_hit.small_class) == HPM_CACHE_HEAP_MAX / 16 + 1 &&
		HPM_INLINE_MID_MIN == HPM_CACHE_HEAP_MAX + 1,
	"hpm_inline.h's stack is the library's");

void
hpm_cache_gen_bump(void)
{
	/* sequentially consistent: thread_exit() reads it after counting itself in */
	uint64_t gen = __atomic_add_fetch(&hpm_hit.cache_gen, 1, __ATOMIC_SEQ_CST);

#if !defined(HPM_INLINE_SANITIZED) && !defined(HPM_CHECKER)
	/*
	 * sanitizer and valgrind builds mark and check what the inline paths
	 * would skip (valgrind saw a fresh block's writes as invalid and a
	 * freed one's as fine): no thread's
	 */
	__atomic_store_n(&hpm_inline_v3.gen, gen, __ATOMIC_RELEASE);
#else
	RTE_SET_USED(gen);
#endif
}

void
hpm_cache_small_classes(bool small_heap)
{
	unsigned int i;

	for (i = 1; i < RTE_DIM(hpm_hit.small_class); i++) {
		size_t size = (size_t)i * 16;
		int cls = hpm_cache_class_fit(size);

		/* the route table's rows: a heap class, one granule from 3.5 KiB, a size class */
		if (!small_heap)
			cls = size > 3584 && size <= 4096 ? HPM_CACHE_C4K
							  : hpm_cache_class_other(size, 64);
		/* hpm_cache_class() takes these for classes of stacks of single blocks, never runs */
		RTE_VERIFY(cls >= 0 && cls < HPM_CACHE_RUN0);
		hpm_hit.small_class[i] = (uint8_t)cls;
	}
	hpm_hit.small_class[0] = hpm_hit.small_class[1];
	/* hpm_inline.h's copy: the sizes below 4 KiB */
	memcpy(hpm_inline_v3.small_class, hpm_hit.small_class, sizeof(hpm_inline_v3.small_class));
	/* a bucket's sizes but a multiple of 4 KiB share a class: its last's below */
	for (i = 0; i < RTE_DIM(hpm_inline_v3.mid_class); i++) {
		int cls = (size_t)i * 64 >= HPM_INLINE_MID_MIN
			? hpm_cache_class((size_t)i * 64 - 1, 64)
			: -1;

		hpm_inline_v3.mid_class[i] = cls >= 0 && cls < HPM_CACHE_RUN0 ? (uint8_t)cls : 0xff;
	}
}

/* The size-class pages' until a heap says otherwise (hpm_cache_init_process()). */
static void __attribute__((constructor)) small_classes_default(void)
{
	hpm_cache_small_classes(false);
}

static void *lcore_cb_handle;

static int lcore_init(unsigned int lcore_id, void *arg);
static void lcore_uninit(unsigned int lcore_id, void *arg);

/*
 * Once per process, when EAL is up: a thread that unregisters gives its
 * lcore's cache back (its id goes to the next thread that registers).
 * Outside every lock of the heap: EAL calls lcore_init() for each lcore.
 */
static void
lcore_callbacks_register(void)
{
	static pthread_mutex_t once = PTHREAD_MUTEX_INITIALIZER;

	pthread_mutex_lock(&once);
	if (lcore_cb_handle == NULL && hpm_source_eal_ready())
		__atomic_store_n(&lcore_cb_handle,
			rte_lcore_callback_register("hpm_cache", lcore_init, lcore_uninit, NULL),
			__ATOMIC_RELEASE);
	pthread_mutex_unlock(&once);
}

/* When a miss next looks for caches of dead processes (TSC). */
static uint64_t reap_next_tsc;

size_t
hpm_cache_class_bytes(unsigned int cls)
{
	return hpm_cache_block_bytes(cls);
}

/* What a heap class moves per refill, and holds, in bytes (measured: see update_limit) */
#define SMALL_BATCH_BYTES 4096u
#define SMALL_BATCH_MIN 8u
#define SMALL_LIMIT_BYTES 32768u
/* a burst of 32 blocks of any class fits */
#define SMALL_LIMIT_MIN 40u
/* size-class pages of 4 KiB blocks and more: a refill of 8 KiB, a stack of 64 KiB */
#define SLAB_BATCH_BYTES 8192u
#define SLAB_BATCH_MIN 2u
#define SLAB_LIMIT_BYTES 65536u
/*
 * Granule runs: a stack of at most 128 KiB, a refill of half of it.
 * malloc_perf's mixed workload, every class of runs busy, one run each
 * (with the 8 MiB budget below; 64 KiB: the library before it): 64 KiB a
 * class 27.4 ns/op and held/live 1.68, 128 KiB 23.9 and 1.69, 256 KiB 21.8
 * and 1.77.
 */
#define RUN_LIMIT_BYTES (128u << 10)
/*
 * The cache's budget: the bytes its granule, size-class and run classes hold
 * together, its part of the heap (1/cache_share over the caches), at least
 * hpm_config's cache_budget_min (8 MiB by default). Each class's limit stays
 * within it: what the others leave, or an equal share with the classes that
 * hold blocks when they leave less; and the classes gone idle give their
 * room to those in use. The heap classes are not under it: their stacks
 * hold 32 KiB at most. Per class alone, the caches of test_soak held 30 MiB,
 * those of malloc_perf's mixed 24 MiB. mixed, runs of 128 KiB a class,
 * budgets of 2.5 and 8 MiB: 26.3 and 23.9 ns/op (held/live 1.69 both);
 * 256 KiB, 4, 8 and 16 MiB: 26.7, 21.8 and 20.2 (1.71, 1.77, 1.75).
 * doc/guides/tuning.rst has the rest.
 */

/*
 * The limit rule (seed 003's question): the caches of a socket together may
 * hold 1/cache_share of its heap, in blocks a class bounded by cache_min and
 * cache_max, and by the cache's budget. Refill and flush move half a limit.
 * A small heap keeps little memory idle in caches; a large one lets them
 * absorb long bursts. (hpm_config has the knobs; doc/tuning says how the
 * defaults were measured.)
 */
/* Count the classes under the budget that hold blocks, and their bytes. */
static void
count_held(struct hpm_lcore_cache *c)
{
	unsigned int cls, n = 0;
	size_t bytes = 0;

	for (cls = HPM_CACHE_BUDGET_CLASS0; cls < HPM_CACHE_NCLASS; cls++) {
		uint32_t len = hpm_cache_stack(c, cls)->len;

		n += len != 0;
		bytes += (size_t)len * hpm_cache_class_bytes(cls);
	}
	c->classes_held = n;
	c->held_bytes = bytes;
}

/* One cache's part of the heap: 1/cache_share over the caches. */
static size_t
cache_part(const struct hpm_arena *a)
{
	unsigned int ncaches = RTE_MAX(__atomic_load_n(&hpm_state->ncaches, __ATOMIC_RELAXED), 1u);

	return a->cs.total_bytes / hpm_state->cfg.cache_share / ncaches;
}

/*
 * What the classes under the budget of one cache may hold together: its part
 * of the heap, or of cache_budget_min, which the caches share as they share
 * the heap. A floor for each cache let three threads keep three times the
 * floor idle: test_soak held 196-202 MiB for 139-142 MiB live, 15 MiB in
 * caches; shared, 190 MiB, 6 MiB in caches.
 */
static size_t
cache_budget(const struct hpm_arena *a)
{
	unsigned int ncaches = RTE_MAX(__atomic_load_n(&hpm_state->ncaches, __ATOMIC_RELAXED), 1u);

	return RTE_MAX(a->cs.total_bytes / hpm_state->cfg.cache_share,
		       hpm_state->cfg.cache_budget_min) /
		ncaches;
}

/*
 * Activity. A cache that makes few of its socket's locked refills and
 * flushes (an application's main lcore beside its workers, a control
 * thread) keeps what it cached for few operations: test_soak's main lcore
 * and pthread each held 4.5-6 MiB for 1% of the operations. Its budget is
 * scaled down to its part of the socket's events of the last window or two
 * (HPM_CACHE_ACT_WINDOW events each) times the number of caches, rounded
 * up to an eighth of the budget, an eighth at least, so that caches busy
 * alike keep the whole budget (two lcores at 49% and 51% keep 8 eighths). One
 * at half its share or less (ACT_DISOWN_EIGHTHS) gives its pages back too.
 * Counted under the heap's lock, where the limits are set: refills and
 * flushes through the transfer store, lock-free, set no limit and count
 * for neither side.
 */
#define ACT_EIGHTHS_MIN 1u
#define ACT_DISOWN_EIGHTHS 4u

/* Cache c's events in x's window and in the one before, as of x's window. */
static void
act_seen(const struct hpm_lcore_cache *c, const struct hpm_cache_xfer *x, uint32_t *now,
	uint32_t *before)
{
	if (c->act_window == x->act_window) {
		*now = c->act_now;
		*before = c->act_before;
	} else {
		*now = 0;
		*before = c->act_window + 1 == x->act_window ? c->act_now : 0;
	}
}

/* One locked refill or flush of cache c. Arena lock held. */
static void
act_count(struct hpm_lcore_cache *c)
{
	struct hpm_cache_xfer *x = hpm_state->xfer[c->socket];
	uint32_t now, before;

	if (x == NULL)
		return;
	act_seen(c, x, &now, &before);
	c->act_window = x->act_window;
	c->act_now = now + 1;
	c->act_before = before;
	if (++x->act_now >= HPM_CACHE_ACT_WINDOW) {
		x->act_before = x->act_now;
		x->act_now = 0;
		x->act_window++;
	}
}

/* Eighths of the budget cache c keeps for its activity (8: all of it). */
static size_t
act_eighths(const struct hpm_lcore_cache *c)
{
	const struct hpm_cache_xfer *x = hpm_state->xfer[c->socket];
	unsigned int ncaches = RTE_MAX(__atomic_load_n(&hpm_state->ncaches, __ATOMIC_RELAXED), 1u);
	uint64_t eighths, total;
	uint32_t now, before;

	/* the first window: too few events to tell */
	if (x == NULL || x->act_before == 0 || ncaches == 1)
		return 8;
	act_seen(c, x, &now, &before);
	total = (uint64_t)x->act_now + x->act_before;
	eighths = (((uint64_t)now + before) * ncaches * 8 + total - 1) / total;
	if (eighths > 8)
		return 8;
	return eighths < ACT_EIGHTHS_MIN ? ACT_EIGHTHS_MIN : (size_t)eighths;
}

/* Cache c's budget: its part of the heap, the floor, scaled by its activity. */
static size_t
cache_budget_of(const struct hpm_lcore_cache *c, const struct hpm_arena *a)
{
	return cache_budget(a) / 8 * act_eighths(c);
}

size_t
hpm_cache_budget(const struct hpm_lcore_cache *c)
{
	return cache_budget_of(c, &hpm_state->arenas[c->socket]);
}

static void flush_locked(struct hpm_arena *a, struct hpm_cache_stack *cc, unsigned int n);

/*
 * Past the budget, the classes other than cls give back their oldest blocks
 * beyond an equal share of half the budget: a class in use gets the room of
 * classes gone idle, half the budget at least (malloc_perf's bursts of 64
 * KiB blocks after those of 4 KiB ones, 2 MiB of them still cached; shares
 * of the whole budget left it a share too, a burst of half the budget
 * missed). Lock held.
 */
static void
budget_trim_locked(struct hpm_arena *a, struct hpm_lcore_cache *c, unsigned int cls, size_t budget)
{
	size_t equal;
	unsigned int i;

	count_held(c);
	if (c->held_bytes <= budget)
		return;
	equal = budget / 2 / RTE_MAX(c->classes_held, 1u);
	for (i = HPM_CACHE_BUDGET_CLASS0; i < HPM_CACHE_NCLASS; i++) {
		struct hpm_cache_stack *cc = hpm_cache_stack(c, i);
		size_t bytes = hpm_cache_class_bytes(i), keep = equal / bytes;

		if (i == cls || cc->len <= keep)
			continue;
		c->held_bytes -= RTE_MIN(c->held_bytes, (cc->len - keep) * bytes);
		flush_locked(a, cc, cc->len - (unsigned int)keep);
	}
}

/*
 * Bytes class cls may hold within the budget: what the others leave, or an
 * equal share. Lock held.
 */
static size_t
budget_share(struct hpm_arena *a, struct hpm_lcore_cache *c, unsigned int cls, size_t budget)
{
	size_t mine = (size_t)hpm_cache_stack(c, cls)->len * hpm_cache_class_bytes(cls);
	size_t others, left;

	/* now and then: a look at every class is 200 loads */
	if ((c->budget_updates++ & 15) == 0) {
		budget_trim_locked(a, c, cls, budget);
		/*
		 * A cache at half its share or less: its pages go back to the
		 * lists, their free blocks to whoever takes from them (test_soak,
		 * 2 alternated pairs: held 206, 208 MiB -> 202, 204; free in
		 * 64 KiB granule pages 9.5 -> 4.7-5.2 MiB, in slab pages 9.8-11.4
		 * -> 6.4-7.7)
		 */
		if (act_eighths(c) <= ACT_DISOWN_EIGHTHS) {
			hpm_gran_disown(&a->gran, c->lcore);
			hpm_slab_disown(&a->slab, c->lcore);
		}
	}
	others = c->held_bytes > mine ? c->held_bytes - mine : 0;
	left = budget > others ? budget - others : 0;
	return RTE_MAX(left, budget / (c->classes_held + 1));
}

/* Lock held. */
static void
update_limit(struct hpm_lcore_cache *c, unsigned int cls, struct hpm_arena *a)
{
	struct hpm_cache_stack *cc = hpm_cache_stack(c, cls);
	const struct hpm_config *cfg = &hpm_state->cfg;
	size_t part = cache_part(a);
	size_t limit = part / hpm_cache_class_bytes(cls);

	uint32_t batch;

	if (limit < cfg->cache_min)
		limit = cfg->cache_min;
	limit = RTE_MIN(limit, (size_t)cfg->cache_max);
	batch = RTE_MAX((uint32_t)limit / 2, 1u);
	/* heap blocks are cut from the heap's free blocks: small cuts, and few cached,
	 * or cached blocks pin large free ranges (a granule pins one granule);
	 * small size-class blocks pin their pages: the same rule */
	if (cls < HPM_CACHE_HEAP_NCLASS ||
		(cls >= HPM_CACHE_SLAB0 && hpm_cache_class_bytes(cls) < HPM_SLAB_SHARED_BYTES)) {
		uint32_t bytes = hpm_cache_class_bytes(cls);
		uint32_t most_batch = SMALL_BATCH_BYTES / bytes;
		size_t most_limit = SMALL_LIMIT_BYTES / bytes;

		if (most_batch < SMALL_BATCH_MIN)
			most_batch = SMALL_BATCH_MIN;
		batch = RTE_MIN(batch, most_batch);
		if (most_limit < SMALL_LIMIT_MIN)
			most_limit = SMALL_LIMIT_MIN;
		if (most_limit < 2 * (size_t)batch)
			most_limit = 2 * (size_t)batch;
		limit = RTE_MIN(limit, most_limit);
	} else if (cls >= HPM_CACHE_RUN0) {
		/* by bytes, not cache_min's blocks: 64 runs of 256 KiB would be 16 MiB idle */
		limit = RTE_MAX((size_t)RUN_LIMIT_BYTES / hpm_cache_class_bytes(cls), (size_t)1);
		batch = RTE_MAX((uint32_t)limit / 2, 1u);
	} else if (cls >= HPM_CACHE_SLAB0) {
		uint32_t bytes = hpm_cache_class_bytes(cls);
		uint32_t most_batch = RTE_MAX(SLAB_BATCH_BYTES / bytes, SLAB_BATCH_MIN);
		size_t most_limit;

		batch = RTE_MIN(batch, most_batch);
		most_limit = RTE_MAX((size_t)SLAB_LIMIT_BYTES / bytes, 2 * (size_t)batch);
		limit = RTE_MIN(limit, most_limit);
	}
	if (cls >= HPM_CACHE_BUDGET_CLASS0) {
		size_t most =
			budget_share(a, c, cls, cache_budget_of(c, a)) / hpm_cache_class_bytes(cls);
		uint32_t half;

		cc->fill_whole = cls < HPM_CACHE_RUN0 && limit == cc->cap && most >= 2 * limit;
		if (most < 1)
			most = 1;
		if (limit > most)
			limit = most;
		half = limit > 1 ? (uint32_t)limit / 2 : 1;
		if (batch > half)
			batch = half;
	}
	cc->batch = batch;
	/*
	 * At least 1 for a class the caches keep: a limit of 0 asks for a drain
	 * (hpm_cache_request_drain()).
	 * A drain asked while the limit is stored keeps its limit 0: the
	 * requester stores the flag, then 0, this side the limit, then reads the
	 * flag, all sequentially consistent (no fence: ThreadSanitizer has none),
	 * so the flag shows here or the requester's 0 lands after this store.
	 */
	limit = RTE_MIN(limit, (size_t)cc->cap);
	if (cc->batch > limit / 2)
		cc->batch = limit > 1 ? (uint32_t)limit / 2 : 1;
	/* a class the caches do not keep: both hit paths miss, and the misses take the lock */
	limit = hpm_cache_keeps(cls) ? RTE_MAX(limit, (size_t)1) : 0;
	__atomic_store_n(&cc->limit, (uint32_t)limit, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&cc->drain, __ATOMIC_SEQ_CST) != 0)
		__atomic_store_n(&cc->limit, 0, __ATOMIC_RELAXED);
}

static struct hpm_lcore_cache *
cache_create(unsigned int lcore, int socket)
{
	struct hpm_lcore_cache *c = hpm_meta_alloc(&hpm_state->meta, hpm_src, sizeof(*c));
	unsigned int i;

	if (c == NULL)
		return NULL;
	c->socket = socket;
	c->lcore = lcore;
	c->owner = hpm_lock_self;
	for (i = 0; i < HPM_CACHE_NCLASS; i++) {
		struct hpm_cache_stack *cc = hpm_cache_stack(c, i);

		cc->cap = hpm_cache_class_cap(i);
		cc->held = hpm_cache_user_state(i);
		/*
		 * 0: a class's first refill or free takes the lock, where its
		 * limit is set by its bytes and the cache's budget. A limit of
		 * cache_min blocks until then let a cache that only frees hold
		 * 64 blocks of each class with no locked event to count them:
		 * 8.3 MiB of 64 KiB to 30 KB blocks on a budget of 8, 5.3 on 1.
		 */
		cc->limit = 0;
		cc->batch = 1;
	}
	return c;
}

/*
 * This process takes the cache: it is its own, nobody's, or a dead
 * process's (whose blocks become this one's). False while another live
 * process uses it, or a survivor empties it.
 */
static bool
cache_claim(struct hpm_lcore_cache *c)
{
	int owner = __atomic_load_n(&c->owner, __ATOMIC_ACQUIRE);

	if (owner == hpm_lock_self)
		return true;
	/* a live owner's, or one a live survivor empties; a dead reaper's is a dead owner's */
	if (owner != 0 && hpm_pid_alive(hpm_cache_owner_pid(owner)))
		return false;
	return __atomic_compare_exchange_n(&c->owner, &owner, hpm_lock_self, false,
		__ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

/* The socket a cache serves: its lcore's, or the CPU's of a thread, else the first with memory. */
static int
cache_socket(unsigned int slot)
{
	unsigned int s;

	if (slot >= RTE_MAX_LCORE)
		s = (unsigned int)hpm_state_socket_of_cpu(sched_getcpu());
	else if (hpm_state->cfg.fake_sockets != 0)
		s = (unsigned int)hpm_state_socket_of_cpu(rte_lcore_to_cpu_id(slot));
	else
		s = rte_lcore_to_socket_id(slot);
	if (hpm_state_has_socket(hpm_state, (int)s))
		return s;
	return hpm_state->socket_ids[0];
}

/* The socket of another thread's cache: a thread taking a slot sets it (thread_slot_take()). */
static int
cache_socket_now(const struct hpm_lcore_cache *c)
{
	return __atomic_load_n(&c->socket, __ATOMIC_RELAXED);
}

/* The cache of a slot, made if there is none. Cache lock held. */
static struct hpm_lcore_cache *
slot_cache(unsigned int slot)
{
	struct hpm_lcore_cache *c = hpm_state->caches[slot];

	if (c != NULL)
		return c;
	c = cache_create(slot, cache_socket(slot));
	/* it counts while a thread holds it (thread_hold()) */
	if (c != NULL)
		__atomic_store_n(&hpm_state->caches[slot], c, __ATOMIC_RELEASE);
	return c;
}

/*
 * A cache taken by a thread (held 1) or given back (0): an lcore's, or a
 * thread slot's. ncaches counts those held: counting every cache ever
 * used (slots of threads gone, lcores of threads that unregistered), a
 * hundred threads gone made each cache's part of the heap a hundredth and
 * every quiet cache look busy.
 */
static void
thread_hold(struct hpm_lcore_cache *c, uint32_t held)
{
	if (__atomic_exchange_n(&c->thread_held, held, __ATOMIC_ACQ_REL) == held)
		return;
	if (held)
		__atomic_add_fetch(&hpm_state->ncaches, 1, __ATOMIC_RELAXED);
	else
		__atomic_sub_fetch(&hpm_state->ncaches, 1, __ATOMIC_RELAXED);
}

static void
cache_held(const struct hpm_lcore_cache *c, size_t *bytes, uint64_t *blocks)
{
	unsigned int i;

	*bytes = 0;
	*blocks = 0;
	for (i = 0; i < HPM_CACHE_NCLASS; i++) {
		uint32_t len = __atomic_load_n(&hpm_cache_stack(c, i)->len, __ATOMIC_RELAXED);

		*blocks += len;
		*bytes += len * hpm_cache_class_bytes(i);
	}
}

/*
 * A thread slot for a thread without an lcore id: a free one of this
 * process's, or of nobody's, or of a dead process's; NULL when all are
 * taken. Cache lock held.
 */
static struct hpm_lcore_cache *
thread_slot_take(void)
{
	unsigned int slot;

	for (slot = RTE_MAX_LCORE; slot < HPM_CACHE_SLOTS; slot++) {
		struct hpm_lcore_cache *c = hpm_state->caches[slot];

		if (c != NULL &&
			(__atomic_load_n(&c->thread_held, __ATOMIC_ACQUIRE) != 0 ||
				!cache_claim(c)))
			continue;
		c = slot_cache(slot);
		if (c != NULL) {
			size_t bytes;
			uint64_t blocks;

			/* an empty cache serves the socket the thread runs on now */
			cache_held(c, &bytes, &blocks);
			if (blocks == 0)
				__atomic_store_n(&c->socket, cache_socket(slot), __ATOMIC_RELAXED);
			__atomic_store_n(&c->owner, hpm_lock_self, __ATOMIC_RELAXED);
			thread_hold(c, 1);
		}
		return c;
	}
	return NULL;
}

static pthread_key_t thread_key;
/* Without it (pthread_key_create() failed), thread_key names another library's key. */
static bool thread_key_made;
static pthread_once_t thread_key_once = PTHREAD_ONCE_INIT;
/*
 * Threads in thread_exit() past its check of the generation:
 * hpm_cache_fini_process() bumps the generation, then waits for them, so
 * that a thread exiting while another runs hpm_fini() either leaves its
 * cache alone or empties it before the metadata goes.
 */
static uint32_t threads_exiting;
void (*hpm_cache_exit_hook)(void);

/* A thread with a thread slot exits: its blocks go back, the slot to the next thread. */
static void
thread_exit(void *cache)
{
	struct hpm_cache_binding *t = &hpm_cache_tls;
	struct hpm_lcore_cache *c = cache;

	__atomic_fetch_add(&threads_exiting, 1, __ATOMIC_SEQ_CST);
	/* else hpm_fini() took the slot back already */
	if (t->gen == __atomic_load_n(&hpm_hit.cache_gen, __ATOMIC_SEQ_CST) && t->cache == c) {
		if (unlikely(hpm_cache_exit_hook != NULL))
			hpm_cache_exit_hook();
		hpm_cache_flush_all(c);
		thread_hold(c, 0);
		t->cache = &hpm_cache_none;
		t->socket = hpm_cache_none.socket;
		t->gen = 0;
	}
	__atomic_fetch_sub(&threads_exiting, 1, __ATOMIC_RELEASE);
}

static void
thread_key_make(void)
{
	thread_key_made = pthread_key_create(&thread_key, thread_exit) == 0;
	if (!thread_key_made)
		HPM_LOG(WARNING, "no thread key: threads without an lcore keep their caches");
}

struct hpm_lcore_cache *
hpm_cache_bind(void)
{
	struct hpm_cache_binding *t = &hpm_cache_tls;
	struct hpm_lcore_cache *c = NULL;
	bool retry = false;
	unsigned int lcore;

	/* the API sets the heap up first (init.h): ask again once it is there */
	if (hpm_state == NULL)
		return NULL;
	lcore = rte_lcore_id();
	/* a heap made before EAL was up: an lcore now says it is */
	if (lcore < RTE_MAX_LCORE && __atomic_load_n(&lcore_cb_handle, __ATOMIC_ACQUIRE) == NULL)
		lcore_callbacks_register();
	if (!(hpm_state->cfg.flags & HPM_CFG_F_NO_CACHE) && hpm_state->cfg.cache_max != 0 &&
		hpm_lock(&hpm_state->cache_lock)) {
		if (lcore >= RTE_MAX_LCORE) {
			c = thread_slot_take();
		} else {
			c = slot_cache(lcore);
			if (c != NULL && !cache_claim(c)) {
				/* a survivor empties it now: bind at a later call */
				retry = __atomic_load_n(&c->owner, __ATOMIC_RELAXED) < 0;
				c = NULL;
			}
			if (c != NULL)
				thread_hold(c, 1);
		}
		hpm_unlock(&hpm_state->cache_lock);
		if (c != NULL && lcore >= RTE_MAX_LCORE) {
			pthread_once(&thread_key_once, thread_key_make);
			if (thread_key_made)
				pthread_setspecific(thread_key, c);
		}
	}
	t->cache = c != NULL ? c : &hpm_cache_none;
	t->socket = t->cache->socket;
	t->gen = retry ? 0 : hpm_hit.cache_gen;
	return c;
}

/* Blocks of a class from the arena into objs; the number got. Lock held. */
static unsigned int
fill_locked(struct hpm_arena *a, unsigned int lcore, unsigned int cls, struct hpm_cache_stack *cc,
	unsigned int n)
{
	struct hpm_cache_obj *objs;
	void *ptrs[HPM_CACHE_CAP];
	uint8_t *states[HPM_CACHE_CAP];
	unsigned int got = 0, k, i;

	if (cls == HPM_CACHE_C4K) {
		got = hpm_gran_take_singles(&a->gran, HPM_GRAN_4K, lcore, ptrs, states, n);
	} else if (cls == HPM_CACHE_C64K) {
		/* runs of 16 granules at 64 KiB, among the other runs (route.h) */
		got = hpm_gran_take_aligned_runs(&a->gran, lcore, 16, ptrs, states, n);
	} else if (cls >= HPM_CACHE_RUN0) {
		got = hpm_gran_take_runs(&a->gran, hpm_cache_run_granules(cls),
			hpm_cache_run_align(cls) >> 12, ptrs, states, n);
	} else if (cls >= HPM_CACHE_SLAB0) {
		got = hpm_slab_take(&a->slab, cls - HPM_CACHE_SLAB0, lcore, ptrs, states, n);
	} else {
		do {
			k = hpm_heap_carve(&a->heap, hpm_cache_class_bytes(cls), ptrs + got,
				states + got, n - got);
			got += k;
		} while (k != 0 && got < n);
	}
	/* on top of the stack as it is now: growing the heap may have flushed it */
	objs = hpm_cache_objs(cc) + cc->len;
	for (i = 0; i < got; i++)
		hpm_cache_obj_set(&objs[i], ptrs[i], states[i]);
	hpm_cache_set_len(cc, cc->len + got);
	return got;
}

static void free_objs_locked(struct hpm_arena *a, const struct hpm_cache_obj *objs, unsigned int n);

uint32_t
hpm_cache_xfer_max(unsigned int cls)
{
	uint32_t bytes = cls >= HPM_CACHE_RUN0 ? RUN_LIMIT_BYTES : HPM_XFER_BYTES;

	return RTE_MIN((uint32_t)HPM_XFER_CAP, bytes / (uint32_t)hpm_cache_class_bytes(cls));
}

/* n blocks a full cache gives up into its socket's transfer store: all, or false. */
static bool
xfer_put(int socket, unsigned int cls, const struct hpm_cache_obj *objs, unsigned int n)
{
	struct hpm_cache_xfer *x = hpm_state->xfer[socket];
	struct hpm_xfer_class *xc;
	bool done = false;

	if (x == NULL || !hpm_lock(&(xc = &x->cls[cls])->lock))
		return false;
	if (xc->len + n <= hpm_cache_xfer_max(cls)) {
		memcpy(&xc->objs[xc->len], objs, n * sizeof(*objs));
		__atomic_store_n(&xc->len, xc->len + n, __ATOMIC_RELAXED);
		xc->puts++;
		done = true;
	}
	hpm_unlock(&xc->lock);
	return done;
}

/* Up to n blocks of the transfer store into objs, for an empty cache; how many. */
static unsigned int
xfer_get(int socket, unsigned int cls, struct hpm_cache_obj *objs, unsigned int n)
{
	struct hpm_cache_xfer *x = hpm_state->xfer[socket];
	struct hpm_xfer_class *xc;

	if (x == NULL || __atomic_load_n(&x->cls[cls].len, __ATOMIC_RELAXED) == 0 ||
		!hpm_lock(&(xc = &x->cls[cls])->lock))
		return 0;
	n = RTE_MIN(n, xc->len);
	memcpy(objs, &xc->objs[xc->len - n], n * sizeof(*objs));
	__atomic_store_n(&xc->len, xc->len - n, __ATOMIC_RELAXED);
	xc->gets += n != 0;
	hpm_unlock(&xc->lock);
	return n;
}

void
hpm_cache_xfer_drain_locked(struct hpm_arena *a)
{
	struct hpm_cache_xfer *x = hpm_state->xfer[a->socket];
	unsigned int cls;

	for (cls = 0; x != NULL && cls < HPM_CACHE_NCLASS; cls++) {
		struct hpm_xfer_class *xc = &x->cls[cls];

		if (__atomic_load_n(&xc->len, __ATOMIC_RELAXED) == 0 || !hpm_lock(&xc->lock))
			continue;
		free_objs_locked(a, xc->objs, xc->len);
		__atomic_store_n(&xc->len, 0, __ATOMIC_RELAXED);
		hpm_unlock(&xc->lock);
	}
}

/*
 * The least a refill from the heap takes: a batch, but for granule runs only
 * what is asked. Runs cut from the pages ahead of need (16 single granules
 * at 64 KiB alignment, say) split their free ranges for blocks that may never
 * be asked for (malloc_perf's mixed: held/live 1.47 -> 1.43, 25.0 -> 25.2 ns/op).
 */
static unsigned int
fill_least(const struct hpm_cache_stack *cc, unsigned int cls)
{
	return cls >= HPM_CACHE_RUN0 ? 1 : cc->batch;
}

unsigned int
hpm_cache_fill(struct hpm_lcore_cache *c, unsigned int cls, unsigned int want)
{
	struct hpm_cache_stack *cc = hpm_cache_stack(c, cls);
	struct hpm_arena *a = &hpm_state->arenas[c->socket];
	bool drained = false;
	unsigned int n;

	hpm_cache_reap_due();
	if (unlikely(hpm_cache_drain_asked(cc))) {
		hpm_cache_flush_all(c);
		drained = true;
	}
	/* what another cache of the socket gave up, first: no heap lock */
	n = RTE_MAX(want, cc->batch);
	n = xfer_get(c->socket, cls, hpm_cache_objs(cc) + cc->len, RTE_MIN(n, cc->cap - cc->len));
	/* one refill, one miss, from either side or both */
	hpm_cache_count(&cc->misses, 1);
	if (n != 0) {
		hpm_cache_set_len(cc, cc->len + n);
		if (n >= want)
			return cc->len;
		want -= n;
	}
	if (!hpm_arena_lock(a))
		return cc->len;
	act_count(c);
	update_limit(c, cls, a);
	want = RTE_MAX(want, fill_least(cc, cls));
	/*
	 * An empty stack whose budget allows twice its blocks (seed 004's
	 * class, 2000 blocks without a free): fill it, half as many locked
	 * refills. Its flushes still move a batch: the next refill is a batch
	 * of allocations away. Not right after a drain: the heap wants its
	 * blocks back.
	 */
	if (cc->fill_whole && cc->len == 0 && !drained)
		want = RTE_MAX(want, hpm_cache_limit(cc));
	want = RTE_MIN(want, cc->cap - cc->len);
	n = fill_locked(a, c->lcore, cls, cc, want);
	a->alloc_bytes += n * hpm_cache_class_bytes(cls);
	a->alloc_count += n;
	hpm_arena_unlock(a);
	return cc->len;
}

/*
 * A run of the same length but more aligned than class cls asks, from the
 * cache's own stacks, or NULL. A free puts a run in the class of its
 * address's alignment, and most requests ask for less: without this, the
 * more aligned stacks fill and flush while the less aligned ones refill.
 */
static struct hpm_cache_obj *
run_more_aligned(struct hpm_lcore_cache *c, unsigned int cls)
{
	unsigned int more;

	for (more = cls + HPM_CACHE_RUN_NLEN; more < HPM_CACHE_NCLASS; more += HPM_CACHE_RUN_NLEN) {
		struct hpm_cache_stack *dc = hpm_cache_stack(c, more);

		if (dc->len != 0 && !hpm_cache_drain_asked(dc)) {
			hpm_cache_set_len(dc, dc->len - 1);
			return &hpm_cache_objs(dc)[dc->len];
		}
	}
	return NULL;
}

void *
hpm_cache_refill(struct hpm_lcore_cache *c, unsigned int cls)
{
	struct hpm_cache_stack *cc = hpm_cache_stack(c, cls);

	struct hpm_cache_obj *o;

	/* the same state byte: a run's holds its length's class, whatever its alignment */
	if (cls >= HPM_CACHE_RUN0 && cc->len == 0 && !hpm_cache_drain_asked(cc) &&
		(o = run_more_aligned(c, cls)) != NULL) {
		hpm_blk_state_set(o->state, cc->held);
		hpm_cache_count(&cc->hits, 1);
		return o->p;
	}

	/* a miss with blocks: more than the limit (pop one), or a drain asked (limit 0) */
	if ((cc->len == 0 || hpm_cache_drain_asked(cc)) &&
		hpm_cache_fill(c, cls, fill_least(cc, cls)) == 0)
		return NULL;
	o = &hpm_cache_objs(cc)[cc->len - 1];
	hpm_cache_set_len(cc, cc->len - 1);
	hpm_blk_state_set(o->state, cc->held);
	return o->p;
}

/* Give n cached blocks back to the arena. Lock held. */
static void
free_objs_locked(struct hpm_arena *a, const struct hpm_cache_obj *objs, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		void *p = objs[i].p;
		struct hpm_unit *u = hpm_pagemap_lookup(&hpm_state->pagemap, p);
		size_t bytes = 0;
		int rc = -EINVAL;

		if (hpm_blk_state_get(objs[i].state) != HPM_BLK_CACHED)
			rc = -EINVAL;
		else if (u->role == HPM_UNIT_SPAN)
			rc = hpm_heap_free(&a->heap, u, p, &bytes);
		else if (u->role == HPM_UNIT_SLAB)
			rc = hpm_slab_free(&a->slab, u, p, &bytes);
		else
			rc = hpm_gran_free(&a->gran, u, p, &bytes);
		if (rc == 0) {
			a->alloc_bytes -= bytes;
			a->alloc_count--;
		} else {
			HPM_LOG(ERR, "cache of lcore: block %p is not live in its arena", p);
		}
	}
}

/* Give the n blocks at the bottom of a stack back to the arena. Lock held. */
static void
flush_locked(struct hpm_arena *a, struct hpm_cache_stack *cc, unsigned int n)
{
	free_objs_locked(a, hpm_cache_objs(cc), n);
	memmove(hpm_cache_objs(cc), hpm_cache_objs(cc) + n,
		(cc->len - n) * sizeof(hpm_cache_objs(cc)[0]));
	hpm_cache_set_len(cc, cc->len - n);
	hpm_cache_count(&cc->flushes, 1);
}

static void
flush_all_locked(struct hpm_arena *a, struct hpm_lcore_cache *c)
{
	unsigned int i;

	/* nothing held now (the count would otherwise wait for its next turn) */
	c->classes_held = 0;
	c->held_bytes = 0;
	for (i = 0; i < HPM_CACHE_NCLASS; i++) {
		__atomic_store_n(&hpm_cache_stack(c, i)->drain, 0, __ATOMIC_RELAXED);
		if (hpm_cache_stack(c, i)->len != 0)
			flush_locked(a, hpm_cache_stack(c, i), hpm_cache_stack(c, i)->len);
		/* the limit a drain request set to 0 */
		update_limit(c, i, a);
	}
	hpm_gran_disown(&a->gran, c->lcore);
	hpm_slab_disown(&a->slab, c->lcore);
	/* what the caches gave each other goes back with them */
	hpm_cache_xfer_drain_locked(a);
}

void
hpm_cache_flush_all(struct hpm_lcore_cache *c)
{
	struct hpm_arena *a = &hpm_state->arenas[c->socket];

	if (!hpm_arena_lock(a))
		return; /* the blocks stay where they are */
	flush_all_locked(a, c);
	hpm_arena_unlock(a);
}

/*
 * Whether cache c holds more than its budget. Lock held. held_bytes is
 * counted at trims (every 16th limit update) and goes stale between them: a
 * cache kept to a part of its budget, whose locked events are few, is
 * counted and trimmed at each (frees from other threads filled one stack
 * after another of test_soak's quiet caches: 4-6.5 MiB each on a budget of 1).
 */
static bool
quiet_over_budget(struct hpm_arena *a, struct hpm_lcore_cache *c, unsigned int cls)
{
	size_t budget = cache_budget_of(c, a);

	if (act_eighths(c) < 8)
		budget_trim_locked(a, c, cls, budget); /* counts, and trims the others if over */
	return c->held_bytes > budget;
}

void
hpm_cache_flush_push(struct hpm_lcore_cache *c, unsigned int cls, void *p, uint8_t *state)
{
	struct hpm_cache_stack *cc = hpm_cache_stack(c, cls);
	struct hpm_arena *a = &hpm_state->arenas[c->socket];
	uint32_t limit = hpm_cache_limit(cc);

	hpm_cache_reap_due();
	/* a batch for another cache of the socket to take, if the transfer store has room */
	if (!hpm_cache_drain_asked(cc) && limit != 0 && cc->len >= limit) {
		unsigned int n = RTE_MAX(cc->len - limit + cc->batch, 1u);

		if (xfer_put(c->socket, cls, hpm_cache_objs(cc), n)) {
			memmove(hpm_cache_objs(cc), hpm_cache_objs(cc) + n,
				(cc->len - n) * sizeof(hpm_cache_objs(cc)[0]));
			hpm_cache_set_len(cc, cc->len - n);
			hpm_cache_count(&cc->flushes, 1);
			goto push;
		}
	}
	if (!hpm_arena_lock(a)) {
		/* the heap is torn: the cache keeps what it can, the rest stays lost */
		if (cc->len >= cc->cap)
			return;
	} else {
		if (hpm_cache_drain_asked(cc)) {
			flush_all_locked(a, c);
		} else {
			act_count(c);
			update_limit(c, cls, a);
			/* 0 when a drain was asked meanwhile: then all of the class goes */
			limit = hpm_cache_limit(cc);
			if (cc->len >= limit) {
				unsigned int n = RTE_MAX(cc->len - limit + cc->batch, 1u);

				flush_locked(a, cc, RTE_MIN(n, cc->len));
			}
			/*
			 * Past the cache's budget: the class's blocks and this one go
			 * back. A limit of at least one block a class would otherwise
			 * let 100 run classes hold one each (test_soak: 5.6 MiB a
			 * cache against 2.7).
			 */
			if (cls >= HPM_CACHE_BUDGET_CLASS0 && quiet_over_budget(a, c, cls)) {
				struct hpm_cache_obj o = {.p = p, .state = state};
				size_t gone = (size_t)cc->len * hpm_cache_class_bytes(cls);

				if (cc->len != 0)
					flush_locked(a, cc, cc->len);
				free_objs_locked(a, &o, 1);
				c->held_bytes -= RTE_MIN(c->held_bytes, gone);
				hpm_arena_unlock(a);
				return;
			}
		}
		hpm_arena_unlock(a);
	}
push:
	hpm_cache_obj_set(&hpm_cache_objs(cc)[cc->len], p, state);
	hpm_cache_set_len(cc, cc->len + 1);
}

bool
hpm_cache_reclaim_locked(struct hpm_arena *a)
{
	struct hpm_lcore_cache *own = hpm_state != NULL ? hpm_cache_get() : NULL;
	uint64_t before = a->alloc_count;

	hpm_cache_reap(a);
	hpm_cache_xfer_drain_locked(a);
	hpm_cache_request_drain(a->socket);
	if (own == NULL || own->socket != a->socket)
		return false;
	flush_all_locked(a, own);
	return a->alloc_count != before;
}

unsigned int
hpm_cache_reap(struct hpm_arena *locked)
{
	unsigned int lcore, reaped = 0;

	for (lcore = 0; lcore < HPM_CACHE_SLOTS; lcore++) {
		struct hpm_lcore_cache *c =
			__atomic_load_n(&hpm_state->caches[lcore], __ATOMIC_ACQUIRE);
		size_t bytes, left_bytes;
		uint64_t blocks, left;
		int owner;

		if (c == NULL || (locked != NULL && cache_socket_now(c) != locked->socket))
			continue;
		owner = __atomic_load_n(&c->owner, __ATOMIC_ACQUIRE);
		/* nobody's, ours, a live process's, or one a live survivor empties */
		if (owner == 0 || hpm_cache_owner_pid(owner) == hpm_lock_self ||
			hpm_pid_alive(hpm_cache_owner_pid(owner)) ||
			!__atomic_compare_exchange_n(&c->owner, &owner,
				hpm_cache_reaping(hpm_lock_self), false, __ATOMIC_ACQ_REL,
				__ATOMIC_RELAXED))
			continue;
		cache_held(c, &bytes, &blocks);
		if (locked != NULL)
			flush_all_locked(locked, c);
		else
			hpm_cache_flush_all(c);
		/* a torn heap takes nothing back: the blocks stay, for whoever claims the cache */
		cache_held(c, &left_bytes, &left);
		thread_hold(c, 0);
		__atomic_store_n(&c->owner, 0, __ATOMIC_RELEASE);
		if (left != 0)
			HPM_LOG(WARNING,
				"cache %u: its process %d%s is dead; the heap is torn: %" PRIu64
				" blocks (%zu bytes) stay in the cache",
				lcore, hpm_cache_owner_pid(owner),
				owner < 0 ? " (which was emptying it)" : "", left, left_bytes);
		else
			HPM_LOG(NOTICE,
				"cache %u: its process %d%s is dead; the %" PRIu64
				" blocks (%zu bytes) of its cache are back in the heap",
				lcore, hpm_cache_owner_pid(owner),
				owner < 0 ? " (which was emptying it)" : "", blocks, bytes);
		reaped++;
	}
	return reaped;
}

void
hpm_cache_reap_due(void)
{
	uint64_t now = rte_get_tsc_cycles();
	uint64_t due = __atomic_load_n(&reap_next_tsc, __ATOMIC_RELAXED);

	/* one thread of the process looks, every 10 ms */
	if (likely(now < due) ||
		!__atomic_compare_exchange_n(&reap_next_tsc, &due, now + rte_get_tsc_hz() / 100,
			false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return;
	hpm_cache_reap(NULL);
}

void
hpm_cache_request_drain(int socket)
{
	unsigned int lcore, i;

	for (lcore = 0; lcore < HPM_CACHE_SLOTS; lcore++) {
		struct hpm_lcore_cache *c =
			__atomic_load_n(&hpm_state->caches[lcore], __ATOMIC_ACQUIRE);

		if (c == NULL || cache_socket_now(c) != socket || c == hpm_cache_tls.cache)
			continue;
		for (i = 0; i < HPM_CACHE_NCLASS; i++) {
			if (__atomic_load_n(&hpm_cache_stack(c, i)->len, __ATOMIC_RELAXED) == 0)
				continue;
			/*
			 * The flag, then a limit of 0, what the hit paths see (the
			 * flag is the truth: update_limit() keeps the 0 it races with)
			 */
			__atomic_store_n(&hpm_cache_stack(c, i)->drain, 1, __ATOMIC_SEQ_CST);
			__atomic_store_n(&hpm_cache_stack(c, i)->limit, 0, __ATOMIC_SEQ_CST);
		}
	}
}

void
hpm_cache_held(int socket, size_t *bytes, uint64_t *blocks)
{
	struct hpm_cache_xfer *x;
	unsigned int lcore, cls;

	*bytes = 0;
	*blocks = 0;
	if (hpm_state == NULL)
		return;
	for (lcore = 0; lcore < HPM_CACHE_SLOTS; lcore++) {
		struct hpm_lcore_cache *c =
			__atomic_load_n(&hpm_state->caches[lcore], __ATOMIC_ACQUIRE);
		size_t b;
		uint64_t n;

		if (c == NULL || cache_socket_now(c) != socket)
			continue;
		cache_held(c, &b, &n);
		*bytes += b;
		*blocks += n;
	}
	x = socket >= 0 && socket < RTE_MAX_NUMA_NODES ? hpm_state->xfer[socket] : NULL;
	for (cls = 0; x != NULL && cls < HPM_CACHE_NCLASS; cls++) {
		uint32_t len = __atomic_load_n(&x->cls[cls].len, __ATOMIC_RELAXED);

		*blocks += len;
		*bytes += len * hpm_cache_class_bytes(cls);
	}
}

/* A thread that unregisters gives its cache back; the lcore id may go to another thread. */
static void
lcore_uninit(unsigned int lcore_id, void *arg)
{
	struct hpm_cache_binding *t = &hpm_cache_tls;

	RTE_SET_USED(arg);
	if (hpm_state == NULL || lcore_id != rte_lcore_id() || lcore_id >= RTE_MAX_LCORE)
		return;
	/* only this process's: another live process may use the lcore id's cache */
	if (hpm_state->caches[lcore_id] != NULL &&
		__atomic_load_n(&hpm_state->caches[lcore_id]->owner, __ATOMIC_ACQUIRE) ==
			hpm_lock_self) {
		hpm_cache_flush_all(hpm_state->caches[lcore_id]);
		thread_hold(hpm_state->caches[lcore_id], 0);
		__atomic_store_n(&hpm_state->caches[lcore_id]->owner, 0, __ATOMIC_RELEASE);
	}
	t->cache = NULL;
	t->socket = hpm_cache_none.socket;
	t->gen = 0;
}

/*
 * A child of fork(): the forking thread's cache is its parent's, which
 * goes on using it (the EAL source shares it, the others copy it). The
 * child binds anew, as any other process: an lcore id's cache whose owner
 * lives is not its, and takes the locked path.
 */
static void
fork_child(void)
{
	struct hpm_cache_binding *t = &hpm_cache_tls;

	if (thread_key_made)
		pthread_setspecific(thread_key, NULL);
	t->cache = &hpm_cache_none;
	t->socket = hpm_cache_none.socket;
	t->gen = 0;
}

RTE_INIT(hpm_cache_fork_setup)
{
	pthread_atfork(NULL, NULL, fork_child);
}

/* A thread that registers gets an lcore id: its thread slot goes back, it binds anew. */
static int
lcore_init(unsigned int lcore_id, void *arg)
{
	struct hpm_cache_binding *t = &hpm_cache_tls;
	struct hpm_lcore_cache *c = t->cache;

	RTE_SET_USED(lcore_id);
	RTE_SET_USED(arg);
	if (hpm_state != NULL && t->gen == hpm_hit.cache_gen && c != &hpm_cache_none && c != NULL &&
		c->lcore >= RTE_MAX_LCORE) {
		thread_exit(c);
		if (thread_key_made)
			pthread_setspecific(thread_key, NULL);
	}
	t->gen = 0;
	return 0;
}

void
hpm_cache_init_shared(struct hpm_state *st, const struct hpm_source_ops *src)
{
	unsigned int i;

	hpm_lock_init(&st->cache_lock);
	if ((st->cfg.flags & HPM_CFG_F_NO_CACHE) || st->cfg.cache_max == 0)
		return;
	/* the transfer stores, made now; without one (metadata short) the caches use the heap */
	for (i = 0; i < st->nsockets; i++)
		st->xfer[st->socket_ids[i]] =
			hpm_meta_alloc(&st->meta, src, sizeof(struct hpm_cache_xfer));
}

/* The chunk layer's reclaim callback: the arena around the chunk set. */
static bool
reclaim_chunks(struct hpm_chunk_set *cs)
{
	struct hpm_arena *a = container_of(cs, struct hpm_arena, cs);
	bool flushed = hpm_cache_reclaim_locked(a);

	/* the pages kept empty for reuse, and those the flush emptied: a unit, not growth */
	return hpm_arena_release_spares_locked(a) || flushed;
}

void
hpm_cache_init_process(void)
{
	hpm_chunk_set_reclaim(reclaim_chunks);
	hpm_cache_small_classes((hpm_state->cfg.flags & HPM_CFG_F_SMALL_HEAP) != 0);
	hpm_cache_run_keep =
		(hpm_state->cfg.flags & HPM_CFG_F_LEAN_CACHE) ? RUN_KEEP_LEAN : RUN_KEEP_ALL;
	hpm_cache_gen_bump();
	lcore_callbacks_register();
}

void
hpm_cache_fini_process(bool all)
{
	unsigned int lcore;

	/* a thread exiting from now on sees the new generation; one past its check is waited for */
	hpm_cache_gen_bump();
	while (__atomic_load_n(&threads_exiting, __ATOMIC_SEQ_CST) != 0)
		rte_pause();
	for (lcore = 0; lcore < HPM_CACHE_SLOTS; lcore++) {
		struct hpm_lcore_cache *c = hpm_state->caches[lcore];

		if (c != NULL &&
			(all || __atomic_load_n(&c->owner, __ATOMIC_RELAXED) == hpm_lock_self)) {
			hpm_cache_flush_all(c);
			thread_hold(c, 0);
			__atomic_store_n(&c->owner, 0, __ATOMIC_RELEASE);
		}
	}
	hpm_cache_gen_bump();
}
