/* SPDX-License-Identifier: BSD-3-Clause */

/* Finding EAL's functions behind the shim's. */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>

#include <rte_eal.h>

#include "real.h"
#include "shim.h"

#ifdef HPM_RTE_WRAP

/* The linker binds them: nothing to find. */
struct hpm_rte_real hpm_rte_real = {
	.malloc_socket = __real_rte_malloc_socket,
	.zmalloc_socket = __real_rte_zmalloc_socket,
	.calloc_socket = __real_rte_calloc_socket,
	.realloc_socket = __real_rte_realloc_socket,
	.free = __real_rte_free,
#ifdef HPM_RTE_HAVE_FREE_SENSITIVE
	.free_sensitive = __real_rte_free_sensitive,
#endif
	.validate = __real_rte_malloc_validate,
	.get_socket_stats = __real_rte_malloc_get_socket_stats,
	.dump_stats = __real_rte_malloc_dump_stats,
	.virt2iova = __real_rte_malloc_virt2iova,
	.eal_init = __real_rte_eal_init,
	.eal_cleanup = __real_rte_eal_cleanup,
	.mz_reserve = __real_rte_memzone_reserve,
	.mz_reserve_aligned = __real_rte_memzone_reserve_aligned,
	.mz_reserve_bounded = __real_rte_memzone_reserve_bounded,
};
bool hpm_rte_real_ready = true;

void
hpm_rte_real_resolve(void)
{
}

#else

struct hpm_rte_real hpm_rte_real;
bool hpm_rte_real_ready;

/* The next definition after ours: librte_eal's. */
static void *
next(const char *name)
{
	void *fn = dlsym(RTLD_NEXT, name);

	if (fn == NULL) {
		/* rte_log may not work yet: say it plainly */
		fprintf(stderr,
			"HPM_RTE: EAL's %s not found after libhpm_rte (%s); "
			"load libhpm_rte before librte_eal\n",
			name, dlerror());
		abort();
	}
	return fn;
}

/* Idempotent: racing threads store the same values. */
void
hpm_rte_real_resolve(void)
{
	struct hpm_rte_real r;

	*(void **)&r.malloc_socket = next("rte_malloc_socket");
	*(void **)&r.zmalloc_socket = next("rte_zmalloc_socket");
	*(void **)&r.calloc_socket = next("rte_calloc_socket");
	*(void **)&r.realloc_socket = next("rte_realloc_socket");
	*(void **)&r.free = next("rte_free");
#ifdef HPM_RTE_HAVE_FREE_SENSITIVE
	*(void **)&r.free_sensitive = next("rte_free_sensitive");
#endif
	*(void **)&r.validate = next("rte_malloc_validate");
	*(void **)&r.get_socket_stats = next("rte_malloc_get_socket_stats");
	*(void **)&r.dump_stats = next("rte_malloc_dump_stats");
	*(void **)&r.virt2iova = next("rte_malloc_virt2iova");
	*(void **)&r.eal_init = next("rte_eal_init");
	*(void **)&r.eal_cleanup = next("rte_eal_cleanup");
	*(void **)&r.mz_reserve = next("rte_memzone_reserve");
	*(void **)&r.mz_reserve_aligned = next("rte_memzone_reserve_aligned");
	*(void **)&r.mz_reserve_bounded = next("rte_memzone_reserve_bounded");
	hpm_rte_real = r;
	__atomic_store_n(&hpm_rte_real_ready, true, __ATOMIC_RELEASE);
}

/* Before main(): nothing can call rte_malloc usefully earlier. */
RTE_INIT(hpm_rte_real_init)
{
	hpm_rte_real_resolve();
}

#endif
