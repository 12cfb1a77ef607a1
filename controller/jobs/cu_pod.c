/*
 * cu_pod.c - the Pod integration (Kueue's "pod" framework): plain pods
 * and pod groups that the pod webhook marked managed (the
 * kueue.x-k8s.io/managed label, the kueue.x-k8s.io/admission scheduling
 * gate, the kueue.x-k8s.io/managed finalizer). A unit is a single pod
 * (reconciled by its key "ns/name") or a pod group (its key
 * "g:ns/group-name", a record in c->units[R_POD] listing its pods). Its
 * Workload (the shapes in api/cu_pod.c) is created once the group is
 * complete; admitted, every gated pod is ungated with its pod set's flavor
 * nodeSelector and tolerations; evicted, its running pods are deleted and
 * the quota released once they are gone; finished, the Workload is marked
 * Finished and the pods' finalizers are removed.
 */
#include "cu_ctrl_int.h"
#include "cu_pod.h"
#include "cu_topology.h"

#define POD_TAG 0x706f64   /* ij of a pod's record: a cpod */
#define GROUP_TAG 0x677270 /* ij of a group's record in units: a pgroup */

/* What the controller keeps of a managed pod. */
typedef struct cpod {
    int tag;
    json_object *obj; /* the pod as last seen (a reference) */
    char *group;      /* the pod-group-name label, NULL: a single pod */
    char *unit;       /* the key its unit is reconciled by */
    char *wlkey;      /* ns/name of its Workload */
    char *prebuilt;   /* the prebuilt-workload-name label, NULL */
    char role[CU_POD_ROLE_MAX + 1];
    int32_t total; /* pod-group-total-count, 0 when absent or invalid */
    const char *queue;
    int gated, has_fin, deleting, succeeded, failed, runnable, unretriable, serving;
    int ready; /* condition Ready is True */
} cpod;

/* A pod group: its pods' records (borrowed from objs[R_POD]). */
typedef struct pgroup {
    int tag;
    rec **m;
    size_t n, cap;
    size_t said; /* hash of the composition problem said last */
} pgroup;

static cpod *pod_of(const rec *x)
{
    const cpod *p = x ? x->ij : NULL;
    return p && p->tag == POD_TAG ? x->ij : NULL;
}

static pgroup *group_of(const rec *u)
{
    const pgroup *g = u ? u->ij : NULL;
    return g && g->tag == GROUP_TAG ? u->ij : NULL;
}

static void pod_free_data(rec *x)
{
    cpod *p = pod_of(x);
    pgroup *g = group_of(x);
    if (p) {
        json_object_put(p->obj);
        free(p->group);
        free(p->unit);
        free(p->wlkey);
        free(p->prebuilt);
        free(p);
    } else if (g) {
        free(g->m);
        free(g);
    }
    x->ij = NULL;
}

/* The record of key in c->units[R_POD], created (with ij g when given)
 * when absent and make is set. */
static rec *unit_rec(ctrl *c, const char *key, int make)
{
    rec *u = ctrl_omap_get(&c->units[R_POD], key);
    if (u || !make)
        return u;
    u = calloc(1, sizeof(*u));
    if (!u || !(u->key = strdup(key)) || ctrl_omap_add(&c->units[R_POD], u) != 0) {
        if (u)
            free(u->key);
        free(u);
        return NULL;
    }
    u->r = R_POD;
    u->idx = -1;
    return u;
}

static void group_remove(ctrl *c, const char *gkey, rec *x)
{
    rec *u = ctrl_omap_get(&c->units[R_POD], gkey);
    pgroup *g = group_of(u);
    if (!g)
        return;
    for (size_t i = 0; i < g->n; i++)
        if (g->m[i] == x) {
            g->m[i] = g->m[--g->n];
            break;
        }
    if (!g->n)
        ctrl_rec_free(ctrl_omap_del(&c->units[R_POD], gkey));
}

static void group_add(ctrl *c, const char *gkey, rec *x)
{
    rec *u = unit_rec(c, gkey, 1);
    if (!u)
        return;
    pgroup *g = group_of(u);
    if (!g) {
        g = calloc(1, sizeof(*g));
        if (!g)
            return;
        g->tag = GROUP_TAG;
        u->ij = g;
    }
    for (size_t i = 0; i < g->n; i++)
        if (g->m[i] == x)
            return;
    if (g->n == g->cap) {
        size_t cap = g->cap ? 2 * g->cap : 8;
        rec **m = realloc(g->m, cap * sizeof(*m));
        if (!m)
            return;
        g->m = m;
        g->cap = cap;
    }
    g->m[g->n++] = x;
}

/* Notes that Workload wlkey belongs to the unit ukey (for wl_changed). */
static void note_wl(ctrl *c, const char *wlkey, const char *ukey)
{
    char k[700];
    snprintf(k, sizeof(k), "w:%s", wlkey);
    rec *u = unit_rec(c, k, 1);
    if (u && (!u->owner || strcmp(u->owner, ukey) != 0)) {
        free(u->owner);
        u->owner = ctrl_sdup(ukey);
    }
}

