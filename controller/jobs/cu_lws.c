/*
 * cu_lws.c - the LeaderWorkerSet integration (Kueue's
 * "leaderworkerset.x-k8s.io/leaderworkerset" framework), in two parts as
 * in Kueue:
 *  - the LWS reconciler (ctrl_integ_lws): one prebuilt Workload per group
 *    (api/cu_lws.c builds it), created for the groups that lack one,
 *    deleted for the groups scaled away (Kueue's finalizers taken off
 *    first), the priority-class label kept in step;
 *  - the LWS pod labeller (ctrl_integ_lws_pod, resource R_LWS_POD: every
 *    pod with the LWS's name label): labels each pod Kueue's webhook
 *    marked (pod-suspending-parent) into its group's pod group once the
 *    LWS controller gave it its group index, and takes Kueue's finalizer
 *    off the LWS pods that ended or are being deleted.
 * The pod group integration (cu_pod.c) then admits each group through its
 * prebuilt Workload and ungates its pods.
 */
#include "cu_ctrl_int.h"

/* What the controller keeps of an LWS (rec.ij) or of an LWS pod. */
typedef struct lws_obj {
    json_object *o; /* LWS: the object; pod: its metadata and status.phase */
    int64_t *sent;  /* LWS: when the Workload of group i was created, 0 none */
    int32_t nsent;
} lws_obj;

static void lws_free_data(rec *x)
{
    lws_obj *l = x->ij;
    if (!l)
        return;
    json_object_put(l->o);
    free(l->sent);
    free(l);
    x->ij = NULL;
}

static json_object *obj_of(const rec *x) { return x && x->ij ? ((lws_obj *)x->ij)->o : NULL; }

/* Keeps o (taken) as x's object; the creation times stay. */
static void keep(rec *x, json_object *o)
{
    lws_obj *l = x->ij;
    if (!l && !(l = x->ij = calloc(1, sizeof(*l)))) {
        json_object_put(o);
        return;
    }
    json_object_put(l->o);
    l->o = o;
}

/* ---------------- the LWS reconciler ---------------- */

/* The replicas whose groups need a Workload: spec.replicas, or, during a
 * rolling update with maxSurge, status.replicas when higher (Kueue's
 * filterWorkloads). */
static int32_t wanted_groups(json_object *lws)
{
    int32_t n = cu_lws_replicas(lws);
    int64_t st = cu_jas_int64(cu_jpath(lws, "status.replicas"), 0);
    json_object *ru = cu_jpath(lws, "spec.rolloutStrategy.rollingUpdateConfiguration");
    json_object *ms = cu_jget(ru, "maxSurge");
    /* an intOrString: a percentage reads as 0, as Kueue's IntValue() does */
    int64_t surge = json_object_is_type(ms, json_type_int) ? json_object_get_int64(ms) : 0;
    if (st > n && surge > 0 && cu_jas_int64(cu_jpath(lws, "status.updatedReplicas"), 0) < n &&
        st <= INT32_MAX)
        n = (int32_t)st;
    return n;
}

/* 1 when Workload w is one of LWS x's (its controller reference names
 * x's kind, name and uid). */
static int owned_by(const rec *w, const rec *x)
{
    if (w->owner_r != R_LWS || !w->owner || strcmp(w->owner, x->key) != 0 || !x->uid)
        return 0;
    json_object *refs = w->owners ? cu_json_parse_str(w->owners) : NULL;
    int ok = 0;
    for (size_t i = 0; i < cu_jarr_len(refs) && !ok; i++) {
        json_object *r = json_object_array_get_idx(refs, i);
        const char *k = cu_jstr(r, "kind"), *u = cu_jstr(r, "uid");
        ok = k && u && strcmp(k, CU_LWS_KIND) == 0 && strcmp(u, x->uid) == 0;
    }
    json_object_put(refs);
    return ok;
}

/* Deletes Workload w of a group scaled away: Kueue's finalizers taken off
 * first (a merge patch of the rest, at w's version), then the delete. */
