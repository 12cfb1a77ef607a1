/*
 * cu_store.c - the embedded cluster's object store (see cu_store.h):
 * reference-counted strings, the hash map, helpers, statuses, the built-in
 * types, life cycle and the backend seam. The rest of the store:
 * cu_registry.c (served types, CRDs), cu_storeobj.c (objects, indexes,
 * events, deletion, GC), cu_storesel.c (selectors), cu_storecrud.c
 * (create/get/update/delete), cu_storewatch.c (list, watch);
 * internal/cu_store_int.h their shared types.
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
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cu_schema.h"
#include "cu_store.h"
#include "cu_objmeta.h"
#include "cu_hash.h"

#include "cu_store_int.h"

/* ------------------------------------------------------------------ */
/* reference-counted immutable strings                                  */

rstr *rstr_new(const char *s, size_t n)
{
    rstr *r = malloc(sizeof(*r) + n + 1);
    if (!r)
        return NULL;
    atomic_init(&r->refs, 1);
    r->len = n;
    memcpy(r->s, s, n);
    r->s[n] = '\0';
    return r;
}

rstr *rstr_ref(rstr *r)
{
    if (r)
        atomic_fetch_add(&r->refs, 1);
    return r;
}

void rstr_unref(rstr *r)
{
    if (r && atomic_fetch_sub(&r->refs, 1) == 1)
        free(r);
}

const char *cu_rstr_data(const cu_rstr *r, size_t *len)
{
    if (len)
        *len = r ? r->len : 0;
    return r ? r->s : "";
}

cu_rstr *cu_rstr_new(const char *s, size_t n) { return rstr_new(s, n); }

void cu_rstr_unref(cu_rstr *r) { rstr_unref(r); }

/* ------------------------------------------------------------------ */
/* string -> pointer hash map (open addressing, keys borrowed)          */

void *hm_get(const hmap *m, const char *k)
{
    if (!m->cap)
        return NULL;
    size_t i = cu_hash_str(k) & (m->cap - 1);
    while (m->t[i].key) {
        if (strcmp(m->t[i].key, k) == 0)
            return m->t[i].val;
        i = (i + 1) & (m->cap - 1);
    }
    return NULL;
}

static int hm_grow(hmap *m)
{
    size_t ncap = m->cap ? m->cap * 2 : 16;
    hslot *nt = calloc(ncap, sizeof(*nt));
    if (!nt)
        return -1;
    for (size_t j = 0; j < m->cap; j++) {
        if (!m->t[j].key)
            continue;
        size_t i = cu_hash_str(m->t[j].key) & (ncap - 1);
        while (nt[i].key)
            i = (i + 1) & (ncap - 1);
        nt[i] = m->t[j];
    }
    free(m->t);
    m->t = nt;
    m->cap = ncap;
    return 0;
}

/* Inserts or replaces; k must stay valid while it is in the map. */
int hm_put(hmap *m, const char *k, void *v)
{
    if ((m->n + 1) * 4 >= m->cap * 3 && hm_grow(m))
        return -1;
    size_t i = cu_hash_str(k) & (m->cap - 1);
    while (m->t[i].key) {
        if (strcmp(m->t[i].key, k) == 0) {
            m->t[i].key = k;
            m->t[i].val = v;
            return 0;
        }
        i = (i + 1) & (m->cap - 1);
    }
    m->t[i].key = k;
    m->t[i].val = v;
    m->n++;
    return 0;
}

void *hm_del(hmap *m, const char *k)
{
    if (!m->cap)
        return NULL;
    size_t mask = m->cap - 1, i = cu_hash_str(k) & mask;
    while (m->t[i].key && strcmp(m->t[i].key, k) != 0)
        i = (i + 1) & mask;
    if (!m->t[i].key)
        return NULL;
    void *v = m->t[i].val;
    m->t[i].key = NULL;
    m->n--;
    /* backward-shift deletion keeps probe chains intact */
    size_t j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (!m->t[j].key)
            break;
        size_t home = cu_hash_str(m->t[j].key) & mask;
        int move = (i <= j) ? (home <= i || home > j) : (home <= i && home > j);
        if (move) {
            m->t[i] = m->t[j];
            m->t[j].key = NULL;
            i = j;
        }
    }
    return v;
}

static void hm_free(hmap *m)
{
    free(m->t);
    m->t = NULL;
    m->cap = m->n = 0;
}

/* ------------------------------------------------------------------ */
/* small helpers                                                        */

