/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * malloc_perf: EAL arguments, "--", then its own options (options.c). Runs
 * the selected workloads on the selected backends with the stats line
 * (runner.c, stats.c) and prints the tables (report.c), or gives a prompt
 * (-i, cli.c).
 */

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_memory.h>

#include "malloc_perf.h"

#define TLS_TUNABLE "glibc.rtld.optional_static_tls=16384"

/*
 * jemalloc's initial-exec TLS does not fit in what glibc keeps for dlopen:
 * run again with more (once; the tunable is read at start).
 */
static void
reexec_for_tls(char **argv)
{
#ifdef MP_JEMALLOC_SO
	const char *t = getenv("GLIBC_TUNABLES");
	char buf[1024];

	if (getenv("MP_PERF_REEXEC") != NULL || (t != NULL && strstr(t, "optional_static_tls")))
		return;
	snprintf(buf, sizeof(buf), "%s%s%s", t != NULL ? t : "", t != NULL ? ":" : "", TLS_TUNABLE);
	setenv("GLIBC_TUNABLES", buf, 1);
	setenv("MP_PERF_REEXEC", "1", 1);
	fflush(NULL);
	execv("/proc/self/exe", argv);
	/* no exec: jemalloc will say why it cannot load */
#else
	RTE_SET_USED(argv);
#endif
}

static void
usage_hook(const char *prgname)
{
	printf("\n");
	mp_usage(prgname);
}

static void
on_signal(int sig)
{
	RTE_SET_USED(sig);
	if (__atomic_exchange_n(&mp_stop, 1, __ATOMIC_RELAXED) != 0)
		_exit(MP_EXIT_INTERRUPTED);
}

static int
first_page_size(const struct rte_memseg_list *msl, void *arg)
{
	if (msl->memseg_arr.count == 0)
		return 0;
	*(uint64_t *)arg = msl->page_sz;
	return 1;
}

/* Say which memory this run is on; mem_given: --socket-mem or -m was given. */
static void
describe_memory(struct mp_env *env, bool mem_given)
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
	env->main_lcore = rte_get_main_lcore();
	if (!rte_eal_has_hugepages()) {
		env->memory = "anonymous";
		printf("memory: no hugepages: running on anonymous memory (EAL --no-huge), %" PRIu64
		       " MiB\n",
			env->eal_heap_mib);
		return;
	}
	env->memory = "hugepages";
	rte_memseg_list_walk(first_page_size, &env->hugepage_size);
	printf("memory: hugepages of %" PRIu64 " KiB, EAL heap %" PRIu64
	       " MiB at start, %u socket(s)\n",
		env->hugepage_size >> 10, env->eal_heap_mib, rte_socket_count());
	if (env->eal_heap_mib >= 256)
		return;
	if (mem_given)
		printf("note: EAL heap of %" PRIu64 " MiB at start (--socket-mem or -m): past it, "
		       "EAL allocates hugepages on demand and rte_malloc timings include page "
		       "allocation\n",
			env->eal_heap_mib);
	else
		printf("note: EAL allocates its hugepages on demand (no --socket-mem or -m): "
		       "rte_malloc timings include page allocation\n");
}

/* Whether EAL's arguments reserve memory up front (before EAL reorders argv). */
static bool
memory_given(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strncmp(argv[i], "-m", 2) == 0 || strcmp(argv[i], "--socket-mem") == 0 ||
			strncmp(argv[i], "--socket-mem=", 13) == 0)
			return true;
	return false;
}

static void
banner(const struct mp_config *cfg)
{
	unsigned int i;
	const char *why;

	printf("TSC %.3f GHz, main lcore %u, workers on lcore%s", rte_get_tsc_hz() / 1e9,
		rte_get_main_lcore(), cfg->nlcores > 1 ? "s" : "");
	for (i = 0; i < cfg->nlcores; i++)
		printf("%s%u", i ? "," : " ", cfg->lcores[i]);
	printf(", %s counts, %u repetition(s)\n", cfg->quick ? "quick" : "full", cfg->repeat);
	for (i = 0; i < cfg->nbackends; i++) {
		const struct mp_backend *be = cfg->backends[i];

		printf("backend %-10s %s; memory: %s\n", be->name, be->desc,
			be->source != NULL ? be->source() : "-");
	}
	for (i = 0; i < mp_backend_count(); i++)
		if (mp_backend_lacking(mp_backend_at(i), &why))
			printf("backend %-10s lacking: %s\n", mp_backend_at(i)->name, why);
	fflush(stdout);
}

int
main(int argc, char **argv)
{
	static struct mp_results results[MP_MAX_WORKLOADS];
	struct mp_env env = {0};
	struct mp_config cfg;
	unsigned int nres = 0;
	int ret, status = EXIT_SUCCESS;
	bool mem_given;

	if (mp_wants_help(argc, argv)) {
		mp_usage(argv[0]);
		return EXIT_SUCCESS;
	}
	reexec_for_tls(argv);
	mem_given = memory_given(argc, argv);
	rte_set_application_usage_hook(usage_hook);
	ret = rte_eal_init(argc, argv);
	if (ret < 0)
		rte_exit(EXIT_FAILURE, "cannot initialise EAL: %s\n", rte_strerror(rte_errno));
	argc -= ret;
	argv += ret;
	ret = mp_parse_args(argc, argv, &cfg);
	if (ret != 0) {
		rte_eal_cleanup();
		return ret > 0 ? EXIT_SUCCESS : 2;
	}
	describe_memory(&env, mem_given);
	banner(&cfg);
	if (cfg.interactive) {
		/* as in batch mode: a failed run or a file not written fails the process */
		if (mp_cli_run(&cfg, &env) != 0)
			status = EXIT_FAILURE;
		goto out;
	}
	signal(SIGINT, on_signal);
	if (cfg.stats_period != 0)
		mp_stats_start(cfg.stats_period);
	if (mp_run_all(&cfg, results, &nres) != 0)
		status = EXIT_FAILURE;
	mp_stats_stop();
	if (nres > 0)
		mp_report_summary(results, nres);
	if (cfg.json[0] != '\0') {
		ret = mp_report_json(cfg.json, &env, &cfg, results, nres);
		if (ret != 0) {
			fprintf(stderr, "cannot write %s: %s\n", cfg.json, strerror(-ret));
			status = EXIT_FAILURE;
		} else {
			printf("\nfigures written to %s\n", cfg.json);
		}
	}
	if (cfg.csv[0] != '\0') {
		ret = mp_report_csv(cfg.csv, results, nres);
		if (ret != 0) {
			fprintf(stderr, "cannot write %s: %s\n", cfg.csv, strerror(-ret));
			status = EXIT_FAILURE;
		} else {
			printf("medians written to %s\n", cfg.csv);
		}
	}
	/* a script that interrupted the run must not take it for a whole one */
	if (mp_stop) {
		printf("stopped (SIGINT): the figures above are partial\n");
		if (status == EXIT_SUCCESS)
			status = MP_EXIT_INTERRUPTED;
	}
	mp_results_free(results, nres);
out:
	mp_workloads_teardown();
	mp_backend_fini_all();
	rte_eal_cleanup();
	return status;
}
