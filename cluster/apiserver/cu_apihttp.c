/*
 * cu_apihttp.c - the API server's HTTP layer on libmicrohttpd (a thread
 * per connection, request bodies, watch streaming through a content
 * reader, TLS) and its life cycle. See internal/cu_apiserver_int.h.
 */
#include "cu_apiserver.h"
#include "cu_authn.h"
#include "cu_objmeta.h"
#include "cu_doc.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_apiserver_int.h"

/* ---------------- the HTTP layer (libmicrohttpd) ---------------- */

typedef struct conn_state {
    cu_buf body;
    int refused;   /* answered before the body was read */
    int has_early; /* early holds the answer, given once the body is dropped */
    cu_api_resp early;
    size_t dropped; /* body bytes dropped so far */
} conn_state;

typedef struct arg_vec {
    char **v;
    size_t n, cap; /* n counts strings (2 per argument) */
} arg_vec;

static enum MHD_Result arg_push(arg_vec *av, const char *key, const char *value)
{
    if (av->n + 2 > av->cap) {
        size_t nc = av->cap ? av->cap * 2 : 16;
        char **nv = realloc(av->v, nc * sizeof *nv);
        if (!nv)
            return MHD_NO;
        av->v = nv;
        av->cap = nc;
    }
    av->v[av->n++] = strdup(key ? key : "");
    av->v[av->n++] = strdup(value ? value : "");
    return MHD_YES;
}

static enum MHD_Result collect_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                   const char *value)
{
    (void)kind;
    return arg_push(cls, key, value);
}

/* Sends the watch's events, each line as three pieces: its head, the
 * object's bytes (shared with the store and the other watchers, not
 * copied into a line of its own), and "}\n". */
static ssize_t watch_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    watch_stream *ws = cls;
    (void)pos;
    size_t on = 0;
    cu_rstr_data(ws->pending.obj, &on);
    if (!ws->pending.obj || ws->off >= ws->hlen + on + 2) {
        cu_rstr_unref(ws->pending.obj);
        ws->pending.obj = NULL;
        int ended = 0;
        if (!ws_next(ws, -1, &ended, &ws->pending))
            return ended == 2 ? MHD_CONTENT_READER_END_WITH_ERROR
                              : MHD_CONTENT_READER_END_OF_STREAM;
        ws->hlen = (size_t)snprintf(ws->head, sizeof ws->head,
                                    "{\"type\":\"%s\",\"object\":", ws->pending.type);
        ws->off = 0;
    }
    const char *obj = cu_rstr_data(ws->pending.obj, &on);
    size_t total = ws->hlen + on + 2, n = 0;
    while (n < max && ws->off < total) {
        const char *src;
        size_t avail;
        if (ws->off < ws->hlen) {
            src = ws->head + ws->off;
            avail = ws->hlen - ws->off;
        } else if (ws->off < ws->hlen + on) {
            src = obj + (ws->off - ws->hlen);
            avail = ws->hlen + on - ws->off;
        } else {
            src = &"}\n"[ws->off - ws->hlen - on];
            avail = total - ws->off;
        }
        if (avail > max - n)
            avail = max - n;
        memcpy(buf + n, src, avail);
        n += avail;
        ws->off += avail;
    }
    return (ssize_t)n;
}

static void watch_reader_free(void *cls) { ws_free(cls); }

static int is_loopback(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (!ci || !ci->client_addr)
        return 0;
    const struct sockaddr *sa = ci->client_addr;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)sa;
        return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
    }
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)(const void *)sa;
        static const unsigned char lo[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 };
        static const unsigned char v4pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
        return memcmp(in6->sin6_addr.s6_addr, lo, 16) == 0 ||
               (memcmp(in6->sin6_addr.s6_addr, v4pfx, 12) == 0 &&
                in6->sin6_addr.s6_addr[12] == 127);
    }
    return 0;
}

