/*
 * cu_apiserver.c - the embedded cluster's API server: libmicrohttpd with
 * a thread per connection (so a handler may block, which watches do),
 * routing of Kubernetes REST paths onto the store (cu_store.h),
 * discovery, /version, health, /openapi/v3, Table output, watch
 * streaming, patches (cu_patch.h), strict field validation of custom
 * resources (cu_schema.h), bearer tokens, TLS and fault injection.
 *
 * Layout: the HTTP layer (bottom of the file) turns an MHD request into a
 * cu_api_req and hands it to cu_apiserver_handle, which knows nothing of
 * MHD and fills a cu_api_resp; tests drive that core in-process. A watch
 * response carries an opened watch_stream that the HTTP layer drains
 * through a content-reader callback, one event line at a time.
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
#include "cu_fields.h"
#include "cu_json.h"
#include "cu_patch.h"
#include "cu_schema.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <regex.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

/* kube-apiserver's limits: request bodies over 3 MiB get 413 (its
 * MaxRequestBodyBytes), and idle connections are closed after a while. */
#define BODY_LIMIT ((size_t)3 << 20)
#define CONN_PER_CLIENT_DEFAULT 256      /* connections from one address */
#define IDLE_TIMEOUT_DEFAULT 60          /* seconds without traffic (not watches) */
#define WATCH_SLICE_MS 500               /* how often a blocked watch looks around */
#define TABLE_CT "application/json;as=Table;v=v1;g=meta.k8s.io"
/* the stack of a connection thread: recursive json-c code (serialise, free,
 * copy, compare) and the patch, schema and field-management walkers must
 * reach objects nested CU_JSON_MAX_DEPTH deep, under ASan too */
#define CONN_STACK ((intptr_t)64 << 20)

enum { FAULT_RESPOND = 1, FAULT_DELAY = 2 };

typedef struct fault_rule {
    int kind;
    char *match;           /* the regex text, for listing */
    regex_t re;
    int code, times, retry_after, delay_ms;
    struct fault_rule *next;
} fault_rule;

struct cu_apiserver {
    cu_store *s;
    struct MHD_Daemon *d;
    int port, tls, admin, verbose;
    char url[300];
    char **tokens;
    size_t ntokens;
    cu_authn *authn;       /* TokenReview and SubjectAccessReview (cu_authn.h) */
    char *ca_pem, *cert_pem, *key_pem;
    pthread_mutex_t mu;    /* guards faults and stall */
    fault_rule *faults;
    int stall;
    atomic_int stopping;
};

typedef struct watch_stream {
    cu_apiserver *a;
    cu_watch *w;
    const cu_rtype *rt;
    int table, include, first;
    int64_t deadline;      /* monotonic ms (mono_ms); 0 = none */
    int fd;                /* the client socket, -1 in-process */
    cu_watch_ev pending;   /* the event being sent: head, object, "}\n" */
    char head[48];         /* {"type":"...","object": */
    size_t hlen, off;      /* off: bytes of the line sent */
    cu_watch_ev held;      /* an event that arrived as a stall began; sent after it */
    int ended;
} watch_stream;

/* ---------------- small helpers ---------------- */

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Monotonic milliseconds, for deadlines: the wall clock may step. Read as
 * the floor, so a deadline is set one millisecond later than "now + T" and
 * a watch never ends before the timeout the client asked for. */
static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static void copy_str(char *dst, size_t n, const char *src)
{
    size_t l = strlen(src);
    if (l >= n)
        l = n - 1;
    memcpy(dst, src, l);
    dst[l] = '\0';
}

static json_object *jget(json_object *o, const char *k)
{
    json_object *v = NULL;
    if (o && json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, k, &v))
        return v;
    return NULL;
}

static const char *jstr(json_object *o, const char *k)
{
    json_object *v = jget(o, k);
    return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static json_object *jmeta(json_object *o)
{
    json_object *m = jget(o, "metadata");
    if (!m && o && json_object_is_type(o, json_type_object)) {
        m = json_object_new_object();
        json_object_object_add(o, "metadata", m);
    }
    return m;
}

static void jset_str(json_object *o, const char *k, const char *v)
{
    json_object_object_add(o, k, json_object_new_string(v));
}

static const char *arg(const cu_api_req *r, const char *k)
{
    for (size_t i = 0; i < r->nargs; i++)
        if (strcmp(r->args[2 * i], k) == 0)
            return r->args[2 * i + 1] ? r->args[2 * i + 1] : "";
    return NULL;
}

static int arg_true(const cu_api_req *r, const char *k)
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
static void resp_json(cu_api_resp *r, int code, json_object *obj)
{
    const char *s = obj ? json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN |
                                                               JSON_C_TO_STRING_NOSLASHESCAPE)
                        : "null";
    resp_text(r, code, "application/json", s);
    json_object_put(obj);
}

static void resp_st(cu_api_resp *r, const cu_status *st)
{
    resp_json(r, st->code, cu_status_json(st));
}

