/*
 * cu_status.h - the status of ClusterQueues, LocalQueues and Cohorts,
 * decided once from the engine's views for both `cueue simulate` (its YAML
 * objects) and the controller (the bodies it writes).
 *
 * cu_qstatus_cq/_lq/_cohort compute what a status says (counts, flavor
 * usage grouped by flavor and cut to the CRD bounds, the Active condition,
 * fairSharing); the two renderers put it into either document tree: a
 * json-c merge patch for the API, a cu_node map for YAML. The computed
 * cu_qstatus borrows strings from the view it came from (and from the
 * arena for the cut message): use it before the next engine call.
 *
 * Also the PendingWorkloads document (Kueue's visibility API: the pending
 * workloads of a queue in admission order) of the controller's
 * /debug/pending and of `cueue queue pending`.
 */
#ifndef CU_STATUS_H
#define CU_STATUS_H

#include <json-c/json.h>

#include "cu_engine.h"

/* CRD bounds (crds/): a status list longer than these would be rejected
 * by schema validation, so the lists are cut there. */
#define CU_CQ_STATUS_MAX_FLAVORS 64 /* and 64 resources per flavor */
#define CU_LQ_STATUS_MAX_FLAVORS 16 /* and 16 resources per flavor */
#define CU_COND_MESSAGE_MAX 32768   /* metav1.Condition message */

typedef enum cu_qstatus_kind {
    CU_QSTATUS_CQ = 0,
    CU_QSTATUS_LQ,
    CU_QSTATUS_COHORT
} cu_qstatus_kind;

typedef struct cu_qstatus_res {
    const char *name;
    int64_t total, borrowed;         /* milli; borrowed only for ClusterQueues */
    int64_t adm_total, adm_borrowed; /* the same for admitted workloads
                                        only (flavorsUsage) */
} cu_qstatus_res;

typedef struct cu_qstatus_flavor {
    const char *name;
    size_t nres;
    cu_qstatus_res *res;
} cu_qstatus_flavor;

typedef struct cu_qstatus {
    cu_qstatus_kind kind;
    int pending, reserving, admitted; /* not for Cohorts */
    /* flavorsReservation (total, borrowed) and flavorsUsage (adm_total,
     * adm_borrowed: workloads whose AdmissionChecks are not all Ready
     * left out), flavors in first-appearance (resourceGroups) order */
    size_t nflavors;
    cu_qstatus_flavor *flavors;
    /* the Active condition (not for Cohorts); the message is cut to
     * CU_COND_MESSAGE_MAX bytes with " ..." (Kueue's TruncateConditionMessage) */
    int active;
    const char *reason, *message;
    /* status.fairSharing.weightedShare (ClusterQueues and Cohorts) */
    int fair_sharing;
    int64_t weighted_share;
} cu_qstatus;

/* Fill *out from a view. Active: True/Ready/"Can admit new workloads" for
 * an active ClusterQueue, else False with the engine's reason ("Unknown"
 * when it has none) and message. LocalQueue: the engine's reason and
 * message; without a reason, True/Ready/"Can submit new workloads to
 * localQueue" when active, else False/Unknown. fair_sharing: whether
 * status.fairSharing is written. Lists and the cut message are allocated
 * in a; everything else is borrowed from the view. CU_ENOMEM on OOM. */
cu_err cu_qstatus_cq(cu_arena *a, const cu_cq_info *ci, int fair_sharing, cu_qstatus *out);
cu_err cu_qstatus_lq(cu_arena *a, const cu_lq_info *li, cu_qstatus *out);
void cu_qstatus_cohort(const cu_cohort_info *hi, int fair_sharing, cu_qstatus *out);

/* The merge patch {"status": {...}}: pendingWorkloads, reservingWorkloads,
 * admittedWorkloads, flavorsReservation, flavorsUsage (quantities in
 * Kubernetes canonical form), conditions (the caller's array, taken: the
 * Active condition merged into the object's current ones), then for
 * ClusterQueues and Cohorts fairSharing: {weightedShare} or null (removes
 * a stale value) when s->fair_sharing is off. A Cohort's has fairSharing
 * only (conditions is ignored and put). Returns a new object (caller frees
 * with json_object_put), NULL on OOM (conditions put too). */
