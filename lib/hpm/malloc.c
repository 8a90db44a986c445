/* SPDX-License-Identifier: BSD-3-Clause */

/* The public API: argument checks, socket choice, routing, statistics. */

#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <string.h>

#include <numa.h>

#include <rte_errno.h>
#include <rte_lcore.h>

#include "hpm_malloc.h"
#include "large.h"
#include "log.h"
#include "route.h"
#include "state.h"

/* Past this no source has the memory, and unit counts would overflow. */
#define HPM_SIZE_MAX (UINT64_C(1) << 46)
#define HPM_MIN_ALIGN 64u

#define ALLOC_F_ZERO RTE_BIT32(0)
#define ALLOC_F_CONTIG RTE_BIT32(1)

static uint64_t bad_frees_before_init;

static void
bad_pointer(const void *ptr, const char *op, const char *why)
{
	uint64_t *counter = hpm_state != NULL ? &hpm_state->bad_frees : &bad_frees_before_init;
	uint64_t n = __atomic_add_fetch(counter, 1, __ATOMIC_RELAXED);

	/* rate-limited: the first few, then at powers of two */
	if (n <= 16 || (n & (n - 1)) == 0)
		HPM_LOG(ERR, "%s(%p): %s; heap left intact (%" PRIu64 " so far)", op, ptr, why, n);
}

static int
caller_socket(const struct hpm_state *st)
{
	static RTE_DEFINE_PER_LCORE(int, cpu_node) = -2;
	unsigned int s = rte_socket_id();

	if (s < RTE_MAX_NUMA_NODES && st->arenas[s].present)
		return s;
	/* not an EAL thread: the node of the CPU it runs on, once */
	if (RTE_PER_LCORE(cpu_node) == -2) {
		int cpu = sched_getcpu();

		RTE_PER_LCORE(cpu_node) =
			cpu >= 0 && numa_available() >= 0 ? numa_node_of_cpu(cpu) : -1;
	}
	s = RTE_PER_LCORE(cpu_node);
	if (s < RTE_MAX_NUMA_NODES && st->arenas[s].present)
		return s;
	return st->socket_ids[0];
}

/* Single granules come from pages of their own (see gran.h). */
static void *
gran_alloc(struct hpm_arena *a, unsigned int cls, unsigned int n, unsigned int align,
	struct hpm_blockinfo *bi)
{
	if (n == 1 && align == 1)
		cls = cls == HPM_GRAN_4K ? HPM_GRAN_4K1 : HPM_GRAN_64K1;
	return hpm_gran_alloc(a, cls, n, align, bi);
}

static void *
alloc_in(struct hpm_arena *a, size_t size, size_t align, bool contig, struct hpm_blockinfo *bi)
{
	enum hpm_route route = hpm_route(size, align);
	void *p = NULL;

	/* outside LARGE a block lies in one unit: contiguous if units are */
	if (contig && !hpm_state->unit_iova_contig)
		route = HPM_ROUTE_LARGE;
	rte_spinlock_lock(&a->lock);
	switch (route) {
	case HPM_ROUTE_HEAP:
		p = hpm_heap_alloc(a, size, align, bi);
		break;
	case HPM_ROUTE_G4K:
		p = gran_alloc(a, HPM_GRAN_4K, RTE_ALIGN_CEIL(size, HPM_KIB(4)) >> 12,
			RTE_MAX(align >> 12, (size_t)1), bi);
		break;
	case HPM_ROUTE_G64K:
		p = gran_alloc(a, HPM_GRAN_64K, size >> 16, RTE_MAX(align >> 16, (size_t)1), bi);
		break;
	case HPM_ROUTE_LARGE:
		p = hpm_large_alloc(a, RTE_ALIGN_CEIL(size, HPM_UNIT_SIZE) >> HPM_UNIT_SHIFT,
			RTE_MAX(align >> HPM_UNIT_SHIFT, (size_t)1), contig, bi);
		break;
	}
	if (p != NULL) {
		a->alloc_bytes += bi->bytes;
		a->alloc_count++;
	}
	rte_spinlock_unlock(&a->lock);
	return p;
}

