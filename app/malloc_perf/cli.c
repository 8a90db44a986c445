/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The interactive prompt (-i), on DPDK's cmdline library as testpmd's:
 * start, stop, wait, show stats|heap|config, set KEY VALUE, help, quit.
 * The prompt runs on the main lcore; `start` runs the settings' workloads in
 * a control thread that launches the workers on the worker lcores, and
 * returns once they run. With duration 0 (the default here) each timed loop
 * runs until `stop`.
 */

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmdline.h>
#include <cmdline_parse.h>
#include <cmdline_parse_string.h>
#include <cmdline_socket.h>
#include <rte_common.h>
#include <rte_lcore.h>

#include "hpm_compat.h"
#include "malloc_perf.h"

static struct {
	struct mp_config *cfg;
	const struct mp_env *env;
	pthread_t tid;
	bool started;          /* a runner thread exists (joined or not) */
	volatile int finished; /* it has returned */
	unsigned int failures; /* runs that failed, files not written: the exit status */
	struct mp_config run_cfg;
} cli;

static struct mp_results results[MP_MAX_WORKLOADS];

static void *
runner_main(void *arg)
{
	struct mp_config *cfg = arg;
	unsigned int nres = 0;
	int rc, wrc;

	rc = mp_run_all(cfg, results, &nres);
	if (nres > 0)
		mp_report_summary(results, nres);
	if (cfg->json[0] != '\0' && nres > 0) {
		wrc = mp_report_json(cfg->json, cli.env, cfg, results, nres);
		if (wrc == 0)
			printf("figures written to %s\n", cfg->json);
		else
			printf("cannot write %s: %s\n", cfg->json, strerror(-wrc));
		rc = rc != 0 ? rc : wrc;
	}
	if (cfg->csv[0] != '\0' && nres > 0) {
		wrc = mp_report_csv(cfg->csv, results, nres);
		if (wrc == 0)
			printf("medians written to %s\n", cfg->csv);
		else
			printf("cannot write %s: %s\n", cfg->csv, strerror(-wrc));
		rc = rc != 0 ? rc : wrc;
	}
	/* read by the prompt's thread after it joins this one */
	if (rc != 0)
		cli.failures++;
	printf("run %s\n", rc == 0 ? "done" : "done, with failures (see above)");
	fflush(stdout);
	mp_results_free(results, nres);
	__atomic_store_n(&cli.finished, 1, __ATOMIC_RELEASE);
	return NULL;
}

static bool
running(void)
{
	return cli.started && !__atomic_load_n(&cli.finished, __ATOMIC_ACQUIRE);
}

static void
join_runner(void)
{
	if (!cli.started)
		return;
	pthread_join(cli.tid, NULL);
	cli.started = false;
}

/* start */

struct cmd_word {
	cmdline_fixed_string_t word;
};

static void
cmd_start_parsed(void *res, struct cmdline *cl, void *data)
{
	struct timespec ts = {0, 1000 * 1000};
	struct mp_status st;
	unsigned int i;
	int rc;

	RTE_SET_USED(res);
	RTE_SET_USED(cl);
	RTE_SET_USED(data);
	if (running()) {
		printf("already running: stop or wait first\n");
		return;
	}
	join_runner();
	cli.run_cfg = *cli.cfg;
	__atomic_store_n(&mp_stop, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&cli.finished, 0, __ATOMIC_RELAXED);
	rc = hpm_ctrl_thread_create(&cli.tid, "mp-run", runner_main, &cli.run_cfg);
	if (rc != 0) {
		printf("cannot start: %s\n", strerror(rc));
		cli.failures++;
		return;
	}
	cli.started = true;
	printf("started:");
	for (i = 0; i < cli.run_cfg.nworkloads; i++)
		printf("%s%s", i ? "," : " ", cli.run_cfg.workloads[i]->name);
	printf(" on");
	for (i = 0; i < cli.run_cfg.nbackends; i++)
		printf("%s%s", i ? "," : " ", cli.run_cfg.backends[i]->name);
	printf("%s\n",
		cli.run_cfg.duration > 0 || cli.run_cfg.iterations > 0 ? "" : " (until stop)");
	fflush(stdout);
	/* return once the workers run, so that a `stop` that follows stops them */
	for (i = 0; i < 30000 && running(); i++) {
		mp_status_get(&st);
		if (st.running)
			break;
		nanosleep(&ts, NULL);
	}
}

