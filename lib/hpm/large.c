/* SPDX-License-Identifier: BSD-3-Clause */

#include <errno.h>

#include "chunk.h"
#include "large.h"

static void
mark_units(struct hpm_unit *head, unsigned int from, unsigned int to, bool *dirty)
{
	unsigned int i;

	for (i = from; i < to; i++) {
		*dirty |= head[i].dirty;
		head[i].role = HPM_UNIT_LARGE;
		head[i].head = head;
		head[i].dirty = 1;
	}
}

void *
hpm_large_alloc(struct hpm_chunk_set *cs, unsigned int n, unsigned int align_units, bool contig,
	struct hpm_blockinfo *bi)
{
	struct hpm_unit *u = hpm_chunk_take(cs, n, align_units, contig, HPM_UNIT_LARGE, false);

	if (u == NULL)
		return NULL;
	bi->dirty = false;
	mark_units(u, 0, n, &bi->dirty);
	u->nunits = n;
	bi->bytes = (size_t)n << HPM_UNIT_SHIFT;
	return u->va;
}

static bool
is_block_start(const struct hpm_unit *u, const void *p)
{
	return u->role == HPM_UNIT_LARGE && u->head == u && p == u->va;
}

int
hpm_large_free(struct hpm_chunk_set *cs, struct hpm_unit *u, const void *p, size_t *bytes)
{
	if (!is_block_start(u, p))
		return -EINVAL;
	*bytes = (size_t)u->nunits << HPM_UNIT_SHIFT;
	hpm_chunk_give(cs, u, u->nunits);
	return 0;
}

size_t
hpm_large_block_size(const struct hpm_unit *u, const void *p)
{
	return is_block_start(u, p) ? (size_t)u->nunits << HPM_UNIT_SHIFT : 0;
}

int
hpm_large_resize(struct hpm_chunk_set *cs, struct hpm_unit *u, const void *p, unsigned int n,
	struct hpm_blockinfo *bi)
{
	unsigned int old = u->nunits;

	if (!is_block_start(u, p))
		return -1;
	bi->dirty = false;
	if (n < old) {
		hpm_chunk_give(cs, u + n, old - n);
	} else if (n > old) {
		if (!hpm_chunk_extend(cs, u, old, n - old))
			return -1;
		mark_units(u, old, n, &bi->dirty);
	}
	u->nunits = n;
	bi->bytes = (size_t)n << HPM_UNIT_SHIFT;
	return 0;
}
