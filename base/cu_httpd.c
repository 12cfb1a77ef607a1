/*
 * cu_httpd.c - see cu_httpd.h. A libmicrohttpd daemon without a
 * thread of its own ("external select" mode): after every MHD_run() the
 * descriptors MHD wants to read or write (MHD_get_fdset2) get one
 * level-triggered ev_io each on the controller's loop, and an ev_timer
 * is armed from MHD_get_timeout() (connection timeouts, data MHD holds
 * already). Any of them firing runs MHD again over the descriptors that
 * are ready (a poll() without waiting, MHD_run_from_select()).
 *
 * Not MHD's own epoll descriptor, as this server did before: libmicro-
 * httpd 0.9.75 registers connections edge-triggered and treats a short
 * read as "drained", so a client that sent half a request and closed
 * before it was accepted left its end-of-file unseen (CLOSE-WAIT until
 * the connection timeout); and MHD takes its listening socket out of
 * the epoll set at CONN_LIMIT and puts it back only at the start of a
 * later run, for which nothing woke it up: after 64 clients came and
 * went the server never accepted again (issue 10, H5). With level-
 * triggered watchers rebuilt from MHD's wishes after each run, neither
 * can happen. The cost is a scan of at most a few dozen descriptors per
 * run.
 *
 * An ev_io is stopped before MHD closes its descriptor (the
 * connection-closed notification), so a number reused by the next
 * accept() gets a fresh registration.
 *
 * The handler gets the request target as the client sent it: the URI log
 * callback (called before MHD unescapes the path and splits the query)
 * keeps a copy per request, freed in the request-completed callback.
 */
#include "cu_httpd.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <microhttpd.h>
#include <strings.h>

#define BODY_LIMIT ((size_t)64 << 20)
#define CONN_LIMIT 64u
#define CONN_TIMEOUT_S 5u
#define HEADER_TIMEOUT_S 10.0
#define CONN_MEMORY ((size_t)32 << 10)

/* The watcher of one descriptor MHD wants to read or write. */
typedef struct fdwatch {
    ev_io io;
    struct cu_httpd *s;
} fdwatch;

/* One connection: since when it waits for a request's headers. */
typedef struct conninfo {
    int fd;
    int reading;  /* waiting for the headers of a request */
    int shut;     /* shut down for taking too long */
    double since; /* ev_now() when it began to wait */
    struct conninfo *next, *prev;
} conninfo;

struct cu_httpd {
    struct ev_loop *loop;
    conninfo *conns;
    double header_timeout;
    struct MHD_Daemon *d;
    fdwatch *fds[FD_SETSIZE]; /* by descriptor; NULL: not watched */
    int top;                  /* highest descriptor watched, -1: none */
    int listen_fd;
    ev_timer timer; /* MHD_get_timeout() */
    cu_httpd_handler h;
    void *ud;
    cu_httpd_post_handler post;
    size_t post_limit;
    cu_httpd_gate gate;
    cu_httpd_gate_req gate_req;
    void *gate_ud;
    int gate_json;
    int client_certs;
    char **names, **uhdr, **ghdr; /* NULL-terminated copies */
    struct hreq *waiting;         /* requests the gate holds (suspended) */
    uint64_t next_id;
    int starting;      /* MHD's log messages are kept only while starting */
    char lasterr[256]; /* the last one */
};

/* One request: the target as sent, how far it got, and the gate's say. */
enum { REQ_NEW, REQ_HEADERS, REQ_RESPONDED };
enum { GATE_NONE, GATE_WAITING, GATE_DONE };
typedef struct hreq {
    int state;
    int gate;        /* GATE_* */
    int gate_status; /* 0: allowed, else the status to refuse with */
    char gate_msg[1024];
    uint64_t id; /* while waiting for the gate */
    struct MHD_Connection *conn;
    struct hreq *wnext, *wprev;
    const char *query; /* in target, after the path is split off; NULL before */
    char *body;        /* a POST's body read so far (malloc'ed) */
    size_t blen, bcap;
    int too_big; /* the POST's body exceeds post_limit: 413 */
    char target[];
} hreq;

