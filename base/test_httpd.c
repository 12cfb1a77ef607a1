/*
 * test_httpd.c - the controller's HTTP servers (libmicrohttpd on a
 * libev loop): a server on a fresh loop with an echoing handler, clients
 * on plain non-blocking sockets, the loop pumped with EVRUN_NOWAIT while
 * a client waits. Status, body and Content-Type; the query string and
 * path passed as sent; Accept; 404 from the handler; 405 with Allow for
 * other methods; HEAD; a 2 MiB body; keep-alive; a slow client that
 * does not block others and is closed by the 5 s connection timeout; a
 * client gone mid-body; bad addresses; port 0 and address families;
 * stopping with open connections; 40 clients at once; 200 clients that
 * come and go (issue 10, H5) and slow clients sending a byte at a time.
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
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <pthread.h>

#include "cu_clock.h"
#include "cu_httpd.h"
#include "cu_tls.h"

#define BIG_LEN ((size_t)2 << 20)

/* ---- the handler ---- */

typedef struct echo {
    int calls;
} echo;

/* /big: 2 MiB of a pattern; /missing: 404; anything else: the path,
 * query and Accept it was given, one per line. */
static int echo_handler(void *ud, const char *path, const char *query, const char *accept,
                        cu_buf *body, const char **ctype)
{
    echo *e = ud;
    e->calls++;
    if (strcmp(path, "/big") == 0) {
        char chunk[4096];
        for (size_t i = 0; i < BIG_LEN; i += sizeof(chunk)) {
            for (size_t j = 0; j < sizeof(chunk); j++)
                chunk[j] = (char)('a' + (i + j) % 23);
            if (cu_buf_append(body, chunk, sizeof(chunk)) != CU_OK)
                return 500;
        }
        *ctype = "application/octet-stream";
        return 200;
    }
    if (strcmp(path, "/missing") == 0) {
        cu_buf_printf(body, "not found: %s\n", path);
        return 404;
    }
    cu_buf_printf(body, "path=%s\nquery=%s\naccept=%s\n", path, query, accept);
    *ctype = "text/x-echo; charset=utf-8";
    return 200;
}

/* ---- a server on its own loop ---- */

typedef struct fix {
    struct ev_loop *loop;
    cu_httpd *s;
    echo e;
    int port;
} fix;

static int setup(void **state)
{
    fix *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    f->loop = ev_loop_new(EVFLAG_AUTO);
    assert_non_null(f->loop);
    char err[300] = "";
    f->port = -1;
    f->s = cu_httpd_start(f->loop, "127.0.0.1:0", "test server", echo_handler, &f->e, err,
                          sizeof(err), &f->port);
    if (!f->s)
        fail_msg("start: %s", err);
    assert_true(f->port > 0 && f->port < 65536);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fix *f = *state;
    cu_httpd_stop(f->s);
    ev_loop_destroy(f->loop);
    free(f);
    return 0;
}

static double now_s(void) { return (double)cu_clock_mono_ns() / 1e9; }

/* Runs the loop once without blocking, then waits up to 2 ms for fd. */
static void pump(fix *f, int fd)
{
    ev_run(f->loop, EVRUN_NOWAIT);
    struct pollfd p = { .fd = fd, .events = POLLIN };
    poll(&p, fd >= 0 ? 1 : 0, 2);
}

static int cli_connect_to(int family, int port)
{
    int fd = socket(family, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    int rc;
    if (family == AF_INET6) {
        struct sockaddr_in6 a;
        memset(&a, 0, sizeof(a));
        a.sin6_family = AF_INET6;
        a.sin6_port = htons((uint16_t)port);
        a.sin6_addr = in6addr_loopback;
        rc = connect(fd, (struct sockaddr *)&a, sizeof(a));
    } else {
        struct sockaddr_in a;
        memset(&a, 0, sizeof(a));
        a.sin_family = AF_INET;
        a.sin_port = htons((uint16_t)port);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        rc = connect(fd, (struct sockaddr *)&a, sizeof(a));
    }
    assert_int_equal(rc, 0); /* loopback: the backlog takes it before MHD accepts */
    assert_int_equal(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK), 0);
    return fd;
}

static int cli_connect(fix *f) { return cli_connect_to(AF_INET, f->port); }

static void cli_send(fix *f, int fd, const char *req)
{
    size_t n = strlen(req), off = 0;
    double end = now_s() + 5;
    while (off < n) {
        ssize_t w = send(fd, req + off, n - off, MSG_NOSIGNAL);
        if (w > 0)
            off += (size_t)w;
        else if (w < 0 && errno != EAGAIN && errno != EINTR)
            fail_msg("send: %s", strerror(errno));
        else
            pump(f, fd);
        if (now_s() > end)
            fail_msg("send: not done within 5 s");
    }
}

typedef struct resp {
    int status;
    char head[4096]; /* status line and headers */
    char *body;
    size_t body_len;
    long clen; /* Content-Length, -1 when absent */
    int eof;   /* the server closed the connection */
} resp;

static void resp_free(resp *r)
{
    free(r->body);
    memset(r, 0, sizeof(*r));
}

/* The value of header name in r->head ("" when absent), copied to out. */
static const char *hdr(const resp *r, const char *name, char *out, size_t n)
{
    out[0] = 0;
    size_t nl = strlen(name);
    for (const char *p = strstr(r->head, "\r\n"); p; p = strstr(p + 2, "\r\n")) {
        if (strncasecmp(p + 2, name, nl) == 0 && p[2 + nl] == ':') {
            const char *v = p + 3 + nl;
            while (*v == ' ')
                v++;
            size_t l = strcspn(v, "\r\n");
            if (l >= n)
                l = n - 1;
            memcpy(out, v, l);
            out[l] = 0;
            break;
        }
    }
    return out;
}

/* Reads one response from fd, pumping the loop: the head, then
 * Content-Length bytes (none for HEAD). Fails the test after secs. */
