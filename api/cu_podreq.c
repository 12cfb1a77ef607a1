/*
 * cu_podreq.c - per-pod effective requests by the Kubernetes/Kueue rules
 * (the rule: cu_podreq.h; cu_pod_requests reads it from a pod spec node),
 * and the Workload name Kueue derives from a batch/v1 Job.
 *
 * Invariant: cu_pod_requests' tables borrow the resource names from the
 * document; only the final list is copied into the caller's arena.
 */
#include "cu_podreq.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------- tables and the rule (cu_podreq.h) ---------------- */

cu_res *cu_restab_find(const cu_restab *t, const char *name)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->it[i].name, name) == 0)
            return &t->it[i];
    return NULL;
}

int64_t cu_restab_get(const cu_restab *t, const char *name)
{
    cu_res *r = cu_restab_find(t, name);
    return r ? r->milli : 0;
}

cu_res *cu_restab_slot(cu_restab *t, const char *name)
{
    cu_res *r = cu_restab_find(t, name);
    if (r)
        return r;
    if (cu_vec_reserve(&t->it, t->n, &t->cap, sizeof(*t->it), 8)) {
        t->oom = 1;
        return NULL;
    }
    t->it[t->n].name = name;
    t->it[t->n].milli = 0;
    return &t->it[t->n++];
}

int cu_restab_add_sat(cu_restab *t, const char *name, int64_t v)
{
    cu_res *r = cu_restab_slot(t, name);
    if (!r)
        return -1;
    r->milli = cu_qty_sat_add(r->milli, v);
    return 0;
}

void cu_restab_free(cu_restab *t)
{
    free(t->it);
    memset(t, 0, sizeof(*t));
}

void cu_podreq_init(cu_podreq *p, int saturate, cu_podreq_overflow_fn overflow, void *ud)
{
    memset(p, 0, sizeof(*p));
    p->saturate = saturate;
    p->overflow = overflow;
    p->ud = ud;
}

/* *acc += v; 0, or -1 when it overflows (then *acc is INT64_MAX when
 * saturating, else unchanged). */
static int podreq_sum(const cu_podreq *p, int64_t *acc, int64_t v)
{
    if (cu_qty_add(*acc, v, acc) == CU_OK)
        return 0;
    if (p->saturate)
        *acc = cu_qty_sat_add(*acc, v);
    return -1;
}

/* t[r] += amounts[r] for each r, reporting overflow. */
static void podreq_add_all(cu_podreq *p, cu_restab *t, const cu_res *amounts, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        cu_res *r = cu_restab_slot(t, amounts[i].name);
        if (!r)
            return;
        if (podreq_sum(p, &r->milli, amounts[i].milli) != 0 && p->overflow)
            p->overflow(p->ud, amounts[i].name, 0);
    }
}

void cu_podreq_add(cu_podreq *p, cu_ctr_kind kind, const cu_res *amounts, size_t n)
{
    if (kind == CU_CTR_REGULAR) {
        podreq_add_all(p, &p->total, amounts, n);
        return;
    }
    if (kind == CU_CTR_SIDECAR) {
        /* runs alongside the regular containers */
        podreq_add_all(p, &p->side, amounts, n);
        return;
    }
    for (size_t k = 0; k < n; k++) {
        int64_t v = amounts[k].milli;
        if (podreq_sum(p, &v, cu_restab_get(&p->side, amounts[k].name)) != 0) {
            if (p->overflow)
                p->overflow(p->ud, amounts[k].name, 1);
            if (!p->saturate)
                continue;
        }
        cu_res *r = cu_restab_slot(&p->initmax, amounts[k].name);
        if (!r)
            return;
        if (v > r->milli)
            r->milli = v;
    }
}

void cu_podreq_close(cu_podreq *p)
{
    podreq_add_all(p, &p->total, p->side.it, p->side.n);
    for (size_t k = 0; k < p->initmax.n; k++) {
        cu_res *r = cu_restab_slot(&p->total, p->initmax.it[k].name);
        if (!r)
            return;
        if (p->initmax.it[k].milli > r->milli)
            r->milli = p->initmax.it[k].milli;
    }
}

void cu_podreq_overhead(cu_podreq *p, const cu_res *amounts, size_t n)
{
    podreq_add_all(p, &p->total, amounts, n);
}

int cu_podreq_oom(const cu_podreq *p) { return p->total.oom || p->side.oom || p->initmax.oom; }

void cu_podreq_free(cu_podreq *p)
{
    cu_restab_free(&p->total);
    cu_restab_free(&p->side);
    cu_restab_free(&p->initmax);
}

/* ---------------- cu_pod_requests: reading a pod spec node ---------------- */

typedef struct preq_ctx {
    const char *where; /* prefix for messages, may be NULL */
    cu_diag *d;
    int nerr;
    int oom;
    const char *init_path; /* the init container being added, for overflows */
} preq_ctx;

