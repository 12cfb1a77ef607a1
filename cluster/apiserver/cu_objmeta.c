/*
 * cu_objmeta.c - ObjectMeta and built-in field checks, JSON body prescan,
 * integer query parameters (see cu_objmeta.h).
 */
#include "cu_objmeta.h"

#include "cu_base.h"
#include "cu_base64.h"
#include "cu_json.h"
#include "cu_names.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------- error list ---------------- */

typedef struct errs {
    cu_schema_err *e;
    size_t n, max;
} errs;

static void add(errs *es, const char *field, const char *type, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void add(errs *es, const char *field, const char *type, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cu_schema_err_vadd(es->e, es->max, &es->n, field, type, fmt, ap);
    va_end(ap);
}

/* s (len bytes) as Go's %q shows it, cut to fit out. */
static const char *quote(const char *s, size_t len, char *out, size_t n)
{
    size_t k = 0;
    if (n < 8)
        return "\"\"";
    out[k++] = '"';
    for (size_t i = 0; i < len && k + 8 < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            out[k++] = '\\';
            out[k++] = (char)c;
        } else if (c < 0x20 || c == 0x7f) {
            k += (size_t)snprintf(out + k, n - k, "\\x%02x", c);
        } else {
            out[k++] = (char)c;
        }
    }
    out[k++] = '"';
    out[k] = '\0';
    return out;
}

static const char *type_name(json_object *v)
{
    return cu_schema_type_name(json_object_get_type(v));
}

/* kube-apiserver's wording for a field of the wrong type. */
static void type_err(errs *es, const char *field, json_object *v, const char *want)
{
    add(es, field, "FieldValueTypeInvalid",
        "Invalid value: \"%s\": %s in body must be of type %s: \"%s\"", type_name(v), field, want,
        type_name(v));
}

static int is_type(json_object *v, json_type t) { return json_object_is_type(v, t); }

static int has_nul(json_object *s)
{
    return is_type(s, json_type_string) &&
           strlen(json_object_get_string(s)) != (size_t)json_object_get_string_len(s);
}

/* ---------------- names, labels, annotations ---------------- */

static int alnum(char c) { return isalnum((unsigned char)c) != 0; }

static const char CONFIG_KEY_MSG[] =
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. "
    "'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";

/* One error per problem bit of the name s[0..n) (cu_names.h), in
 * kube-apiserver's order. */
static void name_errs(errs *es, const char *field, const char *s, size_t n, unsigned problems)
{
    char q[600];
    for (unsigned b = 1; problems; b <<= 1)
        if (problems & b) {
            add(es, field, "FieldValueInvalid", "Invalid value: %s: %s", quote(s, n, q, sizeof q),
                cu_name_detail(b));
            problems &= ~b;
        }
}

static void check_labels(errs *es, json_object *m)
{
    json_object *l = cu_jget(m, "labels");
    if (!l || is_type(l, json_type_null))
        return;
    if (!is_type(l, json_type_object)) {
        type_err(es, "metadata.labels", l, "object");
        return;
    }
    json_object_object_foreach (l, k, v) {
        name_errs(es, "metadata.labels", k, strlen(k), cu_qname_problems(k, strlen(k), 0));
        if (!is_type(v, json_type_string)) {
            char f[300];
            snprintf(f, sizeof f, "metadata.labels.%s", k);
            type_err(es, f, v, "string");
            continue;
        }
        const char *s = json_object_get_string(v);
        size_t n = (size_t)json_object_get_string_len(v);
        name_errs(es, "metadata.labels", s, n, cu_label_value_problems(s, n));
    }
}

