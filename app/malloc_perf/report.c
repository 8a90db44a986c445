/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Medians, the printed tables, the summary, and the JSON and CSV files (their
 * formats: doc/malloc_perf.md). Ratios compare each backend with the run's
 * reference (mp_reference(): rte_malloc when selected), one for the whole run
 * so that tables, summary and files agree, oriented so that more than 1 is
 * better than the reference: ref / backend for times and memory, backend /
 * ref for rates.
 */

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "malloc_perf.h"

/* Ratios are given against this backend when it ran. */
#define REF_BACKEND "rte"

#define NAME_WIDTH 30
#define UNIT_WIDTH 9
#define BE_WIDTH 11
#define NUM_WIDTH 10
#define SUM_WL_WIDTH 13

void
mp_summarise(const struct mp_results *r, unsigned int m, unsigned int b, struct mp_summary *s)
{
	double v[MP_MAX_REPEAT];
	unsigned int i;

	s->n = 0;
	for (i = 0; i < r->nreps; i++) {
		double x = *mp_value(r, m, b, i);

		if (!isnan(x))
			v[s->n++] = x;
	}
	s->median = mp_median(v, s->n);
	s->min = s->n ? v[0] : NAN;
	s->max = s->n ? v[s->n - 1] : NAN;
}

/* A figure with three significant digits or so, integers above 100. */
static int
fmt_num(char *buf, size_t len, double v)
{
	double a = fabs(v);

	if (isnan(v) || isinf(v))
		return snprintf(buf, len, "-");
	if (a >= 100 || a == 0)
		return snprintf(buf, len, "%.0f", v);
	if (a >= 10)
		return snprintf(buf, len, "%.1f", v);
	if (a >= 0.01)
		return snprintf(buf, len, "%.2f", v);
	return snprintf(buf, len, "%.2g", v);
}

static bool
runs_every_workload(const struct mp_config *cfg, const struct mp_backend *be)
{
	const char *why;
	unsigned int w;

	for (w = 0; w < cfg->nworkloads; w++)
		if (!mp_workload_applies(cfg->workloads[w], cfg, be, &why))
			return false;
	return true;
}

const struct mp_backend *
mp_reference(const struct mp_config *cfg)
{
	const struct mp_backend *first = NULL;
	unsigned int b;

	for (b = 0; b < cfg->nbackends; b++)
		if (strcmp(cfg->backends[b]->name, REF_BACKEND) == 0)
			return cfg->backends[b];
	/* a reference that some table lacks leaves that table without ratios */
	for (b = 0; b < cfg->nbackends; b++) {
		const struct mp_backend *be = cfg->backends[b];

		if (be->flags & MP_BE_NOALLOC)
			continue;
		if (runs_every_workload(cfg, be))
			return be;
		if (first == NULL)
			first = be;
	}
	return first;
}

static int
index_of(const struct mp_results *r, const struct mp_backend *be)
{
	unsigned int b;

	for (b = 0; be != NULL && b < r->nbackends; b++)
		if (r->backends[b] == be)
			return (int)b;
	return -1;
}

/* Where the run's reference is among the workload's backends; -1: it did not run. */
static int
ref_index(const struct mp_results *r)
{
	return index_of(r, r->ref);
}

/* Better than the reference when > 1. */
static double
ratio(unsigned int flags, double x, double ref)
{
	if (isnan(ref) || isnan(x) || (flags & MP_M_NORATIO))
		return NAN;
	if (flags & MP_M_LOWER)
		return x != 0 ? ref / x : NAN;
	if (flags & MP_M_HIGHER)
		return ref != 0 ? x / ref : NAN;
	return NAN;
}

static void
print_skipped(const struct mp_results *r)
{
	unsigned int i;

	for (i = 0; i < r->nskipped; i++)
		printf("   (%s: not run: %s)\n", r->skipped[i]->name, r->skipped_why[i]);
}