static void resp_status(cu_api_resp *r, int code, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void resp_status(cu_api_resp *r, int code, const char *reason, const char *fmt, ...)
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

static void resp_not_found_path(cu_api_resp *r)
{
    resp_status(r, 404, "NotFound", "the server could not find the requested resource");
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

/* ---------------- JSONPath and durations ---------------- */

/* JSONPath is evaluated as the CRD table convertor uses it: only the first
 * result counts. A wildcard ([*]) or a filter ([?(...)]) tries its
 * candidates in order and gives the first one for which the rest of the
 * path finds a value. depth bounds the recursion. */
static json_object *jp_eval(json_object *cur, const char *p, int depth);

/* The ')' that closes the filter whose '(' is at p, or NULL (quotes and
 * nested parentheses are skipped). */
static const char *jp_close_paren(const char *p)
{
    int d = 0;
    for (; *p; p++) {
        if (*p == '\'' || *p == '"') {
            char q = *p;
            for (p++; *p && *p != q; p++)
                ;
            if (!*p)
                return NULL;
        } else if (*p == '(') {
            d++;
        } else if (*p == ')' && --d == 0) {
            return p;
        }
    }
    return NULL;
}

/* Whether element e passes the filter expression [s, end): "@PATH"
 * (PATH has a value) or "@PATH OP LITERAL" with OP one of == != < <= > >=
 * and LITERAL a quoted string, a number, true or false. A missing value,
 * a literal of another type than the value, or an unsupported expression
 * does not pass. */
static int jp_filter_pass(json_object *e, const char *s, const char *end, int depth)
{
    char lhs[256], lit[256];
    while (s < end && isspace((unsigned char)*s))
        s++;
    while (end > s && isspace((unsigned char)end[-1]))
        end--;
    if (s >= end || *s != '@')
        return 0;
    s++;
    const char *op = s;
    char q = 0;
    int br = 0;
    for (; op < end; op++) {
        if (q) {
            if (*op == q)
                q = 0;
        } else if (*op == '\'' || *op == '"') {
            q = *op;
        } else if (*op == '[' || *op == '(') {
            br++;
        } else if (*op == ']' || *op == ')') {
            br--;
        } else if (br == 0 && strchr("=!<>", *op)) {
            break;
        }
    }
    const char *le = op;
    while (le > s && isspace((unsigned char)le[-1]))
        le--;
    if ((size_t)(le - s) >= sizeof lhs)
        return 0;
    memcpy(lhs, s, (size_t)(le - s));
    lhs[le - s] = '\0';
    json_object *v = jp_eval(e, lhs, depth + 1);
    if (op >= end)
        return v != NULL;
    if (!v)
        return 0;
    int opc; /* 0 ==, 1 !=, 2 <, 3 <=, 4 >, 5 >= */
    if ((op[0] == '=' || op[0] == '!') && op + 1 < end && op[1] == '=') {
        opc = op[0] == '!';
        op += 2;
    } else if (op[0] == '<' || op[0] == '>') {
        int eq = op + 1 < end && op[1] == '=';
        opc = (op[0] == '<' ? 2 : 4) + eq;
        op += 1 + eq;
    } else {
        return 0;
    }
    while (op < end && isspace((unsigned char)*op))
        op++;
    size_t n = (size_t)(end - op);
    if (n == 0 || n >= sizeof lit)
        return 0;
    memcpy(lit, op, n);
    lit[n] = '\0';
    int cmp;
    if ((lit[0] == '\'' || lit[0] == '"') && n >= 2 && lit[n - 1] == lit[0]) {
        if (!json_object_is_type(v, json_type_string))
            return 0;
        lit[n - 1] = '\0';
        cmp = strcmp(json_object_get_string(v), lit + 1);
    } else if (strcmp(lit, "true") == 0 || strcmp(lit, "false") == 0) {
        if (!json_object_is_type(v, json_type_boolean) || opc > 1)
            return 0;
        cmp = (json_object_get_boolean(v) != 0) != (lit[0] == 't');
    } else {
        char *num_end;
        double want = strtod(lit, &num_end);
        if (num_end == lit || *num_end ||
            !(json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)))
            return 0;
        double have = json_object_get_double(v);
        cmp = have < want ? -1 : have > want ? 1 : 0;
    }
    switch (opc) {
    case 0: return cmp == 0;
    case 1: return cmp != 0;
    case 2: return cmp < 0;
    case 3: return cmp <= 0;
    case 4: return cmp > 0;
    default: return cmp >= 0;
    }
}

static json_object *jp_eval(json_object *cur, const char *p, int depth)
{
    char key[512];
    if (depth > 16)
        return NULL;
    while (*p && *p != '}' && cur) {
        if (*p == '[') {
            p++;
            if (*p == '\'' || *p == '"') {
                char q = *p++;
                size_t k = 0;
                while (*p && *p != q && k + 1 < sizeof key)
                    key[k++] = *p++;
                key[k] = '\0';
                if (*p != q)
                    return NULL;
                p++;
                cur = jget(cur, key);
            } else if (*p == '*' || *p == '?') {
                const char *fs = NULL, *fe = NULL;
                if (*p == '*') {
                    p++;
                } else {
                    if (p[1] != '(' || !(fe = jp_close_paren(p + 1)))
                        return NULL;
                    fs = p + 2;
                    p = fe + 1;
                }
                if (*p != ']')
                    return NULL;
                p++;
                if (json_object_is_type(cur, json_type_array)) {
                    for (size_t i = 0; i < json_object_array_length(cur); i++) {
                        json_object *e = json_object_array_get_idx(cur, i), *r;
                        if (fs && !jp_filter_pass(e, fs, fe, depth))
                            continue;
                        if ((r = jp_eval(e, p, depth + 1)))
                            return r;
                    }
                } else if (!fs && json_object_is_type(cur, json_type_object)) {
                    json_object_object_foreach(cur, k2, v2) {
                        (void)k2;
                        json_object *r = jp_eval(v2, p, depth + 1);
                        if (r)
                            return r;
                    }
                }
                return NULL;
            } else {
                char *end;
                long idx = strtol(p, &end, 10);
                if (end == p || !json_object_is_type(cur, json_type_array))
                    return NULL;
                p = end;
                long len = (long)json_object_array_length(cur);
                if (idx < 0)
                    idx += len;
                cur = idx >= 0 && idx < len ? json_object_array_get_idx(cur, (size_t)idx) : NULL;
            }
            if (*p != ']')
                return NULL;
            p++;
            continue;
        }
        if (*p == '.')
            p++;
        size_t k = 0;
        while (*p && *p != '.' && *p != '[' && *p != '}' && k + 1 < sizeof key) {
            if (*p == '\\' && p[1])
                p++;
            key[k++] = *p++;
        }
        key[k] = '\0';
        if (k > 0)
            cur = jget(cur, key);
    }
    return cur;
}

json_object *cu_jsonpath_get(json_object *root, const char *path)
{
    const char *p = path;
    if (!p)
        return NULL;
    while (isspace((unsigned char)*p))
        p++;
    if (*p == '{')
        p++;
    if (*p == '$')
        p++;
    return jp_eval(root, p, 0);
}

void cu_human_duration(int64_t ms, char *out, size_t n)
{
    int64_t s = ms / 1000;
    if (ms < -1000) {
        snprintf(out, n, "<invalid>");
        return;
    }
    if (s < 0)
        s = 0;
    int64_t m = s / 60, h = s / 3600;
    if (s < 120)
        snprintf(out, n, "%llds", (long long)s);
    else if (m < 10)
        s % 60 ? snprintf(out, n, "%lldm%llds", (long long)m, (long long)(s % 60))
               : snprintf(out, n, "%lldm", (long long)m);
    else if (m < 180)
        snprintf(out, n, "%lldm", (long long)m);
    else if (h < 8)
        m % 60 ? snprintf(out, n, "%lldh%lldm", (long long)h, (long long)(m % 60))
               : snprintf(out, n, "%lldh", (long long)h);
    else if (h < 48)
        snprintf(out, n, "%lldh", (long long)h);
    else if (h < 24 * 8)
        h % 24 ? snprintf(out, n, "%lldd%lldh", (long long)(h / 24), (long long)(h % 24))
               : snprintf(out, n, "%lldd", (long long)(h / 24));
    else if (h < 24 * 365 * 2)
        snprintf(out, n, "%lldd", (long long)(h / 24));
    else if (h < 24 * 365 * 8)
        (h / 24) % 365 ? snprintf(out, n, "%lldy%lldd", (long long)(h / 24 / 365),
                                  (long long)((h / 24) % 365))
                       : snprintf(out, n, "%lldy", (long long)(h / 24 / 365));
    else
        snprintf(out, n, "%lldy", (long long)(h / 24 / 365));
}

/* The age of an RFC 3339 timestamp, or "<unknown>". */
static json_object *age_cell(const char *ts, int64_t now)
{
    int64_t t;
    char buf[32];
    if (!ts || cu_time_parse(ts, &t) != CU_OK)
        return json_object_new_string("<unknown>");
    cu_human_duration(now - t, buf, sizeof buf);
    return json_object_new_string(buf);
}

/* ---------------- Table output ---------------- */

typedef struct tcol {
    const char *name, *type, *format;
    int priority;
} tcol;

static const tcol cols_pod[] = {
    {"Name", "string", "name", 0},    {"Ready", "string", "", 0},
    {"Status", "string", "", 0},      {"Restarts", "string", "", 0},
    {"Age", "string", "", 0},         {"IP", "string", "", 1},
    {"Node", "string", "", 1},        {"Nominated Node", "string", "", 1},
    {"Readiness Gates", "string", "", 1}, {NULL, NULL, NULL, 0}};
static const tcol cols_node[] = {
    {"Name", "string", "name", 0}, {"Status", "string", "", 0}, {"Roles", "string", "", 0},
    {"Age", "string", "", 0},      {"Version", "string", "", 0}, {NULL, NULL, NULL, 0}};
static const tcol cols_job[] = {
    {"Name", "string", "name", 0},      {"Status", "string", "", 0},
    {"Completions", "string", "", 0},   {"Duration", "string", "", 0},
    {"Age", "string", "", 0},           {"Containers", "string", "", 1},
    {"Images", "string", "", 1},        {NULL, NULL, NULL, 0}};
static const tcol cols_ns[] = {
    {"Name", "string", "name", 0}, {"Status", "string", "", 0}, {"Age", "string", "", 0},
    {NULL, NULL, NULL, 0}};
static const tcol cols_cm[] = {
    {"Name", "string", "name", 0}, {"Data", "integer", "", 0}, {"Age", "string", "", 0},
    {NULL, NULL, NULL, 0}};
static const tcol cols_secret[] = {
    {"Name", "string", "name", 0}, {"Type", "string", "", 0}, {"Data", "integer", "", 0},
    {"Age", "string", "", 0},      {NULL, NULL, NULL, 0}};
static const tcol cols_event[] = {
    {"Last Seen", "string", "", 0}, {"Type", "string", "", 0}, {"Reason", "string", "", 0},
    {"Object", "string", "", 0},    {"Message", "string", "", 0},
    {"Name", "string", "name", 1},  {NULL, NULL, NULL, 0}};
static const tcol cols_crd[] = {
    {"Name", "string", "name", 0}, {"Created At", "date", "", 0}, {NULL, NULL, NULL, 0}};
static const tcol cols_lease[] = {
    {"Name", "string", "name", 0}, {"Holder", "string", "", 0}, {"Age", "string", "", 0},
    {NULL, NULL, NULL, 0}};
static const tcol cols_pc[] = {
    {"Name", "string", "name", 0}, {"Value", "integer", "", 0},
    {"Global-Default", "boolean", "", 0}, {"Age", "string", "", 0}, {NULL, NULL, NULL, 0}};
static const tcol cols_sa[] = {
    {"Name", "string", "name", 0}, {"Secrets", "integer", "", 0}, {"Age", "string", "", 0},
    {NULL, NULL, NULL, 0}};
static const tcol cols_default[] = {
    {"Name", "string", "name", 0}, {"Age", "string", "", 0}, {NULL, NULL, NULL, 0}};

/* The built-in columns for rt, or NULL for a custom resource with printer
 * columns of its own. */
static const tcol *builtin_cols(const cu_rtype *rt)
{
    if (rt->from_crd)
        return rt->ncols ? NULL : cols_default;
    const char *k = rt->kind, *g = rt->group;
    if (strcmp(k, "Pod") == 0)
        return cols_pod;
    if (strcmp(k, "Node") == 0)
        return cols_node;
    if (strcmp(k, "Job") == 0)
        return cols_job;
    if (strcmp(k, "Namespace") == 0)
        return cols_ns;
    if (strcmp(k, "ConfigMap") == 0)
        return cols_cm;
    if (strcmp(k, "Secret") == 0)
        return cols_secret;
    if (strcmp(k, "Event") == 0 && (!*g || strcmp(g, "events.k8s.io") == 0))
        return cols_event;
    if (strcmp(k, "CustomResourceDefinition") == 0)
        return cols_crd;
    if (strcmp(k, "Lease") == 0)
        return cols_lease;
    if (strcmp(k, "PriorityClass") == 0)
        return cols_pc;
    if (strcmp(k, "ServiceAccount") == 0)
        return cols_sa;
    return cols_default;
}

static json_object *col_def(const char *name, const char *type, const char *format,
                            const char *desc, int priority)
{
    json_object *c = json_object_new_object();
    jset_str(c, "name", name);
    jset_str(c, "type", type ? type : "string");
    jset_str(c, "format", format ? format : "");
    jset_str(c, "description", desc ? desc : "");
    json_object_object_add(c, "priority", json_object_new_int(priority));
    return c;
}

static json_object *table_defs(const cu_rtype *rt)
{
    json_object *defs = json_object_new_array();
    const tcol *bc = builtin_cols(rt);
    if (bc) {
        for (; bc->name; bc++)
            json_object_array_add(defs, col_def(bc->name, bc->type, bc->format,
                                                strcmp(bc->name, "Name") == 0
                                                    ? "Name must be unique within a namespace."
                                                    : "",
                                                bc->priority));
        return defs;
    }
    json_object_array_add(defs, col_def("Name", "string", "name",
                                        "Name must be unique within a namespace.", 0));
    for (size_t i = 0; i < rt->ncols; i++) {
        const cu_pcol *c = &rt->cols[i];
        json_object_array_add(defs, col_def(c->name, c->type, c->format, c->description,
                                            c->priority));
    }
    return defs;
}

static int jint(json_object *o, const char *k)
{
    json_object *v = jget(o, k);
    return v ? json_object_get_int(v) : 0;
}

static size_t jlen(json_object *o)
{
    if (!o)
        return 0;
    if (json_object_is_type(o, json_type_array))
        return json_object_array_length(o);
    if (json_object_is_type(o, json_type_object))
        return (size_t)json_object_object_length(o);
    return 0;
}

static const char *cond_status(json_object *status, const char *type)
{
    json_object *conds = jget(status, "conditions");
    for (size_t i = 0; i < jlen(conds); i++) {
        json_object *c = json_object_array_get_idx(conds, i);
        const char *t = jstr(c, "type");
        if (t && strcmp(t, type) == 0)
            return jstr(c, "status");
    }
    return NULL;
}

static void cells_pod(json_object *cells, json_object *o, json_object *meta, int64_t now)
{
    json_object *spec = jget(o, "spec"), *st = jget(o, "status");
    json_object *cs = jget(st, "containerStatuses");
    size_t total = jlen(jget(spec, "containers")), ready = 0;
    int restarts = 0;
    const char *reason = NULL;
    for (size_t i = 0; i < jlen(cs); i++) {
        json_object *c = json_object_array_get_idx(cs, i);
        json_object *rd = jget(c, "ready");
        if (rd && json_object_get_boolean(rd))
            ready++;
        restarts += jint(c, "restartCount");
        json_object *state = jget(c, "state");
        const char *r = jstr(jget(state, "waiting"), "reason");
        if (!r)
            r = jstr(jget(state, "terminated"), "reason");
        if (r && !reason)
            reason = r;
    }
    const char *phase = jstr(st, "phase");
    char buf[64];
    snprintf(buf, sizeof buf, "%zu/%zu", ready, total);
    json_object_array_add(cells, json_object_new_string(buf));
    const char *status = jstr(st, "reason");
    if (!status)
        status = reason;
    if (!status && phase)
        status = strcmp(phase, "Succeeded") == 0 ? "Completed"
                 : strcmp(phase, "Failed") == 0  ? "Error"
                                                 : phase;
    if (jget(meta, "deletionTimestamp"))
        status = "Terminating";
    json_object_array_add(cells, json_object_new_string(status ? status : "Pending"));
    snprintf(buf, sizeof buf, "%d", restarts);
    json_object_array_add(cells, json_object_new_string(buf));
    json_object_array_add(cells, age_cell(jstr(meta, "creationTimestamp"), now));
    const char *ip = jstr(st, "podIP"), *node = jstr(spec, "nodeName");
    const char *nom = jstr(st, "nominatedNodeName");
    json_object_array_add(cells, json_object_new_string(ip ? ip : "<none>"));
    json_object_array_add(cells, json_object_new_string(node ? node : "<none>"));
    json_object_array_add(cells, json_object_new_string(nom ? nom : "<none>"));
    json_object_array_add(cells, json_object_new_string("<none>"));
}

static void cells_node(json_object *cells, json_object *o, json_object *meta, int64_t now)
{
    const char *r = cond_status(jget(o, "status"), "Ready");
    char buf[512];
    snprintf(buf, sizeof buf, "%s%s",
             !r ? "Unknown" : strcmp(r, "True") == 0 ? "Ready" : "NotReady",
             jget(jget(o, "spec"), "unschedulable") &&
                     json_object_get_boolean(jget(jget(o, "spec"), "unschedulable"))
                 ? ",SchedulingDisabled"
                 : "");
    json_object_array_add(cells, json_object_new_string(buf));
    buf[0] = '\0';
    json_object *labels = jget(meta, "labels");
    if (labels && json_object_is_type(labels, json_type_object)) {
        json_object_object_foreach(labels, k, v) {
            (void)v;
            const char *pfx = "node-role.kubernetes.io/";
            if (strncmp(k, pfx, strlen(pfx)) == 0 && k[strlen(pfx)]) {
                size_t l = strlen(buf);
                snprintf(buf + l, sizeof buf - l, "%s%s", l ? "," : "", k + strlen(pfx));
            }
        }
    }
    json_object_array_add(cells, json_object_new_string(buf[0] ? buf : "<none>"));
    json_object_array_add(cells, age_cell(jstr(meta, "creationTimestamp"), now));
    const char *ver = jstr(jget(jget(o, "status"), "nodeInfo"), "kubeletVersion");
    json_object_array_add(cells, json_object_new_string(ver ? ver : ""));
}

static void cells_job(json_object *cells, json_object *o, json_object *meta, int64_t now)
{
    json_object *spec = jget(o, "spec"), *st = jget(o, "status");
    const char *c = cond_status(st, "Complete"), *f = cond_status(st, "Failed");
    const char *sus = cond_status(st, "Suspended");
    json_object *suspend = jget(spec, "suspend");
    const char *status = c && strcmp(c, "True") == 0   ? "Complete"
                         : f && strcmp(f, "True") == 0 ? "Failed"
                         : (sus && strcmp(sus, "True") == 0) ||
                                 (suspend && json_object_get_boolean(suspend))
                             ? "Suspended"
                             : "Running";
    json_object_array_add(cells, json_object_new_string(status));
    char buf[128];
    json_object *comp = jget(spec, "completions");
    if (comp)
        snprintf(buf, sizeof buf, "%d/%d", jint(st, "succeeded"), json_object_get_int(comp));
    else
        snprintf(buf, sizeof buf, "%d/1 of %d", jint(st, "succeeded"),
                 jget(spec, "parallelism") ? jint(spec, "parallelism") : 1);
    json_object_array_add(cells, json_object_new_string(buf));
    int64_t t0, t1;
    const char *start = jstr(st, "startTime"), *end = jstr(st, "completionTime");
    buf[0] = '\0';
    if (start && cu_time_parse(start, &t0) == CU_OK) {
        if (!end || cu_time_parse(end, &t1) != CU_OK)
            t1 = now;
        cu_human_duration(t1 - t0, buf, sizeof buf);
    }
    json_object_array_add(cells, json_object_new_string(buf));
    json_object_array_add(cells, age_cell(jstr(meta, "creationTimestamp"), now));
    json_object *ctrs = jget(jget(jget(spec, "template"), "spec"), "containers");
    char names[512] = "", images[1024] = "";
    for (size_t i = 0; i < jlen(ctrs); i++) {
        json_object *ct = json_object_array_get_idx(ctrs, i);
        size_t l = strlen(names), li = strlen(images);
        snprintf(names + l, sizeof names - l, "%s%s", l ? "," : "",
                 jstr(ct, "name") ? jstr(ct, "name") : "");
        snprintf(images + li, sizeof images - li, "%s%s", li ? "," : "",
                 jstr(ct, "image") ? jstr(ct, "image") : "");
    }
    json_object_array_add(cells, json_object_new_string(names));
    json_object_array_add(cells, json_object_new_string(images));
}

static void cells_event(json_object *cells, json_object *o, json_object *meta, int64_t now)
{
    const char *last = jstr(o, "lastTimestamp");
    if (!last)
        last = jstr(o, "eventTime");
    if (!last)
        last = jstr(meta, "creationTimestamp");
    json_object_array_add(cells, age_cell(last, now));
    const char *t = jstr(o, "type"), *r = jstr(o, "reason");
    json_object_array_add(cells, json_object_new_string(t ? t : ""));
    json_object_array_add(cells, json_object_new_string(r ? r : ""));
    json_object *inv = jget(o, "involvedObject");
    if (!inv)
        inv = jget(o, "regarding");
    char buf[600], kind[128];
    snprintf(kind, sizeof kind, "%s", jstr(inv, "kind") ? jstr(inv, "kind") : "");
    for (char *p = kind; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    snprintf(buf, sizeof buf, "%s/%s", kind, jstr(inv, "name") ? jstr(inv, "name") : "");
    json_object_array_add(cells, json_object_new_string(buf));
    const char *m = jstr(o, "message");
    if (!m)
        m = jstr(o, "note");
    json_object_array_add(cells, json_object_new_string(m ? m : ""));
    const char *n = jstr(meta, "name");
    json_object_array_add(cells, json_object_new_string(n ? n : ""));
}

/* A custom resource column cell, as the CRD table convertor does. */
static json_object *crd_cell(const cu_pcol *c, json_object *o, int64_t now)
{
    json_object *v = cu_jsonpath_get(o, c->json_path);
    if (!v)
        return NULL;
    const char *type = c->type ? c->type : "string";
    if (strcmp(type, "date") == 0 && json_object_is_type(v, json_type_string))
        return age_cell(json_object_get_string(v), now);
    if (strcmp(type, "integer") == 0 &&
        (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)))
        return json_object_new_int64(json_object_get_int64(v));
    if (strcmp(type, "number") == 0 &&
        (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)))
        return json_object_new_double(json_object_get_double(v));
    if (strcmp(type, "boolean") == 0 && json_object_is_type(v, json_type_boolean))
        return json_object_new_boolean(json_object_get_boolean(v));
    /* A value of another JSON type than the column's gives an empty cell,
     * as on a real API server; only string columns print any value. */
    if (strcmp(type, "string") != 0)
        return NULL;
    if (json_object_is_type(v, json_type_string))
        return json_object_new_string(json_object_get_string(v));
    return json_object_new_string(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
}

static json_object *table_row(const cu_rtype *rt, json_object *o, int include, int64_t now)
{
    json_object *row = json_object_new_object(), *cells = json_object_new_array();
    json_object *meta = jget(o, "metadata");
    const char *name = jstr(meta, "name");
    const tcol *bc = builtin_cols(rt);
    int is_event = bc == cols_event;
    if (!is_event)
        json_object_array_add(cells, json_object_new_string(name ? name : ""));
    if (!bc) {
        for (size_t i = 0; i < rt->ncols; i++)
            json_object_array_add(cells, crd_cell(&rt->cols[i], o, now));
    } else if (bc == cols_pod) {
        cells_pod(cells, o, meta, now);
    } else if (bc == cols_node) {
        cells_node(cells, o, meta, now);
    } else if (bc == cols_job) {
        cells_job(cells, o, meta, now);
    } else if (bc == cols_event) {
        cells_event(cells, o, meta, now);
    } else if (bc == cols_ns) {
        const char *ph = jstr(jget(o, "status"), "phase");
        json_object_array_add(cells, json_object_new_string(ph ? ph : "Active"));
        json_object_array_add(cells, age_cell(jstr(meta, "creationTimestamp"), now));
    } else if (bc == cols_cm) {
        json_object_array_add(cells, json_object_new_int((int)(jlen(jget(o, "data")) +
                                                              jlen(jget(o, "binaryData")))));
        json_object_array_add(cells, age_cell(jstr(meta, "creationTimestamp"), now));
    } else if (bc == cols_secret) {
        const char *t = jstr(o, "type");
        json_object_array_add(cells, json_object_new_string(t ? t : "Opaque"));
        json_object_array_add(cells, json_object_new_int((int)(jlen(jget(o, "data")) +
                                                              jlen(jget(o, "stringData")))));
        json_object_array_add(cells, age_cell(jstr(meta, "creationTimestamp"), now));
    } else if (bc == cols_crd) {
        const char *ct = jstr(meta, "creationTimestamp");
        json_object_array_add(cells, json_object_new_string(ct ? ct : ""));
    } else if (bc == cols_lease) {
        const char *h = jstr(jget(o, "spec"), "holderIdentity");
        json_object_array_add(cells, json_object_new_string(h ? h : "<none>"));
        json_object_array_add(cells, age_cell(jstr(meta, "creationTimestamp"), now));
    } else if (bc == cols_pc) {
        json_object_array_add(cells, json_object_new_int(jint(o, "value")));
        json_object *gd = jget(o, "globalDefault");
        json_object_array_add(cells, json_object_new_boolean(gd && json_object_get_boolean(gd)));
        json_object_array_add(cells, age_cell(jstr(meta, "creationTimestamp"), now));
    } else if (bc == cols_sa) {
        json_object_array_add(cells, json_object_new_int((int)jlen(jget(o, "secrets"))));
        json_object_array_add(cells, age_cell(jstr(meta, "creationTimestamp"), now));
    } else {
        json_object_array_add(cells, age_cell(jstr(meta, "creationTimestamp"), now));
    }
    json_object_object_add(row, "cells", cells);
    if (include == 1) {
        json_object *pom = json_object_new_object(), *mc = NULL;
        jset_str(pom, "kind", "PartialObjectMetadata");
        jset_str(pom, "apiVersion", "meta.k8s.io/v1");
        if (meta)
            json_object_deep_copy(meta, &mc, NULL);
        json_object_object_add(pom, "metadata", mc ? mc : json_object_new_object());
        json_object_object_add(row, "object", pom);
    } else if (include == 2) {
        json_object *copy = NULL;
        json_object_deep_copy(o, &copy, NULL);
        json_object_object_add(row, "object", copy);
    }
    return row;
}

json_object *cu_table_build(const cu_rtype *rt, json_object *obj, int include, int with_defs,
                            int64_t now_ms)
{
    json_object *t = json_object_new_object(), *tm = json_object_new_object();
    json_object *rows = json_object_new_array();
    jset_str(t, "kind", "Table");
    jset_str(t, "apiVersion", "meta.k8s.io/v1");
    json_object *items = jget(obj, "items");
    json_object *om = jget(obj, "metadata");
    const char *rv = jstr(om, "resourceVersion"), *cont = jstr(om, "continue");
    if (rv)
        jset_str(tm, "resourceVersion", rv);
    if (items && cont && *cont)
        jset_str(tm, "continue", cont);
    json_object_object_add(t, "metadata", tm);
    json_object_object_add(t, "columnDefinitions",
                           with_defs ? table_defs(rt) : json_object_new_array());
    if (items && json_object_is_type(items, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(items); i++)
            json_object_array_add(rows, table_row(rt, json_object_array_get_idx(items, i),
                                                  include, now_ms));
    } else if (obj) {
        json_object_array_add(rows, table_row(rt, obj, include, now_ms));
    }
    json_object_object_add(t, "rows", rows);
    return t;
}

/* ---------------- discovery ---------------- */

typedef struct rt_vec {
    const cu_rtype **v;
    size_t n, cap;
} rt_vec;

static void collect_rt(const cu_rtype *rt, void *ud)
{
    rt_vec *vec = ud;
    if (vec->n == vec->cap) {
        size_t nc = vec->cap ? vec->cap * 2 : 32;
        const cu_rtype **nv = realloc(vec->v, nc * sizeof *nv);
        if (!nv)
            return;
        vec->v = nv;
        vec->cap = nc;
    }
    vec->v[vec->n++] = rt;
}

static rt_vec all_types(cu_store *s)
{
    rt_vec vec = {NULL, 0, 0};
    cu_store_each_rtype(s, collect_rt, &vec);
    return vec;
}

static json_object *str_array(char **v, size_t n)
{
    json_object *a = json_object_new_array();
    for (size_t i = 0; i < n; i++)
        json_object_array_add(a, json_object_new_string(v[i]));
    return a;
}

static json_object *verbs(const char *const *v)
{
    json_object *a = json_object_new_array();
    for (; *v; v++)
        json_object_array_add(a, json_object_new_string(*v));
    return a;
}

static const char *const verbs_all[] = {"create", "delete", "deletecollection", "get", "list",
                                        "patch", "update", "watch", NULL};
static const char *const verbs_status[] = {"get", "patch", "update", NULL};
static const char *const verbs_create[] = {"create", NULL};

static int has_status(const cu_rtype *rt)
{
    return rt->status_sub || !rt->from_crd;
}

static json_object *sub_resource(const cu_rtype *rt, const char *sub, const char *kind,
                                 const char *const *v)
{
    char name[300];
    json_object *r = json_object_new_object();
    snprintf(name, sizeof name, "%s/%s", rt->resource, sub);
    jset_str(r, "name", name);
    jset_str(r, "singularName", "");
    json_object_object_add(r, "namespaced", json_object_new_boolean(rt->namespaced));
    jset_str(r, "kind", kind);
    json_object_object_add(r, "verbs", verbs(v));
    return r;
}

static json_object *resource_list(cu_store *s, const char *group, const char *version)
{
    rt_vec vec = all_types(s);
    json_object *l = json_object_new_object(), *res = json_object_new_array();
    char gv[200];
    snprintf(gv, sizeof gv, "%s%s%s", group, *group ? "/" : "", version);
    jset_str(l, "kind", "APIResourceList");
    jset_str(l, "apiVersion", "v1");
    jset_str(l, "groupVersion", gv);
    size_t found = 0;
    for (size_t i = 0; i < vec.n; i++) {
        const cu_rtype *rt = vec.v[i];
        if (strcmp(rt->group, group) != 0 || strcmp(rt->version, version) != 0)
            continue;
        found++;
        json_object *r = json_object_new_object();
        jset_str(r, "name", rt->resource);
        jset_str(r, "singularName", rt->singular ? rt->singular : "");
        json_object_object_add(r, "namespaced", json_object_new_boolean(rt->namespaced));
        jset_str(r, "kind", rt->kind);
        json_object_object_add(r, "verbs", verbs(verbs_all));
        if (rt->nshort)
            json_object_object_add(r, "shortNames", str_array(rt->short_names, rt->nshort));
        if (rt->ncat)
            json_object_object_add(r, "categories", str_array(rt->categories, rt->ncat));
        json_object_array_add(res, r);
        if (!*group && strcmp(rt->resource, "pods") == 0)
            json_object_array_add(res, sub_resource(rt, "binding", "Binding", verbs_create));
        if (has_status(rt))
            json_object_array_add(res, sub_resource(rt, "status", rt->kind, verbs_status));
    }
    free(vec.v);
    json_object_object_add(l, "resources", res);
    if (!found) {
        json_object_put(l);
        return NULL;
    }
    return l;
}

/* The distinct group/versions served, in registration order. */
typedef struct gv_ent {
    const char *group, *version;
    int storage;
} gv_ent;

static size_t group_versions(const rt_vec *vec, gv_ent *out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < vec->n; i++) {
        const cu_rtype *rt = vec->v[i];
        size_t j;
        for (j = 0; j < n; j++)
            if (strcmp(out[j].group, rt->group) == 0 && strcmp(out[j].version, rt->version) == 0)
                break;
        if (j < n) {
            out[j].storage |= rt->storage;
            continue;
        }
        if (n < max)
            out[n++] = (gv_ent){rt->group, rt->version, rt->storage};
    }
    return n;
}

