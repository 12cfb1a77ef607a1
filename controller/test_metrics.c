/*
 * test_metrics.c - the catalogue of the controller's metrics: its layout,
 * rejected updates counted in cueue_metrics_errors_total, and a full
 * catalogue scrape checked by `promtool check metrics` when promtool is
 * installed. The registry itself is tested in base/test_prom.c.
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

#include "cu_metrics.h"
#include "cu_tas.h"
#include "test_prom.h"

static void test_errors_counted_in_catalogue(void **state)
{
    (void)state;
    cu_metrics *m = cu_metrics_new();
    cu_kueue_metrics k;
    assert_int_equal(cu_metrics_kueue_register(m, &k), CU_OK);
    const char *v[] = { "cq1", "", "leader" };
    assert_int_equal(cu_metric_inc(k.admitted_workloads_total, v, -1), CU_EINVAL);
    assert_int_equal(cu_metric_inc(k.admitted_workloads_total, v, -3), CU_EINVAL);
    assert_int_equal(cu_metric_observe(k.admitted_workloads_total, v, 1), CU_EINVAL);
    double x;
    const char *r1[] = { "counter_decrease" }, *r2[] = { "wrong_type" };
    assert_int_equal(cu_metric_get(k.cueue_metrics_errors_total, r1, &x), CU_OK);
    assert_true(x == 2);
    assert_int_equal(cu_metric_get(k.cueue_metrics_errors_total, r2, &x), CU_OK);
    assert_true(x == 1);
    assert_int_equal(cu_metric_get(k.admitted_workloads_total, v, &x), CU_ENOTFOUND);
    cu_metrics_free(m);
}

/* ---------------- the catalogue ---------------- */

#define NFAM (sizeof(cu_kueue_metrics) / sizeof(cu_metric_family *))

static void test_catalogue_layout(void **state)
{
    (void)state;
    cu_metrics *m = cu_metrics_new();
    cu_kueue_metrics k;
    assert_int_equal(cu_metrics_kueue_register(m, &k), CU_OK);
    cu_metric_family **all = (cu_metric_family **)&k;
    for (size_t i = 0; i < NFAM; i++)
        assert_non_null(all[i]);
    /* registering twice gives the same families */
    cu_kueue_metrics k2;
    assert_int_equal(cu_metrics_kueue_register(m, &k2), CU_OK);
    assert_memory_equal(&k, &k2, sizeof(k));

    /* Kueue's layouts: E16 for admission wait, E14 for the others, the
     * Prometheus defaults for the attempt duration */
    size_t nb;
    const double *b = cu_metric_family_buckets(k.admission_wait_time_seconds, &nb);
    assert_int_equal(nb, 16);
    assert_true(b[0] == 1 && b[1] == 2.5 && b[2] == 5 && b[13] == 10240 && b[15] == 40960);
    b = cu_metric_family_buckets(k.quota_reserved_wait_time_seconds, &nb);
    assert_int_equal(nb, 14);
    assert_true(b[13] == 10240);
    cu_metric_family_buckets(k.local_queue_admission_wait_time_seconds, &nb);
    assert_int_equal(nb, 14);
    cu_metric_family_buckets(k.execution_time_seconds, &nb);
    assert_int_equal(nb, 16);
    b = cu_metric_family_buckets(k.admission_attempt_duration_seconds, &nb);
    assert_int_equal(nb, 11);
    assert_true(b[0] == 0.005 && b[10] == 10);

    assert_string_equal(cu_metric_family_name(k.admitted_workloads_total),
                        "kueue_admitted_workloads_total");
    assert_string_equal(cu_metric_family_name(k.cueue_cycle_seconds),
                        "cueue_scheduling_cycle_duration_seconds");
    assert_int_equal(cu_metric_family_nlabels(k.evicted_workloads_total), 5);
    assert_int_equal(cu_metric_family_type(k.build_info), CU_METRIC_INFO);

    /* an update with Kueue's labels shows up as Kueue writes it */
    const char *v[] = { "team-a", "high", "standalone" };
    assert_int_equal(cu_metric_observe(k.admission_wait_time_seconds, v, 3), CU_OK);
    char *text = render(m, 0);
    assert_line(text, "kueue_admission_wait_time_seconds_bucket{cluster_queue=\"team-a\","
                      "priority_class=\"high\",replica_role=\"standalone\",le=\"2.5\"} 0");
    assert_line(text, "kueue_admission_wait_time_seconds_bucket{cluster_queue=\"team-a\","
                      "priority_class=\"high\",replica_role=\"standalone\",le=\"5\"} 1");
    free(text);

    /* a clash with something already registered is reported */
    cu_metrics *m2 = cu_metrics_new();
    assert_non_null(
        cu_metrics_family(m2, "kueue_pending_workloads", "x", CU_METRIC_GAUGE, 0, NULL, 0, NULL));
    assert_int_equal(cu_metrics_kueue_register(m2, &k2), CU_EINVAL);
    assert_non_null(strstr(cu_metrics_last_error(m2), "kueue_pending_workloads"));
    cu_metrics_free(m2);
    cu_metrics_free(m);
}

