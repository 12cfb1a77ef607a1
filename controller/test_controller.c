/*
 * test_controller.c - `cueue controller` end to end against a scripted
 * fake API server (the HTTP boundary mocked).
 *
 * The test process plays the API server on 127.0.0.1 (plain sockets and
 * poll, HTTP/1.1 with keep-alive, several connections at once): it answers
 * LISTs from per-test fixtures, keeps WATCHes open with chunked encoding
 * (replaying what happened after the watch's resourceVersion, then pushing
 * events as the store changes), applies writes to a small store (merge
 * patches, the metadata.resourceVersion precondition, /status touching only
 * status), and records every request. Faults (a status and a count) and
 * delayed answers are scripted per test. The controller runs as a forked
 * child, cu_controller_main with a kubeconfig pointing at the fake; it is
 * stopped with SIGTERM at the end of each test and must exit 0.
 *
 * What is checked: the Workload created for a labelled Job, the admission
 * status patch (precondition, admission, conditions), a 409 on it (no Job
 * start, a retry with the new resourceVersion), the pending reason of a
 * Workload that does not fit, the Job started once its Workload holds
 * quota, one admission for two Workloads that each need the whole quota,
 * quota held in the listed state counted after a restart, no admission
 * before every informer has listed, and a running Job of an evicted
 * Workload stopped in the steps kube-apiserver allows (suspend, clear
 * startTime, restore the template, release once its pods are gone), and
 * request bodies without the "\/" escape (the queue status is applied as
 * YAML 1.1).
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
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cu_controller.h"
#include "test_deep.h"

/* ---------------- the resources the fake serves ---------------- */

enum {
    R_RF,
    R_CQ,
    R_COHORT,
    R_LQ,
    R_WPC,
    R_PC,
    R_NS,
    R_AC,
    R_WL,
    R_JOB,
    R_POD,
    R_NODE,
    NRES,
    R_OTHER = NRES
};

static const struct {
    const char *prefix, *plural, *api_version, *list_kind;
} res_tab[NRES] = {
    { "/apis/kueue.x-k8s.io/v1beta2", "resourceflavors", "kueue.x-k8s.io/v1beta2",
      "ResourceFlavorList" },
    { "/apis/kueue.x-k8s.io/v1beta2", "clusterqueues", "kueue.x-k8s.io/v1beta2",
      "ClusterQueueList" },
    { "/apis/kueue.x-k8s.io/v1beta2", "cohorts", "kueue.x-k8s.io/v1beta2", "CohortList" },
    { "/apis/kueue.x-k8s.io/v1beta2", "localqueues", "kueue.x-k8s.io/v1beta2", "LocalQueueList" },
    { "/apis/kueue.x-k8s.io/v1beta2", "workloadpriorityclasses", "kueue.x-k8s.io/v1beta2",
      "WorkloadPriorityClassList" },
    { "/apis/scheduling.k8s.io/v1", "priorityclasses", "scheduling.k8s.io/v1",
      "PriorityClassList" },
    { "/api/v1", "namespaces", "v1", "NamespaceList" },
    { "/apis/kueue.x-k8s.io/v1beta2", "admissionchecks", "kueue.x-k8s.io/v1beta2",
      "AdmissionCheckList" },
    { "/apis/kueue.x-k8s.io/v1beta2", "workloads", "kueue.x-k8s.io/v1beta2", "WorkloadList" },
    { "/apis/batch/v1", "jobs", "batch/v1", "JobList" },
    { "/api/v1", "pods", "v1", "PodList" },
    { "/api/v1", "nodes", "v1", "NodeList" },
};

/* ---------------- the fake API server ---------------- */

#define MAXCONN 64

typedef struct sreq { /* one recorded request */
    char *method, *path, *ctype, *body;
    json_object *j; /* body parsed, NULL when none or not JSON */
    int status;     /* what the fake answered (0: not yet) */
    double t, ta;   /* when it arrived, when it was answered (s, monotonic) */
} sreq;

typedef struct fault {
    const char *method, *path; /* exact method; path: substring of the request path */
    int status, times;         /* times < 0: until cleared */
    int retry_after_s;         /* > 0: a Retry-After header */
} fault;

typedef struct delay {
    const char *path; /* a non-watch GET whose path (no query) equals this */
    int ms, times;
    const char *method; /* NULL: a GET held before it is served; else a
                         * request of this method served at once (the
                         * store changes, watches see it) whose answer is
                         * held: a write applied whose reply is slow */
} delay;

typedef struct obj {
    char *key;
    json_object *o;
} obj;

typedef struct evlog {
    long rv;
    char *line; /* {"type":..,"object":..} */
} evlog;

typedef struct conn {
    int fd;
    char *in;
    size_t len, cap;
    int watch;       /* resource watched + 1, 0: none */
    double due;      /* > 0: a delayed request waits until then */
    size_t held_len; /* its length in `in` */
    int held_req;    /* its index in the record */
    int capture;     /* answers go to out, not to the socket */
    size_t late_req; /* the request whose answer out holds */
    char *out;       /* an answer held until due */
    size_t outlen;
} conn;

typedef struct srv {
    int lfd, port;
    conn c[MAXCONN];
    int nc;
    obj *objs[NRES];
    size_t nobjs[NRES];
    evlog *ev[NRES];
    size_t nev[NRES];
    long rv;
    sreq *reqs;
    size_t nreqs, capreqs;
    fault faults[8];
    int nfaults;
    delay delays[4];
    int ndelays;
    long uid_seq;
    /* watch events of resource r from held[r] - 1 on are kept back (in
     * order) until srv_release: a watch that lags behind the writes */
    size_t held[NRES];
} srv;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *xstrdup(const char *s)
{
    char *p = strdup(s ? s : "");
    assert_non_null(p);
    return p;
}

static json_object *jget(json_object *o, const char *k)
{
    json_object *v = NULL;
    if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, k, &v))
        return NULL;
    return v;
}

/* The value at a dotted path ("status.admission.clusterQueue"); a numeric
 * component indexes an array. NULL when absent. */
static json_object *jpath(json_object *o, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", path);
    char *save = NULL;
    for (char *t = strtok_r(buf, ".", &save); t && o; t = strtok_r(NULL, ".", &save)) {
        if (json_object_is_type(o, json_type_array) && *t >= '0' && *t <= '9') {
            size_t i = (size_t)strtoul(t, NULL, 10);
            o = i < json_object_array_length(o) ? json_object_array_get_idx(o, i) : NULL;
        } else {
            o = jget(o, t);
        }
    }
    return o;
}

