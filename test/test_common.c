/* SPDX-License-Identifier: BSD-3-Clause */

#include <glob.h>
#include <inttypes.h>
#include <sys/wait.h>
#include <stdbool.h>

#include "test_common.h"

unsigned int test_failures;
static bool eal_started;

int
test_eal_init(const char *name, ...)
{
	char prefix[64];
	char *argv[32];
	int argc = 0;
	va_list ap;
	char *arg;

	snprintf(prefix, sizeof(prefix), "--file-prefix=hpmt_%s_%d", name, (int)getpid());
	argv[argc++] = (char *)(uintptr_t)name;
	argv[argc++] = prefix;
	argv[argc++] = (char *)(uintptr_t) "--log-level=lib.eal:warning";
	va_start(ap, name);
	while ((arg = va_arg(ap, char *)) != NULL && argc < 31)
		argv[argc++] = arg;
	va_end(ap);
	argv[argc] = NULL;
	if (rte_eal_init(argc, argv) < 0)
		return -1;
	eal_started = true;
	return 0;
}

int
test_end(const char *name)
{
	if (eal_started)
		rte_eal_cleanup();
	if (test_failures != 0) {
		printf("%s: FAILED (%u checks)\n", name, test_failures);
		return 1;
	}
	printf("%s: passed\n", name);
	return 0;
}

uint64_t
test_seed(uint64_t def)
{
	const char *env = getenv("HPM_TEST_SEED");
	uint64_t seed = env != NULL ? strtoull(env, NULL, 0) : def;

	printf("seed %" PRIu64 " (set HPM_TEST_SEED to rerun)\n", seed);
	return seed != 0 ? seed : 1;
}

void
test_fill(void *p, size_t size)
{
	uint8_t *b = p;
	uint64_t v = (uintptr_t)p ^ size;
	size_t i, step = size <= 4096 ? 8 : 512;

	for (i = 0; i + 8 <= size; i += step)
		*(uint64_t *)(b + i) = v + i;
	for (; i < size; i++)
		b[i] = (uint8_t)(v + i);
}

bool
test_intact(const void *p, size_t size)
{
	const uint8_t *b = p;
	uint64_t v = (uintptr_t)p ^ size;
	size_t i, step = size <= 4096 ? 8 : 512;

	for (i = 0; i + 8 <= size; i += step)
		if (*(const uint64_t *)(b + i) != v + i)
			return false;
	for (; i < size; i++)
		if (b[i] != (uint8_t)(v + i))
			return false;
	return true;
}

bool
test_asan_cannot_map(int status)
{
#if defined(__SANITIZE_ADDRESS__)
	return WIFEXITED(status) && WEXITSTATUS(status) == 2; /* rte_eal_init() failed */
#else
	(void)status;
	return false;
#endif
}

void
test_remove_hugepage_files(const char *prefix)
{
	char pattern[160];
	glob_t g;
	size_t i;

	snprintf(pattern, sizeof(pattern), "/dev/hugepages/%s*", prefix);
	if (glob(pattern, 0, NULL, &g) != 0)
		return;
	for (i = 0; i < g.gl_pathc; i++)
		unlink(g.gl_pathv[i]);
	globfree(&g);
}

size_t
test_hugetlb_mapped(void)
{
	FILE *f = fopen("/proc/self/smaps_rollup", "r");
	char line[256];
	size_t total = 0;
	unsigned long long kb;

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "Shared_Hugetlb: %llu kB", &kb) == 1 ||
			sscanf(line, "Private_Hugetlb: %llu kB", &kb) == 1)
			total += (size_t)kb << 10;
	fclose(f);
	return total;
}

long
test_hugepages_2m(const char *name)
{
	char path[128];
	long n = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/mm/hugepages/hugepages-2048kB/%s", name);
	f = fopen(path, "r");
	if (f == NULL)
		return -1;
	if (fscanf(f, "%ld", &n) != 1)
		n = -1;
	fclose(f);
	return n;
}
