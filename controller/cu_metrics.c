/*
 * cu_metrics.c - the catalogue of `cueue controller`'s metrics (Kueue's
 * families under Kueue's names, and Cueue's own), registered in a
 * cu_metrics registry (base/cu_prom.c).
 */
#include "cu_metrics.h"
#include "cu_tas.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* ---------------- the catalogue ---------------- */

size_t cu_metrics_kueue_buckets(size_t n, double *out)
{
    /* Kueue's generateExponentialBuckets(n): 1, then 2.5 * 2^i */
    if (n == 0)
        return 0;
    out[0] = 1;
    double b = 2.5;
    for (size_t i = 1; i < n; i++, b *= 2)
        out[i] = b;
    return n;
}

enum { B_NONE, B_DEF, B_E14, B_E16, B_CYCLE, B_API };

#define L_CQ "cluster_queue"
#define L_PC "priority_class"
#define L_RR "replica_role"
#define L_LQ "name", "namespace"

typedef struct cat_entry {
    size_t off; /* field in cu_kueue_metrics */
    const char *name;
    cu_metric_type type;
    int buckets;
    const char *labels[7]; /* NULL-terminated */
    const char *help;
} cat_entry;

#define F(field) offsetof(cu_kueue_metrics, field)

static const char H_EVICT_REASONS[] =
    "The label 'reason' is the Evicted condition's reason: Preempted, PodsReadyTimeout, "
    "ClusterQueueStopped, LocalQueueStopped or Deactivated; 'underlying_cause' is \"\" "
    "when 'reason' is the root cause, or e.g. RequeuingLimitExceeded for a workload "
    "deactivated by the controller.";

