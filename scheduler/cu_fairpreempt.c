/*
 * cu_fairpreempt.c - fair-sharing preemption (Kueue's fair preemption
 * strategies over the cohort tree, by DRS).
 *
 * Every usage change made here is temporary and undone before returning.
 */
#include "cu_preempt_int.h"
#include "cu_drs_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct fcand {
    ewl *wl;
    ecq *cq;
    int same;
} fcand;

/* cmp_drs as a key computed once per node: zero-weight borrowers above
 * everyone else (by ratio), the others by weighted share. */
typedef struct dkey {
    int cls;
    double val;
} dkey;

static dkey drs_key(drs d)
{
    dkey k;
    k.cls = cu_drs_zero_weight_borrows(d);
    k.val = k.cls ? d.ratio : cu_drs_weighted(d);
    return k;
}

static int key_cmp(dkey a, dkey b)
{
    if (a.cls != b.cls)
        return a.cls < b.cls ? -1 : 1;
    return a.val < b.val ? -1 : a.val > b.val;
}

/* A cohort's ClusterQueue children that may still give a target: a
 * binary heap of cq indices, the next target on top (tgt_better). */
typedef struct fheap {
    int *q;
    size_t n;
} fheap;

typedef struct fctx {
    cu_engine *e;
    ecq *c;
    ewl *w;
    size_t nuse;
    const int *fr;
    const int64_t *amt;
    const int *frs;
    size_t nfrs;
    const tasplan *tas; /* the preemptor's TAS pod sets, NULL: none */
    fcand *cands;
    size_t ncands;
    const cu_qnode *root; /* root of the preemptor's tree */
    int *tcq;
    size_t ntcq; /* the ClusterQueues of that tree */
    /* per cq index (meaningful for the tree's ClusterQueues only) */
    size_t *head, *end; /* next candidate, end (in order[]) */
    dkey *key;          /* DRS key when last (re)placed in a heap */
    uint8_t *zero;      /* DRS ratio was 0 then */
    int *hpos;          /* position in its parent's heap, -1: none */
    int *kidpos;        /* index among its parent's kids */
    fcand **order;      /* candidates grouped per cq, in ordering */
    /* per cohort index (meaningful for the tree's cohorts only) */
    fheap *heap;
    const cu_qnode ***cokids;
    size_t *ncokids; /* child cohorts, in kid order */
    uint8_t *co_pruned;
    uint8_t *co_anc; /* an ancestor of the preemptor */
    int dirty;       /* cq of the last target (its key may be stale), -1 */
    ewl **targets;
    const char **reasons;
    size_t nt;
    int preemptor_added;
} fctx;

static int fcand_cmp(const void *pa, const void *pb)
{
    const fcand *a = pa, *b = pb;
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
    /* and its TAS pod sets are placed (Kueue's workloadFits) */
    return ok && cu_engine_tas_fits(f->e, f->tas);
}

static int cq_index(const fctx *f, const ecq *q) { return (int)(q - f->e->cqs.items); }

static int cq_has(const fctx *f, int qi) { return f->head[qi] < f->end[qi]; }

static fcand *cq_pop(fctx *f, int qi) { return f->order[f->head[qi]++]; }

/* ---- the target ordering's heaps ----
 *
 * Kueue's nextTarget scans a cohort's children for the one with the
 * highest DRS (ties: the better head candidate). Scanning every child per
 * popped target is quadratic in a wide cohort, so each cohort keeps its
 * ClusterQueue children in a heap ordered the same way. Between two
 * nextTarget calls only the last target's queue changes (its candidates
 * popped, its usage lowered by a yield), so only that one is re-placed.
 * A child that is no longer a target (DRS 0 unless it is the preemptor's,
 * or no candidates left) never becomes one again within a pass: usage
 * only falls and candidates are only popped. The scan pruned such
 * children on sight, the heap drops them when they reach the top; both
 * give the same targets in the same order. */

/* Is cq a a better next target than cq b (both with candidates)? The
 * scan's order: higher DRS; equal DRS, the better head candidate; fully
 * equal, the earlier child (the scan kept the first). */
