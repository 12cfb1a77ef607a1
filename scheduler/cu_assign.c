/*
 * cu_assign.c - flavor assignment (Kueue's FlavorAssigner): the eligibility
 * of a flavor (taints, node affinity), the choice of flavors per resource
 * group, and nomination with partial admission. Asks the preemption oracle
 * whether preempting would make room.
 *
 * Per-round memory comes from e->cycle.
 */
#include "cu_assign_int.h"
#include "cu_hash.h"
#include "cu_match.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------- small helpers ---------------- */

void cu_strlist_add(cu_arena *a, cu_strlist *l, const char *s)
{
    if (!s)
        return;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        const char **p = cu_arena_alloc(a, cap * sizeof(*p));
        if (!p)
            return;
        if (l->n)
            memcpy(p, l->s, l->n * sizeof(*p));
        l->s = p;
        l->cap = cap;
    }
    l->s[l->n++] = s;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static const char *qty(cu_engine *e, int res, int64_t v, char *buf, size_t n)
{
    return cu_qty_format_res(e->res_names.items[res], v, buf, n);
}

/* ---------------- eligibility of a flavor ---------------- */

/* Returns the first NoSchedule/NoExecute taint of f that neither the pod
 * set nor the flavor's own tolerations tolerate, or NULL. */
const cu_taint *cu_flavor_untolerated(const cu_resource_flavor *f, const cu_podset *ps)
{
    for (size_t i = 0; i < f->ntaints; i++) {
        const cu_taint *x = &f->taints[i];
        if (cu_match_taint_filters(x) && !cu_match_tolerated(ps->tols, ps->ntols, x) &&
            !cu_match_tolerated(f->tols, f->ntols, x))
            return x;
    }
    return NULL;
}

int cu_group_has_key(const egroup *g, const char *key)
{
    for (size_t i = 0; i < g->nkeys; i++)
        if (strcmp(g->keys[i], key) == 0)
            return 1;
    return 0;
}

/* Kueue's flavorSelector: the pod's nodeSelector and required node
 * affinity, restricted to the label keys the group's flavors use, must
 * match the flavor's nodeLabels. */
static int affinity_matches(const egroup *g, const cu_podset *ps, const cu_kvs *labels)
{
    for (size_t i = 0; i < ps->node_selector.n; i++) {
        const cu_kv *kv = &ps->node_selector.items[i];
        if (!cu_group_has_key(g, kv->key))
            continue;
        const char *v = cu_kvs_get(labels, kv->key);
        if (!v || strcmp(v, kv->value) != 0)
            return 0;
    }
    if (!ps->nterms)
        return 1;
    /* a term left with no relevant requirement makes the affinity match
     * anything (terms are ORed) */
    for (size_t t = 0; t < ps->nterms; t++) {
        size_t relevant = 0;
        for (size_t r = 0; r < ps->terms[t].n; r++)
            relevant += (size_t)cu_group_has_key(g, ps->terms[t].reqs[r].key);
        if (!relevant)
            return 1;
    }
    for (size_t t = 0; t < ps->nterms; t++) {
        int all = 1;
        for (size_t r = 0; r < ps->terms[t].n && all; r++) {
            const cu_selreq *q = &ps->terms[t].reqs[r];
            if (cu_group_has_key(g, q->key))
                all = cu_match_selreq_labels(q, labels);
        }
        if (all)
            return 1;
    }
    return 0;
}

/* ---------------- Topology-Aware Scheduling ---------------- */

/* Kueue's IsExplicitlyRequestingTAS. */
static int tas_explicit(const cu_podset *ps)
{
    const cu_topo_request *r = &ps->topo;
    return r->present && (r->has_unconstrained || r->required || r->preferred ||
                          r->slice_required || r->has_slice_size);
}

/* Kueue's isTASRequested: 1 explicitly, 2 implied (every flavor of a
 * TAS-only ClusterQueue is a TAS flavor), 0 not. */
static int tas_requested(const ecq *c, const cu_podset *ps)
{
    if (tas_explicit(ps))
        return 1;
    return c->tas_only ? 2 : 0;
}

static int tas_level_known(const etas *s, const char *level)
{
    for (size_t i = 0; i < s->nlevels; i++)
        if (strcmp(s->levels[i], level) == 0)
            return 1;
    return 0;
}

/* Kueue's HasLevel: the request's level (required, preferred, the highest
 * for slices alone, the lowest for unconstrained) and its slice level
 * (the lowest by default) are levels of the flavor's Topology. */
static int tas_has_level(const etas *s, const cu_topo_request *r)
{
    const char *lowest = s->levels[s->nlevels - 1], *main;
    if (r->required)
        main = r->required;
    else if (r->preferred)
        main = r->preferred;
    else if (r->slice_required)
        main = s->levels[0];
    else if (r->has_unconstrained && r->unconstrained)
        main = lowest;
    else
        return 0;
    return tas_level_known(s, main) &&
           tas_level_known(s, r->slice_required ? r->slice_required : lowest);
}

/* Kueue's checkPodSetAndFlavorMatchForTAS: why flavor fl of group g does
 * not suit pod set ps (in e->cycle), or NULL. A pod set that asks for TAS
 * takes only TAS flavors with its level (a non-TAS flavor only for
 * resources the group does not cover); one that does not never takes a
 * TAS flavor. */
