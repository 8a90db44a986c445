/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The rte_malloc family, routed: to hpmalloc when the shim is on, else (and
 * for external heaps and blocks hpmalloc does not own) to EAL's functions.
 *
 * While a call the shim passed on runs, the thread is marked (nested): the
 * rte_malloc calls made meanwhile come from EAL (rte_zmalloc_socket() calls
 * rte_malloc_socket(), rte_memzone_free() calls rte_free(), through the PLT,
 * also when hpmalloc's EAL source reserves or frees a chunk) and go straight
 * to EAL, uncounted.
 */

#include <errno.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_memory.h>
#include <rte_memzone.h>

#include "hpm_inline.h"
#include "hpm_malloc.h"
#include "counters.h"
#include "real.h"
#include "shim.h"

/*
 * hpmalloc holds the memory p points into (its page map, no lock): then it is
 * hpmalloc's to free, and to report if it is no live block's start. A unit of
 * hpmalloc's that is free counts too: EAL must never take hpmalloc's memory
 * for one of its blocks.
 */
static __rte_always_inline bool
hpm_owns(const void *p)
{
	return hpm_malloc_owns(p);
}

/*
 * Sizes as EAL has them: rounded up to a cache line (malloc_heap_alloc() does
 * so), so that the usable size rte_malloc_validate() reports of the shim's
 * blocks is a multiple of one, as EAL's (but with HPM_CFG_F_SMALL_HEAP).
 */
static __rte_always_inline size_t
eal_size(size_t size)
{
	return likely(size <= SIZE_MAX - RTE_CACHE_LINE_SIZE) ? RTE_CACHE_LINE_ROUNDUP(size) : size;
}

/* The socket of an external heap (rte_malloc_heap_create()): EAL's. */
static __rte_always_inline bool
socket_external(int socket)
{
	return socket >= RTE_MAX_NUMA_NODES && rte_malloc_heap_socket_is_external(socket) == 1;
}

/* A block in external memory (rte_malloc_heap_memory_add()). */
static bool
in_external_memory(const void *p)
{
	const struct rte_memseg_list *msl = rte_mem_virt2memseg_list(p);

	return msl != NULL && msl->external;
}

/*
 * The call is hpmalloc's to serve: routing on, and not nested. Otherwise
 * counts why it goes to EAL (nested calls are not counted).
 */
static __rte_always_inline bool
routed(struct hpm_rte_tls *t, enum hpm_rte_op op)
{
	int mode;

	if (unlikely(t->nested != 0))
		return false;
	mode = hpm_rte_mode_get();
	if (likely(mode == HPM_RTE_ON))
		return true;
	hpm_rte_count_eal(t, op, mode == HPM_RTE_OFF ? HPM_RTE_C_OFF : HPM_RTE_C_EARLY);
	return false;
}

#define NESTED(t, call)        \
	do {                   \
		(t)->nested++; \
		call;          \
		(t)->nested--; \
	} while (0)

enum alloc_kind {
	ALLOC_MALLOC,
	ALLOC_ZMALLOC,
	ALLOC_CALLOC,
};

static void *
eal_alloc(struct hpm_rte_tls *t, enum alloc_kind k, const char *type, size_t num, size_t size,
	unsigned int align, int socket)
{
	const struct hpm_rte_real *r = hpm_rte_eal();
	void *p;

	if (k == ALLOC_MALLOC)
		NESTED(t, p = r->malloc_socket(type, size, align, socket));
	else if (k == ALLOC_ZMALLOC)
		NESTED(t, p = r->zmalloc_socket(type, size, align, socket));
	else
		NESTED(t, p = r->calloc_socket(type, num, size, align, socket));
	return p;
}

static void *
eal_realloc(struct hpm_rte_tls *t, void *ptr, size_t size, unsigned int align, int socket)
{
	void *p;

	NESTED(t, p = hpm_rte_eal()->realloc_socket(ptr, size, align, socket));
	return p;
}

static void
eal_free(struct hpm_rte_tls *t, void *ptr)
{
	NESTED(t, hpm_rte_eal()->free(ptr));
}

static int
eal_validate(struct hpm_rte_tls *t, const void *ptr, size_t *size)
{
	int rc;

	NESTED(t, rc = hpm_rte_eal()->validate(ptr, size));
	return rc;
}

static __rte_always_inline void *
route_alloc(enum alloc_kind k, const char *type, size_t num, size_t size, unsigned int align,
	int socket)
{
	struct hpm_rte_tls *t = &hpm_rte_tls;
	void *p;

	if (likely(routed(t, HPM_RTE_OP_ALLOC))) {
		/* SOCKET_ID_ANY, nodes and bad ids: hpmalloc answers */
		if (likely(socket < RTE_MAX_NUMA_NODES) || !socket_external(socket)) {
			hpm_rte_count_hpm(t, HPM_RTE_OP_ALLOC);
			/* unlike EAL's, an overflowing num * size fails */
			if (k == ALLOC_CALLOC && __builtin_mul_overflow(num, size, &size)) {
				rte_errno = EINVAL;
				return NULL;
			}
			size = eal_size(size);
			t->nested++;
			/* rte_malloc() of any socket: the cache hit without a call (hpm_inline.h) */
			if (k == ALLOC_MALLOC && socket == SOCKET_ID_ANY)
				p = hpm_malloc_inline(type, size, align);
			else if (k == ALLOC_MALLOC)
				p = hpm_malloc_socket(type, size, align, socket);
			else
				p = hpm_zmalloc_socket(type, size, align, socket);
			t->nested--;
			return p;
		}
		hpm_rte_count_eal(t, HPM_RTE_OP_ALLOC, HPM_RTE_C_EXTERNAL);
	}
	return eal_alloc(t, k, type, num, size, align, socket);
}

HPM_RTE_EXPORT void *
HPM_RTE_FN(rte_malloc_socket)(const char *type, size_t size, unsigned int align, int socket)
{
	return route_alloc(ALLOC_MALLOC, type, 1, size, align, socket);
}

HPM_RTE_EXPORT void *
HPM_RTE_FN(rte_malloc)(const char *type, size_t size, unsigned int align)
{
	return route_alloc(ALLOC_MALLOC, type, 1, size, align, SOCKET_ID_ANY);
}

HPM_RTE_EXPORT void *
HPM_RTE_FN(rte_zmalloc_socket)(const char *type, size_t size, unsigned int align, int socket)
{
	return route_alloc(ALLOC_ZMALLOC, type, 1, size, align, socket);
}

HPM_RTE_EXPORT void *
HPM_RTE_FN(rte_zmalloc)(const char *type, size_t size, unsigned int align)
{
	return route_alloc(ALLOC_ZMALLOC, type, 1, size, align, SOCKET_ID_ANY);
}

HPM_RTE_EXPORT void *
HPM_RTE_FN(rte_calloc_socket)(const char *type, size_t num, size_t size, unsigned int align,
	int socket)
{
	return route_alloc(ALLOC_CALLOC, type, num, size, align, socket);
}

HPM_RTE_EXPORT void *
HPM_RTE_FN(rte_calloc)(const char *type, size_t num, size_t size, unsigned int align)
{
	return route_alloc(ALLOC_CALLOC, type, num, size, align, SOCKET_ID_ANY);
}

HPM_RTE_EXPORT void
HPM_RTE_FN(rte_free)(void *ptr)
{
	struct hpm_rte_tls *t = &hpm_rte_tls;

	if (likely(routed(t, HPM_RTE_OP_FREE))) {
		if (unlikely(ptr == NULL))
			return;
		if (likely(hpm_owns(ptr))) {
			hpm_rte_count_hpm(t, HPM_RTE_OP_FREE);
			NESTED(t, hpm_free_inline(ptr));
			return;
		}
		hpm_rte_count_eal(t, HPM_RTE_OP_FREE, HPM_RTE_C_FOREIGN);
	}
	eal_free(t, ptr);
}

#ifdef HPM_RTE_HAVE_FREE_SENSITIVE
/*
 * DPDK 25.07 and later: a free that zeroes the block before anyone can have
 * it again (keys). hpmalloc's block is zeroed here, all of its usable size,
 * then freed; EAL's goes to EAL's.
 */
HPM_RTE_EXPORT void
HPM_RTE_FN(rte_free_sensitive)(void *ptr)
{
	struct hpm_rte_tls *t = &hpm_rte_tls;

	if (likely(routed(t, HPM_RTE_OP_FREE))) {
		if (unlikely(ptr == NULL))
			return;
		if (likely(hpm_owns(ptr))) {
			size_t n;

			hpm_rte_count_hpm(t, HPM_RTE_OP_FREE);
			/* 0 for a pointer that is no live block: hpm_free() reports it */
			NESTED(t, n = hpm_malloc_usable_size(ptr));
			explicit_bzero(ptr, n);
			NESTED(t, hpm_free(ptr));
			return;
		}
		hpm_rte_count_eal(t, HPM_RTE_OP_FREE, HPM_RTE_C_FOREIGN);
	}
	NESTED(t, hpm_rte_eal()->free_sensitive(ptr));
}
#endif

/* An EAL block (not external) into hpmalloc: EAL's size, a copy, EAL's free. */
static void *
move_into_hpm(struct hpm_rte_tls *t, void *ptr, size_t size, unsigned int align, int socket)
{
	size_t old;
	void *p;

	if (eal_validate(t, ptr, &old) != 0) {
		/* not a block: EAL says so, as it always did */
		hpm_rte_count_eal(t, HPM_RTE_OP_REALLOC, HPM_RTE_C_FOREIGN);
		return eal_realloc(t, ptr, size, align, socket);
	}
	hpm_rte_count_hpm(t, HPM_RTE_OP_REALLOC);
	NESTED(t, p = hpm_malloc_socket(NULL, eal_size(size), align, socket));
	if (p == NULL)
		return NULL;
	memcpy(p, ptr, RTE_MIN(old, size));
	eal_free(t, ptr);
	hpm_rte_count(t, HPM_RTE_C_MOVED);
	return p;
}

/* An hpmalloc block onto an external heap's socket. */
static void *
move_into_eal(struct hpm_rte_tls *t, void *ptr, size_t size, unsigned int align, int socket)
{
	size_t old;
	void *p;

	hpm_rte_count_eal(t, HPM_RTE_OP_REALLOC, HPM_RTE_C_EXTERNAL);
	NESTED(t, old = hpm_malloc_usable_size(ptr));
	if (old == 0) {
		/* not a live block: hpmalloc reports it */
		NESTED(t, p = hpm_realloc_socket(ptr, size, align, socket));
		return p;
	}
	p = eal_alloc(t, ALLOC_MALLOC, NULL, 1, size, align, socket);
	if (p == NULL)
		return NULL;
	memcpy(p, ptr, RTE_MIN(old, size));
	NESTED(t, hpm_free(ptr));
	return p;
}

HPM_RTE_EXPORT void *
HPM_RTE_FN(rte_realloc_socket)(void *ptr, size_t size, unsigned int align, int socket)
{
	struct hpm_rte_tls *t = &hpm_rte_tls;
	bool external;
	void *p;

	if (unlikely(!routed(t, HPM_RTE_OP_REALLOC)))
		return eal_realloc(t, ptr, size, align, socket);
	/* EAL rounds a block's new alignment up to a cache line (48 works: 64) */
	if (ptr != NULL)
		align = RTE_CACHE_LINE_ROUNDUP(align);
	external = unlikely(socket >= RTE_MAX_NUMA_NODES) && socket_external(socket);
	if (ptr == NULL || hpm_owns(ptr)) {
		if (likely(!external)) {
			hpm_rte_count_hpm(t, HPM_RTE_OP_REALLOC);
			NESTED(t, p = hpm_realloc_socket(ptr, eal_size(size), align, socket));
			return p;
		}
		if (ptr != NULL)
			return move_into_eal(t, ptr, size, align, socket);
		hpm_rte_count_eal(t, HPM_RTE_OP_REALLOC, HPM_RTE_C_EXTERNAL);
		return eal_realloc(t, ptr, size, align, socket);
	}
	/* EAL's block: external memory stays with EAL, the rest moves into hpmalloc */
	if (external || in_external_memory(ptr)) {
		hpm_rte_count_eal(t, HPM_RTE_OP_REALLOC, HPM_RTE_C_EXTERNAL);
		return eal_realloc(t, ptr, size, align, socket);
	}
	return move_into_hpm(t, ptr, size, align, socket);
}

HPM_RTE_EXPORT void *
HPM_RTE_FN(rte_realloc)(void *ptr, size_t size, unsigned int align)
{
	return HPM_RTE_FN(rte_realloc_socket)(ptr, size, align, SOCKET_ID_ANY);
}

HPM_RTE_EXPORT int
HPM_RTE_FN(rte_malloc_validate)(const void *ptr, size_t *size)
{
	struct hpm_rte_tls *t = &hpm_rte_tls;
	size_t usable;
	int rc;

	if (likely(routed(t, HPM_RTE_OP_OTHER))) {
		if (hpm_owns(ptr)) {
			hpm_rte_count_hpm(t, HPM_RTE_OP_OTHER);
			NESTED(t, rc = hpm_malloc_validate(ptr, &usable));
			/* usable: rounded down to a cache line, a block hpm_malloc() made in
			 * debug mode (its usable size is the size asked for) came out short */
			if (rc == 0 && size != NULL)
				*size = usable;
			return rc;
		}
		hpm_rte_count_eal(t, HPM_RTE_OP_OTHER, HPM_RTE_C_FOREIGN);
	}
	return eal_validate(t, ptr, size);
}

HPM_RTE_EXPORT rte_iova_t
HPM_RTE_FN(rte_malloc_virt2iova)(const void *addr)
{
	struct hpm_rte_tls *t = &hpm_rte_tls;
	rte_iova_t iova;

	if (likely(routed(t, HPM_RTE_OP_OTHER))) {
		iova = hpm_malloc_virt2iova(addr);
		if (iova != RTE_BAD_IOVA || hpm_malloc_validate(addr, NULL) == 0) {
			hpm_rte_count_hpm(t, HPM_RTE_OP_OTHER);
			return iova;
		}
		hpm_rte_count_eal(t, HPM_RTE_OP_OTHER, HPM_RTE_C_FOREIGN);
	}
	NESTED(t, iova = hpm_rte_eal()->virt2iova(addr));
	return iova;
}

/*
 * EAL's statistics of the socket, with hpmalloc's chunks (allocated blocks of
 * EAL's heap when the source is eal) replaced by what hpmalloc holds in them.
 */
static void
merge_stats(struct rte_malloc_socket_stats *s, const struct rte_malloc_socket_stats *h,
	const struct hpm_heap_stats *hs, bool chunks_in_eal_heap)
{
	if (chunks_in_eal_heap) {
		/* EAL counts hpmalloc's memzones as allocated and the rest of their pages
		 * as free: the memzones' bytes are hpmalloc's to split */
		size_t zones = RTE_MIN(hs->chunk_bytes + hs->meta_bytes, s->heap_allocsz_bytes);

		s->heap_allocsz_bytes -= zones;
		s->heap_freesz_bytes += zones - RTE_MIN(zones, h->heap_allocsz_bytes);
		s->heap_allocsz_bytes += h->heap_allocsz_bytes;
		s->free_count += h->free_count;
		/* and each memzone as a block: hpmalloc's blocks stand for them */
		s->alloc_count -= RTE_MIN(s->alloc_count, hs->chunks + hs->meta_regions);
		s->alloc_count += h->alloc_count;
		return;
	} else {
		s->heap_totalsz_bytes += h->heap_totalsz_bytes;
		s->greatest_free_size = RTE_MAX(s->greatest_free_size, h->greatest_free_size);
	}
	s->heap_allocsz_bytes += h->heap_allocsz_bytes;
	s->heap_freesz_bytes += h->heap_freesz_bytes;
	s->free_count += h->free_count;
	s->alloc_count += h->alloc_count;
}

HPM_RTE_EXPORT int
HPM_RTE_FN(rte_malloc_get_socket_stats)(int socket, struct rte_malloc_socket_stats *stats)
{
	struct hpm_rte_tls *t = &hpm_rte_tls;
	struct rte_malloc_socket_stats h;
	struct hpm_heap_stats hs;
	bool on = routed(t, HPM_RTE_OP_OTHER);
	const char *src;
	int rc, hrc;

	if (on && (socket >= RTE_MAX_NUMA_NODES || socket < 0 || stats == NULL)) {
		hpm_rte_count_eal(t, HPM_RTE_OP_OTHER,
			socket_external(socket) ? HPM_RTE_C_EXTERNAL : HPM_RTE_C_FOREIGN);
		on = false;
	}
	NESTED(t, rc = hpm_rte_eal()->get_socket_stats(socket, stats));
	if (!on)
		return rc;
	hpm_rte_count_hpm(t, HPM_RTE_OP_OTHER);
	NESTED(t, hrc = hpm_malloc_get_socket_stats(socket, &h));
	if (hrc == 0)
		NESTED(t, hrc = hpm_heap_get_stats(socket, &hs));
	if (rc == 0 && hrc == 0) {
		src = hpm_source_name();
		merge_stats(stats, &h, &hs, src != NULL && strcmp(src, "eal") == 0);
	}
	return rc;
}

HPM_RTE_EXPORT void
HPM_RTE_FN(rte_malloc_dump_stats)(FILE *f, const char *type)
{
	struct hpm_rte_tls *t = &hpm_rte_tls;
	bool on = routed(t, HPM_RTE_OP_OTHER);

	NESTED(t, hpm_rte_eal()->dump_stats(f, type));
	if (!on)
		return;
	hpm_rte_count_hpm(t, HPM_RTE_OP_OTHER);
	fprintf(f, "hpmalloc heaps (rte_malloc since rte_eal_init; chunks of the heaps above):\n");
	NESTED(t, hpm_malloc_dump_stats(f, type));
}

/*
 * Memzones. hpmalloc keeps the memory rte_free() gives back (its caches, the
 * empty chunks of retain_size, chunks whose release delay has not come up at
 * a later give): EAL's heap has none of it for rte_memzone_reserve() (rings,
 * mempools, queues), which failed where it does without the shim. When EAL
 * runs out, hpmalloc gives back every empty chunk, and EAL tries again.
 * Nested calls (hpmalloc's own chunks) go straight to EAL.
 */
static bool
mz_retry(struct hpm_rte_tls *t, const struct rte_memzone *mz)
{
	size_t given;

	if (mz != NULL || rte_errno != ENOMEM || t->nested != 0 || hpm_rte_mode_get() != HPM_RTE_ON)
		return false;
	NESTED(t, given = hpm_heap_trim_all());
	rte_errno = ENOMEM;
	return given != 0;
}

HPM_RTE_EXPORT const struct rte_memzone *
HPM_RTE_FN(rte_memzone_reserve_bounded)(const char *name, size_t len, int socket,
	unsigned int flags, unsigned int align, unsigned int bound)
{
	struct hpm_rte_tls *t = &hpm_rte_tls;
	const struct rte_memzone *mz;

	mz = hpm_rte_eal()->mz_reserve_bounded(name, len, socket, flags, align, bound);
	if (mz_retry(t, mz))
		mz = hpm_rte_eal()->mz_reserve_bounded(name, len, socket, flags, align, bound);
	return mz;
}

HPM_RTE_EXPORT const struct rte_memzone *
HPM_RTE_FN(rte_memzone_reserve_aligned)(const char *name, size_t len, int socket,
	unsigned int flags, unsigned int align)
{
	struct hpm_rte_tls *t = &hpm_rte_tls;
	const struct rte_memzone *mz;

	mz = hpm_rte_eal()->mz_reserve_aligned(name, len, socket, flags, align);
	if (mz_retry(t, mz))
		mz = hpm_rte_eal()->mz_reserve_aligned(name, len, socket, flags, align);
	return mz;
}

HPM_RTE_EXPORT const struct rte_memzone *
HPM_RTE_FN(rte_memzone_reserve)(const char *name, size_t len, int socket, unsigned int flags)
{
	struct hpm_rte_tls *t = &hpm_rte_tls;
	const struct rte_memzone *mz;

	mz = hpm_rte_eal()->mz_reserve(name, len, socket, flags);
	if (mz_retry(t, mz))
		mz = hpm_rte_eal()->mz_reserve(name, len, socket, flags);
	return mz;
}
