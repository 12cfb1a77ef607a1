/*
 * cu_objects.c - structural decoding of Kueue and core Kubernetes objects
 * from cu_doc trees into the C structs of cu_objects.h, plus the small
 * object helpers (kvs/reslist lookup, label selectors, conditions,
 * priority resolution, loading files and folders).
 *
 * Invariants:
 *  - every string stored in an object is a copy in w->arena; the doc tree
 *    is only borrowed for the duration of cu_world_decode;
 *  - an object is appended to its world vector only after it decoded with
 *    no error; a failed object leaves garbage in the arena but nothing
 *    reachable;
 *  - meta.seq is w->nseq++ taken when a known object starts decoding, so
 *    seq follows the order of appearance across all inputs.
 */
#include "cu_names.h"
#include "cu_objects.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PATHMAX 512

/* ------------------------------------------------------------------ */
/* small helpers                                                       */

const char *cu_kvs_get(const cu_kvs *kvs, const char *key)
{
    if (!kvs || !key)
        return NULL;
    for (size_t i = 0; i < kvs->n; i++)
        if (strcmp(kvs->items[i].key, key) == 0)
            return kvs->items[i].value;
    return NULL;
}

int64_t cu_reslist_get(const cu_reslist *l, const char *name)
{
    if (!l || !name)
        return 0;
    size_t lo = 0, hi = l->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(l->items[mid].name, name);
        if (c == 0)
            return l->items[mid].milli;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

static int strs_has(const cu_strs *s, const char *v)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->items[i], v) == 0)
            return 1;
    return 0;
}

int cu_labelsel_matches(const cu_labelsel *sel, const cu_kvs *labels)
{
    if (!sel || sel->is_null)
        return 0;
    for (size_t i = 0; i < sel->match_labels.n; i++) {
        const char *v = cu_kvs_get(labels, sel->match_labels.items[i].key);
        if (!v || strcmp(v, sel->match_labels.items[i].value) != 0)
            return 0;
    }
    for (size_t i = 0; i < sel->nexpr; i++) {
        const cu_selreq *r = &sel->exprs[i];
        const char *v = cu_kvs_get(labels, r->key);
        switch (r->op) {
        case CU_SEL_IN:
            if (!v || !strs_has(&r->values, v))
                return 0;
            break;
        case CU_SEL_NOTIN:
            if (v && strs_has(&r->values, v))
                return 0;
            break;
        case CU_SEL_EXISTS:
            if (!v)
                return 0;
            break;
        case CU_SEL_DOESNOTEXIST:
            if (v)
                return 0;
            break;
        default:
            return 0; /* Gt/Lt are not valid in a label selector */
        }
    }
    return 1;
}

const char *cu_kind_name(cu_kind k)
{
    switch (k) {
    case CU_KIND_RESOURCE_FLAVOR: return "ResourceFlavor";
    case CU_KIND_CLUSTER_QUEUE: return "ClusterQueue";
    case CU_KIND_COHORT: return "Cohort";
    case CU_KIND_LOCAL_QUEUE: return "LocalQueue";
    case CU_KIND_WORKLOAD: return "Workload";
    case CU_KIND_WORKLOAD_PRIORITY_CLASS: return "WorkloadPriorityClass";
    case CU_KIND_JOB: return "Job";
    case CU_KIND_NAMESPACE: return "Namespace";
    case CU_KIND_PRIORITY_CLASS: return "PriorityClass";
    case CU_KIND_CONFIGURATION: return "Configuration";
    case CU_KIND_UNKNOWN: break;
    }
    return "Unknown";
}

const cu_condition *cu_workload_cond(const cu_workload *wl, const char *type)
{
    for (size_t i = 0; i < wl->nconds; i++)
        if (wl->conds[i].type && strcmp(wl->conds[i].type, type) == 0)
            return &wl->conds[i];
    return NULL;
}

static int cond_true(const cu_workload *wl, const char *type)
{
    const cu_condition *c = cu_workload_cond(wl, type);
    return c && c->status && strcmp(c->status, "True") == 0;
}

int cu_workload_has_quota(const cu_workload *wl)
{
    return wl->has_admission && cond_true(wl, "QuotaReserved");
}

int cu_workload_finished(const cu_workload *wl)
{
    return cond_true(wl, "Finished");
}

void cu_world_init(cu_world *w)
{
    memset(w, 0, sizeof(*w));
    cu_arena_init(&w->arena, 0);
}

void cu_world_free(cu_world *w)
{
    cu_arena_free(&w->arena);
    free(w->flavors.items);
    free(w->cqs.items);
    free(w->cohorts.items);
    free(w->lqs.items);
    free(w->workloads.items);
    free(w->wpcs.items);
    free(w->pcs.items);
    free(w->namespaces.items);
    free(w->configs.items);
    memset(w, 0, sizeof(*w));
}

/* Appends the pointer x to a CU_VEC of pointers. */
static int vec_push_ptr(void *itemsp, size_t *n, size_t *cap, void *x)
{
    void **items;
    memcpy(&items, itemsp, sizeof(items));
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        void **p = realloc(items, nc * sizeof(*p));
        if (!p)
            return -1;
        items = p;
        memcpy(itemsp, &items, sizeof(items));
        *cap = nc;
    }
    items[(*n)++] = x;
    return 0;
}
#define VEC_PUSH(v, x) vec_push_ptr(&(v).items, &(v).n, &(v).cap, (x))

/* ------------------------------------------------------------------ */
/* decoding context                                                    */

typedef struct dctx {
    cu_world *w;
    cu_arena *a;
    cu_diag *d;
    const char *file;     /* arena copy */
    const char *kind;     /* for messages */
    char who[600];        /* "ns/name" or "name" */
    int v1beta1;          /* kueue.x-k8s.io/v1beta1 mapping rules */
    int nerr;
    int oom;
} dctx;

