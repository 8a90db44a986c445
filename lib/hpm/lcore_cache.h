/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef HPM_LCORE_CACHE_H
#define HPM_LCORE_CACHE_H

/*
 * Per-lcore caches (seed 003): in front of the granule pages and the heap, a
 * stack of free blocks per lcore and size class. A hit takes no lock and no
 * atomic operation, and reads and writes only the lcore's own stack: its
 * header line and the slot on top. A miss refills a batch, and a full stack
 * flushes a batch, under the socket's lock, once per batch.
 *
 * Classes: 17 heap classes for blocks of 64 to 1088 bytes (usable 48 to
 * 1072, so every request up to 1 KiB with default alignment) in steps of one
 * cache line, 6 more up to 4160 bytes (usable 4144: a 2 KiB packet buffer, a
 * page and its header) in steps of about a quarter, one for single 4 KiB
 * granules and one for 64 KiB blocks at 64 KiB (runs of 16 granules, in the
 * same pages: route.h), then one per class of the size-class pages (slab.h):
 * what the heap's classes do not serve up to 32 KiB, aligned requests
 * included; then runs of 4 KiB granules (gran.h)
 * of 1 to 64 granules (each up to 8, then four steps an octave), aligned
 * to 4, 8, 16, 32 or 64 KiB: what takes granule runs up to 256 KiB, at up to 64 KiB alignment.
 * A run's state byte holds its length's class alone (the 4 KiB-aligned
 * one): a free finds the alignment from the address, and a run more aligned
 * than it was asked for serves the more aligned class (a state byte holds
 * 127 classes, not five per length).
 *
 * Every block's state byte (unit.h) says whether the application, a cache or
 * nobody holds it: a hit writes it, a free checks and writes it, so a second
 * free is caught without a lock, and without touching the block's memory
 * (4 KiB-aligned blocks all fall in the same L1 set).
 *
 * Caches live in shared metadata, in slots: one per lcore id, then
 * HPM_THREAD_CACHES for threads that have no lcore id (plain pthreads, and
 * every thread of a program without EAL), taken at a thread's first call
 * and given back when it exits (a pthread key's destructor), so that they work in
 * every process of a multi-process application (processes use distinct
 * lcores; a cache records the process that uses it, and a thread of another
 * live process with the same lcore id takes the locked path). When a process
 * dies, the blocks in its caches go back to the heap at the survivors' next
 * trim, check or growth, or at a miss 10 ms after the death at the latest.
 * A thread without an lcore id takes the locked path only when every
 * thread slot is taken.
 */

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_atomic.h>
#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_per_lcore.h>

#include "hpm_inline.h"
#include "hpm_malloc.h"
#include "gran.h"
#include "lock.h"
#include "heap.h"
#include "hitline.h"
#include "poison.h"
#include "route.h"
#include "slab.h"
#include "unit.h"

/** Heap classes in steps of a cache line: blocks of 64 to 1088 bytes. */
#define HPM_CACHE_SMALL_NCLASS 17
#define HPM_CACHE_BLOCK_STEP 64
/** Largest usable size of a small class: a block of 1088 bytes less its header. */
#define HPM_CACHE_SMALL_MAX (HPM_CACHE_SMALL_NCLASS * HPM_CACHE_BLOCK_STEP - 16)
/** Heap classes in all, the wider ones after the small ones. */
#define HPM_CACHE_HEAP_NCLASS (HPM_CACHE_SMALL_NCLASS + 6)
/** Largest usable size of a heap class: a block of 4160 bytes less its header. */
#define HPM_CACHE_HEAP_MAX 4144

/**
 * Lengths of the granule runs the caches hold, in 4 KiB granules: each up to
 * 8, then four steps an octave. (Eight steps above 16 granules, 32 lengths:
 * held/live 1.73 -> 1.79 on malloc_perf's mixed, and slower: fewer hits.)
 */
#define HPM_CACHE_RUN_NLEN 20
static const uint8_t hpm_cache_run_len[HPM_CACHE_RUN_NLEN] = {1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14,
	16, 20, 24, 28, 32, 40, 48, 56, 64};
/** Alignments of run classes: 4 KiB << 0 to 4. */
#define HPM_CACHE_RUN_NALIGN 5
/** Longest run a cache holds, and the most its start is aligned to. */
#define HPM_CACHE_RUN_MAX (64u << 12)
#define HPM_CACHE_RUN_ALIGN 65536u

