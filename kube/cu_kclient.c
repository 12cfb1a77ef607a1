/*
 * cu_kclient.c - the Kubernetes REST client: libcurl multi_socket on libev.
 *
 * Shape (curl's evhiperfifo pattern, with its gotchas fixed):
 *  - sock_cb (CURLMOPT_SOCKETFUNCTION) keeps one ev_io per socket, embedded
 *    in a ksock that curl_multi_assign ties to the socket;
 *  - curl_timer is the single one-shot ev_timer curl asks for
 *    (CURLMOPT_TIMERFUNCTION, seconds = ms / 1000.0, -1 = stop);
 *  - after every curl_multi_socket_action, check_multi_info drains
 *    curl_multi_info_read: the one place where a transfer ends (finish()).
 *
 * Requests move between four lists, and are in exactly one at a time:
 *   queued  - waiting for a rate-limiter token (FIFO);
 *   delayed - waiting for a retry backoff to expire (due time);
 *   active  - an easy handle in the multi handle;
 *   done    - finished, waiting for its done callback.
 * All scheduling happens in sched_cb, run from a second ev_timer: it removes
 * cancelled transfers, moves due retries back to the queue, starts queued
 * requests while the token bucket allows, and then calls done callbacks.
 * Nothing that starts, cancels or finishes a request calls user code
 * directly; it "kicks" sched_timer instead, so callbacks never run inside
 * cu_kclient_request/stream/cancel, nor inside a libcurl call (where
 * curl_multi_add_handle/remove_handle would be recursive API calls).
 *
 * Rate limiting: one token bucket (qps, burst) for every attempt,
 * retries and watches included, as client-go's rate limiter does. The
 * bucket and the backoff run on the loop's time (ev_now); opts->clock is
 * used for credential expiry (exec plugins).
 *
 * Retries (not for streams): 429 (Retry-After honoured, capped), 5xx
 * (Retry-After honoured when sent), connection failures before anything
 * was sent (refused, DNS, connect timeout, TLS handshake), and dropped
 * connections for GET; one immediate retry after 401 when the credential
 * can be refreshed (exec plugin, token file). Backoff: 200 ms doubling,
 * capped at 30 s, "equal jitter" (half fixed, half random).
 *
 * Bounds: a response body is capped at max_body; a watch line at
 * max_line. Hitting a cap aborts the transfer with an error naming it.
 *
 * CURLOPT_NOSIGNAL is left off on purpose: libcurl then ignores SIGPIPE
 * around its own calls, so a peer closing a TLS connection cannot kill
 * the process (curl's threaded resolver needs no signals for timeouts).
 */
#include "cu_kclient.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#define KC_BACKOFF_BASE_MS 200.0
#define KC_BACKOFF_MAX_MS 30000.0
#define KC_RETRY_AFTER_MAX_MS 120000.0
#define KC_CONNECT_TIMEOUT_MS 10000L

enum { RQ_QUEUED = 1, RQ_DELAYED, RQ_ACTIVE, RQ_DONE };
enum { MAX_ACTIVE = 48 }; /* running requests (streams apart); see sched_cb */

typedef struct rq_list {
    cu_kreq *head, *tail;
    size_t n;
} rq_list;

struct cu_kreq {
    cu_kclient *c;
    cu_kreq *prev, *next;
    int state;
    char *method, *path, *body, *ctype;
    size_t len;
    int stream;
    cu_kline_fn on_line;
    cu_kdone_fn done;
    void *ud;
    /* the current attempt */
    CURL *easy;
    struct curl_slist *hdrs;
    char errbuf[CURL_ERROR_SIZE];
    cu_buf resp;           /* body (bounded by max_body) */
    cu_buf line;           /* watch framing (bounded by max_line) */
    int stream_ok;         /* 0 unknown, 1 2xx (lines), 2 other (body) */
    double retry_after_ms; /* from the response, < 0 when none */
    int overflow, line_overflow, stopped, cancelled, auth_retried;
    /* scheduling */
    int retries;
    double due;     /* ev time at which a delayed retry is ready */
    double enq;     /* ev time it entered the queue */
    double started; /* ev time the current attempt started */
    /* result */
    int code;
    char *error;
};

typedef struct ksock {
    ev_io io; /* first: the watcher is the ksock */
    cu_kclient *c;
    struct ksock *prev, *next;
} ksock;

struct cu_kclient {
    struct ev_loop *loop;
    cu_kconfig *cfg;
    CURLM *multi;
    ev_timer curl_timer;  /* the single timer curl asks for */
    ev_timer sched_timer; /* scheduling, limiter wake-ups, deliveries */
    ksock *socks;
    rq_list queued, delayed, active, done;
    /* options */
    double qps;
    int burst, timeout_ms, max_retries;
    size_t max_body, max_line;
    cu_clock clock;
    void (*on_attempt)(void *ud, const char *method, int watch, int code, double seconds);
    void (*on_outcome)(void *ud, int code, const char *error, const char *body);
    void *attempt_ud;
    /* limiter */
    double tokens, last_refill;
    uint64_t rng;
    char *base_url;
    struct curl_slist *connect_to;
    int send_token;
    cu_kclient_stats stats;
};

