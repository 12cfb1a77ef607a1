/*
 * cu_job.h - Kueue's rules for a batch/v1 Job's Workload, the one home of
 * them for both builders: the decoded Workload of `cueue simulate`
 * (cu_dec_job, api/cu_job.c) and the JSON Workload the controller creates
 * (controller/jobs/cu_jobbuild.c). Pure functions of the Job's fields; no
 * document tree.
 */
#ifndef CU_JOB_H
#define CU_JOB_H

#include "cu_base.h"

/* The name Kueue gives the Workload of an object of kind and API group
 * (Kueue's GetWorkloadNameForOwnerWithGVK): "<kind in lower case>-<name>"
 * truncated to 247 chars, "-", the first 5 hex digits of
 * sha1("<kind>\n<group>\n<name>\n<uid>"). Returns an arena-owned string. */
const char *cu_owner_workload_name(cu_arena *a, const char *kind, const char *group,
                                   const char *name, const char *uid);

/* The name Kueue gives the Workload of a batch/v1 Job:
 * "job-<name>" truncated to 247 chars, "-", first 5 hex of
 * sha1("Job\nbatch\n<name>\n<uid>"). Returns arena-owned string. */
const char *cu_job_workload_name(cu_arena *a, const char *job_name, const char *uid);
/* The same rule for an owner of any kind (Kueue's
 * GetWorkloadNameForOwnerWithGVK): "<lowercase kind>-<name>" truncated,
 * "-", 5 hex of sha1("<Kind>\n<group>\n<name>\n<uid>"). */
const char *cu_owner_workload_name(cu_arena *a, const char *kind, const char *group,
                                   const char *name, const char *uid);

/* Pod-set count of a Job: min(parallelism, completions), where parallelism
 * defaults to 1 and completions to parallelism; has_par/has_comp say
 * whether the field is set (and valid). */
int32_t cu_job_podset_count(int has_par, int32_t par, int has_comp, int32_t comp);

/* The message for an invalid kueue.x-k8s.io/job-min-parallelism value; its
 * arguments are the pod-set count (int) and the value (string). */
#define CU_JOB_MIN_PARALLELISM_MSG "must be an integer between 1 and %d, got \"%s\""

/* Parses the job-min-parallelism annotation value v (borrowed) of a pod
 * set of count pods: returns 1 and sets *out when it is a decimal integer
 * in [1, count] (out of long's range counts as invalid), else 0 (report
 * CU_JOB_MIN_PARALLELISM_MSG). */
int cu_job_min_count(const char *v, int32_t count, int32_t *out);

/* The Workload's priority class reference: the WorkloadPriorityClass of
 * the kueue.x-k8s.io/priority-class label wpc when non-empty, else the
 * PriorityClass of the pod template's priorityClassName pcn when
 * non-empty. Returns 1 and sets the borrowed/static strings, or 0. */
int cu_job_priority_ref(const char *wpc, const char *pcn, const char **group, const char **kind,
                        const char **name);

/* Whether a condition of type t and status s (NULL allowed) finishes an
 * object whose success condition is done (a Job's Complete, a JobSet's
 * Completed) or Failed: status True; sets *failed (if not NULL). */
int cu_cond_finished(const char *t, const char *s, const char *done, int *failed);

/* Whether a Job condition of type t and status s (NULL allowed) finishes
 * the Job (Complete or Failed, status True); sets *failed (if not NULL)
 * to whether it failed. */
int cu_job_cond_finished(const char *t, const char *s, int *failed);

#endif
