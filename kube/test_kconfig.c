/*
 * test_kconfig.c - kubeconfig loading (table), KUBECONFIG merging, the
 * home fallback, in-cluster configuration, token file rotation and exec
 * credential plugins (a small shell script plugin).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cu_kconfig.h"

/* ---------------- fixture helpers ---------------- */

typedef struct fx {
    char dir[256]; /* temp root */
} fx;

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void pathf(char *out, size_t n, const fx *x, const char *rel)
{
    snprintf(out, n, "%s/%s", x->dir, rel);
}

static void put(const fx *x, const char *rel, const char *text)
{
    char p[512];
    pathf(p, sizeof p, x, rel);
    write_file(p, text);
}

static int setup(void **state)
{
    fx *x = calloc(1, sizeof(*x));
    snprintf(x->dir, sizeof x->dir, "/tmp/cu_kconfig_test.XXXXXX");
    if (!mkdtemp(x->dir))
        return -1;
    char p[512];
    pathf(p, sizeof p, x, "sub");
    mkdir(p, 0700);
    pathf(p, sizeof p, x, "other");
    mkdir(p, 0700);
    put(x, "sub/ca.pem", "-----BEGIN CERTIFICATE-----\nCAFILE\n-----END CERTIFICATE-----\n");
    put(x, "sub/cert.pem", "CERTFILE\n");
    put(x, "sub/key.pem", "KEYFILE\n");
    put(x, "sub/tok", "  file-token\n");
    put(x, "other/tok", "other-token\n");
    unsetenv("KUBECONFIG");
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
    unsetenv("CUEUE_TEST_SERVICEACCOUNT_DIR");
    *state = x;
    return 0;
}

static int teardown(void **state)
{
    fx *x = *state;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", x->dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cleanup of %s failed\n", x->dir);
    free(x);
    return 0;
}

/* Joins the diag messages into one string for substring checks. */
static void diag_text(const cu_diag *d, char *out, size_t n)
{
    out[0] = '\0';
    for (size_t i = 0; i < d->n; i++) {
        strncat(out, d->msgs[i], n - strlen(out) - 2);
        strncat(out, "\n", n - strlen(out) - 1);
    }
}

/* ---------------- the table ---------------- */

/* Every case uses this header: one cluster with CA data, two users, and
 * contexts; the case adds its own YAML after it (more clusters, users,
 * contexts, current-context). */
#define CA_B64 \
    "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCkNBREFUQQotLS0tLUVORCBDRVJUSUZJQ0FURS0tLS0tCg=="
#define CA_DATA "-----BEGIN CERTIFICATE-----\nCADATA\n-----END CERTIFICATE-----\n"

typedef struct kcase {
    const char *name;
    const char *yaml;
    const char *context; /* NULL: current-context */
    /* expectations (NULL: not checked / must be NULL where noted) */
    const char *err; /* substring of the error; NULL = success */
    const char *server, *ctx, *ns;
    const char *token;      /* c->token */
    const char *ca;         /* ca_pem, "" = must be NULL */
    const char *cert, *key; /* "" = must be NULL */
    const char *token_file_suffix;
    int insecure;
    const char *sni;
} kcase;

