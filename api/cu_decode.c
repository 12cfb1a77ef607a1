/*
 * cu_decode.c - the decoding context shared by the object decoders: typed
 * field readers that report errors with the field path, and the sub-structures
 * several kinds share (selectors, tolerations, taints, metadata).
 */
#include "cu_decode_int.h"
#include "cu_names.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cu_dec_err(dctx *c, const char *path, const char *fmt, ...)
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
const char *cu_dec_path(char *buf, const char *base, const char *fmt, ...)
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

void *cu_dec_alloc(dctx *c, size_t n)
{
    if (n == 0)
        return NULL;
    void *p = cu_arena_alloc(c->a, n);
    if (!p)
        c->oom = 1;
    return p;
}

const char *cu_dec_strdup(dctx *c, const char *s)
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
const cu_node *cu_dec_want_map(dctx *c, const cu_node *n, const char *path)
{
    if (!n || cu_node_is_null(n))
        return NULL;
    if (n->type != CU_NODE_MAP) {
        cu_dec_err(c, path, "must be an object");
        return NULL;
    }
    return n;
}

const cu_node *cu_dec_want_seq(dctx *c, const cu_node *n, const char *path)
{
    if (!n || cu_node_is_null(n))
        return NULL;
    if (n->type != CU_NODE_SEQ) {
        cu_dec_err(c, path, "must be a list");
        return NULL;
    }
    return n;
}

/* A string field: NULL when absent or null. */
const char *cu_dec_str(dctx *c, const cu_node *map, const char *key, const char *base)
{
    const cu_node *n = cu_node_get(map, key);
    if (!n || cu_node_is_null(n))
        return NULL;
    if (n->type != CU_NODE_SCALAR) {
        char p[PATHMAX];
        cu_dec_err(c, cu_dec_path(p, base, "%s", key), "must be a string");
        return NULL;
    }
    return cu_dec_strdup(c, n->str);
}

/* An int32 scalar node; returns 1 when present and valid. */
int cu_dec_node_i32(dctx *c, const cu_node *n, const char *path, int32_t *out)
{
    int64_t v;
    if (!n || cu_node_is_null(n))
        return 0;
    if (n->type != CU_NODE_SCALAR || !n->plain || cu_node_int(n, &v) != CU_OK) {
        cu_dec_err(c, path, "must be an integer");
        return 0;
    }
    if (v < INT32_MIN || v > INT32_MAX) {
        cu_dec_err(c, path, "must fit in a 32-bit integer");
        return 0;
    }
    *out = (int32_t)v;
    return 1;
}

int cu_dec_i32(dctx *c, const cu_node *map, const char *key, const char *base, int32_t *out)
{
    char p[PATHMAX];
    return cu_dec_node_i32(c, cu_node_get(map, key), cu_dec_path(p, base, "%s", key), out);
}

/* A bool field; leaves *out alone when absent. */
void cu_dec_bool(dctx *c, const cu_node *map, const char *key, const char *base, int *out)
{
    const cu_node *n = cu_node_get(map, key);
    int v;
    if (!n || cu_node_is_null(n))
        return;
    if (n->type != CU_NODE_SCALAR || !n->plain || cu_node_bool(n, &v) != CU_OK) {
        char p[PATHMAX];
        cu_dec_err(c, cu_dec_path(p, base, "%s", key), "must be a boolean");
        return;
    }
    *out = v;
}

/* A quantity node at scale; returns 1 when present and valid. */
static int dec_node_scaled(dctx *c, const cu_node *n, const char *path, int scale, int64_t *out)
{
    if (!n || cu_node_is_null(n))
        return 0;
    if (n->type != CU_NODE_SCALAR) {
        cu_dec_err(c, path, "must be a quantity");
        return 0;
    }
    cu_err err = cu_qty_parse_scaled(n->str, scale, out, NULL);
    if (err == CU_EOVERFLOW) {
        cu_dec_err(c, path, "quantity \"%s\" is too large", n->str);
        return 0;
    }
    if (err) {
        cu_dec_err(c, path, "invalid quantity \"%s\"", n->str);
        return 0;
    }
    return 1;
}

