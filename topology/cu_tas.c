/*
 * cu_tas.c - a TAS flavor's snapshot: its nodes, the usage on them
 * and the tree of topology domains (cu_tas.h). Placement is
 * cu_place.c.
 */
#include "cu_tas_int.h"

#include <stdlib.h>
#include <string.h>

static const char *adup(cu_arena *a, const char *s, int *bad)
{
    if (!s)
        return NULL;
    char *c = cu_arena_strdup(a, s);
    if (!c)
        *bad = 1;
    return c;
}

/* Copies src into dst on a. */
static int kvs_copy(cu_arena *a, cu_kvs *dst, const cu_kvs *src)
{
    int bad = 0;
    dst->n = 0;
    dst->items = NULL;
    if (!src || !src->n)
        return 0;
    dst->items = cu_arena_alloc(a, src->n * sizeof *dst->items);
    if (!dst->items)
        return -1;
    for (size_t i = 0; i < src->n; i++) {
        dst->items[i].key = adup(a, src->items[i].key, &bad);
        dst->items[i].value = adup(a, src->items[i].value, &bad);
    }
    dst->n = src->n;
    return bad ? -1 : 0;
}

int cu_tas_int_res(cu_tas *t, const char *name)
{
    int i = cu_strmap_get(&t->byres, name);
    if (i >= 0)
        return i;
    char *c = strdup(name);
    if (!c || CU_VEC_PUSH(t->resnames, c, 8)) {
        free(c);
        return -1;
    }
    i = (int)(t->resnames.n - 1);
    if (cu_strmap_put(&t->byres, c, i) != CU_OK) {
        t->resnames.n--;
        free(c);
        return -1;
    }
    return i;
}

cu_tas *cu_tas_new(const cu_tas_flavor *f)
{
    if (!f || !f->nlevels)
        return NULL;
    cu_tas *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    cu_arena_init(&t->fa, 1024);
    cu_arena_init(&t->ta, 16384);
    cu_strmap_init(&t->bynode);
    cu_strmap_init(&t->byres);
    cu_strmap_init(&t->byuse);
    int bad = 0;
    t->name = (char *)adup(&t->fa, f->name ? f->name : "", &bad);
    t->nlevels = f->nlevels;
    t->levels = cu_arena_alloc(&t->fa, f->nlevels * sizeof *t->levels);
    t->tols = f->ntols ? cu_arena_alloc(&t->fa, f->ntols * sizeof *t->tols) : NULL;
    if (!t->levels || (f->ntols && !t->tols) || kvs_copy(&t->fa, &t->node_labels, f->node_labels))
        bad = 1;
    for (size_t i = 0; !bad && i < f->nlevels; i++)
        t->levels[i] = (char *)adup(&t->fa, f->levels[i] ? f->levels[i] : "", &bad);
    for (size_t i = 0; !bad && i < f->ntols; i++) {
        t->tols[i] = f->tols[i];
        t->tols[i].key = adup(&t->fa, f->tols[i].key, &bad);
        t->tols[i].value = adup(&t->fa, f->tols[i].value, &bad);
        t->tols[i].effect = adup(&t->fa, f->tols[i].effect, &bad);
    }
    t->ntols = f->ntols;
    if (bad || cu_tas_int_res(t, CU_TAS_PODS) != 0) {
        cu_tas_free(t);
        return NULL;
    }
    t->host_lowest = strcmp(t->levels[t->nlevels - 1], CU_TAS_HOSTNAME) == 0;
    t->dirty = 1;
    return t;
}

static void node_free(topo_node *n)
{
    cu_arena_free(&n->a);
    free(n->name);
    free(n->alloc);
    free(n->bound);
    free(n);
}

void cu_tas_free(cu_tas *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nodes.n; i++)
        node_free(t->nodes.items[i]);
    free(t->nodes.items);
    for (size_t i = 0; i < t->uses.n; i++) {
        free(t->uses.items[i].key);
        free(t->uses.items[i].v);
    }
    free(t->uses.items);
    cu_strmap_free(&t->byuse);
    for (size_t i = 0; i < t->resnames.n; i++)
        free(t->resnames.items[i]);
    free(t->resnames.items);
    cu_strmap_free(&t->bynode);
    cu_strmap_free(&t->byres);
    cu_arena_free(&t->fa);
    cu_arena_free(&t->ta);
    free(t);
}

