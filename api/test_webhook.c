/*
 * test_webhook.c - Kueue's admission webhooks (api/cu_webhook.c): the table,
 * and for each hook allowed and denied requests with the exact messages
 * Kueue v0.17.0 gives; the Job suspension matrix; update immutability;
 * the pods' gate/finalizer/label matrix and pod group rules, JobSet
 * suspension, LeaderWorkerSet pod templates and shape immutability.
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
#include "cu_topology.h"
#include "cu_webhook.h"

#define SUBDOMAIN \
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or " \
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used " \
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"

/* ---------------- the cluster the hooks ask ---------------- */

static cu_kv ns_team_kv[] = { { "kubernetes.io/metadata.name", "team-a" } };
static cu_kv ns_sys_kv[] = { { "kubernetes.io/metadata.name", "kube-system" } };
static cu_kv ns_def_kv[] = { { "kubernetes.io/metadata.name", "with-default" } };
static cu_kvs ns_team = { 1, ns_team_kv }, ns_sys = { 1, ns_sys_kv }, ns_def = { 1, ns_def_kv };

static const cu_kvs *ns_labels(void *ud, const char *ns)
{
    (void)ud;
    if (!strcmp(ns, "team-a"))
        return &ns_team;
    if (!strcmp(ns, "kube-system"))
        return &ns_sys;
    if (!strcmp(ns, "with-default"))
        return &ns_def;
    return NULL;
}

/* LocalQueue "default" exists in namespace "with-default" only. */
static int lq_exists(void *ud, const char *ns, const char *name)
{
    (void)ud;
    return !strcmp(ns, "with-default") && !strcmp(name, "default");
}

typedef struct fx {
    cu_arena a;
    cu_config cfg;
    cu_wh_env env;
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof(*f));
    cu_arena_init(&f->a, 0);
    assert_int_equal(cu_config_init_defaults(&f->cfg, &f->a), CU_OK);
    f->env.cfg = &f->cfg;
    f->env.ns_labels = ns_labels;
    f->env.lq_exists = lq_exists;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    cu_arena_free(&f->a);
    free(f);
    return 0;
}

/* ---------------- calling a hook ---------------- */

typedef struct call {
    json_object *obj, *old;
    cu_wh_resp resp;
} call;

static const cu_wh_hook *hook(const char *name)
{
    size_t n;
    const cu_wh_hook *h = cu_wh_hooks(&n);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(h[i].name, name))
            return &h[i];
    fail_msg("no hook %s", name);
    return NULL;
}

/* Runs hook name on object (JSON text) and old (JSON text or NULL). */
static void run(call *c, const fx *f, const char *name, cu_wh_op op, const char *object,
                const char *old)
{
    const cu_wh_hook *h = hook(name);
    memset(c, 0, sizeof(*c));
    c->obj = cu_json_parse_str(object);
    assert_non_null(c->obj);
    c->old = old ? cu_json_parse_str(old) : NULL;
    if (old)
        assert_non_null(c->old);
    cu_wh_req req = { .group = h->group,
                      .version = h->version,
                      .kind = "",
                      .op = op,
                      .ns = cu_jpath_str(c->obj, "metadata.namespace"),
                      .name = cu_jpath_str(c->obj, "metadata.name"),
                      .object = c->obj,
                      .old_object = c->old };
    cu_wh_resp_init(&c->resp);
    h->fn(f ? &f->env : NULL, &req, &c->resp);
}

static void done(call *c)
{
    json_object_put(c->obj);
    json_object_put(c->old);
    cu_wh_resp_free(&c->resp);
}

static void expect_allowed(call *c)
{
    if (!c->resp.allowed)
        fail_msg("denied: %s", cu_buf_str(&c->resp.message));
}

static void expect_denied(call *c, const char *msg)
{
    assert_false(c->resp.allowed);
    assert_int_equal(c->resp.code, 403);
    assert_string_equal(c->resp.reason, "Forbidden");
    assert_string_equal(cu_buf_str(&c->resp.message), msg);
}

/* ---------------- the table ---------------- */

static void test_table(void **state)
{
    (void)state;
    static const struct {
        const char *name, *path, *resource;
        int mutating;
        unsigned ops;
    } want[] = {
        { "mclusterqueue.kb.io", "/mutate-kueue-x-k8s-io-v1beta2-clusterqueue", "clusterqueues", 1,
          1u << CU_WH_CREATE },
        { "mjob.kb.io", "/mutate-batch-v1-job", "jobs", 1, 1u << CU_WH_CREATE },
        { "mjobset.kb.io", "/mutate-jobset-x-k8s-io-v1alpha2-jobset", "jobsets", 1,
          1u << CU_WH_CREATE },
        { "mleaderworkerset.kb.io", "/mutate-leaderworkerset-x-k8s-io-v1-leaderworkerset",
          "leaderworkersets", 1, (1u << CU_WH_CREATE) | (1u << CU_WH_UPDATE) },
        { "mpod.kb.io", "/mutate--v1-pod", "pods", 1, 1u << CU_WH_CREATE },
        { "mresourceflavor.kb.io", "/mutate-kueue-x-k8s-io-v1beta2-resourceflavor",
          "resourceflavors", 1, 1u << CU_WH_CREATE },
        { "mworkload.kb.io", "/mutate-kueue-x-k8s-io-v1beta2-workload", "workloads", 1,
          1u << CU_WH_CREATE },
        { "vclusterqueue.kb.io", "/validate-kueue-x-k8s-io-v1beta2-clusterqueue", "clusterqueues",
          0, (1u << CU_WH_CREATE) | (1u << CU_WH_UPDATE) },
        { "vcohort.kb.io", "/validate-kueue-x-k8s-io-v1beta2-cohort", "cohorts", 0,
          (1u << CU_WH_CREATE) | (1u << CU_WH_UPDATE) },
        { "vjob.kb.io", "/validate-batch-v1-job", "jobs", 0,
          (1u << CU_WH_CREATE) | (1u << CU_WH_UPDATE) },
        { "vjobset.kb.io", "/validate-jobset-x-k8s-io-v1alpha2-jobset", "jobsets", 0,
          (1u << CU_WH_CREATE) | (1u << CU_WH_UPDATE) },
        { "vleaderworkerset.kb.io", "/validate-leaderworkerset-x-k8s-io-v1-leaderworkerset",
          "leaderworkersets", 0, (1u << CU_WH_CREATE) | (1u << CU_WH_UPDATE) },
        { "vpod.kb.io", "/validate--v1-pod", "pods", 0,
          (1u << CU_WH_CREATE) | (1u << CU_WH_UPDATE) },
        { "vresourceflavor.kb.io", "/validate-kueue-x-k8s-io-v1beta2-resourceflavor",
          "resourceflavors", 0, (1u << CU_WH_CREATE) | (1u << CU_WH_UPDATE) },
        { "vtopology.kb.io", "/validate-kueue-x-k8s-io-v1beta2-topology", "topologies", 0,
          (1u << CU_WH_CREATE) | (1u << CU_WH_UPDATE) },
        { "vworkload.kb.io", "/validate-kueue-x-k8s-io-v1beta2-workload", "workloads", 0,
          (1u << CU_WH_CREATE) | (1u << CU_WH_UPDATE) },
    };
    size_t n;
    const cu_wh_hook *h = cu_wh_hooks(&n);
    assert_int_equal(n, sizeof(want) / sizeof(want[0]));
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(h[i].name, want[i].name);
        assert_string_equal(h[i].path, want[i].path);
        assert_string_equal(h[i].resource, want[i].resource);
        assert_int_equal(h[i].mutating, want[i].mutating);
        assert_int_equal(h[i].ops, want[i].ops);
        /* the group and version of the rule, from the path as kubebuilder
         * makes it: /{mutate,validate}-<group with dashes>-<version>-<kind> */
        const char *grp = "kueue.x-k8s.io", *ver = "v1beta2";
        if (strstr(h[i].path, "-batch-v1-"))
            grp = "batch", ver = "v1";
        else if (strstr(h[i].path, "--v1-"))
            grp = "", ver = "v1";
        else if (strstr(h[i].path, "-jobset-x-k8s-io-v1alpha2-"))
            grp = "jobset.x-k8s.io", ver = "v1alpha2";
        else if (strstr(h[i].path, "-leaderworkerset-x-k8s-io-v1-"))
            grp = "leaderworkerset.x-k8s.io", ver = "v1";
        assert_string_equal(h[i].group, grp);
        assert_string_equal(h[i].version, ver);
        assert_ptr_equal(cu_wh_hook_by_path(want[i].path), &h[i]);
        size_t nr;
        const char *const *r = cu_wh_hook_resources(&h[i], &nr);
        assert_string_equal(r[0], want[i].resource);
        if (!strcmp(h[i].name, "vworkload.kb.io")) {
            assert_int_equal(nr, 2);
            assert_string_equal(r[1], "workloads/status");
        } else {
            assert_int_equal(nr, 1);
        }
    }
    assert_null(cu_wh_hook_by_path("/convert"));
    assert_null(cu_wh_hook_by_path(NULL));
}

/* ---------------- ClusterQueue ---------------- */

#define CQ_HEAD "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ClusterQueue\","
#define CQ_GROUPS \
    "\"resourceGroups\":[{\"coveredResources\":[\"cpu\"],\"flavors\":[{\"name\":\"default\"," \
    "\"resources\":[{\"name\":\"cpu\",\"nominalQuota\":\"4\"%s}]}]}]"

static void cq_json(char *buf, size_t n, const char *spec_extra, const char *quota_extra)
{
    char groups[512];
    snprintf(groups, sizeof(groups), CQ_GROUPS, quota_extra);
    snprintf(buf, n, CQ_HEAD "\"metadata\":{\"name\":\"team-a\"},\"spec\":{%s%s}}", spec_extra,
             groups);
}

