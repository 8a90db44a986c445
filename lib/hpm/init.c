/* SPDX-License-Identifier: BSD-3-Clause */

/* Initialisation and teardown of the heap's state: the API's entry and exit. */

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include <numa.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_eal_memconfig.h>
#include <rte_memzone.h>
#include <rte_errno.h>
#include "lock.h"

#include "check.h"
#include "log.h"
#include "owner.h"
#include "poison.h"
#include "init.h"

const struct hpm_debug_ops *hpm_debug;
bool hpm_debug_on;
static const struct hpm_debug_ops *debug_ops;

void
hpm_debug_register(const struct hpm_debug_ops *ops)
{
	debug_ops = ops;
}

static void
debug_off(void)
{
	hpm_debug_on = false;
	hpm_debug = NULL;
	if (debug_ops != NULL)
		debug_ops->fini();
}

/* Serialises initialisation and teardown within this process. */
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;

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
	cfg->cache_budget_min = HPM_CACHE_BUDGET_MIN_DEFAULT;
#ifdef HPM_DEFAULT_DEBUG
	cfg->flags |= HPM_CFG_F_DEBUG;
#endif
}

static int
config_check(const struct hpm_config *cfg)
{
	if (cfg->source > HPM_SOURCE_ANON || cfg->chunk_size < HPM_UNIT_SIZE ||
		cfg->chunk_size % HPM_UNIT_SIZE != 0 ||
		(cfg->hugepage_size != HPM_UNIT_SIZE &&
			cfg->hugepage_size != (UINT64_C(1) << 30)) ||
		(cfg->flags &
			~(HPM_CFG_F_VALIDATE | HPM_CFG_F_NO_CACHE | HPM_CFG_F_DEBUG |
				HPM_CFG_F_SMALL_HEAP | HPM_CFG_F_LEAN_CACHE)) != 0 ||
		cfg->cache_max > HPM_CACHE_CAP ||
		(cfg->cache_max != 0 && cfg->cache_min > cfg->cache_max) || cfg->cache_share == 0 ||
		cfg->fake_sockets > RTE_MAX_NUMA_NODES || cfg->initial_size > HPM_SIZE_MAX)
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

/*
 * Sockets of the heap: the source's, or a fake topology over the machine's
 * nodes; the socket ids in ids, the node of each in nodes. Their number.
 */
static unsigned int
heap_sockets(const struct hpm_config *cfg, const struct hpm_source_ops *src,
	int ids[RTE_MAX_NUMA_NODES], int nodes[RTE_MAX_NUMA_NODES])
{
	int machine[RTE_MAX_NUMA_NODES];
	unsigned int i, k = 0, n, fake = cfg->fake_sockets;

	n = src->sockets(machine, RTE_MAX_NUMA_NODES);
	for (i = 0; i < (fake != 0 ? fake : n); i++) {
		int id = fake != 0 ? (int)i : machine[i];

		if (id < 0 || id >= RTE_MAX_NUMA_NODES)
			continue;
		ids[k] = id;
		nodes[k++] = fake != 0 ? machine[i % n] : id;
	}
	return k;
}

/* Arenas for the sockets heap_sockets() found. */
static void
state_sockets(struct hpm_state *st, const int *ids, const int *nodes, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		int id = ids[i];

		st->node_of_socket[id] = nodes[i];
		hpm_arena_init(&st->arenas[id], id, st->node_of_socket[id],
			HPM_EXPENSIVE_CHECKS || (st->cfg.flags & HPM_CFG_F_VALIDATE), &st->meta,
			&st->pagemap, &st->cfg, st->unit_iova_contig);
		st->socket_ids[st->nsockets++] = id;
	}
}