static const kcase cases[] = {
    { "token, current context, namespace",
      "clusters:\n- name: c1\n  cluster:\n    server: https://10.0.0.1:6443/\n"
      "    certificate-authority-data: " CA_B64 "\n"
      "users:\n- name: u1\n  user:\n    token: abc\n"
      "contexts:\n- name: x\n  context: {cluster: c1, user: u1, namespace: team-a}\n"
      "current-context: x\n",
      NULL, NULL, "https://10.0.0.1:6443", "x", "team-a", "abc", CA_DATA, "", "", NULL, 0, NULL },
    { "named context wins over current-context; namespace defaults",
      "clusters:\n- name: c1\n  cluster: {server: 'https://a:1'}\n- name: c2\n  cluster: "
      "{server: 'http://b:2', insecure-skip-tls-verify: true, tls-server-name: api.b}\n"
      "users:\n- name: u1\n  user: {token: t1}\n"
      "contexts:\n- name: x\n  context: {cluster: c1, user: u1}\n"
      "- name: y\n  context: {cluster: c2}\ncurrent-context: x\n",
      "y", NULL, "http://b:2", "y", "default", NULL, "", "", "", NULL, 1, "api.b" },
    { "relative file paths resolve against the kubeconfig's folder",
      "clusters:\n- name: c\n  cluster: {server: 'https://h', certificate-authority: ca.pem}\n"
      "users:\n- name: u\n  user: {client-certificate: cert.pem, client-key: ./key.pem, "
      "tokenFile: tok}\n"
      "contexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n",
      NULL, NULL, "https://h", "x", "default", NULL,
      "-----BEGIN CERTIFICATE-----\nCAFILE\n-----END CERTIFICATE-----\n", "CERTFILE\n", "KEYFILE\n",
      "/sub/tok", 0, NULL },
    { "client certificate and key as data",
      "clusters:\n- name: c\n  cluster: {server: 'https://h'}\n"
      "users:\n- name: u\n  user: {client-certificate-data: Q0VSVA==, client-key-data: S0VZ}\n"
      "contexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n",
      NULL, NULL, "https://h", "x", "default", NULL, "", "CERT", "KEY", NULL, 0, NULL },
    { "unknown context",
      "clusters:\n- name: c\n  cluster: {server: 'https://h'}\n"
      "contexts:\n- name: x\n  context: {cluster: c}\ncurrent-context: x\n",
      "nope", "context \"nope\" not found", .sni = NULL },
    { "current-context names a missing context",
      "clusters:\n- name: c\n  cluster: {server: 'https://h'}\ncurrent-context: gone\n", NULL,
      "context \"gone\" not found (named by current-context)", .sni = NULL },
    { "no current context",
      "clusters:\n- name: c\n  cluster: {server: 'https://h'}\n"
      "contexts:\n- name: x\n  context: {cluster: c}\n",
      NULL, "no current-context is set", .sni = NULL },
    { "context names a missing cluster",
      "contexts:\n- name: x\n  context: {cluster: nowhere}\ncurrent-context: x\n", NULL,
      "context \"x\": cluster \"nowhere\" not found", .sni = NULL },
    { "context names a missing user",
      "clusters:\n- name: c\n  cluster: {server: 'https://h'}\n"
      "contexts:\n- name: x\n  context: {cluster: c, user: ghost}\ncurrent-context: x\n",
      NULL, "context \"x\": user \"ghost\" not found", .sni = NULL },
    { "server missing",
      "clusters:\n- name: c\n  cluster: {insecure-skip-tls-verify: true}\n"
      "contexts:\n- name: x\n  context: {cluster: c}\ncurrent-context: x\n",
      NULL, "cluster \"c\": server is missing", .sni = NULL },
    { "server without a scheme",
      "clusters:\n- name: c\n  cluster: {server: 'h:6443'}\n"
      "contexts:\n- name: x\n  context: {cluster: c}\ncurrent-context: x\n",
      NULL, "must start with https:// or http://", .sni = NULL },
    { "CA file and data both set",
      "clusters:\n- name: c\n  cluster: {server: 'https://h', certificate-authority: ca.pem, "
      "certificate-authority-data: " CA_B64 "}\n"
      "contexts:\n- name: x\n  context: {cluster: c}\ncurrent-context: x\n",
      NULL, "certificate-authority and certificate-authority-data are both set", .sni = NULL },
    { "bad base64",
      "clusters:\n- name: c\n  cluster: {server: 'https://h', certificate-authority-data: 'a$b'}\n"
      "contexts:\n- name: x\n  context: {cluster: c}\ncurrent-context: x\n",
      NULL, "cluster \"c\": certificate-authority-data is not valid base64", .sni = NULL },
    { "missing CA file names the resolved path",
      "clusters:\n- name: c\n  cluster: {server: 'https://h', certificate-authority: nope.pem}\n"
      "contexts:\n- name: x\n  context: {cluster: c}\ncurrent-context: x\n",
      NULL, "/sub/nope.pem\": cannot read: No such file or directory", .sni = NULL },
    { "certificate without key",
      "clusters:\n- name: c\n  cluster: {server: 'https://h'}\n"
      "users:\n- name: u\n  user: {client-certificate: cert.pem}\n"
      "contexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n",
      NULL, "user \"u\": client-certificate is set without client-key", .sni = NULL },
    { "insecure together with a CA",
      "clusters:\n- name: c\n  cluster: {server: 'https://h', insecure-skip-tls-verify: true, "
      "certificate-authority: ca.pem}\n"
      "contexts:\n- name: x\n  context: {cluster: c}\ncurrent-context: x\n",
      NULL, "insecure-skip-tls-verify and a certificate authority are both set", .sni = NULL },
    { "insecure-skip-tls-verify not a boolean",
      "clusters:\n- name: c\n  cluster: {server: 'https://h', insecure-skip-tls-verify: maybe}\n"
      "contexts:\n- name: x\n  context: {cluster: c}\ncurrent-context: x\n",
      NULL, "insecure-skip-tls-verify must be true or false", .sni = NULL },
    { "exec with an unsupported apiVersion",
      "clusters:\n- name: c\n  cluster: {server: 'https://h'}\n"
      "users:\n- name: u\n  user:\n    exec: {command: /bin/true, apiVersion: "
      "client.authentication.k8s.io/v1alpha1}\n"
      "contexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n",
      NULL, "exec.apiVersion: \"client.authentication.k8s.io/v1alpha1\" is not supported",
      .sni = NULL },
    { "exec command not in PATH",
      "clusters:\n- name: c\n  cluster: {server: 'https://h'}\n"
      "users:\n- name: u\n  user:\n    exec: {command: no-such-plugin-xyz, apiVersion: "
      "client.authentication.k8s.io/v1}\n"
      "contexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n",
      NULL, "\"no-such-plugin-xyz\" not found in PATH", .sni = NULL },
    { "auth-provider is refused",
      "clusters:\n- name: c\n  cluster: {server: 'https://h'}\n"
      "users:\n- name: u\n  user: {auth-provider: {name: gcp}}\n"
      "contexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n",
      NULL, "auth-provider plugins are not supported", .sni = NULL },
    { "clusters is not a list", "clusters: {c: 1}\n", NULL, "clusters: must be a list",
      .sni = NULL },
    { "entry without a name", "users:\n- user: {token: x}\n", NULL, "users[0]: missing name",
      .sni = NULL },
    { "not a mapping", "- a\n- b\n", NULL, "not a kubeconfig", .sni = NULL },
    { "YAML syntax error points at the line", "clusters:\n- name: [c\n", NULL,
      "kc.yaml:", .sni = NULL },
};

