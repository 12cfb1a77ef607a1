/*
 * cu_kube.c - the core/v1 kinds Topology-Aware Scheduling reads: a Node
 * (allocatable, labels, taints, unschedulable, Ready) and a Pod (its node,
 * phase, effective requests, whether TAS placed it), and a Pod with
 * the queue-name label decoded as the Workload Kueue's pod integration
 * creates for a single pod (the rules of api/cu_pod.c: its name, its
 * priority class, one pod set "main" of one pod whose template is the pod,
 * the topology request from the pod's annotations with the pod-group index
 * label), and the queued Pods of a pod group kept until the group's
 * Workload is made from them (cu_world_pod_groups, with api/cu_pod.c's
 * cu_pod_group_workload, the controller's builder).
 */
#include "cu_decode_int.h"
#include "cu_json.h"
#include "cu_pod.h"
#include "cu_podreq.h"
#include "cu_topology.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cu_dec_node(dctx *c, const cu_node *root, cu_kube_node *x)
{
    const cu_node *spec = cu_dec_want_map(c, cu_node_get(root, "spec"), "spec");
    cu_dec_taints(c, spec, "taints", "spec", &x->ntaints, &x->taints);
    cu_dec_bool(c, spec, "unschedulable", "spec", &x->unschedulable);
    const cu_node *st = cu_dec_want_map(c, cu_node_get(root, "status"), "status");
    /* allocatable when the kubelet reported it, else the capacity */
    const cu_node *al = cu_node_get(st, "allocatable");
    int has_alloc = al && !cu_node_is_null(al);
    cu_dec_reslist(c, st, has_alloc ? "allocatable" : "capacity", "status", &x->allocatable);
    for (size_t i = 0; i < x->allocatable.n; i++)
        if (x->allocatable.items[i].milli < 0) {
            char p[PATHMAX];
            cu_dec_err(c,
                       cu_dec_path(p, has_alloc ? "status.allocatable" : "status.capacity", "%s",
                                   x->allocatable.items[i].name),
                       "must be greater than or equal to 0");
        }
    const cu_node *cs = cu_dec_want_seq(c, cu_node_get(st, "conditions"), "status.conditions");
    for (size_t i = 0; cs && i < cs->n; i++) {
        char p[PATHMAX];
        const cu_node *cn =
            cu_dec_want_map(c, cs->vals[i], cu_dec_path(p, "status.conditions", "[%zu]", i));
        const char *t = cn ? cu_dec_str(c, cn, "type", p) : NULL;
        const char *v = cn ? cu_dec_str(c, cn, "status", p) : NULL;
        if (t && strcmp(t, "Ready") == 0)
            x->ready = v && strcmp(v, "True") == 0;
    }
}

/* A queued single pod: the Workload of cu_pod_workload (api/cu_pod.c). */
static void dec_queued_pod(dctx *c, const cu_node *root, const cu_node *spec, cu_workload *wl)
{
    const cu_meta *pm = &wl->meta;
    wl->meta.name = cu_pod_workload_name(c->a, pm->name, pm->uid ? pm->uid : "");
    if (!wl->meta.name)
        c->oom = 1;
    wl->queue_name = cu_kvs_get(&pm->labels, CU_LABEL_QUEUE_NAME);
    wl->active = 1;
    cu_podset *ps = cu_dec_main_podset(c, wl, 1);
    if (!ps)
        return;
    cu_dec_podspec(c, spec, "spec", ps);
    cu_dec_topo_template(c, root, "", CU_LABEL_POD_GROUP_INDEX, NULL, NULL, &ps->topo);
    cu_job_priority_ref(cu_kvs_get(&pm->labels, CU_LABEL_PRIORITY_CLASS), ps->priority_class_name,
                        &wl->pc_group, &wl->pc_kind, &wl->pc_name);
}

