/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The release delay: an empty chunk beyond retain_size goes back once it
 * has been empty release_delay_ms, at the next give of units to the chunks,
 * whichever chunk that is. It went back only when the give emptied a chunk
 * too: an application that then only shrank or freed inside chunks in use
 * kept it for good. On anonymous memory, retain 0, a delay of 100 ms, one
 * chunk per block: A, B, D of 4 MiB; A is freed (its chunk empty, kept for
 * the delay: checked), 300 ms later B shrinks in place to 2 MiB (a unit
 * back to B's chunk, which stays in use): A's chunk is gone; B keeps its
 * contents, the heap checks, nothing is left after the drain.
 *
 * Spares: a released chunk's descriptor is kept for a later chunk it has
 * room for (chunk.c). It had room for its own chunk's units exactly, though
 * its metadata class (a power of two) holds more: a heap whose every chunk
 * was larger than the last kept one more spare each time (the metadata of
 * an empty heap grew with the square of the cycles). With delay 0, blocks
 * of k x 2 MiB for k = 1 .. 200, each freed at once: the spares' metadata
 * grows by no more than 256 KiB between cycle 100 and 200 (it grew 3 MiB
 * before).
 *
 * A request the source refuses makes the heap give its empty chunks back
 * and ask again, but only when they add up to the request: 16 TiB on
 * anonymous memory keeps the 16 MiB kept (every failed giant request
 * emptied the heap, and the fuzzer mapped its chunks again at half speed).
 *
 * A released chunk's addresses are no longer hpmalloc's (hpm_malloc_owns():
 * the shim routes on it), and empty chunks up to retain_size, inclusive,
 * are kept: two chunks of 6 MiB under a retain_size of 12 MiB stay.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_errno.h>

#include "hpm_malloc.h"
#include "state.h"
#include "test_common.h"

#define MIB(n) ((size_t)(n) << 20)
#define SPARE_CYCLES 200u

/* Bytes of the released chunks' descriptors kept as spares (chunk.c). */
static size_t
spare_bytes(void)
{
	return hpm_state->arenas[hpm_state->socket_ids[0]].cs.spare_bytes;
}

static struct hpm_heap_stats
stats(void)
{
	struct hpm_heap_stats hs;

	memset(&hs, 0, sizeof(hs));
	CHECK(hpm_heap_get_stats(0, &hs) == 0, "stats");
	return hs;
}

int
main(void)
{
	struct hpm_heap_stats hs;
	struct hpm_config cfg;
	uint8_t *a, *b, *d, *b2;
	size_t i, spares_half = 0;

	hpm_config_defaults(&cfg);
	cfg.source = HPM_SOURCE_ANON;
	cfg.chunk_size = MIB(2);
	cfg.retain_size = 0;
	cfg.release_delay_ms = 100;
	CHECK(hpm_init(&cfg) == 0, "hpm_init");
	a = hpm_malloc("a", MIB(4), 0);
	b = hpm_malloc("b", MIB(4), 0);
	d = hpm_malloc("d", MIB(4), 0);
	CHECK(a != NULL && b != NULL && d != NULL, "4 MiB blocks: rte_errno %d", rte_errno);
	if (a == NULL || b == NULL || d == NULL)
		return test_end("release_delay");
	for (i = 0; i < MIB(2); i++)
		b[i] = (uint8_t)(i * 7);
	hpm_free(a);
	hs = stats();
	CHECK(hs.empty_chunk_bytes == MIB(4), "A's chunk kept for the delay: %zu bytes empty",
		hs.empty_chunk_bytes);
	usleep(300 * 1000);
	b2 = hpm_realloc(b, MIB(2), 0);
	CHECK(b2 == b, "B shrunk in place: %p, was %p", (void *)b2, (void *)b);
	hs = stats();
	printf("after B's shrink: %u chunks, %zu MiB empty\n", hs.chunks,
		hs.empty_chunk_bytes >> 20);
	CHECK(hs.empty_chunk_bytes == 0, "A's chunk past its delay kept: %zu bytes empty",
		hs.empty_chunk_bytes);
	CHECK(!hpm_malloc_owns(a) && !hpm_malloc_owns(a + MIB(3)),
		"A's released chunk still looks like hpmalloc's");
	if (b2 != NULL) {
		for (i = 0; i < MIB(2) && b2[i] == (uint8_t)(i * 7); i++)
			;
		CHECK(i == MIB(2), "B's contents: byte %zu", i);
	}
	CHECK(hpm_heap_check() == 0, "heap check");
	hpm_free(b2 != NULL ? b2 : b);
	hpm_free(d);
	hs = stats();
	CHECK(hs.live_bytes == 0, "%zu bytes live after the drain", hs.live_bytes);
	CHECK(hpm_heap_check() == 0, "heap check after the drain");
	hpm_fini();

	cfg.release_delay_ms = 0;
	CHECK(hpm_init(&cfg) == 0, "hpm_init, delay 0");
	for (i = 1; i <= SPARE_CYCLES; i++) {
		void *p = hpm_malloc("growing", i * MIB(2), 0);

		CHECK(p != NULL, "%zu MiB: rte_errno %d", i * 2, rte_errno);
		hpm_free(p);
		if (i == SPARE_CYCLES / 2)
			spares_half = spare_bytes();
	}
	hs = stats();
	printf("spares: %zu KiB of descriptors after %u growing chunks, %zu KiB after %u\n",
		spares_half >> 10, SPARE_CYCLES / 2, spare_bytes() >> 10, SPARE_CYCLES);
	CHECK(spare_bytes() <= spares_half + (256u << 10),
		"spares: %zu KiB after %u chunks, %zu after %u", spare_bytes() >> 10, SPARE_CYCLES,
		spares_half >> 10, SPARE_CYCLES / 2);
	CHECK(hs.chunks == 0 && hs.live_bytes == 0, "%u chunks, %zu bytes live", hs.chunks,
		hs.live_bytes);
	CHECK(hpm_heap_check() == 0, "heap check after the growing chunks");
	hpm_fini();

	/* a request the source refuses, larger than the empty chunks together, keeps them */
	cfg.retain_size = MIB(64);
	CHECK(hpm_init(&cfg) == 0, "hpm_init, retain 64 MiB");
	hpm_free(hpm_malloc("kept", MIB(16), 0));
	hs = stats();
	CHECK(hs.empty_chunk_bytes >= MIB(16), "%zu bytes of empty chunks kept",
		hs.empty_chunk_bytes);
	a = hpm_malloc("giant", (size_t)1 << 44, 0);
	CHECK(a == NULL && rte_errno == ENOMEM, "16 TiB: %p, rte_errno %d", (void *)a, rte_errno);
	hpm_free(a);
	CHECK(stats().empty_chunk_bytes == hs.empty_chunk_bytes,
		"a refused 16 TiB gave back the empty chunks: %zu bytes left of %zu",
		stats().empty_chunk_bytes, hs.empty_chunk_bytes);
	hpm_fini();

	/* empty chunks adding up to retain_size exactly are all kept */
	cfg.chunk_size = MIB(8);
	cfg.retain_size = MIB(12);
	CHECK(hpm_init(&cfg) == 0, "hpm_init, retain 12 MiB");
	a = hpm_malloc("six", MIB(6), 0);
	b = hpm_malloc("six", MIB(6), 0);
	hs = stats();
	CHECK(a != NULL && b != NULL && hs.chunks == 2 && hs.chunk_bytes == MIB(12),
		"two 6 MiB blocks: %u chunks, %zu MiB", hs.chunks, hs.chunk_bytes >> 20);
	hpm_free(a);
	hpm_free(b);
	hs = stats();
	CHECK(hs.chunks == 2 && hs.empty_chunk_bytes == MIB(12),
		"retain_size 12 MiB: %u chunks, %zu MiB empty kept", hs.chunks,
		hs.empty_chunk_bytes >> 20);
	hpm_fini();
	return test_end("release_delay");
}