static void ferr(dctx *c, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void ferr(dctx *c, const char *path, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (c->who[0])
        cu_diag_error(c->d, "%s %s: %s: %s", c->kind, c->who, path, msg);
    else
        cu_diag_error(c->d, "%s: %s: %s", c->kind, path, msg);
    c->nerr++;
}

/* Writes base + "." + formatted suffix (or base + suffix for "[..]"). */
static const char *pj(char *buf, const char *base, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static const char *pj(char *buf, const char *base, const char *fmt, ...)
{
    char sfx[PATHMAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sfx, sizeof(sfx), fmt, ap);
    va_end(ap);
    /* concatenated by hand: paths longer than PATHMAX are cut short */
    size_t bl = base ? strlen(base) : 0, sl = strlen(sfx), n = 0;
    if (bl > PATHMAX - 1)
        bl = PATHMAX - 1;
    memmove(buf, base ? base : "", bl);
    n = bl;
    if (bl && sfx[0] != '[' && n < PATHMAX - 1)
        buf[n++] = '.';
    if (sl > PATHMAX - 1 - n)
        sl = PATHMAX - 1 - n;
    memcpy(buf + n, sfx, sl);
    buf[n + sl] = '\0';
    return buf;
}

static void *dalloc(dctx *c, size_t n)
{
    if (n == 0)
        return NULL;
    void *p = cu_arena_alloc(c->a, n);
    if (!p)
        c->oom = 1;
    return p;
}

static const char *dstr(dctx *c, const char *s)
{
    if (!s)
        return NULL;
    char *p = cu_arena_strdup(c->a, s);
    if (!p)
        c->oom = 1;
    return p;
}

/* Returns n when it is a map, NULL when absent/null, NULL + error when it
 * has another type. */
static const cu_node *want_map(dctx *c, const cu_node *n, const char *path)
{
    if (!n || cu_node_is_null(n))
        return NULL;
    if (n->type != CU_NODE_MAP) {
        ferr(c, path, "must be an object");
        return NULL;
    }
    return n;
}

static const cu_node *want_seq(dctx *c, const cu_node *n, const char *path)
{
    if (!n || cu_node_is_null(n))
        return NULL;
    if (n->type != CU_NODE_SEQ) {
        ferr(c, path, "must be a list");
        return NULL;
    }
    return n;
}

/* A string field: NULL when absent or null. */
static const char *get_str(dctx *c, const cu_node *map, const char *key, const char *base)
{
    const cu_node *n = cu_node_get(map, key);
    if (!n || cu_node_is_null(n))
        return NULL;
    if (n->type != CU_NODE_SCALAR) {
        char p[PATHMAX];
        ferr(c, pj(p, base, "%s", key), "must be a string");
        return NULL;
    }
    return dstr(c, n->str);
}

/* An int32 scalar node; returns 1 when present and valid. */
static int node_i32(dctx *c, const cu_node *n, const char *path, int32_t *out)
{
    int64_t v;
    if (!n || cu_node_is_null(n))
        return 0;
    if (n->type != CU_NODE_SCALAR || !n->plain || cu_node_int(n, &v) != CU_OK) {
        ferr(c, path, "must be an integer");
        return 0;
    }
    if (v < INT32_MIN || v > INT32_MAX) {
        ferr(c, path, "must fit in a 32-bit integer");
        return 0;
    }
    *out = (int32_t)v;
    return 1;
}

static int get_i32(dctx *c, const cu_node *map, const char *key, const char *base, int32_t *out)
{
    char p[PATHMAX];
    return node_i32(c, cu_node_get(map, key), pj(p, base, "%s", key), out);
}

/* A bool field; leaves *out alone when absent. */
static void get_bool(dctx *c, const cu_node *map, const char *key, const char *base, int *out)
{
    const cu_node *n = cu_node_get(map, key);
    int v;
    if (!n || cu_node_is_null(n))
        return;
    if (n->type != CU_NODE_SCALAR || !n->plain || cu_node_bool(n, &v) != CU_OK) {
        char p[PATHMAX];
        ferr(c, pj(p, base, "%s", key), "must be a boolean");
        return;
    }
    *out = v;
}

/* A quantity node; returns 1 when present and valid. */
static int node_qty(dctx *c, const cu_node *n, const char *path, int64_t *out)
{
    if (!n || cu_node_is_null(n))
        return 0;
    if (n->type != CU_NODE_SCALAR) {
        ferr(c, path, "must be a quantity");
        return 0;
    }
    cu_err err = cu_qty_parse(n->str, out, NULL);
    if (err == CU_EOVERFLOW) {
        ferr(c, path, "quantity \"%s\" is too large", n->str);
        return 0;
    }
    if (err) {
        ferr(c, path, "invalid quantity \"%s\"", n->str);
        return 0;
    }
    return 1;
}

/* An enum field: *out = index into names, or def when absent. */
static void get_enum(dctx *c, const cu_node *map, const char *key, const char *base,
                     const char *const *names, size_t nnames, int def, int *out)
{
    const cu_node *n = cu_node_get(map, key);
    char p[PATHMAX];
    *out = def;
    if (!n || cu_node_is_null(n))
        return;
    pj(p, base, "%s", key);
    if (n->type != CU_NODE_SCALAR) {
        ferr(c, p, "must be a string");
        return;
    }
    for (size_t i = 0; i < nnames; i++) {
        if (names[i] && strcmp(n->str, names[i]) == 0) {
            *out = (int)i;
            return;
        }
    }
    char allowed[512] = "";
    size_t len = 0;
    for (size_t i = 0; i < nnames; i++) {
        if (!names[i])
            continue;
        int k = snprintf(allowed + len, sizeof(allowed) - len, "%s\"%s\"",
                         len ? ", " : "", names[i]);
        if (k < 0 || (size_t)k >= sizeof(allowed) - len)
            break;
        len += (size_t)k;
    }
    ferr(c, p, "Unsupported value: \"%s\": supported values: %s", n->str, allowed);
}

/* A string -> string map. */
static void get_kvs(dctx *c, const cu_node *map, const char *key, const char *base, cu_kvs *out)
{
    char p[PATHMAX];
    out->n = 0;
    out->items = NULL;
    const cu_node *m = want_map(c, cu_node_get(map, key), pj(p, base, "%s", key));
    if (!m || m->n == 0)
        return;
    out->items = dalloc(c, m->n * sizeof(*out->items));
    if (!out->items)
        return;
    for (size_t i = 0; i < m->n; i++) {
        const cu_node *v = m->vals[i];
        const char *s;
        if (v->type != CU_NODE_SCALAR) {
            char q[PATHMAX];
            ferr(c, pj(q, p, "%s", m->keys[i]), "must be a string");
            continue;
        }
        /* an explicit null value reads as "" (Kubernetes decodes it so) */
        s = cu_node_is_null(v) ? "" : v->str;
        out->items[out->n].key = dstr(c, m->keys[i]);
        out->items[out->n].value = dstr(c, s);
        out->n++;
    }
}

/* A list of strings. */
static void get_strs(dctx *c, const cu_node *map, const char *key, const char *base, cu_strs *out)
{
    char p[PATHMAX];
    out->n = 0;
    out->items = NULL;
    const cu_node *s = want_seq(c, cu_node_get(map, key), pj(p, base, "%s", key));
    if (!s || s->n == 0)
        return;
    out->items = dalloc(c, s->n * sizeof(*out->items));
    if (!out->items)
        return;
    for (size_t i = 0; i < s->n; i++) {
        const char *v = cu_node_scalar(s->vals[i]);
        if (!v || s->vals[i]->type != CU_NODE_SCALAR) {
            char q[PATHMAX];
            ferr(c, pj(q, p, "[%zu]", i), "must be a string");
            continue;
        }
        out->items[out->n++] = dstr(c, v);
    }
}

static int res_cmp(const void *a, const void *b)
{
    return strcmp(((const cu_res *)a)->name, ((const cu_res *)b)->name);
}

/* A ResourceList map into a sorted reslist. */
static void get_reslist(dctx *c, const cu_node *map, const char *key, const char *base,
                        cu_reslist *out)
{
    char p[PATHMAX];
    out->n = 0;
    out->items = NULL;
    const cu_node *m = want_map(c, cu_node_get(map, key), pj(p, base, "%s", key));
    if (!m || m->n == 0)
        return;
    out->items = dalloc(c, m->n * sizeof(*out->items));
    if (!out->items)
        return;
    for (size_t i = 0; i < m->n; i++) {
        char q[PATHMAX];
        int64_t v;
        if (!node_qty(c, m->vals[i], pj(q, p, "%s", m->keys[i]), &v))
            continue;
        out->items[out->n].name = dstr(c, m->keys[i]);
        out->items[out->n].milli = v;
        out->n++;
    }
    qsort(out->items, out->n, sizeof(*out->items), res_cmp);
}

/* ------------------------------------------------------------------ */
/* shared sub-structures                                               */

static const char *const sel_ops[] = { "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt" };

const char *cu_selop_name(cu_selop op)
{
    return (unsigned)op < sizeof(sel_ops) / sizeof(sel_ops[0]) ? sel_ops[op] : "?";
}

static void dec_selreqs(dctx *c, const cu_node *seq, const char *path, int allow_gtlt,
                        size_t *nout, cu_selreq **out)
{
    *nout = 0;
    *out = NULL;
    if (!seq || seq->n == 0)
        return;
    *out = dalloc(c, seq->n * sizeof(**out));
    if (!*out)
        return;
    for (size_t i = 0; i < seq->n; i++) {
        char p[PATHMAX];
        pj(p, path, "[%zu]", i);
        const cu_node *e = want_map(c, seq->vals[i], p);
        if (!e) {
            if (cu_node_is_null(seq->vals[i]))
                ferr(c, p, "must be an object");
            continue;
        }
        cu_selreq *r = &(*out)[*nout];
        int op;
        r->key = get_str(c, e, "key", p);
        if (!r->key) {
            char q[PATHMAX];
            ferr(c, pj(q, p, "key"), "Required value");
        }
        if (!cu_node_get(e, "operator") || cu_node_is_null(cu_node_get(e, "operator"))) {
            char q[PATHMAX];
            ferr(c, pj(q, p, "operator"), "Required value");
            continue;
        }
        get_enum(c, e, "operator", p, sel_ops, allow_gtlt ? 6 : 4, -1, &op);
        if (op < 0)
            continue;
        r->op = (cu_selop)op;
        get_strs(c, e, "values", p, &r->values);
        (*nout)++;
    }
}

static void dec_labelsel(dctx *c, const cu_node *map, const char *key, const char *base,
                         cu_labelsel *out)
{
    char p[PATHMAX];
    memset(out, 0, sizeof(*out));
    const cu_node *m = want_map(c, cu_node_get(map, key), pj(p, base, "%s", key));
    if (!m) {
        out->is_null = 1;
        return;
    }
    get_kvs(c, m, "matchLabels", p, &out->match_labels);
    char q[PATHMAX];
    const cu_node *ex = want_seq(c, cu_node_get(m, "matchExpressions"),
                                 pj(q, p, "matchExpressions"));
    dec_selreqs(c, ex, q, 0, &out->nexpr, &out->exprs);
}

static const char *const tol_ops[] = { "Equal", "Exists" };

static void dec_tolerations(dctx *c, const cu_node *map, const char *key, const char *base,
                            size_t *nout, cu_toleration **out)
{
    char p[PATHMAX];
    *nout = 0;
    *out = NULL;
    const cu_node *s = want_seq(c, cu_node_get(map, key), pj(p, base, "%s", key));
    if (!s || s->n == 0)
        return;
    *out = dalloc(c, s->n * sizeof(**out));
    if (!*out)
        return;
    for (size_t i = 0; i < s->n; i++) {
        char q[PATHMAX];
        pj(q, p, "[%zu]", i);
        const cu_node *t = want_map(c, s->vals[i], q);
        if (!t)
            continue;
        cu_toleration *tol = &(*out)[*nout];
        int op;
        tol->key = get_str(c, t, "key", q);
        get_enum(c, t, "operator", q, tol_ops, 2, CU_TOL_EQUAL, &op);
        tol->op = (cu_tolop)op;
        tol->value = get_str(c, t, "value", q);
        tol->effect = get_str(c, t, "effect", q);
        (*nout)++;
    }
}

static void dec_taints(dctx *c, const cu_node *map, const char *key, const char *base,
                       size_t *nout, cu_taint **out)
{
    char p[PATHMAX];
    *nout = 0;
    *out = NULL;
    const cu_node *s = want_seq(c, cu_node_get(map, key), pj(p, base, "%s", key));
    if (!s || s->n == 0)
        return;
    *out = dalloc(c, s->n * sizeof(**out));
    if (!*out)
        return;
    for (size_t i = 0; i < s->n; i++) {
        char q[PATHMAX];
        pj(q, p, "[%zu]", i);
        const cu_node *t = want_map(c, s->vals[i], q);
        if (!t)
            continue;
        cu_taint *tn = &(*out)[*nout];
        tn->key = get_str(c, t, "key", q);
        tn->value = get_str(c, t, "value", q);
        tn->effect = get_str(c, t, "effect", q);
        (*nout)++;
    }
}

/* resourceGroups of a ClusterQueue or a Cohort. */
static void dec_rgroups(dctx *c, const cu_node *spec, cu_rgroups *out)
{
    char p[PATHMAX];
    out->n = 0;
    out->items = NULL;
    const cu_node *s = want_seq(c, cu_node_get(spec, "resourceGroups"),
                                pj(p, "spec", "resourceGroups"));
    if (!s || s->n == 0)
        return;
    out->items = dalloc(c, s->n * sizeof(*out->items));
    if (!out->items)
        return;
    for (size_t g = 0; g < s->n; g++) {
        char gp[PATHMAX];
        pj(gp, p, "[%zu]", g);
        const cu_node *gn = want_map(c, s->vals[g], gp);
        if (!gn)
            continue;
        cu_rgroup *rg = &out->items[out->n++];
        get_strs(c, gn, "coveredResources", gp, &rg->covered);
        char fp[PATHMAX];
        const cu_node *fl = want_seq(c, cu_node_get(gn, "flavors"), pj(fp, gp, "flavors"));
        if (!fl || fl->n == 0)
            continue;
        rg->flavors = dalloc(c, fl->n * sizeof(*rg->flavors));
        if (!rg->flavors)
            return;
        for (size_t f = 0; f < fl->n; f++) {
            char fq[PATHMAX];
            pj(fq, fp, "[%zu]", f);
            const cu_node *fnode = want_map(c, fl->vals[f], fq);
            if (!fnode)
                continue;
            cu_fquota *fqo = &rg->flavors[rg->nflavors++];
            fqo->name = get_str(c, fnode, "name", fq);
            if (!fqo->name) {
                char q[PATHMAX];
                ferr(c, pj(q, fq, "name"), "Required value");
            }
            char rp[PATHMAX];
            const cu_node *rs = want_seq(c, cu_node_get(fnode, "resources"),
                                         pj(rp, fq, "resources"));
            if (!rs || rs->n == 0)
                continue;
            fqo->res = dalloc(c, rs->n * sizeof(*fqo->res));
            if (!fqo->res)
                return;
            for (size_t r = 0; r < rs->n; r++) {
                char rq[PATHMAX], q[PATHMAX];
                pj(rq, rp, "[%zu]", r);
                const cu_node *rn = want_map(c, rs->vals[r], rq);
                if (!rn)
                    continue;
                cu_rquota *qo = &fqo->res[fqo->n++];
                qo->name = get_str(c, rn, "name", rq);
                if (!qo->name)
                    ferr(c, pj(q, rq, "name"), "Required value");
                const cu_node *nq = cu_node_get(rn, "nominalQuota");
                if (!nq || cu_node_is_null(nq))
                    ferr(c, pj(q, rq, "nominalQuota"), "Required value");
                else
                    node_qty(c, nq, pj(q, rq, "nominalQuota"), &qo->nominal);
                qo->has_blimit = node_qty(c, cu_node_get(rn, "borrowingLimit"),
                                          pj(q, rq, "borrowingLimit"), &qo->blimit);
                qo->has_llimit = node_qty(c, cu_node_get(rn, "lendingLimit"),
                                          pj(q, rq, "lendingLimit"), &qo->llimit);
            }
        }
    }
}

/* spec.fairSharing.weight into *out (milli, default 1000). */
static void dec_fs_weight(dctx *c, const cu_node *spec, int64_t *out)
{
    *out = 1000;
    const cu_node *fs = want_map(c, cu_node_get(spec, "fairSharing"), "spec.fairSharing");
    if (fs)
        node_qty(c, cu_node_get(fs, "weight"), "spec.fairSharing.weight", out);
}

static const char *const stop_names[] = { "None", "Hold", "HoldAndDrain" };

/* ------------------------------------------------------------------ */
/* metadata                                                            */

/* Fills m from the document's metadata (name already checked). */
static void dec_meta(dctx *c, const cu_node *root, const char *api, const char *name,
                     int namespaced, cu_meta *m)
{
    const cu_node *md = want_map(c, cu_node_get(root, "metadata"), "metadata");
    m->api_version = dstr(c, api);
    m->name = dstr(c, name);
    m->ns = NULL;
    if (namespaced) {
        const char *ns = get_str(c, md, "namespace", "metadata");
        m->ns = ns && *ns ? ns : dstr(c, "default");
    }
    m->uid = get_str(c, md, "uid", "metadata");
    get_kvs(c, md, "labels", "metadata", &m->labels);
    get_kvs(c, md, "annotations", "metadata", &m->annotations);
    const cu_node *ct = cu_node_get(md, "creationTimestamp");
    if (ct && !cu_node_is_null(ct)) {
        if (ct->type != CU_NODE_SCALAR || cu_time_parse(ct->str, &m->created_ms) != CU_OK)
            ferr(c, "metadata.creationTimestamp", "invalid time \"%s\"",
                 ct->type == CU_NODE_SCALAR ? ct->str : "");
        else
            m->has_created = 1;
    }
    m->file = c->file;
    m->line = root->line;
    m->seq = c->w->nseq++;
}

/* ------------------------------------------------------------------ */
/* kinds                                                               */

static void dec_flavor(dctx *c, const cu_node *root, cu_resource_flavor *rf)
{
    const cu_node *spec = want_map(c, cu_node_get(root, "spec"), "spec");
    get_kvs(c, spec, "nodeLabels", "spec", &rf->node_labels);
    dec_taints(c, spec, "nodeTaints", "spec", &rf->ntaints, &rf->taints);
    dec_tolerations(c, spec, "tolerations", "spec", &rf->ntols, &rf->tols);
    rf->topology_name = get_str(c, spec, "topologyName", "spec");
}

static void dec_cq(dctx *c, const cu_node *root, cu_cluster_queue *cq)
{
    static const char *const qs[] = { "BestEffortFIFO", "StrictFIFO" };
    static const char *const qs_msg[] = { "StrictFIFO", "BestEffortFIFO" };
    /* index 0: Borrow (v1beta1 only), 1: MayStopSearch, 2: TryNextFlavor */
    static const char *const borrow_v1b1[] = { "Borrow", "MayStopSearch", "TryNextFlavor" };
    static const char *const preempt_v1b1[] = { "Preempt", "MayStopSearch", "TryNextFlavor" };
    static const char *const fung_v1b2[] = { NULL, "MayStopSearch", "TryNextFlavor" };
    static const char *const prefs[] = { NULL, "BorrowingOverPreemption", "PreemptionOverBorrowing" };
    static const char *const within[] = { "Never", "LowerPriority", "LowerOrNewerEqualPriority" };
    static const char *const reclaim[] = { "Never", "LowerPriority", NULL, "Any" };
    static const char *const bwc[] = { "Never", "LowerPriority" };
    static const char *const afs[] = { "NoAdmissionFairSharing", "UsageBasedAdmissionFairSharing" };
    int v;

    const cu_node *spec = want_map(c, cu_node_get(root, "spec"), "spec");
    cq->cohort = get_str(c, spec, c->v1beta1 ? "cohort" : "cohortName", "spec");
    if (cq->cohort && !*cq->cohort)
        cq->cohort = NULL;
    dec_rgroups(c, spec, &cq->groups);

    /* queueingStrategy: message lists the values in Kubernetes' order */
    const cu_node *qn = cu_node_get(spec, "queueingStrategy");
    cq->queueing = CU_BEST_EFFORT_FIFO;
    if (qn && !cu_node_is_null(qn)) {
        if (qn->type == CU_NODE_SCALAR && strcmp(qn->str, qs[1]) == 0)
            cq->queueing = CU_STRICT_FIFO;
        else if (!(qn->type == CU_NODE_SCALAR && strcmp(qn->str, qs[0]) == 0))
            get_enum(c, spec, "queueingStrategy", "spec", qs_msg, 2, 0, &v);
    }

    dec_labelsel(c, spec, "namespaceSelector", "spec", &cq->ns_selector);

    cq->fungibility.when_can_borrow = CU_FUNG_MAY_STOP_SEARCH;
    cq->fungibility.when_can_preempt = CU_FUNG_TRY_NEXT_FLAVOR;
    const cu_node *ff = want_map(c, cu_node_get(spec, "flavorFungibility"), "spec.flavorFungibility");
    if (ff) {
        const char *const *bn = c->v1beta1 ? borrow_v1b1 : fung_v1b2;
        const char *const *pn = c->v1beta1 ? preempt_v1b1 : fung_v1b2;
        get_enum(c, ff, "whenCanBorrow", "spec.flavorFungibility", bn, 3, 1, &v);
        cq->fungibility.when_can_borrow = v == 2 ? CU_FUNG_TRY_NEXT_FLAVOR : CU_FUNG_MAY_STOP_SEARCH;
        get_enum(c, ff, "whenCanPreempt", "spec.flavorFungibility", pn, 3, 2, &v);
        cq->fungibility.when_can_preempt = v == 2 ? CU_FUNG_TRY_NEXT_FLAVOR : CU_FUNG_MAY_STOP_SEARCH;
        get_enum(c, ff, "preference", "spec.flavorFungibility", prefs, 3, 0, &v);
        cq->fungibility.preference = (cu_fpref)v;
    }

    const cu_node *pr = want_map(c, cu_node_get(spec, "preemption"), "spec.preemption");
    if (pr) {
        get_enum(c, pr, "withinClusterQueue", "spec.preemption", within, 3, 0, &v);
        cq->preemption.within_cq = (cu_ppolicy)v;
        get_enum(c, pr, "reclaimWithinCohort", "spec.preemption", reclaim, 4, 0, &v);
        cq->preemption.reclaim = (cu_ppolicy)v;
        const cu_node *b = want_map(c, cu_node_get(pr, "borrowWithinCohort"),
                                    "spec.preemption.borrowWithinCohort");
        if (b) {
            get_enum(c, b, "policy", "spec.preemption.borrowWithinCohort", bwc, 2, 0, &v);
            cq->preemption.borrow_policy = (cu_ppolicy)v;
            cq->preemption.has_threshold =
                get_i32(c, b, "maxPriorityThreshold", "spec.preemption.borrowWithinCohort",
                        &cq->preemption.threshold);
        }
    }

    get_enum(c, spec, "stopPolicy", "spec", stop_names, 3, 0, &v);
    cq->stop_policy = (cu_stop)v;
    dec_fs_weight(c, spec, &cq->fs_weight);

    const cu_node *as = want_map(c, cu_node_get(spec, "admissionScope"), "spec.admissionScope");
    if (as) {
        get_enum(c, as, "admissionMode", "spec.admissionScope", afs, 2, 0, &v);
        cq->afs = v == 1;
    }
}

static void dec_cohort(dctx *c, const cu_node *root, cu_cohort *co)
{
    const cu_node *spec = want_map(c, cu_node_get(root, "spec"), "spec");
    co->parent = get_str(c, spec, "parentName", "spec");
    if (!co->parent && c->v1beta1)
        co->parent = get_str(c, spec, "parent", "spec");
    if (co->parent && !*co->parent)
        co->parent = NULL;
    dec_rgroups(c, spec, &co->groups);
    dec_fs_weight(c, spec, &co->fs_weight);
}

static void dec_lq(dctx *c, const cu_node *root, cu_local_queue *lq)
{
    int v;
    const cu_node *spec = want_map(c, cu_node_get(root, "spec"), "spec");
    lq->cluster_queue = get_str(c, spec, "clusterQueue", "spec");
    get_enum(c, spec, "stopPolicy", "spec", stop_names, 3, 0, &v);
    lq->stop_policy = (cu_stop)v;
    dec_fs_weight(c, spec, &lq->fs_weight);
}

/* Decodes the scheduling parts of a pod spec into ps (not count/name). */
static void dec_podspec(dctx *c, const cu_node *pspec, const char *path, cu_podset *ps)
{
    char where[PATHMAX + 700];
    if (c->who[0])
        snprintf(where, sizeof(where), "%s %s: %s", c->kind, c->who, path);
    else
        snprintf(where, sizeof(where), "%s: %s", c->kind, path);
    cu_err err = cu_pod_requests(c->a, pspec, where, &ps->requests, c->d);
    if (err == CU_ENOMEM)
        c->oom = 1;
    else if (err)
        c->nerr++;
    get_kvs(c, pspec, "nodeSelector", path, &ps->node_selector);
    dec_tolerations(c, pspec, "tolerations", path, &ps->ntols, &ps->tols);
    ps->priority_class_name = get_str(c, pspec, "priorityClassName", path);

    char p[PATHMAX];
    const cu_node *aff = want_map(c, cu_node_get(pspec, "affinity"), pj(p, path, "affinity"));
    const cu_node *na = want_map(c, cu_node_get(aff, "nodeAffinity"), pj(p, path, "affinity.nodeAffinity"));
    const cu_node *req = want_map(c, cu_node_get(na, "requiredDuringSchedulingIgnoredDuringExecution"),
                                  pj(p, path, "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"));
    char tp[PATHMAX];
    const cu_node *terms = want_seq(c, cu_node_get(req, "nodeSelectorTerms"), pj(tp, p, "nodeSelectorTerms"));
    if (!terms || terms->n == 0)
        return;
    ps->terms = dalloc(c, terms->n * sizeof(*ps->terms));
    if (!ps->terms)
        return;
    for (size_t i = 0; i < terms->n; i++) {
        char q[PATHMAX], e[PATHMAX];
        pj(q, tp, "[%zu]", i);
        const cu_node *t = want_map(c, terms->vals[i], q);
        cu_selterm *st = &ps->terms[ps->nterms++];
        if (!t)
            continue;
        const cu_node *ex = want_seq(c, cu_node_get(t, "matchExpressions"), pj(e, q, "matchExpressions"));
        dec_selreqs(c, ex, e, 1, &st->n, &st->reqs);
    }
}

/* spec.priorityClassRef (v1beta2) or priorityClassName/Source (v1beta1). */
static void dec_pc_ref(dctx *c, const cu_node *spec, cu_workload *wl)
{
    static const char *const groups[] = { CU_GROUP, "scheduling.k8s.io" };
    static const char *const kinds[] = { "WorkloadPriorityClass", "PriorityClass" };
    static const char *const sources[] = {
        "kueue.x-k8s.io/workloadpriorityclass", "scheduling.k8s.io/priorityclass", ""
    };
    int g = -1, k = -1;
    if (c->v1beta1) {
        const char *name = get_str(c, spec, "priorityClassName", "spec");
        int src;
        get_enum(c, spec, "priorityClassSource", "spec", sources, 3, 2, &src);
        if (!name || !*name)
            return;
        g = k = src == 0 ? 0 : 1;
        wl->pc_name = name;
    } else {
        const cu_node *ref = want_map(c, cu_node_get(spec, "priorityClassRef"), "spec.priorityClassRef");
        if (!ref)
            return;
        get_enum(c, ref, "group", "spec.priorityClassRef", groups, 2, -1, &g);
        get_enum(c, ref, "kind", "spec.priorityClassRef", kinds, 2, -1, &k);
        if (g < 0)
            g = k < 0 ? 0 : k;
        if (k < 0)
            k = g;
        wl->pc_name = get_str(c, ref, "name", "spec.priorityClassRef");
        if (!wl->pc_name || !*wl->pc_name) {
            ferr(c, "spec.priorityClassRef.name", "Required value");
            return;
        }
    }
    wl->pc_group = groups[g];
    wl->pc_kind = kinds[k];
}

static void dec_status(dctx *c, const cu_node *root, cu_workload *wl)
{
    const cu_node *st = want_map(c, cu_node_get(root, "status"), "status");
    const cu_node *adm = want_map(c, cu_node_get(st, "admission"), "status.admission");
    if (adm) {
        wl->has_admission = 1;
        wl->adm_cq = get_str(c, adm, "clusterQueue", "status.admission");
        const cu_node *ps = want_seq(c, cu_node_get(adm, "podSetAssignments"),
                                     "status.admission.podSetAssignments");
        if (ps && ps->n) {
            wl->psa = dalloc(c, ps->n * sizeof(*wl->psa));
            for (size_t i = 0; wl->psa && i < ps->n; i++) {
                char p[PATHMAX];
                pj(p, "status.admission.podSetAssignments", "[%zu]", i);
                const cu_node *a = want_map(c, ps->vals[i], p);
                if (!a)
                    continue;
                cu_psa *x = &wl->psa[wl->npsa++];
                x->name = get_str(c, a, "name", p);
                if (!x->name)
                    x->name = dstr(c, "main");
                /* count defaults to the pod set's count (older Kueue did not write it) */
                const cu_node *cnt = cu_node_get(a, "count");
                if (get_i32(c, a, "count", p, &x->count)) {
                    if (x->count < 0) {
                        char q[PATHMAX];
                        ferr(c, pj(q, p, "count"), "must be greater than or equal to 0");
                    }
                } else if (!cnt || cu_node_is_null(cnt)) {
                    x->count = 0;
                    for (size_t k = 0; x->name && k < wl->npodsets; k++)
                        if (strcmp(wl->podsets[k].name, x->name) == 0)
                            x->count = wl->podsets[k].count;
                }
                get_kvs(c, a, "flavors", p, &x->flavors);
                get_reslist(c, a, "resourceUsage", p, &x->usage);
            }
        }
    }
    const cu_node *cs = want_seq(c, cu_node_get(st, "conditions"), "status.conditions");
    if (cs && cs->n) {
        wl->conds = dalloc(c, cs->n * sizeof(*wl->conds));
        for (size_t i = 0; wl->conds && i < cs->n; i++) {
            char p[PATHMAX];
            pj(p, "status.conditions", "[%zu]", i);
            const cu_node *cn = want_map(c, cs->vals[i], p);
            if (!cn)
                continue;
            cu_condition *x = &wl->conds[wl->nconds++];
            x->type = get_str(c, cn, "type", p);
            x->status = get_str(c, cn, "status", p);
            x->reason = get_str(c, cn, "reason", p);
            x->message = get_str(c, cn, "message", p);
            if (!x->type) {
                char q[PATHMAX];
                ferr(c, pj(q, p, "type"), "Required value");
            }
            const cu_node *t = cu_node_get(cn, "lastTransitionTime");
            if (t && !cu_node_is_null(t) &&
                (t->type != CU_NODE_SCALAR || cu_time_parse(t->str, &x->ltt_ms) != CU_OK)) {
                char q[PATHMAX];
                ferr(c, pj(q, p, "lastTransitionTime"), "invalid time \"%s\"",
                     t->type == CU_NODE_SCALAR ? t->str : "");
            }
        }
    }
}

static void dec_workload(dctx *c, const cu_node *root, cu_workload *wl)
{
    const cu_node *spec = want_map(c, cu_node_get(root, "spec"), "spec");
    wl->queue_name = get_str(c, spec, "queueName", "spec");
    wl->has_priority = get_i32(c, spec, "priority", "spec", &wl->priority);
    dec_pc_ref(c, spec, wl);
    wl->active = 1;
    get_bool(c, spec, "active", "spec", &wl->active);

    const cu_node *ps = want_seq(c, cu_node_get(spec, "podSets"), "spec.podSets");
    if (ps && ps->n) {
        wl->podsets = dalloc(c, ps->n * sizeof(*wl->podsets));
        for (size_t i = 0; wl->podsets && i < ps->n; i++) {
            char p[PATHMAX], q[PATHMAX];
            pj(p, "spec.podSets", "[%zu]", i);
            const cu_node *pn = want_map(c, ps->vals[i], p);
            if (!pn)
                continue;
            cu_podset *x = &wl->podsets[wl->npodsets++];
            x->name = get_str(c, pn, "name", p);
            if (!x->name)
                x->name = dstr(c, "main");
            x->count = 1;
            if (get_i32(c, pn, "count", p, &x->count) && x->count < 0)
                ferr(c, pj(q, p, "count"), "must be greater than or equal to 0");
            x->has_min = get_i32(c, pn, "minCount", p, &x->min_count);
            const cu_node *tmpl = want_map(c, cu_node_get(pn, "template"), pj(q, p, "template"));
            const cu_node *pspec = want_map(c, cu_node_get(tmpl, "spec"), pj(q, p, "template.spec"));
            dec_podspec(c, pspec, q, x);
        }
    }
    dec_status(c, root, wl);
}

static void dec_wpc(dctx *c, const cu_node *root, cu_wpc *x)
{
    get_i32(c, root, "value", "", &x->value);
    x->description = get_str(c, root, "description", "");
}

static void dec_pc(dctx *c, const cu_node *root, cu_priority_class *x)
{
    get_i32(c, root, "value", "", &x->value);
    get_bool(c, root, "globalDefault", "", &x->global_default);
}

/* Parses a Go duration ("168h", "1h30m", "1.5h", "300s", "250ms", "0")
 * as time.ParseDuration does, into milliseconds (sub-millisecond parts
 * are dropped). Returns 0, or -1 when s is not a duration or overflows. */
static int parse_go_duration(const char *s, int64_t *out_ms)
{
    static const struct { const char *unit; int64_t ns; } units[] = {
        { "ns", 1 }, { "us", 1000 }, { "\xc2\xb5s", 1000 }, { "\xce\xbcs", 1000 },
        { "ms", 1000000 }, { "s", INT64_C(1000000000) }, { "m", INT64_C(60000000000) },
        { "h", INT64_C(3600000000000) },
    };
    int neg = 0;
    if (*s == '-' || *s == '+')
        neg = *s++ == '-';
    if (strcmp(s, "0") == 0) {
        *out_ms = 0;
        return 0;
    }
    if (!*s)
        return -1;
    int64_t total = 0;   /* nanoseconds */
    while (*s) {
        int64_t whole = 0, frac = 0, scale = 1;
        int digits = 0;
        while (*s >= '0' && *s <= '9') {
            if (whole > (INT64_MAX - (*s - '0')) / 10)
                return -1;
            whole = whole * 10 + (*s - '0');
            s++;
            digits++;
        }
        if (*s == '.') {
            s++;
            while (*s >= '0' && *s <= '9') {
                if (scale <= INT64_MAX / 10 / 10) { /* keep 17 digits at most */
                    frac = frac * 10 + (*s - '0');
                    scale *= 10;
                }
                s++;
                digits++;
            }
        }
        if (digits == 0)
            return -1;
        size_t best = 0, bestlen = 0;
        for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
            size_t l = strlen(units[i].unit);
            if (l > bestlen && strncmp(s, units[i].unit, l) == 0) {
                best = i;
                bestlen = l;
            }
        }
        if (bestlen == 0)
            return -1;   /* missing or unknown unit */
        s += bestlen;
        int64_t u = units[best].ns;
        if (whole > INT64_MAX / u)
            return -1;
        int64_t v = whole * u;
        if (frac) {
            double f = (double)frac * ((double)u / (double)scale);
            if (f >= (double)(INT64_MAX - v))
                return -1;
            v += (int64_t)f;
        }
        if (v > INT64_MAX - total)
            return -1;
        total += v;
    }
    *out_ms = (neg ? -total : total) / 1000000;
    return 0;
}

/* A metav1.Duration field (a Go duration string) in milliseconds; returns
 * 1 when present and valid (and not negative). */
static int get_duration(dctx *c, const cu_node *map, const char *key, const char *base,
                        int64_t *out_ms)
{
    const cu_node *n = cu_node_get(map, key);
    char p[PATHMAX];
    if (!n || cu_node_is_null(n))
        return 0;
    pj(p, base, "%s", key);
    if (n->type != CU_NODE_SCALAR) {
        ferr(c, p, "must be a duration string such as \"5m\" or \"168h\"");
        return 0;
    }
    int64_t ms;
    if (parse_go_duration(n->str, &ms) != 0) {
        ferr(c, p, "invalid duration \"%s\" (use Go duration syntax such as \"168h\", "
                   "\"1h30m\" or \"300s\")", n->str);
        return 0;
    }
    if (ms < 0) {
        ferr(c, p, "must not be negative, got \"%s\"", n->str);
        return 0;
    }
    *out_ms = ms;
    return 1;
}

static const char *const fs_strategy_names[] = {
    [CU_FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE] = "LessThanOrEqualToFinalShare",
    [CU_FS_LESS_THAN_INITIAL_SHARE] = "LessThanInitialShare",
};

/* fairSharing.preemptionStrategies: each value known, and the list one of
 * Kueue's allowed combinations. An empty or absent list keeps the
 * default (nstrategies 0). */
static void dec_fs_strategies(dctx *c, const cu_node *fs, cu_config *x)
{
    const char *path = "fairSharing.preemptionStrategies";
    const cu_node *seq = want_seq(c, cu_node_get(fs, "preemptionStrategies"), path);
    if (!seq || seq->n == 0)
        return;
    int vals[8];
    size_t n = 0;
    int bad = 0;
    for (size_t i = 0; i < seq->n; i++) {
        char p[PATHMAX];
        const cu_node *v = seq->vals[i];
        pj(p, path, "[%zu]", i);
        if (v->type != CU_NODE_SCALAR || cu_node_is_null(v)) {
            ferr(c, p, "must be a string");
            bad = 1;
            continue;
        }
        int k = -1;
        for (int s = 0; s < 2; s++)
            if (strcmp(v->str, fs_strategy_names[s]) == 0)
                k = s;
        if (k < 0) {
            ferr(c, p, "Unsupported value: \"%s\": supported values: \"%s\", \"%s\"", v->str,
                 fs_strategy_names[0], fs_strategy_names[1]);
            bad = 1;
            continue;
        }
        if (n < sizeof(vals) / sizeof(vals[0]))
            vals[n] = k;
        n++;
    }
    if (bad)
        return;
    int ok = (n == 1) ||
             (n == 2 && vals[0] == CU_FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE &&
              vals[1] == CU_FS_LESS_THAN_INITIAL_SHARE);
    if (!ok) {
        ferr(c, path, "Invalid value: allowed lists are [%s], [%s] and [%s, %s]",
             fs_strategy_names[0], fs_strategy_names[1], fs_strategy_names[0],
             fs_strategy_names[1]);
        return;
    }
    x->nstrategies = n;
    for (size_t i = 0; i < n; i++)
        x->strategies[i] = (cu_fs_strategy)vals[i];
}

/* admissionFairSharing {usageHalfLifeTime, usageSamplingInterval,
 * resourceWeights}. */
static void dec_afs(dctx *c, const cu_node *afs, cu_config *x)
{
    const char *base = "admissionFairSharing";
    x->afs = 1;
    x->afs_sampling_ms = 5 * 60 * 1000;
    get_duration(c, afs, "usageHalfLifeTime", base, &x->afs_half_life_ms);
    int64_t si = 0;
    if (get_duration(c, afs, "usageSamplingInterval", base, &si) && si > 0)
        x->afs_sampling_ms = si;   /* 0 keeps the default, as Kueue's defaulting */
    const cu_node *rw = want_map(c, cu_node_get(afs, "resourceWeights"),
                                 "admissionFairSharing.resourceWeights");
    if (!rw || rw->n == 0)
        return;
    x->afs_weights.items = dalloc(c, rw->n * sizeof(*x->afs_weights.items));
    if (!x->afs_weights.items)
        return;
    for (size_t i = 0; i < rw->n; i++) {
        char p[PATHMAX];
        int64_t v;
        pj(p, "admissionFairSharing.resourceWeights", "%s", rw->keys[i]);
        if (!node_qty(c, rw->vals[i], p, &v))
            continue;
        if (v < 0) {
            ferr(c, p, "must be greater than or equal to 0");
            continue;
        }
        cu_res *r = &x->afs_weights.items[x->afs_weights.n++];
        r->name = dstr(c, rw->keys[i]);
        r->milli = v;
    }
    if (x->afs_weights.n > 1)
        qsort(x->afs_weights.items, x->afs_weights.n, sizeof(cu_res), res_cmp);
}

/* ---- the rest of the controller Configuration ---- */

/* Warns about keys of map that are not in known (NULL-terminated): Kueue
 * reads its file strictly, so a misspelt field must not pass silently. */
static void warn_unknown(dctx *c, const cu_node *map, const char *base,
                         const char *const *known)
{
    if (!map || map->type != CU_NODE_MAP)
        return;
    for (size_t i = 0; i < map->n; i++) {
        size_t k = 0;
        while (known[k] && strcmp(known[k], map->keys[i]) != 0)
            k++;
        if (known[k])
            continue;
        char p[PATHMAX];
        pj(p, base, "%s", map->keys[i]);
        if (c->who[0])
            cu_diag_warn(c->d, "%s %s: %s: unknown field, ignored", c->kind, c->who, p);
        else
            cu_diag_warn(c->d, "%s: %s: unknown field, ignored", c->kind, p);
    }
}

/* A float field (a plain number); returns 1 when present and valid. */
static int get_float(dctx *c, const cu_node *map, const char *key, const char *base,
                     double *out)
{
    const cu_node *n = cu_node_get(map, key);
    char p[PATHMAX];
    if (!n || cu_node_is_null(n))
        return 0;
    pj(p, base, "%s", key);
    char *end = NULL;
    double v = 0;
    if (n->type == CU_NODE_SCALAR && n->plain && n->str[0]) {
        errno = 0;
        v = strtod(n->str, &end);
    }
    if (!end || *end || errno == ERANGE || !isfinite(v)) {
        if (n->type == CU_NODE_SCALAR)
            ferr(c, p, "must be a number, got \"%s\"", n->str);
        else
            ferr(c, p, "must be a number");
        return 0;
    }
    *out = v;
    return 1;
}

/* RFC 1123 label: what a namespace name must be. */
static int dns_label_ok(const char *s)
{
    size_t n = strlen(s);
    return n <= 63 && cu_dns1123_label_ok(s, n);
}

/* "HOST:PORT" as Go's net.Listen takes it (HOST may be empty, a name, an
 * IPv4 address or a bracketed IPv6 one), or "0". */
static int bind_addr_ok(const char *s)
{
    if (strcmp(s, "0") == 0)
        return 1;
    const char *colon = strrchr(s, ':');
    if (!colon || !colon[1])
        return 0;
    long port = 0;
    for (const char *q = colon + 1; *q; q++) {
        if (*q < '0' || *q > '9')
            return 0;
        port = port * 10 + (*q - '0');
        if (port > 65535)
            return 0;
    }
    size_t hl = (size_t)(colon - s);
    if (hl > 0 && s[0] == '[')
        return hl >= 2 && s[hl - 1] == ']';
    return memchr(s, ':', hl) == NULL;   /* a bare IPv6 host needs brackets */
}

static void get_bind_addr(dctx *c, const cu_node *map, const char *key, const char *base,
                          const char **out, int *has)
{
    char p[PATHMAX];
    const char *v = get_str(c, map, key, base);
    if (!v || !*v)
        return;   /* "" means the default, as in Kueue */
    if (!bind_addr_ok(v)) {
        ferr(c, pj(p, base, "%s", key),
             "must be HOST:PORT such as \":8443\", or \"0\" to disable, got \"%s\"", v);
        return;
    }
    *out = v;
    *has = 1;
}

/* A Go duration where 0 means "the default"; returns 1 when set (> 0). */
static int get_duration_nz(dctx *c, const cu_node *map, const char *key, const char *base,
                           int64_t *out_ms)
{
    int64_t v = 0;
    if (!get_duration(c, map, key, base, &v) || v == 0)
        return 0;
    *out_ms = v;
    return 1;
}

/* Formats ms as a short Go-style duration ("1h30m", "2.5s", "0s"). */
static const char *fmt_ms(char *buf, size_t n, int64_t ms)
{
    int64_t h = ms / 3600000, m = ms / 60000 % 60, s = ms / 1000 % 60, r = ms % 1000;
    size_t len = 0;
    buf[0] = '\0';
    if (h)
        len += (size_t)snprintf(buf + len, n - len, "%lldh", (long long)h);
    if (m && len < n)
        len += (size_t)snprintf(buf + len, n - len, "%lldm", (long long)m);
    if ((s || r || len == 0) && len < n) {
        if (r)
            snprintf(buf + len, n - len, "%lld.%03llds", (long long)s, (long long)r);
        else
            snprintf(buf + len, n - len, "%llds", (long long)s);
    }
    return buf;
}

/* The managed-jobs selector default: kubernetes.io/metadata.name NotIn
 * [kube-system, ns]. */
static cu_err default_ns_selector(cu_arena *a, const char *ns, cu_labelsel *out)
{
    memset(out, 0, sizeof(*out));
    cu_selreq *r = cu_arena_alloc(a, sizeof(*r));
    const char **vals = cu_arena_alloc(a, 2 * sizeof(*vals));
    if (!r || !vals)
        return CU_ENOMEM;
    vals[0] = "kube-system";
    vals[1] = ns;
    r->key = "kubernetes.io/metadata.name";
    r->op = CU_SEL_NOTIN;
    r->values.n = strcmp(ns, "kube-system") == 0 ? 1 : 2;
    r->values.items = vals;
    out->nexpr = 1;
    out->exprs = r;
    return CU_OK;
}

static const char *const kueue_frameworks[] = {
    "batch/job", "kubeflow.org/mpijob", "kubeflow.org/pytorchjob", "kubeflow.org/tfjob",
    "kubeflow.org/xgboostjob", "kubeflow.org/paddlejob", "kubeflow.org/jaxjob",
    "trainer.kubeflow.org/trainjob", "ray.io/rayjob", "ray.io/raycluster", "ray.io/rayservice",
    "jobset.x-k8s.io/jobset", "workload.codeflare.dev/appwrapper",
    "sparkoperator.k8s.io/sparkapplication", "pod", "deployment", "statefulset",
    "leaderworkerset.x-k8s.io/leaderworkerset", NULL,
};

static const char *const default_frameworks[] = { "batch/job" };

/* Everything but the fair-sharing parts and the selector (which depends
 * on the namespace). */
static void config_defaults(cu_config *x, int v1beta1)
{
    x->v1beta1 = v1beta1;
    x->ns = CU_CONFIG_DEFAULT_NAMESPACE;
    x->pods_ready.timeout_ms = (v1beta1 ? 5 : 30) * 60 * 1000;
    x->pods_ready.recovery_enabled = 1;
    x->pods_ready.recovery_timeout_ms = x->pods_ready.timeout_ms;
    x->pods_ready.requeue_timestamp = CU_REQUEUE_EVICTION;
    x->pods_ready.backoff_limit_count = -1;
    x->pods_ready.backoff_base_s = 60;
    x->pods_ready.backoff_max_s = 3600;
    x->frameworks.n = 1;
    /* read-only: cu_strs is not const-qualified, nothing writes through it */
    x->frameworks.items = (const char **)default_frameworks;
    x->client.qps = CU_CONFIG_DEFAULT_QPS;
    x->client.burst = CU_CONFIG_DEFAULT_BURST;
    x->leader_election.leader_elect = 1;
    x->leader_election.resource_name = CU_CONFIG_DEFAULT_LEASE_NAME;
    x->leader_election.lease_duration_ms = 15000;
    x->leader_election.renew_deadline_ms = 10000;
    x->leader_election.retry_period_ms = 2000;
    x->metrics_bind_address = CU_CONFIG_DEFAULT_METRICS_ADDR;
    x->health_bind_address = CU_CONFIG_DEFAULT_HEALTH_ADDR;
}

cu_err cu_config_init_defaults(cu_config *x, cu_arena *a)
{
    memset(x, 0, sizeof(*x));
    config_defaults(x, 0);
    x->leader_election.resource_namespace = x->ns;
    return default_ns_selector(a, x->ns, &x->managed_ns_selector);
}

int cu_config_framework_enabled(const cu_config *cfg, const char *name)
{
    if (!name)
        return 0;
    if (!cfg)
        return strcmp(name, default_frameworks[0]) == 0;
    return strs_has(&cfg->frameworks, name);
}

int cu_config_manages_unlabelled(const cu_config *cfg, const cu_kvs *ns_labels)
{
    return cfg && cfg->manage_jobs_without_queue_name &&
           cu_labelsel_matches(&cfg->managed_ns_selector, ns_labels);
}

static void dec_pods_ready(dctx *c, const cu_node *root, cu_config *x)
{
    static const char *const known[] = {
        "enable", "timeout", "blockAdmission", "requeuingStrategy", "recoveryTimeout",
        NULL,
    };
    static const char *const known_rs[] = {
        "timestamp", "backoffLimitCount", "backoffBaseSeconds", "backoffMaxSeconds", NULL,
    };
    static const char *const ts_names[] = {
        [CU_REQUEUE_EVICTION] = "Eviction", [CU_REQUEUE_CREATION] = "Creation",
    };
    const char *base = "waitForPodsReady";
    const cu_node *w = want_map(c, cu_node_get(root, base), base);
    if (!w)
        return;
    warn_unknown(c, w, base, known);
    x->pods_ready.present = 1;
    if (c->v1beta1) {
        get_bool(c, w, "enable", base, &x->pods_ready.enabled);
        x->pods_ready.block_admission = x->pods_ready.enabled;
    } else {
        x->pods_ready.enabled = 1;
        if (cu_node_get(w, "enable"))
            ferr(c, "waitForPodsReady.enable", "not a v1beta2 field: the waitForPodsReady "
                 "block's presence enables it (remove the block to disable it)");
    }
    get_duration_nz(c, w, "timeout", base, &x->pods_ready.timeout_ms);
    get_bool(c, w, "blockAdmission", base, &x->pods_ready.block_admission);
    int64_t rt = 0;
    if (get_duration(c, w, "recoveryTimeout", base, &rt)) {
        x->pods_ready.recovery_enabled = rt > 0;
        x->pods_ready.recovery_timeout_ms = rt;
    } else {
        x->pods_ready.recovery_timeout_ms = x->pods_ready.timeout_ms;
    }

    const char *rbase = "waitForPodsReady.requeuingStrategy";
    const cu_node *rs = want_map(c, cu_node_get(w, "requeuingStrategy"), rbase);
    if (!rs)
        return;
    warn_unknown(c, rs, rbase, known_rs);
    int ts;
    get_enum(c, rs, "timestamp", rbase, ts_names, 2, CU_REQUEUE_EVICTION, &ts);
    x->pods_ready.requeue_timestamp = (cu_requeue_ts)ts;
    int32_t v;
    char p[PATHMAX];
    if (get_i32(c, rs, "backoffLimitCount", rbase, &v)) {
        if (v < 0)
            ferr(c, pj(p, rbase, "backoffLimitCount"),
                 "must be greater than or equal to 0 (leave it out to requeue forever), got %d",
                 (int)v);
        else
            x->pods_ready.backoff_limit_count = v;
    }
    int base_ok = 1, max_ok = 1;
    if (get_i32(c, rs, "backoffBaseSeconds", rbase, &v)) {
        if (v < 0) {
            ferr(c, pj(p, rbase, "backoffBaseSeconds"),
                 "must be greater than or equal to 0, got %d", (int)v);
            base_ok = 0;
        } else {
            x->pods_ready.backoff_base_s = v;
        }
    } else if (cu_node_get(rs, "backoffBaseSeconds") &&
               !cu_node_is_null(cu_node_get(rs, "backoffBaseSeconds"))) {
        base_ok = 0;
    }
    if (get_i32(c, rs, "backoffMaxSeconds", rbase, &v)) {
        if (v < 0) {
            ferr(c, pj(p, rbase, "backoffMaxSeconds"),
                 "must be greater than or equal to 0, got %d", (int)v);
            max_ok = 0;
        } else {
            x->pods_ready.backoff_max_s = v;
        }
    } else if (cu_node_get(rs, "backoffMaxSeconds") &&
               !cu_node_is_null(cu_node_get(rs, "backoffMaxSeconds"))) {
        max_ok = 0;
    }
    if (base_ok && max_ok && x->pods_ready.backoff_max_s < x->pods_ready.backoff_base_s)
        ferr(c, pj(p, rbase, "backoffMaxSeconds"),
             "must be greater than or equal to backoffBaseSeconds (%d), got %d",
             (int)x->pods_ready.backoff_base_s, (int)x->pods_ready.backoff_max_s);
}

/* A list of framework names: duplicates are errors; names Cueue does not
 * integrate (and names Kueue does not know) are recorded for a warning. */
static void dec_frameworks(dctx *c, const cu_node *integ, cu_config *x)
{
    const char *path = "integrations.frameworks";
    cu_strs fw = { 0, NULL };
    get_strs(c, integ, "frameworks", "integrations", &fw);
    if (fw.n == 0)
        return;   /* default ["batch/job"] */
    const char **uns = dalloc(c, fw.n * sizeof(*uns));
    const char **unk = dalloc(c, fw.n * sizeof(*unk));
    if (!uns || !unk)
        return;
    for (size_t i = 0; i < fw.n; i++) {
        int dup = 0;
        for (size_t j = 0; j < i; j++)
            dup |= strcmp(fw.items[i], fw.items[j]) == 0;
        if (dup) {
            char p[PATHMAX];
            ferr(c, pj(p, path, "[%zu]", i), "Duplicate value: \"%s\"", fw.items[i]);
            continue;
        }
        if (strcmp(fw.items[i], "batch/job") == 0)
            continue;
        uns[x->unsupported_frameworks.n++] = fw.items[i];
        size_t k = 0;
        while (kueue_frameworks[k] && strcmp(kueue_frameworks[k], fw.items[i]) != 0)
            k++;
        if (!kueue_frameworks[k])
            unk[x->unknown_frameworks.n++] = fw.items[i];
    }
    x->frameworks = fw;
    x->unsupported_frameworks.items = uns;
    x->unknown_frameworks.items = unk;
}

/* managedJobsNamespaceSelector: a metav1.LabelSelector checked as the API
 * server checks one, that must not select kube-system nor Kueue's own
 * namespace (Kueue's rule). */
static void dec_managed_ns_selector(dctx *c, const cu_node *root, cu_config *x)
{
    const char *path = "managedJobsNamespaceSelector";
    cu_labelsel sel;
    int nerr = c->nerr;
    dec_labelsel(c, root, path, "", &sel);
    if (sel.is_null) {
        if (default_ns_selector(c->a, x->ns, &x->managed_ns_selector) != CU_OK)
            c->oom = 1;
        return;
    }
    for (size_t i = 0; i < sel.nexpr; i++) {
        const cu_selreq *r = &sel.exprs[i];
        char p[PATHMAX];
        pj(p, path, "matchExpressions[%zu].values", i);
        if ((r->op == CU_SEL_IN || r->op == CU_SEL_NOTIN) && r->values.n == 0)
            ferr(c, p, "Required value: must be specified when `operator` is 'In' or 'NotIn'");
        if ((r->op == CU_SEL_EXISTS || r->op == CU_SEL_DOESNOTEXIST) && r->values.n > 0)
            ferr(c, p, "Forbidden: may not be specified when `operator` is 'Exists' or "
                       "'DoesNotExist'");
    }
    x->managed_ns_selector = sel;
    x->has_managed_ns_selector = 1;
    if (c->nerr != nerr)
        return;
    const char *prohibited[2] = { "kube-system", x->ns };
    for (size_t i = 0; i < 2; i++) {
        if (i == 1 && strcmp(x->ns, "kube-system") == 0)
            break;
        cu_kv kv = { "kubernetes.io/metadata.name", prohibited[i] };
        cu_kvs labels = { 1, &kv };
        if (cu_labelsel_matches(&sel, &labels))
            ferr(c, path, "Invalid value: should not match the \"%s\" namespace", prohibited[i]);
    }
}

static void dec_client_connection(dctx *c, const cu_node *root, cu_config *x)
{
    static const char *const known[] = { "qps", "burst", NULL };
    const char *base = "clientConnection";
    const cu_node *cc = want_map(c, cu_node_get(root, base), base);
    if (!cc)
        return;
    warn_unknown(c, cc, base, known);
    x->client.has_qps = get_float(c, cc, "qps", base, &x->client.qps);
    x->client.has_burst = get_i32(c, cc, "burst", base, &x->client.burst);
    if (x->client.has_qps && x->client.has_burst && x->client.qps > 0 && x->client.burst < 1)
        ferr(c, "clientConnection.burst", "must be at least 1 when qps is positive, got %d",
             (int)x->client.burst);
}

static void dec_leader_election(dctx *c, const cu_node *root, cu_config *x)
{
    static const char *const known[] = {
        "leaderElect", "leaseDuration", "renewDeadline", "retryPeriod", "resourceLock",
        "resourceName", "resourceNamespace", NULL,
    };
    static const char *const locks[] = { "leases" };
    const char *base = "leaderElection";
    const cu_node *le = want_map(c, cu_node_get(root, base), base);
    x->leader_election.resource_namespace = x->ns;
    if (!le)
        return;
    warn_unknown(c, le, base, known);
    int v = -1;
    get_bool(c, le, "leaderElect", base, &v);
    if (v >= 0) {
        x->leader_election.has_leader_elect = 1;
        x->leader_election.leader_elect = v;
    }
    const char *s = get_str(c, le, "resourceName", base);
    if (s && *s)
        x->leader_election.resource_name = s;
    s = get_str(c, le, "resourceNamespace", base);
    if (s && *s) {
        if (!dns_label_ok(s))
            ferr(c, "leaderElection.resourceNamespace",
                 "must be a valid namespace name (RFC 1123 label), got \"%s\"", s);
        x->leader_election.resource_namespace = s;
    }
    int lk;
    get_enum(c, le, "resourceLock", base, locks, 1, 0, &lk);

    int nerr = c->nerr;
    x->leader_election.has_lease_duration =
        get_duration_nz(c, le, "leaseDuration", base, &x->leader_election.lease_duration_ms);
    x->leader_election.has_renew_deadline =
        get_duration_nz(c, le, "renewDeadline", base, &x->leader_election.renew_deadline_ms);
    x->leader_election.has_retry_period =
        get_duration_nz(c, le, "retryPeriod", base, &x->leader_election.retry_period_ms);
    if (c->nerr != nerr)
        return;
    int64_t lease = x->leader_election.lease_duration_ms;
    int64_t renew = x->leader_election.renew_deadline_ms;
    int64_t retry = x->leader_election.retry_period_ms;
    char a[32], b[32];
    if (renew >= lease)
        ferr(c, "leaderElection.renewDeadline",
             "must be less than leaseDuration (%s), got %s", fmt_ms(a, sizeof a, lease),
             fmt_ms(b, sizeof b, renew));
    /* client-go: renewDeadline > JitterFactor (1.2) * retryPeriod */
    if (renew * 10 <= retry * 12)
        ferr(c, "leaderElection.retryPeriod",
             "must be less than renewDeadline (%s) / 1.2, as client-go requires, got %s",
             fmt_ms(a, sizeof a, renew), fmt_ms(b, sizeof b, retry));
}

/* The controller's fields of a Configuration (after fair sharing). */
static void dec_config_controller(dctx *c, const cu_node *root, cu_config *x)
{
    static const char *const known[] = {
        "apiVersion", "kind", "metadata", "namespace", "manageJobsWithoutQueueName",
        "managedJobsNamespaceSelector", "internalCertManagement", "waitForPodsReady",
        "clientConnection", "integrations", "multiKueue", "fairSharing",
        "admissionFairSharing", "resources", "featureGates", "objectRetentionPolicies",
        "webhook", "leaderElection", "metrics", "health", "pprofBindAddress", "controller",
        "tls", "visibilityServer", "queueVisibility", NULL,
    };
    static const char *const known_integ[] = {
        "frameworks", "externalFrameworks", "labelKeysToCopy", "podOptions", NULL,
    };
    static const char *const known_res[] = {
        "excludeResourcePrefixes", "transformations", "quotaCheckStrategy",
        "deviceClassMappings", NULL,
    };
    static const char *const known_metrics[] = {
        "bindAddress", "enableClusterQueueResources", "customLabels", "localQueueMetrics", NULL,
    };
    static const char *const known_health[] = {
        "healthProbeBindAddress", "readinessEndpointName", "livenessEndpointName", NULL,
    };
    config_defaults(x, c->v1beta1);
    warn_unknown(c, root, "", known);

    const char *ns = get_str(c, root, "namespace", "");
    if (ns) {
        if (dns_label_ok(ns)) {
            x->ns = ns;
            x->has_ns = 1;
        }
        else
            ferr(c, "namespace", "must be a valid namespace name (RFC 1123 label), got \"%s\"",
                 ns);
    }
    dec_managed_ns_selector(c, root, x);
    dec_pods_ready(c, root, x);

    const cu_node *integ = want_map(c, cu_node_get(root, "integrations"), "integrations");
    warn_unknown(c, integ, "integrations", known_integ);
    dec_frameworks(c, integ, x);
    get_strs(c, integ, "labelKeysToCopy", "integrations", &x->label_keys_to_copy);

    const cu_node *res = want_map(c, cu_node_get(root, "resources"), "resources");
    warn_unknown(c, res, "resources", known_res);
    get_strs(c, res, "excludeResourcePrefixes", "resources", &x->exclude_resource_prefixes);

    dec_client_connection(c, root, x);
    dec_leader_election(c, root, x);

    const cu_node *m = want_map(c, cu_node_get(root, "metrics"), "metrics");
    warn_unknown(c, m, "metrics", known_metrics);
    get_bind_addr(c, m, "bindAddress", "metrics", &x->metrics_bind_address,
                  &x->has_metrics_bind_address);
    const cu_node *h = want_map(c, cu_node_get(root, "health"), "health");
    warn_unknown(c, h, "health", known_health);
    get_bind_addr(c, h, "healthProbeBindAddress", "health", &x->health_bind_address,
                  &x->has_health_bind_address);
}

/* The controller Configuration. It usually has no metadata.name, so
 * messages name the file it came from. */
static void dec_config(dctx *c, const cu_node *root, cu_config *x)
{
    if (c->who[0]) {
        char tmp[sizeof(c->who)];
        snprintf(tmp, sizeof(tmp), "%s", c->who);
        snprintf(c->who, sizeof(c->who), "%.200s (%.390s)", tmp, c->file ? c->file : "<input>");
    } else {
        snprintf(c->who, sizeof(c->who), "%.590s", c->file ? c->file : "<input>");
    }
    const cu_node *fs = want_map(c, cu_node_get(root, "fairSharing"), "fairSharing");
    if (fs) {
        if (c->v1beta1)
            get_bool(c, fs, "enable", "fairSharing", &x->fair_sharing);
        else
            x->fair_sharing = 1;   /* v1beta2: the block's presence enables it */
        dec_fs_strategies(c, fs, x);
    }
    const cu_node *afs = want_map(c, cu_node_get(root, "admissionFairSharing"),
                                  "admissionFairSharing");
    if (afs)
        dec_afs(c, afs, x);
    get_bool(c, root, "manageJobsWithoutQueueName", "", &x->manage_jobs_without_queue_name);
    dec_config_controller(c, root, x);
}

/* A batch/v1 Job with the queue-name label, as the Workload Kueue would
 * create for it. */
static void dec_job(dctx *c, const cu_node *root, const cu_meta *jm, cu_workload *wl)
{
    char q[PATHMAX];
    wl->meta = *jm;
    wl->meta.name = cu_job_workload_name(c->a, jm->name, jm->uid);
    if (!wl->meta.name)
        c->oom = 1;
    wl->job_name = jm->name;
    wl->queue_name = cu_kvs_get(&jm->labels, CU_LABEL_QUEUE_NAME);
    wl->active = 1;

    const cu_node *spec = want_map(c, cu_node_get(root, "spec"), "spec");
    int32_t par = 1, comp = 0;
    if (get_i32(c, spec, "parallelism", "spec", &par) && par < 0)
        ferr(c, "spec.parallelism", "must be greater than or equal to 0");
    if (!get_i32(c, spec, "completions", "spec", &comp))
        comp = par;
    else if (comp < 0)
        ferr(c, "spec.completions", "must be greater than or equal to 0");

    wl->podsets = dalloc(c, sizeof(*wl->podsets));
    if (!wl->podsets)
        return;
    wl->npodsets = 1;
    cu_podset *ps = &wl->podsets[0];
    ps->name = dstr(c, "main");
    ps->count = par < comp ? par : comp;

    const char *mp = cu_kvs_get(&jm->annotations, CU_ANN_JOB_MIN_PARALLELISM);
    if (mp) {
        char *end;
        errno = 0;
        long v = strtol(mp, &end, 10);
        if (errno || end == mp || *end || v < 1 || v > ps->count)
            ferr(c, "metadata.annotations[" CU_ANN_JOB_MIN_PARALLELISM "]",
                 "must be an integer between 1 and %d, got \"%s\"", (int)ps->count, mp);
        else {
            ps->has_min = 1;
            ps->min_count = (int32_t)v;
        }
    }

    const cu_node *tmpl = want_map(c, cu_node_get(spec, "template"), "spec.template");
    const cu_node *pspec = want_map(c, cu_node_get(tmpl, "spec"), "spec.template.spec");
    dec_podspec(c, pspec, "spec.template.spec", ps);

    const char *wpc = cu_kvs_get(&jm->labels, CU_LABEL_PRIORITY_CLASS);
    if (wpc && *wpc) {
        wl->pc_group = CU_GROUP;
        wl->pc_kind = "WorkloadPriorityClass";
        wl->pc_name = wpc;
    } else if (ps->priority_class_name && *ps->priority_class_name) {
        wl->pc_group = "scheduling.k8s.io";
        wl->pc_kind = "PriorityClass";
        wl->pc_name = ps->priority_class_name;
    }

    /* A finished Job (Complete/Failed=True) finishes its Workload. */
    const cu_node *conds = want_seq(c, cu_node_path(root, "status.conditions"), "status.conditions");
    for (size_t i = 0; conds && i < conds->n; i++) {
        const char *t = cu_node_scalar(cu_node_get(conds->vals[i], "type"));
        const char *s = cu_node_scalar(cu_node_get(conds->vals[i], "status"));
        if (!t || !s || strcmp(s, "True") != 0)
            continue;
        if (strcmp(t, "Complete") != 0 && strcmp(t, "Failed") != 0)
            continue;
        wl->conds = dalloc(c, sizeof(*wl->conds));
        if (!wl->conds)
            return;
        wl->nconds = 1;
        wl->conds[0].type = "Finished";
        wl->conds[0].status = "True";
        wl->conds[0].reason = strcmp(t, "Complete") == 0 ? "Succeeded" : "Failed";
        wl->conds[0].message = dstr(c, cu_node_scalar(cu_node_get(conds->vals[i], "message")));
        const char *ltt = cu_node_scalar(cu_node_get(conds->vals[i], "lastTransitionTime"));
        if (ltt && cu_time_parse(ltt, &wl->conds[0].ltt_ms) != CU_OK)
            ferr(c, pj(q, "status.conditions", "[%zu].lastTransitionTime", i), "invalid time \"%s\"", ltt);
        break;
    }
}

/* ------------------------------------------------------------------ */
/* dispatch                                                            */

typedef struct kindinfo {
    const char *group;   /* apiVersion group ("" for core) */
    const char *kind;
    cu_kind k;
    int namespaced;
} kindinfo;

static const kindinfo kinds[] = {
    { CU_GROUP, "ResourceFlavor", CU_KIND_RESOURCE_FLAVOR, 0 },
    { CU_GROUP, "ClusterQueue", CU_KIND_CLUSTER_QUEUE, 0 },
    { CU_GROUP, "Cohort", CU_KIND_COHORT, 0 },
    { CU_GROUP, "LocalQueue", CU_KIND_LOCAL_QUEUE, 1 },
    { CU_GROUP, "Workload", CU_KIND_WORKLOAD, 1 },
    { CU_GROUP, "WorkloadPriorityClass", CU_KIND_WORKLOAD_PRIORITY_CLASS, 0 },
    { "batch", "Job", CU_KIND_JOB, 1 },
    { "", "Namespace", CU_KIND_NAMESPACE, 0 },
    { "scheduling.k8s.io", "PriorityClass", CU_KIND_PRIORITY_CLASS, 0 },
    { "config.kueue.x-k8s.io", "Configuration", CU_KIND_CONFIGURATION, 0 },
};

/* Finds the kind for apiVersion/kind; sets *v1beta1 for the old kueue
 * versions. Returns NULL when unknown. */
static const kindinfo *find_kind(const char *api, const char *kind, int *v1beta1)
{
    const char *slash = strchr(api, '/');
    size_t glen = slash ? (size_t)(slash - api) : 0;
    const char *ver = slash ? slash + 1 : api;
    *v1beta1 = 0;
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        const kindinfo *ki = &kinds[i];
        if (strcmp(ki->kind, kind) != 0 || strlen(ki->group) != glen ||
            strncmp(ki->group, api, glen) != 0)
            continue;
        if (strcmp(ki->group, CU_GROUP) == 0 || strcmp(ki->group, "config.kueue.x-k8s.io") == 0) {
            if (strcmp(ver, "v1beta2") == 0)
                return ki;
            if (strcmp(ver, "v1beta1") == 0) {
                *v1beta1 = 1;
                return ki;
            }
            return NULL;
        }
        if (strcmp(ver, "v1") == 0)
            return ki;
        return NULL;
    }
    return NULL;
}

