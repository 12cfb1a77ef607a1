/*
 * cu_simnodes.c - the Nodes of the simulated cluster: from a file (v1
 * Node YAML) or the default GPU set, with the status parts a kubelet
 * would post.
 */
#include "ks_int.h"
#include "cu_doc.h"

/* ================= nodes ================= */

static json_object *node_default_status_parts(json_object *node, const char *now, int idx)
{
    json_object *status = cu_jchild(node, "status");
    char ip[32];
    if (!cu_jget(status, "conditions")) {
        static const char *const pressure[][3] = {
            { "MemoryPressure", "KubeletHasSufficientMemory",
              "kubelet has sufficient memory available" },
            { "DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure" },
            { "PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available" },
        };
        json_object *conds = json_object_new_array();
        for (size_t i = 0; i < 3; i++) {
            json_object *c = json_object_new_object();
            cu_jset_str(c, "type", pressure[i][0]);
            cu_jset_str(c, "status", "False");
            cu_jset_str(c, "reason", pressure[i][1]);
            cu_jset_str(c, "message", pressure[i][2]);
            cu_jset_str(c, "lastHeartbeatTime", now);
            cu_jset_str(c, "lastTransitionTime", now);
            json_object_array_add(conds, c);
        }
        json_object *c = json_object_new_object();
        cu_jset_str(c, "type", "Ready");
        cu_jset_str(c, "status", "True");
        cu_jset_str(c, "reason", "KubeletReady");
        cu_jset_str(c, "message", "kubelet is posting ready status");
        cu_jset_str(c, "lastHeartbeatTime", now);
        cu_jset_str(c, "lastTransitionTime", now);
        json_object_array_add(conds, c);
        json_object_object_add(status, "conditions", conds);
    }
    if (!cu_jget(status, "addresses")) {
        json_object *a = json_object_new_array(), *e = json_object_new_object();
        snprintf(ip, sizeof ip, "10.0.%d.%d", idx / 250, idx % 250 + 2);
        cu_jset_str(e, "type", "InternalIP");
        cu_jset_str(e, "address", ip);
        json_object_array_add(a, e);
        e = json_object_new_object();
        cu_jset_str(e, "type", "Hostname");
        cu_jset_str(e, "address", ks_name_of(node) ? ks_name_of(node) : "");
        json_object_array_add(a, e);
        json_object_object_add(status, "addresses", a);
    }
    if (!cu_jget(status, "nodeInfo")) {
        json_object *ni = cu_jchild(status, "nodeInfo");
        cu_jset_str(ni, "kubeletVersion", "v1.32.0");
        cu_jset_str(ni, "kubeProxyVersion", "v1.32.0");
        cu_jset_str(ni, "containerRuntimeVersion", "containerd://1.7.24");
        cu_jset_str(ni, "operatingSystem", "linux");
        cu_jset_str(ni, "architecture", "amd64");
        cu_jset_str(ni, "osImage", "Cueue simulated node");
        cu_jset_str(ni, "kernelVersion", "6.1.0-cueue");
        cu_jset_str(ni, "machineID", "");
        cu_jset_str(ni, "systemUUID", "");
        cu_jset_str(ni, "bootID", "");
    }
    if (!cu_jget(status, "allocatable") && cu_jget(status, "capacity"))
        json_object_object_add(status, "allocatable", cu_jcopy(cu_jget(status, "capacity")));
    return node;
}

typedef struct defpool {
    const char *prefix;
    int count;
    const char *product, *itype, *lifecycle, *pool;
    const char *gpus, *cpu, *memory;
    const char *taint_key, *taint_value;
} defpool;

/* The default set: matches the ResourceFlavors of config/samples. */
static const defpool k_default_pools[] = {
    { "gpu-h100-", 4, "NVIDIA-H100-80GB-HBM3", "p5.48xlarge", "on-demand", NULL, "8", "96", "1Ti",
      NULL, NULL },
    { "gpu-a100-", 4, "NVIDIA-A100-SXM4-80GB", "p4de.24xlarge", "on-demand", NULL, "8", "96", "1Ti",
      NULL, NULL },
    { "spot-a100-", 2, "NVIDIA-A100-SXM4-80GB", "p4de.24xlarge", "spot", NULL, "8", "96", "1Ti",
      "cloud.example.com/spot", "true" },
    { "cpu-", 2, NULL, "m6i.8xlarge", "on-demand", "general", NULL, "32", "128Gi", NULL, NULL },
};

