/*
 * cu_metrics.h - the controller's metrics registry and its Prometheus
 * exposition writer, plus the catalogue of every metric `cueue controller`
 * exports (Kueue's, under Kueue's names, and Cueue's own cueue_ ones).
 *
 * No globals: the controller owns one cu_metrics and passes it around.
 * A registry holds families (name, help, type, label names, histogram
 * buckets); a family holds series keyed by their label values (a hash
 * map), created on first use. Nothing here is thread-safe: the
 * controller's loop is the only caller (the metrics HTTP handler runs on
 * the same loop).
 *
 * Rules kept by the registry:
 *  - counters never decrease: an inc with a negative or NaN delta, or a
 *    set below the current value, is rejected (CU_EINVAL), the series is
 *    unchanged, and the registry's error count goes up (and, once the
 *    catalogue is registered, cueue_metrics_errors_total{reason});
 *  - histograms have cumulative buckets on output, an implicit le="+Inf"
 *    bucket equal to _count, and _sum;
 *  - output is deterministic: families sorted by name, series by their
 *    label values (in label-name order, byte-wise).
 *
 * Exposition formats: Prometheus text 0.0.4 and OpenMetrics 1.0.0 (see
 * cu_metrics_write).
 */
#ifndef CU_METRICS_H
#define CU_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "cu_base.h"

typedef struct cu_metrics cu_metrics;
typedef struct cu_metric_family cu_metric_family;

typedef enum cu_metric_type {
    CU_METRIC_COUNTER,
    CU_METRIC_GAUGE,
    CU_METRIC_HISTOGRAM,
    /* An info metric: value always 1, its labels carry the information.
     * The family name must end in "_info". Written as a gauge in the
     * Prometheus text format and as an OpenMetrics "info" family (name
     * without "_info") in OpenMetrics; the sample name is the same. */
    CU_METRIC_INFO
} cu_metric_type;

/* Content types to answer a scrape with. */
#define CU_METRICS_CONTENT_TYPE_TEXT "text/plain; version=0.0.4; charset=utf-8"
#define CU_METRICS_CONTENT_TYPE_OPENMETRICS \
    "application/openmetrics-text; version=1.0.0; charset=utf-8"

/* Limits. Series beyond max_series (whole registry) are refused with
 * CU_ENOMEM and counted as errors: a label with unbounded values cannot
 * eat the controller's memory. */
#define CU_METRICS_MAX_LABELS 16
#define CU_METRICS_MAX_BUCKETS 64
#define CU_METRICS_DEFAULT_MAX_SERIES 1000000

/* Returns a new, empty registry; caller frees with cu_metrics_free.
 * NULL on OOM. */
cu_metrics *cu_metrics_new(void);
/* Frees m, its families and their series (NULL is fine). Family pointers
 * obtained from m are invalid afterwards. */
void cu_metrics_free(cu_metrics *m);

/* Sets the bound on the number of series in the whole registry. */
void cu_metrics_set_max_series(cu_metrics *m, size_t max_series);

/* Registers a family, or returns the existing one when a family of that
 * name was registered with the same type, label names and buckets.
 *  name:       [a-zA-Z_:][a-zA-Z0-9_:]*; counters must end in "_total"
 *              and info metrics in "_info" (their OpenMetrics family
 *              names are the names without it; when that name is taken
 *              by another family, as kueue_finished_workloads is, the
 *              counter is written under its full name as type "unknown"
 *              in OpenMetrics, an info metric as a gauge);
 *  help:       any text (escaped on output), may be "" (no HELP line);
 *  labelnames: nlabels names, [a-zA-Z_][a-zA-Z0-9_]*, not starting with
 *              "__", distinct, and not "le" for histograms;
 *  buckets:    histograms only: nbuckets finite upper bounds, strictly
 *              increasing; a trailing +Inf is accepted and dropped (the
 *              +Inf bucket is always there). Ignored for other types
 *              (pass 0, NULL).
 * Everything is copied (borrows its arguments). The family is owned by m.
 * Returns NULL on bad input or a clash with another family's name or
 * sample names (a gauge "x_count" next to a histogram "x", ...); then
 * cu_metrics_last_error(m) says which family and what is wrong. */
