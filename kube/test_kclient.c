/*
 * test_kclient.c - the REST client against the real embedded cluster
 * (`cueue cluster`, built next to this test): round trips over HTTP and
 * over TLS with a bearer token, keep-alive, the rate limiter, retries on
 * 429/500/connection refused (with the server's fault injection), the
 * request timeout, the body cap, watch streaming, cancellation, and that
 * callbacks never run inside the call that started the request.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cu_clock.h"
#include "cu_kclient.h"

/* ---------------- servers ---------------- */

typedef struct server {
    pid_t pid;
    char kc[512]; /* kubeconfig written by the server */
} server;

typedef struct world {
    char dir[256];
    char bin[512];
    server plain; /* http, --admin */
    server tls;   /* https, --token-file, --admin */
} world;

static double now_s(void) { return (double)cu_clock_mono_ns() / 1e9; }

static int start_server(world *w, server *s, const char *name, const char *const *extra)
{
    snprintf(s->kc, sizeof s->kc, "%s/%s.kubeconfig", w->dir, name);
    char log[600];
    snprintf(log, sizeof log, "%s/%s.log", w->dir, name);
    const char *argv[16];
    size_t n = 0;
    argv[n++] = w->bin;
    argv[n++] = "cluster";
    argv[n++] = "--listen";
    argv[n++] = "127.0.0.1:0";
    argv[n++] = "--kubeconfig-out";
    argv[n++] = s->kc;
    argv[n++] = "--admin";
    for (size_t i = 0; extra && extra[i]; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;
    s->pid = fork();
    if (s->pid < 0)
        return -1;
    if (s->pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execv(w->bin, (char *const *)argv);
        _exit(127);
    }
    for (int i = 0; i < 200; i++) { /* up to 10 s */
        struct stat st;
        if (stat(s->kc, &st) == 0)
            return 0;
        int status;
        if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
            fprintf(stderr, "cueue cluster exited early, see %s\n", log);
            s->pid = 0;
            return -1;
        }
        nanosleep(&(struct timespec){ 0, 50000000 }, NULL);
    }
    return -1;
}

static void stop_server(server *s)
{
    if (s->pid > 0) {
        kill(s->pid, SIGTERM);
        waitpid(s->pid, NULL, 0);
        s->pid = 0;
    }
}

static int group_setup(void **state)
{
    world *w = calloc(1, sizeof(*w));
    snprintf(w->dir, sizeof w->dir, "/tmp/cu_kclient_test.XXXXXX");
    if (!mkdtemp(w->dir))
        return -1;
    /* the cueue binary sits next to this test in the build folder */
    const char *env = getenv("CUEUE_BIN");
    if (env)
        snprintf(w->bin, sizeof w->bin, "%s", env);
    else {
        char self[400];
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        if (n <= 0)
            return -1;
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        *slash = '\0';
        snprintf(w->bin, sizeof w->bin, "%s/cueue", self);
    }
    if (access(w->bin, X_OK) != 0) {
        fprintf(stderr, "test_kclient: %s not found; build the cueue target first\n", w->bin);
        return -1;
    }
    char tok[600];
    snprintf(tok, sizeof tok, "%s/tokens", w->dir);
    FILE *f = fopen(tok, "w");
    fputs("# tokens\nsecret-token-1,admin,1\nsecond-token\n", f);
    fclose(f);
    const char *tls_args[] = { "--tls", "--token-file", tok, NULL };
    if (start_server(w, &w->plain, "plain", NULL) || start_server(w, &w->tls, "tls", tls_args)) {
        stop_server(&w->plain);
        stop_server(&w->tls);
        return -1;
    }
    signal(SIGPIPE, SIG_IGN);
    *state = w;
    return 0;
}

static int group_teardown(void **state)
{
    world *w = *state;
    stop_server(&w->plain);
    stop_server(&w->tls);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", w->dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cleanup failed\n");
    free(w);
    return 0;
}

/* ---------------- per-test client ---------------- */

typedef struct t {
    struct ev_loop *loop;
    cu_kconfig *cfg;
    cu_kclient *c;
} t;

static void t_open(t *x, const char *kc, const cu_kclient_opts *o)
{
    cu_diag d;
    cu_diag_init(&d);
    x->loop = ev_loop_new(EVFLAG_AUTO);
    assert_non_null(x->loop);
    x->cfg = cu_kconfig_load(kc, NULL, &d);
    if (!x->cfg)
        fail_msg("load %s: %s", kc, d.n ? d.msgs[0] : "?");
    x->c = cu_kclient_new(x->loop, x->cfg, o, &d);
    assert_non_null(x->c);
    cu_diag_free(&d);
}

static void t_close(t *x)
{
    cu_kclient_free(x->c);
    cu_kconfig_free(x->cfg);
    ev_loop_destroy(x->loop);
}

/* Runs the loop until *flag becomes non-zero or timeout_s passes. */
static void wake_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)w;
    (void)revents;
}

