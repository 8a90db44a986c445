/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef HPM_RTE_SHIM_H
#define HPM_RTE_SHIM_H

/*
 * What the shim's modules share: the names it exports (the rte_ symbols
 * themselves, or their --wrap twins in libhpm_rte_wrap), the routing mode,
 * and the log.
 */

#include <stdio.h>

#include <rte_common.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_memzone.h>

#ifdef HPM_RTE_WRAP
#define HPM_RTE_FN(name) __wrap_##name
#else
#define HPM_RTE_FN(name) name
#endif
#define HPM_RTE_EXPORT __attribute__((visibility("default")))

/** Where calls go; EARLY until rte_eal_init() returns, DONE after rte_eal_cleanup(). */
enum hpm_rte_mode {
	HPM_RTE_EARLY = 0,
	HPM_RTE_ON,
	HPM_RTE_OFF,
	HPM_RTE_DONE,
};

extern int hpm_rte_mode;

static inline int
hpm_rte_mode_get(void)
{
	return __atomic_load_n(&hpm_rte_mode, __ATOMIC_ACQUIRE);
}

/*
 * hpmalloc's EAL source names its memzones "hpm_<pid>_<n>" (chunks and
 * metadata) and its shared state "hpm_state" (lib/hpm/source_eal.c, state.h).
 */
#define HPM_STATE_ZONE "hpm_state"

extern int hpm_rte_logtype;

#define HPM_RTE_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, hpm_rte_logtype, "HPM_RTE: " fmt "\n", ##__VA_ARGS__)

#ifdef HPM_RTE_WRAP
/* The linker's names under -Wl,--wrap=: ours (__wrap_) and EAL's (__real_). */
void *__wrap_rte_malloc(const char *type, size_t size, unsigned int align);
void *__wrap_rte_zmalloc(const char *type, size_t size, unsigned int align);
void *__wrap_rte_calloc(const char *type, size_t num, size_t size, unsigned int align);
void *__wrap_rte_realloc(void *ptr, size_t size, unsigned int align);
void *__wrap_rte_malloc_socket(const char *type, size_t size, unsigned int align, int socket);
void *__wrap_rte_zmalloc_socket(const char *type, size_t size, unsigned int align, int socket);
void *__wrap_rte_calloc_socket(const char *type, size_t num, size_t size, unsigned int align,
	int socket);
void *__wrap_rte_realloc_socket(void *ptr, size_t size, unsigned int align, int socket);
void __wrap_rte_free(void *ptr);
void __wrap_rte_free_sensitive(void *ptr);
int __wrap_rte_malloc_validate(const void *ptr, size_t *size);
int __wrap_rte_malloc_get_socket_stats(int socket, struct rte_malloc_socket_stats *stats);
void __wrap_rte_malloc_dump_stats(FILE *f, const char *type);
rte_iova_t __wrap_rte_malloc_virt2iova(const void *addr);
int __wrap_rte_eal_init(int argc, char **argv);
int __wrap_rte_eal_cleanup(void);
const struct rte_memzone *__wrap_rte_memzone_reserve(const char *name, size_t len, int socket,
	unsigned int flags);
const struct rte_memzone *__wrap_rte_memzone_reserve_aligned(const char *name, size_t len,
	int socket, unsigned int flags, unsigned int align);
const struct rte_memzone *__wrap_rte_memzone_reserve_bounded(const char *name, size_t len,
	int socket, unsigned int flags, unsigned int align, unsigned int bound);

void *__real_rte_malloc_socket(const char *type, size_t size, unsigned int align, int socket);
void *__real_rte_zmalloc_socket(const char *type, size_t size, unsigned int align, int socket);
void *__real_rte_calloc_socket(const char *type, size_t num, size_t size, unsigned int align,
	int socket);
void *__real_rte_realloc_socket(void *ptr, size_t size, unsigned int align, int socket);
void __real_rte_free(void *ptr);
void __real_rte_free_sensitive(void *ptr);
int __real_rte_malloc_validate(const void *ptr, size_t *size);
int __real_rte_malloc_get_socket_stats(int socket, struct rte_malloc_socket_stats *stats);
void __real_rte_malloc_dump_stats(FILE *f, const char *type);
rte_iova_t __real_rte_malloc_virt2iova(const void *addr);
int __real_rte_eal_init(int argc, char **argv);
int __real_rte_eal_cleanup(void);
const struct rte_memzone *__real_rte_memzone_reserve(const char *name, size_t len, int socket,
	unsigned int flags);
const struct rte_memzone *__real_rte_memzone_reserve_aligned(const char *name, size_t len,
	int socket, unsigned int flags, unsigned int align);
const struct rte_memzone *__real_rte_memzone_reserve_bounded(const char *name, size_t len,
	int socket, unsigned int flags, unsigned int align, unsigned int bound);
#endif

#endif /* HPM_RTE_SHIM_H */
