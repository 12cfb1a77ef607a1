/*
 * cu_workload.c - decoding of Workloads (pod sets, priority class reference,
 * status), WorkloadPriorityClasses and PriorityClasses.
 */
#include "cu_decode_int.h"
#include "cu_names.h"
#include "cu_podreq.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Decodes the scheduling parts of a pod spec into ps (not count/name). */
void cu_dec_podspec(dctx *c, const cu_node *pspec, const char *path, cu_podset *ps)
{
    char where[PATHMAX + 700];
    if (c->who[0])
        snprintf(where, sizeof(where), "%s %s: %s", c->kind, c->who, path);
    else
        snprintf(where, sizeof(where), "%s: %s", c->kind, path);
    cu_err err = cu_pod_requests(c->a, pspec, where, &ps->requests, c->d);
    if (err == CU_ENOMEM)
        c->oom = 1;
    else if (err)
        c->nerr++;
    cu_dec_kvs(c, pspec, "nodeSelector", path, &ps->node_selector);
    cu_dec_tolerations(c, pspec, "tolerations", path, &ps->ntols, &ps->tols);
    ps->priority_class_name = cu_dec_str(c, pspec, "priorityClassName", path);

    char p[PATHMAX];
    const cu_node *aff =
        cu_dec_want_map(c, cu_node_get(pspec, "affinity"), cu_dec_path(p, path, "affinity"));
    const cu_node *na = cu_dec_want_map(c, cu_node_get(aff, "nodeAffinity"),
                                        cu_dec_path(p, path, "affinity.nodeAffinity"));
    const cu_node *req = cu_dec_want_map(
        c, cu_node_get(na, "requiredDuringSchedulingIgnoredDuringExecution"),
        cu_dec_path(p, path,
                    "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"));
    char tp[PATHMAX];
    const cu_node *terms = cu_dec_want_seq(c, cu_node_get(req, "nodeSelectorTerms"),
                                           cu_dec_path(tp, p, "nodeSelectorTerms"));
    if (!terms || terms->n == 0)
        return;
    ps->terms = cu_dec_alloc(c, terms->n * sizeof(*ps->terms));
    if (!ps->terms)
        return;
    for (size_t i = 0; i < terms->n; i++) {
        char q[PATHMAX], e[PATHMAX];
        cu_dec_path(q, tp, "[%zu]", i);
        const cu_node *t = cu_dec_want_map(c, terms->vals[i], q);
        cu_selterm *st = &ps->terms[ps->nterms++];
        if (!t)
            continue;
        const cu_node *ex = cu_dec_want_seq(c, cu_node_get(t, "matchExpressions"),
                                            cu_dec_path(e, q, "matchExpressions"));
        cu_dec_selreqs(c, ex, e, 1, &st->n, &st->reqs);
    }
}

/* spec.priorityClassRef (v1beta2) or priorityClassName/Source (v1beta1). */
static void dec_pc_ref(dctx *c, const cu_node *spec, cu_workload *wl)
{
    static const char *const groups[] = { CU_GROUP, "scheduling.k8s.io" };
    static const char *const kinds[] = { "WorkloadPriorityClass", "PriorityClass" };
    static const char *const sources[] = { "kueue.x-k8s.io/workloadpriorityclass",
                                           "scheduling.k8s.io/priorityclass", "" };
    int g = -1, k = -1;
    if (c->v1beta1) {
        const char *name = cu_dec_str(c, spec, "priorityClassName", "spec");
        int src;
        cu_dec_enum(c, spec, "priorityClassSource", "spec", sources, 3, 2, &src);
        if (!name || !*name)
            return;
        g = k = src == 0 ? 0 : 1;
        wl->pc_name = name;
    } else {
        const cu_node *ref =
            cu_dec_want_map(c, cu_node_get(spec, "priorityClassRef"), "spec.priorityClassRef");
        if (!ref)
            return;
        cu_dec_enum(c, ref, "group", "spec.priorityClassRef", groups, 2, -1, &g);
        cu_dec_enum(c, ref, "kind", "spec.priorityClassRef", kinds, 2, -1, &k);
        if (g < 0)
            g = k < 0 ? 0 : k;
        if (k < 0)
            k = g;
        wl->pc_name = cu_dec_str(c, ref, "name", "spec.priorityClassRef");
        if (!wl->pc_name || !*wl->pc_name) {
            cu_dec_err(c, "spec.priorityClassRef.name", "Required value");
            return;
        }
    }
    wl->pc_group = groups[g];
    wl->pc_kind = kinds[k];
}