static cmdline_parse_token_string_t cmd_start_tok =
	TOKEN_STRING_INITIALIZER(struct cmd_word, word, "start");

static cmdline_parse_inst_t cmd_start = {
	.f = cmd_start_parsed,
	.help_str = "start: run the workloads of the settings on their backends",
	.tokens = {(void *)&cmd_start_tok, NULL},
};

/* stop */

static void
cmd_stop_parsed(void *res, struct cmdline *cl, void *data)
{
	RTE_SET_USED(res);
	RTE_SET_USED(cl);
	RTE_SET_USED(data);
	if (!running()) {
		printf("not running\n");
		join_runner();
		return;
	}
	__atomic_store_n(&mp_stop, 1, __ATOMIC_RELAXED);
	join_runner();
	printf("stopped\n");
	fflush(stdout);
}

static cmdline_parse_token_string_t cmd_stop_tok =
	TOKEN_STRING_INITIALIZER(struct cmd_word, word, "stop");

static cmdline_parse_inst_t cmd_stop = {
	.f = cmd_stop_parsed,
	.help_str = "stop: end the run (the loop that runs ends now; its figures count)",
	.tokens = {(void *)&cmd_stop_tok, NULL},
};

/* wait */

static void
cmd_wait_parsed(void *res, struct cmdline *cl, void *data)
{
	RTE_SET_USED(res);
	RTE_SET_USED(cl);
	RTE_SET_USED(data);
	if (!cli.started) {
		printf("not running\n");
		return;
	}
	join_runner();
	fflush(stdout);
}

static cmdline_parse_token_string_t cmd_wait_tok =
	TOKEN_STRING_INITIALIZER(struct cmd_word, word, "wait");

static cmdline_parse_inst_t cmd_wait = {
	.f = cmd_wait_parsed,
	.help_str = "wait: wait until the run ends (for scripts)",
	.tokens = {(void *)&cmd_wait_tok, NULL},
};

/* show stats|heap|config */

struct cmd_show {
	cmdline_fixed_string_t show;
	cmdline_fixed_string_t what;
};

static void
cmd_show_parsed(void *res, struct cmdline *cl, void *data)
{
	struct cmd_show *r = res;

	RTE_SET_USED(cl);
	RTE_SET_USED(data);
	if (strcmp(r->what, "stats") == 0)
		mp_stats_show(stdout);
	else if (strcmp(r->what, "heap") == 0)
		mp_heap_show(cli.cfg, stdout);
	else
		mp_config_print(cli.cfg, stdout);
	fflush(stdout);
}

static cmdline_parse_token_string_t cmd_show_show =
	TOKEN_STRING_INITIALIZER(struct cmd_show, show, "show");
static cmdline_parse_token_string_t cmd_show_what =
	TOKEN_STRING_INITIALIZER(struct cmd_show, what, "stats#heap#config");

static cmdline_parse_inst_t cmd_show = {
	.f = cmd_show_parsed,
	.help_str = "show stats|heap|config: the run now, each backend's memory, the settings",
	.tokens = {(void *)&cmd_show_show, (void *)&cmd_show_what, NULL},
};

/* set KEY VALUE */

struct cmd_set {
	cmdline_fixed_string_t set;
	cmdline_fixed_string_t key;
	cmdline_fixed_string_t value;
};

static void
cmd_set_parsed(void *res, struct cmdline *cl, void *data)
{
	struct cmd_set *r = res;
	struct mp_config tmp;
	char err[256];

	RTE_SET_USED(cl);
	RTE_SET_USED(data);
	if (running()) {
		printf("running: stop or wait first\n");
		return;
	}
	tmp = *cli.cfg;
	if (mp_config_set(&tmp, r->key, r->value, err, sizeof(err)) != 0) {
		printf("set %s: %s\n", r->key, err);
		return;
	}
	*cli.cfg = tmp;
	printf("%s = %s\n", r->key, r->value);
	fflush(stdout);
}

static cmdline_parse_token_string_t cmd_set_set =
	TOKEN_STRING_INITIALIZER(struct cmd_set, set, "set");
static cmdline_parse_token_string_t cmd_set_key = TOKEN_STRING_INITIALIZER(struct cmd_set, key,
	"backend#workload#lcores#size#align#burst#rate#duration#iterations#repeat#pkt-len#seed#"
	"json#csv");