static void test_cluster_queue(void **state)
{
    fx *f = *state;
    call c;
    char obj[2048];

    cq_json(obj, sizeof(obj), "\"cohortName\":\"all\",", "");
    run(&c, f, "vclusterqueue.kb.io", CU_WH_CREATE, obj, NULL);
    expect_allowed(&c);
    done(&c);

    cq_json(obj, sizeof(obj), "\"cohortName\":\"A\",", "");
    run(&c, f, "vclusterqueue.kb.io", CU_WH_CREATE, obj, NULL);
    expect_denied(&c, "spec.cohortName: Invalid value: \"A\": a lowercase RFC 1123 subdomain "
                      "must consist of lower case alphanumeric characters, '-' or '.', and must "
                      "start and end with an alphanumeric character");
    done(&c);

    /* two problems: Kueue's aggregate "[e1, e2]"; an update is checked too */
    cq_json(obj, sizeof(obj), "\"cohortName\":\"A\",", ",\"borrowingLimit\":\"-1\"");
    run(&c, f, "vclusterqueue.kb.io", CU_WH_UPDATE, obj, obj);
    assert_false(c.resp.allowed);
    const char *m = cu_buf_str(&c.resp.message);
    assert_true(m[0] == '[' && m[strlen(m) - 1] == ']');
    assert_non_null(strstr(m, "spec.cohortName: Invalid value: \"A\": "));
    assert_non_null(strstr(m, ", spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit: "
                              "Invalid value: \"-1\": must be greater than or equal to 0"));
    done(&c);

    /* a borrowingLimit without a cohort */
    cq_json(obj, sizeof(obj), "", ",\"borrowingLimit\":\"1\"");
    run(&c, f, "vclusterqueue.kb.io", CU_WH_CREATE, obj, NULL);
    assert_false(c.resp.allowed);
    assert_non_null(strstr(cu_buf_str(&c.resp.message),
                           "spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit: "
                           "Invalid value: \"1\""));
    done(&c);

    /* DELETE is not Kueue's: allowed */
    run(&c, f, "vclusterqueue.kb.io", CU_WH_DELETE, obj, NULL);
    expect_allowed(&c);
    done(&c);
}

static void test_in_use_finalizer(void **state)
{
    fx *f = *state;
    call c;
    run(&c, f, "mclusterqueue.kb.io", CU_WH_CREATE,
        CQ_HEAD "\"metadata\":{\"name\":\"a\"},\"spec\":{}}", NULL);
    expect_allowed(&c);
    assert_string_equal(json_object_to_json_string_ext(cu_jpath(c.obj, "metadata.finalizers"),
                                                       JSON_C_TO_STRING_PLAIN),
                        "[\"kueue.x-k8s.io\\/resource-in-use\"]");
    done(&c);

    /* already there: kept once; other finalizers kept */
    run(&c, f, "mresourceflavor.kb.io", CU_WH_CREATE,
        "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ResourceFlavor\",\"metadata\":"
        "{\"name\":\"f\",\"finalizers\":[\"x/y\",\"kueue.x-k8s.io/resource-in-use\"]}}",
        NULL);
    expect_allowed(&c);
    assert_int_equal(cu_jarr_len(cu_jpath(c.obj, "metadata.finalizers")), 2);
    done(&c);

    run(&c, f, "mresourceflavor.kb.io", CU_WH_CREATE,
        "{\"metadata\":{\"name\":\"f\",\"finalizers\":[\"x/y\"]}}", NULL);
    json_object *fin = cu_jpath(c.obj, "metadata.finalizers");
    assert_int_equal(cu_jarr_len(fin), 2);
    assert_string_equal(cu_jas_str(json_object_array_get_idx(fin, 1)),
                        "kueue.x-k8s.io/resource-in-use");
    done(&c);
}

/* ---------------- Cohort, ResourceFlavor ---------------- */

static void test_cohort(void **state)
{
    fx *f = *state;
    call c;
    run(&c, f, "vcohort.kb.io", CU_WH_CREATE,
        "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Cohort\",\"metadata\":{\"name\":"
        "\"root\"},\"spec\":{\"parentName\":\"top\"}}",
        NULL);
    expect_allowed(&c);
    done(&c);

    run(&c, f, "vcohort.kb.io", CU_WH_UPDATE,
        "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Cohort\",\"metadata\":{\"name\":"
        "\"root\"},\"spec\":{\"parentName\":\"Top\"}}",
        "{\"metadata\":{\"name\":\"root\"}}");
    expect_denied(&c, "spec.parentName: Invalid value: \"Top\": a lowercase RFC 1123 subdomain "
                      "must consist of lower case alphanumeric characters, '-' or '.', and must "
                      "start and end with an alphanumeric character");
    done(&c);
}

static void test_resource_flavor(void **state)
{
    fx *f = *state;
    call c;
    run(&c, f, "vresourceflavor.kb.io", CU_WH_CREATE,
        "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ResourceFlavor\",\"metadata\":"
        "{\"name\":\"spot\"},\"spec\":{\"nodeLabels\":{\"cloud/spot\":\"true\"},\"nodeTaints\":"
        "[{\"key\":\"spot\",\"value\":\"true\",\"effect\":\"NoSchedule\"}]}}",
        NULL);
    expect_allowed(&c);
    done(&c);

    run(&c, f, "vresourceflavor.kb.io", CU_WH_CREATE,
        "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ResourceFlavor\",\"metadata\":"
        "{\"name\":\"spot\"},\"spec\":{\"nodeTaints\":[{\"key\":\"spot\",\"value\":\"a\","
        "\"effect\":\"NoSchedule\"},{\"key\":\"spot\",\"value\":\"b\",\"effect\":"
        "\"NoSchedule\"}]}}",
        NULL);
    expect_denied(&c, "spec.nodeTaints[1]: Duplicate value: \"spot:NoSchedule\": taints must be "
                      "unique by key and effect pair");
    done(&c);
}

#define RF_TAS(spec) \
    "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ResourceFlavor\",\"metadata\":" \
    "{\"name\":\"tas\"},\"spec\":{" spec "}}"

static void test_resource_flavor_topology(void **state)
{
    fx *f = *state;
    call c;
    /* Kueue's CEL rule: a topologyName needs node labels */
    run(&c, f, "vresourceflavor.kb.io", CU_WH_CREATE, RF_TAS("\"topologyName\":\"default\""), NULL);
    expect_denied(&c, "spec: Invalid value: \"object\": at least one nodeLabel is required when "
                      "topology is set");
    done(&c);
    /* once set, nodeLabels, tolerations and topologyName stay */
    run(&c, f, "vresourceflavor.kb.io", CU_WH_UPDATE,
        RF_TAS("\"nodeLabels\":{\"pool\":\"b\"},\"topologyName\":\"default\""),
        RF_TAS("\"nodeLabels\":{\"pool\":\"a\"},\"topologyName\":\"default\""));
    expect_denied(&c, "spec: Invalid value: \"object\": nodeLabels are immutable when "
                      "topologyName is set");
    done(&c);
    run(&c, f, "vresourceflavor.kb.io", CU_WH_UPDATE, RF_TAS("\"nodeLabels\":{\"pool\":\"a\"}"),
        RF_TAS("\"nodeLabels\":{\"pool\":\"a\"},\"topologyName\":\"default\""));
    expect_denied(&c, "spec: Invalid value: \"object\": topologyName is immutable when "
                      "topologyName is set");
    done(&c);
    /* without a topologyName before, anything may change */
    run(&c, f, "vresourceflavor.kb.io", CU_WH_UPDATE,
        RF_TAS("\"nodeLabels\":{\"pool\":\"b\"},\"topologyName\":\"default\""),
        RF_TAS("\"nodeLabels\":{\"pool\":\"a\"}"));
    expect_allowed(&c);
    done(&c);
}

#define TOPO(levels) \
    "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Topology\",\"metadata\":" \
    "{\"name\":\"default\"},\"spec\":{\"levels\":[" levels "]}}"
#define LVL(l) "{\"nodeLabel\":\"" l "\"}"

static void test_topology(void **state)
{
    fx *f = *state;
    call c;
    run(&c, f, "vtopology.kb.io", CU_WH_CREATE,
        TOPO(LVL("cloud.com/block") "," LVL("cloud.com/rack") "," LVL("kubernetes.io/hostname")),
        NULL);
    expect_allowed(&c);
    done(&c);
    run(&c, f, "vtopology.kb.io", CU_WH_CREATE,
        TOPO(LVL("kubernetes.io/hostname") "," LVL("cloud.com/rack")), NULL);
    expect_denied(&c, "spec.levels: Invalid value: \"array\": the kubernetes.io/hostname label "
                      "can only be used at the lowest level of topology");
    done(&c);
    run(&c, f, "vtopology.kb.io", CU_WH_CREATE, TOPO(LVL("rack") "," LVL("rack")), NULL);
    expect_denied(&c, "spec.levels: Invalid value: \"array\": must be unique");
    done(&c);
    run(&c, f, "vtopology.kb.io", CU_WH_CREATE, TOPO(""), NULL);
    expect_denied(&c, "spec.levels: Required value");
    done(&c);
    run(&c, f, "vtopology.kb.io", CU_WH_CREATE, TOPO(LVL("-bad")), NULL);
    expect_denied(&c,
                  "spec.levels[0].nodeLabel: Invalid value: \"-bad\": "
                  "spec.levels[0].nodeLabel in body should match '" CU_TOPOLOGY_LABEL_PATTERN "'");
    done(&c);
    /* the levels are immutable */
    run(&c, f, "vtopology.kb.io", CU_WH_UPDATE, TOPO(LVL("cloud.com/rack")),
        TOPO(LVL("cloud.com/block") "," LVL("cloud.com/rack")));
    expect_denied(&c, "spec.levels: Invalid value: \"array\": field is immutable");
    done(&c);
    run(&c, f, "vtopology.kb.io", CU_WH_UPDATE, TOPO(LVL("cloud.com/rack")),
        TOPO(LVL("cloud.com/rack")));
    expect_allowed(&c);
    done(&c);
}