static int has_str(json_object *arr, const char *s)
{
    for (size_t i = 0, n = cu_jarr_len(arr); i < n; i++) {
        const char *v = cu_jas_str(json_object_array_get_idx(arr, i));
        if (v && strcmp(v, s) == 0)
            return 1;
    }
    return 0;
}

static cpod *decode_pod(json_object *obj)
{
    const char *ns = cu_jpath_str(obj, "metadata.namespace"),
               *name = cu_jpath_str(obj, "metadata.name");
    const char *uid = cu_jpath_str(obj, "metadata.uid");
    if (!ns || !name || !uid)
        return NULL;
    cpod *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->tag = POD_TAG;
    p->obj = json_object_get(obj);
    json_object *labels = cu_jpath(obj, "metadata.labels");
    json_object *anns = cu_jpath(obj, "metadata.annotations");
    const char *grp = cu_jstr(labels, CU_LABEL_POD_GROUP_NAME);
    p->group = grp && *grp ? strdup(grp) : NULL;
    const char *pb = cu_jstr(labels, CU_LABEL_PREBUILT_WORKLOAD);
    p->prebuilt = pb && *pb ? strdup(pb) : NULL;
    p->queue = cu_jstr(labels, CU_LABEL_QUEUE_NAME);
    if (!cu_pod_group_total(cu_jstr(anns, CU_ANN_POD_GROUP_TOTAL_COUNT), &p->total))
        p->total = 0;
    const char *rt = cu_jstr(anns, CU_ANN_POD_RETRIABLE_IN_GROUP);
    p->unretriable = rt && strcmp(rt, "false") == 0;
    const char *sv = cu_jstr(anns, CU_ANN_POD_GROUP_SERVING);
    p->serving = p->group && sv && strcmp(sv, "true") == 0;
    json_object *gates = cu_jpath(obj, "spec.schedulingGates");
    for (size_t i = 0, n = cu_jarr_len(gates); i < n; i++) {
        const char *gn = cu_jstr(json_object_array_get_idx(gates, i), "name");
        p->gated |= gn && strcmp(gn, CU_POD_SCHEDULING_GATE) == 0;
    }
    p->has_fin = has_str(cu_jpath(obj, "metadata.finalizers"), CU_FINALIZER_MANAGED);
    p->deleting = cu_jpath(obj, "metadata.deletionTimestamp") != NULL;
    const char *ph = cu_jpath_str(obj, "status.phase");
    p->succeeded = ph && strcmp(ph, "Succeeded") == 0;
    p->failed = ph && strcmp(ph, "Failed") == 0;
    p->runnable = cu_pod_runnable(obj);
    const char *rs = ctrl_cond_status(obj, "Ready");
    p->ready = rs && strcmp(rs, "True") == 0;
    if (cu_pod_role(obj, p->role) != 0)
        p->role[0] = '\0';
    char k[700];
    if (p->group) {
        snprintf(k, sizeof(k), "g:%s/%s", ns, p->group);
        p->unit = strdup(k);
    } else {
        snprintf(k, sizeof(k), "%s/%s", ns, name);
        p->unit = strdup(k);
    }
    if (p->prebuilt) {
        snprintf(k, sizeof(k), "%s/%s", ns, p->prebuilt);
    } else if (p->group) {
        snprintf(k, sizeof(k), "%s/%s", ns, p->group);
    } else {
        cu_arena a;
        cu_arena_init(&a, 512);
        const char *wn = cu_pod_workload_name(&a, name, uid);
        snprintf(k, sizeof(k), "%s/%s", ns, wn ? wn : "");
        cu_arena_free(&a);
    }
    p->wlkey = strdup(k);
    return p;
}

/* ---------------- writes about pods ---------------- */

static void pod_path(const rec *x, char *out, size_t n) { ctrl_obj_path(R_POD, x->key, out, n); }

/* Sends the merge patch p (taken) to pod x, based on the version seen. */
static int pod_patch(ctrl *c, rec *x, json_object *p, const char *what)
{
    char op[700], path[1200];
    snprintf(op, sizeof(op), "pod:%s", x->key);
    pod_path(x, path, sizeof(path));
    json_object *md = cu_jchild(p, "metadata");
    if (md && x->rv)
        cu_jset_str(md, "resourceVersion", x->rv);
    return ctrl_send_write(c, OP_JOB, R_POD, op, x->key, "PATCH", path, MERGE, p, what);
}