static const char *tas_mismatch(cu_engine *e, const ecq *c, const egroup *g, const cu_podset *ps,
                                const eflavor *fl)
{
    cu_arena *ar = &e->cycle;
    int req = tas_requested(c, ps);
    if (req == 2)
        return NULL;
    if (!req)
        return fl->obj->topology_name
                   ? cu_arena_printf(ar, "Flavor \"%s\" supports only TopologyAwareScheduling",
                                     fl->name)
                   : NULL;
    if (!fl->obj->topology_name) {
        for (size_t r = 0; r < ps->requests.n; r++) {
            int rid = cu_strmap_get(&e->res_map, ps->requests.items[r].name);
            for (size_t k = 0; rid >= 0 && k < g->nres; k++)
                if (g->res[k] == rid)
                    return cu_arena_printf(
                        ar, "Flavor \"%s\" does not support TopologyAwareScheduling", fl->name);
        }
        return NULL;
    }
    if (fl->tas < 0)
        return cu_arena_printf(ar, "Flavor \"%s\" information missing in TAS cache", fl->name);
    if (!tas_has_level(&e->tas.items[fl->tas], &ps->topo))
        return cu_arena_printf(ar, "Flavor \"%s\" does not contain the requested level", fl->name);
    return NULL;
}

/* ---------------- flavor assignment ---------------- */

typedef struct item {
    int res;
    int64_t amt;
    int flv;
} item;

static int64_t acc_get(const asg *a, int fr)
{
    for (size_t i = 0; i < a->nuse; i++)
        if (a->fr[i] == fr)
            return a->amt[i];
    return 0;
}

static void acc_add(asg *a, int fr, int64_t v)
{
    for (size_t i = 0; i < a->nuse; i++)
        if (a->fr[i] == fr) {
            a->amt[i] = cu_qty_sat_add(a->amt[i], v);
            return;
        }
    a->fr[a->nuse] = fr;
    a->amt[a->nuse++] = v;
}

/* Kueue's canPreemptWhileBorrowing. */
static int can_preempt_while_borrowing(const cu_engine *e, const ecq *c)
{
    return c->obj->preemption.borrow_policy != CU_PP_NEVER ||
           (e->opts.fair_sharing && c->obj->preemption.reclaim != CU_PP_NEVER);
}

int cu_assign_may_preempt(const cu_engine *e, const ecq *c, int fr, int64_t val, int may_reclaim)
{
    /* withinClusterQueue plays no part: a workload whose request is over
     * its ClusterQueue's nominal quota does not preempt in its own queue
     * either, even if evicting a lower-priority workload would let it in
     * by borrowing (Kueue's fitsResourceQuota). */
    return val <= c->node->nominal[fr] || may_reclaim || can_preempt_while_borrowing(e, c);
}

/* Kueue's shouldTryNextFlavor. */
static int try_next_flavor(const ecq *c, int mode, int borrows)
{
    cu_fung wb = c->obj->fungibility.when_can_borrow;
    cu_fung wp = c->obj->fungibility.when_can_preempt;
    return mode == MODE_NOFIT || mode == MODE_NOCAND ||
           ((mode == MODE_PREEMPT || mode == MODE_RECLAIM) && wp == CU_FUNG_TRY_NEXT_FLAVOR) ||
           (borrows && wb == CU_FUNG_TRY_NEXT_FLAVOR);
}

/* Kueue's isPreferred: is (mode, borrow) better than (bmode, bborrow)? */
static int preferred(const ecq *c, int mode, int borrow, int bmode, int bborrow)
{
    if (mode == MODE_NOFIT)
        return 0;
    if (bmode == MODE_NOFIT)
        return 1;
    if ((mode == MODE_NOCAND) != (bmode == MODE_NOCAND))
        return mode != MODE_NOCAND;
    if (c->obj->fungibility.preference == CU_PREF_PREEMPTION_OVER_BORROWING) {
        if (borrow != bborrow)
            return borrow < bborrow;
        return mode > bmode;
    }
    if (mode != bmode)
        return mode > bmode;
    return borrow < bborrow;
}

/* Why flavor fl of group g suits none of the npso pod sets pso (the first
 * that it does not suit, checked as Kueue's checkFlavorForPodSets: TAS,
 * taints, then node affinity), or NULL. */
static const char *flavor_mismatch(cu_engine *e, const ecq *c, const egroup *g,
                                   const cu_podset *const *pso, size_t npso, const eflavor *fl)
{
    cu_arena *ar = &e->cycle;
    for (size_t k = 0; k < npso; k++) {
        const char *tm = tas_mismatch(e, c, g, pso[k], fl);
        if (tm)
            return tm;
        const cu_taint *t = cu_flavor_untolerated(fl->obj, pso[k]);
        if (t)
            return cu_arena_printf(ar, "untolerated taint {%s %s %s <nil>} in flavor %s",
                                   t->key ? t->key : "", t->value ? t->value : "", t->effect,
                                   fl->name);
        if (!affinity_matches(g, pso[k], &fl->obj->node_labels))
            return cu_arena_printf(ar, "flavor %s doesn't match node affinity", fl->name);
    }
    return NULL;
}

