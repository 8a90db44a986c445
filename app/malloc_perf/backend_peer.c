/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The general-purpose allocators a DPDK application may use today: glibc,
 * and Debian's jemalloc, mimalloc and tcmalloc (gperftools, the minimal
 * library). Several malloc implementations cannot be linked into one
 * process (each defines malloc and would replace the others), so the peers
 * are loaded with dlopen(RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND) when first
 * selected: their symbols stay out of the global scope (the process, EAL
 * included, keeps glibc's malloc) and their own calls bind to themselves.
 * They are called through the addresses dlsym() gives, as an LD_PRELOADed
 * allocator is called through the PLT:
 *   align <= 16 (0 included): the library's malloc() (16-byte alignment);
 *   larger: its own aligned call: jemalloc mallocx(MALLOCX_LG_ALIGN),
 *   mimalloc mi_malloc_aligned(), tcmalloc tc_memalign(), glibc
 *   aligned_alloc(); free() in every case.
 * AddressSanitizer refuses RTLD_DEEPBIND: an ASan build loads them with
 * RTLD_LOCAL only (their figures mean nothing there anyway).
 * jemalloc's initial-exec TLS (2.6 KiB) needs more static TLS than glibc
 * leaves for dlopen: main.c re-executes the tool once with
 * GLIBC_TUNABLES=glibc.rtld.optional_static_tls=16384 when jemalloc is built in.
 * Memory is the process's RSS (/proc/self/statm); trim() is each
 * allocator's own call to give free memory back.
 */

#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "malloc_perf.h"

#if defined(__SANITIZE_ADDRESS__)
#define MP_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MP_ASAN 1
#endif
#endif

#ifdef MP_ASAN
#define PEER_DLOPEN_FLAGS (RTLD_NOW | RTLD_LOCAL)
/* the peers' one-time allocations go through ASan's operator new: not leaks of ours */
const char *__lsan_default_suppressions(void);
const char *
__lsan_default_suppressions(void)
{
	return "leak:libtcmalloc_minimal\nleak:libjemalloc\nleak:libmimalloc\n";
}
#else
#define PEER_DLOPEN_FLAGS (RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND)
#endif

/* glibc: the process's own malloc */

static void *
libc_malloc(const char *type, size_t size, unsigned int align)
{
	RTE_SET_USED(type);
	void *p;

	if (align <= 16)
		return malloc(size);
	return posix_memalign(&p, align, size) == 0 ? p : NULL;
}

static void
libc_free(void *ptr)
{
	free(ptr);
}

static int
libc_trim(void)
{
	malloc_trim(0);
	return 0;
}

static const char *
libc_source(void)
{
	return "glibc malloc (brk/mmap, 4 KiB pages)";
}

const struct mp_backend mp_be_libc = {
	.name = "libc",
	.desc = "glibc malloc/aligned_alloc/free (the process's own)",
	.flags = MP_BE_RSS,
	.malloc = libc_malloc,
	.free = libc_free,
	.trim = libc_trim,
	.source = libc_source,
};

/* a peer loaded with dlopen */

enum peer_kind { PEER_JEMALLOC, PEER_MIMALLOC, PEER_TCMALLOC };

struct peer {
	enum peer_kind kind;
	const char *soname; /* NULL: not built */
	const char *pkg;    /* the Debian package that provides it */
	void *h;
	void *(*malloc)(size_t size);
	void (*free)(void *ptr);
	void *(*je_mallocx)(size_t size, int flags);
	void *(*mi_malloc_aligned)(size_t size, size_t align);
	void *(*tc_memalign)(size_t align, size_t size);
	int (*je_mallctl)(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen);
	void (*mi_collect)(bool force);
	void (*tc_idle)(void);
	void (*tc_release)(void);
};

#ifdef MP_JEMALLOC_SO
#define JE_MISSING NULL
#else
#define MP_JEMALLOC_SO NULL
#define JE_MISSING "not built: libjemalloc-dev was missing at build time"
#endif
#ifdef MP_MIMALLOC_SO
#define MI_MISSING NULL
#else
#define MP_MIMALLOC_SO NULL
#define MI_MISSING "not built: libmimalloc-dev was missing at build time"
#endif
#ifdef MP_TCMALLOC_SO
#define TC_MISSING NULL
#else
#define MP_TCMALLOC_SO NULL
#define TC_MISSING "not built: libgoogle-perftools-dev was missing at build time"
#endif

static struct peer peer_je = {PEER_JEMALLOC, MP_JEMALLOC_SO, "libjemalloc-dev"};
static struct peer peer_mi = {PEER_MIMALLOC, MP_MIMALLOC_SO, "libmimalloc-dev"};
static struct peer peer_tc = {PEER_TCMALLOC, MP_TCMALLOC_SO, "libgoogle-perftools-dev"};

static void *
sym(struct peer *p, const char *name, char *why, size_t len)
{
	void *s = dlsym(p->h, name);

	if (s == NULL && why[0] == '\0')
		snprintf(why, len, "%s: no symbol %s", p->soname, name);
	return s;
}

static int
peer_probe(struct peer *p, char *why, size_t len)
{
	why[0] = '\0';
	if (p->soname == NULL) {
		snprintf(why, len, "not built: %s was missing at build time", p->pkg);
		return -ENOTSUP;
	}
	if (p->h != NULL)
		return 0;
	p->h = dlopen(p->soname, PEER_DLOPEN_FLAGS);
	if (p->h == NULL) {
		snprintf(why, len, "dlopen: %s", dlerror());
		return -ENOENT;
	}
	p->malloc = (void *(*)(size_t))sym(p, "malloc", why, len);
	p->free = (void (*)(void *))sym(p, "free", why, len);
	switch (p->kind) {
	case PEER_JEMALLOC:
		p->je_mallocx = (void *(*)(size_t, int))sym(p, "mallocx", why, len);
		p->je_mallctl = (int (*)(const char *, void *, size_t *, void *, size_t))dlsym(p->h,
			"mallctl");
		break;
	case PEER_MIMALLOC:
		p->mi_malloc_aligned =
			(void *(*)(size_t, size_t))sym(p, "mi_malloc_aligned", why, len);
		p->mi_collect = (void (*)(bool))dlsym(p->h, "mi_collect");
		break;
	case PEER_TCMALLOC:
		p->tc_memalign = (void *(*)(size_t, size_t))sym(p, "tc_memalign", why, len);
		p->tc_idle = (void (*)(void))dlsym(p->h, "MallocExtension_MarkThreadIdle");
		p->tc_release = (void (*)(void))dlsym(p->h, "MallocExtension_ReleaseFreeMemory");
		break;
	}
	if (why[0] != '\0') {
		/* never dlclose() an allocator: something may still point into it */
		p->h = NULL;
		return -ENOENT;
	}
	return 0;
}

/*
 * Give free memory back to the system, the calling thread's cache first (the
 * memory workloads call it on the lcore that allocates): what stays resident
 * would be reused without growing the RSS, and hide memory.
 */
static int
peer_trim(struct peer *p)
{
	switch (p->kind) {
	case PEER_JEMALLOC:
		if (p->je_mallctl != NULL) {
			p->je_mallctl("thread.tcache.flush", NULL, NULL, NULL, 0);
			p->je_mallctl("arena.4096.purge", NULL, NULL, NULL, 0);
		}
		break;
	case PEER_MIMALLOC:
		if (p->mi_collect != NULL)
			p->mi_collect(true);
		break;
	case PEER_TCMALLOC:
		if (p->tc_idle != NULL)
			p->tc_idle();
		if (p->tc_release != NULL)
			p->tc_release();
		break;
	}
	return 0;
}

static void
peer_free(struct peer *p, void *ptr)
{
	p->free(ptr);
}

/* jemalloc */

static int
je_probe(char *why, size_t len)
{
	return peer_probe(&peer_je, why, len);
}

static void *
je_malloc(const char *type, size_t size, unsigned int align)
{
	RTE_SET_USED(type);
	if (align <= 16)
		return peer_je.malloc(size);
	/* MALLOCX_LG_ALIGN(log2(align)) */
	return peer_je.je_mallocx(size, __builtin_ctz(align));
}

static void
je_free(void *ptr)
{
	peer_free(&peer_je, ptr);
}

static int
je_trim(void)
{
	return peer_trim(&peer_je);
}

static const char *
je_source(void)
{
	return "jemalloc (dlopen, mmap)";
}

const struct mp_backend mp_be_jemalloc = {
	.name = "jemalloc",
	.missing = JE_MISSING,
	.desc = "jemalloc: malloc, mallocx(MALLOCX_LG_ALIGN), free (Debian, dlopen)",
	.flags = MP_BE_RSS,
	.probe = je_probe,
	.malloc = je_malloc,
	.free = je_free,
	.trim = je_trim,
	.source = je_source,
};

/* mimalloc */

static int
mi_probe(char *why, size_t len)
{
	return peer_probe(&peer_mi, why, len);
}

static void *
mi_malloc(const char *type, size_t size, unsigned int align)
{
	RTE_SET_USED(type);
	return align <= 16 ? peer_mi.malloc(size) : peer_mi.mi_malloc_aligned(size, align);
}

static void
mi_free(void *ptr)
{
	peer_free(&peer_mi, ptr);
}

static int
mi_trim(void)
{
	return peer_trim(&peer_mi);
}

static const char *
mi_source(void)
{
	return "mimalloc (dlopen, mmap)";
}

const struct mp_backend mp_be_mimalloc = {
	.name = "mimalloc",
	.missing = MI_MISSING,
	.desc = "mimalloc: malloc, mi_malloc_aligned, free (Debian, dlopen)",
	.flags = MP_BE_RSS,
	.probe = mi_probe,
	.malloc = mi_malloc,
	.free = mi_free,
	.trim = mi_trim,
	.source = mi_source,
};

/* tcmalloc */

static int
tc_probe(char *why, size_t len)
{
	return peer_probe(&peer_tc, why, len);
}

static void *
tc_malloc(const char *type, size_t size, unsigned int align)
{
	RTE_SET_USED(type);
	return align <= 16 ? peer_tc.malloc(size) : peer_tc.tc_memalign(align, size);
}

static void
tc_free(void *ptr)
{
	peer_free(&peer_tc, ptr);
}

static int
tc_trim(void)
{
	return peer_trim(&peer_tc);
}

static const char *
tc_source(void)
{
	return "tcmalloc_minimal (dlopen, sbrk/mmap)";
}

const struct mp_backend mp_be_tcmalloc = {
	.name = "tcmalloc",
	.missing = TC_MISSING,
	.desc = "tcmalloc (gperftools minimal): malloc, tc_memalign, free (Debian, dlopen)",
	.flags = MP_BE_RSS,
	.probe = tc_probe,
	.malloc = tc_malloc,
	.free = tc_free,
	.trim = tc_trim,
	.source = tc_source,
};
