/*
 * cu_build.c - building the engine's queue structure from a world: flavors'
 * resource ids, ClusterQueues (resource groups, quotas), the cohort tree,
 * and namespace selection. Validation failures become "bad" texts.
 */
#include "cu_state_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------- building ---------------- */

/* Validates one object by api/'s rules (cu_object_validate, the checks of
 * `cueue simulate`): the controller's world can hold objects a real API
 * server with Kueue's webhooks would have refused. Returns 0 when valid;
 * else 1 with the problems in out, without the "Kind name: " prefix,
 * joined by "; " (at most 3, then "and N more"). */
int cu_engine_invalid_text(cu_kind kind, const void *obj, const cu_meta *m, char *out, size_t n)
{
    cu_diag d;
    cu_diag_init(&d);
    if (cu_object_validate(kind, obj, &d) == CU_OK) {
        cu_diag_free(&d);
        return 0;
    }
    char pre[320];
    snprintf(pre, sizeof(pre), "%s %s%s%s: ", cu_kind_name(kind), m->ns && m->ns[0] ? m->ns : "",
             m->ns && m->ns[0] ? "/" : "", m->name ? m->name : "");
    size_t pl = strlen(pre), o = 0;
    out[0] = '\0';
    for (size_t i = 0; i < d.n && i < 3; i++) {
        const char *msg = d.msgs[i];
        if (strncmp(msg, pre, pl) == 0)
            msg += pl;
        int k = snprintf(out + o, n - o, "%s%s", i ? "; " : "", msg);
        if (k < 0 || (size_t)k >= n - o)
            break;
        o += (size_t)k;
    }
    size_t more = d.n + d.dropped > 3 ? d.n + d.dropped - 3 : 0;
    if (more && o < n)
        snprintf(out + o, n - o, "; and %zu more", more);
    cu_diag_free(&d);
    return 1;
}

/* invalid_text into e's arena; NULL when valid (or out of memory). */
const char *cu_engine_invalid_arena(cu_engine *e, cu_kind kind, const void *obj, const cu_meta *m)
{
    char buf[2048];
    if (!cu_engine_invalid_text(kind, obj, m, buf, sizeof(buf)))
        return NULL;
    return cu_arena_strdup(&e->arena, buf);
}

cu_err cu_engine_note_groups(cu_engine *e, const cu_rgroups *gs)
{
    for (size_t g = 0; g < gs->n; g++) {
        const cu_rgroup *rg = &gs->items[g];
        for (size_t r = 0; r < rg->covered.n; r++)
            if (cu_engine_intern_res(e, rg->covered.items[r]) < 0)
                return CU_ENOMEM;
        for (size_t f = 0; f < rg->nflavors; f++) {
            if (cu_engine_intern_flavor(e, rg->flavors[f].name) < 0)
                return CU_ENOMEM;
            for (size_t r = 0; r < rg->flavors[f].n; r++)
                if (cu_engine_intern_res(e, rg->flavors[f].res[r].name) < 0)
                    return CU_ENOMEM;
        }
    }
    return CU_OK;
}

cu_err cu_engine_mark_frs(cu_engine *e, const cu_rgroups *gs)
{
    for (size_t g = 0; g < gs->n; g++) {
        const cu_rgroup *rg = &gs->items[g];
        for (size_t f = 0; f < rg->nflavors; f++) {
            int fid = cu_strmap_get(&e->flv_map, rg->flavors[f].name);
            for (size_t r = 0; r < rg->flavors[f].n; r++) {
                int rid = cu_strmap_get(&e->res_map, rg->flavors[f].res[r].name);
                int *slot = &e->frmat[(size_t)fid * e->nres_fr + (size_t)rid];
                if (*slot < 0)
                    *slot = (int)e->nfr++;
            }
        }
    }
    return CU_OK;
}