cu_metric_family *cu_metrics_family(cu_metrics *m, const char *name, const char *help,
                                    cu_metric_type type, size_t nlabels,
                                    const char *const labelnames[], size_t nbuckets,
                                    const double buckets[]);

/* Returns the family registered under name, or NULL. Borrowed. */
cu_metric_family *cu_metrics_find(const cu_metrics *m, const char *name);

/* Returns the last registration or update error message ("" if none).
 * Borrowed; valid until the next call on m. */
const char *cu_metrics_last_error(const cu_metrics *m);

/* Number of rejected updates so far (negative counter deltas, NaN,
 * wrong type, invalid UTF-8 in a label value, series limit, OOM). */
uint64_t cu_metrics_error_count(const cu_metrics *m);

/* ---- updates ----
 * values: the family's nlabels label values in label-name order (may be
 * NULL when nlabels is 0); a NULL value means "". Values must be valid
 * UTF-8. The series is created on first use. Each returns CU_OK,
 * CU_EINVAL (rejected as said per function; the series is unchanged and
 * the error counted) or CU_ENOMEM. */

/* Adds delta: counters (delta >= 0, finite) and gauges (any finite delta). */
cu_err cu_metric_inc(cu_metric_family *f, const char *const values[], double delta);
/* Sets the value: gauges (any value, NaN and infinities included);
 * counters only to a value >= the current one (to mirror a count kept
 * elsewhere); info metrics only to 1. */
cu_err cu_metric_set(cu_metric_family *f, const char *const values[], double v);
/* Records one observation x (not NaN) in a histogram. */
cu_err cu_metric_observe(cu_metric_family *f, const char *const values[], double x);

/* Reads a counter's or gauge's value (CU_ENOTFOUND when the series does
 * not exist, CU_EINVAL for a histogram). */
cu_err cu_metric_get(const cu_metric_family *f, const char *const values[], double *out);
/* Reads a histogram series: count, sum and, when bucket_counts is not
 * NULL, the cumulative count of each of the family's buckets followed by
 * the +Inf bucket (nbuckets + 1 entries). */
cu_err cu_metric_get_histogram(const cu_metric_family *f, const char *const values[],
                               uint64_t *count, double *sum, uint64_t *bucket_counts);

/* Removes one series (CU_ENOTFOUND when it does not exist). */
cu_err cu_metric_delete(cu_metric_family *f, const char *const values[]);
/* Removes every series of f whose label labelname equals value; returns
 * how many (0 when f has no such label). */
size_t cu_metric_delete_matching(cu_metric_family *f, const char *labelname, const char *value);
/* The same over every family of m: a deleted ClusterQueue is
 * cu_metrics_delete_label(m, "cluster_queue", name) (plus
 * "preempting_cluster_queue" for kueue_preempted_workloads_total). */
size_t cu_metrics_delete_label(cu_metrics *m, const char *labelname, const char *value);
/* Removes every series of f (for gauges rebuilt from state each scrape). */
void cu_metric_reset_family(cu_metric_family *f);

/* Accessors. */
const char *cu_metric_family_name(const cu_metric_family *f);
cu_metric_type cu_metric_family_type(const cu_metric_family *f);
size_t cu_metric_family_nlabels(const cu_metric_family *f);
size_t cu_metric_family_nseries(const cu_metric_family *f);
/* Bucket upper bounds (borrowed) and their number (0 unless histogram). */
const double *cu_metric_family_buckets(const cu_metric_family *f, size_t *nbuckets);

/* ---- exposition ----
 * Appends a scrape of m to out (bounded cu_buf, initialised by the caller).
 * openmetrics = 0: Prometheus text format 0.0.4: "# HELP name text" (text
 *   escapes \ and newline), "# TYPE name counter|gauge|histogram", one
 *   line per sample, label values escaping \, " and newline, numbers in
 *   the shortest form that reads back to the same double, +Inf, -Inf and
 *   NaN spelled so; histograms as name_bucket{...,le="B"} (cumulative,
 *   le="+Inf" last), name_sum and name_count.
 * openmetrics = 1: OpenMetrics 1.0.0: "# TYPE" then "# HELP" (escaping \,
 *   " and newline) per family; counters named without the _total suffix
 *   in TYPE/HELP and with it on samples; info families typed "info" and
 *   named without _info (see cu_metrics_family for the exception);
 *   le values in canonical float form ("1.0", "2.5", "+Inf"); "# EOF"
 *   last.
 * Families without series are written with HELP/TYPE only. Returns CU_OK,
 * or CU_ENOMEM when out hit its bound (out then holds a truncated scrape
 * that must not be served). Borrows m. */
