/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The allocation API: the per-lcore cache fast paths first, then argument
 * checks, socket choice and routing on the locked path.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <string.h>

#include <numa.h>

#include <rte_errno.h>
#include <rte_lcore.h>

#include "block.h"
#include "hpm_malloc.h"
#include "large.h"
#include "lcore_cache.h"
#include "log.h"
#include "route.h"
#include "init.h"

/*
 * The API's hit paths: in the hot section, each at the start of a cache
 * line, so that code added or dropped elsewhere in the library does not
 * move them across fetch boundaries (two builds of the same hit path at
 * other offsets: malloc_perf's 4K/4K pair up to 5% apart).
 */
#define HPM_HIT_PATH __rte_hot __rte_aligned(RTE_CACHE_LINE_SIZE)

#define HPM_MIN_ALIGN 64u

#define ALLOC_F_ZERO HPM_ALLOC_F_ZERO
#define ALLOC_F_CONTIG HPM_ALLOC_F_CONTIG

static int
caller_socket(const struct hpm_state *st)
{
	static RTE_DEFINE_PER_LCORE(int, cpu_node) = -2;
	unsigned int s = rte_socket_id();

	if (st->cfg.fake_sockets == 0 && hpm_state_has_socket(st, (int)s))
		return s;
	/* not an EAL thread, or a fake topology: the socket of the CPU it runs on, once */
	if (RTE_PER_LCORE(cpu_node) == -2) {
		unsigned int lcore = rte_lcore_id();

		RTE_PER_LCORE(cpu_node) = hpm_state_socket_of_cpu(
			lcore < RTE_MAX_LCORE ? (int)rte_lcore_to_cpu_id(lcore) : sched_getcpu());
	}
	s = RTE_PER_LCORE(cpu_node);
	if (hpm_state_has_socket(st, (int)s))
		return s;
	return st->socket_ids[0];
}

/* Small requests go to the heap (HPM_CFG_F_SMALL_HEAP), not to size-class pages. */
static bool
hpm_small_heap(void)
{
	return (hpm_state->cfg.flags & HPM_CFG_F_SMALL_HEAP) != 0;
}

/*
 * A single granule, or a 64 KiB run at 64 KiB, carries its cache class in its
 * state byte, as if a cache had handed it out: it shares its page with runs,
 * whose role names no class, and a free on an lcore with a cache may keep it.
 */
static void
mark_single(void *p, unsigned int cls)
{
	/* a granule's start: its state byte is there */
	hpm_blk_state_set(hpm_unit_state(hpm_pagemap_lookup(&hpm_state->pagemap, p), p),
		hpm_cache_user_state(cls));
}

/* One block from an arena, by the route table. Lock held. */
static void *
alloc_locked(struct hpm_arena *a, size_t size, size_t align, bool contig, struct hpm_blockinfo *bi)
{
	enum hpm_route route = hpm_route(size, align, hpm_small_heap());
	void *p = NULL;

	/* outside LARGE a block lies in one unit: contiguous if units are */
	if (contig && !hpm_state->unit_iova_contig)
		route = HPM_ROUTE_LARGE;
	switch (route) {
	case HPM_ROUTE_HEAP:
		p = hpm_heap_alloc(&a->heap, size, align, bi);
		break;
	case HPM_ROUTE_G4K:
		p = hpm_gran_alloc(&a->gran, HPM_GRAN_4K, RTE_ALIGN_CEIL(size, HPM_KIB(4)) >> 12,
			RTE_MAX(align >> 12, (size_t)1), bi);
		if (p != NULL && bi->bytes == HPM_KIB(4))
			mark_single(p, HPM_CACHE_C4K);
		/* 64 KiB at 64 KiB: what the class of 64 KiB blocks holds (route.h) */
		else if (p != NULL && bi->bytes == HPM_KIB(64) && ((uintptr_t)p & 65535) == 0)
			mark_single(p, HPM_CACHE_C64K);
		break;
	case HPM_ROUTE_G64K:
		p = hpm_gran_alloc(&a->gran, HPM_GRAN_64K, size >> 16,
			RTE_MAX(align >> 16, (size_t)1), bi);
		break;
	case HPM_ROUTE_LARGE:
		p = hpm_large_alloc(&a->cs, RTE_ALIGN_CEIL(size, HPM_UNIT_SIZE) >> HPM_UNIT_SHIFT,
			RTE_MAX(align >> HPM_UNIT_SHIFT, (size_t)1), contig, bi);
		break;
	case HPM_ROUTE_SLAB:
		p = hpm_slab_alloc(&a->slab, hpm_slab_class(size, align), bi);
		break;
	}
	if (p != NULL) {
		a->alloc_bytes += bi->bytes;
		a->alloc_count++;
		bi->usable = route == HPM_ROUTE_HEAP ? bi->bytes - 16 : bi->bytes;
	}
	return p;
}

