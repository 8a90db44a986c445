/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * bench_hit_path with the library's hit path inline: malloc.c is compiled
 * into this file, and the pair and burst kinds call its alloc_fast() and
 * free_fast() (the bodies of hpm_malloc() and hpm_free()) directly, so that
 * the compiler inlines them into the loops as it would inline functions of a
 * public header. The difference from bench_hit_path, same kind, is what the
 * two calls into libhpm.so cost a pair: the bound of what an inline fast
 * path in hpm_malloc.h could gain (the design guide has the figures). It
 * links every object of the library but malloc.c's (test/meson.build).
 */

#include "../../lib/hpm/malloc.c"

#define BENCH_MALLOC(size, align) alloc_fast(NULL, size, align, SOCKET_ID_ANY, 0)
#define BENCH_FREE(p) free_fast(p)

#include "bench_hit_path.c"
