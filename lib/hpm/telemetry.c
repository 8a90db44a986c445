/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * What the heap tells from outside the process: rte_telemetry commands
 * (/hpm/stats, /hpm/heap_info,<socket>, /hpm/caches[,<lcore>]) for
 * dpdk-telemetry.py, and hpm_malloc_dump_heaps().
 */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_lcore.h>
#include <rte_telemetry.h>

#include "arena.h"
#include "hpm_compat.h"
#include "lcore_cache.h"
#include "init.h"

static const char *const role_names[HPM_UNIT_NROLES] = {
	[HPM_UNIT_FREE] = "free",
	[HPM_UNIT_SPAN] = "heap_span",
	[HPM_UNIT_G4K] = "gran4k",
	[HPM_UNIT_G64K] = "gran64k",
	[HPM_UNIT_LARGE] = "large",
	[HPM_UNIT_SLAB] = "slab",
};

/* Units of each role and the bytes free in them, and chunks, of an arena. */
struct arena_census {
	unsigned int chunks;
	size_t units[RTE_DIM(role_names)];
	/* the same walks as hpm_heap_get_stats()' free_bytes, by role: they add up to it */
	size_t free_bytes[RTE_DIM(role_names)];
	/* chunks reserved for units of each role (hpm_chunk_set::grown_for) */
	size_t grown_for[RTE_DIM(role_names)];
	uint64_t reserved;
	uint64_t released;
};

static void
census(struct hpm_arena *a, struct arena_census *c)
{
	const struct hpm_chunk *ch;
	unsigned int i, count = 0;
	size_t longest = 0;

	memset(c, 0, sizeof(*c));
	if (!hpm_arena_lock(a))
		return;
	for (ch = a->cs.chunks; ch != NULL; ch = ch->next) {
		c->chunks++;
		for (i = 0; i < ch->nunits; i++) {
			const struct hpm_unit *u = &ch->units[i];

			if (u->role >= RTE_DIM(role_names))
				continue;
			c->units[u->role]++;
			if (hpm_unit_is_gran(u->role))
				c->free_bytes[u->role] += hpm_gran_unit_free_bytes(u);
		}
	}
	/* whole free units, heap blocks and size-class pages: their layers' walks */
	hpm_chunk_free_ranges(&a->cs, &count, &longest, &c->free_bytes[HPM_UNIT_FREE]);
	hpm_heap_free_ranges(&a->heap, &count, &longest, &c->free_bytes[HPM_UNIT_SPAN]);
	hpm_slab_free_ranges(&a->slab, &count, &longest, &c->free_bytes[HPM_UNIT_SLAB]);
	for (i = 0; i < RTE_DIM(role_names); i++)
		c->grown_for[i] = a->cs.grown_for[i];
	c->reserved = a->cs.chunks_reserved;
	c->released = a->cs.chunks_released;
	hpm_unlock(&a->lock);
}

static void
add_socket_stats(struct rte_tel_data *d, int socket)
{
	struct rte_malloc_socket_stats st;
	struct hpm_heap_stats hs;
	size_t bytes;
	uint64_t blocks;

	if (hpm_malloc_get_socket_stats(socket, &st) != 0 || hpm_heap_get_stats(socket, &hs) != 0)
		return;
	hpm_cache_held(socket, &bytes, &blocks);
	hpm_tel_dict_add_u64(d, "heap_totalsz_bytes", st.heap_totalsz_bytes);
	hpm_tel_dict_add_u64(d, "heap_freesz_bytes", st.heap_freesz_bytes);
	hpm_tel_dict_add_u64(d, "heap_allocsz_bytes", st.heap_allocsz_bytes);
	hpm_tel_dict_add_u64(d, "greatest_free_size", st.greatest_free_size);
	hpm_tel_dict_add_u64(d, "free_count", st.free_count);
	hpm_tel_dict_add_u64(d, "alloc_count", st.alloc_count);
	hpm_tel_dict_add_u64(d, "cache_bytes", bytes);
	hpm_tel_dict_add_u64(d, "cache_blocks", blocks);
	hpm_tel_dict_add_u64(d, "chunk_bytes", hs.chunk_bytes);
	hpm_tel_dict_add_u64(d, "chunk_count", hs.chunks);
	hpm_tel_dict_add_u64(d, "empty_chunk_bytes", hs.empty_chunk_bytes);
	hpm_tel_dict_add_u64(d, "meta_bytes", hs.meta_bytes);
	hpm_tel_dict_add_u64(d, "source_overhead_bytes", hs.overhead_bytes);
	hpm_tel_dict_add_u64(d, "in_use_bytes", hs.in_use_bytes);
	hpm_tel_dict_add_u64(d, "in_use_peak_bytes", hs.in_use_peak_bytes);
}

