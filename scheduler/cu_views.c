/*
 * cu_views.c - read-only views of the engine state for renderers
 * (simulate, status writers). Rebuilt lazily into e->varena when the
 * engine changed since the last build.
 */
#include "cu_drs_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *reason_name(int r)
{
    switch (r) {
    case R_WAITING_FOR_QUOTA: return "WaitingForQuota";
    case R_EXCEEDS_MAX_QUOTA: return "ExceedsMaxQuota";
    case R_NO_MATCHING_FLAVOR: return "NoMatchingFlavor";
    case R_INADMISSIBLE: return "Inadmissible";
    default: return "Pending";
    }
}

static int cmp_wl_key(const void *a, const void *b)
{
    return strcmp((*(const ewl *const *)a)->key, (*(const ewl *const *)b)->key);
}

static int cmp_qitem_ptr(const void *a, const void *b)
{
    return cu_qitem_cmp(*(const cu_qitem *const *)a, *(const cu_qitem *const *)b);
}

static int cmp_cq_name(const void *a, const void *b)
{
    return strcmp(((const cu_cq_info *)a)->name, ((const cu_cq_info *)b)->name);
}

static int cmp_lq_name(const void *a, const void *b)
{
    const cu_lq_info *x = a, *y = b;
    int c = strcmp(x->ns, y->ns);
    return c ? c : strcmp(x->name, y->name);
}

static int cmp_co_name(const void *a, const void *b)
{
    return strcmp(((const cu_cohort_info *)a)->name, ((const cu_cohort_info *)b)->name);
}

static void fill_fr(const cu_engine *e, const cu_qnode *n, int fr, cu_fr_usage *u)
{
    u->flavor = e->flavors.items[e->fr_flv[fr]].name;
    u->resource = e->res_names.items[e->fr_res[fr]];
    u->total = n->usage[fr];
    u->admitted = u->total;
    u->nominal = n->nominal[fr];
    u->subtree = n->subtree[fr];
    int64_t b = n->usage[fr] - n->subtree[fr];
    u->borrowed = b > 0 ? b : 0;
    u->has_blimit = n->blimit[fr] != CU_QUOTA_UNSET;
    u->blimit = u->has_blimit ? n->blimit[fr] : 0;
    u->has_llimit = n->llimit[fr] != CU_QUOTA_UNSET;
    u->llimit = u->has_llimit ? n->llimit[fr] : 0;
}

/* The AdmissionChecks of w's ClusterQueue that apply to w (by the flavors
 * it holds): up to max names into out; returns how many apply. */
static size_t wl_checks(const cu_engine *e, const ewl *w, const char **out, size_t max)
{
    if (w->cq < 0 || !e->cqs.items[w->cq].obj->nchecks)
        return 0;
    const char *fl[64];
    size_t nf = 0;
    int adm = w->state == WL_ADMITTED;
    for (size_t p = 0; adm && p < w->nps; p++)
        for (size_t i = 0; i < w->adm[p].n && nf < 64; i++)
            fl[nf++] = e->flavors.items[w->adm[p].flv[i]].name;
    return cu_cq_checks_for(e->cqs.items[w->cq].obj, adm, fl, nf, out, max);
}

/* 1 when w holds quota and some check that applies to it is not Ready. */
static int wl_checks_pending(const cu_engine *e, const ewl *w)
{
    if (w->state != WL_ADMITTED)
        return 0;
    const char *names[64];
    size_t n = wl_checks(e, w, names, 64);
    return n && !cu_workload_checks_ready(w->obj, names, n < 64 ? n : 64);
}

/* Fills v from w (all but position, inadmissible and StrictFIFO
 * blocking, which need every queue sorted), allocating in a. */