static json_object *api_group(const gv_ent *gvs, size_t n, const char *group)
{
    json_object *g = json_object_new_object(), *vs = json_object_new_array();
    const gv_ent *pref = NULL;
    char gv[200];
    jset_str(g, "name", group);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(gvs[i].group, group) != 0)
            continue;
        json_object *v = json_object_new_object();
        snprintf(gv, sizeof gv, "%s/%s", group, gvs[i].version);
        jset_str(v, "groupVersion", gv);
        jset_str(v, "version", gvs[i].version);
        json_object_array_add(vs, v);
        if (!pref || (gvs[i].storage && !pref->storage))
            pref = &gvs[i];
    }
    json_object_object_add(g, "versions", vs);
    if (pref) {
        json_object *p = json_object_new_object();
        snprintf(gv, sizeof gv, "%s/%s", group, pref->version);
        jset_str(p, "groupVersion", gv);
        jset_str(p, "version", pref->version);
        json_object_object_add(g, "preferredVersion", p);
    }
    return g;
}

static json_object *group_list(cu_store *s, const char *only)
{
    rt_vec vec = all_types(s);
    gv_ent gvs[256];
    size_t n = group_versions(&vec, gvs, 256);
    json_object *res = NULL;
    if (only) {
        for (size_t i = 0; i < n && !res; i++)
            if (strcmp(gvs[i].group, only) == 0) {
                res = api_group(gvs, n, only);
                json_object_object_add(res, "kind", json_object_new_string("APIGroup"));
                json_object_object_add(res, "apiVersion", json_object_new_string("v1"));
            }
        free(vec.v);
        return res;
    }
    res = json_object_new_object();
    json_object *groups = json_object_new_array();
    jset_str(res, "kind", "APIGroupList");
    jset_str(res, "apiVersion", "v1");
    for (size_t i = 0; i < n; i++) {
        if (!*gvs[i].group)
            continue;
        size_t j;
        for (j = 0; j < i; j++)
            if (strcmp(gvs[j].group, gvs[i].group) == 0)
                break;
        if (j == i)
            json_object_array_add(groups, api_group(gvs, n, gvs[i].group));
    }
    json_object_object_add(res, "groups", groups);
    free(vec.v);
    return res;
}

