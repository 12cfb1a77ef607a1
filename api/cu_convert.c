/*
 * cu_convert.c - the kueue.x-k8s.io v1beta1 <-> v1beta2 conversion rules,
 * written once (kueue-semantics.md section 1.1; the field mappings of
 * Kueue v0.17.0's conversion functions), and their use on cu_node
 * documents: the in-place rewrite of v1beta1 manifests into v1beta2 of
 * `cueue convert` and `simulate`. The conversion webhook applies the same
 * rules to json-c objects (cu_whconvert.c) through cu_ctree.
 *
 * Invariant: cu_convert_v1beta2 touches only documents whose apiVersion is
 * exactly kueue.x-k8s.io/v1beta1 (and the items of any *List); new nodes
 * are allocated in the caller's arena, existing keys keep their position.
 */
#include "cu_objects.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_convert_int.h"

/* ------------------------------------------------------------------ */
/* the rules engine                                                    */

typedef struct cctx {
    const cu_ctree *t;
    int down, manifest;
    cu_buf *err;
    cu_err rc;
    char path[512]; /* the concrete path of the map a rule works on */
    size_t plen;
} cctx;

/* A field of the wrong shape: fatal for the webhook, left alone (for the
 * decoder to report) in manifest mode. Returns -1. */
static int bad(cctx *c, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int bad(cctx *c, const char *field, const char *fmt, ...)
{
    if (c->manifest || c->rc != CU_OK)
        return -1;
    c->rc = CU_EINVAL;
    if (c->err) {
        cu_buf_printf(c->err, "%s%s%s: ", c->path, c->plen && *field ? "." : "", field);
        va_list ap;
        va_start(ap, fmt);
        cu_buf_vprintf(c->err, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static int oom(cctx *c)
{
    c->rc = CU_ENOMEM;
    return -1;
}

#define T (c->t)
#define TY(n) (T->type(T->ud, (n)))
#define GET(m, k) (T->get(T->ud, (m), (k)))

/* A new string node set at map[key]. */
static int put_str(cctx *c, void *map, const char *key, const char *v)
{
    void *n = T->new_str(T->ud, v);
    if (!n || T->set(T->ud, map, key, n) != 0)
        return oom(c);
    return 0;
}

static int put_int(cctx *c, void *map, const char *key, int64_t v)
{
    void *n = T->new_int(T->ud, v);
    if (!n || T->set(T->ud, map, key, n) != 0)
        return oom(c);
    return 0;
}

/* Sets map[key] = v where the old key was (renamed), else appends; takes v. */
static int put_at(cctx *c, void *map, const char *old, const char *key, void *v)
{
    if (old && GET(map, old) && !GET(map, key) && T->rename(T->ud, map, old, key) != 0) {
        T->drop(T->ud, v);
        return oom(c);
    }
    if (old && strcmp(old, key) != 0)
        T->del(T->ud, map, old);
    if (T->set(T->ud, map, key, v) != 0)
        return oom(c);
    return 0;
}

/* map[field] as a string: 0 and *out (NULL when absent or null), or -1. */
static int opt_str(cctx *c, void *map, const char *field, const char **out)
{
    void *n = GET(map, field);
    cu_ct_type ty = TY(n);
    *out = NULL;
    if (ty == CU_CT_NONE || ty == CU_CT_NULL)
        return 0;
    if (ty != CU_CT_STR)
        return bad(c, field, "must be a string");
    *out = T->str(T->ud, n);
    return 0;
}

/* map[field] as an int32 (absent or null: 0). */
static int opt_i32(cctx *c, void *map, const char *field, int64_t *out)
{
    void *n = GET(map, field);
    cu_ct_type ty = TY(n);
    *out = 0;
    if (ty == CU_CT_NONE || ty == CU_CT_NULL)
        return 0;
    if (T->num(T->ud, n, out) != 0 || *out < INT32_MIN || *out > INT32_MAX)
        return bad(c, field, "must be a 32-bit integer");
    return 0;
}

/* ---- ClusterQueue spec.admissionChecks -> admissionChecksStrategy ---- */

/* Kueue: a non-empty list becomes the strategy (replacing any), one rule
 * per name; an empty list is dropped. */
static int acs_up(cctx *c, void *spec)
{
    void *names = GET(spec, "admissionChecks");
    cu_ct_type ty = TY(names);
    if (ty == CU_CT_NONE)
        return 0;
    if (ty == CU_CT_NULL) {
        T->del(T->ud, spec, "admissionChecks");
        return 0;
    }
    if (ty != CU_CT_SEQ)
        return bad(c, "admissionChecks", "must be a list of AdmissionCheck names");
    size_t n = T->len(T->ud, names);
    for (size_t i = 0; i < n; i++)
        if (TY(T->at(T->ud, names, i)) != CU_CT_STR)
            return bad(c, "admissionChecks", "item %zu must be a string", i);
    if (n == 0) {
        T->del(T->ud, spec, "admissionChecks");
        return 0;
    }
    void *strategy = T->new_map(T->ud), *list = T->new_seq(T->ud);
    if (!strategy || !list) {
        if (strategy)
            T->drop(T->ud, strategy);
        if (list)
            T->drop(T->ud, list);
        return oom(c);
    }
    if (T->set(T->ud, strategy, "admissionChecks", list) != 0) {
        T->drop(T->ud, strategy);
        return oom(c);
    }
    for (size_t i = 0; i < n; i++) {
        void *rule = T->new_map(T->ud);
        if (!rule) {
            T->drop(T->ud, strategy);
            return oom(c);
        }
        if (T->push(T->ud, list, rule) != 0 ||
            put_str(c, rule, "name", T->str(T->ud, T->at(T->ud, names, i))) != 0) {
            T->drop(T->ud, strategy);
            return oom(c);
        }
    }
    T->del(T->ud, spec, "admissionChecksStrategy");
    return put_at(c, spec, "admissionChecks", "admissionChecksStrategy", strategy);
}

/* ---- Workload priority: priorityClassName/Source <-> priorityClassRef ---- */

#define SRC_WPC CU_GROUP "/workloadpriorityclass"
#define SRC_PC "scheduling.k8s.io/priorityclass"

static int prio_up(cctx *c, void *spec)
{
    const char *name, *src;
    if (opt_str(c, spec, "priorityClassName", &name) != 0 ||
        opt_str(c, spec, "priorityClassSource", &src) != 0)
        return -1;
    int wpc = src && strcmp(src, SRC_WPC) == 0;
    int known = wpc || (src && strcmp(src, SRC_PC) == 0);
    T->del(T->ud, spec, "priorityClassSource");
    if (c->manifest ? !name || !*name : !known) {
        /* Kueue keeps no reference without a known source (lost) */
        T->del(T->ud, spec, "priorityClassName");
        return 0;
    }
    void *ref = T->new_map(T->ud);
    if (!ref)
        return oom(c);
    char *nm = strdup(name ? name : ""); /* name lives in the node put_at replaces */
    if (!nm) {
        T->drop(T->ud, ref);
        return oom(c);
    }
    int rc = put_str(c, ref, "group", wpc ? CU_GROUP : "scheduling.k8s.io");
    if (rc == 0)
        rc = put_str(c, ref, "kind", wpc ? "WorkloadPriorityClass" : "PriorityClass");
    if (rc == 0)
        rc = put_str(c, ref, "name", nm);
    free(nm);
    if (rc != 0) {
        T->drop(T->ud, ref);
        return rc;
    }
    return put_at(c, spec, "priorityClassName", "priorityClassRef", ref);
}

static int prio_down(cctx *c, void *spec)
{
    void *ref = GET(spec, "priorityClassRef");
    cu_ct_type ty = TY(ref);
    if (ty == CU_CT_NONE)
        return 0;
    if (ty == CU_CT_NULL) {
        T->del(T->ud, spec, "priorityClassRef");
        return 0;
    }
    if (ty != CU_CT_MAP)
        return bad(c, "priorityClassRef", "must be an object");
    const char *group, *kind, *name;
    size_t mark = c->plen;
    c->plen += (size_t)snprintf(c->path + c->plen, sizeof(c->path) - c->plen, "%s%s",
                                c->plen ? "." : "", "priorityClassRef");
    if (c->plen >= sizeof(c->path))
        c->plen = sizeof(c->path) - 1;
    int rc = opt_str(c, ref, "group", &group);
    if (rc == 0)
        rc = opt_str(c, ref, "kind", &kind);
    if (rc == 0)
        rc = opt_str(c, ref, "name", &name);
    c->plen = mark;
    c->path[mark] = 0;
    if (rc != 0)
        return -1;
    const char *src = NULL;
    if (group && kind && strcmp(group, CU_GROUP) == 0 && strcmp(kind, "WorkloadPriorityClass") == 0)
        src = SRC_WPC;
    else if (group && kind && strcmp(group, "scheduling.k8s.io") == 0 &&
             strcmp(kind, "PriorityClass") == 0)
        src = SRC_PC;
    if (!src || !name || !*name) {
        /* another kind of reference has no v1beta1 form (lost, as Kueue);
         * an empty name is omitted, as Go's omitempty does */
        T->del(T->ud, spec, "priorityClassRef");
        return src ? put_str(c, spec, "priorityClassSource", src) : 0;
    }
    void *n = T->new_str(T->ud, name);
    if (!n)
        return oom(c);
    if (put_at(c, spec, "priorityClassRef", "priorityClassName", n) != 0)
        return -1;
    return put_str(c, spec, "priorityClassSource", src);
}

static int prio(cctx *c, void *spec) { return c->down ? prio_down(c, spec) : prio_up(c, spec); }

/* ---- topology assignments: v1beta1 domains <-> v1beta2 slices ---- */

/* The most domains one assignment may expand to (Kueue's schema allows
 * 100000 pods' worth of domains). */
#define TOPO_MAX_DOMAINS 100000

/* v1beta1 -> v1beta2, as Kueue's encoding: one slice; per level a
 * universal value when all are equal, else the common prefix and suffix
 * (not overlapping) and the roots; a universal pod count when all are
 * equal, else the individual counts. */
static int topo_level(cctx *c, void *vals, const char **v, size_t n)
{
    size_t pre = strlen(v[0]), suf = pre, minl = pre, maxl = pre;
    for (size_t i = 1; i < n; i++) {
        size_t l = strlen(v[i]);
        minl = l < minl ? l : minl;
        maxl = l > maxl ? l : maxl;
        size_t k = 0;
        while (k < pre && k < l && v[i][k] == v[0][k])
            k++;
        pre = k;
        k = 0;
        size_t l0 = strlen(v[0]);
        while (k < suf && k < l && v[i][l - 1 - k] == v[0][l0 - 1 - k])
            k++;
        suf = k;
    }
    void *level = T->new_map(T->ud);
    if (!level || T->push(T->ud, vals, level) != 0) {
        if (level)
            T->drop(T->ud, level);
        return oom(c);
    }
    if (pre == maxl)
        return put_str(c, level, "universal", v[0]);
    if (pre + suf > minl)
        pre = minl - suf;
    void *ind = T->new_map(T->ud);
    if (!ind || T->set(T->ud, level, "individual", ind) != 0) {
        if (ind)
            T->drop(T->ud, ind);
        return oom(c);
    }
    char *tmp = malloc(maxl + 1);
    if (!tmp)
        return oom(c);
    int rc = 0;
    if (pre) {
        memcpy(tmp, v[0], pre);
        tmp[pre] = 0;
        rc = put_str(c, ind, "prefix", tmp);
    }
    if (rc == 0 && suf) {
        size_t l0 = strlen(v[0]);
        memcpy(tmp, v[0] + l0 - suf, suf + 1);
        rc = put_str(c, ind, "suffix", tmp);
    }
    void *roots = rc == 0 ? T->new_seq(T->ud) : NULL;
    if (rc == 0 && (!roots || T->set(T->ud, ind, "roots", roots) != 0)) {
        if (roots)
            T->drop(T->ud, roots);
        rc = oom(c);
    }
    for (size_t i = 0; rc == 0 && i < n; i++) {
        size_t l = strlen(v[i]) - pre - suf;
        memcpy(tmp, v[i] + pre, l);
        tmp[l] = 0;
        void *s = T->new_str(T->ud, tmp);
        if (!s || T->push(T->ud, roots, s) != 0) {
            if (s)
                T->drop(T->ud, s);
            rc = oom(c);
        }
    }
    free(tmp);
    return rc;
}

/* Reads the levels list: its length in *n, or -1. */
static int topo_levels(cctx *c, void *ta, size_t *n)
{
    void *levels = GET(ta, "levels");
    cu_ct_type ty = TY(levels);
    *n = 0;
    if (ty == CU_CT_NONE || ty == CU_CT_NULL)
        return 0;
    if (ty != CU_CT_SEQ)
        return bad(c, "topologyAssignment.levels", "must be a list of strings");
    *n = T->len(T->ud, levels);
    return 0;
}

static int topo_up(cctx *c, void *ta)
{
    size_t nlev;
    if (topo_levels(c, ta, &nlev) != 0)
        return -1;
    void *domains = GET(ta, "domains");
    cu_ct_type ty = TY(domains);
    size_t n = 0;
    if (ty == CU_CT_SEQ)
        n = T->len(T->ud, domains);
    else if (ty != CU_CT_NONE && ty != CU_CT_NULL)
        return bad(c, "topologyAssignment.domains", "must be a list");
    if (n > TOPO_MAX_DOMAINS)
        return bad(c, "topologyAssignment.domains", "more than %d domains", TOPO_MAX_DOMAINS);
    /* check everything before building */
    for (size_t j = 0; j < n; j++) {
        void *d = T->at(T->ud, domains, j);
        if (TY(d) != CU_CT_MAP)
            return bad(c, "topologyAssignment.domains", "item %zu must be an object", j);
        void *vs = GET(d, "values");
        size_t nv = TY(vs) == CU_CT_SEQ ? T->len(T->ud, vs) : 0;
        if (nv < nlev)
            return bad(c, "topologyAssignment.domains", "item %zu has %zu values for %zu levels", j,
                       nv, nlev);
        for (size_t i = 0; i < nlev; i++)
            if (TY(T->at(T->ud, vs, i)) != CU_CT_STR)
                return bad(c, "topologyAssignment.domains",
                           "item %zu: values[%zu] must be a string", j, i);
        int64_t cnt;
        void *cn = GET(d, "count");
        if (TY(cn) != CU_CT_NONE && TY(cn) != CU_CT_NULL &&
            (T->num(T->ud, cn, &cnt) != 0 || cnt < INT32_MIN || cnt > INT32_MAX))
            return bad(c, "topologyAssignment.domains", "item %zu: count must be a 32-bit integer",
                       j);
    }
    if (n == 0) { /* Kueue: an empty list of slices, omitted */
        T->del(T->ud, ta, "domains");
        T->del(T->ud, ta, "slices");
        return 0;
    }
    void *slices = T->new_seq(T->ud), *slice = T->new_map(T->ud);
    const char **v = malloc(n * sizeof(*v));
    if (!slices || !slice || !v || T->push(T->ud, slices, slice) != 0) {
        free(v);
        if (slice)
            T->drop(T->ud, slice);
        if (slices)
            T->drop(T->ud, slices);
        return oom(c);
    }
    int rc = put_int(c, slice, "domainCount", (int64_t)n);
    void *vals = rc == 0 ? T->new_seq(T->ud) : NULL;
    if (rc == 0 && nlev && (!vals || T->set(T->ud, slice, "valuesPerLevel", vals) != 0))
        rc = oom(c);
    for (size_t i = 0; rc == 0 && i < nlev; i++) {
        for (size_t j = 0; j < n; j++)
            v[j] = T->str(T->ud, T->at(T->ud, GET(T->at(T->ud, domains, j), "values"), i));
        rc = topo_level(c, vals, v, n);
    }
    if (!nlev && vals)
        T->drop(T->ud, vals);
    free(v);
    void *pc = rc == 0 ? T->new_map(T->ud) : NULL;
    if (rc == 0 && (!pc || T->set(T->ud, slice, "podCounts", pc) != 0))
        rc = oom(c);
    int64_t first = 0, cnt = 0;
    int same = 1;
    for (size_t j = 0; rc == 0 && j < n; j++) {
        opt_i32(c, T->at(T->ud, domains, j), "count", &cnt);
        if (j == 0)
            first = cnt;
        same &= cnt == first;
    }
    if (rc == 0 && same)
        rc = put_int(c, pc, "universal", first);
    else if (rc == 0) {
        void *ind = T->new_seq(T->ud);
        if (!ind || T->set(T->ud, pc, "individual", ind) != 0)
            rc = oom(c);
        for (size_t j = 0; rc == 0 && j < n; j++) {
            opt_i32(c, T->at(T->ud, domains, j), "count", &cnt);
            void *x = T->new_int(T->ud, cnt);
            if (!x || T->push(T->ud, ind, x) != 0)
                rc = oom(c);
        }
    }
    if (rc != 0) {
        T->drop(T->ud, slices);
        return rc;
    }
    T->del(T->ud, ta, "slices");
    return put_at(c, ta, "domains", "slices", slices);
}

/* One level's value of domain i of a slice (checked by topo_down). */
static const char *slice_value(cctx *c, void *lv, size_t i, char *buf, size_t cap)
{
    const char *u = T->str(T->ud, GET(lv, "universal"));
    if (u)
        return u;
    void *ind = GET(lv, "individual");
    const char *p = T->str(T->ud, GET(ind, "prefix")), *s = T->str(T->ud, GET(ind, "suffix"));
    const char *r = T->str(T->ud, T->at(T->ud, GET(ind, "roots"), i));
    size_t need = strlen(p ? p : "") + strlen(r) + strlen(s ? s : "") + 1;
    if (need > cap)
        return NULL;
    snprintf(buf, cap, "%s%s%s", p ? p : "", r, s ? s : "");
    return buf;
}

static int topo_down(cctx *c, void *ta)
{
    size_t nlev;
    if (topo_levels(c, ta, &nlev) != 0)
        return -1;
    void *slices = GET(ta, "slices");
    cu_ct_type ty = TY(slices);
    size_t ns = ty == CU_CT_SEQ ? T->len(T->ud, slices) : 0;
    if (ty != CU_CT_SEQ && ty != CU_CT_NONE && ty != CU_CT_NULL)
        return bad(c, "topologyAssignment.slices", "must be a list");
    /* check everything before building */
    size_t total = 0, longest = 0;
    for (size_t k = 0; k < ns; k++) {
        void *sl = T->at(T->ud, slices, k);
        if (TY(sl) != CU_CT_MAP)
            return bad(c, "topologyAssignment.slices", "item %zu must be an object", k);
        int64_t dc;
        if (opt_i32(c, sl, "domainCount", &dc) != 0)
            return -1;
        if (dc < 0)
            return bad(c, "topologyAssignment.slices", "item %zu: domainCount is negative", k);
        total += (size_t)dc;
        if (total > TOPO_MAX_DOMAINS)
            return bad(c, "topologyAssignment.slices", "more than %d domains", TOPO_MAX_DOMAINS);
        void *vals = GET(sl, "valuesPerLevel");
        if (nlev && (TY(vals) != CU_CT_SEQ || T->len(T->ud, vals) < nlev))
            return bad(c, "topologyAssignment.slices",
                       "item %zu: valuesPerLevel has fewer than %zu levels", k, nlev);
        for (size_t i = 0; i < nlev; i++) {
            void *lv = T->at(T->ud, vals, i);
            if (TY(GET(lv, "universal")) == CU_CT_STR)
                continue;
            void *ind = GET(lv, "individual"), *roots = GET(ind, "roots");
            const char *p = NULL, *s = NULL;
            if (TY(ind) != CU_CT_MAP || TY(roots) != CU_CT_SEQ || T->len(T->ud, roots) < (size_t)dc)
                return bad(c, "topologyAssignment.slices",
                           "item %zu: valuesPerLevel[%zu] has no universal value and fewer than "
                           "%lld roots",
                           k, i, (long long)dc);
            if (opt_str(c, ind, "prefix", &p) != 0 || opt_str(c, ind, "suffix", &s) != 0)
                return -1;
            size_t ls = strlen(p ? p : "") + strlen(s ? s : "");
            for (size_t j = 0; j < (size_t)dc; j++) {
                void *r = T->at(T->ud, roots, j);
                if (TY(r) != CU_CT_STR)
                    return bad(c, "topologyAssignment.slices",
                               "item %zu: valuesPerLevel[%zu].individual.roots[%zu] must be a "
                               "string",
                               k, i, j);
                size_t l = ls + strlen(T->str(T->ud, r));
                longest = l > longest ? l : longest;
            }
        }
        void *pc = GET(sl, "podCounts");
        int64_t x;
        if (TY(GET(pc, "universal")) > CU_CT_NULL) {
            if (opt_i32(c, pc, "universal", &x) != 0)
                return -1;
            continue;
        }
        void *ind = GET(pc, "individual");
        if (TY(ind) != CU_CT_SEQ || T->len(T->ud, ind) < (size_t)dc)
            return bad(c, "topologyAssignment.slices",
                       "item %zu: podCounts has no universal count and fewer than %lld "
                       "individual ones",
                       k, (long long)dc);
        for (size_t j = 0; j < (size_t)dc; j++)
            if (T->num(T->ud, T->at(T->ud, ind, j), &x) != 0 || x < INT32_MIN || x > INT32_MAX)
                return bad(c, "topologyAssignment.slices",
                           "item %zu: podCounts.individual[%zu] must be a 32-bit integer", k, j);
    }
    for (size_t k = 0; k < ns; k++) /* universal values are not in longest yet */
        for (size_t i = 0; i < nlev; i++) {
            const char *u =
                T->str(T->ud, GET(T->at(T->ud, GET(T->at(T->ud, slices, k), "valuesPerLevel"), i),
                                  "universal"));
            if (u && strlen(u) > longest)
                longest = strlen(u);
        }
    void *domains = T->new_seq(T->ud);
    char *buf = malloc(longest + 1);
    if (!domains || !buf) {
        free(buf);
        if (domains)
            T->drop(T->ud, domains);
        return oom(c);
    }
    int rc = 0;
    for (size_t k = 0; rc == 0 && k < ns; k++) {
        void *sl = T->at(T->ud, slices, k), *vals = GET(sl, "valuesPerLevel");
        void *pc = GET(sl, "podCounts");
        int64_t dc, uni = 0;
        opt_i32(c, sl, "domainCount", &dc);
        int universal = TY(GET(pc, "universal")) > CU_CT_NULL;
        if (universal)
            opt_i32(c, pc, "universal", &uni);
        for (size_t j = 0; rc == 0 && j < (size_t)dc; j++) {
            void *d = T->new_map(T->ud), *vs = T->new_seq(T->ud);
            if (!d || !vs || T->push(T->ud, domains, d) != 0 ||
                T->set(T->ud, d, "values", vs) != 0) {
                if (vs)
                    T->drop(T->ud, vs);
                if (d)
                    T->drop(T->ud, d);
                rc = oom(c);
                break;
            }
            for (size_t i = 0; rc == 0 && i < nlev; i++) {
                const char *val = slice_value(c, T->at(T->ud, vals, i), j, buf, longest + 1);
                void *s = val ? T->new_str(T->ud, val) : NULL;
                if (!s || T->push(T->ud, vs, s) != 0) {
                    if (s)
                        T->drop(T->ud, s);
                    rc = oom(c);
                }
            }
            int64_t cnt = uni;
            if (!universal)
                T->num(T->ud, T->at(T->ud, GET(pc, "individual"), j), &cnt);
            if (rc == 0)
                rc = put_int(c, d, "count", cnt);
        }
    }
    free(buf);
    if (rc != 0) {
        T->drop(T->ud, domains);
        return rc;
    }
    T->del(T->ud, ta, "domains");
    return put_at(c, ta, "slices", "domains", domains); /* Kueue: [] when there are none */
}

static int topo(cctx *c, void *psa)
{
    void *ta = GET(psa, "topologyAssignment");
    cu_ct_type ty = TY(ta);
    if (ty == CU_CT_NONE || ty == CU_CT_NULL)
        return 0;
    if (ty != CU_CT_MAP)
        return bad(c, "topologyAssignment", "must be an object");
    return c->down ? topo_down(c, ta) : topo_up(c, ta);
}

cu_err cu_conv_topology(const cu_ctree *t, void *ta, int down, cu_buf *err)
{
    cctx cc = { .t = t, .down = down, .manifest = 0, .err = err, .rc = CU_OK }, *c = &cc;
    if (TY(ta) != CU_CT_MAP)
        return CU_OK;
    if (down ? GET(ta, "slices") != NULL : GET(ta, "domains") != NULL) {
        if (down ? topo_down(c, ta) : topo_up(c, ta))
            return c->rc != CU_OK ? c->rc : CU_EINVAL;
    }
    return c->rc;
}

/* ---- MultiKueueCluster: kubeConfig/clusterProfileRef <-> clusterSource ---- */

static int mkc(cctx *c, void *spec)
{
    static const char *const keys[] = { "kubeConfig", "clusterProfileRef" };
    void *from = spec, *cs = NULL;
    if (c->down) {
        cu_ct_type ty = TY(GET(spec, "clusterSource"));
        if (ty != CU_CT_MAP && ty != CU_CT_NONE && ty != CU_CT_NULL)
            return bad(c, "clusterSource", "must be an object");
        from = T->take(T->ud, spec, "clusterSource");
        if (!from)
            return 0;
    } else {
        const char *loc = NULL;
        void *kc = GET(spec, "kubeConfig");
        if (TY(kc) == CU_CT_MAP && opt_str(c, kc, "location", &loc) != 0)
            return -1;
        if (!loc || !*loc) /* Kueue: a kubeConfig without a location is not kept */
            T->del(T->ud, spec, "kubeConfig");
        if (!GET(spec, "kubeConfig") && !GET(spec, "clusterProfileRef"))
            return 0;
        cs = T->new_map(T->ud);
        if (!cs)
            return oom(c);
    }
    void *to = c->down ? spec : cs;
    int rc = 0;
    for (size_t i = 0; i < 2; i++) {
        void *v = T->take(T->ud, from, keys[i]);
        if (v && rc == 0 && T->set(T->ud, to, keys[i], v) != 0)
            rc = oom(c);
        else if (v && rc != 0)
            T->drop(T->ud, v);
    }
    if (c->down) {
        T->drop(T->ud, from);
        return rc;
    }
    if (rc != 0 || T->set(T->ud, spec, "clusterSource", cs) != 0) {
        T->drop(T->ud, cs);
        return oom(c);
    }
    return 0;
}

/* ---- the table ---- */

typedef enum rop { R_OWNED, R_RENAME, R_DROP, R_VALUE, R_FN } rop;
enum {
    F_UP = 1,      /* applies v1beta1 -> v1beta2 */
    F_DOWN = 2,    /* applies v1beta2 -> v1beta1 */
    F_MANIFEST = 4 /* `cueue convert` only, not the webhook */
};

typedef struct rule {
    const char *kind;
    const char *at; /* the map the rule works on: dotted, "x[]" = each item of list x */
    rop op;
    unsigned flags;
    /* OWNED: a field of one version only (F_UP: v1beta1's, F_DOWN:
     * v1beta2's) that a rule below makes from another: found in an object
     * of the other version (unknown there, so Kueue's typed decoding never
     * sees it), the webhook drops it first. RENAME: the v1beta1 and the
     * v1beta2 name. DROP: a field of one version only (F_UP: v1beta1's,
     * F_DOWN: v1beta2's), lost on the way out (and, by the webhook, dropped
     * as unknown on the way in). VALUE (up only): field, v1beta1 value,
     * v1beta2 value. */
    const char *a, *b, *v;
    int (*fn)(cctx *c, void *map);
} rule;

static const rule rules[] = {
    /* first: the fields of the other version (webhook only) */
    { "ClusterQueue", "spec", R_OWNED, F_UP, "admissionChecks", NULL, NULL, NULL },
    { "Workload", "spec", R_OWNED, F_UP, "priorityClassName", NULL, NULL, NULL },
    { "Workload", "spec", R_OWNED, F_UP, "priorityClassSource", NULL, NULL, NULL },
    { "Workload", "spec", R_OWNED, F_DOWN, "priorityClassRef", NULL, NULL, NULL },
    { "Workload", "status.admission.podSetAssignments[].topologyAssignment", R_OWNED, F_UP,
      "domains", NULL, NULL, NULL },
    { "Workload", "status.admission.podSetAssignments[].topologyAssignment", R_OWNED, F_DOWN,
      "slices", NULL, NULL, NULL },
    { "MultiKueueCluster", "spec", R_OWNED, F_UP, "kubeConfig", NULL, NULL, NULL },
    { "MultiKueueCluster", "spec", R_OWNED, F_UP, "clusterProfileRef", NULL, NULL, NULL },
    { "MultiKueueCluster", "spec", R_OWNED, F_DOWN, "clusterSource", NULL, NULL, NULL },
    /* then the conversion */
    { "ClusterQueue", "spec", R_RENAME, F_UP | F_DOWN, "cohort", "cohortName", NULL, NULL },
    { "ClusterQueue", "spec", R_FN, F_UP, NULL, NULL, NULL, acs_up },
    { "ClusterQueue", "spec.flavorFungibility", R_VALUE, F_UP, "whenCanBorrow", "Borrow",
      "MayStopSearch", NULL },
    { "ClusterQueue", "spec.flavorFungibility", R_VALUE, F_UP, "whenCanPreempt", "Preempt",
      "MayStopSearch", NULL },
    { "ClusterQueue", "status", R_DROP, F_UP, "pendingWorkloadsStatus", NULL, NULL, NULL },
    { "ClusterQueue", "status.fairSharing", R_DROP, F_UP, "admissionFairSharingStatus", NULL, NULL,
      NULL },
    { "Cohort", "spec", R_RENAME, F_UP | F_MANIFEST, "parent", "parentName", NULL, NULL },
    { "Cohort", "status.fairSharing", R_DROP, F_UP, "admissionFairSharingStatus", NULL, NULL,
      NULL },
    { "LocalQueue", "status", R_RENAME, F_UP | F_DOWN, "flavorUsage", "flavorsUsage", NULL, NULL },
    { "LocalQueue", "status", R_DROP, F_UP, "flavors", NULL, NULL, NULL },
    { "Workload", "spec", R_FN, F_UP | F_DOWN, NULL, NULL, NULL, prio },
    { "Workload", "spec", R_DROP, F_DOWN, "preemptionGates", NULL, NULL, NULL },
    { "Workload", "spec.podSets[].topologyRequest", R_DROP, F_DOWN,
      "podsetSliceRequiredTopologyConstraints", NULL, NULL, NULL },
    { "Workload", "status", R_RENAME, F_UP | F_DOWN, "accumulatedPastExexcutionTimeSeconds",
      "accumulatedPastExecutionTimeSeconds", NULL, NULL },
    { "Workload", "status", R_DROP, F_DOWN, "preemptionGates", NULL, NULL, NULL },
    { "Workload", "status.admission.podSetAssignments[]", R_FN, F_UP | F_DOWN, NULL, NULL, NULL,
      topo },
    { "AdmissionCheck", "spec", R_DROP, F_UP, "retryDelayMinutes", NULL, NULL, NULL },
    { "MultiKueueCluster", "spec", R_FN, F_UP | F_DOWN, NULL, NULL, NULL, mkc },
};

static int apply(cctx *c, const rule *r, void *m)
{
    const char *from = c->down ? r->b : r->a, *to = c->down ? r->a : r->b;
    switch (r->op) {
    case R_OWNED: T->del(T->ud, m, r->a); return 0;
    case R_RENAME:
        if (!c->manifest) /* the target's name is unknown in the source version */
            T->del(T->ud, m, to);
        if (!GET(m, from))
            return 0;
        if (GET(m, to)) /* cueue convert: given both, the target's own field wins */
            T->del(T->ud, m, from);
        else if (T->rename(T->ud, m, from, to) != 0)
            return oom(c);
        return 0;
    case R_DROP: T->del(T->ud, m, r->a); return 0;
    case R_VALUE: {
        const char *s = T->str(T->ud, GET(m, r->a));
        return s && strcmp(s, r->b) == 0 ? put_str(c, m, r->a, r->v) : 0;
    }
    case R_FN: return r->fn(c, m);
    }
    return 0;
}

/* Walks the dotted path at (from node n) and applies r at each map. */
static int walk(cctx *c, const rule *r, void *n, const char *at)
{
    if (!*at)
        return TY(n) == CU_CT_MAP ? apply(c, r, n) : 0;
    const char *dot = strchr(at, '.');
    size_t sl = dot ? (size_t)(dot - at) : strlen(at);
    char seg[64];
    if (sl >= sizeof(seg))
        return 0;
    memcpy(seg, at, sl);
    seg[sl] = 0;
    int each = sl > 2 && strcmp(seg + sl - 2, "[]") == 0;
    if (each)
        seg[sl - 2] = 0;
    const char *rest = dot ? dot + 1 : "";
    if (TY(n) != CU_CT_MAP)
        return 0;
    void *child = GET(n, seg);
    size_t mark = c->plen;
    int rc = 0;
    if (!each) {
        snprintf(c->path + c->plen, sizeof(c->path) - c->plen, "%s%s", c->plen ? "." : "", seg);
        c->plen = strlen(c->path);
        rc = walk(c, r, child, rest);
    } else if (TY(child) == CU_CT_SEQ) {
        size_t len = T->len(T->ud, child);
        for (size_t i = 0; c->rc == CU_OK && i < len; i++) {
            snprintf(c->path + mark, sizeof(c->path) - mark, "%s%s[%zu]", mark ? "." : "", seg, i);
            c->plen = strlen(c->path);
            rc = walk(c, r, T->at(T->ud, child, i), rest);
        }
    }
    c->plen = mark;
    c->path[mark] = 0;
    return rc;
}

cu_err cu_conv_object(const cu_ctree *t, void *obj, const char *kind, int down, int manifest,
                      cu_buf *err)
{
    cctx c = { .t = t, .down = down, .manifest = manifest, .err = err, .rc = CU_OK };
    if (put_str(&c, obj, "apiVersion", down ? CU_GROUP "/v1beta1" : CU_GROUP "/v1beta2") != 0)
        return c.rc;
    unsigned dir = down ? F_DOWN : F_UP;
    for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
        const rule *r = &rules[i];
        int on = (r->flags & dir) != 0;
        if (r->op == R_OWNED) /* a field of the version converted to */
            on = !manifest && !on;
        else if (r->op == R_DROP && !manifest) /* lost one way, unknown the other */
            on = 1;
        if (!on || ((r->flags & F_MANIFEST) && !manifest) || strcmp(r->kind, kind) != 0)
            continue;
        if (walk(&c, r, obj, r->at) != 0 && c.rc != CU_OK)
            return c.rc;
    }
    return c.rc;
}

/* ------------------------------------------------------------------ */
/* cu_node trees (cueue convert, simulate)                             */

static cu_ct_type n_type(void *ud, void *n)
{
    (void)ud;
    cu_node *x = n;
    if (!x)
        return CU_CT_NONE;
    if (x->type == CU_NODE_MAP)
        return CU_CT_MAP;
    if (x->type == CU_NODE_SEQ)
        return CU_CT_SEQ;
    return cu_node_is_null(x) ? CU_CT_NULL : CU_CT_STR;
}
static void *n_get(void *ud, void *m, const char *k)
{
    (void)ud;
    return cu_node_get(m, k);
}
static const char *n_str(void *ud, void *n)
{
    (void)ud;
    return cu_node_scalar(n);
}
static int n_num(void *ud, void *n, int64_t *out)
{
    (void)ud;
    return cu_node_int(n, out) == CU_OK ? 0 : -1;
}
static size_t n_len(void *ud, void *s)
{
    (void)ud;
    cu_node *x = s;
    return x && x->type == CU_NODE_SEQ ? x->n : 0;
}
static void *n_at(void *ud, void *s, size_t i)
{
    (void)ud;
    cu_node *x = s;
    return x && x->type == CU_NODE_SEQ && i < x->n ? x->vals[i] : NULL;
}
static void n_del(void *ud, void *m, const char *k)
{
    (void)ud;
    cu_node_del(m, k);
}
static void *n_take(void *ud, void *m, const char *k)
{
    (void)ud;
    cu_node *v = cu_node_del(m, k);
    return v && !cu_node_is_null(v) ? v : NULL;
}
static int n_rename(void *ud, void *m, const char *from, const char *to)
{
    return cu_node_rename(ud, m, from, to) ? 0 : -1;
}
static void *n_new_map(void *ud) { return cu_node_new_map(ud); }
static void *n_new_seq(void *ud) { return cu_node_new_seq(ud); }
static void *n_new_str(void *ud, const char *s) { return cu_node_new_str(ud, s); }
static void *n_new_int(void *ud, int64_t v) { return cu_node_new_int(ud, v); }
static int n_set(void *ud, void *m, const char *k, void *v)
{
    return cu_node_set(ud, m, k, v) == CU_OK ? 0 : -1;
}
static int n_push(void *ud, void *s, void *v) { return cu_node_push(ud, s, v) == CU_OK ? 0 : -1; }
static void n_drop(void *ud, void *n)
{
    (void)ud;
    (void)n; /* arena-owned */
}

static const cu_ctree node_tree = { NULL,      n_type,    n_get,  n_str,    n_num,     n_len,
                                    n_at,      n_del,     n_take, n_rename, n_new_map, n_new_seq,
                                    n_new_str, n_new_int, n_set,  n_push,   n_drop };

cu_err cu_conv_topology_node(cu_arena *a, cu_node *ta, int down, cu_buf *err)
{
    cu_ctree t = node_tree;
    t.ud = a;
    return cu_conv_topology(&t, ta, down, err);
}

/* 1 if api is in a Kueue group in a version convert does not know. */
static int kueue_version_unknown(const char *api)
{
    const char *slash = strrchr(api, '/');
    if (!slash)
        return 0;
    size_t glen = (size_t)(slash - api);
    static const char *const groups[] = { CU_GROUP, "config.kueue.x-k8s.io" };
    int kueue = 0;
    for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
        kueue |= strlen(groups[i]) == glen && strncmp(api, groups[i], glen) == 0;
    return kueue && strcmp(slash + 1, "v1beta1") != 0 && strcmp(slash + 1, "v1beta2") != 0;
}

static int conv(cu_arena *a, cu_node *doc, int depth, const char *file, cu_diag *d)
{
    if (!doc || doc->type != CU_NODE_MAP || depth > 8)
        return 0;
    const char *api = cu_node_scalar(cu_node_get(doc, "apiVersion"));
    const char *kind = cu_node_scalar(cu_node_get(doc, "kind"));
    if (!api || !kind)
        return 0;
    size_t kl = strlen(kind);
    if (kl >= 4 && strcmp(kind + kl - 4, "List") == 0) {
        cu_node *items = cu_node_get(doc, "items");
        int changed = 0;
        for (size_t i = 0; items && items->type == CU_NODE_SEQ && i < items->n; i++)
            changed |= conv(a, items->vals[i], depth + 1, file, d);
        return changed;
    }
    if (d && kueue_version_unknown(api))
        cu_diag_unknown_kind(d, file, doc, "passing through");
    if (strcmp(api, CU_GROUP "/v1beta1") != 0)
        return 0;
    cu_ctree t = node_tree;
    t.ud = a;
    return cu_conv_object(&t, doc, kind, 0, 1, NULL) == CU_ENOMEM ? 0 : 1;
}

int cu_convert_v1beta2(cu_arena *a, cu_node *doc) { return conv(a, doc, 0, NULL, NULL); }

int cu_convert_v1beta2_diag(cu_arena *a, cu_node *doc, const char *file, cu_diag *d)
{
    return conv(a, doc, 0, file, d);
}
