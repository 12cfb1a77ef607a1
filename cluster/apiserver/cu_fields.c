/*
 * cu_fields.c - field management (metadata.managedFields) and server-side
 * apply with ownership, after the Kubernetes "Server-Side Apply" rules:
 *  - an Update takes the fields whose values it added or changed away from
 *    every other manager; fields it removed leave every manager's set;
 *  - an Apply's set is exactly what its configuration specifies; a field
 *    of that set owned by another manager with a different live value is
 *    a conflict (unless forced, then ownership moves); the same value is
 *    shared ownership; fields the applier applied before, no longer
 *    applies and nobody else owns are removed from the object.
 *
 * Sets are FieldsV1 tries (json-c objects). Work is linear in the size of
 * the objects involved: lists are matched through a key index, never by
 * pairwise scans.
 */
#include "cu_fields.h"

#include "cu_base.h"
#include "cu_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DOT "."

/* ------------------------------------------------------------------ */
/* tries                                                                */

static int is_obj(json_object *o) { return o && json_object_is_type(o, json_type_object); }
static int is_arr(json_object *o) { return o && json_object_is_type(o, json_type_array); }

static int has_dot(json_object *n) { return cu_jget(n, DOT) != NULL; }

/* A node is a member when it is a leaf or holds ".". */
static int is_member(json_object *n)
{
    return n && (json_object_object_length(n) == 0 || has_dot(n));
}

static int has_kids(json_object *n)
{
    return n && json_object_object_length(n) > (has_dot(n) ? 1 : 0);
}

static json_object *node_child(json_object *n, const char *k)
{
    json_object *c = cu_jget(n, k);
    if (!c) {
        c = json_object_new_object();
        json_object_object_add(n, k, c);
    }
    return c;
}

static void mark(json_object *n)
{
    if (!has_dot(n))
        json_object_object_add(n, DOT, json_object_new_object());
}

static void fset_union(json_object *dst, json_object *src, int root)
{
    if (!dst || !src)
        return;
    int m = !root && (is_member(dst) || is_member(src));
    json_object_object_foreach (src, k, v) {
        if (strcmp(k, DOT) == 0)
            continue;
        json_object *d = cu_jget(dst, k);
        if (!d) {
            json_object *c = NULL;
            json_object_deep_copy(v, &c, NULL);
            json_object_object_add(dst, k, c);
        } else {
            fset_union(d, v, 0);
        }
    }
    if (m && has_kids(dst))
        mark(dst);
}

void cu_fset_union(json_object *dst, json_object *src)
{
    fset_union(dst, src, 1); /* the root of a set is never a member */
}

int cu_fset_subtract(json_object *dst, json_object *src)
{
    int changed = 0;
    if (!dst || !src)
        return 0;
    json_object_object_foreach (src, k, s) {
        if (strcmp(k, DOT) == 0)
            continue;
        json_object *d = cu_jget(dst, k);
        if (!d)
            continue;
        if (json_object_object_length(d) == 0) {
            if (is_member(s)) {
                json_object_object_del(dst, k);
                changed = 1;
            }
            continue;
        }
        changed |= cu_fset_subtract(d, s);
        if (is_member(s) && has_dot(d)) {
            json_object_object_del(d, DOT);
            changed = 1;
        }
        if (json_object_object_length(d) == 0)
            json_object_object_del(dst, k);
    }
    return changed;
}

size_t cu_fset_count(json_object *set)
{
    size_t n = 0;
    json_object_object_foreach (set, k, v) {
        if (strcmp(k, DOT) == 0)
            continue;
        n += (size_t)is_member(v) + cu_fset_count(v);
    }
    return n;
}

int cu_fset_has(json_object *set, const char *const *keys)
{
    json_object *n = set;
    for (size_t i = 0; keys[i]; i++) {
        n = cu_jget(n, keys[i]);
        if (!n)
            return 0;
    }
    return n != set && is_member(n);
}

static int pe_rank(const char *k)
{
    switch (k[0]) {
    case '.': return 0;
    case 'f': return 1;
    case 'k': return 2;
    case 'v': return 3;
    default: return 4;
    }
}

static int pe_cmp(const void *a, const void *b)
{
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    int rx = pe_rank(x), ry = pe_rank(y);
    return rx != ry ? rx - ry : strcmp(x, y);
}

/* Sorts (rebuilding the object when the order is off) and turns a lone
 * "." into a leaf. */
void cu_fset_sort(json_object *set)
{
    size_t n = (size_t)json_object_object_length(set);
    if (n == 1 && has_dot(set)) {
        json_object_object_del(set, DOT);
        return;
    }
    if (n == 0)
        return;
    const char *small[32];
    const char **keys = n <= 32 ? small : malloc(n * sizeof *keys);
    if (!keys)
        return;
    size_t i = 0, sorted = 1;
    json_object_object_foreach (set, k, v) {
        cu_fset_sort(v);
        keys[i] = k;
        if (i && pe_cmp(&keys[i - 1], &keys[i]) > 0)
            sorted = 0;
        i++;
    }
    if (!sorted) {
        qsort(keys, n, sizeof *keys, pe_cmp);
        json_object *tmp = json_object_new_object();
        for (i = 0; i < n; i++)
            json_object_object_add(tmp, keys[i], json_object_get(cu_jget(set, keys[i])));
        /* keys point into set: empty it only after copying them out */
        char **names = malloc(n * sizeof *names);
        for (i = 0; names && i < n; i++)
            names[i] = strdup(keys[i]);
        for (i = 0; names && i < n; i++)
            json_object_object_del(set, names[i]);
        json_object_object_foreach (tmp, k2, v2)
            json_object_object_add(set, k2, json_object_get(v2));
        for (i = 0; names && i < n; i++)
            free(names[i]);
        free(names);
        json_object_put(tmp);
    }
    if (keys != small)
        free(keys);
}

/* ------------------------------------------------------------------ */
/* the oracle                                                           */

static const char META_TAG = 'm';
#define META_POS ((const void *)&META_TAG)

