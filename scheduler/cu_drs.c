/*
 * cu_drs.c - Kueue's Dominant Resource Share (DRS) of ClusterQueues and
 * Cohorts, with its caches.
 *
 *
 * DRS(node) = 0 for a root; otherwise, over resources r,
 *   max_r (1000 * sum_fr(r) max(0, usage - subtreeQuota)
 *           / sum_fr(r) potentialAvailable(parent, fr))
 * divided by the node's weight (weight 0 while borrowing = infinite).
 * Comparisons use the exact ratio; status.weightedShare is its ceiling.
 *
 * Every usage change made here is temporary and undone before returning.
 */
#include "cu_drs_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

drs cu_drs_node(const cu_engine *ce, const cu_qnode *n)
{
    cu_engine *e = (cu_engine *)ce; /* caches only */
    drs d = { 0.0, n->fs_weight };
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

/* The usage of fr at ClusterQueue node n once the usage vector (ufr,
 * uamt) is added with sign, as cu_quota_add_usage would leave it at n: a
 * ClusterQueue keeps every change in full (lending limits only shape what
 * is passed upwards). Lets a ClusterQueue's DRS be asked "with / without
 * this workload" without changing the tree. */
int64_t cu_drs_usage_with(const cu_qnode *n, size_t fr, size_t nuse, const int *ufr,
                          const int64_t *uamt, int sign)
{
    int64_t u = n->usage[fr];
    for (size_t i = 0; i < nuse; i++)
        if ((size_t)ufr[i] == fr && sign * uamt[i] != 0)
            u = cu_qty_sat_add(u, sign * uamt[i]);
    return u;
}

static drs node_drs_raw(cu_engine *e, const cu_qnode *n)
{
    return cu_drs_with(e, n, 0, NULL, NULL, 0);
}

drs cu_drs_with(cu_engine *e, const cu_qnode *n, size_t nuse, const int *ufr, const int64_t *uamt,
                int sign)
{
    drs d = { 0.0, n->fs_weight };
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
            int64_t b = cu_drs_usage_with(n, fr, nuse, ufr, uamt, sign) - n->subtree[fr];
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

int cu_drs_zero_weight_borrows(drs d) { return d.weight == 0 && d.ratio != 0; }

double cu_drs_weighted(drs d)
{
    if (d.ratio == 0)
        return 0;
    if (d.weight == 0)
        return INFINITY;
    return d.ratio / ((double)d.weight / 1000.0);
}

/* Kueue's CompareDRS. */
int cu_drs_cmp(drs a, drs b)
{
    int za = cu_drs_zero_weight_borrows(a), zb = cu_drs_zero_weight_borrows(b);
    if (za && zb)
        return a.ratio < b.ratio ? -1 : a.ratio > b.ratio;
    if (za)
        return 1;
    if (zb)
        return -1;
    double x = cu_drs_weighted(a), y = cu_drs_weighted(b);
    return x < y ? -1 : x > y;
}

int64_t cu_fs_weighted_share(const cu_engine *e, const cu_qnode *n)
{
    drs d = cu_drs_node(e, n);
    if (cu_drs_zero_weight_borrows(d))
        return INT64_MAX;
    double w = cu_drs_weighted(d);
    if (w >= 9.2e18)
        return INT64_MAX;
    return (int64_t)ceil(w);
}

/* The node on q's path whose parent is anc (q's own node if its parent). */
const cu_qnode *cu_child_on_path(const cu_qnode *q, const cu_qnode *anc)
{
    while (q && q->parent != anc)
        q = q->parent;
    return q;
}
