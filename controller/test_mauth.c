/*
 * test_mauth.c - secure metrics' authentication and authorization
 * (cu_mauth.h) end to end inside one process: a cu_httpd with the
 * cu_mauth gate, the real REST client (cu_kclient) talking to a fake API
 * server here (plain sockets, answers each TokenReview and
 * SubjectAccessReview after a delay, records them), and plain HTTP
 * clients. Checks the statuses (no token, bad token, not allowed,
 * allowed, a failing review), that answers are cached for their TTLs
 * (short ones here) and that a failure is not, and that concurrent
 * requests with one token share one review of each kind.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cu_mauth.h"
#include "cu_visibility.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- the fake API server ---- */

#define MAXC 16

typedef struct fconn {
    int fd;
    char buf[8192];
    size_t len;
    double answer_at; /* 0: no complete request yet */
    char reply[1024];
} fconn;

typedef struct fake {
    int lfd, port;
    fconn c[MAXC];
    int trs, sars; /* reviews received */
    char last_sar[4096];
    double delay;
} fake;

/* The answer to one review body. Tokens: "good" (alice, group
 * readers), "bad" (unknown), "boom" (the API fails: 500). alice may get
 * /metrics only. */
static void answer(fake *f, fconn *c, const char *target, const char *body)
{
    int code = 201;
    char json[600];
    if (strstr(target, "tokenreviews")) {
        f->trs++;
        if (strstr(body, "\"token\":\"root\"")) {
            snprintf(json, sizeof(json),
                     "{\"kind\":\"TokenReview\",\"status\":{\"authenticated\":"
                     "true,\"user\":{\"username\":\"root\",\"groups\":"
                     "[\"system:masters\",\"system:authenticated\"]}}}");
        } else if (strstr(body, "\"token\":\"good")) {
            snprintf(json, sizeof(json),
                     "{\"kind\":\"TokenReview\",\"status\":{\"authenticated\":"
                     "true,\"user\":{\"username\":\"alice\",\"uid\":\"u1\",\"groups\":"
                     "[\"readers\",\"system:authenticated\"]}}}");
        } else if (strstr(body, "\"token\":\"boom\"")) {
            code = 500;
            snprintf(json, sizeof(json), "{\"kind\":\"Status\",\"code\":500}");
        } else {
            snprintf(json, sizeof(json),
                     "{\"kind\":\"TokenReview\",\"status\":{\"authenticated\":false,\"user\":{}}}");
        }
    } else {
        f->sars++;
        snprintf(f->last_sar, sizeof(f->last_sar), "%s", body);
        /* the spec names the user, the groups and the path */
        int ok = strstr(body, "\"user\":\"alice\"") && strstr(body, "\"readers\"") &&
                 strstr(body, "\"uid\":\"u1\"") &&
                 strstr(body, "\"nonResourceAttributes\":{\"path\":\"/metrics\",\"verb\":\"get\"}");
        snprintf(json, sizeof(json),
                 "{\"kind\":\"SubjectAccessReview\",\"status\":{\"allowed\":%s}}",
                 ok ? "true" : "false");
    }
    snprintf(c->reply, sizeof(c->reply),
             "HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
             code, strlen(json), json);
    c->answer_at = now_s() + f->delay;
}

static void fake_poll(fake *f)
{
    int nfd = accept(f->lfd, NULL, NULL);
    if (nfd >= 0) {
        fcntl(nfd, F_SETFL, fcntl(nfd, F_GETFL) | O_NONBLOCK);
        int i = 0;
        while (i < MAXC && f->c[i].fd >= 0)
            i++;
        assert_true(i < MAXC);
        memset(&f->c[i], 0, sizeof(f->c[i]));
        f->c[i].fd = nfd;
    }
    for (int i = 0; i < MAXC; i++) {
        fconn *c = &f->c[i];
        if (c->fd < 0)
            continue;
        if (c->answer_at != 0) {
            if (now_s() >= c->answer_at) {
                assert_int_equal(send(c->fd, c->reply, strlen(c->reply), MSG_NOSIGNAL),
                                 (ssize_t)strlen(c->reply));
                c->answer_at = 0;
            }
            continue;
        }
        ssize_t n = recv(c->fd, c->buf + c->len, sizeof(c->buf) - 1 - c->len, 0);
        if (n == 0 || (n < 0 && errno != EAGAIN)) {
            close(c->fd);
            c->fd = -1;
            continue;
        }
        if (n < 0)
            continue;
        c->len += (size_t)n;
        c->buf[c->len] = 0;
        char *end = strstr(c->buf, "\r\n\r\n");
        const char *cl = strstr(c->buf, "Content-Length: ");
        if (!end || !cl)
            continue;
        size_t blen = (size_t)atol(cl + 16), hlen = (size_t)(end - c->buf) + 4;
        if (c->len < hlen + blen)
            continue;
        char target[256];
        assert_int_equal(sscanf(c->buf, "POST %255s", target), 1);
        char body[4096];
        snprintf(body, sizeof(body), "%.*s", (int)blen, end + 4);
        answer(f, c, target, body);
        memmove(c->buf, c->buf + hlen + blen, c->len - hlen - blen);
        c->len -= hlen + blen;
    }
}

