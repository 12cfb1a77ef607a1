/*
 * cu_exclude.c - resources.excludeResourcePrefixes and
 * resources.transformations applied to Workloads (rules in cu_exclude.h).
 */
#include "cu_exclude.h"

#include "cu_quantity.h"

#include <stdio.h>
#include <string.h>

static void exclude(cu_reslist *rl, const cu_strs *px)
{
    size_t k = 0;
    for (size_t i = 0; i < rl->n; i++) {
        int drop = 0;
        for (size_t e = 0; e < px->n && !drop; e++)
            drop = strncmp(rl->items[i].name, px->items[e], strlen(px->items[e])) == 0;
        if (!drop)
            rl->items[k++] = rl->items[i];
    }
    rl->n = k;
}

static const cu_xform *xform_of(const cu_config *cf, const char *res)
{
    for (size_t i = 0; i < cf->nxforms; i++)
        if (strcmp(cf->xforms[i].input, res) == 0)
            return &cf->xforms[i];
    return NULL;
}

static int64_t mul_sat(int64_t a, int64_t b)
{
    int64_t r;
    return cu_qty_mul(a, b, &r) == CU_OK ? r : CU_QTY_INF;
}

/* The result being built: resources in order of first use. it[] holds the
 * amounts taken as they are (in each resource's unit); the outputs of
 * transformations add up exactly in whole[] + rem[]/1000 whole units of
 * the output, rounded to its unit only at the end (Kueue adds the exact
 * quantities, then takes their ResourceValue). */
typedef struct out {
    size_t n;
    cu_res *it;
    const char **from; /* the inputs that produced it, or NULL */
    int *made;         /* it received an output */
    int64_t *whole;    /* outputs: whole units (saturating at CU_QTY_INF) */
    int64_t *rem;      /* outputs: thousandths of a unit, [0, 1000) */
} out;

static size_t slot(out *o, const char *name)
{
    for (size_t i = 0; i < o->n; i++)
        if (strcmp(o->it[i].name, name) == 0)
            return i;
    o->it[o->n] = (cu_res){ name, 0 };
    o->from[o->n] = NULL;
    o->made[o->n] = 0;
    o->whole[o->n] = 0;
    o->rem[o->n] = 0;
    return o->n++;
}

/* Adds f/1000 * u whole units to slot s (f, u >= 0) without an
 * intermediate product in thousandths, which could overflow where the
 * result does not: f*u/1000 = (f/1000)*u + (f%1000)*(u/1000) +
 * (f%1000)*(u%1000)/1000. */
static void add_output(out *o, size_t s, int64_t f, int64_t u)
{
    int64_t a = f / 1000, b = f % 1000;
    int64_t w = cu_qty_sat_add(o->whole[s], mul_sat(a, u));
    w = cu_qty_sat_add(w, mul_sat(b, u / 1000));
    int64_t r = o->rem[s] + b * (u % 1000); /* < 1000 + 999*999 */
    o->whole[s] = cu_qty_sat_add(w, r / 1000);
    o->rem[s] = r % 1000;
}

/* Slot s's outputs in its resource's unit, rounded up. */
static int64_t outputs_value(const out *o, size_t s)
{
    int64_t one = cu_qty_res_one(o->it[s].name);
    int64_t v = mul_sat(o->whole[s], one);
    int64_t part = (o->rem[s] * one + 999) / 1000; /* ceil(rem/1000 of a unit) */
    return v == CU_QTY_INF ? v : cu_qty_sat_add(v, part);
}