static void *
alloc_in(struct hpm_arena *a, size_t size, size_t align, bool contig, struct hpm_blockinfo *bi)
{
	void *p;

	if (!hpm_arena_lock(a))
		return NULL;
	p = alloc_locked(a, size, align, contig, bi);
	hpm_arena_unlock(a);
	return p;
}

/* n blocks from one arena under one lock round-trip: all, or none. */
static int
bulk_in(struct hpm_arena *a, void **objs, unsigned int n, size_t size, size_t align)
{
	struct hpm_blockinfo bi;
	unsigned int i;

	if (!hpm_arena_lock(a))
		return -ENOTRECOVERABLE;
	for (i = 0; i < n; i++) {
		objs[i] = alloc_locked(a, size, align, false, &bi);
		if (objs[i] == NULL)
			break;
		hpm_block_open(objs[i], bi.usable);
	}
	if (i < n)
		while (i > 0) {
			i--;
			hpm_block_free_locked(a, hpm_block_unit(objs[i]), objs[i]);
			objs[i] = NULL;
		}
	hpm_arena_unlock(a);
	return objs[0] != NULL ? 0 : -ENOMEM;
}

static void *
alloc_on_socket(size_t size, size_t align, int socket, bool contig, struct hpm_blockinfo *bi)
{
	struct hpm_state *st = hpm_state;
	unsigned int i;
	void *p;
	int first;

	/* without hugepages a socket is only a wish, as in EAL */
	if (st->no_huge)
		socket = SOCKET_ID_ANY;
	if (socket != SOCKET_ID_ANY) {
		if (!hpm_state_has_socket(st, socket)) {
			rte_errno = EINVAL;
			return NULL;
		}
		p = alloc_in(&st->arenas[socket], size, align, contig, bi);
		if (p == NULL && rte_errno != ENOTSUP && rte_errno != ENOTRECOVERABLE)
			rte_errno = ENOMEM;
		return p;
	}
	first = caller_socket(st);
	p = alloc_in(&st->arenas[first], size, align, contig, bi);
	for (i = 0; p == NULL && i < st->nsockets; i++)
		if (st->socket_ids[i] != first)
			p = alloc_in(&st->arenas[st->socket_ids[i]], size, align, contig, bi);
	if (p == NULL && rte_errno != ENOTSUP && rte_errno != ENOTRECOVERABLE)
		rte_errno = ENOMEM;
	return p;
}

/* The locked path: every check, every route, every socket. */
static __rte_noinline void *
alloc_slow(size_t size, unsigned int align, int socket, unsigned int flags)
{
	struct hpm_blockinfo bi;
	void *p;

	if (unlikely(size == 0 || (align & (align - 1)) != 0)) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (unlikely(size > HPM_SIZE_MAX)) {
		rte_errno = ENOMEM;
		return NULL;
	}
	if (unlikely(hpm_state_ready() != 0))
		return NULL;
	if (unlikely((flags & ALLOC_F_CONTIG) && !hpm_src->has_iova)) {
		rte_errno = ENOTSUP;
		return NULL;
	}
	p = alloc_on_socket(size, RTE_MAX(align, HPM_MIN_ALIGN), socket, flags & ALLOC_F_CONTIG,
		&bi);
	if (p == NULL)
		return NULL;
	hpm_block_open(p, bi.usable);
	if ((flags & ALLOC_F_ZERO) && bi.dirty)
		memset(p, 0, size);
	return p;
}

void *
hpm_raw_alloc(size_t size, unsigned int align, int socket, unsigned int flags)
{
	return alloc_slow(size, align, socket, flags);
}

/*
 * Allocations on the locked path between two tries of a thread that found
 * no cache: every thread slot taken, or its lcore id's cache another live
 * process's (a secondary's lcore the primary also runs). A try takes the
 * cache lock and asks whether the owner lives (kill(), /proc): 10 us; made
 * at every call, a secondary's lcore spent 11 us an allocation.
 */
