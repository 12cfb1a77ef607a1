/*
 * cu_place.c - placing pod sets on a TAS flavor's snapshot (cu_tas.h),
 * with the semantics of Kueue v0.17's TAS flavor snapshot:
 *
 * 1. Counts: every leaf domain (a node when the lowest level is
 *    kubernetes.io/hostname) gets how many pods of the request fit in its
 *    free capacity (the minimum over the requested resources, "pods"
 *    included, of free / request); a domain above sums its children; at
 *    the slice level a domain's slice count is its pods / slice size, and
 *    above it the sum of its children's.
 * 2. The level: at the requested level, the domains sorted by the profile
 *    (BestFit: most slices first, then fewest pods, then values;
 *    LeastFreeCapacity: fewest slices first). One domain that takes all
 *    slices is chosen, with BestFit the one with the fewest slices that
 *    still fits (the tightest: it packs). Else required fails, preferred
 *    tries the level above, and at the top (or when unconstrained) the
 *    slices are spread greedily over the sorted domains, BestFit taking
 *    the tightest domain for the last part.
 * 3. Down: level by level to the slice level the chosen domains' children
 *    are sorted and filled the same way with the fewest domains; below the
 *    slice level each domain's pods are spread over its own children.
 *
 * Not done (Kueue's alpha gates, off by default in v0.17): balanced
 * placement (TASBalancedPlacement), multi-layer slices
 * (TASMultiLayerTopology); nor the leader/worker pod-set groups of
 * LeaderWorkerSet, elastic workload slices and node replacement.
 */
#include "cu_tas_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One placement's context (scratch memory in s). */
typedef struct pctx {
    cu_tas *t;
    const cu_tas_request *rq;
    cu_arena *s;
    int lfc, required, unconstrained, no_adm;
    int64_t ss, count;
    size_t lvl, slvl, L;
    /* the request, sorted by resource name, "pods" included */
    size_t nr;
    int *ri;
    int64_t *ra;
    const char **rn;
    int64_t *assumed; /* [leaf * R + resource] */
    size_t R;
    unsigned char *elig; /* by position in t->sorted */
    /* Kueue's exclusion stats */
    size_t nleaves, ex_sel, ex_aff, ntaint;
    const char **taint_s;
    size_t *taint_n;
    size_t *res_ex; /* by request index */
} pctx;

/* ---- the request ---- */

typedef struct rsort {
    const char *name;
    int64_t amt;
} rsort;

static int rsort_cmp(const void *a, const void *b)
{
    return strcmp(((const rsort *)a)->name, ((const rsort *)b)->name);
}

/* Resolves per_pod plus one "pods" into c->ri/ra/rn (zero amounts left
 * out, as they never limit). */
static cu_err resolve(pctx *c, const cu_reslist *per_pod)
{
    size_t np = per_pod ? per_pod->n : 0, n = 0;
    rsort *v = cu_arena_alloc(c->s, (np + 1) * sizeof *v);
    c->ri = cu_arena_alloc(c->s, (np + 1) * sizeof *c->ri);
    c->ra = cu_arena_alloc(c->s, (np + 1) * sizeof *c->ra);
    c->rn = cu_arena_alloc(c->s, (np + 1) * sizeof *c->rn);
    c->res_ex = cu_arena_alloc(c->s, (np + 1) * sizeof *c->res_ex);
    if (!v || !c->ri || !c->ra || !c->rn || !c->res_ex)
        return CU_ENOMEM;
    int64_t pods = 1;
    for (size_t i = 0; i < np; i++) {
        if (strcmp(per_pod->items[i].name, CU_TAS_PODS) == 0)
            pods += per_pod->items[i].milli;
        else if (per_pod->items[i].milli != 0)
            v[n++] = (rsort){ per_pod->items[i].name, per_pod->items[i].milli };
    }
    v[n++] = (rsort){ CU_TAS_PODS, pods };
    qsort(v, n, sizeof *v, rsort_cmp);
    for (size_t i = 0; i < n; i++) {
        int r = cu_tas_int_res(c->t, v[i].name);
        if (r < 0)
            return CU_ENOMEM;
        c->ri[i] = r;
        c->ra[i] = v[i].amt;
        c->rn[i] = c->t->resnames.items[r];
    }
    c->nr = n;
    return CU_OK;
}