static void set_quotas(cu_engine *e, cu_qnode *n, const cu_rgroups *gs)
{
    for (size_t g = 0; g < gs->n; g++) {
        const cu_rgroup *rg = &gs->items[g];
        for (size_t f = 0; f < rg->nflavors; f++) {
            int fid = cu_strmap_get(&e->flv_map, rg->flavors[f].name);
            for (size_t r = 0; r < rg->flavors[f].n; r++) {
                const cu_rquota *q = &rg->flavors[f].res[r];
                int fr = cu_engine_fr(e, fid, cu_strmap_get(&e->res_map, q->name));
                n->nominal[fr] = q->nominal;
                n->blimit[fr] = q->has_blimit ? q->blimit : CU_QUOTA_UNSET;
                n->llimit[fr] = q->has_llimit ? q->llimit : CU_QUOTA_UNSET;
                n->declared[fr] = 1;
            }
        }
    }
}

static int find_or_add_cohort(cu_engine *e, const char *name, const cu_cohort *obj)
{
    int id = cu_strmap_get(&e->cohort_map, name);
    if (id >= 0) {
        if (obj && !e->cohorts.items[id].obj)
            e->cohorts.items[id].obj = obj;
        return id;
    }
    ecohort c;
    memset(&c, 0, sizeof(c));
    c.name = cu_arena_strdup(&e->arena, name);
    c.obj = obj;
    c.parent = -1;
    c.tree = -1;
    id = (int)e->cohorts.n;
    if (!c.name || VEC_PUSH(e->cohorts, c) || cu_strmap_put(&e->cohort_map, c.name, id))
        return -1;
    return id;
}

/* Kueue's activity by AdmissionChecks (pkg/cache/scheduler clusterqueue.go
 * updateWithAdmissionChecks, inactiveReason): a ClusterQueue naming a check
 * that does not exist is inactive with AdmissionCheckNotFound, one naming
 * a check without Active=True with AdmissionCheckInactive; names sorted,
 * joined by ",", both reasons in the message. The MultiKueue and
 * ProvisioningRequest combinations Kueue also refuses are not checked
 * (Cueue runs neither controller). The stop policy and missing flavors,
 * set after this, take precedence as in Kueue's order of reasons. */
static void cq_checks_activity(cu_engine *e, const cu_cluster_queue *obj, ecq *cp)
{
    if (!obj->nchecks)
        return;
    const char **missing = cu_arena_alloc(&e->arena, obj->nchecks * sizeof(char *));
    const char **inactive = cu_arena_alloc(&e->arena, obj->nchecks * sizeof(char *));
    if (!missing || !inactive)
        return;
    size_t nm = 0, ni = 0;
    for (size_t i = 0; i < obj->nchecks; i++) {
        const cu_admission_check *k = NULL;
        for (size_t j = 0; j < e->world->checks.n && !k; j++)
            if (strcmp(e->world->checks.items[j]->meta.name, obj->checks[i].name) == 0)
                k = e->world->checks.items[j];
        if (!k)
            missing[nm++] = obj->checks[i].name;
        else if (!k->active)
            inactive[ni++] = obj->checks[i].name;
    }
    if (!nm && !ni)
        return;
    qsort(missing, nm, sizeof(char *), cu_strp_cmp);
    qsort(inactive, ni, sizeof(char *), cu_strp_cmp);
    cu_buf b;
    cu_buf_init(&b, 64 * 1024);
    cu_buf_puts(&b, "Can't admit new workloads: ");
    if (nm) {
        cu_buf_puts(&b, "references missing AdmissionCheck(s): ");
        for (size_t i = 0; i < nm; i++)
            cu_buf_printf(&b, "%s%s", i ? "," : "", missing[i]);
    }
    if (ni) {
        cu_buf_puts(&b, nm ? ", references inactive AdmissionCheck(s): "
                           : "references inactive AdmissionCheck(s): ");
        for (size_t i = 0; i < ni; i++)
            cu_buf_printf(&b, "%s%s", i ? "," : "", inactive[i]);
    }
    cu_buf_puts(&b, ".");
    cp->active = 0;
    cp->reason = nm ? "AdmissionCheckNotFound" : "AdmissionCheckInactive";
    cp->message = cu_arena_strdup(&e->arena, b.data ? b.data : "");
    cu_buf_free(&b);
}