static void unlink_waiting(cu_httpd *s, hreq *r)
{
    if (r->wprev)
        r->wprev->wnext = r->wnext;
    else if (s->waiting == r)
        s->waiting = r->wnext;
    if (r->wnext)
        r->wnext->wprev = r->wprev;
    r->wnext = r->wprev = NULL;
}

static conninfo *conn_info(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

/* The headers of a request are in (reading 0), or a response is done and
 * the connection waits for the next request (reading 1). */
static void conn_reading(cu_httpd *s, struct MHD_Connection *conn, int reading)
{
    conninfo *c = conn_info(conn);
    if (c) {
        c->reading = reading;
        c->since = ev_now(s->loop);
    }
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    cu_httpd *s = cls;
    if (!s->starting)
        return;
    vsnprintf(s->lasterr, sizeof(s->lasterr), fmt, ap);
    size_t n = strlen(s->lasterr);
    while (n > 0 && (s->lasterr[n - 1] == '\n' || s->lasterr[n - 1] == '.'))
        s->lasterr[--n] = 0;
}

static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
    (void)cls;
    (void)conn;
    size_t n = strlen(uri);
    hreq *r = malloc(sizeof(*r) + n + 1);
    if (r) {
        memset(r, 0, sizeof(*r));
        r->state = REQ_NEW;
        memcpy(r->target, uri, n + 1);
    }
    return r;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)toe;
    hreq *r = *req_cls;
    if (r && r->gate == GATE_WAITING)
        unlink_waiting(cls, r);
    conn_reading(cls, conn, 1);
    if (r)
        free(r->body);
    free(r);
    *req_cls = NULL;
}

/* Queues code with body (taken over: freed by MHD) and the headers. */
static enum MHD_Result respond(struct MHD_Connection *conn, int code, cu_buf *body,
                               const char *ctype, const char *allow)
{
    char *data = body->data;
    size_t len = body->data ? body->len : 0;
    struct MHD_Response *mr = MHD_create_response_from_buffer(len, data, MHD_RESPMEM_MUST_FREE);
    if (!mr) {
        cu_buf_free(body);
        return MHD_NO;
    }
    body->data = NULL; /* MHD frees it with the response */
    body->len = body->cap = 0;
    enum MHD_Result ret = MHD_NO;
    if (MHD_add_response_header(mr, MHD_HTTP_HEADER_CONTENT_TYPE, ctype) == MHD_YES &&
        (!allow || MHD_add_response_header(mr, MHD_HTTP_HEADER_ALLOW, allow) == MHD_YES))
        ret = MHD_queue_response(conn, (unsigned)code, mr);
    MHD_destroy_response(mr);
    return ret;
}

/* ---- the identity an authenticating proxy asserts ---- */

#define MAX_GROUPS 64
typedef struct proxyid {
    cu_httpd *s;
    const char *user;
    const char *groups[MAX_GROUPS];
    size_t ngroups;
} proxyid;

static int listed(char **names, const char *key)
{
    for (size_t i = 0; names && names[i]; i++)
        if (strcasecmp(names[i], key) == 0)
            return 1;
    return 0;
}

static enum MHD_Result on_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                 const char *value)
{
    (void)kind;
    proxyid *p = cls;
    if (!key || !value)
        return MHD_YES;
    if (!p->user && listed(p->s->uhdr, key) && *value)
        p->user = value;
    else if (listed(p->s->ghdr, key) && *value && p->ngroups < MAX_GROUPS)
        p->groups[p->ngroups++] = value;
    return MHD_YES;
}

/* The common name of the client's certificate when it verifies against
 * the trusted CA (into cn), else 0. */
