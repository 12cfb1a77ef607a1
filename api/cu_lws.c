/*
 * cu_lws.c - Kueue's rules for a LeaderWorkerSet: the Workload of each
 * group and the labels of its pods (cu_lws.h).
 */
#include "cu_lws.h"
#include "cu_objects.h"
#include "cu_topology.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int32_t pos_int(json_object *v)
{
    int64_t x = cu_jas_int64(v, -1);
    return x < 0 || x > INT32_MAX ? -1 : (int32_t)x;
}

int32_t cu_lws_replicas(json_object *lws)
{
    int32_t n = pos_int(cu_jpath(lws, "spec.replicas"));
    return n < 0 ? 1 : n;
}

int32_t cu_lws_size(json_object *lws)
{
    int32_t n = pos_int(cu_jpath(lws, "spec.leaderWorkerTemplate.size"));
    return n < 0 ? 1 : n;
}

const char *cu_lws_workload_name(cu_arena *a, const char *name, const char *uid, int32_t idx)
{
    const char *owner = cu_arena_printf(a, "%s-%d", name, (int)idx);
    return owner ? cu_owner_workload_name(a, CU_LWS_KIND, CU_LWS_GROUP, owner, uid) : NULL;
}

/* metadata.labels[key] of o */
static const char *label(json_object *o, const char *key)
{
    return cu_jstr(cu_jpath(o, "metadata.labels"), key);
}

/* A pod set: name, count, a copy of the spec of template t, and the
 * topology request of t's annotations (index_label: the workers'). */
static json_object *pod_set(const char *name, int32_t count, json_object *t,
                            const char *index_label)
{
    json_object *ps = json_object_new_object(), *tmpl = json_object_new_object();
    json_object *spec = cu_jcopy(cu_jget(t, "spec"));
    cu_jset_str(ps, "name", name);
    cu_jset_int(ps, "count", count);
    json_object_object_add(tmpl, "spec", spec ? spec : json_object_new_object());
    json_object_object_add(ps, "template", tmpl);
    cu_topo_request_add(ps, t, index_label, NULL, NULL);
    return ps;
}

json_object *cu_lws_workload(json_object *lws, int32_t idx, cu_diag *d)
{
    const char *ns = cu_jpath_str(lws, "metadata.namespace"),
               *name = cu_jpath_str(lws, "metadata.name"), *uid = cu_jpath_str(lws, "metadata.uid");
    if (!ns || !name || !uid) {
        cu_diag_error(d, "LeaderWorkerSet %s/%s: metadata: name, namespace and uid are required",
                      ns ? ns : "?", name ? name : "?");
        return NULL;
    }
    const char *queue = label(lws, CU_LABEL_QUEUE_NAME);
    if (!queue || !*queue) {
        cu_diag_error(d, "LeaderWorkerSet %s/%s: metadata.labels: no " CU_LABEL_QUEUE_NAME " label",
                      ns, name);
        return NULL;
    }
    json_object *lwt = cu_jpath(lws, "spec.leaderWorkerTemplate");
    json_object *worker = cu_jget(lwt, "workerTemplate"), *leader = cu_jget(lwt, "leaderTemplate");
    if (!json_object_is_type(worker, json_type_object)) {
        cu_diag_error(d,
                      "LeaderWorkerSet %s/%s: spec.leaderWorkerTemplate.workerTemplate: missing or "
                      "not an object",
                      ns, name);
        return NULL;
    }
    if (leader && !json_object_is_type(leader, json_type_object)) {
        cu_diag_error(d,
                      "LeaderWorkerSet %s/%s: spec.leaderWorkerTemplate.leaderTemplate: not an "
                      "object",
                      ns, name);
        return NULL;
    }
    int32_t size = cu_lws_size(lws);
    if (leader && size < 1) {
        cu_diag_error(d,
                      "LeaderWorkerSet %s/%s: spec.leaderWorkerTemplate.size: must be at least 1 "
                      "with a leaderTemplate, got %d",
                      ns, name, (int)size);
        return NULL;
    }
    cu_arena a;
    cu_arena_init(&a, 0);
    const char *wlname = cu_lws_workload_name(&a, name, uid, idx);
    if (!wlname) {
        cu_arena_free(&a);
        return NULL;
    }
    json_object *wl = json_object_new_object(), *md = json_object_new_object();
    cu_jset_str(wl, "apiVersion", CU_GROUP "/v1beta2");
    cu_jset_str(wl, "kind", "Workload");
    json_object_object_add(wl, "metadata", md);
    cu_jset_str(md, "name", wlname);
    cu_jset_str(md, "namespace", ns);
    cu_arena_free(&a);
    cu_jset_str(cu_jchild(md, "labels"), CU_LABEL_JOB_UID, uid);
    json_object *ann = cu_jchild(md, "annotations");
    cu_jset_str(ann, CU_ANN_IS_GROUP_WORKLOAD, "true");
    cu_jset_str(ann, CU_ANN_JOB_OWNER_GVK, CU_LWS_API_VERSION ", Kind=" CU_LWS_KIND);
    cu_jset_str(ann, CU_ANN_JOB_OWNER_NAME, name);
    char ix[16];
    snprintf(ix, sizeof(ix), "%d", (int)idx);
    cu_jset_str(ann, CU_ANN_COMPONENT_WORKLOAD_INDEX, ix);
    json_object *owners = json_object_new_array(), *own = json_object_new_object();
    cu_jset_str(own, "apiVersion", CU_LWS_API_VERSION);
    cu_jset_str(own, "kind", CU_LWS_KIND);
    cu_jset_str(own, "name", name);
    cu_jset_str(own, "uid", uid);
    json_object_object_add(own, "controller", json_object_new_boolean(1));
    json_object_object_add(own, "blockOwnerDeletion", json_object_new_boolean(1));
    json_object_array_add(owners, own);
    json_object_object_add(md, "ownerReferences", owners);

    json_object *spec = cu_jchild(wl, "spec"), *podsets = json_object_new_array();
    cu_jset_str(spec, "queueName", queue);
    if (leader) {
        json_object_array_add(podsets, pod_set(CU_LWS_PODSET_LEADER, 1, leader, NULL));
        json_object_array_add(
            podsets, pod_set(CU_LWS_PODSET_WORKER, size - 1, worker, CU_LABEL_LWS_WORKER_INDEX));
    } else {
        json_object_array_add(podsets,
                              pod_set(CU_LWS_PODSET_MAIN, size, worker, CU_LABEL_LWS_WORKER_INDEX));
    }
    json_object_object_add(spec, "podSets", podsets);
    /* the first pod set's priorityClassName that is set (leader first) */
    const char *pcn = cu_jpath_str(leader, "spec.priorityClassName");
    if (!pcn || !*pcn)
        pcn = cu_jpath_str(worker, "spec.priorityClassName");
    const char *pcgroup, *pckind, *pcname;
    if (cu_job_priority_ref(label(lws, CU_LABEL_PRIORITY_CLASS), pcn, &pcgroup, &pckind, &pcname)) {
        json_object *ref = cu_jchild(spec, "priorityClassRef");
        cu_jset_str(ref, "group", pcgroup);
        cu_jset_str(ref, "kind", pckind);
        cu_jset_str(ref, "name", pcname);
    }
    return wl;
}

