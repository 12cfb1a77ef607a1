/*
 * test_pod.c - Kueue's rules for the Workloads of plain Pods and pod
 * groups (cu_pod.h): the role hash (Kueue's own test values), names, the
 * single pod's and the group's Workload, the group's end.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "cu_json.h"
#include "cu_pod.h"

#include <stdio.h>
#include <string.h>

static json_object *pod(const char *name, const char *cpu, const char *extra_ann)
{
    char s[2000];
    snprintf(s, sizeof(s),
             "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns\",\"uid\":\"uid-%s\","
             "\"labels\":{\"kueue.x-k8s.io/queue-name\":\"lq\"},\"annotations\":{%s}},"
             "\"spec\":{\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"c\","
             "\"image\":\"pause\",\"resources\":{\"requests\":{%s}}}]}}",
             name, name, extra_ann ? extra_ann : "", cpu ? cpu : "");
    json_object *o = cu_json_parse_str(s);
    assert_non_null(o);
    return o;
}

static void test_role_hash(void **st)
{
    (void)st;
    char h[CU_POD_ROLE_MAX + 1];
    /* the values Kueue's tests expect of its test pod: no requests, and 1 cpu */
    json_object *p = pod("a", NULL, NULL);
    assert_int_equal(cu_pod_role_hash(cu_jget(p, "spec"), h), 0);
    assert_string_equal(h, "a9f06f3a");
    json_object_put(p);
    p = pod("a", "\"cpu\":\"1\"", NULL);
    assert_int_equal(cu_pod_role(p, h), 0);
    assert_string_equal(h, "dc85db45");
    json_object_put(p);
    /* map keys are hashed sorted, whatever order they come in */
    json_object *x = pod("x", "\"memory\":\"1Gi\",\"cpu\":\"1\"", NULL);
    json_object *y = pod("y", "\"cpu\":\"1\",\"memory\":\"1Gi\"", NULL);
    char hx[9], hy[9];
    assert_int_equal(cu_pod_role_hash(cu_jget(x, "spec"), hx), 0);
    assert_int_equal(cu_pod_role_hash(cu_jget(y, "spec"), hy), 0);
    assert_string_equal(hx, hy);
    assert_string_not_equal(hx, "dc85db45");
    json_object_put(x);
    json_object_put(y);
    /* the annotation, when present, is the role */
    p = pod("a", "\"cpu\":\"1\"", "\"kueue.x-k8s.io/role-hash\":\"leader\"");
    assert_int_equal(cu_pod_role(p, h), 0);
    assert_string_equal(h, "leader");
    json_object_put(p);
}

static void test_single(void **st)
{
    (void)st;
    cu_arena a;
    cu_arena_init(&a, 0);
    assert_string_equal(cu_pod_workload_name(&a, "p1", "uid-1"), "pod-p1-afa94");
    cu_arena_free(&a);
    json_object *p = pod("p1", "\"nvidia.com/gpu\":\"1\"", NULL);
    cu_diag d;
    cu_diag_init(&d);
    json_object *wl = cu_pod_workload(p, &d);
    assert_non_null(wl);
    assert_string_equal(cu_jpath_str(wl, "metadata.name"), "pod-p1-a4d1a"); /* uid-p1 */
    assert_string_equal(cu_jpath_str(wl, "spec.queueName"), "lq");
    json_object *ps = json_object_array_get_idx(cu_jpath(wl, "spec.podSets"), 0);
    assert_int_equal(cu_jarr_len(cu_jpath(wl, "spec.podSets")), 1);
    assert_string_equal(cu_jstr(ps, "name"), "main");
    assert_int_equal(cu_jint(ps, "count"), 1);
    assert_true(cu_json_equal(cu_jpath(ps, "template.spec"), cu_jget(p, "spec")));
    /* Kueue's request: the pod group index label; the pod's TAS annotations */
    assert_string_equal(cu_jpath_str(ps, "topologyRequest.podIndexLabel"),
                        "kueue.x-k8s.io/pod-group-pod-index");
    assert_null(cu_jpath(ps, "topologyRequest.preferred"));
    json_object *pmd = cu_jget(p, "metadata"), *pann = json_object_new_object();
    cu_jset_str(pann, "kueue.x-k8s.io/podset-preferred-topology", "cloud.com/rack");
    json_object_object_add(pmd, "annotations", pann);
    json_object *wl2 = cu_pod_workload(p, &d);
    assert_string_equal(cu_jpath_str(json_object_array_get_idx(cu_jpath(wl2, "spec.podSets"), 0),
                                     "topologyRequest.preferred"),
                        "cloud.com/rack");
    json_object_put(wl2);
    json_object_object_del(pmd, "annotations");
    json_object *own = json_object_array_get_idx(cu_jpath(wl, "metadata.ownerReferences"), 0);
    assert_string_equal(cu_jstr(own, "kind"), "Pod");
    assert_string_equal(cu_jstr(own, "uid"), "uid-p1");
    assert_true(cu_jas_true(cu_jget(own, "controller")));
    json_object_put(wl);
    /* no queue: said, on the pod's field */
    json_object_object_del(cu_jpath(p, "metadata.labels"), "kueue.x-k8s.io/queue-name");
    assert_null(cu_pod_workload(p, &d));
    assert_true(d.n > 0);
    assert_non_null(strstr(d.msgs[0], "Pod ns/p1: metadata.labels"));
    cu_diag_free(&d);
    json_object_put(p);
}

