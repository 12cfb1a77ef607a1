/*
 * test_ctrlstatus.c - status bodies of ClusterQueues, LocalQueues and
 * Cohorts, the status write coalescer, Event bodies, the recorder's dedup
 * and spam filter, and message truncation.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_ctrlstatus.h"

#define T0 1700000000000LL /* 2023-11-14T22:13:20Z */

static json_object *J(const char *s)
{
    json_object *o = json_tokener_parse(s);
    assert_non_null(o);
    return o;
}

/* Asserts that got (borrowed) equals the JSON text want, key order aside. */
static void assert_json(json_object *got, const char *want)
{
    json_object *w = J(want);
    char *a = cu_ctrl_json_canonical(got), *b = cu_ctrl_json_canonical(w);
    assert_non_null(a);
    assert_non_null(b);
    if (strcmp(a, b) != 0)
        fprintf(stderr, "got:  %s\nwant: %s\n", a, b);
    assert_string_equal(a, b);
    free(a);
    free(b);
    json_object_put(w);
}

static json_object *P(json_object *o, const char *dotted)
{
    char key[64];
    const char *p = dotted;
    while (o && *p) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        memcpy(key, p, n);
        key[n] = 0;
        json_object *v = NULL;
        if (json_object_is_type(o, json_type_array)) {
            v = json_object_array_get_idx(o, (size_t)atoi(key));
        } else if (!json_object_object_get_ex(o, key, &v)) {
            return NULL;
        }
        o = v;
        p = dot ? dot + 1 : p + n;
    }
    return o;
}

static const char *PS(json_object *o, const char *dotted)
{
    return json_object_get_string(P(o, dotted));
}

/* ---- status bodies ---- */

static const cu_fr_usage CQ_USAGE[] = {
    { .flavor = "on-demand",
      .resource = "cpu",
      .total = 12000,
      .admitted = 12000,
      .borrowed = 3000,
      .nominal = 9000 },
    { .flavor = "on-demand",
      .resource = "memory",
      .total = 40LL * 1024 * 1024 * 1024,
      .admitted = 40LL * 1024 * 1024 * 1024,
      .borrowed = 4LL * 1024 * 1024 * 1024,
      .nominal = 36LL * 1024 * 1024 * 1024 },
    { .flavor = "spot",
      .resource = "cpu",
      .total = 1500,
      .admitted = 1500,
      .borrowed = 0,
      .nominal = 4000 },
    { .flavor = "spot",
      .resource = "memory",
      .total = 0,
      .admitted = 0,
      .borrowed = 0,
      .nominal = 0 },
};

static void test_cq_status_borrowing(void **st)
{
    (void)st;
    cu_cq_info ci = { .name = "team-a",
                      .cohort = "org",
                      .active = 1,
                      .pending = 2,
                      .reserving = 3,
                      .admitted = 3,
                      .nusage = 4,
                      .usage = CQ_USAGE,
                      .weighted_share = 334 };
    json_object *b = cu_ctrl_cq_status(&ci, 1, NULL, T0);
    assert_non_null(b);
    const char *fl = "[{\"name\":\"on-demand\",\"resources\":["
                     "{\"name\":\"cpu\",\"total\":\"12\",\"borrowed\":\"3\"},"
                     "{\"name\":\"memory\",\"total\":\"40Gi\",\"borrowed\":\"4Gi\"}]},"
                     "{\"name\":\"spot\",\"resources\":["
                     "{\"name\":\"cpu\",\"total\":\"1500m\",\"borrowed\":\"0\"},"
                     "{\"name\":\"memory\",\"total\":\"0\",\"borrowed\":\"0\"}]}]";
    char want[2048];
    snprintf(
        want, sizeof want,
        "{\"status\":{\"pendingWorkloads\":2,\"reservingWorkloads\":3,\"admittedWorkloads\":3,"
        "\"flavorsReservation\":%s,\"flavorsUsage\":%s,"
        "\"conditions\":[{\"type\":\"Active\",\"status\":\"True\",\"reason\":\"Ready\","
        "\"message\":\"Can admit new workloads\",\"lastTransitionTime\":\"2023-11-14T22:13:20Z\"}],"
        "\"fairSharing\":{\"weightedShare\":334}}}",
        fl, fl);
    assert_json(b, want);
    json_object_put(b);

    /* a zero-weight queue that borrows: the CRD's int64 maximum */
    ci.weighted_share = INT64_MAX;
    b = cu_ctrl_cq_status(&ci, 1, NULL, T0);
    assert_int_equal(json_object_get_int64(P(b, "status.fairSharing.weightedShare")), INT64_MAX);
    char *s = cu_ctrl_json_canonical(b);
    assert_non_null(strstr(s, "\"weightedShare\":9223372036854775807"));
    free(s);
    json_object_put(b);
}

