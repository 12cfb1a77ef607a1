/*
 * cu_objects.h - C structs for the Kueue and core Kubernetes objects Cueue
 * reads, their decoders from cu_doc trees (kueue.x-k8s.io v1beta2, and
 * v1beta1 mapped on read), validation by Kueue's rules and the Job ->
 * Workload conversion (its rules in cu_job.h; pod requests in cu_podreq.h).
 *
 * Ownership: every object and every string in it is owned by the arena of
 * the cu_world it was decoded into. Objects are immutable once decoded;
 * the engine copies what it needs.
 *
 * Resource amounts are int64 counts of the resource's unit (cu_quantity.h,
 * cu_qty_res_scale): milli-units for cpu, whole units for every other
 * resource. Ratios (fair-sharing weights, transformation multipliers,
 * resource weights) are milli-units.
 */
#ifndef CU_OBJECTS_H
#define CU_OBJECTS_H

#include "cu_base.h"
#include "cu_doc.h"
#include "cu_job.h"
#include "cu_quantity.h"

#define CU_GROUP "kueue.x-k8s.io"
#define CU_LABEL_QUEUE_NAME "kueue.x-k8s.io/queue-name"
#define CU_LABEL_PRIORITY_CLASS "kueue.x-k8s.io/priority-class"
#define CU_ANN_JOB_MIN_PARALLELISM "kueue.x-k8s.io/job-min-parallelism"
/* Kueue's finalizer on a ClusterQueue or ResourceFlavor while it is in use */
#define CU_FINALIZER_IN_USE "kueue.x-k8s.io/resource-in-use"
/* The pod integration's names (Kueue's pod constants) */
#define CU_LABEL_MANAGED "kueue.x-k8s.io/managed" /* on objects Kueue manages */
#define CU_LABEL_MANAGED_VALUE "true"
#define CU_LABEL_PREBUILT_WORKLOAD "kueue.x-k8s.io/prebuilt-workload-name"
#define CU_LABEL_POD_GROUP_NAME "kueue.x-k8s.io/pod-group-name"
#define CU_ANN_POD_GROUP_TOTAL_COUNT "kueue.x-k8s.io/pod-group-total-count"
#define CU_ANN_POD_GROUP_FAST_ADMISSION "kueue.x-k8s.io/pod-group-fast-admission"
#define CU_ANN_POD_GROUP_SERVING "kueue.x-k8s.io/pod-group-serving"
#define CU_ANN_POD_ROLE_HASH "kueue.x-k8s.io/role-hash"
#define CU_ANN_POD_RETRIABLE_IN_GROUP "kueue.x-k8s.io/retriable-in-group"
#define CU_ANN_POD_SUSPENDING_PARENT "kueue.x-k8s.io/pod-suspending-parent"
#define CU_ANN_IS_GROUP_WORKLOAD "kueue.x-k8s.io/is-group-workload"
#define CU_POD_SCHEDULING_GATE "kueue.x-k8s.io/admission"
#define CU_FINALIZER_MANAGED "kueue.x-k8s.io/managed" /* on managed pods, and group Workloads */

typedef struct cu_kv {
    const char *key, *value;
} cu_kv;
typedef struct cu_kvs {
    size_t n;
    cu_kv *items;
} cu_kvs;
typedef struct cu_strs {
    size_t n;
    const char **items;
} cu_strs;

/* One resource amount; lists are kept sorted by name, names unique. */
typedef struct cu_res {
    const char *name;
    int64_t milli; /* an amount: in name's unit (cu_qty_res_scale), so milli-units
                      only for cpu; a ratio (weights, multipliers): milli-units */
} cu_res;
typedef struct cu_reslist {
    size_t n;
    cu_res *items;
} cu_reslist;

/* qsort comparator of an array of const char * (strcmp order). */
int cu_strp_cmp(const void *a, const void *b);
/* Returns the value in kvs for key, or NULL. */
const char *cu_kvs_get(const cu_kvs *kvs, const char *key);
/* Returns the amount for name in l (0 when absent). */
int64_t cu_reslist_get(const cu_reslist *l, const char *name);

