/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The DPDK APIs that differ between the releases hpmalloc supports (22.11,
 * 24.11 and 25.11 LTS), chosen by RTE_VERSION, in this one place. Private:
 * included by the library, the shim, malloc_perf and the tests, never
 * installed. Each entry names the release that changed the API; the
 * releases in between are not tested.
 */

#ifndef HPM_COMPAT_H
#define HPM_COMPAT_H

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include <rte_lcore.h>
#include <rte_telemetry.h>
#include <rte_version.h>

/** DPDK 23.11 or later: the replacements below exist there. */
#define HPM_DPDK_GE_23_11 (RTE_VERSION >= RTE_VERSION_NUM(23, 11, 0, 0))

/*
 * Telemetry: rte_tel_data_add_dict_u64 gave way to rte_tel_data_add_dict_uint
 * (23.03; the old name is deprecated, an error under -Werror on 24.11).
 */
#if HPM_DPDK_GE_23_11
#define hpm_tel_dict_add_u64(d, name, val) rte_tel_data_add_dict_uint(d, name, val)
#else
#define hpm_tel_dict_add_u64(d, name, val) rte_tel_data_add_dict_u64(d, name, val)
#endif

/*
 * A control thread (on the control CPUs, not on an lcore's) run as a
 * pthread: rte_ctrl_thread_create() on 22.11; 23.11 replaced it by
 * rte_thread_create_control(), which takes an rte_thread_t and a function
 * returning uint32_t. The thread is joined with pthread_join(): on Linux an
 * rte_thread_t holds the pthread_t (rte_thread_self() is built that way).
 * Returns 0 or a positive errno.
 */
#if HPM_DPDK_GE_23_11
struct hpm_compat_thread {
	void *(*fn)(void *);
	void *arg;
};

static inline uint32_t
hpm_compat_thread_main(void *p)
{
	struct hpm_compat_thread t = *(struct hpm_compat_thread *)p;

	free(p);
	t.fn(t.arg);
	return 0;
}

static inline int
hpm_ctrl_thread_create(pthread_t *tid, const char *name, void *(*fn)(void *), void *arg)
{
	struct hpm_compat_thread *t = malloc(sizeof(*t));
	rte_thread_t id;
	int rc;

	if (t == NULL)
		return ENOMEM;
	t->fn = fn;
	t->arg = arg;
	rc = rte_thread_create_control(&id, name, hpm_compat_thread_main, t);
	if (rc != 0) {
		free(t);
		return rc < 0 ? -rc : rc;
	}
	*tid = (pthread_t)id.opaque_id;
	return 0;
}
#else
static inline int
hpm_ctrl_thread_create(pthread_t *tid, const char *name, void *(*fn)(void *), void *arg)
{
	return rte_ctrl_thread_create(tid, name, NULL, fn, arg);
}
#endif

#endif /* HPM_COMPAT_H */
