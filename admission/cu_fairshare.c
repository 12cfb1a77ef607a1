/*
 * cu_fairshare.c - fair sharing: Kueue's Dominant Resource Share (DRS)
 * of ClusterQueues and Cohorts, the admission tournament that orders a
 * round's entries across a cohort tree, and fair-sharing preemption.
 *
 * DRS(node) = 0 for a root; otherwise, over resources r,
 *   max_r (1000 * sum_fr(r) max(0, usage - subtreeQuota)
 *           / sum_fr(r) potentialAvailable(parent, fr))
 * divided by the node's weight (weight 0 while borrowing = infinite).
 * Comparisons use the exact ratio; status.weightedShare is its ceiling.
 *
 * Every usage change made here is temporary and undone before returning.
 */
#include "cu_engine_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct drs {
    double ratio;      /* borrowed * 1000 / lendable of the dominant resource */
    int64_t weight;    /* milli */
} drs;

/* Cache slot of node n: ClusterQueues first, then cohorts. */
static size_t slot(const cu_engine *e, const cu_qnode *n)
{
    return n->is_cq ? (size_t)n->id : e->cqs.n + (size_t)n->id;
}

static int ensure_caches(cu_engine *e)
{
    if (e->drs_ratio)
        return 1;
    size_t nodes = e->cqs.n + e->cohorts.n + 1, nres = e->res_names.n + 1;
    e->drs_ratio = calloc(nodes, sizeof(double));
    e->drs_gen = calloc(nodes, sizeof(uint64_t));
    e->drs_valid = calloc(nodes, 1);
    e->lendable = calloc(nodes * nres, sizeof(double));
    e->lendable_ok = calloc(nodes, 1);
    return e->drs_ratio && e->drs_gen && e->drs_valid && e->lendable && e->lendable_ok;
}

/* What n's parent can lend of each resource: sum over the flavors of the
 * tree of potentialAvailable(parent). Depends on quotas only. */
static const double *lendable_of(cu_engine *e, const cu_qnode *n)
{
    size_t nres = e->res_names.n + 1, k = slot(e, n);
    double *l = &e->lendable[k * nres];
    if (e->lendable_ok[k])
        return l;
    const cu_qnode *root = n;
    while (root->parent)
        root = root->parent;
    for (size_t r = 0; r < nres; r++)
        l[r] = 0;
    for (size_t fr = 0; fr < n->nfr; fr++) {
        if (!root->subtree[fr] && !root->declared[fr])
            continue;
        l[e->fr_res[fr]] += (double)cu_quota_potential(n->parent, fr);
    }
    e->lendable_ok[k] = 1;
    return l;
}

static drs node_drs_raw(cu_engine *e, const cu_qnode *n);

static drs node_drs(const cu_engine *ce, const cu_qnode *n)
{
    cu_engine *e = (cu_engine *)ce; /* caches only */
    drs d = {0.0, n->fs_weight};
    if (!n->parent)
        return d;
    if (!ensure_caches(e))
        return node_drs_raw(e, n);
    size_t k = slot(e, n);
    if (e->drs_valid[k] && e->drs_gen[k] == n->gen) {
        d.ratio = e->drs_ratio[k];
        return d;
    }
    d = node_drs_raw(e, n);
    e->drs_ratio[k] = d.ratio;
    e->drs_gen[k] = n->gen;
    e->drs_valid[k] = 1;
    return d;
}

static drs node_drs_raw(cu_engine *e, const cu_qnode *n)
{
    drs d = {0.0, n->fs_weight};
    if (!n->parent)
        return d;
    const double *lend = e->lendable_ok && ensure_caches(e) ? lendable_of(e, n) : NULL;
    const cu_qnode *root = n;
    while (root->parent)
        root = root->parent;
    size_t nres = e->res_names.n;
    /* resources: accumulate per resource id over flavors */
    for (size_t r = 0; r < nres; r++) {
        int64_t borrowed = 0;
        double lendable = 0;
        int any = 0;
        for (size_t fr = 0; fr < n->nfr; fr++) {
            if (e->fr_res[fr] != (int)r)
                continue;
            int64_t b = n->usage[fr] - n->subtree[fr];
            if (b > 0) {
                borrowed = cu_qty_sat_add(borrowed, b);
                any = 1;
            }
        }
        if (!any)
            continue;
        if (lend) {
            lendable = lend[r];
        } else {
            for (size_t fr = 0; fr < n->nfr; fr++) {
                if (e->fr_res[fr] != (int)r)
                    continue;
                if (!root->subtree[fr] && !root->declared[fr])
                    continue;
                lendable += (double)cu_quota_potential(n->parent, fr);
            }
        }
        if (lendable <= 0)
            continue;
        double ratio = (double)borrowed * 1000.0 / lendable;
        if (ratio > d.ratio)
            d.ratio = ratio; /* ties keep the earlier (smaller id) resource */
    }
    return d;
}