static cu_err transform(cu_arena *a, cu_podset *ps, const cu_config *cf)
{
    cu_reslist *rl = &ps->requests;
    size_t cap = rl->n;
    int match = 0;
    for (size_t i = 0; i < rl->n; i++) {
        const cu_xform *xf = xform_of(cf, rl->items[i].name);
        if (xf) {
            match = 1;
            cap += xf->outputs.n;
        }
    }
    if (!match)
        return CU_OK;
    out o = { 0 };
    o.it = cu_arena_alloc(a, cap * sizeof(*o.it));
    o.from = cu_arena_alloc(a, cap * sizeof(*o.from));
    o.made = cu_arena_alloc(a, cap * sizeof(*o.made));
    o.whole = cu_arena_alloc(a, cap * sizeof(*o.whole));
    o.rem = cu_arena_alloc(a, cap * sizeof(*o.rem));
    cu_res *pre = cu_arena_alloc(a, rl->n * sizeof(*pre));
    if (!o.it || !o.from || !o.made || !o.whole || !o.rem || !pre)
        return CU_ENOMEM;
    memcpy(pre, rl->items, rl->n * sizeof(*pre));
    for (size_t i = 0; i < rl->n; i++) {
        const cu_res *r = &rl->items[i];
        const cu_xform *xf = xform_of(cf, r->name);
        if (!xf) {
            size_t s = slot(&o, r->name);
            o.it[s].milli = cu_qty_sat_add(o.it[s].milli, r->milli);
            continue;
        }
        int64_t in = r->milli;
        if (xf->multiply_by) {
            for (size_t j = 0; j < rl->n; j++)
                if (strcmp(rl->items[j].name, xf->multiply_by) == 0)
                    in = mul_sat(in, cu_qty_res_whole(xf->multiply_by, rl->items[j].milli));
        }
        int64_t u = in == CU_QTY_INF ? CU_QTY_INF : cu_qty_res_whole(r->name, in);
        for (size_t k = 0; k < xf->outputs.n; k++) {
            const cu_res *f = &xf->outputs.items[k];
            size_t s = slot(&o, f->name);
            if (o.it[s].name == f->name && !(o.it[s].name = cu_arena_strdup(a, f->name)))
                return CU_ENOMEM; /* a copy: w may outlive cf */
            add_output(&o, s, f->milli, u);
            o.made[s] = 1;
            o.from[s] = o.from[s] ? cu_arena_printf(a, "%s, %s", o.from[s], r->name) : r->name;
            if (!o.from[s])
                return CU_ENOMEM;
        }
        if (xf->strategy == CU_XFORM_RETAIN) {
            size_t s = slot(&o, r->name);
            o.it[s].milli = cu_qty_sat_add(o.it[s].milli, in);
        }
    }
    size_t n = 0;
    for (size_t i = 0; i < o.n; i++) {
        if (o.made[i])
            o.it[i].milli = cu_qty_sat_add(o.it[i].milli, outputs_value(&o, i));
        if (o.it[i].milli == 0)
            continue; /* a zero request is none, as cu_pod_requests leaves it out */
        o.it[n] = o.it[i];
        o.from[n++] = o.from[i];
    }
    /* sorted by name, as every requests list (cu_pod_requests); from follows */
    for (size_t i = 1; i < n; i++) {
        cu_res r = o.it[i];
        const char *f = o.from[i];
        size_t j = i;
        for (; j > 0 && strcmp(o.it[j - 1].name, r.name) > 0; j--) {
            o.it[j] = o.it[j - 1];
            o.from[j] = o.from[j - 1];
        }
        o.it[j] = r;
        o.from[j] = f;
    }
    ps->pre_xform = (cu_reslist){ rl->n, pre };
    ps->requests = (cu_reslist){ n, o.it };
    ps->from = o.from;
    return CU_OK;
}

cu_err cu_world_effective_requests(cu_world *w, const cu_config *cf)
{
    if (!w || !cf || (!cf->exclude_resource_prefixes.n && !cf->nxforms))
        return CU_OK;
    for (size_t wi = 0; wi < w->workloads.n; wi++) {
        cu_workload *wl = w->workloads.items[wi];
        for (size_t p = 0; p < wl->npodsets; p++) {
            cu_podset *ps = &wl->podsets[p];
            if (cf->exclude_resource_prefixes.n)
                exclude(&ps->requests, &cf->exclude_resource_prefixes);
            if (cf->nxforms) {
                cu_err err = transform(&w->arena, ps, cf);
                if (err)
                    return err;
            }
        }
    }
    return CU_OK;
}
