/*
 * test_render.c - cu_sim_render on a small world run through the real
 * engine: the JSON shape and values, the YAML stream (read back with the
 * cu_doc parser) and the table layout.
 *
 * The world: two ClusterQueues sharing cohort "co" with 4 cpu / 4Gi each;
 * ns/a asks 3 x (2 cpu, 1Gi) in cq1 and must borrow 2 cpu; ns/b asks 4 cpu
 * more than is left and pends; ns/c names a LocalQueue that does not exist.
 * The same world with fair sharing (and a Cohort object "co" under an
 * implicit "root") checks the weightedShare/cohorts fields; a small
 * preemption world checks the eviction conditions and counters.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "cu_sim.h"

#define NOW_MS INT64_C(1767225600000)

static const char world_yaml[] =
    "apiVersion: v1\n"
    "kind: Namespace\n"
    "metadata: {name: ns}\n"
    "---\n"
    "apiVersion: kueue.x-k8s.io/v1beta2\n"
    "kind: ResourceFlavor\n"
    "metadata: {name: f1}\n"
    "---\n"
    "apiVersion: kueue.x-k8s.io/v1beta2\n"
    "kind: ClusterQueue\n"
    "metadata: {name: cq2}\n"
    "spec:\n"
    "  cohortName: co\n"
    "  namespaceSelector: {}\n"
    "  resourceGroups:\n"
    "  - coveredResources: [cpu, memory]\n"
    "    flavors:\n"
    "    - name: f1\n"
    "      resources: [{name: cpu, nominalQuota: 4}, {name: memory, nominalQuota: 4Gi}]\n"
    "---\n"
    "apiVersion: kueue.x-k8s.io/v1beta2\n"
    "kind: ClusterQueue\n"
    "metadata: {name: cq1}\n"
    "spec:\n"
    "  cohortName: co\n"
    "  namespaceSelector: {}\n"
    "  resourceGroups:\n"
    "  - coveredResources: [cpu, memory]\n"
    "    flavors:\n"
    "    - name: f1\n"
    "      resources: [{name: cpu, nominalQuota: 4}, {name: memory, nominalQuota: 4Gi}]\n"
    "---\n"
    "apiVersion: kueue.x-k8s.io/v1beta2\n"
    "kind: LocalQueue\n"
    "metadata: {name: lq1, namespace: ns}\n"
    "spec: {clusterQueue: cq1}\n"
    "---\n"
    "apiVersion: kueue.x-k8s.io/v1beta2\n"
    "kind: Workload\n"
    "metadata: {name: b, namespace: ns, creationTimestamp: \"2025-12-31T10:00:00Z\"}\n"
    "spec:\n"
    "  queueName: lq1\n"
    "  podSets:\n"
    "  - name: main\n"
    "    count: 1\n"
    "    template: {spec: {containers: [{name: c, image: i,"
    " resources: {requests: {cpu: 4}}}]}}\n"
    "---\n"
    "apiVersion: kueue.x-k8s.io/v1beta2\n"
    "kind: Workload\n"
    "metadata: {name: a, namespace: ns, creationTimestamp: \"2025-12-31T09:00:00Z\"}\n"
    "spec:\n"
    "  queueName: lq1\n"
    "  podSets:\n"
    "  - name: main\n"
    "    count: 3\n"
    "    template: {spec: {containers: [{name: c, image: i,"
    " resources: {requests: {cpu: 2, memory: 1Gi}}}]}}\n"
    "---\n"
    "apiVersion: kueue.x-k8s.io/v1beta2\n"
    "kind: Workload\n"
    "metadata: {name: c, namespace: ns, creationTimestamp: \"2025-12-31T11:00:00Z\"}\n"
    "spec:\n"
    "  queueName: nope\n"
    "  podSets:\n"
    "  - name: main\n"
    "    count: 1\n"
    "    template: {spec: {containers: [{name: c, image: i,"
    " resources: {requests: {cpu: 1}}}]}}\n";

typedef struct fixture {
    cu_world w;
    cu_engine *e;
    int64_t now;
    cu_buf out;
} fixture;

/* Builds a fixture from the concatenated YAML texts (NULL-terminated),
 * runs the engine for max_cycles cycles (0: until steady). */