static void check_annotations(errs *es, json_object *m)
{
    json_object *a = cu_jget(m, "annotations");
    if (!a || is_type(a, json_type_null))
        return;
    if (!is_type(a, json_type_object)) {
        type_err(es, "metadata.annotations", a, "object");
        return;
    }
    size_t total = 0;
    json_object_object_foreach (a, k, v) {
        size_t kl = strlen(k);
        name_errs(es, "metadata.annotations", k, kl, cu_qname_problems(k, kl, 1));
        total += kl;
        if (!is_type(v, json_type_string)) {
            char f[300];
            snprintf(f, sizeof f, "metadata.annotations.%s", k);
            type_err(es, f, v, "string");
            continue;
        }
        total += (size_t)json_object_get_string_len(v);
    }
    if (total > CU_ANNOTATIONS_MAX_BYTES)
        add(es, "metadata.annotations", "FieldValueTooLong", "Too long: must have at most %d bytes",
            CU_ANNOTATIONS_MAX_BYTES);
}

static void check_finalizers(errs *es, json_object *m)
{
    json_object *f = cu_jget(m, "finalizers");
    char field[64];
    if (!f || is_type(f, json_type_null))
        return;
    if (!is_type(f, json_type_array)) {
        type_err(es, "metadata.finalizers", f, "array");
        return;
    }
    for (size_t i = 0; i < json_object_array_length(f); i++) {
        json_object *v = json_object_array_get_idx(f, i);
        snprintf(field, sizeof field, "metadata.finalizers[%zu]", i);
        if (!is_type(v, json_type_string)) {
            type_err(es, field, v, "string");
            continue;
        }
        const char *s = json_object_get_string(v);
        size_t n = (size_t)json_object_get_string_len(v);
        unsigned p = cu_qname_problems(s, n, 0);
        name_errs(es, field, s, n, p);
        /* a finalizer without a domain must be one of the standard ones */
        char q[600];
        if (!p && !memchr(s, '/', n) && strcmp(s, "kubernetes") && strcmp(s, "orphan") &&
            strcmp(s, "foregroundDeletion"))
            add(es, field, "FieldValueInvalid",
                "Invalid value: %s: name is neither a standard finalizer name nor is it fully "
                "qualified",
                quote(s, n, q, sizeof q));
    }
}

static void check_owner_refs(errs *es, json_object *m)
{
    json_object *r = cu_jget(m, "ownerReferences");
    char field[96];
    if (!r || is_type(r, json_type_null))
        return;
    if (!is_type(r, json_type_array)) {
        type_err(es, "metadata.ownerReferences", r, "array");
        return;
    }
    int controllers = 0;
    for (size_t i = 0; i < json_object_array_length(r); i++) {
        json_object *o = json_object_array_get_idx(r, i);
        snprintf(field, sizeof field, "metadata.ownerReferences[%zu]", i);
        if (!is_type(o, json_type_object)) {
            type_err(es, field, o, "object");
            continue;
        }
        static const char *const req[] = { "apiVersion", "kind", "name", "uid" };
        static const char *const what[] = { "version", "kind", "name", "uid" };
        for (int k = 0; k < 4; k++) {
            json_object *v = cu_jget(o, req[k]);
            char f[128];
            snprintf(f, sizeof f, "metadata.ownerReferences.%s", req[k]);
            if (v && !is_type(v, json_type_string) && !is_type(v, json_type_null)) {
                type_err(es, f, v, "string");
            } else if (!v || !json_object_get_string_len(v)) {
                add(es, f, "FieldValueInvalid", "Invalid value: \"\": %s must not be empty",
                    what[k]);
            } else if (has_nul(v)) {
                char q[600];
                add(es, f, "FieldValueInvalid", "Invalid value: %s: must not contain NUL",
                    quote(json_object_get_string(v), (size_t)json_object_get_string_len(v), q,
                          sizeof q));
            }
        }
        static const char *const flags[] = { "controller", "blockOwnerDeletion" };
        for (int k = 0; k < 2; k++) {
            json_object *v = cu_jget(o, flags[k]);
            char f[128];
            snprintf(f, sizeof f, "%s.%s", field, flags[k]);
            if (v && !is_type(v, json_type_boolean) && !is_type(v, json_type_null))
                type_err(es, f, v, "boolean");
        }
        json_object *c = cu_jget(o, "controller");
        if (is_type(c, json_type_boolean) && json_object_get_boolean(c))
            controllers++;
    }
    if (controllers > 1)
        add(es, "metadata.ownerReferences", "FieldValueInvalid",
            "Invalid value: []v1.OwnerReference(...): Only one reference can have Controller set "
            "to true");
}

