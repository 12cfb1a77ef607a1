/*
 * cu_store.c - the embedded cluster's object store (see cu_store.h).
 *
 * Layout and invariants:
 *  - A served type (rt_ent, whose first member is the public cu_rtype)
 *    points to a stored resource (res_t). A resource holds its objects
 *    once, at its storage version; the versions of a multi-version CRD
 *    share one res_t. rt_ent and res_t are never freed before the store:
 *    a deleted CRD only marks its types as not served, so borrowed
 *    cu_rtype pointers stay valid.
 *  - An object (ent) is stored as its serialized JSON in an immutable,
 *    reference-counted string (rstr). Readers take a reference under the
 *    lock and parse after releasing it; the watch history shares the same
 *    strings. Every change replaces the string, never edits it.
 *  - s->rv is the global resourceVersion counter; every change (create,
 *    update, delete) increments it once and produces exactly one event in
 *    the history ring, whose RVs therefore strictly increase. Every event
 *    with rv > s->hist_rv is in the ring (s->hist_rv only grows: when the
 *    ring overflows or is compacted).
 *  - Indexes: per resource, a hash of "ns/name" (or "name") -> ent and a
 *    vector sorted lazily by that key (etcd order) for LIST; globally
 *    uid -> ent, owner uid -> dependents, namespace -> object count.
 *  - One mutex guards everything; hooks run after it is released, with
 *    deep copies; the backend (cu_persist.c) is written under the lock so
 *    the database sees changes in RV order.
 */
#include <ctype.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "cu_schema.h"
#include "cu_store.h"
#include "cu_names.h"
#include "cu_objmeta.h"

#define KEY_MAX 600

/* ------------------------------------------------------------------ */
/* reference-counted immutable strings                                  */

typedef struct cu_rstr {
    atomic_int refs;
    size_t len;
    char s[];
} rstr;

static rstr *rstr_new(const char *s, size_t n)
{
    rstr *r = malloc(sizeof(*r) + n + 1);
    if (!r) return NULL;
    atomic_init(&r->refs, 1);
    r->len = n;
    memcpy(r->s, s, n);
    r->s[n] = '\0';
    return r;
}

static rstr *rstr_ref(rstr *r)
{
    if (r) atomic_fetch_add(&r->refs, 1);
    return r;
}

static void rstr_unref(rstr *r)
{
    if (r && atomic_fetch_sub(&r->refs, 1) == 1) free(r);
}

const char *cu_rstr_data(const cu_rstr *r, size_t *len)
{
    if (len) *len = r ? r->len : 0;
    return r ? r->s : "";
}

cu_rstr *cu_rstr_new(const char *s, size_t n) { return rstr_new(s, n); }

void cu_rstr_unref(cu_rstr *r) { rstr_unref(r); }

/* ------------------------------------------------------------------ */
/* string -> pointer hash map (open addressing, keys borrowed)          */

typedef struct hslot { const char *key; void *val; } hslot;
typedef struct hmap { hslot *t; size_t cap, n; } hmap;

static uint64_t hstr(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++) { h ^= (unsigned char)*s; h *= 1099511628211ULL; }
    return h;
}

static void *hm_get(const hmap *m, const char *k)
{
    if (!m->cap) return NULL;
    size_t i = hstr(k) & (m->cap - 1);
    while (m->t[i].key) {
        if (strcmp(m->t[i].key, k) == 0) return m->t[i].val;
        i = (i + 1) & (m->cap - 1);
    }
    return NULL;
}

static int hm_grow(hmap *m)
{
    size_t ncap = m->cap ? m->cap * 2 : 16;
    hslot *nt = calloc(ncap, sizeof(*nt));
    if (!nt) return -1;
    for (size_t j = 0; j < m->cap; j++) {
        if (!m->t[j].key) continue;
        size_t i = hstr(m->t[j].key) & (ncap - 1);
        while (nt[i].key) i = (i + 1) & (ncap - 1);
        nt[i] = m->t[j];
    }
    free(m->t);
    m->t = nt;
    m->cap = ncap;
    return 0;
}

/* Inserts or replaces; k must stay valid while it is in the map. */
static int hm_put(hmap *m, const char *k, void *v)
{
    if ((m->n + 1) * 4 >= m->cap * 3 && hm_grow(m)) return -1;
    size_t i = hstr(k) & (m->cap - 1);
    while (m->t[i].key) {
        if (strcmp(m->t[i].key, k) == 0) { m->t[i].key = k; m->t[i].val = v; return 0; }
        i = (i + 1) & (m->cap - 1);
    }
    m->t[i].key = k;
    m->t[i].val = v;
    m->n++;
    return 0;
}

static void *hm_del(hmap *m, const char *k)
{
    if (!m->cap) return NULL;
    size_t mask = m->cap - 1, i = hstr(k) & mask;
    while (m->t[i].key && strcmp(m->t[i].key, k) != 0) i = (i + 1) & mask;
    if (!m->t[i].key) return NULL;
    void *v = m->t[i].val;
    m->t[i].key = NULL;
    m->n--;
    /* backward-shift deletion keeps probe chains intact */
    size_t j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (!m->t[j].key) break;
        size_t home = hstr(m->t[j].key) & mask;
        int move = (i <= j) ? (home <= i || home > j) : (home <= i && home > j);
        if (move) { m->t[i] = m->t[j]; m->t[j].key = NULL; i = j; }
    }
    return v;
}

static void hm_free(hmap *m) { free(m->t); m->t = NULL; m->cap = m->n = 0; }

/* ------------------------------------------------------------------ */
/* types                                                                */

enum { K_OTHER, K_NS, K_POD, K_NODE, K_JOB, K_CRD, K_EVENT, K_SECRET, K_CR };

typedef struct res_t res_t;
typedef struct ent ent;

typedef struct rt_ent {
    cu_rtype pub;                 /* first member: cu_rtype * <-> rt_ent * */
    res_t *res;
    int served;
    int gen;                      /* objects carry metadata.generation */
    int uncond;                   /* PUT without resourceVersion allowed */
    int kid;                      /* K_* */
    const char *const *fields;    /* extra field selector labels, NULL-terminated */
} rt_ent;

struct res_t {
    char *qname;                  /* "pods", "jobs.batch" */
    char *group, *plural;
    rt_ent *storage_rt;
    int namespaced, kid, multi;   /* multi: more than one version ever */
    hmap objs;
    ent **vec; size_t n, cap; int sorted;
    int64_t last_rv;
    int crd_terminating;
    char *crd_name;               /* the CRD object's name (CRs only) */
};

struct ent {
    res_t *res;
    char *key;                    /* "ns/name" or "name", then NUL, ns, NUL */
    size_t nslen;
    const char *ns, *name;
    char uid[48];
    int64_t rv;
    rstr *data;
    char **owners; size_t nowners;
    int terminating;
    size_t vidx;
};

typedef struct deplist { char *uid; ent **v; size_t n, cap; } deplist;
typedef struct nscount { char *ns; size_t n; } nscount;

typedef struct sev {
    int64_t rv;
    res_t *res;
    const char *type;
    char *ns;                     /* one block: ns, NUL, name, NUL */
    const char *name;
    rstr *obj, *old;
} sev;

/* label selector requirement */
enum { L_EXISTS, L_NOTEXISTS, L_EQ, L_NE, L_IN, L_NOTIN, L_GT, L_LT };
typedef struct lreq { char *key; int op; char **vals; size_t nvals; } lreq;
typedef struct freq { char *label; char *value; int neg; } freq;
typedef struct selector {
    lreq *l; size_t nl;
    freq *f; size_t nf;
} selector;

struct cu_watch {
    cu_store *s;
    rt_ent *rt;
    char *ns;
    selector sel;
    int bookmarks, done, sent_bookmark;
    int ending;                   /* finish after the pending events (CRD deleted) */
    rstr **init; size_t ninit, iinit;   /* the initial list: owned refs, read
                                          without the lock (one reader) */
    int init_matched;             /* the selector was decided at open time */
    int meta_only;                /* the selector names only name and namespace */
    uint64_t pos;
    int64_t min_rv, last_rv;
    cu_watch *prev, *next;
};

typedef struct hook { cu_store_hook fn; void *ud; } hook;

struct cu_store {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    cu_clock clock;
    uint64_t rng;
    int64_t rv;
    rt_ent **rts; size_t nrts, caprts;
    res_t **res; size_t nres, capres;
    hmap uids, deps, nss;
    sev *ring; size_t hcap; uint64_t head, tail; int64_t hist_rv;
    size_t hbytes, hbytes_max;    /* bytes the ring's events hold, and their cap */
    cu_watch *watchers;
    hook *hooks; size_t nhooks;
    cu_store_backend be; int has_be; int be_errors;
    void **grave; size_t ngrave, capgrave;
    json_object **jgrave; size_t njgrave, capjgrave;
    cu_schema_rx **rxgrave; size_t nrxgrave;
    res_t *r_ns;
};

/* pending work of one operation: hook calls and GC items */
typedef struct pend { rt_ent *rt; const char *type; rstr *obj; } pend;
typedef struct opctx {
    pend *p; size_t np, capp;
    char **work; size_t nwork, capwork;
    int removed;
} opctx;

static const char EV_ADDED[] = "ADDED", EV_MODIFIED[] = "MODIFIED", EV_DELETED[] = "DELETED";

/* ------------------------------------------------------------------ */
/* small helpers                                                        */

static int64_t os_now_ms(void *ud)
{
    (void)ud;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void now_str(cu_store *s, char *buf, size_t n)
{
    cu_time_format(cu_clock_now(&s->clock), buf, n);
}

static uint64_t rng_next(cu_store *s)
{
    uint64_t x = s->rng;
    x ^= x >> 12; x ^= x << 25; x ^= x >> 27;
    s->rng = x;
    return x * 2685821657736338717ULL;
}

static void gen_uid(cu_store *s, char *out)
{
    unsigned char b[16];
    uint64_t a = rng_next(s), c = rng_next(s);
    memcpy(b, &a, 8);
    memcpy(b + 8, &c, 8);
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
    snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
             b[13], b[14], b[15]);
}

static char *xstrdup(const char *s) { return s ? strdup(s) : NULL; }

static void grave_add(cu_store *s, void *p)
{
    if (!p) return;
    if (s->ngrave == s->capgrave) {
        size_t nc = s->capgrave ? s->capgrave * 2 : 32;
        void **ng = realloc(s->grave, nc * sizeof(*ng));
        if (!ng) return; /* leak rather than free memory a reader may hold */
        s->grave = ng;
        s->capgrave = nc;
    }
    s->grave[s->ngrave++] = p;
}

static void jgrave_add(cu_store *s, json_object *o)
{
    if (!o) return;
    if (s->njgrave == s->capjgrave) {
        size_t nc = s->capjgrave ? s->capjgrave * 2 : 16;
        json_object **ng = realloc(s->jgrave, nc * sizeof(*ng));
        if (!ng) return;
        s->jgrave = ng;
        s->capjgrave = nc;
    }
    s->jgrave[s->njgrave++] = o;
}

/* An old schema's compiled patterns stay with it until the store goes. */
static void rxgrave_add(cu_store *s, cu_schema_rx *rx)
{
    if (!rx) return;
    cu_schema_rx **ng = realloc(s->rxgrave, (s->nrxgrave + 1) * sizeof(*ng));
    if (!ng) return; /* leak rather than free patterns a reader may use */
    s->rxgrave = ng;
    s->rxgrave[s->nrxgrave++] = rx;
}

static json_object *jparse(const char *s, size_t n)
{
    json_tokener *tok = json_tokener_new_ex(CU_JSON_MAX_DEPTH + 1);
    if (!tok) return NULL;
    json_object *o = json_tokener_parse_ex(tok, s, (int)n);
    if (json_tokener_get_error(tok) != json_tokener_success) { json_object_put(o); o = NULL; }
    json_tokener_free(tok);
    return o;
}

static json_object *jparse_r(const rstr *r) { return jparse(r->s, r->len); }

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

static void jset_str(json_object *o, const char *k, const char *v)
{
    json_object_object_add(o, k, json_object_new_string(v));
}

static json_object *jmeta(json_object *o)
{
    json_object *m = jget(o, "metadata");
    if (!m || !json_object_is_type(m, json_type_object)) {
        m = json_object_new_object();
        json_object_object_add(o, "metadata", m);
    }
    return m;
}

/* Walks a dotted path ("spec.nodeName"). Borrowed. */
static json_object *jpath(json_object *o, const char *path)
{
    char seg[128];
    while (o && *path) {
        const char *dot = strchr(path, '.');
        size_t n = dot ? (size_t)(dot - path) : strlen(path);
        if (n >= sizeof(seg)) return NULL;
        memcpy(seg, path, n);
        seg[n] = '\0';
        o = jget(o, seg);
        path += n + (dot ? 1 : 0);
    }
    return o;
}

static int jarr_has_str(json_object *a, const char *s)
{
    if (!a || !json_object_is_type(a, json_type_array)) return 0;
    for (size_t i = 0; i < json_object_array_length(a); i++) {
        json_object *v = json_object_array_get_idx(a, i);
        if (json_object_is_type(v, json_type_string) && strcmp(json_object_get_string(v), s) == 0)
            return 1;
    }
    return 0;
}

static size_t jarr_len(json_object *a)
{
    return a && json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
}

static int parse_rv(const char *s, int64_t *out)
{
    if (!s || !*s) return -1;
    int64_t v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9' || v > (INT64_MAX - 9) / 10) return -1;
        v = v * 10 + (*p - '0');
    }
    *out = v;
    return 0;
}

static void make_key(char *buf, size_t n, const char *ns, const char *name)
{
    if (ns && *ns) snprintf(buf, n, "%s/%s", ns, name);
    else snprintf(buf, n, "%s", name);
}

/* ------------------------------------------------------------------ */
/* statuses                                                             */

cu_err cu_status_set(cu_status *st, int code, const char *reason, const char *fmt, ...)
{
    cu_err e;
    switch (code) {
    case 404: e = CU_ENOTFOUND; break;
    case 409: e = (reason && strcmp(reason, "AlreadyExists") == 0) ? CU_EEXIST : CU_ECONFLICT; break;
    case 410: e = CU_EGONE; break;
    case 429: case 500: case 503: case 504: e = CU_ETRANSIENT; break;
    default: e = CU_EINVAL; break;
    }
    if (!st) return e;
    memset(st, 0, sizeof(*st));
    st->code = code;
    snprintf(st->reason, sizeof(st->reason), "%s", reason ? reason : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->message, sizeof(st->message), fmt, ap);
    va_end(ap);
    return e;
}

json_object *cu_status_json(const cu_status *st)
{
    json_object *o = json_object_new_object();
    jset_str(o, "kind", "Status");
    jset_str(o, "apiVersion", "v1");
    json_object_object_add(o, "metadata", json_object_new_object());
    jset_str(o, "status", st->code >= 200 && st->code < 300 ? "Success" : "Failure");
    jset_str(o, "message", st->message);
    if (st->reason[0]) jset_str(o, "reason", st->reason);
    if (st->name[0] || st->group[0] || st->kind[0] || st->ncauses) {
        json_object *d = json_object_new_object();
        if (st->name[0]) jset_str(d, "name", st->name);
        if (st->group[0]) jset_str(d, "group", st->group);
        if (st->kind[0]) jset_str(d, "kind", st->kind);
        if (st->ncauses) {
            json_object *ca = json_object_new_array();
            for (size_t i = 0; i < st->ncauses && i < 32; i++) {
                json_object *c = json_object_new_object();
                jset_str(c, "reason", st->causes[i].type);
                jset_str(c, "message", st->causes[i].message);
                jset_str(c, "field", st->causes[i].field);
                json_object_array_add(ca, c);
            }
            json_object_object_add(d, "causes", ca);
        }
        json_object_object_add(o, "details", d);
    }
    json_object_object_add(o, "code", json_object_new_int(st->code));
    return o;
}

static void st_details(cu_status *st, const char *kind, const char *name, const char *group)
{
    if (!st) return;
    /* details only: longer values are cut, never overflow */
    snprintf(st->kind, sizeof(st->kind), "%.*s", (int)sizeof(st->kind) - 1, kind ? kind : "");
    snprintf(st->name, sizeof(st->name), "%.*s", (int)sizeof(st->name) - 1, name ? name : "");
    snprintf(st->group, sizeof(st->group), "%.*s", (int)sizeof(st->group) - 1, group ? group : "");
}

static cu_err err_notfound(cu_status *st, const rt_ent *rt, const char *name)
{
    cu_err e = cu_status_set(st, 404, "NotFound", "%s \"%s\" not found", rt->res->qname, name);
    st_details(st, rt->pub.resource, name, rt->pub.group);
    return e;
}

static cu_err err_not_served(cu_status *st)
{
    return cu_status_set(st, 404, "NotFound", "the server could not find the requested resource");
}

static cu_err err_conflict(cu_status *st, const rt_ent *rt, const char *name)
{
    cu_err e = cu_status_set(st, 409, "Conflict",
                             "Operation cannot be fulfilled on %s \"%s\": the object has been "
                             "modified; please apply your changes to the latest version and try again",
                             rt->res->qname, name);
    st_details(st, rt->pub.resource, name, rt->pub.group);
    return e;
}

/* field errors, reported as kube-apiserver's 422 Invalid */
typedef struct ferrs { cu_schema_err e[32]; size_t n, total; } ferrs;

