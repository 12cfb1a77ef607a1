/*
 * cu_fairshare.c - fair sharing: Dominant Resource Share, the admission
 * tournament and fair-sharing preemption (placeholder until implemented).
 */
#include "cu_engine_int.h"

cu_err cu_fair_targets(cu_engine *e, ecq *c, ewl *w, size_t nuse, const int *fr,
                       const int64_t *amt, const int *frs, size_t nfrs, targets *out)
{
    (void)e; (void)c; (void)w; (void)nuse; (void)fr; (void)amt; (void)frs; (void)nfrs;
    out->n = 0;
    return CU_OK;
}