/* Finds the flavor of group g for the items of one unit (a pod set, or
 * the npso pod sets of a pod-set group, their requests summed), trying the
 * flavors from index start on (Kueue's NextFlavorToTryForPodSetResource).
 * Returns the flavor index within the group, or -1; *mode_out is the
 * chosen flavor's mode, *tried_out the flavor the search stopped at
 * (FMEM_LAST if it went to the last one). Reasons for flavors that do not
 * fit are appended to reasons. */
static int find_flavor(cu_engine *e, ecq *c, ewl *w, const egroup *g, const cu_podset *const *pso,
                       size_t npso, item *items, size_t nitems, asg *a, cu_strlist *reasons,
                       int *reason_code, int *borrow_out, int *mode_out, size_t start,
                       int16_t *tried_out)
{
    cu_arena *ar = &e->cycle;
    char b1[40], b2[40], b3[40];
    int best = -1, best_borrow = 0, best_maxborrow = 0, best_rep = MODE_NOFIT;
    int best_mode = MODE_NOFIT;
    int least = R_INADMISSIBLE + 1;
    *tried_out = FMEM_LAST;
    for (size_t fi = start; fi < g->nflv; fi++) {
        const eflavor *fl = &e->flavors.items[g->flv[fi]];
        if (!fl->obj) {
            cu_strlist_add(ar, reasons, cu_arena_printf(ar, "flavor %s not found", fl->name));
            if (R_NO_MATCHING_FLAVOR < least)
                least = R_NO_MATCHING_FLAVOR;
            continue;
        }
        const char *why = flavor_mismatch(e, c, g, pso, npso, fl);
        if (why) {
            cu_strlist_add(ar, reasons, why);
            if (R_NO_MATCHING_FLAVOR < least)
                least = R_NO_MATCHING_FLAVOR;
            continue;
        }
        /* mode is the worst resource's mode: whether the flavor needs
         * preemption. The flavor is chosen by its representative (rep,
         * borrow): the least preferred resource by Kueue's isPreferred,
         * mode and level together, as Kueue's representativeMode; the
         * other resources' levels count only in the assignment's
         * borrowing, the maximum (Kueue's Assignment.Borrowing). */
        int mode = MODE_FIT, rep = MODE_FIT, borrow = 0, maxborrow = 0;
        for (size_t i = 0; i < nitems && mode != MODE_NOFIT; i++) {
            size_t rpos;
            for (rpos = 0; rpos < g->nres; rpos++)
                if (g->res[rpos] == items[i].res)
                    break;
            if (rpos == g->nres)
                continue; /* another group's resource */
            int fr = g->fr[fi * g->nres + rpos];
            const char *rname = e->res_names.items[items[i].res];
            if (fr < 0) {
                cu_strlist_add(
                    ar, reasons,
                    cu_arena_printf(ar, "resource %s unavailable in flavor %s", rname, fl->name));
                mode = MODE_NOFIT;
                break;
            }
            int64_t prev = acc_get(a, fr);
            int64_t val = cu_qty_sat_add(items[i].amt, prev);
            int64_t pot = cu_quota_potential(c->node, (size_t)fr);
            if (val > pot) {
                const char *m;
                if (prev > 0)
                    m = cu_arena_printf(
                        ar,
                        "insufficient quota for %s in flavor %s, previously considered podsets requests (%s) + current podset request (%s) > maximum capacity (%s)",
                        rname, fl->name, qty(e, items[i].res, prev, b1, sizeof b1),
                        qty(e, items[i].res, items[i].amt, b2, sizeof b2),
                        qty(e, items[i].res, pot, b3, sizeof b3));
                else
                    m = cu_arena_printf(
                        ar,
                        "insufficient quota for %s in flavor %s, request > maximum capacity (%s > %s)",
                        rname, fl->name, qty(e, items[i].res, val, b1, sizeof b1),
                        qty(e, items[i].res, pot, b2, sizeof b2));
                cu_strlist_add(ar, reasons, m);
                if (R_EXCEEDS_MAX_QUOTA < least)
                    least = R_EXCEEDS_MAX_QUOTA;
                mode = MODE_NOFIT;
                break;
            }
            int may_reclaim = 0;
            int lvl = cu_engine_borrow_level(e, c, fr, val, &may_reclaim);
            int64_t avail = cu_quota_available(c->node, (size_t)fr);
            if (val <= avail) {
                if (lvl > maxborrow)
                    maxborrow = lvl;
                if (preferred(c, rep, borrow, MODE_FIT, lvl)) {
                    rep = MODE_FIT;
                    borrow = lvl;
                }
                continue;
            }
            cu_strlist_add(
                ar, reasons,
                cu_arena_printf(ar, "insufficient unused quota for %s in flavor %s, %s more needed",
                                rname, fl->name,
                                qty(e, items[i].res, cu_qty_sat_sub(val, avail), b1, sizeof b1)));
            if (R_WAITING_FOR_QUOTA < least)
                least = R_WAITING_FOR_QUOTA;
            int m = MODE_NOFIT;
            int level = lvl; /* a preempting flavor counts the level after preemption */
            if (cu_assign_may_preempt(e, c, fr, val, may_reclaim))
                m = cu_preempt_oracle(e, c, w, fr, val, &level);
            if (level > maxborrow)
                maxborrow = level;
            if (m < mode)
                mode = m;
            if (preferred(c, rep, borrow, m, level)) {
                rep = m;
                borrow = level;
            }
        }
        if (mode == MODE_NOFIT)
            continue;
        if (!try_next_flavor(c, rep, borrow > 0)) {
            *borrow_out = maxborrow;
            *mode_out = mode;
            if (fi + 1 < g->nflv)
                *tried_out = (int16_t)fi;
            return (int)fi;
        }
        if (best < 0 || preferred(c, rep, borrow, best_rep, best_borrow)) {
            best = (int)fi;
            best_borrow = borrow;
            best_maxborrow = maxborrow;
            best_rep = rep;
            best_mode = mode;
        }
    }
    if (best >= 0) {
        *borrow_out = best_maxborrow;
        *mode_out = best_mode;
        return best;
    }
    *reason_code = least <= R_INADMISSIBLE ? least : R_NO_MATCHING_FLAVOR;
    return -1;
}