static void ferr_add(ferrs *fe, const char *field, const char *type, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void ferr_add(ferrs *fe, const char *field, const char *type, const char *fmt, ...)
{
    fe->total++;
    if (fe->n >= 32) return;
    va_list ap;
    va_start(ap, fmt);
    cu_schema_err_vadd(fe->e, 32, &fe->n, field, type, fmt, ap);
    va_end(ap);
}

static cu_err err_invalid_gk(cu_status *st, const char *kind, const char *group, const char *name,
                             const ferrs *fe)
{
    char qk[256];
    if (group[0]) snprintf(qk, sizeof(qk), "%s.%s", kind, group);
    else snprintf(qk, sizeof(qk), "%s", kind);
    cu_err e = cu_status_set(st, 422, "Invalid", "%s", "");
    if (!st) return e;
    cu_buf b;
    cu_buf_init(&b, sizeof(st->message) * 4);
    cu_buf_printf(&b, "%s \"%s\" is invalid: ", qk, name);
    if (fe->n > 1) cu_buf_puts(&b, "[");
    for (size_t i = 0; i < fe->n; i++) {
        if (i) cu_buf_puts(&b, ", ");
        if (fe->e[i].field[0]) cu_buf_printf(&b, "%s: %s", fe->e[i].field, fe->e[i].message);
        else cu_buf_puts(&b, fe->e[i].message);
    }
    if (fe->n > 1) cu_buf_puts(&b, "]");
    snprintf(st->message, sizeof(st->message), "%s", cu_buf_str(&b));
    cu_buf_free(&b);
    st_details(st, kind, name, group);
    for (size_t i = 0; i < fe->n && i < 32; i++) {
        snprintf(st->causes[i].type, sizeof(st->causes[i].type), "%s", fe->e[i].type);
        snprintf(st->causes[i].field, sizeof(st->causes[i].field), "%s", fe->e[i].field);
        snprintf(st->causes[i].message, sizeof(st->causes[i].message), "%s", fe->e[i].message);
    }
    st->ncauses = fe->n < 32 ? fe->n : 32;
    return e;
}

static cu_err err_invalid(cu_status *st, const rt_ent *rt, const char *name, const ferrs *fe)
{
    return err_invalid_gk(st, rt->pub.kind, rt->pub.group, name, fe);
}

static cu_err err_invalid1(cu_status *st, const rt_ent *rt, const char *name, const char *field,
                           const char *type, const char *msg)
{
    ferrs fe;
    fe.n = fe.total = 0;
    ferr_add(&fe, field, type, "%s", msg);
    return err_invalid(st, rt, name, &fe);
}

/* ------------------------------------------------------------------ */
/* registry                                                             */

static const char *const F_POD[] = {"spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
                                    "spec.serviceAccountName", "spec.hostNetwork", "status.phase",
                                    "status.podIP", "status.nominatedNodeName", NULL};
static const char *const F_NODE[] = {"spec.unschedulable", NULL};
static const char *const F_EVENT[] = {"involvedObject.kind", "involvedObject.namespace",
                                      "involvedObject.name", "involvedObject.uid",
                                      "involvedObject.apiVersion", "involvedObject.resourceVersion",
                                      "involvedObject.fieldPath", "reason", "reportingComponent",
                                      "source", "type", NULL};
static const char *const F_SECRET[] = {"type", NULL};
static const char *const F_NS[] = {"status.phase", NULL};
static const char *const F_JOB[] = {"status.successful", NULL};

typedef struct bdef {
    const char *group, *version, *plural, *singular, *kind;
    int namespaced, status_sub, gen, kid;
    const char *shorts, *cats, *cols;
    const char *const *fields;
} bdef;

/* cols: "NAME|type|jsonPath|priority;..." */
static const bdef BUILTINS[] = {
    {"", "v1", "namespaces", "namespace", "Namespace", 0, 1, 1, K_NS, "ns", "",
     "STATUS|string|.status.phase|0", F_NS},
    {"", "v1", "pods", "pod", "Pod", 1, 1, 1, K_POD, "po", "all",
     "STATUS|string|.status.phase|0;NODE|string|.spec.nodeName|1", F_POD},
    {"", "v1", "nodes", "node", "Node", 0, 1, 1, K_NODE, "no", "", "", F_NODE},
    {"", "v1", "events", "event", "Event", 1, 0, 0, K_EVENT, "ev", "",
     "TYPE|string|.type|0;REASON|string|.reason|0;MESSAGE|string|.message|0", F_EVENT},
    {"", "v1", "configmaps", "configmap", "ConfigMap", 1, 0, 0, K_OTHER, "cm", "", "", NULL},
    {"", "v1", "secrets", "secret", "Secret", 1, 0, 0, K_SECRET, "", "", "TYPE|string|.type|0",
     F_SECRET},
    {"", "v1", "serviceaccounts", "serviceaccount", "ServiceAccount", 1, 0, 0, K_OTHER, "sa", "",
     "", NULL},
    {"batch", "v1", "jobs", "job", "Job", 1, 1, 1, K_JOB, "", "all", "", F_JOB},
    {"events.k8s.io", "v1", "events", "event", "Event", 1, 0, 0, K_OTHER, "ev", "",
     "TYPE|string|.type|0;REASON|string|.reason|0;NOTE|string|.note|0", NULL},
    {"coordination.k8s.io", "v1", "leases", "lease", "Lease", 1, 0, 1, K_OTHER, "", "",
     "HOLDER|string|.spec.holderIdentity|0", NULL},
    {"scheduling.k8s.io", "v1", "priorityclasses", "priorityclass", "PriorityClass", 0, 0, 0,
     K_OTHER, "pc", "", "VALUE|integer|.value|0;GLOBAL-DEFAULT|boolean|.globalDefault|0", NULL},
    {"apiextensions.k8s.io", "v1", "customresourcedefinitions", "customresourcedefinition",
     "CustomResourceDefinition", 0, 1, 1, K_CRD, "crd,crds", "",
     "CREATED AT|date|.metadata.creationTimestamp|0", NULL},
};

static char **split_list(const char *s, size_t *n)
{
    *n = 0;
    if (!s || !*s) return NULL;
    size_t cnt = 1;
    for (const char *p = s; *p; p++) cnt += *p == ',';
    char **v = calloc(cnt, sizeof(*v));
    if (!v) return NULL;
    const char *p = s;
    while (*p) {
        const char *c = strchr(p, ',');
        size_t l = c ? (size_t)(c - p) : strlen(p);
        v[(*n)++] = strndup(p, l);
        p += l + (c ? 1 : 0);
    }
    return v;
}

static void free_strv(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++) free(v[i]);
    free(v);
}

static void free_cols(cu_pcol *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(c[i].name); free(c[i].type); free(c[i].format);
        free(c[i].description); free(c[i].json_path);
    }
    free(c);
}

static res_t *res_find_q(cu_store *s, const char *group, const char *plural)
{
    for (size_t i = 0; i < s->nres; i++)
        if (strcmp(s->res[i]->group, group) == 0 && strcmp(s->res[i]->plural, plural) == 0)
            return s->res[i];
    return NULL;
}

static res_t *res_by_qname(cu_store *s, const char *qname)
{
    for (size_t i = 0; i < s->nres; i++)
        if (strcmp(s->res[i]->qname, qname) == 0) return s->res[i];
    return NULL;
}

static res_t *res_add(cu_store *s, const char *group, const char *plural)
{
    res_t *r = calloc(1, sizeof(*r));
    if (!r) return NULL;
    r->group = strdup(group);
    r->plural = strdup(plural);
    size_t ql = strlen(group) + strlen(plural) + 2;
    r->qname = malloc(ql);
    if (!r->group || !r->plural || !r->qname) goto fail;
    if (*group) snprintf(r->qname, ql, "%s.%s", plural, group);
    else snprintf(r->qname, ql, "%s", plural);
    r->sorted = 1;
    if (s->nres == s->capres) {
        size_t nc = s->capres ? s->capres * 2 : 32;
        res_t **nr = realloc(s->res, nc * sizeof(*nr));
        if (!nr) goto fail;
        s->res = nr;
        s->capres = nc;
    }
    s->res[s->nres++] = r;
    return r;
fail:
    free(r->group); free(r->plural); free(r->qname); free(r);
    return NULL;
}

static rt_ent *rt_add(cu_store *s)
{
    rt_ent *t = calloc(1, sizeof(*t));
    if (!t) return NULL;
    if (s->nrts == s->caprts) {
        size_t nc = s->caprts ? s->caprts * 2 : 32;
        rt_ent **nr = realloc(s->rts, nc * sizeof(*nr));
        if (!nr) { free(t); return NULL; }
        s->rts = nr;
        s->caprts = nc;
    }
    s->rts[s->nrts++] = t;
    return t;
}

static int add_builtin(cu_store *s, const bdef *d)
{
    res_t *r = res_add(s, d->group, d->plural);
    rt_ent *t = r ? rt_add(s) : NULL;
    if (!t) return -1;
    cu_rtype *p = &t->pub;
    p->group = strdup(d->group);
    p->version = strdup(d->version);
    p->resource = strdup(d->plural);
    p->singular = strdup(d->singular);
    p->kind = strdup(d->kind);
    size_t ll = strlen(d->kind) + 5;
    p->list_kind = malloc(ll);
    if (p->list_kind) snprintf(p->list_kind, ll, "%sList", d->kind);
    p->namespaced = d->namespaced;
    p->status_sub = d->status_sub;
    p->short_names = split_list(d->shorts, &p->nshort);
    p->categories = split_list(d->cats, &p->ncat);
    if (d->cols && *d->cols) {
        size_t n = 1;
        for (const char *c = d->cols; *c; c++) n += *c == ';';
        p->cols = calloc(n, sizeof(*p->cols));
        const char *c = d->cols;
        while (p->cols && *c) {
            const char *e = strchr(c, ';');
            size_t l = e ? (size_t)(e - c) : strlen(c);
            char tmp[256];
            snprintf(tmp, sizeof(tmp), "%.*s", (int)l, c);
            char *save = NULL, *nm = strtok_r(tmp, "|", &save), *ty = strtok_r(NULL, "|", &save);
            char *jp = strtok_r(NULL, "|", &save), *pr = strtok_r(NULL, "|", &save);
            cu_pcol *pc = &p->cols[p->ncols++];
            pc->name = xstrdup(nm);
            pc->type = xstrdup(ty);
            pc->json_path = xstrdup(jp);
            pc->priority = pr ? atoi(pr) : 0;
            c += l + (e ? 1 : 0);
        }
    }
    p->storage = 1;
    t->res = r;
    t->served = 1;
    t->gen = d->gen;
    t->uncond = 1;
    t->kid = d->kid;
    t->fields = d->fields;
    r->storage_rt = t;
    r->namespaced = d->namespaced;
    r->kid = d->kid;
    if (d->kid == K_NS) s->r_ns = r;
    return 0;
}

static int name_match(const cu_rtype *p, const char *name)
{
    if (strcmp(p->resource, name) == 0 || strcmp(p->singular, name) == 0) return 1;
    for (size_t i = 0; i < p->nshort; i++)
        if (strcmp(p->short_names[i], name) == 0) return 1;
    return strcasecmp(p->kind, name) == 0;
}

static rt_ent *rt_lookup(cu_store *s, const char *group, const char *version, const char *name)
{
    /* exact plural first, then the other names */
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < s->nrts; i++) {
            rt_ent *t = s->rts[i];
            if (!t->served) continue;
            if (group && strcmp(t->pub.group, group) != 0) continue;
            if (version && strcmp(t->pub.version, version) != 0) continue;
            if (pass == 0 ? strcmp(t->pub.resource, name) == 0 : name_match(&t->pub, name))
                return t;
        }
    return NULL;
}

const cu_rtype *cu_store_rtype(cu_store *s, const char *group, const char *version,
                               const char *name)
{
    if (!s || !name) return NULL;
    pthread_mutex_lock(&s->mu);
    rt_ent *t = rt_lookup(s, group, version, name);
    pthread_mutex_unlock(&s->mu);
    return t ? &t->pub : NULL;
}

const cu_rtype *cu_store_rtype_kind(cu_store *s, const char *api_version, const char *kind)
{
    if (!s || !api_version || !kind) return NULL;
    char group[256];
    const char *slash = strchr(api_version, '/'), *version = api_version;
    if (slash) {
        snprintf(group, sizeof(group), "%.*s", (int)(slash - api_version), api_version);
        version = slash + 1;
    } else {
        group[0] = '\0';
    }
    const cu_rtype *r = NULL;
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < s->nrts && !r; i++) {
        rt_ent *t = s->rts[i];
        if (t->served && strcmp(t->pub.group, group) == 0 && strcmp(t->pub.version, version) == 0 &&
            strcmp(t->pub.kind, kind) == 0)
            r = &t->pub;
    }
    pthread_mutex_unlock(&s->mu);
    return r;
}

void cu_store_each_rtype(cu_store *s, void (*fn)(const cu_rtype *rt, void *ud), void *ud)
{
    pthread_mutex_lock(&s->mu);
    size_t n = s->nrts;
    rt_ent **v = malloc((n ? n : 1) * sizeof(*v));
    size_t k = 0;
    for (size_t i = 0; v && i < n; i++)
        if (s->rts[i]->served) v[k++] = s->rts[i];
    pthread_mutex_unlock(&s->mu);
    for (size_t i = 0; i < k; i++) fn(&v[i]->pub, ud);
    free(v);
}

/* Replaces a registry string, keeping the old one alive until the store
 * is freed (readers borrow these without the lock). */
static void reg_set(cu_store *s, char **slot, const char *v)
{
    if (*slot && v && strcmp(*slot, v) == 0) return;
    grave_add(s, *slot);
    *slot = xstrdup(v);
}

static int strv_equal(char **a, size_t na, json_object *arr)
{
    if (na != jarr_len(arr)) return 0;
    for (size_t i = 0; i < na; i++) {
        json_object *v = json_object_array_get_idx(arr, i);
        if (!json_object_is_type(v, json_type_string) || strcmp(a[i], json_object_get_string(v)))
            return 0;
    }
    return 1;
}

static void reg_set_strv(cu_store *s, char ***slot, size_t *n, json_object *arr)
{
    if (strv_equal(*slot, *n, arr)) return;
    for (size_t i = 0; i < *n; i++) grave_add(s, (*slot)[i]);
    grave_add(s, *slot);
    size_t len = jarr_len(arr);
    *slot = len ? calloc(len, sizeof(char *)) : NULL;
    *n = 0;
    for (size_t i = 0; *slot && i < len; i++) {
        json_object *v = json_object_array_get_idx(arr, i);
        if (json_object_is_type(v, json_type_string))
            (*slot)[(*n)++] = strdup(json_object_get_string(v));
    }
}

static void lower_copy(char *dst, size_t n, const char *src)
{
    size_t i = 0;
    for (; src[i] && i + 1 < n; i++) dst[i] = (char)tolower((unsigned char)src[i]);
    dst[i] = '\0';
}

/* Validates a CRD object (borrowed) as kube-apiserver does before it
 * serves it. */
static int crd_validate(json_object *crd, ferrs *fe)
{
    json_object *spec = jget(crd, "spec"), *names = jget(spec, "names");
    const char *group = jstr(spec, "group"), *plural = jstr(names, "plural");
    const char *kind = jstr(names, "kind"), *scope = jstr(spec, "scope");
    const char *name = jstr(jget(crd, "metadata"), "name");
    if (!spec) { ferr_add(fe, "spec", "FieldValueRequired", "Required value"); return -1; }
    if (!group || !*group) ferr_add(fe, "spec.group", "FieldValueRequired", "Required value");
    else if (!strchr(group, '.'))
        ferr_add(fe, "spec.group", "FieldValueInvalid",
                 "Invalid value: \"%s\": should be a domain with at least one dot", group);
    if (!plural || !*plural)
        ferr_add(fe, "spec.names.plural", "FieldValueRequired", "Required value");
    if (!kind || !*kind) ferr_add(fe, "spec.names.kind", "FieldValueRequired", "Required value");
    if (!scope) ferr_add(fe, "spec.scope", "FieldValueRequired", "Required value");
    else if (strcmp(scope, "Namespaced") && strcmp(scope, "Cluster"))
        ferr_add(fe, "spec.scope", "FieldValueNotSupported",
                 "Unsupported value: \"%s\": supported values: \"Cluster\", \"Namespaced\"", scope);
    if (group && plural && name) {
        char want[512];
        snprintf(want, sizeof(want), "%s.%s", plural, group);
        if (strcmp(want, name))
            ferr_add(fe, "metadata.name", "FieldValueInvalid",
                     "Invalid value: \"%s\": must be spec.names.plural+\".\"+spec.group", name);
    }
    json_object *vers = jget(spec, "versions");
    size_t nv = jarr_len(vers), nstorage = 0;
    if (!nv) ferr_add(fe, "spec.versions", "FieldValueInvalid",
                      "Invalid value: null: must have exactly one version marked as storage version");
    for (size_t i = 0; i < nv; i++) {
        json_object *v = json_object_array_get_idx(vers, i), *sv = jget(v, "storage");
        char f[64];
        if (!jstr(v, "name") || !*jstr(v, "name")) {
            snprintf(f, sizeof(f), "spec.versions[%zu].name", i);
            ferr_add(fe, f, "FieldValueRequired", "Required value");
        }
        if (sv && json_object_get_boolean(sv)) nstorage++;
        /* the schema itself: counts, multipleOf, patterns, defaults */
        json_object *schema = jget(jget(v, "schema"), "openAPIV3Schema");
        if (schema) {
            char sp[80];
            cu_schema_err se[8];
            snprintf(sp, sizeof(sp), "spec.versions[%zu].schema.openAPIV3Schema", i);
            size_t ns = cu_schema_check(schema, sp, se, 8);
            for (size_t k = 0; k < ns && k < 8; k++) ferr_add(fe, se[k].field, se[k].type, "%s", se[k].message);
            fe->total += ns > 8 ? ns - 8 : 0;
        }
    }
    if (nv && nstorage != 1)
        ferr_add(fe, "spec.versions", "FieldValueInvalid",
                 "Invalid value: %zu: must have exactly one version marked as storage version",
                 nstorage);
    return fe->n ? -1 : 0;
}