/* The record of name, made when new (NULL when out of memory). */
static topo_node *node_get(cu_tas *t, const char *name, int make)
{
    int i = cu_strmap_get(&t->bynode, name);
    if (i >= 0)
        return t->nodes.items[i];
    if (!make)
        return NULL;
    topo_node *n = calloc(1, sizeof *n);
    if (!n)
        return NULL;
    cu_arena_init(&n->a, 512);
    n->name = strdup(name);
    if (!n->name || CU_VEC_PUSH(t->nodes, n, 64)) {
        node_free(n);
        return NULL;
    }
    if (cu_strmap_put(&t->bynode, n->name, (int)(t->nodes.n - 1)) != CU_OK) {
        t->nodes.n--;
        node_free(n);
        return NULL;
    }
    return n;
}

/* Makes the k arrays arrs of *nres entries cover index r (zeroed). */
static int cover(int64_t **arrs, int k, size_t *nres, size_t r)
{
    if (r < *nres)
        return 0;
    size_t m = r + 8;
    for (int i = 0; i < k; i++) {
        int64_t *p = realloc(arrs[i], m * sizeof *p);
        if (!p)
            return -1;
        memset(p + *nres, 0, (m - *nres) * sizeof *p);
        arrs[i] = p;
    }
    *nres = m;
    return 0;
}

static int node_cover(topo_node *n, size_t r)
{
    int64_t *arrs[2] = { n->alloc, n->bound };
    size_t had = n->nres;
    int e = cover(arrs, 2, &n->nres, r);
    if (n->nres != had || e) {
        n->alloc = arrs[0];
        n->bound = arrs[1];
    }
    return e;
}

static int flavor_ok(const cu_tas *t, const cu_kvs *labels)
{
    for (size_t i = 0; i < t->node_labels.n; i++) {
        const char *v = cu_kvs_get(labels, t->node_labels.items[i].key);
        if (!v ||
            strcmp(v, t->node_labels.items[i].value ? t->node_labels.items[i].value : "") != 0)
            return 0;
    }
    for (size_t i = 0; i < t->nlevels; i++)
        if (!cu_kvs_get(labels, t->levels[i]))
            return 0;
    return 1;
}

cu_err cu_tas_node_set(cu_tas *t, const cu_tas_node *in)
{
    if (!in || !in->name)
        return CU_EINVAL;
    topo_node *n = node_get(t, in->name, 1);
    if (!n)
        return CU_ENOMEM;
    cu_arena_free(&n->a);
    n->labels.n = 0;
    n->ntaints = 0;
    n->taints = NULL;
    n->values = NULL;
    n->host = NULL;
    n->known = 1;
    n->member = 0;
    t->dirty = 1;
    n->ready = in->ready;
    n->unsched = in->unschedulable;
    int bad = kvs_copy(&n->a, &n->labels, in->labels) != 0;
    if (!bad && in->ntaints) {
        n->taints = cu_arena_alloc(&n->a, in->ntaints * sizeof *n->taints);
        bad = !n->taints;
        for (size_t i = 0; !bad && i < in->ntaints; i++) {
            n->taints[i].key = adup(&n->a, in->taints[i].key, &bad);
            n->taints[i].value = adup(&n->a, in->taints[i].value, &bad);
            n->taints[i].effect = adup(&n->a, in->taints[i].effect, &bad);
        }
        n->ntaints = in->ntaints;
    }
    for (size_t i = 0; i < n->nres; i++)
        n->alloc[i] = 0;
    for (size_t i = 0; !bad && in->allocatable && i < in->allocatable->n; i++) {
        int r = cu_tas_int_res(t, in->allocatable->items[i].name);
        if (r < 0 || node_cover(n, (size_t)r))
            bad = 1;
        else
            n->alloc[r] = in->allocatable->items[i].milli;
    }
    if (bad) {
        n->known = 0;
        return CU_ENOMEM;
    }
    n->host = cu_kvs_get(&n->labels, CU_TAS_HOSTNAME);
    n->flavor_ok = flavor_ok(t, &n->labels);
    if (n->ready && !n->unsched && n->flavor_ok) {
        n->values = cu_arena_alloc(&n->a, t->nlevels * sizeof *n->values);
        if (!n->values) {
            n->known = 0;
            return CU_ENOMEM;
        }
        for (size_t i = 0; i < t->nlevels; i++)
            n->values[i] = cu_kvs_get(&n->labels, t->levels[i]);
        n->nvals = t->nlevels;
        n->member = 1;
    }
    return CU_OK;
}

