/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * A write of up to 64 bytes past the last block of a chunk stays in
 * hpmalloc's memory. With EAL's memzones, what follows a chunk's memzone is
 * EAL's own: the header (struct malloc_elem) of the next element, often
 * another memzone's, which EAL trusts when either is freed. Blocks of every
 * route that can end at a unit's end (runs of whole units, 64K and 4K
 * granules, size classes that fill their pages, heap blocks) are allocated
 * over many chunks; for every block, the 64 bytes past its usable end must
 * lie inside the memzone that holds it. Then the last block of each memzone
 * is overrun by 64 bytes, everything is freed, hpmalloc gives its memzones
 * back (hpm_fini), and EAL's heap must still serve and take back a block as
 * large as all of them (before the fix: EAL crashed, or refused). Under
 * AddressSanitizer the layout alone: it reports the overrun itself.
 *
 * usage: test_chunk_end [prealloc]  (prealloc: EAL's memory reserved up
 * front with --socket-mem, memzones cut from it; default: EAL maps hugepages
 * as memzones are asked for)
 */

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_memzone.h>

#include "hpm_malloc.h"
#include "test_common.h"

#define MIB(n) ((size_t)(n) << 20)
#define NBLOCKS 6000
#define GUARD 64

struct zone {
	uintptr_t start;
	uintptr_t end;
	/* the block that ends last in it, and where */
	uint8_t *last;
	uintptr_t last_end;
};

static struct zone zones[512];
static unsigned int nzones;

static void
zone_cb(const struct rte_memzone *mz, void *arg)
{
	RTE_SET_USED(arg);
	if (strncmp(mz->name, "hpm_", 4) != 0 || nzones >= RTE_DIM(zones))
		return;
	zones[nzones].start = (uintptr_t)mz->addr;
	zones[nzones].end = (uintptr_t)mz->addr + mz->len;
	zones[nzones].last = NULL;
	zones[nzones].last_end = 0;
	nzones++;
}

static struct zone *
zone_of(const void *p)
{
	unsigned int i;

	for (i = 0; i < nzones; i++)
		if ((uintptr_t)p >= zones[i].start && (uintptr_t)p < zones[i].end)
			return &zones[i];
	return NULL;
}

int
main(int argc, char **argv)
{
	/* size, alignment: runs of units, granules, size classes that fill a page, heap */
	static const struct {
		size_t size;
		unsigned int align;
	} kinds[] = {
		{MIB(2), 0},
		{MIB(2), MIB(2)},
		{65536, 65536},
		{4096, 4096},
		{64, 0},
		{32768, 0},
		{1000, 0},
		{200000, 0},
	};
	bool prealloc = argc > 1 && strcmp(argv[1], "prealloc") == 0;
	struct rte_malloc_socket_stats st;
	static uint8_t *blocks[NBLOCKS];
	unsigned int i, n = 0, outside = 0, unknown = 0, overrun = 0;
	struct hpm_config cfg;
	size_t total = 0;
	void *big;
	int rc;

	rc = prealloc
		? test_eal_init("chunk_end", "-l", "0", "--no-pci", "--socket-mem", "512",
			  "--socket-limit", "512", NULL)
		: test_eal_init("chunk_end", "-l", "0", "--no-pci", "--socket-limit", "512", NULL);
	if (rc != 0) {
		printf("chunk_end: EAL cannot start, skipped\n");
		return TEST_SKIP;
	}
	hpm_config_defaults(&cfg);
	cfg.source = HPM_SOURCE_EAL;
	CHECK(hpm_init(&cfg) == 0, "hpm_init: rte_errno %d", rte_errno);
	while (n < NBLOCKS && total < MIB(300)) {
		size_t size = kinds[n % RTE_DIM(kinds)].size;

		blocks[n] = hpm_malloc("chunk_end", size, kinds[n % RTE_DIM(kinds)].align);
		if (blocks[n] == NULL)
			break;
		total += size;
		n++;
	}
	CHECK(total >= MIB(200), "%zu MiB allocated in %u blocks", total >> 20, n);
	rte_memzone_walk(zone_cb, NULL);
	CHECK(nzones >= 4, "%u memzones of hpmalloc's", nzones);
	for (i = 0; i < n; i++) {
		uintptr_t end = (uintptr_t)blocks[i] + hpm_malloc_usable_size(blocks[i]);
		struct zone *z = zone_of(blocks[i]);

		if (z == NULL) {
			unknown++;
			continue;
		}
		if (end + GUARD > z->end) {
			if (outside++ < 5)
				printf("block %p (%zu bytes usable) ends at %#" PRIxPTR
				       ", %" PRIuPTR " bytes before its memzone's end\n",
					(void *)blocks[i], hpm_malloc_usable_size(blocks[i]), end,
					z->end - end);
		}
		if (end > z->last_end) {
			z->last_end = end;
			z->last = blocks[i];
		}
	}
	CHECK(unknown == 0, "%u blocks in no memzone of hpmalloc's", unknown);
	CHECK(outside == 0, "%u of %u blocks end less than %u bytes before their memzone's end",
		outside, n, GUARD);
	/* the write past the last block of each memzone: hpmalloc's bytes, or EAL's */
	fflush(stdout);
	for (i = 0; i < nzones && !TEST_ASAN; i++)
		if (zones[i].last != NULL) {
			memset((void *)zones[i].last_end, 0xa5, GUARD);
			overrun++;
		}
	printf("%u blocks (%zu MiB) in %u memzones; %u of them overrun past their last block\n", n,
		total >> 20, nzones, overrun);
	for (i = 0; i < n; i++)
		hpm_free(blocks[i]);
	hpm_fini();
	CHECK(rte_malloc_get_socket_stats(0, &st) == 0, "EAL's stats");
	big = rte_malloc("chunk_end", MIB(300), 0);
	CHECK(big != NULL, "EAL: 300 MiB after hpmalloc's memzones went back: rte_errno %d",
		rte_errno);
	if (big != NULL) {
		memset(big, 1, MIB(300));
		rte_free(big);
	}
	return test_end("chunk_end");
}
