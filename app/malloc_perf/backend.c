/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The backend table, and the backends that live in DPDK and hpmalloc: hpm,
 * hpm-locked, rte (rte_malloc) and none (the baseline). rte_mempool is in
 * backend_mempool.c, glibc and the other libc-style allocators in
 * backend_peer.c.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_memzone.h>
#include <rte_spinlock.h>

#include <hpm_malloc.h>

#include "malloc_perf.h"

/* hpm and hpm-locked: one hpmalloc, initialised with the config of the one that runs */

static bool hpm_up;
static uint32_t hpm_flags;

static int
hpm_start(uint32_t flags)
{
	struct hpm_config cfg;
	int rc;

	if (hpm_up && hpm_flags == flags)
		return 0;
	mp_backend_lock();
	if (hpm_up)
		hpm_fini();
	hpm_up = false;
	hpm_config_defaults(&cfg);
	cfg.source = HPM_SOURCE_EAL;
	cfg.flags = flags;
	rc = hpm_init(&cfg);
	if (rc == 0) {
		hpm_up = true;
		hpm_flags = flags;
	}
	mp_backend_unlock();
	if (rc != 0)
		fprintf(stderr, "hpm: hpm_init: %s\n", strerror(-rc));
	return rc;
}

static int
hpm_attach(void)
{
	return hpm_start(0);
}

static int
hpm_locked_attach(void)
{
	return hpm_start(HPM_CFG_F_NO_CACHE);
}

static void
hpm_be_fini(void)
{
	mp_backend_lock();
	if (hpm_up)
		hpm_fini();
	hpm_up = false;
	mp_backend_unlock();
}

/* No live block: start again from an empty heap, as after hpm_init(). */
static int
hpm_trim(void)
{
	uint32_t flags = hpm_flags;

	hpm_be_fini();
	return hpm_start(flags);
}

static int
hpm_bulk(void **objs, unsigned int n, size_t size, unsigned int align)
{
	return hpm_malloc_bulk(objs, n, size, align, SOCKET_ID_ANY);
}

static void *
hpm_contig(size_t size, unsigned int align)
{
	return hpm_malloc_contig(MP_TYPE, size, align, SOCKET_ID_ANY);
}

static int
hpm_cache(unsigned int lcore_id, uint64_t *hits, uint64_t *misses)
{
	struct hpm_cache_stats st;
	int rc;

	if (!hpm_up || (hpm_flags & HPM_CFG_F_NO_CACHE))
		return -ENOTSUP;
	rc = hpm_cache_stats(lcore_id, -1, &st);
	if (rc != 0)
		return rc;
	*hits = st.hits;
	*misses = st.misses;
	return 0;
}

static const char *
hpm_source(void)
{
	const char *s = hpm_source_name();

	return s != NULL ? s : "eal";
}

static const struct mp_backend be_hpm = {
	.name = "hpm",
	.desc = "hpmalloc with its per-lcore caches: hpm_malloc/hpm_free, EAL memzones",
	.flags = MP_BE_HPM,
	.attach = hpm_attach,
	.fini = hpm_be_fini,
	.malloc = hpm_malloc,
	.free = hpm_free,
	.malloc_bulk = hpm_bulk,
	.free_bulk = hpm_free_bulk,
	.malloc_contig = hpm_contig,
	.free_contig = hpm_free,
	.socket_stats = hpm_malloc_get_socket_stats,
	.trim = hpm_trim,
	.check = hpm_heap_check,
	.source = hpm_source,
	.cache_stats = hpm_cache,
};

static const struct mp_backend be_hpm_locked = {
	.name = "hpm-locked",
	.desc = "hpmalloc without caches (HPM_CFG_F_NO_CACHE): every call takes the lock",
	.flags = MP_BE_HPM,
	.attach = hpm_locked_attach,
	.fini = hpm_be_fini,
	.malloc = hpm_malloc,
	.free = hpm_free,
	.malloc_bulk = hpm_bulk,
	.free_bulk = hpm_free_bulk,
	.malloc_contig = hpm_contig,
	.free_contig = hpm_free,
	.socket_stats = hpm_malloc_get_socket_stats,
	.trim = hpm_trim,
	.check = hpm_heap_check,
	.source = hpm_source,
	.cache_stats = hpm_cache,
};

/* rte: rte_malloc; IOVA-contiguous memory is a memzone, as DPDK offers it */

#define RTE_CONTIG_SLOTS 64

static struct {
	rte_spinlock_t lock;
	uint64_t seq;
	const struct rte_memzone *mz[RTE_CONTIG_SLOTS];
} rte_contig = {.lock = RTE_SPINLOCK_INITIALIZER};