static int run_until(t *x, const int *flag, double timeout_s)
{
    double end = now_s() + timeout_s;
    ev_timer wake; /* so that EVRUN_ONCE returns at the deadline */
    ev_timer_init(&wake, wake_cb, timeout_s, 0.);
    ev_timer_start(x->loop, &wake);
    while (!*flag && now_s() < end)
        ev_run(x->loop, EVRUN_ONCE);
    ev_timer_stop(x->loop, &wake);
    return *flag;
}

/* One finished request, copied out of the callback. */
typedef struct res {
    int done, calls, code, retries;
    char *body;
    char *error;
    double at;
    const int *starting; /* set while the starting call runs */
    int sync_violation;
} res;

static void on_done(cu_kclient *c, const cu_kresp *r, void *ud)
{
    (void)c;
    res *s = ud;
    s->calls++;
    if (s->starting && *s->starting)
        s->sync_violation = 1;
    s->done = 1;
    s->code = r->code;
    s->retries = r->retries;
    free(s->body);
    free(s->error);
    s->body = strndup(r->body, r->len);
    s->error = r->error ? strdup(r->error) : NULL;
    s->at = now_s();
}

static void res_free(res *s)
{
    free(s->body);
    free(s->error);
    memset(s, 0, sizeof *s);
}

/* Synchronous helper for tests: one request, run to completion. */
static void call(t *x, const char *method, const char *path, const char *body, const char *ctype,
                 res *out)
{
    res_free(out);
    int starting = 1;
    out->starting = &starting;
    cu_kreq *r =
        cu_kclient_request(x->c, method, path, body, body ? strlen(body) : 0, ctype, on_done, out);
    starting = 0;
    assert_non_null(r);
    assert_int_equal(out->calls, 0);
    if (!run_until(x, &out->done, 30))
        fail_msg("%s %s did not finish", method, path);
    assert_int_equal(out->calls, 1);
    assert_false(out->sync_violation);
}

static void fault(t *x, const char *json)
{
    res r = { 0 };
    call(x, "POST", "/cueue/faults", json, "application/json", &r);
    if (r.code != 200 && r.code != 201)
        fail_msg("fault %s: %d %s", json, r.code, r.body ? r.body : "");
    res_free(&r);
}

static const char *json_str(json_object *o, const char *path)
{
    /* dotted path of object keys */
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *save = NULL, *k = strtok_r(buf, ".", &save); k; k = strtok_r(NULL, ".", &save))
        if (!o || !json_object_object_get_ex(o, k, &o))
            return NULL;
    return o ? json_object_get_string(o) : NULL;
}

/* ---------------- tests ---------------- */

static void roundtrip(const char *kc, const char *name)
{
    t x;
    t_open(&x, kc, NULL);
    res r = { 0 };
    char path[256], body[512];
    snprintf(body, sizeof body,
             "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"%s\"},"
             "\"data\":{\"k\":\"v1\"}}",
             name);
    call(&x, "POST", "/api/v1/namespaces/default/configmaps", body, NULL, &r);
    assert_int_equal(r.code, 201);
    assert_null(r.error);

    snprintf(path, sizeof path, "/api/v1/namespaces/default/configmaps/%s", name);
    call(&x, "GET", path, NULL, NULL, &r);
    assert_int_equal(r.code, 200);
    json_object *o = json_tokener_parse(r.body);
    assert_non_null(o);
    assert_string_equal(json_str(o, "data.k"), "v1");
    json_object_put(o);

    call(&x, "PATCH", path, "{\"data\":{\"k\":\"v2\",\"n\":\"new\"}}",
         "application/merge-patch+json", &r);
    assert_int_equal(r.code, 200);
    o = json_tokener_parse(r.body);
    assert_string_equal(json_str(o, "data.k"), "v2");
    assert_string_equal(json_str(o, "data.n"), "new");
    json_object_put(o);

    call(&x, "DELETE", path, NULL, NULL, &r);
    assert_int_equal(r.code, 200);
    call(&x, "GET", path, NULL, NULL, &r);
    assert_int_equal(r.code, 404);
    o = json_tokener_parse(r.body);
    assert_string_equal(json_str(o, "reason"), "NotFound");
    json_object_put(o);

    cu_kclient_stats st;
    cu_kclient_stats_get(x.c, &st);
    assert_int_equal(st.requests, 5);
    assert_int_equal(st.by_code[2], 4);
    assert_int_equal(st.by_code[4], 1);
    assert_int_equal(st.retries, 0);
    assert_true(st.bytes_in > 0);
    res_free(&r);
    t_close(&x);
}

static void test_roundtrip_http(void **state)
{
    world *w = *state;
    roundtrip(w->plain.kc, "rt-http");
}

