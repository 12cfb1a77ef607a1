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

int64_t ks_pod_runtime(json_object *pod)
{
    json_object *a = cu_jget(cu_jpath(pod, "metadata.annotations"), KS_RUNTIME_ANNOTATION);
    int64_t rt;
    if (!a || cu_kubesim_parse_duration(cu_jas_str(a), &rt) != CU_OK)
        return -1;
    return rt;
}

int ks_kubelet_pod(cu_store *s, const ks_types *t, json_object *p, json_object *node,
                   int64_t now_ms, const char *ts, int64_t *next_due_ms)
{
    const char *ph = cu_jpath_str(p, "status.phase");
    if (ks_phase_terminal(p))
        return 0;
    if (cu_jpath(p, "metadata.deletionTimestamp")) {
        /* the kubelet kills it (or, unbound, the pod GC fails it) */
        return pod_transition(s, t, p, 3, NULL, ts);
    }
    if (!cu_jpath_str(p, "spec.nodeName") || !node)
        return 0;
    if (!ph || str_eq(ph, "Pending")) {
        int w = pod_transition(s, t, p, 1, node_ip(node), ts);
        /* its runtime counts from the second-precision startTime */
        int64_t rt = ks_pod_runtime(p), start = now_ms - now_ms % 1000;
        if (rt >= 0 && next_due_ms && start + rt < *next_due_ms)
            *next_due_ms = start + rt;
        return w;
    }
    if (str_eq(ph, "Running")) {
        int64_t rt = ks_pod_runtime(p), start;
        if (rt < 0)
            return 0; /* runs until deleted */
        if (!cu_jpath_str(p, "status.startTime") ||
            cu_time_parse(cu_jpath_str(p, "status.startTime"), &start) != CU_OK)
            start = now_ms;
        if (now_ms >= start + rt)
            return pod_transition(s, t, p, 2, NULL, ts);
        if (next_due_ms && start + rt < *next_due_ms)
            *next_due_ms = start + rt;
    }
    return 0;
}

int ks_kubelet_pass(ks_state *st, cu_store *s, int64_t now_ms, int64_t *next_due_ms, int max_writes,
                    const volatile int *stop, int *more)
{
    ks_types t;
    ks_world *w = &st->w;
    int writes = 0;
    char ts[32];
    if (more)
        *more = 0;
    if (ks_types_get(s, &t) != 0 || ks_state_sync(st, s) != 0)
        return 0;
    fmt_time(now_ms, ts);
    for (size_t i = 0; i < w->npods; i++) {
        ks_pod *p = &w->pods[i];
        ks_node *n = NULL;
        int act = 0;
        if (!p->inuse || p->terminal)
            continue;
        if (p->node) {
            int k = cu_strmap_get(&w->node_ix, p->node);
            n = k >= 0 && w->nodes[k].live ? &w->nodes[k] : NULL;
        }
        if (p->deleting) {
            act = 1;
        } else if (!n) {
            continue;
        } else if (p->waiting) {
            act = 1;
        } else if (p->running && p->has_rt) {
            int64_t due = (p->start_ms >= 0 ? p->start_ms : now_ms) + p->rt_ms;
            if (now_ms >= due)
                act = 1;
            else if (next_due_ms && due < *next_due_ms)
                *next_due_ms = due;
        }
        if (!act)
            continue;
        if ((max_writes > 0 && writes >= max_writes) || (stop && *stop)) {
            if (more)
                *more = 1;
            break;
        }
        cu_status cst;
        json_object *obj = NULL;
        if (cu_store_get(s, t.pods, p->ns, p->name, &obj, &cst) != CU_OK)
            continue;
        writes += ks_kubelet_pod(s, &t, obj, n ? n->obj : NULL, now_ms, ts, next_due_ms);
        json_object_put(obj);
    }
    return writes;
}

int cu_kubesim_kubelet(cu_store *s, int64_t now_ms, int64_t *next_due_ms)
{
    ks_state *st = ks_state_new(0);
    int writes = 0;
    if (!st)
        return 0;
    writes = ks_kubelet_pass(st, s, now_ms, next_due_ms, 0, NULL, NULL);
    ks_state_free(st);
    return writes;
}
