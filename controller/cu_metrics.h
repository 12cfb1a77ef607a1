/*
 * cu_metrics.h - the catalogue of every metric `cueue controller` exports
 * (Kueue's, under Kueue's names, and Cueue's own cueue_ ones), registered
 * in a cu_metrics registry (cu_prom.h).
 */
#ifndef CU_METRICS_H
#define CU_METRICS_H

#include "cu_prom.h"

/* ---------------- the catalogue ----------------
 * Every family `cueue controller` exports. Kueue's keep Kueue's names,
 * types, label names (replica_role included) and bucket layouts, so that
 * Kueue dashboards and alerts work unchanged; see docs/metrics.md. The
 * controller feeds them; the registry does not read any state itself. */
typedef struct cu_kueue_metrics {
    /* Kueue: health */
    cu_metric_family *admission_attempts_total; /* result, replica_role */
    cu_metric_family
        *admission_attempt_duration_seconds; /* result, replica_role; default buckets */
    cu_metric_family *build_info;            /* kueue_build_info (info) */

    /* Kueue: ClusterQueue */
    cu_metric_family *pending_workloads; /* cluster_queue, status, replica_role */
    cu_metric_family
        *quota_reserved_workloads_total; /* cluster_queue, priority_class, replica_role */
    cu_metric_family *quota_reserved_wait_time_seconds; /* same; E14 */
    cu_metric_family *admitted_workloads_total;    /* cluster_queue, priority_class, replica_role */
    cu_metric_family *admission_wait_time_seconds; /* same; E16 */
    cu_metric_family *admission_checks_wait_time_seconds; /* same; E14 (reservation to admission) */
    cu_metric_family *ready_wait_time_seconds;            /* same; E14 (waitForPodsReady) */
    cu_metric_family *admitted_until_ready_wait_time_seconds; /* same; E14 (waitForPodsReady) */
    cu_metric_family *execution_time_seconds; /* cluster_queue, priority_class, replica_role; E16 */
    cu_metric_family *
        evicted_workloads_total; /* cluster_queue, reason, underlying_cause, priority_class, replica_role */
    cu_metric_family *evicted_workloads_once_total; /* same */
    cu_metric_family
        *preempted_workloads_total; /* preempting_cluster_queue, reason, replica_role */
    cu_metric_family *
        pods_ready_to_evicted_time_seconds; /* cluster_queue, reason, underlying_cause, replica_role; E14 */
    cu_metric_family *finished_workloads;         /* cluster_queue, replica_role (gauge) */
    cu_metric_family *finished_workloads_total;   /* cluster_queue, priority_class, replica_role */
    cu_metric_family *reserving_active_workloads; /* cluster_queue, replica_role */
    cu_metric_family *admitted_active_workloads;  /* cluster_queue, replica_role */
    cu_metric_family *cluster_queue_status;       /* cluster_queue, status, replica_role */
    cu_metric_family *cluster_queue_info; /* cluster_queue, parent_cohort, root_cohort (info) */
    cu_metric_family *
        cluster_queue_resource_reservation; /* cohort, cluster_queue, flavor, resource, replica_role */
    cu_metric_family *cluster_queue_resource_usage;  /* same */
    cu_metric_family *cluster_queue_nominal_quota;   /* same */
    cu_metric_family *cluster_queue_borrowing_limit; /* same (+Inf when unset) */
    cu_metric_family *cluster_queue_lending_limit;   /* same (+Inf when unset) */
    cu_metric_family *cluster_queue_weighted_share;  /* cluster_queue, cohort, replica_role */

    /* Kueue: LocalQueue */
    cu_metric_family *local_queue_pending_workloads; /* name, namespace, status, replica_role */
    cu_metric_family *
        local_queue_quota_reserved_workloads_total; /* name, namespace, priority_class, replica_role */
    cu_metric_family *local_queue_quota_reserved_wait_time_seconds; /* same; E14 */
    cu_metric_family *local_queue_admitted_workloads_total;         /* same */
    cu_metric_family *local_queue_admission_wait_time_seconds;      /* same; E14 (Kueue's layout) */
    cu_metric_family *local_queue_admission_checks_wait_time_seconds;     /* same; E14 */
    cu_metric_family *local_queue_ready_wait_time_seconds;                /* same; E14 */
    cu_metric_family *local_queue_admitted_until_ready_wait_time_seconds; /* same; E14 */
    cu_metric_family *local_queue_execution_time_seconds;                 /* same; E16 */
    cu_metric_family *
        local_queue_evicted_workloads_total; /* name, namespace, reason, underlying_cause, priority_class, replica_role */
    cu_metric_family *local_queue_finished_workloads; /* name, namespace, replica_role */
    cu_metric_family
        *local_queue_finished_workloads_total; /* name, namespace, priority_class, replica_role */
    cu_metric_family *local_queue_reserving_active_workloads; /* name, namespace, replica_role */
    cu_metric_family *local_queue_admitted_active_workloads;  /* name, namespace, replica_role */
    cu_metric_family *local_queue_status; /* name, namespace, active, replica_role */
    cu_metric_family
        *local_queue_resource_reservation; /* name, namespace, flavor, resource, replica_role */
    cu_metric_family *local_queue_resource_usage; /* same */

    /* Kueue: Cohort */
    cu_metric_family *cohort_info;           /* cohort, parent_cohort, root_cohort (info) */
    cu_metric_family *cohort_weighted_share; /* cohort, replica_role */
    cu_metric_family *cohort_subtree_quota;  /* cohort, flavor, resource, replica_role */
    cu_metric_family
        *cohort_subtree_resource_reservations; /* cohort, flavor, resource, replica_role */
    cu_metric_family
        *cohort_subtree_admitted_workloads_total; /* cohort, priority_class, replica_role */
    cu_metric_family *cohort_subtree_admitted_active_workloads; /* cohort, replica_role */

    /* Cueue's own */
    cu_metric_family
        *cueue_build_info; /* version, git_commit, build_date, compiler, platform (info) */
    cu_metric_family *cueue_cycle_seconds;     /* cueue_scheduling_cycle_duration_seconds{result} */
    cu_metric_family *cueue_cycles_total;      /* cueue_scheduling_cycles_total{result} */
    cu_metric_family *cueue_admissions_total;  /* no labels */
    cu_metric_family *cueue_evictions_total;   /* no labels */
    cu_metric_family *cueue_preemptions_total; /* no labels */
    cu_metric_family *cueue_engine_rebuilds_total;        /* no labels */
    cu_metric_family *cueue_api_requests_total;           /* verb, code */
    cu_metric_family *cueue_api_request_duration_seconds; /* verb */
    cu_metric_family *cueue_api_writes_total;             /* no labels */
    cu_metric_family *cueue_api_write_errors_total;       /* no labels */
    cu_metric_family *cueue_write_conflicts_total;        /* kind */
    cu_metric_family *cueue_watch_restarts_total;         /* resource */
    cu_metric_family *cueue_watch_relists_total;          /* resource */
    cu_metric_family *cueue_leader;                       /* no labels (gauge 0/1) */
    cu_metric_family *cueue_pending_workloads_by_reason;  /* cluster_queue, reason */
    cu_metric_family *cueue_metrics_errors_total;         /* reason */
    /* Topology-Aware Scheduling, per TAS flavor (docs/metrics.md) */
    cu_metric_family *cueue_tas_quota_free;        /* flavor, resource */
    cu_metric_family *cueue_tas_placeable;         /* flavor, resource */
    cu_metric_family *cueue_tas_largest_node_free; /* flavor, resource */
    cu_metric_family *cueue_tas_node_free;         /* flavor, node, resource */
} cu_kueue_metrics;

