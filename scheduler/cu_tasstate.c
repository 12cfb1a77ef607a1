/*
 * cu_tasstate.c - Topology-Aware Scheduling's state in the engine: one
 * placement snapshot (topology/cu_tas.h) per TAS flavor, fed with the
 * world's nodes and bound pods and kept current by the driver
 * (cu_engine_node_set, cu_engine_node_remove, cu_engine_pod_usage), and
 * the topology assignments of admitted workloads, whose usage is counted
 * on the snapshots together with their quota (cu_engine_apply_usage), so
 * that every change of quota usage (admission, eviction, finish, and the
 * preemption searches' simulated removals) changes TAS usage with it.
 *
 * The lowest layer of the engine: it calls no other scheduler file.
 */
#include "cu_state_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void shape_free(etas *x)
{
    free(x->shape.items);
    x->shape.items = NULL;
    x->shape.n = 0;
    x->has_shape = 0;
}

void cu_engine_tas_free(cu_engine *e)
{
    for (size_t i = 0; i < e->tas.n; i++) {
        cu_tas_free(e->tas.items[i].t);
        shape_free(&e->tas.items[i]);
    }
    free(e->tas.items);
    e->tas.items = NULL;
    e->tas.n = 0;
    free(e->tas_over);
    e->tas_over = NULL;
    cu_engine_tas_drop(e);
    free(e->tas_kept.items);
    free(e->tas_kept_n.items);
    cu_strmap_free(&e->pod_node);
    free(e->pod_count.items);
    e->pod_count.items = NULL;
    e->pod_count.n = 0;
}

static void node_view(const cu_kube_node *n, cu_tas_node *out)
{
    out->name = n->meta.name;
    out->labels = &n->meta.labels;
    out->allocatable = &n->allocatable;
    out->ready = n->ready;
    out->unschedulable = n->unschedulable;
    out->ntaints = n->ntaints;
    out->taints = n->taints;
}

/* The Topology named name in the world, or NULL. */
static const cu_topology *find_topology(const cu_world *w, const char *name)
{
    for (size_t i = 0; w && name && i < w->topologies.n; i++)
        if (w->topologies.items[i]->meta.name &&
            strcmp(w->topologies.items[i]->meta.name, name) == 0)
            return w->topologies.items[i];
    return NULL;
}

cu_err cu_engine_tas_load(cu_engine *e)
{
    const cu_world *w = e->world;
    for (size_t f = 0; f < e->flavors.n; f++) {
        eflavor *fl = &e->flavors.items[f];
        fl->tas = -1;
        const cu_topology *tp = fl->obj ? find_topology(w, fl->obj->topology_name) : NULL;
        if (!tp || !tp->nlevels)
            continue;
        etas x;
        memset(&x, 0, sizeof(x));
        x.flv = (int)f;
        x.flavor = fl->name;
        x.topology = cu_arena_strdup(&e->arena, tp->meta.name);
        x.nlevels = tp->nlevels;
        x.levels = cu_arena_alloc(&e->arena, tp->nlevels * sizeof(char *));
        if (!x.topology || !x.levels)
            return CU_ENOMEM;
        for (size_t l = 0; l < tp->nlevels; l++)
            if (!(x.levels[l] = cu_arena_strdup(&e->arena, tp->levels[l])))
                return CU_ENOMEM;
        cu_tas_flavor tf = { x.topology,     x.nlevels,    x.levels, &fl->obj->node_labels,
                             fl->obj->ntols, fl->obj->tols };
        x.t = cu_tas_new(&tf);
        if (!x.t)
            return CU_ENOMEM;
        if (VEC_PUSH(e->tas, x)) {
            cu_tas_free(x.t);
            return CU_ENOMEM;
        }
        fl->tas = (int)e->tas.n - 1;
    }
    for (size_t i = 0; w && i < w->nodes.n; i++) {
        cu_err err = cu_engine_node_set(e, w->nodes.items[i]);
        if (err)
            return err;
    }
    for (size_t i = 0; w && i < w->pods.n; i++) {
        const cu_kube_pod *p = w->pods.items[i];
        if (!p->node_name || p->ended || p->tas)
            continue;
        cu_err err = cu_engine_pod_usage(e, p->node_name, &p->requests, 1);
        if (err)
            return err;
    }
    return CU_OK;
}

