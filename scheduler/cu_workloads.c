/*
 * cu_workloads.c - the engine's workloads: their requests and scheduling
 * shape, queueing, usage, the admitted lists, eviction and finishing.
 */
#include "cu_hash.h"
#include "cu_state_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cu_engine_set_msg(ewl *w, int reason, const char *msg)
{
    if (!(w->message && msg && strcmp(w->message, msg) == 0)) {
        free(w->message);
        w->message = msg ? strdup(msg) : NULL;
    }
    w->reason = reason;
}

/* Folds s and its NUL (NULL as "") into h. */
static uint64_t h_str(uint64_t h, const char *s)
{
    return cu_hash_bytes(h, s ? s : "", s ? strlen(s) + 1 : 1);
}

/* Kueue's scheduling-equivalence hash: workloads with the same hash in
 * the same ClusterQueue get the same flavor-assignment result against the
 * same usage (namespace, priority, pod set counts, requests, selectors,
 * affinity and tolerations). */
static uint64_t shape_hash(const ewl *w)
{
    const cu_workload *o = w->obj;
    uint64_t h = CU_HASH_INIT;
    h = h_str(h, o->meta.ns);
    h = cu_hash_bytes(h, &w->qi.prio, sizeof(w->qi.prio));
    for (size_t i = 0; i < w->nps; i++) {
        const eps *ps = &w->ps[i];
        const cu_podset *p = &o->podsets[i];
        h = h_str(h, ps->name);
        h = cu_hash_bytes(h, &ps->count, sizeof(ps->count));
        h = cu_hash_bytes(h, &ps->min, sizeof(ps->min));
        for (size_t r = 0; r < ps->nreq; r++) {
            h = cu_hash_bytes(h, &ps->res[r], sizeof(int));
            h = cu_hash_bytes(h, &ps->amt[r], sizeof(int64_t));
        }
        for (size_t k = 0; k < p->node_selector.n; k++) {
            h = h_str(h, p->node_selector.items[k].key);
            h = h_str(h, p->node_selector.items[k].value);
        }
        for (size_t t = 0; t < p->nterms; t++) {
            h = cu_hash_bytes(h, "|", 1);
            for (size_t r = 0; r < p->terms[t].n; r++) {
                const cu_selreq *q = &p->terms[t].reqs[r];
                h = h_str(h, q->key);
                h = cu_hash_bytes(h, &q->op, sizeof(q->op));
                for (size_t v = 0; v < q->values.n; v++)
                    h = h_str(h, q->values.items[v]);
            }
        }
        for (size_t t = 0; t < p->ntols; t++) {
            const cu_toleration *x = &p->tols[t];
            h = h_str(h, x->key);
            h = cu_hash_bytes(h, &x->op, sizeof(x->op));
            h = h_str(h, x->value);
            h = h_str(h, x->effect);
        }
        /* the topology request (TAS) */
        const cu_topo_request *tr = &p->topo;
        int32_t tv[5] = { tr->present, tr->has_unconstrained ? 1 + tr->unconstrained : 0,
                          tr->has_slice_size ? tr->slice_size : -1, 0, 0 };
        h = cu_hash_bytes(h, tv, sizeof(tv));
        h = h_str(h, tr->required);
        h = h_str(h, tr->preferred);
        h = h_str(h, tr->slice_required);
        h = h_str(h, tr->podset_group_name); /* placed jointly (cu_tas_request.group) */
    }
    return h;
}

static cu_err wl_requests(cu_engine *e, ewl *w, cu_diag *d)
{
    const cu_workload *o = w->obj;
    w->nps = o->npodsets;
    w->ps = calloc(w->nps ? w->nps : 1, sizeof(eps));
    if (!w->ps)
        return CU_ENOMEM;
    for (size_t i = 0; i < w->nps; i++) {
        const cu_podset *p = &o->podsets[i];
        eps *ps = &w->ps[i];
        ps->name = p->name ? p->name : "main";
        ps->count = p->count;
        ps->min = p->has_min ? p->min_count : p->count;
        ps->nreq = p->requests.n;
        ps->res = malloc((ps->nreq ? ps->nreq : 1) * sizeof(int));
        ps->amt = malloc((ps->nreq ? ps->nreq : 1) * sizeof(int64_t));
        if (!ps->res || !ps->amt)
            return CU_ENOMEM;
        for (size_t r = 0; r < ps->nreq; r++) {
            ps->res[r] = cu_engine_intern_res(e, p->requests.items[r].name);
            if (ps->res[r] < 0)
                return CU_ENOMEM;
            ps->amt[r] = p->requests.items[r].milli;
        }
    }
    (void)d;
    return CU_OK;
}

