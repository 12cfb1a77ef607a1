/*
 * cu_status.c - queue status computed once (cu_qstatus_cq/_lq/_cohort) and
 * rendered as a json-c merge patch (the controller) or a cu_node map
 * (simulate), and the PendingWorkloads document. Pure: no I/O, times are
 * parameters.
 */
#include "cu_status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_quantity.h"

/* ---------------- strings ---------------- */

size_t cu_status_utf8_cut(const char *s, size_t max)
{
    size_t len = strlen(s);
    if (len <= max)
        return len;
    size_t cut = max;
    /* s[cut] is the first byte dropped: back off while it continues a
     * sequence that started inside the kept part */
    while (cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80)
        cut--;
    return cut;
}

char *cu_status_truncate(const char *s, size_t max, const char *suffix)
{
    if (!s)
        s = "";
    size_t len = strlen(s);
    if (len <= max)
        return strdup(s);
    size_t sl = suffix ? strlen(suffix) : 0;
    if (sl > max)
        sl = 0;
    size_t keep = cu_status_utf8_cut(s, max - sl);
    char *out = malloc(keep + sl + 1);
    if (!out)
        return NULL;
    memcpy(out, s, keep);
    if (sl)
        memcpy(out + keep, suffix, sl);
    out[keep + sl] = '\0';
    return out;
}

/* ---------------- computing ---------------- */

/* Index of flavor name in f[0..n), or n. */
static size_t flavor_find(const cu_qstatus_flavor *f, size_t n, const char *name)
{
    size_t k;
    for (k = 0; k < n && strcmp(f[k].name, name) != 0; k++)
        ;
    return k;
}

/* Groups u[0..n) by flavor in first-appearance order, at most max flavors
 * and max resources per flavor (two passes: count, then fill). */
static cu_err group_flavors(cu_arena *a, const cu_fr_usage *u, size_t n, size_t max,
                            cu_qstatus *out)
{
    out->nflavors = 0;
    out->flavors = NULL;
    if (n == 0)
        return CU_OK;
    size_t cap = n < max ? n : max;
    cu_qstatus_flavor *f = cu_arena_alloc(a, cap * sizeof(*f));
    if (!f)
        return CU_ENOMEM;
    size_t nf = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = flavor_find(f, nf, u[i].flavor);
        if (k == nf) {
            if (nf >= max)
                continue;
            f[nf++] = (cu_qstatus_flavor){ u[i].flavor, 0, NULL };
        }
        if (f[k].nres < max)
            f[k].nres++;
    }
    for (size_t k = 0; k < nf; k++) {
        f[k].res = cu_arena_alloc(a, f[k].nres * sizeof(*f[k].res));
        if (!f[k].res)
            return CU_ENOMEM;
        f[k].nres = 0;
    }
    for (size_t i = 0; i < n; i++) {
        size_t k = flavor_find(f, nf, u[i].flavor);
        if (k == nf || f[k].nres >= max)
            continue;
        /* the borrowed part of the admitted usage: the usage above the
         * queue's own quota shrinks by what the reserved-only hold */
        int64_t held = u[i].total - u[i].admitted;
        int64_t ab = u[i].borrowed > held ? u[i].borrowed - held : 0;
        f[k].res[f[k].nres++] =
            (cu_qstatus_res){ u[i].resource, u[i].total, u[i].borrowed, u[i].admitted, ab };
    }
    out->nflavors = nf;
    out->flavors = f;
    return CU_OK;
}

/* Sets the Active condition, the message cut to CU_COND_MESSAGE_MAX. */
static cu_err set_active(cu_arena *a, cu_qstatus *out, int active, const char *reason,
                         const char *message)
{
    out->active = active;
    out->reason = reason && *reason ? reason : "Unknown";
    if (!message)
        message = "";
    if (strlen(message) <= CU_COND_MESSAGE_MAX) {
        out->message = message;
        return CU_OK;
    }
    char *m = cu_status_truncate(message, CU_COND_MESSAGE_MAX, " ...");
    out->message = m ? cu_arena_strdup(a, m) : NULL;
    free(m);
    return out->message ? CU_OK : CU_ENOMEM;
}