static void delete_workload(ctrl *c, rec *x, rec *w)
{
    char path[1300], op[1200], what[1400];
    ctrl_obj_path(R_WL, w->key, path, sizeof(path));
    json_object *fins = w->fins ? cu_json_parse_str(w->fins) : NULL,
                *rest = json_object_new_array();
    int ours = 0;
    for (size_t i = 0; i < cu_jarr_len(fins); i++) {
        json_object *f = json_object_array_get_idx(fins, i);
        const char *s = cu_jas_str(f);
        if (s && (strcmp(s, CU_FINALIZER_IN_USE) == 0 || strcmp(s, CU_FINALIZER_MANAGED) == 0))
            ours = 1;
        else
            json_object_array_add(rest, json_object_get(f));
    }
    json_object_put(fins);
    if (ours) {
        json_object *p = json_object_new_object(), *md = cu_jchild(p, "metadata");
        if (w->rv)
            cu_jset_str(md, "resourceVersion", w->rv);
        json_object_object_add(md, "finalizers", rest);
        snprintf(op, sizeof(op), "unfin:%s", w->key);
        snprintf(what, sizeof(what), "removing the finalizers of Workload %s of LeaderWorkerSet %s",
                 w->key, x->key);
        ctrl_send_write(c, OP_OTHER, R_WL, op, w->key, "PATCH", path, MERGE, p, what);
        return;
    }
    json_object_put(rest);
    json_object *body = json_object_new_object(), *pre = cu_jchild(body, "preconditions");
    cu_jset_str(body, "apiVersion", "v1");
    cu_jset_str(body, "kind", "DeleteOptions");
    const cu_workload *wl = ctrl_wl_of(w);
    if (wl && wl->meta.uid)
        cu_jset_str(pre, "uid", wl->meta.uid);
    snprintf(op, sizeof(op), "del:%s", w->key);
    snprintf(what, sizeof(what), "deleting Workload %s of LeaderWorkerSet %s (scaled down)", w->key,
             x->key);
    if (ctrl_send_write(c, OP_OTHER, R_WL, op, w->key, "DELETE", path, "application/json", body,
                        what))
        ctrl_log(c, 1, "LeaderWorkerSet %s: deleting Workload %s (its group was scaled away)",
                 x->key, w->key);
}

/* Keeps Workload w's priority class in step with the LWS's
 * priority-class label (Kueue's UpdateWorkloadPriority): when w has no
 * class or a WorkloadPriorityClass, and the label names another one. */
static void sync_priority(ctrl *c, rec *x, rec *w, json_object *want)
{
    const cu_workload *wl = ctrl_wl_of(w);
    if (!wl || (wl->pc_kind && strcmp(wl->pc_kind, "WorkloadPriorityClass") != 0))
        return;
    const char *label = cu_jstr(cu_jpath(obj_of(x), "metadata.labels"), CU_LABEL_PRIORITY_CLASS);
    const char *have = wl->pc_name ? wl->pc_name : "";
    if (strcmp(label ? label : "", have) == 0)
        return;
    json_object *p = json_object_new_object(), *spec = cu_jchild(p, "spec");
    json_object *ref = cu_jpath(want, "spec.priorityClassRef");
    json_object_object_add(spec, "priorityClassRef", ref ? json_object_get(ref) : NULL);
    if (ref)
        ctrl_wl_priority(c, spec);
    if (!cu_jget(spec, "priority"))
        json_object_object_add(spec, "priority", json_object_new_int(0));
    char op[1200], path[1300], what[1400];
    snprintf(op, sizeof(op), "spec:%s", w->key);
    ctrl_obj_path(R_WL, w->key, path, sizeof(path));
    snprintf(what, sizeof(what), "updating the priority class of Workload %s", w->key);
    if (ctrl_send_write(c, OP_OTHER, R_WL, op, w->key, "PATCH", path, MERGE, p, what)) {
        char m[1400];
        snprintf(m, sizeof(m), "Updated workload priority class: %s", w->key);
        ctrl_emit_owner(c, x, "Normal", "UpdatedWorkload", m);
    }
}

/* When x's Workload of group i was created last (0: not, or long ago). */
static int64_t *sent_slot(rec *x, int32_t i)
{
    lws_obj *l = x->ij;
    if (i >= l->nsent) {
        int32_t n = i + 1 > 2 * l->nsent ? i + 1 : 2 * l->nsent;
        int64_t *s = realloc(l->sent, (size_t)n * sizeof(*s));
        if (!s)
            return NULL;
        memset(s + l->nsent, 0, (size_t)(n - l->nsent) * sizeof(*s));
        l->sent = s;
        l->nsent = n;
    }
    return &l->sent[i];
}

/* Creates the Workload of group i (body taken) unless one was sent a
 * moment ago and the watch has not brought it yet. */