void cu_engine_mark_nonempty(cu_engine *e, int cqi)
{
    ecq *c = &e->cqs.items[cqi];
    if (!c->in_list && c->active && c->q.n) {
        if (VEC_PUSH(e->nonempty, cqi) == 0)
            c->in_list = 1;
    }
}

/* Adds the usage of w's admission (w->use_*) to its ClusterQueue (sign +1)
 * or removes it (-1). The only place usage changes. */
void cu_engine_apply_usage(cu_engine *e, ewl *w, int sign)
{
    if (w->cq < 0)
        return;
    ecq *c = &e->cqs.items[w->cq];
    for (size_t i = 0; i < w->nuse; i++)
        cu_quota_add_usage(c->node, (size_t)w->use_fr[i], sign * w->use_amt[i]);
    cu_engine_tas_apply(e, w, sign);
}

/* Records an admission from status.admission of a Workload. */
static cu_err preadmitted(cu_engine *e, ewl *w)
{
    const cu_workload *o = w->obj;
    w->state = WL_ADMITTED;
    w->cq_name = o->adm_cq;
    w->cq = o->adm_cq ? cu_strmap_get(&e->cq_map, o->adm_cq) : -1;
    const cu_condition *qr = cu_workload_cond(o, "QuotaReserved");
    w->admitted_at = qr && qr->ltt_ms ? qr->ltt_ms : cu_clock_now(&e->opts.clock);
    w->adm = calloc(w->nps ? w->nps : 1, sizeof(eassign));
    size_t cap = 8;
    w->use_fr = malloc(cap * sizeof(int));
    w->use_amt = malloc(cap * sizeof(int64_t));
    if (!w->adm || !w->use_fr || !w->use_amt)
        return CU_ENOMEM;
    for (size_t i = 0; i < w->nps; i++) {
        const cu_psa *psa = cu_engine_psa_of(o, i, w->ps[i].name);
        eassign *a = &w->adm[i];
        a->count = psa && psa->count > 0 ? psa->count : w->ps[i].count;
        size_t n = psa ? psa->flavors.n : 0;
        a->res = calloc(n ? n : 1, sizeof(int));
        a->flv = calloc(n ? n : 1, sizeof(int));
        a->amt = calloc(n ? n : 1, sizeof(int64_t));
        if (!a->res || !a->flv || !a->amt)
            return CU_ENOMEM;
        for (size_t k = 0; k < n; k++) {
            const char *rname = psa->flavors.items[k].key;
            int rid = cu_engine_intern_res(e, rname);
            int fid = cu_engine_intern_flavor(e, psa->flavors.items[k].value);
            if (rid < 0 || fid < 0)
                return CU_ENOMEM;
            int64_t amt = 0;
            int found = 0;
            for (size_t u = 0; u < psa->usage.n; u++)
                if (strcmp(psa->usage.items[u].name, rname) == 0) {
                    amt = psa->usage.items[u].milli;
                    found = 1;
                }
            if (!found) {
                if (strcmp(rname, "pods") == 0) {
                    amt = cu_qty_res_units("pods", a->count);
                } else {
                    for (size_t r = 0; r < w->ps[i].nreq; r++)
                        if (w->ps[i].res[r] == rid)
                            amt = cu_engine_mul_sat(w->ps[i].amt[r], a->count);
                }
            }
            a->res[a->n] = rid;
            a->flv[a->n] = fid;
            a->amt[a->n] = amt;
            a->n++;
            int fr = w->cq >= 0 ? cu_engine_fr(e, fid, rid) : -1;
            if (fr < 0 || !e->cqs.items[w->cq].node->declared[fr])
                continue;
            size_t u;
            for (u = 0; u < w->nuse; u++)
                if (w->use_fr[u] == fr)
                    break;
            if (u == w->nuse) {
                if (w->nuse == cap) {
                    cap *= 2;
                    int *nf = realloc(w->use_fr, cap * sizeof(int));
                    if (!nf)
                        return CU_ENOMEM;
                    w->use_fr = nf;
                    int64_t *na = realloc(w->use_amt, cap * sizeof(int64_t));
                    if (!na)
                        return CU_ENOMEM;
                    w->use_amt = na;
                }
                w->use_fr[w->nuse] = fr;
                w->use_amt[w->nuse++] = 0;
            }
            w->use_amt[u] = cu_qty_sat_add(w->use_amt[u], amt);
        }
    }
    if (w->cq >= 0) {
        cu_err err = cu_engine_tas_from_status(e, w);
        if (err)
            return err;
        cu_engine_apply_usage(e, w, 1);
        e->cqs.items[w->cq].admitted++;
        return cu_engine_adm_add(&e->cqs.items[w->cq], w);
    }
    return CU_OK;
}