static void check_opt(const char *want, const char *got, const char *what, const char *cname)
{
    if (!want)
        return;
    if (!want[0]) {
        if (got)
            fail_msg("%s: %s: want NULL, got \"%s\"", cname, what, got);
        return;
    }
    if (!got || strcmp(want, got) != 0)
        fail_msg("%s: %s: want \"%s\", got \"%s\"", cname, what, want, got ? got : "(null)");
}

static void test_table(void **state)
{
    fx *x = *state;
    char kc[512];
    pathf(kc, sizeof kc, x, "sub/kc.yaml");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const kcase *k = &cases[i];
        write_file(kc, k->yaml);
        cu_diag d;
        cu_diag_init(&d);
        cu_kconfig *c = cu_kconfig_load(kc, k->context, &d);
        char msgs[4096];
        diag_text(&d, msgs, sizeof msgs);
        if (k->err) {
            if (c)
                fail_msg("%s: loaded, want error \"%s\"", k->name, k->err);
            if (!strstr(msgs, k->err))
                fail_msg("%s: error \"%s\" does not contain \"%s\"", k->name, msgs, k->err);
            /* every message names the file it is about */
            if (!strstr(msgs, kc))
                fail_msg("%s: error \"%s\" does not name %s", k->name, msgs, kc);
        } else {
            if (!c)
                fail_msg("%s: load failed: %s", k->name, msgs);
            check_opt(k->server, c->server, "server", k->name);
            check_opt(k->ctx, c->context, "context", k->name);
            check_opt(k->ns, c->namespace_, "namespace", k->name);
            check_opt(k->token, c->token, "token", k->name);
            check_opt(k->ca, c->ca_pem, "ca", k->name);
            check_opt(k->cert, c->cert_pem, "cert", k->name);
            check_opt(k->key, c->key_pem, "key", k->name);
            check_opt(k->sni, c->tls_server_name, "tls-server-name", k->name);
            if (c->insecure != k->insecure)
                fail_msg("%s: insecure %d, want %d", k->name, c->insecure, k->insecure);
            if (k->token_file_suffix) {
                char want[600];
                snprintf(want, sizeof want, "%s%s", x->dir, k->token_file_suffix);
                check_opt(want, c->token_file, "tokenFile", k->name);
                const char *t = cu_kconfig_token(c, 0, &d);
                check_opt("file-token", t, "token from file", k->name);
            }
            cu_kconfig_free(c);
        }
        cu_diag_free(&d);
    }
}

