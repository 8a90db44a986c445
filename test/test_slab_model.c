/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Size-class pages against a model, linking the block allocators' layer and
 * those below it only. The fit table is checked against a search of every
 * class for every size and alignment. Then random allocations (single, and
 * batches for caches of four owners), frees, bad frees and owners giving
 * their pages up, on a chunk set of anonymous memory: every block must be
 * aligned as its class says, inside a slab unit, overlap no live block, keep
 * its contents, and the slab layer's check must pass and count what the
 * model counts. A drain gives every unit back to the chunk set.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>

#include <rte_common.h>

#include "chunk.h"
#include "meta.h"
#include "pagemap.h"
#include "slab.h"
#include "source.h"
#include "source_anon.h"
#include "test_common.h"

#define MAX_LIVE 20000u
#define MAX_UNITS 512u
#define OWNERS 4u

struct env {
	struct hpm_meta meta;
	struct hpm_pagemap pm;
	struct hpm_chunk_set cs;
	struct hpm_slab_set ss;
};

struct live {
	uint8_t *p;
	unsigned int cls;
	bool cached;
};

/* The units blocks were seen in, each with a map of its 64-byte slots in use. */
struct occupancy {
	uintptr_t unit_va[MAX_UNITS];
	uint64_t used[MAX_UNITS][(HPM_UNIT_SIZE >> 6) / 64];
	unsigned int n;
};

static struct live live[MAX_LIVE];
static unsigned int nlive;
static struct occupancy occ;

static uint64_t *
unit_map(uintptr_t va)
{
	unsigned int i;

	for (i = 0; i < occ.n; i++)
		if (occ.unit_va[i] == va)
			return occ.used[i];
	if (occ.n == MAX_UNITS)
		return NULL;
	occ.unit_va[occ.n] = va;
	memset(occ.used[occ.n], 0, sizeof(occ.used[0]));
	return occ.used[occ.n++];
}

/* Mark (or clear) a block's slots; false if any was already (or not) marked. */
static bool
occupy(const uint8_t *p, size_t bytes, bool on)
{
	uintptr_t a = (uintptr_t)p, va = a & ~(uintptr_t)(HPM_UNIT_SIZE - 1);
	uint64_t *map = unit_map(va);
	size_t s, first = (a - va) >> 6, n = bytes >> 6;
	bool ok = map != NULL;

	for (s = first; ok && s < first + n; s++) {
		uint64_t bit = UINT64_C(1) << (s % 64);

		if (!!(map[s / 64] & bit) == on)
			ok = false;
		map[s / 64] ^= bit;
	}
	return ok;
}

static void
check_fit_table(void)
{
	unsigned int row, cls;
	size_t size;

	for (cls = 0; cls < HPM_SLAB_NCLASS; cls++) {
		unsigned int b = hpm_slab_class_bytes[cls];

		CHECK(b % 64 == 0 && b <= HPM_SLAB_MAX && b != 4096, "class %u: %u bytes", cls, b);
		CHECK(cls == 0 || b > hpm_slab_class_bytes[cls - 1], "classes ascend at %u", cls);
	}
	for (row = 0; row < HPM_SLAB_NALIGN; row++) {
		size_t align = (size_t)64 << row;
		size_t aligns[2] = {align, row == 0 ? 8 : align};

		for (size = 1; size <= HPM_SLAB_MAX + 1; size++) {
			unsigned int k;

			for (k = 0; k < 2; k++) {
				int want = -1, got = hpm_slab_class(size, aligns[k]);

				for (cls = 0; cls < HPM_SLAB_NCLASS && size <= HPM_SLAB_MAX;
					cls++) {
					unsigned int b = hpm_slab_class_bytes[cls];

					if (b >= size &&
						(b & -b) >= RTE_MAX(aligns[k], (size_t)64)) {
						want = (int)cls;
						break;
					}
				}
				CHECK(got == want, "size %zu align %zu: class %d, model %d", size,
					aligns[k], got, want);
			}
		}
	}
	CHECK(hpm_slab_class(100, 4096) == -1, "4 KiB alignments are not the slab's");
	CHECK(hpm_slab_class(0, 64) == -1, "size 0 has no class");
}

static bool
block_ok(struct env *e, const uint8_t *p, unsigned int cls)
{
	struct hpm_unit *u = hpm_pagemap_lookup(&e->pm, p);
	unsigned int b = hpm_slab_class_bytes[cls];

	return u != NULL && u->role == HPM_UNIT_SLAB && ((uintptr_t)p & ((b & -b) - 1)) == 0 &&
		hpm_slab_class_at(u, p) == cls && (size_t)(p - u->va) + b <= HPM_UNIT_SIZE;
}

