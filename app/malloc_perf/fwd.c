/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * fwd: a forwarding engine, as testpmd's io mode, over the ports EAL has
 * (--vdev net_null0 --vdev net_null1, or real ones); with none, a net_ring
 * pair that the tool makes and primes with packets, which then circulate.
 * Port p forwards to port p ^ 1 (to itself when it has no peer); the streams
 * are spread over the lcores. For every packet it receives, an lcore
 * allocates a buffer of the configured size from the backend, copies the
 * packet into it and frees it, then transmits the burst. `none` copies into
 * a scratch buffer instead: the difference is the cost of allocation.
 */

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_memcpy.h>
#include <rte_ring.h>

#include "malloc_perf.h"

#define FWD_NB_MBUF 16383u
#define FWD_MBUF_CACHE 256u
#define FWD_DESC 1024u
#define FWD_RING_SIZE 4096u
#define FWD_PRIME 512u /* packets per port of the net_ring pair */
#define FWD_SIZE 2048u
#define FWD_IDLE_MS 1000u /* --iterations: give up after so long with nothing received */

enum {
	M_MPPS,
	M_NS,
	M_SHARE,
	M_PACKETS,
	M_DROPS,
	M_COUNT,
};

static struct {
	bool up;
	uint16_t ports[RTE_MAX_ETHPORTS];
	unsigned int nports;
	struct rte_mempool *mbufs;
	struct rte_ring *rings[2];
	unsigned int pkt_len; /* of the packets primed on the ring pair; 0: not primed */
	char desc[160];
} fwd;

static void
fwd_case(const struct mp_config *cfg, size_t *size, unsigned int *align)
{
	*size = cfg->size != 0 ? cfg->size : FWD_SIZE;
	*align = cfg->size != 0 ? cfg->align : 0;
}

static int
port_start(uint16_t port)
{
	struct rte_eth_conf conf;
	int socket = rte_eth_dev_socket_id(port), rc;

	memset(&conf, 0, sizeof(conf));
	if (socket < 0)
		socket = (int)rte_socket_id();
	rc = rte_eth_dev_configure(port, 1, 1, &conf);
	if (rc == 0)
		rc = rte_eth_rx_queue_setup(port, 0, FWD_DESC, socket, NULL, fwd.mbufs);
	if (rc == 0)
		rc = rte_eth_tx_queue_setup(port, 0, FWD_DESC, socket, NULL);
	if (rc == 0)
		rc = rte_eth_dev_start(port);
	if (rc != 0)
		fprintf(stderr, "fwd: port %u: cannot start: %s\n", port, strerror(-rc));
	return rc;
}

/* Put packets on a port of the ring pair, so that the peer has something to receive. */
static int
prime(uint16_t port, unsigned int pkt_len)
{
	struct rte_mbuf *m[FWD_PRIME];
	unsigned int i, sent = 0;

	if (rte_pktmbuf_alloc_bulk(fwd.mbufs, m, FWD_PRIME) != 0)
		return -ENOMEM;
	for (i = 0; i < FWD_PRIME; i++) {
		char *d = rte_pktmbuf_append(m[i], (uint16_t)pkt_len);

		if (d == NULL)
			return -ENOSPC;
		memset(d, (int)i, pkt_len);
	}
	while (sent < FWD_PRIME) {
		uint16_t n = rte_eth_tx_burst(port, 0, m + sent, (uint16_t)(FWD_PRIME - sent));

		if (n == 0) {
			rte_pktmbuf_free_bulk(m + sent, FWD_PRIME - sent);
			return -ENOSPC;
		}
		sent += n;
	}
	return 0;
}

static void fwd_teardown(void);