static json_object *cond_new(const char *type, const char *reason, const char *msg,
                             const char *ts)
{
    json_object *c = json_object_new_object();
    jset_str(c, "type", type);
    jset_str(c, "status", "True");
    jset_str(c, "lastTransitionTime", ts);
    jset_str(c, "reason", reason);
    jset_str(c, "message", msg);
    return c;
}

/* Registers crd's served versions (lock held) and fills its status the
 * way the apiextensions controllers do. crd is modified (defaults, status). */
static cu_err register_crd_locked(cu_store *s, json_object *crd, cu_status *st)
{
    ferrs fe;
    fe.n = fe.total = 0;
    rt_ent *crd_rt = rt_lookup(s, "apiextensions.k8s.io", "v1", "customresourcedefinitions");
    const char *crdname = jstr(jget(crd, "metadata"), "name");
    if (crd_validate(crd, &fe)) return err_invalid(st, crd_rt, crdname ? crdname : "", &fe);
    json_object *spec = jget(crd, "spec"), *names = jget(spec, "names");
    const char *group = jstr(spec, "group"), *plural = jstr(names, "plural");
    const char *kind = jstr(names, "kind");
    char singular[256], list_kind[300];
    if (jstr(names, "singular") && *jstr(names, "singular"))
        snprintf(singular, sizeof(singular), "%s", jstr(names, "singular"));
    else {
        lower_copy(singular, sizeof(singular), kind);
        jset_str(names, "singular", singular);
    }
    if (jstr(names, "listKind") && *jstr(names, "listKind"))
        snprintf(list_kind, sizeof(list_kind), "%s", jstr(names, "listKind"));
    else {
        snprintf(list_kind, sizeof(list_kind), "%sList", kind);
        jset_str(names, "listKind", list_kind);
    }
    if (!jget(spec, "conversion")) {
        json_object *cv = json_object_new_object();
        jset_str(cv, "strategy", "None");
        json_object_object_add(spec, "conversion", cv);
    }
    int namespaced = strcmp(jstr(spec, "scope"), "Namespaced") == 0;
    /* name conflicts with another CRD of the group */
    res_t *r = res_find_q(s, group, plural);
    if (r && r->kid != K_CR)
        return err_invalid1(st, crd_rt, crdname, "spec.group", "FieldValueInvalid",
                            "Invalid value: the resource is served by the API server itself");
    if (r && r->crd_name && strcmp(r->crd_name, crdname)) {
        return cu_status_set(st, 409, "Conflict", "customresourcedefinitions \"%s\": plural %s is "
                             "already served by %s", crdname, plural, r->crd_name);
    }
    if (!r) {
        if (res_find_q(s, group, plural)) return cu_status_set(st, 500, "InternalError", "dup");
        r = res_add(s, group, plural);
        if (!r) return cu_status_set(st, 500, "InternalError", "out of memory");
        r->kid = K_CR;
    }
    if (!r->crd_name) r->crd_name = strdup(crdname);
    r->namespaced = namespaced;
    json_object *vers = jget(spec, "versions");
    size_t nv = jarr_len(vers);
    if (nv > 1) r->multi = 1;
    const char *storage_version = NULL;
    /* disable versions no longer listed (or not served) first */
    for (size_t i = 0; i < s->nrts; i++) {
        rt_ent *t = s->rts[i];
        if (t->res != r) continue;
        int listed = 0;
        for (size_t j = 0; j < nv; j++) {
            json_object *v = json_object_array_get_idx(vers, j);
            json_object *served = jget(v, "served");
            if (strcmp(jstr(v, "name"), t->pub.version) == 0 && (!served || json_object_get_boolean(served)))
                listed = 1;
        }
        if (!listed) t->served = 0;
    }
    for (size_t j = 0; j < nv; j++) {
        json_object *v = json_object_array_get_idx(vers, j);
        const char *vname = jstr(v, "name");
        json_object *served = jget(v, "served"), *stor = jget(v, "storage");
        int is_storage = stor && json_object_get_boolean(stor);
        if (is_storage) storage_version = vname;
        rt_ent *t = NULL;
        for (size_t i = 0; i < s->nrts && !t; i++)
            if (s->rts[i]->res == r && strcmp(s->rts[i]->pub.version, vname) == 0) t = s->rts[i];
        if (!t) {
            t = rt_add(s);
            if (!t) return cu_status_set(st, 500, "InternalError", "out of memory");
            t->res = r;
            t->pub.group = strdup(group);
            t->pub.version = strdup(vname);
            t->pub.resource = strdup(plural);
            t->pub.from_crd = 1;
            t->kid = K_CR;
            t->gen = 1;
            t->uncond = 0;
        }
        reg_set(s, &t->pub.singular, singular);
        reg_set(s, &t->pub.kind, kind);
        reg_set(s, &t->pub.list_kind, list_kind);
        t->pub.namespaced = namespaced;
        t->pub.status_sub = jget(jget(v, "subresources"), "status") != NULL;
        reg_set_strv(s, &t->pub.short_names, &t->pub.nshort, jget(names, "shortNames"));
        reg_set_strv(s, &t->pub.categories, &t->pub.ncat, jget(names, "categories"));
        /* printer columns: replaced wholesale, old array kept alive */
        json_object *pcs = jget(v, "additionalPrinterColumns");
        size_t np = jarr_len(pcs);
        cu_pcol *cols = np ? calloc(np, sizeof(*cols)) : NULL;
        size_t nc = 0;
        for (size_t i = 0; cols && i < np; i++) {
            json_object *pc = json_object_array_get_idx(pcs, i);
            if (!jstr(pc, "name") || !jstr(pc, "jsonPath")) continue;
            cols[nc].name = xstrdup(jstr(pc, "name"));
            cols[nc].type = xstrdup(jstr(pc, "type") ? jstr(pc, "type") : "string");
            cols[nc].format = xstrdup(jstr(pc, "format"));
            cols[nc].description = xstrdup(jstr(pc, "description"));
            cols[nc].json_path = xstrdup(jstr(pc, "jsonPath"));
            cols[nc].priority = jget(pc, "priority") ? json_object_get_int(jget(pc, "priority")) : 0;
            nc++;
        }
        for (size_t i = 0; i < t->pub.ncols; i++) {
            cu_pcol *c = &t->pub.cols[i];
            grave_add(s, c->name); grave_add(s, c->type); grave_add(s, c->format);
            grave_add(s, c->description); grave_add(s, c->json_path);
        }
        grave_add(s, t->pub.cols);
        t->pub.cols = cols;
        t->pub.ncols = nc;
        json_object *schema = jget(jget(v, "schema"), "openAPIV3Schema");
        if (!(t->pub.schema && schema && json_object_equal(t->pub.schema, schema)) &&
            (t->pub.schema || schema)) {
            /* readers may borrow the old schema: keep it until the store goes */
            jgrave_add(s, t->pub.schema);
            rxgrave_add(s, t->pub.schema_rx);
            t->pub.schema = NULL;
            t->pub.schema_rx = NULL;
            if (schema) json_object_deep_copy(schema, &t->pub.schema, NULL);
            /* each pattern compiled once, here, not per validated string */
            if (t->pub.schema) t->pub.schema_rx = cu_schema_rx_new(t->pub.schema);
        }
        t->pub.storage = is_storage;
        t->served = !served || json_object_get_boolean(served);
    }
    for (size_t i = 0; i < s->nrts; i++)
        if (s->rts[i]->res == r && strcmp(s->rts[i]->pub.version, storage_version) == 0)
            r->storage_rt = s->rts[i];

    /* status: accepted names, conditions, stored versions */
    json_object *status = jget(crd, "status");
    if (!status || !json_object_is_type(status, json_type_object)) {
        status = json_object_new_object();
        json_object_object_add(crd, "status", status);
    }
    json_object *acc = json_object_new_object();
    jset_str(acc, "plural", plural);
    jset_str(acc, "singular", singular);
    if (jget(names, "shortNames")) {
        json_object *c = NULL;
        json_object_deep_copy(jget(names, "shortNames"), &c, NULL);
        json_object_object_add(acc, "shortNames", c);
    }
    jset_str(acc, "kind", kind);
    jset_str(acc, "listKind", list_kind);
    if (jget(names, "categories")) {
        json_object *c = NULL;
        json_object_deep_copy(jget(names, "categories"), &c, NULL);
        json_object_object_add(acc, "categories", c);
    }
    json_object_object_add(status, "acceptedNames", acc);
    char ts[40];
    now_str(s, ts, sizeof(ts));
    json_object *old = jget(status, "conditions");
    char ts_na[40], ts_est[40];
    snprintf(ts_na, sizeof(ts_na), "%s", ts);
    snprintf(ts_est, sizeof(ts_est), "%s", ts);
    for (size_t i = 0; i < jarr_len(old); i++) {
        json_object *c = json_object_array_get_idx(old, i);
        const char *ty = jstr(c, "type"), *lt = jstr(c, "lastTransitionTime");
        if (!ty || !lt || !jstr(c, "status") || strcmp(jstr(c, "status"), "True")) continue;
        if (strcmp(ty, "NamesAccepted") == 0) snprintf(ts_na, sizeof(ts_na), "%s", lt);
        if (strcmp(ty, "Established") == 0) snprintf(ts_est, sizeof(ts_est), "%s", lt);
    }
    json_object *conds = json_object_new_array();
    json_object_array_add(conds, cond_new("NamesAccepted", "NoConflicts", "no conflicts found", ts_na));
    json_object_array_add(conds, cond_new("Established", "InitialNamesAccepted",
                                          "the initial names have been accepted", ts_est));
    json_object_object_add(status, "conditions", conds);
    json_object *sv = jget(status, "storedVersions");
    if (!sv || !json_object_is_type(sv, json_type_array)) {
        sv = json_object_new_array();
        json_object_object_add(status, "storedVersions", sv);
    }
    if (storage_version && !jarr_has_str(sv, storage_version))
        json_object_array_add(sv, json_object_new_string(storage_version));
    return CU_OK;
}

cu_err cu_store_register_crd(cu_store *s, json_object *crd, cu_status *st)
{
    json_object *copy = NULL;
    if (!crd || json_object_deep_copy(crd, &copy, NULL) || !copy)
        return cu_status_set(st, 400, "BadRequest", "not a CustomResourceDefinition object");
    pthread_mutex_lock(&s->mu);
    cu_err e = register_crd_locked(s, copy, st);
    pthread_mutex_unlock(&s->mu);
    json_object_put(copy);
    return e;
}

/* ------------------------------------------------------------------ */
/* objects and indexes (lock held)                                      */

static ent *ent_new(res_t *r, const char *ns, const char *name)
{
    size_t nsl = (ns && *ns) ? strlen(ns) : 0, nl = strlen(name);
    size_t klen = (nsl ? nsl + 1 : 0) + nl;
    ent *e = calloc(1, sizeof(*e));
    if (!e) return NULL;
    e->key = malloc(klen + 1 + nsl + 1);
    if (!e->key) { free(e); return NULL; }
    if (nsl) {
        memcpy(e->key, ns, nsl);
        e->key[nsl] = '/';
        memcpy(e->key + nsl + 1, name, nl);
    } else {
        memcpy(e->key, name, nl);
    }
    e->key[klen] = '\0';
    if (nsl) memcpy(e->key + klen + 1, ns, nsl);
    e->key[klen + 1 + nsl] = '\0';
    e->ns = e->key + klen + 1;
    e->name = e->key + (nsl ? nsl + 1 : 0);
    e->nslen = nsl;
    e->res = r;
    return e;
}

static void ent_free(ent *e)
{
    if (!e) return;
    rstr_unref(e->data);
    free_strv(e->owners, e->nowners);
    free(e->key);
    free(e);
}

static ent *ent_find(res_t *r, const char *ns, const char *name)
{
    char key[KEY_MAX];
    if (!name) return NULL;
    make_key(key, sizeof(key), r->namespaced ? ns : NULL, name);
    return hm_get(&r->objs, key);
}

static void deps_add(cu_store *s, ent *e)
{
    for (size_t i = 0; i < e->nowners; i++) {
        deplist *d = hm_get(&s->deps, e->owners[i]);
        if (!d) {
            d = calloc(1, sizeof(*d));
            if (!d || !(d->uid = strdup(e->owners[i])) || hm_put(&s->deps, d->uid, d)) {
                if (d) free(d->uid);
                free(d);
                continue;
            }
        }
        if (d->n == d->cap) {
            size_t nc = d->cap ? d->cap * 2 : 4;
            ent **nv = realloc(d->v, nc * sizeof(*nv));
            if (!nv) continue;
            d->v = nv;
            d->cap = nc;
        }
        d->v[d->n++] = e;
    }
}

static void deps_del(cu_store *s, ent *e)
{
    for (size_t i = 0; i < e->nowners; i++) {
        deplist *d = hm_get(&s->deps, e->owners[i]);
        if (!d) continue;
        for (size_t j = 0; j < d->n; j++)
            if (d->v[j] == e) { d->v[j] = d->v[--d->n]; break; }
        if (!d->n) {
            hm_del(&s->deps, d->uid);
            free(d->uid);
            free(d->v);
            free(d);
        }
    }
}

static void ent_set_meta(cu_store *s, ent *e, json_object *o)
{
    json_object *m = jget(o, "metadata");
    deps_del(s, e);
    free_strv(e->owners, e->nowners);
    e->owners = NULL;
    e->nowners = 0;
    json_object *refs = jget(m, "ownerReferences");
    size_t n = jarr_len(refs);
    if (n) e->owners = calloc(n, sizeof(char *));
    for (size_t i = 0; e->owners && i < n; i++) {
        const char *u = jstr(json_object_array_get_idx(refs, i), "uid");
        if (u && *u) e->owners[e->nowners++] = strdup(u);
    }
    deps_add(s, e);
    e->terminating = jget(m, "deletionTimestamp") != NULL;
}

static int ent_link(cu_store *s, ent *e)
{
    res_t *r = e->res;
    if (r->n == r->cap) {
        size_t nc = r->cap ? r->cap * 2 : 64;
        ent **nv = realloc(r->vec, nc * sizeof(*nv));
        if (!nv) return -1;
        r->vec = nv;
        r->cap = nc;
    }
    if (hm_put(&r->objs, e->key, e)) return -1;
    if (e->uid[0] && hm_put(&s->uids, e->uid, e)) { hm_del(&r->objs, e->key); return -1; }
    if (r->n && strcmp(r->vec[r->n - 1]->key, e->key) > 0) r->sorted = 0;
    e->vidx = r->n;
    r->vec[r->n++] = e;
    if (e->nslen) {
        nscount *nc = hm_get(&s->nss, e->ns);
        if (!nc) {
            nc = calloc(1, sizeof(*nc));
            if (nc && (nc->ns = strdup(e->ns)) && !hm_put(&s->nss, nc->ns, nc)) {
                /* inserted */
            } else if (nc) {
                free(nc->ns);
                free(nc);
                nc = NULL;
            }
        }
        if (nc) nc->n++;
    }
    return 0;
}

static void ent_unlink(cu_store *s, ent *e)
{
    res_t *r = e->res;
    hm_del(&r->objs, e->key);
    if (e->uid[0] && hm_get(&s->uids, e->uid) == e) hm_del(&s->uids, e->uid);
    deps_del(s, e);
    size_t i = e->vidx;
    if (i != r->n - 1) {
        r->vec[i] = r->vec[r->n - 1];
        r->vec[i]->vidx = i;
        r->sorted = 0;
    }
    r->n--;
    if (e->nslen) {
        nscount *nc = hm_get(&s->nss, e->ns);
        if (nc && --nc->n == 0) {
            hm_del(&s->nss, nc->ns);
            free(nc->ns);
            free(nc);
        }
    }
}

static size_t ns_count(cu_store *s, const char *ns)
{
    nscount *nc = hm_get(&s->nss, ns);
    return nc ? nc->n : 0;
}

static int ent_cmp(const void *a, const void *b)
{
    return strcmp((*(ent *const *)a)->key, (*(ent *const *)b)->key);
}

static void res_sort(res_t *r)
{
    if (r->sorted) return;
    qsort(r->vec, r->n, sizeof(*r->vec), ent_cmp);
    for (size_t i = 0; i < r->n; i++) r->vec[i]->vidx = i;
    r->sorted = 1;
}