static void create_workload(ctrl *c, rec *x, int32_t i, const char *wkey, json_object *body)
{
    int64_t now = cu_clock_system_now(NULL), *at = sent_slot(x, i);
    if ((at && *at && now - *at < 30000) || (x->retry_at && now < x->retry_at)) {
        json_object_put(body);
        return;
    }
    ctrl_wl_priority(c, cu_jget(body, "spec"));
    const char *ns = cu_jpath_str(body, "metadata.namespace");
    char op[1200], path[700], what[1400];
    snprintf(op, sizeof(op), "create:%s", wkey);
    snprintf(path, sizeof(path), "%s/%s/workloads", WLPATH, ns ? ns : "");
    snprintf(what, sizeof(what), "creating Workload %s for group %d of LeaderWorkerSet %s", wkey,
             (int)i, x->key);
    if (ctrl_send_write(c, OP_CREATE, R_LWS, op, x->key, "POST", path, "application/json", body,
                        what) &&
        at)
        *at = now;
}

static void lws_reconcile(ctrl *c, const char *key)
{
    rec *x = ctrl_omap_get(&c->objs[R_LWS], key);
    json_object *lws = obj_of(x);
    if (!lws || cu_jpath(lws, "metadata.deletionTimestamp"))
        return;
    const char *queue = cu_jstr(cu_jpath(lws, "metadata.labels"), CU_LABEL_QUEUE_NAME);
    if (!queue || !*queue)
        return; /* not Kueue's (its webhook puts the label on those it manages) */
    const char *ns = cu_jpath_str(lws, "metadata.namespace"),
               *name = cu_jpath_str(lws, "metadata.name");
    int32_t n = wanted_groups(lws);
    cu_arena a;
    cu_arena_init(&a, 0);
    /* the groups' Workloads: created when missing, their priority kept */
    for (int32_t i = 0; i < n; i++) {
        const char *wn = cu_lws_workload_name(&a, name, x->uid, i);
        if (!wn)
            break;
        char wkey[600];
        snprintf(wkey, sizeof(wkey), "%s/%s", ns, wn);
        rec *w = ctrl_omap_get(&c->objs[R_WL], wkey);
        cu_diag d;
        cu_diag_init(&d);
        json_object *body = cu_lws_workload(lws, i, &d);
        if (i == 0 || !body) /* said once per problem */
            ctrl_report_bad(c, x, R_LWS, lws,
                            body  ? NULL
                            : d.n ? d.msgs[0]
                                  : "its Workload cannot be built");
        cu_diag_free(&d);
        if (!body)
            break;
        if (!w)
            create_workload(c, x, i, wkey, body);
        else {
            sync_priority(c, x, w, body);
            json_object_put(body);
        }
    }
    /* the Workloads of the groups scaled away */
    OMAP_FOREACH(&c->objs[R_WL], w)
    {
        if (!owned_by(w, x))
            continue;
        int want = 0;
        for (int32_t i = 0; i < n && !want; i++) {
            const char *wn = cu_lws_workload_name(&a, name, x->uid, i);
            const char *sl = strchr(w->key, '/');
            want = wn && sl && strcmp(sl + 1, wn) == 0;
        }
        if (!want)
            delete_workload(c, x, w);
    }
    cu_arena_free(&a);
}

/* Marks the LWS pods of LWS key (ns/name) for labelling. */
static void mark_pods(ctrl *c, const char *key)
{
    const char *sl = strchr(key, '/');
    if (!sl)
        return;
    OMAP_FOREACH(&c->objs[R_LWS_POD], p)
    {
        json_object *md = cu_jget(obj_of(p), "metadata");
        const char *set = cu_jstr(cu_jget(md, "labels"), CU_LWS_LABEL_SET_NAME);
        if (set && strcmp(set, sl + 1) == 0 && strncmp(p->key, key, (size_t)(sl - key + 1)) == 0)
            ctrl_mark_owner(c, R_LWS_POD, p->key);
    }
}

static void lws_decode(ctrl *c, rec *x, json_object *obj)
{
    if (!cu_jpath_str(obj, "metadata.namespace") || !cu_jpath_str(obj, "metadata.name") ||
        !x->uid) {
        ctrl_report_bad(c, x, R_LWS, obj, "no metadata.namespace, name or uid");
        return;
    }
    keep(x, cu_jcopy(obj));
    ctrl_mark_owner(c, R_LWS, x->key);
    mark_pods(c, x->key); /* pods that waited for it */
}

static void lws_deleted(ctrl *c, rec *x)
{
    (void)c, (void)x; /* its Workloads go with it (ownerReference) */
}

