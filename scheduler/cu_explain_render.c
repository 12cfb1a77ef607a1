/*
 * cu_explain_render.c - renders an explanation model (cu_explain.c) as text
 * or as a cu_node document.
 */
#include "cu_explain_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------- text ---------------- */

/* The inputs a transformation made pod set p's request of resource name
 * from (cu_exclude.h), or NULL. */
static const char *xform_from(const xwl *x, size_t p, const char *name)
{
    const cu_workload *o = x->w->obj;
    if (!o || p >= o->npodsets || !o->podsets[p].from)
        return NULL;
    const cu_podset *ps = &o->podsets[p];
    for (size_t i = 0; i < ps->requests.n; i++)
        if (strcmp(ps->requests.items[i].name, name) == 0)
            return ps->from[i];
    return NULL;
}

/* The request i of pod set p before the transformations when a Replace
 * transformation took it away (it is no longer requested), else NULL. */
static const cu_res *xform_replaced(const xwl *x, size_t p, size_t i)
{
    const cu_workload *o = x->w->obj;
    if (!o || p >= o->npodsets || !o->podsets[p].from || i >= o->podsets[p].pre_xform.n)
        return NULL;
    const cu_podset *ps = &o->podsets[p];
    const cu_res *r = &ps->pre_xform.items[i];
    for (size_t k = 0; k < ps->requests.n; k++)
        if (strcmp(ps->requests.items[k].name, r->name) == 0)
            return NULL;
    return r;
}

/* Under a pod set's requests: those a transformation made, and the inputs
 * it replaced, so a user sees why it needs a resource it never asked for. */
static void t_transformed(xwl *x, size_t p, cu_buf *b)
{
    const eps *ps = &x->w->ps[p];
    for (size_t r = 0; r < ps->nreq; r++) {
        const char *from = xform_from(x, p, cu_x_rname(x, ps->res[r]));
        if (from)
            cu_buf_printf(b, "    %s: %s (from %s via transformation)\n", cu_x_rname(x, ps->res[r]),
                          cu_x_qs(x, ps->res[r], ps->amt[r]), from);
    }
    const cu_workload *o = x->w->obj;
    size_t npre = o && p < o->npodsets ? o->podsets[p].pre_xform.n : 0;
    for (size_t i = 0; i < npre; i++) {
        const cu_res *r = xform_replaced(x, p, i);
        char q[32];
        if (r)
            cu_buf_printf(b, "    %s: %s replaced via transformation (not counted)\n", r->name,
                          cu_qty_format_res(r->name, r->milli, q, sizeof q));
    }
}

static void t_requests(xwl *x, cu_buf *b)
{
    cu_buf_puts(b, "\nRequests\n");
    for (size_t p = 0; p < x->w->nps; p++) {
        const eps *ps = &x->w->ps[p];
        cu_buf_printf(b, "  pod set %s: %d pod%s", ps->name, ps->count, ps->count == 1 ? "" : "s");
        if (!ps->nreq) {
            cu_buf_puts(b, ", no resource requests\n");
            continue;
        }
        cu_buf_puts(b, ps->count == 1 ? " (" : " x (");
        for (size_t r = 0; r < ps->nreq; r++)
            cu_buf_printf(b, "%s%s %s", r ? ", " : "", cu_x_rname(x, ps->res[r]),
                          cu_x_qs(x, ps->res[r], ps->amt[r]));
        cu_buf_puts(b, ")");
        if (ps->count != 1) {
            cu_buf_puts(b, " = ");
            for (size_t r = 0; r < ps->nreq; r++)
                cu_buf_printf(b, "%s%s %s", r ? ", " : "", cu_x_rname(x, ps->res[r]),
                              cu_x_qs(x, ps->res[r], cu_engine_mul_sat(ps->amt[r], ps->count)));
        }
        cu_buf_puts(b, "\n");
        t_transformed(x, p, b);
        if (ps->min < ps->count)
            cu_buf_printf(b, "    minCount %d: may be admitted with fewer pods\n", ps->min);
    }
}