/* Fills every family of the catalogue with two series. */
static void populate_all(cu_kueue_metrics *k)
{
    cu_metric_family **all = (cu_metric_family **)k;
    for (size_t i = 0; i < NFAM; i++) {
        cu_metric_family *f = all[i];
        size_t nl = cu_metric_family_nlabels(f);
        for (int s = 0; s < 2; s++) {
            char bufs[CU_METRICS_MAX_LABELS][48];
            const char *vals[CU_METRICS_MAX_LABELS];
            for (size_t l = 0; l < nl; l++) {
                /* the second series has characters that need escaping */
                snprintf(bufs[l], sizeof(bufs[l]), s ? "q\"%zu\\\n\xC3\xA9" : "v%zu", l);
                vals[l] = bufs[l];
            }
            switch (cu_metric_family_type(f)) {
            case CU_METRIC_COUNTER: assert_int_equal(cu_metric_inc(f, vals, 3 + s), CU_OK); break;
            case CU_METRIC_GAUGE:
                assert_int_equal(cu_metric_set(f, vals, s ? INFINITY : 0.25), CU_OK);
                break;
            case CU_METRIC_INFO: assert_int_equal(cu_metric_set(f, vals, 1), CU_OK); break;
            case CU_METRIC_HISTOGRAM:
                for (int j = 0; j < 40; j++)
                    assert_int_equal(cu_metric_observe(f, vals, j * j * 0.37), CU_OK);
                break;
            }
        }
    }
}

static void test_catalogue_promtool(void **state)
{
    (void)state;
    cu_metrics *m = cu_metrics_new();
    cu_kueue_metrics k;
    assert_int_equal(cu_metrics_kueue_register(m, &k), CU_OK);
    populate_all(&k);
    char *text = render(m, 0);
    char *om = render(m, 1);
    /* every family present in both formats */
    cu_metric_family **all = (cu_metric_family **)&k;
    for (size_t i = 0; i < NFAM; i++) {
        char line[160];
        snprintf(line, sizeof(line), "# TYPE %s ", cu_metric_family_name(all[i]));
        assert_non_null(strstr(text, line));
    }
    assert_int_equal(cu_metrics_error_count(m), 0);

    char tmpl[] = "/tmp/cu_metrics_scrapeXXXXXX";
    int fd = mkstemp(tmpl);
    assert_true(fd >= 0);
    FILE *fp = fdopen(fd, "w");
    assert_non_null(fp);
    assert_int_equal(fputs(text, fp) >= 0, 1);
    fclose(fp);

    if (system("command -v promtool >/dev/null 2>&1") != 0) {
        print_message("promtool not installed: skipping `promtool check metrics` "
                      "(Debian package prometheus provides it)\n");
    } else {
        char cmd[256];
        snprintf(cmd, sizeof(cmd), "promtool check metrics < %s > %s.out 2>&1", tmpl, tmpl);
        int rc = system(cmd);
        char outp[300];
        snprintf(outp, sizeof(outp), "%s.out", tmpl);
        FILE *o = fopen(outp, "r");
        char msg[4096] = "";
        if (o) {
            size_t n = fread(msg, 1, sizeof(msg) - 1, o);
            msg[n] = '\0';
            fclose(o);
        }
        unlink(outp);
        if (rc != 0 || msg[0])
            fail_msg("promtool check metrics failed (rc %d):\n%s\nscrape kept in %s", rc, msg,
                     tmpl);
    }
    unlink(tmpl);
    free(text);
    free(om);
    cu_metrics_free(m);
}

