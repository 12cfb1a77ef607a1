/*
 * test_dev.c - `cueue dev` without starting a process: its flags and the
 * errors that stop it before anything starts, the manifest discovery
 * (folders in name order, hidden entries and other extensions skipped,
 * List items expanded, FILE:LINE of each object), the API path of an
 * object, and the wording of the admission lines.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cu_cli.h"
#include "cu_dev_int.h"

static char tmp[64];

static void put(const char *rel, const char *text)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", tmp, rel);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void sub(const char *rel)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", tmp, rel);
    assert_int_equal(mkdir(p, 0755), 0);
}

static int setup(void **st)
{
    (void)st;
    snprintf(tmp, sizeof tmp, "/tmp/cueue-test-dev-XXXXXX");
    if (!mkdtemp(tmp))
        return -1;
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    return system(cmd) == 0 ? 0 : -1;
}

static const char *name_of(const dev_obj *o)
{
    json_object *md = NULL, *n = NULL;
    json_object_object_get_ex(o->obj, "metadata", &md);
    json_object_object_get_ex(md, "name", &n);
    return json_object_get_string(n);
}

static void test_load_folder(void **st)
{
    (void)st;
    sub("m");
    sub("m/b-sub");
    sub("m/.hidden");
    put("m/c.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: c1}\n---\n"
                    "apiVersion: v1\nkind: Namespace\nmetadata: {name: c2}\n");
    put("m/a.json",
        "{\"apiVersion\": \"v1\", \"kind\": \"NamespaceList\", \"items\": ["
        "{\"apiVersion\": \"v1\", \"kind\": \"Namespace\", \"metadata\": {\"name\": \"a1\"}},"
        "{\"apiVersion\": \"v1\", \"kind\": \"Namespace\", \"metadata\": {\"name\": \"a2\"}}]}");
    put("m/b-sub/x.yml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: b1}\n");
    put("m/notes.txt", "not: a manifest\n");
    put("m/.hidden/h.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: hidden}\n");
    put("m/.dot.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: dot}\n");
    char p[256];
    snprintf(p, sizeof p, "%s/m", tmp);
    dev_objs l = { 0 };
    assert_int_equal(cli_dev_load_path(&l, p), 0);
    static const char *const want[] = { "a1", "a2", "b1", "c1", "c2" };
    assert_int_equal(l.n, 5);
    for (size_t i = 0; i < l.n; i++)
        assert_string_equal(name_of(&l.items[i]), want[i]);
    /* FILE:LINE of the document: the second YAML document starts on line 5 */
    char where[300];
    snprintf(where, sizeof where, "%s/m/c.yaml:5", tmp);
    assert_string_equal(l.items[4].where, where);
    cli_dev_objs_free(&l);
    assert_int_equal(l.n, 0);
    assert_null(l.items);

    /* a single file, given directly, is read whatever its extension */
    snprintf(p, sizeof p, "%s/m/notes.txt", tmp);
    assert_int_equal(cli_dev_load_path(&l, p), 0);
    assert_int_equal(l.n, 1);
    cli_dev_objs_free(&l);
}

static void test_load_errors(void **st)
{
    (void)st;
    sub("bad");
    put("bad/a.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: ok}\n");
    put("bad/b.yaml", "key: [unclosed\n");
    char p[256];
    snprintf(p, sizeof p, "%s/bad", tmp);
    dev_objs l = { 0 };
    assert_int_equal(cli_dev_load_path(&l, p), 2);
    cli_dev_objs_free(&l);
    put("scalar.yaml", "just a string\n");
    snprintf(p, sizeof p, "%s/scalar.yaml", tmp);
    assert_int_equal(cli_dev_load_path(&l, p), 2);
    cli_dev_objs_free(&l);
    snprintf(p, sizeof p, "%s/missing", tmp);
    assert_int_equal(cli_dev_load_path(&l, p), 2);
    assert_int_equal(l.n, 0);
}