cu_err cu_engine_adm_add(ecq *c, ewl *w)
{
    if (cu_vec_reserve(&c->adm, c->nadm, &c->capadm, sizeof(*c->adm), 16))
        return CU_ENOMEM;
    w->adm_pos = c->nadm;
    c->adm[c->nadm++] = w;
    return CU_OK;
}

void cu_engine_adm_del(ecq *c, ewl *w)
{
    if (w->adm_pos >= c->nadm || c->adm[w->adm_pos] != w)
        return;
    c->nadm--;
    if (w->adm_pos != c->nadm) {
        c->adm[w->adm_pos] = c->adm[c->nadm];
        c->adm[w->adm_pos]->adm_pos = w->adm_pos;
    }
}

/* Releases w's quota and clears its admission (Kueue's eviction); the
 * caller queues it again. Inadmissible workloads of its cohort tree are
 * retried, since quota was freed. */
static void evict(cu_engine *e, ewl *w)
{
    if (w->state != WL_ADMITTED)
        return;
    if (w->cq >= 0) {
        cu_engine_apply_usage(e, w, -1);
        e->cqs.items[w->cq].admitted--;
        cu_engine_adm_del(&e->cqs.items[w->cq], w);
        cu_engine_requeue_tree(e, e->cqs.items[w->cq].tree);
    }
    w->evicting = 0;
    cu_engine_tas_forget(w);
    for (size_t i = 0; w->adm && i < w->nps; i++) {
        free(w->adm[i].res);
        free(w->adm[i].flv);
        free(w->adm[i].amt);
    }
    free(w->adm);
    free(w->use_fr);
    free(w->use_amt);
    w->adm = NULL;
    w->use_fr = NULL;
    w->use_amt = NULL;
    w->nuse = 0;
    w->state = WL_NONE;
    w->evictions++;
}

static cu_err queue_wl(cu_engine *e, ewl *w, cu_diag *d);

static cu_err place_wl(cu_engine *e, ewl *w, cu_diag *d)
{
    const cu_workload *o = w->obj;
    char buf[512];
    if (cu_workload_finished(o)) {
        w->state = WL_FINISHED;
        return CU_OK;
    }
    if (o->queue_name) {
        snprintf(buf, sizeof(buf), "%s/%s", o->meta.ns ? o->meta.ns : "default", o->queue_name);
        w->lq = cu_strmap_get(&e->lq_map, buf);
    }
    if (cu_workload_has_quota(o)) {
        /* its priority matters when it is a preemption candidate */
        int32_t prio = 0;
        if (o->has_priority)
            prio = o->priority;
        else if (e->world)
            cu_workload_priority(e->world, o, &prio, d);
        w->qi.prio = prio;
        cu_err err = preadmitted(e, w);
        if (err)
            return err;
        /* HoldAndDrain on its ClusterQueue or LocalQueue, or spec.active
         * false, evicts an admitted workload */
        const ecq *c = w->cq >= 0 ? &e->cqs.items[w->cq] : NULL;
        const elq *l = w->lq >= 0 ? &e->lqs.items[w->lq] : NULL;
        const char *why = NULL;
        if (!o->active)
            why = "Deactivated";
        else if (c && c->obj->stop_policy == CU_STOP_HOLD_AND_DRAIN)
            why = "ClusterQueueStopped";
        else if (l && l->obj->stop_policy == CU_STOP_HOLD_AND_DRAIN)
            why = "LocalQueueStopped";
        if (why) {
            evict(e, w);
            w->evict_reason = why;
            free(w->evict_message);
            w->evict_message = strdup(!o->active ? "The workload is deactivated"
                                      : c && c->obj->stop_policy == CU_STOP_HOLD_AND_DRAIN
                                          ? "The ClusterQueue is stopped"
                                          : "The LocalQueue is stopped");
            w->cq = -1;
            return queue_wl(e, w, d);
        }
        return CU_OK;
    }
    return queue_wl(e, w, d);
}

