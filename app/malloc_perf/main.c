/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * malloc_perf: EAL arguments, "--", then its own options. Runs every selected
 * workload on every selected backend, repetition by repetition, in this
 * process on the main lcore, and prints one table per workload.
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_memory.h>

#include "malloc_perf.h"

/* Most backends or workloads one run can select. */
#define MP_MAX_ROWS 16

struct mp_opts {
	const struct mp_backend *backends[MP_MAX_ROWS];
	unsigned int nbackends;
	const struct mp_workload *workloads[MP_MAX_ROWS];
	unsigned int nworkloads;
	unsigned int repeat;
	const char *json;
	bool quick;
	bool check;
};

static void
usage(const char *prgname)
{
	unsigned int i;

	printf("Usage: %s [EAL options] -- [options]\n"
	       "\n"
	       "Compare allocators on the workloads below, in one process, one backend after\n"
	       "the other: each repetition runs every backend (the order rotates), and every\n"
	       "block is freed between backends. The heap state of each backend persists\n"
	       "across runs, as in a long-lived application (rte_malloc's included).\n"
	       "Tables give the median of the repetitions [min, max] and the ratio to hpm.\n"
	       "\n"
	       "Options:\n"
	       "  --backend LIST   comma-separated backends (default: all)\n"
	       "  --workload LIST  comma-separated workloads (default: all)\n"
	       "  --repeat N       repetitions, 1-%u (default 5)\n"
	       "  --json FILE      write every figure (each repetition and the medians) to FILE\n"
	       "  --quick          small counts and short timed loops (CI)\n"
	       "  --check          after every run, check the heap (hpm) and that no block\n"
	       "                   is left (the backend's alloc_count)\n"
	       "  --help           this text\n"
	       "\n"
	       "Backends:\n",
		prgname, MP_MAX_REPEAT);
	for (i = 0; i < mp_nbackends; i++)
		printf("  %-14s %s\n", mp_backends[i].name, mp_backends[i].desc);
	printf("\nWorkloads:\n");
	for (i = 0; i < mp_nworkloads; i++) {
		const char *h = mp_workloads[i].help, *nl;

		printf("  %-14s ", mp_workloads[i].name);
		while ((nl = strchr(h, '\n')) != NULL) {
			printf("%.*s\n  %-14s ", (int)(nl - h), h, "");
			h = nl + 1;
		}
		printf("%s\n", h);
	}
	printf("\n"
	       "Memory: give EAL its hugepages up front with --socket-mem (or -m): EAL's dynamic\n"
	       "memory allocation costs about 1.7 ms per 2 MiB page on a VM (and a hugepage\n"
	       "fault about 140 us), which would then be timed as part of rte_malloc. With EAL\n"
	       "--no-huge both backends run on anonymous memory, and the tool says so.\n"
	       "\n"
	       "Example:\n"
	       "  %s -l 0 --no-pci --socket-mem 1024 -- --repeat 5 --json perf.json\n"
	       "  %s -l 0 --no-pci --no-huge -m 2048 -- --quick\n",
		prgname, prgname);
}

static void
usage_hook(const char *prgname)
{
	printf("\n");
	usage(prgname);
}

/* "--help" among the tool's own options: answer before EAL needs hugepages. */
static bool
wants_help(int argc, char **argv)
{
	bool own = false;
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			own = true;
		else if (own && (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0))
			return true;
	}
	return false;
}