static void t_res(xwl *x, cu_buf *b, const xres *r)
{
    const char *rn = cu_x_rname(x, r->res);
    int64_t val = cu_qty_sat_add(r->req, r->prev);
    const char *req =
        r->prev
            ? cu_arena_printf(x->ar, "%s (%s by earlier pod sets + %s)", cu_x_qs(x, r->res, val),
                              cu_x_qs(x, r->res, r->prev), cu_x_qs(x, r->res, r->req))
            : cu_x_qs(x, r->res, val);
    switch (r->state) {
    case XR_NO_QUOTA: cu_buf_printf(b, "    %s: no quota for it in this flavor\n", rn); return;
    case XR_FITS:
        cu_buf_printf(b, "    %s: fits (requested %s, available %s)\n", rn, req,
                      cu_x_qs(x, r->res, r->avail));
        return;
    case XR_OVER_MAX:
        cu_buf_printf(b, "    %s: requested %s, at most %s ever: over the maximum by %s\n", rn, req,
                      cu_x_qs(x, r->res, r->potential), cu_x_qs(x, r->res, r->more));
        if (r->pot_by)
            cu_buf_printf(b, "      limited by %s\n", r->pot_by);
        else
            cu_buf_printf(b, "      maximum: nominal %s, no cohort to borrow from\n",
                          cu_x_qs(x, r->res, r->nominal));
        return;
    default: break;
    }
    cu_buf_printf(b, "    %s: requested %s, available %s: %s more needed\n", rn, req,
                  cu_x_qs(x, r->res, cu_x_max64(0, r->avail)), cu_x_qs(x, r->res, r->more));
    cu_buf_printf(b, "      free in ClusterQueue %s: %s (nominal %s - used %s)\n", x->c->name,
                  cu_x_qs(x, r->res, r->free_own), cu_x_qs(x, r->res, r->nominal),
                  cu_x_qs(x, r->res, r->used));
    if (r->lent)
        cu_buf_printf(b, "      %s of that is in use by other ClusterQueues of the cohort\n",
                      cu_x_qs(x, r->res, r->lent));
    if (!r->has_cohort) {
        cu_buf_puts(b, "      borrowable: none (no cohort)\n");
        cu_buf_printf(b, "      limit: %s (nominal)\n", cu_x_qs(x, r->res, r->nominal));
        return;
    }
    cu_buf_printf(b, "      borrowable from the cohort: %s (limited by %s)\n",
                  cu_x_qs(x, r->res, r->borrowable), r->avail_by);
    if (r->has_blimit)
        cu_buf_printf(b, "      limit: %s (nominal %s + borrowingLimit %s)\n",
                      cu_x_qs(x, r->res, cu_qty_sat_add(r->nominal, r->blimit)),
                      cu_x_qs(x, r->res, r->nominal), cu_x_qs(x, r->res, r->blimit));
    else
        cu_buf_printf(b, "      limit: no borrowing limit (at most %s, limited by %s)\n",
                      cu_x_qs(x, r->res, r->potential), r->pot_by);
}

static const char *flv_state_text(const xflv *f)
{
    switch (f->state) {
    case XF_FITS: return "fits now";
    case XF_SHORT: return "not enough unused quota";
    case XF_OVER_MAX: return "request exceeds the maximum quota";
    case XF_NO_QUOTA: return "no quota for a requested resource";
    case XF_MISSING: return "ResourceFlavor not found";
    default: return "";
    }
}