/* Takes the kueue.x-k8s.io/managed finalizer off pod x. */
static int pod_unfinalize(ctrl *c, rec *x)
{
    cpod *p = pod_of(x);
    if (!p || !p->has_fin)
        return 0;
    json_object *fins = cu_jpath(p->obj, "metadata.finalizers"), *keep = json_object_new_array();
    for (size_t i = 0, n = cu_jarr_len(fins); i < n; i++) {
        json_object *v = json_object_array_get_idx(fins, i);
        const char *s = cu_jas_str(v);
        if (!s || strcmp(s, CU_FINALIZER_MANAGED) != 0)
            json_object_array_add(keep, json_object_get(v));
    }
    json_object *patch = json_object_new_object(), *md = cu_jchild(patch, "metadata");
    if (json_object_array_length(keep))
        json_object_object_add(md, "finalizers", keep);
    else {
        json_object_put(keep);
        json_object_object_add(md, "finalizers", NULL);
    }
    char what[900];
    snprintf(what, sizeof(what), "removing the finalizer of Pod %s", x->key);
    int sent = pod_patch(c, x, patch, what);
    if (sent)
        ctrl_log(c, 2, "Pod %s: finalizer " CU_FINALIZER_MANAGED " removed", x->key);
    return sent;
}

/* Deletes pod x (a stop, or an excess pod); reason/msg: the Event on it,
 * NULL for none. */
static int pod_delete(ctrl *c, rec *x, const char *reason, const char *msg)
{
    char op[700], path[1200], what[900];
    snprintf(op, sizeof(op), "pod:%s", x->key);
    pod_path(x, path, sizeof(path));
    snprintf(what, sizeof(what), "deleting Pod %s", x->key);
    if (!ctrl_send_write(c, OP_JOB, R_POD, op, x->key, "DELETE", path, NULL, NULL, what))
        return 0;
    if (reason)
        ctrl_emit_owner(c, x, "Normal", reason, msg);
    return 1;
}

/* The pod set assignment of Workload wl for role (its pod set's name; a
 * Workload of one pod set takes every pod), or -1. */
static int psa_of(const cu_workload *wl, const char *role)
{
    for (size_t i = 0; i < wl->npsa; i++)
        if (wl->psa[i].name && strcmp(wl->psa[i].name, role) == 0)
            return (int)i;
    return wl->npsa == 1 ? 0 : -1;
}

/* The patch that ungates pod x as admitted in w (its pod set's flavors'
 * nodeSelector and tolerations, its admission checks' podSetUpdates, the
 * gate removed), or NULL with the problem in d. */
static json_object *ungate_patch(ctrl *c, rec *x, rec *w, cu_diag *d, int *permanent)
{
    cpod *p = pod_of(x);
    const cu_workload *wl = ctrl_wl_of(w);
    int i = psa_of(wl, p->role);
    if (i < 0) {
        /* not one of the Workload's shapes: left gated (not a reason to
         * fail the others) */
        cu_diag_error(d, "Workload %s has no pod set named %s (the pod's role)", w->key, p->role);
        return NULL;
    }
    json_object *job = json_object_new_object(),
                *tmpl = cu_jchild(cu_jchild(job, "spec"), "template");
    json_object_object_add(tmpl, "spec", json_object_get(cu_jget(p->obj, "spec")));
    json_object *tmd = cu_jchild(tmpl, "metadata");
    json_object_object_add(tmd, "labels", json_object_get(cu_jpath(p->obj, "metadata.labels")));
    json_object_object_add(tmd, "annotations",
                           json_object_get(cu_jpath(p->obj, "metadata.annotations")));
    json_object *wj = json_object_new_object(), *md = cu_jchild(wj, "metadata");
    cu_jset_str(md, "namespace", wl->meta.ns);
    cu_jset_str(md, "name", wl->meta.name);
    json_object *st = cu_jchild(wj, "status"), *adm = cu_jchild(st, "admission");
    json_object *psas = json_object_new_array(), *o = json_object_new_object();
    json_object *fl = cu_jchild(o, "flavors"), *flavors = json_object_new_object();
    cu_jset_str(o, "name", wl->psa[i].name);
    cu_jset_int(o, "count", wl->psa[i].count);
    if (wl->psa[i].topo) { /* TAS: the start marks the pod (labels, annotations) */
        json_object_object_add(o, "topologyAssignment", cu_topo_assign_json(wl->psa[i].topo));
        json_object *wps = json_object_new_array(), *ps = json_object_new_object();
        for (size_t k = 0; k < wl->npodsets; k++) {
            json_object *rq = wl->podsets[k].name && wl->psa[i].name &&
                                      !strcmp(wl->podsets[k].name, wl->psa[i].name)
                                  ? cu_topo_request_json(&wl->podsets[k].topo)
                                  : NULL;
            if (rq)
                json_object_object_add(ps, "topologyRequest", rq);
        }
        json_object_array_add(wps, ps);
        json_object_object_add(cu_jchild(wj, "spec"), "podSets", wps);
    }
    for (size_t k = 0; k < wl->psa[i].flavors.n; k++) {
        const char *fn = wl->psa[i].flavors.items[k].value;
        cu_jset_str(fl, wl->psa[i].flavors.items[k].key, fn);
        rec *rf = ctrl_omap_get(&c->objs[R_RF], fn);
        if (rf && !cu_jget(flavors, fn)) {
            json_object *sp = rf->rf_spec ? cu_json_parse_str(rf->rf_spec) : NULL;
            json_object *fo = json_object_new_object();
            json_object_object_add(fo, "spec", sp ? sp : json_object_new_object());
            json_object_object_add(flavors, fn, fo);
        }
    }
    json_object_array_add(psas, o);
    json_object_object_add(adm, "podSetAssignments", psas);
    json_object *acs = w->acs ? cu_json_parse_str(w->acs) : NULL;
    if (acs)
        json_object_object_add(st, "admissionChecks", acs);
    json_object *jp = cu_ctrl_job_start_patch(job, wj, flavors, d, permanent);
    json_object_put(job);
    json_object_put(wj);
    json_object_put(flavors);
    if (!jp)
        return NULL;
    /* the Job's template patch, applied to the pod itself */
    json_object *t = cu_jpath(jp, "spec.template");
    json_object *patch = json_object_new_object(), *spec = cu_jchild(patch, "spec");
    json_object *sel = cu_jpath(t, "spec.nodeSelector");
    if (json_object_is_type(sel, json_type_object) && json_object_object_length(sel))
        json_object_object_add(spec, "nodeSelector", json_object_get(sel));
    json_object *tols = cu_jpath(t, "spec.tolerations");
    if (tols)
        json_object_object_add(spec, "tolerations", json_object_get(tols));
    json_object *lab = cu_jpath(t, "metadata.labels"), *ann = cu_jpath(t, "metadata.annotations");
    if (lab)
        json_object_object_add(cu_jchild(patch, "metadata"), "labels", json_object_get(lab));
    if (ann)
        json_object_object_add(cu_jchild(patch, "metadata"), "annotations", json_object_get(ann));
    /* Kueue's gate off; the topology gate too unless TAS placed the pod
     * set (the topology ungater removes it then) */
    ctrl_gates_without(spec, cu_jpath(p->obj, "spec.schedulingGates"), CU_POD_SCHEDULING_GATE,
                       wl->psa[i].topo ? NULL : CU_TAS_GATE);
    json_object_put(jp);
    return patch;
}

