/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Conformance: one table of edge cases run against DPDK's own rte_malloc and
 * against hpmalloc, side by side in one EAL process (hugepages, or --no-huge).
 * Each row makes the same call on both APIs and states the outcome both must
 * have: NULL or a block, the block aligned, its usable size at least what was
 * asked, contents kept across realloc, zeroed memory zeroed. Where hpmalloc
 * differs on purpose (the differences hpm_malloc.h documents) the row says
 * why and checks hpmalloc's documented behaviour instead. Every hpmalloc
 * allocation failure must set rte_errno. At the end no hpmalloc block is left
 * and the heap checks clean. The rte column is the rte_malloc of the DPDK the
 * test runs on (22.11 on the host, 24.11 and 25.11 in devtools/dpdk-chroot.sh):
 * the three give the same outcome in every row. Where a release changes one,
 * its row's rte[] becomes a choice on RTE_VERSION (rte_version.h).
 */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_memory.h>
#include <rte_version.h>

#include "hpm_malloc.h"
#include "test_common.h"

#define KIB(n) ((size_t)(n) << 10)
#define MIB(n) ((size_t)(n) << 20)

/* rte_errno before each call: a value no API sets, to see "untouched" */
#define ERR_SENTINEL 0x5a5a

/* socket placeholders resolved at run time */
#define SOCK_ABSENT INT_MIN      /* a socket below RTE_MAX_NUMA_NODES without memory */
#define SOCK_FIRST (INT_MIN + 1) /* the first socket EAL knows */

/* One API: DPDK's functions or their hpm_ twins. */
struct api {
	const char *name;
	bool is_hpm;
	void *(*malloc)(const char *type, size_t size, unsigned int align);
	void *(*zmalloc)(const char *type, size_t size, unsigned int align);
	void *(*calloc)(const char *type, size_t num, size_t size, unsigned int align);
	void *(*realloc)(void *ptr, size_t size, unsigned int align);
	void *(*malloc_socket)(const char *type, size_t size, unsigned int align, int socket);
	void *(*zmalloc_socket)(const char *type, size_t size, unsigned int align, int socket);
	void *(*calloc_socket)(const char *type, size_t num, size_t size, unsigned int align,
		int socket);
	void *(*realloc_socket)(void *ptr, size_t size, unsigned int align, int socket);
	void (*free)(void *ptr);
	int (*validate)(const void *ptr, size_t *size);
	int (*stats)(int socket, struct rte_malloc_socket_stats *stats);
	rte_iova_t (*virt2iova)(const void *addr);
};

/* not const: the compiler must not see the sizes reach the allocators' attributes */
static struct api api_rte = {
	.name = "rte",
	.is_hpm = false,
	.malloc = rte_malloc,
	.zmalloc = rte_zmalloc,
	.calloc = rte_calloc,
	.realloc = rte_realloc,
	.malloc_socket = rte_malloc_socket,
	.zmalloc_socket = rte_zmalloc_socket,
	.calloc_socket = rte_calloc_socket,
	.realloc_socket = rte_realloc_socket,
	.free = rte_free,
	.validate = rte_malloc_validate,
	.stats = rte_malloc_get_socket_stats,
	.virt2iova = rte_malloc_virt2iova,
};

static struct api api_hpm = {
	.name = "hpm",
	.is_hpm = true,
	.malloc = hpm_malloc,
	.zmalloc = hpm_zmalloc,
	.calloc = hpm_calloc,
	.realloc = hpm_realloc,
	.malloc_socket = hpm_malloc_socket,
	.zmalloc_socket = hpm_zmalloc_socket,
	.calloc_socket = hpm_calloc_socket,
	.realloc_socket = hpm_realloc_socket,
	.free = hpm_free,
	.validate = hpm_malloc_validate,
	.stats = hpm_malloc_get_socket_stats,
	.virt2iova = hpm_malloc_virt2iova,
};

/* What a call gave. */
enum outcome {
	O_BLOCK, /* a block, and every check of the row held */
	O_NULL,  /* NULL */
	O_RET0,  /* an int function returned 0 */
	O_RETM1, /* an int function returned -1 */
	O_VOID,  /* a void function returned */
	O_BAD,   /* a block or a value that failed the row's checks */
};

static const char *const outcome_names[] = {
	[O_BLOCK] = "block",
	[O_NULL] = "NULL",
	[O_RET0] = "0",
	[O_RETM1] = "-1",
	[O_VOID] = "-",
	[O_BAD] = "BAD",
};

struct res {
	enum outcome got;
	/* rte_errno after the call, ERR_SENTINEL if untouched */
	int err;
	/* a detail, or why a check failed */
	char note[96];
};

struct row;
typedef void (*row_fn)(const struct api *A, const struct row *r, int socket, struct res *res);

enum { MODE_HUGE = 0, MODE_NOHUGE = 1 };

