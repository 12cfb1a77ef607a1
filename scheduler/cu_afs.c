/*
 * cu_afs.c - Admission Fair Sharing: decayed LocalQueue usage and entry
 * penalties that order a ClusterQueue's queue.
 */
#include "cu_state_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int cu_afs_on(const cu_engine *e, const ecq *c) { return e->opts.afs && c->obj->afs; }

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
        for (size_t i = 0; i < w->adm[p].n; i++) {
            int r = w->adm[p].res[i]; /* in whole units, as Kueue's quantities: cores, bytes */
            l->afs_penalty[r] += cu_qty_res_float(e->res_names.items[r], w->adm[p].amt[i]) * a;
        }
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