typedef enum cu_tolop { CU_TOL_EQUAL = 0, CU_TOL_EXISTS } cu_tolop;
typedef struct cu_toleration {
    const char *key; /* NULL/"" with Exists = tolerate everything */
    cu_tolop op;
    const char *value;  /* may be NULL */
    const char *effect; /* NULL/"" = all effects */
} cu_toleration;

typedef struct cu_taint {
    const char *key, *value, *effect;
} cu_taint;

typedef enum cu_selop {
    CU_SEL_IN = 0,
    CU_SEL_NOTIN,
    CU_SEL_EXISTS,
    CU_SEL_DOESNOTEXIST,
    CU_SEL_GT,
    CU_SEL_LT
} cu_selop;
typedef struct cu_selreq {
    const char *key;
    cu_selop op;
    cu_strs values;
} cu_selreq;
/* The operator's name as written in manifests ("In", "DoesNotExist", ...),
 * "?" for a value out of range. Static storage. */
const char *cu_selop_name(cu_selop op);
/* A node selector term: all requirements must hold. */
typedef struct cu_selterm {
    size_t n;
    cu_selreq *reqs;
} cu_selterm;

/* metav1.LabelSelector. is_null: the field was absent or null. */
typedef struct cu_labelsel {
    int is_null;
    cu_kvs match_labels;
    size_t nexpr;
    cu_selreq *exprs; /* In, NotIn, Exists, DoesNotExist only */
} cu_labelsel;

/* Returns 1 if labels match sel (a null selector matches nothing, an
 * empty one everything). */
int cu_labelsel_matches(const cu_labelsel *sel, const cu_kvs *labels);

typedef enum cu_kind {
    CU_KIND_UNKNOWN = 0,
    CU_KIND_RESOURCE_FLAVOR,
    CU_KIND_CLUSTER_QUEUE,
    CU_KIND_COHORT,
    CU_KIND_LOCAL_QUEUE,
    CU_KIND_WORKLOAD,
    CU_KIND_WORKLOAD_PRIORITY_CLASS,
    CU_KIND_JOB,
    CU_KIND_NAMESPACE,
    CU_KIND_PRIORITY_CLASS,
    CU_KIND_CONFIGURATION,
    CU_KIND_ADMISSION_CHECK,
    CU_KIND_JOBSET,
    CU_KIND_TOPOLOGY,
    CU_KIND_NODE, /* core/v1 Node: TAS capacity (cu_kube_node) */
    CU_KIND_POD   /* core/v1 Pod bound to a node: TAS usage (cu_kube_pod) */
} cu_kind;

/* Returns "ClusterQueue" etc. */
const char *cu_kind_name(cu_kind k);

typedef struct cu_meta {
    const char *api_version; /* as written */
    const char *name;
    const char *ns;  /* NULL for cluster-scoped objects */
    const char *uid; /* may be NULL */
    cu_kvs labels, annotations;
    int64_t created_ms; /* creationTimestamp; 0 if absent (see load) */
    int has_created;
    int deleting;     /* metadata.deletionTimestamp is set: Terminating */
    const char *file; /* where it was read from */
    int line;
    size_t seq; /* order of appearance across all inputs */
} cu_meta;

/* ---- quotas ---- */
typedef struct cu_rquota {
    const char *name; /* resource */
    int64_t nominal;
    int has_blimit;
    int64_t blimit;
    int has_llimit;
    int64_t llimit;
    /* A quantity the CRD pattern accepts but that does not fit in int64
     * of the resource's unit (CU_EOVERFLOW): the string as written, the value 0.
     * Validation reports it on the object, which is then invalid. */
    const char *big_nominal, *big_blimit, *big_llimit;
} cu_rquota;
typedef struct cu_fquota {
    const char *name;
    size_t n;
    cu_rquota *res;
} cu_fquota;
typedef struct cu_rgroup {
    cu_strs covered;
    size_t nflavors;
    cu_fquota *flavors;
} cu_rgroup;
typedef struct cu_rgroups {
    size_t n;
    cu_rgroup *items;
} cu_rgroups;