static void *
rte_contig_alloc(size_t size, unsigned int align)
{
	const struct rte_memzone *mz;
	char name[RTE_MEMZONE_NAMESIZE];
	unsigned int i;

	rte_spinlock_lock(&rte_contig.lock);
	for (i = 0; i < RTE_CONTIG_SLOTS && rte_contig.mz[i] != NULL; i++)
		;
	if (i == RTE_CONTIG_SLOTS) {
		rte_spinlock_unlock(&rte_contig.lock);
		rte_errno = ENOSPC;
		return NULL;
	}
	snprintf(name, sizeof(name), "mp_contig_%" PRIu64, rte_contig.seq++);
	mz = rte_memzone_reserve_aligned(name, size, SOCKET_ID_ANY, RTE_MEMZONE_IOVA_CONTIG,
		align != 0 ? align : RTE_CACHE_LINE_SIZE);
	if (mz != NULL)
		rte_contig.mz[i] = mz;
	rte_spinlock_unlock(&rte_contig.lock);
	return mz != NULL ? mz->addr : NULL;
}

static void
rte_contig_free(void *ptr)
{
	unsigned int i;

	rte_spinlock_lock(&rte_contig.lock);
	for (i = 0; i < RTE_CONTIG_SLOTS; i++)
		if (rte_contig.mz[i] != NULL && rte_contig.mz[i]->addr == ptr) {
			rte_memzone_free(rte_contig.mz[i]);
			rte_contig.mz[i] = NULL;
			break;
		}
	rte_spinlock_unlock(&rte_contig.lock);
}

/*
 * rte_malloc's heap cannot shrink; what can be done is to give hpmalloc's
 * memzones back to EAL (hpm restarts when it runs next), so that EAL's heap
 * is one free range again and "held" (its size less its largest free range)
 * measures the run.
 */
static int
rte_trim(void)
{
	hpm_be_fini();
	return 0;
}

static const char *
rte_source(void)
{
	return "EAL heap";
}

static const struct mp_backend be_rte = {
	.name = "rte",
	.desc = "DPDK rte_malloc/rte_free (contig: rte_memzone_reserve IOVA_CONTIG)",
	.malloc = rte_malloc,
	.free = rte_free,
	.malloc_contig = rte_contig_alloc,
	.free_contig = rte_contig_free,
	.socket_stats = rte_malloc_get_socket_stats,
	.trim = rte_trim,
	.source = rte_source,
};

/* none: no allocation; a per-lcore scratch buffer, so that fwd still copies */

#define NONE_SCRATCH 16384

static struct {
	uint8_t buf[NONE_SCRATCH];
} __rte_cache_aligned none_scratch[RTE_MAX_LCORE + 1];

static void *
none_malloc(const char *type, size_t size, unsigned int align)
{
	unsigned int id = rte_lcore_id();

	RTE_SET_USED(type);
	RTE_SET_USED(size);
	RTE_SET_USED(align);
	return none_scratch[id < RTE_MAX_LCORE ? id : RTE_MAX_LCORE].buf;
}

static void
none_free(void *ptr)
{
	RTE_SET_USED(ptr);
}

static const char *
none_source(void)
{
	return "none (a scratch buffer per lcore)";
}

static const struct mp_backend be_none = {
	.name = "none",
	.desc = "no allocation: the baseline (fwd, paced; pair and burst if asked)",
	.flags = MP_BE_NOALLOC,
	.malloc = none_malloc,
	.free = none_free,
	.source = none_source,
};

/* the table */

static const struct mp_backend *const backends[] = {
	&be_hpm,
	&be_hpm_locked,
	&be_rte,
	&mp_be_mempool,
	&mp_be_libc,
	&mp_be_jemalloc,
	&mp_be_mimalloc,
	&mp_be_tcmalloc,
	&be_none,
};

static struct {
	bool probed;
	int rc;
	char why[160];
} probes[RTE_DIM(backends)];

unsigned int
mp_backend_count(void)
{
	return RTE_DIM(backends);
}

const struct mp_backend *
mp_backend_at(unsigned int i)
{
	return i < RTE_DIM(backends) ? backends[i] : NULL;
}

const struct mp_backend *
mp_backend_find(const char *name)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(backends); i++)
		if (strcmp(backends[i]->name, name) == 0)
			return backends[i];
	return NULL;
}

