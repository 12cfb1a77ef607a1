/*
 * cu_jobbuild.c - request bodies of the suspend-based integrations (the
 * Workload for a Job or a JobSet, the patches that start them) and whether
 * a Job is finished. Pure functions: no I/O.
 */
#include "cu_ctrl_int.h"
#include "cu_jobset.h"
#include "cu_topology.h"

/* metadata.labels[key] / metadata.annotations[key] (keys contain dots) */
static const char *jmeta_kv(json_object *o, const char *field, const char *key)
{
    return cu_jstr(cu_jget(cu_jget(o, "metadata"), field), key);
}

int cu_ctrl_job_finished(json_object *job, int *failed)
{
    json_object *conds = cu_jpath(job, "status.conditions");
    size_t n = json_object_is_type(conds, json_type_array) ? json_object_array_length(conds) : 0;
    for (size_t i = 0; i < n; i++) {
        json_object *c = json_object_array_get_idx(conds, i);
        if (cu_job_cond_finished(cu_jstr(c, "type"), cu_jstr(c, "status"), failed))
            return 1;
    }
    return 0;
}

/* Reads an optional non-negative int32 field; returns 0 when absent, -1 when bad. */
static int opt_count(json_object *o, const char *dotted, int32_t *out)
{
    json_object *v = cu_jpath(o, dotted);
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

/* A new Workload wlname in ns owned by the object av/kind name/uid (its
 * job-uid label, a controller ownerReference) in queue; *spec_out borrows
 * its spec. */
static json_object *wl_skeleton(const char *ns, const char *wlname, const char *av,
                                const char *kind, const char *name, const char *uid,
                                const char *queue, json_object **spec_out)
{
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
    json_object_object_add(own, "apiVersion", json_object_new_string(av));
    json_object_object_add(own, "kind", json_object_new_string(kind));
    json_object_object_add(own, "name", json_object_new_string(name));
    json_object_object_add(own, "uid", json_object_new_string(uid));
    json_object_object_add(own, "controller", json_object_new_boolean(1));
    json_object_object_add(own, "blockOwnerDeletion", json_object_new_boolean(1));
    json_object_array_add(owners, own);
    json_object_object_add(md, "ownerReferences", owners);
    json_object *spec = json_object_new_object();
    json_object_object_add(wl, "spec", spec);
    json_object_object_add(spec, "queueName", json_object_new_string(queue));
    *spec_out = spec;
    return wl;
}

/* spec.priorityClassRef from the priority-class label wpc, else the pod
 * templates' priorityClassName pcn (cu_job_priority_ref). */
static void wl_priority(json_object *spec, const char *wpc, const char *pcn)
{
    const char *pcgroup, *pckind, *pcname;
    if (cu_job_priority_ref(wpc, pcn, &pcgroup, &pckind, &pcname)) {
        json_object *ref = json_object_new_object();
        json_object_object_add(ref, "group", json_object_new_string(pcgroup));
        json_object_object_add(ref, "kind", json_object_new_string(pckind));
        json_object_object_add(ref, "name", json_object_new_string(pcname));
        json_object_object_add(spec, "priorityClassRef", ref);
    }
}

json_object *cu_ctrl_workload_for_job(json_object *job, cu_diag *d)
{
    const char *name = cu_jpath_str(job, "metadata.name"),
               *ns = cu_jpath_str(job, "metadata.namespace");
    const char *uid = cu_jpath_str(job, "metadata.uid");
    if (!name || !ns || !uid) {
        cu_diag_error(d, "Job %s/%s: metadata: name, namespace and uid are required", ns ? ns : "?",
                      name ? name : "?");
        return NULL;
    }
    const char *queue = jmeta_kv(job, "labels", CU_LABEL_QUEUE_NAME);
    if (!queue || !*queue) {
        cu_diag_error(d, "Job %s/%s: metadata.labels: no " CU_LABEL_QUEUE_NAME " label", ns, name);
        return NULL;
    }
    json_object *tmpl = cu_jpath(job, "spec.template");
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
    int32_t count = cu_job_podset_count(r1 == 1, par, r2 == 1, comp);

    cu_arena a;
    cu_arena_init(&a, 0);
    const char *wlname = cu_job_workload_name(&a, name, uid);
    if (!wlname) {
        cu_arena_free(&a);
        return NULL;
    }

    json_object *spec, *wl = wl_skeleton(ns, wlname, "batch/v1", "Job", name, uid, queue, &spec);
    cu_arena_free(&a);
    wl_priority(spec, jmeta_kv(job, "labels", CU_LABEL_PRIORITY_CLASS),
                cu_jpath_str(tmpl, "spec.priorityClassName"));
    json_object *podsets = json_object_new_array();
    json_object *ps = json_object_new_object();
    json_object_object_add(ps, "name", json_object_new_string("main"));
    json_object_object_add(ps, "count", json_object_new_int(count));
    const char *mp = jmeta_kv(job, "annotations", CU_ANN_JOB_MIN_PARALLELISM);
    int32_t minc;
    if (mp) {
        if (!cu_job_min_count(mp, count, &minc)) {
            cu_diag_error(d,
                          "Job %s/%s: metadata.annotations[" CU_ANN_JOB_MIN_PARALLELISM
                          "]: " CU_JOB_MIN_PARALLELISM_MSG,
                          ns, name, (int)count, mp);
            json_object_put(ps);
            json_object_put(podsets);
            json_object_put(wl);
            return NULL;
        }
        json_object_object_add(ps, "minCount", json_object_new_int(minc));
    }
    json_object *t = NULL;
    if (json_object_deep_copy(tmpl, &t, NULL) != 0) {
        json_object_put(ps);
        json_object_put(podsets);
        json_object_put(wl);
        return NULL;
    }
    json_object_object_add(ps, "template", t);
    cu_topo_request_add(ps, tmpl, CU_LABEL_JOB_COMPLETION_INDEX, NULL, NULL);
    json_object_array_add(podsets, ps);
    json_object_object_add(spec, "podSets", podsets);
    return wl;
}

/* Sets every key of from (when an object) in to, sharing the values. */
static void merge_keys(json_object *to, json_object *from)
{
    if (json_object_is_type(from, json_type_object)) {
        json_object_object_foreach (from, k, v)
            json_object_object_add(to, k, json_object_get(v));
    }
}

/* Kueue's merge of a pod set update into a pod set's info: every key of
 * from (when an object) set in to, unless to has it with another value,
 * a conflict: then 0 and Kueue's message in d, naming what ("labels",
 * "annotations", "nodeSelector"), the key, to's value and from's. */
static int merge_keys_checked(json_object *to, json_object *from, const char *what, cu_diag *d)
{
    if (!json_object_is_type(from, json_type_object))
        return 1;
    json_object_object_foreach (from, k, v) {
        json_object *have = cu_jget(to, k);
        if (have && !json_object_equal(have, v)) {
            cu_diag_error(d,
                          "invalid admission check PodSetUpdate: conflict for %s: conflict for "
                          "key=%s, value1=%s, value2=%s",
                          what, k, json_object_get_string(have), json_object_get_string(v));
            return 0;
        }
    }
    merge_keys(to, from);
    return 1;
}

/* Appends every item of from (when an array) to the array to, shared. */
static void append_items(json_object *to, json_object *from)
{
    size_t n = json_object_is_type(from, json_type_array) ? json_object_array_length(from) : 0;
    for (size_t i = 0; i < n; i++)
        json_object_array_add(to, json_object_get(json_object_array_get_idx(from, i)));
}

json_object *cu_ctrl_podset_start(json_object *tmpl, json_object *wl, size_t idx,
                                  json_object *flavors, cu_diag *d, int *permanent)
{
    if (permanent)
        *permanent = 0;
    const char *wlns = cu_jpath_str(wl, "metadata.namespace"),
               *wlname = cu_jpath_str(wl, "metadata.name");
    json_object *psas = cu_jpath(wl, "status.admission.podSetAssignments");
    if (!json_object_is_type(psas, json_type_array) || json_object_array_length(psas) <= idx) {
        cu_diag_error(d, "Workload %s/%s: status.admission.podSetAssignments: missing",
                      wlns ? wlns : "?", wlname ? wlname : "?");
        return NULL;
    }
    json_object *psa = json_object_array_get_idx(psas, idx);
    /* as Kueue: the pod set's info from its flavors, the checks' updates
     * merged into it, then it merged into the template, a conflicting key
     * at either step being a permanent failure to start */
    json_object *sel = json_object_new_object(), *tols = json_object_new_array();

    json_object *fmap = cu_jget(psa, "flavors");
    const char *seen[32];
    size_t nseen = 0;
    if (json_object_is_type(fmap, json_type_object)) {
        json_object_object_foreach (fmap, res, fv) {
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
                cu_diag_error(
                    d,
                    "Workload %s/%s: status.admission.podSetAssignments[%zu].flavors[%s]: "
                    "ResourceFlavor \"%s\" not found",
                    wlns, wlname, idx, res, fname);
                json_object_put(sel);
                json_object_put(tols);
                return NULL;
            }
            merge_keys(sel, cu_jpath(rf, "spec.nodeLabels"));
            append_items(tols, cu_jpath(rf, "spec.tolerations"));
        }
    }
    /* the podSetUpdates of the admission checks for this pod set (Kueue
     * applies them with the flavors': additive only) */
    const char *psname = cu_jstr(psa, "name") ? cu_jstr(psa, "name") : "main";
    json_object *labels = json_object_new_object(), *anns = json_object_new_object();
    /* TAS (Kueue's pod set info of an assignment with a topology
     * assignment): the topology gate, the Workload annotation and the pod
     * set label, which the topology ungater finds the pods by, and the
     * unconstrained annotation when the pod set asked for no topology
     * (Kueue's implicit TAS), so that the pods count as TAS's */
    int tas = cu_jget(psa, "topologyAssignment") != NULL;
    if (tas) {
        json_object *rq = cu_jget(json_object_array_get_idx(cu_jpath(wl, "spec.podSets"), idx),
                                  "topologyRequest");
        if (!cu_jget(rq, "required") && !cu_jget(rq, "preferred") && !cu_jget(rq, "unconstrained"))
            cu_jset_str(anns, CU_ANN_TAS_UNCONSTRAINED, "true");
        cu_jset_str(anns, CU_ANN_TAS_WORKLOAD, wlname ? wlname : "");
        cu_jset_str(labels, CU_LABEL_PODSET, psname);
    }
    json_object *acs = cu_jpath(wl, "status.admissionChecks");
    int ok = 1;
    for (size_t i = 0, n = cu_jarr_len(acs); ok && i < n; i++) {
        json_object *ups = cu_jget(json_object_array_get_idx(acs, i), "podSetUpdates");
        for (size_t u = 0, nu = cu_jarr_len(ups); ok && u < nu; u++) {
            json_object *up = json_object_array_get_idx(ups, u);
            const char *un = cu_jstr(up, "name");
            if (!un || strcmp(un, psname) != 0)
                continue;
            ok = merge_keys_checked(anns, cu_jget(up, "annotations"), "annotations", d) &&
                 merge_keys_checked(labels, cu_jget(up, "labels"), "labels", d) &&
                 merge_keys_checked(sel, cu_jget(up, "nodeSelector"), "nodeSelector", d);
            append_items(tols, cu_jget(up, "tolerations"));
        }
    }
    /* the template's own keys, with the info's merged in */
    json_object *tsel = json_object_new_object(), *tlab = json_object_new_object(),
                *tann = json_object_new_object(), *ttols = json_object_new_array();
    merge_keys(tsel, cu_jpath(tmpl, "spec.nodeSelector"));
    merge_keys(tlab, cu_jpath(tmpl, "metadata.labels"));
    merge_keys(tann, cu_jpath(tmpl, "metadata.annotations"));
    append_items(ttols, cu_jpath(tmpl, "spec.tolerations"));
    ok = ok && merge_keys_checked(tann, anns, "annotations", d) &&
         merge_keys_checked(tlab, labels, "labels", d) &&
         merge_keys_checked(tsel, sel, "nodeSelector", d);
    append_items(ttols, tols);
    json_object_put(sel);
    json_object_put(tols);
    json_object_put(tlab);
    json_object_put(tann);
    sel = tsel;
    tols = ttols;
    if (!ok) {
        if (permanent)
            *permanent = 1;
        json_object_put(sel);
        json_object_put(tols);
        json_object_put(labels);
        json_object_put(anns);
        return NULL;
    }
    json_object *tspec = json_object_new_object();
    json_object *tp = json_object_new_object();
    json_object_object_add(tp, "spec", tspec);
    json_object_object_add(tspec, "nodeSelector", sel);
    if (tas) { /* the template's gates and the topology gate */
        json_object *gates = json_object_new_array(), *tg = cu_jpath(tmpl, "spec.schedulingGates");
        int have = 0;
        for (size_t i = 0, n = cu_jarr_len(tg); i < n; i++) {
            json_object *g = json_object_array_get_idx(tg, i);
            const char *gn = cu_jstr(g, "name");
            have |= gn && strcmp(gn, CU_TAS_GATE) == 0;
            json_object_array_add(gates, json_object_get(g));
        }
        if (!have) {
            json_object *g = json_object_new_object();
            cu_jset_str(g, "name", CU_TAS_GATE);
            json_object_array_add(gates, g);
        }
        json_object_object_add(tspec, "schedulingGates", gates);
    }
    if (json_object_array_length(tols) > 0)
        json_object_object_add(tspec, "tolerations", tols);
    else
        json_object_put(tols);
    if (json_object_object_length(labels) || json_object_object_length(anns)) {
        json_object *md = json_object_new_object();
        if (json_object_object_length(labels))
            json_object_object_add(md, "labels", json_object_get(labels));
        if (json_object_object_length(anns))
            json_object_object_add(md, "annotations", json_object_get(anns));
        json_object_object_add(tp, "metadata", md);
    }
    json_object_put(labels);
    json_object_put(anns);
    return tp;
}

