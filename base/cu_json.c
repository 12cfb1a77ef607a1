/*
 * cu_json.c - JSON parsing as deep as kube-apiserver serves (see cu_json.h).
 */
#include "cu_json.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

json_tokener *cu_json_tokener_new(void) { return json_tokener_new_ex(CU_JSON_SHALLOW_DEPTH); }

static int is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* One parse with tok; returns the tree or NULL with *err set. */
static json_object *parse_with(json_tokener *tok, const char *s, size_t len,
                               enum json_tokener_error *err, size_t *at)
{
    json_tokener_reset(tok);
    json_object *o = json_tokener_parse_ex(tok, s, (int)len);
    *err = json_tokener_get_error(tok);
    *at = json_tokener_get_parse_end(tok);
    if (*err == json_tokener_continue) {
        /* the text ended inside a value: feed the end of input ("" is
         * what json_tokener_parse does too, for numbers at the end) */
        if (!o)
            o = json_tokener_parse_ex(tok, "", 1);
        *err = o ? json_tokener_success : json_tokener_get_error(tok);
        if (*err == json_tokener_continue)
            *err = json_tokener_error_parse_eof;
        *at = len;
    }
    if (o && *err != json_tokener_success) {
        json_object_put(o);
        o = NULL;
    }
    return o;
}

json_object *cu_json_parse(json_tokener *tok, const char *s, size_t len, char *why, size_t nwhy)
{
    if (why && nwhy)
        why[0] = '\0';
    if (!s || len > (size_t)INT32_MAX - 1) {
        if (why && nwhy)
            snprintf(why, nwhy, "%s", s ? "larger than 2 GiB" : "no text");
        return NULL;
    }
    json_tokener *own = NULL;
    if (!tok && !(tok = own = cu_json_tokener_new())) {
        if (why && nwhy)
            snprintf(why, nwhy, "out of memory");
        return NULL;
    }
    enum json_tokener_error err;
    size_t at = 0;
    json_object *o = parse_with(tok, s, len, &err, &at);
    if (!o && err == json_tokener_error_depth) {
        json_tokener *deep = json_tokener_new_ex(CU_JSON_MAX_DEPTH);
        if (deep) {
            o = parse_with(deep, s, len, &err, &at);
            json_tokener_free(deep);
        }
    }
    if (own)
        json_tokener_free(own);
    if (o) {
        /* exactly one value: only white space may follow it */
        size_t i = at;
        while (i < len && is_ws(s[i]))
            i++;
        if (i < len && s[i] != '\0') {
            json_object_put(o);
            if (why && nwhy)
                snprintf(why, nwhy, "unexpected text after the JSON value at offset %zu", i);
            return NULL;
        }
        return o;
    }
    if (why && nwhy) {
        if (err == json_tokener_error_depth)
            snprintf(why, nwhy, "nesting deeper than %d levels", CU_JSON_MAX_DEPTH);
        else
            snprintf(why, nwhy, "%s at offset %zu", json_tokener_error_desc(err), at);
    }
    return NULL;
}

json_object *cu_json_parse_str(const char *s)
{
    return s ? cu_json_parse(NULL, s, strlen(s), NULL, 0) : NULL;
}

/* ---------------- accessors ---------------- */

json_object *cu_jget(json_object *o, const char *key)
{
    json_object *v = NULL;
    if (o && json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, key, &v))
        return v;
    return NULL;
}

const char *cu_jas_str(json_object *v)
{
    return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

const char *cu_jstr(json_object *o, const char *key) { return cu_jas_str(cu_jget(o, key)); }

json_object *cu_jpath(json_object *o, const char *dotted)
{
    char key[128];
    const char *p = dotted;
    while (o && *p) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        if (n >= sizeof key)
            return NULL;
        memcpy(key, p, n);
        key[n] = '\0';
        o = cu_jget(o, key);
        p = dot ? dot + 1 : p + n;
    }
    return o;
}

const char *cu_jpath_str(json_object *o, const char *dotted)
{
    return cu_jas_str(cu_jpath(o, dotted));
}

int cu_jint(json_object *o, const char *key)
{
    json_object *v = cu_jget(o, key);
    return v ? json_object_get_int(v) : 0;
}

int64_t cu_jas_int64(json_object *v, int64_t def)
{
    return v && json_object_is_type(v, json_type_int) ? json_object_get_int64(v) : def;
}

int64_t cu_jas_num(json_object *v, int64_t def)
{
    if (v && json_object_is_type(v, json_type_int))
        return json_object_get_int64(v);
    if (v && json_object_is_type(v, json_type_double))
        return (int64_t)json_object_get_double(v);
    return def;
}

