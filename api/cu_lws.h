/*
 * cu_lws.h - Kueue's rules for a LeaderWorkerSet (its
 * "leaderworkerset.x-k8s.io/leaderworkerset" integration): one prebuilt
 * Workload per group (leader + workers), and the labels and annotations
 * that make each LWS pod a member of its group's pod group. Pure functions
 * of the objects (json-c, borrowed); the controller's integration
 * (controller/jobs/cu_lws.c) does the writes.
 */
#ifndef CU_LWS_H
#define CU_LWS_H

#include "cu_base.h"
#include "cu_json.h"

#define CU_LWS_FRAMEWORK "leaderworkerset.x-k8s.io/leaderworkerset"
#define CU_LWS_GROUP "leaderworkerset.x-k8s.io"
#define CU_LWS_API_VERSION "leaderworkerset.x-k8s.io/v1"
#define CU_LWS_KIND "LeaderWorkerSet"
/* the labels and annotation the LWS controller puts on its pods */
#define CU_LWS_LABEL_SET_NAME "leaderworkerset.sigs.k8s.io/name"
#define CU_LWS_LABEL_GROUP_INDEX "leaderworkerset.sigs.k8s.io/group-index"
#define CU_LWS_ANN_LEADER_NAME "leaderworkerset.sigs.k8s.io/leader-name"
/* the pod sets of a group's Workload */
#define CU_LWS_PODSET_LEADER "leader"
#define CU_LWS_PODSET_WORKER "worker"
#define CU_LWS_PODSET_MAIN "main" /* no leader template: one pod set */
/* what Kueue writes on every Workload it builds for an owner object */
#define CU_LABEL_JOB_UID "kueue.x-k8s.io/job-uid"
#define CU_ANN_JOB_OWNER_GVK "kueue.x-k8s.io/job-owner-gvk"
#define CU_ANN_JOB_OWNER_NAME "kueue.x-k8s.io/job-owner-name"
#define CU_ANN_COMPONENT_WORKLOAD_INDEX "kueue.x-k8s.io/component-workload-index"

/* spec.replicas (default 1) and spec.leaderWorkerTemplate.size (default
 * 1) of lws; a negative or non-integer value counts as the default. */
int32_t cu_lws_replicas(json_object *lws);
int32_t cu_lws_size(json_object *lws);

/* The name Kueue gives the Workload of group idx of the LWS name (uid):
 * the owner name "<name>-<idx>" of kind LeaderWorkerSet
 * (cu_owner_workload_name). Arena-owned; NULL on OOM. */
const char *cu_lws_workload_name(cu_arena *a, const char *name, const char *uid, int32_t idx);

/* The Workload Kueue creates for group idx of lws: named as above in the
 * LWS's namespace, controlled by it (ownerReference), the job-uid label,
 * the group and owner annotations, spec.queueName from the queue-name
 * label, pod sets "leader" (1) and "worker" (size - 1) when there is a
 * leader template, else "main" (size), each with its template's spec, and
 * priorityClassRef as for a Job (the priority-class label, else the first
 * pod set's priorityClassName). New object, or NULL with the problem in d
 * (naming the LWS and the field). */
json_object *cu_lws_workload(json_object *lws, int32_t idx, cu_diag *d);

/* The merge patch Kueue's LWS pod reconciler writes on pod (an LWS pod of
 * lws, NULL when that LWS is not known): the managed and queue-name
 * labels, pod-group-name and prebuilt-workload-name (its group's Workload
 * name), the group's total count and its role ("leader"/"worker", or
 * "main" without a leader template) as annotations. NULL when there is
 * nothing to write: the pod has a queue-name label already, has no group
 * index yet, or the LWS has no queue-name label. */
json_object *cu_lws_pod_patch(json_object *pod, json_object *lws);

/* 1 when pod is one Kueue's LWS integration handles: its
 * pod-suspending-parent annotation names the framework. */
int cu_lws_pod_is_managed(json_object *pod);

#endif
