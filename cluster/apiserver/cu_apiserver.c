/*
 * cu_apiserver.c - the embedded cluster's API server: libmicrohttpd with
 * a thread per connection (so a handler may block, which watches do),
 * routing of Kubernetes REST paths onto the store (cu_store.h),
 * discovery, /version, health, /openapi/v3, Table output, watch
 * streaming, patches (cu_patch.h), strict field validation of custom
 * resources (cu_schema.h), bearer tokens, TLS and fault injection.
 *
 * Layout: the HTTP layer (cu_apihttp.c) turns an MHD request into a
 * cu_api_req and hands it to cu_apiserver_handle (this file: helpers,
 * routing, the request core, watch streams), which knows nothing of MHD
 * and fills a cu_api_resp; tests drive that core in-process. A watch
 * response carries an opened watch_stream that the HTTP layer drains
 * through a content-reader callback, one event line at a time. The rest:
 * cu_verbs.c (verbs, field management), cu_reqbody.c (bodies and their
 * validation), cu_tables.c, cu_jsonpath.c, cu_discovery.c (discovery,
 * OpenAPI), cu_faults.c; internal/cu_apiserver_int.h their shared types.
 *
 * Invariants: every response body is a JSON document (or "ok" for the
 * health endpoints); every error is a metav1.Status with the HTTP code as
 * its code. Fault rules live in a list guarded by a->mu; nothing else in
 * the server is mutable after start except the stop flag.
 */
#include "cu_apiserver.h"
#include "cu_authn.h"
#include "cu_objmeta.h"
#include "cu_doc.h"
#include "cu_json.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "cu_apiserver_int.h"

/* ---------------- small helpers ---------------- */

void sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

void copy_str(char *dst, size_t n, const char *src)
{
    size_t l = strlen(src);
    if (l >= n)
        l = n - 1;
    memcpy(dst, src, l);
    dst[l] = '\0';
}

const char *arg(const cu_api_req *r, const char *k)
{
    for (size_t i = 0; i < r->nargs; i++)
        if (strcmp(r->args[2 * i], k) == 0)
            return r->args[2 * i + 1] ? r->args[2 * i + 1] : "";
    return NULL;
}

int arg_true(const cu_api_req *r, const char *k)
{
    const char *v = arg(r, k);
    return v && (strcmp(v, "true") == 0 || strcmp(v, "1") == 0);
}

static void resp_text(cu_api_resp *r, int code, const char *ct, const char *text)
{
    free(r->body);
    r->code = code;
    r->body = strdup(text);
    r->body_len = r->body ? strlen(r->body) : 0;
    snprintf(r->content_type, sizeof r->content_type, "%s", ct);
}

/* Sets the response to obj serialized (takes obj). */
void resp_json(cu_api_resp *r, int code, json_object *obj)
{
    const char *s = obj ? json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN |
                                                                  JSON_C_TO_STRING_NOSLASHESCAPE)
                        : "null";
    resp_text(r, code, "application/json", s);
    json_object_put(obj);
}

void resp_st(cu_api_resp *r, const cu_status *st) { resp_json(r, st->code, cu_status_json(st)); }

void resp_add_warning(cu_api_resp *r, const char *text)
{
    cu_buf b;
    cu_buf_init(&b, (size_t)1 << 20);
    if (r->warning) {
        cu_buf_puts(&b, r->warning);
        cu_buf_puts(&b, "\n");
    }
    cu_buf_puts(&b, "299 - \"");
    for (const char *p = text ? text : ""; *p; p++) {
        if (*p == '"' || *p == '\\')
            cu_buf_append(&b, "\\", 1);
        cu_buf_append(&b, *p == '\n' || *p == '\r' ? " " : p, 1);
    }
    cu_buf_puts(&b, "\"");
    if (b.failed || !b.data) {
        cu_buf_free(&b);
        return;
    }
    free(r->warning);
    r->warning = b.data; /* the buffer's NUL-terminated bytes, now ours */
}

void resp_status(cu_api_resp *r, int code, const char *reason, const char *fmt, ...)
{
    cu_status st;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    memset(&st, 0, sizeof st);
    cu_status_set(&st, code, reason, "%s", msg);
    resp_st(r, &st);
}

void resp_not_found_path(cu_api_resp *r)
{
    cu_status st;
    memset(&st, 0, sizeof st);
    cu_status_set(&st, 404, "NotFound", "the server could not find the requested resource");
    st.empty_details = 1;
    resp_st(r, &st);
}

/* ---------------- routing ---------------- */

static int copy_seg(char *dst, size_t n, const char *src)
{
    return (size_t)snprintf(dst, n, "%s", src) < n ? 0 : -1;
}