static void test_roundtrip_tls_bearer(void **state)
{
    world *w = *state;
    roundtrip(w->tls.kc, "rt-tls");

    /* the token matters: a wrong static token gets a final 401 */
    t x;
    t_open(&x, w->tls.kc, NULL);
    assert_non_null(x.cfg->ca_pem);
    assert_string_equal(x.cfg->token, "secret-token-1");
    free(x.cfg->token);
    x.cfg->token = strdup("wrong");
    res r = { 0 };
    call(&x, "GET", "/api/v1/namespaces/default/configmaps", NULL, NULL, &r);
    assert_int_equal(r.code, 401);
    assert_int_equal(r.retries, 0);
    /* the CA matters: without it the server certificate is not trusted */
    free(x.cfg->token);
    x.cfg->token = strdup("second-token");
    call(&x, "GET", "/api/v1/namespaces/default/configmaps", NULL, NULL, &r);
    assert_int_equal(r.code, 200);
    free(x.cfg->ca_pem);
    x.cfg->ca_pem = NULL;
    call(&x, "GET", "/api/v1/namespaces/default/configmaps", NULL, NULL, &r);
    assert_int_equal(r.code, 0);
    assert_non_null(r.error);
    assert_int_equal(r.retries, 0); /* a certificate problem is not retried */
    /* ... unless verification is switched off */
    x.cfg->insecure = 1;
    call(&x, "GET", "/api/v1/namespaces/default/configmaps", NULL, NULL, &r);
    assert_int_equal(r.code, 200);
    res_free(&r);
    t_close(&x);
}

/* tls-server-name: the URL host is 127.0.0.1, the name checked is another
 * one in the certificate (localhost) - or one that is not there. */
static void test_tls_server_name(void **state)
{
    world *w = *state;
    static const struct {
        const char *sni;
        int want;
    } cases[] = { { "localhost", 200 }, { "not-in-the-cert.example", 0 } };
    for (size_t i = 0; i < 2; i++) {
        cu_diag d;
        cu_diag_init(&d);
        cu_kconfig *cfg = cu_kconfig_load(w->tls.kc, NULL, &d);
        assert_non_null(cfg);
        cfg->tls_server_name = strdup(cases[i].sni);
        struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
        cu_kclient_opts o = { .max_retries = 1 };
        t x = { loop, cfg, cu_kclient_new(loop, cfg, &o, &d) };
        assert_non_null(x.c);
        res r = { 0 };
        call(&x, "GET", "/api/v1/namespaces", NULL, NULL, &r);
        if (r.code != cases[i].want)
            fail_msg("tls-server-name %s: code %d (%s), want %d", cases[i].sni, r.code,
                     r.error ? r.error : "", cases[i].want);
        res_free(&r);
        t_close(&x);
        cu_diag_free(&d);
    }
}

/* An exec plugin supplies the bearer token for the TLS server. */
static void test_exec_plugin_against_server(void **state)
{
    world *w = *state;
    cu_diag d;
    cu_diag_init(&d);
    cu_kconfig *base = cu_kconfig_load(w->tls.kc, NULL, &d);
    assert_non_null(base);
    char p[600], ca[600], count[600];
    snprintf(ca, sizeof ca, "%s/ca.pem", w->dir);
    FILE *f = fopen(ca, "w");
    fputs(base->ca_pem, f);
    fclose(f);
    snprintf(count, sizeof count, "%s/plugin.count", w->dir);
    snprintf(p, sizeof p, "%s/plugin.sh", w->dir);
    f = fopen(p, "w");
    /* the first run hands out a token the server does not know */
    fprintf(f,
            "#!/bin/sh\n[ -f '%s' ] && tok=second-token || tok=stale-token\n"
            "echo x >> '%s'\n"
            "echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\","
            "\"kind\":\"ExecCredential\",\"status\":{\"token\":\"'$tok'\"}}'\n",
            count, count);
    fclose(f);
    chmod(p, 0755);
    snprintf(p, sizeof p, "%s/exec.kubeconfig", w->dir);
    f = fopen(p, "w");
    fprintf(f,
            "clusters:\n- name: c\n  cluster: {server: '%s', certificate-authority: ca.pem}\n"
            "users:\n- name: u\n  user:\n    exec: {command: ./plugin.sh, apiVersion: "
            "client.authentication.k8s.io/v1, interactiveMode: Never}\n"
            "contexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n",
            base->server);
    fclose(f);
    cu_kconfig_free(base);
    cu_diag_free(&d);
    t x;
    t_open(&x, p, NULL);
    res r = { 0 };
    for (int i = 0; i < 3; i++) {
        call(&x, "GET", "/api/v1/namespaces", NULL, NULL, &r);
        assert_int_equal(r.code, 200);
        /* the 401 on the stale token re-ran the plugin and retried once */
        assert_int_equal(r.retries, i == 0 ? 1 : 0);
    }
    /* no expiry: after that, the plugin's token is reused */
    struct stat st;
    assert_int_equal(stat(count, &st), 0);
    assert_int_equal(st.st_size, 4);
    cu_kclient_stats cs;
    cu_kclient_stats_get(x.c, &cs);
    assert_int_equal(cs.by_code[4], 1);
    res_free(&r);
    t_close(&x);
}