void cu_tas_node_remove(cu_tas *t, const char *name)
{
    topo_node *n = node_get(t, name, 0);
    if (!n || !n->known)
        return;
    n->known = n->member = 0;
    t->dirty = 1;
}

/* Interns per_pod's resources and adds sign * count of each (and count
 * "pods") to the usage array *u of *nres entries. */
static cu_err add_usage(cu_tas *t, int64_t **u, size_t *nres, const cu_reslist *per_pod,
                        int32_t count, int sign)
{
    int64_t s = sign < 0 ? -1 : 1;
    size_t np = per_pod ? per_pod->n : 0;
    for (size_t i = 0; i < np; i++) {
        int r = cu_tas_int_res(t, per_pod->items[i].name);
        if (r < 0 || cover(u, 1, nres, (size_t)r))
            return CU_ENOMEM;
    }
    if (cover(u, 1, nres, 0))
        return CU_ENOMEM;
    for (size_t i = 0; i < np; i++) {
        int r = cu_strmap_get(&t->byres, per_pod->items[i].name);
        if (r > 0) /* "pods" (0) is counted once per pod below */
            (*u)[r] += s * per_pod->items[i].milli * count;
    }
    (*u)[0] += s * count;
    return CU_OK;
}

cu_err cu_tas_usage(cu_tas *t, const char *node, const cu_reslist *per_pod, int32_t count, int sign)
{
    if (!node || count < 0)
        return CU_EINVAL;
    topo_node *n = node_get(t, node, 1);
    if (!n)
        return CU_ENOMEM;
    /* alloc and bound share nres: cover both first */
    for (size_t i = 0; per_pod && i < per_pod->n; i++) {
        int r = cu_tas_int_res(t, per_pod->items[i].name);
        if (r < 0 || node_cover(n, (size_t)r))
            return CU_ENOMEM;
    }
    if (node_cover(n, 0))
        return CU_ENOMEM;
    size_t nres = n->nres;
    cu_err e = add_usage(t, &n->bound, &nres, per_pod, count, sign);
    CU_ASSERT(e != CU_OK || nres == n->nres);
    return e;
}

/* The key of a leaf from its values (the hostname alone, or joined). */
static char *use_key(const char *const *values, size_t nvalues)
{
    size_t len = 1;
    for (size_t i = 0; i < nvalues; i++)
        len += strlen(values[i] ? values[i] : "") + 1;
    char *k = malloc(len), *p = k;
    if (!k)
        return NULL;
    for (size_t i = 0; i < nvalues; i++) {
        const char *v = values[i] ? values[i] : "";
        size_t l = strlen(v);
        if (i)
            *p++ = ',';
        memcpy(p, v, l);
        p += l;
    }
    *p = 0;
    return k;
}

cu_err cu_tas_assigned(cu_tas *t, const char *const *values, size_t nvalues,
                       const cu_reslist *per_pod, int32_t count, int sign)
{
    if (!values || count < 0 || nvalues != (t->host_lowest ? 1 : t->nlevels))
        return CU_EINVAL;
    char *k = use_key(values, nvalues);
    if (!k)
        return CU_ENOMEM;
    int i = cu_strmap_get(&t->byuse, k);
    if (i < 0) {
        topo_use u = { k, 0, NULL };
        if (CU_VEC_PUSH(t->uses, u, 16)) {
            free(k);
            return CU_ENOMEM;
        }
        i = (int)(t->uses.n - 1);
        if (cu_strmap_put(&t->byuse, k, i) != CU_OK) {
            t->uses.n--;
            free(k);
            return CU_ENOMEM;
        }
    } else {
        free(k);
    }
    topo_use *u = &t->uses.items[i];
    return add_usage(t, &u->v, &u->nres, per_pod, count, sign);
}