/* How many pods fit in free[] (by request index); *lim: the limiting
 * request index (the first by name among equals). */
static int64_t count_in(const pctx *c, const int64_t *free, size_t *lim)
{
    int64_t best = -1;
    for (size_t k = 0; k < c->nr; k++) {
        int64_t n = free[k] <= 0 ? 0 : free[k] / c->ra[k];
        if (best < 0 || n < best) {
            best = n;
            if (lim)
                *lim = k;
        }
    }
    if (best > INT32_MAX)
        best = INT32_MAX;
    return best < 0 ? 0 : best;
}

/* ---- node eligibility for the pod set ---- */

static char *taint_str(cu_arena *a, const cu_taint *x)
{
    const char *k = x->key ? x->key : "", *e = x->effect ? x->effect : "";
    if (x->value && *x->value)
        return cu_arena_printf(a, "%s=%s:%s", k, x->value, e);
    return cu_arena_printf(a, "%s:%s", k, e);
}

static void count_taint(pctx *c, const cu_taint *x)
{
    char *s = taint_str(c->s, x);
    if (!s)
        return;
    for (size_t i = 0; i < c->ntaint; i++)
        if (strcmp(c->taint_s[i], s) == 0) {
            c->taint_n[i]++;
            return;
        }
    if (c->ntaint < c->t->nsorted) {
        c->taint_s[c->ntaint] = s;
        c->taint_n[c->ntaint++] = 1;
    }
}

/* Kueue checks the pod set's tolerations (with the flavor's), nodeSelector
 * and required node affinity only when the leaves are nodes. stats: count
 * the exclusions. */
static int eligible(pctx *c, const topo_node *n, const cu_nodesel *sel, const cu_toleration *tols,
                    size_t ntols, int stats)
{
    const cu_taint *x = NULL;
    if (!cu_tas_int_tolerated(c->t, n, tols, ntols, &x)) {
        if (stats)
            count_taint(c, x);
        return 0;
    }
    if (!sel)
        return 1;
    cu_kv field = { "metadata.name", n->name };
    cu_kvs fields = { 1, &field };
    cu_nodesel only = *sel;
    only.has_required = 0;
    if (!cu_match_nodesel(&only, &n->labels, &fields)) {
        c->ex_sel += (size_t)stats;
        return 0;
    }
    if (!cu_match_nodesel(sel, &n->labels, &fields)) {
        c->ex_aff += (size_t)stats;
        return 0;
    }
    return 1;
}

/* ---- phase 1: counts ---- */

