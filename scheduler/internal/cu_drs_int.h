/*
 * cu_drs_int.h - Dominant Resource Share of ClusterQueues and Cohorts
 * (cu_drs.c), used by the fair-sharing tournament and preemption and the
 * views. Caches live in the engine; usage is only read.
 */
#ifndef CU_DRS_INT_H
#define CU_DRS_INT_H

#include "cu_state_int.h"

typedef struct drs {
    double ratio;   /* borrowed * 1000 / lendable of the dominant resource */
    int64_t weight; /* milli */
} drs;

/* status.fairSharing.weightedShare of node n (ceil; INT64_MAX for a
 * borrowing zero-weight node). */
int64_t cu_fs_weighted_share(const cu_engine *e, const cu_qnode *n);

/* Kueue's CompareDRS: <0, 0, >0 as a's share is below, equal to, above b's. */
int cu_drs_cmp(drs a, drs b);
/* DRS of node n, cached in e until n's usage generation changes. */
drs cu_drs_node(const cu_engine *ce, const cu_qnode *n);
/* 1 when d is a zero-weight node that borrows (an infinite share). */
int cu_drs_zero_weight_borrows(drs d);
/* d's ratio divided by its weight (INFINITY for weight 0 while borrowing). */
double cu_drs_weighted(drs d);
/* DRS of n with its usage as cu_drs_usage_with gives (nuse 0: as it is;
 * nuse > 0 only for a ClusterQueue). Reads e's caches; changes nothing. */
drs cu_drs_with(cu_engine *e, const cu_qnode *n, size_t nuse, const int *ufr, const int64_t *uamt,
                int sign);
/* The usage of fr at ClusterQueue node n once the usage vector (ufr, uamt)
 * is added with sign, as cu_quota_add_usage would leave it at n. */
int64_t cu_drs_usage_with(const cu_qnode *n, size_t fr, size_t nuse, const int *ufr,
                          const int64_t *uamt, int sign);
/* The node on q's path whose parent is anc (q's own node if its parent). */
const cu_qnode *cu_child_on_path(const cu_qnode *q, const cu_qnode *anc);

#endif