int64_t cu_tas_int_assigned(const cu_tas *t, const char *key, int r)
{
    int i = key && r >= 0 ? cu_strmap_get(&t->byuse, key) : -1;
    if (i < 0 || (size_t)r >= t->uses.items[i].nres)
        return 0;
    return t->uses.items[i].v[r];
}

const char *cu_tas_int_leafkey(const cu_tas *t, const topo_dom *d, cu_arena *a)
{
    if (t->host_lowest)
        return d->values[t->nlevels - 1];
    char *k = use_key(d->values, t->nlevels);
    const char *c = k ? cu_arena_strdup(a, k) : NULL;
    free(k);
    return c;
}

const topo_use *cu_tas_int_use(const cu_tas *t, topo_dom *d, cu_arena *a)
{
    if (!(d->use_seen && (d->use_idx >= 0 || d->use_seen == t->uses.n + 1))) {
        const char *key = cu_tas_int_leafkey(t, d, a);
        if (!key)
            return NULL; /* out of memory: not cached */
        d->use_idx = cu_strmap_get(&t->byuse, key);
        d->use_seen = t->uses.n + 1;
    }
    return d->use_idx < 0 ? NULL : &t->uses.items[d->use_idx];
}

int64_t cu_tas_int_free(const cu_tas *t, const topo_node *n, int r, int assigned)
{
    if (r < 0 || (size_t)r >= n->nres)
        return 0;
    int64_t f = n->alloc[r] - n->bound[r];
    if (assigned && t->host_lowest && t->uses.n)
        f -= cu_tas_int_assigned(t, n->host, r);
    return f;
}

cu_err cu_tas_node_free(const cu_tas *t, const char *node, const char *resource, int64_t *out)
{
    int i = cu_strmap_get(&t->bynode, node);
    if (i < 0 || !t->nodes.items[i]->member)
        return CU_ENOTFOUND;
    *out = cu_tas_int_free(t, t->nodes.items[i], cu_strmap_get(&t->byres, resource), 1);
    return CU_OK;
}

int cu_tas_int_tolerated(const cu_tas *t, const topo_node *n, const cu_toleration *tols,
                         size_t ntols, const cu_taint **taint)
{
    for (size_t i = 0; i < n->ntaints; i++) {
        const cu_taint *x = &n->taints[i];
        if (cu_match_taint_filters(x) && !cu_match_tolerated(t->tols, t->ntols, x) &&
            !cu_match_tolerated(tols, ntols, x)) {
            if (taint)
                *taint = x;
            return 0;
        }
    }
    return 1;
}

/* ---- the tree ---- */

static int values_cmp(const char *const *a, const char *const *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int c = strcmp(a[i], b[i]);
        if (c)
            return c;
    }
    return 0;
}

static int node_cmp(const void *pa, const void *pb)
{
    const topo_node *a = *(topo_node *const *)pa, *b = *(topo_node *const *)pb;
    int c = values_cmp(a->values, b->values, a->nvals);
    return c ? c : strcmp(a->name, b->name);
}

