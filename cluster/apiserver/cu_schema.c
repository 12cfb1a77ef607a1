/*
 * cu_schema.c - structural openAPIV3Schema validation of custom resources,
 * as kube-apiserver's apiextensions code does it: prune unknown fields,
 * drop non-nullable nulls, apply defaults, then validate, reporting each
 * problem with the full field path and kube-apiserver's wording
 * (field.Error bodies around go-openapi messages such as
 * "spec.x in body should be less than or equal to 16").
 *
 * Invariants:
 *  - one walk over the object: at each object node unknown fields are
 *    pruned and defaults set before its children are visited, so defaults
 *    reach nested objects that exist (or that a default just created),
 *    never objects that are absent;
 *  - branches of anyOf/oneOf/allOf/not only validate: they never prune or
 *    default (structural schemas keep those to the main branch);
 *  - the schema is borrowed and never modified; the object is modified
 *    only by pruning and defaulting.
 *
 * Simplifications: x-kubernetes-validations (CEL) rules are not evaluated;
 * patterns are translated from ECMA-262 to POSIX ERE for the common subset
 * (\d \w \s and their negations, escapes, classes, (?: ), lazy
 * quantifiers); a pattern outside it (look-around, back-references, \b) is
 * not enforced. Formats checked: date-time, date, uuid (and uuid3/4/5),
 * ipv4, ipv6, cidr, hostname, mac, byte; others are accepted as kube-apiserver
 * accepts unknown formats.
 */
#include "cu_schema.h"
#include "cu_patch.h"
#include "cu_base.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_schema_int.h"

typedef struct sv_ctx {
    int strict;
    int mutate; /* 0 inside anyOf/oneOf/not branches */
    cu_schema_err *errs;
    size_t max, n;
    const cu_schema_rx *rx; /* the schema's compiled patterns, or NULL */
    cu_schema_rx *local;    /* patterns compiled during this call (shared
                                with the branches' contexts) */
} sv_ctx;

void cu_schema_err_vadd(cu_schema_err *errs, size_t max, size_t *n, const char *field,
                        const char *type, const char *fmt, va_list ap)
{
    if (*n < max && errs) {
        cu_schema_err *e = &errs[*n];
        snprintf(e->field, sizeof e->field, "%s", field);
        snprintf(e->type, sizeof e->type, "%s", type);
        vsnprintf(e->message, sizeof e->message, fmt, ap);
    }
    (*n)++;
}

static void sv_err(sv_ctx *c, const char *field, const char *type, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void sv_err(sv_ctx *c, const char *field, const char *type, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cu_schema_err_vadd(c->errs, c->max, &c->n, field, type, fmt, ap);
    va_end(ap);
}

/* ---- json helpers ---- */

static int is_num(json_object *o)
{
    return o && (json_object_is_type(o, json_type_int) || json_object_is_type(o, json_type_double));
}

static int sbool(json_object *schema, const char *key)
{
    json_object *v = cu_jget(schema, key);
    return v && json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v);
}

const char *cu_schema_type_name(json_type t)
{
    switch (t) {
    case json_type_boolean: return "boolean";
    case json_type_int: return "integer";
    case json_type_double: return "number";
    case json_type_string: return "string";
    case json_type_array: return "array";
    case json_type_object: return "object";
    default: return "null";
    }
}

/* 1 if kube-apiserver decodes the number v as a float64, not an int64: a
 * literal with a fraction or an exponent, or an integer beyond int64 (which
 * json-c holds as a uint64 or a double). */
static int go_float(json_object *v)
{
    if (json_object_is_type(v, json_type_double))
        return 1;
    return json_object_is_type(v, json_type_int) && json_object_get_int64(v) == INT64_MAX &&
           json_object_get_uint64(v) > (uint64_t)INT64_MAX;
}

/* The JSON type as kube-apiserver's validator sees v: a float64 is a
 * "number" even when it is integral. */
static const char *type_name(json_object *v)
{
    if (v && go_float(v))
        return "number";
    return v ? cu_schema_type_name(json_object_get_type(v)) : "null";
}

/* Formats a number as Go's %v does for int64 and float64. */
static void fmt_num(json_object *v, char *out, size_t n)
{
    if (json_object_is_type(v, json_type_int)) {
        snprintf(out, n, "%lld", (long long)json_object_get_int64(v));
        return;
    }
    double d = json_object_get_double(v);
    if (d == floor(d) && fabs(d) < 1e21) {
        snprintf(out, n, "%.0f", d);
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(out, n, "%.*g", prec, d);
        if (strtod(out, NULL) == d)
            return;
    }
}

/* Formats a bad value the way field.Error does: numbers and booleans
 * plainly, strings quoted, everything else as JSON. */
static void fmt_value(json_object *v, char *out, size_t n)
{
    if (is_num(v))
        fmt_num(v, out, n);
    else if (v && json_object_is_type(v, json_type_boolean))
        snprintf(out, n, "%s", json_object_get_boolean(v) ? "true" : "false");
    else
        snprintf(out, n, "%s",
                 v ? json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN |
                                                           JSON_C_TO_STRING_NOSLASHESCAPE)
                   : "null");
}