/* Ungates pod x, admitted in w. Returns 1 when the write was sent. */
static int pod_start(ctrl *c, rec *x, rec *w)
{
    cu_diag d;
    cu_diag_init(&d);
    int permanent = 0, sent = 0;
    json_object *patch = ungate_patch(c, x, w, &d, &permanent);
    if (!patch) {
        for (size_t i = 0; i < d.n; i++)
            ctrl_log(c, 0, "Pod %s cannot start: %s", x->key, d.msgs[i]);
        if (permanent && d.n)
            ctrl_finish_workload(c, w, "FailedToStart", d.msgs[0]);
    } else {
        char what[900];
        snprintf(what, sizeof(what), "starting Pod %s", x->key);
        if ((sent = pod_patch(c, x, patch, what)) != 0) {
            const cu_workload *wl = ctrl_wl_of(w);
            free(x->start_cq); /* said when the write succeeds: pod_written */
            x->start_cq = ctrl_sdup(wl->adm_cq ? wl->adm_cq : "?");
        }
    }
    cu_diag_free(&d);
    return sent;
}

/* ---------------- a unit's Workload ---------------- */

static int cmp_created(const void *a, const void *b)
{
    const rec *x = *(rec *const *)a, *y = *(rec *const *)b;
    if (x->created_ms != y->created_ms)
        return x->created_ms < y->created_ms ? -1 : 1;
    return strcmp(x->key, y->key);
}

/* Kueue's order of a group's runnable pods, the ones to keep first: with
 * no finalizer first, then ungated, then older. */
static int cmp_keep(const void *a, const void *b)
{
    const rec *x = *(rec *const *)a, *y = *(rec *const *)b;
    const cpod *p = pod_of(x), *q = pod_of(y);
    if (p->has_fin != q->has_fin)
        return p->has_fin - q->has_fin;
    if (p->gated != q->gated)
        return p->gated - q->gated;
    return cmp_created(a, b);
}

/* Creates the Workload body (taken) for the unit whose pod x speaks for
 * it (the Events, the backoff). */
