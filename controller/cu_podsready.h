/*
 * cu_podsready.h - the pure decision logic of waitForPodsReady: the
 * PodsReady condition of a Workload, the PodsReady / recovery timeouts,
 * the requeue backoff and its limit, and the blockAdmission gate.
 *
 * No I/O and no clock: the caller passes "now" and a jitter seed, and
 * carries out the returned action (write a condition, evict, deactivate).
 *
 * Behaviour follows Kueue (pkg/controller/jobframework generatePodsReadyCondition,
 * pkg/controller/core/workload_controller.go reconcileNotReadyTimeout /
 * admittedNotReadyWorkload / triggerDeactivation, pkg/workload UpdateRequeueState,
 * pkg/cache podsReadyForAllAdmittedWorkloads):
 *
 *  - The PodsReady condition (written for every workload while the feature
 *    is on, only when its status or reason changes):
 *      not admitted                            -> False WaitForStart
 *      pods ready, previous reason WaitForRecovery or Recovered
 *                                              -> True  Recovered
 *      pods ready otherwise                    -> True  Started
 *      not ready, no condition yet             -> False WaitForStart
 *      not ready, condition was True           -> False WaitForRecovery
 *      not ready, reason was WaitForRecovery   -> False WaitForRecovery
 *      not ready otherwise (WaitForStart, legacy "PodsReady")
 *                                              -> False WaitForStart
 *  - Timeouts (only for an admitted, active, not yet evicted workload):
 *      PodsReady absent, or False with reason WaitForStart or legacy
 *      "PodsReady": deadline = Admitted.lastTransitionTime + timeout,
 *      underlying cause WaitForStart;
 *      PodsReady False with reason WaitForRecovery and recovery enabled:
 *      deadline = PodsReady.lastTransitionTime + recoveryTimeout,
 *      underlying cause WaitForRecovery;
 *      anything else: no timer.
 *    At the deadline (now >= deadline): if requeueState.count + 1 exceeds
 *    backoffLimitCount the workload is deactivated (Evicted reason
 *    "Deactivated", underlying cause "RequeuingLimitExceeded", requeueState
 *    cleared); otherwise it is evicted with reason "PodsReadyTimeout",
 *    message "Exceeded the PodsReady timeout <ns>/<name>", count + 1 and
 *    requeueAt = now + backoff(count + 1).
 *  - Backoff of the n-th requeue: min(base * 2^(n-1) * (1 + 0.0001 * r), max)
 *    with r in [0, 1) drawn from the jitter seed (Kueue: wait.Backoff with
 *    factor 2 and jitter 0.0001).
 *
 * Deliberate differences from Kueue, where its two reconcilers race:
 *  - When the Job's pods are ready *now*, cu_pr_decide never evicts, even
 *    if the stored condition still says WaitForStart past the deadline: it
 *    asks for PodsReady=True first.
 *  - The newer WaitForScheduling reason (pods not yet scheduled) is not
 *    produced; an unknown False reason gets no timer, as in Kueue.
 */
#ifndef CU_PODSREADY_H
#define CU_PODSREADY_H

#include <stddef.h>
#include <stdint.h>

/* Condition type, reasons and messages exactly as Kueue writes them. */
#define CU_PR_COND_TYPE "PodsReady"
#define CU_PR_REASON_STARTED "Started"
#define CU_PR_REASON_RECOVERED "Recovered"
#define CU_PR_REASON_WAIT_START "WaitForStart"
#define CU_PR_REASON_WAIT_RECOVERY "WaitForRecovery"
#define CU_PR_REASON_LEGACY "PodsReady" /* pre-v0.11 reason, read only */
#define CU_PR_MSG_READY "All pods reached readiness and the workload is running"
#define CU_PR_MSG_NOT_READY "Not all pods are ready or succeeded"
#define CU_PR_MSG_RECOVERY "At least one pod has failed, waiting for recovery"

#define CU_PR_EVICT_TIMEOUT "PodsReadyTimeout"
#define CU_PR_EVICT_DEACTIVATED "Deactivated"
#define CU_PR_CAUSE_LIMIT "RequeuingLimitExceeded"
/* DeactivationTarget condition message Kueue sets before deactivating. */
#define CU_PR_MSG_LIMIT "exceeding the maximum number of re-queuing retries"
/* Evicted message of the deactivation ("The workload is deactivated due to " + CU_PR_MSG_LIMIT). */
#define CU_PR_MSG_DEACTIVATED \
    "The workload is deactivated due to exceeding the maximum number of re-queuing retries"

/* Jitter factor of the requeue backoff (Kueue's constant). */
#define CU_PR_BACKOFF_JITTER 0.0001

/* Room for "Exceeded the PodsReady timeout " + namespace (63) + "/" + name (253). */
#define CU_PR_MSG_MAX 400