static int verified_cn(struct MHD_Connection *conn, char *cn, size_t n)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    gnutls_session_t ses = ci ? (gnutls_session_t)ci->tls_session : NULL;
    unsigned status = 0, nc = 0;
    if (!ses || gnutls_certificate_verify_peers2(ses, &status) != GNUTLS_E_SUCCESS || status)
        return 0;
    const gnutls_datum_t *certs = gnutls_certificate_get_peers(ses, &nc);
    gnutls_x509_crt_t crt;
    if (!certs || !nc || gnutls_x509_crt_init(&crt) != GNUTLS_E_SUCCESS)
        return 0;
    size_t len = n;
    int ok = gnutls_x509_crt_import(crt, &certs[0], GNUTLS_X509_FMT_DER) == GNUTLS_E_SUCCESS &&
             gnutls_x509_crt_get_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, 0, cn, &len) ==
                 GNUTLS_E_SUCCESS;
    gnutls_x509_crt_deinit(crt);
    return ok;
}

static void proxy_identity(cu_httpd *s, struct MHD_Connection *conn, proxyid *p)
{
    char cn[256] = "";
    if (!s->client_certs || !verified_cn(conn, cn, sizeof(cn)))
        return;
    if (s->names && s->names[0] && !listed(s->names, cn))
        return;
    MHD_get_connection_values(conn, MHD_HEADER_KIND, on_header, p);
    if (!p->user)
        p->ngroups = 0;
}

static char **copy_list(const char *const *v, size_t n, const char *dflt, int *failed)
{
    char **out = calloc(n + 2, sizeof(*out));
    if (!out) {
        *failed = 1;
        return NULL;
    }
    if (!n && dflt && !(out[0] = strdup(dflt)))
        *failed = 1;
    for (size_t i = 0; i < n; i++)
        if (!(out[i] = strdup(v[i])))
            *failed = 1;
    return out;
}

