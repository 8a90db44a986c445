/* SPDX-License-Identifier: BSD-3-Clause */

/* Initialisation and teardown of the heap's state. */

#include <errno.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include "lock.h"

#include "check.h"
#include "log.h"
#include "state.h"

RTE_LOG_REGISTER(hpm_logtype, lib.hpm, NOTICE);

struct hpm_state *hpm_state;
const struct hpm_source_ops *hpm_src;

/* Serialises initialisation and teardown within this process. */
static hpm_lock_t init_lock = HPM_LOCK_INITIALIZER;

void
hpm_config_defaults(struct hpm_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->source = HPM_SOURCE_AUTO;
	cfg->chunk_size = 32 * HPM_UNIT_SIZE / 2;
	cfg->retain_size = 64 * HPM_UNIT_SIZE / 2;
	cfg->release_delay_ms = 1000;
	cfg->initial_size = 0;
	cfg->hugepage_size = HPM_UNIT_SIZE;
	cfg->cache_max = HPM_CACHE_CAP;
	cfg->cache_min = 64;
	cfg->cache_share = 32;
}

static int
config_check(const struct hpm_config *cfg)
{
	if (cfg->source > HPM_SOURCE_ANON || cfg->chunk_size < HPM_UNIT_SIZE ||
		cfg->chunk_size % HPM_UNIT_SIZE != 0 ||
		(cfg->hugepage_size != HPM_UNIT_SIZE &&
			cfg->hugepage_size != (UINT64_C(1) << 30)) ||
		(cfg->flags & ~(HPM_CFG_F_VALIDATE | HPM_CFG_F_NO_CACHE)) != 0 ||
		cfg->cache_max > HPM_CACHE_CAP || cfg->cache_min > cfg->cache_max ||
		cfg->cache_share == 0)
		return -EINVAL;
	return 0;
}

static bool
unit_iova_contig(const struct hpm_source_ops *src)
{
	switch (src->kind) {
	case HPM_SOURCE_EAL:
		return rte_eal_has_hugepages() || rte_eal_iova_mode() == RTE_IOVA_VA;
	case HPM_SOURCE_HUGETLBFS:
		return true;
	default:
		return false;
	}
}

static int
state_create(const struct hpm_config *cfg)
{
	const struct hpm_source_ops *src = hpm_source_pick(cfg->source, cfg->hugepage_size);
	int ids[RTE_MAX_NUMA_NODES];
	struct hpm_state *st;
	unsigned int i, n;
	void *p;
	int rc;

	if (src == NULL) {
		HPM_LOG(ERR, "source %d cannot be used here", cfg->source);
		return -ENODEV;
	}
	rc = hpm_meta_bootstrap(src, sizeof(*st), HPM_STATE_ZONE, &p);
	if (rc != 0)
		return rc;
	st = p;
	st->magic = HPM_STATE_MAGIC;
	st->cfg = *cfg;
	st->source = src->kind;
	st->no_huge = src->kind == HPM_SOURCE_EAL ? !rte_eal_has_hugepages() : !src->hugepages;
	st->unit_iova_contig = unit_iova_contig(src);
	hpm_meta_init(&st->meta, (struct hpm_meta_region *)((uint8_t *)st - HPM_META_HDR_SIZE),
		sizeof(*st));
	n = src->sockets(ids, RTE_MAX_NUMA_NODES);
	for (i = 0; i < n; i++) {
		if (ids[i] < 0 || ids[i] >= RTE_MAX_NUMA_NODES)
			continue;
		hpm_arena_init(&st->arenas[ids[i]], ids[i],
			HPM_EXPENSIVE_CHECKS || (cfg->flags & HPM_CFG_F_VALIDATE));
		st->socket_ids[st->nsockets++] = ids[i];
	}
	hpm_src = src;
	__atomic_store_n(&hpm_state, st, __ATOMIC_RELEASE);
	hpm_cache_init();
	if (src->kind == HPM_SOURCE_ANON)
		HPM_LOG(NOTICE, "source anon: ordinary memory, not hugepages; no IOVA");
	else
		HPM_LOG(INFO, "source %s, %u socket(s)", src->name, st->nsockets);
	if (cfg->initial_size != 0)
		for (i = 0; i < st->nsockets; i++) {
			struct hpm_arena *a = &st->arenas[st->socket_ids[i]];

			hpm_lock(&a->lock);
			rc = hpm_chunk_reserve(a, cfg->initial_size);
			hpm_unlock(&a->lock);
			if (rc != 0) {
				HPM_LOG(ERR, "cannot reserve %zu bytes on socket %d",
					cfg->initial_size, a->socket);
				return rc;
			}
		}
	return 0;
}

static void
state_destroy(void)
{
	struct hpm_state *st = hpm_state;
	unsigned int i;

	hpm_cache_fini();
	for (i = 0; i < st->nsockets; i++) {
		struct hpm_arena *a = &st->arenas[st->socket_ids[i]];

		hpm_lock(&a->lock);
		hpm_chunk_release_all(a);
		hpm_unlock(&a->lock);
	}
	__atomic_store_n(&hpm_state, NULL, __ATOMIC_RELEASE);
	hpm_meta_release_all(&st->meta, hpm_src);
}

int
hpm_init(const struct hpm_config *cfg)
{
	struct hpm_config defaults;
	int rc;

	if (cfg == NULL) {
		hpm_config_defaults(&defaults);
		cfg = &defaults;
	}
	if (config_check(cfg) != 0)
		return -EINVAL;
	hpm_lock(&init_lock);
	if (hpm_state != NULL) {
		rc = -EALREADY;
	} else {
		rc = state_create(cfg);
		if (rc != 0 && hpm_state != NULL)
			state_destroy();
	}
	hpm_unlock(&init_lock);
	return rc;
}

int
hpm_state_ensure(void)
{
	int rc = hpm_init(NULL);

	if (rc == 0 || rc == -EALREADY)
		return 0;
	rte_errno = -rc;
	return rc;
}

void
hpm_fini(void)
{
	hpm_lock(&init_lock);
	if (hpm_state != NULL)
		state_destroy();
	hpm_unlock(&init_lock);
}

size_t
hpm_heap_trim(void)
{
	size_t released = 0;
	unsigned int i;

	if (hpm_state == NULL)
		return 0;
	for (i = 0; i < hpm_state->nsockets; i++) {
		struct hpm_arena *a = &hpm_state->arenas[hpm_state->socket_ids[i]];

		hpm_lock(&a->lock);
		/* the pages kept for reuse may be all that keeps a chunk */
		hpm_gran_release_spares(a);
		hpm_heap_release_spares(a);
		released += hpm_chunk_release_idle(a, UINT64_MAX);
		hpm_unlock(&a->lock);
	}
	return released;
}

const char *
hpm_source_name(void)
{
	return hpm_state != NULL ? hpm_src->name : NULL;
}
