/*
 * test_prom.c - the metrics registry and exposition writer: label and
 * HELP escaping, histogram buckets (cumulative, +Inf, _count), counters
 * that never decrease, deterministic order, deletion, number formatting,
 * OpenMetrics naming and # EOF, Accept negotiation, registration errors,
 * bounds.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cu_prom.h"
#include "test_prom.h"

static void assert_no_substr(const char *text, const char *s)
{
    if (strstr(text, s))
        fail_msg("unexpected \"%s\" in:\n%s", s, text);
}

/* ---------------- escaping ---------------- */

static void test_label_value_escaping(void **state)
{
    (void)state;
    static const struct {
        const char *in, *want;
    } cases[] = {
        { "plain", "plain" },
        { "back\\slash", "back\\\\slash" },
        { "say \"hi\"", "say \\\"hi\\\"" },
        { "two\nlines", "two\\nlines" },
        { "all\\\"\n", "all\\\\\\\"\\n" },
        { "", "" },
        { "caf\xC3\xA9", "caf\xC3\xA9" }, /* UTF-8 passes through */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cu_metrics *m = cu_metrics_new();
        const char *ln[] = { "v" };
        cu_metric_family *f = cu_metrics_family(m, "esc", "h", CU_METRIC_GAUGE, 1, ln, 0, NULL);
        assert_non_null(f);
        const char *v[] = { cases[i].in };
        assert_int_equal(cu_metric_set(f, v, 7), CU_OK);
        char want[128];
        snprintf(want, sizeof(want), "esc{v=\"%s\"} 7", cases[i].want);
        for (int om = 0; om <= 1; om++) {
            char *out = render(m, om);
            assert_line(out, want);
            free(out);
        }
        cu_metrics_free(m);
    }
}

static void test_help_escaping(void **state)
{
    (void)state;
    cu_metrics *m = cu_metrics_new();
    assert_non_null(
        cu_metrics_family(m, "h_total", "a \\ b\nc \"q\"", CU_METRIC_COUNTER, 0, NULL, 0, NULL));
    char *text = render(m, 0);
    /* text format: backslash and newline escaped, quotes kept */
    assert_line(text, "# HELP h_total a \\\\ b\\nc \"q\"");
    assert_line(text, "# TYPE h_total counter");
    free(text);
    char *om = render(m, 1);
    /* OpenMetrics: quotes escaped too, family without _total */
    assert_line(om, "# HELP h a \\\\ b\\nc \\\"q\\\"");
    assert_line(om, "# TYPE h counter");
    free(om);
    cu_metrics_free(m);
}

static void test_invalid_utf8_label_rejected(void **state)
{
    (void)state;
    cu_metrics *m = cu_metrics_new();
    const char *ln[] = { "v" };
    cu_metric_family *f = cu_metrics_family(m, "g", "h", CU_METRIC_GAUGE, 1, ln, 0, NULL);
    static const char *bad[] = { "\xFF", "a\xC3", "\xC0\xAF", "\xED\xA0\x80" /* surrogate */ };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *v[] = { bad[i] };
        assert_int_equal(cu_metric_set(f, v, 1), CU_EINVAL);
    }
    assert_int_equal(cu_metric_family_nseries(f), 0);
    assert_int_equal(cu_metrics_error_count(m), 4);
    assert_non_null(strstr(cu_metrics_last_error(m), "\"g\""));
    assert_non_null(strstr(cu_metrics_last_error(m), "UTF-8"));
    cu_metrics_free(m);
}

/* ---------------- histograms ---------------- */