static void free_list(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

static void server_free(cu_httpd *s)
{
    free_list(s->names);
    free_list(s->uhdr);
    free_list(s->ghdr);
    free(s);
}

/* A POST: its body is gathered over the calls MHD makes with upload
 * data (at most post_limit bytes: more are read and dropped, and the
 * answer is 413), and the handler runs on the last call. */
static enum MHD_Result on_post(cu_httpd *s, struct MHD_Connection *conn, hreq *r,
                               const char *upload_data, size_t *upload_data_size, cu_buf *body)
{
    if (r->state == REQ_NEW) {
        r->state = REQ_HEADERS;
        cu_buf_free(body);
        return MHD_YES;
    }
    if (*upload_data_size) {
        size_t n = *upload_data_size;
        *upload_data_size = 0;
        cu_buf_free(body);
        if (r->too_big || r->state == REQ_RESPONDED)
            return MHD_YES;
        if (r->blen + n > s->post_limit) {
            r->too_big = 1;
            free(r->body);
            r->body = NULL;
            r->blen = r->bcap = 0;
            return MHD_YES;
        }
        if (r->blen + n > r->bcap) {
            size_t cap = r->bcap ? r->bcap : 4096;
            while (cap < r->blen + n)
                cap *= 2;
            char *nb = realloc(r->body, cap);
            if (!nb)
                return MHD_NO;
            r->body = nb;
            r->bcap = cap;
        }
        memcpy(r->body + r->blen, upload_data, n);
        r->blen += n;
        return MHD_YES;
    }
    if (r->state == REQ_RESPONDED) {
        cu_buf_free(body);
        return MHD_YES;
    }
    r->state = REQ_RESPONDED;
    if (r->too_big) {
        cu_buf_printf(body, "request body larger than %zu bytes\n", s->post_limit);
        return respond(conn, MHD_HTTP_CONTENT_TOO_LARGE, body, "text/plain; charset=utf-8", NULL);
    }
    char *q = strchr(r->target, '?');
    if (q)
        *q++ = 0;
    const char *ct =
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    const char *ctype = "text/plain; charset=utf-8";
    int code = s->post(s->ud, r->target, q ? q : "", ct ? ct : "", r->body, r->blen, body, &ctype);
    if (code < 100 || code > 599) {
        body->len = 0;
        body->failed = 0;
        cu_buf_printf(body, "handler returned status %d\n", code);
        ctype = "text/plain; charset=utf-8";
        code = 500;
    }
    return respond(conn, code, body, ctype ? ctype : "application/octet-stream", NULL);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **req_cls)
{
    (void)url;
    (void)version;
    (void)upload_data;
    cu_httpd *s = cls;
    hreq *r = *req_cls;
    if (!r) /* the copy of the target failed: drop the connection */
        return MHD_NO;
    if (r->state == REQ_NEW)
        conn_reading(s, conn, 0); /* the headers are in */
    cu_buf body;
    cu_buf_init(&body, BODY_LIMIT);
    if (s->post && strcmp(method, MHD_HTTP_METHOD_POST) == 0)
        return on_post(s, conn, r, upload_data, upload_data_size, &body);
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0) {
        if (r->state == REQ_RESPONDED) {
            *upload_data_size = 0;
            return MHD_YES;
        }
        /* at once, on the first call: MHD then closes the connection
         * instead of reading a body nobody wants */
        r->state = REQ_RESPONDED;
        cu_buf_puts(&body, s->post ? "only GET, HEAD and POST\n" : "only GET and HEAD\n");
        return respond(conn, MHD_HTTP_METHOD_NOT_ALLOWED, &body, "text/plain; charset=utf-8",
                       s->post ? "GET, HEAD, POST" : "GET, HEAD");
    }
    /* GET and HEAD answer on the last call (after the whole request was
     * read): a response queued on the first call makes MHD 0.9.x close
     * the connection after it (no keep-alive) */
    if (r->state == REQ_NEW) {
        r->state = REQ_HEADERS;
        return MHD_YES;
    }
    if (*upload_data_size) { /* a body with a GET: read and dropped */
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (r->state == REQ_RESPONDED)
        return MHD_YES;
    /* path and query as sent */
    if (!r->query) {
        char *q = strchr(r->target, '?');
        if (q)
            *q++ = 0;
        r->query = q ? q : "";
    }
    const char *path = r->target, *query = r->query;
    int gated = s->gate || s->gate_req;
    if (gated && r->gate == GATE_WAITING)
        return MHD_YES; /* not expected: MHD does not call while suspended */
    if (gated && r->gate == GATE_NONE) {
        const char *authz =
            MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
        r->id = ++s->next_id;
        r->conn = conn;
        r->gate_msg[0] = 0;
        int st;
        if (s->gate_req) {
            proxyid pid = { .s = s };
            proxy_identity(s, conn, &pid);
            cu_httpd_greq g = { .authz = authz ? authz : "",
                                .path = path,
                                .proxy_user = pid.user,
                                .proxy_groups = pid.groups,
                                .nproxy_groups = pid.ngroups };
            st = s->gate_req(s->gate_ud, &g, r->id, r->gate_msg, sizeof(r->gate_msg));
        } else {
            st = s->gate(s->gate_ud, authz ? authz : "", path, r->id, r->gate_msg,
                         sizeof(r->gate_msg));
        }
        if (st == CU_HTTPD_WAIT) {
            r->gate = GATE_WAITING;
            r->wnext = s->waiting;
            if (s->waiting)
                s->waiting->wprev = r;
            s->waiting = r;
            MHD_suspend_connection(conn);
            return MHD_YES;
        }
        r->gate = GATE_DONE;
        r->gate_status = st;
    }
    r->state = REQ_RESPONDED;
    if (r->gate == GATE_DONE && r->gate_status != 0) {
        int code = r->gate_status >= 400 && r->gate_status <= 599 ? r->gate_status : 500;
        cu_buf_printf(&body, "%s\n", r->gate_msg[0] ? r->gate_msg : "refused");
        return respond(conn, code, &body,
                       s->gate_json && r->gate_msg[0] == '{' ? "application/json"
                                                             : "text/plain; charset=utf-8",
                       NULL);
    }
    const char *accept = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
    const char *ctype = "text/plain; charset=utf-8";
    int code = s->h(s->ud, path, query, accept ? accept : "", &body, &ctype);
    if (code < 100 || code > 599) {
        body.len = 0;
        body.failed = 0;
        cu_buf_printf(&body, "handler returned status %d\n", code);
        ctype = "text/plain; charset=utf-8";
        code = 500;
    }
    return respond(conn, code, &body, ctype ? ctype : "application/octet-stream", NULL);
}

static void run(cu_httpd *s);
static double shut_slow(cu_httpd *s);

static void on_fd(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)loop;
    (void)revents;
    run(((fdwatch *)w)->s);
}