static void join_into(cu_buf *b, const char *psname, cu_strlist *r)
{
    qsort(r->s, r->n, sizeof(*r->s), cmp_str);
    if (b->len)
        cu_buf_puts(b, "; ");
    cu_buf_printf(b, "couldn't assign flavors to pod set %s: ", psname);
    for (size_t i = 0; i < r->n; i++) {
        if (i)
            cu_buf_puts(b, ", ");
        cu_buf_puts(b, r->s[i]);
    }
}

/* Cueue's numbers after Kueue's not-fit message of pod set p (its
 * placement result r in TAS flavor ti): the ClusterQueue's free quota of
 * the resource that blocks, then the nodes' side (cu_tas_diag_text). */
void cu_assign_tas_numbers(cu_engine *e, const ecq *c, int ti, const cu_tas_result *r, cu_buf *b)
{
    const cu_tas_diag *g = &r->diag;
    const etas *s = &e->tas.items[ti];
    int rid = g->resource ? cu_strmap_get(&e->res_map, g->resource) : -1;
    int fr = cu_engine_fr(e, s->flv, rid);
    cu_buf_puts(b, "; ");
    if (fr >= 0 && c->node->declared[fr]) {
        char q[40];
        cu_buf_printf(
            b, "quota has %s %s free in flavor %s, but ",
            cu_qty_format_res(g->resource, cu_quota_available(c->node, (size_t)fr), q, sizeof(q)),
            g->resource, s->flavor);
    }
    cu_tas_diag_text(g, b);
}

/* The nodeSelector and required node affinity of pod set ps as the
 * placement reads them (in a); NULL when out of memory. */
static const cu_nodesel *tas_nodesel(cu_arena *a, const cu_podset *ps)
{
    cu_nodesel *s = cu_arena_alloc(a, sizeof(*s));
    cu_nodeterm *t = cu_arena_alloc(a, (ps->nterms ? ps->nterms : 1) * sizeof(*t));
    if (!s || !t)
        return NULL;
    memset(t, 0, (ps->nterms ? ps->nterms : 1) * sizeof(*t));
    for (size_t i = 0; i < ps->nterms; i++)
        t[i].exprs = ps->terms[i];
    s->selector = ps->node_selector;
    s->has_required = ps->nterms > 0;
    s->nterms = ps->nterms;
    s->terms = t;
    return s;
}

int cu_assign_tas_request(cu_arena *ar, const ecq *c, const ewl *w, size_t p, int32_t count,
                          cu_tas_request *q)
{
    const cu_podset *ps = &w->obj->podsets[p];
    const cu_topo_request *r = &ps->topo;
    int implied = tas_requested(c, ps) == 2;
    memset(q, 0, sizeof(*q));
    q->count = count;
    q->per_pod = &ps->requests;
    if (!implied && r->required) {
        q->mode = CU_TAS_REQUIRED;
        q->level = r->required;
    } else if (!implied && r->preferred) {
        q->mode = CU_TAS_PREFERRED;
        q->level = r->preferred;
    } else {
        q->mode = CU_TAS_UNCONSTRAINED;
    }
    if (!implied) {
        q->slice_level = r->slice_required;
        q->slice_size = r->has_slice_size ? r->slice_size : 0;
    }
    q->ntols = ps->ntols;
    q->tols = ps->tols;
    q->group = r->podset_group_name; /* a leader and its workers: placed together */
    if (!ps->node_selector.n && !ps->nterms)
        return 0; /* no selector: every node matches */
    q->sel = tas_nodesel(ar, ps);
    return q->sel ? 0 : -1;
}