struct row {
	const char *desc;
	row_fn fn;
	size_t size; /* bytes (the new size for realloc) */
	size_t num;  /* calloc elements; realloc: the old size */
	unsigned int align;
	unsigned int old_align; /* realloc: alignment of the original block */
	int socket;
	/* expected outcome for rte, per mode ([MODE_HUGE], [MODE_NOHUGE]) */
	enum outcome rte[2];
	/* expected outcome for hpm when it differs (differs != NULL), else rte[] */
	enum outcome hpm[2];
	/* rte_errno hpm must set when it fails (0: any non-zero value) */
	int hpm_err;
	/* why hpm differs, per the documented differences; NULL: identical */
	const char *differs;
	/* the difference is deliberate but hpm_malloc.h's list does not name it yet */
	bool unlisted;
};

static int mode;

/* --- helpers --- */

static void note(struct res *res, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
note(struct res *res, const char *fmt, ...)
{
	va_list ap;

	if (res->note[0] != '\0')
		return; /* keep the first */
	va_start(ap, fmt);
	vsnprintf(res->note, sizeof(res->note), fmt, ap);
	va_end(ap);
}

static void bad(struct res *res, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
bad(struct res *res, const char *fmt, ...)
{
	va_list ap;

	if (res->got == O_BAD)
		return; /* keep the first failure */
	res->got = O_BAD;
	va_start(ap, fmt);
	vsnprintf(res->note, sizeof(res->note), fmt, ap);
	va_end(ap);
}

static inline uint8_t
pattern(size_t i, unsigned int seed)
{
	return (uint8_t)((i * 131u + (i >> 9) * 7u + seed * 29u) ^ 0x5c);
}

static void
fill(void *p, size_t n, unsigned int seed)
{
	uint8_t *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = pattern(i, seed);
}

/* Offset of the first byte that differs from the pattern, or n. */
static size_t
verify(const void *p, size_t n, unsigned int seed)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i] != pattern(i, seed))
			return i;
	return n;
}

static size_t
first_nonzero(const void *p, size_t n)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i] != 0)
			return i;
	return n;
}

static size_t
eff_align(unsigned int align)
{
	return align < RTE_CACHE_LINE_SIZE ? RTE_CACHE_LINE_SIZE : align;
}

/* Result of an allocating call: rte_errno first, before anything can touch it. */
static void
took(struct res *res, const void *p)
{
	res->err = rte_errno;
	if (res->got != O_BAD) /* a failed check stays failed */
		res->got = p != NULL ? O_BLOCK : O_NULL;
}

/*
 * A block of size bytes: aligned to align (64 at least when align is a
 * power of two), and validate gives a usable size of at least size.
 */
static void
check_block(const struct api *A, const void *p, size_t size, unsigned int align, struct res *res)
{
	size_t usable = 0;

	if (rte_is_power_of_2(align) && ((uintptr_t)p & (eff_align(align) - 1)) != 0)
		bad(res, "%p not aligned to %zu", p, eff_align(align));
	if (A->validate(p, &usable) != 0)
		bad(res, "validate(%p) failed", p);
	else if (usable < size)
		bad(res, "usable %zu < %zu", usable, size);
	else
		note(res, "usable %zu", usable);
}

/* --- row functions --- */

/* malloc (SOCKET_ID_ANY: the plain form, else the _socket form); fill and check. */
static void
f_malloc(const struct api *A, const struct row *r, int socket, struct res *res)
{
	void *p = socket == SOCKET_ID_ANY ? A->malloc("conf", r->size, r->align)
					  : A->malloc_socket("conf", r->size, r->align, socket);

	took(res, p);
	if (p == NULL)
		return;
	check_block(A, p, r->size, r->align, res);
	if (res->got == O_BLOCK && r->size <= MIB(64)) {
		fill(p, r->size, 1);
		if (verify(p, r->size, 1) != r->size)
			bad(res, "contents not kept");
	}
	A->free(p);
}

/* zmalloc (plain or _socket): every byte zero. */
static void
f_zmalloc(const struct api *A, const struct row *r, int socket, struct res *res)
{
	void *p = socket == SOCKET_ID_ANY ? A->zmalloc("conf", r->size, r->align)
					  : A->zmalloc_socket("conf", r->size, r->align, socket);
	size_t nz;

	took(res, p);
	if (p == NULL)
		return;
	check_block(A, p, r->size, r->align, res);
	nz = first_nonzero(p, r->size);
	if (nz != r->size)
		bad(res, "byte %zu not zero", nz);
	A->free(p);
}

/*
 * Memory that was used: allocate, fill with 0xff, free, then zmalloc the
 * same size several times (the freed block is usually handed out again):
 * every byte of every block zero.
 */
static void
f_zmalloc_reuse(const struct api *A, const struct row *r, int socket, struct res *res)
{
	void *blocks[4] = {NULL};
	unsigned int i, reused = 0;
	void *p = A->malloc_socket("conf", r->size, r->align, socket);

	if (p == NULL) {
		took(res, p);
		bad(res, "first malloc failed");
		return;
	}
	memset(p, 0xff, r->size);
	A->free(p);
	res->got = O_BLOCK;
	for (i = 0; i < RTE_DIM(blocks); i++) {
		size_t nz;

		blocks[i] = A->zmalloc_socket("conf", r->size, r->align, socket);
		if (blocks[i] == NULL) {
			took(res, NULL);
			break;
		}
		reused += blocks[i] == p;
		check_block(A, blocks[i], r->size, r->align, res);
		nz = first_nonzero(blocks[i], r->size);
		if (nz != r->size)
			bad(res, "block %u byte %zu not zero", i, nz);
		/* dirty it for the next one, which may reuse memory next to it */
		memset(blocks[i], 0xff, r->size);
	}
	for (i = 0; i < RTE_DIM(blocks); i++)
		A->free(blocks[i]);
	if (res->got == O_BLOCK) {
		res->note[0] = '\0';
		note(res, "freed block %s", reused ? "reused" : "not reused");
	}
}