static void quote_str(const char *s, char *out, size_t n)
{
    json_object *tmp = json_object_new_string(s);
    snprintf(out, n, "%s", json_object_to_json_string_ext(tmp, JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(tmp);
}

/* ---- paths ---- */

typedef struct sv_path {
    char buf[256];
    size_t len;
} sv_path;

/* Appends fmt's text to p (cut at its size); returns the length before,
 * for path_pop. */
static size_t path_pushf(sv_path *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static size_t path_pushf(sv_path *p, const char *fmt, ...)
{
    size_t old = p->len;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(p->buf + p->len, sizeof p->buf - p->len, fmt, ap);
    va_end(ap);
    if (w > 0)
        p->len = p->len + (size_t)w >= sizeof p->buf ? sizeof p->buf - 1 : p->len + (size_t)w;
    return old;
}

static size_t path_push_key(sv_path *p, const char *key)
{
    return path_pushf(p, "%s%s", p->len ? "." : "", key);
}

static size_t path_push_idx(sv_path *p, size_t i) { return path_pushf(p, "[%zu]", i); }

static void path_pop(sv_path *p, size_t old)
{
    p->len = old;
    p->buf[old] = '\0';
}

/* Returns 1 if s matches, 0 if not, -1 if the pattern is unsupported.
 * Each pattern is compiled once: from the schema's cache, else from this
 * call's own (regexec on a shared regex_t is thread-safe in glibc). */
static int rx_match(sv_ctx *c, const char *pattern, const char *s)
{
    rx_ent *e = rx_find(c->rx, pattern);
    if (!e || !e->pat) {
        if (!c->local || !(e = rx_add(c->local, pattern)))
            return -1;
    }
    if (!e->ok)
        return -1;
    return regexec(&e->re, s, 0, NULL, 0) == 0;
}

/* ---- formats ---- */

static int ndigits(const char *s, int n)
{
    for (int i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return 0;
    return 1;
}

static int fmt_date(const char *s)
{
    if (strlen(s) < 10 || !ndigits(s, 4) || s[4] != '-' || !ndigits(s + 5, 2) || s[7] != '-' ||
        !ndigits(s + 8, 2))
        return 0;
    int mo = (s[5] - '0') * 10 + (s[6] - '0'), d = (s[8] - '0') * 10 + (s[9] - '0');
    return mo >= 1 && mo <= 12 && d >= 1 && d <= 31;
}

static int fmt_datetime(const char *s)
{
    if (!fmt_date(s) || (s[10] != 'T' && s[10] != 't' && s[10] != ' '))
        return 0;
    const char *t = s + 11;
    if (!ndigits(t, 2) || t[2] != ':' || !ndigits(t + 3, 2) || t[5] != ':' || !ndigits(t + 6, 2))
        return 0;
    int h = (t[0] - '0') * 10 + (t[1] - '0'), mi = (t[3] - '0') * 10 + (t[4] - '0'),
        se = (t[6] - '0') * 10 + (t[7] - '0');
    if (h > 23 || mi > 59 || se > 60)
        return 0;
    t += 8;
    if (*t == '.') {
        t++;
        if (*t < '0' || *t > '9')
            return 0;
        while (*t >= '0' && *t <= '9')
            t++;
    }
    if ((*t == 'Z' || *t == 'z') && t[1] == '\0')
        return 1;
    if ((*t == '+' || *t == '-') && ndigits(t + 1, 2) && t[3] == ':' && ndigits(t + 4, 2) &&
        t[6] == '\0')
        return 1;
    return 0;
}

static int ishex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int fmt_uuid(const char *s)
{
    static const int groups[] = { 8, 4, 4, 4, 12 };
    for (int g = 0; g < 5; g++) {
        for (int i = 0; i < groups[g]; i++)
            if (!ishex(*s++))
                return 0;
        if (g < 4 && *s++ != '-')
            return 0;
    }
    return *s == '\0';
}

static int fmt_hostname(const char *s)
{
    size_t n = strlen(s), lab = 0;
    if (n == 0 || n > 253)
        return 0;
    for (size_t i = 0; i <= n; i++) {
        char c = s[i];
        if (c == '.' || c == '\0') {
            if (lab == 0 || lab > 63 || s[i - 1] == '-')
                return 0;
            lab = 0;
            continue;
        }
        int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (!alnum && !(c == '-' && lab > 0))
            return 0;
        lab++;
    }
    return 1;
}

static int fmt_ip(const char *s, int af)
{
    unsigned char buf[16];
    return inet_pton(af, s, buf) == 1;
}

static int fmt_cidr(const char *s)
{
    const char *slash = strchr(s, '/');
    if (!slash || slash == s || !slash[1] || strlen(slash + 1) > 3 ||
        !ndigits(slash + 1, (int)strlen(slash + 1)))
        return 0;
    char addr[64];
    size_t al = (size_t)(slash - s);
    if (al >= sizeof addr)
        return 0;
    memcpy(addr, s, al);
    addr[al] = '\0';
    int bits = atoi(slash + 1);
    if (fmt_ip(addr, AF_INET))
        return bits <= 32;
    if (fmt_ip(addr, AF_INET6))
        return bits <= 128;
    return 0;
}

static int fmt_mac(const char *s)
{
    for (int i = 0; i < 6; i++) {
        if (!ishex(s[0]) || !ishex(s[1]))
            return 0;
        s += 2;
        if (i < 5 && *s != ':' && *s != '-')
            return 0;
        if (i < 5)
            s++;
    }
    return *s == '\0';
}

static int fmt_byte(const char *s)
{
    size_t n = strlen(s), pad = 0;
    if (n % 4 != 0)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '=') {
            pad++;
            continue;
        }
        if (pad || !((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                     c == '+' || c == '/'))
            return 0;
    }
    return pad <= 2;
}

/* Returns 0 if s does not have the format, 1 if it does or the format
 * is not checked. */
static int fmt_check(const char *format, const char *s)
{
    if (!strcmp(format, "date-time"))
        return fmt_datetime(s);
    if (!strcmp(format, "date"))
        return strlen(s) == 10 && fmt_date(s);
    if (!strcmp(format, "uuid") || !strcmp(format, "uuid3") || !strcmp(format, "uuid4") ||
        !strcmp(format, "uuid5"))
        return fmt_uuid(s);
    if (!strcmp(format, "ipv4"))
        return fmt_ip(s, AF_INET);
    if (!strcmp(format, "ipv6"))
        return fmt_ip(s, AF_INET6);
    if (!strcmp(format, "cidr"))
        return fmt_cidr(s);
    if (!strcmp(format, "hostname"))
        return fmt_hostname(s);
    if (!strcmp(format, "mac"))
        return fmt_mac(s);
    if (!strcmp(format, "byte"))
        return fmt_byte(s);
    return 1;
}

/* ---- validation ---- */

static void sv_value(sv_ctx *c, json_object *schema, json_object **slot, sv_path *p, int root);

static int type_ok(const char *type, json_object *v)
{
    if (!strcmp(type, "object"))
        return is_obj(v);
    if (!strcmp(type, "array"))
        return is_arr(v);
    if (!strcmp(type, "string"))
        return is_str(v);
    if (!strcmp(type, "boolean"))
        return v && json_object_is_type(v, json_type_boolean);
    if (!strcmp(type, "number"))
        return is_num(v);
    if (!strcmp(type, "integer")) {
        if (v && json_object_is_type(v, json_type_int) && !go_float(v))
            return 1;
        if (v && go_float(v)) {
            /* kube-openapi: a float64 is an integer when it is integral
             * and within the integers a float64 holds exactly (2^53 - 1,
             * go-openapi's IsFloat64AJSONInteger), so 99999999999999999999
             * or 1e20 is refused, not stored as a number nobody wrote */
            double d = json_object_get_double(v);
            return isfinite(d) && d == floor(d) && fabs(d) <= 9007199254740991.0;
        }
        return 0;
    }
    return 1; /* unknown type names are not ours to reject */
}

static size_t utf8_len(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80)
            n++;
    return n;
}

static void sv_number(sv_ctx *c, json_object *schema, json_object *v, const char *path)
{
    char val[64], lim[64];
    double d = json_object_get_double(v);
    json_object *mx = cu_jget(schema, "maximum"), *mn = cu_jget(schema, "minimum"),
                *mo = cu_jget(schema, "multipleOf");
    fmt_value(v, val, sizeof val);
    if (is_num(mx)) {
        int excl = sbool(schema, "exclusiveMaximum");
        double m = json_object_get_double(mx);
        fmt_num(mx, lim, sizeof lim);
        if (excl ? d >= m : d > m)
            sv_err(c, path, "FieldValueInvalid",
                   "Invalid value: %s: %s in body should be less than %s%s", val, path,
                   excl ? "" : "or equal to ", lim);
    }
    if (is_num(mn)) {
        int excl = sbool(schema, "exclusiveMinimum");
        double m = json_object_get_double(mn);
        fmt_num(mn, lim, sizeof lim);
        if (excl ? d <= m : d < m)
            sv_err(c, path, "FieldValueInvalid",
                   "Invalid value: %s: %s in body should be greater than %s%s", val, path,
                   excl ? "" : "or equal to ", lim);
    }
    if (is_num(mo) && json_object_get_double(mo) > 0) {
        double q = d / json_object_get_double(mo);
        fmt_num(mo, lim, sizeof lim);
        if (fabs(q - nearbyint(q)) > 1e-9)
            sv_err(c, path, "FieldValueInvalid",
                   "Invalid value: %s: %s in body should be a multiple of %s", val, path, lim);
    }
}

static void sv_string(sv_ctx *c, json_object *schema, json_object *v, const char *path)
{
    const char *s = json_object_get_string(v);
    char q[300];
    json_object *mxl = cu_jget(schema, "maxLength"), *mnl = cu_jget(schema, "minLength");
    const char *pattern = cu_jstr(schema, "pattern"), *format = cu_jstr(schema, "format");
    size_t len = utf8_len(s);
    quote_str(s, q, sizeof q);
    if (is_num(mxl) && (double)len > json_object_get_double(mxl)) {
        long long m = (long long)json_object_get_int64(mxl);
        sv_err(c, path, "FieldValueTooLong", "Too long: may not be more than %lld %s", m,
               m == 1 ? "byte" : "bytes");
    }
    if (is_num(mnl) && (double)len < json_object_get_double(mnl))
        sv_err(c, path, "FieldValueInvalid",
               "Invalid value: %s: %s in body should be at least %lld chars long", q, path,
               (long long)json_object_get_int64(mnl));
    if (pattern && rx_match(c, pattern, s) == 0)
        sv_err(c, path, "FieldValueInvalid", "Invalid value: %s: %s in body should match '%s'", q,
               path, pattern);
    if (format && !fmt_check(format, s))
        sv_err(c, path, "FieldValueTypeInvalid",
               "Invalid value: %s: %s in body must be of type %s: %s", q, path, format, q);
}

/* The identity of a list-type=map element, as kube-apiserver prints it
 * in a Duplicate error: a JSON object of the key fields, sorted. */
static json_object *map_key_of(json_object *e, json_object *keys)
{
    size_t nk = json_object_array_length(keys);
    const char *names[16];
    size_t n = 0;
    for (size_t i = 0; i < nk && n < 16; i++) {
        json_object *k = json_object_array_get_idx(keys, i);
        if (is_str(k))
            names[n++] = json_object_get_string(k);
    }
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            const char *t = names[j];
            names[j] = names[j - 1];
            names[j - 1] = t;
        }
    json_object *out = json_object_new_object();
    for (size_t i = 0; i < n; i++) {
        json_object *v = NULL;
        if (is_obj(e) && json_object_object_get_ex(e, names[i], &v))
            json_object_object_add(out, names[i], json_object_get(v));
    }
    return out;
}

/* ---- uniqueness (list-type set and map), linear in the list ---- */

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

/* A hash consistent with cu_json_equal: numbers by their double value
 * (1 == 1.0), objects independent of key order. */
static uint64_t jhash(json_object *v)
{
    if (!v)
        return 0x5bd1e995ULL;
    switch (json_object_get_type(v)) {
    case json_type_boolean: return mix64(json_object_get_boolean(v) ? 3 : 5);
    case json_type_int:
    case json_type_double: {
        double d = json_object_get_double(v);
        uint64_t bits;
        if (d == 0)
            d = 0; /* -0.0 */
        memcpy(&bits, &d, sizeof bits);
        return mix64(bits ^ 0x7ULL);
    }
    case json_type_string:
        return mix64(cu_hash_bytes(CU_HASH_INIT, json_object_get_string(v),
                                   (size_t)json_object_get_string_len(v)));
    case json_type_array: {
        uint64_t h = 0xa5a5ULL;
        size_t n = json_object_array_length(v);
        for (size_t i = 0; i < n; i++)
            h = mix64(h * 31 + jhash(json_object_array_get_idx(v, i)));
        return h;
    }
    case json_type_object: {
        uint64_t h = 0x3c3cULL;
        json_object_object_foreach (v, k, e)
            h += mix64(cu_hash_bytes(CU_HASH_INIT, k, strlen(k)) ^
                       (jhash(e) * 0x9e3779b97f4a7c15ULL));
        return h;
    }
    default: return 0;
    }
}

/* keys == NULL: set semantics (whole values); else list-map keys. */
static uint64_t elem_hash(json_object *e, json_object *keys)
{
    if (!keys)
        return jhash(e);
    uint64_t h = 0x1234ULL;
    size_t nk = json_object_array_length(keys);
    for (size_t i = 0; i < nk; i++) {
        json_object *k = json_object_array_get_idx(keys, i), *v = NULL;
        int has =
            is_str(k) && is_obj(e) && json_object_object_get_ex(e, json_object_get_string(k), &v);
        h = mix64(h * 31 + (has ? jhash(v) : 0xdeadULL));
    }
    return h;
}

static int elem_equal(json_object *a, json_object *b, json_object *keys)
{
    if (!keys)
        return cu_json_equal(a, b);
    size_t nk = json_object_array_length(keys);
    for (size_t i = 0; i < nk; i++) {
        json_object *k = json_object_array_get_idx(keys, i), *va = NULL, *vb = NULL;
        if (!is_str(k))
            continue;
        const char *kn = json_object_get_string(k);
        int ha = is_obj(a) && json_object_object_get_ex(a, kn, &va);
        int hb = is_obj(b) && json_object_object_get_ex(b, kn, &vb);
        if (ha != hb || (ha && !cu_json_equal(va, vb)))
            return 0;
    }
    return 1;
}

typedef struct uslot {
    uint64_t h;
    size_t idx;
    int used;
} uslot;

/* Reports every element equal to an earlier one as a Duplicate. */
static void sv_unique(sv_ctx *c, json_object *arr, json_object *keys, sv_path *p)
{
    size_t n = json_object_array_length(arr), cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    uslot *t = calloc(cap, sizeof *t);
    if (!t) {
        sv_err(c, p->buf, "InternalError", "Internal error: out of memory");
        return;
    }
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(arr, i);
        uint64_t h = elem_hash(e, keys);
        size_t j = h & (cap - 1);
        int dup = 0;
        for (; t[j].used; j = (j + 1) & (cap - 1))
            if (t[j].h == h && elem_equal(e, json_object_array_get_idx(arr, t[j].idx), keys)) {
                dup = 1;
                break;
            }
        if (!dup) {
            t[j].used = 1;
            t[j].h = h;
            t[j].idx = i;
            continue;
        }
        size_t old = path_push_idx(p, i);
        if (keys) {
            json_object *k = map_key_of(e, keys);
            sv_err(c, p->buf, "FieldValueDuplicate", "Duplicate value: %s",
                   json_object_to_json_string_ext(k, JSON_C_TO_STRING_PLAIN));
            json_object_put(k);
        } else {
            char val[200];
            fmt_value(e, val, sizeof val);
            sv_err(c, p->buf, "FieldValueDuplicate", "Duplicate value: %s", val);
        }
        path_pop(p, old);
    }
    free(t);
}

