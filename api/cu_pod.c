/*
 * cu_pod.c - the Workloads Kueue makes of plain Pods and pod groups, and
 * the role hash that groups a pod group's pods into pod sets.
 */
#include "cu_pod.h"

#include "cu_job.h"
#include "cu_json.h"
#include "cu_objects.h"
#include "cu_sha256.h"
#include "cu_topology.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A copy of the object m (NULL: null) with its keys sorted, as Go writes a
 * map; a non-object is shared as it is. */
static json_object *sorted_map(json_object *m)
{
    if (!json_object_is_type(m, json_type_object))
        return json_object_get(m);
    size_t n = (size_t)json_object_object_length(m), i = 0;
    const char **keys = calloc(n ? n : 1, sizeof(*keys));
    if (!keys)
        return NULL;
    json_object_object_foreach (m, k, v) {
        (void)v;
        keys[i++] = k;
    }
    qsort(keys, n, sizeof(*keys), cmp_str);
    json_object *o = json_object_new_object();
    for (i = 0; o && i < n; i++)
        json_object_object_add(o, keys[i], json_object_get(cu_jget(m, keys[i])));
    free(keys);
    return o;
}

/* A copy of the array a of objects with each item's fields in the order
 * order (Go's struct order; fields not named dropped), NULL when a is not
 * an array. */
static json_object *ordered_items(json_object *a, const char *const *order)
{
    if (!json_object_is_type(a, json_type_array))
        return NULL;
    json_object *out = json_object_new_array();
    for (size_t i = 0, n = json_object_array_length(a); out && i < n; i++) {
        json_object *it = json_object_array_get_idx(a, i), *o = json_object_new_object();
        for (size_t k = 0; order[k]; k++) {
            json_object *v = NULL;
            if (json_object_object_get_ex(it, order[k], &v))
                json_object_object_add(o, order[k], json_object_get(v));
        }
        json_object_array_add(out, o);
    }
    return out;
}

static const char *const PORT_FIELDS[] = { "name",     "hostPort", "containerPort",
                                           "protocol", "hostIP",   NULL };
static const char *const TOLERATION_FIELDS[] = { "key",    "operator",          "value",
                                                 "effect", "tolerationSeconds", NULL };

/* Kueue's shape of a container list: each container's requests and ports;
 * null for none */
static json_object *containers_shape(json_object *cs)
{
    size_t n = cu_jarr_len(cs);
    if (!n)
        return NULL;
    json_object *out = json_object_new_array();
    for (size_t i = 0; out && i < n; i++) {
        json_object *c = json_object_array_get_idx(cs, i);
        json_object *o = json_object_new_object(), *res = json_object_new_object();
        json_object_object_add(o, "ports", ordered_items(cu_jget(c, "ports"), PORT_FIELDS));
        json_object_object_add(res, "requests", sorted_map(cu_jpath(c, "resources.requests")));
        json_object_object_add(o, "resources", res);
        json_object_array_add(out, o);
    }
    return out;
}

