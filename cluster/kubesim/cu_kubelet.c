/*
 * cu_kubelet.c - the kubelet model of the simulated cluster.
 *
 * The kubelet model: a bound pod goes Running at once; with the annotation
 * cueue.dev/simulated-runtime (a Go duration), or else when each of its
 * containers runs a plain `sleep N` (ks_pod_runtime), it Succeeds that long
 * after its (second-precision) startTime, all containers exiting 0; a
 * malformed annotation is ignored and a pod with neither runs until
 * deleted. A pod being deleted
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

/* The duration of sleep's operand (GNU sleep: a non-negative decimal
 * number with an optional unit s, m, h or d) in ms, or -1. */
static int64_t sleep_operand_ms(const char *s)
{
    size_t n = s ? strlen(s) : 0, i = 0, digits = 0;
    while (i < n && s[i] >= '0' && s[i] <= '9')
        i++, digits++;
    if (i < n && s[i] == '.')
        for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++)
            digits++;
    if (!digits || n - i > 1)
        return -1;
    double unit = 1000;
    if (i < n) {
        switch (s[i]) {
        case 's': break;
        case 'm': unit = 60e3; break;
        case 'h': unit = 3600e3; break;
        case 'd': unit = 86400e3; break;
        default: return -1;
        }
    }
    double ms = strtod(s, NULL) * unit;
    return ms >= 0 && ms < 1e15 ? (int64_t)ms : -1;
}

/* 1 if argv[0] is the program prog, by itself or with a directory. */
static int is_prog(const char *arg, const char *prog)
{
    const char *sl = strrchr(arg, '/');
    return str_eq(sl ? sl + 1 : arg, prog);
}

/* A container's run time from its command: `sleep N` (command and args
 * together, or args alone without a command), or a shell running exactly
 * `sleep N` (`sh -c "sleep 60"`, also bash, and with `exec`). -1 for
 * anything else. */
static int64_t ctr_sleep_ms(json_object *ctr)
{
    const char *argv[8];
    size_t argc = 0;
    json_object *lists[2] = { cu_jget(ctr, "command"), cu_jget(ctr, "args") };
    for (int l = 0; l < 2; l++)
        for (size_t i = 0; i < cu_jarr_len(lists[l]); i++) {
            const char *a = cu_jas_str(jidx(lists[l], i));
            if (!a || argc == sizeof(argv) / sizeof(argv[0]))
                return -1;
            argv[argc++] = a;
        }
    if (argc == 2 && is_prog(argv[0], "sleep"))
        return sleep_operand_ms(argv[1]);
    if (argc != 3 || !(is_prog(argv[0], "sh") || is_prog(argv[0], "bash")) ||
        !str_eq(argv[1], "-c"))
        return -1;
    /* the script's words: at most 3 (exec sleep N), each under 64 bytes */
    char word[4][64];
    int nw = 0;
    for (const char *p = argv[2]; *p;) {
        while (*p == ' ' || *p == '\t' || *p == '\n')
            p++;
        size_t l = strcspn(p, " \t\n");
        if (!l)
            break;
        if (nw == 3 || l >= sizeof(word[0]))
            return -1;
        memcpy(word[nw], p, l);
        word[nw++][l] = '\0';
        p += l;
    }
    int first = nw == 3 && str_eq(word[0], "exec") ? 1 : 0;
    if (nw - first != 2 || !str_eq(word[first], "sleep"))
        return -1;
    return sleep_operand_ms(word[first + 1]);
}

int64_t ks_pod_runtime(json_object *pod)
{
    json_object *a = cu_jget(cu_jpath(pod, "metadata.annotations"), KS_RUNTIME_ANNOTATION);
    int64_t rt;
    if (a)
        return cu_kubesim_parse_duration(cu_jas_str(a), &rt) == CU_OK ? rt : -1;
    /* no annotation: the longest `sleep N` of its containers, when every
     * container sleeps (one that does not runs until deleted) */
    json_object *ctrs = cu_jpath(pod, "spec.containers");
    rt = -1;
    for (size_t i = 0; i < cu_jarr_len(ctrs); i++) {
        int64_t c = ctr_sleep_ms(jidx(ctrs, i));
        if (c < 0)
            return -1;
        if (c > rt)
            rt = c;
    }
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
