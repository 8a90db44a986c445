/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Settings: the tool's command line (after EAL's arguments and "--"), and
 * `set KEY VALUE` at the interactive prompt, which share mp_config_set().
 */

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_lcore.h>

#include "malloc_perf.h"

#define DEFAULT_BACKENDS "hpm,rte"
#define DEFAULT_WORKLOADS "seed-grow,pair,burst,fwd"
#define DEFAULT_DURATION 0.1
#define QUICK_DURATION 0.01

const char mp_config_keys[] = "backend|workload|lcores|size|align|burst|rate|duration|"
			      "iterations|repeat|pkt-len|seed|json|csv";

void
mp_usage(const char *prgname)
{
	unsigned int i;

	printf("Usage: %s [EAL options] -- [options]\n"
	       "\n"
	       "Compare allocators (backends) on allocation workloads, one backend after the\n"
	       "other in one process, on DPDK lcores; print a table per workload (median of\n"
	       "the repetitions [min, max] and the ratio to rte_malloc, > 1 is better than\n"
	       "rte; without rte, to the first backend that runs every workload), then a\n"
	       "summary. Repetitions rotate the order of the backends; every block is freed\n"
	       "before the next backend runs. Exit status 1 if a run failed (at the prompt\n"
	       "too), 2 for a bad option, 130 when a SIGINT stopped the runs (a second one\n"
	       "ends the process at once).\n"
	       "\n"
	       "Options:\n"
	       "  --backend LIST     comma-separated backends, or 'all' (default: %s)\n"
	       "  --workload LIST    comma-separated workloads, or 'all' (default: %s)\n"
	       "  --lcores LIST      lcores that run workers, from EAL's list, e.g. 1 or 0-1\n"
	       "                     (default: every worker lcore; the main lcore when EAL has\n"
	       "                     no other; name the main lcore to make it work too)\n"
	       "  --duration SEC     length of each timed loop (default %.1f; --quick %.2f;\n"
	       "                     0 at the prompt: until 'stop')\n"
	       "  --iterations N     units per timed loop instead of a duration (pairs, bursts,\n"
	       "                     operations, packets)\n"
	       "  --repeat N         repetitions, 1-%u (default 5)\n"
	       "  --size BYTES       one size for pair, burst, scale, paced, fwd, churn\n"
	       "                     (suffix K, M; default: each workload's own sizes)\n"
	       "  --align BYTES      alignment with --size, and of churn's random sizes\n"
	       "                     (power of two; default 0: 64 B)\n"
	       "  --burst N          blocks per burst (burst, scale, fwd rx; default 32)\n"
	       "  --rate MOPS        paced: target M operations/s per lcore (default 14.88)\n"
	       "  --pkt-len BYTES    fwd: length of the packets on the net_ring pair (default 64)\n"
	       "  --json FILE        write every figure (each repetition, medians) as JSON\n"
	       "  --csv FILE         write the medians as CSV\n"
	       "  --quick            small counts and %.0f ms loops (CI)\n"
	       "  --check            after every run, check the heap (hpm) and that no block is\n"
	       "                     left (heap backends); a failure fails the run\n"
	       "  --stats-period SEC a stats line on stderr every SEC seconds while running\n"
	       "                     (default 1; 0: none; at the prompt: 'show stats')\n"
	       "  --seed N           random seed (default fixed)\n"
	       "  -i, --interactive  a prompt (DPDK cmdline): start, stop, wait, show\n"
	       "                     stats|heap|config, set KEY VALUE, help, quit\n"
	       "  --help             this text\n"
	       "\n"
	       "Backends:\n",
		prgname, DEFAULT_BACKENDS, DEFAULT_WORKLOADS, DEFAULT_DURATION, QUICK_DURATION,
		MP_MAX_REPEAT, QUICK_DURATION * 1000);
	for (i = 0; i < mp_backend_count(); i++) {
		const struct mp_backend *be = mp_backend_at(i);

		printf("  %-12s %s%s%s\n", be->name, be->desc,
			be->missing != NULL ? "\n               " : "",
			be->missing != NULL ? be->missing : "");
	}
	printf("\nWorkloads:\n");
	for (i = 0; i < mp_workload_count(); i++) {
		const struct mp_workload *wl = mp_workload_at(i);
		const char *h = wl->help, *nl;

		printf("  %-12s ", wl->name);
		while ((nl = strchr(h, '\n')) != NULL) {
			printf("%.*s\n  %-12s ", (int)(nl - h), h, "");
			h = nl + 1;
		}
		printf("%s\n", h);
	}
	printf("\n"
	       "fwd forwards between the ports EAL has (e.g. --vdev net_null0 --vdev net_null1);\n"
	       "with none, the tool makes a net_ring pair itself.\n"
	       "\n"
	       "Numbers are decimal (a leading 0 is not octal), or hexadecimal after 0x.\n"
	       "\n"
	       "Memory: give EAL its hugepages up front with --socket-mem (or -m): EAL's dynamic\n"
	       "memory allocation and hugepage faults would otherwise be timed as part of\n"
	       "rte_malloc. With EAL --no-huge every backend runs on anonymous memory, and the\n"
	       "tool says so.\n"
	       "\n"
	       "Examples:\n"
	       "  %s -l 0-1 --no-pci --socket-mem 1024 -- --json perf.json\n"
	       "  %s -l 0-1 --no-pci --socket-mem 1024 -- --backend all --workload all\n"
	       "  %s -l 0-1 --no-pci --no-huge -m 1024 --vdev net_null0 --vdev net_null1 -- -i\n",
		prgname, prgname, prgname);
}