typedef enum cu_queueing { CU_BEST_EFFORT_FIFO = 0, CU_STRICT_FIFO } cu_queueing;
typedef enum cu_stop { CU_STOP_NONE = 0, CU_STOP_HOLD, CU_STOP_HOLD_AND_DRAIN } cu_stop;
typedef enum cu_fung { CU_FUNG_MAY_STOP_SEARCH = 0, CU_FUNG_TRY_NEXT_FLAVOR } cu_fung;
typedef enum cu_fpref {
    CU_PREF_UNSET = 0,
    CU_PREF_BORROWING_OVER_PREEMPTION,
    CU_PREF_PREEMPTION_OVER_BORROWING
} cu_fpref;
typedef enum cu_ppolicy {
    CU_PP_NEVER = 0,
    CU_PP_LOWER_PRIORITY,
    CU_PP_LOWER_OR_NEWER_EQUAL_PRIORITY,
    CU_PP_ANY
} cu_ppolicy;

typedef struct cu_resource_flavor {
    cu_meta meta;
    cu_kvs node_labels;
    size_t ntaints;
    cu_taint *taints;
    size_t ntols;
    cu_toleration *tols;
    const char *topology_name;
} cu_resource_flavor;

/* A Topology (kueue.x-k8s.io, cluster scoped, the same in v1beta1 and
 * v1beta2): the levels of Topology-Aware Scheduling, each a node label,
 * from the highest (e.g. a block) to the lowest (often
 * kubernetes.io/hostname). Validation: cu_object_validate. */
#define CU_TOPOLOGY_MAX_LEVELS 16
typedef struct cu_topology {
    cu_meta meta;
    size_t nlevels;
    const char **levels; /* spec.levels[].nodeLabel, highest first */
} cu_topology;

/* A Node (core/v1) as Topology-Aware Scheduling reads it (cu_world
 * nodes; the controller's Node informer). */
typedef struct cu_kube_node {
    cu_meta meta;           /* name and labels */
    cu_reslist allocatable; /* status.allocatable (status.capacity when absent) */
    size_t ntaints;
    cu_taint *taints;  /* spec.taints */
    int unschedulable; /* spec.unschedulable */
    int ready;         /* condition Ready is True (no Ready condition: 0) */
} cu_kube_node;

/* A Pod (core/v1) as TAS reads it: the requests of a pod bound to a node
 * count against that node while it has not ended (cu_world pods; the
 * controller's Pod informer). */
typedef struct cu_kube_pod {
    cu_meta meta;
    const char *node_name; /* spec.nodeName, NULL when not bound */
    const char *phase;     /* status.phase, NULL when absent */
    int ended;             /* phase Succeeded or Failed */
    int tas;               /* placed by TAS (cu_topology_pod_is_tas), whose
                              usage is counted from its Workload's topology
                              assignment, not from the pod */
    cu_reslist requests;   /* one pod's effective requests (cu_pod_requests:
                              max of init containers, sum of containers,
                              overhead), without "pods" */
} cu_kube_pod;

/* spec.admissionChecksStrategy.admissionChecks[] (v1beta1
 * spec.admissionChecks: names only). on_flavors empty: every flavor. */
typedef struct cu_cqcheck {
    const char *name;
    cu_strs on_flavors;
} cu_cqcheck;

typedef struct cu_cluster_queue {
    cu_meta meta;
    const char *cohort; /* NULL when none (v1beta1 spec.cohort) */
    cu_rgroups groups;
    cu_queueing queueing;
    cu_labelsel ns_selector; /* is_null: selects no namespace */
    struct {
        cu_fung when_can_borrow;  /* default MayStopSearch */
        cu_fung when_can_preempt; /* default TryNextFlavor */
        cu_fpref preference;
    } fungibility;
    struct {
        cu_ppolicy within_cq;     /* Never, LowerPriority, LowerOrNewerEqualPriority */
        cu_ppolicy reclaim;       /* Never, LowerPriority, Any */
        cu_ppolicy borrow_policy; /* Never, LowerPriority */
        int has_threshold;
        int32_t threshold;
    } preemption;
    cu_stop stop_policy;
    int64_t fs_weight; /* milli; default 1000 */
    int afs;           /* admissionScope UsageBasedAdmissionFairSharing */
    size_t nchecks;    /* admissionChecksStrategy.admissionChecks */
    cu_cqcheck *checks;
} cu_cluster_queue;