static void *
alloc_on_socket(size_t size, size_t align, int socket, bool contig, struct hpm_blockinfo *bi)
{
	struct hpm_state *st = hpm_state;
	unsigned int i;
	void *p;
	int first;

	/* without hugepages a socket is only a wish, as in EAL */
	if (st->no_huge && socket < RTE_MAX_NUMA_NODES)
		socket = SOCKET_ID_ANY;
	if (socket != SOCKET_ID_ANY) {
		if (socket < 0 || socket >= RTE_MAX_NUMA_NODES || !st->arenas[socket].present) {
			rte_errno = EINVAL;
			return NULL;
		}
		p = alloc_in(&st->arenas[socket], size, align, contig, bi);
		if (p == NULL && rte_errno != ENOTSUP)
			rte_errno = ENOMEM;
		return p;
	}
	first = caller_socket(st);
	p = alloc_in(&st->arenas[first], size, align, contig, bi);
	for (i = 0; p == NULL && i < st->nsockets; i++)
		if (st->socket_ids[i] != first)
			p = alloc_in(&st->arenas[st->socket_ids[i]], size, align, contig, bi);
	if (p == NULL && rte_errno != ENOTSUP)
		rte_errno = ENOMEM;
	return p;
}

static void *
alloc_api(size_t size, unsigned int align, int socket, unsigned int flags)
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
	if (p != NULL && (flags & ALLOC_F_ZERO) && bi.dirty)
		memset(p, 0, size);
	return p;
}

void *
hpm_malloc_socket(const char *type, size_t size, unsigned int align, int socket)
{
	RTE_SET_USED(type);
	return alloc_api(size, align, socket, 0);
}

void *
hpm_malloc(const char *type, size_t size, unsigned int align)
{
	RTE_SET_USED(type);
	return alloc_api(size, align, SOCKET_ID_ANY, 0);
}

void *
hpm_zmalloc_socket(const char *type, size_t size, unsigned int align, int socket)
{
	RTE_SET_USED(type);
	return alloc_api(size, align, socket, ALLOC_F_ZERO);
}

void *
hpm_zmalloc(const char *type, size_t size, unsigned int align)
{
	RTE_SET_USED(type);
	return alloc_api(size, align, SOCKET_ID_ANY, ALLOC_F_ZERO);
}

void *
hpm_calloc_socket(const char *type, size_t num, size_t size, unsigned int align, int socket)
{
	size_t total;

	RTE_SET_USED(type);
	if (__builtin_mul_overflow(num, size, &total)) {
		rte_errno = EINVAL;
		return NULL;
	}
	return alloc_api(total, align, socket, ALLOC_F_ZERO);
}

void *
hpm_calloc(const char *type, size_t num, size_t size, unsigned int align)
{
	return hpm_calloc_socket(type, num, size, align, SOCKET_ID_ANY);
}

void *
hpm_malloc_contig(const char *type, size_t size, unsigned int align, int socket)
{
	RTE_SET_USED(type);
	return alloc_api(size, align, socket, ALLOC_F_CONTIG);
}

/* Bytes a live block holds, 0 if p is not one. Arena lock held. */
static size_t
block_bytes(const struct hpm_unit *u, const void *p)
{
	switch (u->role) {
	case HPM_UNIT_SPAN:
		return hpm_heap_block_size(u, p);
	case HPM_UNIT_G4K:
	case HPM_UNIT_G64K:
	case HPM_UNIT_G4K1:
	case HPM_UNIT_G64K1:
		return hpm_gran_block_size(u, p);
	case HPM_UNIT_LARGE:
		return hpm_large_block_size(u, p);
	default:
		return 0;
	}
}

static size_t
usable_bytes(const struct hpm_unit *u, const void *p)
{
	return u->role == HPM_UNIT_SPAN ? hpm_heap_usable(u, p) : block_bytes(u, p);
}

static int
free_in(struct hpm_arena *a, struct hpm_unit *u, void *p, size_t *bytes)
{
	switch (u->role) {
	case HPM_UNIT_SPAN:
		return hpm_heap_free(a, u, p, bytes);
	case HPM_UNIT_G4K:
	case HPM_UNIT_G64K:
	case HPM_UNIT_G4K1:
	case HPM_UNIT_G64K1:
		return hpm_gran_free(a, u, p, bytes);
	case HPM_UNIT_LARGE:
		return hpm_large_free(a, u, p, bytes);
	default:
		return -EINVAL;
	}
}

