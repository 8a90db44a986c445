/* SPDX-License-Identifier: BSD-3-Clause */

/* The hit paths' line (hitline.h): its values before the owners set them. */

#include "hitline.h"

/* what every owner lookup reads until owner.c reserves the table: one empty slot */
static struct hpm_unit *no_units[1];

/* a new thread's binding has generation 0: none matches before a cache binds */
struct hpm_hitline hpm_hit = {.cache_gen = 1, .owner = no_units};

/* initial-exec: a load from the thread pointer, no call to __tls_get_addr */
__thread struct hpm_cache_binding hpm_cache_tls __attribute__((tls_model("initial-exec")));

#ifdef HPM_HIT_TLS_OFF
/*
 * The offset is the same in every thread. Set before the calls of other
 * libraries' constructors (the loader runs libhpm's first) and, linked
 * statically, of the program's default-priority ones. A call before it
 * reads the thread's control block as its binding: a generation no cache
 * has, so it takes the miss path, which binds through hpm_cache_tls itself.
 */
static void __attribute__((constructor(101))) tls_off_set(void)
{
	uintptr_t tp;

	/*
	 * The x86-64 TLS ABI: the thread pointer's first word holds the thread
	 * pointer. Read in assembly: UBSan takes a load at %fs:0 through
	 * __seg_fs for a load of NULL, and clang has no __builtin_thread_pointer
	 * on x86.
	 */
	__asm__("mov %%fs:0, %0" : "=r"(tp));

	hpm_hit.tls_off = (uintptr_t)&hpm_cache_tls - tp;
}
#endif