bool
mp_wants_help(int argc, char **argv)
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

uint64_t
mp_budget_cycles(const struct mp_config *cfg)
{
	if (cfg->duration <= 0)
		return UINT64_MAX;
	return (uint64_t)(cfg->duration * (double)rte_get_tsc_hz());
}

/*
 * A number with an optional K/M/G suffix (binary): decimal, or hexadecimal
 * after 0x; never octal (base 0 read --repeat 010 as 8 and refused 08).
 */
static int
parse_size(const char *s, uint64_t max, uint64_t *out)
{
	bool hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
	char *end;
	unsigned long long v;
	unsigned int shift = 0;

	/* strtoull() would take blanks, a sign, and a wrapped negative number */
	if (!isdigit((unsigned char)s[0]) || (hex && !isxdigit((unsigned char)s[2])))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, hex ? 16 : 10);
	if (errno != 0 || end == s)
		return -EINVAL;
	switch (*end) {
	case 'k':
	case 'K':
		shift = 10;
		end++;
		break;
	case 'm':
	case 'M':
		shift = 20;
		end++;
		break;
	case 'g':
	case 'G':
		shift = 30;
		end++;
		break;
	}
	if (*end == 'i' && shift != 0)
		end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end != '\0' || v > (max >> shift))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

static int
parse_double(const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !(v >= min && v <= max))
		return -EINVAL;
	*out = v;
	return 0;
}

/* "all", or names of a table; dup-free, in the order given. */
static int
parse_backends(struct mp_config *cfg, const char *arg, char *err, size_t errlen)
{
	char *copy = strdup(arg), *save = NULL, *tok;
	const struct mp_backend *list[MP_MAX_BACKENDS];
	unsigned int n = 0, i;
	const char *why;
	int rc = 0;

	if (copy == NULL)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok != NULL && rc == 0;
		tok = strtok_r(NULL, ",", &save)) {
		const struct mp_backend *be = mp_backend_find(tok);

		if (strcmp(tok, "all") == 0) {
			for (i = 0; i < mp_backend_count(); i++) {
				unsigned int k;

				be = mp_backend_at(i);
				if (mp_backend_usable(be, NULL) != 0)
					continue;
				for (k = 0; k < n && list[k] != be; k++)
					;
				if (k == n && n < MP_MAX_BACKENDS)
					list[n++] = be;
			}
			continue;
		}
		if (be == NULL) {
			snprintf(err, errlen, "unknown backend '%s' (see --help)", tok);
			rc = -EINVAL;
			break;
		}
		if (mp_backend_usable(be, &why) != 0) {
			snprintf(err, errlen, "backend %s cannot run here: %s", tok, why);
			rc = -EINVAL;
			break;
		}
		for (i = 0; i < n && list[i] != be; i++)
			;
		if (i == n && n < MP_MAX_BACKENDS)
			list[n++] = be;
	}
	free(copy);
	if (rc == 0 && n == 0) {
		snprintf(err, errlen, "empty backend list");
		rc = -EINVAL;
	}
	if (rc == 0) {
		memcpy(cfg->backends, list, sizeof(list[0]) * n);
		cfg->nbackends = n;
	}
	return rc;
}

