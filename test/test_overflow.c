/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Overflow: a write of up to 64 bytes past the end of a block (past its
 * usable size, hpm_malloc_usable_size) must never corrupt the allocator's
 * state silently (issue 15). For each route, each overrun length from 1 to 64
 * bytes, of zeros and of 0xa5: blocks of the route are allocated and filled,
 * one of them is overrun, then its neighbour is validated and freed, the
 * overrun block too, hpm_heap_check() runs (in a second order of each case,
 * hpm_heap_check() runs first, right after the overrun), and the heap is
 * used again (the same sizes allocated, checked apart and intact, freed; the
 * statistics back at the baseline; a last check).
 *
 * The neighbour is live at the overrun, or (routes with a cache class) in
 * the lcore's cache, then allocated again from it (a hit) or flushed from it
 * to the heap, or in the socket's transfer store, then flushed; or free in
 * the heap (its header and free-list links are what the overrun reaches),
 * then allocated again. Each case runs in a child process, so that a crash is
 * a result. A case passes when the allocator reports the overflow (validate,
 * free, hpm_heap_check, the corruption or bad-pointer counts) or when its
 * state was not touched (everything after behaves); it fails when it
 * crashes, hangs or goes on silently wrong. The heap's routes must report
 * every overrun that reaches a header (9 bytes and more): one that passes
 * silently there fails too.
 *
 * usage: test_overflow [--debug] [--verbose] [--quick]
 *   --debug: in debug mode, with canaries; --quick: lengths 1, 8, 9, 16, 17, 63, 64
 */

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <rte_errno.h>

#include "hpm_malloc.h"
#include "lcore_cache.h"
#include "state.h"
#include "test_common.h"

#define NBLOCKS 16
/*
 * 4681 heap blocks of 448 bytes (432 usable) fill a 2 MiB span exactly, when
 * the locked path cuts them one after the other (without caches: a cache
 * carves its batches where the heap's free blocks are)
 */
#define SPAN_TILE 432
#define SPAN_NBLOCKS 9400
#define MIB (UINT64_C(1) << 20)

/* Child exit codes. */
enum { R_UNTOUCHED = 0, R_DETECTED = 10, R_SILENT = 20, R_SETUP = 30, R_NA = 40 };

/* Where the overrun block's neighbour is when the overrun happens. */
enum where { W_LIVE, W_CACHED, W_FLUSHED, W_XFER, W_FREE, W_COUNT };

static const char *const where_name[W_COUNT] = {
	[W_LIVE] = "live",
	[W_CACHED] = "cached, then allocated",
	[W_FLUSHED] = "cached, then flushed",
	[W_XFER] = "in the transfer store",
	[W_FREE] = "free in the heap",
};

struct route {
	const char *name;
	size_t size;
	unsigned int align;
	bool heap;     /* the boundary-tag heap or its cache classes (HPM_CFG_F_SMALL_HEAP) */
	bool span_end; /* the target is the last block of a span (no caches): the overrun hits its
			sentinel */
};

static const struct route routes[] = {
	{"heap 64 B", 64, 0, true},
	{"heap 200 B", 200, 0, true},
	{"heap 1000 B", 1000, 0, true},
	{"heap 3000 B", 3000, 0, true},
	{"heap 432 B, a span's last", SPAN_TILE, 0, true, true},
	{"slab 64 B", 64, 0, false},
	{"slab 1000 B", 1000, 0, false},
	{"slab 3000 B", 3000, 0, false},
	{"slab 100 B at 256", 100, 256, false},
	{"slab 2000 B at 2K", 2000, 2048, false},
	{"slab 20000 B", 20000, 0, false},
	{"slab 32 KiB at 2K", 32768 - 64, 2048, false},
	{"4K granule (4K/4K)", 4096, 4096, false},
	{"4K granule run (12 KiB)", 12288, 0, false},
	{"4K granule run (5000 B at 4K)", 5000, 4096, false},
	{"4K granule run (64K/64K)", 65536, 65536, false},
	{"4K granule run (192 KiB)", 196608, 0, false},
	{"64K granule run (384 KiB)", 393216, 0, false},
	{"large (2 MiB)", 2 * MIB, 0, false},
	{"large (3 MiB + 100 B)", 3 * MIB + 100, 0, false},
};