/* A Job with pod-template annotations (TAS). */
#define TJOB(ann) \
    "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"j\"," \
    "\"namespace\":\"team-a\",\"labels\":{\"kueue.x-k8s.io/queue-name\":\"lq\"}},\"spec\":{\"parallelism\":4," \
    "\"completions\":4,\"suspend\":true,\"template\":{\"metadata\":{\"annotations\":{" ann \
    "}},\"spec\":{\"containers\":[{\"name\":\"c\"}]}}}}"
#define A_REQ "\"kueue.x-k8s.io/podset-required-topology\":"
#define A_PREF "\"kueue.x-k8s.io/podset-preferred-topology\":"
#define A_UNC "\"kueue.x-k8s.io/podset-unconstrained-topology\":"
#define A_SREQ "\"kueue.x-k8s.io/podset-slice-required-topology\":"
#define A_SSIZE "\"kueue.x-k8s.io/podset-slice-size\":"
#define TPATH "spec.template.metadata.annotations"

static void test_job_topology(void **state)
{
    fx *f = *state;
    call c;
    run(&c, f, "vjob.kb.io", CU_WH_CREATE,
        TJOB(A_REQ "\"cloud.com/rack\"," A_SREQ "\"kubernetes.io/hostname\"," A_SSIZE "\"2\""),
        NULL);
    expect_allowed(&c);
    done(&c);
    run(&c, f, "vjob.kb.io", CU_WH_CREATE, TJOB(A_REQ "\"rack\"," A_PREF "\"rack\""), NULL);
    expect_denied(&c, TPATH ": Invalid value: must not contain more than one topology annotation: "
                            "[\"kueue.x-k8s.io/podset-required-topology\", "
                            "\"kueue.x-k8s.io/podset-preferred-topology\", "
                            "\"kueue.x-k8s.io/podset-unconstrained-topology\"]");
    done(&c);
    run(&c, f, "vjob.kb.io", CU_WH_CREATE, TJOB(A_UNC "\"yes\""), NULL);
    expect_denied(&c, TPATH "[kueue.x-k8s.io/podset-unconstrained-topology]: Invalid value: "
                            "\"yes\": must be a boolean value");
    done(&c);
    run(&c, f, "vjob.kb.io", CU_WH_CREATE, TJOB(A_SREQ "\"rack\""), NULL);
    expect_denied(&c, TPATH "[kueue.x-k8s.io/podset-slice-size]: Required value: must be set when "
                            "'kueue.x-k8s.io/podset-slice-required-topology' is specified");
    done(&c);
    run(&c, f, "vjob.kb.io", CU_WH_CREATE, TJOB(A_SSIZE "\"2\""), NULL);
    expect_denied(&c, TPATH "[kueue.x-k8s.io/podset-slice-size]: Forbidden: may not be set when "
                            "'kueue.x-k8s.io/podset-slice-required-topology' is not specified");
    done(&c);
    run(&c, f, "vjob.kb.io", CU_WH_CREATE, TJOB(A_SREQ "\"rack\"," A_SSIZE "\"0\""), NULL);
    expect_denied(&c, TPATH "[kueue.x-k8s.io/podset-slice-size]: Invalid value: \"0\": must be "
                            "greater than or equal to 1");
    done(&c);
    /* the bound on the pod count, only on otherwise valid annotations */
    run(&c, f, "vjob.kb.io", CU_WH_CREATE, TJOB(A_SREQ "\"rack\"," A_SSIZE "\"5\""), NULL);
    expect_denied(&c, TPATH "[kueue.x-k8s.io/podset-slice-size]: Invalid value: \"5\": must not "
                            "be greater than pod set count 4");
    done(&c);
    run(&c, f, "vjob.kb.io", CU_WH_CREATE, TJOB(A_REQ "\"a/b/c\""), NULL);
    assert_false(c.resp.allowed);
    assert_non_null(strstr(cu_buf_str(&c.resp.message),
                           TPATH "[kueue.x-k8s.io/podset-required-topology]: Invalid value: "
                                 "\"a/b/c\": a qualified name must consist of"));
    done(&c);
    run(&c, f, "vjob.kb.io", CU_WH_CREATE, TJOB("\"kueue.x-k8s.io/podset-group-name\":\"12\""),
        NULL);
    expect_denied(&c, "[" TPATH "[kueue.x-k8s.io/podset-group-name]: Invalid value: \"12\": must "
                      "not be a number, " TPATH "[kueue.x-k8s.io/podset-group-name]: "
                      "Forbidden: may not be set when neither "
                      "'kueue.x-k8s.io/podset-preferred-topology' nor "
                      "'kueue.x-k8s.io/podset-required-topology' is specified]");
    done(&c);
    run(&c, f, "vjob.kb.io", CU_WH_CREATE,
        TJOB("\"kueue.x-k8s.io/podset-slice-required-topology-constraints\":\"[]\""), NULL);
    expect_denied(&c, TPATH "[kueue.x-k8s.io/podset-slice-required-topology-constraints]: "
                            "Forbidden: the TASMultiLayerTopology feature gate must be enabled to "
                            "use this annotation");
    done(&c);
}

/* A JobSet of a leader (1 pod) and workers (replicas 2 x 2 pods), their
 * templates' annotations given. */
#define TJS(lann, wann) \
    "{\"apiVersion\":\"jobset.x-k8s.io/v1alpha2\",\"kind\":\"JobSet\",\"metadata\":{\"name\":" \
    "\"js\",\"namespace\":\"team-a\",\"labels\":{\"kueue.x-k8s.io/queue-name\":\"lq\"}}," \
    "\"spec\":{\"suspend\":true,\"replicatedJobs\":[{\"name\":\"leader\",\"template\":{" \
    "\"spec\":{\"template\":{\"metadata\":{\"annotations\":{" lann "}},\"spec\":{" \
    "\"containers\":[{\"name\":\"c\"}]}}}}},{\"name\":\"workers\",\"replicas\":2," \
    "\"template\":{\"spec\":{\"parallelism\":2,\"template\":{\"metadata\":{\"annotations\":{" wann \
    "}},\"spec\":{\"containers\":[{\"name\":\"c\"}]}}}}}]}}"
#define A_GRP "\"kueue.x-k8s.io/podset-group-name\":\"g\""
static void enable_all(fx *f);
#define RJ(i) "spec.replicatedJobs[" #i "].template.spec.template.metadata.annotations"

static void test_jobset_topology_groups(void **state)
{
    fx *f = *state;
    enable_all(f);
    call c;
    run(&c, f, "vjobset.kb.io", CU_WH_CREATE, TJS(A_REQ "\"rack\"," A_GRP, A_REQ "\"rack\"," A_GRP),
        NULL);
    expect_allowed(&c);
    done(&c);
    /* a group of one */
    run(&c, f, "vjobset.kb.io", CU_WH_CREATE, TJS(A_REQ "\"rack\"," A_GRP, A_REQ "\"rack\""), NULL);
    expect_denied(&c, RJ(0) "[kueue.x-k8s.io/podset-group-name]: Invalid value: \"g\": can only "
                            "define groups of exactly 2 pod sets, got: 1 pod set(s)");
    done(&c);
    /* two levels that differ */
    run(&c, f, "vjobset.kb.io", CU_WH_CREATE,
        TJS(A_REQ "\"rack\"," A_GRP, A_PREF "\"rack\"," A_GRP), NULL);
    expect_denied(
        &c,
        "[" RJ(
            0) ": Invalid value: must specify "
               "'kueue.x-k8s.io/podset-required-topology' or "
               "'kueue.x-k8s.io/podset-preferred-topology' topology consistent with '" RJ(
                   1) "' in group 'g', " RJ(1) ": Invalid value: must specify "
                                               "'kueue.x-k8s.io/podset-required-topology' or "
                                               "'kueue.x-k8s.io/podset-preferred-topology' topology consistent "
                                               "with '" RJ(0) "' in group 'g']");
    done(&c);
    /* and the annotation rules on each replicated Job's template */
    run(&c, f, "vjobset.kb.io", CU_WH_CREATE, TJS("", A_SREQ "\"rack\"," A_SSIZE "\"5\""), NULL);
    expect_denied(&c, "spec.replicatedJobs[1].template.spec.template.metadata.annotations"
                      "[kueue.x-k8s.io/podset-slice-size]: Invalid value: \"5\": must not be "
                      "greater than pod set count 4");
    done(&c);
}

/* ---------------- Workload ---------------- */

#define WL_PS(count, cpu) \
    "{\"name\":\"main\",\"count\":" #count ",\"template\":{\"spec\":{\"containers\":[{" \
    "\"name\":\"c\",\"resources\":{\"requests\":{" cpu "}}}]}}}"
#define WL(podsets, status) \
    "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Workload\",\"metadata\":{\"name\":" \
    "\"wl\",\"namespace\":\"team-a\"},\"spec\":{\"queueName\":\"lq\",\"podSets\":[" podsets \
    "]}" status "}"
#define RESERVED \
    ",\"status\":{\"conditions\":[{\"type\":\"QuotaReserved\",\"status\":\"True\",\"reason\":" \
    "\"QuotaReserved\",\"message\":\"\",\"lastTransitionTime\":\"2025-01-01T00:00:00Z\"}]," \
    "\"admission\":{\"clusterQueue\":\"cq\",\"podSetAssignments\":[{\"name\":\"main\"," \
    "\"count\":2,\"flavors\":{\"cpu\":\"default\"},\"resourceUsage\":{\"cpu\":\"2\"}}]}}"
#define RESERVED3 \
    ",\"status\":{\"conditions\":[{\"type\":\"QuotaReserved\",\"status\":\"True\",\"reason\":" \
    "\"QuotaReserved\",\"message\":\"\",\"lastTransitionTime\":\"2025-01-01T00:00:00Z\"}]," \
    "\"admission\":{\"clusterQueue\":\"cq2\",\"podSetAssignments\":[{\"name\":\"main\"," \
    "\"count\":2,\"flavors\":{\"cpu\":\"default\"},\"resourceUsage\":{\"cpu\":\"2\"}}]}}"

