/*
 * test_topology.c - the TAS API: the Topology kind (decoding in both
 * versions, Kueue's rules, conversion), the pod-set topology request (from
 * the pod-template annotations of a Job and a JobSet in simulate's
 * decoders; the builder the controller's Workloads use; the Workload's
 * decoding of topologyRequest), and the topology assignment (written in
 * v1beta2's shape, read back from both shapes).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_json.h"
#include "cu_objects.h"
#include "cu_topology.h"
#include "cu_webhook.h"

/* Decodes YAML text into w; returns the decoder's result, problems in d. */
static cu_err load(cu_world *w, cu_diag *d, const char *text)
{
    cu_arena a;
    cu_arena_init(&a, 0);
    cu_doc *docs = NULL;
    size_t n = 0;
    cu_err rc = cu_doc_parse("t.yaml", text, strlen(text), &a, &docs, &n, d);
    for (size_t i = 0; rc == CU_OK && i < n; i++) {
        cu_err r = cu_world_decode(w, &docs[i], d);
        if (r != CU_OK)
            rc = r;
    }
    cu_arena_free(&a);
    return rc;
}

static void dump(const cu_diag *d)
{
    for (size_t i = 0; i < d->n; i++)
        fprintf(stderr, "%s\n", d->msgs[i]);
}

/* ---------------- the Topology kind ---------------- */

static void test_topology_decode(void **state)
{
    (void)state;
    cu_world w;
    cu_diag d;
    cu_world_init(&w);
    cu_diag_init(&d);
    assert_int_equal(load(&w, &d,
                          "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Topology\n"
                          "metadata: {name: default}\nspec:\n  levels:\n"
                          "  - nodeLabel: cloud.com/block\n  - nodeLabel: cloud.com/rack\n"
                          "  - nodeLabel: kubernetes.io/hostname\n"
                          "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: Topology\n"
                          "metadata: {name: old}\nspec:\n  levels:\n  - nodeLabel: rack\n"),
                     CU_OK);
    assert_int_equal(w.topologies.n, 2);
    const cu_topology *t = w.topologies.items[0];
    assert_string_equal(t->meta.name, "default");
    assert_null(t->meta.ns);
    assert_int_equal(t->nlevels, 3);
    assert_string_equal(t->levels[0], "cloud.com/block");
    assert_string_equal(t->levels[2], "kubernetes.io/hostname");
    assert_int_equal(w.topologies.items[1]->nlevels, 1);
    assert_string_equal(w.topologies.items[1]->levels[0], "rack");
    assert_string_equal(cu_kind_name(CU_KIND_TOPOLOGY), "Topology");
    assert_int_equal(cu_world_validate(&w, &d), CU_OK);
    /* a level that is not an object */
    assert_int_equal(load(&w, &d,
                          "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Topology\n"
                          "metadata: {name: bad}\nspec:\n  levels: [rack]\n"),
                     CU_EINVAL);
    assert_int_equal(w.topologies.n, 2);
    cu_diag_free(&d);
    cu_world_free(&w);
}

/* Validates one Topology of the given levels (YAML flow list); the
 * problems, joined by "|", must be want ("" for none). */
static void topo_problems(const char *levels, const char *want)
{
    char text[4096];
    snprintf(text, sizeof(text),
             "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Topology\nmetadata: {name: t}\n"
             "spec:\n  levels: %s\n",
             levels);
    cu_world w;
    cu_diag d;
    cu_world_init(&w);
    cu_diag_init(&d);
    assert_int_equal(load(&w, &d, text), CU_OK);
    assert_int_equal(w.topologies.n, 1);
    cu_object_validate(CU_KIND_TOPOLOGY, w.topologies.items[0], &d);
    cu_buf b;
    cu_buf_init(&b, 0);
    for (size_t i = 0; i < d.n; i++)
        cu_buf_printf(&b, "%s%s", i ? "|" : "", d.msgs[i]);
    if (strcmp(cu_buf_str(&b), want) != 0)
        fprintf(stderr, "got:  %s\nwant: %s\n", cu_buf_str(&b), want);
    assert_string_equal(cu_buf_str(&b), want);
    cu_buf_free(&b);
    cu_diag_free(&d);
    cu_world_free(&w);
}