/* Queues resp (consumed) on conn: a buffer, or a watch stream. */
static enum MHD_Result queue_api_resp(struct MHD_Connection *conn, cu_api_resp *resp)
{
    struct MHD_Response *mr;
    if (resp->watch) {
        watch_stream *ws = resp->watch;
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        ws->fd = ci ? ci->connect_fd : -1;
        resp->watch = NULL;
        /* a watch waits for events as long as it likes: the idle timeout
         * is for connections that send and receive nothing */
        MHD_set_connection_option(conn, MHD_CONNECTION_OPTION_TIMEOUT, 0u);
        mr = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 32 * 1024, watch_reader, ws,
                                               watch_reader_free);
        if (!mr)
            ws_free(ws);
    } else {
        mr = MHD_create_response_from_buffer(resp->body_len, resp->body, MHD_RESPMEM_MUST_FREE);
        if (mr)
            resp->body = NULL;
    }
    enum MHD_Result ret = MHD_NO;
    if (mr) {
        char ra[32];
        MHD_add_response_header(mr, MHD_HTTP_HEADER_CONTENT_TYPE, resp->content_type);
        MHD_add_response_header(mr, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache, private");
        if (resp->retry_after > 0) {
            snprintf(ra, sizeof ra, "%d", resp->retry_after);
            MHD_add_response_header(mr, MHD_HTTP_HEADER_RETRY_AFTER, ra);
        }
        /* one Warning header per line (webhooks may give several) */
        for (char *w = resp->warning, *nl; w && *w; w = nl ? nl + 1 : NULL) {
            nl = strchr(w, '\n');
            if (nl)
                *nl = '\0';
            MHD_add_response_header(mr, "Warning", w);
        }
        ret = MHD_queue_response(conn, (unsigned)resp->code, mr);
        MHD_destroy_response(mr);
    }
    cu_api_resp_free(resp);
    return ret;
}

static void body_too_large(cu_api_resp *resp)
{
    memset(resp, 0, sizeof *resp);
    resp_status(resp, 413, "RequestEntityTooLarge", "Request entity too large: limit is %zu",
                (size_t)BODY_LIMIT);
}

/* Refusals decided from the request line and headers alone, before any
 * of the body is stored: no token (401), a declared body over the limit
 * (413). Returns 0 (go on), 1 (answer now: resp set) or 2 (answer resp
 * once the body is in, read and dropped: a small body is read so that the
 * client, still sending, gets the answer rather than a reset). */
static int refuse_early(cu_apiserver *a, struct MHD_Connection *conn, const char *url,
                        cu_api_resp *resp)
{
    const char *cl =
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    unsigned long long n = 0;
    if (cl) {
        char *end;
        errno = 0;
        n = strtoull(cl, &end, 10);
        if (errno == ERANGE)
            n = ULLONG_MAX;
    }
    cu_api_req req = {
        .path = url,
        .authorization =
            MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION),
    };
    if (!open_path(url) && !authorized(a, &req)) {
        memset(resp, 0, sizeof *resp);
        resp_status(resp, 401, "Unauthorized", "Unauthorized");
        return n > BODY_LIMIT ? 1 : 2;
    }
    if (n > BODY_LIMIT) {
        body_too_large(resp);
        return 1;
    }
    return 0;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
    cu_apiserver *a = cls;
    conn_state *cs = *con_cls;
    cu_api_resp resp;
    (void)version;
    if (!cs) {
        cs = calloc(1, sizeof *cs);
        if (!cs)
            return MHD_NO;
        cu_buf_init(&cs->body, BODY_LIMIT + 1);
        *con_cls = cs;
        int r = refuse_early(a, conn, url, &cs->early);
        if (r == 1) {
            cs->refused = 1;
            return queue_api_resp(conn, &cs->early);
        }
        cs->has_early = r == 2;
        return MHD_YES;
    }
    if (cs->refused) {
        /* answered already; what the client still sends is dropped */
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (cs->has_early) {
        /* refused: the body is counted and dropped, never stored */
        cs->dropped += *upload_data_size;
        int over = cs->dropped > BODY_LIMIT;
        if (*upload_data_size && !over) {
            *upload_data_size = 0;
            return MHD_YES;
        }
        *upload_data_size = 0;
        cs->has_early = 0;
        cs->refused = 1;
        return queue_api_resp(conn, &cs->early);
    }
    if (*upload_data_size) {
        if (cu_buf_append(&cs->body, upload_data, *upload_data_size) != CU_OK ||
            cs->body.len > BODY_LIMIT) {
            /* over the limit without a Content-Length (chunked): answer now,
             * do not read the rest */
            *upload_data_size = 0;
            cs->refused = 1;
            body_too_large(&resp);
            return queue_api_resp(conn, &resp);
        }
        *upload_data_size = 0;
        return MHD_YES;
    }
    arg_vec av = { NULL, 0, 0 };
    MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, collect_arg, &av);
    cu_api_req req = {
        .method = method,
        .path = url,
        .args = (const char *const *)av.v,
        .nargs = av.n / 2,
        .accept = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT),
        .content_type =
            MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE),
        .authorization =
            MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION),
        .user_agent =
            MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_USER_AGENT),
        .body = cs->body.len ? cu_buf_str(&cs->body) : NULL,
        .body_len = cs->body.len,
        .loopback = is_loopback(conn),
    };
    cu_apiserver_handle(a, &req, &resp);
    enum MHD_Result ret = queue_api_resp(conn, &resp);
    for (size_t i = 0; i < av.n; i++)
        free(av.v[i]);
    free(av.v);
    return ret;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    conn_state *cs = *con_cls;
    (void)cls;
    (void)conn;
    (void)toe;
    if (cs) {
        cu_buf_free(&cs->body);
        if (cs->has_early)
            cu_api_resp_free(&cs->early);
        free(cs);
        *con_cls = NULL;
    }
}