/* ---------------- lists ---------------- */

static rq_list *list_of(cu_kclient *c, int state)
{
    switch (state) {
    case RQ_QUEUED: return &c->queued;
    case RQ_DELAYED: return &c->delayed;
    case RQ_ACTIVE: return &c->active;
    case RQ_DONE: return &c->done;
    }
    return NULL;
}

static void rq_unlink(cu_kreq *r)
{
    rq_list *l = list_of(r->c, r->state);
    if (!l)
        return;
    if (r->prev)
        r->prev->next = r->next;
    else
        l->head = r->next;
    if (r->next)
        r->next->prev = r->prev;
    else
        l->tail = r->prev;
    r->prev = r->next = NULL;
    l->n--;
    r->state = 0;
}

static void rq_move(cu_kreq *r, int state)
{
    rq_unlink(r);
    rq_list *l = list_of(r->c, state);
    r->state = state;
    r->prev = l->tail;
    r->next = NULL;
    if (l->tail)
        l->tail->next = r;
    else
        l->head = r;
    l->tail = r;
    l->n++;
}

/* ---------------- helpers ---------------- */

static int64_t loop_now_ms(void *ud) { return (int64_t)(ev_now((struct ev_loop *)ud) * 1000.0); }

static uint64_t rng_next(cu_kclient *c)
{
    uint64_t z = (c->rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double rng_unit(cu_kclient *c) { return (double)(rng_next(c) >> 11) / 9007199254740992.0; }

static void kick(cu_kclient *c)
{
    ev_timer_stop(c->loop, &c->sched_timer);
    ev_timer_set(&c->sched_timer, 0., 0.);
    ev_timer_start(c->loop, &c->sched_timer);
}

static void req_free(cu_kreq *r)
{
    if (r->easy)
        curl_easy_cleanup(r->easy);
    curl_slist_free_all(r->hdrs);
    cu_buf_free(&r->resp);
    cu_buf_free(&r->line);
    free(r->method);
    free(r->path);
    free(r->body);
    free(r->ctype);
    free(r->error);
    free(r);
}

/* Ends r: records the result and queues the done callback. */
static void finalize(cu_kreq *r, int code, const char *error)
{
    r->code = code;
    free(r->error);
    r->error = error ? strdup(error) : NULL;
    if (error && !r->error)
        r->error = NULL;
    rq_move(r, RQ_DONE);
    kick(r->c);
}

/* Drops the curl side of the current attempt (outside libcurl calls). */
static void attempt_cleanup(cu_kreq *r)
{
    if (r->easy) {
        curl_multi_remove_handle(r->c->multi, r->easy);
        curl_easy_cleanup(r->easy);
        r->easy = NULL;
    }
    curl_slist_free_all(r->hdrs);
    r->hdrs = NULL;
}

/* ---------------- curl callbacks ---------------- */

static int feed_lines(cu_kreq *r, const char *p, size_t n)
{
    cu_kclient *c = r->c;
    while (n > 0) {
        const char *nl = memchr(p, '\n', n);
        size_t seg = nl ? (size_t)(nl - p) : n;
        if (cu_buf_append(&r->line, p, seg)) {
            r->line_overflow = 1;
            return -1;
        }
        if (!nl)
            break;
        size_t len = r->line.len;
        if (len && r->line.data[len - 1] == '\r')
            r->line.data[--len] = '\0';
        if (len > 0 && r->on_line(c, r->line.data, len, r->ud) != 0) {
            r->stopped = 1;
            return -1;
        }
        if (r->cancelled)
            return -1;
        r->line.len = 0;
        if (r->line.data)
            r->line.data[0] = '\0';
        p += seg + 1;
        n -= seg + 1;
    }
    return 0;
}

static size_t write_cb(char *p, size_t sz, size_t nm, void *ud)
{
    cu_kreq *r = ud;
    size_t n = sz * nm;
    if (r->cancelled)
        return 0;
    r->c->stats.bytes_in += n;
    if (r->stream && r->stream_ok == 0) {
        long code = 0;
        curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &code);
        r->stream_ok = (code >= 200 && code < 300) ? 1 : 2;
    }
    if (r->stream_ok == 1)
        return feed_lines(r, p, n) ? 0 : n;
    if (cu_buf_append(&r->resp, p, n)) {
        r->overflow = 1;
        return 0;
    }
    return n;
}

static size_t header_cb(char *p, size_t sz, size_t nm, void *ud)
{
    cu_kreq *r = ud;
    size_t n = sz * nm;
    if (n >= 5 && strncmp(p, "HTTP/", 5) == 0)
        r->retry_after_ms = -1; /* a new response starts */
    else if (n > 12 && strncasecmp(p, "Retry-After:", 12) == 0) {
        char v[64];
        size_t vl = n - 12 < sizeof v - 1 ? n - 12 : sizeof v - 1;
        memcpy(v, p + 12, vl);
        v[vl] = '\0';
        char *s = v;
        while (*s == ' ' || *s == '\t')
            s++;
        char *e = s + strlen(s);
        while (e > s && (e[-1] == '\r' || e[-1] == '\n' || e[-1] == ' '))
            *--e = '\0';
        char *end = NULL;
        long secs = strtol(s, &end, 10);
        if (end != s && *end == '\0' && secs >= 0)
            r->retry_after_ms = (double)secs * 1000.0;
        else {
            time_t t = curl_getdate(s, NULL); /* HTTP-date form */
            if (t != (time_t)-1) {
                double d = difftime(t, time(NULL));
                r->retry_after_ms = d > 0 ? d * 1000.0 : 0;
            }
        }
    }
    return n;
}

static void check_multi_info(cu_kclient *c);

static void io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)loop;
    ksock *k = (ksock *)w;
    cu_kclient *c = k->c;
    int action =
        ((revents & EV_READ) ? CURL_CSELECT_IN : 0) | ((revents & EV_WRITE) ? CURL_CSELECT_OUT : 0);
    int running = 0;
    int fd = w->fd;
    /* k may be freed by sock_cb inside this call: do not touch it after */
    curl_multi_socket_action(c->multi, fd, action, &running);
    check_multi_info(c);
}