static void cli_read(fix *f, int fd, int head_only, resp *r, double secs)
{
    memset(r, 0, sizeof(*r));
    r->clen = -1;
    size_t cap = 8192, len = 0, hlen = 0;
    char *buf = malloc(cap);
    assert_non_null(buf);
    double end = now_s() + secs;
    for (;;) {
        if (hlen) {
            size_t want = head_only ? 0 : (size_t)(r->clen < 0 ? 0 : r->clen);
            if (len - hlen >= want)
                break;
        }
        if (len + 65536 > cap) {
            cap = cap * 2 + 65536;
            buf = realloc(buf, cap);
            assert_non_null(buf);
        }
        ssize_t n = recv(fd, buf + len, cap - len - 1, 0);
        if (n > 0) {
            len += (size_t)n;
            buf[len] = 0;
            if (!hlen) {
                char *e = strstr(buf, "\r\n\r\n");
                if (e) {
                    hlen = (size_t)(e - buf) + 4;
                    assert_true(hlen < sizeof(r->head));
                    memcpy(r->head, buf, hlen - 2);
                    r->head[hlen - 2] = 0;
                    assert_int_equal(sscanf(r->head, "HTTP/1.%*d %d", &r->status), 1);
                    char v[64];
                    if (*hdr(r, "Content-Length", v, sizeof(v)))
                        r->clen = atol(v);
                    if (!head_only && r->clen < 0)
                        fail_msg("no Content-Length in\n%s", r->head);
                }
            }
            continue;
        }
        if (n == 0) {
            r->eof = 1;
            if (!hlen)
                fail_msg("connection closed before a response (%zu bytes)", len);
            fail_msg("connection closed after %zu of %ld body bytes", len - hlen, r->clen);
        }
        if (errno != EAGAIN && errno != EINTR)
            fail_msg("recv: %s", strerror(errno));
        if (now_s() > end)
            fail_msg("no complete response within %.0f s (%zu bytes so far)", secs, len);
        pump(f, fd);
    }
    r->body_len = len - hlen;
    r->body = malloc(r->body_len + 1);
    assert_non_null(r->body);
    memcpy(r->body, buf + hlen, r->body_len);
    r->body[r->body_len] = 0;
    free(buf);
}

/* Pumps for secs; returns the bytes that arrived on fd (-1: closed). */
static long cli_drain(fix *f, int fd, double secs)
{
    long got = 0;
    double end = now_s() + secs;
    while (now_s() < end) {
        char b[4096];
        ssize_t n = recv(fd, b, sizeof(b), 0);
        if (n > 0)
            got += n;
        else if (n == 0 || (errno != EAGAIN && errno != EINTR))
            return -1;
        else
            pump(f, fd);
    }
    return got;
}

static void get(fix *f, const char *req, int head_only, resp *r)
{
    int fd = cli_connect(f);
    cli_send(f, fd, req);
    cli_read(f, fd, head_only, r, 10);
    close(fd);
}

/* ---- tests ---- */

static void test_get_ok(void **state)
{
    fix *f = *state;
    resp r;
    get(f, "GET /echo?a=b&c=d HTTP/1.1\r\nHost: x\r\nAccept: text/x-test;q=0.9, */*\r\n\r\n", 0,
        &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "path=/echo\nquery=a=b&c=d\naccept=text/x-test;q=0.9, */*\n");
    assert_int_equal(r.clen, (long)r.body_len);
    char v[128];
    assert_string_equal(hdr(&r, "Content-Type", v, sizeof(v)), "text/x-echo; charset=utf-8");
    assert_int_equal(f->e.calls, 1);
    resp_free(&r);
}

static void test_target_passed_raw(void **state)
{
    static const struct {
        const char *target, *path, *query;
    } cases[] = {
        { "/echo", "/echo", "" },
        { "/echo?", "/echo", "" },
        { "/echo?a=b&c=d", "/echo", "a=b&c=d" },
        { "/echo?x=%2F%20y+z&x=2&flag", "/echo", "x=%2F%20y+z&x=2&flag" },
        { "/echo?a=b?c", "/echo", "a=b?c" },
        { "/ech%6F/%2e%2e?q=%3F", "/ech%6F/%2e%2e", "q=%3F" },
        { "/debug/explain?workload=ns%2Fname&format=json", "/debug/explain",
          "workload=ns%2Fname&format=json" },
    };
    fix *f = *state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char req[512], want[512];
        snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", cases[i].target);
        snprintf(want, sizeof(want), "path=%s\nquery=%s\naccept=\n", cases[i].path, cases[i].query);
        resp r;
        get(f, req, 0, &r);
        assert_int_equal(r.status, 200);
        if (strcmp(r.body, want) != 0)
            fail_msg("%s: got\n%s\nwant\n%s", cases[i].target, r.body, want);
        resp_free(&r);
    }
}

static void test_not_found_from_handler(void **state)
{
    fix *f = *state;
    resp r;
    get(f, "GET /missing HTTP/1.1\r\nHost: x\r\n\r\n", 0, &r);
    assert_int_equal(r.status, 404);
    assert_string_equal(r.body, "not found: /missing\n");
    char v[128];
    assert_string_equal(hdr(&r, "Content-Type", v, sizeof(v)), "text/plain; charset=utf-8");
    resp_free(&r);
}

static void test_other_methods_405(void **state)
{
    static const char *const reqs[] = {
        "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nx=1",
        "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n",
        "PUT /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}",
        "DELETE /echo HTTP/1.1\r\nHost: x\r\n\r\n",
        "OPTIONS /echo HTTP/1.1\r\nHost: x\r\n\r\n",
    };
    fix *f = *state;
    for (size_t i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++) {
        resp r;
        get(f, reqs[i], 0, &r);
        assert_int_equal(r.status, 405);
        char v[128];
        assert_string_equal(hdr(&r, "Allow", v, sizeof(v)), "GET, HEAD");
        assert_string_equal(r.body, "only GET and HEAD\n");
        resp_free(&r);
    }
    assert_int_equal(f->e.calls, 0);
}

/* A POST handler: "path|query|ctype|len|body". */
static int post_handler(void *ud, const char *path, const char *query, const char *ctype_in,
                        const char *data, size_t len, cu_buf *out, const char **ctype)
{
    echo *e = ud;
    e->calls++;
    cu_buf_printf(out, "%s|%s|%s|%zu|", path, query, ctype_in, len);
    if (len)
        cu_buf_append(out, data, len);
    *ctype = "application/json";
    return 201;
}

/* With a POST handler: the whole body (sent in pieces, or chunked), the
 * path, query and Content-Type; GET still reaches the GET handler; a body
 * over the limit is 413 without a call; other methods 405 naming POST;
 * keep-alive across POSTs. */
