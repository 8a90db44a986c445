/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef MALLOC_PERF_H
#define MALLOC_PERF_H

/*
 * malloc_perf: the stress and comparison tool. Two tables of ops drive it:
 * backends (the allocators under test, backend.c) and workloads (what is
 * measured, workload.c). Adding an allocator or a workload is adding a row.
 * main.c runs every workload on every backend, repetition by repetition;
 * report.c prints the tables and writes the JSON file.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_cycles.h>
#include <rte_malloc.h>

/** Type string given to every allocation (rte_malloc ignores it). */
#define MP_TYPE "malloc_perf"

/** Largest --repeat. */
#define MP_MAX_REPEAT 1000u
/** Most metrics a workload may have. */
#define MP_MAX_METRICS 32u

/** An allocator under test: one row of mp_backends[]. */
struct mp_backend {
	const char *name; /**< name on the command line and in reports */
	const char *desc; /**< one line for --help */
	/** Once, after rte_eal_init(); NULL if nothing to do. 0 or -errno. */
	int (*init)(void);
	/** Once, before rte_eal_cleanup(); may be NULL. */
	void (*fini)(void);
	/** rte_malloc() signature: align 0 means a cache line. */
	void *(*malloc)(const char *type, size_t size, unsigned int align);
	/** rte_free() signature. */
	void (*free)(void *ptr);
	/** rte_malloc_get_socket_stats() signature: 0, or -1 for a socket it does not have. */
	int (*socket_stats)(int socket, struct rte_malloc_socket_stats *stats);
	/**
	 * Give memory that the heap keeps for reuse back to its source, with no
	 * live block; NULL if the backend cannot. 0 or -errno.
	 */
	int (*trim)(void);
	/** Check the heap's invariants; NULL if the backend has no checker. 0 or -errno. */
	int (*check)(void);
	/** Name of the memory it runs on; NULL for EAL's own heap. */
	const char *(*source)(void);
};

extern const struct mp_backend mp_backends[];
extern const unsigned int mp_nbackends;

/** Sizes of the workloads: full, or small for CI (--quick). */
struct mp_params {
	bool quick;
	unsigned int grow_per_round; /**< seed-grow: allocations per round */
	unsigned int gran_blocks;    /**< granule-full: blocks allocated */
	unsigned int gran_free;      /**< granule-full: of which freed at random */
	unsigned int held_4k;        /**< held: number of 4K/4K blocks */
	unsigned int held_64k;       /**< held: number of 64K/64K blocks */
	uint64_t budget_ms;          /**< time budget of one timed loop */
	uint64_t seed;               /**< random generator seed */
};

/** What one run of a workload gets: a backend, the sizes, the repetition. */
struct mp_run {
	const struct mp_backend *be;
	const struct mp_params *params;
	unsigned int rep; /**< 0-based repetition */
};

/** Metric flag: shown in the printed table (every metric goes to the JSON file). */
#define MP_METRIC_TABLE 0x1

/** One figure that a workload measures. */
struct mp_metric {
	const char *name;
	const char *unit;
	unsigned int flags; /**< MP_METRIC_* */
};

/** A workload: one row of mp_workloads[]. */
struct mp_workload {
	const char *name; /**< name on the command line and in reports */
	const char *help; /**< for --help: lines of at most 60 columns, "\n" between */
	/** Title of the table, with the counts of this run. */
	void (*describe)(const struct mp_params *p, char *buf, size_t len);
	const struct mp_metric *metrics;
	unsigned int nmetrics;
	/**
	 * Run once on run->be and fill out[0 .. nmetrics - 1]. Frees every
	 * block it allocated before it returns. 0 or -errno (out is then
	 * ignored).
	 */
	int (*run)(const struct mp_run *run, double *out);
};

extern const struct mp_workload mp_workloads[];
extern const unsigned int mp_nworkloads;

/**
 * The figures of one workload: value(metric, backend, rep), NaN where a run
 * failed.
 */
struct mp_results {
	const struct mp_workload *wl;
	char title[160];
	unsigned int nbackends;
	const struct mp_backend **backends; /**< the backends selected, in order */
	unsigned int nreps;
	double *values; /**< [metric][backend][rep] */
};

static inline double *
mp_value(const struct mp_results *r, unsigned int m, unsigned int b, unsigned int rep)
{
	return &r->values[((size_t)m * r->nbackends + b) * r->nreps + rep];
}

/** Median, minimum and maximum of the repetitions that did not fail. */
struct mp_summary {
	double median, min, max;
	unsigned int n; /**< repetitions counted; 0 if all failed */
};

void mp_summarise(const struct mp_results *r, unsigned int m, unsigned int b, struct mp_summary *s);

/** Median of n values (sorts them). */
double mp_median(double *v, unsigned int n);

/** Print the table of one workload to stdout. */
void mp_report_table(const struct mp_results *r);

/** Description of the machine and the run, for the JSON file. */
struct mp_env {
	const char *memory;     /**< "hugepages" or "anonymous" */
	uint64_t hugepage_size; /**< bytes, 0 without hugepages */
	uint64_t eal_heap_mib;  /**< rte_malloc heap at start, all sockets */
	uint64_t tsc_hz;
	unsigned int repeat;
	bool quick;
};

/** Write every figure to path as JSON (format: doc/malloc_perf.md). 0 or -errno. */
int mp_report_json(const char *path, const struct mp_env *env, const struct mp_results *res,
	unsigned int nres);

/** TSC cycles to nanoseconds. */
static inline double
mp_ns(uint64_t cycles)
{
	return (double)cycles * 1e9 / (double)rte_get_tsc_hz();
}

/** Milliseconds to TSC cycles. */
static inline uint64_t
mp_ms_cycles(uint64_t ms)
{
	return rte_get_tsc_hz() / 1000 * ms;
}

/** A fast reproducible random generator (xorshift64*). */
static inline uint64_t
mp_rand(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * UINT64_C(2685821657736338717);
}

#endif /* MALLOC_PERF_H */
