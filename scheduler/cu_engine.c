/*
 * cu_engine.c - building the engine from a world (flavors, cohort tree,
 * ClusterQueues, LocalQueues, workloads), finishing workloads, invariant
 * checks and the read-only views. The scheduling cycle is in cu_cycle.c.
 *
 * Invariants:
 *  - a workload is in exactly one state: WL_NONE (not queued, message says
 *    why), WL_QUEUED (in its ClusterQueue's heap or inadmissible set),
 *    WL_ADMITTED (its use_fr/use_amt are added to its ClusterQueue's node),
 *    WL_FINISHED;
 *  - for every ClusterQueue node and fr: usage == sum of use_amt of its
 *    admitted workloads (cu_engine_check_invariants verifies it);
 *  - nonempty lists exactly the active ClusterQueues with a non-empty heap
 *    (entries may be stale; the cycle drops them).
 */
#include "cu_engine_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VEC_PUSH(v, x)                                                        \
    ((v).n == (v).cap                                                         \
         ? (vec_grow((void **)&(v).items, &(v).cap, sizeof(*(v).items))       \
                ? ((v).items[(v).n++] = (x), 0)                               \
                : -1)                                                         \
         : ((v).items[(v).n++] = (x), 0))

static int vec_grow(void **items, size_t *cap, size_t elem)
{
    size_t nc = *cap ? *cap * 2 : 8;
    void *p = realloc(*items, nc * elem);
    if (!p)
        return 0;
    *items = p;
    *cap = nc;
    return 1;
}

cu_engine *cu_engine_new(const cu_engine_opts *opts)
{
    cu_engine *e = calloc(1, sizeof(*e));
    if (!e)
        return NULL;
    if (opts)
        e->opts = *opts;
    cu_strmap_init(&e->res_map);
    cu_strmap_init(&e->flv_map);
    cu_strmap_init(&e->cq_map);
    cu_strmap_init(&e->cohort_map);
    cu_strmap_init(&e->lq_map);
    cu_strmap_init(&e->ns_map);
    cu_arena_init(&e->arena, 64 * 1024);
    cu_arena_init(&e->cycle, 64 * 1024);
    cu_arena_init(&e->scratch, 64 * 1024);
    cu_arena_init(&e->varena, 64 * 1024);
    e->views_dirty = 1;
    return e;
}

static void free_wl(ewl *w)
{
    if (!w)
        return;
    free(w->key);
    free(w->message);
    free(w->bad);
    free(w->evict_message);
    free(w->note);
    free(w->plan);
    for (size_t i = 0; i < w->nps; i++) {
        free(w->ps[i].res);
        free(w->ps[i].amt);
        if (w->adm) {
            free(w->adm[i].res);
            free(w->adm[i].flv);
            free(w->adm[i].amt);
        }
    }
    free(w->ps);
    free(w->adm);
    free(w->use_fr);
    free(w->use_amt);
    free(w);
}

void cu_engine_free(cu_engine *e)
{
    if (!e)
        return;
    for (size_t i = 0; i < e->wls.n; i++)
        free_wl(e->wls.items[i]);
    free(e->wls.items);
    free(e->kord);
    free(e->krank);
    for (size_t i = 0; i < e->cqs.n; i++) {
        ecq *c = &e->cqs.items[i];
        cu_pq_free(&c->q);
        cu_qnode_free(c->node);
        free(c->adm);
        free(c->res_group);
        for (size_t g = 0; g < c->ngroups; g++) {
            free(c->groups[g].res);
            free(c->groups[g].flv);
            free(c->groups[g].fr);
            free(c->groups[g].keys);
        }
        free(c->groups);
    }
    free(e->cqs.items);
    for (size_t i = 0; i < e->cohorts.n; i++)
        cu_qnode_free(e->cohorts.items[i].node);
    free(e->cohorts.items);
    for (size_t i = 0; i < e->lqs.n; i++) {
        free(e->lqs.items[i].afs_consumed);
        free(e->lqs.items[i].afs_penalty);
    }
    free(e->lqs.items);
    free(e->flavors.items);
    free(e->res_names.items);
    free(e->nonempty.items);
    free(e->admitted_log.items);
    free(e->evicting.items);
    free(e->evicted_log.items);
    free(e->frmat);
    free(e->fr_flv);
    free(e->fr_res);
    cu_strmap_free(&e->res_map);
    cu_strmap_free(&e->flv_map);
    cu_strmap_free(&e->cq_map);
    cu_strmap_free(&e->cohort_map);
    cu_strmap_free(&e->lq_map);
    cu_strmap_free(&e->ns_map);
    cu_arena_free(&e->arena);
    cu_arena_free(&e->cycle);
    cu_arena_free(&e->scratch);
    cu_arena_free(&e->varena);
    free(e->drs_ratio);
    free(e->drs_gen);
    free(e->drs_valid);
    free(e->lendable);
    free(e->lendable_ok);
    free(e);
}

/* ---------------- interning ---------------- */

static int intern_res(cu_engine *e, const char *name)
{
    int id = cu_strmap_get(&e->res_map, name);
    if (id >= 0)
        return id;
    const char *copy = cu_arena_strdup(&e->arena, name);
    if (!copy)
        return -1;
    id = (int)e->res_names.n;
    if (VEC_PUSH(e->res_names, copy) || cu_strmap_put(&e->res_map, copy, id))
        return -1;
    return id;
}