#define SLOTLESS_RETRY 4096u
static __thread uint32_t slotless_calls;

/*
 * A thread without a cache tries again for one now and then (it stayed on
 * the locked path for good, the slots or the lcore's cache freed or not).
 * One that registers binds anew at once (lcore_cache.c's lcore callback).
 */
static struct hpm_lcore_cache *
cache_of_thread(void)
{
	struct hpm_lcore_cache *c = hpm_cache_get();

	if (c == NULL && hpm_state != NULL && !(hpm_state->cfg.flags & HPM_CFG_F_NO_CACHE) &&
		hpm_state->cfg.cache_max != 0 && ++slotless_calls % SLOTLESS_RETRY == 0) {
		hpm_cache_tls.gen = 0;
		c = hpm_cache_get();
	}
	return c;
}

/* Everything the fast path does not do: binding, refills, other sockets, no class. */
static __rte_noinline void *
alloc_miss(const char *type, size_t size, unsigned int align, int socket, unsigned int flags)
{
	struct hpm_lcore_cache *c;
	void *p;
	int cls;

	/* this process's first call sets the heap up; the cache binds after */
	if (unlikely(hpm_state == NULL))
		(void)hpm_state_ready();
	/* debug mode binds every thread to no cache: every call comes here */
	if (unlikely(hpm_debug_on))
		return hpm_debug->alloc(type, size, align, socket, flags);
	c = cache_of_thread();

	if (c != NULL && (align & (align - 1)) == 0 &&
		(socket == SOCKET_ID_ANY || socket == c->socket) &&
		(cls = hpm_cache_class(size, align)) >= 0 && hpm_cache_keeps((unsigned int)cls)) {
		p = hpm_cache_refill(c, cls);
		if (p != NULL) {
			hpm_block_open(p, hpm_cache_class_usable(cls));
			if (flags & ALLOC_F_ZERO)
				memset(p, 0, size);
			return p;
		}
	}
	return alloc_slow(size, align, socket, flags);
}

/*
 * The fast path: a block from the lcore's cache, no lock, no call; whatever
 * the cache cannot serve at once goes to alloc_miss().
 */
static __rte_always_inline void *
alloc_fast(const char *type, size_t size, unsigned int align, int socket, unsigned int flags)
{
	hpm_binding_ref *t = hpm_hit_binding();
	struct hpm_lcore_cache *c = t->cache;
	struct hpm_cache_stack *cc;
	struct hpm_cache_obj *o;
	uint32_t len;
	int cls;

	HPM_POISON_SYNC();
	if (unlikely(t->gen != hpm_hit.cache_gen || (align & (align - 1)) != 0 ||
		    (socket != SOCKET_ID_ANY && socket != t->socket)))
		return alloc_miss(type, size, align, socket, flags);
	cls = hpm_cache_class(size, align);
	if (unlikely(cls < 0))
		return alloc_miss(type, size, align, socket, flags);
	cc = hpm_cache_stack(c, cls);
	HPM_CACHE_LAUNDER(cc);
	/* one compare: empty, or a drain asked (limit 0); above the limit, the miss pops */
	len = cc->len - 1;
	if (unlikely(len >= hpm_cache_limit_hit(cc)))
		return alloc_miss(type, size, align, socket, flags);
	o = &hpm_cache_objs(cc)[len];
	hpm_cache_set_len(cc, len);
	hpm_blk_state_set(o->state, cc->held);
	hpm_cache_count(&cc->hits, 1);
	hpm_block_open(o->p, hpm_cache_class_usable(cls));
	if (flags & ALLOC_F_ZERO)
		memset(o->p, 0, size);
	return o->p;
}

HPM_HIT_PATH void *
hpm_malloc_socket(const char *type, size_t size, unsigned int align, int socket)
{
	return alloc_fast(type, size, align, socket, 0);
}

HPM_HIT_PATH void *
hpm_malloc(const char *type, size_t size, unsigned int align)
{
	return alloc_fast(type, size, align, SOCKET_ID_ANY, 0);
}

HPM_HIT_PATH void *
hpm_zmalloc_socket(const char *type, size_t size, unsigned int align, int socket)
{
	return alloc_fast(type, size, align, socket, ALLOC_F_ZERO);
}

HPM_HIT_PATH void *
hpm_zmalloc(const char *type, size_t size, unsigned int align)
{
	return alloc_fast(type, size, align, SOCKET_ID_ANY, ALLOC_F_ZERO);
}

