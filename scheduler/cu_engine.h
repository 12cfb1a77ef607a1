/*
 * cu_engine.h - the admission engine: Kueue's quota model and scheduling
 * cycle, with no I/O. `cueue simulate`, the benchmark and (later) the
 * controller all drive this one API.
 *
 * Ownership: the engine borrows the cu_world (and the objects in it) it was
 * loaded from; the world must outlive the engine. Workloads added with
 * cu_engine_add_workload are borrowed the same way. Views returned by the
 * cu_engine_*_info functions are engine-owned and valid until the next
 * call that changes the engine.
 */
#ifndef CU_ENGINE_H
#define CU_ENGINE_H

#include "cu_objects.h"

typedef struct cu_engine cu_engine;

typedef struct cu_engine_opts {
    cu_clock clock;         /* time source for admission timestamps */
    int one_head_per_cycle; /* 1: Kueue's exact loop, one head per
                                ClusterQueue per cycle. 0 (default):
                                Cueue's cycle, which runs Kueue's rounds
                                back to back without rebuilding state and
                                drains a ClusterQueue alone in its cohort
                                tree; identical results, fewer cycles. */
    int fair_sharing;       /* Kueue's fairSharing: DRS ordering and
                                fair-sharing preemption */
    size_t nstrategies;     /* fair-sharing preemption strategies, in
                                order; 0 = [LessThanOrEqualToFinalShare,
                                LessThanInitialShare] */
    cu_fs_strategy strategies[2];
    int afs; /* Admission Fair Sharing configured */
    int64_t afs_half_life_ms;
    int64_t afs_sampling_ms;       /* 0 = 5 minutes */
    const cu_reslist *afs_weights; /* borrowed; NULL = 1 per resource */
    int max_rounds;                /* rounds per cycle at most (0: 100000) */
    int preemption_budget;         /* a workload preempted this many times within
                                preemption_window_ms is not preempted
                                again until the window ends (0: 3; <0:
                                unlimited, as Kueue) */
    int64_t preemption_window_ms;  /* 0: 10 minutes */
    int manual_evictions;          /* 0: a preempted workload releases its quota
                                at the start of the next round (simulation);
                                1: only when the driver calls
                                cu_engine_eviction_done (controller) */
    int requeue_batch;             /* when quota is freed (eviction, finish),
                                the inadmissible workloads of the cohort
                                tree go back to their heaps:
                                CU_RQ_IMMEDIATE (0) at once;
                                CU_RQ_IDLE once a cycle has nothing else to
                                do (an offline run: Kueue's cycles settle
                                well within its 1 s batch);
                                CU_RQ_TIMED requeue_batch_ms after the first
                                such event, when the driver calls
                                cu_engine_requeue_due (controller). Kueue
                                batches these moves by 1 s
                                (pkg/cache/queue inadmissible_workloads.go,
                                requeueBatchPeriod): a workload that arrives
                                in that second is tried before them. */
    int64_t requeue_batch_ms;      /* CU_RQ_TIMED: 0 = 1000 */
} cu_engine_opts;

enum { CU_RQ_IMMEDIATE = 0, CU_RQ_IDLE, CU_RQ_TIMED };

/* Returns a new empty engine; caller frees with cu_engine_free. */
cu_engine *cu_engine_new(const cu_engine_opts *opts);
void cu_engine_free(cu_engine *e);

/* Builds flavors, the cohort tree, ClusterQueues and LocalQueues from w,
 * then adds every workload of w (those holding quota count from the
 * start). Problems that Kueue reports as status (missing flavor, cohort
 * cycle, missing LocalQueue) are not errors: they show up as inactive
 * queues and pending reasons. Borrows w. */
cu_err cu_engine_load(cu_engine *e, const cu_world *w, cu_diag *d);

/* Adds one workload (borrowed; must outlive the engine). Its priority is
 * resolved against the loaded world. Returns its index, or -1 on OOM. */