static void test_cq_status_inactive(void **st)
{
    (void)st;
    cu_cq_info ci = { .name = "cq",
                      .active = 0,
                      .reason = "FlavorNotFound",
                      .message =
                          "Can't admit new workloads: references missing ResourceFlavor(s): [gpu].",
                      .pending = 5,
                      .nusage = 0,
                      .usage = NULL };
    /* it was Active=True an hour ago: the transition gets now */
    json_object *old =
        J("[{\"type\":\"Other\",\"status\":\"True\",\"reason\":\"X\",\"message\":\"\","
          "\"lastTransitionTime\":\"2023-01-01T00:00:00Z\"},"
          "{\"type\":\"Active\",\"status\":\"True\",\"reason\":\"Ready\","
          "\"message\":\"Can admit new workloads\","
          "\"lastTransitionTime\":\"2023-11-14T21:13:20Z\"}]");
    json_object *b = cu_ctrl_cq_status(&ci, 0, old, T0);
    assert_json(
        b,
        "{\"status\":{\"pendingWorkloads\":5,\"reservingWorkloads\":0,"
        "\"admittedWorkloads\":0,\"flavorsReservation\":[],\"flavorsUsage\":[],"
        "\"conditions\":[{\"type\":\"Other\",\"status\":\"True\",\"reason\":\"X\","
        "\"message\":\"\",\"lastTransitionTime\":\"2023-01-01T00:00:00Z\"},"
        "{\"type\":\"Active\",\"status\":\"False\",\"reason\":\"FlavorNotFound\","
        "\"message\":\"Can't admit new workloads: references missing ResourceFlavor(s): [gpu].\","
        "\"lastTransitionTime\":\"2023-11-14T22:13:20Z\"}],"
        "\"fairSharing\":null}}");
    json_object_put(b);
    /* no reason from the engine: still a valid condition */
    ci.reason = NULL;
    ci.message = NULL;
    b = cu_ctrl_cq_status(&ci, 0, NULL, T0);
    assert_string_equal(PS(b, "status.conditions.0.reason"), "Unknown");
    assert_string_equal(PS(b, "status.conditions.0.message"), "");
    json_object_put(b);
    json_object_put(old);
}

static void test_condition_time_kept(void **st)
{
    (void)st;
    cu_cq_info ci = { .name = "cq", .active = 1 };
    json_object *b1 = cu_ctrl_cq_status(&ci, 0, NULL, T0);
    json_object *c1 = P(b1, "status.conditions");
    /* an hour later, still active: the time stays */
    json_object *b2 = cu_ctrl_cq_status(&ci, 0, c1, T0 + 3600 * 1000);
    assert_string_equal(PS(b2, "status.conditions.0.lastTransitionTime"), "2023-11-14T22:13:20Z");
    assert_int_equal(json_object_array_length(P(b2, "status.conditions")), 1);
    /* then stopped: the time moves */
    ci.active = 0;
    ci.reason = "Stopped";
    ci.message = "Can't admit new workloads: is stopped.";
    json_object *b3 = cu_ctrl_cq_status(&ci, 0, P(b2, "status.conditions"), T0 + 7200 * 1000);
    assert_string_equal(PS(b3, "status.conditions.0.lastTransitionTime"), "2023-11-15T00:13:20Z");
    assert_string_equal(PS(b3, "status.conditions.0.status"), "False");
    /* the same LocalQueue logic */
    cu_lq_info li = { .ns = "team",
                      .name = "lq",
                      .active = 1,
                      .reason = "Ready",
                      .message = "Can submit new workloads to localQueue" };
    json_object *l1 = cu_ctrl_lq_status(&li, NULL, T0);
    json_object *l2 = cu_ctrl_lq_status(&li, P(l1, "status.conditions"), T0 + 5000);
    assert_string_equal(PS(l2, "status.conditions.0.lastTransitionTime"), "2023-11-14T22:13:20Z");
    json_object_put(l1);
    json_object_put(l2);
    json_object_put(b1);
    json_object_put(b2);
    json_object_put(b3);
}

static void test_lq_status(void **st)
{
    (void)st;
    cu_fr_usage u[] = {
        { .flavor = "default", .resource = "cpu", .total = 2500, .admitted = 2500 },
        { .flavor = "default", .resource = "nvidia.com/gpu", .total = 4, .admitted = 4 },
        { .flavor = "default",
          .resource = "memory",
          .total = 1536LL * 1024 * 1024,
          .admitted = 1536LL * 1024 * 1024 },
    };
    cu_lq_info li = { .ns = "team",
                      .name = "lq",
                      .cluster_queue = "cq",
                      .active = 1,
                      .reason = "Ready",
                      .message = "Can submit new workloads to localQueue",
                      .pending = 1,
                      .reserving = 2,
                      .admitted = 2,
                      .nusage = 3,
                      .usage = u };
    json_object *b = cu_ctrl_lq_status(&li, NULL, T0);
    const char *fl = "[{\"name\":\"default\",\"resources\":[{\"name\":\"cpu\",\"total\":\"2500m\"},"
                     "{\"name\":\"nvidia.com/gpu\",\"total\":\"4\"},"
                     "{\"name\":\"memory\",\"total\":\"1536Mi\"}]}]";
    char want[2048];
    snprintf(want, sizeof want,
             "{\"status\":{\"pendingWorkloads\":1,\"reservingWorkloads\":2,\"admittedWorkloads\":2,"
             "\"flavorsReservation\":%s,\"flavorsUsage\":%s,"
             "\"conditions\":[{\"type\":\"Active\",\"status\":\"True\",\"reason\":\"Ready\","
             "\"message\":\"Can submit new workloads to localQueue\","
             "\"lastTransitionTime\":\"2023-11-14T22:13:20Z\"}]}}",
             fl, fl);
    assert_json(b, want);
    json_object_put(b);

    li.active = 0;
    li.reason = "ClusterQueueIsInactive";
    li.message = "Can't submit new workloads to clusterQueue";
    b = cu_ctrl_lq_status(&li, NULL, T0);
    assert_string_equal(PS(b, "status.conditions.0.status"), "False");
    assert_string_equal(PS(b, "status.conditions.0.reason"), "ClusterQueueIsInactive");
    assert_null(P(b, "status.flavorsUsage.0.resources.0.borrowed"));
    json_object_put(b);
}