/* Topology-Aware Scheduling: whether every flavor of c has a topologyName
 * (Kueue's IsTASOnly; Cueue asks for one flavor at least), and Kueue's
 * TopologyNotFound when a flavor's Topology is missing (the ClusterQueue
 * is inactive; the least of the reasons, below the AdmissionChecks'). */
static void cq_topology_activity(cu_engine *e, ecq *cp)
{
    size_t nflv = 0, ntas = 0;
    cu_buf b;
    cu_buf_init(&b, 64 * 1024);
    for (size_t g = 0; g < cp->ngroups; g++)
        for (size_t f = 0; f < cp->groups[g].nflv; f++) {
            const eflavor *fl = &e->flavors.items[cp->groups[g].flv[f]];
            nflv++;
            if (!fl->obj || !fl->obj->topology_name)
                continue;
            ntas++;
            if (fl->tas >= 0)
                continue;
            cu_buf_printf(&b, "%sthere is no Topology \"%s\" for TAS flavor \"%s\"",
                          b.len ? ", " : "Can't admit new workloads: ", fl->obj->topology_name,
                          fl->name);
        }
    cp->tas_only = nflv > 0 && ntas == nflv;
    if (b.len) {
        cu_buf_puts(&b, ".");
        cp->active = 0;
        cp->reason = "TopologyNotFound";
        cp->message = cu_arena_strdup(&e->arena, cu_buf_str(&b));
    }
    cu_buf_free(&b);
}

static cu_err build_group(cu_engine *e, ecq *c, const cu_rgroup *rg, egroup *g)
{
    g->nres = rg->covered.n;
    g->nflv = rg->nflavors;
    g->res = calloc(g->nres ? g->nres : 1, sizeof(int));
    g->flv = calloc(g->nflv ? g->nflv : 1, sizeof(int));
    g->fr = malloc(((g->nres * g->nflv) > 0 ? g->nres * g->nflv : 1) * sizeof(int));
    g->keys = calloc(8 * (g->nflv ? g->nflv : 1), sizeof(char *));
    if (!g->res || !g->flv || !g->fr || !g->keys)
        return CU_ENOMEM;
    for (size_t r = 0; r < g->nres; r++)
        g->res[r] = cu_strmap_get(&e->res_map, rg->covered.items[r]);
    for (size_t f = 0; f < g->nflv; f++) {
        int fid = cu_strmap_get(&e->flv_map, rg->flavors[f].name);
        g->flv[f] = fid;
        for (size_t r = 0; r < g->nres; r++)
            g->fr[f * g->nres + r] = cu_engine_fr(e, fid, g->res[r]);
        const cu_resource_flavor *obj = e->flavors.items[fid].obj;
        if (!obj)
            continue;
        for (size_t k = 0; k < obj->node_labels.n && k < 8; k++) {
            const char *key = obj->node_labels.items[k].key;
            size_t j;
            for (j = 0; j < g->nkeys; j++)
                if (strcmp(g->keys[j], key) == 0)
                    break;
            if (j == g->nkeys)
                g->keys[g->nkeys++] = key;
        }
    }
    (void)c;
    return CU_OK;
}

