/*
 * cu_podreq.c - per-pod effective requests by the Kubernetes/Kueue rules,
 * and the Workload name Kueue derives from a batch/v1 Job.
 *
 * For each resource r:
 *   effective(r) = max(sum(containers) + sum(sidecars),
 *                      max over plain init container i of
 *                          (init_i + sum(sidecars declared before i)))
 *                  + overhead(r)
 * where sidecars are initContainers with restartPolicy: Always and a
 * container's amount is requests[r], else limits[r].
 *
 * Invariant: the temporary tables (rtab) are malloc-owned and borrow the
 * resource names from the document; only the final list is copied into
 * the caller's arena.
 */
#include "cu_objects.h"
#include "cu_sha1.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct racc { const char *name; int64_t v; } racc;
typedef struct rtab { size_t n, cap; racc *it; int oom; } rtab;

static racc *rtab_find(rtab *t, const char *name)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->it[i].name, name) == 0)
            return &t->it[i];
    return NULL;
}

static int64_t rtab_get(rtab *t, const char *name)
{
    racc *r = rtab_find(t, name);
    return r ? r->v : 0;
}

/* Returns the entry for name, adding it with 0 when missing (NULL on OOM). */
static racc *rtab_slot(rtab *t, const char *name)
{
    racc *r = rtab_find(t, name);
    if (r)
        return r;
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 8;
        racc *p = realloc(t->it, cap * sizeof(*p));
        if (!p) {
            t->oom = 1;
            return NULL;
        }
        t->it = p;
        t->cap = cap;
    }
    t->it[t->n].name = name;
    t->it[t->n].v = 0;
    return &t->it[t->n++];
}

static void rtab_free(rtab *t)
{
    free(t->it);
    memset(t, 0, sizeof(*t));
}

