/*
 * cu_quota.h - the quota tree: ClusterQueues and Cohorts as resource
 * nodes, with Kueue's arithmetic for nominal quota, borrowing and lending
 * limits over a hierarchy of cohorts.
 *
 * Every node holds, per flavor-resource index fr (0..nfr-1, assigned by the
 * caller):
 *   nominal[fr], blimit[fr] / llimit[fr] (CU_QUOTA_UNSET when unlimited),
 *   subtree[fr] (computed), usage[fr].
 * Invariants (cu_quota_check):
 *   ClusterQueue: subtree = nominal;
 *   Cohort: subtree = nominal + sum over children (child.subtree - local(child));
 *   local(n) = llimit set ? max(0, subtree - llimit) : 0  (never lent upwards);
 *   Cohort usage = sum over children max(0, child.usage - local(child)).
 */
#ifndef CU_QUOTA_H
#define CU_QUOTA_H

#include "cu_base.h"
#include "cu_quantity.h"

#define CU_QUOTA_UNSET (-1)

typedef struct cu_qnode cu_qnode;
struct cu_qnode {
    const char *name; /* borrowed */
    int is_cq;
    cu_qnode *parent; /* NULL for a root */
    cu_qnode **kids;
    size_t nkids, capkids;
    size_t nfr;
    int64_t *nominal, *blimit, *llimit, *subtree, *usage;
    uint8_t *declared; /* fr listed in this node's resourceGroups */
    int64_t fs_weight; /* milli */
    int id;            /* caller's index */
    uint64_t gen;      /* bumped whenever usage or quota changes here */
};

/* Returns a new node with nfr zeroed slots (limits unset); caller frees
 * with cu_qnode_free. name is borrowed. */
cu_qnode *cu_qnode_new(const char *name, int is_cq, size_t nfr);
/* Frees n (not its children or parent). */
void cu_qnode_free(cu_qnode *n);
/* Links n under parent (NULL detaches). Returns CU_ENOMEM on failure. */
cu_err cu_qnode_set_parent(cu_qnode *n, cu_qnode *parent);

/* Recomputes subtree quotas of root's whole tree (post-order). */
void cu_quota_recompute(cu_qnode *root);
/* Returns the root of n's tree. */
cu_qnode *cu_quota_root(cu_qnode *n);

int64_t cu_quota_local(const cu_qnode *n, size_t fr);
/* What n can still use of fr now: its local part plus what its ancestors
 * can lend, within borrowing limits. May be negative after overadmission. */
int64_t cu_quota_available(const cu_qnode *n, size_t fr);
/* What n could use of fr if all usage were zero. */
int64_t cu_quota_potential(const cu_qnode *n, size_t fr);
/* 1 when n uses more of fr than its own subtree quota. */
int cu_quota_borrowing(const cu_qnode *n, size_t fr);
/* Adds (v > 0) or removes (v < 0) usage of fr at n, propagating the part
 * stored in ancestors. */
void cu_quota_add_usage(cu_qnode *n, size_t fr, int64_t v);
/* How many levels above n a request of v more of fr must reach to fit
 * without borrowing beyond that subtree: 0 = within n's own quota. */
int cu_quota_borrow_level(const cu_qnode *n, size_t fr, int64_t v);
/* The node that cu_quota_borrow_level stops at: n itself when the request
 * fits in n's own quota or n has no parent, else the lowest ancestor whose
 * subtree fits it, or the root when none does (Kueue's
 * FindHeightOfLowestSubtreeThatFits walk). */
const cu_qnode *cu_quota_borrow_node(const cu_qnode *n, size_t fr, int64_t v);

/* Checks the invariants of root's tree; on violation writes a message
 * naming the node and fr into d and returns CU_EINVAL. cq_usage(n, fr)
 * supplies the expected usage of each ClusterQueue (from its workloads);
 * it may be NULL to skip that part. Also checks that no node uses more
 * than its potential (nominal + borrowing limits). */
cu_err cu_quota_check(const cu_qnode *root,
                      int64_t (*cq_usage)(const cu_qnode *n, size_t fr, void *ud), void *ud,
                      cu_diag *d);
/* The same; check_limits 0 skips the checks against quotas and limits
 * (usage bookkeeping only), for trees that were over quota from the
 * start (workloads admitted before a quota cut). */
cu_err cu_quota_check_ex(const cu_qnode *root,
                         int64_t (*cq_usage)(const cu_qnode *n, size_t fr, void *ud), void *ud,
                         int check_limits, cu_diag *d);

#endif