static void schema_member(void *ud, const void *pos, const char *key, cu_fkind *out)
{
    (void)ud;
    json_object *s = (json_object *)pos, *c = cu_jget(cu_jget(s, "properties"), key);
    if (!c) {
        json_object *ap = cu_jget(s, "additionalProperties");
        c = is_obj(ap) ? ap : NULL;
    }
    if (!c)
        return;
    const char *t = cu_jstr(c, "type");
    if (t && strcmp(t, "array") == 0) {
        const char *lt = cu_jstr(c, "x-kubernetes-list-type");
        json_object *keys = cu_jget(c, "x-kubernetes-list-map-keys");
        if (lt && strcmp(lt, "map") == 0 && is_arr(keys) && json_object_array_length(keys) > 0) {
            out->list = CU_LIST_MAP;
            for (size_t i = 0; i < json_object_array_length(keys) && i < 4; i++)
                out->keys[out->nkeys++] =
                    json_object_get_string(json_object_array_get_idx(keys, i));
        } else if (lt && strcmp(lt, "set") == 0) {
            out->list = CU_LIST_SET;
        }
        out->pos = cu_jget(c, "items");
        return;
    }
    const char *mt = cu_jstr(c, "x-kubernetes-map-type");
    out->atomic = mt && strcmp(mt, "atomic") == 0;
    out->map_entries = !cu_jget(c, "properties") && is_obj(cu_jget(c, "additionalProperties"));
    out->pos = c;
}

void cu_fields_schema_oracle(json_object *schema, cu_field_oracle *out)
{
    out->member = schema ? schema_member : NULL;
    out->ud = NULL;
    out->root = schema;
}

static const char *const meta_skip[] = { "name",
                                         "namespace",
                                         "uid",
                                         "resourceVersion",
                                         "generation",
                                         "creationTimestamp",
                                         "selfLink",
                                         "managedFields",
                                         "deletionTimestamp",
                                         "deletionGracePeriodSeconds",
                                         "clusterName",
                                         NULL };

static int str_in(const char *const *v, const char *s)
{
    for (; *v; v++)
        if (strcmp(*v, s) == 0)
            return 1;
    return 0;
}

/* Describes member key of the object at pos (depth 0 = the root). Returns
 * 0 when the member is not tracked (identity, out of scope). */
static int member_kind(const cu_field_oracle *o, const void *pos, int depth, int scope,
                       const char *key, cu_fkind *out)
{
    memset(out, 0, sizeof *out);
    if (depth == 0) {
        if (strcmp(key, "apiVersion") == 0 || strcmp(key, "kind") == 0)
            return 0;
        int st = strcmp(key, "status") == 0;
        if ((scope == CU_SCOPE_STATUS && !st) || (scope == CU_SCOPE_NO_STATUS && st))
            return 0;
        if (strcmp(key, "metadata") == 0) {
            out->pos = META_POS;
            return 1;
        }
    }
    if (pos == META_POS) {
        if (str_in(meta_skip, key))
            return 0;
        if (strcmp(key, "labels") == 0 || strcmp(key, "annotations") == 0)
            out->map_entries = 1;
        else if (strcmp(key, "finalizers") == 0)
            out->list = CU_LIST_SET;
        else if (strcmp(key, "ownerReferences") == 0) {
            out->list = CU_LIST_MAP;
            out->keys[0] = "uid";
            out->nkeys = 1;
        }
        return 1;
    }
    if (o && o->member && (pos || depth == 0))
        o->member(o->ud, depth == 0 ? o->root : pos, key, out);
    return 1;
}

/* ------------------------------------------------------------------ */
/* path elements of list items                                          */

static int is_scalar(json_object *v) { return !v || (!is_obj(v) && !is_arr(v)); }

static int key_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* "k:{...}" for a list-map item (keys sorted), "v:..." for a set item.
 * Returns 0 when the item cannot be named (missing key, non-scalar set
 * item). buf gets the element. */