static void test_keepalive(void **state)
{
    world *w = *state;
    const char *kcs[] = { w->plain.kc, w->tls.kc };
    for (size_t k = 0; k < 2; k++) {
        t x;
        t_open(&x, kcs[k], NULL);
        res r = { 0 };
        for (int i = 0; i < 10; i++) {
            call(&x, "GET", "/api/v1/namespaces/default/configmaps", NULL, NULL, &r);
            assert_int_equal(r.code, 200);
        }
        cu_kclient_stats st;
        cu_kclient_stats_get(x.c, &st);
        assert_int_equal(st.requests, 10);
        if (st.new_connections != 1)
            fail_msg("%s: %llu connections for 10 sequential requests", kcs[k],
                     (unsigned long long)st.new_connections);
        res_free(&r);
        t_close(&x);
    }
}

/* Requests that fail or finish fast still report from the loop. */
static void test_callbacks_deferred(void **state)
{
    world *w = *state;
    t x;
    t_open(&x, w->plain.kc, NULL);
    res a = { 0 }, b = { 0 };
    int starting = 1;
    a.starting = b.starting = &starting;
    cu_kreq *ra = cu_kclient_request(x.c, "GET", "/version", NULL, 0, NULL, on_done, &a);
    cu_kreq *rb = cu_kclient_request(x.c, "GET", "/healthz", NULL, 0, NULL, on_done, &b);
    assert_non_null(ra);
    assert_non_null(rb);
    /* cancelling before the loop ran still reports later, not now */
    cu_kclient_cancel(rb);
    assert_int_equal(b.calls, 0);
    starting = 0;
    assert_true(run_until(&x, &a.done, 10));
    assert_true(run_until(&x, &b.done, 10));
    assert_int_equal(a.code, 200);
    assert_string_equal(b.error, "cancelled");
    assert_false(a.sync_violation || b.sync_violation);
    assert_int_equal(b.calls, 1);
    /* bad arguments are refused up front, with no callback */
    assert_null(cu_kclient_request(x.c, "BREW", "/x", NULL, 0, NULL, on_done, &a));
    assert_null(cu_kclient_request(x.c, "GET", "no-slash", NULL, 0, NULL, on_done, &a));
    res_free(&a);
    res_free(&b);
    t_close(&x);
}

static void test_rate_limiter(void **state)
{
    world *w = *state;
    static const struct {
        double qps;
        int burst, n;
        double min_s, max_s;
    } cases[] = {
        { 5, 2, 7, 1.0, 2.5 },  /* 5 requests beyond the burst at 5/s: >= 1 s */
        { 4, 1, 5, 1.0, 2.5 },  /* 4 beyond the burst at 4/s */
        { 5, 10, 7, 0.0, 0.6 }, /* all inside the burst: no waiting */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cu_kclient_opts o = { .qps = cases[i].qps, .burst = cases[i].burst };
        t x;
        t_open(&x, w->plain.kc, &o);
        res r[16];
        memset(r, 0, sizeof r);
        double t0 = now_s();
        for (int k = 0; k < cases[i].n; k++)
            assert_non_null(cu_kclient_request(x.c, "GET", "/api/v1/namespaces", NULL, 0, NULL,
                                               on_done, &r[k]));
        double last = 0;
        for (int k = 0; k < cases[i].n; k++) {
            assert_true(run_until(&x, &r[k].done, 10));
            assert_int_equal(r[k].code, 200);
            if (r[k].at > last)
                last = r[k].at;
        }
        double el = last - t0;
        if (el < cases[i].min_s - 0.05 || el > cases[i].max_s)
            fail_msg("qps %.0f burst %d n %d: took %.3f s, want %.2f..%.2f", cases[i].qps,
                     cases[i].burst, cases[i].n, el, cases[i].min_s, cases[i].max_s);
        cu_kclient_stats st;
        cu_kclient_stats_get(x.c, &st);
        if (cases[i].min_s > 0)
            assert_true(st.throttled_ms >= 900);
        for (int k = 0; k < cases[i].n; k++)
            res_free(&r[k]);
        t_close(&x);
    }
}

static void test_retry_429_retry_after(void **state)
{
    world *w = *state;
    t x;
    t_open(&x, w->tls.kc, NULL);
    fault(&x, "{\"respond\":{\"match\":\"GET .*/configmaps.*\",\"code\":429,\"times\":2,"
              "\"retryAfter\":1}}");
    res r = { 0 };
    double t0 = now_s();
    call(&x, "GET", "/api/v1/namespaces/default/configmaps", NULL, NULL, &r);
    double el = now_s() - t0;
    assert_int_equal(r.code, 200);
    assert_int_equal(r.retries, 2);
    if (el < 2.0 || el > 4.0)
        fail_msg("two Retry-After: 1 took %.3f s", el);
    cu_kclient_stats st;
    cu_kclient_stats_get(x.c, &st);
    assert_int_equal(st.by_code[4], 2);
    assert_int_equal(st.retries, 2);
    fault(&x, "{\"clear\":true}");
    res_free(&r);
    t_close(&x);
}

