/*
 * cu_ctrlsync.c - engine sync: the long-lived engine kept in step with
 * the records (incremental Workload changes, full rebuilds).
 */
#include "cu_ctrl_int.h"

/* ---------------- the engine ---------------- */

static void grave_push(ctrl *c, cu_world *w)
{
    if (!w)
        return;
    if (cu_vec_reserve(&c->grave, c->ngrave, &c->capgrave, sizeof(*c->grave), 64)) {
        /* cannot keep it for the engine: rebuild now-ish and leak nothing */
        c->need_rebuild = 1;
        ctrl_world_free(w); /* the engine is freed before it is used again */
        if (c->eng) {
            cu_engine_free(c->eng);
            c->eng = NULL;
        }
        return;
    }
    c->grave[c->ngrave++] = w;
}

static int by_idx_set(ctrl *c, int idx, rec *r)
{
    if (idx < 0)
        return -1;
    if ((size_t)idx >= c->capby) {
        size_t cap = c->capby ? c->capby * 2 : 256;
        while (cap <= (size_t)idx)
            cap *= 2;
        rec **p = realloc(c->by_idx, cap * sizeof(*p));
        if (!p)
            return -1;
        memset(p + c->capby, 0, (cap - c->capby) * sizeof(*p));
        c->by_idx = p;
        c->capby = cap;
    }
    c->by_idx[idx] = r;
    if ((size_t)idx >= c->nby)
        c->nby = (size_t)idx + 1;
    return 0;
}

int ctrl_in_backoff(const ctrl *c, const rec *w)
{
    (void)c;
    return w->rq_at > 0 && !cu_workload_has_quota(ctrl_wl_of(w)) &&
           w->rq_at > cu_clock_system_now(NULL);
}

/* Removes w from the engine. Its copy there stays (finished) until the
 * next rebuild, but points into none of w's decodes (cu_engine_release):
 * the decode it was from is freed now unless it is still w's current one.
 * (Kept until the next rebuild, the old decodes of every changed Workload
 * were most of the memory under load.) */
void ctrl_eng_remove(ctrl *c, rec *w)
{
    if (c->eng && w->idx >= 0) {
        cu_engine_finish(c->eng, w->idx);
        cu_engine_release(c->eng, w->idx);
        c->by_idx[w->idx] = NULL;
        c->tombs++;
        c->need_views = 1;
        c->eng_dirty = 1;
    }
    w->idx = -1;
    if (w->r == R_WL) {
        if (w->ew && w->ew != w->w)
            ctrl_world_free(w->ew);
        w->pinned = 0;
    }
    w->ew = NULL;
}

/* Replaces the current decode of x (which the engine may reference). A
 * Workload's decode is the engine's only while its live copy is from it
 * (x->ew, which then keeps it); any other is freed at once. Other kinds
 * wait in the grave for the next rebuild. */
void ctrl_set_decode(ctrl *c, rec *x, cu_world *w)
{
    if (x->w) {
        if (x->r == R_WL) {
            if (x->w != x->ew)
                ctrl_world_free(x->w);
        } else if (x->pinned && c->eng)
            grave_push(c, x->w);
        else
            ctrl_world_free(x->w);
    }
    x->w = w;
    x->pinned = 0;
}

/* Adds w's current decode to the engine when it belongs there. */
/* Queue order of an owned Workload: its owner's creation time when it is
 * earlier than the Workload's (the Workload is created after the Job; after
 * a controller outage, much later, and in no particular order). */
void ctrl_job_order(ctrl *c, rec *w)
{
    const cu_workload *wl = ctrl_wl_of(w);
    rec *jr = w->owner ? ctrl_omap_get(&c->objs[w->owner_r], w->owner) : NULL;
    if (!wl || !jr || !jr->created_ms)
        return;
    cu_workload *mw = (cu_workload *)wl; /* our own decode */
    if (!mw->meta.has_created || jr->created_ms < mw->meta.created_ms) {
        mw->meta.created_ms = jr->created_ms;
        mw->meta.has_created = 1;
    }
}

void ctrl_eng_add(ctrl *c, rec *w)
{
    const cu_workload *wl = ctrl_wl_of(w);
    if (!c->eng || w->idx >= 0 || !wl || cu_workload_finished(wl) || w->hold)
        return;
    if (ctrl_in_backoff(c, w)) {
        if (!c->next_wake || w->rq_at < c->next_wake)
            c->next_wake = w->rq_at;
        return;
    }
    ctrl_job_order(c, w);
    int idx = cu_engine_add_workload(c->eng, wl);
    if (idx < 0 || by_idx_set(c, idx, w) != 0) {
        c->need_rebuild = 1;
        return;
    }
    w->idx = idx;
    w->ew = w->w;
    w->pinned = 1;
    c->need_views = 1;
    c->eng_dirty = 1;
}