static int intern_flavor(cu_engine *e, const char *name)
{
    int id = cu_strmap_get(&e->flv_map, name);
    if (id >= 0)
        return id;
    const char *copy = cu_arena_strdup(&e->arena, name);
    if (!copy)
        return -1;
    eflavor f = {copy, NULL, NULL};
    id = (int)e->flavors.n;
    if (VEC_PUSH(e->flavors, f) || cu_strmap_put(&e->flv_map, copy, id))
        return -1;
    return id;
}

int cu_engine_fr(const cu_engine *e, int flv, int res)
{
    if (flv < 0 || res < 0 || (size_t)res >= e->nres_fr || (size_t)flv >= e->nflv_fr)
        return -1;
    return e->frmat[(size_t)flv * e->nres_fr + (size_t)res];
}

int64_t cu_engine_mul_sat(int64_t per_pod, int64_t count)
{
    int64_t out;
    if (cu_qty_mul(per_pod, count, &out) != CU_OK)
        return per_pod < 0 ? INT64_MIN : CU_QTY_INF;
    return out;
}

/* ---------------- building ---------------- */

/* Validates one object by api/'s rules (cu_object_validate, the checks of
 * `cueue simulate`): the controller's world can hold objects a real API
 * server with Kueue's webhooks would have refused. Returns 0 when valid;
 * else 1 with the problems in out, without the "Kind name: " prefix,
 * joined by "; " (at most 3, then "and N more"). */
static int invalid_text(cu_kind kind, const void *obj, const cu_meta *m, char *out, size_t n)
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
static const char *invalid_arena(cu_engine *e, cu_kind kind, const void *obj, const cu_meta *m)
{
    char buf[2048];
    if (!invalid_text(kind, obj, m, buf, sizeof(buf)))
        return NULL;
    return cu_arena_strdup(&e->arena, buf);
}

static cu_err note_groups(cu_engine *e, const cu_rgroups *gs)
{
    for (size_t g = 0; g < gs->n; g++) {
        const cu_rgroup *rg = &gs->items[g];
        for (size_t r = 0; r < rg->covered.n; r++)
            if (intern_res(e, rg->covered.items[r]) < 0)
                return CU_ENOMEM;
        for (size_t f = 0; f < rg->nflavors; f++) {
            if (intern_flavor(e, rg->flavors[f].name) < 0)
                return CU_ENOMEM;
            for (size_t r = 0; r < rg->flavors[f].n; r++)
                if (intern_res(e, rg->flavors[f].res[r].name) < 0)
                    return CU_ENOMEM;
        }
    }
    return CU_OK;
}

static cu_err mark_frs(cu_engine *e, const cu_rgroups *gs)
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

static cu_err build_cq(cu_engine *e, const cu_cluster_queue *obj, const char *bad)
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
                ml += (size_t)snprintf(missing + ml, sizeof(missing) - ml, "%s%s",
                                       ml ? ", " : "", fl->name);
            }
            if (fl->obj && fl->bad && !badf)
                badf = fl;
        }
    }
    if (badf) {
        cp->active = 0;
        cp->reason = "FlavorInvalid";
        cp->message = cu_arena_printf(&e->arena, "Can't admit new workloads: ResourceFlavor %s "
                                      "is invalid: %s", badf->name, badf->bad);
    }
    if (ml) {
        cp->active = 0;
        cp->reason = "FlavorNotFound";
        cp->message = cu_arena_printf(&e->arena,
            "Can't admit new workloads: references missing ResourceFlavor(s): %s", missing);
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
    return cu_strmap_put(&e->cq_map, cp->name, id);
}

static cu_err build_tree(cu_engine *e)
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
            c->bad = invalid_arena(e, CU_KIND_COHORT, c->obj, &c->obj->meta);
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
            continue;   /* holds no quota: not in the cohort */
        if (co->bad_in) {
            const ecohort *b = &e->cohorts.items[cu_strmap_get(&e->cohort_map, co->bad_in)];
            cq->active = 0;
            cq->reason = "CohortInvalid";
            cq->message = cu_arena_printf(&e->arena, "Can't admit new workloads: Cohort %s is "
                                          "invalid: %s", b->name, b->bad);
            continue;
        }
        if (co->cyclic) {
            cq->active = 0;
            cq->reason = "CohortCycle";
            cq->message = cu_arena_printf(&e->arena,
                "Can't admit new workloads: cohort %s is part of a cycle", co->name);
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
    cu_kvs kvs = {0, tmp};
    for (size_t i = 0; i < n && kvs.n < 63; i++)
        if (strcmp(base->items[i].key, "kubernetes.io/metadata.name") != 0)
            tmp[kvs.n++] = base->items[i];
    tmp[kvs.n].key = "kubernetes.io/metadata.name";
    tmp[kvs.n].value = ns;
    kvs.n++;
    return cu_labelsel_matches(&cq->ns_selector, &kvs);
}

static void set_msg(ewl *w, int reason, const char *msg)
{
    free(w->message);
    w->message = msg ? strdup(msg) : NULL;
    w->reason = reason;
}

static uint64_t h_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 1099511628211ULL;
    }
    return h;
}

static uint64_t h_str(uint64_t h, const char *s)
{
    return h_bytes(h, s ? s : "", s ? strlen(s) + 1 : 1);
}

/* Kueue's scheduling-equivalence hash: workloads with the same hash in
 * the same ClusterQueue get the same flavor-assignment result against the
 * same usage (namespace, priority, pod set counts, requests, selectors,
 * affinity and tolerations). */