void *
hpm_calloc_socket(const char *type, size_t num, size_t size, unsigned int align, int socket)
{
	size_t total;

	if (__builtin_mul_overflow(num, size, &total)) {
		rte_errno = EINVAL;
		return NULL;
	}
	return alloc_fast(type, total, align, socket, ALLOC_F_ZERO);
}

void *
hpm_calloc(const char *type, size_t num, size_t size, unsigned int align)
{
	return hpm_calloc_socket(type, num, size, align, SOCKET_ID_ANY);
}

void *
hpm_malloc_contig(const char *type, size_t size, unsigned int align, int socket)
{
	if (unlikely(hpm_debug_on))
		return hpm_debug->alloc(type, size, align, socket, ALLOC_F_CONTIG);
	return alloc_slow(size, align, socket, ALLOC_F_CONTIG);
}

/* The locked path for a block of unit u (the page map's answer, or NULL). */
static void
free_locked(void *ptr, struct hpm_unit *u)
{
	struct hpm_arena *a;
	int rc;

	if (unlikely(u == NULL)) {
		hpm_bad_pointer(ptr, "hpm_free", "not hpmalloc memory");
		return;
	}
	a = &hpm_state->arenas[u->socket];
	if (!hpm_arena_lock(a))
		return; /* the block stays with the torn heap */
	rc = hpm_block_free_locked(a, u, ptr);
	hpm_arena_unlock(a);
	if (unlikely(rc != 0))
		hpm_bad_pointer(ptr, "hpm_free",
			rc == -EALREADY ? "double free (the block is in a cache)"
					: "not a live block (interior pointer or double free)");
}

/* The locked path: whatever is wrong with ptr, the arena's walk finds it. */
static __rte_noinline void
free_slow(void *ptr)
{
	free_locked(ptr, hpm_block_unit(ptr));
}

/*
 * Everything the free fast path does not do: binding, full stacks, other
 * sockets, a unit the owner table does not know (yet, or any more).
 */
static __rte_noinline void
free_miss(void *ptr)
{
	struct hpm_unit *u;
	struct hpm_lcore_cache *c;
	uint8_t *state;
	int cls;

	/* hpm_free(NULL) comes here: the owner table's entry 0 is always empty */
	if (ptr == NULL)
		return;
	u = hpm_block_unit(ptr);
	if (unlikely(hpm_debug_on)) {
		if (!hpm_debug->free(ptr))
			hpm_bad_pointer(ptr, "hpm_free", "not a live block (debug mode)");
		return;
	}
	c = u != NULL ? cache_of_thread() : NULL;

	/* the class a cache wrote (granule runs have no other), else the block's */
	if (c != NULL && u->socket == c->socket &&
		(cls = hpm_cache_class_free(u, ptr, &state)) >= 0 &&
		hpm_cache_keeps((unsigned int)cls)) {
		hpm_blk_state_set(state, HPM_BLK_CACHED);
		hpm_block_close(u, ptr, hpm_cache_class_usable(cls));
		hpm_cache_flush_push(c, cls, ptr, state);
		return;
	}
	free_locked(ptr, u);
}

/*
 * The fast path: the owner table's unit (one load), the block's state byte,
 * a push on the lcore's stack; no lock, no call.
 */
static __rte_always_inline void
free_fast(void *ptr)
{
	hpm_binding_ref *t = hpm_hit_binding();
	struct hpm_unit *u = hpm_owner_lookup(ptr);
	struct hpm_lcore_cache *c = t->cache;
	struct hpm_cache_stack *cc;
	uint8_t *state;
	uint32_t len;
	int cls;

	HPM_POISON_SYNC();
	/* never into a foreign socket's cache */
	if (unlikely(u == NULL || t->gen != hpm_hit.cache_gen || u->socket != t->socket))
		return free_miss(ptr);
	/*
	 * A block the caller holds; the others, and what is wrong, in free_slow(). The class
	 * from the state byte a cache wrote when it handed the block out; a block
	 * the locked path handed out has none there: from its header, frame or role.
	 */
	cls = hpm_cache_class_free(u, ptr, &state);
	if (unlikely(cls < 0))
		return free_slow(ptr);
	cc = hpm_cache_stack_hinted(t, hpm_cache_stack(c, cls));
	HPM_CACHE_LAUNDER(cc);
	len = cc->len;
	/* full, or a drain asked (limit 0) */
	if (unlikely(len >= hpm_cache_limit_hit(cc)))
		return free_miss(ptr);
	hpm_blk_state_set(state, HPM_BLK_CACHED);
	hpm_block_close(u, ptr, hpm_cache_class_usable(cls));
	/* the entry before the length: a process killed between them leaves no stale entry */
	hpm_cache_obj_set(&hpm_cache_objs(cc)[len], ptr, state);
	rte_compiler_barrier();
	hpm_cache_set_len(cc, len + 1);
}