enum {
	HPM_CACHE_C4K = HPM_CACHE_HEAP_NCLASS,
	HPM_CACHE_C64K,
	/** The first of the size-class pages' classes, in slab.h's order. */
	HPM_CACHE_SLAB0,
	/**
	 * The first granule run class: the class of runs of
	 * hpm_cache_run_len[l] granules aligned to 4 KiB << a is
	 * HPM_CACHE_RUN0 + a * HPM_CACHE_RUN_NLEN + l (one granule aligned to
	 * 4 KiB is HPM_CACHE_C4K instead: that class is never used).
	 */
	HPM_CACHE_RUN0 = HPM_CACHE_SLAB0 + HPM_SLAB_NCLASS,
	HPM_CACHE_NCLASS = HPM_CACHE_RUN0 + HPM_CACHE_RUN_NALIGN * HPM_CACHE_RUN_NLEN,
};

/** Granules of a run class's blocks, and (below) the alignment of their start. */
static __rte_always_inline unsigned int
hpm_cache_run_granules(unsigned int cls)
{
	return hpm_cache_run_len[(cls - HPM_CACHE_RUN0) % HPM_CACHE_RUN_NLEN];
}

static __rte_always_inline size_t
hpm_cache_run_align(unsigned int cls)
{
	return (size_t)4096 << ((cls - HPM_CACHE_RUN0) / HPM_CACHE_RUN_NLEN);
}

/**
 * Most blocks a stack can hold; the limit in force follows the heap's size.
 * Seven bursts of 32: a cache then takes 256 KiB of metadata, not 512 (at
 * 512 blocks, test_soak's three caches took the metadata past one hugepage:
 * 184 MiB held against 182).
 */
#define HPM_CACHE_CAP 224
/**
 * Most blocks a stack of granule runs can hold: their limits are in bytes
 * (128 KiB, 32 single granules), and a cache takes less than 256 KiB of
 * metadata.
 */
#define HPM_CACHE_RUN_CAP 32

struct hpm_cache_obj {
	void *p;
	uint8_t *state;
};

/*
 * Write a stack entry as two 8-byte stores. Merged into one 16-byte store
 * (as compilers do), the pop that soon loads the halves apart cannot take
 * the upper one from the store buffer and waits for the store to retire:
 * a 64 B pair took 16 ns for 8.5 with two stores, rte_mempool's 7.8 ns.
 */
static __rte_always_inline void
hpm_cache_obj_set(struct hpm_cache_obj *o, void *p, uint8_t *state)
{
	o->p = p;
	rte_compiler_barrier();
	o->state = state;
}

struct hpm_cache_stack {
	uint32_t len;
	/** Most blocks held; 0 while a drain is asked (the hit paths then miss). */
	uint32_t limit;
	/** Set by another thread: flush the whole cache at the next call. */
	uint32_t drain;
	uint32_t batch;
	uint64_t hits;
	uint64_t misses;
	uint64_t flushes;
	/** Most blocks the stack holds: HPM_CACHE_CAP, HPM_CACHE_RUN_CAP for runs. */
	uint32_t cap;
	/** The state byte of a block it hands out: hpm_cache_user_state() of its class. */
	uint8_t held;
	/** A refill of the empty stack from the heap fills it: its budget allows twice that. */
	bool fill_whole;
} __rte_cache_aligned;
static_assert(sizeof(struct hpm_cache_stack) == RTE_CACHE_LINE_SIZE, "a stack's header is a line");

/*
 * A stack is its header line, then its blocks (hpm_cache_objs()): their
 * address one add from the header's, never a load (a free's push would wait
 * for it, and the next pop for the push: 0.9 ns a pair). Runs have short
 * stacks of their own. Stacks are 3648 bytes apart (57 lines), not a
 * power of two (a shift instead of a multiply): 8 KiB apart, every header
 * shared one L1 set, and a workload that keeps many classes busy missed on
 * them (bench_hit_path's mix under devtools/hit-path-instructions.sh --l1:
 * 3.88 L1 misses a step against 2.44 at 8256 bytes).
 */
struct hpm_cache_stack_full {
	struct hpm_cache_stack h;
	struct hpm_cache_obj objs[HPM_CACHE_CAP];
};

struct hpm_cache_stack_run {
	struct hpm_cache_stack h;
	struct hpm_cache_obj objs[HPM_CACHE_RUN_CAP];
};

/** The blocks of a stack, after its header. */
static __rte_always_inline struct hpm_cache_obj *
hpm_cache_objs(const struct hpm_cache_stack *cc)
{
	return (struct hpm_cache_obj *)(uintptr_t)(cc + 1);
}