/* ---------------- KUBECONFIG merge, HOME fallback ---------------- */

static void test_kubeconfig_merge(void **state)
{
    fx *x = *state;
    /* A: current-context a, cluster shared (server A), user ua */
    put(x, "sub/a.yaml",
        "clusters:\n- name: shared\n  cluster: {server: 'https://a:1'}\n"
        "users:\n- name: ua\n  user: {token: from-a}\n"
        "contexts:\n- name: a\n  context: {cluster: shared, user: ua}\ncurrent-context: a\n");
    /* B: its own definition of shared is ignored (first file wins), context
     * b only here, user ub with a tokenFile relative to B's folder */
    put(x, "other/b.yaml",
        "clusters:\n- name: shared\n  cluster: {server: 'https://b:2'}\n"
        "users:\n- name: ua\n  user: {token: from-b}\n- name: ub\n  user: {tokenFile: tok}\n"
        "contexts:\n- name: b\n  context: {cluster: shared, user: ub, namespace: nb}\n"
        "current-context: b\n");
    char env[1200];
    snprintf(env, sizeof env, "%s/sub/a.yaml:%s/missing.yaml::%s/other/b.yaml", x->dir, x->dir,
             x->dir);
    setenv("KUBECONFIG", env, 1);
    cu_diag d;
    cu_diag_init(&d);
    cu_kconfig *c = cu_kconfig_load(NULL, NULL, &d);
    assert_non_null(c);
    assert_string_equal(c->context, "a");
    assert_string_equal(c->server, "https://a:1");
    assert_string_equal(c->token, "from-a");
    cu_kconfig_free(c);

    c = cu_kconfig_load(NULL, "b", &d);
    assert_non_null(c);
    assert_string_equal(c->server, "https://a:1"); /* shared comes from A */
    assert_string_equal(c->namespace_, "nb");
    char want[600];
    snprintf(want, sizeof want, "%s/other/tok", x->dir);
    assert_string_equal(c->token_file, want);
    assert_string_equal(cu_kconfig_token(c, 0, &d), "other-token");
    cu_kconfig_free(c);
    assert_int_equal(d.nerrors, 0);

    /* order matters: B first makes b current and its shared server used */
    snprintf(env, sizeof env, "%s/other/b.yaml:%s/sub/a.yaml", x->dir, x->dir);
    setenv("KUBECONFIG", env, 1);
    c = cu_kconfig_load(NULL, NULL, &d);
    assert_non_null(c);
    assert_string_equal(c->context, "b");
    assert_string_equal(c->server, "https://b:2");
    cu_kconfig_free(c);

    /* an explicit path ignores KUBECONFIG */
    snprintf(want, sizeof want, "%s/sub/a.yaml", x->dir);
    c = cu_kconfig_load(want, "b", &d);
    assert_null(c);
    assert_non_null(strstr(d.msgs[d.n - 1], "context \"b\" not found"));

    /* only missing files: an error naming KUBECONFIG */
    snprintf(env, sizeof env, "%s/none1:%s/none2", x->dir, x->dir);
    setenv("KUBECONFIG", env, 1);
    cu_diag_free(&d);
    cu_diag_init(&d);
    c = cu_kconfig_load(NULL, NULL, &d);
    assert_null(c);
    assert_non_null(strstr(d.msgs[0], "KUBECONFIG="));
    assert_non_null(strstr(d.msgs[0], "no kubeconfig file found"));
    unsetenv("KUBECONFIG");
    cu_diag_free(&d);
}