static void t_flavors(xwl *x, cu_buf *b)
{
    for (size_t p = 0; p < x->nps; p++) {
        const xps *ps = &x->ps[p];
        for (size_t i = 0; i < ps->uncovered.n; i++)
            cu_buf_printf(
                b, "\nPod set %s: %s is not covered by any resourceGroup of ClusterQueue %s\n",
                ps->name, ps->uncovered.s[i], x->c->name);
        for (size_t k = 0; k < ps->ngroups; k++) {
            const xgroup *g = &ps->g[k];
            cu_buf_printf(b, "\nFlavors for pod set %s (", ps->name);
            for (size_t r = 0; r < g->nres; r++)
                cu_buf_printf(b, "%s%s", r ? ", " : "", g->res[r]);
            cu_buf_puts(b, "), in order\n");
            for (size_t f = 0; f < g->nflv; f++) {
                const xflv *xf = &g->flv[f];
                if (xf->state == XF_TAINT) {
                    const cu_taint *t = xf->taint;
                    cu_buf_printf(b, "  %s: taint %s%s%s:%s not tolerated\n", xf->name,
                                  t->key ? t->key : "", t->value && *t->value ? "=" : "",
                                  t->value ? t->value : "", t->effect);
                    continue;
                }
                if (xf->state == XF_AFFINITY) {
                    cu_buf_printf(b, "  %s: node labels don't match\n    %s\n", xf->name,
                                  xf->mismatch);
                    continue;
                }
                cu_buf_printf(b, "  %s: %s\n", xf->name, flv_state_text(xf));
                for (size_t r = 0; r < xf->nres; r++)
                    t_res(x, b, &xf->res[r]);
            }
            if (g->fits >= 0)
                cu_buf_printf(b, "  fits now in flavor %s\n", g->flv[g->fits].name);
            else if (g->would >= 0)
                cu_buf_printf(b, "  would use flavor %s once quota is free\n",
                              g->flv[g->would].name);
            else
                cu_buf_puts(b, "  no flavor can ever fit it\n");
        }
    }
}

static void t_preemption(xwl *x, cu_buf *b)
{
    const cu_cluster_queue *q = x->c->obj;
    cu_buf_puts(b, "\nPreemption\n");
    if (x->victims.n) {
        cu_buf_printf(b, "  waiting for %zu preempted workload%s to release quota:\n", x->victims.n,
                      x->victims.n == 1 ? "" : "s");
        for (size_t i = 0; i < x->victims.n; i++)
            cu_buf_printf(b, "    %s\n", x->victims.s[i]);
        return;
    }
    if (!x->pre_configured)
        cu_buf_printf(
            b, "  preemption not configured (withinClusterQueue: %s, reclaimWithinCohort: %s)\n",
            cu_x_policy_name(q->preemption.within_cq), cu_x_policy_name(q->preemption.reclaim));
    else
        cu_buf_printf(
            b, "  policy: withinClusterQueue %s, reclaimWithinCohort %s, borrowWithinCohort %s\n",
            cu_x_policy_name(q->preemption.within_cq), cu_x_policy_name(q->preemption.reclaim),
            cu_x_policy_name(q->preemption.borrow_policy));
    if (x->fits_now) {
        cu_buf_puts(b, "  not needed: it fits now\n");
        return;
    }
    if (x->topo.on) {
        cu_buf_puts(b, "  its quota fits; what holds the nodes: see Topology\n");
        return;
    }
    if (!x->all_chosen) {
        cu_buf_puts(b, "  cannot help: no flavor can ever fit it\n");
        return;
    }
    if (!x->pre_configured)
        return;
    if (x->over_nominal) {
        cu_buf_printf(b, "  not possible: %s\n", x->over_nominal);
        return;
    }
    if (!x->n_within && !x->n_reclaim) {
        cu_buf_puts(
            b,
            "  no candidates: none of the workloads holding that quota may be preempted for it\n");
        return;
    }
    cu_buf_puts(b, "  candidates:");
    if (x->n_within)
        cu_buf_printf(b, " %d workload%s of %s priority in ClusterQueue %s", x->n_within,
                      x->n_within == 1 ? "" : "s",
                      q->preemption.within_cq == CU_PP_LOWER_PRIORITY ? "lower"
                                                                      : "lower (or equal, newer)",
                      x->c->name);
    if (x->n_reclaim)
        cu_buf_printf(b, "%s %d workload%s in ClusterQueues of the cohort that borrow",
                      x->n_within ? "," : "", x->n_reclaim, x->n_reclaim == 1 ? "" : "s");
    cu_buf_puts(b, "\n");
    if (!x->targets.n) {
        cu_buf_printf(b, "  preempting %s would not free enough quota\n",
                      x->n_within + x->n_reclaim == 1 ? "it" : "all of them");
        return;
    }
    cu_buf_printf(b, "  preempting %zu would make room:\n", x->targets.n);
    for (size_t i = 0; i < x->targets.n; i++)
        cu_buf_printf(b, "    %s\n", x->targets.s[i]);
}