/** Slots for threads without an lcore id, after the lcores' RTE_MAX_LCORE. */
#define HPM_THREAD_CACHES HPM_CACHE_THREAD_SLOTS
#define HPM_CACHE_SLOTS (HPM_CACHE_THREAD_SLOT0 + HPM_THREAD_CACHES)
static_assert(HPM_CACHE_SLOTS <= HPM_GRAN_CACHE_OWNERS, "every cache slot may own granule pages");

/*
 * The transfer store of a socket (tcmalloc's transfer cache, a middle end):
 * per class, blocks a full cache flushed and an empty one takes, moved as
 * arrays under a lock of their own, so that a pipeline (one lcore
 * allocates, another frees) moves batches between the two caches without
 * the heap's lock and without cutting and merging heap blocks. It holds at
 * most HPM_XFER_CAP blocks and HPM_XFER_BYTES bytes per class; what does
 * not fit goes to the heap. Its blocks count as cached (free) blocks, and
 * go back to the heap before the heap grows and at every trim.
 */
#define HPM_XFER_CAP 64
#define HPM_XFER_BYTES (UINT32_C(512) << 10)

/**
 * Blocks of class cls a transfer store may hold: HPM_XFER_CAP and
 * HPM_XFER_BYTES, runs of granules as much as a cache's stack (none longer
 * than 128 KiB).
 */
uint32_t hpm_cache_xfer_max(unsigned int cls);

/**
 * A cache's owner while a survivor gives a dead owner's blocks back: the
 * survivor's pid, negated, so that another can tell when the survivor dies
 * too (a mark without the pid stayed for good: the blocks lost, the lcore
 * on the cache lock at every call).
 */
static inline int
hpm_cache_reaping(int pid)
{
	return -pid;
}

/** The process an owner names: its pid, or the reaper's. */
static inline int
hpm_cache_owner_pid(int owner)
{
	return owner < 0 ? -owner : owner;
}

struct hpm_lcore_cache {
	int socket;
	/** Slot: the lcore id, or RTE_MAX_LCORE + n for the n-th thread cache. */
	unsigned int lcore;
	/** A thread of the owner holds this thread slot (0 for lcore slots). */
	uint32_t thread_held;
	/**
	 * pid of the process whose lcore uses the cache; 0 for none. A process
	 * that finds the owner dead gives the blocks back (hpm_cache_reap()).
	 */
	int owner;
	/**
	 * Classes under the cache's byte budget (granules, size classes, runs)
	 * that held blocks, and their bytes, when last counted (every 16th limit
	 * update of such a class).
	 */
	uint32_t classes_held;
	uint32_t budget_updates;
	size_t held_bytes;
	/**
	 * This cache's locked refills and flushes in its socket's window
	 * act_window and in the one before (hpm_cache_xfer). Arena lock held.
	 */
	uint64_t act_window;
	uint32_t act_now;
	uint32_t act_before;
	struct hpm_cache_stack_full cls[HPM_CACHE_RUN0];
	struct hpm_cache_stack_run run[HPM_CACHE_NCLASS - HPM_CACHE_RUN0];
};
static_assert(sizeof(struct hpm_lcore_cache) <= (256u << 10), "a cache takes 256 KiB of metadata");

/** The stack of class cls (writable through a cache read as const: its owner's). */
static __rte_always_inline struct hpm_cache_stack *
hpm_cache_stack(const struct hpm_lcore_cache *c, unsigned int cls)
{
	if (likely(cls < HPM_CACHE_RUN0))
		return (struct hpm_cache_stack *)(uintptr_t)&c->cls[cls].h;
	return (struct hpm_cache_stack *)(uintptr_t)&c->run[cls - HPM_CACHE_RUN0].h;
}

/*
 * The stack a free pushes on: the thread's hint when it is cc, the class's
 * stack, else cc, which becomes the hint. Taken through a branch
 * (HPM_INLINE_JNE()), so that the push's address and the next pop need not
 * wait for the class, three dependent loads away (design.rst, the hit path).
 */
static __rte_always_inline struct hpm_cache_stack *
hpm_cache_stack_hinted(hpm_binding_ref *t, struct hpm_cache_stack *cc)
{
	struct hpm_cache_stack *hint = t->free_hint;

	HPM_INLINE_JNE(cc, hint, miss);
	return hint;
miss:
	((hpm_binding_mut *)(uintptr_t)t)->free_hint = cc;
	return cc;
}