/* An AdmissionCheck (kueue.x-k8s.io, cluster scoped): a gate that an
 * external controller (spec.controllerName) runs on workloads holding
 * quota; it reports the check usable with status condition Active=True. */
typedef struct cu_admission_check {
    cu_meta meta;
    const char *controller;                            /* spec.controllerName */
    const char *param_group, *param_kind, *param_name; /* spec.parameters, NULL when none */
    int active;                                        /* status.conditions Active=True */
} cu_admission_check;

typedef struct cu_cohort {
    cu_meta meta;
    const char *parent; /* NULL for a root */
    cu_rgroups groups;
    int64_t fs_weight; /* milli; default 1000 */
} cu_cohort;

typedef struct cu_local_queue {
    cu_meta meta;
    const char *cluster_queue;
    cu_stop stop_policy;
    int64_t fs_weight; /* milli; default 1000 */
} cu_local_queue;

/* A pod set's spec.podSets[].topologyRequest (Kueue's
 * PodSetTopologyRequest; the same in v1beta1 and v1beta2 but for the alpha
 * multi-layer constraints, which Cueue does not read). A Workload built
 * from a Job, JobSet, pod group or LeaderWorkerSet gets it from the pod
 * template's annotations (cu_topology.h). present 0: no request (all
 * fields NULL / 0). The level fields hold a Topology level's node label. */
typedef struct cu_topo_request {
    int present;
    const char *required;  /* all pods in one domain of this level */
    const char *preferred; /* the lowest level from here up that fits */
    int has_unconstrained;
    int unconstrained;                                  /* true: any nodes, placed pod by pod */
    const char *pod_index_label, *subgroup_index_label; /* NULL when unset */
    int has_subgroup_count;
    int32_t subgroup_count;
    const char *podset_group_name;
    const char *slice_required; /* podSetSliceRequiredTopology */
    int has_slice_size;
    int32_t slice_size; /* podSetSliceSize */
} cu_topo_request;

typedef struct cu_podset {
    const char *name; /* default "main" */
    int32_t count;    /* default 1 */
    int has_min;
    int32_t min_count;
    cu_reslist requests; /* per pod, by the Kueue rules (no "pods"); after
                            excludeResourcePrefixes and transformations
                            (cu_exclude.h) once the caller applied them */
    /* Set by cu_world_effective_requests when a transformation matched
     * (else NULL / empty): from[i] names the inputs whose transformations
     * produced requests.items[i] ("cpu", "cpu, memory"), NULL for a
     * resource only requested as is; pre_xform is the requests before the
     * transformations (after the exclusions). */
    const char **from;
    cu_reslist pre_xform;
    cu_kvs node_selector;
    size_t nterms;
    cu_selterm *terms; /* required node affinity (ORed) */
    size_t ntols;
    cu_toleration *tols;
    const char *priority_class_name; /* template spec.priorityClassName */
    cu_topo_request topo;            /* topologyRequest */
} cu_podset;

/* The topology assignment of a pod set (status.admission.podSetAssignments[]
 * .topologyAssignment), held expanded, in v1beta1's shape: the levels (node
 * labels, highest first, as the Topology's, possibly only its lowest ones)
 * and the domains, each with one value per level (domain i's values are
 * values[i * nlevels .. (i + 1) * nlevels)) and its pod count.
 * cu_topo_assign_json writes it in v1beta2's compressed shape (slices);
 * the Workload decoder reads both shapes into it. To fill one: set levels,
 * nlevels, ndomains, and values / counts of ndomains * nlevels and ndomains
 * entries (arena or static storage; the struct owns nothing). */
typedef struct cu_topo_assign {
    size_t nlevels;
    const char **levels;
    size_t ndomains;
    const char **values; /* ndomains * nlevels */
    int32_t *counts;     /* ndomains */
} cu_topo_assign;

typedef struct cu_psa { /* status.admission.podSetAssignments[] */
    const char *name;
    int32_t count;
    cu_kvs flavors;       /* resource -> flavor */
    cu_reslist usage;     /* resourceUsage (total for the pod set) */
    cu_topo_assign *topo; /* topologyAssignment, NULL when none */
} cu_psa;

typedef struct cu_condition {
    const char *type, *status, *reason, *message;
    int64_t ltt_ms;
} cu_condition;