static cu_err fill(pctx *c)
{
    cu_tas *t = c->t;
    size_t L = c->L;
    int64_t *free = cu_arena_alloc(c->s, c->nr * sizeof *free);
    if (!free)
        return CU_ENOMEM;
    c->nleaves = t->nlv[L - 1];
    for (size_t i = 0; i < t->nlv[L - 1]; i++) {
        topo_dom *d = &t->lv[L - 1][i];
        memset(free, 0, c->nr * sizeof *free);
        int any = 0;
        for (size_t j = d->first; j < d->first + d->n; j++) {
            const topo_node *n = t->sorted[j];
            c->elig[j] = (unsigned char)(!t->host_lowest ||
                                         eligible(c, n, c->rq->sel, c->rq->tols, c->rq->ntols, 1));
            if (!c->elig[j])
                continue;
            any = 1;
            for (size_t k = 0; k < c->nr; k++)
                free[k] += cu_tas_int_free(t, n, c->ri[k], 0);
        }
        d->state = d->slice = 0;
        if (!any)
            continue;
        const topo_use *u = c->no_adm || !t->uses.n ? NULL : cu_tas_int_use(t, d, c->s);
        for (size_t k = 0; k < c->nr; k++) {
            free[k] -= c->assumed[i * c->R + (size_t)c->ri[k]];
            if (u && (size_t)c->ri[k] < u->nres)
                free[k] -= u->v[c->ri[k]];
        }
        size_t lim = 0;
        d->state = count_in(c, free, &lim);
        if (d->state == 0)
            c->res_ex[lim]++;
        if (L - 1 == c->slvl)
            d->slice = d->state / c->ss;
    }
    for (size_t l = L - 1; l-- > 0;) {
        for (size_t i = 0; i < t->nlv[l]; i++) {
            topo_dom *d = &t->lv[l][i];
            d->state = d->slice = 0;
            for (size_t j = d->first; j < d->first + d->n; j++) {
                d->state += t->lv[l + 1][j].state;
                d->slice += t->lv[l + 1][j].slice;
            }
            if (l == c->slvl)
                d->slice = d->state / c->ss;
        }
    }
    return CU_OK;
}

/* ---- phase 2: choosing domains ---- */

static int vals_cmp(const topo_dom *a, const topo_dom *b)
{
    for (size_t i = 0; i <= a->level; i++) {
        int x = strcmp(a->values[i], b->values[i]);
        if (x)
            return x;
    }
    return 0;
}

static int i64_cmp(int64_t a, int64_t b) { return a < b ? -1 : a > b; }

static int cmp_bestfit(const void *pa, const void *pb)
{
    const topo_dom *a = *(topo_dom *const *)pa, *b = *(topo_dom *const *)pb;
    int x = i64_cmp(b->slice, a->slice);
    if (!x)
        x = i64_cmp(a->state, b->state);
    return x ? x : vals_cmp(a, b);
}

static int cmp_leastfree(const void *pa, const void *pb)
{
    const topo_dom *a = *(topo_dom *const *)pa, *b = *(topo_dom *const *)pb;
    int x = i64_cmp(a->slice, b->slice);
    if (!x)
        x = i64_cmp(a->state, b->state);
    return x ? x : vals_cmp(a, b);
}

static int cmp_values(const void *pa, const void *pb)
{
    return vals_cmp(*(topo_dom *const *)pa, *(topo_dom *const *)pb);
}

static void sort_doms(const pctx *c, topo_dom **d, size_t n)
{
    qsort(d, n, sizeof *d, c->lfc ? cmp_leastfree : cmp_bestfit);
}

/* The first domain of d (sorted) with the fewest pods (slices) that is
 * still at least need; d[0] when none is. */
static topo_dom *best_fit(topo_dom **d, size_t n, int64_t need, int slices)
{
    topo_dom *b = d[0];
    int64_t bs = slices ? b->slice : b->state;
    for (size_t i = 1; i < n; i++) {
        int64_t s = slices ? d[i]->slice : d[i]->state;
        if (s >= need && s < bs) {
            b = d[i];
            bs = s;
        }
    }
    return b;
}

/* Assigns count pods (count / ss slices when slices) to the fewest of the
 * sorted domains d, appending them to out (*nout). -1 when they do not
 * take them all (the counts said they would). */
static int fill_down(const pctx *c, topo_dom **d, size_t n, int64_t count, int64_t ss, int slices,
                     topo_dom **out, size_t *nout)
{
    int64_t rem = slices ? count / ss : count;
    for (size_t i = 0; i < n; i++) {
        topo_dom *x = d[i];
        int64_t have = slices ? x->slice : x->state;
        if (!c->lfc && have >= rem) {
            x = best_fit(d + i, n - i, rem, slices);
            have = slices ? x->slice : x->state;
        }
        out[(*nout)++] = x;
        if (have >= rem) {
            x->state = slices ? rem * ss : rem;
            if (slices)
                x->slice = rem;
            return 0;
        }
        if (slices)
            x->state = have * ss;
        rem -= have;
    }
    return -1;
}