static json_object *version_json(void)
{
    json_object *v = json_object_new_object();
    jset_str(v, "major", "1");
    jset_str(v, "minor", "32");
    jset_str(v, "gitVersion", "v1.32.0-cueue");
    jset_str(v, "gitCommit", "0000000000000000000000000000000000000000");
    jset_str(v, "gitTreeState", "clean");
    jset_str(v, "buildDate", "2026-01-01T00:00:00Z");
    jset_str(v, "goVersion", "go1.23.0");
    jset_str(v, "compiler", "gc");
    jset_str(v, "platform", "linux/amd64");
    return v;
}

/* ---------------- /openapi/v3 ---------------- */

static json_object *oa_param(const char *name, const char *in, int required)
{
    json_object *p = json_object_new_object(), *sc = json_object_new_object();
    jset_str(p, "name", name);
    jset_str(p, "in", in);
    if (required)
        json_object_object_add(p, "required", json_object_new_boolean(1));
    jset_str(sc, "type", "string");
    json_object_object_add(sc, "uniqueItems", json_object_new_boolean(1));
    json_object_object_add(p, "schema", sc);
    return p;
}

static json_object *oa_gvk(const cu_rtype *rt)
{
    json_object *g = json_object_new_object();
    jset_str(g, "group", rt->group);
    jset_str(g, "kind", rt->kind);
    jset_str(g, "version", rt->version);
    return g;
}

static json_object *oa_op(const cu_rtype *rt, const char *action, int body)
{
    static const char *const patch_types[] = {
        "application/apply-patch+yaml", "application/json-patch+json",
        "application/merge-patch+json", "application/strategic-merge-patch+json", NULL};
    json_object *op = json_object_new_object(), *ps = json_object_new_array();
    char id[300];
    snprintf(id, sizeof id, "%s%s", action, rt->kind);
    jset_str(op, "operationId", id);
    jset_str(op, "x-kubernetes-action", action);
    json_object_object_add(op, "x-kubernetes-group-version-kind", oa_gvk(rt));
    json_object_array_add(ps, oa_param("dryRun", "query", 0));
    json_object_array_add(ps, oa_param("fieldManager", "query", 0));
    if (body) {
        json_object_array_add(ps, oa_param("fieldValidation", "query", 0));
        if (strcmp(action, "patch") == 0)
            json_object_array_add(ps, oa_param("force", "query", 0));
        json_object *rb = json_object_new_object(), *content = json_object_new_object();
        for (const char *const *t = patch_types; *t; t++) {
            if (strcmp(action, "patch") != 0 && t != patch_types)
                break;
            json_object *m = json_object_new_object(), *sc = json_object_new_object();
            jset_str(sc, "type", "object");
            json_object_object_add(m, "schema", sc);
            json_object_object_add(content,
                                   strcmp(action, "patch") == 0 ? *t : "application/json", m);
        }
        json_object_object_add(rb, "content", content);
        json_object_object_add(rb, "required", json_object_new_boolean(1));
        json_object_object_add(op, "requestBody", rb);
    }
    json_object *resp = json_object_new_object(), *ok = json_object_new_object();
    jset_str(ok, "description", "OK");
    json_object_object_add(resp, "200", ok);
    json_object_object_add(op, "responses", resp);
    json_object_object_add(op, "parameters", ps);
    return op;
}

/* The OpenAPI v3 document of one group/version: for every kind a path
 * for the collection and for one object, whose PATCH operation names the
 * kind and accepts fieldValidation (which is what kubectl looks for). */
static json_object *openapi_gv(cu_store *s, const char *group, const char *version)
{
    rt_vec vec = all_types(s);
    json_object *doc = json_object_new_object(), *info = json_object_new_object();
    json_object *paths = json_object_new_object(), *comp = json_object_new_object();
    size_t found = 0;
    jset_str(doc, "openapi", "3.0.0");
    jset_str(info, "title", "Kubernetes");
    jset_str(info, "version", "v1.32.0-cueue");
    json_object_object_add(doc, "info", info);
    for (size_t i = 0; i < vec.n; i++) {
        const cu_rtype *rt = vec.v[i];
        if (strcmp(rt->group, group) != 0 || strcmp(rt->version, version) != 0)
            continue;
        found++;
        char base[400], p[600];
        if (*group)
            snprintf(base, sizeof base, "/apis/%s/%s%s", group, version,
                     rt->namespaced ? "/namespaces/{namespace}" : "");
        else
            snprintf(base, sizeof base, "/api/%s%s", version,
                     rt->namespaced ? "/namespaces/{namespace}" : "");
        json_object *coll = json_object_new_object(), *one = json_object_new_object();
        json_object_object_add(coll, "get", oa_op(rt, "list", 0));
        json_object_object_add(coll, "post", oa_op(rt, "post", 1));
        json_object_object_add(one, "get", oa_op(rt, "get", 0));
        json_object_object_add(one, "put", oa_op(rt, "put", 1));
        json_object_object_add(one, "patch", oa_op(rt, "patch", 1));
        json_object_object_add(one, "delete", oa_op(rt, "delete", 0));
        json_object *pp = json_object_new_array();
        json_object_array_add(pp, oa_param("name", "path", 1));
        if (rt->namespaced)
            json_object_array_add(pp, oa_param("namespace", "path", 1));
        json_object_object_add(one, "parameters", pp);
        snprintf(p, sizeof p, "%s/%s", base, rt->resource);
        json_object_object_add(paths, p, coll);
        snprintf(p, sizeof p, "%s/%s/{name}", base, rt->resource);
        json_object_object_add(paths, p, one);
    }
    free(vec.v);
    json_object_object_add(doc, "paths", paths);
    json_object_object_add(comp, "schemas", json_object_new_object());
    json_object_object_add(doc, "components", comp);
    if (!found) {
        json_object_put(doc);
        return NULL;
    }
    return doc;
}

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static json_object *openapi_root(cu_store *s)
{
    rt_vec vec = all_types(s);
    gv_ent gvs[256];
    size_t n = group_versions(&vec, gvs, 256);
    json_object *root = json_object_new_object(), *paths = json_object_new_object();
    for (size_t i = 0; i < n; i++) {
        json_object *doc = openapi_gv(s, gvs[i].group, gvs[i].version);
        if (!doc)
            continue;
        uint64_t h = fnv1a(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN));
        json_object_put(doc);
        char key[200], url[400];
        if (*gvs[i].group)
            snprintf(key, sizeof key, "apis/%s/%s", gvs[i].group, gvs[i].version);
        else
            snprintf(key, sizeof key, "api/%s", gvs[i].version);
        snprintf(url, sizeof url, "/openapi/v3/%s?hash=%016llX", key, (unsigned long long)h);
        json_object *e = json_object_new_object();
        jset_str(e, "serverRelativeURL", url);
        json_object_object_add(paths, key, e);
    }
    free(vec.v);
    json_object_object_add(root, "paths", paths);
    return root;
}

/* ---------------- YAML bodies ---------------- */

static json_object *node_to_json(const cu_node *n)
{
    if (!n)
        return NULL;
    if (n->type == CU_NODE_MAP) {
        json_object *o = json_object_new_object();
        for (size_t i = 0; i < n->n; i++)
            json_object_object_add(o, n->keys[i], node_to_json(n->vals[i]));
        return o;
    }
    if (n->type == CU_NODE_SEQ) {
        json_object *a = json_object_new_array();
        for (size_t i = 0; i < n->n; i++)
            json_object_array_add(a, node_to_json(n->vals[i]));
        return a;
    }
    const char *s = n->str;
    if (!n->plain)
        return json_object_new_string(s);
    if (!*s || strcmp(s, "null") == 0 || strcmp(s, "~") == 0 || strcmp(s, "Null") == 0 ||
        strcmp(s, "NULL") == 0)
        return NULL;
    if (strcmp(s, "true") == 0 || strcmp(s, "True") == 0 || strcmp(s, "TRUE") == 0)
        return json_object_new_boolean(1);
    if (strcmp(s, "false") == 0 || strcmp(s, "False") == 0 || strcmp(s, "FALSE") == 0)
        return json_object_new_boolean(0);
    const char *d = s + (*s == '-' || *s == '+');
    if (isdigit((unsigned char)*d) || (*d == '.' && isdigit((unsigned char)d[1]))) {
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (!*end && errno == 0)
            return json_object_new_int64(v);
        errno = 0;
        double dv = strtod(s, &end);
        if (!*end && errno == 0)
            return json_object_new_double(dv);
    }
    return json_object_new_string(s);
}

json_object *cu_yaml_to_json(const char *text, size_t len, char *err, size_t errn)
{
    cu_arena ar;
    cu_diag d;
    cu_doc *docs = NULL;
    size_t nd = 0;
    json_object *res = NULL;
    cu_arena_init(&ar, 64 * 1024);
    cu_diag_init(&d);
    if (cu_doc_parse("request body", text, len, &ar, &docs, &nd, &d) != CU_OK)
        snprintf(err, errn, "%s", d.n ? d.msgs[0] : "YAML syntax error");
    else if (nd == 0 || !docs[0].root || cu_node_is_null(docs[0].root))
        snprintf(err, errn, "request body: empty document");
    else
        res = node_to_json(docs[0].root);
    cu_diag_free(&d);
    cu_arena_free(&ar);
    return res;
}

/* ---------------- request bodies and validation ---------------- */

static int has_ct(const char *ct, const char *want)
{
    size_t n = strlen(want);
    if (!ct)
        return 0;
    while (isspace((unsigned char)*ct))
        ct++;
    return strncasecmp(ct, want, n) == 0 && (ct[n] == '\0' || ct[n] == ';' || isspace((unsigned char)ct[n]));
}

/* Decodes the request body (JSON, or YAML when the content type says so).
 * On failure sets a 400 response and returns NULL. */
static json_object *decode_body(const cu_api_req *r, cu_api_resp *resp, int yaml)
{
    char err[512];
    json_object *o = NULL;
    if (!r->body || r->body_len == 0) {
        resp_status(resp, 400, "BadRequest", "the request body is empty");
        return NULL;
    }
    if (!yaml && has_ct(r->content_type, "application/vnd.kubernetes.protobuf")) {
        o = cu_k8s_protobuf_to_json((const unsigned char *)r->body, r->body_len, err, sizeof err);
        if (!o)
            resp_status(resp, 415, "UnsupportedMediaType", "%s", err);
        return o;
    }
    if (!yaml && r->content_type && *r->content_type && !strstr(r->content_type, "json") &&
        !strstr(r->content_type, "yaml")) {
        /* protobuf (kubectl's typed clients try it first) and anything
         * else: 415, after which client-go falls back to JSON */
        resp_status(resp, 415, "UnsupportedMediaType",
                    "the body of the request was in an unknown format - accepted media types "
                    "include: application/json, application/yaml");
        return NULL;
    }
    if (yaml || (r->content_type && strstr(r->content_type, "yaml"))) {
        o = cu_yaml_to_json(r->body, r->body_len, err, sizeof err);
        if (!o) {
            resp_status(resp, 400, "BadRequest", "error decoding YAML: %s", err);
            return NULL;
        }
        return o;
    }
    o = cu_json_parse_checked(r->body, r->body_len, NULL, err, sizeof err);
    if (!o)
        resp_status(resp, 400, "BadRequest", "the request body is not valid JSON: %s", err);
    return o;
}