/* Puts a workload that holds no quota into its ClusterQueue, or records
 * why it cannot be queued. */
static cu_err queue_wl(cu_engine *e, ewl *w, cu_diag *d)
{
    const cu_workload *o = w->obj;
    char buf[512];
    if (w->lq >= 0) {
        const elq *lq = &e->lqs.items[w->lq];
        w->cq = lq->cq;
        w->cq_name = lq->obj->cluster_queue;
    }
    if (!o->active) {
        cu_engine_set_msg(w, R_INADMISSIBLE, "The workload is deactivated");
        return CU_OK;
    }
    if (w->bad) {
        char *m = malloc(strlen(w->bad) + 32);
        if (m)
            sprintf(m, "Workload is invalid: %s", w->bad);
        cu_engine_set_msg(w, R_INADMISSIBLE, m ? m : "Workload is invalid");
        free(m);
        return CU_OK;
    }
    if (!o->queue_name) {
        cu_engine_set_msg(w, R_INADMISSIBLE, "Workload has no spec.queueName");
        return CU_OK;
    }
    if (w->lq < 0) {
        snprintf(buf, sizeof(buf), "LocalQueue %s doesn't exist", o->queue_name);
        cu_engine_set_msg(w, R_INADMISSIBLE, buf);
        return CU_OK;
    }
    const elq *lq = &e->lqs.items[w->lq];
    if (w->cq < 0) {
        snprintf(buf, sizeof(buf), "ClusterQueue %s doesn't exist", w->cq_name);
        cu_engine_set_msg(w, R_INADMISSIBLE, buf);
        return CU_OK;
    }
    if (lq->bad) {
        char *m = malloc(strlen(lq->bad) + strlen(lq->obj->meta.name) + 32);
        if (m)
            sprintf(m, "LocalQueue %s is invalid: %s", lq->obj->meta.name, lq->bad);
        cu_engine_set_msg(w, R_INADMISSIBLE, m ? m : "LocalQueue is invalid");
        free(m);
        return CU_OK;
    }
    if (!lq->active) {
        snprintf(buf, sizeof(buf), "LocalQueue %s is stopped", lq->obj->meta.name);
        cu_engine_set_msg(w, R_INADMISSIBLE, buf);
        return CU_OK;
    }
    int32_t prio = 0;
    if (o->has_priority) {
        prio = o->priority;
    } else if (e->world && cu_workload_priority(e->world, o, &prio, d) != CU_OK) {
        cu_engine_set_msg(w, R_INADMISSIBLE,
                          d && d->n ? d->msgs[d->n - 1] : "priority class not found");
        return CU_OK;
    }
    w->qi.prio = prio;
    w->qi.afs = cu_afs_on(e, &e->cqs.items[w->cq]) ? cu_afs_usage(e, w->lq) : 0;
    w->shape = shape_hash(w);
    ecq *c = &e->cqs.items[w->cq];
    w->state = WL_QUEUED;
    if (cu_pq_push(&c->q, &w->qi))
        return CU_ENOMEM;
    if (!c->active) {
        snprintf(buf, sizeof(buf), "ClusterQueue %s is inactive", c->name);
        cu_engine_set_msg(w, R_INADMISSIBLE, buf);
    } else {
        cu_engine_set_msg(w, R_PENDING, "Waiting for its turn in the ClusterQueue");
        cu_engine_mark_nonempty(e, w->cq);
    }
    return CU_OK;
}