static int item_pe(json_object *item, const cu_fkind *k, char *buf, size_t n)
{
    if (k->list == CU_LIST_SET) {
        if (!is_scalar(item) || !item)
            return 0;
        snprintf(buf, n, "v:%s",
                 json_object_to_json_string_ext(item, JSON_C_TO_STRING_PLAIN |
                                                          JSON_C_TO_STRING_NOSLASHESCAPE));
        return 1;
    }
    if (!is_obj(item) || k->nkeys == 0)
        return 0;
    const char *names[4];
    for (size_t i = 0; i < k->nkeys; i++)
        names[i] = k->keys[i];
    qsort(names, k->nkeys, sizeof *names, key_cmp);
    size_t l = (size_t)snprintf(buf, n, "k:{");
    for (size_t i = 0; i < k->nkeys && l < n; i++) {
        json_object *v = cu_jget(item, names[i]);
        if (!v || !is_scalar(v))
            return 0;
        char ks[512];
        json_object *ko = json_object_new_string(names[i]);
        snprintf(ks, sizeof ks, "%s", json_object_to_json_string_ext(ko, JSON_C_TO_STRING_PLAIN));
        json_object_put(ko);
        l += (size_t)snprintf(buf + l, n - l, "%s%s:%s", i ? "," : "", ks,
                              json_object_to_json_string_ext(
                                  v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    }
    if (l + 2 >= n)
        return 0;
    buf[l++] = '}';
    buf[l] = '\0';
    return 1;
}

/* A list is granular (map or set) only when every item can be named
 * and no name repeats; an index pe -> item position is returned (new
 * object, caller puts) or NULL (treat the list as atomic). */
static json_object *list_index(json_object *list, const cu_fkind *k)
{
    if (!is_arr(list) || k->list == CU_LIST_ATOMIC)
        return NULL;
    json_object *idx = json_object_new_object();
    size_t n = json_object_array_length(list);
    char pe[1024];
    for (size_t i = 0; i < n; i++) {
        if (!item_pe(json_object_array_get_idx(list, i), k, pe, sizeof pe) || cu_jget(idx, pe)) {
            json_object_put(idx);
            return NULL;
        }
        json_object_object_add(idx, pe, json_object_new_int64((int64_t)i));
    }
    return idx;
}

/* ------------------------------------------------------------------ */
/* sets of objects                                                      */

static void set_of_value(json_object *v, const cu_field_oracle *o, const cu_fkind *k, int dots,
                         json_object *node);

static void set_of_obj(json_object *obj, const cu_field_oracle *o, const void *pos, int depth,
                       int scope, int map_entries, int dots, json_object *node)
{
    json_object_object_foreach (obj, key, v) {
        cu_fkind k;
        if (!v || !member_kind(o, pos, depth, scope, key, &k))
            continue;
        char pe[1024];
        snprintf(pe, sizeof pe, "f:%s", key);
        json_object *c = node_child(node, pe);
        set_of_value(v, o, &k, dots, c);
        if ((map_entries || dots) && (is_obj(v) || is_arr(v)) && has_kids(c))
            mark(c);
    }
    if (depth == 0 && is_obj(cu_jget(node, "f:metadata")) &&
        json_object_object_length(cu_jget(node, "f:metadata")) == 0)
        json_object_object_del(node, "f:metadata");
}

static void set_of_value(json_object *v, const cu_field_oracle *o, const cu_fkind *k, int dots,
                         json_object *node)
{
    if (is_obj(v)) {
        if (!k->atomic)
            set_of_obj(v, o, k->pos, 1, CU_SCOPE_ALL, k->map_entries, dots, node);
        return;
    }
    json_object *idx = is_arr(v) ? list_index(v, k) : NULL;
    if (!idx)
        return; /* a leaf: scalar, atomic list */
    json_object_object_foreach (idx, pe, pos) {
        json_object *item = json_object_array_get_idx(v, (size_t)json_object_get_int64(pos));
        json_object *c = node_child(node, pe);
        if (is_obj(item))
            set_of_obj(item, o, k->pos, 1, CU_SCOPE_ALL, 0, dots, c);
        mark(c);
    }
    json_object_put(idx);
}

json_object *cu_fields_of(json_object *obj, const cu_field_oracle *o, int scope)
{
    json_object *set = json_object_new_object();
    if (is_obj(obj))
        set_of_obj(obj, o, o ? o->root : NULL, 0, scope, 0, 0, set);
    return set;
}

/* ---- update diff ---- */

typedef struct diff_ctx {
    const cu_field_oracle *o;
    int scope;
} diff_ctx;

static void diff_value(diff_ctx *d, json_object *ov, json_object *nv, const cu_fkind *k,
                       json_object *ch, json_object *rm, const char *pe);

static void diff_obj(diff_ctx *d, json_object *ov, json_object *nv, const void *pos, int depth,
                     int scope, json_object *ch, json_object *rm)
{
    char pe[1024];
    json_object_object_foreach (nv, key, v) {
        cu_fkind k;
        if (!member_kind(d->o, pos, depth, scope, key, &k))
            continue;
        json_object *old = cu_jget(ov, key);
        if (!v && !old)
            continue;
        snprintf(pe, sizeof pe, "f:%s", key);
        diff_value(d, old, v, &k, ch, rm, pe);
    }
    json_object_object_foreach (ov, key2, v2) {
        cu_fkind k;
        if (cu_jget(nv, key2) || !member_kind(d->o, pos, depth, scope, key2, &k))
            continue;
        if (json_object_object_get_ex(nv, key2, NULL))
            continue;
        snprintf(pe, sizeof pe, "f:%s", key2);
        json_object *c = node_child(rm, pe);
        set_of_value(v2, d->o, &k, 1, c);
        mark(c);
    }
}

static void diff_value(diff_ctx *d, json_object *ov, json_object *nv, const cu_fkind *k,
                       json_object *ch, json_object *rm, const char *pe)
{
    if (!nv) { /* explicit null: a leaf */
        if (ov)
            json_object_object_add(node_child(ch, pe), DOT, json_object_new_object());
        return;
    }
    if (is_obj(nv) && !k->atomic) {
        if (!is_obj(ov)) {
            json_object *c = node_child(ch, pe);
            set_of_value(nv, d->o, k, 1, c);
            mark(c);
            if (ov) { /* a leaf became an object: the leaf's owners lose it */
                mark(node_child(rm, pe));
            }
            return;
        }
        json_object *c = node_child(ch, pe), *r = node_child(rm, pe);
        diff_obj(d, ov, nv, k->pos, 1, CU_SCOPE_ALL, c, r);
        if (json_object_object_length(c) == 0)
            json_object_object_del(ch, pe);
        if (json_object_object_length(r) == 0)
            json_object_object_del(rm, pe);
        return;
    }
    if (is_arr(nv) && k->list != CU_LIST_ATOMIC && is_arr(ov)) {
        json_object *ni = list_index(nv, k), *oi = ni ? list_index(ov, k) : NULL;
        if (ni && oi) {
            json_object *c = node_child(ch, pe), *r = node_child(rm, pe);
            json_object_object_foreach (ni, ipe, ip) {
                json_object *item =
                    json_object_array_get_idx(nv, (size_t)json_object_get_int64(ip));
                json_object *op = cu_jget(oi, ipe);
                if (!op) {
                    json_object *ic = node_child(c, ipe);
                    if (is_obj(item))
                        set_of_obj(item, d->o, k->pos, 1, CU_SCOPE_ALL, 0, 1, ic);
                    mark(ic);
                    continue;
                }
                json_object *old = json_object_array_get_idx(ov, (size_t)json_object_get_int64(op));
                if (is_obj(item) && is_obj(old)) {
                    json_object *ic = node_child(c, ipe), *ir = node_child(r, ipe);
                    diff_obj(d, old, item, k->pos, 1, CU_SCOPE_ALL, ic, ir);
                    if (json_object_object_length(ic) == 0)
                        json_object_object_del(c, ipe);
                    if (json_object_object_length(ir) == 0)
                        json_object_object_del(r, ipe);
                }
            }
            json_object_object_foreach (oi, ope, op2) {
                if (cu_jget(ni, ope))
                    continue;
                json_object *old =
                    json_object_array_get_idx(ov, (size_t)json_object_get_int64(op2));
                json_object *ir = node_child(r, ope);
                if (is_obj(old))
                    set_of_obj(old, d->o, k->pos, 1, CU_SCOPE_ALL, 0, 1, ir);
                mark(ir);
            }
            if (json_object_object_length(c) == 0)
                json_object_object_del(ch, pe);
            if (json_object_object_length(r) == 0)
                json_object_object_del(rm, pe);
            json_object_put(ni);
            json_object_put(oi);
            return;
        }
        json_object_put(ni);
        json_object_put(oi);
    }
    if (is_arr(nv) && !is_arr(ov)) {
        json_object *c = node_child(ch, pe);
        set_of_value(nv, d->o, k, 1, c);
        if (has_kids(c))
            mark(c);
        if (ov && is_obj(ov)) {
            json_object *r = node_child(rm, pe);
            set_of_value(ov, d->o, k, 1, r);
        }
        return;
    }
    /* a leaf (scalar, atomic list or map) */
    if (ov && json_object_equal(ov, nv))
        return;
    json_object_object_add(node_child(ch, pe), DOT, json_object_new_object());
    if (is_obj(ov) && !k->atomic) {
        json_object *r = node_child(rm, pe);
        set_of_value(ov, d->o, k, 1, r);
        if (json_object_object_length(r) == 0)
            json_object_object_del(rm, pe);
    }
}

void cu_fields_diff(json_object *old, json_object *nw, const cu_field_oracle *o, int scope,
                    json_object **changed, json_object **removed)
{
    diff_ctx d = { o, scope };
    *changed = json_object_new_object();
    *removed = json_object_new_object();
    if (!is_obj(old))
        set_of_obj(nw, o, o ? o->root : NULL, 0, scope, 0, 1, *changed);
    else
        diff_obj(&d, old, nw, o ? o->root : NULL, 0, scope, *changed, *removed);
    /* metadata itself is never owned */
    json_object *m = cu_jget(*changed, "f:metadata");
    if (m)
        json_object_object_del(m, DOT);
    if (m && json_object_object_length(m) == 0)
        json_object_object_del(*changed, "f:metadata");
}

/* ------------------------------------------------------------------ */
/* managedFields entries                                                */

typedef struct fm_ent {
    char *manager, *op, *api_version, *time, *sub;
    json_object *set; /* owned */
    int touched;      /* its set changed */
} fm_ent;

typedef struct fm_list {
    fm_ent *v;
    size_t n, cap;
} fm_list;

static char *dupz(const char *s) { return strdup(s ? s : ""); }

static void fm_free(fm_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        fm_ent *e = &l->v[i];
        free(e->manager);
        free(e->op);
        free(e->api_version);
        free(e->time);
        free(e->sub);
        json_object_put(e->set);
    }
    free(l->v);
    memset(l, 0, sizeof *l);
}

static fm_ent *fm_add(fm_list *l, const char *manager, const char *op, const char *av,
                      const char *time, const char *sub, json_object *set)
{
    if (cu_vec_reserve(&l->v, l->n, &l->cap, sizeof(*l->v), 4)) {
        json_object_put(set);
        return NULL;
    }
    fm_ent *e = &l->v[l->n++];
    memset(e, 0, sizeof *e);
    e->manager = dupz(manager);
    e->op = dupz(op);
    e->api_version = dupz(av);
    e->time = time ? strdup(time) : NULL;
    e->sub = dupz(sub);
    e->set = set ? set : json_object_new_object();
    return e;
}

/* A set is as deep as the fields it names: any depth an object may have
 * (CU_JSON_MAX_DEPTH) is valid, or a deep object could be created but
 * never updated. */
static int valid_trie(json_object *t, int depth)
{
    if (!is_obj(t) || depth > CU_JSON_MAX_DEPTH)
        return 0;
    json_object_object_foreach (t, k, v) {
        if (strcmp(k, DOT) == 0) {
            if (!is_obj(v) || json_object_object_length(v))
                return 0;
            continue;
        }
        /* "f:" alone names a field with an empty name (a map key may be
         * ""); k:, v: and i: always carry a value */
        size_t kl = strlen(k);
        if (kl < 2 || k[1] != ':' || !strchr("fkvi", k[0]) || (k[0] != 'f' && kl < 3) ||
            !valid_trie(v, depth + 1))
            return 0;
    }
    return 1;
}

/* Decodes an array of entries. Returns 0, or -1 with err naming the
 * field. */
static int fm_decode(json_object *arr, fm_list *out, char *err, size_t errn)
{
    memset(out, 0, sizeof *out);
    if (!arr)
        return 0;
    if (!is_arr(arr)) {
        snprintf(err, errn, "metadata.managedFields: Invalid value: must be a list of entries");
        return -1;
    }
    for (size_t i = 0; i < json_object_array_length(arr); i++) {
        json_object *e = json_object_array_get_idx(arr, i);
        const char *op = cu_jstr(e, "operation"), *ft = cu_jstr(e, "fieldsType");
        json_object *f = cu_jget(e, "fieldsV1");
        if (!is_obj(e)) {
            snprintf(err, errn, "metadata.managedFields[%zu]: Invalid value: must be an object", i);
            goto bad;
        }
        if (!op || (strcmp(op, "Apply") && strcmp(op, "Update"))) {
            snprintf(err, errn,
                     "metadata.managedFields[%zu].operation: Unsupported value: \"%s\": "
                     "supported values: \"Apply\", \"Update\"",
                     i, op ? op : "");
            goto bad;
        }
        if (!ft || strcmp(ft, "FieldsV1")) {
            snprintf(err, errn,
                     "metadata.managedFields[%zu].fieldsType: Invalid value: \"%s\": must be "
                     "`FieldsV1`",
                     i, ft ? ft : "");
            goto bad;
        }
        if (f && !valid_trie(f, 0)) {
            snprintf(err, errn,
                     "metadata.managedFields[%zu].fieldsV1: Invalid value: not a valid FieldsV1 "
                     "set",
                     i);
            goto bad;
        }
        const char *sub = cu_jstr(e, "subresource");
        json_object *set = NULL;
        if (f)
            json_object_deep_copy(f, &set, NULL);
        fm_add(out, cu_jstr(e, "manager"), op, cu_jstr(e, "apiVersion"), cu_jstr(e, "time"), sub,
               set);
    }
    return 0;
bad:
    fm_free(out);
    return -1;
}

static fm_ent *fm_find(fm_list *l, const char *manager, const char *op, const char *sub)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i].manager, manager) == 0 && strcmp(l->v[i].op, op) == 0 &&
            strcmp(l->v[i].sub, sub ? sub : "") == 0)
            return &l->v[i];
    return NULL;
}