/** Most blocks a stack of class cls holds. */
static inline uint32_t
hpm_cache_class_cap(unsigned int cls)
{
	return cls >= HPM_CACHE_RUN0 ? HPM_CACHE_RUN_CAP : HPM_CACHE_CAP;
}

struct hpm_xfer_class {
	hpm_lock_t lock;
	uint32_t len;
	uint64_t puts;
	uint64_t gets;
	struct hpm_cache_obj objs[HPM_XFER_CAP];
} __rte_cache_aligned;

/** Locked refills and flushes of a socket's caches in a window of their activity. */
#define HPM_CACHE_ACT_WINDOW 4096u

struct hpm_cache_xfer {
	struct hpm_xfer_class cls[HPM_CACHE_NCLASS];
	/**
	 * The socket's window of the caches' locked refills and flushes
	 * (lcore_cache.c's activity): the window's number, the events in it and
	 * in the one before. Arena lock held.
	 */
	uint64_t act_window;
	uint32_t act_now;
	uint32_t act_before;
};

/*
 * This thread's binding to its cache, checked against hpm_hit.cache_gen:
 * hpm_cache_tls, declared in hpm_inline.h (whose functions read it too),
 * defined in hitline.c, read by the hit paths through hpm_hit_binding().
 */

/**
 * A new generation of the caches (hpm_hit.cache_gen, and hpm_inline.h's
 * anchor): at every hpm_init() and hpm_fini() and when debug mode changes,
 * bindings of an older state are void. Never 0, what a new thread has.
 */
void hpm_cache_gen_bump(void);
/**
 * What a thread without a cache is bound to: every stack empty and full,
 * socket -1, so that the fast paths miss without testing for NULL.
 */
extern struct hpm_lcore_cache hpm_cache_none __attribute__((visibility("hidden")));

/*
 * Fields of a stack that other threads read (statistics) or write (drain
 * requests) go through relaxed atomics: plain moves on x86, and data races
 * a thread sanitizer can check. Only the owner writes len and the counters.
 */
static __rte_always_inline void
hpm_cache_set_len(struct hpm_cache_stack *cc, uint32_t len)
{
	__atomic_store_n(&cc->len, len, __ATOMIC_RELAXED);
}

static __rte_always_inline void
hpm_cache_count(uint64_t *counter, uint64_t n)
{
#ifdef __SANITIZE_THREAD__
	__atomic_store_n(counter, *counter + n, __ATOMIC_RELAXED);
#else
	/* one add to memory; a reader's torn view is impossible for an aligned word on x86 */
	*counter += n;
#endif
}

static __rte_always_inline bool
hpm_cache_drain_asked(const struct hpm_cache_stack *cc)
{
	return __atomic_load_n(&cc->drain, __ATOMIC_RELAXED) != 0;
}

/*
 * A stack's address in a register the compiler then reads every field from:
 * without it, it folds the class into every field's address anew (two
 * multiplications and more adds on the hit paths). No instruction.
 */
#define HPM_CACHE_LAUNDER(cc) __asm__("" : "+r"(cc))

/*
 * The limit, 0 while a drain is asked (hpm_cache_request_drain() stores the
 * flag, then 0): a hit path's one compare sees both.
 */
static __rte_always_inline uint32_t
hpm_cache_limit(const struct hpm_cache_stack *cc)
{
	return __atomic_load_n(&cc->limit, __ATOMIC_RELAXED);
}

/* The same for a hit path's one compare: a plain load, which the compare takes as its operand. */
static __rte_always_inline uint32_t
hpm_cache_limit_hit(const struct hpm_cache_stack *cc)
{
#ifdef __SANITIZE_THREAD__
	return hpm_cache_limit(cc);
#else
	/* read once: one word, written whole by the owner or a drain request */
	return cc->limit;
#endif
}

/* A block's state byte, read and written without the lock by whoever holds the block. */
static __rte_always_inline uint8_t
hpm_blk_state_get(const uint8_t *state)
{
	return __atomic_load_n(state, __ATOMIC_RELAXED);
}

static __rte_always_inline void
hpm_blk_state_set(uint8_t *state, uint8_t value)
{
	__atomic_store_n(state, value, __ATOMIC_RELAXED);
}

/**
 * Bind the calling thread to its lcore's cache (to hpm_cache_none when it
 * has none, or in debug mode); the cache, or NULL for none. NULL, binding
 * nothing, before the heap is set up: the API sets it up and asks again.
 */
struct hpm_lcore_cache *hpm_cache_bind(void);