cu_err cu_route_parse(const char *path, cu_route *o)
{
    char buf[2048];
    const char *seg[12];
    size_t n = 0;
    memset(o, 0, sizeof *o);
    if (!path || copy_seg(buf, sizeof buf, path) != 0)
        return CU_EINVAL;
    for (char *p = buf; *p;) {
        while (*p == '/')
            *p++ = '\0';
        if (!*p)
            break;
        if (n == 12)
            return CU_EINVAL;
        seg[n++] = p;
        while (*p && *p != '/')
            p++;
    }
    size_t rest;
    if (n >= 1 && strcmp(seg[0], "api") == 0) {
        if (n == 1) {
            o->kind = CU_ROUTE_API;
            return CU_OK;
        }
        if (copy_seg(o->version, sizeof o->version, seg[1]) != 0)
            return CU_EINVAL;
        if (n == 2) {
            o->kind = CU_ROUTE_GV;
            return CU_OK;
        }
        rest = 2;
    } else if (n >= 1 && strcmp(seg[0], "apis") == 0) {
        if (n == 1) {
            o->kind = CU_ROUTE_APIS;
            return CU_OK;
        }
        if (copy_seg(o->group, sizeof o->group, seg[1]) != 0)
            return CU_EINVAL;
        if (n == 2) {
            o->kind = CU_ROUTE_GROUP;
            return CU_OK;
        }
        if (copy_seg(o->version, sizeof o->version, seg[2]) != 0)
            return CU_EINVAL;
        if (n == 3) {
            o->kind = CU_ROUTE_GV;
            return CU_OK;
        }
        rest = 3;
    } else {
        return CU_EINVAL;
    }
    const char **r = seg + rest;
    size_t m = n - rest;
    /* namespaces/NS/RESOURCE... unless it is the namespace's own subresource */
    if (m >= 3 && strcmp(r[0], "namespaces") == 0 &&
        !(m == 3 && (strcmp(r[2], "status") == 0 || strcmp(r[2], "finalize") == 0))) {
        if (copy_seg(o->ns, sizeof o->ns, r[1]) != 0)
            return CU_EINVAL;
        r += 2;
        m -= 2;
    }
    if (m < 1 || m > 3)
        return CU_EINVAL;
    if (copy_seg(o->resource, sizeof o->resource, r[0]) != 0 ||
        (m >= 2 && copy_seg(o->name, sizeof o->name, r[1]) != 0) ||
        (m == 3 && copy_seg(o->sub, sizeof o->sub, r[2]) != 0))
        return CU_EINVAL;
    o->kind = CU_ROUTE_RESOURCE;
    return CU_OK;
}

/* ---------------- the request core ---------------- */

int open_path(const char *p)
{
    static const char *const open[] = { "/healthz", "/readyz", "/livez", "/version", NULL };
    for (const char *const *o = open; *o; o++) {
        size_t n = strlen(*o);
        if (strncmp(p, *o, n) == 0 && (p[n] == '\0' || p[n] == '/'))
            return 1;
    }
    return 0;
}

int authorized(cu_apiserver *a, const cu_api_req *r)
{
    if (!a->ntokens)
        return 1;
    const char *h = r->authorization;
    if (!h || strncasecmp(h, "Bearer ", 7) != 0)
        return 0;
    h += 7;
    while (*h == ' ')
        h++;
    for (size_t i = 0; i < a->ntokens; i++)
        if (strcmp(a->tokens[i], h) == 0)
            return 1;
    return 0;
}