static void test_collection_path(void **st)
{
    (void)st;
    static const struct {
        const char *obj, *want;
    } cases[] = {
        { "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"a\"}}",
          "/api/v1/namespaces" },
        /* a known namespaced kind without a namespace: default */
        { "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"j\"}}",
          "/apis/batch/v1/namespaces/default/jobs" },
        { "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"LocalQueue\","
          "\"metadata\":{\"name\":\"q\",\"namespace\":\"team\"}}",
          "/apis/kueue.x-k8s.io/v1beta2/namespaces/team/localqueues" },
        /* a known cluster-scoped kind ignores a stray namespace */
        { "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ClusterQueue\","
          "\"metadata\":{\"name\":\"cq\",\"namespace\":\"x\"}}",
          "/apis/kueue.x-k8s.io/v1beta2/clusterqueues" },
        /* not "topologys" */
        { "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Topology\","
          "\"metadata\":{\"name\":\"t\"}}",
          "/apis/kueue.x-k8s.io/v1beta2/topologies" },
        /* unknown kinds: lower-case + "s", scoped by metadata.namespace */
        { "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":{\"name\":\"w\"}}",
          "/apis/example.com/v1/widgets" },
        { "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\","
          "\"metadata\":{\"name\":\"w\",\"namespace\":\"n\"}}",
          "/apis/example.com/v1/namespaces/n/widgets" },
    };
    char out[256];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_object *o = json_tokener_parse(cases[i].obj);
        assert_int_equal(cli_dev_collection_path(o, out, sizeof out), 0);
        assert_string_equal(out, cases[i].want);
        json_object_put(o);
    }
    json_object *o = json_tokener_parse("{\"kind\":\"Job\"}");
    assert_int_equal(cli_dev_collection_path(o, out, sizeof out), -1);
    json_object_put(o);
    o = json_tokener_parse("{\"apiVersion\":\"v1\",\"kind\":\"\"}");
    assert_int_equal(cli_dev_collection_path(o, out, sizeof out), -1);
    json_object_put(o);
}

static void test_admission_words(void **st)
{
    (void)st;
    json_object *wl = json_tokener_parse(
        "{\"metadata\":{\"name\":\"job-train-1a2b3\",\"namespace\":\"ml\","
        "\"ownerReferences\":[{\"kind\":\"Job\",\"name\":\"train\"}]},"
        "\"spec\":{\"podSets\":[{\"name\":\"main\",\"count\":4},{\"name\":\"aux\"}]},"
        "\"status\":{\"admission\":{\"clusterQueue\":\"cq\",\"podSetAssignments\":["
        "{\"name\":\"main\",\"count\":2,\"flavors\":{\"cpu\":\"spot\",\"nvidia.com/gpu\":\"h100\"}},"
        "{\"name\":\"aux\",\"count\":1,\"flavors\":{\"cpu\":\"spot\"}}]}}}");
    char out[256];
    cli_dev_describe_admission(wl, out, sizeof out);
    assert_string_equal(out, "flavors spot, h100; 3 of 5 pods");
    int job_owned = 0;
    cli_dev_wl_display(wl, out, sizeof out, &job_owned);
    assert_string_equal(out, "ml/train");
    assert_true(job_owned);
    json_object_put(wl);

    wl = json_tokener_parse("{\"metadata\":{\"name\":\"w\",\"namespace\":\"ml\"},"
                            "\"spec\":{\"podSets\":[{\"name\":\"main\",\"count\":2}]},"
                            "\"status\":{\"admission\":{\"podSetAssignments\":["
                            "{\"name\":\"main\",\"count\":2}]}}}");
    cli_dev_describe_admission(wl, out, sizeof out);
    assert_string_equal(out, "flavors none");
    cli_dev_wl_display(wl, out, sizeof out, &job_owned);
    assert_string_equal(out, "Workload ml/w");
    assert_false(job_owned);
    json_object_put(wl);
}

/* Runs cu_dev_main on a NULL-terminated argument list. */
static int run(const char *first, ...)
{
    char *argv[16];
    int argc = 0;
    argv[argc++] = (char *)first;
    va_list ap;
    va_start(ap, first);
    for (char *a; argc < 15 && (a = va_arg(ap, char *)) != NULL;)
        argv[argc++] = a;
    va_end(ap);
    argv[argc] = NULL;
    return cu_dev_main(argc, argv);
}

