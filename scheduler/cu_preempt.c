/*
 * cu_preempt.c - Kueue's classic preemption: which admitted workloads may
 * be evicted to make room for a preemptor, in which order they are tried,
 * and the minimal set (greedy removal, then fill-back). Fair-sharing
 * preemption is in cu_fairpreempt.c.
 *
 * Every usage change made while searching is undone before returning:
 * callers see the quota tree exactly as they left it.
 */
#include "cu_preempt_int.h"

#include <stdlib.h>
#include <string.h>

enum { V_WITHIN_CQ, V_HIERARCHICAL, V_RECLAIM_NO_BORROW, V_RECLAIM_WHILE_BORROWING };
enum { G_HIER = 0, G_PRIO = 1, G_SAME = 2 };

typedef struct cand {
    ewl *wl;
    ecq *cq;
    const cu_qnode *lca; /* cohort level at which it was collected */
    int variant;
    int group;
} cand;

/* A candidate's place in the order (cand_order): k0 packs evicted
 * first, the group and the priority, k1 the admission time (most recent
 * first), klab the label of the key (when used); i is its index in the
 * candidates. */
typedef struct skey {
    uint64_t k0, k1, klab;
    uint32_t i;
} skey;

/* What the sort compares with: the candidates, and how ties are decided:
 * by the key labels (klab) or by strcmp. Both give the same order:
 * bringing the labels up to date costs a few strcmp calls per workload
 * added since, which pays off only for a search with many candidates
 * (KRANK_MIN_CANDS or more). */
typedef struct sortctx {
    const cand *c;
    int labels;
} sortctx;

enum { KRANK_MIN_CANDS = 32 };

/* The search context: the preemptor, the usage it needs (all its
 * flavor-resources) and the flavor-resources that need preemption. */
typedef struct pctx {
    cu_engine *e;
    ecq *c;
    ewl *w;
    size_t nuse;
    const int *fr;
    const int64_t *amt;
    const int *frs;
    size_t nfrs;
    const tasplan *tas; /* the preemptor's TAS pod sets, NULL: none */
    cand *cands;
    size_t n, cap;
} pctx;

/* Brings e->kord and e->krank up to date: workloads added since the
 * last call are sorted by key and merged in. Keys never change and
 * workloads are never removed from e->wls, so krank order is the strcmp
 * order of the keys, equal keys sharing a label. Labels are spaced
 * KGAP apart, and a new key takes a label between its neighbours' (at
 * most KSTEP above the lower one, so that keys added one after another
 * in the same gap fit many times over; KGAP above the last key) without
 * relabelling the others. Only when no label is left between two
 * neighbours are all of them spaced out again. */
#define KGAP (UINT64_C(1) << 32)
#define KSTEP (UINT64_C(1) << 16)

static int kcmp(const void *pa, const void *pb)
{
    const ewl *a = *(ewl *const *)pa, *b = *(ewl *const *)pb;
    return strcmp(a->key, b->key);
}

