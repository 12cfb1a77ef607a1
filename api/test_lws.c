/*
 * test_lws.c - Kueue's rules for a LeaderWorkerSet (cu_lws.h): the
 * Workload of each group and the labels of its pods.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "cu_lws.h"
#include "cu_objects.h"

#include <stdio.h>
#include <string.h>

static json_object *parse(const char *s)
{
    json_object *o = cu_json_parse_str(s);
    assert_non_null(o);
    return o;
}

/* An LWS "infer" (uid 0b6f-uid) of 2 groups of 1 leader + 3 workers. */
static const char LWS[] =
    "{\"apiVersion\":\"leaderworkerset.x-k8s.io/v1\",\"kind\":\"LeaderWorkerSet\","
    "\"metadata\":{\"namespace\":\"team\",\"name\":\"infer\",\"uid\":\"0b6f-uid\","
    "\"labels\":{\"kueue.x-k8s.io/queue-name\":\"lq\"}},"
    "\"spec\":{\"replicas\":2,\"leaderWorkerTemplate\":{\"size\":4,"
    "\"leaderTemplate\":{\"metadata\":{\"labels\":{\"role\":\"leader\"}},\"spec\":{"
    "\"containers\":[{\"name\":\"l\",\"resources\":{\"requests\":{\"cpu\":\"2\"}}}]}},"
    "\"workerTemplate\":{\"spec\":{\"priorityClassName\":\"high\",\"containers\":[{\"name\":"
    "\"w\",\"resources\":{\"requests\":{\"nvidia.com/gpu\":\"1\"}}}]}}}}}";

/* printf 'LeaderWorkerSet\nleaderworkerset.x-k8s.io\ninfer-0\n0b6f-uid' | sha1sum -> 383bb...
 * printf 'LeaderWorkerSet\nleaderworkerset.x-k8s.io\ninfer-2\n0b6f-uid' | sha1sum -> adcb7... */
static void test_names(void **state)
{
    (void)state;
    cu_arena a;
    cu_arena_init(&a, 0);
    assert_string_equal(cu_lws_workload_name(&a, "infer", "0b6f-uid", 0),
                        "leaderworkerset-infer-0-383bb");
    assert_string_equal(cu_lws_workload_name(&a, "infer", "0b6f-uid", 2),
                        "leaderworkerset-infer-2-adcb7");
    /* the generic rule gives the Job's name too */
    assert_string_equal(cu_owner_workload_name(&a, "Job", "batch", "sample-job",
                                               "a1b2c3d4-0000-4000-8000-000000000001"),
                        "job-sample-job-57a5d");
    cu_arena_free(&a);
}

static void test_counts(void **state)
{
    (void)state;
    json_object *l = parse(LWS), *e = parse("{\"spec\":{\"leaderWorkerTemplate\":{}}}");
    json_object *bad =
        parse("{\"spec\":{\"replicas\":-3,\"leaderWorkerTemplate\":{\"size\":\"x\"}}}");
    assert_int_equal(cu_lws_replicas(l), 2);
    assert_int_equal(cu_lws_size(l), 4);
    assert_int_equal(cu_lws_replicas(e), 1); /* the CRD's defaults */
    assert_int_equal(cu_lws_size(e), 1);
    assert_int_equal(cu_lws_replicas(bad), 1);
    assert_int_equal(cu_lws_size(bad), 1);
    json_object_put(l);
    json_object_put(e);
    json_object_put(bad);
}