static void test_histogram_buckets(void **state)
{
    (void)state;
    static const double bounds[] = { 1, 2.5, 5 };
    static const double obs[] = { 0.5, 1, 1.0000001, 2.5, 3, 5, 7, 100, -2, INFINITY };
    cu_metrics *m = cu_metrics_new();
    const char *ln[] = { "cq" };
    cu_metric_family *f =
        cu_metrics_family(m, "wait_seconds", "w", CU_METRIC_HISTOGRAM, 1, ln, 3, bounds);
    assert_non_null(f);
    const char *v[] = { "a" };
    double finite_sum = 0;
    for (size_t i = 0; i < sizeof(obs) / sizeof(obs[0]); i++) {
        assert_int_equal(cu_metric_observe(f, v, obs[i]), CU_OK);
        if (isfinite(obs[i]))
            finite_sum += obs[i];
    }
    assert_int_equal(cu_metric_observe(f, v, NAN), CU_EINVAL);

    /* expected cumulative counts, computed from the definition le >= x */
    uint64_t want[4] = { 0 };
    for (size_t b = 0; b < 4; b++)
        for (size_t i = 0; i < sizeof(obs) / sizeof(obs[0]); i++)
            if (b == 3 || obs[i] <= bounds[b])
                want[b]++;
    uint64_t got[4], count;
    double sum;
    assert_int_equal(cu_metric_get_histogram(f, v, &count, &sum, got), CU_OK);
    for (size_t b = 0; b < 4; b++)
        assert_int_equal(got[b], want[b]);
    assert_int_equal(count, sizeof(obs) / sizeof(obs[0]));
    assert_true(isinf(sum) && sum > 0); /* +Inf was observed */

    char *text = render(m, 0);
    char line[128];
    static const char *les[] = { "1", "2.5", "5", "+Inf" };
    for (size_t b = 0; b < 4; b++) {
        snprintf(line, sizeof(line), "wait_seconds_bucket{cq=\"a\",le=\"%s\"} %llu", les[b],
                 (unsigned long long)want[b]);
        assert_line(text, line);
    }
    assert_line(text, "wait_seconds_sum{cq=\"a\"} +Inf");
    snprintf(line, sizeof(line), "wait_seconds_count{cq=\"a\"} %llu", (unsigned long long)want[3]);
    assert_line(text, line); /* _count == the +Inf bucket */
    assert_line(text, "# TYPE wait_seconds histogram");
    /* buckets come in increasing order, +Inf last, before _sum and _count */
    const char *p1 = strstr(text, "le=\"1\""), *p5 = strstr(text, "le=\"5\"");
    const char *pinf = strstr(text, "le=\"+Inf\""), *psum = strstr(text, "wait_seconds_sum");
    assert_true(p1 && p5 && pinf && psum && p1 < p5 && p5 < pinf && pinf < psum);
    free(text);
    (void)finite_sum;

    /* OpenMetrics: canonical le values */
    char *om = render(m, 1);
    assert_non_null(strstr(om, "wait_seconds_bucket{cq=\"a\",le=\"1.0\"} "));
    assert_non_null(strstr(om, "wait_seconds_bucket{cq=\"a\",le=\"2.5\"} "));
    assert_non_null(strstr(om, "wait_seconds_bucket{cq=\"a\",le=\"5.0\"} "));
    assert_non_null(strstr(om, "le=\"+Inf\""));
    free(om);
    cu_metrics_free(m);
}

static void test_histogram_sum_and_unlabelled(void **state)
{
    (void)state;
    cu_metrics *m = cu_metrics_new();
    static const double bounds[] = { 0.1, 0.2, INFINITY }; /* trailing +Inf is dropped */
    cu_metric_family *f =
        cu_metrics_family(m, "d_seconds", "d", CU_METRIC_HISTOGRAM, 0, NULL, 3, bounds);
    assert_non_null(f);
    size_t nb;
    cu_metric_family_buckets(f, &nb);
    assert_int_equal(nb, 2);
    assert_int_equal(cu_metric_observe(f, NULL, 0.1), CU_OK);
    assert_int_equal(cu_metric_observe(f, NULL, 0.2), CU_OK);
    char *text = render(m, 0);
    assert_line(text, "d_seconds_bucket{le=\"0.1\"} 1");
    assert_line(text, "d_seconds_bucket{le=\"0.2\"} 2");
    assert_line(text, "d_seconds_bucket{le=\"+Inf\"} 2");
    /* 0.1 + 0.2 is 0.30000000000000004: printed so that it reads back */
    assert_line(text, "d_seconds_sum 0.30000000000000004");
    assert_line(text, "d_seconds_count 2");
    free(text);
    cu_metrics_free(m);
}