static int lws_awaits_workload(ctrl *c, rec *x)
{
    json_object *lws = obj_of(x);
    const char *queue = cu_jstr(cu_jpath(lws, "metadata.labels"), CU_LABEL_QUEUE_NAME);
    if (!lws || !queue || !*queue || cu_jpath(lws, "metadata.deletionTimestamp") || x->bad)
        return 0;
    const char *ns = cu_jpath_str(lws, "metadata.namespace"),
               *name = cu_jpath_str(lws, "metadata.name");
    cu_arena a;
    cu_arena_init(&a, 0);
    int missing = 0;
    for (int32_t i = 0, n = wanted_groups(lws); i < n && !missing; i++) {
        const char *wn = cu_lws_workload_name(&a, name, x->uid, i);
        char wkey[600];
        snprintf(wkey, sizeof(wkey), "%s/%s", ns, wn ? wn : "");
        missing = wn && !ctrl_omap_get(&c->objs[R_WL], wkey);
    }
    cu_arena_free(&a);
    return missing;
}

const ctrl_integ ctrl_integ_lws = {
    .r = R_LWS,
    .decode = lws_decode,
    .deleted = lws_deleted,
    .free_data = lws_free_data,
    .reconcile = lws_reconcile,
    .awaits_workload = lws_awaits_workload,
};

/* ---------------- the LWS pod labeller ---------------- */

static void pod_decode(ctrl *c, rec *x, json_object *obj)
{
    /* what the labeller reads: the metadata and the phase */
    json_object *o = json_object_new_object();
    json_object *md = cu_jcopy(cu_jget(obj, "metadata"));
    if (md)
        json_object_object_add(o, "metadata", md);
    const char *ph = cu_jpath_str(obj, "status.phase");
    if (ph)
        cu_jset_str(o, "phase", ph);
    keep(x, o);
    ctrl_mark_owner(c, R_LWS_POD, x->key);
}

static void pod_reconcile(ctrl *c, const char *key)
{
    rec *x = ctrl_omap_get(&c->objs[R_LWS_POD], key);
    json_object *pod = obj_of(x);
    if (!pod || !cu_lws_pod_is_managed(pod))
        return; /* not one Kueue's webhook suspended */
    json_object *md = cu_jget(pod, "metadata");
    const char *phase = cu_jstr(pod, "phase");
    int ended = phase && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0);
    char op[700], path[1300], what[1400];
    snprintf(op, sizeof(op), "lwspod:%s", key);
    ctrl_obj_path(R_LWS_POD, key, path, sizeof(path));
    json_object *p = NULL;
    if (ended || cu_jget(md, "deletionTimestamp")) {
        /* Kueue's finalizer off an LWS pod that ended or is going */
        json_object *fins = cu_jget(md, "finalizers"), *rest = json_object_new_array();
        int ours = 0;
        for (size_t i = 0; i < cu_jarr_len(fins); i++) {
            json_object *f = json_object_array_get_idx(fins, i);
            const char *s = cu_jas_str(f);
            if (s && strcmp(s, CU_FINALIZER_MANAGED) == 0)
                ours = 1;
            else
                json_object_array_add(rest, json_object_get(f));
        }
        if (!ours) {
            json_object_put(rest);
            return;
        }
        p = json_object_new_object();
        json_object *pm = cu_jchild(p, "metadata");
        if (x->rv)
            cu_jset_str(pm, "resourceVersion", x->rv);
        json_object_object_add(pm, "finalizers", rest);
        snprintf(what, sizeof(what), "removing the finalizer of LeaderWorkerSet pod %s", key);
    } else {
        const char *set = cu_jstr(cu_jget(md, "labels"), CU_LWS_LABEL_SET_NAME);
        const char *ns = cu_jstr(md, "namespace");
        char lk[600];
        snprintf(lk, sizeof(lk), "%s/%s", ns ? ns : "", set ? set : "");
        p = cu_lws_pod_patch(pod, obj_of(ctrl_omap_get(&c->objs[R_LWS], lk)));
        if (!p)
            return; /* labelled already, no group index yet, or its LWS not Kueue's */
        snprintf(what, sizeof(what), "labelling LeaderWorkerSet pod %s into pod group %s", key,
                 cu_jstr(cu_jpath(p, "metadata.labels"), CU_LABEL_POD_GROUP_NAME));
    }
    if (ctrl_send_write(c, OP_JOB, R_LWS_POD, op, key, "PATCH", path, MERGE, p, what))
        ctrl_log(c, 2, "%s", what);
}

const ctrl_integ ctrl_integ_lws_pod = {
    .r = R_LWS_POD,
    .decode = pod_decode,
    .free_data = lws_free_data,
    .reconcile = pod_reconcile,
};