json_object *cu_ctrl_job_start_patch(json_object *job, json_object *wl, json_object *flavors,
                                     cu_diag *d, int *permanent)
{
    json_object *tp =
        cu_ctrl_podset_start(cu_jpath(job, "spec.template"), wl, 0, flavors, d, permanent);
    if (!tp)
        return NULL;
    json_object *psa =
        json_object_array_get_idx(cu_jpath(wl, "status.admission.podSetAssignments"), 0);
    json_object *p = json_object_new_object();
    json_object *spec = json_object_new_object();
    json_object_object_add(p, "spec", spec);
    json_object_object_add(spec, "suspend", json_object_new_boolean(0));
    int32_t count = 0, par = 1, comp = 0;
    int hc = opt_count(job, "spec.completions", &comp);
    int hp = opt_count(job, "spec.parallelism", &par);
    /* partial admission: fewer pods than the Job asked for */
    if (opt_count(psa, "count", &count) == 1 && count > 0 &&
        count < cu_job_podset_count(hp == 1, par, hc == 1, comp))
        json_object_object_add(spec, "parallelism", json_object_new_int(count));
    json_object_object_add(spec, "template", tp);
    return p;
}

/* ---------------- JobSet ---------------- */

json_object *cu_ctrl_workload_for_jobset(json_object *js, cu_diag *d)
{
    const char *name = cu_jpath_str(js, "metadata.name"),
               *ns = cu_jpath_str(js, "metadata.namespace");
    const char *uid = cu_jpath_str(js, "metadata.uid");
    if (!name || !ns || !uid) {
        cu_diag_error(d, "JobSet %s/%s: metadata: name, namespace and uid are required",
                      ns ? ns : "?", name ? name : "?");
        return NULL;
    }
    const char *queue = jmeta_kv(js, "labels", CU_LABEL_QUEUE_NAME);
    if (!queue || !*queue) {
        cu_diag_error(d, "JobSet %s/%s: metadata.labels: no " CU_LABEL_QUEUE_NAME " label", ns,
                      name);
        return NULL;
    }
    json_object *rjs = cu_jpath(js, "spec.replicatedJobs");
    size_t n = cu_jarr_len(rjs);
    if (!json_object_is_type(rjs, json_type_array) || n == 0) {
        cu_diag_error(d, "JobSet %s/%s: spec.replicatedJobs: missing or empty", ns, name);
        return NULL;
    }
    json_object *podsets = json_object_new_array();
    const char *pcn = NULL;
    for (size_t i = 0; i < n; i++) {
        json_object *rj = json_object_array_get_idx(rjs, i);
        const char *rname = cu_jstr(rj, "name");
        json_object *tmpl = cu_jpath(rj, "template.spec.template");
        int32_t replicas = 1, par = 1, comp = 0;
        int rr = opt_count(rj, "replicas", &replicas);
        int rp = opt_count(rj, "template.spec.parallelism", &par);
        int rc = opt_count(rj, "template.spec.completions", &comp);
        const char *bad = !rname || !*rname ? "name: missing"
                          : !json_object_is_type(tmpl, json_type_object)
                              ? "template.spec.template: missing or not an object"
                          : rr < 0 ? "replicas: must be an integer >= 0"
                          : rp < 0 ? "template.spec.parallelism: must be an integer >= 0"
                          : rc < 0 ? "template.spec.completions: must be an integer >= 0"
                                   : NULL;
        int32_t count = bad ? 0 : cu_jobset_podset_count(replicas, rp == 1, par, rc == 1, comp);
        if (!bad && count < 0)
            bad = "replicas: replicas times the pods of a Job is too large";
        if (bad) {
            cu_diag_error(d, "JobSet %s/%s: spec.replicatedJobs[%zu].%s", ns, name, i, bad);
            json_object_put(podsets);
            return NULL;
        }
        if (!pcn) {
            const char *p = cu_jpath_str(tmpl, "spec.priorityClassName");
            pcn = p && *p ? p : NULL;
        }
        json_object *ps = json_object_new_object(), *t = NULL;
        json_object_object_add(ps, "name", json_object_new_string(rname));
        json_object_object_add(ps, "count", json_object_new_int(count));
        if (json_object_deep_copy(tmpl, &t, NULL) != 0) {
            json_object_put(ps);
            json_object_put(podsets);
            return NULL;
        }
        json_object_object_add(ps, "template", t);
        cu_topo_request_add(ps, tmpl, CU_LABEL_JOB_COMPLETION_INDEX, CU_LABEL_JOBSET_JOB_INDEX,
                            &replicas);
        json_object_array_add(podsets, ps);
    }
    cu_arena a;
    cu_arena_init(&a, 0);
    const char *wlname = cu_jobset_workload_name(&a, name, uid);
    if (!wlname) {
        cu_arena_free(&a);
        json_object_put(podsets);
        return NULL;
    }
    json_object *spec,
        *wl = wl_skeleton(ns, wlname, CU_JOBSET_API_VERSION, "JobSet", name, uid, queue, &spec);
    cu_arena_free(&a);
    wl_priority(spec, jmeta_kv(js, "labels", CU_LABEL_PRIORITY_CLASS), pcn);
    json_object_object_add(spec, "podSets", podsets);
    return wl;
}