cu_err cu_qstatus_cq(cu_arena *a, const cu_cq_info *ci, int fair_sharing, cu_qstatus *out)
{
    memset(out, 0, sizeof(*out));
    out->kind = CU_QSTATUS_CQ;
    out->pending = ci->pending;
    out->reserving = ci->reserving;
    out->admitted = ci->admitted;
    out->fair_sharing = fair_sharing;
    out->weighted_share = ci->weighted_share;
    cu_err err = group_flavors(a, ci->usage, ci->nusage, CU_CQ_STATUS_MAX_FLAVORS, out);
    if (err)
        return err;
    return set_active(a, out, ci->active, ci->active ? "Ready" : ci->reason,
                      ci->active ? "Can admit new workloads" : ci->message);
}

cu_err cu_qstatus_lq(cu_arena *a, const cu_lq_info *li, cu_qstatus *out)
{
    memset(out, 0, sizeof(*out));
    out->kind = CU_QSTATUS_LQ;
    out->pending = li->pending;
    out->reserving = li->reserving;
    out->admitted = li->admitted;
    cu_err err = group_flavors(a, li->usage, li->nusage, CU_LQ_STATUS_MAX_FLAVORS, out);
    if (err)
        return err;
    const char *reason = li->reason, *msg = li->message;
    if (!reason || !*reason) {
        reason = li->active ? "Ready" : "Unknown";
        msg = li->active ? "Can submit new workloads to localQueue" : msg;
    }
    return set_active(a, out, li->active, reason, msg);
}

void cu_qstatus_cohort(const cu_cohort_info *hi, int fair_sharing, cu_qstatus *out)
{
    memset(out, 0, sizeof(*out));
    out->kind = CU_QSTATUS_COHORT;
    out->fair_sharing = fair_sharing;
    out->weighted_share = hi->weighted_share;
}

/* ---------------- json-c ---------------- */

/* Adds key to o, setting *failed when v is NULL (json-c allocation). */
static void add(json_object *o, const char *key, json_object *v, int *failed)
{
    if (!v || json_object_object_add(o, key, v) != 0) {
        json_object_put(v);
        *failed = 1;
    }
}

static void push(json_object *a, json_object *v, int *failed)
{
    if (!v || json_object_array_add(a, v) != 0) {
        json_object_put(v);
        *failed = 1;
    }
}

static json_object *qty(const char *res, int64_t milli)
{
    char q[48];
    cu_qty_format_res(res, milli, q, sizeof q);
    return json_object_new_string(q);
}

/* [{name: flavor, resources: [{name, total[, borrowed]}]}]; adm: the
 * admitted usage (flavorsUsage), else the reservation */
static json_object *json_flavors(const cu_qstatus *s, int adm, int *failed)
{
    json_object *seq = json_object_new_array();
    if (!seq) {
        *failed = 1;
        return NULL;
    }
    for (size_t k = 0; k < s->nflavors && !*failed; k++) {
        const cu_qstatus_flavor *f = &s->flavors[k];
        json_object *fl = json_object_new_object(), *res = json_object_new_array();
        push(seq, fl, failed);
        if (*failed) {
            json_object_put(res);
            break;
        }
        add(fl, "name", json_object_new_string(f->name), failed);
        add(fl, "resources", res, failed);
        for (size_t i = 0; i < f->nres && !*failed; i++) {
            json_object *r = json_object_new_object();
            push(res, r, failed);
            if (*failed)
                break;
            add(r, "name", json_object_new_string(f->res[i].name), failed);
            const cu_qstatus_res *x = &f->res[i];
            add(r, "total", qty(x->name, adm ? x->adm_total : x->total), failed);
            if (s->kind == CU_QSTATUS_CQ)
                add(r, "borrowed", qty(x->name, adm ? x->adm_borrowed : x->borrowed), failed);
        }
    }
    return seq;
}

static json_object *json_fair_sharing(const cu_qstatus *s, int *failed)
{
    if (!s->fair_sharing)
        return NULL; /* json null */
    json_object *fs = json_object_new_object();
    if (!fs) {
        *failed = 1;
        return NULL;
    }
    add(fs, "weightedShare", json_object_new_int64(s->weighted_share), failed);
    return fs;
}