static void test_post(void **state)
{
    fix *f = *state;
    cu_httpd_opts o = { .post = post_handler, .post_limit = 64 };
    char err[300] = "";
    int port = 0;
    cu_httpd *s = cu_httpd_start_opts(f->loop, "127.0.0.1:0", "webhooks", echo_handler, &f->e, &o,
                                      err, sizeof(err), &port);
    if (!s)
        fail_msg("start: %s", err);
    int saved = f->port;
    f->port = port;
    resp r;
    get(f,
        "POST /mutate?timeout=10s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        "Content-Length: 11\r\n\r\n{\"a\":[1,2]}",
        0, &r);
    assert_int_equal(r.status, 201);
    assert_string_equal(r.body, "/mutate|timeout=10s|application/json|11|{\"a\":[1,2]}");
    resp_free(&r);
    get(f,
        "POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n"
        "0\r\n\r\n",
        0, &r);
    assert_int_equal(r.status, 201);
    assert_string_equal(r.body, "/c|||5|abcde");
    resp_free(&r);
    get(f, "POST /e HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", 0, &r);
    assert_int_equal(r.status, 201);
    assert_string_equal(r.body, "/e|||0|");
    resp_free(&r);
    int calls = f->e.calls;
    char big[400];
    snprintf(big, sizeof big, "POST /big HTTP/1.1\r\nHost: x\r\nContent-Length: 65\r\n\r\n%065d",
             7);
    get(f, big, 0, &r);
    assert_int_equal(r.status, 413);
    assert_string_equal(r.body, "request body larger than 64 bytes\n");
    assert_int_equal(f->e.calls, calls);
    resp_free(&r);
    get(f, "PUT /x HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", 0, &r);
    assert_int_equal(r.status, 405);
    char v[128];
    assert_string_equal(hdr(&r, "Allow", v, sizeof(v)), "GET, HEAD, POST");
    resp_free(&r);
    get(f, "GET /echo HTTP/1.1\r\nHost: x\r\n\r\n", 0, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "path=/echo\nquery=\naccept=\n");
    resp_free(&r);
    /* two POSTs on one connection */
    int fd = cli_connect(f);
    for (int i = 0; i < 2; i++) {
        cli_send(f, fd, "POST /k HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nok");
        cli_read(f, fd, 0, &r, 10);
        assert_int_equal(r.status, 201);
        assert_string_equal(r.body, "/k|||2|ok");
        resp_free(&r);
    }
    close(fd);
    f->port = saved;
    cu_httpd_stop(s);
}

/* reuse_port: a second server on the same address starts while the
 * first runs (both set it), and answers once the first stops; without it
 * the address is taken. */
static void test_reuse_port(void **state)
{
    fix *f = *state;
    cu_httpd_opts o = { .reuse_port = 1 };
    char err[300] = "", addr[64];
    int p1 = 0, p2 = 0;
    cu_httpd *a = cu_httpd_start_opts(f->loop, "127.0.0.1:0", "a", echo_handler, &f->e, &o, err,
                                      sizeof(err), &p1);
    if (!a)
        fail_msg("start: %s", err);
    snprintf(addr, sizeof addr, "127.0.0.1:%d", p1);
    assert_null(cu_httpd_start(f->loop, addr, "plain", echo_handler, &f->e, err, sizeof(err), &p2));
    assert_non_null(strstr(err, "plain 127.0.0.1:"));
    cu_httpd *b =
        cu_httpd_start_opts(f->loop, addr, "b", echo_handler, &f->e, &o, err, sizeof(err), &p2);
    if (!b)
        fail_msg("second start: %s", err);
    assert_int_equal(p2, p1);
    cu_httpd_stop(a);
    int saved = f->port;
    f->port = p1;
    resp r;
    get(f, "GET /after HTTP/1.1\r\nHost: x\r\n\r\n", 0, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "path=/after\nquery=\naccept=\n");
    resp_free(&r);
    f->port = saved;
    cu_httpd_stop(b);
}

static void test_head_has_no_body(void **state)
{
    fix *f = *state;
    resp g, h;
    get(f, "GET /echo?z=1 HTTP/1.1\r\nHost: x\r\n\r\n", 0, &g);
    int fd = cli_connect(f);
    cli_send(f, fd, "HEAD /echo?z=1 HTTP/1.1\r\nHost: x\r\n\r\n");
    cli_read(f, fd, 1, &h, 10);
    assert_int_equal(h.status, 200);
    assert_int_equal(h.body_len, 0);
    assert_int_equal(h.clen, (long)g.body_len); /* the length GET would send */
    char v[128];
    assert_string_equal(hdr(&h, "Content-Type", v, sizeof(v)), "text/x-echo; charset=utf-8");
    /* nothing follows the head; the connection stays usable */
    assert_int_equal(cli_drain(f, fd, 0.3), 0);
    cli_send(f, fd, "GET /echo?z=1 HTTP/1.1\r\nHost: x\r\n\r\n");
    resp g2;
    cli_read(f, fd, 0, &g2, 10);
    assert_string_equal(g2.body, g.body);
    close(fd);
    assert_int_equal(f->e.calls, 3);
    resp_free(&g);
    resp_free(&g2);
    resp_free(&h);
}

static void test_large_body_whole(void **state)
{
    fix *f = *state;
    int fd = cli_connect(f);
    /* a small receive buffer: the server meets a full socket many times */
    int rcv = 16384;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
    cli_send(f, fd, "GET /big HTTP/1.1\r\nHost: x\r\n\r\n");
    resp r;
    cli_read(f, fd, 0, &r, 20);
    close(fd);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.clen, (long)BIG_LEN);
    assert_int_equal(r.body_len, BIG_LEN);
    for (size_t i = 0; i < BIG_LEN; i++)
        if (r.body[i] != (char)('a' + i % 23))
            fail_msg("byte %zu: got %d", i, r.body[i]);
    resp_free(&r);
}