static void sv_array(sv_ctx *c, json_object *schema, json_object *arr, sv_path *p)
{
    size_t n = json_object_array_length(arr);
    json_object *items = cu_jget(schema, "items"), *mxi = cu_jget(schema, "maxItems"),
                *mni = cu_jget(schema, "minItems");
    const char *lt = cu_jstr(schema, "x-kubernetes-list-type");
    if (is_num(mxi) && (double)n > json_object_get_double(mxi)) {
        /* reported first; the items are still checked, as kube-apiserver
         * does (linear: the body limit bounds them, uniqueness is hashed) */
        long long m = (long long)json_object_get_int64(mxi);
        sv_err(c, p->buf, "FieldValueTooMany", "Too many: %zu: must have at most %lld %s", n, m,
               m == 1 ? "item" : "items");
    }
    if (is_num(mni) && (double)n < json_object_get_double(mni))
        sv_err(c, p->buf, "FieldValueInvalid",
               "Invalid value: %zu: %s in body should have at least %lld items", n, p->buf,
               (long long)json_object_get_int64(mni));
    if (is_obj(items)) {
        for (size_t i = 0; i < n; i++) {
            size_t old = path_push_idx(p, i);
            json_object *e = json_object_array_get_idx(arr, i);
            json_object *slot = e;
            sv_value(c, items, &slot, p, 0);
            path_pop(p, old);
        }
    }
    if (lt && !strcmp(lt, "set"))
        sv_unique(c, arr, NULL, p);
    else if (lt && !strcmp(lt, "map") && is_arr(cu_jget(schema, "x-kubernetes-list-map-keys")))
        sv_unique(c, arr, cu_jget(schema, "x-kubernetes-list-map-keys"), p);
}