void now_str(cu_store *s, char *buf, size_t n) { cu_time_format(cu_clock_now(&s->clock), buf, n); }

uint64_t rng_next(cu_store *s)
{
    uint64_t x = s->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    s->rng = x;
    return x * 2685821657736338717ULL;
}

void gen_uid(cu_store *s, char *out)
{
    unsigned char b[16];
    uint64_t a = rng_next(s), c = rng_next(s);
    memcpy(b, &a, 8);
    memcpy(b + 8, &c, 8);
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
    snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
             b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
}

char *xstrdup(const char *s) { return s ? strdup(s) : NULL; }

void grave_add(cu_store *s, void *p)
{
    if (!p)
        return;
    if (cu_vec_reserve(&s->grave, s->ngrave, &s->capgrave, sizeof(*s->grave), 32))
        return; /* leak rather than free memory a reader may hold */
    s->grave[s->ngrave++] = p;
}

void jgrave_add(cu_store *s, json_object *o)
{
    if (!o)
        return;
    if (cu_vec_reserve(&s->jgrave, s->njgrave, &s->capjgrave, sizeof(*s->jgrave), 16))
        return;
    s->jgrave[s->njgrave++] = o;
}

/* An old schema's compiled patterns stay with it until the store goes. */
void rxgrave_add(cu_store *s, cu_schema_rx *rx)
{
    if (!rx)
        return;
    cu_schema_rx **ng = realloc(s->rxgrave, (s->nrxgrave + 1) * sizeof(*ng));
    if (!ng)
        return; /* leak rather than free patterns a reader may use */
    s->rxgrave = ng;
    s->rxgrave[s->nrxgrave++] = rx;
}

/* A run of 19 or more digits: maybe an integer beyond int64, which json-c
 * would clip (a float64 such as 1e20 is stored as Go writes it, in full). */
static int long_digit_run(const char *s, size_t n)
{
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] >= '0' && s[i] <= '9') {
            if (++run >= 19)
                return 1;
        } else {
            run = 0;
        }
    }
    return 0;
}

json_object *jparse(const char *s, size_t n)
{
    if (long_digit_run(s, n)) {
        /* read as every input is: big integers become float64s, which
         * then serialize as Go writes them */
        char err[256];
        return cu_json_parse_checked(s, n, NULL, err, sizeof err);
    }
    json_tokener *tok = json_tokener_new_ex(CU_JSON_MAX_DEPTH + 1);
    if (!tok)
        return NULL;
    json_object *o = json_tokener_parse_ex(tok, s, (int)n);
    if (json_tokener_get_error(tok) != json_tokener_success) {
        json_object_put(o);
        o = NULL;
    }
    json_tokener_free(tok);
    return o;
}

json_object *jparse_r(const rstr *r) { return jparse(r->s, r->len); }

int jarr_has_str(json_object *a, const char *s)
{
    if (!a || !json_object_is_type(a, json_type_array))
        return 0;
    for (size_t i = 0; i < json_object_array_length(a); i++) {
        json_object *v = json_object_array_get_idx(a, i);
        if (json_object_is_type(v, json_type_string) && strcmp(json_object_get_string(v), s) == 0)
            return 1;
    }
    return 0;
}

int parse_rv(const char *s, int64_t *out)
{
    if (!s || !*s)
        return -1;
    int64_t v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9' || v > (INT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (*p - '0');
    }
    *out = v;
    return 0;
}

void make_key(char *buf, size_t n, const char *ns, const char *name)
{
    if (ns && *ns)
        snprintf(buf, n, "%s/%s", ns, name);
    else
        snprintf(buf, n, "%s", name);
}

/* ------------------------------------------------------------------ */
/* statuses                                                             */

