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
 * A pod-set group (cu_tas_request.group: a leader of one pod and its
 * workers) is one placement of the workers' request in which every domain
 * also counts whether the leader fits (lead) and the workers that fit
 * besides it (swl, sswl); domains that can take the leader come first and
 * the leader goes, with the workers, into the domains chosen at the
 * workers' level (Kueue's stateWithLeader counting). The result is split
 * back: the leader's domain and the workers' domains.
 *
 * Not done (Kueue's alpha gates, off by default in v0.17): balanced
 * placement (TASBalancedPlacement), multi-layer slices
 * (TASMultiLayerTopology); nor elastic workload slices and node
 * replacement.
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
    /* a group's leader: lc 1 (0: none), its request sorted like ri/ra, and
     * its result (the workers' is the one place_one is given) */
    int64_t lc;
    size_t lnr;
    int *lri;
    int64_t *lra;
    cu_tas_result *rl;
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

/* How many pods of the nr amounts ra fit in free[] (by request index);
 * *lim: the limiting request index (the first by name among equals). */
static int64_t count_in(const int64_t *ra, size_t nr, const int64_t *free, size_t *lim)
{
    int64_t best = -1;
    for (size_t k = 0; k < nr; k++) {
        int64_t n = free[k] <= 0 ? 0 : free[k] / ra[k];
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

/* The free amounts of the nr resources ri on leaf i (its eligible nodes,
 * less the pod sets placed before and, unless no_adm, the admitted TAS
 * workloads u) into free[]. */
static void leaf_free(const pctx *c, size_t i, const topo_use *u, const int *ri, size_t nr,
                      int64_t *free)
{
    const cu_tas *t = c->t;
    const topo_dom *d = &t->lv[c->L - 1][i];
    memset(free, 0, nr * sizeof *free);
    for (size_t j = d->first; j < d->first + d->n; j++)
        if (c->elig[j])
            for (size_t k = 0; k < nr; k++)
                free[k] += cu_tas_int_free(t, t->sorted[j], ri[k], 0);
    for (size_t k = 0; k < nr; k++) {
        free[k] -= c->assumed[i * c->R + (size_t)ri[k]];
        if (u && (size_t)ri[k] < u->nres)
            free[k] -= u->v[ri[k]];
    }
}

/* A group's leader on a leaf whose workers' free amounts are free[]:
 * sets d->lead and d->swl (the workers besides the leader); lfree is
 * scratch of c->lnr entries. */
static void leaf_leader(const pctx *c, size_t i, const topo_use *u, int64_t *free, int64_t *lfree)
{
    topo_dom *d = &c->t->lv[c->L - 1][i];
    leaf_free(c, i, u, c->lri, c->lnr, lfree);
    if (count_in(c->lra, c->lnr, lfree, NULL) == 0)
        return;
    d->lead = 1;
    for (size_t k = 0; k < c->nr; k++)
        for (size_t m = 0; m < c->lnr; m++)
            if (c->lri[m] == c->ri[k])
                free[k] -= c->lra[m];
    d->swl = count_in(c->ra, c->nr, free, NULL);
}

static cu_err fill(pctx *c)
{
    cu_tas *t = c->t;
    size_t L = c->L;
    int64_t *free = cu_arena_alloc(c->s, c->nr * sizeof *free);
    int64_t *lfree = cu_arena_alloc(c->s, (c->lnr + 1) * sizeof *lfree);
    if (!free || !lfree)
        return CU_ENOMEM;
    c->nleaves = t->nlv[L - 1];
    for (size_t i = 0; i < t->nlv[L - 1]; i++) {
        topo_dom *d = &t->lv[L - 1][i];
        int any = 0;
        for (size_t j = d->first; j < d->first + d->n; j++) {
            const topo_node *n = t->sorted[j];
            c->elig[j] = (unsigned char)(!t->host_lowest ||
                                         eligible(c, n, c->rq->sel, c->rq->tols, c->rq->ntols, 1));
            any |= c->elig[j];
        }
        d->state = d->slice = d->swl = d->sswl = d->lead = 0;
        if (!any)
            continue;
        const topo_use *u = c->no_adm || !t->uses.n ? NULL : cu_tas_int_use(t, d, c->s);
        leaf_free(c, i, u, c->ri, c->nr, free);
        size_t lim = 0;
        d->state = d->swl = count_in(c->ra, c->nr, free, &lim);
        if (d->state == 0)
            c->res_ex[lim]++;
        if (c->lc)
            leaf_leader(c, i, u, free, lfree);
        if (L - 1 == c->slvl) {
            d->slice = d->state / c->ss;
            d->sswl = d->swl / c->ss;
        }
    }
    for (size_t l = L - 1; l-- > 0;) {
        for (size_t i = 0; i < t->nlv[l]; i++) {
            topo_dom *d = &t->lv[l][i];
            /* the leader goes to the child that loses the fewest workers
             * to it (Kueue takes the minimum over all children, also
             * those that cannot take the leader: then it would count
             * room that is not there) */
            int64_t lose = INT64_MAX, slose = INT64_MAX;
            d->state = d->slice = d->lead = 0;
            for (size_t j = d->first; j < d->first + d->n; j++) {
                const topo_dom *x = &t->lv[l + 1][j];
                d->state += x->state;
                d->slice += x->slice;
                if (!x->lead)
                    continue;
                d->lead = 1;
                if (x->state - x->swl < lose)
                    lose = x->state - x->swl;
                if (x->slice - x->sswl < slose)
                    slose = x->slice - x->sswl;
            }
            d->swl = d->lead ? d->state - lose : d->state;
            d->sswl = d->lead ? d->slice - slose : d->slice;
            if (l == c->slvl) {
                d->slice = d->state / c->ss;
                d->sswl = d->swl / c->ss;
            }
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

/* The profile's order: BestFit most slices first, LeastFreeCapacity
 * fewest; then fewest pods; then values. With leader (a group's leader
 * still to place: Kueue's sortedDomainsWithLeader) the domains that can
 * take it first, counting the workers that fit beside it. */
static int dom_order(const topo_dom *a, const topo_dom *b, int lfc, int leader)
{
    int x = leader ? i64_cmp(b->lead, a->lead) : 0;
    int64_t as = leader ? a->sswl : a->slice, bs = leader ? b->sswl : b->slice;
    if (!x)
        x = lfc ? i64_cmp(as, bs) : i64_cmp(bs, as);
    if (!x)
        x = leader ? i64_cmp(a->swl, b->swl) : i64_cmp(a->state, b->state);
    return x ? x : vals_cmp(a, b);
}

static int cmp_bestfit(const void *a, const void *b)
{
    return dom_order(*(topo_dom *const *)a, *(topo_dom *const *)b, 0, 0);
}

static int cmp_leastfree(const void *a, const void *b)
{
    return dom_order(*(topo_dom *const *)a, *(topo_dom *const *)b, 1, 0);
}

static int cmp_bestfit_wl(const void *a, const void *b)
{
    return dom_order(*(topo_dom *const *)a, *(topo_dom *const *)b, 0, 1);
}

static int cmp_leastfree_wl(const void *a, const void *b)
{
    return dom_order(*(topo_dom *const *)a, *(topo_dom *const *)b, 1, 1);
}

static int cmp_values(const void *pa, const void *pb)
{
    return vals_cmp(*(topo_dom *const *)pa, *(topo_dom *const *)pb);
}

/* Sorts d by the profile; leader: a leader is still to be placed. */
static void sort_doms(const pctx *c, topo_dom **d, size_t n, int leader)
{
    if (leader)
        qsort(d, n, sizeof *d, c->lfc ? cmp_leastfree_wl : cmp_bestfit_wl);
    else
        qsort(d, n, sizeof *d, c->lfc ? cmp_leastfree : cmp_bestfit);
}

/* The pods (slices) a domain takes with lead leaders still to place. */
static int64_t room(const topo_dom *d, int64_t lead, int slices)
{
    if (lead)
        return slices ? d->sswl : d->swl;
    return slices ? d->slice : d->state;
}

/* Whether d takes need pods (slices) and lead leaders. */
static int takes(const topo_dom *d, int64_t need, int64_t lead, int slices)
{
    return room(d, lead, slices) >= need && d->lead >= lead;
}

/* The first domain of d (sorted) with the fewest pods (slices) that still
 * takes need of them and lead leaders; d[0] when none does. */
static topo_dom *best_fit(topo_dom **d, size_t n, int64_t need, int64_t lead, int slices)
{
    topo_dom *b = d[0];
    int64_t bs = room(b, lead, slices);
    for (size_t i = 1; i < n; i++) {
        int64_t s = room(d[i], lead, slices);
        if (s < bs && takes(d[i], need, lead, slices)) {
            b = d[i];
            bs = s;
        }
    }
    return b;
}

/* The first of d that takes lead leaders losing the fewest pods (slices)
 * to them; n when none takes them. */
static size_t least_loss(topo_dom *const *d, size_t n, int64_t lead, int slices)
{
    size_t b = n;
    for (size_t i = 0; i < n; i++)
        if (d[i]->lead >= lead && (b == n || room(d[i], 0, slices) - room(d[i], lead, slices) <
                                                 room(d[b], 0, slices) - room(d[b], lead, slices)))
            b = i;
    return b;
}

/* Domain x takes what it can of *rem pods (slices of ss) and *lead
 * leaders: its state, slice and lead become that; appended to out. */
static void take(topo_dom *x, int64_t *rem, int64_t *lead, int64_t ss, int slices, topo_dom **out,
                 size_t *nout)
{
    int64_t have = room(x, *lead, slices), lt = x->lead < *lead ? x->lead : *lead;
    if (have > *rem)
        have = *rem;
    out[(*nout)++] = x;
    x->lead = lt;
    x->state = slices ? have * ss : have;
    if (slices)
        x->slice = have;
    *rem -= have;
    *lead -= lt;
}

/* Assigns count pods (count / ss slices when slices) and lead leaders to
 * the fewest of the sorted domains d (Kueue's updateCountsToMinimum),
 * appending them to out (*nout). Each chosen domain's state, slice and
 * lead become what it takes. -1 when they do not take them all (the
 * counts said they would). */
static int fill_down(const pctx *c, topo_dom **d, size_t n, int64_t count, int64_t lead, int64_t ss,
                     int slices, topo_dom **out, size_t *nout)
{
    int64_t rem = slices ? count / ss : count;
    if (lead > 0 && n && !takes(d[0], rem, lead, slices)) {
        /* no domain takes the leader and all workers: the leader goes
         * where it costs the fewest workers, which is how fill counted
         * the room of the parent (Kueue gives it to the first domain,
         * which may leave workers without room), then the workers */
        size_t b = least_loss(d, n, lead, slices);
        if (b == n)
            return -1;
        take(d[b], &rem, &lead, ss, slices, out, nout);
        memmove(d + b, d + b + 1, (n - b - 1) * sizeof *d);
        n--;
        if (rem <= 0)
            return 0;
    }
    for (size_t i = 0; i < n; i++) {
        topo_dom *x = d[i];
        if (!c->lfc && takes(x, rem, lead, slices))
            x = best_fit(d + i, n - i, rem, lead, slices);
        take(x, &rem, &lead, ss, slices, out, nout);
        if (rem <= 0 && lead <= 0)
            return 0;
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
    g->leader = c->lc > 0;
    for (size_t i = 0; i < t->nlv[c->lvl]; i++) {
        const topo_dom *d = &t->lv[c->lvl][i];
        if (d->state > g->fit_one)
            g->fit_one = (int32_t)d->state;
        if (d->lead && d->swl > g->fit_one_leader)
            g->fit_one_leader = (int32_t)d->swl;
    }
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
            int64_t p = count_in(c->ra, c->nr, fr + e * c->nr, &lim);
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

/* Refuses the pod set (and its group's leader) with msg. */
static void fail(const pctx *c, cu_tas_result *r, const char *msg)
{
    r->ok = 0;
    r->reason = msg ? msg : "topology: out of memory";
    if (c->rl) {
        c->rl->ok = 0;
        c->rl->reason = cu_arena_strdup(&c->rl->arena, r->reason);
        if (!c->rl->reason)
            c->rl->reason = "topology: out of memory";
    }
}

/* fail, with the numbers (the workers' for both members of a group). */
static void refuse(pctx *c, cu_tas_result *r, const char *msg)
{
    fail(c, r, msg);
    diagnose(c, r);
    if (c->rl)
        diagnose(c, c->rl);
}

/* The assignment of the chosen leaves cur (sorted by values) into r: their
 * workers, or with leader their leaders; counts them as assumed usage. */
static cu_err assign(pctx *c, topo_dom **cur, size_t ncur, cu_tas_result *r, int leader)
{
    cu_tas *t = c->t;
    size_t L = c->L, from = t->host_lowest ? L - 1 : 0;
    size_t nr = leader ? c->lnr : c->nr;
    const int *ri = leader ? c->lri : c->ri;
    const int64_t *ra = leader ? c->lra : c->ra;
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
        int64_t n = leader ? d->lead : d->state;
        if (n == 0)
            continue;
        cu_tas_assign *x = &r->domains[r->ndomains++];
        x->count = (int32_t)n;
        x->values = cu_arena_alloc(&r->arena, r->nlevels * sizeof *x->values);
        if (!x->values)
            return CU_ENOMEM;
        for (size_t k = from; k < L; k++)
            if (!(x->values[k - from] = cu_arena_strdup(&r->arena, d->values[k])))
                return CU_ENOMEM;
        size_t leaf = (size_t)(d - t->lv[L - 1]);
        for (size_t k = 0; k < nr; k++)
            c->assumed[leaf * c->R + (size_t)ri[k]] += ra[k] * n;
    }
    r->ok = 1;
    return CU_OK;
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
            fail(c, r, "slice topology requested, but slice size not provided");
            return CU_OK;
        }
        c->ss = q->slice_size;
    }
    const char *key = q->level;
    if (c->unconstrained)
        key = q->slice_level ? t->levels[0] : t->levels[L - 1];
    if (!key) {
        fail(c, r, "topology level not specified");
        return CU_OK;
    }
    if (!level_of(t, key, &c->lvl)) {
        fail(c, r, cu_arena_printf(&r->arena, "no requested topology level: %s", key));
        return CU_OK;
    }
    const char *skey = q->slice_level ? q->slice_level : t->levels[L - 1];
    if (!level_of(t, skey, &c->slvl)) {
        fail(c, r, cu_arena_printf(&r->arena, "no requested topology level for slices: %s", skey));
        return CU_OK;
    }
    if (c->lvl > c->slvl) {
        fail(c, r,
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
    int64_t sc = c->count / c->ss, lc = c->lc;
    for (;;) {
        size_t n = t->nlv[lvl];
        if (!n) {
            refuse(c, r,
                   cu_arena_printf(&r->arena, "no topology domains at level: %s", t->levels[lvl]));
            return CU_OK;
        }
        for (size_t i = 0; i < n; i++)
            tmp[i] = &t->lv[lvl][i];
        sort_doms(c, tmp, n, lc > 0);
        topo_dom *top = tmp[0];
        if (!c->lfc && takes(top, sc, lc, 1))
            top = best_fit(tmp, n, sc, lc, 1);
        if (c->lfc) {
            for (size_t i = 0; i < n && !ncur; i++)
                if (takes(tmp[i], sc, lc, 1))
                    cur[ncur++] = tmp[i];
            if (ncur)
                break;
            if (c->required) {
                refuse(c, r, not_fit(c, &r->arena, tmp[n - 1]->state, sc));
                return CU_OK;
            }
        }
        if (takes(top, sc, lc, 1)) {
            cur[ncur++] = top;
            break;
        }
        if (c->required) {
            refuse(c, r, not_fit(c, &r->arena, top->slice, sc));
            return CU_OK;
        }
        if (lvl > 0 && !c->unconstrained) {
            lvl--;
            continue;
        }
        /* spread: the leader where it costs the fewest workers (Kueue
         * takes the first domains that can take it), then the workers
         * over the domains by the profile */
        int64_t rem = sc;
        size_t i = 0;
        if (lc > 0) {
            size_t b = least_loss(tmp, n, lc, 1);
            if (b == n) {
                refuse(c, r, not_fit(c, &r->arena, 0, sc));
                return CU_OK;
            }
            topo_dom *d = tmp[b];
            memmove(tmp + 1, tmp, b * sizeof *tmp);
            tmp[0] = d;
            cur[ncur++] = d;
            rem -= d->sswl;
            i = 1;
        }
        sort_doms(c, tmp + i, n - i, 0);
        for (; rem > 0 && i < n; i++) {
            topo_dom *d = tmp[i];
            if (!c->lfc && d->slice >= rem)
                d = best_fit(tmp + i, n - i, rem, 0, 1);
            cur[ncur++] = d;
            rem -= d->slice;
        }
        if (rem > 0) {
            refuse(c, r, not_fit(c, &r->arena, sc - rem, sc));
            return CU_OK;
        }
        break;
    }
    /* phase 3: down to the leaves */
    size_t nn = 0;
    int bad = fill_down(c, cur, ncur, c->count, lc, c->ss, 1, next, &nn);
    topo_dom **sw = cur;
    cur = next, next = sw, ncur = nn;
    size_t stop = L - 1 < c->slvl ? L - 1 : c->slvl;
    for (; !bad && lvl < stop; lvl++) {
        size_t n = 0;
        for (size_t i = 0; i < ncur; i++)
            for (size_t j = 0; j < cur[i]->n; j++)
                tmp[n++] = &t->lv[lvl + 1][cur[i]->first + j];
        sort_doms(c, tmp, n, lc > 0);
        nn = 0;
        bad = fill_down(c, tmp, n, c->count, lc, c->ss, 1, next, &nn);
        sw = cur, cur = next, next = sw, ncur = nn;
    }
    for (; !bad && lvl < L - 1; lvl++) {
        nn = 0;
        for (size_t i = 0; !bad && i < ncur; i++) {
            size_t n = cur[i]->n;
            for (size_t j = 0; j < n; j++)
                tmp[j] = &t->lv[lvl + 1][cur[i]->first + j];
            sort_doms(c, tmp, n, cur[i]->lead > 0);
            bad = fill_down(c, tmp, n, cur[i]->state, cur[i]->lead, 1, 0, next, &nn);
        }
        sw = cur, cur = next, next = sw, ncur = nn;
    }
    if (bad) {
        fail(c, r, "topology: the domains' counts do not add up (a bug)");
        return CU_OK;
    }
    /* the assignment: the leader's, then the workers' */
    qsort(cur, ncur, sizeof *cur, cmp_values);
    cu_err e2 = c->rl ? assign(c, cur, ncur, c->rl, 1) : CU_OK;
    return e2 == CU_OK ? assign(c, cur, ncur, r, 0) : e2;
}

/* The partner of reqs[i] in a group of two (Kueue's podSetGroupName):
 * its index, or n when reqs[i] has no group, the group has another size
 * or the smaller of the two is not a single pod. */
static size_t partner(const cu_tas_request *reqs, size_t n, size_t i)
{
    const char *g = reqs[i].group;
    size_t other = n, size = 1;
    for (size_t k = 0; g && k < n; k++)
        if (k != i && reqs[k].group && strcmp(reqs[k].group, g) == 0) {
            other = k;
            size++;
        }
    int32_t a = reqs[i].count, b = size == 2 ? reqs[other].count : 0;
    if (size != 2 || (a < b ? a : b) != 1)
        return n;
    return other;
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
    unsigned char *done = cu_arena_alloc(&s, n ? n : 1);
    e = c.assumed && c.elig && c.taint_s && c.taint_n && done ? CU_OK : CU_ENOMEM;
    if (done)
        memset(done, 0, n ? n : 1);
    for (size_t i = 0; e == CU_OK && i < n; i++) {
        if (done[i])
            continue;
        /* Kueue's findLeaderAndWorkers: of a group the first member is
         * the workers unless the second has more pods */
        size_t w = i, l = partner(reqs, n, i);
        if (l < n && reqs[l].count > reqs[i].count)
            w = l, l = i;
        c.lc = 0;
        c.rl = NULL;
        if (l < n) {
            done[l] = 1;
            e = resolve(&c, reqs[l].per_pod);
            c.lc = 1;
            c.lnr = c.nr, c.lri = c.ri, c.lra = c.ra;
            c.rl = &out[l];
        }
        done[w] = 1;
        c.rq = &reqs[w];
        c.lfc =
            reqs[w].mode == CU_TAS_UNCONSTRAINED && !(o && o->profile == CU_TAS_PROFILE_BEST_FIT);
        if (e == CU_OK)
            e = resolve(&c, reqs[w].per_pod);
        if (e == CU_OK)
            e = place_one(&c, &out[w]);
        if (e == CU_OK && !out[w].ok)
            e = CU_EINVAL;
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
            total += count_in(c.ra, c.nr, free, NULL);
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
    } else if (g->leader) {
        cu_buf_printf(out,
                      "at most %d of the group's %d worker pods fit in one %s beside its leader "
                      "(%d without it, %d on all nodes)",
                      g->fit_one_leader, g->requested, g->level ? g->level : "domain", g->fit_one,
                      g->fit_total);
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