static void
add_live(struct env *e, uint8_t *p, unsigned int cls, bool cached, const char *how)
{
	unsigned int b = hpm_slab_class_bytes[cls];

	CHECK(block_ok(e, p, cls), "%s: block %p of class %u misplaced", how, p, cls);
	CHECK(occupy(p, b, true), "%s: block %p of %u bytes overlaps a live one", how, p, b);
	test_fill(p, b);
	live[nlive++] = (struct live){p, cls, cached};
}

static void
free_live(struct env *e, unsigned int k)
{
	struct live l = live[k];
	struct hpm_unit *u = hpm_pagemap_lookup(&e->pm, l.p);
	unsigned int b = hpm_slab_class_bytes[l.cls];
	size_t bytes = 0;

	CHECK(test_intact(l.p, b), "block %p of class %u: contents changed", l.p, l.cls);
	CHECK(hpm_slab_block_size(u, l.p) == (l.cached ? 0 : b),
		"block size of %p: %zu (cached %d)", l.p, hpm_slab_block_size(u, l.p), l.cached);
	CHECK(hpm_slab_free(&e->ss, u, l.p, &bytes) == 0 && bytes == b, "free %p of class %u", l.p,
		l.cls);
	CHECK(occupy(l.p, b, false), "freed block %p was not marked", l.p);
	live[k] = live[--nlive];
}

/* Frees the slab must refuse, the heap intact after each. */
static void
bad_frees(struct env *e, uint64_t *rs)
{
	struct live l;
	struct hpm_unit *u;
	size_t bytes;

	if (nlive == 0)
		return;
	l = live[test_rand(rs) % nlive];
	u = hpm_pagemap_lookup(&e->pm, l.p);
	if (hpm_slab_class_bytes[l.cls] > 64)
		CHECK(hpm_slab_free(&e->ss, u, l.p + 64, &bytes) == -EINVAL, "interior free %p",
			l.p + 64);
	CHECK(hpm_slab_free(&e->ss, u, l.p + 8, &bytes) == -EINVAL, "misaligned free %p", l.p + 8);
	CHECK(hpm_slab_block_size(u, l.p + 64 * (hpm_slab_class_bytes[l.cls] > 64)) ==
			(hpm_slab_class_bytes[l.cls] > 64 || l.cached
					? 0
					: hpm_slab_class_bytes[l.cls]),
		"block size of an interior pointer");
}

static void
verify(struct env *e, const char *when)
{
	size_t live_bytes = 0, want_bytes = 0;
	uint64_t live_count = 0;
	unsigned int bad = hpm_slab_verify(&e->ss, &live_bytes, &live_count), i;

	for (i = 0; i < nlive; i++)
		want_bytes += hpm_slab_class_bytes[live[i].cls];
	CHECK(bad == 0, "%s: the slab check found %u problems", when, bad);
	CHECK(live_bytes == want_bytes && live_count == nlive,
		"%s: live %zu bytes in %" PRIu64 ", model %zu in %u", when, live_bytes, live_count,
		want_bytes, nlive);
}

static unsigned int
random_class(uint64_t *rs)
{
	/* small classes more often, as sizes are drawn log-uniform */
	return (unsigned int)(test_rand(rs) % (1 + test_rand(rs) % HPM_SLAB_NCLASS));
}

static void
run_model(struct env *e, unsigned long ops, uint64_t *rs)
{
	unsigned long op;

	for (op = 0; op < ops; op++) {
		unsigned int r = test_rand(rs) % 100, i;

		if (r < 30 && nlive < MAX_LIVE) {
			struct hpm_blockinfo bi;
			unsigned int cls = random_class(rs);
			uint8_t *p = hpm_slab_alloc(&e->ss, cls, &bi);

			CHECK(p != NULL, "alloc of class %u", cls);
			if (p == NULL)
				break;
			CHECK(bi.bytes == hpm_slab_class_bytes[cls], "bytes %zu", bi.bytes);
			add_live(e, p, cls, false, "alloc");
		} else if (r < 45 && nlive + 64 < MAX_LIVE) {
			void *objs[64];
			uint8_t *states[64];
			unsigned int cls = random_class(rs), n = 1 + test_rand(rs) % 64;
			unsigned int owner = test_rand(rs) % OWNERS;
			unsigned int got = hpm_slab_take(&e->ss, cls, owner, objs, states, n);

			CHECK(got == n, "take %u of class %u: %u", n, cls, got);
			for (i = 0; i < got; i++) {
				CHECK(*states[i] == HPM_BLK_CACHED, "taken block's state %u",
					*states[i]);
				add_live(e, objs[i], cls, true, "take");
			}
		} else if (r < 95 && nlive > 0) {
			free_live(e, test_rand(rs) % nlive);
		} else if (r < 97) {
			hpm_slab_disown(&e->ss, test_rand(rs) % OWNERS);
		} else {
			bad_frees(e, rs);
		}
		if (op % 4096 == 0)
			verify(e, "random");
	}
	verify(e, "after the random run");
}