static void test_status_lists_capped(void **st)
{
    (void)st;
    /* 70 flavors x 20 resources: the CRDs allow 64 (CQ) / 16 (LQ) of each */
    size_t n = 70 * 20;
    cu_fr_usage *u = calloc(n, sizeof(*u));
    char(*names)[16] = calloc(70 + 20, sizeof(*names));
    for (size_t f = 0; f < 70; f++)
        snprintf(names[f], 16, "f%zu", f);
    for (size_t r = 0; r < 20; r++)
        snprintf(names[70 + r], 16, "r%zu", r);
    for (size_t i = 0; i < n; i++) {
        u[i].flavor = names[i / 20];
        u[i].resource = names[70 + i % 20];
        u[i].total = 1000;
        u[i].admitted = 1000;
    }
    cu_cq_info ci = { .name = "cq", .active = 1, .nusage = n, .usage = u };
    json_object *b = cu_ctrl_cq_status(&ci, 0, NULL, T0);
    assert_int_equal(json_object_array_length(P(b, "status.flavorsUsage")), 64);
    assert_int_equal(json_object_array_length(P(b, "status.flavorsUsage.63.resources")), 20);
    assert_string_equal(PS(b, "status.flavorsUsage.63.name"), "f63");
    json_object_put(b);
    cu_lq_info li = { .ns = "n", .name = "lq", .active = 1, .nusage = n, .usage = u };
    b = cu_ctrl_lq_status(&li, NULL, T0);
    assert_int_equal(json_object_array_length(P(b, "status.flavorsReservation")), 16);
    assert_int_equal(json_object_array_length(P(b, "status.flavorsReservation.0.resources")), 16);
    json_object_put(b);
    free(u);
    free(names);
}

static void test_cohort_status(void **st)
{
    (void)st;
    cu_cohort_info hi = { .name = "org", .parent = "root", .active = 1, .weighted_share = 125 };
    json_object *b = cu_ctrl_cohort_status(&hi, 1);
    assert_json(b, "{\"status\":{\"fairSharing\":{\"weightedShare\":125}}}");
    json_object_put(b);
    b = cu_ctrl_cohort_status(&hi, 0);
    assert_json(b, "{\"status\":{\"fairSharing\":null}}");
    json_object_put(b);
}

static void test_canonical(void **st)
{
    (void)st;
    json_object *a = J("{\"b\":[1,{\"y\":\"\\\"q\\n\",\"x\":null}],\"a\":true,\"c\":1.5}");
    json_object *b = J("{\"c\":1.5,\"a\":true,\"b\":[1,{\"x\":null,\"y\":\"\\\"q\\n\"}]}");
    char *sa = cu_ctrl_json_canonical(a), *sb = cu_ctrl_json_canonical(b);
    assert_string_equal(sa, sb);
    assert_string_equal(sa, "{\"a\":true,\"b\":[1,{\"x\":null,\"y\":\"\\\"q\\n\"}],\"c\":1.5}");
    /* and it parses back to the same value */
    json_object *back = J(sa);
    char *sc = cu_ctrl_json_canonical(back);
    assert_string_equal(sa, sc);
    free(sa);
    free(sb);
    free(sc);
    json_object_put(a);
    json_object_put(b);
    json_object_put(back);
}

/* ---- coalescer ---- */

typedef struct writes {
    int n;
    char keys[16][32];
    char bodies[16][128];
} writes;

static void on_due(const char *key, const char *body, void *ud)
{
    writes *w = ud;
    assert_true(w->n < 16);
    snprintf(w->keys[w->n], 32, "%s", key);
    snprintf(w->bodies[w->n], 128, "%s", body);
    w->n++;
}

static json_object *body_n(int n)
{
    json_object *o = json_object_new_object();
    json_object *s = json_object_new_object();
    json_object_object_add(s, "pendingWorkloads", json_object_new_int(n));
    json_object_object_add(o, "status", s);
    return o;
}

static void set_n(cu_coalescer *c, const char *key, int n)
{
    json_object *b = body_n(n);
    assert_int_equal(cu_coalescer_set(c, key, b), CU_OK);
    json_object_put(b);
}