cu_err cu_metrics_write(const cu_metrics *m, cu_buf *out, int openmetrics);

/* Returns 1 when an HTTP Accept header prefers OpenMetrics 1.0.0 (or
 * 0.0.1, served as 1.0.0) over the Prometheus text format, by q-values
 * (a tie goes to OpenMetrics; "*" wildcards count for the text format
 * only), 0 otherwise (NULL or "" included). Answer with
 * cu_metrics_content_type of the result. */
int cu_metrics_wants_openmetrics(const char *accept_header);
/* Returns the static content type string for a scrape in that format. */
const char *cu_metrics_content_type(int openmetrics);

/* ---------------- the catalogue ----------------
 * Every family `cueue controller` exports. Kueue's keep Kueue's names,
 * types, label names (replica_role included) and bucket layouts, so that
 * Kueue dashboards and alerts work unchanged; see docs/metrics.md. The
 * controller feeds them; the registry does not read any state itself. */
typedef struct cu_kueue_metrics {
    /* Kueue: health */
    cu_metric_family *admission_attempts_total;              /* result, replica_role */
    cu_metric_family *admission_attempt_duration_seconds;    /* result, replica_role; default buckets */
    cu_metric_family *build_info;                            /* kueue_build_info (info) */

    /* Kueue: ClusterQueue */
    cu_metric_family *pending_workloads;                     /* cluster_queue, status, replica_role */
    cu_metric_family *quota_reserved_workloads_total;        /* cluster_queue, priority_class, replica_role */
    cu_metric_family *quota_reserved_wait_time_seconds;      /* same; E14 */
    cu_metric_family *admitted_workloads_total;              /* cluster_queue, priority_class, replica_role */
    cu_metric_family *admission_wait_time_seconds;           /* same; E16 */
    cu_metric_family *ready_wait_time_seconds;               /* same; E14 (waitForPodsReady) */
    cu_metric_family *admitted_until_ready_wait_time_seconds;/* same; E14 (waitForPodsReady) */
    cu_metric_family *execution_time_seconds;                /* cluster_queue, priority_class, replica_role; E16 */
    cu_metric_family *evicted_workloads_total;               /* cluster_queue, reason, underlying_cause, priority_class, replica_role */
    cu_metric_family *evicted_workloads_once_total;          /* same */
    cu_metric_family *preempted_workloads_total;             /* preempting_cluster_queue, reason, replica_role */
    cu_metric_family *pods_ready_to_evicted_time_seconds;    /* cluster_queue, reason, underlying_cause, replica_role; E14 */
    cu_metric_family *finished_workloads;                    /* cluster_queue, replica_role (gauge) */
    cu_metric_family *finished_workloads_total;              /* cluster_queue, priority_class, replica_role */
    cu_metric_family *reserving_active_workloads;            /* cluster_queue, replica_role */
    cu_metric_family *admitted_active_workloads;             /* cluster_queue, replica_role */
    cu_metric_family *cluster_queue_status;                  /* cluster_queue, status, replica_role */
    cu_metric_family *cluster_queue_info;                    /* cluster_queue, parent_cohort, root_cohort (info) */
    cu_metric_family *cluster_queue_resource_reservation;    /* cohort, cluster_queue, flavor, resource, replica_role */
    cu_metric_family *cluster_queue_resource_usage;          /* same */
    cu_metric_family *cluster_queue_nominal_quota;           /* same */
    cu_metric_family *cluster_queue_borrowing_limit;         /* same (+Inf when unset) */
    cu_metric_family *cluster_queue_lending_limit;           /* same (+Inf when unset) */
    cu_metric_family *cluster_queue_weighted_share;          /* cluster_queue, cohort, replica_role */

    /* Kueue: LocalQueue */
    cu_metric_family *local_queue_pending_workloads;         /* name, namespace, status, replica_role */
    cu_metric_family *local_queue_quota_reserved_workloads_total;   /* name, namespace, priority_class, replica_role */
    cu_metric_family *local_queue_quota_reserved_wait_time_seconds; /* same; E14 */
    cu_metric_family *local_queue_admitted_workloads_total;  /* same */
    cu_metric_family *local_queue_admission_wait_time_seconds;      /* same; E14 (Kueue's layout) */
    cu_metric_family *local_queue_ready_wait_time_seconds;   /* same; E14 */
    cu_metric_family *local_queue_admitted_until_ready_wait_time_seconds; /* same; E14 */
    cu_metric_family *local_queue_execution_time_seconds;    /* same; E16 */
    cu_metric_family *local_queue_evicted_workloads_total;   /* name, namespace, reason, underlying_cause, priority_class, replica_role */
    cu_metric_family *local_queue_finished_workloads;        /* name, namespace, replica_role */
    cu_metric_family *local_queue_finished_workloads_total;  /* name, namespace, priority_class, replica_role */
    cu_metric_family *local_queue_reserving_active_workloads;/* name, namespace, replica_role */
    cu_metric_family *local_queue_admitted_active_workloads; /* name, namespace, replica_role */
    cu_metric_family *local_queue_status;                    /* name, namespace, active, replica_role */
    cu_metric_family *local_queue_resource_reservation;      /* name, namespace, flavor, resource, replica_role */
    cu_metric_family *local_queue_resource_usage;            /* same */

    /* Kueue: Cohort */
    cu_metric_family *cohort_info;                           /* cohort, parent_cohort, root_cohort (info) */
    cu_metric_family *cohort_weighted_share;                 /* cohort, replica_role */
    cu_metric_family *cohort_subtree_quota;                  /* cohort, flavor, resource, replica_role */
    cu_metric_family *cohort_subtree_resource_reservations;  /* cohort, flavor, resource, replica_role */
    cu_metric_family *cohort_subtree_admitted_workloads_total; /* cohort, priority_class, replica_role */
    cu_metric_family *cohort_subtree_admitted_active_workloads; /* cohort, replica_role */

    /* Cueue's own */
    cu_metric_family *cueue_build_info;                      /* version, git_commit, build_date, compiler, platform (info) */
    cu_metric_family *cueue_cycle_seconds;                   /* cueue_scheduling_cycle_duration_seconds{result} */
    cu_metric_family *cueue_cycles_total;                    /* cueue_scheduling_cycles_total{result} */
    cu_metric_family *cueue_admissions_total;                /* no labels */
    cu_metric_family *cueue_evictions_total;                 /* no labels */
    cu_metric_family *cueue_preemptions_total;               /* no labels */
    cu_metric_family *cueue_engine_rebuilds_total;           /* no labels */
    cu_metric_family *cueue_api_requests_total;              /* verb, code */
    cu_metric_family *cueue_api_request_duration_seconds;    /* verb */
    cu_metric_family *cueue_api_writes_total;                /* no labels */
    cu_metric_family *cueue_api_write_errors_total;          /* no labels */
    cu_metric_family *cueue_write_conflicts_total;           /* kind */
    cu_metric_family *cueue_watch_restarts_total;            /* resource */
    cu_metric_family *cueue_watch_relists_total;             /* resource */
    cu_metric_family *cueue_leader;                          /* no labels (gauge 0/1) */
    cu_metric_family *cueue_pending_workloads_by_reason;     /* cluster_queue, reason */
    cu_metric_family *cueue_metrics_errors_total;            /* reason */
} cu_kueue_metrics;

/* Registers every family of the catalogue in m and fills *out with the
 * family pointers (owned by m). Also makes m count its own rejected
 * updates in cueue_metrics_errors_total{reason}. Returns CU_OK, CU_ENOMEM,
 * or CU_EINVAL when a name clashes with a family already in m (see
 * cu_metrics_last_error). */
cu_err cu_metrics_kueue_register(cu_metrics *m, cu_kueue_metrics *out);

/* Kueue's bucket layouts, for tests and for the controller.
 * Exponential: [1, 2.5, 5, 10, ...] with n bounds (n = 14 or 16). */
size_t cu_metrics_kueue_buckets(size_t n, double *out);

#endif