static const size_t quick_lengths[] = {1, 8, 9, 16, 17, 63, 64};
static const uint8_t bytes[] = {0x00, 0xa5};
static bool debug_mode;
static bool verbose;
static bool quick;
/* where the child is, in memory the parent reads after a crash */
static const char *volatile *phase;
#define PHASE(s) (phase[0] = (s))
/* phase[1]: where the overflow was first reported, if it was */
#define DETECTED() (detected = true, phase[1] = phase[1] != NULL ? phase[1] : phase[0])

static void
fill(uint8_t *p, size_t size, uint8_t seed)
{
	size_t i;

	for (i = 0; i < size; i += i < 4096 || i + 4096 >= size ? 1 : 4096)
		p[i] = (uint8_t)(seed + i * 7);
}

static bool
intact(const uint8_t *p, size_t size, uint8_t seed)
{
	size_t i;

	for (i = 0; i < size; i += i < 4096 || i + 4096 >= size ? 1 : 4096)
		if (p[i] != (uint8_t)(seed + i * 7))
			return false;
	return true;
}

/* The overrun itself: past what the allocator gave, where ASan would stop it first. */
__attribute__((no_sanitize("address"), noinline)) static void
overrun(uint8_t *p, size_t from, size_t len, uint8_t byte)
{
	volatile uint8_t *v = p;
	size_t i;

	for (i = 0; i < len; i++)
		v[from + i] = byte;
}

static int
cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;

	return x < y ? -1 : x > y;
}

/* The calling thread's cache, or NULL. */
static struct hpm_lcore_cache *
my_cache(void)
{
	struct hpm_lcore_cache *c = hpm_cache_get();

	return c != NULL && c != &hpm_cache_none ? c : NULL;
}

#define FILLERS_MAX 4096

/*
 * The class a free of p puts it in, when it was allocated in class cls: a
 * run's is the class of its length and of its address's alignment.
 */
static int
free_class(int cls, const void *p)
{
	if (cls < HPM_CACHE_RUN0)
		return cls;
	return hpm_cache_run_class_at((int)(hpm_cache_user_state((unsigned int)cls) >> 1) - 1, p);
}

/* The transfer store can take a batch of the class cls of the calling thread's cache. */
static bool
store_takes(int cls)
{
	struct hpm_lcore_cache *c = my_cache();

	return c != NULL && cls >= 0 &&
		hpm_cache_stack(c, cls)->batch <= hpm_cache_xfer_max((unsigned int)cls);
}

/* p is on top of the calling thread's cache of class cls. */
static bool
cached_on_top(int cls, const void *p)
{
	struct hpm_lcore_cache *c = my_cache();
	const struct hpm_cache_stack *cc = c != NULL ? hpm_cache_stack(c, cls) : NULL;

	return cc != NULL && cc->len > 0 && hpm_cache_objs(cc)[cc->len - 1].p == p;
}

/* p is in the transfer store of class cls of the calling thread's socket. */
static bool
in_store(int cls, const void *p)
{
	struct hpm_lcore_cache *c = my_cache();
	const struct hpm_cache_xfer *x = c != NULL ? hpm_state->xfer[c->socket] : NULL;
	unsigned int i;

	for (i = 0; x != NULL && i < x->cls[cls].len; i++)
		if (x->cls[cls].objs[i].p == p)
			return true;
	return false;
}

/*
 * Put the neighbour nb where w says (freed, for all but W_LIVE); false when
 * it cannot be put there.
 */
