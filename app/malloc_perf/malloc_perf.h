/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef MALLOC_PERF_H
#define MALLOC_PERF_H

/*
 * malloc_perf: the stress and comparison tool. Two tables of ops drive it:
 * backends (the allocators under test: backend*.c) and workloads (what is
 * measured: wl_*.c, fwd.c, registered in workload.c). Adding an allocator or
 * a workload is adding a row. runner.c runs every workload on every backend
 * on the selected lcores, repetition by repetition; report.c prints the
 * tables and writes JSON and CSV; stats.c prints the per-second stats line;
 * cli.c is the interactive prompt; options.c the command line and the
 * settings that both share.
 *
 * Calls run one way (devtools/layers.txt; devtools/check-layers checks it),
 * bottom up: util.c, hist.c (depend on nothing) -> control.c (stop flag,
 * barrier, run status, backend lock) -> the backends -> backend.c (their
 * table) -> wl_common.c (what workloads share) -> the workloads ->
 * workload.c (their table) -> report.c, options.c -> runner.c -> stats.c
 * (watches the runs through control.c) -> cli.c, main.c.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

struct mp_hist;
struct mp_results;
struct mp_workload;

/** Type string given to every allocation (rte_malloc ignores it). */
#define MP_TYPE "malloc_perf"
/** Exit status of a run a SIGINT stopped: 128 + SIGINT, as a shell reports it. */
#define MP_EXIT_INTERRUPTED 130

/** Largest --repeat. */
#define MP_MAX_REPEAT 1000u
/** Most metrics a workload may have. */
#define MP_MAX_METRICS 48u
/** Most backends and workloads. */
#define MP_MAX_BACKENDS 16u
#define MP_MAX_WORKLOADS 16u
/** Largest --burst. */
#define MP_MAX_BURST 1024u

#define MP_MIB (1024.0 * 1024.0)

/* ---- backends (backend.c, backend_mempool.c, backend_peer.c) ---- */

/** Backend flag: a pool of fixed-size objects, sized by prepare() (rte_mempool). */
#define MP_BE_FIXED RTE_BIT32(0)
/** Backend flag: no allocation at all (`none`, the baseline). */
#define MP_BE_NOALLOC RTE_BIT32(1)
/** Backend flag: memory is measured by the process's RSS (libc-style peers). */
#define MP_BE_RSS RTE_BIT32(2)
/** Backend flag: part of hpmalloc (hpm, hpm-locked): one of them at a time. */
#define MP_BE_HPM RTE_BIT32(3)

/** An allocator under test: one row of the backend table. */
struct mp_backend {
	const char *name;    /**< name on the command line and in reports */
	const char *desc;    /**< one line for --help */
	const char *missing; /**< why it was not built; NULL if it was */
	unsigned int flags;  /**< MP_BE_* */
	/**
	 * Can it run in this process? NULL: always. 0, or -errno with the
	 * reason in why (not built, library not found).
	 */
	int (*probe)(char *why, size_t len);
	/** Before each run on this backend (hpm: (re)initialise hpmalloc). 0 or -errno. */
	int (*attach)(void);
	/** Once, before rte_eal_cleanup(); may be NULL. */
	void (*fini)(void);
	/** rte_malloc() signature: align 0 means the allocator's default. */
	void *(*malloc)(const char *type, size_t size, unsigned int align);
	/** rte_free() signature. */
	void (*free)(void *ptr);
	/** All or nothing, 0 or -errno; NULL: a loop of malloc(). */
	int (*malloc_bulk)(void **objs, unsigned int n, size_t size, unsigned int align);
	/** NULL: a loop of free(). */
	void (*free_bulk)(void *const *objs, unsigned int n);
	/** IOVA-contiguous memory; NULL if the backend has no such call. */
	void *(*malloc_contig)(size_t size, unsigned int align);
	void (*free_contig)(void *ptr);
	/**
	 * MP_BE_FIXED: make a pool for up to max_live blocks per lcore of one
	 * size and alignment, used by nlcores lcores. 0 or -errno.
	 */
	int (*prepare)(size_t size, unsigned int align, unsigned int max_live,
		unsigned int nlcores);
	void (*unprepare)(void);
	/** rte_malloc_get_socket_stats() signature; NULL for the RSS-measured backends. */
	int (*socket_stats)(int socket, struct rte_malloc_socket_stats *stats);
	/**
	 * Give memory that the allocator keeps for reuse back to its source,
	 * with no live block; NULL if it cannot. 0 or -errno.
	 */
	int (*trim)(void);
	/** Check the heap's invariants; NULL if the backend has no checker. 0 or -errno. */
	int (*check)(void);
	/** Name of the memory it runs on, for the banner. */
	const char *(*source)(void);
	/** Per-lcore cache counters since start; -ENOTSUP without caches. */
	int (*cache_stats)(unsigned int lcore_id, uint64_t *hits, uint64_t *misses);
};