static fixture *build(const char *const *texts, const cu_engine_opts *opts, int max_cycles)
{
    fixture *f = test_calloc(1, sizeof(*f));
    assert_non_null(f);
    f->now = NOW_MS;
    cu_world_init(&f->w);
    cu_diag d;
    cu_diag_init(&d);
    cu_arena a;
    cu_arena_init(&a, 0);
    for (size_t t = 0; texts[t]; t++) {
        cu_doc *docs = NULL;
        size_t ndocs = 0;
        assert_int_equal(
            cu_doc_parse("world.yaml", texts[t], strlen(texts[t]), &a, &docs, &ndocs, &d), CU_OK);
        for (size_t i = 0; i < ndocs; i++)
            assert_int_equal(cu_world_decode(&f->w, &docs[i], &d), CU_OK);
    }
    cu_arena_free(&a);
    assert_int_equal(cu_world_validate(&f->w, &d), CU_OK);
    cu_engine_opts eo = { 0 };
    if (opts)
        eo = *opts;
    eo.clock.now_ms = cu_clock_fake_now;
    eo.clock.ud = &f->now;
    f->e = cu_engine_new(&eo);
    assert_non_null(f->e);
    assert_int_equal(cu_engine_load(f->e, &f->w, &d), CU_OK);
    if (max_cycles > 0)
        for (int i = 0; i < max_cycles; i++)
            assert_int_equal(cu_engine_cycle(f->e, NULL), CU_OK);
    else
        cu_engine_run(f->e, 1000);
    assert_int_equal(cu_engine_check_invariants(f->e, &d), CU_OK);
    assert_int_equal(d.nerrors, 0);
    cu_diag_free(&d);
    cu_buf_init(&f->out, 0);
    return f;
}

static int setup(void **state)
{
    static const char *const texts[] = { world_yaml, NULL };
    *state = build(texts, NULL, 0);
    return 0;
}

/* The same world with fair sharing on and cohort "co" given as an object
 * whose parent "root" is implicit. */
static const char cohort_yaml[] = "apiVersion: kueue.x-k8s.io/v1beta2\n"
                                  "kind: Cohort\n"
                                  "metadata: {name: co}\n"
                                  "spec: {parentName: root}\n";

static int setup_fs(void **state)
{
    static const char *const texts[] = { world_yaml, cohort_yaml, NULL };
    cu_engine_opts eo = { 0 };
    eo.fair_sharing = 1;
    *state = build(texts, &eo, 0);
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    cu_buf_free(&f->out);
    cu_engine_free(f->e);
    cu_world_free(&f->w);
    test_free(f);
    return 0;
}

/* ---- JSON ---- */

static json_object *jget(json_object *o, const char *key)
{
    json_object *v = NULL;
    assert_true(json_object_object_get_ex(o, key, &v));
    return v;
}

static const char *jstr(json_object *o, const char *key)
{
    json_object *v = jget(o, key);
    assert_true(json_object_is_type(v, json_type_string));
    return json_object_get_string(v);
}

static void assert_keys(json_object *o, const char *const *want, size_t n)
{
    size_t i = 0;
    json_object_object_foreach (o, k, v) {
        (void)v;
        assert_true(i < n);
        assert_string_equal(k, want[i]);
        i++;
    }
    assert_int_equal(i, n);
}

static json_object *render_json_fs(fixture *f, int fs)
{
    cu_sim_opts o = { 0 };
    o.format = CU_SIM_JSON;
    o.fair_sharing = fs;
    assert_int_equal(cu_sim_render(f->e, &f->w, &o, &f->out), CU_OK);
    assert_true(f->out.len > 0);
    assert_int_equal(f->out.data[f->out.len - 1], '\n');
    json_object *root = json_tokener_parse(cu_buf_str(&f->out));
    assert_non_null(root);
    return root;
}

static json_object *render_json(fixture *f) { return render_json_fs(f, 0); }

static void test_json_workloads(void **state)
{
    fixture *f = *state;
    json_object *root = render_json(f);
    static const char *const top[] = { "workloads", "clusterQueues" };
    assert_keys(root, top, 2);
    json_object *wls = jget(root, "workloads");
    assert_int_equal(json_object_array_length(wls), 3);

    static const char *const wkeys[] = { "name",    "admitted",  "clusterQueue",
                                         "podSets", "evictions", "reason" };
    static const struct {
        const char *name;
        int admitted;
        const char *cq; /* NULL: JSON null */
    } want[] = {
        { "ns/a", 1, "cq1" },
        { "ns/b", 0, "cq1" },
        { "ns/c", 0, NULL },
    };
    for (size_t i = 0; i < 3; i++) {
        json_object *w = json_object_array_get_idx(wls, i);
        assert_keys(w, wkeys, 6);
        assert_string_equal(jstr(w, "name"), want[i].name);
        assert_int_equal(json_object_get_boolean(jget(w, "admitted")), want[i].admitted);
        if (want[i].cq)
            assert_string_equal(jstr(w, "clusterQueue"), want[i].cq);
        else
            assert_null(jget(w, "clusterQueue"));
        assert_int_equal(json_object_get_int(jget(w, "evictions")), 0);
        json_object *ps = jget(w, "podSets");
        assert_true(json_object_is_type(ps, json_type_array));
        if (want[i].admitted) {
            assert_null(jget(w, "reason"));
        } else {
            assert_int_equal(json_object_array_length(ps), 0);
            assert_true(strlen(jstr(w, "reason")) > 0);
        }
    }

    json_object *a = json_object_array_get_idx(wls, 0);
    json_object *ps = jget(a, "podSets");
    assert_int_equal(json_object_array_length(ps), 1);
    json_object *p0 = json_object_array_get_idx(ps, 0);
    static const char *const pkeys[] = { "name", "count", "flavors" };
    assert_keys(p0, pkeys, 3);
    assert_string_equal(jstr(p0, "name"), "main");
    assert_int_equal(json_object_get_int(jget(p0, "count")), 3);
    static const char *const fkeys[] = { "cpu", "memory" };
    assert_keys(jget(p0, "flavors"), fkeys, 2);
    assert_string_equal(jstr(jget(p0, "flavors"), "cpu"), "f1");
    json_object_put(root);
}

