/*
 * cu_ctrldecode.c - decoding at the informer boundary: watched objects
 * to one-object cu_worlds, and the extras read from a Workload.
 */
#include "cu_ctrl_int.h"

/* ---------------- decoding at the boundary ---------------- */

/* Logs, once per version of a queue-shaping object, each problem api/'s
 * validation finds in it (the rules of Kueue's webhooks and CRD schemas,
 * the same as `cueue simulate`), and what the engine does about it. */
void ctrl_log_invalid(ctrl *c, int r, const cu_world *w)
{
    static const char *const what[NRES] = {
        [R_RF] = "the ClusterQueues using it are inactive until it is fixed",
        [R_CQ] = "the ClusterQueue is inactive and holds no quota until it is fixed",
        [R_COHORT] = "its ClusterQueues are inactive and it holds no quota until it is fixed",
        [R_LQ] = "its workloads stay pending until it is fixed",
        [R_WPC] = "Kueue's webhook would refuse it",
        [R_PC] = "kube-apiserver would refuse it",
        [R_NS] = "kube-apiserver would refuse it",
        [R_AC] = "the ClusterQueues using it are inactive until it is fixed",
        [R_TOPO] = "the ResourceFlavors naming it place no pod until it is fixed",
    };
    static const cu_kind kinds[NRES] = {
        [R_RF] = CU_KIND_RESOURCE_FLAVOR,
        [R_CQ] = CU_KIND_CLUSTER_QUEUE,
        [R_COHORT] = CU_KIND_COHORT,
        [R_LQ] = CU_KIND_LOCAL_QUEUE,
        [R_WPC] = CU_KIND_WORKLOAD_PRIORITY_CLASS,
        [R_PC] = CU_KIND_PRIORITY_CLASS,
        [R_NS] = CU_KIND_NAMESPACE,
        [R_AC] = CU_KIND_ADMISSION_CHECK,
        [R_TOPO] = CU_KIND_TOPOLOGY,
    };
    const void *obj = NULL;
    switch (r) {
    case R_RF: obj = w->flavors.n ? w->flavors.items[0] : NULL; break;
    case R_CQ: obj = w->cqs.n ? w->cqs.items[0] : NULL; break;
    case R_COHORT: obj = w->cohorts.n ? w->cohorts.items[0] : NULL; break;
    case R_LQ: obj = w->lqs.n ? w->lqs.items[0] : NULL; break;
    case R_WPC: obj = w->wpcs.n ? w->wpcs.items[0] : NULL; break;
    case R_PC: obj = w->pcs.n ? w->pcs.items[0] : NULL; break;
    case R_NS: obj = w->namespaces.n ? w->namespaces.items[0] : NULL; break;
    case R_AC: obj = w->checks.n ? w->checks.items[0] : NULL; break;
    case R_TOPO: obj = w->topologies.n ? w->topologies.items[0] : NULL; break;
    default: return;
    }
    cu_diag d;
    cu_diag_init(&d);
    if (obj && cu_object_validate(kinds[r], obj, &d) != CU_OK) {
        for (size_t i = 0; i < d.n; i++)
            ctrl_log(c, 0, "invalid %s (%s)", d.msgs[i], what[r]);
        if (d.dropped)
            ctrl_log(c, 0, "... and %zu more problems", d.dropped);
    }
    cu_diag_free(&d);
}

cu_world *ctrl_decode_obj(ctrl *c, int r, json_object *obj, char *why, size_t nwhy)
{
    if (why && nwhy)
        snprintf(why, nwhy, "not a valid %s", res_tab[r].kind);
    cu_arena tmp;
    cu_arena_init(&tmp, 16 * 1024);
    cu_node *n = cu_node_from_json(&tmp, obj);
    cu_world *w = calloc(1, sizeof(*w));
    if (!n || !w) {
        cu_arena_free(&tmp);
        free(w);
        return NULL;
    }
    cu_world_init(w);
    cu_arena_free(&w->arena);
    cu_arena_init(&w->arena, 2048); /* one object: small chunks */
    cu_node_set(&tmp, n, "apiVersion", cu_node_new_str(&tmp, res_tab[r].api_version));
    cu_node_set(&tmp, n, "kind", cu_node_new_str(&tmp, res_tab[r].kind));
    cu_doc doc = { .file = "api", .root = n };
    cu_diag d;
    cu_diag_init(&d);
    cu_err err = cu_world_decode(w, &doc, &d);
    if (err != CU_OK || d.n) {
        for (size_t i = 0; i < d.n; i++)
            ctrl_log(c, 1, "%s", d.msgs[i]);
        if (why && nwhy && d.n)
            snprintf(why, nwhy, "%s", d.msgs[0]);
    }
    cu_diag_free(&d);
    cu_arena_free(&tmp);
    size_t total = w->flavors.n + w->cqs.n + w->cohorts.n + w->lqs.n + w->workloads.n + w->wpcs.n +
                   w->pcs.n + w->namespaces.n + w->checks.n + w->topologies.n;
    if (total != 1) {
        ctrl_world_free(w);
        return NULL;
    }
    return w;
}

