/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef HPM_POISON_H
#define HPM_POISON_H

/*
 * Telling memory checkers which bytes of the heap an application may touch:
 * AddressSanitizer when the library is built with it, valgrind memcheck with
 * -Dvalgrind=true. Chunks start poisoned; a block is unpoisoned when it is
 * handed out, for its usable size (what hpm_malloc_usable_size() promises),
 * and poisoned again when it is freed, also into a per-lcore cache. Heap block
 * headers and a free block's list links stay open to the allocator itself.
 * Without either checker these are no-ops.
 *
 * A checker's shadow memory belongs to one process: once a second process
 * attaches to the heap (multi-process), what one poisons the other does not
 * see, so every process stops poisoning and opens all of the heap in its own
 * shadow (hpm_poison_sync(), at the API's entries).
 */

#include <stddef.h>

#if defined(__SANITIZE_ADDRESS__)
#define HPM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HPM_ASAN 1
#endif
#endif

#if defined(HPM_ASAN)
#include <sanitizer/asan_interface.h>
#define HPM_CHECKER 1
#define HPM_CHECKER_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define HPM_CHECKER_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#elif defined(HPM_VALGRIND)
#include <valgrind/memcheck.h>
#define HPM_CHECKER 1
#define HPM_CHECKER_POISON(p, n) VALGRIND_MAKE_MEM_NOACCESS((p), (n))
#define HPM_CHECKER_UNPOISON(p, n) VALGRIND_MAKE_MEM_DEFINED((p), (n))
#endif

/* The allocator's own look at memory it poisoned (a page touched for its frame). */
#if defined(HPM_ASAN)
#define HPM_NO_SANITIZE_ADDRESS __attribute__((no_sanitize_address))
#else
#define HPM_NO_SANITIZE_ADDRESS
#endif

#ifdef HPM_CHECKER
#include <stdbool.h>

/** This process poisons (the heap is its alone). */
extern bool hpm_poison_enabled;

#define HPM_POISON(p, n)                          \
	do {                                      \
		if (hpm_poison_enabled)           \
			HPM_CHECKER_POISON(p, n); \
	} while (0)
#define HPM_UNPOISON(p, n) HPM_CHECKER_UNPOISON(p, n)
#else
#define HPM_POISON(p, n) ((void)(p), (void)(n))
#define HPM_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#endif /* HPM_POISON_H */
