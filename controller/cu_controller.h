/*
 * cu_controller.h - `cueue controller`: the admission controller daemon.
 *
 * It watches the cluster (informers on Kueue's objects, Namespaces,
 * PriorityClasses and batch/v1 Jobs), creates one Workload per Job that
 * carries the queue-name label, runs the admission engine on what it saw,
 * writes admissions (status.admission plus QuotaReserved/Admitted) and
 * pending reasons to the Workloads, and unsuspends admitted Jobs with the
 * flavors' nodeLabels and tolerations.
 *
 * The pieces below that build request bodies are pure functions, exposed
 * for the unit tests.
 */
#ifndef CU_CONTROLLER_H
#define CU_CONTROLLER_H

#include <json-c/json.h>

#include "cu_json.h"

#include "cu_engine.h"

/* Decodes o (borrowed) as one object of apiVersion/kind (whatever o says)
 * into w (its arena holds the converted tree), problems into d. Returns
 * what cu_world_decode returns; CU_EINVAL when o is not an object. */
cu_err cu_ctrl_decode_as(cu_world *w, json_object *o, const char *api_version, const char *kind,
                         cu_diag *d);

/* Loads the controller Configuration file path into cw: it must hold one
 * config.kueue.x-k8s.io Configuration and nothing to report (a warning
 * counts: an unknown field is refused). Problems go to stderr as
 * "cueue: WHO: ...". Returns the Configuration (in cw), or NULL. The check
 * of `cueue controller --config` and of `cueue dev --config`. */
const cu_config *cu_controller_load_config(cu_world *cw, const char *path, const char *who);

/* Returns 1 if the Job (json) has Complete=True or Failed=True; *failed
 * tells which. */
int cu_ctrl_job_finished(json_object *job, int *failed);

/* Builds the Workload Kueue's job integration creates for job: name from
 * cu_job_workload_name, the Job's namespace, a controller ownerReference
 * to the Job, one pod set "main" with count min(parallelism, completions)
 * (minCount from the job-min-parallelism annotation), the Job's pod
 * template, queueName and priorityClassRef from the priority-class label.
 * Returns a new object (caller frees with json_object_put), or NULL with
 * "Job ns/name: field: problem" in d. */
json_object *cu_ctrl_workload_for_job(json_object *job, cu_diag *d);

/* Returns a new conditions array: old (borrowed, may be NULL) with the
 * condition of type replaced (lastTransitionTime kept when the status does
 * not change) or appended. Caller frees with json_object_put. */
json_object *cu_ctrl_set_condition(json_object *old, const char *type, const char *status,
                                   const char *reason, const char *message, int64_t now_ms);

/* The merge patch of the Workload's /status for an admission: the
 * resourceVersion precondition rv (may be NULL), status.admission from
 * info (cluster queue, per pod set flavors, resourceUsage and count) and
 * QuotaReserved/Admitted=True with Kueue's reasons and messages, merged
 * into old_conds (borrowed); Admitted only when info's admission checks
 * are all Ready, and status.admissionChecks synced from old_checks
 * (borrowed, may be NULL; cu_ctrl_sync_checks) when checks apply.
 * Caller frees with json_object_put. */
json_object *cu_ctrl_admission_patch(const cu_wl_info *info, const char *rv, json_object *old_conds,
                                     json_object *old_checks, int64_t now_ms);

/* Kueue's sync of a Workload's status.admissionChecks with the checks that
 * apply to it (names[0..n), sorted): entries of old (borrowed, the current
 * list, may be NULL) that still apply are kept as they are (podSetUpdates
 * included), a missing one is added as Pending (lastTransitionTime now,
 * empty message), the others are dropped; the result is sorted by name.
 * Returns a new array (NULL when n is 0) and sets *changed when it differs
 * from old. Caller frees with json_object_put. */
json_object *cu_ctrl_sync_checks(json_object *old, const char *const *names, size_t n,
                                 int64_t now_ms, int *changed);