/* Fills pod set p's request in plan slot k, for TAS flavor ti. */
static int tas_request(cu_engine *e, const ecq *c, const ewl *w, const asg *a, size_t p, int ti,
                       tasplan *plan, size_t k)
{
    const cu_podset *ps = &w->obj->podsets[p];
    const eassign *ea = &a->ps[p];
    if (cu_assign_tas_request(&e->cycle, c, w, p, ea->count, &plan->req[k]))
        return -1;
    /* its usage: the requests of the resources assigned the TAS flavor */
    cu_reslist *u = &plan->use[k];
    u->n = 0;
    u->items = cu_arena_alloc(&e->cycle, (ps->requests.n ? ps->requests.n : 1) * sizeof(cu_res));
    if (!u->items)
        return -1;
    for (size_t i = 0; i < ps->requests.n; i++) {
        int rid = cu_strmap_get(&e->res_map, ps->requests.items[i].name);
        for (size_t j = 0; j < ea->n; j++)
            if (ea->res[j] == rid && e->flavors.items[ea->flv[j]].tas == ti) {
                u->items[u->n++] = ps->requests.items[i];
                break;
            }
    }
    plan->ps[k] = (int)p;
    plan->ti[k] = ti;
    return 0;
}

/* The error of a TAS pod set that cannot be placed at all (Kueue's
 * onlyTASFlavor, podSetTopologyRequest): the assignment does not fit. */
static void tas_error(cu_engine *e, asg *a, const char *psname, const char *err)
{
    a->mode = MODE_NOFIT;
    a->reason = R_NO_MATCHING_FLAVOR;
    a->msg = cu_arena_printf(&e->cycle, "failed to assign flavors to pod set %s: %s", psname, err);
}

/* Kueue's TAS step of findAssignment, after quota: the pod sets that ask
 * for TAS (explicitly, or implied in a TAS-only ClusterQueue) are placed
 * in their TAS flavor, those of one flavor together. Mode Fit: placed
 * against current usage; failing that, the assignment needs preemption
 * (Kueue's reason, with Cueue's numbers after it). Mode Preempt: placed
 * as if no admitted TAS workload held the nodes; failing that, NoFit. */
static void tas_step(cu_engine *e, const ecq *c, ewl *w, asg *a)
{
    cu_arena *ar = &e->cycle;
    w->tas_wait = 0;
    if (a->mode == MODE_NOFIT)
        return;
    size_t n = 0;
    for (size_t p = 0; p < w->nps; p++)
        n += tas_requested(c, &w->obj->podsets[p]) != 0;
    if (!n)
        return;
    int cq_tas = 0;
    for (size_t g = 0; g < c->ngroups && !cq_tas; g++)
        for (size_t f = 0; f < c->groups[g].nflv && !cq_tas; f++)
            cq_tas = e->flavors.items[c->groups[g].flv[f]].tas >= 0;
    tasplan *plan = cu_arena_alloc(ar, sizeof(*plan));
    if (plan) {
        plan->n = 0;
        plan->ps = cu_arena_alloc(ar, n * sizeof(int));
        plan->ti = cu_arena_alloc(ar, n * sizeof(int));
        plan->req = cu_arena_alloc(ar, n * sizeof(cu_tas_request));
        plan->use = cu_arena_alloc(ar, n * sizeof(cu_reslist));
    }
    if (!plan || !plan->ps || !plan->ti || !plan->req || !plan->use) {
        tas_error(e, a, w->ps[0].name, "out of memory");
        return;
    }
    for (size_t p = 0; p < w->nps; p++) {
        int req = tas_requested(c, &w->obj->podsets[p]);
        if (!req)
            continue;
        if (!cq_tas) {
            tas_error(e, a, w->ps[p].name,
                      "workload requires Topology, but there is no TAS cache information");
            return;
        }
        /* Kueue's onlyTASFlavor: exactly one TAS flavor */
        const eassign *ea = &a->ps[p];
        int ti = -1, many = 0;
        for (size_t j = 0; j < ea->n; j++) {
            int x = e->flavors.items[ea->flv[j]].tas;
            if (x >= 0 && ti >= 0 && x != ti)
                many = 1;
            else if (x >= 0)
                ti = x;
        }
        if (ti < 0) {
            tas_error(e, a, w->ps[p].name, "no TAS flavor assigned");
            return;
        }
        if (many) {
            cu_strlist names = { 0 };
            for (size_t j = 0; j < ea->n; j++) {
                int x = e->flavors.items[ea->flv[j]].tas;
                size_t k;
                for (k = 0; x >= 0 && k < names.n; k++)
                    if (strcmp(names.s[k], e->tas.items[x].flavor) == 0)
                        break;
                if (x >= 0 && k == names.n)
                    cu_strlist_add(ar, &names, e->tas.items[x].flavor);
            }
            qsort(names.s, names.n, sizeof(*names.s), cmp_str);
            cu_buf b;
            cu_buf_init(&b, 64 * 1024);
            cu_buf_puts(&b, "more than one TAS flavor assigned: ");
            for (size_t k = 0; k < names.n; k++)
                cu_buf_printf(&b, "%s%s", k ? ", " : "", names.s[k]);
            tas_error(e, a, w->ps[p].name, cu_arena_strdup(ar, cu_buf_str(&b)));
            cu_buf_free(&b);
            return;
        }
        /* sorted by flavor, then pod set */
        size_t k = plan->n;
        while (k > 0 && plan->ti[k - 1] > ti) {
            plan->ps[k] = plan->ps[k - 1];
            plan->ti[k] = plan->ti[k - 1];
            plan->req[k] = plan->req[k - 1];
            plan->use[k] = plan->use[k - 1];
            k--;
        }
        if (tas_request(e, c, w, a, p, ti, plan, k)) {
            tas_error(e, a, w->ps[p].name, "out of memory");
            return;
        }
        plan->n++;
    }
    plan->res = NULL;
    a->tas = plan;
    cu_tas_result *res = cu_arena_alloc(ar, plan->n * sizeof(*res));
    if (!res) {
        tas_error(e, a, w->ps[0].name, "out of memory");
        return;
    }
    size_t fail = 0;
    if (a->mode == MODE_FIT) {
        cu_err err = cu_engine_tas_place(e, plan, 0, res, &fail);
        if (err) {
            const char *psname = w->ps[plan->ps[fail]].name;
            cu_buf b;
            cu_buf_init(&b, 64 * 1024);
            cu_buf_printf(&b, "couldn't assign flavors to pod set %s: %s", psname,
                          res[fail].reason ? res[fail].reason : "out of memory");
            if (err == CU_EINVAL)
                cu_assign_tas_numbers(e, c, plan->ti[fail], &res[fail], &b);
            a->msg = cu_arena_strdup(ar, cu_buf_str(&b));
            cu_buf_free(&b);
            a->reason = R_WAITING_FOR_QUOTA;
            a->mode = MODE_PREEMPT;
            w->tas_wait = plan->ti[fail] + 1;
            w->tas_ps = plan->ps[fail];
        }
        if (!err && cu_engine_tas_keep(e, res, plan->n) == CU_OK) {
            plan->res = res; /* admitted as is while it still fits */
            return;
        }
        for (size_t i = 0; i < plan->n; i++)
            cu_tas_result_free(&res[i]);
        if (!err)
            return;
    }
    /* as if empty: the same answer for the same shape while the nodes and
     * their bound pods do not change (remembered per engine) */
    uint64_t key = w->shape;
    for (size_t i = 0; i < plan->n; i++) {
        int32_t v[3] = { plan->ps[i], plan->ti[i], plan->req[i].count };
        key = cu_hash_bytes(key, v, sizeof(v));
    }
    tas_empty *slot = &e->tas_empty[key % TAS_EMPTY_CACHE];
    cu_err err;
    if (slot->gen == e->tas_nodes_gen + 1 && slot->key == key) {
        err = slot->fits ? CU_OK : CU_EINVAL;
        fail = 0;
    } else {
        err = cu_engine_tas_place(e, plan, 1, NULL, &fail);
        if (err != CU_ENOMEM) {
            slot->key = key;
            slot->gen = e->tas_nodes_gen + 1;
            slot->fits = err == CU_OK;
        }
    }
    if (err) {
        a->mode = MODE_NOFIT;
        if (!w->tas_wait) {
            w->tas_wait = plan->ti[fail] + 1;
            w->tas_ps = plan->ps[fail];
        }
        return;
    }
    a->tas_preempt = 1;
}