/* First index whose key is > key (strict) or >= key. */
static size_t res_bound(res_t *r, const char *key, int strict)
{
    size_t lo = 0, hi = r->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(r->vec[mid]->key, key);
        if (c < 0 || (strict && c == 0)) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* ------------------------------------------------------------------ */
/* events, hooks, backend                                               */

static void pend_add(opctx *c, rt_ent *rt, const char *type, rstr *obj)
{
    if (c->np == c->capp) {
        size_t nc = c->capp ? c->capp * 2 : 8;
        pend *np = realloc(c->p, nc * sizeof(*np));
        if (!np) return;
        c->p = np;
        c->capp = nc;
    }
    c->p[c->np].rt = rt;
    c->p[c->np].type = type;
    c->p[c->np].obj = rstr_ref(obj);
    c->np++;
}

static void work_push(opctx *c, const char *uid)
{
    if (!uid || !*uid) return;
    if (c->nwork == c->capwork) {
        size_t nc = c->capwork ? c->capwork * 2 : 8;
        char **nw = realloc(c->work, nc * sizeof(*nw));
        if (!nw) return;
        c->work = nw;
        c->capwork = nc;
    }
    char *d = strdup(uid);
    if (d) c->work[c->nwork++] = d;
}

static size_t sev_bytes(const sev *v)
{
    return (v->obj ? v->obj->len : 0) + (v->old ? v->old->len : 0);
}

/* Drops the oldest event of the history (its RV becomes too old). */
static void ring_pop(cu_store *s)
{
    sev *o = &s->ring[s->tail % s->hcap];
    s->hist_rv = o->rv;
    s->hbytes -= sev_bytes(o);
    rstr_unref(o->obj);
    rstr_unref(o->old);
    free(o->ns);
    s->tail++;
}

static void emit(cu_store *s, opctx *c, rt_ent *rt, const char *type, const char *ns,
                 const char *name, rstr *obj, rstr *old, int64_t rv)
{
    if (s->head - s->tail == s->hcap) ring_pop(s);
    /* the history is capped by bytes too: large objects changed often
     * would otherwise keep every version alive (the newest event stays) */
    size_t add = (obj ? obj->len : 0) + (old ? old->len : 0);
    while (s->head > s->tail && s->hbytes + add > s->hbytes_max) ring_pop(s);
    sev *v = &s->ring[s->head % s->hcap];
    v->rv = rv;
    v->res = rt->res;
    v->type = type;
    if (!ns) ns = "";
    size_t nl = strlen(ns), ml = strlen(name);
    v->ns = malloc(nl + ml + 2);
    if (v->ns) {
        memcpy(v->ns, ns, nl + 1);
        memcpy(v->ns + nl + 1, name, ml + 1);
    }
    v->name = v->ns ? v->ns + nl + 1 : "";
    v->obj = rstr_ref(obj);
    v->old = rstr_ref(old);
    s->hbytes += add;
    s->head++;
    pthread_cond_broadcast(&s->cv);
    if (s->nhooks) pend_add(c, rt, type, obj);
}

static void be_write(cu_store *s, ent *e, const char *data)
{
    if (!s->has_be || !s->be.write) return;
    if (s->be.write(s->be.ud, e->res->qname, e->ns, e->name, e->rv, data, s->rv) != CU_OK) {
        if (s->be_errors++ == 0)
            fprintf(stderr, "cueue cluster: cannot write %s %s/%s to the database\n",
                    e->res->qname, e->ns, e->name);
    }
}

static rstr *serialize(json_object *o)
{
    size_t n = 0;
    const char *js = json_object_to_json_string_length(
        o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n);
    return js ? rstr_new(js, n) : NULL;
}

static void set_rv(json_object *o, int64_t rv)
{
    char b[32];
    snprintf(b, sizeof(b), "%lld", (long long)rv);
    jset_str(jmeta(o), "resourceVersion", b);
}

/* Stores o (borrowed; its resourceVersion is set) as the new state of e,
 * or of a new object when e is NULL (ns/name taken from o). */
static cu_err commit_put(cu_store *s, opctx *c, rt_ent *rt, ent *e, json_object *o,
                         cu_status *st)
{
    res_t *r = rt->res;
    int64_t rv = s->rv + 1;
    set_rv(o, rv);
    rt_ent *srt = r->storage_rt ? r->storage_rt : rt;
    char av[300];
    if (srt->pub.group[0]) snprintf(av, sizeof(av), "%s/%s", srt->pub.group, srt->pub.version);
    else snprintf(av, sizeof(av), "%s", srt->pub.version);
    jset_str(o, "apiVersion", av);
    jset_str(o, "kind", srt->pub.kind);
    rstr *data = serialize(o);
    if (!data) return cu_status_set(st, 500, "InternalError", "out of memory");
    if (data->len > CU_STORE_OBJECT_MAX) {
        /* what kube-apiserver answers when etcd refuses the write
         * (--max-request-bytes): a 500 with etcd's message and no reason */
        rstr_unref(data);
        return cu_status_set(st, 500, "", "etcdserver: request is too large");
    }
    json_object *m = jget(o, "metadata");
    int is_new = e == NULL;
    if (is_new) {
        e = ent_new(r, r->namespaced ? jstr(m, "namespace") : NULL, jstr(m, "name"));
        if (!e) { rstr_unref(data); return cu_status_set(st, 500, "InternalError", "out of memory"); }
        snprintf(e->uid, sizeof(e->uid), "%s", jstr(m, "uid") ? jstr(m, "uid") : "");
        if (ent_link(s, e)) {
            ent_free(e);
            rstr_unref(data);
            return cu_status_set(st, 500, "InternalError", "out of memory");
        }
    }
    rstr *old = e->data;
    e->data = data;
    e->rv = rv;
    ent_set_meta(s, e, o);
    s->rv = rv;
    r->last_rv = rv;
    emit(s, c, rt, is_new ? EV_ADDED : EV_MODIFIED, e->ns, e->name, data, old, rv);
    rstr_unref(old);
    be_write(s, e, data->s);
    return CU_OK;
}

static void container_check(cu_store *s, opctx *c, const char *ns, res_t *r);

/* Removes e; o (borrowed) is its final state, given the deletion RV. */
static void commit_remove(cu_store *s, opctx *c, rt_ent *rt, ent *e, json_object *o)
{
    res_t *r = e->res;
    if (!rt) rt = r->storage_rt;
    int64_t rv = s->rv + 1;
    set_rv(o, rv);
    rstr *data = serialize(o);
    if (!data) data = rstr_ref(e->data);
    s->rv = rv;
    r->last_rv = rv;
    e->rv = rv;
    emit(s, c, rt, EV_DELETED, e->ns, e->name, data, e->data, rv);
    be_write(s, e, NULL);
    rstr_unref(data);
    ent_unlink(s, e);
    c->removed++;
    work_push(c, e->uid);
    for (size_t i = 0; i < e->nowners; i++) work_push(c, e->owners[i]);
    char ns[300];
    snprintf(ns, sizeof(ns), "%s", e->ns);
    int kid = r->kid;
    json_object *spec = kid == K_CRD ? jget(o, "spec") : NULL;
    if (kid == K_CRD) {
        /* the CRD is gone: stop serving its resource */
        res_t *cr = res_find_q(s, jstr(spec, "group") ? jstr(spec, "group") : "",
                               jstr(jget(spec, "names"), "plural") ? jstr(jget(spec, "names"), "plural") : "");
        if (cr && cr->crd_name && strcmp(cr->crd_name, e->name) == 0) {
            for (size_t i = 0; i < s->nrts; i++)
                if (s->rts[i]->res == cr) s->rts[i]->served = 0;
            cr->crd_terminating = 0;
            free(cr->crd_name);
            cr->crd_name = NULL;
            for (cu_watch *w = s->watchers; w; w = w->next)
                if (w->rt->res == cr) w->ending = 1;
            pthread_cond_broadcast(&s->cv);
        }
    }
    ent_free(e);
    container_check(s, c, ns, r);
}

/* Removes a terminating container (namespace, CRD) once it is empty and
 * has no finalizers left. */
static void try_finalize(cu_store *s, opctx *c, ent *e)
{
    if (!e || !e->terminating) return;
    if (e->res->kid == K_NS && ns_count(s, e->name)) return;
    json_object *o = jparse_r(e->data);
    if (!o) return;
    if (e->res->kid == K_CRD) {
        json_object *spec = jget(o, "spec");
        res_t *cr = res_find_q(s, jstr(spec, "group") ? jstr(spec, "group") : "",
                               jstr(jget(spec, "names"), "plural") ? jstr(jget(spec, "names"), "plural") : "");
        if (cr && cr->n) { json_object_put(o); return; }
    }
    if (jarr_len(jget(jget(o, "metadata"), "finalizers")) == 0) commit_remove(s, c, NULL, e, o);
    json_object_put(o);
}

static void container_check(cu_store *s, opctx *c, const char *ns, res_t *r)
{
    if (*ns && s->r_ns && ns_count(s, ns) == 0) try_finalize(s, c, ent_find(s->r_ns, NULL, ns));
    if (r->crd_terminating && r->n == 0 && r->crd_name) {
        res_t *crds = res_find_q(s, "apiextensions.k8s.io", "customresourcedefinitions");
        if (crds) try_finalize(s, c, ent_find(crds, NULL, r->crd_name));
    }
}

/* Unlocks and calls the hooks for the operation's events. */
static void op_finish(cu_store *s, opctx *c)
{
    size_t nh = s->nhooks;
    hook *hs = nh ? malloc(nh * sizeof(*hs)) : NULL;
    if (hs) memcpy(hs, s->hooks, nh * sizeof(*hs));
    pthread_mutex_unlock(&s->mu);
    for (size_t i = 0; i < c->np; i++) {
        for (size_t h = 0; hs && h < nh; h++) {
            json_object *o = jparse_r(c->p[i].obj);
            if (!o) continue;
            hs[h].fn(s, &c->p[i].rt->pub, c->p[i].type, o, hs[h].ud);
            json_object_put(o);
        }
        rstr_unref(c->p[i].obj);
    }
    free(hs);
    free(c->p);
    for (size_t i = 0; i < c->nwork; i++) free(c->work[i]);
    free(c->work);
    memset(c, 0, sizeof(*c));
}

void cu_store_on_change(cu_store *s, cu_store_hook fn, void *ud)
{
    pthread_mutex_lock(&s->mu);
    hook *nh = realloc(s->hooks, (s->nhooks + 1) * sizeof(*nh));
    if (nh) {
        s->hooks = nh;
        s->hooks[s->nhooks].fn = fn;
        s->hooks[s->nhooks].ud = ud;
        s->nhooks++;
    }
    pthread_mutex_unlock(&s->mu);
}

/* ------------------------------------------------------------------ */
/* deletion and garbage collection (lock held)                          */

static int jarr_remove_str(json_object *a, const char *s)
{
    int n = 0;
    for (size_t i = jarr_len(a); i-- > 0;) {
        json_object *v = json_object_array_get_idx(a, i);
        if (json_object_is_type(v, json_type_string) && strcmp(json_object_get_string(v), s) == 0) {
            json_object_array_del_idx(a, i, 1);
            n++;
        }
    }
    return n;
}

/* Commits o as e's new state: removes e when it is terminating with no
 * finalizers (and, for a namespace or CRD, empty). */
static cu_err commit_or_remove(cu_store *s, opctx *c, rt_ent *rt, ent *e, json_object *o,
                               cu_status *st)
{
    json_object *m = jget(o, "metadata");
    if (jget(m, "deletionTimestamp") && jarr_len(jget(m, "finalizers")) == 0) {
        int empty = 1;
        if (e->res->kid == K_NS) empty = ns_count(s, e->name) == 0;
        if (e->res->kid == K_CRD) {
            json_object *spec = jget(o, "spec");
            res_t *cr = res_find_q(s, jstr(spec, "group") ? jstr(spec, "group") : "",
                                   jstr(jget(spec, "names"), "plural") ? jstr(jget(spec, "names"), "plural") : "");
            empty = !cr || cr->n == 0;
        }
        if (empty) {
            commit_remove(s, c, rt, e, o);
            return CU_OK;
        }
    }
    return commit_put(s, c, rt, e, o, st);
}

static void drop_finalizer(cu_store *s, opctx *c, ent *e, const char *fin)
{
    json_object *o = jparse_r(e->data);
    if (!o) return;
    if (jarr_remove_str(jget(jget(o, "metadata"), "finalizers"), fin))
        commit_or_remove(s, c, NULL, e, o, NULL);
    json_object_put(o);
}

/* Removes ownerReferences of e that point to uid (or, uid NULL, to
 * objects that do not exist). */
static void strip_refs(cu_store *s, opctx *c, ent *e, const char *uid)
{
    json_object *o = jparse_r(e->data);
    if (!o) return;
    json_object *m = jget(o, "metadata"), *refs = jget(m, "ownerReferences");
    int changed = 0;
    for (size_t i = jarr_len(refs); i-- > 0;) {
        const char *u = jstr(json_object_array_get_idx(refs, i), "uid");
        if (!u) continue;
        if (uid ? strcmp(u, uid) == 0 : hm_get(&s->uids, u) == NULL) {
            json_object_array_del_idx(refs, i, 1);
            changed = 1;
        }
    }
    if (changed) {
        if (!jarr_len(refs)) json_object_object_del(m, "ownerReferences");
        commit_put(s, c, e->res->storage_rt, e, o, NULL);
    }
    json_object_put(o);
}

static cu_err del_ent(cu_store *s, opctx *c, rt_ent *rt, ent *e, const char *prop,
                      json_object **out, cu_status *st);

/* Deletes every object of a namespace (as the namespace controller). */
static void ns_empty(cu_store *s, opctx *c, const char *ns)
{
    char prefix[KEY_MAX];
    snprintf(prefix, sizeof(prefix), "%s/", ns);
    size_t pl = strlen(prefix);
    for (size_t i = 0; i < s->nres && ns_count(s, ns); i++) {
        res_t *r = s->res[i];
        if (!r->namespaced || !r->n) continue;
        res_sort(r);
        size_t a = res_bound(r, prefix, 0), b = a;
        while (b < r->n && strncmp(r->vec[b]->key, prefix, pl) == 0) b++;
        size_t n = b - a;
        char **keys = n ? calloc(n, sizeof(char *)) : NULL;
        for (size_t k = 0; keys && k < n; k++) keys[k] = strdup(r->vec[a + k]->key);
        for (size_t k = 0; keys && k < n; k++) {
            ent *d = keys[k] ? hm_get(&r->objs, keys[k]) : NULL;
            if (d && !d->terminating) del_ent(s, c, r->storage_rt, d, "Background", NULL, NULL);
            free(keys[k]);
        }
        free(keys);
    }
}

/* Deletes every object of a CRD's resource (as the CRD finalizer does). */
static void res_empty(cu_store *s, opctx *c, res_t *r)
{
    size_t n = r->n;
    char **keys = n ? calloc(n, sizeof(char *)) : NULL;
    for (size_t k = 0; keys && k < n; k++) keys[k] = strdup(r->vec[k]->key);
    for (size_t k = 0; keys && k < n; k++) {
        ent *d = keys[k] ? hm_get(&r->objs, keys[k]) : NULL;
        if (d && !d->terminating) del_ent(s, c, r->storage_rt, d, "Background", NULL, NULL);
        free(keys[k]);
    }
    free(keys);
}

static cu_err del_ent(cu_store *s, opctx *c, rt_ent *rt, ent *e, const char *prop,
                      json_object **out, cu_status *st)
{
    json_object *o = jparse_r(e->data);
    if (!o) return cu_status_set(st, 500, "InternalError", "stored object is not valid JSON");
    json_object *m = jmeta(o);
    int kid = e->res->kid;
    int orphan = prop && strcmp(prop, "Orphan") == 0, fg = prop && strcmp(prop, "Foreground") == 0;
    deplist *dl = hm_get(&s->deps, e->uid);
    json_object *fins = jget(m, "finalizers");
    int changed = 0;
    if ((orphan || fg) && dl && dl->n) {
        const char *f = orphan ? "orphan" : "foregroundDeletion";
        if (!fins || !json_object_is_type(fins, json_type_array)) {
            fins = json_object_new_array();
            json_object_object_add(m, "finalizers", fins);
        }
        if (!jarr_has_str(fins, f)) { json_object_array_add(fins, json_object_new_string(f)); changed = 1; }
    }
    /* containers (namespaces, CRDs) stay terminating while they hold objects */
    res_t *cr = NULL;
    int holds = 0;
    if (kid == K_NS) holds = ns_count(s, e->name) > 0;
    if (kid == K_CRD) {
        json_object *spec = jget(o, "spec");
        cr = res_find_q(s, jstr(spec, "group") ? jstr(spec, "group") : "",
                        jstr(jget(spec, "names"), "plural") ? jstr(jget(spec, "names"), "plural") : "");
        if (cr && cr->crd_name && strcmp(cr->crd_name, e->name)) cr = NULL;
        holds = cr && cr->n > 0;
    }
    char key[KEY_MAX], name[300];
    snprintf(key, sizeof(key), "%s", e->key);
    snprintf(name, sizeof(name), "%s", e->name);
    res_t *r = e->res;
    cu_err err = CU_OK;
    if (jarr_len(fins) > 0 || holds) {
        if (!jget(m, "deletionTimestamp")) {
            char ts[40];
            now_str(s, ts, sizeof(ts));
            jset_str(m, "deletionTimestamp", ts);
            json_object_object_add(m, "deletionGracePeriodSeconds", json_object_new_int64(0));
            json_object *g = jget(m, "generation");
            if (g && json_object_get_int64(g) > 0)
                json_object_object_add(m, "generation", json_object_new_int64(json_object_get_int64(g) + 1));
            if (kid == K_NS) {
                json_object *stt = jget(o, "status");
                if (!stt || !json_object_is_type(stt, json_type_object)) {
                    stt = json_object_new_object();
                    json_object_object_add(o, "status", stt);
                }
                jset_str(stt, "phase", "Terminating");
            }
            changed = 1;
        }
        if (changed) {
            err = commit_put(s, c, rt, e, o, st);
            work_push(c, e->uid);
        }
        if (err == CU_OK && kid == K_NS) ns_empty(s, c, name);
        if (err == CU_OK && cr) {
            cr->crd_terminating = 1;
            res_empty(s, c, cr);
            container_check(s, c, "", cr);
        }
        /* the container may have been finalized meanwhile */
        ent *again = hm_get(&r->objs, key);
        if (again && again->data) {
            json_object_put(o);
            o = jparse_r(again->data);
        }
    } else {
        commit_remove(s, c, rt, e, o);
    }
    if (out && err == CU_OK) *out = o;
    else json_object_put(o);
    return err;
}

static int ref_blocks(json_object *o, const char *uid)
{
    json_object *refs = jget(jget(o, "metadata"), "ownerReferences");
    for (size_t i = 0; i < jarr_len(refs); i++) {
        json_object *r = json_object_array_get_idx(refs, i);
        const char *u = jstr(r, "uid");
        json_object *b = jget(r, "blockOwnerDeletion");
        if (u && strcmp(u, uid) == 0 && b && json_object_get_boolean(b)) return 1;
    }
    return 0;
}

/* The garbage collector's reaction to a change of the object with this
 * uid: it disappeared (its dependents are deleted or lose the reference),
 * or it is terminating with the orphan or foregroundDeletion finalizer. */
static void process_owner(cu_store *s, opctx *c, const char *uid)
{
    ent *owner = hm_get(&s->uids, uid);
    deplist *dl = hm_get(&s->deps, uid);
    if (owner && !owner->terminating) return;
    size_t nd = dl ? dl->n : 0;
    char (*du)[48] = nd ? calloc(nd, sizeof(*du)) : NULL;
    if (nd && !du) return;
    for (size_t i = 0; i < nd; i++) snprintf(du[i], sizeof(du[i]), "%s", dl->v[i]->uid);
    if (!owner) {
        for (size_t i = 0; i < nd; i++) {
            ent *d = hm_get(&s->uids, du[i]);
            if (!d) continue;
            size_t alive = 0;
            for (size_t k = 0; k < d->nowners; k++) alive += hm_get(&s->uids, d->owners[k]) != NULL;
            if (!alive) {
                if (!d->terminating) del_ent(s, c, d->res->storage_rt, d, "Background", NULL, NULL);
            } else {
                strip_refs(s, c, d, NULL);
            }
        }
        free(du);
        return;
    }
    json_object *o = jparse_r(owner->data);
    json_object *fins = jget(jget(o, "metadata"), "finalizers");
    int orphan = jarr_has_str(fins, "orphan"), fg = jarr_has_str(fins, "foregroundDeletion");
    json_object_put(o);
    if (orphan) {
        for (size_t i = 0; i < nd; i++) {
            ent *d = hm_get(&s->uids, du[i]);
            if (d) strip_refs(s, c, d, uid);
        }
        owner = hm_get(&s->uids, uid);
        if (owner) drop_finalizer(s, c, owner, "orphan");
    } else if (fg) {
        for (size_t i = 0; i < nd; i++) {
            ent *d = hm_get(&s->uids, du[i]);
            if (d && !d->terminating) del_ent(s, c, d->res->storage_rt, d, "Background", NULL, NULL);
        }
        int blocking = 0;
        dl = hm_get(&s->deps, uid);
        for (size_t i = 0; dl && i < dl->n && !blocking; i++) {
            json_object *d = jparse_r(dl->v[i]->data);
            blocking = d && ref_blocks(d, uid);
            json_object_put(d);
        }
        owner = hm_get(&s->uids, uid);
        if (owner && !blocking) drop_finalizer(s, c, owner, "foregroundDeletion");
    }
    free(du);
}

static void cascade(cu_store *s, opctx *c)
{
    size_t guard = 0;
    while (c->nwork && guard++ < 10000000) {
        char *uid = c->work[--c->nwork];
        process_owner(s, c, uid);
        free(uid);
    }
}

int cu_store_gc(cu_store *s)
{
    opctx c;
    memset(&c, 0, sizeof(c));
    pthread_mutex_lock(&s->mu);
    /* owners that are gone, and owners waiting for the collector */
    for (size_t i = 0; i < s->deps.cap; i++) {
        if (!s->deps.t[i].key) continue;
        deplist *d = s->deps.t[i].val;
        ent *o = hm_get(&s->uids, d->uid);
        if (!o || o->terminating) work_push(&c, d->uid);
    }
    for (size_t i = 0; i < s->nres; i++)
        for (size_t k = 0; k < s->res[i]->n; k++) {
            ent *e = s->res[i]->vec[k];
            if (!e->terminating) continue;
            json_object *o = jparse_r(e->data);
            json_object *f = jget(jget(o, "metadata"), "finalizers");
            if (jarr_has_str(f, "orphan") || jarr_has_str(f, "foregroundDeletion")) work_push(&c, e->uid);
            json_object_put(o);
        }
    cascade(s, &c);
    int n = c.removed;
    op_finish(s, &c);
    return n;
}

/* ------------------------------------------------------------------ */
/* selectors                                                            */

static void sel_free(selector *sl)
{
    for (size_t i = 0; i < sl->nl; i++) {
        free(sl->l[i].key);
        free_strv(sl->l[i].vals, sl->l[i].nvals);
    }
    free(sl->l);
    for (size_t i = 0; i < sl->nf; i++) { free(sl->f[i].label); free(sl->f[i].value); }
    free(sl->f);
    memset(sl, 0, sizeof(*sl));
}

static int lkey_char(char ch)
{
    return isalnum((unsigned char)ch) || ch == '-' || ch == '_' || ch == '.' || ch == '/';
}

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t') p++;
    return p;
}