int cu_dec_node_qty(dctx *c, const cu_node *n, const char *path, int64_t *out)
{
    return dec_node_scaled(c, n, path, CU_QTY_SCALE_MILLI, out);
}

int cu_dec_node_amount(dctx *c, const cu_node *n, const char *path, const char *res, int64_t *out)
{
    return dec_node_scaled(c, n, path, cu_qty_res_scale(res), out);
}

/* An enum field: *out = index into names, or def when absent. */
void cu_dec_enum(dctx *c, const cu_node *map, const char *key, const char *base,
                 const char *const *names, size_t nnames, int def, int *out)
{
    const cu_node *n = cu_node_get(map, key);
    char p[PATHMAX];
    *out = def;
    if (!n || cu_node_is_null(n))
        return;
    cu_dec_path(p, base, "%s", key);
    if (n->type != CU_NODE_SCALAR) {
        cu_dec_err(c, p, "must be a string");
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
        int k =
            snprintf(allowed + len, sizeof(allowed) - len, "%s\"%s\"", len ? ", " : "", names[i]);
        if (k < 0 || (size_t)k >= sizeof(allowed) - len)
            break;
        len += (size_t)k;
    }
    cu_dec_err(c, p, "Unsupported value: \"%s\": supported values: %s", n->str, allowed);
}

/* A string -> string map. */
void cu_dec_kvs(dctx *c, const cu_node *map, const char *key, const char *base, cu_kvs *out)
{
    char p[PATHMAX];
    out->n = 0;
    out->items = NULL;
    const cu_node *m = cu_dec_want_map(c, cu_node_get(map, key), cu_dec_path(p, base, "%s", key));
    if (!m || m->n == 0)
        return;
    out->items = cu_dec_alloc(c, m->n * sizeof(*out->items));
    if (!out->items)
        return;
    for (size_t i = 0; i < m->n; i++) {
        const cu_node *v = m->vals[i];
        const char *s;
        if (v->type != CU_NODE_SCALAR) {
            char q[PATHMAX];
            cu_dec_err(c, cu_dec_path(q, p, "%s", m->keys[i]), "must be a string");
            continue;
        }
        /* an explicit null value reads as "" (Kubernetes decodes it so) */
        s = cu_node_is_null(v) ? "" : v->str;
        out->items[out->n].key = cu_dec_strdup(c, m->keys[i]);
        out->items[out->n].value = cu_dec_strdup(c, s);
        out->n++;
    }
}

/* A list of strings. */
void cu_dec_strs(dctx *c, const cu_node *map, const char *key, const char *base, cu_strs *out)
{
    char p[PATHMAX];
    out->n = 0;
    out->items = NULL;
    const cu_node *s = cu_dec_want_seq(c, cu_node_get(map, key), cu_dec_path(p, base, "%s", key));
    if (!s || s->n == 0)
        return;
    out->items = cu_dec_alloc(c, s->n * sizeof(*out->items));
    if (!out->items)
        return;
    for (size_t i = 0; i < s->n; i++) {
        const char *v = cu_node_scalar(s->vals[i]);
        if (!v || s->vals[i]->type != CU_NODE_SCALAR) {
            char q[PATHMAX];
            cu_dec_err(c, cu_dec_path(q, p, "[%zu]", i), "must be a string");
            continue;
        }
        out->items[out->n++] = cu_dec_strdup(c, v);
    }
}

int cu_res_cmp(const void *a, const void *b)
{
    return strcmp(((const cu_res *)a)->name, ((const cu_res *)b)->name);
}

/* A resource-name -> quantity map into a sorted reslist: amounts in each
 * resource's unit, or (ratios) milli-units. */