int cu_pod_role_hash(json_object *spec, char out[9])
{
    out[0] = '\0';
    json_object *sh = json_object_new_object(), *s = json_object_new_object();
    if (!sh || !s) {
        json_object_put(sh);
        json_object_put(s);
        return -1;
    }
    /* Go writes a map's keys sorted: this is their order */
    json_object_object_add(s, "affinity", json_object_get(cu_jget(spec, "affinity")));
    json_object_object_add(s, "containers", containers_shape(cu_jget(spec, "containers")));
    json_object_object_add(s, "initContainers", containers_shape(cu_jget(spec, "initContainers")));
    json_object_object_add(s, "nodeSelector", sorted_map(cu_jget(spec, "nodeSelector")));
    json_object_object_add(s, "overhead", sorted_map(cu_jget(spec, "overhead")));
    json_object_object_add(s, "priority", json_object_get(cu_jget(spec, "priority")));
    json_object_object_add(s, "resourceClaims", json_object_get(cu_jget(spec, "resourceClaims")));
    json_object_object_add(s, "runtimeClassName",
                           json_object_get(cu_jget(spec, "runtimeClassName")));
    json_object_object_add(s, "tolerations",
                           ordered_items(cu_jget(spec, "tolerations"), TOLERATION_FIELDS));
    json_object_object_add(s, "topologySpreadConstraints",
                           json_object_get(cu_jget(spec, "topologySpreadConstraints")));
    json_object_object_add(sh, "spec", s);
    const char *txt =
        json_object_to_json_string_ext(sh, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    char hex[65];
    int rc = txt ? cu_sha256_hex(txt, strlen(txt), hex) : -1;
    json_object_put(sh);
    if (rc != 0)
        return -1;
    memcpy(out, hex, 8);
    out[8] = '\0';
    return 0;
}

int cu_pod_role(json_object *pod, char out[CU_POD_ROLE_MAX + 1])
{
    const char *a = cu_jstr(cu_jpath(pod, "metadata.annotations"), CU_ANN_POD_ROLE_HASH);
    if (a) {
        snprintf(out, CU_POD_ROLE_MAX + 1, "%s", a);
        return 0;
    }
    return cu_pod_role_hash(cu_jget(pod, "spec"), out);
}

const char *cu_pod_workload_name(cu_arena *a, const char *pod_name, const char *uid)
{
    return cu_owner_workload_name(a, "Pod", "", pod_name, uid);
}

int cu_pod_terminated(json_object *pod)
{
    const char *ph = cu_jpath_str(pod, "status.phase");
    return ph && (strcmp(ph, "Succeeded") == 0 || strcmp(ph, "Failed") == 0);
}

int cu_pod_runnable(json_object *pod)
{
    const char *ph = cu_jpath_str(pod, "status.phase"), *node = cu_jpath_str(pod, "spec.nodeName");
    if (cu_jpath(pod, "metadata.deletionTimestamp") && (!node || !*node))
        return 0;
    return !ph || strcmp(ph, "Failed") != 0;
}

int cu_pod_group_total(const char *v, int32_t *out)
{
    if (!v || !*v)
        return 0;
    char *end = NULL;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (errno || *end || n < 1 || n > INT32_MAX)
        return 0;
    *out = (int32_t)n;
    return 1;
}

static const char *group_queue(json_object *pod)
{
    const char *q = cu_jstr(cu_jpath(pod, "metadata.labels"), CU_LABEL_QUEUE_NAME);
    return q ? q : "";
}

static const char *group_count(json_object *pod)
{
    return cu_jstr(cu_jpath(pod, "metadata.annotations"), CU_ANN_POD_GROUP_TOTAL_COUNT);
}

int cu_pod_group_disagree(json_object *const *pods, size_t n, int32_t *total, size_t *bad,
                          char *why, size_t whyn)
{
    *bad = 0;
    const char *n0 = cu_jpath_str(pods[0], "metadata.name");
    n0 = n0 ? n0 : "";
    if (!cu_pod_group_total(group_count(pods[0]), total)) {
        const char *ns = cu_jpath_str(pods[0], "metadata.namespace");
        snprintf(why, whyn,
                 "Pod %s/%s: metadata.annotations[" CU_ANN_POD_GROUP_TOTAL_COUNT
                 "]: must be an integer greater than zero",
                 ns ? ns : "", n0);
        return 1;
    }
    for (size_t i = 1; i < n; i++) {
        int32_t t = 0;
        const char *ni = cu_jpath_str(pods[i], "metadata.name");
        ni = ni ? ni : "";
        *bad = i;
        if (!cu_pod_group_total(group_count(pods[i]), &t) || t != *total) {
            snprintf(why, whyn, "pods '%s' and '%s' has different '%s' values: %d!=%d", n0, ni,
                     CU_ANN_POD_GROUP_TOTAL_COUNT, (int)*total, (int)t);
            return 1;
        }
        if (strcmp(group_queue(pods[0]), group_queue(pods[i])) != 0) {
            snprintf(why, whyn, "pods '%s' and '%s' has different queue names: %s!=%s", n0, ni,
                     group_queue(pods[0]), group_queue(pods[i]));
            return 1;
        }
    }
    *bad = 0;
    return 0;
}

int cu_pod_group_finished(int32_t succeeded, int32_t total, int any_active, int unretriable,
                          char *msg, size_t n)
{
    if (succeeded != total && (any_active || !unretriable))
        return 0;
    snprintf(msg, n, "Pods succeeded: %d/%d.", (int)succeeded, (int)total);
    return 1;
}

/* The Workload both shapes share: metadata (name, namespace), spec
 * (queueName, the priority class of pod) */
static json_object *wl_base(json_object *pod, const char *name, cu_diag *d)
{
    const char *ns = cu_jpath_str(pod, "metadata.namespace"),
               *pname = cu_jpath_str(pod, "metadata.name");
    json_object *labels = cu_jpath(pod, "metadata.labels");
    const char *queue = cu_jstr(labels, CU_LABEL_QUEUE_NAME);
    if (!queue || !*queue) {
        cu_diag_error(d, "Pod %s/%s: metadata.labels: no " CU_LABEL_QUEUE_NAME " label",
                      ns ? ns : "?", pname ? pname : "?");
        return NULL;
    }
    if (!json_object_is_type(cu_jget(pod, "spec"), json_type_object)) {
        cu_diag_error(d, "Pod %s/%s: spec: missing or not an object", ns ? ns : "?",
                      pname ? pname : "?");
        return NULL;
    }
    json_object *wl = json_object_new_object(), *md = json_object_new_object();
    json_object *spec = json_object_new_object();
    json_object_object_add(wl, "apiVersion", json_object_new_string(CU_GROUP "/v1beta2"));
    json_object_object_add(wl, "kind", json_object_new_string("Workload"));
    json_object_object_add(wl, "metadata", md);
    json_object_object_add(md, "name", json_object_new_string(name));
    json_object_object_add(md, "namespace", json_object_new_string(ns ? ns : ""));
    json_object_object_add(wl, "spec", spec);
    json_object_object_add(spec, "queueName", json_object_new_string(queue));
    const char *pcgroup, *pckind, *pcname;
    if (cu_job_priority_ref(cu_jstr(labels, CU_LABEL_PRIORITY_CLASS),
                            cu_jpath_str(pod, "spec.priorityClassName"), &pcgroup, &pckind,
                            &pcname)) {
        json_object *ref = json_object_new_object();
        json_object_object_add(ref, "group", json_object_new_string(pcgroup));
        json_object_object_add(ref, "kind", json_object_new_string(pckind));
        json_object_object_add(ref, "name", json_object_new_string(pcname));
        json_object_object_add(spec, "priorityClassRef", ref);
    }
    return wl;
}

static json_object *owner_ref(json_object *pod, int controller)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "apiVersion", json_object_new_string("v1"));
    json_object_object_add(o, "kind", json_object_new_string("Pod"));
    json_object_object_add(o, "name", json_object_new_string(cu_jpath_str(pod, "metadata.name")));
    json_object_object_add(o, "uid", json_object_new_string(cu_jpath_str(pod, "metadata.uid")));
    if (controller) {
        json_object_object_add(o, "controller", json_object_new_boolean(1));
        json_object_object_add(o, "blockOwnerDeletion", json_object_new_boolean(1));
    }
    return o;
}