/* The items of pod set p with count cnt into items (sorted by resource
 * name, the ClusterQueue's pods resource included); returns how many. */
static size_t podset_items(cu_engine *e, const ecq *c, const eps *ps, int32_t cnt, item *items)
{
    size_t n = 0;
    int pods_done = c->pods_res < 0;
    for (size_t r = 0; r <= ps->nreq; r++) {
        if (!pods_done && (r == ps->nreq || strcmp("pods", e->res_names.items[ps->res[r]]) < 0)) {
            items[n].res = c->pods_res;
            items[n].amt = cu_qty_res_units("pods", cnt);
            items[n].flv = -1;
            n++;
            pods_done = 1;
        }
        if (r == ps->nreq)
            break;
        int64_t v = cu_engine_mul_sat(ps->amt[r], cnt);
        if (v == 0)
            continue;
        items[n].res = ps->res[r];
        items[n].amt = v;
        items[n].flv = -1;
        n++;
    }
    return n;
}

/* Joins the unit's reasons under each of its pod sets' names, as Kueue
 * gives every pod set of a group the group's status. */
static void join_unit(cu_buf *b, const ewl *w, const size_t *mem, size_t nmem, cu_strlist *r)
{
    for (size_t k = 0; k < nmem; k++)
        join_into(b, w->ps[mem[k]].name, r);
}

/* Kueue's assignFlavors, for the counts given. Flavors are assigned per
 * unit, in the order of each unit's first pod set: a pod set alone, or the
 * pod sets that share a podSetGroupName (a leader and its workers), which
 * take one flavor per resource group on their summed requests, so that
 * the placement can put them in one domain. */