/** Every backend the tool knows, built or not, in --help order. */
unsigned int mp_backend_count(void);
const struct mp_backend *mp_backend_at(unsigned int i);
const struct mp_backend *mp_backend_find(const char *name);
/** Probe once and remember: 0 if usable, else -errno and a reason. */
int mp_backend_usable(const struct mp_backend *be, const char **why);
/** Whether a backend cannot run here, as far as known without loading it. */
bool mp_backend_lacking(const struct mp_backend *be, const char **why);
/**
 * Give hpmalloc's memzones back to EAL (it restarts at its next attach):
 * before the tool reserves anything long-lived in EAL's heap (fwd's mbufs,
 * pipeline's rings), so that it does not land between hpmalloc's memzones
 * and split the free memory that trim() makes one range again.
 */
void mp_backend_release_eal(void);
/** Finish every backend that was attached (at exit). */
void mp_backend_fini_all(void);

/** Memory of a backend: heap size and what its blocks hold (bytes, all sockets). */
struct mp_memory {
	double total; /**< heap size, or RSS */
	double held;  /**< heap size less its largest free range, or RSS */
	double used;  /**< bytes in live blocks as the heap counts them, or RSS */
	double free;  /**< free bytes in the heap; 0 for RSS */
	bool rss;     /**< measured as the process's resident set */
};
void mp_backend_memory(const struct mp_backend *be, struct mp_memory *m);
/**
 * As mp_backend_memory() and the cache counters of some lcores, for another
 * thread (the stats line): false when the backend is being (re)initialised.
 * hits/misses: -1 without caches.
 */
bool mp_backend_peek(const struct mp_backend *be, const unsigned int *lcores, unsigned int n,
	struct mp_memory *m, int64_t *hits, int64_t *misses);
/** Resident anonymous memory of the process less lazily freed pages, bytes. */
double mp_rss_bytes(void);

/** Bulk allocation through the backend, or a loop with rollback. */
int mp_alloc_bulk(const struct mp_backend *be, void **objs, unsigned int n, size_t size,
	unsigned int align);
void mp_free_bulk(const struct mp_backend *be, void *const *objs, unsigned int n);

/* Backends defined in their own files. */
extern const struct mp_backend mp_be_mempool;
extern const struct mp_backend mp_be_libc;
extern const struct mp_backend mp_be_jemalloc;
extern const struct mp_backend mp_be_mimalloc;
extern const struct mp_backend mp_be_tcmalloc;

/* ---- settings (options.c): the command line and the interactive `set` ---- */

struct mp_config {
	const struct mp_backend *backends[MP_MAX_BACKENDS];
	unsigned int nbackends;
	const struct mp_workload *workloads[MP_MAX_WORKLOADS];
	unsigned int nworkloads;
	unsigned int lcores[RTE_MAX_LCORE]; /**< worker lcores, in order */
	unsigned int nlcores;
	unsigned int repeat;
	double duration;     /**< seconds per timed loop; 0: until stop (interactive) */
	uint64_t iterations; /**< units per timed loop instead of a duration; 0: duration */
	size_t size;         /**< 0: the workload's own sizes */
	unsigned int align;  /**< with size */
	unsigned int burst;
	double rate;               /**< paced: M operations/s per lcore */
	unsigned int pkt_len;      /**< fwd: length of the packets put on a net_ring pair */
	unsigned int stats_period; /**< seconds between stats lines; 0: none */
	char json[256];            /**< "": none */
	char csv[256];
	bool quick;
	bool check;
	bool interactive;
	uint64_t seed;
};