static void unwatch(cu_httpd *s, int fd)
{
    if (fd < 0 || fd >= FD_SETSIZE || !s->fds[fd])
        return;
    ev_io_stop(s->loop, &s->fds[fd]->io);
    free(s->fds[fd]);
    s->fds[fd] = NULL;
}

/* The watchers become what MHD wants after a run, except the listening
 * socket while CONN_LIMIT connections are open: MHD would accept and at
 * once reset a client then; left in the backlog, it is accepted when a
 * connection closes. A descriptor MHD cannot put in an fd_set
 * (FD_SETSIZE and above) is refused by MHD at accept. */
static void rewatch(cu_httpd *s)
{
    fd_set rs, ws, es;
    FD_ZERO(&rs);
    FD_ZERO(&ws);
    FD_ZERO(&es);
    MHD_socket max = -1;
    if (MHD_get_fdset2(s->d, &rs, &ws, &es, &max, FD_SETSIZE) != MHD_YES)
        max = -1; /* nothing to watch; the timer still runs MHD */
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
    if (di && di->num_connections >= CONN_LIMIT && s->listen_fd >= 0 && s->listen_fd <= max)
        FD_CLR(s->listen_fd, &rs);
    int top = max > s->top ? max : s->top;
    for (int fd = 0; fd <= top && fd < FD_SETSIZE; fd++) {
        int want =
            fd <= max ? (FD_ISSET(fd, &rs) ? EV_READ : 0) | (FD_ISSET(fd, &ws) ? EV_WRITE : 0) : 0;
        fdwatch *w = s->fds[fd];
        if (w && (w->io.events & (EV_READ | EV_WRITE)) == want)
            continue;
        if (!want) {
            unwatch(s, fd);
            continue;
        }
        if (!w) {
            w = calloc(1, sizeof(*w));
            if (!w)
                continue; /* the timer below retries soon */
            w->s = s;
            ev_init(&w->io, on_fd);
            s->fds[fd] = w;
        } else {
            ev_io_stop(s->loop, &w->io);
        }
        ev_io_set(&w->io, fd, want);
        ev_io_start(s->loop, &w->io);
    }
    s->top = max;
}

/* One run of MHD over the watched descriptors that are ready now (a
 * poll() without waiting: MHD_run() would select() over every descriptor
 * of its own, the listening one at the limit included), then the
 * watchers and the timer for the next. Connections' timeouts are checked
 * on every run. */
static void run(cu_httpd *s)
{
    struct pollfd pfd[FD_SETSIZE];
    nfds_t n = 0;
    for (int fd = 0; fd <= s->top; fd++) {
        if (!s->fds[fd])
            continue;
        int ev = s->fds[fd]->io.events;
        pfd[n].fd = fd;
        pfd[n].events = (short)(((ev & EV_READ) ? POLLIN : 0) | ((ev & EV_WRITE) ? POLLOUT : 0));
        pfd[n].revents = 0;
        n++;
    }
    fd_set rs, ws, es;
    FD_ZERO(&rs);
    FD_ZERO(&ws);
    FD_ZERO(&es);
    if (n > 0 && poll(pfd, n, 0) > 0) {
        for (nfds_t i = 0; i < n; i++) {
            /* an error or hang-up is reported as readable and writable:
             * MHD finds out which when it reads or writes */
            short bad = POLLERR | POLLHUP | POLLNVAL;
            if (pfd[i].revents & (POLLIN | bad))
                FD_SET(pfd[i].fd, &rs);
            if (pfd[i].revents & (POLLOUT | bad))
                FD_SET(pfd[i].fd, &ws);
        }
    }
    MHD_run_from_select(s->d, &rs, &ws, &es);
    double next = shut_slow(s);
    rewatch(s);
    ev_timer_stop(s->loop, &s->timer);
    MHD_UNSIGNED_LONG_LONG ms = 0;
    double after = -1;
    if (MHD_get_timeout(s->d, &ms) == MHD_YES)
        after = (double)ms / 1000.0;
    if (next != 0 && (after < 0 || next - ev_now(s->loop) < after))
        after = next - ev_now(s->loop);
    if (after < 0)
        return;
    ev_timer_set(&s->timer, after, 0.);
    ev_timer_start(s->loop, &s->timer);
}

