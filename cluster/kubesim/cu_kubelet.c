/*
 * cu_kubelet.c - the kubelet model of the simulated cluster.
 *
 * The kubelet model: a bound pod goes Running at once; with the annotation
 * cueue.dev/simulated-runtime (a Go duration) it Succeeds that long after
 * its (second-precision) startTime, all containers exiting 0; a malformed
 * annotation is ignored (the pod runs until deleted). A pod being deleted
 * goes Failed (containers exit 137), so the store can drop it once its
 * finalizers are gone.
 */
#include "ks_int.h"
#include "cu_duration.h"
#include "cu_hash.h"

/* ================= Go durations ================= */

cu_err cu_kubesim_parse_duration(const char *s, int64_t *ms)
{
    if (!s || *s == '-')
        return CU_EINVAL; /* a runtime is never negative, not even -0 */
    return cu_duration_parse_ms(s, ms);
}

/* ================= the kubelet ================= */

static void ctr_statuses(json_object *pod, json_object *status, const char *list_key,
                         const char *status_key, int phase, const char *started,
                         const char *finished, int exit_code)
{
    json_object *cs = cu_jpath(pod, list_key), *arr = json_object_new_array();
    for (size_t i = 0; i < cu_jarr_len(cs); i++) {
        json_object *c = jidx(cs, i), *o = json_object_new_object(), *state, *sub;
        const char *cname = cu_jstr(c, "name") ? cu_jstr(c, "name") : "";
        char cid[96];
        int sidecar = str_eq(cu_jstr(c, "restartPolicy"), "Always");
        int init = strcmp(status_key, "initContainerStatuses") == 0;
        int run = phase == 1 && (!init || sidecar);
        snprintf(cid, sizeof cid, "containerd://%016" PRIx64,
                 cu_hash_field(cu_hash_field(CU_HASH_INIT, ks_uid_of(pod)), cname));
        cu_jset_str(o, "name", cname);
        cu_jset_str(o, "image", cu_jstr(c, "image") ? cu_jstr(c, "image") : "");
        cu_jset_str(o, "imageID", "");
        cu_jset_str(o, "containerID", cid);
        json_object_object_add(o, "ready", json_object_new_boolean(run));
        json_object_object_add(o, "started", json_object_new_boolean(run));
        cu_jset_int(o, "restartCount", 0);
        state = json_object_new_object();
        if (run) {
            sub = cu_jchild(state, "running");
            cu_jset_str(sub, "startedAt", started);
        } else {
            int code = (init && phase == 1) ? 0 : exit_code;
            sub = cu_jchild(state, "terminated");
            cu_jset_int(sub, "exitCode", code);
            cu_jset_str(sub, "reason", code == 0 ? "Completed" : "Error");
            cu_jset_str(sub, "startedAt", started);
            cu_jset_str(sub, "finishedAt", finished);
            cu_jset_str(sub, "containerID", cid);
        }
        json_object_object_add(o, "state", state);
        json_object_object_add(o, "lastState", json_object_new_object());
        json_object_array_add(arr, o);
    }
    if (cu_jarr_len(arr))
        json_object_object_add(status, status_key, arr);
    else
        json_object_put(arr);
}

/* phase: 1 Running, 2 Succeeded, 3 Failed (deleted). */
static int pod_transition(cu_store *s, const ks_types *t, json_object *pod, int phase,
                          const char *host_ip, const char *ts)
{
    json_object *copy = cu_jcopy(pod), *st;
    const char *started;
    char ip[32];
    if (!copy)
        return 0;
    st = cu_jchild(copy, "status");
    started = cu_jstr(st, "startTime") ? cu_jstr(st, "startTime") : ts;
    if (phase == 1) {
        uint64_t h = cu_hash_field(CU_HASH_INIT, ks_uid_of(pod));
        cu_jset_str(st, "phase", "Running");
        cu_jset_str(st, "startTime", ts);
        started = ts;
        if (host_ip) {
            json_object *ips = json_object_new_array(), *e = json_object_new_object();
            cu_jset_str(st, "hostIP", host_ip);
            cu_jset_str(e, "ip", host_ip);
            json_object_array_add(ips, e);
            json_object_object_add(st, "hostIPs", ips);
        }
        snprintf(ip, sizeof ip, "10.244.%u.%u", (unsigned)(h % 250),
                 (unsigned)((h >> 8) % 250 + 2));
        cu_jset_str(st, "podIP", ip);
        json_object *pips = json_object_new_array(), *e = json_object_new_object();
        cu_jset_str(e, "ip", ip);
        json_object_array_add(pips, e);
        json_object_object_add(st, "podIPs", pips);
        ks_cond_set(st, "PodReadyToStartContainers", "True", NULL, NULL, ts, 0);
        ks_cond_set(st, "Initialized", "True", NULL, NULL, ts, 0);
        ks_cond_set(st, "Ready", "True", NULL, NULL, ts, 0);
        ks_cond_set(st, "ContainersReady", "True", NULL, NULL, ts, 0);
        ks_cond_set(st, "PodScheduled", "True", NULL, NULL, ts, 0);
    } else {
        cu_jset_str(st, "phase", phase == 2 ? "Succeeded" : "Failed");
        if (!cu_jget(st, "startTime"))
            cu_jset_str(st, "startTime", ts);
        ks_cond_set(st, "PodReadyToStartContainers", "False", NULL, NULL, ts, 0);
        ks_cond_set(st, "Ready", "False", "PodCompleted", NULL, ts, 0);
        ks_cond_set(st, "ContainersReady", "False", "PodCompleted", NULL, ts, 0);
    }
    if (!cu_jget(st, "qosClass"))
        cu_jset_str(st, "qosClass", ks_pod_qos(cu_jget(pod, "spec")));
    ctr_statuses(pod, st, "spec.initContainers", "initContainerStatuses", phase, started, ts,
                 phase == 3 ? 137 : 0);
    ctr_statuses(pod, st, "spec.containers", "containerStatuses", phase, started, ts,
                 phase == 3 ? 137 : 0);
    return ks_put(s, t->pods, copy, "status", NULL);
}

