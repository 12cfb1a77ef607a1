/*
 * cu_cycle_int.h - the scheduling cycle's entries (cu_cycle.c) and the
 * fair-sharing tournament that orders them (cu_tournament.c).
 */
#ifndef CU_CYCLE_INT_H
#define CU_CYCLE_INT_H

#include "cu_assign_int.h"

/* One head considered in a round. */
typedef struct entry {
    ewl *wl;
    ecq *cq;
    asg a;
    targets t;   /* preemption targets (mode PREEMPT/RECLAIM) */
    int requeue; /* RQ_* of cu_cycle.c */
    const char *msg;
    int reason;
    int done; /* fair sharing: already processed */
    /* fair sharing: value at one cohort level, cached within one pick, or
     * while its ClusterQueue's usage is unchanged (gen; see cu_tournament.c) */
    unsigned vstamp;
    const void *vnode;
    double vratio;
    int64_t vweight;
    int vbor;
    uint64_t vgen;
} entry;

/* Fair sharing: the index of the entry the tournament picks next among
 * those not done, or -1 (cu_tournament.c). */
int cu_fs_next(cu_engine *e, entry *ents, size_t n);

#endif
