/* SPDX-License-Identifier: BSD-3-Clause */

/* The eal source: memzones, visible to secondary processes at the same address. */

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_memory.h>
#include <rte_memzone.h>

#include "log.h"
#include "source_eal.h"

bool
hpm_source_eal_ready(void)
{
	return rte_eal_iova_mode() != RTE_IOVA_DC && rte_lcore_count() > 0;
}

__thread unsigned int hpm_source_eal_depth;

/* A memzone of hpmalloc's own: the shim's rte_memzone_reserve*() knows it (depth). */
static const struct rte_memzone *
own_zone_reserve(const char *name, size_t len, int socket, unsigned int flags, unsigned int align)
{
	const struct rte_memzone *mz;

	hpm_source_eal_depth++;
	mz = rte_memzone_reserve_aligned(name, len, socket, flags, align);
	hpm_source_eal_depth--;
	return mz;
}

/*
 * A memzone named hpm_<pid>_<seq>: the pid keeps the names of live primary
 * and secondary processes apart, seq those of one process. A zone can outlive
 * its process (a secondary's chunk holds other processes' blocks, or is kept
 * empty), and a later process can have its pid (or a live one in another pid
 * namespace): a name taken is skipped for the next seq.
 */
static const struct rte_memzone *
eal_zone_reserve(size_t len, int socket, unsigned int flags, unsigned int align)
{
	static atomic_uint seq;
	char name[RTE_MEMZONE_NAMESIZE];
	const struct rte_memzone *mz;
	unsigned int tries;

	for (tries = 0; tries <= UINT16_MAX; tries++) {
		snprintf(name, sizeof(name), "hpm_%d_%u", (int)getpid(),
			atomic_fetch_add_explicit(&seq, 1, memory_order_relaxed));
		mz = own_zone_reserve(name, len, socket, flags, align);
		if (mz != NULL || rte_errno != EEXIST)
			return mz;
	}
	return NULL;
}

/* EAL keeps free heap memory zeroed, except on segments it marks dirty. */
static bool
eal_zone_is_zeroed(const struct rte_memzone *mz)
{
	size_t step = mz->hugepage_sz ? mz->hugepage_sz : 4096;
	uintptr_t va = RTE_ALIGN_FLOOR((uintptr_t)mz->addr, step);

	for (; va < (uintptr_t)mz->addr + mz->len; va += step) {
		const struct rte_memseg *ms = rte_mem_virt2memseg((void *)va, NULL);

		if (ms == NULL || (ms->flags & RTE_MEMSEG_FLAG_DIRTY))
			return false;
	}
	return true;
}

static void
eal_fill_region(struct hpm_region *r, const struct rte_memzone *mz)
{
	memset(r, 0, sizeof(*r));
	r->va = mz->addr;
	r->len = mz->len;
	r->socket = mz->socket_id;
	r->handle = mz;
	r->page_size_log2 = mz->hugepage_sz ? rte_log2_u64(mz->hugepage_sz) : 12;
	r->unit_iova_contig =
		mz->hugepage_sz >= HPM_UNIT_SIZE || rte_eal_iova_mode() == RTE_IOVA_VA;
	r->zeroed = eal_zone_is_zeroed(mz);
}

/*
 * Where the end of the free element EAL cuts this process's next memzone from
 * is expected, by socket: EAL cuts a memzone from the end of a free element,
 * so the next one ends just below the last one's header. 0: no guess (none
 * yet, or one was given back since).
 */
static uintptr_t eal_next_end[RTE_MAX_NUMA_NODES];

static unsigned int
eal_socket_slot(int socket)
{
	if (socket < 0 || socket >= RTE_MAX_NUMA_NODES)
		socket = (int)rte_socket_id();
	return socket >= 0 && socket < RTE_MAX_NUMA_NODES ? (unsigned int)socket : 0;
}

/* EAL's struct malloc_elem, just below every memzone. */
#define EAL_ELEM_HDR (2 * RTE_CACHE_LINE_SIZE)

static void
eal_note_zone(const struct rte_memzone *mz)
{
	__atomic_store_n(&eal_next_end[eal_socket_slot(mz->socket_id)],
		(uintptr_t)mz->addr - EAL_ELEM_HDR, __ATOMIC_RELAXED);
}

/*
 * Units whose first one holds EAL's element header (hpm_region::headed): a
 * memzone a lead shorter than its units, aligned to a cache line only, is
 * cut from the end of a free element of EAL's heap, and fresh hugepages end
 * on a page boundary: the memzone then starts a lead past a page's start,
 * its header in that page, and takes len / 2 MiB hugepages, where a 2
 * MiB-aligned memzone of len bytes takes one more for its header alone (16
 * MiB chunks: 9 hugepages for 8).
 *
 * The lead is the header and HPM_SOURCE_GUARD bytes below it. Cut from
 * memory EAL had already (--socket-mem), the free element ends where the
 * last zone's header starts: the next zone ends there, HPM_SOURCE_GUARD past
 * a page's start and more, and holds those bytes past its last unit, where a
 * write past a block that ends there stays (chunk.c: a chunk without them
 * has its last unit tailed, as a zone cut from fresh hugepages is). Each
 * zone then starts a line further into its first page; when the free
 * element ends further than a header and a line past the guard, a zone of
 * the bytes past it takes the free element's end down to the guard while
 * the chunk is cut, and goes back after (those bytes stay EAL's). A wrong
 * guess (another allocation came between, or fresh hugepages) leaves a
 * headed zone all the same, tailed when no guard follows its units.
 */