/** Defaults, with every worker lcore of EAL (the main lcore if there is none). */
void mp_config_defaults(struct mp_config *cfg, bool interactive);
/** Parse the tool's own arguments (after EAL's). 0, -EINVAL, or 1 for --help (printed). */
int mp_parse_args(int argc, char **argv, struct mp_config *cfg);
/** Set one setting by name (backend, workload, size, ...), as `set KEY VALUE`. 0 or -EINVAL. */
int mp_config_set(struct mp_config *cfg, const char *key, const char *value, char *err,
	size_t errlen);
/** The names `set` knows, for the prompt's help, "|"-separated. */
extern const char mp_config_keys[];
/** Print the settings, one per line. */
void mp_config_print(const struct mp_config *cfg, FILE *f);
/** Print --help. */
void mp_usage(const char *prgname);
/** "--help" among the tool's own options (answer before EAL needs hugepages). */
bool mp_wants_help(int argc, char **argv);

/** Timed-loop budget in TSC cycles (UINT64_MAX: until stop). */
uint64_t mp_budget_cycles(const struct mp_config *cfg);

/**
 * The random state the runner gives lcore idx of a run on repetition rep:
 * what a workload draws is reproducible, and computable ahead (mixed: its
 * best-fit yardstick).
 */
static inline uint64_t
mp_lcore_seed(const struct mp_config *cfg, unsigned int rep, unsigned int idx)
{
	return cfg->seed + (uint64_t)rep * UINT64_C(0x9e3779b97f4a7c15) + idx * 7919u;
}

/* ---- workloads (workload.c registry; wl_seed.c, wl_pair.c, wl_churn.c, wl_paced.c, fwd.c) ---- */

/** Metric flags. */
#define MP_M_TABLE RTE_BIT32(0)   /**< in the printed tables and the summary */
#define MP_M_LOWER RTE_BIT32(1)   /**< lower is better (ratio: rte / backend) */
#define MP_M_HIGHER RTE_BIT32(2)  /**< higher is better (ratio: backend / rte) */
#define MP_M_SUM RTE_BIT32(3)     /**< summed over lcores (else averaged over lcores that ran) */
#define MP_M_MAX RTE_BIT32(4)     /**< maximum over lcores */
#define MP_M_OPT RTE_BIT32(5)     /**< may be missing (NaN) without failing the run */
#define MP_M_NORATIO RTE_BIT32(6) /**< no ratio to rte (percentages) */

/** Length of a metric's name. */
#define MP_NAME_LEN 64

/** One figure that a workload measures. */
struct mp_metric {
	char name[MP_NAME_LEN];
	const char *unit;
	unsigned int flags; /**< MP_M_* */
};

/** Per-lcore state of one run: cache-line aligned, written by its lcore. */
struct mp_lcore {
	unsigned int lcore_id;
	unsigned int idx; /**< 0 .. nlc - 1; 0 leads (prepare, shared state) */
	uint64_t ops;     /**< progress in the workload's unit, for the stats line */
	double out[MP_MAX_METRICS];
	int rc;
	struct mp_hist *hist; /**< latency histogram, when the workload asks for one */
	uint64_t rng;
} __rte_cache_aligned;

/** What every lcore of one run shares. */
struct mp_run {
	const struct mp_backend *be;
	const struct mp_config *cfg;
	const struct mp_metric *metrics;
	unsigned int nmetrics;
	unsigned int rep; /**< 0-based repetition */
	unsigned int nlc;
	struct mp_lcore *lc; /**< [nlc] */
	uint64_t budget;     /**< cycles per timed loop */
	uint64_t iters;      /**< units per timed loop, 0: budget */
	void *shared;        /**< set by lcore 0 before a barrier */
	int shared_rc;
	/* barrier */
	unsigned int bar_count;
	unsigned int bar_gen;
};

/** Workload flags. */
#define MP_WL_SINGLE RTE_BIT32(0)   /**< runs on the first selected lcore only */
#define MP_WL_ALL RTE_BIT32(1)      /**< runs on every lcore that can (scale) */
#define MP_WL_FIXED RTE_BIT32(2)    /**< one size per loop: rte_mempool applies */
#define MP_WL_NOALLOC RTE_BIT32(3)  /**< `none` applies */
#define MP_WL_BASELINE RTE_BIT32(4) /**< `none` is added as the baseline */
#define MP_WL_HIST RTE_BIT32(5)     /**< keeps a latency histogram per lcore */
#define MP_WL_TRIM RTE_BIT32(6)     /**< measures memory: the backend is trimmed first */