static int keep_embedded(int root, json_object *schema, const char *k)
{
    int embedded = root || sbool(schema, "x-kubernetes-embedded-resource");
    return embedded && (!strcmp(k, "apiVersion") || !strcmp(k, "kind") || !strcmp(k, "metadata"));
}

static void sv_object(sv_ctx *c, json_object *schema, json_object *obj, sv_path *p, int root)
{
    json_object *props = cu_jget(schema, "properties"),
                *addl = cu_jget(schema, "additionalProperties");
    int preserve = sbool(schema, "x-kubernetes-preserve-unknown-fields");
    int addl_any =
        addl && json_object_is_type(addl, json_type_boolean) && json_object_get_boolean(addl);
    json_object *addl_schema = is_obj(addl) ? addl : NULL;

    /* 1. prune unknown fields and non-nullable nulls */
    if (c->mutate) {
        size_t nk = (size_t)json_object_object_length(obj), nd = 0;
        char **del = calloc(nk ? nk : 1, sizeof *del);
        if (!del)
            return;
        json_object_object_foreach (obj, k, v) {
            if (keep_embedded(root, schema, k))
                continue;
            json_object *ps = props ? cu_jget(props, k) : NULL;
            if (!ps && !addl_schema && !addl_any && !preserve) {
                if (c->strict) {
                    size_t old = path_push_key(p, k);
                    char msg[300];
                    quote_str(p->buf, msg, sizeof msg);
                    sv_err(c, p->buf, "UnknownField", "unknown field %s", msg);
                    path_pop(p, old);
                }
                del[nd++] = strdup(k);
                continue;
            }
            json_object *eff = ps ? ps : addl_schema;
            if (!v && eff && !sbool(eff, "nullable"))
                del[nd++] = strdup(k);
        }
        for (size_t i = 0; i < nd; i++) {
            if (del[i])
                json_object_object_del(obj, del[i]);
            free(del[i]);
        }
        free(del);
    }

    /* 2. defaults for absent properties */
    if (c->mutate && is_obj(props)) {
        json_object_object_foreach (props, pk, ps) {
            json_object *def = NULL, *cur = NULL;
            if (!is_obj(ps) || !json_object_object_get_ex(ps, "default", &def))
                continue;
            if (json_object_object_get_ex(obj, pk, &cur))
                continue;
            json_object *copy = NULL;
            if (def && json_object_deep_copy(def, &copy, NULL) != 0)
                continue;
            json_object_object_add(obj, pk, copy);
        }
    }

    /* 3. required, property counts */
    json_object *req = cu_jget(schema, "required");
    if (is_arr(req)) {
        size_t n = json_object_array_length(req);
        for (size_t i = 0; i < n; i++) {
            json_object *r = json_object_array_get_idx(req, i);
            json_object *cur = NULL;
            if (!is_str(r))
                continue;
            if (!json_object_object_get_ex(obj, json_object_get_string(r), &cur)) {
                size_t old = path_push_key(p, json_object_get_string(r));
                sv_err(c, p->buf, "FieldValueRequired", "Required value");
                path_pop(p, old);
            }
        }
    }
    json_object *mxp = cu_jget(schema, "maxProperties"), *mnp = cu_jget(schema, "minProperties");
    size_t np = (size_t)json_object_object_length(obj);
    if (is_num(mxp) && (double)np > json_object_get_double(mxp)) {
        long long m = (long long)json_object_get_int64(mxp);
        sv_err(c, p->buf, "FieldValueTooMany", "Too many: %zu: must have at most %lld %s", np, m,
               m == 1 ? "item" : "items");
    }
    if (is_num(mnp) && (double)np < json_object_get_double(mnp))
        sv_err(c, p->buf, "FieldValueInvalid",
               "Invalid value: %zu: %s in body should have at least %lld properties", np, p->buf,
               (long long)json_object_get_int64(mnp));

    /* 4. children */
    json_object_object_foreach (obj, k, v) {
        if (keep_embedded(root, schema, k))
            continue;
        json_object *ps = props ? cu_jget(props, k) : NULL;
        if (!ps)
            ps = addl_schema;
        if (!ps)
            continue;
        size_t old = path_push_key(p, k);
        json_object *slot = v;
        sv_value(c, ps, &slot, p, 0);
        path_pop(p, old);
    }
}