static int ends_with(const char *s, const char *sfx)
{
    size_t n = strlen(s), m = strlen(sfx);
    return n >= m && strcmp(s + n - m, sfx) == 0;
}

static cu_err decode_node(cu_world *w, const cu_node *root, const char *file, cu_diag *d, int depth);

static cu_err decode_object(cu_world *w, const cu_node *root, const char *file, cu_diag *d,
                            const kindinfo *ki, int v1beta1, const char *api, const char *name)
{
    dctx c;
    memset(&c, 0, sizeof(c));
    c.w = w;
    c.a = &w->arena;
    c.d = d;
    c.file = file;
    c.kind = ki->kind;
    c.v1beta1 = v1beta1;
    if (ki->namespaced) {
        const char *ns = cu_node_scalar(cu_node_path(root, "metadata.namespace"));
        snprintf(c.who, sizeof(c.who), "%s/%s", ns && *ns ? ns : "default", name);
    } else {
        snprintf(c.who, sizeof(c.who), "%s", name);
    }

    cu_meta meta;
    memset(&meta, 0, sizeof(meta));

    if (ki->k == CU_KIND_JOB) {
        const cu_node *md = cu_node_get(root, "metadata");
        const cu_node *labels = cu_node_get(md, "labels");
        const char *qn = cu_node_scalar(cu_node_get(labels, CU_LABEL_QUEUE_NAME));
        if (!qn || !*qn) {
            cu_diag_warn(d, "%s:%d: Job %s has no " CU_LABEL_QUEUE_NAME " label; not managed",
                         file, root->line, c.who);
            return CU_OK;
        }
    }
    dec_meta(&c, root, api, name, ki->namespaced, &meta);

    void *obj = NULL;
    int pushed = 0;
    switch (ki->k) {
    case CU_KIND_RESOURCE_FLAVOR: {
        cu_resource_flavor *x = dalloc(&c, sizeof(*x));
        if (!x)
            break;
        x->meta = meta;
        dec_flavor(&c, root, x);
        obj = x;
        if (!c.nerr && !c.oom)
            pushed = VEC_PUSH(w->flavors, x) == 0 ? 1 : -1;
        break;
    }
    case CU_KIND_CLUSTER_QUEUE: {
        cu_cluster_queue *x = dalloc(&c, sizeof(*x));
        if (!x)
            break;
        x->meta = meta;
        dec_cq(&c, root, x);
        obj = x;
        if (!c.nerr && !c.oom)
            pushed = VEC_PUSH(w->cqs, x) == 0 ? 1 : -1;
        break;
    }
    case CU_KIND_COHORT: {
        cu_cohort *x = dalloc(&c, sizeof(*x));
        if (!x)
            break;
        x->meta = meta;
        dec_cohort(&c, root, x);
        obj = x;
        if (!c.nerr && !c.oom)
            pushed = VEC_PUSH(w->cohorts, x) == 0 ? 1 : -1;
        break;
    }
    case CU_KIND_LOCAL_QUEUE: {
        cu_local_queue *x = dalloc(&c, sizeof(*x));
        if (!x)
            break;
        x->meta = meta;
        dec_lq(&c, root, x);
        obj = x;
        if (!c.nerr && !c.oom)
            pushed = VEC_PUSH(w->lqs, x) == 0 ? 1 : -1;
        break;
    }
    case CU_KIND_WORKLOAD: {
        cu_workload *x = dalloc(&c, sizeof(*x));
        if (!x)
            break;
        x->meta = meta;
        dec_workload(&c, root, x);
        obj = x;
        if (!c.nerr && !c.oom)
            pushed = VEC_PUSH(w->workloads, x) == 0 ? 1 : -1;
        break;
    }
    case CU_KIND_JOB: {
        cu_workload *x = dalloc(&c, sizeof(*x));
        if (!x)
            break;
        dec_job(&c, root, &meta, x);
        obj = x;
        if (!c.nerr && !c.oom)
            pushed = VEC_PUSH(w->workloads, x) == 0 ? 1 : -1;
        break;
    }
    case CU_KIND_WORKLOAD_PRIORITY_CLASS: {
        cu_wpc *x = dalloc(&c, sizeof(*x));
        if (!x)
            break;
        x->meta = meta;
        dec_wpc(&c, root, x);
        obj = x;
        if (!c.nerr && !c.oom)
            pushed = VEC_PUSH(w->wpcs, x) == 0 ? 1 : -1;
        break;
    }
    case CU_KIND_PRIORITY_CLASS: {
        cu_priority_class *x = dalloc(&c, sizeof(*x));
        if (!x)
            break;
        x->meta = meta;
        dec_pc(&c, root, x);
        obj = x;
        if (!c.nerr && !c.oom)
            pushed = VEC_PUSH(w->pcs, x) == 0 ? 1 : -1;
        break;
    }
    case CU_KIND_NAMESPACE: {
        cu_namespace *x = dalloc(&c, sizeof(*x));
        if (!x)
            break;
        x->meta = meta;
        obj = x;
        if (!c.nerr && !c.oom)
            pushed = VEC_PUSH(w->namespaces, x) == 0 ? 1 : -1;
        break;
    }
    case CU_KIND_CONFIGURATION: {
        cu_config *x = dalloc(&c, sizeof(*x));
        if (!x)
            break;
        x->meta = meta;
        dec_config(&c, root, x);
        obj = x;
        if (!c.nerr && !c.oom)
            pushed = VEC_PUSH(w->configs, x) == 0 ? 1 : -1;
        break;
    }
    case CU_KIND_UNKNOWN:
        break;
    }
    if (c.oom || pushed < 0 || !obj)
        return CU_ENOMEM;
    return c.nerr ? CU_EINVAL : CU_OK;
}