int cu_engine_add_workload(cu_engine *e, const cu_workload *wl);

/* Returns 1 if workload idx (as returned by cu_engine_add_workload, or
 * the input order for cu_engine_load) holds quota. */
int cu_engine_wl_admitted(const cu_engine *e, int idx);

/* Moves up to max indices of workloads admitted since the last call into
 * out (oldest first) and returns how many were written. Lets a driver
 * (benchmark, controller) react to admissions without scanning. */
size_t cu_engine_take_admitted(cu_engine *e, int *out, size_t max);

/* Moves up to max indices of workloads whose eviction was issued since
 * the last call (preempted, or evicted because their ClusterQueue
 * stopped) into out, oldest first; returns how many. With
 * manual_evictions the driver stops them and then calls
 * cu_engine_eviction_done. */
size_t cu_engine_take_evicted(cu_engine *e, int *out, size_t max);

/* 1 when workload idx was evicted and still holds its quota. */
int cu_engine_wl_evicting(const cu_engine *e, int idx);
/* 1 when workload idx is finished (or was removed with cu_engine_finish). */
int cu_engine_wl_finished(const cu_engine *e, int idx);

/* With manual_evictions: the preempted workload idx has stopped; its
 * quota is released and it is queued again. CU_ENOTFOUND if idx is not
 * being evicted. */
cu_err cu_engine_eviction_done(cu_engine *e, int idx);

/* Marks workload idx finished: its quota is released and inadmissible
 * workloads of its cohort tree are requeued. */
cu_err cu_engine_finish(cu_engine *e, int idx);
/* After cu_engine_finish: the engine drops every pointer into workload
 * idx's object, which the caller may then free (a driver that replaces
 * workloads as they change need not keep every old version). The
 * workload's view stays: finished, named from its key. */
void cu_engine_release(cu_engine *e, int idx);

/* With requeue_batch: moves the inadmissible workloads of every cohort
 * tree whose batched requeue is due at now back to their heaps; returns
 * how many moved. */
size_t cu_engine_requeue_due(cu_engine *e, int64_t now);
/* The earliest time a batched requeue is due, 0 if none is pending. */
int64_t cu_engine_requeue_next(const cu_engine *e);

typedef struct cu_cycle_stats {
    int rounds;       /* Kueue-equivalent cycles run inside this cycle */
    int heads;        /* workloads considered */
    int admitted;     /* admissions made */
    int inadmissible; /* moved to the inadmissible set */
    int preempted;    /* preemptions issued */
    int progress;     /* 1 if anything changed */
} cu_cycle_stats;

/* Runs one scheduling cycle. st may be NULL. */
cu_err cu_engine_cycle(cu_engine *e, cu_cycle_stats *st);

/* Runs cycles until one makes no progress or max_cycles ran. Returns the
 * number of cycles run (the last, idle one included). */
int cu_engine_run(cu_engine *e, int max_cycles);

/* Checks that every node's usage equals the sum of its admitted workloads
 * and that no ClusterQueue or cohort exceeds its limits. Returns CU_OK or
 * CU_EINVAL with the first violation in d. */
cu_err cu_engine_check_invariants(const cu_engine *e, cu_diag *d);