int cu_dec_pod(dctx *c, const cu_node *root, cu_kube_pod *x, cu_workload *wl)
{
    const cu_node *spec = cu_dec_want_map(c, cu_node_get(root, "spec"), "spec");
    x->node_name = cu_dec_str(c, spec, "nodeName", "spec");
    if (x->node_name && !*x->node_name)
        x->node_name = NULL;
    const cu_node *st = cu_dec_want_map(c, cu_node_get(root, "status"), "status");
    x->phase = cu_dec_str(c, st, "phase", "status");
    x->ended = x->phase && (strcmp(x->phase, "Succeeded") == 0 || strcmp(x->phase, "Failed") == 0);
    const cu_node *ann = cu_node_path(root, "metadata.annotations");
    x->tas = cu_topology_pod_is_tas(cu_dec_node_ann,
                                    (void *)(ann && ann->type == CU_NODE_MAP ? ann : NULL));
    const char *q = cu_kvs_get(&x->meta.labels, CU_LABEL_QUEUE_NAME);
    if (q && *q) {
        wl->meta = x->meta;
        dec_queued_pod(c, root, spec, wl);
        if (x->ended) { /* Kueue finishes a single pod's Workload when the pod ends */
            wl->conds = cu_dec_alloc(c, sizeof(*wl->conds));
            if (wl->conds) {
                wl->nconds = 1;
                wl->conds[0].type = "Finished";
                wl->conds[0].status = "True";
                wl->conds[0].reason = x->phase;
            }
        }
        return 1;
    }
    char where[PATHMAX + 700];
    snprintf(where, sizeof(where), "%s %s: spec", c->kind, c->who);
    cu_err err = cu_pod_requests(c->a, spec, where, &x->requests, c->d);
    if (err == CU_ENOMEM)
        c->oom = 1;
    else if (err)
        c->nerr++;
    return 0;
}

/* ---------------- pod groups ---------------- */

/* A queued Pod of a pod group, kept until its group is complete. */
struct cu_group_pod {
    json_object *obj; /* the Pod (a JSON copy) */
    const char *file; /* w's arena */
    int line;
    const char *ns, *name, *group; /* w's arena */
};

cu_err cu_keep_group_pod(dctx *c, const cu_node *root, const char *name, const char *group)
{
    cu_world *w = c->w;
    const char *ns = cu_node_scalar(cu_node_path(root, "metadata.namespace"));
    struct cu_group_pod *g = cu_arena_alloc(&w->arena, sizeof(*g));
    if (!g)
        return CU_ENOMEM;
    g->file = cu_arena_strdup(&w->arena, c->file ? c->file : "");
    g->line = root->line;
    g->ns = cu_arena_strdup(&w->arena, ns && *ns ? ns : "default");
    g->name = cu_arena_strdup(&w->arena, name ? name : "");
    g->group = cu_arena_strdup(&w->arena, group);
    g->obj = cu_node_to_json(root);
    json_object *md = g->obj ? cu_jchild(g->obj, "metadata") : NULL;
    if (!g->file || !g->ns || !g->name || !g->group || !md) {
        json_object_put(g->obj);
        return CU_ENOMEM;
    }
    /* what the API server would have set: the namespace, the name (from
     * generateName), a uid (the Workload's owner references name it) */
    cu_jset_str(md, "namespace", g->ns);
    cu_jset_str(md, "name", g->name);
    if (!cu_jstr(md, "uid")) {
        char uid[700];
        snprintf(uid, sizeof(uid), "uid-%s-%s", g->ns, g->name);
        cu_jset_str(md, "uid", uid);
    }
    if (CU_VEC_PUSH(w->group_pods, g, 16)) {
        json_object_put(g->obj);
        return CU_ENOMEM;
    }
    return CU_OK;
}

void cu_group_pods_free(cu_world *w)
{
    for (size_t i = 0; i < w->group_pods.n; i++)
        json_object_put(w->group_pods.items[i]->obj);
    free(w->group_pods.items);
    w->group_pods.items = NULL;
    w->group_pods.n = 0;
}

static const char *gp_ann(const struct cu_group_pod *p, const char *key)
{
    return cu_jstr(cu_jpath(p->obj, "metadata.annotations"), key);
}

/* Whether the pods m[0..n) of one group disagree (cu_pod_group_disagree,
 * Kueue's messages, said in d at the pod concerned), else *total. */
static int group_invalid(struct cu_group_pod *const *m, size_t n, int32_t *total, cu_diag *d)
{
    json_object **objs = malloc(n * sizeof(*objs));
    if (!objs) {
        cu_diag_error(d, "pod group %s/%s: out of memory", m[0]->ns, m[0]->group);
        return 1;
    }
    for (size_t i = 0; i < n; i++)
        objs[i] = m[i]->obj;
    char why[900];
    size_t bad = 0;
    int rc = cu_pod_group_disagree(objs, n, total, &bad, why, sizeof(why));
    free(objs);
    if (rc && bad == 0)
        cu_diag_error(d, "%s:%d: %s", m[0]->file, m[0]->line, why);
    else if (rc)
        cu_diag_error(d, "%s:%d: pod group %s/%s: %s", m[bad]->file, m[bad]->line, m[0]->ns,
                      m[0]->group, why);
    return rc;
}