static int ent_cmp(const void *a, const void *b)
{
    const fm_ent *x = a, *y = b;
    int c = strcmp(x->op, y->op);
    if (c)
        return c;
    c = strcmp(x->time ? x->time : "", y->time ? y->time : "");
    if (c)
        return c;
    return strcmp(x->manager, y->manager);
}

/* Encodes the entries into meta.managedFields (deleted when none). Empty
 * Update entries are dropped. */
static void fm_encode(fm_list *l, json_object *meta)
{
    if (l->n > 1)
        qsort(l->v, l->n, sizeof *l->v, ent_cmp);
    json_object *arr = json_object_new_array();
    for (size_t i = 0; i < l->n; i++) {
        fm_ent *e = &l->v[i];
        if (json_object_object_length(e->set) == 0 && strcmp(e->op, "Apply"))
            continue;
        json_object *o = json_object_new_object();
        json_object_object_add(o, "manager", json_object_new_string(e->manager));
        json_object_object_add(o, "operation", json_object_new_string(e->op));
        json_object_object_add(o, "apiVersion", json_object_new_string(e->api_version));
        if (e->time)
            json_object_object_add(o, "time", json_object_new_string(e->time));
        json_object_object_add(o, "fieldsType", json_object_new_string("FieldsV1"));
        cu_fset_sort(e->set);
        json_object_object_add(o, "fieldsV1", json_object_get(e->set));
        if (e->sub[0])
            json_object_object_add(o, "subresource", json_object_new_string(e->sub));
        json_object_array_add(arr, o);
    }
    if (json_object_array_length(arr))
        json_object_object_add(meta, "managedFields", arr);
    else {
        json_object_put(arr);
        json_object_object_del(meta, "managedFields");
    }
}

