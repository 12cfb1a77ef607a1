/*
 * cu_explain.c - "why is my workload pending": builds an explanation of
 * one workload from the engine's state (a model in a private arena), then
 * renders it as text or as a cu_node document.
 *
 * Invariants:
 *  - the engine is only read. The one engine call that changes anything
 *    is the preemption search (cu_preempt_targets), which leaves usage as
 *    it found it and allocates its result in the engine's per-round arena
 *    (released by the next round);
 *  - the flavor analysis mirrors the flavor assigner of cu_assign.c (items
 *    in resource-name order with "pods" added when covered, groups in the
 *    order their first resource appears, flavors in the queue's order,
 *    earlier pod sets' usage counted against later ones) but examines
 *    every resource of every flavor, so it can say all that is missing,
 *    not only the first resource that did not fit;
 *  - quota numbers come from the quota tree's own functions
 *    (cu_quota_available / cu_quota_potential); the local copies below
 *    only add which limit binds, and agree with those functions (the
 *    rendering uses the quota functions' values).
 */
#include "cu_explain.h"
#include "cu_explain_int.h"
#include "cu_match.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------- model ---------------- */

const char *cu_x_rname(const xwl *x, int res) { return x->e->res_names.items[res]; }

/* A quantity of resource res as an arena string ("1500m", "2Gi"). */
const char *cu_x_qs(xwl *x, int res, int64_t v)
{
    char b[48];
    if (v == CU_QTY_INF)
        return "unlimited";
    return cu_arena_strdup(x->ar, cu_qty_format_res(cu_x_rname(x, res), v, b, sizeof b));
}

const char *cu_x_policy_name(cu_ppolicy p)
{
    switch (p) {
    case CU_PP_LOWER_PRIORITY: return "LowerPriority";
    case CU_PP_LOWER_OR_NEWER_EQUAL_PRIORITY: return "LowerOrNewerEqualPriority";
    case CU_PP_ANY: return "Any";
    default: return "Never";
    }
}

const char *cu_x_stop_name(cu_stop s)
{
    return s == CU_STOP_HOLD ? "Hold" : s == CU_STOP_HOLD_AND_DRAIN ? "HoldAndDrain" : "None";
}

static const char *node_label(xwl *x, const cu_qnode *n)
{
    return cu_arena_printf(x->ar, "%s %s", n->is_cq ? "ClusterQueue" : "Cohort", n->name);
}

/* ---------------- flavor eligibility (cu_assign.c's predicates) ---------------- */

static const char *has_label(xwl *x, const cu_kvs *labels, const char *key)
{
    const char *v = cu_kvs_get(labels, key);
    return v ? cu_arena_printf(x->ar, "flavor has %s=%s", key, v)
             : cu_arena_printf(x->ar, "flavor has no label %s", key);
}

/* NULL when the pod set's nodeSelector and required node affinity
 * (restricted to the group's label keys) match labels; otherwise what
 * does not match. */
static const char *affinity_mismatch(xwl *x, const egroup *g, const cu_podset *ps,
                                     const cu_kvs *labels)
{
    for (size_t i = 0; i < ps->node_selector.n; i++) {
        const cu_kv *kv = &ps->node_selector.items[i];
        if (!cu_group_has_key(g, kv->key))
            continue;
        const char *v = cu_kvs_get(labels, kv->key);
        if (!v || strcmp(v, kv->value) != 0)
            return cu_arena_printf(x->ar, "nodeSelector %s=%s, %s", kv->key, kv->value,
                                   has_label(x, labels, kv->key));
    }
    if (!ps->nterms)
        return NULL;
    for (size_t t = 0; t < ps->nterms; t++) {
        size_t relevant = 0;
        for (size_t r = 0; r < ps->terms[t].n; r++)
            relevant += (size_t)cu_group_has_key(g, ps->terms[t].reqs[r].key);
        if (!relevant)
            return NULL;
    }
    const cu_selreq *first_bad = NULL;
    for (size_t t = 0; t < ps->nterms; t++) {
        int all = 1;
        for (size_t r = 0; r < ps->terms[t].n && all; r++) {
            const cu_selreq *q = &ps->terms[t].reqs[r];
            if (cu_group_has_key(g, q->key) && !cu_match_selreq_labels(q, labels)) {
                all = 0;
                if (!first_bad)
                    first_bad = q;
            }
        }
        if (all)
            return NULL;
    }
    cu_buf b;
    cu_buf_init(&b, 4096);
    cu_buf_printf(&b, "required node affinity %s %s", first_bad->key, cu_selop_name(first_bad->op));
    if (first_bad->values.n) {
        cu_buf_puts(&b, " (");
        for (size_t i = 0; i < first_bad->values.n; i++)
            cu_buf_printf(&b, "%s%s", i ? ", " : "", first_bad->values.items[i]);
        cu_buf_puts(&b, ")");
    }
    cu_buf_printf(&b, ", %s", has_label(x, labels, first_bad->key));
    if (ps->nterms > 1)
        cu_buf_printf(&b, " (none of its %zu terms matches)", ps->nterms);
    const char *s = cu_arena_strdup(x->ar, cu_buf_str(&b));
    cu_buf_free(&b);
    return s;
}

/* ---------------- quota: which limit binds ---------------- */