static cu_err key_ranks(cu_engine *e)
{
    size_t nold = e->nkord, n = e->wls.n;
    if (nold == n)
        return CU_OK;
    if (n >= UINT32_MAX)
        return CU_ENOMEM;
    size_t m = n - nold;
    ewl **fresh = malloc(m * sizeof(ewl *));
    uint32_t *all = malloc(n * sizeof(uint32_t));
    uint64_t *lab = realloc(e->krank, n * sizeof(uint64_t));
    if (lab)
        e->krank = lab;
    if (!fresh || !all || !lab) {
        free(fresh);
        free(all);
        return CU_ENOMEM;
    }
    memcpy(fresh, e->wls.items + nold, m * sizeof(ewl *));
    qsort(fresh, m, sizeof(ewl *), kcmp);
    const uint32_t *old = e->kord;
    ewl *const *wls = e->wls.items;
    size_t i = 0, k = 0;
    int relabel = 0;
    for (size_t j = 0; j < m; j++) {
        /* old entries before fresh[j]: those with a key <= fresh[j]'s */
        size_t lo = i, hi = nold;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (strcmp(wls[old[mid]]->key, fresh[j]->key) <= 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo > i) {
            memcpy(all + k, old + i, (lo - i) * sizeof(uint32_t));
            k += lo - i;
            i = lo;
        }
        uint32_t x = (uint32_t)fresh[j]->idx;
        if (!relabel) {
            /* between the last one placed and the next old one */
            uint64_t lp = k ? lab[all[k - 1]] : 0;
            uint64_t ln = i < nold ? lab[old[i]] : UINT64_MAX;
            if (k && strcmp(wls[all[k - 1]]->key, fresh[j]->key) == 0) {
                lab[x] = lp;
            } else if (ln - lp >= 2) {
                /* after the last key, a full gap */
                uint64_t step = (ln - lp) / 2, cap = i < nold ? KSTEP : KGAP;
                lab[x] = lp + (step < cap ? step : cap);
            } else {
                relabel = 1;
            }
        }
        all[k++] = x;
    }
    if (i < nold) {
        memcpy(all + k, old + i, (nold - i) * sizeof(uint32_t));
        k += nold - i;
    }
    if (relabel) {
        /* no room left somewhere: space all labels out again */
        uint64_t r = KGAP;
        for (k = 0; k < n; k++) {
            if (k && strcmp(wls[all[k - 1]]->key, wls[all[k]]->key) != 0)
                r += KGAP;
            lab[all[k]] = r;
        }
    }
    free(fresh);
    free(e->kord);
    e->kord = all;
    e->nkord = n;
    return CU_OK;
}

/* The candidates' order: evicted prefix across groups (evicted
 * hierarchy, priority, same CQ), then the non-evicted ones in the same
 * group order; within a group, cu_cand_cmp's order. */
static int cand_qsort(const void *pa, const void *pb)
{
    const cand *a = pa, *b = pb;
    if (a->wl->evicting != b->wl->evicting)
        return a->wl->evicting ? -1 : 1;
    if (a->group != b->group)
        return a->group < b->group ? -1 : 1;
    return cu_cand_cmp(a->wl, a->group == G_SAME, b->wl, b->group == G_SAME);
}

/* cand_qsort's order on the packed keys, ties decided by the key: a
 * lexicographic order (cand_qsort's Admission Fair Sharing rule never
 * applies when the preemptor's own queue's candidates have equal
 * usage). */
static int skey_cmp(const sortctx *x, const skey *a, const skey *b)
{
    if (a->k0 != b->k0)
        return a->k0 < b->k0 ? -1 : 1;
    if (a->k1 != b->k1)
        return a->k1 < b->k1 ? -1 : 1;
    if (!x->labels)
        return strcmp(x->c[a->i].wl->key, x->c[b->i].wl->key);
    if (a->klab != b->klab)
        return a->klab < b->klab ? -1 : 1;
    return 0;
}

/* Stable merge sort of v[0..n), tmp holding n / 2 + 1. */
static void skey_sort(const sortctx *x, skey *v, skey *tmp, size_t n)
{
    if (n <= 12) {
        for (size_t i = 1; i < n; i++) {
            skey t = v[i];
            size_t j = i;
            while (j && skey_cmp(x, &v[j - 1], &t) > 0) {
                v[j] = v[j - 1];
                j--;
            }
            v[j] = t;
        }
        return;
    }
    size_t h = n / 2;
    skey_sort(x, v, tmp, h);
    skey_sort(x, v + h, tmp, n - h);
    if (skey_cmp(x, &v[h - 1], &v[h]) <= 0)
        return;
    memcpy(tmp, v, h * sizeof(skey));
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n) {
        if (skey_cmp(x, &tmp[i], &v[j]) <= 0)
            v[k++] = tmp[i++];
        else
            v[k++] = v[j++];
    }
    while (i < h)
        v[k++] = tmp[i++];
}

