/* SPDX-License-Identifier: BSD-3-Clause */

#include <errno.h>
#include <string.h>

#include <rte_bitops.h>
#include <rte_common.h>

#include "meta.h"

/*
 * Class of a request up to 1 MiB: powers of two to HPM_META_PAGE (classes 0
 * to 6), then multiples of it (class 6 + pages - 1: 4 KiB is both).
 */
static unsigned int
size_class(size_t size)
{
	if (size <= HPM_META_PAGE)
		return rte_log2_u64(RTE_MAX(size, (size_t)1 << HPM_META_MIN_LOG2)) -
			HPM_META_MIN_LOG2;
	return HPM_META_PAGE_LOG2 - HPM_META_MIN_LOG2 - 1 +
		(unsigned int)(RTE_ALIGN_CEIL(size, HPM_META_PAGE) >> HPM_META_PAGE_LOG2);
}

static size_t
class_bytes(unsigned int cls)
{
	if (cls <= HPM_META_PAGE_LOG2 - HPM_META_MIN_LOG2)
		return (size_t)1 << (cls + HPM_META_MIN_LOG2);
	return (size_t)(cls - (HPM_META_PAGE_LOG2 - HPM_META_MIN_LOG2 - 1)) << HPM_META_PAGE_LOG2;
}

/*
 * What a full region leaves past its bump pointer goes to the free lists,
 * in the largest classes it holds, instead of being lost.
 */
static void
keep_tail(struct hpm_meta *m)
{
	while ((size_t)(m->end - m->bump) >= ((size_t)1 << HPM_META_MIN_LOG2)) {
		size_t left = m->end - m->bump;
		unsigned int cls =
			size_class(left > HPM_META_PAGE ? RTE_ALIGN_FLOOR(left, HPM_META_PAGE)
							: rte_align64prevpow2(left));

		*(void **)m->bump = m->free[cls];
		m->free[cls] = m->bump;
		m->bump += class_bytes(cls);
	}
}

static struct hpm_meta_region *
region_reserve(const struct hpm_source_ops *src, size_t len, const char *name, int *rc)
{
	struct hpm_region r;
	struct hpm_meta_region *mr;

	*rc = hpm_source_reserve_meta(src, &r, len, name);
	if (*rc != 0)
		return NULL;
	mr = r.va;
	mr->region = r;
	return mr;
}

static void
region_link(struct hpm_meta *m, struct hpm_meta_region *mr)
{
	mr->prev = NULL;
	mr->next = m->regions;
	if (m->regions != NULL)
		m->regions->prev = mr;
	m->regions = mr;
	m->reserved_bytes += mr->region.len;
}

int
hpm_meta_bootstrap(const struct hpm_source_ops *src, size_t first_len, const char *name,
	void **bootstrap)
{
	struct hpm_meta_region *mr;
	int rc;

	first_len = RTE_ALIGN_CEIL(first_len, RTE_CACHE_LINE_SIZE);
	mr = region_reserve(src, HPM_META_HDR_SIZE + first_len + HPM_META_REGION_SIZE, name, &rc);
	if (mr == NULL)
		return rc != 0 ? rc : -ENOMEM;
	*bootstrap = (uint8_t *)mr + HPM_META_HDR_SIZE;
	return 0;
}

void
hpm_meta_init(struct hpm_meta *m, struct hpm_meta_region *first, size_t bootstrap_len)
{
	memset(m, 0, sizeof(*m));
	hpm_lock_init(&m->lock);
	region_link(m, first);
	m->bump = (uint8_t *)first + HPM_META_HDR_SIZE +
		RTE_ALIGN_CEIL(bootstrap_len, RTE_CACHE_LINE_SIZE);
	m->end = (uint8_t *)first + first->region.len;
	m->used_bytes = m->bump - (uint8_t *)first;
}

static void *
alloc_region_of_its_own(struct hpm_meta *m, const struct hpm_source_ops *src, size_t size)
{
	int rc;
	struct hpm_meta_region *mr = region_reserve(src, HPM_META_HDR_SIZE + size, NULL, &rc);

	if (mr == NULL)
		return NULL;
	region_link(m, mr);
	m->used_bytes += mr->region.len;
	return (uint8_t *)mr + HPM_META_HDR_SIZE;
}