typedef struct cu_pr_config {
    int enable;                  /* waitForPodsReady present */
    int64_t timeout_ms;          /* waitForPodsReady.timeout */
    int64_t recovery_timeout_ms; /* < 0: recovery timeout disabled */
    int block_admission;         /* blockAdmission */
    int requeue_at_creation;     /* requeuingStrategy.timestamp: Creation (else Eviction) */
    int32_t backoff_limit;       /* backoffLimitCount, < 0: unlimited (null) */
    int64_t backoff_base_ms;     /* backoffBaseSeconds * 1000 */
    int64_t backoff_max_ms;      /* backoffMaxSeconds * 1000 */
} cu_pr_config;

/* Kueue's defaults for config.kueue.x-k8s.io/v1beta2 with waitForPodsReady
 * present: timeout 30m, recoveryTimeout = timeout, blockAdmission false,
 * timestamp Eviction, no limit, base 60s, max 3600s. */
void cu_pr_config_default(cu_pr_config *cfg);

/* What the controller knows about one workload (all strings borrowed). */
typedef struct cu_pr_wl {
    const char *ns, *name;    /* for the eviction message */
    int admitted;             /* Admitted=True */
    int64_t admitted_ltt_ms;  /* its lastTransitionTime */
    int evicted;              /* Evicted=True already (eviction in progress) */
    int inactive;             /* spec.active == false */
    int has_ready_cond;       /* a PodsReady condition exists */
    int ready;                /* its status is True */
    const char *ready_reason; /* its reason (NULL = none) */
    int64_t ready_ltt_ms;     /* its lastTransitionTime */
    int job_pods_ready;       /* the Job's pods are ready now (cu_pr_job_pods_ready) */
    int32_t requeue_count;    /* status.requeueState.count (0 when absent) */
} cu_pr_wl;

typedef enum {
    CU_PR_NOTHING,       /* nothing to write; call again at recheck_at_ms */
    CU_PR_SET_CONDITION, /* write PodsReady = ready/reason/message */
    CU_PR_EVICT,         /* evict (and requeue with backoff) */
    CU_PR_DEACTIVATE     /* set spec.active=false and evict, no requeue */
} cu_pr_action_kind;

typedef struct cu_pr_action {
    cu_pr_action_kind kind;
    /* SET_CONDITION: the PodsReady condition to write (static strings).
     * DEACTIVATE: reason/message of the DeactivationTarget condition
     * (RequeuingLimitExceeded, CU_PR_MSG_LIMIT), ready = 0. */
    int ready;
    const char *reason, *message;
    /* EVICT / DEACTIVATE: the Evicted condition and the eviction statistics. */
    const char *evict_reason;     /* "PodsReadyTimeout" or "Deactivated" */
    const char *underlying_cause; /* "WaitForStart", "WaitForRecovery", "RequeuingLimitExceeded" */
    char evict_message[CU_PR_MSG_MAX];
    /* EVICT: the new status.requeueState; DEACTIVATE: 0/0 = cleared. */
    int32_t new_requeue_count;
    int64_t requeue_at_ms; /* 0 = none */
    /* When to call cu_pr_decide again if nothing else changes; -1: never
     * (a write or a watch event will bring the next call). */
    int64_t recheck_at_ms;
} cu_pr_action;

/* Decides the next waitForPodsReady step for w at now_ms. Borrows cfg and w;
 * the returned action holds only static strings and its own buffer. */
cu_pr_action cu_pr_decide(const cu_pr_config *cfg, const cu_pr_wl *w, int64_t now_ms,
                          uint64_t jitter_seed);

/* 1 when a Job's pods count as ready: ready + succeeded >= pod_count
 * (pod_count = min(parallelism, completions) of the admitted pod set). */
int cu_pr_job_pods_ready(int32_t pod_count, int64_t ready, int64_t succeeded);

/* Backoff before the n-th requeue (n >= 1; n < 1 counts as 1), in ms:
 * min(base * 2^(n-1) + jitter, max), jitter in [0, 0.0001 * base * 2^(n-1))
 * drawn deterministically from jitter_seed. Saturates, never overflows. */
int64_t cu_pr_backoff_ms(const cu_pr_config *cfg, int32_t n, uint64_t jitter_seed);

/* 1 when w is admitted and its PodsReady condition is not True: such a
 * workload blocks admission under blockAdmission. */
int cu_pr_wl_not_ready(const cu_pr_wl *w);

/* blockAdmission gate: 1 when the scheduler may admit, i.e. the feature or
 * blockAdmission is off, or no admitted workload is waiting for its pods
 * (n_not_ready = how many workloads cu_pr_wl_not_ready holds for). */
int cu_pr_may_admit(const cu_pr_config *cfg, size_t n_not_ready);

/* Queue-order timestamp of a pending workload: the Evicted
 * lastTransitionTime when it was last evicted by PodsReadyTimeout and the
 * requeuing timestamp is Eviction; creation_ms otherwise. */
int64_t cu_pr_queue_order_ms(const cu_pr_config *cfg, int64_t creation_ms,
                             int evicted_by_pods_ready_timeout, int64_t evicted_ltt_ms);

#endif