static char *read_token(const char **pp)
{
    const char *p = *pp, *a = p;
    while (*p && lkey_char(*p)) p++;
    *pp = p;
    return strndup(a, (size_t)(p - a));
}

static int lreq_addval(lreq *q, char *v)
{
    char **nv = realloc(q->vals, (q->nvals + 1) * sizeof(*nv));
    if (!nv) { free(v); return -1; }
    q->vals = nv;
    q->vals[q->nvals++] = v;
    return 0;
}

/* Parses a label selector; returns 0 or fills st (400). */
static cu_err parse_labels(const char *in, selector *sl, cu_status *st)
{
    const char *p = in;
    if (!in) return CU_OK;
    p = skip_ws(p);
    while (*p) {
        lreq q;
        memset(&q, 0, sizeof(q));
        int neg = 0;
        if (*p == '!') { neg = 1; p = skip_ws(p + 1); }
        q.key = read_token(&p);
        if (!q.key || !*q.key) {
            free(q.key);
            return cu_status_set(st, 400, "BadRequest",
                                 "unable to parse requirement: found '%.40s', expected: identifier", p);
        }
        p = skip_ws(p);
        if (neg) {
            q.op = L_NOTEXISTS;
        } else if (*p == ',' || !*p) {
            q.op = L_EXISTS;
        } else if (p[0] == '=' || (p[0] == '!' && p[1] == '=') || p[0] == '>' || p[0] == '<') {
            if (p[0] == '!') { q.op = L_NE; p += 2; }
            else if (p[0] == '>') { q.op = L_GT; p++; }
            else if (p[0] == '<') { q.op = L_LT; p++; }
            else { q.op = L_EQ; p += (p[1] == '=') ? 2 : 1; }
            p = skip_ws(p);
            char *v = read_token(&p);
            if (!v) { free(q.key); return cu_status_set(st, 500, "InternalError", "out of memory"); }
            if ((q.op == L_GT || q.op == L_LT)) {
                char *end = NULL;
                strtoll(v, &end, 10);
                if (!*v || *end) {
                    cu_err e = cu_status_set(st, 400, "BadRequest",
                                             "unable to parse requirement: for 'gt', 'lt' operators, the "
                                             "value must be an integer");
                    free(v); free(q.key);
                    return e;
                }
            }
            lreq_addval(&q, v);
        } else if (strncmp(p, "in", 2) == 0 || strncmp(p, "notin", 5) == 0) {
            q.op = p[0] == 'i' ? L_IN : L_NOTIN;
            p = skip_ws(p + (q.op == L_IN ? 2 : 5));
            if (*p != '(') {
                cu_err e = cu_status_set(st, 400, "BadRequest",
                                         "unable to parse requirement: found '%.40s', expected: '('", p);
                free(q.key);
                return e;
            }
            p = skip_ws(p + 1);
            for (;;) {
                char *v = read_token(&p);
                if (v) lreq_addval(&q, v);
                p = skip_ws(p);
                if (*p == ',') { p = skip_ws(p + 1); continue; }
                if (*p == ')') { p++; break; }
                cu_err e = cu_status_set(st, 400, "BadRequest",
                                         "unable to parse requirement: found '%.40s', expected: ',', ')'", p);
                free(q.key);
                free_strv(q.vals, q.nvals);
                return e;
            }
        } else {
            cu_err e = cu_status_set(st, 400, "BadRequest",
                                     "unable to parse requirement: found '%.40s', expected: in, notin, =, "
                                     "==, !=, gt, lt", p);
            free(q.key);
            return e;
        }
        lreq *nl = realloc(sl->l, (sl->nl + 1) * sizeof(*nl));
        if (!nl) { free(q.key); free_strv(q.vals, q.nvals); return cu_status_set(st, 500, "InternalError", "out of memory"); }
        sl->l = nl;
        sl->l[sl->nl++] = q;
        p = skip_ws(p);
        if (*p == ',') {
            p = skip_ws(p + 1);
            if (!*p)
                return cu_status_set(st, 400, "BadRequest",
                                     "unable to parse requirement: found '', expected: identifier");
        } else if (*p) {
            return cu_status_set(st, 400, "BadRequest",
                                 "unable to parse requirement: found '%.40s', expected: ','", p);
        }
    }
    return CU_OK;
}

static int field_known(const rt_ent *rt, const char *label)
{
    if (strcmp(label, "metadata.name") == 0 || strcmp(label, "metadata.namespace") == 0) return 1;
    for (const char *const *f = rt->fields; f && *f; f++)
        if (strcmp(*f, label) == 0) return 1;
    return 0;
}

static cu_err parse_fields(const rt_ent *rt, const char *in, selector *sl, cu_status *st)
{
    if (!in || !*in) return CU_OK;
    const char *p = in;
    while (*p) {
        char lab[256], val[512];
        size_t ln = 0, vn = 0;
        int neg = 0, have_op = 0;
        while (*p && *p != ',') {
            if (!have_op && (*p == '=' || (*p == '!' && p[1] == '='))) {
                neg = *p == '!';
                p += neg ? 2 : (p[1] == '=' ? 2 : 1);
                have_op = 1;
                continue;
            }
            char ch = *p;
            if (ch == '\\' && p[1]) { p++; ch = *p; }
            if (!have_op) { if (ln + 1 < sizeof(lab)) lab[ln++] = ch; }
            else if (vn + 1 < sizeof(val)) val[vn++] = ch;
            p++;
        }
        lab[ln] = val[vn] = '\0';
        if (*p == ',') p++;
        /* trim the label */
        char *l = lab;
        while (*l == ' ') l++;
        for (size_t k = strlen(l); k && l[k - 1] == ' '; k--) l[k - 1] = '\0';
        if (!*l && !have_op) continue;
        if (!have_op)
            return cu_status_set(st, 400, "BadRequest", "invalid selector: '%s'; can't understand '%s'", in, l);
        if (!field_known(rt, l)) {
            if (rt->fields)
                return cu_status_set(st, 400, "BadRequest", "field label not supported: %s", l);
            return cu_status_set(st, 400, "BadRequest",
                                 "\"%s\" is not a known field selector: only \"metadata.name\", "
                                 "\"metadata.namespace\"", l);
        }
        freq *nf = realloc(sl->f, (sl->nf + 1) * sizeof(*nf));
        if (!nf) return cu_status_set(st, 500, "InternalError", "out of memory");
        sl->f = nf;
        sl->f[sl->nf].label = strdup(l);
        sl->f[sl->nf].value = strdup(val);
        sl->f[sl->nf].neg = neg;
        sl->nf++;
    }
    return CU_OK;
}

