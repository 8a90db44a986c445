/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The metadata arena alone (layer l4_meta, anonymous memory), against a
 * model: every block's class (powers of two to 4 KiB, multiples of 4 KiB to
 * 1 MiB, a region of its own above), zeroed, cache-line aligned, apart from
 * every other live block and intact until freed; a freed block served again
 * to the next request of its class; the arena's used bytes the sum of its
 * live blocks' classes; and every reserved byte accounted for: used, on a
 * free list, past the bump pointer, or a region's header (a full region's
 * tail goes to the free lists, less than 64 bytes of it lost).
 *
 * Usage: test_meta [ops]
 */

#include <stdint.h>
#include <stdlib.h>

#include <rte_common.h>

#include "meta.h"
#include "source.h"
#include "source_anon.h"
#include "test_common.h"

#define MAX_LIVE 600

struct live {
	uint8_t *p;
	size_t size;
};

static struct live live[MAX_LIVE];
static unsigned int nlive;

/* what a block of size bytes takes, for sizes up to 1 MiB */
static size_t
model_bytes(size_t size)
{
	size_t b = 64;

	if (size > HPM_META_PAGE)
		return RTE_ALIGN_CEIL(size, HPM_META_PAGE);
	while (b < size)
		b <<= 1;
	return b;
}

/* the free list of a block of model_bytes() b, and the bytes of list c's blocks */
static unsigned int
model_class(size_t b)
{
	return b <= HPM_META_PAGE
		? rte_log2_u64(b) - HPM_META_MIN_LOG2
		: (b >> HPM_META_PAGE_LOG2) + HPM_META_PAGE_LOG2 - HPM_META_MIN_LOG2 - 1;
}

static size_t
model_class_bytes(unsigned int c)
{
	return c <= HPM_META_PAGE_LOG2 - HPM_META_MIN_LOG2
		? (size_t)1 << (c + HPM_META_MIN_LOG2)
		: (size_t)(c - (HPM_META_PAGE_LOG2 - HPM_META_MIN_LOG2 - 1)) << HPM_META_PAGE_LOG2;
}

static size_t
random_size(uint64_t *rs)
{
	switch (test_rand(rs) % 8) {
	case 0:
		return 1 + test_rand(rs) % 64;
	case 1:
	case 2:
		return 1 + test_rand(rs) % 4096;
	case 3:
	case 4:
		return 4096 + test_rand(rs) % (64 << 10);
	case 5:
		return 42312; /* a slab unit's descriptor: same-size reuse */
	case 6:
		return (64 << 10) + test_rand(rs) % (448 << 10);
	default:
		return test_rand(rs) % 64 == 0 ? (1 << 20) + 1 + test_rand(rs) % (1 << 20)
					       : 1 + test_rand(rs) % 1024;
	}
}

static bool
block_zeroed(const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != 0)
			return false;
	return true;
}

/* bytes on the free lists, by the model's class sizes */
static size_t
free_list_bytes(const struct hpm_meta *m)
{
	size_t bytes = 0;
	unsigned int c;

	for (c = 0; c < RTE_DIM(m->free); c++) {
		const void *p;

		for (p = m->free[c]; p != NULL; p = *(void *const *)p)
			bytes += model_class_bytes(c);
	}
	return bytes;
}

static void
check_accounts(const struct hpm_meta *m, size_t base)
{
	const struct hpm_meta_region *mr;
	size_t used = base, reserved = 0, own = 0, slack, accounted;
	unsigned int i, shared = 0;

	for (i = 0; i < nlive; i++)
		used += hpm_meta_bytes(live[i].p, live[i].size);
	CHECK(m->used_bytes == used, "used %zu bytes, live blocks %zu", m->used_bytes, used);
	for (mr = m->regions; mr != NULL; mr = mr->next) {
		reserved += mr->region.len;
		for (i = 0; i < nlive; i++)
			if (live[i].size > (1u << HPM_META_MAX_LOG2) &&
				live[i].p == (const uint8_t *)mr + HPM_META_HDR_SIZE)
				break;
		if (i < nlive)
			own += mr->region.len;
		else
			shared++;
	}
	CHECK(m->reserved_bytes == reserved, "reserved %zu, regions %zu", m->reserved_bytes,
		reserved);
	/* the first region's header and bootstrap are in base; the others' headers are not used */
	accounted = m->used_bytes + free_list_bytes(m) + (size_t)(m->end - m->bump) +
		(shared - 1) * HPM_META_HDR_SIZE;
	CHECK(accounted <= reserved, "%zu bytes accounted of %zu reserved", accounted, reserved);
	slack = reserved - accounted;
	CHECK(slack < shared * 64, "%zu bytes of %u regions lost (own regions %zu bytes)", slack,
		shared, own);
}

