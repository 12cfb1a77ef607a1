/*
 * cu_jobset.c - the JobSet integration (Kueue's "jobset.x-k8s.io/jobset"
 * framework): what differs in a JobSet from the other suspend-based kinds
 * (cu_suspend.c has the rest): its Workload's name and body, a pod template
 * per replicated Job, when it is finished (its Completed or Failed
 * condition), its start and restore patches (the whole
 * spec.replicatedJobs, with a resourceVersion precondition).
 */
#include "cu_ctrl_int.h"
#include "cu_jobset.h"

static void jobset_fill(cjob *j, json_object *js)
{
    json_object *st = cu_jget(js, "status");
    json_object *conds = cu_jget(st, "conditions");
    for (size_t i = 0, n = cu_jarr_len(conds); i < n && !j->finished; i++) {
        json_object *k = json_object_array_get_idx(conds, i);
        if (cu_jobset_cond_finished(cu_jstr(k, "type"), cu_jstr(k, "status"), &j->failed)) {
            j->finished = 1;
            j->fin_msg = ctrl_sdup(cu_jstr(k, "message") ? cu_jstr(k, "message") : "");
        }
    }
    /* Kueue's IsActive: a replicated Job with active Jobs; PodsReady: all
     * replicas (Jobs) ready or succeeded, counted here in the pods of
     * their pod set (so that all of them make the Workload's count) */
    json_object *rs = cu_jget(st, "replicatedJobsStatus");
    json_object *rj = cu_jpath(js, "spec.replicatedJobs");
    for (size_t i = 0, n = cu_jarr_len(rs); i < n; i++) {
        json_object *x = json_object_array_get_idx(rs, i);
        const char *rn = cu_jstr(x, "name");
        int32_t per = 1;
        for (size_t k = 0, nk = cu_jarr_len(rj); rn && k < nk; k++) {
            json_object *r = json_object_array_get_idx(rj, k);
            if (cu_jstr(r, "name") && strcmp(cu_jstr(r, "name"), rn) == 0) {
                json_object *sp = cu_jpath(r, "template.spec");
                json_object *pa = cu_jget(sp, "parallelism"), *co = cu_jget(sp, "completions");
                per = cu_jobset_podset_count(1, pa != NULL, (int32_t)cu_jas_int64(pa, 1),
                                             co != NULL, (int32_t)cu_jas_int64(co, 0));
            }
        }
        j->active += cu_jas_int64(cu_jget(x, "active"), 0);
        j->ready += cu_jas_int64(cu_jget(x, "ready"), 0) * per;
        j->succeeded += cu_jas_int64(cu_jget(x, "succeeded"), 0) * per;
    }
    /* a merge patch replaces spec.replicatedJobs whole: it is sent with
     * the resourceVersion it was read at, not to undo a change made since */
    if (json_object_is_type(rj, json_type_array)) {
        json_object *own = json_object_new_object();
        json_object_object_add(own, "replicatedJobs", json_object_get(rj));
        const char *rv = cu_jpath_str(js, "metadata.resourceVersion");
        if (rv)
            json_object_object_add(own, "resourceVersion", json_object_new_string(rv));
        j->own = ctrl_jtext(own);
        json_object_put(own);
    }
}

static size_t jobset_templates(json_object *js, json_object **t, size_t max)
{
    json_object *rj = cu_jpath(js, "spec.replicatedJobs");
    size_t n = cu_jarr_len(rj);
    for (size_t i = 0; i < n && i < max; i++)
        t[i] = cu_jpath(json_object_array_get_idx(rj, i), "template.spec.template");
    return n < max ? n : max;
}

static json_object *jobset_retemplate(const cjob *j, const rec *w, json_object *const *tp)
{
    (void)w;
    json_object *own = j->own ? cu_json_parse_str(j->own) : NULL;
    json_object *p = own ? cu_ctrl_jobset_templates_patch(cu_jget(own, "replicatedJobs"), tp,
                                                          j->nps, cu_jstr(own, "resourceVersion"))
                         : NULL;
    json_object_put(own);
    return p;
}

static json_object *jobset_start(const cjob *j, const rec *w, json_object *wj, json_object *flavors,
                                 cu_diag *d, int *permanent)
{
    json_object *own = j->own ? cu_json_parse_str(j->own) : NULL;
    json_object *rj = cu_jget(own, "replicatedJobs");
    json_object *all = w->pstmpls ? cu_json_parse_str(w->pstmpls) : NULL;
    /* the Workload's pod set templates as pod templates */
    json_object *tm = json_object_new_array();
    for (size_t i = 0, n = cu_jarr_len(all); i < n; i++) {
        json_object *e = json_object_array_get_idx(all, i), *t = json_object_new_object();
        json_object_object_add(t, "spec", json_object_get(cu_jget(e, "spec")));
        json_object_object_add(t, "metadata", json_object_get(cu_jget(e, "meta")));
        json_object_array_add(tm, t);
    }
    json_object *p = rj ? cu_ctrl_jobset_start_patch(rj, tm, wj, flavors,
                                                     cu_jstr(own, "resourceVersion"), d, permanent)
                        : NULL;
    if (!rj)
        cu_diag_error(d, "JobSet %s/%s: spec.replicatedJobs: missing", j->ns, j->name);
    json_object_put(own);
    json_object_put(all);
    json_object_put(tm);
    return p;
}

static const ctrl_susp_ops jobset_ops = {
    .wl_name = cu_jobset_workload_name,
    .templates = jobset_templates,
    .fill = jobset_fill,
    .workload = cu_ctrl_workload_for_jobset,
    .retemplate = jobset_retemplate,
    .start = jobset_start,
    .ok_msg = "",
    .fail_msg = "",
};

static void jobset_reconcile(ctrl *c, const char *key)
{
    ctrl_susp_reconcile_key(c, R_JOBSET, key);
}

static void jobset_written(ctrl *c, const char *key, int ok, const char *body)
{
    ctrl_susp_written(c, R_JOBSET, key, ok, body);
}

const ctrl_integ ctrl_integ_jobset = {
    .r = R_JOBSET,
    .decode = ctrl_susp_decode,
    .deleted = ctrl_susp_deleted,
    .reconcile = jobset_reconcile,
    .written = jobset_written,
    .awaits_workload = ctrl_susp_awaits_workload,
    .susp = &jobset_ops,
};