/* calloc (plain or _socket) of num x size: the product's bytes zero. */
static void
f_calloc(const struct api *A, const struct row *r, int socket, struct res *res)
{
	void *p = socket == SOCKET_ID_ANY
		? A->calloc("conf", r->num, r->size, r->align)
		: A->calloc_socket("conf", r->num, r->size, r->align, socket);
	size_t total = r->num * r->size; /* wraps for the overflow row, as rte's does */
	size_t nz;

	took(res, p);
	if (p == NULL)
		return;
	check_block(A, p, total, r->align, res);
	nz = first_nonzero(p, total);
	if (nz != total)
		bad(res, "byte %zu not zero", nz);
	if (res->got == O_BLOCK) {
		res->note[0] = '\0';
		note(res, "block of %zu bytes", total);
	}
	A->free(p);
}

/* realloc(NULL, size, align) (plain or _socket): a new block. */
static void
f_realloc_null(const struct api *A, const struct row *r, int socket, struct res *res)
{
	void *p = socket == SOCKET_ID_ANY ? A->realloc(NULL, r->size, r->align)
					  : A->realloc_socket(NULL, r->size, r->align, socket);

	took(res, p);
	if (p == NULL)
		return;
	check_block(A, p, r->size, r->align, res);
	A->free(p);
}

/*
 * realloc of a block of r->num bytes (aligned to r->old_align, filled) to
 * r->size bytes aligned to r->align: on success the new block is checked and
 * keeps the smaller size's bytes; on failure the old block must be untouched
 * (contents and usable size).
 */
static void
f_realloc(const struct api *A, const struct row *r, int socket, struct res *res)
{
	size_t old_usable = 0, keep, at;
	void *p = A->malloc("conf", r->num, r->old_align);
	void *q;

	if (p == NULL) {
		took(res, p);
		bad(res, "first malloc failed");
		return;
	}
	fill(p, r->num, 2);
	if (A->is_hpm)
		old_usable = hpm_malloc_usable_size(p);
	q = socket == SOCKET_ID_ANY ? A->realloc(p, r->size, r->align)
				    : A->realloc_socket(p, r->size, r->align, socket);
	took(res, q);
	if (q == NULL) {
		/* the block is untouched and still ours */
		at = verify(p, r->num, 2);
		if (at != r->num)
			bad(res, "failed realloc changed byte %zu", at);
		if (A->is_hpm && hpm_malloc_usable_size(p) != old_usable)
			bad(res, "failed realloc changed the usable size");
		if (A->is_hpm)
			note(res, "old block kept");
		A->free(p);
		return;
	}
	if (r->size != 0)
		check_block(A, q, r->size, r->align, res);
	keep = RTE_MIN(r->num, r->size);
	at = verify(q, keep, 2);
	if (at != keep)
		bad(res, "byte %zu of %zu not kept", at, keep);
	if (res->got == O_BLOCK) {
		res->note[0] = '\0';
		note(res, "%s", q == p ? "in place" : "moved");
	}
	A->free(q);
}

/* realloc across the routes: 64 B -> 1 MiB -> 8 MiB -> 100 B aligned 4 KiB. */
static void
f_realloc_chain(const struct api *A, const struct row *r, int socket, struct res *res)
{
	static const struct {
		size_t size;
		unsigned int align;
	} steps[] = {{64, 0}, {MIB(1), 0}, {MIB(8), 0}, {100, 4096}};
	size_t prev = 0;
	unsigned int i, moved = 0;
	void *p = NULL;

	RTE_SET_USED(r);
	for (i = 0; i < RTE_DIM(steps); i++) {
		size_t keep = RTE_MIN(prev, steps[i].size), at;
		void *q = socket == SOCKET_ID_ANY
			? A->realloc(p, steps[i].size, steps[i].align)
			: A->realloc_socket(p, steps[i].size, steps[i].align, socket);

		took(res, q);
		if (q == NULL) {
			note(res, "step %u (%zu B) failed", i, steps[i].size);
			A->free(p);
			return;
		}
		moved += q != p;
		check_block(A, q, steps[i].size, steps[i].align, res);
		at = verify(q, keep, 10 + i - 1);
		if (at != keep)
			bad(res, "step %u: byte %zu of %zu not kept", i, at, keep);
		fill(q, steps[i].size, 10 + i);
		prev = steps[i].size;
		p = q;
	}
	A->free(p);
	if (res->got == O_BLOCK) {
		res->note[0] = '\0';
		note(res, "%u of %u steps moved", moved, (unsigned int)RTE_DIM(steps));
	}
}

