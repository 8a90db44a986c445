/* SPDX-License-Identifier: BSD-3-Clause */

/* Medians, the printed tables and the JSON file (its format: doc/malloc_perf.md). */

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "malloc_perf.h"

/* Ratios are given against this backend when it is selected. */
#define REF_BACKEND "hpm"

#define NAME_WIDTH 24
#define UNIT_WIDTH 9
#define CELL_WIDTH 27
#define RATIO_WIDTH 9

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double
mp_median(double *v, unsigned int n)
{
	if (n == 0)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

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

	if (isnan(v))
		return snprintf(buf, len, "-");
	if (a >= 100 || a == 0)
		return snprintf(buf, len, "%.0f", v);
	if (a >= 10)
		return snprintf(buf, len, "%.1f", v);
	return snprintf(buf, len, "%.2f", v);
}

static void
fmt_cell(char *buf, size_t len, const struct mp_summary *s)
{
	char med[32], lo[32], hi[32];

	if (s->n == 0) {
		snprintf(buf, len, "failed");
		return;
	}
	fmt_num(med, sizeof(med), s->median);
	if (s->n == 1) {
		snprintf(buf, len, "%s", med);
		return;
	}
	fmt_num(lo, sizeof(lo), s->min);
	fmt_num(hi, sizeof(hi), s->max);
	snprintf(buf, len, "%s [%s, %s]", med, lo, hi);
}

static int
ref_index(const struct mp_results *r)
{
	unsigned int b;

	for (b = 0; b < r->nbackends; b++)
		if (strcmp(r->backends[b]->name, REF_BACKEND) == 0)
			return b;
	return -1;
}

static double
ratio(double x, double ref)
{
	return ref != 0 && !isnan(ref) && !isnan(x) ? x / ref : NAN;
}

void
mp_report_table(const struct mp_results *r)
{
	int ref = ref_index(r);
	char buf[128];
	unsigned int m, b;

	printf("\n== %s ==\n", r->title);
	printf("%-*s %-*s", NAME_WIDTH, "median [min, max]", UNIT_WIDTH, "unit");
	for (b = 0; b < r->nbackends; b++)
		printf(" %-*s", CELL_WIDTH, r->backends[b]->name);
	for (b = 0; ref >= 0 && b < r->nbackends; b++)
		if ((int)b != ref) {
			snprintf(buf, sizeof(buf), "%s/%s", r->backends[b]->name, REF_BACKEND);
			printf(" %*s", RATIO_WIDTH, buf);
		}
	printf("\n");
	for (m = 0; m < r->wl->nmetrics; m++) {
		const struct mp_metric *mt = &r->wl->metrics[m];
		struct mp_summary s, sref;

		if (!(mt->flags & MP_METRIC_TABLE))
			continue;
		printf("%-*s %-*s", NAME_WIDTH, mt->name, UNIT_WIDTH, mt->unit);
		for (b = 0; b < r->nbackends; b++) {
			mp_summarise(r, m, b, &s);
			fmt_cell(buf, sizeof(buf), &s);
			printf(" %-*s", CELL_WIDTH, buf);
		}
		if (ref >= 0)
			mp_summarise(r, m, ref, &sref);
		for (b = 0; ref >= 0 && b < r->nbackends; b++) {
			if ((int)b == ref)
				continue;
			mp_summarise(r, m, b, &s);
			fmt_num(buf, sizeof(buf), ratio(s.median, sref.median));
			printf(" %*s", RATIO_WIDTH, buf);
		}
		printf("\n");
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

static void
json_metric(FILE *f, const struct mp_results *r, unsigned int m)
{
	const struct mp_metric *mt = &r->wl->metrics[m];
	int ref = ref_index(r);
	struct mp_summary s, sref;
	unsigned int b, i;
	bool first = true;

	fputs("        {\"name\": ", f);
	json_str(f, mt->name);
	fputs(", \"unit\": ", f);
	json_str(f, mt->unit);
	fprintf(f, ", \"table\": %s,\n          \"backends\": {",
		mt->flags & MP_METRIC_TABLE ? "true" : "false");
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
		mp_summarise(r, m, ref, &sref);
		for (b = 0; b < r->nbackends; b++) {
			if ((int)b == ref)
				continue;
			mp_summarise(r, m, b, &s);
			fprintf(f, "%s\"%s/%s\": ", first ? "" : ", ", r->backends[b]->name,
				REF_BACKEND);
			json_num(f, ratio(s.median, sref.median));
			first = false;
		}
	}
	fputs("}}", f);
}

int
mp_report_json(const char *path, const struct mp_env *env, const struct mp_results *res,
	unsigned int nres)
{
	FILE *f = fopen(path, "w");
	unsigned int w, m, b;
	int rc = 0;

	if (f == NULL)
		return -errno;
	fprintf(f, "{\n  \"tool\": \"malloc_perf\",\n  \"format\": 1,\n  \"memory\": ");
	json_str(f, env->memory);
	fprintf(f,
		",\n  \"hugepage_size\": %" PRIu64 ",\n  \"eal_heap_mib\": %" PRIu64
		",\n  \"tsc_hz\": %" PRIu64 ",\n  \"repeat\": %u,\n  \"quick\": %s,\n"
		"  \"backends\": [",
		env->hugepage_size, env->eal_heap_mib, env->tsc_hz, env->repeat,
		env->quick ? "true" : "false");
	for (b = 0; nres > 0 && b < res[0].nbackends; b++) {
		fputs(b ? ", " : "", f);
		json_str(f, res[0].backends[b]->name);
	}
	fputs("],\n  \"workloads\": [", f);
	for (w = 0; w < nres; w++) {
		fprintf(f, "%s\n    {\"name\": ", w ? "," : "");
		json_str(f, res[w].wl->name);
		fputs(", \"title\": ", f);
		json_str(f, res[w].title);
		fputs(",\n      \"metrics\": [", f);
		for (m = 0; m < res[w].wl->nmetrics; m++) {
			fputs(m ? ",\n" : "\n", f);
			json_metric(f, &res[w], m);
		}
		fputs("]}", f);
	}
	fputs("\n  ]\n}\n", f);
	if (ferror(f))
		rc = -EIO;
	if (fclose(f) != 0 && rc == 0)
		rc = -errno;
	return rc;
}