static const char *unit(const pctx *c) { return c->ss == 1 ? "pod" : "slice"; }

static int strp_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Kueue's message for a pod set that does not fit. */
static const char *not_fit(pctx *c, cu_arena *a, int64_t fit, int64_t want)
{
    cu_buf b;
    cu_buf_init(&b, 1 << 16);
    if (fit == 0)
        cu_buf_printf(&b, "topology \"%s\" doesn't allow to fit any of %lld %s(s)", c->t->name,
                      (long long)want, unit(c));
    else
        cu_buf_printf(&b, "topology \"%s\" allows to fit only %lld out of %lld %s(s)", c->t->name,
                      (long long)fit, (long long)want, unit(c));
    size_t nr = 0;
    const char **rs = cu_arena_alloc(c->s, (c->ntaint + c->nr + 2) * sizeof *rs);
    if (rs) {
        if (c->ex_sel)
            rs[nr++] = cu_arena_printf(c->s, "nodeSelector: %zu", c->ex_sel);
        if (c->ex_aff)
            rs[nr++] = cu_arena_printf(c->s, "affinity: %zu", c->ex_aff);
        for (size_t i = 0; i < c->ntaint; i++)
            rs[nr++] = cu_arena_printf(c->s, "taint \"%s\": %zu", c->taint_s[i], c->taint_n[i]);
        for (size_t k = 0; k < c->nr; k++)
            if (c->res_ex[k])
                rs[nr++] = cu_arena_printf(c->s, "resource \"%s\": %zu", c->rn[k], c->res_ex[k]);
        for (size_t i = 0; i < nr; i++)
            if (!rs[i])
                nr = 0;
        qsort(rs, nr, sizeof *rs, strp_cmp);
    }
    if (nr) {
        cu_buf_printf(&b, ". Total nodes: %zu; excluded: ", c->nleaves);
        for (size_t i = 0; i < nr; i++)
            cu_buf_printf(&b, "%s%s", i ? ", " : "", rs[i]);
    }
    const char *m = b.failed ? "topology: out of memory" : cu_arena_strdup(a, b.data);
    cu_buf_free(&b);
    return m;
}

/* ---- the diagnosis ---- */

static int nf_cmp(const void *pa, const void *pb)
{
    const cu_tas_nodefree *a = pa, *b = pb;
    if (a->free != b->free)
        return a->free > b->free ? -1 : 1;
    return strcmp(a->node, b->node);
}