static const char *jstrp(json_object *o, const char *path)
{
    json_object *v = jpath(o, path);
    return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static json_object *parse_json(const char *s)
{
    json_object *o = cu_json_parse_str(s); /* as deep as an API server serves */
    if (!o)
        fail_msg("fixture is not JSON: %s", s);
    return o;
}

/* RFC 7386: patch merged into target (taken); returns the result. */
static json_object *merge_patch(json_object *target, json_object *patch)
{
    if (!json_object_is_type(patch, json_type_object)) {
        json_object_put(target);
        return json_object_get(patch);
    }
    if (!json_object_is_type(target, json_type_object)) {
        json_object_put(target);
        target = json_object_new_object();
    }
    json_object_object_foreach (patch, k, v) {
        if (!v) {
            json_object_object_del(target, k);
            continue;
        }
        json_object *cur = jget(target, k);
        json_object *n = merge_patch(cur ? json_object_get(cur) : NULL, v);
        json_object_object_add(target, k, n);
    }
    return target;
}

static void srv_close_conn(srv *s, int i)
{
    close(s->c[i].fd);
    free(s->c[i].in);
    free(s->c[i].out);
    s->c[i] = s->c[--s->nc];
}

static void srv_free(srv *s)
{
    if (!s)
        return;
    while (s->nc)
        srv_close_conn(s, 0);
    if (s->lfd >= 0)
        close(s->lfd);
    for (int r = 0; r < NRES; r++) {
        for (size_t i = 0; i < s->nobjs[r]; i++) {
            free(s->objs[r][i].key);
            json_object_put(s->objs[r][i].o);
        }
        free(s->objs[r]);
        for (size_t i = 0; i < s->nev[r]; i++)
            free(s->ev[r][i].line);
        free(s->ev[r]);
    }
    for (size_t i = 0; i < s->nreqs; i++) {
        free(s->reqs[i].method);
        free(s->reqs[i].path);
        free(s->reqs[i].ctype);
        free(s->reqs[i].body);
        json_object_put(s->reqs[i].j);
    }
    free(s->reqs);
    free(s);
}

static srv *srv_new(void)
{
    srv *s = calloc(1, sizeof(*s));
    assert_non_null(s);
    s->rv = 100;
    s->lfd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(s->lfd >= 0);
    int one = 1;
    setsockopt(s->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    struct sockaddr_in a = { 0 };
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(s->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(listen(s->lfd, 64), 0);
    socklen_t l = sizeof(a);
    assert_int_equal(getsockname(s->lfd, (struct sockaddr *)&a, &l), 0);
    s->port = ntohs(a.sin_port);
    fcntl(s->lfd, F_SETFD, FD_CLOEXEC);
    return s;
}

static int send_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static const char *reason_phrase(int code)
{
    switch (code) {
    case 200: return "OK";
    case 201: return "Created";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 409: return "Conflict";
    case 422: return "Unprocessable Entity";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    default: return "Status";
    }
}

static void respond(conn *c, int code, const char *body, int retry_after_s)
{
    char head[512];
    char ra[64] = "";
    if (retry_after_s > 0)
        snprintf(ra, sizeof(ra), "Retry-After: %d\r\n", retry_after_s);
    size_t bl = strlen(body);
    int n = snprintf(head, sizeof(head),
                     "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
                     "Content-Length: %zu\r\n%s\r\n",
                     code, reason_phrase(code), bl, ra);
    if (c->capture) {
        char *o = realloc(c->out, c->outlen + (size_t)n + bl);
        assert_non_null(o);
        memcpy(o + c->outlen, head, (size_t)n);
        memcpy(o + c->outlen + (size_t)n, body, bl);
        c->out = o;
        c->outlen += (size_t)n + bl;
        return;
    }
    if (send_all(c->fd, head, (size_t)n) == 0)
        send_all(c->fd, body, bl);
}

static void respond_status(conn *c, int code, const char *reason, const char *msg,
                           int retry_after_s)
{
    char b[1024];
    snprintf(b, sizeof(b),
             "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
             "\"message\":\"%s\",\"reason\":\"%s\",\"code\":%d}",
             msg, reason, code);
    respond(c, code, b, retry_after_s);
}

static void respond_obj(conn *c, int code, json_object *o)
{
    respond(c, code, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN), 0);
}

static obj *store_find(srv *s, int r, const char *key)
{
    for (size_t i = 0; i < s->nobjs[r]; i++)
        if (strcmp(s->objs[r][i].key, key) == 0)
            return &s->objs[r][i];
    return NULL;
}

static void obj_key(json_object *o, char *out, size_t n)
{
    const char *ns = jstrp(o, "metadata.namespace"), *name = jstrp(o, "metadata.name");
    if (ns && *ns)
        snprintf(out, n, "%s/%s", ns, name ? name : "");
    else
        snprintf(out, n, "%s", name ? name : "");
}

static void set_rv(json_object *o, long rv)
{
    char b[32];
    snprintf(b, sizeof(b), "%ld", rv);
    json_object *md = jget(o, "metadata");
    if (!md) {
        md = json_object_new_object();
        json_object_object_add(o, "metadata", md);
    }
    json_object_object_add(md, "resourceVersion", json_object_new_string(b));
}

/* Sends one chunk with an event line to a watching connection. */
static void send_event(conn *c, const char *line)
{
    char head[32];
    size_t l = strlen(line);
    int n = snprintf(head, sizeof(head), "%zx\r\n", l + 1);
    if (send_all(c->fd, head, (size_t)n) == 0 && send_all(c->fd, line, l) == 0)
        send_all(c->fd, "\n\r\n", 3);
}

/* Records an event for resource r at the store's current rv and pushes it
 * to the open watches of r. */
static void push_event(srv *s, int r, const char *type, json_object *o)
{
    json_object *e = json_object_new_object();
    json_object_object_add(e, "type", json_object_new_string(type));
    json_object_object_add(e, "object", json_object_get(o));
    evlog *n = realloc(s->ev[r], (s->nev[r] + 1) * sizeof(*n));
    assert_non_null(n);
    s->ev[r] = n;
    n[s->nev[r]].rv = s->rv;
    n[s->nev[r]].line = xstrdup(json_object_to_json_string_ext(e, JSON_C_TO_STRING_PLAIN));
    json_object_put(e);
    const char *line = n[s->nev[r]].line;
    s->nev[r]++;
    if (s->held[r])
        return;
    for (int i = 0; i < s->nc; i++)
        if (s->c[i].watch == r + 1)
            send_event(&s->c[i], line);
}

/* Holds back the watch events of r from now on (see srv.held). */
static void srv_hold(srv *s, int r) { s->held[r] = s->nev[r] + 1; }

/* Sends the first n (all: (size_t)-1) events of r held back since
 * srv_hold, in order; the rest stay held. */
static void srv_release(srv *s, int r, size_t n)
{
    size_t from = s->held[r] - 1, k;
    for (k = from; k < s->nev[r] && k - from < n; k++)
        for (int i = 0; i < s->nc; i++)
            if (s->c[i].watch == r + 1)
                send_event(&s->c[i], s->ev[r][k].line);
    s->held[r] = k < s->nev[r] ? k + 1 : 0;
}

/* Adds a fixture object (JSON text) with the next resourceVersion; an
 * ADDED event when watches may see it. Returns its resourceVersion. */
static long srv_add(srv *s, int r, const char *json)
{
    json_object *o = parse_json(json);
    char key[600];
    obj_key(o, key, sizeof(key));
    assert_null(store_find(s, r, key));
    set_rv(o, ++s->rv);
    obj *n = realloc(s->objs[r], (s->nobjs[r] + 1) * sizeof(*n));
    assert_non_null(n);
    s->objs[r] = n;
    n[s->nobjs[r]].key = xstrdup(key);
    n[s->nobjs[r]].o = o;
    s->nobjs[r]++;
    push_event(s, r, "ADDED", o);
    return s->rv;
}

/* Changes a stored object by a merge patch (JSON text), as someone else
 * would; with push, the watches get a MODIFIED event, without it the
 * change is silent (its event "not delivered yet"). Returns the new rv. */
static long srv_update(srv *s, int r, const char *key, const char *patch, int push)
{
    obj *x = store_find(s, r, key);
    if (!x)
        fail_msg("srv_update: no %s %s", res_tab[r].plural, key);
    json_object *p = parse_json(patch);
    x->o = merge_patch(x->o, p);
    json_object_put(p);
    set_rv(x->o, ++s->rv);
    if (push)
        push_event(s, r, "MODIFIED", x->o);
    return s->rv;
}

/* Pushes the current state of a stored object as MODIFIED. */
static void srv_push(srv *s, int r, const char *key)
{
    obj *x = store_find(s, r, key);
    if (!x)
        fail_msg("srv_push: no %s %s", res_tab[r].plural, key);
    push_event(s, r, "MODIFIED", x->o);
}

static void srv_fault(srv *s, const char *method, const char *path, int status, int times,
                      int retry_after_s)
{
    assert_true(s->nfaults < 8);
    s->faults[s->nfaults++] = (fault){ method, path, status, times, retry_after_s };
}

static void srv_clear_faults(srv *s) { s->nfaults = 0; }

/* Splits path (no query) into resource, namespace, name, subresource.
 * Returns the resource index, R_OTHER when not one of ours. */
static int route(const char *path, char *ns, char *name, char *sub)
{
    ns[0] = name[0] = sub[0] = '\0';
    for (int r = 0; r < NRES; r++) {
        size_t pl = strlen(res_tab[r].prefix);
        if (strncmp(path, res_tab[r].prefix, pl) != 0 || path[pl] != '/')
            continue;
        char buf[1024], *tok[8];
        int nt = 0;
        snprintf(buf, sizeof(buf), "%s", path + pl + 1);
        char *save = NULL;
        for (char *t = strtok_r(buf, "/", &save); t && nt < 8; t = strtok_r(NULL, "/", &save))
            tok[nt++] = t;
        int k = 0;
        if (nt >= 3 && strcmp(tok[0], "namespaces") == 0 && r != R_NS) {
            snprintf(ns, 256, "%s", tok[1]);
            k = 2;
        }
        if (k >= nt || strcmp(tok[k], res_tab[r].plural) != 0 ||
            (r == R_NS && nt >= 3 && strcmp(tok[2], "status") != 0)) {
            /* not this resource (for /api/v1/namespaces/NS/KIND: another kind) */
            ns[0] = '\0';
            continue;
        }
        if (k + 1 < nt)
            snprintf(name, 256, "%s", tok[k + 1]);
        if (k + 2 < nt)
            snprintf(sub, 64, "%s", tok[k + 2]);
        return r;
    }
    return R_OTHER;
}

static void serve_list(srv *s, conn *c, int r)
{
    json_object *l = json_object_new_object(), *items = json_object_new_array();
    json_object_object_add(l, "kind", json_object_new_string(res_tab[r].list_kind));
    json_object_object_add(l, "apiVersion", json_object_new_string(res_tab[r].api_version));
    json_object *md = json_object_new_object();
    char b[32];
    snprintf(b, sizeof(b), "%ld", s->rv);
    json_object_object_add(md, "resourceVersion", json_object_new_string(b));
    json_object_object_add(l, "metadata", md);
    for (size_t i = 0; i < s->nobjs[r]; i++)
        json_object_array_add(items, json_object_get(s->objs[r][i].o));
    json_object_object_add(l, "items", items);
    respond_obj(c, 200, l);
    json_object_put(l);
}

static void serve_watch(srv *s, conn *c, int r, const char *query)
{
    const char *p = strstr(query, "resourceVersion=");
    long from = p ? strtol(p + 16, NULL, 10) : s->rv;
    static const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                               "Transfer-Encoding: chunked\r\n\r\n";
    send_all(c->fd, head, sizeof(head) - 1);
    c->watch = r + 1;
    for (size_t i = 0; i < s->nev[r]; i++)
        if (s->ev[r][i].rv > from)
            send_event(c, s->ev[r][i].line);
}

/* 1 when merge patch p of Job job changes its template's nodeSelector or
 * tolerations while kube-apiserver would refuse it: unless the Job is
 * suspended and has no status.startTime, those fields are immutable. */
static int job_sched_locked(json_object *job, json_object *p)
{
    if (!jpath(p, "spec.template.spec"))
        return 0;
    json_object *after = NULL;
    json_object_deep_copy(job, &after, NULL);
    after = merge_patch(after, p);
    int changed = !json_object_equal(jpath(job, "spec.template.spec.nodeSelector"),
                                     jpath(after, "spec.template.spec.nodeSelector")) ||
                  !json_object_equal(jpath(job, "spec.template.spec.tolerations"),
                                     jpath(after, "spec.template.spec.tolerations"));
    json_object_put(after);
    json_object *susp = jpath(job, "spec.suspend");
    int suspended = susp && json_object_get_boolean(susp);
    return changed && (!suspended || jpath(job, "status.startTime") != NULL);
}

/* A write to the store: POST (create), PATCH (merge patch; /status only
 * changes status, the main resource everything but status; a Job's
 * scheduling directives as kube-apiserver allows, job_sched_locked),
 * DELETE. */
static int serve_write(srv *s, conn *c, sreq *q, int r, const char *ns, const char *name,
                       const char *sub)
{
    json_object *body = q->j;
    if (strcmp(q->method, "POST") == 0 && !name[0]) {
        if (!json_object_is_type(body, json_type_object)) {
            respond_status(c, 400, "BadRequest", "body is not an object", 0);
            return 400;
        }
        json_object *o = NULL;
        json_object_deep_copy(body, &o, NULL);
        json_object *md = jget(o, "metadata");
        if (ns[0] && md)
            json_object_object_add(md, "namespace", json_object_new_string(ns));
        char key[600];
        obj_key(o, key, sizeof(key));
        if (store_find(s, r, key)) {
            json_object_put(o);
            respond_status(c, 409, "AlreadyExists", "already exists", 0);
            return 409;
        }
        char uid[64];
        snprintf(uid, sizeof(uid), "uid-%ld", ++s->uid_seq);
        if (md && !jget(md, "uid"))
            json_object_object_add(md, "uid", json_object_new_string(uid));
        if (md && !jget(md, "creationTimestamp")) {
            char ts[40];
            time_t t = time(NULL);
            struct tm tm;
            gmtime_r(&t, &tm);
            strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
            json_object_object_add(md, "creationTimestamp", json_object_new_string(ts));
        }
        set_rv(o, ++s->rv);
        obj *n = realloc(s->objs[r], (s->nobjs[r] + 1) * sizeof(*n));
        assert_non_null(n);
        s->objs[r] = n;
        n[s->nobjs[r]].key = xstrdup(key);
        n[s->nobjs[r]].o = o;
        s->nobjs[r]++;
        respond_obj(c, 201, o);
        push_event(s, r, "ADDED", o);
        return 201;
    }
    char key[600];
    if (ns[0])
        snprintf(key, sizeof(key), "%s/%s", ns, name);
    else
        snprintf(key, sizeof(key), "%s", name);
    obj *x = name[0] ? store_find(s, r, key) : NULL;
    if (!x) {
        respond_status(c, 404, "NotFound", "not found", 0);
        return 404;
    }
    if (strcmp(q->method, "PATCH") == 0) {
        if (!q->ctype || strcmp(q->ctype, "application/merge-patch+json") != 0) {
            respond_status(c, 415, "UnsupportedMediaType", "only merge patches here", 0);
            return 415;
        }
        if (!json_object_is_type(body, json_type_object)) {
            respond_status(c, 400, "BadRequest", "body is not an object", 0);
            return 400;
        }
        const char *prv = jstrp(body, "metadata.resourceVersion");
        const char *crv = jstrp(x->o, "metadata.resourceVersion");
        if (prv && (!crv || strcmp(prv, crv) != 0)) {
            respond_status(c, 409, "Conflict",
                           "the object has been modified; please apply your changes to the "
                           "latest version and try again",
                           0);
            return 409;
        }
        json_object *p = NULL;
        json_object_deep_copy(body, &p, NULL);
        if (jget(p, "metadata"))
            json_object_object_del(jget(p, "metadata"), "resourceVersion");
        if (strcmp(sub, "status") == 0) {
            json_object *only = json_object_new_object();
            if (jget(p, "status"))
                json_object_object_add(only, "status", json_object_get(jget(p, "status")));
            json_object_put(p);
            p = only;
        } else {
            json_object_object_del(p, "status");
            if (r == R_JOB && job_sched_locked(x->o, p)) {
                json_object_put(p);
                respond_status(c, 422, "Invalid",
                               "spec.template: Invalid value: field is immutable", 0);
                return 422;
            }
        }
        x->o = merge_patch(x->o, p);
        json_object_put(p);
        set_rv(x->o, ++s->rv);
        respond_obj(c, 200, x->o);
        push_event(s, r, "MODIFIED", x->o);
        return 200;
    }
    if (strcmp(q->method, "DELETE") == 0) {
        json_object *o = x->o;
        free(x->key);
        *x = s->objs[r][--s->nobjs[r]];
        set_rv(o, ++s->rv);
        respond_obj(c, 200, o);
        push_event(s, r, "DELETED", o);
        json_object_put(o);
        return 200;
    }
    respond_status(c, 405, "MethodNotAllowed", "not served by the fake", 0);
    return 405;
}

/* Handles one complete request (already recorded as s->reqs[qi]). */
static void handle(srv *s, conn *c, size_t qi)
{
    sreq *q = &s->reqs[qi];
    q->ta = now_s();
    char path[1024];
    snprintf(path, sizeof(path), "%s", q->path);
    char *qm = strchr(path, '?');
    const char *query = "";
    if (qm) {
        *qm = '\0';
        query = qm + 1;
    }
    for (int i = 0; i < s->nfaults; i++) {
        fault *f = &s->faults[i];
        if (f->times != 0 && strcmp(f->method, q->method) == 0 && strstr(path, f->path)) {
            if (f->times > 0)
                f->times--;
            q->status = f->status;
            respond_status(c, f->status, f->status == 409 ? "Conflict" : "InternalError",
                           "injected by the test", f->retry_after_s);
            return;
        }
    }
    char ns[256], name[256], sub[64];
    int r = route(path, ns, name, sub);
    int is_get = strcmp(q->method, "GET") == 0;
    if (r == R_OTHER) {
        /* Events and anything else: accepted and echoed */
        if (is_get) {
            q->status = 404;
            respond_status(c, 404, "NotFound", "not served by the fake", 0);
        } else {
            q->status = strcmp(q->method, "POST") == 0 ? 201 : 200;
            respond(c, q->status, q->body && *q->body ? q->body : "{}", 0);
        }
        return;
    }
    if (is_get && !name[0]) {
        int watch = strstr(query, "watch=true") != NULL || strstr(query, "watch=1") != NULL;
        q->status = 200;
        if (watch)
            serve_watch(s, c, r, query);
        else
            serve_list(s, c, r);
        return;
    }
    if (is_get) {
        char key[600];
        snprintf(key, sizeof(key), "%s%s%s", ns, ns[0] ? "/" : "", name);
        obj *x = store_find(s, r, key);
        q->status = x ? 200 : 404;
        if (x)
            respond_obj(c, 200, x->o);
        else
            respond_status(c, 404, "NotFound", "not found", 0);
        return;
    }
    q->status = serve_write(s, c, q, r, ns, name, sub);
}

static char *header_value(const char *head, size_t hl, const char *name)
{
    size_t nl = strlen(name);
    for (const char *p = head; p && p < head + hl;) {
        const char *eol = strstr(p, "\r\n");
        if (!eol || eol > head + hl)
            break;
        if ((size_t)(eol - p) > nl + 1 && strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
            const char *v = p + nl + 1;
            while (*v == ' ')
                v++;
            char *out = malloc((size_t)(eol - v) + 1);
            assert_non_null(out);
            memcpy(out, v, (size_t)(eol - v));
            out[eol - v] = '\0';
            return out;
        }
        p = eol + 2;
    }
    return NULL;
}

/* Parses and records one request at the start of c->in; returns its
 * length, 0 when incomplete, -1 when malformed. */
static long parse_request(srv *s, conn *c, size_t *qi)
{
    char *end = c->len >= 4 ? strstr(c->in, "\r\n\r\n") : NULL;
    if (!end)
        return 0;
    size_t hl = (size_t)(end - c->in) + 4;
    char method[16], target[1024];
    if (sscanf(c->in, "%15s %1023s HTTP/1.1", method, target) != 2)
        return -1;
    char *cl = header_value(c->in, hl, "Content-Length");
    char *te = header_value(c->in, hl, "Transfer-Encoding");
    size_t blen = cl ? (size_t)strtoul(cl, NULL, 10) : 0;
    free(cl);
    if (te) {
        free(te);
        fail_msg("the fake does not read chunked request bodies (%s %s)", method, target);
    }
    if (c->len < hl + blen)
        return 0;
    if (s->nreqs == s->capreqs) {
        s->capreqs = s->capreqs ? s->capreqs * 2 : 64;
        s->reqs = realloc(s->reqs, s->capreqs * sizeof(*s->reqs));
        assert_non_null(s->reqs);
    }
    sreq *q = &s->reqs[s->nreqs];
    memset(q, 0, sizeof(*q));
    q->method = xstrdup(method);
    q->path = xstrdup(target);
    q->ctype = header_value(c->in, hl, "Content-Type");
    q->body = malloc(blen + 1);
    assert_non_null(q->body);
    memcpy(q->body, c->in + hl, blen);
    q->body[blen] = '\0';
    q->j = blen ? cu_json_parse_str(q->body) : NULL;
    q->t = now_s();
    *qi = s->nreqs++;
    return (long)(hl + blen);
}

static void consume(conn *c, size_t n)
{
    memmove(c->in, c->in + n, c->len - n + 1); /* and the NUL */
    c->len -= n;
}

/* The delay (ms) scripted for this request, 0 when none; *late is set
 * when only its answer is held. */
static int delay_for(srv *s, const sreq *q, int *late)
{
    *late = 0;
    if (strstr(q->path, "watch="))
        return 0;
    size_t pl = strcspn(q->path, "?");
    for (int i = 0; i < s->ndelays; i++) {
        delay *d = &s->delays[i];
        const char *m = d->method ? d->method : "GET";
        if (d->times > 0 && strcmp(q->method, m) == 0 && strlen(d->path) == pl &&
            strncmp(q->path, d->path, pl) == 0) {
            d->times--;
            *late = d->method != NULL;
            return d->ms;
        }
    }
    return 0;
}

/* Handles what complete requests c holds (none while one is delayed). */
static int conn_process(srv *s, conn *c)
{
    while (c->due == 0 && !c->watch) {
        size_t qi = 0;
        long n = parse_request(s, c, &qi);
        if (n < 0)
            return -1;
        if (n == 0)
            return 0;
        int late;
        int ms = delay_for(s, &s->reqs[qi], &late);
        if (ms > 0 && late) {
            /* served now, answered at due */
            c->capture = 1;
            handle(s, c, qi);
            c->capture = 0;
            consume(c, (size_t)n);
            c->due = now_s() + ms / 1000.0;
            c->held_req = -1;
            c->late_req = qi;
            return 0;
        }
        if (ms > 0) {
            c->due = now_s() + ms / 1000.0;
            c->held_len = (size_t)n;
            c->held_req = (int)qi;
            return 0;
        }
        handle(s, c, qi);
        consume(c, (size_t)n);
    }
    return 0;
}

/* Serves for up to ms milliseconds (returns early after any activity). */
static void srv_step(srv *s, int ms)
{
    struct pollfd p[MAXCONN + 1];
    double t = now_s();
    for (int i = 0; i < s->nc; i++)
        if (s->c[i].due > 0) {
            int left = (int)((s->c[i].due - t) * 1000) + 1;
            if (left < ms)
                ms = left < 0 ? 0 : left;
        }
    p[0].fd = s->lfd;
    p[0].events = POLLIN;
    for (int i = 0; i < s->nc; i++) {
        p[i + 1].fd = s->c[i].fd;
        p[i + 1].events = POLLIN;
    }
    int nfds = s->nc + 1;
    int rc = poll(p, (nfds_t)nfds, ms);
    if (rc < 0 && errno != EINTR)
        fail_msg("poll: %s", strerror(errno));
    /* delayed requests that are due */
    t = now_s();
    for (int i = 0; i < s->nc; i++) {
        conn *c = &s->c[i];
        if (c->due > 0 && t >= c->due) {
            c->due = 0;
            if (c->held_req < 0) {
                s->reqs[c->late_req].ta = t;
                send_all(c->fd, c->out, c->outlen);
                free(c->out);
                c->out = NULL;
                c->outlen = 0;
            } else {
                handle(s, c, (size_t)c->held_req);
                consume(c, c->held_len);
            }
            conn_process(s, c);
        }
    }
    if (rc <= 0)
        return;
    /* connections first (indices stay valid while we walk backwards) */
    for (int i = nfds - 2; i >= 0; i--) {
        if (!(p[i + 1].revents & (POLLIN | POLLHUP | POLLERR)))
            continue;
        conn *c = &s->c[i];
        if (c->len + 65536 > c->cap) {
            c->cap = c->len + 65536;
            c->in = realloc(c->in, c->cap);
            assert_non_null(c->in);
        }
        ssize_t n = recv(c->fd, c->in + c->len, c->cap - c->len - 1, 0);
        if (n <= 0) {
            if (n < 0 && (errno == EINTR || errno == EAGAIN))
                continue;
            srv_close_conn(s, i);
            continue;
        }
        c->len += (size_t)n;
        c->in[c->len] = '\0'; /* the parser reads text */
        if (conn_process(s, c) != 0)
            srv_close_conn(s, i);
    }
    if (p[0].revents & POLLIN) {
        int fd = accept(s->lfd, NULL, NULL);
        if (fd >= 0) {
            if (s->nc == MAXCONN)
                fail_msg("the fake server ran out of connection slots");
            fcntl(fd, F_SETFD, FD_CLOEXEC);
            memset(&s->c[s->nc], 0, sizeof(s->c[s->nc]));
            s->c[s->nc++].fd = fd;
        }
    }
}

/* ---------------- the controller, forked ---------------- */

typedef struct fx {
    srv *s;
    pid_t pid;
    char dir[256], kc[300], log[300];
    char cfg[300]; /* a Configuration file for the controller, "" for none */
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof(*f));
    if (!f)
        return -1;
    snprintf(f->dir, sizeof(f->dir), "/tmp/cu_test_controller.XXXXXX");
    if (!mkdtemp(f->dir)) {
        free(f);
        return -1;
    }
    snprintf(f->kc, sizeof(f->kc), "%s/kubeconfig", f->dir);
    snprintf(f->log, sizeof(f->log), "%s/controller.log", f->dir);
    f->s = srv_new();
    *state = f;
    return 0;
}

static void dump(fx *f)
{
    fprintf(stderr, "---- requests the fake server saw ----\n");
    for (size_t i = 0; i < f->s->nreqs; i++) {
        sreq *q = &f->s->reqs[i];
        if (strcmp(q->method, "GET") == 0 && !strstr(q->path, "watch="))
            fprintf(stderr, "%3zu %d %s %s\n", i, q->status, q->method, q->path);
        else if (strcmp(q->method, "GET") != 0 && !strstr(q->path, "/events"))
            fprintf(stderr, "%3zu %d %s %s %.600s\n", i, q->status, q->method, q->path, q->body);
    }
    fprintf(stderr, "---- controller log ----\n");
    FILE *l = fopen(f->log, "r");
    char line[2048];
    while (l && fgets(line, sizeof(line), l))
        fputs(line, stderr);
    if (l)
        fclose(l);
}

#define EQS(f, o, path, want) \
    do { \
        const char *got_ = jstrp(o, path); \
        if (!got_ || strcmp(got_, want) != 0) { \
            dump(f); \
            fail_msg("%s: \"%s\", want \"%s\"", path, got_ ? got_ : "(absent)", want); \
        } \
    } while (0)

#define CHECK(f, cond, ...) \
    do { \
        if (!(cond)) { \
            dump(f); \
            fail_msg(__VA_ARGS__); \
        } \
    } while (0)

/* Serves until the controller exits (after SIGTERM), at most 8 s. */
static int reap_child(fx *f)
{
    double end = now_s() + 8;
    int st = 0;
    for (;;) {
        pid_t w = waitpid(f->pid, &st, WNOHANG);
        if (w == f->pid)
            break;
        if (now_s() > end) {
            kill(f->pid, SIGKILL);
            waitpid(f->pid, &st, 0);
            f->pid = 0;
            return -2;
        }
        srv_step(f->s, 10);
    }
    f->pid = 0;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int teardown(void **state)
{
    fx *f = *state;
    if (f->pid > 0) {
        kill(f->pid, SIGTERM);
        reap_child(f);
    }
    srv_free(f->s);
    unlink(f->kc);
    unlink(f->log);
    rmdir(f->dir);
    free(f);
    return 0;
}

/* Starts the controller against the fake. */
static void start(fx *f)
{
    FILE *k = fopen(f->kc, "w");
    assert_non_null(k);
    fprintf(k,
            "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster: {server: "
            "'http://127.0.0.1:%d'}\ncontexts:\n- name: fake\n  context: {cluster: fake}\n"
            "current-context: fake\n",
            f->s->port);
    fclose(k);
    fflush(stdout);
    fflush(stderr);
    pid_t parent = getpid();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* a crashed test must not leave a controller behind */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent)
            exit(3);
        int lfd = open(f->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (lfd >= 0) {
            dup2(lfd, 2);
            dup2(lfd, 1);
            close(lfd);
        }
        char kc[300];
        snprintf(kc, sizeof(kc), "%s", f->kc);
        srv_free(f->s); /* the child serves nothing; its copy is closed and freed */
        f->s = NULL;
        /* no webhook server: its certificate Secret is not what these
         * tests count (test_whreview.c and e2e/controller-webhooks.sh) */
        char cfg[300];
        snprintf(cfg, sizeof(cfg), "%s", f->cfg);
        char *argv[] = { "controller", "--kubeconfig",
                         kc,           "--health-probe-bind-address",
                         "0",          "--metrics-bind-address",
                         "0",          "--webhook-bind-address",
                         "0",          "-v",
                         "3",          "--config",
                         cfg,          NULL };
        int argc = (int)(sizeof(argv) / sizeof(argv[0])) - 1;
        if (!*cfg)
            argc -= 2;
        int rc = cu_controller_main(argc, argv);
        exit(rc);
    }
    f->pid = pid;
}

/* Stops the controller with SIGTERM (serving its last writes) and checks
 * it exits 0. */
static void stop(fx *f)
{
    assert_true(f->pid > 0);
    kill(f->pid, SIGTERM);
    int rc = reap_child(f);
    CHECK(f, rc == 0, "the controller exited with %d after SIGTERM (want 0)", rc);
}

/* ---------------- looking at what was sent ---------------- */

typedef int (*req_pred)(const sreq *q, const void *ud);

/* The index of the first recorded request at or after from that matches,
 * serving for up to timeout_ms while none has; -1 on timeout. */
static long wait_req(fx *f, size_t from, req_pred p, const void *ud, int timeout_ms)
{
    double end = now_s() + timeout_ms / 1000.0;
    for (;;) {
        for (size_t i = from; i < f->s->nreqs; i++)
            if (f->s->reqs[i].status && p(&f->s->reqs[i], ud))
                return (long)i;
        if (now_s() >= end)
            return -1;
        int st;
        if (waitpid(f->pid, &st, WNOHANG) == f->pid) {
            f->pid = 0;
            dump(f);
            fail_msg("the controller exited early (status %d)", st);
        }
        srv_step(f->s, 20);
    }
}

/* Serves for ms milliseconds. */
static void serve_for(fx *f, int ms)
{
    double end = now_s() + ms / 1000.0;
    while (now_s() < end)
        srv_step(f->s, 20);
}

static size_t count_req(fx *f, size_t from, size_t to, req_pred p, const void *ud)
{
    size_t n = 0;
    for (size_t i = from; i < to && i < f->s->nreqs; i++)
        n += p(&f->s->reqs[i], ud) != 0;
    return n;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* The condition of type in a Workload/patch body, NULL when absent. */
static json_object *cond(json_object *o, const char *type)
{
    json_object *cs = jpath(o, "status.conditions");
    size_t n = json_object_is_type(cs, json_type_array) ? json_object_array_length(cs) : 0;
    for (size_t i = 0; i < n; i++) {
        json_object *k = json_object_array_get_idx(cs, i);
        const char *t = jstrp(k, "type");
        if (t && strcmp(t, type) == 0)
            return k;
    }
    return NULL;
}

static const char WLS[] = "/apis/kueue.x-k8s.io/v1beta2/namespaces/";

/* ud: the Workload's name (NULL: any). A merge patch of the Workload's
 * /status with a status.admission. */
static int is_admission(const sreq *q, const void *ud)
{
    const char *name = ud;
    char suffix[300];
    snprintf(suffix, sizeof(suffix), "/workloads/%s/status", name ? name : "");
    return strcmp(q->method, "PATCH") == 0 && strncmp(q->path, WLS, strlen(WLS)) == 0 &&
           (name ? ends_with(q->path, suffix)
                 : strstr(q->path, "/workloads/") && ends_with(q->path, "/status")) &&
           json_object_is_type(jpath(q->j, "status.admission"), json_type_object);
}

/* ud: the Workload's name. A /status patch with QuotaReserved=False. */
static int is_pending_write(const sreq *q, const void *ud)
{
    char suffix[300];
    snprintf(suffix, sizeof(suffix), "/workloads/%s/status", (const char *)ud);
    const char *st = jstrp(cond(q->j, "QuotaReserved"), "status");
    return strcmp(q->method, "PATCH") == 0 && ends_with(q->path, suffix) && st &&
           strcmp(st, "False") == 0;
}

/* ud: "ns/name" of the Job. A patch of the Job with spec.suspend=false. */
static int is_job_start(const sreq *q, const void *ud)
{
    const char *key = ud, *sl = strchr(key, '/');
    char path[600];
    snprintf(path, sizeof(path), "/apis/batch/v1/namespaces/%.*s/jobs/%s", (int)(sl - key), key,
             sl + 1);
    json_object *s = jpath(q->j, "spec.suspend");
    return strcmp(q->method, "PATCH") == 0 && strcmp(q->path, path) == 0 &&
           json_object_is_type(s, json_type_boolean) && !json_object_get_boolean(s);
}

/* ud: a path. A POST to it. */
static int is_post_to(const sreq *q, const void *ud)
{
    return strcmp(q->method, "POST") == 0 && strcmp(q->path, ud) == 0;
}

/* ---------------- fixtures ---------------- */

/* One flavor f1 (nodeLabels pool=p1), ClusterQueue cq with 4 cpu of it
 * (and the members of cq_spec, "" for none, in its spec), LocalQueue
 * team/lq, Namespace team. */
static void base_world_cq(srv *s, const char *cq_spec)
{
    srv_add(s, R_RF,
            "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ResourceFlavor\","
            "\"metadata\":{\"name\":\"f1\",\"uid\":\"rf-1\"},"
            "\"spec\":{\"nodeLabels\":{\"pool\":\"p1\"}}}");
    char cq[1024];
    snprintf(cq, sizeof(cq),
             "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ClusterQueue\","
             "\"metadata\":{\"name\":\"cq\",\"uid\":\"cq-1\"},\"spec\":{%s"
             "\"namespaceSelector\":{},\"resourceGroups\":[{\"coveredResources\":[\"cpu\"],"
             "\"flavors\":[{\"name\":\"f1\",\"resources\":[{\"name\":\"cpu\","
             "\"nominalQuota\":\"4\"}]}]}]}}",
             cq_spec);
    srv_add(s, R_CQ, cq);
    srv_add(s, R_LQ,
            "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"LocalQueue\","
            "\"metadata\":{\"name\":\"lq\",\"namespace\":\"team\",\"uid\":\"lq-1\"},"
            "\"spec\":{\"clusterQueue\":\"cq\"}}");
    srv_add(s, R_NS,
            "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":"
            "\"team\",\"uid\":\"ns-1\",\"labels\":{\"kubernetes.io/metadata.name\":"
            "\"team\"}}}");
}

static void base_world(srv *s) { base_world_cq(s, ""); }

/* Gives Workload KEY the status of an admission to base_world's cq (4 cpu
 * of f1): QuotaReserved and Admitted at 00:05 and, when evicted,
 * Evicted=True (Preempted) at 00:09. push as in srv_update. */
static long set_admitted(srv *s, const char *key, int evicted, int push)
{
    char b[2048];
    snprintf(b, sizeof(b),
             "{\"status\":{\"admission\":{\"clusterQueue\":\"cq\",\"podSetAssignments\":[{"
             "\"name\":\"main\",\"count\":1,\"flavors\":{\"cpu\":\"f1\"},\"resourceUsage\":"
             "{\"cpu\":\"4\"}}]},\"conditions\":[{\"type\":\"QuotaReserved\",\"status\":"
             "\"True\",\"reason\":\"QuotaReserved\",\"message\":\"Quota reserved in "
             "ClusterQueue cq\",\"lastTransitionTime\":\"2025-01-01T00:00:05Z\"},{\"type\":"
             "\"Admitted\",\"status\":\"True\",\"reason\":\"Admitted\",\"message\":\"The "
             "workload is admitted\",\"lastTransitionTime\":\"2025-01-01T00:00:05Z\"}%s]}}",
             evicted ? ",{\"type\":\"Evicted\",\"status\":\"True\",\"reason\":\"Preempted\","
                       "\"message\":\"Preempted to accommodate a workload\","
                       "\"lastTransitionTime\":\"2025-01-01T00:00:09Z\"}"
                     : "");
    return srv_update(s, R_WL, key, b, push);
}

/* A pending Workload team/NAME in queue QUEUE asking for CPU cpu; owner:
 * a Job name (its uid "job-uid") or NULL. */
static long add_workload(srv *s, const char *name, const char *queue, const char *cpu,
                         const char *owner, int seq)
{
    char own[400] = "";
    if (owner)
        snprintf(own, sizeof(own),
                 ",\"ownerReferences\":[{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\","
                 "\"name\":\"%s\",\"uid\":\"job-uid\",\"controller\":true,"
                 "\"blockOwnerDeletion\":true}]",
                 owner);
    char b[2048];
    snprintf(b, sizeof(b),
             "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Workload\",\"metadata\":{"
             "\"name\":\"%s\",\"namespace\":\"team\",\"uid\":\"wl-%s\","
             "\"creationTimestamp\":\"2025-01-01T00:00:%02dZ\"%s},"
             "\"spec\":{\"queueName\":\"%s\",\"active\":true,\"podSets\":[{\"name\":\"main\","
             "\"count\":1,\"template\":{\"spec\":{\"nodeSelector\":{\"disk\":\"ssd\"},"
             "\"containers\":[{\"name\":\"c\",\"image\":\"busybox\",\"resources\":{\"requests\":"
             "{\"cpu\":\"%s\"}}}]}}}]}}",
             name, name, seq, own, queue, cpu);
    return srv_add(s, R_WL, b);
}

/* The Job the Workload names refer to: team/sample-job, uid as given
 * (Kueue's Workload name for it with uid
 * a1b2c3d4-0000-4000-8000-000000000001 is job-sample-job-57a5d:
 * printf 'Job\nbatch\nsample-job\na1b2c3d4-0000-4000-8000-000000000001'
 * | sha1sum starts 57a5d). */
#define JOB_UID "a1b2c3d4-0000-4000-8000-000000000001"
#define JOB_WL "job-sample-job-57a5d"

static void add_job(srv *s, const char *queue)
{
    char b[2048];
    snprintf(b, sizeof(b),
             "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"sample-job\","
             "\"namespace\":\"team\",\"uid\":\"" JOB_UID "\","
             "\"creationTimestamp\":\"2025-01-01T00:00:00Z\","
             "\"labels\":{\"kueue.x-k8s.io/queue-name\":\"%s\"}},"
             "\"spec\":{\"suspend\":true,\"parallelism\":1,\"completions\":1,\"template\":{"
             "\"spec\":{\"nodeSelector\":{\"disk\":\"ssd\"},\"restartPolicy\":\"Never\","
             "\"containers\":[{\"name\":\"c\",\"image\":\"busybox\",\"resources\":{\"requests\":"
             "{\"cpu\":\"4\"}}}]}}},\"status\":{}}",
             queue);
    srv_add(s, R_JOB, b);
}

/* The Workload Kueue would have created for that Job, pending in queue. */
static long add_job_workload(srv *s, const char *queue)
{
    char b[2048];
    snprintf(b, sizeof(b),
             "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Workload\",\"metadata\":{"
             "\"name\":\"" JOB_WL "\",\"namespace\":\"team\",\"uid\":\"wl-job\","
             "\"creationTimestamp\":\"2025-01-01T00:00:00Z\","
             "\"labels\":{\"kueue.x-k8s.io/job-uid\":\"" JOB_UID "\"},"
             "\"ownerReferences\":[{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\","
             "\"name\":\"sample-job\",\"uid\":\"" JOB_UID "\",\"controller\":true,"
             "\"blockOwnerDeletion\":true}]},"
             "\"spec\":{\"queueName\":\"%s\",\"active\":true,\"podSets\":[{\"name\":\"main\","
             "\"count\":1,\"template\":{\"spec\":{\"nodeSelector\":{\"disk\":\"ssd\"},"
             "\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"c\",\"image\":\"busybox\","
             "\"resources\":{\"requests\":{\"cpu\":\"4\"}}}]}}}]}}",
             queue);
    return srv_add(s, R_WL, b);
}

/* ---------------- the tests ---------------- */

/* 1. A suspended Job with the queue-name label and no Workload gets one. */
static void test_creates_workload_for_job(void **state)
{
    fx *f = *state;
    base_world(f->s);
    add_job(f->s, "lq");
    start(f);
    const char *path = "/apis/kueue.x-k8s.io/v1beta2/namespaces/team/workloads";
    long i = wait_req(f, 0, is_post_to, path, 5000);
    CHECK(f, i >= 0, "no POST of a Workload to %s", path);
    sreq *q = &f->s->reqs[i];
    CHECK(f, q->ctype && strcmp(q->ctype, "application/json") == 0, "content type %s",
          q->ctype ? q->ctype : "(none)");
    json_object *b = q->j;
    CHECK(f, b != NULL, "the POST body is not JSON: %s", q->body);
    EQS(f, b, "kind", "Workload");
    EQS(f, b, "apiVersion", "kueue.x-k8s.io/v1beta2");
    EQS(f, b, "metadata.name", JOB_WL);
    EQS(f, b, "metadata.namespace", "team");
    json_object *own = jpath(b, "metadata.ownerReferences");
    CHECK(f, json_object_is_type(own, json_type_array) && json_object_array_length(own) == 1,
          "want one ownerReference: %s", q->body);
    EQS(f, b, "metadata.ownerReferences.0.apiVersion", "batch/v1");
    EQS(f, b, "metadata.ownerReferences.0.kind", "Job");
    EQS(f, b, "metadata.ownerReferences.0.name", "sample-job");
    EQS(f, b, "metadata.ownerReferences.0.uid", JOB_UID);
    json_object *ctl = jpath(b, "metadata.ownerReferences.0.controller");
    assert_true(json_object_is_type(ctl, json_type_boolean) && json_object_get_boolean(ctl));
    EQS(f, b, "spec.queueName", "lq");
    EQS(f, b, "spec.podSets.0.name", "main");
    assert_int_equal(json_object_get_int(jpath(b, "spec.podSets.0.count")), 1);
    EQS(f, b, "spec.podSets.0.template.spec.containers.0.resources.requests.cpu", "4");
    /* one creation, even after the Workload came back through the watch
     * and the controller went on (it admits it and starts the Job) */
    long a = wait_req(f, 0, is_admission, JOB_WL, 5000);
    CHECK(f, a >= 0, "the created Workload was never admitted");
    long s = wait_req(f, 0, is_job_start, "team/sample-job", 5000);
    CHECK(f, s > a, "the Job was not started after its Workload's admission");
    serve_for(f, 300);
    size_t posts = count_req(f, 0, f->s->nreqs, is_post_to, path);
    CHECK(f, posts == 1, "%zu Workload creations, want 1", posts);
    stop(f);
}

/* Plain pods (the pod integration, enabled by the Configuration): a group
 * of 2 gets no Workload while 1 pod exists; once complete, one Workload
 * named after the group with a pod set of 2 and an ownerReference per
 * pod; admitted, both pods are ungated with the flavor's nodeSelector. */
static void add_pod(srv *s, const char *name)
{
    char b[2048];
    snprintf(b, sizeof(b),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"team\",\"uid\":\"uid-%s\","
             "\"creationTimestamp\":\"2025-01-01T00:00:00Z\",\"labels\":{"
             "\"kueue.x-k8s.io/queue-name\":\"lq\",\"kueue.x-k8s.io/managed\":\"true\","
             "\"kueue.x-k8s.io/pod-group-name\":\"grp\"},\"annotations\":{"
             "\"kueue.x-k8s.io/pod-group-total-count\":\"2\"},"
             "\"finalizers\":[\"kueue.x-k8s.io/managed\"]},"
             "\"spec\":{\"schedulingGates\":[{\"name\":\"kueue.x-k8s.io/admission\"}],"
             "\"containers\":[{\"name\":\"c\",\"image\":\"busybox\",\"resources\":{"
             "\"requests\":{\"cpu\":\"1\"}}}]},\"status\":{\"phase\":\"Pending\"}}",
             name, name);
    srv_add(s, R_POD, b);
}

/* 1 when a line of the controller's log holds s. */
static int log_has(const fx *f, const char *s)
{
    FILE *l = fopen(f->log, "r");
    char line[4096];
    int found = 0;
    while (l && !found && fgets(line, sizeof(line), l))
        found = strstr(line, s) != NULL;
    if (l)
        fclose(l);
    return found;
}

/* ud: a pod's path. A PATCH of it. */
static int is_pod_patch(const sreq *q, const void *ud)
{
    return strcmp(q->method, "PATCH") == 0 && strcmp(q->path, (const char *)ud) == 0;
}

static void test_pod_group_admitted_whole(void **state)
{
    fx *f = *state;
    snprintf(f->cfg, sizeof(f->cfg), "%s/config.yaml", f->dir);
    FILE *cf = fopen(f->cfg, "w");
    assert_non_null(cf);
    fputs("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
          "integrations:\n  frameworks: [batch/job, pod]\n",
          cf);
    fclose(cf);
    base_world(f->s);
    add_pod(f->s, "grp-0");
    start(f);
    const char *path = "/apis/kueue.x-k8s.io/v1beta2/namespaces/team/workloads";
    serve_for(f, 800);
    size_t posts = count_req(f, 0, f->s->nreqs, is_post_to, path);
    CHECK(f, posts == 0, "%zu Workloads created for an incomplete group", posts);
    add_pod(f->s, "grp-1");
    long i = wait_req(f, 0, is_post_to, path, 5000);
    CHECK(f, i >= 0, "no Workload created for the complete group");
    json_object *b = f->s->reqs[i].j;
    EQS(f, b, "metadata.name", "grp");
    json_object *ig = NULL;
    json_object_object_get_ex(jpath(b, "metadata.annotations"), "kueue.x-k8s.io/is-group-workload",
                              &ig);
    CHECK(f, ig && strcmp(json_object_get_string(ig), "true") == 0, "no is-group-workload: %s",
          f->s->reqs[i].body);
    CHECK(f, json_object_array_length(jpath(b, "metadata.ownerReferences")) == 2,
          "ownerReferences: %s", f->s->reqs[i].body);
    CHECK(f, json_object_array_length(jpath(b, "spec.podSets")) == 1, "podSets: %s",
          f->s->reqs[i].body);
    assert_int_equal(json_object_get_int(jpath(b, "spec.podSets.0.count")), 2);
    /* the controller admits it (2 of 4 cpu) and ungates both pods */
    const char *p0 = "/api/v1/namespaces/team/pods/grp-0",
               *p1 = "/api/v1/namespaces/team/pods/grp-1";
    long a = wait_req(f, 0, is_admission, "grp", 5000);
    CHECK(f, a >= 0, "the group's Workload was never admitted");
    long u0 = wait_req(f, 0, is_pod_patch, p0, 5000), u1 = wait_req(f, 0, is_pod_patch, p1, 5000);
    CHECK(f, u0 > a && u1 > a, "both pods ungated after the admission (%ld, %ld, %ld)", a, u0, u1);
    for (int k = 0; k < 2; k++) {
        json_object *q = f->s->reqs[k ? u1 : u0].j;
        EQS(f, q, "spec.nodeSelector.pool", "p1");
        json_object *g = NULL;
        CHECK(f, json_object_object_get_ex(jpath(q, "spec"), "schedulingGates", &g) && !g,
              "the gate not removed: %s", f->s->reqs[k ? u1 : u0].body);
    }
    obj *pod = store_find(f->s, R_POD, "team/grp-1");
    CHECK(f, !jpath(pod->o, "spec.schedulingGates"), "pod grp-1 still gated");
    stop(f);
}

/* A Workload team/tw admitted with a topology assignment (hostname level:
 * gpu-a 1 pod, gpu-b 1 pod), its pod set asking for ranks by the Job's
 * completion index. */
static void add_tas_workload(srv *s)
{
    srv_add(s, R_WL,
            "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Workload\",\"metadata\":{"
            "\"name\":\"tw\",\"namespace\":\"team\",\"uid\":\"wl-tw\","
            "\"creationTimestamp\":\"2025-01-01T00:00:00Z\"},"
            "\"spec\":{\"queueName\":\"lq\",\"active\":true,\"podSets\":[{\"name\":\"main\","
            "\"count\":2,\"topologyRequest\":{\"required\":\"kubernetes.io/hostname\","
            "\"podIndexLabel\":\"batch.kubernetes.io/job-completion-index\"},"
            "\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"busybox\","
            "\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}}]},"
            "\"status\":{\"admission\":{\"clusterQueue\":\"cq\",\"podSetAssignments\":[{"
            "\"name\":\"main\",\"count\":2,\"flavors\":{\"cpu\":\"f1\"},\"resourceUsage\":"
            "{\"cpu\":\"2\"},\"topologyAssignment\":{\"levels\":[\"kubernetes.io/hostname\"],"
            "\"slices\":[{\"domainCount\":2,\"podCounts\":{\"universal\":1},\"valuesPerLevel\":"
            "[{\"individual\":{\"prefix\":\"gpu-\",\"roots\":[\"a\",\"b\"]}}]}]}}]},"
            "\"conditions\":[{\"type\":\"QuotaReserved\",\"status\":\"True\",\"reason\":"
            "\"QuotaReserved\",\"message\":\"Quota reserved in ClusterQueue cq\","
            "\"lastTransitionTime\":\"2025-01-01T00:00:05Z\"},{\"type\":\"Admitted\",\"status\":"
            "\"True\",\"reason\":\"Admitted\",\"message\":\"The workload is admitted\","
            "\"lastTransitionTime\":\"2025-01-01T00:00:05Z\"}]}}");
}

/* A gated pod of tw's pod set: completion index idx (< 0: no index label),
 * with the pod-index-offset annotation off (NULL: none). */
static void add_tas_pod(srv *s, const char *name, int idx, const char *off)
{
    char b[2048], lab[120] = "", ann[120] = "";
    if (idx >= 0)
        snprintf(lab, sizeof(lab), ",\"batch.kubernetes.io/job-completion-index\":\"%d\"", idx);
    if (off)
        snprintf(ann, sizeof(ann), ",\"kueue.x-k8s.io/pod-index-offset\":\"%s\"", off);
    snprintf(b, sizeof(b),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"team\",\"uid\":\"uid-%s\",\"labels\":{"
             "\"kueue.x-k8s.io/podset\":\"main\"%s},\"annotations\":{"
             "\"kueue.x-k8s.io/workload\":\"tw\","
             "\"kueue.x-k8s.io/podset-required-topology\":\"kubernetes.io/hostname\"%s}},"
             "\"spec\":{\"schedulingGates\":[{\"name\":\"other\"},"
             "{\"name\":\"kueue.x-k8s.io/topology\"}],\"nodeSelector\":{\"pool\":\"p1\"},"
             "\"containers\":[{\"name\":\"c\",\"image\":\"busybox\"}]},"
             "\"status\":{\"phase\":\"Pending\"}}",
             name, name, lab, ann);
    srv_add(s, R_POD, b);
}

/* The topology ungater: the gated pods of a Workload admitted by TAS get
 * their domain's hostname in their nodeSelector and lose the topology gate
 * (other gates kept); by rank when every pod has its index (pod z, index
 * 0, to gpu-a), else in name order. With offset (ranked 2) the indices are
 * 2 and 1, the pods annotated kueue.x-k8s.io/pod-index-offset 1: ranks 1
 * and 0 (without the offset, index 2 is no rank of 2 pods: name order). */
static void tas_ungater(void **state, int ranked)
{
    fx *f = *state;
    base_world(f->s);
    add_tas_workload(f->s);
    int o = ranked == 2;
    add_tas_pod(f->s, "y", ranked ? 1 + o : -1, o ? "1" : NULL);
    add_tas_pod(f->s, "z", ranked ? 0 + o : -1, o ? "1" : NULL);
    start(f);
    const char *py = "/api/v1/namespaces/team/pods/y", *pz = "/api/v1/namespaces/team/pods/z";
    long uy = wait_req(f, 0, is_pod_patch, py, 5000), uz = wait_req(f, 0, is_pod_patch, pz, 5000);
    CHECK(f, uy >= 0 && uz >= 0, "the pods were not ungated (%ld, %ld)", uy, uz);
    const char *hy = json_object_get_string(
        jget(jpath(f->s->reqs[uy].j, "spec.nodeSelector"), "kubernetes.io/hostname"));
    const char *hz = json_object_get_string(
        jget(jpath(f->s->reqs[uz].j, "spec.nodeSelector"), "kubernetes.io/hostname"));
    CHECK(f, hy && !strcmp(hy, ranked ? "gpu-b" : "gpu-a"), "pod y to %s: %s", hy ? hy : "-",
          f->s->reqs[uy].body);
    CHECK(f, hz && !strcmp(hz, ranked ? "gpu-a" : "gpu-b"), "pod z to %s: %s", hz ? hz : "-",
          f->s->reqs[uz].body);
    json_object *g = jpath(f->s->reqs[uy].j, "spec.schedulingGates");
    CHECK(f,
          json_object_array_length(g) == 1 &&
              !strcmp(jstrp(json_object_array_get_idx(g, 0), "name"), "other"),
          "the other gate kept, the topology gate gone: %s", f->s->reqs[uy].body);
    /* once ungated (the watch shows it), not patched again */
    serve_for(f, 1500);
    size_t n = count_req(f, 0, f->s->nreqs, is_pod_patch, py);
    CHECK(f, n == 1, "pod y patched %zu times", n);
    stop(f);
}

static void test_tas_ungater_ranks(void **state) { tas_ungater(state, 1); }
static void test_tas_ungater_names(void **state) { tas_ungater(state, 0); }
static void test_tas_ungater_offset(void **state) { tas_ungater(state, 2); }

/* A pod-index-offset that is no integer: the pod set is not ungated, and
 * the log says why. */
static void test_tas_ungater_bad_offset(void **state)
{
    fx *f = *state;
    base_world(f->s);
    add_tas_workload(f->s);
    add_tas_pod(f->s, "y", 1, "one");
    add_tas_pod(f->s, "z", 0, "one");
    start(f);
    serve_for(f, 1500);
    size_t n = count_req(f, 0, f->s->nreqs, is_pod_patch, "/api/v1/namespaces/team/pods/y") +
               count_req(f, 0, f->s->nreqs, is_pod_patch, "/api/v1/namespaces/team/pods/z");
    CHECK(f, n == 0, "%zu pod patches", n);
    CHECK(f, log_has(f, "is not an integer: pod set main of team/tw is not ungated"),
          "the log does not say why");
    stop(f);
}

/* 2. A pending Workload that fits is admitted with a precondition. */
static void test_admits_with_precondition(void **state)
{
    fx *f = *state;
    base_world(f->s);
    long rv = add_workload(f->s, "a", "lq", "3", NULL, 1);
    start(f);
    long i = wait_req(f, 0, is_admission, "a", 5000);
    CHECK(f, i >= 0, "no admission of team/a");
    sreq *q = &f->s->reqs[i];
    assert_string_equal(q->path, "/apis/kueue.x-k8s.io/v1beta2/namespaces/team/workloads/a/status");
    CHECK(f, q->ctype && strcmp(q->ctype, "application/merge-patch+json") == 0, "content type %s",
          q->ctype ? q->ctype : "(none)");
    char want_rv[32];
    snprintf(want_rv, sizeof(want_rv), "%ld", rv);
    const char *prv = jstrp(q->j, "metadata.resourceVersion");
    CHECK(f, prv && strcmp(prv, want_rv) == 0, "precondition %s, want %s", prv ? prv : "(none)",
          want_rv);
    assert_int_equal(q->status, 200);
    EQS(f, q->j, "status.admission.clusterQueue", "cq");
    EQS(f, q->j, "status.admission.podSetAssignments.0.name", "main");
    EQS(f, q->j, "status.admission.podSetAssignments.0.flavors.cpu", "f1");
    assert_int_equal(json_object_get_int(jpath(q->j, "status.admission.podSetAssignments.0.count")),
                     1);
    EQS(f, q->j, "status.admission.podSetAssignments.0.resourceUsage.cpu", "3");
    static const char *const types[] = { "QuotaReserved", "Admitted" };
    for (int k = 0; k < 2; k++) {
        json_object *c = cond(q->j, types[k]);
        CHECK(f, c != NULL, "no %s condition in %s", types[k], q->body);
        EQS(f, c, "status", "True");
        EQS(f, c, "reason", types[k]);
    }
    EQS(f, cond(q->j, "QuotaReserved"), "message", "Quota reserved in ClusterQueue cq");
    /* the spec is not touched by a status write */
    CHECK(f, jpath(q->j, "spec") == NULL, "the status patch carries a spec: %s", q->body);
    serve_for(f, 300);
    size_t n = count_req(f, 0, f->s->nreqs, is_admission, "a");
    CHECK(f, n == 1, "%zu admission writes of team/a, want 1", n);
    stop(f);
}

/* 3. The admission write gets 409: the Job is not started, and the
 * admission is written again, with the resourceVersion of the newer
 * Workload the watch brings. */
static void test_conflict_retries_with_new_rv(void **state)
{
    fx *f = *state;
    base_world(f->s);
    add_job(f->s, "lq");
    long rv0 = add_job_workload(f->s, "lq");
    srv_fault(f->s, "PATCH", "/workloads/" JOB_WL "/status", 409, -1, 0);
    start(f);
    long i = wait_req(f, 0, is_admission, JOB_WL, 5000);
    CHECK(f, i >= 0, "no admission of " JOB_WL);
    assert_int_equal(f->s->reqs[i].status, 409);
    char b[32];
    snprintf(b, sizeof(b), "%ld", rv0);
    EQS(f, f->s->reqs[i].j, "metadata.resourceVersion", b);
    /* a while with the conflict standing: the Job stays suspended */
    serve_for(f, 700);
    size_t starts = count_req(f, 0, f->s->nreqs, is_job_start, "team/sample-job");
    CHECK(f, starts == 0, "the Job was started although its admission failed with 409");
    size_t tries = count_req(f, 0, f->s->nreqs, is_admission, JOB_WL);
    /* someone else changed the Workload (the cause of the conflict); the
     * store now holds rv1 and answers the old one with 409 by itself */
    srv_clear_faults(f->s);
    size_t mark = f->s->nreqs;
    long rv1 = srv_update(f->s, R_WL, "team/" JOB_WL,
                          "{\"metadata\":{\"annotations\":{\"touched\":\"yes\"}}}", 0);
    serve_for(f, 200);
    /* the controller may already have read rv1 (a 409 makes it read the
     * object again) and written the admission with it; a Job start must
     * still come after a successful admission write */
    for (size_t k = mark, ok200 = 0; k < f->s->nreqs; k++) {
        const sreq *q = &f->s->reqs[k];
        ok200 |= is_admission(q, JOB_WL) && q->status == 200;
        CHECK(f, ok200 || !is_job_start(q, "team/sample-job"),
              "the Job was started before its admission was written");
    }
    srv_push(f->s, R_WL, "team/" JOB_WL);
    snprintf(b, sizeof(b), "%ld", rv1);
    /* after the push: attempts with the old rv may still be on their way
     * (409 from the store); the one that succeeds carries rv1 */
    long ok = -1;
    char b0[32];
    snprintf(b0, sizeof(b0), "%ld", rv0);
    double end = now_s() + 5;
    for (size_t from = mark; ok < 0;) {
        long k = wait_req(f, from, is_admission, JOB_WL, (int)((end - now_s()) * 1000));
        CHECK(f, k >= 0, "no successful admission within 5 s of the newer Workload");
        sreq *q = &f->s->reqs[k];
        const char *rv = jstrp(q->j, "metadata.resourceVersion");
        if (q->status == 200)
            ok = k;
        else
            CHECK(f, q->status == 409 && rv && strcmp(rv, b0) == 0,
                  "admission write %ld answered %d (rv %s)", k, q->status, rv ? rv : "-");
        from = (size_t)k + 1;
    }
    CHECK(f, ok >= 0, "the admission was not retried successfully");
    const char *rv = jstrp(f->s->reqs[ok].j, "metadata.resourceVersion");
    CHECK(f, rv && strcmp(rv, b) == 0, "the retry carries rv %s, want %s", rv ? rv : "-", b);
    /* now the Job starts, and only after the admission was written */
    long s = wait_req(f, 0, is_job_start, "team/sample-job", 5000);
    CHECK(f, s > ok, "the Job was not started after the successful admission");
    print_message("    (%zu admission attempts answered 409 during the 700 ms conflict)\n", tries);
    stop(f);
}

/* 4. A Workload that does not fit: QuotaReserved=False with Kueue's
 * message; never an admission. */
static void test_pending_reason(void **state)
{
    fx *f = *state;
    base_world(f->s);
    add_workload(f->s, "big", "lq", "8", NULL, 1);
    start(f);
    long i = wait_req(f, 0, is_pending_write, "big", 5000);
    CHECK(f, i >= 0, "no pending reason written for team/big");
    sreq *q = &f->s->reqs[i];
    json_object *c = cond(q->j, "QuotaReserved");
    /* Kueue v0.19+ (UnadmittedWorkloadsObservability, on by default): the
     * granular reason, not the legacy "Pending" (kueue-semantics.md 3) */
    EQS(f, c, "reason", "ExceedsMaxQuota");
    EQS(f, c, "message",
        "couldn't assign flavors to pod set main: insufficient quota for cpu in "
        "flavor f1, request > maximum capacity (8 > 4)");
    CHECK(f, jpath(q->j, "status.admission") == NULL, "a pending write with an admission: %s",
          q->body);
    CHECK(f, jstrp(q->j, "metadata.resourceVersion") != NULL,
          "the pending write has no resourceVersion precondition");
    serve_for(f, 600);
    size_t n = count_req(f, 0, f->s->nreqs, is_admission, NULL);
    CHECK(f, n == 0, "%zu admissions of a Workload that does not fit", n);
    /* written once: its own write coming back does not trigger another */
    n = count_req(f, 0, f->s->nreqs, is_pending_write, "big");
    CHECK(f, n == 1, "%zu pending writes of team/big, want 1", n);
    stop(f);
}

/* 5. A Job whose Workload now holds quota (admitted elsewhere, seen as
 * MODIFIED) is started with the flavor's nodeLabels. */
static void test_starts_job_when_admitted(void **state)
{
    fx *f = *state;
    base_world(f->s);
    add_job(f->s, "elsewhere");
    /* its Workload waits in a queue that does not exist, so this
     * controller cannot admit it itself */
    add_job_workload(f->s, "elsewhere");
    start(f);
    serve_for(f, 500);
    size_t n = count_req(f, 0, f->s->nreqs, is_job_start, "team/sample-job");
    CHECK(f, n == 0, "the Job was started while its Workload held no quota");
    size_t mark = f->s->nreqs;
    set_admitted(f->s, "team/" JOB_WL, 0, 1);
    long i = wait_req(f, mark, is_job_start, "team/sample-job", 5000);
    CHECK(f, i >= 0, "the Job was not started once its Workload held quota");
    sreq *q = &f->s->reqs[i];
    CHECK(f, q->ctype && strcmp(q->ctype, "application/merge-patch+json") == 0, "content type %s",
          q->ctype ? q->ctype : "(none)");
    EQS(f, q->j, "spec.template.spec.nodeSelector.pool", "p1");
    EQS(f, q->j, "spec.template.spec.nodeSelector.disk", "ssd");
    assert_int_equal(q->status, 200);
    /* the stored Job is now running with the selector */
    obj *job = store_find(f->s, R_JOB, "team/sample-job");
    assert_false(json_object_get_boolean(jpath(job->o, "spec.suspend")));
    EQS(f, job->o, "spec.template.spec.nodeSelector.pool", "p1");
    serve_for(f, 300);
    n = count_req(f, 0, f->s->nreqs, is_job_start, "team/sample-job");
    CHECK(f, n == 1, "%zu Job starts, want 1", n);
    n = count_req(f, 0, f->s->nreqs, is_admission, NULL);
    CHECK(f, n == 0, "%zu admissions written, want none", n);
    stop(f);
}

/* 5c. Two-phase admission: in a ClusterQueue with an AdmissionCheck the
 * reservation is written without Admitted and with the check Pending; the
 * Job waits; once the check's controller writes Ready, Admitted=True is
 * written and the Job started. */
static int is_admitted_write(const sreq *q, const void *ud)
{
    (void)ud;
    json_object *c = NULL;
    json_object *conds = jpath(q->j, "status.conditions");
    for (size_t i = 0; conds && i < json_object_array_length(conds); i++) {
        json_object *x = json_object_array_get_idx(conds, i);
        const char *t = json_object_get_string(jget(x, "type"));
        if (t && strcmp(t, "Admitted") == 0)
            c = x;
    }
    const char *st = c ? json_object_get_string(jget(c, "status")) : NULL;
    return strcmp(q->method, "PATCH") == 0 && ends_with(q->path, "/status") && st &&
           strcmp(st, "True") == 0;
}

static void test_admission_checks_two_phase(void **state)
{
    fx *f = *state;
    base_world_cq(f->s, "\"admissionChecksStrategy\":{\"admissionChecks\":[{\"name\":\"ac\"}]},");
    srv_add(f->s, R_AC,
            "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"AdmissionCheck\","
            "\"metadata\":{\"name\":\"ac\",\"uid\":\"ac-1\"},\"spec\":{\"controllerName\":"
            "\"example.com/c\"},\"status\":{\"conditions\":[{\"type\":\"Active\",\"status\":"
            "\"True\",\"reason\":\"R\",\"message\":\"m\",\"lastTransitionTime\":"
            "\"2025-01-01T00:00:00Z\"}]}}");
    add_job(f->s, "lq");
    add_job_workload(f->s, "lq");
    start(f);
    long i = wait_req(f, 0, is_admission, JOB_WL, 5000);
    CHECK(f, i >= 0, "no reservation of " JOB_WL);
    sreq *q = &f->s->reqs[i];
    CHECK(f, cond(q->j, "QuotaReserved") != NULL, "no QuotaReserved in %s", q->body);
    CHECK(f, cond(q->j, "Admitted") == NULL, "Admitted written with the reservation: %s", q->body);
    serve_for(f, 500);
    /* the check applies to every flavor: listed Pending (before or with the
     * reservation, as Kueue's reconciler does) */
    obj *wlo = store_find(f->s, R_WL, "team/" JOB_WL);
    EQS(f, wlo->o, "status.admissionChecks.0.name", "ac");
    EQS(f, wlo->o, "status.admissionChecks.0.state", "Pending");
    CHECK(f, jpath(wlo->o, "status.admission") != NULL, "no reservation stored");
    size_t n = count_req(f, 0, f->s->nreqs, is_job_start, "team/sample-job");
    CHECK(f, n == 0, "the Job was started before its admission check was Ready");
    size_t mark = f->s->nreqs;
    srv_update(f->s, R_WL, "team/" JOB_WL,
               "{\"status\":{\"admissionChecks\":[{\"name\":\"ac\",\"state\":\"Ready\","
               "\"message\":\"ok\",\"lastTransitionTime\":\"2025-01-01T00:00:09Z\"}]}}",
               1);
    i = wait_req(f, mark, is_admitted_write, NULL, 5000);
    CHECK(f, i >= 0, "Admitted not written once the check was Ready");
    i = wait_req(f, mark, is_job_start, "team/sample-job", 5000);
    CHECK(f, i >= 0, "the Job was not started once its Workload was Admitted");
    stop(f);
}

/* 5b. The Job's watch lags: a change of the still-suspended Job made
 * before the start (the Job controller writing its status) arrives after
 * the start was written. That older, suspended version is not a reason to
 * start the Job again: one start, one Started Event, one log line. */
static int is_event_with(const sreq *q, const void *ud);

static void test_starts_job_once_when_watch_lags(void **state)
{
    fx *f = *state;
    base_world(f->s);
    add_job(f->s, "elsewhere");
    add_job_workload(f->s, "elsewhere");
    start(f);
    serve_for(f, 500);
    srv_hold(f->s, R_JOB);
    srv_update(f->s, R_JOB, "team/sample-job", "{\"status\":{\"active\":0}}", 1);
    size_t mark = f->s->nreqs;
    set_admitted(f->s, "team/" JOB_WL, 0, 1);
    long i = wait_req(f, mark, is_job_start, "team/sample-job", 5000);
    CHECK(f, i >= 0, "the Job was not started once its Workload held quota");
    assert_int_equal(f->s->reqs[i].status, 200);
    serve_for(f, 200);
    srv_release(f->s, R_JOB, 1); /* the older, suspended version */
    serve_for(f, 500);
    srv_release(f->s, R_JOB, (size_t)-1); /* the started one */
    serve_for(f, 300);
    size_t n = count_req(f, 0, f->s->nreqs, is_job_start, "team/sample-job");
    CHECK(f, n == 1, "%zu Job starts, want 1", n);
    n = count_req(f, 0, f->s->nreqs, is_event_with, "\"Started\"");
    CHECK(f, n == 1, "%zu Started Events, want 1", n);
    stop(f);
}

/* 5c. Started, then evicted before the watch showed the start: the
 * started version and the eviction arrive together, the Job is stopped.
 * When its Workload is admitted again, the Job is started again at once,
 * not after the start's echo wait (it once waited for the next 30 s
 * resync: a pod 5 to 30 s after its admission). */
static int is_job_suspend(const sreq *q, const void *ud);
static int is_admission_cleared(const sreq *q, const void *ud);

static void test_restarts_job_evicted_before_start_seen(void **state)
{
    fx *f = *state;
    base_world(f->s);
    add_job(f->s, "elsewhere");
    add_job_workload(f->s, "elsewhere");
    start(f);
    serve_for(f, 500);
    srv_hold(f->s, R_JOB);
    srv_hold(f->s, R_WL);
    set_admitted(f->s, "team/" JOB_WL, 0, 0);
    srv_push(f->s, R_WL, "team/" JOB_WL);
    srv_release(f->s, R_WL, (size_t)-1);
    long i = wait_req(f, 0, is_job_start, "team/sample-job", 5000);
    CHECK(f, i >= 0, "the Job was not started once its Workload held quota");
    serve_for(f, 200);
    /* evicted; the started Job and the eviction reach the controller together */
    set_admitted(f->s, "team/" JOB_WL, 1, 1);
    srv_release(f->s, R_JOB, (size_t)-1);
    srv_release(f->s, R_WL, (size_t)-1);
    long s1 = wait_req(f, 0, is_job_suspend, "team/sample-job", 5000);
    CHECK(f, s1 > i, "the evicted Job was not suspended");
    long r = wait_req(f, 0, is_admission_cleared, JOB_WL, 5000);
    CHECK(f, r > s1, "the stopped Job's quota was not released");
    size_t mark = f->s->nreqs;
    set_admitted(f->s, "team/" JOB_WL, 0, 1);
    long i2 = wait_req(f, mark, is_job_start, "team/sample-job", 2000);
    CHECK(f, i2 >= 0, "the Job was not started again within 2 s of its new admission");
    stop(f);
}

/* ud: the Workload's name. A /status patch with QuotaReserved=False that
 * clears status.admission (a release). */
static int is_admission_cleared(const sreq *q, const void *ud)
{
    json_object *v = (json_object *)1;
    return is_pending_write(q, ud) &&
           json_object_object_get_ex(jget(q->j, "status"), "admission", &v) && v == NULL;
}

/* ud: "ns/name" of a Job. A patch of it (or of its status) answered 422. */
static int is_job_refused(const sreq *q, const void *ud)
{
    const char *key = ud, *sl = strchr(key, '/');
    char path[600];
    snprintf(path, sizeof(path), "/apis/batch/v1/namespaces/%.*s/jobs/%s", (int)(sl - key), key,
             sl + 1);
    return strcmp(q->method, "PATCH") == 0 && strncmp(q->path, path, strlen(path)) == 0 &&
           q->status == 422;
}

/* ud: "ns/name" of a Job. An accepted patch of it with spec.suspend=true. */
static int is_job_suspend(const sreq *q, const void *ud)
{
    const char *key = ud, *sl = strchr(key, '/');
    char path[600];
    snprintf(path, sizeof(path), "/apis/batch/v1/namespaces/%.*s/jobs/%s", (int)(sl - key), key,
             sl + 1);
    json_object *su = jpath(q->j, "spec.suspend");
    return strcmp(q->method, "PATCH") == 0 && strcmp(q->path, path) == 0 && q->status == 200 &&
           json_object_is_type(su, json_type_boolean) && json_object_get_boolean(su);
}

/* ud: "ns/name" of a Job. An accepted patch of it that removes the
 * nodeSelector key "pool" (flavor f1's) and does not touch suspend. */
static int is_job_restore(const sreq *q, const void *ud)
{
    const char *key = ud, *sl = strchr(key, '/');
    char path[600];
    snprintf(path, sizeof(path), "/apis/batch/v1/namespaces/%.*s/jobs/%s", (int)(sl - key), key,
             sl + 1);
    json_object *sel = jpath(q->j, "spec.template.spec.nodeSelector"), *v = (json_object *)1;
    return strcmp(q->method, "PATCH") == 0 && strcmp(q->path, path) == 0 && q->status == 200 &&
           !jpath(q->j, "spec.suspend") && json_object_object_get_ex(sel, "pool", &v) && v == NULL;
}

/* ud: "ns/name" of a Job. A /status patch of it clearing startTime. */
static int is_start_time_cleared(const sreq *q, const void *ud)
{
    const char *key = ud, *sl = strchr(key, '/');
    char path[600];
    snprintf(path, sizeof(path), "/apis/batch/v1/namespaces/%.*s/jobs/%s/status", (int)(sl - key),
             key, sl + 1);
    json_object *st = jget(q->j, "status");
    json_object *v = NULL;
    return strcmp(q->method, "PATCH") == 0 && strcmp(q->path, path) == 0 && q->status == 200 &&
           json_object_object_get_ex(st, "startTime", &v) && v == NULL;
}

/* 5b. A running Job whose Workload is evicted is stopped as kube-apiserver
 * allows it (its template's scheduling directives are immutable unless the
 * Job is suspended without a startTime): suspended first, then its
 * startTime cleared, then its template restored (the flavor's nodeSelector
 * key removed, its own kept), and only then, once no pod is active or
 * terminating, is the quota released. The
 * fake server answers 422 as the real one does; a single patch of suspend
 * and template got that forever. */
static void test_evicted_job_stopped_in_steps(void **state)
{
    fx *f = *state;
    base_world(f->s);
    add_job(f->s, "lq");
    add_job_workload(f->s, "lq");
    /* running with flavor f1's selector, admitted, then evicted */
    srv_update(f->s, R_JOB, "team/sample-job",
               "{\"spec\":{\"suspend\":false,\"template\":{\"metadata\":{\"labels\":"
               "{\"by-check\":\"x\"},\"annotations\":{\"note\":\"y\"}},\"spec\":{"
               "\"nodeSelector\":{\"pool\":\"p1\"}}}},\"status\":{\"startTime\":"
               "\"2025-01-01T00:00:06Z\","
               "\"active\":1}}",
               0);
    set_admitted(f->s, "team/" JOB_WL, 1, 0);
    start(f);
    long i1 = wait_req(f, 0, is_job_suspend, "team/sample-job", 5000);
    CHECK(f, i1 >= 0, "the Job was not suspended");
    if (i1 >= 0)
        CHECK(f, jpath(f->s->reqs[i1].j, "spec.template") == NULL,
              "the suspend patch changes the template: %s", f->s->reqs[i1].body);
    long i2 = wait_req(f, 0, is_start_time_cleared, "team/sample-job", 5000);
    CHECK(f, i2 > i1, "the stopped Job's startTime was not cleared after its suspension");
    long i3 = wait_req(f, 0, is_job_restore, "team/sample-job", 5000);
    CHECK(f, i3 > i2, "the stopped Job's template was not restored after startTime was cleared");
    if (i3 >= 0) {
        EQS(f, f->s->reqs[i3].j, "spec.template.spec.nodeSelector.disk", "ssd");
        /* the label and annotation the admission added (a check's
         * podSetUpdates) are removed, as Kueue restores the pod set info */
        json_object *md = jpath(f->s->reqs[i3].j, "spec.template.metadata"), *v = md;
        CHECK(f, json_object_object_get_ex(jget(md, "labels"), "by-check", &v) && v == NULL,
              "the restore keeps the admission's label: %s", f->s->reqs[i3].body);
        v = md;
        CHECK(f, json_object_object_get_ex(jget(md, "annotations"), "note", &v) && v == NULL,
              "the restore keeps the admission's annotation: %s", f->s->reqs[i3].body);
    }
    /* its pod is still there: the quota is kept */
    serve_for(f, 400);
    size_t n = count_req(f, 0, f->s->nreqs, is_admission_cleared, JOB_WL);
    CHECK(f, n == 0, "the quota was released while the Job still had an active pod");
    /* the Job controller deletes the pod: terminating, it still holds its
     * node's resources */
    srv_update(f->s, R_JOB, "team/sample-job", "{\"status\":{\"active\":0,\"terminating\":1}}", 1);
    serve_for(f, 400);
    n = count_req(f, 0, f->s->nreqs, is_admission_cleared, JOB_WL);
    CHECK(f, n == 0, "the quota was released while the Job's pod was terminating");
    srv_update(f->s, R_JOB, "team/sample-job", "{\"status\":{\"terminating\":0}}", 1);
    long i4 = wait_req(f, 0, is_admission_cleared, JOB_WL, 5000);
    CHECK(f, i4 > i3, "the evicted Workload's quota was not released once the Job stopped");
    n = count_req(f, 0, f->s->nreqs, is_job_refused, "team/sample-job");
    CHECK(f, n == 0, "%zu Job patches refused with 422", n);
    stop(f);
}

/* 6. Two Workloads that each need the whole quota: one admission, and
 * only one, through the echo of the admitted one and later cycles. */
static void test_quota_not_oversold(void **state)
{
    fx *f = *state;
    base_world(f->s);
    add_workload(f->s, "a", "lq", "4", NULL, 1);
    add_workload(f->s, "b", "lq", "4", NULL, 2);
    start(f);
    long i = wait_req(f, 0, is_admission, NULL, 5000);
    CHECK(f, i >= 0, "no admission");
    CHECK(f, f->s->reqs[i].status == 200, "the admission write answered %d", f->s->reqs[i].status);
    const char *first = strstr(f->s->reqs[i].path, "/workloads/a/") ? "a" : "b";
    const char *other = first[0] == 'a' ? "b" : "a";
    assert_string_equal(first, "a"); /* the older one goes first */
    /* the admitted Workload comes back MODIFIED (the store pushed it);
     * let many cycles pass */
    serve_for(f, 1500);
    size_t n = count_req(f, 0, f->s->nreqs, is_admission, NULL);
    CHECK(f, n == 1, "%zu admissions for 4 cpu of quota and two 4-cpu Workloads, want 1", n);
    long p = wait_req(f, 0, is_pending_write, other, 100);
    CHECK(f, p >= 0, "no pending reason for team/%s", other);
    EQS(f, cond(f->s->reqs[p].j, "QuotaReserved"), "message",
        "couldn't assign flavors to pod set main: insufficient unused quota for "
        "cpu in flavor f1, 4 more needed");
    stop(f);
}

/* 7. After a restart: quota held in the listed state counts, so the
 * pending Workload only gets its reason. */
static void test_restart_counts_held_quota(void **state)
{
    fx *f = *state;
    base_world(f->s);
    add_workload(f->s, "b", "lq", "4", NULL, 2);
    add_workload(f->s, "a", "lq", "4", NULL, 1);
    set_admitted(f->s, "team/a", 0, 1);
    start(f);
    long p = wait_req(f, 0, is_pending_write, "b", 5000);
    CHECK(f, p >= 0, "no pending reason for team/b");
    json_object *c = cond(f->s->reqs[p].j, "QuotaReserved");
    EQS(f, c, "reason", "WaitingForQuota"); /* the granular reason, as in test 4 */
    EQS(f, c, "message",
        "couldn't assign flavors to pod set main: insufficient unused quota for "
        "cpu in flavor f1, 4 more needed");
    serve_for(f, 800);
    size_t n = count_req(f, 0, f->s->nreqs, is_admission, NULL);
    CHECK(f, n == 0, "%zu admissions written although the quota is all held", n);
    stop(f);
}

/* 8. Nothing is admitted before every informer has listed: the Jobs LIST
 * is answered 1 s late. */
static void test_no_write_before_sync(void **state)
{
    fx *f = *state;
    base_world(f->s);
    add_workload(f->s, "a", "lq", "1", NULL, 1);
    f->s->delays[f->s->ndelays++] = (delay){ "/apis/batch/v1/jobs", 1000, 1, NULL };
    double t0 = now_s();
    start(f);
    long i = wait_req(f, 0, is_admission, "a", 6000);
    CHECK(f, i >= 0, "no admission of team/a after the Jobs LIST was answered");
    /* the Jobs LIST: when it was answered */
    long jl = -1;
    for (size_t k = 0; k < f->s->nreqs && jl < 0; k++)
        if (strncmp(f->s->reqs[k].path, "/apis/batch/v1/jobs?", 20) == 0 &&
            !strstr(f->s->reqs[k].path, "watch="))
            jl = (long)k;
    CHECK(f, jl >= 0, "the controller never listed Jobs");
    double answered = f->s->reqs[jl].ta;
    CHECK(f, answered - f->s->reqs[jl].t >= 0.99, "the Jobs LIST was not held");
    CHECK(f, f->s->reqs[i].t >= answered - 0.01,
          "admission written %.3f s after start, before the Jobs LIST was answered (%.3f s)",
          f->s->reqs[i].t - t0, answered - t0);
    /* no write of any kind before it */
    for (size_t k = 0; k < f->s->nreqs; k++) {
        sreq *q = &f->s->reqs[k];
        if (strcmp(q->method, "GET") != 0)
            CHECK(f, q->t >= answered - 0.01, "%s %s at %.3f s, before the Jobs LIST (%.3f s)",
                  q->method, q->path, q->t - t0, answered - t0);
    }
    stop(f);
}

/* ud: a ClusterQueue name. A status write of it whose Active condition is
 * False. */
static int is_cq_inactive(const sreq *q, const void *ud)
{
    char suffix[300];
    snprintf(suffix, sizeof(suffix), "/clusterqueues/%s/status", (const char *)ud);
    const char *st = jstrp(cond(q->j, "Active"), "status");
    const char *at = strstr(q->path, suffix); /* a server-side apply: a query follows */
    return strcmp(q->method, "PATCH") == 0 && at &&
           (!at[strlen(suffix)] || at[strlen(suffix)] == '?') && st && strcmp(st, "False") == 0;
}

/* 9. A ClusterQueue Kueue's webhook would refuse (lendingLimit above its
 * nominalQuota) is Active=False with the field and problem, its workloads
 * stay pending ("inactive"), and it lends nothing to its cohort; a Workload
 * with minCount above its count gets QuotaReserved=False naming the field. */
static void test_invalid_cluster_queue(void **state)
{
    fx *f = *state;
    base_world(f->s);
    /* cq (4 cpu) and neg (8 cpu, lendingLimit 9: invalid) share cohort co */
    obj *cq = store_find(f->s, R_CQ, "cq");
    json_object_object_add(json_object_object_get(cq->o, "spec"), "cohortName",
                           json_object_new_string("co"));
    srv_add(f->s, R_CQ,
            "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ClusterQueue\","
            "\"metadata\":{\"name\":\"neg\",\"uid\":\"cq-2\"},\"spec\":{"
            "\"cohortName\":\"co\",\"namespaceSelector\":{},\"resourceGroups\":[{"
            "\"coveredResources\":[\"cpu\"],\"flavors\":[{\"name\":\"f1\","
            "\"resources\":[{\"name\":\"cpu\",\"nominalQuota\":\"8\","
            "\"lendingLimit\":\"9\"}]}]}]}}");
    srv_add(f->s, R_LQ,
            "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"LocalQueue\","
            "\"metadata\":{\"name\":\"lq-neg\",\"namespace\":\"team\",\"uid\":"
            "\"lq-2\"},\"spec\":{\"clusterQueue\":\"neg\"}}");
    add_workload(f->s, "big", "lq", "6", NULL, 1); /* would borrow 2 from neg */
    add_workload(f->s, "into-neg", "lq-neg", "1", NULL, 2);
    add_workload(f->s, "small", "lq", "1", NULL, 3);   /* the good queue still admits */
    add_workload(f->s, "minover", "lq", "1", NULL, 4); /* minCount 2 > count 1 */
    json_object_object_add(json_object_array_get_idx(
                               jpath(store_find(f->s, R_WL, "team/minover")->o, "spec.podSets"), 0),
                           "minCount", json_object_new_int(2));
    start(f);

    long i = wait_req(f, 0, is_cq_inactive, "neg", 5000);
    CHECK(f, i >= 0, "ClusterQueue neg was not written Active=False");
    if (i >= 0) {
        json_object *c = cond(f->s->reqs[i].j, "Active");
        EQS(f, c, "reason", "Invalid");
        EQS(f, c, "message",
            "Can't admit new workloads: spec.resourceGroups[0].flavors[0]."
            "resources[0].lendingLimit: Invalid value: \"9\": must be less than or "
            "equal to the nominalQuota");
        /* a server-side apply body is read as YAML by kube-apiserver, whose
         * YAML reader refuses JSON's "\/" escape (400): slashes go as is */
        const char *body = f->s->reqs[i].body;
        CHECK(f, body && strstr(body, "\"kueue.x-k8s.io/v1beta2\"") && !strstr(body, "\\/"),
              "apply body %s", body ? body : "(none)");
    }
    i = wait_req(f, 0, is_pending_write, "into-neg", 5000);
    CHECK(f, i >= 0, "no pending reason for team/into-neg");
    if (i >= 0)
        EQS(f, cond(f->s->reqs[i].j, "QuotaReserved"), "message", "ClusterQueue neg is inactive");
    i = wait_req(f, 0, is_pending_write, "minover", 5000);
    CHECK(f, i >= 0, "no pending reason for team/minover");
    if (i >= 0)
        EQS(f, cond(f->s->reqs[i].j, "QuotaReserved"), "message",
            "Workload is invalid: "
            "spec.podSets[0].minCount: Invalid value: 2: must be less than or equal to count (1)");
    i = wait_req(f, 0, is_admission, "small", 5000);
    CHECK(f, i >= 0, "team/small was not admitted to the valid ClusterQueue");
    serve_for(f, 600);
    size_t n = count_req(f, 0, f->s->nreqs, is_admission, "big");
    CHECK(f, n == 0, "team/big was admitted by borrowing from an invalid ClusterQueue");
    n = count_req(f, 0, f->s->nreqs, is_admission, "into-neg");
    CHECK(f, n == 0, "team/into-neg was admitted to an invalid ClusterQueue");
    n = count_req(f, 0, f->s->nreqs, is_admission, "minover");
    CHECK(f, n == 0, "team/minover (minCount > count) was admitted");
    stop(f);
}

/* ud: a substring. A POST of an Event whose body contains it. */
static int is_event_with(const sreq *q, const void *ud)
{
    return strcmp(q->method, "POST") == 0 && strstr(q->path, "/events") && q->body &&
           strstr(q->body, ud);
}

/* 10. Objects nested deeper than 64 (an unknown field nearly
 * CU_JSON_MAX_DEPTH deep in a pod template) are read and admitted, and one the controller cannot decode
 * is left out, reported once (an Event, a condition on it), while the
 * rest is synced and admitted. */
static void test_deep_and_undecodable(void **state)
{
    fx *f = *state;
    base_world(f->s);
    add_workload(f->s, "a", "lq", "1", NULL, 1);
    /* as deep as an API server serves (with the path to the field) */
    char *d = deep_json(CU_JSON_MAX_DEPTH - 16);
    size_t n = strlen(d) + 2048;
    char *b = malloc(n);
    assert_non_null(b);
    snprintf(b, n,
             "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Workload\",\"metadata\":{"
             "\"name\":\"deep\",\"namespace\":\"team\",\"uid\":\"wl-deep\","
             "\"creationTimestamp\":\"2025-01-01T00:00:02Z\"},"
             "\"spec\":{\"queueName\":\"lq\",\"active\":true,\"podSets\":[{\"name\":\"main\","
             "\"count\":1,\"template\":{\"spec\":{\"deepField\":%s,"
             "\"containers\":[{\"name\":\"c\",\"image\":\"busybox\",\"resources\":{\"requests\":"
             "{\"cpu\":\"1\"}}}]}}}]}}",
             d);
    srv_add(f->s, R_WL, b);
    srv_add(f->s, R_WL,
            "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Workload\",\"metadata\":{"
            "\"name\":\"bad\",\"namespace\":\"team\",\"uid\":\"wl-bad\","
            "\"creationTimestamp\":\"2025-01-01T00:00:03Z\"},"
            "\"spec\":{\"queueName\":\"lq\",\"podSets\":\"everything\"}}");
    snprintf(b, n,
             "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"sample-job\","
             "\"namespace\":\"team\",\"uid\":\"" JOB_UID "\","
             "\"creationTimestamp\":\"2025-01-01T00:00:00Z\","
             "\"labels\":{\"kueue.x-k8s.io/queue-name\":\"lq\"}},"
             "\"spec\":{\"suspend\":true,\"parallelism\":1,\"completions\":1,\"template\":{"
             "\"spec\":{\"restartPolicy\":\"Never\",\"deepField\":%s,"
             "\"containers\":[{\"name\":\"c\",\"image\":\"busybox\",\"resources\":{\"requests\":"
             "{\"cpu\":\"1\"}}}]}}},\"status\":{}}",
             d);
    srv_add(f->s, R_JOB, b);
    free(b);
    free(d);
    start(f);
    CHECK(f, wait_req(f, 0, is_admission, "a", 5000) >= 0, "team/a was not admitted");
    CHECK(f, wait_req(f, 0, is_admission, "deep", 5000) >= 0,
          "team/deep (a field nearly 10000 deep) was not admitted");
    const char *wls = "/apis/kueue.x-k8s.io/v1beta2/namespaces/team/workloads";
    long p = wait_req(f, 0, is_post_to, wls, 5000);
    CHECK(f, p >= 0, "no Workload created for the Job with a field nearly 10000 deep");
    EQS(f, f->s->reqs[p].j, "metadata.name", JOB_WL);
    /* the undecodable one: a condition and one Event */
    long c = -1;
    for (double end = now_s() + 5; c < 0 && now_s() < end;) {
        serve_for(f, 50);
        for (size_t i = 0; i < f->s->nreqs && c < 0; i++) {
            sreq *q = &f->s->reqs[i];
            if (strcmp(q->method, "PATCH") == 0 && ends_with(q->path, "/workloads/bad/status") &&
                cond(q->j, "cueue.dev/DecodeFailed"))
                c = (long)i;
        }
    }
    CHECK(f, c >= 0, "no condition cueue.dev/DecodeFailed written on team/bad");
    EQS(f, cond(f->s->reqs[c].j, "cueue.dev/DecodeFailed"), "status", "True");
    EQS(f, cond(f->s->reqs[c].j, "cueue.dev/DecodeFailed"), "reason", "DecodeFailed");
    serve_for(f, 1500);
    size_t ne = count_req(f, 0, f->s->nreqs, is_event_with, "\"DecodeFailed\"");
    CHECK(f, ne == 1, "%zu DecodeFailed Events, want 1", ne);
    size_t nc = 0;
    for (size_t i = 0; i < f->s->nreqs; i++)
        nc += strcmp(f->s->reqs[i].method, "PATCH") == 0 &&
              ends_with(f->s->reqs[i].path, "/workloads/bad/status");
    CHECK(f, nc == 1, "%zu condition writes on team/bad, want 1", nc);
    stop(f);
}

/* 11. A Workload creation refused with a 4xx that may pass later (413)
 * is retried with growing delays, not every cycle. */
static void test_refused_create_backs_off(void **state)
{
    fx *f = *state;
    base_world(f->s);
    add_job(f->s, "lq");
    const char *wls = "/apis/kueue.x-k8s.io/v1beta2/namespaces/team/workloads";
    srv_fault(f->s, "POST", "/workloads", 413, -1, 0);
    start(f);
    CHECK(f, wait_req(f, 0, is_post_to, wls, 5000) >= 0, "no Workload creation");
    serve_for(f, 3000);
    double t[64];
    size_t n = 0;
    for (size_t i = 0; i < f->s->nreqs && n < 64; i++)
        if (is_post_to(&f->s->reqs[i], wls))
            t[n++] = f->s->reqs[i].t;
    CHECK(f, n >= 3 && n <= 7, "%zu creations in ~3 s, want 3..7 (200 ms doubling)", n);
    CHECK(f, t[n - 1] - t[n - 2] > 2.5 * (t[1] - t[0]),
          "delays do not grow: first %.3f s, last %.3f s", t[1] - t[0], t[n - 1] - t[n - 2]);
    stop(f);
}

/* 12. A creation refused for good (422) is sent once, reported once on the
 * Job (a Warning Event), and sent again when the Job changes. */
static void test_refused_create_reported_once(void **state)
{
    fx *f = *state;
    base_world(f->s);
    add_job(f->s, "lq");
    const char *wls = "/apis/kueue.x-k8s.io/v1beta2/namespaces/team/workloads";
    srv_fault(f->s, "POST", "/workloads", 422, -1, 0);
    start(f);
    CHECK(f, wait_req(f, 0, is_post_to, wls, 5000) >= 0, "no Workload creation");
    serve_for(f, 2000);
    size_t n = count_req(f, 0, f->s->nreqs, is_post_to, wls);
    CHECK(f, n == 1, "%zu creations refused with 422, want 1", n);
    size_t ne = count_req(f, 0, f->s->nreqs, is_event_with, "FailedCreateWorkload");
    CHECK(f, ne == 1, "%zu FailedCreateWorkload Events, want 1", ne);
    /* a status change of the Job asks for nothing new: not sent again */
    size_t from = f->s->nreqs;
    srv_update(f->s, R_JOB, "team/sample-job", "{\"status\":{\"active\":0}}", 1);
    serve_for(f, 1000);
    CHECK(f, count_req(f, from, f->s->nreqs, is_post_to, wls) == 0,
          "sent again after a change that does not touch the Workload");
    /* a change of what it asks for: sent again */
    srv_clear_faults(f->s);
    srv_update(f->s, R_JOB, "team/sample-job",
               "{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\","
               "\"image\":\"busybox\",\"resources\":{\"requests\":{\"cpu\":\"2\"}}}]}}}}",
               1);
    CHECK(f, wait_req(f, from, is_post_to, wls, 5000) >= 0, "not sent again after the Job changed");
    stop(f);
}

/* 13. A queue-name label that is a valid label value but no LocalQueue
 * name (Team_A): nothing is sent, one Warning Event says why. */
static void test_invalid_queue_name_not_sent(void **state)
{
    fx *f = *state;
    base_world(f->s);
    add_job(f->s, "Team_A");
    start(f);
    long e = wait_req(f, 0, is_event_with, "FailedCreateWorkload", 5000);
    CHECK(f, e >= 0, "no FailedCreateWorkload Event for queue-name Team_A");
    CHECK(f, strstr(f->s->reqs[e].body, "spec.queueName") != NULL, "the Event does not say why: %s",
          f->s->reqs[e].body);
    serve_for(f, 1500);
    const char *wls = "/apis/kueue.x-k8s.io/v1beta2/namespaces/team/workloads";
    size_t n = count_req(f, 0, f->s->nreqs, is_post_to, wls);
    CHECK(f, n == 0, "%zu Workload creations for queue-name Team_A, want 0", n);
    size_t ne = count_req(f, 0, f->s->nreqs, is_event_with, "FailedCreateWorkload");
    CHECK(f, ne == 1, "%zu FailedCreateWorkload Events, want 1", ne);
    stop(f);
}

/* ud: the Workload's name. A /status patch with Evicted=True. */
static int is_eviction(const sreq *q, const void *ud)
{
    char suffix[300];
    snprintf(suffix, sizeof(suffix), "/workloads/%s/status", (const char *)ud);
    const char *st = jstrp(cond(q->j, "Evicted"), "status");
    return strcmp(q->method, "PATCH") == 0 && ends_with(q->path, suffix) && st &&
           strcmp(st, "True") == 0;
}

/* 15. A Workload without a Job, preempted while the answer to its
 * eviction write is slow: the server applies the write and the watch
 * brings Evicted=True before the answer. Its quota is still released
 * (admission cleared, Requeued) once the answer is in, and the preemptor
 * admitted. Before, the release was tried while the eviction write was in
 * flight, dropped, and never tried again: the preemptor waited forever. */
static void test_bare_preemption_slow_answer(void **state)
{
    fx *f = *state;
    srv *s = f->s;
    base_world_cq(s, "\"preemption\":{\"withinClusterQueue\":\"LowerPriority\"},");
    static const char wl[] =
        "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Workload\",\"metadata\":{"
        "\"name\":\"%s\",\"namespace\":\"team\",\"uid\":\"wl-%s\","
        "\"creationTimestamp\":\"2025-01-01T00:00:0%dZ\"},"
        "\"spec\":{\"queueName\":\"lq\",\"active\":true,\"priority\":%d,\"podSets\":[{"
        "\"name\":\"main\",\"count\":1,\"template\":{\"spec\":{\"containers\":[{\"name\":"
        "\"c\",\"image\":\"busybox\",\"resources\":{\"requests\":{\"cpu\":\"4\"}}}]}}}]}}";
    char b[2048];
    snprintf(b, sizeof(b), wl, "low", "low", 1, 0);
    srv_add(s, R_WL, b);
    set_admitted(s, "team/low", 0, 1);
    snprintf(b, sizeof(b), wl, "high", "high", 2, 100);
    srv_add(s, R_WL, b);
    /* the first write to low's status (its eviction) is answered 1.5 s
     * after the store applied it */
    s->delays[s->ndelays++] = (delay){ "/apis/kueue.x-k8s.io/v1beta2/namespaces/team/workloads/"
                                       "low/status",
                                       1500, 1, "PATCH" };
    start(f);
    long e = wait_req(f, 0, is_eviction, "low", 5000);
    CHECK(f, e >= 0, "team/low was not evicted for team/high");
    long r = wait_req(f, (size_t)e + 1, is_pending_write, "low", 6000);
    CHECK(f, r >= 0, "the quota of evicted team/low was never released");
    CHECK(f, json_object_is_type(jpath(s->reqs[r].j, "status.admission"), json_type_null),
          "the release of team/low does not clear status.admission");
    EQS(f, cond(s->reqs[r].j, "Requeued"), "status", "True");
    CHECK(f, s->reqs[r].t >= s->reqs[e].ta, "the release was sent before the eviction's answer");
    long h = wait_req(f, (size_t)r, is_admission, "high", 5000);
    CHECK(f, h >= 0, "team/high was not admitted after team/low released its quota");
    stop(f);
}

/* ud: a path. A PATCH of it. */
static int is_patch_of(const sreq *q, const void *ud)
{
    return strcmp(q->method, "PATCH") == 0 && strcmp(q->path, ud) == 0;
}

/* 16. A Job that ran, whose Workload is evicted, is stopped the way
 * kube-apiserver allows: it refuses a change to the template's
 * nodeSelector or tolerations unless the Job is suspended and has no
 * status.startTime. So: suspend alone, then clear startTime (status),
 * then restore the template; the quota is released once its pods are
 * gone. */
static void test_stop_job_in_steps(void **state)
{
    fx *f = *state;
    srv *s = f->s;
    base_world(s);
    srv_add(s, R_JOB,
            "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"sample-job\","
            "\"namespace\":\"team\",\"uid\":\"" JOB_UID "\","
            "\"creationTimestamp\":\"2025-01-01T00:00:00Z\","
            "\"labels\":{\"kueue.x-k8s.io/queue-name\":\"lq\"}},"
            "\"spec\":{\"suspend\":false,\"parallelism\":1,\"completions\":1,\"template\":{"
            "\"spec\":{\"nodeSelector\":{\"disk\":\"ssd\",\"pool\":\"p1\"},"
            "\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"c\",\"image\":\"busybox\","
            "\"resources\":{\"requests\":{\"cpu\":\"4\"}}}]}}},"
            "\"status\":{\"startTime\":\"2025-01-01T00:00:06Z\",\"active\":1}}");
    add_job_workload(s, "lq");
    set_admitted(s, "team/" JOB_WL, 1, 1);
    const char *jp = "/apis/batch/v1/namespaces/team/jobs/sample-job";
    const char *jsp = "/apis/batch/v1/namespaces/team/jobs/sample-job/status";
    start(f);
    long a = wait_req(f, 0, is_patch_of, jp, 5000);
    CHECK(f, a >= 0, "the Job of the evicted Workload was not suspended");
    sreq *q = &s->reqs[a];
    CHECK(f, json_object_get_boolean(jpath(q->j, "spec.suspend")), "not a suspension: %s", q->body);
    CHECK(f, !jpath(q->j, "spec.template"), "the suspension changes the template: %s", q->body);
    long b = wait_req(f, (size_t)a + 1, is_patch_of, jsp, 5000);
    CHECK(f, b >= 0, "the suspended Job's startTime was not cleared");
    CHECK(f,
          json_object_is_type(jpath(s->reqs[b].j, "status.startTime"), json_type_null) &&
              jpath(s->reqs[b].j, "status") &&
              json_object_object_length(jpath(s->reqs[b].j, "status")) == 1,
          "want a patch clearing only status.startTime: %s", s->reqs[b].body);
    long c = wait_req(f, (size_t)b + 1, is_patch_of, jp, 5000);
    CHECK(f, c >= 0, "the stopped Job's template was not restored");
    q = &s->reqs[c];
    CHECK(f,
          json_object_is_type(jpath(q->j, "spec.template.spec.nodeSelector.pool"), json_type_null),
          "the restore does not remove the flavor's label: %s", q->body);
    EQS(f, q->j, "spec.template.spec.nodeSelector.disk", "ssd");
    obj *job = store_find(s, R_JOB, "team/sample-job");
    CHECK(f,
          !jpath(job->o, "spec.template.spec.nodeSelector.pool") &&
              !jpath(job->o, "status.startTime"),
          "stored Job: %s", json_object_to_json_string(job->o));
    /* its pod still runs: the quota stays held */
    serve_for(f, 500);
    size_t n = count_req(f, 0, s->nreqs, is_pending_write, JOB_WL);
    CHECK(f, n == 0, "the quota was released while the Job still had an active pod");
    n = count_req(f, (size_t)c + 1, s->nreqs, is_patch_of, jp) +
        count_req(f, (size_t)c + 1, s->nreqs, is_patch_of, jsp);
    CHECK(f, n == 0, "%zu more writes of the stopped Job", n);
    size_t mark = s->nreqs;
    srv_update(s, R_JOB, "team/sample-job", "{\"status\":{\"active\":0}}", 1);
    long r = wait_req(f, mark, is_pending_write, JOB_WL, 5000);
    CHECK(f, r >= 0, "the quota was not released once the Job's pods were gone");
    stop(f);
}

/* ud: unused. A PATCH of ClusterQueue cq's status. */
static int is_cq_status_patch(const sreq *q, const void *ud)
{
    (void)ud;
    return strcmp(q->method, "PATCH") == 0 &&
           strncmp(q->path, "/apis/kueue.x-k8s.io/v1beta2/clusterqueues/cq/status",
                   strlen("/apis/kueue.x-k8s.io/v1beta2/clusterqueues/cq/status")) == 0;
}

/* 17. The queue status is one JSON merge patch of the whole status (an
 * apply cost the API server far more under load), with no force flag
 * (kube-apiserver refuses it on other patch types); its body does not
 * escape '/' (apiVersion has one; the body was YAML to the server once). */
static void test_queue_status_merge_patch(void **state)
{
    fx *f = *state;
    base_world(f->s);
    add_workload(f->s, "a", "lq", "1", NULL, 1);
    start(f);
    long i = wait_req(f, 0, is_cq_status_patch, NULL, 5000);
    CHECK(f, i >= 0, "no status write of ClusterQueue cq");
    const sreq *q = &f->s->reqs[i];
    CHECK(f, q->ctype && strcmp(q->ctype, "application/merge-patch+json") == 0,
          "ClusterQueue status written as %s", q->ctype ? q->ctype : "(none)");
    CHECK(f, !strstr(q->path, "force="), "force flag on a merge patch: %s", q->path);
    const char *b = q->body;
    CHECK(f,
          b && strstr(b, "\"flavorsUsage\"") && strstr(b, "\"conditions\"") &&
              strstr(b, "\"pendingWorkloads\""),
          "not the whole status: %s", b ? b : "(none)");
    CHECK(f, !strstr(b, "\\/"), "the status body escapes '/': %s", b);
    stop(f);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_creates_workload_for_job, setup, teardown),
        cmocka_unit_test_setup_teardown(test_admits_with_precondition, setup, teardown),
        cmocka_unit_test_setup_teardown(test_conflict_retries_with_new_rv, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pending_reason, setup, teardown),
        cmocka_unit_test_setup_teardown(test_starts_job_when_admitted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_admission_checks_two_phase, setup, teardown),
        cmocka_unit_test_setup_teardown(test_starts_job_once_when_watch_lags, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restarts_job_evicted_before_start_seen, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_evicted_job_stopped_in_steps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_quota_not_oversold, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restart_counts_held_quota, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_write_before_sync, setup, teardown),
        cmocka_unit_test_setup_teardown(test_invalid_cluster_queue, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deep_and_undecodable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused_create_backs_off, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused_create_reported_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_invalid_queue_name_not_sent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bare_preemption_slow_answer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stop_job_in_steps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_queue_status_merge_patch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pod_group_admitted_whole, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tas_ungater_ranks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tas_ungater_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tas_ungater_offset, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tas_ungater_bad_offset, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