static int
state_create(const struct hpm_config *cfg, const struct hpm_source_ops *src)
{
	int ids[RTE_MAX_NUMA_NODES], nodes[RTE_MAX_NUMA_NODES];
	unsigned int i, nsockets = heap_sockets(cfg, src, ids, nodes), narenas = 0;
	struct hpm_state *st;
	size_t size;
	void *p;
	int rc;

	for (i = 0; i < nsockets; i++)
		narenas = RTE_MAX(narenas, (unsigned int)ids[i] + 1);
	size = sizeof(*st) + narenas * sizeof(st->arenas[0]);
	rc = hpm_meta_bootstrap(src, size, HPM_STATE_ZONE, &p);
	if (rc != 0)
		return rc;
	st = p;
	st->narenas = narenas;
	st->cfg = *cfg;
	/* debug mode checks every operation, and every operation takes the lock */
	if (cfg->flags & HPM_CFG_F_DEBUG)
		st->cfg.flags |= HPM_CFG_F_VALIDATE | HPM_CFG_F_NO_CACHE;
	st->creator_pid = getpid();
	st->source = src->kind;
	/* a fake topology is there to be used: its sockets are never just wishes */
	st->no_huge = src->kind == HPM_SOURCE_EAL ? !rte_eal_has_hugepages()
						  : !src->hugepages && cfg->fake_sockets == 0;
	st->unit_iova_contig = unit_iova_contig(src);
	hpm_state_topology_init();
	/* a new key for the heap's header tags: no header of an older heap is valid */
	hpm_heap_rekey();
	hpm_meta_init(&st->meta, (struct hpm_meta_region *)((uint8_t *)st - HPM_META_HDR_SIZE),
		size);
	state_sockets(st, ids, nodes, nsockets);
	hpm_cache_init_shared(st, src);
	if (st->cfg.flags & HPM_CFG_F_DEBUG) {
		rc = debug_ops != NULL ? debug_ops->init(st, src) : -ENOTSUP;
		if (rc != 0) {
			if (debug_ops == NULL)
				HPM_LOG(ERR, "debug mode is not linked in (link libhpm whole)");
			hpm_meta_release_all(&st->meta, src);
			return rc == -ENOTSUP ? rc : -ENOMEM;
		}
		hpm_debug = debug_ops;
		hpm_debug_on = true;
	}
#ifdef HPM_CHECKER
	hpm_poison_enabled = true;
#endif
	hpm_src = src;
	__atomic_store_n(&hpm_state, st, __ATOMIC_RELEASE);
	hpm_cache_init_process();
	if (src->kind == HPM_SOURCE_ANON)
		HPM_LOG(NOTICE, "source anon: ordinary memory, not hugepages; no IOVA");
	else
		HPM_LOG(INFO, "source %s, %u socket(s)", src->name, st->nsockets);
	if (cfg->initial_size != 0)
		for (i = 0; i < st->nsockets; i++) {
			struct hpm_arena *a = &st->arenas[st->socket_ids[i]];

			if (!hpm_arena_lock(a))
				return -ENOTRECOVERABLE;
			rc = hpm_chunk_reserve(&a->cs, cfg->initial_size);
			hpm_unlock(&a->lock);
			if (rc != 0) {
				HPM_LOG(ERR, "cannot reserve %zu bytes on socket %d",
					cfg->initial_size, a->socket);
				return rc;
			}
		}
	/*
	 * Last: a process attaching waits for the magic, and then finds the
	 * heap whole (published before the reservations, a heap whose
	 * reservation failed went away under the processes that had attached).
	 */
	__atomic_store_n(&st->magic, HPM_STATE_MAGIC, __ATOMIC_RELEASE);
	return 0;
}

/*
 * The state zone's heap, once its creator has finished it (its magic), or
 * NULL with rc: -ENOENT without a zone, -EAGAIN while it is unfinished.
 * A creator whose hpm_init() fails frees the zone, and EAL could give its
 * pages back to the system between the look-up and the read (SIGSEGV): the
 * magic is read with EAL's memory hotplug lock held (EAL frees pages under
 * it), if the zone was still there once the lock was held (a freed zone's
 * entry is cleared first). The look-up comes before the lock: it takes the
 * memzone lock, which a reservation holds while it waits for this one.
 */
static struct hpm_state *
state_published(int *rc, int *creator)
{
	const struct rte_memzone *mz = rte_memzone_lookup(HPM_STATE_ZONE);
	struct hpm_state *st = NULL;
	void *va = mz != NULL ? mz->addr : NULL;

	*rc = -ENOENT;
	*creator = 0;
	if (va == NULL)
		return NULL;
	rte_mcfg_mem_read_lock();
	/* a volatile read: struct rte_memzone is packed, its fields have no atomic load */
	if (((const volatile struct rte_memzone *)mz)->addr == va) {
		st = (struct hpm_state *)((uint8_t *)va + HPM_META_HDR_SIZE);
		*rc = -EAGAIN;
		*creator = __atomic_load_n(&st->creator_pid, __ATOMIC_RELAXED);
		if (__atomic_load_n(&st->magic, __ATOMIC_ACQUIRE) != HPM_STATE_MAGIC)
			st = NULL;
	}
	rte_mcfg_mem_read_unlock();
	if (st != NULL)
		*rc = 0;
	return st;
}

