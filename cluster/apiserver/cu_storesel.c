/*
 * cu_storesel.c - label and field selectors: parsing (kube-apiserver's
 * messages) and matching against an object or its name and namespace.
 * See internal/cu_store_int.h.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_store.h"

#include "cu_store_int.h"

/* ------------------------------------------------------------------ */
/* selectors                                                            */

void sel_free(selector *sl)
{
    for (size_t i = 0; i < sl->nl; i++) {
        free(sl->l[i].key);
        free_strv(sl->l[i].vals, sl->l[i].nvals);
    }
    free(sl->l);
    for (size_t i = 0; i < sl->nf; i++) {
        free(sl->f[i].label);
        free(sl->f[i].value);
    }
    free(sl->f);
    memset(sl, 0, sizeof(*sl));
}

static int lkey_char(char ch)
{
    return isalnum((unsigned char)ch) || ch == '-' || ch == '_' || ch == '.' || ch == '/';
}

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

static char *read_token(const char **pp)
{
    const char *p = *pp, *a = p;
    while (*p && lkey_char(*p))
        p++;
    *pp = p;
    return strndup(a, (size_t)(p - a));
}

static int lreq_addval(lreq *q, char *v)
{
    char **nv = realloc(q->vals, (q->nvals + 1) * sizeof(*nv));
    if (!nv) {
        free(v);
        return -1;
    }
    q->vals = nv;
    q->vals[q->nvals++] = v;
    return 0;
}

/* Parses a label selector; returns 0 or fills st (400). */
static cu_err parse_labels(const char *in, selector *sl, cu_status *st)
{
    const char *p = in;
    if (!in)
        return CU_OK;
    p = skip_ws(p);
    while (*p) {
        lreq q;
        memset(&q, 0, sizeof(q));
        int neg = 0;
        if (*p == '!') {
            neg = 1;
            p = skip_ws(p + 1);
        }
        q.key = read_token(&p);
        if (!q.key || !*q.key) {
            free(q.key);
            return cu_status_set(st, 400, "BadRequest",
                                 "unable to parse requirement: found '%.40s', expected: identifier",
                                 p);
        }
        p = skip_ws(p);
        if (neg) {
            q.op = L_NOTEXISTS;
        } else if (*p == ',' || !*p) {
            q.op = L_EXISTS;
        } else if (p[0] == '=' || (p[0] == '!' && p[1] == '=') || p[0] == '>' || p[0] == '<') {
            if (p[0] == '!') {
                q.op = L_NE;
                p += 2;
            } else if (p[0] == '>') {
                q.op = L_GT;
                p++;
            } else if (p[0] == '<') {
                q.op = L_LT;
                p++;
            } else {
                q.op = L_EQ;
                p += (p[1] == '=') ? 2 : 1;
            }
            p = skip_ws(p);
            char *v = read_token(&p);
            if (!v) {
                free(q.key);
                return cu_status_set(st, 500, "InternalError", "out of memory");
            }
            if ((q.op == L_GT || q.op == L_LT)) {
                char *end = NULL;
                strtoll(v, &end, 10);
                if (!*v || *end) {
                    cu_err e =
                        cu_status_set(st, 400, "BadRequest",
                                      "unable to parse requirement: for 'gt', 'lt' operators, the "
                                      "value must be an integer");
                    free(v);
                    free(q.key);
                    return e;
                }
            }
            lreq_addval(&q, v);
        } else if (strncmp(p, "in", 2) == 0 || strncmp(p, "notin", 5) == 0) {
            q.op = p[0] == 'i' ? L_IN : L_NOTIN;
            p = skip_ws(p + (q.op == L_IN ? 2 : 5));
            if (*p != '(') {
                cu_err e =
                    cu_status_set(st, 400, "BadRequest",
                                  "unable to parse requirement: found '%.40s', expected: '('", p);
                free(q.key);
                return e;
            }
            p = skip_ws(p + 1);
            for (;;) {
                char *v = read_token(&p);
                if (v)
                    lreq_addval(&q, v);
                p = skip_ws(p);
                if (*p == ',') {
                    p = skip_ws(p + 1);
                    continue;
                }
                if (*p == ')') {
                    p++;
                    break;
                }
                cu_err e = cu_status_set(
                    st, 400, "BadRequest",
                    "unable to parse requirement: found '%.40s', expected: ',', ')'", p);
                free(q.key);
                free_strv(q.vals, q.nvals);
                return e;
            }
        } else {
            cu_err e =
                cu_status_set(st, 400, "BadRequest",
                              "unable to parse requirement: found '%.40s', expected: in, notin, =, "
                              "==, !=, gt, lt",
                              p);
            free(q.key);
            return e;
        }
        lreq *nl = realloc(sl->l, (sl->nl + 1) * sizeof(*nl));
        if (!nl) {
            free(q.key);
            free_strv(q.vals, q.nvals);
            return cu_status_set(st, 500, "InternalError", "out of memory");
        }
        sl->l = nl;
        sl->l[sl->nl++] = q;
        p = skip_ws(p);
        if (*p == ',') {
            p = skip_ws(p + 1);
            if (!*p)
                return cu_status_set(st, 400, "BadRequest",
                                     "unable to parse requirement: found '', expected: identifier");
        } else if (*p) {
            return cu_status_set(st, 400, "BadRequest",
                                 "unable to parse requirement: found '%.40s', expected: ','", p);
        }
    }
    return CU_OK;
}