/* RFC 3339 as metav1.Time decodes it: 2006-01-02T15:04:05Z07:00 */
static int rfc3339(const char *s)
{
    static const char shape[] = "dddd-dd-ddTdd:dd:dd";
    for (size_t i = 0; i < sizeof shape - 1; i++)
        if (shape[i] == 'd' ? !isdigit((unsigned char)s[i]) : s[i] != shape[i])
            return 0;
    int mon = (s[5] - '0') * 10 + s[6] - '0', day = (s[8] - '0') * 10 + s[9] - '0';
    int h = (s[11] - '0') * 10 + s[12] - '0', mi = (s[14] - '0') * 10 + s[15] - '0';
    int sec = (s[17] - '0') * 10 + s[18] - '0';
    if (mon < 1 || mon > 12 || day < 1 || day > 31 || h > 23 || mi > 59 || sec > 60)
        return 0;
    const char *p = s + sizeof shape - 1;
    if (*p == '.') {
        p++;
        if (!isdigit((unsigned char)*p))
            return 0;
        while (isdigit((unsigned char)*p))
            p++;
    }
    if (*p == 'Z')
        return p[1] == '\0';
    if ((*p == '+' || *p == '-') && isdigit((unsigned char)p[1]) && isdigit((unsigned char)p[2]) &&
        p[3] == ':' && isdigit((unsigned char)p[4]) && isdigit((unsigned char)p[5]))
        return p[6] == '\0';
    return 0;
}

static void check_scalars(errs *es, json_object *m)
{
    static const char *const strs[] = { "name", "generateName",    "namespace",
                                        "uid",  "resourceVersion", "selfLink" };
    static const char *const times[] = { "creationTimestamp", "deletionTimestamp" };
    static const char *const ints[] = { "generation", "deletionGracePeriodSeconds" };
    char f[96], q[600];
    for (size_t i = 0; i < sizeof strs / sizeof *strs; i++) {
        json_object *v = cu_jget(m, strs[i]);
        snprintf(f, sizeof f, "metadata.%s", strs[i]);
        if (!v || is_type(v, json_type_null))
            continue;
        if (!is_type(v, json_type_string))
            type_err(es, f, v, "string");
        else if (has_nul(v) && i > 0) /* the store words the name's problem */
            add(es, f, "FieldValueInvalid", "Invalid value: %s: must not contain a NUL character",
                quote(json_object_get_string(v), (size_t)json_object_get_string_len(v), q,
                      sizeof q));
    }
    for (size_t i = 0; i < sizeof times / sizeof *times; i++) {
        json_object *v = cu_jget(m, times[i]);
        snprintf(f, sizeof f, "metadata.%s", times[i]);
        if (!v || is_type(v, json_type_null))
            continue;
        if (!is_type(v, json_type_string))
            type_err(es, f, v, "string");
        else if (has_nul(v) || !rfc3339(json_object_get_string(v)))
            add(es, f, "FieldValueInvalid",
                "Invalid value: %s: must be a timestamp in RFC 3339 format (e.g. "
                "'2006-01-02T15:04:05Z')",
                quote(json_object_get_string(v), (size_t)json_object_get_string_len(v), q,
                      sizeof q));
    }
    for (size_t i = 0; i < sizeof ints / sizeof *ints; i++) {
        json_object *v = cu_jget(m, ints[i]);
        snprintf(f, sizeof f, "metadata.%s", ints[i]);
        if (v && !is_type(v, json_type_int) && !is_type(v, json_type_null))
            type_err(es, f, v, "integer");
    }
    json_object *mf = cu_jget(m, "managedFields");
    if (mf && !is_type(mf, json_type_array) && !is_type(mf, json_type_null))
        type_err(es, "metadata.managedFields", mf, "array");
}