/* Validates v against each branch without pruning or defaulting;
 * returns how many branches it satisfies. */
static size_t sv_branches(sv_ctx *c, json_object *list, json_object *v, sv_path *p, int root)
{
    size_t ok = 0, n = json_object_array_length(list);
    for (size_t i = 0; i < n; i++) {
        sv_ctx sub = { c->strict, 0, NULL, 0, 0, c->rx, c->local };
        json_object *slot = v;
        sv_value(&sub, json_object_array_get_idx(list, i), &slot, p, root);
        if (sub.n == 0)
            ok++;
    }
    return ok;
}

static void sv_value(sv_ctx *c, json_object *schema, json_object **slot, sv_path *p, int root)
{
    json_object *v = *slot;
    const char *type = cu_jstr(schema, "type");
    int ios = sbool(schema, "x-kubernetes-int-or-string");
    char val[300];

    if (!v) {
        if (sbool(schema, "nullable"))
            return;
        sv_err(c, p->buf, "FieldValueTypeInvalid",
               "Invalid value: \"null\": %s in body must be of type %s: \"null\"", p->buf,
               ios    ? "integer,string"
               : type ? type
                      : "object");
        return;
    }
    if (ios) {
        if (!is_str(v) && !type_ok("integer", v)) {
            sv_err(c, p->buf, "FieldValueTypeInvalid",
                   "Invalid value: \"%s\": %s in body must be of type integer,string: \"%s\"",
                   type_name(v), p->buf, type_name(v));
            return;
        }
    } else if (type && !type_ok(type, v)) {
        sv_err(c, p->buf, "FieldValueTypeInvalid",
               "Invalid value: \"%s\": %s in body must be of type %s: \"%s\"", type_name(v), p->buf,
               type, type_name(v));
        return;
    }

    json_object *en = cu_jget(schema, "enum");
    if (is_arr(en)) {
        size_t n = json_object_array_length(en), i;
        for (i = 0; i < n; i++)
            if (cu_json_equal(v, json_object_array_get_idx(en, i)))
                break;
        if (i == n) {
            char list[400];
            size_t used = 0;
            list[0] = '\0';
            for (i = 0; i < n && used < sizeof list; i++) {
                json_object *e = json_object_array_get_idx(en, i);
                char one[120], q[160];
                if (is_str(e))
                    snprintf(one, sizeof one, "%s", json_object_get_string(e));
                else
                    fmt_value(e, one, sizeof one);
                quote_str(one, q, sizeof q);
                int w = snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", q);
                if (w < 0)
                    break;
                used += (size_t)w;
            }
            fmt_value(v, val, sizeof val);
            sv_err(c, p->buf, "FieldValueNotSupported",
                   "Unsupported value: %s: supported values: %s", val, list);
        }
    }

    if (is_num(v))
        sv_number(c, schema, v, p->buf);
    else if (is_str(v))
        sv_string(c, schema, v, p->buf);
    else if (is_arr(v))
        sv_array(c, schema, v, p);
    else if (is_obj(v))
        sv_object(c, schema, v, p, root);

    json_object *all = cu_jget(schema, "allOf"), *any = cu_jget(schema, "anyOf"),
                *one = cu_jget(schema, "oneOf"), *not = cu_jget(schema, "not");
    if (is_arr(all)) {
        size_t n = json_object_array_length(all);
        for (size_t i = 0; i < n; i++) {
            int saved = c->mutate;
            json_object *s2 = v;
            c->mutate = 0;
            sv_value(c, json_object_array_get_idx(all, i), &s2, p, root);
            c->mutate = saved;
        }
    }
    if (is_arr(any) && json_object_array_length(any) > 0 && sv_branches(c, any, v, p, root) == 0) {
        fmt_value(v, val, sizeof val);
        sv_err(c, p->buf, "FieldValueInvalid",
               "Invalid value: %s: %s in body must validate at least one schema (anyOf)", val,
               p->buf);
    }
    if (is_arr(one) && json_object_array_length(one) > 0 && sv_branches(c, one, v, p, root) != 1) {
        fmt_value(v, val, sizeof val);
        sv_err(c, p->buf, "FieldValueInvalid",
               "Invalid value: %s: %s in body must validate one and only one schema (oneOf)", val,
               p->buf);
    }
    if (is_obj(not )) {
        sv_ctx sub = { c->strict, 0, NULL, 0, 0, c->rx, c->local };
        json_object *s2 = v;
        sv_value(&sub, not, &s2, p, root);
        if (sub.n == 0) {
            fmt_value(v, val, sizeof val);
            sv_err(c, p->buf, "FieldValueInvalid",
                   "Invalid value: %s: %s in body must not validate the schema (not)", val, p->buf);
        }
    }
}