json_object *cu_qstatus_json(const cu_qstatus *s, json_object *conditions)
{
    int failed = 0;
    json_object *st = json_object_new_object();
    if (!st) {
        json_object_put(conditions);
        return NULL;
    }
    if (s->kind != CU_QSTATUS_COHORT) {
        add(st, "pendingWorkloads", json_object_new_int(s->pending), &failed);
        add(st, "reservingWorkloads", json_object_new_int(s->reserving), &failed);
        add(st, "admittedWorkloads", json_object_new_int(s->admitted), &failed);
        add(st, "flavorsReservation", json_flavors(s, 0, &failed), &failed);
        add(st, "flavorsUsage", json_flavors(s, 1, &failed), &failed);
        add(st, "conditions", conditions, &failed);
    } else {
        json_object_put(conditions);
    }
    if (s->kind != CU_QSTATUS_LQ) {
        json_object *fs = json_fair_sharing(s, &failed);
        if (!failed)
            json_object_object_add(st, "fairSharing", fs);
    }
    json_object *p = failed ? NULL : json_object_new_object();
    if (!p || json_object_object_add(p, "status", st) != 0) {
        json_object_put(st);
        json_object_put(p);
        return NULL;
    }
    return p;
}

/* ---------------- cu_node ---------------- */

/* The build context: an arena plus a sticky failure flag so the builders
 * can be chained without checking every call. */
typedef struct tb {
    cu_arena *a;
    int failed;
} tb;

static cu_node *tb_check(tb *t, cu_node *n)
{
    if (!n)
        t->failed = 1;
    return n;
}

static cu_node *tb_map(tb *t) { return tb_check(t, cu_node_new_map(t->a)); }
static cu_node *tb_seq(tb *t) { return tb_check(t, cu_node_new_seq(t->a)); }
static cu_node *tb_str(tb *t, const char *s) { return tb_check(t, cu_node_new_str(t->a, s)); }
static cu_node *tb_int(tb *t, int64_t v) { return tb_check(t, cu_node_new_int(t->a, v)); }

static cu_node *tb_qty(tb *t, const char *res, int64_t milli)
{
    char q[48];
    cu_qty_format_res(res, milli, q, sizeof q);
    return tb_str(t, q);
}

static void tb_set(tb *t, cu_node *map, const char *key, cu_node *v)
{
    if (!map || !v || cu_node_set(t->a, map, key, v) != CU_OK)
        t->failed = 1;
}

static void tb_push(tb *t, cu_node *seq, cu_node *v)
{
    if (!seq || !v || cu_node_push(t->a, seq, v) != CU_OK)
        t->failed = 1;
}

static cu_node *node_flavors(tb *t, const cu_qstatus *s, int adm)
{
    cu_node *seq = tb_seq(t);
    for (size_t k = 0; k < s->nflavors && !t->failed; k++) {
        const cu_qstatus_flavor *f = &s->flavors[k];
        cu_node *fl = tb_map(t), *res = tb_seq(t);
        tb_set(t, fl, "name", tb_str(t, f->name));
        tb_set(t, fl, "resources", res);
        for (size_t i = 0; i < f->nres && !t->failed; i++) {
            cu_node *r = tb_map(t);
            tb_set(t, r, "name", tb_str(t, f->res[i].name));
            const cu_qstatus_res *x = &f->res[i];
            tb_set(t, r, "total", tb_qty(t, x->name, adm ? x->adm_total : x->total));
            if (s->kind == CU_QSTATUS_CQ)
                tb_set(t, r, "borrowed", tb_qty(t, x->name, adm ? x->adm_borrowed : x->borrowed));
            tb_push(t, res, r);
        }
        tb_push(t, seq, fl);
    }
    return seq;
}

cu_node *cu_status_cond_node(cu_arena *a, const char *type, int status, const char *reason,
                             const char *message, int64_t ltt_ms)
{
    tb t = { a, 0 };
    char ts[40];
    cu_time_format(ltt_ms, ts, sizeof ts);
    cu_node *c = tb_map(&t);
    tb_set(&t, c, "type", tb_str(&t, type));
    tb_set(&t, c, "status", tb_str(&t, status ? "True" : "False"));
    tb_set(&t, c, "reason", tb_str(&t, reason ? reason : ""));
    tb_set(&t, c, "message", tb_str(&t, message ? message : ""));
    tb_set(&t, c, "lastTransitionTime", tb_str(&t, ts));
    return t.failed ? NULL : c;
}

