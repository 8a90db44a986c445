/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * First steps: start EAL, then allocate as with rte_malloc(). No hpm_init()
 * is needed: the first call starts hpmalloc on EAL's memory. Look at a
 * block and at the heap's statistics, free everything, and check that the
 * statistics are back where they started.
 *
 *   hello -l 0 --no-pci              (hugepages)
 *   hello -l 0 --no-pci --no-huge    (anonymous memory)
 */

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>

#include <hpm_malloc.h>

#define N 1000

static int failed;

#define CHECK(cond)                                                    \
	do {                                                           \
		if (!(cond)) {                                         \
			fprintf(stderr, "hello: failed: %s\n", #cond); \
			failed = 1;                                    \
		}                                                      \
	} while (0)

static void
print_stats(const char *when, const struct rte_malloc_socket_stats *s)
{
	printf("%-7s heap %zu KiB, held by blocks %zu KiB, %u blocks\n", when,
		s->heap_totalsz_bytes >> 10, s->heap_allocsz_bytes >> 10, s->alloc_count);
}

int
main(int argc, char **argv)
{
	struct rte_malloc_socket_stats start, now;
	int socket, i;
	uint64_t *table;
	size_t usable;
	char *msg;
	void *big;

	if (rte_eal_init(argc, argv) < 0) {
		fprintf(stderr, "hello: cannot start EAL\n");
		return 1;
	}
	socket = (int)rte_socket_id();

	/* as rte_malloc(): a type for debugging, a size, an alignment (0: a cache line) */
	msg = hpm_malloc("hello", 64, 0);
	if (msg == NULL) {
		fprintf(stderr, "hello: hpm_malloc: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	snprintf(msg, 64, "hello from hpmalloc, on %s memory", hpm_source_name());
	puts(msg);
	CHECK(((uintptr_t)msg & 63) == 0);
	/* a live block: valid, with at least the size asked for */
	CHECK(hpm_malloc_validate(msg, &usable) == 0 && usable >= 64);
	CHECK(hpm_malloc_usable_size(msg) == usable);
	/* statistics exist once hpmalloc has started: its first allocation did */
	CHECK(hpm_malloc_get_socket_stats(socket, &start) == 0);
	print_stats("start", &start);

	/* zeroed, then grown: what it held stays */
	table = hpm_zmalloc("table", N * sizeof(*table), 0);
	CHECK(table != NULL);
	for (i = 0; table != NULL && i < N; i++) {
		CHECK(table[i] == 0);
		table[i] = i;
	}
	table = hpm_realloc(table, 4 * N * sizeof(*table), 0);
	CHECK(table != NULL);
	for (i = 0; table != NULL && i < N; i++)
		CHECK(table[i] == (uint64_t)i);
	/* 3 MiB: whole 2 MiB pages of their own */
	big = hpm_malloc("big", 3 << 20, 0);
	CHECK(big != NULL);
	CHECK(hpm_malloc_get_socket_stats(socket, &now) == 0);
	print_stats("in use", &now);
	CHECK(now.alloc_count == start.alloc_count + 2);
	hpm_malloc_dump_stats(stdout, NULL);

	hpm_free(big);
	hpm_free(table);
	CHECK(hpm_malloc_get_socket_stats(socket, &now) == 0);
	print_stats("freed", &now);
	CHECK(now.alloc_count == start.alloc_count);
	CHECK(now.heap_allocsz_bytes == start.heap_allocsz_bytes);
	hpm_free(msg);

	/* nothing went wrong on the way */
	CHECK(hpm_heap_check() == 0);
	CHECK(hpm_bad_free_count() == 0);
	/* every chunk back to EAL; optional before rte_eal_cleanup() */
	hpm_fini();
	rte_eal_cleanup();
	printf("hello: %s\n", failed ? "FAILED" : "OK");
	return failed;
}