/* RFC 7386: merge patch p applied to the object t (in place; p's values
 * shared). */
static void merge_apply(json_object *t, json_object *p)
{
    json_object_object_foreach (p, k, v) {
        json_object *have = cu_jget(t, k);
        if (!v)
            json_object_object_del(t, k);
        else if (json_object_is_type(v, json_type_object) &&
                 json_object_is_type(have, json_type_object))
            merge_apply(have, v);
        else if (json_object_is_type(v, json_type_object)) {
            json_object *o = json_object_new_object();
            merge_apply(o, v);
            json_object_object_add(t, k, o);
        } else
            json_object_object_add(t, k, json_object_get(v));
    }
}

json_object *cu_ctrl_jobset_templates_patch(json_object *rjobs, json_object *const *tp, size_t n,
                                            const char *rv)
{
    json_object *arr = NULL;
    if (!json_object_is_type(rjobs, json_type_array) || json_object_deep_copy(rjobs, &arr, NULL))
        return NULL;
    for (size_t i = 0; i < n && i < json_object_array_length(arr); i++) {
        if (!tp[i])
            continue;
        json_object *js =
            cu_jchild(cu_jchild(json_object_array_get_idx(arr, i), "template"), "spec");
        json_object *t = cu_jchild(js, "template");
        if (t)
            merge_apply(t, tp[i]);
    }
    json_object *p = json_object_new_object(), *spec = json_object_new_object();
    if (rv) {
        json_object *md = json_object_new_object();
        json_object_object_add(md, "resourceVersion", json_object_new_string(rv));
        json_object_object_add(p, "metadata", md);
    }
    json_object_object_add(p, "spec", spec);
    json_object_object_add(spec, "replicatedJobs", arr);
    return p;
}