int cu_jas_true(json_object *v)
{
    return v && json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v);
}

size_t cu_jarr_len(json_object *v)
{
    return v && json_object_is_type(v, json_type_array) ? json_object_array_length(v) : 0;
}

void cu_jset_str(json_object *o, const char *key, const char *v)
{
    json_object_object_add(o, key, json_object_new_string(v ? v : ""));
}

void cu_jset_int(json_object *o, const char *key, int64_t v)
{
    json_object_object_add(o, key, json_object_new_int64(v));
}

json_object *cu_jchild(json_object *o, const char *key)
{
    json_object *v = cu_jget(o, key);
    if (v && json_object_is_type(v, json_type_object))
        return v;
    v = json_object_new_object();
    if (v)
        json_object_object_add(o, key, v);
    return v;
}

json_object *cu_jcopy(json_object *o)
{
    json_object *d = NULL;
    if (!o || json_object_deep_copy(o, &d, NULL) != 0)
        return NULL;
    return d;
}

/* ---------------- comparing ---------------- */

static int is_num(json_object *o)
{
    return o && (json_object_is_type(o, json_type_int) || json_object_is_type(o, json_type_double));
}

int cu_json_equal(json_object *a, json_object *b)
{
    if (!a || !b)
        return a == b;
    if (is_num(a) && is_num(b)) {
        if (json_object_is_type(a, json_type_int) && json_object_is_type(b, json_type_int))
            return json_object_get_int64(a) == json_object_get_int64(b);
        double x = json_object_get_double(a), y = json_object_get_double(b);
        return x == y || (isnan(x) && isnan(y)); /* the same value, NaN too */
    }
    json_type ta = json_object_get_type(a);
    if (ta != json_object_get_type(b))
        return 0;
    switch (ta) {
    case json_type_boolean: return json_object_get_boolean(a) == json_object_get_boolean(b);
    case json_type_string:
        return json_object_get_string_len(a) == json_object_get_string_len(b) &&
               memcmp(json_object_get_string(a), json_object_get_string(b),
                      (size_t)json_object_get_string_len(a)) == 0;
    case json_type_array: {
        size_t n = json_object_array_length(a);
        if (n != json_object_array_length(b))
            return 0;
        for (size_t i = 0; i < n; i++)
            if (!cu_json_equal(json_object_array_get_idx(a, i), json_object_array_get_idx(b, i)))
                return 0;
        return 1;
    }
    case json_type_object: {
        if (json_object_object_length(a) != json_object_object_length(b))
            return 0;
        json_object_object_foreach (a, k, va) {
            json_object *vb = NULL;
            if (!json_object_object_get_ex(b, k, &vb) || !cu_json_equal(va, vb))
                return 0;
        }
        return 1;
    }
    default: return 0;
    }
}

/* Appends one operation {op, path[, value]} to ops; value is deep-copied
 * (when with_value). Returns 0, or -1 when out of memory. */
static int diff_op(json_object *ops, const char *op, const cu_buf *path, json_object *value,
                   int with_value)
{
    json_object *o = json_object_new_object();
    if (!o)
        return -1;
    cu_jset_str(o, "op", op);
    json_object_object_add(
        o, "path", json_object_new_string_len(path->data ? path->data : "", (int)path->len));
    if (with_value) {
        json_object *v = NULL;
        if (value && json_object_deep_copy(value, &v, NULL) != 0) {
            json_object_put(o);
            return -1;
        }
        json_object_object_add(o, "value", v);
    }
    return json_object_array_add(ops, o) == 0 ? 0 : -1;
}

/* path + "/" + the escaped token key; returns the old length to cut back to. */
static size_t diff_push(cu_buf *path, const char *key)
{
    size_t old = path->len;
    cu_buf_append(path, "/", 1);
    for (const char *p = key; *p; p++) {
        if (*p == '~')
            cu_buf_puts(path, "~0");
        else if (*p == '/')
            cu_buf_puts(path, "~1");
        else
            cu_buf_append(path, p, 1);
    }
    return old;
}

static void diff_pop(cu_buf *path, size_t old)
{
    path->len = old;
    if (path->data)
        path->data[old] = 0;
}

static int diff_rec(json_object *ops, cu_buf *path, json_object *a, json_object *b, int depth);

/* The member or element key of the value at path: removed (not in to),
 * added (not in from) or compared. */
