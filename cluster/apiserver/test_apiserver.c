/*
 * test_apiserver.c - the API server's pieces in-process: URL routing,
 * JSONPath for printer columns, AGE formatting, Table building, YAML
 * bodies, base64, the kubeconfig file, the generated certificates, and
 * requests through cu_apiserver_handle against a real store (discovery,
 * CRUD, errors as metav1.Status, auth, patches, Table output, faults,
 * watch streams).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "cu_apiserver.h"
#include "cu_base64.h"
#include "cu_duration.h"
#include "cu_json.h"

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---------------- routing ---------------- */

static void test_route_parse(void **state)
{
    (void)state;
    static const struct {
        const char *path;
        int ok, kind;
        const char *group, *version, *ns, *resource, *name, *sub;
    } cases[] = {
        { "/api", 1, CU_ROUTE_API, "", "", "", "", "", "" },
        { "/apis/", 1, CU_ROUTE_APIS, "", "", "", "", "", "" },
        { "/api/v1", 1, CU_ROUTE_GV, "", "v1", "", "", "", "" },
        { "/apis/batch", 1, CU_ROUTE_GROUP, "batch", "", "", "", "", "" },
        { "/apis/batch/v1", 1, CU_ROUTE_GV, "batch", "v1", "", "", "", "" },
        { "/api/v1/pods", 1, CU_ROUTE_RESOURCE, "", "v1", "", "pods", "", "" },
        { "/api/v1/nodes/n1", 1, CU_ROUTE_RESOURCE, "", "v1", "", "nodes", "n1", "" },
        { "/api/v1/nodes/n1/status", 1, CU_ROUTE_RESOURCE, "", "v1", "", "nodes", "n1", "status" },
        { "/api/v1/namespaces", 1, CU_ROUTE_RESOURCE, "", "v1", "", "namespaces", "", "" },
        { "/api/v1/namespaces/team-a", 1, CU_ROUTE_RESOURCE, "", "v1", "", "namespaces", "team-a",
          "" },
        { "/api/v1/namespaces/team-a/status", 1, CU_ROUTE_RESOURCE, "", "v1", "", "namespaces",
          "team-a", "status" },
        { "/api/v1/namespaces/team-a/pods", 1, CU_ROUTE_RESOURCE, "", "v1", "team-a", "pods", "",
          "" },
        { "/api/v1/namespaces/team-a/pods/p", 1, CU_ROUTE_RESOURCE, "", "v1", "team-a", "pods", "p",
          "" },
        { "/api/v1/namespaces/team-a/pods/p/binding", 1, CU_ROUTE_RESOURCE, "", "v1", "team-a",
          "pods", "p", "binding" },
        { "/apis/kueue.x-k8s.io/v1beta2/clusterqueues/cq/status", 1, CU_ROUTE_RESOURCE,
          "kueue.x-k8s.io", "v1beta2", "", "clusterqueues", "cq", "status" },
        { "/apis/kueue.x-k8s.io/v1beta2/namespaces/ns/workloads/w", 1, CU_ROUTE_RESOURCE,
          "kueue.x-k8s.io", "v1beta2", "ns", "workloads", "w", "" },
        { "/healthz", 0, 0, "", "", "", "", "", "" },
        { "/", 0, 0, "", "", "", "", "", "" },
        { "/api/v1/namespaces/a/pods/p/status/extra", 0, 0, "", "", "", "", "", "" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cu_route r;
        cu_err e = cu_route_parse(cases[i].path, &r);
        if (!cases[i].ok) {
            if (e == CU_OK)
                fail_msg("%s: parsed but should not", cases[i].path);
            continue;
        }
        if (e != CU_OK)
            fail_msg("%s: not parsed", cases[i].path);
        assert_int_equal(r.kind, cases[i].kind);
        assert_string_equal(r.group, cases[i].group);
        assert_string_equal(r.version, cases[i].version);
        assert_string_equal(r.ns, cases[i].ns);
        assert_string_equal(r.resource, cases[i].resource);
        assert_string_equal(r.name, cases[i].name);
        assert_string_equal(r.sub, cases[i].sub);
    }
}

/* ---------------- JSONPath, durations ---------------- */

static void test_jsonpath(void **state)
{
    (void)state;
    json_object *o = json_tokener_parse(
        "{\"spec\":{\"x\":\"ex\",\"n\":3,\"a.b\":1},"
        "\"status\":{\"y\":[{\"z\":\"first\"},{\"z\":\"second\"}],"
        "\"w\":[{},{\"z\":\"third\"}],"
        "\"conditions\":[{\"type\":\"Active\",\"status\":\"True\",\"n\":1},"
        "{\"type\":\"Admitted\",\"status\":\"False\",\"reason\":\"Pending\",\"n\":2,"
        "\"ok\":true}]},"
        "\"metadata\":{\"labels\":{\"team/name\":\"ml\",\"a\":\"b\"}}}");
    assert_non_null(o);
    static const struct {
        const char *path, *want; /* want NULL = no match */
    } cases[] = {
        { ".spec.x", "ex" },
        { "{.spec.x}", "ex" },
        { "spec.x", "ex" },
        { ".spec.n", "3" },
        { ".status.y[0].z", "first" },
        { ".status.y[1].z", "second" },
        { ".status.y[-1].z", "second" },
        { ".status.y[2].z", NULL },
        { ".status.y[*].z", "first" },
        { ".metadata.labels['team/name']", "ml" },
        { ".metadata.labels[\"a\"]", "b" },
        { ".spec.a\\.b", "1" },
        { ".spec.missing", NULL },
        { ".spec.x.deeper", NULL },
        { ".status.conditions[0].status", "True" },
        /* filters, as in CRD printer columns: the first match whose rest of the path has a value */
        { ".status.conditions[?(@.type=='Active')].status", "True" },
        { ".status.conditions[?(@.type == \"Admitted\")].status", "False" },
        { ".status.conditions[?(@.type=='Finished')].status", NULL },
        { ".status.conditions[?(@.type!='Active')].reason", "Pending" },
        { ".status.conditions[?(@.reason)].type", "Admitted" },
        { ".status.conditions[?(@.n>1)].type", "Admitted" },
        { ".status.conditions[?(@.n<=1)].type", "Active" },
        { ".status.conditions[?(@.n==' 2')].type", NULL },
        { ".status.conditions[?(@.ok==true)].type", "Admitted" },
        { ".status.conditions[?(@.type=='a)b')].status", NULL },
        { ".status.conditions[?(@.type=='Active')", NULL },
        { ".spec[?(@.x)]", NULL },
        { ".status.y[?(@.z=='second')].z", "second" },
        { ".status.w[*].z", "third" },
        { ".status.conditions[?(@.n>0)].reason", "Pending" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_object *v = cu_jsonpath_get(o, cases[i].path);
        if (!cases[i].want) {
            if (v)
                fail_msg("%s: expected no match, got %s", cases[i].path,
                         json_object_to_json_string(v));
            continue;
        }
        if (!v)
            fail_msg("%s: no match", cases[i].path);
        assert_string_equal(json_object_get_string(v), cases[i].want);
    }
    json_object_put(o);
}

static void test_human_duration(void **state)
{
    (void)state;
    static const struct {
        int64_t ms;
        const char *want;
    } cases[] = {
        { -5000, "<invalid>" },
        { -500, "0s" },
        { 0, "0s" },
        { 45000, "45s" },
        { 119000, "119s" },
        { 120000, "2m" },
        { 310000, "5m10s" },
        { 600000, "10m" },
        { 10799000, "179m" },
        { 10800000, "3h" },
        { 12600000, "3h30m" },
        { 28800000, "8h" },
        { 47 * 3600000LL, "47h" },
        { 48 * 3600000LL, "2d" },
        { 50 * 3600000LL, "2d2h" },
        { 8 * 86400000LL, "8d" },
        { 730 * 86400000LL, "2y" },
        { 735 * 86400000LL, "2y5d" },
        { 3000 * 86400000LL, "8y" },
    };
    char buf[32];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cu_duration_human(cases[i].ms, buf, sizeof buf);
        if (strcmp(buf, cases[i].want) != 0)
            fail_msg("%lld ms: got %s, want %s", (long long)cases[i].ms, buf, cases[i].want);
    }
}

/* ---------------- tables ---------------- */

static const char *cell_str(json_object *row, size_t i)
{
    json_object *cells = NULL;
    json_object_object_get_ex(row, "cells", &cells);
    json_object *c = json_object_array_get_idx(cells, i);
    return c ? json_object_get_string(c) : NULL;
}

static json_object *get(json_object *o, const char *k)
{
    json_object *v = NULL;
    json_object_object_get_ex(o, k, &v);
    return v;
}

static void test_table_crd_columns(void **state)
{
    (void)state;
    cu_pcol cols[] = {
        { "Cohort", "string", "", "", ".spec.cohortName", 0 },
        { "Pending Workloads", "integer", "", "", ".status.pendingWorkloads", 0 },
        { "Strategy", "string", "", "", ".spec.queueingStrategy", 1 },
        { "Age", "date", "", "", ".metadata.creationTimestamp", 0 },
    };
    cu_rtype rt = { 0 };
    rt.group = "kueue.x-k8s.io";
    rt.version = "v1beta2";
    rt.resource = "clusterqueues";
    rt.kind = "ClusterQueue";
    rt.from_crd = 1;
    rt.cols = cols;
    rt.ncols = 4;
    int64_t now;
    assert_int_equal(cu_time_parse("2026-01-01T01:00:00Z", &now), CU_OK);
    json_object *list = json_tokener_parse(
        "{\"kind\":\"ClusterQueueList\",\"metadata\":{\"resourceVersion\":\"42\","
        "\"continue\":\"tok\"},\"items\":["
        "{\"metadata\":{\"name\":\"a\",\"creationTimestamp\":\"2026-01-01T00:55:00Z\"},"
        "\"spec\":{\"cohortName\":\"org\",\"queueingStrategy\":\"BestEffortFIFO\"},"
        "\"status\":{\"pendingWorkloads\":7}},"
        "{\"metadata\":{\"name\":\"b\",\"creationTimestamp\":\"2025-12-31T01:00:00Z\"},"
        "\"spec\":{}}]}");
    json_object *t = cu_table_build(&rt, list, 1, 1, now);
    assert_string_equal(json_object_get_string(get(t, "kind")), "Table");
    assert_string_equal(json_object_get_string(get(t, "apiVersion")), "meta.k8s.io/v1");
    assert_string_equal(json_object_get_string(get(get(t, "metadata"), "resourceVersion")), "42");
    assert_string_equal(json_object_get_string(get(get(t, "metadata"), "continue")), "tok");
    json_object *defs = get(t, "columnDefinitions");
    assert_int_equal(json_object_array_length(defs), 5);
    static const char *const names[] = { "Name", "Cohort", "Pending Workloads", "Strategy", "Age" };
    for (size_t i = 0; i < 5; i++)
        assert_string_equal(json_object_get_string(get(json_object_array_get_idx(defs, i), "name")),
                            names[i]);
    assert_int_equal(json_object_get_int(get(json_object_array_get_idx(defs, 3), "priority")), 1);
    json_object *rows = get(t, "rows");
    assert_int_equal(json_object_array_length(rows), 2);
    json_object *r0 = json_object_array_get_idx(rows, 0);
    assert_string_equal(cell_str(r0, 0), "a");
    assert_string_equal(cell_str(r0, 1), "org");
    json_object *pending = json_object_array_get_idx(get(r0, "cells"), 2);
    assert_true(json_object_is_type(pending, json_type_int));
    assert_int_equal(json_object_get_int(pending), 7);
    assert_string_equal(cell_str(r0, 4), "5m");
    json_object *obj = get(r0, "object");
    assert_string_equal(json_object_get_string(get(obj, "kind")), "PartialObjectMetadata");
    assert_string_equal(json_object_get_string(get(get(obj, "metadata"), "name")), "a");
    assert_null(get(obj, "spec"));
    json_object *r1 = json_object_array_get_idx(rows, 1);
    assert_null(json_object_array_get_idx(get(r1, "cells"), 1)); /* missing cohort: null */
    assert_string_equal(cell_str(r1, 4), "24h");
    json_object_put(t);

    /* no definitions (later watch events), full objects */
    t = cu_table_build(&rt, json_object_array_get_idx(get(list, "items"), 0), 2, 0, now);
    assert_int_equal(json_object_array_length(get(t, "columnDefinitions")), 0);
    r0 = json_object_array_get_idx(get(t, "rows"), 0);
    assert_non_null(get(get(r0, "object"), "spec"));
    json_object_put(t);

    /* a CRD without printer columns: Name and Age */
    rt.ncols = 0;
    t = cu_table_build(&rt, list, 0, 1, now);
    assert_int_equal(json_object_array_length(get(t, "columnDefinitions")), 2);
    r0 = json_object_array_get_idx(get(t, "rows"), 0);
    assert_null(get(r0, "object"));
    assert_string_equal(cell_str(r0, 1), "5m");
    json_object_put(t);
    json_object_put(list);
}

static void test_table_builtins(void **state)
{
    (void)state;
    int64_t now;
    assert_int_equal(cu_time_parse("2026-01-01T00:10:00Z", &now), CU_OK);
    cu_rtype pod = { 0 };
    pod.group = "";
    pod.version = "v1";
    pod.kind = "Pod";
    pod.resource = "pods";
    json_object *p = json_tokener_parse(
        "{\"metadata\":{\"name\":\"p\",\"creationTimestamp\":\"2026-01-01T00:00:00Z\"},"
        "\"spec\":{\"nodeName\":\"gpu-1\",\"containers\":[{\"name\":\"a\"},{\"name\":\"b\"}]},"
        "\"status\":{\"phase\":\"Running\",\"containerStatuses\":["
        "{\"ready\":true,\"restartCount\":2},{\"ready\":false,\"restartCount\":1}]}}");
    json_object *t = cu_table_build(&pod, p, 1, 1, now);
    json_object *defs = get(t, "columnDefinitions");
    static const char *const pod_cols[] = { "Name", "Ready", "Status", "Restarts", "Age" };
    for (size_t i = 0; i < 5; i++)
        assert_string_equal(json_object_get_string(get(json_object_array_get_idx(defs, i), "name")),
                            pod_cols[i]);
    json_object *r = json_object_array_get_idx(get(t, "rows"), 0);
    assert_string_equal(cell_str(r, 0), "p");
    assert_string_equal(cell_str(r, 1), "1/2");
    assert_string_equal(cell_str(r, 2), "Running");
    assert_string_equal(cell_str(r, 3), "3");
    assert_string_equal(cell_str(r, 4), "10m");
    assert_string_equal(cell_str(r, 6), "gpu-1");
    json_object_put(t);
    json_object_put(p);
    /* a gated pod: kubectl's printer says SchedulingGated */
    p = json_tokener_parse(
        "{\"metadata\":{\"name\":\"g\",\"creationTimestamp\":\"2026-01-01T00:00:00Z\"},"
        "\"spec\":{\"schedulingGates\":[{\"name\":\"x/y\"}],\"containers\":[{\"name\":\"a\"}]},"
        "\"status\":{\"phase\":\"Pending\",\"conditions\":[{\"type\":\"PodScheduled\","
        "\"status\":\"False\",\"reason\":\"SchedulingGated\"}]}}");
    t = cu_table_build(&pod, p, 1, 1, now);
    assert_string_equal(cell_str(json_object_array_get_idx(get(t, "rows"), 0), 2),
                        "SchedulingGated");
    json_object_put(t);
    json_object_put(p);

    cu_rtype job = { 0 };
    job.group = "batch";
    job.version = "v1";
    job.kind = "Job";
    job.resource = "jobs";
    json_object *j = json_tokener_parse(
        "{\"metadata\":{\"name\":\"j\",\"creationTimestamp\":\"2026-01-01T00:00:00Z\"},"
        "\"spec\":{\"completions\":4,\"parallelism\":2},"
        "\"status\":{\"succeeded\":4,\"startTime\":\"2026-01-01T00:01:00Z\","
        "\"completionTime\":\"2026-01-01T00:03:30Z\","
        "\"conditions\":[{\"type\":\"Complete\",\"status\":\"True\"}]}}");
    t = cu_table_build(&job, j, 1, 1, now);
    r = json_object_array_get_idx(get(t, "rows"), 0);
    assert_string_equal(cell_str(r, 1), "Complete");
    assert_string_equal(cell_str(r, 2), "4/4");
    assert_string_equal(cell_str(r, 3), "2m30s");
    json_object_put(t);
    json_object_put(j);

    cu_rtype node = { 0 };
    node.group = "";
    node.version = "v1";
    node.kind = "Node";
    node.resource = "nodes";
    json_object *n = json_tokener_parse(
        "{\"metadata\":{\"name\":\"n\",\"labels\":{\"node-role.kubernetes.io/gpu\":\"\"}},"
        "\"spec\":{\"unschedulable\":true},"
        "\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}],"
        "\"nodeInfo\":{\"kubeletVersion\":\"v1.32.0\"}}}");
    t = cu_table_build(&node, n, 1, 1, now);
    r = json_object_array_get_idx(get(t, "rows"), 0);
    assert_string_equal(cell_str(r, 1), "Ready,SchedulingDisabled");
    assert_string_equal(cell_str(r, 2), "gpu");
    assert_string_equal(cell_str(r, 4), "v1.32.0");
    json_object_put(t);
    json_object_put(n);
}

/* ---------------- YAML, base64, kubeconfig, TLS ---------------- */

static void test_yaml_to_json(void **state)
{
    (void)state;
    char err[256];
    const char *y = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"
                    "data:\n  n: \"3\"\n  b: 'true'\nlist: [1, 2.5, true, null, 1Gi]\n";
    json_object *o = cu_yaml_to_json(y, strlen(y), err, sizeof err);
    assert_non_null(o);
    assert_string_equal(
        json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\"},"
        "\"data\":{\"n\":\"3\",\"b\":\"true\"},\"list\":[1,2.5,true,null,\"1Gi\"]}");
    json_object_put(o);
    const char *j = "{\"a\": {\"b\": [1, \"x\"]}}";
    o = cu_yaml_to_json(j, strlen(j), err, sizeof err);
    assert_non_null(o);
    assert_string_equal(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
                        "{\"a\":{\"b\":[1,\"x\"]}}");
    json_object_put(o);
    assert_null(cu_yaml_to_json("a: [1", 5, err, sizeof err));
    assert_true(strlen(err) > 0);
    assert_null(cu_yaml_to_json("", 0, err, sizeof err));
}

static void test_base64(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
    } cases[] = { { "", "" },
                  { "f", "Zg==" },
                  { "fo", "Zm8=" },
                  { "foo", "Zm9v" },
                  { "foob", "Zm9vYg==" },
                  { "fooba", "Zm9vYmE=" },
                  { "foobar", "Zm9vYmFy" } };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *b = cu_base64_encode(cases[i].in, strlen(cases[i].in));
        assert_string_equal(b, cases[i].out);
        free(b);
    }
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    static char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