/* get_socket_stats: the return value; on success the numbers hang together. */
static void
f_stats(const struct api *A, const struct row *r, int socket, struct res *res)
{
	struct rte_malloc_socket_stats st;
	int rc;

	RTE_SET_USED(r);
	memset(&st, 0, sizeof(st));
	rc = A->stats(socket, &st);
	res->err = rte_errno;
	res->got = rc == 0 ? O_RET0 : rc == -1 ? O_RETM1 : O_BAD;
	if (rc == 0) {
		if (st.heap_allocsz_bytes + st.heap_freesz_bytes != st.heap_totalsz_bytes)
			bad(res, "alloc %zu + free %zu != total %zu", st.heap_allocsz_bytes,
				st.heap_freesz_bytes, st.heap_totalsz_bytes);
		else
			note(res, "total %zu", st.heap_totalsz_bytes);
	} else if (rc != -1) {
		bad(res, "returned %d", rc);
	}
}

/* validate(NULL): -1 (safe on both: rte checks NULL before anything). */
static void
f_validate_null(const struct api *A, const struct row *r, int socket, struct res *res)
{
	size_t size = 12345;
	int rc;

	RTE_SET_USED(r);
	RTE_SET_USED(socket);
	rc = A->validate(NULL, &size);
	res->err = rte_errno;
	res->got = rc == 0 ? O_RET0 : rc == -1 ? O_RETM1 : O_BAD;
	if (size != 12345)
		bad(res, "size written on failure");
}

/* validate of a live block: 0, usable >= size, and a NULL size pointer is fine. */
static void
f_validate(const struct api *A, const struct row *r, int socket, struct res *res)
{
	void *p = A->malloc_socket("conf", r->size, r->align, socket);
	size_t usable = 0;
	int rc;

	if (p == NULL) {
		took(res, p);
		bad(res, "malloc failed");
		return;
	}
	rc = A->validate(p, &usable);
	res->err = rte_errno;
	res->got = rc == 0 ? O_RET0 : rc == -1 ? O_RETM1 : O_BAD;
	if (rc == 0 && usable < r->size)
		bad(res, "usable %zu < %zu", usable, r->size);
	else if (rc == 0 && A->validate(p, NULL) != 0)
		bad(res, "validate(p, NULL) failed");
	else if (rc == 0)
		note(res, "usable %zu", usable);
	if (A->is_hpm && rc == 0 && hpm_malloc_usable_size(p) != usable)
		bad(res, "usable_size %zu != validate's %zu", hpm_malloc_usable_size(p), usable);
	A->free(p);
}

/* free(NULL) does nothing. */
static void
f_free_null(const struct api *A, const struct row *r, int socket, struct res *res)
{
	RTE_SET_USED(r);
	RTE_SET_USED(socket);
	A->free(NULL);
	res->err = rte_errno;
	res->got = O_VOID;
}

/*
 * malloc_virt2iova of a block: what rte_mem_virt2iova says for the same
 * address (and for hpm, for bytes inside the block too).
 */
static void
f_virt2iova(const struct api *A, const struct row *r, int socket, struct res *res)
{
	static const size_t offs[] = {1, 64, 4095, 4096, 65536 + 8, MIB(2) - 1, MIB(2) + 100};
	uint8_t *p = A->malloc_socket("conf", r->size, r->align, socket);
	rte_iova_t iova, want;
	unsigned int i;

	took(res, p);
	if (p == NULL)
		return;
	iova = A->virt2iova(p);
	want = rte_mem_virt2iova(p);
	if (iova != want)
		bad(res, "iova 0x%" PRIx64 " != rte_mem_virt2iova 0x%" PRIx64, iova, want);
	else if (iova == RTE_BAD_IOVA && rte_eal_iova_mode() == RTE_IOVA_VA)
		bad(res, "no IOVA in IOVA-as-VA mode");
	else
		note(res, "iova %s", iova == RTE_BAD_IOVA ? "bad (none)" : "= rte_mem_virt2iova");
	for (i = 0; A->is_hpm && i < RTE_DIM(offs); i++) {
		if (offs[i] >= r->size)
			continue;
		iova = A->virt2iova(p + offs[i]);
		want = rte_mem_virt2iova(p + offs[i]);
		if (iova != want)
			bad(res, "+%zu: iova 0x%" PRIx64 " != 0x%" PRIx64, offs[i], iova, want);
	}
	A->free(p);
}

/* --- the table --- */

#define SAME(huge, nohuge) .rte = {huge, nohuge}
#define BOTH(o) SAME(o, o)
#define HPM(huge, nohuge) .hpm = {huge, nohuge}

#define CALLOC_WRAP_NUM ((SIZE_MAX / 16) + 2) /* x 16 wraps to 16 */

