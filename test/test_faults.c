/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Reservation failures. A scripted workload over every route (heap, 4 KiB
 * granules single and in runs, 64 KiB blocks among them, runs of 64 KiB
 * granules, 2M-aligned granules, large blocks; with
 * malloc, zmalloc, calloc, realloc, bulk, and contig on EAL) runs once to
 * count the segment source's reservations (chunks and metadata), then once
 * per reservation N with the Nth failing (hpm_source_fail_after): every call
 * that fails returns NULL (bulk: -ENOMEM) with rte_errno ENOMEM and leaves
 * nothing behind (live blocks and their bytes as before the call, the heap
 * checks, every other block intact); once memory is back the same calls
 * succeed, and when everything is freed no chunk stays reserved and no
 * metadata is lost. hpm_init() (and the implicit first-call init) whose first
 * reservation fails returns -ENOMEM and leaves nothing; a later one works.
 * Without the hook: hugetlbfs hugepages exhausted give NULL/ENOMEM on every
 * route, the heap checks, and after freeing half, allocations succeed again;
 * at the end every hugepage is back.
 *
 * usage: test_faults anon|eal|hugepages
 */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_memzone.h>

#include "hpm_malloc.h"
#include "source.h"
#include "state.h"
#include "test_common.h"

#define KIB(n) ((size_t)(n) << 10)
#define MIB(n) ((size_t)(n) << 20)
#define MAX_STEPS 2048
#define MAX_SLOTS 8192
#define MAX_RESV 1024
#define MAX_CHUNKS 1024
#define NROUNDS 4
#define HEAP_FILL 30
#define NO_FAULT (-1)

enum op { OP_MALLOC, OP_ZMALLOC, OP_CALLOC, OP_REALLOC, OP_BULK, OP_CONTIG, OP_FREE };

static const char *const op_names[] = {
	[OP_MALLOC] = "malloc",
	[OP_ZMALLOC] = "zmalloc",
	[OP_CALLOC] = "calloc",
	[OP_REALLOC] = "realloc",
	[OP_BULK] = "bulk",
	[OP_CONTIG] = "contig",
	[OP_FREE] = "free",
};

/* One call of the workload; its blocks go to slots [slot, slot + n). */
struct step {
	enum op op;
	size_t size;      /* calloc: element size */
	unsigned int num; /* calloc: elements; bulk: blocks */
	unsigned int align;
	unsigned int slot;
	const char *what;
	/* reservations made before this step in the run without faults */
	long resv_before;
	/* failed without a fault: left out of the runs with faults */
	bool broken;
};

struct slot {
	uint8_t *p;
	size_t size;
	uint64_t seed;
};

static struct step steps[MAX_STEPS];
static unsigned int nsteps, nslots;
static struct slot slots[MAX_SLOTS];
static unsigned int nlive;
static bool eal_mode;
static uint64_t seed_counter;
/* most blocks and bytes a failed call of the run left allocated */
static long leak_blocks, leak_bytes;

/* --- what the source does: a wrapper around its functions ---------------------------------- */

struct resv {
	bool meta;
	/* the source itself refused it (EAL: a 4 MiB memzone aligned to 4 MiB): a fallback follows */
	bool refused;
	size_t len;
	int step;
};

static const struct hpm_source_ops *real_src;
static struct hpm_source_ops wrap_src;
static struct resv resv_log[MAX_RESV];
static unsigned int nresv;
static void *chunks[MAX_CHUNKS];
static unsigned int nchunks;
static int cur_step = -1;

static void
log_resv(bool meta, bool refused, size_t len)
{
	if (nresv < MAX_RESV)
		resv_log[nresv++] = (struct resv){.meta = meta,
			.refused = refused,
			.len = len,
			.step = cur_step};
}

static int
wrap_reserve(struct hpm_region *r, size_t len, size_t align, int socket, unsigned int flags)
{
	int rc = real_src->reserve(r, len, align, socket, flags);

	/* every attempt the hook let through, as the hook counts them */
	log_resv(false, rc != 0, rc == 0 ? r->len : len);
	if (rc == 0 && nchunks < MAX_CHUNKS)
		chunks[nchunks++] = r->va;
	return rc;
}

static int
wrap_reserve_meta(struct hpm_region *r, size_t len, const char *name)
{
	int rc = real_src->reserve_meta(r, len, name);

	log_resv(true, rc != 0, rc == 0 ? r->len : len);
	return rc;
}

static void
wrap_release(struct hpm_region *r)
{
	unsigned int i;

	for (i = 0; i < nchunks; i++)
		if (chunks[i] == r->va) {
			chunks[i] = chunks[--nchunks];
			break;
		}
	real_src->release(r);
}

/* Watch the source from now on (after hpm_init()). */
static void
wrap_source(void)
{
	real_src = hpm_src;
	wrap_src = *real_src;
	wrap_src.reserve = wrap_reserve;
	wrap_src.reserve_meta = wrap_reserve_meta;
	wrap_src.release = wrap_release;
	hpm_src = &wrap_src;
	nresv = 0;
	nchunks = 0;
}