void
mp_report_table(const struct mp_results *r)
{
	int ref = ref_index(r);
	char med[32], lo[32], hi[32], rt[32];
	unsigned int m, b, k;

	printf("\n== %s ==\n", r->title);
	printf("   median of %u repetition%s [min, max]; ", r->nreps, r->nreps > 1 ? "s" : "");
	if (ref >= 0)
		printf("vs %s: > 1 is better than %s\n", r->ref->name, r->ref->name);
	else if (r->ref != NULL)
		printf("no ratio: the reference, %s, does not run here\n", r->ref->name);
	else
		printf("no ratio: no reference\n");
	print_skipped(r);
	if (r->nbackends == 0) {
		printf("   (no backend applies)\n");
		return;
	}
	printf("%-*s %-*s %-*s %*s %*s %*s %*s\n", NAME_WIDTH, "metric", UNIT_WIDTH, "unit",
		BE_WIDTH, "backend", NUM_WIDTH, "median", NUM_WIDTH, "min", NUM_WIDTH, "max",
		NUM_WIDTH - 2, "vs ref");
	for (m = 0; m < r->nmetrics; m++) {
		const struct mp_metric *mt = &r->metrics[m];
		struct mp_summary s, sref;

		if (!(mt->flags & MP_M_TABLE))
			continue;
		if (ref >= 0)
			mp_summarise(r, m, (unsigned int)ref, &sref);
		for (k = 0; k < r->nbackends; k++) {
			b = k;
			mp_summarise(r, m, b, &s);
			fmt_num(med, sizeof(med), s.median);
			fmt_num(lo, sizeof(lo), s.min);
			fmt_num(hi, sizeof(hi), s.max);
			fmt_num(rt, sizeof(rt),
				ref >= 0 ? ratio(mt->flags, s.median, sref.median) : NAN);
			printf("%-*s %-*s %-*s %*s %*s %*s %*s\n", NAME_WIDTH,
				k == 0 ? mt->name : "", UNIT_WIDTH, k == 0 ? mt->unit : "",
				BE_WIDTH, r->backends[b]->name, NUM_WIDTH,
				s.n || (mt->flags & MP_M_OPT) ? med
					: r->stopped          ? "stopped"
							      : "failed",
				NUM_WIDTH, lo, NUM_WIDTH, hi, NUM_WIDTH - 2, rt);
		}
	}
	fflush(stdout);
}

/* Every backend of any workload, in the order met. */
static unsigned int
all_backends(const struct mp_results *res, unsigned int nres, const struct mp_backend **out)
{
	unsigned int n = 0, w, b, k;

	for (w = 0; w < nres; w++)
		for (b = 0; b < res[w].nbackends; b++) {
			for (k = 0; k < n && out[k] != res[w].backends[b]; k++)
				;
			if (k == n && n < MP_MAX_BACKENDS)
				out[n++] = res[w].backends[b];
		}
	return n;
}

