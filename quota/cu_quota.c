/*
 * cu_quota.c - Kueue's resource-node arithmetic (see cu_quota.h for the
 * invariants). All arithmetic saturates: quotas near INT64_MAX behave as
 * unlimited instead of wrapping.
 */
#include "cu_quota.h"

#include <stdlib.h>
#include <string.h>

cu_qnode *cu_qnode_new(const char *name, int is_cq, size_t nfr)
{
    cu_qnode *n = calloc(1, sizeof(*n));
    if (!n)
        return NULL;
    n->name = name;
    n->is_cq = is_cq;
    n->nfr = nfr;
    n->fs_weight = 1000;
    size_t k = nfr ? nfr : 1;
    n->nominal = calloc(k, sizeof(int64_t));
    n->blimit = malloc(k * sizeof(int64_t));
    n->llimit = malloc(k * sizeof(int64_t));
    n->subtree = calloc(k, sizeof(int64_t));
    n->usage = calloc(k, sizeof(int64_t));
    n->declared = calloc(k, 1);
    if (!n->nominal || !n->blimit || !n->llimit || !n->subtree || !n->usage || !n->declared) {
        cu_qnode_free(n);
        return NULL;
    }
    for (size_t i = 0; i < k; i++)
        n->blimit[i] = n->llimit[i] = CU_QUOTA_UNSET;
    return n;
}

void cu_qnode_free(cu_qnode *n)
{
    if (!n)
        return;
    free(n->nominal);
    free(n->blimit);
    free(n->llimit);
    free(n->subtree);
    free(n->usage);
    free(n->declared);
    free(n->kids);
    free(n);
}

static void detach(cu_qnode *n)
{
    cu_qnode *p = n->parent;
    if (!p)
        return;
    for (size_t i = 0; i < p->nkids; i++) {
        if (p->kids[i] == n) {
            memmove(&p->kids[i], &p->kids[i + 1], (p->nkids - i - 1) * sizeof(*p->kids));
            p->nkids--;
            break;
        }
    }
    n->parent = NULL;
}

cu_err cu_qnode_set_parent(cu_qnode *n, cu_qnode *parent)
{
    detach(n);
    if (!parent)
        return CU_OK;
    if (parent->nkids == parent->capkids) {
        size_t cap = parent->capkids ? parent->capkids * 2 : 4;
        cu_qnode **k = realloc(parent->kids, cap * sizeof(*k));
        if (!k)
            return CU_ENOMEM;
        parent->kids = k;
        parent->capkids = cap;
    }
    parent->kids[parent->nkids++] = n;
    n->parent = parent;
    return CU_OK;
}

cu_qnode *cu_quota_root(cu_qnode *n)
{
    while (n->parent)
        n = n->parent;
    return n;
}

int64_t cu_quota_local(const cu_qnode *n, size_t fr)
{
    if (n->llimit[fr] == CU_QUOTA_UNSET || n->llimit[fr] >= n->subtree[fr])
        return 0;
    /* plain arithmetic: an unlimited subtree minus a finite lendingLimit
     * keeps exactly lendingLimit lendable */
    return n->subtree[fr] - n->llimit[fr];
}

/* What n lends to its parent: its subtree quota minus the local part. */
static int64_t lent(const cu_qnode *n, size_t fr)
{
    if (n->llimit[fr] == CU_QUOTA_UNSET || n->llimit[fr] >= n->subtree[fr])
        return n->subtree[fr];
    return n->llimit[fr];
}

