/*
 * cu_visibility.c - see cu_visibility.h. The routes are split on '/';
 * every document is built with json-c (names come from the request and
 * are escaped there).
 */
#include "cu_visibility.h"
#include "cu_json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GV CU_VISIBILITY_GROUP "/" CU_VISIBILITY_VERSION
#define PREFIX "/apis/" GV "/"

const char *cu_vis_qparam(const char *query, const char *name, char *out, size_t n)
{
    size_t nl = strlen(name);
    for (const char *p = query; p && *p;) {
        const char *amp = strchr(p, '&');
        size_t len = amp ? (size_t)(amp - p) : strlen(p);
        if (len > nl && strncmp(p, name, nl) == 0 && p[nl] == '=') {
            size_t k = 0;
            for (size_t i = nl + 1; i < len && k + 1 < n; i++) {
                char ch = p[i];
                if (ch == '%' && i + 2 < len) {
                    char hx[3] = { p[i + 1], p[i + 2], 0 };
                    ch = (char)strtol(hx, NULL, 16);
                    i += 2;
                } else if (ch == '+') {
                    ch = ' ';
                }
                out[k++] = ch;
            }
            out[k] = 0;
            return out;
        }
        p = amp ? amp + 1 : NULL;
    }
    return NULL;
}

/* ---- routes ---- */

enum { RT_NONE, RT_GROUPS, RT_GROUP, RT_RESOURCES, RT_CQ, RT_LQ, RT_HEALTH };

typedef struct route {
    int kind;
    char ns[256], name[256];
} route;

/* Copies the segment at *p (up to '/' or the end) into out; 0 when empty
 * or too long. Advances *p past it and its '/'. */
static int segment(const char **p, char *out, size_t n)
{
    size_t len = strcspn(*p, "/");
    if (!len || len >= n)
        return 0;
    memcpy(out, *p, len);
    out[len] = 0;
    *p += len;
    if (**p == '/')
        (*p)++;
    return 1;
}

static void parse_route(const char *path, route *r)
{
    memset(r, 0, sizeof(*r));
    size_t pl = strlen(path);
    char trimmed[1024];
    if (pl >= sizeof(trimmed))
        return;
    memcpy(trimmed, path, pl + 1);
    while (pl > 1 && trimmed[pl - 1] == '/') /* as the API server: "/apis/" is "/apis" */
        trimmed[--pl] = 0;
    if (strcmp(trimmed, "/healthz") == 0 || strcmp(trimmed, "/livez") == 0 ||
        strcmp(trimmed, "/readyz") == 0) {
        r->kind = RT_HEALTH;
        return;
    }
    if (strcmp(trimmed, "/apis") == 0) {
        r->kind = RT_GROUPS;
        return;
    }
    if (strcmp(trimmed, "/apis/" CU_VISIBILITY_GROUP) == 0) {
        r->kind = RT_GROUP;
        return;
    }
    if (strcmp(trimmed, "/apis/" GV) == 0) {
        r->kind = RT_RESOURCES;
        return;
    }
    if (strncmp(trimmed, PREFIX, strlen(PREFIX)) != 0)
        return;
    const char *p = trimmed + strlen(PREFIX);
    char a[256], b[256], c[256], d[256], e[256];
    if (!segment(&p, a, sizeof(a)) || !segment(&p, b, sizeof(b)) || !segment(&p, c, sizeof(c)))
        return;
    if (strcmp(a, "clusterqueues") == 0 && strcmp(c, "pendingworkloads") == 0 && !*p) {
        r->kind = RT_CQ;
        snprintf(r->name, sizeof(r->name), "%s", b);
        return;
    }
    if (strcmp(a, "namespaces") == 0 && strcmp(c, "localqueues") == 0 &&
        segment(&p, d, sizeof(d)) && segment(&p, e, sizeof(e)) && !*p &&
        strcmp(e, "pendingworkloads") == 0) {
        r->kind = RT_LQ;
        snprintf(r->ns, sizeof(r->ns), "%s", b);
        snprintf(r->name, sizeof(r->name), "%s", d);
    }
}

/* ---- documents ---- */

static void put_s(json_object *o, const char *k, const char *v)
{
    json_object_object_add(o, k, json_object_new_string(v ? v : ""));
}

static int emit(cu_buf *b, json_object *o, const char **ctype, int code)
{
    if (!o) {
        cu_buf_puts(b, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
                       "\"status\":\"Failure\",\"message\":\"out of memory\","
                       "\"reason\":\"InternalError\",\"code\":500}\n");
        *ctype = "application/json";
        return 500;
    }
    cu_buf_puts(b, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
                                                         JSON_C_TO_STRING_NOSLASHESCAPE));
    cu_buf_puts(b, "\n");
    json_object_put(o);
    *ctype = "application/json";
    return code;
}