/* Look each name of a comma-separated list up in a table of rows with a name. */
static int
parse_list(const char *arg, const void *table, size_t row_size, unsigned int nrows,
	const void **out, unsigned int max, unsigned int *n, const char *what)
{
	char *copy = strdup(arg), *save = NULL, *tok;
	unsigned int i;
	int rc = 0;

	if (copy == NULL)
		return -ENOMEM;
	*n = 0;
	for (tok = strtok_r(copy, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		const void *row = NULL;

		for (i = 0; i < nrows; i++) {
			const void *r = (const char *)table + i * row_size;

			/* both tables start with their name */
			if (strcmp(*(const char *const *)r, tok) == 0)
				row = r;
		}
		if (row == NULL) {
			fprintf(stderr, "unknown %s '%s' (see --help)\n", what, tok);
			rc = -EINVAL;
			break;
		}
		for (i = 0; i < *n && out[i] != row; i++)
			;
		if (i == *n && *n < max)
			out[(*n)++] = row;
	}
	if (rc == 0 && *n == 0) {
		fprintf(stderr, "empty %s list\n", what);
		rc = -EINVAL;
	}
	free(copy);
	return rc;
}

static int
parse_args(int argc, char **argv, struct mp_opts *o)
{
	static const struct option longopts[] = {
		{"backend", required_argument, NULL, 'b'},
		{"workload", required_argument, NULL, 'w'},
		{"repeat", required_argument, NULL, 'r'},
		{"json", required_argument, NULL, 'j'},
		{"quick", no_argument, NULL, 'q'},
		{"check", no_argument, NULL, 'c'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	unsigned int i;
	char *end;
	long v;
	int c;

	memset(o, 0, sizeof(*o));
	o->repeat = 5;
	for (i = 0; i < mp_nbackends && i < RTE_DIM(o->backends); i++)
		o->backends[o->nbackends++] = &mp_backends[i];
	for (i = 0; i < mp_nworkloads && i < RTE_DIM(o->workloads); i++)
		o->workloads[o->nworkloads++] = &mp_workloads[i];
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'b':
			if (parse_list(optarg, mp_backends, sizeof(mp_backends[0]), mp_nbackends,
				    (const void **)o->backends, RTE_DIM(o->backends), &o->nbackends,
				    "backend") != 0)
				return -EINVAL;
			break;
		case 'w':
			if (parse_list(optarg, mp_workloads, sizeof(mp_workloads[0]), mp_nworkloads,
				    (const void **)o->workloads, RTE_DIM(o->workloads),
				    &o->nworkloads, "workload") != 0)
				return -EINVAL;
			break;
		case 'r':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno != 0 || *end != '\0' || v < 1 || v > (long)MP_MAX_REPEAT) {
				fprintf(stderr, "--repeat: a number from 1 to %u\n", MP_MAX_REPEAT);
				return -EINVAL;
			}
			o->repeat = v;
			break;
		case 'j':
			o->json = optarg;
			break;
		case 'q':
			o->quick = true;
			break;
		case 'c':
			o->check = true;
			break;
		case 'h':
			usage(argv[0]);
			exit(EXIT_SUCCESS);
		default:
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "unexpected argument '%s' (see --help)\n", argv[optind]);
		return -EINVAL;
	}
	return 0;
}

static void
set_params(struct mp_params *p, bool quick)
{
	p->quick = quick;
	p->grow_per_round = quick ? 200 : 2000;
	p->gran_blocks = quick ? 2048 : 16384;
	p->gran_free = quick ? 173 : 1384;
	p->held_4k = quick ? 2000 : 20000;
	p->held_64k = quick ? 200 : 2000;
	p->budget_ms = quick ? 10 : 100;
	p->seed = UINT64_C(0x9e3779b97f4a7c15);
}

static int
first_page_size(const struct rte_memseg_list *msl, void *arg)
{
	if (msl->memseg_arr.count == 0)
		return 0;
	*(uint64_t *)arg = msl->page_sz;
	return 1;
}

/* Say which memory this run is on. */
static void
describe_memory(struct mp_env *env)
{
	uint64_t heap = 0;
	unsigned int i;

	for (i = 0; i < rte_socket_count(); i++) {
		struct rte_malloc_socket_stats st;

		if (rte_malloc_get_socket_stats(rte_socket_id_by_idx(i), &st) == 0)
			heap += st.heap_totalsz_bytes;
	}
	env->eal_heap_mib = heap >> 20;
	env->tsc_hz = rte_get_tsc_hz();
	if (!rte_eal_has_hugepages()) {
		env->memory = "anonymous";
		printf("no hugepages: running on anonymous memory (EAL --no-huge), %" PRIu64
		       " MiB\n",
			env->eal_heap_mib);
		return;
	}
	env->memory = "hugepages";
	rte_memseg_list_walk(first_page_size, &env->hugepage_size);
	printf("memory: hugepages of %" PRIu64 " KiB, EAL heap %" PRIu64
	       " MiB at start, %u socket(s)\n",
		env->hugepage_size >> 10, env->eal_heap_mib, rte_socket_count());
	if (env->eal_heap_mib < 256)
		printf("note: EAL allocates its hugepages on demand (no --socket-mem): rte_malloc "
		       "timings include page allocation\n");
}

/* Live blocks of a backend, all sockets. */
static uint64_t
live_blocks(const struct mp_backend *be)
{
	uint64_t n = 0;
	unsigned int i;

	for (i = 0; i < rte_socket_count(); i++) {
		struct rte_malloc_socket_stats st;

		if (be->socket_stats(rte_socket_id_by_idx(i), &st) == 0)
			n += st.alloc_count;
	}
	return n;
}