static void field_value(json_object *o, const char *label, char *out, size_t n)
{
    const char *path = label, *dflt = "";
    if (strcmp(label, "status.successful") == 0) { path = "status.succeeded"; dflt = "0"; }
    else if (strcmp(label, "source") == 0) path = "source.component";
    else if (strcmp(label, "spec.hostNetwork") == 0 || strcmp(label, "spec.unschedulable") == 0)
        dflt = "false";
    json_object *v = jpath(o, path);
    if (!v || json_object_is_type(v, json_type_null)) { snprintf(out, n, "%s", dflt); return; }
    if (json_object_is_type(v, json_type_string)) snprintf(out, n, "%s", json_object_get_string(v));
    else if (json_object_is_type(v, json_type_boolean))
        snprintf(out, n, "%s", json_object_get_boolean(v) ? "true" : "false");
    else snprintf(out, n, "%s", json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
}

static int sel_empty(const selector *sl) { return !sl->nl && !sl->nf; }

static int sel_match(const selector *sl, json_object *o)
{
    json_object *labels = jget(jget(o, "metadata"), "labels");
    for (size_t i = 0; i < sl->nl; i++) {
        const lreq *q = &sl->l[i];
        json_object *lv = jget(labels, q->key);
        const char *v = lv && json_object_is_type(lv, json_type_string) ? json_object_get_string(lv) : NULL;
        int in = 0;
        for (size_t k = 0; v && k < q->nvals; k++) in |= strcmp(q->vals[k], v) == 0;
        switch (q->op) {
        case L_EXISTS: if (!v) return 0; break;
        case L_NOTEXISTS: if (v) return 0; break;
        case L_EQ: case L_IN: if (!in) return 0; break;
        case L_NE: case L_NOTIN: if (in) return 0; break;
        case L_GT: case L_LT: {
            if (!v || !q->nvals) return 0;
            char *end = NULL;
            long long a = strtoll(v, &end, 10), b = strtoll(q->vals[0], NULL, 10);
            if (!*v || *end) return 0;
            if (q->op == L_GT ? !(a > b) : !(a < b)) return 0;
            break;
        }
        }
    }
    for (size_t i = 0; i < sl->nf; i++) {
        char val[512];
        field_value(o, sl->f[i].label, val, sizeof(val));
        int eq = strcmp(val, sl->f[i].value) == 0;
        if (sl->f[i].neg ? eq : !eq) return 0;
    }
    return 1;
}

/* Does e satisfy the selector's metadata.name and metadata.namespace
 * requirements (the others are not looked at)? */
static int sel_meta_match(const selector *sl, const char *ns, const char *name)
{
    for (size_t i = 0; i < sl->nf; i++) {
        const char *v = !strcmp(sl->f[i].label, "metadata.name") ? name
                        : !strcmp(sl->f[i].label, "metadata.namespace") ? ns : NULL;
        if (!v) continue;
        int eq = strcmp(v, sl->f[i].value) == 0;
        if (sl->f[i].neg ? eq : !eq) return 0;
    }
    return 1;
}

static int sel_meta_ok(const selector *sl, const ent *e) { return sel_meta_match(sl, e->ns, e->name); }

/* Has the selector only name and namespace requirements? */
static int sel_meta_only(const selector *sl)
{
    if (sl->nl) return 0;
    for (size_t i = 0; i < sl->nf; i++)
        if (strcmp(sl->f[i].label, "metadata.name") && strcmp(sl->f[i].label, "metadata.namespace"))
            return 0;
    return 1;
}

static cu_err sel_parse(const rt_ent *rt, const cu_list_opts *o, selector *sl, cu_status *st)
{
    memset(sl, 0, sizeof(*sl));
    if (!o) return CU_OK;
    cu_err e = parse_labels(o->label_selector, sl, st);
    if (e == CU_OK) e = parse_fields(rt, o->field_selector, sl, st);
    if (e != CU_OK) sel_free(sl);
    return e;
}

/* ------------------------------------------------------------------ */
/* create, get, update, delete                                          */

static void check_name(const rt_ent *rt, const char *name, size_t len, ferrs *fe)
{
    int label = rt->kid == K_NS;
    size_t max = label ? 63 : 253;
    const char *chars = cu_name_detail(label ? CU_DNS_LABEL_CHARS : CU_DNS_SUBDOMAIN_CHARS);
    if (strlen(name) != len)  /* a NUL: never truncate a name silently */
        ferr_add(fe, "metadata.name", "FieldValueInvalid", "Invalid value: \"%s\\x00...\": %s",
                 name, chars);
    else if (strlen(name) > max)
        ferr_add(fe, "metadata.name", "FieldValueInvalid",
                 "Invalid value: \"%s\": must be no more than %zu characters", name, max);
    else if (!(label ? cu_dns1123_label_ok(name, len) : cu_dns1123_subdomain_ok(name, len, 0)))
        ferr_add(fe, "metadata.name", "FieldValueInvalid", "Invalid value: \"%s\": %s", name,
                 chars);
}

/* ObjectMeta and the built-in kinds' field types (cu_objmeta.c), on
 * every write before anything else reads the metadata. */
static cu_err objmeta_check(const rt_ent *rt, json_object *o, cu_status *st)
{
    ferrs fe;
    fe.n = fe.total = 0;
    size_t n = cu_objmeta_validate(o, rt->pub.kind, !rt->pub.from_crd, fe.e, 32);
    if (!n) return CU_OK;
    fe.n = n < 32 ? n : 32;
    fe.total = n;
    json_object *nm = jget(jget(o, "metadata"), "name");
    return err_invalid(st, rt, json_object_is_type(nm, json_type_string) ?
                       json_object_get_string(nm) : "", &fe);
}

static void schema_check_with(json_object *schema, const cu_schema_rx *rx, json_object *o, ferrs *fe)
{
    if (!schema) return;
    cu_schema_err errs[32];
    size_t n = cu_schema_validate_rx(schema, rx, o, 0, errs, 32);
    for (size_t i = 0; i < n && i < 32; i++)
        ferr_add(fe, errs[i].field, errs[i].type, "%s", errs[i].message);
    fe->total += n > 32 ? n - 32 : 0;
}

static void schema_check(rt_ent *rt, json_object *o, ferrs *fe)
{
    schema_check_with(rt->pub.schema, rt->pub.schema_rx, o, fe);
}

static const char *qos_class(json_object *pod)
{
    json_object *spec = jget(pod, "spec");
    const char *lists[] = {"containers", "initContainers"};
    int any = 0, guaranteed = 1, n = 0;
    for (int l = 0; l < 2; l++) {
        json_object *cs = jget(spec, lists[l]);
        for (size_t i = 0; i < jarr_len(cs); i++) {
            json_object *res = jget(json_object_array_get_idx(cs, i), "resources");
            json_object *req = jget(res, "requests"), *lim = jget(res, "limits");
            n++;
            const char *rn[] = {"cpu", "memory"};
            for (int k = 0; k < 2; k++) {
                json_object *rq = jget(req, rn[k]), *lm = jget(lim, rn[k]);
                if (rq || lm) any = 1;
                if (!lm) guaranteed = 0;
                else if (rq && strcmp(json_object_get_string(rq), json_object_get_string(lm)))
                    guaranteed = 0;
            }
        }
    }
    if (!any) return "BestEffort";
    return guaranteed && n ? "Guaranteed" : "Burstable";
}

/* Sets apiVersion and kind as served by rt. */
static json_object *to_rt(const rt_ent *rt, json_object *o)
{
    if (!o) return NULL;
    char av[300];
    if (rt->pub.group[0]) snprintf(av, sizeof(av), "%s/%s", rt->pub.group, rt->pub.version);
    else snprintf(av, sizeof(av), "%s", rt->pub.version);
    const char *cur = jstr(o, "apiVersion");
    if (!cur || strcmp(cur, av)) jset_str(o, "apiVersion", av);
    const char *k = jstr(o, "kind");
    if (!k || strcmp(k, rt->pub.kind)) jset_str(o, "kind", rt->pub.kind);
    return o;
}

static cu_err check_type_meta(const rt_ent *rt, json_object *obj, cu_status *st)
{
    char av[300];
    if (rt->pub.group[0]) snprintf(av, sizeof(av), "%s/%s", rt->pub.group, rt->pub.version);
    else snprintf(av, sizeof(av), "%s", rt->pub.version);
    const char *k = jstr(obj, "kind"), *a = jstr(obj, "apiVersion");
    if (k && *k && strcmp(k, rt->pub.kind))
        return cu_status_set(st, 400, "BadRequest",
                             "%s in version \"%s\" cannot be handled as a %s: the kind in the "
                             "request body does not match the resource", k, a ? a : "", rt->pub.kind);
    if (a && *a && strcmp(a, av)) {
        /* another served version of the same resource is fine */
        int ok = 0;
        if (rt->pub.from_crd) {
            const char *sl = strchr(a, '/');
            ok = sl && strncmp(a, rt->pub.group, (size_t)(sl - a)) == 0 &&
                 strlen(rt->pub.group) == (size_t)(sl - a);
        }
        if (!ok)
            return cu_status_set(st, 400, "BadRequest",
                                 "the API version in the data (%s) does not match the expected API "
                                 "version (%s)", a, av);
    }
    return CU_OK;
}

static void ensure_obj(json_object *o, const char *k)
{
    json_object *v = jget(o, k);
    if (!v || !json_object_is_type(v, json_type_object))
        json_object_object_add(o, k, json_object_new_object());
}

static void prepare_create(rt_ent *rt, json_object *o)
{
    json_object *m = jget(o, "metadata");
    switch (rt->kid) {
    case K_POD: {
        json_object *stt = json_object_new_object();
        jset_str(stt, "phase", "Pending");
        jset_str(stt, "qosClass", qos_class(o));
        json_object_object_add(o, "status", stt);
        break;
    }
    case K_JOB:
        json_object_object_add(o, "status", json_object_new_object());
        break;
    case K_NS: {
        ensure_obj(o, "spec");
        json_object *spec = jget(o, "spec");
        if (!jget(spec, "finalizers")) {
            json_object *f = json_object_new_array();
            json_object_array_add(f, json_object_new_string("kubernetes"));
            json_object_object_add(spec, "finalizers", f);
        }
        json_object *stt = json_object_new_object();
        jset_str(stt, "phase", "Active");
        json_object_object_add(o, "status", stt);
        break;
    }
    case K_CR:
        if (rt->pub.status_sub) json_object_object_del(o, "status");
        break;
    case K_CRD:
        json_object_object_del(o, "status");
        break;
    default:
        break;
    }
    if (rt->kid == K_NS) {
        ensure_obj(m, "labels");
        jset_str(jget(m, "labels"), "kubernetes.io/metadata.name", jstr(m, "name"));
    }
}

/* The schema of a custom resource (pruning, defaults, validation) before
 * the store's lock is taken, as kube-apiserver validates before admission
 * and storage: the server goes on serving while a large object is checked.
 * A schema replaced meanwhile stays alive (the store keeps old ones). */
static void schema_check_unlocked(cu_store *s, rt_ent *rt, json_object *o, ferrs *fe)
{
    pthread_mutex_lock(&s->mu);
    json_object *schema = rt->pub.schema;
    const cu_schema_rx *rx = rt->pub.schema_rx;
    pthread_mutex_unlock(&s->mu);
    if (rt->pub.status_sub) json_object_object_del(o, "status");   /* as prepare_create */
    schema_check_with(schema, rx, o, fe);
}

cu_err cu_store_create(cu_store *s, const cu_rtype *rtp, const char *ns, json_object *obj,
                       json_object **out, cu_status *st)
{
    rt_ent *rt = (rt_ent *)rtp;
    cu_err err = CU_OK;
    opctx c;
    memset(&c, 0, sizeof(c));
    if (out) *out = NULL;
    if (!rt || !obj || !json_object_is_type(obj, json_type_object)) {
        json_object_put(obj);
        return cu_status_set(st, 400, "BadRequest", "the request body must be a JSON object");
    }
    if ((err = check_type_meta(rt, obj, st)) != CU_OK) { json_object_put(obj); return err; }
    if ((err = objmeta_check(rt, obj, st)) != CU_OK) { json_object_put(obj); return err; }
    json_object *m = jmeta(obj);
    const char *mns = jstr(m, "namespace");
    char nsbuf[300] = "";
    if (rt->pub.namespaced) {
        if (!ns || !*ns) ns = mns;
        if (!ns || !*ns) {
            json_object_put(obj);
            return cu_status_set(st, 400, "BadRequest", "the namespace of the object is required");
        }
        if (mns && *mns && strcmp(mns, ns)) {
            json_object_put(obj);
            return cu_status_set(st, 400, "BadRequest",
                                 "the namespace of the provided object does not match the namespace "
                                 "sent on the request");
        }
        snprintf(nsbuf, sizeof(nsbuf), "%s", ns);
        jset_str(m, "namespace", nsbuf);
    } else {
        json_object_object_del(m, "namespace");
    }
    const char *name = jstr(m, "name"), *gen = jstr(m, "generateName");
    int generate = 0;
    ferrs fe;
    fe.n = fe.total = 0;
    if (!name || !*name) {
        if (gen && *gen) generate = 1;
        else ferr_add(&fe, "metadata.name", "FieldValueRequired",
                      "Required value: name or generateName is required");
    }
    char namebuf[300];
    if (generate) {
        char probe[300];
        snprintf(probe, sizeof(probe), "%.58sbbbbb", gen);
        check_name(rt, probe, strlen(probe), &fe);
    } else if (name && *name) {
        check_name(rt, name, (size_t)json_object_get_string_len(jget(m, "name")), &fe);
    }
    snprintf(namebuf, sizeof(namebuf), "%s", name ? name : "");
    if (fe.n) {
        err = err_invalid(st, rt, namebuf, &fe);
        json_object_put(obj);
        return err;
    }
    /* system fields are the server's */
    json_object_object_del(m, "uid");
    json_object_object_del(m, "resourceVersion");
    json_object_object_del(m, "deletionTimestamp");
    json_object_object_del(m, "deletionGracePeriodSeconds");
    json_object_object_del(m, "selfLink");
    json_object_object_del(m, "generation");
    if (rt->gen) json_object_object_add(m, "generation", json_object_new_int64(1));
    if (rt->kid == K_CR) {
        schema_check_unlocked(s, rt, obj, &fe);
        if (fe.n) {
            err = err_invalid(st, rt, namebuf, &fe);
            json_object_put(obj);
            return err;
        }
    }

    pthread_mutex_lock(&s->mu);
    if (!rt->served) { err = err_not_served(st); goto out; }
    if (rt->res->crd_terminating) {
        err = cu_status_set(st, 405, "MethodNotAllowed",
                            "create not allowed while custom resource definition is terminating");
        goto out;
    }
    if (rt->pub.namespaced && s->r_ns) {
        ent *nse = ent_find(s->r_ns, NULL, nsbuf);
        if (!nse) {
            err = cu_status_set(st, 404, "NotFound", "namespaces \"%s\" not found", nsbuf);
            st_details(st, "namespaces", nsbuf, "");
            goto out;
        }
        if (nse->terminating) {
            err = cu_status_set(st, 403, "Forbidden",
                                "%s \"%s\" is forbidden: unable to create new content in namespace "
                                "%s because it is being terminated", rt->res->qname, namebuf, nsbuf);
            st_details(st, rt->pub.resource, namebuf, rt->pub.group);
            goto out;
        }
    }
    if (generate) {
        static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
        int tries = 0;
        do {
            char sfx[6];
            for (int i = 0; i < 5; i++) sfx[i] = alphabet[rng_next(s) % (sizeof(alphabet) - 1)];
            sfx[5] = '\0';
            snprintf(namebuf, sizeof(namebuf), "%.58s%s", gen, sfx);
        } while (ent_find(rt->res, nsbuf, namebuf) && ++tries < 16);
        jset_str(m, "name", namebuf);
    }
    if (ent_find(rt->res, nsbuf, namebuf)) {
        err = cu_status_set(st, 409, "AlreadyExists", "%s \"%s\" already exists", rt->res->qname,
                            namebuf);
        st_details(st, rt->pub.resource, namebuf, rt->pub.group);
        goto out;
    }
    char uid[48], ts[40];
    gen_uid(s, uid);
    now_str(s, ts, sizeof(ts));
    jset_str(m, "uid", uid);
    jset_str(m, "creationTimestamp", ts);
    prepare_create(rt, obj);
    if (rt->kid == K_CRD && (err = register_crd_locked(s, obj, st)) != CU_OK) goto out;
    err = commit_put(s, &c, rt, NULL, obj, st);
out:
    op_finish(s, &c);
    if (err == CU_OK && out) *out = to_rt(rt, obj);
    else json_object_put(obj);
    return err;
}

cu_err cu_store_get(cu_store *s, const cu_rtype *rtp, const char *ns, const char *name,
                    json_object **out, cu_status *st)
{
    rt_ent *rt = (rt_ent *)rtp;
    *out = NULL;
    pthread_mutex_lock(&s->mu);
    if (!rt->served) { pthread_mutex_unlock(&s->mu); return err_not_served(st); }
    ent *e = ent_find(rt->res, ns, name ? name : "");
    if (!e) {
        cu_err err = err_notfound(st, rt, name ? name : "");
        pthread_mutex_unlock(&s->mu);
        return err;
    }
    rstr *d = rstr_ref(e->data);
    pthread_mutex_unlock(&s->mu);
    json_object *o = jparse_r(d);
    rstr_unref(d);
    if (!o) return cu_status_set(st, 500, "InternalError", "stored object is not valid JSON");
    *out = to_rt(rt, o);
    return CU_OK;
}

/* Copies field k of src into dst (or removes it from dst). */
static void copy_field(json_object *dst, json_object *src, const char *k)
{
    json_object *v = jget(src, k);
    if (!v) { json_object_object_del(dst, k); return; }
    json_object *c = NULL;
    json_object_deep_copy(v, &c, NULL);
    json_object_object_add(dst, k, c);
}

static int field_equal(json_object *a, json_object *b, const char *k)
{
    json_object *x = jget(a, k), *y = jget(b, k);
    if (!x || !y) return !x && !y;
    return json_object_equal(x, y);
}

/* Did the object's "spec" change (for CRs: anything but metadata and status)? */
static int spec_changed(const rt_ent *rt, json_object *old, json_object *nw)
{
    if (rt->kid != K_CR) return !field_equal(old, nw, "spec");
    json_object_object_foreach(nw, k, v) {
        (void)v;
        if (!strcmp(k, "metadata") || !strcmp(k, "status") || !strcmp(k, "apiVersion") || !strcmp(k, "kind"))
            continue;
        if (!field_equal(old, nw, k)) return 1;
    }
    json_object_object_foreach(old, k2, v2) {
        (void)v2;
        if (!strcmp(k2, "metadata") || !strcmp(k2, "status") || !strcmp(k2, "apiVersion") || !strcmp(k2, "kind"))
            continue;
        if (!jget(nw, k2)) return 1;
    }
    return 0;
}

cu_err cu_store_update(cu_store *s, const cu_rtype *rtp, const char *ns, const char *name,
                       const char *subresource, json_object *obj, json_object **out,
                       cu_status *st)
{
    rt_ent *rt = (rt_ent *)rtp;
    opctx c;
    memset(&c, 0, sizeof(c));
    cu_err err = CU_OK;
    json_object *old = NULL, *nw = NULL;
    int status_ep = subresource && *subresource;
    if (out) *out = NULL;
    if (!rt || !name) { json_object_put(obj); return cu_status_set(st, 400, "BadRequest", "no name"); }
    if (status_ep && (strcmp(subresource, "status") || !rt->pub.status_sub)) {
        json_object_put(obj);
        return err_not_served(st);
    }
    if (!obj || !json_object_is_type(obj, json_type_object)) {
        json_object_put(obj);
        return cu_status_set(st, 400, "BadRequest", "the request body must be a JSON object");
    }
    if ((err = check_type_meta(rt, obj, st)) != CU_OK) { json_object_put(obj); return err; }
    if ((err = objmeta_check(rt, obj, st)) != CU_OK) { json_object_put(obj); return err; }
    json_object *m = jmeta(obj);
    const char *mname = jstr(m, "name"), *mns = jstr(m, "namespace");
    if (mname && *mname && strcmp(mname, name)) {
        err = cu_status_set(st, 400, "BadRequest",
                            "the name of the object (%s) does not match the name on the URL (%s)",
                            mname, name);
        json_object_put(obj);
        return err;
    }
    if (rt->pub.namespaced && ns && *ns && mns && *mns && strcmp(mns, ns)) {
        json_object_put(obj);
        return cu_status_set(st, 400, "BadRequest",
                             "the namespace of the provided object does not match the namespace "
                             "sent on the request");
    }
    pthread_mutex_lock(&s->mu);
    if (!rt->served) { err = err_not_served(st); goto out; }
    ent *e = ent_find(rt->res, ns, name);
    if (!e) { err = err_notfound(st, rt, name); goto out; }
    const char *rvs = jstr(m, "resourceVersion");
    if (rvs && *rvs) {
        int64_t rv;
        if (parse_rv(rvs, &rv)) {
            err = err_invalid1(st, rt, name, "metadata.resourceVersion", "FieldValueInvalid",
                               "Invalid value: \"invalid\": must be a valid resource version");
            goto out;
        }
        if (rv != e->rv) { err = err_conflict(st, rt, name); goto out; }
    } else if (!rt->uncond) {
        err = err_invalid1(st, rt, name, "metadata.resourceVersion", "FieldValueInvalid",
                           "Invalid value: 0x0: must be specified for an update");
        goto out;
    }
    old = jparse_r(e->data);
    if (!old) { err = cu_status_set(st, 500, "InternalError", "stored object is not valid JSON"); goto out; }
    if (status_ep) {
        json_object_deep_copy(old, &nw, NULL);
        copy_field(nw, obj, "status");
        /* managedFields carry the status write's ownership (kube-apiserver's
         * status strategies reset all metadata but managedFields) */
        if (jget(jmeta(obj), "managedFields"))
            copy_field(jmeta(nw), jmeta(obj), "managedFields");
        json_object_put(obj);
        obj = NULL;
    } else {
        nw = obj;
        obj = NULL;
        if (rt->pub.status_sub) copy_field(nw, old, "status");
        json_object *nm = jmeta(nw), *om = jget(old, "metadata");
        jset_str(nm, "name", name);
        if (rt->pub.namespaced) jset_str(nm, "namespace", e->ns);
        else json_object_object_del(nm, "namespace");
        const char *keep[] = {"uid", "creationTimestamp", "deletionTimestamp",
                              "deletionGracePeriodSeconds", "generation", "selfLink"};
        for (size_t i = 0; i < sizeof(keep) / sizeof(*keep); i++) copy_field(nm, om, keep[i]);
        if (jget(om, "deletionTimestamp")) {
            json_object *nf = jget(nm, "finalizers"), *of = jget(om, "finalizers");
            char added[512] = "";
            for (size_t i = 0; i < jarr_len(nf); i++) {
                json_object *f = json_object_array_get_idx(nf, i);
                if (json_object_is_type(f, json_type_string) && !jarr_has_str(of, json_object_get_string(f))) {
                    size_t l = strlen(added);
                    snprintf(added + l, sizeof(added) - l, "%s\"%s\"", l ? ", " : "",
                             json_object_get_string(f));
                }
            }
            if (added[0]) {
                char msg[700];
                snprintf(msg, sizeof(msg), "Forbidden: no new finalizers can be added if the object "
                         "is being deleted, found new finalizers []string{%s}", added);
                err = err_invalid1(st, rt, name, "metadata.finalizers", "FieldValueForbidden", msg);
                goto out;
            }
        }
        if (rt->kid == K_NS) {
            ensure_obj(nw, "spec");
            copy_field(jget(nw, "spec"), jget(old, "spec"), "finalizers");
            ensure_obj(nm, "labels");
            jset_str(jget(nm, "labels"), "kubernetes.io/metadata.name", name);
        }
    }
    {
        ferrs fe;
        fe.n = fe.total = 0;
        if (rt->kid == K_CR) schema_check(rt, nw, &fe);
        if (fe.n) { err = err_invalid(st, rt, name, &fe); goto out; }
    }
    if (rt->kid == K_CRD && !status_ep && !field_equal(old, nw, "spec") &&
        (err = register_crd_locked(s, nw, st)) != CU_OK)
        goto out;
    if (rt->gen && spec_changed(rt, old, nw)) {
        json_object *g = jget(jget(old, "metadata"), "generation");
        int64_t gv = g ? json_object_get_int64(g) : 0;
        json_object_object_add(jmeta(nw), "generation", json_object_new_int64(gv + 1));
    }
    /* a no-op update writes nothing and keeps the resourceVersion */
    set_rv(nw, e->rv);
    to_rt(rt->res->storage_rt, nw);
    if (json_object_equal(nw, old)) goto out;
    err = commit_or_remove(s, &c, rt, e, nw, st);
    cascade(s, &c);
out:
    op_finish(s, &c);
    json_object_put(obj);
    json_object_put(old);
    if (err == CU_OK && out) *out = to_rt(rt, nw);
    else json_object_put(nw);
    return err;
}

cu_err cu_store_delete(cu_store *s, const cu_rtype *rtp, const char *ns, const char *name,
                       const char *propagation, const char *precondition_rv,
                       json_object **out, cu_status *st)
{
    rt_ent *rt = (rt_ent *)rtp;
    opctx c;
    memset(&c, 0, sizeof(c));
    cu_err err = CU_OK;
    json_object *o = NULL;
    if (out) *out = NULL;
    if (!rt || !name) return cu_status_set(st, 400, "BadRequest", "no name");
    if (propagation && *propagation && strcmp(propagation, "Background") &&
        strcmp(propagation, "Foreground") && strcmp(propagation, "Orphan"))
        return cu_status_set(st, 400, "BadRequest",
                             "propagationPolicy: Unsupported value: \"%s\": supported values: "
                             "\"Foreground\", \"Background\", \"Orphan\"", propagation);
    /* batch/v1 Jobs orphan their pods unless told otherwise, as kube-apiserver does */
    if (!propagation || !*propagation) propagation = rt->kid == K_JOB ? "Orphan" : "Background";
    pthread_mutex_lock(&s->mu);
    if (!rt->served) { err = err_not_served(st); goto out; }
    ent *e = ent_find(rt->res, ns, name);
    if (!e) { err = err_notfound(st, rt, name); goto out; }
    if (precondition_rv && *precondition_rv) {
        int64_t rv;
        if (parse_rv(precondition_rv, &rv) || rv != e->rv) {
            err = cu_status_set(st, 409, "Conflict",
                                "Operation cannot be fulfilled on %s \"%s\": the ResourceVersion in "
                                "the precondition (%s) does not match the ResourceVersion in record "
                                "(%lld). The object might have been modified",
                                rt->res->qname, name, precondition_rv, (long long)e->rv);
            st_details(st, rt->pub.resource, name, rt->pub.group);
            goto out;
        }
    }
    if (rt->kid == K_NS && (!strcmp(name, "default") || !strcmp(name, "kube-system") ||
                            !strcmp(name, "kube-public"))) {
        err = cu_status_set(st, 403, "Forbidden",
                            "namespaces \"%s\" is forbidden: this namespace may not be deleted", name);
        st_details(st, "namespaces", name, "");
        goto out;
    }
    err = del_ent(s, &c, rt, e, propagation, &o, st);
    cascade(s, &c);
out:
    op_finish(s, &c);
    if (err == CU_OK && out) *out = to_rt(rt, o);
    else json_object_put(o);
    return err;
}

/* ------------------------------------------------------------------ */
/* list                                                                 */

static const char B64URL[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static char *b64url_enc(const char *in, size_t n)
{
    char *o = malloc(n * 4 / 3 + 5), *p = o;
    if (!o) return NULL;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)(unsigned char)in[i] << 16;
        if (i + 1 < n) v |= (uint32_t)(unsigned char)in[i + 1] << 8;
        if (i + 2 < n) v |= (unsigned char)in[i + 2];
        *p++ = B64URL[(v >> 18) & 63];
        *p++ = B64URL[(v >> 12) & 63];
        if (i + 1 < n) *p++ = B64URL[(v >> 6) & 63];
        if (i + 2 < n) *p++ = B64URL[v & 63];
    }
    *p = '\0';
    return o;
}