/* A Workload's status.admissionChecks[] entry. */
typedef enum cu_check_state {
    CU_CHECK_PENDING = 0,
    CU_CHECK_READY,
    CU_CHECK_RETRY,
    CU_CHECK_REJECTED
} cu_check_state;
/* "Pending", "Ready", "Retry", "Rejected". Static storage. */
const char *cu_check_state_name(cu_check_state s);

typedef struct cu_acstate {
    const char *name;
    cu_check_state state;
    const char *message; /* NULL when absent */
    int64_t ltt_ms;      /* lastTransitionTime, 0 when absent */
    int has_requeue_after;
    int32_t requeue_after_s; /* requeueAfterSeconds */
    int32_t retry_count;     /* retryCount, 0 when absent */
} cu_acstate;

typedef struct cu_workload {
    cu_meta meta;
    const char *queue_name;
    int has_priority;
    int32_t priority;                         /* spec.priority */
    const char *pc_group, *pc_kind, *pc_name; /* priorityClassRef (NULL when none) */
    int active;                               /* default 1 */
    size_t npodsets;
    cu_podset *podsets;
    int has_admission; /* status.admission present */
    const char *adm_cq;
    size_t npsa;
    cu_psa *psa;
    size_t nconds;
    cu_condition *conds;
    size_t nchecks; /* status.admissionChecks */
    cu_acstate *checks;
    const char *job_name; /* set when built from a Job */
} cu_workload;

typedef struct cu_wpc {
    cu_meta meta;
    int32_t value;
    const char *description;
} cu_wpc;
typedef struct cu_priority_class {
    cu_meta meta;
    int32_t value;
    int global_default;
} cu_priority_class;
typedef struct cu_namespace {
    cu_meta meta;
} cu_namespace;

/* The controller Configuration (config.kueue.x-k8s.io), the parts the
 * engine uses. */
typedef enum cu_fs_strategy {
    CU_FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE = 0,
    CU_FS_LESS_THAN_INITIAL_SHARE = 1
} cu_fs_strategy;

/* waitForPodsReady.requeuingStrategy.timestamp */
typedef enum cu_requeue_ts { CU_REQUEUE_EVICTION = 0, CU_REQUEUE_CREATION } cu_requeue_ts;

#define CU_CONFIG_DEFAULT_NAMESPACE "kueue-system"
#define CU_CONFIG_DEFAULT_LEASE_NAME "c1f6bfd2.kueue.x-k8s.io"
#define CU_CONFIG_DEFAULT_METRICS_ADDR ":8443"
#define CU_CONFIG_DEFAULT_HEALTH_ADDR ":8081"
/* Kueue's current v1beta2 clientConnection defaults (apis/config/v1beta2/
 * defaults.go; the 300/500 of the semantics reference are an older
 * release's), the same as the kube client's own defaults. */
#define CU_CONFIG_DEFAULT_QPS 1000.0
#define CU_CONFIG_DEFAULT_BURST 1000

/* All strings are arena-owned or static; never free them. Every field
 * holds its effective value (Kueue's defaults applied); has_* flags say
 * whether the file set a value the command line may also set. */
/* One of resources.transformations: per pod, each unit of `input`
 * (its quantity rounded up to a whole number, times the whole units of
 * multiply_by when set and requested) adds outputs[k] of each output
 * resource; Replace drops the input itself, Retain (the default) keeps it. */
typedef enum cu_xform_strategy { CU_XFORM_RETAIN = 0, CU_XFORM_REPLACE = 1 } cu_xform_strategy;
typedef struct cu_xform {
    const char *input;
    cu_xform_strategy strategy;
    const char *multiply_by; /* NULL when none */
    cu_reslist outputs;      /* milli per unit of input, >= 0, sorted by name */
} cu_xform;