static uint64_t shape_hash(const ewl *w)
{
    const cu_workload *o = w->obj;
    uint64_t h = 1469598103934665603ULL;
    h = h_str(h, o->meta.ns);
    h = h_bytes(h, &w->qi.prio, sizeof(w->qi.prio));
    for (size_t i = 0; i < w->nps; i++) {
        const eps *ps = &w->ps[i];
        const cu_podset *p = &o->podsets[i];
        h = h_str(h, ps->name);
        h = h_bytes(h, &ps->count, sizeof(ps->count));
        h = h_bytes(h, &ps->min, sizeof(ps->min));
        for (size_t r = 0; r < ps->nreq; r++) {
            h = h_bytes(h, &ps->res[r], sizeof(int));
            h = h_bytes(h, &ps->amt[r], sizeof(int64_t));
        }
        for (size_t k = 0; k < p->node_selector.n; k++) {
            h = h_str(h, p->node_selector.items[k].key);
            h = h_str(h, p->node_selector.items[k].value);
        }
        for (size_t t = 0; t < p->nterms; t++) {
            h = h_bytes(h, "|", 1);
            for (size_t r = 0; r < p->terms[t].n; r++) {
                const cu_selreq *q = &p->terms[t].reqs[r];
                h = h_str(h, q->key);
                h = h_bytes(h, &q->op, sizeof(q->op));
                for (size_t v = 0; v < q->values.n; v++)
                    h = h_str(h, q->values.items[v]);
            }
        }
        for (size_t t = 0; t < p->ntols; t++) {
            const cu_toleration *x = &p->tols[t];
            h = h_str(h, x->key);
            h = h_bytes(h, &x->op, sizeof(x->op));
            h = h_str(h, x->value);
            h = h_str(h, x->effect);
        }
    }
    return h;
}

static cu_err wl_requests(cu_engine *e, ewl *w, cu_diag *d)
{
    const cu_workload *o = w->obj;
    w->nps = o->npodsets;
    w->ps = calloc(w->nps ? w->nps : 1, sizeof(eps));
    if (!w->ps)
        return CU_ENOMEM;
    for (size_t i = 0; i < w->nps; i++) {
        const cu_podset *p = &o->podsets[i];
        eps *ps = &w->ps[i];
        ps->name = p->name ? p->name : "main";
        ps->count = p->count;
        ps->min = p->has_min ? p->min_count : p->count;
        ps->nreq = p->requests.n;
        ps->res = malloc((ps->nreq ? ps->nreq : 1) * sizeof(int));
        ps->amt = malloc((ps->nreq ? ps->nreq : 1) * sizeof(int64_t));
        if (!ps->res || !ps->amt)
            return CU_ENOMEM;
        for (size_t r = 0; r < ps->nreq; r++) {
            ps->res[r] = intern_res(e, p->requests.items[r].name);
            if (ps->res[r] < 0)
                return CU_ENOMEM;
            ps->amt[r] = p->requests.items[r].milli;
        }
    }
    (void)d;
    return CU_OK;
}

void cu_engine_mark_nonempty(cu_engine *e, int cqi)
{
    ecq *c = &e->cqs.items[cqi];
    if (!c->in_list && c->active && c->q.n) {
        if (VEC_PUSH(e->nonempty, cqi) == 0)
            c->in_list = 1;
    }
}

/* Adds the usage of w's admission (w->use_*) to its ClusterQueue (sign +1)
 * or removes it (-1). The only place usage changes. */
void cu_engine_apply_usage(cu_engine *e, ewl *w, int sign)
{
    if (w->cq < 0)
        return;
    ecq *c = &e->cqs.items[w->cq];
    for (size_t i = 0; i < w->nuse; i++)
        cu_quota_add_usage(c->node, (size_t)w->use_fr[i], sign * w->use_amt[i]);
}

/* Records an admission from status.admission of a Workload. */
static cu_err preadmitted(cu_engine *e, ewl *w)
{
    const cu_workload *o = w->obj;
    w->state = WL_ADMITTED;
    w->cq_name = o->adm_cq;
    w->cq = o->adm_cq ? cu_strmap_get(&e->cq_map, o->adm_cq) : -1;
    const cu_condition *qr = cu_workload_cond(o, "QuotaReserved");
    w->admitted_at = qr && qr->ltt_ms ? qr->ltt_ms : cu_clock_now(&e->opts.clock);
    w->adm = calloc(w->nps ? w->nps : 1, sizeof(eassign));
    size_t cap = 8;
    w->use_fr = malloc(cap * sizeof(int));
    w->use_amt = malloc(cap * sizeof(int64_t));
    if (!w->adm || !w->use_fr || !w->use_amt)
        return CU_ENOMEM;
    for (size_t i = 0; i < w->nps; i++) {
        const cu_psa *psa = NULL;
        for (size_t j = 0; j < o->npsa; j++)
            if (o->psa[j].name && strcmp(o->psa[j].name, w->ps[i].name) == 0)
                psa = &o->psa[j];
        if (!psa && i < o->npsa)
            psa = &o->psa[i];
        eassign *a = &w->adm[i];
        a->count = psa && psa->count > 0 ? psa->count : w->ps[i].count;
        size_t n = psa ? psa->flavors.n : 0;
        a->res = calloc(n ? n : 1, sizeof(int));
        a->flv = calloc(n ? n : 1, sizeof(int));
        a->amt = calloc(n ? n : 1, sizeof(int64_t));
        if (!a->res || !a->flv || !a->amt)
            return CU_ENOMEM;
        for (size_t k = 0; k < n; k++) {
            const char *rname = psa->flavors.items[k].key;
            int rid = intern_res(e, rname);
            int fid = intern_flavor(e, psa->flavors.items[k].value);
            if (rid < 0 || fid < 0)
                return CU_ENOMEM;
            int64_t amt = 0;
            int found = 0;
            for (size_t u = 0; u < psa->usage.n; u++)
                if (strcmp(psa->usage.items[u].name, rname) == 0) {
                    amt = psa->usage.items[u].milli;
                    found = 1;
                }
            if (!found) {
                if (strcmp(rname, "pods") == 0) {
                    amt = (int64_t)a->count * 1000;
                } else {
                    for (size_t r = 0; r < w->ps[i].nreq; r++)
                        if (w->ps[i].res[r] == rid)
                            amt = cu_engine_mul_sat(w->ps[i].amt[r], a->count);
                }
            }
            a->res[a->n] = rid;
            a->flv[a->n] = fid;
            a->amt[a->n] = amt;
            a->n++;
            int fr = w->cq >= 0 ? cu_engine_fr(e, fid, rid) : -1;
            if (fr < 0 || !e->cqs.items[w->cq].node->declared[fr])
                continue;
            size_t u;
            for (u = 0; u < w->nuse; u++)
                if (w->use_fr[u] == fr)
                    break;
            if (u == w->nuse) {
                if (w->nuse == cap) {
                    cap *= 2;
                    int *nf = realloc(w->use_fr, cap * sizeof(int));
                    if (!nf)
                        return CU_ENOMEM;
                    w->use_fr = nf;
                    int64_t *na = realloc(w->use_amt, cap * sizeof(int64_t));
                    if (!na)
                        return CU_ENOMEM;
                    w->use_amt = na;
                }
                w->use_fr[w->nuse] = fr;
                w->use_amt[w->nuse++] = 0;
            }
            w->use_amt[u] = cu_qty_sat_add(w->use_amt[u], amt);
        }
    }
    if (w->cq >= 0) {
        cu_engine_apply_usage(e, w, 1);
        e->cqs.items[w->cq].admitted++;
        return cu_engine_adm_add(&e->cqs.items[w->cq], w);
    }
    return CU_OK;
}