static void diagnose(pctx *c, cu_tas_result *r)
{
    cu_tas *t = c->t;
    cu_tas_diag *g = &r->diag;
    size_t L = c->L;
    g->requested = (int32_t)c->count;
    g->level = cu_arena_strdup(&r->arena, t->levels[c->lvl]);
    for (size_t i = 0; i < t->nodes.n; i++) {
        const topo_node *n = t->nodes.items[i];
        if (!n->known)
            continue;
        g->nodes_known++;
        g->nodes_member += (size_t)n->member;
        g->nodes_not_ready += (size_t)!n->ready;
        g->nodes_unschedulable += (size_t)(n->ready && n->unsched);
        g->nodes_flavor += (size_t)(n->ready && !n->unsched && !n->flavor_ok);
    }
    g->nodes_selector = c->ex_sel;
    g->nodes_affinity = c->ex_aff;
    for (size_t i = 0; i < c->ntaint; i++)
        g->nodes_taint += c->taint_n[i];
    for (size_t i = 0; i < t->nlv[c->lvl]; i++)
        if (t->lv[c->lvl][i].state > g->fit_one)
            g->fit_one = (int32_t)t->lv[c->lvl][i].state;
    int64_t total = 0;
    for (size_t i = 0; i < t->nlv[L - 1]; i++)
        total += t->lv[L - 1][i].state;
    g->fit_total = (int32_t)(total > INT32_MAX ? INT32_MAX : total);
    /* node-level free of each requested resource, eligible nodes only */
    size_t m = t->nsorted, ne = 0;
    int64_t *fr = cu_arena_alloc(c->s, (m * c->nr + 1) * sizeof *fr);
    size_t *pos = cu_arena_alloc(c->s, (m + 1) * sizeof *pos);
    if (!fr || !pos)
        return;
    for (size_t i = 0; i < t->nlv[L - 1]; i++) {
        const topo_dom *d = &t->lv[L - 1][i];
        for (size_t j = d->first; j < d->first + d->n; j++) {
            if (!c->elig[j])
                continue;
            for (size_t k = 0; k < c->nr; k++) {
                fr[ne * c->nr + k] = cu_tas_int_free(t, t->sorted[j], c->ri[k], !c->no_adm);
                if (d->n == 1)
                    fr[ne * c->nr + k] -= c->assumed[i * c->R + (size_t)c->ri[k]];
            }
            pos[ne++] = j;
        }
    }
    if (!ne)
        return;
    size_t rk = c->nr;
    for (size_t k = 0; k < c->nr && rk == c->nr; k++) {
        int64_t mx = fr[k];
        for (size_t e = 1; e < ne; e++)
            if (fr[e * c->nr + k] > mx)
                mx = fr[e * c->nr + k];
        if (mx < c->ra[k])
            rk = k;
    }
    if (rk == c->nr) {
        int64_t most = -1;
        for (size_t e = 0; e < ne; e++) {
            size_t lim = 0;
            int64_t p = count_in(c, fr + e * c->nr, &lim);
            if (p > most) {
                most = p;
                rk = lim;
            }
        }
    }
    g->resource = cu_arena_strdup(&r->arena, c->rn[rk]);
    g->per_pod = c->ra[rk];
    cu_tas_nodefree *all = cu_arena_alloc(c->s, ne * sizeof *all);
    if (!all)
        return;
    for (size_t e = 0; e < ne; e++)
        all[e] = (cu_tas_nodefree){ t->sorted[pos[e]]->name, fr[e * c->nr + rk] };
    qsort(all, ne, sizeof *all, nf_cmp);
    g->neligible = ne;
    g->max_free = all[0].free;
    for (size_t e = 0; e < ne && e < CU_TAS_DIAG_TOP; e++) {
        g->top[e].node = cu_arena_strdup(&r->arena, all[e].node);
        g->top[e].free = all[e].free;
        g->ntop = e + 1;
    }
}

/* ---- one pod set ---- */

static int level_of(const cu_tas *t, const char *key, size_t *out)
{
    for (size_t i = 0; key && i < t->nlevels; i++)
        if (strcmp(t->levels[i], key) == 0) {
            *out = i;
            return 1;
        }
    return 0;
}

static void fail(cu_tas_result *r, const char *msg)
{
    r->ok = 0;
    r->reason = msg ? msg : "topology: out of memory";
}