/** The calling thread's cache, or NULL. */
static __rte_always_inline struct hpm_lcore_cache *
hpm_cache_get(void)
{
	hpm_binding_ref *t = hpm_hit_binding();

	if (likely(t->gen == hpm_hit.cache_gen))
		return t->cache != &hpm_cache_none ? t->cache : NULL;
	return hpm_cache_bind();
}

/* Wider heap classes: their block sizes, and the class of a block size up to 4160. */
static const uint16_t hpm_cache_wide_bytes[] = {1344, 1600, 2112, 2624, 3136, 4160};

static __rte_always_inline int
hpm_cache_wide_class(size_t block)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(hpm_cache_wide_bytes) - 1; i++)
		if (block <= hpm_cache_wide_bytes[i])
			break;
	return HPM_CACHE_SMALL_NCLASS + i;
}

/** Bytes of a block of class cls (its header included for a heap class). */
static __rte_always_inline size_t
hpm_cache_block_bytes(unsigned int cls)
{
	if (cls < HPM_CACHE_SMALL_NCLASS)
		return (size_t)(cls + 1) * HPM_CACHE_BLOCK_STEP;
	if (cls < HPM_CACHE_HEAP_NCLASS)
		return hpm_cache_wide_bytes[cls - HPM_CACHE_SMALL_NCLASS];
	if (cls >= HPM_CACHE_RUN0)
		return (size_t)hpm_cache_run_granules(cls) << 12;
	if (cls >= HPM_CACHE_SLAB0)
		return hpm_slab_class_bytes[cls - HPM_CACHE_SLAB0];
	return cls == HPM_CACHE_C4K ? 4096 : 65536;
}

/** Bytes of a block of class cls an application may use. */
static __rte_always_inline size_t
hpm_cache_class_usable(unsigned int cls)
{
	return cls < HPM_CACHE_HEAP_NCLASS ? hpm_cache_block_bytes(cls) - 16
					   : hpm_cache_block_bytes(cls);
}

/*
 * Per heap block size / 64 (the request, its 16-byte header and the rounding
 * to 64 bytes), up to 4160 bytes: the smallest heap class that holds it
 * (classes 0-16: 64-1088 bytes; 17-22: 1344, 1600, 2112, 2624, 3136, 4160).
 */
static const uint8_t hpm_cache_fit_class[4160 / 64 + 1] = {
	0,
	0,
	1,
	2,
	3,
	4,
	5,
	6,
	7,
	8,
	9,
	10,
	11,
	12,
	13,
	14,
	15,
	16,
	17,
	17,
	17,
	17,
	18,
	18,
	18,
	18,
	19,
	19,
	19,
	19,
	19,
	19,
	19,
	19,
	20,
	20,
	20,
	20,
	20,
	20,
	20,
	20,
	21,
	21,
	21,
	21,
	21,
	21,
	21,
	21,
	22,
	22,
	22,
	22,
	22,
	22,
	22,
	22,
	22,
	22,
	22,
	22,
	22,
	22,
	22,
	22,
};

/* The heap class of a request of size bytes (1 to HPM_CACHE_HEAP_MAX), default alignment. */
static __rte_always_inline int
hpm_cache_class_fit(size_t size)
{
	return hpm_cache_fit_class[(size + 16 + 63) >> 6];
}

/**
 * Fill hpm_hit.small_class[], per request size / 16 (rounded up), up to
 * HPM_CACHE_HEAP_MAX, default alignment: its class, a size-class page's (or
 * one 4 KiB granule's), or with HPM_CFG_F_SMALL_HEAP (small_heap) a heap
 * class. For this process's heap at hpm_cache_init_process(); size-class
 * pages' before.
 */
void hpm_cache_small_classes(bool small_heap);

/** Longest granule run the caches keep, in granules (HPM_CFG_F_LEAN_CACHE: 16; else 64). */
extern unsigned int hpm_cache_run_keep __attribute__((visibility("hidden")));

/**
 * Whether the caches keep blocks of class cls. The classes they do not keep
 * (long runs, HPM_CFG_F_LEAN_CACHE) have a limit of 0, so that both hit
 * paths miss; the miss paths ask this and take the lock.
 */
static inline bool
hpm_cache_keeps(unsigned int cls)
{
	return cls < HPM_CACHE_RUN0 || hpm_cache_run_granules(cls) <= hpm_cache_run_keep;
}

