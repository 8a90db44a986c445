/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Under AddressSanitizer, hpmalloc poisons what an application must not
 * touch: a child process that writes one byte past a block's usable size
 * (hpm_malloc_usable_size()) or reads a freed block must be stopped by ASan;
 * the same accesses within the block are fine. Skipped (77) in builds
 * without ASan.
 */

#include <signal.h>
#include <sys/wait.h>

#include "hpm_malloc.h"
#include "test_common.h"

#if TEST_ASAN
enum access { IN_BOUNDS, PAST_END, AFTER_FREE };

static const char *const access_names[] = {"in bounds", "one past the end", "after free"};

/* Run one access in a child: does ASan stop it? */
static bool
stopped(size_t size, unsigned int align, enum access access)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		volatile uint8_t *p = hpm_malloc("poison", size, align);
		size_t usable = hpm_malloc_usable_size((void *)(uintptr_t)p);

		if (p == NULL || usable < size)
			_exit(3);
		switch (access) {
		case IN_BOUNDS:
			p[0] = 1;
			p[usable - 1] = 1;
			break;
		case PAST_END:
			p[usable] = 1;
			break;
		case AFTER_FREE:
			hpm_free((void *)(uintptr_t)p);
			(void)p[0 + 20];
			break;
		}
		_exit(0);
	}
	waitpid(pid, &status, 0);
	return !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
#endif

int
main(void)
{
#if !TEST_ASAN
	printf("poison: not an AddressSanitizer build: skipped\n");
	return TEST_SKIP;
#else
	static const struct {
		size_t size;
		unsigned int align;
	} blocks[] = {{100, 0}, {1000, 0}, {100, 4096}, {4096, 4096}, {65536, 65536}, {5000, 0},
		{3 << 20, 0}};
	struct hpm_config cfg;
	unsigned int i;

	hpm_config_defaults(&cfg);
	cfg.source = HPM_SOURCE_ANON;
	CHECK(hpm_init(&cfg) == 0, "hpm_init");
	for (i = 0; i < RTE_DIM(blocks); i++) {
		size_t size = blocks[i].size;
		unsigned int align = blocks[i].align;

		CHECK(!stopped(size, align, IN_BOUNDS), "%zu/%u: %s stopped", size, align,
			access_names[IN_BOUNDS]);
		CHECK(stopped(size, align, PAST_END), "%zu/%u: %s not stopped", size, align,
			access_names[PAST_END]);
		CHECK(stopped(size, align, AFTER_FREE), "%zu/%u: %s not stopped", size, align,
			access_names[AFTER_FREE]);
		printf("%zu/%u: in bounds fine; past the end, after free stopped\n", size, align);
	}
	hpm_fini();
	return test_end("poison");
#endif
}