/* ---- the fixture ---- */

typedef struct fix {
    struct ev_loop *loop;
    fake f;
    char kc[64];
    cu_kconfig *kcfg;
    cu_kclient *kc_;
    cu_mauth *a;
    cu_httpd *s;
    int port;
    int calls;
    cu_mauth *extra; /* freed after the client */
} fix;

static int handler(void *ud, const char *path, const char *query, const char *accept, cu_buf *body,
                   const char **ctype)
{
    (void)query;
    (void)accept;
    (void)ctype;
    ((fix *)ud)->calls++;
    cu_buf_printf(body, "ok %s\n", path);
    return 200;
}

static int setup_ttl(void **state, double ttl)
{
    fix *x = calloc(1, sizeof(*x));
    assert_non_null(x);
    x->loop = ev_loop_new(EVFLAG_AUTO);
    x->f.delay = 0.15;
    for (int i = 0; i < MAXC; i++)
        x->f.c[i].fd = -1;
    x->f.lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    assert_int_equal(bind(x->f.lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(x->f.lfd, 16), 0);
    socklen_t sl = sizeof(sa);
    getsockname(x->f.lfd, (struct sockaddr *)&sa, &sl);
    x->f.port = ntohs(sa.sin_port);
    fcntl(x->f.lfd, F_SETFL, fcntl(x->f.lfd, F_GETFL) | O_NONBLOCK);
    snprintf(x->kc, sizeof(x->kc), "/tmp/cueue-test-mauth-XXXXXX");
    int fd = mkstemp(x->kc);
    assert_true(fd >= 0);
    FILE *k = fdopen(fd, "w");
    fprintf(k,
            "apiVersion: v1\nkind: Config\nclusters:\n- name: f\n  cluster: {server: "
            "'http://127.0.0.1:%d'}\ncontexts:\n- name: f\n  context: {cluster: f}\n"
            "current-context: f\n",
            x->f.port);
    fclose(k);
    cu_diag d;
    cu_diag_init(&d);
    x->kcfg = cu_kconfig_load(x->kc, NULL, &d);
    assert_non_null(x->kcfg);
    cu_kclient_opts ko = { .max_retries = 1 };
    x->kc_ = cu_kclient_new(x->loop, x->kcfg, &ko, &d);
    assert_non_null(x->kc_);
    cu_diag_free(&d);
    cu_mauth_opts mo = { .authn_ttl_s = ttl, .allow_ttl_s = ttl, .deny_ttl_s = ttl };
    x->a = cu_mauth_new(x->kc_, &mo);
    cu_httpd_opts ho = { .gate = cu_mauth_gate, .gate_ud = x->a };
    char err[300];
    x->s = cu_httpd_start_opts(x->loop, "127.0.0.1:0", "metrics", handler, x, &ho, err, sizeof(err),
                               &x->port);
    assert_non_null(x->s);
    cu_mauth_attach(x->a, x->s);
    *state = x;
    return 0;
}

static int setup(void **state) { return setup_ttl(state, 60); }

static int setup_short(void **state) { return setup_ttl(state, 0.5); }

static int teardown(void **state)
{
    fix *x = *state;
    cu_httpd_stop(x->s);
    cu_mauth_detach(x->a);
    cu_kclient_free(x->kc_);
    cu_mauth_free(x->a);
    cu_mauth_free(x->extra);
    cu_kconfig_free(x->kcfg);
    ev_loop_destroy(x->loop);
    for (int i = 0; i < MAXC; i++)
        if (x->f.c[i].fd >= 0)
            close(x->f.c[i].fd);
    close(x->f.lfd);
    unlink(x->kc);
    free(x);
    return 0;
}

static void pump(fix *x)
{
    ev_run(x->loop, EVRUN_NOWAIT);
    fake_poll(&x->f);
    poll(NULL, 0, 1);
}

/* ---- clients ---- */

static int cli_start(fix *x, const char *path, const char *token)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = { .sin_family = AF_INET,
                              .sin_port = htons((uint16_t)x->port),
                              .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    char req[512];
    if (token)
        snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n",
                 path, token);
    else
        snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path);
    assert_int_equal(send(fd, req, strlen(req), MSG_NOSIGNAL), (ssize_t)strlen(req));
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    return fd;
}