/* The Workload of one group's pods m[0..n) (not Failed), into w. */
static cu_err group_workload(cu_world *w, struct cu_group_pod *const *m, size_t n, int32_t total,
                             cu_diag *d)
{
    json_object **objs = malloc(n * sizeof(*objs));
    if (!objs)
        return CU_ENOMEM;
    int32_t succeeded = 0;
    int active = 0, unretriable = 0;
    for (size_t i = 0; i < n; i++) {
        objs[i] = m[i]->obj;
        const char *ph = cu_jpath_str(m[i]->obj, "status.phase");
        succeeded += ph && strcmp(ph, "Succeeded") == 0;
        active |= !cu_pod_terminated(m[i]->obj);
        const char *r = gp_ann(m[i], CU_ANN_POD_RETRIABLE_IN_GROUP);
        unretriable |= r && strcmp(r, "false") == 0;
    }
    json_object *wl = cu_pod_group_workload(m[0]->group, objs, n, d);
    free(objs);
    if (!wl)
        return CU_EINVAL;
    char msg[64];
    if (cu_pod_group_finished(succeeded, total, active, unretriable, msg, sizeof(msg))) {
        json_object *cond = json_object_new_object(), *conds = json_object_new_array(),
                    *st = json_object_new_object();
        cu_jset_str(cond, "type", "Finished");
        cu_jset_str(cond, "status", "True");
        cu_jset_str(cond, "reason", succeeded == total ? "Succeeded" : "Failed");
        cu_jset_str(cond, "message", msg);
        json_object_array_add(conds, cond);
        json_object_object_add(st, "conditions", conds);
        json_object_object_add(wl, "status", st);
    }
    cu_arena tmp;
    cu_arena_init(&tmp, 0);
    cu_doc doc = { m[0]->file, cu_node_from_json(&tmp, wl) };
    cu_err err = doc.root ? cu_world_decode(w, &doc, d) : CU_ENOMEM;
    cu_arena_free(&tmp);
    json_object_put(wl);
    return err;
}

cu_err cu_world_pod_groups(cu_world *w, cu_diag *d)
{
    size_t n = w->group_pods.n;
    struct cu_group_pod **all = w->group_pods.items, **m = malloc((n ? n : 1) * sizeof(*m));
    unsigned char *taken = calloc(n ? n : 1, 1);
    cu_err result = CU_OK;
    if (!m || !taken) {
        free(m);
        free(taken);
        return CU_ENOMEM;
    }
    for (size_t i = 0; i < n && result != CU_ENOMEM; i++) {
        if (taken[i])
            continue;
        /* the group's pods, in input order; Failed ones hold no place */
        size_t nm = 0;
        for (size_t j = i; j < n; j++)
            if (!taken[j] && strcmp(all[j]->ns, all[i]->ns) == 0 &&
                strcmp(all[j]->group, all[i]->group) == 0) {
                taken[j] = 1;
                if (cu_pod_runnable(all[j]->obj))
                    m[nm++] = all[j];
            }
        int32_t total = 0;
        if (!nm)
            continue;
        if (group_invalid(m, nm, &total, d)) {
            result = CU_EINVAL;
            continue;
        }
        if ((int32_t)nm < total) {
            cu_diag_warn(d,
                         "%s:%d: pod group %s/%s has %zu of its %d pods: Kueue makes its "
                         "Workload when all are there; not simulated",
                         m[0]->file, m[0]->line, m[0]->ns, m[0]->group, nm, (int)total);
            continue;
        }
        if ((int32_t)nm > total) {
            cu_diag_warn(d, "%s:%d: pod group %s/%s has %zu pods for %d: the last %zu left out",
                         m[total]->file, m[total]->line, m[0]->ns, m[0]->group, nm, (int)total,
                         nm - (size_t)total);
            nm = (size_t)total;
        }
        cu_err err = group_workload(w, m, nm, total, d);
        if (err == CU_ENOMEM)
            result = err;
        else if (err)
            result = CU_EINVAL;
    }
    free(m);
    free(taken);
    cu_group_pods_free(w);
    return result;
}