int cu_engine_add_workload(cu_engine *e, const cu_workload *o)
{
    ewl *w = calloc(1, sizeof(*w));
    if (!w)
        return -1;
    w->obj = o;
    w->lq = w->cq = -1;
    w->idx = (int)e->wls.n;
    size_t kl = strlen(o->meta.name) + (o->meta.ns ? strlen(o->meta.ns) : 7) + 2;
    w->key = malloc(kl);
    if (!w->key || VEC_PUSH(e->wls, w)) {
        cu_engine_free_wl(w);
        return -1;
    }
    snprintf(w->key, kl, "%s/%s", o->meta.ns ? o->meta.ns : "default", o->meta.name);
    w->qi.key = w->key;
    w->qi.ts = o->meta.has_created ? o->meta.created_ms
                                   : cu_clock_now(&e->opts.clock) + (int64_t)o->meta.seq;
    char bad[2048];
    if (cu_engine_invalid_text(CU_KIND_WORKLOAD, o, &o->meta, bad, sizeof(bad)) &&
        !(w->bad = strdup(bad)))
        return -1; /* w is in e->wls: freed with the engine */
    cu_diag tmp;
    cu_diag_init(&tmp);
    cu_err err = wl_requests(e, w, &tmp);
    if (!err)
        err = place_wl(e, w, &tmp);
    cu_diag_free(&tmp);
    e->views_dirty = 1;
    return err ? -1 : w->idx;
}

/* Moves every inadmissible workload of tree back to its heap, at once or
 * batched as Kueue does (opts.requeue_batch): the move is then recorded on
 * each ClusterQueue of the tree and done by cu_engine_requeue_due; a later
 * event before it keeps the earlier time (a delaying work queue). The
 * move takes every workload inadmissible by then, as Kueue's does. */
void cu_engine_requeue_tree(cu_engine *e, int tree)
{
    int64_t due = 0;
    if (e->opts.requeue_batch == CU_RQ_IDLE)
        due = 1;
    else if (e->opts.requeue_batch == CU_RQ_TIMED)
        due = cu_clock_now(&e->opts.clock) +
              (e->opts.requeue_batch_ms > 0 ? e->opts.requeue_batch_ms : 1000);
    for (size_t i = 0; i < e->cqs.n; i++) {
        ecq *c = &e->cqs.items[i];
        if (c->tree != tree)
            continue;
        if (due) {
            if (!c->rq_due || due < c->rq_due)
                c->rq_due = due;
            continue;
        }
        if (!c->q.ninadm)
            continue;
        cu_pq_requeue_all(&c->q);
        cu_engine_mark_nonempty(e, (int)i);
    }
}

size_t cu_engine_requeue_due(cu_engine *e, int64_t now)
{
    size_t moved = 0;
    for (size_t i = 0; i < e->cqs.n; i++) {
        ecq *c = &e->cqs.items[i];
        if (!c->rq_due || c->rq_due > now)
            continue;
        c->rq_due = 0;
        if (!c->q.ninadm)
            continue;
        moved += cu_pq_requeue_all(&c->q);
        cu_engine_mark_nonempty(e, (int)i);
    }
    if (moved)
        e->views_dirty = 1;
    return moved;
}

int64_t cu_engine_requeue_next(const cu_engine *e)
{
    int64_t next = 0;
    for (size_t i = 0; i < e->cqs.n; i++) {
        int64_t d = e->cqs.items[i].rq_due;
        if (d && (!next || d < next))
            next = d;
    }
    return next;
}

/* Releases the quota of one workload whose preemption was issued and
 * queues it again. */
static cu_err release_evicted(cu_engine *e, ewl *w)
{
    evict(e, w);
    w->evicted_at = cu_clock_now(&e->opts.clock);
    w->cq = -1;
    cu_diag tmp;
    cu_diag_init(&tmp);
    cu_err err = queue_wl(e, w, &tmp);
    cu_diag_free(&tmp);
    if (err)
        return err;
    if (w->note && w->state == WL_QUEUED)
        cu_engine_set_msg(w, R_PENDING, w->note);
    e->views_dirty = 1;
    return CU_OK;
}

int cu_engine_complete_evictions(cu_engine *e)
{
    int n = 0;
    for (size_t i = 0; i < e->evicting.n; i++) {
        ewl *w = e->wls.items[e->evicting.items[i]];
        if (!w->evicting || w->state != WL_ADMITTED)
            continue;
        if (release_evicted(e, w))
            return -1;
        n++;
    }
    e->evicting.n = 0;
    return n;
}

