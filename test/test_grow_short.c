/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * A source that is short (EAL with --socket-limit): the empty chunks the
 * heap keeps for reuse go back before a request fails. The heap kept its
 * empty chunks up to retain_size and asked EAL for a new chunk for a block
 * no empty chunk could hold: EAL had too little left, the block failed with
 * ENOMEM while the heap held 64 MiB of nothing. The case fills 64 MiB with
 * 2 MiB blocks (chunks of 16 MiB), frees them all (kept: retain_size is
 * 64 MiB, the release delay a minute), then asks for 48 MiB under a limit
 * of 112 MiB: it succeeds, its memory is written and read back, and the
 * heap checks; after the free nothing is live.
 *
 * A step the source refuses at the request's alignment: EAL gives no 16 MiB
 * memzone aligned to 4 MiB, and a 2 MiB block aligned to 4 MiB failed with
 * ENOMEM from the fifth on (rte_malloc serves it). The heap grows by the
 * request's own units then: NALIGNED such blocks, aligned, written, read.
 */

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>

#include "hpm_malloc.h"
#include "test_common.h"

#define MIB(n) ((size_t)(n) << 20)
#define NFILL 32
#define NALIGNED 12

static void
check_aligned_growth(void)
{
	struct rte_malloc_socket_stats st;
	struct hpm_config cfg;
	uint8_t *p[NALIGNED];
	unsigned int i, ok = 0;

	hpm_config_defaults(&cfg);
	cfg.source = HPM_SOURCE_EAL;
	CHECK(hpm_init(&cfg) == 0, "hpm_init again");
	for (i = 0; i < NALIGNED; i++) {
		p[i] = hpm_malloc("aligned", MIB(2), MIB(4));
		CHECK(p[i] != NULL, "2 MiB aligned to 4 MiB, block %u: rte_errno %d", i, rte_errno);
		if (p[i] == NULL)
			continue;
		CHECK(((uintptr_t)p[i] & (MIB(4) - 1)) == 0, "block %u at %p", i, (void *)p[i]);
		memset(p[i], (int)i + 1, MIB(2));
	}
	for (i = 0; i < NALIGNED; i++)
		if (p[i] != NULL && p[i][0] == i + 1 && p[i][MIB(2) - 1] == i + 1)
			ok++;
	CHECK(ok == NALIGNED, "%u of %u aligned blocks kept their contents", ok, NALIGNED);
	CHECK(hpm_heap_check() == 0, "heap check with the aligned blocks");
	for (i = 0; i < NALIGNED; i++)
		hpm_free(p[i]);
	CHECK(hpm_malloc_get_socket_stats(0, &st) == 0 && st.alloc_count == 0,
		"%u blocks left after the aligned ones", st.alloc_count);
	hpm_fini();
}

int
main(void)
{
	struct rte_malloc_socket_stats st;
	struct hpm_heap_stats hs;
	struct hpm_config cfg;
	void *fill[NFILL];
	unsigned int i;
	uint8_t *big;
	size_t off;

	if (test_eal_init("grow_short", "-l", "0", "--no-pci", "--socket-limit", "112", NULL) !=
		0) {
		printf("grow_short: EAL cannot start, skipped\n");
		return TEST_SKIP;
	}
	hpm_config_defaults(&cfg);
	cfg.source = HPM_SOURCE_EAL;
	cfg.chunk_size = MIB(16);
	cfg.retain_size = MIB(64);
	cfg.release_delay_ms = 60000;
	CHECK(hpm_init(&cfg) == 0, "hpm_init");
	for (i = 0; i < NFILL; i++) {
		fill[i] = hpm_malloc("fill", MIB(2), 0);
		CHECK(fill[i] != NULL, "fill %u: rte_errno %d", i, rte_errno);
	}
	for (i = 0; i < NFILL; i++)
		hpm_free(fill[i]);
	CHECK(hpm_heap_get_stats(0, &hs) == 0, "stats");
	printf("after the fill: %u chunks, %zu MiB empty\n", hs.chunks, hs.empty_chunk_bytes >> 20);
	CHECK(hs.empty_chunk_bytes >= MIB(48), "%zu MiB of empty chunks kept, 48 expected",
		hs.empty_chunk_bytes >> 20);

	big = hpm_malloc("big", MIB(48), 0);
	CHECK(big != NULL, "48 MiB with %zu MiB of empty chunks kept: rte_errno %d",
		hs.empty_chunk_bytes >> 20, rte_errno);
	if (big != NULL) {
		for (off = 0; off < MIB(48); off += 4096)
			big[off] = (uint8_t)(off >> 12);
		for (off = 0; off < MIB(48); off += 4096)
			if (big[off] != (uint8_t)(off >> 12))
				break;
		CHECK(off == MIB(48), "48 MiB block: byte %zu", off);
	}
	CHECK(hpm_heap_get_stats(0, &hs) == 0, "stats");
	printf("with the 48 MiB block: %u chunks, %zu MiB empty\n", hs.chunks,
		hs.empty_chunk_bytes >> 20);
	CHECK(hpm_heap_check() == 0, "heap check");
	hpm_free(big);
	CHECK(hpm_malloc_get_socket_stats(0, &st) == 0 && st.alloc_count == 0, "%u blocks left",
		st.alloc_count);
	CHECK(hpm_heap_check() == 0, "heap check after the free");
	hpm_fini();
	check_aligned_growth();
	return test_end("grow_short");
}