/* ---------------- built-in kinds ---------------- */

static int config_key_ok(const char *k, size_t n)
{
    if (!n || n > 253 || strcmp(k, ".") == 0 || strcmp(k, "..") == 0 || strncmp(k, "..", 2) == 0)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!alnum(k[i]) && k[i] != '-' && k[i] != '_' && k[i] != '.')
            return 0;
    return 1;
}

/* a map of config keys to strings (b64: base64 strings, as []byte decodes) */
static void check_string_map(errs *es, json_object *o, const char *field, int b64, size_t *bytes)
{
    json_object *d = cu_jget(o, field);
    char q[600];
    if (!d || is_type(d, json_type_null))
        return;
    if (!is_type(d, json_type_object)) {
        type_err(es, field, d, "object");
        return;
    }
    json_object_object_foreach (d, k, v) {
        size_t kl = strlen(k);
        char f[320];
        snprintf(f, sizeof f, "%s[%s]", field, k);
        if (!config_key_ok(k, kl))
            add(es, f, "FieldValueInvalid", "Invalid value: %s: %s", quote(k, kl, q, sizeof q),
                kl > 253 ? "must be no more than 253 characters" : CONFIG_KEY_MSG);
        if (!is_type(v, json_type_string)) {
            type_err(es, f, v, "string");
            continue;
        }
        size_t n = (size_t)json_object_get_string_len(v);
        if (b64 && !cu_base64_valid(json_object_get_string(v), n)) {
            add(es, f, "FieldValueInvalid", "Invalid value: %s: illegal base64 data",
                quote(json_object_get_string(v), n, q, 64 < sizeof q ? 64 : sizeof q));
            continue;
        }
        *bytes += kl + (b64 ? n / 4 * 3 : n);
    }
}

static void check_builtin(errs *es, json_object *obj, const char *kind)
{
    size_t bytes = 0;
    if (strcmp(kind, "ConfigMap") == 0) {
        check_string_map(es, obj, "data", 0, &bytes);
        check_string_map(es, obj, "binaryData", 1, &bytes);
        json_object *d = cu_jget(obj, "data"), *b = cu_jget(obj, "binaryData");
        if (is_type(d, json_type_object) && is_type(b, json_type_object)) {
            json_object_object_foreach (d, k, v) {
                (void)v;
                if (cu_jget(b, k)) {
                    char f[320], q[600];
                    snprintf(f, sizeof f, "data[%s]", k);
                    add(es, f, "FieldValueInvalid",
                        "Invalid value: %s: duplicate of key present in binaryData",
                        quote(k, strlen(k), q, sizeof q));
                }
            }
        }
        if (bytes > 1024 * 1024)
            add(es, "", "FieldValueTooLong", "Too long: must have at most 1048576 bytes");
    } else if (strcmp(kind, "Secret") == 0) {
        check_string_map(es, obj, "data", 1, &bytes);
        check_string_map(es, obj, "stringData", 0, &bytes);
        json_object *t = cu_jget(obj, "type");
        if (t && !is_type(t, json_type_string) && !is_type(t, json_type_null))
            type_err(es, "type", t, "string");
        if (bytes > 1024 * 1024)
            add(es, "data", "FieldValueTooLong", "Too long: must have at most 1048576 bytes");
    }
    if (strcmp(kind, "ConfigMap") == 0 || strcmp(kind, "Secret") == 0) {
        json_object *im = cu_jget(obj, "immutable");
        if (im && !is_type(im, json_type_boolean) && !is_type(im, json_type_null))
            type_err(es, "immutable", im, "boolean");
    }
    /* the other typed top-level fields of the built-in kinds ("" = any kind) */
    static const struct {
        const char *kind, *field;
        json_type type;
    } fields[] = {
        { "", "spec", json_type_object },
        { "", "status", json_type_object },
        { "PriorityClass", "value", json_type_int },
        { "PriorityClass", "globalDefault", json_type_boolean },
        { "PriorityClass", "description", json_type_string },
        { "PriorityClass", "preemptionPolicy", json_type_string },
        { "ServiceAccount", "secrets", json_type_array },
        { "ServiceAccount", "imagePullSecrets", json_type_array },
        { "ServiceAccount", "automountServiceAccountToken", json_type_boolean },
        { "Event", "involvedObject", json_type_object },
        { "Event", "regarding", json_type_object },
        { "Event", "related", json_type_object },
        { "Event", "source", json_type_object },
        { "Event", "series", json_type_object },
        { "Event", "reason", json_type_string },
        { "Event", "message", json_type_string },
        { "Event", "note", json_type_string },
        { "Event", "type", json_type_string },
        { "Event", "action", json_type_string },
        { "Event", "reportingComponent", json_type_string },
        { "Event", "reportingController", json_type_string },
        { "Event", "reportingInstance", json_type_string },
        { "Event", "count", json_type_int },
        { "Event", "deprecatedCount", json_type_int },
    };
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
        if (fields[i].kind[0] && strcmp(fields[i].kind, kind) != 0)
            continue;
        json_object *v = cu_jget(obj, fields[i].field);
        if (v && !is_type(v, fields[i].type) && !is_type(v, json_type_null))
            type_err(es, fields[i].field, v, cu_schema_type_name(fields[i].type));
    }
    json_object *pv = cu_jget(obj, "value");
    if (strcmp(kind, "PriorityClass") == 0 && is_type(pv, json_type_int) &&
        (json_object_get_int64(pv) < INT32_MIN || json_object_get_int64(pv) > INT32_MAX))
        add(es, "value", "FieldValueInvalid", "Invalid value: %" PRId64 ": must fit in int32",
            json_object_get_int64(pv));
}