static json_object *default_node(const defpool *p, int i, int zone)
{
    char name[64];
    json_object *n = json_object_new_object(), *md, *lb, *cap;
    snprintf(name, sizeof name, "%s%d", p->prefix, i);
    cu_jset_str(n, "apiVersion", "v1");
    cu_jset_str(n, "kind", "Node");
    md = cu_jchild(n, "metadata");
    cu_jset_str(md, "name", name);
    lb = cu_jchild(md, "labels");
    cu_jset_str(lb, "kubernetes.io/hostname", name);
    cu_jset_str(lb, "kubernetes.io/os", "linux");
    cu_jset_str(lb, "kubernetes.io/arch", "amd64");
    cu_jset_str(lb, "node.kubernetes.io/instance-type", p->itype);
    cu_jset_str(lb, "node.kubernetes.io/lifecycle", p->lifecycle);
    cu_jset_str(lb, "topology.kubernetes.io/zone", zone ? "zone-b" : "zone-a");
    if (p->product) {
        cu_jset_str(lb, "nvidia.com/gpu.product", p->product);
        cu_jset_str(lb, "nvidia.com/gpu.count", p->gpus);
        cu_jset_str(lb, "nvidia.com/gpu.present", "true");
    }
    if (p->pool)
        cu_jset_str(lb, "node.example.com/pool", p->pool);
    json_object *spec = cu_jchild(n, "spec");
    if (p->taint_key) {
        json_object *ts = json_object_new_array(), *t = json_object_new_object();
        cu_jset_str(t, "key", p->taint_key);
        cu_jset_str(t, "value", p->taint_value);
        cu_jset_str(t, "effect", "NoSchedule");
        json_object_array_add(ts, t);
        json_object_object_add(spec, "taints", ts);
    }
    cap = cu_jchild(cu_jchild(n, "status"), "capacity");
    cu_jset_str(cap, "cpu", p->cpu);
    cu_jset_str(cap, "memory", p->memory);
    cu_jset_str(cap, "pods", "110");
    cu_jset_str(cap, "ephemeral-storage", "2Ti");
    if (p->gpus)
        cu_jset_str(cap, "nvidia.com/gpu", p->gpus);
    return n;
}

/* Checks a Node from a file; -1 with a message. */
static int node_check(json_object *n, const char *file, size_t doc, char *err, size_t errn)
{
    const char *kind = cu_jstr(n, "kind"), *name = ks_name_of(n);
    const char *maps[2] = { "capacity", "allocatable" };
    int64_t m;
    if (!str_eq(kind, "Node")) {
        snprintf(err, errn, "%s: document %zu: kind: must be Node, got %s", file, doc,
                 kind ? kind : "nothing");
        return -1;
    }
    if (!name || !*name) {
        snprintf(err, errn, "%s: document %zu: Node: metadata.name: required", file, doc);
        return -1;
    }
    for (int i = 0; i < 2; i++) {
        json_object *mp = cu_jget(cu_jget(n, "status"), maps[i]);
        if (!mp)
            continue;
        if (!json_object_is_type(mp, json_type_object)) {
            snprintf(err, errn, "%s: document %zu: Node %s: status.%s: must be a map", file, doc,
                     name, maps[i]);
            return -1;
        }
        json_object_object_foreach (mp, k, v) {
            if (ks_qty_json(v, &m) != 0 || m < 0) {
                snprintf(err, errn, "%s: document %zu: Node %s: status.%s[%s]: invalid quantity %s",
                         file, doc, name, maps[i], k, json_object_to_json_string(v));
                return -1;
            }
        }
    }
    if (!cu_jpath(n, "status.capacity") && !cu_jpath(n, "status.allocatable")) {
        snprintf(err, errn, "%s: document %zu: Node %s: status.capacity: required", file, doc,
                 name);
        return -1;
    }
    json_object *taints = cu_jpath(n, "spec.taints");
    for (size_t i = 0; i < cu_jarr_len(taints); i++) {
        const char *eff = cu_jstr(jidx(taints, i), "effect");
        if (!str_eq(eff, "NoSchedule") && !str_eq(eff, "PreferNoSchedule") &&
            !str_eq(eff, "NoExecute")) {
            snprintf(err, errn,
                     "%s: document %zu: Node %s: spec.taints[%zu].effect: must be NoSchedule, "
                     "PreferNoSchedule or NoExecute",
                     file, doc, name, i);
            return -1;
        }
    }
    return 0;
}