/* Registers every family of the catalogue in m and fills *out with the
 * family pointers (owned by m). Also makes m count its own rejected
 * updates in cueue_metrics_errors_total{reason}. Returns CU_OK, CU_ENOMEM,
 * or CU_EINVAL when a name clashes with a family already in m (see
 * cu_metrics_last_error). */
cu_err cu_metrics_kueue_register(cu_metrics *m, cu_kueue_metrics *out);

/* The TAS gauges of one TAS flavor from its placement snapshot t (topology/
 * cu_tas.h; flavor its name): for each of the nres resources (the ones the
 * ClusterQueues give the flavor quota of), the largest free amount on one
 * node (cueue_tas_largest_node_free) and each member node's free amount
 * among the nnodes names (cueue_tas_node_free; a node that is not a member
 * has none); and, when shape (the per-pod requests of the largest pending
 * pod shape that failed TAS placement there) is not NULL, for each of its
 * resources the pods of that shape placeable now times its request
 * (cueue_tas_placeable). Amounts in whole units (cores, bytes, GPUs). */
struct cu_tas;
struct cu_reslist;
void cu_metrics_tas_flavor(const cu_kueue_metrics *k, const char *flavor, struct cu_tas *t,
                           const char *const *resources, size_t nres, const char *const *nodes,
                           size_t nnodes, const struct cu_reslist *shape);

/* Kueue's bucket layouts, for tests and for the controller.
 * Exponential: [1, 2.5, 5, 10, ...] with n bounds (n = 14 or 16). */
size_t cu_metrics_kueue_buckets(size_t n, double *out);

#endif