static void curl_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    cu_kclient *c = (cu_kclient *)((char *)w - offsetof(cu_kclient, curl_timer));
    int running = 0;
    curl_multi_socket_action(c->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    check_multi_info(c);
}

static int multi_timer_cb(CURLM *m, long timeout_ms, void *ud)
{
    (void)m;
    cu_kclient *c = ud;
    ev_timer_stop(c->loop, &c->curl_timer);
    if (timeout_ms >= 0) {
        /* 0 is valid: fire on the next loop iteration, never from here */
        ev_timer_set(&c->curl_timer, (double)timeout_ms / 1000.0, 0.);
        ev_timer_start(c->loop, &c->curl_timer);
    }
    return 0;
}

static int sock_cb(CURL *e, curl_socket_t s, int what, void *ud, void *sockp)
{
    (void)e;
    cu_kclient *c = ud;
    ksock *k = sockp;
    if (what == CURL_POLL_REMOVE) {
        if (k) {
            ev_io_stop(c->loop, &k->io);
            if (k->prev)
                k->prev->next = k->next;
            else
                c->socks = k->next;
            if (k->next)
                k->next->prev = k->prev;
            free(k);
        }
        return 0;
    }
    if (!k) {
        k = calloc(1, sizeof(*k));
        if (!k)
            return -1;
        k->c = c;
        k->next = c->socks;
        if (c->socks)
            c->socks->prev = k;
        c->socks = k;
        curl_multi_assign(c->multi, s, k);
    } else
        ev_io_stop(c->loop, &k->io);
    int ev = ((what & CURL_POLL_IN) ? EV_READ : 0) | ((what & CURL_POLL_OUT) ? EV_WRITE : 0);
    ev_io_init(&k->io, io_cb, s, ev);
    ev_io_start(c->loop, &k->io);
    return 0;
}

/* ---------------- attempts ---------------- */

static int is_get(const cu_kreq *r) { return strcmp(r->method, "GET") == 0; }

/* Schedules another attempt after delay_ms, or returns 0 when the retry
 * budget is spent. */
static int retry_later(cu_kreq *r, double delay_ms)
{
    cu_kclient *c = r->c;
    if (r->stream || r->retries >= c->max_retries)
        return 0;
    r->retries++;
    c->stats.retries++;
    r->due = ev_now(c->loop) + delay_ms / 1000.0;
    rq_move(r, RQ_DELAYED);
    kick(c);
    return 1;
}

static double backoff_ms(cu_kreq *r)
{
    double d = KC_BACKOFF_BASE_MS;
    for (int i = 0; i < r->retries && d < KC_BACKOFF_MAX_MS; i++)
        d *= 2;
    if (d > KC_BACKOFF_MAX_MS)
        d = KC_BACKOFF_MAX_MS;
    return d / 2 + rng_unit(r->c) * d / 2;
}

static double retry_after_delay(cu_kreq *r)
{
    double ra = r->retry_after_ms;
    if (ra > KC_RETRY_AFTER_MAX_MS)
        ra = KC_RETRY_AFTER_MAX_MS;
    /* never earlier than asked; a little jitter so clients do not align */
    double j = ra / 10 < 1000 ? ra / 10 : 1000;
    return ra + rng_unit(r->c) * j;
}