static void test_workload_create(void **state)
{
    fx *f = *state;
    call c;
    run(&c, f, "vworkload.kb.io", CU_WH_CREATE, WL(WL_PS(2, "\"cpu\":\"1\""), ""), NULL);
    expect_allowed(&c);
    done(&c);

    run(&c, f, "vworkload.kb.io", CU_WH_CREATE, WL(WL_PS(2, "\"cpu\":\"1\",\"pods\":\"1\""), ""),
        NULL);
    expect_denied(&c, "spec.podSets[0].template.spec.containers[0].resources.requests[pods]: "
                      "Invalid value: \"pods\": the key is reserved for internal kueue use");
    done(&c);

    run(&c, f, "vworkload.kb.io", CU_WH_CREATE,
        WL(WL_PS(2, "\"cpu\":\"1\""), ",\"status\":{\"reclaimablePods\":[{\"name\":\"main\","
                                      "\"count\":3},{\"name\":\"other\",\"count\":1}]}"),
        NULL);
    expect_denied(&c, "[status.reclaimablePods[main].count: Invalid value: 3: should be less or "
                      "equal to 2, status.reclaimablePods[other].name: Unsupported value: "
                      "\"other\": supported values: \"main\"]");
    done(&c);

    /* the Workload defaulter keeps minCount (PartialAdmission is on) */
    run(&c, f, "mworkload.kb.io", CU_WH_CREATE, WL(WL_PS(2, "\"cpu\":\"1\""), ""), NULL);
    expect_allowed(&c);
    done(&c);
}

static void test_workload_update(void **state)
{
    fx *f = *state;
    call c;
    /* pod sets may change before quota is reserved */
    run(&c, f, "vworkload.kb.io", CU_WH_UPDATE, WL(WL_PS(3, "\"cpu\":\"1\""), ""),
        WL(WL_PS(2, "\"cpu\":\"1\""), ""));
    expect_allowed(&c);
    done(&c);

    /* a status write that keeps the spec: allowed */
    run(&c, f, "vworkload.kb.io", CU_WH_UPDATE, WL(WL_PS(2, "\"cpu\":\"1\""), RESERVED),
        WL(WL_PS(2, "\"cpu\":\"1\""), ""));
    expect_allowed(&c);
    done(&c);

    /* not while it holds quota */
    run(&c, f, "vworkload.kb.io", CU_WH_UPDATE, WL(WL_PS(3, "\"cpu\":\"1\""), RESERVED),
        WL(WL_PS(2, "\"cpu\":\"1\""), RESERVED));
    expect_denied(&c, "spec.podSets.0: Invalid value: {\"name\":\"main\",\"count\":3,\"template\":"
                      "{\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{"
                      "\"cpu\":\"1\"}}}]}}}: field is immutable");
    done(&c);

    run(&c, f, "vworkload.kb.io", CU_WH_UPDATE,
        WL(WL_PS(2, "\"cpu\":\"1\"") "," WL_PS(2, "\"cpu\":\"1\""), RESERVED),
        WL(WL_PS(2, "\"cpu\":\"1\""), RESERVED));
    assert_false(c.resp.allowed);
    assert_non_null(strstr(cu_buf_str(&c.resp.message), "spec.podSets: Invalid value: [{"));
    done(&c);

    /* the admission is frozen once set */
    run(&c, f, "vworkload.kb.io", CU_WH_UPDATE, WL(WL_PS(2, "\"cpu\":\"1\""), RESERVED3),
        WL(WL_PS(2, "\"cpu\":\"1\""), RESERVED));
    expect_denied(&c, "status.admission: Invalid value: {\"clusterQueue\":\"cq2\","
                      "\"podSetAssignments\":[{\"name\":\"main\",\"count\":2,\"flavors\":{"
                      "\"cpu\":\"default\"},\"resourceUsage\":{\"cpu\":\"2\"}}]}: field is "
                      "immutable");
    done(&c);

    /* clusterName must be one of the nominated clusters */
    run(&c, f, "vworkload.kb.io", CU_WH_UPDATE,
        WL(WL_PS(2, "\"cpu\":\"1\""), ",\"status\":{\"clusterName\":\"w2\"}"),
        WL(WL_PS(2, "\"cpu\":\"1\""), ",\"status\":{\"nominatedClusterNames\":[\"w1\"]}"));
    expect_denied(&c, "status.clusterName: Invalid value: \"w2\": when setting clusterName it "
                      "must be one of the nominatedClusterNames");
    done(&c);
}

/* ---------------- Job: defaulting ---------------- */

#define JOB(ns, labels, extra_meta, spec) \
    "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"j\",\"namespace\":\"" ns \
    "\",\"labels\":{" labels "}" extra_meta "},\"spec\":{\"parallelism\":2" spec "," \
    "\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\"}]}}}}"
#define QLABEL "\"kueue.x-k8s.io/queue-name\":\"lq\""
#define OWNER(kind, av) \
    ",\"ownerReferences\":[{\"apiVersion\":\"" av "\",\"kind\":\"" kind "\",\"name\":\"p\"," \
    "\"uid\":\"u\",\"controller\":true}]"

/* 1 when hook (mjob.kb.io, mjobset.kb.io) leaves obj suspended. */
static int suspends(fx *f, const char *hook_name, const char *obj)
{
    call c;
    run(&c, f, hook_name, CU_WH_CREATE, obj, NULL);
    expect_allowed(&c);
    int s = cu_jas_true(cu_jpath(c.obj, "spec.suspend"));
    done(&c);
    return s;
}

#define mjob_suspends(f, job) suspends(f, "mjob.kb.io", job)

static void test_job_suspend_matrix(void **state)
{
    fx *f = *state;
    /* the queue-name label */
    assert_true(mjob_suspends(f, JOB("team-a", QLABEL, "", "")));
    assert_false(mjob_suspends(f, JOB("team-a", "", "", "")));
    /* already suspended: stays */
    assert_true(mjob_suspends(f, JOB("team-a", QLABEL, "", ",\"suspend\":true")));
    /* a parent Kueue manages: never */
    assert_false(mjob_suspends(f, JOB("team-a", QLABEL, OWNER("Job", "batch/v1"), "")));
    /* an owner that is no integration does not count */
    assert_true(mjob_suspends(f, JOB("team-a", QLABEL, OWNER("CronJob", "batch/v1"), "")));
    /* ... nor one of an integration not enabled (JobSet) */
    assert_true(
        mjob_suspends(f, JOB("team-a", QLABEL, OWNER("JobSet", "jobset.x-k8s.io/v1alpha2"), "")));

    /* manageJobsWithoutQueueName, with the default namespace selector */
    f->cfg.manage_jobs_without_queue_name = 1;
    assert_true(mjob_suspends(f, JOB("team-a", "", "", "")));
    assert_false(mjob_suspends(f, JOB("kube-system", "", "", "")));
    assert_false(mjob_suspends(f, JOB("team-a", "", OWNER("Job", "batch/v1"), "")));
    /* a namespace Kueue cannot read: its error */
    call c;
    run(&c, f, "mjob.kb.io", CU_WH_CREATE, JOB("ghost", "", "", ""), NULL);
    expect_denied(&c, "failed to get namespace: namespaces \"ghost\" not found");
    done(&c);
    f->cfg.manage_jobs_without_queue_name = 0;

    /* the default LocalQueue (labelled: test_job_default_lq) */
    assert_true(mjob_suspends(f, JOB("with-default", "", "", "")));
}

static void test_job_default_lq(void **state)
{
    fx *f = *state;
    call c;
    run(&c, f, "mjob.kb.io", CU_WH_CREATE, JOB("with-default", "", "", ""), NULL);
    expect_allowed(&c);
    assert_string_equal(cu_jstr(cu_jpath(c.obj, "metadata.labels"), "kueue.x-k8s.io/queue-name"),
                        "default");
    assert_true(cu_jas_true(cu_jpath(c.obj, "spec.suspend")));
    done(&c);

    /* a label already set wins */
    run(&c, f, "mjob.kb.io", CU_WH_CREATE, JOB("with-default", QLABEL, "", ""), NULL);
    assert_string_equal(cu_jstr(cu_jpath(c.obj, "metadata.labels"), "kueue.x-k8s.io/queue-name"),
                        "lq");
    done(&c);

    /* not under a managed parent */
    run(&c, f, "mjob.kb.io", CU_WH_CREATE, JOB("with-default", "", OWNER("Job", "batch/v1"), ""),
        NULL);
    assert_null(cu_jstr(cu_jpath(c.obj, "metadata.labels"), "kueue.x-k8s.io/queue-name"));
    assert_false(cu_jas_true(cu_jpath(c.obj, "spec.suspend")));
    done(&c);

    /* no LocalQueue "default" there */
    run(&c, f, "mjob.kb.io", CU_WH_CREATE, JOB("team-a", "", "", ""), NULL);
    assert_null(cu_jstr(cu_jpath(c.obj, "metadata.labels"), "kueue.x-k8s.io/queue-name"));
    done(&c);

    /* batch/job not among the integrations: Kueue's no-op webhook */
    static const char *fw[] = { "jobset.x-k8s.io/jobset" };
    cu_strs saved = f->cfg.frameworks;
    f->cfg.frameworks.n = 1;
    f->cfg.frameworks.items = fw;
    assert_false(mjob_suspends(f, JOB("team-a", QLABEL, "", "")));
    run(&c, f, "vjob.kb.io", CU_WH_CREATE,
        JOB("team-a", "\"kueue.x-k8s.io/queue-name\":\"A\"", "", ""), NULL);
    expect_allowed(&c);
    done(&c);
    f->cfg.frameworks = saved;

    /* no env at all: Kueue's defaults */
    assert_true(mjob_suspends(NULL, JOB("team-a", QLABEL, "", "")));
}