size_t cu_objmeta_validate(json_object *obj, const char *kind, int builtin, cu_schema_err *errs_,
                           size_t max)
{
    errs es = { errs_, 0, max };
    if (!is_type(obj, json_type_object)) {
        type_err(&es, "<root>", obj, "object");
        return es.n;
    }
    json_object *m = cu_jget(obj, "metadata");
    if (m && !is_type(m, json_type_object)) {
        type_err(&es, "metadata", m, "object");
    } else if (m) {
        check_scalars(&es, m);
        check_labels(&es, m);
        check_annotations(&es, m);
        check_finalizers(&es, m);
        check_owner_refs(&es, m);
    }
    static const char *const tm[] = { "apiVersion", "kind" };
    for (int i = 0; i < 2; i++) {
        json_object *v = cu_jget(obj, tm[i]);
        if (v && !is_type(v, json_type_string) && !is_type(v, json_type_null))
            type_err(&es, tm[i], v, "string");
    }
    if (builtin && kind)
        check_builtin(&es, obj, kind);
    return es.n;
}

/* ---------------- JSON prescan ---------------- */

typedef struct outbuf {
    char *p;
    size_t n, cap;
    int failed;
} outbuf;

static void ob_put(outbuf *o, const char *s, size_t n)
{
    if (o->failed)
        return;
    if (o->n + n + 1 > o->cap) {
        size_t nc = (o->cap ? o->cap : 256) * 2;
        while (nc < o->n + n + 1)
            nc *= 2;
        char *np = realloc(o->p, nc);
        if (!np) {
            o->failed = 1;
            return;
        }
        o->p = np;
        o->cap = nc;
    }
    memcpy(o->p + o->n, s, n);
    o->n += n;
    o->p[o->n] = '\0';
}

/* c as Go's JSON errors show it: 'N', '\x01' */
static const char *char_name(char c, char *out, size_t n)
{
    if (isprint((unsigned char)c))
        snprintf(out, n, "'%c'", c);
    else
        snprintf(out, n, "'\\x%02x'", (unsigned char)c);
    return out;
}