cu_err cu_engine_eviction_done(cu_engine *e, int idx)
{
    if (idx < 0 || (size_t)idx >= e->wls.n)
        return CU_ENOTFOUND;
    ewl *w = e->wls.items[idx];
    if (!w->evicting || w->state != WL_ADMITTED)
        return CU_ENOTFOUND;
    cu_err err = release_evicted(e, w);
    if (err)
        return err;
    for (size_t i = 0; i < e->evicting.n; i++)
        if (e->evicting.items[i] == idx) {
            e->evicting.items[i] = e->evicting.items[--e->evicting.n];
            break;
        }
    return CU_OK;
}

cu_err cu_engine_finish(cu_engine *e, int idx)
{
    if (idx < 0 || (size_t)idx >= e->wls.n)
        return CU_ENOTFOUND;
    ewl *w = e->wls.items[idx];
    if (w->state == WL_FINISHED)
        return CU_OK;
    if (w->state == WL_QUEUED && w->cq >= 0)
        cu_pq_remove(&e->cqs.items[w->cq].q, &w->qi);
    int was_admitted = w->state == WL_ADMITTED;
    w->state = WL_FINISHED;
    w->evicting = 0;
    if (was_admitted && w->cq >= 0) {
        cu_engine_apply_usage(e, w, -1);
        e->cqs.items[w->cq].admitted--;
        cu_engine_adm_del(&e->cqs.items[w->cq], w);
        cu_engine_requeue_tree(e, e->cqs.items[w->cq].tree);
    }
    cu_engine_tas_forget(w);
    e->views_dirty = 1;
    return CU_OK;
}

void cu_engine_capacity_freed(cu_engine *e)
{
    /* as freed quota does: the inadmissible workloads of every cohort
     * tree that holds a TAS flavor's user go back to their heaps */
    if (!e->tas.n)
        return;
    for (int t = 0; t < e->ntrees; t++)
        cu_engine_requeue_tree(e, t);
    e->views_dirty = 1;
}

void cu_engine_release(cu_engine *e, int idx)
{
    if (idx < 0 || (size_t)idx >= e->wls.n)
        return;
    ewl *w = e->wls.items[idx];
    if (w->state != WL_FINISHED || w->obj == &e->released)
        return;
    char *k = strdup(w->key), *sl = k ? strchr(k, '/') : NULL;
    if (sl)
        *sl = 0;
    else if (k) { /* no namespace: "default" then the key */
        free(k);
        size_t l = strlen(w->key);
        k = malloc(l + 9);
        if (k) {
            memcpy(k, "default", 8);
            memcpy(k + 8, w->key, l + 1);
        }
    }
    if (!k)
        return; /* no memory: it keeps its object */
    w->rel_ns = k;
    w->obj = &e->released;
    w->cq_name = NULL;
    for (size_t p = 0; p < w->nps; p++)
        w->ps[p].name = NULL;
    e->views_dirty = 1;
}

size_t cu_engine_take_evicted(cu_engine *e, int *out, size_t max)
{
    size_t n = 0;
    while (n < max && e->evicted_taken < e->evicted_log.n)
        out[n++] = e->evicted_log.items[e->evicted_taken++];
    if (e->evicted_taken == e->evicted_log.n) {
        e->evicted_log.n = 0;
        e->evicted_taken = 0;
    }
    return n;
}

int cu_engine_wl_evicting(const cu_engine *e, int idx)
{
    if (idx < 0 || (size_t)idx >= e->wls.n)
        return 0;
    const ewl *w = e->wls.items[idx];
    return w->evicting && w->state == WL_ADMITTED;
}

int cu_engine_wl_finished(const cu_engine *e, int idx)
{
    return idx >= 0 && (size_t)idx < e->wls.n && e->wls.items[idx]->state == WL_FINISHED;
}

int cu_engine_wl_admitted(const cu_engine *e, int idx)
{
    if (idx < 0 || (size_t)idx >= e->wls.n)
        return 0;
    return e->wls.items[idx]->state == WL_ADMITTED;
}

size_t cu_engine_take_admitted(cu_engine *e, int *out, size_t max)
{
    size_t n = 0;
    while (n < max && e->admitted_taken < e->admitted_log.n)
        out[n++] = e->admitted_log.items[e->admitted_taken++];
    if (e->admitted_taken == e->admitted_log.n) {
        e->admitted_log.n = 0;
        e->admitted_taken = 0;
    }
    return n;
}