static int diff_child(json_object *ops, cu_buf *path, const char *key, int in_a, json_object *a,
                      int in_b, json_object *b, int depth)
{
    size_t old = diff_push(path, key);
    int rc = !in_b   ? diff_op(ops, "remove", path, NULL, 0)
             : !in_a ? diff_op(ops, "add", path, b, 1)
                     : diff_rec(ops, path, a, b, depth + 1);
    diff_pop(path, old);
    return rc;
}

static int diff_rec(json_object *ops, cu_buf *path, json_object *a, json_object *b, int depth)
{
    if (cu_json_equal(a, b))
        return 0;
    int oa = a && json_object_is_type(a, json_type_object);
    int ob = b && json_object_is_type(b, json_type_object);
    int aa = a && json_object_is_type(a, json_type_array);
    int ab = b && json_object_is_type(b, json_type_array);
    if (depth > 1000 || !((oa && ob) || (aa && ab)))
        return diff_op(ops, "replace", path, b, 1);
    if (oa) {
        json_object_object_foreach (a, k, va) {
            json_object *vb = NULL;
            int in_b = json_object_object_get_ex(b, k, &vb);
            if (diff_child(ops, path, k, 1, va, in_b, vb, depth))
                return -1;
        }
        json_object_object_foreach (b, k2, vb2) {
            if (!json_object_object_get_ex(a, k2, NULL) &&
                diff_child(ops, path, k2, 0, NULL, 1, vb2, depth))
                return -1;
        }
        return path->failed ? -1 : 0;
    }
    /* arrays: the common part, then what to adds, then what from loses
     * (from the last, so that each index is still right) */
    size_t na = json_object_array_length(a), nb = json_object_array_length(b);
    size_t n = na > nb ? na : nb;
    char idx[32];
    for (size_t j = 0; j < n; j++) {
        size_t i = j < nb ? j : na - 1 - (j - nb);
        snprintf(idx, sizeof idx, "%zu", i);
        if (diff_child(ops, path, idx, i < na, json_object_array_get_idx(a, i), i < nb,
                       i < nb ? json_object_array_get_idx(b, i) : NULL, depth))
            return -1;
    }
    return path->failed ? -1 : 0;
}

json_object *cu_json_diff(json_object *from, json_object *to)
{
    json_object *ops = json_object_new_array();
    if (!ops)
        return NULL;
    cu_buf path;
    cu_buf_init(&path, 0);
    int rc = diff_rec(ops, &path, from, to, 0);
    int failed = path.failed;
    cu_buf_free(&path);
    if (rc || failed) {
        json_object_put(ops);
        return NULL;
    }
    return ops;
}

/* ---------------- numbers as Go writes them ---------------- */

int cu_json_shortest_e(double d, char out[40])
{
    int p = 0;
    for (; p < 16; p++) {
        snprintf(out, 40, "%.*e", p, d);
        if (strtod(out, NULL) == d)
            return p;
    }
    snprintf(out, 40, "%.*e", p, d); /* 17 significant digits always read back */
    return p;
}

size_t cu_json_go_float(double d, char out[CU_JSON_GO_FLOAT_MAX])
{
    if (!isfinite(d)) {
        strcpy(out, "0");
        return 1;
    }
    if (d == 0) {
        strcpy(out, signbit(d) ? "-0" : "0");
        return strlen(out);
    }
    /* the shortest %e form that reads back to d: its digits and exponent */
    char e[40];
    cu_json_shortest_e(d, e);
    char digits[24];
    size_t nd = 0;
    const char *q = e;
    int neg = *q == '-';
    if (neg)
        q++;
    for (; *q && *q != 'e'; q++)
        if (isdigit((unsigned char)*q) && nd < sizeof digits - 1)
            digits[nd++] = *q;
    while (nd > 1 && digits[nd - 1] == '0') /* %.0e..%.16e may end in zeros */
        nd--;
    digits[nd] = '\0';
    int x = atoi(q + 1); /* d = 0.digits * 10^(x+1) */
    double a = fabs(d);
    char *o = out;
    if (neg)
        *o++ = '-';
    if (a < 1e-6 || a >= 1e21) {
        *o++ = digits[0];
        if (nd > 1) {
            *o++ = '.';
            memcpy(o, digits + 1, nd - 1);
            o += nd - 1;
        }
        /* strconv's 'e': two digits at least; encoding/json then turns
         * e-09 into e-9 */
        int ax = x < 0 ? -x : x;
        if (x < 0 && ax < 10)
            o += sprintf(o, "e-%d", ax);
        else
            o += sprintf(o, "e%c%02d", x < 0 ? '-' : '+', ax);
        return (size_t)(o - out);
    }
    if (x < 0) { /* 0.000ddd */
        *o++ = '0';
        *o++ = '.';
        for (int i = 0; i < -x - 1; i++)
            *o++ = '0';
        memcpy(o, digits, nd);
        o += nd;
    } else if ((size_t)x + 1 >= nd) { /* ddd000 */
        memcpy(o, digits, nd);
        o += nd;
        for (size_t i = nd; i < (size_t)x + 1; i++)
            *o++ = '0';
    } else { /* dd.ddd */
        memcpy(o, digits, (size_t)x + 1);
        o += x + 1;
        *o++ = '.';
        memcpy(o, digits + x + 1, nd - (size_t)x - 1);
        o += nd - (size_t)x - 1;
    }
    *o = '\0';
    return (size_t)(o - out);
}