static void test_topology_rules(void **state)
{
    (void)state;
    topo_problems("[{nodeLabel: block}, {nodeLabel: kubernetes.io/hostname}]", "");
    topo_problems("[{nodeLabel: example.com/Rack_1.a}]", "");
    topo_problems("[]", "Topology t: spec.levels: Required value");
    topo_problems("[{nodeLabel: a}, {nodeLabel: b}, {nodeLabel: a}]",
                  "Topology t: spec.levels: Invalid value: \"array\": must be unique");
    topo_problems("[{nodeLabel: kubernetes.io/hostname}, {nodeLabel: rack}]",
                  "Topology t: spec.levels: Invalid value: \"array\": the kubernetes.io/hostname "
                  "label can only be used at the lowest level of topology");
    topo_problems("[{nodeLabel: a/b/c}]",
                  "Topology t: spec.levels[0].nodeLabel: Invalid value: \"a/b/c\": "
                  "spec.levels[0].nodeLabel in body should match '" CU_TOPOLOGY_LABEL_PATTERN "'");
    topo_problems("[{nodeLabel: \"\"}]", "Topology t: spec.levels[0].nodeLabel: Required value");
    topo_problems("[{nodeLabel: l1}, {nodeLabel: l2}, {nodeLabel: l3}, {nodeLabel: l4}, "
                  "{nodeLabel: l5}, {nodeLabel: l6}, {nodeLabel: l7}, {nodeLabel: l8}, "
                  "{nodeLabel: l9}, {nodeLabel: l10}, {nodeLabel: l11}, {nodeLabel: l12}, "
                  "{nodeLabel: l13}, {nodeLabel: l14}, {nodeLabel: l15}, {nodeLabel: l16}, "
                  "{nodeLabel: l17}]",
                  "Topology t: spec.levels: Too many: 17: must have at most 16 items");
    /* no 63-character limit on the name part, 316 in all */
    char lv[400], want[600];
    memset(lv, 'a', 317);
    lv[317] = 0;
    char in[500];
    snprintf(in, sizeof(in), "[{nodeLabel: %.100s}]", lv);
    topo_problems(in, "");
    snprintf(in, sizeof(in), "[{nodeLabel: %s}]", lv);
    snprintf(want, sizeof(want),
             "Topology t: spec.levels[0].nodeLabel: Too long: may not be more than 316 bytes");
    topo_problems(in, want);
    assert_true(cu_topology_label_ok("cloud.provider.com/topology-block"));
    assert_false(cu_topology_label_ok("/rack"));
    assert_false(cu_topology_label_ok("Cloud.com/rack"));
    assert_false(cu_topology_label_ok("rack-"));
}

/* The Topology is the same in both versions: the conversion webhook only
 * changes apiVersion, both ways. */
static void test_topology_convert(void **state)
{
    (void)state;
    static const char *const in =
        "{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":\"Topology\",\"metadata\":"
        "{\"name\":\"default\"},\"spec\":{\"levels\":[{\"nodeLabel\":\"rack\"},"
        "{\"nodeLabel\":\"kubernetes.io/hostname\"}]}}";
    json_object *o = cu_json_parse_str(in), *up = NULL, *down = NULL;
    cu_buf msg;
    cu_buf_init(&msg, 0);
    assert_int_equal(cu_wh_convert(o, "kueue.x-k8s.io/v1beta2", &up, &msg), CU_OK);
    assert_string_equal(cu_jstr(up, "apiVersion"), "kueue.x-k8s.io/v1beta2");
    assert_true(cu_json_equal(cu_jget(up, "spec"), cu_jget(o, "spec")));
    assert_int_equal(cu_wh_convert(up, "kueue.x-k8s.io/v1beta1", &down, &msg), CU_OK);
    assert_true(cu_json_equal(down, o));
    json_object_put(o);
    json_object_put(up);
    json_object_put(down);
    cu_buf_free(&msg);
}

/* ---------------- the pod-set topology request ---------------- */

static json_object *ann(const char *json) { return cu_json_parse_str(json); }