/* lastTransitionTime of the entry at path p (map m), when set. */
static void dec_ltt(dctx *c, const cu_node *m, const char *p, int64_t *out)
{
    const cu_node *t = cu_node_get(m, "lastTransitionTime");
    if (t && !cu_node_is_null(t) &&
        (t->type != CU_NODE_SCALAR || cu_time_parse(t->str, out) != CU_OK)) {
        char q[PATHMAX];
        cu_dec_err(c, cu_dec_path(q, p, "lastTransitionTime"), "invalid time \"%s\"",
                   t->type == CU_NODE_SCALAR ? t->str : "");
    }
}

/* status.admissionChecks[]: name, state (Pending by default, as an
 * external controller may write only the name), message,
 * lastTransitionTime, requeueAfterSeconds, retryCount. */
static void dec_checks(dctx *c, const cu_node *st, cu_workload *wl)
{
    static const char *const states[] = { "Pending", "Ready", "Retry", "Rejected" };
    const cu_node *cs =
        cu_dec_want_seq(c, cu_node_get(st, "admissionChecks"), "status.admissionChecks");
    if (!cs || !cs->n)
        return;
    wl->checks = cu_dec_alloc(c, cs->n * sizeof(*wl->checks));
    for (size_t i = 0; wl->checks && i < cs->n; i++) {
        char p[PATHMAX], q[PATHMAX];
        cu_dec_path(p, "status.admissionChecks", "[%zu]", i);
        const cu_node *cn = cu_dec_want_map(c, cs->vals[i], p);
        if (!cn)
            continue;
        cu_acstate *x = &wl->checks[wl->nchecks++];
        x->name = cu_dec_str(c, cn, "name", p);
        if (!x->name || !*x->name)
            cu_dec_err(c, cu_dec_path(q, p, "name"), "Required value");
        int v = 0;
        cu_dec_enum(c, cn, "state", p, states, 4, 0, &v);
        x->state = (cu_check_state)v;
        x->message = cu_dec_str(c, cn, "message", p);
        x->has_requeue_after = cu_dec_i32(c, cn, "requeueAfterSeconds", p, &x->requeue_after_s);
        cu_dec_i32(c, cn, "retryCount", p, &x->retry_count);
        dec_ltt(c, cn, p, &x->ltt_ms);
    }
}