cu_err cu_engine_build_cq(cu_engine *e, const cu_cluster_queue *obj, const char *bad)
{
    ecq c;
    memset(&c, 0, sizeof(c));
    c.name = obj->meta.name;
    c.obj = obj;
    c.bad = bad;
    c.pods_res = -1;
    c.tree = -1;
    cu_pq_init(&c.q);
    c.node = cu_qnode_new(c.name, 1, e->nfr);
    if (!c.node)
        return CU_ENOMEM;
    c.node->fs_weight = obj->fs_weight;
    /* an invalid queue has no quota and no groups: Kueue's webhook would
     * not have let it exist */
    if (!bad)
        set_quotas(e, c.node, &obj->groups);
    c.ngroups = bad ? 0 : obj->groups.n;
    c.groups = calloc(c.ngroups ? c.ngroups : 1, sizeof(egroup));
    c.nres_group = e->res_names.n;
    c.res_group = malloc((c.nres_group ? c.nres_group : 1) * sizeof(int));
    if (!c.groups || !c.res_group) {
        cu_qnode_free(c.node);
        free(c.groups);
        free(c.res_group);
        return CU_ENOMEM;
    }
    for (size_t i = 0; i < c.nres_group; i++)
        c.res_group[i] = -1;
    int id = (int)e->cqs.n;
    c.node->id = id;
    if (VEC_PUSH(e->cqs, c))
        return CU_ENOMEM;
    ecq *cp = &e->cqs.items[id];
    for (size_t g = 0; g < cp->ngroups; g++) {
        cu_err err = build_group(e, cp, &obj->groups.items[g], &cp->groups[g]);
        if (err)
            return err;
        for (size_t r = 0; r < cp->groups[g].nres; r++) {
            int rid = cp->groups[g].res[r];
            if (cp->res_group[rid] < 0)
                cp->res_group[rid] = (int)g;
            if (strcmp(e->res_names.items[rid], "pods") == 0)
                cp->pods_res = rid;
        }
    }
    /* activity: stop policy, then missing flavors (cohort cycles later) */
    cp->active = 1;
    cp->reason = "Ready";
    cp->message = "Can admit new workloads";
    char missing[1024] = "";
    size_t ml = 0;
    const eflavor *badf = NULL;
    for (size_t g = 0; g < cp->ngroups; g++) {
        for (size_t f = 0; f < cp->groups[g].nflv; f++) {
            const eflavor *fl = &e->flavors.items[cp->groups[g].flv[f]];
            if (!fl->obj && ml < sizeof(missing) - 64) {
                ml += (size_t)snprintf(missing + ml, sizeof(missing) - ml, "%s%s", ml ? ", " : "",
                                       fl->name);
            }
            if (fl->obj && fl->bad && !badf)
                badf = fl;
        }
    }
    cq_topology_activity(e, cp);
    cq_checks_activity(e, obj, cp);
    if (badf) {
        cp->active = 0;
        cp->reason = "FlavorInvalid";
        cp->message = cu_arena_printf(&e->arena,
                                      "Can't admit new workloads: ResourceFlavor %s "
                                      "is invalid: %s",
                                      badf->name, badf->bad);
    }
    if (ml) {
        cp->active = 0;
        cp->reason = "FlavorNotFound";
        cp->message = cu_arena_printf(
            &e->arena, "Can't admit new workloads: references missing ResourceFlavor(s): %s",
            missing);
    }
    if (obj->stop_policy != CU_STOP_NONE) {
        cp->active = 0;
        cp->reason = "Stopped";
        cp->message = "Can't admit new workloads: is stopped";
    }
    if (bad) {
        cp->active = 0;
        cp->reason = "Invalid";
        cp->message = cu_arena_printf(&e->arena, "Can't admit new workloads: %s", bad);
    }
    if (obj->meta.deleting) {
        /* Kueue's terminating status wins over every other: its admitted
         * workloads keep their quota until they finish (the controller's
         * finalizer holds the object until then); nothing new is admitted */
        cp->active = 0;
        cp->reason = "Terminating";
        cp->message = "Can't admit new workloads; clusterQueue is terminating";
    }
    return cu_strmap_put(&e->cq_map, cp->name, id);
}

/* Sets the height of the cohort n and of every cohort below it (see
 * ecohort.height). Kueue's snapshot holds the active ClusterQueues only,
 * so an inactive one (stopped, missing flavors, ...) does not count,
 * although it stays linked here for its quota. Returns n's height. */
