/*
 * cu_ksutil.c - what the parts of the simulated cluster share (ks_int.h):
 * quantities in JSON, store access, conditions, finalizers.
 */
#include "ks_int.h"

/* A quantity given as a JSON string or number; 0 on success. */
int ks_qty_json(json_object *v, int64_t *milli)
{
    char buf[64];
    const char *s;
    if (!v)
        return -1;
    switch (json_object_get_type(v)) {
    case json_type_string: s = json_object_get_string(v); break;
    case json_type_int:
        snprintf(buf, sizeof buf, "%" PRId64, json_object_get_int64(v));
        s = buf;
        break;
    case json_type_double:
        snprintf(buf, sizeof buf, "%.15g", json_object_get_double(v));
        s = buf;
        break;
    default: return -1;
    }
    return cu_qty_parse(s, milli, NULL) == CU_OK ? 0 : -1;
}

int ks_phase_terminal(json_object *pod)
{
    const char *ph = cu_jpath_str(pod, "status.phase");
    return str_eq(ph, "Succeeded") || str_eq(ph, "Failed");
}

int ks_types_get(cu_store *s, ks_types *t)
{
    t->pods = cu_store_rtype(s, "", "v1", "pods");
    t->nodes = cu_store_rtype(s, "", "v1", "nodes");
    t->events = cu_store_rtype(s, "", "v1", "events");
    t->jobs = cu_store_rtype(s, "batch", "v1", "jobs");
    t->pcs = cu_store_rtype(s, "scheduling.k8s.io", "v1", "priorityclasses");
    return t->pods && t->nodes && t->events && t->jobs ? 0 : -1;
}

/* LIST (all namespaces when ns is NULL); a new reference or NULL. */
json_object *ks_list(cu_store *s, const cu_rtype *rt, const char *ns, const char *lsel)
{
    cu_list_opts o;
    cu_status st;
    json_object *out = NULL;
    memset(&o, 0, sizeof o);
    o.label_selector = lsel;
    if (!rt || cu_store_list(s, rt, ns, &o, &out, &st) != CU_OK)
        return NULL;
    return out;
}

const char *ks_ns_of(json_object *o) { return cu_jpath_str(o, "metadata.namespace"); }
const char *ks_name_of(json_object *o) { return cu_jpath_str(o, "metadata.name"); }
const char *ks_uid_of(json_object *o) { return cu_jpath_str(o, "metadata.uid"); }

/* PUT of obj (taken) to the main resource or "status"; 1 when written. */
int ks_put(cu_store *s, const cu_rtype *rt, json_object *obj, const char *sub, json_object **out)
{
    cu_status st;
    json_object *o = NULL;
    char ns[256], name[256];
    snprintf(ns, sizeof ns, "%s", ks_ns_of(obj) ? ks_ns_of(obj) : "");
    snprintf(name, sizeof name, "%s", ks_name_of(obj) ? ks_name_of(obj) : "");
    cu_err e = cu_store_update(s, rt, rt->namespaced ? ns : NULL, name, sub, obj, &o, &st);
    if (e != CU_OK) {
        if (out)
            *out = NULL;
        return 0;
    }
    if (out)
        *out = o;
    else if (o)
        json_object_put(o);
    return 1;
}

/* Sets (or, NULL, removes) a condition's reason and message. */
static void cond_text(json_object *c, const char *reason, const char *message)
{
    if (reason)
        cu_jset_str(c, "reason", reason);
    else
        json_object_object_del(c, "reason");
    if (message)
        cu_jset_str(c, "message", message);
    else
        json_object_object_del(c, "message");
}

/* Sets a condition of status.conditions. job: Job-style condition (with
 * lastProbeTime; a change of reason alone is not a change, as
 * ensureJobConditionStatus). Returns 1 when something changed. */