static void t_topology(xwl *x, cu_buf *b)
{
    cu_buf_printf(b, "\nTopology (flavor %s)\n", x->topo.flavor);
    if (x->topo.fits_now) {
        cu_buf_printf(b, "  pod set %s is placed now: the next attempt admits it\n",
                      x->topo.psname);
        return;
    }
    cu_buf_printf(b, "  pod set %s: %s\n", x->topo.psname, x->topo.numbers);
    if (x->topo.never) {
        cu_buf_printf(b, "  it does not fit even with every admitted workload of flavor %s gone\n",
                      x->topo.flavor);
        return;
    }
    cu_buf_printf(b, "  admitted workloads that would have to finish or be preempted first:\n");
    for (size_t i = 0; i < x->topo.blockers.n; i++)
        cu_buf_printf(b, "    %s\n", x->topo.blockers.s[i]);
    if (x->topo.hosts.n) {
        cu_buf_puts(b, "  it would get ");
        for (size_t i = 0; i < x->topo.hosts.n; i++)
            cu_buf_printf(b, "%s%s", i ? ", " : "", x->topo.hosts.s[i]);
        cu_buf_printf(b, "; %lld pod%s that Kueue did not place also run%s there\n",
                      (long long)x->topo.other_pods, x->topo.other_pods == 1 ? "" : "s",
                      x->topo.other_pods == 1 ? "s" : "");
    }
}

static void t_holds(xwl *x, cu_buf *b)
{
    const cu_wl_info *v = x->v;
    char ts[40];
    cu_time_format(v->admitted_at_ms, ts, sizeof ts);
    cu_buf_printf(b, "  holds quota in ClusterQueue %s since %s\n",
                  v->cluster_queue ? v->cluster_queue : "?", ts);
    if (x->w->evicting)
        cu_buf_printf(b, "  evicted (%s): holds its quota until its pods stop\n",
                      v->evicted_reason ? v->evicted_reason : "Evicted");
    if (!v->checks_pending)
        return;
    cu_buf_puts(b, "  not admitted yet: waiting for AdmissionCheck(s)");
    for (size_t i = 0; i < v->nchecks; i++) {
        const cu_acstate *k = v->obj ? cu_workload_check(v->obj, v->checks[i]) : NULL;
        cu_buf_printf(b, "%s %s (%s)", i ? "," : "", v->checks[i],
                      cu_check_state_name(k ? k->state : CU_CHECK_PENDING));
    }
    cu_buf_puts(b, "\n  it is Admitted, and its Job starts, once all of them are Ready\n");
}

static void t_admission(xwl *x, cu_buf *b)
{
    const cu_wl_info *v = x->v;
    cu_buf_puts(b, "\nAdmission\n");
    for (size_t p = 0; p < v->npsa; p++) {
        const cu_psa_info *ps = &v->psa[p];
        int same = 1;
        for (size_t i = 1; i < ps->n; i++)
            same &= strcmp(ps->flavors[i], ps->flavors[0]) == 0;
        cu_buf_printf(b, "  pod set %s: %d pod%s", ps->name, ps->count, ps->count == 1 ? "" : "s");
        if (same && ps->n)
            cu_buf_printf(b, " in flavor %s", ps->flavors[0]);
        cu_buf_puts(b, ps->n ? ": " : "");
        for (size_t i = 0; i < ps->n; i++) {
            char q[48];
            cu_buf_printf(b, "%s%s %s", i ? ", " : "", ps->resources[i],
                          cu_qty_format_res(ps->resources[i], ps->usage[i], q, sizeof q));
            if (!same)
                cu_buf_printf(b, " (%s)", ps->flavors[i]);
        }
        cu_buf_puts(b, "\n");
        const cu_topo_assign *ta = ps->topo;
        for (size_t d = 0; ta && d < ta->ndomains; d++) {
            cu_buf_puts(b, d ? ", " : "    topology: ");
            for (size_t l = 0; l < ta->nlevels; l++)
                cu_buf_printf(b, "%s%s", l ? "/" : "", ta->values[d * ta->nlevels + l]);
            cu_buf_printf(b, " %d", (int)ta->counts[d]);
        }
        if (ta && ta->ndomains)
            cu_buf_puts(b, "\n");
    }
}