cu_node *cu_qstatus_node(cu_arena *a, const cu_qstatus *s, int64_t now_ms)
{
    tb t = { a, 0 };
    cu_node *st = tb_map(&t);
    if (s->kind != CU_QSTATUS_COHORT) {
        tb_set(&t, st, "pendingWorkloads", tb_int(&t, s->pending));
        tb_set(&t, st, "reservingWorkloads", tb_int(&t, s->reserving));
        tb_set(&t, st, "admittedWorkloads", tb_int(&t, s->admitted));
        tb_set(&t, st, "flavorsReservation", node_flavors(&t, s, 0));
        tb_set(&t, st, "flavorsUsage", node_flavors(&t, s, 1));
        cu_node *conds = tb_seq(&t);
        tb_push(&t, conds,
                tb_check(&t, cu_status_cond_node(a, "Active", s->active, s->reason, s->message,
                                                 now_ms)));
        tb_set(&t, st, "conditions", conds);
    }
    if (s->kind != CU_QSTATUS_LQ && s->fair_sharing) {
        cu_node *fs = tb_map(&t);
        tb_set(&t, fs, "weightedShare", tb_int(&t, s->weighted_share));
        tb_set(&t, st, "fairSharing", fs);
    }
    return t.failed ? NULL : st;
}

/* ---------------- the pending workloads document ---------------- */

static const char *nz(const char *s) { return s ? s : ""; }

static int cmp_pending(const void *pa, const void *pb)
{
    const cu_wl_info *a = *(const cu_wl_info *const *)pa, *b = *(const cu_wl_info *const *)pb;
    int c = strcmp(nz(a->cluster_queue), nz(b->cluster_queue));
    if (c)
        return c;
    return (a->position > b->position) - (a->position < b->position);
}

static int same_str(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }

/* {"RESOURCE": "QUANTITY", ...}: count x per-pod requests, summed over
 * the pod sets (at most 64 resources). */
static json_object *total_requests(const cu_workload *o)
{
    json_object *req = json_object_new_object();
    cu_res acc[64];
    size_t nt = 0;
    for (size_t p = 0; o && p < o->npodsets; p++)
        for (size_t r = 0; r < o->podsets[p].requests.n; r++) {
            const cu_res *rq = &o->podsets[p].requests.items[r];
            size_t t;
            for (t = 0; t < nt && strcmp(acc[t].name, rq->name) != 0; t++)
                ;
            if (t == nt) {
                if (nt == sizeof(acc) / sizeof(acc[0]))
                    continue;
                acc[t].name = rq->name;
                acc[t].milli = 0;
                nt++;
            }
            int64_t all;
            if (cu_qty_mul(rq->milli, (int64_t)o->podsets[p].count, &all) != CU_OK)
                all = CU_QTY_INF; /* saturates, never wraps */
            acc[t].milli = cu_qty_sat_add(acc[t].milli, all);
        }
    for (size_t t = 0; req && t < nt; t++) {
        char q[64];
        cu_qty_format_res(acc[t].name, acc[t].milli, q, sizeof(q));
        json_object_object_add(req, acc[t].name, json_object_new_string(q));
    }
    return req;
}

static void put_str(json_object *o, const char *k, const char *v)
{
    json_object_object_add(o, k, json_object_new_string(nz(v)));
}

/* Keeps in v those of ClusterQueue cq and LocalQueue lq ("NS/NAME"),
 * either NULL for any, in admission order; returns how many. */
static size_t select_pending(const cu_wl_info **v, size_t n, const char *cq, const char *lq)
{
    size_t k = 0;
    char key[600];
    for (size_t i = 0; i < n; i++) {
        const cu_wl_info *w = v[i];
        if (cq && !same_str(w->cluster_queue, cq))
            continue;
        snprintf(key, sizeof(key), "%s/%s", nz(w->ns), nz(w->local_queue));
        if (lq && strcmp(key, lq) != 0)
            continue;
        v[k++] = w;
    }
    qsort(v, k, sizeof(*v), cmp_pending);
    return k;
}

/* The position of v[i] among the workloads ahead of it in v (admission
 * order) that are in its LocalQueue. */
static int lq_position(const cu_wl_info **v, size_t i)
{
    const cu_wl_info *w = v[i];
    int pos = 0;
    for (size_t j = 0; j < i; j++)
        pos += same_str(v[j]->ns, w->ns) && same_str(v[j]->local_queue, w->local_queue) &&
               same_str(v[j]->cluster_queue, w->cluster_queue);
    return pos;
}