static cu_err fill_wl(const cu_engine *e, cu_arena *a, const ewl *w, cu_wl_info *v)
{
    memset(v, 0, sizeof(*v));
    v->obj = w->obj;
    if (w->rel_ns) { /* released: finished, named from its key */
        v->ns = w->rel_ns;
        v->name = w->rel_ns + strlen(w->rel_ns) + 1;
        v->finished = 1;
        v->position = -1;
        v->evictions = w->evictions;
        return CU_OK;
    }
    v->ns = w->obj->meta.ns ? w->obj->meta.ns : "default";
    v->name = w->obj->meta.name;
    v->local_queue = w->obj->queue_name;
    v->cluster_queue = w->cq >= 0 ? e->cqs.items[w->cq].name : w->cq_name;
    v->priority = w->qi.prio;
    v->admitted = w->state == WL_ADMITTED;
    v->finished = w->state == WL_FINISHED;
    v->evictions = w->evictions;
    v->position = -1;
    v->evicting = w->evicting;
    v->evicted_reason = w->evict_reason;
    v->evicted_message = w->evict_message;
    v->preempted_reason = w->preempt_reason;
    v->evicted_at_ms = w->evicted_at;
    if (v->admitted) {
        v->admitted_at_ms = w->admitted_at;
        v->npsa = w->nps;
        cu_psa_info *ps = cu_arena_alloc(a, (w->nps ? w->nps : 1) * sizeof(*ps));
        if (!ps)
            return CU_ENOMEM;
        for (size_t p = 0; p < w->nps; p++) {
            const eassign *s = &w->adm[p];
            ps[p].name = w->ps[p].name;
            ps[p].count = s->count;
            ps[p].topo = w->topo && w->topo[p].tas >= 0 ? &w->topo[p].ta : NULL;
            ps[p].n = s->n;
            ps[p].resources = cu_arena_alloc(a, (s->n ? s->n : 1) * sizeof(char *));
            ps[p].flavors = cu_arena_alloc(a, (s->n ? s->n : 1) * sizeof(char *));
            ps[p].usage = cu_arena_alloc(a, (s->n ? s->n : 1) * sizeof(int64_t));
            if (!ps[p].resources || !ps[p].flavors || !ps[p].usage)
                return CU_ENOMEM;
            /* sorted by resource name */
            for (size_t i = 0; i < s->n; i++) {
                const char *rn = e->res_names.items[s->res[i]];
                size_t j = i;
                while (j > 0 && strcmp(ps[p].resources[j - 1], rn) > 0) {
                    ps[p].resources[j] = ps[p].resources[j - 1];
                    ps[p].flavors[j] = ps[p].flavors[j - 1];
                    ps[p].usage[j] = ps[p].usage[j - 1];
                    j--;
                }
                ps[p].resources[j] = rn;
                ps[p].flavors[j] = e->flavors.items[s->flv[i]].name;
                ps[p].usage[j] = s->amt[i];
            }
        }
        v->psa = ps;
    } else if (!v->finished) {
        v->reason = reason_name(w->reason);
        v->message = w->message ? w->message : "Pending";
    }
    if (!v->finished) {
        const char *names[64];
        size_t n = wl_checks(e, w, names, 64);
        n = n < 64 ? n : 64;
        if (n) {
            v->checks = cu_arena_alloc(a, n * sizeof(char *));
            if (!v->checks)
                return CU_ENOMEM;
            memcpy(v->checks, names, n * sizeof(char *));
            v->nchecks = n;
            v->checks_pending = v->admitted && !cu_workload_checks_ready(w->obj, names, n);
        }
    }
    return CU_OK;
}

/* Keeps e->wl_order (engine indices by key) and e->wl_view (its inverse)
 * across builds: workloads are only ever appended and keys never change,
 * so only the new ones are sorted, then merged in. A build between two
 * admissions then costs no full sort of every workload. */
static cu_err sort_order(cu_engine *e)
{
    size_t nw = e->wls.n, old = e->nord;
    if (old == nw)
        return CU_OK;
    if (old > nw)
        old = 0;
    int *ord = malloc((nw ? nw : 1) * sizeof(int)), *view = malloc((nw ? nw : 1) * sizeof(int));
    const ewl **add = malloc((nw - old ? nw - old : 1) * sizeof(*add));
    if (!ord || !view || !add) {
        free(ord);
        free(view);
        free(add);
        return CU_ENOMEM;
    }
    for (size_t i = old; i < nw; i++)
        add[i - old] = e->wls.items[i];
    qsort(add, nw - old, sizeof(*add), cmp_wl_key);
    size_t i = 0, j = 0, k = 0;
    while (i < old || j < nw - old) {
        if (j == nw - old ||
            (i < old && strcmp(e->wls.items[e->wl_order[i]]->key, add[j]->key) <= 0))
            ord[k++] = e->wl_order[i++];
        else
            ord[k++] = add[j++]->idx;
    }
    for (k = 0; k < nw; k++)
        view[ord[k]] = (int)k;
    free(add);
    free(e->wl_order);
    free(e->wl_view);
    e->wl_order = ord;
    e->wl_view = view;
    e->nord = nw;
    return CU_OK;
}