static const cat_entry catalogue[] = {
    /* ---- Kueue: health ---- */
    { F(admission_attempts_total),
      "kueue_admission_attempts_total",
      CU_METRIC_COUNTER,
      B_NONE,
      { "result", L_RR, NULL },
      "The total number of attempts to admit workloads.\nEach admission attempt might try to "
      "admit more than one workload.\nThe label 'result' is 'success' when at least one "
      "workload was admitted, 'inadmissible' when none was." },
    { F(admission_attempt_duration_seconds),
      "kueue_admission_attempt_duration_seconds",
      CU_METRIC_HISTOGRAM,
      B_DEF,
      { "result", L_RR, NULL },
      "The latency of an admission attempt.\nThe label 'result' is 'success' when at least one "
      "workload was admitted, 'inadmissible' when none was." },
    { F(build_info),
      "kueue_build_info",
      CU_METRIC_INFO,
      B_NONE,
      { "git_version", "git_commit", "build_date", "go_version", "compiler", "platform", NULL },
      "Build information of the running controller (Cueue; go_version is empty). 1 labeled by "
      "git version, git commit, build date, go version, compiler, platform" },

    /* ---- Kueue: ClusterQueue ---- */
    { F(pending_workloads),
      "kueue_pending_workloads",
      CU_METRIC_GAUGE,
      B_NONE,
      { L_CQ, "status", L_RR, NULL },
      "The number of pending workloads, per 'cluster_queue' and 'status'.\n'status' is "
      "\"active\" for workloads in the admission queue, \"inadmissible\" for workloads whose "
      "admission attempt failed and that wait for a change in the cluster before the next one" },
    { F(quota_reserved_workloads_total),
      "kueue_quota_reserved_workloads_total",
      CU_METRIC_COUNTER,
      B_NONE,
      { L_CQ, L_PC, L_RR, NULL },
      "The total number of quota reserved workloads per 'cluster_queue'" },
    { F(quota_reserved_wait_time_seconds),
      "kueue_quota_reserved_wait_time_seconds",
      CU_METRIC_HISTOGRAM,
      B_E14,
      { L_CQ, L_PC, L_RR, NULL },
      "The time between a workload was created or requeued until it got quota reservation, "
      "per 'cluster_queue'" },
    { F(admitted_workloads_total),
      "kueue_admitted_workloads_total",
      CU_METRIC_COUNTER,
      B_NONE,
      { L_CQ, L_PC, L_RR, NULL },
      "The total number of admitted workloads per 'cluster_queue'" },
    { F(admission_wait_time_seconds),
      "kueue_admission_wait_time_seconds",
      CU_METRIC_HISTOGRAM,
      B_E16,
      { L_CQ, L_PC, L_RR, NULL },
      "The time between a workload was created or requeued until admission, per "
      "'cluster_queue'" },
    { F(admission_checks_wait_time_seconds),
      "kueue_admission_checks_wait_time_seconds",
      CU_METRIC_HISTOGRAM,
      B_E14,
      { L_CQ, L_PC, L_RR, NULL },
      "The time from when a workload got the quota reservation until admission, per "
      "'cluster_queue'" },
    { F(ready_wait_time_seconds),
      "kueue_ready_wait_time_seconds",
      CU_METRIC_HISTOGRAM,
      B_E14,
      { L_CQ, L_PC, L_RR, NULL },
      "The time between a workload was created or requeued until ready, per 'cluster_queue'" },
    { F(admitted_until_ready_wait_time_seconds),
      "kueue_admitted_until_ready_wait_time_seconds",
      CU_METRIC_HISTOGRAM,
      B_E14,
      { L_CQ, L_PC, L_RR, NULL },
      "The time between a workload was admitted until ready, per 'cluster_queue'" },
    { F(execution_time_seconds),
      "kueue_execution_time_seconds",
      CU_METRIC_HISTOGRAM,
      B_E16,
      { L_CQ, L_PC, L_RR, NULL },
      "The time from a workload's first admission until it finished, across evictions and "
      "readmissions, per 'cluster_queue'" },
    { F(evicted_workloads_total),
      "kueue_evicted_workloads_total",
      CU_METRIC_COUNTER,
      B_NONE,
      { L_CQ, "reason", "underlying_cause", L_PC, L_RR, NULL },
      NULL },
    { F(evicted_workloads_once_total),
      "kueue_evicted_workloads_once_total",
      CU_METRIC_COUNTER,
      B_NONE,
      { L_CQ, "reason", "underlying_cause", L_PC, L_RR, NULL },
      NULL },
    { F(preempted_workloads_total),
      "kueue_preempted_workloads_total",
      CU_METRIC_COUNTER,
      B_NONE,
      { "preempting_cluster_queue", "reason", L_RR, NULL },
      "The number of preempted workloads per 'preempting_cluster_queue'.\nThe label 'reason' "
      "is InClusterQueue (preempted by a workload of the same ClusterQueue), "
      "InCohortReclamation (to reclaim nominal quota), InCohortFairSharing (fair sharing) or "
      "InCohortReclaimWhileBorrowing (to reclaim nominal quota while borrowing)." },
    { F(pods_ready_to_evicted_time_seconds),
      "kueue_pods_ready_to_evicted_time_seconds",
      CU_METRIC_HISTOGRAM,
      B_E14,
      { L_CQ, "reason", "underlying_cause", L_RR, NULL },
      NULL },
    { F(finished_workloads),
      "kueue_finished_workloads",
      CU_METRIC_GAUGE,
      B_NONE,
      { L_CQ, L_RR, NULL },
      "The number of finished workloads per 'cluster_queue'." },
    { F(finished_workloads_total),
      "kueue_finished_workloads_total",
      CU_METRIC_COUNTER,
      B_NONE,
      { L_CQ, L_PC, L_RR, NULL },
      "The total number of finished workloads per 'cluster_queue'" },
    { F(reserving_active_workloads),
      "kueue_reserving_active_workloads",
      CU_METRIC_GAUGE,
      B_NONE,
      { L_CQ, L_RR, NULL },
      "The number of Workloads that are reserving quota, per 'cluster_queue'" },
    { F(admitted_active_workloads),
      "kueue_admitted_active_workloads",
      CU_METRIC_GAUGE,
      B_NONE,
      { L_CQ, L_RR, NULL },
      "The number of admitted Workloads that are active (unsuspended and not finished), per "
      "'cluster_queue'" },
    { F(cluster_queue_status),
      "kueue_cluster_queue_status",
      CU_METRIC_GAUGE,
      B_NONE,
      { L_CQ, "status", L_RR, NULL },
      "Reports 'cluster_queue' with its 'status' (with possible values 'pending', 'active' or "
      "'terminated').\nFor a ClusterQueue, the metric only reports a value of 1 for one of the "
      "statuses." },
    { F(cluster_queue_info),
      "kueue_cluster_queue_info",
      CU_METRIC_INFO,
      B_NONE,
      { L_CQ, "parent_cohort", "root_cohort", NULL },
      "Reports a ClusterQueue's place in the cohort tree (value 1; join on the labels)." },
    { F(cluster_queue_resource_reservation),
      "kueue_cluster_queue_resource_reservation",
      CU_METRIC_GAUGE,
      B_NONE,
      { "cohort", L_CQ, "flavor", "resource", L_RR, NULL },
      "Reports the cluster_queue's total resource reservation within all the flavors" },
    { F(cluster_queue_resource_usage),
      "kueue_cluster_queue_resource_usage",
      CU_METRIC_GAUGE,
      B_NONE,
      { "cohort", L_CQ, "flavor", "resource", L_RR, NULL },
      "Reports the cluster_queue's total resource usage within all the flavors" },
    { F(cluster_queue_nominal_quota),
      "kueue_cluster_queue_nominal_quota",
      CU_METRIC_GAUGE,
      B_NONE,
      { "cohort", L_CQ, "flavor", "resource", L_RR, NULL },
      "Reports the cluster_queue's resource nominal quota within all the flavors" },
    { F(cluster_queue_borrowing_limit),
      "kueue_cluster_queue_borrowing_limit",
      CU_METRIC_GAUGE,
      B_NONE,
      { "cohort", L_CQ, "flavor", "resource", L_RR, NULL },
      "Reports the cluster_queue's resource borrowing limit within all the flavors" },
    { F(cluster_queue_lending_limit),
      "kueue_cluster_queue_lending_limit",
      CU_METRIC_GAUGE,
      B_NONE,
      { "cohort", L_CQ, "flavor", "resource", L_RR, NULL },
      "Reports the cluster_queue's resource lending limit within all the flavors" },
    { F(cluster_queue_weighted_share),
      "kueue_cluster_queue_weighted_share",
      CU_METRIC_GAUGE,
      B_NONE,
      { L_CQ, "cohort", L_RR, NULL },
      "The ClusterQueue's weighted share: the largest ratio, over the resources it provides, "
      "of its usage above nominal quota to the lendable resources of its cohort, divided by "
      "its weight.\n0 when the ClusterQueue uses no more than its nominal quota; NaN when its "
      "weight is 0 and it borrows." },

    /* ---- Kueue: LocalQueue ---- */
    { F(local_queue_pending_workloads),
      "kueue_local_queue_pending_workloads",
      CU_METRIC_GAUGE,
      B_NONE,
      { L_LQ, "status", L_RR, NULL },
      "The number of pending workloads, per 'local_queue' and 'status'.\n'status' is "
      "\"active\" for workloads in the admission queue, \"inadmissible\" for workloads whose "
      "admission attempt failed and that wait for a change in the cluster before the next one" },
    { F(local_queue_quota_reserved_workloads_total),
      "kueue_local_queue_quota_reserved_workloads_total",
      CU_METRIC_COUNTER,
      B_NONE,
      { L_LQ, L_PC, L_RR, NULL },
      "The total number of quota reserved workloads per 'local_queue'" },
    { F(local_queue_quota_reserved_wait_time_seconds),
      "kueue_local_queue_quota_reserved_wait_time_seconds",
      CU_METRIC_HISTOGRAM,
      B_E14,
      { L_LQ, L_PC, L_RR, NULL },
      "The time between a workload was created or requeued until it got quota reservation, "
      "per 'local_queue'" },
    { F(local_queue_admitted_workloads_total),
      "kueue_local_queue_admitted_workloads_total",
      CU_METRIC_COUNTER,
      B_NONE,
      { L_LQ, L_PC, L_RR, NULL },
      "The total number of admitted workloads per 'local_queue'" },
    { F(local_queue_admission_wait_time_seconds),
      "kueue_local_queue_admission_wait_time_seconds",
      CU_METRIC_HISTOGRAM,
      B_E14,
      { L_LQ, L_PC, L_RR, NULL },
      "The time between a workload was created or requeued until admission, per 'local_queue'" },
    { F(local_queue_admission_checks_wait_time_seconds),
      "kueue_local_queue_admission_checks_wait_time_seconds",
      CU_METRIC_HISTOGRAM,
      B_E14,
      { L_LQ, L_PC, L_RR, NULL },
      "The time from when a workload got the quota reservation until admission, per "
      "'local_queue'" },
    { F(local_queue_ready_wait_time_seconds),
      "kueue_local_queue_ready_wait_time_seconds",
      CU_METRIC_HISTOGRAM,
      B_E14,
      { L_LQ, L_PC, L_RR, NULL },
      "The time between a workload was created or requeued until ready, per 'local_queue'" },
    { F(local_queue_admitted_until_ready_wait_time_seconds),
      "kueue_local_queue_admitted_until_ready_wait_time_seconds",
      CU_METRIC_HISTOGRAM,
      B_E14,
      { L_LQ, L_PC, L_RR, NULL },
      "The time between a workload was admitted until ready, per 'local_queue'" },
    { F(local_queue_execution_time_seconds),
      "kueue_local_queue_execution_time_seconds",
      CU_METRIC_HISTOGRAM,
      B_E16,
      { L_LQ, L_PC, L_RR, NULL },
      "The time from a workload's first admission until it finished, across evictions and "
      "readmissions, per 'local_queue'" },
    { F(local_queue_evicted_workloads_total),
      "kueue_local_queue_evicted_workloads_total",
      CU_METRIC_COUNTER,
      B_NONE,
      { L_LQ, "reason", "underlying_cause", L_PC, L_RR, NULL },
      NULL },
    { F(local_queue_finished_workloads),
      "kueue_local_queue_finished_workloads",
      CU_METRIC_GAUGE,
      B_NONE,
      { L_LQ, L_RR, NULL },
      "The number of finished workloads, per 'local_queue'." },
    { F(local_queue_finished_workloads_total),
      "kueue_local_queue_finished_workloads_total",
      CU_METRIC_COUNTER,
      B_NONE,
      { L_LQ, L_PC, L_RR, NULL },
      "The total number of finished workloads per 'local_queue'" },
    { F(local_queue_reserving_active_workloads),
      "kueue_local_queue_reserving_active_workloads",
      CU_METRIC_GAUGE,
      B_NONE,
      { L_LQ, L_RR, NULL },
      "The number of Workloads that are reserving quota, per 'localQueue'" },
    { F(local_queue_admitted_active_workloads),
      "kueue_local_queue_admitted_active_workloads",
      CU_METRIC_GAUGE,
      B_NONE,
      { L_LQ, L_RR, NULL },
      "The number of admitted Workloads that are active (unsuspended and not finished), per "
      "'localQueue'" },
    { F(local_queue_status),
      "kueue_local_queue_status",
      CU_METRIC_GAUGE,
      B_NONE,
      { L_LQ, "active", L_RR, NULL },
      "Reports 'localQueue' with its 'active' status (with possible values 'True', 'False', or "
      "'Unknown').\nFor a LocalQueue, the metric only reports a value of 1 for one of the "
      "statuses." },
    { F(local_queue_resource_reservation),
      "kueue_local_queue_resource_reservation",
      CU_METRIC_GAUGE,
      B_NONE,
      { L_LQ, "flavor", "resource", L_RR, NULL },
      "Reports the localQueue's total resource reservation within all the flavors" },
    { F(local_queue_resource_usage),
      "kueue_local_queue_resource_usage",
      CU_METRIC_GAUGE,
      B_NONE,
      { L_LQ, "flavor", "resource", L_RR, NULL },
      "Reports the localQueue's total resource usage within all the flavors" },

    /* ---- Kueue: Cohort ---- */
    { F(cohort_info),
      "kueue_cohort_info",
      CU_METRIC_INFO,
      B_NONE,
      { "cohort", "parent_cohort", "root_cohort", NULL },
      "Reports a Cohort's place in the cohort tree (value 1; join on the labels)." },
    { F(cohort_weighted_share),
      "kueue_cohort_weighted_share",
      CU_METRIC_GAUGE,
      B_NONE,
      { "cohort", L_RR, NULL },
      "The Cohort's weighted share: the largest ratio, over the resources it provides, of its "
      "usage above nominal quota to the lendable resources of its parent, divided by its "
      "weight.\n0 when the Cohort uses no more than its nominal quota; NaN when its weight is 0 "
      "and it borrows." },
    { F(cohort_subtree_quota),
      "kueue_cohort_subtree_quota",
      CU_METRIC_GAUGE,
      B_NONE,
      { "cohort", "flavor", "resource", L_RR, NULL },
      "Reports the cohort's nominal quota aggregated within the cohort's subtree. The values "
      "are reported per resource and flavor" },
    { F(cohort_subtree_resource_reservations),
      "kueue_cohort_subtree_resource_reservations",
      CU_METRIC_GAUGE,
      B_NONE,
      { "cohort", "flavor", "resource", L_RR, NULL },
      "Reports the cohort's resource reservations aggregated within the cohort's subtree. The "
      "values are reported per resource and flavor" },
    { F(cohort_subtree_admitted_workloads_total),
      "kueue_cohort_subtree_admitted_workloads_total",
      CU_METRIC_COUNTER,
      B_NONE,
      { "cohort", L_PC, L_RR, NULL },
      "The total number of admitted workloads per cohort's subtree" },
    { F(cohort_subtree_admitted_active_workloads),
      "kueue_cohort_subtree_admitted_active_workloads",
      CU_METRIC_GAUGE,
      B_NONE,
      { "cohort", L_RR, NULL },
      "The number of admitted Workloads that are active, per cohort's "
      "subtree" },

    /* ---- Cueue ---- */
    { F(cueue_build_info),
      "cueue_build_info",
      CU_METRIC_INFO,
      B_NONE,
      { "version", "git_commit", "build_date", "compiler", "platform", NULL },
      "Cueue build information (value 1)." },
    { F(cueue_cycle_seconds),
      "cueue_scheduling_cycle_duration_seconds",
      CU_METRIC_HISTOGRAM,
      B_CYCLE,
      { "result", NULL },
      "Duration of one engine scheduling cycle (heads taken, flavors assigned, admissions and "
      "preemptions decided), by 'result': 'success' when it admitted a workload, "
      "'inadmissible' otherwise." },
    { F(cueue_cycles_total),
      "cueue_scheduling_cycles_total",
      CU_METRIC_COUNTER,
      B_NONE,
      { "result", NULL },
      "Engine scheduling cycles run, by 'result' (success, inadmissible)." },
    { F(cueue_admissions_total),
      "cueue_admissions_total",
      CU_METRIC_COUNTER,
      B_NONE,
      { NULL },
      "Admissions written by this controller." },
    { F(cueue_evictions_total),
      "cueue_evictions_total",
      CU_METRIC_COUNTER,
      B_NONE,
      { NULL },
      "Evictions completed (quota released)." },
    { F(cueue_preemptions_total),
      "cueue_preemptions_total",
      CU_METRIC_COUNTER,
      B_NONE,
      { NULL },
      "Preemptions issued." },
    { F(cueue_engine_rebuilds_total),
      "cueue_engine_rebuilds_total",
      CU_METRIC_COUNTER,
      B_NONE,
      { NULL },
      "Times the engine was rebuilt from the cache." },
    { F(cueue_api_requests_total),
      "cueue_api_requests_total",
      CU_METRIC_COUNTER,
      B_NONE,
      { "verb", "code", NULL },
      "HTTP requests sent to the API server (retries included), by 'verb' (GET, LIST, WATCH, "
      "CREATE, UPDATE, PATCH, DELETE) and 'code' (the HTTP status, or \"<error>\" when no "
      "response came)." },
    { F(cueue_api_request_duration_seconds),
      "cueue_api_request_duration_seconds",
      CU_METRIC_HISTOGRAM,
      B_API,
      { "verb", NULL },
      "Latency of API server requests until the response was complete (watches excluded), by "
      "'verb'." },
    { F(cueue_api_writes_total),
      "cueue_api_writes_total",
      CU_METRIC_COUNTER,
      B_NONE,
      { NULL },
      "Write requests sent to the API server." },
    { F(cueue_api_write_errors_total),
      "cueue_api_write_errors_total",
      CU_METRIC_COUNTER,
      B_NONE,
      { NULL },
      "Write requests that failed." },
    { F(cueue_write_conflicts_total),
      "cueue_write_conflicts_total",
      CU_METRIC_COUNTER,
      B_NONE,
      { "kind", NULL },
      "Writes answered 409 Conflict (stale resourceVersion), by object 'kind'." },
    { F(cueue_watch_restarts_total),
      "cueue_watch_restarts_total",
      CU_METRIC_COUNTER,
      B_NONE,
      { "resource", NULL },
      "Watches restarted from the last resourceVersion (stream ended or broke), by 'resource'." },
    { F(cueue_watch_relists_total),
      "cueue_watch_relists_total",
      CU_METRIC_COUNTER,
      B_NONE,
      { "resource", NULL },
      "Full re-LISTs after a watch could not resume (410 Gone or error), by 'resource'." },
    { F(cueue_leader),
      "cueue_leader",
      CU_METRIC_GAUGE,
      B_NONE,
      { NULL },
      "1 when this replica leads (or runs without leader election), 0 otherwise." },
    { F(cueue_pending_workloads_by_reason),
      "cueue_pending_workloads_by_reason",
      CU_METRIC_GAUGE,
      B_NONE,
      { L_CQ, "reason", NULL },
      "Pending workloads per 'cluster_queue' by why they wait ('reason', see docs/metrics.md); "
      "workloads whose ClusterQueue is unknown have cluster_queue=\"\"." },
    { F(cueue_metrics_errors_total),
      "cueue_metrics_errors_total",
      CU_METRIC_COUNTER,
      B_NONE,
      { "reason", NULL },
      "Metric updates the registry rejected (a bug in the controller), by 'reason'." },
    { F(cueue_tas_quota_free),
      "cueue_tas_quota_free",
      CU_METRIC_GAUGE,
      B_NONE,
      { "flavor", "resource", NULL },
      "Quota of a TAS flavor's resource not reserved: over the roots of the cohort forest (a root "
      "Cohort, or a ClusterQueue in no cohort), the subtree quota of 'flavor' and 'resource' "
      "minus what its workloads reserve, at least 0, summed." },
    { F(cueue_tas_placeable),
      "cueue_tas_placeable",
      CU_METRIC_GAUGE,
      B_NONE,
      { "flavor", "resource", NULL },
      "Of a TAS flavor's 'resource', the amount placeable now for the largest pod shape that waits "
      "for TAS capacity there: the pods of that shape the nodes take, each on its own, times its "
      "request. No series when none waits." },
    { F(cueue_tas_largest_node_free),
      "cueue_tas_largest_node_free",
      CU_METRIC_GAUGE,
      B_NONE,
      { "flavor", "resource", NULL },
      "The largest free amount of 'resource' on one node of a TAS flavor (allocatable minus the "
      "bound pods and the admitted TAS workloads placed there)." },
    { F(cueue_tas_node_free),
      "cueue_tas_node_free",
      CU_METRIC_GAUGE,
      B_NONE,
      { "flavor", "node", "resource", NULL },
      "The free amount of 'resource' on each 'node' of a TAS flavor." },
};

