/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The hugetlbfs source on its own (the sources' layer and below): a region
 * aligned far beyond its length takes the hugepages of its length only.
 * It mapped len + align of hugepages and cut the ends off, so the kernel
 * reserved align's pages first: 2 MiB aligned to 1 TiB failed with ENOMEM
 * on a machine with a few GiB of hugepages. The case reserves 2 MiB at
 * 1 TiB, 4 MiB at 64 GiB and 2 MiB at 4 MiB, checks the address and the
 * memory (written, read back), and that this process maps the region's
 * hugepages and no more, then none after the release.
 *
 * Contiguous regions without frame numbers (a process without
 * CAP_SYS_ADMIN reads 0 for every frame in /proc/self/pagemap): -ENOTSUP at
 * once. The source drew pools of 2x, 8x, 32x the pages up to every free
 * hugepage of the machine, none of which it could tell apart, and said
 * -ENOMEM. A child that runs as nobody asks for 8 MiB contiguous.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "source_hugetlbfs.h"
#include "test_common.h"

#define MIB(n) ((size_t)(n) << 20)

static void
contig_without_frames(const struct hpm_source_ops *src)
{
	int status = 0;
	pid_t pid;

	if (getuid() != 0) {
		printf("contig without frames: not root, no other user to become; skipped\n");
		return;
	}
	pid = fork();
	if (pid == 0) {
		struct hpm_region r;
		int rc;

		if (setgid(65534) != 0 || setuid(65534) != 0)
			_exit(77);
		rc = src->reserve(&r, MIB(8), MIB(2), 0, HPM_RESERVE_CONTIG);
		printf("contig 8 MiB as nobody: %d (%s)\n", rc, rc < 0 ? strerror(-rc) : "ok");
		if (rc == 0)
			src->release(&r);
		fflush(stdout);
		_exit(rc == -ENOTSUP ? 0 : 1);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status),
		"contig without frames: child");
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
		printf("contig without frames: cannot become nobody; skipped\n");
		return;
	}
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		"contig 8 MiB without frame numbers: not -ENOTSUP");
}

int
main(void)
{
	static const struct {
		size_t len;
		size_t align;
	} cases[] = {
		{MIB(2), (size_t)1 << 40},
		{MIB(4), (size_t)1 << 36},
		{MIB(2), MIB(4)},
	};
	const struct hpm_source_ops *src = &hpm_source_hugetlbfs;
	unsigned int i;

	if (test_hugepages_2m("free_hugepages") < 16) {
		printf("source_hugetlbfs: fewer than 16 free 2 MiB hugepages, skipped\n");
		return TEST_SKIP;
	}
	hpm_source_hugetlbfs_set_page_size(MIB(2));
	for (i = 0; i < RTE_DIM(cases); i++) {
		size_t len = cases[i].len, align = cases[i].align, off;
		long long before = (long long)test_hugetlb_mapped(), mapped;
		struct hpm_region r;
		uint8_t *p;
		int rc;

		rc = src->reserve(&r, len, align, 0, 0);
		CHECK(rc == 0, "%zu MiB aligned to %zu MiB: %d", len >> 20, align >> 20, rc);
		if (rc != 0)
			continue;
		p = r.va;
		mapped = (long long)test_hugetlb_mapped() - before;
		CHECK(r.len == len && ((uintptr_t)p & (align - 1)) == 0,
			"%zu MiB aligned to %zu MiB: %p, %zu bytes", len >> 20, align >> 20, r.va,
			r.len);
		CHECK(mapped == (long long)len, "%zu MiB aligned to %zu MiB: %lld bytes mapped",
			len >> 20, align >> 20, mapped);
		for (off = 0; off < len; off += 4096)
			p[off] = (uint8_t)(off >> 12);
		for (off = 0; off < len; off += 4096)
			if (p[off] != (uint8_t)(off >> 12)) {
				CHECK(false, "%zu MiB aligned to %zu MiB: byte %zu", len >> 20,
					align >> 20, off);
				break;
			}
		/* a frame's address and the offset into it (as root: frame numbers readable) */
		if (getuid() == 0 && src->iova(&r, p) != RTE_BAD_IOVA)
			CHECK(src->iova(&r, p + 100) == src->iova(&r, p) + 100 &&
					src->iova(&r, p + MIB(2) - 1) ==
						src->iova(&r, p) + MIB(2) - 1,
				"IOVA of an offset into the first page: %" PRIx64
				" at +100, %" PRIx64 " at 0",
				(uint64_t)src->iova(&r, p + 100), (uint64_t)src->iova(&r, p));
		printf("%zu MiB aligned to %zu MiB at %p: %lld bytes mapped\n", len >> 20,
			align >> 20, r.va, mapped);
		src->release(&r);
		CHECK((long long)test_hugetlb_mapped() == before,
			"after the release: %lld bytes mapped, %lld before",
			(long long)test_hugetlb_mapped(), before);
	}
	contig_without_frames(src);
	return test_end("source_hugetlbfs");
}