/** A workload: one row of the workload table. */
struct mp_workload {
	const char *name;   /**< name on the command line and in reports */
	const char *help;   /**< for --help: lines of at most 60 columns, "\n" between */
	unsigned int flags; /**< MP_WL_* */
	/** Title of the table, with the counts of this run. */
	void (*describe)(const struct mp_config *cfg, char *buf, size_t len);
	/** Fill the metrics for these settings; returns how many. */
	unsigned int (*metrics)(const struct mp_config *cfg, struct mp_metric *m);
	/** Whether a backend applies beyond the flags; NULL: by the flags. */
	bool (*applies)(const struct mp_config *cfg, const struct mp_backend *be, const char **why);
	/** Once per process before its first run (fwd: ports); NULL if nothing. 0 or -errno. */
	int (*setup)(const struct mp_config *cfg);
	/** At exit, if setup() ran. */
	void (*teardown)(void);
	/**
	 * Run on every lcore of the run at once; fill lc->out[] and free every
	 * block allocated. 0 or -errno.
	 */
	int (*run)(struct mp_run *r, struct mp_lcore *lc);
	/** After the repetitions: figures computed across backends (fwd: share of none). */
	void (*derive)(struct mp_results *res);
};

unsigned int mp_workload_count(void);
const struct mp_workload *mp_workload_at(unsigned int i);
const struct mp_workload *mp_workload_find(const char *name);
/** Whether be applies to wl with these settings; why is set when not. */
bool mp_workload_applies(const struct mp_workload *wl, const struct mp_config *cfg,
	const struct mp_backend *be, const char **why);

extern const struct mp_workload mp_wl_seed_grow;
extern const struct mp_workload mp_wl_granule_full;
extern const struct mp_workload mp_wl_contig;
extern const struct mp_workload mp_wl_held;
extern const struct mp_workload mp_wl_pair;
extern const struct mp_workload mp_wl_burst;
extern const struct mp_workload mp_wl_scale;
extern const struct mp_workload mp_wl_churn;
extern const struct mp_workload mp_wl_mixed;
extern const struct mp_workload mp_wl_paced;
extern const struct mp_workload mp_wl_fwd;

extern const struct mp_workload mp_wl_pipeline;
extern const struct mp_workload mp_wl_pthreads;

/* What the workloads share (wl_common.c). */

void mp_free_all(const struct mp_backend *be, void **blocks, unsigned int n);
/**
 * Alloc+free pairs of one size: at least min_pairs, then until the run's
 * budget (or iterations) is spent; ns per pair and pairs done.
 */
int mp_pair_loop(struct mp_run *r, struct mp_lcore *lc, size_t size, unsigned int align,
	uint64_t min_pairs, double *ns, uint64_t *pairs);
/** The default sizes of pair and burst, or the one of --size/--align. */
struct mp_case {
	size_t size;
	unsigned int align;
	const char *name;
};
unsigned int mp_cases(const struct mp_config *cfg, const struct mp_case *defaults,
	unsigned int ndefaults, struct mp_case *out, char names[][MP_NAME_LEN]);
/**
 * Bursts of cfg->burst allocations of one case, then their frees (single
 * calls, or the bulk API): at least min_bursts, then, if timed, until the
 * run's budget is spent; ns per block.
 */
int mp_burst_loop(struct mp_run *r, struct mp_lcore *lc, const struct mp_case *c, bool bulk,
	uint64_t min_bursts, bool timed, double *ns);
/** "2 lcores (0,1)": the lcores a workload with these flags runs on. */
void mp_lcores_str(const struct mp_config *cfg, unsigned int flags, char *buf, size_t len);
/**
 * For MP_BE_FIXED backends: lcore 0 makes the pool for this size, the others
 * wait for it (every lcore of the run calls it). 0 or -errno.
 */
int mp_prepare(struct mp_run *r, struct mp_lcore *lc, size_t size, unsigned int align,
	unsigned int max_live);
/** Every lcore of the run calls it when done with the pool; lcore 0 frees it. */
void mp_unprepare(struct mp_run *r, struct mp_lcore *lc);

/* ---- runner (runner.c) ---- */