/* Per run length in granules (1 to 64): the index of the shortest run class that holds it. */
static const uint8_t hpm_cache_run_fit[65] = {0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 8, 9, 9, 10, 10, 11, 11,
	12, 12, 12, 12, 13, 13, 13, 13, 14, 14, 14, 14, 15, 15, 15, 15, 16, 16, 16, 16, 16, 16, 16,
	16, 17, 17, 17, 17, 17, 17, 17, 17, 18, 18, 18, 18, 18, 18, 18, 18, 19, 19, 19, 19, 19, 19,
	19, 19};

/*
 * The class of a request the route table sends to runs of 4 KiB granules
 * (a 4 KiB or larger alignment, a multiple of 4 KiB, more than 32 KiB), or
 * -1: 0 bytes, longer than 256 KiB, or aligned to more than 64 KiB.
 */
static __rte_always_inline int
hpm_cache_class_run(size_t size, size_t align)
{
	unsigned int fit;

	if (size - 1 >= HPM_CACHE_RUN_MAX || align > HPM_CACHE_RUN_ALIGN)
		return -1;
	fit = hpm_cache_run_fit[(size + 4095) >> 12];
	if (align > 4096)
		return HPM_CACHE_RUN0 +
			(int)((unsigned int)__builtin_ctzll(align) - 12) * HPM_CACHE_RUN_NLEN +
			(int)fit;
	return fit == 0 ? HPM_CACHE_C4K : HPM_CACHE_RUN0 + (int)fit;
}

/*
 * The class of what the heap's classes do not serve, up to 256 KiB: a
 * single granule, the smallest size-class page class large and aligned
 * enough, but one 4 KiB granule for up to 4 KiB where that class would be
 * larger (the route table's rows for 2-4 KiB), or a run of granules; -1 for
 * none.
 */
static __rte_always_inline int
hpm_cache_class_other(size_t size, size_t align)
{
	int cls;

	if (size == 65536)
		return align <= 65536 ? HPM_CACHE_C64K : -1;
	if (size - 1 < 4096 && align <= 4096 && (align == 4096 || size == 4096))
		return HPM_CACHE_C4K;
	/* multiples of 4 KiB and 4 KiB alignments are granule runs */
	if ((size & 4095) == 0 || align >= 4096 || (cls = hpm_slab_class(size, align)) < 0)
		return size < HPM_UNIT_SIZE ? hpm_cache_class_run(size, align) : -1;
	if (size <= 4096 && hpm_slab_class_bytes[cls] > 4096)
		return HPM_CACHE_C4K;
	return HPM_CACHE_SLAB0 + cls;
}

/**
 * Class of a request (align a power of two), or -1 when no class serves it:
 * the route table's answer (route.h) for the sizes and alignments a class
 * holds, found in a few compares (test_cache checks the two agree).
 */
static __rte_always_inline int
hpm_cache_class(size_t size, size_t align)
{
	/* 4096, a multiple of 4 KiB, is a granule: the sizes below it in one compare */
	if (likely(align <= 64 && size - 1 < 4095)) {
		unsigned int cls = hpm_hit.small_class[(size + 15) >> 4];

		/* never a run's (its fill checks): the stack without hpm_cache_stack()'s test */
		if (cls >= HPM_CACHE_RUN0)
			__builtin_unreachable();
		return (int)cls;
	}
	if (align <= 64 && size - 1 < HPM_CACHE_HEAP_MAX && size != 4096)
		return hpm_hit.small_class[(size + 15) >> 4];
	return hpm_cache_class_other(size, align);
}

/*
 * Classes found elsewhere, in hpm_cache_role_class[]: in the block's header
 * (heap spans), in the block's frame (size-class pages). Negative, so that
 * one sign test leaves the classes a role gives at once.
 */
#define HPM_CACHE_FROM_HEADER (-2)
#define HPM_CACHE_FROM_FRAME (-3)

/* Per unit role (unit.h's order): the class of its cacheable blocks, or -1 for none. */
static const int8_t hpm_cache_role_class[] = {
	-1,                    /* FREE */
	HPM_CACHE_FROM_HEADER, /* SPAN */
	-1,                    /* G4K */
	-1,                    /* G64K */
	-1,                    /* LARGE */
	HPM_CACHE_FROM_FRAME,  /* SLAB */
};
static_assert(HPM_UNIT_SPAN == 1 && HPM_UNIT_SLAB == 5 &&
		RTE_DIM(hpm_cache_role_class) == HPM_UNIT_SLAB + 1,
	"hpm_cache_role_class[] follows enum hpm_unit_role");