typedef struct cu_config {
    cu_meta meta;
    int v1beta1;        /* read from config.kueue.x-k8s.io/v1beta1 */
    int fair_sharing;   /* fairSharing block present (v1beta1: enable: true) */
    size_t nstrategies; /* fairSharing.preemptionStrategies (0: default both) */
    cu_fs_strategy strategies[2];
    int afs;                  /* admissionFairSharing block present */
    int64_t afs_half_life_ms; /* usageHalfLifeTime */
    int64_t afs_sampling_ms;  /* usageSamplingInterval (default 5m) */
    cu_reslist afs_weights;   /* resourceWeights (milli; default 1 per resource) */
    int manage_jobs_without_queue_name;

    const char *ns; /* namespace; default "kueue-system" */
    int has_ns;     /* the file set it */
    /* managedJobsNamespaceSelector: never is_null after decoding; default
     * kubernetes.io/metadata.name NotIn [kube-system, <ns>]. Match it with
     * cu_labelsel_matches against the Namespace's labels (the API server
     * sets kubernetes.io/metadata.name on every Namespace). */
    cu_labelsel managed_ns_selector;
    int has_managed_ns_selector; /* the file set one */

    struct {
        int present;                     /* the block is in the file (and not null) */
        int enabled;                     /* v1beta2: present; v1beta1: present && enable */
        int64_t timeout_ms;              /* default 30m (v1beta1 5m); "0s" = the default */
        int block_admission;             /* default 0 (v1beta1: = enable) */
        int recovery_enabled;            /* 0 when recoveryTimeout is "0s" */
        int64_t recovery_timeout_ms;     /* default = timeout_ms; 0 when disabled */
        cu_requeue_ts requeue_timestamp; /* default Eviction */
        int32_t backoff_limit_count;     /* -1 = null/absent = requeue forever */
        int32_t backoff_base_s;          /* default 60 */
        int32_t backoff_max_s;           /* default 3600; >= backoff_base_s */
    } pods_ready;

    cu_strs frameworks;                /* integrations.frameworks; ["batch/job"] when empty */
    cu_strs unsupported_frameworks;    /* listed frameworks Cueue does not integrate
                                       (Kueue knows them; all but "batch/job") */
    cu_strs unknown_frameworks;        /* listed names Kueue does not know either (typos?);
                                       also in unsupported_frameworks */
    cu_strs label_keys_to_copy;        /* integrations.labelKeysToCopy */
    cu_strs exclude_resource_prefixes; /* resources.excludeResourcePrefixes */
    size_t nxforms;                    /* resources.transformations */
    cu_xform *xforms;

    /* clientConnection. The controller keeps its kube client's defaults
     * unless has_qps / has_burst. qps < 0: no client-side rate limit;
     * qps == 0: client-go reads it as "use the library default". */
    struct {
        int has_qps;
        double qps; /* default CU_CONFIG_DEFAULT_QPS */
        int has_burst;
        int32_t burst; /* default CU_CONFIG_DEFAULT_BURST */
    } client;

    /* leaderElection (component-base LeaderElectionConfiguration). The
     * three durations satisfy client-go's rules: lease > renew >
     * 1.2 * retry, all > 0 ("0s" in the file means the default). */
    struct {
        int has_leader_elect;
        int leader_elect;               /* Kueue's default: 1 */
        const char *resource_name;      /* default "c1f6bfd2.kueue.x-k8s.io" */
        const char *resource_namespace; /* default = ns */
        int has_lease_duration;
        int64_t lease_duration_ms; /* default 15s */
        int has_renew_deadline;
        int64_t renew_deadline_ms; /* default 10s */
        int has_retry_period;
        int64_t retry_period_ms; /* default 2s */
    } leader_election;

    const char *metrics_bind_address; /* default ":8443"; "0" disables */
    int has_metrics_bind_address;
    const char *health_bind_address; /* health.healthProbeBindAddress; default ":8081";
                                          "0" disables */
    int has_health_bind_address;

    /* webhook (controller-runtime's webhook server): where the admission
     * and conversion webhooks are served */
    struct {
        int32_t port;         /* default 9443 */
        int has_port;         /* the file set it (non-zero) */
        const char *host;     /* default "": every address */
        const char *cert_dir; /* default /tmp/k8s-webhook-server/serving-certs */
        int has_cert_dir;
    } webhook;
    /* internalCertManagement: the controller makes and rotates the
     * webhook's certificate (else they are read from webhook.certDir) */
    struct {
        int enable;               /* default 1 */
        const char *service_name; /* default "kueue-webhook-service" */
        const char *secret_name;  /* default "kueue-webhook-server-cert" */
    } cert_mgmt;
} cu_config;

