/*
 * cu_ctrlstatus.c - status bodies of ClusterQueues, LocalQueues and
 * Cohorts, the write coalescer, and Kubernetes Events with client-go's
 * dedup and spam filter. Pure: no I/O, times are parameters.
 *
 * Invariants:
 *  - coalescer: for every key, acked is the last body the API confirmed
 *    (or NULL), inflight is non-NULL exactly while a write is out, and a
 *    key is due iff desired != acked && !inflight &&
 *    now >= last_write + interval;
 *  - recorder: each LRU holds at most max_entries keys; a dedup entry
 *    names an Event this recorder POSTed (or was told about by
 *    cu_recorder_failed, which removes it).
 */
#include "cu_ctrlstatus.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_controller.h"
#include "cu_hash.h"
#include "cu_json.h"
#include "cu_quantity.h"

/* ---------------- canonical JSON ---------------- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static cu_err canon(cu_buf *b, json_object *j, int depth)
{
    if (depth > 256)
        return CU_EINVAL;
    switch (json_object_get_type(j)) {
    case json_type_null: return cu_buf_puts(b, "null");
    case json_type_boolean: return cu_buf_puts(b, json_object_get_boolean(j) ? "true" : "false");
    case json_type_int: return cu_buf_printf(b, "%lld", (long long)json_object_get_int64(j));
    case json_type_double:
        return cu_buf_puts(b, json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
    case json_type_string: return cu_json_put_str(b, json_object_get_string(j), CU_JESC_RAW);
    case json_type_array: {
        cu_err err = cu_buf_append(b, "[", 1);
        size_t n = json_object_array_length(j);
        for (size_t i = 0; !err && i < n; i++) {
            if (i)
                err = cu_buf_append(b, ",", 1);
            if (!err)
                err = canon(b, json_object_array_get_idx(j, i), depth + 1);
        }
        return err ? err : cu_buf_append(b, "]", 1);
    }
    case json_type_object: {
        size_t n = (size_t)json_object_object_length(j), k = 0;
        const char **keys = malloc((n ? n : 1) * sizeof(*keys));
        if (!keys)
            return CU_ENOMEM;
        json_object_object_foreach (j, key, val) {
            (void)val;
            keys[k++] = key;
        }
        qsort(keys, k, sizeof(*keys), cmp_str);
        cu_err err = cu_buf_append(b, "{", 1);
        for (size_t i = 0; !err && i < k; i++) {
            if (i)
                err = cu_buf_append(b, ",", 1);
            if (!err)
                err = cu_json_put_str(b, keys[i], CU_JESC_RAW);
            if (!err)
                err = cu_buf_append(b, ":", 1);
            if (!err)
                err = canon(b, json_object_object_get(j, keys[i]), depth + 1);
        }
        free(keys);
        return err ? err : cu_buf_append(b, "}", 1);
    }
    }
    return CU_EINVAL;
}

char *cu_ctrl_json_canonical(json_object *j)
{
    cu_buf b;
    cu_buf_init(&b, 64u << 20);
    if (canon(&b, j, 0) != CU_OK || !b.data) {
        cu_buf_free(&b);
        return NULL;
    }
    return b.data; /* malloc'd by cu_buf; caller frees */
}

/* ---------------- status bodies ---------------- */

/* Adds key to o, setting *failed when v is NULL (json-c allocation). */
static void add(json_object *o, const char *key, json_object *v, int *failed)
{
    if (!v || json_object_object_add(o, key, v) != 0) {
        json_object_put(v);
        *failed = 1;
    }
}

/* The status/ body with conditions = old_conds with Active set. */
static json_object *status_body(const cu_qstatus *s, json_object *old_conds, int64_t now_ms)
{
    json_object *conds = NULL;
    if (s->kind != CU_QSTATUS_COHORT) {
        conds = cu_ctrl_set_condition(old_conds, "Active", s->active ? "True" : "False", s->reason,
                                      s->message, now_ms);
        if (!conds)
            return NULL;
    }
    return cu_qstatus_json(s, conds);
}

json_object *cu_ctrl_cq_status(const cu_cq_info *ci, int fair_sharing_on, json_object *old_conds,
                               int64_t now_ms)
{
    cu_arena a;
    cu_arena_init(&a, 0);
    cu_qstatus s;
    json_object *b = NULL;
    if (cu_qstatus_cq(&a, ci, fair_sharing_on, &s) == CU_OK)
        b = status_body(&s, old_conds, now_ms);
    cu_arena_free(&a);
    return b;
}