static void create_wl(ctrl *c, rec *x, const char *wlkey, json_object *body)
{
    if (x->created_at && cu_clock_system_now(NULL) - x->created_at < 30000) {
        json_object_put(body); /* created; the watch has not brought it yet */
        return;
    }
    if (x->retry_at && cu_clock_system_now(NULL) < x->retry_at) {
        json_object_put(body); /* refused a moment ago: backing off */
        return;
    }
    json_object *spec = cu_jget(body, "spec");
    ctrl_wl_priority(c, spec);
    size_t h = cu_hash_str(json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN));
    if (h == x->refused) {
        json_object_put(body); /* refused for good already; reported then */
        return;
    }
    x->create_hash = h;
    const char *sl = strchr(wlkey, '/');
    char op[800], path[700], what[1300];
    snprintf(op, sizeof(op), "create:%s", wlkey);
    snprintf(path, sizeof(path), "%s/%.*s/workloads", WLPATH, (int)(sl - wlkey), wlkey);
    snprintf(what, sizeof(what), "creating Workload %s for Pod %s", wlkey, x->key);
    if (ctrl_send_write(c, OP_CREATE, R_POD, op, x->key, "POST", path, "application/json", body,
                        what))
        x->created_at = cu_clock_system_now(NULL);
}

/* Says once per problem (log, Warning Event on pod x) why the unit's
 * Workload cannot be made. */
static void say_compose(ctrl *c, pgroup *g, rec *x, const char *why)
{
    size_t h = cu_hash_str(why);
    if (g && g->said == h)
        return;
    if (g)
        g->said = h;
    ctrl_log(c, 0, "Pod %s: its Workload cannot be created: %s", x->key, why);
    ctrl_emit_owner(c, x, "Warning", "ErrWorkloadCompose", why);
}

/* The members of the unit of key: a group's pods, or the single pod;
 * sorted by creation. A new array (caller frees) of *n records, NULL when
 * there are none; *g: the group (NULL for a single pod). */
static rec **unit_pods(ctrl *c, const char *key, size_t *n, pgroup **g)
{
    *n = 0;
    *g = NULL;
    rec **v = NULL;
    if (strncmp(key, "g:", 2) == 0) {
        *g = group_of(ctrl_omap_get(&c->units[R_POD], key));
        if (!*g || !(*g)->n)
            return NULL;
        v = malloc((*g)->n * sizeof(*v));
        if (!v)
            return NULL;
        memcpy(v, (*g)->m, (*g)->n * sizeof(*v));
        *n = (*g)->n;
    } else {
        rec *x = ctrl_omap_get(&c->objs[R_POD], key);
        if (!pod_of(x) || pod_of(x)->group || !(v = malloc(sizeof(*v))))
            return NULL;
        v[0] = x;
        *n = 1;
    }
    qsort(v, *n, sizeof(*v), cmp_created);
    return v;
}

/* No Workload yet: create it when the unit is complete (a group: as many
 * runnable pods as its total count, the excess deleted). */
static void no_workload(ctrl *c, pgroup *g, rec **pods, size_t n)
{
    cpod *p0 = pod_of(pods[0]);
    /* running pods without a Workload are stopped (Kueue: no matching
     * Workload); ended or deleted ones hold nothing any more */
    for (size_t i = 0; i < n; i++) {
        cpod *p = pod_of(pods[i]);
        if (!p->gated && !p->deleting && !p->succeeded && !p->failed)
            pod_delete(c, pods[i], CU_EV_STOPPED, "No matching Workload");
        else if (p->has_fin && (p->deleting || p->succeeded || p->failed))
            pod_unfinalize(c, pods[i]);
    }
    if (p0->prebuilt)
        return; /* its Workload is made by someone else: waited for */
    if (!g) {
        if (p0->deleting || p0->succeeded || p0->failed || !p0->gated)
            return;
        cu_diag d;
        cu_diag_init(&d);
        json_object *body = cu_pod_workload(p0->obj, &d);
        if (body)
            create_wl(c, pods[0], p0->wlkey, body);
        else
            say_compose(c, NULL, pods[0], d.n ? d.msgs[0] : "out of memory");
        cu_diag_free(&d);
        return;
    }
    rec **act = malloc(n * sizeof(*act));
    if (!act)
        return;
    size_t na = 0;
    for (size_t i = 0; i < n; i++)
        if (pod_of(pods[i])->runnable)
            act[na++] = pods[i];
    char why[900];
    int32_t total = 0;
    why[0] = '\0';
    if (!na) {
        free(act);
        return;
    }
    json_object **chk = malloc(na * sizeof(*chk));
    if (!chk) {
        free(act);
        return;
    }
    for (size_t i = 0; i < na; i++)
        chk[i] = pod_of(act[i])->obj;
    size_t bad;
    if (!cu_pod_group_disagree(chk, na, &total, &bad, why, sizeof(why)))
        why[0] = '\0';
    free(chk);
    if (*why) {
        say_compose(c, g, act[0], why);
        free(act);
        return;
    }
    if ((int32_t)na < total) {
        free(act); /* not complete yet: its Workload waits */
        return;
    }
    if ((int32_t)na > total) {
        /* excess pods: Kueue deletes the ones last in its order */
        qsort(act, na, sizeof(*act), cmp_keep);
        for (size_t i = (size_t)total; i < na; i++) {
            if (pod_of(act[i])->has_fin)
                pod_unfinalize(c, act[i]);
            else if (!pod_of(act[i])->deleting)
                pod_delete(c, act[i], "ExcessPodDeleted", "Excess pod deleted");
        }
        na = (size_t)total;
        qsort(act, na, sizeof(*act), cmp_created);
    }
    json_object **objs = malloc(na * sizeof(*objs));
    if (objs) {
        for (size_t i = 0; i < na; i++)
            objs[i] = pod_of(act[i])->obj;
        cu_diag d;
        cu_diag_init(&d);
        json_object *body = cu_pod_group_workload(p0->group, objs, na, &d);
        if (body) {
            g->said = 0;
            create_wl(c, act[0], p0->wlkey, body);
        } else {
            say_compose(c, g, act[0], d.n ? d.msgs[0] : "out of memory");
        }
        cu_diag_free(&d);
        free(objs);
    }
    free(act);
}