/* ---------------- Job: validation ---------------- */

static void test_job_validate_create(void **state)
{
    fx *f = *state;
    call c;
    run(&c, f, "vjob.kb.io", CU_WH_CREATE, JOB("team-a", QLABEL, "", ""), NULL);
    expect_allowed(&c);
    done(&c);

    run(&c, f, "vjob.kb.io", CU_WH_CREATE,
        JOB("team-a", "\"kueue.x-k8s.io/queue-name\":\"Team_A\"", "", ""), NULL);
    expect_denied(
        &c, "metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: \"Team_A\": " SUBDOMAIN);
    done(&c);

    run(&c, f, "vjob.kb.io", CU_WH_CREATE,
        JOB("team-a", QLABEL ",\"kueue.x-k8s.io/max-exec-time-seconds\":\"0\"", "", ""), NULL);
    expect_denied(&c, "metadata.labels[kueue.x-k8s.io/max-exec-time-seconds]: Invalid value: 0: "
                      "should be greater than 0");
    done(&c);

    run(&c, f, "vjob.kb.io", CU_WH_CREATE,
        JOB("team-a", QLABEL ",\"kueue.x-k8s.io/max-exec-time-seconds\":\"ten\"", "", ""), NULL);
    expect_denied(&c, "metadata.labels[kueue.x-k8s.io/max-exec-time-seconds]: Invalid value: "
                      "\"ten\": strconv.Atoi: parsing \"ten\": invalid syntax");
    done(&c);

    /* partial admission: 1 .. pods-1 */
    run(&c, f, "vjob.kb.io", CU_WH_CREATE,
        JOB("team-a", QLABEL, ",\"annotations\":{\"kueue.x-k8s.io/job-min-parallelism\":\"1\"}",
            ""),
        NULL);
    expect_allowed(&c);
    done(&c);
    run(&c, f, "vjob.kb.io", CU_WH_CREATE,
        JOB("team-a", QLABEL, ",\"annotations\":{\"kueue.x-k8s.io/job-min-parallelism\":\"2\"}",
            ""),
        NULL);
    expect_denied(&c, "metadata.annotations[kueue.x-k8s.io/job-min-parallelism]: Invalid value: "
                      "2: should be between 0 and 1");
    done(&c);

    /* several problems, Kueue's order */
    run(&c, f, "vjob.kb.io", CU_WH_CREATE,
        JOB("team-a",
            "\"kueue.x-k8s.io/queue-name\":\"A\",\"kueue.x-k8s.io/prebuilt-workload-name\":\"B\"",
            ",\"annotations\":{\"kueue.x-k8s.io/job-completions-equal-parallelism\":\"yes\"}", ""),
        NULL);
    expect_denied(
        &c,
        "[metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: \"A\": " SUBDOMAIN
        ", metadata.labels[kueue.x-k8s.io/prebuilt-workload-name]: Invalid value: \"B\": " SUBDOMAIN
        ", metadata.annotations[kueue.x-k8s.io/job-completions-equal-parallelism]: Invalid "
        "value: \"yes\": strconv.ParseBool: parsing \"yes\": invalid syntax]");
    done(&c);

    run(&c, f, "vjob.kb.io", CU_WH_CREATE,
        JOB("team-a", QLABEL,
            ",\"annotations\":{\"kueue.x-k8s.io/job-completions-equal-parallelism\":\"true\"}",
            ",\"completions\":4"),
        NULL);
    expect_denied(&c, "[metadata.annotations[kueue.x-k8s.io/job-completions-equal-parallelism]: "
                      "Invalid value: \"true\": should not be enabled for NonIndexed jobs, "
                      "spec.completions: Invalid value: 4: should be equal to parallelism when "
                      "kueue.x-k8s.io/job-completions-equal-parallelism is annotation is true]");
    done(&c);
}

static void test_job_validate_update(void **state)
{
    fx *f = *state;
    call c;
    /* the queue name of a running Job is frozen */
    run(&c, f, "vjob.kb.io", CU_WH_UPDATE,
        JOB("team-a", "\"kueue.x-k8s.io/queue-name\":\"other\"", "", ",\"suspend\":false"),
        JOB("team-a", QLABEL, "", ",\"suspend\":false"));
    expect_denied(&c, "metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: \"other\": "
                      "field is immutable");
    done(&c);

    /* ... not while it is suspended */
    run(&c, f, "vjob.kb.io", CU_WH_UPDATE,
        JOB("team-a", "\"kueue.x-k8s.io/queue-name\":\"other\"", "", ",\"suspend\":true"),
        JOB("team-a", QLABEL, "", ",\"suspend\":true"));
    expect_allowed(&c);
    done(&c);

    /* removing it where a default LocalQueue exists */
    run(&c, f, "vjob.kb.io", CU_WH_UPDATE, JOB("with-default", "", "", ",\"suspend\":true"),
        JOB("with-default", QLABEL, "", ",\"suspend\":true"));
    expect_denied(&c, "metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: \"\": "
                      "queue-name must not be empty in namespace with default queue");
    done(&c);

    /* WorkloadPriorityClass: not added to a running Job, never removed */
    run(&c, f, "vjob.kb.io", CU_WH_UPDATE,
        JOB("team-a", QLABEL ",\"kueue.x-k8s.io/priority-class\":\"high\"", "", ""),
        JOB("team-a", QLABEL, "", ""));
    expect_denied(&c, "metadata.labels[kueue.x-k8s.io/priority-class]: Invalid value: \"high\": "
                      "WorkloadPriorityClass cannot be added to a non-suspended workload");
    done(&c);
    run(&c, f, "vjob.kb.io", CU_WH_UPDATE,
        JOB("team-a", QLABEL ",\"kueue.x-k8s.io/priority-class\":\"high\"", "",
            ",\"suspend\":true"),
        JOB("team-a", QLABEL, "", ",\"suspend\":true"));
    expect_allowed(&c);
    done(&c);
    run(&c, f, "vjob.kb.io", CU_WH_UPDATE, JOB("team-a", QLABEL, "", ",\"suspend\":true"),
        JOB("team-a", QLABEL ",\"kueue.x-k8s.io/priority-class\":\"high\"", "",
            ",\"suspend\":true"));
    expect_denied(&c, "metadata.labels[kueue.x-k8s.io/priority-class]: Invalid value: \"\": "
                      "WorkloadPriorityClass cannot be removed from a workload");
    done(&c);

    /* partial admission: parallelism of a running Job */
    run(&c, f, "vjob.kb.io", CU_WH_UPDATE,
        "{\"metadata\":{\"name\":\"j\",\"namespace\":\"team-a\",\"annotations\":{"
        "\"kueue.x-k8s.io/job-min-parallelism\":\"1\"}},\"spec\":{\"parallelism\":3}}",
        "{\"metadata\":{\"name\":\"j\",\"namespace\":\"team-a\",\"annotations\":{"
        "\"kueue.x-k8s.io/job-min-parallelism\":\"1\"}},\"spec\":{\"parallelism\":2}}");
    expect_denied(&c, "spec.parallelism: Forbidden: cannot change when partial admission is "
                      "enabled and the job is not suspended");
    done(&c);

    /* max-exec-time of a running Job */
    run(&c, f, "vjob.kb.io", CU_WH_UPDATE,
        JOB("team-a", QLABEL ",\"kueue.x-k8s.io/max-exec-time-seconds\":\"20\"", "", ""),
        JOB("team-a", QLABEL ",\"kueue.x-k8s.io/max-exec-time-seconds\":\"10\"", "", ""));
    expect_denied(&c, "metadata.labels[kueue.x-k8s.io/max-exec-time-seconds]: Invalid value: "
                      "\"20\": field is immutable");
    done(&c);
}

/* ---------------- the integrations of issue 17 ---------------- */

static const char *all_fw[] = { "batch/job", "pod", "jobset.x-k8s.io/jobset",
                                "leaderworkerset.x-k8s.io/leaderworkerset" };

static void enable_all(fx *f)
{
    f->cfg.frameworks.n = 4;
    f->cfg.frameworks.items = all_fw;
}

/* Leaves only the first n frameworks of all_fw on. */
static void enable_first(fx *f, size_t n)
{
    f->cfg.frameworks.n = n;
    f->cfg.frameworks.items = all_fw;
}

#define POD(ns, labels, annotations, extra_meta, spec) \
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"" ns \
    "\",\"labels\":{" labels "},\"annotations\":{" annotations "}" extra_meta "},\"spec\":{" \
    "\"containers\":[{\"name\":\"c\",\"image\":\"busybox\"}]" spec "}}"
#define PARENT \
    "\"kueue.x-k8s.io/pod-suspending-parent\":\"leaderworkerset.x-k8s.io/leaderworkerset\""

/* What mpod.kb.io did: bits 1 managed label, 2 gate, 4 finalizer, 16 the
 * role-hash annotation added (8 hex digits), 32 the topology gate (TAS);
 * 8 anything else changed; -1 denied. */