/*
 * Metadata in use, less the page map's leaves (installed once, kept until
 * hpm_fini()), the descriptors of released chunks (kept for the next
 * chunks, chunk.c) and the granule classes' bins by segment (made with a
 * class's first page there, kept until hpm_fini(): a run that a fault made
 * take another way may leave a class without its first page).
 */
static size_t
meta_used(void)
{
	size_t leaves = 0, spares = 0, bins = 0, i, cls, seg;

	for (i = 0; i < RTE_DIM(hpm_state->pagemap.root); i++)
		leaves += hpm_state->pagemap.root[i] != NULL;
	for (i = 0; i < hpm_state->nsockets; i++) {
		const struct hpm_arena *a = &hpm_state->arenas[hpm_state->socket_ids[i]];

		spares += a->cs.spare_bytes;
		for (cls = 0; cls < HPM_GRAN_NCLASS; cls++)
			for (seg = 0; seg < HPM_GRAN_NBSEG; seg++)
				if (a->gran.cls[cls].segs[seg] != NULL)
					bins += hpm_meta_bytes(a->gran.cls[cls].segs[seg],
						sizeof(struct hpm_gran_bseg));
	}
	return hpm_state->meta.used_bytes - spares - bins -
		leaves * (sizeof(struct hpm_unit *) << HPM_PM_LEAF_BITS);
}

static void
memzone_count(const struct rte_memzone *mz, void *arg)
{
	if (strncmp(mz->name, "hpm_", 4) == 0)
		(*(unsigned int *)arg)++;
}

/* hpmalloc's memzones (EAL), 0 otherwise. */
static unsigned int
hpm_memzones(void)
{
	unsigned int n = 0;

	if (eal_mode)
		rte_memzone_walk(memzone_count, &n);
	return n;
}

/* --- blocks and their contents ------------------------------------------------------------- */

static inline uint8_t
pattern(uint64_t seed, size_t off)
{
	return (uint8_t)((seed >> (off & 31)) + off * 167 + 1);
}

/* The bytes checked: the first and last 64, and one per 4 KiB page between. */
static size_t
next_sample(size_t off, size_t size, uint64_t seed)
{
	size_t tail = size > 64 ? size - 64 : 0;
	size_t next;

	if (off + 1 < 64 || off + 1 >= tail)
		return off + 1;
	next = RTE_ALIGN_FLOOR(off, 4096) + 4096 + seed % 4096;
	return next < tail ? next : tail;
}

#define FOR_SAMPLES(size, off, seed) \
	for (size_t off = 0; off < (size); off = next_sample(off, (size), (seed)))

static void
fill(struct slot *s)
{
	FOR_SAMPLES(s->size, off, s->seed)
	s->p[off] = pattern(s->seed, off);
}

static bool
intact(const struct slot *s)
{
	FOR_SAMPLES(s->size, off, s->seed)
	if (s->p[off] != pattern(s->seed, off)) {
		fprintf(stderr, "block %p (%zu B): byte %zu is %#x, want %#x\n", s->p, s->size, off,
			s->p[off], pattern(s->seed, off));
		return false;
	}
	return true;
}

static bool
zeroed(const uint8_t *p, size_t size)
{
	size_t i;

	if (size <= KIB(64)) {
		for (i = 0; i < size; i++)
			if (p[i] != 0)
				return false;
		return true;
	}
	FOR_SAMPLES(size, off, (uint64_t)size)
	if (p[off] != 0)
		return false;
	return true;
}

static void
take(unsigned int k, uint8_t *p, size_t size, unsigned int align, bool zero, const char *what)
{
	struct slot *s = &slots[k];
	size_t eff = align < 64 ? 64 : align, usable = 0;

	CHECK(((uintptr_t)p & (eff - 1)) == 0, "%s: %p not aligned to %zu", what, p, eff);
	CHECK(hpm_malloc_validate(p, &usable) == 0 && usable >= size, "%s: %p usable %zu < %zu",
		what, p, usable, size);
	if (zero)
		CHECK(zeroed(p, size), "%s: %p (%zu B) not zeroed", what, p, size);
	s->p = p;
	s->size = size;
	s->seed = ++seed_counter * UINT64_C(0x9e3779b97f4a7c15);
	fill(s);
	nlive++;
}

static void
drop(unsigned int k)
{
	struct slot *s = &slots[k];

	CHECK(intact(s), "block %p damaged before its free", s->p);
	hpm_free(s->p);
	s->p = NULL;
	nlive--;
}

static bool
all_intact(void)
{
	unsigned int k;
	bool ok = true;

	for (k = 0; k < nslots; k++)
		if (slots[k].p != NULL && !intact(&slots[k]))
			ok = false;
	return ok;
}

