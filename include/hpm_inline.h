/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef HPM_INLINE_H
#define HPM_INLINE_H

/**
 * @file
 * hpm_malloc() and hpm_free() inline, for a data path that calls them in a
 * tight loop, as rte_mempool_get() is inline.
 *
 * hpm_malloc_inline() and hpm_free_inline() take a block from the calling
 * thread's cache and give it back there without a call into the library,
 * for the requests a cache serves at once: every size up to 32 KiB at
 * alignments up to 64 bytes but the multiples of 4 KiB above it, and 4 KiB
 * and 64 KiB blocks at any alignment up to their size. Everything
 * else (another size, an empty or full cache, a block of another socket or
 * of the locked path, a bad pointer, the first call of a thread) is a call
 * of hpm_malloc() or hpm_free(): the same blocks, checks and errors as
 * theirs. A 64-byte pair: 70 instructions against 92 through the calls.
 *
 * They read the library's structures through the layout below, version
 * HPM_INLINE_VERSION, from the symbol hpm_inline_v3: a library of another
 * layout does not have that symbol, so that a program built against this
 * header fails to load rather than misread memory (layout 3 moved the
 * stacks: a library of it has neither hpm_inline_v2 nor hpm_inline_v1). The
 * structures and the anchor are not API: only the two functions are.
 *
 * Built with AddressSanitizer or ThreadSanitizer, or with HPM_NO_INLINE
 * defined, they are plain calls of hpm_malloc() and hpm_free(). A library
 * built with a sanitizer or for valgrind (-Dvalgrind=true), or in debug
 * mode, keeps every inline call on those paths.
 */

#include <stddef.h>
#include <stdint.h>

#include <rte_atomic.h>
#include <rte_branch_prediction.h>
#include <rte_common.h>

#include "hpm_malloc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* the library builds with hidden visibility: what it shares with this header is exported */
#pragma GCC visibility push(default)

/** Version of the layout the inline functions read. */
#define HPM_INLINE_VERSION 3

/*
 * The layout, version 3: what the library's structures hold where the inline
 * functions read them (the library asserts each offset when it builds). Not
 * API: names and fields may change with the version.
 */

struct hpm_lcore_cache;

/** Layout: a thread's binding to its cache. */
struct hpm_cache_binding {
	/** The thread's cache; meaningful while gen is the library's. */
	struct hpm_lcore_cache *cache;
	/** The caches' generation when the thread bound; 0 for none. */
	uint64_t gen;
	/** The cache's socket, on the line the binding is read from (the library's). */
	int socket;
	/**
	 * The stack the thread's last free pushed on, a guess (layout 2 on): a free
	 * takes its stack from here when the block's class agrees (HPM_INLINE_JNE()).
	 */
	void *free_hint;
};

/** Layout: this thread's binding (initial-exec TLS: one instruction to reach). */
extern __thread struct hpm_cache_binding hpm_cache_tls __attribute__((tls_model("initial-exec")));

/** Layout: an entry of a cache's stack. */
struct hpm_inline_obj {
	void *p;        /**< the block */
	uint8_t *state; /**< its state byte */
};

/** Layout: the header line of a cache's stack of one class; its entries follow. */
struct hpm_inline_stack {
	uint32_t len;                 /**< entries held */
	uint32_t limit;               /**< most entries; 0 while a drain is asked */
	uint8_t reserved0[8];         /**< the library's */
	uint64_t hits;                /**< allocations served */
	uint8_t reserved1[20];        /**< the library's */
	uint8_t held;                 /**< the state byte of a block it hands out */
	uint8_t reserved2[19];        /**< the library's */
	struct hpm_inline_obj objs[]; /**< the entries */
};

/** Layout: a cache starts with its socket; its stacks from HPM_INLINE_STACK0. */
struct hpm_inline_cache {
	int socket; /**< the socket of the blocks it holds; -1 for none */
};

/** Layout: offset of a cache's first stack. */
#define HPM_INLINE_STACK0 64
/** Layout: distance between two stacks of a cache. */
#define HPM_INLINE_STACK_SIZE (64 + 224 * 16)
/** Layout: the classes below this have such stacks; a state byte's class above: a call. */
#define HPM_INLINE_RUN0 56
/** Layout: the class of 4 KiB aligned 4 KiB. */
#define HPM_INLINE_C4K 23
/** Layout: the class of 64 KiB aligned 64 KiB. */
#define HPM_INLINE_C64K 24
/** Layout: the state byte of a cached block. */
#define HPM_INLINE_BLK_CACHED 2
/** Layout: the least size of hpm_inline_anchor::mid_class (above the small table's). */
#define HPM_INLINE_MID_MIN 4145
/** Layout: log2 of the unit the owner table maps (2 MiB). */
#define HPM_INLINE_UNIT_SHIFT 21