/* Attach to the heap another process of this DPDK application created. */
#define ATTACH_WAIT_MAX_S 120
static int
state_attach(void)
{
	const uint64_t hz = rte_get_timer_hz(), start = rte_get_timer_cycles();
	struct hpm_state *st;
	int rc, creator;

	/*
	 * Its creator may still be filling it in: 2 s of the clock (not of
	 * usleep(1) calls: each sleeps 50-100 us, it waited 150 s), and as
	 * long as the creator lives, up to ATTACH_WAIT_MAX_S (an initial_size
	 * of 12 GiB took more than 2 s to reserve).
	 */
	while ((st = state_published(&rc, &creator)) == NULL) {
		uint64_t waited = rte_get_timer_cycles() - start;

		if (rc != -EAGAIN)
			return rc;
		if (waited > 2 * hz &&
			(waited > ATTACH_WAIT_MAX_S * hz || creator <= 0 ||
				!hpm_pid_alive(creator)))
			return -ETIMEDOUT;
		usleep(100);
	}
	__atomic_store_n(&st->shared, 1, __ATOMIC_RELEASE);
	hpm_state_topology_init();
	hpm_heap_attach(&st->arenas[st->socket_ids[0]].heap);
	hpm_src = &hpm_source_eal;
	__atomic_store_n(&hpm_state, st, __ATOMIC_RELEASE);
	hpm_cache_init_process();
	if (debug_ops != NULL && debug_ops->attach()) {
		hpm_debug = debug_ops;
		hpm_debug_on = true;
	}
	HPM_LOG(INFO, "attached to the heap of process %d", st->creator_pid);
	return 0;
}

/* A process that attached gives its lcores' caches back and lets the heap be. */
static void
state_detach(void)
{
	debug_off();
	hpm_cache_fini_process(false);
	__atomic_store_n(&hpm_state, NULL, __ATOMIC_RELEASE);
	hpm_owner_clear();
}

static int
state_open(const struct hpm_config *cfg)
{
	const struct hpm_source_ops *src = hpm_source_pick(cfg->source, cfg->hugepage_size);
	int rc;

	if (src == NULL) {
		HPM_LOG(ERR, "source %d cannot be used here", cfg->source);
		return -ENODEV;
	}
	/* without it every free takes the page map's path: slower, not wrong */
	(void)hpm_owner_init();
	if (src->kind != HPM_SOURCE_EAL)
		return state_create(cfg, src);
	/* EAL's topology is EAL's */
	if (cfg->fake_sockets != 0)
		return -EINVAL;
	/* the heap of a multi-process application: whoever comes first makes it */
	rc = state_attach();
	if (rc != -ENOENT)
		return rc;
	rc = state_create(cfg, src);
	return rc == -EEXIST ? state_attach() : rc;
}

static void
state_destroy(void)
{
	struct hpm_state *st = hpm_state;
	unsigned int i;

	debug_off();
	hpm_cache_fini_process(true);
	for (i = 0; i < st->nsockets; i++) {
		struct hpm_arena *a = &st->arenas[st->socket_ids[i]];

		/* a torn arena's chunks may be half-linked: its source takes them back */
		if (!hpm_arena_lock(a))
			continue;
		hpm_chunk_release_all(&a->cs);
		hpm_unlock(&a->lock);
	}
	__atomic_store_n(&hpm_state, NULL, __ATOMIC_RELEASE);
	hpm_owner_clear();
	hpm_meta_release_all(&st->meta, hpm_src);
}

/*
 * A child of fork() has a copy of a private heap (anon, hugetlbfs) with its
 * locks as they were: one that another thread of the parent held is held
 * by no thread of the child, and what it protects may be half-changed. The
 * child sees it torn: calls behind it fail with ENOTRECOVERABLE, where they
 * spun for as long as the parent lived. (The eal source's heap is shared:
 * the parent's threads let its locks go.)
 */
static int fork_parent;

static void
fork_prepare(void)
{
	fork_parent = getpid();
}

static void
tear_if_parents(hpm_lock_t *l)
{
	if (__atomic_load_n(&l->owner, __ATOMIC_RELAXED) == fork_parent)
		__atomic_store_n(&l->owner, HPM_LOCK_TORN, __ATOMIC_RELAXED);
}