/* A group Workload w that is running: pods beyond a role's count deleted,
 * failed pods that have a replacement finalized, every pod named in its
 * ownerReferences. */
static void keep_group(ctrl *c, rec *w, rec **pods, size_t n)
{
    const cu_workload *wl = ctrl_wl_of(w);
    rec **act = malloc(n * sizeof(*act)), **inact = malloc(n * sizeof(*inact));
    if (!act || !inact) {
        free(act);
        free(inact);
        return;
    }
    for (size_t s = 0; s < wl->npodsets; s++) {
        size_t na = 0, ni = 0;
        for (size_t i = 0; i < n; i++) {
            cpod *p = pod_of(pods[i]);
            if (strcmp(p->role, wl->podsets[s].name) != 0 && wl->npodsets > 1)
                continue;
            if (p->runnable)
                act[na++] = pods[i];
            else
                inact[ni++] = pods[i];
        }
        int32_t count = wl->podsets[s].count;
        if ((int32_t)na > count) {
            qsort(act, na, sizeof(*act), cmp_keep);
            for (size_t i = (size_t)count; i < na; i++) {
                if (pod_of(act[i])->has_fin)
                    pod_unfinalize(c, act[i]);
                else if (!pod_of(act[i])->deleting)
                    pod_delete(c, act[i], "ExcessPodDeleted", "Excess pod deleted");
            }
        }
        /* failed pods a replacement stands in for */
        int64_t fin = (int64_t)ni + (int64_t)na - count;
        if (fin > (int64_t)ni)
            fin = (int64_t)ni;
        qsort(inact, ni, sizeof(*inact), cmp_created);
        for (int64_t i = 0; i < fin; i++)
            pod_unfinalize(c, inact[i]);
    }
    free(act);
    free(inact);
    /* ownerReferences: every pod of the group (Kueue adds the new ones) */
    json_object *owners = w->owners ? cu_json_parse_str(w->owners) : json_object_new_array();
    size_t added = 0;
    for (size_t i = 0; owners && i < n; i++) {
        int have = 0;
        for (size_t k = 0, no = cu_jarr_len(owners); k < no && !have; k++) {
            const char *uid = cu_jstr(json_object_array_get_idx(owners, k), "uid");
            have = uid && pods[i]->uid && strcmp(uid, pods[i]->uid) == 0;
        }
        if (have || pod_of(pods[i])->deleting || !pods[i]->uid)
            continue;
        json_object *o = json_object_new_object();
        cu_jset_str(o, "apiVersion", "v1");
        cu_jset_str(o, "kind", "Pod");
        cu_jset_str(o, "name", strchr(pods[i]->key, '/') + 1);
        cu_jset_str(o, "uid", pods[i]->uid);
        json_object_array_add(owners, o);
        added++;
    }
    if (added) {
        json_object *p = json_object_new_object(), *md = cu_jchild(p, "metadata");
        if (w->rv)
            cu_jset_str(md, "resourceVersion", w->rv);
        json_object_object_add(md, "ownerReferences", json_object_get(owners));
        char op[800], path[1200], what[1300];
        snprintf(op, sizeof(op), "spec:%s", w->key);
        ctrl_obj_path(R_WL, w->key, path, sizeof(path));
        snprintf(what, sizeof(what), "adding %zu owner reference(s) to Workload %s", added, w->key);
        if (ctrl_send_write(c, OP_OTHER, R_WL, op, w->key, "PATCH", path, MERGE, p, what)) {
            char m[100];
            snprintf(m, sizeof(m), "Added %zu owner reference(s)", added);
            ctrl_emit_wl(c, wl, "Normal", "OwnerReferencesAdded", m);
        }
    }
    json_object_put(owners);
}