static void render_text(xwl *x, cu_buf *b)
{
    const cu_wl_info *v = x->v;
    cu_buf_printf(b, "Workload %s: %s", x->w->key, x->state);
    if (!strcmp(x->state, "pending") && v->reason && strcmp(v->reason, "Pending") != 0)
        cu_buf_printf(b, " (%s)", v->reason);
    cu_buf_puts(b, "\n");
    if (!strcmp(x->state, "pending") && v->message)
        cu_buf_printf(b, "  message: %s\n", v->message);
    int holds = !strcmp(x->state, "admitted") || !strcmp(x->state, "evicting") ||
                !strcmp(x->state, "reserved");
    if (holds)
        t_holds(x, b);
    cu_buf_puts(b, "\nQueue\n");
    if (x->chain.n) {
        cu_buf_puts(b, "  ");
        for (size_t i = 0; i < x->chain.n; i++)
            cu_buf_printf(b, "%s%s", i ? " -> " : "", x->chain.s[i]);
        cu_buf_puts(b, "\n");
    } else {
        cu_buf_puts(b, "  no LocalQueue (spec.queueName is not set)\n");
    }
    if (x->lq && !x->lq->active)
        cu_buf_printf(b, "  LocalQueue %s: stopped (stopPolicy %s)\n", x->lq->key,
                      cu_x_stop_name(x->lq->obj->stop_policy));
    if (x->c) {
        const char *st = "active";
        if (!x->c->active && x->c->obj->stop_policy != CU_STOP_NONE && !x->c->bad) {
            st = cu_arena_printf(x->ar, "inactive, stopped (stopPolicy %s)",
                                 cu_x_stop_name(x->c->obj->stop_policy));
        } else if (!x->c->active) {
            const char *m = x->c->message ? x->c->message : "";
            const char *pre = "Can't admit new workloads: ";
            if (!strncmp(m, pre, strlen(pre)))
                m += strlen(pre);
            st = cu_arena_printf(x->ar, "inactive, %s", m);
        }
        cu_buf_printf(b, "  ClusterQueue %s: %s, %s\n", x->c->name, st,
                      x->c->obj->queueing == CU_STRICT_FIFO ? "StrictFIFO" : "BestEffortFIFO");
    }
    cu_buf_printf(b, "  priority %d\n", (int)x->w->qi.prio);
    if (x->queued) {
        cu_buf_printf(b, "  position %d in ClusterQueue %s", x->ahead, x->c->name);
        if (!x->ahead)
            cu_buf_puts(b, " (nothing ahead of it)");
        else
            cu_buf_printf(b, " (%d ahead of it%s)", x->ahead,
                          x->ahead_inadm
                              ? cu_arena_printf(x->ar, ", %d of them set aside as inadmissible",
                                                x->ahead_inadm)
                              : "");
        cu_buf_printf(b, ", %d in LocalQueue %s\n", x->lq_ahead, x->lq->key);
        if (x->inadmissible)
            cu_buf_puts(
                b,
                "  set aside as inadmissible: tried again when quota is freed in its cohort tree\n");
        if (x->blocked_by)
            cu_buf_printf(b, "  waits behind the head %s, which does not fit (StrictFIFO)\n",
                          x->blocked_by->key);
    }
    if (holds)
        t_admission(x, b);
    if (!strcmp(x->state, "pending")) {
        t_requests(x, b);
        if (x->not_analyzed)
            cu_buf_printf(b, "\nFlavors\n  %s\n", x->not_analyzed);
        if (x->analyzed) {
            t_flavors(x, b);
            t_preemption(x, b);
            if (x->topo.on)
                t_topology(x, b);
        }
        if (x->unblock.n) {
            cu_buf_puts(b, "\nTo unblock\n");
            for (size_t i = 0; i < x->unblock.n; i++)
                cu_buf_printf(b, "  - %s\n", x->unblock.s[i]);
        }
    }
}