/** Layout: the first line of the owner of a 2 MiB unit. */
struct hpm_inline_unit {
	uint8_t reserved0[2]; /**< the library's */
	uint16_t socket;      /**< the unit's socket */
	uint8_t shift;        /**< log2 of the distance between block starts */
	uint64_t start_mask;  /**< offset bits a block start has clear, and those past the unit */
	uint8_t *va;          /**< the unit's first byte */
	uint8_t *state;       /**< a state byte per possible block start */
};

/** Layout: the owner table, slot[(address >> 21) & mask]. */
struct hpm_inline_owner {
	uintptr_t mask;                 /**< slots - 1 */
	struct hpm_inline_unit *slot[]; /**< a unit's owner, or NULL */
};

/** Layout: what the inline functions read of the library's globals. */
struct hpm_inline_anchor {
	/** The caches' generation; UINT64_MAX (no thread's) keeps the inline paths off. */
	uint64_t gen;
	/** The owner table in force. */
	struct hpm_inline_owner *owner;
	/** Class of sizes below 4 KiB at alignments up to 64 bytes, per (size + 15) / 16. */
	uint8_t small_class[257];
	/**
	 * Class of sizes from HPM_INLINE_MID_MIN to 32 KiB at alignments up to
	 * 64 bytes but multiples of 4 KiB, per (size + 63) / 64; 0xff: a call.
	 */
	uint8_t mid_class[32768 / 64 + 1];
};

/** Layout: the library's anchor, version 3 (the symbol's name carries it). */
extern struct hpm_inline_anchor hpm_inline_v3;

#pragma GCC visibility pop

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define HPM_INLINE_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define HPM_INLINE_SANITIZED 1
#endif

/**
 * Not API: jump to label unless a == b, by a branch the compiler cannot turn
 * into a select, so that what follows and uses b does not wait for a. A free
 * computes its stack from the block's state byte, three dependent loads
 * away, and the next allocation's pop waits for the push: the push takes the
 * thread's hint instead (one load, at once), and the branch predictor checks
 * it against the computed stack. A 64-byte pair 6.73 -> 5.82 ns, fwd 106 ->
 * 118 Mpps (guides/design.rst).
 */