/* ---------------- counters ---------------- */

static void test_counter_never_decreases(void **state)
{
    (void)state;
    cu_metrics *m = cu_metrics_new();
    const char *ln[] = { "cq" };
    cu_metric_family *c = cu_metrics_family(m, "adm_total", "a", CU_METRIC_COUNTER, 1, ln, 0, NULL);
    cu_metric_family *g = cu_metrics_family(m, "pend", "p", CU_METRIC_GAUGE, 1, ln, 0, NULL);
    const char *v[] = { "q" };
    double x;

    assert_int_equal(cu_metric_inc(c, v, 2), CU_OK);
    assert_int_equal(cu_metric_inc(c, v, 0.5), CU_OK);
    static const double bad_deltas[] = { -1, -0.0001, NAN, INFINITY, -INFINITY };
    for (size_t i = 0; i < sizeof(bad_deltas) / sizeof(bad_deltas[0]); i++)
        assert_int_equal(cu_metric_inc(c, v, bad_deltas[i]), CU_EINVAL);
    assert_int_equal(cu_metric_get(c, v, &x), CU_OK);
    assert_true(x == 2.5);
    assert_int_equal(cu_metrics_error_count(m), 5);

    /* set: only upwards */
    assert_int_equal(cu_metric_set(c, v, 2), CU_EINVAL);
    assert_int_equal(cu_metric_set(c, v, 10), CU_OK);
    assert_int_equal(cu_metric_set(c, v, 10), CU_OK);
    assert_int_equal(cu_metric_get(c, v, &x), CU_OK);
    assert_true(x == 10);
    assert_int_equal(cu_metrics_error_count(m), 6);
    assert_non_null(strstr(cu_metrics_last_error(m), "adm_total"));

    /* wrong types */
    assert_int_equal(cu_metric_observe(c, v, 1), CU_EINVAL);
    assert_int_equal(cu_metrics_error_count(m), 7);

    /* gauges go both ways */
    assert_int_equal(cu_metric_inc(g, v, 3), CU_OK);
    assert_int_equal(cu_metric_inc(g, v, -5), CU_OK);
    assert_int_equal(cu_metric_get(g, v, &x), CU_OK);
    assert_true(x == -2);
    assert_int_equal(cu_metric_set(g, v, NAN), CU_OK);
    assert_int_equal(cu_metrics_error_count(m), 7);

    char *text = render(m, 0);
    assert_line(text, "adm_total{cq=\"q\"} 10");
    assert_line(text, "pend{cq=\"q\"} NaN");
    free(text);
    cu_metrics_free(m);
}

/* ---------------- order ---------------- */

static cu_metrics *build_ordered(int reverse)
{
    cu_metrics *m = cu_metrics_new();
    static const char *names[] = { "b_metric", "a_metric", "c_metric" };
    const char *ln[] = { "x", "y" };
    static const char *vals[][2] = { { "b", "1" }, { "a", "2" }, { "a", "10" },
                                     { "", "z" },  { "B", "0" }, { "a", "1" } };
    cu_metric_family *fs[3];
    for (int i = 0; i < 3; i++) {
        int j = reverse ? 2 - i : i;
        fs[j] = cu_metrics_family(m, names[j], "h", CU_METRIC_GAUGE, 2, ln, 0, NULL);
        assert_non_null(fs[j]);
    }
    size_t nv = sizeof(vals) / sizeof(vals[0]);
    for (int fi = 0; fi < 3; fi++)
        for (size_t i = 0; i < nv; i++) {
            size_t k = reverse ? nv - 1 - i : i;
            assert_int_equal(cu_metric_set(fs[fi], vals[k], (double)k), CU_OK);
        }
    return m;
}