int ks_cond_set(json_object *status, const char *type, const char *cstatus, const char *reason,
                const char *message, const char *now, int job)
{
    json_object *conds = cu_jget(status, "conditions"), *c = NULL;
    if (!conds || !json_object_is_type(conds, json_type_array)) {
        conds = json_object_new_array();
        json_object_object_add(status, "conditions", conds);
    }
    for (size_t i = 0; i < cu_jarr_len(conds); i++)
        if (str_eq(cu_jstr(jidx(conds, i), "type"), type))
            c = jidx(conds, i);
    if (c && str_eq(cu_jstr(c, "status"), cstatus)) {
        if (job)
            return 0;
        if (str_eq(cu_jstr(c, "reason"), reason ? reason : "") &&
            str_eq(cu_jstr(c, "message"), message ? message : ""))
            return 0;
        cond_text(c, reason, message);
        return 1;
    }
    if (!c) {
        c = json_object_new_object();
        json_object_array_add(conds, c);
        cu_jset_str(c, "type", type);
    }
    cu_jset_str(c, "status", cstatus);
    cond_text(c, reason, message);
    if (job)
        cu_jset_str(c, "lastProbeTime", now);
    else
        json_object_object_add(c, "lastProbeTime", NULL);
    cu_jset_str(c, "lastTransitionTime", now);
    return 1;
}

json_object *ks_cond_get(json_object *obj, const char *type)
{
    json_object *conds = cu_jpath(obj, "status.conditions");
    for (size_t i = 0; i < cu_jarr_len(conds); i++)
        if (str_eq(cu_jstr(jidx(conds, i), "type"), type))
            return jidx(conds, i);
    return NULL;
}

int ks_cond_true(json_object *obj, const char *type)
{
    return str_eq(cu_jstr(ks_cond_get(obj, type), "status"), "True");
}

int ks_has_finalizer(json_object *obj, const char *f)
{
    json_object *fs = cu_jpath(obj, "metadata.finalizers");
    for (size_t i = 0; i < cu_jarr_len(fs); i++)
        if (str_eq(cu_jas_str(jidx(fs, i)), f))
            return 1;
    return 0;
}

/* Removes the Job tracking finalizer from pod (borrowed). 1 when written. */
int ks_pod_drop_finalizer(cu_store *s, const cu_rtype *pods, json_object *pod)
{
    json_object *copy, *md, *fs, *nf;
    if (!ks_has_finalizer(pod, KS_TRACKING_FINALIZER))
        return 0;
    copy = cu_jcopy(pod);
    if (!copy)
        return 0;
    md = cu_jget(copy, "metadata");
    fs = cu_jget(md, "finalizers");
    nf = json_object_new_array();
    for (size_t i = 0; i < cu_jarr_len(fs); i++)
        if (!str_eq(cu_jas_str(jidx(fs, i)), KS_TRACKING_FINALIZER))
            json_object_array_add(nf, json_object_get(jidx(fs, i)));
    if (cu_jarr_len(nf))
        json_object_object_add(md, "finalizers", nf);
    else {
        json_object_put(nf);
        json_object_object_del(md, "finalizers");
    }
    return ks_put(s, pods, copy, NULL, NULL);
}

int ks_pod_delete(cu_store *s, const cu_rtype *pods, json_object *pod)
{
    cu_status st;
    json_object *out = NULL;
    int w = ks_pod_drop_finalizer(s, pods, pod);
    if (cu_store_delete(s, pods, ks_ns_of(pod), ks_name_of(pod), "Background", NULL, &out, &st) ==
        CU_OK)
        w++;
    if (out)
        json_object_put(out);
    return w;
}

const char *ks_pod_qos(json_object *spec)
{
    json_object *cs = cu_jget(spec, "containers");
    int any = 0, guaranteed = cu_jarr_len(cs) > 0;
    const char *res[2] = { "cpu", "memory" };
    for (size_t i = 0; i < cu_jarr_len(cs); i++) {
        json_object *r = cu_jget(jidx(cs, i), "resources");
        for (int k = 0; k < 2; k++) {
            json_object *rq = cu_jget(cu_jget(r, "requests"), res[k]);
            json_object *lm = cu_jget(cu_jget(r, "limits"), res[k]);
            int64_t a = 0, b = 0;
            if (rq || lm)
                any = 1;
            if (!lm) {
                guaranteed = 0;
            } else if (rq && (ks_qty_json(rq, &a) != 0 || ks_qty_json(lm, &b) != 0 || a != b)) {
                guaranteed = 0;
            }
        }
    }
    if (!any)
        return "BestEffort";
    return guaranteed ? "Guaranteed" : "Burstable";
}
