/*
 * cu_prom.h - a Prometheus metrics registry and its exposition writer.
 *
 * No globals: the caller owns one cu_metrics and passes it around.
 * A registry holds families (name, help, type, label names, histogram
 * buckets); a family holds series keyed by their label values (a hash
 * map), created on first use. Nothing here is thread-safe: one thread
 * (the controller's loop, which also runs its metrics HTTP handler) is
 * the only caller.
 *
 * Rules kept by the registry:
 *  - counters never decrease: an inc with a negative or NaN delta, or a
 *    set below the current value, is rejected (CU_EINVAL), the series is
 *    unchanged, and the registry's error count goes up (and the family
 *    given to cu_metrics_count_errors_in, if any, counts it by reason);
 *  - histograms have cumulative buckets on output, an implicit le="+Inf"
 *    bucket equal to _count, and _sum;
 *  - output is deterministic: families sorted by name, series by their
 *    label values (in label-name order, byte-wise).
 *
 * Exposition formats: Prometheus text 0.0.4 and OpenMetrics 1.0.0 (see
 * cu_metrics_write).
 */
#ifndef CU_PROM_H
#define CU_PROM_H

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

/* Makes m count its rejected updates also in f (borrowed, a counter of m
 * with one label, the reason), as cueue_metrics_errors_total. */
void cu_metrics_count_errors_in(cu_metrics *m, cu_metric_family *f);

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

#endif