/* A Status object: reason and message; details {name, group, kind} when
 * kind is not NULL. */
static json_object *status_obj(int code, const char *reason, const char *message, const char *name,
                               const char *kind)
{
    json_object *o = json_object_new_object();
    if (!o)
        return NULL;
    put_s(o, "kind", "Status");
    put_s(o, "apiVersion", "v1");
    json_object_object_add(o, "metadata", json_object_new_object());
    put_s(o, "status", "Failure");
    put_s(o, "message", message);
    put_s(o, "reason", reason);
    if (kind) {
        json_object *d = json_object_new_object();
        put_s(d, "name", name);
        put_s(d, "group", CU_VISIBILITY_GROUP);
        put_s(d, "kind", kind);
        json_object_object_add(o, "details", d);
    }
    json_object_object_add(o, "code", json_object_new_int(code));
    return o;
}

static json_object *group_version(void)
{
    json_object *v = json_object_new_object();
    put_s(v, "groupVersion", GV);
    put_s(v, "version", CU_VISIBILITY_VERSION);
    return v;
}

static json_object *api_group(int with_kind)
{
    json_object *g = json_object_new_object(), *vs = json_object_new_array();
    if (with_kind) {
        put_s(g, "kind", "APIGroup");
        put_s(g, "apiVersion", "v1");
    }
    put_s(g, "name", CU_VISIBILITY_GROUP);
    json_object_array_add(vs, group_version());
    json_object_object_add(g, "versions", vs);
    json_object_object_add(g, "preferredVersion", group_version());
    return g;
}

static json_object *resource_list(void)
{
    static const struct {
        const char *name, *singular;
        int namespaced, get;
    } rs[] = {
        { "clusterqueues", "clusterqueue", 0, 0 },
        { "clusterqueues/pendingworkloads", "", 0, 1 },
        { "localqueues", "localqueue", 1, 0 },
        { "localqueues/pendingworkloads", "", 1, 1 },
    };
    json_object *o = json_object_new_object(), *arr = json_object_new_array();
    put_s(o, "kind", "APIResourceList");
    put_s(o, "apiVersion", "v1");
    put_s(o, "groupVersion", GV);
    for (size_t i = 0; i < sizeof(rs) / sizeof(rs[0]); i++) {
        json_object *r = json_object_new_object(), *verbs = json_object_new_array();
        put_s(r, "name", rs[i].name);
        put_s(r, "singularName", rs[i].singular);
        json_object_object_add(r, "namespaced", json_object_new_boolean(rs[i].namespaced));
        put_s(r, "kind", "PendingWorkloadsSummary");
        if (rs[i].get)
            json_object_array_add(verbs, json_object_new_string("get"));
        json_object_object_add(r, "verbs", verbs);
        json_object_array_add(arr, r);
    }
    json_object_object_add(o, "resources", arr);
    return o;
}

/* limit or offset from the query: *v (unchanged when absent), or 0 with
 * a message when it is not a whole number (or limit is negative). */
static int int_param(const char *query, const char *name, int64_t *v, char *msg, size_t msgn)
{
    char buf[64];
    if (!cu_vis_qparam(query, name, buf, sizeof(buf)))
        return 1;
    char *end = NULL;
    errno = 0;
    long long x = strtoll(buf, &end, 10);
    if (!buf[0] || *end || errno) {
        snprintf(msg, msgn, "%s: expected a whole number, got \"%.40s\"", name, buf);
        return 0;
    }
    if (x < 0 && strcmp(name, "limit") == 0) {
        snprintf(msg, msgn, "limit: must not be negative, got %lld", x);
        return 0;
    }
    *v = x;
    return 1;
}

static int pending(const cu_vis_src *src, const route *r, const char *query, cu_buf *b,
                   const char **ctype)
{
    char msg[700];
    const char *why = src->not_ready ? src->not_ready(src->ud) : NULL;
    if (why) {
        snprintf(msg, sizeof(msg), "the controller cannot list pending workloads yet: %s", why);
        return emit(b, status_obj(503, "ServiceUnavailable", msg, NULL, NULL), ctype, 503);
    }
    int64_t limit = 0, offset = 0;
    if (!int_param(query, "limit", &limit, msg, sizeof(msg)) ||
        !int_param(query, "offset", &offset, msg, sizeof(msg)))
        return emit(b, status_obj(400, "BadRequest", msg, NULL, NULL), ctype, 400);
    if (limit == 0)
        limit = CU_VISIBILITY_DEFAULT_LIMIT;
    int known =
        r->kind == RT_CQ ? src->cq_known(src->ud, r->name) : src->lq_known(src->ud, r->ns, r->name);
    if (!known) {
        const char *kind = r->kind == RT_CQ ? "clusterqueue" : "localqueue";
        snprintf(msg, sizeof(msg), "%s." CU_VISIBILITY_GROUP " \"%s\" not found", kind, r->name);
        return emit(b, status_obj(404, "NotFound", msg, r->name, kind), ctype, 404);
    }
    size_t n = 0;
    int oom = 0;
    const cu_wl_info **v = src->pending(src->ud, &n, &oom);
    if (oom)
        return emit(b, NULL, ctype, 500);
    char lq[600];
    snprintf(lq, sizeof(lq), "%s/%s", r->ns, r->name);
    json_object *doc =
        cu_status_visibility_doc(v, n, r->kind == RT_CQ ? r->name : NULL,
                                 r->kind == RT_LQ ? lq : NULL, limit, offset, src->owners, src->ud);
    free(v);
    return emit(b, doc, ctype, 200);
}