static json_object *pod_set(const char *name, int32_t count, json_object *pod)
{
    json_object *ps = json_object_new_object(), *t = json_object_new_object();
    json_object_object_add(ps, "name", json_object_new_string(name));
    json_object_object_add(ps, "count", json_object_new_int(count));
    json_object_object_add(t, "spec", cu_jcopy(cu_jget(pod, "spec")));
    json_object_object_add(ps, "template", t);
    cu_topo_request_add(ps, pod, CU_LABEL_POD_GROUP_INDEX, NULL, NULL);
    return ps;
}

json_object *cu_pod_workload(json_object *pod, cu_diag *d)
{
    const char *name = cu_jpath_str(pod, "metadata.name"), *uid = cu_jpath_str(pod, "metadata.uid");
    if (!name || !uid || !cu_jpath_str(pod, "metadata.namespace")) {
        cu_diag_error(d, "Pod %s: metadata: name, namespace and uid are required",
                      name ? name : "?");
        return NULL;
    }
    cu_arena a;
    cu_arena_init(&a, 0);
    const char *wlname = cu_pod_workload_name(&a, name, uid);
    json_object *wl = wlname ? wl_base(pod, wlname, d) : NULL;
    cu_arena_free(&a);
    if (!wl)
        return NULL;
    json_object *md = cu_jget(wl, "metadata"), *labels = json_object_new_object();
    json_object *owners = json_object_new_array(), *podsets = json_object_new_array();
    json_object_object_add(labels, "kueue.x-k8s.io/job-uid", json_object_new_string(uid));
    json_object_object_add(md, "labels", labels);
    json_object_array_add(owners, owner_ref(pod, 1));
    json_object_object_add(md, "ownerReferences", owners);
    json_object_array_add(podsets, pod_set("main", 1, pod));
    json_object_object_add(cu_jget(wl, "spec"), "podSets", podsets);
    return wl;
}