static void test_retry_5xx(void **state)
{
    world *w = *state;
    static const struct {
        const char *fault;
        int max_retries, want_code, want_retries;
    } cases[] = {
        { "{\"respond\":{\"match\":\"GET .*/configmaps$\",\"code\":500,\"times\":2}}", 5, 200, 2 },
        { "{\"respond\":{\"match\":\"GET .*/configmaps$\",\"code\":503,\"times\":1}}", 5, 200, 1 },
        /* the budget runs out: the last 500 is the answer */
        { "{\"respond\":{\"match\":\"GET .*/configmaps$\",\"code\":500,\"times\":3}}", 2, 500, 2 },
        /* 409 is the caller's business: no retry */
        { "{\"respond\":{\"match\":\"GET .*/configmaps$\",\"code\":409,\"times\":1}}", 5, 409, 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cu_kclient_opts o = { .max_retries = cases[i].max_retries, .jitter_seed = 42 };
        t x;
        t_open(&x, w->plain.kc, &o);
        fault(&x, "{\"clear\":true}");
        fault(&x, cases[i].fault);
        res r = { 0 };
        call(&x, "GET", "/api/v1/namespaces/default/configmaps", NULL, NULL, &r);
        if (r.code != cases[i].want_code || r.retries != cases[i].want_retries)
            fail_msg("%s: code %d retries %d, want %d/%d", cases[i].fault, r.code, r.retries,
                     cases[i].want_code, cases[i].want_retries);
        fault(&x, "{\"clear\":true}");
        res_free(&r);
        t_close(&x);
    }
}

static int free_port(void)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { 0 };
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(s, (struct sockaddr *)&a, sizeof a);
    socklen_t l = sizeof a;
    getsockname(s, (struct sockaddr *)&a, &l);
    close(s); /* nothing listens there now */
    return ntohs(a.sin_port);
}

static void test_connection_refused(void **state)
{
    world *w = *state;
    char kc[600];
    snprintf(kc, sizeof kc, "%s/refused.kubeconfig", w->dir);
    FILE *f = fopen(kc, "w");
    fprintf(f,
            "clusters:\n- name: c\n  cluster: {server: 'http://127.0.0.1:%d'}\n"
            "contexts:\n- name: x\n  context: {cluster: c}\ncurrent-context: x\n",
            free_port());
    fclose(f);
    cu_kclient_opts o = { .max_retries = 3, .jitter_seed = 7 };
    t x;
    t_open(&x, kc, &o);
    res r = { 0 };
    double t0 = now_s();
    call(&x, "GET", "/api/v1/namespaces", NULL, NULL, &r);
    double el = now_s() - t0;
    assert_int_equal(r.code, 0);
    assert_non_null(r.error);
    assert_int_equal(r.retries, 3);
    /* backoff 200, 400, 800 ms with equal jitter: at least 700 ms */
    if (el < 0.7 || el > 3.0)
        fail_msg("3 retries took %.3f s", el);
    cu_kclient_stats st;
    cu_kclient_stats_get(x.c, &st);
    assert_int_equal(st.by_code[0], 4);
    assert_int_equal(st.requests, 4);
    /* a POST is retried too: nothing reached a server */
    call(&x, "POST", "/api/v1/namespaces", "{}", NULL, &r);
    assert_int_equal(r.retries, 3);
    res_free(&r);
    t_close(&x);
}

static void test_request_timeout(void **state)
{
    world *w = *state;
    cu_kclient_opts o = { .timeout_ms = 300 };
    t x;
    t_open(&x, w->plain.kc, &o);
    fault(&x, "{\"delayMs\":1500,\"match\":\"GET .*/configmaps/slow$\",\"times\":1}");
    res r = { 0 };
    double t0 = now_s();
    call(&x, "GET", "/api/v1/namespaces/default/configmaps/slow", NULL, NULL, &r);
    double el = now_s() - t0;
    assert_int_equal(r.code, 0);
    assert_non_null(r.error);
    if (!strstr(r.error, "timed out"))
        fail_msg("error \"%s\"", r.error);
    assert_int_equal(r.retries, 0);
    if (el < 0.25 || el > 1.2)
        fail_msg("a 300 ms timeout took %.3f s", el);
    /* the client is still fine afterwards */
    call(&x, "GET", "/version", NULL, NULL, &r);
    assert_int_equal(r.code, 200);
    fault(&x, "{\"clear\":true}");
    res_free(&r);
    t_close(&x);
}