static void dec_status(dctx *c, const cu_node *root, cu_workload *wl)
{
    const cu_node *st = cu_dec_want_map(c, cu_node_get(root, "status"), "status");
    const cu_node *adm = cu_dec_want_map(c, cu_node_get(st, "admission"), "status.admission");
    if (adm) {
        wl->has_admission = 1;
        wl->adm_cq = cu_dec_str(c, adm, "clusterQueue", "status.admission");
        const cu_node *ps = cu_dec_want_seq(c, cu_node_get(adm, "podSetAssignments"),
                                            "status.admission.podSetAssignments");
        if (ps && ps->n) {
            wl->psa = cu_dec_alloc(c, ps->n * sizeof(*wl->psa));
            for (size_t i = 0; wl->psa && i < ps->n; i++) {
                char p[PATHMAX];
                cu_dec_path(p, "status.admission.podSetAssignments", "[%zu]", i);
                const cu_node *a = cu_dec_want_map(c, ps->vals[i], p);
                if (!a)
                    continue;
                cu_psa *x = &wl->psa[wl->npsa++];
                x->name = cu_dec_str(c, a, "name", p);
                if (!x->name)
                    x->name = cu_dec_strdup(c, "main");
                /* count defaults to the pod set's count (older Kueue did not write it) */
                const cu_node *cnt = cu_node_get(a, "count");
                if (cu_dec_i32(c, a, "count", p, &x->count)) {
                    if (x->count < 0) {
                        char q[PATHMAX];
                        cu_dec_err(c, cu_dec_path(q, p, "count"),
                                   "must be greater than or equal to 0");
                    }
                } else if (!cnt || cu_node_is_null(cnt)) {
                    x->count = 0;
                    for (size_t k = 0; x->name && k < wl->npodsets; k++)
                        if (strcmp(wl->podsets[k].name, x->name) == 0)
                            x->count = wl->podsets[k].count;
                }
                cu_dec_kvs(c, a, "flavors", p, &x->flavors);
                cu_dec_reslist(c, a, "resourceUsage", p, &x->usage);
            }
        }
    }
    dec_checks(c, st, wl);
    const cu_node *cs = cu_dec_want_seq(c, cu_node_get(st, "conditions"), "status.conditions");
    if (cs && cs->n) {
        wl->conds = cu_dec_alloc(c, cs->n * sizeof(*wl->conds));
        for (size_t i = 0; wl->conds && i < cs->n; i++) {
            char p[PATHMAX];
            cu_dec_path(p, "status.conditions", "[%zu]", i);
            const cu_node *cn = cu_dec_want_map(c, cs->vals[i], p);
            if (!cn)
                continue;
            cu_condition *x = &wl->conds[wl->nconds++];
            x->type = cu_dec_str(c, cn, "type", p);
            x->status = cu_dec_str(c, cn, "status", p);
            x->reason = cu_dec_str(c, cn, "reason", p);
            x->message = cu_dec_str(c, cn, "message", p);
            if (!x->type) {
                char q[PATHMAX];
                cu_dec_err(c, cu_dec_path(q, p, "type"), "Required value");
            }
            dec_ltt(c, cn, p, &x->ltt_ms);
        }
    }
}

void cu_dec_workload(dctx *c, const cu_node *root, cu_workload *wl)
{
    const cu_node *spec = cu_dec_want_map(c, cu_node_get(root, "spec"), "spec");
    wl->queue_name = cu_dec_str(c, spec, "queueName", "spec");
    wl->has_priority = cu_dec_i32(c, spec, "priority", "spec", &wl->priority);
    dec_pc_ref(c, spec, wl);
    wl->active = 1;
    cu_dec_bool(c, spec, "active", "spec", &wl->active);

    const cu_node *ps = cu_dec_want_seq(c, cu_node_get(spec, "podSets"), "spec.podSets");
    if (ps && ps->n) {
        wl->podsets = cu_dec_alloc(c, ps->n * sizeof(*wl->podsets));
        for (size_t i = 0; wl->podsets && i < ps->n; i++) {
            char p[PATHMAX], q[PATHMAX];
            cu_dec_path(p, "spec.podSets", "[%zu]", i);
            const cu_node *pn = cu_dec_want_map(c, ps->vals[i], p);
            if (!pn)
                continue;
            cu_podset *x = &wl->podsets[wl->npodsets++];
            x->name = cu_dec_str(c, pn, "name", p);
            if (!x->name)
                x->name = cu_dec_strdup(c, "main");
            x->count = 1;
            if (cu_dec_i32(c, pn, "count", p, &x->count) && x->count < 0)
                cu_dec_err(c, cu_dec_path(q, p, "count"), "must be greater than or equal to 0");
            x->has_min = cu_dec_i32(c, pn, "minCount", p, &x->min_count);
            const cu_node *tmpl =
                cu_dec_want_map(c, cu_node_get(pn, "template"), cu_dec_path(q, p, "template"));
            const cu_node *pspec =
                cu_dec_want_map(c, cu_node_get(tmpl, "spec"), cu_dec_path(q, p, "template.spec"));
            cu_dec_podspec(c, pspec, q, x);
        }
    }
    dec_status(c, root, wl);
}

void cu_dec_wpc(dctx *c, const cu_node *root, cu_wpc *x)
{
    cu_dec_i32(c, root, "value", "", &x->value);
    x->description = cu_dec_str(c, root, "description", "");
}

void cu_dec_pc(dctx *c, const cu_node *root, cu_priority_class *x)
{
    cu_dec_i32(c, root, "value", "", &x->value);
    cu_dec_bool(c, root, "globalDefault", "", &x->global_default);
}