/* The one place where an attempt's outcome is decided. */
static void finish(cu_kreq *r, CURLcode rc)
{
    cu_kclient *c = r->c;
    long code = 0, nconn = 0, sent = 0;
    curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_getinfo(r->easy, CURLINFO_NUM_CONNECTS, &nconn);
    curl_easy_getinfo(r->easy, CURLINFO_REQUEST_SIZE, &sent);
    c->stats.new_connections += (uint64_t)(nconn > 0 ? nconn : 0);
    char err[CURL_ERROR_SIZE + 64];
    snprintf(err, sizeof err, "%s", r->errbuf[0] ? r->errbuf : curl_easy_strerror(rc));
    /* did the request leave? (connect time is 0 on a reused connection,
     * so it cannot tell a connect timeout from a request timeout) */
    int sent_any = sent > 0 || code > 0;
    attempt_cleanup(r);
    if (c->on_attempt)
        c->on_attempt(c->attempt_ud, r->method, r->stream, (int)code, ev_now(c->loop) - r->started);

    if (c->on_outcome && !r->cancelled) {
        int streamed = r->stream && r->stream_ok == 1;
        c->on_outcome(c->attempt_ud, (int)code, rc != CURLE_OK && !r->stopped ? err : NULL,
                      !streamed && r->resp.len ? cu_buf_str(&r->resp) : NULL);
    }
    if (r->cancelled) {
        finalize(r, 0, "cancelled");
        return;
    }
    if (r->stopped) { /* on_line asked to stop: a normal end */
        c->stats.by_code[code / 100 >= 1 && code / 100 <= 5 ? code / 100 : 0]++;
        finalize(r, (int)code, NULL);
        return;
    }
    if (r->overflow || r->line_overflow) {
        c->stats.by_code[0]++;
        char m[128];
        if (r->overflow)
            snprintf(m, sizeof m, "response body exceeds the %zu-byte limit", c->max_body);
        else
            snprintf(m, sizeof m, "watch line exceeds the %zu-byte limit", c->max_line);
        finalize(r, 0, m);
        return;
    }
    if (rc != CURLE_OK) {
        c->stats.by_code[0]++;
        int retry = 0;
        switch (rc) {
        case CURLE_COULDNT_CONNECT:
        case CURLE_COULDNT_RESOLVE_HOST:
        case CURLE_COULDNT_RESOLVE_PROXY:
        case CURLE_SSL_CONNECT_ERROR:
            retry = 1; /* nothing was sent */
            break;
        case CURLE_OPERATION_TIMEDOUT:
            retry = !sent_any; /* a connect timeout, not the request timeout */
            break;
        case CURLE_SEND_ERROR:
        case CURLE_RECV_ERROR:
        case CURLE_GOT_NOTHING:
        case CURLE_PARTIAL_FILE:
            /* once a write was sent the server may have acted on it */
            retry = is_get(r) || !sent_any;
            break;
        default: break;
        }
        if (retry && retry_later(r, backoff_ms(r)))
            return;
        if (rc == CURLE_OPERATION_TIMEDOUT && sent_any)
            snprintf(err, sizeof err, "request timed out after %d ms", c->timeout_ms);
        finalize(r, 0, err);
        return;
    }
    c->stats.by_code[code / 100 >= 1 && code / 100 <= 5 ? code / 100 : 0]++;
    if (r->stream && r->stream_ok == 1) {
        finalize(r, (int)code, NULL);
        return;
    }
    if (code == 401 && !r->auth_retried && cu_kconfig_invalidate(c->cfg)) {
        r->auth_retried = 1;
        r->retries++;
        c->stats.retries++;
        r->due = ev_now(c->loop);
        rq_move(r, RQ_DELAYED);
        kick(c);
        return;
    }
    if (code == 429 || (code >= 500 && code <= 599)) {
        double delay = r->retry_after_ms >= 0 ? retry_after_delay(r) : backoff_ms(r);
        if (retry_later(r, delay))
            return;
    }
    finalize(r, (int)code, NULL);
}

static void check_multi_info(cu_kclient *c)
{
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(c->multi, &left)) != NULL) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        cu_kreq *r = NULL;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&r);
        CURLcode rc = msg->data.result;
        if (r)
            finish(r, rc);
    }
}

static int header_add(cu_kreq *r, const char *fmt, const char *v)
{
    char h[8192];
    int n = snprintf(h, sizeof h, fmt, v);
    if (n < 0 || (size_t)n >= sizeof h)
        return -1;
    struct curl_slist *l = curl_slist_append(r->hdrs, h);
    if (!l)
        return -1;
    r->hdrs = l;
    return 0;
}

/* Starts one attempt of r (state: not in any list). Returns 0, or -1 after
 * finalizing r with an error. */