static int zero_weight_borrows(drs d)
{
    return d.weight == 0 && d.ratio != 0;
}

static double weighted(drs d)
{
    if (d.ratio == 0)
        return 0;
    if (d.weight == 0)
        return INFINITY;
    return d.ratio / ((double)d.weight / 1000.0);
}

/* Kueue's CompareDRS. */
static int cmp_drs(drs a, drs b)
{
    int za = zero_weight_borrows(a), zb = zero_weight_borrows(b);
    if (za && zb)
        return a.ratio < b.ratio ? -1 : a.ratio > b.ratio;
    if (za)
        return 1;
    if (zb)
        return -1;
    double x = weighted(a), y = weighted(b);
    return x < y ? -1 : x > y;
}

int64_t cu_fs_weighted_share(const cu_engine *e, const cu_qnode *n)
{
    drs d = node_drs(e, n);
    if (zero_weight_borrows(d))
        return INT64_MAX;
    double w = weighted(d);
    if (w >= 9.2e18)
        return INT64_MAX;
    return (int64_t)ceil(w);
}

/* ---------------- admission tournament ---------------- */

static void add_asg(cu_engine *e, ecq *c, const asg *a, int sign)
{
    for (size_t i = 0; i < a->nuse; i++)
        cu_quota_add_usage(c->node, (size_t)a->fr[i], sign * a->amt[i]);
    (void)e;
}

/* The node on q's path whose parent is anc (q's own node if its parent). */
static const cu_qnode *child_on_path(const cu_qnode *q, const cu_qnode *anc)
{
    while (q && q->parent != anc)
        q = q->parent;
    return q;
}

static int borrowing_on(const cu_qnode *n, const asg *a)
{
    for (size_t i = 0; i < a->nuse; i++)
        if (n->usage[a->fr[i]] > n->subtree[a->fr[i]])
            return 1;
    return 0;
}

/* Per entry, at its comparison level: the DRS of the child-on-path node
 * with the entry's usage added, and whether that node then borrows on the
 * entry's flavor-resources. */
typedef struct fsval { drs d; int bor; } fsval;

static fsval entry_value(cu_engine *e, entry *en, const cu_qnode *cohort)
{
    fsval v;
    if (en->vstamp == e->fs_stamp && en->vnode == cohort) {
        v.d.ratio = en->vratio;
        v.d.weight = en->vweight;
        v.bor = en->vbor;
        return v;
    }
    add_asg(e, en->cq, &en->a, 1);
    const cu_qnode *k = child_on_path(en->cq->node, cohort);
    v.d = node_drs(e, k);
    v.bor = borrowing_on(k, &en->a);
    add_asg(e, en->cq, &en->a, -1);
    en->vstamp = e->fs_stamp;
    en->vnode = cohort;
    en->vratio = v.d.ratio;
    en->vweight = v.d.weight;
    en->vbor = v.bor;
    return v;
}

/* Kueue's fair-sharing iterator "less": is a better than b at cohort? */
static int fs_less(cu_engine *e, entry *a, entry *b, const cu_qnode *cohort)
{
    fsval va = entry_value(e, a, cohort), vb = entry_value(e, b, cohort);
    if (va.bor != vb.bor)
        return !va.bor;
    int c = cmp_drs(va.d, vb.d);
    if (c)
        return c < 0;
    if (a->wl->qi.prio != b->wl->qi.prio)
        return a->wl->qi.prio > b->wl->qi.prio;
    if (a->wl->qi.ts != b->wl->qi.ts)
        return a->wl->qi.ts < b->wl->qi.ts;
    return strcmp(a->wl->key, b->wl->key) < 0;
}

