/*
 * test_explain.c - `cueue simulate --explain` through cu_sim_run on files:
 * which object a name resolves to (a Workload, the Workload of a Job, a
 * Workload's own name, namespace "default" when none is given), the three
 * output forms (text, a JSON array, a YAML stream), the table followed by
 * the explanations, and the errors for unknown or malformed names (every
 * one reported, the namespace named, nothing rendered).
 *
 * The world: ClusterQueue cq (BestEffortFIFO, 4 cpu) behind ns/lq. ns/first
 * (3 cpu) is admitted; ns/big (2 cpu) pends, 1 cpu short; Job ns/train
 * (1 cpu) is admitted. ns/dup is both a Workload and a Job; default/solo
 * names a LocalQueue that does not exist; namespace crowd holds 8
 * Workloads (for the truncated list of names in the error).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cu_doc.h"
#include "cu_sim.h"

static const char world_yaml[] =
    "apiVersion: v1\n"
    "kind: Namespace\n"
    "metadata: {name: ns}\n"
    "---\n"
    "apiVersion: kueue.x-k8s.io/v1beta2\n"
    "kind: ResourceFlavor\n"
    "metadata: {name: f}\n"
    "---\n"
    "apiVersion: kueue.x-k8s.io/v1beta2\n"
    "kind: ClusterQueue\n"
    "metadata: {name: cq}\n"
    "spec:\n"
    "  namespaceSelector: {}\n"
    "  resourceGroups:\n"
    "  - coveredResources: [cpu]\n"
    "    flavors: [{name: f, resources: [{name: cpu, nominalQuota: 4}]}]\n"
    "---\n"
    "apiVersion: kueue.x-k8s.io/v1beta2\n"
    "kind: LocalQueue\n"
    "metadata: {name: lq, namespace: ns}\n"
    "spec: {clusterQueue: cq}\n"
    "---\n"
    "apiVersion: kueue.x-k8s.io/v1beta2\n"
    "kind: Workload\n"
    "metadata: {name: first, namespace: ns, creationTimestamp: \"2025-12-31T09:00:00Z\"}\n"
    "spec:\n"
    "  queueName: lq\n"
    "  podSets: [{name: main, count: 1, template: {spec: {containers: [{name: c, image: i,"
    " resources: {requests: {cpu: 3}}}]}}}]\n"
    "---\n"
    "apiVersion: kueue.x-k8s.io/v1beta2\n"
    "kind: Workload\n"
    "metadata: {name: big, namespace: ns, creationTimestamp: \"2025-12-31T10:00:00Z\"}\n"
    "spec:\n"
    "  queueName: lq\n"
    "  podSets: [{name: main, count: 1, template: {spec: {containers: [{name: c, image: i,"
    " resources: {requests: {cpu: 2}}}]}}}]\n"
    "---\n"
    "apiVersion: batch/v1\n"
    "kind: Job\n"
    "metadata:\n"
    "  name: train\n"
    "  namespace: ns\n"
    "  creationTimestamp: \"2025-12-31T11:00:00Z\"\n"
    "  labels: {kueue.x-k8s.io/queue-name: lq}\n"
    "spec:\n"
    "  template: {spec: {containers: [{name: c, image: i, resources: {requests: {cpu: 1}}}]}}\n"
    "---\n"
    "apiVersion: kueue.x-k8s.io/v1beta2\n"
    "kind: Workload\n"
    "metadata: {name: dup, namespace: ns, creationTimestamp: \"2025-12-31T12:00:00Z\"}\n"
    "spec:\n"
    "  queueName: lq\n"
    "  podSets: [{name: main, count: 1, template: {spec: {containers: [{name: c, image: i,"
    " resources: {requests: {cpu: 2}}}]}}}]\n"
    "---\n"
    "apiVersion: batch/v1\n"
    "kind: Job\n"
    "metadata:\n"
    "  name: dup\n"
    "  namespace: ns\n"
    "  creationTimestamp: \"2025-12-31T13:00:00Z\"\n"
    "  labels: {kueue.x-k8s.io/queue-name: lq}\n"
    "spec:\n"
    "  template: {spec: {containers: [{name: c, image: i, resources: {requests: {cpu: 2}}}]}}\n"
    "---\n"
    "apiVersion: kueue.x-k8s.io/v1beta2\n"
    "kind: Workload\n"
    "metadata: {name: solo, creationTimestamp: \"2025-12-31T14:00:00Z\"}\n"
    "spec:\n"
    "  queueName: missing\n"
    "  podSets: [{name: main, count: 1, template: {spec: {containers: [{name: c, image: i,"
    " resources: {requests: {cpu: 1}}}]}}}]\n";

#define NCROWD 8

typedef struct fixture {
    char path[2][64];
    const char *paths[2];
    char train_wl[300]; /* "ns/job-train-xxxxx" */
    cu_buf out;
    cu_diag d;
} fixture;