int cu_vis_serve(const cu_vis_src *src, const char *path, const char *query, cu_buf *body,
                 const char **ctype)
{
    route r;
    parse_route(path, &r);
    switch (r.kind) {
    case RT_HEALTH:
        *ctype = "text/plain; charset=utf-8";
        cu_buf_puts(body, "ok");
        return 200;
    case RT_GROUPS: {
        json_object *o = json_object_new_object(), *gs = json_object_new_array();
        put_s(o, "kind", "APIGroupList");
        put_s(o, "apiVersion", "v1");
        json_object_array_add(gs, api_group(0));
        json_object_object_add(o, "groups", gs);
        return emit(body, o, ctype, 200);
    }
    case RT_GROUP: return emit(body, api_group(1), ctype, 200);
    case RT_RESOURCES: return emit(body, resource_list(), ctype, 200);
    case RT_CQ:
    case RT_LQ: return pending(src, &r, query, body, ctype);
    default:
        return emit(body,
                    status_obj(404, "NotFound", "the server could not find the requested resource",
                               NULL, NULL),
                    ctype, 404);
    }
}

json_object *cu_vis_attrs(void *ud, const char *path)
{
    (void)ud;
    route r;
    parse_route(path, &r);
    json_object *o = json_object_new_object(), *a = json_object_new_object();
    if (!o || !a) {
        json_object_put(o);
        json_object_put(a);
        return NULL;
    }
    if (r.kind == RT_CQ || r.kind == RT_LQ) {
        if (r.kind == RT_LQ)
            put_s(a, "namespace", r.ns);
        put_s(a, "verb", "get");
        put_s(a, "group", CU_VISIBILITY_GROUP);
        put_s(a, "version", CU_VISIBILITY_VERSION);
        put_s(a, "resource", r.kind == RT_CQ ? "clusterqueues" : "localqueues");
        put_s(a, "subresource", "pendingworkloads");
        put_s(a, "name", r.name);
        json_object_object_add(o, "resourceAttributes", a);
    } else {
        put_s(a, "path", path);
        put_s(a, "verb", "get");
        json_object_object_add(o, "nonResourceAttributes", a);
    }
    return o;
}

void cu_vis_refuse(void *ud, int code, const char *user, const char *path, char *msg, size_t msgn)
{
    (void)ud;
    char m[1024];
    json_object *o;
    if (code == 401) {
        o = status_obj(401, "Unauthorized", "Unauthorized", NULL, NULL);
    } else if (code == 403) {
        route r;
        parse_route(path, &r);
        if (r.kind == RT_CQ || r.kind == RT_LQ) {
            const char *res = r.kind == RT_CQ ? "clusterqueues" : "localqueues";
            char scope[300];
            if (r.kind == RT_LQ)
                snprintf(scope, sizeof(scope), "in the namespace \"%.250s\"", r.ns);
            else
                snprintf(scope, sizeof(scope), "at the cluster scope");
            snprintf(m, sizeof(m),
                     "%s." CU_VISIBILITY_GROUP " \"%.200s\" is forbidden: User \"%.100s\" cannot "
                     "get resource \"%s/pendingworkloads\" in API group \"" CU_VISIBILITY_GROUP
                     "\" %s",
                     res, r.name, user, res, scope);
            o = status_obj(403, "Forbidden", m, r.name, res);
        } else {
            snprintf(m, sizeof(m), "forbidden: User \"%.100s\" cannot get path \"%.200s\"", user,
                     path);
            o = status_obj(403, "Forbidden", m, NULL, NULL);
        }
    } else {
        snprintf(m, sizeof(m), "%s of the request failed (see the controller's log)",
                 *user ? "authorization" : "authentication");
        o = status_obj(500, "InternalError", m, NULL, NULL);
    }
    const char *s = o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
                                                              JSON_C_TO_STRING_NOSLASHESCAPE)
                      : "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"code\":500}";
    snprintf(msg, msgn, "%s", s);
    json_object_put(o);
}
