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

/* The name Kueue gives the Workload of a batch/v1 Job:
 * "job-<name>" truncated to 247 chars, "-", first 5 hex of
 * sha1("Job\nbatch\n<name>\n<uid>"). Returns arena-owned string. */
const char *cu_job_workload_name(cu_arena *a, const char *job_name, const char *uid);

#endif