static void test_group(void **st)
{
    (void)st;
    json_object *pods[4] = {
        pod("w1", "\"cpu\":\"1\"", NULL),
        pod("l", NULL, NULL),
        pod("w2", "\"cpu\":\"1\"", NULL),
        pod("w3", "\"cpu\":\"1\"", NULL),
    };
    cu_diag d;
    cu_diag_init(&d);
    json_object *wl = cu_pod_group_workload("grp", pods, 4, &d);
    assert_non_null(wl);
    assert_string_equal(cu_jpath_str(wl, "metadata.name"), "grp");
    assert_string_equal(
        cu_jstr(cu_jpath(wl, "metadata.annotations"), "kueue.x-k8s.io/is-group-workload"), "true");
    json_object *pss = cu_jpath(wl, "spec.podSets");
    assert_int_equal(cu_jarr_len(pss), 2);
    /* sorted by name: a9f06f3a (the one without requests) before dc85db45 */
    assert_string_equal(cu_jstr(json_object_array_get_idx(pss, 0), "name"), "a9f06f3a");
    assert_int_equal(cu_jint(json_object_array_get_idx(pss, 0), "count"), 1);
    assert_string_equal(cu_jstr(json_object_array_get_idx(pss, 1), "name"), "dc85db45");
    assert_int_equal(cu_jint(json_object_array_get_idx(pss, 1), "count"), 3);
    json_object *owners = cu_jpath(wl, "metadata.ownerReferences");
    assert_int_equal(cu_jarr_len(owners), 4);
    json_object *o = json_object_array_get_idx(owners, 1);
    assert_string_equal(cu_jstr(o, "name"), "l");
    assert_null(cu_jget(o, "controller"));
    json_object_put(wl);
    cu_diag_free(&d);
    for (size_t i = 0; i < 4; i++)
        json_object_put(pods[i]);
}

static void test_group_rules(void **st)
{
    (void)st;
    char m[100];
    assert_true(cu_pod_group_finished(4, 4, 0, 0, m, sizeof(m)));
    assert_string_equal(m, "Pods succeeded: 4/4.");
    assert_false(cu_pod_group_finished(3, 4, 1, 0, m, sizeof(m)));
    assert_false(cu_pod_group_finished(3, 4, 0, 0, m, sizeof(m))); /* waits for a replacement */
    assert_false(cu_pod_group_finished(2, 4, 1, 1, m, sizeof(m))); /* one still runs */
    assert_true(cu_pod_group_finished(2, 4, 0, 1, m, sizeof(m)));  /* not retriable: ends */
    assert_string_equal(m, "Pods succeeded: 2/4.");
    int32_t t = 0;
    assert_true(cu_pod_group_total("4", &t));
    assert_int_equal(t, 4);
    assert_false(cu_pod_group_total("0", &t));
    assert_false(cu_pod_group_total("x", &t));
    assert_false(cu_pod_group_total("", &t));
    assert_false(cu_pod_group_total(NULL, &t));
    json_object *p = cu_json_parse_str("{\"status\":{\"phase\":\"Failed\"}}");
    assert_true(cu_pod_terminated(p));
    assert_false(cu_pod_runnable(p));
    json_object_put(p);
    p = cu_json_parse_str("{\"metadata\":{\"deletionTimestamp\":\"x\"},\"status\":{}}");
    assert_false(cu_pod_runnable(p)); /* deleted before it was bound */
    json_object_put(p);
    p = cu_json_parse_str("{\"metadata\":{\"deletionTimestamp\":\"x\"},\"spec\":{\"nodeName\":"
                          "\"n\"},\"status\":{\"phase\":\"Running\"}}");
    assert_true(cu_pod_runnable(p));
    assert_false(cu_pod_terminated(p));
    json_object_put(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_role_hash),
        cmocka_unit_test(test_single),
        cmocka_unit_test(test_group),
        cmocka_unit_test(test_group_rules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