void
hpm_raw_free(void *p)
{
	free_slow(p);
}

HPM_HIT_PATH void
hpm_free(void *ptr)
{
	free_fast(ptr); /* NULL included: free_miss() */
}

/* Route a live block belongs to, and the alignment every block there has. */
static enum hpm_route
unit_route(const struct hpm_unit *u, size_t *natural_align)
{
	switch (u->role) {
	case HPM_UNIT_G4K:
		*natural_align = HPM_KIB(4);
		return HPM_ROUTE_G4K;
	case HPM_UNIT_G64K:
		*natural_align = HPM_KIB(64);
		return HPM_ROUTE_G64K;
	case HPM_UNIT_LARGE:
		*natural_align = HPM_UNIT_SIZE;
		return HPM_ROUTE_LARGE;
	case HPM_UNIT_SLAB:
		*natural_align = HPM_MIN_ALIGN;
		return HPM_ROUTE_SLAB;
	default:
		*natural_align = HPM_MIN_ALIGN;
		return HPM_ROUTE_HEAP;
	}
}

/*
 * In place when the block's own route would serve the new size; a run of
 * granules shrinks in place only to half its bytes or more (as mimalloc's
 * realloc): a small block left where a long run was placed would pin the
 * run's page (test_soak without caches: pages of runs 1.28x the runs live,
 * 1.15x in a model that moves such blocks). Arena lock held.
 */
static int
resize_in_place(struct hpm_arena *a, struct hpm_unit *u, void *p, size_t size, size_t align,
	size_t old_bytes, struct hpm_blockinfo *bi)
{
	size_t natural;
	enum hpm_route route = unit_route(u, &natural);

	if (hpm_route(size, RTE_MAX(align, natural), hpm_small_heap()) != route)
		return -1;
	if ((route == HPM_ROUTE_G4K || route == HPM_ROUTE_G64K) && size < old_bytes / 2)
		return -1;
	switch (route) {
	case HPM_ROUTE_HEAP:
		return hpm_heap_resize(&a->heap, u, p, size, bi);
	case HPM_ROUTE_G4K:
		return hpm_gran_resize(&a->gran, u, p, RTE_ALIGN_CEIL(size, HPM_KIB(4)) >> 12, bi);
	case HPM_ROUTE_G64K:
		return hpm_gran_resize(&a->gran, u, p, size >> 16, bi);
	case HPM_ROUTE_LARGE:
		return hpm_large_resize(&a->cs, u, p,
			RTE_ALIGN_CEIL(size, HPM_UNIT_SIZE) >> HPM_UNIT_SHIFT, bi);
	case HPM_ROUTE_SLAB:
		/* in place while the block's class is the one the new request takes */
		if (hpm_slab_block_size(u, p) == 0 ||
			hpm_slab_class(size, align) != (int)hpm_slab_class_at(u, p))
			return -1;
		bi->bytes = hpm_slab_class_bytes[hpm_slab_class_at(u, p)];
		bi->dirty = false;
		return 0;
	}
	return -1;
}