cu_err cu_engine_adm_add(ecq *c, ewl *w)
{
    if (c->nadm == c->capadm) {
        size_t cap = c->capadm ? c->capadm * 2 : 16;
        ewl **p = realloc(c->adm, cap * sizeof(*p));
        if (!p)
            return CU_ENOMEM;
        c->adm = p;
        c->capadm = cap;
    }
    w->adm_pos = c->nadm;
    c->adm[c->nadm++] = w;
    return CU_OK;
}

void cu_engine_adm_del(ecq *c, ewl *w)
{
    if (w->adm_pos >= c->nadm || c->adm[w->adm_pos] != w)
        return;
    c->nadm--;
    if (w->adm_pos != c->nadm) {
        c->adm[w->adm_pos] = c->adm[c->nadm];
        c->adm[w->adm_pos]->adm_pos = w->adm_pos;
    }
}

/* Releases w's quota and clears its admission (Kueue's eviction); the
 * caller queues it again. Inadmissible workloads of its cohort tree are
 * retried, since quota was freed. */
static void evict(cu_engine *e, ewl *w)
{
    if (w->state != WL_ADMITTED)
        return;
    if (w->cq >= 0) {
        cu_engine_apply_usage(e, w, -1);
        e->cqs.items[w->cq].admitted--;
        cu_engine_adm_del(&e->cqs.items[w->cq], w);
        cu_engine_requeue_tree(e, e->cqs.items[w->cq].tree);
    }
    w->evicting = 0;
    for (size_t i = 0; w->adm && i < w->nps; i++) {
        free(w->adm[i].res);
        free(w->adm[i].flv);
        free(w->adm[i].amt);
    }
    free(w->adm);
    free(w->use_fr);
    free(w->use_amt);
    w->adm = NULL;
    w->use_fr = NULL;
    w->use_amt = NULL;
    w->nuse = 0;
    w->state = WL_NONE;
    w->evictions++;
}

static cu_err queue_wl(cu_engine *e, ewl *w, cu_diag *d);

static cu_err place_wl(cu_engine *e, ewl *w, cu_diag *d)
{
    const cu_workload *o = w->obj;
    char buf[512];
    if (cu_workload_finished(o)) {
        w->state = WL_FINISHED;
        return CU_OK;
    }
    if (o->queue_name) {
        snprintf(buf, sizeof(buf), "%s/%s", o->meta.ns ? o->meta.ns : "default", o->queue_name);
        w->lq = cu_strmap_get(&e->lq_map, buf);
    }
    if (cu_workload_has_quota(o)) {
        /* its priority matters when it is a preemption candidate */
        int32_t prio = 0;
        if (o->has_priority)
            prio = o->priority;
        else if (e->world)
            cu_workload_priority(e->world, o, &prio, d);
        w->qi.prio = prio;
        cu_err err = preadmitted(e, w);
        if (err)
            return err;
        /* HoldAndDrain on its ClusterQueue or LocalQueue, or spec.active
         * false, evicts an admitted workload */
        const ecq *c = w->cq >= 0 ? &e->cqs.items[w->cq] : NULL;
        const elq *l = w->lq >= 0 ? &e->lqs.items[w->lq] : NULL;
        const char *why = NULL;
        if (!o->active)
            why = "Deactivated";
        else if (c && c->obj->stop_policy == CU_STOP_HOLD_AND_DRAIN)
            why = "ClusterQueueStopped";
        else if (l && l->obj->stop_policy == CU_STOP_HOLD_AND_DRAIN)
            why = "LocalQueueStopped";
        if (why) {
            evict(e, w);
            w->evict_reason = why;
            free(w->evict_message);
            w->evict_message = strdup(!o->active ? "The workload is deactivated"
                                      : c && c->obj->stop_policy == CU_STOP_HOLD_AND_DRAIN
                                          ? "The ClusterQueue is stopped"
                                          : "The LocalQueue is stopped");
            w->cq = -1;
            return queue_wl(e, w, d);
        }
        return CU_OK;
    }
    return queue_wl(e, w, d);
}