json_object *cu_ctrl_lq_status(const cu_lq_info *li, json_object *old_conds, int64_t now_ms)
{
    cu_arena a;
    cu_arena_init(&a, 0);
    cu_qstatus s;
    json_object *b = NULL;
    if (cu_qstatus_lq(&a, li, &s) == CU_OK)
        b = status_body(&s, old_conds, now_ms);
    cu_arena_free(&a);
    return b;
}

json_object *cu_ctrl_cohort_status(const cu_cohort_info *hi, int fair_sharing_on)
{
    cu_qstatus s;
    cu_qstatus_cohort(hi, fair_sharing_on, &s);
    return status_body(&s, NULL, 0);
}

/* ---------------- a string-keyed table with recency order ---------------- */

typedef struct tent {
    char *key;
    uint64_t hash;
    struct tent *hnext;       /* bucket chain */
    struct tent *prev, *next; /* list: head = most recent (or oldest
                                    first-set for the coalescer) */
} tent;

typedef struct table {
    tent **buckets;
    size_t nbuckets, n;
    size_t max; /* 0 = unbounded */
    size_t ent_size;
    void (*drop)(tent *); /* frees the payload */
    tent *head, *tail;
} table;

static void table_init(table *t, size_t ent_size, size_t max, void (*drop)(tent *))
{
    memset(t, 0, sizeof(*t));
    t->ent_size = ent_size;
    t->max = max;
    t->drop = drop;
}

static void list_unlink(table *t, tent *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        t->head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        t->tail = e->prev;
    e->prev = e->next = NULL;
}

static void list_push_front(table *t, tent *e)
{
    e->prev = NULL;
    e->next = t->head;
    if (t->head)
        t->head->prev = e;
    t->head = e;
    if (!t->tail)
        t->tail = e;
}

static void list_push_back(table *t, tent *e)
{
    e->next = NULL;
    e->prev = t->tail;
    if (t->tail)
        t->tail->next = e;
    t->tail = e;
    if (!t->head)
        t->head = e;
}

static tent *table_get(const table *t, const char *key)
{
    if (!t->nbuckets)
        return NULL;
    uint64_t h = cu_hash_str(key);
    for (tent *e = t->buckets[h & (t->nbuckets - 1)]; e; e = e->hnext)
        if (e->hash == h && strcmp(e->key, key) == 0)
            return e;
    return NULL;
}

static void table_del(table *t, tent *e)
{
    tent **pp = &t->buckets[e->hash & (t->nbuckets - 1)];
    while (*pp != e)
        pp = &(*pp)->hnext;
    *pp = e->hnext;
    list_unlink(t, e);
    t->n--;
    if (t->drop)
        t->drop(e);
    free(e->key);
    free(e);
}

static cu_err table_grow(table *t)
{
    size_t nb = t->nbuckets ? t->nbuckets * 2 : 16;
    tent **b = calloc(nb, sizeof(*b));
    if (!b)
        return CU_ENOMEM;
    for (size_t i = 0; i < t->nbuckets; i++) {
        tent *e = t->buckets[i];
        while (e) {
            tent *nx = e->hnext;
            e->hnext = b[e->hash & (nb - 1)];
            b[e->hash & (nb - 1)] = e;
            e = nx;
        }
    }
    free(t->buckets);
    t->buckets = b;
    t->nbuckets = nb;
    return CU_OK;
}

/* Adds a zeroed entry for key (not present); with a bound, the least
 * recently used entry goes first. front: 1 = most recent end. */
static tent *table_add(table *t, const char *key, int front)
{
    if (t->max && t->n >= t->max && t->tail)
        table_del(t, t->tail);
    if (t->n + 1 > t->nbuckets && table_grow(t) != CU_OK)
        return NULL;
    tent *e = calloc(1, t->ent_size);
    if (!e)
        return NULL;
    e->key = strdup(key);
    if (!e->key) {
        free(e);
        return NULL;
    }
    e->hash = cu_hash_str(key);
    size_t bi = e->hash & (t->nbuckets - 1);
    e->hnext = t->buckets[bi];
    t->buckets[bi] = e;
    if (front)
        list_push_front(t, e);
    else
        list_push_back(t, e);
    t->n++;
    return e;
}

static void table_touch(table *t, tent *e)
{
    list_unlink(t, e);
    list_push_front(t, e);
}

static void table_free(table *t)
{
    while (t->head)
        table_del(t, t->head);
    free(t->buckets);
    t->buckets = NULL;
    t->nbuckets = 0;
}

