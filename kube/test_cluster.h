/*
 * test_cluster.h - the shared harness of the kube/ tests that need a real
 * `cueue cluster` process: starts one (cueue found next to the test
 * executable or in $CUEUE_BIN), waits for its kubeconfig, and gives a
 * client on libev's default loop. Include after defining TEST_NAME
 * ("test_informer") and after the system and cmocka headers.
 */
#ifndef CU_TEST_CLUSTER_H
#define CU_TEST_CLUSTER_H

#include "cu_clock.h"

typedef struct cluster {
    pid_t pid;
    char dir[64], kc[128], log[128];
    cu_kconfig *cfg;
    cu_kclient *c;
    struct ev_loop *loop;
} cluster;

static void sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

static void cueue_bin(char *out, size_t n)
{
    const char *env = getenv("CUEUE_BIN");
    if (env && *env) {
        snprintf(out, n, "%s", env);
        return;
    }
    char self[512];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0) {
        snprintf(out, n, "cueue");
        return;
    }
    self[len] = 0;
    char *slash = strrchr(self, '/');
    if (slash)
        *slash = 0;
    snprintf(out, n, "%s/cueue", self);
}

static void tick_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)w;
    (void)revents;
}

/* Runs the loop until pred(ud) holds or timeout_ms passes; returns pred. */
static int run_until(cluster *k, int (*pred)(void *), void *ud, int timeout_ms)
{
    ev_timer t;
    ev_timer_init(&t, tick_cb, 0.01, 0.01);
    ev_timer_start(k->loop, &t);
    int64_t end = cu_clock_mono_ms() + timeout_ms;
    int ok;
    while (!(ok = pred ? pred(ud) : 0) && cu_clock_mono_ms() < end)
        ev_run(k->loop, EVRUN_ONCE);
    ev_timer_stop(k->loop, &t);
    return ok;
}

static void run_for(cluster *k, int ms) { run_until(k, NULL, NULL, ms); }

typedef struct sreq {
    int done, code;
    char *body;
} sreq;

static void sreq_done(cu_kclient *c, const cu_kresp *r, void *ud)
{
    sreq *s = ud;
    (void)c;
    s->done = 1;
    s->code = r->code;
    s->body = r->body ? strdup(r->body) : NULL;
}

static int sreq_is_done(void *ud) { return ((sreq *)ud)->done; }

/* A request run to completion; returns the status, *out (if asked) the
 * body (caller frees). */
static int kreq(cluster *k, const char *method, const char *path, const char *body, char **out)
{
    sreq s = { 0, 0, NULL };
    const char *ct = !body                          ? NULL
                     : strcmp(method, "PATCH") == 0 ? "application/merge-patch+json"
                                                    : "application/json";
    cu_kreq *r =
        cu_kclient_request(k->c, method, path, body, body ? strlen(body) : 0, ct, sreq_done, &s);
    assert_non_null(r);
    assert_true(run_until(k, sreq_is_done, &s, 15000));
    if (out)
        *out = s.body;
    else
        free(s.body);
    return s.code;
}

static void fault(cluster *k, const char *cmd)
{
    char *b = NULL;
    int code = kreq(k, "POST", "/cueue/faults", cmd, &b);
    if (code != 200)
        fail_msg("fault %s: HTTP %d: %s", cmd, code, b ? b : "");
    free(b);
}

static int cluster_start(cluster *k)
{
    memset(k, 0, sizeof *k);
    snprintf(k->dir, sizeof k->dir, "/tmp/cu_" TEST_NAME "_XXXXXX");
    if (!mkdtemp(k->dir))
        return -1;
    snprintf(k->kc, sizeof k->kc, "%s/kubeconfig", k->dir);
    snprintf(k->log, sizeof k->log, "%s/cluster.log", k->dir);
    char bin[600];
    cueue_bin(bin, sizeof bin);
    if (access(bin, X_OK) != 0) {
        fprintf(stderr,
                TEST_NAME ": no cueue binary at %s (build target cueue or set "
                          "CUEUE_BIN)\n",
                bin);
        return -1;
    }
    k->pid = fork();
    if (k->pid < 0)
        return -1;
    if (k->pid == 0) {
        int fd = open(k->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        execl(bin, "cueue", "cluster", "--listen", "127.0.0.1:0", "--kubeconfig-out", k->kc,
              "--admin", (char *)NULL);
        _exit(127);
    }
    int64_t end = cu_clock_mono_ms() + 15000;
    while (access(k->kc, R_OK) != 0) {
        int st;
        if (waitpid(k->pid, &st, WNOHANG) == k->pid || cu_clock_mono_ms() > end) {
            fprintf(stderr, TEST_NAME ": cueue cluster did not start (log %s)\n", k->log);
            k->pid = 0;
            return -1;
        }
        sleep_ms(20);
    }
    cu_diag d;
    cu_diag_init(&d);
    k->cfg = cu_kconfig_load(k->kc, NULL, &d);
    k->loop = EV_DEFAULT;
    cu_kclient_opts o;
    memset(&o, 0, sizeof o);
    o.timeout_ms = 10000;
    o.max_retries = 2;
    k->c = k->cfg ? cu_kclient_new(k->loop, k->cfg, &o, &d) : NULL;
    for (size_t i = 0; i < d.n; i++)
        fprintf(stderr, TEST_NAME ": %s\n", d.msgs[i]);
    cu_diag_free(&d);
    return k->c ? 0 : -1;
}

static void cluster_stop(cluster *k)
{
    if (k->c)
        cu_kclient_free(k->c);
    if (k->cfg)
        cu_kconfig_free(k->cfg);
    if (k->pid > 0) {
        kill(k->pid, SIGTERM);
        waitpid(k->pid, NULL, 0);
    }
    unlink(k->kc);
    unlink(k->log);
    rmdir(k->dir);
}

static int group_setup(void **state)
{
    static cluster k;
    if (cluster_start(&k) != 0) {
        cluster_stop(&k);
        return -1;
    }
    *state = &k;
    return 0;
}

/* Each test starts without faults, whatever the one before left. */
static int clear_faults(void **state)
{
    fault(*state, "{\"clear\":true}");
    return 0;
}

static int group_teardown(void **state)
{
    cluster_stop(*state);
    return 0;
}

#endif