/* Puts a workload that holds no quota into its ClusterQueue, or records
 * why it cannot be queued. */
static cu_err queue_wl(cu_engine *e, ewl *w, cu_diag *d)
{
    const cu_workload *o = w->obj;
    char buf[512];
    if (w->lq >= 0) {
        const elq *lq = &e->lqs.items[w->lq];
        w->cq = lq->cq;
        w->cq_name = lq->obj->cluster_queue;
    }
    if (!o->active) {
        set_msg(w, R_INADMISSIBLE, "The workload is deactivated");
        return CU_OK;
    }
    if (w->bad) {
        char *m = malloc(strlen(w->bad) + 32);
        if (m)
            sprintf(m, "Workload is invalid: %s", w->bad);
        set_msg(w, R_INADMISSIBLE, m ? m : "Workload is invalid");
        free(m);
        return CU_OK;
    }
    if (!o->queue_name) {
        set_msg(w, R_INADMISSIBLE, "Workload has no spec.queueName");
        return CU_OK;
    }
    if (w->lq < 0) {
        snprintf(buf, sizeof(buf), "LocalQueue %s doesn't exist", o->queue_name);
        set_msg(w, R_INADMISSIBLE, buf);
        return CU_OK;
    }
    const elq *lq = &e->lqs.items[w->lq];
    if (w->cq < 0) {
        snprintf(buf, sizeof(buf), "ClusterQueue %s doesn't exist", w->cq_name);
        set_msg(w, R_INADMISSIBLE, buf);
        return CU_OK;
    }
    if (lq->bad) {
        char *m = malloc(strlen(lq->bad) + strlen(lq->obj->meta.name) + 32);
        if (m)
            sprintf(m, "LocalQueue %s is invalid: %s", lq->obj->meta.name, lq->bad);
        set_msg(w, R_INADMISSIBLE, m ? m : "LocalQueue is invalid");
        free(m);
        return CU_OK;
    }
    if (!lq->active) {
        snprintf(buf, sizeof(buf), "LocalQueue %s is stopped", lq->obj->meta.name);
        set_msg(w, R_INADMISSIBLE, buf);
        return CU_OK;
    }
    int32_t prio = 0;
    if (o->has_priority) {
        prio = o->priority;
    } else if (e->world && cu_workload_priority(e->world, o, &prio, d) != CU_OK) {
        set_msg(w, R_INADMISSIBLE, d && d->n ? d->msgs[d->n - 1] : "priority class not found");
        return CU_OK;
    }
    w->qi.prio = prio;
    w->qi.afs = cu_afs_on(e, &e->cqs.items[w->cq]) ? cu_afs_usage(e, w->lq) : 0;
    w->shape = shape_hash(w);
    ecq *c = &e->cqs.items[w->cq];
    w->state = WL_QUEUED;
    if (cu_pq_push(&c->q, &w->qi))
        return CU_ENOMEM;
    if (!c->active) {
        snprintf(buf, sizeof(buf), "ClusterQueue %s is inactive", c->name);
        set_msg(w, R_INADMISSIBLE, buf);
    } else {
        set_msg(w, R_PENDING, "Waiting for its turn in the ClusterQueue");
        cu_engine_mark_nonempty(e, w->cq);
    }
    return CU_OK;
}

int cu_engine_add_workload(cu_engine *e, const cu_workload *o)
{
    ewl *w = calloc(1, sizeof(*w));
    if (!w)
        return -1;
    w->obj = o;
    w->lq = w->cq = -1;
    w->idx = (int)e->wls.n;
    size_t kl = strlen(o->meta.name) + (o->meta.ns ? strlen(o->meta.ns) : 7) + 2;
    w->key = malloc(kl);
    if (!w->key || VEC_PUSH(e->wls, w)) {
        free_wl(w);
        return -1;
    }
    snprintf(w->key, kl, "%s/%s", o->meta.ns ? o->meta.ns : "default", o->meta.name);
    w->qi.key = w->key;
    w->qi.ts = o->meta.has_created ? o->meta.created_ms
                                   : cu_clock_now(&e->opts.clock) + (int64_t)o->meta.seq;
    char bad[2048];
    if (invalid_text(CU_KIND_WORKLOAD, o, &o->meta, bad, sizeof(bad)) && !(w->bad = strdup(bad)))
        return -1;   /* w is in e->wls: freed with the engine */
    cu_diag tmp;
    cu_diag_init(&tmp);
    cu_err err = wl_requests(e, w, &tmp);
    if (!err)
        err = place_wl(e, w, &tmp);
    cu_diag_free(&tmp);
    e->views_dirty = 1;
    return err ? -1 : w->idx;
}

/* Warns once per cycle of cohort parents, on its member with the smallest
 * name, listing the cycle from there ("a -> b -> a"). Cohorts that only
 * lead into a cycle are inactive too but not named: the cycle is the
 * thing to fix. */