static void test_json_cluster_queues(void **state)
{
    fixture *f = *state;
    json_object *root = render_json(f);
    json_object *cqs = jget(root, "clusterQueues");
    assert_int_equal(json_object_array_length(cqs), 2);
    static const char *const ckeys[] = { "name", "cohort", "pending", "admitted", "usage" };
    static const char *const ukeys[] = { "flavor", "resource", "total", "borrowed", "nominal" };
    /* name order, although cq2 was declared first */
    static const struct {
        const char *name;
        int pending, admitted;
        const char *usage[2][5];
    } want[] = {
        { "cq1", 1, 1, { { "f1", "cpu", "6", "2", "4" }, { "f1", "memory", "3Gi", "0", "4Gi" } } },
        { "cq2", 0, 0, { { "f1", "cpu", "0", "0", "4" }, { "f1", "memory", "0", "0", "4Gi" } } },
    };
    for (size_t i = 0; i < 2; i++) {
        json_object *c = json_object_array_get_idx(cqs, i);
        assert_keys(c, ckeys, 5);
        assert_string_equal(jstr(c, "name"), want[i].name);
        assert_string_equal(jstr(c, "cohort"), "co");
        assert_int_equal(json_object_get_int(jget(c, "pending")), want[i].pending);
        assert_int_equal(json_object_get_int(jget(c, "admitted")), want[i].admitted);
        json_object *us = jget(c, "usage");
        assert_int_equal(json_object_array_length(us), 2);
        for (size_t k = 0; k < 2; k++) {
            json_object *u = json_object_array_get_idx(us, k);
            assert_keys(u, ukeys, 5);
            for (size_t j = 0; j < 5; j++)
                assert_string_equal(jstr(u, ukeys[j]), want[i].usage[k][j]);
        }
    }
    json_object_put(root);
}

/* ---- YAML ---- */

static const char *path_str(const cu_node *n, const char *path)
{
    const char *s = cu_node_scalar(cu_node_path(n, path));
    assert_non_null(s);
    return s;
}

static const cu_node *cond(const cu_node *doc, const char *type)
{
    const cu_node *cs = cu_node_path(doc, "status.conditions");
    assert_non_null(cs);
    for (size_t i = 0; i < cs->n; i++)
        if (strcmp(path_str(cs->vals[i], "type"), type) == 0)
            return cs->vals[i];
    fail_msg("no %s condition", type);
    return NULL;
}