static void test_kubeconfig_write(void **state)
{
    (void)state;
    char dir[] = "/tmp/cu_kcXXXXXX", path[256], err[256];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/kc", dir);
    assert_int_equal(
        cu_kubeconfig_write(path, "https://127.0.0.1:1234", "PEM", "tok\"en", err, sizeof err),
        CU_OK);
    const char *s = slurp(path);
    assert_non_null(s);
    assert_non_null(strstr(s, "server: \"https://127.0.0.1:1234\""));
    assert_non_null(strstr(s, "certificate-authority-data: UEVN\n")); /* base64("PEM") */
    assert_non_null(strstr(s, "token: \"tok\\\"en\""));
    assert_non_null(strstr(s, "current-context: cueue"));
    /* no token, no CA: an empty user, an http server */
    assert_int_equal(cu_kubeconfig_write(path, "http://127.0.0.1:1", NULL, NULL, err, sizeof err),
                     CU_OK);
    s = slurp(path);
    assert_null(strstr(s, "certificate-authority-data"));
    assert_non_null(strstr(s, "user: {}"));
    /* a folder that does not exist: an error naming the file */
    char bad[300];
    snprintf(bad, sizeof bad, "%s/missing/kc", dir);
    assert_int_not_equal(cu_kubeconfig_write(bad, "http://x", NULL, NULL, err, sizeof err), CU_OK);
    assert_non_null(strstr(err, bad));
    unlink(path);
    rmdir(dir);
}

