/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Overflow: a write of up to 64 bytes past the end of a block (past its
 * usable size, hpm_malloc_usable_size) must never corrupt the allocator's
 * state silently (issue 15). For each route, and overflows of 1, 16 and 64
 * bytes of zeros and of 0xa5: blocks of the route are allocated and filled,
 * one of them is overrun, then its neighbour is validated and freed, the
 * overrun block too, hpm_heap_check() runs (in a second order of each case,
 * hpm_heap_check() runs first, right after the overrun), and the heap is used again (the
 * same sizes allocated, checked apart and intact, freed; the statistics back
 * at the baseline). Each case runs in a child process, so that a crash is a
 * result. A case passes when the allocator reports the overflow (validate,
 * free, hpm_heap_check, the corruption or bad-free counts) or when its state
 * was not touched (everything after behaves); it fails when it crashes, hangs
 * or goes on silently wrong.
 *
 * Until the core stores its metadata out of reach (issue 15), the heap's
 * routes fail: the test then exits 77 (skipped) and says so, unless
 * HPM_OVERFLOW_STRICT=1 is set; a failure on any other route fails it.
 *
 * usage: test_overflow [--debug] [--verbose]   (--debug: in debug mode, with canaries)
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
#include "test_common.h"

#define NBLOCKS 16
#define MIB (UINT64_C(1) << 20)

/* Child exit codes. */
enum { R_UNTOUCHED = 0, R_DETECTED = 10, R_SILENT = 20, R_SETUP = 30 };

struct route {
	const char *name;
	size_t size;
	unsigned int align;
	bool heap; /* served by the boundary-tag heap or its size classes today */
};

static const struct route routes[] = {
	{"heap 64 B", 64, 0, true},
	{"heap 200 B", 200, 0, true},
	{"heap 1000 B", 1000, 0, true},
	{"heap 3000 B", 3000, 0, true},
	{"heap 100 B at 256", 100, 256, true},
	{"heap 20000 B", 20000, 0, true},
	{"4K granule (4K/4K)", 4096, 4096, false},
	{"4K granule run (12 KiB)", 12288, 0, false},
	{"4K granule run (5000 B at 4K)", 5000, 4096, false},
	{"64K granule (64K/64K)", 65536, 65536, false},
	{"64K granule run (192 KiB)", 196608, 0, false},
	{"large (2 MiB)", 2 * MIB, 0, false},
	{"large (3 MiB + 100 B)", 3 * MIB + 100, 0, false},
};

static const size_t lengths[] = {1, 16, 64};
static const uint8_t bytes[] = {0x00, 0xa5};
static bool debug_mode;
static bool verbose;
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

/* One case, in the child: its exit code is the verdict. */
static int
run_case(const struct route *r, size_t len, uint8_t byte, bool check_first)
{
	struct rte_malloc_socket_stats before, after;
	uint8_t *blk[NBLOCKS], *again[NBLOCKS];
	unsigned int i, t, nb;
	size_t usable, u;
	struct hpm_config cfg;
	bool detected = false, silent = false;
	uint64_t corrupt0, bad0;

	hpm_config_defaults(&cfg);
	cfg.source = HPM_SOURCE_ANON;
	if (debug_mode)
		cfg.flags |= HPM_CFG_F_DEBUG;
	if (hpm_init(&cfg) != 0)
		return R_SETUP;
	if (hpm_malloc_get_socket_stats(0, &before) != 0)
		return R_SETUP;
	corrupt0 = hpm_debug_corruption_count();
	bad0 = hpm_bad_free_count();
	PHASE("setup");
	nb = r->size >= MIB ? 4 : NBLOCKS;
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
	usable = hpm_malloc_usable_size(blk[t]);
	if (usable < r->size)
		return R_SETUP;
	if (verbose)
		printf("    target %p, usable %zu, next block %p (+%td)\n", blk[t], usable,
			blk[t + 1], blk[t + 1] - blk[t]);
	fflush(stdout);

	PHASE("the overrun itself");
	overrun(blk[t], usable, len, byte);

	/* order 1: the heap checked first, before anything walks into what was overwritten */
	if (check_first) {
		PHASE("hpm_heap_check right after the overrun");
		if (hpm_heap_check() != 0)
			DETECTED();
	}
	/* the neighbour: validated and freed; then the target; then the heap checked */
	PHASE("validate of the neighbour");
	if (hpm_malloc_validate(blk[t + 1], &u) != 0 || u < r->size)
		DETECTED();
	PHASE("validate of the overrun block");
	if (hpm_malloc_validate(blk[t], &u) != 0 || u < r->size)
		DETECTED();
	/* what the overrun wrote into a neighbour's data is the application's loss, not ours */
	PHASE("free of the neighbour");
	hpm_free(blk[t + 1]);
	PHASE("hpm_heap_check after the neighbour's free");
	if (hpm_heap_check() != 0)
		DETECTED();
	PHASE("free of the overrun block");
	hpm_free(blk[t]);
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
			silent = true;
			nb = i;
			break;
		}
		fill(again[i], r->size, (uint8_t)(0x40 + i));
	}
	qsort(again, nb, sizeof(again[0]), cmp_ptr);
	for (i = 0; i + 1 < nb; i++)
		if (again[i] + r->size > again[i + 1]) {
			if (verbose)
				printf("    blocks %p and %p overlap\n", again[i], again[i + 1]);
			silent = true;
		}
	for (i = 0; i < nb; i++)
		hpm_free(again[i]);
	hpm_cache_flush();
	if (hpm_heap_check() != 0)
		DETECTED();
	if (hpm_malloc_get_socket_stats(0, &after) != 0 ||
		after.alloc_count != before.alloc_count ||
		after.heap_allocsz_bytes != before.heap_allocsz_bytes) {
		if (verbose)
			printf("    stats: %u blocks, %zu bytes after (%u, %zu before)\n",
				after.alloc_count, after.heap_allocsz_bytes, before.alloc_count,
				before.heap_allocsz_bytes);
		silent = !detected;
	}
	if (hpm_debug_corruption_count() != corrupt0 || hpm_bad_free_count() != bad0)
		DETECTED();
	PHASE("hpm_fini");
	hpm_fini();
	return detected ? R_DETECTED : silent ? R_SILENT : R_UNTOUCHED;
}