void
mp_report_summary(const struct mp_results *res, unsigned int nres)
{
	const struct mp_backend *bes[MP_MAX_BACKENDS];
	/* the tables' reference (mp_reference()), not the first backend met here */
	const struct mp_backend *ref = nres > 0 ? res[0].ref : NULL;
	unsigned int nb = all_backends(res, nres, bes), w, m, k;
	char buf[64];

	if (ref != NULL)
		printf("\n== Summary: medians; 'X/%s': how many times better X is than %s ==\n",
			ref->name, ref->name);
	else
		printf("\n== Summary: medians (no reference) ==\n");
	printf("%-*s %-*s %-*s", SUM_WL_WIDTH, "workload", NAME_WIDTH, "metric", UNIT_WIDTH,
		"unit");
	for (k = 0; k < nb; k++)
		printf(" %*s", NUM_WIDTH, bes[k]->name);
	for (k = 0; k < nb && ref != NULL; k++)
		if (bes[k] != ref && !(bes[k]->flags & MP_BE_NOALLOC)) {
			snprintf(buf, sizeof(buf), "%s/%s", bes[k]->name, ref->name);
			printf(" %*s", NUM_WIDTH, buf);
		}
	printf("\n");
	for (w = 0; w < nres; w++) {
		const struct mp_results *r = &res[w];
		int ri = ref != NULL ? index_of(r, ref) : -1;

		for (m = 0; m < r->nmetrics; m++) {
			const struct mp_metric *mt = &r->metrics[m];
			struct mp_summary s, sref;

			if (!(mt->flags & MP_M_TABLE))
				continue;
			printf("%-*s %-*s %-*s", SUM_WL_WIDTH, r->wl->name, NAME_WIDTH, mt->name,
				UNIT_WIDTH, mt->unit);
			for (k = 0; k < nb; k++) {
				int b = index_of(r, bes[k]);

				if (b < 0) {
					printf(" %*s", NUM_WIDTH, "");
					continue;
				}
				mp_summarise(r, m, (unsigned int)b, &s);
				fmt_num(buf, sizeof(buf), s.median);
				printf(" %*s", NUM_WIDTH, buf);
			}
			if (ri >= 0)
				mp_summarise(r, m, (unsigned int)ri, &sref);
			for (k = 0; k < nb && ref != NULL; k++) {
				int b = index_of(r, bes[k]);

				if (bes[k] == ref || (bes[k]->flags & MP_BE_NOALLOC))
					continue;
				if (b < 0 || ri < 0) {
					printf(" %*s", NUM_WIDTH, "");
					continue;
				}
				mp_summarise(r, m, (unsigned int)b, &s);
				fmt_num(buf, sizeof(buf), ratio(mt->flags, s.median, sref.median));
				printf(" %*s", NUM_WIDTH, buf);
			}
			printf("\n");
		}
	}
	fflush(stdout);
}

/* JSON */

static void
json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", (unsigned char)*s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void
json_num(FILE *f, double v)
{
	if (isnan(v) || isinf(v))
		fputs("null", f);
	else
		fprintf(f, "%.6g", v);
}

static const char *
better(unsigned int flags)
{
	if (flags & MP_M_LOWER)
		return "\"lower\"";
	if (flags & MP_M_HIGHER)
		return "\"higher\"";
	return "null";
}

static const char *
aggregate(unsigned int flags)
{
	if (flags & MP_M_SUM)
		return "sum";
	if (flags & MP_M_MAX)
		return "max";
	return "mean";
}

static void
json_metric(FILE *f, const struct mp_results *r, unsigned int m)
{
	const struct mp_metric *mt = &r->metrics[m];
	int ref = ref_index(r);
	struct mp_summary s, sref;
	unsigned int b, i;

	fputs("        {\"name\": ", f);
	json_str(f, mt->name);
	fputs(", \"unit\": ", f);
	json_str(f, mt->unit);
	fprintf(f,
		", \"table\": %s, \"better\": %s, \"lcores\": \"%s\", \"optional\": %s,\n"
		"          \"backends\": {",
		mt->flags & MP_M_TABLE ? "true" : "false", better(mt->flags), aggregate(mt->flags),
		mt->flags & MP_M_OPT ? "true" : "false");
	for (b = 0; b < r->nbackends; b++) {
		mp_summarise(r, m, b, &s);
		fprintf(f, "%s\n            ", b ? "," : "");
		json_str(f, r->backends[b]->name);
		fputs(": {\"median\": ", f);
		json_num(f, s.median);
		fputs(", \"min\": ", f);
		json_num(f, s.min);
		fputs(", \"max\": ", f);
		json_num(f, s.max);
		fputs(", \"runs\": [", f);
		for (i = 0; i < r->nreps; i++) {
			fputs(i ? ", " : "", f);
			json_num(f, *mp_value(r, m, b, i));
		}
		fputs("]}", f);
	}
	fputs("},\n          \"ratio\": {", f);
	if (ref >= 0) {
		mp_summarise(r, m, (unsigned int)ref, &sref);
		for (b = 0; b < r->nbackends; b++) {
			mp_summarise(r, m, b, &s);
			fputs(b ? ", " : "", f);
			json_str(f, r->backends[b]->name);
			fputs(": ", f);
			json_num(f, ratio(mt->flags, s.median, sref.median));
		}
	}
	fputs("}}", f);
}