cu_err cu_tas_int_tree(cu_tas *t)
{
    if (!t->dirty)
        return CU_OK;
    cu_arena_free(&t->ta);
    t->sorted = NULL;
    t->nsorted = 0;
    size_t L = t->nlevels, m = 0;
    for (size_t i = 0; i < t->nodes.n; i++)
        m += (size_t)t->nodes.items[i]->member;
    t->lv = cu_arena_alloc(&t->ta, L * sizeof *t->lv);
    t->nlv = cu_arena_alloc(&t->ta, L * sizeof *t->nlv);
    t->sorted = cu_arena_alloc(&t->ta, (m ? m : 1) * sizeof *t->sorted);
    if (!t->lv || !t->nlv || !t->sorted)
        return CU_ENOMEM;
    for (size_t i = 0; i < t->nodes.n; i++)
        if (t->nodes.items[i]->member)
            t->sorted[t->nsorted++] = t->nodes.items[i];
    qsort(t->sorted, m, sizeof *t->sorted, node_cmp);
    /* at most m domains per level; count, then fill */
    for (size_t l = 0; l < L; l++) {
        t->lv[l] = cu_arena_alloc(&t->ta, (m ? m : 1) * sizeof **t->lv);
        if (!t->lv[l])
            return CU_ENOMEM;
        size_t nd = 0;
        for (size_t i = 0; i < m; i++) {
            const char **v = t->sorted[i]->values;
            if (nd && values_cmp(t->lv[l][nd - 1].values, v, l + 1) == 0) {
                if (l == L - 1)
                    t->lv[l][nd - 1].n++;
                continue;
            }
            topo_dom *d = &t->lv[l][nd++];
            memset(d, 0, sizeof *d);
            d->level = l;
            d->values = v;
            d->first = i; /* leaves: nodes; others fixed below */
            d->n = 1;
        }
        t->nlv[l] = nd;
    }
    /* children ranges and parents: both levels are sorted by values */
    for (size_t l = 0; l + 1 < L; l++) {
        size_t c = 0;
        for (size_t p = 0; p < t->nlv[l]; p++) {
            topo_dom *d = &t->lv[l][p];
            d->first = c;
            d->n = 0;
            while (c < t->nlv[l + 1] && values_cmp(t->lv[l + 1][c].values, d->values, l + 1) == 0) {
                t->lv[l + 1][c].parent = p;
                c++;
                d->n++;
            }
        }
    }
    t->dirty = 0;
    return CU_OK;
}

size_t cu_tas_nlevels(const cu_tas *t) { return t->nlevels; }

const char *cu_tas_level(const cu_tas *t, size_t level)
{
    return level < t->nlevels ? t->levels[level] : NULL;
}

size_t cu_tas_ndomains(cu_tas *t, size_t level)
{
    if (level >= t->nlevels || cu_tas_int_tree(t) != CU_OK)
        return 0;
    return t->nlv[level];
}

/* Sums the free amount of r over the member nodes under d. */
static int64_t dom_free(const cu_tas *t, const topo_dom *d, int r)
{
    int64_t s = 0;
    if (d->level == t->nlevels - 1) {
        for (size_t i = 0; i < d->n; i++)
            s += cu_tas_int_free(t, t->sorted[d->first + i], r, 0);
        cu_arena a;
        cu_arena_init(&a, 256);
        s -= cu_tas_int_assigned(t, cu_tas_int_leafkey(t, d, &a), r);
        cu_arena_free(&a);
        return s;
    }
    for (size_t i = 0; i < d->n; i++)
        s += dom_free(t, &t->lv[d->level + 1][d->first + i], r);
    return s;
}

const char *const *cu_tas_domain(cu_tas *t, size_t level, size_t i, const char *resource,
                                 int64_t *free)
{
    if (i >= cu_tas_ndomains(t, level))
        return NULL;
    const topo_dom *d = &t->lv[level][i];
    if (free)
        *free = resource ? dom_free(t, d, cu_strmap_get(&t->byres, resource)) : 0;
    return d->values;
}

int64_t cu_tas_max_free(cu_tas *t, const char *resource, const char **node)
{
    int r = cu_strmap_get(&t->byres, resource);
    int64_t best = 0;
    const char *bn = NULL;
    for (size_t i = 0; i < t->nodes.n; i++) {
        const topo_node *n = t->nodes.items[i];
        if (!n->member || !cu_tas_int_tolerated(t, n, NULL, 0, NULL))
            continue;
        int64_t f = cu_tas_int_free(t, n, r, 1);
        if (!bn || f > best || (f == best && strcmp(n->name, bn) < 0)) {
            best = f;
            bn = n->name;
        }
    }
    if (node)
        *node = bn;
    return bn && best > 0 ? best : 0;
}