/* Bytes of the chunks of every socket (their units, not the metadata). */
static size_t
chunk_bytes(void)
{
	struct hpm_heap_stats hs;
	size_t bytes = 0;
	int i, saved = rte_errno;

	for (i = 0; i < RTE_MAX_NUMA_NODES; i++)
		if (hpm_heap_get_stats(i, &hs) == 0)
			bytes += hs.chunk_bytes;
	rte_errno = saved;
	return bytes;
}

/* Statistics summed over the sockets: what the application holds (caches excluded). */
static void
totals(struct rte_malloc_socket_stats *t)
{
	struct rte_malloc_socket_stats s;
	int i, saved = rte_errno; /* absent sockets set it */

	memset(t, 0, sizeof(*t));
	for (i = 0; i < RTE_MAX_NUMA_NODES; i++)
		if (hpm_malloc_get_socket_stats(i, &s) == 0) {
			t->heap_totalsz_bytes += s.heap_totalsz_bytes;
			t->heap_allocsz_bytes += s.heap_allocsz_bytes;
			t->alloc_count += s.alloc_count;
		}
	rte_errno = saved;
}

/* --- the workload -------------------------------------------------------------------------- */

static unsigned int
add(enum op op, size_t size, unsigned int num, unsigned int align, int target, const char *what)
{
	struct step *st = &steps[nsteps];
	unsigned int n = op == OP_BULK ? num : 1;

	if (nsteps == MAX_STEPS || nslots + n > MAX_SLOTS) {
		fprintf(stderr, "workload too long\n");
		exit(1);
	}
	*st = (struct step){.op = op, .size = size, .num = num, .align = align, .what = what};
	if (op == OP_REALLOC || op == OP_FREE) {
		st->slot = target;
	} else {
		st->slot = nslots;
		nslots += n;
	}
	nsteps++;
	return st->slot;
}

static void
build_workload(void)
{
	unsigned int r, i, first, s_small, s_heap, s_g4, s_large;

	nsteps = nslots = 0;
	for (r = 0; r < NROUNDS; r++) {
		first = nslots;
		s_small = add(OP_MALLOC, 100, 1, 0, 0, "heap 100 B");
		add(OP_ZMALLOC, 2000, 1, 0, 0, "heap 2000 B");
		add(OP_CALLOC, 1000, 10, 0, 0, "heap 10 x 1000 B");
		s_heap = add(OP_MALLOC, KIB(200) + 8, 1, 0, 0, "heap 200 KiB");
		add(OP_MALLOC, KIB(4), 1, KIB(4), 0, "4K granule");
		add(OP_ZMALLOC, KIB(12), 1, KIB(4), 0, "4K run 12 KiB");
		add(OP_MALLOC, KIB(64), 1, KIB(64), 0, "4K run 64K/64K");
		add(OP_CALLOC, KIB(64), 3, KIB(64), 0, "4K run 3 x 64 KiB");
		add(OP_CALLOC, KIB(64), 6, KIB(64), 0, "64K run 6 x 64 KiB");
		s_g4 = add(OP_MALLOC, KIB(300), 1, 0, 0, "4K run 300 KiB");
		add(OP_MALLOC, 64, 1, MIB(2), 0, "4K granule 2M-aligned");
		s_large = add(OP_MALLOC, MIB(3), 1, 0, 0, "large 3 MiB");
		add(OP_ZMALLOC, MIB(2), 1, MIB(2), 0, "large 2 MiB/2M");
		add(OP_MALLOC, MIB(1), 1, MIB(4), 0, "large 1 MiB/4M");
		add(OP_REALLOC, KIB(150), 1, 0, s_small, "heap 100 B -> 150 KiB");
		add(OP_REALLOC, KIB(1536), 1, 0, s_heap, "heap 200 KiB -> 1.5 MiB");
		add(OP_REALLOC, MIB(7), 1, 0, s_large, "large 3 -> 7 MiB");
		add(OP_REALLOC, KIB(40), 1, 0, s_g4, "4K run 300 -> 40 KiB");
		add(OP_BULK, KIB(4), 32, KIB(4), 0, "32 x 4K/4K");
		add(OP_BULK, 64, 16, 0, 0, "16 x 64 B");
		add(OP_BULK, KIB(64), 8, KIB(64), 0, "8 x 64K/64K");
		add(OP_BULK, KIB(256), 4, 0, 0, "4 x 256 KiB");
		if (eal_mode)
			add(OP_CONTIG, MIB(2), 1, 0, 0, "2 MiB");
		/* heap spans enough that their metadata needs regions of its own */
		for (i = 0; i < HEAP_FILL; i++)
			add(OP_BULK, KIB(30) + 8 + i * 64, 32, 0, 0, "32 x heap ~30 KiB");
		/* holes for the next round to reuse */
		for (i = first; i < nslots; i += 3)
			add(OP_FREE, 0, 0, 0, i, "free");
	}
}

