/*
 * cu_pod.h - Kueue's rules for the Workload of a plain Pod and of a pod
 * group (Kueue's "pod" integration), shared by the controller
 * (controller/jobs/cu_pod.c) and, later, `cueue simulate`. Pure functions
 * of the pods' JSON; no I/O.
 */
#ifndef CU_POD_H
#define CU_POD_H

#include "cu_base.h"

#include <json-c/json.h>

/* The longest role a pod set can be named by (a role-hash annotation
 * longer than this is cut). */
#define CU_POD_ROLE_MAX 64

/* Kueue's role hash of a pod spec (spec: the pod's spec object): the first
 * 8 hex digits of the SHA-256 of the JSON of what admission reads of it
 * (containers' and init containers' requests and ports, nodeSelector,
 * affinity, tolerations, runtimeClassName, priority, topology spread
 * constraints, overhead, resource claims), written as Go writes it (map
 * keys sorted, absent as null). Returns 0, or -1 (out is "") when out of
 * memory. */
int cu_pod_role_hash(json_object *spec, char out[9]);

/* The role of pod (the pod set it belongs to in its group's Workload):
 * its kueue.x-k8s.io/role-hash annotation when present, else
 * cu_pod_role_hash of its spec. Returns 0, or -1 (out is ""). */
int cu_pod_role(json_object *pod, char out[CU_POD_ROLE_MAX + 1]);

/* The name Kueue gives the Workload of a single pod: "pod-<name>-<hash>"
 * (cu_owner_workload_name with kind Pod, core group). Arena-owned. */
const char *cu_pod_workload_name(cu_arena *a, const char *pod_name, const char *uid);

/* 1 when pod is in phase Succeeded or Failed. */
int cu_pod_terminated(json_object *pod);

/* Kueue's "runnable or succeeded": not Failed, and not being deleted
 * before it was bound to a node. */
int cu_pod_runnable(json_object *pod);

/* The Workload (a new JSON object, caller puts) Kueue creates for the
 * single pod pod: named cu_pod_workload_name, owned by the pod (a
 * controlling reference), the kueue.x-k8s.io/job-uid label, one pod set
 * "main" of count 1 whose template is the pod's spec, the queue-name
 * label's queue, the priority class as for a Job. NULL with the problem in
 * d (naming the pod and the field). */
json_object *cu_pod_workload(json_object *pod, cu_diag *d);

/* The Workload of the pod group group (the pods[0..n) that are runnable
 * or succeeded; the first one's queue and priority class): named after the
 * group, annotated kueue.x-k8s.io/is-group-workload, a (non-controlling)
 * ownerReference to every pod, one pod set per role (named by the role,
 * counting its pods, the template the spec of its first pod) sorted by
 * name. NULL with the problem in d. */
json_object *cu_pod_group_workload(const char *group, json_object *const *pods, size_t n,
                                   cu_diag *d);

/* Whether a (non-serving) pod group of total pods is finished, as Kueue
 * decides it: all total succeeded, or no pod still running and some pod
 * not retriable (kueue.x-k8s.io/retriable-in-group: "false"). When it is,
 * returns 1 with Kueue's message ("Pods succeeded: S/T.") in msg. */
int cu_pod_group_finished(int32_t succeeded, int32_t total, int any_active, int unretriable,
                          char *msg, size_t n);

/* The pod-group-total-count annotation value v as a count: 1 and *out
 * when it is a decimal integer >= 1, else 0. */
int cu_pod_group_total(const char *v, int32_t *out);

/* Whether the pods[0..n) of one group agree, as Kueue checks them before
 * it makes the group's Workload: 0 with the total count in *total, or 1
 * with Kueue's message in why: the first pod's count is not an integer
 * >= 1 (which="Pod NS/NAME: metadata.annotations[...]: ..."), or pod *bad
 * differs from the first in the count or the queue ("pods 'a' and 'b' has
 * different ..."; *bad 0 for the first kind). */
int cu_pod_group_disagree(json_object *const *pods, size_t n, int32_t *total, size_t *bad,
                          char *why, size_t whyn);

#endif