static int
fwd_setup(const struct mp_config *cfg)
{
	struct rte_eth_dev_info info;
	unsigned int i;
	size_t off;
	uint16_t p;
	int rc, socket = (int)rte_socket_id();

	if (socket < 0)
		socket = 0;
	fwd.mbufs = rte_pktmbuf_pool_create("mp_fwd_mbufs", FWD_NB_MBUF, FWD_MBUF_CACHE, 0,
		RTE_MBUF_DEFAULT_BUF_SIZE, socket);
	if (fwd.mbufs == NULL) {
		fprintf(stderr, "fwd: mbuf pool: %s\n", rte_strerror(rte_errno));
		return -ENOMEM;
	}
	if (rte_eth_dev_count_avail() == 0) {
		struct rte_ring *r0, *r1;
		int p0, p1;

		r0 = rte_ring_create("mp_fwd_r0", FWD_RING_SIZE, socket, 0);
		r1 = rte_ring_create("mp_fwd_r1", FWD_RING_SIZE, socket, 0);
		fwd.rings[0] = r0;
		fwd.rings[1] = r1;
		if (r0 == NULL || r1 == NULL) {
			fprintf(stderr, "fwd: rings: %s\n", rte_strerror(rte_errno));
			rc = -ENOMEM;
			goto fail;
		}
		p0 = rte_eth_from_rings("net_ring_mp0", &r0, 1, &r1, 1, socket);
		p1 = rte_eth_from_rings("net_ring_mp1", &r1, 1, &r0, 1, socket);
		if (p0 < 0 || p1 < 0) {
			fprintf(stderr, "fwd: net_ring pair: %s\n", rte_strerror(rte_errno));
			rc = -ENODEV;
			goto fail;
		}
	}
	fwd.nports = 0;
	for (p = rte_eth_find_next(0); p < RTE_MAX_ETHPORTS; p = rte_eth_find_next(p + 1))
		fwd.ports[fwd.nports++] = p;
	off = snprintf(fwd.desc, sizeof(fwd.desc), "%u port%s (", fwd.nports,
		fwd.nports > 1 ? "s" : "");
	fwd.up = true;
	for (i = 0; i < fwd.nports; i++) {
		rc = port_start(fwd.ports[i]);
		if (rc != 0)
			goto fail;
		if (rte_eth_dev_info_get(fwd.ports[i], &info) == 0 && off < sizeof(fwd.desc))
			off += snprintf(fwd.desc + off, sizeof(fwd.desc) - off, "%s%s",
				i ? ", " : "", info.driver_name);
	}
	if (off < sizeof(fwd.desc))
		snprintf(fwd.desc + off, sizeof(fwd.desc) - off, "%s)",
			fwd.rings[0] != NULL ? ", made by the tool" : "");
	if (fwd.rings[0] != NULL)
		for (i = 0; i < fwd.nports; i++) {
			rc = prime(fwd.ports[i], cfg->pkt_len);
			if (rc != 0) {
				fprintf(stderr, "fwd: cannot prime port %u\n", fwd.ports[i]);
				goto fail;
			}
			fwd.pkt_len = cfg->pkt_len;
		}
	return 0;
fail:
	fwd_teardown();
	return rc;
}

static void
fwd_teardown(void)
{
	unsigned int i;
	void *m;

	for (i = 0; fwd.up && i < fwd.nports; i++) {
		rte_eth_dev_stop(fwd.ports[i]);
		rte_eth_dev_close(fwd.ports[i]);
	}
	for (i = 0; i < 2; i++) {
		if (fwd.rings[i] == NULL)
			continue;
		while (rte_ring_dequeue(fwd.rings[i], &m) == 0)
			rte_pktmbuf_free(m);
		rte_ring_free(fwd.rings[i]);
		fwd.rings[i] = NULL;
	}
	rte_mempool_free(fwd.mbufs);
	fwd.mbufs = NULL;
	fwd.pkt_len = 0;
	fwd.up = false;
}