/* json-c's serializer hook: the value of a double (or of an unsigned
 * integer beyond int64), as Go writes a float64. */
static int go_number_to_json(json_object *jso, struct printbuf *pb, int level, int flags)
{
    (void)level;
    (void)flags;
    double d = json_object_is_type(jso, json_type_double) ? json_object_get_double(jso)
                                                          : (double)json_object_get_uint64(jso);
    if (d == 0)
        d = 0; /* -0 as 0: kube-apiserver reads its "-0" back as the integer 0 */
    char b[CU_JSON_GO_FLOAT_MAX];
    size_t n = cu_json_go_float(d, b);
    return printbuf_memappend(pb, b, (int)n);
}

static void go_numbers(json_object *o, int depth)
{
    if (!o || depth > CU_JSON_MAX_DEPTH + 1)
        return;
    switch (json_object_get_type(o)) {
    case json_type_double: json_object_set_serializer(o, go_number_to_json, NULL, NULL); break;
    case json_type_int:
        if (json_object_get_int64(o) == INT64_MAX && json_object_get_uint64(o) > INT64_MAX)
            json_object_set_serializer(o, go_number_to_json, NULL, NULL);
        break;
    case json_type_array: {
        size_t n = json_object_array_length(o);
        for (size_t i = 0; i < n; i++)
            go_numbers(json_object_array_get_idx(o, i), depth + 1);
        break;
    }
    case json_type_object: {
        json_object_object_foreach (o, k, v) {
            (void)k;
            go_numbers(v, depth + 1);
        }
        break;
    }
    default: break;
    }
}

void cu_json_go_numbers(json_object *o) { go_numbers(o, 0); }

/* ---------------- writing strings ---------------- */

static size_t put_u(char *out, uint32_t cp)
{
    static const char hex[] = "0123456789abcdef";
    out[0] = '\\', out[1] = 'u';
    out[2] = hex[(cp >> 12) & 15], out[3] = hex[(cp >> 8) & 15];
    out[4] = hex[(cp >> 4) & 15], out[5] = hex[cp & 15];
    return 6;
}

size_t cu_json_escape_char(const char *s, size_t avail, unsigned flags, char out[CU_JSON_ESC_MAX],
                           size_t *adv)
{
    const unsigned char *p = (const unsigned char *)s;
    unsigned char c = p[0];
    *adv = 1;
    if (c == '"' || c == '\\') {
        out[0] = '\\', out[1] = (char)c;
        return 2;
    }
    if (c < 0x20) {
        char e = c == '\n' ? 'n' : c == '\r' ? 'r' : c == '\t' ? 't' : 0;
        if (!e && (flags & CU_JESC_SHORT_BF))
            e = c == '\b' ? 'b' : c == '\f' ? 'f' : 0;
        if (e) {
            out[0] = '\\', out[1] = e;
            return 2;
        }
        return put_u(out, c);
    }
    if (c == 0x7F && (flags & CU_JESC_DEL))
        return put_u(out, c);
    if (c < 0x80 || !(flags & CU_JESC_UTF8)) {
        out[0] = (char)c;
        return 1;
    }
    uint32_t cp;
    size_t l = cu_utf8_decode(p, avail, &cp);
    if (!l) {
        if (flags & CU_JESC_FFFD_ESC)
            return put_u(out, 0xFFFD);
        memcpy(out, "\xEF\xBF\xBD", 3);
        return 3;
    }
    *adv = l;
    if ((flags & CU_JESC_YAML) && cu_yaml_nonprintable(cp))
        return put_u(out, cp); /* all of them are in the BMP */
    memcpy(out, s, l);
    return l;
}