/* Outcome of a step: 0 done, 1 skipped (its block is gone), -1 failed cleanly. */
static int
run_step(unsigned int i, const char *phase)
{
	const struct step *st = &steps[i];
	struct rte_malloc_socket_stats before, after;
	unsigned int k, n = st->op == OP_BULK ? st->num : 1;
	void *objs[64];
	uint8_t *p = NULL;
	size_t size = st->size;
	int rc = 0;

	if (st->broken)
		return 1;
	if (st->op == OP_FREE || st->op == OP_REALLOC) {
		if (slots[st->slot].p == NULL)
			return 1;
	} else if (slots[st->slot].p != NULL) {
		return 1; /* done already */
	}
	if (st->op == OP_FREE) {
		drop(st->slot);
		return 0;
	}
	totals(&before);
	cur_step = i;
	rte_errno = 0;
	switch (st->op) {
	case OP_MALLOC:
		p = hpm_malloc("faults", size, st->align);
		break;
	case OP_ZMALLOC:
		p = hpm_zmalloc("faults", size, st->align);
		break;
	case OP_CALLOC:
		p = hpm_calloc("faults", st->num, size, st->align);
		size *= st->num;
		break;
	case OP_REALLOC:
		p = hpm_realloc(slots[st->slot].p, size, st->align);
		break;
	case OP_CONTIG:
		p = hpm_malloc_contig("faults", size, st->align, SOCKET_ID_ANY);
		break;
	case OP_BULK:
		memset(objs, 0x5a, sizeof(objs));
		rc = hpm_malloc_bulk(objs, n, size, st->align, SOCKET_ID_ANY);
		break;
	case OP_FREE:
		break;
	}
	cur_step = -1;
	if (st->op == OP_BULK ? rc == 0 : p != NULL) {
		if (st->op == OP_REALLOC) {
			struct slot *s = &slots[st->slot];

			/* what both sizes hold moved with the block */
			FOR_SAMPLES(s->size, off, s->seed)
			if (off < size && p[off] != pattern(s->seed, off)) {
				CHECK(false, "%s step %u realloc %s: byte %zu lost", phase, i,
					st->what, off);
				break;
			}
			s->p = NULL;
			nlive--;
			take(st->slot, p, size, st->align, false, st->what);
		} else if (st->op == OP_BULK) {
			for (k = 0; k < n; k++)
				take(st->slot + k, objs[k], size, st->align, false, st->what);
		} else {
			take(st->slot, p, size, st->align,
				st->op == OP_ZMALLOC || st->op == OP_CALLOC, st->what);
		}
		return 0;
	}
	/* a failure: ENOMEM, and nothing changed */
	CHECK(st->op == OP_BULK ? rc == -ENOMEM : true, "%s step %u bulk %s: %d", phase, i,
		st->what, rc);
	CHECK(rte_errno == ENOMEM, "%s step %u %s %s: rte_errno %d (%s)", phase, i,
		op_names[st->op], st->what, rte_errno, rte_strerror(rte_errno));
	if (st->op == OP_REALLOC)
		CHECK(hpm_malloc_validate(slots[st->slot].p, NULL) == 0,
			"%s step %u: failed realloc lost its block", phase, i);
	hpm_cache_flush();
	totals(&after);
	leak_blocks =
		RTE_MAX(leak_blocks, labs((long)after.alloc_count - (long)before.alloc_count));
	leak_bytes = RTE_MAX(leak_bytes,
		labs((long)after.heap_allocsz_bytes - (long)before.heap_allocsz_bytes));
	CHECK(after.alloc_count == nlive && after.alloc_count == before.alloc_count,
		"%s step %u %s %s failed and left %u blocks (%u live)", phase, i, op_names[st->op],
		st->what, after.alloc_count, nlive);
	CHECK(after.heap_allocsz_bytes == before.heap_allocsz_bytes,
		"%s step %u %s %s failed and left %zu bytes allocated (was %zu)", phase, i,
		op_names[st->op], st->what, after.heap_allocsz_bytes, before.heap_allocsz_bytes);
	CHECK(hpm_heap_check() == 0, "%s step %u: heap check after a failed %s", phase, i,
		op_names[st->op]);
	CHECK(all_intact(), "%s step %u: live blocks damaged by a failed %s", phase, i,
		op_names[st->op]);
	return -1;
}

/* --- one run of the workload, with or without a fault ------------------------------------- */

struct outcome {
	long fault;
	int first_fail;
	unsigned int failed;
	long leak_blocks; /* most blocks a failed call left allocated */
	long leak_bytes;
	unsigned int skipped;
	unsigned int retried;
	unsigned int retried_ok;
	long held_delta;          /* heap_totalsz after the first failed call less before it */
	unsigned int left_blocks; /* after freeing everything */
	size_t left_bytes;
	size_t left_held; /* after the trim */
	unsigned int left_chunks;
	long left_meta; /* metadata in use less that of the run without faults */
	int left_zones;
	int check;
	unsigned int nresv;
};

static struct hpm_config run_cfg;
static size_t ref_meta;
static unsigned int base_zones;