static int
eal_reserve_headed(struct hpm_region *r, size_t len, int socket)
{
	const size_t lead = hpm_source_eal.lead;
	uintptr_t end = __atomic_load_n(&eal_next_end[eal_socket_slot(socket)], __ATOMIC_RELAXED);
	size_t pad = end & (HPM_UNIT_SIZE - 1);
	const struct rte_memzone *mz, *pad_mz = NULL;
	size_t head;

	if (end != 0 && pad >= HPM_SOURCE_GUARD + EAL_ELEM_HDR + RTE_CACHE_LINE_SIZE) {
		pad_mz = eal_zone_reserve(pad - HPM_SOURCE_GUARD - EAL_ELEM_HDR, socket,
			RTE_MEMZONE_SIZE_HINT_ONLY, RTE_CACHE_LINE_SIZE);
		/* cut elsewhere: the guess is wrong */
		if (pad_mz != NULL && (uintptr_t)pad_mz->addr + pad_mz->len != end) {
			rte_memzone_free(pad_mz);
			pad_mz = NULL;
		}
	}
	mz = eal_zone_reserve(len - lead, socket, RTE_MEMZONE_SIZE_HINT_ONLY, RTE_CACHE_LINE_SIZE);
	if (pad_mz != NULL)
		rte_memzone_free(pad_mz);
	if (mz == NULL)
		return -(rte_errno ? rte_errno : ENOMEM);
	head = (uintptr_t)mz->addr & (HPM_UNIT_SIZE - 1);
	eal_fill_region(r, mz);
	eal_note_zone(mz);
	r->headed = head >= lead && head <= HPM_UNIT_HEAD_MAX;
	return 0;
}

static int
eal_reserve(struct hpm_region *r, size_t len, size_t align, int socket, unsigned int flags)
{
	bool contig = flags & HPM_RESERVE_CONTIG;
	const struct rte_memzone *mz;

	if (align > UINT32_MAX / 2 + 1)
		return -EINVAL;
	if ((flags & HPM_RESERVE_HEADED) && !contig && align == HPM_UNIT_SIZE &&
		len > HPM_UNIT_SIZE && eal_reserve_headed(r, len, socket) == 0)
		return 0;
	mz = eal_zone_reserve(len, socket,
		RTE_MEMZONE_SIZE_HINT_ONLY | (contig ? RTE_MEMZONE_IOVA_CONTIG : 0),
		(unsigned int)align);
	if (mz == NULL)
		return -(rte_errno ? rte_errno : ENOMEM);
	eal_fill_region(r, mz);
	eal_note_zone(mz);
	r->len = len;
	return 0;
}

static int
eal_reserve_meta(struct hpm_region *r, size_t len, const char *name)
{
	const struct rte_memzone *mz;

	/*
	 * As long as the hugepages it takes allow, header included: on fresh
	 * pages the rest would sit idle in EAL's heap (chunks leave none).
	 */
	len = RTE_ALIGN_CEIL(len + hpm_source_eal.lead, HPM_UNIT_SIZE) - hpm_source_eal.lead;
	mz = name != NULL ? own_zone_reserve(name, len, SOCKET_ID_ANY, RTE_MEMZONE_SIZE_HINT_ONLY,
				    RTE_CACHE_LINE_SIZE)
			  : eal_zone_reserve(len, SOCKET_ID_ANY, RTE_MEMZONE_SIZE_HINT_ONLY,
				    RTE_CACHE_LINE_SIZE);
	if (mz == NULL)
		return -(rte_errno ? rte_errno : ENOMEM);
	eal_fill_region(r, mz);
	eal_note_zone(mz);
	r->len = len;
	if (!r->zeroed)
		memset(mz->addr, 0, len);
	r->zeroed = 1;
	return 0;
}

static void
eal_release(struct hpm_region *r)
{
	const struct rte_memzone *mz = r->handle;

	/* the free element grows back over the zone: where it ends is no longer known */
	__atomic_store_n(&eal_next_end[eal_socket_slot(mz->socket_id)], 0, __ATOMIC_RELAXED);
	if (rte_memzone_free(r->handle) != 0)
		HPM_LOG(ERR, "eal: cannot free memzone at %p", r->va);
}

/* The memseg's IOVA: rte_mem_virt2iova() walks every memseg to find it. */
static rte_iova_t
eal_iova(const struct hpm_region *r, const void *va)
{
	const struct rte_memseg *ms;

	RTE_SET_USED(r);
	if (rte_eal_iova_mode() == RTE_IOVA_VA)
		return (uintptr_t)va;
	ms = rte_mem_virt2memseg(va, NULL);
	if (ms == NULL || ms->iova == RTE_BAD_IOVA)
		return RTE_BAD_IOVA;
	return ms->iova + RTE_PTR_DIFF(va, ms->addr);
}

static unsigned int
eal_sockets(int *ids, unsigned int max)
{
	unsigned int i, n = RTE_MIN(rte_socket_count(), max);

	for (i = 0; i < n; i++)
		ids[i] = rte_socket_id_by_idx(i);
	return n;
}

const struct hpm_source_ops hpm_source_eal = {
	.name = "eal",
	.kind = HPM_SOURCE_EAL,
	.hugepages = true,
	.has_iova = true,
	.reserve = eal_reserve,
	.reserve_meta = eal_reserve_meta,
	.release = eal_release,
	.iova = eal_iova,
	.sockets = eal_sockets,
	/*
	 * EAL's struct malloc_elem (two cache lines) sits just below every
	 * memzone, and below it the guard of the zone cut under it
	 */
	.lead = EAL_ELEM_HDR + HPM_SOURCE_GUARD,
};