cu_err cu_engine_node_set(cu_engine *e, const cu_kube_node *n)
{
    if (!n || !n->meta.name)
        return CU_EINVAL;
    cu_tas_node v;
    node_view(n, &v);
    e->tas_nodes_gen++;
    for (size_t i = 0; i < e->tas.n; i++) {
        cu_err err = cu_tas_node_set(e->tas.items[i].t, &v);
        if (err)
            return err;
    }
    e->views_dirty = 1;
    return CU_OK;
}

void cu_engine_node_remove(cu_engine *e, const char *name)
{
    if (!name)
        return;
    e->tas_nodes_gen++;
    for (size_t i = 0; i < e->tas.n; i++)
        cu_tas_node_remove(e->tas.items[i].t, name);
    e->views_dirty = 1;
}

cu_err cu_engine_pod_usage(cu_engine *e, const char *node, const cu_reslist *per_pod, int sign)
{
    if (!node)
        return CU_EINVAL;
    e->tas_nodes_gen++;
    for (size_t i = 0; i < e->tas.n; i++) {
        cu_err err = cu_tas_usage(e->tas.items[i].t, node, per_pod, 1, sign);
        if (err)
            return err;
    }
    int k = cu_strmap_get(&e->pod_node, node);
    if (k < 0) {
        const char *copy = cu_arena_strdup(&e->arena, node);
        if (!copy || VEC_PUSH(e->pod_count, 0) ||
            cu_strmap_put(&e->pod_node, copy, (int)e->pod_count.n - 1))
            return CU_ENOMEM;
        k = (int)e->pod_count.n - 1;
    }
    e->pod_count.items[k] += sign > 0 ? 1 : -1;
    return CU_OK;
}

int32_t cu_engine_tas_bound_pods(const cu_engine *e, const char *node)
{
    int k = cu_strmap_get(&e->pod_node, node);
    return k < 0 ? 0 : e->pod_count.items[k];
}

size_t cu_engine_ntas(const cu_engine *e) { return e->tas.n; }

struct cu_tas *cu_engine_tas(cu_engine *e, size_t i, const char **flavor)
{
    if (i >= e->tas.n)
        return NULL;
    if (flavor)
        *flavor = e->tas.items[i].flavor;
    return e->tas.items[i].t;
}

const cu_reslist *cu_engine_tas_pending_shape(cu_engine *e, size_t i)
{
    if (i >= e->tas.n)
        return NULL;
    etas *x = &e->tas.items[i];
    shape_free(x);
    /* the largest shape among the pending pod sets whose last attempt
     * failed placement in this flavor: the greatest request of the
     * resource with the greatest request, then the greatest sum */
    const cu_reslist *best = NULL;
    int64_t bmax = 0, bsum = 0;
    for (size_t k = 0; k < e->wls.n; k++) {
        const ewl *w = e->wls.items[k];
        if (w->state != WL_QUEUED || w->tas_wait != (int)i + 1 || (size_t)w->tas_ps >= w->nps)
            continue;
        const cu_reslist *r = &w->obj->podsets[w->tas_ps].requests;
        int64_t mx = 0, sum = 0;
        for (size_t j = 0; j < r->n; j++) {
            if (r->items[j].milli > mx)
                mx = r->items[j].milli;
            sum = cu_qty_sat_add(sum, r->items[j].milli);
        }
        if (!best || mx > bmax || (mx == bmax && sum > bsum)) {
            best = r;
            bmax = mx;
            bsum = sum;
        }
    }
    if (!best)
        return NULL;
    x->shape.items = malloc((best->n ? best->n : 1) * sizeof(cu_res));
    if (!x->shape.items)
        return NULL;
    memcpy(x->shape.items, best->items, best->n * sizeof(cu_res));
    x->shape.n = best->n;
    x->has_shape = 1;
    return &x->shape;
}

/* ---------------- admitted workloads' assignments ---------------- */

static void topo_clear(etopo *p)
{
    if (p->ta.values)
        for (size_t i = 0; i < p->ta.ndomains * p->ta.nlevels; i++)
            free((char *)p->ta.values[i]);
    free(p->ta.values);
    free(p->ta.counts);
    free(p->per_pod.items);
    memset(p, 0, sizeof(*p));
    p->tas = -1;
}