static const struct row rows[] = {
	/* sizes and alignments */
	{"malloc size 0", f_malloc, .size = 0, BOTH(O_NULL), .hpm_err = EINVAL},
	{"malloc 100, align 3 (not a power of two)", f_malloc, .size = 100, .align = 3,
		BOTH(O_NULL), .hpm_err = EINVAL},
	{"malloc 100, align 0 (cache line)", f_malloc, .size = 100, .align = 0, BOTH(O_BLOCK)},
	{"malloc 100, align 1", f_malloc, .size = 100, .align = 1, BOTH(O_BLOCK)},
	{"malloc 100, align 64", f_malloc, .size = 100, .align = 64, BOTH(O_BLOCK)},
	{"malloc 5000, align 4096", f_malloc, .size = 5000, .align = 4096, BOTH(O_BLOCK)},
	{"malloc 64 KiB, align 64 KiB", f_malloc, .size = KIB(64), .align = KIB(64), BOTH(O_BLOCK)},
	{"malloc 100, align 2 MiB", f_malloc, .size = 100, .align = MIB(2), BOTH(O_BLOCK)},
	{"malloc 100, align 4 MiB", f_malloc, .size = 100, .align = MIB(4), BOTH(O_BLOCK)},
	{"malloc 3 MiB, align 2 MiB", f_malloc, .size = MIB(3), .align = MIB(2), BOTH(O_BLOCK)},
	{"malloc SIZE_MAX", f_malloc, .size = SIZE_MAX, BOTH(O_NULL), .hpm_err = ENOMEM},
	{"malloc SIZE_MAX - 63", f_malloc, .size = SIZE_MAX - 63, BOTH(O_NULL), .hpm_err = ENOMEM},
	{"malloc SIZE_MAX / 2", f_malloc, .size = SIZE_MAX / 2, BOTH(O_NULL), .hpm_err = ENOMEM},
	{"malloc 1 << 47", f_malloc, .size = (size_t)1 << 47, BOTH(O_NULL), .hpm_err = ENOMEM},
	{"malloc SIZE_MAX, align 2 MiB", f_malloc, .size = SIZE_MAX, .align = MIB(2), BOTH(O_NULL),
		.hpm_err = ENOMEM},
	/* calloc */
	{"calloc 10 x 100", f_calloc, .num = 10, .size = 100, BOTH(O_BLOCK)},
	{"calloc num*size wraps (2^60+1 x 16)", f_calloc, .num = CALLOC_WRAP_NUM, .size = 16,
		BOTH(O_BLOCK), HPM(O_NULL, O_NULL), .hpm_err = EINVAL,
		.differs = "rte_calloc returns a block of the wrapped product; hpm checks "
			   "num * size and fails with EINVAL"},
	{"calloc_socket num*size wraps, socket 0", f_calloc, .num = CALLOC_WRAP_NUM, .size = 16,
		.socket = SOCK_FIRST, BOTH(O_BLOCK), HPM(O_NULL, O_NULL), .hpm_err = EINVAL,
		.differs = "as rte_calloc: no overflow check in DPDK 22.11 to 25.11"},
	{"calloc num 0", f_calloc, .num = 0, .size = 16, BOTH(O_NULL), .hpm_err = EINVAL},
	{"calloc size 0", f_calloc, .num = 16, .size = 0, BOTH(O_NULL), .hpm_err = EINVAL},
	{"calloc 1 x SIZE_MAX", f_calloc, .num = 1, .size = SIZE_MAX, BOTH(O_NULL),
		.hpm_err = ENOMEM},
	/* realloc */
	{"realloc NULL to 100", f_realloc_null, .size = 100, BOTH(O_BLOCK)},
	{"realloc NULL to 100, align 4096", f_realloc_null, .size = 100, .align = 4096,
		BOTH(O_BLOCK)},
	{"realloc NULL to 0", f_realloc_null, .size = 0, BOTH(O_NULL), .hpm_err = EINVAL},
	{"realloc NULL, align 3", f_realloc_null, .size = 100, .align = 3, BOTH(O_NULL),
		.hpm_err = EINVAL},
	{"realloc 100 to 0, align 0", f_realloc, .num = 100, .size = 0, .align = 0, BOTH(O_NULL),
		.hpm_err = EINVAL},
	{"realloc 100 to 0, align 64", f_realloc, .num = 100, .size = 0, .align = 64, BOTH(O_BLOCK),
		HPM(O_NULL, O_NULL), .hpm_err = EINVAL,
		.differs = "rte_realloc shrinks the block; hpm returns NULL, EINVAL, block kept "
			   "(as rte_malloc.h documents)"},
	{"realloc 1000 to 100 (shrink)", f_realloc, .num = 1000, .size = 100, BOTH(O_BLOCK)},
	{"realloc 100 to 5000 (grow)", f_realloc, .num = 100, .size = 5000, BOTH(O_BLOCK)},
	{"realloc 100 to 300 KiB (grow)", f_realloc, .num = 100, .size = KIB(300), BOTH(O_BLOCK)},
	{"realloc 3 MiB to 100 KiB (shrink)", f_realloc, .num = MIB(3), .size = KIB(100),
		BOTH(O_BLOCK)},
	{"realloc 100 to 200, align 64 -> 4096", f_realloc, .num = 100, .size = 200, .align = 4096,
		BOTH(O_BLOCK)},
	{"realloc 4K to 8K, align 4K -> 2M", f_realloc, .num = KIB(4), .old_align = KIB(4),
		.size = KIB(8), .align = MIB(2), BOTH(O_BLOCK)},
	{"realloc 100 to 200, align 3", f_realloc, .num = 100, .size = 200, .align = 3,
		BOTH(O_BLOCK), HPM(O_NULL, O_NULL), .hpm_err = EINVAL,
		.differs = "rte_realloc rounds align up to a cache line and accepts it; hpm "
			   "rejects a non-power-of-two align, EINVAL, block kept"},
	{"realloc 100 to SIZE_MAX, align 0", f_realloc, .num = 100, .size = SIZE_MAX, BOTH(O_NULL),
		.hpm_err = ENOMEM},
	{"realloc 100 to SIZE_MAX, align 64", f_realloc, .num = 100, .size = SIZE_MAX, .align = 64,
		BOTH(O_BAD), HPM(O_NULL, O_NULL), .hpm_err = ENOMEM,
		.differs = "DPDK bug (22.11 to 25.11): the size rounds up to 0 and rte_realloc "
			   "returns the block shrunk (BAD: smaller than asked); hpm fails with "
			   "ENOMEM, block kept"},
	{"realloc 100 to SIZE_MAX / 2", f_realloc, .num = 100, .size = SIZE_MAX / 2, BOTH(O_NULL),
		.hpm_err = ENOMEM},
	{"realloc 64 B->1 MiB->8 MiB->100 B/4096", f_realloc_chain, BOTH(O_BLOCK)},
	{"realloc_socket 100 to 5000, socket 0", f_realloc, .num = 100, .size = 5000,
		.socket = SOCK_FIRST, BOTH(O_BLOCK)},
	{"realloc_socket chain, socket 0", f_realloc_chain, .socket = SOCK_FIRST, BOTH(O_BLOCK)},
	/* sockets */
	{"malloc_socket SOCKET_ID_ANY", f_malloc, .size = 100, .socket = SOCKET_ID_ANY,
		BOTH(O_BLOCK)},
	{"malloc_socket socket 0", f_malloc, .size = 100, .socket = SOCK_FIRST, BOTH(O_BLOCK)},
	{"malloc_socket 64K/64K, socket 0", f_malloc, .size = KIB(64), .align = KIB(64),
		.socket = SOCK_FIRST, BOTH(O_BLOCK)},
	{"malloc_socket 4 MiB, socket 0", f_malloc, .size = MIB(4), .socket = SOCK_FIRST,
		BOTH(O_BLOCK)},
	{"malloc_socket absent socket", f_malloc, .size = 100, .socket = SOCK_ABSENT,
		SAME(O_NULL, O_BLOCK), .hpm_err = EINVAL},
	{"malloc_socket 4 MiB, absent socket", f_malloc, .size = MIB(4), .socket = SOCK_ABSENT,
		SAME(O_NULL, O_BLOCK), .hpm_err = EINVAL},
	{"malloc_socket RTE_MAX_NUMA_NODES", f_malloc, .size = 100, .socket = RTE_MAX_NUMA_NODES,
		SAME(O_NULL, O_BLOCK), .hpm_err = EINVAL},
	{"malloc_socket socket -2", f_malloc, .size = 100, .socket = -2, SAME(O_NULL, O_BLOCK),
		.hpm_err = EINVAL},
	{"zmalloc_socket absent socket", f_zmalloc, .size = 100, .socket = SOCK_ABSENT,
		SAME(O_NULL, O_BLOCK), .hpm_err = EINVAL},
	{"calloc_socket 4 x 25, absent socket", f_calloc, .num = 4, .size = 25,
		.socket = SOCK_ABSENT, SAME(O_NULL, O_BLOCK), .hpm_err = EINVAL},
	{"realloc_socket NULL, absent socket", f_realloc_null, .size = 100, .socket = SOCK_ABSENT,
		SAME(O_NULL, O_BLOCK), .hpm_err = EINVAL},
	{"realloc_socket 100 to 200, absent socket", f_realloc, .num = 100, .size = 200,
		.socket = SOCK_ABSENT, SAME(O_NULL, O_BLOCK), .hpm_err = EINVAL},
	/* zeroed memory */
	{"zmalloc 100", f_zmalloc, .size = 100, BOTH(O_BLOCK)},
	{"zmalloc 4 KiB, align 4 KiB", f_zmalloc, .size = KIB(4), .align = KIB(4), BOTH(O_BLOCK)},
	{"zmalloc 64 KiB, align 64 KiB", f_zmalloc, .size = KIB(64), .align = KIB(64),
		BOTH(O_BLOCK)},
	{"zmalloc 3 MiB", f_zmalloc, .size = MIB(3), BOTH(O_BLOCK)},
	{"zmalloc 0", f_zmalloc, .size = 0, BOTH(O_NULL), .hpm_err = EINVAL},
	{"zmalloc after reuse: 100", f_zmalloc_reuse, .size = 100, .socket = SOCKET_ID_ANY,
		BOTH(O_BLOCK)},
	{"zmalloc after reuse: 1000, align 256", f_zmalloc_reuse, .size = 1000, .align = 256,
		.socket = SOCKET_ID_ANY, BOTH(O_BLOCK)},
	{"zmalloc after reuse: 4 KiB / 4 KiB", f_zmalloc_reuse, .size = KIB(4), .align = KIB(4),
		.socket = SOCKET_ID_ANY, BOTH(O_BLOCK)},
	{"zmalloc after reuse: 64 KiB / 64 KiB", f_zmalloc_reuse, .size = KIB(64), .align = KIB(64),
		.socket = SOCKET_ID_ANY, BOTH(O_BLOCK)},
	{"zmalloc after reuse: 2 MiB / 2 MiB", f_zmalloc_reuse, .size = MIB(2), .align = MIB(2),
		.socket = SOCKET_ID_ANY, BOTH(O_BLOCK)},
	{"zmalloc after reuse: 300 KiB", f_zmalloc_reuse, .size = KIB(300), .socket = SOCKET_ID_ANY,
		BOTH(O_BLOCK)},
	/* validate, stats, free, iova */
	{"malloc_validate(NULL)", f_validate_null, BOTH(O_RETM1)},
	{"malloc_validate 100 B block", f_validate, .size = 100, .socket = SOCKET_ID_ANY,
		BOTH(O_RET0)},
	{"malloc_validate 5000 B, align 4096", f_validate, .size = 5000, .align = 4096,
		.socket = SOCKET_ID_ANY, BOTH(O_RET0)},
	{"malloc_validate 64K/64K block", f_validate, .size = KIB(64), .align = KIB(64),
		.socket = SOCKET_ID_ANY, BOTH(O_RET0)},
	{"malloc_validate 3 MiB block", f_validate, .size = MIB(3), .socket = SOCKET_ID_ANY,
		BOTH(O_RET0)},
	{"get_socket_stats socket 0", f_stats, .socket = SOCK_FIRST, BOTH(O_RET0)},
	{"get_socket_stats absent socket", f_stats, .socket = SOCK_ABSENT, BOTH(O_RETM1),
		.hpm_err = EINVAL},
	{"get_socket_stats RTE_MAX_NUMA_NODES", f_stats, .socket = RTE_MAX_NUMA_NODES,
		BOTH(O_RETM1), .hpm_err = EINVAL},
	{"get_socket_stats SOCKET_ID_ANY", f_stats, .socket = SOCKET_ID_ANY, BOTH(O_RETM1),
		.hpm_err = EINVAL},
	{"free(NULL)", f_free_null, BOTH(O_VOID)},
	{"malloc_virt2iova of a 100 B block", f_virt2iova, .size = 100, .socket = SOCKET_ID_ANY,
		BOTH(O_BLOCK)},
	{"malloc_virt2iova of a 64K/64K block", f_virt2iova, .size = KIB(64), .align = KIB(64),
		.socket = SOCKET_ID_ANY, BOTH(O_BLOCK)},
	{"malloc_virt2iova of a 5 MiB block", f_virt2iova, .size = MIB(5), .socket = SOCKET_ID_ANY,
		BOTH(O_BLOCK)},
};

