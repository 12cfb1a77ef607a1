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