/** Set by `stop`, SIGINT, or a failure: loops end at their next check (control.c). */
extern volatile int mp_stop;
/** Whether the main lcore is busy with the prompt (interactive mode; control.c). */
extern bool mp_main_busy;

/** The figures of one workload: value(metric, backend, rep), NaN where a run failed. */
struct mp_results {
	const struct mp_workload *wl;
	char title[320];
	struct mp_metric metrics[MP_MAX_METRICS];
	unsigned int nmetrics;
	unsigned int nbackends;
	const struct mp_backend *backends[MP_MAX_BACKENDS];
	unsigned int nskipped;
	const struct mp_backend *skipped[MP_MAX_BACKENDS];
	const char *skipped_why[MP_MAX_BACKENDS];
	unsigned int nreps;
	unsigned int nlc; /**< lcores of a run */
	unsigned int lcores[RTE_MAX_LCORE];
	unsigned int failures;
	/** The run's reference of every ratio (mp_reference()); NULL: none */
	const struct mp_backend *ref;
	bool stopped;                          /**< `stop` or SIGINT cut it short */
	double *values;                        /**< [metric][backend][rep] */
	struct mp_hist *hist[MP_MAX_BACKENDS]; /**< latency, merged over lcores and reps */
};

static inline double *
mp_value(const struct mp_results *r, unsigned int m, unsigned int b, unsigned int rep)
{
	return &r->values[((size_t)m * r->nbackends + b) * r->nreps + rep];
}

/**
 * Run every selected workload (tables printed as each ends). Fills
 * res[0 .. *nres - 1]; the caller prints the summary (mp_report_summary()).
 */
int mp_run_all(const struct mp_config *cfg, struct mp_results *res, unsigned int *nres);
/** Free what mp_run_all() allocated. */
void mp_results_free(struct mp_results *res, unsigned int nres);
/** Teardown of every workload that was set up (at exit). */
void mp_workloads_teardown(void);

/** Another round of a timed loop? n units done, elapsed cycles. */
static inline bool
mp_more(const struct mp_run *r, uint64_t n, uint64_t elapsed)
{
	if (unlikely(__atomic_load_n(&mp_stop, __ATOMIC_RELAXED) != 0))
		return false;
	return r->iters != 0 ? n < r->iters : elapsed < r->budget;
}

/** Publish progress for the stats line. */
static inline void
mp_progress(struct mp_lcore *lc, uint64_t ops)
{
	__atomic_store_n(&lc->ops, ops, __ATOMIC_RELAXED);
}

/* ---- what the threads share (control.c) ---- */

/** Wait until every lcore of the run is here. */
void mp_barrier(struct mp_run *r);

/** What runs now, for the stats line and `show stats`. */
struct mp_status {
	bool running;
	const char *workload;
	const char *backend;
	const struct mp_backend *be;
	unsigned int rep, nreps;
	unsigned int nlc;
	struct mp_lcore *lc;
	uint64_t start_tsc; /**< of the whole run */
	uint64_t run_tsc;   /**< of this run */
	uint64_t seq;       /**< runs so far */
};
void mp_status_get(struct mp_status *st);
/** The whole run starts now (the stats line's clock). */
void mp_status_begin(void);
/** A run of a workload on a backend starts (workload non-NULL) or ends (NULL). */
void mp_status_set(const char *workload, const struct mp_backend *be, unsigned int rep,
	unsigned int nreps, unsigned int nlc, struct mp_lcore *lc);

/** The lcores a run may use: the selected ones; for MP_WL_ALL, every one that can. */
unsigned int mp_run_lcores(const struct mp_config *cfg, unsigned int flags, unsigned int *out);

/** Held by a backend while it (re)initialises or makes a pool: mp_backend_peek() waits. */
void mp_backend_lock(void);
void mp_backend_unlock(void);
/** The reader's side (mp_backend_peek()): false while a backend holds the lock. */
bool mp_backend_trylock_read(void);
void mp_backend_unlock_read(void);

/* ---- stats line (stats.c) ---- */

/** Start the thread that prints a stats line every period seconds; 0 or -errno. */
int mp_stats_start(unsigned int period);
void mp_stats_stop(void);
/** Print the stats of what runs now (`show stats`). */
void mp_stats_show(FILE *f);
/** Print the heap of each backend of cfg (`show heap`). */
void mp_heap_show(const struct mp_config *cfg, FILE *f);