static void test_yaml_stream(void **state)
{
    fixture *f = *state;
    cu_sim_opts o = { 0 };
    o.format = CU_SIM_YAML;
    o.now_ms = NOW_MS + 3600 * 1000;
    assert_int_equal(cu_sim_render(f->e, &f->w, &o, &f->out), CU_OK);

    cu_arena a;
    cu_arena_init(&a, 0);
    cu_diag d;
    cu_diag_init(&d);
    cu_doc *docs = NULL;
    size_t n = 0;
    assert_int_equal(cu_doc_parse("out.yaml", cu_buf_str(&f->out), f->out.len, &a, &docs, &n, &d),
                     CU_OK);
    static const struct {
        const char *kind, *ns, *name;
    } want[] = {
        { "ClusterQueue", NULL, "cq1" }, { "ClusterQueue", NULL, "cq2" },
        { "LocalQueue", "ns", "lq1" },   { "Workload", "ns", "a" },
        { "Workload", "ns", "b" },       { "Workload", "ns", "c" },
    };
    assert_int_equal(n, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < n; i++) {
        const cu_node *r = docs[i].root;
        assert_string_equal(path_str(r, "apiVersion"), "kueue.x-k8s.io/v1beta2");
        assert_string_equal(path_str(r, "kind"), want[i].kind);
        assert_string_equal(path_str(r, "metadata.name"), want[i].name);
        if (want[i].ns)
            assert_string_equal(path_str(r, "metadata.namespace"), want[i].ns);
        assert_null(cu_node_get(r, "spec"));
    }

    /* cq1: counters, reservation with borrowing, Active condition */
    const cu_node *cq1 = docs[0].root;
    int64_t v;
    assert_int_equal(cu_node_int(cu_node_path(cq1, "status.pendingWorkloads"), &v), CU_OK);
    assert_int_equal(v, 1);
    assert_int_equal(cu_node_int(cu_node_path(cq1, "status.admittedWorkloads"), &v), CU_OK);
    assert_int_equal(v, 1);
    const cu_node *fr = cu_node_path(cq1, "status.flavorsReservation");
    assert_non_null(fr);
    assert_int_equal(fr->n, 1);
    assert_string_equal(path_str(fr->vals[0], "name"), "f1");
    const cu_node *res = cu_node_get(fr->vals[0], "resources");
    assert_int_equal(res->n, 2);
    assert_string_equal(path_str(res->vals[0], "name"), "cpu");
    assert_string_equal(path_str(res->vals[0], "total"), "6");
    assert_string_equal(path_str(res->vals[0], "borrowed"), "2");
    assert_string_equal(path_str(res->vals[1], "total"), "3Gi");
    const cu_node *act = cond(cq1, "Active");
    assert_string_equal(path_str(act, "status"), "True");
    assert_string_equal(path_str(act, "reason"), "Ready");
    assert_string_equal(path_str(act, "lastTransitionTime"), "2026-01-01T01:00:00Z");

    /* lq1: totals only */
    const cu_node *lres =
        cu_node_get(cu_node_path(docs[2].root, "status.flavorsUsage")->vals[0], "resources");
    assert_string_equal(path_str(lres->vals[0], "total"), "6");
    assert_null(cu_node_get(lres->vals[0], "borrowed"));
    assert_string_equal(path_str(cond(docs[2].root, "Active"), "message"),
                        "Can submit new workloads to localQueue");

    /* ns/a admitted: admission and two True conditions */
    const cu_node *wa = docs[3].root;
    assert_string_equal(path_str(wa, "status.admission.clusterQueue"), "cq1");
    const cu_node *psa = cu_node_path(wa, "status.admission.podSetAssignments");
    assert_int_equal(psa->n, 1);
    assert_string_equal(path_str(psa->vals[0], "flavors.cpu"), "f1");
    assert_string_equal(path_str(psa->vals[0], "resourceUsage.cpu"), "6");
    assert_string_equal(path_str(psa->vals[0], "resourceUsage.memory"), "3Gi");
    assert_int_equal(cu_node_int(cu_node_get(psa->vals[0], "count"), &v), CU_OK);
    assert_int_equal(v, 3);
    const cu_node *qr = cond(wa, "QuotaReserved");
    assert_string_equal(path_str(qr, "status"), "True");
    assert_string_equal(path_str(qr, "message"), "Quota reserved in ClusterQueue cq1");
    assert_string_equal(path_str(cond(wa, "Admitted"), "reason"), "Admitted");

    /* ns/b and ns/c pending: QuotaReserved=False with the engine's reason */
    for (size_t i = 4; i < 6; i++) {
        const cu_node *w = docs[i].root;
        assert_null(cu_node_path(w, "status.admission"));
        const cu_node *c = cond(w, "QuotaReserved");
        assert_string_equal(path_str(c, "status"), "False");
        assert_true(strlen(path_str(c, "reason")) > 0);
        assert_true(strlen(path_str(c, "message")) > 0);
        assert_string_equal(path_str(c, "lastTransitionTime"), "2026-01-01T01:00:00Z");
    }
    cu_diag_free(&d);
    cu_arena_free(&a);
}

/* ---- fair sharing ---- */

static int64_t jint(json_object *o, const char *key)
{
    json_object *v = jget(o, key);
    assert_true(json_object_is_type(v, json_type_int));
    return json_object_get_int64(v);
}

/* cq1 borrows 2 cpu of the 8 its parent could lend: DRS 2000 * 1000 /
 * 8000 = 250 per mille; cq2 and the cohorts borrow nothing. */
static void test_json_fair_sharing(void **state)
{
    fixture *f = *state;
    json_object *root = render_json_fs(f, 1);
    static const char *const top[] = { "workloads", "clusterQueues", "cohorts" };
    assert_keys(root, top, 3);
    json_object *cqs = jget(root, "clusterQueues");
    static const char *const ckeys[] = { "name",     "cohort", "pending",
                                         "admitted", "usage",  "weightedShare" };
    static const struct {
        const char *name;
        int64_t share;
    } wantcq[] = {
        { "cq1", 250 },
        { "cq2", 0 },
    };
    assert_int_equal(json_object_array_length(cqs), 2);
    for (size_t i = 0; i < 2; i++) {
        json_object *c = json_object_array_get_idx(cqs, i);
        assert_keys(c, ckeys, 6);
        assert_string_equal(jstr(c, "name"), wantcq[i].name);
        assert_int_equal(jint(c, "weightedShare"), wantcq[i].share);
    }
    json_object *cos = jget(root, "cohorts");
    static const char *const hkeys[] = { "name", "parent", "weightedShare" };
    assert_int_equal(json_object_array_length(cos), 2);
    json_object *co = json_object_array_get_idx(cos, 0);
    json_object *rt = json_object_array_get_idx(cos, 1);
    assert_keys(co, hkeys, 3);
    assert_keys(rt, hkeys, 3);
    assert_string_equal(jstr(co, "name"), "co");
    assert_string_equal(jstr(co, "parent"), "root");
    assert_int_equal(jint(co, "weightedShare"), 0);
    assert_string_equal(jstr(rt, "name"), "root");
    assert_null(jget(rt, "parent"));
    assert_int_equal(jint(rt, "weightedShare"), 0);
    json_object_put(root);

    /* rendering without the flag keeps the classic shape */
    cu_buf_free(&f->out);
    cu_buf_init(&f->out, 0);
    root = render_json(f);
    static const char *const top2[] = { "workloads", "clusterQueues" };
    assert_keys(root, top2, 2);
    assert_false(json_object_object_get_ex(
        json_object_array_get_idx(jget(root, "clusterQueues"), 0), "weightedShare", NULL));
    json_object_put(root);
}

