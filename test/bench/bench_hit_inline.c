/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * bench_hit_path with hpm_inline.h's functions: the pair and burst kinds
 * call hpm_malloc_inline() and hpm_free_inline(), which the compiler inlines
 * into the loops, where bench_hit_path calls hpm_malloc() and hpm_free() in
 * libhpm.so. The difference, same kind, is what the two calls cost a pair.
 */

#include "hpm_inline.h"

#define BENCH_MALLOC(size, align) hpm_malloc_inline(NULL, size, align)
#define BENCH_FREE(p) hpm_free_inline(p)

#include "bench_hit_path.c"