void *
hpm_realloc_socket(void *ptr, size_t size, unsigned int align, int socket)
{
	size_t old_bytes, old_usable, eff_align;
	struct hpm_blockinfo bi;
	struct hpm_arena *a;
	struct hpm_unit *u;
	void *p;

	if (ptr == NULL)
		return hpm_malloc_socket(NULL, size, align, socket);
	HPM_POISON_SYNC();
	if (size == 0 || (align & (align - 1)) != 0) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (size > HPM_SIZE_MAX) {
		rte_errno = ENOMEM;
		return NULL;
	}
	if (unlikely(hpm_debug_on))
		return hpm_debug->realloc(ptr, size, align, socket);
	u = hpm_block_unit(ptr);
	if (u == NULL) {
		hpm_bad_pointer(ptr, "hpm_realloc", "not hpmalloc memory");
		rte_errno = EINVAL;
		return NULL;
	}
	eff_align = RTE_MAX(align, HPM_MIN_ALIGN);
	a = &hpm_state->arenas[u->socket];
	if (!hpm_arena_lock(a))
		return NULL;
	old_bytes = hpm_block_bytes(u, ptr);
	old_usable = hpm_block_usable(u, ptr);
	if (old_bytes == 0 || hpm_block_in_cache(u, ptr)) {
		hpm_arena_unlock(a);
		hpm_bad_pointer(ptr, "hpm_realloc", "not a live block");
		rte_errno = EINVAL;
		return NULL;
	}
	if ((socket == SOCKET_ID_ANY || socket == u->socket || hpm_state->no_huge) &&
		((uintptr_t)ptr & (eff_align - 1)) == 0) {
		/* closed while it changes: headers may move inside it */
		hpm_block_close(u, ptr, old_usable);
		if (resize_in_place(a, u, ptr, size, eff_align, old_bytes, &bi) == 0) {
			uint8_t *st = hpm_unit_state(u, ptr);

			/* its size changed: the class a cache wrote is not its class now */
			if (st != NULL && hpm_blk_kind(*st) == HPM_BLK_USER)
				*st = HPM_BLK_USER;
			a->alloc_bytes += bi.bytes - old_bytes;
			hpm_arena_unlock(a);
			hpm_block_open(ptr, hpm_malloc_usable_size(ptr));
			return ptr;
		}
		hpm_block_open(ptr, old_usable);
	}
	hpm_arena_unlock(a);
	p = alloc_fast(NULL, size, align, socket, 0);
	if (p == NULL)
		return NULL;
	/* what the block held beyond its size is copied too: open it to checkers */
	hpm_block_open(ptr, old_usable);
	memcpy(p, ptr, RTE_MIN(old_usable, size));
	hpm_free(ptr);
	return p;
}

void *
hpm_realloc(void *ptr, size_t size, unsigned int align)
{
	return hpm_realloc_socket(ptr, size, align, SOCKET_ID_ANY);
}

/* Bulk without the cache: one arena, one lock round-trip, all or nothing. */
static __rte_noinline int
bulk_slow(void **objs, unsigned int n, size_t size, unsigned int align, int socket)
{
	struct hpm_state *st;
	size_t eff_align = RTE_MAX(align, HPM_MIN_ALIGN);
	unsigned int i;
	int first, rc;

	/* this process's first call sets the heap up, then starts again (the cache binds) */
	if (hpm_state == NULL && hpm_state_ready() == 0)
		return hpm_malloc_bulk(objs, n, size, align, socket);
	if (size == 0 || (align & (align - 1)) != 0) {
		rte_errno = EINVAL;
		return -EINVAL;
	}
	if (size > HPM_SIZE_MAX) {
		rte_errno = ENOMEM;
		return -ENOMEM;
	}
	if (hpm_state_ready() != 0)
		return -rte_errno;
	st = hpm_state;
	if (st->no_huge)
		socket = SOCKET_ID_ANY;
	if (socket != SOCKET_ID_ANY) {
		if (!hpm_state_has_socket(st, socket)) {
			rte_errno = EINVAL;
			return -EINVAL;
		}
		rc = bulk_in(&st->arenas[socket], objs, n, size, eff_align);
		if (rc != 0)
			rte_errno = -rc;
		return rc;
	}
	first = caller_socket(st);
	rc = bulk_in(&st->arenas[first], objs, n, size, eff_align);
	for (i = 0; rc != 0 && i < st->nsockets; i++)
		if (st->socket_ids[i] != first)
			rc = bulk_in(&st->arenas[st->socket_ids[i]], objs, n, size, eff_align);
	if (rc != 0)
		rte_errno = -rc;
	return rc;
}