static int mpod(fx *f, const char *pod)
{
    call c;
    json_object *before = cu_json_parse_str(pod);
    run(&c, f, "mpod.kb.io", CU_WH_CREATE, pod, NULL);
    if (!c.resp.allowed) {
        done(&c);
        json_object_put(before);
        return -1;
    }
    int r = 0;
    const char *m = cu_jstr(cu_jpath(c.obj, "metadata.labels"), "kueue.x-k8s.io/managed");
    if (m) {
        assert_string_equal(m, "true");
        r |= 1;
        json_object_object_del(cu_jpath(c.obj, "metadata.labels"), "kueue.x-k8s.io/managed");
    }
    json_object *gates = cu_jpath(c.obj, "spec.schedulingGates");
    /* the topology gate (TAS), added last, once */
    size_t nt = 0;
    for (size_t i = 0; i < cu_jarr_len(gates); i++)
        nt += !strcmp(cu_jstr(json_object_array_get_idx(gates, i), "name"),
                      "kueue.x-k8s.io/topology");
    assert_true(nt <= 1);
    if (nt && !strstr(pod, "kueue.x-k8s.io/topology")) {
        size_t last = cu_jarr_len(gates) - 1;
        assert_string_equal(cu_jstr(json_object_array_get_idx(gates, last), "name"),
                            "kueue.x-k8s.io/topology");
        r |= 32;
        json_object_array_del_idx(gates, last, 1);
        if (!cu_jarr_len(gates) && !cu_jpath(before, "spec.schedulingGates"))
            json_object_object_del(cu_jpath(c.obj, "spec"), "schedulingGates");
        gates = cu_jpath(c.obj, "spec.schedulingGates");
    }
    size_t ng = 0;
    for (size_t i = 0; i < cu_jarr_len(gates); i++)
        ng += !strcmp(cu_jstr(json_object_array_get_idx(gates, i), "name"),
                      "kueue.x-k8s.io/admission");
    assert_true(ng <= 1);
    json_object *fins = cu_jpath(c.obj, "metadata.finalizers");
    size_t nf = 0;
    for (size_t i = 0; i < cu_jarr_len(fins); i++)
        nf += !strcmp(cu_jas_str(json_object_array_get_idx(fins, i)), "kueue.x-k8s.io/managed");
    assert_true(nf <= 1);
    int had_gate = strstr(pod, "kueue.x-k8s.io/admission") != NULL;
    if (ng && !had_gate) {
        r |= 2;
        json_object_array_del_idx(gates, cu_jarr_len(gates) - 1, 1);
        if (!cu_jarr_len(gates) && !cu_jpath(before, "spec.schedulingGates"))
            json_object_object_del(cu_jpath(c.obj, "spec"), "schedulingGates");
    }
    if (nf) {
        r |= 4;
        json_object_array_del_idx(fins, cu_jarr_len(fins) - 1, 1);
        if (!cu_jarr_len(fins) && !cu_jpath(before, "metadata.finalizers"))
            json_object_object_del(cu_jpath(c.obj, "metadata"), "finalizers");
    }
    json_object *anns = cu_jpath(c.obj, "metadata.annotations");
    const char *role = cu_jstr(anns, "kueue.x-k8s.io/role-hash");
    if (role && !cu_jstr(cu_jpath(before, "metadata.annotations"), "kueue.x-k8s.io/role-hash")) {
        assert_int_equal(strlen(role), 8);
        assert_int_equal(strspn(role, "0123456789abcdef"), 8);
        r |= 16;
        json_object_object_del(anns, "kueue.x-k8s.io/role-hash");
    }
    /* the default LocalQueue is the one other change allowed */
    const char *qn = cu_jstr(cu_jpath(c.obj, "metadata.labels"), "kueue.x-k8s.io/queue-name");
    if (qn && !strcmp(qn, "default") &&
        !cu_jstr(cu_jpath(before, "metadata.labels"), "kueue.x-k8s.io/queue-name"))
        json_object_object_del(cu_jpath(c.obj, "metadata.labels"), "kueue.x-k8s.io/queue-name");
    if (!cu_json_equal(before, c.obj))
        r |= 8;
    json_object_put(before);
    done(&c);
    return r;
}

#define MANAGED (1 | 2 | 4 | 16 | 32) /* label, gate, finalizer, role, topology gate */
#define GATED (2 | 16 | 32)

static void test_pod_gate_matrix(void **state)
{
    fx *f = *state;
    enable_all(f);
    /* the queue-name label */
    assert_int_equal(mpod(f, POD("team-a", QLABEL, "", "", "")), MANAGED);
    assert_int_equal(mpod(f, POD("team-a", "", "", "", "")), 0);
    /* kube-system is never managed, even labelled (managedJobsNamespaceSelector) */
    assert_int_equal(mpod(f, POD("kube-system", QLABEL, "", "", "")), 0);
    /* the default LocalQueue */
    assert_int_equal(mpod(f, POD("with-default", "", "", "", "")), MANAGED);
    /* owned by an object of an enabled integration: left alone */
    assert_int_equal(mpod(f, POD("team-a", QLABEL, "", OWNER("Job", "batch/v1"), "")), 0);
    assert_int_equal(mpod(f, POD("with-default", "", "", OWNER("Job", "batch/v1"), "")), 0);
    /* ... by anything else: a pod like any other */
    assert_int_equal(mpod(f, POD("team-a", QLABEL, "", OWNER("ReplicaSet", "apps/v1"), "")),
                     MANAGED);
    /* a gate or finalizer already there is not doubled; others are kept */
    assert_int_equal(mpod(f, POD("team-a", QLABEL, "", ",\"finalizers\":[\"x/y\"]",
                                 ",\"schedulingGates\":[{\"name\":\"other\"},"
                                 "{\"name\":\"kueue.x-k8s.io/admission\"}]")),
                     1 | 4 | 16 | 32);
    /* a role-hash annotation already there is kept */
    assert_int_equal(
        mpod(f, POD("team-a", QLABEL, "\"kueue.x-k8s.io/role-hash\":\"leader\"", "", "")),
        1 | 2 | 4 | 32);
    /* TAS: the pod group's index label copied from the label the annotation names */
    {
        call c;
        run(&c, f, "mpod.kb.io", CU_WH_CREATE,
            POD("team-a", QLABEL ",\"idx\":\"3\"",
                "\"kueue.x-k8s.io/pod-group-pod-index-label\":\"idx\"", "", ""),
            NULL);
        assert_string_equal(
            cu_jstr(cu_jpath(c.obj, "metadata.labels"), "kueue.x-k8s.io/pod-group-pod-index"), "3");
        done(&c);
    }
    /* suspended by its parent: the gate only, wherever it is, whoever owns it */
    assert_int_equal(mpod(f, POD("team-a", "", PARENT, OWNER("StatefulSet", "apps/v1"), "")),
                     GATED);
    assert_int_equal(mpod(f, POD("kube-system", "", PARENT, "", "")), GATED);
    assert_int_equal(mpod(f, POD("ghost", "", PARENT, OWNER("Job", "batch/v1"), "")), GATED);

    /* manageJobsWithoutQueueName */
    f->cfg.manage_jobs_without_queue_name = 1;
    assert_int_equal(mpod(f, POD("team-a", "", "", "", "")), MANAGED);
    assert_int_equal(mpod(f, POD("kube-system", "", "", "", "")), 0);
    assert_int_equal(mpod(f, POD("team-a", "", "", OWNER("Job", "batch/v1"), "")), 0);
    f->cfg.manage_jobs_without_queue_name = 0;

    /* a namespace Kueue cannot read: its error (the pod webhook always reads it) */
    call c;
    run(&c, f, "mpod.kb.io", CU_WH_CREATE, POD("ghost", QLABEL, "", "", ""), NULL);
    expect_denied(&c, "failed to get namespace: namespaces \"ghost\" not found");
    done(&c);

    /* only on CREATE */
    run(&c, f, "mpod.kb.io", CU_WH_UPDATE, POD("team-a", QLABEL, "", "", ""),
        POD("team-a", QLABEL, "", "", ""));
    assert_null(cu_jpath(c.obj, "spec.schedulingGates"));
    done(&c);

    /* the pod integration off: Kueue's no-op webhooks, even for a parent's pod */
    enable_first(f, 1);
    assert_int_equal(mpod(f, POD("team-a", QLABEL, "", "", "")), 0);
    assert_int_equal(mpod(f, POD("team-a", "", PARENT, "", "")), 0);
    run(&c, f, "vpod.kb.io", CU_WH_CREATE,
        POD("team-a", "\"kueue.x-k8s.io/pod-group-name\":\"g\"", "", "", ""), NULL);
    expect_allowed(&c);
    done(&c);
    /* ... and with the Job integration off, a pod owned by a Job is one like any other */
    f->cfg.frameworks.n = 2;
    f->cfg.frameworks.items = all_fw + 1;
    assert_int_equal(mpod(f, POD("team-a", QLABEL, "", OWNER("Job", "batch/v1"), "")), MANAGED);
}

#define GL(name) "\"kueue.x-k8s.io/pod-group-name\":\"" name "\""
#define GA(count) "\"kueue.x-k8s.io/pod-group-total-count\":\"" count "\""
#define BOTH \
    "both the 'kueue.x-k8s.io/pod-group-total-count' annotation and the " \
    "'kueue.x-k8s.io/pod-group-name' label should be set"

/* Runs hook name; msg NULL: expects it allowed, else denied with msg. */
static void check(fx *f, const char *name, cu_wh_op op, const char *obj, const char *old,
                  const char *msg)
{
    call c;
    run(&c, f, name, op, obj, old);
    if (msg)
        expect_denied(&c, msg);
    else
        expect_allowed(&c);
    done(&c);
}

#define vpod_create(f, pod, msg) check(f, "vpod.kb.io", CU_WH_CREATE, pod, NULL, msg)
#define vpod_update(f, pod, old, msg) check(f, "vpod.kb.io", CU_WH_UPDATE, pod, old, msg)
#define vlws(f, op, lws, old, msg) check(f, "vleaderworkerset.kb.io", op, lws, old, msg)