static const double def_buckets[] = { .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10 };
static const double cycle_buckets[] = { .0005, .001, .0025, .005, .01, .025, .05,
                                        .1,    .25,  .5,    1,    2.5, 5 };
static const double api_buckets[] = { .001, .0025, .005, .01, .025, .05, .1, .25,
                                      .5,   1,     2.5,  5,   10,   30,  60 };

cu_err cu_metrics_kueue_register(cu_metrics *m, cu_kueue_metrics *out)
{
    memset(out, 0, sizeof(*out));
    double e14[14], e16[16];
    cu_metrics_kueue_buckets(14, e14);
    cu_metrics_kueue_buckets(16, e16);
    char help[2048];
    for (size_t i = 0; i < sizeof(catalogue) / sizeof(catalogue[0]); i++) {
        const cat_entry *c = &catalogue[i];
        size_t nl = 0;
        while (c->labels[nl])
            nl++;
        const double *b = NULL;
        size_t nb = 0;
        switch (c->buckets) {
        case B_DEF:
            b = def_buckets;
            nb = sizeof(def_buckets) / sizeof(double);
            break;
        case B_E14:
            b = e14;
            nb = 14;
            break;
        case B_E16:
            b = e16;
            nb = 16;
            break;
        case B_CYCLE:
            b = cycle_buckets;
            nb = sizeof(cycle_buckets) / sizeof(double);
            break;
        case B_API:
            b = api_buckets;
            nb = sizeof(api_buckets) / sizeof(double);
            break;
        default: break;
        }
        const char *h = c->help;
        if (!h) { /* the eviction families share the reasons text */
            const char *what =
                c->off == F(evicted_workloads_once_total)
                    ? "The number of unique workload evictions per 'cluster_queue'."
                : c->off == F(local_queue_evicted_workloads_total)
                    ? "The number of evicted workloads per 'local_queue'."
                : c->off == F(pods_ready_to_evicted_time_seconds)
                    ? "The number of seconds between a workload's pods being ready and its "
                      "eviction, per 'cluster_queue'."
                    : "The number of evicted workloads per 'cluster_queue'.";
            snprintf(help, sizeof(help), "%s\n%s", what, H_EVICT_REASONS);
            h = help;
        }
        cu_metric_family *f = cu_metrics_family(m, c->name, h, c->type, nl, c->labels, nb, b);
        if (!f)
            return strstr(cu_metrics_last_error(m), "out of memory") ? CU_ENOMEM : CU_EINVAL;
        *(cu_metric_family **)((char *)out + c->off) = f;
    }
    cu_metrics_count_errors_in(m, out->cueue_metrics_errors_total);
    return CU_OK;
}