/* Kueue's reset of the admission checks on an eviction: every entry of
 * old (borrowed) not Pending becomes Pending with the message "Reset to
 * Pending after eviction. Previously: STATE" and lastTransitionTime now;
 * requeueAfterSeconds is kept, retryCount counts one more Retry (and is
 * dropped after another state), podSetUpdates are dropped. Returns a new
 * array, or NULL when nothing changes. Caller frees with json_object_put. */
json_object *cu_ctrl_reset_checks(json_object *old, int64_t now_ms);

/* The merge patch that starts an admitted Job: spec.suspend=false, the
 * template's nodeSelector extended with the nodeLabels of the flavors of
 * wl's status.admission (flavors: name -> ResourceFlavor json, borrowed),
 * the flavors' tolerations appended to the template's, and spec.parallelism
 * set to the admitted count when it differs (partial admission); the
 * podSetUpdates for pod set 0 in wl's status.admissionChecks add their
 * labels and annotations to the template's metadata, their nodeSelector
 * and tolerations to the flavors'. Returns
 * a new object, or NULL with a message in d when wl has no admission or a
 * flavor is missing, or when, as Kueue's pod set merge finds it, an update
 * conflicts with the flavors' node labels or the template's own keys
 * (labels, annotations, nodeSelector: the same key with another value);
 * that one is permanent (*permanent = 1 when permanent is not NULL):
 * Kueue then finishes the Workload (reason FailedToStart). */
json_object *cu_ctrl_job_start_patch(json_object *job, json_object *wl, json_object *flavors,
                                     cu_diag *d, int *permanent);

/* The merge patch of pod template tmpl (borrowed: {metadata, spec}) that
 * starts pod set idx of Workload wl as cu_ctrl_job_start_patch does pod
 * set 0's: {"spec": {"nodeSelector" (the template's and the flavors'),
 * "tolerations" (when any)}, "metadata": {the podSetUpdates' labels and
 * annotations} (when any)}; NULL with d (and *permanent) as there. */
json_object *cu_ctrl_podset_start(json_object *tmpl, json_object *wl, size_t idx,
                                  json_object *flavors, cu_diag *d, int *permanent);

/* Builds the Workload Kueue's jobset integration creates for the JobSet js:
 * its name from cu_jobset_workload_name, a controller ownerReference to
 * the JobSet, one pod set per replicated Job (its name; count replicas x
 * min(parallelism, completions); its Job's pod template), queueName and
 * priorityClassRef (the priority-class label, else the first pod template
 * with a priorityClassName). Returns a new object, or NULL with
 * "JobSet ns/name: field: problem" in d. */
json_object *cu_ctrl_workload_for_jobset(json_object *js, cu_diag *d);

/* The merge patch of a JobSet that gives its spec.replicatedJobs (rjobs,
 * borrowed; a merge patch replaces a list whole, so it carries all of
 * them) the pod template merge patches tp[0..n) (NULL: unchanged), with
 * the resourceVersion precondition rv (NULL: none). New, or NULL. */
json_object *cu_ctrl_jobset_templates_patch(json_object *rjobs, json_object *const *tp, size_t n,
                                            const char *rv);

/* The merge patch that starts an admitted JobSet: spec.suspend=false and
 * every replicated Job's pod template started as its pod set of wl
 * (cu_ctrl_podset_start, on the pod set's template in tmpls when given,
 * else the replicated Job's), as cu_ctrl_jobset_templates_patch writes
 * them. NULL with d when the admission has another number of pod sets
 * (Kueue's message) or as cu_ctrl_podset_start. */
json_object *cu_ctrl_jobset_start_patch(json_object *rjobs, json_object *tmpls, json_object *wl,
                                        json_object *flavors, const char *rv, cu_diag *d,
                                        int *permanent);

/* `cueue controller [OPTIONS]`: argv[0] is "controller". Returns the exit
 * code (0 after SIGTERM/SIGINT, 1 on a runtime failure, 2 bad usage). */
int cu_controller_main(int argc, char **argv);

#endif