/* Creates n (taken) unless a node of that name exists. */
static cu_err node_ensure(cu_store *s, const ks_types *t, json_object *n, char *err, size_t errn)
{
    cu_status st;
    json_object *old = NULL, *out = NULL;
    if (cu_store_get(s, t->nodes, NULL, ks_name_of(n), &old, &st) == CU_OK) {
        json_object_put(old);
        json_object_put(n);
        return CU_OK;
    }
    json_object *want_status = cu_jcopy(cu_jget(n, "status"));
    cu_err e = cu_store_create(s, t->nodes, NULL, n, &out, &st);
    if (e != CU_OK) {
        snprintf(err, errn, "node %s: %s", st.name[0] ? st.name : "?", st.message);
        json_object_put(want_status);
        return e;
    }
    /* a store that drops status on create gets it through /status */
    if (out && want_status && !cu_jpath(out, "status.allocatable")) {
        json_object_object_add(out, "status", want_status);
        want_status = NULL;
        ks_put(s, t->nodes, out, "status", NULL);
        out = NULL;
    }
    if (out)
        json_object_put(out);
    json_object_put(want_status);
    return CU_OK;
}

cu_err cu_kubesim_add_nodes(cu_store *s, const char *nodes_file, int64_t now_ms, char *err,
                            size_t errn)
{
    ks_types t;
    char now[32], dummy[8];
    cu_err rc = CU_OK;
    int idx = 0;
    if (!err || !errn) {
        err = dummy;
        errn = sizeof dummy;
    }
    err[0] = '\0';
    if (ks_types_get(s, &t) != 0) {
        snprintf(err, errn, "the store does not serve pods, nodes, events and batch/v1 jobs");
        return CU_EINVAL;
    }
    fmt_time(now_ms, now);
    if (!nodes_file) {
        for (size_t p = 0; p < sizeof k_default_pools / sizeof k_default_pools[0]; p++)
            for (int i = 0; i < k_default_pools[p].count; i++, idx++) {
                json_object *n = default_node(&k_default_pools[p], i, i % 2);
                node_default_status_parts(n, now, idx);
                if ((rc = node_ensure(s, &t, n, err, errn)) != CU_OK)
                    return rc;
            }
        return CU_OK;
    }
    cu_arena a;
    cu_diag d;
    cu_doc *docs = NULL;
    size_t ndocs = 0;
    json_object **objs = NULL;
    cu_arena_init(&a, 0);
    cu_diag_init(&d);
    rc = cu_doc_parse_file(nodes_file, &a, &docs, &ndocs, &d);
    if (rc != CU_OK) {
        snprintf(err, errn, "%s", d.n ? d.msgs[0] : cu_strerror(rc));
        if (!d.n)
            snprintf(err, errn, "%s: %s", nodes_file, cu_strerror(rc));
        goto out;
    }
    objs = calloc(ndocs ? ndocs : 1, sizeof(*objs));
    if (!objs) {
        rc = CU_ENOMEM;
        goto out;
    }
    /* parse and check every document before creating anything */
    for (size_t i = 0; i < ndocs; i++) {
        cu_buf b;
        if (!docs[i].root)
            continue;
        cu_buf_init(&b, 0);
        if (cu_node_emit_json(docs[i].root, &b, 0) == CU_OK)
            objs[i] = json_tokener_parse(cu_buf_str(&b));
        cu_buf_free(&b);
        if (!objs[i] || !json_object_is_type(objs[i], json_type_object)) {
            snprintf(err, errn, "%s: document %zu: not a Node object", nodes_file, i + 1);
            rc = CU_EINVAL;
            goto out;
        }
        if (node_check(objs[i], nodes_file, i + 1, err, errn) != 0) {
            rc = CU_EINVAL;
            goto out;
        }
    }
    for (size_t i = 0; i < ndocs; i++) {
        if (!objs[i])
            continue;
        json_object *n = objs[i];
        objs[i] = NULL;
        node_default_status_parts(n, now, idx++);
        if ((rc = node_ensure(s, &t, n, err, errn)) != CU_OK)
            goto out;
    }
out:
    for (size_t i = 0; objs && i < ndocs; i++)
        if (objs[i])
            json_object_put(objs[i]);
    free(objs);
    cu_diag_free(&d);
    cu_arena_free(&a);
    return rc;
}