/* ---- Topology-Aware Scheduling (issue 18; docs/topology.md) ----
 * A ResourceFlavor with spec.topologyName naming a loaded Topology is a TAS
 * flavor: the engine keeps one placement snapshot (topology/cu_tas.h) of
 * the cluster's nodes for it, and admits a pod set that uses it only when
 * its pods are placed on node capacity in the requested domain (Kueue's
 * flavor assigner and TAS flavor snapshot); the placement is the pod set's
 * topology assignment (cu_psa_info.topo). cu_engine_load takes w->nodes
 * and w->pods (bound pods not placed by TAS, not ended);
 * a driver keeps them current with the calls below (after cu_engine_load:
 * before it there is no snapshot to feed). Node and pod changes do not
 * requeue by themselves: the driver calls cu_engine_capacity_freed when
 * capacity grew (a node added or freed, a pod gone).
 *
 * A ClusterQueue with a flavor whose Topology is missing is inactive
 * (reason TopologyNotFound, as Kueue). A workload TAS cannot place waits
 * with Kueue's message followed by Cueue's numbers ("; quota has 8
 * nvidia.com/gpu free in flavor h100, but no node has 3 nvidia.com/gpu
 * free: ..."). An admitted workload's assignment counts on the nodes until
 * it finishes, is evicted (its quota released) or removed; a reload reads
 * it back from status.admission. cu_engine_check_invariants also fails when
 * an admission left a node it uses with less than nothing free. */

/* Adds or replaces a node (copied) in every TAS flavor's snapshot (it
 * takes part where it carries the flavor's nodeLabels and every level). */
cu_err cu_engine_node_set(cu_engine *e, const cu_kube_node *n);
/* Forgets a node; unknown names are ignored. */
void cu_engine_node_remove(cu_engine *e, const char *name);
/* A pod bound to node that TAS did not place: its requests per_pod count
 * against the node (sign > 0 when it is bound, < 0 when it ends or is
 * deleted; the caller pairs them). */
cu_err cu_engine_pod_usage(cu_engine *e, const char *node, const cu_reslist *per_pod, int sign);
/* Node capacity grew: the inadmissible workloads that wait for TAS
 * capacity go back to their heaps (as a released quota does). */
void cu_engine_capacity_freed(cu_engine *e);

/* The TAS flavors: their number, and flavor i's name and placement
 * snapshot (engine-owned; read it with topology/cu_tas.h's queries between
 * engine calls, e.g. for metrics: cu_tas_placeable, cu_tas_max_free,
 * cu_tas_node_free). */
size_t cu_engine_ntas(const cu_engine *e);
struct cu_tas *cu_engine_tas(cu_engine *e, size_t i, const char **flavor);

/* The per-pod requests of the largest pod shape among the pending pod sets
 * whose last attempt failed TAS placement in TAS flavor i (largest: the
 * greatest request of the flavor's resource with the greatest request,
 * then the greatest sum), or NULL when none waits there (engine-owned; for
 * the metric of what that shape can place now). */
const cu_reslist *cu_engine_tas_pending_shape(cu_engine *e, size_t i);

/* ---- read-only views ---- */
typedef struct cu_fr_usage {
    const char *flavor, *resource;
    int64_t total;    /* reserved by workloads holding quota (milli) */
    int64_t admitted; /* part of total held by workloads also admitted (their
                         AdmissionChecks Ready): Kueue's admitted usage */
    int64_t borrowed; /* part of total above the node's own quota */
    int64_t nominal;
    int64_t subtree; /* the node's subtree quota (quota/cu_quota.h) */
    int has_blimit;
    int64_t blimit;
    int has_llimit;
    int64_t llimit;
} cu_fr_usage;

typedef struct cu_psa_info {
    const char *name;
    int32_t count;
    size_t n;                   /* resources assigned */
    const char **resources;     /* sorted by name */
    const char **flavors;       /* flavor for resources[i] */
    int64_t *usage;             /* total usage of resources[i] (milli) */
    const cu_topo_assign *topo; /* its topology assignment (TAS), NULL when
                                   none; engine-owned */
} cu_psa_info;