static int
stats_reply(struct rte_tel_data *d)
{
	char name[32];
	unsigned int i;

	rte_tel_data_add_dict_string(d, "source", hpm_src->name);
	rte_tel_data_add_dict_int(d, "sockets", hpm_state->nsockets);
	hpm_tel_dict_add_u64(d, "bad_frees", hpm_bad_free_count());
	for (i = 0; i < hpm_state->nsockets; i++) {
		struct rte_tel_data *s = rte_tel_data_alloc();

		if (s == NULL)
			return -ENOMEM;
		rte_tel_data_start_dict(s);
		add_socket_stats(s, hpm_state->socket_ids[i]);
		snprintf(name, sizeof(name), "socket_%d", hpm_state->socket_ids[i]);
		rte_tel_data_add_dict_container(d, name, s, 0);
	}
	return 0;
}

/*
 * The handlers run in EAL's telemetry thread, at any moment: each holds the
 * heap (hpm_state_pin()) while it reads it, so that hpm_fini() cannot take
 * it away under the reply (SIGSEGV).
 */
static int
tel_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	int rc;

	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	rte_tel_data_start_dict(d);
	/* a process that has not called the library yet (a secondary): the heap there is */
	if (hpm_state_pin() != 0) {
		rte_tel_data_add_dict_string(d, "source", "none");
		return 0;
	}
	rc = stats_reply(d);
	hpm_state_unpin();
	return rc;
}

/* A dict of one figure per unit role, in d under name. */
static int
add_by_role(struct rte_tel_data *d, const char *name, const size_t *values)
{
	struct rte_tel_data *roles = rte_tel_data_alloc();
	unsigned int i;

	if (roles == NULL)
		return -ENOMEM;
	rte_tel_data_start_dict(roles);
	for (i = 0; i < RTE_DIM(role_names); i++)
		hpm_tel_dict_add_u64(roles, role_names[i], values[i]);
	rte_tel_data_add_dict_container(d, name, roles, 0);
	return 0;
}

static int
heap_info_reply(struct rte_tel_data *d, int socket)
{
	struct arena_census c;

	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_int(d, "socket", socket);
	add_socket_stats(d, socket);
	census(&hpm_state->arenas[socket], &c);
	hpm_tel_dict_add_u64(d, "chunks", c.chunks);
	hpm_tel_dict_add_u64(d, "chunks_reserved", c.reserved);
	hpm_tel_dict_add_u64(d, "chunks_released", c.released);
	if (add_by_role(d, "units", c.units) != 0 ||
		add_by_role(d, "free_bytes", c.free_bytes) != 0 ||
		add_by_role(d, "grown_for", c.grown_for) != 0)
		return -ENOMEM;
	return 0;
}

static int
tel_heap_info(const char *cmd, const char *params, struct rte_tel_data *d)
{
	char *end;
	long socket;
	int rc;

	RTE_SET_USED(cmd);
	if (params == NULL)
		return -EINVAL;
	socket = strtol(params, &end, 10);
	if (end == params || *end != '\0' || socket < 0 || socket >= RTE_MAX_NUMA_NODES)
		return -EINVAL;
	if (hpm_state_pin() != 0)
		return -EINVAL;
	rc = hpm_state_has_socket(hpm_state, (int)socket) ? heap_info_reply(d, (int)socket)
							  : -EINVAL;
	hpm_state_unpin();
	return rc;
}

static void
add_cache_stats(struct rte_tel_data *d, const struct hpm_cache_stats *cs)
{
	rte_tel_data_add_dict_int(d, "socket", cs->socket);
	hpm_tel_dict_add_u64(d, "blocks", cs->blocks);
	hpm_tel_dict_add_u64(d, "bytes", cs->bytes);
	hpm_tel_dict_add_u64(d, "limit", cs->limit);
	hpm_tel_dict_add_u64(d, "hits", cs->hits);
	hpm_tel_dict_add_u64(d, "misses", cs->misses);
	hpm_tel_dict_add_u64(d, "flushes", cs->flushes);
}

/*
 * A class's key: its block size; the granule runs' classes, which have each
 * size at five alignments, with the alignment (a JSON reader keeps one value
 * of a repeated key).
 */
static void
class_key(unsigned int cls, char *name, size_t len)
{
	if (cls >= HPM_CACHE_RUN0)
		snprintf(name, len, "run_%zu_align_%zu", hpm_cache_class_size(cls),
			hpm_cache_run_align(cls));
	else
		snprintf(name, len, "class_%zu", hpm_cache_class_size(cls));
}