static void api_version_of(const cu_rtype *rt, char *out, size_t n)
{
    snprintf(out, n, "%s%s%s", rt->group, *rt->group ? "/" : "", rt->version);
}

/* Checks and completes apiVersion/kind/namespace/name of a body for rt.
 * Returns 0, or -1 with a 400 response set. */
static int fix_identity(const cu_rtype *rt, json_object *o, const char *ns, const char *name,
                        cu_api_resp *resp)
{
    char av[200];
    if (!json_object_is_type(o, json_type_object)) {
        resp_status(resp, 400, "BadRequest", "the request body must be a JSON object, not %s",
                    json_type_to_name(json_object_get_type(o)));
        return -1;
    }
    api_version_of(rt, av, sizeof av);
    const char *bav = jstr(o, "apiVersion"), *bk = jstr(o, "kind");
    if (bk && *bk && strcmp(bk, rt->kind) != 0) {
        resp_status(resp, 400, "BadRequest",
                    "the kind in the data (%s) does not match the expected kind (%s)", bk,
                    rt->kind);
        return -1;
    }
    if (bav && *bav && strcmp(bav, av) != 0) {
        resp_status(resp, 400, "BadRequest",
                    "the API version in the data (%s) does not match the expected API version (%s)",
                    bav, av);
        return -1;
    }
    jset_str(o, "apiVersion", av);
    jset_str(o, "kind", rt->kind);
    json_object *m = jmeta(o);
    if (!json_object_is_type(m, json_type_object)) {
        resp_status(resp, 400, "BadRequest", "%s: metadata must be an object", rt->kind);
        return -1;
    }
    if (rt->namespaced && ns && *ns) {
        const char *bns = jstr(m, "namespace");
        if (bns && *bns && strcmp(bns, ns) != 0) {
            resp_status(resp, 400, "BadRequest",
                        "the namespace of the provided object does not match the namespace "
                        "sent on the request");
            return -1;
        }
        jset_str(m, "namespace", ns);
    }
    if (name && *name) {
        const char *bn = jstr(m, "name");
        if (bn && *bn && strcmp(bn, name) != 0) {
            resp_status(resp, 400, "BadRequest",
                        "the name of the object (%s) does not match the name on the URL (%s)",
                        bn, name);
            return -1;
        }
        jset_str(m, "name", name);
    }
    return 0;
}

/* fieldValidation for custom resources: unknown fields are an error
 * (Strict), a warning (Warn, the default) or nothing (Ignore). Built-in
 * kinds are accepted as they are. Returns 0 or -1 with a 400 set. */
static int check_unknown_fields(const cu_api_req *r, const cu_rtype *rt, json_object *o,
                                cu_api_resp *resp)
{
    const char *fv = arg(r, "fieldValidation");
    if (!rt->schema || (fv && strcasecmp(fv, "Ignore") == 0))
        return 0;
    json_object *copy = NULL;
    if (json_object_deep_copy(o, &copy, NULL) != 0)
        return 0;
    cu_schema_err errs[32];
    size_t n = cu_schema_validate_rx(rt->schema, rt->schema_rx, copy, 1, errs, 32);
    json_object_put(copy);
    if (n > 32)
        n = 32;
    cu_buf msg;
    cu_buf_init(&msg, 16384);
    size_t unknown = 0;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(errs[i].type, "UnknownField") != 0)
            continue;
        cu_buf_printf(&msg, "%sunknown field \"%s\"", unknown ? ", " : "", errs[i].field);
        unknown++;
    }
    int rc = 0;
    if (unknown && fv && strcasecmp(fv, "Strict") == 0) {
        resp_status(resp, 400, "BadRequest", "strict decoding error: %s", cu_buf_str(&msg));
        rc = -1;
    } else if (unknown) {
        size_t l = msg.len * 2 + 16;
        char *w = malloc(l);
        if (w) {
            size_t k = (size_t)snprintf(w, l, "299 - \"");
            for (const char *p = cu_buf_str(&msg); *p && k + 3 < l; p++) {
                if (*p == '"' || *p == '\\')
                    w[k++] = '\\';
                w[k++] = *p;
            }
            snprintf(w + k, l - k, "\"");
            free(resp->warning);
            resp->warning = w;
        }
    }
    cu_buf_free(&msg);
    return rc;
}

/* The 422 Invalid status for schema errors (dry runs; real writes get
 * theirs from the store). */
static void invalid_status(const cu_rtype *rt, const char *name, const cu_schema_err *errs,
                           size_t n, cu_status *st)
{
    cu_buf msg;
    cu_buf_init(&msg, 8192);
    for (size_t i = 0; i < n && i < 32; i++)
        cu_buf_printf(&msg, "%s%s: %s", i ? ", " : "", errs[i].field, errs[i].message);
    memset(st, 0, sizeof *st);
    cu_status_set(st, 422, "Invalid", "%s%s%s \"%s\" is invalid: %s%s%s", rt->kind,
                  *rt->group ? "." : "", rt->group, name ? name : "", n > 1 ? "[" : "",
                  cu_buf_str(&msg), n > 1 ? "]" : "");
    copy_str(st->kind, sizeof st->kind, rt->kind);
    copy_str(st->group, sizeof st->group, rt->group);
    copy_str(st->name, sizeof st->name, name ? name : "");
    for (size_t i = 0; i < n && i < 32; i++) {
        copy_str(st->causes[i].type, sizeof st->causes[i].type, errs[i].type);
        copy_str(st->causes[i].field, sizeof st->causes[i].field, errs[i].field);
        copy_str(st->causes[i].message, sizeof st->causes[i].message, errs[i].message);
        st->ncauses = i + 1;
    }
    cu_buf_free(&msg);
}

/* For dryRun=All: validates o against the schema without storing.
 * Returns 0 or -1 with a 422 set. */
/* The n errors found in o: 0 when none, else -1 with the 422 set. */
static int respond_invalid(const cu_rtype *rt, json_object *o, const cu_schema_err *errs,
                           size_t n, cu_api_resp *resp)
{
    if (!n)
        return 0;
    cu_status st;
    invalid_status(rt, jstr(jget(o, "metadata"), "name"), errs, n > 32 ? 32 : n, &st);
    resp_st(resp, &st);
    return -1;
}

static int dry_validate(const cu_rtype *rt, json_object *o, cu_api_resp *resp)
{
    if (!rt->schema)
        return 0;
    cu_schema_err errs[32];
    return respond_invalid(rt, o, errs, cu_schema_validate_rx(rt->schema, rt->schema_rx, o, 0, errs, 32),
                           resp);
}

/* ObjectMeta and the built-in kinds' field types (cu_objmeta.c): 0, or
 * -1 with kube-apiserver's 422 Invalid set. The store checks every write
 * again; patches are checked here first, before their result is used. */
static int objmeta_check(const cu_rtype *rt, json_object *o, cu_api_resp *resp)
{
    cu_schema_err errs[32];
    return respond_invalid(rt, o, errs, cu_objmeta_validate(o, rt->kind, !rt->from_crd, errs, 32),
                           resp);
}

/* The result of a merge, strategic or JSON patch is validated as the body
 * of a PUT: metadata an object of the right field types, the name there
 * and the URL's, the uid the stored one (kube-apiserver: "field is
 * immutable"). 0, or -1 with the response set. */
static int check_patched(const cu_rtype *rt, json_object *cur, json_object *next, const char *name,
                         cu_api_resp *resp)
{
    if (objmeta_check(rt, next, resp) != 0)
        return -1;
    json_object *m = jget(next, "metadata");
    const char *nn = jstr(m, "name");
    cu_schema_err e;
    memset(&e, 0, sizeof e);
    if (!nn || !*nn) {
        copy_str(e.field, sizeof e.field, "metadata.name");
        copy_str(e.type, sizeof e.type, "FieldValueRequired");
        copy_str(e.message, sizeof e.message, "Required value: name or generateName is required");
    } else {
        const char *ou = jstr(jget(cur, "metadata"), "uid"), *nu = jstr(m, "uid");
        if (ou && (!nu || strcmp(ou, nu) != 0)) {
            copy_str(e.field, sizeof e.field, "metadata.uid");
            copy_str(e.type, sizeof e.type, "FieldValueInvalid");
            snprintf(e.message, sizeof e.message, "Invalid value: \"%s\": field is immutable",
                     nu ? nu : "");
        }
    }
    if (!e.field[0])
        return 0;
    cu_status st;
    invalid_status(rt, name, &e, 1, &st);
    resp_st(resp, &st);
    return -1;
}

static int is_dry_run(const cu_api_req *r)
{
    const char *d = arg(r, "dryRun");
    return d && strcmp(d, "All") == 0;
}

/* ---------------- verbs ---------------- */

typedef struct req_ctx {
    cu_apiserver *a;
    const cu_api_req *r;
    const cu_rtype *rt;
    const cu_route *route;
    const char *ns;        /* NULL for cluster-scoped or all namespaces */
    cu_api_resp *resp;
} req_ctx;

/* Accept: which Table version was asked for (0 = none). */
static int want_table(const char *accept)
{
    return accept && strstr(accept, "as=Table") && strstr(accept, "g=meta.k8s.io");
}

static int include_mode(const cu_api_req *r)
{
    const char *v = arg(r, "includeObject");
    if (v && strcmp(v, "None") == 0)
        return 0;
    if (v && strcmp(v, "Object") == 0)
        return 2;
    return 1;
}

static void respond_object(req_ctx *c, int code, json_object *obj)
{
    if (want_table(c->r->accept)) {
        json_object *t = cu_table_build(c->rt, obj, include_mode(c->r), 1, wall_ms());
        json_object_put(obj);
        resp_json(c->resp, code, t);
        snprintf(c->resp->content_type, sizeof c->resp->content_type, "%s", TABLE_CT);
        return;
    }
    resp_json(c->resp, code, obj);
}

static void list_opts(const cu_api_req *r, cu_list_opts *lo)
{
    memset(lo, 0, sizeof *lo);
    lo->label_selector = arg(r, "labelSelector");
    lo->field_selector = arg(r, "fieldSelector");
    char err[200];
    /* range-checked by query_ints; 0 or less: no limit, as kube-apiserver */
    if (cu_query_int("limit", arg(r, "limit"), INT64_MIN, INT64_MAX, &lo->limit, err,
                     sizeof err) != 0 || lo->limit < 0)
        lo->limit = 0;
    lo->cont = arg(r, "continue");
    lo->resource_version = arg(r, "resourceVersion");
    lo->rv_match = arg(r, "resourceVersionMatch");
}

static void do_get(req_ctx *c)
{
    json_object *out = NULL;
    cu_status st;
    memset(&st, 0, sizeof st);
    if (cu_store_get(c->a->s, c->rt, c->ns, c->route->name, &out, &st) != CU_OK) {
        resp_st(c->resp, &st);
        return;
    }
    respond_object(c, 200, out);
}

static void do_watch(req_ctx *c, const cu_list_opts *lo)
{
    cu_status st;
    cu_watch *w = NULL;
    memset(&st, 0, sizeof st);
    if (cu_store_watch_open(c->a->s, c->rt, c->ns, lo, arg_true(c->r, "allowWatchBookmarks"),
                            &w, &st) != CU_OK) {
        resp_st(c->resp, &st);
        return;
    }
    watch_stream *ws = calloc(1, sizeof *ws);
    if (!ws) {
        cu_store_watch_close(w);
        resp_status(c->resp, 500, "InternalError", "out of memory");
        return;
    }
    ws->a = c->a;
    ws->w = w;
    ws->rt = c->rt;
    ws->table = want_table(c->r->accept);
    ws->include = include_mode(c->r);
    ws->first = 1;
    ws->fd = -1;
    int64_t to = 0;
    char err[200];
    /* range-checked by query_ints; past ~292 million years: no deadline */
    if (cu_query_int("timeoutSeconds", arg(c->r, "timeoutSeconds"), 0, INT64_MAX, &to, err,
                     sizeof err) == 0 && to > 0 && to < (INT64_MAX - mono_ms()) / 1000 - 1)
        ws->deadline = mono_ms() + 1 + to * 1000;
    c->resp->code = 200;
    c->resp->watch = ws;
    snprintf(c->resp->content_type, sizeof c->resp->content_type, "application/json");
}