size_t cu_schema_validate_rx(json_object *schema, const cu_schema_rx *rx, json_object *obj,
                             int strict, cu_schema_err *errs, size_t max)
{
    sv_ctx c = { strict, 1, errs, max, 0, rx, calloc(1, sizeof(cu_schema_rx)) };
    sv_path p;
    p.buf[0] = '\0';
    p.len = 0;
    if (!is_obj(schema)) {
        sv_err(&c, "", "FieldValueInvalid", "Invalid value: the CRD has no structural schema");
    } else {
        json_object *slot = obj;
        sv_value(&c, schema, &slot, &p, 1);
    }
    cu_schema_rx_free(c.local);
    return c.n;
}

size_t cu_schema_validate(json_object *schema, json_object *obj, int strict, cu_schema_err *errs,
                          size_t max)
{
    return cu_schema_validate_rx(schema, NULL, obj, strict, errs, max);
}

/* ---- checks of the schema itself (CRD creation and update) ---- */

typedef struct sc_ctx {
    sv_ctx *c;
    sv_path path; /* the schema's field path */
} sc_ctx;

static void sc_err(sc_ctx *x, const char *key, json_object *v, const char *detail)
{
    size_t old = path_pushf(&x->path, ".%s", key);
    sv_err(
        x->c, x->path.buf, "FieldValueInvalid", "Invalid value: %s: %s",
        json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
        detail);
    path_pop(&x->path, old);
}