/* The status of the response on fd (and its body in out). */
static int cli_finish(fix *x, int fd, char *out, size_t n)
{
    char buf[4096];
    size_t len = 0;
    for (double end = now_s() + 10; now_s() < end;) {
        ssize_t k = recv(fd, buf + len, sizeof(buf) - 1 - len, 0);
        if (k > 0) {
            len += (size_t)k;
            buf[len] = 0;
            char *e = strstr(buf, "\r\n\r\n");
            const char *cl = strstr(buf, "Content-Length: ");
            if (e && cl && len >= (size_t)(e - buf) + 4 + (size_t)atol(cl + 16)) {
                close(fd);
                int code = 0;
                sscanf(buf, "HTTP/1.%*d %d", &code);
                snprintf(out, n, "%s", e + 4);
                return code;
            }
            continue;
        }
        if (k == 0)
            fail_msg("closed before a response");
        pump(x);
    }
    fail_msg("no response within 10 s");
    return 0;
}

static int get(fix *x, const char *path, const char *token, char *out, size_t n)
{
    return cli_finish(x, cli_start(x, path, token), out, n);
}

/* ---- tests ---- */

static void test_statuses(void **state)
{
    fix *x = *state;
    char body[256];
    assert_int_equal(get(x, "/metrics", NULL, body, sizeof(body)), 401);
    assert_string_equal(body, "Unauthorized\n");
    assert_int_equal(get(x, "/metrics", "", body, sizeof(body)), 401);
    assert_int_equal(x->f.trs, 0); /* no token: no review */
    assert_int_equal(get(x, "/metrics", "bad", body, sizeof(body)), 401);
    assert_int_equal(x->f.trs, 1);
    assert_int_equal(get(x, "/metrics", "good", body, sizeof(body)), 200);
    assert_string_equal(body, "ok /metrics\n");
    assert_int_equal(get(x, "/debug/pending", "good", body, sizeof(body)), 403);
    assert_string_equal(body, "Authorization denied for user alice\n");
    assert_int_equal(x->f.trs, 2);
    assert_int_equal(x->f.sars, 2);
    /* a failing review: 500, and not cached */
    assert_int_equal(get(x, "/metrics", "boom", body, sizeof(body)), 500);
    assert_string_equal(body, "Authentication failed\n");
    assert_int_equal(get(x, "/metrics", "boom", body, sizeof(body)), 500);
    assert_true(x->f.trs >= 4);
    /* cached: the same answers without a review */
    int trs = x->f.trs, sars = x->f.sars;
    for (int i = 0; i < 10; i++) {
        assert_int_equal(get(x, "/metrics", "good", body, sizeof(body)), 200);
        assert_int_equal(get(x, "/debug/pending", "good", body, sizeof(body)), 403);
        assert_int_equal(get(x, "/metrics", "bad", body, sizeof(body)), 401);
    }
    assert_int_equal(x->f.trs, trs);
    assert_int_equal(x->f.sars, sars);
    assert_int_equal(x->calls, 11);
    /* bad, good, good's two paths, boom twice (the client retried each
     * 500 once: the fake counts HTTP attempts) */
    assert_int_equal(cu_mauth_reviews(x->a), 6);
}

/* Five requests with a new token at once: one TokenReview, one
 * SubjectAccessReview, five answers. */
static void test_concurrent_share_reviews(void **state)
{
    fix *x = *state;
    int fds[5];
    for (int i = 0; i < 5; i++)
        fds[i] = cli_start(x, "/metrics", "good");
    char body[256];
    for (int i = 0; i < 5; i++)
        assert_int_equal(cli_finish(x, fds[i], body, sizeof(body)), 200);
    assert_int_equal(x->f.trs, 1);
    assert_int_equal(x->f.sars, 1);
}