static void
fwd_describe(const struct mp_config *cfg, char *buf, size_t len)
{
	char cs[MP_NAME_LEN], pl[96] = "";
	size_t size;
	unsigned int align;

	fwd_case(cfg, &size, &align);
	mp_case_name(cs, sizeof(cs), size, align);
	/* the ring pair is primed once per process: a later pkt-len does not apply */
	if (fwd.pkt_len != 0)
		snprintf(pl, sizeof(pl), ", %u-byte packets%s", fwd.pkt_len,
			cfg->pkt_len != fwd.pkt_len
				? " (primed once: a new pkt-len needs a new process)"
				: "");
	snprintf(buf, len,
		"fwd: rx burst of %u, per packet alloc(%s) + copy + free, tx; %s%s; %u lcore%s",
		cfg->burst, cs, fwd.desc, pl, cfg->nlcores, cfg->nlcores > 1 ? "s" : "");
}

static unsigned int
fwd_metrics(const struct mp_config *cfg, struct mp_metric *m)
{
	static const struct {
		const char *name, *unit;
		unsigned int flags;
	} d[M_COUNT] = {
		[M_MPPS] = {"forwarded", "Mpps", MP_M_TABLE | MP_M_HIGHER | MP_M_SUM},
		[M_NS] = {"per packet", "ns", MP_M_TABLE | MP_M_LOWER},
		[M_SHARE] = {"allocation share", "%",
			MP_M_TABLE | MP_M_LOWER | MP_M_OPT | MP_M_NORATIO},
		[M_PACKETS] = {"packets", "packets", MP_M_SUM},
		[M_DROPS] = {"tx drops", "packets", MP_M_SUM},
	};
	unsigned int i;

	RTE_SET_USED(cfg);
	for (i = 0; i < M_COUNT; i++) {
		snprintf(m[i].name, sizeof(m[i].name), "%s", d[i].name);
		m[i].unit = d[i].unit;
		m[i].flags = d[i].flags;
	}
	return M_COUNT;
}

/* The rx ports of an lcore's streams and their names, for a message. */
static void
ports_str(const uint16_t *rx, unsigned int nstreams, char *buf, size_t len)
{
	char name[RTE_ETH_NAME_MAX_LEN];
	unsigned int s;
	size_t off = 0;

	buf[0] = '\0';
	for (s = 0; s < nstreams && off < len; s++) {
		if (rte_eth_dev_get_name_by_port(rx[s], name) != 0)
			snprintf(name, sizeof(name), "?");
		off += snprintf(buf + off, len - off, "%s%u (%s)", s ? ", " : "", rx[s], name);
	}
}

/*
 * Nothing received: ports that no traffic reaches (a net_ring vdev that
 * nothing primes, an unplugged NIC) fail the run rather than count as a rate.
 */
static int
fwd_idle(const struct mp_run *r, const struct mp_lcore *lc, const uint16_t *rx,
	unsigned int nstreams, uint64_t received, uint64_t idle)
{
	char ports[256];

	ports_str(rx, nstreams, ports, sizeof(ports));
	if (received == 0)
		fprintf(stderr, "fwd: lcore %u: no packet received on port%s %s in %.3g s\n",
			lc->lcore_id, nstreams > 1 ? "s" : "", ports, mp_ns(idle) / 1e9);
	else
		fprintf(stderr,
			"fwd: lcore %u: nothing received on port%s %s for %.3g s, after %" PRIu64
			" of %" PRIu64 " packets\n",
			lc->lcore_id, nstreams > 1 ? "s" : "", ports, mp_ns(idle) / 1e9, received,
			r->iters);
	return -EIO;
}