typedef struct tcand { entry *en; const cu_qnode *child; } tcand;

static int tcand_cmp(const void *pa, const void *pb)
{
    const tcand *a = pa, *b = pb;
    if (a->child != b->child)
        return (uintptr_t)a->child < (uintptr_t)b->child ? -1 : 1;
    return 0;
}

/* Winner of the tournament below cohort among the given entries: the
 * entries are grouped by the child of cohort they sit under; a child
 * cohort's group plays its own tournament first. */
static entry *tournament(cu_engine *e, const cu_qnode *cohort, entry **cand, size_t ncand)
{
    if (!ncand)
        return NULL;
    tcand *t = cu_arena_alloc(&e->scratch, ncand * sizeof(tcand));
    entry **sub = cu_arena_alloc(&e->scratch, ncand * sizeof(entry *));
    if (!t || !sub)
        return cand[0];
    for (size_t j = 0; j < ncand; j++) {
        t[j].en = cand[j];
        t[j].child = child_on_path(cand[j]->cq->node, cohort);
    }
    qsort(t, ncand, sizeof(tcand), tcand_cmp);
    entry *best = NULL;
    for (size_t i = 0; i < ncand;) {
        size_t j = i;
        while (j < ncand && t[j].child == t[i].child)
            j++;
        entry *winner;
        if (t[i].child->is_cq) {
            winner = t[i].en; /* one entry per ClusterQueue in a round */
        } else {
            for (size_t k = i; k < j; k++)
                sub[k - i] = t[k].en;
            winner = tournament(e, t[i].child, sub, j - i);
        }
        if (winner && (!best || fs_less(e, winner, best, cohort)))
            best = winner;
        i = j;
    }
    return best;
}

static int fs_pick(cu_engine *e, entry *ents, size_t n, int preemptors)
{
    /* ClusterQueues without a cohort first, in entry order; then tree by
     * tree (trees do not share quota, so their order does not matter) */
    int first = -1;
    for (size_t i = 0; i < n; i++) {
        if (ents[i].done || (preemptors && !ents[i].wl->plan))
            continue;
        if (!ents[i].cq->node->parent)
            return (int)i;
        if (first < 0)
            first = (int)i;
    }
    if (first < 0)
        return -1;
    const cu_qnode *root = cu_quota_root(ents[first].cq->node);
    entry **cand = cu_arena_alloc(&e->scratch, n * sizeof(entry *));
    if (!cand)
        return first;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!ents[i].done && (!preemptors || ents[i].wl->plan) && ents[i].cq->node->parent &&
            cu_quota_root(ents[i].cq->node) == root)
            cand[m++] = &ents[i];
    entry *w = tournament(e, root, cand, m);
    return w ? (int)(w - ents) : first;
}

int cu_fs_next(cu_engine *e, entry *ents, size_t n)
{
    e->fs_stamp++;
    /* a workload whose preemptions released quota goes first, as in the
     * classic order (see cu_cycle.c entry_cmp) */
    int i = fs_pick(e, ents, n, 1);
    if (i < 0)
        i = fs_pick(e, ents, n, 0);
    cu_arena_free(&e->scratch);
    return i;
}

/* ---------------- fair-sharing preemption ---------------- */

typedef struct fcand { ewl *wl; ecq *cq; int same; } fcand;

typedef struct fctx {
    cu_engine *e;
    ecq *c;
    ewl *w;
    size_t nuse; const int *fr; const int64_t *amt;
    const int *frs; size_t nfrs;
    /* per ClusterQueue candidate lists (indices into cands), by cq index */
    fcand *cands; size_t ncands;
    size_t *head, *end;          /* per cq: next candidate, end (in order[]) */
    fcand **order;               /* candidates grouped per cq, in ordering */
    uint8_t *cq_pruned, *co_pruned;
    ewl **targets; const char **reasons; size_t nt;
    int preemptor_added;
} fctx;

static int fcand_cmp(const void *pa, const void *pb)
{
    const fcand *a = pa, *b = pb;
    if (a->cq != b->cq)
        return a->cq < b->cq ? -1 : 1;
    return cu_cand_cmp(a->wl, a->same, b->wl, b->same);
}