static int field_known(const rt_ent *rt, const char *label)
{
    if (strcmp(label, "metadata.name") == 0 || strcmp(label, "metadata.namespace") == 0)
        return 1;
    for (const char *const *f = rt->fields; f && *f; f++)
        if (strcmp(*f, label) == 0)
            return 1;
    return 0;
}

static cu_err parse_fields(const rt_ent *rt, const char *in, selector *sl, cu_status *st)
{
    if (!in || !*in)
        return CU_OK;
    const char *p = in;
    while (*p) {
        char lab[256], val[512];
        size_t ln = 0, vn = 0;
        int neg = 0, have_op = 0;
        while (*p && *p != ',') {
            if (!have_op && (*p == '=' || (*p == '!' && p[1] == '='))) {
                neg = *p == '!';
                p += neg ? 2 : (p[1] == '=' ? 2 : 1);
                have_op = 1;
                continue;
            }
            char ch = *p;
            if (ch == '\\' && p[1]) {
                p++;
                ch = *p;
            }
            if (!have_op) {
                if (ln + 1 < sizeof(lab))
                    lab[ln++] = ch;
            } else if (vn + 1 < sizeof(val))
                val[vn++] = ch;
            p++;
        }
        lab[ln] = val[vn] = '\0';
        if (*p == ',')
            p++;
        /* trim the label */
        char *l = lab;
        while (*l == ' ')
            l++;
        for (size_t k = strlen(l); k && l[k - 1] == ' '; k--)
            l[k - 1] = '\0';
        if (!*l && !have_op)
            continue;
        if (!have_op)
            return cu_status_set(st, 400, "BadRequest",
                                 "invalid selector: '%s'; can't understand '%s'", in, l);
        if (!field_known(rt, l)) {
            if (rt->fields)
                return cu_status_set(st, 400, "BadRequest", "field label not supported: %s", l);
            return cu_status_set(st, 400, "BadRequest",
                                 "\"%s\" is not a known field selector: only \"metadata.name\", "
                                 "\"metadata.namespace\"",
                                 l);
        }
        freq *nf = realloc(sl->f, (sl->nf + 1) * sizeof(*nf));
        if (!nf)
            return cu_status_set(st, 500, "InternalError", "out of memory");
        sl->f = nf;
        sl->f[sl->nf].label = strdup(l);
        sl->f[sl->nf].value = strdup(val);
        sl->f[sl->nf].neg = neg;
        sl->nf++;
    }
    return CU_OK;
}

