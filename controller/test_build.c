/*
 * test_build.c - the controller's pure pieces: json -> cu_node conversion
 * (decoded by cu_world_decode), the Workload built for a Job, condition
 * merging, the admission status patch and the Job start patch.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "cu_controller.h"

static json_object *J(const char *s)
{
    json_object *o = json_tokener_parse(s);
    assert_non_null(o);
    return o;
}

static const char *S(json_object *o, const char *a, const char *b, const char *c)
{
    json_object *v = o;
    const char *ks[3] = { a, b, c };
    for (int i = 0; i < 3 && ks[i]; i++)
        if (!json_object_object_get_ex(v, ks[i], &v))
            return NULL;
    return json_object_get_string(v);
}

static const char JOB[] =
    "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"pi\",\"namespace\":\"team\","
    "\"uid\":\"u-1\",\"labels\":{\"kueue.x-k8s.io/queue-name\":\"lq\","
    "\"kueue.x-k8s.io/priority-class\":\"high\"}},"
    "\"spec\":{\"suspend\":true,\"parallelism\":%d,\"completions\":%d,\"template\":{\"spec\":{"
    "\"nodeSelector\":{\"a\":\"b\"},\"tolerations\":[{\"key\":\"t\",\"operator\":\"Exists\"}],"
    "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1500m\"}}}]}}}}";

static void test_json_to_node_decodes(void **st)
{
    (void)st;
    json_object *o =
        J("{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ClusterQueue\","
          "\"metadata\":{\"name\":\"cq\"},\"spec\":{\"namespaceSelector\":{},"
          "\"resourceGroups\":[{\"coveredResources\":[\"cpu\"],\"flavors\":[{\"name\":\"f\","
          "\"resources\":[{\"name\":\"cpu\",\"nominalQuota\":4}]}]}],"
          "\"fairSharing\":{\"weight\":0.5},\"x\":null,\"y\":true}}");
    cu_world w;
    cu_diag d;
    cu_world_init(&w);
    cu_diag_init(&d);
    cu_node *n = cu_node_from_json(&w.arena, o);
    assert_non_null(n);
    assert_true(cu_node_is_null(cu_node_path(n, "spec.x")));
    int b = 0;
    assert_int_equal(cu_node_bool(cu_node_path(n, "spec.y"), &b), CU_OK);
    assert_int_equal(b, 1);
    cu_doc doc = { .file = "t", .root = n };
    assert_int_equal(cu_world_decode(&w, &doc, &d), CU_OK);
    assert_int_equal(w.cqs.n, 1);
    assert_int_equal(w.cqs.items[0]->groups.items[0].flavors[0].res[0].nominal, 4000);
    assert_int_equal(w.cqs.items[0]->fs_weight, 500);
    cu_diag_free(&d);
    cu_world_free(&w);
    json_object_put(o);
}

static void test_workload_for_job(void **st)
{
    (void)st;
    static const struct {
        int par, comp, count;
    } cases[] = { { 3, 5, 3 }, { 4, 2, 2 }, { 1, 1, 1 } };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char buf[2048];
        snprintf(buf, sizeof(buf), JOB, cases[i].par, cases[i].comp);
        json_object *job = J(buf);
        cu_diag d;
        cu_diag_init(&d);
        json_object *wl = cu_ctrl_workload_for_job(job, &d);
        assert_non_null(wl);
        cu_arena a;
        cu_arena_init(&a, 0);
        assert_string_equal(S(wl, "metadata", "name", NULL), cu_job_workload_name(&a, "pi", "u-1"));
        cu_arena_free(&a);
        assert_string_equal(S(wl, "metadata", "namespace", NULL), "team");
        assert_string_equal(S(wl, "spec", "queueName", NULL), "lq");
        assert_string_equal(S(wl, "spec", "priorityClassRef", "name"), "high");
        assert_string_equal(S(wl, "spec", "priorityClassRef", "kind"), "WorkloadPriorityClass");
        json_object *own = json_object_array_get_idx(
            json_object_object_get(json_object_object_get(wl, "metadata"), "ownerReferences"), 0);
        assert_string_equal(S(own, "uid", NULL, NULL), "u-1");
        assert_true(json_object_get_boolean(json_object_object_get(own, "controller")));
        json_object *ps = json_object_array_get_idx(
            json_object_object_get(json_object_object_get(wl, "spec"), "podSets"), 0);
        assert_int_equal(json_object_get_int(json_object_object_get(ps, "count")), cases[i].count);
        /* Kueue (TAS on by default) gives every Job's pod set its index label */
        assert_string_equal(S(ps, "topologyRequest", "podIndexLabel", NULL),
                            "batch.kubernetes.io/job-completion-index");
        assert_null(
            json_object_object_get(json_object_object_get(ps, "topologyRequest"), "required"));
        /* and the engine's decoder reads it back with the template's requests */
        cu_world w;
        cu_world_init(&w);
        cu_doc doc = { .file = "t", .root = cu_node_from_json(&w.arena, wl) };
        assert_int_equal(cu_world_decode(&w, &doc, &d), CU_OK);
        assert_int_equal(w.workloads.n, 1);
        assert_int_equal(cu_reslist_get(&w.workloads.items[0]->podsets[0].requests, "cpu"), 1500);
        cu_world_free(&w);
        json_object_put(wl);
        json_object_put(job);
        cu_diag_free(&d);
    }
}

