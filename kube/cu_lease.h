/*
 * cu_lease.h - leader election with a coordination.k8s.io/v1 Lease, with
 * client-go's timings by default (leaseDuration 15 s, renewDeadline 10 s,
 * retryPeriod 2 s): acquire when the lease is free or expired, renew every
 * retry period, stop leading (callback) when a renewal has not succeeded
 * within renewDeadline — before the lease could have expired for others —
 * and release (holderIdentity cleared) on shutdown. Writes use the
 * resourceVersion precondition, so two candidates never both lead.
 */
#ifndef CU_LEASE_H
#define CU_LEASE_H

#include "cu_kclient.h"

typedef struct cu_lease cu_lease;

typedef struct cu_lease_opts {
    const char *ns;                            /* "kueue-system" */
    const char *name;                          /* "c1f6bfd2.kueue.x-k8s.io" (Kueue's) */
    const char *identity;                      /* hostname_uuid */
    int lease_ms, renew_ms, retry_ms;          /* 0: 15000, 10000, 2000 */
    void (*on_started)(cu_lease *l, void *ud); /* became leader */
    void (*on_stopped)(cu_lease *l, void *ud); /* lost or gave up leadership */
    void *ud;
} cu_lease_opts;

cu_lease *cu_lease_start(cu_kclient *c, const cu_lease_opts *o, cu_diag *d);
int cu_lease_leading(const cu_lease *l);
/* Releases the lease if held (asynchronously; done called after) and stops. */
void cu_lease_release(cu_lease *l, void (*done)(void *ud), void *ud);
void cu_lease_free(cu_lease *l);

#endif