static void preemptor_usage(fctx *f, int sign)
{
    for (size_t i = 0; i < f->nuse; i++)
        cu_quota_add_usage(f->c->node, (size_t)f->fr[i], sign * f->amt[i]);
}

/* Kueue's workloadFits with borrowing allowed, the preemptor's own usage
 * not counted. */
static int fits(fctx *f)
{
    if (f->preemptor_added)
        preemptor_usage(f, -1);
    int ok = 1;
    for (size_t i = 0; i < f->nuse && ok; i++)
        if (f->amt[i] > cu_quota_available(f->c->node, (size_t)f->fr[i]))
            ok = 0;
    if (f->preemptor_added)
        preemptor_usage(f, 1);
    return ok;
}

static int cq_index(const fctx *f, const ecq *q) { return (int)(q - f->e->cqs.items); }

static int cq_has(const fctx *f, int qi) { return f->head[qi] < f->end[qi]; }

static fcand *cq_pop(fctx *f, int qi) { return f->order[f->head[qi]++]; }

/* Kueue's TargetClusterQueueOrdering.nextTarget. Returns a cq index or -1. */
static int next_target(fctx *f, const cu_qnode *cohort)
{
    int best_cq = -1;
    drs best_cq_d = {-1.0, 1000};
    int have_cq = 0;
    for (size_t i = 0; i < cohort->nkids; i++) {
        const cu_qnode *k = cohort->kids[i];
        if (!k->is_cq)
            continue;
        int qi = k->id;
        if (f->cq_pruned[qi])
            continue;
        drs d = node_drs(f->e, k);
        if ((d.ratio == 0 && &f->e->cqs.items[qi] != f->c) || !cq_has(f, qi)) {
            f->cq_pruned[qi] = 1;
            continue;
        }
        int c = have_cq ? cmp_drs(d, best_cq_d) : 1;
        if (have_cq && c == 0) {
            const fcand *x = f->order[f->head[qi]], *y = f->order[f->head[best_cq]];
            if (cu_cand_cmp(x->wl, x->same, y->wl, y->same) < 0)
                best_cq = qi;
        } else if (c > 0) {
            best_cq = qi;
            best_cq_d = d;
            have_cq = 1;
        }
    }
    const cu_qnode *best_co = NULL;
    drs best_co_d = {-1.0, 1000};
    int have_co = 0;
    for (size_t i = 0; i < cohort->nkids; i++) {
        const cu_qnode *k = cohort->kids[i];
        if (k->is_cq || f->co_pruned[k->id])
            continue;
        drs d = node_drs(f->e, k);
        int ancestor = child_on_path(f->c->node, cohort) == k;
        if (d.ratio == 0 && !ancestor) {
            f->co_pruned[k->id] = 1;
            continue;
        }
        if (!have_co || cmp_drs(d, best_co_d) >= 0) {
            best_co = k;
            best_co_d = d;
            have_co = 1;
        }
    }
    if (!have_cq && !have_co) {
        if (cohort->parent || !cohort->is_cq)
            f->co_pruned[cohort->id] = 1;
        return -1;
    }
    if (have_co && (!have_cq || cmp_drs(best_co_d, best_cq_d) >= 0)) {
        int t = next_target(f, best_co);
        return t >= 0 ? t : -2; /* -2: nothing yet, ask again from the root */
    }
    return best_cq;
}

static int iter_next(fctx *f)
{
    if (!f->c->node->parent)
        return cq_has(f, cq_index(f, f->c)) ? cq_index(f, f->c) : -1;
    const cu_qnode *root = cu_quota_root(f->c->node);
    for (int guard = 0; guard < 100000; guard++) {
        if (f->co_pruned[root->id])
            return -1;
        int t = next_target(f, root);
        if (t >= 0)
            return t;
        if (t == -1)
            return -1;
    }
    return -1;
}

/* The almost-LCA nodes of the preemptor and a target ClusterQueue. */
static void almost_lca(const cu_qnode *p, const cu_qnode *t, const cu_qnode **pa,
                       const cu_qnode **ta)
{
    const cu_qnode *lca = NULL;
    for (const cu_qnode *x = t->parent; x && !lca; x = x->parent)
        for (const cu_qnode *y = p->parent; y; y = y->parent)
            if (x == y) {
                lca = x;
                break;
            }
    *pa = child_on_path(p, lca);
    *ta = child_on_path(t, lca);
}

