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

/* ================= Go durations ================= */

cu_err cu_kubesim_parse_duration(const char *s, int64_t *ms)
{
    static const struct { const char *u; int64_t ns; } units[] = {
        { "ns", 1 }, { "us", 1000 }, { "\xc2\xb5s", 1000 }, { "\xce\xbcs", 1000 },
        { "ms", 1000000 }, { "s", 1000000000LL }, { "m", 60000000000LL },
        { "h", 3600000000000LL },
    };
    long double total = 0;
    const char *p = s;
    if (!s || !*s)
        return CU_EINVAL;
    if (*p == '+')
        p++;
    else if (*p == '-')
        return CU_EINVAL;
    if (strcmp(p, "0") == 0) {
        *ms = 0;
        return CU_OK;
    }
    if (!*p)
        return CU_EINVAL;
    while (*p) {
        long double v = 0, frac = 0, scale = 1;
        int digits = 0;
        size_t best = 0, bi = 0;
        while (*p >= '0' && *p <= '9') {
            v = v * 10 + (*p++ - '0');
            digits++;
        }
        if (*p == '.') {
            p++;
            while (*p >= '0' && *p <= '9') {
                scale /= 10;
                frac += (*p++ - '0') * scale;
                digits++;
            }
        }
        if (!digits)
            return CU_EINVAL;
        for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
            size_t n = strlen(units[i].u);
            if (strncmp(p, units[i].u, n) == 0 && n > best) {
                best = n;
                bi = i;
            }
        }
        if (!best)
            return CU_EINVAL; /* a number without a unit */
        p += best;
        total += (v + frac) * (long double)units[bi].ns;
        if (total > (long double)INT64_MAX)
            return CU_EINVAL;
    }
    *ms = (int64_t)(total / 1000000.0L);
    return CU_OK;
}

/* ================= the kubelet ================= */

static void ctr_statuses(json_object *pod, json_object *status, const char *list_key,
                         const char *status_key, int phase, const char *started,
                         const char *finished, int exit_code)
{
    json_object *cs = jpath(pod, list_key), *arr = json_object_new_array();
    for (size_t i = 0; i < jlen(cs); i++) {
        json_object *c = jidx(cs, i), *o = json_object_new_object(), *state, *sub;
        const char *cname = jstr(jget(c, "name")) ? jstr(jget(c, "name")) : "";
        char cid[96];
        int sidecar = str_eq(jstr(jget(c, "restartPolicy")), "Always");
        int init = strcmp(status_key, "initContainerStatuses") == 0;
        int run = phase == 1 && (!init || sidecar);
        snprintf(cid, sizeof cid, "containerd://%016" PRIx64,
                 ks_fnv1a(ks_fnv1a(0, ks_uid_of(pod)), cname));
        jset_str(o, "name", cname);
        jset_str(o, "image", jstr(jget(c, "image")) ? jstr(jget(c, "image")) : "");
        jset_str(o, "imageID", "");
        jset_str(o, "containerID", cid);
        json_object_object_add(o, "ready", json_object_new_boolean(run));
        json_object_object_add(o, "started", json_object_new_boolean(run));
        jset_int(o, "restartCount", 0);
        state = json_object_new_object();
        if (run) {
            sub = jchild(state, "running");
            jset_str(sub, "startedAt", started);
        } else {
            int code = (init && phase == 1) ? 0 : exit_code;
            sub = jchild(state, "terminated");
            jset_int(sub, "exitCode", code);
            jset_str(sub, "reason", code == 0 ? "Completed" : "Error");
            jset_str(sub, "startedAt", started);
            jset_str(sub, "finishedAt", finished);
            jset_str(sub, "containerID", cid);
        }
        json_object_object_add(o, "state", state);
        json_object_object_add(o, "lastState", json_object_new_object());
        json_object_array_add(arr, o);
    }
    if (jlen(arr))
        json_object_object_add(status, status_key, arr);
    else
        json_object_put(arr);
}