static void handle_core(cu_apiserver *a, const cu_api_req *r, cu_api_resp *resp)
{
    const char *p = r->path;
    if (open_path(p)) {
        if (strncmp(p, "/version", 8) == 0)
            resp_json(resp, 200, version_json());
        else
            resp_text(resp, 200, "text/plain; charset=utf-8", "ok");
        return;
    }
    if (!authorized(a, r)) {
        resp_status(resp, 401, "Unauthorized", "Unauthorized");
        return;
    }
    json_object *review = NULL;
    int review_code =
        a->authn ? cu_authn_handle(a->authn, r->method, p, r->body, r->body_len, &review) : 0;
    if (review_code) {
        resp_json(resp, review_code, review);
        return;
    }
    if (strcmp(p, "/cueue/faults") == 0) {
        handle_faults(a, r, resp);
        return;
    }
    if (apply_faults(a, r, resp))
        return;
    if (agg_proxy(a, r, resp))
        return;
    int get = strcmp(r->method, "GET") == 0;
    if (strncmp(p, "/openapi/v3", 11) == 0 && (p[11] == '\0' || p[11] == '/')) {
        if (!get) {
            method_not_allowed(resp);
            return;
        }
        json_object *doc = NULL;
        if (p[11] == '\0' || strcmp(p + 11, "/") == 0)
            doc = openapi_root(a->s);
        else if (strncmp(p + 12, "api/", 4) == 0 && !strchr(p + 16, '/'))
            doc = openapi_gv(a->s, "", p + 16);
        else if (strncmp(p + 12, "apis/", 5) == 0) {
            char g[200];
            const char *slash = strchr(p + 17, '/');
            if (slash && (size_t)(slash - (p + 17)) < sizeof g && !strchr(slash + 1, '/')) {
                memcpy(g, p + 17, (size_t)(slash - (p + 17)));
                g[slash - (p + 17)] = '\0';
                doc = openapi_gv(a->s, g, slash + 1);
            }
        }
        if (doc)
            resp_json(resp, 200, doc);
        else
            resp_not_found_path(resp);
        return;
    }
    cu_route route;
    if (cu_route_parse(p, &route) != CU_OK) {
        resp_not_found_path(resp);
        return;
    }
    if (route.kind != CU_ROUTE_RESOURCE && !get) {
        method_not_allowed(resp);
        return;
    }
    json_object *doc = NULL;
    switch (route.kind) {
    case CU_ROUTE_API:
        doc = json_object_new_object();
        cu_jset_str(doc, "kind", "APIVersions");
        json_object *vs = json_object_new_array();
        json_object_array_add(vs, json_object_new_string("v1"));
        json_object_object_add(doc, "versions", vs);
        json_object *addrs = json_object_new_array(), *ad = json_object_new_object();
        char sa[64];
        snprintf(sa, sizeof sa, "127.0.0.1:%d", a->port);
        cu_jset_str(ad, "clientCIDR", "0.0.0.0/0");
        cu_jset_str(ad, "serverAddress", sa);
        json_object_array_add(addrs, ad);
        json_object_object_add(doc, "serverAddressByClientCIDRs", addrs);
        break;
    case CU_ROUTE_APIS:
        doc = group_list(a->s, NULL);
        if (a->authn)
            cu_authn_add_groups(doc); /* the review APIs (cu_authn.h) */
        doc = agg_groups(a, doc, NULL);
        break;
    case CU_ROUTE_GROUP:
        doc = group_list(a->s, route.group);
        if (!doc)
            doc = agg_groups(a, NULL, route.group);
        break;
    case CU_ROUTE_GV: doc = resource_list(a->s, route.group, route.version); break;
    case CU_ROUTE_RESOURCE: handle_resource(a, r, &route, resp); return;
    default: break;
    }
    if (doc)
        resp_json(resp, 200, doc);
    else
        resp_not_found_path(resp);
}

void cu_apiserver_handle(cu_apiserver *a, const cu_api_req *r, cu_api_resp *out)
{
    memset(out, 0, sizeof *out);
    handle_core(a, r, out);
    if (!out->body && !out->watch)
        resp_status(out, 500, "InternalError", "Internal error occurred: no response");
    if (a->verbose) {
        cu_buf q;
        cu_buf_init(&q, 4096);
        for (size_t i = 0; i < r->nargs; i++)
            cu_buf_printf(&q, "%c%s=%s", i ? '&' : '?', r->args[2 * i],
                          r->args[2 * i + 1] ? r->args[2 * i + 1] : "");
        fprintf(stderr, "cueue cluster: %s %s%s -> %d%s\n", r->method, r->path, cu_buf_str(&q),
                out->code, out->watch ? " (watch)" : "");
        cu_buf_free(&q);
    }
}

/* ---------------- watch streams ---------------- */

/* True when the client closed its end (or sent anything, which a watching
 * client never does over TLS but a closing one does: close_notify). */