static void test_coalescer_burst_one_write(void **st)
{
    (void)st;
    cu_coalescer *c = cu_coalescer_new(1000);
    writes w = { 0 };
    assert_int_equal(cu_coalescer_next_deadline(c, T0), -1);
    /* 10 changes before the first chance to write: one write, of the last */
    for (int i = 1; i <= 10; i++)
        set_n(c, "cq/a", i);
    assert_int_equal(cu_coalescer_next_deadline(c, T0), T0);
    assert_int_equal(cu_coalescer_due(c, T0, on_due, &w), 1);
    assert_string_equal(w.keys[0], "cq/a");
    assert_string_equal(w.bodies[0], "{\"status\":{\"pendingWorkloads\":10}}");
    /* in flight: nothing due, nothing pending */
    assert_int_equal(cu_coalescer_due(c, T0 + 5000, on_due, &w), 0);
    cu_coalescer_written(c, "cq/a", 1);
    assert_int_equal(cu_coalescer_next_deadline(c, T0 + 10), -1);
    /* 10 changes within the next interval: one more write, at its end */
    for (int i = 11; i <= 20; i++) {
        set_n(c, "cq/a", i);
        assert_int_equal(cu_coalescer_due(c, T0 + 40 * i, on_due, &w), 0);
    }
    assert_int_equal(cu_coalescer_next_deadline(c, T0 + 800), T0 + 1000);
    assert_int_equal(cu_coalescer_due(c, T0 + 999, on_due, &w), 0);
    assert_int_equal(cu_coalescer_due(c, T0 + 1000, on_due, &w), 1);
    assert_string_equal(w.bodies[1], "{\"status\":{\"pendingWorkloads\":20}}");
    cu_coalescer_written(c, "cq/a", 1);
    assert_int_equal(w.n, 2);
    cu_coalescer_free(c);
}

static void test_coalescer_identical_no_write(void **st)
{
    (void)st;
    cu_coalescer *c = cu_coalescer_new(1000);
    writes w = { 0 };
    set_n(c, "cq/a", 1);
    assert_int_equal(cu_coalescer_due(c, T0, on_due, &w), 1);
    cu_coalescer_written(c, "cq/a", 1);
    /* the same body again, built with another key order: no write */
    json_object *same = J("{\"status\":{\"pendingWorkloads\":1}}");
    assert_int_equal(cu_coalescer_set(c, "cq/a", same), CU_OK);
    json_object_put(same);
    assert_int_equal(cu_coalescer_due(c, T0 + 60000, on_due, &w), 0);
    assert_int_equal(cu_coalescer_next_deadline(c, T0 + 60000), -1);
    /* a change and back before the write: no write either */
    set_n(c, "cq/a", 2);
    set_n(c, "cq/a", 1);
    assert_int_equal(cu_coalescer_due(c, T0 + 70000, on_due, &w), 0);
    /* seeded from the API: an equal desired body costs nothing */
    json_object *b = body_n(7);
    assert_int_equal(cu_coalescer_seed(c, "lq/ns/q", b), CU_OK);
    assert_int_equal(cu_coalescer_set(c, "lq/ns/q", b), CU_OK);
    json_object_put(b);
    assert_int_equal(cu_coalescer_due(c, T0 + 80000, on_due, &w), 0);
    assert_int_equal(w.n, 1);
    cu_coalescer_free(c);
}

static void test_coalescer_failure_retried(void **st)
{
    (void)st;
    cu_coalescer *c = cu_coalescer_new(1000);
    writes w = { 0 };
    set_n(c, "cq/a", 1);
    set_n(c, "cq/b", 1);
    assert_int_equal(cu_coalescer_due(c, T0, on_due, &w), 2);
    cu_coalescer_written(c, "cq/a", 0); /* failed */
    cu_coalescer_written(c, "cq/b", 1);
    assert_int_equal(cu_coalescer_next_deadline(c, T0 + 100), T0 + 1000);
    assert_int_equal(cu_coalescer_due(c, T0 + 500, on_due, &w), 0);
    assert_int_equal(cu_coalescer_due(c, T0 + 1000, on_due, &w), 1);
    assert_string_equal(w.keys[2], "cq/a");
    assert_string_equal(w.bodies[2], "{\"status\":{\"pendingWorkloads\":1}}");
    /* a change while in flight is written after the ack and the interval */
    set_n(c, "cq/a", 2);
    assert_int_equal(cu_coalescer_next_deadline(c, T0 + 1100), -1);
    cu_coalescer_written(c, "cq/a", 1);
    assert_int_equal(cu_coalescer_next_deadline(c, T0 + 1100), T0 + 2000);
    assert_int_equal(cu_coalescer_due(c, T0 + 2000, on_due, &w), 1);
    assert_string_equal(w.bodies[3], "{\"status\":{\"pendingWorkloads\":2}}");
    cu_coalescer_free(c);
}

static void test_coalescer_forget(void **st)
{
    (void)st;
    cu_coalescer *c = cu_coalescer_new(1000);
    writes w = { 0 };
    set_n(c, "cq/a", 1);
    set_n(c, "cq/b", 1);
    assert_int_equal(cu_coalescer_size(c), 2);
    cu_coalescer_forget(c, "cq/a");
    assert_int_equal(cu_coalescer_size(c), 1);
    assert_int_equal(cu_coalescer_due(c, T0, on_due, &w), 1);
    assert_string_equal(w.keys[0], "cq/b");
    /* forgotten while in flight: the ack is ignored, the key stays gone */
    cu_coalescer_forget(c, "cq/b");
    cu_coalescer_written(c, "cq/b", 1);
    cu_coalescer_written(c, "nope", 0);
    assert_int_equal(cu_coalescer_size(c), 0);
    assert_int_equal(cu_coalescer_next_deadline(c, T0), -1);
    /* a key set again after forget starts afresh (written at once) */
    set_n(c, "cq/a", 3);
    assert_int_equal(cu_coalescer_due(c, T0 + 1, on_due, &w), 1);
    assert_int_equal(cu_coalescer_set(c, NULL, NULL), CU_EINVAL);
    cu_coalescer_free(c);
}