static const char *node_ip(json_object *node)
{
    json_object *a = cu_jpath(node, "status.addresses");
    for (size_t i = 0; i < cu_jarr_len(a); i++)
        if (str_eq(cu_jstr(jidx(a, i), "type"), "InternalIP"))
            return cu_jstr(jidx(a, i), "address");
    return NULL;
}

static int cmp_node_name(const void *a, const void *b)
{
    const char *x = ks_name_of(*(json_object *const *)a), *y = ks_name_of(*(json_object *const *)b);
    return strcmp(x ? x : "", y ? y : "");
}

static int cmp_key_node(const void *key, const void *b)
{
    const char *y = ks_name_of(*(json_object *const *)b);
    return strcmp((const char *)key, y ? y : "");
}

int cu_kubesim_kubelet(cu_store *s, int64_t now_ms, int64_t *next_due_ms)
{
    json_object **byname = NULL;
    size_t nnodes;
    ks_types t;
    json_object *nl, *pl, *nodes, *pods;
    int writes = 0;
    char ts[32];
    if (ks_types_get(s, &t) != 0)
        return 0;
    fmt_time(now_ms, ts);
    nl = ks_list(s, t.nodes, NULL, NULL);
    pl = ks_list(s, t.pods, NULL, NULL);
    nodes = cu_jget(nl, "items");
    pods = cu_jget(pl, "items");
    /* the nodes by name, for one lookup per pod */
    nnodes = cu_jarr_len(nodes);
    byname = calloc(nnodes ? nnodes : 1, sizeof(*byname));
    if (!byname)
        nnodes = 0;
    for (size_t k = 0; k < nnodes; k++)
        byname[k] = jidx(nodes, k);
    if (nnodes)
        qsort(byname, nnodes, sizeof(*byname), cmp_node_name);
    for (size_t i = 0; pl && nl && i < cu_jarr_len(pods); i++) {
        json_object *p = jidx(pods, i), *node = NULL;
        const char *ph = cu_jpath_str(p, "status.phase"), *nn = cu_jpath_str(p, "spec.nodeName");
        if (ks_phase_terminal(p))
            continue;
        if (cu_jpath(p, "metadata.deletionTimestamp")) {
            /* the kubelet kills it (or, unbound, the pod GC fails it) */
            writes += pod_transition(s, &t, p, 3, NULL, ts);
            continue;
        }
        if (!nn)
            continue;
        json_object **hit = nnodes ? bsearch(nn, byname, nnodes, sizeof(*byname), cmp_key_node)
                                   : NULL;
        if (!hit)
            continue;
        node = *hit;
        if (!ph || str_eq(ph, "Pending")) {
            writes += pod_transition(s, &t, p, 1, node_ip(node), ts);
            ph = "Running";
            /* its runtime counts from the second-precision startTime */
            int64_t rt, start = now_ms - now_ms % 1000;
            json_object *a = cu_jget(cu_jpath(p, "metadata.annotations"), KS_RUNTIME_ANNOTATION);
            if (a && cu_kubesim_parse_duration(cu_jas_str(a), &rt) == CU_OK && next_due_ms &&
                start + rt < *next_due_ms)
                *next_due_ms = start + rt;
            continue;
        }
        if (str_eq(ph, "Running")) {
            json_object *a = cu_jget(cu_jpath(p, "metadata.annotations"), KS_RUNTIME_ANNOTATION);
            int64_t rt, start;
            if (!a || cu_kubesim_parse_duration(cu_jas_str(a), &rt) != CU_OK)
                continue; /* runs until deleted */
            if (!cu_jpath_str(p, "status.startTime") ||
                cu_time_parse(cu_jpath_str(p, "status.startTime"), &start) != CU_OK)
                start = now_ms;
            if (now_ms >= start + rt)
                writes += pod_transition(s, &t, p, 2, NULL, ts);
            else if (next_due_ms && start + rt < *next_due_ms)
                *next_due_ms = start + rt;
        }
    }
    free(byname);
    if (nl)
        json_object_put(nl);
    if (pl)
        json_object_put(pl);
    return writes;
}
