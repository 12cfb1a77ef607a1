/*
 * cu_topology.h - the API of Kueue's Topology-Aware Scheduling (TAS) that
 * is not the placement: the pod-template annotations that ask for it, the
 * pod set's topologyRequest Kueue builds from them (one builder for every
 * integration: Job, JobSet, pod groups, LeaderWorkerSet), Kueue's webhook
 * rules on them, the syntax of a Topology level, and the admission's
 * topology assignment written in v1beta2's shape. The structs are in
 * cu_objects.h (cu_topology, cu_topo_request, cu_topo_assign); the
 * Topology's own rules in cu_validate.c. No I/O.
 */
#ifndef CU_TOPOLOGY_H
#define CU_TOPOLOGY_H

#include <json-c/json.h>

#include "cu_objects.h"

/* The pod-template annotations (Kueue v0.17 apis/kueue/v1beta2). */
#define CU_ANN_TAS_REQUIRED "kueue.x-k8s.io/podset-required-topology"
#define CU_ANN_TAS_PREFERRED "kueue.x-k8s.io/podset-preferred-topology"
#define CU_ANN_TAS_UNCONSTRAINED "kueue.x-k8s.io/podset-unconstrained-topology"
#define CU_ANN_TAS_SLICE_REQUIRED "kueue.x-k8s.io/podset-slice-required-topology"
#define CU_ANN_TAS_SLICE_SIZE "kueue.x-k8s.io/podset-slice-size"
/* alpha, behind the TASMultiLayerTopology gate (off in v0.17): refused */
#define CU_ANN_TAS_SLICE_CONSTRAINTS "kueue.x-k8s.io/podset-slice-required-topology-constraints"
#define CU_ANN_PODSET_GROUP_NAME "kueue.x-k8s.io/podset-group-name"
/* Added to a pod set's ranks by the topology ungater (Kueue's LWS webhook
 * puts 1 on the workers of a LeaderWorkerSet with a leader and no group,
 * whose worker indices start at 1). */
#define CU_ANN_POD_INDEX_OFFSET "kueue.x-k8s.io/pod-index-offset"
/* The scheduling gate of TAS pods (the ungater removes it). */
#define CU_TAS_GATE "kueue.x-k8s.io/topology"

/* The pod index labels Kueue puts in the request, per integration. */
#define CU_LABEL_JOB_COMPLETION_INDEX "batch.kubernetes.io/job-completion-index"
#define CU_LABEL_JOBSET_JOB_INDEX "jobset.sigs.k8s.io/job-index"
#define CU_LABEL_POD_GROUP_INDEX "kueue.x-k8s.io/pod-group-pod-index"
#define CU_LABEL_LWS_WORKER_INDEX "leaderworkerset.sigs.k8s.io/worker-index"
#define CU_LABEL_HOSTNAME "kubernetes.io/hostname"

/* A Topology level's nodeLabel: the CRD's pattern (a qualified name without
 * the 63-character limit on the name part) and maximum length. */
#define CU_TOPOLOGY_LABEL_PATTERN \
    "^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?" \
    "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
#define CU_TOPOLOGY_LABEL_MAX 316
/* 1 if s matches CU_TOPOLOGY_LABEL_PATTERN (length not checked). */
int cu_topology_label_ok(const char *s);

/* Go's strconv.ParseBool: 1 true, 0 false, -1 invalid (NULL: invalid). */
int cu_go_parse_bool(const char *s);

/* Looks up one annotation of a pod template (NULL when absent). */
typedef const char *(*cu_ann_get)(void *ud, const char *key);
/* cu_ann_get over a json-c metadata.annotations map (ud: the map). */
const char *cu_ann_get_json(void *ud, const char *key);

/* Whether a pod is one that TAS placed, as Kueue v0.17's IsTAS decides
 * it: it has a podset-required, -preferred or -unconstrained topology
 * annotation (get/ud over its annotations; Kueue's start adds the
 * unconstrained one to pod sets admitted by TAS implicitly). Such a pod's
 * node usage is its Workload's assignment, not its own. The label
 * kueue.x-k8s.io/tas of Kueue's older releases counts for nothing: Kueue
 * v0.17 counts such a pod as any other (bench/diff-kueue.sh, scenario
 * 308). */
int cu_topology_pod_is_tas(cu_ann_get get, void *ud);

/* Kueue's topology request of a pod set from its template's annotations
 * (get/ud) and what the integration adds: the pod index label (Job and
 * JobSet: batch.kubernetes.io/job-completion-index, pod group:
 * kueue.x-k8s.io/pod-group-pod-index, LeaderWorkerSet workers:
 * leaderworkerset.sigs.k8s.io/worker-index, NULL for none) and the
 * sub-group (JobSet: jobset.sigs.k8s.io/job-index and the replicas; NULL
 * for none). As Kueue, a request is made whenever an index label is given,
 * even without a TAS annotation. Strings are borrowed from get and the
 * arguments. Returns 0 (out->present 0: no request), or -1 when an
 * annotation cannot be read (unconstrained not a boolean, slice size not
 * a 32-bit integer: the webhook refuses those). */
int cu_topo_request_build(cu_ann_get get, void *ud, const char *pod_index_label,
                          const char *subgroup_label, const int32_t *subgroup_count,
                          cu_topo_request *out);

/* The request as the Workload's spec.podSets[].topologyRequest (Kueue's
 * field order); NULL when not present or out of memory. */
json_object *cu_topo_request_json(const cu_topo_request *r);

/* The one call of every Workload builder: the request of the pod template
 * tmpl (its metadata.annotations) set as ps["topologyRequest"] when there
 * is one. Returns cu_topo_request_build's result. */
int cu_topo_request_add(json_object *ps, json_object *tmpl, const char *pod_index_label,
                        const char *subgroup_label, const int32_t *subgroup_count);

/* Kueue's webhook rules on the annotations of one pod template
 * (jobframework's ValidateTASPodSetRequest), errors "PATH.annotations[KEY]:
 * ..." into e, path being the template's metadata ("spec.template.metadata"). */
void cu_topo_request_validate(cu_ann_get get, void *ud, const char *path, cu_diag *e);
/* The slice size must not exceed the pod set's count (jobframework's
 * ValidateSliceSizeAnnotationUpperBound), errors as above. */
void cu_topo_slice_bound(cu_ann_get get, void *ud, const char *path, int32_t count, cu_diag *e);

/* One pod set of a JobSet or LeaderWorkerSet for the group rule: path is
 * its template's annotations ("spec.replicatedJobs[0].template.spec.
 * template.metadata.annotations"), count its pods, req its request. */
typedef struct cu_topo_member {
    const char *path;
    int32_t count;
    cu_topo_request req;
} cu_topo_member;
/* Kueue's ValidatePodSetGroupingTopology: the pod sets that share a
 * podSetGroupName come in pairs, at least one of a single pod, with the
 * same required or preferred level; errors into e as the webhooks word
 * them. */
void cu_topo_groups_validate(const cu_topo_member *m, size_t n, cu_diag *e);

/* The assignment as v1beta2's status.admission.podSetAssignments[]
 * .topologyAssignment (levels and slices, Kueue's compressed encoding),
 * NULL when out of memory or malformed (a count < 0, a NULL value). */
json_object *cu_topo_assign_json(const cu_topo_assign *ta);

#endif