HPM_HIT_PATH int
hpm_malloc_bulk(void **objs, unsigned int n, size_t size, unsigned int align, int socket)
{
	struct hpm_lcore_cache *c = hpm_cache_get();
	unsigned int i;
	int cls;

	if (n == 0)
		return 0;
	if (unlikely(hpm_debug_on)) {
		for (i = 0; i < n; i++)
			if ((objs[i] = hpm_debug->alloc(NULL, size, align, socket, 0)) == NULL) {
				int rc = -rte_errno;

				while (i > 0)
					hpm_debug->free(objs[--i]);
				return rc;
			}
		return 0;
	}
	HPM_POISON_SYNC();
	if (c != NULL && (align & (align - 1)) == 0 &&
		(socket == SOCKET_ID_ANY || socket == c->socket) &&
		(cls = hpm_cache_class(size, align)) >= 0 && hpm_cache_keeps((unsigned int)cls)) {
		struct hpm_cache_stack *cc = hpm_cache_stack(c, cls);

		/* one refill of the whole shortfall: one lock round-trip */
		if (cc->len < n)
			hpm_cache_fill(c, cls, n - cc->len);
		if (cc->len >= n) {
			const struct hpm_cache_obj *top = &hpm_cache_objs(cc)[cc->len - n];
			/* in a local: the state bytes written below could alias it */
			const uint8_t held = cc->held;

			hpm_cache_set_len(cc, cc->len - n);
#pragma GCC unroll 4
			for (i = 0; i < n; i++) {
				objs[i] = top[i].p;
				hpm_blk_state_set(top[i].state, held);
				hpm_block_open(objs[i], hpm_cache_class_usable(cls));
			}
			hpm_cache_count(&cc->hits, n);
			return 0;
		}
		/* more than a cache holds, or memory is short: what it has goes back first */
		hpm_cache_flush_all(c);
	}
	return bulk_slow(objs, n, size, align, socket);
}

/* What free_run() checks of each block of a run: loop invariants, in locals. */
struct run_check {
	uint8_t *va;
	uint8_t *states;
	/* outside the unit (below it: wrapped) or not a start */
	size_t mask;
	unsigned int shift;
	/* the state byte of a block the cache handed out */
	uint8_t held;
	/* the run class (of the same alignment too), or -1 for other classes */
	int run;
	int cls;
	const struct hpm_unit *u;
	size_t usable;
};

/*
 * Push p into slot if it is a block of the run's unit and class the cache
 * handed out: its state byte is read, then written, before the next block's
 * is read, so that a block twice in one call is caught the second time.
 */
static __rte_always_inline bool
run_push(const struct run_check *rc, void *p, struct hpm_cache_obj *slot)
{
	size_t off = (uint8_t *)p - rc->va;
	uint8_t *state;

	if ((off & rc->mask) != 0)
		return false;
	state = &rc->states[off >> rc->shift];
	if (hpm_blk_state_get(state) != rc->held ||
		(rc->run >= 0 && hpm_cache_run_class_at(rc->run, p) != rc->cls))
		return false;
	hpm_blk_state_set(state, HPM_BLK_CACHED);
	hpm_block_close(rc->u, p, rc->usable);
	hpm_cache_obj_set(slot, p, state);
	return true;
}

/* Push room blocks of objs into top, four at a time; the number pushed. */
static __rte_always_inline unsigned int
run_push_all(const struct run_check *rc, void *const *objs, struct hpm_cache_obj *top,
	unsigned int room)
{
	void *const *end = objs + room, *const *o = objs;

	/*
	 * By fours, each at a constant offset from a pointer that moves once:
	 * a burst of 32 x 64 B costs 833 instructions, not 904 (callgrind).
	 */
	for (; end - o >= 4; o += 4, top += 4) {
		if (!run_push(rc, o[0], &top[0]))
			return (unsigned int)(o - objs);
		if (!run_push(rc, o[1], &top[1]))
			return (unsigned int)(o - objs) + 1;
		if (!run_push(rc, o[2], &top[2]))
			return (unsigned int)(o - objs) + 2;
		if (!run_push(rc, o[3], &top[3]))
			return (unsigned int)(o - objs) + 3;
	}
	for (; o < end; o++, top++)
		if (!run_push(rc, o[0], &top[0]))
			break;
	return (unsigned int)(o - objs);
}

/*
 * Push a run of blocks that share objs[0]'s unit and class onto the cache,
 * checking each one's state byte (a cache handed each out: the byte holds
 * its class); the number pushed, 0 when objs[0] itself cannot go that way.
 */