static void test_keep_alive(void **state)
{
    fix *f = *state;
    int fd = cli_connect(f);
    resp a, b;
    cli_send(f, fd, "GET /echo?n=1 HTTP/1.1\r\nHost: x\r\nAccept: a/1\r\n\r\n");
    cli_read(f, fd, 0, &a, 10);
    cli_send(f, fd, "GET /echo?n=2 HTTP/1.1\r\nHost: x\r\nAccept: b/2\r\n\r\n");
    cli_read(f, fd, 0, &b, 10);
    assert_string_equal(a.body, "path=/echo\nquery=n=1\naccept=a/1\n");
    assert_string_equal(b.body, "path=/echo\nquery=n=2\naccept=b/2\n");
    /* Connection: close is honoured */
    resp c;
    cli_send(f, fd, "GET /echo?n=3 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    cli_read(f, fd, 0, &c, 10);
    assert_string_equal(c.body, "path=/echo\nquery=n=3\naccept=\n");
    assert_int_equal(cli_drain(f, fd, 2), -1);
    close(fd);
    assert_int_equal(f->e.calls, 3);
    resp_free(&a);
    resp_free(&b);
    resp_free(&c);
}

/* A GET with a body is answered after the body (dropped) was read, and
 * the connection serves the next request; HTTP/1.0 gets its answer and
 * the connection closes. */
static void test_get_with_body_and_http10(void **state)
{
    fix *f = *state;
    int fd = cli_connect(f);
    resp a, b;
    cli_send(f, fd, "GET /echo?b=1 HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello");
    cli_read(f, fd, 0, &a, 10);
    cli_send(f, fd, "GET /echo?b=2 HTTP/1.1\r\nHost: x\r\n\r\n");
    cli_read(f, fd, 0, &b, 10);
    close(fd);
    assert_int_equal(a.status, 200);
    assert_string_equal(a.body, "path=/echo\nquery=b=1\naccept=\n");
    assert_string_equal(b.body, "path=/echo\nquery=b=2\naccept=\n");
    resp_free(&a);
    resp_free(&b);
    fd = cli_connect(f);
    cli_send(f, fd, "GET /echo?v=10 HTTP/1.0\r\n\r\n");
    cli_read(f, fd, 0, &a, 10);
    assert_true(strncmp(a.head, "HTTP/1.", 7) == 0);
    assert_int_equal(a.status, 200);
    assert_string_equal(a.body, "path=/echo\nquery=v=10\naccept=\n");
    assert_int_equal(cli_drain(f, fd, 2), -1);
    close(fd);
    resp_free(&a);
    assert_int_equal(f->e.calls, 3);
}

static void test_slow_client_does_not_block(void **state)
{
    fix *f = *state;
    int slow = cli_connect(f);
    double t0 = now_s();
    cli_send(f, slow, "GET /echo?slow=1 HTTP/1.1\r\nHo");
    assert_int_equal(cli_drain(f, slow, 0.2), 0);
    /* another client is served meanwhile */
    resp r;
    get(f, "GET /echo?fast=1 HTTP/1.1\r\nHost: x\r\n\r\n", 0, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "path=/echo\nquery=fast=1\naccept=\n");
    assert_true(now_s() - t0 < 3);
    resp_free(&r);
    /* the half request is dropped by the 5 s connection timeout (the
     * timer armed from MHD_get_timeout: no socket event comes) */
    long got = 0;
    double end = t0 + 12;
    while (now_s() < end && (got = cli_drain(f, slow, 0.1)) >= 0) {}
    assert_int_equal(got, -1);
    double took = now_s() - t0;
    assert_true(took > 4.0);
    assert_int_equal(f->e.calls, 1);
    close(slow);
}

/* The server stops with a half request, an unread large response and an
 * idle keep-alive connection open (ASan checks nothing leaks). */
/* A client that goes away in the middle of a large response: the server
 * (no SIGPIPE) goes on serving others. */
static void test_client_gone_mid_body(void **state)
{
    fix *f = *state;
    int fd = cli_connect(f);
    int rcv = 16384;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
    cli_send(f, fd, "GET /big HTTP/1.1\r\nHost: x\r\n\r\n");
    long got = 0;
    for (double end = now_s() + 5; got < 65536 && now_s() < end;) {
        char b[4096];
        ssize_t n = recv(fd, b, sizeof(b), 0);
        if (n > 0)
            got += n;
        else
            pump(f, fd);
    }
    assert_true(got >= 65536);
    struct linger lg = { 1, 0 }; /* close with a reset */
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    close(fd);
    for (double end = now_s() + 0.3; now_s() < end;)
        pump(f, -1);
    resp r;
    get(f, "GET /echo?after=1 HTTP/1.1\r\nHost: x\r\n\r\n", 0, &r);
    assert_string_equal(r.body, "path=/echo\nquery=after=1\naccept=\n");
    resp_free(&r);
}

static void test_stop_with_open_connections(void **state)
{
    fix *f = *state;
    int a = cli_connect(f), b = cli_connect(f), c = cli_connect(f);
    cli_send(f, a, "GET /echo HTTP/1.1\r\nHost");
    cli_send(f, b, "GET /big HTTP/1.1\r\nHost: x\r\n\r\n");
    cli_send(f, c, "GET /echo HTTP/1.1\r\nHost: x\r\n\r\n");
    resp r;
    cli_read(f, c, 0, &r, 10);
    resp_free(&r);
    for (double end = now_s() + 0.2; now_s() < end;)
        pump(f, -1);
    cu_httpd_stop(f->s);
    f->s = NULL;
    char buf[4096];
    for (int *fd = (int[]){ a, b, c, -1 }; *fd >= 0; fd++) {
        ssize_t n;
        while ((n = recv(*fd, buf, sizeof(buf), 0)) > 0) {}
        assert_true(n == 0 || errno == ECONNRESET);
        close(*fd);
    }
}

static void test_bad_addresses(void **state)
{
    fix *f = *state;
    char in_use[64];
    snprintf(in_use, sizeof(in_use), "127.0.0.1:%d", f->port);
    const struct {
        const char *addr, *want;
    } cases[] = {
        { "nonsense", "health probes nonsense: expected HOST:PORT, :PORT or \"0\"" },
        { "127.0.0.1:", "health probes 127.0.0.1:: expected HOST:PORT" },
        { "127.0.0.1:http", "health probes 127.0.0.1:http: the port must be a number from 0" },
        { "127.0.0.1:65536", "the port must be a number from 0 to 65535" },
        { "127.0.0.1:-1", "the port must be a number from 0 to 65535" },
        { "127.0.0.1: 80", "the port must be a number from 0 to 65535" },
        { "[::1:80", "health probes [::1:80: " },
        { "192.0.2.1:0", "health probes 192.0.2.1:0: " }, /* not an address here */
        { in_use, "in use" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char err[300] = "";
        int port = -7;
        cu_httpd *s = cu_httpd_start(f->loop, cases[i].addr, "health probes", echo_handler, &f->e,
                                     err, sizeof(err), &port);
        if (s) {
            cu_httpd_stop(s);
            fail_msg("%s: started", cases[i].addr);
        }
        char prefix[128];
        snprintf(prefix, sizeof(prefix), "health probes %s: ", cases[i].addr);
        if (strncmp(err, prefix, strlen(prefix)) != 0 || strlen(err) <= strlen(prefix) + 3 ||
            !strstr(err, cases[i].want))
            fail_msg("%s: error '%s', want it to start with '%s' and contain '%s'", cases[i].addr,
                     err, prefix, cases[i].want);
        assert_int_equal(port, -7);
    }
}

static int ipv6_loopback(void)
{
    int fd = socket(AF_INET6, SOCK_STREAM, 0);
    if (fd < 0)
        return 0;
    struct sockaddr_in6 a;
    memset(&a, 0, sizeof(a));
    a.sin6_family = AF_INET6;
    a.sin6_addr = in6addr_loopback;
    int ok = bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
    close(fd);
    return ok;
}

static void test_port_zero_and_families(void **state)
{
    const struct {
        const char *addr;
        int family;
    } cases[] = {
        { "127.0.0.1:0", AF_INET },
        { ":0", AF_INET }, /* every address: loopback included */
        { "[::1]:0", AF_INET6 },
    };
    fix *f = *state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        if (cases[i].family == AF_INET6 && !ipv6_loopback()) {
            print_message("no IPv6 loopback: %s skipped\n", cases[i].addr);
            continue;
        }
        char err[300] = "";
        int port = 0;
        cu_httpd *s = cu_httpd_start(f->loop, cases[i].addr, "metrics", echo_handler, &f->e, err,
                                     sizeof(err), &port);
        if (!s)
            fail_msg("%s: %s", cases[i].addr, err);
        assert_true(port > 0 && port < 65536);
        assert_int_not_equal(port, f->port);
        int fd = cli_connect_to(cases[i].family, port);
        cli_send(f, fd, "GET /echo?fam=1 HTTP/1.1\r\nHost: x\r\n\r\n");
        resp r;
        cli_read(f, fd, 0, &r, 10);
        close(fd);
        assert_int_equal(r.status, 200);
        assert_string_equal(r.body, "path=/echo\nquery=fam=1\naccept=\n");
        resp_free(&r);
        cu_httpd_stop(s);
    }
}

static void test_many_clients_at_once(void **state)
{
    fix *f = *state;
    enum { N = 40 };
    int fds[N];
    for (int i = 0; i < N; i++) {
        fds[i] = cli_connect(f);
        char req[128];
        snprintf(req, sizeof(req), "GET /echo?i=%d HTTP/1.1\r\nHost: x\r\n\r\n", i);
        cli_send(f, fds[i], req);
    }
    for (int i = N - 1; i >= 0; i--) {
        resp r;
        cli_read(f, fds[i], 0, &r, 10);
        char want[128];
        snprintf(want, sizeof(want), "path=/echo\nquery=i=%d\naccept=\n", i);
        assert_string_equal(r.body, want);
        resp_free(&r);
        close(fds[i]);
    }
    assert_int_equal(f->e.calls, N);
}

/* Sockets of the server's port in state CLOSE-WAIT (the peer closed, the
 * server did not yet), from /proc/net/tcp; -1 when it cannot be read. */
static int close_wait_count(int port)
{
    FILE *fp = fopen("/proc/net/tcp", "r");
    if (!fp)
        return -1;
    char line[512];
    int n = 0;
    while (fgets(line, sizeof(line), fp)) {
        unsigned lport, st;
        if (sscanf(line, " %*d: %*x:%x %*x:%*x %x", &lport, &st) == 2 && (int)lport == port &&
            st == 0x08)
            n++;
    }
    fclose(fp);
    return n;
}

/* Pumps the loop for secs. */
static void pump_for(fix *f, double secs)
{
    for (double end = now_s() + secs; now_s() < end;)
        pump(f, -1);
}

/* H5 (issue 10): more clients than the connection limit (64) connect,
 * send nothing or half a request, and go away. The server must close
 * and reap every one of them (no CLOSE-WAIT left behind) and answer
 * the next client at once: before the fix it never answered again. */
static void test_clients_come_and_go(void **state)
{
    fix *f = *state;
    enum { N = 200 };
    for (int round = 0; round < 2; round++) {
        int fds[N];
        for (int i = 0; i < N; i++) {
            fds[i] = cli_connect(f);
            if (i % 3 == 1)
                cli_send(f, fds[i], "GET /echo HTTP/1.1\r\nHo");
            else if (i % 3 == 2)
                cli_send(f, fds[i], "GET /echo HTTP/1.1\r\nHost: x\r\n\r\n");
        }
        pump_for(f, 0.5);
        for (int i = 0; i < N; i++)
            close(fds[i]);
        /* the next client is answered within a second */
        double t0 = now_s();
        int fd = cli_connect(f);
        cli_send(f, fd, "GET /echo?after=1 HTTP/1.1\r\nHost: x\r\n\r\n");
        resp r;
        cli_read(f, fd, 0, &r, 10);
        close(fd);
        assert_string_equal(r.body, "path=/echo\nquery=after=1\naccept=\n");
        double took = now_s() - t0;
        if (took > 1.0)
            fail_msg("round %d: the answer after %d clients left took %.2f s", round, N, took);
        resp_free(&r);
        /* and every socket of theirs is closed on the server's side */
        int cw = 0;
        for (double end = now_s() + 1; now_s() < end;) {
            pump(f, -1);
            if ((cw = close_wait_count(f->port)) <= 0)
                break;
        }
        if (cw > 0)
            fail_msg("round %d: %d sockets in CLOSE-WAIT", round, cw);
    }
}

/* Slowloris: clients that send their headers a byte at a time keep
 * nobody else out for long, and each of them is closed by the 5 s
 * connection timeout at the latest after its last byte. */
static void test_slowloris(void **state)
{
    fix *f = *state;
    enum { N = 80 };
    static const char req[] = "GET /echo?slow=1 HTTP/1.1\r\nHost: x\r\nX-Pad: aaaaaaaaaaaaaaaa";
    int fds[N];
    for (int i = 0; i < N; i++)
        fds[i] = cli_connect(f);
    for (size_t k = 0; k < 10; k++) {
        for (int i = 0; i < N; i++)
            cli_send(f, fds[i], (char[]){ req[k], 0 });
        pump_for(f, 0.05);
    }
    /* the server is full of slow clients: a new one waits at most until
     * those time out, and is then answered */
    double t0 = now_s();
    int fd = cli_connect(f);
    cli_send(f, fd, "GET /echo?fast=1 HTTP/1.1\r\nHost: x\r\n\r\n");
    resp r;
    cli_read(f, fd, 0, &r, 15);
    close(fd);
    assert_string_equal(r.body, "path=/echo\nquery=fast=1\naccept=\n");
    assert_true(now_s() - t0 < 8);
    resp_free(&r);
    for (int i = 0; i < N; i++)
        close(fds[i]);
    pump_for(f, 0.3);
    assert_true(close_wait_count(f->port) <= 0);
    assert_int_equal(f->e.calls, 1);
}

/* Slow clients that send a byte every 0.3 s (so that the idle timeout
 * never fires) are shut out when their headers are not in after the
 * header timeout (2 s here), counted from the connection's start or its
 * last response; a slow client that finishes in time is served. */
static void test_header_deadline(void **state)
{
    fix *f = *state;
    cu_httpd_opts o = { .header_timeout_s = 2 };
    char err[300] = "";
    int port = 0;
    cu_httpd *s = cu_httpd_start_opts(f->loop, "127.0.0.1:0", "health probes", echo_handler, &f->e,
                                      &o, err, sizeof(err), &port);
    if (!s)
        fail_msg("start: %s", err);
    int saved = f->port;
    f->port = port;
    static const char req[] = "GET /echo?slow=1 HTTP/1.1\r\nHost: x\r\n\r\n";
    int slow = cli_connect(f), ontime = cli_connect(f), kept = cli_connect(f);
    /* kept: one request answered, then the next one trickles */
    cli_send(f, kept, "GET /echo?k=1 HTTP/1.1\r\nHost: x\r\n\r\n");
    resp r;
    cli_read(f, kept, 0, &r, 10);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    double t0 = now_s(), closed_slow = 0, closed_kept = 0;
    size_t k = 0;
    while (now_s() - t0 < 6 && (closed_slow == 0 || closed_kept == 0)) {
        char c[2] = { k < 6 ? "GET /e"[k] : 'x', 0 };
        if (closed_slow == 0 && send(slow, c, 1, MSG_NOSIGNAL) < 0)
            closed_slow = now_s() - t0;
        if (closed_kept == 0 && send(kept, c, 1, MSG_NOSIGNAL) < 0)
            closed_kept = now_s() - t0;
        if (k < 5)
            cli_send(f, ontime, (char[]){ req[k], 0 });
        else if (k == 5)
            cli_send(f, ontime, req + 5); /* the rest at once, at 1.5 s */
        k++;
        for (double end = now_s() + 0.3; now_s() < end;) {
            pump(f, -1);
            char b[512];
            if (closed_slow == 0 && recv(slow, b, sizeof(b), 0) == 0)
                closed_slow = now_s() - t0;
            if (closed_kept == 0 && recv(kept, b, sizeof(b), 0) == 0)
                closed_kept = now_s() - t0;
        }
    }
    if (closed_slow == 0 || closed_slow < 1.5 || closed_slow > 3.5)
        fail_msg("a client trickling its headers was closed after %.2f s (want about 2)",
                 closed_slow);
    if (closed_kept == 0 || closed_kept < 1.5 || closed_kept > 3.5)
        fail_msg("a kept-alive client trickling its next request was closed after %.2f s",
                 closed_kept);
    cli_read(f, ontime, 0, &r, 10);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "path=/echo\nquery=slow=1\naccept=\n");
    resp_free(&r);
    close(slow);
    close(ontime);
    close(kept);
    cu_httpd_stop(s);
    f->port = saved;
}