cu_err cu_status_set(cu_status *st, int code, const char *reason, const char *fmt, ...)
{
    cu_err e;
    switch (code) {
    case 404: e = CU_ENOTFOUND; break;
    case 409:
        e = (reason && strcmp(reason, "AlreadyExists") == 0) ? CU_EEXIST : CU_ECONFLICT;
        break;
    case 410: e = CU_EGONE; break;
    case 429:
    case 500:
    case 503:
    case 504: e = CU_ETRANSIENT; break;
    default: e = CU_EINVAL; break;
    }
    if (!st)
        return e;
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
    cu_jset_str(o, "kind", "Status");
    cu_jset_str(o, "apiVersion", "v1");
    json_object_object_add(o, "metadata", json_object_new_object());
    cu_jset_str(o, "status", st->code >= 200 && st->code < 300 ? "Success" : "Failure");
    cu_jset_str(o, "message", st->message);
    if (st->reason[0])
        cu_jset_str(o, "reason", st->reason);
    if (st->name[0] || st->group[0] || st->kind[0] || st->ncauses) {
        json_object *d = json_object_new_object();
        if (st->name[0])
            cu_jset_str(d, "name", st->name);
        if (st->group[0])
            cu_jset_str(d, "group", st->group);
        if (st->kind[0])
            cu_jset_str(d, "kind", st->kind);
        if (st->ncauses) {
            json_object *ca = json_object_new_array();
            for (size_t i = 0; i < st->ncauses && i < 32; i++) {
                json_object *c = json_object_new_object();
                if (st->causes[i].type[0]) /* Go's omitempty */
                    cu_jset_str(c, "reason", st->causes[i].type);
                cu_jset_str(c, "message", st->causes[i].message);
                if (st->causes[i].field[0])
                    cu_jset_str(c, "field", st->causes[i].field);
                json_object_array_add(ca, c);
            }
            json_object_object_add(d, "causes", ca);
        }
        json_object_object_add(o, "details", d);
    } else if (st->empty_details) {
        json_object_object_add(o, "details", json_object_new_object());
    }
    json_object_object_add(o, "code", json_object_new_int(st->code));
    return o;
}

void st_details(cu_status *st, const char *kind, const char *name, const char *group)
{
    if (!st)
        return;
    /* details only: longer values are cut, never overflow */
    snprintf(st->kind, sizeof(st->kind), "%.*s", (int)sizeof(st->kind) - 1, kind ? kind : "");
    snprintf(st->name, sizeof(st->name), "%.*s", (int)sizeof(st->name) - 1, name ? name : "");
    snprintf(st->group, sizeof(st->group), "%.*s", (int)sizeof(st->group) - 1, group ? group : "");
}

cu_err err_notfound(cu_status *st, const rt_ent *rt, const char *name)
{
    cu_err e = cu_status_set(st, 404, "NotFound", "%s \"%s\" not found", rt->res->qname, name);
    st_details(st, rt->pub.resource, name, rt->pub.group);
    return e;
}

cu_err err_not_served(cu_status *st)
{
    return cu_status_set(st, 404, "NotFound", "the server could not find the requested resource");
}

cu_err err_conflict(cu_status *st, const rt_ent *rt, const char *name)
{
    cu_err e =
        cu_status_set(st, 409, "Conflict",
                      "Operation cannot be fulfilled on %s \"%s\": the object has been "
                      "modified; please apply your changes to the latest version and try again",
                      rt->res->qname, name);
    st_details(st, rt->pub.resource, name, rt->pub.group);
    return e;
}

void ferr_add(ferrs *fe, const char *field, const char *type, const char *fmt, ...)
{
    fe->total++;
    if (fe->n >= 32)
        return;
    va_list ap;
    va_start(ap, fmt);
    cu_schema_err_vadd(fe->e, 32, &fe->n, field, type, fmt, ap);
    va_end(ap);
}