static int start_attempt(cu_kreq *r)
{
    cu_kclient *c = r->c;
    cu_kconfig *cfg = c->cfg;
    cu_diag dd;
    cu_diag_init(&dd);
    const char *tok = cu_kconfig_token(cfg, cu_clock_now(&c->clock), &dd);
    if (dd.nerrors) {
        char m[1024];
        snprintf(m, sizeof m, "credentials: %s", dd.n ? dd.msgs[0] : "unavailable");
        cu_diag_free(&dd);
        c->stats.by_code[0]++;
        finalize(r, 0, m);
        return -1;
    }
    cu_diag_free(&dd);
    cu_buf_free(&r->resp);
    cu_buf_init(&r->resp, c->max_body + 1);
    cu_buf_free(&r->line);
    cu_buf_init(&r->line, c->max_line + 1);
    r->stream_ok = 0;
    r->retry_after_ms = -1;
    r->errbuf[0] = '\0';
    r->overflow = r->line_overflow = 0;
    r->started = ev_now(c->loop);

    CURL *e = curl_easy_init();
    size_t ul = strlen(c->base_url) + strlen(r->path) + 1;
    char *url = malloc(ul);
    if (!e || !url) {
        if (e)
            curl_easy_cleanup(e);
        free(url);
        finalize(r, 0, "out of memory");
        return -1;
    }
    snprintf(url, ul, "%s%s", c->base_url, r->path);
    r->easy = e;
    int bad = 0;
    bad |= header_add(r, "%s", "Accept: application/json");
    bad |= header_add(r, "%s", "Expect:");
    if (r->ctype)
        bad |= header_add(r, "Content-Type: %s", r->ctype);
    if (tok && tok[0] && c->send_token)
        bad |= header_add(r, "Authorization: Bearer %s", tok);
    curl_easy_setopt(e, CURLOPT_URL, url);
    free(url);
    curl_easy_setopt(e, CURLOPT_PRIVATE, (char *)r);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, r->errbuf);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, write_cb);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, header_cb);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, r);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, r->hdrs);
    curl_easy_setopt(e, CURLOPT_USERAGENT, "cueue/0.1");
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPIDLE, 30L);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPINTVL, 10L);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    long cto = KC_CONNECT_TIMEOUT_MS;
    if (!r->stream) {
        curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)c->timeout_ms);
        if (c->timeout_ms < cto)
            cto = c->timeout_ms;
    }
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, cto);
    if (c->connect_to)
        curl_easy_setopt(e, CURLOPT_CONNECT_TO, c->connect_to);
    /* TLS */
    if (cfg->insecure) {
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
    } else if (cfg->ca_pem) {
        struct curl_blob b = { cfg->ca_pem, strlen(cfg->ca_pem), CURL_BLOB_COPY };
        curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &b);
        curl_easy_setopt(e, CURLOPT_CAPATH, NULL); /* trust only the given CA */
    }
    if (cfg->cert_pem && cfg->key_pem) {
        struct curl_blob cb = { cfg->cert_pem, strlen(cfg->cert_pem), CURL_BLOB_COPY };
        struct curl_blob kb = { cfg->key_pem, strlen(cfg->key_pem), CURL_BLOB_COPY };
        curl_easy_setopt(e, CURLOPT_SSLCERT_BLOB, &cb);
        curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
        curl_easy_setopt(e, CURLOPT_SSLKEY_BLOB, &kb);
        curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
    }
    /* method and body */
    if (strcmp(r->method, "GET") == 0)
        curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
    else {
        curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, r->method);
        if (r->body || strcmp(r->method, "DELETE") != 0) {
            curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->len);
            curl_easy_setopt(e, CURLOPT_POSTFIELDS, r->body ? r->body : "");
        }
    }
    if (bad) {
        attempt_cleanup(r);
        finalize(r, 0, "out of memory building headers");
        return -1;
    }
    c->stats.requests++;
    rq_move(r, RQ_ACTIVE);
    if (curl_multi_add_handle(c->multi, e) != CURLM_OK) {
        rq_unlink(r);
        curl_easy_cleanup(r->easy);
        r->easy = NULL;
        finalize(r, 0, "curl_multi_add_handle failed");
        return -1;
    }
    return 0;
}

/* ---------------- scheduler ---------------- */

static void refill(cu_kclient *c, double now)
{
    if (now > c->last_refill) {
        c->tokens += (now - c->last_refill) * c->qps;
        if (c->tokens > c->burst)
            c->tokens = c->burst;
    }
    c->last_refill = now;
}