/* --- running and printing --- */

static int first_socket;
static int absent_socket = -1;

static int
resolve_socket(int s)
{
	if (s == SOCK_FIRST)
		return first_socket;
	if (s == SOCK_ABSENT)
		return absent_socket;
	return s;
}

static void
find_sockets(void)
{
	unsigned int i, n = rte_socket_count();
	int s;

	first_socket = rte_socket_id_by_idx(0);
	for (s = 0; s < RTE_MAX_NUMA_NODES && absent_socket < 0; s++) {
		bool present = false;

		for (i = 0; i < n; i++)
			present |= rte_socket_id_by_idx(i) == s;
		if (!present)
			absent_socket = s;
	}
	printf("sockets: %u, first %d, absent %d\n", n, first_socket, absent_socket);
}

static const char *
err_name(int e)
{
	static char buf[16];

	switch (e) {
	case ERR_SENTINEL:
		return "errno untouched";
	case 0:
		return "errno 0";
	case EINVAL:
		return "EINVAL";
	case ENOMEM:
		return "ENOMEM";
	case ENOTSUP:
		return "ENOTSUP";
	default:
		snprintf(buf, sizeof(buf), "errno %d", e);
		return buf;
	}
}

static void
describe(char *buf, size_t len, const struct res *res)
{
	if (res->got == O_NULL || res->got == O_RETM1)
		snprintf(buf, len, "%s, %s", outcome_names[res->got], err_name(res->err));
	else if (res->note[0] != '\0')
		snprintf(buf, len, "%s (%s)", outcome_names[res->got], res->note);
	else
		snprintf(buf, len, "%s", outcome_names[res->got]);
}

