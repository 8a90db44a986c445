/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * DMA-style buffers: 4 KiB buffers aligned to 4 KiB and 64 KiB buffers
 * aligned to 64 KiB, each with the IO address a device would be given
 * (hpm_malloc_virt2iova()), a burst of them in one call (hpm_malloc_bulk()),
 * and one IOVA-contiguous block for a descriptor ring (hpm_malloc_contig()),
 * and a data path's buffer per packet, taken and given back inline
 * (hpm_inline.h: the cache hit compiled into the loop, as rte_mempool_get()).
 * Each costs exactly its size: granule pages hold them without headers or
 * alignment padding. Checks: alignment, IOVA (that of EAL, aligned as the
 * address, contiguous across the buffer), and the heap back to the start.
 *
 *   aligned_buffers -l 0 --no-pci [--iova-mode=va]
 */

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_memory.h>

#include <hpm_inline.h>
#include <hpm_malloc.h>

#define NBUF 64
#define BURST 32
#define RING_SIZE (1 << 20)

static int failed;

#define CHECK(cond)                                                              \
	do {                                                                     \
		if (!(cond)) {                                                   \
			fprintf(stderr, "aligned_buffers: failed: %s\n", #cond); \
			failed = 1;                                              \
		}                                                                \
	} while (0)

/* What a driver needs of a DMA buffer, checked page by page against EAL. */
static void
check_dma(const char *what, const void *buf, size_t size, size_t align)
{
	rte_iova_t iova = hpm_malloc_virt2iova(buf);
	size_t off;

	CHECK(((uintptr_t)buf & (align - 1)) == 0);
	CHECK(iova != RTE_BAD_IOVA);
	CHECK(iova == rte_mem_virt2iova(buf));
	/* a device sees it aligned as the CPU does */
	CHECK((iova & (align - 1)) == 0);
	/* one IOVA range: every 4 KiB page where the first one says */
	for (off = 0; off < size; off += 4096)
		CHECK(rte_mem_virt2iova((const uint8_t *)buf + off) == iova + off);
	if (what != NULL)
		printf("%-22s va %p iova 0x%" PRIx64 "\n", what, buf, iova);
}

/* Bytes held by blocks on every socket (rte_malloc's statistics). */
static size_t
held(void)
{
	struct rte_malloc_socket_stats s;
	size_t sum = 0;
	unsigned int i;

	for (i = 0; i < rte_socket_count(); i++)
		if (hpm_malloc_get_socket_stats(rte_socket_id_by_idx(i), &s) == 0)
			sum += s.heap_allocsz_bytes;
	return sum;
}

int
main(int argc, char **argv)
{
	void *small[NBUF], *large[NBUF], *burst[BURST], *ring;
	size_t before;
	int i;

	if (rte_eal_init(argc, argv) < 0) {
		fprintf(stderr, "aligned_buffers: cannot start EAL\n");
		return 1;
	}
	printf("IOVA mode %s\n", rte_eal_iova_mode() == RTE_IOVA_VA ? "VA" : "PA");
	/* start hpmalloc now, so that the statistics below exist */
	if (hpm_init(NULL) != 0) {
		fprintf(stderr, "aligned_buffers: hpm_init failed\n");
		return 1;
	}
	before = held();

	for (i = 0; i < NBUF; i++) {
		small[i] = hpm_malloc("rx_buf", 4096, 4096);
		large[i] = hpm_malloc("tso_buf", 65536, 65536);
		if (small[i] == NULL || large[i] == NULL) {
			fprintf(stderr, "aligned_buffers: %s\n", rte_strerror(rte_errno));
			return 1;
		}
		check_dma(i < 2 ? "4 KiB, align 4 KiB" : NULL, small[i], 4096, 4096);
		check_dma(i < 2 ? "64 KiB, align 64 KiB" : NULL, large[i], 65536, 65536);
	}
	/* exactly their size: no header, no padding */
	CHECK(held() - before == NBUF * (size_t)(4096 + 65536));

	/* a burst in one call: all or nothing */
	if (hpm_malloc_bulk(burst, BURST, 4096, 4096, SOCKET_ID_ANY) != 0) {
		fprintf(stderr, "aligned_buffers: hpm_malloc_bulk failed\n");
		return 1;
	}
	for (i = 0; i < BURST; i++)
		check_dma(i == 0 ? "bulk, 4 KiB" : NULL, burst[i], 4096, 4096);

	/* a descriptor ring: one IOVA range of 1 MiB */
	ring = hpm_malloc_contig("desc_ring", RING_SIZE, 4096, SOCKET_ID_ANY);
	if (ring == NULL) {
		fprintf(stderr, "aligned_buffers: hpm_malloc_contig: %s\n",
			rte_strerror(rte_errno));
		return 1;
	}
	check_dma("contig ring, 1 MiB", ring, RING_SIZE, 4096);

	/* a data path: a buffer per packet, inline (a call only when the cache misses) */
	for (i = 0; i < 100000; i++) {
		uint8_t *pkt = hpm_malloc_inline("pkt", 4096, 4096);

		CHECK(pkt != NULL && ((uintptr_t)pkt & 4095) == 0);
		if (pkt == NULL)
			break;
		pkt[0] = (uint8_t)i;
		hpm_free_inline(pkt);
	}

	hpm_free(ring);
	hpm_free_bulk(burst, BURST);
	for (i = 0; i < NBUF; i++) {
		hpm_free(small[i]);
		hpm_free(large[i]);
	}
	CHECK(held() == before);
	CHECK(hpm_heap_check() == 0 && hpm_bad_free_count() == 0);
	hpm_fini();
	rte_eal_cleanup();
	printf("aligned_buffers: %s\n", failed ? "FAILED" : "OK");
	return failed;
}