void cu_engine_tas_forget(ewl *w)
{
    if (!w->topo)
        return;
    for (size_t i = 0; i < w->nps; i++)
        topo_clear(&w->topo[i]);
    free(w->topo);
    w->topo = NULL;
}

void cu_engine_tas_apply(cu_engine *e, const ewl *w, int sign)
{
    if (!w->topo)
        return;
    for (size_t p = 0; p < w->nps; p++) {
        const etopo *x = &w->topo[p];
        if (x->tas < 0 || (size_t)x->tas >= e->tas.n)
            continue;
        cu_tas *t = e->tas.items[x->tas].t;
        for (size_t d = 0; d < x->ta.ndomains; d++)
            (void)cu_tas_assigned(t, x->ta.values + d * x->ta.nlevels, x->ta.nlevels, &x->per_pod,
                                  x->ta.counts[d], sign);
    }
}

void cu_engine_tas_check(cu_engine *e, const ewl *w)
{
    for (size_t p = 0; w->topo && p < w->nps && !e->tas_over; p++) {
        const etopo *x = &w->topo[p];
        if (x->tas < 0 || x->ta.nlevels != 1 || strcmp(x->ta.levels[0], CU_TAS_HOSTNAME) != 0)
            continue;
        cu_tas *t = e->tas.items[x->tas].t;
        for (size_t d = 0; d < x->ta.ndomains && !e->tas_over; d++)
            for (size_t r = 0; r < x->per_pod.n && !e->tas_over; r++) {
                int64_t v = 0;
                const char *node = x->ta.values[d], *res = x->per_pod.items[r].name;
                if (cu_tas_node_free(t, node, res, &v) == CU_OK && v < 0) {
                    char buf[512];
                    snprintf(buf, sizeof buf,
                             "Workload %s: its admission put node %s over its allocatable %s "
                             "(%lld free)",
                             w->key, node, res, (long long)v);
                    e->tas_over = strdup(buf);
                }
            }
    }
}

static cu_err topo_alloc(ewl *w)
{
    if (w->topo)
        return CU_OK;
    w->topo = calloc(w->nps ? w->nps : 1, sizeof(etopo));
    if (!w->topo)
        return CU_ENOMEM;
    for (size_t i = 0; i < w->nps; i++)
        w->topo[i].tas = -1;
    return CU_OK;
}

/* Fills x from levels/values/counts (nlevels values per domain, copied);
 * levels are the etas's. */
static cu_err topo_fill(etopo *x, const etas *s, size_t nlevels, size_t ndomains,
                        const char *const *values, size_t stride, size_t skip,
                        const int32_t *counts, const cu_reslist *per_pod)
{
    x->ta.nlevels = nlevels;
    x->ta.levels = (const char **)(s->levels + (s->nlevels - nlevels));
    x->ta.ndomains = ndomains;
    x->ta.values = calloc(ndomains * nlevels > 0 ? ndomains * nlevels : 1, sizeof(char *));
    x->ta.counts = calloc(ndomains ? ndomains : 1, sizeof(int32_t));
    x->per_pod.items = malloc((per_pod->n ? per_pod->n : 1) * sizeof(cu_res));
    if (!x->ta.values || !x->ta.counts || !x->per_pod.items)
        return CU_ENOMEM;
    memcpy(x->per_pod.items, per_pod->items, per_pod->n * sizeof(cu_res));
    x->per_pod.n = per_pod->n;
    for (size_t d = 0; d < ndomains; d++) {
        x->ta.counts[d] = counts[d];
        for (size_t l = 0; l < nlevels; l++) {
            const char *v = values[d * stride + skip + l];
            if (!(x->ta.values[d * nlevels + l] = strdup(v ? v : "")))
                return CU_ENOMEM;
        }
    }
    return CU_OK;
}

