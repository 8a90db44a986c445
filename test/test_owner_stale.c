/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Stale owner-table entries (owner.h). Each process keeps its own table of
 * the unit descriptors of the chunks it has seen; when another process
 * releases a chunk, this process's entries for it stay. A chunk's metadata
 * used to go back to the metadata free lists and come out zeroed for the
 * next chunk: a stale entry then read a descriptor of address 0 and mask 0,
 * which passed the free's one test for every pointer, and the free took the
 * block's own first byte for its state byte (a secondary freed a 4 KiB
 * block whose first byte was 0x33 into the 64 KiB class, and handed it out
 * as 64 KiB). The case plays the other process in one: on anonymous memory,
 * retain 0 and release delay 0, a block of 24 MiB makes a chunk of 12 units,
 * whose descriptors the case notes; the block is freed and the chunk goes
 * back; a block of 16 MiB makes a chunk of 8 units (its metadata of the same
 * size class), 3000 blocks of 4 KiB the next chunks; the entries of their units
 * are set back to the last 4 noted descriptors, as another process's table would
 * still hold them. Then each block, its first byte that of a cached 64 KiB
 * block, is freed; 64 KiB blocks are allocated, each 64 KiB long in the
 * heap (one of those 4 KiB blocks in the 64 KiB class was the bug; 64 KiB
 * blocks share the pages of 4 KiB granules, so one may start where a freed
 * 4 KiB block did); the rest keep their contents, the heap checks, and
 * after the drain no block is left. The frees put the right descriptors
 * back in the table (learnt from the page map), so that later frees of
 * those units are not all sent to the locked path.
 */

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "hpm_malloc.h"
#include "lcore_cache.h"
#include "owner.h"
#include "state.h"
#include "test_common.h"

#define BIG_UNITS 12
#define NSMALL 3000
#define NFREE 64

static void *small[NSMALL];
static void *big64k[NFREE];

int
main(void)
{
	struct hpm_unit *stale[BIG_UNITS];
	struct rte_malloc_socket_stats st;
	struct hpm_config cfg;
	unsigned int i, k, redirected = 0, twice = 0, damaged = 0, stale_left;
	uint8_t *big, *mid;

	hpm_config_defaults(&cfg);
	cfg.source = HPM_SOURCE_ANON;
	cfg.retain_size = 0;
	cfg.release_delay_ms = 0;
	CHECK(hpm_init(&cfg) == 0, "hpm_init");
	big = hpm_malloc("big", (size_t)BIG_UNITS << 21, 0);
	CHECK(big != NULL, "malloc 24 MiB");
	if (big == NULL)
		return test_end("owner_stale");
	for (k = 0; k < BIG_UNITS; k++) {
		stale[k] = hpm_owner_lookup(big + ((size_t)k << 21));
		CHECK(stale[k] != NULL && stale[k]->va == big + ((size_t)k << 21),
			"unit %u of the big block: descriptor %p", k, (void *)stale[k]);
	}
	hpm_free(big);
	hpm_heap_trim();
	/* a chunk of 8 units: its metadata is of the same size class as the released one's */
	mid = hpm_malloc("mid", (size_t)8 << 21, 0);
	CHECK(mid != NULL, "malloc 16 MiB");
	for (i = 0; i < NSMALL; i++) {
		small[i] = hpm_malloc("small", 4096, 4096);
		CHECK(small[i] != NULL, "malloc 4 KiB #%u", i);
		if (small[i] == NULL)
			return test_end("owner_stale");
		test_fill(small[i], 4096);
	}
	/* another process's table: the released chunk's descriptors, for the new units */
	for (i = 0; i < NSMALL; i++) {
		uintptr_t unit = (uintptr_t)small[i] >> 21;

		if (i == 0 || unit != (uintptr_t)small[i - 1] >> 21) {
			/* those past the new chunk's units most of all: its bitmap, or zeros */
			hpm_owner_set((void *)(unit << 21), 1,
				stale[BIG_UNITS - 1 - redirected % 4]);
			redirected++;
		}
	}
	printf("%u units of 4 KiB blocks, their entries set to the released chunk's last "
	       "descriptors (now: va %p, start_mask 0x%" PRIx64 ")\n",
		redirected, (void *)stale[BIG_UNITS - 1]->va, stale[BIG_UNITS - 1]->start_mask);
	/* the application's data: a first byte that reads as a cached 64 KiB block's state */
	for (i = 0; i < NFREE; i++) {
		*(uint8_t *)small[i] = hpm_cache_user_state(HPM_CACHE_C64K);
		hpm_free(small[i]);
	}
	/* the frees learnt the right descriptors: the units' later frees take the fast path */
	for (i = 0, stale_left = 0; i < NFREE; i++)
		stale_left += hpm_owner_lookup(small[i]) !=
			hpm_pagemap_lookup(&hpm_state->pagemap, small[i]);
	CHECK(stale_left == 0, "%u freed blocks' units still have a stale owner entry", stale_left);
	for (i = 0; i < NFREE; i++) {
		big64k[i] = hpm_malloc("64k", 65536, 65536);
		CHECK(big64k[i] != NULL, "malloc 64 KiB #%u", i);
		for (k = 0; k < NFREE; k++)
			twice += big64k[i] != NULL && big64k[i] == small[k] &&
				hpm_malloc_usable_size(big64k[i]) < 65536;
		if (big64k[i] != NULL)
			memset(big64k[i], 0x5a, 65536);
	}
	CHECK(twice == 0, "%u freed 4 KiB blocks handed out again as 64 KiB while 4 KiB long",
		twice);
	for (i = NFREE; i < NSMALL; i++)
		damaged += !test_intact(small[i], 4096);
	CHECK(damaged == 0, "%u live 4 KiB blocks damaged", damaged);
	CHECK(hpm_heap_check() == 0, "heap check");
	for (i = NFREE; i < NSMALL; i++)
		hpm_free(small[i]);
	for (i = 0; i < NFREE; i++)
		hpm_free(big64k[i]);
	hpm_free(mid);
	hpm_cache_flush();
	CHECK(hpm_malloc_get_socket_stats(0, &st) == 0 && st.alloc_count == 0 &&
			st.heap_allocsz_bytes == 0,
		"after the drain: %zu blocks, %zu bytes", (size_t)st.alloc_count,
		(size_t)st.heap_allocsz_bytes);
	CHECK(hpm_heap_check() == 0, "heap check after the drain");
	hpm_fini();
	return test_end("owner_stale");
}