static bool
place(const struct route *r, enum where w, int cls, void *nb)
{
	struct hpm_lcore_cache *c = my_cache();
	unsigned int i, n, k;
	void **fillers;
	size_t u;

	int asked = cls;

	cls = free_class(asked, nb);
	switch (w) {
	case W_LIVE:
		return true;
	case W_CACHED:
	case W_FLUSHED:
		hpm_free(nb);
		return cached_on_top(cls, nb);
	case W_XFER:
		/* the bottom of a full cache goes to the store: nb first, then enough to fill it */
		if (c == NULL)
			return false;
		fillers = calloc(FILLERS_MAX, sizeof(*fillers));
		if (fillers == NULL)
			return false;
		/* the limit follows the heap: read again as the fillers make it grow */
		for (n = 0, k = 0; n < FILLERS_MAX &&
			k <= hpm_cache_stack(c, cls)->limit + hpm_cache_stack(c, cls)->batch;
			n++) {
			fillers[n] = hpm_malloc("filler", r->size, r->align);
			k += fillers[n] != NULL && free_class(asked, fillers[n]) == cls;
		}
		hpm_cache_flush();
		hpm_free(nb);
		for (i = 0; i < n; i++)
			hpm_free(fillers[i]);
		free(fillers);
		if (verbose)
			printf("    class %d: limit %u, batch %u, store %u\n", cls,
				hpm_cache_stack(c, cls)->limit, hpm_cache_stack(c, cls)->batch,
				hpm_state->xfer[c->socket]->cls[cls].len);
		return in_store(cls, nb);
	case W_FREE:
		hpm_free(nb);
		hpm_cache_flush();
		return hpm_malloc_validate(nb, &u) != 0;
	default:
		return false;
	}
}

/* A report: one more bad pointer or corruption counted since the case began. */
#define REPORTED() (hpm_debug_corruption_count() != corrupt0 || hpm_bad_free_count() != bad0)