static void test_tls_generate(void **state)
{
    (void)state;
    char *ca = NULL, *cert = NULL, *key = NULL, err[256];
    assert_int_equal(cu_tls_generate("10.1.2.3", &ca, &cert, &key, err, sizeof err), CU_OK);
    assert_non_null(strstr(ca, "BEGIN CERTIFICATE"));
    assert_non_null(strstr(key, "PRIVATE KEY"));
    gnutls_x509_crt_t cac, srv;
    gnutls_datum_t d1 = { (unsigned char *)ca, (unsigned)strlen(ca) };
    gnutls_datum_t d2 = { (unsigned char *)cert, (unsigned)strlen(cert) };
    assert_int_equal(gnutls_x509_crt_init(&cac), 0);
    assert_int_equal(gnutls_x509_crt_init(&srv), 0);
    assert_int_equal(gnutls_x509_crt_import(cac, &d1, GNUTLS_X509_FMT_PEM), 0);
    assert_int_equal(gnutls_x509_crt_import(srv, &d2, GNUTLS_X509_FMT_PEM), 0);
    unsigned int verify = 1;
    assert_int_equal(gnutls_x509_crt_list_verify(&srv, 1, &cac, 1, NULL, 0, 0, &verify), 0);
    assert_int_equal(verify, 0);
    assert_true(gnutls_x509_crt_check_ip(srv, (const unsigned char *)"\x7f\0\0\x01", 4, 0));
    assert_true(gnutls_x509_crt_check_ip(srv, (const unsigned char *)"\x0a\x01\x02\x03", 4, 0));
    assert_true(gnutls_x509_crt_check_hostname(srv, "localhost"));
    assert_false(gnutls_x509_crt_check_hostname(srv, "example.com"));
    gnutls_x509_crt_deinit(cac);
    gnutls_x509_crt_deinit(srv);
    free(ca);
    free(cert);
    free(key);
}

/* ---------------- requests in-process against a real store ---------------- */

typedef struct fx {
    int64_t now;
    cu_clock clock;
    cu_store *s;
    cu_apiserver *a;
    char tokfile[64];
} fx;

static int fx_setup_opts(void **state, int admin, int tokens)
{
    fx *f = calloc(1, sizeof *f);
    char err[256];
    assert_int_equal(cu_time_parse("2026-01-01T00:00:00Z", &f->now), CU_OK);
    f->clock.now_ms = cu_clock_fake_now;
    f->clock.ud = &f->now;
    f->s = cu_store_new(100, &f->clock);
    assert_non_null(f->s);
    cu_apiserver_opts o;
    memset(&o, 0, sizeof o);
    o.admin = admin;
    if (tokens) {
        snprintf(f->tokfile, sizeof f->tokfile, "/tmp/cu_tokXXXXXX");
        int fd = mkstemp(f->tokfile);
        assert_true(fd >= 0);
        const char *t = "# tokens\n\nsecret-1,admin,1,system:masters\n  secret-2  \n";
        assert_int_equal(write(fd, t, strlen(t)), (ssize_t)strlen(t));
        close(fd);
        o.token_file = f->tokfile;
    }
    f->a = cu_apiserver_new_unbound(f->s, &o, err, sizeof err);
    assert_non_null(f->a);
    *state = f;
    return 0;
}

static int fx_setup(void **state) { return fx_setup_opts(state, 1, 0); }
static int fx_setup_auth(void **state) { return fx_setup_opts(state, 0, 1); }

static int fx_teardown(void **state)
{
    fx *f = *state;
    cu_apiserver_stop(f->a);
    cu_store_free(f->s);
    if (f->tokfile[0])
        unlink(f->tokfile);
    free(f);
    return 0;
}

typedef struct rq {
    const char *method, *path, *accept, *ct, *auth, *body;
    const char *args[8];
    int remote;
} rq;

/* Sends q; returns the parsed body (caller puts) and the code in *code. */
static json_object *send_req(fx *f, rq q, cu_api_resp *keep, int *code)
{
    size_t nargs = 0;
    while (nargs < 4 && q.args[2 * nargs])
        nargs++;
    cu_api_req r = { q.method,  q.path,   q.args,
                     nargs,     q.accept, q.ct,
                     q.auth,    q.body,   q.body ? strlen(q.body) : 0,
                     !q.remote, NULL };
    cu_api_resp resp;
    cu_apiserver_handle(f->a, &r, &resp);
    *code = resp.code;
    json_object *o = resp.body ? json_tokener_parse(resp.body) : NULL;
    if (keep)
        *keep = resp;
    else
        cu_api_resp_free(&resp);
    return o;
}

static const char *sget(json_object *o, const char *dotted)
{
    char key[128];
    const char *p = dotted;
    while (o && *p) {
        size_t n = strcspn(p, ".");
        snprintf(key, sizeof key, "%.*s", (int)n, p);
        o = get(o, key);
        p += n + (p[n] == '.');
    }
    return o ? json_object_get_string(o) : NULL;
}

static void expect_status(json_object *o, int code, const char *reason, const char *msg_part)
{
    assert_non_null(o);
    assert_string_equal(sget(o, "kind"), "Status");
    assert_int_equal(json_object_get_int(get(o, "code")), code);
    assert_string_equal(sget(o, "reason"), reason);
    if (msg_part && !strstr(sget(o, "message"), msg_part))
        fail_msg("message \"%s\" lacks \"%s\"", sget(o, "message"), msg_part);
}