/* Sorts p->cands into the candidates' order, like the stable qsort it
 * replaces (candidates comparing equal keep their collection order).
 * When Admission Fair Sharing usage differs among the preemptor's own
 * queue's candidates the order need not be transitive, so that case
 * keeps the qsort itself. */
static cu_err cand_order(pctx *p)
{
    size_t n = p->n;
    const ewl *same0 = NULL;
    for (size_t i = 0; i < n; i++) {
        const cand *c = &p->cands[i];
        if (c->group != G_SAME)
            continue;
        if (!same0) {
            same0 = c->wl;
        } else if (c->wl->qi.afs != same0->qi.afs) {
            qsort(p->cands, n, sizeof(cand), cand_qsort);
            return CU_OK;
        }
    }
    sortctx x = { p->cands, 0 };
    if (p->e->nkord == p->e->wls.n || n >= KRANK_MIN_CANDS)
        x.labels = key_ranks(p->e) == CU_OK;
    skey *v = cu_arena_alloc(&p->e->scratch, n * sizeof(skey));
    skey *tmp = cu_arena_alloc(&p->e->scratch, (n / 2 + 1) * sizeof(skey));
    cand *out = cu_arena_alloc(&p->e->scratch, n * sizeof(cand));
    if (!v || !tmp || !out)
        return CU_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const cand *c = &p->cands[i];
        const ewl *w = c->wl;
        v[i].k0 = (uint64_t)(w->evicting ? 0 : 1) << 63 | (uint64_t)c->group << 61 |
                  (uint64_t)((uint32_t)w->qi.prio ^ 0x80000000u) << 29;
        v[i].k1 = ~((uint64_t)w->admitted_at ^ (UINT64_C(1) << 63));
        v[i].klab = x.labels ? p->e->krank[w->idx] : 0;
        v[i].i = (uint32_t)i;
    }
    skey_sort(&x, v, tmp, n);
    for (size_t i = 0; i < n; i++)
        out[i] = p->cands[v[i].i];
    p->cands = out;
    p->cap = n;
    return CU_OK;
}

static int add_cand(pctx *p, ewl *v, ecq *q, const cu_qnode *lca, int variant, int group)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 32;
        cand *nc = cu_arena_alloc(&p->e->scratch, cap * sizeof(cand));
        if (!nc)
            return -1;
        if (p->n)
            memcpy(nc, p->cands, p->n * sizeof(cand));
        p->cands = nc;
        p->cap = cap;
    }
    p->cands[p->n++] = (cand){ v, q, lca, variant, group };
    return 0;
}

/* Kueue's QuantitiesFitInQuota over the remaining request: fits when
 * usage + remaining <= subtree quota on every fr; remaining shrinks by
 * what the node holds locally. */
static int fits_in_quota(const cu_qnode *n, size_t nuse, const int *fr, int64_t *remaining)
{
    int fits = 1;
    for (size_t i = 0; i < nuse; i++) {
        if (cu_qty_sat_add(n->usage[fr[i]], remaining[i]) > n->subtree[fr[i]])
            fits = 0;
        int64_t la = cu_quota_local(n, (size_t)fr[i]) - n->usage[fr[i]];
        if (la < 0)
            la = 0;
        remaining[i] = remaining[i] > la ? remaining[i] - la : 0;
    }
    return fits;
}

/* The victim's ClusterQueue could take the quota straight back: its
 * reclaimWithinCohort policy would let the victim preempt the preemptor
 * once the preemptor borrows. */
static int could_reclaim_back(const ecq *vq, const ewl *victim, const ewl *preemptor)
{
    return cu_policy_ok(vq->obj->preemption.reclaim, victim, preemptor);
}

static int classify_cohort(const pctx *p, const ecq *vq, const ewl *v, int adv)
{
    const cu_cluster_queue *q = p->c->obj;
    if (adv)
        return V_HIERARCHICAL;
    if (q->preemption.borrow_policy == CU_PP_NEVER)
        return V_RECLAIM_NO_BORROW;
    if (v->qi.prio >= p->w->qi.prio ||
        (q->preemption.has_threshold && v->qi.prio > q->preemption.threshold))
        return V_RECLAIM_NO_BORROW;
    /* Cueue's stability rule: preempting to borrow is only done when the
     * victim's queue could not reclaim the quota back from the preemptor,
     * which would otherwise repeat forever (Kueue #3779). */
    if (could_reclaim_back(vq, v, p->w))
        return V_RECLAIM_NO_BORROW;
    return V_RECLAIM_WHILE_BORROWING;
}