cu_err cu_json_put_str(cu_buf *b, const char *s, unsigned flags)
{
    const char *p = s ? s : "";
    size_t avail = strlen(p);
    cu_buf_append(b, "\"", 1);
    while (avail > 0) {
        const char *run = p;
        while (avail > 0 && (unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7F && *p != '"' &&
               *p != '\\')
            p++, avail--;
        if (p > run)
            cu_buf_append(b, run, (size_t)(p - run));
        if (!avail)
            break;
        char piece[CU_JSON_ESC_MAX];
        size_t adv, n = cu_json_escape_char(p, avail, flags, piece, &adv);
        cu_buf_append(b, piece, n);
        p += adv;
        avail -= adv;
    }
    cu_buf_append(b, "\"", 1);
    return b->failed ? CU_ENOMEM : CU_OK;
}

/* ---- cu_node <-> json-c ---- */

/* Deeper than this, values are left out of the converted tree (a null in
 * their place): no field the decoders read is nested this deep, and the
 * API server serves objects up to CU_JSON_MAX_DEPTH deep (unknown fields
 * in a pod template, say), which must decode as well, without a
 * recursion that deep. */
#define CONV_DEPTH_MAX 64

static cu_node *json_to_node(cu_arena *a, json_object *j, int depth)
{
    if (depth > CONV_DEPTH_MAX &&
        (json_object_is_type(j, json_type_object) || json_object_is_type(j, json_type_array)))
        return cu_node_new_null(a);
    switch (json_object_get_type(j)) {
    case json_type_null: return cu_node_new_null(a);
    case json_type_boolean: return cu_node_new_bool(a, json_object_get_boolean(j));
    case json_type_int: return cu_node_new_int(a, json_object_get_int64(j));
    case json_type_double: {
        char b[64];
        snprintf(b, sizeof(b), "%.17g", json_object_get_double(j));
        return cu_node_new_plain(a, b);
    }
    case json_type_string: return cu_node_new_str(a, json_object_get_string(j));
    case json_type_array: {
        cu_node *s = cu_node_new_seq(a);
        size_t n = json_object_array_length(j);
        for (size_t i = 0; s && i < n; i++) {
            cu_node *v = json_to_node(a, json_object_array_get_idx(j, i), depth + 1);
            if (!v || cu_node_push(a, s, v) != CU_OK)
                return NULL;
        }
        return s;
    }
    case json_type_object: {
        cu_node *m = cu_node_new_map(a);
        if (!m)
            return NULL;
        json_object_object_foreach (j, k, val) {
            cu_node *v = json_to_node(a, val, depth + 1);
            if (!v || cu_node_set(a, m, k, v) != CU_OK)
                return NULL;
        }
        return m;
    }
    }
    return NULL;
}

cu_node *cu_node_from_json(cu_arena *a, json_object *j) { return json_to_node(a, j, 0); }

json_object *cu_node_to_json(const cu_node *n)
{
    if (!n)
        return NULL;
    if (n->type == CU_NODE_MAP) {
        json_object *o = json_object_new_object();
        for (size_t i = 0; i < n->n; i++)
            json_object_object_add(o, n->keys[i], cu_node_to_json(n->vals[i]));
        return o;
    }
    if (n->type == CU_NODE_SEQ) {
        json_object *a = json_object_new_array();
        for (size_t i = 0; i < n->n; i++)
            json_object_array_add(a, cu_node_to_json(n->vals[i]));
        return a;
    }
    const char *s = n->str;
    if (!n->plain)
        return json_object_new_string(s);
    if (!*s || strcmp(s, "null") == 0 || strcmp(s, "~") == 0 || strcmp(s, "Null") == 0 ||
        strcmp(s, "NULL") == 0)
        return NULL;
    if (strcmp(s, "true") == 0 || strcmp(s, "True") == 0 || strcmp(s, "TRUE") == 0)
        return json_object_new_boolean(1);
    if (strcmp(s, "false") == 0 || strcmp(s, "False") == 0 || strcmp(s, "FALSE") == 0)
        return json_object_new_boolean(0);
    const char *d = s + (*s == '-' || *s == '+');
    if (isdigit((unsigned char)*d) || (*d == '.' && isdigit((unsigned char)d[1]))) {
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (!*end && errno == 0)
            return json_object_new_int64(v);
        errno = 0;
        double dv = strtod(s, &end);
        if (!*end && errno == 0)
            return json_object_new_double(dv);
    }
    return json_object_new_string(s);
}