/* A zero-weight ClusterQueue that borrows has an infinite share, written
 * as the largest int64. */
static void test_json_zero_weight(void **state)
{
    (void)state;
    static char yaml[sizeof(world_yaml) + 64];
    const char *at = strstr(world_yaml, "metadata: {name: cq1}\nspec:\n");
    assert_non_null(at);
    size_t head = (size_t)(at - world_yaml) + strlen("metadata: {name: cq1}\nspec:\n");
    memcpy(yaml, world_yaml, head);
    snprintf(yaml + head, sizeof(yaml) - head, "  fairSharing: {weight: 0}\n%s", world_yaml + head);
    static const char *texts[] = { NULL, NULL };
    texts[0] = yaml;
    cu_engine_opts eo = { 0 };
    eo.fair_sharing = 1;
    fixture *f = build(texts, &eo, 0);
    json_object *root = render_json_fs(f, 1);
    json_object *cq1 = json_object_array_get_idx(jget(root, "clusterQueues"), 0);
    assert_string_equal(jstr(cq1, "name"), "cq1");
    assert_int_equal(jint(cq1, "weightedShare"), INT64_MAX);
    assert_non_null(strstr(cu_buf_str(&f->out), "\"weightedShare\": 9223372036854775807"));
    json_object_put(root);
    cu_buf_free(&f->out);
    cu_buf_init(&f->out, 0);
    cu_sim_opts o = { 0 };
    o.fair_sharing = 1;
    assert_int_equal(cu_sim_render(f->e, &f->w, &o, &f->out), CU_OK);
    assert_non_null(strstr(cu_buf_str(&f->out),
                           "  weighted share: 9223372036854775807 (weight 0 and borrowing)\n"));
    void *st = f;
    teardown(&st);
}

/* Parses the rendered YAML stream into docs (arena a). */
static size_t parse_out(fixture *f, cu_arena *a, cu_doc **docs)
{
    cu_diag d;
    cu_diag_init(&d);
    size_t n = 0;
    assert_int_equal(cu_doc_parse("out.yaml", cu_buf_str(&f->out), f->out.len, a, docs, &n, &d),
                     CU_OK);
    cu_diag_free(&d);
    return n;
}

static void test_yaml_fair_sharing(void **state)
{
    fixture *f = *state;
    cu_sim_opts o = { 0 };
    o.format = CU_SIM_YAML;
    o.fair_sharing = 1;
    assert_int_equal(cu_sim_render(f->e, &f->w, &o, &f->out), CU_OK);
    cu_arena a;
    cu_arena_init(&a, 0);
    cu_doc *docs = NULL;
    size_t n = parse_out(f, &a, &docs);
    /* ClusterQueues, then the Cohort object (not the implicit root), then
     * the LocalQueue and the Workloads */
    static const char *const kinds[] = { "ClusterQueue", "ClusterQueue", "Cohort",  "LocalQueue",
                                         "Workload",     "Workload",     "Workload" };
    assert_int_equal(n, sizeof kinds / sizeof kinds[0]);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(path_str(docs[i].root, "kind"), kinds[i]);
    int64_t v;
    assert_int_equal(
        cu_node_int(cu_node_path(docs[0].root, "status.fairSharing.weightedShare"), &v), CU_OK);
    assert_int_equal(v, 250);
    assert_int_equal(
        cu_node_int(cu_node_path(docs[1].root, "status.fairSharing.weightedShare"), &v), CU_OK);
    assert_int_equal(v, 0);
    assert_string_equal(path_str(docs[2].root, "apiVersion"), "kueue.x-k8s.io/v1beta2");
    assert_string_equal(path_str(docs[2].root, "metadata.name"), "co");
    assert_int_equal(
        cu_node_int(cu_node_path(docs[2].root, "status.fairSharing.weightedShare"), &v), CU_OK);
    assert_int_equal(v, 0);
    /* the table has the share line under each ClusterQueue header */
    cu_buf_free(&f->out);
    cu_buf_init(&f->out, 0);
    o.format = CU_SIM_TABLE;
    assert_int_equal(cu_sim_render(f->e, &f->w, &o, &f->out), CU_OK);
    const char *s = cu_buf_str(&f->out);
    const char *cq1 = strstr(s, "ClusterQueue cq1 (cohort co)");
    assert_non_null(cq1);
    assert_ptr_equal(strstr(cq1, "\n") + 1, strstr(cq1, "  weighted share: 250\n"));
    assert_non_null(strstr(s, "  weighted share: 0\n"));
    cu_arena_free(&a);
}