/* ---- the gate (authentication and authorization in front of the handler) ---- */

typedef struct gatefix {
    int calls;
    int wait; /* answer CU_HTTPD_WAIT */
    uint64_t ids[8];
    int nids;
    char last_authz[128], last_path[128];
} gatefix;

static int test_gate(void *ud, const char *authz, const char *path, uint64_t id, char *msg,
                     size_t msgn)
{
    gatefix *g = ud;
    g->calls++;
    snprintf(g->last_authz, sizeof(g->last_authz), "%s", authz);
    snprintf(g->last_path, sizeof(g->last_path), "%s", path);
    if (g->wait) {
        if (g->nids < 8)
            g->ids[g->nids++] = id;
        return CU_HTTPD_WAIT;
    }
    if (!*authz) {
        snprintf(msg, msgn, "Unauthorized");
        return 401;
    }
    if (strcmp(authz, "Bearer yes") != 0) {
        snprintf(msg, msgn, "Authorization denied for user %s", authz + 7);
        return 403;
    }
    return 0;
}

static cu_httpd *start_gated(fix *f, gatefix *g, const cu_httpd_opts *base, int *port)
{
    cu_httpd_opts o = { 0 };
    if (base)
        o = *base;
    o.gate = test_gate;
    o.gate_ud = g;
    char err[300] = "";
    cu_httpd *s = cu_httpd_start_opts(f->loop, "127.0.0.1:0", "metrics", echo_handler, &f->e, &o,
                                      err, sizeof(err), port);
    if (!s)
        fail_msg("start: %s", err);
    return s;
}