/* ---------------- life cycle ---------------- */

static cu_err load_tokens(cu_apiserver *a, const char *file, char *err, size_t errn)
{
    FILE *f = fopen(file, "r");
    if (!f) {
        snprintf(err, errn, "--token-file %s: %s", file, strerror(errno));
        return CU_EIO;
    }
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        char *p = line;
        while (isspace((unsigned char)*p))
            p++;
        if (!*p || *p == '#')
            continue;
        size_t n = strcspn(p, ",\r\n");
        while (n && isspace((unsigned char)p[n - 1]))
            n--;
        if (!n)
            continue;
        char **nt = realloc(a->tokens, (a->ntokens + 1) * sizeof *nt);
        if (!nt || !(nt[a->ntokens] = strndup(p, n))) {
            if (nt)
                a->tokens = nt;
            fclose(f);
            snprintf(err, errn, "--token-file %s: out of memory", file);
            return CU_ENOMEM;
        }
        a->tokens = nt;
        a->ntokens++;
    }
    fclose(f);
    if (!a->ntokens) {
        snprintf(err, errn,
                 "--token-file %s: no token in the file (one token per line, "
                 "optionally followed by ,user,uid,groups)",
                 file);
        return CU_EINVAL;
    }
    return CU_OK;
}

cu_apiserver *cu_apiserver_new_unbound(cu_store *s, const cu_apiserver_opts *o, char *err,
                                       size_t errn)
{
    cu_apiserver *a = calloc(1, sizeof *a);
    if (!a) {
        snprintf(err, errn, "out of memory");
        return NULL;
    }
    a->s = s;
    a->tls = o->tls;
    a->admin = o->admin;
    a->verbose = o->verbose;
    atomic_init(&a->stopping, 0);
    pthread_mutex_init(&a->mu, NULL);
    if (o->token_file && (load_tokens(a, o->token_file, err, errn) != CU_OK ||
                          !(a->authn = cu_authn_load(o->token_file, err, errn)))) {
        cu_apiserver_stop(a);
        return NULL;
    }
    snprintf(a->url, sizeof a->url, "http://127.0.0.1:0");
    return a;
}

/* Splits "HOST:PORT" / "[V6]:PORT" / ":PORT" / "PORT". */
static int parse_listen(const char *l, char *host, size_t hn, int *port)
{
    const char *colon;
    char *end;
    if (!l || !*l)
        l = "127.0.0.1:0";
    if (l[0] == '[') {
        const char *rb = strchr(l, ']');
        if (!rb || rb[1] != ':' || (size_t)(rb - l - 1) >= hn)
            return -1;
        memcpy(host, l + 1, (size_t)(rb - l - 1));
        host[rb - l - 1] = '\0';
        colon = rb + 1;
    } else if ((colon = strrchr(l, ':'))) {
        if ((size_t)(colon - l) >= hn)
            return -1;
        memcpy(host, l, (size_t)(colon - l));
        host[colon - l] = '\0';
        if (!*host)
            snprintf(host, hn, "127.0.0.1");
    } else {
        snprintf(host, hn, "127.0.0.1");
        colon = l - 1;
    }
    long p = strtol(colon + 1, &end, 10);
    if (end == colon + 1 || *end || p < 0 || p > 65535)
        return -1;
    *port = (int)p;
    return 0;
}

/* URL paths and query arguments are C strings from here on: %00 is left
 * as it is, so that a NUL can never truncate a name or a selector (it then
 * fails their validation); every other %XX is decoded as MHD does. */
static size_t unescape_keep_nul(void *cls, struct MHD_Connection *c, char *s)
{
    (void)cls;
    (void)c;
    char *w = s;
    for (const char *r = s; *r;) {
        if (r[0] == '%' && isxdigit((unsigned char)r[1]) && isxdigit((unsigned char)r[2])) {
            char hex[3] = { r[1], r[2], '\0' };
            char v = (char)strtol(hex, NULL, 16);
            if (v) {
                *w++ = v;
                r += 3;
                continue;
            }
        }
        *w++ = *r++;
    }
    *w = '\0';
    return (size_t)(w - s);
}

