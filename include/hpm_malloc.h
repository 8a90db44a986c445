/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef HPM_MALLOC_H
#define HPM_MALLOC_H

/**
 * @file
 * hpmalloc: a hugepage memory allocator for DPDK applications.
 *
 * Every rte_malloc() entry point has an hpm_ twin with the same signature and
 * the behaviour of DPDK's rte_malloc, checked against DPDK 22.11, 24.11 and
 * 25.11 (the three behave alike in every case the conformance test compares),
 * with these documented differences:
 *  - every failure sets rte_errno (EINVAL for bad arguments, ENOMEM when
 *    memory is short); rte_malloc() leaves it untouched for a size of 0 or a
 *    bad alignment;
 *  - hpm_calloc() checks num * size for overflow (rte_calloc() silently
 *    returns a block of the truncated product);
 *  - hpm_realloc() rejects an alignment that is not a power of two even when
 *    the block could be resized in place (rte_realloc() accepts it then), and
 *    a size of 0 returns NULL and leaves the block untouched as rte_malloc.h
 *    documents (rte_realloc() shrinks the block when align is non-zero);
 *  - hpm_realloc() to a size near SIZE_MAX fails with ENOMEM and keeps the
 *    block (rte_realloc() rounds the size up to 0 and shrinks the block);
 *  - a bad pointer given to hpm_free() or hpm_realloc() (one hpmalloc did not
 *    return, an interior pointer, a block already freed) is detected, logged
 *    and counted (hpm_bad_free_count()), and the heap stays intact;
 *  - hpm_malloc_validate() returns -1 for such pointers, where
 *    rte_malloc_validate() may crash;
 *  - hpm_malloc_get_socket_stats() and hpm_malloc_dump_stats() do not start
 *    hpmalloc: before the first allocation there are no statistics;
 *  - DPDK 25.07's rte_free_sensitive() (experimental: zero the block before
 *    it is reused) has no hpm_ twin yet: the shim serves it for hpmalloc's
 *    blocks by zeroing the block's usable size, then hpm_free().
 *
 * One heap for every process of a multi-process application (EAL source):
 * any call can be a process's first, a free of another process's block
 * included; it attaches to the heap the application has, and never makes
 * one for a free or a look. Beyond rte_malloc:
 *  - blocks a process had freed into its caches go back to the heap when it
 *    dies (exit or SIGKILL): the survivors find it dead at their next
 *    hpm_heap_trim(), hpm_heap_check() or growth of the heap, and at a cache
 *    miss 10 ms after the death at the latest; blocks it still held stay
 *    allocated and intact for the others to free, as with rte_malloc;
 *  - a process that dies holding a socket's heap lock (rte_malloc's other
 *    processes hang for ever then) is found dead by the next process that
 *    waits for the lock; the heap of that socket may be half-changed, so it
 *    is never used again: every later call that needs it fails with
 *    rte_errno ENOTRECOVERABLE (allocations return NULL, hpm_malloc_bulk()
 *    -ENOTRECOVERABLE, hpm_heap_check() -ENOTRECOVERABLE, frees are ignored)
 *    and one log line says why. Blocks already in per-lcore caches are not
 *    part of the torn heap and are still handed out.
 *
 * Memory comes from a segment source: DPDK EAL memzones when EAL is up, else
 * hugetlbfs hugepages, else ordinary anonymous memory (like --no-huge). The
 * first call initialises hpmalloc with the defaults unless hpm_init() ran.
 */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_common.h>
#include <rte_memory.h>
#include <rte_malloc.h>