static void warn_cycles(const cu_engine *e, cu_diag *d)
{
    size_t nco = e->cohorts.n;
    for (size_t i = 0; i < nco; i++) {
        const ecohort *c = &e->cohorts.items[i];
        if (!c->cyclic || !c->obj)
            continue;
        /* on the cycle: following parents from i comes back to i */
        int j = c->parent, first = 1;
        size_t steps = 0;
        while (j >= 0 && j != (int)i && steps++ < nco) {
            if (strcmp(e->cohorts.items[j].name, c->name) < 0)
                first = 0;
            j = e->cohorts.items[j].parent;
        }
        if (j != (int)i || !first)
            continue;
        char path[1024];
        size_t pl = 0;
        j = (int)i;
        do {
            int k = snprintf(path + pl, sizeof(path) - pl, "%s%s", pl ? " -> " : "",
                             e->cohorts.items[j].name);
            if (k < 0 || (size_t)k >= sizeof(path) - pl) {
                pl = sizeof(path) - 1;
                break;
            }
            pl += (size_t)k;
            j = e->cohorts.items[j].parent;
        } while (j != (int)i);
        if (pl < sizeof(path) - 1)
            snprintf(path + pl, sizeof(path) - pl, " -> %s", c->name);
        cu_diag_warn(d, "Cohort %s: spec.parentName: the cohorts %s form a cycle; every "
                        "ClusterQueue under them is inactive", c->name, path);
    }
}

cu_err cu_engine_load(cu_engine *e, const cu_world *w, cu_diag *d)
{
    e->world = w;
    cu_err err;
    for (size_t i = 0; i < w->flavors.n; i++) {
        int id = intern_flavor(e, w->flavors.items[i]->meta.name);
        if (id < 0)
            return CU_ENOMEM;
        e->flavors.items[id].obj = w->flavors.items[i];
        e->flavors.items[id].bad = invalid_arena(e, CU_KIND_RESOURCE_FLAVOR, w->flavors.items[i],
                                                 &w->flavors.items[i]->meta);
    }
    /* invalid ClusterQueues and Cohorts: their groups are not used */
    const char **cq_bad = cu_arena_alloc(&e->arena, (w->cqs.n ? w->cqs.n : 1) * sizeof(char *));
    char *co_bad = cu_arena_alloc(&e->arena, w->cohorts.n ? w->cohorts.n : 1);
    if (!cq_bad || !co_bad)
        return CU_ENOMEM;
    for (size_t i = 0; i < w->cqs.n; i++) {
        cq_bad[i] = invalid_arena(e, CU_KIND_CLUSTER_QUEUE, w->cqs.items[i], &w->cqs.items[i]->meta);
        if (!cq_bad[i] && (err = note_groups(e, &w->cqs.items[i]->groups)))
            return err;
    }
    for (size_t i = 0; i < w->cohorts.n; i++) {
        char tmp[8];
        co_bad[i] = (char)invalid_text(CU_KIND_COHORT, w->cohorts.items[i],
                                       &w->cohorts.items[i]->meta, tmp, sizeof(tmp));
        if (!co_bad[i] && (err = note_groups(e, &w->cohorts.items[i]->groups)))
            return err;
    }
    e->nres_fr = e->res_names.n;
    e->nflv_fr = e->flavors.n;
    size_t cells = e->nres_fr * e->nflv_fr;
    e->frmat = malloc((cells ? cells : 1) * sizeof(int));
    if (!e->frmat)
        return CU_ENOMEM;
    for (size_t i = 0; i < cells; i++)
        e->frmat[i] = -1;
    for (size_t i = 0; i < w->cqs.n; i++)
        if (!cq_bad[i])
            mark_frs(e, &w->cqs.items[i]->groups);
    for (size_t i = 0; i < w->cohorts.n; i++)
        if (!co_bad[i])
            mark_frs(e, &w->cohorts.items[i]->groups);
    e->fr_flv = malloc((e->nfr ? e->nfr : 1) * sizeof(int));
    e->fr_res = malloc((e->nfr ? e->nfr : 1) * sizeof(int));
    if (!e->fr_flv || !e->fr_res)
        return CU_ENOMEM;
    for (size_t f = 0; f < e->nflv_fr; f++)
        for (size_t r = 0; r < e->nres_fr; r++) {
            int fr = e->frmat[f * e->nres_fr + r];
            if (fr >= 0) {
                e->fr_flv[fr] = (int)f;
                e->fr_res[fr] = (int)r;
            }
        }
    for (size_t i = 0; i < w->cqs.n; i++) {
        if (cu_strmap_get(&e->cq_map, w->cqs.items[i]->meta.name) >= 0)
            continue; /* duplicate: validation reports it */
        if ((err = build_cq(e, w->cqs.items[i], cq_bad[i])))
            return err;
    }
    if ((err = build_tree(e)))
        return err;
    warn_cycles(e, d);
    for (size_t i = 0; i < w->namespaces.n; i++)
        if (cu_strmap_put(&e->ns_map, w->namespaces.items[i]->meta.name, (int)i))
            return CU_ENOMEM;
    for (size_t i = 0; i < w->lqs.n; i++) {
        const cu_local_queue *o = w->lqs.items[i];
        elq l;
        l.key = cu_arena_printf(&e->arena, "%s/%s", o->meta.ns ? o->meta.ns : "default", o->meta.name);
        l.obj = o;
        l.cq = o->cluster_queue ? cu_strmap_get(&e->cq_map, o->cluster_queue) : -1;
        l.active = o->stop_policy == CU_STOP_NONE;
        l.bad = invalid_arena(e, CU_KIND_LOCAL_QUEUE, o, &o->meta);
        l.afs_consumed = l.afs_penalty = NULL;
        l.afs_n = 0;
        if (!l.key)
            return CU_ENOMEM;
        if (cu_strmap_get(&e->lq_map, l.key) >= 0)
            continue;
        if (VEC_PUSH(e->lqs, l) || cu_strmap_put(&e->lq_map, l.key, (int)e->lqs.n - 1))
            return CU_ENOMEM;
    }
    for (size_t i = 0; i < w->workloads.n; i++)
        if (cu_engine_add_workload(e, w->workloads.items[i]) < 0)
            return CU_ENOMEM;
    /* Kueue keeps workloads admitted before a quota cut; the quota
     * checks of cu_engine_check_invariants cannot hold then */
    for (size_t i = 0; i < e->cqs.n && !e->overcommitted_input; i++) {
        cu_diag tmp;
        cu_diag_init(&tmp);
        if (cu_quota_check(cu_quota_root(e->cqs.items[i].node), NULL, NULL, &tmp) != CU_OK)
            e->overcommitted_input = 1;
        cu_diag_free(&tmp);
    }
    e->views_dirty = 1;
    return CU_OK;
}

