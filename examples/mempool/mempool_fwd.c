/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * An mbuf pool on hpmalloc, used by a forwarding loop: two ports (net_null
 * vdevs here, NICs as well), io forwarding 0 <-> 1 on one lcore as testpmd's
 * io mode. At the end every mbuf is back in the pool, and the pool's memory
 * is back in hpmalloc.
 *
 *   mempool_fwd -l 0 --no-pci --vdev=net_null0 --vdev=net_null1 -- \
 *       [--packets N] [--mbufs N] [--data-room BYTES] [--ops ring_mp_mc|stack|bucket]
 *       [--dpdk-pool]
 *
 * --dpdk-pool makes the pool with rte_pktmbuf_pool_create() instead, to
 * compare; --packets 0 only creates and frees the pool. Either way it prints
 * how long creating the pool took and the hugepage memory it took.
 */

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "hpm_malloc.h"
#include "hpm_mempool.h"

#define BURST 32
#define RING_SIZE 1024

struct options {
	uint64_t packets;
	unsigned int mbufs;
	unsigned int data_room;
	const char *ops;
	int dpdk_pool;
};

static int
parse_options(int argc, char **argv, struct options *o)
{
	const struct option longs[] = {
		{"packets", required_argument, NULL, 'p'},
		{"mbufs", required_argument, NULL, 'm'},
		{"ops", required_argument, NULL, 'o'},
		{"data-room", required_argument, NULL, 'd'},
		{"dpdk-pool", no_argument, &o->dpdk_pool, 1},
		{NULL, 0, NULL, 0},
	};
	int c;

	o->packets = 10000000;
	o->mbufs = 8191;
	o->data_room = RTE_MBUF_DEFAULT_BUF_SIZE;
	o->ops = NULL;
	o->dpdk_pool = 0;
	while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		switch (c) {
		case 'p':
			o->packets = strtoull(optarg, NULL, 0);
			break;
		case 'm':
			o->mbufs = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'o':
			o->ops = optarg;
			break;
		case 'd':
			o->data_room = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 0:
			break;
		default:
			return -1;
		}
	}
	return 0;
}

/* Bytes held by hpmalloc's blocks on every socket. */
static size_t
hpm_held(void)
{
	struct rte_malloc_socket_stats s;
	size_t sum = 0;
	unsigned int i;

	for (i = 0; i < rte_socket_count(); i++)
		if (hpm_malloc_get_socket_stats(rte_socket_id_by_idx(i), &s) == 0)
			sum += s.heap_allocsz_bytes;
	return sum;
}

/* Hugepage memory this process has mapped, in bytes. */
static size_t
hugetlb_mapped(void)
{
	char line[128];
	size_t kb, sum = 0;
	FILE *f = fopen("/proc/self/smaps_rollup", "r");

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if ((sscanf(line, "Shared_Hugetlb: %zu kB", &kb) == 1) ||
			(sscanf(line, "Private_Hugetlb: %zu kB", &kb) == 1))
			sum += kb << 10;
	fclose(f);
	return sum;
}

static int
port_start(uint16_t port, struct rte_mempool *mp)
{
	struct rte_eth_conf conf;
	int socket = rte_eth_dev_socket_id(port);

	memset(&conf, 0, sizeof(conf));
	if (rte_eth_dev_configure(port, 1, 1, &conf) != 0 ||
		rte_eth_rx_queue_setup(port, 0, RING_SIZE, socket, NULL, mp) != 0 ||
		rte_eth_tx_queue_setup(port, 0, RING_SIZE, socket, NULL) != 0)
		return -1;
	return rte_eth_dev_start(port);
}

/* One burst from port in to port out; the packets out could not take are freed. */
static inline unsigned int
forward(uint16_t in, uint16_t out, uint64_t *dropped)
{
	struct rte_mbuf *pkts[BURST];
	uint16_t n = rte_eth_rx_burst(in, 0, pkts, BURST);
	uint16_t sent = rte_eth_tx_burst(out, 0, pkts, n);

	if (unlikely(sent < n)) {
		rte_pktmbuf_free_bulk(&pkts[sent], n - sent);
		*dropped += n - sent;
	}
	return n;
}

