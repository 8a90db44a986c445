/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The empty pages the block allocators keep for reuse go back to the chunks
 * before the heap grows. The size classes keep an empty page (the spare) and
 * an empty unit, the granule pages an empty page, so that a class used by
 * one block at a time does not make and unmake a page per block; but the
 * heap grew for another allocator's page while they sat there. On anonymous
 * memory in chunks of one unit, without caches (no page is a cache's):
 *
 * - a 3000-byte block and its free leave its unit to the size classes, all
 *   the heap holds; a run of three 4 KiB granules then takes that unit: the
 *   heap holds one unit, not two;
 * - the run's free leaves the unit an empty granule page; a 3000-byte block
 *   then takes it back: still one unit;
 * - a 2 MiB block then takes the unit the size classes keep empty: one unit;
 *   beside it, the first two steps again: two units, no third.
 *
 * Each block is written and read back, the heap checks after each step, and
 * nothing is live after the drain.
 */

#include <stdio.h>
#include <string.h>

#include <rte_errno.h>

#include "hpm_malloc.h"
#include "test_common.h"

#define MIB(n) ((size_t)(n) << 20)

static size_t
chunk_bytes(void)
{
	struct hpm_heap_stats hs;

	memset(&hs, 0, sizeof(hs));
	CHECK(hpm_heap_get_stats(0, &hs) == 0, "stats: rte_errno %d", rte_errno);
	return hs.chunk_bytes;
}

/* A block of size at align, written and read back; NULL (checked) if none. */
static void *
block(size_t size, unsigned int align, int fill)
{
	uint8_t *p = hpm_malloc("spare", size, align);
	size_t i;

	CHECK(p != NULL, "%zu bytes at %u: rte_errno %d", size, align, rte_errno);
	if (p == NULL)
		return NULL;
	memset(p, fill, size);
	for (i = 0; i < size && p[i] == (uint8_t)fill; i++)
		;
	CHECK(i == size, "%zu bytes at %u: byte %zu not kept", size, align, i);
	return p;
}

/* The heap holds held bytes of chunks after step. */
static void
held_is(const char *what, const char *step, size_t held)
{
	size_t now = chunk_bytes();

	CHECK(now == held, "%s: %s: %zu MiB held, %zu expected", what, step, now >> 20, held >> 20);
}

/* A size-class block, then a granule run, then a size-class block, each freed before the next. */
static void
alternate(const char *what, size_t held)
{
	void *p;

	p = block(3000, 0, 0x11);
	hpm_free(p);
	held_is(what, "a size-class block", held);
	p = block(3 * 4096, 4096, 0x22);
	held_is(what, "a granule run beside the size classes' empty unit", held);
	CHECK(hpm_heap_check() == 0, "%s: heap check with the run", what);
	hpm_free(p);
	p = block(3000, 0, 0x33);
	held_is(what, "a size-class block beside the empty granule page", held);
	CHECK(hpm_heap_check() == 0, "%s: heap check with the block", what);
	hpm_free(p);
}

int
main(void)
{
	struct hpm_heap_stats hs;
	struct hpm_config cfg;
	void *big;

	hpm_config_defaults(&cfg);
	cfg.source = HPM_SOURCE_ANON;
	cfg.chunk_size = MIB(2);
	cfg.flags |= HPM_CFG_F_NO_CACHE;
	CHECK(hpm_init(&cfg) == 0, "hpm_init");
	alternate("alone", MIB(2));
	/* a unit of live memory: the empty one the size classes keep, not a new one */
	big = block(MIB(2), MIB(2), 0x44);
	CHECK(chunk_bytes() == MIB(2), "%zu MiB held with a 2 MiB block, 2 expected",
		chunk_bytes() >> 20);
	/* beside it, the classes' unit: the heap grows once, for them */
	alternate("beside a 2 MiB block", MIB(4));
	hpm_free(big);
	memset(&hs, 0, sizeof(hs));
	CHECK(hpm_heap_get_stats(0, &hs) == 0 && hs.live_bytes == 0,
		"%zu bytes live after the drain", hs.live_bytes);
	CHECK(hpm_heap_check() == 0, "heap check after the drain");
	hpm_fini();
	return test_end("spare_reuse");
}