static cu_err build(cu_engine *e)
{
    cu_arena *a = &e->varena;
    cu_arena_free(a);
    size_t nw = e->wls.n;
    e->vwl = cu_arena_alloc(a, (nw ? nw : 1) * sizeof(cu_wl_info));
    if (sort_order(e) != CU_OK)
        return CU_ENOMEM;
    int *pos = cu_arena_alloc(a, (nw ? nw : 1) * sizeof(int));
    const char **blocked = cu_arena_alloc(a, (nw ? nw : 1) * sizeof(char *));
    char *inadm = cu_arena_alloc(a, nw ? nw : 1);
    if (!e->vwl || !pos || !blocked || !inadm)
        return CU_ENOMEM;
    for (size_t i = 0; i < nw; i++)
        pos[i] = -1;
    /* positions, and StrictFIFO blocking */
    for (size_t c = 0; c < e->cqs.n; c++) {
        ecq *q = &e->cqs.items[c];
        size_t n = cu_pq_len(&q->q);
        if (!n)
            continue;
        cu_qitem **items = cu_arena_alloc(a, n * sizeof(*items));
        if (!items)
            return CU_ENOMEM;
        if (q->q.n)
            memcpy(items, q->q.heap, q->q.n * sizeof(*items));
        if (q->q.ninadm)
            memcpy(items + q->q.n, q->q.inadm, q->q.ninadm * sizeof(*items));
        qsort(items, n, sizeof(*items), cmp_qitem_ptr);
        for (size_t i = 0; i < n; i++)
            pos[((ewl *)items[i])->idx] = (int)i;
        for (size_t i = 0; i < q->q.ninadm; i++)
            inadm[((ewl *)q->q.inadm[i])->idx] = 1;
        const ewl *head = (const ewl *)cu_pq_peek(&q->q);
        if (q->active && q->obj->queueing == CU_STRICT_FIFO && head && head->reason != R_PENDING) {
            for (size_t i = 0; i < q->q.n; i++) {
                const ewl *w = (const ewl *)q->q.heap[i];
                if (w != head)
                    blocked[w->idx] = cu_arena_printf(
                        a, "waiting behind %s in StrictFIFO ClusterQueue %s", head->key, q->name);
            }
        }
    }
    for (size_t k = 0; k < nw; k++) {
        const ewl *w = e->wls.items[e->wl_order[k]];
        cu_wl_info *v = &e->vwl[k];
        if (fill_wl(e, a, w, v) != CU_OK)
            return CU_ENOMEM;
        v->position = pos[w->idx];
        v->inadmissible = inadm[w->idx];
        if (!v->admitted && !v->finished && blocked[w->idx]) {
            v->message = blocked[w->idx];
            v->reason = "Pending";
        }
    }
    /* ClusterQueues */
    e->vcq = cu_arena_alloc(a, (e->cqs.n ? e->cqs.n : 1) * sizeof(cu_cq_info));
    if (!e->vcq)
        return CU_ENOMEM;
    for (size_t c = 0; c < e->cqs.n; c++) {
        const ecq *q = &e->cqs.items[c];
        cu_cq_info *v = &e->vcq[c];
        memset(v, 0, sizeof(*v));
        v->name = q->name;
        v->obj = q->obj;
        v->cohort = q->obj->cohort;
        v->active = q->active;
        v->reason = q->reason;
        v->message = q->message;
        v->pending = (int)cu_pq_len(&q->q);
        v->reserving = v->admitted = q->admitted;
        for (size_t i = 0; q->obj->nchecks && i < q->nadm; i++)
            v->admitted -= wl_checks_pending(e, q->adm[i]);
        v->weighted_share = e->opts.fair_sharing ? cu_fs_weighted_share(e, q->node) : 0;
        size_t cnt = 0;
        for (size_t g = 0; g < q->ngroups; g++)
            cnt += q->groups[g].nflv * q->groups[g].nres;
        cu_fr_usage *u = cu_arena_alloc(a, (cnt ? cnt : 1) * sizeof(*u));
        int *ufr = cu_arena_alloc(a, (cnt ? cnt : 1) * sizeof(*ufr));
        if (!u || !ufr)
            return CU_ENOMEM;
        for (size_t g = 0; g < q->ngroups; g++) {
            const egroup *gr = &q->groups[g];
            for (size_t f = 0; f < gr->nflv; f++)
                for (size_t r = 0; r < gr->nres; r++) {
                    int fr = gr->fr[f * gr->nres + r];
                    if (fr >= 0) {
                        ufr[v->nusage] = fr;
                        fill_fr(e, q->node, fr, &u[v->nusage++]);
                    }
                }
        }
        /* a workload waiting for its AdmissionChecks holds quota but is not
         * admitted: not in the admitted usage */
        for (size_t i = 0; q->obj->nchecks && i < q->nadm; i++) {
            const ewl *w = q->adm[i];
            if (!wl_checks_pending(e, w))
                continue;
            for (size_t k = 0; k < w->nuse; k++)
                for (size_t j = 0; j < v->nusage; j++)
                    if (ufr[j] == w->use_fr[k])
                        u[j].admitted -= w->use_amt[k];
        }
        v->usage = u;
    }
    /* pending counts include workloads in no heap yet (none), so done */
    qsort(e->vcq, e->cqs.n, sizeof(cu_cq_info), cmp_cq_name);
    /* LocalQueues */
    e->vlq = cu_arena_alloc(a, (e->lqs.n ? e->lqs.n : 1) * sizeof(cu_lq_info));
    if (!e->vlq)
        return CU_ENOMEM;
    for (size_t l = 0; l < e->lqs.n; l++) {
        const elq *q = &e->lqs.items[l];
        cu_lq_info *v = &e->vlq[l];
        memset(v, 0, sizeof(*v));
        v->ns = q->obj->meta.ns ? q->obj->meta.ns : "default";
        v->name = q->obj->meta.name;
        v->obj = q->obj;
        v->cluster_queue = q->obj->cluster_queue;
        v->active = !q->bad && q->active && q->cq >= 0 && e->cqs.items[q->cq].active;
        v->afs.usage = cu_afs_usage(e, (int)l);
        if (q->bad) {
            v->reason = "Invalid";
            v->message = cu_arena_printf(a, "Can't submit new workloads to localQueue: %s", q->bad);
        } else if (!q->active) {
            v->reason = "Stopped";
            v->message = "LocalQueue is stopped";
        } else if (q->cq < 0) {
            v->reason = "ClusterQueueDoesNotExist";
            v->message = "Can't submit new workloads to clusterQueue";
        } else if (!e->cqs.items[q->cq].active) {
            v->reason = "ClusterQueueIsInactive";
            v->message = "Can't submit new workloads to clusterQueue";
        } else {
            v->reason = "Ready";
            v->message = "Can submit new workloads to localQueue";
        }
    }
    /* per-LocalQueue counters and usage: one pass over the workloads */
    size_t cap = e->nfr ? e->nfr : 1;
    int64_t *acc = cu_arena_alloc(a, (e->lqs.n ? e->lqs.n : 1) * cap * sizeof(int64_t));
    int64_t *accadm = cu_arena_alloc(a, (e->lqs.n ? e->lqs.n : 1) * cap * sizeof(int64_t));
    if (!acc || !accadm)
        return CU_ENOMEM;
    for (size_t i = 0; i < nw; i++) {
        const ewl *w = e->wls.items[i];
        if (w->lq < 0)
            continue;
        cu_lq_info *v = &e->vlq[w->lq];
        if (w->state == WL_QUEUED) {
            v->pending++;
        } else if (w->state == WL_ADMITTED) {
            int adm = !wl_checks_pending(e, w);
            v->admitted += adm;
            v->reserving++;
            for (size_t u = 0; u < w->nuse; u++) {
                acc[(size_t)w->lq * cap + (size_t)w->use_fr[u]] += w->use_amt[u];
                if (adm)
                    accadm[(size_t)w->lq * cap + (size_t)w->use_fr[u]] += w->use_amt[u];
            }
        }
    }
    for (size_t l = 0; l < e->lqs.n; l++) {
        cu_lq_info *v = &e->vlq[l];
        const elq *q = &e->lqs.items[l];
        if (q->cq < 0)
            continue;
        const ecq *c = &e->cqs.items[q->cq];
        size_t cnt = 0;
        for (size_t g = 0; g < c->ngroups; g++)
            cnt += c->groups[g].nflv * c->groups[g].nres;
        cu_fr_usage *u = cu_arena_alloc(a, (cnt ? cnt : 1) * sizeof(*u));
        if (!u)
            return CU_ENOMEM;
        for (size_t g = 0; g < c->ngroups; g++) {
            const egroup *gr = &c->groups[g];
            for (size_t f = 0; f < gr->nflv; f++)
                for (size_t r = 0; r < gr->nres; r++) {
                    int fr = gr->fr[f * gr->nres + r];
                    if (fr < 0)
                        continue;
                    cu_fr_usage *x = &u[v->nusage++];
                    memset(x, 0, sizeof(*x));
                    x->flavor = e->flavors.items[e->fr_flv[fr]].name;
                    x->resource = e->res_names.items[e->fr_res[fr]];
                    x->total = acc[l * cap + (size_t)fr];
                    x->admitted = accadm[l * cap + (size_t)fr];
                }
        }
        v->usage = u;
    }
    qsort(e->vlq, e->lqs.n, sizeof(cu_lq_info), cmp_lq_name);
    /* Cohorts */
    e->vco = cu_arena_alloc(a, (e->cohorts.n ? e->cohorts.n : 1) * sizeof(cu_cohort_info));
    if (!e->vco)
        return CU_ENOMEM;
    for (size_t i = 0; i < e->cohorts.n; i++) {
        const ecohort *c = &e->cohorts.items[i];
        cu_cohort_info *v = &e->vco[i];
        memset(v, 0, sizeof(*v));
        v->name = c->name;
        v->obj = c->obj;
        v->parent = c->obj ? c->obj->parent : NULL;
        v->active = !c->cyclic && !c->bad_in;
        v->weighted_share = e->opts.fair_sharing ? cu_fs_weighted_share(e, c->node) : 0;
        cu_fr_usage *u = cu_arena_alloc(a, (e->nfr ? e->nfr : 1) * sizeof(*u));
        if (!u)
            return CU_ENOMEM;
        for (size_t fr = 0; fr < e->nfr; fr++)
            if (c->node->subtree[fr] || c->node->usage[fr] || c->node->declared[fr])
                fill_fr(e, c->node, (int)fr, &u[v->nusage++]);
        v->usage = u;
    }
    qsort(e->vco, e->cohorts.n, sizeof(cu_cohort_info), cmp_co_name);
    e->views_dirty = 0;
    return CU_OK;
}