/* Fills x (zeroed first) with Kueue's v1beta2 defaults: the Configuration
 * the controller runs with when no file is given (no fair sharing, no
 * AFS, waitForPodsReady off). The default selector is allocated in a.
 * Returns CU_OK or CU_ENOMEM. */
cu_err cu_config_init_defaults(cu_config *x, cu_arena *a);

/* Returns 1 when name (e.g. "batch/job") is in cfg's integrations
 * frameworks; a NULL cfg has the default list ["batch/job"]. Borrows. */
int cu_config_framework_enabled(const cu_config *cfg, const char *name);

/* Returns 1 when a job without the queue-name label in a namespace with
 * these labels is managed: manageJobsWithoutQueueName and the namespace
 * matches managedJobsNamespaceSelector. NULL cfg: 0. Borrows. */
int cu_config_manages_unlabelled(const cu_config *cfg, const cu_kvs *ns_labels);

/* Returns the condition of type in wl, or NULL. */
const cu_condition *cu_workload_cond(const cu_workload *wl, const char *type);
/* Returns 1 when wl holds quota: has_admission and QuotaReserved=True. */
int cu_workload_has_quota(const cu_workload *wl);
/* Returns 1 when wl has Finished=True. */
int cu_workload_finished(const cu_workload *wl);
/* Returns wl's status.admissionChecks entry named name, or NULL. */
const cu_acstate *cu_workload_check(const cu_workload *wl, const char *name);

/* The AdmissionChecks of cq that apply to a workload, by Kueue's rule
 * (pkg/workload AdmissionChecksForWorkload): when every check runs on all
 * of cq's flavors (no onFlavors, or onFlavors naming them all) all apply,
 * before any admission too; otherwise, only once the workload holds quota
 * (has_admission), the checks whose flavors include one of the flavors it
 * was assigned (flavors[0..nflavors), repeats allowed). Writes up to max
 * names (borrowed from cq) into out, sorted by name, and returns how many
 * apply (which may exceed max). */
size_t cu_cq_checks_for(const cu_cluster_queue *cq, int has_admission, const char *const *flavors,
                        size_t nflavors, const char **out, size_t max);

/* Kueue's admission by checks: 1 when every one of the names (the checks
 * that apply, cu_cq_checks_for) has an entry in wl's status.admissionChecks
 * and every entry there is Ready. */
int cu_workload_checks_ready(const cu_workload *wl, const char *const *names, size_t n);

/* Everything read from the inputs. */
typedef struct cu_world {
    cu_arena arena;
    CU_VEC(cu_resource_flavor *) flavors;
    CU_VEC(cu_cluster_queue *) cqs;
    CU_VEC(cu_cohort *) cohorts;
    CU_VEC(cu_local_queue *) lqs;
    CU_VEC(cu_workload *) workloads; /* Workloads, including those built from Jobs */
    CU_VEC(cu_wpc *) wpcs;
    CU_VEC(cu_priority_class *) pcs;
    CU_VEC(cu_namespace *) namespaces;
    CU_VEC(cu_config *) configs;
    CU_VEC(cu_admission_check *) checks;
    CU_VEC(cu_topology *) topologies;
    CU_VEC(cu_kube_node *) nodes; /* Nodes (TAS), e.g. for cueue simulate */
    CU_VEC(cu_kube_pod *) pods;   /* Pods bound to nodes (TAS usage) */
    /* queued Pods of pod groups, until cu_world_pod_groups makes their
     * groups' Workloads */
    CU_VEC(struct cu_group_pod *) group_pods;
    size_t nseq;
} cu_world;

/* Initializes an empty world. */
void cu_world_init(cu_world *w);
/* Frees the arena and the vectors. */
void cu_world_free(cu_world *w);

/* Decodes one document root into w: known kinds become objects (a Job with
 * the queue-name label becomes a Workload; a Job without it is skipped with
 * a warning; a Pod with it becomes the Workload of a single pod, one in a
 * pod group is kept for cu_world_pod_groups; other Pods go to w->pods),
 * "List" kinds are expanded, unknown kinds are skipped with a
 * warning naming FILE:LINE, kind and name. Structural problems (wrong
 * type, bad quantity, unknown enum value) are errors in d naming kind,
 * namespace/name, the field path and the problem; the object is then
 * dropped and CU_EINVAL returned, but other objects are unaffected.
 * Borrows doc (strings are copied into w's arena). */