static void test_home_fallback(void **state)
{
    fx *x = *state;
    char p[600];
    pathf(p, sizeof p, x, "home");
    mkdir(p, 0700);
    pathf(p, sizeof p, x, "home/.kube");
    mkdir(p, 0700);
    put(x, "home/.kube/config",
        "clusters:\n- name: c\n  cluster: {server: 'https://home:1', certificate-authority: ca}\n"
        "contexts:\n- name: x\n  context: {cluster: c}\ncurrent-context: x\n");
    put(x, "home/.kube/ca", "HOMECA");
    char *old = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    pathf(p, sizeof p, x, "home");
    setenv("HOME", p, 1);
    cu_diag d;
    cu_diag_init(&d);
    cu_kconfig *c = cu_kconfig_load(NULL, NULL, &d);
    assert_non_null(c);
    assert_string_equal(c->server, "https://home:1");
    assert_string_equal(c->ca_pem, "HOMECA");
    cu_kconfig_free(c);
    /* no ~/.kube/config and no cluster environment */
    pathf(p, sizeof p, x, "other");
    setenv("HOME", p, 1);
    c = cu_kconfig_load(NULL, NULL, &d);
    assert_null(c);
    assert_non_null(strstr(d.msgs[0], "/other/.kube/config: no kubeconfig file found"));
    if (old)
        setenv("HOME", old, 1);
    free(old);
    cu_diag_free(&d);
}

/* ---------------- in-cluster and token rotation ---------------- */

static void test_in_cluster(void **state)
{
    fx *x = *state;
    char sa[600];
    pathf(sa, sizeof sa, x, "sa");
    mkdir(sa, 0700);
    put(x, "sa/ca.crt", "SACA");
    put(x, "sa/token", "sa-token-1\n");
    put(x, "sa/namespace", "kueue-system\n");
    cu_diag d;
    cu_diag_init(&d);
    assert_null(cu_kconfig_in_cluster(sa, &d));
    assert_non_null(strstr(d.msgs[0], "KUBERNETES_SERVICE_HOST"));
    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    cu_kconfig *c = cu_kconfig_in_cluster(sa, &d);
    assert_non_null(c);
    assert_true(c->in_cluster);
    assert_string_equal(c->server, "https://10.96.0.1:443");
    assert_string_equal(c->ca_pem, "SACA");
    assert_string_equal(c->namespace_, "kueue-system");
    assert_string_equal(cu_kconfig_token(c, 0, &d), "sa-token-1");

    /* rotation the kubelet way: a new file renamed over the old one */
    put(x, "sa/token.new", "sa-token-2\n");
    char a[700], b[700];
    snprintf(a, sizeof a, "%s/token.new", sa);
    snprintf(b, sizeof b, "%s/token", sa);
    assert_int_equal(rename(a, b), 0);
    assert_string_equal(cu_kconfig_token(c, 0, &d), "sa-token-2");
    /* rewritten in place with another length */
    write_file(b, "sa-token-three\n");
    assert_string_equal(cu_kconfig_token(c, 0, &d), "sa-token-three");
    /* the file vanishes for a moment: the last token is kept, with a warning */
    size_t nerr = d.nerrors, nmsg = d.n;
    unlink(b);
    assert_string_equal(cu_kconfig_token(c, 0, &d), "sa-token-three");
    assert_int_equal(d.nerrors, nerr);
    assert_true(d.n > nmsg);
    assert_non_null(strstr(d.msgs[d.n - 1], "warning: "));
    write_file(b, "sa-token-4");
    assert_string_equal(cu_kconfig_token(c, 0, &d), "sa-token-4");
    cu_kconfig_free(c);

    /* IPv6 service host; the load path falls back to in-cluster */
    setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
    c = cu_kconfig_in_cluster(sa, &d);
    assert_non_null(c);
    assert_string_equal(c->server, "https://[fd00::1]:443");
    cu_kconfig_free(c);
    /* a missing CA is an error naming the file */
    char empty[600];
    pathf(empty, sizeof empty, x, "other");
    cu_diag_free(&d);
    cu_diag_init(&d);
    assert_null(cu_kconfig_in_cluster(empty, &d));
    assert_non_null(strstr(d.msgs[0], "/other/ca.crt: cannot read the CA"));

    /* tests point the in-cluster files elsewhere; cu_kconfig_load falls
     * back to them when no kubeconfig exists (HOME without .kube) */
    setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1", 1);
    setenv("CUEUE_TEST_SERVICEACCOUNT_DIR", sa, 1);
    char *old_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    setenv("HOME", empty, 1);
    c = cu_kconfig_load(NULL, NULL, &d);
    assert_non_null(c);
    assert_true(c->in_cluster);
    assert_string_equal(c->server, "https://127.0.0.1:443");
    assert_string_equal(c->ca_pem, "SACA");
    assert_string_equal(cu_kconfig_token(c, 0, &d), "sa-token-4");
    cu_kconfig_free(c);
    /* an explicit directory wins over the variable */
    cu_diag_free(&d);
    cu_diag_init(&d);
    assert_null(cu_kconfig_in_cluster(empty, &d));
    assert_non_null(strstr(d.msgs[0], "/other/ca.crt"));
    /* the variable set to a directory without the files: named in the error */
    setenv("CUEUE_TEST_SERVICEACCOUNT_DIR", empty, 1);
    cu_diag_free(&d);
    cu_diag_init(&d);
    assert_null(cu_kconfig_load(NULL, NULL, &d));
    assert_non_null(strstr(d.msgs[0], "/other/ca.crt: cannot read the CA"));
    unsetenv("CUEUE_TEST_SERVICEACCOUNT_DIR");
    if (old_home)
        setenv("HOME", old_home, 1);
    free(old_home);
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
    cu_diag_free(&d);
}