int64_t cu_x_max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* cu_quota_available, also naming the node whose limit bounds the part
 * that comes from above (*by; is_blimit says whether it is that node's
 * borrowingLimit or the unused quota of the tree's root). */
static int64_t avail_why(const cu_qnode *n, size_t fr, const cu_qnode **by, int *is_blimit)
{
    if (!n->parent) {
        *by = n;
        *is_blimit = 0;
        return cu_qty_sat_sub(n->subtree[fr], n->usage[fr]);
    }
    int64_t local = cu_quota_local(n, fr);
    int64_t local_avail = cu_x_max64(0, cu_qty_sat_sub(local, n->usage[fr]));
    int64_t parent_avail = avail_why(n->parent, fr, by, is_blimit);
    if (n->blimit[fr] != CU_QUOTA_UNSET) {
        int64_t stored = n->llimit[fr] == CU_QUOTA_UNSET || n->llimit[fr] >= n->subtree[fr]
                             ? n->subtree[fr]
                             : n->llimit[fr];
        int64_t used = cu_x_max64(0, cu_qty_sat_sub(n->usage[fr], local));
        int64_t cap = cu_qty_sat_add(cu_qty_sat_sub(stored, used), n->blimit[fr]);
        if (cap < parent_avail) {
            parent_avail = cap;
            *by = n;
            *is_blimit = 1;
        }
    }
    return cu_qty_sat_add(local_avail, parent_avail);
}

/* cu_quota_potential, naming what bounds it the same way. */
static int64_t potential_why(const cu_qnode *n, size_t fr, const cu_qnode **by, int *is_blimit)
{
    if (!n->parent) {
        *by = n;
        *is_blimit = 0;
        return n->subtree[fr];
    }
    int64_t v = cu_qty_sat_add(cu_quota_local(n, fr), potential_why(n->parent, fr, by, is_blimit));
    if (n->blimit[fr] != CU_QUOTA_UNSET) {
        int64_t cap = cu_qty_sat_add(n->subtree[fr], n->blimit[fr]);
        if (cap < v) {
            v = cap;
            *by = n;
            *is_blimit = 1;
        }
    }
    return v;
}

static const char *bound_text(xwl *x, int res, const cu_qnode *by, int is_blimit, size_t fr,
                              int with_usage)
{
    if (is_blimit)
        return cu_arena_printf(x->ar, "borrowingLimit %s of %s", cu_x_qs(x, res, by->blimit[fr]),
                               node_label(x, by));
    if (!with_usage)
        return cu_arena_printf(x->ar, "%s: %s in total", node_label(x, by),
                               cu_x_qs(x, res, by->subtree[fr]));
    return cu_arena_printf(x->ar, "%s: %s in total, %s in use", node_label(x, by),
                           cu_x_qs(x, res, by->subtree[fr]), cu_x_qs(x, res, by->usage[fr]));
}

static void fill_res(xwl *x, xres *r, int fr, int64_t req, int64_t prev)
{
    const cu_qnode *n = x->c->node;
    r->fr = fr;
    r->req = req;
    r->prev = prev;
    if (fr < 0) {
        r->state = XR_NO_QUOTA;
        return;
    }
    size_t f = (size_t)fr;
    int64_t val = cu_qty_sat_add(req, prev);
    const cu_qnode *by;
    int isb;
    r->nominal = n->nominal[f];
    r->used = n->usage[f];
    r->free_own = cu_x_max64(0, cu_qty_sat_sub(r->nominal, r->used));
    r->avail = cu_quota_available(n, f);
    (void)avail_why(n, f, &by, &isb);
    r->avail_by = n->parent ? bound_text(x, r->res, by, isb, f, 1) : NULL;
    r->borrowable = cu_x_max64(0, cu_qty_sat_sub(r->avail, r->free_own));
    r->lent = cu_x_max64(0, cu_qty_sat_sub(r->free_own, cu_x_max64(0, r->avail)));
    r->has_cohort = n->parent != NULL;
    r->has_blimit = n->blimit[f] != CU_QUOTA_UNSET;
    r->blimit = r->has_blimit ? n->blimit[f] : 0;
    r->potential = cu_quota_potential(n, f);
    (void)potential_why(n, f, &by, &isb);
    r->pot_node = by;
    r->pot_blimit = isb;
    r->pot_by = n->parent ? bound_text(x, r->res, by, isb, f, 0) : NULL;
    if (val > r->potential) {
        r->state = XR_OVER_MAX;
        r->more = cu_qty_sat_sub(val, r->potential);
    } else if (val > r->avail) {
        r->state = XR_SHORT;
        r->more = cu_qty_sat_sub(val, r->avail);
    } else {
        r->state = XR_FITS;
    }
}

/* ---------------- building the model ---------------- */

typedef struct item {
    int res;
    int64_t amt;
} item;

static int group_pos(const egroup *g, int res)
{
    for (size_t i = 0; i < g->nres; i++)
        if (g->res[i] == res)
            return (int)i;
    return -1;
}

static cu_err analyze_ps(xwl *x, size_t p)
{
    cu_engine *e = x->e;
    ecq *c = x->c;
    const eps *ps = &x->w->ps[p];
    const cu_podset *pso = &x->w->obj->podsets[p];
    xps *out = &x->ps[p];
    item *items = cu_arena_alloc(x->ar, (ps->nreq + 2) * sizeof(item));
    int *gorder = cu_arena_alloc(x->ar, (c->ngroups + 1) * sizeof(int));
    out->g = cu_arena_alloc(x->ar, (c->ngroups + 1) * sizeof(xgroup));
    if (!items || !gorder || !out->g)
        return CU_ENOMEM;
    size_t n = 0;
    int pods_done = c->pods_res < 0;
    for (size_t r = 0; r <= ps->nreq; r++) {
        if (!pods_done && (r == ps->nreq || strcmp("pods", cu_x_rname(x, ps->res[r])) < 0)) {
            items[n++] = (item){ c->pods_res, cu_qty_res_units("pods", ps->count) };
            pods_done = 1;
        }
        if (r == ps->nreq)
            break;
        int64_t v = cu_engine_mul_sat(ps->amt[r], ps->count);
        if (v)
            items[n++] = (item){ ps->res[r], v };
    }
    size_t ng = 0;
    for (size_t i = 0; i < n; i++) {
        int gi = (size_t)items[i].res < c->nres_group ? c->res_group[items[i].res] : -1;
        if (gi < 0) {
            cu_strlist_add(x->ar, &out->uncovered, cu_x_rname(x, items[i].res));
            continue;
        }
        size_t k;
        for (k = 0; k < ng; k++)
            if (gorder[k] == gi)
                break;
        if (k == ng)
            gorder[ng++] = gi;
    }
    out->ngroups = ng;
    for (size_t k = 0; k < ng; k++) {
        const egroup *g = &c->groups[gorder[k]];
        xgroup *xg = &out->g[k];
        memset(xg, 0, sizeof(*xg));
        xg->gi = gorder[k];
        xg->fits = xg->would = -1;
        xg->res = cu_arena_alloc(x->ar, (n + 1) * sizeof(char *));
        xg->flv = cu_arena_alloc(x->ar, (g->nflv + 1) * sizeof(xflv));
        if (!xg->res || !xg->flv)
            return CU_ENOMEM;
        for (size_t i = 0; i < n; i++)
            if (group_pos(g, items[i].res) >= 0)
                xg->res[xg->nres++] = cu_x_rname(x, items[i].res);
        xg->nflv = g->nflv;
        for (size_t fi = 0; fi < g->nflv; fi++) {
            const eflavor *fl = &e->flavors.items[g->flv[fi]];
            xflv *xf = &xg->flv[fi];
            memset(xf, 0, sizeof(*xf));
            xf->name = fl->name;
            if (!fl->obj) {
                xf->state = XF_MISSING;
                continue;
            }
            if ((xf->taint = cu_flavor_untolerated(fl->obj, pso)) != NULL) {
                xf->state = XF_TAINT;
                continue;
            }
            if ((xf->mismatch = affinity_mismatch(x, g, pso, &fl->obj->node_labels)) != NULL) {
                xf->state = XF_AFFINITY;
                continue;
            }
            xf->res = cu_arena_alloc(x->ar, (xg->nres + 1) * sizeof(xres));
            if (!xf->res)
                return CU_ENOMEM;
            int worst = XR_FITS;
            for (size_t i = 0; i < n; i++) {
                int rpos = group_pos(g, items[i].res);
                if (rpos < 0)
                    continue;
                int fr = g->fr[fi * g->nres + (size_t)rpos];
                xres *r = &xf->res[xf->nres++];
                memset(r, 0, sizeof(*r));
                r->res = items[i].res;
                fill_res(x, r, fr, items[i].amt, fr >= 0 ? x->acc[fr] : 0);
                if (r->state > worst)
                    worst = r->state;
            }
            xf->state = worst == XR_FITS       ? XF_FITS
                        : worst == XR_SHORT    ? XF_SHORT
                        : worst == XR_OVER_MAX ? XF_OVER_MAX
                                               : XF_NO_QUOTA;
            if (xf->state == XF_FITS && xg->fits < 0)
                xg->fits = (int)fi;
            if ((xf->state == XF_FITS || xf->state == XF_SHORT) && xg->would < 0)
                xg->would = (int)fi;
        }
        int chosen = xg->fits >= 0 ? xg->fits : xg->would;
        if (chosen < 0) {
            x->all_chosen = 0;
            continue;
        }
        const xflv *xf = &xg->flv[chosen];
        for (size_t i = 0; i < xf->nres; i++)
            if (xf->res[i].fr >= 0)
                x->acc[xf->res[i].fr] = cu_qty_sat_add(x->acc[xf->res[i].fr], xf->res[i].req);
    }
    if (out->uncovered.n)
        x->all_chosen = 0;
    return CU_OK;
}

static int nfrs_contested(xwl *x, int *frs)
{
    int n = 0;
    for (size_t fr = 0; fr < x->e->nfr; fr++)
        if (x->acc[fr] > 0 && x->acc[fr] > cu_quota_available(x->c->node, fr))
            frs[n++] = (int)fr;
    return n;
}

/* Preempted workloads that were preempted for x->w and still hold quota
 * (their note names it as the preemptor). */
static void find_victims(xwl *x)
{
    size_t kl = strlen(x->w->key);
    for (size_t i = 0; i < x->e->wls.n; i++) {
        const ewl *v = x->e->wls.items[i];
        if (!v->evicting || v->state != WL_ADMITTED || !v->note)
            continue;
        if (strncmp(v->note, "preempted by ", 13) == 0 &&
            strncmp(v->note + 13, x->w->key, kl) == 0 &&
            (v->note[13 + kl] == ' ' || v->note[13 + kl] == ','))
            cu_strlist_add(x->ar, &x->victims,
                           v->preempt_reason
                               ? cu_arena_printf(x->ar, "%s (%s)", v->key, v->preempt_reason)
                               : v->key);
    }
}

static cu_err analyze_preemption(xwl *x)
{
    cu_engine *e = x->e;
    ecq *c = x->c;
    const cu_cluster_queue *q = c->obj;
    x->pre_configured = q->preemption.within_cq != CU_PP_NEVER ||
                        (c->node->parent && (q->preemption.reclaim != CU_PP_NEVER ||
                                             q->preemption.borrow_policy != CU_PP_NEVER));
    int *frs = cu_arena_alloc(x->ar, (e->nfr + 1) * sizeof(int));
    if (!frs)
        return CU_ENOMEM;
    int nfrs = nfrs_contested(x, frs);
    x->over_nominal = NULL;
    if (!x->pre_configured || !nfrs || !x->all_chosen || x->victims.n)
        return CU_OK;
    /* the flavor assigner's gate: nobody is searched for a request over
     * the queue's nominal quota that may neither reclaim in a sub-cohort
     * nor preempt while borrowing */
    for (int i = 0; i < nfrs; i++) {
        int may = 0;
        (void)cu_engine_borrow_level(e, c, frs[i], x->acc[frs[i]], &may);
        if (!cu_assign_may_preempt(e, c, frs[i], x->acc[frs[i]], may)) {
            int res = e->fr_res[frs[i]];
            x->over_nominal = cu_arena_printf(
                x->ar,
                "it requests %s %s in flavor %s, more than ClusterQueue %s's nominal quota (%s); "
                "a workload over its nominal quota preempts only with borrowWithinCohort%s, or "
                "when it fits in the quota of a cohort below the root as that cohort is used now",
                cu_x_qs(x, res, x->acc[frs[i]]), cu_x_rname(x, res),
                e->flavors.items[e->fr_flv[frs[i]]].name, c->name,
                cu_x_qs(x, res, c->node->nominal[frs[i]]),
                e->opts.fair_sharing ? " or reclaimWithinCohort" : "");
            return CU_OK;
        }
    }
    for (size_t i = 0; i < c->nadm; i++) {
        const ewl *v = c->adm[i];
        if (v != x->w && !v->evicting && cu_wl_uses_any(v, frs, (size_t)nfrs) &&
            cu_policy_ok(q->preemption.within_cq, x->w, v))
            x->n_within++;
    }
    if (c->node->parent && q->preemption.reclaim != CU_PP_NEVER) {
        for (size_t k = 0; k < e->cqs.n; k++) {
            const ecq *o = &e->cqs.items[k];
            if (o == c || o->tree != c->tree || cu_within_nominal(o->node, frs, (size_t)nfrs))
                continue;
            for (size_t i = 0; i < o->nadm; i++) {
                const ewl *v = o->adm[i];
                if (!v->evicting && cu_wl_uses_any(v, frs, (size_t)nfrs) &&
                    cu_policy_ok(q->preemption.reclaim, x->w, v))
                    x->n_reclaim++;
            }
        }
    }
    if (!x->n_within && !x->n_reclaim)
        return CU_OK;
    /* the engine's own search, for the usage of the chosen flavors */
    asg a;
    memset(&a, 0, sizeof(a));
    a.fr = cu_arena_alloc(x->ar, (e->nfr + 1) * sizeof(int));
    a.amt = cu_arena_alloc(x->ar, (e->nfr + 1) * sizeof(int64_t));
    if (!a.fr || !a.amt)
        return CU_ENOMEM;
    for (size_t fr = 0; fr < e->nfr; fr++)
        if (x->acc[fr] > 0) {
            a.fr[a.nuse] = (int)fr;
            a.amt[a.nuse++] = x->acc[fr];
        }
    targets t;
    cu_err err = cu_preempt_targets(e, c, x->w, &a, -1, 0, &t);
    if (err)
        return err;
    x->searched = 1;
    for (size_t i = 0; i < t.n; i++)
        cu_strlist_add(x->ar, &x->targets,
                       cu_arena_printf(x->ar, "%s (%s)", t.t[i].wl->key, t.t[i].reason));
    return CU_OK;
}

static void position(xwl *x)
{
    const cu_pqueue *q = &x->c->q;
    const cu_qitem *me = &x->w->qi;
    x->inadmissible = me->where == CU_QI_INADMISSIBLE;
    for (int pass = 0; pass < 2; pass++) {
        cu_qitem *const *items = pass ? q->inadm : q->heap;
        size_t n = pass ? q->ninadm : q->n;
        for (size_t i = 0; i < n; i++) {
            const cu_qitem *it = items[i];
            if (it == me || cu_qitem_cmp(it, me) >= 0)
                continue;
            x->ahead++;
            x->ahead_inadm += pass;
            if (((const ewl *)it)->lq == x->w->lq)
                x->lq_ahead++;
        }
    }
    const ewl *head = (const ewl *)cu_pq_peek(q);
    if (x->c->active && x->c->obj->queueing == CU_STRICT_FIFO && head && head != x->w &&
        me->where == CU_QI_HEAP && head->reason != R_PENDING)
        x->blocked_by = head;
}

/* "2 more cpu in flavor default: raise ..." for a request over the
 * maximum, naming the limit that binds. */
static const char *over_max_hint(xwl *x, const xflv *xf, const xres *xr)
{
    const char *more = cu_x_qs(x, xr->res, xr->more), *rn = cu_x_rname(x, xr->res);
    const char *cq = x->c->name;
    const char *how;
    if (!xr->has_cohort)
        how = cu_arena_printf(x->ar, "raise the nominalQuota of ClusterQueue %s", cq);
    else if (xr->pot_blimit)
        how = cu_arena_printf(
            x->ar, "raise the borrowingLimit of %s (or the nominalQuota of ClusterQueue %s)",
            node_label(x, xr->pot_node), cq);
    else
        how = cu_arena_printf(x->ar,
                              "raise nominalQuota in %s (ClusterQueue %s or the cohorts above it)",
                              node_label(x, xr->pot_node), cq);
    return cu_arena_printf(x->ar, "%s more %s quota in flavor %s: %s, or request less", more, rn,
                           xf->name, how);
}

/* Unblocking hints for a workload whose quota or flavors are the problem. */
static void unblock_flavors(xwl *x)
{
    cu_arena *ar = x->ar;
    const char *cq = x->c->name;
    int reclaim_said = 0;
    for (size_t p = 0; p < x->nps; p++) {
        const xps *ps = &x->ps[p];
        for (size_t i = 0; i < ps->uncovered.n; i++)
            cu_strlist_add(
                ar, &x->unblock,
                cu_arena_printf(
                    ar,
                    "quota for %s: add it to a resourceGroup of ClusterQueue %s (or drop the request)",
                    ps->uncovered.s[i], cq));
        for (size_t k = 0; k < ps->ngroups; k++) {
            const xgroup *g = &ps->g[k];
            if (g->fits >= 0)
                continue;
            if (g->would >= 0) {
                /* every flavor only short of quota is a way out */
                for (size_t f = 0; f < g->nflv; f++) {
                    const xflv *xf = &g->flv[f];
                    if (xf->state != XF_SHORT)
                        continue;
                    cu_buf b;
                    cu_buf_init(&b, 4096);
                    int first = 1;
                    for (size_t r = 0; r < xf->nres; r++) {
                        if (xf->res[r].state != XR_SHORT)
                            continue;
                        cu_buf_printf(&b, "%s%s more %s", first ? "" : " and ",
                                      cu_x_qs(x, xf->res[r].res, xf->res[r].more),
                                      cu_x_rname(x, xf->res[r].res));
                        first = 0;
                    }
                    cu_buf_printf(&b, " free in flavor %s of ClusterQueue %s", xf->name, cq);
                    cu_strlist_add(ar, &x->unblock, cu_arena_strdup(ar, cu_buf_str(&b)));
                    cu_buf_free(&b);
                    int lent = 0;
                    for (size_t r = 0; r < xf->nres; r++)
                        lent |= xf->res[r].state == XR_SHORT && xf->res[r].lent > 0;
                    if (lent && x->c->obj->preemption.reclaim == CU_PP_NEVER && !reclaim_said) {
                        cu_strlist_add(
                            ar, &x->unblock,
                            cu_arena_printf(
                                ar,
                                "preemption.reclaimWithinCohort LowerPriority or Any on ClusterQueue %s, "
                                "to take back its nominal quota from the cohort",
                                cq));
                        reclaim_said = 1;
                    }
                }
                continue;
            }
            /* no flavor can ever take it: say what each one lacks */
            int affinity_said = 0;
            for (size_t f = 0; f < g->nflv; f++) {
                const xflv *xf = &g->flv[f];
                const char *s = NULL;
                switch (xf->state) {
                case XF_MISSING:
                    s = cu_arena_printf(ar, "create ResourceFlavor %s", xf->name);
                    break;
                case XF_TAINT: {
                    const cu_taint *t = xf->taint;
                    s = cu_arena_printf(ar,
                                        "tolerate taint %s%s%s:%s in pod set %s "
                                        "(or in spec.tolerations of ResourceFlavor %s)",
                                        t->key ? t->key : "", t->value && *t->value ? "=" : "",
                                        t->value ? t->value : "", t->effect, ps->name, xf->name);
                    break;
                }
                case XF_AFFINITY:
                    if (!affinity_said) {
                        s = cu_arena_printf(
                            ar,
                            "a flavor of ClusterQueue %s whose nodeLabels match the "
                            "node selector and affinity of pod set %s",
                            cq, ps->name);
                        affinity_said = 1;
                    }
                    break;
                case XF_OVER_MAX:
                case XF_NO_QUOTA:
                    for (size_t r = 0; r < xf->nres; r++) {
                        const xres *xr = &xf->res[r];
                        if (xr->state == XR_NO_QUOTA)
                            cu_strlist_add(
                                ar, &x->unblock,
                                cu_arena_printf(ar, "quota for %s in flavor %s of ClusterQueue %s",
                                                cu_x_rname(x, xr->res), xf->name, cq));
                        else if (xr->state == XR_OVER_MAX)
                            cu_strlist_add(ar, &x->unblock, over_max_hint(x, xf, xr));
                    }
                    break;
                default: break;
                }
                if (s)
                    cu_strlist_add(ar, &x->unblock, s);
            }
        }
    }
}

static cu_err analyze_topology(xwl *x);

static cu_err build(xwl *x)
{
    cu_engine *e = x->e;
    cu_arena *ar = x->ar;
    ewl *w = x->w;
    const cu_workload *o = w->obj;
    x->lq_name = o->queue_name;
    x->lq = w->lq >= 0 ? &e->lqs.items[w->lq] : NULL;
    x->c = w->cq >= 0 ? &e->cqs.items[w->cq] : NULL;
    x->cq_name = x->c ? x->c->name : w->cq_name;
    /* "reserved": it holds quota, its AdmissionChecks are not all Ready */
    x->state = w->state == WL_ADMITTED   ? (w->evicting            ? "evicting"
                                            : x->v->checks_pending ? "reserved"
                                                                   : "admitted")
               : w->state == WL_FINISHED ? "finished"
                                         : "pending";
    /* queue chain */
    const char *ns = o->meta.ns ? o->meta.ns : "default";
    if (x->lq_name)
        cu_strlist_add(
            ar, &x->chain,
            cu_arena_printf(ar, "LocalQueue %s/%s%s", ns, x->lq_name, x->lq ? "" : " (missing)"));
    if (x->cq_name)
        cu_strlist_add(
            ar, &x->chain,
            cu_arena_printf(ar, "ClusterQueue %s%s", x->cq_name, x->c ? "" : " (missing)"));
    if (x->c) {
        for (const cu_qnode *n = x->c->node->parent; n; n = n->parent)
            cu_strlist_add(ar, &x->chain, cu_arena_printf(ar, "Cohort %s", n->name));
        if (x->c->obj->cohort && !x->c->node->parent) {
            x->cohort_cycle = x->c->obj->cohort;
            cu_strlist_add(ar, &x->chain,
                           cu_arena_printf(ar, "Cohort %s (in a cycle)", x->cohort_cycle));
        }
    }
    if (w->state != WL_QUEUED && w->state != WL_NONE)
        return CU_OK;
    /* pending: why it is not even queued, or where it is */
    if (!o->active) {
        cu_strlist_add(ar, &x->unblock, "set spec.active: true on the Workload");
        return CU_OK;
    }
    if (!x->lq_name) {
        cu_strlist_add(ar, &x->unblock,
                       "set spec.queueName (the kueue.x-k8s.io/queue-name label of its Job)");
        return CU_OK;
    }
    if (!x->lq) {
        cu_strlist_add(ar, &x->unblock,
                       cu_arena_printf(ar,
                                       "create LocalQueue %s/%s (spec.clusterQueue: "
                                       "the ClusterQueue to use)",
                                       ns, x->lq_name));
        return CU_OK;
    }
    if (!x->c) {
        cu_strlist_add(ar, &x->unblock,
                       cu_arena_printf(ar,
                                       "create ClusterQueue %s (LocalQueue %s points "
                                       "at it)",
                                       x->cq_name ? x->cq_name : "?", x->lq->key));
        return CU_OK;
    }
    if (x->lq->bad) {
        cu_strlist_add(ar, &x->unblock,
                       cu_arena_printf(ar, "fix LocalQueue %s: %s", x->lq->key, x->lq->bad));
        return CU_OK;
    }
    if (!x->lq->active) {
        cu_strlist_add(ar, &x->unblock,
                       cu_arena_printf(ar,
                                       "LocalQueue %s is stopped (stopPolicy %s): set "
                                       "stopPolicy None",
                                       x->lq->key, cu_x_stop_name(x->lq->obj->stop_policy)));
        return CU_OK;
    }
    x->queued = w->state == WL_QUEUED;
    if (x->queued)
        position(x);
    if (!x->c->active) {
        const cu_cluster_queue *q = x->c->obj;
        if (x->c->bad)
            cu_strlist_add(ar, &x->unblock,
                           cu_arena_printf(ar, "fix ClusterQueue %s: %s", x->c->name, x->c->bad));
        if (q->stop_policy != CU_STOP_NONE)
            cu_strlist_add(ar, &x->unblock,
                           cu_arena_printf(ar,
                                           "ClusterQueue %s is stopped (stopPolicy %s): "
                                           "set stopPolicy None",
                                           x->c->name, cu_x_stop_name(q->stop_policy)));
        if (x->cohort_cycle)
            cu_strlist_add(ar, &x->unblock,
                           cu_arena_printf(ar,
                                           "break the cycle of parentName links "
                                           "through Cohort %s",
                                           x->cohort_cycle));
        for (size_t g = 0; g < x->c->ngroups; g++)
            for (size_t f = 0; f < x->c->groups[g].nflv; f++) {
                const eflavor *fl = &e->flavors.items[x->c->groups[g].flv[f]];
                if (!fl->obj)
                    cu_strlist_add(ar, &x->unblock,
                                   cu_arena_printf(ar,
                                                   "create ResourceFlavor %s "
                                                   "(ClusterQueue %s uses it)",
                                                   fl->name, x->c->name));
            }
        x->not_analyzed =
            cu_arena_printf(ar, "not evaluated: ClusterQueue %s is inactive", x->c->name);
        return CU_OK;
    }
    x->ns_selected = cu_engine_ns_selected(e, x->c->obj, ns);
    if (!x->ns_selected) {
        cu_strlist_add(ar, &x->unblock,
                       cu_arena_printf(ar,
                                       "namespace %s selected by the namespaceSelector "
                                       "of ClusterQueue %s",
                                       ns, x->c->name));
        x->not_analyzed = "not evaluated: the namespace is not selected";
        return CU_OK;
    }
    /* flavors */
    x->nps = w->nps;
    x->ps = cu_arena_alloc(ar, (w->nps + 1) * sizeof(xps));
    x->acc = cu_arena_alloc(ar, (e->nfr + 1) * sizeof(int64_t));
    if (!x->ps || !x->acc)
        return CU_ENOMEM;
    x->all_chosen = 1;
    for (size_t p = 0; p < w->nps; p++) {
        x->ps[p].name = w->ps[p].name;
        x->ps[p].count = w->ps[p].count;
        x->ps[p].min = w->ps[p].min;
        cu_err err = analyze_ps(x, p);
        if (err)
            return err;
    }
    x->analyzed = 1;
    find_victims(x);
    if (x->blocked_by) {
        cu_strlist_add(ar, &x->unblock,
                       cu_arena_printf(ar,
                                       "the head %s admitted (StrictFIFO), or "
                                       "ClusterQueue %s switched to BestEffortFIFO",
                                       x->blocked_by->key, x->c->name));
    }
    if (x->victims.n) {
        cu_strlist_add(ar, &x->unblock,
                       cu_arena_printf(ar,
                                       "the %zu preempted workload%s stopping and "
                                       "releasing %s quota",
                                       x->victims.n, x->victims.n == 1 ? "" : "s",
                                       x->victims.n == 1 ? "its" : "their"));
        return CU_OK;
    }
    cu_err err = analyze_preemption(x);
    if (err)
        return err;
    int quota_blocked = 0;
    for (size_t p = 0; p < x->nps; p++)
        for (size_t k = 0; k < x->ps[p].ngroups; k++)
            if (x->ps[p].g[k].fits < 0)
                quota_blocked = 1;
    for (size_t p = 0; p < x->nps; p++)
        quota_blocked |= x->ps[p].uncovered.n > 0;
    if (!quota_blocked && w->tas_wait) {
        err = analyze_topology(x);
        if (err)
            return err;
    }
    x->fits_now = !quota_blocked && !(x->topo.on && !x->topo.fits_now);
    if (quota_blocked) {
        x->pre_quota = x->all_chosen;
        if (x->targets.n)
            cu_strlist_add(ar, &x->unblock,
                           cu_arena_printf(ar, "preempting %zu workload%s (see Preemption)",
                                           x->targets.n, x->targets.n == 1 ? "" : "s"));
        unblock_flavors(x);
    }
    return CU_OK;
}

/* ---------------- topology ---------------- */

typedef struct tcand {
    ewl *w;
    int64_t pods; /* its pods in the flavor */
} tcand;

static int tcand_cmp(const void *pa, const void *pb)
{
    const tcand *a = pa, *b = pb;
    if (a->pods != b->pods)
        return a->pods < b->pods ? -1 : 1;
    return strcmp(a->w->key, b->w->key);
}

/* x's blocked pod set's request, with its pod-set group's other member
 * (placed jointly; both in pod-set order) when it has one. */
typedef struct treq {
    cu_tas_request q[2];
    size_t n, self; /* q[self] is the blocked pod set's */
} treq;

/* Places tq in snapshot t now; 1 when it fits. With r, keeps the blocked
 * pod set's result (caller frees). */
static int tplace(cu_tas *t, const treq *tq, cu_tas_result *r)
{
    cu_tas_result tmp[2];
    cu_tas_opts o = { CU_TAS_PROFILE_MIXED, 0 };
    cu_err err = cu_tas_place(t, tq->q, tq->n, &o, tmp);
    for (size_t i = 0; i < tq->n; i++) {
        if (r && i == tq->self)
            *r = tmp[i];
        else
            cu_tas_result_free(&tmp[i]);
    }
    return err == CU_OK;
}

/* The pod set w's last attempt could not place: the numbers of its
 * failure now, and which admitted workloads of the flavor would have to
 * finish or be preempted to open a fitting domain (removed from the
 * snapshot the fewest pods first, greedily, until it fits; then each put
 * back that is not needed). Usage is restored before returning. */
static cu_err analyze_topology(xwl *x)
{
    cu_engine *e = x->e;
    cu_arena *ar = x->ar;
    ewl *w = x->w;
    int ti = w->tas_wait - 1;
    size_t p = (size_t)w->tas_ps;
    if (ti < 0 || (size_t)ti >= e->tas.n || p >= w->nps)
        return CU_OK;
    const etas *s = &e->tas.items[ti];
    cu_tas *t = s->t;
    x->topo.on = 1;
    x->topo.flavor = s->flavor;
    x->topo.psname = w->ps[p].name;
    treq q = { .n = 1 };
    if (cu_assign_tas_request(ar, x->c, w, p, w->ps[p].count, &q.q[0]))
        return CU_ENOMEM;
    size_t other = w->nps, members = 1;
    for (size_t k = 0; q.q[0].group && k < w->nps; k++) {
        const char *g = w->obj->podsets[k].topo.podset_group_name;
        if (k != p && g && strcmp(g, q.q[0].group) == 0)
            other = k, members++;
    }
    if (members == 2) { /* else placed alone, as by the engine */
        q.n = 2;
        q.self = other < p;
        if (q.self)
            q.q[1] = q.q[0];
        if (cu_assign_tas_request(ar, x->c, w, other, w->ps[other].count, &q.q[1 - q.self]))
            return CU_ENOMEM;
    }
    cu_tas_result r;
    if (tplace(t, &q, &r)) {
        x->topo.fits_now = 1;
        cu_tas_result_free(&r);
        return CU_OK;
    }
    cu_buf b;
    cu_buf_init(&b, 64 * 1024);
    cu_assign_tas_numbers(e, x->c, ti, &r, &b);
    cu_tas_result_free(&r);
    /* without the leading "; " */
    x->topo.numbers = cu_arena_strdup(ar, b.len > 2 ? cu_buf_str(&b) + 2 : "");
    cu_buf_free(&b);
    /* the admitted workloads placed in this flavor */
    size_t n = 0;
    tcand *c = cu_arena_alloc(ar, (e->wls.n ? e->wls.n : 1) * sizeof(tcand));
    if (!c)
        return CU_ENOMEM;
    for (size_t i = 0; i < e->wls.n; i++) {
        ewl *v = e->wls.items[i];
        if (v->state != WL_ADMITTED || !v->topo)
            continue;
        int64_t pods = 0;
        for (size_t k = 0; k < v->nps; k++)
            if (v->topo[k].tas == ti)
                for (size_t d = 0; d < v->topo[k].ta.ndomains; d++)
                    pods += v->topo[k].ta.counts[d];
        if (pods)
            c[n++] = (tcand){ v, pods };
    }
    qsort(c, n, sizeof(*c), tcand_cmp);
    size_t nr = 0;
    int ok = 0;
    while (nr < n && !ok) {
        cu_engine_tas_apply(e, c[nr++].w, -1);
        ok = tplace(t, &q, NULL);
    }
    if (ok) {
        /* put back, newest removal first (never the last), what is not
         * needed; a kept one is marked by clearing its pointer */
        for (size_t k = nr - 1; k-- > 0;) {
            cu_engine_tas_apply(e, c[k].w, 1);
            if (tplace(t, &q, NULL))
                c[k].w = NULL;
            else
                cu_engine_tas_apply(e, c[k].w, -1);
        }
        if (tplace(t, &q, &r)) {
            for (size_t d = 0; d < r.ndomains; d++) {
                const char *h = r.domains[d].values[r.nlevels - 1];
                if (r.nlevels && strcmp(r.levels[r.nlevels - 1], CU_TAS_HOSTNAME) == 0) {
                    cu_strlist_add(ar, &x->topo.hosts, cu_arena_strdup(ar, h));
                    x->topo.other_pods += cu_engine_tas_bound_pods(e, h);
                }
            }
        }
        cu_tas_result_free(&r);
        for (size_t k = 0; k < nr; k++)
            if (c[k].w)
                cu_strlist_add(ar, &x->topo.blockers, c[k].w->key);
        qsort(x->topo.blockers.s, x->topo.blockers.n, sizeof(char *), cu_strp_cmp);
    } else {
        x->topo.never = 1;
    }
    for (size_t k = 0; k < nr; k++)
        if (c[k].w)
            cu_engine_tas_apply(e, c[k].w, 1);
    if (x->topo.never)
        cu_strlist_add(ar, &x->unblock,
                       cu_arena_printf(ar,
                                       "more free capacity on the nodes of flavor %s (pods that "
                                       "Kueue did not place hold them)",
                                       s->flavor));
    else if (x->topo.blockers.n)
        cu_strlist_add(ar, &x->unblock,
                       cu_arena_printf(ar,
                                       "%zu admitted workload%s of flavor %s finishing or "
                                       "preempted (see Topology)",
                                       x->topo.blockers.n, x->topo.blockers.n == 1 ? "" : "s",
                                       s->flavor));
    return CU_OK;
}

static ewl *find_wl(cu_engine *e, const char *key)
{
    char buf[600];
    if (!strchr(key, '/')) {
        snprintf(buf, sizeof buf, "default/%s", key);
        key = buf;
    }
    for (size_t i = 0; i < e->wls.n; i++)
        if (strcmp(e->wls.items[i]->key, key) == 0)
            return e->wls.items[i];
    return NULL;
}

cu_err cu_x_setup(cu_engine *e, const char *key, cu_arena *ar, xwl *x, cu_diag *d)
{
    memset(x, 0, sizeof(*x));
    if (!key || !*key) {
        if (d)
            cu_diag_error(d, "explain: a workload name (NAMESPACE/NAME) is required");
        return CU_EINVAL;
    }
    x->e = e;
    x->ar = ar;
    x->w = find_wl(e, key);
    if (!x->w) {
        if (d)
            cu_diag_error(d, "explain: workload %s%s not found", strchr(key, '/') ? "" : "default/",
                          key);
        return CU_ENOTFOUND;
    }
    x->v = cu_engine_workload_info_idx(e, x->w->idx);
    if (!x->v)
        return CU_ENOMEM;
    return build(x);
}