/* ---------------- coalescer ---------------- */

typedef struct centry {
    tent t;
    char *desired;  /* canonical body wanted, NULL = none yet */
    char *acked;    /* last body the API confirmed */
    char *inflight; /* body being written */
    int64_t last_write_ms;
    int written_once;
} centry;

struct cu_coalescer {
    table tab;
    int64_t interval_ms;
};

static void centry_drop(tent *t)
{
    centry *e = (centry *)t;
    free(e->desired);
    free(e->acked);
    free(e->inflight);
}

cu_coalescer *cu_coalescer_new(int64_t min_interval_ms)
{
    cu_coalescer *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    table_init(&c->tab, sizeof(centry), 0, centry_drop);
    c->interval_ms = min_interval_ms > 0 ? min_interval_ms : 0;
    return c;
}

void cu_coalescer_free(cu_coalescer *c)
{
    if (!c)
        return;
    table_free(&c->tab);
    free(c);
}

static centry *centry_get_or_add(cu_coalescer *c, const char *key)
{
    centry *e = (centry *)table_get(&c->tab, key);
    return e ? e : (centry *)table_add(&c->tab, key, 0);
}

static int str_eq(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }

/* Stores body's canonical text in the desired (acked 0) or the
 * acknowledged (1) slot of key's entry. */
static cu_err coalescer_put(cu_coalescer *c, const char *key, json_object *body, int acked)
{
    if (!key || !body)
        return CU_EINVAL;
    char *s = cu_ctrl_json_canonical(body);
    if (!s)
        return CU_ENOMEM;
    centry *e = centry_get_or_add(c, key);
    if (!e) {
        free(s);
        return CU_ENOMEM;
    }
    char **slot = acked ? &e->acked : &e->desired;
    free(*slot);
    *slot = s;
    return CU_OK;
}

cu_err cu_coalescer_set(cu_coalescer *c, const char *key, json_object *body)
{
    return coalescer_put(c, key, body, 0);
}

cu_err cu_coalescer_seed(cu_coalescer *c, const char *key, json_object *body)
{
    return coalescer_put(c, key, body, 1);
}

static int pending(const centry *e)
{
    return e->desired && !e->inflight && !str_eq(e->desired, e->acked);
}

static int64_t ready_at(const cu_coalescer *c, const centry *e)
{
    return e->written_once ? e->last_write_ms + c->interval_ms : INT64_MIN;
}

size_t cu_coalescer_due(cu_coalescer *c, int64_t now_ms, cu_coalesce_fn fn, void *ud)
{
    size_t calls = 0;
    for (tent *t = c->tab.head; t; t = t->next) {
        centry *e = (centry *)t;
        if (!pending(e) || ready_at(c, e) > now_ms)
            continue;
        /* the desired string becomes the in-flight one; a later set()
         * replaces desired without touching what is being written */
        e->inflight = strdup(e->desired);
        if (!e->inflight)
            continue; /* OOM: try again on the next call */
        e->last_write_ms = now_ms;
        e->written_once = 1;
        calls++;
        fn(t->key, e->inflight, ud);
    }
    return calls;
}

void cu_coalescer_written(cu_coalescer *c, const char *key, int ok)
{
    centry *e = (centry *)table_get(&c->tab, key);
    if (!e || !e->inflight)
        return;
    if (ok) {
        free(e->acked);
        e->acked = e->inflight;
    } else {
        free(e->inflight);
    }
    e->inflight = NULL;
}

int64_t cu_coalescer_next_deadline(const cu_coalescer *c, int64_t now_ms)
{
    int64_t best = -1;
    for (const tent *t = c->tab.head; t; t = t->next) {
        const centry *e = (const centry *)t;
        if (!pending(e))
            continue;
        int64_t at = ready_at(c, e);
        if (at < now_ms)
            at = now_ms;
        if (best < 0 || at < best)
            best = at;
    }
    return best;
}

void cu_coalescer_forget(cu_coalescer *c, const char *key)
{
    tent *e = table_get(&c->tab, key);
    if (e)
        table_del(&c->tab, e);
}

size_t cu_coalescer_size(const cu_coalescer *c) { return c->tab.n; }

/* ---------------- events ---------------- */

static int valid_type(const char *type)
{
    return type && (strcmp(type, CU_EVENT_NORMAL) == 0 || strcmp(type, CU_EVENT_WARNING) == 0);
}

static const char *event_ns(const cu_event_ref *o) { return o->ns && *o->ns ? o->ns : "default"; }