json_object *cu_ctrl_jobset_start_patch(json_object *rjobs, json_object *tmpls, json_object *wl,
                                        json_object *flavors, const char *rv, cu_diag *d,
                                        int *permanent)
{
    if (permanent)
        *permanent = 0;
    size_t n = cu_jarr_len(rjobs),
           npsa = cu_jarr_len(cu_jpath(wl, "status.admission.podSetAssignments"));
    if (n != npsa) {
        /* Kueue's BadPodSetsInfoLenError */
        cu_diag_error(d, "invalid podSetsInfo length: expecting %zu podsets, got %zu", n, npsa);
        return NULL;
    }
    json_object **tp = calloc(n ? n : 1, sizeof(*tp));
    if (!tp)
        return NULL;
    json_object *p = NULL;
    size_t i;
    for (i = 0; i < n; i++) {
        /* the pod set's template as the Workload has it (what a stop
         * restores), else the replicated Job's */
        json_object *ti = i < cu_jarr_len(tmpls) ? json_object_array_get_idx(tmpls, i) : NULL;
        json_object *t =
            ti ? ti : cu_jpath(json_object_array_get_idx(rjobs, i), "template.spec.template");
        tp[i] = cu_ctrl_podset_start(t, wl, i, flavors, d, permanent);
        if (!tp[i])
            break;
    }
    if (i == n) {
        p = cu_ctrl_jobset_templates_patch(rjobs, tp, n, rv);
        if (p)
            json_object_object_add(cu_jget(p, "spec"), "suspend", json_object_new_boolean(0));
    }
    for (size_t k = 0; k < n; k++)
        json_object_put(tp[k]);
    free(tp);
    return p;
}
