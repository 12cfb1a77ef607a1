/*
 * cu_ctrlbuild.c - request bodies of the controller (Workload for a Job,
 * admission status patch, Job start patch) and the json-c -> cu_node
 * converter. Pure functions: no I/O.
 */
#include "cu_controller.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_object *jpath(json_object *o, const char *dotted)
{
    char key[128];
    const char *p = dotted;
    while (o && *p) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        if (n >= sizeof(key))
            return NULL;
        memcpy(key, p, n);
        key[n] = 0;
        json_object *v = NULL;
        if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v))
            return NULL;
        o = v;
        p = dot ? dot + 1 : p + n;
    }
    return o;
}

static const char *jstr(json_object *o, const char *dotted)
{
    json_object *v = jpath(o, dotted);
    return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

/* metadata.labels[key] / metadata.annotations[key] (keys contain dots) */
static const char *jmeta_kv(json_object *o, const char *field, const char *key)
{
    json_object *m = jpath(o, "metadata"), *f = NULL, *v = NULL;
    if (!json_object_is_type(m, json_type_object) || !json_object_object_get_ex(m, field, &f) ||
        !json_object_is_type(f, json_type_object) || !json_object_object_get_ex(f, key, &v) ||
        !json_object_is_type(v, json_type_string))
        return NULL;
    return json_object_get_string(v);
}

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

int cu_ctrl_job_finished(json_object *job, int *failed)
{
    json_object *conds = jpath(job, "status.conditions");
    size_t n = json_object_is_type(conds, json_type_array) ? json_object_array_length(conds) : 0;
    for (size_t i = 0; i < n; i++) {
        json_object *c = json_object_array_get_idx(conds, i);
        const char *t = jstr(c, "type"), *s = jstr(c, "status");
        if (!t || !s || strcmp(s, "True") != 0)
            continue;
        if (strcmp(t, "Complete") == 0 || strcmp(t, "Failed") == 0) {
            if (failed)
                *failed = strcmp(t, "Failed") == 0;
            return 1;
        }
    }
    return 0;
}

/* Reads an optional non-negative int32 field; returns 0 when absent, -1 when bad. */
static int opt_count(json_object *o, const char *dotted, int32_t *out)
{
    json_object *v = jpath(o, dotted);
    if (!v || json_object_is_type(v, json_type_null))
        return 0;
    if (!json_object_is_type(v, json_type_int))
        return -1;
    int64_t x = json_object_get_int64(v);
    if (x < 0 || x > INT32_MAX)
        return -1;
    *out = (int32_t)x;
    return 1;
}

json_object *cu_ctrl_workload_for_job(json_object *job, cu_diag *d)
{
    const char *name = jstr(job, "metadata.name"), *ns = jstr(job, "metadata.namespace");
    const char *uid = jstr(job, "metadata.uid");
    if (!name || !ns || !uid) {
        cu_diag_error(d, "Job %s/%s: metadata: name, namespace and uid are required",
                      ns ? ns : "?", name ? name : "?");
        return NULL;
    }
    const char *queue = jmeta_kv(job, "labels", CU_LABEL_QUEUE_NAME);
    if (!queue || !*queue) {
        cu_diag_error(d, "Job %s/%s: metadata.labels: no " CU_LABEL_QUEUE_NAME " label", ns, name);
        return NULL;
    }
    json_object *tmpl = jpath(job, "spec.template");
    if (!json_object_is_type(tmpl, json_type_object)) {
        cu_diag_error(d, "Job %s/%s: spec.template: missing or not an object", ns, name);
        return NULL;
    }
    int32_t par = 1, comp = 0;
    int r1 = opt_count(job, "spec.parallelism", &par);
    int r2 = opt_count(job, "spec.completions", &comp);
    if (r1 < 0 || r2 < 0) {
        cu_diag_error(d, "Job %s/%s: %s: must be an integer >= 0", ns, name,
                      r1 < 0 ? "spec.parallelism" : "spec.completions");
        return NULL;
    }
    if (r2 == 0)
        comp = par;
    int32_t count = par < comp ? par : comp;

    cu_arena a;
    cu_arena_init(&a, 0);
    const char *wlname = cu_job_workload_name(&a, name, uid);
    if (!wlname) {
        cu_arena_free(&a);
        return NULL;
    }

    json_object *wl = json_object_new_object();
    json_object_object_add(wl, "apiVersion", json_object_new_string(CU_GROUP "/v1beta2"));
    json_object_object_add(wl, "kind", json_object_new_string("Workload"));
    json_object *md = json_object_new_object();
    json_object_object_add(wl, "metadata", md);
    json_object_object_add(md, "name", json_object_new_string(wlname));
    json_object_object_add(md, "namespace", json_object_new_string(ns));
    json_object *labels = json_object_new_object();
    json_object_object_add(labels, "kueue.x-k8s.io/job-uid", json_object_new_string(uid));
    json_object_object_add(md, "labels", labels);
    json_object *owners = json_object_new_array();
    json_object *own = json_object_new_object();
    json_object_object_add(own, "apiVersion", json_object_new_string("batch/v1"));
    json_object_object_add(own, "kind", json_object_new_string("Job"));
    json_object_object_add(own, "name", json_object_new_string(name));
    json_object_object_add(own, "uid", json_object_new_string(uid));
    json_object_object_add(own, "controller", json_object_new_boolean(1));
    json_object_object_add(own, "blockOwnerDeletion", json_object_new_boolean(1));
    json_object_array_add(owners, own);
    json_object_object_add(md, "ownerReferences", owners);
    cu_arena_free(&a);

    json_object *spec = json_object_new_object();
    json_object_object_add(wl, "spec", spec);
    json_object_object_add(spec, "queueName", json_object_new_string(queue));
    const char *wpc = jmeta_kv(job, "labels", CU_LABEL_PRIORITY_CLASS);
    const char *pcn = jstr(tmpl, "spec.priorityClassName");
    if ((wpc && *wpc) || (pcn && *pcn)) {
        json_object *ref = json_object_new_object();
        int kueue = wpc && *wpc;
        json_object_object_add(ref, "group",
                               json_object_new_string(kueue ? CU_GROUP : "scheduling.k8s.io"));
        json_object_object_add(ref, "kind", json_object_new_string(
                                                kueue ? "WorkloadPriorityClass" : "PriorityClass"));
        json_object_object_add(ref, "name", json_object_new_string(kueue ? wpc : pcn));
        json_object_object_add(spec, "priorityClassRef", ref);
    }
    json_object *podsets = json_object_new_array();
    json_object *ps = json_object_new_object();
    json_object_object_add(ps, "name", json_object_new_string("main"));
    json_object_object_add(ps, "count", json_object_new_int(count));
    const char *mp = jmeta_kv(job, "annotations", CU_ANN_JOB_MIN_PARALLELISM);
    if (mp) {
        char *end;
        long v = strtol(mp, &end, 10);
        if (end == mp || *end || v < 1 || v > count) {
            cu_diag_error(d, "Job %s/%s: metadata.annotations[" CU_ANN_JOB_MIN_PARALLELISM
                          "]: must be an integer between 1 and %d, got \"%s\"", ns, name,
                          (int)count, mp);
            json_object_put(ps);
            json_object_put(podsets);
            json_object_put(wl);
            return NULL;
        }
        json_object_object_add(ps, "minCount", json_object_new_int((int32_t)v));
    }
    json_object *t = NULL;
    if (json_object_deep_copy(tmpl, &t, NULL) != 0) {
        json_object_put(ps);
        json_object_put(podsets);
        json_object_put(wl);
        return NULL;
    }
    json_object_object_add(ps, "template", t);
    json_object_array_add(podsets, ps);
    json_object_object_add(spec, "podSets", podsets);
    return wl;
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
        const char *t = jstr(c, "type");
        if (t && strcmp(t, type) == 0) {
            prev = c;
            continue;
        }
        json_object_array_add(out, json_object_get(c));
    }
    json_object *c = json_object_new_object();
    json_object_object_add(c, "type", json_object_new_string(type));
    json_object_object_add(c, "status", json_object_new_string(status));
    const char *pst = jstr(prev, "status"), *pltt = jstr(prev, "lastTransitionTime");
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

json_object *cu_ctrl_job_start_patch(json_object *job, json_object *wl, json_object *flavors,
                                     cu_diag *d)
{
    const char *wlns = jstr(wl, "metadata.namespace"), *wlname = jstr(wl, "metadata.name");
    json_object *psas = jpath(wl, "status.admission.podSetAssignments");
    if (!json_object_is_type(psas, json_type_array) || json_object_array_length(psas) < 1) {
        cu_diag_error(d, "Workload %s/%s: status.admission.podSetAssignments: missing",
                      wlns ? wlns : "?", wlname ? wlname : "?");
        return NULL;
    }
    json_object *psa = json_object_array_get_idx(psas, 0);
    json_object *sel = json_object_new_object(), *tols = json_object_new_array();
    json_object *old_sel = jpath(job, "spec.template.spec.nodeSelector");
    if (json_object_is_type(old_sel, json_type_object)) {
        json_object_object_foreach(old_sel, k, v)
            json_object_object_add(sel, k, json_object_get(v));
    }
    json_object *old_tols = jpath(job, "spec.template.spec.tolerations");
    size_t ntol = json_object_is_type(old_tols, json_type_array) ? json_object_array_length(old_tols) : 0;
    for (size_t i = 0; i < ntol; i++)
        json_object_array_add(tols, json_object_get(json_object_array_get_idx(old_tols, i)));

    json_object *fmap = jpath(psa, "flavors");
    const char *seen[32];
    size_t nseen = 0;
    if (json_object_is_type(fmap, json_type_object)) {
        json_object_object_foreach(fmap, res, fv) {
            const char *fname = json_object_get_string(fv);
            int dup = 0;
            for (size_t i = 0; i < nseen; i++)
                dup |= strcmp(seen[i], fname) == 0;
            if (dup)
                continue;
            if (nseen < 32)
                seen[nseen++] = fname;
            json_object *rf = NULL;
            if (!json_object_object_get_ex(flavors, fname, &rf)) {
                cu_diag_error(d, "Workload %s/%s: status.admission.podSetAssignments[0].flavors[%s]: "
                              "ResourceFlavor \"%s\" not found", wlns, wlname, res, fname);
                json_object_put(sel);
                json_object_put(tols);
                return NULL;
            }
            json_object *nl = jpath(rf, "spec.nodeLabels");
            if (json_object_is_type(nl, json_type_object)) {
                json_object_object_foreach(nl, k, v)
                    json_object_object_add(sel, k, json_object_get(v));
            }
            json_object *ft = jpath(rf, "spec.tolerations");
            size_t nft = json_object_is_type(ft, json_type_array) ? json_object_array_length(ft) : 0;
            for (size_t i = 0; i < nft; i++)
                json_object_array_add(tols, json_object_get(json_object_array_get_idx(ft, i)));
        }
    }
    json_object *p = json_object_new_object();
    json_object *spec = json_object_new_object();
    json_object_object_add(p, "spec", spec);
    json_object_object_add(spec, "suspend", json_object_new_boolean(0));
    int32_t count = 0, par = 1, comp = 0;
    int hc = opt_count(job, "spec.completions", &comp);
    if (opt_count(job, "spec.parallelism", &par) >= 0 && hc <= 0)
        comp = par;
    /* partial admission: fewer pods than the Job asked for */
    if (opt_count(psa, "count", &count) == 1 && count > 0 && count < (par < comp ? par : comp))
        json_object_object_add(spec, "parallelism", json_object_new_int(count));
    json_object *tspec = json_object_new_object();
    json_object *tmpl = json_object_new_object();
    json_object_object_add(tmpl, "spec", tspec);
    json_object_object_add(spec, "template", tmpl);
    json_object_object_add(tspec, "nodeSelector", sel);
    if (json_object_array_length(tols) > 0)
        json_object_object_add(tspec, "tolerations", tols);
    else
        json_object_put(tols);
    return p;
}