static int
fwd_run(struct mp_run *r, struct mp_lcore *lc)
{
	const struct mp_backend *be = r->be;
	struct rte_mbuf *pkts[MP_MAX_BURST];
	uint16_t rx[RTE_MAX_ETHPORTS], tx[RTE_MAX_ETHPORTS];
	unsigned int nstreams = 0, burst = r->cfg->burst, s, i, align;
	uint64_t packets = 0, received = 0, drops = 0, start, now = 0, last_rx;
	/*
	 * --iterations counts packets and the clock ends no loop: bound the wait
	 * for them (at the prompt with duration 0, `stop` does)
	 */
	uint64_t idle_max = r->iters == 0 || r->budget == UINT64_MAX
		? UINT64_MAX
		: RTE_MAX(r->budget, mp_ms_cycles(FWD_IDLE_MS));
	size_t size;
	int rc;

	fwd_case(r->cfg, &size, &align);
	for (s = lc->idx; s < fwd.nports; s += r->nlc) {
		rx[nstreams] = fwd.ports[s];
		tx[nstreams++] = (s ^ 1u) < fwd.nports ? fwd.ports[s ^ 1u] : fwd.ports[s];
	}
	rc = mp_prepare(r, lc, size, align, burst);
	mp_barrier(r);
	if (rc != 0 || nstreams == 0)
		goto out;
	start = rte_rdtsc();
	last_rx = start;
	do {
		uint64_t seen = received;

		for (s = 0; s < nstreams; s++) {
			uint16_t n = rte_eth_rx_burst(rx[s], 0, pkts, (uint16_t)burst), sent;

			received += n;
			for (i = 0; i < n; i++) {
				struct rte_mbuf *m = pkts[i];
				void *buf = be->malloc(MP_TYPE, size, align);

				if (unlikely(buf == NULL)) {
					rte_pktmbuf_free_bulk(pkts, n);
					rc = -ENOMEM;
					goto out;
				}
				rte_memcpy(buf, rte_pktmbuf_mtod(m, void *),
					RTE_MIN((size_t)rte_pktmbuf_data_len(m), size));
				be->free(buf);
			}
			sent = rte_eth_tx_burst(tx[s], 0, pkts, n);
			if (unlikely(sent < n)) {
				rte_pktmbuf_free_bulk(pkts + sent, n - sent);
				drops += n - sent;
			}
			packets += sent;
		}
		mp_progress(lc, packets);
		now = rte_rdtsc();
		if (received != seen)
			last_rx = now;
		if (unlikely(now - last_rx >= idle_max)) {
			rc = fwd_idle(r, lc, rx, nstreams, received, now - last_rx);
			goto out;
		}
	} while (mp_more(r, packets, now - start));
	if (received == 0 && !mp_stop) {
		rc = fwd_idle(r, lc, rx, nstreams, received, now - start);
		goto out;
	}
	if (packets > 0) {
		lc->out[M_MPPS] = (double)packets / mp_ns(now - start) * 1e3;
		lc->out[M_NS] = mp_ns(now - start) / (double)packets;
	}
	lc->out[M_PACKETS] = (double)packets;
	lc->out[M_DROPS] = (double)drops;
out:
	mp_unprepare(r, lc);
	return rc;
}

/* The share of the forwarding time that allocation takes: 1 - Mpps / Mpps(none), per rep. */
static void
fwd_derive(struct mp_results *res)
{
	unsigned int b, none = res->nbackends, rep;

	for (b = 0; b < res->nbackends; b++)
		if (res->backends[b]->flags & MP_BE_NOALLOC)
			none = b;
	if (none == res->nbackends)
		return;
	for (b = 0; b < res->nbackends; b++)
		for (rep = 0; rep < res->nreps; rep++)
			*mp_value(res, M_SHARE, b, rep) = 100.0 *
				(1.0 -
					*mp_value(res, M_MPPS, b, rep) /
						*mp_value(res, M_MPPS, none, rep));
}

const struct mp_workload mp_wl_fwd = {
	.name = "fwd",
	.help = "forwarding over EAL's ports (--vdev net_null0 --vdev\n"
		"net_null1; none given: a net_ring pair): per packet,\n"
		"alloc(2 KiB, or --size/--align), copy the packet, free;\n"
		"Mpps per backend and for none (the share of allocation);\n"
		"every lcore at once, streams spread over them",
	.flags = MP_WL_FIXED | MP_WL_NOALLOC | MP_WL_BASELINE,
	.describe = fwd_describe,
	.metrics = fwd_metrics,
	.setup = fwd_setup,
	.teardown = fwd_teardown,
	.run = fwd_run,
	.derive = fwd_derive,
};