int
main(int argc, char **argv)
{
	uint64_t rx = 0, dropped = 0, start, cycles;
	struct rte_mempool *mp;
	struct options o;
	size_t held0, held1, huge0, huge1;
	int ret, failed = 0;
	uint16_t p;

	ret = rte_eal_init(argc, argv);
	if (ret < 0 || parse_options(argc - ret, argv + ret, &o) < 0) {
		fprintf(stderr,
			"usage: %s [EAL options] -- [--packets N] [--mbufs N] [--data-room BYTES] "
			"[--ops NAME] [--dpdk-pool]\n",
			argv[0]);
		return 1;
	}
	if (o.packets > 0 && rte_eth_dev_count_avail() < 2) {
		fprintf(stderr, "needs two ports, e.g. --vdev=net_null0 --vdev=net_null1\n");
		return 1;
	}
	held0 = hpm_held();
	huge0 = hugetlb_mapped();
	start = rte_rdtsc();
	if (o.dpdk_pool)
		mp = rte_pktmbuf_pool_create_by_ops("fwd_pool", o.mbufs, 256, 0, o.data_room,
			(int)rte_socket_id(), o.ops);
	else
		mp = hpm_pktmbuf_pool_create_by_ops("fwd_pool", o.mbufs, 256, 0, o.data_room,
			(int)rte_socket_id(), o.ops);
	cycles = rte_rdtsc() - start;
	if (mp == NULL) {
		fprintf(stderr, "mbuf pool: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	held1 = hpm_held();
	huge1 = hugetlb_mapped();
	printf("pool of %u mbufs of %u bytes (%s) on %s: created in %.1f ms, %u memory chunks, "
	       "%.1f MiB from hpmalloc, %.1f MiB of hugepages mapped\n",
		mp->size, mp->elt_size, rte_mempool_get_ops(mp->ops_index)->name,
		o.dpdk_pool ? "memzones" : "hpmalloc", (double)cycles * 1e3 / rte_get_tsc_hz(),
		mp->nb_mem_chunks, (double)(held1 - held0) / (1 << 20),
		(double)(huge1 - huge0) / (1 << 20));
	if (o.packets == 0) {
		rte_mempool_free(mp);
		rte_eal_cleanup();
		return 0;
	}
	for (p = 0; p < 2; p++)
		if (port_start(p, mp) != 0) {
			fprintf(stderr, "cannot start port %u\n", p);
			return 1;
		}

	start = rte_rdtsc();
	while (rx < o.packets) {
		rx += forward(0, 1, &dropped);
		rx += forward(1, 0, &dropped);
	}
	cycles = rte_rdtsc() - start;
	printf("forwarded %" PRIu64 " packets, %" PRIu64 " dropped, %.2f Mpps\n", rx - dropped,
		dropped, (double)rx * rte_get_tsc_hz() / cycles / 1e6);

	for (p = 0; p < 2; p++) {
		rte_eth_dev_stop(p);
		rte_eth_dev_close(p);
	}
	/* every mbuf back: none leaked by the loop or the ports */
	if (rte_mempool_avail_count(mp) != mp->size) {
		fprintf(stderr, "%u mbufs of %u not back in the pool\n",
			mp->size - rte_mempool_avail_count(mp), mp->size);
		failed = 1;
	}
	rte_mempool_free(mp);
	if (hpm_held() != held0) {
		fprintf(stderr, "hpmalloc holds %zu bytes more after the pool's free\n",
			hpm_held() - held0);
		failed = 1;
	}
	if (!o.dpdk_pool)
		printf("pool freed: its memory is back in hpmalloc\n");
	rte_eal_cleanup();
	return failed;
}