/* The unit of a pointer hpmalloc may own, or NULL (and the caller logs). */
static struct hpm_unit *
unit_of(const void *p)
{
	if (unlikely(hpm_state == NULL))
		return NULL;
	return hpm_pagemap_lookup(&hpm_state->pagemap, p);
}

void
hpm_free(void *ptr)
{
	struct hpm_arena *a;
	struct hpm_unit *u;
	size_t bytes;
	int rc;

	if (ptr == NULL)
		return;
	u = unit_of(ptr);
	if (unlikely(u == NULL)) {
		bad_pointer(ptr, "hpm_free", "not hpmalloc memory");
		return;
	}
	a = &hpm_state->arenas[u->socket];
	rte_spinlock_lock(&a->lock);
	rc = free_in(a, u, ptr, &bytes);
	if (likely(rc == 0)) {
		a->alloc_bytes -= bytes;
		a->alloc_count--;
	}
	rte_spinlock_unlock(&a->lock);
	if (unlikely(rc != 0))
		bad_pointer(ptr, "hpm_free", "not a live block (interior pointer or double free)");
}

/* Route a live block belongs to, and the alignment every block there has. */
static enum hpm_route
unit_route(const struct hpm_unit *u, size_t *natural_align)
{
	switch (u->role) {
	case HPM_UNIT_G4K:
	case HPM_UNIT_G4K1:
		*natural_align = HPM_KIB(4);
		return HPM_ROUTE_G4K;
	case HPM_UNIT_G64K:
	case HPM_UNIT_G64K1:
		*natural_align = HPM_KIB(64);
		return HPM_ROUTE_G64K;
	case HPM_UNIT_LARGE:
		*natural_align = HPM_UNIT_SIZE;
		return HPM_ROUTE_LARGE;
	default:
		*natural_align = HPM_MIN_ALIGN;
		return HPM_ROUTE_HEAP;
	}
}

/* In place when the block's own route would serve the new size. Arena lock held. */
static int
resize_in_place(struct hpm_arena *a, struct hpm_unit *u, void *p, size_t size, size_t align,
	struct hpm_blockinfo *bi)
{
	size_t natural;
	enum hpm_route route = unit_route(u, &natural);

	if (hpm_route(size, RTE_MAX(align, natural)) != route)
		return -1;
	switch (route) {
	case HPM_ROUTE_HEAP:
		return hpm_heap_resize(a, u, p, size, bi);
	case HPM_ROUTE_G4K:
		return hpm_gran_resize(a, u, p, RTE_ALIGN_CEIL(size, HPM_KIB(4)) >> 12, bi);
	case HPM_ROUTE_G64K:
		return hpm_gran_resize(a, u, p, size >> 16, bi);
	case HPM_ROUTE_LARGE:
		return hpm_large_resize(a, u, p,
			RTE_ALIGN_CEIL(size, HPM_UNIT_SIZE) >> HPM_UNIT_SHIFT, bi);
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
		return alloc_api(size, align, socket, 0);
	if (size == 0 || (align & (align - 1)) != 0) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (size > HPM_SIZE_MAX) {
		rte_errno = ENOMEM;
		return NULL;
	}
	u = unit_of(ptr);
	if (u == NULL) {
		bad_pointer(ptr, "hpm_realloc", "not hpmalloc memory");
		rte_errno = EINVAL;
		return NULL;
	}
	eff_align = RTE_MAX(align, HPM_MIN_ALIGN);
	a = &hpm_state->arenas[u->socket];
	rte_spinlock_lock(&a->lock);
	old_bytes = block_bytes(u, ptr);
	old_usable = usable_bytes(u, ptr);
	if (old_bytes == 0) {
		rte_spinlock_unlock(&a->lock);
		bad_pointer(ptr, "hpm_realloc", "not a live block");
		rte_errno = EINVAL;
		return NULL;
	}
	if ((socket == SOCKET_ID_ANY || socket == u->socket ||
			    (hpm_state->no_huge && socket < RTE_MAX_NUMA_NODES)) &&
			((uintptr_t)ptr & (eff_align - 1)) == 0 &&
			resize_in_place(a, u, ptr, size, eff_align, &bi) == 0) {
		a->alloc_bytes += bi.bytes - old_bytes;
		rte_spinlock_unlock(&a->lock);
		return ptr;
	}
	rte_spinlock_unlock(&a->lock);
	p = alloc_api(size, align, socket, 0);
	if (p == NULL)
		return NULL;
	memcpy(p, ptr, RTE_MIN(old_usable, size));
	hpm_free(ptr);
	return p;
}

void *
hpm_realloc(void *ptr, size_t size, unsigned int align)
{
	return hpm_realloc_socket(ptr, size, align, SOCKET_ID_ANY);
}

int
hpm_malloc_bulk(void **objs, unsigned int n, size_t size, unsigned int align, int socket)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		objs[i] = alloc_api(size, align, socket, 0);
		if (objs[i] == NULL) {
			int rc = -rte_errno;

			hpm_free_bulk(objs, i);
			memset(objs, 0, sizeof(*objs) * i);
			return rc;
		}
	}
	return 0;
}