static void preq_err(preq_ctx *c, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void preq_err(preq_ctx *c, const char *path, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (c->where && *c->where)
        cu_diag_error(c->d, "%s%s%s: %s", c->where, path[0] ? "." : "", path, msg);
    else
        cu_diag_error(c->d, "%s: %s", path[0] ? path : "<pod spec>", msg);
    c->nerr++;
}

/* Parses one amount of resource res (in its unit, cu_qty_res_scale) from
 * node v at path; returns 0 and *out on success. */
static int preq_amount(preq_ctx *c, const cu_node *v, const char *path, const char *res,
                       int64_t *out)
{
    const char *s = cu_node_scalar(v);
    if (!s || v->type != CU_NODE_SCALAR) {
        preq_err(c, path, "must be a quantity");
        return -1;
    }
    cu_err err = cu_qty_parse_res(res, s, out, NULL);
    if (err == CU_EOVERFLOW) {
        preq_err(c, path, "quantity \"%s\" is too large", s);
        return -1;
    }
    if (err) {
        preq_err(c, path, "invalid quantity \"%s\"", s);
        return -1;
    }
    if (*out < 0) {
        preq_err(c, path, "must be greater than or equal to 0");
        return -1;
    }
    return 0;
}

/* A list's amounts twice: in each resource's unit (u, the answer), and in
 * milli-units (m, INT64_MAX when too large for them), so that a pod's
 * fractions of a whole unit add up before they are rounded, as Kubernetes
 * adds the exact quantities and Kueue rounds the sum (Value()). */
typedef struct preq_tabs {
    cu_restab u, m;
} preq_tabs;

/* Reads a ResourceList map at path into t (entries for its keys; an
 * existing entry is kept when skip_existing, else overwritten). */
static void preq_list(preq_ctx *c, const cu_node *m, const char *path, preq_tabs *t,
                      int skip_existing)
{
    if (!m || cu_node_is_null(m))
        return;
    if (m->type != CU_NODE_MAP) {
        preq_err(c, path, "must be an object");
        return;
    }
    for (size_t i = 0; i < m->n; i++) {
        char p[512];
        snprintf(p, sizeof(p), "%s.%s", path, m->keys[i]);
        if (skip_existing && cu_restab_find(&t->u, m->keys[i]))
            continue;
        int64_t v, vm;
        if (preq_amount(c, m->vals[i], p, m->keys[i], &v))
            continue;
        if (strcmp(m->keys[i], "pods") == 0) { /* Kueue's Workload webhook's wording */
            snprintf(p, sizeof(p), "%s[pods]", path);
            preq_err(c, p, "Invalid value: \"pods\": the key is reserved for internal kueue use");
            continue;
        }
        if (cu_qty_parse(cu_node_scalar(m->vals[i]), &vm, NULL) != CU_OK)
            vm = INT64_MAX; /* beyond milli-units: the sum saturates there */
        cu_res *r = cu_restab_slot(&t->u, m->keys[i]);
        cu_res *rm = cu_restab_slot(&t->m, m->keys[i]);
        if (!r || !rm) {
            c->oom = 1;
            return;
        }
        r->milli = v;
        rm->milli = vm;
    }
}

/* Adds one container's amounts to both sums. */
static void preq_add(cu_podreq *acc, cu_podreq *accm, cu_ctr_kind kind, const preq_tabs *t)
{
    cu_podreq_add(acc, kind, t->u.it, t->u.n);
    cu_podreq_add(accm, kind, t->m.it, t->m.n);
}

static void preq_tabs_clear(preq_tabs *t) { t->u.n = t->m.n = 0; }

static void preq_tabs_free(preq_tabs *t)
{
    cu_restab_free(&t->u);
    cu_restab_free(&t->m);
}

/* The pod's amount of resource r (in its unit, from acc) with the
 * fractions of a whole unit added up first (from accm), when r is counted
 * in whole units and its exact sum fits in milli-units. */
static int64_t preq_rounded_sum(const cu_res *r, const cu_podreq *accm)
{
    if (cu_qty_res_scale(r->name) != CU_QTY_SCALE_UNIT)
        return r->milli;
    int64_t m = cu_restab_get(&accm->total, r->name);
    if (m < 0 || m == INT64_MAX)
        return r->milli;
    return m / 1000 + (m % 1000 != 0); /* <= r->milli: the sum of rounded amounts */
}

/* A container's amounts: requests, then limits for resources without a
 * request. */
static void preq_container(preq_ctx *c, const cu_node *ctr, const char *path, preq_tabs *t)
{
    char p[512];
    if (!ctr || ctr->type != CU_NODE_MAP) {
        preq_err(c, path, "must be an object");
        return;
    }
    const cu_node *res = cu_node_get(ctr, "resources");
    if (!res || cu_node_is_null(res))
        return;
    snprintf(p, sizeof(p), "%s.resources", path);
    if (res->type != CU_NODE_MAP) {
        preq_err(c, p, "must be an object");
        return;
    }
    snprintf(p, sizeof(p), "%s.resources.requests", path);
    preq_list(c, cu_node_get(res, "requests"), p, t, 0);
    snprintf(p, sizeof(p), "%s.resources.limits", path);
    preq_list(c, cu_node_get(res, "limits"), p, t, 1);
}

static const cu_node *preq_seq(preq_ctx *c, const cu_node *spec, const char *key)
{
    const cu_node *s = cu_node_get(spec, key);
    if (!s || cu_node_is_null(s))
        return NULL;
    if (s->type != CU_NODE_SEQ) {
        preq_err(c, key, "must be a list");
        return NULL;
    }
    return s;
}

/* The accumulator's overflow report, in the words of the checks above:
 * an init container's overflow names the container. */
static void preq_overflow(void *ud, const char *res, int init)
{
    preq_ctx *c = ud;
    preq_err(c, init && c->init_path ? c->init_path : "", "total %s request overflows", res);
}

static int res_cmp(const void *a, const void *b)
{
    return strcmp(((const cu_res *)a)->name, ((const cu_res *)b)->name);
}

cu_err cu_pod_requests(cu_arena *a, const cu_node *podspec, const char *where, cu_reslist *out,
                       cu_diag *d)
{
    preq_ctx c = { where, d, 0, 0, NULL };
    preq_tabs one = { 0 }, over = { 0 };
    cu_podreq acc, accm;
    char p[512];
    out->n = 0;
    out->items = NULL;
    if (!podspec || cu_node_is_null(podspec))
        return CU_OK;
    if (podspec->type != CU_NODE_MAP) {
        preq_err(&c, "", "must be an object");
        return CU_EINVAL;
    }
    cu_podreq_init(&acc, 0, preq_overflow, &c);
    cu_podreq_init(&accm, 1, NULL, NULL);

    const cu_node *ctrs = preq_seq(&c, podspec, "containers");
    for (size_t i = 0; ctrs && i < ctrs->n; i++) {
        snprintf(p, sizeof(p), "containers[%zu]", i);
        preq_tabs_clear(&one);
        preq_container(&c, ctrs->vals[i], p, &one);
        preq_add(&acc, &accm, CU_CTR_REGULAR, &one);
    }

    const cu_node *inits = preq_seq(&c, podspec, "initContainers");
    for (size_t i = 0; inits && i < inits->n; i++) {
        const cu_node *ic = inits->vals[i];
        snprintf(p, sizeof(p), "initContainers[%zu]", i);
        preq_tabs_clear(&one);
        preq_container(&c, ic, p, &one);
        const char *rp = cu_node_scalar(cu_node_get(ic, "restartPolicy"));
        c.init_path = p;
        preq_add(&acc, &accm, rp && strcmp(rp, "Always") == 0 ? CU_CTR_SIDECAR : CU_CTR_INIT, &one);
        c.init_path = NULL;
    }
    cu_podreq_close(&acc);
    cu_podreq_close(&accm);
    preq_list(&c, cu_node_get(podspec, "overhead"), "overhead", &over, 0);
    cu_podreq_overhead(&acc, over.u.it, over.u.n);
    cu_podreq_overhead(&accm, over.m.it, over.m.n);

    const cu_restab *total = &acc.total;
    cu_err err = CU_OK;
    if (c.oom || cu_podreq_oom(&acc) || cu_podreq_oom(&accm) || one.u.oom || one.m.oom ||
        over.u.oom || over.m.oom)
        err = CU_ENOMEM;
    else if (c.nerr)
        err = CU_EINVAL;
    size_t nz = 0;
    for (size_t k = 0; k < total->n; k++)
        nz += total->it[k].milli != 0;
    if (!err && nz) {
        cu_res *items = cu_arena_alloc(a, nz * sizeof(*items));
        if (!items) {
            err = CU_ENOMEM;
        } else {
            size_t j = 0;
            for (size_t k = 0; k < total->n && !err; k++) {
                if (total->it[k].milli == 0)
                    continue;
                items[j].name = cu_arena_strdup(a, total->it[k].name);
                items[j].milli = preq_rounded_sum(&total->it[k], &accm);
                if (!items[j].name)
                    err = CU_ENOMEM;
                j++;
            }
            qsort(items, nz, sizeof(*items), res_cmp);
            if (!err) {
                out->n = nz;
                out->items = items;
            }
        }
    }
    cu_podreq_free(&acc);
    cu_podreq_free(&accm);
    preq_tabs_free(&one);
    preq_tabs_free(&over);
    return err;
}