static void test_deterministic_order(void **state)
{
    (void)state;
    cu_metrics *m1 = build_ordered(0), *m2 = build_ordered(1);
    char *t1 = render(m1, 0), *t2 = render(m2, 0);
    assert_string_equal(t1, t2);
    /* families by name */
    const char *a = strstr(t1, "# HELP a_metric"), *b = strstr(t1, "# HELP b_metric");
    const char *c = strstr(t1, "# HELP c_metric");
    assert_true(a && b && c && a < b && b < c);
    /* series by label values, byte-wise, first label first */
    static const char *order[] = { "a_metric{x=\"\",y=\"z\"}",  "a_metric{x=\"B\",y=\"0\"}",
                                   "a_metric{x=\"a\",y=\"1\"}", "a_metric{x=\"a\",y=\"10\"}",
                                   "a_metric{x=\"a\",y=\"2\"}", "a_metric{x=\"b\",y=\"1\"}" };
    const char *prev = t1;
    for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
        const char *p = strstr(t1, order[i]);
        assert_non_null(p);
        assert_true(p > prev);
        prev = p;
    }
    free(t1);
    free(t2);
    cu_metrics_free(m1);
    cu_metrics_free(m2);
}

/* ---------------- delete and reset ---------------- */

static void test_delete(void **state)
{
    (void)state;
    cu_metrics *m = cu_metrics_new();
    const char *l2[] = { "cluster_queue", "status" }, *l1[] = { "cluster_queue" };
    const char *lp[] = { "preempting_cluster_queue", "reason" };
    static const double bnd[] = { 1 };
    cu_metric_family *p = cu_metrics_family(m, "pending", "p", CU_METRIC_GAUGE, 2, l2, 0, NULL);
    cu_metric_family *h =
        cu_metrics_family(m, "wait_seconds", "w", CU_METRIC_HISTOGRAM, 1, l1, 1, bnd);
    cu_metric_family *pr =
        cu_metrics_family(m, "preempted_total", "x", CU_METRIC_COUNTER, 2, lp, 0, NULL);
    /* many series, so the table grows and chains are exercised */
    char name[32];
    for (int i = 0; i < 200; i++) {
        snprintf(name, sizeof(name), "cq%03d", i);
        const char *va[] = { name, "active" }, *vi[] = { name, "inadmissible" };
        const char *vh[] = { name }, *vp[] = { name, "InClusterQueue" };
        assert_int_equal(cu_metric_set(p, va, i), CU_OK);
        assert_int_equal(cu_metric_set(p, vi, i), CU_OK);
        assert_int_equal(cu_metric_observe(h, vh, i), CU_OK);
        assert_int_equal(cu_metric_inc(pr, vp, 1), CU_OK);
    }
    assert_int_equal(cu_metric_family_nseries(p), 400);

    const char *one[] = { "cq007", "active" };
    assert_int_equal(cu_metric_delete(p, one), CU_OK);
    assert_int_equal(cu_metric_delete(p, one), CU_ENOTFOUND);
    assert_int_equal(cu_metric_family_nseries(p), 399);
    double x;
    const char *other[] = { "cq007", "inadmissible" };
    assert_int_equal(cu_metric_get(p, other, &x), CU_OK);
    assert_true(x == 7);

    /* a ClusterQueue goes away: all its series, in every family */
    assert_int_equal(cu_metrics_delete_label(m, "cluster_queue", "cq042"), 3);
    assert_int_equal(cu_metrics_delete_label(m, "preempting_cluster_queue", "cq042"), 1);
    assert_int_equal(cu_metrics_delete_label(m, "cluster_queue", "nope"), 0);
    assert_int_equal(cu_metric_delete_matching(p, "no_such_label", "cq001"), 0);
    char *text = render(m, 0);
    assert_no_substr(text, "cq042");
    assert_non_null(strstr(text, "cq041"));
    assert_no_substr(text, "pending{cluster_queue=\"cq007\",status=\"active\"}");
    free(text);

    /* re-created after delete: starts over */
    const char *vh[] = { "cq042" };
    assert_int_equal(cu_metric_observe(h, vh, 0.5), CU_OK);
    uint64_t cnt;
    assert_int_equal(cu_metric_get_histogram(h, vh, &cnt, NULL, NULL), CU_OK);
    assert_int_equal(cnt, 1);

    cu_metric_reset_family(p);
    assert_int_equal(cu_metric_family_nseries(p), 0);
    text = render(m, 0);
    assert_line(text, "# TYPE pending gauge"); /* the family stays */
    assert_no_substr(text, "pending{");
    free(text);
    cu_metrics_free(m);
}