static __rte_noinline HPM_HIT_PATH unsigned int
free_run(hpm_binding_ref *t, void *const *objs, unsigned int n)
{
	struct hpm_lcore_cache *c = t->cache;
	struct hpm_unit *u = hpm_owner_lookup(objs[0]);
	struct hpm_cache_stack *cc;
	struct run_check rc;
	unsigned int room, pushed;
	uint8_t *state;
	uint32_t limit;
	int cls;

	if (u == NULL || u->socket != t->socket ||
		(cls = hpm_cache_class_fast(u, objs[0], &state)) < 0)
		return 0;
	cc = hpm_cache_stack_hinted(t, hpm_cache_stack(c, cls));
	limit = hpm_cache_limit(cc); /* 0 while a drain is asked */
	if (cc->len >= limit)
		return 0;
	room = RTE_MIN(n, limit - cc->len);
	/* in locals: the state bytes written could alias the unit for the compiler */
	rc.va = u->va;
	rc.states = u->state;
	rc.mask = u->start_mask;
	rc.shift = u->shift;
	rc.held = cc->held;
	rc.run = cls >= HPM_CACHE_RUN0 ? (int)(rc.held >> 1) - 1 : -1;
	rc.cls = cls;
	rc.u = u;
	rc.usable = hpm_cache_class_usable((unsigned int)cls);
	/*
	 * The same call on both sides: each copy is inlined knowing whether the
	 * run check is on (833 instructions a burst of 32 x 64 B; one copy: 897).
	 */
	pushed = rc.run >= 0 ? run_push_all(&rc, objs, &hpm_cache_objs(cc)[cc->len], room)
			     : run_push_all(&rc, objs, &hpm_cache_objs(cc)[cc->len], room);
	hpm_cache_set_len(cc, cc->len + pushed);
	return pushed;
}

HPM_HIT_PATH void
hpm_free_bulk(void *const *objs, unsigned int n)
{
	hpm_binding_ref *t = hpm_hit_binding();
	unsigned int i = 0, k;

	if (unlikely(hpm_debug_on)) {
		for (i = 0; i < n; i++)
			hpm_free(objs[i]);
		return;
	}
	while (i < n) {
		if (objs[i] == NULL) {
			i++;
			continue;
		}
		k = t->gen == hpm_hit.cache_gen && t->cache != &hpm_cache_none
			? free_run(t, objs + i, n - i)
			: 0;
		if (k == 0) {
			free_fast(objs[i]);
			k = 1;
		}
		i += k;
	}
}

void
hpm_cache_flush(void)
{
	struct hpm_lcore_cache *c = hpm_state_find() == 0 ? hpm_cache_get() : NULL;

	if (c != NULL)
		hpm_cache_flush_all(c);
}

int
hpm_cache_flush_lcore(unsigned int lcore_id)
{
	struct hpm_lcore_cache *c;

	if (lcore_id >= HPM_CACHE_SLOTS)
		return -EINVAL;
	if (hpm_state_find() != 0)
		return 0;
	c = __atomic_load_n(&hpm_state->caches[lcore_id], __ATOMIC_ACQUIRE);
	if (c != NULL)
		hpm_cache_flush_all(c);
	return 0;
}

/* What a pointer is: API functions, not observers (stats.c keeps statistics). */

/* Usable size of a live block, 0 otherwise (also for a block freed into a cache). */
static size_t
live_usable(const void *ptr)
{
	struct hpm_unit *u = ptr != NULL ? hpm_block_unit(ptr) : NULL;
	struct hpm_arena *a;
	size_t size;

	if (u == NULL)
		return 0;
	if (hpm_debug_on)
		return hpm_debug->usable(ptr);
	a = &hpm_state->arenas[u->socket];
	if (!hpm_arena_lock(a))
		return 0;
	size = hpm_block_usable(u, ptr);
	if (size != 0 && hpm_block_in_cache(u, ptr))
		size = 0;
	hpm_unlock(&a->lock);
	return size;
}

int
hpm_malloc_owns(const void *ptr)
{
	return ptr != NULL && hpm_block_unit(ptr) != NULL;
}

size_t
hpm_malloc_usable_size(const void *ptr)
{
	return live_usable(ptr);
}

int
hpm_malloc_validate(const void *ptr, size_t *size)
{
	size_t usable = live_usable(ptr);

	if (usable == 0)
		return -1;
	if (size != NULL)
		*size = usable;
	return 0;
}

rte_iova_t
hpm_malloc_virt2iova(const void *addr)
{
	const struct hpm_unit *u = addr != NULL ? hpm_block_unit(addr) : NULL;

	if (u == NULL || u->role == HPM_UNIT_FREE || !hpm_src->has_iova)
		return RTE_BAD_IOVA;
	if (hpm_state->unit_iova_contig && u->iova != RTE_BAD_IOVA)
		return u->iova + (rte_iova_t)((const uint8_t *)addr - u->va);
	return hpm_src->iova(&u->chunk->region, addr);
}