/* ---- latency histograms (hist.c) ---- */

/** Buckets: exact below 64 cycles, then 32 per power of two up to 2^44. */
#define MP_HIST_SUB 32u
#define MP_HIST_BUCKETS (64u + (44u - 6u) * MP_HIST_SUB)

struct mp_hist {
	uint64_t n;
	uint64_t max;
	uint64_t count[MP_HIST_BUCKETS];
};

static inline unsigned int
mp_hist_bucket(uint64_t v)
{
	unsigned int e;

	if (v < 64)
		return (unsigned int)v;
	e = 63u - (unsigned int)__builtin_clzll(v);
	if (e >= 44)
		return MP_HIST_BUCKETS - 1;
	return 64u + (e - 6u) * MP_HIST_SUB + (unsigned int)((v >> (e - 5)) & (MP_HIST_SUB - 1));
}

static inline void
mp_hist_add(struct mp_hist *h, uint64_t v)
{
	h->count[mp_hist_bucket(v)]++;
	h->n++;
	if (unlikely(v > h->max))
		h->max = v;
}

void mp_hist_reset(struct mp_hist *h);
void mp_hist_merge(struct mp_hist *dst, const struct mp_hist *src);
/** Value (cycles) below which a fraction q of the samples lie (upper bucket edge). */
double mp_hist_quantile(const struct mp_hist *h, double q);
/** Upper edge of bucket i, in cycles. */
double mp_hist_bucket_top(unsigned int i);

/* ---- report (report.c) ---- */

/** Median, minimum and maximum of the repetitions that did not fail. */
struct mp_summary {
	double median, min, max;
	unsigned int n; /**< repetitions counted; 0 if all failed */
};

void mp_summarise(const struct mp_results *r, unsigned int m, unsigned int b, struct mp_summary *s);
/**
 * The reference of every ratio of a run with these settings, the same for
 * its tables, summary, JSON and CSV: rte when selected; else the first
 * selected backend that every selected workload runs; else the first
 * selected; never `none` (NULL when only it is).
 */
const struct mp_backend *mp_reference(const struct mp_config *cfg);
/** Print the table of one workload to stdout. */
void mp_report_table(const struct mp_results *r);
/** Print the summary of every workload: medians and the ratio to rte. */
void mp_report_summary(const struct mp_results *res, unsigned int nres);

/** Description of the machine and the run, for JSON and CSV. */
struct mp_env {
	const char *memory;     /**< "hugepages" or "anonymous" */
	uint64_t hugepage_size; /**< bytes, 0 without hugepages */
	uint64_t eal_heap_mib;  /**< rte_malloc heap at start, all sockets */
	uint64_t tsc_hz;
	unsigned int main_lcore;
	const char *lacking; /**< backends not usable here, with reasons */
};

/** Write every figure to path as JSON (format: doc/malloc_perf.md). 0 or -errno. */
int mp_report_json(const char *path, const struct mp_env *env, const struct mp_config *cfg,
	const struct mp_results *res, unsigned int nres);
/** Write the medians as CSV, one row per workload, metric and backend. 0 or -errno. */
int mp_report_csv(const char *path, const struct mp_results *res, unsigned int nres);

/* ---- interactive prompt (cli.c) ---- */

/**
 * Run the prompt on stdin until quit or end of input. 0, -errno, or how many
 * runs failed (or could not write their JSON or CSV file).
 */
int mp_cli_run(struct mp_config *cfg, const struct mp_env *env);

/* ---- small helpers (util.c, and inline) ---- */

/** Array of n NULL pointers, written now so that no page fault lands in a timed loop. */
void **mp_ptr_array(unsigned int n);
/** Write one byte in each 4 KiB page of a block (so that RSS counts it). */
void mp_touch(void *p, size_t size);
/** Random size in [lo, hi], uniform in log2. */
size_t mp_rand_size(uint64_t *rng, size_t lo, size_t hi);
/** Size in B, KiB, MiB. */
void mp_size_str(char *buf, size_t len, size_t size);
/** Name of a size and alignment: "64 B", "4 KiB align 4 KiB". */
void mp_case_name(char *buf, size_t len, size_t size, unsigned int align);
/** Median of n values (sorts them). */
double mp_median(double *v, unsigned int n);

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