/* ---- events ---- */

static const cu_event_ref WL = { .api_version = "kueue.x-k8s.io/v1beta2",
                                 .kind = "Workload",
                                 .ns = "team",
                                 .name = "job-pi-1a2b3",
                                 .uid = "u-1",
                                 .resource_version = "42" };

static void test_event_body(void **st)
{
    (void)st;
    json_object *e = cu_ctrl_event_body(&WL, CU_EVENT_NORMAL, CU_EV_QUOTA_RESERVED, "hello",
                                        CU_EVENT_COMPONENT_ADMISSION, T0, 7);
    assert_non_null(e);
    assert_string_equal(PS(e, "apiVersion"), "v1");
    assert_string_equal(PS(e, "kind"), "Event");
    char want_name[64];
    snprintf(want_name, sizeof want_name, "job-pi-1a2b3.%016llx",
             (unsigned long long)(T0 * 1000000ULL + 7));
    assert_string_equal(PS(e, "metadata.name"), want_name);
    assert_int_equal(strlen(PS(e, "metadata.name")), strlen("job-pi-1a2b3.") + 16);
    assert_string_equal(PS(e, "metadata.namespace"), "team");
    assert_json(
        P(e, "involvedObject"),
        "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Workload\",\"namespace\":\"team\","
        "\"name\":\"job-pi-1a2b3\",\"uid\":\"u-1\",\"resourceVersion\":\"42\"}");
    assert_string_equal(PS(e, "reason"), "QuotaReserved");
    assert_string_equal(PS(e, "message"), "hello");
    assert_string_equal(PS(e, "type"), "Normal");
    assert_string_equal(PS(e, "source.component"), "kueue-admission");
    assert_string_equal(PS(e, "reportingComponent"), "kueue-admission");
    assert_string_equal(PS(e, "reportingInstance"), "kueue-admission");
    assert_string_equal(PS(e, "firstTimestamp"), "2023-11-14T22:13:20Z");
    assert_string_equal(PS(e, "lastTimestamp"), "2023-11-14T22:13:20Z");
    assert_int_equal(json_object_get_int(P(e, "count")), 1);
    json_object *et = NULL;
    assert_true(json_object_object_get_ex(e, "eventTime", &et));
    assert_null(et);
    json_object_put(e);

    /* a cluster-scoped object: the Event lives in "default", the
     * involvedObject has no namespace */
    cu_event_ref cq = { .api_version = "kueue.x-k8s.io/v1beta2",
                        .kind = "ClusterQueue",
                        .name = "cq" };
    e = cu_ctrl_event_body(&cq, CU_EVENT_WARNING, "X", NULL, "c", T0, 0);
    assert_string_equal(PS(e, "metadata.namespace"), "default");
    assert_null(P(e, "involvedObject.namespace"));
    assert_null(P(e, "involvedObject.uid"));
    assert_string_equal(PS(e, "message"), "");
    json_object_put(e);
    /* different seq in the same millisecond: different names */
    json_object *a = cu_ctrl_event_body(&cq, "Normal", "X", "m", "c", T0, 1);
    json_object *b = cu_ctrl_event_body(&cq, "Normal", "X", "m", "c", T0, 2);
    assert_string_not_equal(PS(a, "metadata.name"), PS(b, "metadata.name"));
    json_object_put(a);
    json_object_put(b);
    /* missing pieces */
    cu_event_ref bad = { .kind = "Workload" };
    assert_null(cu_ctrl_event_body(&bad, "Normal", "X", "m", "c", T0, 0));
    assert_null(cu_ctrl_event_body(&WL, "Normal", "", "m", "c", T0, 0));
    assert_null(cu_ctrl_event_body(&WL, "Normal", "X", "m", NULL, T0, 0));
}

static void test_truncation_utf8(void **st)
{
    (void)st;
    static const struct {
        const char *s;
        size_t max;
        size_t want;
    } cuts[] = {
        { "abc", 10, 3 },
        { "abc", 2, 2 },
        { "a\xc3\xa9", 2, 1 }, /* é would be split: drop it */
        { "a\xc3\xa9", 3, 3 },
        { "\xe2\x82\xac\xe2\x82\xac", 4, 3 }, /* € € */
        { "\xe2\x82\xac\xe2\x82\xac", 5, 3 },
        { "\xe2\x82\xac\xe2\x82\xac", 6, 6 },
        { "\xf0\x9f\x98\x80x", 3, 0 }, /* a 4-byte emoji */
    };
    for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++)
        assert_int_equal(cu_status_utf8_cut(cuts[i].s, cuts[i].max), cuts[i].want);

    /* an event message: 1019 'a', then é straddling the 1020-byte cut */
    char msg[2048];
    memset(msg, 'a', 1019);
    memcpy(msg + 1019, "\xc3\xa9", 2);
    memset(msg + 1021, 'b', 900);
    msg[1921] = 0;
    json_object *e = cu_ctrl_event_body(&WL, "Warning", "Pending", msg, "c", T0, 0);
    const char *m = PS(e, "message");
    assert_int_equal(strlen(m), 1019 + 4);
    assert_memory_equal(m, msg, 1019);
    assert_string_equal(m + 1019, " ...");
    json_object_put(e);
    /* exactly 1024 bytes: kept whole */
    memset(msg, 'z', 1024);
    msg[1024] = 0;
    e = cu_ctrl_event_body(&WL, "Warning", "Pending", msg, "c", T0, 0);
    assert_string_equal(PS(e, "message"), msg);
    json_object_put(e);
    /* a condition message is cut at 32 KiB the same way */
    char *big = malloc(40000);
    memset(big, 'm', 39999);
    big[39999] = 0;
    cu_cq_info ci = { .name = "cq", .active = 0, .reason = "Stopped", .message = big };
    json_object *b = cu_ctrl_cq_status(&ci, 0, NULL, T0);
    assert_int_equal(strlen(PS(b, "status.conditions.0.message")), CU_COND_MESSAGE_MAX);
    json_object_put(b);
    free(big);
}