static void test_gate_refuses_and_allows(void **state)
{
    fix *f = *state;
    gatefix g = { 0 };
    int port = 0;
    cu_httpd *s = start_gated(f, &g, NULL, &port);
    int saved = f->port;
    f->port = port;
    resp r;
    get(f, "GET /metrics?x=1 HTTP/1.1\r\nHost: x\r\n\r\n", 0, &r);
    assert_int_equal(r.status, 401);
    assert_string_equal(r.body, "Unauthorized\n");
    assert_string_equal(g.last_path, "/metrics");
    resp_free(&r);
    get(f, "GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer no\r\n\r\n", 0, &r);
    assert_int_equal(r.status, 403);
    assert_string_equal(r.body, "Authorization denied for user no\n");
    resp_free(&r);
    assert_int_equal(f->e.calls, 0);
    /* allowed: the handler answers; keep-alive goes on through the gate */
    int fd = cli_connect(f);
    cli_send(f, fd, "GET /echo?a=1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer yes\r\n\r\n");
    cli_read(f, fd, 0, &r, 10);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "path=/echo\nquery=a=1\naccept=\n");
    resp_free(&r);
    cli_send(f, fd, "HEAD /echo HTTP/1.1\r\nHost: x\r\n\r\n");
    cli_read(f, fd, 1, &r, 10);
    assert_int_equal(r.status, 401); /* every request is checked, HEAD too */
    resp_free(&r);
    close(fd);
    assert_int_equal(f->e.calls, 1);
    assert_int_equal(g.calls, 4);
    /* other methods get their 405 without the gate */
    get(f, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", 0, &r);
    assert_int_equal(r.status, 405);
    resp_free(&r);
    assert_int_equal(g.calls, 4);
    cu_httpd_stop(s);
    f->port = saved;
}

/* A gate that answers later: the request waits (others are served
 * meanwhile), then gets the decision; an unknown id is ignored; stopping
 * the server answers the requests still waiting with 503. */