static void field_value(json_object *o, const char *label, char *out, size_t n)
{
    const char *path = label, *dflt = "";
    if (strcmp(label, "status.successful") == 0) {
        path = "status.succeeded";
        dflt = "0";
    } else if (strcmp(label, "source") == 0)
        path = "source.component";
    else if (strcmp(label, "spec.hostNetwork") == 0 || strcmp(label, "spec.unschedulable") == 0)
        dflt = "false";
    json_object *v = cu_jpath(o, path);
    if (!v || json_object_is_type(v, json_type_null)) {
        snprintf(out, n, "%s", dflt);
        return;
    }
    if (json_object_is_type(v, json_type_string))
        snprintf(out, n, "%s", json_object_get_string(v));
    else if (json_object_is_type(v, json_type_boolean))
        snprintf(out, n, "%s", json_object_get_boolean(v) ? "true" : "false");
    else
        snprintf(out, n, "%s", json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
}

int sel_empty(const selector *sl) { return !sl->nl && !sl->nf; }

int sel_match(const selector *sl, json_object *o)
{
    json_object *labels = cu_jget(cu_jget(o, "metadata"), "labels");
    for (size_t i = 0; i < sl->nl; i++) {
        const lreq *q = &sl->l[i];
        json_object *lv = cu_jget(labels, q->key);
        const char *v =
            lv && json_object_is_type(lv, json_type_string) ? json_object_get_string(lv) : NULL;
        int in = 0;
        for (size_t k = 0; v && k < q->nvals; k++)
            in |= strcmp(q->vals[k], v) == 0;
        switch (q->op) {
        case L_EXISTS:
            if (!v)
                return 0;
            break;
        case L_NOTEXISTS:
            if (v)
                return 0;
            break;
        case L_EQ:
        case L_IN:
            if (!in)
                return 0;
            break;
        case L_NE:
        case L_NOTIN:
            if (in)
                return 0;
            break;
        case L_GT:
        case L_LT: {
            if (!v || !q->nvals)
                return 0;
            char *end = NULL;
            long long a = strtoll(v, &end, 10), b = strtoll(q->vals[0], NULL, 10);
            if (!*v || *end)
                return 0;
            if (q->op == L_GT ? !(a > b) : !(a < b))
                return 0;
            break;
        }
        }
    }
    for (size_t i = 0; i < sl->nf; i++) {
        char val[512];
        field_value(o, sl->f[i].label, val, sizeof(val));
        int eq = strcmp(val, sl->f[i].value) == 0;
        if (sl->f[i].neg ? eq : !eq)
            return 0;
    }
    return 1;
}

/* Does e satisfy the selector's metadata.name and metadata.namespace
 * requirements (the others are not looked at)? */
int sel_meta_match(const selector *sl, const char *ns, const char *name)
{
    for (size_t i = 0; i < sl->nf; i++) {
        const char *v = !strcmp(sl->f[i].label, "metadata.name")        ? name
                        : !strcmp(sl->f[i].label, "metadata.namespace") ? ns
                                                                        : NULL;
        if (!v)
            continue;
        int eq = strcmp(v, sl->f[i].value) == 0;
        if (sl->f[i].neg ? eq : !eq)
            return 0;
    }
    return 1;
}

int sel_meta_ok(const selector *sl, const ent *e) { return sel_meta_match(sl, e->ns, e->name); }

/* Has the selector only name and namespace requirements? */
int sel_meta_only(const selector *sl)
{
    if (sl->nl)
        return 0;
    for (size_t i = 0; i < sl->nf; i++)
        if (strcmp(sl->f[i].label, "metadata.name") && strcmp(sl->f[i].label, "metadata.namespace"))
            return 0;
    return 1;
}

cu_err sel_parse(const rt_ent *rt, const cu_list_opts *o, selector *sl, cu_status *st)
{
    memset(sl, 0, sizeof(*sl));
    if (!o)
        return CU_OK;
    cu_err e = parse_labels(o->label_selector, sl, st);
    if (e == CU_OK)
        e = parse_fields(rt, o->field_selector, sl, st);
    if (e != CU_OK)
        sel_free(sl);
    return e;
}