static void on_timer(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)loop;
    (void)revents;
    run(t->data);
}

/* A new connection gets its record; a closed one's descriptor is closed
 * right after this: its watcher and record go first. */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    cu_httpd *s = cls;
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        conninfo *c = calloc(1, sizeof(*c));
        if (!c || !ci) {
            free(c);
            return; /* no header deadline for this one; the idle timeout stays */
        }
        c->fd = ci->connect_fd;
        c->reading = 1;
        c->since = ev_now(s->loop);
        c->next = s->conns;
        if (s->conns)
            s->conns->prev = c;
        s->conns = c;
        *socket_context = c;
        return;
    }
    if (toe != MHD_CONNECTION_NOTIFY_CLOSED)
        return;
    conninfo *c = *socket_context;
    if (c) {
        if (c->prev)
            c->prev->next = c->next;
        else
            s->conns = c->next;
        if (c->next)
            c->next->prev = c->prev;
        free(c);
        *socket_context = NULL;
    }
    if (ci)
        unwatch(s, ci->connect_fd);
}

/* Slow clients: a connection that has not sent a request's headers
 * header_timeout after it opened (or after its last response) is shut
 * down, and MHD closes it when it reads the end. MHD's own timeout is
 * reset by every byte, so a client sending a byte every few seconds
 * ("slowloris") would hold its slot forever. Returns the next deadline
 * (0: none). */
static double shut_slow(cu_httpd *s)
{
    double now = ev_now(s->loop), next = 0;
    for (conninfo *c = s->conns; c; c = c->next) {
        if (!c->reading || c->shut)
            continue;
        double dl = c->since + s->header_timeout;
        if (dl <= now) {
            shutdown(c->fd, SHUT_RDWR);
            c->shut = 1;
        } else if (next == 0 || dl < next) {
            next = dl;
        }
    }
    return next;
}

/* Splits HOST:PORT, [V6]:PORT or :PORT and resolves it (numeric port).
 * Returns 0 with *ss filled, or -1 with the problem in err. */
static int resolve(const char *addr, const char *what, struct sockaddr_storage *ss, char *err,
                   size_t errn)
{
    char host[256], port[32];
    const char *colon = strrchr(addr, ':');
    size_t hl = colon ? (size_t)(colon - addr) : 0;
    if (!colon || !colon[1] || hl >= sizeof(host) || strlen(colon + 1) >= sizeof(port)) {
        snprintf(err, errn, "%s %s: expected HOST:PORT, :PORT or \"0\"", what, addr);
        return -1;
    }
    memcpy(host, addr, hl);
    host[hl] = 0;
    snprintf(port, sizeof(port), "%s", colon + 1);
    char *end;
    errno = 0;
    unsigned long pn = strtoul(port, &end, 10);
    if (*end || port[0] < '0' || port[0] > '9' || errno || pn > 65535) {
        snprintf(err, errn, "%s %s: the port must be a number from 0 to 65535", what, addr);
        return -1;
    }
    char *hp = host;
    if (hp[0] == '[' && hl >= 2 && hp[hl - 1] == ']') {
        hp[hl - 1] = 0;
        hp++;
    }
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    int e = getaddrinfo(*hp ? hp : NULL, port, &hints, &res);
    if (e != 0) {
        snprintf(err, errn, "%s %s: %s", what, addr,
                 e == EAI_SYSTEM ? strerror(errno) : gai_strerror(e));
        return -1;
    }
    if ((res->ai_family != AF_INET && res->ai_family != AF_INET6) ||
        res->ai_addrlen > sizeof(*ss)) {
        snprintf(err, errn, "%s %s: not an IPv4 or IPv6 address", what, addr);
        freeaddrinfo(res);
        return -1;
    }
    memset(ss, 0, sizeof(*ss));
    memcpy(ss, res->ai_addr, res->ai_addrlen);
    freeaddrinfo(res);
    return 0;
}