/* Run one case in a child; print and return whether it passed. */
static bool
one(const struct route *r, size_t len, uint8_t byte, bool check_first, char *why, size_t whylen)
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
		_exit(run_case(r, len, byte, check_first));
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
		snprintf(why, whylen, "no allocator state touched");
		return true;
	case R_SILENT:
		snprintf(why, whylen, "SILENT corruption (the heap went wrong, nothing reported)");
		return false;
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
	unsigned int i, j, k, heap_fail = 0, other_fail = 0, cases = 0;
	const char *strict = getenv("HPM_OVERFLOW_STRICT");
	char why[128];

	for (i = 1; i < (unsigned int)argc; i++) {
		if (!strcmp(argv[i], "--debug"))
			debug_mode = true;
		else if (!strcmp(argv[i], "--verbose"))
			verbose = true;
	}
	phase = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (phase == MAP_FAILED)
		return 1;
	printf("overflows of 1, 16 and 64 bytes past the usable size%s\n",
		debug_mode ? ", debug mode" : "");
	for (i = 0; i < RTE_DIM(routes); i++) {
		const struct route *r = &routes[i];
		unsigned int failed = 0;

		for (j = 0; j < RTE_DIM(lengths); j++)
			for (k = 0; k < RTE_DIM(bytes) * 2; k++) {
				bool ok = one(r, lengths[j], bytes[k / 2], k % 2, why, sizeof(why));

				cases++;
				failed += !ok;
				if (!ok || verbose)
					printf("  %-30s +%-2zu x %#04x, %s: %s%s\n", r->name,
						lengths[j], bytes[k / 2],
						k % 2 ? "check first" : "free first",
						ok ? "ok, " : "FAIL, ", why);
			}
		printf("%-32s %s (%u of %u cases fail)\n", r->name,
			failed == 0 ? "passed" : "FAILED", failed,
			2 * (unsigned int)(RTE_DIM(lengths) * RTE_DIM(bytes)));
		if (failed != 0 && r->heap)
			heap_fail++;
		else if (failed != 0)
			other_fail++;
	}
	printf("%u routes, %u cases: %u heap routes fail, %u other routes fail\n",
		(unsigned int)RTE_DIM(routes), cases, heap_fail, other_fail);
	if (other_fail != 0)
		return 1;
	if (heap_fail != 0 && (strict == NULL || atoi(strict) == 0)) {
		printf("overflow: SKIPPED: the heap's routes do not detect an overflow yet "
		       "(issue 15, the core redesign); HPM_OVERFLOW_STRICT=1 makes this a failure\n");
		return TEST_SKIP;
	}
	if (heap_fail != 0)
		return 1;
	printf("overflow: passed\n");
	return 0;
}