/*
 * Per heap block size / 64 (up to 4160 bytes): its class + 1, or 0 when no
 * class has blocks of exactly that size (a block cut otherwise has no class).
 */
static const uint8_t hpm_cache_size_class[4160 / 64 + 1] = {
	0,
	1,
	2,
	3,
	4,
	5,
	6,
	7,
	8,
	9,
	10,
	11,
	12,
	13,
	14,
	15,
	16,
	17,
	0,
	0,
	0,
	18,
	0,
	0,
	0,
	19,
	0,
	0,
	0,
	0,
	0,
	0,
	0,
	20,
	0,
	0,
	0,
	0,
	0,
	0,
	0,
	21,
	0,
	0,
	0,
	0,
	0,
	0,
	0,
	22,
	0,
	0,
	0,
	0,
	0,
	0,
	0,
	0,
	0,
	0,
	0,
	0,
	0,
	0,
	0,
	23,
};
static_assert(HPM_CACHE_SMALL_NCLASS == 17 && RTE_DIM(hpm_cache_wide_bytes) == 6,
	"hpm_cache_size_class[] lists every heap class");

/*
 * Class of a block the application holds, and its state byte; -1 when it has
 * no class or p is not such a block (then the locked path decides), or when
 * u does not cover p (a stale owner-table entry). Reads only bytes that no
 * other thread writes while p is the caller's: the unit's first line, the
 * block's state byte and, in a heap span, the block's header.
 */
static __rte_always_inline int
hpm_cache_class_of(const struct hpm_unit *u, const void *p, uint8_t **state)
{
	size_t off = (const uint8_t *)p - u->va;
	int cls = hpm_cache_role_class[u->role];
	size_t size;

	if ((off & u->start_mask) != 0) /* outside the unit too */
		return -1;
	/* a unit of any role has state bytes to read (unit.h), NONE where it has none */
	*state = &u->state[off >> u->shift];
	if (hpm_blk_kind(hpm_blk_state_get(*state)) != HPM_BLK_USER)
		return -1;
	if (cls >= 0)
		return cls;
	if (cls == HPM_CACHE_FROM_FRAME)
		return HPM_CACHE_SLAB0 + (int)hpm_slab_class_at(u, p);
	if (cls != HPM_CACHE_FROM_HEADER)
		return -1;
		/* the header's flags may change under the lock, its size not */
#ifdef HPM_ASAN
	size = hpm_heap_header_size(p); /* poisoned: read where ASan does not look */
#else
	/* 0 when the header's tag is wrong (overwritten): the locked path says so */
	size = hpm_heap_word_size(__atomic_load_n((const uint64_t *)((const uint8_t *)p - 8),
					  __ATOMIC_RELAXED),
		p);
#endif
	return size < sizeof(hpm_cache_size_class) * 64 ? (int)hpm_cache_size_class[size >> 6] - 1
							: -1;
}

/**
 * State byte of a block a cache hands out: HPM_BLK_USER and its class
 * (unit.h); a run's, its length's 4 KiB-aligned class (the address tells the
 * rest). The hit paths read it from the stack (hpm_cache_stack::held).
 */
static __rte_always_inline uint8_t
hpm_cache_user_state(unsigned int cls)
{
	if (cls >= HPM_CACHE_RUN0)
		cls = HPM_CACHE_RUN0 + (cls - HPM_CACHE_RUN0) % HPM_CACHE_RUN_NLEN;
	return (uint8_t)(((cls + 1) << 1) + HPM_BLK_USER);
}
static_assert(HPM_BLK_USER == 1, "the class sits above the user bit");
static_assert(((HPM_CACHE_RUN0 + HPM_CACHE_RUN_NLEN) << 1) <= UINT8_MAX,
	"a class fits in a state byte");

/* The class of a run of the state byte's length class at p: its alignment, 64 KiB at most. */
static __rte_always_inline int
hpm_cache_run_class_at(int cls, const void *p)
{
	unsigned int a = (unsigned int)__builtin_ctzll((uintptr_t)p) - 12;

	return cls + (int)RTE_MIN(a, HPM_CACHE_RUN_NALIGN - 1u) * HPM_CACHE_RUN_NLEN;
}

/*
 * The free hit path's hpm_cache_class_of(): the class a cache wrote in the
 * block's state byte when it handed the block out, so one byte says both
 * that the caller holds the block and where it goes; -1 for a block handed
 * out by the locked path (hpm_cache_class_of() then decides), or not held,
 * or not covered by u.
 */