void ctrl_decode_wl_extras(ctrl *c, rec *x, json_object *obj)
{
    free(x->owner);
    x->owner = NULL;
    x->owner_r = 0;
    free(x->owners);
    x->owners = NULL;
    json_object *owners = cu_jpath(obj, "metadata.ownerReferences");
    size_t no = json_object_is_type(owners, json_type_array) ? json_object_array_length(owners) : 0;
    json_object *refs = no ? json_object_new_array() : NULL;
    for (size_t i = 0; i < no; i++) {
        json_object *o = json_object_array_get_idx(owners, i);
        /* as Kueue's visibility API shows them: these four fields */
        json_object *ref = json_object_new_object();
        static const char *const keep[] = { "apiVersion", "kind", "name", "uid" };
        for (size_t k = 0; ref && k < sizeof(keep) / sizeof(keep[0]); k++)
            json_object_object_add(
                ref, keep[k],
                json_object_new_string(cu_jstr(o, keep[k]) ? cu_jstr(o, keep[k]) : ""));
        if (refs && ref)
            json_object_array_add(refs, ref);
        else
            json_object_put(ref);
        const char *kind = cu_jstr(o, "kind"), *name = cu_jstr(o, "name");
        const char *av = cu_jstr(o, "apiVersion");
        json_object *ctl = cu_jget(o, "controller");
        int okind = -1;
        for (int r = R_FIRST_OWNER; kind && av && r < NRES && okind < 0; r++)
            if (strcmp(kind, res_tab[r].kind) == 0 && strcmp(av, res_tab[r].api_version) == 0)
                okind = r;
        if (okind >= 0 && name && ctl && json_object_get_boolean(ctl) && !x->owner) {
            const char *ns = cu_jpath_str(obj, "metadata.namespace");
            size_t l = strlen(ns ? ns : "") + strlen(name) + 2;
            x->owner = malloc(l);
            if (x->owner)
                snprintf(x->owner, l, "%s/%s", ns ? ns : "", name);
            x->owner_r = okind;
        }
    }
    /* owners no controlling reference names (a pod group's Workload) */
    for (int r = R_FIRST_OWNER; r < NRES && !x->owner; r++) {
        const ctrl_integ *in = ctrl_integ_of(r);
        if (in && in->wl_owner && c->cfg.on[r])
            in->wl_owner(c, x, obj);
    }
    if (refs)
        x->owners = ctrl_jtext(refs);
    json_object_put(refs);
    free(x->fins); /* an integration that deletes it takes its own off first */
    x->fins = ctrl_jtext(cu_jpath(obj, "metadata.finalizers"));
    free(x->tmpl);
    x->tmpl = NULL;
    free(x->tmeta);
    x->tmeta = NULL;
    free(x->acs);
    json_object *acs = cu_jpath(obj, "status.admissionChecks");
    x->acs = cu_jarr_len(acs) ? ctrl_jtext(acs) : NULL;
    free(x->pstmpls);
    x->pstmpls = NULL;
    json_object *ps = cu_jpath(obj, "spec.podSets");
    json_object *p0 = json_object_is_type(ps, json_type_array) && json_object_array_length(ps)
                          ? json_object_array_get_idx(ps, 0)
                          : NULL;
    x->ps_count = (int32_t)cu_jas_int64(cu_jget(p0, "count"), 1);
    /* every pod set's scheduling directives and metadata; pod set 0's
     * (a pod set of none when there is none) in tmpl and tmeta too */
    json_object *all = json_object_new_array();
    for (size_t i = 0, n = cu_jarr_len(ps); i < (n ? n : 1); i++) {
        json_object *pi = n ? json_object_array_get_idx(ps, i) : NULL;
        json_object *ts = cu_jpath(pi, "template.spec");
        json_object *t = json_object_new_object(), *e = json_object_new_object();
        json_object *sel = cu_jget(ts, "nodeSelector"), *tols = cu_jget(ts, "tolerations");
        if (sel)
            json_object_object_add(t, "nodeSelector", json_object_get(sel));
        if (tols)
            json_object_object_add(t, "tolerations", json_object_get(tols));
        json_object *gates = cu_jget(ts, "schedulingGates");
        if (gates)
            json_object_object_add(t, "schedulingGates", json_object_get(gates));
        char *meta = ctrl_meta_text(cu_jpath(pi, "template.metadata"));
        if (i == 0) {
            x->tmpl = ctrl_jtext(t);
            x->tmeta = ctrl_sdup(meta);
        }
        json_object_object_add(e, "spec", t);
        json_object_object_add(e, "meta", meta ? cu_json_parse_str(meta) : NULL);
        free(meta);
        if (n)
            json_object_array_add(all, e);
        else
            json_object_put(e);
    }
    x->pstmpls = ctrl_jtext(all);
    json_object_put(all);
    json_object *rq = cu_jpath(obj, "status.requeueState");
    x->rq_count = (int32_t)cu_jas_int64(cu_jget(rq, "count"), 0);
    const char *at = cu_jstr(rq, "requeueAt");
    int64_t ms = 0;
    x->rq_at = at && cu_time_parse(at, &ms) == 0 ? ms : 0;
}

char *ctrl_meta_text(json_object *md)
{
    json_object *m = json_object_new_object();
    static const char *const keys[] = { "labels", "annotations" };
    for (size_t i = 0; i < 2; i++) {
        json_object *v = cu_jget(md, keys[i]);
        if (json_object_is_type(v, json_type_object))
            json_object_object_add(m, keys[i], json_object_get(v));
    }
    char *t = ctrl_jtext(m);
    json_object_put(m);
    return t;
}