static int
parse_workloads(struct mp_config *cfg, const char *arg, char *err, size_t errlen)
{
	char *copy = strdup(arg), *save = NULL, *tok;
	const struct mp_workload *list[MP_MAX_WORKLOADS];
	unsigned int n = 0, i;
	int rc = 0;

	if (copy == NULL)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		const struct mp_workload *wl = mp_workload_find(tok);

		if (strcmp(tok, "all") == 0) {
			for (i = 0; i < mp_workload_count() && i < MP_MAX_WORKLOADS; i++)
				list[i] = mp_workload_at(i);
			n = i;
			continue;
		}
		if (wl == NULL) {
			snprintf(err, errlen, "unknown workload '%s' (see --help)", tok);
			rc = -EINVAL;
			break;
		}
		for (i = 0; i < n && list[i] != wl; i++)
			;
		if (i == n && n < MP_MAX_WORKLOADS)
			list[n++] = wl;
	}
	free(copy);
	if (rc == 0 && n == 0) {
		snprintf(err, errlen, "empty workload list");
		rc = -EINVAL;
	}
	if (rc == 0) {
		memcpy(cfg->workloads, list, sizeof(list[0]) * n);
		cfg->nworkloads = n;
	}
	return rc;
}

/* "1", "0-1", "1,3-4": lcores that EAL runs. */
static int
parse_lcores(struct mp_config *cfg, const char *arg, char *err, size_t errlen)
{
	unsigned int list[RTE_MAX_LCORE], n = 0, i, a, b;
	const char *s = arg;
	char *end;

	while (*s != '\0') {
		a = (unsigned int)strtoul(s, &end, 10);
		if (end == s)
			goto bad;
		b = a;
		if (*end == '-') {
			s = end + 1;
			b = (unsigned int)strtoul(s, &end, 10);
			if (end == s || b < a)
				goto bad;
		}
		for (; a <= b; a++) {
			if (a >= RTE_MAX_LCORE || !rte_lcore_is_enabled(a)) {
				snprintf(err, errlen, "lcore %u is not in EAL's list (-l)", a);
				return -EINVAL;
			}
			if (mp_main_busy && a == rte_get_main_lcore()) {
				snprintf(err, errlen,
					"lcore %u runs the prompt: choose worker lcores", a);
				return -EINVAL;
			}
			for (i = 0; i < n && list[i] != a; i++)
				;
			if (i == n)
				list[n++] = a;
		}
		s = end;
		if (*s == ',')
			s++;
		else if (*s != '\0')
			goto bad;
	}
	if (n == 0)
		goto bad;
	memcpy(cfg->lcores, list, sizeof(list[0]) * n);
	cfg->nlcores = n;
	return 0;
bad:
	snprintf(err, errlen, "bad lcore list '%s' (e.g. 1 or 0-1 or 1,3)", arg);
	return -EINVAL;
}