/* Moves every inadmissible workload of tree back to its heap. */
void cu_engine_requeue_tree(cu_engine *e, int tree)
{
    for (size_t i = 0; i < e->cqs.n; i++) {
        ecq *c = &e->cqs.items[i];
        if (c->tree != tree || !c->q.ninadm)
            continue;
        cu_pq_requeue_all(&c->q);
        cu_engine_mark_nonempty(e, (int)i);
    }
}

/* Releases the quota of one workload whose preemption was issued and
 * queues it again. */
static cu_err release_evicted(cu_engine *e, ewl *w)
{
    evict(e, w);
    w->evicted_at = cu_clock_now(&e->opts.clock);
    w->cq = -1;
    cu_diag tmp;
    cu_diag_init(&tmp);
    cu_err err = queue_wl(e, w, &tmp);
    cu_diag_free(&tmp);
    if (err)
        return err;
    if (w->note && w->state == WL_QUEUED)
        set_msg(w, R_PENDING, w->note);
    e->views_dirty = 1;
    return CU_OK;
}

int cu_engine_complete_evictions(cu_engine *e)
{
    int n = 0;
    for (size_t i = 0; i < e->evicting.n; i++) {
        ewl *w = e->wls.items[e->evicting.items[i]];
        if (!w->evicting || w->state != WL_ADMITTED)
            continue;
        if (release_evicted(e, w))
            return -1;
        n++;
    }
    e->evicting.n = 0;
    return n;
}

cu_err cu_engine_eviction_done(cu_engine *e, int idx)
{
    if (idx < 0 || (size_t)idx >= e->wls.n)
        return CU_ENOTFOUND;
    ewl *w = e->wls.items[idx];
    if (!w->evicting || w->state != WL_ADMITTED)
        return CU_ENOTFOUND;
    cu_err err = release_evicted(e, w);
    if (err)
        return err;
    for (size_t i = 0; i < e->evicting.n; i++)
        if (e->evicting.items[i] == idx) {
            e->evicting.items[i] = e->evicting.items[--e->evicting.n];
            break;
        }
    return CU_OK;
}

cu_err cu_engine_finish(cu_engine *e, int idx)
{
    if (idx < 0 || (size_t)idx >= e->wls.n)
        return CU_ENOTFOUND;
    ewl *w = e->wls.items[idx];
    if (w->state == WL_FINISHED)
        return CU_OK;
    if (w->state == WL_QUEUED && w->cq >= 0)
        cu_pq_remove(&e->cqs.items[w->cq].q, &w->qi);
    int was_admitted = w->state == WL_ADMITTED;
    w->state = WL_FINISHED;
    w->evicting = 0;
    if (was_admitted && w->cq >= 0) {
        cu_engine_apply_usage(e, w, -1);
        e->cqs.items[w->cq].admitted--;
        cu_engine_adm_del(&e->cqs.items[w->cq], w);
        cu_engine_requeue_tree(e, e->cqs.items[w->cq].tree);
    }
    e->views_dirty = 1;
    return CU_OK;
}

size_t cu_engine_take_evicted(cu_engine *e, int *out, size_t max)
{
    size_t n = 0;
    while (n < max && e->evicted_taken < e->evicted_log.n)
        out[n++] = e->evicted_log.items[e->evicted_taken++];
    if (e->evicted_taken == e->evicted_log.n) {
        e->evicted_log.n = 0;
        e->evicted_taken = 0;
    }
    return n;
}

int cu_engine_wl_evicting(const cu_engine *e, int idx)
{
    if (idx < 0 || (size_t)idx >= e->wls.n)
        return 0;
    const ewl *w = e->wls.items[idx];
    return w->evicting && w->state == WL_ADMITTED;
}

int cu_engine_wl_finished(const cu_engine *e, int idx)
{
    return idx >= 0 && (size_t)idx < e->wls.n && e->wls.items[idx]->state == WL_FINISHED;
}

int cu_engine_wl_admitted(const cu_engine *e, int idx)
{
    if (idx < 0 || (size_t)idx >= e->wls.n)
        return 0;
    return e->wls.items[idx]->state == WL_ADMITTED;
}

size_t cu_engine_take_admitted(cu_engine *e, int *out, size_t max)
{
    size_t n = 0;
    while (n < max && e->admitted_taken < e->admitted_log.n)
        out[n++] = e->admitted_log.items[e->admitted_taken++];
    if (e->admitted_taken == e->admitted_log.n) {
        e->admitted_log.n = 0;
        e->admitted_taken = 0;
    }
    return n;
}