static int tgt_better(const fctx *f, int a, int b)
{
    int c = key_cmp(f->key[a], f->key[b]);
    if (c)
        return c > 0;
    const fcand *x = f->order[f->head[a]], *y = f->order[f->head[b]];
    int d = cu_cand_cmp(x->wl, x->same, y->wl, y->same);
    if (d)
        return d < 0;
    return f->kidpos[a] < f->kidpos[b];
}

static void heap_put(fctx *f, fheap *h, size_t i, int q)
{
    h->q[i] = q;
    f->hpos[q] = (int)i;
}

static void heap_up(fctx *f, fheap *h, size_t i)
{
    int q = h->q[i];
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!tgt_better(f, q, h->q[p]))
            break;
        heap_put(f, h, i, h->q[p]);
        i = p;
    }
    heap_put(f, h, i, q);
}

static void heap_down(fctx *f, fheap *h, size_t i)
{
    int q = h->q[i];
    for (;;) {
        size_t b = 2 * i + 1;
        if (b >= h->n)
            break;
        if (b + 1 < h->n && tgt_better(f, h->q[b + 1], h->q[b]))
            b++;
        if (!tgt_better(f, h->q[b], q))
            break;
        heap_put(f, h, i, h->q[b]);
        i = b;
    }
    heap_put(f, h, i, q);
}

static void heap_del(fctx *f, fheap *h, int q)
{
    size_t i = (size_t)f->hpos[q];
    f->hpos[q] = -1;
    if (i == --h->n)
        return;
    int last = h->q[h->n];
    heap_put(f, h, i, last);
    heap_up(f, h, i);
    heap_down(f, h, (size_t)f->hpos[last]);
}

static void set_key(fctx *f, int q)
{
    drs d = cu_drs_node(f->e, f->e->cqs.items[q].node);
    f->key[q] = drs_key(d);
    f->zero[q] = d.ratio == 0;
}

/* Re-places cq q in its heap after its usage or candidates changed. */
static void refresh(fctx *f, int q)
{
    if (q < 0 || f->hpos[q] < 0)
        return;
    fheap *h = &f->heap[f->e->cqs.items[q].node->parent->id];
    if (!cq_has(f, q)) {
        heap_del(f, h, q);
        return;
    }
    set_key(f, q);
    heap_up(f, h, (size_t)f->hpos[q]);
    heap_down(f, h, (size_t)f->hpos[q]);
}

/* Builds every cohort's heap and child-cohort list for a pass over the
 * current candidates (order[], head[], end[]); clears the pruning.
 * Arena: e->scratch (kept across the passes of one search). */
static cu_err build_heaps(fctx *f)
{
    cu_arena *ar = &f->e->scratch;
    f->dirty = -1;
    if (!f->c->node->parent)
        return CU_OK;
    size_t nco = f->e->cohorts.n;
    const cu_qnode **stack = cu_arena_alloc(ar, (nco ? nco : 1) * sizeof(*stack));
    if (!stack)
        return CU_ENOMEM;
    size_t sp = 0;
    stack[sp++] = f->root;
    int ci = cq_index(f, f->c);
    while (sp) {
        const cu_qnode *co = stack[--sp];
        fheap *h = &f->heap[co->id];
        if (!h->q) {
            h->q = cu_arena_alloc(ar, (co->nkids ? co->nkids : 1) * sizeof(int));
            f->cokids[co->id] =
                cu_arena_alloc(ar, (co->nkids ? co->nkids : 1) * sizeof(cu_qnode *));
            if (!h->q || !f->cokids[co->id])
                return CU_ENOMEM;
        }
        h->n = 0;
        f->ncokids[co->id] = 0;
        f->co_pruned[co->id] = 0;
        for (size_t i = 0; i < co->nkids; i++) {
            const cu_qnode *k = co->kids[i];
            if (!k->is_cq) {
                f->cokids[co->id][f->ncokids[co->id]++] = k;
                stack[sp++] = k;
                continue;
            }
            int q = k->id;
            f->kidpos[q] = (int)i;
            f->hpos[q] = -1;
            if (!cq_has(f, q))
                continue;
            set_key(f, q);
            if (f->zero[q] && q != ci)
                continue; /* the scan would prune it at once */
            heap_put(f, h, h->n++, q);
        }
        for (size_t i = h->n / 2; i-- > 0;)
            heap_down(f, h, i);
    }
    return CU_OK;
}

