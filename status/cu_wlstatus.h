/*
 * cu_wlstatus.h - the Workload conditions an admission or an eviction
 * writes, decided once
 * for `cueue simulate` (its YAML objects) and the controller (its status
 * patches): their type, status, reason and message. Each caller renders
 * them into its own tree and picks lastTransitionTime.
 *
 * A cu_wlcond borrows its strings: constants, the caller's arguments, or
 * the caller's buffer holding the message.
 */
#ifndef CU_WLSTATUS_H
#define CU_WLSTATUS_H

#include <stddef.h>

typedef struct cu_wlcond {
    const char *type;
    int status; /* 1 True, 0 False */
    const char *reason;
    const char *message;
} cu_wlcond;

/* The conditions a reservation of quota in ClusterQueue cq sets, in order:
 * QuotaReserved=True ("Quota reserved in ClusterQueue <cq>", written into
 * buf, cut to bufsz) and, unless checks_pending (some AdmissionCheck that
 * applies is not Ready yet: Kueue then writes no Admitted condition),
 * Admitted=True. Returns the count written (1 or 2). */
size_t cu_wlstatus_admission(const char *cq, int checks_pending, char *buf, size_t bufsz,
                             cu_wlcond out[2]);

/* The conditions an eviction sets while the Workload still holds quota, in
 * order: Evicted=True (reason, msg) and, when preempted_reason is set,
 * Preempted=True (preempted_reason, msg). Strings are passed through as
 * given (the caller picks its defaults). Returns the count written (1, 2). */
size_t cu_wlstatus_evicted(const char *reason, const char *preempted_reason, const char *msg,
                           cu_wlcond out[2]);

/* What condition `type` (Evicted or Preempted) becomes when the Workload
 * is admitted again after an eviction whose message was msg (NULL: ""):
 * False, reason QuotaReserved, "Previously: <msg>" (written into buf, cut
 * to bufsz). */
void cu_wlstatus_readmitted(const char *type, const char *msg, char *buf, size_t bufsz,
                            cu_wlcond *out);

#endif