static void reconcile_unit(ctrl *c, const char *key)
{
    size_t n = 0;
    pgroup *g = NULL;
    rec **pods = unit_pods(c, key, &n, &g);
    if (!pods)
        return;
    cpod *p0 = pod_of(pods[0]);
    note_wl(c, p0->wlkey, key);
    rec *w = ctrl_omap_get(&c->objs[R_WL], p0->wlkey);
    const cu_workload *wl = ctrl_wl_of(w);
    if (!wl) {
        if (!w)
            no_workload(c, g, pods, n);
        free(pods);
        return;
    }
    if (cu_workload_finished(wl)) {
        /* done: nothing of it needs its pods kept any more */
        for (size_t i = 0; i < n; i++)
            pod_unfinalize(c, pods[i]);
        free(pods);
        return;
    }
    /* deleted pods that have not succeeded count for nothing */
    for (size_t i = 0; i < n; i++) {
        cpod *p = pod_of(pods[i]);
        if (p->deleting && !p->succeeded)
            pod_unfinalize(c, pods[i]);
    }
    if (g && !p0->prebuilt)
        keep_group(c, w, pods, n);
    int serving = g && p0->serving;
    if (!serving) {
        int32_t succeeded = 0, total = g ? p0->total : 1;
        int active = 0, unretriable = 0;
        for (size_t i = 0; i < n; i++) {
            cpod *p = pod_of(pods[i]);
            succeeded += p->succeeded;
            active |= !p->succeeded && !p->failed;
            unretriable |= p->unretriable;
        }
        char msg[200];
        int done = 0, ok = 1;
        if (g) {
            done = cu_pod_group_finished(succeeded, total, active, unretriable, msg, sizeof(msg));
        } else if (p0->succeeded || p0->failed) {
            done = 1;
            ok = p0->succeeded;
            snprintf(msg, sizeof(msg), "%s", cu_jpath_str(p0->obj, "status.message") ?: "");
        }
        if (done) {
            if (ctrl_finish_workload(c, w, ok ? "Succeeded" : "Failed", msg)) {
                ctrl_log(c, 0, "finished %s %s (%s)%s%s", g ? "pod group" : "Pod",
                         g ? key + 2 : key, ok ? "Succeeded" : "Failed", *msg ? ": " : "", msg);
                char m[900];
                ctrl_emit_owner(
                    c, pods[0], "Normal", CU_EV_FINISHED_WORKLOAD,
                    cu_ctrl_event_msg_finished(m, sizeof(m), wl->meta.ns, wl->meta.name));
            }
            free(pods);
            return;
        }
    }
    int holds = cu_workload_has_quota(wl) || (w->assumed && w->adm_written);
    int evicted = ctrl_cond_is(wl, "Evicted", "True");
    if ((holds && evicted) || (!holds && !w->assumed)) {
        /* stopped: Kueue deletes the pods that run (replacements come
         * gated), and the quota goes back once none is left */
        const cu_condition *ec = cu_workload_cond(wl, "Evicted");
        const char *why = evicted && ec && ec->message ? ec->message : CU_EV_MSG_NOT_ADMITTED;
        size_t left = 0, stopped = 0;
        for (size_t i = 0; i < n; i++) {
            cpod *p = pod_of(pods[i]);
            if (p->gated || p->succeeded || p->failed)
                continue;
            left++; /* running, or being deleted: still holds its node's resources */
            if (!p->deleting)
                stopped += pod_delete(c, pods[i], CU_EV_STOPPED, why) != 0;
        }
        if (stopped)
            ctrl_log(c, 0, "stopping %s %s: %s (%zu pods deleted)", g ? "pod group" : "Pod",
                     g ? key + 2 : key,
                     evicted ? "its Workload was evicted" : "its Workload holds no quota", stopped);
        if (holds && evicted && !left)
            ctrl_release_evicted(c, w);
        free(pods);
        return;
    }
    int admitted = ctrl_cond_is(wl, "Admitted", "True") && cu_workload_has_quota(wl) && !evicted;
    if (admitted) {
        /* every gated pod at once: the group was admitted whole */
        size_t started = 0;
        for (size_t i = 0; i < n; i++) {
            cpod *p = pod_of(pods[i]);
            if (p->gated && !p->deleting && p->runnable)
                started += pod_start(c, pods[i], w) != 0;
        }
        if (started)
            ctrl_log(c, 1, "starting %zu pod(s) of %s %s (Workload %s, ClusterQueue %s)", started,
                     g ? "pod group" : "Pod", g ? key + 2 : key, w->key,
                     wl->adm_cq ? wl->adm_cq : "?");
    }
    free(pods);
}

/* ---------------- the integration's hooks ---------------- */