#define CU_LIST_DEPTH_MAX 8

/* Decodes one document node: a List (expanded), a known kind or an
 * unknown one (warned and skipped). */
static cu_err decode_node(cu_world *w, const cu_node *root, const char *file, cu_diag *d, int depth)
{
    if (!root)
        return CU_OK;
    if (root->type != CU_NODE_MAP) {
        cu_diag_error(d, "%s:%d: document is not a map (expected a Kubernetes object)",
                      file, root->line);
        return CU_EINVAL;
    }
    const cu_node *an = cu_node_get(root, "apiVersion");
    const cu_node *kn = cu_node_get(root, "kind");
    const char *api = cu_node_scalar(an), *kind = cu_node_scalar(kn);
    if (!api || an->type != CU_NODE_SCALAR) {
        cu_diag_error(d, "%s:%d: missing apiVersion", file, root->line);
        return CU_EINVAL;
    }
    if (!kind || kn->type != CU_NODE_SCALAR) {
        cu_diag_error(d, "%s:%d: missing kind", file, root->line);
        return CU_EINVAL;
    }

    if (ends_with(kind, "List")) {
        const cu_node *items = cu_node_get(root, "items");
        if (depth >= CU_LIST_DEPTH_MAX) {
            cu_diag_error(d, "%s:%d: %s nested too deeply", file, root->line, kind);
            return CU_EINVAL;
        }
        if (items && !cu_node_is_null(items) && items->type != CU_NODE_SEQ) {
            cu_diag_error(d, "%s:%d: %s: items: must be a list", file, root->line, kind);
            return CU_EINVAL;
        }
        cu_err ret = CU_OK;
        for (size_t i = 0; items && items->type == CU_NODE_SEQ && i < items->n; i++) {
            cu_err err = decode_node(w, items->vals[i], file, d, depth + 1);
            if (err == CU_ENOMEM)
                return err;
            if (err)
                ret = err;
        }
        return ret;
    }

    int v1beta1 = 0;
    const kindinfo *ki = find_kind(api, kind, &v1beta1);
    const cu_node *nn = cu_node_path(root, "metadata.name");
    const char *name = nn && nn->type == CU_NODE_SCALAR ? cu_node_scalar(nn) : NULL;
    if (!ki) {
        cu_diag_warn(d, "%s:%d: skipping unknown kind %s (apiVersion %s) %s", file, root->line,
                     kind, api, name ? name : "(unnamed)");
        return CU_OK;
    }
    if (!name || !*name) {
        /* the controller Configuration file usually has no metadata */
        if (ki->k != CU_KIND_CONFIGURATION) {
            cu_diag_error(d, "%s:%d: %s: missing metadata.name", file, root->line, kind);
            return CU_EINVAL;
        }
        name = "";
    }
    return decode_object(w, root, file, d, ki, v1beta1, api, name);
}