static void dec_list(dctx *c, const cu_node *map, const char *key, const char *base,
                     cu_reslist *out, int ratios)
{
    char p[PATHMAX];
    out->n = 0;
    out->items = NULL;
    const cu_node *m = cu_dec_want_map(c, cu_node_get(map, key), cu_dec_path(p, base, "%s", key));
    if (!m || m->n == 0)
        return;
    out->items = cu_dec_alloc(c, m->n * sizeof(*out->items));
    if (!out->items)
        return;
    for (size_t i = 0; i < m->n; i++) {
        char q[PATHMAX];
        int64_t v;
        int scale = ratios ? CU_QTY_SCALE_MILLI : cu_qty_res_scale(m->keys[i]);
        if (!dec_node_scaled(c, m->vals[i], cu_dec_path(q, p, "%s", m->keys[i]), scale, &v))
            continue;
        out->items[out->n].name = cu_dec_strdup(c, m->keys[i]);
        out->items[out->n].milli = v;
        out->n++;
    }
    qsort(out->items, out->n, sizeof(*out->items), cu_res_cmp);
}

void cu_dec_reslist(dctx *c, const cu_node *map, const char *key, const char *base, cu_reslist *out)
{
    dec_list(c, map, key, base, out, 0);
}

void cu_dec_milli_list(dctx *c, const cu_node *map, const char *key, const char *base,
                       cu_reslist *out)
{
    dec_list(c, map, key, base, out, 1);
}

/* ------------------------------------------------------------------ */
/* shared sub-structures                                               */

static const char *const sel_ops[] = { "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt" };

const char *cu_selop_name(cu_selop op)
{
    return (unsigned)op < sizeof(sel_ops) / sizeof(sel_ops[0]) ? sel_ops[op] : "?";
}

void cu_dec_selreqs(dctx *c, const cu_node *seq, const char *path, int allow_gtlt, size_t *nout,
                    cu_selreq **out)
{
    *nout = 0;
    *out = NULL;
    if (!seq || seq->n == 0)
        return;
    *out = cu_dec_alloc(c, seq->n * sizeof(**out));
    if (!*out)
        return;
    for (size_t i = 0; i < seq->n; i++) {
        char p[PATHMAX];
        cu_dec_path(p, path, "[%zu]", i);
        const cu_node *e = cu_dec_want_map(c, seq->vals[i], p);
        if (!e) {
            if (cu_node_is_null(seq->vals[i]))
                cu_dec_err(c, p, "must be an object");
            continue;
        }
        cu_selreq *r = &(*out)[*nout];
        int op;
        r->key = cu_dec_str(c, e, "key", p);
        if (!r->key) {
            char q[PATHMAX];
            cu_dec_err(c, cu_dec_path(q, p, "key"), "Required value");
        }
        if (!cu_node_get(e, "operator") || cu_node_is_null(cu_node_get(e, "operator"))) {
            char q[PATHMAX];
            cu_dec_err(c, cu_dec_path(q, p, "operator"), "Required value");
            continue;
        }
        cu_dec_enum(c, e, "operator", p, sel_ops, allow_gtlt ? 6 : 4, -1, &op);
        if (op < 0)
            continue;
        r->op = (cu_selop)op;
        cu_dec_strs(c, e, "values", p, &r->values);
        (*nout)++;
    }
}

void cu_dec_labelsel(dctx *c, const cu_node *map, const char *key, const char *base,
                     cu_labelsel *out)
{
    char p[PATHMAX];
    memset(out, 0, sizeof(*out));
    const cu_node *m = cu_dec_want_map(c, cu_node_get(map, key), cu_dec_path(p, base, "%s", key));
    if (!m) {
        out->is_null = 1;
        return;
    }
    cu_dec_kvs(c, m, "matchLabels", p, &out->match_labels);
    char q[PATHMAX];
    const cu_node *ex = cu_dec_want_seq(c, cu_node_get(m, "matchExpressions"),
                                        cu_dec_path(q, p, "matchExpressions"));
    cu_dec_selreqs(c, ex, q, 0, &out->nexpr, &out->exprs);
}