static void test_token_file_missing(void **state)
{
    fx *x = *state;
    char kc[512];
    pathf(kc, sizeof kc, x, "sub/kc.yaml");
    write_file(kc, "clusters:\n- name: c\n  cluster: {server: 'https://h'}\n"
                   "users:\n- name: u\n  user: {tokenFile: nothere}\n"
                   "contexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n");
    cu_diag d;
    cu_diag_init(&d);
    cu_kconfig *c = cu_kconfig_load(kc, NULL, &d);
    assert_non_null(c);
    assert_null(cu_kconfig_token(c, 0, &d));
    assert_int_equal(d.nerrors, 1);
    assert_non_null(strstr(d.msgs[0], "/sub/nothere: No such file or directory"));
    cu_kconfig_free(c);
    cu_diag_free(&d);
}

/* ---------------- exec plugins ---------------- */

/* The plugin counts its runs in $COUNT, records KUBERNETES_EXEC_INFO in
 * $INFO, and prints a token that names the run and its first argument,
 * valid until $EXP. MODE=fail/garbage/cert changes its behaviour. */
static const char plugin_sh[] =
    "#!/bin/sh\n"
    "n=$(cat \"$COUNT\" 2>/dev/null || echo 0); n=$((n+1)); echo $n > \"$COUNT\"\n"
    "printf '%s' \"$KUBERNETES_EXEC_INFO\" > \"$INFO\"\n"
    "case \"$MODE\" in\n"
    "fail) echo 'plugin: login required' >&2; exit 3;;\n"
    "garbage) echo 'not json at all: [';;\n"
    "nostatus) echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\"}';;\n"
    "cert) printf '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
    "\"status\":{\"clientCertificateData\":\"PEMCERT-%s\",\"clientKeyData\":\"PEMKEY\"}}' $n;;\n"
    "*) printf '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
    "\"status\":{\"token\":\"tok-%s-%s\",\"expirationTimestamp\":\"%s\"}}' $n \"$1\" \"$EXP\";;\n"
    "esac\n";

static cu_kconfig *exec_config(fx *x, const char *mode, cu_diag *d)
{
    char p[600];
    pathf(p, sizeof p, x, "sub/plugin.sh");
    write_file(p, plugin_sh);
    chmod(p, 0755);
    char count[600], info[600];
    pathf(count, sizeof count, x, "sub/count");
    pathf(info, sizeof info, x, "sub/info");
    unlink(count);
    char yaml[4096];
    snprintf(
        yaml, sizeof yaml,
        "clusters:\n- name: c\n  cluster: {server: 'https://h'}\n"
        "users:\n- name: u\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n"
        "      command: ./plugin.sh\n      args: [argone]\n      interactiveMode: Never\n"
        "      env:\n      - {name: COUNT, value: '%s'}\n      - {name: INFO, value: '%s'}\n"
        "      - {name: MODE, value: '%s'}\n"
        "      - {name: EXP, value: '2030-01-01T00:00:10Z'}\n"
        "contexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n",
        count, info, mode);
    pathf(p, sizeof p, x, "sub/kc.yaml");
    write_file(p, yaml);
    return cu_kconfig_load(p, NULL, d);
}

static int read_count(fx *x)
{
    char p[600];
    pathf(p, sizeof p, x, "sub/count");
    FILE *f = fopen(p, "r");
    if (!f)
        return 0;
    int n = 0;
    if (fscanf(f, "%d", &n) != 1)
        n = -1;
    fclose(f);
    return n;
}