static void test_pod_validate_create(void **state)
{
    fx *f = *state;
    enable_all(f);
    vpod_create(f, POD("team-a", QLABEL, "", "", ""), NULL);
    /* a group: both the label and the annotation */
    vpod_create(f, POD("team-a", QLABEL "," GL("g1"), GA("4"), "", ""), NULL);
    vpod_create(
        f, POD("team-a", "\"kueue.x-k8s.io/pod-group-name\":\"g1\"", "", "", ""),
        "metadata.annotations[kueue.x-k8s.io/pod-group-total-count]: Required value: " BOTH);
    vpod_create(f, POD("team-a", "", "\"kueue.x-k8s.io/pod-group-total-count\":\"2\"", "", ""),
                "metadata.labels[kueue.x-k8s.io/pod-group-name]: Required value: " BOTH);
    /* the count: a positive integer */
    vpod_create(f, POD("team-a", GL("g1"), GA("0"), "", ""),
                "metadata.annotations[kueue.x-k8s.io/pod-group-total-count]: Invalid value: \"0\": "
                "incorrect annotation value 'kueue.x-k8s.io/pod-group-total-count=0': group total "
                "count should be greater than zero");
    vpod_create(f, POD("team-a", GL("g1"), GA("two"), "", ""),
                "metadata.annotations[kueue.x-k8s.io/pod-group-total-count]: Invalid value: "
                "\"two\": strconv.Atoi: parsing \"two\": invalid syntax");
    /* the group name: an object name; with the count missing, both said */
    vpod_create(
        f, POD("team-a", "\"kueue.x-k8s.io/pod-group-name\":\"G_1\"", "", "", ""),
        "[metadata.labels[kueue.x-k8s.io/pod-group-name]: Invalid value: \"G_1\": " SUBDOMAIN
        ", metadata.annotations[kueue.x-k8s.io/pod-group-total-count]: Required value: " BOTH "]");
    /* the managed label's one value */
    vpod_create(f, POD("team-a", "\"kueue.x-k8s.io/managed\":\"yes\"", "", "", ""),
                "metadata.labels[kueue.x-k8s.io/managed]: Forbidden: managed label value can only "
                "be 'true'");
    /* a prebuilt Workload names the group */
    vpod_create(f,
                POD("team-a", "\"kueue.x-k8s.io/prebuilt-workload-name\":\"g1\"," GL("g1"), GA("2"),
                    "", ""),
                NULL);
    vpod_create(
        f,
        POD("team-a", "\"kueue.x-k8s.io/prebuilt-workload-name\":\"wl\"," GL("g1"), GA("2"), "",
            ""),
        "metadata.labels[kueue.x-k8s.io/prebuilt-workload-name]: Invalid value: {}: prebuilt "
        "workload and pod group should be equal");
    /* jobframework's label rules */
    vpod_create(f, POD("team-a", "\"kueue.x-k8s.io/queue-name\":\"Q\"", "", "", ""),
                "metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: \"Q\": " SUBDOMAIN);
    /* managed=true under a managed owner: allowed, with Kueue's warning */
    call c;
    run(&c, f, "vpod.kb.io", CU_WH_CREATE,
        POD("team-a", "\"kueue.x-k8s.io/managed\":\"true\"", "", OWNER("Job", "batch/v1"), ""),
        NULL);
    expect_allowed(&c);
    assert_int_equal(c.resp.warnings.n, 1);
    assert_non_null(strstr(c.resp.warnings.msgs[0],
                           "pod owner is managed by kueue, label 'kueue.x-k8s.io/managed=true' "
                           "might lead to unexpected behaviour"));
    done(&c);
}

#define GATE ",\"schedulingGates\":[{\"name\":\"kueue.x-k8s.io/admission\"}]"

static void test_pod_validate_update(void **state)
{
    fx *f = *state;
    enable_all(f);
    /* the queue name of a running (ungated) pod is frozen; of a gated or
     * ended one not */
    vpod_update(f, POD("team-a", "\"kueue.x-k8s.io/queue-name\":\"other\"", "", "", ""),
                POD("team-a", QLABEL, "", "", ""),
                "metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: \"other\": field is "
                "immutable");
    vpod_update(f, POD("team-a", "\"kueue.x-k8s.io/queue-name\":\"other\"", "", "", GATE),
                POD("team-a", QLABEL, "", "", GATE), NULL);
    vpod_update(f,
                "{\"metadata\":{\"name\":\"p\",\"namespace\":\"team-a\",\"labels\":{" QLABEL
                "}},\"status\":{\"phase\":\"Succeeded\"}}",
                "{\"metadata\":{\"name\":\"p\",\"namespace\":\"team-a\",\"labels\":{"
                "\"kueue.x-k8s.io/queue-name\":\"x\"}},\"status\":{\"phase\":\"Succeeded\"}}",
                NULL);
    /* the group name never changes once set */
    vpod_update(f, POD("team-a", GL("g2"), GA("2"), "", GATE),
                POD("team-a", GL("g1"), GA("2"), "", GATE),
                "metadata.labels[kueue.x-k8s.io/pod-group-name]: Invalid value: \"g2\": field is "
                "immutable");
    vpod_update(f, POD("team-a", GL("g2"), GA("2"), "", GATE), POD("team-a", "", "", "", GATE),
                NULL);
    /* an unretriable group stays so */
    vpod_update(f,
                POD("team-a", "\"kueue.x-k8s.io/pod-group-name\":\"g\"",
                    "\"kueue.x-k8s.io/pod-group-total-count\":\"2\"", "", GATE),
                POD("team-a", "\"kueue.x-k8s.io/pod-group-name\":\"g\"",
                    "\"kueue.x-k8s.io/pod-group-total-count\":\"2\","
                    "\"kueue.x-k8s.io/retriable-in-group\":\"false\"",
                    "", GATE),
                "metadata.annotations[kueue.x-k8s.io/retriable-in-group]: Forbidden: unretriable "
                "pod group can't be converted to retriable");
    vpod_update(f,
                POD("team-a", "\"kueue.x-k8s.io/pod-group-name\":\"g\"",
                    "\"kueue.x-k8s.io/pod-group-total-count\":\"2\","
                    "\"kueue.x-k8s.io/retriable-in-group\":\"false\"",
                    "", GATE),
                POD("team-a", "\"kueue.x-k8s.io/pod-group-name\":\"g\"",
                    "\"kueue.x-k8s.io/pod-group-total-count\":\"2\"", "", GATE),
                NULL);
    /* the common rules hold on update too */
    vpod_update(
        f, POD("team-a", GL("g1"), GA("-1"), "", GATE), POD("team-a", GL("g1"), GA("2"), "", GATE),
        "metadata.annotations[kueue.x-k8s.io/pod-group-total-count]: Invalid value: \"-1\": "
        "incorrect annotation value 'kueue.x-k8s.io/pod-group-total-count=-1': group total "
        "count should be greater than zero");
}

/* ---------------- JobSet ---------------- */

#define JOBSET(ns, labels, extra_meta, spec) \
    "{\"apiVersion\":\"jobset.x-k8s.io/v1alpha2\",\"kind\":\"JobSet\",\"metadata\":{\"name\":" \
    "\"js\",\"namespace\":\"" ns "\",\"labels\":{" labels "}" extra_meta "},\"spec\":{" \
    "\"replicatedJobs\":[{\"name\":\"w\",\"replicas\":2,\"template\":{\"spec\":{\"template\":" \
    "{\"spec\":{\"containers\":[{\"name\":\"c\"}]}}}}}]" spec "}}"

#define mjobset_suspends(f, js) suspends(f, "mjobset.kb.io", js)

static void test_jobset(void **state)
{
    fx *f = *state;
    enable_all(f);
    assert_true(mjobset_suspends(f, JOBSET("team-a", QLABEL, "", "")));
    assert_false(mjobset_suspends(f, JOBSET("team-a", "", "", "")));
    assert_true(mjobset_suspends(f, JOBSET("team-a", QLABEL, "", ",\"suspend\":true")));
    assert_false(mjobset_suspends(
        f, JOBSET("team-a", QLABEL, OWNER("JobSet", "jobset.x-k8s.io/v1alpha2"), "")));
    f->cfg.manage_jobs_without_queue_name = 1;
    assert_true(mjobset_suspends(f, JOBSET("team-a", "", "", "")));
    assert_false(mjobset_suspends(f, JOBSET("kube-system", "", "", "")));
    f->cfg.manage_jobs_without_queue_name = 0;
    /* the default LocalQueue */
    call c;
    run(&c, f, "mjobset.kb.io", CU_WH_CREATE, JOBSET("with-default", "", "", ""), NULL);
    assert_string_equal(cu_jstr(cu_jpath(c.obj, "metadata.labels"), "kueue.x-k8s.io/queue-name"),
                        "default");
    assert_true(cu_jas_true(cu_jpath(c.obj, "spec.suspend")));
    done(&c);

    /* validation: jobframework's rules */
    check(f, "vjobset.kb.io", CU_WH_CREATE,
          JOBSET("team-a", "\"kueue.x-k8s.io/queue-name\":\"Q\"", "", ""), NULL,
          "metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: \"Q\": " SUBDOMAIN);
    check(f, "vjobset.kb.io", CU_WH_UPDATE,
          JOBSET("team-a", "\"kueue.x-k8s.io/queue-name\":\"other\"", "", ",\"suspend\":false"),
          JOBSET("team-a", QLABEL, "", ",\"suspend\":false"),
          "metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: \"other\": "
          "field is immutable");
    check(f, "vjobset.kb.io", CU_WH_UPDATE,
          JOBSET("team-a", "\"kueue.x-k8s.io/queue-name\":\"other\"", "", ",\"suspend\":true"),
          JOBSET("team-a", QLABEL, "", ",\"suspend\":true"), NULL);
    /* on update, the rules of an update then those of a create */
    check(f, "vjobset.kb.io", CU_WH_UPDATE,
          JOBSET("team-a", "\"kueue.x-k8s.io/queue-name\":\"Q\"", "", ""),
          JOBSET("team-a", QLABEL, "", ""),
          "[metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: \"Q\": field "
          "is immutable, metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: "
          "\"Q\": " SUBDOMAIN "]");

    /* the integration off */
    enable_first(f, 2);
    assert_false(mjobset_suspends(f, JOBSET("team-a", QLABEL, "", "")));
    check(f, "vjobset.kb.io", CU_WH_CREATE,
          JOBSET("team-a", "\"kueue.x-k8s.io/queue-name\":\"Q\"", "", ""), NULL, NULL);
}