static void test_request_build(void **state)
{
    (void)state;
    cu_topo_request r;
    /* no annotation and no index label: no request */
    json_object *a = ann("{}");
    assert_int_equal(cu_topo_request_build(cu_ann_get_json, a, NULL, NULL, NULL, &r), 0);
    assert_false(r.present);
    /* an index label alone makes one (Kueue with TAS on: every Job) */
    assert_int_equal(
        cu_topo_request_build(cu_ann_get_json, a, CU_LABEL_JOB_COMPLETION_INDEX, NULL, NULL, &r),
        0);
    assert_true(r.present);
    json_object *j = cu_topo_request_json(&r);
    assert_string_equal(
        json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
        "{\"podIndexLabel\":\"batch.kubernetes.io/job-completion-index\"}");
    json_object_put(j);
    json_object_put(a);

    /* required wins over the others; the group name only with required or preferred */
    a = ann("{\"" CU_ANN_TAS_REQUIRED "\":\"rack\",\"" CU_ANN_TAS_PREFERRED "\":\"block\","
            "\"" CU_ANN_PODSET_GROUP_NAME "\":\"g\",\"" CU_ANN_TAS_SLICE_REQUIRED "\":\"host\","
            "\"" CU_ANN_TAS_SLICE_SIZE "\":\"2\"}");
    int32_t four = 4;
    assert_int_equal(cu_topo_request_build(cu_ann_get_json, a, CU_LABEL_JOB_COMPLETION_INDEX,
                                           CU_LABEL_JOBSET_JOB_INDEX, &four, &r),
                     0);
    j = cu_topo_request_json(&r);
    assert_string_equal(
        json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
        "{\"required\":\"rack\",\"podIndexLabel\":"
        "\"batch.kubernetes.io/job-completion-index\",\"subGroupIndexLabel\":"
        "\"jobset.sigs.k8s.io/job-index\",\"subGroupCount\":4,"
        "\"podSetGroupName\":\"g\",\"podSetSliceRequiredTopology\":\"host\","
        "\"podSetSliceSize\":2}");
    json_object_put(j);
    json_object_put(a);

    /* unconstrained: a Go boolean */
    a = ann("{\"" CU_ANN_TAS_UNCONSTRAINED "\":\"True\",\"" CU_ANN_PODSET_GROUP_NAME "\":\"g\"}");
    assert_int_equal(cu_topo_request_build(cu_ann_get_json, a, NULL, NULL, NULL, &r), 0);
    j = cu_topo_request_json(&r);
    assert_string_equal(
        json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
        "{\"unconstrained\":true}");
    json_object_put(j);
    json_object_put(a);
    a = ann("{\"" CU_ANN_TAS_UNCONSTRAINED "\":\"yes\"}");
    assert_int_equal(cu_topo_request_build(cu_ann_get_json, a, NULL, NULL, NULL, &r), -1);
    json_object_put(a);
    /* a slice size that is no 32-bit integer */
    a = ann("{\"" CU_ANN_TAS_SLICE_REQUIRED "\":\"rack\",\"" CU_ANN_TAS_SLICE_SIZE
            "\":\"3000000000\"}");
    assert_int_equal(cu_topo_request_build(cu_ann_get_json, a, NULL, NULL, NULL, &r), -1);
    json_object_put(a);
    /* a slice without a level choice still makes a request; the size alone does not */
    a = ann("{\"" CU_ANN_TAS_SLICE_REQUIRED "\":\"rack\",\"" CU_ANN_TAS_SLICE_SIZE "\":\"2\"}");
    assert_int_equal(cu_topo_request_build(cu_ann_get_json, a, NULL, NULL, NULL, &r), 0);
    assert_true(r.present);
    assert_string_equal(r.slice_required, "rack");
    json_object_put(a);
    a = ann("{\"" CU_ANN_TAS_SLICE_SIZE "\":\"2\"}");
    assert_int_equal(cu_topo_request_build(cu_ann_get_json, a, NULL, NULL, NULL, &r), 0);
    assert_false(r.present);
    json_object_put(a);
}

/* simulate's Job and JobSet decoders fill the pod set's request as the
 * controller's Workload builder does; the Workload decoder reads it back. */