/* The number token s[0..n) as a double in *d; for an integer (!real),
 * *big says whether it lies outside int64. -1 when out of memory. */
static int num_value(const char *s, size_t n, int real, double *d, int *big)
{
    char buf[64], *tmp = n < sizeof buf ? buf : malloc(n + 1);
    if (!tmp)
        return -1;
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    *d = strtod(tmp, NULL);
    *big = 0;
    if (!real) {
        errno = 0;
        (void)strtoll(tmp, NULL, 10);
        *big = errno == ERANGE;
    }
    if (tmp != buf)
        free(tmp);
    return 0;
}

int cu_json_prescan(const char *text, size_t len, char **rewritten, size_t *rlen, char *err,
                    size_t errn)
{
    outbuf ob = { NULL, 0, 0, 0 };
    size_t copied = 0, depth = 0, i = 0;
    char q1[16];
    *rewritten = NULL;
    *rlen = 0;
    while (i < len) {
        char c = text[i];
        if (c == '"') {
            size_t start = i++;
            int nul = 0;
            while (i < len && text[i] != '"') {
                if (text[i] == '\\' && i + 1 < len) {
                    if (text[i + 1] == 'u' && i + 5 < len && strncmp(text + i + 2, "0000", 4) == 0)
                        nul = 1;
                    i += 2;
                } else if ((unsigned char)text[i] < 0x20) {
                    /* Go's decoder refuses raw control characters in strings */
                    snprintf(err, errn, "invalid character %s in string literal",
                             char_name(text[i], q1, sizeof q1));
                    free(ob.p);
                    return -1;
                } else {
                    i++;
                }
            }
            i++;
            if (nul) {
                size_t j = i;
                while (j < len && isspace((unsigned char)text[j]))
                    j++;
                if (j < len && text[j] == ':') {
                    char q[80];
                    size_t kl = i - start > 60 ? 60 : i - start;
                    snprintf(q, sizeof q, "%.*s", (int)kl, text + start);
                    snprintf(err, errn,
                             "object key %s%s contains a NUL character (\\u0000), which the "
                             "server cannot store",
                             q, kl < i - start ? "..." : "");
                    free(ob.p);
                    return -1;
                }
            }
            continue;
        }
        if (c == '{' || c == '[') {
            if (++depth > CU_JSON_MAX_DEPTH) {
                snprintf(err, errn, "exceeded max depth of %d", CU_JSON_MAX_DEPTH);
                free(ob.p);
                return -1;
            }
        } else if (c == '}' || c == ']') {
            if (depth)
                depth--;
        } else if (isalpha((unsigned char)c)) {
            /* json-c takes NaN, Infinity and more; JSON (and Go) only these */
            size_t start = i;
            while (i < len && isalpha((unsigned char)text[i]))
                i++;
            size_t n = i - start;
            if (!((n == 4 && (memcmp(text + start, "true", 4) == 0 ||
                              memcmp(text + start, "null", 4) == 0)) ||
                  (n == 5 && memcmp(text + start, "false", 5) == 0))) {
                snprintf(err, errn, "invalid character %s looking for beginning of value",
                         char_name(text[start], q1, sizeof q1));
                free(ob.p);
                return -1;
            }
            continue;
        } else if (c != ',' && c != ':' && c != ' ' && c != '\t' && c != '\n' && c != '\r' &&
                   c != '-' && !isdigit((unsigned char)c)) {
            snprintf(err, errn, "invalid character %s looking for beginning of value",
                     char_name(text[i], q1, sizeof q1));
            free(ob.p);
            return -1;
        } else if (c == '-' || isdigit((unsigned char)c)) {
            size_t start = i;
            int real = 0;
            if (c == '-')
                i++;
            while (i < len &&
                   (isdigit((unsigned char)text[i]) || text[i] == '.' || text[i] == 'e' ||
                    text[i] == 'E' || text[i] == '+' || text[i] == '-')) {
                if (text[i] == '.' || text[i] == 'e' || text[i] == 'E')
                    real = 1;
                i++;
            }
            size_t n = i - start;
            double d;
            int big = 0;
            if (num_value(text + start, n, real, &d, &big) != 0) {
                snprintf(err, errn, "out of memory");
                free(ob.p);
                return -1;
            }
            if (!isfinite(d))
                goto nonfinite;
            if (big) {
                /* as kube-apiserver's decoder: an integer that int64 cannot
                 * hold becomes a float64 */
                char f[40];
                snprintf(f, sizeof f, "%.17g", d);
                if (!strpbrk(f, ".e"))
                    strcat(f, ".0");
                ob_put(&ob, text + copied, start - copied);
                ob_put(&ob, f, strlen(f));
                copied = i;
            }
            continue;
        nonfinite:
            snprintf(err, errn, "the number %.*s%s cannot be represented as a float64",
                     (int)(n > 40 ? 40 : n), text + start, n > 40 ? "..." : "");
            free(ob.p);
            return -1;
        }
        i++;
    }
    if (ob.p || ob.failed) {
        ob_put(&ob, text + copied, len - copied);
        if (ob.failed) {
            free(ob.p);
            snprintf(err, errn, "out of memory");
            return -1;
        }
        *rewritten = ob.p;
        *rlen = ob.n;
    }
    return 0;
}