/* --check: the heap is consistent and every block of the run was freed. */
static int
check_after(const struct mp_backend *be, uint64_t live_before)
{
	uint64_t live = live_blocks(be);

	if (be->check != NULL && be->check() != 0) {
		fprintf(stderr, " (heap check failed)");
		return -EFAULT;
	}
	if (live != live_before) {
		fprintf(stderr, " (%" PRIu64 " live blocks before the run, %" PRIu64 " after)",
			live_before, live);
		return -EFAULT;
	}
	return 0;
}

static int
run_workload(const struct mp_workload *wl, const struct mp_opts *o, const struct mp_params *p,
	struct mp_results *res)
{
	unsigned int rep, k, m, failures = 0;
	size_t nvalues = (size_t)wl->nmetrics * o->nbackends * o->repeat, i;

	res->wl = wl;
	res->nbackends = o->nbackends;
	res->backends = (const struct mp_backend **)(uintptr_t)o->backends;
	res->nreps = o->repeat;
	res->values = malloc(sizeof(*res->values) * nvalues);
	if (res->values == NULL || wl->nmetrics > MP_MAX_METRICS)
		return -ENOMEM;
	for (i = 0; i < nvalues; i++)
		res->values[i] = NAN;
	wl->describe(p, res->title, sizeof(res->title));
	for (rep = 0; rep < o->repeat; rep++) {
		fprintf(stderr, "%s: repetition %u/%u:", wl->name, rep + 1, o->repeat);
		for (k = 0; k < o->nbackends; k++) {
			/* rotate the order so that no backend always runs first */
			unsigned int b = (k + rep) % o->nbackends;
			struct mp_run run = {.be = o->backends[b], .params = p, .rep = rep};
			uint64_t live = o->check ? live_blocks(run.be) : 0;
			double out[MP_MAX_METRICS];
			int rc;

			fprintf(stderr, " %s", run.be->name);
			for (m = 0; m < wl->nmetrics; m++)
				out[m] = NAN;
			rc = wl->run(&run, out);
			if (rc == 0 && o->check)
				rc = check_after(run.be, live);
			if (rc != 0) {
				fprintf(stderr, " (failed: %s)", strerror(-rc));
				failures++;
				continue;
			}
			for (m = 0; m < wl->nmetrics; m++)
				*mp_value(res, m, b, rep) = out[m];
		}
		fprintf(stderr, "\n");
	}
	mp_report_table(res);
	return failures ? -EIO : 0;
}

int
main(int argc, char **argv)
{
	static struct mp_results results[MP_MAX_ROWS];
	struct mp_env env = {0};
	struct mp_params params;
	struct mp_opts opts;
	unsigned int i, ninit = 0;
	int ret, status = EXIT_SUCCESS;

	if (wants_help(argc, argv)) {
		usage(argv[0]);
		return EXIT_SUCCESS;
	}
	rte_set_application_usage_hook(usage_hook);
	ret = rte_eal_init(argc, argv);
	if (ret < 0)
		rte_exit(EXIT_FAILURE, "cannot initialise EAL: %s\n", rte_strerror(rte_errno));
	argc -= ret;
	argv += ret;
	if (parse_args(argc, argv, &opts) != 0) {
		rte_eal_cleanup();
		return 2;
	}
	set_params(&params, opts.quick);
	env.repeat = opts.repeat;
	env.quick = opts.quick;
	describe_memory(&env);
	printf("TSC %.3f GHz, lcore %u, %s counts, %u repetition(s)\n", rte_get_tsc_hz() / 1e9,
		rte_lcore_id(), opts.quick ? "quick" : "full", opts.repeat);
	for (ninit = 0; ninit < opts.nbackends; ninit++) {
		const struct mp_backend *be = opts.backends[ninit];

		if (be->init != NULL && be->init() != 0) {
			fprintf(stderr, "backend %s: cannot initialise\n", be->name);
			status = EXIT_FAILURE;
			goto out;
		}
		printf("backend %s: %s; memory: %s\n", be->name, be->desc,
			be->source != NULL ? be->source() : "EAL heap");
	}
	fflush(stdout);
	for (i = 0; i < opts.nworkloads; i++)
		if (run_workload(opts.workloads[i], &opts, &params, &results[i]) != 0)
			status = EXIT_FAILURE;
	if (opts.json != NULL) {
		ret = mp_report_json(opts.json, &env, results, opts.nworkloads);
		if (ret != 0) {
			fprintf(stderr, "cannot write %s: %s\n", opts.json, strerror(-ret));
			status = EXIT_FAILURE;
		} else {
			printf("\nfigures written to %s\n", opts.json);
		}
	}
out:
	for (i = 0; i < opts.nworkloads; i++)
		free(results[i].values);
	while (ninit-- > 0)
		if (opts.backends[ninit]->fini != NULL)
			opts.backends[ninit]->fini();
	rte_eal_cleanup();
	return status;
}