json_object *cu_ctrl_event_body(const cu_event_ref *obj, const char *type, const char *reason,
                                const char *message, const char *component, int64_t now_ms,
                                uint64_t seq)
{
    if (!obj || !obj->kind || !*obj->kind || !obj->name || !*obj->name || !type || !reason ||
        !*reason || !component || !*component)
        return NULL;
    /* client-go: "%v.%x" of the name and the time in nanoseconds; the
     * sequence number keeps names made in one millisecond apart. The
     * name is cut so that the result stays a valid 253-byte name. */
    char name[256];
    uint64_t ns_time = (uint64_t)now_ms * 1000000u + seq % 1000000u;
    snprintf(name, sizeof(name), "%.236s.%016llx", obj->name, (unsigned long long)ns_time);
    char ts[32];
    cu_time_format(now_ms, ts, sizeof(ts));
    char *msg = cu_status_truncate(message ? message : "", CU_EVENT_MESSAGE_MAX, " ...");
    if (!msg)
        return NULL;

    int failed = 0;
    json_object *ev = json_object_new_object(), *md = NULL, *io = NULL, *src = NULL;
    if (!ev) {
        free(msg);
        return NULL;
    }
    add(ev, "apiVersion", json_object_new_string("v1"), &failed);
    add(ev, "kind", json_object_new_string("Event"), &failed);
    add(ev, "metadata", md = json_object_new_object(), &failed);
    if (!failed) {
        add(md, "name", json_object_new_string(name), &failed);
        add(md, "namespace", json_object_new_string(event_ns(obj)), &failed);
    }
    add(ev, "involvedObject", io = json_object_new_object(), &failed);
    if (!failed) {
        if (obj->api_version && *obj->api_version)
            add(io, "apiVersion", json_object_new_string(obj->api_version), &failed);
        add(io, "kind", json_object_new_string(obj->kind), &failed);
        if (obj->ns && *obj->ns)
            add(io, "namespace", json_object_new_string(obj->ns), &failed);
        add(io, "name", json_object_new_string(obj->name), &failed);
        if (obj->uid && *obj->uid)
            add(io, "uid", json_object_new_string(obj->uid), &failed);
        if (obj->resource_version && *obj->resource_version)
            add(io, "resourceVersion", json_object_new_string(obj->resource_version), &failed);
    }
    add(ev, "reason", json_object_new_string(reason), &failed);
    add(ev, "message", json_object_new_string(msg), &failed);
    add(ev, "type", json_object_new_string(type), &failed);
    add(ev, "source", src = json_object_new_object(), &failed);
    if (!failed)
        add(src, "component", json_object_new_string(component), &failed);
    add(ev, "firstTimestamp", json_object_new_string(ts), &failed);
    add(ev, "lastTimestamp", json_object_new_string(ts), &failed);
    add(ev, "count", json_object_new_int(1), &failed);
    if (!failed)
        json_object_object_add(ev, "eventTime", NULL);
    add(ev, "reportingComponent", json_object_new_string(component), &failed);
    add(ev, "reportingInstance", json_object_new_string(component), &failed);
    free(msg);
    if (failed) {
        json_object_put(ev);
        return NULL;
    }
    return ev;
}

void cu_event_req_free(cu_event_req *req)
{
    if (!req)
        return;
    free(req->path);
    json_object_put(req->body);
    memset(req, 0, sizeof(*req));
}

/* spam filter: a token bucket per object and source; tokens are counted
 * in milliseconds of refill (one token = refill_ms). */
typedef struct sentry {
    tent t;
    int64_t tokens_ms;
    int64_t last_ms;
} sentry;

/* dedup: one Event per identical occurrence stream */
typedef struct dentry {
    tent t;
    char *ev_name, *ev_ns;
    int64_t last_ms;
    int32_t count;
} dentry;

struct cu_recorder {
    char *component, *instance;
    int burst;
    int64_t refill_ms, window_ms;
    table spam, dedup;
    uint64_t seq;
};

static void dentry_drop(tent *t)
{
    dentry *e = (dentry *)t;
    free(e->ev_name);
    free(e->ev_ns);
}