static void test_workload_leader_worker(void **state)
{
    (void)state;
    json_object *l = parse(LWS);
    cu_diag d;
    cu_diag_init(&d);
    json_object *wl = cu_lws_workload(l, 1, &d);
    assert_non_null(wl);
    assert_string_equal(cu_jpath_str(wl, "metadata.namespace"), "team");
    assert_string_equal(cu_jpath_str(wl, "spec.queueName"), "lq");
    json_object *md = cu_jget(wl, "metadata");
    assert_string_equal(cu_jstr(cu_jget(md, "labels"), CU_LABEL_JOB_UID), "0b6f-uid");
    json_object *ann = cu_jget(md, "annotations");
    assert_string_equal(cu_jstr(ann, CU_ANN_IS_GROUP_WORKLOAD), "true");
    assert_string_equal(cu_jstr(ann, CU_ANN_JOB_OWNER_GVK),
                        "leaderworkerset.x-k8s.io/v1, Kind=LeaderWorkerSet");
    assert_string_equal(cu_jstr(ann, CU_ANN_JOB_OWNER_NAME), "infer");
    assert_string_equal(cu_jstr(ann, CU_ANN_COMPONENT_WORKLOAD_INDEX), "1");
    json_object *own = json_object_array_get_idx(cu_jget(md, "ownerReferences"), 0);
    assert_string_equal(cu_jstr(own, "kind"), "LeaderWorkerSet");
    assert_string_equal(cu_jstr(own, "apiVersion"), "leaderworkerset.x-k8s.io/v1");
    assert_string_equal(cu_jstr(own, "uid"), "0b6f-uid");
    assert_true(cu_jas_true(cu_jget(own, "controller")));
    json_object *ps = cu_jpath(wl, "spec.podSets");
    assert_int_equal(cu_jarr_len(ps), 2);
    json_object *p0 = json_object_array_get_idx(ps, 0), *p1 = json_object_array_get_idx(ps, 1);
    assert_string_equal(cu_jstr(p0, "name"), "leader");
    assert_int_equal(cu_jas_int64(cu_jget(p0, "count"), -1), 1);
    assert_string_equal(cu_jstr(p1, "name"), "worker");
    assert_int_equal(cu_jas_int64(cu_jget(p1, "count"), -1), 3);
    /* Kueue's topology requests: the workers' index label, none for the leader */
    assert_null(cu_jget(p0, "topologyRequest"));
    assert_string_equal(cu_jpath_str(p1, "topologyRequest.podIndexLabel"),
                        "leaderworkerset.sigs.k8s.io/worker-index");
    /* the template's spec only: its metadata is not copied */
    assert_null(cu_jpath(p0, "template.metadata"));
    assert_int_equal(cu_jarr_len(cu_jpath(p0, "template.spec.containers")), 1);
    /* the first pod set with a priorityClassName: the worker's */
    assert_string_equal(cu_jpath_str(wl, "spec.priorityClassRef.kind"), "PriorityClass");
    assert_string_equal(cu_jpath_str(wl, "spec.priorityClassRef.name"), "high");
    cu_arena a;
    cu_arena_init(&a, 0);
    assert_string_equal(cu_jpath_str(wl, "metadata.name"),
                        cu_lws_workload_name(&a, "infer", "0b6f-uid", 1));
    cu_arena_free(&a);
    json_object_put(wl);
    assert_int_equal(d.n, 0);

    /* the priority-class label wins */
    json_object_object_add(cu_jpath(l, "metadata.labels"), CU_LABEL_PRIORITY_CLASS,
                           json_object_new_string("serving"));
    wl = cu_lws_workload(l, 0, &d);
    assert_string_equal(cu_jpath_str(wl, "spec.priorityClassRef.kind"), "WorkloadPriorityClass");
    assert_string_equal(cu_jpath_str(wl, "spec.priorityClassRef.name"), "serving");
    json_object_put(wl);
    cu_diag_free(&d);
    json_object_put(l);
}

static void test_workload_no_leader(void **state)
{
    (void)state;
    json_object *l = parse(LWS);
    json_object_object_del(cu_jpath(l, "spec.leaderWorkerTemplate"), "leaderTemplate");
    cu_diag d;
    cu_diag_init(&d);
    json_object *wl = cu_lws_workload(l, 0, &d);
    json_object *ps = cu_jpath(wl, "spec.podSets");
    assert_int_equal(cu_jarr_len(ps), 1);
    assert_string_equal(cu_jstr(json_object_array_get_idx(ps, 0), "name"), "main");
    assert_int_equal(cu_jas_int64(cu_jget(json_object_array_get_idx(ps, 0), "count"), -1), 4);
    json_object_put(wl);
    cu_diag_free(&d);
    json_object_put(l);
}

static void test_workload_bad(void **state)
{
    (void)state;
    cu_diag d;
    cu_diag_init(&d);
    json_object *l = parse(LWS);
    json_object_object_del(cu_jpath(l, "metadata.labels"), CU_LABEL_QUEUE_NAME);
    assert_null(cu_lws_workload(l, 0, &d));
    assert_int_equal(d.n, 1);
    assert_non_null(strstr(d.msgs[0], "LeaderWorkerSet team/infer: metadata.labels: no"));
    json_object_put(l);

    l = parse(LWS);
    json_object_object_del(cu_jpath(l, "spec.leaderWorkerTemplate"), "workerTemplate");
    assert_null(cu_lws_workload(l, 0, &d));
    assert_non_null(strstr(d.msgs[1], "spec.leaderWorkerTemplate.workerTemplate: missing"));
    json_object_put(l);

    l = parse(LWS);
    json_object_object_add(cu_jpath(l, "spec.leaderWorkerTemplate"), "size",
                           json_object_new_int(0));
    assert_null(cu_lws_workload(l, 0, &d));
    assert_non_null(strstr(d.msgs[2], "spec.leaderWorkerTemplate.size: must be at least 1"));
    json_object_put(l);
    cu_diag_free(&d);
}

