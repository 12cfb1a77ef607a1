/*
 * cu_ctrlstatus.h - what the controller writes besides admissions: the
 * status of ClusterQueues, LocalQueues and Cohorts (coalesced, so that a
 * busy cluster does not cost a write per event, cf. kueue#8095) and
 * core/v1 Events like Kueue's, deduplicated and rate limited the way
 * client-go's EventCorrelator does it. Pure functions and in-memory
 * state: no I/O, no clock (every time is a parameter).
 *
 * Events Kueue emits. The reasons are the CU_EV_* macros; the
 * cu_ctrl_event_msg_* helpers below format the messages.
 *
 * On the Workload, type Normal unless said, component "kueue-admission":
 *  QuotaReserved     "Quota reserved in ClusterQueue CQ, wait time since queued was Ns"
 *                    (N: %.0f of the seconds since queued, or since the last eviction)
 *  Admitted          "Admitted by ClusterQueue CQ, wait time since reservation was 0s"
 *                    (no admission checks: right after QuotaReserved)
 *  Pending (Warning) the inadmissible message, as in the QuotaReserved=False
 *                    condition (cu_wl_info.message), e.g. "couldn't assign flavors to
 *                    pod set main: insufficient unused quota for cpu in flavor ..."
 *  Preempted         the Preempted condition's message (cu_wl_info.evicted_message):
 *                    "Preempted to accommodate a workload (UID: U, JobUID: J) due to ..."
 *  EvictedDueTo<R>   the Evicted condition's message; R is the Evicted reason
 *                    (Preempted, PodsReadyTimeout, ClusterQueueStopped,
 *                    LocalQueueStopped, Deactivated[DueTo<cause>], ...); a preemption
 *                    emits both EvictedDueToPreempted and Preempted
 *
 * On the Job, type Normal, component "batch/job-kueue-controller":
 *  CreatedWorkload   "Created Workload: NS/NAME"
 *  Started           "Admitted by clusterQueue CQ" (sic: lower-case c)
 *  Stopped           the Evicted condition's message when evicted; "Not admitted by
 *                    cluster queue" when a running Job's workload is not admitted;
 *                    "Workload is deleted"
 *  Suspended         "Kueue managed child job suspended" (child jobs of a managed parent)
 *  FinishedWorkload  "Workload 'NS/NAME' is declared finished"
 *  DeletedWorkload   "Deleted not matching Workload: NS/NAME"
 *
 * Kueue truncates event messages to 1024 bytes with the suffix " ..."
 * (pkg/util/api TruncateEventMessage); cu_ctrl_event_body does the same,
 * on a UTF-8 boundary.
 */
#ifndef CU_CTRLSTATUS_H
#define CU_CTRLSTATUS_H

#include <json-c/json.h>

#include "cu_engine.h"
#include "cu_status.h"

/* ---------------- status bodies ---------------- */

/* The status bodies below are merge patches (a null removes a field).
 * The controller sends them as forced server-side applies of the whole
 * status, with the nulls left out (cu_controller.c, qstatus_send): there
 * a field the body no longer names is removed by the server.
 *
 * The merge patch of a ClusterQueue's /status (content type
 * application/merge-patch+json):
 *   {"status": {pendingWorkloads, reservingWorkloads, admittedWorkloads,
 *               flavorsReservation, flavorsUsage, conditions, fairSharing}}
 * flavorsReservation and flavorsUsage are
 * [{name: flavor, resources: [{name, total, borrowed}]}] in the order of
 * the ClusterQueue's resourceGroups, quantities in Kubernetes canonical
 * form; both carry the same numbers (the engine has no admission checks,
 * so every reservation is an admission). conditions: old_conds (borrowed,
 * may be NULL: the object's current status.conditions) with Active set:
 * True/Ready/"Can admit new workloads", or False with the engine's reason
 * and message; lastTransitionTime is kept when the status does not
 * change. fairSharing: {weightedShare: N} when fair_sharing (Kueue writes
 * it for every ClusterQueue when fair sharing is enabled: 0 without a
 * cohort or when not borrowing, 9223372036854775807 for a zero weight
 * while borrowing), null otherwise (removes a stale value).
 * Returns a new object (caller frees with json_object_put), NULL on OOM. */
json_object *cu_ctrl_cq_status(const cu_cq_info *ci, int fair_sharing, json_object *old_conds,
                               int64_t now_ms);

/* The merge patch of a LocalQueue's /status: pendingWorkloads,
 * reservingWorkloads, admittedWorkloads, flavorsReservation and
 * flavorsUsage ([{name, resources: [{name, total}]}], totals only) and
 * conditions with Active from the engine (True/Ready/"Can submit new
 * workloads to localQueue", or False with StopPolicy, ClusterQueueIs-
 * Inactive, ClusterQueueDoesNotExist). Kueue's LocalQueue fairSharing
 * (Admission Fair Sharing: consumedResources per resource) is not written:
 * the engine keeps only the weighted total. Ownership as above. */
json_object *cu_ctrl_lq_status(const cu_lq_info *li, json_object *old_conds, int64_t now_ms);