static void test_request_decode(void **state)
{
    (void)state;
    cu_world w;
    cu_diag d;
    cu_world_init(&w);
    cu_diag_init(&d);
    cu_err rc = load(
        &w, &d,
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n  namespace: ns\n"
        "  labels: {kueue.x-k8s.io/queue-name: lq}\nspec:\n  parallelism: 2\n  template:\n"
        "    metadata:\n      annotations: {kueue.x-k8s.io/podset-preferred-topology: rack}\n"
        "    spec: {containers: [{name: c}]}\n"
        "---\napiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata:\n  name: js\n"
        "  namespace: ns\n  labels: {kueue.x-k8s.io/queue-name: lq}\nspec:\n"
        "  replicatedJobs:\n  - name: w\n    replicas: 3\n    template:\n      spec:\n"
        "        template:\n          metadata:\n            annotations:\n"
        "              kueue.x-k8s.io/podset-required-topology: block\n"
        "          spec: {containers: [{name: c}]}\n"
        "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: wl, namespace: "
        "ns}\nspec:\n  queueName: lq\n  podSets:\n  - name: main\n    count: 2\n"
        "    topologyRequest: {unconstrained: true, podIndexLabel: x, subGroupCount: 2, "
        "podSetSliceRequiredTopology: host, podSetSliceSize: 1}\n"
        "    template: {spec: {containers: [{name: c}]}}\n");
    if (rc != CU_OK)
        dump(&d);
    assert_int_equal(rc, CU_OK);
    assert_int_equal(w.workloads.n, 3);
    const cu_topo_request *r = &w.workloads.items[0]->podsets[0].topo;
    assert_true(r->present);
    assert_string_equal(r->preferred, "rack");
    assert_null(r->required);
    assert_string_equal(r->pod_index_label, CU_LABEL_JOB_COMPLETION_INDEX);
    r = &w.workloads.items[1]->podsets[0].topo;
    assert_string_equal(r->required, "block");
    assert_string_equal(r->subgroup_index_label, CU_LABEL_JOBSET_JOB_INDEX);
    assert_true(r->has_subgroup_count);
    assert_int_equal(r->subgroup_count, 3);
    r = &w.workloads.items[2]->podsets[0].topo;
    assert_true(r->present);
    assert_true(r->has_unconstrained);
    assert_true(r->unconstrained);
    assert_string_equal(r->pod_index_label, "x");
    assert_int_equal(r->subgroup_count, 2);
    assert_string_equal(r->slice_required, "host");
    assert_int_equal(r->slice_size, 1);
    /* an annotation simulate cannot read is an error on the Job */
    cu_diag_free(&d);
    cu_diag_init(&d);
    assert_int_equal(
        load(&w, &d,
             "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: bad\n  namespace: ns\n"
             "  labels: {kueue.x-k8s.io/queue-name: lq}\nspec:\n  template:\n    metadata:\n"
             "      annotations: {kueue.x-k8s.io/podset-unconstrained-topology: maybe}\n"
             "    spec: {containers: [{name: c}]}\n"),
        CU_EINVAL);
    assert_int_equal(d.nerrors, 1);
    assert_non_null(strstr(d.msgs[0], "spec.template.metadata.annotations"));
    cu_diag_free(&d);
    cu_world_free(&w);
}

/* ---------------- the topology assignment ---------------- */

static const char *levels2[] = { "cloud.com/rack", "kubernetes.io/hostname" };

static void check_assign(const cu_topo_assign *x, size_t nd, const char *const *vals,
                         const int32_t *counts)
{
    assert_non_null(x);
    assert_int_equal(x->nlevels, 2);
    assert_string_equal(x->levels[0], levels2[0]);
    assert_string_equal(x->levels[1], levels2[1]);
    assert_int_equal(x->ndomains, nd);
    for (size_t i = 0; i < nd; i++) {
        assert_string_equal(x->values[2 * i], vals[2 * i]);
        assert_string_equal(x->values[2 * i + 1], vals[2 * i + 1]);
        assert_int_equal(x->counts[i], counts[i]);
    }
}