static bool
is_failure(enum outcome o)
{
	return o == O_NULL || o == O_RETM1;
}

struct tally {
	unsigned int rows, pass, fail, differ, unlisted, skipped;
};

static void
run_row(unsigned int idx, const struct row *r, struct tally *t)
{
	enum outcome want_rte = r->rte[mode];
	enum outcome want_hpm = r->differs != NULL ? r->hpm[mode] : want_rte;
	int socket = resolve_socket(r->socket);
	struct res rr, rh;
	char drte[128], dhpm[128];
	bool ok_rte, ok_hpm, errno_ok = true;

	if (socket == -1 && r->socket == SOCK_ABSENT) {
		printf("%2u %-42s skipped: every socket has memory\n", idx, r->desc);
		t->skipped++;
		return;
	}
	memset(&rr, 0, sizeof(rr));
	memset(&rh, 0, sizeof(rh));
	rte_errno = ERR_SENTINEL;
	r->fn(&api_rte, r, socket, &rr);
	rte_errno = ERR_SENTINEL;
	r->fn(&api_hpm, r, socket, &rh);

	ok_rte = rr.got == want_rte;
	ok_hpm = rh.got == want_hpm;
	/* every hpm failure sets rte_errno; rows name the value where it matters */
	if (is_failure(rh.got) && (rh.got == O_NULL || r->hpm_err != 0)) {
		if (rh.err == ERR_SENTINEL || rh.err == 0)
			errno_ok = false;
		else if (r->hpm_err != 0 && rh.err != r->hpm_err)
			errno_ok = false;
	}
	describe(drte, sizeof(drte), &rr);
	describe(dhpm, sizeof(dhpm), &rh);
	t->rows++;
	if (ok_rte && ok_hpm && errno_ok)
		t->pass++;
	else
		t->fail++;
	if (r->differs != NULL && want_rte != want_hpm) {
		t->differ++;
		t->unlisted += r->unlisted;
	}
	printf("%2u %-42s | rte: %-30s | hpm: %-30s | %s\n", idx, r->desc, drte, dhpm,
		!(ok_rte && ok_hpm && errno_ok)                      ? "FAIL"
			: r->differs != NULL && want_rte != want_hpm ? "differs"
								     : "same");
	if (r->differs != NULL && want_rte != want_hpm)
		printf("   %-42s   differs: %s%s\n", "", r->differs,
			r->unlisted ? " [not in hpm_malloc.h's list of differences]" : "");
	CHECK(ok_rte, "row %u \"%s\": rte gave %s, expected %s", idx, r->desc, drte,
		outcome_names[want_rte]);
	CHECK(ok_hpm, "row %u \"%s\": hpm gave %s, expected %s", idx, r->desc, dhpm,
		outcome_names[want_hpm]);
	CHECK(errno_ok, "row %u \"%s\": hpm failed with %s, expected %s", idx, r->desc,
		err_name(rh.err), r->hpm_err != 0 ? err_name(r->hpm_err) : "a non-zero rte_errno");
}