static void test_flags(void **st)
{
    (void)st;
    char dir[128], crds[128], samples[128];
    snprintf(dir, sizeof dir, "%s/devdir", tmp);
    snprintf(crds, sizeof crds, "%s/crds", tmp);
    snprintf(samples, sizeof samples, "%s/samples", tmp);
    assert_int_equal(run("dev", "--duration", "0", NULL), 2);
    assert_int_equal(run("dev", "--duration", "5s", NULL), 2);
    assert_int_equal(run("dev", "--duration", "100000001", NULL), 2);
    assert_int_equal(run("dev", "--duration", NULL), 2);
    assert_int_equal(run("dev", "--bogus", NULL), 2);
    assert_int_equal(run("dev", "extra", NULL), 2);
    assert_int_equal(run("dev", "--dir", "", NULL), 2);
    char longdir[5000];
    memset(longdir, 'd', sizeof longdir - 1);
    longdir[sizeof longdir - 1] = '\0';
    assert_int_equal(run("dev", "--dir", longdir, NULL), 2);
    /* manifests are read before anything starts: a missing or malformed
     * folder stops here, and --dir is not even created */
    assert_int_equal(run("dev", "--dir", dir, "--crds", crds, "--duration", "1", NULL), 2);
    sub("crds");
    put("crds/ok.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: ok}\n");
    sub("samples");
    put("samples/bad.yaml", "a: [1\n");
    assert_int_equal(
        run("dev", "--dir", dir, "--crds", crds, "--samples", samples, "--quiet", NULL), 2);
    struct stat sb;
    assert_int_not_equal(stat(dir, &sb), 0);
    assert_int_equal(run("dev", "--kubeconfig", "", NULL), 2);
    assert_int_equal(run("dev", "--kubeconfig", NULL), 2);
    /* --nodes goes to the embedded cluster: none with --kubeconfig */
    assert_int_equal(run("dev", "--nodes", "", NULL), 2);
    assert_int_equal(run("dev", "--nodes", "n.yaml", "--kubeconfig", "kc", NULL), 2);
    /* --kubeconfig: no cluster is started; an unreadable file fails (1)
     * before anything is created or started */
    char bad[160], nokc[160];
    snprintf(bad, sizeof bad, "%s/samples/bad.yaml", tmp);
    assert_int_equal(unlink(bad), 0);
    snprintf(nokc, sizeof nokc, "%s/no-such-kubeconfig", tmp);
    assert_int_equal(run("dev", "--dir", dir, "--crds", crds, "--samples", samples, "--kubeconfig",
                         nokc, "--quiet", "--duration", "1", NULL),
                     1);
    assert_int_not_equal(stat(nokc, &sb), 0);
    /* --config is checked first, as `cueue controller --config` checks it:
     * a missing file, a file without a Configuration or with a field Kueue
     * does not have starts nothing */
    char cfg[160], dir2[160];
    snprintf(dir2, sizeof dir2, "%s/devdir2", tmp);
    snprintf(cfg, sizeof cfg, "%s/no-such-config.yaml", tmp);
    assert_int_equal(run("dev", "--config", "", NULL), 2);
    assert_int_equal(run("dev", "--config", NULL), 2);
    assert_int_equal(run("dev", "--dir", dir2, "--crds", crds, "--samples", samples, "--config",
                         cfg, "--quiet", "--duration", "1", NULL),
                     2);
    put("cfg-none.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n");
    snprintf(cfg, sizeof cfg, "%s/cfg-none.yaml", tmp);
    assert_int_equal(run("dev", "--dir", dir2, "--crds", crds, "--samples", samples, "--config",
                         cfg, "--quiet", "--duration", "1", NULL),
                     2);
    put("cfg-unknown.yaml", "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
                            "fairSharing: {enable: true}\nnoSuchField: 1\n");
    snprintf(cfg, sizeof cfg, "%s/cfg-unknown.yaml", tmp);
    assert_int_equal(run("dev", "--dir", dir2, "--crds", crds, "--samples", samples, "--config",
                         cfg, "--quiet", "--duration", "1", NULL),
                     2);
    assert_int_not_equal(stat(dir2, &sb), 0);
    assert_int_equal(run("dev", "--help", NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load_folder),     cmocka_unit_test(test_load_errors),
        cmocka_unit_test(test_collection_path), cmocka_unit_test(test_admission_words),
        cmocka_unit_test(test_flags),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