cu_recorder *cu_recorder_new(const cu_recorder_opts *o)
{
    if (!o || !o->component || !*o->component)
        return NULL;
    cu_recorder *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    r->component = strdup(o->component);
    r->instance = strdup(o->instance && *o->instance ? o->instance : o->component);
    if (!r->component || !r->instance) {
        cu_recorder_free(r);
        return NULL;
    }
    r->burst = o->burst > 0 ? o->burst : 25;
    r->refill_ms = o->refill_ms > 0 ? o->refill_ms : 5 * 60 * 1000;
    r->window_ms = o->dedup_window_ms > 0 ? o->dedup_window_ms : 10 * 60 * 1000;
    size_t max = o->max_entries ? o->max_entries : 4096;
    table_init(&r->spam, sizeof(sentry), max, NULL);
    table_init(&r->dedup, sizeof(dentry), max, dentry_drop);
    return r;
}

void cu_recorder_free(cu_recorder *r)
{
    if (!r)
        return;
    table_free(&r->spam);
    table_free(&r->dedup);
    free(r->component);
    free(r->instance);
    free(r);
}

/* Joins parts with the unit separator (no field contains it in practice;
 * a collision only merges two dedup streams). */
static char *join_key(const char *const *parts, size_t n)
{
    cu_buf b;
    cu_buf_init(&b, 1u << 20);
    for (size_t i = 0; i < n; i++) {
        if (i)
            cu_buf_append(&b, "\x1f", 1);
        cu_buf_puts(&b, parts[i] ? parts[i] : "");
    }
    if (b.failed || !b.data) {
        cu_buf_free(&b);
        return NULL;
    }
    return b.data;
}

/* Takes a token for key; returns 1 if there was one, 0 if not, <0 OOM. */
static int spam_take(cu_recorder *r, const char *key, int64_t now_ms)
{
    int64_t cap = (int64_t)r->burst * r->refill_ms;
    sentry *e = (sentry *)table_get(&r->spam, key);
    if (e) {
        table_touch(&r->spam, &e->t);
        if (now_ms > e->last_ms) {
            int64_t add_ms = now_ms - e->last_ms;
            e->tokens_ms = add_ms >= cap - e->tokens_ms ? cap : e->tokens_ms + add_ms;
            e->last_ms = now_ms;
        }
    } else {
        e = (sentry *)table_add(&r->spam, key, 1);
        if (!e)
            return CU_ENOMEM;
        e->tokens_ms = cap;
        e->last_ms = now_ms;
    }
    if (e->tokens_ms < r->refill_ms)
        return 0;
    e->tokens_ms -= r->refill_ms;
    return 1;
}

static char *events_path(const char *ns, const char *name)
{
    cu_buf b;
    cu_buf_init(&b, 4096);
    cu_buf_printf(&b, "/api/v1/namespaces/%s/events%s%s", ns, name ? "/" : "", name ? name : "");
    if (b.failed || !b.data) {
        cu_buf_free(&b);
        return NULL;
    }
    return b.data;
}

int cu_recorder_record(cu_recorder *r, const cu_event_ref *ref, const char *type,
                       const char *reason, const char *message, int64_t now_ms, cu_event_req *out)
{
    if (!ref || !ref->kind || !*ref->kind || !ref->name || !*ref->name || !valid_type(type) ||
        !reason || !*reason || !out)
        return CU_EINVAL;
    char *msg = cu_status_truncate(message ? message : "", CU_EVENT_MESSAGE_MAX, " ...");
    if (!msg)
        return CU_ENOMEM;
    const char *parts[] = { r->component,     ref->kind, ref->ns, ref->name, ref->uid,
                            ref->api_version, type,      reason,  msg };
    char *skey = join_key(parts, 6), *dkey = join_key(parts, 9);
    int rc = CU_ENOMEM;
    if (!skey || !dkey)
        goto done;
    rc = spam_take(r, skey, now_ms);
    if (rc <= 0)
        goto done;

    memset(out, 0, sizeof(*out));
    char ts[32];
    cu_time_format(now_ms, ts, sizeof(ts));
    dentry *d = (dentry *)table_get(&r->dedup, dkey);
    if (d && now_ms - d->last_ms <= r->window_ms && d->count < INT32_MAX) {
        int failed = 0;
        json_object *p = json_object_new_object();
        if (p) {
            add(p, "count", json_object_new_int(d->count + 1), &failed);
            add(p, "lastTimestamp", json_object_new_string(ts), &failed);
        }
        char *path = events_path(d->ev_ns, d->ev_name);
        if (!p || failed || !path) {
            json_object_put(p);
            free(path);
            rc = CU_ENOMEM;
            goto done;
        }
        d->count++;
        d->last_ms = now_ms;
        table_touch(&r->dedup, &d->t);
        out->method = "PATCH";
        out->path = path;
        out->content_type = "application/strategic-merge-patch+json";
        out->body = p;
        rc = 1;
        goto done;
    }

    json_object *ev = cu_ctrl_event_body(ref, type, reason, msg, r->component, now_ms, r->seq++);
    char *path = events_path(event_ns(ref), NULL);
    json_object *md = NULL, *nm = NULL;
    if (!ev || !path || !json_object_object_get_ex(ev, "metadata", &md) ||
        !json_object_object_get_ex(md, "name", &nm)) {
        json_object_put(ev);
        free(path);
        rc = CU_ENOMEM;
        goto done;
    }
    if (strcmp(r->instance, r->component) != 0)
        json_object_object_add(ev, "reportingInstance", json_object_new_string(r->instance));
    if (!d)
        d = (dentry *)table_add(&r->dedup, dkey, 1);
    else
        table_touch(&r->dedup, &d->t);
    char *evn = strdup(json_object_get_string(nm)), *evns = strdup(event_ns(ref));
    if (!d || !evn || !evns) {
        /* no dedup entry: the event is still worth sending */
        free(evn);
        free(evns);
        if (d)
            table_del(&r->dedup, &d->t);
    } else {
        free(d->ev_name);
        free(d->ev_ns);
        d->ev_name = evn;
        d->ev_ns = evns;
        d->count = 1;
        d->last_ms = now_ms;
    }
    out->method = "POST";
    out->path = path;
    out->content_type = "application/json";
    out->body = ev;
    rc = 1;
done:
    free(skey);
    free(dkey);
    free(msg);
    return rc;
}