cu_err cu_engine_explain(cu_engine *e, const char *key, cu_buf *out, cu_diag *d)
{
    cu_arena ar;
    cu_arena_init(&ar, 16 * 1024);
    xwl x;
    cu_err err = cu_x_setup(e, key, &ar, &x, d);
    if (!err) {
        render_text(&x, out);
        if (out->failed)
            err = CU_ENOMEM;
    }
    cu_arena_free(&ar);
    return err;
}

/* ---------------- document ---------------- */

typedef struct dctx {
    cu_arena *a;
    int oom;
} dctx;

static cu_node *dstr(dctx *c, const char *s)
{
    cu_node *n = s ? cu_node_new_str(c->a, s) : cu_node_new_null(c->a);
    if (!n)
        c->oom = 1;
    return n;
}

static cu_node *dint(dctx *c, int64_t v)
{
    cu_node *n = cu_node_new_int(c->a, v);
    if (!n)
        c->oom = 1;
    return n;
}

static void dset(dctx *c, cu_node *m, const char *k, cu_node *v)
{
    if (!m || !v || cu_node_set(c->a, m, k, v))
        c->oom = 1;
}

static void dpush(dctx *c, cu_node *s, cu_node *v)
{
    if (!s || !v || cu_node_push(c->a, s, v))
        c->oom = 1;
}

static cu_node *dmap(dctx *c)
{
    cu_node *n = cu_node_new_map(c->a);
    if (!n)
        c->oom = 1;
    return n;
}

static cu_node *dseq(dctx *c)
{
    cu_node *n = cu_node_new_seq(c->a);
    if (!n)
        c->oom = 1;
    return n;
}

static cu_node *dlist(dctx *c, const cu_strlist *l)
{
    cu_node *s = dseq(c);
    for (size_t i = 0; i < l->n; i++)
        dpush(c, s, dstr(c, l->s[i]));
    return s;
}

static const char *xr_state(int s)
{
    switch (s) {
    case XR_FITS: return "Fits";
    case XR_SHORT: return "InsufficientUnusedQuota";
    case XR_OVER_MAX: return "ExceedsMaxQuota";
    default: return "NoQuota";
    }
}

static const char *xf_state(int s)
{
    switch (s) {
    case XF_FITS: return "Fits";
    case XF_SHORT: return "InsufficientUnusedQuota";
    case XF_OVER_MAX: return "ExceedsMaxQuota";
    case XF_NO_QUOTA: return "NoQuota";
    case XF_MISSING: return "FlavorNotFound";
    case XF_TAINT: return "UntoleratedTaint";
    default: return "NodeAffinityMismatch";
    }
}

static cu_node *d_res(dctx *c, xwl *x, const xres *r)
{
    cu_node *m = dmap(c);
    dset(c, m, "resource", dstr(c, cu_x_rname(x, r->res)));
    dset(c, m, "state", dstr(c, xr_state(r->state)));
    dset(c, m, "requested", dstr(c, cu_x_qs(x, r->res, cu_qty_sat_add(r->req, r->prev))));
    if (r->state == XR_NO_QUOTA)
        return m;
    if (r->prev)
        dset(c, m, "earlierPodSets", dstr(c, cu_x_qs(x, r->res, r->prev)));
    dset(c, m, "nominal", dstr(c, cu_x_qs(x, r->res, r->nominal)));
    dset(c, m, "used", dstr(c, cu_x_qs(x, r->res, r->used)));
    dset(c, m, "free", dstr(c, cu_x_qs(x, r->res, r->free_own)));
    dset(c, m, "borrowable", dstr(c, cu_x_qs(x, r->res, r->borrowable)));
    dset(c, m, "available", dstr(c, cu_x_qs(x, r->res, cu_x_max64(0, r->avail))));
    dset(c, m, "borrowingLimit",
         r->has_blimit ? dstr(c, cu_x_qs(x, r->res, r->blimit)) : dstr(c, NULL));
    dset(c, m, "maximum", dstr(c, cu_x_qs(x, r->res, r->potential)));
    if (r->state != XR_FITS)
        dset(c, m, "missing", dstr(c, cu_x_qs(x, r->res, r->more)));
    return m;
}