/* One case, in the child: its exit code is the verdict. */
static int
run_case(const struct route *r, enum where w, size_t len, uint8_t byte, bool check_first)
{
	struct rte_malloc_socket_stats before, after;
	uint8_t *blk[SPAN_NBLOCKS], *again[SPAN_NBLOCKS];
	unsigned int i, t, nb;
	size_t usable, u;
	struct hpm_config cfg;
	bool detected = false, silent = false;
	uint64_t corrupt0, bad0;
	int cls;

	hpm_config_defaults(&cfg);
	cfg.source = HPM_SOURCE_ANON;
	if (debug_mode)
		cfg.flags |= HPM_CFG_F_DEBUG;
	if (r->span_end)
		cfg.flags |= HPM_CFG_F_NO_CACHE;
	/* small requests take the heap only when asked to */
	if (r->heap)
		cfg.flags |= HPM_CFG_F_SMALL_HEAP;
	if (hpm_init(&cfg) != 0)
		return R_SETUP;
	/* the heap's classes, with HPM_CFG_F_SMALL_HEAP */
	cls = hpm_cache_class(r->size, r->align);
	if (hpm_malloc_get_socket_stats(0, &before) != 0)
		return R_SETUP;
	corrupt0 = hpm_debug_corruption_count();
	bad0 = hpm_bad_free_count();
	PHASE("setup");
	nb = r->size >= MIB ? 4 : r->span_end ? SPAN_NBLOCKS : NBLOCKS;
	for (i = 0; i < nb; i++) {
		blk[i] = hpm_malloc("overflow", r->size, r->align);
		if (blk[i] == NULL)
			return R_SETUP;
	}
	/* the target: a block with another one after it, the nearest */
	qsort(blk, nb, sizeof(blk[0]), cmp_ptr);
	for (i = 0; i < nb; i++)
		fill(blk[i], r->size, (uint8_t)i);
	t = nb / 2 - 1;
	/* debug mode's canaries make the blocks larger: none ends a span */
	if (r->span_end && debug_mode)
		return R_NA;
	if (r->span_end) {
		/* the block whose header-sized tail ends its 2 MiB unit: the sentinel is next */
		for (t = 0; t + 1 < nb; t++)
			if (((uintptr_t)blk[t] + hpm_malloc_usable_size(blk[t]) + 16) % (2 * MIB) ==
				0)
				break;
		if (t + 1 >= nb)
			return R_SETUP;
	}
	usable = hpm_malloc_usable_size(blk[t]);
	if (usable < r->size)
		return R_SETUP;
	if (verbose)
		printf("    target %p, usable %zu, next block %p (+%td), %s\n", blk[t], usable,
			blk[t + 1], blk[t + 1] - blk[t], where_name[w]);
	fflush(stdout);
	/* a batch of 64 KiB blocks is more than the store holds */
	if (w == W_XFER && !store_takes(cls))
		return R_NA;
	PHASE("placing the neighbour");
	if (!place(r, w, cls, blk[t + 1]))
		return R_SETUP;

	PHASE("the overrun itself");
	overrun(blk[t], usable, len, byte);

	/* order 1: the heap checked first, before anything walks into what was overwritten */
	if (check_first) {
		PHASE("hpm_heap_check right after the overrun");
		if (hpm_heap_check() != 0)
			DETECTED();
	}
	/* the neighbour back in the application's hands, however it was held */
	switch (w) {
	case W_FLUSHED:
	case W_XFER:
		PHASE("flush of the cache (and of the transfer store)");
		hpm_cache_flush();
		if (REPORTED())
			DETECTED();
		/* fall through */
	case W_CACHED:
	case W_FREE:
		PHASE("allocation of a new neighbour");
		blk[t + 1] = hpm_malloc("again", r->size, r->align);
		if (blk[t + 1] == NULL) {
			if (verbose)
				printf("    no block for the new neighbour\n");
			return R_SILENT;
		}
		break;
	default:
		break;
	}
	/* the neighbour: validated and freed; then the target; then the heap checked */
	if (REPORTED())
		DETECTED();
	PHASE("validate of the neighbour");
	if (hpm_malloc_validate(blk[t + 1], &u) != 0 || u < r->size || REPORTED())
		DETECTED();
	PHASE("validate of the overrun block");
	if (hpm_malloc_validate(blk[t], &u) != 0 || u < r->size || REPORTED())
		DETECTED();
	/* what the overrun wrote into a neighbour's data is the application's loss, not ours */
	PHASE("free of the neighbour");
	hpm_free(blk[t + 1]);
	if (REPORTED())
		DETECTED();
	PHASE("hpm_heap_check after the neighbour's free");
	if (hpm_heap_check() != 0)
		DETECTED();
	PHASE("free of the overrun block");
	hpm_free(blk[t]);
	if (REPORTED())
		DETECTED();
	PHASE("hpm_heap_check after its free");
	if (hpm_heap_check() != 0)
		DETECTED();
	PHASE("frees of the other blocks");
	for (i = 0; i < nb; i++) {
		if (i == t || i == t + 1)
			continue;
		if (!intact(blk[i], r->size, (uint8_t)i)) {
			if (verbose)
				printf("    block %u (%p) damaged\n", i, blk[i]);
			silent = true;
		}
		hpm_free(blk[i]);
	}
	if (hpm_debug_corruption_count() != corrupt0 || hpm_bad_free_count() != bad0)
		DETECTED();
	if (hpm_heap_check() != 0)
		DETECTED();

	/* the heap used again: the same sizes, apart, intact, freed; the stats at the baseline */
	PHASE("the heap used again");
	for (i = 0; i < nb; i++) {
		again[i] = hpm_malloc("again", r->size, r->align);
		if (again[i] == NULL) {
			if (verbose)
				printf("    allocation %u of %u failed\n", i, nb);
			silent = true;
			nb = i;
			break;
		}
	}
	qsort(again, nb, sizeof(again[0]), cmp_ptr);
	for (i = 0; i < nb; i++)
		fill(again[i], r->size, (uint8_t)(0x40 + i));
	for (i = 0; i + 1 < nb; i++)
		if (again[i] + r->size > again[i + 1]) {
			if (verbose)
				printf("    blocks %p and %p overlap\n", again[i], again[i + 1]);
			silent = true;
		}
	for (i = 0; i < nb; i++) {
		if (!intact(again[i], r->size, (uint8_t)(0x40 + i))) {
			if (verbose)
				printf("    block %p damaged after its allocation\n", again[i]);
			silent = true;
		}
		hpm_free(again[i]);
	}
	hpm_cache_flush();
	PHASE("the last hpm_heap_check");
	if (hpm_heap_check() != 0) {
		/* what was reported is repaired by now: a check that still fails is a broken heap */
		if (verbose)
			printf("    the last check fails\n");
		silent = true;
	}
	if (hpm_malloc_get_socket_stats(0, &after) != 0 ||
		after.alloc_count != before.alloc_count ||
		after.heap_allocsz_bytes != before.heap_allocsz_bytes) {
		if (verbose)
			printf("    stats: %u blocks, %zu bytes after (%u, %zu before)\n",
				after.alloc_count, after.heap_allocsz_bytes, before.alloc_count,
				before.heap_allocsz_bytes);
		silent = true;
	}
	if (hpm_debug_corruption_count() != corrupt0 || hpm_bad_free_count() != bad0)
		DETECTED();
	PHASE("hpm_fini");
	hpm_fini();
	/* reported or not, a heap that goes on wrong fails */
	return silent ? R_SILENT : detected ? R_DETECTED : R_UNTOUCHED;
}