static void do_list(req_ctx *c)
{
    cu_list_opts lo;
    list_opts(c->r, &lo);
    if (arg_true(c->r, "watch")) {
        do_watch(c, &lo);
        return;
    }
    cu_status st;
    memset(&st, 0, sizeof st);
    if (!want_table(c->r->accept)) {
        /* plain JSON: the stored text as it is, no json-c trees (a LIST of
         * 10,000 objects is ~100x cheaper this way) */
        char *raw = NULL;
        size_t len = 0;
        if (cu_store_list_raw(c->a->s, c->rt, c->ns, &lo, &raw, &len, &st) != CU_OK) {
            resp_st(c->resp, &st);
            return;
        }
        c->resp->code = 200;
        free(c->resp->body);
        c->resp->body = raw;
        c->resp->body_len = len;
        snprintf(c->resp->content_type, sizeof c->resp->content_type, "application/json");
        return;
    }
    json_object *out = NULL;
    if (cu_store_list(c->a->s, c->rt, c->ns, &lo, &out, &st) != CU_OK) {
        resp_st(c->resp, &st);
        return;
    }
    respond_object(c, 200, out);
}

/* dryRun=All: answer with the validated object instead of storing it
 * (takes obj). */
static void respond_dry_run(req_ctx *c, int code, json_object *obj)
{
    if (dry_validate(c->rt, obj, c->resp) == 0)
        respond_object(c, code, obj);
    else
        json_object_put(obj);
}

static int namespace_exists(req_ctx *c)
{
    const cu_rtype *nrt = cu_store_rtype(c->a->s, "", "v1", "namespaces");
    json_object *o = NULL;
    cu_status st;
    memset(&st, 0, sizeof st);
    if (!nrt || !c->ns || cu_store_get(c->a->s, nrt, NULL, c->ns, &o, &st) == CU_OK) {
        json_object_put(o);
        return 1;
    }
    resp_st(c->resp, &st);
    return 0;
}

/* ---- field management (cu_fields.c) ---- */

static const char *status_sub(req_ctx *c);

static void field_oracle(const cu_rtype *rt, cu_field_oracle *o)
{
    if (rt->from_crd) {
        cu_fields_schema_oracle(rt->schema, o);
    } else {
        char av[200];
        api_version_of(rt, av, sizeof av);
        cu_patch_field_oracle(av, rt->kind, o);
    }
}

/* The part of the object a write reaches (the store drops the rest). */
static int write_scope(req_ctx *c, int create)
{
    if (status_sub(c))
        return CU_SCOPE_STATUS;
    if (create)
        return c->rt->from_crd && c->rt->status_sub ? CU_SCOPE_NO_STATUS : CU_SCOPE_ALL;
    return c->rt->status_sub ? CU_SCOPE_NO_STATUS : CU_SCOPE_ALL;
}

