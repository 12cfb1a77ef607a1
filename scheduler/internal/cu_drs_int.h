/*
 * cu_drs_int.h - Dominant Resource Share of ClusterQueues and Cohorts
 * (cu_drs.c), used by the fair-sharing tournament and preemption and the
 * views. Caches live in the engine; usage is only read.
 */
#ifndef CU_DRS_INT_H
#define CU_DRS_INT_H

#include "cu_state_int.h"

typedef struct drs {
    double ratio;      /* borrowed * 1000 / lendable of the dominant resource */
    int64_t weight;    /* milli */
} drs;

/* status.fairSharing.weightedShare of node n (ceil; INT64_MAX for a
 * borrowing zero-weight node). */
int64_t cu_fs_weighted_share(const cu_engine *e, const cu_qnode *n);

int cmp_drs(drs a, drs b);

drs node_drs(const cu_engine *ce, const cu_qnode *n);

int zero_weight_borrows(drs d);

double weighted(drs d);

drs drs_with(cu_engine *e, const cu_qnode *n, size_t nuse, const int *ufr,
             const int64_t *uamt, int sign);

int64_t usage_with(const cu_qnode *n, size_t fr, size_t nuse, const int *ufr,
                   const int64_t *uamt, int sign);

const cu_qnode *child_on_path(const cu_qnode *q, const cu_qnode *anc);

#endif
