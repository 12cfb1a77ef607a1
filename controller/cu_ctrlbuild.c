/*
 * cu_ctrlbuild.c - request bodies of the controller (conditions, the
 * admission status patch) and the json-c -> cu_node converter. Pure
 * functions: no I/O. The Job's bodies are in jobs/cu_jobbuild.c.
 */
#include "cu_ctrl_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Deeper than this, values are left out of the converted tree (a null in
 * their place): no field the decoders read is nested this deep, and the
 * API server serves objects up to CU_JSON_MAX_DEPTH deep (unknown fields
 * in a pod template, say), which must decode as well, without a
 * recursion that deep. */
#define CONV_DEPTH_MAX 64

static cu_node *conv(cu_arena *a, json_object *j, int depth)
{
    if (depth > CONV_DEPTH_MAX &&
        (json_object_is_type(j, json_type_object) || json_object_is_type(j, json_type_array)))
        return cu_node_new_null(a);
    switch (json_object_get_type(j)) {
    case json_type_null:
        return cu_node_new_null(a);
    case json_type_boolean:
        return cu_node_new_bool(a, json_object_get_boolean(j));
    case json_type_int:
        return cu_node_new_int(a, json_object_get_int64(j));
    case json_type_double: {
        char b[64];
        snprintf(b, sizeof(b), "%.17g", json_object_get_double(j));
        return cu_node_new_plain(a, b);
    }
    case json_type_string:
        return cu_node_new_str(a, json_object_get_string(j));
    case json_type_array: {
        cu_node *s = cu_node_new_seq(a);
        size_t n = json_object_array_length(j);
        for (size_t i = 0; s && i < n; i++) {
            cu_node *v = conv(a, json_object_array_get_idx(j, i), depth + 1);
            if (!v || cu_node_push(a, s, v) != CU_OK)
                return NULL;
        }
        return s;
    }
    case json_type_object: {
        cu_node *m = cu_node_new_map(a);
        if (!m)
            return NULL;
        json_object_object_foreach(j, k, val) {
            cu_node *v = conv(a, val, depth + 1);
            if (!v || cu_node_set(a, m, k, v) != CU_OK)
                return NULL;
        }
        return m;
    }
    }
    return NULL;
}

cu_node *cu_ctrl_json_to_node(cu_arena *a, json_object *j)
{
    return conv(a, j, 0);
}

cu_err cu_ctrl_decode_as(cu_world *w, json_object *o, const char *api_version, const char *kind,
                         cu_diag *d)
{
    cu_node *n = cu_ctrl_json_to_node(&w->arena, o);
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

json_object *cu_ctrl_admission_patch(const cu_wl_info *info, const char *rv,
                                     json_object *old_conds, int64_t now_ms)
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
        json_object_array_add(psas, o);
    }
    json_object_object_add(adm, "podSetAssignments", psas);
    json_object_object_add(st, "admission", adm);
    char msg[320];
    snprintf(msg, sizeof(msg), "Quota reserved in ClusterQueue %s", info->cluster_queue);
    json_object *c1 = cu_ctrl_set_condition(old_conds, "QuotaReserved", "True", "QuotaReserved",
                                            msg, now_ms);
    json_object *c2 = cu_ctrl_set_condition(c1, "Admitted", "True", "Admitted",
                                            "The workload is admitted", now_ms);
    json_object_put(c1);
    json_object_object_add(st, "conditions", c2);
    return p;
}