static char *b64url_dec(const char *in, size_t *outn)
{
    size_t n = strlen(in);
    char *o = malloc(n * 3 / 4 + 4);
    if (!o) return NULL;
    uint32_t acc = 0;
    int bits = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const char *pos = in[i] ? strchr(B64URL, in[i]) : NULL;
        if (in[i] == '=') break;
        if (!pos) {
            /* accept the standard alphabet too */
            if (in[i] == '+') pos = B64URL + 62;
            else if (in[i] == '/') pos = B64URL + 63;
            else { free(o); return NULL; }
        }
        acc = (acc << 6) | (uint32_t)(pos - B64URL);
        bits += 6;
        if (bits >= 8) { bits -= 8; o[k++] = (char)((acc >> bits) & 0xff); }
    }
    o[k] = '\0';
    *outn = k;
    return o;
}

static char *cont_encode(int64_t rv, const char *key)
{
    json_object *t = json_object_new_object();
    jset_str(t, "v", "meta.k8s.io/v1");
    json_object_object_add(t, "rv", json_object_new_int64(rv));
    jset_str(t, "start", key);
    const char *js = json_object_to_json_string_ext(t, JSON_C_TO_STRING_PLAIN);
    char *r = b64url_enc(js, strlen(js));
    json_object_put(t);
    return r;
}

static int cont_decode(const char *tok, int64_t *rv, char *key, size_t keyn)
{
    size_t n = 0;
    char *raw = b64url_dec(tok, &n);
    if (!raw) return -1;
    json_object *t = jparse(raw, n);
    free(raw);
    const char *v = jstr(t, "v"), *start = jstr(t, "start");
    json_object *r = jget(t, "rv");
    int ok = v && !strcmp(v, "meta.k8s.io/v1") && start && r && json_object_is_type(r, json_type_int);
    if (ok) {
        *rv = json_object_get_int64(r);
        snprintf(key, keyn, "%s", start);
    }
    json_object_put(t);
    return ok ? 0 : -1;
}

/* LIST as a json-c tree (out) or as JSON text (raw, rawn). */
static cu_err list_impl(cu_store *s, const cu_rtype *rtp, const char *ns, const cu_list_opts *o,
                        json_object **out, char **raw, size_t *rawn, cu_status *st)
{
    rt_ent *rt = (rt_ent *)rtp;
    selector sl;
    cu_err err;
    if (out) *out = NULL;
    if (raw) *raw = NULL;
    if ((err = sel_parse(rt, o, &sl, st)) != CU_OK) return err;
    const char *cont = o ? o->cont : NULL, *rvq = o ? o->resource_version : NULL;
    const char *match = o ? o->rv_match : NULL;
    int64_t limit = o && o->limit > 0 ? o->limit : 0;
    int64_t crv = 0, qrv = 0;
    char start[KEY_MAX] = "";
    if (cont && *cont) {
        if (rvq && *rvq) {
            sel_free(&sl);
            return cu_status_set(st, 400, "BadRequest",
                                 "specifying resource version is not allowed when using continue");
        }
        if (cont_decode(cont, &crv, start, sizeof(start))) {
            sel_free(&sl);
            return cu_status_set(st, 400, "BadRequest",
                                 "continue key is not valid: incorrect encoded start resourceVersion "
                                 "(version meta.k8s.io/v1)");
        }
    }
    if (rvq && *rvq && parse_rv(rvq, &qrv)) {
        sel_free(&sl);
        return cu_status_set(st, 400, "BadRequest", "invalid resource version: %s", rvq);
    }
    if (match && *match) {
        /* kube-apiserver's ListOptions validation: 422 Invalid */
        ferrs fe;
        fe.n = fe.total = 0;
        if (!(rvq && *rvq))
            ferr_add(&fe, "resourceVersionMatch", "FieldValueForbidden",
                     "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided");
        if (cont && *cont)
            ferr_add(&fe, "resourceVersionMatch", "FieldValueForbidden",
                     "Forbidden: resourceVersionMatch is forbidden when continue is provided");
        if (strcmp(match, "NotOlderThan") && strcmp(match, "Exact"))
            ferr_add(&fe, "resourceVersionMatch", "FieldValueNotSupported",
                     "Unsupported value: \"%s\": supported values: \"Exact\", \"NotOlderThan\", \"\"",
                     match);
        if (!strcmp(match, "Exact") && rvq && !strcmp(rvq, "0"))
            ferr_add(&fe, "resourceVersionMatch", "FieldValueForbidden",
                     "Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"");
        if (fe.n) {
            sel_free(&sl);
            return err_invalid_gk(st, "ListOptions", "meta.k8s.io", "", &fe);
        }
    }

    pthread_mutex_lock(&s->mu);
    if (!rt->served) { pthread_mutex_unlock(&s->mu); sel_free(&sl); return err_not_served(st); }
    res_t *r = rt->res;
    int64_t list_rv = s->rv;
    if (cont && *cont) {
        if (crv < s->hist_rv) {
            pthread_mutex_unlock(&s->mu);
            sel_free(&sl);
            return cu_status_set(st, 410, "Expired",
                                 "The provided continue parameter is too old to display a consistent "
                                 "list result. You can start a new list without the continue "
                                 "parameter, or use the continue token in this response to retrieve "
                                 "the remainder of the results. Continuing with the provided token "
                                 "results in an inconsistent list - objects that were created, "
                                 "modified, or deleted between the time the first chunk was returned "
                                 "and now may show up in the list.");
        }
        list_rv = crv;
    } else if (rvq && *rvq && qrv > 0) {
        if (qrv > s->rv) {
            int64_t cur = s->rv;
            pthread_mutex_unlock(&s->mu);
            sel_free(&sl);
            return cu_status_set(st, 504, "Timeout",
                                 "Too large resource version: %lld, current: %lld",
                                 (long long)qrv, (long long)cur);
        }
        if (match && !strcmp(match, "Exact")) {
            /* the state at qrv can be served only if nothing changed since */
            if (r->last_rv > qrv) {
                pthread_mutex_unlock(&s->mu);
                sel_free(&sl);
                return cu_status_set(st, 410, "Expired", "too old resource version: %lld (%lld)",
                                     (long long)qrv, (long long)r->last_rv);
            }
            list_rv = qrv;
        }
    }
    res_sort(r);
    char prefix[KEY_MAX] = "";
    int by_ns = rt->pub.namespaced && ns && *ns;
    if (by_ns) snprintf(prefix, sizeof(prefix), "%s/", ns);
    size_t pl = strlen(prefix);
    size_t a = by_ns ? res_bound(r, prefix, 0) : 0;
    if (start[0]) {
        size_t b = res_bound(r, start, 1);
        if (b > a) a = b;
    }
    size_t b = a;
    while (b < r->n && (!by_ns || strncmp(r->vec[b]->key, prefix, pl) == 0)) b++;
    /* without selectors only limit (+1 to know whether more remain) are needed */
    size_t want = b - a;
    if (limit && sel_empty(&sl) && (size_t)limit < want) want = (size_t)limit;
    size_t total = b - a;
    rstr **refs = want ? malloc(want * sizeof(*refs)) : NULL;
    char **keys = want ? malloc(want * sizeof(*keys)) : NULL;
    if (want && (!refs || !keys)) {
        pthread_mutex_unlock(&s->mu);
        free(refs); free(keys); sel_free(&sl);
        return cu_status_set(st, 500, "InternalError", "out of memory");
    }
    for (size_t i = 0; i < want; i++) {
        refs[i] = rstr_ref(r->vec[a + i]->data);
        keys[i] = limit ? strdup(r->vec[a + i]->key) : NULL; /* for the continue token */
    }
    int plain = !r->multi && rt == r->storage_rt;
    pthread_mutex_unlock(&s->mu);

    json_object *items = out ? json_object_new_array_ext(want < 1024 ? (int)want : 1024) : NULL;
    cu_buf rb;
    cu_buf_init(&rb, (size_t)1 << 31);
    size_t used = 0, taken = 0;
    char lastkey[KEY_MAX] = "";
    for (size_t i = 0; i < want; i++) {
        if (limit && taken >= (size_t)limit) break;
        used = i + 1;
        json_object *it = NULL;
        if (out || !sel_empty(&sl) || !plain) {
            it = jparse_r(refs[i]);
            if (!it) continue;
            if (!sel_empty(&sl) && !sel_match(&sl, it)) { json_object_put(it); continue; }
        }
        if (keys[i]) snprintf(lastkey, sizeof(lastkey), "%s", keys[i]);
        if (out) {
            json_object_array_add(items, to_rt(rt, it));
        } else {
            if (taken) cu_buf_append(&rb, ",", 1);
            if (plain) {
                cu_buf_append(&rb, refs[i]->s, refs[i]->len);
            } else {
                size_t n = 0;
                const char *js = json_object_to_json_string_length(
                    to_rt(rt, it), JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n);
                cu_buf_append(&rb, js, n);
            }
            json_object_put(it);
        }
        taken++;
    }
    size_t remaining = total - used;
    for (size_t i = 0; i < want; i++) { rstr_unref(refs[i]); free(keys[i]); }
    free(refs);
    free(keys);

    json_object *lst = json_object_new_object();
    jset_str(lst, "kind", rt->pub.list_kind);
    char av[300];
    if (rt->pub.group[0]) snprintf(av, sizeof(av), "%s/%s", rt->pub.group, rt->pub.version);
    else snprintf(av, sizeof(av), "%s", rt->pub.version);
    jset_str(lst, "apiVersion", av);
    json_object *lm = json_object_new_object();
    char rvb[32];
    snprintf(rvb, sizeof(rvb), "%lld", (long long)list_rv);
    jset_str(lm, "resourceVersion", rvb);
    if (limit && remaining > 0 && taken > 0) {
        char *tok = cont_encode(list_rv, lastkey);
        if (tok) { jset_str(lm, "continue", tok); free(tok); }
        if (sel_empty(&sl))
            json_object_object_add(lm, "remainingItemCount", json_object_new_int64((int64_t)remaining));
    }
    if (out) {
        json_object_object_add(lst, "metadata", lm);
        json_object_object_add(lst, "items", items);
        *out = lst;
    } else {
        /* the list's own fields, then the items as stored */
        json_object_object_add(lst, "metadata", lm);
        json_object_object_add(lst, "items", json_object_new_array());
        size_t hn = 0;
        const char *hs = json_object_to_json_string_length(lst, JSON_C_TO_STRING_PLAIN, &hn);
        /* hs ends with "[]}": splice the items between the brackets */
        cu_buf fb;
        cu_buf_init(&fb, (size_t)1 << 31);
        cu_buf_append(&fb, hs, hn - 2);
        cu_buf_append(&fb, rb.data ? rb.data : "", rb.len);
        cu_buf_append(&fb, "]}", 2);
        json_object_put(lst);
        if (fb.failed || rb.failed) {
            cu_buf_free(&fb);
            cu_buf_free(&rb);
            sel_free(&sl);
            return cu_status_set(st, 500, "InternalError", "list too large");
        }
        *raw = fb.data;
        *rawn = fb.len;
    }
    cu_buf_free(&rb);
    sel_free(&sl);
    return CU_OK;
}

cu_err cu_store_list(cu_store *s, const cu_rtype *rtp, const char *ns, const cu_list_opts *o,
                     json_object **out, cu_status *st)
{
    return list_impl(s, rtp, ns, o, out, NULL, NULL, st);
}

cu_err cu_store_list_raw(cu_store *s, const cu_rtype *rtp, const char *ns, const cu_list_opts *o,
                         char **out, size_t *len, cu_status *st)
{
    size_t n = 0;
    cu_err e = list_impl(s, rtp, ns, o, NULL, out, &n, st);
    if (len) *len = n;
    return e;
}

/* ------------------------------------------------------------------ */
/* watch                                                                */

cu_err cu_store_watch_open(cu_store *s, const cu_rtype *rtp, const char *ns,
                           const cu_list_opts *o, int bookmarks, cu_watch **out, cu_status *st)
{
    rt_ent *rt = (rt_ent *)rtp;
    *out = NULL;
    cu_watch *w = calloc(1, sizeof(*w));
    if (!w) return cu_status_set(st, 500, "InternalError", "out of memory");
    cu_err err = sel_parse(rt, o, &w->sel, st);
    if (err != CU_OK) { free(w); return err; }
    w->s = s;
    w->rt = rt;
    w->bookmarks = bookmarks;
    w->ns = (rt->pub.namespaced && ns && *ns) ? strdup(ns) : NULL;
    w->meta_only = sel_meta_only(&w->sel);
    const char *rvq = o ? o->resource_version : NULL;
    int64_t rv = 0;
    int initial = !rvq || !*rvq || strcmp(rvq, "0") == 0;
    if (!initial && parse_rv(rvq, &rv)) {
        sel_free(&w->sel);
        free(w->ns);
        free(w);
        return cu_status_set(st, 400, "BadRequest", "invalid resource version: %s", rvq);
    }
    pthread_mutex_lock(&s->mu);
    if (!rt->served) {
        pthread_mutex_unlock(&s->mu);
        sel_free(&w->sel); free(w->ns); free(w);
        return err_not_served(st);
    }
    if (!initial && rv < s->hist_rv) {
        int64_t h = s->hist_rv;
        pthread_mutex_unlock(&s->mu);
        sel_free(&w->sel); free(w->ns); free(w);
        return cu_status_set(st, 410, "Expired", "too old resource version: %lld (%lld)",
                             (long long)rv, (long long)h);
    }
    res_t *r = rt->res;
    if (initial) {
        res_sort(r);
        char prefix[KEY_MAX] = "";
        if (w->ns) snprintf(prefix, sizeof(prefix), "%s/", w->ns);
        size_t pl = strlen(prefix), a = w->ns ? res_bound(r, prefix, 0) : 0, b = a;
        while (b < r->n && (!w->ns || strncmp(r->vec[b]->key, prefix, pl) == 0)) b++;
        w->init = b > a ? malloc((b - a) * sizeof(*w->init)) : NULL;
        /* name and namespace requirements are decided here, from the
         * index: nothing else is referenced, parsed or copied for them */
        for (size_t i = a; w->init && i < b; i++)
            if (sel_meta_ok(&w->sel, r->vec[i]))
                w->init[w->ninit++] = rstr_ref(r->vec[i]->data);
        w->init_matched = sel_meta_only(&w->sel);
        w->min_rv = w->last_rv = s->rv;
        w->pos = s->head;
    } else {
        w->min_rv = w->last_rv = rv;
        uint64_t p = s->tail;
        while (p < s->head && s->ring[p % s->hcap].rv <= rv) p++;
        w->pos = p;
    }
    w->next = s->watchers;
    if (s->watchers) s->watchers->prev = w;
    s->watchers = w;
    pthread_mutex_unlock(&s->mu);
    *out = w;
    return CU_OK;
}

static char *ev_line(const char *type, const char *obj, size_t n)
{
    size_t tl = strlen(type);
    char *l = malloc(tl + n + 32);
    if (!l) return NULL;
    int k = sprintf(l, "{\"type\":\"%s\",\"object\":", type);
    memcpy(l + k, obj, n);
    l[k + n] = '}';
    l[k + n + 1] = '\0';
    return l;
}

static const char EV_BOOKMARK[] = "BOOKMARK", EV_ERROR[] = "ERROR";

/* The event for object data as w's type serves it: the stored bytes
 * themselves (a reference, shared by all watchers) when w's type is the
 * storage version; else the object converted for w (its own copy). 1, or
 * 0 when out of memory. */
static int w_ev(cu_watch *w, const char *type, rstr *data, json_object *parsed, cu_watch_ev *ev)
{
    ev->type = type;
    if (!w->rt->res->multi && w->rt == w->rt->res->storage_rt) {
        ev->obj = rstr_ref(data);
        return 1;
    }
    json_object *o = parsed ? json_object_get(parsed) : jparse_r(data);
    if (!o) return 0;
    to_rt(w->rt, o);
    size_t n = 0;
    const char *js = json_object_to_json_string_length(
        o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n);
    ev->obj = rstr_new(js, n);
    json_object_put(o);
    return ev->obj != NULL;
}

static int status_ev(int code, const char *reason, const char *msg, cu_watch_ev *ev)
{
    cu_status st;
    cu_status_set(&st, code, reason, "%s", msg);
    json_object *o = cu_status_json(&st);
    const char *js = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
    ev->type = EV_ERROR;
    ev->obj = rstr_new(js, strlen(js));
    json_object_put(o);
    return ev->obj != NULL;
}

/* The next event of w's initial list (1), or 0 when it is done. Runs
 * without the store's lock: the list is w's own references to the stored
 * objects, which become the events as they are (no copy per watcher). */
static int w_init_next(cu_watch *w, cu_watch_ev *ev)
{
    while (w->iinit < w->ninit) {
        rstr *d = w->init[w->iinit];
        w->init[w->iinit++] = NULL;
        int got = 0;
        if (sel_empty(&w->sel) || w->init_matched) {
            got = w_ev(w, EV_ADDED, d, NULL, ev);
        } else {
            json_object *o = jparse_r(d);
            if (o && sel_match(&w->sel, o)) got = w_ev(w, EV_ADDED, d, o, ev);
            json_object_put(o);
        }
        rstr_unref(d);
        if (got) return 1;
    }
    return 0;
}

/* The next event for w (1), or 0 when nothing is pending (lock held). */
static int w_poll(cu_watch *w, cu_watch_ev *ev)
{
    cu_store *s = w->s;
    if (w_init_next(w, ev)) return 1;
    if (w->pos < s->tail) {
        char msg[128];
        snprintf(msg, sizeof(msg), "too old resource version: %lld (%lld)", (long long)w->last_rv,
                 (long long)s->hist_rv);
        w->done = 1;
        return status_ev(410, "Expired", msg, ev);
    }
    while (w->pos < s->head) {
        sev *v = &s->ring[w->pos % s->hcap];
        w->pos++;
        if (v->res != w->rt->res || v->rv <= w->min_rv) continue;
        if (w->ns && strcmp(v->ns, w->ns)) continue;
        const char *type = v->type;
        int got = 0;
        if (sel_empty(&w->sel)) {
            got = w_ev(w, type, v->obj, NULL, ev);
        } else if (w->meta_only) {
            /* name and namespace never change: decided without parsing
             * (under the lock, for every watcher) */
            if (sel_meta_match(&w->sel, v->ns, v->name)) got = w_ev(w, type, v->obj, NULL, ev);
        } else {
            json_object *no = jparse_r(v->obj);
            int nm = no && sel_match(&w->sel, no);
            int om = 0;
            if (type == EV_MODIFIED && v->old) {
                json_object *oo = jparse_r(v->old);
                om = oo && sel_match(&w->sel, oo);
                json_object_put(oo);
            }
            if (type == EV_MODIFIED) {
                /* an object entering or leaving the selection */
                if (nm && !om) type = EV_ADDED;
                else if (!nm && om) type = EV_DELETED;
                else if (!nm) type = NULL;
            } else if (!nm) {
                type = NULL;
            }
            if (type) got = w_ev(w, type, v->obj, no, ev);
            json_object_put(no);
        }
        if (got) {
            w->last_rv = v->rv;
            return 1;
        }
    }
    return 0;
}

int cu_store_watch_next_ev(cu_watch *w, int timeout_ms, cu_watch_ev *ev)
{
    cu_store *s = w->s;
    ev->type = NULL;
    ev->obj = NULL;
    if (!s) { w->done = 1; return 0; }
    struct timespec dl;
    clock_gettime(CLOCK_MONOTONIC, &dl);
    if (timeout_ms > 0) {
        dl.tv_sec += timeout_ms / 1000;
        dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
        if (dl.tv_nsec >= 1000000000L) { dl.tv_sec++; dl.tv_nsec -= 1000000000L; }
    }
    if (w_init_next(w, ev)) return 1;
    int got = 0;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        if (w->done) break;
        if ((got = w_poll(w, ev)) != 0) break;
        if (w->ending || !w->rt->served) { w->done = 1; break; }
        if (timeout_ms <= 0) break;
        int rc = pthread_cond_timedwait(&s->cv, &s->mu, &dl);
        if (rc != 0) {
            /* one last look, then a bookmark if the RV moved on */
            if (!w->done) got = w_poll(w, ev);
            break;
        }
    }
    if (!got && !w->done && w->bookmarks && (s->rv > w->last_rv || !w->sent_bookmark)) {
        char b[512];
        char av[300];
        if (w->rt->pub.group[0]) snprintf(av, sizeof(av), "%s/%s", w->rt->pub.group, w->rt->pub.version);
        else snprintf(av, sizeof(av), "%s", w->rt->pub.version);
        int n = snprintf(b, sizeof(b),
                         "{\"kind\":\"%s\",\"apiVersion\":\"%s\",\"metadata\":{\"resourceVersion\":"
                         "\"%lld\",\"creationTimestamp\":null}}",
                         w->rt->pub.kind, av, (long long)s->rv);
        w->last_rv = s->rv;
        w->min_rv = w->min_rv > s->rv ? w->min_rv : s->rv;
        w->sent_bookmark = 1;
        ev->type = EV_BOOKMARK;
        ev->obj = rstr_new(b, (size_t)n);
        got = ev->obj != NULL;
    }
    pthread_mutex_unlock(&s->mu);
    return got;
}