#ifdef __cplusplus
extern "C" {
#endif

/* the library builds with hidden visibility: its API is what this header declares */
#pragma GCC visibility push(default)

/** @cond HPM_INTERNAL */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#define __hpm_malloc __attribute__((__malloc__))
#define __hpm_dealloc_free __attribute__((__malloc__(hpm_free, 1)))
#elif defined(__GNUC__)
#define __hpm_malloc __attribute__((__malloc__))
#define __hpm_dealloc_free
#else
#define __hpm_malloc
#define __hpm_dealloc_free
#endif
#if defined(__GNUC__)
#define __hpm_alloc_size(...) __attribute__((__alloc_size__(__VA_ARGS__)))
/* no alloc_align: align 0 means the default, which the attribute cannot say */
#define __hpm_alloc_align(n)
#define __hpm_wur __attribute__((__warn_unused_result__))
#else
#define __hpm_alloc_size(...)
#define __hpm_alloc_align(n)
#define __hpm_wur
#endif
/** @endcond */

/** Where hpmalloc takes its memory from. */
enum hpm_source_kind {
	/** EAL when it is initialised, else hugetlbfs when hugepages are free, else anon. */
	HPM_SOURCE_AUTO = 0,
	/** DPDK EAL memzones: hugepage memory shared with secondary processes. */
	HPM_SOURCE_EAL,
	/** mmap(MAP_HUGETLB) hugepages, no EAL needed; one process. */
	HPM_SOURCE_HUGETLBFS,
	/** Ordinary anonymous memory (like EAL --no-huge); no IOVA. */
	HPM_SOURCE_ANON,
};

/**
 * Check the whole heap after every operation that takes a socket's lock
 * (slow; for debugging): a broken invariant stops the process with a report.
 */
#define HPM_CFG_F_VALIDATE RTE_BIT32(0)
/** No per-lcore caches: every operation takes the socket's lock (for comparisons). */
#define HPM_CFG_F_NO_CACHE RTE_BIT32(1)
/**
 * Debug mode: canaries before and after every block (checked at free and by
 * hpm_heap_check()), freed blocks filled with 0x6b, new ones (but zmalloc's)
 * with 0x6b too, every live block recorded with its type and size
 * (hpm_malloc_dump_leaks()), HPM_CFG_F_VALIDATE, and no per-lcore caches.
 * Also turned on by HPM_DEBUG=1 in the environment, and by default in
 * builds with -Ddebug_mode=true. Slow: for finding bugs.
 */
#define HPM_CFG_F_DEBUG RTE_BIT32(2)
/**
 * Small requests (up to 4144 bytes at alignments up to 64 bytes) from the
 * boundary-tag heap's classes (blocks in steps of 64 bytes, a 16-byte header
 * each) instead of the size-class pages (no header, sizes m x 2^k): tighter
 * for sizes just above a size class, a header to overrun for each block.
 */
#define HPM_CFG_F_SMALL_HEAP RTE_BIT32(3)
/**
 * Lean caches: the per-lcore caches keep no granule run longer than 64 KiB
 * (blocks of 64 KiB to 256 KiB that are not single 64 KiB granules); those
 * take the socket's lock, every allocation and free. Each kind of long run
 * a cache keeps is one idle block of up to 256 KiB that also keeps its page
 * from emptying: test_soak held 230 -> 214 MiB, malloc_perf's mixed
 * held/live 1.66 -> 1.59, at 1.2-1.6 times the time per operation in
 * mixed (doc/guides/tuning.rst).
 */
#define HPM_CFG_F_LEAN_CACHE RTE_BIT32(4)

/**
 * hpmalloc configuration, given to hpm_init(). Fill it with
 * hpm_config_defaults() first, then change what you need.
 */
struct hpm_config {
	/** Segment source; HPM_SOURCE_AUTO picks one (see enum hpm_source_kind). */
	enum hpm_source_kind source;
	/**
	 * Largest step by which a socket's heap grows, in bytes (a multiple
	 * of 2 MiB; default 32 MiB). Steps start at 2 MiB and follow the heap
	 * size (1/32 of it) up to this, so that a small heap is not rounded up
	 * to a large chunk. A request larger than a step gets a chunk of its
	 * own.
	 */
	size_t chunk_size;
	/**
	 * Bytes of empty chunks a socket keeps for reuse (default 64 MiB);
	 * empty chunks beyond it go back to the source, so the heap shrinks.
	 */
	size_t retain_size;
	/**
	 * How long a chunk beyond retain_size stays empty before it goes back
	 * to the source, in milliseconds (default 1000; 0: at once). Giving
	 * memory back costs (EAL clears a memzone it gets back: about 50 us per
	 * MiB); the delay keeps that off the path of a burst that frees and
	 * allocates again, and hpm_heap_trim() gives back at once.
	 */
	unsigned int release_delay_ms;
	/** Bytes reserved on each socket at hpm_init() (default 0: grow on demand; at most 2^46). */
	size_t initial_size;
	/** Hugepage size for HPM_SOURCE_HUGETLBFS: 2 MiB (default) or 1 GiB. */
	size_t hugepage_size;
	/**
	 * Most blocks a per-lcore cache holds per size class (default 224,
	 * at most 224; 0: no caches, as HPM_CFG_F_NO_CACHE).
	 */
	unsigned int cache_max;
	/**
	 * Least blocks a class may hold whatever the heap's size (default 64,
	 * two bursts of 32).
	 */
	unsigned int cache_min;
	/**
	 * A class of the caches of a socket may hold 1/cache_share of its heap
	 * (default 32): a class's limit is that share, divided among the lcores
	 * with caches, in blocks, between cache_min and cache_max (heap classes
	 * hold at most 32 KiB and move 4 KiB at a time, so that cached blocks
	 * do not pin the heap's free ranges). The limit grows with the heap, as
	 * the question of seed 003 asks. A cache's classes above the heap's
	 * (granules, size classes, runs) hold together no more than that share
	 * (its share of cache_budget_min at least): classes gone idle give their
	 * room to those in use.
	 */
	unsigned int cache_share;
	/**
	 * Least bytes the caches' classes above the heap's may hold together,
	 * whatever the heap's size, shared by the caches in use (default 8 MiB:
	 * one lcore's cache may hold 8 MiB, each of four 2 MiB; 0: the heap's
	 * share alone). Lower it where memory counts more than speed, raise it
	 * for bursts of large blocks on many lcores of a small heap.
	 */
	size_t cache_budget_min;
	/**
	 * A topology of this many NUMA sockets for the hugetlbfs and anon
	 * sources, whatever the machine has (0, the default: the machine's).
	 * CPU c belongs to socket c % fake_sockets; memory of a socket the
	 * machine lacks comes from node socket % nodes. For testing NUMA logic
	 * (placement, fallback, per-socket statistics, frees across sockets) on
	 * a machine with one node.
	 */
	unsigned int fake_sockets;
	/** HPM_CFG_F_* flags. */
	uint32_t flags;
};

/**
 * Fill a configuration with the defaults.
 *
 * @param cfg
 *   Configuration to fill; must not be NULL.
 */
void hpm_config_defaults(struct hpm_config *cfg);

/**
 * Initialise hpmalloc. Optional: the first allocation initialises it with the
 * defaults. With the EAL source, call it after rte_eal_init().
 *
 * With the EAL source the heap is shared by the processes of a DPDK
 * multi-process application: the first process to initialise hpmalloc
 * creates it (its configuration holds), the others attach to it (their
 * configuration is ignored), and blocks can be freed by any process.
 *
 * @param cfg
 *   Configuration, or NULL for the defaults.
 * @return
 *   0 on success; -EALREADY if hpmalloc is already initialised, -EINVAL for a
 *   bad configuration, -ENODEV if the requested source cannot be used,
 *   -ENOMEM if the initial reservation fails, -ETIMEDOUT if another process's
 *   heap stays unfinished (its creator died making it, or took over 120 s).
 */
__hpm_wur int hpm_init(const struct hpm_config *cfg);

/**
 * Release every chunk to its source and forget all state. Every block that
 * hpmalloc handed out becomes invalid. hpmalloc can be initialised again.
 *
 * In a process that attached to another's heap (multi-process), this only
 * detaches: the caches of this process's lcores go back to the heap, which
 * stays. The process that created the heap releases it, after every other
 * process has detached.
 *
 * As free() of a block, the end of the heap is the application's to order:
 * no other thread of the process may be in an hpmalloc call, or make one,
 * while hpm_fini() runs (EAL's telemetry requests excepted: they wait).
 */
void hpm_fini(void);

/**
 * Name of the segment source in use ("eal", "hugetlbfs", "anon"), or NULL
 * before initialisation.
 *
 * @return
 *   A static string, or NULL.
 */
const char *hpm_source_name(void);

/**
 * Free a block returned by hpmalloc.
 *
 * @param ptr
 *   Block to free; NULL does nothing. A pointer that hpmalloc did not return,
 *   an interior pointer or a block already freed is logged, counted, and
 *   otherwise ignored.
 */
void hpm_free(void *ptr);

/**
 * Allocate memory on the caller's socket, falling back to the others.
 *
 * @param type
 *   A string identifying the allocation (for debugging); may be NULL.
 * @param size
 *   Size in bytes; 0 fails with EINVAL.
 * @param align
 *   Alignment: 0 for the default (64 bytes, a cache line), else a power of
 *   two; smaller than 64 gives 64.
 * @return
 *   The block, or NULL with rte_errno set (EINVAL, ENOMEM).
 */
void *hpm_malloc(const char *type, size_t size, unsigned int align) __hpm_malloc __hpm_dealloc_free
	__hpm_alloc_size(2) __hpm_alloc_align(3);

/**
 * As hpm_malloc(), and the memory is zeroed.
 *
 * @param type
 *   A string identifying the allocation; may be NULL.
 * @param size
 *   Size in bytes; 0 fails with EINVAL.
 * @param align
 *   Alignment, as for hpm_malloc().
 * @return
 *   The zeroed block, or NULL with rte_errno set.
 */
void *hpm_zmalloc(const char *type, size_t size, unsigned int align) __hpm_malloc __hpm_dealloc_free
	__hpm_alloc_size(2) __hpm_alloc_align(3);

/**
 * Allocate a zeroed array of num elements of size bytes.
 *
 * Unlike rte_calloc() (DPDK 22.11 to 25.11), an overflowing num * size fails
 * with EINVAL.
 *
 * @param type
 *   A string identifying the allocation; may be NULL.
 * @param num
 *   Number of elements.
 * @param size
 *   Size of an element in bytes.
 * @param align
 *   Alignment, as for hpm_malloc().
 * @return
 *   The zeroed block, or NULL with rte_errno set.
 */
void *hpm_calloc(const char *type, size_t num, size_t size,
	unsigned int align) __hpm_malloc __hpm_dealloc_free __hpm_alloc_size(2, 3)
	__hpm_alloc_align(4);

/**
 * Resize a block, in place when it can, else by moving its contents (up to
 * the smaller of the old and the new size) to a new block.
 *
 * Unlike rte_realloc() (DPDK 22.11 to 25.11): an alignment that is not a
 * power of two always fails with EINVAL, and a size of 0 fails with EINVAL.
 *
 * @param ptr
 *   Block to resize; NULL behaves as hpm_malloc(NULL, size, align).
 * @param size
 *   New size in bytes.
 * @param align
 *   Alignment of the result, as for hpm_malloc().
 * @return
 *   The resized block, or NULL with rte_errno set; on failure @p ptr is
 *   untouched and still valid.
 */
void *hpm_realloc(void *ptr, size_t size, unsigned int align) __hpm_alloc_size(2)
	__hpm_alloc_align(3);

/**
 * As hpm_malloc(), on a given socket.
 *
 * @param type
 *   A string identifying the allocation; may be NULL.
 * @param size
 *   Size in bytes.
 * @param align
 *   Alignment, as for hpm_malloc().
 * @param socket
 *   NUMA socket, or SOCKET_ID_ANY for the caller's socket first, then the
 *   others. A socket without memory fails with EINVAL; without hugepages
 *   (EAL's --no-huge, or the anon source), like EAL, every socket means
 *   SOCKET_ID_ANY.
 * @return
 *   The block, or NULL with rte_errno set.
 */
void *hpm_malloc_socket(const char *type, size_t size, unsigned int align,
	int socket) __hpm_malloc __hpm_dealloc_free __hpm_alloc_size(2) __hpm_alloc_align(3);

/**
 * As hpm_zmalloc(), on a given socket.
 *
 * @param type
 *   A string identifying the allocation; may be NULL.
 * @param size
 *   Size in bytes.
 * @param align
 *   Alignment, as for hpm_malloc().
 * @param socket
 *   NUMA socket or SOCKET_ID_ANY, as for hpm_malloc_socket().
 * @return
 *   The zeroed block, or NULL with rte_errno set.
 */
void *hpm_zmalloc_socket(const char *type, size_t size, unsigned int align,
	int socket) __hpm_malloc __hpm_dealloc_free __hpm_alloc_size(2) __hpm_alloc_align(3);

/**
 * As hpm_calloc(), on a given socket.
 *
 * @param type
 *   A string identifying the allocation; may be NULL.
 * @param num
 *   Number of elements.
 * @param size
 *   Size of an element in bytes.
 * @param align
 *   Alignment, as for hpm_malloc().
 * @param socket
 *   NUMA socket or SOCKET_ID_ANY, as for hpm_malloc_socket().
 * @return
 *   The zeroed block, or NULL with rte_errno set.
 */
void *hpm_calloc_socket(const char *type, size_t num, size_t size, unsigned int align,
	int socket) __hpm_malloc __hpm_dealloc_free __hpm_alloc_size(2, 3) __hpm_alloc_align(4);

/**
 * As hpm_realloc(), with the new block on a given socket: a block on another
 * socket is moved.
 *
 * @param ptr
 *   Block to resize, or NULL.
 * @param size
 *   New size in bytes.
 * @param align
 *   Alignment, as for hpm_malloc().
 * @param socket
 *   NUMA socket or SOCKET_ID_ANY.
 * @return
 *   The resized block, or NULL with rte_errno set and @p ptr untouched.
 */
void *hpm_realloc_socket(void *ptr, size_t size, unsigned int align, int socket) __hpm_alloc_size(2)
	__hpm_alloc_align(3);

/**
 * Allocate IOVA-contiguous memory: the block can be given to a device as one
 * DMA range.
 *
 * @param type
 *   A string identifying the allocation; may be NULL.
 * @param size
 *   Size in bytes.
 * @param align
 *   Alignment, as for hpm_malloc().
 * @param socket
 *   NUMA socket or SOCKET_ID_ANY.
 * @return
 *   The block, or NULL with rte_errno set: ENOTSUP when the source has no
 *   IOVA (anon) or cannot read the pages' frames (hugetlbfs without
 *   CAP_SYS_ADMIN), ENOMEM when no contiguous range can be had.
 */
void *hpm_malloc_contig(const char *type, size_t size, unsigned int align,
	int socket) __hpm_malloc __hpm_dealloc_free __hpm_alloc_size(2) __hpm_alloc_align(3);

/**
 * Allocate n blocks of the same size and alignment: all or nothing.
 *
 * @param objs
 *   Array of at least n pointers to fill.
 * @param n
 *   Number of blocks.
 * @param size
 *   Size of each block in bytes.
 * @param align
 *   Alignment, as for hpm_malloc().
 * @param socket
 *   NUMA socket or SOCKET_ID_ANY.
 * @return
 *   0 with every objs[i] set, or a negative errno (-EINVAL, -ENOMEM) with
 *   nothing allocated.
 */
__hpm_wur int hpm_malloc_bulk(void **objs, unsigned int n, size_t size, unsigned int align,
	int socket);

/**
 * Free n blocks, as n calls of hpm_free().
 *
 * @param objs
 *   Blocks to free; NULL entries are skipped.
 * @param n
 *   Number of entries.
 */
void hpm_free_bulk(void *const *objs, unsigned int n);

/**
 * Usable size of a block: at least the size asked for.
 *
 * @param ptr
 *   A block returned by hpmalloc.
 * @return
 *   The usable size in bytes, or 0 if @p ptr is not a live hpmalloc block.
 */
size_t hpm_malloc_usable_size(const void *ptr);

/**
 * Whether ptr points into memory hpmalloc took from its source, whatever is
 * there now (a live block, a freed one, a free unit): one lock-free page-map
 * lookup. For a layer that sends pointers to hpmalloc or elsewhere (the
 * rte_malloc shim): what hpmalloc owns, hpmalloc frees, and reports if bad.
 *
 * @param ptr
 *   Any pointer.
 * @return
 *   1 if hpmalloc owns the memory, 0 otherwise.
 */
int hpm_malloc_owns(const void *ptr);

/**
 * Check that ptr is a live block returned by hpmalloc.
 *
 * @param ptr
 *   Pointer to check.
 * @param size
 *   If not NULL, receives the usable size of the block.
 * @return
 *   0 if the block is valid, -1 otherwise (also for NULL and foreign,
 *   interior or freed pointers: rte_malloc_validate() may crash on those).
 */
int hpm_malloc_validate(const void *ptr, size_t *size);

/**
 * Statistics of a socket's heap, with EAL's meanings:
 *  - heap_totalsz_bytes: everything the heap holds from its source on the
 *    socket, as the machine counts it: the hugepages (the source's pages)
 *    that its chunks (every unit, in use, free or retained empty) and its
 *    metadata regions (descriptors, bitmaps, page map, the caches' arrays)
 *    touch, a page two of them share counted once; with the eal source this
 *    includes the page below each memzone that EAL's element header takes.
 *    Metadata is the socket's where the source put it (a region of a socket
 *    without a heap counts on the first socket), so the sockets' totals sum
 *    to the heap's;
 *  - heap_allocsz_bytes: the live blocks the application holds, with their
 *    headers and rounding;
 *  - heap_freesz_bytes: heap_totalsz_bytes - heap_allocsz_bytes, exactly:
 *    free blocks, granules and units, the blocks per-lcore caches and the
 *    transfer store hold (free to the application: they are handed out
 *    without growing the heap), metadata and the source's overhead (the
 *    figures apart: hpm_heap_get_stats());
 *  - greatest_free_size: the largest free contiguous range in the chunks;
 *  - free_count: the number of free ranges; alloc_count: of live blocks.
 * As rte_malloc's, alloc + free = total; rte_malloc counts its own element
 * headers and padding in them the same way.
 *
 * @param socket
 *   NUMA socket.
 * @param stats
 *   Filled on success.
 * @return
 *   0, or -1 with rte_errno EINVAL for an unknown socket, or before the
 *   first allocation.
 */
int hpm_malloc_get_socket_stats(int socket, struct rte_malloc_socket_stats *stats);

/**
 * Where a socket's memory is: the parts of heap_totalsz_bytes
 * (hpm_malloc_get_socket_stats()). held = chunk + meta + overhead, and
 * chunk = live + cached + free.
 */
struct hpm_heap_stats {
	size_t held_bytes;     /**< heap_totalsz_bytes: pages held from the source */
	size_t chunk_bytes;    /**< chunks: every unit, whatever its use */
	size_t meta_bytes;     /**< metadata regions of the socket */
	size_t overhead_bytes; /**< the rest of the pages held (rounding, EAL's memzone headers) */
	size_t live_bytes;     /**< heap_allocsz_bytes: blocks the application holds */
	size_t cached_bytes;   /**< blocks in per-lcore caches and the transfer store */
	size_t free_bytes;     /**< free blocks, granules, units, size-class page tails */
	size_t empty_chunk_bytes;  /**< chunks with every unit free (in chunk_bytes) */
	unsigned int chunks;       /**< chunks held */
	unsigned int meta_regions; /**< metadata regions counted for the socket */
	/**
	 * 2 MiB units of the chunks in use now (by pages of granules or size
	 * classes, heap spans or large blocks; in chunk_bytes, a unit's free
	 * space within counted in free_bytes).
	 */
	size_t in_use_bytes;
	/**
	 * The most of in_use_bytes at once since hpm_init(): what a heap that
	 * keeps empty chunks (retain_size) holds follows it, in chunk steps.
	 */
	size_t in_use_peak_bytes;
};

/**
 * Where a socket's memory is, in parts (struct hpm_heap_stats).
 *
 * @param socket
 *   NUMA socket.
 * @param stats
 *   Filled on success.
 * @return
 *   0, or -1 with rte_errno EINVAL for an unknown socket or before the first
 *   allocation, ENOMEM when no room for the walk, ENOTRECOVERABLE for a torn
 *   heap.
 */
int hpm_heap_get_stats(int socket, struct hpm_heap_stats *stats);

/**
 * Print the statistics of every socket, as rte_malloc_dump_stats().
 *
 * @param f
 *   Stream to print to.
 * @param type
 *   Ignored, as in DPDK.
 */
void hpm_malloc_dump_stats(FILE *f, const char *type);

/**
 * Print every socket's heap: statistics, chunks, units by role with the
 * bytes free in them, and every lcore's cache. The same figures are in
 * rte_telemetry: /hpm/stats, /hpm/heap_info,<socket>, /hpm/caches[,<lcore>].
 *
 * @param f
 *   Stream to print to.
 */
void hpm_malloc_dump_heaps(FILE *f);

/**
 * IO address of a byte of an hpmalloc block.
 *
 * @param addr
 *   Address inside a live block.
 * @return
 *   Its IOVA, or RTE_BAD_IOVA if it is not hpmalloc memory or the source has
 *   no IOVA (anon).
 */
rte_iova_t hpm_malloc_virt2iova(const void *addr);

/**
 * Caches of threads without an lcore id have ids from this one on, after the
 * lcores': HPM_CACHE_THREAD_SLOTS of them (a thread takes one at its first
 * call and gives it back at its exit; when all are taken, the locked path).
 */
#define HPM_CACHE_THREAD_SLOT0 RTE_MAX_LCORE
/** How many caches threads without an lcore id can have at once. */
#define HPM_CACHE_THREAD_SLOTS 128

/**
 * Statistics of a per-lcore cache (of one class, or summed over its classes).
 */
struct hpm_cache_stats {
	uint64_t hits;    /**< allocations served from the cache */
	uint64_t misses;  /**< refills from the socket's heap (a batch each) */
	uint64_t flushes; /**< batches given back to the socket's heap */
	uint64_t blocks;  /**< blocks held now */
	size_t bytes;     /**< bytes held now */
	uint64_t limit;   /**< blocks the cache may hold now (it follows the heap's size) */
	int socket;       /**< socket the cache serves */
};

/**
 * Give the calling thread's cached blocks back to the heap, with those its
 * socket's caches passed to each other (its lcore's
 * cache, or its own if it has no lcore id). The heap does this itself
 * before it grows, and a thread without an lcore id at its exit; an
 * application calls it when a thread is done with allocations for a while.
 */
void hpm_cache_flush(void);

/**
 * Give another lcore's cached blocks back to the heap. The caller must make
 * sure that lcore runs no hpmalloc call meanwhile (e.g. after
 * rte_eal_wait_lcore()). Caches of dead processes come back by themselves
 * (at the next trim or check).
 *
 * @param lcore_id
 *   The lcore, or HPM_CACHE_THREAD_SLOT0 + n for the n-th cache of threads
 *   without an lcore id.
 * @return
 *   0, or -EINVAL for an id out of range.
 */
int hpm_cache_flush_lcore(unsigned int lcore_id);

/**
 * Statistics of an lcore's cache.
 *
 * @param lcore_id
 *   The lcore, or HPM_CACHE_THREAD_SLOT0 + n for the n-th cache of threads
 *   without an lcore id (plain pthreads; every thread without EAL).
 * @param cls
 *   A class (0 to hpm_cache_class_count() - 1), or -1 for all of them.
 * @param stats
 *   Filled on success.
 * @return
 *   0, -ENOENT if the lcore has no cache (yet), -EINVAL for bad arguments.
 */
int hpm_cache_stats(unsigned int lcore_id, int cls, struct hpm_cache_stats *stats);

/**
 * Number of cache classes.
 *
 * @return
 *   The number of classes.
 */
unsigned int hpm_cache_class_count(void);

/**
 * Largest request size a cache class serves (with alignment up to 64 bytes
 * for the small classes; 4 KiB and 64 KiB classes serve single aligned
 * granules).
 *
 * @param cls
 *   A class.
 * @return
 *   The size in bytes, 0 for a bad class.
 */
size_t hpm_cache_class_size(unsigned int cls);

/**
 * Give every socket's empty chunks beyond retain_size back to the source now,
 * without waiting for hpm_config::release_delay_ms; the empty pages each
 * kind keeps for reuse go first. Blocks held by per-lcore caches stay: call
 * hpm_cache_flush() before to give those back too (the caches of processes
 * found dead are given back first).
 *
 * @return
 *   The number of bytes given back: how much the sockets' heap_totalsz_bytes
 *   went down (the chunks, and the pages the source held around them), less
 *   what other threads made the heap grow meanwhile.
 */
size_t hpm_heap_trim(void);

/**
 * As hpm_heap_trim(), but every empty chunk goes back to the source, the
 * retain_size kept for reuse too, after the calling thread's cache is
 * flushed; a socket whose lock is held (by another thread, or by the caller
 * itself while the heap grows) is skipped. For a caller that needs the
 * source's memory for something else now (the shim, when
 * rte_memzone_reserve() runs out of memory).
 *
 * @return
 *   The number of bytes given back, as hpm_heap_trim().
 */
size_t hpm_heap_trim_all(void);

/**
 * Check the heap's invariants: every structure of every socket.
 *
 * Caches of processes found dead are given back to the heap first.
 *
 * @return
 *   0 if the heap is consistent, else a negative errno after logging what
 *   is wrong: -EFAULT for a broken invariant, -ENOTRECOVERABLE when a
 *   process died holding a socket's lock.
 */
int hpm_heap_check(void);

/**
 * Print the live blocks grouped by their type string (debug mode only):
 * what an application still holds, e.g. at its exit, and what it leaks.
 *
 * @param f
 *   Stream to print to.
 */
void hpm_malloc_dump_leaks(FILE *f);

/**
 * Number of blocks found written outside their bounds (debug mode: broken
 * canaries, at free or by hpm_heap_check()).
 *
 * @return
 *   The count; 0 when debug mode is off.
 */
uint64_t hpm_debug_corruption_count(void);

/**
 * Number of bad pointers (foreign, interior, already freed) given to
 * hpm_free() or hpm_realloc() since hpm_init().
 *
 * @return
 *   The count.
 */
uint64_t hpm_bad_free_count(void);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif /* HPM_MALLOC_H */