int cu_lws_pod_is_managed(json_object *pod)
{
    const char *p = cu_jstr(cu_jpath(pod, "metadata.annotations"), CU_ANN_POD_SUSPENDING_PARENT);
    return p && strcmp(p, CU_LWS_FRAMEWORK) == 0;
}

json_object *cu_lws_pod_patch(json_object *pod, json_object *lws)
{
    if (label(pod, CU_LABEL_QUEUE_NAME))
        return NULL; /* labelled already */
    const char *gi = label(pod, CU_LWS_LABEL_GROUP_INDEX);
    const char *queue = label(lws, CU_LABEL_QUEUE_NAME);
    const char *name = cu_jpath_str(lws, "metadata.name"), *uid = cu_jpath_str(lws, "metadata.uid");
    if (!gi || !lws || !queue || !*queue || !name)
        return NULL; /* no group yet; not Kueue's */
    char *end = NULL;
    long idx = strtol(gi, &end, 10);
    if (!*gi || *end || idx < 0 || idx > INT32_MAX)
        return NULL; /* a group index the LWS controller never writes */
    cu_arena a;
    cu_arena_init(&a, 0);
    const char *wlname = cu_lws_workload_name(&a, name, uid, (int32_t)idx);
    if (!wlname) {
        cu_arena_free(&a);
        return NULL;
    }
    json_object *p = json_object_new_object(), *md = cu_jchild(p, "metadata");
    json_object *lb = cu_jchild(md, "labels"), *ann = cu_jchild(md, "annotations");
    cu_jset_str(lb, CU_LABEL_MANAGED, CU_LABEL_MANAGED_VALUE);
    cu_jset_str(lb, CU_LABEL_QUEUE_NAME, queue);
    cu_jset_str(lb, CU_LABEL_POD_GROUP_NAME, wlname);
    cu_jset_str(lb, CU_LABEL_PREBUILT_WORKLOAD, wlname);
    cu_arena_free(&a);
    char n[16];
    snprintf(n, sizeof(n), "%d", (int)cu_lws_size(lws));
    cu_jset_str(ann, CU_ANN_POD_GROUP_TOTAL_COUNT, n);
    const char *role = CU_LWS_PODSET_MAIN;
    if (cu_jpath(lws, "spec.leaderWorkerTemplate.leaderTemplate"))
        role = cu_jstr(cu_jpath(pod, "metadata.annotations"), CU_LWS_ANN_LEADER_NAME)
                   ? CU_LWS_PODSET_WORKER
                   : CU_LWS_PODSET_LEADER;
    cu_jset_str(ann, CU_ANN_POD_ROLE_HASH, role);
    return p;
}
