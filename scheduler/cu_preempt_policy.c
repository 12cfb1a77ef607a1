/*
 * cu_preempt_policy.c - what both preemption searches (classic and fair)
 * share: the preemption policies, the preemption budget, nominal checks and
 * the order of candidates.
 */
#include "cu_preempt_int.h"

#include <string.h>

int cu_policy_ok(cu_ppolicy p, const ewl *pre, const ewl *c)
{
    switch (p) {
    case CU_PP_NEVER: return 0;
    case CU_PP_ANY: return 1;
    case CU_PP_LOWER_PRIORITY: return c->qi.prio < pre->qi.prio;
    case CU_PP_LOWER_OR_NEWER_EQUAL_PRIORITY:
        return c->qi.prio < pre->qi.prio || (c->qi.prio == pre->qi.prio && pre->qi.ts < c->qi.ts);
    }
    return 0;
}

int cu_wl_uses_any(const ewl *w, const int *frs, size_t nfrs)
{
    for (size_t i = 0; i < w->nuse; i++)
        for (size_t j = 0; j < nfrs; j++)
            if (w->use_fr[i] == frs[j] && w->use_amt[i] > 0)
                return 1;
    return 0;
}

int cu_preempt_protected(const cu_engine *ce, const ewl *v)
{
    int budget = ce->opts.preemption_budget ? ce->opts.preemption_budget : 3;
    if (budget < 0 || v->preempt_count < budget)
        return 0;
    int64_t window = ce->opts.preemption_window_ms ? ce->opts.preemption_window_ms : 600000;
    if (cu_clock_now(&ce->opts.clock) - v->preempt_window >= window)
        return 0;
    ((cu_engine *)ce)->protected_seen++; /* reported in the pending reason */
    return 1;
}

/* Kueue's IsWithinNominalInResources: usage <= subtree quota on every fr. */
int cu_within_nominal(const cu_qnode *n, const int *frs, size_t nfrs)
{
    for (size_t i = 0; i < nfrs; i++)
        if (n->usage[frs[i]] > n->subtree[frs[i]])
            return 0;
    return 1;
}

/* Kueue's CandidatesOrdering: workloads already being evicted first, then
 * other ClusterQueues before the preemptor's own, lower priority first,
 * most recently admitted first, then name. */
int cu_cand_cmp(const ewl *a, int a_same, const ewl *b, int b_same)
{
    if (a->evicting != b->evicting)
        return a->evicting ? -1 : 1;
    if (a_same != b_same)
        return a_same ? 1 : -1;
    /* Admission Fair Sharing: within the queue, the LocalQueue that used
     * more goes first */
    if (a_same && b_same && a->lq != b->lq && a->qi.afs != b->qi.afs)
        return a->qi.afs > b->qi.afs ? -1 : 1;
    if (a->qi.prio != b->qi.prio)
        return a->qi.prio < b->qi.prio ? -1 : 1;
    if (a->admitted_at != b->admitted_at)
        return a->admitted_at > b->admitted_at ? -1 : 1;
    return strcmp(a->key, b->key);
}
