/*
 * cu_job.c - the batch/v1 Job integration: what differs in a Job from the
 * other suspend-based kinds (cu_suspend.c has the rest): its Workload's
 * name and body, its one pod template, its parallelism, when it is
 * finished, its start patch.
 */
#include "cu_ctrl_int.h"

static void job_fill(cjob *j, json_object *job)
{
    json_object *spec = cu_jget(job, "spec"), *st = cu_jget(job, "status");
    j->has_par = cu_jget(spec, "parallelism") != NULL;
    j->par = (int32_t)cu_jas_int64(cu_jget(spec, "parallelism"), 1);
    j->has_comp = cu_jget(spec, "completions") != NULL;
    j->comp = (int32_t)cu_jas_int64(cu_jget(spec, "completions"), 0);
    /* pods being deleted count: they hold their node's resources until
     * they are gone (status.terminating, kube-controller-manager 1.29+) */
    j->active =
        cu_jas_int64(cu_jget(st, "active"), 0) + cu_jas_int64(cu_jget(st, "terminating"), 0);
    j->ready = cu_jas_int64(cu_jget(st, "ready"), 0);
    j->succeeded = cu_jas_int64(cu_jget(st, "succeeded"), 0);
    j->finished = cu_ctrl_job_finished(job, &j->failed);
    if (j->finished && j->failed) {
        json_object *conds = cu_jget(st, "conditions");
        size_t n =
            json_object_is_type(conds, json_type_array) ? json_object_array_length(conds) : 0;
        for (size_t i = 0; i < n; i++) {
            json_object *k = json_object_array_get_idx(conds, i);
            const char *t = cu_jstr(k, "type");
            if (t && strcmp(t, "Failed") == 0)
                j->fin_msg = ctrl_sdup(cu_jstr(k, "message"));
        }
    }
    j->has_start = cu_jget(st, "startTime") != NULL;
}

static size_t job_templates(json_object *job, json_object **t, size_t max)
{
    if (max < 1)
        return 0;
    t[0] = cu_jpath(job, "spec.template"); /* NULL: a template of nothing */
    return 1;
}

/* A Job is stopped with parallelism back to the Workload's count when
 * partial admission lowered it. The template is restored afterwards
 * (job_retemplate): kube-apiserver lets a Job's nodeSelector and
 * tolerations change only while it is suspended and has no
 * status.startTime, so a patch that suspends and restores at once is
 * refused (422, spec.template: field is immutable) for a Job that ran. */
static void job_suspend(const cjob *j, const rec *w, json_object *spec)
{
    if (w && j->has_par && w->ps_count > 0 && j->par != w->ps_count && j->par < w->ps_count)
        json_object_object_add(spec, "parallelism", json_object_new_int(w->ps_count));
}

static json_object *job_retemplate(const cjob *j, const rec *w, json_object *const *tp)
{
    (void)j;
    (void)w;
    if (!tp[0])
        return NULL;
    json_object *p = json_object_new_object(), *spec = json_object_new_object();
    json_object_object_add(p, "spec", spec);
    json_object_object_add(spec, "template", json_object_get(tp[0]));
    return p;
}

/* The start: the Job as its Workload's template and counts have it, given
 * to cu_ctrl_job_start_patch; parallelism never below the Workload's
 * count (a partial admission's lower one comes from the admission). */
static json_object *job_start(const cjob *j, const rec *w, json_object *wj, json_object *flavors,
                              cu_diag *d, int *permanent)
{
    json_object *job = json_object_new_object(), *spec = json_object_new_object();
    json_object *tmpl = json_object_new_object();
    json_object_object_add(job, "spec", spec);
    if (j->has_par)
        json_object_object_add(spec, "parallelism",
                               json_object_new_int(j->par > w->ps_count ? j->par : w->ps_count));
    if (j->has_comp)
        json_object_object_add(spec, "completions", json_object_new_int(j->comp));
    json_object *orig = w->tmpl ? cu_json_parse_str(w->tmpl) : NULL;
    json_object *ometa = w->tmeta ? cu_json_parse_str(w->tmeta) : NULL;
    json_object_object_add(tmpl, "spec", orig ? orig : json_object_new_object());
    if (ometa)
        json_object_object_add(tmpl, "metadata", ometa);
    json_object_object_add(spec, "template", tmpl);
    json_object *p = cu_ctrl_job_start_patch(job, wj, flavors, d, permanent);
    json_object_put(job);
    return p;
}

static const ctrl_susp_ops job_ops = {
    .wl_name = cu_job_workload_name,
    .templates = job_templates,
    .fill = job_fill,
    .workload = cu_ctrl_workload_for_job,
    .suspend = job_suspend,
    .retemplate = job_retemplate,
    .start = job_start,
    .ok_msg = "Job finished successfully",
    .fail_msg = "Job failed",
};

/* ---------------- the integration's hooks ---------------- */

static void job_reconcile(ctrl *c, const char *key) { ctrl_susp_reconcile_key(c, R_JOB, key); }

static void job_written(ctrl *c, const char *key, int ok, const char *body)
{
    ctrl_susp_written(c, R_JOB, key, ok, body);
}

const ctrl_integ ctrl_integ_job = {
    .r = R_JOB,
    .decode = ctrl_susp_decode,
    .deleted = ctrl_susp_deleted,
    .reconcile = job_reconcile,
    .written = job_written,
    .awaits_workload = ctrl_susp_awaits_workload,
    .susp = &job_ops,
};