/* The merge patch of a Cohort's /status: {"status": {"fairSharing":
 * {"weightedShare": N}}} when fair_sharing, {"fairSharing": null}
 * otherwise (the Cohort status has nothing else Cueue knows). An implicit
 * cohort (hi->obj == NULL) has no object to write; the body is built all
 * the same. Ownership as above. */
json_object *cu_ctrl_cohort_status(const cu_cohort_info *hi, int fair_sharing);

/* Serializes j with the keys of every object sorted, no whitespace, so
 * that equal JSON values give equal strings. Returns a new string (caller
 * frees with free), NULL on OOM or nesting deeper than 256. Borrows j. */
char *cu_ctrl_json_canonical(json_object *j);

/* ---------------- coalescer ---------------- */

/* Remembers, per key ("cq/NAME", "lq/NS/NAME", "cohort/NAME"), the status
 * body the controller wants and the last one the API acknowledged, and
 * says which keys to write: a key is due when its desired body differs
 * from the acknowledged one, it has no write in flight, and its last
 * write started at least min_interval_ms ago. Many changes within an
 * interval thus cost one write, of the latest body; a body equal to the
 * acknowledged one costs none. Not thread-safe. */
typedef struct cu_coalescer cu_coalescer;

/* Called by cu_coalescer_due for each due key. body is the canonical JSON
 * to send, owned by the coalescer and valid until cu_coalescer_written or
 * cu_coalescer_forget for key. The callback may call cu_coalescer_written
 * and cu_coalescer_set, not cu_coalescer_forget. */
typedef void (*cu_coalesce_fn)(const char *key, const char *body, void *ud);

/* Returns a new coalescer (caller frees with cu_coalescer_free), NULL on
 * OOM. min_interval_ms: the least time between two writes of one key. */
cu_coalescer *cu_coalescer_new(int64_t min_interval_ms);
void cu_coalescer_free(cu_coalescer *c);

/* Records body (borrowed, serialized canonically) as the desired body of
 * key (copied). CU_ENOMEM on OOM, CU_EINVAL for a NULL key or body. */
cu_err cu_coalescer_set(cu_coalescer *c, const char *key, json_object *body);

/* Records body as what the API already holds for key (e.g. from the
 * informer at startup), so that an equal desired body is not written. */
cu_err cu_coalescer_seed(cu_coalescer *c, const char *key, json_object *body);

/* Calls fn for each due key (in the order keys were first set), marks its
 * write in flight and started at now_ms. Returns the number of calls. */
size_t cu_coalescer_due(cu_coalescer *c, int64_t now_ms, cu_coalesce_fn fn, void *ud);

/* Acknowledges the write in flight for key: ok != 0 makes its body the
 * acknowledged one; ok == 0 leaves the key due again once the interval
 * since the failed write has passed. Unknown keys are ignored. */
void cu_coalescer_written(cu_coalescer *c, const char *key, int ok);

/* Returns the earliest time >= now_ms at which cu_coalescer_due would
 * yield a key, now_ms when one is due already, or -1 when nothing is
 * pending (every key acknowledged or in flight). */
int64_t cu_coalescer_next_deadline(const cu_coalescer *c, int64_t now_ms);

/* Drops key (a deleted object); a write in flight is then ignored. */
void cu_coalescer_forget(cu_coalescer *c, const char *key);

/* Number of keys held. */
size_t cu_coalescer_size(const cu_coalescer *c);

/* ---------------- events ---------------- */

#define CU_EVENT_NORMAL "Normal"
#define CU_EVENT_WARNING "Warning"
#define CU_EVENT_MESSAGE_MAX 1024

/* Kueue's recorder names (source.component / reportingComponent). */
#define CU_EVENT_COMPONENT_ADMISSION "kueue-admission"
#define CU_EVENT_COMPONENT_JOB "batch/job-kueue-controller"

#define CU_EV_QUOTA_RESERVED "QuotaReserved"
#define CU_EV_ADMITTED "Admitted"
#define CU_EV_PENDING "Pending"
#define CU_EV_PREEMPTED "Preempted"
#define CU_EV_CREATED_WORKLOAD "CreatedWorkload"
#define CU_EV_STARTED "Started"
#define CU_EV_STOPPED "Stopped"
#define CU_EV_SUSPENDED "Suspended"
#define CU_EV_FINISHED_WORKLOAD "FinishedWorkload"
#define CU_EV_DELETED_WORKLOAD "DeletedWorkload"

#define CU_EV_MSG_NOT_ADMITTED "Not admitted by cluster queue"
#define CU_EV_MSG_WORKLOAD_DELETED "Workload is deleted"
#define CU_EV_MSG_CHILD_SUSPENDED "Kueue managed child job suspended"

/* The object an event is about (every string borrowed). ns NULL or ""
 * for cluster-scoped objects; uid and resource_version may be NULL. */
typedef struct cu_event_ref {
    const char *api_version, *kind, *ns, *name, *uid, *resource_version;
} cu_event_ref;

