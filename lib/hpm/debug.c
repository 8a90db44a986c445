/* SPDX-License-Identifier: BSD-3-Clause */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>

#include "block.h"
#include "debug.h"
#include "lcore_cache.h"
#include "hpm_malloc.h"
#include "log.h"
#include "init.h"

#define CANARY 0xcb
#define POISON 0x6b
#define TRAILER 16
#define TYPE_LEN 24

/* Debug mode is on in this process (state.c says so through the ops below). */
static bool debug_on;

struct record {
	uint8_t *user;
	uint8_t *inner;
	size_t size;
	char type[TYPE_LEN];
	/* found written outside its bounds: counted and logged once */
	uint32_t reported;
	uint32_t reserved;
};

/* Records of live debug blocks: open addressing by address, in shared metadata. */
struct debug_table {
	hpm_lock_t lock;
	size_t capacity;
	size_t used;
	uint64_t corruptions;
	struct record *slots;
};

static struct debug_table *table;

static size_t
slot_of(const void *p, size_t capacity)
{
	return ((uintptr_t)p >> 4) * UINT64_C(0x9e3779b97f4a7c15) >> 20 & (capacity - 1);
}

static struct record *
find(const void *p)
{
	size_t i = slot_of(p, table->capacity);

	while (table->slots[i].user != NULL) {
		if (table->slots[i].user == p)
			return &table->slots[i];
		i = (i + 1) & (table->capacity - 1);
	}
	return NULL;
}

static int
grow(void)
{
	size_t old_cap = table->capacity, i;
	struct record *old = table->slots, *slots;

	slots = hpm_meta_alloc(&hpm_state->meta, hpm_src, 2 * old_cap * sizeof(*slots));
	if (slots == NULL)
		return -ENOMEM;
	table->slots = slots;
	table->capacity = 2 * old_cap;
	for (i = 0; i < old_cap; i++)
		if (old[i].user != NULL) {
			size_t j = slot_of(old[i].user, table->capacity);

			while (slots[j].user != NULL)
				j = (j + 1) & (table->capacity - 1);
			slots[j] = old[i];
		}
	hpm_meta_free(&hpm_state->meta, hpm_src, old, old_cap * sizeof(*old));
	return 0;
}

/* Remove a record and re-place the ones after it that its slot may have pushed. */
static void
erase(struct record *r)
{
	size_t i = r - table->slots, j = i;

	for (;;) {
		size_t home;

		j = (j + 1) & (table->capacity - 1);
		if (table->slots[j].user == NULL)
			break;
		home = slot_of(table->slots[j].user, table->capacity);
		/* j's record may move to i if i lies between its home and j */
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			table->slots[i] = table->slots[j];
			i = j;
		}
	}
	memset(&table->slots[i], 0, sizeof(table->slots[i]));
	table->used--;
}

static size_t debug_usable(const void *p);

static bool
debug_attach(void)
{
	table = hpm_state->debug_table;
	debug_on = table != NULL;
	hpm_cache_gen_bump(); /* no caches in debug mode */
	return debug_on;
}

static int
debug_init(struct hpm_state *st, const struct hpm_source_ops *src)
{
	const size_t capacity = 4096;

	table = hpm_meta_alloc(&st->meta, src, sizeof(*table));
	if (table == NULL)
		return -ENOMEM;
	table->slots = hpm_meta_alloc(&st->meta, src, capacity * sizeof(struct record));
	if (table->slots == NULL)
		return -ENOMEM;
	hpm_lock_init(&table->lock);
	table->capacity = capacity;
	st->debug_table = table;
	debug_on = true;
	hpm_cache_gen_bump();
	HPM_LOG(NOTICE, "debug mode: canaries, poison on free, leak records, checks");
	return 0;
}

static void
debug_fini(void)
{
	debug_on = false;
	table = NULL;
	hpm_cache_gen_bump();
}

static bool
canaries_intact(const struct record *r, const char **where)
{
	size_t i;

	for (i = 0; r->inner + i < r->user; i++)
		if (r->inner[i] != CANARY) {
			*where = "before its start (underflow)";
			return false;
		}
	for (i = 0; i < TRAILER; i++)
		if (r->user[r->size + i] != CANARY) {
			*where = "past its end (overflow)";
			return false;
		}
	return true;
}

/* A block found written outside its bounds, the first time. Table locked. */
static void
report(struct record *r, const char *where)
{
	if (r->reported)
		return;
	r->reported = 1;
	table->corruptions++;
	HPM_LOG(ERR, "debug: block %p (type %s, %zu bytes) was written %s", r->user,
		r->type[0] != '\0' ? r->type : "-", r->size, where);
}