static __rte_always_inline int
hpm_cache_class_fast(const struct hpm_unit *u, const void *p, uint8_t **state)
{
	size_t off = (const uint8_t *)p - u->va;
	unsigned int s;
	int cls;

	if ((off & u->start_mask) != 0) /* outside the unit too */
		return -1;
	*state = &u->state[off >> u->shift];
	s = hpm_blk_state_get(*state);
	if (hpm_blk_kind((uint8_t)s) != HPM_BLK_USER)
		return -1;
	cls = (int)(s >> 1) - 1;
	/* one compare for both: no class (the locked path's), or a run (then its alignment's) */
	if (unlikely((unsigned int)cls >= HPM_CACHE_RUN0))
		return cls < 0 ? -1 : hpm_cache_run_class_at(cls, p);
	return cls;
}

/**
 * The class a free takes a block in: the one a cache wrote in its state
 * byte, else (a block the locked path handed out) its header's, frame's or
 * role's; -1 for none.
 */
static __rte_always_inline int
hpm_cache_class_free(const struct hpm_unit *u, const void *p, uint8_t **state)
{
	int cls = hpm_cache_class_fast(u, p, state);

	if (unlikely(cls < 0))
		cls = hpm_cache_class_of(u, p, state);
	return cls;
}

/**
 * Add at least want blocks (at least a batch, within the capacity) to a
 * class under one lock round-trip; the stack's new length.
 */
unsigned int hpm_cache_fill(struct hpm_lcore_cache *c, unsigned int cls, unsigned int want);

/** Refill a class from the socket's arena, then pop a block; NULL when memory is short. */
void *hpm_cache_refill(struct hpm_lcore_cache *c, unsigned int cls);

/** Flush a batch of a full class (or all of the cache when asked to drain), then push p. */
void hpm_cache_flush_push(struct hpm_lcore_cache *c, unsigned int cls, void *p, uint8_t *state);

/** Flush every class of a cache to the arena. */
void hpm_cache_flush_all(struct hpm_lcore_cache *c);

/**
 * Before the arena grows: flush the calling lcore's cache into it, ask the
 * other lcores to flush at their next call. True when memory came back.
 * Arena lock held.
 */
struct hpm_arena;
bool hpm_cache_reclaim_locked(struct hpm_arena *a);

/**
 * Give the blocks of the caches of dead processes back to the heap; the
 * number of caches emptied. With an arena (its lock held), only the caches
 * of its socket; with NULL, all (no lock held).
 */
unsigned int hpm_cache_reap(struct hpm_arena *locked);

/** hpm_cache_reap(NULL) when 10 ms have passed since this process last did (misses). */
void hpm_cache_reap_due(void);

/** Give the blocks of a socket's transfer store back to its arena. Arena lock held. */
void hpm_cache_xfer_drain_locked(struct hpm_arena *a);

/** Bytes and blocks held by the caches of a socket (racy snapshot). */
void hpm_cache_held(int socket, size_t *bytes, uint64_t *blocks);

/** Ask the other lcores of a socket to flush at their next call. */
void hpm_cache_request_drain(int socket);

/** Bytes of a block of class cls. */
size_t hpm_cache_class_bytes(unsigned int cls);

/** The first class under a cache's byte budget: granules, size classes and runs. */
#define HPM_CACHE_BUDGET_CLASS0 HPM_CACHE_C4K

/** hpm_config::cache_budget_min's default (lcore_cache.c says how it was measured). */
#define HPM_CACHE_BUDGET_MIN_DEFAULT ((size_t)8 << 20)

/**
 * Bytes the classes from HPM_CACHE_BUDGET_CLASS0 of cache c may hold
 * together now (it follows the heap's size).
 */
size_t hpm_cache_budget(const struct hpm_lcore_cache *c);

struct hpm_state;

/** Set up the shared part of the caches in a new state. */
struct hpm_source_ops;
void hpm_cache_init_shared(struct hpm_state *st, const struct hpm_source_ops *src);

/** This process starts using the state: lcore callbacks, new bindings. */
void hpm_cache_init_process(void);

/**
 * This process stops: bindings void (a thread exiting meanwhile is waited
 * for), the caches it owns (all, with all) flushed.
 */
void hpm_cache_fini_process(bool all);

/**
 * Tests only: called by a thread's exit destructor after its check, before
 * it empties its cache (test_thread_cache holds a thread there while
 * another runs hpm_fini()). NULL in applications.
 */
extern void (*hpm_cache_exit_hook)(void) __attribute__((visibility("hidden")));

#endif /* HPM_LCORE_CACHE_H */