static cu_err place_one(pctx *c, cu_tas_result *r)
{
    cu_tas *t = c->t;
    const cu_tas_request *q = c->rq;
    size_t L = c->L;
    c->count = q->count;
    c->required = q->mode == CU_TAS_REQUIRED;
    c->unconstrained = q->mode == CU_TAS_UNCONSTRAINED;
    c->ss = 1;
    if (q->slice_level) {
        if (q->slice_size <= 0) {
            fail(r, "slice topology requested, but slice size not provided");
            return CU_OK;
        }
        c->ss = q->slice_size;
    }
    const char *key = q->level;
    if (c->unconstrained)
        key = q->slice_level ? t->levels[0] : t->levels[L - 1];
    if (!key) {
        fail(r, "topology level not specified");
        return CU_OK;
    }
    if (!level_of(t, key, &c->lvl)) {
        fail(r, cu_arena_printf(&r->arena, "no requested topology level: %s", key));
        return CU_OK;
    }
    const char *skey = q->slice_level ? q->slice_level : t->levels[L - 1];
    if (!level_of(t, skey, &c->slvl)) {
        fail(r, cu_arena_printf(&r->arena, "no requested topology level for slices: %s", skey));
        return CU_OK;
    }
    if (c->lvl > c->slvl) {
        fail(r,
             cu_arena_printf(&r->arena, "podset slice topology %s is above the podset topology %s",
                             skey, key));
        return CU_OK;
    }
    c->ntaint = c->ex_sel = c->ex_aff = 0;
    memset(c->res_ex, 0, c->nr * sizeof *c->res_ex);
    cu_err e = fill(c);
    if (e != CU_OK)
        return e;
    size_t m = t->nsorted ? t->nsorted : 1;
    topo_dom **cur = cu_arena_alloc(c->s, m * sizeof *cur);
    topo_dom **next = cu_arena_alloc(c->s, m * sizeof *next);
    topo_dom **tmp = cu_arena_alloc(c->s, m * sizeof *tmp);
    if (!cur || !next || !tmp)
        return CU_ENOMEM;
    size_t ncur = 0, lvl = c->lvl;
    int64_t sc = c->count / c->ss;
    for (;;) {
        size_t n = t->nlv[lvl];
        if (!n) {
            fail(r, cu_arena_printf(&r->arena, "no topology domains at level: %s", t->levels[lvl]));
            diagnose(c, r);
            return CU_OK;
        }
        for (size_t i = 0; i < n; i++)
            tmp[i] = &t->lv[lvl][i];
        sort_doms(c, tmp, n);
        topo_dom *top = tmp[0];
        if (!c->lfc && top->slice >= sc)
            top = best_fit(tmp, n, sc, 1);
        if (c->lfc) {
            for (size_t i = 0; i < n && !ncur; i++)
                if (tmp[i]->slice >= sc)
                    cur[ncur++] = tmp[i];
            if (ncur)
                break;
            if (c->required) {
                fail(r, not_fit(c, &r->arena, tmp[n - 1]->state, sc));
                diagnose(c, r);
                return CU_OK;
            }
        }
        if (top->slice >= sc) {
            cur[ncur++] = top;
            break;
        }
        if (c->required) {
            fail(r, not_fit(c, &r->arena, top->slice, sc));
            diagnose(c, r);
            return CU_OK;
        }
        if (lvl > 0 && !c->unconstrained) {
            lvl--;
            continue;
        }
        int64_t rem = sc;
        for (size_t i = 0; rem > 0 && i < n; i++) {
            topo_dom *d = tmp[i];
            if (!c->lfc && d->slice >= rem)
                d = best_fit(tmp + i, n - i, rem, 1);
            cur[ncur++] = d;
            rem -= d->slice;
        }
        if (rem > 0) {
            fail(r, not_fit(c, &r->arena, sc - rem, sc));
            diagnose(c, r);
            return CU_OK;
        }
        break;
    }
    /* phase 3: down to the leaves */
    size_t nn = 0;
    int bad = fill_down(c, cur, ncur, c->count, c->ss, 1, next, &nn);
    topo_dom **sw = cur;
    cur = next, next = sw, ncur = nn;
    size_t stop = L - 1 < c->slvl ? L - 1 : c->slvl;
    for (; !bad && lvl < stop; lvl++) {
        size_t n = 0;
        for (size_t i = 0; i < ncur; i++)
            for (size_t j = 0; j < cur[i]->n; j++)
                tmp[n++] = &t->lv[lvl + 1][cur[i]->first + j];
        sort_doms(c, tmp, n);
        nn = 0;
        bad = fill_down(c, tmp, n, c->count, c->ss, 1, next, &nn);
        sw = cur, cur = next, next = sw, ncur = nn;
    }
    for (; !bad && lvl < L - 1; lvl++) {
        nn = 0;
        for (size_t i = 0; !bad && i < ncur; i++) {
            size_t n = cur[i]->n;
            for (size_t j = 0; j < n; j++)
                tmp[j] = &t->lv[lvl + 1][cur[i]->first + j];
            sort_doms(c, tmp, n);
            bad = fill_down(c, tmp, n, cur[i]->state, 1, 0, next, &nn);
        }
        sw = cur, cur = next, next = sw, ncur = nn;
    }
    if (bad) {
        fail(r, "topology: the domains' counts do not add up (a bug)");
        return CU_OK;
    }
    /* the assignment */
    qsort(cur, ncur, sizeof *cur, cmp_values);
    size_t from = t->host_lowest ? L - 1 : 0;
    r->nlevels = L - from;
    r->levels = cu_arena_alloc(&r->arena, r->nlevels * sizeof *r->levels);
    r->domains = cu_arena_alloc(&r->arena, (ncur ? ncur : 1) * sizeof *r->domains);
    if (!r->levels || !r->domains)
        return CU_ENOMEM;
    for (size_t i = from; i < L; i++)
        if (!(r->levels[i - from] = cu_arena_strdup(&r->arena, t->levels[i])))
            return CU_ENOMEM;
    for (size_t i = 0; i < ncur; i++) {
        const topo_dom *d = cur[i];
        if (d->state == 0)
            continue;
        cu_tas_assign *x = &r->domains[r->ndomains++];
        x->count = (int32_t)d->state;
        x->values = cu_arena_alloc(&r->arena, r->nlevels * sizeof *x->values);
        if (!x->values)
            return CU_ENOMEM;
        for (size_t k = from; k < L; k++)
            if (!(x->values[k - from] = cu_arena_strdup(&r->arena, d->values[k])))
                return CU_ENOMEM;
        size_t leaf = (size_t)(d - t->lv[L - 1]);
        for (size_t k = 0; k < c->nr; k++)
            c->assumed[leaf * c->R + (size_t)c->ri[k]] += c->ra[k] * d->state;
    }
    r->ok = 1;
    return CU_OK;
}