void cu_recorder_failed(cu_recorder *r, const cu_event_req *req)
{
    if (!r || !req || !req->path)
        return;
    const char *name = NULL;
    json_object *md = NULL, *nm = NULL;
    if (req->method && strcmp(req->method, "POST") == 0) {
        if (json_object_object_get_ex(req->body, "metadata", &md) &&
            json_object_object_get_ex(md, "name", &nm))
            name = json_object_get_string(nm);
    } else {
        const char *slash = strrchr(req->path, '/');
        name = slash ? slash + 1 : NULL;
    }
    if (!name || !*name)
        return;
    for (tent *t = r->dedup.head; t; t = t->next) {
        dentry *d = (dentry *)t;
        if (d->ev_name && strcmp(d->ev_name, name) == 0) {
            table_del(&r->dedup, t);
            return;
        }
    }
}

/* ---------------- Kueue's messages ---------------- */

char *cu_ctrl_event_msg_quota_reserved(char *out, size_t n, const char *cq, int64_t wait_ms)
{
    /* Go's %.0f of the wait in seconds: round half to even, as printf */
    snprintf(out, n, "Quota reserved in ClusterQueue %s, wait time since queued was %.0fs", cq,
             (double)(wait_ms > 0 ? wait_ms : 0) / 1000.0);
    return out;
}

char *cu_ctrl_event_msg_admitted(char *out, size_t n, const char *cq, int64_t wait_ms)
{
    snprintf(out, n, "Admitted by ClusterQueue %s, wait time since reservation was %.0fs", cq,
             (double)(wait_ms > 0 ? wait_ms : 0) / 1000.0);
    return out;
}

char *cu_ctrl_event_msg_started(char *out, size_t n, const char *cq)
{
    snprintf(out, n, "Admitted by clusterQueue %s", cq);
    return out;
}

char *cu_ctrl_event_msg_created_workload(char *out, size_t n, const char *ns, const char *name)
{
    snprintf(out, n, "Created Workload: %s/%s", ns, name);
    return out;
}

char *cu_ctrl_event_msg_finished(char *out, size_t n, const char *ns, const char *name)
{
    snprintf(out, n, "Workload '%s/%s' is declared finished", ns, name);
    return out;
}

char *cu_ctrl_event_msg_deleted_workload(char *out, size_t n, const char *ns, const char *name)
{
    snprintf(out, n, "Deleted not matching Workload: %s/%s", ns, name);
    return out;
}

char *cu_ctrl_event_reason_evicted(char *out, size_t n, const char *evicted_reason,
                                   const char *cause)
{
    const char *r = evicted_reason && *evicted_reason ? evicted_reason : "Unknown";
    if (strcmp(r, "Deactivated") == 0 && cause && *cause)
        snprintf(out, n, "EvictedDueTo%sDueTo%s", r, cause);
    else
        snprintf(out, n, "EvictedDueTo%s", r);
    return out;
}