#if defined(__x86_64__)
#define HPM_INLINE_JNE(a, b, label) \
	__asm__ goto("cmp %0, %1\n\tjne %l[" #label "]" : : "r"(a), "r"(b) : "cc" : label)
#elif defined(__aarch64__)
#define HPM_INLINE_JNE(a, b, label) \
	__asm__ goto("cmp %0, %1\n\tb.ne %l[" #label "]" : : "r"(a), "r"(b) : "cc" : label)
#else
#define HPM_INLINE_JNE(a, b, label) \
	do {                        \
		if ((a) != (b))     \
			goto label; \
	} while (0)
#endif

#if defined(HPM_NO_INLINE) || defined(HPM_INLINE_SANITIZED)

/** hpm_malloc(), inline where a cache serves the request at once. */
static inline void *
hpm_malloc_inline(const char *type, size_t size, unsigned int align)
{
	return hpm_malloc(type, size, align);
}

/** hpm_free(), inline where the block goes back to this thread's cache. */
static inline void
hpm_free_inline(void *ptr)
{
	hpm_free(ptr);
}

#else

/** The stack of a class below HPM_INLINE_RUN0 (not API). */
static __rte_always_inline struct hpm_inline_stack *
hpm_inline_stack_of(struct hpm_lcore_cache *c, unsigned int cls)
{
	return (struct hpm_inline_stack *)((uintptr_t)c + HPM_INLINE_STACK0 +
		(uintptr_t)cls * HPM_INLINE_STACK_SIZE);
}

/**
 * Allocate as hpm_malloc() does: a block of the calling thread's cache
 * without a call when it has one of the request's class, else hpm_malloc().
 *
 * @param type
 *   Ignored, as by hpm_malloc().
 * @param size
 *   Bytes to allocate.
 * @param align
 *   0, or a power of two the block's address is a multiple of.
 * @return
 *   The block, or NULL with rte_errno set (hpm_malloc()'s errors).
 */
static __rte_always_inline void *
hpm_malloc_inline(const char *type, size_t size, unsigned int align)
{
	const struct hpm_cache_binding *t = &hpm_cache_tls;
	struct hpm_inline_stack *st;
	struct hpm_inline_obj *o;
	unsigned int cls;
	uint32_t len;

	if (unlikely(t->gen != hpm_inline_v3.gen || (align & (align - 1)) != 0))
		return hpm_malloc(type, size, align);
	if (likely(align <= 64 && size - 1 < 4095))
		cls = hpm_inline_v3.small_class[(size + 15) >> 4];
	else if (size == 4096 && align <= 4096)
		cls = HPM_INLINE_C4K;
	else if (size == 65536 && align <= 65536)
		cls = HPM_INLINE_C64K;
	else if (align <= 64 && size - HPM_INLINE_MID_MIN <= 32768 - HPM_INLINE_MID_MIN &&
		(size & 4095) != 0 && hpm_inline_v3.mid_class[(size + 63) >> 6] != 0xff)
		cls = hpm_inline_v3.mid_class[(size + 63) >> 6];
	else
		return hpm_malloc(type, size, align);
	st = hpm_inline_stack_of(t->cache, cls);
	len = st->len - 1;
	/* one compare: empty, or a drain asked (limit 0) */
	if (unlikely(len >= st->limit))
		return hpm_malloc(type, size, align);
	o = &st->objs[len];
	__atomic_store_n(&st->len, len, __ATOMIC_RELAXED);
	__atomic_store_n(o->state, st->held, __ATOMIC_RELAXED);
	st->hits++;
	return o->p;
}

/**
 * Free as hpm_free() does: onto the calling thread's cache without a call
 * when the block came from a cache of its socket and the stack has room,
 * else hpm_free() (NULL and bad pointers included).
 *
 * @param ptr
 *   A block of hpmalloc's, or NULL.
 */
static __rte_always_inline void
hpm_free_inline(void *ptr)
{
	const struct hpm_cache_binding *t = &hpm_cache_tls;
	const struct hpm_inline_owner *map =
		__atomic_load_n(&hpm_inline_v3.owner, __ATOMIC_ACQUIRE);
	const struct hpm_inline_unit *u =
		__atomic_load_n(&map->slot[((uintptr_t)ptr >> HPM_INLINE_UNIT_SHIFT) & map->mask],
			__ATOMIC_ACQUIRE);
	struct hpm_lcore_cache *c = t->cache;
	struct hpm_inline_stack *st;
	uint8_t *state;
	unsigned int s, cls;
	uintptr_t off;
	uint32_t len;

	if (unlikely(u == NULL || t->gen != hpm_inline_v3.gen ||
		    u->socket != ((const struct hpm_inline_cache *)c)->socket))
		goto call;
	off = (uintptr_t)((uint8_t *)ptr - u->va);
	if (unlikely((off & u->start_mask) != 0)) /* not a block start, or outside the unit */
		goto call;
	state = &u->state[off >> u->shift];
	s = __atomic_load_n(state, __ATOMIC_RELAXED);
	/* a block a cache handed out: odd, its class + 1 above; runs and the rest: a call */
	cls = (s >> 1) - 1;
	if (unlikely((s & 1) == 0 || cls >= HPM_INLINE_RUN0))
		goto call;
	st = hpm_inline_stack_of(c, cls);
	HPM_INLINE_JNE(st, t->free_hint, hint_miss);
	st = (struct hpm_inline_stack *)t->free_hint;
push:
	len = st->len;
	/* full, or a drain asked (limit 0) */
	if (unlikely(len >= st->limit))
		goto call;
	__atomic_store_n(state, HPM_INLINE_BLK_CACHED, __ATOMIC_RELAXED);
	/* two stores: a merged one would stall the next pop (lcore_cache.h) */
	st->objs[len].p = ptr;
	rte_compiler_barrier();
	st->objs[len].state = state;
	/* the length last: a process killed before it leaves no stale entry */
	rte_compiler_barrier();
	__atomic_store_n(&st->len, len + 1, __ATOMIC_RELAXED);
	return;
hint_miss:
	hpm_cache_tls.free_hint = st;
	goto push;
call:
	hpm_free(ptr);
}

#endif /* HPM_NO_INLINE || HPM_INLINE_SANITIZED */

#ifdef __cplusplus
}
#endif

#endif /* HPM_INLINE_H */