/* ---- preemption ---- */

/* ns/low (priority 1) holds 3 of cq's 4 cpu from the start; ns/high
 * (priority 10) needs 3 and may preempt lower priorities in its queue. */
static const char preempt_yaml[] =
    "apiVersion: v1\n"
    "kind: Namespace\n"
    "metadata: {name: ns}\n"
    "---\n"
    "apiVersion: kueue.x-k8s.io/v1beta2\n"
    "kind: ResourceFlavor\n"
    "metadata: {name: f1}\n"
    "---\n"
    "apiVersion: kueue.x-k8s.io/v1beta2\n"
    "kind: ClusterQueue\n"
    "metadata: {name: cq}\n"
    "spec:\n"
    "  namespaceSelector: {}\n"
    "  preemption: {withinClusterQueue: LowerPriority}\n"
    "  resourceGroups:\n"
    "  - coveredResources: [cpu]\n"
    "    flavors:\n"
    "    - name: f1\n"
    "      resources: [{name: cpu, nominalQuota: 4}]\n"
    "---\n"
    "apiVersion: kueue.x-k8s.io/v1beta2\n"
    "kind: LocalQueue\n"
    "metadata: {name: lq, namespace: ns}\n"
    "spec: {clusterQueue: cq}\n"
    "---\n"
    "apiVersion: kueue.x-k8s.io/v1beta2\n"
    "kind: Workload\n"
    "metadata: {name: low, namespace: ns, creationTimestamp: \"2025-12-31T09:00:00Z\"}\n"
    "spec:\n"
    "  queueName: lq\n"
    "  priority: 1\n"
    "  podSets:\n"
    "  - name: main\n"
    "    count: 1\n"
    "    template: {spec: {containers: [{name: c, image: i, resources: {requests: {cpu: 3}}}]}}\n"
    "status:\n"
    "  admission:\n"
    "    clusterQueue: cq\n"
    "    podSetAssignments:\n"
    "    - {name: main, count: 1, flavors: {cpu: f1}, resourceUsage: {cpu: 3}}\n"
    "  conditions:\n"
    "  - {type: QuotaReserved, status: \"True\", reason: QuotaReserved, message: m,\n"
    "     lastTransitionTime: \"2025-12-31T09:00:00Z\"}\n"
    "---\n"
    "apiVersion: kueue.x-k8s.io/v1beta2\n"
    "kind: Workload\n"
    "metadata: {name: high, namespace: ns, creationTimestamp: \"2025-12-31T10:00:00Z\"}\n"
    "spec:\n"
    "  queueName: lq\n"
    "  priority: 10\n"
    "  podSets:\n"
    "  - name: main\n"
    "    count: 1\n"
    "    template: {spec: {containers: [{name: c, image: i, resources: {requests: {cpu: 3}}}]}}\n";

#define PREEMPT_MSG \
    "Preempted to accommodate a workload (UID: UNKNOWN, JobUID: UNKNOWN) due to " \
    "prioritization in the ClusterQueue; preemptor path: /cq; preemptee path: /cq"

static fixture *preempt_fixture(int one_head, int max_cycles)
{
    static const char *const texts[] = { preempt_yaml, NULL };
    cu_engine_opts eo = { 0 };
    eo.one_head_per_cycle = one_head;
    return build(texts, &eo, max_cycles);
}

static const cu_node *yaml_doc(cu_doc *docs, size_t n, const char *kind, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(path_str(docs[i].root, "kind"), kind) == 0 &&
            strcmp(path_str(docs[i].root, "metadata.name"), name) == 0)
            return docs[i].root;
    fail_msg("no %s %s in the output", kind, name);
    return NULL;
}

static void assert_cond(const cu_node *doc, const char *type, const char *status,
                        const char *reason, const char *message)
{
    const cu_node *c = cond(doc, type);
    assert_string_equal(path_str(c, "status"), status);
    assert_string_equal(path_str(c, "reason"), reason);
    if (message)
        assert_string_equal(path_str(c, "message"), message);
}

static const char *const cond_order_pending[] = {
    "QuotaReserved", "Admitted", "Evicted", "Preempted", "Requeued",
};

/* The victim after the run: pending again, evicted once, with Kueue's
 * conditions; the preemptor admitted. */