/* phase: 1 Running, 2 Succeeded, 3 Failed (deleted). */
static int pod_transition(cu_store *s, const ks_types *t, json_object *pod, int phase,
                          const char *host_ip, const char *ts)
{
    json_object *copy = jcopy(pod), *st;
    const char *started;
    char ip[32];
    if (!copy)
        return 0;
    st = jchild(copy, "status");
    started = jstr(jget(st, "startTime")) ? jstr(jget(st, "startTime")) : ts;
    if (phase == 1) {
        uint64_t h = ks_fnv1a(0, ks_uid_of(pod));
        jset_str(st, "phase", "Running");
        jset_str(st, "startTime", ts);
        started = ts;
        if (host_ip) {
            json_object *ips = json_object_new_array(), *e = json_object_new_object();
            jset_str(st, "hostIP", host_ip);
            jset_str(e, "ip", host_ip);
            json_object_array_add(ips, e);
            json_object_object_add(st, "hostIPs", ips);
        }
        snprintf(ip, sizeof ip, "10.244.%u.%u", (unsigned)(h % 250), (unsigned)((h >> 8) % 250 + 2));
        jset_str(st, "podIP", ip);
        json_object *pips = json_object_new_array(), *e = json_object_new_object();
        jset_str(e, "ip", ip);
        json_object_array_add(pips, e);
        json_object_object_add(st, "podIPs", pips);
        ks_cond_set(st, "PodReadyToStartContainers", "True", NULL, NULL, ts, 0);
        ks_cond_set(st, "Initialized", "True", NULL, NULL, ts, 0);
        ks_cond_set(st, "Ready", "True", NULL, NULL, ts, 0);
        ks_cond_set(st, "ContainersReady", "True", NULL, NULL, ts, 0);
        ks_cond_set(st, "PodScheduled", "True", NULL, NULL, ts, 0);
    } else {
        jset_str(st, "phase", phase == 2 ? "Succeeded" : "Failed");
        if (!jget(st, "startTime"))
            jset_str(st, "startTime", ts);
        ks_cond_set(st, "PodReadyToStartContainers", "False", NULL, NULL, ts, 0);
        ks_cond_set(st, "Ready", "False", "PodCompleted", NULL, ts, 0);
        ks_cond_set(st, "ContainersReady", "False", "PodCompleted", NULL, ts, 0);
    }
    if (!jget(st, "qosClass"))
        jset_str(st, "qosClass", ks_pod_qos(jget(pod, "spec")));
    ctr_statuses(pod, st, "spec.initContainers", "initContainerStatuses", phase, started, ts,
                 phase == 3 ? 137 : 0);
    ctr_statuses(pod, st, "spec.containers", "containerStatuses", phase, started, ts,
                 phase == 3 ? 137 : 0);
    return ks_put(s, t->pods, copy, "status", NULL);
}

static const char *node_ip(json_object *node)
{
    json_object *a = jpath(node, "status.addresses");
    for (size_t i = 0; i < jlen(a); i++)
        if (str_eq(jstr(jget(jidx(a, i), "type")), "InternalIP"))
            return jstr(jget(jidx(a, i), "address"));
    return NULL;
}

int cu_kubesim_kubelet(cu_store *s, int64_t now_ms, int64_t *next_due_ms)
{
    ks_types t;
    json_object *nl, *pl, *nodes, *pods;
    int writes = 0;
    char ts[32];
    if (ks_types_get(s, &t) != 0)
        return 0;
    fmt_time(now_ms, ts);
    nl = ks_list(s, t.nodes, NULL, NULL);
    pl = ks_list(s, t.pods, NULL, NULL);
    nodes = jget(nl, "items");
    pods = jget(pl, "items");
    for (size_t i = 0; pl && nl && i < jlen(pods); i++) {
        json_object *p = jidx(pods, i), *node = NULL;
        const char *ph = jpstr(p, "status.phase"), *nn = jpstr(p, "spec.nodeName");
        if (ks_phase_terminal(p))
            continue;
        if (jpath(p, "metadata.deletionTimestamp")) {
            /* the kubelet kills it (or, unbound, the pod GC fails it) */
            writes += pod_transition(s, &t, p, 3, NULL, ts);
            continue;
        }
        if (!nn)
            continue;
        for (size_t k = 0; k < jlen(nodes); k++)
            if (str_eq(ks_name_of(jidx(nodes, k)), nn))
                node = jidx(nodes, k);
        if (!node)
            continue;
        if (!ph || str_eq(ph, "Pending")) {
            writes += pod_transition(s, &t, p, 1, node_ip(node), ts);
            ph = "Running";
            /* its runtime counts from the second-precision startTime */
            int64_t rt, start = now_ms - now_ms % 1000;
            json_object *a = jget(jpath(p, "metadata.annotations"), KS_RUNTIME_ANNOTATION);
            if (a && cu_kubesim_parse_duration(jstr(a), &rt) == CU_OK && next_due_ms &&
                start + rt < *next_due_ms)
                *next_due_ms = start + rt;
            continue;
        }
        if (str_eq(ph, "Running")) {
            json_object *a = jget(jpath(p, "metadata.annotations"), KS_RUNTIME_ANNOTATION);
            int64_t rt, start;
            if (!a || cu_kubesim_parse_duration(jstr(a), &rt) != CU_OK)
                continue; /* runs until deleted */
            if (!jpstr(p, "status.startTime") ||
                cu_time_parse(jpstr(p, "status.startTime"), &start) != CU_OK)
                start = now_ms;
            if (now_ms >= start + rt)
                writes += pod_transition(s, &t, p, 2, NULL, ts);
            else if (next_due_ms && start + rt < *next_due_ms)
                *next_due_ms = start + rt;
        }
    }
    if (nl)
        json_object_put(nl);
    if (pl)
        json_object_put(pl);
    return writes;
}