/*
 * /hpm/caches: every lcore's totals; /hpm/caches,<lcore>: that lcore's
 * classes that have been used (all 156 would not fit a reply).
 */
static int
caches_reply(const char *params, struct rte_tel_data *d)
{
	struct hpm_cache_stats cs;
	char name[48];
	unsigned int lcore, cls;

	if (params != NULL && *params != '\0') {
		unsigned long n;
		char *end;

		n = strtoul(params, &end, 10);
		if (end == params || *end != '\0' || n >= HPM_CACHE_SLOTS ||
			hpm_cache_stats((unsigned int)n, -1, &cs) != 0)
			return -EINVAL;
		lcore = (unsigned int)n;
		for (cls = 0; cls < hpm_cache_class_count(); cls++) {
			struct rte_tel_data *c;

			hpm_cache_stats(lcore, cls, &cs);
			if (cs.blocks == 0 && cs.hits == 0 && cs.misses == 0 && cs.flushes == 0)
				continue;
			c = rte_tel_data_alloc();
			if (c == NULL)
				return -ENOMEM;
			rte_tel_data_start_dict(c);
			add_cache_stats(c, &cs);
			class_key(cls, name, sizeof(name));
			rte_tel_data_add_dict_container(d, name, c, 0);
		}
		return 0;
	}
	for (lcore = 0; lcore < HPM_CACHE_SLOTS; lcore++) {
		struct rte_tel_data *c;

		if (hpm_cache_stats(lcore, -1, &cs) != 0)
			continue;
		c = rte_tel_data_alloc();
		if (c == NULL)
			return -ENOMEM;
		rte_tel_data_start_dict(c);
		add_cache_stats(c, &cs);
		if (lcore < RTE_MAX_LCORE)
			snprintf(name, sizeof(name), "lcore_%u", lcore);
		else
			snprintf(name, sizeof(name), "thread_%u", lcore - RTE_MAX_LCORE);
		rte_tel_data_add_dict_container(d, name, c, 0);
	}
	return 0;
}

static int
tel_caches(const char *cmd, const char *params, struct rte_tel_data *d)
{
	int rc;

	RTE_SET_USED(cmd);
	rte_tel_data_start_dict(d);
	if (hpm_state_pin() != 0)
		return 0;
	rc = caches_reply(params, d);
	hpm_state_unpin();
	return rc;
}

/* Registered at load, as DPDK's libraries do: nothing below calls the observers. */
RTE_INIT(hpm_telemetry_register)
{
	rte_telemetry_register_cmd("/hpm/stats", tel_stats,
		"hpmalloc statistics of every socket. No parameters");
	rte_telemetry_register_cmd("/hpm/heap_info", tel_heap_info,
		"hpmalloc heap of a socket: statistics, chunks, units by role. Parameters: socket");
	rte_telemetry_register_cmd("/hpm/caches", tel_caches,
		"hpmalloc per-lcore caches: totals per lcore, or per class used with an lcore. "
		"Parameters: [lcore]");
}

void
hpm_malloc_dump_heaps(FILE *f)
{
	struct arena_census c;
	struct hpm_cache_stats cs;
	unsigned int i, r, lcore;

	if (hpm_state_find() != 0) {
		fprintf(f, "hpmalloc: not initialised\n");
		return;
	}
	hpm_malloc_dump_stats(f, NULL);
	for (i = 0; i < hpm_state->nsockets; i++) {
		int socket = hpm_state->socket_ids[i];

		census(&hpm_state->arenas[socket], &c);
		fprintf(f, "Heap id:%d chunks:%u (reserved %" PRIu64 ", released %" PRIu64 ")\n",
			socket, c.chunks, c.reserved, c.released);
		for (r = 0; r < RTE_DIM(role_names); r++)
			fprintf(f, "\tunits %s:%zu free:%zu grown_for:%zu\n", role_names[r],
				c.units[r], c.free_bytes[r], c.grown_for[r]);
	}
	for (lcore = 0; lcore < HPM_CACHE_SLOTS; lcore++)
		if (hpm_cache_stats(lcore, -1, &cs) == 0)
			fprintf(f,
				"Cache lcore:%u socket:%d blocks:%" PRIu64
				" bytes:%zu hits:%" PRIu64 " misses:%" PRIu64 " flushes:%" PRIu64
				"\n",
				lcore, cs.socket, cs.blocks, cs.bytes, cs.hits, cs.misses,
				cs.flushes);
	fprintf(f, "Bad pointers:%" PRIu64 "\n", hpm_bad_free_count());
}