static cmdline_parse_token_string_t cmd_set_value =
	TOKEN_STRING_INITIALIZER(struct cmd_set, value, NULL);

static cmdline_parse_inst_t cmd_set = {
	.f = cmd_set_parsed,
	.help_str = "set backend|workload|lcores|size|align|burst|rate|duration|iterations|"
		    "repeat|pkt-len|seed|json|csv VALUE",
	.tokens = {(void *)&cmd_set_set, (void *)&cmd_set_key, (void *)&cmd_set_value, NULL},
};

/* help */

static void
cmd_help_parsed(void *res, struct cmdline *cl, void *data)
{
	unsigned int i;

	RTE_SET_USED(res);
	RTE_SET_USED(cl);
	RTE_SET_USED(data);
	printf("commands:\n"
	       "  start                 run the workloads of the settings on their backends\n"
	       "  stop                  end the run (the loop that runs ends now and counts)\n"
	       "  wait                  wait until the run ends\n"
	       "  show stats            the run now: ops/s per lcore, heap, cache hit rate\n"
	       "  show heap             each backend's memory and cache counters\n"
	       "  show config           the settings\n"
	       "  set KEY VALUE         KEY: %s\n"
	       "                        (duration 0: each timed loop runs until stop)\n"
	       "  help                  this text\n"
	       "  quit                  stop and leave\n"
	       "backends:",
		mp_config_keys);
	for (i = 0; i < mp_backend_count(); i++)
		printf(" %s", mp_backend_at(i)->name);
	printf("\nworkloads:");
	for (i = 0; i < mp_workload_count(); i++)
		printf(" %s", mp_workload_at(i)->name);
	printf("\n");
	fflush(stdout);
}

static cmdline_parse_token_string_t cmd_help_tok =
	TOKEN_STRING_INITIALIZER(struct cmd_word, word, "help");

static cmdline_parse_inst_t cmd_help = {
	.f = cmd_help_parsed,
	.help_str = "help: the commands",
	.tokens = {(void *)&cmd_help_tok, NULL},
};

/* quit */

static void
cmd_quit_parsed(void *res, struct cmdline *cl, void *data)
{
	RTE_SET_USED(res);
	RTE_SET_USED(data);
	if (running())
		__atomic_store_n(&mp_stop, 1, __ATOMIC_RELAXED);
	join_runner();
	cmdline_quit(cl);
}

static cmdline_parse_token_string_t cmd_quit_tok =
	TOKEN_STRING_INITIALIZER(struct cmd_word, word, "quit");

static cmdline_parse_inst_t cmd_quit = {
	.f = cmd_quit_parsed,
	.help_str = "quit: stop and leave",
	.tokens = {(void *)&cmd_quit_tok, NULL},
};

static cmdline_parse_ctx_t main_ctx[] = {
	(cmdline_parse_inst_t *)&cmd_start,
	(cmdline_parse_inst_t *)&cmd_stop,
	(cmdline_parse_inst_t *)&cmd_wait,
	(cmdline_parse_inst_t *)&cmd_show,
	(cmdline_parse_inst_t *)&cmd_set,
	(cmdline_parse_inst_t *)&cmd_help,
	(cmdline_parse_inst_t *)&cmd_quit,
	NULL,
};

/* Returns -errno, or how many runs failed (a file that could not be written counts). */
int
mp_cli_run(struct mp_config *cfg, const struct mp_env *env)
{
	struct cmdline *cl;

	cli.cfg = cfg;
	cli.env = env;
	/* answers and tables in the order of the commands, also through a pipe */
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("type 'help' for the commands\n");
	cl = cmdline_stdin_new(main_ctx, "malloc_perf> ");
	if (cl == NULL) {
		fprintf(stderr, "cannot start the prompt\n");
		return -ENOMEM;
	}
	cmdline_interact(cl);
	cmdline_stdin_exit(cl);
	/* end of input: stop what runs */
	if (running())
		__atomic_store_n(&mp_stop, 1, __ATOMIC_RELAXED);
	join_runner();
	printf("\n");
	if (cli.failures != 0)
		printf("%u run%s failed\n", cli.failures, cli.failures > 1 ? "s" : "");
	return (int)RTE_MIN(cli.failures, (unsigned int)INT_MAX);
}