static int collect_subtree(pctx *p, const cu_qnode *cur, const cu_qnode *lca, const cu_qnode *skip,
                           int adv)
{
    for (size_t i = 0; i < cur->nkids; i++) {
        const cu_qnode *k = cur->kids[i];
        if (k->is_cq || k == skip || cu_within_nominal(k, p->frs, p->nfrs))
            continue;
        if (collect_subtree(p, k, lca, skip, adv))
            return -1;
    }
    for (size_t i = 0; i < cur->nkids; i++) {
        const cu_qnode *k = cur->kids[i];
        if (!k->is_cq)
            continue;
        ecq *q = &p->e->cqs.items[k->id];
        if (q == p->c || cu_within_nominal(k, p->frs, p->nfrs))
            continue;
        for (size_t j = 0; j < q->nadm; j++) {
            ewl *v = q->adm[j];
            if (!cu_wl_uses_any(v, p->frs, p->nfrs) ||
                !cu_policy_ok(p->c->obj->preemption.reclaim, p->w, v) ||
                cu_preempt_protected(p->e, v))
                continue;
            if (add_cand(p, v, q, lca, classify_cohort(p, q, v, adv), adv ? G_HIER : G_PRIO))
                return -1;
        }
    }
    return 0;
}

static cu_err collect(pctx *p, int *n_hier, int *n_other)
{
    const cu_cluster_queue *q = p->c->obj;
    if (q->preemption.within_cq != CU_PP_NEVER) {
        for (size_t i = 0; i < p->c->nadm; i++) {
            ewl *v = p->c->adm[i];
            if (v == p->w || !cu_wl_uses_any(v, p->frs, p->nfrs) ||
                !cu_policy_ok(q->preemption.within_cq, p->w, v) || cu_preempt_protected(p->e, v))
                continue;
            if (add_cand(p, v, p->c, NULL, V_WITHIN_CQ, G_SAME))
                return CU_ENOMEM;
        }
    }
    size_t before = p->n;
    if (p->c->node->parent && q->preemption.reclaim != CU_PP_NEVER) {
        int64_t *rem = cu_arena_alloc(&p->e->scratch, (p->nuse ? p->nuse : 1) * sizeof(int64_t));
        if (!rem)
            return CU_ENOMEM;
        if (p->nuse)
            memcpy(rem, p->amt, p->nuse * sizeof(int64_t));
        int adv = fits_in_quota(p->c->node, p->nuse, p->fr, rem);
        const cu_qnode *prev = NULL;
        for (const cu_qnode *node = p->c->node->parent; node; node = node->parent) {
            if (collect_subtree(p, node, node, prev, adv))
                return CU_ENOMEM;
            adv = fits_in_quota(node, p->nuse, p->fr, rem) || adv;
            prev = node;
        }
    }
    *n_hier = *n_other = 0;
    for (size_t i = before; i < p->n; i++) {
        (*n_other)++;
        if (p->cands[i].group == G_HIER)
            (*n_hier)++;
    }
    return CU_OK;
}

/* Kueue's workloadFits: every flavor-resource of the preemptor fits what
 * is available; without borrowing, its ClusterQueue also stays within its
 * own quota. */
static int wl_fits(const pctx *p, int allow_borrow)
{
    const cu_qnode *n = p->c->node;
    for (size_t i = 0; i < p->nuse; i++) {
        size_t fr = (size_t)p->fr[i];
        if (!allow_borrow && cu_qty_sat_add(n->usage[fr], p->amt[i]) > n->subtree[fr])
            return 0;
        if (p->amt[i] > cu_quota_available(n, fr))
            return 0;
    }
    /* and its TAS pod sets are placed (Kueue's workloadFits) */
    return cu_engine_tas_fits(p->e, p->tas);
}

