/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * libFuzzer harness: the input is a sequence of API calls run against a model
 * of the live blocks (address, size, pattern). Every result is checked: a
 * request that must succeed does, aligned, apart from every live block, and
 * zeroed for zmalloc/calloc; a bad request fails with the rte_errno the API
 * documents; contents survive realloc and every other call; validate and
 * usable_size agree with the model; bad frees (interior, double, foreign
 * pointers) are counted and change nothing; statistics count the live
 * blocks. At the end of each input everything is freed and the statistics
 * (alloc_count, heap_allocsz_bytes) are back at their baseline.
 *
 * One long-lived heap serves every input (hpm_init() once, in
 * LLVMFuzzerInitialize): an input starts from an empty heap because the one
 * before it drained it, not because the heap was made again, so that the
 * fuzzer runs thousands of inputs a second under ASan, and the heap's reuse
 * of its free lists, caches and retained chunks is what gets fuzzed. The whole
 * heap is checked (hpm_heap_check, the statistics against the model, every
 * live block's contents) at the first CHECK operation of an input and at the
 * end of one input in CHECK_EVERY (then the dumps run too); one input in
 * TRIM_EVERY trims the heap and checks what it still holds. An input's costly
 * work is bounded (TOUCH_BUDGET, see cost()): an operation that would zero,
 * copy or take more than what is left of it is skipped. The process runs on
 * 4 KiB pages (no transparent hugepages: a fault on a new chunk would clear
 * 2 MiB). HPM_FUZZ_REINIT=1 in the environment makes the heap again for
 * every input (hpm_fini, hpm_init), for a crash that seems to need the heap
 * an earlier input left.
 *
 * Input format (test/fuzz/gen-corpus.py writes seeds in it): one byte picks
 * the operation (its value modulo OP_COUNT), then the operation's bytes:
 *   MALLOC, ZMALLOC   size align
 *   CALLOC            num size align
 *   REALLOC           target size align          (target 255: NULL)
 *   FREE              target
 *   BULK              n size align               (n modulo 65)
 *   FREE_BULK         k target*k                 (k modulo 17; target >= 128: NULL)
 *   VALIDATE          target
 *   BAD               kind action arg16          (interior, double, foreign...)
 *   SOCKET            socket size align         (socket >> 6: malloc, zmalloc, calloc,
 *                                                  realloc(NULL) of the _socket family)
 *   CONTIG            size align
 *   TRIM, CHECK       -
 *   ROUTE             r v                         (a request aimed at one route:
 *                                                  r % 8 the route, r / 8 % 4 the call,
 *                                                  v the size within the route; below)
 * size: one byte k, then: k 0: 0; 1: SIZE_MAX; 2: SIZE_MAX - byte; 3: 2^46 + 1;
 *   4: 2^40 << (byte % 7); 5: an edge of a route (table, byte); else a size of
 *   (k % 23) bits (1 B to 4 MiB), low bits from two bytes.
 * align: one byte a: below 0x80: 2^(a % 23) (1 B to 4 MiB); to 0x9f: 0; to 0xbf:
 *   an odd number (not a power of two); to 0xdf: 2^(23 + a % 9) (8 MiB to 2 GiB);
 *   else 0x80000000, UINT_MAX or 0x80000001.
 * Missing bytes read as 0.
 */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include <rte_errno.h>

#include "hpm_malloc.h"

#define MIB (UINT64_C(1) << 20)
#define MAX_LIVE 256
#define LIVE_BYTES_MAX (64 * MIB)
#define OK_SIZE_MAX (4 * MIB)
#define OK_ALIGN_MAX (4 * MIB)
#define SIZE_LIMIT (UINT64_C(1) << 46) /* larger requests fail with ENOMEM */
#define RETAIN (256 * MIB)
#define CHUNK (4 * MIB)
#define FREED_RING 16
/* bytes an input may zero, copy or map fresh (large requests beyond OK_SIZE_MAX) */
#define TOUCH_BUDGET (8 * MIB)
/* the whole heap is checked at the end of one input in this many */
#define CHECK_EVERY 64
/* and trimmed (what it holds then is checked) at the end of one in this many */
#define TRIM_EVERY 4096

#define FUZZ_CHECK(cond, ...)                                                                 \
	do {                                                                                  \
		if (!(cond)) {                                                                \
			fprintf(stderr, "fuzz_heap: %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                                         \
			fputc('\n', stderr);                                                  \
			abort();                                                              \
		}                                                                             \
	} while (0)

enum {
	OP_MALLOC,
	OP_ZMALLOC,
	OP_CALLOC,
	OP_REALLOC,
	OP_FREE,
	OP_BULK,
	OP_FREE_BULK,
	OP_VALIDATE,
	OP_BAD,
	OP_SOCKET,
	OP_CONTIG,
	OP_TRIM,
	OP_CHECK,
	OP_ROUTE,
	OP_COUNT,
};

/* What a request must give. */
enum expect { EXP_OK, EXP_MAYBE, EXP_EINVAL, EXP_ENOMEM };

struct input {
	const uint8_t *p;
	size_t n;
};

struct blk {
	uint8_t *p;
	size_t size;
	uint8_t seed;
	bool filled;
};

static struct blk live[MAX_LIVE];
static unsigned int nlive;
static size_t live_bytes;
static uintptr_t freed[FREED_RING];
static unsigned int freed_pos;
static uint64_t bad_expected;
static uint8_t seed_counter;
static int static_target;
static size_t touch_left;
/*
 * The default alignment, not as a constant: clang 14 takes the header's
 * alloc_align attribute at its word and crashes on an alignment of 0.
 */
static volatile unsigned int align_default;

static uint8_t
byte(struct input *in)
{
	if (in->n == 0)
		return 0;
	in->n--;
	return *in->p++;
}

static uint16_t
u16(struct input *in)
{
	uint16_t lo = byte(in);

	return lo | (uint16_t)byte(in) << 8;
}

static const size_t route_edges[] = {1, 48, 63, 64, 65, 1072, 1073, 1088, 4095, 4096, 4097, 65535,
	65536, 65537, 262143, 262144, 262145, 2 * MIB - 1, 2 * MIB, 2 * MIB + 1, 4 * MIB};

static size_t
get_size(struct input *in)
{
	uint8_t k = byte(in);
	unsigned int bits;
	size_t lo;

	switch (k) {
	case 0:
		return 0;
	case 1:
		return SIZE_MAX;
	case 2:
		return SIZE_MAX - byte(in);
	case 3:
		return SIZE_LIMIT + 1;
	case 4:
		return (UINT64_C(1) << 40) << (byte(in) % 7);
	case 5:
		return route_edges[byte(in) % RTE_DIM(route_edges)];
	default:
		bits = k % 23; /* [2^bits, 2^(bits+1)) from 1 B to 4 MiB */
		lo = (size_t)1 << bits;
		return lo + u16(in) % lo;
	}
}

static unsigned int
get_align(struct input *in)
{
	uint8_t a = byte(in);

	if (a < 0x80)
		return 1u << (a % 23);
	if (a < 0xa0)
		return 0;
	if (a < 0xc0)
		return ((a & 0x1f) << 1 | 1) + 2; /* odd, at least 3 */
	if (a < 0xe0)
		return 1u << (23 + a % 9);
	return a % 3 == 0 ? 0x80000000u : a % 3 == 1 ? UINT_MAX : 0x80000001u;
}

static enum expect
expect(size_t size, unsigned int align)
{
	if (size == 0 || (align & (align - 1)) != 0)
		return EXP_EINVAL;
	if (size > SIZE_LIMIT)
		return EXP_ENOMEM;
	if (size > OK_SIZE_MAX || align > OK_ALIGN_MAX)
		return EXP_MAYBE;
	return EXP_OK;
}

/*
 * A block's pattern: byte off of a block with seed s is patbuf[pat_index(s,
 * off)]. Within 4 KiB of offsets the bytes are consecutive in patbuf (which
 * holds its 4 KiB sequence twice), so that a range is written with memcpy and
 * checked with memcmp; across 4 KiB the phase moves, so that a block copied 4 KiB
 * off its place does not look intact.
 */
static uint8_t patbuf[8192];

static inline size_t
pat_index(uint8_t seed, size_t off)
{
	return (seed * 67u + off + (off >> 12) * 13) & 4095;
}

static void
pattern_init(void)
{
	unsigned int i;

	for (i = 0; i < sizeof(patbuf); i++)
		patbuf[i] = (uint8_t)((i & 4095) * 31 + ((i & 4095) >> 8) * 101 + 1);
}

static inline uint8_t
pattern(uint8_t seed, size_t off)
{
	return patbuf[pat_index(seed, off)];
}

/*
 * The bytes a block's pattern covers: the first 256, the last 64, 16 spread
 * between: range k of a block of size bytes is [*from, *to); false past the last.
 */
static bool
sample(size_t size, unsigned int k, size_t *from, size_t *to)
{
	size_t tail = RTE_MAX(size > 64 ? size - 64 : 0, (size_t)256),
	       stride = RTE_MAX(size / 16, (size_t)4096), off;

	if (k == 0) {
		*from = 0;
		*to = RTE_MIN(size, (size_t)256);
		return true;
	}
	if (tail >= size)
		return false;
	off = 256 + (k - 1) * stride;
	if (off < tail) {
		*from = off;
		*to = off + 1;
		return true;
	}
	if (off - stride >= tail && k > 1)
		return false;
	*from = tail;
	*to = size;
	return true;
}

#define FOR_SAMPLES(size, from, to) \
	for (size_t _k = 0, from = 0, to = 0; sample((size), _k, &from, &to); _k++)

/* Range [from, to) of a block with seed s, cut at 4 KiB of offsets (one phase each). */
#define FOR_PIECES(from, to, off, end)                                                  \
	for (size_t off = (from), end; off < (to) &&                                    \
		(end = RTE_MIN((to), RTE_ALIGN_FLOOR(off, (size_t)4096) + 4096), true); \
		off = end)

static void
fill(struct blk *b)
{
	if (!b->filled)
		return;
	FOR_SAMPLES(b->size, from, to)
	FOR_PIECES(from, to, off, end)
	memcpy(b->p + off, &patbuf[pat_index(b->seed, off)], end - off);
}

/* Whether the samples of a block with seed s below limit are at p; else where not. */
static bool
intact(const uint8_t *p, size_t size, uint8_t seed, size_t limit, size_t *bad)
{
	FOR_SAMPLES(size, from, to)
	FOR_PIECES(from, RTE_MIN(to, limit), off, end)
	if (memcmp(p + off, &patbuf[pat_index(seed, off)], end - off) != 0) {
		while (p[off] == pattern(seed, off))
			off++;
		*bad = off;
		return false;
	}
	return true;
}

static void
check_intact(const struct blk *b, const char *when)
{
	size_t off = 0;

	if (!b->filled)
		return;
	FUZZ_CHECK(intact(b->p, b->size, b->seed, b->size, &off),
		"%s: block %p (%zu B): byte %zu is %#x, not %#x", when, b->p, b->size, off,
		b->p[off], pattern(b->seed, off));
}

/* What a realloc moved: the samples of the old block that the new one covers. */
static void
check_moved(const struct blk *old, const uint8_t *p, size_t size)
{
	size_t off = 0;

	if (!old->filled)
		return;
	FUZZ_CHECK(intact(p, old->size, old->seed, size, &off),
		"realloc %p (%zu B) -> %p (%zu B): byte %zu lost", old->p, old->size, p, size, off);
}

static void
check_zeroed(const uint8_t *p, size_t size)
{
	static const uint8_t zeros[4096];
	size_t i;

	for (i = 0; i < size && i < 65536; i += sizeof(zeros))
		FUZZ_CHECK(memcmp(p + i, zeros, RTE_MIN(size - i, sizeof(zeros))) == 0,
			"zeroed block %p (%zu B): not zero from byte %zu on", p, size, i);
	FOR_SAMPLES(size, from, to)
	FOR_PIECES(from, to, off, end)
	FUZZ_CHECK(memcmp(p + off, zeros, end - off) == 0,
		"zeroed block %p (%zu B): not zero in [%zu, %zu)", p, size, off, end);
}

static int
find_live(uintptr_t a)
{
	unsigned int i;

	for (i = 0; i < nlive; i++)
		if ((uintptr_t)live[i].p == a)
			return i;
	return -1;
}

static void
check_stats(void)
{
	struct rte_malloc_socket_stats st;

	FUZZ_CHECK(hpm_malloc_get_socket_stats(0, &st) == 0, "stats");
	FUZZ_CHECK(st.alloc_count == nlive, "alloc_count %u, model %u", st.alloc_count, nlive);
	FUZZ_CHECK(st.heap_allocsz_bytes >= live_bytes, "heap_allocsz %zu < model %zu",
		st.heap_allocsz_bytes, live_bytes);
	FUZZ_CHECK(hpm_bad_free_count() == bad_expected,
		"bad frees counted %" PRIu64 ", expected %" PRIu64, hpm_bad_free_count(),
		bad_expected);
}

/* A new block: aligned, valid, apart from every other; into the model. */
static void
add(uint8_t *p, size_t size, unsigned int align, bool zero)
{
	size_t eff = align < 64 ? 64 : align, usable = 0;
	struct blk *b;
	unsigned int i;

	FUZZ_CHECK(((uintptr_t)p & (eff - 1)) == 0, "%p not aligned to %zu", p, eff);
	FUZZ_CHECK(hpm_malloc_validate(p, &usable) == 0 && usable >= size,
		"validate %p: usable %zu < %zu", p, usable, size);
	FUZZ_CHECK(hpm_malloc_usable_size(p) == usable, "usable_size %zu, validate %zu",
		hpm_malloc_usable_size(p), usable);
	FUZZ_CHECK(hpm_malloc_virt2iova(p) == RTE_BAD_IOVA, "anon memory has an IOVA");
	for (i = 0; i < nlive; i++)
		FUZZ_CHECK(p + size <= live[i].p || live[i].p + live[i].size <= p,
			"%p+%zu overlaps live %p+%zu", p, size, live[i].p, live[i].size);
	FUZZ_CHECK(nlive < MAX_LIVE, "model full");
	if (zero && size <= LIVE_BYTES_MAX)
		check_zeroed(p, size);
	b = &live[nlive++];
	b->p = p;
	b->size = size;
	b->seed = ++seed_counter;
	b->filled = size <= LIVE_BYTES_MAX;
	live_bytes += size;
	fill(b);
}

static void
forget(unsigned int i)
{
	freed[freed_pos++ % FREED_RING] = (uintptr_t)live[i].p;
	live_bytes -= live[i].size;
	live[i] = live[--nlive];
}

static void
free_one(unsigned int i)
{
	check_intact(&live[i], "before free");
	hpm_free(live[i].p);
	forget(i);
}

/* Whether a request may be made now: the model's and memory's limits. */
static bool
fits(size_t size, enum expect e, unsigned int n)
{
	if (e != EXP_OK)
		return nlive + n <= MAX_LIVE;
	return nlive + n <= MAX_LIVE && size * n <= LIVE_BYTES_MAX - live_bytes;
}

/*
 * Whether an input may still spend bytes on zeroing, copying or fresh
 * mappings (TOUCH_BUDGET); if so they are spent.
 */
static bool
afford(size_t bytes)
{
	if (bytes > touch_left)
		return false;
	touch_left -= bytes;
	return true;
}

/*
 * What a request costs against the budget: the bytes of a block of 64 KiB or
 * more (ASan's shadow of a block is poisoned and unpoisoned at every
 * allocation and free; a block of its own is mapped), and three times the
 * bytes it zeroes (at most one zeroed block of 2 MiB an input).
 */
static size_t
cost(size_t size, unsigned int align, enum expect e, bool zero)
{
	size_t c = 0;

	if (e == EXP_EINVAL || e == EXP_ENOMEM)
		return 0;
	if (size > LIVE_BYTES_MAX || align > OK_ALIGN_MAX)
		return zero ? TOUCH_BUDGET + 1 : TOUCH_BUDGET; /* a mapping of its own */
	if (size >= 65536 || align >= 65536)
		c = RTE_MAX(size, (size_t)align); /* what the block may take with its alignment */
	return zero ? c + 3 * size : c;
}

/* The result of an allocation against what was expected. */
static void
result(void *p, size_t size, unsigned int align, enum expect e, bool zero, const char *what)
{
	if (p == NULL) {
		FUZZ_CHECK(e != EXP_OK, "%s(%zu, %u) failed: rte_errno %d", what, size, align,
			rte_errno);
		FUZZ_CHECK(rte_errno == (e == EXP_EINVAL ? EINVAL : ENOMEM),
			"%s(%zu, %u): rte_errno %d, expected %s", what, size, align, rte_errno,
			e == EXP_EINVAL ? "EINVAL" : "ENOMEM");
		return;
	}
	FUZZ_CHECK(e == EXP_OK || e == EXP_MAYBE, "%s(%zu, %u) gave %p", what, size, align, p);
	add(p, size, align, zero);
	if (e == EXP_MAYBE)
		free_one(nlive - 1);
}

static void
op_alloc(struct input *in, int op)
{
	size_t size, num = 1, total;
	unsigned int align;
	enum expect e;
	void *p;
	int socket = SOCKET_ID_ANY;
	unsigned int which = 0;

	if (op == OP_CALLOC) {
		uint8_t k = byte(in);

		num = k % 8 == 0 ? 0 : k % 8 == 1 ? 1 : k % 8 == 2 ? SIZE_MAX / 2 + 1 : k % 16;
	}
	if (op == OP_SOCKET) {
		uint8_t k = byte(in);

		socket = (int8_t)k;
		which = k >> 6;
	}
	size = get_size(in);
	align = get_align(in);
	if (__builtin_mul_overflow(num, size, &total)) {
		e = EXP_EINVAL;
		total = SIZE_MAX;
	} else {
		e = expect(total, align);
	}
	if (!fits(total, e, 1) ||
		!afford(cost(total, align, e,
			op == OP_ZMALLOC || op == OP_CALLOC ||
				(op == OP_SOCKET && (which == 1 || which == 2)))))
		return;
	rte_errno = 0;
	switch (op) {
	case OP_ZMALLOC:
		p = hpm_zmalloc("fuzz", size, align);
		break;
	case OP_CALLOC:
		p = hpm_calloc("fuzz", num, size, align);
		break;
	case OP_SOCKET:
		/* without hugepages a socket is only a wish: every one works */
		p = which == 0       ? hpm_malloc_socket("fuzz", size, align, socket)
			: which == 1 ? hpm_zmalloc_socket("fuzz", size, align, socket)
			: which == 2 ? hpm_calloc_socket("fuzz", 1, size, align, socket)
				     : hpm_realloc_socket(NULL, size, align, socket);
		break;
	default:
		p = hpm_malloc("fuzz", size, align);
	}
	result(p, total, align, e,
		op == OP_ZMALLOC || op == OP_CALLOC ||
			(op == OP_SOCKET && (which == 1 || which == 2)),
		op == OP_CALLOC ? "calloc" : "malloc");
}

static void
op_realloc(struct input *in)
{
	uint8_t t = byte(in);
	size_t size = get_size(in);
	unsigned int align = get_align(in);
	enum expect e = expect(size, align);
	struct blk old;
	unsigned int i;
	uint8_t *p;

	if (t == 255 || nlive == 0) {
		if (!fits(size, e, 1) || !afford(cost(size, align, e, false)))
			return;
		rte_errno = 0;
		result(hpm_realloc(NULL, size, align), size, align, e, false, "realloc(NULL)");
		return;
	}
	i = t % nlive;
	old = live[i];
	if (e == EXP_OK && size > old.size && size - old.size > LIVE_BYTES_MAX - live_bytes)
		return;
	/* a move copies what both sizes cover */
	if (!afford(cost(size, align, e, false) + RTE_MIN(old.size, size)))
		return;
	rte_errno = 0;
	p = hpm_realloc(old.p, size, align);
	if (p == NULL) {
		FUZZ_CHECK(e != EXP_OK, "realloc(%p, %zu, %u) failed: rte_errno %d", old.p, size,
			align, rte_errno);
		FUZZ_CHECK(rte_errno == (e == EXP_EINVAL ? EINVAL : ENOMEM),
			"realloc(%zu, %u): rte_errno %d", size, align, rte_errno);
		FUZZ_CHECK(hpm_malloc_validate(old.p, NULL) == 0, "failed realloc freed %p", old.p);
		check_intact(&old, "after a failed realloc");
		return;
	}
	FUZZ_CHECK(e == EXP_OK || e == EXP_MAYBE, "realloc(%zu, %u) gave %p", size, align, p);
	/* what both sizes cover moved with the block */
	check_moved(&old, p, size);
	live_bytes -= old.size;
	live[i] = live[--nlive];
	if (p != old.p)
		freed[freed_pos++ % FREED_RING] = (uintptr_t)old.p;
	add(p, size, align, false);
	if (e == EXP_MAYBE)
		free_one(nlive - 1);
}

static void
op_bulk(struct input *in)
{
	unsigned int n = byte(in) % 65, align, i;
	size_t size = get_size(in);
	enum expect e;
	void *objs[64];
	int rc;

	align = get_align(in);
	e = expect(size, align);
	if (e == EXP_MAYBE || !fits(size, e, n) || !afford(n * cost(size, align, e, false)))
		return;
	rte_errno = 0;
	rc = hpm_malloc_bulk(objs, n, size, align, SOCKET_ID_ANY);
	if (n == 0) {
		FUZZ_CHECK(rc == 0, "bulk of 0: %d", rc);
		return;
	}
	if (rc != 0) {
		FUZZ_CHECK(e != EXP_OK, "bulk %u x (%zu, %u): %d", n, size, align, rc);
		FUZZ_CHECK(rc == (e == EXP_EINVAL ? -EINVAL : -ENOMEM), "bulk %u x (%zu, %u): %d",
			n, size, align, rc);
		return;
	}
	FUZZ_CHECK(e == EXP_OK, "bulk %u x (%zu, %u) succeeded", n, size, align);
	for (i = 0; i < n; i++)
		add(objs[i], size, align, false);
}

static void
op_free_bulk(struct input *in)
{
	unsigned int k = byte(in) % 17, i, j, m = 0;
	void *objs[16];
	bool picked[MAX_LIVE] = {false};

	for (i = 0; i < k; i++) {
		uint8_t t = byte(in);

		objs[i] = NULL;
		if (t >= 128 || nlive == 0 || picked[t % nlive])
			continue;
		picked[t % nlive] = true;
		objs[i] = live[t % nlive].p;
		check_intact(&live[t % nlive], "before free_bulk");
		m++;
	}
	hpm_free_bulk(objs, k);
	for (i = 0; i < k; i++) {
		if (objs[i] == NULL)
			continue;
		j = find_live((uintptr_t)objs[i]);
		forget(j);
	}
	RTE_SET_USED(m);
}

static void
op_validate(struct input *in)
{
	size_t usable = 0;
	struct blk *b;

	if (nlive == 0)
		return;
	b = &live[byte(in) % nlive];
	FUZZ_CHECK(hpm_malloc_validate(b->p, &usable) == 0 && usable >= b->size,
		"validate %p: usable %zu < %zu", b->p, usable, b->size);
	FUZZ_CHECK(hpm_malloc_usable_size(b->p) == usable, "usable_size %zu, validate %zu",
		hpm_malloc_usable_size(b->p), usable);
	check_intact(b, "validate");
}

/* A pointer that is not a live block's start, or 0 if the input gives none. */
static uintptr_t
bad_pointer(uint8_t kind, uint16_t arg, void *heap_ptr)
{
	static const uintptr_t wild[] = {1, 0x1000, 64, (UINT64_C(1) << 47) - 64,
		UINT64_C(0xdead000000000000), UINTPTR_MAX & ~(uintptr_t)63,
		UINT64_C(0x7fff00000000)};
	int local = 0;
	struct blk *b = nlive > 0 ? &live[arg % nlive] : NULL;
	uintptr_t a = 0;

	switch (kind % 6) {
	case 0: /* interior of a live block */
		if (b != NULL)
			a = (uintptr_t)b->p + 1 + arg % RTE_MAX(b->size, (size_t)64);
		break;
	case 1: /* freed already */
		a = freed[arg % FREED_RING];
		break;
	case 2: /* the stack, static data, glibc's heap */
		a = arg % 3 == 0       ? (uintptr_t)&local
			: arg % 3 == 1 ? (uintptr_t)&static_target
				       : (uintptr_t)heap_ptr;
		break;
	case 3:
		a = wild[arg % RTE_DIM(wild)];
		break;
	case 4: /* 64-byte steps inside a live block's 2 MiB unit: headers, free blocks */
		if (b != NULL)
			a = RTE_ALIGN_FLOOR((uintptr_t)b->p, 2 * MIB) + (uintptr_t)arg * 64;
		break;
	default: /* just past a live block */
		if (b != NULL)
			a = RTE_ALIGN_CEIL((uintptr_t)b->p + b->size, 64);
		break;
	}
	if (a == 0 || find_live(a) >= 0)
		return 0;
	return a;
}

static void
op_bad(struct input *in)
{
	uint8_t kind = byte(in), action = byte(in);
	uint16_t arg = u16(in);
	void *heap_ptr = malloc(64);
	uintptr_t a = bad_pointer(kind, arg, heap_ptr);
	size_t usable = 1;
	unsigned int i;
	void *p;

	if (a != 0) {
		FUZZ_CHECK(hpm_malloc_validate((void *)a, &usable) == -1, "validate of bad %#lx",
			(unsigned long)a);
		FUZZ_CHECK(hpm_malloc_usable_size((void *)a) == 0, "usable_size of bad %#lx",
			(unsigned long)a);
		switch (action % 3) {
		case 0:
			hpm_free((void *)a);
			bad_expected++;
			break;
		case 1:
			rte_errno = 0;
			p = hpm_realloc((void *)a, 64, align_default);
			FUZZ_CHECK(p == NULL && rte_errno == EINVAL, "realloc of bad %#lx: %p, %d",
				(unsigned long)a, p, rte_errno);
			bad_expected++;
			break;
		default:
			break;
		}
		/* nothing moved: every live block is whole */
		for (i = 0; i < nlive; i++)
			if (i % 16 == arg % 16 || (kind % 6) == 0)
				check_intact(&live[i], "after a bad free");
	}
	free(heap_ptr);
}

static void
op_contig(struct input *in)
{
	size_t size = get_size(in);
	unsigned int align = get_align(in);
	enum expect e = expect(size, align);
	void *p;

	rte_errno = 0;
	p = hpm_malloc_contig("fuzz", size, align, SOCKET_ID_ANY);
	FUZZ_CHECK(p == NULL, "anon memory gave a contiguous block");
	FUZZ_CHECK(rte_errno ==
			(e == EXP_EINVAL                  ? EINVAL
					: e == EXP_ENOMEM ? ENOMEM
							  : ENOTSUP),
		"contig(%zu, %u): rte_errno %d", size, align, rte_errno);
}

/*
 * A request aimed at one route, from two bytes: r % 8 the route, r / 8 % 4
 * the call (malloc, zmalloc, calloc, realloc(NULL) or a _socket form), r / 32
 * a variant (alignment); v the size within the route. Routes are named by
 * what the API promises (size and alignment), not by the allocator's table.
 */
enum {
	RT_SMALL,  /* 1 B to 1 KiB, alignments up to 1 KiB */
	RT_MEDIUM, /* 1 KiB to 64 KiB, not multiples of 4 KiB */
	RT_4K,     /* multiples of 4 KiB, 4K-aligned or not */
	RT_64K,    /* multiples of 64 KiB, 64K-aligned or not; small 64K-aligned */
	RT_LARGE,  /* 2 MiB to 4 MiB, 2M-aligned or not */
	RT_CONTIG, /* hpm_malloc_contig: anon memory has none */
	RT_BULK,   /* hpm_malloc_bulk of one of the routes above */
	RT_MOVE,   /* realloc of a live block into one of the routes above */
};

static void
route_request(unsigned int route, unsigned int var, uint8_t v, size_t *size, unsigned int *align)
{
	static const unsigned int small_align[] = {0, 8, 16, 32, 64, 128, 256, 1024};

	switch (route % 5) {
	case RT_SMALL:
		*size = v == 255 ? 1024 : 1 + (size_t)v * 4;
		*align = small_align[var % 8];
		break;
	case RT_MEDIUM:
		*size = 1025 + (size_t)v * 251;
		if (*size % 4096 == 0)
			*size += 8;
		*align = small_align[var % 8];
		break;
	case RT_4K:
		*size = 4096 * (size_t)(1 + v % 16);
		if (var & 1)
			*size -= v % 4096 % *size; /* not a multiple: a 4K-aligned odd size */
		*align = var & 2 ? 0 : 4096;
		break;
	case RT_64K:
		*size = var == 7 ? 1 + (size_t)v * 16 : 65536 * (size_t)(1 + v % 31);
		*align = var & 1 ? 0 : 65536;
		break;
	default:
		*size = var & 2 ? 2 * MIB * (size_t)(1 + v % 2) : 2 * MIB + (size_t)v * 8192;
		*align = var & 1 ? 2 * MIB : 0;
		break;
	}
}

static void
op_route(struct input *in)
{
	uint8_t r = byte(in), v = byte(in);
	unsigned int route = r % 8, call = r / 8 % 4, var = r / 32, align, n, i;
	size_t size, num = 1;
	bool zero = call == 1 || call == 2;
	enum expect e;
	void *objs[32];
	uint8_t *p;
	int rc;

	switch (route) {
	case RT_CONTIG:
		route_request(var, var, v, &size, &align);
		rte_errno = 0;
		p = hpm_malloc_contig("fuzz", size, align, SOCKET_ID_ANY);
		FUZZ_CHECK(p == NULL && rte_errno == ENOTSUP, "contig(%zu, %u) on anon: %p, %d",
			size, align, p, rte_errno);
		return;
	case RT_BULK:
		route_request(var % 4, var, v, &size, &align);
		n = 1 + v % 32;
		if (!fits(size, EXP_OK, n) || !afford(n * cost(size, align, EXP_OK, false)))
			return;
		rc = hpm_malloc_bulk(objs, n, size, align, SOCKET_ID_ANY);
		FUZZ_CHECK(rc == 0, "bulk %u x (%zu, %u): %d", n, size, align, rc);
		for (i = 0; i < n; i++)
			add(objs[i], size, align, false);
		if (call != 0)
			return;
		/* back at once, in the order given */
		for (i = 0; i < n; i++)
			check_intact(&live[nlive - n + i], "before free_bulk");
		hpm_free_bulk(objs, n);
		for (i = 0; i < n; i++)
			forget(nlive - 1);
		return;
	case RT_MOVE:
		if (nlive == 0)
			return;
		route_request(var, var, v, &size, &align);
		i = (v + r) % nlive;
		if ((size > live[i].size && size - live[i].size > LIVE_BYTES_MAX - live_bytes) ||
			!afford(RTE_MIN(live[i].size, size) + cost(size, align, EXP_OK, false)))
			return;
		{
			struct blk old = live[i];

			p = hpm_realloc(old.p, size, align);
			FUZZ_CHECK(p != NULL, "realloc(%p, %zu, %u): rte_errno %d", old.p, size,
				align, rte_errno);
			check_moved(&old, p, size);
			live_bytes -= old.size;
			live[i] = live[--nlive];
			if (p != old.p)
				freed[freed_pos++ % FREED_RING] = (uintptr_t)old.p;
			add(p, size, align, false);
		}
		return;
	default:
		break;
	}
	route_request(route, var, v, &size, &align);
	if (call == 2) {
		num = 1 + v % 4;
		size = (size + num - 1) / num;
	}
	e = expect(size * num, align);
	if (!fits(size * num, e, 1) || !afford(cost(size * num, align, e, zero)))
		return;
	rte_errno = 0;
	p = call == 0       ? hpm_malloc("fuzz", size, align)
		: call == 1 ? hpm_zmalloc_socket("fuzz", size, align, SOCKET_ID_ANY)
		: call == 2 ? hpm_calloc("fuzz", num, size, align)
			    : hpm_realloc(NULL, size, align);
	result(p, size * num, align, e, zero, "route");
}

static FILE *devnull;

static bool checked; /* the whole heap, in this input */

static void
check_all(void)
{
	unsigned int i;

	/* its cost follows the heap's size, retained chunks included: once an input */
	if (checked)
		return;
	checked = true;
	for (i = 0; i < nlive; i++)
		check_intact(&live[i], "check");
	FUZZ_CHECK(hpm_heap_check() == 0, "heap check with %u live blocks", nlive);
	check_stats();
}

/* The walkers behind the dumps, over whatever shape the heap has. */
static void
dump_all(void)
{
	hpm_malloc_dump_stats(devnull, NULL);
	hpm_malloc_dump_heaps(devnull);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct hpm_config cfg;
static struct rte_malloc_socket_stats baseline;
static bool reinit;
static uint64_t inputs;

static void
heap_init(void)
{
	int rc = hpm_init(&cfg);

	FUZZ_CHECK(rc == 0, "hpm_init: %d", rc);
	FUZZ_CHECK(hpm_malloc_get_socket_stats(0, &baseline) == 0, "stats");
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	RTE_SET_USED(argc);
	RTE_SET_USED(argv);
	/*
	 * 4 KiB pages: the source asks for transparent hugepages, and a fault on
	 * a chunk that is new would then clear 2 MiB (most of the time an input
	 * takes). What is fuzzed is the allocator's logic; the pages are the same.
	 */
	prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
	pattern_init();
	hpm_config_defaults(&cfg);
	cfg.source = HPM_SOURCE_ANON;
	cfg.chunk_size = CHUNK;
	/* large: what one input frees stays for the next, warm (no page faults) */
	cfg.retain_size = RETAIN;
	cfg.release_delay_ms = 0; /* beyond the retain threshold: given back at once */
	if (getenv("HPM_FUZZ_VALIDATE") != NULL)
		cfg.flags |= HPM_CFG_F_VALIDATE;
	reinit = getenv("HPM_FUZZ_REINIT") != NULL && atoi(getenv("HPM_FUZZ_REINIT")) != 0;
	heap_init();
	devnull = fopen("/dev/null", "w");
	FUZZ_CHECK(devnull != NULL, "/dev/null");
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = {.p = data, .n = size};
	struct rte_malloc_socket_stats st;

	if (reinit) {
		hpm_fini();
		heap_init();
	}
	nlive = 0;
	live_bytes = 0;
	touch_left = TOUCH_BUDGET;
	checked = false;
	memset(freed, 0, sizeof(freed));
	bad_expected = hpm_bad_free_count();
	while (in.n > 0) {
		int op = byte(&in) % OP_COUNT;

		switch (op) {
		case OP_MALLOC:
		case OP_ZMALLOC:
		case OP_CALLOC:
		case OP_SOCKET:
			op_alloc(&in, op);
			break;
		case OP_REALLOC:
			op_realloc(&in);
			break;
		case OP_FREE:
			if (nlive > 0)
				free_one(byte(&in) % nlive);
			break;
		case OP_BULK:
			op_bulk(&in);
			break;
		case OP_FREE_BULK:
			op_free_bulk(&in);
			break;
		case OP_VALIDATE:
			op_validate(&in);
			break;
		case OP_BAD:
			op_bad(&in);
			break;
		case OP_CONTIG:
			op_contig(&in);
			break;
		case OP_TRIM:
			hpm_heap_trim();
			break;
		case OP_ROUTE:
			op_route(&in);
			break;
		default:
			check_all();
			break;
		}
		hpm_free(NULL);
	}
	/* the statistics against the model: at CHECK and in one input in CHECK_EVERY */
	if (++inputs % CHECK_EVERY == 0 || reinit) {
		checked = false;
		check_all();
		dump_all();
	}
	/* the drain: every input leaves the heap empty for the next */
	while (nlive > 0)
		free_one(nlive - 1);
	FUZZ_CHECK(hpm_malloc_get_socket_stats(0, &st) == 0, "stats");
	FUZZ_CHECK(hpm_bad_free_count() == bad_expected,
		"bad frees counted %" PRIu64 ", expected %" PRIu64, hpm_bad_free_count(),
		bad_expected);
	FUZZ_CHECK(st.alloc_count == baseline.alloc_count &&
			st.heap_allocsz_bytes == baseline.heap_allocsz_bytes,
		"after freeing everything: %u blocks, %zu bytes (baseline %u, %zu)", st.alloc_count,
		st.heap_allocsz_bytes, baseline.alloc_count, baseline.heap_allocsz_bytes);
	if (inputs % CHECK_EVERY == 0 || reinit)
		FUZZ_CHECK(hpm_heap_check() == 0, "heap check after freeing everything");
	if (inputs % TRIM_EVERY == 0 || reinit) {
		/* a trim gives back what is beyond the retain threshold, spare pages too */
		hpm_heap_trim();
		FUZZ_CHECK(hpm_malloc_get_socket_stats(0, &st) == 0, "stats");
		FUZZ_CHECK(st.heap_totalsz_bytes <= RETAIN,
			"after a trim the empty heap holds %zu bytes", st.heap_totalsz_bytes);
	}
	return 0;
}
