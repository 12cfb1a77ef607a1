/*
 * cu_wlstatus.c - the Workload conditions of an admission and an eviction (cu_wlstatus.h).
 */
#include "cu_wlstatus.h"

#include <stdio.h>

size_t cu_wlstatus_admission(const char *cq, int checks_pending, char *buf, size_t bufsz,
                             cu_wlcond out[2])
{
    snprintf(buf, bufsz, "Quota reserved in ClusterQueue %s", cq ? cq : "");
    out[0] = (cu_wlcond){ "QuotaReserved", 1, "QuotaReserved", buf };
    if (checks_pending)
        return 1;
    out[1] = (cu_wlcond){ "Admitted", 1, "Admitted", "The workload is admitted" };
    return 2;
}

size_t cu_wlstatus_evicted(const char *reason, const char *preempted_reason, const char *msg,
                           cu_wlcond out[2])
{
    out[0] = (cu_wlcond){ "Evicted", 1, reason, msg };
    if (!preempted_reason)
        return 1;
    out[1] = (cu_wlcond){ "Preempted", 1, preempted_reason, msg };
    return 2;
}

void cu_wlstatus_readmitted(const char *type, const char *msg, char *buf, size_t bufsz,
                            cu_wlcond *out)
{
    snprintf(buf, bufsz, "Previously: %s", msg ? msg : "");
    *out = (cu_wlcond){ type, 0, "QuotaReserved", buf };
}