static void pod_decode(ctrl *c, rec *x, json_object *obj)
{
    cpod *p = decode_pod(obj);
    if (!p) {
        ctrl_report_bad(c, x, R_POD, obj, "no metadata.namespace, name or uid");
        return;
    }
    ctrl_report_bad(c, x, R_POD, obj, NULL);
    cpod *old = pod_of(x);
    if (old && old->group && (!p->group || strcmp(old->unit, p->unit) != 0)) {
        ctrl_mark_owner(c, R_POD, old->unit);
        group_remove(c, old->unit, x);
    }
    if (x->ij)
        pod_free_data(x);
    x->ij = p;
    if (p->group)
        group_add(c, p->unit, x);
    ctrl_mark_owner(c, R_POD, p->unit);
}

static void pod_deleted(ctrl *c, rec *x)
{
    cpod *p = pod_of(x);
    if (!p)
        return;
    ctrl_mark_wl(c, p->wlkey); /* an eviction it held up ends */
    if (p->group) {
        group_remove(c, p->unit, x);
        ctrl_mark_owner(c, R_POD, p->unit);
    }
}

static void pod_reconcile(ctrl *c, const char *key)
{
    if (strncmp(key, "g:", 2) == 0) {
        reconcile_unit(c, key);
        return;
    }
    cpod *p = pod_of(ctrl_omap_get(&c->objs[R_POD], key));
    if (p)
        reconcile_unit(c, p->unit);
}

static void pod_written(ctrl *c, const char *key, int ok, const char *body)
{
    (void)body;
    rec *x = ctrl_omap_get(&c->objs[R_POD], key);
    if (!x || !x->start_cq)
        return;
    char *cq = x->start_cq;
    x->start_cq = NULL;
    if (ok) {
        ctrl_log(c, 1, "started Pod %s (ClusterQueue %s)", key, cq);
        char m[600];
        ctrl_emit_owner(c, x, "Normal", CU_EV_STARTED, cu_ctrl_event_msg_started(m, sizeof(m), cq));
    }
    free(cq);
}

static int pod_awaits_workload(ctrl *c, rec *x)
{
    cpod *p = pod_of(x);
    if (!p || !p->gated || p->deleting || p->prebuilt || !p->runnable ||
        ctrl_omap_get(&c->objs[R_WL], p->wlkey))
        return 0;
    if (!p->group)
        return 1;
    pgroup *g = group_of(ctrl_omap_get(&c->units[R_POD], p->unit));
    int32_t na = 0;
    for (size_t i = 0; g && i < g->n; i++)
        na += pod_of(g->m[i]) && pod_of(g->m[i])->runnable;
    return p->total > 0 && na >= p->total;
}

static int pod_wl_owner(ctrl *c, rec *x, json_object *obj)
{
    (void)c;
    const char *ig = cu_jstr(cu_jpath(obj, "metadata.annotations"), CU_ANN_IS_GROUP_WORKLOAD);
    const char *ns = cu_jpath_str(obj, "metadata.namespace"),
               *name = cu_jpath_str(obj, "metadata.name");
    if (!ig || strcmp(ig, "true") != 0 || !ns || !name)
        return 0;
    size_t l = strlen(ns) + strlen(name) + 4;
    free(x->owner);
    x->owner = malloc(l);
    if (!x->owner)
        return 0;
    snprintf(x->owner, l, "g:%s/%s", ns, name);
    x->owner_r = R_POD;
    return 1;
}

static int pod_owner_alive(ctrl *c, const char *key)
{
    pgroup *g = group_of(ctrl_omap_get(&c->units[R_POD], key));
    return g && g->n > 0;
}

static void pod_wl_changed(ctrl *c, rec *w, int deleted)
{
    char k[700];
    snprintf(k, sizeof(k), "w:%s", w->key);
    rec *u = ctrl_omap_get(&c->units[R_POD], k);
    if (!u)
        return;
    ctrl_mark_owner(c, R_POD, u->owner);
    if (deleted)
        ctrl_rec_free(ctrl_omap_del(&c->units[R_POD], k));
}

static int pod_pods_ready(ctrl *c, rec *w, int64_t *ready, int64_t *succeeded)
{
    size_t n = 0;
    pgroup *g = NULL;
    rec **pods = w->owner ? unit_pods(c, w->owner, &n, &g) : NULL;
    int started = pods != NULL;
    for (size_t i = 0; i < n; i++) {
        cpod *p = pod_of(pods[i]);
        started &= !p->gated || p->deleting || !p->runnable;
        *ready += p->ready && !p->deleting;
        *succeeded += p->succeeded;
    }
    free(pods);
    return started;
}

const ctrl_integ ctrl_integ_pod = {
    .r = R_POD,
    .decode = pod_decode,
    .deleted = pod_deleted,
    .free_data = pod_free_data,
    .reconcile = pod_reconcile,
    .written = pod_written,
    .awaits_workload = pod_awaits_workload,
    .wl_owner = pod_wl_owner,
    .owner_alive = pod_owner_alive,
    .wl_changed = pod_wl_changed,
    .pods_ready = pod_pods_ready,
};