static void test_gate_async(void **state)
{
    fix *f = *state;
    gatefix g = { .wait = 1 };
    int port = 0;
    cu_httpd *s = start_gated(f, &g, NULL, &port);
    int saved = f->port;
    f->port = port;
    int a = cli_connect(f), b = cli_connect(f), c = cli_connect(f);
    cli_send(f, a, "GET /echo?w=a HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t\r\n\r\n");
    cli_send(f, b, "GET /echo?w=b HTTP/1.1\r\nHost: x\r\n\r\n");
    cli_send(f, c, "GET /echo?w=c HTTP/1.1\r\nHost: x\r\n\r\n");
    for (double end = now_s() + 5; g.nids < 3 && now_s() < end;)
        pump(f, -1);
    assert_int_equal(g.nids, 3);
    assert_int_equal(cli_drain(f, a, 0.2), 0); /* nothing yet */
    cu_httpd_decide(s, 987654, 0, NULL);       /* unknown: ignored */
    cu_httpd_decide(s, g.ids[1], 403, "Authorization denied for user u");
    cu_httpd_decide(s, g.ids[0], 0, NULL);
    resp r;
    cli_read(f, a, 0, &r, 10);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "path=/echo\nquery=w=a\naccept=\n");
    resp_free(&r);
    cli_read(f, b, 0, &r, 10);
    assert_int_equal(r.status, 403);
    assert_string_equal(r.body, "Authorization denied for user u\n");
    resp_free(&r);
    cu_httpd_decide(s, g.ids[0], 0, NULL); /* decided already: ignored */
    /* c still waits: stopping answers it */
    cu_httpd_stop(s);
    cli_read(f, c, 0, &r, 10);
    assert_int_equal(r.status, 503);
    resp_free(&r);
    close(a);
    close(b);
    close(c);
    assert_int_equal(f->e.calls, 1);
    f->port = saved;
}

/* A client that leaves while its request waits for the gate: the late
 * decision is ignored (no use after free: ASan). */
static void test_gate_client_gone(void **state)
{
    fix *f = *state;
    gatefix g = { .wait = 1 };
    int port = 0;
    cu_httpd *s = start_gated(f, &g, NULL, &port);
    int saved = f->port;
    f->port = port;
    int a = cli_connect(f);
    cli_send(f, a, "GET /echo HTTP/1.1\r\nHost: x\r\n\r\n");
    for (double end = now_s() + 5; g.nids < 1 && now_s() < end;)
        pump(f, -1);
    assert_int_equal(g.nids, 1);
    close(a);
    pump_for(f, 0.2);
    cu_httpd_decide(s, g.ids[0], 0, NULL);
    pump_for(f, 0.3);
    /* the server goes on */
    g.wait = 0;
    resp r;
    get(f, "GET /echo HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer yes\r\n\r\n", 0, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    cu_httpd_stop(s);
    f->port = saved;
}

/* ---- HTTPS ---- */

typedef struct tlsget {
    int port;
    const char *ca;
    const char *authz;
    const char *ccert, *ckey; /* a client certificate, or NULL */
    const char *extra[3];     /* more request headers */
    long code;
    char body[256];
    size_t len;
    int done;
    CURLcode rc;
} tlsget;

static size_t tls_write(char *p, size_t sz, size_t n, void *ud)
{
    tlsget *t = ud;
    size_t k = sz * n;
    if (t->len + k < sizeof(t->body)) {
        memcpy(t->body + t->len, p, k);
        t->len += k;
        t->body[t->len] = 0;
    }
    return k;
}

/* A blocking libcurl GET on its own thread, while the test pumps the loop. */
static void *tls_thread(void *ud)
{
    tlsget *t = ud;
    CURL *c = curl_easy_init();
    char url[128];
    snprintf(url, sizeof(url), "https://127.0.0.1:%d/echo?tls=1", t->port);
    curl_easy_setopt(c, CURLOPT_URL, url);
    struct curl_blob ca = { (void *)t->ca, strlen(t->ca), CURL_BLOB_COPY };
    curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &ca);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, tls_write);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, t);
    struct curl_slist *h = NULL;
    if (t->authz)
        h = curl_slist_append(h, t->authz);
    for (int i = 0; i < 3 && t->extra[i]; i++)
        h = curl_slist_append(h, t->extra[i]);
    struct curl_blob cc = { (void *)t->ccert, t->ccert ? strlen(t->ccert) : 0, CURL_BLOB_COPY };
    struct curl_blob ck = { (void *)t->ckey, t->ckey ? strlen(t->ckey) : 0, CURL_BLOB_COPY };
    if (t->ccert) {
        curl_easy_setopt(c, CURLOPT_SSLCERT_BLOB, &cc);
        curl_easy_setopt(c, CURLOPT_SSLKEY_BLOB, &ck);
    }
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    t->rc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &t->code);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    __atomic_store_n(&t->done, 1, __ATOMIC_SEQ_CST);
    return NULL;
}

static void tls_get(fix *f, tlsget *t)
{
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, tls_thread, t), 0);
    for (double end = now_s() + 15; !__atomic_load_n(&t->done, __ATOMIC_SEQ_CST) && now_s() < end;)
        pump(f, -1);
    pthread_join(th, NULL);
}

/* HTTPS with a generated certificate, verified by its CA; the gate works
 * the same behind TLS; a plain-HTTP client gets no answer. */
static void test_https(void **state)
{
    fix *f = *state;
    char *ca = NULL, *cert = NULL, *key = NULL, err[300] = "";
    assert_int_equal(cu_tls_generate(NULL, &ca, &cert, &key, err, sizeof(err)), CU_OK);
    gatefix g = { 0 };
    cu_httpd_opts o = { .cert_pem = cert, .key_pem = key };
    int port = 0;
    cu_httpd *s = start_gated(f, &g, &o, &port);
    free(cert); /* MHD keeps its own copy: the server works on */
    free(key);
    tlsget t = { .port = port, .ca = ca, .authz = "Authorization: Bearer yes" };
    tls_get(f, &t);
    assert_int_equal(t.rc, CURLE_OK);
    assert_int_equal(t.code, 200);
    assert_string_equal(t.body, "path=/echo\nquery=tls=1\naccept=*/*\n");
    tlsget u = { .port = port, .ca = ca };
    tls_get(f, &u);
    assert_int_equal(u.rc, CURLE_OK);
    assert_int_equal(u.code, 401);
    /* plain HTTP to the HTTPS port: no HTTP answer */
    int saved = f->port;
    f->port = port;
    int fd = cli_connect(f);
    cli_send(f, fd, "GET /echo HTTP/1.1\r\nHost: x\r\n\r\n");
    char buf[64] = "";
    for (double end = now_s() + 2; now_s() < end;) {
        ssize_t n = recv(fd, buf, sizeof(buf) - 1, 0);
        if (n >= 0) {
            buf[n > 0 ? n : 0] = 0;
            break;
        }
        pump(f, fd);
    }
    assert_true(strncmp(buf, "HTTP/", 5) != 0);
    close(fd);
    f->port = saved;
    cu_httpd_stop(s);
    free(ca);
    assert_int_equal(f->e.calls, 1);
}