static cu_recorder *new_recorder(size_t max)
{
    cu_recorder_opts o = { .component = CU_EVENT_COMPONENT_ADMISSION, .max_entries = max };
    cu_recorder *r = cu_recorder_new(&o);
    assert_non_null(r);
    return r;
}

static void test_recorder_dedup(void **st)
{
    (void)st;
    cu_recorder *r = new_recorder(0);
    cu_event_req q1, q2, q3, q4;
    assert_int_equal(cu_recorder_record(r, &WL, "Warning", "Pending", "no quota", T0, &q1), 1);
    assert_string_equal(q1.method, "POST");
    assert_string_equal(q1.path, "/api/v1/namespaces/team/events");
    assert_string_equal(q1.content_type, "application/json");
    const char *name = PS(q1.body, "metadata.name");
    /* the same event 30 s later: a PATCH of the first one, count 2 */
    assert_int_equal(cu_recorder_record(r, &WL, "Warning", "Pending", "no quota", T0 + 30000, &q2),
                     1);
    assert_string_equal(q2.method, "PATCH");
    char want_path[256];
    snprintf(want_path, sizeof want_path, "/api/v1/namespaces/team/events/%s", name);
    assert_string_equal(q2.path, want_path);
    assert_json(q2.body, "{\"count\":2,\"lastTimestamp\":\"2023-11-14T22:13:50Z\"}");
    /* another message is another Event */
    assert_int_equal(cu_recorder_record(r, &WL, "Warning", "Pending", "other", T0 + 31000, &q3), 1);
    assert_string_equal(q3.method, "POST");
    cu_event_req_free(&q3);
    /* more than 10 minutes after the last occurrence: a new Event */
    assert_int_equal(
        cu_recorder_record(r, &WL, "Warning", "Pending", "no quota", T0 + 30000 + 600001, &q4), 1);
    assert_string_equal(q4.method, "POST");
    assert_int_equal(json_object_get_int(P(q4.body, "count")), 1);
    assert_string_not_equal(PS(q4.body, "metadata.name"), name);
    /* that POST failed: the next one is a POST again, not a PATCH */
    cu_recorder_failed(r, &q4);
    cu_event_req q5;
    assert_int_equal(
        cu_recorder_record(r, &WL, "Warning", "Pending", "no quota", T0 + 30000 + 600002, &q5), 1);
    assert_string_equal(q5.method, "POST");
    cu_event_req q6;
    assert_int_equal(
        cu_recorder_record(r, &WL, "Warning", "Pending", "no quota", T0 + 30000 + 600003, &q6), 1);
    assert_string_equal(q6.method, "PATCH");
    /* a PATCH answered 404: forget, next is a POST */
    cu_recorder_failed(r, &q6);
    cu_event_req q7;
    assert_int_equal(
        cu_recorder_record(r, &WL, "Warning", "Pending", "no quota", T0 + 30000 + 600004, &q7), 1);
    assert_string_equal(q7.method, "POST");
    cu_event_req_free(&q1);
    cu_event_req_free(&q2);
    cu_event_req_free(&q4);
    cu_event_req_free(&q5);
    cu_event_req_free(&q6);
    cu_event_req_free(&q7);
    /* bad input */
    cu_event_req q;
    assert_int_equal(cu_recorder_record(r, &WL, "Info", "X", "m", T0, &q), CU_EINVAL);
    assert_int_equal(cu_recorder_record(r, &WL, "Normal", NULL, "m", T0, &q), CU_EINVAL);
    cu_recorder_free(r);
    cu_recorder_opts none = { 0 };
    assert_null(cu_recorder_new(&none));
}

