/* SPDX-License-Identifier: BSD-3-Clause */

/* Packet mbuf pools on hpmalloc, as rte_pktmbuf_pool_create(). */

#include <errno.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mbuf_pool_ops.h>

#include "hpm_mempool.h"

struct rte_mempool *
hpm_pktmbuf_pool_create_by_ops(const char *name, unsigned int n, unsigned int cache_size,
	uint16_t priv_size, uint16_t data_room_size, int socket_id, const char *ops_name)
{
	struct rte_pktmbuf_pool_private priv;
	struct rte_mempool *mp;
	int rc;

	if (RTE_ALIGN(priv_size, RTE_MBUF_PRIV_ALIGN) != priv_size) {
		rte_errno = EINVAL;
		return NULL;
	}
	memset(&priv, 0, sizeof(priv));
	priv.mbuf_data_room_size = data_room_size;
	priv.mbuf_priv_size = priv_size;
	mp = rte_mempool_create_empty(name, n,
		sizeof(struct rte_mbuf) + (unsigned int)priv_size + data_room_size, cache_size,
		sizeof(struct rte_pktmbuf_pool_private), socket_id, 0);
	if (mp == NULL)
		return NULL;
	rc = rte_mempool_set_ops_byname(mp,
		ops_name != NULL ? ops_name : rte_mbuf_best_mempool_ops(), NULL);
	if (rc == 0) {
		rte_pktmbuf_pool_init(mp, &priv);
		rc = hpm_mempool_populate(mp);
	}
	if (rc < 0) {
		rte_mempool_free(mp);
		rte_errno = -rc;
		return NULL;
	}
	rte_mempool_obj_iter(mp, rte_pktmbuf_init, NULL);
	return mp;
}

struct rte_mempool *
hpm_pktmbuf_pool_create(const char *name, unsigned int n, unsigned int cache_size,
	uint16_t priv_size, uint16_t data_room_size, int socket_id)
{
	return hpm_pktmbuf_pool_create_by_ops(name, n, cache_size, priv_size, data_room_size,
		socket_id, NULL);
}
