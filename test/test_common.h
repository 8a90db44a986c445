/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef HPM_TEST_COMMON_H
#define HPM_TEST_COMMON_H

/*
 * What every test program shares: CHECK() records a failure with its place
 * and goes on; test_eal_init() starts EAL with a file prefix of its own;
 * test_end() cleans up and gives the exit status (0 pass, 1 fail, 77 skip).
 */

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>

extern unsigned int test_failures;

#define CHECK(cond, ...)                                                                \
	do {                                                                            \
		if (!(cond)) {                                                          \
			test_failures++;                                                \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                                   \
			fputc('\n', stderr);                                            \
		}                                                                       \
	} while (0)

/** Exit code meson reads as "skipped". */
#define TEST_SKIP 77

/**
 * Start EAL for test name with extra arguments (NULL-terminated), a file
 * prefix of its own and hugepage files unlinked as soon as they are mapped
 * (--huge-unlink=always), so that nothing is left in hugetlbfs. Returns 0, or
 * -1 when EAL cannot start.
 */
int test_eal_init(const char *name, ...);

/** Stop EAL if it was started; print the verdict; the exit status. */
int test_end(const char *name);

/** 1 in a build with AddressSanitizer (GCC's or clang's), else 0. */
#if defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif
#ifndef TEST_ASAN
#define TEST_ASAN 0
#endif

/**
 * EAL arguments of a primary whose secondaries must map its memory where it
 * did: under AddressSanitizer, its memory at an address that ASan's own
 * mappings (shadow, allocator) leave free in every process, instead of next
 * to the libraries, where a secondary's own mappings land at random (mp_first
 * skipped in two runs of three); nothing otherwise. Usage: an initializer of
 * argv lists TEST_EAL_SHARED_VA before its NULL.
 */
#if defined(__SANITIZE_ADDRESS__)
#define TEST_EAL_SHARED_VA "--base-virtaddr=0x300000000000",
#else
#define TEST_EAL_SHARED_VA
#endif

/**
 * Whether a secondary's exit status says EAL could not start because,
 * under AddressSanitizer, ASan's shadow sits where EAL maps the primary's
 * memory (then multi-process cases skip). Always false without ASan.
 */
bool test_asan_cannot_map(int status);

/** Remove the hugepage files of a file prefix (a primary's, kept for its secondaries). */
void test_remove_hugepage_files(const char *prefix);

/**
 * Bytes of hugepages this process has mapped, as the kernel counts them
 * (Shared_Hugetlb + Private_Hugetlb of /proc/self/smaps_rollup); 0 if
 * unreadable.
 */
size_t test_hugetlb_mapped(void);

/** A count of the machine's 2 MiB hugepages (sysfs: "free_hugepages", "nr_hugepages"); -1 if
 * unreadable. */
long test_hugepages_2m(const char *name);

/** A fast reproducible random generator (xorshift64*). */
static inline uint64_t
test_rand(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * UINT64_C(2685821657736338717);
}

/** Seed from HPM_TEST_SEED when set, else the default; printed for reruns. */
uint64_t test_seed(uint64_t def);

/**
 * Fill a block with a pattern of its address and size: every word up to
 * 4 KiB, one word per 512 bytes above, and the bytes of the tail.
 */
void test_fill(void *p, size_t size);

/** Whether a block still holds what test_fill() wrote. */
bool test_intact(const void *p, size_t size);

#endif /* HPM_TEST_COMMON_H */