static const char *const tol_ops[] = { "Equal", "Exists" };

void cu_dec_tolerations(dctx *c, const cu_node *map, const char *key, const char *base,
                        size_t *nout, cu_toleration **out)
{
    char p[PATHMAX];
    *nout = 0;
    *out = NULL;
    const cu_node *s = cu_dec_want_seq(c, cu_node_get(map, key), cu_dec_path(p, base, "%s", key));
    if (!s || s->n == 0)
        return;
    *out = cu_dec_alloc(c, s->n * sizeof(**out));
    if (!*out)
        return;
    for (size_t i = 0; i < s->n; i++) {
        char q[PATHMAX];
        cu_dec_path(q, p, "[%zu]", i);
        const cu_node *t = cu_dec_want_map(c, s->vals[i], q);
        if (!t)
            continue;
        cu_toleration *tol = &(*out)[*nout];
        int op;
        tol->key = cu_dec_str(c, t, "key", q);
        cu_dec_enum(c, t, "operator", q, tol_ops, 2, CU_TOL_EQUAL, &op);
        tol->op = (cu_tolop)op;
        tol->value = cu_dec_str(c, t, "value", q);
        tol->effect = cu_dec_str(c, t, "effect", q);
        (*nout)++;
    }
}

void cu_dec_taints(dctx *c, const cu_node *map, const char *key, const char *base, size_t *nout,
                   cu_taint **out)
{
    char p[PATHMAX];
    *nout = 0;
    *out = NULL;
    const cu_node *s = cu_dec_want_seq(c, cu_node_get(map, key), cu_dec_path(p, base, "%s", key));
    if (!s || s->n == 0)
        return;
    *out = cu_dec_alloc(c, s->n * sizeof(**out));
    if (!*out)
        return;
    for (size_t i = 0; i < s->n; i++) {
        char q[PATHMAX];
        cu_dec_path(q, p, "[%zu]", i);
        const cu_node *t = cu_dec_want_map(c, s->vals[i], q);
        if (!t)
            continue;
        cu_taint *tn = &(*out)[*nout];
        tn->key = cu_dec_str(c, t, "key", q);
        tn->value = cu_dec_str(c, t, "value", q);
        tn->effect = cu_dec_str(c, t, "effect", q);
        (*nout)++;
    }
}

/* ------------------------------------------------------------------ */
/* metadata                                                            */

/* Fills m from the document's metadata (name already checked). */
void cu_dec_meta(dctx *c, const cu_node *root, const char *api, const char *name, int namespaced,
                 cu_meta *m)
{
    const cu_node *md = cu_dec_want_map(c, cu_node_get(root, "metadata"), "metadata");
    m->api_version = cu_dec_strdup(c, api);
    m->name = cu_dec_strdup(c, name);
    m->ns = NULL;
    if (namespaced) {
        const char *ns = cu_dec_str(c, md, "namespace", "metadata");
        m->ns = ns && *ns ? ns : cu_dec_strdup(c, "default");
    }
    m->uid = cu_dec_str(c, md, "uid", "metadata");
    cu_dec_kvs(c, md, "labels", "metadata", &m->labels);
    cu_dec_kvs(c, md, "annotations", "metadata", &m->annotations);
    const cu_node *ct = cu_node_get(md, "creationTimestamp");
    if (ct && !cu_node_is_null(ct)) {
        if (ct->type != CU_NODE_SCALAR || cu_time_parse(ct->str, &m->created_ms) != CU_OK)
            cu_dec_err(c, "metadata.creationTimestamp", "invalid time \"%s\"",
                       ct->type == CU_NODE_SCALAR ? ct->str : "");
        else
            m->has_created = 1;
    }
    const cu_node *dt = cu_node_get(md, "deletionTimestamp");
    m->deleting = dt && !cu_node_is_null(dt);
    m->file = c->file;
    m->line = root->line;
    m->seq = c->w->nseq++;
}