static void test_recorder_spam_filter(void **st)
{
    (void)st;
    cu_recorder *r = new_recorder(0);
    cu_event_req q;
    char msg[32];
    /* 25 events on one object go out, the 26th is dropped */
    for (int i = 0; i < 25; i++) {
        snprintf(msg, sizeof msg, "m%d", i);
        assert_int_equal(cu_recorder_record(r, &WL, "Normal", "X", msg, T0 + i, &q), 1);
        cu_event_req_free(&q);
    }
    memset(&q, 0x5a, sizeof q);
    assert_int_equal(cu_recorder_record(r, &WL, "Normal", "X", "m25", T0 + 30, &q), 0);
    /* deduplicated ones count too */
    assert_int_equal(cu_recorder_record(r, &WL, "Normal", "X", "m0", T0 + 31, &q), 0);
    /* another object has its own bucket */
    cu_event_ref other = WL;
    other.name = "other";
    other.uid = "u-2";
    assert_int_equal(cu_recorder_record(r, &other, "Normal", "X", "m", T0 + 32, &q), 1);
    cu_event_req_free(&q);
    /* one token per 5 minutes */
    assert_int_equal(cu_recorder_record(r, &WL, "Normal", "X", "m26", T0 + 299999, &q), 0);
    assert_int_equal(cu_recorder_record(r, &WL, "Normal", "X", "m27", T0 + 300030, &q), 1);
    cu_event_req_free(&q);
    assert_int_equal(cu_recorder_record(r, &WL, "Normal", "X", "m28", T0 + 300031, &q), 0);
    /* a long quiet period refills up to the burst, not beyond */
    int ok = 0;
    for (int i = 0; i < 40; i++) {
        snprintf(msg, sizeof msg, "late%d", i);
        int rc = cu_recorder_record(r, &WL, "Normal", "X", msg, T0 + 86400000LL, &q);
        if (rc == 1) {
            ok++;
            cu_event_req_free(&q);
        }
    }
    assert_int_equal(ok, 25);
    cu_recorder_free(r);
}

static void test_recorder_lru_bound(void **st)
{
    (void)st;
    cu_recorder *r = new_recorder(4);
    cu_event_req q;
    char name[16];
    /* 5 objects through a cache of 4: the first is forgotten */
    for (int i = 0; i < 5; i++) {
        cu_event_ref o = WL;
        snprintf(name, sizeof name, "w%d", i);
        o.name = name;
        assert_int_equal(cu_recorder_record(r, &o, "Normal", "X", "m", T0 + i, &q), 1);
        assert_string_equal(q.method, "POST");
        cu_event_req_free(&q);
    }
    cu_event_ref o = WL;
    o.name = "w4";
    assert_int_equal(cu_recorder_record(r, &o, "Normal", "X", "m", T0 + 10, &q), 1);
    assert_string_equal(q.method, "PATCH");
    cu_event_req_free(&q);
    o.name = "w0";
    assert_int_equal(cu_recorder_record(r, &o, "Normal", "X", "m", T0 + 11, &q), 1);
    assert_string_equal(q.method, "POST");
    cu_event_req_free(&q);
    cu_recorder_free(r);
}

static void test_event_messages(void **st)
{
    (void)st;
    char b[CU_EVENT_MESSAGE_MAX];
    static const struct {
        int64_t ms;
        const char *want;
    } waits[] = {
        { 0, "Quota reserved in ClusterQueue cq, wait time since queued was 0s" },
        { 1499, "Quota reserved in ClusterQueue cq, wait time since queued was 1s" },
        { 1500, "Quota reserved in ClusterQueue cq, wait time since queued was 2s" },
        { 2500, "Quota reserved in ClusterQueue cq, wait time since queued was 2s" },
        { 61700, "Quota reserved in ClusterQueue cq, wait time since queued was 62s" },
    };
    for (size_t i = 0; i < sizeof(waits) / sizeof(waits[0]); i++)
        assert_string_equal(cu_ctrl_event_msg_quota_reserved(b, sizeof b, "cq", waits[i].ms),
                            waits[i].want);
    assert_string_equal(cu_ctrl_event_msg_admitted(b, sizeof b, "cq", 0),
                        "Admitted by ClusterQueue cq, wait time since reservation was 0s");
    assert_string_equal(cu_ctrl_event_msg_admitted(b, sizeof b, "cq", 7400),
                        "Admitted by ClusterQueue cq, wait time since reservation was 7s");
    assert_string_equal(cu_ctrl_event_msg_started(b, sizeof b, "cq"),
                        "Admitted by clusterQueue cq");
    assert_string_equal(cu_ctrl_event_msg_created_workload(b, sizeof b, "ns", "job-x-1"),
                        "Created Workload: ns/job-x-1");
    assert_string_equal(cu_ctrl_event_msg_finished(b, sizeof b, "ns", "job-x-1"),
                        "Workload 'ns/job-x-1' is declared finished");
    assert_string_equal(cu_ctrl_event_msg_deleted_workload(b, sizeof b, "ns", "w"),
                        "Deleted not matching Workload: ns/w");
    assert_string_equal(cu_ctrl_event_reason_evicted(b, sizeof b, "Preempted", NULL),
                        "EvictedDueToPreempted");
    assert_string_equal(cu_ctrl_event_reason_evicted(b, sizeof b, "PodsReadyTimeout", "x"),
                        "EvictedDueToPodsReadyTimeout");
    assert_string_equal(
        cu_ctrl_event_reason_evicted(b, sizeof b, "Deactivated", "RequeuingLimitExceeded"),
        "EvictedDueToDeactivatedDueToRequeuingLimitExceeded");
}

/* ---- `controller_test_ctrlstatus --dump DIR [WL_UID CQ_UID]`: the bodies this module
 * builds, written for e2e/ctrlstatus-accept.sh, which sends them to
 * `cueue cluster` (schema validation on) ---- */

static int write_body(const char *dir, const char *file, json_object *b)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "w");
    char *s = cu_ctrl_json_canonical(b);
    int ok = f && s && fprintf(f, "%s\n", s) > 0;
    free(s);
    if (f && fclose(f) != 0)
        ok = 0;
    json_object_put(b);
    if (!ok)
        fprintf(stderr, "cannot write %s\n", path);
    return ok ? 0 : 1;
}