static void test_exec_plugin_cached_until_expiry(void **state)
{
    fx *x = *state;
    cu_diag d;
    cu_diag_init(&d);
    cu_kconfig *c = exec_config(x, "token", &d);
    assert_non_null(c);
    assert_non_null(c->exec);
    int64_t t0 = 0;
    assert_int_equal(cu_time_parse("2030-01-01T00:00:00Z", &t0), CU_OK);
    /* the working directory is not the kubeconfig's folder */
    assert_int_equal(chdir("/"), 0);
    assert_string_equal(cu_kconfig_token(c, t0, &d), "tok-1-argone");
    assert_int_equal(read_count(x), 1);
    assert_string_equal(cu_kconfig_token(c, t0 + 5000, &d), "tok-1-argone");
    assert_string_equal(cu_kconfig_token(c, t0 + 9999, &d), "tok-1-argone");
    assert_int_equal(read_count(x), 1);
    /* expired: the plugin runs again */
    assert_string_equal(cu_kconfig_token(c, t0 + 10000, &d), "tok-2-argone");
    assert_int_equal(read_count(x), 2);
    /* ... and with a fresh expiry in the past at every call it runs each time */
    assert_string_equal(cu_kconfig_token(c, t0 + 20000, &d), "tok-3-argone");
    /* invalidation (after a 401) forces a run even before expiry */
    assert_int_equal(cu_kconfig_invalidate(c), 1);
    assert_string_equal(cu_kconfig_token(c, 0, &d), "tok-4-argone");
    assert_int_equal(d.nerrors, 0);
    /* KUBERNETES_EXEC_INFO as kubectl sets it */
    char p[600];
    pathf(p, sizeof p, x, "sub/info");
    FILE *f = fopen(p, "r");
    assert_non_null(f);
    char info[512] = "";
    assert_non_null(fgets(info, sizeof info, f));
    fclose(f);
    assert_non_null(strstr(info, "\"apiVersion\":\"client.authentication.k8s.io/v1\""));
    assert_non_null(strstr(info, "\"kind\":\"ExecCredential\""));
    assert_non_null(strstr(info, "\"interactive\":false"));
    cu_kconfig_free(c);
    cu_diag_free(&d);
}

static void test_exec_plugin_errors(void **state)
{
    fx *x = *state;
    static const struct {
        const char *mode, *want;
    } bad[] = {
        { "fail", "failed (exit status 3): plugin: login required" },
        { "garbage", "output" },
        { "nostatus", "status is missing" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cu_diag d;
        cu_diag_init(&d);
        cu_kconfig *c = exec_config(x, bad[i].mode, &d);
        assert_non_null(c);
        assert_null(cu_kconfig_token(c, 0, &d));
        char msgs[2048];
        diag_text(&d, msgs, sizeof msgs);
        if (!d.nerrors || !strstr(msgs, bad[i].want) || !strstr(msgs, "user \"u\""))
            fail_msg("mode %s: error \"%s\" lacks \"%s\"", bad[i].mode, msgs, bad[i].want);
        /* a failure is not cached: the next call runs the plugin again */
        assert_null(cu_kconfig_token(c, 0, &d));
        assert_int_equal(read_count(x), 2);
        cu_kconfig_free(c);
        cu_diag_free(&d);
    }
}

static void test_exec_plugin_client_cert(void **state)
{
    fx *x = *state;
    cu_diag d;
    cu_diag_init(&d);
    cu_kconfig *c = exec_config(x, "cert", &d);
    assert_non_null(c);
    assert_null(c->cert_pem);
    assert_null(cu_kconfig_token(c, 0, &d));
    assert_int_equal(d.nerrors, 0);
    assert_string_equal(c->cert_pem, "PEMCERT-1");
    assert_string_equal(c->key_pem, "PEMKEY");
    /* no expiry: cached */
    assert_null(cu_kconfig_token(c, INT64_MAX / 2, &d));
    assert_int_equal(read_count(x), 1);
    cu_kconfig_free(c);
    cu_diag_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_table, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kubeconfig_merge, setup, teardown),
        cmocka_unit_test_setup_teardown(test_home_fallback, setup, teardown),
        cmocka_unit_test_setup_teardown(test_in_cluster, setup, teardown),
        cmocka_unit_test_setup_teardown(test_token_file_missing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exec_plugin_cached_until_expiry, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exec_plugin_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exec_plugin_client_cert, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