static void assign(cu_engine *e, ecq *c, ewl *w, const int32_t *counts, asg *a)
{
    cu_arena *ar = &e->cycle;
    memset(a, 0, sizeof(*a));
    a->mode = MODE_NOFIT;
    size_t total = 1;
    for (size_t i = 0; i < w->nps; i++)
        total += w->ps[i].nreq + 1;
    size_t nps1 = w->nps ? w->nps : 1;
    a->ps = cu_arena_alloc(ar, nps1 * sizeof(eassign));
    a->fr = cu_arena_alloc(ar, total * sizeof(int));
    a->amt = cu_arena_alloc(ar, total * sizeof(int64_t));
    item *items = cu_arena_alloc(ar, total * sizeof(item)); /* every pod set's, in turn */
    item *sum = cu_arena_alloc(ar, total * sizeof(item));   /* one unit's, summed */
    item **pit = cu_arena_alloc(ar, nps1 * sizeof(item *));
    size_t *pn = cu_arena_alloc(ar, nps1 * sizeof(size_t));
    size_t *mem = cu_arena_alloc(ar, nps1 * sizeof(size_t));
    const cu_podset **pso = cu_arena_alloc(ar, nps1 * sizeof(cu_podset *));
    unsigned char *done = cu_arena_alloc(ar, nps1);
    size_t ng = c->ngroups;
    a->tried = cu_arena_alloc(ar, (w->nps * ng > 0 ? w->nps * ng : 1) * sizeof(int16_t));
    if (!a->ps || !a->fr || !a->amt || !items || !sum || !pit || !pn || !mem || !pso || !done ||
        !a->tried) {
        a->msg = "out of memory";
        a->reason = R_PENDING;
        return;
    }
    memset(done, 0, nps1);
    for (size_t k = 0; k < w->nps * ng; k++)
        a->tried[k] = FMEM_NONE;
    size_t off = 0;
    for (size_t p = 0; p < w->nps; p++) {
        pit[p] = items + off;
        pn[p] = podset_items(e, c, &w->ps[p], counts[p], pit[p]);
        off += pn[p];
    }
    /* the last attempt's flavor memory, if it was made in this queue */
    const int16_t *fmem =
        w->fmem && w->fmem_cq == (int)(c - e->cqs.items) && w->fmem_ng == ng ? w->fmem : NULL;
    cu_buf msg;
    cu_buf_init(&msg, 1 << 20);
    int wmode = MODE_FIT;
    for (size_t p = 0; p < w->nps; p++) {
        if (done[p])
            continue;
        /* the unit: p, and the later pod sets of its group */
        size_t nmem = 0;
        const char *gname = w->obj->podsets[p].topo.podset_group_name;
        for (size_t q = p; q < w->nps; q++) {
            const char *gq = w->obj->podsets[q].topo.podset_group_name;
            if (q == p || (gname && gq && strcmp(gname, gq) == 0)) {
                done[q] = 1;
                pso[nmem] = &w->obj->podsets[q];
                mem[nmem++] = q;
            }
        }
        size_t n = 0;
        for (size_t k = 0; k < nmem; k++)
            for (size_t i = 0; i < pn[mem[k]]; i++) {
                const item *it = &pit[mem[k]][i];
                size_t j;
                for (j = 0; j < n && sum[j].res != it->res; j++)
                    ;
                if (j == n)
                    sum[n++] = *it;
                else
                    sum[j].amt = cu_qty_sat_add(sum[j].amt, it->amt);
            }
        cu_strlist reasons = { 0 };
        int psmode = MODE_FIT;
        for (size_t i = 0; i < n; i++) {
            if (sum[i].flv >= 0)
                continue;
            int gi = (size_t)sum[i].res < c->nres_group ? c->res_group[sum[i].res] : -1;
            if (gi < 0) {
                cu_strlist_add(ar, &reasons,
                               cu_arena_printf(ar, "resource %s unavailable in ClusterQueue",
                                               e->res_names.items[sum[i].res]));
                join_unit(&msg, w, mem, nmem, &reasons);
                a->msg = cu_arena_strdup(ar, cu_buf_str(&msg));
                a->reason = R_NO_MATCHING_FLAVOR;
                cu_buf_free(&msg);
                return;
            }
            const egroup *g = &c->groups[gi];
            int code = R_PENDING, borrow = 0, mode = MODE_NOFIT;
            size_t before = reasons.n;
            int16_t last = fmem ? fmem[mem[0] * ng + (size_t)gi] : FMEM_NONE;
            size_t start = last >= 0 ? (size_t)last + 1 : 0;
            int16_t tried = FMEM_NONE;
            int fi = find_flavor(e, c, w, g, pso, nmem, sum, n, a, &reasons, &code, &borrow, &mode,
                                 start, &tried);
            if (fi < 0) {
                /* a pod set without flavors remembers none */
                for (size_t k = 0; k < nmem; k++)
                    for (size_t gk = 0; gk < ng; gk++)
                        a->tried[mem[k] * ng + gk] = FMEM_NONE;
                join_unit(&msg, w, mem, nmem, &reasons);
                a->msg = cu_arena_strdup(ar, cu_buf_str(&msg));
                a->reason = code;
                cu_buf_free(&msg);
                return;
            }
            for (size_t k = 0; k < nmem; k++)
                a->tried[mem[k] * ng + (size_t)gi] = tried;
            if (mode == MODE_FIT)
                reasons.n = before; /* a fitting flavor carries no reasons */
            if (mode < psmode)
                psmode = mode;
            if (borrow > a->borrow)
                a->borrow = borrow;
            for (size_t rpos = 0; rpos < g->nres; rpos++) {
                for (size_t j = 0; j < n; j++)
                    if (g->res[rpos] == sum[j].res) {
                        sum[j].flv = g->flv[fi];
                        acc_add(a, g->fr[(size_t)fi * g->nres + rpos], sum[j].amt);
                    }
                for (size_t k = 0; k < nmem; k++)
                    for (size_t j = 0; j < pn[mem[k]]; j++)
                        if (g->res[rpos] == pit[mem[k]][j].res)
                            pit[mem[k]][j].flv = g->flv[fi];
            }
        }
        if (psmode != MODE_FIT && reasons.n)
            join_unit(&msg, w, mem, nmem, &reasons);
        if (psmode < wmode)
            wmode = psmode;
        for (size_t k = 0; k < nmem; k++) {
            size_t q = mem[k];
            eassign *ea = &a->ps[q];
            ea->count = counts[q];
            ea->n = pn[q];
            ea->res = cu_arena_alloc(ar, (pn[q] ? pn[q] : 1) * sizeof(int));
            ea->flv = cu_arena_alloc(ar, (pn[q] ? pn[q] : 1) * sizeof(int));
            ea->amt = cu_arena_alloc(ar, (pn[q] ? pn[q] : 1) * sizeof(int64_t));
            if (!ea->res || !ea->flv || !ea->amt) {
                a->msg = "out of memory";
                a->reason = R_PENDING;
                cu_buf_free(&msg);
                return;
            }
            for (size_t i = 0; i < pn[q]; i++) {
                ea->res[i] = pit[q][i].res;
                ea->flv[i] = pit[q][i].flv;
                ea->amt[i] = pit[q][i].amt;
            }
        }
    }
    a->mode = wmode;
    if (wmode != MODE_FIT) {
        a->msg = cu_arena_strdup(ar, cu_buf_str(&msg));
        a->reason = R_WAITING_FOR_QUOTA;
    }
    cu_buf_free(&msg);
    tas_step(e, c, w, a);
}