cu_err cu_tas_place(cu_tas *t, const cu_tas_request *reqs, size_t n, const cu_tas_opts *o,
                    cu_tas_result *out)
{
    for (size_t i = 0; i < n; i++) {
        memset(&out[i], 0, sizeof out[i]);
        cu_arena_init(&out[i].arena, 1024);
    }
    cu_err e = cu_tas_int_tree(t);
    if (e != CU_OK)
        return e;
    /* intern every requested resource first: R is fixed below */
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; reqs[i].per_pod && k < reqs[i].per_pod->n; k++)
            if (cu_tas_int_res(t, reqs[i].per_pod->items[k].name) < 0)
                return CU_ENOMEM;
    cu_arena s;
    cu_arena_init(&s, 16384);
    pctx c = { .t = t, .s = &s, .L = t->nlevels, .R = t->resnames.n };
    c.no_adm = o && o->simulate_empty;
    size_t nl = t->nlv[t->nlevels - 1], m = t->nsorted ? t->nsorted : 1;
    c.assumed = cu_arena_alloc(&s, (nl ? nl : 1) * c.R * sizeof *c.assumed);
    c.elig = cu_arena_alloc(&s, m);
    c.taint_s = cu_arena_alloc(&s, m * sizeof *c.taint_s);
    c.taint_n = cu_arena_alloc(&s, m * sizeof *c.taint_n);
    e = c.assumed && c.elig && c.taint_s && c.taint_n ? CU_OK : CU_ENOMEM;
    size_t i = 0;
    for (; e == CU_OK && i < n; i++) {
        c.rq = &reqs[i];
        c.lfc =
            reqs[i].mode == CU_TAS_UNCONSTRAINED && !(o && o->profile == CU_TAS_PROFILE_BEST_FIT);
        e = resolve(&c, reqs[i].per_pod);
        if (e == CU_OK)
            e = place_one(&c, &out[i]);
        if (e == CU_OK && !out[i].ok) {
            e = CU_EINVAL;
            break;
        }
    }
    cu_arena_free(&s);
    return e;
}