/* Kueue's TargetClusterQueueOrdering.nextTarget. Returns a cq index, -1
 * (none below cohort) or -2 (nothing yet, ask again from the root). */
static int next_target(fctx *f, const cu_qnode *cohort)
{
    fheap *h = &f->heap[cohort->id];
    int best_cq = -1;
    while (h->n) {
        int q = h->q[0];
        if (!f->zero[q] || &f->e->cqs.items[q] == f->c) {
            best_cq = q;
            break;
        }
        heap_del(f, h, q); /* DRS 0: pruned */
    }
    const cu_qnode *best_co = NULL;
    drs best_co_d = { -1.0, 1000 };
    int have_co = 0;
    const cu_qnode **kids = f->cokids[cohort->id];
    for (size_t i = 0; i < f->ncokids[cohort->id]; i++) {
        const cu_qnode *k = kids[i];
        if (f->co_pruned[k->id])
            continue;
        drs d = cu_drs_node(f->e, k);
        if (d.ratio == 0 && !f->co_anc[k->id]) {
            f->co_pruned[k->id] = 1;
            continue;
        }
        if (!have_co || cu_drs_cmp(d, best_co_d) >= 0) {
            best_co = k;
            best_co_d = d;
            have_co = 1;
        }
    }
    if (best_cq < 0 && !have_co) {
        if (cohort->parent || !cohort->is_cq)
            f->co_pruned[cohort->id] = 1;
        return -1;
    }
    if (have_co && (best_cq < 0 ||
                    cu_drs_cmp(best_co_d, cu_drs_node(f->e, f->e->cqs.items[best_cq].node)) >= 0)) {
        int t = next_target(f, best_co);
        return t >= 0 ? t : -2;
    }
    return best_cq;
}