cu_apiserver *cu_apiserver_start(cu_store *s, const cu_apiserver_opts *o, char *err, size_t errn)
{
    char host[256];
    int port;
    if (parse_listen(o->listen, host, sizeof host, &port) != 0) {
        snprintf(err, errn,
                 "--listen %s: expected HOST:PORT, e.g. 127.0.0.1:6443 (port 0 "
                 "picks a free one)",
                 o->listen);
        return NULL;
    }
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    struct sockaddr_in *in4 = (struct sockaddr_in *)(void *)&ss;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)(void *)&ss;
    int v6 = 0;
    const char *h = strcmp(host, "localhost") == 0 ? "127.0.0.1" : host;
    if (inet_pton(AF_INET, h, &in4->sin_addr) == 1) {
        in4->sin_family = AF_INET;
        in4->sin_port = htons((uint16_t)port);
    } else if (inet_pton(AF_INET6, h, &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons((uint16_t)port);
        v6 = 1;
    } else {
        snprintf(err, errn, "--listen %s: the host must be an IP address (or localhost)",
                 o->listen);
        return NULL;
    }
    cu_apiserver *a = cu_apiserver_new_unbound(s, o, err, errn);
    if (!a)
        return NULL;
    if (o->tls &&
        cu_tls_generate(host, &a->ca_pem, &a->cert_pem, &a->key_pem, err, errn) != CU_OK) {
        cu_apiserver_stop(a);
        return NULL;
    }
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
                     MHD_USE_POLL | (o->verbose ? MHD_USE_ERROR_LOG : 0) |
                     (o->tls ? MHD_USE_TLS : 0) | (v6 ? MHD_USE_IPv6 : 0);
    struct MHD_OptionItem opts[] = {
        { MHD_OPTION_SOCK_ADDR, 0, &ss },
        { MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, a },
        { MHD_OPTION_UNESCAPE_CALLBACK, (intptr_t)unescape_keep_nul, NULL },
        { MHD_OPTION_THREAD_STACK_SIZE, CONN_STACK, NULL },
        /* no client may hold every connection: a cap per address, and
         * idle connections (slow TLS handshakes and requests too) closed */
        { MHD_OPTION_PER_IP_CONNECTION_LIMIT,
          o->max_conns_per_client > 0 ? o->max_conns_per_client : CONN_PER_CLIENT_DEFAULT, NULL },
        { MHD_OPTION_CONNECTION_TIMEOUT,
          o->idle_timeout_s > 0 ? o->idle_timeout_s : IDLE_TIMEOUT_DEFAULT, NULL },
        { o->tls ? MHD_OPTION_HTTPS_MEM_KEY : MHD_OPTION_END, 0, a->key_pem },
        { o->tls ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, a->cert_pem },
        { MHD_OPTION_END, 0, NULL },
    };
    a->d = MHD_start_daemon(flags, (uint16_t)port, NULL, NULL, on_request, a, MHD_OPTION_ARRAY,
                            opts, MHD_OPTION_END);
    if (!a->d) {
        snprintf(err, errn, "cannot listen on %s:%d%s: %s", host, port, o->tls ? " (TLS)" : "",
                 errno ? strerror(errno) : "libmicrohttpd refused");
        cu_apiserver_stop(a);
        return NULL;
    }
    if (agg_start(a, err, errn) != CU_OK) {
        cu_apiserver_stop(a);
        return NULL;
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(a->d, MHD_DAEMON_INFO_BIND_PORT);
    a->port = di ? di->port : port;
    const char *uh = strcmp(host, "0.0.0.0") == 0 ? "127.0.0.1"
                     : strcmp(host, "::") == 0    ? "::1"
                                                  : host;
    snprintf(a->url, sizeof a->url, "%s://%s%s%s:%d", o->tls ? "https" : "http",
             strchr(uh, ':') ? "[" : "", uh, strchr(uh, ':') ? "]" : "", a->port);
    if (o->kubeconfig_out &&
        cu_kubeconfig_write(o->kubeconfig_out, a->url, a->ca_pem,
                            /* with TLS and no credentials kubectl would prompt for a
                             * password: give it a token the server does not check */
                            a->ntokens ? a->tokens[0]
                            : o->tls   ? "cueue-unchecked"
                                       : NULL,
                            err, errn) != CU_OK) {
        cu_apiserver_stop(a);
        return NULL;
    }
    return a;
}

int cu_apiserver_port(const cu_apiserver *a) { return a->port; }

const char *cu_apiserver_url(const cu_apiserver *a) { return a->url; }

void cu_apiserver_stop(cu_apiserver *a)
{
    if (!a)
        return;
    atomic_store(&a->stopping, 1);
    agg_stop(a);
    if (a->d) {
        cu_store_drop_watches(a->s);
        MHD_stop_daemon(a->d);
    }
    while (a->faults) {
        fault_rule *f = a->faults;
        a->faults = f->next;
        fault_free(f);
    }
    for (size_t i = 0; i < a->ntokens; i++)
        free(a->tokens[i]);
    free(a->tokens);
    cu_authn_free(a->authn);
    free(a->ca_pem);
    free(a->cert_pem);
    free(a->key_pem);
    pthread_mutex_destroy(&a->mu);
    free(a);
}