static void *
debug_alloc(const char *type, size_t size, unsigned int align, int socket, unsigned int flags)
{
	size_t eff = align < 64 ? 64 : align, pre, inner_size;
	struct record rec = {0};
	uint8_t *inner;
	size_t i;

	if (size == 0 || (align & (align - 1)) != 0) {
		rte_errno = EINVAL;
		return NULL;
	}
	/* a canary before the block costs an alignment's worth: up to 4 KiB */
	pre = eff <= 4096 ? eff : 0;
	if (size > SIZE_MAX - pre - TRAILER) {
		rte_errno = ENOMEM;
		return NULL;
	}
	inner_size = pre + size + TRAILER;
	inner = hpm_raw_alloc(inner_size, align, socket, flags & HPM_ALLOC_F_CONTIG);
	if (inner == NULL)
		return NULL;
	rec.inner = inner;
	rec.user = inner + pre;
	rec.size = size;
	if (type != NULL)
		strncpy(rec.type, type, sizeof(rec.type) - 1);
	memset(inner, CANARY, pre);
	memset(rec.user + size, CANARY, TRAILER);
	memset(rec.user, flags & HPM_ALLOC_F_ZERO ? 0 : POISON, size);
	if (!hpm_lock(&table->lock)) {
		hpm_raw_free(inner);
		rte_errno = ENOTRECOVERABLE;
		return NULL;
	}
	if ((table->used + 1) * 2 > table->capacity && grow() != 0) {
		hpm_unlock(&table->lock);
		hpm_raw_free(inner);
		rte_errno = ENOMEM;
		return NULL;
	}
	i = slot_of(rec.user, table->capacity);
	while (table->slots[i].user != NULL)
		i = (i + 1) & (table->capacity - 1);
	table->slots[i] = rec;
	table->used++;
	hpm_unlock(&table->lock);
	return rec.user;
}

static bool
debug_free(void *p)
{
	const char *where;
	struct record *r, rec;

	if (!hpm_lock(&table->lock))
		return false;
	r = find(p);
	if (r == NULL) {
		hpm_unlock(&table->lock);
		return false;
	}
	rec = *r;
	if (!canaries_intact(&rec, &where))
		report(&rec, where);
	erase(r);
	hpm_unlock(&table->lock);
	memset(rec.user, POISON, rec.size);
	hpm_raw_free(rec.inner);
	return true;
}

/* The size of the live block at p (0: none), and its type into type if not NULL. */
static size_t
debug_lookup(const void *p, char *type)
{
	const struct record *r;
	size_t size = 0;

	if (!hpm_lock(&table->lock))
		return 0;
	r = find(p);
	if (r != NULL) {
		size = r->size;
		if (type != NULL)
			memcpy(type, r->type, TYPE_LEN);
	}
	hpm_unlock(&table->lock);
	return size;
}

static void *
debug_realloc(void *p, size_t size, unsigned int align, int socket)
{
	char type[TYPE_LEN] = "";
	size_t old = debug_lookup(p, type);
	void *q;

	if (old == 0) {
		hpm_bad_pointer(p, "hpm_realloc", "not a live block (debug mode)");
		rte_errno = EINVAL;
		return NULL;
	}
	q = debug_alloc(type, size, align, socket, 0);
	if (q == NULL)
		return NULL;
	memcpy(q, p, RTE_MIN(old, size));
	debug_free(p);
	return q;
}

static size_t
debug_usable(const void *p)
{
	return debug_lookup(p, NULL);
}

unsigned int
hpm_debug_check_all(void)
{
	unsigned int broken = 0;
	const char *where;
	size_t i;

	if (!debug_on)
		return 0;
	if (!hpm_lock(&table->lock))
		return 1;
	for (i = 0; i < table->capacity; i++)
		if (table->slots[i].user != NULL && !canaries_intact(&table->slots[i], &where)) {
			report(&table->slots[i], where);
			broken++;
		}
	hpm_unlock(&table->lock);
	return broken;
}

static int
by_type(const void *a, const void *b)
{
	return strncmp(((const struct record *)a)->type, ((const struct record *)b)->type,
		TYPE_LEN);
}

void
hpm_malloc_dump_leaks(FILE *f)
{
	struct record *snap;
	size_t n = 0, i, count = 0, bytes = 0;

	if (!debug_on) {
		fprintf(f, "hpmalloc: no leak records (debug mode is off)\n");
		return;
	}
	if (!hpm_lock(&table->lock))
		return;
	snap = malloc(RTE_MAX(table->used, (size_t)1) * sizeof(*snap));
	for (i = 0; snap != NULL && i < table->capacity; i++)
		if (table->slots[i].user != NULL)
			snap[n++] = table->slots[i];
	hpm_unlock(&table->lock);
	if (snap == NULL)
		return;
	qsort(snap, n, sizeof(*snap), by_type);
	fprintf(f, "hpmalloc: %zu live blocks\n", n);
	for (i = 0; i < n; i++) {
		count++;
		bytes += snap[i].size;
		if (i + 1 == n || by_type(&snap[i], &snap[i + 1]) != 0) {
			fprintf(f, "\ttype %-24s %8zu blocks %12zu bytes\n",
				snap[i].type[0] != '\0' ? snap[i].type : "(none)", count, bytes);
			count = 0;
			bytes = 0;
		}
	}
	free(snap);
}

uint64_t
hpm_debug_corruption_count(void)
{
	return debug_on ? table->corruptions : 0;
}

static const struct hpm_debug_ops debug_ops = {
	.alloc = debug_alloc,
	.free = debug_free,
	.realloc = debug_realloc,
	.usable = debug_usable,
	.init = debug_init,
	.attach = debug_attach,
	.fini = debug_fini,
};

/* Installed at load: the API calls debug mode, debug mode is never called from below. */
RTE_INIT(hpm_debug_install)
{
	hpm_debug_register(&debug_ops);
}