static void sched_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)revents;
    cu_kclient *c = (cu_kclient *)((char *)w - offsetof(cu_kclient, sched_timer));
    double now = ev_now(loop);

    /* 1. cancelled transfers leave the multi handle (never inside curl) */
    for (cu_kreq *r = c->active.head, *nx; r; r = nx) {
        nx = r->next;
        if (r->cancelled) {
            attempt_cleanup(r);
            finalize(r, 0, "cancelled");
        }
    }
    /* 2. retries whose backoff expired go back to the queue */
    for (cu_kreq *r = c->delayed.head, *nx; r; r = nx) {
        nx = r->next;
        if (r->due <= now) {
            r->enq = now;
            rq_move(r, RQ_QUEUED);
        }
    }
    /* 3. start what the token bucket allows, at most MAX_ACTIVE requests
     * (not counting streams) at a time: a queued request holds only its
     * method, path and body; an easy handle with its buffers exists only
     * while it runs (memory stays flat under a burst) */
    refill(c, now);
    int nreq = 0;
    for (cu_kreq *r = c->active.head; r; r = r->next)
        nreq += !r->stream;
    int capped = 0;
    while (c->queued.head && c->tokens >= 1.0) {
        cu_kreq *r = c->queued.head;
        if (!r->stream && nreq >= MAX_ACTIVE) {
            /* the first queued streams still start: look past requests */
            cu_kreq *s2 = r;
            while (s2 && !s2->stream)
                s2 = s2->next;
            capped = 1;
            if (!s2)
                break;
            r = s2;
        }
        nreq += !r->stream;
        c->tokens -= 1.0;
        if (now > r->enq)
            c->stats.throttled_ms += (uint64_t)((now - r->enq) * 1000.0);
        rq_unlink(r);
        start_attempt(r);
    }
    /* 4. done callbacks; they may start or cancel requests */
    while (c->done.head) {
        cu_kreq *r = c->done.head;
        rq_unlink(r);
        cu_kresp resp = { r->code, cu_buf_str(&r->resp), r->resp.len, r->error, r->retries };
        if (r->error || (r->stream && r->stream_ok == 1)) {
            resp.body = "";
            resp.len = 0;
        }
        if (r->done)
            r->done(c, &resp, r->ud);
        req_free(r);
    }
    /* 5. the next wake-up */
    double next = -1;
    if (c->done.head)
        next = 0;
    for (cu_kreq *r = c->active.head; r && next != 0; r = r->next)
        if (r->cancelled)
            next = 0;
    if (next != 0 && c->queued.head && !capped) { /* capped: a completion kicks */
        refill(c, ev_now(loop));
        next = c->tokens >= 1.0 ? 0 : (1.0 - c->tokens) / c->qps;
    }
    for (cu_kreq *r = c->delayed.head; r && next != 0; r = r->next) {
        double d = r->due - now;
        if (d < 0)
            d = 0;
        if (next < 0 || d < next)
            next = d;
    }
    ev_timer_stop(loop, w);
    if (next >= 0) {
        ev_timer_set(w, next, 0.);
        ev_timer_start(loop, w);
    }
}

/* ---------------- public ---------------- */

static int is_loopback_http(const char *server)
{
    return strncmp(server, "http://127.", 11) == 0 ||
           strncmp(server, "http://localhost", 16) == 0 || strncmp(server, "http://[::1]", 12) == 0;
}