typedef struct cu_wl_info {
    const cu_workload *obj;
    const char *ns, *name;
    const char *local_queue;
    const char *cluster_queue; /* NULL when the LocalQueue is missing */
    int32_t priority;
    int admitted; /* holds quota (QuotaReserved=True; Admitted too unless
                     checks_pending) */
    int finished;
    size_t npsa;
    const cu_psa_info *psa; /* when admitted */
    int evictions;
    const char *reason;           /* QuotaReserved=False reason, NULL if admitted */
    const char *message;          /* why it is pending; NULL if admitted */
    int64_t admitted_at_ms;       /* QuotaReserved transition time */
    int position;                 /* 0-based position in its ClusterQueue, -1 */
    int inadmissible;             /* pending and set aside in the inadmissible set */
    int evicting;                 /* preempted, quota not released yet */
    const char *evicted_reason;   /* last Evicted reason ("Preempted",
                                   "ClusterQueueStopped", ...) or NULL */
    const char *evicted_message;  /* Kueue's Evicted/Preempted message */
    const char *preempted_reason; /* InClusterQueue, InCohortReclamation,
                                   InCohortFairSharing,
                                   InCohortReclaimWhileBorrowing, or NULL */
    int64_t evicted_at_ms;
    size_t nchecks;      /* the AdmissionChecks of its ClusterQueue that apply to it
                           (api's cu_cq_checks_for: by the flavors it holds, or all
                           of them when every check runs on every flavor) */
    const char **checks; /* their names, sorted */
    int checks_pending;  /* holds quota, but not every check that applies is
                           Ready in its status: QuotaReserved without Admitted */
} cu_wl_info;

typedef struct cu_cq_info {
    const char *name;
    const cu_cluster_queue *obj;
    const char *cohort; /* NULL when none */
    int active;
    const char *reason, *message;     /* Active condition */
    int pending, reserving, admitted; /* reserving: hold quota; admitted: and
                                         their admission checks are all Ready */
    size_t nusage;
    const cu_fr_usage *usage; /* in resourceGroups order */
    int64_t weighted_share;   /* status.fairSharing.weightedShare: ceil of
                                    the DRS / weight; INT64_MAX when a
                                    zero-weight queue borrows; 0 without a
                                    cohort or when not borrowing */
} cu_cq_info;

typedef struct cu_lq_info_afs {
    double usage; /* Admission Fair Sharing usage (weighted) */
} cu_lq_info_afs;

typedef struct cu_lq_info {
    const char *ns, *name;
    const cu_local_queue *obj;
    const char *cluster_queue;
    int active;
    const char *reason, *message;
    int pending, reserving, admitted;
    size_t nusage;
    const cu_fr_usage *usage; /* total only */
    cu_lq_info_afs afs;       /* when the ClusterQueue uses AFS */
} cu_lq_info;

typedef struct cu_cohort_info {
    const char *name;
    const cu_cohort *obj; /* NULL for an implicit cohort */
    const char *parent;
    int active;
    size_t nusage;
    const cu_fr_usage *usage;
    int64_t weighted_share; /* as for ClusterQueues; 0 for a root */
} cu_cohort_info;

/* Counts and views, in name order (workloads by "ns/name"). */
size_t cu_engine_nworkloads(const cu_engine *e);
const cu_wl_info *cu_engine_workload_info(cu_engine *e, size_t i);
size_t cu_engine_ncqs(const cu_engine *e);
/* The view of workload idx (engine index, as from cu_engine_add_workload). */
const cu_wl_info *cu_engine_workload_info_idx(cu_engine *e, int idx);
/* The same view of workload idx without building every view (the views
 * sort all workloads: a driver reacting to each admission would rebuild
 * them once per admission). Its position is -1 and its inadmissible and
 * StrictFIFO-blocking fields are left out unless the views are current.
 * Valid until the next call or engine change. */
const cu_wl_info *cu_engine_workload_info_one(cu_engine *e, int idx);
const cu_cq_info *cu_engine_cq_info(cu_engine *e, size_t i);
size_t cu_engine_nlqs(const cu_engine *e);
const cu_lq_info *cu_engine_lq_info(cu_engine *e, size_t i);
size_t cu_engine_ncohorts(const cu_engine *e);
const cu_cohort_info *cu_engine_cohort_info(cu_engine *e, size_t i);

#endif