/* With TTLs of 0.5 s: after they pass, the next request is reviewed again. */
static void test_ttl(void **state)
{
    fix *x = *state;
    char body[256];
    assert_int_equal(get(x, "/metrics", "good", body, sizeof(body)), 200);
    assert_int_equal(get(x, "/metrics", "good", body, sizeof(body)), 200);
    assert_int_equal(x->f.trs, 1);
    assert_int_equal(x->f.sars, 1);
    for (double end = now_s() + 0.6; now_s() < end;)
        pump(x);
    assert_int_equal(get(x, "/metrics", "good", body, sizeof(body)), 200);
    assert_int_equal(x->f.trs, 2);
    assert_int_equal(x->f.sars, 2);
}

/* The server stops while a request waits for a review: it gets 503, and
 * the review's late answer decides nothing (ASan: no use after free). */
static void test_stop_while_reviewing(void **state)
{
    fix *x = *state;
    int fd = cli_start(x, "/metrics", "good");
    for (double end = now_s() + 0.05; now_s() < end;)
        pump(x);
    cu_httpd_stop(x->s);
    x->s = NULL;
    cu_mauth_detach(x->a);
    char buf[512];
    ssize_t n;
    for (double end = now_s() + 5;;) {
        n = recv(fd, buf, sizeof(buf) - 1, 0);
        if (n >= 0 || now_s() > end)
            break;
        pump(x);
    }
    assert_true(n > 0);
    buf[n] = 0;
    assert_non_null(strstr(buf, " 503 "));
    close(fd);
    for (double end = now_s() + 0.3; now_s() < end;)
        pump(x); /* the review completes with nobody to decide for */
}

/* The visibility API's use (cu_ctrlvis.c): a request-aware gate, the
 * resource attributes of the path in the SubjectAccessReview, refusals
 * as Status objects, and system:masters allowed without a review. */
static void test_resource_attributes(void **state)
{
    fix *x = *state;
    cu_mauth_opts mo = { .attrs = cu_vis_attrs,
                         .refuse = cu_vis_refuse,
                         .always_allow_group = "system:masters" };
    cu_mauth *a = cu_mauth_new(x->kc_, &mo);
    cu_httpd_opts ho = { .gate_req = cu_mauth_gate_req, .gate_ud = a, .gate_json = 1 };
    char err[300];
    int port = 0;
    cu_httpd *s = cu_httpd_start_opts(x->loop, "127.0.0.1:0", "visibility", handler, x, &ho, err,
                                      sizeof(err), &port);
    assert_non_null(s);
    cu_mauth_attach(a, s);
    int saved = x->port;
    x->port = port;
    char body[1024];
    const char *p = "/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/cq/pendingworkloads";
    assert_int_equal(get(x, p, "good", body, sizeof(body)), 403);
    assert_non_null(strstr(body, "\"kind\":\"Status\""));
    assert_non_null(strstr(body, "clusterqueues.visibility.kueue.x-k8s.io \\\"cq\\\" is "
                                 "forbidden: User \\\"alice\\\" cannot get resource"));
    assert_non_null(strstr(x->f.last_sar, "\"resourceAttributes\":{"));
    assert_non_null(strstr(x->f.last_sar, "\"subresource\":\"pendingworkloads\""));
    assert_non_null(strstr(x->f.last_sar, "\"name\":\"cq\""));
    assert_null(strstr(x->f.last_sar, "nonResourceAttributes"));
    int sars = x->f.sars;
    assert_int_equal(get(x, p, "root", body, sizeof(body)), 200);
    assert_int_equal(x->f.sars, sars); /* system:masters: no review */
    assert_int_equal(get(x, p, NULL, body, sizeof(body)), 401);
    assert_non_null(strstr(body, "\"reason\":\"Unauthorized\""));
    x->port = saved;
    cu_httpd_stop(s);
    cu_mauth_detach(a);
    /* the fixture's teardown frees the client, then this */
    x->extra = a;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_statuses, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_share_reviews, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ttl, setup_short, teardown),
        cmocka_unit_test_setup_teardown(test_resource_attributes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stop_while_reviewing, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