cu_kclient *cu_kclient_new(struct ev_loop *loop, cu_kconfig *cfg, const cu_kclient_opts *o,
                           cu_diag *d)
{
    cu_kclient_opts def;
    memset(&def, 0, sizeof def);
    if (!o)
        o = &def;
    if (!cfg || !cfg->server || !cfg->server[0]) {
        cu_diag_error(d, "kclient: the configuration has no server");
        return NULL;
    }
    if (o->qps < 0 || o->burst < 0 || o->timeout_ms < 0 || o->max_retries < 0) {
        cu_diag_error(d, "kclient: qps, burst, timeout_ms and max_retries must not be negative");
        return NULL;
    }
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        cu_diag_error(d, "kclient: curl_global_init failed");
        return NULL;
    }
    cu_kclient *c = calloc(1, sizeof(*c));
    if (!c) {
        curl_global_cleanup();
        cu_diag_error(d, "kclient: out of memory");
        return NULL;
    }
    c->loop = loop;
    c->cfg = cfg;
    c->qps = o->qps > 0 ? o->qps : CU_KCLIENT_DEFAULT_QPS;
    c->on_attempt = o->on_attempt;
    c->on_outcome = o->on_outcome;
    c->attempt_ud = o->attempt_ud;
    c->burst = o->burst > 0 ? o->burst : CU_KCLIENT_DEFAULT_BURST;
    c->timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : 30000;
    c->max_retries = o->max_retries > 0 ? o->max_retries : 5;
    c->max_body = o->max_body > 0 ? o->max_body : (size_t)64 << 20;
    c->max_line = o->max_line > 0 ? o->max_line : (size_t)16 << 20;
    if (o->clock)
        c->clock = *o->clock;
    else {
        c->clock.now_ms = loop_now_ms;
        c->clock.ud = loop;
    }
    c->rng = o->jitter_seed ? o->jitter_seed
                            : ((uint64_t)(ev_time() * 1e6) ^ ((uint64_t)getpid() << 32));
    c->tokens = c->burst;
    c->last_refill = ev_now(loop);
    c->send_token = strncmp(cfg->server, "https://", 8) == 0 || is_loopback_http(cfg->server);
    c->base_url = strdup(cfg->server);
    c->multi = curl_multi_init();
    if (!c->base_url || !c->multi)
        goto fail;
    if (cfg->tls_server_name && strncmp(cfg->server, "https://", 8) == 0) {
        /* verify (and send SNI for) tls_server_name, but connect to the
         * server's host: the URL names the TLS name, CONNECT_TO maps it */
        CURLU *u = curl_url();
        char *host = NULL, *port = NULL, *nurl = NULL;
        int ok = u && !curl_url_set(u, CURLUPART_URL, cfg->server, 0) &&
                 !curl_url_get(u, CURLUPART_HOST, &host, 0) &&
                 !curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) &&
                 !curl_url_set(u, CURLUPART_HOST, cfg->tls_server_name, 0) &&
                 !curl_url_get(u, CURLUPART_URL, &nurl, 0);
        if (ok) {
            char m[600];
            snprintf(m, sizeof m, "%s:%s:%s:%s", cfg->tls_server_name, port, host, port);
            c->connect_to = curl_slist_append(NULL, m);
            free(c->base_url);
            c->base_url = strdup(nurl);
            size_t bl = c->base_url ? strlen(c->base_url) : 0;
            while (bl > 8 && c->base_url[bl - 1] == '/')
                c->base_url[--bl] = '\0';
        }
        curl_free(host);
        curl_free(port);
        curl_free(nurl);
        curl_url_cleanup(u);
        if (!ok || !c->connect_to || !c->base_url) {
            cu_diag_error(d,
                          "kclient: cluster \"%s\": cannot use tls-server-name \"%s\" with "
                          "server \"%s\"",
                          cfg->cluster ? cfg->cluster : "", cfg->tls_server_name, cfg->server);
            goto fail;
        }
    }
    curl_multi_setopt(c->multi, CURLMOPT_SOCKETFUNCTION, sock_cb);
    curl_multi_setopt(c->multi, CURLMOPT_SOCKETDATA, c);
    curl_multi_setopt(c->multi, CURLMOPT_TIMERFUNCTION, multi_timer_cb);
    curl_multi_setopt(c->multi, CURLMOPT_TIMERDATA, c);
    curl_multi_setopt(c->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
    curl_multi_setopt(c->multi, CURLMOPT_MAXCONNECTS, 64L);
    /* at most 64 connections to the server, watches included: a burst
     * queues here instead of opening hundreds of connections (an API
     * server, or our embedded one, refuses past its own limit) */
    curl_multi_setopt(c->multi, CURLMOPT_MAX_HOST_CONNECTIONS, 64L);
    ev_timer_init(&c->curl_timer, curl_timer_cb, 0., 0.);
    ev_timer_init(&c->sched_timer, sched_cb, 0., 0.);
    return c;
fail:
    if (c->multi)
        curl_multi_cleanup(c->multi);
    curl_slist_free_all(c->connect_to);
    free(c->base_url);
    free(c);
    curl_global_cleanup();
    return NULL;
}

/* Pending requests are dropped without calling their done callbacks. Must
 * not be called from inside one of this client's callbacks. */
void cu_kclient_free(cu_kclient *c)
{
    if (!c)
        return;
    /* Every request still pending completes now, with error "client
     * closed" (or its result, if it had one), so that callers can free
     * what they attached to it. Callbacks must not start new requests. */
    rq_list *lists[] = { &c->queued, &c->delayed, &c->active, &c->done };
    for (size_t i = 0; i < 4; i++) {
        while (lists[i]->head) {
            cu_kreq *r = lists[i]->head;
            rq_unlink(r);
            attempt_cleanup(r);
            if (r->done) {
                cu_kresp resp;
                memset(&resp, 0, sizeof(resp));
                int finished = lists[i] == &c->done;
                resp.code = finished ? r->code : 0;
                resp.error = finished ? r->error : "client closed";
                resp.body = cu_buf_str(&r->resp);
                resp.len = finished ? r->resp.len : 0;
                resp.retries = r->retries;
                r->done(c, &resp, r->ud);
            }
            req_free(r);
        }
    }
    ev_timer_stop(c->loop, &c->sched_timer);
    ev_timer_stop(c->loop, &c->curl_timer);
    curl_multi_cleanup(c->multi);
    /* sockets curl did not report removed */
    while (c->socks) {
        ksock *k = c->socks;
        c->socks = k->next;
        ev_io_stop(c->loop, &k->io);
        free(k);
    }
    ev_timer_stop(c->loop, &c->curl_timer);
    curl_slist_free_all(c->connect_to);
    free(c->base_url);
    free(c);
    curl_global_cleanup();
}

static cu_kreq *req_new(cu_kclient *c, const char *method, const char *path, cu_kdone_fn done,
                        void *ud)
{
    if (!c || !path || path[0] != '/')
        return NULL;
    cu_kreq *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    r->c = c;
    r->method = strdup(method);
    r->path = strdup(path);
    r->done = done;
    r->ud = ud;
    r->retry_after_ms = -1;
    cu_buf_init(&r->resp, c->max_body + 1);
    cu_buf_init(&r->line, c->max_line + 1);
    if (!r->method || !r->path) {
        req_free(r);
        return NULL;
    }
    return r;
}