static void test_discovery(void **state)
{
    fx *f = *state;
    int code;
    json_object *o = send_req(f, (rq){ .method = "GET", .path = "/api" }, NULL, &code);
    assert_int_equal(code, 200);
    assert_string_equal(sget(o, "kind"), "APIVersions");
    json_object_put(o);

    o = send_req(f, (rq){ .method = "GET", .path = "/api/v1" }, NULL, &code);
    assert_int_equal(code, 200);
    assert_string_equal(sget(o, "groupVersion"), "v1");
    int pods = 0, status = 0, binding = 0;
    json_object *res = get(o, "resources");
    for (size_t i = 0; i < json_object_array_length(res); i++) {
        json_object *r = json_object_array_get_idx(res, i);
        const char *n = sget(r, "name");
        if (strcmp(n, "pods") == 0) {
            pods = 1;
            assert_string_equal(sget(r, "kind"), "Pod");
            assert_true(json_object_get_boolean(get(r, "namespaced")));
            assert_true(strstr(json_object_to_json_string(get(r, "verbs")), "\"watch\"") != NULL);
        }
        status |= strcmp(n, "pods/status") == 0;
        binding |= strcmp(n, "pods/binding") == 0;
    }
    assert_true(pods && status && binding);
    json_object_put(o);

    o = send_req(f, (rq){ .method = "GET", .path = "/apis" }, NULL, &code);
    assert_int_equal(code, 200);
    assert_non_null(
        strstr(json_object_to_json_string_ext(o, JSON_C_TO_STRING_NOSLASHESCAPE), "\"batch/v1\""));
    json_object_put(o);

    o = send_req(f, (rq){ .method = "GET", .path = "/apis/batch/v1" }, NULL, &code);
    assert_int_equal(code, 200);
    assert_non_null(strstr(json_object_to_json_string_ext(o, JSON_C_TO_STRING_NOSLASHESCAPE),
                           "\"jobs/status\""));
    json_object_put(o);

    o = send_req(f, (rq){ .method = "GET", .path = "/apis/nope.example/v1" }, NULL, &code);
    assert_int_equal(code, 404);
    expect_status(o, 404, "NotFound", "the server could not find the requested resource");
    json_object_put(o);

    o = send_req(f, (rq){ .method = "GET", .path = "/version" }, NULL, &code);
    assert_int_equal(code, 200);
    assert_string_equal(sget(o, "gitVersion"), "v1.32.0-cueue");
    json_object_put(o);

    o = send_req(f, (rq){ .method = "GET", .path = "/openapi/v3" }, NULL, &code);
    assert_int_equal(code, 200);
    const char *url = sget(get(get(o, "paths"), "apis/batch/v1"), "serverRelativeURL");
    assert_non_null(url);
    assert_non_null(strstr(url, "/openapi/v3/apis/batch/v1?hash="));
    json_object_put(o);
    o = send_req(f, (rq){ .method = "GET", .path = "/openapi/v3/apis/batch/v1" }, NULL, &code);
    assert_int_equal(code, 200);
    json_object *p =
        get(get(get(o, "paths"), "/apis/batch/v1/namespaces/{namespace}/jobs/{name}"), "patch");
    assert_non_null(p);
    assert_string_equal(sget(p, "x-kubernetes-group-version-kind.kind"), "Job");
    assert_non_null(strstr(json_object_to_json_string(get(p, "parameters")), "fieldValidation"));
    json_object_put(o);
}