json_object *cu_qstatus_json(const cu_qstatus *s, json_object *conditions);

/* The status map as simulate shows it: the same fields, the Active
 * condition alone with lastTransitionTime now_ms, and fairSharing left out
 * when off. Arena-owned; NULL on OOM. */
cu_node *cu_qstatus_node(cu_arena *a, const cu_qstatus *s, int64_t now_ms);

/* A condition as simulate shows it, for queues and Workloads: {type,
 * status: "True"/"False", reason, message (NULL: ""), lastTransitionTime}
 * in that order. Arena-owned; NULL on OOM. */
cu_node *cu_status_cond_node(cu_arena *a, const char *type, int status, const char *reason,
                             const char *message, int64_t ltt_ms);

/* The PendingWorkloads document of /debug/pending and `cueue queue
 * pending`: of the pending workloads v[0..n) (borrowed engine views; the
 * array is reordered), those in ClusterQueue cq and LocalQueue lq
 * ("NS/NAME"), either NULL for any, in admission order (by ClusterQueue,
 * then position), each with its positions in its ClusterQueue and its
 * LocalQueue, priority, total requests, creation time, reason and
 * message. Returns a new object (caller puts) or NULL when out of
 * memory. */
json_object *cu_status_pending_doc(const cu_wl_info **v, size_t n, const char *cq, const char *lq,
                                   int64_t now_ms);

/* The owner of a Workload as `cueue queue pending` shows it, from its
 * metadata.ownerReferences refs (borrowed; NULL or not an array: none):
 * "KIND/NAME" of the controlling reference, else of the first, with
 * " (+N)" when N more objects own it (the pods of a pod group). Into out;
 * returns out, or NULL when there is none. */
const char *cu_status_owner_text(json_object *refs, char *out, size_t n);

/* Kueue's visibility API (visibility.kueue.x-k8s.io/v1beta2). */
#define CU_VISIBILITY_GROUP "visibility.kueue.x-k8s.io"
#define CU_VISIBILITY_VERSION "v1beta2"
#define CU_VISIBILITY_DEFAULT_LIMIT 1000 /* Kueue's DefaultPendingWorkloadsLimit */

/* The metadata.ownerReferences of a pending workload: a new json-c array
 * (taken by the caller), or NULL for none. */
typedef json_object *(*cu_status_owners_fn)(void *ud, const cu_wl_info *w);

/* Kueue's PendingWorkloadsSummary (visibility.kueue.x-k8s.io/v1beta2) of
 * ClusterQueue cq or LocalQueue lq ("NS/NAME"), the same selection and
 * order as cu_status_pending_doc (v is reordered): the items from offset
 * (negative: 0), at most limit of them, each {metadata: {name,
 * namespace, creationTimestamp, ownerReferences (from owners, may be
 * NULL)}, priority, localQueueName, positionInClusterQueue,
 * positionInLocalQueue}; positions count every workload ahead, also
 * those before offset. Returns a new object (caller puts) or NULL when
 * out of memory. */
json_object *cu_status_visibility_doc(const cu_wl_info **v, size_t n, const char *cq,
                                      const char *lq, int64_t limit, int64_t offset,
                                      cu_status_owners_fn owners, void *ud);

/* Returns the length of the longest prefix of s that is at most max bytes
 * and does not end inside a UTF-8 sequence. */
size_t cu_status_utf8_cut(const char *s, size_t max);

/* Returns a new string: s when it is at most max bytes, else its first
 * bytes cut on a UTF-8 boundary followed by suffix, max bytes at most in
 * all (Kueue's truncateMessage). Caller frees with free; NULL on OOM. */
char *cu_status_truncate(const char *s, size_t max, const char *suffix);

#endif