static void write_file(char *path, const char *text)
{
    snprintf(path, 64, "/tmp/cu_sim_explain_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

static int setup(void **state)
{
    fixture *f = test_calloc(1, sizeof(*f));
    write_file(f->path[0], world_yaml);
    cu_buf crowd;
    cu_buf_init(&crowd, 0);
    for (int i = 0; i < NCROWD; i++)
        cu_buf_printf(&crowd,
                      "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\n"
                      "metadata: {name: w%d, namespace: crowd}\n"
                      "spec:\n  queueName: lq\n  podSets: [{name: main, count: 1, template: "
                      "{spec: {containers: [{name: c, image: i}]}}}]\n",
                      i);
    write_file(f->path[1], cu_buf_str(&crowd));
    cu_buf_free(&crowd);
    f->paths[0] = f->path[0];
    f->paths[1] = f->path[1];
    cu_arena a;
    cu_arena_init(&a, 0);
    snprintf(f->train_wl, sizeof f->train_wl, "ns/%s", cu_job_workload_name(&a, "train", NULL));
    cu_arena_free(&a);
    cu_buf_init(&f->out, 0);
    cu_diag_init(&f->d);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    unlink(f->path[0]);
    unlink(f->path[1]);
    cu_buf_free(&f->out);
    cu_diag_free(&f->d);
    test_free(f);
    return 0;
}

/* Runs the simulation with the names and format; resets out and d first. */
static cu_err sim(fixture *f, cu_sim_format fmt, int after_table, const char *const *names,
                  size_t n)
{
    cu_buf_free(&f->out);
    cu_buf_init(&f->out, 0);
    cu_diag_free(&f->d);
    cu_diag_init(&f->d);
    cu_sim_opts o = { 0 };
    o.format = fmt;
    o.explain = names;
    o.nexplain = n;
    o.explain_after_table = after_table;
    return cu_sim_run(f->paths, 2, &o, &f->out, &f->d);
}

/* The lines of out that start a workload's explanation or a Job note. */
static void heads(const char *text, char *got, size_t cap)
{
    got[0] = '\0';
    for (const char *l = text; l && *l;) {
        const char *nl = strchr(l, '\n');
        size_t len = nl ? (size_t)(nl - l) : strlen(l);
        if (strncmp(l, "Workload ", 9) == 0 || strncmp(l, "(Job ", 5) == 0) {
            size_t u = strlen(got);
            snprintf(got + u, cap - u, "%.*s|", (int)len, l);
        }
        l = nl ? nl + 1 : NULL;
    }
}

/* ---- which object a name stands for (text output) ---- */

static void test_resolution(void **state)
{
    fixture *f = *state;
    char train_head[400], train_note[800];
    snprintf(train_head, sizeof train_head, "Workload %s: admitted|", f->train_wl);
    snprintf(train_note, sizeof train_note, "(Job ns/train: its Workload is %s)|%s", f->train_wl,
             train_head);
    const struct {
        const char *name;
        const char *want; /* the heads() of the output */
    } cases[] = {
        { "ns/big", "Workload ns/big: pending (WaitingForQuota)|" },
        { "ns/first", "Workload ns/first: admitted|" },
        { "ns/train", train_note },  /* a Job: its Workload */
        { f->train_wl, train_head }, /* the Workload's own name: no note */
        { "ns/dup", "Workload ns/dup: pending (WaitingForQuota)|" },  /* the Workload wins */
        { "solo", "Workload default/solo: pending (Inadmissible)|" }, /* default namespace */
        { "default/solo", "Workload default/solo: pending (Inadmissible)|" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *names[] = { cases[i].name };
        assert_int_equal(sim(f, CU_SIM_TABLE, 0, names, 1), CU_OK);
        assert_int_equal(f->d.nerrors, 0);
        char got[1000];
        heads(cu_buf_str(&f->out), got, sizeof got);
        if (strcmp(got, cases[i].want) != 0)
            print_error("--explain %s: got heads '%s'\n", cases[i].name, got);
        assert_string_equal(got, cases[i].want);
        /* the explanation replaces the table */
        assert_null(strstr(cu_buf_str(&f->out), "ClusterQueue cq (no cohort)"));
    }
}

/* The pending ones say why: the quota numbers and the missing queue. */
static void test_text_content(void **state)
{
    fixture *f = *state;
    const char *names[] = { "ns/big", "solo" };
    assert_int_equal(sim(f, CU_SIM_TABLE, 0, names, 2), CU_OK);
    const char *s = cu_buf_str(&f->out);
    const char *big = strstr(s, "Workload ns/big:"), *solo = strstr(s, "Workload default/solo:");
    assert_non_null(big);
    assert_non_null(solo);
    assert_true(big == s && solo > big); /* in the order given */
    assert_non_null(strstr(s, "cpu: requested 2, available 0: 2 more needed"));
    assert_non_null(strstr(solo, "missing"));
    /* one blank line between the two explanations */
    assert_int_equal(solo[-1], '\n');
    assert_int_equal(solo[-2], '\n');
    assert_true(solo[-3] != '\n');
}

/* ---- -o table: the table, a blank line, the explanations ---- */

static void test_after_table(void **state)
{
    fixture *f = *state;
    const char *names[] = { "ns/train", "ns/big" };
    assert_int_equal(sim(f, CU_SIM_TABLE, 0, NULL, 0), CU_OK);
    char *table = strdup(cu_buf_str(&f->out));
    assert_int_equal(sim(f, CU_SIM_TABLE, 0, names, 2), CU_OK);
    char *expl = strdup(cu_buf_str(&f->out));
    assert_int_equal(sim(f, CU_SIM_TABLE, 1, names, 2), CU_OK);
    size_t lt = strlen(table);
    assert_true(lt > 0 && strncmp(table, "ClusterQueue cq", 15) == 0);
    assert_true(f->out.len == lt + 1 + strlen(expl));
    assert_memory_equal(f->out.data, table, lt);
    assert_int_equal(f->out.data[lt], '\n');
    assert_string_equal(cu_buf_str(&f->out) + lt + 1, expl);
    /* after_table means nothing for the document formats */
    assert_int_equal(sim(f, CU_SIM_JSON, 1, names, 2), CU_OK);
    assert_int_equal(f->out.data[0], '[');
    free(table);
    free(expl);
}

/* ---- -o json: an array of documents, "job" after "workload" ---- */

static const char *jstr(json_object *o, const char *key)
{
    json_object *v = NULL;
    if (!json_object_object_get_ex(o, key, &v))
        return NULL;
    return json_object_get_string(v);
}

static void test_json(void **state)
{
    fixture *f = *state;
    const char *names[] = { "ns/big", "ns/train", "ns/big" };
    assert_int_equal(sim(f, CU_SIM_JSON, 0, names, 3), CU_OK);
    assert_int_equal(f->out.data[f->out.len - 1], '\n');
    json_object *root = json_tokener_parse(cu_buf_str(&f->out));
    assert_non_null(root);
    assert_true(json_object_is_type(root, json_type_array));
    assert_int_equal(json_object_array_length(root), 3);
    json_object *big = json_object_array_get_idx(root, 0);
    json_object *train = json_object_array_get_idx(root, 1);
    assert_string_equal(jstr(big, "workload"), "ns/big");
    assert_string_equal(jstr(big, "status"), "pending");
    assert_null(jstr(big, "job"));
    json_object *q = NULL;
    assert_true(json_object_object_get_ex(big, "queue", &q));
    assert_string_equal(jstr(q, "clusterQueue"), "cq");
    assert_string_equal(jstr(train, "workload"), f->train_wl);
    assert_string_equal(jstr(train, "job"), "ns/train");
    assert_string_equal(jstr(train, "status"), "admitted");
    /* "job" is the second key */
    int k = 0;
    json_object_object_foreach (train, key, val) {
        (void)val;
        if (k == 1)
            assert_string_equal(key, "job");
        k++;
    }
    assert_true(k > 2);
    /* the same name twice: the same document twice */
    assert_string_equal(json_object_to_json_string(json_object_array_get_idx(root, 2)),
                        json_object_to_json_string(big));
    json_object_put(root);
}

/* ---- -o yaml: a stream of the same documents ---- */

static void test_yaml(void **state)
{
    fixture *f = *state;
    const char *names[] = { "solo", "ns/train" };
    assert_int_equal(sim(f, CU_SIM_YAML, 0, names, 2), CU_OK);
    cu_arena a;
    cu_arena_init(&a, 0);
    cu_doc *docs = NULL;
    size_t ndocs = 0;
    cu_diag d;
    cu_diag_init(&d);
    assert_int_equal(cu_doc_parse("out.yaml", f->out.data, f->out.len, &a, &docs, &ndocs, &d),
                     CU_OK);
    assert_int_equal(ndocs, 2);
    assert_string_equal(cu_node_scalar(cu_node_get(docs[0].root, "workload")), "default/solo");
    assert_null(cu_node_get(docs[0].root, "job"));
    assert_string_equal(cu_node_scalar(cu_node_get(docs[1].root, "workload")), f->train_wl);
    assert_string_equal(cu_node_scalar(cu_node_get(docs[1].root, "job")), "ns/train");
    cu_diag_free(&d);
    cu_arena_free(&a);
}

/* ---- errors ---- */

/* The diag's messages joined by '|'. */
static void diag_text(const cu_diag *d, char *got, size_t cap)
{
    got[0] = '\0';
    for (size_t i = 0; i < d->n; i++) {
        size_t u = strlen(got);
        snprintf(got + u, cap - u, "%s|", d->msgs[i]);
    }
}

static void test_errors(void **state)
{
    fixture *f = *state;
    const struct {
        const char *names[3];
        size_t n;
        cu_err want;
        const char *msg; /* in the joined errors */
        int nerrors;
    } cases[] = {
        { { "ns/nope" },
          1,
          CU_ENOTFOUND,
          "--explain ns/nope: no Workload or Job nope in namespace ns (namespace ns has "
          "Workload first, Workload big, Job train, Workload dup, Job dup)",
          1 },
        { { "other/big" },
          1,
          CU_ENOTFOUND,
          "--explain other/big: no Workload or Job big in namespace other (the inputs have no "
          "Workload or Job in namespace other)",
          1 },
        { { "big" },
          1,
          CU_ENOTFOUND,
          "no Workload or Job big in namespace default "
          "(namespace default has Workload solo)",
          1 },
        { { "crowd/x" },
          1,
          CU_ENOTFOUND,
          "(namespace crowd has Workload w0, Workload w1, "
          "Workload w2, Workload w3, Workload w4, Workload w5 and 2 more)",
          1 },
        { { "ns/" }, 1, CU_EINVAL, "--explain 'ns/': expected NAMESPACE/NAME", 1 },
        { { "/big" }, 1, CU_EINVAL, "--explain '/big': expected NAMESPACE/NAME", 1 },
        { { "ns/big/x" }, 1, CU_EINVAL, "--explain 'ns/big/x': expected NAMESPACE/NAME", 1 },
        /* every bad name in one run; the first error decides the code */
        { { "ns/nope", "ns/big", "zz/q" }, 3, CU_ENOTFOUND, "in namespace zz", 2 },
        { { "a/", "ns/nope" }, 2, CU_EINVAL, "no Workload or Job nope", 2 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cu_err err = sim(f, CU_SIM_TABLE, 1, cases[i].names, cases[i].n);
        char got[2000];
        diag_text(&f->d, got, sizeof got);
        if (!strstr(got, cases[i].msg) || err != cases[i].want)
            print_error("case %zu: err %d, messages '%s'\n", i, (int)err, got);
        assert_int_equal(err, cases[i].want);
        assert_non_null(strstr(got, cases[i].msg));
        assert_int_equal(f->d.nerrors, cases[i].nerrors);
        assert_int_equal(f->out.len, 0); /* nothing rendered, not even the table */
    }
}

/* Without --explain the output is the plain rendering. */
static void test_no_explain(void **state)
{
    fixture *f = *state;
    assert_int_equal(sim(f, CU_SIM_TABLE, 1, NULL, 0), CU_OK);
    assert_null(strstr(cu_buf_str(&f->out), "\nWorkload "));
    assert_non_null(strstr(cu_buf_str(&f->out), "pending:  ns/big"));
}

/* ---- resources.transformations: what the requests were made from ---- */

/* A Configuration (given with --config, and then among the inputs): cpu
 * Retain -> 1 cpu_credits per CPU; example.com/mig Replace -> 5 units of
 * example.com/mem. ns/w (3 cpu, 1 mig) pends on cpu_credits (quota 2);
 * its explanation names the credits' origin and the replaced mig. */
/* A workload holding quota whose AdmissionChecks are not all Ready:
 * "reserved", the checks and their states (scenario 191's world). */
static void test_admission_checks(void **state)
{
    (void)state;
    const char *paths[] = { "sim/scenarios/191-admission-checks-two-phase.yaml" };
    const char *names[] = { "team/w-waiting", "team/w-done" };
    cu_sim_opts o = { 0 };
    o.format = CU_SIM_TABLE;
    o.explain = names;
    o.nexplain = 2;
    cu_buf out;
    cu_buf_init(&out, 0);
    cu_diag d;
    cu_diag_init(&d);
    assert_int_equal(cu_sim_run(paths, 1, &o, &out, &d), CU_OK);
    const char *s = cu_buf_str(&out);
    assert_non_null(strstr(s, "Workload team/w-waiting: reserved\n"));
    assert_non_null(strstr(s, "not admitted yet: waiting for AdmissionCheck(s) prov (Ready), "
                              "spot-check (Pending)"));
    assert_non_null(strstr(s, "Workload team/w-done: admitted\n"));
    cu_buf_free(&out);
    cu_buf_init(&out, 0);
    o.format = CU_SIM_JSON;
    o.nexplain = 1;
    assert_int_equal(cu_sim_run(paths, 1, &o, &out, &d), CU_OK);
    json_object *j = json_tokener_parse(cu_buf_str(&out));
    json_object *x = json_object_array_get_idx(j, 0);
    assert_string_equal(json_object_get_string(json_object_object_get(x, "status")), "reserved");
    json_object *acs = json_object_object_get(x, "admissionChecks");
    assert_int_equal(json_object_array_length(acs), 2);
    assert_string_equal(
        json_object_get_string(json_object_object_get(json_object_array_get_idx(acs, 1), "state")),
        "Pending");
    json_object_put(j);
    cu_buf_free(&out);
    cu_diag_free(&d);
}

static void test_transformed_requests(void **state)
{
    (void)state;
    static const char config[] =
        "apiVersion: config.kueue.x-k8s.io/v1beta2\n"
        "kind: Configuration\n"
        "resources:\n"
        "  transformations:\n"
        "  - {input: cpu, outputs: {cpu_credits: 1}}\n"
        "  - {input: example.com/mig, strategy: Replace, outputs: {example.com/mem: 5}}\n";
    static const char world[] =
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: ns}\n---\n"
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: f}\n---\n"
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\n"
        "spec:\n  namespaceSelector: {}\n  resourceGroups:\n"
        "  - coveredResources: [cpu, cpu_credits, example.com/mem]\n"
        "    flavors: [{name: f, resources: [{name: cpu, nominalQuota: 8}, {name: cpu_credits,"
        " nominalQuota: 2}, {name: example.com/mem, nominalQuota: 10}]}]\n---\n"
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
        "metadata: {name: lq, namespace: ns}\nspec: {clusterQueue: cq}\n---\n"
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: w, namespace: ns}\n"
        "spec:\n  queueName: lq\n  podSets: [{name: main, count: 2, template: {spec: {containers:"
        " [{name: c, image: i, resources: {requests: {cpu: 1500m, example.com/mig: 1}}}]}}}]\n";
    char cpath[64], wpath[64], both[64];
    write_file(cpath, config);
    write_file(wpath, world);
    cu_buf inl;
    cu_buf_init(&inl, 0);
    cu_buf_printf(&inl, "%s---\n%s", config, world);
    write_file(both, cu_buf_str(&inl));
    cu_buf_free(&inl);
    const char *names[] = { "ns/w" };
    for (int mode = 0; mode < 2; mode++) {
        const char *paths[] = { mode ? both : wpath };
        cu_sim_opts o = { 0 };
        o.format = CU_SIM_TABLE;
        o.explain = names;
        o.nexplain = 1;
        o.config_path = mode ? NULL : cpath;
        cu_buf out;
        cu_diag d;
        cu_buf_init(&out, 0);
        cu_diag_init(&d);
        assert_int_equal(cu_sim_run(paths, 1, &o, &out, &d), CU_OK);
        const char *s = cu_buf_str(&out);
        /* 1500m counts 2 whole CPUs: 2 credits a pod, 4 for the pod set */
        const char *want[] = {
            "pod set main: 2 pods x (cpu 1500m, cpu_credits 2, example.com/mem 5) = cpu 3, "
            "cpu_credits 4, example.com/mem 10\n",
            "    cpu_credits: 2 (from cpu via transformation)\n",
            "    example.com/mem: 5 (from example.com/mig via transformation)\n",
            "    example.com/mig: 1 replaced via transformation (not counted)\n",
            "insufficient quota for cpu_credits in flavor f",
        };
        for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
            if (!strstr(s, want[i]))
                fail_msg("mode %d: missing \"%s\" in:\n%s", mode, want[i], s);
        assert_null(strstr(s, "cpu: 3 (from")); /* the retained input is not "from" */
        /* JSON: transformed and replaced, per pod */
        o.format = CU_SIM_JSON;
        cu_buf_free(&out);
        cu_buf_init(&out, 0);
        assert_int_equal(cu_sim_run(paths, 1, &o, &out, &d), CU_OK);
        json_object *root = json_tokener_parse(cu_buf_str(&out));
        assert_non_null(root);
        json_object *ps = json_object_array_get_idx(
            json_object_object_get(json_object_array_get_idx(root, 0), "podSets"), 0);
        assert_string_equal(json_object_to_json_string(json_object_object_get(ps, "transformed")),
                            "[ { \"resource\": \"cpu_credits\", \"perPod\": \"2\", \"from\": "
                            "\"cpu\" }, { \"resource\": \"example.com\\/mem\", \"perPod\": \"5\", "
                            "\"from\": \"example.com\\/mig\" } ]");
        assert_string_equal(json_object_to_json_string(json_object_object_get(ps, "replaced")),
                            "[ { \"resource\": \"example.com\\/mig\", \"perPod\": \"1\" } ]");
        json_object_put(root);
        cu_buf_free(&out);
        cu_diag_free(&d);
    }
    unlink(cpath);
    unlink(wpath);
    unlink(both);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_resolution, setup, teardown),
        cmocka_unit_test_setup_teardown(test_text_content, setup, teardown),
        cmocka_unit_test_setup_teardown(test_after_table, setup, teardown),
        cmocka_unit_test_setup_teardown(test_json, setup, teardown),
        cmocka_unit_test_setup_teardown(test_yaml, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_explain, setup, teardown),
        cmocka_unit_test(test_transformed_requests),
        cmocka_unit_test(test_admission_checks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