void
hpm_free_bulk(void *const *objs, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		hpm_free(objs[i]);
}

/* Usable size of a live block, 0 otherwise; takes the arena lock. */
static size_t
live_usable(const void *ptr)
{
	struct hpm_unit *u = ptr != NULL ? unit_of(ptr) : NULL;
	struct hpm_arena *a;
	size_t size;

	if (u == NULL)
		return 0;
	a = &hpm_state->arenas[u->socket];
	rte_spinlock_lock(&a->lock);
	size = usable_bytes(u, ptr);
	rte_spinlock_unlock(&a->lock);
	return size;
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

int
hpm_malloc_get_socket_stats(int socket, struct rte_malloc_socket_stats *stats)
{
	if (hpm_state_ready() != 0)
		return -1;
	if (socket < 0 || socket >= RTE_MAX_NUMA_NODES || !hpm_state->arenas[socket].present ||
			stats == NULL) {
		rte_errno = EINVAL;
		return -1;
	}
	hpm_arena_stats(&hpm_state->arenas[socket], stats);
	return 0;
}

void
hpm_malloc_dump_stats(FILE *f, const char *type)
{
	struct rte_malloc_socket_stats st;
	unsigned int i;

	RTE_SET_USED(type);
	if (hpm_state_ready() != 0)
		return;
	for (i = 0; i < hpm_state->nsockets; i++) {
		int socket = hpm_state->socket_ids[i];

		hpm_arena_stats(&hpm_state->arenas[socket], &st);
		fprintf(f, "Heap id:%d\n", socket);
		fprintf(f, "\tHeap name:hpm_socket_%d (%s)\n", socket, hpm_src->name);
		fprintf(f, "\tHeap_size:%zu,\n", st.heap_totalsz_bytes);
		fprintf(f, "\tFree_size:%zu,\n", st.heap_freesz_bytes);
		fprintf(f, "\tAlloc_size:%zu,\n", st.heap_allocsz_bytes);
		fprintf(f, "\tGreatest_free_size:%zu,\n", st.greatest_free_size);
		fprintf(f, "\tAlloc_count:%u,\n", st.alloc_count);
		fprintf(f, "\tFree_count:%u,\n", st.free_count);
	}
}

rte_iova_t
hpm_malloc_virt2iova(const void *addr)
{
	const struct hpm_unit *u = addr != NULL ? unit_of(addr) : NULL;

	if (u == NULL || u->role == HPM_UNIT_FREE || !hpm_src->has_iova)
		return RTE_BAD_IOVA;
	if (hpm_state->unit_iova_contig && u->iova != RTE_BAD_IOVA)
		return u->iova + (rte_iova_t)((const uint8_t *)addr - u->va);
	return hpm_src->iova(&u->chunk->region, addr);
}

int
hpm_heap_check(void)
{
	unsigned int bad = 0, i;

	if (hpm_state == NULL)
		return 0;
	for (i = 0; i < hpm_state->nsockets; i++)
		bad += hpm_arena_verify(&hpm_state->arenas[hpm_state->socket_ids[i]]);
	return bad != 0 ? -EFAULT : 0;
}

uint64_t
hpm_bad_free_count(void)
{
	return hpm_state != NULL ? __atomic_load_n(&hpm_state->bad_frees, __ATOMIC_RELAXED) :
				   bad_frees_before_init;
}