int cu_engine_run(cu_engine *e, int max_cycles)
{
    int n = 0;
    while (n < max_cycles) {
        cu_cycle_stats st;
        n++;
        if (cu_engine_cycle(e, &st) != CU_OK || !st.progress)
            break;
    }
    return n;
}

/* ---------------- invariants ---------------- */

typedef struct usage_ctx { const cu_engine *e; int64_t *sum; } usage_ctx;

static int64_t expected_cq_usage(const cu_qnode *n, size_t fr, void *ud)
{
    usage_ctx *u = ud;
    return u->sum[(size_t)n->id * u->e->nfr + fr];
}

cu_err cu_engine_check_invariants(const cu_engine *e, cu_diag *d)
{
    size_t cells = e->cqs.n * e->nfr;
    int64_t *sum = calloc(cells ? cells : 1, sizeof(int64_t));
    if (!sum)
        return CU_ENOMEM;
    int *admitted = calloc(e->cqs.n ? e->cqs.n : 1, sizeof(int));
    if (!admitted) {
        free(sum);
        return CU_ENOMEM;
    }
    for (size_t i = 0; i < e->wls.n; i++) {
        const ewl *w = e->wls.items[i];
        if (w->state != WL_ADMITTED || w->cq < 0)
            continue;
        admitted[w->cq]++;
        for (size_t u = 0; u < w->nuse; u++)
            sum[(size_t)w->cq * e->nfr + (size_t)w->use_fr[u]] += w->use_amt[u];
    }
    usage_ctx ctx = {e, sum};
    cu_err err = CU_OK;
    for (size_t i = 0; i < e->cqs.n && !err; i++) {
        if (admitted[i] != e->cqs.items[i].admitted) {
            cu_diag_error(d, "ClusterQueue %s: admitted counter %d, but %d workloads hold quota",
                          e->cqs.items[i].name, e->cqs.items[i].admitted, admitted[i]);
            err = CU_EINVAL;
        }
        const cu_qnode *root = cu_quota_root(e->cqs.items[i].node);
        if (root == e->cqs.items[i].node && !err)
            err = cu_quota_check_ex(root, expected_cq_usage, &ctx, !e->overcommitted_input, d);
    }
    for (size_t i = 0; i < e->cohorts.n && !err; i++)
        if (!e->cohorts.items[i].node->parent)
            err = cu_quota_check_ex(e->cohorts.items[i].node, expected_cq_usage, &ctx,
                                    !e->overcommitted_input, d);
    free(sum);
    free(admitted);
    return err;
}

/* ---------------- Admission Fair Sharing ---------------- */

int cu_afs_on(const cu_engine *e, const ecq *c)
{
    return e->opts.afs && c->obj->afs;
}

static double afs_weight(const cu_engine *e, int res)
{
    if (!e->opts.afs_weights)
        return 1.0;
    int64_t w = cu_reslist_get(e->opts.afs_weights, e->res_names.items[res]);
    return w > 0 ? (double)w / 1000.0 : 1.0;
}

double cu_afs_usage(const cu_engine *e, int lqi)
{
    if (lqi < 0)
        return 0;
    const elq *l = &e->lqs.items[lqi];
    double sum = 0;
    for (size_t r = 0; r < l->afs_n; r++)
        sum += afs_weight(e, (int)r) * (l->afs_consumed[r] + l->afs_penalty[r]);
    if (sum == 0)
        return 0;
    if (l->obj->fs_weight <= 0)
        return 1e300;
    return sum / ((double)l->obj->fs_weight / 1000.0);
}

/* alpha(dt) = 1 - 0.5^(dt / halfLife); 0 with a zero half-life. */
static double afs_alpha(const cu_engine *e, int64_t dt_ms)
{
    if (e->opts.afs_half_life_ms <= 0)
        return 0;
    return 1.0 - pow(0.5, (double)dt_ms / (double)e->opts.afs_half_life_ms);
}

static cu_err afs_grow(cu_engine *e, elq *l)
{
    size_t n = e->res_names.n;
    if (l->afs_n >= n)
        return CU_OK;
    double *c = realloc(l->afs_consumed, n * sizeof(double));
    if (!c)
        return CU_ENOMEM;
    l->afs_consumed = c;
    double *p = realloc(l->afs_penalty, n * sizeof(double));
    if (!p)
        return CU_ENOMEM;
    l->afs_penalty = p;
    for (size_t i = l->afs_n; i < n; i++)
        c[i] = p[i] = 0;
    l->afs_n = n;
    return CU_OK;
}

cu_err cu_afs_admitted(cu_engine *e, ecq *c, ewl *w)
{
    if (!cu_afs_on(e, c) || w->lq < 0)
        return CU_OK;
    elq *l = &e->lqs.items[w->lq];
    cu_err err = afs_grow(e, l);
    if (err)
        return err;
    int64_t sampling = e->opts.afs_sampling_ms > 0 ? e->opts.afs_sampling_ms : 300000;
    double a = afs_alpha(e, sampling);
    for (size_t p = 0; w->adm && p < w->nps; p++)
        for (size_t i = 0; i < w->adm[p].n; i++)
            l->afs_penalty[w->adm[p].res[i]] += (double)w->adm[p].amt[i] / 1000.0 * a;
    /* every workload of that LocalQueue now sorts with the new usage */
    double u = cu_afs_usage(e, w->lq);
    for (size_t i = 0; i < e->wls.n; i++) {
        ewl *x = e->wls.items[i];
        if (x->lq == w->lq)
            x->qi.afs = u;
    }
    cu_pq_rebuild(&c->q);
    return CU_OK;
}