/* Run one case in a child; print and return whether it passed. */
static bool
one(const struct route *r, enum where w, size_t len, uint8_t byte, bool check_first, char *why,
	size_t whylen)
{
	int status = 0;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	phase[0] = phase[1] = NULL;
	pid = fork();
	if (pid < 0) {
		snprintf(why, whylen, "fork: %s", strerror(errno));
		return false;
	}
	if (pid == 0) {
		/* the allocator's and sanitizers' reports of the expected damage: with --verbose */
		if (!verbose && freopen("/dev/null", "w", stderr) == NULL)
			_exit(R_SETUP);
		alarm(60);
		int rc = run_case(r, w, len, byte, check_first);

		fflush(stdout);
		_exit(rc);
	}
	if (waitpid(pid, &status, 0) != pid) {
		snprintf(why, whylen, "waitpid: %s", strerror(errno));
		return false;
	}
	/* a sanitizer reports a fault, or what it catches, and exits 1 */
	if (WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) == 1)) {
		char sig[64];

		if (WIFSIGNALED(status))
			snprintf(sig, sizeof(sig), "signal %d, %s", WTERMSIG(status),
				strsignal(WTERMSIG(status)));
		else
			snprintf(sig, sizeof(sig), "a sanitizer's report");
		/* the MMU stopped the write: nothing of the allocator's was reached */
		if (phase[0] != NULL && !strcmp((const char *)phase[0], "the overrun itself")) {
			snprintf(why, whylen, "the write faulted (nothing mapped past the block)");
			return true;
		}
		snprintf(why, whylen, "crashed (%s) in %s%s%s%s", sig,
			phase[0] != NULL ? phase[0] : "?",
			phase[1] != NULL ? " (reported first by " : "",
			phase[1] != NULL ? phase[1] : "", phase[1] != NULL ? ")" : "");
		return false;
	}
	switch (WEXITSTATUS(status)) {
	case R_DETECTED:
		snprintf(why, whylen, "detected by %s", phase[1] != NULL ? phase[1] : "?");
		return true;
	case R_UNTOUCHED:
		/*
		 * The heap's routes keep headers in reach: an overrun that must have
		 * changed one (0xa5 never is a header's first byte; 16 bytes are the
		 * whole header) and went unreported is a miss.
		 */
		if (r->heap && !debug_mode && (len >= 16 || (byte == 0xa5 && len >= 9))) {
			snprintf(why, whylen, "NOT REPORTED (a header was overwritten)");
			return false;
		}
		snprintf(why, whylen, "no allocator state touched");
		return true;
	case R_SILENT:
		if (phase[1] != NULL)
			snprintf(why, whylen, "BROKEN after the report by %s (the heap went wrong)",
				phase[1]);
		else
			snprintf(why, whylen,
				"SILENT corruption (the heap went wrong, nothing reported)");
		return false;
	case R_NA:
		snprintf(why, whylen, "n/a");
		return true;
	case R_SETUP:
		snprintf(why, whylen, "setup failed (no memory?)");
		return false;
	default:
		snprintf(why, whylen, "exited %d", WEXITSTATUS(status));
		return false;
	}
}