static void test_crud_and_errors(void **state)
{
    fx *f = *state;
    int code;
    const char *cm = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
                     "\"metadata\":{\"name\":\"a\"},\"data\":{\"k\":\"v\"}}";
    const char *coll = "/api/v1/namespaces/default/configmaps";
    json_object *o =
        send_req(f, (rq){ .method = "POST", .path = coll, .ct = "application/json", .body = cm },
                 NULL, &code);
    assert_int_equal(code, 201);
    assert_string_equal(sget(o, "metadata.namespace"), "default");
    char rv[32];
    snprintf(rv, sizeof rv, "%s", sget(o, "metadata.resourceVersion"));
    json_object_put(o);

    o = send_req(f, (rq){ .method = "POST", .path = coll, .body = cm }, NULL, &code);
    expect_status(o, 409, "AlreadyExists", "\"a\" already exists");
    json_object_put(o);

    o = send_req(f,
                 (rq){ .method = "POST", .path = "/api/v1/namespaces/nope/configmaps", .body = cm },
                 NULL, &code);
    expect_status(o, 404, "NotFound", "namespaces \"nope\" not found");
    json_object_put(o);

    o = send_req(f, (rq){ .method = "POST", .path = coll, .body = "{\"kind\":" }, NULL, &code);
    expect_status(o, 400, "BadRequest", NULL);
    json_object_put(o);

    const char *wrong = "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"a\"}}";
    o = send_req(f, (rq){ .method = "POST", .path = coll, .body = wrong }, NULL, &code);
    expect_status(o, 400, "BadRequest", "does not match the expected kind");
    json_object_put(o);

    /* merge patch, then a stale PUT */
    o = send_req(f,
                 (rq){ .method = "PATCH",
                       .path = "/api/v1/namespaces/default/configmaps/a",
                       .ct = "application/merge-patch+json",
                       .body = "{\"data\":{\"k\":\"w\"}}" },
                 NULL, &code);
    assert_int_equal(code, 200);
    assert_string_equal(sget(o, "data.k"), "w");
    json_object_put(o);
    char put[256];
    snprintf(put, sizeof put,
             "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\","
             "\"resourceVersion\":\"%s\"},\"data\":{\"k\":\"stale\"}}",
             rv);
    o = send_req(
        f, (rq){ .method = "PUT", .path = "/api/v1/namespaces/default/configmaps/a", .body = put },
        NULL, &code);
    expect_status(o, 409, "Conflict", "the object has been modified");
    json_object_put(o);

    /* JSON patch and strategic merge patch */
    o = send_req(f,
                 (rq){ .method = "PATCH",
                       .path = "/api/v1/namespaces/default/configmaps/a",
                       .ct = "application/json-patch+json",
                       .body = "[{\"op\":\"add\",\"path\":\"/data/j\",\"value\":\"x\"}]" },
                 NULL, &code);
    assert_int_equal(code, 200);
    assert_string_equal(sget(o, "data.j"), "x");
    json_object_put(o);
    o = send_req(f,
                 (rq){ .method = "PATCH",
                       .path = "/api/v1/namespaces/default/configmaps/a",
                       .ct = "application/strategic-merge-patch+json",
                       .body = "{\"data\":{\"s\":\"y\"}}" },
                 NULL, &code);
    assert_int_equal(code, 200);
    assert_string_equal(sget(o, "data.s"), "y");
    assert_string_equal(sget(o, "data.j"), "x");
    json_object_put(o);

    o = send_req(f,
                 (rq){ .method = "PATCH",
                       .path = "/api/v1/namespaces/default/configmaps/a",
                       .ct = "text/plain",
                       .body = "x" },
                 NULL, &code);
    expect_status(o, 415, "UnsupportedMediaType", "application/merge-patch+json");
    json_object_put(o);

    o = send_req(f, (rq){ .method = "PUT", .path = coll, .body = cm }, NULL, &code);
    expect_status(o, 405, "MethodNotAllowed", NULL);
    json_object_put(o);

    /* server-side apply creates when missing */
    const char *applied =
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\ndata:\n  x: \"1\"\n";
    o = send_req(f,
                 (rq){ .method = "PATCH",
                       .path = "/api/v1/namespaces/default/configmaps/b",
                       .ct = "application/apply-patch+yaml",
                       .body = applied,
                       .args = { "fieldManager", "kubectl" } },
                 NULL, &code);
    assert_int_equal(code, 201);
    assert_string_equal(sget(o, "data.x"), "1");
    json_object_put(o);

    /* Table output */
    cu_api_resp keep;
    o = send_req(f,
                 (rq){ .method = "GET",
                       .path = coll,
                       .accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json" },
                 &keep, &code);
    assert_int_equal(code, 200);
    assert_non_null(strstr(keep.content_type, "as=Table"));
    cu_api_resp_free(&keep);
    assert_string_equal(sget(o, "kind"), "Table");
    assert_int_equal(json_object_array_length(get(o, "rows")), 2);
    json_object_put(o);

    /* delete, then 404 */
    o = send_req(f, (rq){ .method = "DELETE", .path = "/api/v1/namespaces/default/configmaps/a" },
                 NULL, &code);
    assert_int_equal(code, 200);
    json_object_put(o);
    o = send_req(f, (rq){ .method = "GET", .path = "/api/v1/namespaces/default/configmaps/a" },
                 NULL, &code);
    expect_status(o, 404, "NotFound", "configmaps \"a\" not found");
    json_object_put(o);

    o = send_req(f, (rq){ .method = "GET", .path = "/api/v1/namespaces/default/nothings" }, NULL,
                 &code);
    expect_status(o, 404, "NotFound", "the server could not find the requested resource");
    json_object_put(o);
}

/* DELETE answers as kube-apiserver's registries do: a Success Status once
 * the object is gone (also for dryRun), the object while finalizers keep
 * it, and always the object for Pods (with its deletionTimestamp). */
static void test_delete_answers(void **state)
{
    fx *f = *state;
    int code;
    const char *coll = "/api/v1/namespaces/default/configmaps";
    json_object *o = send_req(
        f, (rq){ .method = "POST", .path = coll, .body = "{\"metadata\":{\"name\":\"gone\"}}" },
        NULL, &code);
    assert_int_equal(code, 201);
    char uid[64];
    snprintf(uid, sizeof uid, "%s", sget(o, "metadata.uid"));
    json_object_put(o);
    o = send_req(f,
                 (rq){ .method = "DELETE",
                       .path = "/api/v1/namespaces/default/configmaps/gone",
                       .args = { "dryRun", "All", NULL } },
                 NULL, &code);
    assert_int_equal(code, 200);
    assert_string_equal(sget(o, "kind"), "Status");
    json_object_put(o);
    o = send_req(f,
                 (rq){ .method = "DELETE", .path = "/api/v1/namespaces/default/configmaps/gone" },
                 NULL, &code);
    assert_int_equal(code, 200);
    assert_string_equal(sget(o, "kind"), "Status");
    assert_string_equal(sget(o, "status"), "Success");
    assert_string_equal(sget(o, "details.name"), "gone");
    assert_string_equal(sget(o, "details.kind"), "configmaps");
    assert_string_equal(sget(o, "details.uid"), uid);
    assert_null(get(get(o, "details"), "group"));
    json_object_put(o);

    json_object_put(
        send_req(f,
                 (rq){ .method = "POST",
                       .path = coll,
                       .body = "{\"metadata\":{\"name\":\"held\",\"finalizers\":[\"a.io/f\"]}}" },
                 NULL, &code));
    assert_int_equal(code, 201);
    o = send_req(f,
                 (rq){ .method = "DELETE", .path = "/api/v1/namespaces/default/configmaps/held" },
                 NULL, &code);
    assert_int_equal(code, 200);
    assert_string_equal(sget(o, "kind"), "ConfigMap");
    assert_non_null(sget(o, "metadata.deletionTimestamp"));
    json_object_put(o);

    json_object_put(send_req(f,
                             (rq){ .method = "POST",
                                   .path = "/api/v1/namespaces/default/pods",
                                   .body = "{\"metadata\":{\"name\":\"p\"},\"spec\":{"
                                           "\"schedulerName\":\"none\",\"containers\":[{"
                                           "\"name\":\"c\",\"image\":\"i\"}]}}" },
                             NULL, &code));
    assert_int_equal(code, 201);
    o = send_req(f,
                 (rq){ .method = "DELETE",
                       .path = "/api/v1/namespaces/default/pods/p",
                       .args = { "gracePeriodSeconds", "0", NULL } },
                 NULL, &code);
    assert_int_equal(code, 200);
    assert_string_equal(sget(o, "kind"), "Pod");
    assert_non_null(sget(o, "metadata.deletionTimestamp"));
    assert_int_equal(json_object_get_int(get(get(o, "metadata"), "deletionGracePeriodSeconds")), 0);
    json_object_put(o);
}

/* Built-in kinds drop empty maps and lists (Go's omitempty in
 * kube-apiserver), also from the managedFields; custom resources keep
 * them. */
static void test_builtin_empty_maps(void **state)
{
    fx *f = *state;
    int code;
    json_object *o =
        send_req(f,
                 (rq){ .method = "POST",
                       .path = "/api/v1/namespaces/default/configmaps",
                       .body = "{\"metadata\":{\"name\":\"e\",\"labels\":{},\"finalizers\":[]},"
                               "\"data\":{}}" },
                 NULL, &code);
    assert_int_equal(code, 201);
    assert_null(get(o, "data"));
    assert_null(get(get(o, "metadata"), "labels"));
    assert_null(get(get(o, "metadata"), "finalizers"));
    const char *mf = json_object_to_json_string(get(get(o, "metadata"), "managedFields"));
    assert_null(strstr(mf, "f:labels"));
    assert_null(strstr(mf, "f:data"));
    json_object_put(o);
    o = send_req(f,
                 (rq){ .method = "PATCH",
                       .path = "/api/v1/namespaces/default/configmaps/e",
                       .ct = "application/merge-patch+json",
                       .body = "{\"data\":{\"a\":\"1\"}}" },
                 NULL, &code);
    assert_int_equal(code, 200);
    json_object_put(o);
    o = send_req(f,
                 (rq){ .method = "PATCH",
                       .path = "/api/v1/namespaces/default/configmaps/e",
                       .ct = "application/merge-patch+json",
                       .body = "{\"data\":{\"a\":null}}" },
                 NULL, &code);
    assert_int_equal(code, 200);
    assert_null(get(o, "data"));
    json_object_put(o);
    /* dryRun other than All is refused, and nothing is stored */
    o = send_req(f,
                 (rq){ .method = "POST",
                       .path = "/api/v1/namespaces/default/configmaps",
                       .args = { "dryRun", "Yes", NULL },
                       .body = "{\"metadata\":{\"name\":\"dry\"}}" },
                 NULL, &code);
    expect_status(o, 422, "Invalid", "CreateOptions.meta.k8s.io \"\" is invalid: dryRun");
    json_object_put(o);
    o = send_req(f, (rq){ .method = "GET", .path = "/api/v1/namespaces/default/configmaps/dry" },
                 NULL, &code);
    assert_int_equal(code, 404);
    json_object_put(o);
}

static void test_auth(void **state)
{
    fx *f = *state;
    int code;
    json_object *o =
        send_req(f, (rq){ .method = "GET", .path = "/api/v1/namespaces" }, NULL, &code);
    expect_status(o, 401, "Unauthorized", "Unauthorized");
    json_object_put(o);
    o = send_req(f, (rq){ .method = "GET", .path = "/api/v1/namespaces", .auth = "Bearer wrong" },
                 NULL, &code);
    assert_int_equal(code, 401);
    json_object_put(o);
    o = send_req(f,
                 (rq){ .method = "GET", .path = "/api/v1/namespaces", .auth = "Bearer secret-1" },
                 NULL, &code);
    assert_int_equal(code, 200);
    json_object_put(o);
    o = send_req(f,
                 (rq){ .method = "GET", .path = "/api/v1/namespaces", .auth = "Bearer secret-2" },
                 NULL, &code);
    assert_int_equal(code, 200);
    json_object_put(o);
    cu_api_resp keep;
    send_req(f, (rq){ .method = "GET", .path = "/healthz" }, &keep, &code);
    assert_int_equal(code, 200);
    assert_string_equal(keep.body, "ok");
    cu_api_resp_free(&keep);
    /* the fault endpoint is not served without --admin */
    o = send_req(f, (rq){ .method = "GET", .path = "/cueue/faults", .auth = "Bearer secret-1" },
                 NULL, &code);
    assert_int_equal(code, 404);
    json_object_put(o);
}

static void test_faults(void **state)
{
    fx *f = *state;
    int code;
    cu_api_resp keep;
    const char *path = "/api/v1/namespaces/default/configmaps";
    json_object *o = send_req(f,
                              (rq){ .method = "POST",
                                    .path = "/cueue/faults",
                                    .body = "{\"respond\":{\"match\":\"^GET .*/configmaps$\","
                                            "\"code\":429,\"times\":2,\"retryAfter\":3}}" },
                              NULL, &code);
    assert_int_equal(code, 200);
    assert_int_equal(json_object_array_length(get(o, "faults")), 1);
    json_object_put(o);
    for (int i = 0; i < 2; i++) {
        o = send_req(f, (rq){ .method = "GET", .path = path }, &keep, &code);
        expect_status(o, 429, "TooManyRequests", NULL);
        assert_int_equal(keep.retry_after, 3);
        assert_int_equal(json_object_get_int(get(get(o, "details"), "retryAfterSeconds")), 3);
        cu_api_resp_free(&keep);
        json_object_put(o);
    }
    o = send_req(f, (rq){ .method = "GET", .path = path }, NULL, &code);
    assert_int_equal(code, 200); /* used up */
    json_object_put(o);
    /* a POST does not match a GET rule */
    o = send_req(f,
                 (rq){ .method = "POST",
                       .path = "/cueue/faults",
                       .body = "{\"respond\":{\"match\":\"^GET \",\"code\":500,\"times\":-1}}" },
                 NULL, &code);
    json_object_put(o);
    o = send_req(f, (rq){ .method = "GET", .path = "/api/v1/nodes" }, NULL, &code);
    expect_status(o, 500, "InternalError", "injected");
    json_object_put(o);
    o = send_req(f, (rq){ .method = "DELETE", .path = "/cueue/faults" }, NULL, &code);
    assert_int_equal(json_object_array_length(get(o, "faults")), 0);
    json_object_put(o);
    o = send_req(f, (rq){ .method = "GET", .path = "/api/v1/nodes" }, NULL, &code);
    assert_int_equal(code, 200);
    json_object_put(o);
    /* bad commands and remote clients */
    o = send_req(f,
                 (rq){ .method = "POST",
                       .path = "/cueue/faults",
                       .body = "{\"respond\":{\"match\":\"(\",\"code\":409}}" },
                 NULL, &code);
    expect_status(o, 400, "BadRequest", "regex");
    json_object_put(o);
    o = send_req(
        f,
        (rq){ .method = "POST", .path = "/cueue/faults", .body = "{\"respond\":{\"code\":404}}" },
        NULL, &code);
    expect_status(o, 400, "BadRequest", "respond.code");
    json_object_put(o);
    o = send_req(f, (rq){ .method = "POST", .path = "/cueue/faults", .body = "{\"frobnicate\":1}" },
                 NULL, &code);
    expect_status(o, 400, "BadRequest", "unknown fault command");
    json_object_put(o);
    o = send_req(f, (rq){ .method = "GET", .path = "/cueue/faults", .remote = 1 }, NULL, &code);
    expect_status(o, 403, "Forbidden", "127.0.0.1");
    json_object_put(o);
}

static void test_watch_table(void **state)
{
    fx *f = *state;
    int code, ended = 0;
    cu_api_resp w;
    json_object *o = send_req(f,
                              (rq){ .method = "GET",
                                    .path = "/api/v1/namespaces/default/configmaps",
                                    .accept = "application/json;as=Table;v=v1;g=meta.k8s.io",
                                    .args = { "watch", "true", "resourceVersion", "0" } },
                              &w, &code);
    assert_null(o);
    assert_int_equal(code, 200);
    assert_non_null(w.watch);
    assert_null(cu_api_watch_next(&w, 50, &ended)); /* nothing yet */
    assert_int_equal(ended, 0);
    for (int i = 0; i < 2; i++) {
        char body[200];
        snprintf(body, sizeof body,
                 "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
                 "\"metadata\":{\"name\":\"w%d\"}}",
                 i);
        o = send_req(
            f,
            (rq){ .method = "POST", .path = "/api/v1/namespaces/default/configmaps", .body = body },
            NULL, &code);
        assert_int_equal(code, 201);
        json_object_put(o);
    }
    for (int i = 0; i < 2; i++) {
        char *line = cu_api_watch_next(&w, 2000, &ended);
        assert_non_null(line);
        json_object *ev = json_tokener_parse(line);
        free(line);
        assert_string_equal(sget(ev, "type"), "ADDED");
        json_object *t = get(ev, "object");
        assert_string_equal(sget(t, "kind"), "Table");
        assert_int_equal(json_object_array_length(get(t, "columnDefinitions")), i == 0 ? 3 : 0);
        char want[8];
        snprintf(want, sizeof want, "w%d", i);
        assert_string_equal(cell_str(json_object_array_get_idx(get(t, "rows"), 0), 0), want);
        json_object_put(ev);
    }
    cu_store_drop_watches(f->s);
    assert_null(cu_api_watch_next(&w, 2000, &ended));
    assert_int_equal(ended, 1);
    cu_api_resp_free(&w);

    /* a watch from a compacted resourceVersion: 410 at open */
    cu_store_compact(f->s);
    o = send_req(f,
                 (rq){ .method = "GET",
                       .path = "/api/v1/namespaces/default/configmaps",
                       .args = { "watch", "1", "resourceVersion", "1" } },
                 NULL, &code);
    expect_status(o, 410, "Expired", NULL); /* kube-apiserver's reason for a too old RV */
    json_object_put(o);
}

/* A deprecated CRD version: every request to it carries kube-apiserver's
 * warning, its own deprecationWarning or "GROUP/V KIND is deprecated; use
 * GROUP/NEWER KIND" (the highest served version above it that is not
 * deprecated); the other versions none. */
static void test_deprecated_crd_version(void **state)
{
    fx *f = *state;
    int code;
    const char *crd =
        "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
        "\"metadata\":{\"name\":\"gadgets.example.com\"},\"spec\":{\"group\":\"example.com\","
        "\"scope\":\"Cluster\",\"names\":{\"plural\":\"gadgets\",\"singular\":\"gadget\","
        "\"kind\":\"Gadget\",\"listKind\":\"GadgetList\"},\"versions\":["
        "{\"name\":\"v1alpha1\",\"served\":true,\"storage\":false,\"deprecated\":true,"
        "\"deprecationWarning\":\"alpha gadgets go away\",\"schema\":{\"openAPIV3Schema\":"
        "{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true}}},"
        "{\"name\":\"v1beta1\",\"served\":true,\"storage\":false,\"deprecated\":true,"
        "\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\","
        "\"x-kubernetes-preserve-unknown-fields\":true}}},"
        "{\"name\":\"v1beta2\",\"served\":true,\"storage\":true,\"schema\":{"
        "\"openAPIV3Schema\":{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true}}},"
        "{\"name\":\"v1\",\"served\":false,\"storage\":false,\"schema\":{"
        "\"openAPIV3Schema\":{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true}}}"
        "]}}";
    json_object *o =
        send_req(f,
                 (rq){ .method = "POST",
                       .path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                       .body = crd },
                 NULL, &code);
    assert_int_equal(code, 201);
    json_object_put(o);
    static const struct {
        const char *version, *warning;
    } want[] = {
        { "v1beta1", "299 - \"example.com/v1beta1 Gadget is deprecated; use example.com/v1beta2 "
                     "Gadget\"" },
        { "v1alpha1", "299 - \"alpha gadgets go away\"" },
        { "v1beta2", NULL },
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        char path[128];
        snprintf(path, sizeof path, "/apis/example.com/%s/gadgets", want[i].version);
        cu_api_resp keep;
        o = send_req(f, (rq){ .method = "GET", .path = path }, &keep, &code);
        assert_int_equal(code, 200);
        if (want[i].warning) {
            assert_non_null(keep.warning);
            assert_string_equal(keep.warning, want[i].warning);
        } else {
            assert_null(keep.warning);
        }
        cu_api_resp_free(&keep);
        json_object_put(o);
    }
}

static void test_strict_crd(void **state)
{
    fx *f = *state;
    int code;
    const char *crd =
        "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
        "\"metadata\":{\"name\":\"widgets.example.com\"},\"spec\":{\"group\":\"example.com\","
        "\"scope\":\"Namespaced\",\"names\":{\"plural\":\"widgets\",\"singular\":\"widget\","
        "\"kind\":\"Widget\",\"listKind\":\"WidgetList\",\"shortNames\":[\"wd\"]},"
        "\"versions\":[{\"name\":\"v1\",\"served\":true,\"storage\":true,"
        "\"subresources\":{\"status\":{}},"
        "\"additionalPrinterColumns\":[{\"name\":\"Size\",\"type\":\"integer\",\"jsonPath\":\".spec.size\"}],"
        "\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\",\"properties\":{"
        "\"spec\":{\"type\":\"object\",\"properties\":{\"size\":{\"type\":\"integer\",\"maximum\":10}}},"
        "\"status\":{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true}}}}}]}}";
    json_object *o =
        send_req(f,
                 (rq){ .method = "POST",
                       .path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                       .body = crd },
                 NULL, &code);
    assert_int_equal(code, 201);
    json_object_put(o);
    o = send_req(f, (rq){ .method = "GET", .path = "/apis/example.com/v1" }, NULL, &code);
    assert_int_equal(code, 200);
    assert_non_null(strstr(json_object_to_json_string_ext(o, JSON_C_TO_STRING_NOSLASHESCAPE),
                           "\"widgets/status\""));
    json_object_put(o);
    const char *bad = "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\","
                      "\"metadata\":{\"name\":\"w\"},\"spec\":{\"size\":1,\"foo\":2}}";
    const char *path = "/apis/example.com/v1/namespaces/default/widgets";
    o = send_req(
        f,
        (rq){
            .method = "POST", .path = path, .body = bad, .args = { "fieldValidation", "Strict" } },
        NULL, &code);
    expect_status(o, 400, "BadRequest", "strict decoding error: unknown field \"spec.foo\"");
    json_object_put(o);
    cu_api_resp keep;
    o = send_req(
        f,
        (rq){ .method = "POST", .path = path, .body = bad, .args = { "fieldValidation", "Warn" } },
        &keep, &code);
    assert_int_equal(code, 201);
    assert_non_null(keep.warning);
    assert_non_null(strstr(keep.warning, "unknown field \\\"spec.foo\\\""));
    cu_api_resp_free(&keep);
    json_object_put(o);
    /* strategic merge patch is refused for custom resources */
    o = send_req(f,
                 (rq){ .method = "PATCH",
                       .path = "/apis/example.com/v1/namespaces/default/widgets/w",
                       .ct = "application/strategic-merge-patch+json",
                       .body = "{}" },
                 NULL, &code);
    expect_status(o, 415, "UnsupportedMediaType", NULL);
    json_object_put(o);
    /* dryRun=All validates without storing */
    const char *big = "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\","
                      "\"metadata\":{\"name\":\"big\"},\"spec\":{\"size\":11}}";
    o = send_req(f,
                 (rq){ .method = "POST", .path = path, .body = big, .args = { "dryRun", "All" } },
                 NULL, &code);
    expect_status(o, 422, "Invalid", "spec.size");
    json_object_put(o);
    const char *ok = "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\","
                     "\"metadata\":{\"name\":\"dry\"},\"spec\":{\"size\":3}}";
    o = send_req(f, (rq){ .method = "POST", .path = path, .body = ok, .args = { "dryRun", "All" } },
                 NULL, &code);
    assert_int_equal(code, 201);
    json_object_put(o);
    o = send_req(
        f, (rq){ .method = "GET", .path = "/apis/example.com/v1/namespaces/default/widgets/dry" },
        NULL, &code);
    assert_int_equal(code, 404);
    json_object_put(o);
}

/* Issue 10: hostile input on every write path is refused, the stored
 * object untouched, the server alive (C1, C2, A1-A4). */
static void test_hostile_input(void **state)
{
    fx *f = *state;
    int code;
    const char *coll = "/api/v1/namespaces/default/configmaps";
    const char *c1 = "/api/v1/namespaces/default/configmaps/c1";
    json_object *o =
        send_req(f,
                 (rq){ .method = "POST",
                       .path = coll,
                       .ct = "application/json",
                       .body = "{\"metadata\":{\"name\":\"c1\",\"labels\":{\"a\":\"b\"},"
                               "\"finalizers\":[\"example.com/f\"]},\"data\":{\"k\":\"v\"}}" },
                 NULL, &code);
    assert_int_equal(code, 201);
    char before[4096];
    snprintf(before, sizeof before, "%s", json_object_to_json_string(o));
    json_object_put(o);
    static const struct {
        const char *ct, *body, *args[4];
        int code;
        const char *msg;
    } bad[] = {
        { "application/merge-patch+json",
          "{\"metadata\":5}",
          { NULL },
          422,
          "metadata in body must be of type object" },
        { "application/strategic-merge-patch+json",
          "{\"metadata\":5}",
          { NULL },
          422,
          "must be of type object" },
        { "application/json-patch+json",
          "[{\"op\":\"add\",\"path\":\"\",\"value\":[1]}]",
          { NULL },
          422,
          "must be of type object" },
        { "application/json-patch+json",
          "[{\"op\":\"replace\",\"path\":\"\",\"value\":5}]",
          { NULL },
          422,
          "must be of type object" },
        { "application/json-patch+json",
          "[{\"op\":\"add\",\"path\":\"/metadata\",\"value\":\"str\"}]",
          { NULL },
          422,
          "must be of type object" },
        { "application/json-patch+json",
          "[{\"op\":\"add\",\"path\":\"\",\"value\":{}}]",
          { NULL },
          422,
          "metadata.name: Required value" },
        { "application/json-patch+json",
          "[{\"op\":\"remove\",\"path\":\"/metadata\"}]",
          { NULL },
          422,
          "metadata.name: Required value" },
        { "application/json-patch+json",
          "[{\"op\":\"remove\",\"path\":\"/metadata/uid\"}]",
          { NULL },
          422,
          "metadata.uid: Invalid value: \"\": field is immutable" },
        { "application/merge-patch+json",
          "{\"metadata\":{\"name\":\"other\"}}",
          { NULL },
          400,
          "does not match the name on the URL" },
        { "application/apply-patch+yaml",
          "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":5}",
          { "fieldManager", "t", NULL },
          422,
          "must be of type object" },
        { "application/merge-patch+json",
          "{\"metadata\":{\"labels\":5}}",
          { NULL },
          422,
          "metadata.labels: Invalid value" },
        { "application/merge-patch+json",
          "{\"metadata\":{\"labels\":{\"q\":\"../../x\"}}}",
          { NULL },
          422,
          "a valid label must be" },
        { "application/merge-patch+json",
          "{\"metadata\":{\"annotations\":[1]}}",
          { NULL },
          422,
          "metadata.annotations" },
        { "application/merge-patch+json",
          "{\"metadata\":{\"finalizers\":\"x\"}}",
          { NULL },
          422,
          "metadata.finalizers" },
        { "application/merge-patch+json",
          "{\"metadata\":{\"ownerReferences\":[5]}}",
          { NULL },
          422,
          "metadata.ownerReferences[0]" },
        { "application/merge-patch+json",
          "{\"data\":\"str\"}",
          { NULL },
          422,
          "data in body must be of type object" },
        { "application/merge-patch+json",
          "{\"data\":{\"a\\u0000x\":\"1\"}}",
          { NULL },
          400,
          "NUL" },
        { "application/merge-patch+json", "{\"data\":{\"n\":1e400}}", { NULL }, 400, "float64" },
        { "application/apply-patch+yaml",
          "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c1\",\"labels\":{\"a\":\"-\"}}}",
          { "fieldManager", "t", NULL },
          422,
          "a valid label must be" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        o = send_req(f,
                     (rq){ .method = "PATCH",
                           .path = c1,
                           .ct = bad[i].ct,
                           .body = bad[i].body,
                           .args = { bad[i].args[0], bad[i].args[1], NULL } },
                     NULL, &code);
        if (code != bad[i].code)
            fail_msg("patch %zu %s: code %d, want %d: %s", i, bad[i].body, code, bad[i].code,
                     json_object_to_json_string(o));
        expect_status(o, bad[i].code, bad[i].code == 400 ? "BadRequest" : "Invalid", bad[i].msg);
        json_object_put(o);
    }
    o = send_req(f, (rq){ .method = "GET", .path = c1 }, NULL, &code);
    assert_int_equal(code, 200);
    assert_string_equal(json_object_to_json_string(o), before);
    json_object_put(o);

    /* a PUT of the same: 422 with causes, nothing stored */
    char put[512];
    snprintf(put, sizeof put,
             "{\"metadata\":{\"name\":\"c1\",\"labels\":5,\"deletionTimestamp\":\"garbage\"}}");
    o = send_req(f, (rq){ .method = "PUT", .path = c1, .body = put }, NULL, &code);
    expect_status(o, 422, "Invalid", "ConfigMap \"c1\" is invalid");
    json_object *causes = get(get(o, "details"), "causes");
    assert_int_equal(json_object_array_length(causes), 2);
    assert_string_equal(sget(json_object_array_get_idx(causes, 0), "field"),
                        "metadata.deletionTimestamp");
    assert_string_equal(sget(json_object_array_get_idx(causes, 1), "field"), "metadata.labels");
    json_object_put(o);

    /* integer query parameters */
    static const char *const qs[][2] = { { "limit", "99999999999999999999" },
                                         { "limit", "x" },
                                         { "timeoutSeconds", "99999999999999999999" } };
    for (size_t i = 0; i < 3; i++) {
        o = send_req(f,
                     (rq){ .method = "GET",
                           .path = coll,
                           .args = { "watch", "true", qs[i][0], qs[i][1], NULL } },
                     NULL, &code);
        expect_status(o, 400, "BadRequest", qs[i][0]);
        json_object_put(o);
    }
    static const char *const delbodies[] = { "[1]", "{\"propagationPolicy\":", "{\"a\\u0000\":1}" };
    for (size_t i = 0; i < 3; i++) {
        o = send_req(f, (rq){ .method = "DELETE", .path = c1, .body = delbodies[i] }, NULL, &code);
        expect_status(o, 400, "BadRequest", "DeleteOptions");
        json_object_put(o);
    }
    o = send_req(
        f, (rq){ .method = "DELETE", .path = c1, .args = { "gracePeriodSeconds", "1.5", NULL } },
        NULL, &code);
    expect_status(o, 400, "BadRequest", "gracePeriodSeconds");
    json_object_put(o);

    /* NUL in names: refused, never truncated */
    o = send_req(
        f,
        (rq){ .method = "POST", .path = coll, .body = "{\"metadata\":{\"name\":\"a\\u0000b\"}}" },
        NULL, &code);
    expect_status(o, 422, "Invalid", "metadata.name: Invalid value");
    json_object_put(o);
    o = send_req(f,
                 (rq){ .method = "POST",
                       .path = "/api/v1/namespaces",
                       .body = "{\"metadata\":{\"name\":\"kube\\u0000x\"}}" },
                 NULL, &code);
    expect_status(o, 422, "Invalid", "metadata.name: Invalid value");
    json_object_put(o);
    o = send_req(f,
                 (rq){ .method = "POST", .path = coll, .body = "{\"metadata\":{\"name\":\"a\"}}" },
                 NULL, &code);
    assert_int_equal(code, 201);
    json_object_put(o);
}

/* ---- updates of deep objects (issue 10 H3 follow-up) ---- */

/* a Job whose pod spec holds a field nested n objects deep
 * ({"d":{"d":...1...}}): its managedFields are as deep as the field */
static char *deep_job_body(const char *name, int n)
{
    size_t cap = (size_t)n * 6 + 1024;
    char *b = malloc(cap), *p = b;
    p += sprintf(p,
                 "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"%s\"},"
                 "\"spec\":{\"suspend\":true,\"template\":{\"spec\":{\"restartPolicy\":\"Never\","
                 "\"containers\":[{\"name\":\"main\",\"image\":\"busybox\"}],\"deepField\":",
                 name);
    for (int i = 0; i < n; i++)
        p += sprintf(p, "{\"d\":");
    *p++ = '1';
    for (int i = 0; i < n; i++)
        *p++ = '}';
    sprintf(p, "}}}}");
    return b;
}

typedef struct deep_args {
    fx *f;
    int depth;
    int codes[12];
} deep_args;

static int deep_send(fx *f, const char *method, const char *path, const char *ct, const char *body,
                     const char *fm)
{
    cu_api_resp resp;
    int apply = ct && strstr(ct, "apply");
    const char *args[4] = { "fieldManager", fm, apply ? "force" : NULL, apply ? "true" : NULL };
    cu_api_req r = { method, path, args, fm ? (size_t)(1 + apply) : 0, NULL,
                     ct,     NULL, body, body ? strlen(body) : 0,      1,
                     NULL };
    cu_apiserver_handle(f->a, &r, &resp);
    int code = resp.code;
    if (code >= 300)
        fprintf(stderr, "%s %s (%s): %d %.300s\n", method, path, ct ? ct : "-", code,
                resp.body ? resp.body : "");
    cu_api_resp_free(&resp);
    return code;
}

/* every write path on a deep Job: those the controller uses (status merge
 * patch, strategic patch unsuspending it) and the others */
static void *deep_updates(void *ud)
{
    deep_args *a = ud;
    char name[32], path[96], spath[128];
    snprintf(name, sizeof name, "deep%d", a->depth);
    snprintf(path, sizeof path, "/apis/batch/v1/namespaces/default/jobs/%s", name);
    snprintf(spath, sizeof spath, "%s/status", path);
    char *body = deep_job_body(name, a->depth);
    int i = 0;
    a->codes[i++] = deep_send(a->f, "POST", "/apis/batch/v1/namespaces/default/jobs",
                              "application/json", body, NULL);
    a->codes[i++] = deep_send(a->f, "PATCH", path, "application/apply-patch+yaml", body, "applier");
    a->codes[i++] = deep_send(a->f, "PUT", path, "application/json", body, NULL);
    a->codes[i++] =
        deep_send(a->f, "PATCH", path, "application/json-patch+json",
                  "[{\"op\":\"add\",\"path\":\"/metadata/labels\",\"value\":{\"j\":\"p\"}}]", NULL);
    a->codes[i++] = deep_send(a->f, "PATCH", path, "application/merge-patch+json",
                              "{\"metadata\":{\"labels\":{\"m\":\"p\"}}}", NULL);
    /* a strategic patch as deep as the object */
    char *sp = deep_job_body(name, a->depth);
    a->codes[i++] =
        deep_send(a->f, "PATCH", path, "application/strategic-merge-patch+json", sp, NULL);
    free(sp);
    /* a JSON patch at the bottom of the deep field */
    size_t plen = (size_t)a->depth * 2 + 256;
    char *jp = malloc(plen), *w = jp;
    w += sprintf(w, "[{\"op\":\"replace\",\"path\":\"/spec/template/spec/deepField");
    for (int k = 0; k < a->depth; k++)
        w += sprintf(w, "/d");
    sprintf(w, "\",\"value\":2}]");
    a->codes[i++] = deep_send(a->f, "PATCH", path, "application/json-patch+json", jp, NULL);
    free(jp);
    /* the controller's writes: status, then unsuspending the Job */
    a->codes[i++] = deep_send(a->f, "PATCH", spath, "application/merge-patch+json",
                              "{\"status\":{\"active\":1}}", "ctrl");
    a->codes[i++] = deep_send(a->f, "PATCH", path, "application/strategic-merge-patch+json",
                              "{\"spec\":{\"suspend\":false}}", "ctrl");
    free(body);
    return NULL;
}

static void test_deep_updates(void **state)
{
    fx *f = *state;
    /* 100 levels (the controller's hostile e2e), and nearly
     * CU_JSON_MAX_DEPTH, on a stack like a connection thread's */
    int depths[] = { 100, CU_JSON_MAX_DEPTH - 20 };
    for (size_t d = 0; d < 2; d++) {
        deep_args a = { f, depths[d], { 0 } };
        pthread_attr_t at;
        pthread_attr_init(&at);
        pthread_attr_setstacksize(&at, (size_t)64 << 20);
        pthread_t th;
        assert_int_equal(pthread_create(&th, &at, deep_updates, &a), 0);
        pthread_join(th, NULL);
        pthread_attr_destroy(&at);
        static const int want[] = { 201, 200, 200, 200, 200, 200, 200, 200, 200 };
        for (size_t i = 0; i < sizeof want / sizeof *want; i++)
            if (a.codes[i] != want[i])
                fail_msg("depth %d, request %zu: code %d, want %d", a.depth, i, a.codes[i],
                         want[i]);
    }
    /* the Job is unsuspended and its status written */
    cu_api_resp resp;
    int code;
    json_object_put(send_req(
        f, (rq){ .method = "GET", .path = "/apis/batch/v1/namespaces/default/jobs/deep100" }, &resp,
        &code));
    assert_int_equal(code, 200);
    json_object *o = cu_json_parse_str(resp.body);
    cu_api_resp_free(&resp);
    assert_non_null(o);
    assert_false(json_object_get_boolean(get(get(o, "spec"), "suspend")));
    assert_int_equal(json_object_get_int(get(get(o, "status"), "active")), 1);
    json_object_put(o);
}

/* The aggregation layer's discovery: the group of an APIService with a
 * service is listed in /apis and served at /apis/GROUP; a local one
 * (no service) adds nothing; the kinds it needs are served. */
static void test_apiservice_discovery(void **state)
{
    fx *f = *state;
    int code = 0;
    const char *svc = "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":"
                      "\"vis\"},\"spec\":{\"type\":\"ExternalName\",\"externalName\":"
                      "\"localhost\",\"ports\":[{\"name\":\"https\",\"port\":8082}]}}";
    json_object *o = send_req(
        f, (rq){ .method = "POST", .path = "/api/v1/namespaces/default/services", .body = svc },
        NULL, &code);
    assert_int_equal(code, 201);
    json_object_put(o);
    const char *as = "{\"apiVersion\":\"apiregistration.k8s.io/v1\",\"kind\":\"APIService\","
                     "\"metadata\":{\"name\":\"v1beta2.visibility.kueue.x-k8s.io\"},\"spec\":{"
                     "\"group\":\"visibility.kueue.x-k8s.io\",\"version\":\"v1beta2\","
                     "\"service\":{\"namespace\":\"default\",\"name\":\"vis\",\"port\":8082}}}";
    const char *local = "{\"apiVersion\":\"apiregistration.k8s.io/v1\",\"kind\":\"APIService\","
                        "\"metadata\":{\"name\":\"v1.local.example\"},\"spec\":{"
                        "\"group\":\"local.example\",\"version\":\"v1\"}}";
    const char *bodies[] = { as, local };
    for (int i = 0; i < 2; i++) {
        o = send_req(f,
                     (rq){ .method = "POST",
                           .path = "/apis/apiregistration.k8s.io/v1/apiservices",
                           .body = bodies[i] },
                     NULL, &code);
        assert_int_equal(code, 201);
        json_object_put(o);
    }
    o = send_req(f, (rq){ .method = "GET", .path = "/apis" }, NULL, &code);
    assert_int_equal(code, 200);
    const char *text = json_object_to_json_string(o);
    assert_non_null(strstr(text, "\"groupVersion\": \"visibility.kueue.x-k8s.io\\/v1beta2\""));
    assert_null(strstr(text, "local.example"));
    json_object_put(o);
    o = send_req(f, (rq){ .method = "GET", .path = "/apis/visibility.kueue.x-k8s.io" }, NULL,
                 &code);
    assert_int_equal(code, 200);
    assert_string_equal(sget(o, "kind"), "APIGroup");
    assert_string_equal(sget(o, "preferredVersion.version"), "v1beta2");
    json_object_put(o);
    o = send_req(f, (rq){ .method = "GET", .path = "/apis/local.example" }, NULL, &code);
    assert_int_equal(code, 404);
    json_object_put(o);
    /* kubectl get apiservices: NAME, SERVICE (or Local), AVAILABLE, AGE */
    o = send_req(f,
                 (rq){ .method = "GET",
                       .path = "/apis/apiregistration.k8s.io/v1/apiservices",
                       .accept = "application/json;as=Table;v=v1;g=meta.k8s.io" },
                 NULL, &code);
    assert_int_equal(code, 200);
    json_object *rows = get(o, "rows");
    assert_int_equal(json_object_array_length(rows), 2);
    char cells[2][200];
    for (int i = 0; i < 2; i++) {
        json_object *c = get(json_object_array_get_idx(rows, (size_t)i), "cells");
        snprintf(cells[i], sizeof cells[i], "%s %s %s",
                 json_object_get_string(json_object_array_get_idx(c, 0)),
                 json_object_get_string(json_object_array_get_idx(c, 1)),
                 json_object_get_string(json_object_array_get_idx(c, 2)));
    }
    assert_string_equal(cells[0], "v1.local.example Local Unknown");
    assert_string_equal(cells[1], "v1beta2.visibility.kueue.x-k8s.io default/vis Unknown");
    json_object_put(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_route_parse),
        cmocka_unit_test(test_jsonpath),
        cmocka_unit_test(test_human_duration),
        cmocka_unit_test(test_table_crd_columns),
        cmocka_unit_test(test_table_builtins),
        cmocka_unit_test(test_yaml_to_json),
        cmocka_unit_test(test_base64),
        cmocka_unit_test(test_kubeconfig_write),
        cmocka_unit_test(test_tls_generate),
        cmocka_unit_test_setup_teardown(test_discovery, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_apiservice_discovery, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_crud_and_errors, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_delete_answers, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_builtin_empty_maps, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_auth, fx_setup_auth, fx_teardown),
        cmocka_unit_test_setup_teardown(test_faults, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_watch_table, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_strict_crd, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_deprecated_crd_version, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_hostile_input, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_deep_updates, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