/* Rebuilds the engine from the records. Not while admissions are assumed
 * (their quota is only in the engine). */
void ctrl_rebuild(ctrl *c)
{
    if (c->nassumed > 0 || c->nsynced < c->ninf)
        return;
    if (c->eng)
        cu_engine_free(c->eng);
    c->eng = NULL;
    for (size_t i = 0; i < c->ngrave; i++)
        ctrl_world_free(c->grave[i]);
    c->ngrave = 0;
    cu_world_free(&c->vw);
    cu_world_init(&c->vw);
    c->nby = 0;
    c->tombs = 0;
    c->next_wake = 0;
    cu_world *vw = &c->vw;
    size_t cnt[NRES] = { 0 };
    for (int r = 0; r < R_FIRST_OWNER; r++)
        cnt[r] = c->objs[r].n;
#define ALLOCV(vec, r) \
    do { \
        vw->vec.items = calloc(cnt[r] ? cnt[r] : 1, sizeof(*vw->vec.items)); \
        vw->vec.cap = cnt[r]; \
    } while (0)
    ALLOCV(flavors, R_RF);
    ALLOCV(cqs, R_CQ);
    ALLOCV(cohorts, R_COHORT);
    ALLOCV(lqs, R_LQ);
    ALLOCV(wpcs, R_WPC);
    ALLOCV(pcs, R_PC);
    ALLOCV(namespaces, R_NS);
    ALLOCV(checks, R_AC);
    ALLOCV(workloads, R_WL);
#undef ALLOCV
    if (!vw->flavors.items || !vw->cqs.items || !vw->cohorts.items || !vw->lqs.items ||
        !vw->wpcs.items || !vw->pcs.items || !vw->namespaces.items || !vw->workloads.items ||
        !vw->checks.items) {
        ctrl_log(c, 0, "out of memory building the engine");
        return;
    }
    for (int r = 0; r < R_WL; r++) {
        OMAP_FOREACH(&c->objs[r], x)
        {
            cu_world *w = x->w;
            if (!w)
                continue;
            switch (r) {
            case R_RF:
                if (w->flavors.n)
                    vw->flavors.items[vw->flavors.n++] = w->flavors.items[0];
                break;
            case R_CQ:
                if (w->cqs.n)
                    vw->cqs.items[vw->cqs.n++] = w->cqs.items[0];
                break;
            case R_COHORT:
                if (w->cohorts.n)
                    vw->cohorts.items[vw->cohorts.n++] = w->cohorts.items[0];
                break;
            case R_LQ:
                if (w->lqs.n)
                    vw->lqs.items[vw->lqs.n++] = w->lqs.items[0];
                break;
            case R_WPC:
                if (w->wpcs.n)
                    vw->wpcs.items[vw->wpcs.n++] = w->wpcs.items[0];
                break;
            case R_PC:
                if (w->pcs.n)
                    vw->pcs.items[vw->pcs.n++] = w->pcs.items[0];
                break;
            case R_NS:
                if (w->namespaces.n)
                    vw->namespaces.items[vw->namespaces.n++] = w->namespaces.items[0];
                break;
            case R_AC:
                if (w->checks.n)
                    vw->checks.items[vw->checks.n++] = w->checks.items[0];
                break;
            }
        }
    }
    /* workloads: their engine copy becomes the current decode */
    rec **order = calloc(c->objs[R_WL].n ? c->objs[R_WL].n : 1, sizeof(*order));
    size_t no = 0;
    if (!order) {
        ctrl_log(c, 0, "out of memory building the engine");
        return;
    }
    OMAP_FOREACH(&c->objs[R_WL], x)
    {
        if (x->ew && x->ew != x->w)
            ctrl_world_free(x->ew); /* the old engine's, gone */
        x->ew = NULL;
        x->idx = -1;
        x->pinned = 0;
        const cu_workload *wl = ctrl_wl_of(x);
        if (!wl || cu_workload_finished(wl))
            continue;
        if (ctrl_in_backoff(c, x)) {
            if (!c->next_wake || x->rq_at < c->next_wake)
                c->next_wake = x->rq_at;
            continue;
        }
        ctrl_job_order(c, x);
        x->ew = x->w;
        x->pinned = 1;
        vw->workloads.items[vw->workloads.n++] = (cu_workload *)wl;
        order[no++] = x;
    }
    if (ctrl_tas_world(c, vw) != CU_OK) {
        ctrl_log(c, 0, "out of memory building the engine");
        free(order);
        return;
    }
    cu_diag d;
    cu_diag_init(&d);
    c->eng = cu_engine_new(&c->eopts);
    if (!c->eng || cu_engine_load(c->eng, vw, &d) != CU_OK) {
        for (size_t i = 0; i < d.n; i++)
            ctrl_log(c, 0, "%s", d.msgs[i]);
        ctrl_log(c, 0, "could not load the engine");
        if (c->eng)
            cu_engine_free(c->eng);
        c->eng = NULL;
        for (size_t i = 0; i < no; i++)
            order[i]->ew = NULL;
    } else {
        for (size_t i = 0; i < no; i++) {
            order[i]->idx = (int)i;
            by_idx_set(c, (int)i, order[i]);
        }
        c->need_rebuild = 0;
        c->need_views = 1;
        c->eng_dirty = 1;
        c->n.rebuilds++;
        ctrl_log(c, 2,
                 "engine rebuilt: %zu ClusterQueues, %zu workloads, %zu nodes, %zu bound pods",
                 vw->cqs.n, no, vw->nodes.n, vw->pods.n);
    }
    cu_diag_free(&d);
    free(order);
}