/* ---------------- Topology-Aware Scheduling ---------------- */

void cu_metrics_tas_flavor(const cu_kueue_metrics *k, const char *flavor, struct cu_tas *t,
                           const char *const *resources, size_t nres, const char *const *nodes,
                           size_t nnodes, const struct cu_reslist *shape)
{
    for (size_t r = 0; r < nres; r++) {
        const char *a[] = { flavor, resources[r] };
        cu_metric_set(k->cueue_tas_largest_node_free, a,
                      cu_qty_res_float(resources[r], cu_tas_max_free(t, resources[r], NULL)));
        for (size_t n = 0; n < nnodes; n++) {
            int64_t free = 0;
            if (cu_tas_node_free(t, nodes[n], resources[r], &free) != CU_OK)
                continue; /* not a member of the flavor */
            const char *b[] = { flavor, nodes[n], resources[r] };
            cu_metric_set(k->cueue_tas_node_free, b, cu_qty_res_float(resources[r], free));
        }
    }
    if (!shape)
        return;
    int64_t pods = cu_tas_placeable(t, shape, NULL, NULL, 0);
    for (size_t i = 0; i < shape->n; i++) {
        const char *a[] = { flavor, shape->items[i].name };
        cu_metric_set(k->cueue_tas_placeable, a,
                      cu_qty_res_float(shape->items[i].name, pods * shape->items[i].milli));
    }
}