static int bound_port(struct MHD_Daemon *d)
{
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    if (di && di->port)
        return di->port;
    /* older or odd builds: ask the listening socket */
    di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_LISTEN_FD);
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    if (!di || getsockname(di->listen_fd, (struct sockaddr *)&ss, &sl) != 0)
        return 0;
    if (ss.ss_family == AF_INET)
        return ntohs(((struct sockaddr_in *)&ss)->sin_port);
    if (ss.ss_family == AF_INET6)
        return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    return 0;
}

cu_httpd *cu_httpd_start(struct ev_loop *loop, const char *addr, const char *what,
                         cu_httpd_handler hnd, void *ud, char *err, size_t errn, int *port_out)
{
    return cu_httpd_start_opts(loop, addr, what, hnd, ud, NULL, err, errn, port_out);
}

cu_httpd *cu_httpd_start_opts(struct ev_loop *loop, const char *addr, const char *what,
                              cu_httpd_handler hnd, void *ud, const cu_httpd_opts *o, char *err,
                              size_t errn, int *port_out)
{
    int tls = o && o->cert_pem && o->key_pem;
    if (tls && MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
        snprintf(err, errn, "%s %s: this libmicrohttpd has no TLS support", what, addr);
        return NULL;
    }
    struct sockaddr_storage ss;
    if (resolve(addr, what, &ss, err, errn) != 0)
        return NULL;
    cu_httpd *s = calloc(1, sizeof(*s));
    if (!s) {
        snprintf(err, errn, "%s %s: out of memory", what, addr);
        return NULL;
    }
    s->loop = loop;
    s->h = hnd;
    s->ud = ud;
    s->starting = 1;
    s->top = -1;
    if (o && (o->gate || o->gate_req)) {
        s->gate = o->gate_req ? NULL : o->gate;
        s->gate_req = o->gate_req;
        s->gate_ud = o->gate_ud;
        s->gate_json = o->gate_json;
    }
    int cca = tls && o->client_ca_pem;
    if (cca) {
        int failed = 0;
        s->client_certs = 1;
        s->names = copy_list(o->proxy_names, o->nproxy_names, NULL, &failed);
        s->uhdr = copy_list(o->user_headers, o->nuser_headers, "X-Remote-User", &failed);
        s->ghdr = copy_list(o->group_headers, o->ngroup_headers, "X-Remote-Group", &failed);
        if (failed) {
            free_list(s->names);
            free_list(s->uhdr);
            free_list(s->ghdr);
            free(s);
            snprintf(err, errn, "%s %s: out of memory", what, addr);
            return NULL;
        }
    }
    s->header_timeout = o && o->header_timeout_s > 0 ? o->header_timeout_s : HEADER_TIMEOUT_S;
    s->post = o ? o->post : NULL;
    s->post_limit = o && o->post_limit ? o->post_limit : ((size_t)8 << 20);
    int v6 = ss.ss_family == AF_INET6;
    uint16_t port = v6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
                       : ntohs(((struct sockaddr_in *)&ss)->sin_port);
    unsigned flags = MHD_USE_ERROR_LOG | (v6 ? MHD_USE_IPv6 : 0) |
                     (s->gate || s->gate_req ? MHD_ALLOW_SUSPEND_RESUME : 0) |
                     (tls ? MHD_USE_TLS : 0);
    /* MHD_OPTION_ARRAY stops at the first MHD_OPTION_END: only the options
     * in use, in a row */
    struct MHD_OptionItem tlsopts[5];
    size_t nopt = 0;
    if (tls) {
        tlsopts[nopt++] =
            (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)(uintptr_t)o->key_pem };
        tlsopts[nopt++] =
            (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)(uintptr_t)o->cert_pem };
    }
    if (cca)
        tlsopts[nopt++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_TRUST, 0,
                                                   (void *)(uintptr_t)o->client_ca_pem };
    if (o && o->reuse_port)
        tlsopts[nopt++] = (struct MHD_OptionItem){ MHD_OPTION_LISTENING_ADDRESS_REUSE, 1, NULL };
    tlsopts[nopt] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
    errno = 0;
    s->d = MHD_start_daemon(
        flags, port, NULL, NULL, on_request, s, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, s,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss, MHD_OPTION_URI_LOG_CALLBACK, on_uri, s,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, MHD_OPTION_NOTIFY_CONNECTION, on_connection,
        s, MHD_OPTION_CONNECTION_LIMIT, CONN_LIMIT, MHD_OPTION_CONNECTION_TIMEOUT, CONN_TIMEOUT_S,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, CONN_MEMORY, MHD_OPTION_ARRAY, tlsopts, MHD_OPTION_END);
    int e = errno;
    if (!s->d) {
        if (s->lasterr[0])
            snprintf(err, errn, "%s %s: %s", what, addr, s->lasterr);
        else
            snprintf(err, errn, "%s %s: %s", what, addr,
                     e ? strerror(e) : "libmicrohttpd could not start");
        server_free(s);
        return NULL;
    }
    s->starting = 0;
    const union MHD_DaemonInfo *li = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_LISTEN_FD);
    s->listen_fd = li ? li->listen_fd : -1;
    if (s->listen_fd < 0 || s->listen_fd >= FD_SETSIZE) {
        /* the watchers come from fd_sets (MHD refuses such connections too) */
        snprintf(err, errn, "%s %s: descriptor %d is beyond select()'s %d", what, addr,
                 s->listen_fd, FD_SETSIZE);
        MHD_stop_daemon(s->d);
        server_free(s);
        return NULL;
    }
    if (port_out)
        *port_out = bound_port(s->d);
    ev_init(&s->timer, on_timer);
    s->timer.data = s;
    run(s);
    return s;
}