void ctrl_undo_admission(ctrl *c, rec *w)
{
    if (!w->assumed)
        return;
    c->eng_dirty = 1;
    w->assumed = 0;
    w->adm_written = 0;
    c->nassumed--;
    /* the engine admitted a copy that says "pending": take it out and
     * queue the current state again */
    if (w->idx >= 0 && c->eng) {
        ctrl_eng_remove(c, w);
        if (!w->w)
            return;
        ctrl_eng_add(c, w);
    }
}

static int same_spec(const cu_workload *a, const cu_workload *b)
{
    if (!a || !b)
        return 0;
    if ((a->queue_name == NULL) != (b->queue_name == NULL) ||
        (a->queue_name && strcmp(a->queue_name, b->queue_name) != 0))
        return 0;
    if (a->active != b->active || a->has_priority != b->has_priority ||
        a->priority != b->priority || a->npodsets != b->npodsets)
        return 0;
    for (size_t i = 0; i < a->npodsets; i++) {
        const cu_podset *x = &a->podsets[i], *y = &b->podsets[i];
        if (x->count != y->count || x->has_min != y->has_min || x->min_count != y->min_count ||
            x->requests.n != y->requests.n)
            return 0;
        /* requests too: a fixed invalid request (negative) must reach the engine */
        for (size_t r = 0; r < x->requests.n; r++)
            if (x->requests.items[r].milli != y->requests.items[r].milli ||
                strcmp(x->requests.items[r].name, y->requests.items[r].name) != 0)
                return 0;
    }
    return 1;
}

/* Brings the engine in line with Workload w's current decode. */
/* 1 when a and b have the same admission check names and states. */
static int same_checks(const cu_workload *a, const cu_workload *b)
{
    if (a->nchecks != b->nchecks)
        return 0;
    for (size_t i = 0; i < a->nchecks; i++)
        if (a->checks[i].state != b->checks[i].state || !a->checks[i].name || !b->checks[i].name ||
            strcmp(a->checks[i].name, b->checks[i].name) != 0)
            return 0;
    return 1;
}

void ctrl_wl_sync(ctrl *c, rec *w)
{
    const cu_workload *n = ctrl_wl_of(w);
    if (!c->eng || !n)
        return;
    if (w->idx < 0) {
        ctrl_eng_add(c, w);
        return;
    }
    const cu_workload *o = w->ew && w->ew->workloads.n ? w->ew->workloads.items[0] : NULL;
    int q = cu_workload_has_quota(n);
    if (cu_workload_finished(n)) {
        ctrl_eng_remove(c, w);
        return;
    }
    int eadm = cu_engine_wl_admitted(c->eng, w->idx);
    if (q) {
        if (w->assumed) {
            w->assumed = 0;
            w->adm_written = 0;
            c->nassumed--;
        }
        if (eadm && n->adm_cq && o) {
            const cu_wl_info *vi = cu_engine_workload_info_one(c->eng, w->idx);
            if (vi && vi->cluster_queue && strcmp(vi->cluster_queue, n->adm_cq) == 0 &&
                same_checks(o, n))
                return; /* confirmation of what the engine holds */
            /* (a check's state changed: the engine's copy is replaced so
             * that its views count it admitted or reserving as it is) */
        }
        ctrl_eng_remove(c, w); /* admitted by someone else, or differently */
        ctrl_eng_add(c, w);
        return;
    }
    if (eadm) {
        if (w->assumed)
            return; /* our admission is not visible yet */
        if (cu_engine_wl_evicting(c->eng, w->idx)) {
            cu_engine_eviction_done(c->eng, w->idx); /* the Job stopped: quota released */
            c->need_views = 1;
            c->n.evictions++;
            return;
        }
        ctrl_eng_remove(c, w); /* admission cleared without the engine */
        ctrl_eng_add(c, w);
        return;
    }
    if (!same_spec(o, n) || ctrl_in_backoff(c, w)) {
        ctrl_eng_remove(c, w);
        ctrl_eng_add(c, w);
    }
}