void cu_tas_result_free(cu_tas_result *r)
{
    if (r)
        cu_arena_free(&r->arena);
}

int64_t cu_tas_placeable(cu_tas *t, const cu_reslist *per_pod, const cu_nodesel *sel,
                         const cu_toleration *tols, size_t ntols)
{
    if (cu_tas_int_tree(t) != CU_OK)
        return 0;
    cu_arena s;
    cu_arena_init(&s, 4096);
    pctx c = { .t = t, .s = &s, .L = t->nlevels };
    int64_t total = 0;
    int64_t *free = NULL;
    if (resolve(&c, per_pod) == CU_OK && (free = cu_arena_alloc(&s, c.nr * sizeof *free))) {
        for (size_t j = 0; j < t->nsorted; j++) {
            const topo_node *n = t->sorted[j];
            if (!eligible(&c, n, sel, tols, ntols, 0))
                continue;
            for (size_t k = 0; k < c.nr; k++)
                free[k] = cu_tas_int_free(t, n, c.ri[k], 1);
            total += count_in(&c, free, NULL);
        }
    }
    cu_arena_free(&s);
    return total;
}

/* ---- the diagnosis as text ---- */

static void top_nodes(const cu_tas_diag *g, cu_buf *out)
{
    char q[64];
    for (size_t i = 0; i < g->ntop; i++)
        cu_buf_printf(out, "%s%s %s", i ? ", " : "", g->top[i].node,
                      cu_qty_format_res(g->resource, g->top[i].free, q, sizeof q));
    if (g->neligible > g->ntop)
        cu_buf_printf(out, ", ...");
}

cu_err cu_tas_diag_text(const cu_tas_diag *g, cu_buf *out)
{
    char a[64], b[64];
    if (!g->resource) {
        cu_buf_printf(out, "no node can take the pods");
    } else if (g->max_free < g->per_pod) {
        cu_buf_printf(out, "no node has %s %s free: largest free per node %s (",
                      cu_qty_format_res(g->resource, g->per_pod, a, sizeof a), g->resource,
                      cu_qty_format_res(g->resource, g->max_free, b, sizeof b));
        top_nodes(g, out);
        cu_buf_printf(out, ")");
    } else if (g->fit_total < g->requested) {
        cu_buf_printf(out, "the nodes take only %d of the %d pods (largest free %s per node %s: ",
                      g->fit_total, g->requested, g->resource,
                      cu_qty_format_res(g->resource, g->max_free, b, sizeof b));
        top_nodes(g, out);
        cu_buf_printf(out, ")");
    } else {
        cu_buf_printf(out, "at most %d of the %d pods fit in one %s (%d on all nodes)", g->fit_one,
                      g->requested, g->level ? g->level : "domain", g->fit_total);
    }
    struct {
        size_t n;
        const char *what;
    } out_[] = {
        { g->nodes_not_ready, "not ready" },
        { g->nodes_unschedulable, "unschedulable" },
        { g->nodes_flavor, "not matching the flavor's node labels or the topology's levels" },
        { g->nodes_taint, "with a taint not tolerated" },
        { g->nodes_selector, "not matching the pods' nodeSelector" },
        { g->nodes_affinity, "not matching the pods' node affinity" },
    };
    int first = 1;
    for (size_t i = 0; i < sizeof out_ / sizeof out_[0]; i++) {
        if (!out_[i].n)
            continue;
        cu_buf_printf(out, "%s%zu %s", first ? "; nodes left out: " : ", ", out_[i].n,
                      out_[i].what);
        first = 0;
    }
    return out->failed ? CU_ENOMEM : CU_OK;
}