cu_err err_invalid_gk(cu_status *st, const char *kind, const char *group, const char *name,
                      const ferrs *fe)
{
    char qk[256];
    if (group[0])
        snprintf(qk, sizeof(qk), "%s.%s", kind, group);
    else
        snprintf(qk, sizeof(qk), "%s", kind);
    cu_err e = cu_status_set(st, 422, "Invalid", "%s", "");
    if (!st)
        return e;
    cu_buf b;
    cu_buf_init(&b, sizeof(st->message) * 4);
    cu_buf_printf(&b, "%s \"%s\" is invalid: ", qk, name);
    /* the message names each distinct error once (kube-apiserver's
     * aggregate drops repeats); the causes keep them all */
    size_t distinct = 0;
    unsigned char dup[32] = { 0 };
    for (size_t i = 0; i < fe->n && i < 32; i++) {
        for (size_t j = 0; j < i && !dup[i]; j++)
            dup[i] = !strcmp(fe->e[i].field, fe->e[j].field) &&
                     !strcmp(fe->e[i].message, fe->e[j].message);
        distinct += !dup[i];
    }
    if (distinct > 1)
        cu_buf_puts(&b, "[");
    for (size_t i = 0, k = 0; i < fe->n; i++) {
        if (i < 32 && dup[i])
            continue;
        if (k++)
            cu_buf_puts(&b, ", ");
        if (fe->e[i].field[0])
            cu_buf_printf(&b, "%s: %s", fe->e[i].field, fe->e[i].message);
        else
            cu_buf_puts(&b, fe->e[i].message);
    }
    if (distinct > 1)
        cu_buf_puts(&b, "]");
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

cu_err err_invalid(cu_status *st, const rt_ent *rt, const char *name, const ferrs *fe)
{
    return err_invalid_gk(st, rt->pub.kind, rt->pub.group, name, fe);
}

cu_err err_invalid1(cu_status *st, const rt_ent *rt, const char *name, const char *field,
                    const char *type, const char *msg)
{
    ferrs fe;
    fe.n = fe.total = 0;
    ferr_add(&fe, field, type, "%s", msg);
    return err_invalid(st, rt, name, &fe);
}

/* ------------------------------------------------------------------ */
/* registry                                                             */

static const char *const F_POD[] = { "spec.nodeName",
                                     "spec.restartPolicy",
                                     "spec.schedulerName",
                                     "spec.serviceAccountName",
                                     "spec.hostNetwork",
                                     "status.phase",
                                     "status.podIP",
                                     "status.nominatedNodeName",
                                     NULL };
static const char *const F_NODE[] = { "spec.unschedulable", NULL };
static const char *const F_EVENT[] = { "involvedObject.kind",
                                       "involvedObject.namespace",
                                       "involvedObject.name",
                                       "involvedObject.uid",
                                       "involvedObject.apiVersion",
                                       "involvedObject.resourceVersion",
                                       "involvedObject.fieldPath",
                                       "reason",
                                       "reportingComponent",
                                       "source",
                                       "type",
                                       NULL };
static const char *const F_SECRET[] = { "type", NULL };
static const char *const F_NS[] = { "status.phase", NULL };
static const char *const F_JOB[] = { "status.successful", NULL };

/* cols: "NAME|type|jsonPath|priority;..." */
static const bdef BUILTINS[] = {
    { "", "v1", "namespaces", "namespace", "Namespace", 0, 1, 0, K_NS, "ns", "",
      "STATUS|string|.status.phase|0", F_NS },
    { "", "v1", "pods", "pod", "Pod", 1, 1, 1, K_POD, "po", "all",
      "STATUS|string|.status.phase|0;NODE|string|.spec.nodeName|1", F_POD },
    { "", "v1", "nodes", "node", "Node", 0, 1, 0, K_NODE, "no", "", "", F_NODE },
    { "", "v1", "events", "event", "Event", 1, 0, 0, K_EVENT, "ev", "",
      "TYPE|string|.type|0;REASON|string|.reason|0;MESSAGE|string|.message|0", F_EVENT },
    { "", "v1", "configmaps", "configmap", "ConfigMap", 1, 0, 0, K_OTHER, "cm", "", "", NULL },
    { "", "v1", "secrets", "secret", "Secret", 1, 0, 0, K_SECRET, "", "", "TYPE|string|.type|0",
      F_SECRET },
    { "", "v1", "serviceaccounts", "serviceaccount", "ServiceAccount", 1, 0, 0, K_OTHER, "sa", "",
      "", NULL },
    { "batch", "v1", "jobs", "job", "Job", 1, 1, 1, K_JOB, "", "all", "", F_JOB },
    { "events.k8s.io", "v1", "events", "event", "Event", 1, 0, 0, K_OTHER, "ev", "",
      "TYPE|string|.type|0;REASON|string|.reason|0;NOTE|string|.note|0", NULL },
    { "coordination.k8s.io", "v1", "leases", "lease", "Lease", 1, 0, 1, K_OTHER, "", "",
      "HOLDER|string|.spec.holderIdentity|0", NULL },
    { "scheduling.k8s.io", "v1", "priorityclasses", "priorityclass", "PriorityClass", 0, 0, 0,
      K_OTHER, "pc", "", "VALUE|integer|.value|0;GLOBAL-DEFAULT|boolean|.globalDefault|0", NULL },
    /* the aggregation layer (cu_aggregator.c): APIServices, and the
     * Services (with their EndpointSlices) they name */
    { "", "v1", "services", "service", "Service", 1, 1, 0, K_OTHER, "svc", "all",
      "TYPE|string|.spec.type|0;CLUSTER-IP|string|.spec.clusterIP|0;EXTERNAL-NAME|string|.spec."
      "externalName|1",
      NULL },
    { "discovery.k8s.io", "v1", "endpointslices", "endpointslice", "EndpointSlice", 1, 0, 0,
      K_OTHER, "", "", "ADDRESSTYPE|string|.addressType|0", NULL },
    { "apiregistration.k8s.io", "v1", "apiservices", "apiservice", "APIService", 0, 1, 0, K_OTHER,
      "", "",
      "SERVICE|string|.spec.service.name|0;AVAILABLE|string|.status.conditions[?(@.type==\"Available\")].status|0",
      NULL },
    /* admission webhooks (cu_admission.c) */
    { "admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations",
      "mutatingwebhookconfiguration", "MutatingWebhookConfiguration", 0, 0, 1, K_OTHER, "", "", "",
      NULL },
    { "admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations",
      "validatingwebhookconfiguration", "ValidatingWebhookConfiguration", 0, 0, 1, K_OTHER, "", "",
      "", NULL },
    { "apiextensions.k8s.io", "v1", "customresourcedefinitions", "customresourcedefinition",
      "CustomResourceDefinition", 0, 1, 1, K_CRD, "crd,crds", "",
      "CREATED AT|date|.metadata.creationTimestamp|0", NULL },
};

/* ------------------------------------------------------------------ */
/* lifecycle                                                            */

static uint64_t seed_rng(void)
{
    uint64_t seed = 0;
    int fd = open("/dev/urandom", O_RDONLY);
    if (fd >= 0) {
        if (read(fd, &seed, sizeof(seed)) != (ssize_t)sizeof(seed))
            seed = 0;
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
    if (!s)
        return NULL;
    pthread_mutex_init(&s->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->cv, &ca);
    pthread_condattr_destroy(&ca);
    if (clock)
        s->clock = *clock;
    else
        s->clock = cu_clock_system();
    s->rng = seed_rng();
    s->hcap = history ? history : 10000;
    s->hbytes_max = CU_STORE_HISTORY_BYTES;
    s->ring = calloc(s->hcap, sizeof(*s->ring));
    if (!s->ring) {
        cu_store_free(s);
        return NULL;
    }
    for (size_t i = 0; i < sizeof(BUILTINS) / sizeof(*BUILTINS); i++)
        if (add_builtin(s, &BUILTINS[i])) {
            cu_store_free(s);
            return NULL;
        }
    const char *nss[] = { "default", "kube-system", "kube-public", "kube-node-lease" };
    const cu_rtype *nrt = &s->r_ns->storage_rt->pub;
    for (size_t i = 0; i < 4; i++) {
        json_object *o = json_object_new_object();
        cu_jset_str(cu_jchild(o, "metadata"), "name", nss[i]);
        if (cu_store_create(s, nrt, NULL, o, NULL, NULL) != CU_OK) {
            cu_store_free(s);
            return NULL;
        }
    }
    return s;
}

static void res_clear(res_t *r)
{
    for (size_t i = 0; i < r->n; i++)
        ent_free(r->vec[i]);
    r->n = 0;
    hm_free(&r->objs);
    r->sorted = 1;
}

static void maps_clear(cu_store *s)
{
    for (size_t i = 0; i < s->deps.cap; i++)
        if (s->deps.t[i].key) {
            deplist *d = s->deps.t[i].val;
            free(d->uid);
            free(d->v);
            free(d);
        }
    for (size_t i = 0; i < s->nss.cap; i++)
        if (s->nss.t[i].key) {
            nscount *n = s->nss.t[i].val;
            free(n->ns);
            free(n);
        }
    hm_free(&s->deps);
    hm_free(&s->nss);
    hm_free(&s->uids);
}

void cu_store_free(cu_store *s)
{
    if (!s)
        return;
    if (s->has_be && s->be.close)
        s->be.close(s->be.ud);
    for (cu_watch *w = s->watchers; w; w = w->next) {
        w->s = NULL;
        w->done = 1;
    }
    for (size_t i = 0; i < s->nres; i++) {
        res_t *r = s->res[i];
        res_clear(r);
        free(r->vec);
        free(r->qname);
        free(r->group);
        free(r->plural);
        free(r->crd_name);
        free(r);
    }
    free(s->res);
    maps_clear(s);
    for (size_t i = 0; i < s->nrts; i++) {
        cu_rtype *p = &s->rts[i]->pub;
        free(p->group);
        free(p->version);
        free(p->resource);
        free(p->singular);
        free(p->kind);
        free(p->list_kind);
        free(p->deprecation);
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
        rstr_unref(v->obj);
        rstr_unref(v->old);
        free(v->ns);
        s->tail++;
    }
    free(s->ring);
    for (size_t i = 0; i < s->ngrave; i++)
        free(s->grave[i]);
    free(s->grave);
    for (size_t i = 0; i < s->njgrave; i++)
        json_object_put(s->jgrave[i]);
    free(s->jgrave);
    for (size_t i = 0; i < s->nrxgrave; i++)
        cu_schema_rx_free(s->rxgrave[i]);
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
    if (s->has_be && s->be.close)
        s->be.close(s->be.ud);
    s->be = *b;
    s->has_be = 1;
    pthread_mutex_unlock(&s->mu);
}

void cu_store_reset(cu_store *s)
{
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < s->nres; i++)
        res_clear(s->res[i]);
    maps_clear(s);
    pthread_mutex_unlock(&s->mu);
}

cu_err cu_store_load(cu_store *s, const char *resname, const char *data, cu_status *st)
{
    json_object *o = jparse(data, strlen(data));
    if (!o)
        return cu_status_set(st, 500, "InternalError", "stored %s object is not valid JSON",
                             resname);
    cu_err err = CU_OK;
    pthread_mutex_lock(&s->mu);
    res_t *r = res_by_qname(s, resname);
    if (r && r->kid == K_CRD) {
        err = register_crd_locked(s, o, st);
        if (err != CU_OK)
            goto out;
    }
    if (!r) {
        err = cu_status_set(st, 404, "NotFound",
                            "the server could not find the requested resource "
                            "%s",
                            resname);
        goto out;
    }
    json_object *m = cu_jget(o, "metadata");
    const char *name = cu_jstr(m, "name"), *ns = cu_jstr(m, "namespace");
    int64_t rv = 0;
    if (!name || parse_rv(cu_jstr(m, "resourceVersion"), &rv)) {
        err = cu_status_set(st, 500, "InternalError",
                            "stored %s object has no name or resourceVersion", resname);
        goto out;
    }
    ent *old = ent_find(r, ns, name);
    if (old) {
        ent_unlink(s, old);
        ent_free(old);
    }
    ent *e = ent_new(r, r->namespaced ? ns : NULL, name);
    rstr *d = serialize(o);
    if (!e || !d) {
        ent_free(e);
        rstr_unref(d);
        err = cu_status_set(st, 500, "InternalError", "out of memory");
        goto out;
    }
    snprintf(e->uid, sizeof(e->uid), "%s", cu_jstr(m, "uid") ? cu_jstr(m, "uid") : "");
    e->data = d;
    e->rv = rv;
    if (ent_link(s, e)) {
        ent_free(e);
        err = cu_status_set(st, 500, "InternalError", "out of memory");
        goto out;
    }
    ent_set_meta(s, e, o);
    if (rv > s->rv)
        s->rv = rv;
    if (rv > r->last_rv)
        r->last_rv = rv;
out:
    pthread_mutex_unlock(&s->mu);
    json_object_put(o);
    return err;
}

void cu_store_load_done(cu_store *s, int64_t counter)
{
    pthread_mutex_lock(&s->mu);
    if (counter > s->rv)
        s->rv = counter;
    while (s->tail < s->head)
        ring_pop(s);
    s->hist_rv = s->rv;
    /* restore terminating state of CRDs whose resources are being emptied */
    for (size_t i = 0; i < s->nres; i++) {
        res_t *r = s->res[i];
        if (r->kid != K_CRD)
            continue;
        for (size_t k = 0; k < r->n; k++) {
            ent *e = r->vec[k];
            if (!e->terminating)
                continue;
            json_object *o = jparse_r(e->data);
            json_object *spec = cu_jget(o, "spec");
            res_t *cr = res_find_q(s, cu_jstr(spec, "group") ? cu_jstr(spec, "group") : "",
                                   cu_jstr(cu_jget(spec, "names"), "plural")
                                       ? cu_jstr(cu_jget(spec, "names"), "plural")
                                       : "");
            if (cr)
                cr->crd_terminating = 1;
            json_object_put(o);
        }
    }
    pthread_mutex_unlock(&s->mu);
}

cu_err cu_store_dump(cu_store *s,
                     cu_err (*fn)(void *ud, const char *res, const char *ns, const char *name,
                                  int64_t rv, const char *data),
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
