/*
 * cu_kube.c - the core/v1 kinds Topology-Aware Scheduling reads: a Node
 * (allocatable, labels, taints, unschedulable, Ready) and a Pod (its node,
 * phase, effective requests, the kueue.x-k8s.io/tas label), and a Pod with
 * the queue-name label decoded as the Workload Kueue's pod integration
 * creates for a single pod (the rules of api/cu_pod.c: its name, its
 * priority class, one pod set "main" of one pod whose template is the pod,
 * the topology request from the pod's annotations with the pod-group index
 * label).
 */
#include "cu_decode_int.h"
#include "cu_pod.h"
#include "cu_podreq.h"
#include "cu_topology.h"

#include <stdio.h>
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
    x->tas = cu_kvs_get(&x->meta.labels, CU_LABEL_TAS) != NULL;
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