/* An int64 in JSON (an integral double in range counts). */
static int json_int64(json_object *v, long long *out)
{
    if (json_object_is_type(v, json_type_int)) {
        *out = (long long)json_object_get_int64(v);
        return 1;
    }
    if (json_object_is_type(v, json_type_double)) {
        double d = json_object_get_double(v);
        if (isfinite(d) && d == floor(d) && fabs(d) < 9.0e18) {
            *out = (long long)d;
            return 1;
        }
    }
    return 0;
}

/* A regular expression kube-apiserver's (RE2) compiler refuses, or one
 * POSIX refuses after translation; unsupported-but-valid ECMA forms
 * (\b, \uXXXX) are not errors. Writes the reason into why. */
static int pattern_bad(const char *pat, char *why, size_t n)
{
    if (rx_too_big(pat, why, n))
        return 1;
    static const char *const perl[] = { "(?=", "(?!", "(?<=", "(?<!" };
    for (size_t i = 0; i < sizeof perl / sizeof perl[0]; i++)
        if (strstr(pat, perl[i])) {
            snprintf(why, n, "error parsing regexp: invalid or unsupported Perl syntax: `%s`",
                     perl[i]);
            return 1;
        }
    for (const char *q = pat; *q; q++) {
        if (*q == '\\' && q[1] >= '1' && q[1] <= '9') {
            snprintf(why, n, "error parsing regexp: invalid escape sequence: `\\%c`", q[1]);
            return 1;
        }
        if (*q == '\\' && q[1])
            q++;
    }
    char *ere = rx_translate(pat);
    if (!ere)
        return 0;
    regex_t re;
    int rc = regcomp(&re, ere, REG_EXTENDED | REG_NOSUB);
    free(ere);
    if (rc == 0) {
        regfree(&re);
        return 0;
    }
    char msg[200];
    regerror(rc, &re, msg, sizeof msg);
    snprintf(why, n, "error parsing regexp: %s", msg);
    return 1;
}