static int iter_next(fctx *f)
{
    if (!f->c->node->parent)
        return cq_has(f, cq_index(f, f->c)) ? cq_index(f, f->c) : -1;
    /* the last target's queue changed; the preemptor's usage was taken
     * out and put back by fits(), re-placed for exactness */
    refresh(f, f->dirty);
    f->dirty = -1;
    refresh(f, cq_index(f, f->c));
    for (int guard = 0; guard < 100000; guard++) {
        if (f->co_pruned[f->root->id])
            return -1;
        int t = next_target(f, f->root);
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
    *pa = cu_child_on_path(p, lca);
    *ta = cu_child_on_path(t, lca);
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
        return cu_drs_cmp(pnew, tnew) <= 0;
    return cu_drs_cmp(pnew, told) < 0;
}

/* 1 when a and b hold the same usage vector: removing either from their
 * (common) ClusterQueue leaves the same quota tree. */
static int same_usage(const ewl *a, const ewl *b)
{
    return a->nuse == b->nuse &&
           (!a->nuse || (memcmp(a->use_fr, b->use_fr, a->nuse * sizeof(int)) == 0 &&
                         memcmp(a->use_amt, b->use_amt, a->nuse * sizeof(int64_t)) == 0));
}

/* Collects the ClusterQueues of the preemptor's tree into tcq (a walk
 * from its root). Arena: e->scratch. */
static cu_err tree_cqs(fctx *f)
{
    if (f->root->is_cq) {
        f->tcq[f->ntcq++] = f->root->id;
        return CU_OK;
    }
    size_t nco = f->e->cohorts.n;
    const cu_qnode **stack = cu_arena_alloc(&f->e->scratch, (nco ? nco : 1) * sizeof(*stack));
    if (!stack)
        return CU_ENOMEM;
    size_t sp = 0;
    stack[sp++] = f->root;
    while (sp) {
        const cu_qnode *co = stack[--sp];
        for (size_t i = 0; i < co->nkids; i++) {
            if (co->kids[i]->is_cq)
                f->tcq[f->ntcq++] = co->kids[i]->id;
            else
                stack[sp++] = co->kids[i];
        }
    }
    return CU_OK;
}

/* Pass 2's grouping of the candidates pass 1 left: per cq, in the order
 * pass 1 met them. Pass 1 popped each queue's candidates in ordering, so
 * that is the sorted order a fresh sort would give. */
static void regroup_retry(fctx *f, fcand *list, size_t n)
{
    for (size_t i = 0; i < f->ntcq; i++)
        f->head[f->tcq[i]] = f->end[f->tcq[i]] = 0;
    for (size_t i = 0; i < n; i++)
        f->end[cq_index(f, list[i].cq)]++;
    size_t off = 0;
    for (size_t i = 0; i < f->ntcq; i++) {
        int q = f->tcq[i];
        f->head[q] = off;
        off += f->end[q];
        f->end[q] = f->head[q];
    }
    for (size_t i = 0; i < n; i++) {
        int q = cq_index(f, list[i].cq);
        f->order[f->end[q]++] = &list[i];
    }
}

/* Records o's candidates, cands[start..ncands), as its group (they are
 * collected per cq). */
static void add_group(fctx *f, ecq *o, size_t start)
{
    int q = cq_index(f, o);
    f->head[q] = start;
    f->end[q] = f->ncands;
}

/* Sorts every group in Kueue's candidate ordering. */
static void sort_groups(fctx *f)
{
    for (size_t i = 0; i < f->ntcq; i++) {
        int q = f->tcq[i];
        if (cq_has(f, q))
            qsort(&f->cands[f->head[q]], f->end[q] - f->head[q], sizeof(fcand), fcand_cmp);
    }
}

/* Moves each group's first candidate in Kueue's ordering to its front
 * (all a pass that pops one candidate per queue looks at). */
static void heads_first(fctx *f)
{
    for (size_t i = 0; i < f->ntcq; i++) {
        int q = f->tcq[i];
        if (!cq_has(f, q))
            continue;
        fcand *g = &f->cands[f->head[q]];
        size_t n = f->end[q] - f->head[q], best = 0;
        for (size_t j = 1; j < n; j++)
            if (cu_cand_cmp(g[j].wl, g[j].same, g[best].wl, g[best].same) < 0)
                best = j;
        fcand tmp = g[0];
        g[0] = g[best];
        g[best] = tmp;
    }
}

/* Whether pass 1 can be skipped: it would take nothing, whatever order
 * it visits the queues in. Pass 1 changes the tree only by taking a
 * candidate, so while it takes none every check sees the starting tree:
 * when no candidate of any queue it may visit passes the strategy
 * against that tree, it takes none, and it leaves in retry exactly the
 * candidates of the queues it visits. Decided for the common shape only:
 * the preemptor's cohort is a root whose children are all
 * ClusterQueues, no pass-1 candidate in the preemptor's own queue (taken
 * at once), the preemptor borrowing (otherwise candidates are taken
 * unchecked). A flat tree's pass 1 visits every queue with candidates and
 * a DRS above 0, each target's almost-LCA pair being (preemptor, target). */
static int pass1_idle(fctx *f, cu_fs_strategy s, int within)
{
    const cu_qnode *p = f->c->node;
    if (!p->parent || p->parent != f->root)
        return 0;
    for (size_t i = 0; i < f->root->nkids; i++)
        if (!f->root->kids[i]->is_cq)
            return 0;
    if (within || cq_has(f, cq_index(f, f->c)))
        return 0;
    drs pnew = cu_drs_node(f->e, p);
    for (size_t i = 0; i < f->ntcq; i++) {
        int q = f->tcq[i];
        if (!cq_has(f, q))
            continue;
        const cu_qnode *t = f->e->cqs.items[q].node;
        drs told = cu_drs_node(f->e, t);
        if (told.ratio == 0)
            continue; /* never a target */
        if (cu_drs_zero_weight_borrows(pnew) && !cu_drs_zero_weight_borrows(told))
            continue; /* all to retry */
        enum { NFAILED = 4 };
        const ewl *failed[NFAILED];
        size_t nfailed = 0;
        for (size_t j = f->head[q]; j < f->end[q]; j++) {
            ewl *v = f->cands[j].wl;
            int known = 0;
            for (size_t k = 0; k < nfailed && !known; k++)
                known = same_usage(v, failed[k]);
            if (known)
                continue;
            drs tnew = cu_drs_with(f->e, t, v->nuse, v->use_fr, v->use_amt, -1);
            if (strategy_ok(s, pnew, told, tnew))
                return 0;
            if (nfailed < NFAILED)
                failed[nfailed++] = v;
        }
    }
    return 1;
}

/* Whether pass 2 over a flat tree (see pass1_idle) with the starting tree
 * can take anything: some queue with candidates and a DRS above 0 whose
 * share is above the preemptor's. If none, it takes nothing. */
static int pass2_may_take(fctx *f)
{
    drs pnew = cu_drs_node(f->e, f->c->node);
    for (size_t i = 0; i < f->ntcq; i++) {
        int q = f->tcq[i];
        if (!cq_has(f, q))
            continue;
        drs told = cu_drs_node(f->e, f->e->cqs.items[q].node);
        if ((told.ratio != 0 || q == cq_index(f, f->c)) && cu_drs_cmp(pnew, told) < 0)
            return 1;
    }
    return 0;
}

cu_err cu_fair_targets(cu_engine *e, ecq *c, ewl *w, size_t nuse, const int *fr, const int64_t *amt,
                       const int *frs, size_t nfrs, const tasplan *tas, targets *out)
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
    f.tas = tas;
    f.dirty = -1;
    const cu_cluster_queue *q = c->obj;
    size_t ncq = e->cqs.n, nco = e->cohorts.n ? e->cohorts.n : 1;
    f.root = cu_quota_root(c->node);
    f.tcq = cu_arena_alloc(ar, ncq * sizeof(int));
    f.head = cu_arena_alloc(ar, ncq * sizeof(size_t));
    f.end = cu_arena_alloc(ar, ncq * sizeof(size_t));
    if (!f.tcq || !f.head || !f.end || tree_cqs(&f))
        return CU_ENOMEM;
    /* candidates */
    size_t cap = 0;
    for (size_t i = 0; i < f.ntcq; i++)
        cap += e->cqs.items[f.tcq[i]].nadm;
    if (!cap)
        return CU_OK;
    f.cands = cu_arena_alloc(ar, cap * sizeof(fcand));
    if (!f.cands)
        return CU_ENOMEM;
    if (q->preemption.within_cq != CU_PP_NEVER) {
        size_t start = f.ncands;
        for (size_t i = 0; i < c->nadm; i++) {
            ewl *v = c->adm[i];
            if (v != w && cu_wl_uses_any(v, frs, nfrs) &&
                cu_policy_ok(q->preemption.within_cq, w, v) && !cu_preempt_protected(e, v))
                f.cands[f.ncands++] = (fcand){ v, c, 1 };
        }
        add_group(&f, c, start);
    }
    if (c->node->parent && q->preemption.reclaim != CU_PP_NEVER)
        for (size_t j = 0; j < f.ntcq; j++) {
            ecq *o = &e->cqs.items[f.tcq[j]];
            if (o == c || !o->node->parent || cu_within_nominal(o->node, frs, nfrs))
                continue;
            size_t start = f.ncands;
            for (size_t k = 0; k < o->nadm; k++) {
                ewl *v = o->adm[k];
                if (cu_wl_uses_any(v, frs, nfrs) && cu_policy_ok(q->preemption.reclaim, w, v) &&
                    !cu_preempt_protected(e, v))
                    f.cands[f.ncands++] = (fcand){ v, o, 0 };
            }
            add_group(&f, o, start);
        }
    if (!f.ncands)
        return CU_OK;
    size_t nretry = 0;
    cu_fs_strategy strategies[2] = { CU_FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE,
                                     CU_FS_LESS_THAN_INITIAL_SHARE };
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
    cu_err err = CU_OK;
    fcand *retry = NULL;
    int within = cu_within_nominal(c->node, frs, nfrs);
    int skip1 = pass1_idle(&f, strategies[0], within);
    if (skip1 && (nstrat < 2 || !pass2_may_take(&f)))
        goto done; /* neither pass would take anything */
    f.order = cu_arena_alloc(ar, f.ncands * sizeof(fcand *));
    f.key = cu_arena_alloc(ar, ncq * sizeof(dkey));
    f.zero = cu_arena_alloc(ar, ncq);
    f.hpos = cu_arena_alloc(ar, ncq * sizeof(int));
    f.kidpos = cu_arena_alloc(ar, ncq * sizeof(int));
    f.heap = cu_arena_alloc(ar, nco * sizeof(fheap));
    f.cokids = cu_arena_alloc(ar, nco * sizeof(*f.cokids));
    f.ncokids = cu_arena_alloc(ar, nco * sizeof(size_t));
    f.co_pruned = cu_arena_alloc(ar, nco);
    f.co_anc = cu_arena_alloc(ar, nco);
    f.targets = cu_arena_alloc(ar, f.ncands * sizeof(ewl *));
    f.reasons = cu_arena_alloc(ar, f.ncands * sizeof(char *));
    retry = cu_arena_alloc(ar, f.ncands * sizeof(fcand));
    if (!f.order || !f.key || !f.zero || !f.hpos || !f.kidpos || !f.heap || !f.cokids ||
        !f.ncokids || !f.co_pruned || !f.co_anc || !f.targets || !f.reasons || !retry) {
        err = CU_ENOMEM;
        goto done;
    }
    for (size_t i = 0; i < f.ncands; i++)
        f.order[i] = &f.cands[i];
    for (const cu_qnode *x = c->node->parent; x; x = x->parent)
        f.co_anc[x->id] = 1;
    /* pass 1 */
    if (!skip1) {
        sort_groups(&f);
        if ((err = build_heaps(&f)))
            goto done;
    }
    for (; !skip1;) {
        int t = iter_next(&f);
        if (t < 0)
            break;
        f.dirty = t;
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
        drs pnew = cu_drs_node(e, pa), told = cu_drs_node(e, ta);
        if (cu_drs_zero_weight_borrows(pnew) && !cu_drs_zero_weight_borrows(told)) {
            while (cq_has(&f, t))
                retry[nretry++] = *cq_pop(&f, t);
            continue;
        }
        /* The strategy check of a candidate depends on the tree and on
         * its usage vector only, and the tree is the same until one is
         * taken: a candidate with the usage of one that already failed
         * here fails too (queues hold few distinct workload shapes). */
        enum { NFAILED = 4 };
        const ewl *failed[NFAILED];
        size_t nfailed = 0;
        int took = 0;
        while (cq_has(&f, t)) {
            fcand *k = cq_pop(&f, t);
            int known = 0;
            for (size_t j = 0; j < nfailed && !known; j++)
                known = same_usage(k->wl, failed[j]);
            if (!known) {
                drs tnew;
                if (ta == T->node) {
                    tnew = cu_drs_with(e, ta, k->wl->nuse, k->wl->use_fr, k->wl->use_amt, -1);
                } else {
                    cu_engine_apply_usage(e, k->wl, -1);
                    tnew = cu_drs_node(e, ta);
                    cu_engine_apply_usage(e, k->wl, 1);
                }
                if (strategy_ok(strategies[0], pnew, told, tnew)) {
                    took = 1;
                    success = yield(&f, k, PR_FAIR_SHARING);
                    break;
                }
                if (nfailed < NFAILED)
                    failed[nfailed++] = k->wl;
            }
            retry[nretry++] = *k;
        }
        if (took && success)
            break;
    }
    /* pass 2: LessThanInitialShare, at most one workload per queue */
    if (!success && nstrat > 1 && (nretry || skip1)) {
        if (skip1) {
            /* what pass 1 would have left: every candidate of the queues
             * it visits, which are the ones pass 2 may visit, each queue
             * in ordering; pass 2 pops one per queue */
            heads_first(&f);
        } else {
            regroup_retry(&f, retry, nretry);
        }
        if ((err = build_heaps(&f)))
            goto done;
        for (;;) {
            int t = iter_next(&f);
            if (t < 0)
                break;
            f.dirty = t;
            ecq *T = &e->cqs.items[t];
            const cu_qnode *pa, *ta;
            almost_lca(c->node, T->node, &pa, &ta);
            drs pnew = cu_drs_node(e, pa), told = cu_drs_node(e, ta);
            fcand *k = cq_pop(&f, t);
            if (cu_drs_cmp(pnew, told) < 0 && (success = yield(&f, k, PR_FAIR_SHARING)))
                break;
            f.head[t] = f.end[t]; /* drop the queue */
        }
    }
done:
    preemptor_usage(&f, -1);
    f.preemptor_added = 0;
    if (!err && success && f.nt > 1) {
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
    if (err)
        return err;
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
