/*
 * cu_jsonpath.c - kubectl's JSONPath subset (additionalPrinterColumns,
 * selectable fields). See internal/cu_apiserver_int.h.
 */
#include "cu_apiserver.h"
#include "cu_authn.h"
#include "cu_objmeta.h"
#include "cu_doc.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_apiserver_int.h"

/* ---------------- JSONPath ---------------- */

/* JSONPath is evaluated as the CRD table convertor uses it: only the first
 * result counts. A wildcard ([*]) or a filter ([?(...)]) tries its
 * candidates in order and gives the first one for which the rest of the
 * path finds a value. depth bounds the recursion. */
static json_object *jp_eval(json_object *cur, const char *p, int depth);

/* The ')' that closes the filter whose '(' is at p, or NULL (quotes and
 * nested parentheses are skipped). */
static const char *jp_close_paren(const char *p)
{
    int d = 0;
    for (; *p; p++) {
        if (*p == '\'' || *p == '"') {
            char q = *p;
            for (p++; *p && *p != q; p++)
                ;
            if (!*p)
                return NULL;
        } else if (*p == '(') {
            d++;
        } else if (*p == ')' && --d == 0) {
            return p;
        }
    }
    return NULL;
}

/* Whether element e passes the filter expression [s, end): "@PATH"
 * (PATH has a value) or "@PATH OP LITERAL" with OP one of == != < <= > >=
 * and LITERAL a quoted string, a number, true or false. A missing value,
 * a literal of another type than the value, or an unsupported expression
 * does not pass. */
static int jp_filter_pass(json_object *e, const char *s, const char *end, int depth)
{
    char lhs[256], lit[256];
    while (s < end && isspace((unsigned char)*s))
        s++;
    while (end > s && isspace((unsigned char)end[-1]))
        end--;
    if (s >= end || *s != '@')
        return 0;
    s++;
    const char *op = s;
    char q = 0;
    int br = 0;
    for (; op < end; op++) {
        if (q) {
            if (*op == q)
                q = 0;
        } else if (*op == '\'' || *op == '"') {
            q = *op;
        } else if (*op == '[' || *op == '(') {
            br++;
        } else if (*op == ']' || *op == ')') {
            br--;
        } else if (br == 0 && strchr("=!<>", *op)) {
            break;
        }
    }
    const char *le = op;
    while (le > s && isspace((unsigned char)le[-1]))
        le--;
    if ((size_t)(le - s) >= sizeof lhs)
        return 0;
    memcpy(lhs, s, (size_t)(le - s));
    lhs[le - s] = '\0';
    json_object *v = jp_eval(e, lhs, depth + 1);
    if (op >= end)
        return v != NULL;
    if (!v)
        return 0;
    int opc; /* 0 ==, 1 !=, 2 <, 3 <=, 4 >, 5 >= */
    if ((op[0] == '=' || op[0] == '!') && op + 1 < end && op[1] == '=') {
        opc = op[0] == '!';
        op += 2;
    } else if (op[0] == '<' || op[0] == '>') {
        int eq = op + 1 < end && op[1] == '=';
        opc = (op[0] == '<' ? 2 : 4) + eq;
        op += 1 + eq;
    } else {
        return 0;
    }
    while (op < end && isspace((unsigned char)*op))
        op++;
    size_t n = (size_t)(end - op);
    if (n == 0 || n >= sizeof lit)
        return 0;
    memcpy(lit, op, n);
    lit[n] = '\0';
    int cmp;
    if ((lit[0] == '\'' || lit[0] == '"') && n >= 2 && lit[n - 1] == lit[0]) {
        if (!json_object_is_type(v, json_type_string))
            return 0;
        lit[n - 1] = '\0';
        cmp = strcmp(json_object_get_string(v), lit + 1);
    } else if (strcmp(lit, "true") == 0 || strcmp(lit, "false") == 0) {
        if (!json_object_is_type(v, json_type_boolean) || opc > 1)
            return 0;
        cmp = (json_object_get_boolean(v) != 0) != (lit[0] == 't');
    } else {
        char *num_end;
        double want = strtod(lit, &num_end);
        if (num_end == lit || *num_end ||
            !(json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)))
            return 0;
        double have = json_object_get_double(v);
        cmp = have < want ? -1 : have > want ? 1 : 0;
    }
    switch (opc) {
    case 0: return cmp == 0;
    case 1: return cmp != 0;
    case 2: return cmp < 0;
    case 3: return cmp <= 0;
    case 4: return cmp > 0;
    default: return cmp >= 0;
    }
}

static json_object *jp_eval(json_object *cur, const char *p, int depth)
{
    char key[512];
    if (depth > 16)
        return NULL;
    while (*p && *p != '}' && cur) {
        if (*p == '[') {
            p++;
            if (*p == '\'' || *p == '"') {
                char q = *p++;
                size_t k = 0;
                while (*p && *p != q && k + 1 < sizeof key)
                    key[k++] = *p++;
                key[k] = '\0';
                if (*p != q)
                    return NULL;
                p++;
                cur = cu_jget(cur, key);
            } else if (*p == '*' || *p == '?') {
                const char *fs = NULL, *fe = NULL;
                if (*p == '*') {
                    p++;
                } else {
                    if (p[1] != '(' || !(fe = jp_close_paren(p + 1)))
                        return NULL;
                    fs = p + 2;
                    p = fe + 1;
                }
                if (*p != ']')
                    return NULL;
                p++;
                if (json_object_is_type(cur, json_type_array)) {
                    for (size_t i = 0; i < json_object_array_length(cur); i++) {
                        json_object *e = json_object_array_get_idx(cur, i), *r;
                        if (fs && !jp_filter_pass(e, fs, fe, depth))
                            continue;
                        if ((r = jp_eval(e, p, depth + 1)))
                            return r;
                    }
                } else if (!fs && json_object_is_type(cur, json_type_object)) {
                    json_object_object_foreach (cur, k2, v2) {
                        (void)k2;
                        json_object *r = jp_eval(v2, p, depth + 1);
                        if (r)
                            return r;
                    }
                }
                return NULL;
            } else {
                char *end;
                long idx = strtol(p, &end, 10);
                if (end == p || !json_object_is_type(cur, json_type_array))
                    return NULL;
                p = end;
                long len = (long)json_object_array_length(cur);
                if (idx < 0)
                    idx += len;
                cur = idx >= 0 && idx < len ? json_object_array_get_idx(cur, (size_t)idx) : NULL;
            }
            if (*p != ']')
                return NULL;
            p++;
            continue;
        }
        if (*p == '.')
            p++;
        size_t k = 0;
        while (*p && *p != '.' && *p != '[' && *p != '}' && k + 1 < sizeof key) {
            if (*p == '\\' && p[1])
                p++;
            key[k++] = *p++;
        }
        key[k] = '\0';
        if (k > 0)
            cur = cu_jget(cur, key);
    }
    return cur;
}

json_object *cu_jsonpath_get(json_object *root, const char *path)
{
    const char *p = path;
    if (!p)
        return NULL;
    while (isspace((unsigned char)*p))
        p++;
    if (*p == '{')
        p++;
    if (*p == '$')
        p++;
    return jp_eval(root, p, 0);
}