/* A Workload (JSON) with the assignment ta, decoded. */
static const cu_topo_assign *decode_wl(cu_world *w, cu_diag *d, const char *api, json_object *ta)
{
    json_object *wl = cu_json_parse_str(
        "{\"kind\":\"Workload\",\"metadata\":{\"name\":\"wl\",\"namespace\":\"ns\"},"
        "\"spec\":{\"queueName\":\"lq\",\"podSets\":[{\"name\":\"main\",\"count\":3,"
        "\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\"}]}}}]},\"status\":{\"admission\":"
        "{\"clusterQueue\":\"cq\",\"podSetAssignments\":[{\"name\":\"main\",\"count\":3}]}}}");
    cu_jset_str(wl, "apiVersion", api);
    json_object_object_add(
        json_object_array_get_idx(cu_jpath(wl, "status.admission.podSetAssignments"), 0),
        "topologyAssignment", json_object_get(ta));
    const char *text = json_object_to_json_string(wl);
    cu_err rc = load(w, d, text);
    json_object_put(wl);
    if (rc != CU_OK) {
        dump(d);
        return NULL;
    }
    const cu_workload *x = w->workloads.items[w->workloads.n - 1];
    assert_int_equal(x->npsa, 1);
    return x->psa[0].topo;
}

static void test_assign_json(void **state)
{
    (void)state;
    static const char *vals[] = { "rack-1", "node-a", "rack-1", "node-b", "rack-1", "node-c" };
    int32_t counts[] = { 1, 1, 1 };
    cu_topo_assign ta = { 2, levels2, 3, vals, counts };
    json_object *j = cu_topo_assign_json(&ta);
    assert_non_null(j);
    /* v1beta2: one slice, rack universal, hosts with their common prefix,
     * the counts universal */
    assert_string_equal(
        json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
        "{\"levels\":[\"cloud.com/rack\",\"kubernetes.io/hostname\"],\"slices\":["
        "{\"domainCount\":3,\"valuesPerLevel\":[{\"universal\":\"rack-1\"},"
        "{\"individual\":{\"prefix\":\"node-\",\"roots\":[\"a\",\"b\",\"c\"]}}],"
        "\"podCounts\":{\"universal\":1}}]}");
    /* read back from the v1beta2 shape */
    cu_world w;
    cu_diag d;
    cu_world_init(&w);
    cu_diag_init(&d);
    check_assign(decode_wl(&w, &d, "kueue.x-k8s.io/v1beta2", j), 3, vals, counts);
    json_object_put(j);

    /* different counts, read from v1beta1's domains */
    static const char *v2[] = { "r1", "h1", "r2", "h2" };
    int32_t c2[] = { 2, 1 };
    cu_topo_assign tb = { 2, levels2, 2, v2, c2 };
    j = cu_topo_assign_json(&tb);
    assert_non_null(j);
    assert_non_null(strstr(
        json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
        "\"podCounts\":{\"individual\":[2,1]}"));
    json_object *old = cu_json_parse_str(
        "{\"levels\":[\"cloud.com/rack\",\"kubernetes.io/hostname\"],\"domains\":["
        "{\"values\":[\"r1\",\"h1\"],\"count\":2},{\"values\":[\"r2\",\"h2\"],\"count\":1}]}");
    check_assign(decode_wl(&w, &d, "kueue.x-k8s.io/v1beta1", old), 2, v2, c2);
    /* and the v1beta2 writing of the same decodes to the same */
    check_assign(decode_wl(&w, &d, "kueue.x-k8s.io/v1beta2", j), 2, v2, c2);
    json_object_put(old);
    json_object_put(j);

    /* a malformed slice is an error naming the field */
    json_object *bad = cu_json_parse_str(
        "{\"levels\":[\"a\"],\"slices\":[{\"domainCount\":2,\"valuesPerLevel\":"
        "[{\"individual\":{\"roots\":[\"x\"]}}],\"podCounts\":{\"universal\":1}}]}");
    cu_diag_free(&d);
    cu_diag_init(&d);
    assert_null(decode_wl(&w, &d, "kueue.x-k8s.io/v1beta2", bad));
    assert_true(d.nerrors > 0);
    assert_non_null(strstr(d.msgs[0], "topologyAssignment"));
    json_object_put(bad);
    /* no assignment: NULL */
    assert_null(cu_topo_assign_json(NULL));
    cu_diag_free(&d);
    cu_world_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_topology_decode),  cmocka_unit_test(test_topology_rules),
        cmocka_unit_test(test_topology_convert), cmocka_unit_test(test_request_build),
        cmocka_unit_test(test_request_decode),   cmocka_unit_test(test_assign_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