int
main(int argc, char **argv)
{
	unsigned int i, k, fail = 0, cases = 0, routes_failed = 0;
	size_t lengths[64], nlen = 0, j;
	char why[128];
	int w;

	for (i = 1; i < (unsigned int)argc; i++) {
		if (!strcmp(argv[i], "--debug"))
			debug_mode = true;
		else if (!strcmp(argv[i], "--verbose"))
			verbose = true;
		else if (!strcmp(argv[i], "--quick"))
			quick = true;
	}
	if (quick)
		for (j = 0; j < RTE_DIM(quick_lengths); j++)
			lengths[nlen++] = quick_lengths[j];
	else
		for (j = 1; j <= 64; j++)
			lengths[nlen++] = j;
	phase = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (phase == MAP_FAILED)
		return 1;
	printf("overflows of %zu to %zu bytes past the usable size%s\n", lengths[0],
		lengths[nlen - 1], debug_mode ? ", debug mode" : "");
	for (i = 0; i < RTE_DIM(routes); i++) {
		const struct route *r = &routes[i];
		bool has_class = hpm_cache_class(r->size, r->align) >= 0 && !r->span_end;
		unsigned int failed = 0, route_cases = 0;

		for (w = 0; w < W_COUNT; w++) {
			/* a cache's places only for a size a cache serves; debug mode has no caches
			 */
			if ((w == W_CACHED || w == W_FLUSHED || w == W_XFER) &&
				(!has_class || debug_mode))
				continue;
			for (j = 0; j < nlen; j++)
				for (k = 0; k < RTE_DIM(bytes) * 2; k++) {
					bool ok, first = k % 2;
					uint8_t byte = bytes[k / 2];

					/* beyond the live neighbour, every length once, bytes and
					 * orders in turn */
					if (w != W_LIVE && k != (j % 4))
						continue;
					ok = one(r, w, lengths[j], byte, first, why, sizeof(why));
					if (ok && !strcmp(why, "n/a"))
						continue;
					cases++;
					route_cases++;
					failed += !ok;
					if (!ok || verbose)
						printf("  %-30s %-22s +%-2zu x %#04x, %s: %s%s\n",
							r->name, where_name[w], lengths[j], byte,
							first ? "check first" : "free first",
							ok ? "ok, " : "FAIL, ", why);
				}
		}
		printf("%-32s %s (%u of %u cases fail)\n", r->name,
			failed == 0 ? "passed" : "FAILED", failed, route_cases);
		fail += failed;
		routes_failed += failed != 0;
	}
	printf("%u routes, %u cases: %u routes fail, %u cases\n", (unsigned int)RTE_DIM(routes),
		cases, routes_failed, fail);
	if (fail != 0)
		return 1;
	printf("overflow: passed\n");
	return 0;
}