char *cu_store_watch_next(cu_watch *w, int timeout_ms)
{
    cu_watch_ev ev;
    if (!cu_store_watch_next_ev(w, timeout_ms, &ev)) return NULL;
    char *l = ev_line(ev.type, ev.obj->s, ev.obj->len);
    rstr_unref(ev.obj);
    return l;
}

int cu_store_watch_done(const cu_watch *w) { return w->done; }

void cu_store_watch_close(cu_watch *w)
{
    if (!w) return;
    cu_store *s = w->s;
    if (s) {
        pthread_mutex_lock(&s->mu);
        if (w->prev) w->prev->next = w->next;
        else s->watchers = w->next;
        if (w->next) w->next->prev = w->prev;
        pthread_mutex_unlock(&s->mu);
    }
    for (size_t i = w->iinit; i < w->ninit; i++) rstr_unref(w->init[i]);
    free(w->init);
    sel_free(&w->sel);
    free(w->ns);
    free(w);
}

void cu_store_set_history_bytes(cu_store *s, size_t bytes)
{
    pthread_mutex_lock(&s->mu);
    s->hbytes_max = bytes ? bytes : CU_STORE_HISTORY_BYTES;
    pthread_mutex_unlock(&s->mu);
}

void cu_store_compact(cu_store *s)
{
    pthread_mutex_lock(&s->mu);
    while (s->tail < s->head) ring_pop(s);
    s->hist_rv = s->rv;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

void cu_store_drop_watches(cu_store *s)
{
    pthread_mutex_lock(&s->mu);
    for (cu_watch *w = s->watchers; w; w = w->next) w->done = 1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

int64_t cu_store_rv(cu_store *s)
{
    pthread_mutex_lock(&s->mu);
    int64_t rv = s->rv;
    pthread_mutex_unlock(&s->mu);
    return rv;
}

/* ------------------------------------------------------------------ */
/* lifecycle                                                            */

static uint64_t seed_rng(void)
{
    uint64_t seed = 0;
    int fd = open("/dev/urandom", O_RDONLY);
    if (fd >= 0) {
        if (read(fd, &seed, sizeof(seed)) != (ssize_t)sizeof(seed)) seed = 0;
        close(fd);
    }
    if (!seed) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)getpid();
    }
    return seed ? seed : 0x9e3779b97f4a7c15ULL;
}

cu_store *cu_store_new(size_t history, const cu_clock *clock)
{
    cu_store *s = calloc(1, sizeof(*s));
    if (!s) return NULL;
    pthread_mutex_init(&s->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->cv, &ca);
    pthread_condattr_destroy(&ca);
    if (clock) s->clock = *clock;
    else { s->clock.now_ms = os_now_ms; s->clock.ud = NULL; }
    s->rng = seed_rng();
    s->hcap = history ? history : 10000;
    s->hbytes_max = CU_STORE_HISTORY_BYTES;
    s->ring = calloc(s->hcap, sizeof(*s->ring));
    if (!s->ring) { cu_store_free(s); return NULL; }
    for (size_t i = 0; i < sizeof(BUILTINS) / sizeof(*BUILTINS); i++)
        if (add_builtin(s, &BUILTINS[i])) { cu_store_free(s); return NULL; }
    const char *nss[] = {"default", "kube-system", "kube-public", "kube-node-lease"};
    const cu_rtype *nrt = &s->r_ns->storage_rt->pub;
    for (size_t i = 0; i < 4; i++) {
        json_object *o = json_object_new_object();
        jset_str(jmeta(o), "name", nss[i]);
        if (cu_store_create(s, nrt, NULL, o, NULL, NULL) != CU_OK) { cu_store_free(s); return NULL; }
    }
    return s;
}

static void res_clear(res_t *r)
{
    for (size_t i = 0; i < r->n; i++) ent_free(r->vec[i]);
    r->n = 0;
    hm_free(&r->objs);
    r->sorted = 1;
}

static void maps_clear(cu_store *s)
{
    for (size_t i = 0; i < s->deps.cap; i++)
        if (s->deps.t[i].key) {
            deplist *d = s->deps.t[i].val;
            free(d->uid); free(d->v); free(d);
        }
    for (size_t i = 0; i < s->nss.cap; i++)
        if (s->nss.t[i].key) {
            nscount *n = s->nss.t[i].val;
            free(n->ns); free(n);
        }
    hm_free(&s->deps);
    hm_free(&s->nss);
    hm_free(&s->uids);
}

void cu_store_free(cu_store *s)
{
    if (!s) return;
    if (s->has_be && s->be.close) s->be.close(s->be.ud);
    for (cu_watch *w = s->watchers; w; w = w->next) { w->s = NULL; w->done = 1; }
    for (size_t i = 0; i < s->nres; i++) {
        res_t *r = s->res[i];
        res_clear(r);
        free(r->vec); free(r->qname); free(r->group); free(r->plural); free(r->crd_name);
        free(r);
    }
    free(s->res);
    maps_clear(s);
    for (size_t i = 0; i < s->nrts; i++) {
        cu_rtype *p = &s->rts[i]->pub;
        free(p->group); free(p->version); free(p->resource); free(p->singular);
        free(p->kind); free(p->list_kind);
        free_strv(p->short_names, p->nshort);
        free_strv(p->categories, p->ncat);
        free_cols(p->cols, p->ncols);
        json_object_put(p->schema);
        cu_schema_rx_free(p->schema_rx);
        free(s->rts[i]);
    }
    free(s->rts);
    while (s->ring && s->tail < s->head) {
        sev *v = &s->ring[s->tail % s->hcap];
        rstr_unref(v->obj); rstr_unref(v->old); free(v->ns);
        s->tail++;
    }
    free(s->ring);
    for (size_t i = 0; i < s->ngrave; i++) free(s->grave[i]);
    free(s->grave);
    for (size_t i = 0; i < s->njgrave; i++) json_object_put(s->jgrave[i]);
    free(s->jgrave);
    for (size_t i = 0; i < s->nrxgrave; i++) cu_schema_rx_free(s->rxgrave[i]);
    free(s->rxgrave);
    free(s->hooks);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

/* ------------------------------------------------------------------ */
/* backend seam (cu_persist.c)                                          */

void cu_store_set_backend(cu_store *s, const cu_store_backend *b)
{
    pthread_mutex_lock(&s->mu);
    if (s->has_be && s->be.close) s->be.close(s->be.ud);
    s->be = *b;
    s->has_be = 1;
    pthread_mutex_unlock(&s->mu);
}

void cu_store_reset(cu_store *s)
{
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < s->nres; i++) res_clear(s->res[i]);
    maps_clear(s);
    pthread_mutex_unlock(&s->mu);
}

cu_err cu_store_load(cu_store *s, const char *resname, const char *data, cu_status *st)
{
    json_object *o = jparse(data, strlen(data));
    if (!o) return cu_status_set(st, 500, "InternalError", "stored %s object is not valid JSON", resname);
    cu_err err = CU_OK;
    pthread_mutex_lock(&s->mu);
    res_t *r = res_by_qname(s, resname);
    if (r && r->kid == K_CRD) {
        err = register_crd_locked(s, o, st);
        if (err != CU_OK) goto out;
    }
    if (!r) {
        err = cu_status_set(st, 404, "NotFound", "the server could not find the requested resource "
                            "%s", resname);
        goto out;
    }
    json_object *m = jget(o, "metadata");
    const char *name = jstr(m, "name"), *ns = jstr(m, "namespace");
    int64_t rv = 0;
    if (!name || parse_rv(jstr(m, "resourceVersion"), &rv)) {
        err = cu_status_set(st, 500, "InternalError", "stored %s object has no name or resourceVersion",
                            resname);
        goto out;
    }
    ent *old = ent_find(r, ns, name);
    if (old) { ent_unlink(s, old); ent_free(old); }
    ent *e = ent_new(r, r->namespaced ? ns : NULL, name);
    rstr *d = serialize(o);
    if (!e || !d) { ent_free(e); rstr_unref(d); err = cu_status_set(st, 500, "InternalError", "out of memory"); goto out; }
    snprintf(e->uid, sizeof(e->uid), "%s", jstr(m, "uid") ? jstr(m, "uid") : "");
    e->data = d;
    e->rv = rv;
    if (ent_link(s, e)) { ent_free(e); err = cu_status_set(st, 500, "InternalError", "out of memory"); goto out; }
    ent_set_meta(s, e, o);
    if (rv > s->rv) s->rv = rv;
    if (rv > r->last_rv) r->last_rv = rv;
out:
    pthread_mutex_unlock(&s->mu);
    json_object_put(o);
    return err;
}

void cu_store_load_done(cu_store *s, int64_t counter)
{
    pthread_mutex_lock(&s->mu);
    if (counter > s->rv) s->rv = counter;
    while (s->tail < s->head) ring_pop(s);
    s->hist_rv = s->rv;
    /* restore terminating state of CRDs whose resources are being emptied */
    for (size_t i = 0; i < s->nres; i++) {
        res_t *r = s->res[i];
        if (r->kid != K_CRD) continue;
        for (size_t k = 0; k < r->n; k++) {
            ent *e = r->vec[k];
            if (!e->terminating) continue;
            json_object *o = jparse_r(e->data);
            json_object *spec = jget(o, "spec");
            res_t *cr = res_find_q(s, jstr(spec, "group") ? jstr(spec, "group") : "",
                                   jstr(jget(spec, "names"), "plural") ? jstr(jget(spec, "names"), "plural") : "");
            if (cr) cr->crd_terminating = 1;
            json_object_put(o);
        }
    }
    pthread_mutex_unlock(&s->mu);
}

cu_err cu_store_dump(cu_store *s, cu_err (*fn)(void *ud, const char *res, const char *ns,
                                                const char *name, int64_t rv, const char *data),
                     void *ud)
{
    cu_err err = CU_OK;
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < s->nres && err == CU_OK; i++)
        for (size_t k = 0; k < s->res[i]->n && err == CU_OK; k++) {
            ent *e = s->res[i]->vec[k];
            err = fn(ud, e->res->qname, e->ns, e->name, e->rv, e->data->s);
        }
    pthread_mutex_unlock(&s->mu);
    return err;
}
