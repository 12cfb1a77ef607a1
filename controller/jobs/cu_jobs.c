/*
 * cu_jobs.c - the integrations' registry: which file handles which owner
 * kind, and what every integration shares.
 */
#include "cu_ctrl_int.h"

const ctrl_integ *ctrl_integ_of(int r)
{
    switch (r) {
    case R_JOB: return &ctrl_integ_job;
    case R_JOBSET: return &ctrl_integ_jobset;
    case R_LWS: return &ctrl_integ_lws;
    case R_POD: return &ctrl_integ_pod;
    case R_LWS_POD: return &ctrl_integ_lws_pod;
    default: return NULL;
    }
}

int ctrl_owner_alive(ctrl *c, const rec *w)
{
    if (!w->owner || w->owner_r < R_FIRST_OWNER || w->owner_r >= NRES)
        return 0;
    if (ctrl_omap_get(&c->objs[w->owner_r], w->owner))
        return 1;
    const ctrl_integ *in = ctrl_integ_of(w->owner_r);
    return in && in->owner_alive && in->owner_alive(c, w->owner);
}

int ctrl_finish_workload(ctrl *c, rec *w, const char *reason, const char *msg)
{
    const cu_workload *wl = ctrl_wl_of(w);
    json_object *st, *p = ctrl_status_patch(NULL, &st);
    json_object_object_add(
        st, "conditions",
        ctrl_cset(ctrl_conds_json(wl), "Finished", "True", reason, msg, cu_clock_system_now(NULL)));
    char what[1300];
    snprintf(what, sizeof(what), "finishing Workload %s", w->key);
    if (!ctrl_wl_status_write(c, w, OP_STATUS, p, what))
        return 0;
    if (cu_workload_has_quota(wl)) {
        ctrl_m_wl(c, c->km.finished_workloads_total, c->km.local_queue_finished_workloads_total, wl,
                  wl->adm_cq, 0, 1);
        const cu_condition *ac = cu_workload_cond(wl, "Admitted");
        if (ac && ac->ltt_ms)
            ctrl_m_wl(c, c->km.execution_time_seconds, c->km.local_queue_execution_time_seconds, wl,
                      wl->adm_cq, 1, ctrl_secs(cu_clock_system_now(NULL) - ac->ltt_ms));
    }
    return 1;
}

void ctrl_wl_priority(ctrl *c, json_object *spec)
{
    json_object *ref = cu_jget(spec, "priorityClassRef");
    const char *pk = cu_jstr(ref, "kind"), *pn = cu_jstr(ref, "name");
    if (!pk || !pn)
        return;
    int wpc = strcmp(pk, "WorkloadPriorityClass") == 0;
    rec *pr = ctrl_omap_get(&c->objs[wpc ? R_WPC : R_PC], pn);
    if (pr && pr->w && wpc && pr->w->wpcs.n)
        json_object_object_add(spec, "priority", json_object_new_int(pr->w->wpcs.items[0]->value));
    else if (pr && pr->w && !wpc && pr->w->pcs.n)
        json_object_object_add(spec, "priority", json_object_new_int(pr->w->pcs.items[0]->value));
}

int ctrl_managed_parent(ctrl *c, json_object *obj)
{
    json_object *refs = cu_jpath(obj, "metadata.ownerReferences");
    for (size_t i = 0, n = cu_jarr_len(refs); i < n; i++) {
        json_object *o = json_object_array_get_idx(refs, i);
        const char *kind = cu_jstr(o, "kind"), *av = cu_jstr(o, "apiVersion");
        if (!kind || !av || !cu_jas_true(cu_jget(o, "controller")))
            continue;
        for (int r = R_FIRST_OWNER; r < NRES; r++)
            if (c->cfg.on[r] && strcmp(kind, res_tab[r].kind) == 0 &&
                strcmp(av, res_tab[r].api_version) == 0)
                return r;
    }
    return -1;
}
