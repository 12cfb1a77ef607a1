/*
 * cu_whconvert.c - the conversion webhook's v1beta1 <-> v1beta2
 * conversion of Kueue objects, on json-c objects: the rules of
 * cu_convert.c (cu_conv_object) applied through a json-c cu_ctree.
 *
 * Fields the rules do not name pass through as they are (the API server
 * prunes what the target version's schema does not know), so a round trip
 * gives the object back, except where Kueue's own conversion loses
 * information (docs/conversion.md lists those cases).
 */
#include "cu_webhook.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_convert_int.h"
#include "cu_json.h"

/* json-c holds a JSON null as a NULL value; get() hands out this marker
 * for it, so that "null" and "absent" differ. */
static char null_marker;

static cu_ct_type j_type(void *ud, void *n)
{
    (void)ud;
    if (!n)
        return CU_CT_NONE;
    if (n == &null_marker)
        return CU_CT_NULL;
    switch (json_object_get_type(n)) {
    case json_type_object: return CU_CT_MAP;
    case json_type_array: return CU_CT_SEQ;
    case json_type_string: return CU_CT_STR;
    case json_type_null: return CU_CT_NULL;
    default: return CU_CT_OTHER;
    }
}

static void *node_of(json_object *v) { return v ? (void *)v : (void *)&null_marker; }

static int is_real(void *n) { return n && n != &null_marker; }

static void *j_get(void *ud, void *m, const char *k)
{
    (void)ud;
    json_object *v = NULL;
    if (!is_real(m) || !json_object_is_type(m, json_type_object) ||
        !json_object_object_get_ex(m, k, &v))
        return NULL;
    return node_of(v);
}
static const char *j_str(void *ud, void *n)
{
    (void)ud;
    return is_real(n) && json_object_is_type(n, json_type_string) ? json_object_get_string(n)
                                                                  : NULL;
}
static int j_num(void *ud, void *n, int64_t *out)
{
    (void)ud;
    if (!is_real(n) || !json_object_is_type(n, json_type_int))
        return -1;
    *out = json_object_get_int64(n);
    return 0;
}
static size_t j_len(void *ud, void *s)
{
    (void)ud;
    return is_real(s) && json_object_is_type(s, json_type_array) ? json_object_array_length(s) : 0;
}
static void *j_at(void *ud, void *s, size_t i)
{
    (void)ud;
    if (!is_real(s) || !json_object_is_type(s, json_type_array) || i >= json_object_array_length(s))
        return NULL;
    return node_of(json_object_array_get_idx(s, i));
}
static void j_del(void *ud, void *m, const char *k)
{
    (void)ud;
    if (is_real(m) && json_object_is_type(m, json_type_object))
        json_object_object_del(m, k);
}
static void *j_take(void *ud, void *m, const char *k)
{
    void *v = j_get(ud, m, k);
    if (!is_real(v)) {
        j_del(ud, m, k);
        return NULL;
    }
    json_object_get(v);
    j_del(ud, m, k);
    return v;
}
/* json-c cannot rename a key; the object is rebuilt in the same order. */
static int j_rename(void *ud, void *m, const char *from, const char *to)
{
    (void)ud;
    size_t n = (size_t)json_object_object_length(m), i = 0;
    char **keys = calloc(n ? n : 1, sizeof(*keys));
    json_object **vals = calloc(n ? n : 1, sizeof(*vals));
    int rc = keys && vals ? 0 : -1;
    json_object_object_foreach (m, k, v) {
        if (rc != 0 || i >= n)
            break;
        keys[i] = strdup(strcmp(k, from) == 0 ? to : k);
        vals[i] = json_object_get(v);
        rc = keys[i++] ? 0 : -1;
    }
    size_t got = i;
    if (rc == 0) {
        for (i = 0; i < got; i++)
            json_object_object_del(m, strcmp(keys[i], to) == 0 ? from : keys[i]);
        for (i = 0; i < got; i++) {
            if (rc == 0 && json_object_object_add(m, keys[i], vals[i]) != 0)
                rc = -1;
            else if (rc != 0)
                json_object_put(vals[i]);
        }
    } else {
        for (i = 0; i < got; i++)
            json_object_put(vals[i]);
    }
    for (i = 0; keys && i < got; i++)
        free(keys[i]);
    free(keys);
    free(vals);
    return rc;
}
static void *j_new_map(void *ud)
{
    (void)ud;
    return json_object_new_object();
}
static void *j_new_seq(void *ud)
{
    (void)ud;
    return json_object_new_array();
}
static void *j_new_str(void *ud, const char *s)
{
    (void)ud;
    return json_object_new_string(s);
}
static void *j_new_int(void *ud, int64_t v)
{
    (void)ud;
    return json_object_new_int64(v);
}
static int j_set(void *ud, void *m, const char *k, void *v)
{
    (void)ud;
    return json_object_object_add(m, k, v) == 0 ? 0 : -1;
}
static int j_push(void *ud, void *s, void *v)
{
    (void)ud;
    return json_object_array_add(s, v) == 0 ? 0 : -1;
}
static void j_drop(void *ud, void *n)
{
    (void)ud;
    json_object_put(n);
}