static char *big_configmap(const char *name, size_t n)
{
    char *s = malloc(n + 256);
    size_t h = (size_t)sprintf(
        s,
        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"%s\"},"
        "\"data\":{\"blob\":\"",
        name);
    for (size_t i = 0; i < n; i++)
        s[h + i] = (char)('a' + i % 26);
    strcpy(s + h + n, "\"}}");
    return s;
}

static void test_body_cap(void **state)
{
    world *w = *state;
    t x;
    t_open(&x, w->plain.kc, NULL);
    res r = { 0 };
    char *cm = big_configmap("capped", 4000);
    call(&x, "POST", "/api/v1/namespaces/default/configmaps", cm, NULL, &r);
    assert_int_equal(r.code, 201);
    free(cm);
    call(&x, "GET", "/api/v1/namespaces/default/configmaps/capped", NULL, NULL, &r);
    assert_int_equal(r.code, 200);
    size_t full = strlen(r.body);
    assert_true(full > 4000);
    t_close(&x);

    static const struct {
        size_t cap;
        int ok;
    } cases[] = { { 1024, 0 }, { 4000, 0 }, { 0, 1 }, { 1 << 20, 1 } };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cu_kclient_opts o = { .max_body = cases[i].cap };
        t_open(&x, w->plain.kc, &o);
        call(&x, "GET", "/api/v1/namespaces/default/configmaps/capped", NULL, NULL, &r);
        if (cases[i].ok) {
            assert_int_equal(r.code, 200);
            assert_int_equal(strlen(r.body), full);
        } else {
            assert_int_equal(r.code, 0);
            assert_non_null(r.error);
            assert_non_null(strstr(r.error, "response body exceeds"));
            assert_int_equal(r.retries, 0);
        }
        t_close(&x);
    }
    res_free(&r);
}

/* ---------------- watches ---------------- */

typedef struct wstate {
    res fin; /* first: on_done gets the wstate as its res */
    t *x;
    int lines, stop_after_name, got_big, got_new, posted;
    size_t big_len;
    char seen_new[64];
    res post;
    int bad_json;
} wstate;

static int on_line(cu_kclient *c, const char *line, size_t len, void *ud)
{
    (void)c;
    wstate *s = ud;
    s->lines++;
    if (line[len] != '\0' || memchr(line, '\n', len))
        s->bad_json = 1;
    json_object *o = json_tokener_parse(line);
    if (!o) {
        s->bad_json = 1;
        return 0;
    }
    const char *type = json_str(o, "type");
    const char *name = json_str(o, "object.metadata.name");
    if (type && name && strcmp(type, "ADDED") == 0) {
        if (strcmp(name, "watch-big") == 0) {
            s->got_big = 1;
            s->big_len = strlen(json_str(o, "object.data.blob"));
        }
        if (strcmp(name, "watch-new") == 0)
            s->got_new = 1;
    }
    json_object_put(o);
    if (s->got_big && !s->posted) {
        /* start another request from inside the stream callback */
        s->posted = 1;
        const char *cm = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
                         "\"metadata\":{\"name\":\"watch-new\"}}";
        if (!cu_kclient_request(s->x->c, "POST", "/api/v1/namespaces/default/configmaps", cm,
                                strlen(cm), NULL, on_done, &s->post))
            s->bad_json = 1;
    }
    return s->got_new ? 1 : 0; /* stop once the new object was seen */
}

