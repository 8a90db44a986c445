/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * One heap for two processes. The primary starts EAL and hpmalloc, which
 * creates the heap in EAL's shared memory, allocates a block and fills it,
 * then runs this program again as a secondary process. The secondary attaches
 * to the same heap, checks the primary's block and frees it, and leaves a
 * block of its own, which the primary checks and frees once the secondary
 * has exited. At the end the heap is as it was at the start.
 *
 *   multi_process -l 0 --no-pci --file-prefix=mp_example
 *
 * The secondary runs with -l 1: hpmalloc's per-lcore caches live in the
 * shared heap, indexed by lcore id, so every process must use lcores of its
 * own (as with rte_mempool's caches). Hugepages are needed: a secondary maps
 * the primary's hugepage files, so no --huge-unlink and no --no-huge.
 */

#include <libgen.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_lcore.h>
#include <rte_memzone.h>

#include <hpm_malloc.h>

#define SIZE 65536
/* The secondary's exit status when EAL cannot start in it. */
#define SECONDARY_NO_EAL 3

/* What the processes tell each other, in a memzone both can see. */
struct shared {
	uint8_t *from_primary;
	uint8_t *from_secondary;
};

static int
filled_with(const uint8_t *p, uint8_t value)
{
	size_t i;

	for (i = 0; i < SIZE; i++)
		if (p[i] != value)
			return 0;
	return 1;
}

static int
secondary(void)
{
	const struct rte_memzone *mz = rte_memzone_lookup("mp_example");
	struct shared *sh;

	/* attaches to the primary's heap (the first allocation would as well) */
	if (mz == NULL || hpm_init(NULL) != 0) {
		fprintf(stderr, "secondary: no memzone, or no heap to attach to\n");
		return 1;
	}
	sh = mz->addr;
	if (!filled_with(sh->from_primary, 0xa5)) {
		fprintf(stderr, "secondary: the primary's block is not as it was filled\n");
		return 1;
	}
	hpm_free(sh->from_primary); /* a block of the other process */
	sh->from_primary = NULL;
	sh->from_secondary = hpm_malloc("from_secondary", SIZE, 0);
	if (sh->from_secondary == NULL)
		return 1;
	memset(sh->from_secondary, 0x5a, SIZE);
	printf("secondary (pid %d): freed the primary's block, left %p\n", (int)getpid(),
		(void *)sh->from_secondary);
	/* detaches: this process's lcore cache goes back to the heap, which stays */
	hpm_fini();
	rte_eal_cleanup();
	return 0;
}

/* Run this program as a secondary process of the same DPDK application. */
static int
run_secondary(void)
{
	char prefix[64], prefix_arg[80], self[4096];
	char *argv[] = {"multi_process", "-l", "1", "--no-pci", "--proc-type=secondary", prefix_arg,
		"--log-level=lib.eal:warning", "--", "--secondary", NULL};
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int status;
	pid_t pid;

	if (n < 0)
		return -1;
	self[n] = '\0';
	/* the runtime directory ends with the file prefix */
	snprintf(prefix, sizeof(prefix), "%s", rte_eal_get_runtime_dir());
	snprintf(prefix_arg, sizeof(prefix_arg), "--file-prefix=%s", basename(prefix));
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		execv(self, argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int
main(int argc, char **argv)
{
	struct rte_malloc_socket_stats start, end;
	const struct rte_memzone *mz;
	struct shared *sh;
	int ret, failed = 0;
	bool as_secondary = argc > 1 && strcmp(argv[argc - 1], "--secondary") == 0;

	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		fprintf(stderr, "multi_process: cannot start EAL\n");
		/* a secondary that cannot map the primary's memory says so apart */
		return as_secondary ? SECONDARY_NO_EAL : 1;
	}
	if (argc - ret > 1 && strcmp(argv[ret + 1], "--secondary") == 0)
		return secondary();

	mz = rte_memzone_reserve("mp_example", sizeof(*sh), SOCKET_ID_ANY, 0);
	/* the first process to start hpmalloc creates the heap */
	if (mz == NULL || hpm_init(NULL) != 0 || hpm_malloc_get_socket_stats(0, &start) != 0) {
		fprintf(stderr, "multi_process: cannot set up\n");
		return 1;
	}
	sh = mz->addr;
	sh->from_primary = hpm_malloc("from_primary", SIZE, 0);
	if (sh->from_primary == NULL)
		return 1;
	memset(sh->from_primary, 0xa5, SIZE);
	sh->from_secondary = NULL;
	printf("primary (pid %d): left %p\n", (int)getpid(), (void *)sh->from_primary);

	ret = run_secondary();
#if defined(__SANITIZE_ADDRESS__)
	/* ASan's own mappings may sit where EAL needs the primary's addresses */
	if (ret == SECONDARY_NO_EAL) {
		printf("SKIP: under ASan the secondary cannot map the primary's memory\n");
		hpm_free(sh->from_primary);
		hpm_fini();
		rte_memzone_free(mz);
		rte_eal_cleanup();
		return 77;
	}
#endif
	if (ret != 0) {
		fprintf(stderr, "multi_process: the secondary failed (%d)\n", ret);
		failed = 1;
	} else if (sh->from_primary != NULL || sh->from_secondary == NULL ||
		!filled_with(sh->from_secondary, 0x5a)) {
		fprintf(stderr, "multi_process: the blocks did not go across as they should\n");
		failed = 1;
	} else {
		hpm_free(sh->from_secondary);
		printf("primary: freed the secondary's block\n");
	}
	/* both processes' frees are back in the heap */
	if (hpm_malloc_get_socket_stats(0, &end) != 0 || end.alloc_count != start.alloc_count ||
		end.heap_allocsz_bytes != start.heap_allocsz_bytes || hpm_heap_check() != 0 ||
		hpm_bad_free_count() != 0) {
		fprintf(stderr, "multi_process: the heap is not back at the start\n");
		failed = 1;
	}
	/* the creator releases the heap, after every other process has detached */
	hpm_fini();
	rte_memzone_free(mz);
	rte_eal_cleanup();
	printf("multi_process: %s\n", failed ? "FAILED" : "OK");
	return failed;
}