static void fm_request(req_ctx *c, cu_fm_req *fr, char *mgr, size_t mn, char *av, size_t avn,
                       char *now, size_t nown)
{
    const char *m = arg(c->r, "fieldManager");
    if (m && *m)
        copy_str(mgr, mn, m);
    else
        cu_fields_default_manager(c->r->user_agent, mgr, mn);
    api_version_of(c->rt, av, avn);
    time_t t = (time_t)(wall_ms() / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(now, nown, "%Y-%m-%dT%H:%M:%SZ", &tm);
    memset(fr, 0, sizeof *fr);
    fr->manager = mgr;
    fr->api_version = av;
    fr->subresource = status_sub(c);
    fr->now = now;
    fr->force = arg_true(c->r, "force");
}

/* Records an Update on nw (old NULL on create). Returns 0 or -1 with a
 * 422 set. */
static int track_update(req_ctx *c, json_object *old, json_object *nw, int create)
{
    cu_field_oracle o;
    cu_fm_req fr;
    char mgr[200], av[200], now[40], err[512];
    field_oracle(c->rt, &o);
    fm_request(c, &fr, mgr, sizeof mgr, av, sizeof av, now, sizeof now);
    if (cu_fields_update(old, nw, &o, write_scope(c, create), &fr, err, sizeof err) == 0)
        return 0;
    const char *name = jstr(jmeta(nw), "name");
    resp_status(c->resp, 422, "Invalid", "%s \"%s\" is invalid: %s", c->rt->kind,
                name ? name : "", err);
    return -1;
}

/* Server-side apply of patch onto cur (NULL = create). Returns the new
 * object or NULL with the response (409 conflict, 422) set. */
static json_object *track_apply(req_ctx *c, json_object *cur, json_object *patch)
{
    cu_field_oracle o;
    cu_fm_req fr;
    cu_fm_conflict cf;
    char mgr[200], av[200], now[40], err[512] = "";
    field_oracle(c->rt, &o);
    fm_request(c, &fr, mgr, sizeof mgr, av, sizeof av, now, sizeof now);
    json_object *next =
        cu_fields_apply(cur, patch, &o, write_scope(c, cur == NULL), &fr, &cf, err, sizeof err);
    if (next)
        return next;
    if (cf.n) {
        cu_status st;
        memset(&st, 0, sizeof st);
        st.code = 409;
        copy_str(st.reason, sizeof st.reason, "Conflict");
        copy_str(st.message, sizeof st.message, cf.message);
        for (size_t i = 0; i < cf.ncauses && i < 32; i++) {
            copy_str(st.causes[i].type, sizeof st.causes[i].type, "FieldManagerConflict");
            copy_str(st.causes[i].field, sizeof st.causes[i].field, cf.causes[i].field);
            copy_str(st.causes[i].message, sizeof st.causes[i].message, cf.causes[i].message);
        }
        st.ncauses = cf.ncauses < 32 ? cf.ncauses : 32;
        resp_st(c->resp, &st);
        return NULL;
    }
    resp_status(c->resp, 422, "Invalid", "%s", err[0] ? err : "the apply failed");
    return NULL;
}

/* tracked: managedFields are already set (create by apply). */
static void do_create_ex(req_ctx *c, json_object *body, int tracked)
{
    cu_status st;
    memset(&st, 0, sizeof st);
    if (fix_identity(c->rt, body, c->ns, NULL, c->resp) != 0 ||
        (c->rt->namespaced && !namespace_exists(c)) ||
        check_unknown_fields(c->r, c->rt, body, c->resp) != 0 ||
        (!tracked && track_update(c, NULL, body, 1) != 0)) {
        json_object_put(body);
        return;
    }
    if (is_dry_run(c->r)) {
        respond_dry_run(c, 201, body);
        return;
    }
    json_object *out = NULL;
    if (cu_store_create(c->a->s, c->rt, c->ns, body, &out, &st) != CU_OK) {
        resp_st(c->resp, &st);
        return;
    }
    respond_object(c, 201, out);
}

static void do_create(req_ctx *c, json_object *body)
{
    do_create_ex(c, body, 0);
}

static const char *status_sub(req_ctx *c)
{
    return c->route->sub[0] ? c->route->sub : NULL;
}

static void do_update(req_ctx *c, json_object *body)
{
    cu_status st;
    memset(&st, 0, sizeof st);
    if (fix_identity(c->rt, body, c->ns, c->route->name, c->resp) != 0 ||
        check_unknown_fields(c->r, c->rt, body, c->resp) != 0) {
        json_object_put(body);
        return;
    }
    /* ownership is computed against the live object; a PUT carrying a
     * resourceVersion is checked against the same version by the store */
    json_object *cur = NULL;
    if (cu_store_get(c->a->s, c->rt, c->ns, c->route->name, &cur, &st) != CU_OK) {
        json_object_put(body);
        resp_st(c->resp, &st);
        return;
    }
    int bad = track_update(c, cur, body, 0);
    json_object_put(cur);
    if (bad) {
        json_object_put(body);
        return;
    }
    if (is_dry_run(c->r)) {
        respond_dry_run(c, 200, body);
        return;
    }
    json_object *out = NULL;
    if (cu_store_update(c->a->s, c->rt, c->ns, c->route->name, status_sub(c), body, &out, &st) !=
        CU_OK) {
        resp_st(c->resp, &st);
        return;
    }
    respond_object(c, 200, out);
}

enum { PATCH_MERGE = 1, PATCH_JSON, PATCH_STRATEGIC, PATCH_APPLY };

static void do_patch(req_ctx *c)
{
    const char *ct = c->r->content_type;
    int type = has_ct(ct, "application/merge-patch+json")             ? PATCH_MERGE
               : has_ct(ct, "application/json-patch+json")            ? PATCH_JSON
               : has_ct(ct, "application/strategic-merge-patch+json") ? PATCH_STRATEGIC
               : has_ct(ct, "application/apply-patch+yaml")           ? PATCH_APPLY
                                                                      : 0;
    if (!type || (type == PATCH_STRATEGIC && c->rt->from_crd)) {
        resp_status(c->resp, 415, "UnsupportedMediaType",
                    "the body of the request was in an unknown format - accepted media types "
                    "include: application/json-patch+json, application/merge-patch+json, "
                    "application/apply-patch+yaml%s",
                    c->rt->from_crd ? "" : ", application/strategic-merge-patch+json");
        return;
    }
    if (type == PATCH_APPLY && !(arg(c->r, "fieldManager") && *arg(c->r, "fieldManager"))) {
        resp_status(c->resp, 422, "Invalid",
                    "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is "
                    "required for apply patch");
        return;
    }
    json_object *patch = decode_body(c->r, c->resp, type == PATCH_APPLY);
    if (!patch)
        return;
    if ((type == PATCH_JSON) != json_object_is_type(patch, json_type_array) ||
        (type != PATCH_JSON && !json_object_is_type(patch, json_type_object))) {
        resp_status(c->resp, 400, "BadRequest", "%s",
                    type == PATCH_JSON ? "a JSON patch must be an array of operations"
                                       : "the patch must be a JSON object");
        json_object_put(patch);
        return;
    }
    if (type == PATCH_APPLY && objmeta_check(c->rt, patch, c->resp) != 0) {
        json_object_put(patch);
        return;
    }
    char av[200], err[512];
    api_version_of(c->rt, av, sizeof av);
    for (int attempt = 0; attempt < 8; attempt++) {
        json_object *cur = NULL, *next = NULL, *out = NULL;
        cu_status st;
        memset(&st, 0, sizeof st);
        err[0] = '\0';
        cu_err e = cu_store_get(c->a->s, c->rt, c->ns, c->route->name, &cur, &st);
        if (e == CU_ENOTFOUND && type == PATCH_APPLY && !status_sub(c)) {
            json_object *obj = track_apply(c, NULL, patch);
            json_object_put(patch);
            if (obj)
                do_create_ex(c, obj, 1);
            return;
        }
        if (e != CU_OK) {
            resp_st(c->resp, &st);
            json_object_put(patch);
            return;
        }
        switch (type) {
        case PATCH_MERGE: next = cu_merge_patch(cur, patch, err, sizeof err); break;
        case PATCH_JSON: next = cu_json_patch(cur, patch, err, sizeof err); break;
        case PATCH_STRATEGIC:
            next = cu_strategic_merge_patch(cur, patch, av, c->rt->kind, err, sizeof err);
            break;
        default:
            next = track_apply(c, cur, patch);
            if (!next) {
                json_object_put(cur);
                json_object_put(patch);
                return;
            }
            break;
        }
        if (!next) {
            json_object_put(cur);
            json_object_put(patch);
            resp_status(c->resp, 422, "Invalid", "%s", err[0] ? err : "the patch failed");
            return;
        }
        if (check_patched(c->rt, cur, next, c->route->name, c->resp) != 0) {
            json_object_put(cur);
            json_object_put(next);
            json_object_put(patch);
            return;
        }
        const char *crv = jstr(jget(cur, "metadata"), "resourceVersion");
        json_object *nm = jmeta(next);
        const char *nrv = jstr(nm, "resourceVersion");
        int explicit_rv = nrv && crv && strcmp(nrv, crv) != 0;
        if (!nrv && crv)
            jset_str(nm, "resourceVersion", crv);
        if (type != PATCH_APPLY && track_update(c, cur, next, 0) != 0) {
            json_object_put(cur);
            json_object_put(next);
            json_object_put(patch);
            return;
        }
        json_object_put(cur);
        if (fix_identity(c->rt, next, c->ns, c->route->name, c->resp) != 0 ||
            check_unknown_fields(c->r, c->rt, next, c->resp) != 0) {
            json_object_put(next);
            json_object_put(patch);
            return;
        }
        if (is_dry_run(c->r)) {
            json_object_put(patch);
            respond_dry_run(c, 200, next);
            return;
        }
        e = cu_store_update(c->a->s, c->rt, c->ns, c->route->name, status_sub(c), next, &out,
                            &st);
        if (e == CU_ECONFLICT && !explicit_rv && attempt < 7)
            continue;
        json_object_put(patch);
        if (e != CU_OK) {
            resp_st(c->resp, &st);
            return;
        }
        respond_object(c, 200, out);
        return;
    }
}

/* DeleteOptions from the query and the body. Returns 0, or -1 with a 400
 * set when the body is not a JSON object. */
static int delete_options(const cu_api_req *r, cu_api_resp *resp, const char **prop, char *rv,
                          size_t rvn, int *dry)
{
    *prop = arg(r, "propagationPolicy");
    *dry = is_dry_run(r);
    rv[0] = '\0';
    if (!r->body || !r->body_len)
        return 0;
    char err[300];
    int is_null = 0;
    json_object *o = cu_json_parse_checked(r->body, r->body_len, &is_null, err, sizeof err);
    if (is_null)
        return 0;
    if (!o || !json_object_is_type(o, json_type_object)) {
        resp_status(resp, 400, "BadRequest", "the DeleteOptions body is not a JSON object: %s",
                    o ? json_type_to_name(json_object_get_type(o)) : err);
        json_object_put(o);
        return -1;
    }
    static const char *const props[3] = {"Background", "Foreground", "Orphan"};
    const char *p = jstr(o, "propagationPolicy");
    for (int i = 0; p && i < 3; i++)
        if (strcmp(p, props[i]) == 0)
            *prop = props[i];
    json_object *orphan = jget(o, "orphanDependents");
    if (orphan && json_object_get_boolean(orphan))
        *prop = props[2];
    const char *prv = jstr(jget(o, "preconditions"), "resourceVersion");
    if (prv)
        snprintf(rv, rvn, "%s", prv);
    json_object *dr = jget(o, "dryRun");
    for (size_t i = 0; i < jlen(dr); i++) {
        const char *d = json_object_get_string(json_object_array_get_idx(dr, i));
        if (d && strcmp(d, "All") == 0)
            *dry = 1;
    }
    json_object_put(o);
    return 0;
}

static void do_delete(req_ctx *c)
{
    const char *prop;
    char rv[64];
    int dry;
    if (delete_options(c->r, c->resp, &prop, rv, sizeof rv, &dry) != 0)
        return;
    if (dry) {
        do_get(c);
        return;
    }
    json_object *out = NULL;
    cu_status st;
    memset(&st, 0, sizeof st);
    if (cu_store_delete(c->a->s, c->rt, c->ns, c->route->name, prop, rv[0] ? rv : NULL, &out,
                        &st) != CU_OK) {
        resp_st(c->resp, &st);
        return;
    }
    cu_store_gc(c->a->s);
    respond_object(c, 200, out);
}

static void do_delete_collection(req_ctx *c)
{
    const char *prop;
    char rv[64];
    int dry;
    cu_list_opts lo;
    if (delete_options(c->r, c->resp, &prop, rv, sizeof rv, &dry) != 0)
        return;
    list_opts(c->r, &lo);
    lo.limit = 0;
    lo.cont = NULL;
    json_object *list = NULL;
    cu_status st;
    memset(&st, 0, sizeof st);
    if (cu_store_list(c->a->s, c->rt, c->ns, &lo, &list, &st) != CU_OK) {
        resp_st(c->resp, &st);
        return;
    }
    json_object *items = jget(list, "items"), *done = json_object_new_array();
    for (size_t i = 0; !dry && i < jlen(items); i++) {
        json_object *m = jget(json_object_array_get_idx(items, i), "metadata"), *out = NULL;
        memset(&st, 0, sizeof st);
        if (cu_store_delete(c->a->s, c->rt, c->rt->namespaced ? jstr(m, "namespace") : NULL,
                            jstr(m, "name"), prop, NULL, &out, &st) == CU_OK)
            json_object_array_add(done, out);
    }
    if (!dry) {
        json_object_object_add(list, "items", done);
        cu_store_gc(c->a->s);
    } else {
        json_object_put(done);
    }
    respond_object(c, 200, list);
}

/* POST pods/NAME/binding: what the scheduler does to place a pod. */
static void do_binding(req_ctx *c, json_object *body)
{
    const char *node = jstr(jget(body, "target"), "name");
    cu_status st;
    memset(&st, 0, sizeof st);
    if (!node || !*node) {
        json_object_put(body);
        resp_status(c->resp, 400, "BadRequest", "Binding \"%s\": target.name: Required value",
                    c->route->name);
        return;
    }
    json_object *pod = NULL, *out = NULL;
    if (cu_store_get(c->a->s, c->rt, c->ns, c->route->name, &pod, &st) != CU_OK) {
        json_object_put(body);
        resp_st(c->resp, &st);
        return;
    }
    json_object *spec = jget(pod, "spec");
    if (!spec) {
        spec = json_object_new_object();
        json_object_object_add(pod, "spec", spec);
    }
    const char *cur = jstr(spec, "nodeName");
    if (cur && *cur) {
        resp_status(c->resp, 409, "Conflict", "pod %s is already assigned to node \"%s\"",
                    c->route->name, cur);
        json_object_put(pod);
        json_object_put(body);
        return;
    }
    jset_str(spec, "nodeName", node);
    json_object_put(body);
    if (cu_store_update(c->a->s, c->rt, c->ns, c->route->name, NULL, pod, &out, &st) != CU_OK) {
        resp_st(c->resp, &st);
        return;
    }
    json_object_put(out);
    json_object *ok = json_object_new_object();
    jset_str(ok, "kind", "Status");
    jset_str(ok, "apiVersion", "v1");
    json_object_object_add(ok, "metadata", json_object_new_object());
    jset_str(ok, "status", "Success");
    json_object_object_add(ok, "code", json_object_new_int(201));
    resp_json(c->resp, 201, ok);
}

/* Every integer query parameter the server reads (kube-apiserver decodes
 * them as int64 and refuses the request when that fails): 0, or -1 with a
 * 400 BadRequest naming the parameter. */
static int query_ints(const cu_api_req *r, cu_api_resp *resp)
{
    static const struct {
        const char *name;
        int64_t min;
    } params[] = {{"limit", INT64_MIN}, {"timeoutSeconds", 0}, {"gracePeriodSeconds", INT64_MIN}};
    for (size_t i = 0; i < sizeof params / sizeof *params; i++) {
        char err[300];
        int64_t v;
        if (cu_query_int(params[i].name, arg(r, params[i].name), params[i].min, INT64_MAX, &v, err,
                         sizeof err) != 0) {
            resp_status(resp, 400, "BadRequest", "%s", err);
            return -1;
        }
    }
    return 0;
}

static void method_not_allowed(cu_api_resp *resp)
{
    resp_status(resp, 405, "MethodNotAllowed",
                "the server does not allow this method on the requested resource");
}

static void handle_resource(cu_apiserver *a, const cu_api_req *r, const cu_route *rt_,
                            cu_api_resp *resp)
{
    const cu_rtype *rt = cu_store_rtype(a->s, rt_->group, rt_->version, rt_->resource);
    if (!rt || strcmp(rt->resource, rt_->resource) != 0 || (rt_->ns[0] && !rt->namespaced)) {
        resp_not_found_path(resp);
        return;
    }
    if (query_ints(r, resp) != 0)
        return;
    req_ctx c = {a, r, rt, rt_, rt->namespaced && rt_->ns[0] ? rt_->ns : NULL, resp};
    const char *m = r->method;
    const char *sub = rt_->sub;
    if (sub[0]) {
        if (strcmp(sub, "binding") == 0 && strcmp(rt->resource, "pods") == 0 && !*rt->group) {
            if (strcmp(m, "POST") != 0) {
                method_not_allowed(resp);
                return;
            }
            json_object *body = decode_body(r, resp, 0);
            if (body)
                do_binding(&c, body);
            return;
        }
        if (strcmp(sub, "status") != 0 || !has_status(rt)) {
            resp_not_found_path(resp);
            return;
        }
        if (strcmp(m, "GET") == 0)
            do_get(&c);
        else if (strcmp(m, "PUT") == 0) {
            json_object *body = decode_body(r, resp, 0);
            if (body)
                do_update(&c, body);
        } else if (strcmp(m, "PATCH") == 0)
            do_patch(&c);
        else
            method_not_allowed(resp);
        return;
    }
    if (!rt_->name[0]) {
        if (strcmp(m, "GET") == 0)
            do_list(&c);
        else if (strcmp(m, "POST") == 0) {
            if (rt->namespaced && !c.ns) {
                method_not_allowed(resp);
                return;
            }
            json_object *body = decode_body(r, resp, 0);
            if (body)
                do_create(&c, body);
        } else if (strcmp(m, "DELETE") == 0)
            do_delete_collection(&c);
        else
            method_not_allowed(resp);
        return;
    }
    if (rt->namespaced && !c.ns) {
        resp_not_found_path(resp);
        return;
    }
    if (strcmp(m, "GET") == 0)
        do_get(&c);
    else if (strcmp(m, "PUT") == 0) {
        json_object *body = decode_body(r, resp, 0);
        if (body)
            do_update(&c, body);
    } else if (strcmp(m, "PATCH") == 0)
        do_patch(&c);
    else if (strcmp(m, "DELETE") == 0)
        do_delete(&c);
    else
        method_not_allowed(resp);
}

/* ---------------- fault injection ---------------- */

static void fault_free(fault_rule *f)
{
    regfree(&f->re);
    free(f->match);
    free(f);
}

cu_err cu_apiserver_fault(cu_apiserver *a, json_object *cmd, char *err, size_t errn)
{
    if (!cmd || !json_object_is_type(cmd, json_type_object)) {
        snprintf(err, errn, "a fault command must be a JSON object");
        return CU_EINVAL;
    }
    json_object *v;
    int known = 0;
    if ((v = jget(cmd, "clear")) && json_object_get_boolean(v)) {
        known = 1;
        pthread_mutex_lock(&a->mu);
        while (a->faults) {
            fault_rule *f = a->faults;
            a->faults = f->next;
            fault_free(f);
        }
        a->stall = 0;
        pthread_mutex_unlock(&a->mu);
    }
    if ((v = jget(cmd, "stallWatches"))) {
        known = 1;
        pthread_mutex_lock(&a->mu);
        a->stall = json_object_get_boolean(v);
        pthread_mutex_unlock(&a->mu);
    }
    if ((v = jget(cmd, "compact")) && json_object_get_boolean(v)) {
        known = 1;
        cu_store_compact(a->s);
    }
    if ((v = jget(cmd, "dropWatches")) && json_object_get_boolean(v)) {
        known = 1;
        cu_store_drop_watches(a->s);
    }
    json_object *spec = jget(cmd, "respond");
    int kind = spec ? FAULT_RESPOND : jget(cmd, "delayMs") ? FAULT_DELAY : 0;
    if (kind) {
        if (!spec)
            spec = cmd;
        const char *match = jstr(spec, "match");
        fault_rule *f = calloc(1, sizeof *f);
        if (!f) {
            snprintf(err, errn, "out of memory");
            return CU_ENOMEM;
        }
        f->kind = kind;
        f->match = strdup(match ? match : ".*");
        if (!f->match || regcomp(&f->re, f->match, REG_EXTENDED | REG_NOSUB) != 0) {
            snprintf(err, errn, "fault: match: not a valid POSIX extended regex: \"%s\"",
                     match ? match : "");
            free(f->match);
            free(f);
            return CU_EINVAL;
        }
        json_object *t = jget(spec, "times");
        f->times = t ? json_object_get_int(t) : kind == FAULT_RESPOND ? 1 : -1;
        if (f->times == 0)
            f->times = -1;
        if (kind == FAULT_RESPOND) {
            f->code = jint(spec, "code");
            f->retry_after = jint(spec, "retryAfter");
            if (f->code != 409 && f->code != 429 && f->code != 500 && f->code != 503) {
                snprintf(err, errn, "fault: respond.code: Unsupported value: %d: supported "
                                    "values: 409, 429, 500, 503", f->code);
                fault_free(f);
                return CU_EINVAL;
            }
            if (f->code == 429 && f->retry_after <= 0)
                f->retry_after = 1;
        } else {
            f->delay_ms = jint(cmd, "delayMs");
            if (f->delay_ms <= 0 || f->delay_ms > 600000) {
                snprintf(err, errn, "fault: delayMs: Invalid value: %d: must be 1..600000",
                         f->delay_ms);
                fault_free(f);
                return CU_EINVAL;
            }
        }
        pthread_mutex_lock(&a->mu);
        fault_rule **pp = &a->faults;
        while (*pp)
            pp = &(*pp)->next;
        *pp = f;
        pthread_mutex_unlock(&a->mu);
        known = 1;
    }
    if (!known) {
        snprintf(err, errn, "unknown fault command: expected one of dropWatches, compact, "
                            "stallWatches, respond, delayMs, clear");
        return CU_EINVAL;
    }
    return CU_OK;
}

json_object *cu_apiserver_faults_json(cu_apiserver *a)
{
    json_object *o = json_object_new_object(), *list = json_object_new_array();
    pthread_mutex_lock(&a->mu);
    for (fault_rule *f = a->faults; f; f = f->next) {
        json_object *e = json_object_new_object();
        jset_str(e, "match", f->match);
        json_object_object_add(e, "times", json_object_new_int(f->times));
        if (f->kind == FAULT_RESPOND) {
            json_object_object_add(e, "code", json_object_new_int(f->code));
            if (f->retry_after)
                json_object_object_add(e, "retryAfter", json_object_new_int(f->retry_after));
        } else {
            json_object_object_add(e, "delayMs", json_object_new_int(f->delay_ms));
        }
        json_object_array_add(list, e);
    }
    json_object_object_add(o, "stallWatches", json_object_new_boolean(a->stall));
    pthread_mutex_unlock(&a->mu);
    json_object_object_add(o, "faults", list);
    return o;
}

/* Applies the fault rules to a request. Returns 1 when a response was
 * injected. */
static int apply_faults(cu_apiserver *a, const cu_api_req *r, cu_api_resp *resp)
{
    char key[2100];
    int delay = 0, code = 0, retry = 0;
    snprintf(key, sizeof key, "%s %s", r->method, r->path);
    pthread_mutex_lock(&a->mu);
    for (fault_rule **pp = &a->faults; *pp;) {
        fault_rule *f = *pp;
        int hit = (f->kind == FAULT_DELAY || !code) && regexec(&f->re, key, 0, NULL, 0) == 0;
        if (hit) {
            if (f->kind == FAULT_DELAY)
                delay += f->delay_ms;
            else {
                code = f->code;
                retry = f->retry_after;
            }
            if (f->times > 0 && --f->times == 0) {
                *pp = f->next;
                fault_free(f);
                continue;
            }
        }
        pp = &f->next;
    }
    pthread_mutex_unlock(&a->mu);
    if (delay)
        sleep_ms(delay);
    if (!code)
        return 0;
    if (code == 409)
        resp_status(resp, 409, "Conflict",
                    "Operation cannot be fulfilled on %s: the object has been modified; please "
                    "apply your changes to the latest version and try again (injected fault)",
                    r->path);
    else if (code == 429) {
        cu_status st;
        memset(&st, 0, sizeof st);
        cu_status_set(&st, 429, "TooManyRequests",
                      "Too many requests, please try again later. (injected fault)");
        json_object *j = cu_status_json(&st), *det = jget(j, "details");
        if (!det) {
            det = json_object_new_object();
            json_object_object_add(j, "details", det);
        }
        json_object_object_add(det, "retryAfterSeconds", json_object_new_int(retry));
        resp_json(resp, 429, j);
        resp->retry_after = retry;
    } else if (code == 503) {
        cu_status st;
        memset(&st, 0, sizeof st);
        cu_status_set(&st, 503, "ServiceUnavailable",
                      "the server is currently unable to handle the request (injected fault)");
        json_object *j = cu_status_json(&st);
        if (retry > 0) {
            json_object *det = json_object_new_object();
            json_object_object_add(det, "retryAfterSeconds", json_object_new_int(retry));
            json_object_object_add(j, "details", det);
        }
        resp_json(resp, 503, j);
        resp->retry_after = retry;
    } else
        resp_status(resp, 500, "InternalError",
                    "Internal error occurred: injected fault for %s %s", r->method, r->path);
    return 1;
}

static void handle_faults(cu_apiserver *a, const cu_api_req *r, cu_api_resp *resp)
{
    if (!a->admin) {
        resp_not_found_path(resp);
        return;
    }
    if (!r->loopback) {
        resp_status(resp, 403, "Forbidden",
                    "the fault-injection endpoint only answers clients on 127.0.0.1");
        return;
    }
    if (strcmp(r->method, "GET") == 0) {
        resp_json(resp, 200, cu_apiserver_faults_json(a));
        return;
    }
    if (strcmp(r->method, "DELETE") == 0) {
        json_object *clear = json_object_new_object();
        char err[256];
        json_object_object_add(clear, "clear", json_object_new_boolean(1));
        cu_apiserver_fault(a, clear, err, sizeof err);
        json_object_put(clear);
        resp_json(resp, 200, cu_apiserver_faults_json(a));
        return;
    }
    if (strcmp(r->method, "POST") != 0) {
        method_not_allowed(resp);
        return;
    }
    cu_api_req plain = *r;
    plain.content_type = NULL; /* any content type: the body is JSON */
    json_object *cmd = decode_body(&plain, resp, 0);
    if (!cmd)
        return;
    char err[512];
    size_t n = json_object_is_type(cmd, json_type_array) ? json_object_array_length(cmd) : 1;
    for (size_t i = 0; i < n; i++) {
        json_object *one = json_object_is_type(cmd, json_type_array)
                               ? json_object_array_get_idx(cmd, i)
                               : cmd;
        if (cu_apiserver_fault(a, one, err, sizeof err) != CU_OK) {
            json_object_put(cmd);
            resp_status(resp, 400, "BadRequest", "%s", err);
            return;
        }
    }
    json_object_put(cmd);
    resp_json(resp, 200, cu_apiserver_faults_json(a));
}

/* ---------------- the request core ---------------- */

static int open_path(const char *p)
{
    static const char *const open[] = {"/healthz", "/readyz", "/livez", "/version", NULL};
    for (const char *const *o = open; *o; o++) {
        size_t n = strlen(*o);
        if (strncmp(p, *o, n) == 0 && (p[n] == '\0' || p[n] == '/'))
            return 1;
    }
    return 0;
}

static int authorized(cu_apiserver *a, const cu_api_req *r)
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
    int review_code = a->authn ? cu_authn_handle(a->authn, r->method, p, r->body, r->body_len,
                                                 &review)
                               : 0;
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
        jset_str(doc, "kind", "APIVersions");
        json_object *vs = json_object_new_array();
        json_object_array_add(vs, json_object_new_string("v1"));
        json_object_object_add(doc, "versions", vs);
        json_object *addrs = json_object_new_array(), *ad = json_object_new_object();
        char sa[64];
        snprintf(sa, sizeof sa, "127.0.0.1:%d", a->port);
        jset_str(ad, "clientCIDR", "0.0.0.0/0");
        jset_str(ad, "serverAddress", sa);
        json_object_array_add(addrs, ad);
        json_object_object_add(doc, "serverAddressByClientCIDRs", addrs);
        break;
    case CU_ROUTE_APIS:
        doc = group_list(a->s, NULL);
        if (a->authn)
            cu_authn_add_groups(doc);   /* the review APIs (cu_authn.h) */
        break;
    case CU_ROUTE_GROUP: doc = group_list(a->s, route.group); break;
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
    struct pollfd p = {fd, POLLIN, 0};
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
    if (!ws->table || (strcmp(ev->type, "ADDED") != 0 && strcmp(ev->type, "MODIFIED") != 0 &&
                       strcmp(ev->type, "DELETED") != 0))
        return;
    size_t n = 0;
    const char *js = cu_rstr_data(ev->obj, &n);
    json_object *o = cu_json_parse(NULL, js, n, NULL, 0);
    if (!o)
        return;
    json_object *t = cu_table_build(ws->rt, o, ws->include, ws->first, wall_ms());
    ws->first = 0;
    json_object_put(o);
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
static int ws_next(watch_stream *ws, int timeout_ms, int *ended, cu_watch_ev *ev)
{
    int64_t start = mono_ms();
    *ended = 0;
    for (;;) {
        int64_t now = mono_ms();
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

static void ws_free(watch_stream *ws)
{
    if (!ws)
        return;
    cu_store_watch_close(ws->w);
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
        int k = sprintf(l, "{\"type\":\"%s\",\"object\":", ev.type);
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

/* ---------------- the HTTP layer (libmicrohttpd) ---------------- */

typedef struct conn_state {
    cu_buf body;
    int refused;       /* answered before the body was read */
    int has_early;     /* early holds the answer, given once the body is dropped */
    cu_api_resp early;
    size_t dropped;    /* body bytes dropped so far */
} conn_state;

typedef struct arg_vec {
    char **v;
    size_t n, cap;   /* n counts strings (2 per argument) */
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
        ws->hlen = (size_t)snprintf(ws->head, sizeof ws->head, "{\"type\":\"%s\",\"object\":",
                                    ws->pending.type);
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

static void watch_reader_free(void *cls)
{
    ws_free(cls);
}

static int is_loopback(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (!ci || !ci->client_addr)
        return 0;
    const struct sockaddr *sa = ci->client_addr;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)sa;
        return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
    }
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)(const void *)sa;
        static const unsigned char lo[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
        static const unsigned char v4pfx[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
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
        if (resp->warning)
            MHD_add_response_header(mr, "Warning", resp->warning);
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
    const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
                                                 MHD_HTTP_HEADER_CONTENT_LENGTH);
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
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
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
    arg_vec av = {NULL, 0, 0};
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
        .user_agent = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_USER_AGENT),
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
        snprintf(err, errn, "--token-file %s: no token in the file (one token per line, "
                            "optionally followed by ,user,uid,groups)", file);
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
            char hex[3] = {r[1], r[2], '\0'};
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
        snprintf(err, errn, "--listen %s: expected HOST:PORT, e.g. 127.0.0.1:6443 (port 0 "
                            "picks a free one)", o->listen);
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
    if (o->tls && cu_tls_generate(host, &a->ca_pem, &a->cert_pem, &a->key_pem, err, errn) != CU_OK) {
        cu_apiserver_stop(a);
        return NULL;
    }
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
                     MHD_USE_POLL | (o->verbose ? MHD_USE_ERROR_LOG : 0) |
                     (o->tls ? MHD_USE_TLS : 0) | (v6 ? MHD_USE_IPv6 : 0);
    struct MHD_OptionItem opts[] = {
        {MHD_OPTION_SOCK_ADDR, 0, &ss},
        {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, a},
        {MHD_OPTION_UNESCAPE_CALLBACK, (intptr_t)unescape_keep_nul, NULL},
        {MHD_OPTION_THREAD_STACK_SIZE, CONN_STACK, NULL},
        /* no client may hold every connection: a cap per address, and
         * idle connections (slow TLS handshakes and requests too) closed */
        {MHD_OPTION_PER_IP_CONNECTION_LIMIT,
         o->max_conns_per_client > 0 ? o->max_conns_per_client : CONN_PER_CLIENT_DEFAULT, NULL},
        {MHD_OPTION_CONNECTION_TIMEOUT,
         o->idle_timeout_s > 0 ? o->idle_timeout_s : IDLE_TIMEOUT_DEFAULT, NULL},
        {o->tls ? MHD_OPTION_HTTPS_MEM_KEY : MHD_OPTION_END, 0, a->key_pem},
        {o->tls ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, a->cert_pem},
        {MHD_OPTION_END, 0, NULL},
    };
    a->d = MHD_start_daemon(flags, (uint16_t)port, NULL, NULL, on_request, a,
                            MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
    if (!a->d) {
        snprintf(err, errn, "cannot listen on %s:%d%s: %s", host, port,
                 o->tls ? " (TLS)" : "", errno ? strerror(errno) : "libmicrohttpd refused");
        cu_apiserver_stop(a);
        return NULL;
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(a->d, MHD_DAEMON_INFO_BIND_PORT);
    a->port = di ? di->port : port;
    const char *uh = strcmp(host, "0.0.0.0") == 0 ? "127.0.0.1" : strcmp(host, "::") == 0 ? "::1" : host;
    snprintf(a->url, sizeof a->url, "%s://%s%s%s:%d", o->tls ? "https" : "http",
             strchr(uh, ':') ? "[" : "", uh, strchr(uh, ':') ? "]" : "", a->port);
    if (o->kubeconfig_out &&
        cu_kubeconfig_write(o->kubeconfig_out, a->url, a->ca_pem,
                            /* with TLS and no credentials kubectl would prompt for a
                             * password: give it a token the server does not check */
                            a->ntokens ? a->tokens[0] : o->tls ? "cueue-unchecked" : NULL,
                            err, errn) != CU_OK) {
        cu_apiserver_stop(a);
        return NULL;
    }
    return a;
}

int cu_apiserver_port(const cu_apiserver *a)
{
    return a->port;
}

const char *cu_apiserver_url(const cu_apiserver *a)
{
    return a->url;
}

void cu_apiserver_stop(cu_apiserver *a)
{
    if (!a)
        return;
    atomic_store(&a->stopping, 1);
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