static int write_req(FILE *f, const cu_event_req *q)
{
    return fprintf(f, "%s %s %s %s\n", q->method, q->path, q->content_type,
                   json_object_to_json_string_ext(q->body, JSON_C_TO_STRING_PLAIN)) > 0;
}

static int dump_bodies(const char *dir, const char *wl_uid, const char *cq_uid)
{
    int64_t now = T0;
    int rc = 0;
    cu_cq_info ci = { .name = "cq",
                      .cohort = "org",
                      .active = 1,
                      .pending = 2,
                      .reserving = 3,
                      .admitted = 3,
                      .nusage = 4,
                      .usage = CQ_USAGE,
                      .weighted_share = INT64_MAX };
    rc |= write_body(dir, "cq.json", cu_ctrl_cq_status(&ci, 1, NULL, now));
    ci.active = 0;
    ci.reason = "FlavorNotFound";
    ci.message = "Can't admit new workloads: references missing ResourceFlavor(s): [gpu].";
    rc |= write_body(dir, "cq-inactive.json", cu_ctrl_cq_status(&ci, 0, NULL, now));
    cu_fr_usage lu[] = {
        { .flavor = "on-demand", .resource = "cpu", .total = 2500, .admitted = 2500 },
        { .flavor = "on-demand", .resource = "memory", .total = 0, .admitted = 0 }
    };
    cu_lq_info li = { .ns = "default",
                      .name = "lq",
                      .active = 1,
                      .reason = "Ready",
                      .message = "Can submit new workloads to localQueue",
                      .pending = 1,
                      .reserving = 1,
                      .admitted = 1,
                      .nusage = 2,
                      .usage = lu };
    rc |= write_body(dir, "lq.json", cu_ctrl_lq_status(&li, NULL, now));
    cu_cohort_info hi = { .name = "org", .weighted_share = 250 };
    rc |= write_body(dir, "cohort.json", cu_ctrl_cohort_status(&hi, 1));

    char path[4096];
    snprintf(path, sizeof path, "%s/events.txt", dir);
    FILE *f = fopen(path, "w");
    cu_recorder_opts o = { .component = CU_EVENT_COMPONENT_ADMISSION };
    cu_recorder *r = cu_recorder_new(&o);
    if (!f || !r) {
        fprintf(stderr, "cannot write %s\n", path);
        if (f)
            fclose(f);
        cu_recorder_free(r);
        return 1;
    }
    cu_event_ref wl = { .api_version = "kueue.x-k8s.io/v1beta2",
                        .kind = "Workload",
                        .ns = "default",
                        .name = "wl-1",
                        .uid = wl_uid };
    cu_event_ref cq = {
        .api_version = "kueue.x-k8s.io/v1beta2", .kind = "ClusterQueue", .name = "cq", .uid = cq_uid
    };
    char msg[2048];
    cu_event_req q;
    /* QuotaReserved twice: POST, then PATCH count 2 */
    cu_ctrl_event_msg_quota_reserved(msg, sizeof msg, "cq", 2500);
    for (int i = 0; i < 2; i++) {
        if (cu_recorder_record(r, &wl, CU_EVENT_NORMAL, CU_EV_QUOTA_RESERVED, msg, now + i * 1000,
                               &q) != 1 ||
            !write_req(f, &q))
            rc = 1;
        cu_event_req_free(&q);
    }
    /* a Pending warning longer than 1024 bytes, with UTF-8 at the cut */
    memset(msg, 'x', 1019);
    snprintf(msg + 1019, sizeof msg - 1019, "\xc3\xa9 and more text that is cut away");
    if (cu_recorder_record(r, &wl, CU_EVENT_WARNING, CU_EV_PENDING, msg, now + 2000, &q) != 1 ||
        !write_req(f, &q))
        rc = 1;
    cu_event_req_free(&q);
    /* a cluster-scoped object */
    if (cu_recorder_record(r, &cq, CU_EVENT_NORMAL, "Test", "on a ClusterQueue", now, &q) != 1 ||
        !write_req(f, &q))
        rc = 1;
    cu_event_req_free(&q);
    cu_recorder_free(r);
    if (fclose(f) != 0)
        rc = 1;
    return rc;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "--dump") == 0)
        return dump_bodies(argv[2], argc > 3 ? argv[3] : "uid-wl-1", argc > 4 ? argv[4] : "uid-cq");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cq_status_borrowing),
        cmocka_unit_test(test_cq_status_inactive),
        cmocka_unit_test(test_condition_time_kept),
        cmocka_unit_test(test_lq_status),
        cmocka_unit_test(test_status_lists_capped),
        cmocka_unit_test(test_cohort_status),
        cmocka_unit_test(test_canonical),
        cmocka_unit_test(test_coalescer_burst_one_write),
        cmocka_unit_test(test_coalescer_identical_no_write),
        cmocka_unit_test(test_coalescer_failure_retried),
        cmocka_unit_test(test_coalescer_forget),
        cmocka_unit_test(test_event_body),
        cmocka_unit_test(test_truncation_utf8),
        cmocka_unit_test(test_recorder_dedup),
        cmocka_unit_test(test_recorder_spam_filter),
        cmocka_unit_test(test_recorder_lru_bound),
        cmocka_unit_test(test_event_messages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