/* The next run comes at once (a resumed connection has work, and no
 * socket event announces it). */
static void run_soon(cu_httpd *s)
{
    ev_timer_stop(s->loop, &s->timer);
    ev_timer_set(&s->timer, 0., 0.);
    ev_timer_start(s->loop, &s->timer);
}

void cu_httpd_decide(cu_httpd *s, uint64_t id, int status, const char *msg)
{
    hreq *r = s->waiting;
    while (r && r->id != id)
        r = r->wnext;
    if (!r)
        return;
    unlink_waiting(s, r);
    r->gate = GATE_DONE;
    r->gate_status = status == CU_HTTPD_WAIT ? 500 : status;
    snprintf(r->gate_msg, sizeof(r->gate_msg), "%s", msg ? msg : "");
    MHD_resume_connection(r->conn);
    run_soon(s);
}

void cu_httpd_stop(cu_httpd *s)
{
    if (!s)
        return;
    /* MHD refuses to stop with suspended connections: they get their 503
     * in a few last runs */
    if (s->waiting) {
        while (s->waiting)
            cu_httpd_decide(s, s->waiting->id, 503, "shutting down");
        s->gate = NULL;
        s->gate_req = NULL;
        /* resumed, answered, written: a run each */
        for (int i = 0; i < 3; i++)
            run(s);
    }
    ev_timer_stop(s->loop, &s->timer);
    for (int fd = 0; fd <= s->top; fd++)
        unwatch(s, fd);
    s->top = -1;
    MHD_stop_daemon(s->d); /* closes the connections: on_completed frees their requests */
    server_free(s);
}