/* ---------------- numbers ---------------- */

static void test_number_format(void **state)
{
    (void)state;
    static const struct {
        double v;
        const char *want;
    } cases[] = {
        { 0, "0" },
        { 3, "3" },
        { -2, "-2" },
        { 0.1, "0.1" },
        { 2.5, "2.5" },
        { 1e-7, "1e-07" },
        { 1e21, "1e+21" },
        { 123456789012.0, "1.23456789012e+11" },
        { 1.0 / 3, "0.3333333333333333" },
        { INFINITY, "+Inf" },
        { -INFINITY, "-Inf" },
        { NAN, "NaN" },
        { 10240, "10240" },
        { 9007199254740993.0, "9.007199254740992e+15" },
        { 1e6, "1e+06" },
        { 999999, "999999" },
        { 0.0001, "0.0001" },
        { 0.00001, "1e-05" },
        { -0.25, "-0.25" },
        { 1.5e-300, "1.5e-300" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cu_metrics *m = cu_metrics_new();
        cu_metric_family *g = cu_metrics_family(m, "n", "", CU_METRIC_GAUGE, 0, NULL, 0, NULL);
        assert_int_equal(cu_metric_set(g, NULL, cases[i].v), CU_OK);
        char *text = render(m, 0);
        char want[64];
        snprintf(want, sizeof(want), "n %s", cases[i].want);
        assert_line(text, want);
        assert_no_substr(text, "# HELP"); /* empty help: no HELP line */
        free(text);
        cu_metrics_free(m);
    }
    /* any finite double reads back exactly */
    uint64_t seed = 42;
    cu_metrics *m = cu_metrics_new();
    cu_metric_family *g = cu_metrics_family(m, "r", "", CU_METRIC_GAUGE, 0, NULL, 0, NULL);
    for (int i = 0; i < 2000; i++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        double v;
        uint64_t bits = seed;
        memcpy(&v, &bits, sizeof(v));
        if (!isfinite(v))
            continue;
        assert_int_equal(cu_metric_set(g, NULL, v), CU_OK);
        char *text = render(m, 0);
        const char *p = strstr(text, "\nr ");
        assert_non_null(p);
        assert_true(strtod(p + 3, NULL) == v);
        free(text);
    }
    cu_metrics_free(m);
}

/* ---------------- OpenMetrics ---------------- */

static void test_openmetrics(void **state)
{
    (void)state;
    cu_metrics *m = cu_metrics_new();
    const char *ln[] = { "cq" };
    cu_metric_family *c = cu_metrics_family(m, "kueue_admitted_workloads_total", "adm",
                                            CU_METRIC_COUNTER, 1, ln, 0, NULL);
    cu_metric_family *c2 =
        cu_metrics_family(m, "events_total", "ev", CU_METRIC_COUNTER, 0, NULL, 0, NULL);
    const char *il[] = { "version" };
    cu_metric_family *info =
        cu_metrics_family(m, "x_build_info", "b", CU_METRIC_INFO, 1, il, 0, NULL);
    cu_metric_family *g = cu_metrics_family(m, "g", "gauge", CU_METRIC_GAUGE, 0, NULL, 0, NULL);
    assert_non_null(c);
    assert_non_null(c2);
    assert_non_null(info);
    assert_non_null(g);
    const char *v[] = { "q" }, *iv[] = { "1.2.3" };
    assert_int_equal(cu_metric_inc(c, v, 3), CU_OK);
    assert_int_equal(cu_metric_inc(c2, NULL, 1), CU_OK);
    assert_int_equal(cu_metric_set(info, iv, 1), CU_OK);
    assert_int_equal(cu_metric_set(info, iv, 2), CU_EINVAL); /* info is always 1 */
    assert_int_equal(cu_metric_set(g, NULL, 1.5), CU_OK);

    char *om = render(m, 1);
    assert_line(om, "# TYPE kueue_admitted_workloads counter");
    assert_line(om, "# HELP kueue_admitted_workloads adm");
    assert_line(om, "kueue_admitted_workloads_total{cq=\"q\"} 3");
    assert_line(om, "# TYPE events counter");
    assert_line(om, "events_total 1");
    assert_line(om, "# TYPE x_build info");
    assert_line(om, "x_build_info{version=\"1.2.3\"} 1");
    assert_line(om, "# TYPE g gauge");
    assert_line(om, "g 1.5");
    assert_no_substr(om, "# TYPE kueue_admitted_workloads_total");
    /* # EOF exactly once, at the very end */
    size_t n = strlen(om);
    assert_true(n >= 6 && strcmp(om + n - 6, "# EOF\n") == 0);
    assert_true(strstr(om, "# EOF") == om + n - 6);
    /* TYPE comes before HELP and samples within a family */
    assert_true(strstr(om, "# TYPE g gauge") < strstr(om, "# HELP g gauge"));
    free(om);

    char *text = render(m, 0);
    assert_line(text, "# TYPE kueue_admitted_workloads_total counter");
    assert_line(text, "kueue_admitted_workloads_total{cq=\"q\"} 3");
    assert_line(text, "# TYPE x_build_info gauge");
    assert_line(text, "events_total 1");
    assert_no_substr(text, "# EOF");
    free(text);
    cu_metrics_free(m);
}

static void test_accept_negotiation(void **state)
{
    (void)state;
    static const struct {
        const char *accept;
        int want;
    } cases[] = {
        { NULL, 0 },
        { "", 0 },
        { "text/plain", 0 },
        { "*/*", 0 },
        { "application/openmetrics-text", 1 },
        { "Application/OpenMetrics-Text; Version=1.0.0", 1 },
        /* Prometheus 2.x scrape */
        { "application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
          "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
          1 },
        /* Prometheus 3.x default */
        { "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.5,"
          "application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=1.0.0;"
          "escaping=allow-utf-8;q=0.3,text/plain;version=0.0.4;q=0.2,*/*;q=0.1",
          1 },
        /* scrape_protocols with text first */
        { "text/plain;version=0.0.4;q=0.5,application/openmetrics-text;version=1.0.0;q=0.4", 0 },
        { "application/openmetrics-text;version=2.0.0", 0 },
        { "application/openmetrics-text;version=0.0.1", 1 },
        { "application/openmetrics-text;q=0", 0 },
        { "application/openmetrics-text; q=0.1, text/plain", 0 },
        { "text/plain;q=0.3, application/openmetrics-text;q=0.3", 1 },
        { "application/json", 0 },
        { " application/openmetrics-text ; q=0.9 , text/plain ; q=0.8 ", 1 },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        if (cu_metrics_wants_openmetrics(cases[i].accept) != cases[i].want)
            fail_msg("Accept \"%s\": want %d", cases[i].accept ? cases[i].accept : "(null)",
                     cases[i].want);
    assert_string_equal(cu_metrics_content_type(0), "text/plain; version=0.0.4; charset=utf-8");
    assert_string_equal(cu_metrics_content_type(1),
                        "application/openmetrics-text; version=1.0.0; charset=utf-8");
}

/* ---------------- registration ---------------- */

static void test_registration_errors(void **state)
{
    (void)state;
    cu_metrics *m = cu_metrics_new();
    const char *ok[] = { "cq" }, *dup[] = { "a", "a" }, *le[] = { "le" }, *res[] = { "__x" };
    const char *badl[] = { "1a" };
    static const double up[] = { 1, 2 }, flat[] = { 1, 1 }, down[] = { 2, 1 };
    static const double nan_b[] = { NAN };
    const struct {
        const char *name;
        cu_metric_type t;
        size_t nl;
        const char *const *ln;
        size_t nb;
        const double *b;
        const char *msg;
    } cases[] = {
        { "1bad", CU_METRIC_GAUGE, 0, NULL, 0, NULL, "not a valid metric name" },
        { "has-dash", CU_METRIC_GAUGE, 0, NULL, 0, NULL, "not a valid metric name" },
        { "", CU_METRIC_GAUGE, 0, NULL, 0, NULL, "not a valid metric name" },
        { "g1", CU_METRIC_GAUGE, 2, dup, 0, NULL, "given twice" },
        { "g2", CU_METRIC_GAUGE, 1, badl, 0, NULL, "label name \"1a\"" },
        { "g3", CU_METRIC_GAUGE, 1, res, 0, NULL, "label name \"__x\"" },
        { "h1", CU_METRIC_HISTOGRAM, 1, le, 2, up, "\"le\" is reserved" },
        { "h2", CU_METRIC_HISTOGRAM, 0, NULL, 2, flat, "increase strictly" },
        { "h3", CU_METRIC_HISTOGRAM, 0, NULL, 2, down, "increase strictly" },
        { "h4", CU_METRIC_HISTOGRAM, 0, NULL, 1, nan_b, "not a finite number" },
        { "i1", CU_METRIC_INFO, 0, NULL, 0, NULL, "must end in \"_info\"" },
        { "c1", CU_METRIC_COUNTER, 0, NULL, 0, NULL, "must end in \"_total\"" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cu_metric_family *f = cu_metrics_family(m, cases[i].name, "h", cases[i].t, cases[i].nl,
                                                cases[i].ln, cases[i].nb, cases[i].b);
        if (f || !strstr(cu_metrics_last_error(m), cases[i].msg))
            fail_msg("case %zu (%s): got %p, error \"%s\"", i, cases[i].name, (void *)f,
                     cu_metrics_last_error(m));
        if (cases[i].name[0] && !strstr(cu_metrics_last_error(m), cases[i].name))
            fail_msg("case %zu: error does not name the family: %s", i, cu_metrics_last_error(m));
    }

    /* same parameters: the same family; different ones: refused */
    cu_metric_family *h =
        cu_metrics_family(m, "lat_seconds", "h", CU_METRIC_HISTOGRAM, 1, ok, 2, up);
    assert_non_null(h);
    assert_ptr_equal(
        cu_metrics_family(m, "lat_seconds", "other help", CU_METRIC_HISTOGRAM, 1, ok, 2, up), h);
    assert_null(cu_metrics_family(m, "lat_seconds", "h", CU_METRIC_HISTOGRAM, 1, ok, 1, up));
    assert_non_null(strstr(cu_metrics_last_error(m), "already registered"));
    assert_null(cu_metrics_family(m, "lat_seconds", "h", CU_METRIC_GAUGE, 1, ok, 0, NULL));
    assert_ptr_equal(cu_metrics_find(m, "lat_seconds"), h);
    assert_null(cu_metrics_find(m, "nope"));

    /* sample-name clashes */
    static const char *clash[] = { "lat_seconds_count", "lat_seconds_bucket", "lat_seconds_sum" };
    for (size_t i = 0; i < 3; i++) {
        assert_null(cu_metrics_family(m, clash[i], "h", CU_METRIC_GAUGE, 0, NULL, 0, NULL));
        assert_non_null(strstr(cu_metrics_last_error(m), "also used by family \"lat_seconds\""));
    }
    cu_metrics_free(m);
}

/* Kueue has kueue_finished_workloads (gauge) and
 * kueue_finished_workloads_total (counter): both names stay, and in
 * OpenMetrics the counter keeps its full name as an "unknown" family, in
 * whichever order they were registered. */
static void test_openmetrics_family_name_clash(void **state)
{
    (void)state;
    for (int order = 0; order < 2; order++) {
        cu_metrics *m = cu_metrics_new();
        cu_metric_family *g = NULL, *c = NULL;
        for (int i = 0; i < 2; i++) {
            if ((i == 0) == (order == 0))
                g = cu_metrics_family(m, "fin", "g", CU_METRIC_GAUGE, 0, NULL, 0, NULL);
            else
                c = cu_metrics_family(m, "fin_total", "c", CU_METRIC_COUNTER, 0, NULL, 0, NULL);
        }
        assert_non_null(g);
        assert_non_null(c);
        assert_int_equal(cu_metric_set(g, NULL, 2), CU_OK);
        assert_int_equal(cu_metric_inc(c, NULL, 5), CU_OK);
        char *om = render(m, 1);
        assert_line(om, "# TYPE fin gauge");
        assert_line(om, "fin 2");
        assert_line(om, "# TYPE fin_total unknown");
        assert_line(om, "fin_total 5");
        assert_no_substr(om, "# TYPE fin counter");
        free(om);
        char *text = render(m, 0);
        assert_line(text, "# TYPE fin_total counter");
        free(text);
        cu_metrics_free(m);
    }
    /* an info metric gives way to a gauge the same way */
    cu_metrics *m = cu_metrics_new();
    assert_non_null(cu_metrics_family(m, "up", "h", CU_METRIC_GAUGE, 0, NULL, 0, NULL));
    cu_metric_family *i = cu_metrics_family(m, "up_info", "h", CU_METRIC_INFO, 0, NULL, 0, NULL);
    assert_non_null(i);
    assert_int_equal(cu_metric_set(i, NULL, 1), CU_OK);
    char *om = render(m, 1);
    assert_line(om, "# TYPE up_info gauge");
    assert_line(om, "up_info 1");
    free(om);
    cu_metrics_free(m);
}

/* ---------------- bounds ---------------- */

static void test_bounds(void **state)
{
    (void)state;
    cu_metrics *m = cu_metrics_new();
    cu_metrics_set_max_series(m, 3);
    const char *ln[] = { "k" };
    cu_metric_family *g = cu_metrics_family(m, "g", "h", CU_METRIC_GAUGE, 1, ln, 0, NULL);
    const char *v[][1] = { { "a" }, { "b" }, { "c" }, { "d" } };
    for (int i = 0; i < 3; i++)
        assert_int_equal(cu_metric_set(g, v[i], 1), CU_OK);
    assert_int_equal(cu_metric_set(g, v[3], 1), CU_ENOMEM);
    assert_int_equal(cu_metric_set(g, v[0], 2), CU_OK); /* existing series still update */
    assert_non_null(strstr(cu_metrics_last_error(m), "series limit"));
    assert_int_equal(cu_metric_delete(g, v[1]), CU_OK);
    assert_int_equal(cu_metric_set(g, v[3], 1), CU_OK); /* room again */

    cu_buf b;
    cu_buf_init(&b, 40);
    assert_int_equal(cu_metrics_write(m, &b, 0), CU_ENOMEM);
    cu_buf_free(&b);
    cu_metrics_free(m);
    cu_metrics_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_label_value_escaping),
        cmocka_unit_test(test_help_escaping),
        cmocka_unit_test(test_invalid_utf8_label_rejected),
        cmocka_unit_test(test_histogram_buckets),
        cmocka_unit_test(test_histogram_sum_and_unlabelled),
        cmocka_unit_test(test_counter_never_decreases),
        cmocka_unit_test(test_deterministic_order),
        cmocka_unit_test(test_delete),
        cmocka_unit_test(test_number_format),
        cmocka_unit_test(test_openmetrics),
        cmocka_unit_test(test_accept_negotiation),
        cmocka_unit_test(test_registration_errors),
        cmocka_unit_test(test_openmetrics_family_name_clash),
        cmocka_unit_test(test_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