void *
hpm_meta_alloc(struct hpm_meta *m, const struct hpm_source_ops *src, size_t size)
{
	unsigned int cls;
	size_t cls_size;
	void *p = NULL;

	/* a process died changing the metadata: none of it is handed out again */
	if (!hpm_lock(&m->lock))
		return NULL;
	if (size > ((size_t)1 << HPM_META_MAX_LOG2)) {
		p = alloc_region_of_its_own(m, src, size);
		goto out;
	}
	cls = size_class(size);
	cls_size = class_bytes(cls);
	p = m->free[cls];
	if (p != NULL) {
		m->free[cls] = *(void **)p;
		memset(p, 0, cls_size);
		m->used_bytes += cls_size;
		goto out;
	}
	if ((size_t)(m->end - m->bump) < cls_size) {
		int rc;
		struct hpm_meta_region *mr =
			region_reserve(src, HPM_META_HDR_SIZE + HPM_META_REGION_SIZE, NULL, &rc);

		if (mr == NULL)
			goto out;
		region_link(m, mr);
		keep_tail(m);
		m->bump = (uint8_t *)mr + HPM_META_HDR_SIZE;
		m->end = (uint8_t *)mr + mr->region.len;
	}
	p = m->bump;
	m->bump += cls_size;
	m->used_bytes += cls_size;
out:
	hpm_unlock(&m->lock);
	return p;
}

size_t
hpm_meta_bytes(const void *p, size_t size)
{
	if (size > ((size_t)1 << HPM_META_MAX_LOG2))
		return ((const struct hpm_meta_region *)((const uint8_t *)p - HPM_META_HDR_SIZE))
			->region.len;
	return class_bytes(size_class(size));
}

void
hpm_meta_free(struct hpm_meta *m, const struct hpm_source_ops *src, void *p, size_t size)
{
	unsigned int cls;

	if (p == NULL || !hpm_lock(&m->lock))
		return;
	if (size > ((size_t)1 << HPM_META_MAX_LOG2)) {
		struct hpm_meta_region *mr =
			(struct hpm_meta_region *)((uint8_t *)p - HPM_META_HDR_SIZE);

		if (mr->prev != NULL)
			mr->prev->next = mr->next;
		else
			m->regions = mr->next;
		if (mr->next != NULL)
			mr->next->prev = mr->prev;
		m->reserved_bytes -= mr->region.len;
		m->used_bytes -= mr->region.len;
		hpm_unlock(&m->lock);
		src->release(&mr->region);
		return;
	}
	cls = size_class(size);
	*(void **)p = m->free[cls];
	m->free[cls] = p;
	m->used_bytes -= class_bytes(cls);
	hpm_unlock(&m->lock);
}

unsigned int
hpm_meta_extents(struct hpm_meta *m, const struct hpm_source_ops *src, struct hpm_extent *e,
	unsigned int max, size_t *bytes)
{
	const struct hpm_meta_region *mr;
	unsigned int n = 0;

	*bytes = 0;
	if (!hpm_lock(&m->lock))
		return 0;
	for (mr = m->regions; mr != NULL; mr = mr->next, n++) {
		if (n < max)
			e[n] = hpm_source_extent(src, &mr->region);
		*bytes += mr->region.len;
	}
	hpm_unlock(&m->lock);
	return n;
}

void
hpm_meta_release_all(struct hpm_meta *m, const struct hpm_source_ops *src)
{
	struct hpm_meta_region *mr = m->regions, *first = NULL;

	/* the first region holds m itself: find it, release it last */
	while (mr != NULL) {
		struct hpm_meta_region *next = mr->next;
		struct hpm_region r = mr->region;

		if (mr->next == NULL) {
			first = mr;
			break;
		}
		src->release(&r);
		mr = next;
	}
	if (first != NULL) {
		struct hpm_region r = first->region;

		src->release(&r);
	}
}
