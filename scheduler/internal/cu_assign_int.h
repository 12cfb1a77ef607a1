/*
 * cu_assign_int.h - flavor assignment (cu_assign.c), used by the cycle and
 * the explanations.
 */
#ifndef CU_ASSIGN_INT_H
#define CU_ASSIGN_INT_H

#include "cu_preempt_int.h"

/* A list of borrowed strings whose array grows in an arena (cu_assign.c;
 * the explanations use it too). */
typedef struct cu_strlist {
    const char **s;
    size_t n, cap;
} cu_strlist;

/* Appends s (borrowed; NULL is skipped) to l, growing l's array in a.
 * When the arena cannot grow, s is dropped. */
void cu_strlist_add(cu_arena *a, cu_strlist *l, const char *s);

/* Flavor eligibility (cu_assign.c), shared with the explanations
 * (cu_explain.c): the first NoSchedule/NoExecute taint of f that neither
 * the pod set nor the flavor's own tolerations tolerate (NULL: none);
 * and whether key is one of group g's nodeLabels keys (the rules
 * themselves are api/'s cu_match). Both borrow their arguments. */
const cu_taint *cu_flavor_untolerated(const cu_resource_flavor *f, const cu_podset *ps);
int cu_group_has_key(const egroup *g, const char *key);
/* Kueue's gate on preemption in its flavor assigner (fitsResourceQuota):
 * a flavor-resource fr that does not fit what is unused may be had by
 * preempting only when val, the workload's own request for fr (its pod
 * sets' in this assignment), is at most c's nominal quota for fr; or when
 * may_reclaim (cu_quota_borrow_level_ex: c is in a cohort and the request
 * fits c's quota or a sub-cohort's below the root, with today's usage);
 * or when c may preempt while borrowing (borrowWithinCohort's policy is
 * not Never, or fair sharing is on and reclaimWithinCohort is not Never).
 * Otherwise the flavor is NoFit for fr and nobody is preempted for it. */
int cu_assign_may_preempt(const cu_engine *e, const ecq *c, int fr, int64_t val, int may_reclaim);
/* Topology-Aware Scheduling (cu_assign.c), shared with the explanations:
 * the placement request of w's pod set p with count pods in c (its
 * level, slices, selectors and tolerations; implied TAS unconstrained),
 * allocating in ar; 0, or -1 when out of memory. And Cueue's numbers
 * after Kueue's not-fit message of a placement r in TAS flavor ti
 * ("; quota has 8 nvidia.com/gpu free in flavor h100, but no node has
 * ..."), appended to b. */
int cu_assign_tas_request(cu_arena *ar, const ecq *c, const ewl *w, size_t p, int32_t count,
                          cu_tas_request *q);
void cu_assign_tas_numbers(cu_engine *e, const ecq *c, int ti, const cu_tas_result *r, cu_buf *b);
/* Assigns flavors to w in c and, when that needs preemption, finds the
 * targets (t); with minCount, the largest count that fits or can preempt.
 * out and t are in e->cycle. */
cu_err cu_nominate_assign(cu_engine *e, ecq *c, ewl *w, asg *out, targets *t);

#endif