cu_err cu_engine_tas_record(cu_engine *e, ewl *w, size_t p, int ti, const cu_tas_result *r,
                            const cu_reslist *per_pod)
{
    if (p >= w->nps || ti < 0 || (size_t)ti >= e->tas.n || !r->ok)
        return CU_EINVAL;
    cu_err err = topo_alloc(w);
    if (err)
        return err;
    etopo *x = &w->topo[p];
    topo_clear(x);
    x->tas = ti;
    const etas *s = &e->tas.items[ti];
    int32_t *counts = malloc((r->ndomains ? r->ndomains : 1) * sizeof(int32_t));
    const char **vals =
        malloc((r->ndomains * r->nlevels > 0 ? r->ndomains * r->nlevels : 1) * sizeof(char *));
    if (!counts || !vals) {
        free(counts);
        free(vals);
        return CU_ENOMEM;
    }
    for (size_t d = 0; d < r->ndomains; d++) {
        counts[d] = r->domains[d].count;
        for (size_t l = 0; l < r->nlevels; l++)
            vals[d * r->nlevels + l] = r->domains[d].values[l];
    }
    err = topo_fill(x, s, r->nlevels, r->ndomains, vals, r->nlevels, 0, counts, per_pod);
    free(counts);
    free(vals);
    if (err)
        topo_clear(x);
    return err;
}

/* The per-pod requests of pod set ps counted on the TAS flavor fid: its
 * requests of the resources psa assigns to that flavor (Kueue's TAS
 * usage leaves quota-only flavors out). out->items is malloc'd, the names
 * borrowed from ps. */
static cu_err per_pod_on(const cu_podset *ps, const cu_psa *psa, const char *flavor,
                         cu_reslist *out)
{
    out->n = 0;
    out->items = malloc((ps->requests.n ? ps->requests.n : 1) * sizeof(cu_res));
    if (!out->items)
        return CU_ENOMEM;
    for (size_t r = 0; r < ps->requests.n; r++) {
        const char *f = cu_kvs_get(&psa->flavors, ps->requests.items[r].name);
        if (f && strcmp(f, flavor) == 0)
            out->items[out->n++] = ps->requests.items[r];
    }
    return CU_OK;
}

const cu_psa *cu_engine_psa_of(const cu_workload *o, size_t i, const char *name)
{
    const cu_psa *psa = NULL;
    for (size_t j = 0; j < o->npsa; j++)
        if (o->psa[j].name && strcmp(o->psa[j].name, name) == 0)
            psa = &o->psa[j];
    if (!psa && i < o->npsa)
        psa = &o->psa[i];
    return psa;
}

cu_err cu_engine_tas_from_status(cu_engine *e, ewl *w)
{
    const cu_workload *o = w->obj;
    if (!e->tas.n)
        return CU_OK;
    for (size_t i = 0; i < w->nps; i++) {
        const cu_psa *psa = cu_engine_psa_of(o, i, w->ps[i].name);
        if (!psa || !psa->topo || !psa->topo->ndomains)
            continue;
        const cu_topo_assign *ta = psa->topo;
        /* its TAS flavor: the one of its flavors that is a TAS flavor */
        int ti = -1;
        for (size_t k = 0; k < psa->flavors.n && ti < 0; k++) {
            int fid = cu_strmap_get(&e->flv_map, psa->flavors.items[k].value);
            if (fid >= 0 && e->flavors.items[fid].tas >= 0)
                ti = e->flavors.items[fid].tas;
        }
        if (ti < 0)
            continue;
        const etas *s = &e->tas.items[ti];
        /* the snapshot keeps the hostname alone when it is the lowest
         * level, else every level: take those values of each domain */
        int host = strcmp(s->levels[s->nlevels - 1], CU_TAS_HOSTNAME) == 0;
        size_t want = host ? 1 : s->nlevels;
        if (!ta->nlevels || ta->nlevels < want || !ta->values || !ta->counts ||
            strcmp(ta->levels[ta->nlevels - 1], s->levels[s->nlevels - 1]) != 0)
            continue;
        cu_reslist pp;
        cu_err err = per_pod_on(&o->podsets[i], psa, s->flavor, &pp);
        if (!err)
            err = topo_alloc(w);
        if (!err) {
            topo_clear(&w->topo[i]);
            w->topo[i].tas = ti;
            err = topo_fill(&w->topo[i], s, want, ta->ndomains, ta->values, ta->nlevels,
                            ta->nlevels - want, ta->counts, &pp);
            if (err)
                topo_clear(&w->topo[i]);
        }
        free(pp.items);
        if (err)
            return err;
    }
    return CU_OK;
}