static void sc_walk(sc_ctx *x, json_object *schema, sv_path *dp, int depth);

static void sc_list(sc_ctx *x, json_object *schema, const char *key, sv_path *dp, int depth)
{
    json_object *l = cu_jget(schema, key);
    size_t n = is_arr(l) ? json_object_array_length(l) : 0;
    for (size_t i = 0; i < n; i++) {
        size_t old = path_pushf(&x->path, ".%s[%zu]", key, i);
        sc_walk(x, json_object_array_get_idx(l, i), dp, depth + 1);
        path_pop(&x->path, old);
    }
}

static void sc_walk(sc_ctx *x, json_object *schema, sv_path *dp, int depth)
{
    if (!is_obj(schema) || depth > CU_JSON_MAX_DEPTH)
        return;
    static const char *const counts[] = { "maxLength", "minLength",     "maxItems",
                                          "minItems",  "maxProperties", "minProperties" };
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        json_object *v = NULL;
        long long k;
        if (!json_object_object_get_ex(schema, counts[i], &v))
            continue;
        if (!v || !json_int64(v, &k))
            sc_err(x, counts[i], v, "must be an integer");
        else if (k < 0)
            sc_err(x, counts[i], v, "must be greater than or equal to 0");
    }
    static const char *const nums[] = { "minimum", "maximum", "multipleOf" };
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        json_object *v = NULL;
        if (!json_object_object_get_ex(schema, nums[i], &v))
            continue;
        if (!is_num(v) || !isfinite(json_object_get_double(v)))
            sc_err(x, nums[i], v, "must be a number");
        else if (i == 2 && json_object_get_double(v) <= 0)
            sc_err(x, nums[i], v, "must be greater than zero");
    }
    json_object *pat = NULL;
    if (json_object_object_get_ex(schema, "pattern", &pat)) {
        char why[300], detail[400];
        if (!is_str(pat)) {
            sc_err(x, "pattern", pat, "must be a string");
        } else if (pattern_bad(json_object_get_string(pat), why, sizeof why)) {
            snprintf(detail, sizeof detail, "must be a valid regular expression, but isn't: %s",
                     why);
            sc_err(x, "pattern", pat, detail);
        }
    }
    json_object *def = NULL;
    if (json_object_object_get_ex(schema, "default", &def)) {
        /* the default must be valid against its own schema */
        cu_schema_err one[1];
        sv_ctx sub = { 0, 0, one, 1, 0, NULL, x->c->local };
        json_object *slot = def;
        sv_value(&sub, schema, &slot, dp, 0);
        if (sub.n) {
            size_t old = path_pushf(&x->path, ".default");
            sv_err(x->c, x->path.buf, one[0].type, "%s", one[0].message);
            path_pop(&x->path, old);
        }
    }
    json_object *props = cu_jget(schema, "properties");
    if (is_obj(props)) {
        json_object_object_foreach (props, k, v) {
            size_t old = path_pushf(&x->path, ".properties[%s]", k);
            size_t dold = path_push_key(dp, k);
            sc_walk(x, v, dp, depth + 1);
            path_pop(dp, dold);
            path_pop(&x->path, old);
        }
    }
    static const char *const subs[] = { "additionalProperties", "items", "not" };
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
        json_object *v = cu_jget(schema, subs[i]);
        if (!is_obj(v))
            continue;
        size_t old = path_pushf(&x->path, ".%s", subs[i]);
        sc_walk(x, v, dp, depth + 1);
        path_pop(&x->path, old);
    }
    sc_list(x, schema, "allOf", dp, depth);
    sc_list(x, schema, "anyOf", dp, depth);
    sc_list(x, schema, "oneOf", dp, depth);
}

size_t cu_schema_check(json_object *schema, const char *path, cu_schema_err *errs, size_t max)
{
    sv_ctx c = { 0, 0, errs, max, 0, NULL, calloc(1, sizeof(cu_schema_rx)) };
    sc_ctx x = { &c, { "", 0 } };
    sv_path dp;
    dp.buf[0] = '\0';
    dp.len = 0;
    path_pushf(&x.path, "%s", path ? path : "");
    sc_walk(&x, schema, &dp, 0);
    cu_schema_rx_free(c.local);
    return c.n;
}
