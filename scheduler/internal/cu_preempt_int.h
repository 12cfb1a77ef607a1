/*
 * cu_preempt_int.h - preemption (classic in cu_preempt.c, fair sharing in
 * cu_fairpreempt.c, shared rules in cu_preempt_policy.c), used by flavor
 * assignment (the oracle), the cycle and the explanations. Every search
 * leaves usage as it found it.
 */
#ifndef CU_PREEMPT_INT_H
#define CU_PREEMPT_INT_H

#include "cu_state_int.h"

/* Flavor-assignment modes, worst to best (Kueue's granular modes). */
enum { MODE_NOFIT = 0, MODE_NOCAND = 1, MODE_PREEMPT = 2, MODE_RECLAIM = 3, MODE_FIT = 4 };

/* A flavor assignment for one workload (per-round arena). */
typedef struct asg {
    int mode;
    int borrow;
    int reason;
    const char *msg;
    eassign *ps;
    size_t nuse;
    int *fr;
    int64_t *amt;
    int16_t *tried; /* nps * ngroups: Kueue's LastTriedFlavorIdx (FMEM_*) */
    /* Topology-Aware Scheduling: the pod sets to place (NULL: none), and
     * whether their TAS flavor-resources need preemption (Kueue sets the
     * TAS pod sets' flavors to Preempt when placement needs it or the
     * quota does) */
    const tasplan *tas;
    int tas_preempt;
} asg;

/* Flavor memory values (ewl.fmem, asg.tried); >= 0: a flavor index. */
#define FMEM_NONE ((int16_t)-2)
#define FMEM_LAST ((int16_t)-1)

/* Preemption reasons (Preempted condition). */
#define PR_IN_CQ "InClusterQueue"
#define PR_RECLAIM "InCohortReclamation"
#define PR_RECLAIM_WHILE_BORROWING "InCohortReclaimWhileBorrowing"
#define PR_FAIR_SHARING "InCohortFairSharing"

/* Classic (or fair-sharing) preemption: fills out with the minimal set
 * of admitted workloads whose removal lets w's assignment a fit in c.
 * With only_fr >= 0 only that flavor-resource (needing val) is
 * considered (the flavor assigner's oracle). Arena: e->cycle. Leaves all
 * usage as it found it. */
cu_err cu_preempt_targets(cu_engine *e, ecq *c, ewl *w, const asg *a, int only_fr, int64_t val,
                          targets *out);
/* The flavor assigner's oracle: MODE_NOCAND, MODE_PREEMPT or MODE_RECLAIM;
 * *borrow is the borrowing level once the targets are gone. */
int cu_preempt_oracle(cu_engine *e, ecq *c, ewl *w, int fr, int64_t val, int *borrow);
/* Fair-sharing preemption (cu_fairpreempt.c): same contract as the classic
 * search, for the usage (fr, amt) of w, contested frs. */
cu_err cu_fair_targets(cu_engine *e, ecq *c, ewl *w, size_t nuse, const int *fr, const int64_t *amt,
                       const int *frs, size_t nfrs, const tasplan *tas, targets *out);
/* Rules both searches share (cu_preempt_policy.c). All borrow. */
/* 1 when v has used up its preemption budget (see cu_engine_opts). */
int cu_preempt_protected(const cu_engine *e, const ewl *v);
/* 1 when policy p lets preemptor pre preempt c. */
int cu_policy_ok(cu_ppolicy p, const ewl *pre, const ewl *c);
/* 1 when w uses a positive amount of one of frs. */
int cu_wl_uses_any(const ewl *w, const int *frs, size_t nfrs);
/* Kueue's IsWithinNominalInResources: usage <= subtree quota on every fr. */
int cu_within_nominal(const cu_qnode *n, const int *frs, size_t nfrs);
/* Kueue's CandidatesOrdering (same: the candidate is in the preemptor's
 * ClusterQueue); <0 when a goes first. */
int cu_cand_cmp(const ewl *a, int a_same, const ewl *b, int b_same);
/* 1 if all of a's usage fits in c now (optionally not borrowing) and,
 * with tas, its TAS pod sets are placed against current usage
 * (cu_preempt.c). */
int cu_asg_fits(cu_engine *e, const ecq *c, const asg *a, int allow_borrow, int tas);

#endif