int cu_asg_fits(cu_engine *e, const ecq *c, const asg *a, int allow_borrow, int tas)
{
    pctx p;
    memset(&p, 0, sizeof(p));
    p.e = e;
    p.c = (ecq *)c;
    p.nuse = a->nuse;
    p.fr = a->fr;
    p.amt = a->amt;
    p.tas = tas ? a->tas : NULL;
    return wl_fits(&p, allow_borrow);
}

/* Kueue's candidateIsValid, against the current (simulated) usage. */
static int cand_valid(const pctx *p, const cand *k, int borrow)
{
    if (k->cq == p->c)
        return 1;
    if (borrow && k->variant == V_RECLAIM_NO_BORROW)
        return 0;
    if (cu_within_nominal(k->cq->node, p->frs, p->nfrs))
        return 0;
    for (const cu_qnode *n = k->cq->node->parent; n && n != k->lca; n = n->parent)
        if (cu_within_nominal(n, p->frs, p->nfrs))
            return 0;
    return 1;
}

/* Greedy removal until the preemptor fits, then fill-back. Returns the
 * number of targets in out (0: this attempt found none). */
static size_t attempt(pctx *p, int borrow, cand **out)
{
    cu_engine *e = p->e;
    size_t nt = 0;
    int ok = 0;
    for (size_t i = 0; i < p->n; i++) {
        if (!cand_valid(p, &p->cands[i], borrow))
            continue;
        cu_engine_apply_usage(e, p->cands[i].wl, -1);
        out[nt++] = &p->cands[i];
        if (wl_fits(p, borrow)) {
            ok = 1;
            break;
        }
    }
    if (ok && nt > 1) {
        /* fill back in reverse, never the last one added; a target put
         * back for good is replaced by the last of the list */
        for (size_t k = nt - 1; k-- > 0;) {
            cu_engine_apply_usage(e, out[k]->wl, 1);
            if (wl_fits(p, borrow)) {
                out[k] = out[nt - 1];
                nt--;
            } else {
                cu_engine_apply_usage(e, out[k]->wl, -1);
            }
        }
    }
    for (size_t k = 0; k < nt; k++)
        cu_engine_apply_usage(e, out[k]->wl, 1);
    return ok ? nt : 0;
}

static const char *variant_reason(int v)
{
    switch (v) {
    case V_WITHIN_CQ: return PR_IN_CQ;
    case V_RECLAIM_WHILE_BORROWING: return PR_RECLAIM_WHILE_BORROWING;
    default: return PR_RECLAIM;
    }
}

static cu_err classic(pctx *p, targets *out)
{
    int n_hier, n_other;
    cu_err err = collect(p, &n_hier, &n_other);
    if (err || !p->n)
        return err;
    err = cand_order(p);
    if (err)
        return err;
    const cu_qnode *node = p->c->node;
    int forbidden = p->c->obj->preemption.borrow_policy == CU_PP_NEVER;
    int under = 1;
    for (size_t i = 0; i < p->nfrs; i++)
        if (node->usage[p->frs[i]] >= node->nominal[p->frs[i]])
            under = 0;
    int attempts[2], na = 0;
    if (!n_other || (forbidden && !under)) {
        attempts[na++] = 1;
    } else if (forbidden && !n_hier) {
        attempts[na++] = 0;
        attempts[na++] = 1;
    } else {
        attempts[na++] = 1;
        attempts[na++] = 0;
    }
    cand **picked = cu_arena_alloc(&p->e->scratch, p->n * sizeof(cand *));
    if (!picked)
        return CU_ENOMEM;
    size_t nt = 0;
    for (int i = 0; i < na && !nt; i++)
        nt = attempt(p, attempts[i], picked);
    if (!nt)
        return CU_OK;
    out->t = cu_arena_alloc(&p->e->cycle, nt * sizeof(target));
    if (!out->t)
        return CU_ENOMEM;
    for (size_t i = 0; i < nt; i++) {
        out->t[i].wl = picked[i]->wl;
        out->t[i].reason = variant_reason(picked[i]->variant);
    }
    out->n = nt;
    return CU_OK;
}