cu_err cu_world_decode(cu_world *w, const cu_doc *doc, cu_diag *d)
{
    if (!doc || !doc->root)
        return CU_OK;
    const char *file = cu_arena_strdup(&w->arena, doc->file ? doc->file : "<input>");
    if (!file)
        return CU_ENOMEM;
    return decode_node(w, doc->root, file, d, 0);
}

/* ------------------------------------------------------------------ */
/* loading                                                             */

static int has_doc_ext(const char *name)
{
    return ends_with(name, ".yaml") || ends_with(name, ".yml") || ends_with(name, ".json");
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

typedef struct loadctx {
    cu_world *w;
    cu_diag *d;
    cu_err result;       /* CU_EINVAL once any decode error happened */
} loadctx;

static cu_err load_file(loadctx *l, const char *path)
{
    cu_arena tmp;
    cu_doc *docs = NULL;
    size_t ndocs = 0;
    cu_arena_init(&tmp, 0);
    cu_err err = cu_doc_parse_file(path, &tmp, &docs, &ndocs, l->d);
    if (err) {
        cu_arena_free(&tmp);
        return err;
    }
    for (size_t i = 0; i < ndocs; i++) {
        cu_err e = cu_world_decode(l->w, &docs[i], l->d);
        if (e == CU_ENOMEM) {
            err = e;
            break;
        }
        if (e)
            l->result = CU_EINVAL;
    }
    cu_arena_free(&tmp);
    return err;
}

#define CU_DIR_DEPTH_MAX 32

static cu_err load_path(loadctx *l, const char *path, int explicit_arg, int depth)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        cu_diag_error(l->d, "%s: %s", path, strerror(errno));
        return CU_EIO;
    }
    if (!S_ISDIR(st.st_mode)) {
        if (!explicit_arg && !has_doc_ext(path))
            return CU_OK;
        return load_file(l, path);
    }
    if (depth >= CU_DIR_DEPTH_MAX) {
        cu_diag_error(l->d, "%s: folders nested too deeply", path);
        return CU_EIO;
    }
    DIR *dir = opendir(path);
    if (!dir) {
        cu_diag_error(l->d, "%s: %s", path, strerror(errno));
        return CU_EIO;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    cu_err err = CU_OK;
    struct dirent *de;
    while ((de = readdir(dir)) != NULL) {
        if (de->d_name[0] == '.')
            continue;   /* ".", "..", and hidden files */
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 32;
            char **p = realloc(names, nc * sizeof(*p));
            if (!p) {
                err = CU_ENOMEM;
                break;
            }
            names = p;
            cap = nc;
        }
        names[n] = strdup(de->d_name);
        if (!names[n]) {
            err = CU_ENOMEM;
            break;
        }
        n++;
    }
    closedir(dir);
    if (!err)
        qsort(names, n, sizeof(*names), name_cmp);
    for (size_t i = 0; i < n && !err; i++) {
        size_t len = strlen(path) + strlen(names[i]) + 2;
        char *full = malloc(len);
        if (!full) {
            err = CU_ENOMEM;
            break;
        }
        snprintf(full, len, "%s%s%s", path,
                 path[strlen(path) - 1] == '/' ? "" : "/", names[i]);
        err = load_path(l, full, 0, depth + 1);
        free(full);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    if (err == CU_ENOMEM)
        cu_diag_error(l->d, "%s: out of memory", path);
    return err;
}