int
mp_config_set(struct mp_config *cfg, const char *key, const char *value, char *err, size_t errlen)
{
	uint64_t u;
	double d;

	err[0] = '\0';
	if (strcmp(key, "backend") == 0)
		return parse_backends(cfg, value, err, errlen);
	if (strcmp(key, "workload") == 0)
		return parse_workloads(cfg, value, err, errlen);
	if (strcmp(key, "lcores") == 0)
		return parse_lcores(cfg, value, err, errlen);
	if (strcmp(key, "size") == 0) {
		if (parse_size(value, UINT64_C(1) << 40, &u) != 0) {
			snprintf(err, errlen, "size: bytes, e.g. 64, 4K, 2M; 0 for the defaults");
			return -EINVAL;
		}
		cfg->size = u;
		return 0;
	}
	if (strcmp(key, "align") == 0) {
		if (parse_size(value, UINT64_C(1) << 30, &u) != 0 || (u & (u - 1)) != 0) {
			snprintf(err, errlen, "align: 0 or a power of two up to 1G");
			return -EINVAL;
		}
		cfg->align = (unsigned int)u;
		return 0;
	}
	if (strcmp(key, "burst") == 0) {
		if (parse_size(value, MP_MAX_BURST, &u) != 0 || u == 0) {
			snprintf(err, errlen, "burst: 1 to %u", MP_MAX_BURST);
			return -EINVAL;
		}
		cfg->burst = (unsigned int)u;
		return 0;
	}
	if (strcmp(key, "rate") == 0) {
		if (parse_double(value, 1e-6, 1e4, &d) != 0) {
			snprintf(err, errlen, "rate: M operations/s per lcore, e.g. 14.88");
			return -EINVAL;
		}
		cfg->rate = d;
		return 0;
	}
	if (strcmp(key, "duration") == 0) {
		if (parse_double(value, 0, 86400, &d) != 0 || (d == 0 && !cfg->interactive)) {
			snprintf(err, errlen, "duration: seconds%s",
				cfg->interactive ? " (0: until stop)" : ", more than 0");
			return -EINVAL;
		}
		cfg->duration = d;
		cfg->iterations = 0;
		return 0;
	}
	if (strcmp(key, "iterations") == 0) {
		if (parse_size(value, UINT64_C(1) << 48, &u) != 0) {
			snprintf(err, errlen, "iterations: a number (0: use the duration)");
			return -EINVAL;
		}
		cfg->iterations = u;
		return 0;
	}
	if (strcmp(key, "repeat") == 0) {
		if (parse_size(value, MP_MAX_REPEAT, &u) != 0 || u == 0) {
			snprintf(err, errlen, "repeat: 1 to %u", MP_MAX_REPEAT);
			return -EINVAL;
		}
		cfg->repeat = (unsigned int)u;
		return 0;
	}
	if (strcmp(key, "pkt-len") == 0) {
		if (parse_size(value, 1500, &u) != 0 || u < 60) {
			snprintf(err, errlen, "pkt-len: 60 to 1500");
			return -EINVAL;
		}
		cfg->pkt_len = (unsigned int)u;
		return 0;
	}
	if (strcmp(key, "stats-period") == 0) {
		if (parse_size(value, 3600, &u) != 0) {
			snprintf(err, errlen, "stats-period: seconds, 0 for none");
			return -EINVAL;
		}
		cfg->stats_period = (unsigned int)u;
		return 0;
	}
	if (strcmp(key, "seed") == 0) {
		if (parse_size(value, UINT64_MAX, &u) != 0) {
			snprintf(err, errlen, "seed: a number");
			return -EINVAL;
		}
		cfg->seed = u != 0 ? u : 1;
		return 0;
	}
	if (strcmp(key, "json") == 0 || strcmp(key, "csv") == 0) {
		char *dst = key[0] == 'j' ? cfg->json : cfg->csv;

		if (strlen(value) >= sizeof(cfg->json)) {
			snprintf(err, errlen, "%s: a path of at most %zu characters", key,
				sizeof(cfg->json) - 1);
			return -EINVAL;
		}
		snprintf(dst, sizeof(cfg->json), "%s", strcmp(value, "-") != 0 ? value : "");
		return 0;
	}
	snprintf(err, errlen, "unknown setting '%s' (%s)", key, mp_config_keys);
	return -EINVAL;
}

void
mp_config_defaults(struct mp_config *cfg, bool interactive)
{
	char err[160];
	unsigned int id;

	memset(cfg, 0, sizeof(*cfg));
	cfg->interactive = interactive;
	cfg->repeat = interactive ? 1 : 5;
	cfg->duration = interactive ? 0 : DEFAULT_DURATION;
	cfg->burst = 32;
	cfg->rate = 14.88;
	cfg->pkt_len = 64;
	cfg->stats_period = interactive ? 0 : 1;
	cfg->seed = UINT64_C(0x9e3779b97f4a7c15);
	if (parse_backends(cfg, interactive ? "hpm" : DEFAULT_BACKENDS, err, sizeof(err)) != 0)
		fprintf(stderr, "%s\n", err);
	parse_workloads(cfg, interactive ? "fwd" : DEFAULT_WORKLOADS, err, sizeof(err));
	RTE_LCORE_FOREACH_WORKER (id) {
		cfg->lcores[cfg->nlcores++] = id;
	}
	if (cfg->nlcores == 0 && !interactive)
		cfg->lcores[cfg->nlcores++] = rte_get_main_lcore();
}