/* The latency CDF of each backend: (ns, fraction below) at each non-empty bucket. */
static void
json_latency(FILE *f, const struct mp_results *r)
{
	double ns = 1e9 / (double)rte_get_tsc_hz();
	unsigned int b, i;
	bool first = true;

	fputs(",\n      \"latency\": {", f);
	for (b = 0; b < r->nbackends; b++) {
		const struct mp_hist *h = r->hist[b];
		uint64_t seen = 0;
		bool first_pt = true;

		if (h == NULL || h->n == 0)
			continue;
		fprintf(f, "%s\n        ", first ? "" : ",");
		first = false;
		json_str(f, r->backends[b]->name);
		fprintf(f, ": {\"unit\": \"ns\", \"count\": %" PRIu64 ", \"p50\": ", h->n);
		json_num(f, mp_hist_quantile(h, 0.5) * ns);
		fputs(", \"p99\": ", f);
		json_num(f, mp_hist_quantile(h, 0.99) * ns);
		fputs(", \"p99.9\": ", f);
		json_num(f, mp_hist_quantile(h, 0.999) * ns);
		fputs(", \"max\": ", f);
		json_num(f, (double)h->max * ns);
		fputs(",\n          \"cdf\": [", f);
		for (i = 0; i < MP_HIST_BUCKETS; i++) {
			if (h->count[i] == 0)
				continue;
			seen += h->count[i];
			fputs(first_pt ? "[" : ", [", f);
			first_pt = false;
			json_num(f, RTE_MIN(mp_hist_bucket_top(i), (double)h->max) * ns);
			fputs(", ", f);
			json_num(f, (double)seen / (double)h->n);
			fputs("]", f);
		}
		fputs("]}", f);
	}
	fputs("}", f);
}

static void
json_names(FILE *f, const struct mp_backend *const *bes, unsigned int n)
{
	unsigned int b;

	fputc('[', f);
	for (b = 0; b < n; b++) {
		fputs(b ? ", " : "", f);
		json_str(f, bes[b]->name);
	}
	fputc(']', f);
}

static void
json_lcores(FILE *f, const unsigned int *ids, unsigned int n)
{
	unsigned int i;

	fputc('[', f);
	for (i = 0; i < n; i++)
		fprintf(f, "%s%u", i ? ", " : "", ids[i]);
	fputc(']', f);
}