static json_object *meta_of(json_object *o)
{
    json_object *m = cu_jget(o, "metadata");
    if (!is_obj(m) && is_obj(o)) {
        m = json_object_new_object();
        json_object_object_add(o, "metadata", m);
    }
    return m;
}

/* [{}] (every entry empty) clears tracking. */
static int clears(json_object *arr)
{
    if (!is_arr(arr) || json_object_array_length(arr) == 0)
        return 0;
    for (size_t i = 0; i < json_object_array_length(arr); i++) {
        json_object *e = json_object_array_get_idx(arr, i);
        if (!is_obj(e) || json_object_object_length(e))
            return 0;
    }
    return 1;
}

/* The entries a write starts from: the client's own (when it changed
 * them), else the live ones. Returns 1 = tracking cleared, 0 = ok, -1 =
 * invalid. */
static int base_entries(json_object *old, json_object *nw, fm_list *l, char *err, size_t errn)
{
    json_object *om = cu_jget(cu_jget(old, "metadata"), "managedFields");
    json_object *nm = cu_jget(cu_jget(nw, "metadata"), "managedFields");
    if (clears(nm))
        return 1;
    json_object *src = om;
    if (is_arr(nm) ? json_object_array_length(nm) > 0 : nm != NULL)
        src = nm;
    if (src == nm && om && json_object_equal(nm, om))
        src = om;
    return fm_decode(src, l, err, errn);
}

int cu_fields_update(json_object *old, json_object *nw, const cu_field_oracle *o, int scope,
                     const cu_fm_req *r, char *err, size_t errn)
{
    fm_list l;
    json_object *meta = meta_of(nw);
    if (!meta)
        return 0;
    int b = base_entries(old, nw, &l, err, errn);
    if (b < 0)
        return -1;
    if (b == 1) {
        json_object_object_del(meta, "managedFields");
        return 0;
    }
    json_object *ch = NULL, *rm = NULL;
    cu_fields_diff(old, nw, o, scope, &ch, &rm);
    int any = json_object_object_length(ch) || json_object_object_length(rm);
    const char *sub = r->subresource ? r->subresource : "";
    for (size_t i = 0; any && i < l.n; i++) {
        fm_ent *e = &l.v[i];
        int self = strcmp(e->manager, r->manager) == 0 && strcmp(e->op, "Update") == 0 &&
                   strcmp(e->sub, sub) == 0;
        e->touched |= cu_fset_subtract(e->set, rm);
        if (!self)
            e->touched |= cu_fset_subtract(e->set, ch);
    }
    if (json_object_object_length(ch)) {
        fm_ent *me = fm_find(&l, r->manager, "Update", sub);
        if (!me)
            me = fm_add(&l, r->manager, "Update", r->api_version, NULL, sub, NULL);
        if (me) {
            cu_fset_union(me->set, ch);
            free(me->time);
            me->time = strdup(r->now);
            free(me->api_version);
            me->api_version = dupz(r->api_version);
        }
    }
    fm_encode(&l, meta);
    fm_free(&l);
    json_object_put(ch);
    json_object_put(rm);
    return 0;
}

/* ------------------------------------------------------------------ */
/* apply                                                                */

typedef struct apply_ctx {
    const cu_field_oracle *o;
    char *err;
    size_t errn;
    int failed;
} apply_ctx;

static json_object *dcopy(json_object *v)
{
    json_object *c = NULL;
    json_object_deep_copy(v, &c, NULL);
    return c;
}

static void merge_obj(apply_ctx *a, json_object *dst, json_object *src, const void *pos, int depth,
                      int scope, const char *path);