typedef struct role {
    char name[CU_POD_ROLE_MAX + 1];
    int32_t count;
    json_object *first;
} role;

static int cmp_role(const void *a, const void *b)
{
    return strcmp(((const role *)a)->name, ((const role *)b)->name);
}

json_object *cu_pod_group_workload(const char *group, json_object *const *pods, size_t n,
                                   cu_diag *d)
{
    if (!n || !group || !*group) {
        cu_diag_error(d, "pod group %s: no pods", group ? group : "?");
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        if (!cu_jpath_str(pods[i], "metadata.name") || !cu_jpath_str(pods[i], "metadata.uid")) {
            cu_diag_error(d, "pod group %s: a pod has no metadata.name or metadata.uid", group);
            return NULL;
        }
    role *roles = calloc(n, sizeof(*roles));
    if (!roles) {
        cu_diag_error(d, "pod group %s: out of memory", group);
        return NULL;
    }
    size_t nr = 0;
    for (size_t i = 0; i < n; i++) {
        char r[CU_POD_ROLE_MAX + 1];
        if (cu_pod_role(pods[i], r) != 0) {
            cu_diag_error(d, "pod group %s: pod %s: its role hash cannot be computed", group,
                          cu_jpath_str(pods[i], "metadata.name"));
            free(roles);
            return NULL;
        }
        size_t k = 0;
        while (k < nr && strcmp(roles[k].name, r) != 0)
            k++;
        if (k == nr) {
            memcpy(roles[nr].name, r, sizeof(r));
            roles[nr++].first = pods[i];
        }
        roles[k].count++;
    }
    if (nr > 8) {
        /* Kueue's limit: a Workload has at most 8 pod sets */
        cu_diag_error(d,
                      "pod group %s: its pods have %zu different shapes (role hashes); a "
                      "Workload has at most 8 pod sets",
                      group, nr);
        free(roles);
        return NULL;
    }
    qsort(roles, nr, sizeof(*roles), cmp_role);
    json_object *wl = wl_base(pods[0], group, d);
    if (!wl) {
        free(roles);
        return NULL;
    }
    json_object *md = cu_jget(wl, "metadata"), *ann = json_object_new_object();
    json_object_object_add(ann, CU_ANN_IS_GROUP_WORKLOAD, json_object_new_string("true"));
    json_object_object_add(md, "annotations", ann);
    json_object *owners = json_object_new_array();
    for (size_t i = 0; i < n; i++)
        json_object_array_add(owners, owner_ref(pods[i], 0));
    json_object_object_add(md, "ownerReferences", owners);
    json_object *podsets = json_object_new_array();
    for (size_t k = 0; k < nr; k++)
        json_object_array_add(podsets, pod_set(roles[k].name, roles[k].count, roles[k].first));
    json_object_object_add(cu_jget(wl, "spec"), "podSets", podsets);
    free(roles);
    return wl;
}
