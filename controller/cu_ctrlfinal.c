/*
 * cu_ctrlfinal.c - Kueue's finalizer kueue.x-k8s.io/resource-in-use on
 * ClusterQueues and ResourceFlavors. Kueue's webhook adds it at creation
 * and its reconcilers add it when missing (Cueue has no webhook: the
 * controller adds it); it comes off an object being deleted only when
 * nothing uses it, so that a deleted ClusterQueue stays (Terminating,
 * admitting nothing) and keeps counting the quota of its admitted
 * Workloads until they finish. LocalQueues get none, as in Kueue: the
 * quota of an admitted Workload is held by its ClusterQueue.
 */
#include "cu_ctrl_int.h"

/* 1 when a Workload holds quota in ClusterQueue name: reserved or
 * admitted and not finished, as the API says or as the engine counts it
 * (an admission of ours not seen back yet). */
static int cq_in_use(ctrl *c, const char *name)
{
    OMAP_FOREACH(&c->objs[R_WL], w)
    {
        const cu_workload *wl = ctrl_wl_of(w);
        if (!wl)
            continue;
        if (cu_workload_has_quota(wl) && !cu_workload_finished(wl) && wl->adm_cq &&
            strcmp(wl->adm_cq, name) == 0)
            return 1;
    }
    for (size_t i = 0, n = cu_engine_ncqs(c->eng); i < n; i++) {
        const cu_cq_info *ci = cu_engine_cq_info(c->eng, i);
        if (strcmp(ci->name, name) == 0 && ci->reserving > 0)
            return 1;
    }
    return 0;
}

/* The ClusterQueue that names ResourceFlavor name in its resource
 * groups (borrowed), or NULL. */
static const char *rf_user(ctrl *c, const char *name)
{
    OMAP_FOREACH(&c->objs[R_CQ], q)
    {
        const cu_cluster_queue *cq = q->w && q->w->cqs.n ? q->w->cqs.items[0] : NULL;
        if (!cq)
            continue;
        for (size_t g = 0; g < cq->groups.n; g++)
            for (size_t f = 0; f < cq->groups.items[g].nflavors; f++)
                if (strcmp(cq->groups.items[g].flavors[f].name, name) == 0)
                    return q->key;
    }
    return NULL;
}

/* Writes x's finalizers with Kueue's added (add) or taken off: a merge
 * patch of metadata.finalizers with a resourceVersion precondition, so
 * that a finalizer another controller added meanwhile is not lost. */
static void write_fins(ctrl *c, int r, rec *x, int add)
{
    json_object *old = x->fins ? cu_json_parse_str(x->fins) : NULL;
    json_object *fins = json_object_new_array();
    for (size_t i = 0, n = cu_jarr_len(old); i < n; i++) {
        json_object *f = json_object_array_get_idx(old, i);
        const char *s = json_object_get_string(f);
        if (!s || strcmp(s, CU_FINALIZER_IN_USE) != 0)
            json_object_array_add(fins, json_object_get(f));
    }
    json_object_put(old);
    if (add)
        json_object_array_add(fins, json_object_new_string(CU_FINALIZER_IN_USE));
    json_object *p = json_object_new_object(), *md = json_object_new_object();
    if (x->rv)
        json_object_object_add(md, "resourceVersion", json_object_new_string(x->rv));
    json_object_object_add(md, "finalizers", fins);
    json_object_object_add(p, "metadata", md);
    char op[700], path[800], what[900];
    snprintf(op, sizeof(op), "fin:%s:%s", r == R_CQ ? "cq" : "rf", x->key);
    snprintf(path, sizeof(path), "%s/%s", res_tab[r].path, x->key);
    snprintf(what, sizeof(what), "%s finalizer %s of %s %s", add ? "adding" : "removing",
             CU_FINALIZER_IN_USE, res_tab[r].kind, x->key);
    if (ctrl_send_write(c, OP_OTHER, x->r, op, x->key, "PATCH", path, MERGE, p, what))
        ctrl_log(c, 1, "%s", what);
}

void ctrl_finalizers(ctrl *c)
{
    if (!c->eng)
        return; /* not every informer synced: usage not known yet */
    static const int rs[] = { R_CQ, R_RF };
    for (size_t k = 0; k < 2; k++) {
        int r = rs[k];
        OMAP_FOREACH(&c->objs[r], x)
        {
            if (!x->rv)
                continue;
            int have = x->has_fin;
            if (!x->deleting) {
                if (!have)
                    write_fins(c, r, x, 1);
                continue;
            }
            if (!have)
                continue; /* gone once the other finalizers are */
            if (r == R_CQ ? cq_in_use(c, x->key) : rf_user(c, x->key) != NULL)
                continue; /* in use: Terminating until its users are gone */
            write_fins(c, r, x, 0);
        }
    }
}