static int yield(fctx *f, fcand *k, const char *reason)
{
    cu_engine_apply_usage(f->e, k->wl, -1);
    f->targets[f->nt] = k->wl;
    f->reasons[f->nt++] = reason;
    return fits(f);
}

static int strategy_ok(cu_fs_strategy s, drs pnew, drs told, drs tnew)
{
    if (s == CU_FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE)
        return cmp_drs(pnew, tnew) <= 0;
    return cmp_drs(pnew, told) < 0;
}

/* Builds the grouped order[] over the given candidate subset. */
static void regroup(fctx *f, fcand *list, size_t n)
{
    qsort(list, n, sizeof(fcand), fcand_cmp);
    size_t ncq = f->e->cqs.n;
    for (size_t q = 0; q < ncq; q++)
        f->head[q] = f->end[q] = 0;
    for (size_t i = 0; i < n; i++)
        f->order[i] = &list[i];
    for (size_t i = 0; i < n;) {
        int qi = cq_index(f, list[i].cq);
        size_t j = i;
        while (j < n && list[j].cq == list[i].cq)
            j++;
        f->head[qi] = i;
        f->end[qi] = j;
        i = j;
    }
    memset(f->cq_pruned, 0, ncq);
    memset(f->co_pruned, 0, f->e->cohorts.n ? f->e->cohorts.n : 1);
}