/* ---------------- placement of a flavor assignment ---------------- */

cu_err cu_engine_tas_place(cu_engine *e, const tasplan *p, int simulate_empty, cu_tas_result *res,
                           size_t *fail)
{
    cu_tas_result one[8];
    cu_tas_result *r = res;
    if (!r) {
        r = p->n <= 8 ? one : malloc(p->n * sizeof(cu_tas_result));
        if (!r)
            return CU_ENOMEM;
    }
    memset(r, 0, p->n * sizeof(cu_tas_result));
    cu_tas_opts o = { CU_TAS_PROFILE_MIXED, simulate_empty };
    cu_err err = CU_OK;
    for (size_t i = 0; i < p->n && !err;) {
        size_t j = i;
        while (j < p->n && p->ti[j] == p->ti[i])
            j++;
        err = cu_tas_place(e->tas.items[p->ti[i]].t, p->req + i, j - i, &o, r + i);
        if (err == CU_EINVAL && fail) {
            *fail = i;
            for (size_t k = i; k < j; k++)
                if (!r[k].ok) {
                    *fail = k;
                    break;
                }
        }
        i = j;
    }
    if (!res) {
        for (size_t i = 0; i < p->n; i++)
            cu_tas_result_free(&r[i]);
        if (r != one)
            free(r);
    }
    return err;
}

int cu_engine_tas_fits(cu_engine *e, const tasplan *p)
{
    return !p || !p->n || cu_engine_tas_place(e, p, 0, NULL, NULL) == CU_OK;
}

cu_err cu_engine_tas_keep(cu_engine *e, cu_tas_result *r, size_t n)
{
    if (VEC_PUSH(e->tas_kept, r))
        return CU_ENOMEM;
    if (VEC_PUSH(e->tas_kept_n, n)) {
        e->tas_kept.n--;
        return CU_ENOMEM;
    }
    return CU_OK;
}

void cu_engine_tas_drop(cu_engine *e)
{
    for (size_t i = 0; i < e->tas_kept.n; i++)
        for (size_t k = 0; k < e->tas_kept_n.items[i]; k++)
            cu_tas_result_free(&e->tas_kept.items[i][k]);
    e->tas_kept.n = 0;
    e->tas_kept_n.n = 0;
}

int cu_engine_tas_still_fits(cu_engine *e, const tasplan *p)
{
    if (!p->res)
        return 0;
    /* the amounts the plan puts on each node, summed over its pod sets */
    typedef struct need {
        int ti;
        const char *node, *res;
        int64_t amt;
    } need;
    need buf[64];
    size_t nn = 0;
    for (size_t i = 0; i < p->n; i++) {
        const cu_tas_result *r = &p->res[i];
        if (!r->ok || r->nlevels != 1 || strcmp(r->levels[0], CU_TAS_HOSTNAME) != 0)
            return 0;
        const cu_reslist *pp = p->req[i].per_pod;
        for (size_t d = 0; d < r->ndomains; d++)
            for (size_t k = 0; k <= pp->n; k++) {
                const char *res = k < pp->n ? pp->items[k].name : CU_TAS_PODS;
                int64_t per = k < pp->n ? pp->items[k].milli : 1;
                int64_t amt;
                if (cu_qty_mul(per, r->domains[d].count, &amt) != CU_OK)
                    return 0;
                size_t j;
                for (j = 0; j < nn; j++)
                    if (buf[j].ti == p->ti[i] &&
                        strcmp(buf[j].node, r->domains[d].values[0]) == 0 &&
                        strcmp(buf[j].res, res) == 0)
                        break;
                if (j == nn) {
                    if (nn == sizeof(buf) / sizeof(buf[0]))
                        return 0; /* a large plan: placed again */
                    buf[nn++] = (need){ p->ti[i], r->domains[d].values[0], res, 0 };
                }
                buf[j].amt = cu_qty_sat_add(buf[j].amt, amt);
            }
    }
    for (size_t j = 0; j < nn; j++) {
        int64_t fr = 0;
        if (cu_tas_node_free(e->tas.items[buf[j].ti].t, buf[j].node, buf[j].res, &fr) != CU_OK ||
            fr < buf[j].amt)
            return 0;
    }
    return 1;
}