cu_err cu_world_decode(cu_world *w, const cu_doc *doc, cu_diag *d);

/* The Workloads of the pod groups whose queued Pods cu_world_decode kept,
 * as Kueue's pod integration makes them (cu_pod_group_workload: one pod
 * set per role), once a group has as many pods (not Failed) as its
 * pod-group-total-count; a group with fewer is skipped with a warning (its
 * Workload waits for them), the excess of one with more is left out with
 * a warning. A group whose pods disagree on the total count or the queue,
 * or whose count is not an integer >= 1, is an error naming a pod (Kueue's
 * messages). A group whose pods all ended is Finished as Kueue finishes it
 * ("Pods succeeded: S/T."). Returns CU_OK, CU_EINVAL or CU_ENOMEM. */
cu_err cu_world_pod_groups(cu_world *w, cu_diag *d);

/* Loads paths (files, or folders read recursively in name order taking
 * *.yaml, *.yml, *.json) into w, then its pod groups (cu_world_pod_groups).
 * A syntax error is reported as "FILE:LINE:COLUMN: message" and returns
 * CU_ESYNTAX; decode errors are collected (all of them) and return
 * CU_EINVAL. */
cu_err cu_world_load(cu_world *w, const char *const *paths, size_t npaths, cu_diag *d);

/* Validates every object by Kueue's rules and cross-object consistency
 * that Kueue's webhooks check (not references to missing objects, which
 * make queues inactive instead). Appends every problem to d as
 * "Kind ns/name: field.path: problem". Returns CU_OK or CU_EINVAL. */
cu_err cu_world_validate(const cu_world *w, cu_diag *d);

/* Validates one object by the same rules (everything cu_world_validate
 * checks but duplicates, which need the other objects). obj points at the
 * struct of kind (cu_cluster_queue for CU_KIND_CLUSTER_QUEUE, ...); kinds
 * without rules (Job, Configuration) are an error. Messages as above.
 * Returns CU_OK or CU_EINVAL. Borrows obj. */
cu_err cu_object_validate(cu_kind kind, const void *obj, cu_diag *d);

/* Resolves each workload's priority: explicit spec.priority wins;
 * otherwise priorityClassRef to a WorkloadPriorityClass or PriorityClass;
 * otherwise a globalDefault PriorityClass; otherwise 0. A reference to a
 * missing class is an error in d. Returns the priority via out. */
cu_err cu_workload_priority(const cu_world *w, const cu_workload *wl, int32_t *out, cu_diag *d);

/* ---- conversion ---- */
/* Rewrites a v1beta1 kueue.x-k8s.io document in place into v1beta2
 * (spec.cohort -> cohortName, priorityClassName/Source ->
 * priorityClassRef, Borrow/Preempt -> MayStopSearch, admissionChecks ->
 * admissionChecksStrategy, Cohort spec.parent -> parentName, and the other
 * rules of the conversion webhook: api/cu_convert.c, docs/conversion.md).
 * Documents of other groups or already v1beta2 are left alone. Returns 1
 * if changed. */
int cu_convert_v1beta2(cu_arena *a, cu_node *doc);
/* As cu_convert_v1beta2, and a warning in d (may be NULL) for every
 * document of a Kueue group (kueue.x-k8s.io, config.kueue.x-k8s.io) in a
 * version other than v1beta1 and v1beta2, such as v1alpha1: passed
 * through unchanged, in the wording of cu_diag_unknown_kind. file names
 * the input. */
int cu_convert_v1beta2_diag(cu_arena *a, cu_node *doc, const char *file, cu_diag *d);

/* The one wording of a document of a kind Cueue does not know:
 * "FILE:LINE: VERB unknown kind KIND (apiVersion API) NAME", VERB being what
 * the caller does with it ("skipping" in simulate, "passing through" in
 * convert). */
void cu_diag_unknown_kind(cu_diag *d, const char *file, const cu_node *doc, const char *verb);

#endif