static void test_workload_for_job_errors(void **st)
{
    (void)st;
    static const struct {
        const char *job, *want;
    } cases[] = {
        { "{\"metadata\":{\"name\":\"j\",\"namespace\":\"n\",\"uid\":\"u\"},\"spec\":{\"template\":{}}}",
          "Job n/j: metadata.labels: no kueue.x-k8s.io/queue-name label" },
        { "{\"metadata\":{\"name\":\"j\",\"namespace\":\"n\",\"uid\":\"u\",\"labels\":"
          "{\"kueue.x-k8s.io/queue-name\":\"q\"}},\"spec\":{}}",
          "Job n/j: spec.template: missing or not an object" },
        { "{\"metadata\":{\"name\":\"j\",\"namespace\":\"n\",\"uid\":\"u\",\"labels\":"
          "{\"kueue.x-k8s.io/queue-name\":\"q\"}},\"spec\":{\"parallelism\":-1,\"template\":{}}}",
          "Job n/j: spec.parallelism: must be an integer >= 0" },
        { "{\"metadata\":{\"name\":\"j\",\"namespace\":\"n\",\"uid\":\"u\",\"labels\":"
          "{\"kueue.x-k8s.io/queue-name\":\"q\"},\"annotations\":{\"kueue.x-k8s.io/job-min-parallelism\":\"5\"}},"
          "\"spec\":{\"parallelism\":2,\"template\":{}}}",
          "Job n/j: metadata.annotations[kueue.x-k8s.io/job-min-parallelism]: must be an integer between 1 and 2, got \"5\"" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_object *job = J(cases[i].job);
        cu_diag d;
        cu_diag_init(&d);
        assert_null(cu_ctrl_workload_for_job(job, &d));
        assert_int_equal(d.n, 1);
        assert_string_equal(d.msgs[0], cases[i].want);
        cu_diag_free(&d);
        json_object_put(job);
    }
}

static void test_set_condition(void **st)
{
    (void)st;
    json_object *old = J("[{\"type\":\"QuotaReserved\",\"status\":\"False\",\"reason\":\"Pending\","
                         "\"message\":\"m\",\"lastTransitionTime\":\"2024-01-01T00:00:00Z\"},"
                         "{\"type\":\"X\",\"status\":\"True\"}]");
    /* same status keeps the transition time; another status takes now */
    json_object *a = cu_ctrl_set_condition(old, "QuotaReserved", "False", "Pending", "m2", 0);
    json_object *b = cu_ctrl_set_condition(old, "QuotaReserved", "True", "QuotaReserved", "q", 0);
    assert_int_equal(json_object_array_length(a), 2);
    json_object *ca = json_object_array_get_idx(a, 1), *cb = json_object_array_get_idx(b, 1);
    assert_string_equal(S(ca, "lastTransitionTime", NULL, NULL), "2024-01-01T00:00:00Z");
    assert_string_equal(S(ca, "message", NULL, NULL), "m2");
    assert_string_equal(S(cb, "lastTransitionTime", NULL, NULL), "1970-01-01T00:00:00Z");
    assert_string_equal(S(json_object_array_get_idx(b, 0), "type", NULL, NULL), "X");
    json_object_put(a);
    json_object_put(b);
    json_object_put(old);
}

static void test_admission_patch(void **st)
{
    (void)st;
    const char *res[] = { "cpu", "memory" }, *fl[] = { "f1", "f2" };
    int64_t use[] = { 3000, 2LL * 1024 * 1024 * 1024 };
    cu_psa_info psa = {
        .name = "main", .count = 2, .n = 2, .resources = res, .flavors = fl, .usage = use
    };
    cu_wl_info info = {
        .ns = "n", .name = "w", .cluster_queue = "cq", .admitted = 1, .npsa = 1, .psa = &psa
    };
    json_object *p = cu_ctrl_admission_patch(&info, "42", NULL, NULL, 0);
    assert_string_equal(S(p, "metadata", "resourceVersion", NULL), "42");
    json_object *adm = json_object_object_get(json_object_object_get(p, "status"), "admission");
    assert_string_equal(S(adm, "clusterQueue", NULL, NULL), "cq");
    json_object *ps =
        json_object_array_get_idx(json_object_object_get(adm, "podSetAssignments"), 0);
    assert_string_equal(S(ps, "flavors", "memory", NULL), "f2");
    assert_string_equal(S(ps, "resourceUsage", "cpu", NULL), "3");
    assert_string_equal(S(ps, "resourceUsage", "memory", NULL), "2Gi");
    assert_int_equal(json_object_get_int(json_object_object_get(ps, "count")), 2);
    json_object *conds = json_object_object_get(json_object_object_get(p, "status"), "conditions");
    assert_int_equal(json_object_array_length(conds), 2);
    assert_string_equal(S(json_object_array_get_idx(conds, 0), "message", NULL, NULL),
                        "Quota reserved in ClusterQueue cq");
    assert_string_equal(S(json_object_array_get_idx(conds, 1), "message", NULL, NULL),
                        "The workload is admitted");
    json_object_put(p);
}

/* TAS: the pod set's topology assignment written in v1beta2's shape. */
static void test_admission_patch_topology(void **st)
{
    (void)st;
    const char *res[] = { "nvidia.com/gpu" }, *fl[] = { "h100" };
    int64_t use[] = { 4 };
    const char *levels[] = { "kubernetes.io/hostname" }, *values[] = { "gpu-a", "gpu-b" };
    int32_t counts[] = { 1, 1 };
    cu_topo_assign ta = {
        .nlevels = 1, .levels = levels, .ndomains = 2, .values = values, .counts = counts
    };
    cu_psa_info psa = { .name = "main",
                        .count = 2,
                        .n = 1,
                        .resources = res,
                        .flavors = fl,
                        .usage = use,
                        .topo = &ta };
    cu_wl_info info = {
        .ns = "n", .name = "w", .cluster_queue = "cq", .admitted = 1, .npsa = 1, .psa = &psa
    };
    json_object *p = cu_ctrl_admission_patch(&info, NULL, NULL, NULL, 0);
    json_object *adm = json_object_object_get(json_object_object_get(p, "status"), "admission");
    json_object *ps =
        json_object_array_get_idx(json_object_object_get(adm, "podSetAssignments"), 0);
    json_object *t = json_object_object_get(ps, "topologyAssignment");
    assert_non_null(t);
    assert_string_equal(
        json_object_get_string(json_object_array_get_idx(json_object_object_get(t, "levels"), 0)),
        "kubernetes.io/hostname");
    json_object *sl = json_object_array_get_idx(json_object_object_get(t, "slices"), 0);
    assert_int_equal(json_object_get_int(json_object_object_get(sl, "domainCount")), 2);
    /* without an assignment: no field */
    psa.topo = NULL;
    json_object *q = cu_ctrl_admission_patch(&info, NULL, NULL, NULL, 0);
    adm = json_object_object_get(json_object_object_get(q, "status"), "admission");
    ps = json_object_array_get_idx(json_object_object_get(adm, "podSetAssignments"), 0);
    assert_null(json_object_object_get(ps, "topologyAssignment"));
    json_object_put(p);
    json_object_put(q);
}

/* The admission with AdmissionChecks not all Ready: QuotaReserved alone,
 * and the checks that apply synced into status.admissionChecks. */
static void test_admission_patch_checks(void **st)
{
    (void)st;
    const char *res[] = { "cpu" }, *fl[] = { "spot" }, *names[] = { "a", "b" };
    int64_t use[] = { 1000 };
    cu_psa_info psa = {
        .name = "main", .count = 1, .n = 1, .resources = res, .flavors = fl, .usage = use
    };
    cu_wl_info info = { .ns = "n",
                        .name = "w",
                        .cluster_queue = "cq",
                        .admitted = 1,
                        .npsa = 1,
                        .psa = &psa,
                        .nchecks = 2,
                        .checks = names,
                        .checks_pending = 1 };
    json_object *old = J("[{\"name\":\"b\",\"state\":\"Ready\",\"message\":\"m\","
                         "\"lastTransitionTime\":\"2025-01-01T00:00:00Z\"}]");
    json_object *p = cu_ctrl_admission_patch(&info, NULL, NULL, old, 1000);
    json_object *status = json_object_object_get(p, "status");
    json_object *conds = json_object_object_get(status, "conditions");
    assert_int_equal(json_object_array_length(conds), 1);
    assert_string_equal(S(json_object_array_get_idx(conds, 0), "type", NULL, NULL),
                        "QuotaReserved");
    json_object *acs = json_object_object_get(status, "admissionChecks");
    assert_int_equal(json_object_array_length(acs), 2);
    assert_string_equal(S(json_object_array_get_idx(acs, 0), "name", NULL, NULL), "a");
    assert_string_equal(S(json_object_array_get_idx(acs, 0), "state", NULL, NULL), "Pending");
    assert_string_equal(S(json_object_array_get_idx(acs, 0), "lastTransitionTime", NULL, NULL),
                        "1970-01-01T00:00:01Z");
    assert_string_equal(S(json_object_array_get_idx(acs, 1), "state", NULL, NULL), "Ready");
    json_object_put(p);
    json_object_put(old);
}

/* Kueue's syncAdmissionCheckConditions and resetChecksOnEviction. */
static void test_sync_and_reset_checks(void **st)
{
    (void)st;
    const char *names[] = { "a", "c" };
    int changed = 0;
    json_object *old = J("[{\"name\":\"c\",\"state\":\"Retry\",\"message\":\"m\","
                         "\"retryCount\":1,\"requeueAfterSeconds\":5,"
                         "\"podSetUpdates\":[{\"name\":\"main\"}]},"
                         "{\"name\":\"gone\",\"state\":\"Ready\",\"message\":\"\"}]");
    /* "gone" no longer applies, "a" is added, the result sorted */
    json_object *n = cu_ctrl_sync_checks(old, names, 2, 0, &changed);
    assert_true(changed);
    assert_int_equal(json_object_array_length(n), 2);
    assert_string_equal(S(json_object_array_get_idx(n, 0), "name", NULL, NULL), "a");
    assert_string_equal(S(json_object_array_get_idx(n, 1), "state", NULL, NULL), "Retry");
    /* the same list again: unchanged */
    json_object *again = cu_ctrl_sync_checks(n, names, 2, 0, &changed);
    assert_false(changed);
    json_object_put(again);
    /* no check applies any more: the list goes */
    assert_null(cu_ctrl_sync_checks(n, names, 0, 0, &changed));
    assert_true(changed);
    /* an eviction: Retry -> Pending, retryCount counted, requeueAfterSeconds
     * kept, podSetUpdates dropped; a Pending entry left as it is */
    json_object *r = cu_ctrl_reset_checks(n, 2000);
    assert_non_null(r);
    json_object *c = json_object_array_get_idx(r, 1);
    assert_string_equal(S(c, "state", NULL, NULL), "Pending");
    assert_string_equal(S(c, "message", NULL, NULL),
                        "Reset to Pending after eviction. Previously: Retry");
    assert_int_equal(json_object_get_int(json_object_object_get(c, "retryCount")), 2);
    assert_int_equal(json_object_get_int(json_object_object_get(c, "requeueAfterSeconds")), 5);
    assert_null(json_object_object_get(c, "podSetUpdates"));
    assert_ptr_equal(json_object_array_get_idx(r, 0), json_object_array_get_idx(n, 0));
    /* all Pending: nothing to reset */
    assert_null(cu_ctrl_reset_checks(r, 3000));
    json_object_put(r);
    json_object_put(n);
    json_object_put(old);
}

/* The podSetUpdates of the admission checks join the flavors' at the start. */
static void test_job_start_patch_updates(void **st)
{
    (void)st;
    char buf[2048];
    snprintf(buf, sizeof(buf), JOB, 1, 1);
    json_object *job = J(buf);
    json_object *flavors = J("{\"f1\":{\"spec\":{\"nodeLabels\":{\"pool\":\"a\"}}}}");
    json_object *wl =
        J("{\"metadata\":{\"name\":\"w\",\"namespace\":\"team\"},\"status\":{\"admission\":"
          "{\"clusterQueue\":\"cq\",\"podSetAssignments\":[{\"name\":\"main\",\"count\":1,"
          "\"flavors\":{\"cpu\":\"f1\"}}]},\"admissionChecks\":[{\"name\":\"c\",\"state\":"
          "\"Ready\",\"podSetUpdates\":[{\"name\":\"main\",\"labels\":{\"l\":\"1\"},"
          "\"annotations\":{\"a\":\"2\"},\"nodeSelector\":{\"zone\":\"z\"},\"tolerations\":"
          "[{\"key\":\"t\",\"operator\":\"Exists\"}]},{\"name\":\"other\",\"labels\":"
          "{\"x\":\"y\"}}]}]}}");
    cu_diag d;
    cu_diag_init(&d);
    json_object *p = cu_ctrl_job_start_patch(job, wl, flavors, &d, NULL);
    assert_non_null(p);
    json_object *t = json_object_object_get(json_object_object_get(p, "spec"), "template");
    assert_string_equal(S(t, "metadata", "labels", "l"), "1");
    assert_string_equal(S(t, "metadata", "annotations", "a"), "2");
    assert_null(S(t, "metadata", "labels", "x")); /* another pod set's */
    assert_string_equal(S(t, "spec", "nodeSelector", "zone"), "z");
    assert_string_equal(S(t, "spec", "nodeSelector", "pool"), "a");
    json_object *tols = json_object_object_get(json_object_object_get(t, "spec"), "tolerations");
    assert_int_equal(json_object_array_length(tols), 2); /* the Job's and the check's */
    json_object_put(p);
    cu_diag_free(&d);
    json_object_put(job);
    json_object_put(wl);
    json_object_put(flavors);
}

/* TAS: a pod set admitted with a topology assignment starts gated with
 * the topology gate, labelled with its pod set and annotated with its
 * Workload; implicit TAS (no request) adds the unconstrained annotation. */
static void test_job_start_patch_tas(void **st)
{
    (void)st;
    char buf[2048];
    snprintf(buf, sizeof(buf), JOB, 2, 2);
    json_object *job = J(buf);
    json_object *flavors = J("{\"h100\":{\"spec\":{\"nodeLabels\":{\"pool\":\"gpu\"}}}}");
    static const char *const reqs[] = { "{}", "{\"topologyRequest\":{\"required\":\"rack\"}}" };
    for (int k = 0; k < 2; k++) {
        char wb[1500];
        snprintf(wb, sizeof(wb),
                 "{\"metadata\":{\"name\":\"w\",\"namespace\":\"team\"},\"spec\":{\"podSets\":"
                 "[%s]},\"status\":{\"admission\":{\"clusterQueue\":\"cq\",\"podSetAssignments\":"
                 "[{\"name\":\"main\",\"count\":2,\"flavors\":{\"cpu\":\"h100\"},"
                 "\"topologyAssignment\":{\"levels\":[\"rack\"],\"domains\":[{\"values\":"
                 "[\"r1\"],\"count\":2}]}}]}}}",
                 reqs[k]);
        json_object *wl = J(wb);
        cu_diag d;
        cu_diag_init(&d);
        json_object *p = cu_ctrl_job_start_patch(job, wl, flavors, &d, NULL);
        assert_non_null(p);
        json_object *t = json_object_object_get(json_object_object_get(p, "spec"), "template");
        assert_string_equal(S(t, "metadata", "labels", "kueue.x-k8s.io/podset"), "main");
        assert_string_equal(S(t, "metadata", "annotations", "kueue.x-k8s.io/workload"), "w");
        if (k == 0)
            assert_string_equal(
                S(t, "metadata", "annotations", "kueue.x-k8s.io/podset-unconstrained-topology"),
                "true");
        else
            assert_null(
                S(t, "metadata", "annotations", "kueue.x-k8s.io/podset-unconstrained-topology"));
        json_object *g =
            json_object_object_get(json_object_object_get(t, "spec"), "schedulingGates");
        assert_int_equal(json_object_array_length(g), 1);
        assert_string_equal(S(json_object_array_get_idx(g, 0), "name", NULL, NULL),
                            "kueue.x-k8s.io/topology");
        assert_string_equal(S(t, "spec", "nodeSelector", "pool"), "gpu");
        json_object_put(p);
        cu_diag_free(&d);
        json_object_put(wl);
    }
    json_object_put(job);
    json_object_put(flavors);
}

/* start_conflict(FLAVOR_LABELS, UPDATE): the start patch of JOB (template
 * nodeSelector a=b) admitted to a flavor with FLAVOR_LABELS and a check
 * whose update for pod set main is UPDATE; NULL when refused, with
 * *permanent and the message in d */
static json_object *start_conflict(const char *labels, const char *update, cu_diag *d,
                                   int *permanent)
{
    char buf[2048], fl[512], w[2048];
    snprintf(buf, sizeof(buf), JOB, 1, 1);
    snprintf(fl, sizeof(fl), "{\"f1\":{\"spec\":{\"nodeLabels\":%s}}}", labels);
    snprintf(w, sizeof(w),
             "{\"metadata\":{\"name\":\"w\",\"namespace\":\"team\"},\"status\":{"
             "\"admission\":{\"clusterQueue\":\"cq\",\"podSetAssignments\":[{\"name\":"
             "\"main\",\"count\":1,\"flavors\":{\"cpu\":\"f1\"}}]},\"admissionChecks\":"
             "[{\"name\":\"c\",\"state\":\"Ready\",\"podSetUpdates\":[%s]}]}}",
             update);
    json_object *job = J(buf), *flavors = J(fl), *wl = J(w);
    json_object *p = cu_ctrl_job_start_patch(job, wl, flavors, d, permanent);
    json_object_put(job);
    json_object_put(wl);
    json_object_put(flavors);
    return p;
}

/* As Kueue's pod set merge: a check's update that gives a key another
 * value than the flavor's node labels, or than the template's own, is a
 * permanent failure to start, with Kueue's message; the same value is
 * not a conflict. */
static void test_job_start_patch_conflicts(void **st)
{
    (void)st;
    cu_diag d;
    cu_diag_init(&d);
    int permanent = 0;
    assert_null(start_conflict("{\"pool\":\"a\"}",
                               "{\"name\":\"main\",\"nodeSelector\":{\"pool\":\"z\"}}", &d,
                               &permanent));
    assert_int_equal(permanent, 1);
    assert_int_equal(d.n, 1);
    assert_string_equal(d.msgs[0], "invalid admission check PodSetUpdate: conflict for "
                                   "nodeSelector: conflict for key=pool, value1=a, value2=z");
    cu_diag_free(&d);
    /* the flavor's label against the template's own nodeSelector a=b */
    cu_diag_init(&d);
    permanent = 0;
    assert_null(start_conflict("{\"a\":\"c\"}", "{\"name\":\"main\"}", &d, &permanent));
    assert_int_equal(permanent, 1);
    assert_string_equal(d.msgs[0], "invalid admission check PodSetUpdate: conflict for "
                                   "nodeSelector: conflict for key=a, value1=b, value2=c");
    cu_diag_free(&d);
    /* the same values: no conflict */
    cu_diag_init(&d);
    permanent = 1;
    json_object *p =
        start_conflict("{\"a\":\"b\",\"pool\":\"a\"}",
                       "{\"name\":\"main\",\"nodeSelector\":{\"pool\":\"a\"}}", &d, &permanent);
    assert_non_null(p);
    assert_int_equal(permanent, 0);
    json_object *t = json_object_object_get(json_object_object_get(p, "spec"), "template");
    assert_string_equal(S(t, "spec", "nodeSelector", "pool"), "a");
    assert_string_equal(S(t, "spec", "nodeSelector", "a"), "b");
    json_object_put(p);
    cu_diag_free(&d);
}

static void test_job_start_patch(void **st)
{
    (void)st;
    char buf[2048];
    snprintf(buf, sizeof(buf), JOB, 4, 4);
    json_object *job = J(buf);
    json_object *flavors = J("{\"f1\":{\"spec\":{\"nodeLabels\":{\"pool\":\"gpu\"},"
                             "\"tolerations\":[{\"key\":\"spot\",\"operator\":\"Exists\"}]}}}");
    json_object *wl =
        J("{\"metadata\":{\"name\":\"w\",\"namespace\":\"team\"},\"status\":{\"admission\":"
          "{\"clusterQueue\":\"cq\",\"podSetAssignments\":[{\"name\":\"main\",\"count\":0,"
          "\"flavors\":{\"cpu\":\"f1\"}}]}}}");
    /* patch the count in: 2 of 4 (partial) and 4 of 4 */
    for (int count = 2; count <= 4; count += 2) {
        json_object *ps = json_object_array_get_idx(
            json_object_object_get(
                json_object_object_get(json_object_object_get(wl, "status"), "admission"),
                "podSetAssignments"),
            0);
        json_object_object_add(ps, "count", json_object_new_int(count));
        cu_diag d;
        cu_diag_init(&d);
        json_object *p = cu_ctrl_job_start_patch(job, wl, flavors, &d, NULL);
        assert_non_null(p);
        json_object *spec = json_object_object_get(p, "spec");
        assert_false(json_object_get_boolean(json_object_object_get(spec, "suspend")));
        json_object *par = json_object_object_get(spec, "parallelism");
        if (count == 2)
            assert_int_equal(json_object_get_int(par), 2);
        else
            assert_null(par);
        json_object *ts = json_object_object_get(json_object_object_get(spec, "template"), "spec");
        assert_string_equal(S(ts, "nodeSelector", "pool", NULL), "gpu");
        assert_string_equal(S(ts, "nodeSelector", "a", NULL), "b");
        json_object *tols = json_object_object_get(ts, "tolerations");
        assert_int_equal(json_object_array_length(tols), 2);
        assert_string_equal(S(json_object_array_get_idx(tols, 1), "key", NULL, NULL), "spot");
        json_object_put(p);
        cu_diag_free(&d);
    }
    /* a missing flavor is an error naming the Workload and the field */
    json_object *none = J("{}");
    cu_diag d;
    cu_diag_init(&d);
    assert_null(cu_ctrl_job_start_patch(job, wl, none, &d, NULL));
    assert_int_equal(d.n, 1);
    assert_non_null(
        strstr(d.msgs[0], "Workload team/w: status.admission.podSetAssignments[0].flavors[cpu]"));
    assert_non_null(strstr(d.msgs[0], "ResourceFlavor \"f1\" not found"));
    cu_diag_free(&d);
    json_object_put(none);
    json_object_put(wl);
    json_object_put(flavors);
    json_object_put(job);
}

static void test_job_finished(void **st)
{
    (void)st;
    static const struct {
        const char *j;
        int fin, failed;
    } cases[] = {
        { "{}", 0, 0 },
        { "{\"status\":{\"conditions\":[{\"type\":\"Complete\",\"status\":\"False\"}]}}", 0, 0 },
        { "{\"status\":{\"conditions\":[{\"type\":\"Complete\",\"status\":\"True\"}]}}", 1, 0 },
        { "{\"status\":{\"conditions\":[{\"type\":\"Suspended\",\"status\":\"True\"},"
          "{\"type\":\"Failed\",\"status\":\"True\"}]}}",
          1, 1 },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_object *o = J(cases[i].j);
        int failed = -1;
        assert_int_equal(cu_ctrl_job_finished(o, &failed), cases[i].fin);
        if (cases[i].fin)
            assert_int_equal(failed, cases[i].failed);
        json_object_put(o);
    }
}

static const char JOBSET[] =
    "{\"apiVersion\":\"jobset.x-k8s.io/v1alpha2\",\"kind\":\"JobSet\",\"metadata\":{\"name\":"
    "\"train\",\"namespace\":\"team\",\"uid\":\"1b2c-uid\",\"resourceVersion\":\"7\","
    "\"labels\":{\"kueue.x-k8s.io/queue-name\":\"lq\"}},\"spec\":{\"suspend\":true,"
    "\"replicatedJobs\":[{\"name\":\"driver\",\"template\":{\"spec\":{\"template\":{\"spec\":{"
    "\"containers\":[{\"name\":\"c\"}]}}}}},{\"name\":\"workers\",\"replicas\":2,\"template\":"
    "{\"spec\":{\"parallelism\":3,\"completions\":2,\"template\":{\"metadata\":{\"labels\":"
    "{\"role\":\"w\"}},\"spec\":{\"priorityClassName\":\"high\",\"nodeSelector\":{\"a\":\"b\"},"
    "\"containers\":[{\"name\":\"c\"}]}}}}}]}}";

/* The Workload of a JobSet, as Kueue's jobset integration builds it: its
 * name, an owner reference to the JobSet, a pod set per replicated Job
 * (replicas x min(parallelism, completions)), the priority class of the
 * first template with one. */
static void test_workload_for_jobset(void **st)
{
    (void)st;
    json_object *js = J(JOBSET);
    cu_diag d;
    cu_diag_init(&d);
    json_object *wl = cu_ctrl_workload_for_jobset(js, &d);
    assert_non_null(wl);
    assert_string_equal(S(wl, "metadata", "name", NULL), "jobset-train-2da5f");
    json_object *own = json_object_array_get_idx(
        json_object_object_get(json_object_object_get(wl, "metadata"), "ownerReferences"), 0);
    assert_string_equal(S(own, "apiVersion", NULL, NULL), "jobset.x-k8s.io/v1alpha2");
    assert_string_equal(S(own, "kind", NULL, NULL), "JobSet");
    assert_string_equal(S(own, "uid", NULL, NULL), "1b2c-uid");
    json_object *spec = json_object_object_get(wl, "spec");
    assert_string_equal(S(spec, "queueName", NULL, NULL), "lq");
    assert_string_equal(S(spec, "priorityClassRef", "kind", NULL), "PriorityClass");
    assert_string_equal(S(spec, "priorityClassRef", "name", NULL), "high");
    json_object *ps = json_object_object_get(spec, "podSets");
    assert_int_equal(json_object_array_length(ps), 2);
    json_object *p0 = json_object_array_get_idx(ps, 0), *p1 = json_object_array_get_idx(ps, 1);
    assert_string_equal(S(p0, "name", NULL, NULL), "driver");
    assert_int_equal(json_object_get_int(json_object_object_get(p0, "count")), 1);
    assert_string_equal(S(p1, "name", NULL, NULL), "workers");
    assert_int_equal(json_object_get_int(json_object_object_get(p1, "count")), 4);
    assert_string_equal(S(p1, "template", "metadata", "labels"), "{ \"role\": \"w\" }");
    /* the topology request: the Job index as the sub-group, the replicas as their count */
    json_object *tr = json_object_object_get(p1, "topologyRequest");
    assert_string_equal(S(tr, "podIndexLabel", NULL, NULL),
                        "batch.kubernetes.io/job-completion-index");
    assert_string_equal(S(tr, "subGroupIndexLabel", NULL, NULL), "jobset.sigs.k8s.io/job-index");
    assert_int_equal(json_object_get_int(json_object_object_get(tr, "subGroupCount")), 2);
    json_object_put(wl);
    /* a TAS annotation on a template becomes the pod set's request */
    json_object *rj0 = json_object_array_get_idx(
        json_object_object_get(json_object_object_get(js, "spec"), "replicatedJobs"), 0);
    json_object *t0 = json_object_object_get(
        json_object_object_get(json_object_object_get(rj0, "template"), "spec"), "template");
    json_object *md = json_object_new_object(), *an = json_object_new_object();
    json_object_object_add(an, "kueue.x-k8s.io/podset-required-topology",
                           json_object_new_string("cloud.com/rack"));
    json_object_object_add(md, "annotations", an);
    json_object_object_add(t0, "metadata", md);
    wl = cu_ctrl_workload_for_jobset(js, &d);
    assert_non_null(wl);
    p0 = json_object_array_get_idx(
        json_object_object_get(json_object_object_get(wl, "spec"), "podSets"), 0);
    assert_string_equal(S(p0, "topologyRequest", "required", NULL), "cloud.com/rack");
    assert_int_equal(json_object_get_int(json_object_object_get(
                         json_object_object_get(p0, "topologyRequest"), "subGroupCount")),
                     1);
    json_object_put(wl);
    /* bad input: named by field */
    json_object *rjs = json_object_object_get(json_object_object_get(js, "spec"), "replicatedJobs");
    json_object_object_add(json_object_array_get_idx(rjs, 1), "replicas",
                           json_object_new_string("two"));
    assert_null(cu_ctrl_workload_for_jobset(js, &d));
    assert_int_equal(d.n, 1);
    assert_string_equal(d.msgs[0], "JobSet team/train: spec.replicatedJobs[1].replicas: must be "
                                   "an integer >= 0");
    json_object_object_add(json_object_object_get(js, "spec"), "replicatedJobs",
                           json_object_new_array());
    assert_null(cu_ctrl_workload_for_jobset(js, &d));
    assert_string_equal(d.msgs[1], "JobSet team/train: spec.replicatedJobs: missing or empty");
    cu_diag_free(&d);
    json_object_put(js);
}

/* The start of a JobSet: unsuspended, each replicated Job's pod template
 * with its own pod set's flavor node labels and tolerations, the whole
 * list sent with the version it was read at; a restore is the same list
 * with the templates' patches. */
static void test_jobset_start_patch(void **st)
{
    (void)st;
    json_object *js = J(JOBSET);
    json_object *rjs = json_object_object_get(json_object_object_get(js, "spec"), "replicatedJobs");
    json_object *flavors =
        J("{\"cpu\":{\"spec\":{\"nodeLabels\":{\"pool\":\"cpu\"}}},\"gpu\":{\"spec\":{"
          "\"nodeLabels\":{\"pool\":\"gpu\"},\"tolerations\":[{\"key\":\"g\",\"operator\":"
          "\"Exists\"}]}}}");
    json_object *wl =
        J("{\"metadata\":{\"name\":\"w\",\"namespace\":\"team\"},\"status\":{\"admission\":"
          "{\"clusterQueue\":\"cq\",\"podSetAssignments\":[{\"name\":\"driver\",\"count\":1,"
          "\"flavors\":{\"cpu\":\"cpu\"}},{\"name\":\"workers\",\"count\":4,\"flavors\":"
          "{\"nvidia.com/gpu\":\"gpu\"}}]}}}");
    cu_diag d;
    cu_diag_init(&d);
    json_object *p = cu_ctrl_jobset_start_patch(rjs, NULL, wl, flavors, "7", &d, NULL);
    assert_non_null(p);
    assert_string_equal(S(p, "metadata", "resourceVersion", NULL), "7");
    json_object *spec = json_object_object_get(p, "spec");
    assert_false(json_object_get_boolean(json_object_object_get(spec, "suspend")));
    json_object *out = json_object_object_get(spec, "replicatedJobs");
    assert_int_equal(json_object_array_length(out), 2);
    json_object *t0 = json_object_object_get(
        json_object_object_get(json_object_array_get_idx(out, 0), "template"), "spec");
    json_object *t1 = json_object_object_get(
        json_object_object_get(json_object_array_get_idx(out, 1), "template"), "spec");
    assert_string_equal(S(t0, "template", "spec", "nodeSelector"), "{ \"pool\": \"cpu\" }");
    assert_null(S(t0, "template", "spec", "tolerations"));
    json_object *ts1 = json_object_object_get(json_object_object_get(t1, "template"), "spec");
    assert_string_equal(S(ts1, "nodeSelector", "pool", NULL), "gpu");
    assert_string_equal(S(ts1, "nodeSelector", "a", NULL), "b"); /* its own kept */
    assert_int_equal(json_object_array_length(json_object_object_get(ts1, "tolerations")), 1);
    /* the rest of the replicated Job is as it was */
    assert_int_equal(json_object_get_int(json_object_object_get(t1, "parallelism")), 3);
    assert_string_equal(S(json_object_array_get_idx(out, 1), "name", NULL, NULL), "workers");
    assert_string_equal(S(t1, "template", "metadata", "labels"), "{ \"role\": \"w\" }");
    /* restore: the templates' patches (a key removed, a list dropped) */
    json_object *tp[2] = { NULL, J("{\"spec\":{\"nodeSelector\":{\"pool\":null},"
                                   "\"tolerations\":null}}") };
    json_object *rp = cu_ctrl_jobset_templates_patch(out, tp, 2, NULL);
    assert_non_null(rp);
    assert_null(json_object_object_get(rp, "metadata"));
    json_object *r1 = json_object_array_get_idx(
        json_object_object_get(json_object_object_get(rp, "spec"), "replicatedJobs"), 1);
    json_object *rs1 = json_object_object_get(
        json_object_object_get(
            json_object_object_get(json_object_object_get(r1, "template"), "spec"), "template"),
        "spec");
    assert_string_equal(S(rs1, "nodeSelector", NULL, NULL), "{ \"a\": \"b\" }");
    assert_null(json_object_object_get(rs1, "tolerations"));
    json_object_put(tp[1]);
    json_object_put(rp);
    json_object_put(p);
    /* another number of pod sets than replicated Jobs: Kueue's error */
    json_object_array_del_idx(
        json_object_object_get(
            json_object_object_get(json_object_object_get(wl, "status"), "admission"),
            "podSetAssignments"),
        1, 1);
    assert_null(cu_ctrl_jobset_start_patch(rjs, NULL, wl, flavors, NULL, &d, NULL));
    assert_string_equal(d.msgs[0], "invalid podSetsInfo length: expecting 2 podsets, got 1");
    cu_diag_free(&d);
    json_object_put(wl);
    json_object_put(flavors);
    json_object_put(js);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_to_node_decodes),
        cmocka_unit_test(test_workload_for_job),
        cmocka_unit_test(test_workload_for_job_errors),
        cmocka_unit_test(test_set_condition),
        cmocka_unit_test(test_admission_patch),
        cmocka_unit_test(test_admission_patch_topology),
        cmocka_unit_test(test_job_start_patch_tas),
        cmocka_unit_test(test_admission_patch_checks),
        cmocka_unit_test(test_sync_and_reset_checks),
        cmocka_unit_test(test_job_start_patch),
        cmocka_unit_test(test_job_start_patch_updates),
        cmocka_unit_test(test_job_start_patch_conflicts),
        cmocka_unit_test(test_job_finished),
        cmocka_unit_test(test_workload_for_jobset),
        cmocka_unit_test(test_jobset_start_patch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