static void
run(long fault, struct outcome *o, bool reference)
{
	struct rte_malloc_socket_stats st, pre;
	bool failed[MAX_STEPS] = {false};
	unsigned int i;
	int rc;

	memset(o, 0, sizeof(*o));
	o->fault = fault;
	o->first_fail = -1;
	memset(slots, 0, sizeof(slots));
	nlive = 0;
	seed_counter = 0;
	leak_blocks = leak_bytes = 0;
	rc = hpm_init(&run_cfg);
	CHECK(rc == 0, "hpm_init: %d", rc);
	if (rc != 0)
		return;
	wrap_source();
	hpm_source_fail_after = reference ? LONG_MAX / 2 : fault;
	for (i = 0; i < nsteps; i++) {
		long left = hpm_source_fail_after;

		totals(&pre);
		if (reference)
			steps[i].resv_before = LONG_MAX / 2 - left;
		rc = run_step(i, reference ? "reference" : "fault");
		if (rc == 1)
			o->skipped++;
		if (rc != -1)
			continue;
		if (reference) {
			CHECK(false, "step %u (%s %s) fails without a fault: left out from now on",
				i, op_names[steps[i].op], steps[i].what);
			steps[i].broken = true;
			continue;
		}
		failed[i] = true;
		o->failed++;
		if (o->first_fail < 0) {
			o->first_fail = i;
			totals(&st);
			o->held_delta = (long)st.heap_totalsz_bytes - (long)pre.heap_totalsz_bytes;
		}
	}
	o->leak_blocks = leak_blocks;
	o->leak_bytes = leak_bytes;
	o->nresv = reference ? LONG_MAX / 2 - hpm_source_fail_after : nresv;
	/* memory is back: the calls that failed succeed */
	hpm_source_fail_after = NO_FAULT;
	for (i = 0; i < nsteps; i++)
		if (failed[i]) {
			rc = run_step(i, "retry");
			/* a realloc whose block a later step freed: nothing to retry */
			if (rc == 1 && steps[i].op == OP_REALLOC)
				continue;
			o->retried++;
			CHECK(rc == 0, "retry of step %u (%s %s) once memory is back: %d", i,
				op_names[steps[i].op], steps[i].what, rc);
			o->retried_ok += rc == 0;
		}
	CHECK(all_intact(), "live blocks damaged at the end");
	o->check = hpm_heap_check();
	CHECK(o->check == 0, "heap check at the end");
	for (i = 0; i < nslots; i++)
		if (slots[i].p != NULL)
			drop(i);
	hpm_cache_flush();
	hpm_heap_trim();
	totals(&st);
	o->left_blocks = st.alloc_count;
	o->left_bytes = st.heap_allocsz_bytes;
	o->left_held = chunk_bytes();
	o->left_chunks = nchunks;
	if (reference)
		ref_meta = meta_used();
	o->left_meta = (long)meta_used() - (long)ref_meta;
	CHECK(o->left_blocks == 0 && o->left_bytes == 0, "fault %ld: %u blocks, %zu bytes left",
		fault, o->left_blocks, o->left_bytes);
	/* retain_size 0: every chunk went back to the source */
	CHECK(o->left_held == 0 && o->left_chunks == 0,
		"fault %ld: %zu bytes held, %u chunks reserved after the trim", fault, o->left_held,
		o->left_chunks);
	CHECK(o->left_meta == 0, "fault %ld: %ld bytes of metadata more than without a fault",
		fault, o->left_meta);
	hpm_fini();
	o->left_zones = (int)hpm_memzones() - (int)base_zones;
	CHECK(o->left_zones == 0, "fault %ld: %d memzones left after hpm_fini()", fault,
		o->left_zones);
}

static const char *
resv_name(long n, char *buf, size_t len)
{
	if (n < 0 || n >= (long)nresv)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%s %zu KiB%s", resv_log[n].meta ? "meta" : "chunk",
			resv_log[n].len >> 10, resv_log[n].refused ? " (refused)" : "");
	return buf;
}