static int client_gone(int fd, int tls)
{
    struct pollfd p = { fd, POLLIN, 0 };
    if (poll(&p, 1, 0) <= 0)
        return 0;
    if (p.revents & (POLLHUP | POLLERR | POLLNVAL))
        return 1;
    if (p.revents & POLLIN) {
        char ch;
        ssize_t n = recv(fd, &ch, 1, MSG_PEEK | MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
            return 1;
        if (n > 0 && tls)
            return 1;
    }
    return 0;
}

/* Rewrites an event for Table watches (the object becomes a Table with
 * one row; column definitions come with the first event only). Other
 * watches send the event as the store gave it. */
static void transform_ev(watch_stream *ws, cu_watch_ev *ev)
{
    if ((!ws->table && !ws->crd) ||
        (strcmp(ev->type, "ADDED") != 0 && strcmp(ev->type, "MODIFIED") != 0 &&
         strcmp(ev->type, "DELETED") != 0))
        return;
    size_t n = 0;
    const char *js = cu_rstr_data(ev->obj, &n);
    json_object *o = cu_json_parse(NULL, js, n, NULL, 0);
    if (!o)
        return;
    if (ws->crd) { /* stored in another version: through the CRD's conversion webhook */
        cu_status st;
        memset(&st, 0, sizeof st);
        if (conv_one(ws->a, ws->rt, ws->crd, &o, ws->rt->version, &st) != 0) {
            json_object_put(o);
            o = cu_status_json(&st);
            ev->type = "ERROR";
        }
    }
    json_object *t = o;
    if (ws->table && strcmp(ev->type, "ERROR") != 0) {
        t = cu_table_build(ws->rt, o, ws->include, ws->first, cu_clock_wall_ms());
        ws->first = 0;
        json_object_put(o);
    }
    size_t tn = 0;
    const char *ts = json_object_to_json_string_length(
        t, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &tn);
    cu_rstr *r = ts ? cu_rstr_new(ts, tn) : NULL;
    json_object_put(t);
    if (!r)
        return;
    cu_rstr_unref(ev->obj);
    ev->obj = r;
}

/* The next event for the client (1, in *ev), or 0: *ended: 1 = end of
 * stream, 2 = the client went away. timeout_ms < 0: wait until something
 * happens. */
int ws_next(watch_stream *ws, int timeout_ms, int *ended, cu_watch_ev *ev)
{
    int64_t start = cu_clock_mono_ms();
    *ended = 0;
    for (;;) {
        int64_t now = cu_clock_mono_ms();
        if (atomic_load(&ws->a->stopping) || ws->ended || (ws->deadline && now >= ws->deadline)) {
            *ended = 1;
            return 0;
        }
        if (timeout_ms >= 0 && now - start >= timeout_ms)
            return 0;
        int64_t slice = WATCH_SLICE_MS;
        if (ws->deadline && ws->deadline - now < slice)
            slice = ws->deadline - now;
        if (timeout_ms >= 0 && start + timeout_ms - now < slice)
            slice = start + timeout_ms - now;
        if (slice < 1)
            slice = 1;
        pthread_mutex_lock(&ws->a->mu);
        int stall = ws->a->stall;
        pthread_mutex_unlock(&ws->a->mu);
        if (stall) {
            sleep_ms((int)slice);
        } else if (ws->held.obj) {
            *ev = ws->held;
            ws->held.obj = NULL;
            transform_ev(ws, ev);
            return 1;
        } else {
            if (cu_store_watch_next_ev(ws->w, (int)slice, ev)) {
                /* a stall that began while we waited holds this event too */
                pthread_mutex_lock(&ws->a->mu);
                stall = ws->a->stall;
                pthread_mutex_unlock(&ws->a->mu);
                if (!stall) {
                    transform_ev(ws, ev);
                    return 1;
                }
                ws->held = *ev;
                ev->obj = NULL;
            }
            if (!ws->held.obj && cu_store_watch_done(ws->w)) {
                ws->ended = 1;
                *ended = 1;
                return 0;
            }
        }
        if (ws->fd >= 0 && client_gone(ws->fd, ws->a->tls)) {
            ws->ended = 1;
            *ended = 2;
            return 0;
        }
    }
}

void ws_free(watch_stream *ws)
{
    if (!ws)
        return;
    cu_store_watch_close(ws->w);
    json_object_put(ws->crd);
    cu_rstr_unref(ws->pending.obj);
    cu_rstr_unref(ws->held.obj);
    free(ws);
}

char *cu_api_watch_next(cu_api_resp *r, int timeout_ms, int *ended)
{
    if (!r->watch) {
        *ended = 1;
        return NULL;
    }
    cu_watch_ev ev;
    if (!ws_next(r->watch, timeout_ms, ended, &ev))
        return NULL;
    size_t n = 0;
    const char *js = cu_rstr_data(ev.obj, &n);
    size_t tl = strlen(ev.type);
    char *l = malloc(tl + n + 32);
    if (l) {
        size_t k = (size_t)sprintf(l, "{\"type\":\"%s\",\"object\":", ev.type);
        memcpy(l + k, js, n);
        l[k + n] = '}';
        l[k + n + 1] = '\0';
    }
    cu_rstr_unref(ev.obj);
    return l;
}

void cu_api_resp_free(cu_api_resp *r)
{
    free(r->body);
    free(r->warning);
    ws_free(r->watch);
    memset(r, 0, sizeof *r);
}