cu_err cu_fair_targets(cu_engine *e, ecq *c, ewl *w, size_t nuse, const int *fr,
                       const int64_t *amt, const int *frs, size_t nfrs, targets *out)
{
    cu_arena *ar = &e->scratch;
    out->n = 0;
    out->t = NULL;
    fctx f;
    memset(&f, 0, sizeof(f));
    f.e = e;
    f.c = c;
    f.w = w;
    f.nuse = nuse;
    f.fr = fr;
    f.amt = amt;
    f.frs = frs;
    f.nfrs = nfrs;
    const cu_cluster_queue *q = c->obj;
    /* candidates */
    size_t cap = 0;
    for (size_t i = 0; i < e->cqs.n; i++)
        if (e->cqs.items[i].tree == c->tree)
            cap += e->cqs.items[i].nadm;
    if (!cap)
        return CU_OK;
    f.cands = cu_arena_alloc(ar, cap * sizeof(fcand));
    if (!f.cands)
        return CU_ENOMEM;
    if (q->preemption.within_cq != CU_PP_NEVER)
        for (size_t i = 0; i < c->nadm; i++) {
            ewl *v = c->adm[i];
            if (v != w && cu_wl_uses_any(v, frs, nfrs) && cu_policy_ok(q->preemption.within_cq, w, v) &&
                !cu_preempt_protected(e, v))
                f.cands[f.ncands++] = (fcand){v, c, 1};
        }
    if (c->node->parent && q->preemption.reclaim != CU_PP_NEVER)
        for (size_t i = 0; i < e->cqs.n; i++) {
            ecq *o = &e->cqs.items[i];
            if (o == c || o->tree != c->tree || !o->node->parent || cu_within_nominal(o->node, frs, nfrs))
                continue;
            for (size_t k = 0; k < o->nadm; k++) {
                ewl *v = o->adm[k];
                if (cu_wl_uses_any(v, frs, nfrs) && cu_policy_ok(q->preemption.reclaim, w, v) &&
                    !cu_preempt_protected(e, v))
                    f.cands[f.ncands++] = (fcand){v, o, 0};
            }
        }
    if (!f.ncands)
        return CU_OK;
    size_t ncq = e->cqs.n, nco = e->cohorts.n ? e->cohorts.n : 1;
    f.head = cu_arena_alloc(ar, ncq * sizeof(size_t));
    f.end = cu_arena_alloc(ar, ncq * sizeof(size_t));
    f.order = cu_arena_alloc(ar, f.ncands * sizeof(fcand *));
    f.cq_pruned = cu_arena_alloc(ar, ncq);
    f.co_pruned = cu_arena_alloc(ar, nco);
    f.targets = cu_arena_alloc(ar, f.ncands * sizeof(ewl *));
    f.reasons = cu_arena_alloc(ar, f.ncands * sizeof(char *));
    fcand *retry = cu_arena_alloc(ar, f.ncands * sizeof(fcand));
    if (!f.head || !f.end || !f.order || !f.cq_pruned || !f.co_pruned || !f.targets ||
        !f.reasons || !retry)
        return CU_ENOMEM;
    size_t nretry = 0;
    cu_fs_strategy strategies[2] = {CU_FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE,
                                    CU_FS_LESS_THAN_INITIAL_SHARE};
    size_t nstrat = 2;
    if (e->opts.nstrategies) {
        nstrat = e->opts.nstrategies;
        strategies[0] = e->opts.strategies[0];
        if (nstrat > 1)
            strategies[1] = e->opts.strategies[1];
    }
    preemptor_usage(&f, 1);
    f.preemptor_added = 1;
    int success = 0;
    /* pass 1 */
    regroup(&f, f.cands, f.ncands);
    int within = cu_within_nominal(c->node, frs, nfrs);
    for (;;) {
        int t = iter_next(&f);
        if (t < 0)
            break;
        ecq *T = &e->cqs.items[t];
        if (T == c) {
            fcand *k = cq_pop(&f, t);
            if ((success = yield(&f, k, PR_IN_CQ)))
                break;
            continue;
        }
        if (within) {
            fcand *k = cq_pop(&f, t);
            if ((success = yield(&f, k, PR_RECLAIM)))
                break;
            continue;
        }
        const cu_qnode *pa, *ta;
        almost_lca(c->node, T->node, &pa, &ta);
        drs pnew = node_drs(e, pa), told = node_drs(e, ta);
        if (zero_weight_borrows(pnew) && !zero_weight_borrows(told)) {
            while (cq_has(&f, t))
                retry[nretry++] = *cq_pop(&f, t);
            continue;
        }
        int took = 0;
        while (cq_has(&f, t)) {
            fcand *k = cq_pop(&f, t);
            cu_engine_apply_usage(e, k->wl, -1);
            drs tnew = node_drs(e, ta);
            cu_engine_apply_usage(e, k->wl, 1);
            if (strategy_ok(strategies[0], pnew, told, tnew)) {
                took = 1;
                success = yield(&f, k, PR_FAIR_SHARING);
                break;
            }
            retry[nretry++] = *k;
        }
        if (took && success)
            break;
    }
    /* pass 2: LessThanInitialShare, at most one workload per queue */
    if (!success && nstrat > 1 && nretry) {
        regroup(&f, retry, nretry);
        for (;;) {
            int t = iter_next(&f);
            if (t < 0)
                break;
            ecq *T = &e->cqs.items[t];
            const cu_qnode *pa, *ta;
            almost_lca(c->node, T->node, &pa, &ta);
            drs pnew = node_drs(e, pa), told = node_drs(e, ta);
            fcand *k = cq_pop(&f, t);
            if (cmp_drs(pnew, told) < 0 && (success = yield(&f, k, PR_FAIR_SHARING)))
                break;
            f.head[t] = f.end[t]; /* drop the queue */
            f.cq_pruned[t] = 1;
        }
    }
    preemptor_usage(&f, -1);
    f.preemptor_added = 0;
    if (success && f.nt > 1) {
        /* fill back, as in classic preemption */
        for (size_t k = f.nt - 1; k-- > 0;) {
            cu_engine_apply_usage(e, f.targets[k], 1);
            if (fits(&f)) {
                f.targets[k] = f.targets[f.nt - 1];
                f.reasons[k] = f.reasons[f.nt - 1];
                f.nt--;
            } else {
                cu_engine_apply_usage(e, f.targets[k], -1);
            }
        }
    }
    for (size_t k = 0; k < f.nt; k++)
        cu_engine_apply_usage(e, f.targets[k], 1);
    if (!success)
        return CU_OK;
    out->t = cu_arena_alloc(&e->cycle, f.nt * sizeof(target));
    if (!out->t)
        return CU_ENOMEM;
    for (size_t k = 0; k < f.nt; k++) {
        out->t[k].wl = f.targets[k];
        out->t[k].reason = f.reasons[k];
    }
    out->n = f.nt;
    return CU_OK;
}