static int cohort_height(cu_engine *e, const cu_qnode *n)
{
    int h = 0;
    for (size_t i = 0; i < n->nkids; i++) {
        const cu_qnode *k = n->kids[i];
        int kh = k->is_cq ? e->cqs.items[k->id].active : cohort_height(e, k) + 1;
        if (kh > h)
            h = kh;
    }
    e->cohorts.items[n->id].height = h;
    return h;
}

int cu_engine_borrow_level(const cu_engine *e, const ecq *c, int fr, int64_t val, int *may_reclaim)
{
    const cu_qnode *stop = cu_quota_borrow_node(c->node, (size_t)fr, val);
    *may_reclaim = stop->parent != NULL;
    return stop == c->node ? 0 : e->cohorts.items[stop->id].height;
}

cu_err cu_engine_build_tree(cu_engine *e)
{
    const cu_world *w = e->world;
    /* cohorts: explicit ones, then the implicit ones named by others */
    for (size_t i = 0; i < w->cohorts.n; i++)
        if (find_or_add_cohort(e, w->cohorts.items[i]->meta.name, w->cohorts.items[i]) < 0)
            return CU_ENOMEM;
    for (size_t i = 0; i < w->cohorts.n; i++) {
        const cu_cohort *co = w->cohorts.items[i];
        if (co->parent && find_or_add_cohort(e, co->parent, NULL) < 0)
            return CU_ENOMEM;
    }
    for (size_t i = 0; i < w->cqs.n; i++)
        if (w->cqs.items[i]->cohort && find_or_add_cohort(e, w->cqs.items[i]->cohort, NULL) < 0)
            return CU_ENOMEM;
    size_t nco = e->cohorts.n;
    for (size_t i = 0; i < nco; i++) {
        ecohort *c = &e->cohorts.items[i];
        c->node = cu_qnode_new(c->name, 0, e->nfr);
        if (!c->node)
            return CU_ENOMEM;
        c->node->id = (int)i;
        if (c->obj) {
            c->bad = cu_engine_invalid_arena(e, CU_KIND_COHORT, c->obj, &c->obj->meta);
            if (!c->bad)
                set_quotas(e, c->node, &c->obj->groups);
            c->node->fs_weight = c->obj->fs_weight;
            if (c->obj->parent)
                c->parent = cu_strmap_get(&e->cohort_map, c->obj->parent);
        }
    }
    /* cycle detection: walk each chain; a node that reaches a node of the
     * current walk again is on a cycle; anything reaching a cycle is cyclic */
    int *state = calloc(nco ? nco : 1, sizeof(int)); /* 0 new, 1 walking, 2 done */
    if (!state)
        return CU_ENOMEM;
    for (size_t i = 0; i < nco; i++) {
        if (state[i])
            continue;
        size_t len = 0;
        int j = (int)i, cyc = 0;
        while (j >= 0 && state[j] == 0) {
            state[j] = 1;
            j = e->cohorts.items[j].parent;
            len++;
        }
        if (j >= 0 && state[j] == 1)
            cyc = 1;
        else if (j >= 0)
            cyc = e->cohorts.items[j].cyclic;
        for (int k = (int)i; k >= 0 && state[k] == 1; k = e->cohorts.items[k].parent) {
            state[k] = 2;
            e->cohorts.items[k].cyclic = cyc;
        }
        (void)len;
    }
    free(state);
    /* invalid cohorts: they and everything below them hold no quota */
    for (size_t i = 0; i < nco; i++) {
        ecohort *c = &e->cohorts.items[i];
        size_t steps = 0;
        for (int j = (int)i; j >= 0 && !c->cyclic && steps++ <= nco; j = e->cohorts.items[j].parent)
            if (e->cohorts.items[j].bad) {
                c->bad_in = e->cohorts.items[j].name;
                break;
            }
    }
    /* links (none for cyclic or invalid cohorts) */
    for (size_t i = 0; i < nco; i++) {
        ecohort *c = &e->cohorts.items[i];
        if (c->parent >= 0 && !c->cyclic && !c->bad_in)
            if (cu_qnode_set_parent(c->node, e->cohorts.items[c->parent].node))
                return CU_ENOMEM;
    }
    for (size_t i = 0; i < w->cqs.n; i++) {
        const cu_cluster_queue *obj = w->cqs.items[i];
        int id = cu_strmap_get(&e->cq_map, obj->meta.name);
        if (id < 0 || !obj->cohort)
            continue;
        ecq *cq = &e->cqs.items[id];
        const ecohort *co = &e->cohorts.items[cu_strmap_get(&e->cohort_map, obj->cohort)];
        if (cq->bad)
            continue; /* holds no quota: not in the cohort */
        if (co->bad_in) {
            const ecohort *b = &e->cohorts.items[cu_strmap_get(&e->cohort_map, co->bad_in)];
            cq->active = 0;
            cq->reason = "CohortInvalid";
            cq->message = cu_arena_printf(&e->arena,
                                          "Can't admit new workloads: Cohort %s is "
                                          "invalid: %s",
                                          b->name, b->bad);
            continue;
        }
        if (co->cyclic) {
            cq->active = 0;
            cq->reason = "CohortCycle";
            cq->message = cu_arena_printf(
                &e->arena, "Can't admit new workloads: cohort %s is part of a cycle", co->name);
            continue;
        }
        if (cu_qnode_set_parent(cq->node, co->node))
            return CU_ENOMEM;
    }
    for (size_t i = 0; i < nco; i++) {
        ecohort *c = &e->cohorts.items[i];
        if (!c->node->parent)
            cu_quota_recompute(c->node);
    }
    for (size_t i = 0; i < e->cqs.n; i++) {
        ecq *cq = &e->cqs.items[i];
        if (!cq->node->parent)
            cu_quota_recompute(cq->node);
    }
    for (size_t i = 0; i < nco; i++)
        if (!e->cohorts.items[i].node->parent)
            cohort_height(e, e->cohorts.items[i].node);
    /* tree ids: ClusterQueues sharing a root share a tree */
    for (size_t i = 0; i < e->cqs.n; i++) {
        ecq *cq = &e->cqs.items[i];
        cu_qnode *root = cu_quota_root(cq->node);
        if (root->is_cq) {
            cq->tree = e->ntrees++;
        } else {
            ecohort *rc = &e->cohorts.items[root->id];
            if (rc->tree < 0)
                rc->tree = e->ntrees++;
            cq->tree = rc->tree;
        }
    }
    return CU_OK;
}

static const cu_kvs *ns_labels(cu_engine *e, const char *ns)
{
    int id = cu_strmap_get(&e->ns_map, ns);
    return id >= 0 ? &e->world->namespaces.items[id]->meta.labels : NULL;
}

/* Returns 1 if cq's namespaceSelector selects namespace ns, whose labels
 * are those of its Namespace object (if given) plus the
 * kubernetes.io/metadata.name label Kubernetes always sets. */
int cu_engine_ns_selected(cu_engine *e, const cu_cluster_queue *cq, const char *ns)
{
    const cu_kvs *base = ns_labels(e, ns);
    size_t n = base ? base->n : 0;
    cu_kv tmp[64];
    cu_kvs kvs = { 0, tmp };
    for (size_t i = 0; i < n && kvs.n < 63; i++)
        if (strcmp(base->items[i].key, "kubernetes.io/metadata.name") != 0)
            tmp[kvs.n++] = base->items[i];
    tmp[kvs.n].key = "kubernetes.io/metadata.name";
    tmp[kvs.n].value = ns;
    kvs.n++;
    return cu_labelsel_matches(&cq->ns_selector, &kvs);
}