static void test_preempted_victim(void **state)
{
    (void)state;
    fixture *f = preempt_fixture(0, 0);
    json_object *root = render_json(f);
    json_object *wls = jget(root, "workloads");
    json_object *high = json_object_array_get_idx(wls, 0);
    json_object *low = json_object_array_get_idx(wls, 1);
    assert_string_equal(jstr(high, "name"), "ns/high");
    assert_true(json_object_get_boolean(jget(high, "admitted")));
    assert_int_equal(jint(high, "evictions"), 0);
    assert_string_equal(jstr(low, "name"), "ns/low");
    assert_false(json_object_get_boolean(jget(low, "admitted")));
    assert_int_equal(jint(low, "evictions"), 1);
    assert_string_equal(jstr(low, "reason"), "preempted by ns/high within ClusterQueue cq");
    json_object_put(root);

    cu_buf_free(&f->out);
    cu_buf_init(&f->out, 0);
    cu_sim_opts o = { 0 };
    o.format = CU_SIM_YAML;
    assert_int_equal(cu_sim_render(f->e, &f->w, &o, &f->out), CU_OK);
    cu_arena a;
    cu_arena_init(&a, 0);
    cu_doc *docs = NULL;
    size_t n = parse_out(f, &a, &docs);
    const cu_node *wl = yaml_doc(docs, n, "Workload", "low");
    assert_null(cu_node_path(wl, "status.admission"));
    const cu_node *cs = cu_node_path(wl, "status.conditions");
    assert_int_equal(cs->n, 5);
    for (size_t i = 0; i < cs->n; i++)
        assert_string_equal(path_str(cs->vals[i], "type"), cond_order_pending[i]);
    /* QuotaReserved=False carries the engine's pending reason */
    assert_string_equal(path_str(cond(wl, "QuotaReserved"), "status"), "False");
    assert_true(strlen(path_str(cond(wl, "QuotaReserved"), "reason")) > 0);
    assert_string_equal(path_str(cond(wl, "QuotaReserved"), "message"),
                        "preempted by ns/high within ClusterQueue cq");
    assert_cond(wl, "Admitted", "False", "NoReservation", "The workload has no reservation");
    assert_cond(wl, "Evicted", "True", "Preempted", PREEMPT_MSG);
    assert_cond(wl, "Preempted", "True", "InClusterQueue", PREEMPT_MSG);
    assert_cond(wl, "Requeued", "True", "Preempted", PREEMPT_MSG);
    const cu_node *hw = yaml_doc(docs, n, "Workload", "high");
    assert_int_equal(cu_node_path(hw, "status.conditions")->n, 2);
    cu_arena_free(&a);

    /* table: the pending line says how often it was evicted */
    cu_buf_free(&f->out);
    cu_buf_init(&f->out, 0);
    o.format = CU_SIM_TABLE;
    assert_int_equal(cu_sim_render(f->e, &f->w, &o, &f->out), CU_OK);
    assert_non_null(strstr(cu_buf_str(&f->out),
                           "  pending:  ns/low   preempted by ns/high within ClusterQueue cq"
                           "  (evicted once)\n"));
    assert_non_null(strstr(cu_buf_str(&f->out), "  admitted: ns/high  main=1 [cpu=f1]\n"));
    void *st = f;
    teardown(&st);
}

/* One Kueue cycle in: the victim still holds its quota (Evicted and
 * Preempted True, no Requeued yet) and the preemptor waits for it. */
static void test_evicting_victim(void **state)
{
    (void)state;
    fixture *f = preempt_fixture(1, 1);
    json_object *root = render_json(f);
    json_object *wls = jget(root, "workloads");
    json_object *high = json_object_array_get_idx(wls, 0);
    json_object *low = json_object_array_get_idx(wls, 1);
    assert_false(json_object_get_boolean(jget(high, "admitted")));
    assert_string_equal(jstr(high, "reason"), "waiting for 1 preempted workload to release quota");
    assert_true(json_object_get_boolean(jget(low, "admitted")));
    assert_null(jget(low, "reason"));
    json_object_put(root);

    cu_buf_free(&f->out);
    cu_buf_init(&f->out, 0);
    cu_sim_opts o = { 0 };
    o.format = CU_SIM_YAML;
    assert_int_equal(cu_sim_render(f->e, &f->w, &o, &f->out), CU_OK);
    cu_arena a;
    cu_arena_init(&a, 0);
    cu_doc *docs = NULL;
    size_t n = parse_out(f, &a, &docs);
    const cu_node *wl = yaml_doc(docs, n, "Workload", "low");
    assert_non_null(cu_node_path(wl, "status.admission"));
    const cu_node *cs = cu_node_path(wl, "status.conditions");
    static const char *const order[] = { "QuotaReserved", "Admitted", "Evicted", "Preempted" };
    assert_int_equal(cs->n, 4);
    for (size_t i = 0; i < cs->n; i++)
        assert_string_equal(path_str(cs->vals[i], "type"), order[i]);
    assert_cond(wl, "QuotaReserved", "True", "QuotaReserved", NULL);
    assert_cond(wl, "Evicted", "True", "Preempted", PREEMPT_MSG);
    assert_cond(wl, "Preempted", "True", "InClusterQueue", PREEMPT_MSG);
    cu_arena_free(&a);

    cu_buf_free(&f->out);
    cu_buf_init(&f->out, 0);
    o.format = CU_SIM_TABLE;
    assert_int_equal(cu_sim_render(f->e, &f->w, &o, &f->out), CU_OK);
    assert_non_null(strstr(cu_buf_str(&f->out),
                           "  admitted: ns/low   main=1 [cpu=f1]  (being evicted: Preempted)\n"));
    void *st = f;
    teardown(&st);
}