int
mp_backend_usable(const struct mp_backend *be, const char **why)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(backends) && backends[i] != be; i++)
		;
	if (i == RTE_DIM(backends))
		return -ENOENT;
	if (!probes[i].probed) {
		probes[i].probed = true;
		probes[i].rc =
			be->probe != NULL ? be->probe(probes[i].why, sizeof(probes[i].why)) : 0;
	}
	if (why != NULL)
		*why = probes[i].why;
	return probes[i].rc;
}

bool
mp_backend_lacking(const struct mp_backend *be, const char **why)
{
	unsigned int i;

	if (be->missing != NULL) {
		*why = be->missing;
		return true;
	}
	for (i = 0; i < RTE_DIM(backends) && backends[i] != be; i++)
		;
	if (i < RTE_DIM(backends) && probes[i].probed && probes[i].rc != 0) {
		*why = probes[i].why;
		return true;
	}
	return false;
}

void
mp_backend_release_eal(void)
{
	hpm_be_fini();
}

void
mp_backend_fini_all(void)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(backends); i++)
		if (backends[i]->fini != NULL && probes[i].probed && probes[i].rc == 0)
			backends[i]->fini();
}

int
mp_alloc_bulk(const struct mp_backend *be, void **objs, unsigned int n, size_t size,
	unsigned int align)
{
	unsigned int i;

	if (be->malloc_bulk != NULL)
		return be->malloc_bulk(objs, n, size, align);
	for (i = 0; i < n; i++) {
		objs[i] = be->malloc(MP_TYPE, size, align);
		if (unlikely(objs[i] == NULL)) {
			while (i-- > 0)
				be->free(objs[i]);
			return -ENOMEM;
		}
	}
	return 0;
}

void
mp_free_bulk(const struct mp_backend *be, void *const *objs, unsigned int n)
{
	unsigned int i;

	if (be->free_bulk != NULL) {
		be->free_bulk(objs, n);
		return;
	}
	for (i = 0; i < n; i++)
		be->free(objs[i]);
}

/*
 * The process's anonymous resident memory less the pages given back lazily
 * (MADV_FREE: jemalloc and tcmalloc purge so, and the pages stay resident
 * until the kernel needs them): /proc/self/smaps_rollup's Anonymous -
 * LazyFree. /proc/self/statm's resident set where there is no such file.
 */
double
mp_rss_bytes(void)
{
	char buf[4096], *p;
	unsigned long long anon = 0, lazy = 0, size, rss;
	ssize_t len;
	int fd = open("/proc/self/smaps_rollup", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len > 0) {
			buf[len] = '\0';
			p = strstr(buf, "\nAnonymous:");
			if (p != NULL && sscanf(p, "\nAnonymous: %llu", &anon) == 1) {
				p = strstr(buf, "\nLazyFree:");
				if (p != NULL)
					sscanf(p, "\nLazyFree: %llu", &lazy);
				return (double)(anon - RTE_MIN(lazy, anon)) * 1024;
			}
		}
	}
	fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return 0;
	buf[len] = '\0';
	if (sscanf(buf, "%llu %llu", &size, &rss) != 2)
		return 0;
	return (double)rss * (double)sysconf(_SC_PAGESIZE);
}

void
mp_backend_memory(const struct mp_backend *be, struct mp_memory *m)
{
	unsigned int i;

	memset(m, 0, sizeof(*m));
	if (be->socket_stats == NULL) {
		m->rss = true;
		m->total = m->held = m->used = mp_rss_bytes();
		return;
	}
	for (i = 0; i < rte_socket_count(); i++) {
		struct rte_malloc_socket_stats st;

		if (be->socket_stats(rte_socket_id_by_idx(i), &st) != 0)
			continue;
		m->total += (double)st.heap_totalsz_bytes;
		m->held += (double)(st.heap_totalsz_bytes - st.greatest_free_size);
		m->used += (double)st.heap_allocsz_bytes;
		m->free += (double)st.heap_freesz_bytes;
	}
}

bool
mp_backend_peek(const struct mp_backend *be, const unsigned int *lcores, unsigned int n,
	struct mp_memory *m, int64_t *hits, int64_t *misses)
{
	uint64_t h, mi;
	unsigned int i;

	if (!mp_backend_trylock_read())
		return false;
	mp_backend_memory(be, m);
	*hits = *misses = -1;
	for (i = 0; i < n && be->cache_stats != NULL; i++) {
		if (be->cache_stats(lcores[i], &h, &mi) != 0)
			continue;
		*hits = (*hits < 0 ? 0 : *hits) + (int64_t)h;
		*misses = (*misses < 0 ? 0 : *misses) + (int64_t)mi;
	}
	mp_backend_unlock_read();
	return true;
}