static void merge_member(apply_ctx *a, json_object *dst, const char *key, json_object *sv,
                         const cu_fkind *k, const char *path)
{
    json_object *dv = cu_jget(dst, key);
    char sub[1024];
    snprintf(sub, sizeof sub, "%s.%s", path, key);
    if (is_obj(sv) && !k->atomic) {
        if (!is_obj(dv)) {
            /* new here: merged into an empty object all the same, so that
             * the lists inside are checked as they are when it exists */
            dv = json_object_new_object();
            json_object_object_add(dst, key, dv);
        }
        merge_obj(a, dv, sv, k->pos, 1, CU_SCOPE_ALL, sub);
        return;
    }
    if (is_arr(sv) && k->list != CU_LIST_ATOMIC) {
        json_object *si = list_index(sv, k);
        if (!si) {
            if (k->list == CU_LIST_MAP && !a->failed) {
                snprintf(a->err, a->errn,
                         "%s: associative list with keys has an element that omits a key field "
                         "or repeats a key (keys: %s%s%s)",
                         sub + 1, k->keys[0], k->nkeys > 1 ? ", " : "",
                         k->nkeys > 1 ? k->keys[1] : "");
                a->failed = 1;
            } else if (k->list == CU_LIST_SET && !a->failed) {
                snprintf(a->err, a->errn, "%s: set items must be unique scalars", sub + 1);
                a->failed = 1;
            }
            return;
        }
        json_object *di = is_arr(dv) ? list_index(dv, k) : NULL;
        if (di) {
            json_object_object_foreach (si, pe, ip) {
                json_object *item =
                    json_object_array_get_idx(sv, (size_t)json_object_get_int64(ip));
                json_object *dp = cu_jget(di, pe);
                if (!dp) {
                    json_object *ni = is_obj(item) ? json_object_new_object() : dcopy(item);
                    json_object_array_add(dv, ni);
                    if (is_obj(item))
                        merge_obj(a, ni, item, k->pos, 1, CU_SCOPE_ALL, sub);
                    continue;
                }
                json_object *cur = json_object_array_get_idx(dv, (size_t)json_object_get_int64(dp));
                if (is_obj(item) && is_obj(cur))
                    merge_obj(a, cur, item, k->pos, 1, CU_SCOPE_ALL, sub);
            }
            json_object_put(di);
            json_object_put(si);
            return;
        }
        /* no granular list here yet: the applied items, each merged into
         * an empty object so that the lists inside them are checked */
        json_object *nl = json_object_new_array();
        json_object_object_foreach (si, pe2, ip2) {
            (void)pe2;
            json_object *item = json_object_array_get_idx(sv, (size_t)json_object_get_int64(ip2));
            json_object *ni = is_obj(item) ? json_object_new_object() : dcopy(item);
            json_object_array_add(nl, ni);
            if (is_obj(item))
                merge_obj(a, ni, item, k->pos, 1, CU_SCOPE_ALL, sub);
        }
        json_object_put(si);
        json_object_object_add(dst, key, nl);
        return;
    }
    json_object_object_add(dst, key, dcopy(sv));
}

static void merge_obj(apply_ctx *a, json_object *dst, json_object *src, const void *pos, int depth,
                      int scope, const char *path)
{
    json_object_object_foreach (src, key, sv) {
        cu_fkind k;
        if (!sv)
            continue; /* null: not specified */
        if (!member_kind(a->o, pos, depth, scope, key, &k)) {
            /* identity (name, apiVersion, ...) is taken as it is */
            if (depth == 0 && strcmp(key, "status") && strcmp(key, "metadata") &&
                scope != CU_SCOPE_STATUS)
                json_object_object_add(dst, key, dcopy(sv));
            continue;
        }
        if (depth == 0 && strcmp(key, "metadata") == 0 && is_obj(sv)) {
            json_object *dm = meta_of(dst);
            json_object_object_foreach (sv, mk, mv) {
                cu_fkind kk;
                if (!mv)
                    continue;
                if (!member_kind(a->o, META_POS, 1, scope, mk, &kk)) {
                    /* identity and preconditions come from the
                     * configuration; server-set fields stay */
                    static const char *const ident[] = { "name", "namespace", "resourceVersion",
                                                         "uid", NULL };
                    if (str_in(ident, mk) || (strcmp(mk, "managedFields") && !cu_jget(dm, mk)))
                        json_object_object_add(dm, mk, dcopy(mv));
                    continue;
                }
                merge_member(a, dm, mk, mv, &kk, ".metadata");
            }
            continue;
        }
        merge_member(a, dst, key, sv, &k, path);
    }
}

/* Value of a child named by a trie key (f:, k:, v:) in v. For lists, the
 * index (built once per list node by the caller) maps names to items. */
static json_object *nav(json_object *v, const char *pe, json_object *index)
{
    if (pe[0] == 'f')
        return cu_jget(v, pe + 2);
    if (!is_arr(v) || !index)
        return NULL;
    json_object *p = cu_jget(index, pe);
    return p ? json_object_array_get_idx(v, (size_t)json_object_get_int64(p)) : NULL;
}

/* Index of a list named by the k:/v: children of a trie node. */
static json_object *index_for(json_object *list, json_object *tnode)
{
    if (!is_arr(list))
        return NULL;
    cu_fkind k;
    memset(&k, 0, sizeof k);
    json_object_object_foreach (tnode, pe, unused) {
        (void)unused;
        if (pe[0] == 'v') {
            k.list = CU_LIST_SET;
            break;
        }
        if (pe[0] == 'k') {
            json_object *kj = json_tokener_parse(pe + 2);
            char *store[4] = { NULL, NULL, NULL, NULL };
            k.list = CU_LIST_MAP;
            json_object_object_foreach (kj, kn, kv) {
                (void)kv;
                if (k.nkeys < 4) {
                    store[k.nkeys] = strdup(kn);
                    k.keys[k.nkeys] = store[k.nkeys];
                    k.nkeys++;
                }
            }
            json_object *idx = list_index(list, &k);
            for (size_t i = 0; i < k.nkeys; i++)
                free(store[i]);
            json_object_put(kj);
            return idx;
        }
    }
    return k.list ? list_index(list, &k) : NULL;
}