/* Once the preemptor finishes, the victim is admitted again: Evicted and
 * Preempted turn False with reason QuotaReserved and "Previously: ...". */
static void test_readmitted_victim(void **state)
{
    (void)state;
    fixture *f = preempt_fixture(0, 0);
    assert_true(cu_engine_wl_admitted(f->e, 1)); /* ns/high, input order */
    assert_int_equal(cu_engine_finish(f->e, 1), CU_OK);
    cu_engine_run(f->e, 1000);
    assert_true(cu_engine_wl_admitted(f->e, 0));
    cu_sim_opts o = { 0 };
    o.format = CU_SIM_YAML;
    assert_int_equal(cu_sim_render(f->e, &f->w, &o, &f->out), CU_OK);
    cu_arena a;
    cu_arena_init(&a, 0);
    cu_doc *docs = NULL;
    size_t n = parse_out(f, &a, &docs);
    const cu_node *wl = yaml_doc(docs, n, "Workload", "low");
    assert_non_null(cu_node_path(wl, "status.admission"));
    assert_cond(wl, "QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue cq");
    assert_cond(wl, "Admitted", "True", "Admitted", NULL);
    assert_cond(wl, "Evicted", "False", "QuotaReserved", "Previously: " PREEMPT_MSG);
    assert_cond(wl, "Preempted", "False", "QuotaReserved", "Previously: " PREEMPT_MSG);
    assert_cond(wl, "Requeued", "True", "Preempted", PREEMPT_MSG);
    cu_arena_free(&a);

    cu_buf_free(&f->out);
    cu_buf_init(&f->out, 0);
    o.format = CU_SIM_TABLE;
    assert_int_equal(cu_sim_render(f->e, &f->w, &o, &f->out), CU_OK);
    assert_non_null(strstr(cu_buf_str(&f->out),
                           "  admitted: ns/low  main=1 [cpu=f1]  (evicted once before)\n"));
    void *st = f;
    teardown(&st);
}

/* ---- table ---- */

static void test_table(void **state)
{
    fixture *f = *state;
    cu_sim_opts o = { 0 };
    assert_int_equal(cu_sim_render(f->e, &f->w, &o, &f->out), CU_OK);
    const char *s = cu_buf_str(&f->out);
    const char *cq1 = strstr(s, "ClusterQueue cq1 (cohort co)");
    const char *cq2 = strstr(s, "ClusterQueue cq2 (cohort co)");
    const char *miss = strstr(s, "LocalQueue or ClusterQueue is missing");
    assert_non_null(cq1);
    assert_non_null(cq2);
    assert_non_null(miss);
    assert_true(cq1 < cq2 && cq2 < miss);
    const char *hdr = strstr(cq1, "FLAVOR");
    assert_non_null(hdr);
    /* columns line up: USED in the header starts where "6" does in the
     * cpu row */
    const char *line = hdr;
    while (line > s && line[-1] != '\n')
        line--;
    const char *row = strchr(hdr, '\n') + 1;
    const char *used = strstr(hdr, "USED");
    assert_true(strncmp(row, "  f1", 4) == 0);
    assert_int_equal(row[used - line], '6');
    assert_int_equal(row[used - line - 1], ' ');
    const char *adm = strstr(cq1, "  admitted: ns/a");
    assert_non_null(adm);
    assert_true(adm < cq2);
    assert_non_null(strstr(adm, "main=3 [cpu=f1, memory=f1]"));
    const char *pend = strstr(cq1, "  pending:  ns/b");
    assert_true(pend && pend < cq2);
    assert_non_null(strstr(miss, "pending:  ns/c"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_json_workloads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_json_cluster_queues, setup, teardown),
        cmocka_unit_test_setup_teardown(test_yaml_stream, setup, teardown),
        cmocka_unit_test_setup_teardown(test_table, setup, teardown),
        cmocka_unit_test_setup_teardown(test_json_fair_sharing, setup_fs, teardown),
        cmocka_unit_test(test_json_zero_weight),
        cmocka_unit_test_setup_teardown(test_yaml_fair_sharing, setup_fs, teardown),
        cmocka_unit_test(test_preempted_victim),
        cmocka_unit_test(test_evicting_victim),
        cmocka_unit_test(test_readmitted_victim),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
