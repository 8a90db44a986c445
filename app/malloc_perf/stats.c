/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The stats line: every period seconds while a run is in progress (a control
 * thread), or on `show stats`: what runs, operations per second on each
 * lcore, the backend's heap used and free (RSS for the libc-style peers),
 * and the hit rate of hpmalloc's per-lcore caches (allocations served by the
 * cache / all cached-class allocations) over the interval. `show heap`
 * prints each backend's memory and cache counters.
 */

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_lcore.h>

#include "hpm_compat.h"
#include "malloc_perf.h"

struct stats_prev {
	uint64_t seq;
	uint64_t tsc;
	uint64_t ops[RTE_MAX_LCORE];
	int64_t hits, misses;
};

static struct {
	pthread_t tid;
	volatile int run;
	unsigned int period;
	struct stats_prev prev;
} st;

static void
fmt_rate(char *buf, size_t len, double per_s)
{
	if (per_s >= 1e6)
		snprintf(buf, len, "%.2f M/s", per_s / 1e6);
	else if (per_s >= 1e3)
		snprintf(buf, len, "%.1f k/s", per_s / 1e3);
	else
		snprintf(buf, len, "%.0f /s", per_s);
}

/* One line about what runs now; prev holds the last sample (for rates over the interval). */
static void
stats_line(FILE *f, struct stats_prev *prev)
{
	struct mp_status s;
	struct mp_memory m;
	unsigned int ids[RTE_MAX_LCORE], i;
	uint64_t now = rte_rdtsc(), base;
	int64_t hits, misses;
	double hz = (double)rte_get_tsc_hz();
	char line[1024], rate[32];
	size_t off;
	bool same;

	mp_status_get(&s);
	if (!s.running) {
		fprintf(f, "idle\n");
		return;
	}
	same = prev->seq == s.seq;
	base = same ? prev->tsc : s.run_tsc;
	off = snprintf(line, sizeof(line), "[%7.1fs] %s %s rep %u/%u |",
		(double)(now - s.start_tsc) / hz, s.workload, s.backend, s.rep + 1, s.nreps);
	for (i = 0; i < s.nlc && off < sizeof(line); i++) {
		uint64_t ops = __atomic_load_n(&s.lc[i].ops, __ATOMIC_RELAXED);
		uint64_t before = same ? prev->ops[i] : 0;

		ids[i] = s.lc[i].lcore_id;
		fmt_rate(rate, sizeof(rate),
			now > base
				? (double)(ops - RTE_MIN(before, ops)) * hz / (double)(now - base)
				: 0);
		off += snprintf(line + off, sizeof(line) - off, " lcore %u: %s", ids[i], rate);
		prev->ops[i] = ops;
	}
	if (off < sizeof(line) && mp_backend_peek(s.be, ids, s.nlc, &m, &hits, &misses)) {
		/* `none` has no heap: its "RSS" is the whole process's, nothing of its own */
		if (s.be->flags & MP_BE_NOALLOC)
			;
		else if (m.rss)
			off += snprintf(line + off, sizeof(line) - off, " | rss %.1f MiB",
				m.total / MP_MIB);
		else
			off += snprintf(line + off, sizeof(line) - off,
				" | heap used %.1f MiB free %.1f MiB", m.used / MP_MIB,
				m.free / MP_MIB);
		if (hits >= 0 && off < sizeof(line)) {
			int64_t dh = hits - (same ? prev->hits : 0);
			int64_t dm = misses - (same ? prev->misses : 0);

			if (dh + dm > 0)
				off += snprintf(line + off, sizeof(line) - off,
					" | cache hits %.2f%%",
					100.0 * (double)dh / (double)(dh + dm));
			else
				off += snprintf(line + off, sizeof(line) - off, " | cache hits -");
			prev->hits = hits;
			prev->misses = misses;
		}
	}
	prev->seq = s.seq;
	prev->tsc = now;
	fprintf(f, "%s\n", line);
	fflush(f);
}

static void *
stats_main(void *arg)
{
	struct timespec ts = {0, 50 * 1000 * 1000};
	unsigned int ticks = 0;

	RTE_SET_USED(arg);
	while (__atomic_load_n(&st.run, __ATOMIC_RELAXED)) {
		nanosleep(&ts, NULL);
		if (++ticks < st.period * 20)
			continue;
		ticks = 0;
		stats_line(stderr, &st.prev);
	}
	return NULL;
}

int
mp_stats_start(unsigned int period)
{
	int rc;

	memset(&st.prev, 0, sizeof(st.prev));
	st.period = period;
	st.run = 1;
	rc = hpm_ctrl_thread_create(&st.tid, "mp-stats", stats_main, NULL);
	if (rc != 0) {
		st.run = 0;
		fprintf(stderr, "stats line: cannot start its thread: %s\n", strerror(rc));
		return -rc;
	}
	return 0;
}

void
mp_stats_stop(void)
{
	if (!st.run)
		return;
	__atomic_store_n(&st.run, 0, __ATOMIC_RELAXED);
	pthread_join(st.tid, NULL);
}

void
mp_stats_show(FILE *f)
{
	static struct stats_prev prev;

	stats_line(f, &prev);
}

void
mp_heap_show(const struct mp_config *cfg, FILE *f)
{
	unsigned int i, k;
	struct mp_status s;

	mp_status_get(&s);
	for (i = 0; i < cfg->nbackends; i++) {
		const struct mp_backend *be = cfg->backends[i];
		struct mp_memory m;
		int64_t hits, misses;

		if (!mp_backend_peek(be, cfg->lcores, cfg->nlcores, &m, &hits, &misses)) {
			fprintf(f, "%-10s (being initialised)\n", be->name);
			continue;
		}
		if (be->flags & MP_BE_NOALLOC)
			fprintf(f, "%-10s no memory\n", be->name);
		else if (m.rss)
			fprintf(f, "%-10s process RSS %.1f MiB\n", be->name, m.total / MP_MIB);
		else if (m.total == 0)
			fprintf(f, "%-10s no heap (not started, or no pool now)\n", be->name);
		else
			fprintf(f,
				"%-10s heap %.1f MiB: used %.1f MiB, free %.1f MiB, held %.1f MiB "
				"(size less the largest free range)\n",
				be->name, m.total / MP_MIB, m.used / MP_MIB, m.free / MP_MIB,
				m.held / MP_MIB);
		for (k = 0; k < cfg->nlcores && hits >= 0; k++) {
			struct mp_memory mk;
			int64_t h, mi;

			if (mp_backend_peek(be, &cfg->lcores[k], 1, &mk, &h, &mi) && h >= 0)
				fprintf(f,
					"%-10s   lcore %u cache: %" PRId64 " hits, %" PRId64
					" refills (%.2f%% hits)\n",
					"", cfg->lcores[k], h, mi,
					h + mi ? 100.0 * (double)h / (double)(h + mi) : 0.0);
		}
	}
	if (s.running)
		fprintf(f, "(running: %s on %s)\n", s.workload, s.backend);
}
