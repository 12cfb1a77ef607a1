/*
 * cu_engine.c - the engine's lifecycle (new, free), interning of resource and
 * flavor names into ids, and the invariant checks. Building the queues is in
 * cu_build.c, loading a world in cu_load.c, the workloads in cu_workloads.c,
 * the scheduling cycle in cu_cycle.c.
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
#include "cu_state_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    cu_strmap_init(&e->pod_node);
    cu_arena_init(&e->arena, 64 * 1024);
    cu_arena_init(&e->cycle, 64 * 1024);
    cu_arena_init(&e->scratch, 64 * 1024);
    cu_arena_init(&e->varena, 64 * 1024);
    cu_arena_init(&e->v1arena, 4 * 1024);
    e->views_dirty = 1;
    return e;
}

void cu_engine_free_wl(ewl *w)
{
    if (!w)
        return;
    free(w->key);
    free(w->rel_ns);
    free(w->message);
    free(w->bad);
    free(w->evict_message);
    free(w->note);
    free(w->plan);
    free(w->fmem);
    cu_engine_tas_forget(w);
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
        cu_engine_free_wl(e->wls.items[i]);
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
    cu_engine_tas_free(e);
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
    cu_arena_free(&e->v1arena);
    free(e->wl_order);
    free(e->wl_view);
    free(e->drs_ratio);
    free(e->drs_gen);
    free(e->drs_valid);
    free(e->lendable);
    free(e->lendable_ok);
    free(e);
}

/* ---------------- interning ---------------- */

int cu_engine_intern_res(cu_engine *e, const char *name)
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

int cu_engine_intern_flavor(cu_engine *e, const char *name)
{
    int id = cu_strmap_get(&e->flv_map, name);
    if (id >= 0)
        return id;
    const char *copy = cu_arena_strdup(&e->arena, name);
    if (!copy)
        return -1;
    eflavor f = { copy, NULL, NULL, -1 };
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

/* ---------------- invariants ---------------- */

typedef struct usage_ctx {
    const cu_engine *e;
    int64_t *sum;
} usage_ctx;

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
    usage_ctx ctx = { e, sum };
    cu_err err = CU_OK;
    if (e->tas_over) {
        cu_diag_error(d, "%s", e->tas_over);
        err = CU_EINVAL;
    }
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