/* ".spec.replicas", ".status.conditions[type=\"Ready\"]", "[=\"x\"]" */
static void path_append(char *buf, size_t n, const char *pe)
{
    size_t l = strlen(buf);
    if (pe[0] == 'f') {
        snprintf(buf + l, n - l, ".%s", pe + 2);
    } else if (pe[0] == 'v') {
        snprintf(buf + l, n - l, "[=%s]", pe + 2);
    } else if (pe[0] == 'i') {
        snprintf(buf + l, n - l, "[%s]", pe + 2);
    } else {
        json_object *kj = json_tokener_parse(pe + 2);
        l += (size_t)snprintf(buf + l, l < n ? n - l : 0, "[");
        int first = 1;
        json_object_object_foreach (kj, k, v) {
            l += (size_t)snprintf(buf + l, l < n ? n - l : 0, "%s%s=%s", first ? "" : ",", k,
                                  json_object_to_json_string_ext(
                                      v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
            first = 0;
        }
        if (l < n)
            snprintf(buf + l, n - l, "]");
        json_object_put(kj);
    }
}

typedef struct conf_hit {
    size_t ent;
    char path[256];
} conf_hit;

typedef struct conf_ctx {
    conf_hit *v;
    size_t n, cap;
    size_t ent;
    json_object *taken; /* force: the conflicting paths (a trie) of this entry */
} conf_ctx;

static void conf_walk(conf_ctx *c, json_object *an, json_object *en, json_object *live,
                      json_object *merged, const char *path, json_object *taken)
{
    json_object *li = NULL, *mi = NULL;
    int listy = 0;
    json_object_object_foreach (an, pe, ac) {
        if (pe[0] == 'k' || pe[0] == 'v')
            listy = 1;
        (void)ac;
    }
    if (listy) {
        li = index_for(live, an);
        mi = index_for(merged, an);
    }
    json_object_object_foreach (an, pe2, a) {
        json_object *e = cu_jget(en, pe2);
        if (strcmp(pe2, DOT) == 0 || !e)
            continue;
        json_object *lv = nav(live, pe2, li), *mv = nav(merged, pe2, mi);
        char p[256];
        snprintf(p, sizeof p, "%s", path);
        path_append(p, sizeof p, pe2);
        if (is_member(a) && !has_kids(a) && is_member(e)) {
            if (lv && (!mv || !json_object_equal(lv, mv)) && pe2[0] != 'v') {
                if (cu_vec_reserve(&c->v, c->n, &c->cap, sizeof(*c->v), 8))
                    continue;
                c->v[c->n].ent = c->ent;
                snprintf(c->v[c->n].path, sizeof c->v[c->n].path, "%s", p);
                c->n++;
                json_object_object_add(node_child(taken, pe2), DOT, json_object_new_object());
            }
            continue;
        }
        if (lv && mv) {
            json_object *t = node_child(taken, pe2);
            conf_walk(c, a, e, lv, mv, p, t);
            if (json_object_object_length(t) == 0)
                json_object_object_del(taken, pe2);
        }
    }
    json_object_put(li);
    json_object_put(mi);
}

/* Removes from v what rn names, keeping what on (the other managers'
 * union) still owns; empties left behind by the removal go too. */
static void remove_walk(json_object *v, json_object *rn, json_object *on)
{
    json_object *idx = NULL;
    json_object_object_foreach (rn, pe, unused) {
        (void)unused;
        if (pe[0] == 'k' || pe[0] == 'v') {
            idx = index_for(v, rn);
            break;
        }
    }
    size_t ndel = 0, cap = 0;
    size_t *del = NULL;
    json_object_object_foreach (rn, pe2, r) {
        if (strcmp(pe2, DOT) == 0)
            continue;
        json_object *cv = nav(v, pe2, idx);
        json_object *oc = cu_jget(on, pe2);
        int have = pe2[0] == 'f' ? json_object_object_get_ex(v, pe2 + 2, NULL) : cv != NULL;
        if (!have)
            continue;
        int drop = is_member(r) && !oc;
        if (!drop && (is_obj(cv) || is_arr(cv))) {
            size_t before =
                is_obj(cv) ? (size_t)json_object_object_length(cv) : json_object_array_length(cv);
            remove_walk(cv, r, oc);
            size_t after =
                is_obj(cv) ? (size_t)json_object_object_length(cv) : json_object_array_length(cv);
            drop = before > 0 && after == 0 && !is_member(oc);
        }
        if (!drop)
            continue;
        if (pe2[0] == 'f') {
            json_object_object_del(v, pe2 + 2);
        } else if (idx) {
            if (ndel == cap) {
                cap = cap ? cap * 2 : 8;
                size_t *nd = realloc(del, cap * sizeof *nd);
                if (!nd)
                    break;
                del = nd;
            }
            del[ndel++] = (size_t)json_object_get_int64(cu_jget(idx, pe2));
        }
    }
    /* delete list items from the back so positions stay valid */
    for (size_t i = 0; i < ndel; i++)
        for (size_t j = i + 1; j < ndel; j++)
            if (del[j] > del[i]) {
                size_t t = del[i];
                del[i] = del[j];
                del[j] = t;
            }
    for (size_t i = 0; i < ndel; i++)
        json_object_array_del_idx(v, del[i], 1);
    free(del);
    json_object_put(idx);
}

static const char *mgr_label(const fm_ent *e, char *buf, size_t n)
{
    int l = snprintf(buf, n, "\"%s\"", e->manager);
    if (e->sub[0] && l >= 0 && (size_t)l < n)
        l += snprintf(buf + l, n - (size_t)l, " with subresource \"%s\"", e->sub);
    if (strcmp(e->op, "Update") == 0 && l >= 0 && (size_t)l < n)
        snprintf(buf + l, n - (size_t)l, " using %s", e->api_version);
    return buf;
}

static void conflict_report(fm_list *l, const conf_hit *h, size_t n, cu_fm_conflict *out)
{
    char m[300];
    out->n = n;
    out->ncauses = 0;
    for (size_t i = 0; i < n && out->ncauses < 32; i++, out->ncauses++) {
        snprintf(out->causes[i].field, sizeof out->causes[i].field, "%s", h[i].path);
        snprintf(out->causes[i].message, sizeof out->causes[i].message, "conflict with %s",
                 mgr_label(&l->v[h[i].ent], m, sizeof m));
    }
    if (n == 1) {
        snprintf(out->message, sizeof out->message,
                 "Apply failed with 1 conflict: conflict with %s: %s",
                 mgr_label(&l->v[h[0].ent], m, sizeof m), h[0].path);
        return;
    }
    size_t len =
        (size_t)snprintf(out->message, sizeof out->message, "Apply failed with %zu conflicts: ", n);
    /* grouped by manager, managers in order of their labels */
    size_t *order = malloc(l->n * sizeof *order), no = 0;
    char la[300], lb[300];
    for (size_t e = 0; order && e < l->n; e++) {
        int used = 0;
        for (size_t i = 0; i < n; i++)
            used |= h[i].ent == e;
        if (used)
            order[no++] = e;
    }
    for (size_t i = 0; i < no; i++)
        for (size_t j = i + 1; j < no; j++)
            if (strcmp(mgr_label(&l->v[order[j]], la, sizeof la),
                       mgr_label(&l->v[order[i]], lb, sizeof lb)) < 0) {
                size_t t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
    for (size_t i = 0; i < no; i++) {
        if (len < sizeof out->message)
            len += (size_t)snprintf(out->message + len, sizeof out->message - len,
                                    "%sconflicts with %s:", i ? "\n" : "",
                                    mgr_label(&l->v[order[i]], m, sizeof m));
        for (size_t k = 0; k < n; k++)
            if (h[k].ent == order[i] && len < sizeof out->message)
                len += (size_t)snprintf(out->message + len, sizeof out->message - len, "\n- %s",
                                        h[k].path);
    }
    free(order);
}

json_object *cu_fields_apply(json_object *live, json_object *applied, const cu_field_oracle *o,
                             int scope, const cu_fm_req *r, cu_fm_conflict *conflict, char *err,
                             size_t errn)
{
    memset(conflict, 0, sizeof *conflict);
    if (!is_obj(applied)) {
        snprintf(err, errn, "the applied configuration must be an object");
        return NULL;
    }
    if (cu_jget(cu_jget(applied, "metadata"), "managedFields")) {
        snprintf(err, errn, "metadata.managedFields must be nil");
        return NULL;
    }
    fm_list l;
    if (fm_decode(cu_jget(cu_jget(live, "metadata"), "managedFields"), &l, err, errn) != 0)
        memset(&l, 0, sizeof l); /* the live entries are ours: unreadable = none */
    json_object *merged = is_obj(live) ? dcopy(live) : json_object_new_object();
    apply_ctx a = { o, err, errn, 0 };
    merge_obj(&a, merged, applied, o ? o->root : NULL, 0, scope, "");
    if (a.failed) {
        json_object_put(merged);
        fm_free(&l);
        return NULL;
    }
    json_object *aset = cu_fields_of(applied, o, scope);
    const char *sub = r->subresource ? r->subresource : "";
    fm_ent *me = fm_find(&l, r->manager, "Apply", sub);
    size_t mi = me ? (size_t)(me - l.v) : (size_t)-1;

    /* conflicts */
    conf_ctx cc;
    memset(&cc, 0, sizeof cc);
    json_object **taken = calloc(l.n ? l.n : 1, sizeof *taken);
    for (size_t i = 0; live && i < l.n; i++) {
        if (i == mi)
            continue;
        cc.ent = i;
        taken[i] = json_object_new_object();
        conf_walk(&cc, aset, l.v[i].set, live, merged, "", taken[i]);
    }
    if (cc.n && !r->force) {
        conflict_report(&l, cc.v, cc.n, conflict);
        for (size_t i = 0; i < l.n; i++)
            json_object_put(taken[i]);
        free(taken);
        free(cc.v);
        json_object_put(aset);
        json_object_put(merged);
        fm_free(&l);
        return NULL;
    }
    for (size_t i = 0; i < l.n; i++) {
        if (taken[i] && json_object_object_length(taken[i]))
            l.v[i].touched |= cu_fset_subtract(l.v[i].set, taken[i]);
        json_object_put(taken[i]);
    }
    free(taken);
    free(cc.v);

    /* removal of what the applier dropped */
    if (me) {
        json_object *others = json_object_new_object();
        for (size_t i = 0; i < l.n; i++)
            if (i != mi)
                cu_fset_union(others, l.v[i].set);
        json_object *gone = dcopy(me->set);
        cu_fset_subtract(gone, aset);
        cu_fset_subtract(gone, others);
        if (json_object_object_length(gone))
            remove_walk(merged, gone, others);
        json_object_put(gone);
        json_object_put(others);
    }

    /* the applier's entry */
    int obj_changed = 1;
    if (live) {
        json_object *lm = cu_jget(cu_jget(live, "metadata"), "managedFields");
        json_object *mm = meta_of(merged);
        json_object *keep = lm ? json_object_get(lm) : NULL;
        json_object_object_del(mm, "managedFields");
        json_object *lc = dcopy(live);
        json_object_object_del(meta_of(lc), "managedFields");
        obj_changed = !json_object_equal(lc, merged);
        json_object_put(lc);
        json_object_put(keep);
    }
    if (!me)
        me = fm_add(&l, r->manager, "Apply", r->api_version, NULL, sub, NULL);
    if (me) {
        int same = json_object_equal(me->set, aset);
        json_object_put(me->set);
        me->set = aset;
        aset = NULL;
        if (!same || obj_changed || !me->time) {
            free(me->time);
            me->time = strdup(r->now);
            free(me->api_version);
            me->api_version = dupz(r->api_version);
        }
    }
    json_object_put(aset);
    fm_encode(&l, meta_of(merged));
    fm_free(&l);
    return merged;
}

void cu_fields_default_manager(const char *ua, char *out, size_t n)
{
    if (!ua || !*ua) {
        snprintf(out, n, "unknown");
        return;
    }
    size_t l = strcspn(ua, "/");
    if (l > 128)
        l = 128;
    snprintf(out, n, "%.*s", (int)l, ua);
}
