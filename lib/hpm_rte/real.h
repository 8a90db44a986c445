/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef HPM_RTE_REAL_H
#define HPM_RTE_REAL_H

/*
 * EAL's own functions, which the shim's exports hide: found with
 * dlsym(RTLD_NEXT) in libhpm_rte.so, bound by the linker (__real_) in
 * libhpm_rte_wrap. The non-socket forms are not needed: in EAL they are the
 * socket forms with SOCKET_ID_ANY.
 */

#include <stdbool.h>
#include <stdio.h>

#include <rte_common.h>
#include <rte_malloc.h>
#include <rte_memzone.h>

struct hpm_rte_real {
	void *(*malloc_socket)(const char *type, size_t size, unsigned int align, int socket);
	void *(*zmalloc_socket)(const char *type, size_t size, unsigned int align, int socket);
	void *(*calloc_socket)(const char *type, size_t num, size_t size, unsigned int align,
		int socket);
	void *(*realloc_socket)(void *ptr, size_t size, unsigned int align, int socket);
	void (*free)(void *ptr);
#ifdef HPM_RTE_HAVE_FREE_SENSITIVE
	void (*free_sensitive)(void *ptr);
#endif
	int (*validate)(const void *ptr, size_t *size);
	int (*get_socket_stats)(int socket, struct rte_malloc_socket_stats *stats);
	void (*dump_stats)(FILE *f, const char *type);
	rte_iova_t (*virt2iova)(const void *addr);
	int (*eal_init)(int argc, char **argv);
	int (*eal_cleanup)(void);
	const struct rte_memzone *(
		*mz_reserve)(const char *name, size_t len, int socket, unsigned int flags);
	const struct rte_memzone *(*mz_reserve_aligned)(const char *name, size_t len, int socket,
		unsigned int flags, unsigned int align);
	const struct rte_memzone *(*mz_reserve_bounded)(const char *name, size_t len, int socket,
		unsigned int flags, unsigned int align, unsigned int bound);
};

extern struct hpm_rte_real hpm_rte_real;
extern bool hpm_rte_real_ready;

/** Find EAL's functions; stops the process if one is missing. */
void hpm_rte_real_resolve(void);

/** EAL's functions, found on first use. */
static inline const struct hpm_rte_real *
hpm_rte_eal(void)
{
	if (unlikely(!__atomic_load_n(&hpm_rte_real_ready, __ATOMIC_ACQUIRE)))
		hpm_rte_real_resolve();
	return &hpm_rte_real;
}

#endif /* HPM_RTE_REAL_H */