static void
free_one(struct hpm_meta *m, unsigned int k)
{
	CHECK(test_intact(live[k].p, live[k].size), "block %p of %zu bytes changed while live",
		(void *)live[k].p, live[k].size);
	hpm_meta_free(m, hpm_src, live[k].p, live[k].size);
	live[k] = live[--nlive];
}

int
main(int argc, char **argv)
{
	unsigned long ops = argc > 1 ? strtoul(argv[1], NULL, 0) : 200000, op;
	uint64_t rs = 0x3e7a;
	struct hpm_meta *m;
	unsigned int i, reused = 0, tails = 0;
	size_t base;
	void *p;
	int rc;

	hpm_src = &hpm_source_anon;
	rc = hpm_meta_bootstrap(hpm_src, sizeof(*m), "hpmt_meta", &p);
	CHECK(rc == 0, "bootstrap: %d", rc);
	if (rc != 0)
		return test_end("meta");
	m = p;
	hpm_meta_init(m, (struct hpm_meta_region *)((uint8_t *)m - HPM_META_HDR_SIZE), sizeof(*m));
	base = m->used_bytes;
	for (op = 0; op < ops && !test_failures; op++) {
		if (nlive < MAX_LIVE && (nlive == 0 || test_rand(&rs) % 100 < 55)) {
			size_t size = random_size(&rs);
			size_t want = size > (1u << HPM_META_MAX_LOG2) ? 0 : model_bytes(size);
			void *head = want != 0 ? m->free[model_class(want)] : NULL;
			uint8_t *before = m->bump;
			uint8_t *b = hpm_meta_alloc(m, hpm_src, size);

			CHECK(b != NULL, "no metadata of %zu bytes", size);
			if (b == NULL)
				break;
			CHECK(((uintptr_t)b & 63) == 0, "%p of %zu bytes not on a line", (void *)b,
				size);
			CHECK(want == 0 || hpm_meta_bytes(b, size) == want,
				"%zu bytes take %zu, the model %zu", size, hpm_meta_bytes(b, size),
				want);
			CHECK(want != 0 || hpm_meta_bytes(b, size) >= size + HPM_META_HDR_SIZE,
				"%zu bytes in a region of %zu", size, hpm_meta_bytes(b, size));
			CHECK(head == NULL || b == head, "%zu bytes: %p, not the freed %p", size,
				(void *)b, head);
			reused += head != NULL;
			tails += want != 0 && head == NULL && m->bump != before + want;
			CHECK(block_zeroed(b, size), "%p of %zu bytes not zeroed", (void *)b, size);
			for (i = 0; i < nlive; i++) {
				size_t bb = hpm_meta_bytes(b, size);
				size_t lb = hpm_meta_bytes(live[i].p, live[i].size);

				if (want == 0)
					bb = size;
				if (live[i].size > (1u << HPM_META_MAX_LOG2))
					lb = live[i].size;
				if (b < live[i].p + lb && live[i].p < b + bb) {
					CHECK(false, "%p (%zu) overlaps %p (%zu)", (void *)b, bb,
						(void *)live[i].p, lb);
					break;
				}
			}
			live[nlive++] = (struct live){b, size};
			test_fill(b, size);
		} else {
			free_one(m, test_rand(&rs) % nlive);
		}
		if (op % 1000 == 0)
			check_accounts(m, base);
	}
	check_accounts(m, base);
	while (nlive > 0)
		free_one(m, nlive - 1);
	check_accounts(m, base);
	CHECK(m->used_bytes == base, "after the drain: %zu bytes used, %zu at the start",
		m->used_bytes, base);
	CHECK(reused > 0 && tails > 0, "ops %lu: %u blocks reused, %u regions begun", ops, reused,
		tails);
	printf("meta: %lu operations, %u blocks served from the free lists, %u regions begun, "
	       "%zu bytes reserved\n",
		op, reused, tails, m->reserved_bytes);
	hpm_meta_release_all(m, hpm_src);
	return test_end("meta");
}
