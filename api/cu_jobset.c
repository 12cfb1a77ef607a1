/*
 * cu_jobset.c - Kueue's rules for a JobSet's Workload.
 */
#include "cu_jobset.h"
#include "cu_job.h"

#include <string.h>

const char *cu_jobset_workload_name(cu_arena *a, const char *name, const char *uid)
{
    return cu_owner_workload_name(a, "JobSet", CU_JOBSET_GROUP, name, uid);
}

int32_t cu_jobset_podset_count(int32_t replicas, int has_par, int32_t par, int has_comp,
                               int32_t comp)
{
    int64_t n = (int64_t)replicas * cu_job_podset_count(has_par, par, has_comp, comp);
    return n < 0 || n > INT32_MAX ? -1 : (int32_t)n;
}

int cu_jobset_cond_finished(const char *t, const char *s, int *failed)
{
    if (!t || !s || strcmp(s, "True") != 0)
        return 0;
    if (strcmp(t, "Completed") != 0 && strcmp(t, "Failed") != 0)
        return 0;
    if (failed)
        *failed = strcmp(t, "Failed") == 0;
    return 1;
}