static cu_node *render_doc(dctx *c, xwl *x)
{
    const cu_wl_info *v = x->v;
    cu_node *root = dmap(c);
    dset(c, root, "workload", dstr(c, x->w->key));
    dset(c, root, "status", dstr(c, x->state));
    dset(c, root, "reason", dstr(c, v->reason));
    dset(c, root, "message", dstr(c, v->message));
    dset(c, root, "priority", dint(c, x->w->qi.prio));
    cu_node *q = dmap(c);
    dset(c, q, "chain", dlist(c, &x->chain));
    dset(c, q, "localQueue", dstr(c, x->lq ? x->lq->key : NULL));
    dset(c, q, "clusterQueue", dstr(c, x->cq_name));
    if (x->c) {
        dset(c, q, "active", cu_node_new_bool(c->a, x->c->active));
        dset(c, q, "strategy",
             dstr(c, x->c->obj->queueing == CU_STRICT_FIFO ? "StrictFIFO" : "BestEffortFIFO"));
    }
    if (x->queued) {
        dset(c, q, "position", dint(c, x->ahead));
        dset(c, q, "positionInLocalQueue", dint(c, x->lq_ahead));
        dset(c, q, "inadmissible", cu_node_new_bool(c->a, x->inadmissible));
        dset(c, q, "blockedBy", dstr(c, x->blocked_by ? x->blocked_by->key : NULL));
    }
    dset(c, root, "queue", q);
    if (v->nchecks) {
        cu_node *acs = dseq(c);
        for (size_t i = 0; i < v->nchecks; i++) {
            const cu_acstate *k = v->obj ? cu_workload_check(v->obj, v->checks[i]) : NULL;
            cu_node *m = dmap(c);
            dset(c, m, "name", dstr(c, v->checks[i]));
            dset(c, m, "state", dstr(c, cu_check_state_name(k ? k->state : CU_CHECK_PENDING)));
            dset(c, m, "message", dstr(c, k ? k->message : NULL));
            dpush(c, acs, m);
        }
        dset(c, root, "admissionChecks", acs);
    }
    if (x->analyzed) {
        cu_node *pss = dseq(c);
        for (size_t p = 0; p < x->nps; p++) {
            const xps *ps = &x->ps[p];
            const eps *ep = &x->w->ps[p];
            cu_node *pm = dmap(c);
            dset(c, pm, "name", dstr(c, ps->name));
            dset(c, pm, "count", dint(c, ps->count));
            cu_node *req = dmap(c);
            for (size_t r = 0; r < ep->nreq; r++)
                dset(c, req, cu_x_rname(x, ep->res[r]),
                     dstr(c, cu_x_qs(x, ep->res[r], ep->amt[r])));
            dset(c, pm, "perPod", req);
            if (x->w->obj && p < x->w->obj->npodsets && x->w->obj->podsets[p].from) {
                cu_node *xs = dseq(c);
                for (size_t r = 0; r < ep->nreq; r++) {
                    const char *from = xform_from(x, p, cu_x_rname(x, ep->res[r]));
                    if (!from)
                        continue;
                    cu_node *xm = dmap(c);
                    dset(c, xm, "resource", dstr(c, cu_x_rname(x, ep->res[r])));
                    dset(c, xm, "perPod", dstr(c, cu_x_qs(x, ep->res[r], ep->amt[r])));
                    dset(c, xm, "from", dstr(c, from));
                    dpush(c, xs, xm);
                }
                dset(c, pm, "transformed", xs);
                cu_node *rs = dseq(c);
                for (size_t i = 0; i < x->w->obj->podsets[p].pre_xform.n; i++) {
                    const cu_res *r = xform_replaced(x, p, i);
                    char rq[32];
                    if (!r)
                        continue;
                    cu_node *rm = dmap(c);
                    dset(c, rm, "resource", dstr(c, r->name));
                    dset(c, rm, "perPod",
                         dstr(c, cu_arena_strdup(
                                     x->ar, cu_qty_format_res(r->name, r->milli, rq, sizeof rq))));
                    dpush(c, rs, rm);
                }
                dset(c, pm, "replaced", rs);
            }
            dset(c, pm, "uncovered", dlist(c, &ps->uncovered));
            cu_node *gs = dseq(c);
            for (size_t k = 0; k < ps->ngroups; k++) {
                const xgroup *g = &ps->g[k];
                cu_node *gm = dmap(c);
                cu_node *fs = dseq(c);
                for (size_t f = 0; f < g->nflv; f++) {
                    const xflv *xf = &g->flv[f];
                    cu_node *fm = dmap(c);
                    dset(c, fm, "name", dstr(c, xf->name));
                    dset(c, fm, "state", dstr(c, xf_state(xf->state)));
                    if (xf->taint)
                        dset(c, fm, "taint",
                             dstr(c, cu_arena_printf(x->ar, "%s=%s:%s",
                                                     xf->taint->key ? xf->taint->key : "",
                                                     xf->taint->value ? xf->taint->value : "",
                                                     xf->taint->effect)));
                    if (xf->mismatch)
                        dset(c, fm, "mismatch", dstr(c, xf->mismatch));
                    if (xf->nres) {
                        cu_node *rs = dseq(c);
                        for (size_t r = 0; r < xf->nres; r++)
                            dpush(c, rs, d_res(c, x, &xf->res[r]));
                        dset(c, fm, "resources", rs);
                    }
                    dpush(c, fs, fm);
                }
                dset(c, gm, "flavors", fs);
                dset(c, gm, "fitsNow", dstr(c, g->fits >= 0 ? g->flv[g->fits].name : NULL));
                dset(c, gm, "wouldUse", dstr(c, g->would >= 0 ? g->flv[g->would].name : NULL));
                dpush(c, gs, gm);
            }
            dset(c, pm, "resourceGroups", gs);
            dpush(c, pss, pm);
        }
        dset(c, root, "podSets", pss);
        cu_node *pm = dmap(c);
        const cu_cluster_queue *cq = x->c->obj;
        dset(c, pm, "withinClusterQueue", dstr(c, cu_x_policy_name(cq->preemption.within_cq)));
        dset(c, pm, "reclaimWithinCohort", dstr(c, cu_x_policy_name(cq->preemption.reclaim)));
        dset(c, pm, "borrowWithinCohort", dstr(c, cu_x_policy_name(cq->preemption.borrow_policy)));
        dset(c, pm, "configured", cu_node_new_bool(c->a, x->pre_configured));
        dset(c, pm, "notPossible", dstr(c, x->over_nominal));
        dset(c, pm, "candidates", dint(c, x->n_within + x->n_reclaim));
        dset(c, pm, "waitingFor", dlist(c, &x->victims));
        dset(c, pm, "targets", dlist(c, &x->targets));
        dset(c, root, "preemption", pm);
        if (x->topo.on) {
            cu_node *tm = dmap(c);
            dset(c, tm, "flavor", dstr(c, x->topo.flavor));
            dset(c, tm, "podSet", dstr(c, x->topo.psname));
            dset(c, tm, "placedNow", cu_node_new_bool(c->a, x->topo.fits_now));
            dset(c, tm, "why", dstr(c, x->topo.numbers));
            dset(c, tm, "fitsWithNoAdmittedWorkload", cu_node_new_bool(c->a, !x->topo.never));
            dset(c, tm, "mustFinishOrBePreempted", dlist(c, &x->topo.blockers));
            dset(c, tm, "wouldGet", dlist(c, &x->topo.hosts));
            dset(c, tm, "otherPods", dint(c, x->topo.other_pods));
            dset(c, root, "topology", tm);
        }
    } else if (x->not_analyzed) {
        dset(c, root, "notEvaluated", dstr(c, x->not_analyzed));
    }
    dset(c, root, "unblock", dlist(c, &x->unblock));
    return root;
}

cu_err cu_engine_explain_doc(cu_engine *e, const char *key, cu_arena *a, cu_node **out, cu_diag *d)
{
    cu_arena ar;
    cu_arena_init(&ar, 16 * 1024);
    xwl x;
    *out = NULL;
    cu_err err = cu_x_setup(e, key, &ar, &x, d);
    if (!err) {
        dctx c = { a, 0 };
        cu_node *root = render_doc(&c, &x);
        if (c.oom || !root)
            err = CU_ENOMEM;
        else
            *out = root;
    }
    cu_arena_free(&ar);
    return err;
}