/* ---------------- Topology-Aware Scheduling ---------------- */

/* Four 8-GPU nodes, single-GPU pods holding 6 on each: 2 free per node, 8
 * in all; a pending shape of 3 GPUs places nothing, one of 2 places 4 pods. */
static void test_tas_flavor_gauges(void **state)
{
    (void)state;
    cu_metrics *m = cu_metrics_new();
    cu_kueue_metrics k;
    assert_int_equal(cu_metrics_kueue_register(m, &k), CU_OK);
    const char *levels[] = { "rack", "kubernetes.io/hostname" };
    cu_tas_flavor fl = { .name = "default", .nlevels = 2, .levels = levels };
    cu_tas *t = cu_tas_new(&fl);
    assert_non_null(t);
    const char *names[] = { "gpu-a", "gpu-b", "gpu-c", "gpu-d" };
    cu_res alloc[] = { { "cpu", 32000 }, { "nvidia.com/gpu", 8 }, { "pods", 110 } };
    cu_reslist al = { 3, alloc };
    cu_res one[] = { { "nvidia.com/gpu", 1 } };
    cu_reslist onegpu = { 1, one };
    for (int i = 0; i < 4; i++) {
        cu_kv kv[] = { { "rack", i < 2 ? "r1" : "r2" }, { "kubernetes.io/hostname", names[i] } };
        cu_kvs labels = { 2, kv };
        cu_tas_node n = { .name = names[i], .labels = &labels, .allocatable = &al, .ready = 1 };
        assert_int_equal(cu_tas_node_set(t, &n), CU_OK);
        assert_int_equal(cu_tas_usage(t, names[i], &onegpu, 6, +1), CU_OK);
    }
    const char *res[] = { "nvidia.com/gpu" };
    const char *nodes[] = { "gpu-a", "gpu-b", "gpu-c", "gpu-d", "gone" };
    cu_res three[] = { { "nvidia.com/gpu", 3 } };
    cu_reslist shape3 = { 1, three };
    cu_metrics_tas_flavor(&k, "h100", t, res, 1, nodes, 5, &shape3);
    double x = -1;
    const char *a[] = { "h100", "nvidia.com/gpu" };
    assert_int_equal(cu_metric_get(k.cueue_tas_largest_node_free, a, &x), CU_OK);
    assert_true(x == 2);
    assert_int_equal(cu_metric_get(k.cueue_tas_placeable, a, &x), CU_OK);
    assert_true(x == 0); /* no node has 3 free */
    const char *b[] = { "h100", "gpu-c", "nvidia.com/gpu" };
    assert_int_equal(cu_metric_get(k.cueue_tas_node_free, b, &x), CU_OK);
    assert_true(x == 2);
    const char *gone[] = { "h100", "gone", "nvidia.com/gpu" };
    assert_int_equal(cu_metric_get(k.cueue_tas_node_free, gone, &x), CU_ENOTFOUND);
    /* a node frees 3: one pod of 3 fits there */
    assert_int_equal(cu_tas_usage(t, "gpu-a", &onegpu, 3, -1), CU_OK);
    cu_metrics_tas_flavor(&k, "h100", t, res, 1, nodes, 5, &shape3);
    assert_int_equal(cu_metric_get(k.cueue_tas_placeable, a, &x), CU_OK);
    assert_true(x == 3);
    assert_int_equal(cu_metric_get(k.cueue_tas_largest_node_free, a, &x), CU_OK);
    assert_true(x == 5);
    /* no shape waits: no placeable series is written */
    cu_metric_reset_family(k.cueue_tas_placeable);
    cu_metrics_tas_flavor(&k, "h100", t, res, 1, nodes, 5, NULL);
    assert_int_equal(cu_metric_get(k.cueue_tas_placeable, a, &x), CU_ENOTFOUND);
    cu_tas_free(t);
    cu_metrics_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_errors_counted_in_catalogue),
        cmocka_unit_test(test_catalogue_layout),
        cmocka_unit_test(test_tas_flavor_gauges),
        cmocka_unit_test(test_catalogue_promtool),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