static void test_watch_stream(void **state)
{
    world *w = *state;
    t x;
    t_open(&x, w->plain.kc, NULL);
    res r = { 0 };
    /* 200 KB in one event: curl hands it over in many pieces */
    char *cm = big_configmap("watch-big", 200000);
    call(&x, "POST", "/api/v1/namespaces/default/configmaps", cm, NULL, &r);
    assert_int_equal(r.code, 201);
    free(cm);
    wstate s;
    memset(&s, 0, sizeof s);
    s.x = &x;
    int starting = 1;
    s.fin.starting = &starting;
    cu_kreq *wr = cu_kclient_stream(x.c, "/api/v1/namespaces/default/configmaps?watch=true",
                                    on_line, on_done, &s);
    starting = 0;
    assert_non_null(wr);
    assert_true(run_until(&x, &s.fin.done, 20));
    assert_false(s.bad_json);
    assert_true(s.got_big);
    assert_int_equal(s.big_len, 200000);
    assert_true(s.got_new);
    /* the watch event may come before the POST's own answer */
    assert_true(run_until(&x, &s.post.done, 10));
    assert_int_equal(s.post.code, 201);
    /* stopped by the callback: a normal end */
    assert_int_equal(s.fin.code, 200);
    assert_null(s.fin.error);
    assert_false(s.fin.sync_violation);
    res_free(&s.fin);
    res_free(&s.post);

    /* the server ends the watch (timeoutSeconds): done with 200, no error */
    memset(&s, 0, sizeof s);
    s.x = &x;
    s.posted = 1;
    double t0 = now_s();
    assert_non_null(cu_kclient_stream(x.c,
                                      "/api/v1/namespaces/kube-system/configmaps?watch=true&"
                                      "timeoutSeconds=1",
                                      on_line, on_done, &s));
    assert_true(run_until(&x, &s.fin.done, 10));
    assert_int_equal(s.fin.code, 200);
    assert_null(s.fin.error);
    assert_true(now_s() - t0 >= 0.9);
    res_free(&s.fin);

    /* a watch that fails to open hands over the Status body */
    memset(&s, 0, sizeof s);
    assert_non_null(cu_kclient_stream(x.c, "/api/v1/namespaces/default/nosuchthings?watch=true",
                                      on_line, on_done, &s));
    assert_true(run_until(&x, &s.fin.done, 10));
    assert_int_equal(s.fin.code, 404);
    assert_int_equal(s.lines, 0);
    assert_non_null(strstr(s.fin.body, "NotFound"));
    res_free(&s.fin);
    res_free(&r);
    t_close(&x);

    /* a line over max_line ends the watch with an error naming the cap */
    cu_kclient_opts o = { .max_line = 50000 };
    t_open(&x, w->plain.kc, &o);
    memset(&s, 0, sizeof s);
    s.x = &x;
    s.posted = 1;
    assert_non_null(cu_kclient_stream(x.c, "/api/v1/namespaces/default/configmaps?watch=true",
                                      on_line, on_done, &s));
    assert_true(run_until(&x, &s.fin.done, 10));
    assert_int_equal(s.fin.code, 0);
    assert_non_null(s.fin.error);
    assert_non_null(strstr(s.fin.error, "watch line exceeds the 50000-byte limit"));
    assert_false(s.got_big);
    res_free(&s.fin);
    t_close(&x);
}

typedef struct cstate {
    cu_kreq *self;
    int lines;
} cstate;

static int cancel_on_first_line(cu_kclient *c, const char *line, size_t len, void *ud)
{
    (void)c;
    (void)line;
    (void)len;
    cstate *s = *(cstate **)ud;
    s->lines++;
    if (s->lines == 1)
        cu_kclient_cancel(s->self);
    return 0;
}

typedef struct cbox {
    cstate *cs; /* first: on_line reads it */
    res fin;
} cbox;

static void on_done_box(cu_kclient *c, const cu_kresp *r, void *ud)
{
    on_done(c, r, &((cbox *)ud)->fin);
}

static void callp(t *x, const char *path, cu_patch_type pt, const char *body, const char *fm,
                  int force, res *out)
{
    res_free(out);
    int starting = 1;
    out->starting = &starting;
    cu_kreq *r = cu_kclient_patch(x->c, path, pt, body, strlen(body), fm, force, on_done, out);
    starting = 0;
    assert_non_null(r);
    if (!run_until(x, &out->done, 30))
        fail_msg("PATCH %s did not finish", path);
    assert_int_equal(out->calls, 1);
}

/* The PATCH flavours against the embedded API server: a merge patch with a
 * stale resourceVersion precondition is refused (409), a JSON patch whose
 * "test" op fails changes nothing, server-side apply records its field
 * manager and needs force to take a field another manager owns. */
