/*
 * cu_workload.c - decoding of Workloads (pod sets, priority class reference,
 * status), WorkloadPriorityClasses and PriorityClasses.
 */
#include "cu_convert_int.h"
#include "cu_decode_int.h"
#include "cu_names.h"
#include "cu_podreq.h"
#include "cu_topology.h"

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

const char *cu_dec_node_ann(void *ud, const char *key)
{
    return cu_node_scalar(cu_node_get(ud, key));
}

void cu_dec_topo_template(dctx *c, const cu_node *tmpl, const char *path, const char *index_label,
                          const char *subgroup_label, const int32_t *subgroup_count,
                          cu_topo_request *r)
{
    char q[PATHMAX];
    const cu_node *ann = cu_node_path(tmpl, "metadata.annotations");
    if (ann && ann->type != CU_NODE_MAP)
        ann = NULL;
    if (cu_topo_request_build(cu_dec_node_ann, (void *)ann, index_label, subgroup_label,
                              subgroup_count, r) != 0) {
        cu_dec_err(c, cu_dec_path(q, path, "metadata.annotations"),
                   "Invalid value: " CU_ANN_TAS_UNCONSTRAINED
                   " must be a boolean and " CU_ANN_TAS_SLICE_SIZE " a 32-bit integer");
        return;
    }
    /* the strings are the document's: copy them into the arena */
    const char **strs[] = { &r->required,          &r->preferred,
                            &r->pod_index_label,   &r->subgroup_index_label,
                            &r->podset_group_name, &r->slice_required };
    for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
        if (*strs[i])
            *strs[i] = cu_dec_strdup(c, *strs[i]);
}

/* spec.podSets[].topologyRequest (p: the pod set's path). */
static void dec_topo_request(dctx *c, const cu_node *pn, const char *p, cu_topo_request *r)
{
    char q[PATHMAX];
    const cu_node *tr = cu_dec_want_map(c, cu_node_get(pn, "topologyRequest"),
                                        cu_dec_path(q, p, "topologyRequest"));
    if (!tr)
        return;
    r->present = 1;
    r->required = cu_dec_str(c, tr, "required", q);
    r->preferred = cu_dec_str(c, tr, "preferred", q);
    cu_dec_bool(c, tr, "unconstrained", q, &r->unconstrained);
    r->has_unconstrained = cu_node_get(tr, "unconstrained") != NULL;
    r->pod_index_label = cu_dec_str(c, tr, "podIndexLabel", q);
    r->subgroup_index_label = cu_dec_str(c, tr, "subGroupIndexLabel", q);
    r->has_subgroup_count = cu_dec_i32(c, tr, "subGroupCount", q, &r->subgroup_count);
    r->podset_group_name = cu_dec_str(c, tr, "podSetGroupName", q);
    r->slice_required = cu_dec_str(c, tr, "podSetSliceRequiredTopology", q);
    r->has_slice_size = cu_dec_i32(c, tr, "podSetSliceSize", q, &r->slice_size);
}

/* status.admission.podSetAssignments[].topologyAssignment in either shape
 * (v1beta2 slices are expanded by cu_convert.c's rules first). */
static cu_topo_assign *dec_topo_assign(dctx *c, const cu_node *a, const char *p)
{
    char q[PATHMAX], r[PATHMAX];
    const cu_node *ta = cu_dec_want_map(c, cu_node_get(a, "topologyAssignment"),
                                        cu_dec_path(q, p, "topologyAssignment"));
    if (!ta)
        return NULL;
    if (cu_node_get(ta, "slices")) {
        cu_node *cl = cu_node_clone(c->a, ta);
        cu_buf err;
        cu_buf_init(&err, 0);
        cu_err rc = cl ? cu_conv_topology_node(c->a, cl, 1, &err) : CU_ENOMEM;
        if (rc == CU_ENOMEM)
            c->oom = 1;
        else if (rc != CU_OK)
            cu_dec_err(c, q, "%s", cu_buf_str(&err));
        cu_buf_free(&err);
        if (rc != CU_OK)
            return NULL;
        ta = cl;
    }
    cu_topo_assign *x = cu_dec_alloc(c, sizeof(*x));
    const cu_node *lv = cu_dec_want_seq(c, cu_node_get(ta, "levels"), cu_dec_path(r, q, "levels"));
    const cu_node *ds =
        cu_dec_want_seq(c, cu_node_get(ta, "domains"), cu_dec_path(r, q, "domains"));
    if (!x)
        return NULL;
    x->nlevels = lv ? lv->n : 0;
    x->ndomains = ds ? ds->n : 0;
    x->levels = cu_dec_alloc(c, (x->nlevels ? x->nlevels : 1) * sizeof(*x->levels));
    size_t nv = x->nlevels * x->ndomains;
    x->values = cu_dec_alloc(c, (nv > 0 ? nv : 1) * sizeof(char *));
    x->counts = cu_dec_alloc(c, (x->ndomains ? x->ndomains : 1) * sizeof(*x->counts));
    if (!x->levels || !x->values || !x->counts)
        return NULL;
    for (size_t i = 0; i < x->nlevels; i++) {
        const char *s = cu_node_scalar(lv->vals[i]);
        if (!s)
            cu_dec_err(c, cu_dec_path(r, q, "levels[%zu]", i), "must be a string");
        x->levels[i] = cu_dec_strdup(c, s ? s : "");
    }
    for (size_t d = 0; d < x->ndomains; d++) {
        char dp[PATHMAX];
        cu_dec_path(dp, q, "domains[%zu]", d);
        const cu_node *dm = cu_dec_want_map(c, ds->vals[d], dp);
        const cu_node *vs = dm ? cu_dec_want_seq(c, cu_node_get(dm, "values"), dp) : NULL;
        if (!vs || vs->n != x->nlevels) {
            cu_dec_err(c, dp, "must have one value per level (%zu)", x->nlevels);
            return NULL;
        }
        for (size_t l = 0; l < x->nlevels; l++) {
            const char *s = cu_node_scalar(vs->vals[l]);
            x->values[d * x->nlevels + l] = cu_dec_strdup(c, s ? s : "");
        }
        if (cu_dec_i32(c, dm, "count", dp, &x->counts[d]) && x->counts[d] < 0)
            cu_dec_err(c, cu_dec_path(r, dp, "count"), "must be greater than or equal to 0");
    }
    return x;
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
                x->topo = dec_topo_assign(c, a, p);
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
            dec_topo_request(c, pn, p, &x->topo);
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