int
mp_parse_args(int argc, char **argv, struct mp_config *cfg)
{
	static const struct option longopts[] = {
		{"backend", required_argument, NULL, 0},
		{"workload", required_argument, NULL, 0},
		{"lcores", required_argument, NULL, 0},
		{"duration", required_argument, NULL, 0},
		{"iterations", required_argument, NULL, 0},
		{"repeat", required_argument, NULL, 0},
		{"size", required_argument, NULL, 0},
		{"align", required_argument, NULL, 0},
		{"burst", required_argument, NULL, 0},
		{"rate", required_argument, NULL, 0},
		{"pkt-len", required_argument, NULL, 0},
		{"json", required_argument, NULL, 0},
		{"csv", required_argument, NULL, 0},
		{"stats-period", required_argument, NULL, 0},
		{"seed", required_argument, NULL, 0},
		{"quick", no_argument, NULL, 'q'},
		{"check", no_argument, NULL, 'c'},
		{"interactive", no_argument, NULL, 'i'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	bool interactive = false, duration_set = false;
	struct {
		const char *key, *value;
	} sets[64];
	unsigned int nsets = 0, i;
	char err[256];
	int c, idx;

	/* first pass: the mode, which sets the defaults */
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "ih", longopts, &idx)) != -1)
		if (c == 'i')
			interactive = true;
	mp_main_busy = interactive;
	mp_config_defaults(cfg, interactive);
	optind = 1;
	opterr = 1;
	while ((c = getopt_long(argc, argv, "ih", longopts, &idx)) != -1) {
		switch (c) {
		case 0:
			if (nsets == RTE_DIM(sets))
				return -EINVAL;
			sets[nsets].key = longopts[idx].name;
			sets[nsets++].value = optarg;
			duration_set |= strcmp(longopts[idx].name, "duration") == 0 ||
				strcmp(longopts[idx].name, "iterations") == 0;
			break;
		case 'q':
			cfg->quick = true;
			break;
		case 'c':
			cfg->check = true;
			break;
		case 'i':
			break;
		case 'h':
			mp_usage(argv[0]);
			return 1;
		default:
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "unexpected argument '%s' (see --help)\n", argv[optind]);
		return -EINVAL;
	}
	if (cfg->quick && !duration_set)
		cfg->duration = QUICK_DURATION;
	for (i = 0; i < nsets; i++)
		if (mp_config_set(cfg, sets[i].key, sets[i].value, err, sizeof(err)) != 0) {
			fprintf(stderr, "--%s: %s\n", sets[i].key, err);
			return -EINVAL;
		}
	if (cfg->nlcores == 0) {
		fprintf(stderr,
			"no worker lcore: the prompt runs on the main lcore; give EAL "
			"another (e.g. -l 0-1)\n");
		return -EINVAL;
	}
	return 0;
}

static void
print_list(FILE *f, const char *what, const char *const *names, unsigned int n)
{
	unsigned int i;

	fprintf(f, "  %-13s", what);
	for (i = 0; i < n; i++)
		fprintf(f, "%s%s", i ? "," : "", names[i]);
	fprintf(f, "\n");
}

void
mp_config_print(const struct mp_config *cfg, FILE *f)
{
	const char *names[MP_MAX_BACKENDS + MP_MAX_WORKLOADS];
	char buf[64];
	unsigned int i;

	for (i = 0; i < cfg->nbackends; i++)
		names[i] = cfg->backends[i]->name;
	print_list(f, "backend", names, cfg->nbackends);
	for (i = 0; i < cfg->nworkloads; i++)
		names[i] = cfg->workloads[i]->name;
	print_list(f, "workload", names, cfg->nworkloads);
	fprintf(f, "  %-13s", "lcores");
	for (i = 0; i < cfg->nlcores; i++)
		fprintf(f, "%s%u", i ? "," : "", cfg->lcores[i]);
	fprintf(f, " (main lcore %u)\n", rte_get_main_lcore());
	if (cfg->iterations != 0)
		fprintf(f, "  %-13s%" PRIu64 " per timed loop\n", "iterations", cfg->iterations);
	else if (cfg->duration > 0)
		fprintf(f, "  %-13s%g s per timed loop\n", "duration", cfg->duration);
	else
		fprintf(f, "  %-13suntil stop\n", "duration");
	fprintf(f, "  %-13s%u\n", "repeat", cfg->repeat);
	if (cfg->size != 0) {
		mp_case_name(buf, sizeof(buf), cfg->size, cfg->align);
		fprintf(f, "  %-13s%s\n", "size", buf);
	} else {
		fprintf(f, "  %-13seach workload's own (align %u)\n", "size", cfg->align);
	}
	fprintf(f, "  %-13s%u\n", "burst", cfg->burst);
	fprintf(f, "  %-13s%g M/s per lcore\n", "rate", cfg->rate);
	fprintf(f, "  %-13s%u B\n", "pkt-len", cfg->pkt_len);
	fprintf(f, "  %-13s%s\n", "counts", cfg->quick ? "quick" : "full");
	fprintf(f, "  %-13s%s\n", "json", cfg->json[0] != '\0' ? cfg->json : "-");
	fprintf(f, "  %-13s%s\n", "csv", cfg->csv[0] != '\0' ? cfg->csv : "-");
}
