/*
 * cu_ctrlbuild.c - request bodies of the controller (conditions, the
 * admission status patch). Pure functions: no I/O. The Job's bodies are in jobs/cu_jobbuild.c.
 */
#include "cu_ctrl_int.h"
#include "cu_topology.h"
#include "cu_wlstatus.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cu_err cu_ctrl_decode_as(cu_world *w, json_object *o, const char *api_version, const char *kind,
                         cu_diag *d)
{
    cu_node *n = cu_node_from_json(&w->arena, o);
    if (!n || n->type != CU_NODE_MAP)
        return n ? CU_EINVAL : CU_ENOMEM;
    cu_node_set(&w->arena, n, "apiVersion", cu_node_new_str(&w->arena, api_version));
    cu_node_set(&w->arena, n, "kind", cu_node_new_str(&w->arena, kind));
    cu_doc doc = { .file = "api", .root = n };
    return cu_world_decode(w, &doc, d);
}

json_object *cu_ctrl_set_condition(json_object *old, const char *type, const char *status,
                                   const char *reason, const char *message, int64_t now_ms)
{
    char ts[32];
    json_object *out = json_object_new_array();
    json_object *prev = NULL;
    size_t n = json_object_is_type(old, json_type_array) ? json_object_array_length(old) : 0;
    for (size_t i = 0; i < n; i++) {
        json_object *c = json_object_array_get_idx(old, i);
        const char *t = cu_jstr(c, "type");
        if (t && strcmp(t, type) == 0) {
            prev = c;
            continue;
        }
        json_object_array_add(out, json_object_get(c));
    }
    json_object *c = json_object_new_object();
    json_object_object_add(c, "type", json_object_new_string(type));
    json_object_object_add(c, "status", json_object_new_string(status));
    const char *pst = cu_jstr(prev, "status"), *pltt = cu_jstr(prev, "lastTransitionTime");
    if (pst && pltt && strcmp(pst, status) == 0) {
        json_object_object_add(c, "lastTransitionTime", json_object_new_string(pltt));
    } else {
        cu_time_format(now_ms, ts, sizeof(ts));
        json_object_object_add(c, "lastTransitionTime", json_object_new_string(ts));
    }
    json_object_object_add(c, "reason", json_object_new_string(reason));
    json_object_object_add(c, "message", json_object_new_string(message ? message : ""));
    json_object_array_add(out, c);
    return out;
}

json_object *cu_ctrl_sync_checks(json_object *old, const char *const *names, size_t n,
                                 int64_t now_ms, int *changed)
{
    size_t nold = json_object_is_type(old, json_type_array) ? json_object_array_length(old) : 0;
    *changed = 0;
    if (!n) {
        *changed = nold > 0;
        return NULL;
    }
    json_object *out = json_object_new_array();
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        json_object *have = NULL;
        for (size_t j = 0; j < nold && !have; j++) {
            const char *nm = cu_jstr(json_object_array_get_idx(old, j), "name");
            if (nm && strcmp(nm, names[i]) == 0)
                have = json_object_array_get_idx(old, j);
        }
        if (have) {
            json_object_array_add(out, json_object_get(have));
            kept++;
            continue;
        }
        char ts[32];
        cu_time_format(now_ms, ts, sizeof(ts));
        json_object *e = json_object_new_object();
        json_object_object_add(e, "name", json_object_new_string(names[i]));
        json_object_object_add(e, "state", json_object_new_string("Pending"));
        json_object_object_add(e, "lastTransitionTime", json_object_new_string(ts));
        json_object_object_add(e, "message", json_object_new_string(""));
        json_object_array_add(out, e);
        *changed = 1;
    }
    if (kept != nold)
        *changed = 1;
    /* sorted by name: names are; the order of old may differ */
    for (size_t i = 0; !*changed && i < nold; i++) {
        const char *nm = cu_jstr(json_object_array_get_idx(old, i), "name");
        *changed = !nm || strcmp(nm, names[i]) != 0;
    }
    return out;
}