static int preemptish(int mode)
{
    return mode == MODE_PREEMPT || mode == MODE_RECLAIM || mode == MODE_NOCAND;
}

static cu_err nominate_counts(cu_engine *e, ecq *c, ewl *w, int32_t *counts, int partial, asg *out,
                              targets *t);

/* Assigns flavors and, when the assignment needs preemption, finds the
 * targets. Full counts first; with minCount (partial admission) and no
 * way to admit the full count, the largest count that fits or can
 * preempt, found by binary search, as Kueue's pod set reducer does. */
cu_err cu_nominate_assign(cu_engine *e, ecq *c, ewl *w, asg *out, targets *t)
{
    int32_t *counts = cu_arena_alloc(&e->cycle, (w->nps ? w->nps : 1) * sizeof(int32_t));
    if (!counts)
        return CU_ENOMEM;
    int partial = -1;
    for (size_t i = 0; i < w->nps; i++) {
        counts[i] = w->ps[i].count;
        if (partial < 0 && w->ps[i].min < w->ps[i].count)
            partial = (int)i;
    }
    t->n = 0;
    /* A preemptor whose victims are gone starts from the full counts too,
     * not from the counts it preempted for: Kueue's getInitialAssignments
     * keeps no count from the cycle that preempted, so with the quota now
     * free the full count (or a larger partial count) may fit. It keeps
     * its place first in the round (w->plan) only when it fits now. */
    cu_err err = nominate_counts(e, c, w, counts, partial, out, t);
    if (w->plan && (err || out->mode != MODE_FIT)) {
        free(w->plan);
        w->plan = NULL;
    }
    return err;
}

static cu_err nominate_counts(cu_engine *e, ecq *c, ewl *w, int32_t *counts, int partial, asg *out,
                              targets *t)
{
    e->oracle.valid = 0;
    assign(e, c, w, counts, out);
    if (preemptish(out->mode)) {
        if (e->oracle.valid && e->oracle.w == w && e->oracle.c == c &&
            e->oracle.round == e->round && out->nuse == 1 && out->fr[0] == e->oracle.fr &&
            out->amt[0] == e->oracle.val && !out->tas) {
            *t = e->oracle.t; /* the same search the oracle just ran */
        } else {
            cu_err err = cu_preempt_targets(e, c, w, out, -1, 0, t);
            if (err)
                return err;
        }
    }
    if (out->mode == MODE_FIT || t->n || partial < 0)
        return CU_OK;
    /* Kueue's PodSetReducer: sort.Search over the reduction i in
     * [0, count - minCount] for the smallest i (largest count) that fits
     * or can preempt; i = 0, the full count, is known not to. The probes
     * follow sort.Search's exactly, so a fit that is not monotone in the
     * count gives Kueue's answer too. */
    int32_t full = w->ps[partial].count;
    int32_t lo = 0, hi = full - w->ps[partial].min + 1; /* [lo, hi) */
    asg best, tmp;
    targets bt = { 0, NULL }, tt;
    int found = 0;
    while (lo < hi) {
        int32_t mid = (int32_t)(((uint32_t)lo + (uint32_t)hi) >> 1);
        int fits = 0;
        if (mid > 0) {
            counts[partial] = full - mid;
            assign(e, c, w, counts, &tmp);
            tt.n = 0;
            if (preemptish(tmp.mode)) {
                cu_err err = cu_preempt_targets(e, c, w, &tmp, -1, 0, &tt);
                if (err)
                    return err;
            }
            fits = tmp.mode == MODE_FIT || tt.n;
        }
        if (fits) {
            best = tmp;
            bt = tt;
            found = 1;
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    if (found) {
        *out = best;
        *t = bt;
    }
    return CU_OK;
}