/* The identity a request-aware gate saw last. */
typedef struct proxyseen {
    int calls;
    char user[64], groups[128];
} proxyseen;

static int proxy_gate(void *ud, const cu_httpd_greq *r, uint64_t id, char *msg, size_t msgn)
{
    (void)id;
    proxyseen *p = ud;
    p->calls++;
    snprintf(p->user, sizeof(p->user), "%s", r->proxy_user ? r->proxy_user : "(none)");
    p->groups[0] = 0;
    for (size_t i = 0; i < r->nproxy_groups; i++)
        snprintf(p->groups + strlen(p->groups), sizeof(p->groups) - strlen(p->groups), "%s%s",
                 i ? "," : "", r->proxy_groups[i]);
    if (!r->proxy_user) {
        snprintf(msg, msgn, "{\"kind\":\"Status\",\"code\":401}");
        return 401;
    }
    return 0;
}

/* An authenticating proxy: its identity headers count only with a client
 * certificate of the trusted CA and an allowed common name; a refusal
 * from a JSON gate is served as application/json. */
static void test_proxy_client_certificate(void **state)
{
    fix *f = *state;
    char *ca = NULL, *cert = NULL, *key = NULL, err[300] = "";
    char *pca = NULL, *pcert = NULL, *pkey = NULL; /* the front proxy's */
    char *oca = NULL, *ocert = NULL, *okey = NULL; /* another CA's, same name */
    char *wca = NULL, *wcert = NULL, *wkey = NULL; /* trusted, but another name */
    assert_int_equal(cu_tls_generate(NULL, &ca, &cert, &key, err, sizeof(err)), CU_OK);
    assert_int_equal(
        cu_tls_generate_client("front-proxy-client", &pca, &pcert, &pkey, err, sizeof(err)), CU_OK);
    assert_int_equal(
        cu_tls_generate_client("front-proxy-client", &oca, &ocert, &okey, err, sizeof(err)), CU_OK);
    assert_int_equal(cu_tls_generate_client("someone", &wca, &wcert, &wkey, err, sizeof(err)),
                     CU_OK);
    /* trust both the proxy's CA and the wrong name's CA */
    char trust[16384];
    snprintf(trust, sizeof(trust), "%s%s", pca, wca);
    static const char *const names[] = { "front-proxy-client" };
    static const char *const groups[] = { "X-Remote-Group" };
    proxyseen seen = { 0 };
    cu_httpd_opts o = { .cert_pem = cert,
                        .key_pem = key,
                        .gate_req = proxy_gate,
                        .gate_ud = &seen,
                        .gate_json = 1,
                        .client_ca_pem = trust,
                        .proxy_names = names,
                        .nproxy_names = 1,
                        .group_headers = groups,
                        .ngroup_headers = 1 };
    int port = 0;
    cu_httpd *s = cu_httpd_start_opts(f->loop, "127.0.0.1:0", "proxy", echo_handler, &f->e, &o, err,
                                      sizeof(err), &port);
    assert_non_null(s);
    tlsget t = { .port = port,
                 .ca = ca,
                 .ccert = pcert,
                 .ckey = pkey,
                 .extra = { "X-Remote-User: alice", "X-Remote-Group: team-a",
                            "X-Remote-Group: system:authenticated" } };
    tls_get(f, &t);
    assert_int_equal(t.rc, CURLE_OK);
    assert_int_equal(t.code, 200);
    assert_string_equal(seen.user, "alice");
    assert_string_equal(seen.groups, "team-a,system:authenticated");
    /* the same headers without a certificate, with another CA's, or with
     * a trusted CA's certificate of another name: no identity */
    const char *certs[][2] = { { NULL, NULL }, { ocert, okey }, { wcert, wkey } };
    for (int i = 0; i < 3; i++) {
        tlsget u = { .port = port,
                     .ca = ca,
                     .ccert = certs[i][0],
                     .ckey = certs[i][1],
                     .extra = { "X-Remote-User: mallory", "X-Remote-Group: system:masters" } };
        tls_get(f, &u);
        if (i == 0)
            assert_int_equal(u.rc, CURLE_OK);
        if (u.rc == CURLE_OK) { /* another CA's may fail the handshake instead */
            assert_int_equal(u.code, 401);
            assert_string_equal(seen.user, "(none)");
            assert_string_equal(u.body, "{\"kind\":\"Status\",\"code\":401}\n");
        }
    }
    assert_true(seen.calls >= 3);
    cu_httpd_stop(s);
    char *all[] = { ca, cert, key, pca, pcert, pkey, oca, ocert, okey, wca, wcert, wkey };
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        free(all[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_get_ok, setup, teardown),
        cmocka_unit_test_setup_teardown(test_proxy_client_certificate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_target_passed_raw, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_found_from_handler, setup, teardown),
        cmocka_unit_test_setup_teardown(test_other_methods_405, setup, teardown),
        cmocka_unit_test_setup_teardown(test_post, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reuse_port, setup, teardown),
        cmocka_unit_test_setup_teardown(test_head_has_no_body, setup, teardown),
        cmocka_unit_test_setup_teardown(test_large_body_whole, setup, teardown),
        cmocka_unit_test_setup_teardown(test_keep_alive, setup, teardown),
        cmocka_unit_test_setup_teardown(test_get_with_body_and_http10, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slow_client_does_not_block, setup, teardown),
        cmocka_unit_test_setup_teardown(test_client_gone_mid_body, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stop_with_open_connections, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_addresses, setup, teardown),
        cmocka_unit_test_setup_teardown(test_port_zero_and_families, setup, teardown),
        cmocka_unit_test_setup_teardown(test_many_clients_at_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_clients_come_and_go, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slowloris, setup, teardown),
        cmocka_unit_test_setup_teardown(test_header_deadline, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gate_refuses_and_allows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gate_async, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gate_client_gone, setup, teardown),
        cmocka_unit_test_setup_teardown(test_https, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