static void
faults(void)
{
	struct outcome ref, o;
	struct resv ref_log[MAX_RESV];
	unsigned int ref_nresv, meta_resv = 0, absorbed = 0;
	long n;
	int e;

	build_workload();
	hpm_config_defaults(&run_cfg);
	run_cfg.source = eal_mode ? HPM_SOURCE_EAL : HPM_SOURCE_ANON;
	run_cfg.chunk_size = MIB(2); /* every unit a reservation of its own */
	run_cfg.retain_size = 0;
	run_cfg.release_delay_ms = 0;
	base_zones = hpm_memzones();

	run(NO_FAULT, &ref, true);
	if (test_failures != 0) {
		/* count again without the broken steps */
		printf("counting again without the steps that fail without a fault\n");
		run(NO_FAULT, &ref, true);
	}
	ref_nresv = RTE_MIN(nresv, (unsigned int)MAX_RESV);
	memcpy(ref_log, resv_log, sizeof(ref_log));
	/* the hook counts reservations it let through, the log every attempt it saw */
	CHECK(ref.nresv == ref_nresv || test_failures != 0,
		"the hook counted %u reservations, the log %u attempts", ref.nresv, ref_nresv);
	for (n = 0; n < (long)ref_nresv; n++)
		meta_resv += ref_log[n].meta;
	CHECK(meta_resv > 0, "the workload made no metadata reservation");
	if (getenv("HPM_TEST_VERBOSE") != NULL)
		for (n = 0; n < (long)ref_nresv; n++)
			printf("reservation %ld: step %d, %s of %zu KiB\n", n, ref_log[n].step,
				ref_log[n].meta ? "metadata" : "chunk", ref_log[n].len >> 10);
	printf("workload: %u calls, %u reservations (%u chunks, %u metadata), %u blocks at most\n",
		nsteps, ref.nresv, ref.nresv - meta_resv, meta_resv, nslots);
	printf("\n%-5s %-16s %-44s %6s %-22s %-18s %s\n", "fault", "reservation",
		"first failed call (step)", "failed", "left after the failure",
		"left after free+trim", "retried");
	for (n = 0; n <= (long)ref_nresv && test_failures < 20; n++) {
		char rname[48], call[96], left[96], end[96];
		const struct step *st;

		run(n, &o, false);
		memcpy(resv_log, ref_log, sizeof(ref_log));
		nresv = ref_nresv;
		/* the step that made reservation n in the run without faults */
		for (e = 0; e + 1 < (int)nsteps && steps[e + 1].resv_before <= n; e++)
			;
		if (o.first_fail >= 0) {
			st = &steps[o.first_fail];
			if (o.first_fail > e)
				snprintf(call, sizeof(call), "%s %s (%d; %d made it, got by)",
					op_names[st->op], st->what, o.first_fail, e);
			else
				snprintf(call, sizeof(call), "%s %s (%d)", op_names[st->op],
					st->what, o.first_fail);
			/* the failure surfaces in the call that made the reservation, or later */
			CHECK(o.first_fail >= e, "fault %ld surfaced in step %d, before step %d", n,
				o.first_fail, e);
			absorbed += o.first_fail > e;
		} else {
			snprintf(call, sizeof(call),
				n == (long)ref_nresv ? "none (no such reservation)"
						     : "none (got by)");
			absorbed += n < (long)ref_nresv;
		}
		snprintf(left, sizeof(left), "%ld blk %ld B held%+ldK", o.leak_blocks, o.leak_bytes,
			o.held_delta / 1024);
		snprintf(end, sizeof(end), "%u blk %u chunks %+ld", o.left_blocks, o.left_chunks,
			o.left_meta);
		printf("%-5ld %-16s %-44s %6u %-22s %-18s %u/%u\n", n,
			resv_name(n, rname, sizeof(rname)), call, o.failed, left, end, o.retried_ok,
			o.retried);
		CHECK(n == (long)ref_nresv ? o.failed == 0 : true,
			"a fault past the last reservation failed %u calls", o.failed);
	}
	if (test_failures == 0)
		printf("\n%ld faults injected: every failed call gave ENOMEM and left 0 blocks and "
		       "0 bytes; %u got by (a fallback served the call that made the reservation); "
		       "after free+trim: 0 chunks, metadata as without a fault%s\n",
			n, absorbed, eal_mode ? ", no memzone left" : "");
}

/* hpm_init() whose reservations fail; the implicit init of a first call too. */
static void
init_faults(void)
{
	struct hpm_config cfg;
	unsigned int zones = hpm_memzones();
	void *p;
	long n;
	int rc;

	hpm_config_defaults(&cfg);
	cfg.source = eal_mode ? HPM_SOURCE_EAL : HPM_SOURCE_ANON;
	cfg.chunk_size = MIB(2);
	/* with an initial reservation: the state's metadata (0), then the chunk (1) */
	cfg.initial_size = MIB(4);
	for (n = 0; n < 2; n++) {
		hpm_source_fail_after = n;
		rc = hpm_init(&cfg);
		hpm_source_fail_after = NO_FAULT;
		CHECK(rc == -ENOMEM, "hpm_init with reservation %ld failing: %d", n, rc);
		CHECK(hpm_source_name() == NULL, "a failed hpm_init left hpmalloc initialised");
		CHECK(hpm_memzones() == zones, "a failed hpm_init left %u memzones",
			hpm_memzones() - zones);
		printf("%-5ld %-16s %-44s %6s %s\n", n, n == 0 ? "meta (state)" : "chunk 4096 KiB",
			"hpm_init(initial_size 4 MiB)", "-ENOMEM", "nothing: not initialised");
	}
	rc = hpm_init(&cfg);
	CHECK(rc == 0, "hpm_init once memory is back: %d", rc);
	p = hpm_malloc("faults", 100, 0);
	CHECK(p != NULL, "malloc after init");
	hpm_free(p);
	CHECK(hpm_heap_check() == 0, "heap check");
	hpm_fini();
	/* the first call initialises: its failure is the call's */
	hpm_source_fail_after = 0;
	rte_errno = 0;
	p = hpm_malloc("faults", 100, 0);
	hpm_source_fail_after = NO_FAULT;
	CHECK(p == NULL && rte_errno == ENOMEM,
		"first malloc with hpm_init's metadata failing: %p, rte_errno %d", p, rte_errno);
	CHECK(hpm_source_name() == NULL, "a failed implicit init left hpmalloc initialised");
	printf("%-5d %-16s %-44s %6s %s\n", 0, "meta (state)", "first hpm_malloc (implicit init)",
		"ENOMEM", "nothing: not initialised");
	p = hpm_malloc("faults", 100, 0);
	CHECK(p != NULL, "first malloc once memory is back: rte_errno %d", rte_errno);
	hpm_free(p);
	hpm_fini();
	CHECK(hpm_memzones() == zones, "memzones left");
}