json_object *cu_status_pending_doc(const cu_wl_info **v, size_t n, const char *cq, const char *lq,
                                   int64_t now_ms)
{
    char ts[40];
    size_t k = select_pending(v, n, cq, lq);
    json_object *doc = json_object_new_object(), *items = json_object_new_array();
    if (!doc || !items) {
        json_object_put(doc);
        json_object_put(items);
        return NULL;
    }
    cu_time_format(now_ms, ts, sizeof(ts));
    put_str(doc, "kind", "PendingWorkloads");
    put_str(doc, "generatedAt", ts);
    json_object_object_add(doc, "items", items);
    for (size_t i = 0; i < k; i++) {
        const cu_wl_info *w = v[i];
        int lqpos = lq_position(v, i);
        json_object *it = json_object_new_object();
        if (!it) {
            json_object_put(doc);
            return NULL;
        }
        put_str(it, "namespace", w->ns);
        put_str(it, "name", w->name);
        put_str(it, "localQueue", w->local_queue);
        put_str(it, "clusterQueue", w->cluster_queue);
        json_object_object_add(it, "positionInClusterQueue", json_object_new_int(w->position));
        json_object_object_add(it, "positionInLocalQueue", json_object_new_int(lqpos));
        json_object_object_add(it, "priority", json_object_new_int((int)w->priority));
        json_object_object_add(it, "requests", total_requests(w->obj));
        if (w->obj && w->obj->meta.has_created) {
            cu_time_format(w->obj->meta.created_ms, ts, sizeof(ts));
            put_str(it, "createdAt", ts);
        }
        put_str(it, "reason", w->reason);
        put_str(it, "message", w->message);
        json_object_array_add(items, it);
    }
    return doc;
}

const char *cu_status_owner_text(json_object *refs, char *out, size_t n)
{
    size_t nr = json_object_is_type(refs, json_type_array) ? json_object_array_length(refs) : 0;
    json_object *pick = NULL;
    for (size_t i = 0; i < nr && !pick; i++) {
        json_object *ctl = NULL, *o = json_object_array_get_idx(refs, i);
        if (json_object_object_get_ex(o, "controller", &ctl) && json_object_get_boolean(ctl))
            pick = o;
    }
    if (!pick && nr)
        pick = json_object_array_get_idx(refs, 0);
    json_object *k = NULL, *nm = NULL;
    if (!pick || !json_object_object_get_ex(pick, "kind", &k) ||
        !json_object_object_get_ex(pick, "name", &nm))
        return NULL;
    if (nr > 1)
        snprintf(out, n, "%s/%s (+%zu)", json_object_get_string(k), json_object_get_string(nm),
                 nr - 1);
    else
        snprintf(out, n, "%s/%s", json_object_get_string(k), json_object_get_string(nm));
    return out;
}

json_object *cu_status_visibility_doc(const cu_wl_info **v, size_t n, const char *cq,
                                      const char *lq, int64_t limit, int64_t offset,
                                      cu_status_owners_fn owners, void *ud)
{
    size_t k = select_pending(v, n, cq, lq);
    json_object *doc = json_object_new_object(), *items = json_object_new_array();
    if (!doc || !items) {
        json_object_put(doc);
        json_object_put(items);
        return NULL;
    }
    put_str(doc, "kind", "PendingWorkloadsSummary");
    put_str(doc, "apiVersion", CU_VISIBILITY_GROUP "/" CU_VISIBILITY_VERSION);
    json_object_object_add(doc, "metadata", json_object_new_object());
    json_object_object_add(doc, "items", items);
    if (offset < 0)
        offset = 0;
    for (size_t i = (size_t)offset; limit > 0 && i < k && (int64_t)i - offset < limit; i++) {
        const cu_wl_info *w = v[i];
        json_object *it = json_object_new_object(), *md = json_object_new_object();
        if (!it || !md) {
            json_object_put(it);
            json_object_put(md);
            json_object_put(doc);
            return NULL;
        }
        put_str(md, "name", w->name);
        put_str(md, "namespace", w->ns);
        if (w->obj && w->obj->meta.has_created) {
            char ts[40];
            cu_time_format(w->obj->meta.created_ms, ts, sizeof(ts));
            put_str(md, "creationTimestamp", ts);
        }
        json_object *own = owners ? owners(ud, w) : NULL;
        if (own && json_object_array_length(own) > 0)
            json_object_object_add(md, "ownerReferences", own);
        else
            json_object_put(own);
        json_object_object_add(it, "metadata", md);
        json_object_object_add(it, "priority", json_object_new_int((int)w->priority));
        put_str(it, "localQueueName", w->local_queue);
        json_object_object_add(it, "positionInClusterQueue", json_object_new_int(w->position));
        json_object_object_add(it, "positionInLocalQueue", json_object_new_int(lq_position(v, i)));
        json_object_array_add(items, it);
    }
    return doc;
}