json_object *cu_ctrl_reset_checks(json_object *old, int64_t now_ms)
{
    size_t n = cu_jarr_len(old);
    int changed = 0;
    json_object *out = json_object_new_array();
    char ts[32];
    cu_time_format(now_ms, ts, sizeof(ts));
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(old, i);
        const char *state = cu_jstr(e, "state");
        if (!state || strcmp(state, "Pending") == 0) {
            json_object_array_add(out, json_object_get(e));
            continue;
        }
        changed = 1;
        json_object *x = json_object_new_object();
        json_object_object_add(
            x, "name", json_object_new_string(cu_jstr(e, "name") ? cu_jstr(e, "name") : ""));
        json_object_object_add(x, "state", json_object_new_string("Pending"));
        char msg[128];
        snprintf(msg, sizeof(msg), "Reset to Pending after eviction. Previously: %s", state);
        json_object_object_add(x, "message", json_object_new_string(msg));
        json_object_object_add(x, "lastTransitionTime", json_object_new_string(ts));
        json_object *ra = cu_jget(e, "requeueAfterSeconds");
        if (ra)
            json_object_object_add(x, "requeueAfterSeconds", json_object_get(ra));
        if (strcmp(state, "Retry") == 0)
            json_object_object_add(
                x, "retryCount",
                json_object_new_int((int32_t)cu_jas_int64(cu_jget(e, "retryCount"), 0) + 1));
        json_object_array_add(out, x);
    }
    if (!changed) {
        json_object_put(out);
        return NULL;
    }
    return out;
}

json_object *cu_ctrl_admission_patch(const cu_wl_info *info, const char *rv, json_object *old_conds,
                                     json_object *old_checks, int64_t now_ms)
{
    json_object *p = json_object_new_object();
    if (rv) {
        json_object *md = json_object_new_object();
        json_object_object_add(md, "resourceVersion", json_object_new_string(rv));
        json_object_object_add(p, "metadata", md);
    }
    json_object *st = json_object_new_object();
    json_object_object_add(p, "status", st);
    json_object *adm = json_object_new_object();
    json_object_object_add(adm, "clusterQueue", json_object_new_string(info->cluster_queue));
    json_object *psas = json_object_new_array();
    for (size_t i = 0; i < info->npsa; i++) {
        const cu_psa_info *ps = &info->psa[i];
        json_object *o = json_object_new_object();
        json_object_object_add(o, "name", json_object_new_string(ps->name));
        json_object *fl = json_object_new_object(), *use = json_object_new_object();
        for (size_t r = 0; r < ps->n; r++) {
            char q[64];
            json_object_object_add(fl, ps->resources[r], json_object_new_string(ps->flavors[r]));
            cu_qty_format_res(ps->resources[r], ps->usage[r], q, sizeof(q));
            json_object_object_add(use, ps->resources[r], json_object_new_string(q));
        }
        json_object_object_add(o, "flavors", fl);
        json_object_object_add(o, "resourceUsage", use);
        json_object_object_add(o, "count", json_object_new_int(ps->count));
        if (ps->topo) /* TAS: where its pods go, v1beta2's shape */
            json_object_object_add(o, "topologyAssignment", cu_topo_assign_json(ps->topo));
        json_object_array_add(psas, o);
    }
    json_object_object_add(adm, "podSetAssignments", psas);
    json_object_object_add(st, "admission", adm);
    if (info->nchecks) {
        int changed = 0;
        json_object *cs =
            cu_ctrl_sync_checks(old_checks, info->checks, info->nchecks, now_ms, &changed);
        if (changed)
            json_object_object_add(st, "admissionChecks", cs);
        else
            json_object_put(cs);
    }
    char msg[320];
    cu_wlcond k[2];
    size_t nk =
        cu_wlstatus_admission(info->cluster_queue, info->checks_pending, msg, sizeof(msg), k);
    json_object *conds = json_object_get(old_conds);
    for (size_t i = 0; i < nk; i++) {
        json_object *next = cu_ctrl_set_condition(conds, k[i].type, k[i].status ? "True" : "False",
                                                  k[i].reason, k[i].message, now_ms);
        json_object_put(conds);
        conds = next;
    }
    json_object_object_add(st, "conditions", conds);
    return p;
}