/* --- hugepages exhausted, without the hook ------------------------------------------------- */

/* 2 MiB blocks until the source says no; their number. */
static unsigned int
fill_up(void **blocks, unsigned int from, unsigned int max)
{
	unsigned int n;

	for (n = from; n < max; n++) {
		rte_errno = 0;
		blocks[n] = hpm_malloc("exhaust", MIB(2), 0);
		if (blocks[n] == NULL)
			break;
		*(uint64_t *)blocks[n] = n;
	}
	return n;
}

/* Hugepages someone else took since the start: the checks below would not hold. */
static long
others_hold(long nr)
{
	struct rte_malloc_socket_stats st = {0};

	if (hpm_source_name() != NULL)
		totals(&st);
	/* metadata is hugepages only with EAL's */
	if (hpm_source_name() != NULL && strcmp(hpm_source_name(), "eal") != 0)
		st.heap_totalsz_bytes = chunk_bytes();
	return nr - test_hugepages_2m("free_hugepages") - (long)(st.heap_totalsz_bytes / MIB(2));
}

static void
check_exhausted(unsigned int live, const char *what, bool failed)
{
	struct rte_malloc_socket_stats st;

	CHECK(failed && rte_errno == ENOMEM, "%s with hugepages exhausted: rte_errno %d", what,
		rte_errno);
	totals(&st);
	CHECK(st.alloc_count == live, "%s with hugepages exhausted left %u blocks (%u live)", what,
		st.alloc_count, live);
	CHECK(hpm_heap_check() == 0, "heap check after %s", what);
}