static void test_patch_flavours(void **state)
{
    world *w = *state;
    t x;
    t_open(&x, w->plain.kc, NULL);
    res r = { 0 };
    const char *path = "/api/v1/namespaces/default/configmaps/patchy";
    call(&x, "POST", "/api/v1/namespaces/default/configmaps",
         "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"patchy\"},"
         "\"data\":{\"k\":\"v1\"}}",
         NULL, &r);
    assert_int_equal(r.code, 201);
    json_object *o = json_tokener_parse(r.body);
    char rv[64];
    snprintf(rv, sizeof rv, "%s", json_str(o, "metadata.resourceVersion"));
    json_object_put(o);

    /* merge with the current resourceVersion: applied */
    char body[512];
    snprintf(body, sizeof body,
             "{\"metadata\":{\"resourceVersion\":\"%s\"},\"data\":{\"k\":\"v2\"}}", rv);
    callp(&x, path, CU_PATCH_MERGE, body, NULL, 0, &r);
    assert_int_equal(r.code, 200);
    /* again with the now stale one: a conflict, nothing changes */
    snprintf(body, sizeof body,
             "{\"metadata\":{\"resourceVersion\":\"%s\"},\"data\":{\"k\":\"v3\"}}", rv);
    callp(&x, path, CU_PATCH_MERGE, body, NULL, 0, &r);
    assert_int_equal(r.code, 409);
    call(&x, "GET", path, NULL, NULL, &r);
    o = json_tokener_parse(r.body);
    assert_string_equal(json_str(o, "data.k"), "v2");
    json_object_put(o);

    /* JSON patch: a failing test op guards the replace */
    callp(&x, path, CU_PATCH_JSON,
          "[{\"op\":\"test\",\"path\":\"/data/k\",\"value\":\"v1\"},"
          "{\"op\":\"replace\",\"path\":\"/data/k\",\"value\":\"v4\"}]",
          NULL, 0, &r);
    assert_true(r.code == 422 || r.code == 409);
    callp(&x, path, CU_PATCH_JSON,
          "[{\"op\":\"test\",\"path\":\"/data/k\",\"value\":\"v2\"},"
          "{\"op\":\"replace\",\"path\":\"/data/k\",\"value\":\"v4\"}]",
          NULL, 0, &r);
    assert_int_equal(r.code, 200);
    o = json_tokener_parse(r.body);
    assert_string_equal(json_str(o, "data.k"), "v4");
    json_object_put(o);

    /* server-side apply (the embedded server's apply is simplified: no
     * managedFields, so no ownership conflicts to test here) */
    const char *applied = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
                          "\"metadata\":{\"name\":\"patchy\"},\"data\":{\"owned\":\"a\"}}";
    callp(&x, path, CU_PATCH_APPLY, applied, "cueue test", 1, &r);
    assert_int_equal(r.code, 200);
    o = json_tokener_parse(r.body);
    assert_string_equal(json_str(o, "data.owned"), "a");
    assert_string_equal(json_str(o, "data.k"), "v4"); /* apply merges, keeps others' fields */
    json_object_put(o);

    /* bad arguments: apply without a manager, a path with a query */
    assert_null(cu_kclient_patch(x.c, path, CU_PATCH_APPLY, "{}", 2, NULL, 0, on_done, &r));
    assert_null(
        cu_kclient_patch(x.c, "/api/v1/x?y=1", CU_PATCH_MERGE, "{}", 2, NULL, 0, on_done, &r));
    assert_string_equal(cu_patch_content_type(CU_PATCH_STRATEGIC),
                        "application/strategic-merge-patch+json");
    res_free(&r);
    t_close(&x);
}

static void test_cancel(void **state)
{
    world *w = *state;
    t x;
    t_open(&x, w->plain.kc, NULL);
    /* an in-flight request (the server holds it 2 s) */
    fault(&x, "{\"delayMs\":2000,\"match\":\"GET .*/configmaps/held$\",\"times\":1}");
    res r = { 0 };
    cu_kreq *q = cu_kclient_request(x.c, "GET", "/api/v1/namespaces/default/configmaps/held", NULL,
                                    0, NULL, on_done, &r);
    double t0 = now_s();
    int never = 0;
    run_until(&x, &never, 0.2); /* let it reach the server */
    assert_false(r.done);
    cu_kclient_cancel(q);
    assert_false(r.done);
    assert_true(run_until(&x, &r.done, 5));
    assert_string_equal(r.error, "cancelled");
    assert_int_equal(r.code, 0);
    assert_true(now_s() - t0 < 1.5);
    assert_int_equal(r.calls, 1);

    /* a watch cancelled from its own line callback */
    cstate cs = { 0 };
    cbox box = { &cs, { 0 } };
    cs.self = cu_kclient_stream(x.c, "/api/v1/namespaces/default/configmaps?watch=true",
                                cancel_on_first_line, on_done_box, &box);
    assert_non_null(cs.self);
    assert_true(run_until(&x, &box.fin.done, 10));
    assert_string_equal(box.fin.error, "cancelled");
    assert_int_equal(cs.lines, 1);
    assert_int_equal(box.fin.calls, 1);

    /* a retry waiting in backoff */
    fault(&x, "{\"respond\":{\"match\":\"GET .*/configmaps/later$\",\"code\":429,\"times\":1,"
              "\"retryAfter\":5}}");
    res_free(&r);
    q = cu_kclient_request(x.c, "GET", "/api/v1/namespaces/default/configmaps/later", NULL, 0, NULL,
                           on_done, &r);
    t0 = now_s();
    run_until(&x, &never, 0.5);
    assert_false(r.done);
    cu_kclient_cancel(q);
    assert_true(run_until(&x, &r.done, 5));
    assert_string_equal(r.error, "cancelled");
    assert_true(now_s() - t0 < 2.0);
    fault(&x, "{\"clear\":true}");
    res_free(&r);
    res_free(&box.fin);
    t_close(&x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_http),  cmocka_unit_test(test_roundtrip_tls_bearer),
        cmocka_unit_test(test_tls_server_name), cmocka_unit_test(test_exec_plugin_against_server),
        cmocka_unit_test(test_keepalive),       cmocka_unit_test(test_callbacks_deferred),
        cmocka_unit_test(test_rate_limiter),    cmocka_unit_test(test_retry_429_retry_after),
        cmocka_unit_test(test_retry_5xx),       cmocka_unit_test(test_connection_refused),
        cmocka_unit_test(test_request_timeout), cmocka_unit_test(test_body_cap),
        cmocka_unit_test(test_watch_stream),    cmocka_unit_test(test_patch_flavours),
        cmocka_unit_test(test_cancel),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
