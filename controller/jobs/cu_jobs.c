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

void ctrl_priority_value(ctrl *c, json_object *spec)
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