static int ensure(cu_engine *e)
{
    if (e->views_dirty && build(e) != CU_OK)
        return 0;
    return 1;
}

size_t cu_engine_nworkloads(const cu_engine *e) { return e->wls.n; }
size_t cu_engine_ncqs(const cu_engine *e) { return e->cqs.n; }
size_t cu_engine_nlqs(const cu_engine *e) { return e->lqs.n; }
size_t cu_engine_ncohorts(const cu_engine *e) { return e->cohorts.n; }

const cu_wl_info *cu_engine_workload_info(cu_engine *e, size_t i)
{
    return i < e->wls.n && ensure(e) ? &e->vwl[i] : NULL;
}

const cu_wl_info *cu_engine_workload_info_idx(cu_engine *e, int idx)
{
    return idx >= 0 && (size_t)idx < e->wls.n && ensure(e) ? &e->vwl[e->wl_view[idx]] : NULL;
}

const cu_wl_info *cu_engine_workload_info_one(cu_engine *e, int idx)
{
    if (idx < 0 || (size_t)idx >= e->wls.n)
        return NULL;
    if (!e->views_dirty)
        return &e->vwl[e->wl_view[idx]];
    cu_arena_free(&e->v1arena);
    return fill_wl(e, &e->v1arena, e->wls.items[idx], &e->v1) == CU_OK ? &e->v1 : NULL;
}

const cu_cq_info *cu_engine_cq_info(cu_engine *e, size_t i)
{
    return i < e->cqs.n && ensure(e) ? &e->vcq[i] : NULL;
}

const cu_lq_info *cu_engine_lq_info(cu_engine *e, size_t i)
{
    return i < e->lqs.n && ensure(e) ? &e->vlq[i] : NULL;
}

const cu_cohort_info *cu_engine_cohort_info(cu_engine *e, size_t i)
{
    return i < e->cohorts.n && ensure(e) ? &e->vco[i] : NULL;
}