int
main(int argc, char **argv)
{
	struct rte_malloc_socket_stats st_before, st;
	struct hpm_config cfg;
	struct tally t = {0};
	char rte_col[48];
	unsigned int i;
	int rc;

	mode = argc > 1 && strcmp(argv[1], "--no-huge") == 0 ? MODE_NOHUGE : MODE_HUGE;
	rc = mode == MODE_NOHUGE
		? test_eal_init("conformance", "-l", "0", "--no-pci", "--no-huge", NULL)
		: test_eal_init("conformance", "-l", "0", "--no-pci", NULL);
	if (rc != 0) {
		printf("conformance: EAL cannot start, skipped\n");
		return TEST_SKIP;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	find_sockets();
	/* hpm's chunks are memzones, which EAL's heap counts: compare after hpm_fini() */
	memset(&st_before, 0, sizeof(st_before));
	CHECK(rte_malloc_get_socket_stats(first_socket, &st_before) == 0, "rte stats");
	hpm_config_defaults(&cfg);
	cfg.source = HPM_SOURCE_EAL;
	rc = hpm_init(&cfg);
	CHECK(rc == 0, "hpm_init: %d", rc);
	if (rc != 0)
		return test_end("conformance");
	CHECK(hpm_source_name() != NULL && strcmp(hpm_source_name(), "eal") == 0, "source %s",
		hpm_source_name());
	CHECK((mode == MODE_NOHUGE) == !rte_eal_has_hugepages(), "hugepages %d in mode %d",
		rte_eal_has_hugepages(), mode);
	printf("mode: %s, IOVA as %s\n", mode == MODE_NOHUGE ? "--no-huge" : "hugepages",
		rte_eal_iova_mode() == RTE_IOVA_VA ? "VA" : "PA");
	snprintf(rte_col, sizeof(rte_col), "rte_malloc (%s)", rte_version());
	printf("%2s %-42s | %-35s | %-35s | %s\n", "#", "case", rte_col, "hpmalloc", "verdict");
	for (i = 0; i < RTE_DIM(rows); i++)
		run_row(i, &rows[i], &t);

	/* nothing left behind, on either side */
	memset(&st, 0, sizeof(st));
	CHECK(hpm_malloc_get_socket_stats(first_socket, &st) == 0, "hpm stats");
	CHECK(st.alloc_count == 0, "hpm: %u blocks left", st.alloc_count);
	CHECK(st.heap_allocsz_bytes == 0, "hpm: %zu bytes left", st.heap_allocsz_bytes);
	CHECK(hpm_heap_check() == 0, "hpm_heap_check");
	CHECK(hpm_bad_free_count() == 0, "hpm saw %" PRIu64 " bad frees", hpm_bad_free_count());
	hpm_fini();
	memset(&st, 0, sizeof(st));
	CHECK(rte_malloc_get_socket_stats(first_socket, &st) == 0, "rte stats");
	CHECK(st.alloc_count == st_before.alloc_count, "rte: %u blocks, %u before", st.alloc_count,
		st_before.alloc_count);

	printf("summary: %u rows, %u as expected, %u failed, %u deliberate differences (%u not "
	       "in hpm_malloc.h's list), %u skipped (%s)\n",
		t.rows, t.pass, t.fail, t.differ, t.unlisted, t.skipped,
		mode == MODE_NOHUGE ? "--no-huge" : "hugepages");
	return test_end("conformance");
}