typedef struct preq_ctx {
    const char *where;   /* prefix for messages, may be NULL */
    cu_diag *d;
    int nerr;
    int oom;
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

/* Parses one resource amount node at path; returns 0 and *out on success. */
static int preq_amount(preq_ctx *c, const cu_node *v, const char *path, int64_t *out)
{
    const char *s = cu_node_scalar(v);
    if (!s || v->type != CU_NODE_SCALAR) {
        preq_err(c, path, "must be a quantity");
        return -1;
    }
    cu_err err = cu_qty_parse(s, out, NULL);
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

/* Reads a ResourceList map at path into t (entries for its keys; an
 * existing entry is kept when skip_existing, else overwritten). */
static void preq_list(preq_ctx *c, const cu_node *m, const char *path, rtab *t,
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
        if (skip_existing && rtab_find(t, m->keys[i]))
            continue;
        int64_t v;
        if (preq_amount(c, m->vals[i], p, &v))
            continue;
        if (strcmp(m->keys[i], "pods") == 0) {
            preq_err(c, p, "the \"pods\" resource may not be requested");
            continue;
        }
        racc *r = rtab_slot(t, m->keys[i]);
        if (!r) {
            c->oom = 1;
            return;
        }
        r->v = v;
    }
}

/* A container's amounts: requests, then limits for resources without a
 * request. */
static void preq_container(preq_ctx *c, const cu_node *ctr, const char *path, rtab *t)
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

/* t[r] += add[r] for every r in add, reporting overflow. */
static void preq_add_all(preq_ctx *c, rtab *t, const rtab *add)
{
    for (size_t i = 0; i < add->n; i++) {
        racc *r = rtab_slot(t, add->it[i].name);
        if (!r) {
            c->oom = 1;
            return;
        }
        if (cu_qty_add(r->v, add->it[i].v, &r->v) != CU_OK)
            preq_err(c, "", "total %s request overflows", add->it[i].name);
    }
}

static int res_cmp(const void *a, const void *b)
{
    return strcmp(((const cu_res *)a)->name, ((const cu_res *)b)->name);
}

cu_err cu_pod_requests(cu_arena *a, const cu_node *podspec, const char *where,
                       cu_reslist *out, cu_diag *d)
{
    preq_ctx c = { where, d, 0, 0 };
    rtab total = { 0 }, side = { 0 }, initmax = { 0 }, one = { 0 }, over = { 0 };
    char p[512];
    out->n = 0;
    out->items = NULL;
    if (!podspec || cu_node_is_null(podspec))
        return CU_OK;
    if (podspec->type != CU_NODE_MAP) {
        preq_err(&c, "", "must be an object");
        return CU_EINVAL;
    }

    const cu_node *ctrs = preq_seq(&c, podspec, "containers");
    for (size_t i = 0; ctrs && i < ctrs->n; i++) {
        snprintf(p, sizeof(p), "containers[%zu]", i);
        one.n = 0;
        preq_container(&c, ctrs->vals[i], p, &one);
        preq_add_all(&c, &total, &one);
    }

    const cu_node *inits = preq_seq(&c, podspec, "initContainers");
    for (size_t i = 0; inits && i < inits->n; i++) {
        const cu_node *ic = inits->vals[i];
        snprintf(p, sizeof(p), "initContainers[%zu]", i);
        one.n = 0;
        preq_container(&c, ic, p, &one);
        const char *rp = cu_node_scalar(cu_node_get(ic, "restartPolicy"));
        if (rp && strcmp(rp, "Always") == 0) {
            /* sidecar: runs alongside the regular containers */
            preq_add_all(&c, &side, &one);
            continue;
        }
        for (size_t k = 0; k < one.n; k++) {
            int64_t v;
            if (cu_qty_add(one.it[k].v, rtab_get(&side, one.it[k].name), &v) != CU_OK) {
                preq_err(&c, p, "total %s request overflows", one.it[k].name);
                continue;
            }
            racc *r = rtab_slot(&initmax, one.it[k].name);
            if (!r) {
                c.oom = 1;
                break;
            }
            if (v > r->v)
                r->v = v;
        }
    }
    preq_add_all(&c, &total, &side);
    for (size_t k = 0; k < initmax.n; k++) {
        racc *r = rtab_slot(&total, initmax.it[k].name);
        if (!r) {
            c.oom = 1;
            break;
        }
        if (initmax.it[k].v > r->v)
            r->v = initmax.it[k].v;
    }
    preq_list(&c, cu_node_get(podspec, "overhead"), "overhead", &over, 0);
    preq_add_all(&c, &total, &over);

    cu_err err = CU_OK;
    if (c.oom || total.oom || side.oom || initmax.oom || one.oom || over.oom)
        err = CU_ENOMEM;
    else if (c.nerr)
        err = CU_EINVAL;
    size_t nz = 0;
    for (size_t k = 0; k < total.n; k++)
        nz += total.it[k].v != 0;
    if (!err && nz) {
        cu_res *items = cu_arena_alloc(a, nz * sizeof(*items));
        if (!items) {
            err = CU_ENOMEM;
        } else {
            size_t j = 0;
            for (size_t k = 0; k < total.n && !err; k++) {
                if (total.it[k].v == 0)
                    continue;
                items[j].name = cu_arena_strdup(a, total.it[k].name);
                items[j].milli = total.it[k].v;
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
    rtab_free(&total);
    rtab_free(&side);
    rtab_free(&initmax);
    rtab_free(&one);
    rtab_free(&over);
    return err;
}

#define CU_WL_PREFIX_MAX 247   /* 253 (max object name) - 1 ('-') - 5 (hash) */

const char *cu_job_workload_name(cu_arena *a, const char *job_name, const char *uid)
{
    if (!uid)
        uid = "";
    cu_sha1 s;
    unsigned char dg[20];
    cu_sha1_init(&s);
    cu_sha1_update(&s, "Job\nbatch\n", 10);
    cu_sha1_update(&s, job_name, strlen(job_name));
    cu_sha1_update(&s, "\n", 1);
    cu_sha1_update(&s, uid, strlen(uid));
    cu_sha1_final(&s, dg);
    char *prefix = cu_arena_printf(a, "job-%s", job_name);
    if (!prefix)
        return NULL;
    if (strlen(prefix) > CU_WL_PREFIX_MAX)
        prefix[CU_WL_PREFIX_MAX] = '\0';
    /* 5 hex digits = the first 2.5 bytes */
    return cu_arena_printf(a, "%s-%02x%02x%x", prefix, dg[0], dg[1], dg[2] >> 4);
}