static cu_err targets_in(cu_engine *e, ecq *c, ewl *w, const asg *a, int only_fr, int64_t val,
                         targets *out);

cu_err cu_preempt_targets(cu_engine *e, ecq *c, ewl *w, const asg *a, int only_fr, int64_t val,
                          targets *out)
{
    /* everything but the result lives in the scratch arena, released
     * here: a round with thousands of preemption searches stays small */
    cu_err err = targets_in(e, c, w, a, only_fr, val, out);
    cu_arena_free(&e->scratch);
    return err;
}

static cu_err targets_in(cu_engine *e, ecq *c, ewl *w, const asg *a, int only_fr, int64_t val,
                         targets *out)
{
    out->n = 0;
    out->t = NULL;
    pctx p;
    memset(&p, 0, sizeof(p));
    p.e = e;
    p.c = c;
    p.w = w;
    int *frs = cu_arena_alloc(&e->scratch, (a->nuse + 1) * sizeof(int));
    if (!frs)
        return CU_ENOMEM;
    if (only_fr >= 0) {
        /* the oracle: only this flavor-resource, needing val */
        int *one = cu_arena_alloc(&e->scratch, sizeof(int));
        int64_t *amt = cu_arena_alloc(&e->scratch, sizeof(int64_t));
        if (!one || !amt)
            return CU_ENOMEM;
        *one = only_fr;
        *amt = val;
        frs[0] = only_fr;
        p.nfrs = 1;
        p.nuse = 1;
        p.fr = one;
        p.amt = amt;
    } else {
        /* the flavor-resources that do not fit, and with TAS those of the
         * TAS flavors (Kueue's Preempt mode for the TAS pod sets) */
        for (size_t i = 0; i < a->nuse; i++)
            if (a->amt[i] > cu_quota_available(c->node, (size_t)a->fr[i]) ||
                (a->tas_preempt && e->flavors.items[e->fr_flv[a->fr[i]]].tas >= 0))
                frs[p.nfrs++] = a->fr[i];
        p.nuse = a->nuse;
        p.fr = a->fr;
        p.amt = a->amt;
        p.tas = a->tas;
    }
    p.frs = frs;
    if (!p.nfrs)
        return CU_OK;
    if (e->opts.fair_sharing)
        return cu_fair_targets(e, c, w, p.nuse, p.fr, p.amt, p.frs, p.nfrs, p.tas, out);
    return classic(&p, out);
}

int cu_preempt_oracle(cu_engine *e, ecq *c, ewl *w, int fr, int64_t val, int *borrow)
{
    asg none;
    memset(&none, 0, sizeof(none));
    targets t;
    int may;
    cu_err err = cu_preempt_targets(e, c, w, &none, fr, val, &t);
    /* remembered: for a workload using only this flavor-resource, the
     * real search would repeat exactly this one (cu_cycle.c) */
    e->oracle.w = w;
    e->oracle.c = c;
    e->oracle.fr = fr;
    e->oracle.val = val;
    e->oracle.round = e->round;
    e->oracle.valid = err == CU_OK;
    e->oracle.t = t;
    if (err != CU_OK || !t.n) {
        *borrow = cu_engine_borrow_level(e, c, fr, val, &may);
        return MODE_NOCAND;
    }
    int same = 0;
    for (size_t i = 0; i < t.n; i++) {
        cu_engine_apply_usage(e, t.t[i].wl, -1);
        same |= t.t[i].wl->cq == (int)(c - e->cqs.items);
    }
    *borrow = cu_engine_borrow_level(e, c, fr, val, &may);
    for (size_t i = 0; i < t.n; i++)
        cu_engine_apply_usage(e, t.t[i].wl, 1);
    return same ? MODE_PREEMPT : MODE_RECLAIM;
}