static const cu_ctree jtree = { NULL,      j_type,    j_get,  j_str,    j_num,     j_len,
                                j_at,      j_del,     j_take, j_rename, j_new_map, j_new_seq,
                                j_new_str, j_new_int, j_set,  j_push,   j_drop };

cu_err cu_conv_topology_json(json_object *ta, int down, cu_buf *err)
{
    return cu_conv_topology(&jtree, ta, down, err);
}

#define V1 CU_GROUP "/v1beta1"
#define V2 CU_GROUP "/v1beta2"

/* "Kind ns/name" of an object, for messages. */
static void name_obj(cu_buf *msg, const char *kind, json_object *o)
{
    const char *ns = cu_jpath_str(o, "metadata.namespace");
    const char *name = cu_jpath_str(o, "metadata.name");
    cu_buf_printf(msg, "%s %s%s%s: ", kind, ns && *ns ? ns : "", ns && *ns ? "/" : "",
                  name ? name : "(no name)");
}

/* Converts one object in place (its apiVersion is V1 or V2, kind a string). */
static cu_err convert_one(json_object *o, const char *kind, int down, cu_buf *msg)
{
    cu_buf err;
    cu_buf_init(&err, 4096);
    cu_err rc = cu_conv_object(&jtree, o, kind, down, 0, &err);
    if (rc != CU_OK && msg) {
        name_obj(msg, kind, o);
        cu_buf_puts(msg, rc == CU_ENOMEM ? "out of memory" : cu_buf_str(&err));
    }
    cu_buf_free(&err);
    return rc;
}

static int is_kueue(const char *api) { return strcmp(api, V1) == 0 || strcmp(api, V2) == 0; }

cu_err cu_wh_convert(json_object *obj, const char *desired, json_object **out, cu_buf *msg)
{
    *out = NULL;
    if (!desired || !is_kueue(desired)) {
        if (msg)
            cu_buf_printf(msg, "desiredAPIVersion: cannot convert to %s (only %s and %s)",
                          desired ? desired : "(none)", V1, V2);
        return CU_EINVAL;
    }
    const char *api = cu_jstr(obj, "apiVersion"), *kind = cu_jstr(obj, "kind");
    if (!json_object_is_type(obj, json_type_object) || !api || !kind || !*kind) {
        if (msg)
            cu_buf_puts(msg, "object: not an object with apiVersion and kind");
        return CU_EINVAL;
    }
    if (!is_kueue(api)) {
        if (msg) {
            name_obj(msg, kind, obj);
            cu_buf_printf(msg, "apiVersion: %s is not %s or %s", api, V1, V2);
        }
        return CU_EINVAL;
    }
    json_object *copy = cu_jcopy(obj);
    if (!copy)
        return CU_ENOMEM;
    int down = strcmp(desired, V1) == 0;
    cu_err rc = CU_OK;
    size_t kl = strlen(kind);
    if (strcmp(api, desired) == 0) {
        /* already there: a copy */
    } else if (kl > 4 && strcmp(kind + kl - 4, "List") == 0) {
        /* a list: its items (which may leave apiVersion and kind out) */
        char item_kind[128];
        snprintf(item_kind, sizeof(item_kind), "%.*s", (int)(kl - 4), kind);
        json_object *items = cu_jget(copy, "items");
        size_t n = cu_jarr_len(items);
        for (size_t i = 0; rc == CU_OK && i < n; i++) {
            json_object *it = json_object_array_get_idx(items, i);
            const char *ia = cu_jstr(it, "apiVersion"), *ik = cu_jstr(it, "kind");
            if (!json_object_is_type(it, json_type_object) || (ia && !is_kueue(ia)) ||
                (ik && strcmp(ik, item_kind) != 0)) {
                if (msg)
                    cu_buf_printf(msg, "%s: items[%zu]: not a %s of %s or %s", kind, i, item_kind,
                                  V1, V2);
                rc = CU_EINVAL;
            } else if (!ia || strcmp(ia, desired) != 0) {
                rc = convert_one(it, item_kind, down, msg);
            }
        }
        if (rc == CU_OK)
            cu_jset_str(copy, "apiVersion", desired);
    } else {
        rc = convert_one(copy, kind, down, msg);
    }
    if (rc != CU_OK) {
        json_object_put(copy);
        return rc;
    }
    *out = copy;
    return CU_OK;
}