json_object *cu_json_parse_checked(const char *text, size_t len, int *is_null, char *err,
                                   size_t errn)
{
    char *rw = NULL;
    size_t rl = 0;
    if (is_null)
        *is_null = 0;
    if (len > INT32_MAX) {
        snprintf(err, errn, "the body is too large");
        return NULL;
    }
    if (cu_json_prescan(text, len, &rw, &rl, err, errn) != 0)
        return NULL;
    if (rw) {
        text = rw;
        len = rl;
    }
    json_tokener *tok = json_tokener_new_ex(CU_JSON_MAX_DEPTH + 1);
    if (!tok) {
        free(rw);
        snprintf(err, errn, "out of memory");
        return NULL;
    }
    json_object *o = json_tokener_parse_ex(tok, text, (int)len);
    enum json_tokener_error je = json_tokener_get_error(tok);
    size_t used = json_tokener_get_parse_end(tok);
    int trailing = 0;
    for (size_t i = used; je == json_tokener_success && i < len; i++)
        if (!isspace((unsigned char)text[i]))
            trailing = 1;
    if (je == json_tokener_continue) {
        /* a top-level scalar ("null", "5") ends only at the end of the text */
        o = json_tokener_parse_ex(tok, "", 1);
        je = json_tokener_get_error(tok);
    }
    if (je != json_tokener_success || trailing) {
        snprintf(err, errn, "%s",
                 trailing ? "unexpected data after the top-level value"
                          : json_tokener_error_desc(
                                je == json_tokener_success ? json_tokener_continue : je));
        json_object_put(o);
        o = NULL;
    } else if (!o && is_null) {
        *is_null = 1;
    } else if (!o) {
        snprintf(err, errn, "the value is null");
    }
    json_tokener_free(tok);
    free(rw);
    cu_json_go_numbers(o); /* served as kube-apiserver writes them */
    return o;
}

/* ---------------- query parameters ---------------- */

int cu_query_int(const char *name, const char *value, int64_t min, int64_t max, int64_t *out,
                 char *err, size_t errn)
{
    if (!value)
        return 0;
    char *end;
    errno = 0;
    long long v = strtoll(value, &end, 10);
    const char *p = value;
    if (*p == '-' || *p == '+')
        p++;
    int digits = isdigit((unsigned char)*p) != 0;
    if (!digits || *end || errno == ERANGE || v < min || v > max) {
        char q[120];
        snprintf(err, errn,
                 "invalid value %s for the query parameter %s: must be an integer from %" PRId64
                 " to %" PRId64,
                 quote(value, strlen(value), q, sizeof q), name, min, max);
        return -1;
    }
    *out = v;
    return 0;
}