/* A core/v1 Event as client-go's recorder creates it: name
 * "<object name>.<16 hex digits>" (now_ms in nanoseconds plus seq, so
 * names made within one millisecond differ), namespace = the object's
 * ("default" for a cluster-scoped object), involvedObject, reason,
 * message (cut to 1024 bytes with " ..." on a UTF-8 boundary), type,
 * source.component, reportingComponent and reportingInstance (both
 * component), firstTimestamp = lastTimestamp = now, count 1, eventTime
 * null. Returns a new object (caller frees with json_object_put), NULL on
 * OOM or when obj->kind/obj->name, type, reason or component is missing. */
json_object *cu_ctrl_event_body(const cu_event_ref *obj, const char *type, const char *reason,
                                const char *message, const char *component, int64_t now_ms,
                                uint64_t seq);

/* A request for the API server, as cu_kclient_request takes it. */
typedef struct cu_event_req {
    const char *method;       /* "POST" or "PATCH" (static) */
    char *path;               /* /api/v1/namespaces/NS/events[/NAME] */
    const char *content_type; /* application/json, or
                                  application/strategic-merge-patch+json
                                  (what client-go sends; for these scalar
                                  fields it equals a merge patch) */
    json_object *body;        /* the Event, or {count, lastTimestamp} */
} cu_event_req;

/* Frees path and body; req is zeroed. */
void cu_event_req_free(cu_event_req *req);

typedef struct cu_recorder_opts {
    const char *component;   /* source.component; required (copied) */
    const char *instance;    /* reportingInstance; NULL = component */
    int burst;               /* spam filter burst; 0 = 25 */
    int64_t refill_ms;       /* one token per refill_ms; 0 = 5 minutes */
    int64_t dedup_window_ms; /* 0 = 10 minutes */
    size_t max_entries;      /* LRU bound of each cache; 0 = 4096 */
} cu_recorder_opts;

/* Records events for one component, the way client-go's EventCorrelator
 * does: (1) spam filter: a token bucket per object and source (burst 25,
 * one token every 5 minutes); an event without a token is dropped;
 * (2) dedup: an event identical to one recorded (same object, source,
 * type, reason and message) at most 10 minutes before its last occurrence
 * becomes a PATCH of that Event (count + 1, lastTimestamp) instead of a
 * new one. Both caches are LRUs of at most max_entries keys. Not
 * thread-safe; use one recorder per component. */
typedef struct cu_recorder cu_recorder;

/* Returns a new recorder (caller frees with cu_recorder_free), NULL on
 * OOM or without a component. */
cu_recorder *cu_recorder_new(const cu_recorder_opts *opts);
void cu_recorder_free(cu_recorder *r);

/* Fills *out with the request to send for this event and returns 1, or
 * returns 0 when the spam filter drops it (out untouched), CU_EINVAL for
 * a missing kind, name, type or reason, CU_ENOMEM on OOM. The caller
 * frees *out with cu_event_req_free. Borrows every argument. */
int cu_recorder_record(cu_recorder *r, const cu_event_ref *ref, const char *type,
                       const char *reason, const char *message, int64_t now_ms, cu_event_req *out);

/* Tells the recorder that req failed (any HTTP error, 404 for a PATCH of
 * an Event the API no longer has): the next identical event is POSTed
 * anew instead of patching an Event that may not exist. */
void cu_recorder_failed(cu_recorder *r, const cu_event_req *req);

/* ---- Kueue's event messages (written into out, n bytes, which it
 * returns; CU_EVENT_MESSAGE_MAX bytes always suffice) ---- */

/* "Quota reserved in ClusterQueue CQ, wait time since queued was Ns" */
char *cu_ctrl_event_msg_quota_reserved(char *out, size_t n, const char *cq, int64_t wait_ms);
/* "Admitted by ClusterQueue CQ, wait time since reservation was Ns" (0s
 * when admitted with the reservation; else since the reservation, when
 * its AdmissionChecks became Ready) */
char *cu_ctrl_event_msg_admitted(char *out, size_t n, const char *cq, int64_t wait_ms);
/* "Admitted by clusterQueue CQ" (Started, on the Job) */
char *cu_ctrl_event_msg_started(char *out, size_t n, const char *cq);
/* "Created Workload: NS/NAME" (CreatedWorkload, on the Job) */
char *cu_ctrl_event_msg_created_workload(char *out, size_t n, const char *ns, const char *name);
/* "Workload 'NS/NAME' is declared finished" (FinishedWorkload, on the Job) */
char *cu_ctrl_event_msg_finished(char *out, size_t n, const char *ns, const char *name);
/* "Deleted not matching Workload: NS/NAME" (DeletedWorkload, on the Job) */
char *cu_ctrl_event_msg_deleted_workload(char *out, size_t n, const char *ns, const char *name);
/* The reason of the eviction event: "EvictedDueTo" + evicted_reason, and
 * "DueTo" + cause when evicted_reason is "Deactivated" and cause is
 * non-empty (e.g. EvictedDueToDeactivatedDueToRequeuingLimitExceeded). */
char *cu_ctrl_event_reason_evicted(char *out, size_t n, const char *evicted_reason,
                                   const char *cause);

#endif
