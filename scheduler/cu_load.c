/*
 * cu_load.c - cu_engine_load: a world into the engine (flavors, queues, cohort
 * tree, LocalQueues, workloads), warning about cohort cycles.
 */
#include "cu_state_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
        cu_diag_warn(d,
                     "Cohort %s: spec.parentName: the cohorts %s form a cycle; every "
                     "ClusterQueue under them is inactive",
                     c->name, path);
    }
}

cu_err cu_engine_load(cu_engine *e, const cu_world *w, cu_diag *d)
{
    e->world = w;
    cu_err err;
    for (size_t i = 0; i < w->flavors.n; i++) {
        int id = cu_engine_intern_flavor(e, w->flavors.items[i]->meta.name);
        if (id < 0)
            return CU_ENOMEM;
        e->flavors.items[id].obj = w->flavors.items[i];
        e->flavors.items[id].bad = cu_engine_invalid_arena(
            e, CU_KIND_RESOURCE_FLAVOR, w->flavors.items[i], &w->flavors.items[i]->meta);
    }
    /* the TAS flavors' snapshots, with the nodes and bound pods */
    if ((err = cu_engine_tas_load(e)))
        return err;
    /* invalid ClusterQueues and Cohorts: their groups are not used */
    const char **cq_bad = cu_arena_alloc(&e->arena, (w->cqs.n ? w->cqs.n : 1) * sizeof(char *));
    char *co_bad = cu_arena_alloc(&e->arena, w->cohorts.n ? w->cohorts.n : 1);
    if (!cq_bad || !co_bad)
        return CU_ENOMEM;
    for (size_t i = 0; i < w->cqs.n; i++) {
        cq_bad[i] = cu_engine_invalid_arena(e, CU_KIND_CLUSTER_QUEUE, w->cqs.items[i],
                                            &w->cqs.items[i]->meta);
        if (!cq_bad[i] && (err = cu_engine_note_groups(e, &w->cqs.items[i]->groups)))
            return err;
    }
    for (size_t i = 0; i < w->cohorts.n; i++) {
        char tmp[8];
        co_bad[i] = (char)cu_engine_invalid_text(CU_KIND_COHORT, w->cohorts.items[i],
                                                 &w->cohorts.items[i]->meta, tmp, sizeof(tmp));
        if (!co_bad[i] && (err = cu_engine_note_groups(e, &w->cohorts.items[i]->groups)))
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
            cu_engine_mark_frs(e, &w->cqs.items[i]->groups);
    for (size_t i = 0; i < w->cohorts.n; i++)
        if (!co_bad[i])
            cu_engine_mark_frs(e, &w->cohorts.items[i]->groups);
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
        if ((err = cu_engine_build_cq(e, w->cqs.items[i], cq_bad[i])))
            return err;
    }
    if ((err = cu_engine_build_tree(e)))
        return err;
    warn_cycles(e, d);
    for (size_t i = 0; i < w->namespaces.n; i++)
        if (cu_strmap_put(&e->ns_map, w->namespaces.items[i]->meta.name, (int)i))
            return CU_ENOMEM;
    for (size_t i = 0; i < w->lqs.n; i++) {
        const cu_local_queue *o = w->lqs.items[i];
        elq l;
        l.key =
            cu_arena_printf(&e->arena, "%s/%s", o->meta.ns ? o->meta.ns : "default", o->meta.name);
        l.obj = o;
        l.cq = o->cluster_queue ? cu_strmap_get(&e->cq_map, o->cluster_queue) : -1;
        l.active = o->stop_policy == CU_STOP_NONE;
        l.bad = cu_engine_invalid_arena(e, CU_KIND_LOCAL_QUEUE, o, &o->meta);
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