static void enqueue(cu_kreq *r)
{
    r->enq = ev_now(r->c->loop);
    rq_move(r, RQ_QUEUED);
    kick(r->c);
}

cu_kreq *cu_kclient_request(cu_kclient *c, const char *method, const char *path, const char *body,
                            size_t len, const char *content_type, cu_kdone_fn done, void *ud)
{
    static const char *const ok[] = { "GET", "POST", "PUT", "PATCH", "DELETE" };
    int known = 0;
    for (size_t i = 0; method && i < sizeof ok / sizeof ok[0]; i++)
        known |= strcmp(method, ok[i]) == 0;
    if (!known)
        return NULL;
    cu_kreq *r = req_new(c, method, path, done, ud);
    if (!r)
        return NULL;
    if (body) {
        r->body = malloc(len + 1);
        if (!r->body) {
            req_free(r);
            return NULL;
        }
        memcpy(r->body, body, len);
        r->body[len] = '\0';
        r->len = len;
    }
    if (content_type) {
        r->ctype = strdup(content_type);
        if (!r->ctype) {
            req_free(r);
            return NULL;
        }
    } else if (body)
        r->ctype = strdup("application/json");
    enqueue(r);
    return r;
}

cu_kreq *cu_kclient_stream(cu_kclient *c, const char *path, cu_kline_fn on_line, cu_kdone_fn done,
                           void *ud)
{
    if (!on_line)
        return NULL;
    cu_kreq *r = req_new(c, "GET", path, done, ud);
    if (!r)
        return NULL;
    r->stream = 1;
    r->on_line = on_line;
    enqueue(r);
    return r;
}

void cu_kclient_cancel(cu_kreq *r)
{
    if (!r || r->state == RQ_DONE || r->cancelled)
        return;
    r->cancelled = 1;
    if (r->state == RQ_QUEUED || r->state == RQ_DELAYED)
        finalize(r, 0, "cancelled");
    else
        kick(r->c); /* RQ_ACTIVE: removed from the multi handle in sched_cb */
}

int cu_kclient_spare(cu_kclient *c)
{
    if (c->queued.head)
        return 0;
    refill(c, ev_now(c->loop));
    double spare = c->tokens - (double)c->burst / 2.0;
    if (spare < 0)
        return 0;
    return spare > 1e6 ? 1000000 : (int)spare;
}

void cu_kclient_stats_get(const cu_kclient *c, cu_kclient_stats *out) { *out = c->stats; }

struct ev_loop *cu_kclient_loop(const cu_kclient *c) { return c->loop; }

/* ---------------- PATCH flavours ---------------- */

const char *cu_patch_content_type(cu_patch_type t)
{
    switch (t) {
    case CU_PATCH_JSON: return "application/json-patch+json";
    case CU_PATCH_APPLY: return "application/apply-patch+yaml";
    case CU_PATCH_STRATEGIC: return "application/strategic-merge-patch+json";
    case CU_PATCH_MERGE:
    default: return "application/merge-patch+json";
    }
}

/* Appends s to out (at *n of cap) with URL query escaping. */
static int q_escape(char *out, size_t cap, size_t *n, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        int plain = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' || ch == '.' || ch == '~';
        if (*n + (plain ? 1 : 3) >= cap)
            return -1;
        if (plain) {
            out[(*n)++] = (char)ch;
        } else {
            out[(*n)++] = '%';
            out[(*n)++] = hex[ch >> 4];
            out[(*n)++] = hex[ch & 15];
        }
    }
    out[*n] = 0;
    return 0;
}

cu_kreq *cu_kclient_patch(cu_kclient *c, const char *path, cu_patch_type t, const char *body,
                          size_t len, const char *field_manager, int force, cu_kdone_fn done,
                          void *ud)
{
    if (!path || strchr(path, '?') || (t == CU_PATCH_APPLY && (!field_manager || !*field_manager)))
        return NULL;
    char full[4096];
    size_t n = (size_t)snprintf(full, sizeof(full), "%s", path);
    if (n >= sizeof(full))
        return NULL;
    if (field_manager && *field_manager) {
        if (n + 14 >= sizeof(full))
            return NULL;
        memcpy(full + n, "?fieldManager=", 15);
        n += 14;
        if (q_escape(full, sizeof(full), &n, field_manager) != 0)
            return NULL;
    }
    if (force && t == CU_PATCH_APPLY) {
        if (n + 12 >= sizeof(full))
            return NULL;
        memcpy(full + n, "&force=true", 12);
        n += 11;
    }
    return cu_kclient_request(c, "PATCH", full, body, len, cu_patch_content_type(t), done, ud);
}