/*
 * A slot left pointing at a page another slot owns (an owner change that
 * forgot the old slot) is found: the check counts owned pages against the
 * slots in use rather than walking every slot.
 */
static void
stale_slot(struct env *e)
{
	unsigned int cls, o, free_slot = OWNERS;
	struct hpm_slab_class *sc = NULL;
	struct hpm_slab_page *pg = NULL;

	for (cls = 0; cls < HPM_SLAB_NCLASS && pg == NULL; cls++)
		for (o = 0; o < OWNERS && pg == NULL; o++)
			if (e->ss.cls[cls].own[o] != NULL)
				pg = e->ss.cls[cls].own[o], sc = &e->ss.cls[cls];
	CHECK(pg != NULL, "no page is owned after the random run");
	if (pg == NULL)
		return;
	for (o = 0; o < OWNERS && free_slot == OWNERS; o++)
		if (sc->own[o] == NULL)
			free_slot = o;
	CHECK(free_slot < OWNERS, "every slot of class %u is in use", pg->cls);
	if (free_slot == OWNERS)
		return;
	sc->own[free_slot] = pg;
	sc->nowned++;
	CHECK(hpm_slab_verify(&e->ss, &(size_t){0}, &(uint64_t){0}) != 0,
		"a second slot on page %p (owner %u) passes the check", (void *)pg, pg->owner);
	sc->own[free_slot] = NULL;
	sc->nowned--;
	verify(e, "slot restored");
}

static void
drain(struct env *e)
{
	unsigned int o, cls;
	size_t longest = 0, free_bytes = 0;
	unsigned int count = 0;

	while (nlive > 0)
		free_live(e, nlive - 1);
	for (o = 0; o < OWNERS; o++)
		hpm_slab_disown(&e->ss, o);
	verify(e, "drained");
	/* one empty page at most is kept, the spare */
	for (cls = 0; cls < HPM_SLAB_NCLASS; cls++)
		CHECK(e->ss.cls[cls].npages == (e->ss.spare != NULL && e->ss.spare->cls == cls),
			"class %u keeps %u pages", cls, e->ss.cls[cls].npages);
	hpm_slab_release_spares(&e->ss);
	CHECK(e->ss.spare == NULL, "the spare page is kept after the release");
	for (cls = 0; cls < HPM_SLAB_NCLASS; cls++)
		CHECK(e->ss.cls[cls].npages == 0, "class %u keeps %u pages after the release", cls,
			e->ss.cls[cls].npages);
	CHECK(e->ss.nunits == 0 && e->ss.nempty == 0, "units %u empty %u after release",
		e->ss.nunits, e->ss.nempty);
	hpm_chunk_free_ranges(&e->cs, &count, &longest, &free_bytes);
	CHECK(free_bytes == e->cs.total_bytes, "chunk set: %zu of %zu bytes free", free_bytes,
		e->cs.total_bytes);
	CHECK(hpm_chunk_verify(&e->cs) == 0, "chunk set check");
}

int
main(int argc, char **argv)
{
	uint64_t rs = test_seed(0x51ab0000);
	unsigned long ops = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000000;
	struct env *e;
	void *p;
	int rc;

	check_fit_table();
	hpm_src = &hpm_source_anon;
	rc = hpm_meta_bootstrap(hpm_src, sizeof(*e), "hpmt_slab_model", &p);
	CHECK(rc == 0, "metadata: %d", rc);
	if (rc != 0)
		return test_end("slab_model");
	e = p;
	hpm_meta_init(&e->meta, (struct hpm_meta_region *)((uint8_t *)e - HPM_META_HDR_SIZE),
		sizeof(*e));
	hpm_chunk_set_init(&e->cs, 0, -1, &e->meta, &e->pm, HPM_UNIT_SIZE * 8, 0, 0, false);
	hpm_slab_set_init(&e->ss, &e->cs);
	run_model(e, ops, &rs);
	stale_slot(e);
	drain(e);
	/* the same heap again: units come back from the chunk set's free ones */
	run_model(e, ops / 4, &rs);
	drain(e);
	return test_end("slab_model");
}
