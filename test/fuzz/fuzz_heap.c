/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * libFuzzer harness: the input is a sequence of API calls run against a model
 * of the live blocks (address, size, pattern). Every result is checked: a
 * request that must succeed does, aligned, apart from every live block, and
 * zeroed for zmalloc/calloc; a bad request fails with the rte_errno the API
 * documents; contents survive realloc and every other call; validate and
 * usable_size agree with the model; bad frees (interior, double, foreign
 * pointers) are counted and change nothing; statistics count the live
 * blocks. At the end of each input everything is freed: the heap checks, the
 * statistics are back at zero and a trim leaves at most retain_size.
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

#include <rte_errno.h>

#include "hpm_malloc.h"

#define MIB (UINT64_C(1) << 20)
#define MAX_LIVE 256
#define LIVE_BYTES_MAX (64 * MIB)
#define OK_SIZE_MAX (4 * MIB)
#define OK_ALIGN_MAX (4 * MIB)
#define SIZE_LIMIT (UINT64_C(1) << 46) /* larger requests fail with ENOMEM */
#define RETAIN (4 * MIB)
#define FREED_RING 16

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

static inline uint8_t
pattern(uint8_t seed, size_t off)
{
	return (uint8_t)(seed + off * 31 + (off >> 12));
}

/* The bytes a block's pattern covers: the first 256, the last 64, 16 spread between. */
static size_t
next_sample(size_t off, size_t size)
{
	size_t tail = size > 64 ? size - 64 : 0, stride = RTE_MAX(size / 16, (size_t)4096);

	if (off + 1 < 256 || off + 1 >= tail)
		return off + 1;
	off += stride;
	return off < tail ? off : tail;
}

#define FOR_SAMPLES(size, off) for (size_t off = 0; off < (size); off = next_sample(off, (size)))

static void
fill(struct blk *b)
{
	if (!b->filled)
		return;
	FOR_SAMPLES(b->size, off)
	b->p[off] = pattern(b->seed, off);
}

static void
check_intact(const struct blk *b, const char *when)
{
	if (!b->filled)
		return;
	FOR_SAMPLES(b->size, off)
	FUZZ_CHECK(b->p[off] == pattern(b->seed, off), "%s: block %p (%zu B): byte %zu is %#x",
		when, b->p, b->size, off, b->p[off]);
}

static void
check_zeroed(const uint8_t *p, size_t size)
{
	static const uint8_t zeros[4096];
	size_t i;

	for (i = 0; i < size && i < 65536; i += sizeof(zeros))
		FUZZ_CHECK(memcmp(p + i, zeros, RTE_MIN(size - i, sizeof(zeros))) == 0,
			"zeroed block %p (%zu B): not zero from byte %zu on", p, size, i);
	FOR_SAMPLES(size, off)
	FUZZ_CHECK(p[off] == 0, "zeroed block %p (%zu B): byte %zu is %#x", p, size, off, p[off]);
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
	if (!fits(total, e, 1))
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
		if (!fits(size, e, 1))
			return;
		rte_errno = 0;
		result(hpm_realloc(NULL, size, align), size, align, e, false, "realloc(NULL)");
		return;
	}
	i = t % nlive;
	old = live[i];
	if (e == EXP_OK && size > old.size && size - old.size > LIVE_BYTES_MAX - live_bytes)
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
	if (old.filled)
		FOR_SAMPLES(old.size, off)
	if (off < size)
		FUZZ_CHECK(p[off] == pattern(old.seed, off),
			"realloc %p (%zu B) -> %p (%zu B): byte %zu lost", old.p, old.size, p, size,
			off);
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
	if (e == EXP_MAYBE || !fits(size, e, n))
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

static FILE *devnull;

static void
check_all(void)
{
	unsigned int i;

	for (i = 0; i < nlive; i++)
		check_intact(&live[i], "check");
	FUZZ_CHECK(hpm_heap_check() == 0, "heap check with %u live blocks", nlive);
	/* the walkers behind the dumps, over whatever shape the heap has */
	hpm_malloc_dump_stats(devnull, NULL);
	hpm_malloc_dump_heaps(devnull);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct hpm_config cfg;
	int rc;

	RTE_SET_USED(argc);
	RTE_SET_USED(argv);
	hpm_config_defaults(&cfg);
	cfg.source = HPM_SOURCE_ANON;
	cfg.chunk_size = 2 * MIB;
	cfg.retain_size = RETAIN; /* small: the heap shrinks within an input */
	cfg.release_delay_ms = 0;
	if (getenv("HPM_FUZZ_VALIDATE") != NULL)
		cfg.flags |= HPM_CFG_F_VALIDATE;
	rc = hpm_init(&cfg);
	FUZZ_CHECK(rc == 0, "hpm_init: %d", rc);
	devnull = fopen("/dev/null", "w");
	FUZZ_CHECK(devnull != NULL, "/dev/null");
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = {.p = data, .n = size};
	struct rte_malloc_socket_stats st;

	nlive = 0;
	live_bytes = 0;
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
		default:
			check_all();
			break;
		}
		hpm_free(NULL);
		check_stats();
	}
	check_all();
	while (nlive > 0)
		free_one(nlive - 1);
	FUZZ_CHECK(hpm_heap_check() == 0, "heap check after freeing everything");
	FUZZ_CHECK(hpm_malloc_get_socket_stats(0, &st) == 0, "stats");
	FUZZ_CHECK(st.alloc_count == 0 && st.heap_allocsz_bytes == 0,
		"after freeing everything: %u blocks, %zu bytes", st.alloc_count,
		st.heap_allocsz_bytes);
	hpm_heap_trim();
	FUZZ_CHECK(hpm_malloc_get_socket_stats(0, &st) == 0, "stats");
	FUZZ_CHECK(st.heap_totalsz_bytes <= RETAIN, "after a trim the empty heap holds %zu bytes",
		st.heap_totalsz_bytes);
	check_stats();
	return 0;
}