int
mp_report_json(const char *path, const struct mp_env *env, const struct mp_config *cfg,
	const struct mp_results *res, unsigned int nres)
{
	FILE *f = fopen(path, "w");
	const struct mp_backend *ref_be;
	unsigned int w, m, i;
	bool first = true;
	int rc = 0;

	if (f == NULL)
		return -errno;
	fprintf(f, "{\n  \"tool\": \"malloc_perf\",\n  \"format\": 2,\n  \"memory\": ");
	json_str(f, env->memory);
	fprintf(f,
		",\n  \"hugepage_size\": %" PRIu64 ",\n  \"eal_heap_mib\": %" PRIu64
		",\n  \"tsc_hz\": %" PRIu64 ",\n  \"repeat\": %u,\n  \"quick\": %s,\n"
		"  \"duration_s\": %g,\n  \"iterations\": %" PRIu64 ",\n  \"main_lcore\": %u,\n"
		"  \"lcores\": ",
		env->hugepage_size, env->eal_heap_mib, env->tsc_hz, cfg->repeat,
		cfg->quick ? "true" : "false", cfg->duration, cfg->iterations, env->main_lcore);
	json_lcores(f, cfg->lcores, cfg->nlcores);
	fputs(",\n  \"backends\": ", f);
	json_names(f, cfg->backends, cfg->nbackends);
	fputs(",\n  \"lacking\": {", f);
	for (i = 0; i < mp_backend_count(); i++) {
		const char *why;

		if (!mp_backend_lacking(mp_backend_at(i), &why))
			continue;
		fputs(first ? "" : ", ", f);
		first = false;
		json_str(f, mp_backend_at(i)->name);
		fputs(": ", f);
		json_str(f, why);
	}
	/* the reference used, as in the tables (rte may not have been selected) */
	ref_be = mp_reference(cfg);
	fputs("},\n  \"reference\": ", f);
	if (ref_be != NULL)
		json_str(f, ref_be->name);
	else
		fputs("null", f);
	fputs(",\n  \"workloads\": [", f);
	for (w = 0; w < nres; w++) {
		const struct mp_results *r = &res[w];
		int ref = ref_index(r);

		fprintf(f, "%s\n    {\"name\": ", w ? "," : "");
		json_str(f, r->wl->name);
		fputs(", \"reference\": ", f);
		if (ref >= 0)
			json_str(f, r->backends[ref]->name);
		else
			fputs("null", f);
		fputs(", \"title\": ", f);
		json_str(f, r->title);
		fprintf(f, ", \"failures\": %u,\n      \"lcores\": ", r->failures);
		json_lcores(f, r->lcores, r->nlc);
		fputs(", \"backends\": ", f);
		json_names(f, r->backends, r->nbackends);
		fputs(", \"skipped\": {", f);
		for (i = 0; i < r->nskipped; i++) {
			fputs(i ? ", " : "", f);
			json_str(f, r->skipped[i]->name);
			fputs(": ", f);
			json_str(f, r->skipped_why[i]);
		}
		fputs("},\n      \"metrics\": [", f);
		for (m = 0; m < r->nmetrics; m++) {
			fputs(m ? ",\n" : "\n", f);
			json_metric(f, r, m);
		}
		fputs("]", f);
		if (r->wl->flags & MP_WL_HIST)
			json_latency(f, r);
		fputs("}", f);
	}
	fputs("\n  ]\n}\n", f);
	if (ferror(f))
		rc = -EIO;
	if (fclose(f) != 0 && rc == 0)
		rc = -errno;
	return rc;
}

/* CSV: one row per workload, metric and backend. */

static void
csv_field(FILE *f, const char *s)
{
	if (strpbrk(s, ",\"\n") == NULL) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s != '\0'; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void
csv_num(FILE *f, double v)
{
	if (!isnan(v) && !isinf(v))
		fprintf(f, "%.6g", v);
}

int
mp_report_csv(const char *path, const struct mp_results *res, unsigned int nres)
{
	FILE *f = fopen(path, "w");
	unsigned int w, m, b, i;
	int rc = 0;

	if (f == NULL)
		return -errno;
	fputs("workload,metric,unit,better,backend,lcores,n,median,min,max,vs_ref,ref,runs\n", f);
	for (w = 0; w < nres; w++) {
		const struct mp_results *r = &res[w];
		int ref = ref_index(r);

		for (m = 0; m < r->nmetrics; m++) {
			const struct mp_metric *mt = &r->metrics[m];
			struct mp_summary s, sref;

			if (ref >= 0)
				mp_summarise(r, m, (unsigned int)ref, &sref);
			for (b = 0; b < r->nbackends; b++) {
				mp_summarise(r, m, b, &s);
				csv_field(f, r->wl->name);
				fputc(',', f);
				csv_field(f, mt->name);
				fputc(',', f);
				csv_field(f, mt->unit);
				fprintf(f, ",%s,%s,%u,%u,",
					mt->flags & MP_M_LOWER            ? "lower"
						: mt->flags & MP_M_HIGHER ? "higher"
									  : "",
					r->backends[b]->name, r->nlc, s.n);
				csv_num(f, s.median);
				fputc(',', f);
				csv_num(f, s.min);
				fputc(',', f);
				csv_num(f, s.max);
				fputc(',', f);
				if (ref >= 0)
					csv_num(f, ratio(mt->flags, s.median, sref.median));
				fprintf(f, ",%s,", ref >= 0 ? r->backends[ref]->name : "");
				for (i = 0; i < r->nreps; i++) {
					fputs(i ? " " : "", f);
					csv_num(f, *mp_value(r, m, b, i));
				}
				fputc('\n', f);
			}
		}
	}
	if (ferror(f))
		rc = -EIO;
	if (fclose(f) != 0 && rc == 0)
		rc = -errno;
	return rc;
}
