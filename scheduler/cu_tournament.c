/*
 * cu_tournament.c - fair sharing's admission tournament: which of a round's
 * entries goes next across a cohort tree, by DRS.
 *
 * Every usage change made here is temporary and undone before returning.
 */
#include "cu_cycle_int.h"
#include "cu_drs_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void add_asg(cu_engine *e, ecq *c, const asg *a, int sign)
{
    for (size_t i = 0; i < a->nuse; i++)
        cu_quota_add_usage(c->node, (size_t)a->fr[i], sign * a->amt[i]);
    (void)e;
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
typedef struct fsval {
    drs d;
    int bor;
} fsval;

static fsval entry_value(cu_engine *e, entry *en, const cu_qnode *cohort)
{
    fsval v;
    const cu_qnode *q = en->cq->node;
    /* Cached within one pick; and, when the entry's ClusterQueue is a
     * child of cohort, for as long as that queue's usage is unchanged: the
     * value then depends on the queue's usage (and quotas) only, and every
     * usage change bumps the queue's gen. */
    if (en->vnode == cohort &&
        (en->vstamp == e->fs_stamp || (q->parent == cohort && en->vgen == q->gen))) {
        v.d.ratio = en->vratio;
        v.d.weight = en->vweight;
        v.bor = en->vbor;
        return v;
    }
    const cu_qnode *k = cu_child_on_path(q, cohort);
    if (k == q) {
        /* the queue itself: asked without changing the tree */
        v.d = cu_drs_with(e, q, en->a.nuse, en->a.fr, en->a.amt, 1);
        v.bor = 0;
        for (size_t i = 0; i < en->a.nuse && !v.bor; i++)
            v.bor = cu_drs_usage_with(q, (size_t)en->a.fr[i], en->a.nuse, en->a.fr, en->a.amt, 1) >
                    q->subtree[en->a.fr[i]];
    } else {
        add_asg(e, en->cq, &en->a, 1);
        v.d = cu_drs_node(e, k);
        v.bor = borrowing_on(k, &en->a);
        add_asg(e, en->cq, &en->a, -1);
    }
    en->vstamp = e->fs_stamp;
    en->vnode = cohort;
    en->vgen = q->gen; /* with the usage put back */
    en->vratio = v.d.ratio;
    en->vweight = v.d.weight;
    en->vbor = v.bor;
    return v;
}

/* Kueue's fair-sharing iterator "less" as a comparison: < 0 when a is
 * better than b at cohort; 0 only for equal keys. */
static int fs_cmp(cu_engine *e, entry *a, entry *b, const cu_qnode *cohort)
{
    fsval va = entry_value(e, a, cohort), vb = entry_value(e, b, cohort);
    if (va.bor != vb.bor)
        return va.bor ? 1 : -1;
    int c = cu_drs_cmp(va.d, vb.d);
    if (c)
        return c;
    if (a->wl->qi.prio != b->wl->qi.prio)
        return a->wl->qi.prio > b->wl->qi.prio ? -1 : 1;
    if (a->wl->qi.ts != b->wl->qi.ts)
        return a->wl->qi.ts < b->wl->qi.ts ? -1 : 1;
    return strcmp(a->wl->key, b->wl->key);
}

static int fs_less(cu_engine *e, entry *a, entry *b, const cu_qnode *cohort)
{
    return fs_cmp(e, a, b, cohort) < 0;
}

typedef struct tcand {
    entry *en;
    const cu_qnode *child;
} tcand;

static int tcand_cmp(const void *pa, const void *pb)
{
    const tcand *a = pa, *b = pb;
    if (a->child != b->child)
        return (uintptr_t)a->child < (uintptr_t)b->child ? -1 : 1;
    return 0;
}

/* The tournament below cohort when every entry sits in a ClusterQueue
 * child of cohort: each is its group's winner (one entry per ClusterQueue
 * in a round), and the groups' winners meet in child-address order, a
 * later one winning only when strictly better. fs_cmp is a total order,
 * so that is the least entry, the lowest child address among equals. */
static entry *flat_tournament(cu_engine *e, const cu_qnode *cohort, entry **cand, size_t ncand)
{
    entry *best = cand[0];
    for (size_t j = 1; j < ncand; j++) {
        int c = fs_cmp(e, cand[j], best, cohort);
        if (c < 0 || (c == 0 && (uintptr_t)cand[j]->cq->node < (uintptr_t)best->cq->node))
            best = cand[j];
    }
    return best;
}

/* Winner of the tournament below cohort among the given entries: the
 * entries are grouped by the child of cohort they sit under; a child
 * cohort's group plays its own tournament first. */
static entry *tournament(cu_engine *e, const cu_qnode *cohort, entry **cand, size_t ncand)
{
    if (!ncand)
        return NULL;
    size_t direct = 0;
    while (direct < ncand && cand[direct]->cq->node->parent == cohort)
        direct++;
    if (direct == ncand)
        return flat_tournament(e, cohort, cand, ncand);
    tcand *t = cu_arena_alloc(&e->scratch, ncand * sizeof(tcand));
    entry **sub = cu_arena_alloc(&e->scratch, ncand * sizeof(entry *));
    if (!t || !sub)
        return cand[0];
    for (size_t j = 0; j < ncand; j++) {
        t[j].en = cand[j];
        t[j].child = cu_child_on_path(cand[j]->cq->node, cohort);
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

/* One round's entries grouped for the picks. Relies on two facts of the
 * round's loop (cu_cycle.c): an entry, once done, stays done; and a
 * workload's plan changes only while its own entry is processed (then
 * done). So an entry that is not eligible for a pass never becomes
 * eligible again in the round, and the cursors only move forward. */
typedef struct fs_round {
    int *top;
    size_t ntop; /* entries without a cohort, entry order */
    int *par;
    size_t npar;                 /* entries under a cohort, entry order */
    size_t top_at[2], par_at[2]; /* per pass (1: preemptors): entries before
                                       are not eligible any more */
    int **tree;
    size_t *ntree; /* per tree id: its entries not yet known
                                       done, entry order */
} fs_round;

static int fs_eligible(const entry *en, int preemptors)
{
    return !en->done && (!preemptors || en->wl->plan);
}

/* Returns the grouping of ents for this round, built on the first call.
 * Arena: e->cycle (freed when the next round starts). */
static fs_round *fs_round_of(cu_engine *e, entry *ents, size_t n)
{
    if (e->fsr.g && e->fsr.round == e->round && e->fsr.ents == ents && e->fsr.n == n)
        return e->fsr.g;
    e->fsr.g = NULL;
    cu_arena *ar = &e->cycle;
    size_t nt = e->ntrees > 0 ? (size_t)e->ntrees : 1;
    fs_round *r = cu_arena_alloc(ar, sizeof(*r));
    int *top = cu_arena_alloc(ar, (n ? n : 1) * sizeof(int));
    int *par = cu_arena_alloc(ar, (n ? n : 1) * sizeof(int));
    int *flat = cu_arena_alloc(ar, (n ? n : 1) * sizeof(int));
    int **tree = cu_arena_alloc(ar, nt * sizeof(int *));
    size_t *ntree = cu_arena_alloc(ar, nt * sizeof(size_t));
    if (!r || !top || !par || !flat || !tree || !ntree)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (!ents[i].cq->node->parent) {
            top[r->ntop++] = (int)i;
            continue;
        }
        par[r->npar++] = (int)i;
        ntree[ents[i].cq->tree]++;
    }
    size_t off = 0;
    for (size_t t = 0; t < nt; t++) {
        tree[t] = &flat[off];
        off += ntree[t];
        ntree[t] = 0;
    }
    for (size_t j = 0; j < r->npar; j++) {
        int t = ents[par[j]].cq->tree;
        tree[t][ntree[t]++] = par[j];
    }
    r->top = top;
    r->par = par;
    r->tree = tree;
    r->ntree = ntree;
    e->fsr.round = e->round;
    e->fsr.ents = ents;
    e->fsr.n = n;
    e->fsr.g = r;
    return r;
}

static int fs_pick(cu_engine *e, fs_round *r, entry *ents, int preemptors)
{
    /* ClusterQueues without a cohort first, in entry order; then tree by
     * tree (trees do not share quota, so their order does not matter),
     * the tree of the first eligible entry under a cohort */
    size_t *at = &r->top_at[preemptors];
    while (*at < r->ntop && !fs_eligible(&ents[r->top[*at]], preemptors))
        (*at)++;
    if (*at < r->ntop)
        return r->top[*at];
    at = &r->par_at[preemptors];
    while (*at < r->npar && !fs_eligible(&ents[r->par[*at]], preemptors))
        (*at)++;
    if (*at == r->npar)
        return -1;
    int first = r->par[*at];
    int t = ents[first].cq->tree;
    int *list = r->tree[t];
    entry **cand = cu_arena_alloc(&e->scratch, r->ntree[t] * sizeof(entry *));
    if (!cand)
        return first;
    size_t m = 0, alive = 0;
    for (size_t j = 0; j < r->ntree[t]; j++) {
        entry *en = &ents[list[j]];
        if (en->done)
            continue; /* for good */
        list[alive++] = list[j];
        if (fs_eligible(en, preemptors))
            cand[m++] = en;
    }
    r->ntree[t] = alive;
    entry *w = tournament(e, cu_quota_root(ents[first].cq->node), cand, m);
    return w ? (int)(w - ents) : first;
}

int cu_fs_next(cu_engine *e, entry *ents, size_t n)
{
    e->fs_stamp++;
    fs_round *r = fs_round_of(e, ents, n);
    if (!r)
        return -1;
    /* a workload whose preemptions released quota goes first, as in the
     * classic order (see cu_cycle.c entry_cmp) */
    int i = fs_pick(e, r, ents, 1);
    if (i < 0)
        i = fs_pick(e, r, ents, 0);
    cu_arena_free(&e->scratch);
    return i;
}