cu_err cu_world_load(cu_world *w, const char *const *paths, size_t npaths, cu_diag *d)
{
    loadctx l = { w, d, CU_OK };
    for (size_t i = 0; i < npaths; i++) {
        cu_err err = load_path(&l, paths[i], 1, 0);
        if (err)
            return err;
    }
    return l.result;
}

/* ------------------------------------------------------------------ */
/* priority                                                            */

cu_err cu_workload_priority(const cu_world *w, const cu_workload *wl, int32_t *out, cu_diag *d)
{
    *out = 0;
    if (wl->has_priority) {
        *out = wl->priority;
        return CU_OK;
    }
    if (wl->pc_name) {
        int is_wpc = wl->pc_kind && strcmp(wl->pc_kind, "WorkloadPriorityClass") == 0;
        if (is_wpc) {
            for (size_t i = 0; i < w->wpcs.n; i++)
                if (strcmp(w->wpcs.items[i]->meta.name, wl->pc_name) == 0) {
                    *out = w->wpcs.items[i]->value;
                    return CU_OK;
                }
        } else {
            for (size_t i = 0; i < w->pcs.n; i++)
                if (strcmp(w->pcs.items[i]->meta.name, wl->pc_name) == 0) {
                    *out = w->pcs.items[i]->value;
                    return CU_OK;
                }
        }
        const char *kind = is_wpc ? "WorkloadPriorityClass" : "PriorityClass";
        if (wl->job_name)
            cu_diag_error(d, "Job %s/%s: %s: %s \"%s\" not found", wl->meta.ns, wl->job_name,
                          is_wpc ? "metadata.labels[" CU_LABEL_PRIORITY_CLASS "]"
                                 : "spec.template.spec.priorityClassName",
                          kind, wl->pc_name);
        else
            cu_diag_error(d, "Workload %s/%s: spec.priorityClassRef: %s \"%s\" not found",
                          wl->meta.ns, wl->meta.name, kind, wl->pc_name);
        return CU_ENOTFOUND;
    }
    for (size_t i = 0; i < w->pcs.n; i++)
        if (w->pcs.items[i]->global_default) {
            *out = w->pcs.items[i]->value;
            return CU_OK;
        }
    return CU_OK;
}