static int
hugepages_exhausted(void)
{
	long nr = test_hugepages_2m("nr_hugepages"), free0 = test_hugepages_2m("free_hugepages"),
	     free1;
	bool force = getenv("HPM_TEST_EXHAUST") != NULL;
	struct hpm_config cfg;
	unsigned int n, m, i, half;
	void **blocks, *p, *objs[4];
	uint8_t *big;
	int rc;

	if (nr <= 0 || free0 <= 0) {
		printf("no free 2 MiB hugepages: skipped\n");
		return TEST_SKIP;
	}
	/* taking them all would starve whoever else uses them */
	if (free0 != nr && !force) {
		printf("other processes hold %ld of %ld hugepages: skipped "
		       "(HPM_TEST_EXHAUST=1 to run anyway)\n",
			nr - free0, nr);
		return TEST_SKIP;
	}
	hpm_config_defaults(&cfg);
	cfg.source = HPM_SOURCE_HUGETLBFS;
	cfg.chunk_size = MIB(2);
	cfg.retain_size = 0; /* what is freed goes back to the kernel at once */
	cfg.release_delay_ms = 0;
	rc = hpm_init(&cfg);
	if (rc == -ENODEV) {
		printf("hugetlbfs source not available: skipped\n");
		return TEST_SKIP;
	}
	CHECK(rc == 0, "hpm_init: %d", rc);
	if (rc != 0)
		return 1;
	blocks = calloc(free0 + 64, sizeof(*blocks));
	n = fill_up(blocks, 0, free0 + 64);
	if (!force && others_hold(nr) > 0)
		goto busy;
	check_exhausted(n, "2 MiB malloc", n < free0 + 64);
	printf("hugepages: %ld of %ld free; %u blocks of 2 MiB before ENOMEM, %ld left free\n",
		free0, nr, n, test_hugepages_2m("free_hugepages"));
	CHECK(n + 8 >= (unsigned int)free0, "only %u of %ld free hugepages became blocks", n,
		free0);
	/* every route, now that no unit can be had */
	p = hpm_malloc("exhaust", 64, 0);
	check_exhausted(n, "heap malloc", p == NULL);
	p = hpm_zmalloc("exhaust", KIB(4), KIB(4));
	check_exhausted(n, "4K/4K zmalloc", p == NULL);
	p = hpm_calloc("exhaust", 2, KIB(64), KIB(64));
	check_exhausted(n, "4K run 128K/64K calloc", p == NULL);
	p = hpm_calloc("exhaust", 6, KIB(64), KIB(64));
	check_exhausted(n, "64K run calloc", p == NULL);
	big = hpm_realloc(blocks[0], MIB(6), 0);
	check_exhausted(n, "realloc 2 -> 6 MiB", big == NULL);
	CHECK(*(uint64_t *)blocks[0] == 0, "a failed realloc damaged its block");
	rc = hpm_malloc_bulk(objs, RTE_DIM(objs), KIB(4), KIB(4), SOCKET_ID_ANY);
	check_exhausted(n, "bulk", rc == -ENOMEM);
	printf("%-5s %-16s %-44s %6s %s\n", "-", "hugepages", "2 MiB, heap, 4K, 64K, realloc, bulk",
		"ENOMEM", "nothing: 0 blocks, heap checks");

	/* free half: those hugepages go back, and are had again */
	for (i = 0, half = 0; i < n; i += 2, half++) {
		CHECK(*(uint64_t *)blocks[i] == i, "block %u damaged", i);
		hpm_free(blocks[i]);
		blocks[i] = NULL;
	}
	printf("freed %u blocks: %ld hugepages free\n", half, test_hugepages_2m("free_hugepages"));
	p = hpm_malloc("exhaust", 64, 0);
	CHECK(p != NULL, "heap malloc after freeing half: rte_errno %d", rte_errno);
	hpm_free(p);
	p = hpm_zmalloc("exhaust", KIB(4), KIB(4));
	CHECK(p != NULL, "4K/4K after freeing half: rte_errno %d", rte_errno);
	hpm_free(p);
	big = hpm_realloc(blocks[1], MIB(6), 0);
	CHECK(big != NULL, "realloc 2 -> 6 MiB after freeing half: rte_errno %d", rte_errno);
	if (big != NULL) {
		CHECK(*(uint64_t *)big == 1, "realloc lost the contents");
		blocks[1] = big;
	}
	rc = hpm_malloc_bulk(objs, RTE_DIM(objs), KIB(4), KIB(4), SOCKET_ID_ANY);
	CHECK(rc == 0, "bulk after freeing half: %d", rc);
	if (rc == 0)
		hpm_free_bulk(objs, RTE_DIM(objs));
	/* the freed slots again, until the source says no */
	for (i = 0, m = 0; i < n; i += 2) {
		blocks[i] = hpm_malloc("exhaust", MIB(2), 0);
		if (blocks[i] == NULL)
			break;
		*(uint64_t *)blocks[i] = i;
		m++;
	}
	if (!force && others_hold(nr) > 0)
		goto busy;
	CHECK(m + 3 + 8 >= half, "after freeing %u blocks only %u fit again", half, m);
	printf("%-5s %-16s %-44s %6s %u of %u freed blocks allocated again\n", "-", "hugepages",
		"after freeing half: every route", "ok", m, half);
	CHECK(hpm_heap_check() == 0, "heap check");
	for (i = 0; i < n; i++)
		if (blocks[i] != NULL) {
			CHECK(*(uint64_t *)blocks[i] == i, "block %u damaged", i);
			hpm_free(blocks[i]);
		}
	CHECK(hpm_heap_check() == 0, "heap check after freeing everything");
	hpm_fini();
	free(blocks);
	free1 = test_hugepages_2m("free_hugepages");
	printf("after hpm_fini(): %ld hugepages free (%ld at the start)\n", free1, free0);
	if (!force && free1 != free0 && others_hold(nr) > 0) {
		printf("other processes took hugepages meanwhile: skipped\n");
		return TEST_SKIP;
	}
	if (!force)
		CHECK(free1 == free0, "%ld hugepages free after hpm_fini(), %ld before", free1,
			free0);
	return 0;

busy:
	/* another process took hugepages while this one ran: nothing here can be judged */
	printf("other processes took %ld hugepages meanwhile: skipped\n", others_hold(nr));
	for (i = 0; i < n; i++)
		hpm_free(blocks[i]);
	hpm_fini();
	free(blocks);
	return TEST_SKIP;
}

int
main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "anon";
	int rc;

	if (!strcmp(mode, "hugepages")) {
		rc = hugepages_exhausted();
		if (rc == TEST_SKIP)
			return TEST_SKIP;
		return test_end("faults_hugepages");
	}
	if (!strcmp(mode, "eal")) {
		if (test_eal_init("faults", "-l", "0", "--no-pci", NULL) != 0)
			return TEST_SKIP;
		eal_mode = true;
	} else if (strcmp(mode, "anon") != 0) {
		fprintf(stderr, "usage: %s anon|eal|hugepages\n", argv[0]);
		return 2;
	}
	printf("source %s\n", eal_mode ? "eal" : "anon");
	faults();
	printf("\ninitialisation:\n");
	init_faults();
	return test_end("faults");
}