static void
fork_child(void)
{
	struct hpm_state *st = hpm_state;
	unsigned int i, cls;

	if (st == NULL || st->source == HPM_SOURCE_EAL)
		return;
	tear_if_parents(&st->cache_lock);
	tear_if_parents(&st->meta.lock);
	for (i = 0; i < st->nsockets; i++) {
		struct hpm_cache_xfer *x = st->xfer[st->socket_ids[i]];

		tear_if_parents(&st->arenas[st->socket_ids[i]].lock);
		for (cls = 0; x != NULL && cls < HPM_CACHE_NCLASS; cls++)
			tear_if_parents(&x->cls[cls].lock);
	}
}

RTE_INIT(hpm_init_fork_setup)
{
	pthread_atfork(fork_prepare, NULL, fork_child);
}

int
hpm_init(const struct hpm_config *cfg)
{
	struct hpm_config defaults;
	int rc;

	if (cfg == NULL)
		hpm_config_defaults(&defaults);
	else
		defaults = *cfg;
	cfg = &defaults;
	/* debug mode without touching the application: HPM_DEBUG=1 */
	if (getenv("HPM_DEBUG") != NULL && atoi(getenv("HPM_DEBUG")) != 0)
		defaults.flags |= HPM_CFG_F_DEBUG;
	if (config_check(cfg) != 0)
		return -EINVAL;
	pthread_mutex_lock(&init_lock);
	if (hpm_state != NULL) {
		rc = -EALREADY;
	} else {
		rc = state_open(cfg);
		if (rc != 0 && hpm_state != NULL)
			state_destroy();
	}
	pthread_mutex_unlock(&init_lock);
	return rc;
}

/* The heap, attached if another process made one; never made here. init_lock held. */
static int
find_locked(void)
{
	int rc;

	if (hpm_state != NULL)
		return 0;
	if (!hpm_source_eal_ready())
		return -ENOENT;
	(void)hpm_owner_init();
	rc = state_attach();
	if (rc != 0 && rc != -ENOENT)
		rte_errno = -rc;
	return rc;
}

int
hpm_state_find(void)
{
	int rc;

	if (hpm_state != NULL)
		return 0;
	/*
	 * Another process's heap, if there is one: attach, never create (a
	 * zone gone between the look-up and the attach made a heap here).
	 */
	if (!hpm_source_eal_ready() || rte_memzone_lookup(HPM_STATE_ZONE) == NULL)
		return -ENOENT;
	pthread_mutex_lock(&init_lock);
	rc = find_locked();
	pthread_mutex_unlock(&init_lock);
	return rc;
}

int
hpm_state_pin(void)
{
	int rc;

	pthread_mutex_lock(&init_lock);
	rc = find_locked();
	if (rc != 0)
		pthread_mutex_unlock(&init_lock);
	return rc;
}

void
hpm_state_unpin(void)
{
	pthread_mutex_unlock(&init_lock);
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

/*
 * Whether this process's hpm_fini() ends the heap: yes for a heap of its
 * own; on EAL, the primary's, as EAL's memory is (a secondary that made the
 * heap because it came first leaves it to the others).
 */
static bool
heap_is_ours(void)
{
	if (hpm_state->source != HPM_SOURCE_EAL)
		return true;
	return rte_eal_process_type() == RTE_PROC_PRIMARY;
}

void
hpm_fini(void)
{
	pthread_mutex_lock(&init_lock);
	if (hpm_state != NULL && !heap_is_ours())
		state_detach();
	else if (hpm_state != NULL)
		state_destroy();
	pthread_mutex_unlock(&init_lock);
}

const char *
hpm_source_name(void)
{
	return hpm_state_find() == 0 ? hpm_src->name : NULL;
}

#ifdef HPM_CHECKER
/* The walk over every arena is the API layer's: poison.c keeps the flag alone. */
void
hpm_poison_sync(void)
{
	unsigned int i;

	if (!hpm_poison_enabled || hpm_state == NULL ||
		!__atomic_load_n(&hpm_state->shared, __ATOMIC_ACQUIRE))
		return;
	hpm_poison_enabled = false;
	for (i = 0; i < hpm_state->nsockets; i++) {
		struct hpm_arena *a = &hpm_state->arenas[hpm_state->socket_ids[i]];
		const struct hpm_chunk *c;

		if (!hpm_arena_lock(a))
			continue;
		for (c = a->cs.chunks; c != NULL; c = c->next)
			HPM_UNPOISON(c->region.va, c->region.len);
		hpm_unlock(&a->lock);
	}
}
#endif