/* ---------------- LeaderWorkerSet ---------------- */

#define TMPL(req) \
    "{\"metadata\":{},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"resources\":" \
    "{\"requests\":{\"cpu\":\"" req "\"}}}]}}"
#define LWS(ns, labels, leader, worker, status) \
    "{\"apiVersion\":\"leaderworkerset.x-k8s.io/v1\",\"kind\":\"LeaderWorkerSet\",\"metadata\":" \
    "{\"name\":\"lws\",\"namespace\":\"" ns "\",\"labels\":{" labels "}},\"spec\":{\"replicas\":" \
    "2,\"leaderWorkerTemplate\":{\"size\":4" leader ",\"workerTemplate\":" worker "}}" status "}"
#define LEADER(req) ",\"leaderTemplate\":" TMPL(req)
#define WPC ",\"kueue.x-k8s.io/priority-class\":\"high\""

static const char *tann(json_object *lws, const char *which, const char *key)
{
    char path[128];
    snprintf(path, sizeof(path), "spec.leaderWorkerTemplate.%s.metadata.annotations", which);
    return cu_jstr(cu_jpath(lws, path), key);
}

static void test_lws_default(void **state)
{
    fx *f = *state;
    enable_all(f);
    call c;
    /* managed: both templates marked; the workers' index offset behind a leader */
    run(&c, f, "mleaderworkerset.kb.io", CU_WH_CREATE,
        LWS("team-a", QLABEL WPC, LEADER("1"), TMPL("1"), ""), NULL);
    expect_allowed(&c);
    for (int w = 0; w < 2; w++) {
        const char *t = w ? "workerTemplate" : "leaderTemplate";
        assert_string_equal(tann(c.obj, t, "kueue.x-k8s.io/pod-suspending-parent"),
                            "leaderworkerset.x-k8s.io/leaderworkerset");
        assert_string_equal(tann(c.obj, t, "kueue.x-k8s.io/pod-group-serving"), "true");
        char path[128];
        snprintf(path, sizeof(path), "spec.leaderWorkerTemplate.%s.metadata.labels", t);
        assert_string_equal(cu_jstr(cu_jpath(c.obj, path), "kueue.x-k8s.io/priority-class"),
                            "high");
    }
    assert_string_equal(tann(c.obj, "workerTemplate", "kueue.x-k8s.io/pod-index-offset"), "1");
    assert_null(tann(c.obj, "leaderTemplate", "kueue.x-k8s.io/pod-index-offset"));
    done(&c);

    /* no leader template: the workers only, no offset, no priority label */
    run(&c, f, "mleaderworkerset.kb.io", CU_WH_CREATE, LWS("team-a", QLABEL, "", TMPL("1"), ""),
        NULL);
    assert_null(cu_jpath(c.obj, "spec.leaderWorkerTemplate.leaderTemplate"));
    assert_string_equal(tann(c.obj, "workerTemplate", "kueue.x-k8s.io/pod-group-serving"), "true");
    assert_null(tann(c.obj, "workerTemplate", "kueue.x-k8s.io/pod-index-offset"));
    assert_null(cu_jpath(c.obj, "spec.leaderWorkerTemplate.workerTemplate.metadata.labels"));
    done(&c);

    /* not managed: unchanged */
    json_object *want = cu_json_parse_str(LWS("team-a", "", LEADER("1"), TMPL("1"), ""));
    run(&c, f, "mleaderworkerset.kb.io", CU_WH_CREATE,
        LWS("team-a", "", LEADER("1"), TMPL("1"), ""), NULL);
    assert_true(cu_json_equal(c.obj, want));
    done(&c);

    /* the default LocalQueue, on UPDATE too */
    run(&c, f, "mleaderworkerset.kb.io", CU_WH_UPDATE, LWS("with-default", "", "", TMPL("1"), ""),
        LWS("with-default", "", "", TMPL("1"), ""));
    assert_string_equal(cu_jstr(cu_jpath(c.obj, "metadata.labels"), "kueue.x-k8s.io/queue-name"),
                        "default");
    assert_string_equal(tann(c.obj, "workerTemplate", "kueue.x-k8s.io/pod-suspending-parent"),
                        "leaderworkerset.x-k8s.io/leaderworkerset");
    done(&c);

    /* the integration off */
    enable_first(f, 3);
    run(&c, f, "mleaderworkerset.kb.io", CU_WH_CREATE,
        LWS("team-a", "", LEADER("1"), TMPL("1"), ""), NULL);
    assert_true(cu_json_equal(c.obj, want));
    done(&c);
    json_object_put(want);
}

#define READY ",\"status\":{\"readyReplicas\":1}"

static void test_lws_validate(void **state)
{
    fx *f = *state;
    enable_all(f);
    vlws(f, CU_WH_CREATE, LWS("team-a", QLABEL, "", TMPL("1"), ""), NULL, NULL);
    vlws(f, CU_WH_CREATE, LWS("team-a", "\"kueue.x-k8s.io/queue-name\":\"Q\"", "", TMPL("1"), ""),
         NULL, "metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: \"Q\": " SUBDOMAIN);
    /* the queue name never changes */
    vlws(f, CU_WH_UPDATE,
         LWS("team-a", "\"kueue.x-k8s.io/queue-name\":\"other\"", "", TMPL("1"), ""),
         LWS("team-a", QLABEL, "", TMPL("1"), ""),
         "metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: \"other\": field is "
         "immutable");
    /* WorkloadPriorityClass: added only while no replica is ready */
    vlws(f, CU_WH_UPDATE, LWS("team-a", QLABEL WPC, "", TMPL("1"), ""),
         LWS("team-a", QLABEL, "", TMPL("1"), ""), NULL);
    vlws(f, CU_WH_UPDATE, LWS("team-a", QLABEL WPC, "", TMPL("1"), READY),
         LWS("team-a", QLABEL, "", TMPL("1"), READY),
         "metadata.labels[kueue.x-k8s.io/priority-class]: Invalid value: \"high\": "
         "WorkloadPriorityClass cannot be added to a non-suspended workload");
    /* a managed LeaderWorkerSet's pods keep their shape */
    vlws(f, CU_WH_UPDATE, LWS("team-a", QLABEL, LEADER("1"), TMPL("2"), ""),
         LWS("team-a", QLABEL, LEADER("1"), TMPL("1"), ""),
         "spec.leaderWorkerTemplate.workerTemplate.spec.containers[0].resources.requests: "
         "Invalid value: {\"cpu\":\"2\"}: field is immutable");
    vlws(f, CU_WH_UPDATE, LWS("team-a", QLABEL, LEADER("500m"), TMPL("1"), ""),
         LWS("team-a", QLABEL, LEADER("1"), TMPL("1"), ""),
         "spec.leaderWorkerTemplate.leaderTemplate.spec.containers[0].resources.requests: "
         "Invalid value: {\"cpu\":\"500m\"}: field is immutable");
    /* ... equal quantities are equal, and what is not the shape may change */
    vlws(f, CU_WH_UPDATE, LWS("team-a", QLABEL, "", TMPL("1000m"), ""),
         LWS("team-a", QLABEL, "", TMPL("1"), ""), NULL);
    vlws(f, CU_WH_UPDATE,
         LWS("team-a", QLABEL, "",
             "{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"new\",\"resources\":"
             "{\"requests\":{\"cpu\":\"1\"}}}]}}",
             ""),
         LWS("team-a", QLABEL, "", TMPL("1"), ""), NULL);
    vlws(f, CU_WH_UPDATE,
         LWS("team-a", QLABEL, "",
             "{\"spec\":{\"nodeSelector\":{\"a\":\"b\"},\"containers\":[{\"name\":\"c\","
             "\"image\":\"i\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}",
             ""),
         LWS("team-a", QLABEL, "", TMPL("1"), ""),
         "spec.leaderWorkerTemplate.workerTemplate.spec.nodeSelector: Invalid value: "
         "{\"a\":\"b\"}: field is immutable");
    /* a leader added */
    vlws(f, CU_WH_UPDATE, LWS("team-a", QLABEL, LEADER("1"), TMPL("1"), ""),
         LWS("team-a", QLABEL, "", TMPL("1"), ""),
         "spec.leaderWorkerTemplate.leaderTemplate: Invalid value: " TMPL("1") ": field is "
                                                                               "immutable");
    /* not managed: free */
    vlws(f, CU_WH_UPDATE, LWS("team-a", "", LEADER("1"), TMPL("2"), ""),
         LWS("team-a", "", "", TMPL("1"), ""), NULL);
    /* the integration off */
    enable_first(f, 3);
    vlws(f, CU_WH_UPDATE,
         LWS("team-a", "\"kueue.x-k8s.io/queue-name\":\"other\"", "", TMPL("1"), ""),
         LWS("team-a", QLABEL, "", TMPL("1"), ""), NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test_setup_teardown(test_cluster_queue, setup, teardown),
        cmocka_unit_test_setup_teardown(test_in_use_finalizer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cohort, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resource_flavor, setup, teardown),
        cmocka_unit_test_setup_teardown(test_workload_create, setup, teardown),
        cmocka_unit_test_setup_teardown(test_workload_update, setup, teardown),
        cmocka_unit_test_setup_teardown(test_job_suspend_matrix, setup, teardown),
        cmocka_unit_test_setup_teardown(test_job_default_lq, setup, teardown),
        cmocka_unit_test_setup_teardown(test_job_validate_create, setup, teardown),
        cmocka_unit_test_setup_teardown(test_job_validate_update, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pod_gate_matrix, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pod_validate_create, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pod_validate_update, setup, teardown),
        cmocka_unit_test_setup_teardown(test_jobset, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lws_default, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lws_validate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resource_flavor_topology, setup, teardown),
        cmocka_unit_test_setup_teardown(test_topology, setup, teardown),
        cmocka_unit_test_setup_teardown(test_job_topology, setup, teardown),
        cmocka_unit_test_setup_teardown(test_jobset_topology_groups, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