void cu_quota_recompute(cu_qnode *n)
{
    for (size_t i = 0; i < n->nkids; i++)
        cu_quota_recompute(n->kids[i]);
    for (size_t fr = 0; fr < n->nfr; fr++) {
        int64_t s = n->nominal[fr];
        if (!n->is_cq) {
            for (size_t i = 0; i < n->nkids; i++) {
                const cu_qnode *k = n->kids[i];
                s = cu_qty_sat_add(s, lent(k, fr));
            }
        }
        n->subtree[fr] = s;
    }
    n->gen++;
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

int64_t cu_quota_available(const cu_qnode *n, size_t fr)
{
    if (!n->parent)
        return cu_qty_sat_sub(n->subtree[fr], n->usage[fr]);
    int64_t local = cu_quota_local(n, fr);
    int64_t local_avail = max64(0, cu_qty_sat_sub(local, n->usage[fr]));
    int64_t parent_avail = cu_quota_available(n->parent, fr);
    if (n->blimit[fr] != CU_QUOTA_UNSET) {
        int64_t stored = lent(n, fr);
        int64_t used = max64(0, cu_qty_sat_sub(n->usage[fr], local));
        parent_avail =
            min64(parent_avail, cu_qty_sat_add(cu_qty_sat_sub(stored, used), n->blimit[fr]));
    }
    return cu_qty_sat_add(local_avail, parent_avail);
}

int64_t cu_quota_potential(const cu_qnode *n, size_t fr)
{
    if (!n->parent)
        return n->subtree[fr];
    int64_t avail = cu_qty_sat_add(cu_quota_local(n, fr), cu_quota_potential(n->parent, fr));
    if (n->blimit[fr] != CU_QUOTA_UNSET)
        avail = min64(avail, cu_qty_sat_add(n->subtree[fr], n->blimit[fr]));
    return avail;
}

int cu_quota_borrowing(const cu_qnode *n, size_t fr) { return n->usage[fr] > n->subtree[fr]; }

void cu_quota_add_usage(cu_qnode *n, size_t fr, int64_t v)
{
    while (n && v != 0) {
        int64_t local = cu_quota_local(n, fr);
        int64_t before = max64(0, cu_qty_sat_sub(n->usage[fr], local));
        n->usage[fr] = cu_qty_sat_add(n->usage[fr], v);
        n->gen++;
        int64_t after = max64(0, cu_qty_sat_sub(n->usage[fr], local));
        v = after - before;
        n = n->parent;
    }
}

const cu_qnode *cu_quota_borrow_node(const cu_qnode *n, size_t fr, int64_t v)
{
    for (;;) {
        if (cu_qty_sat_add(n->usage[fr], v) <= n->subtree[fr] || !n->parent)
            return n;
        /* the part that does not fit in n's local (unlent) quota goes up */
        int64_t local_avail = max64(0, cu_qty_sat_sub(cu_quota_local(n, fr), n->usage[fr]));
        v = max64(0, v - local_avail);
        n = n->parent;
    }
}

int cu_quota_borrow_level(const cu_qnode *n, size_t fr, int64_t v)
{
    const cu_qnode *stop = cu_quota_borrow_node(n, fr, v);
    int level = 0;
    for (; n != stop; n = n->parent)
        level++;
    return level;
}

static cu_err check_node(const cu_qnode *n, int64_t (*cq_usage)(const cu_qnode *, size_t, void *),
                         void *ud, int check_limits, cu_diag *d)
{
    for (size_t i = 0; i < n->nkids; i++) {
        cu_err err = check_node(n->kids[i], cq_usage, ud, check_limits, d);
        if (err)
            return err;
    }
    const char *kind = n->is_cq ? "ClusterQueue" : "Cohort";
    for (size_t fr = 0; fr < n->nfr; fr++) {
        int64_t want;
        if (n->is_cq) {
            if (!cq_usage)
                goto limits;
            want = cq_usage(n, fr, ud);
        } else {
            want = 0;
            for (size_t i = 0; i < n->nkids; i++) {
                const cu_qnode *k = n->kids[i];
                want = cu_qty_sat_add(
                    want, max64(0, cu_qty_sat_sub(k->usage[fr], cu_quota_local(k, fr))));
            }
        }
        if (want != n->usage[fr]) {
            cu_diag_error(d, "%s %s: usage of fr %zu is %lld, expected %lld", kind, n->name, fr,
                          (long long)n->usage[fr], (long long)want);
            return CU_EINVAL;
        }
    limits:
        if (!check_limits)
            continue;
        if (n->usage[fr] > 0 && n->usage[fr] > cu_quota_potential(n, fr)) {
            cu_diag_error(d, "%s %s: usage of fr %zu is %lld, above its maximum %lld", kind,
                          n->name, fr, (long long)n->usage[fr],
                          (long long)cu_quota_potential(n, fr));
            return CU_EINVAL;
        }
        if (n->parent && n->blimit[fr] != CU_QUOTA_UNSET &&
            n->usage[fr] > cu_qty_sat_add(n->subtree[fr], n->blimit[fr])) {
            cu_diag_error(d,
                          "%s %s: usage of fr %zu is %lld, above quota %lld + borrowingLimit %lld",
                          kind, n->name, fr, (long long)n->usage[fr], (long long)n->subtree[fr],
                          (long long)n->blimit[fr]);
            return CU_EINVAL;
        }
    }
    if (!n->parent && check_limits) {
        for (size_t fr = 0; fr < n->nfr; fr++) {
            if (n->usage[fr] > n->subtree[fr] && n->usage[fr] > 0) {
                cu_diag_error(d, "%s %s: root usage of fr %zu is %lld, above its quota %lld", kind,
                              n->name, fr, (long long)n->usage[fr], (long long)n->subtree[fr]);
                return CU_EINVAL;
            }
        }
    }
    return CU_OK;
}

cu_err cu_quota_check(const cu_qnode *root,
                      int64_t (*cq_usage)(const cu_qnode *n, size_t fr, void *ud), void *ud,
                      cu_diag *d)
{
    return check_node(root, cq_usage, ud, 1, d);
}

cu_err cu_quota_check_ex(const cu_qnode *root,
                         int64_t (*cq_usage)(const cu_qnode *n, size_t fr, void *ud), void *ud,
                         int check_limits, cu_diag *d)
{
    return check_node(root, cq_usage, ud, check_limits, d);
}