static json_object *pod(const char *labels, const char *annotations)
{
    char b[1024];
    snprintf(b, sizeof(b),
             "{\"metadata\":{\"namespace\":\"team\",\"name\":\"infer-1\",\"labels\":{%s},"
             "\"annotations\":{%s}}}",
             labels, annotations);
    return parse(b);
}

static void test_pod_patch(void **state)
{
    (void)state;
    json_object *l = parse(LWS);
    const char *susp = "\"" CU_ANN_POD_SUSPENDING_PARENT "\":\"" CU_LWS_FRAMEWORK "\"";
    /* the leader of group 1 */
    json_object *p = pod("\"leaderworkerset.sigs.k8s.io/name\":\"infer\","
                         "\"leaderworkerset.sigs.k8s.io/group-index\":\"1\"",
                         susp);
    assert_true(cu_lws_pod_is_managed(p));
    json_object *patch = cu_lws_pod_patch(p, l);
    assert_non_null(patch);
    json_object *lb = cu_jpath(patch, "metadata.labels"),
                *an = cu_jpath(patch, "metadata.annotations");
    assert_string_equal(cu_jstr(lb, CU_LABEL_MANAGED), "true");
    assert_string_equal(cu_jstr(lb, CU_LABEL_QUEUE_NAME), "lq");
    cu_arena a;
    cu_arena_init(&a, 0);
    const char *wl1 = cu_lws_workload_name(&a, "infer", "0b6f-uid", 1);
    assert_string_equal(cu_jstr(lb, CU_LABEL_POD_GROUP_NAME), wl1);
    assert_string_equal(cu_jstr(lb, CU_LABEL_PREBUILT_WORKLOAD), wl1);
    assert_string_equal(cu_jstr(an, CU_ANN_POD_GROUP_TOTAL_COUNT), "4");
    assert_string_equal(cu_jstr(an, CU_ANN_POD_ROLE_HASH), "leader");
    json_object_put(patch);
    json_object_put(p);

    /* a worker: it names its leader */
    p = pod("\"leaderworkerset.sigs.k8s.io/name\":\"infer\","
            "\"leaderworkerset.sigs.k8s.io/group-index\":\"1\"",
            "\"leaderworkerset.sigs.k8s.io/leader-name\":\"infer-1\"");
    assert_false(cu_lws_pod_is_managed(p));
    patch = cu_lws_pod_patch(p, l);
    assert_string_equal(cu_jstr(cu_jpath(patch, "metadata.annotations"), CU_ANN_POD_ROLE_HASH),
                        "worker");
    json_object_put(patch);
    json_object_put(p);

    /* nothing to do: no group index yet; labelled already; no LWS; no queue */
    p = pod("\"leaderworkerset.sigs.k8s.io/name\":\"infer\"", susp);
    assert_null(cu_lws_pod_patch(p, l));
    json_object_put(p);
    p = pod("\"leaderworkerset.sigs.k8s.io/group-index\":\"0\",\"kueue.x-k8s.io/queue-name\":\"x\"",
            susp);
    assert_null(cu_lws_pod_patch(p, l));
    json_object_put(p);
    p = pod("\"leaderworkerset.sigs.k8s.io/group-index\":\"0\"", susp);
    assert_null(cu_lws_pod_patch(p, NULL));
    json_object_put(p);
    p = pod("\"leaderworkerset.sigs.k8s.io/group-index\":\"x1\"", susp);
    assert_null(cu_lws_pod_patch(p, l));
    json_object_put(p);

    /* no leader template: every pod is "main" */
    json_object_object_del(cu_jpath(l, "spec.leaderWorkerTemplate"), "leaderTemplate");
    p = pod("\"leaderworkerset.sigs.k8s.io/group-index\":\"0\"", susp);
    patch = cu_lws_pod_patch(p, l);
    assert_string_equal(cu_jstr(cu_jpath(patch, "metadata.annotations"), CU_ANN_POD_ROLE_HASH),
                        "main");
    assert_string_equal(cu_jstr(cu_jpath(patch, "metadata.labels"), CU_LABEL_POD_GROUP_NAME),
                        cu_lws_workload_name(&a, "infer", "0b6f-uid", 0));
    json_object_put(patch);
    json_object_put(p);
    json_object_object_del(cu_jpath(l, "metadata.labels"), CU_LABEL_QUEUE_NAME);
    p = pod("\"leaderworkerset.sigs.k8s.io/group-index\":\"0\"", susp);
    assert_null(cu_lws_pod_patch(p, l));
    json_object_put(p);
    cu_arena_free(&a);
    json_object_put(l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_counts),
        cmocka_unit_test(test_workload_leader_worker),
        cmocka_unit_test(test_workload_no_leader),
        cmocka_unit_test(test_workload_bad),
        cmocka_unit_test(test_pod_patch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
