/*
 * cu_jobset.h - Kueue's rules for a JobSet's Workload (its
 * "jobset.x-k8s.io/jobset" integration): the name, the pod sets' counts,
 * when it is finished. Pure functions of the JobSet's fields, shared by
 * the controller's builder (controller/jobs/cu_jobbuild.c).
 */
#ifndef CU_JOBSET_H
#define CU_JOBSET_H

#include "cu_base.h"

#define CU_JOBSET_GROUP "jobset.x-k8s.io"
#define CU_JOBSET_API_VERSION CU_JOBSET_GROUP "/v1alpha2"

/* The name Kueue gives the Workload of JobSet name/uid: "jobset-<name>",
 * "-", 5 hex digits of the hash of kind, group, name and uid
 * (cu_owner_workload_name). Arena-owned. */
const char *cu_jobset_workload_name(cu_arena *a, const char *name, const char *uid);

/* The pod count of a replicated Job's pod set: replicas times the pods of
 * one of its Jobs, min(parallelism, completions) as for a Job
 * (cu_job_podset_count); -1 when it does not fit an int32. */
int32_t cu_jobset_podset_count(int32_t replicas, int has_par, int32_t par, int has_comp,
                               int32_t comp);

/* Whether a JobSet condition of type t and status s (NULL allowed)
 * finishes the JobSet: Completed or Failed, status True; sets *failed (if
 * not NULL) to whether it failed. */
int cu_jobset_cond_finished(const char *t, const char *s, int *failed);

#endif
