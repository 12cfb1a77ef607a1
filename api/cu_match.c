/*
 * cu_match.c - taints/tolerations and node selector matching
 * (cu_match.h).
 */
#include "cu_match.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int str_eq(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }

int cu_match_tolerates(const cu_toleration *t, const cu_taint *x)
{
    if (t->effect && *t->effect && !str_eq(t->effect, x->effect))
        return 0;
    if (t->key && *t->key && strcmp(t->key, x->key ? x->key : "") != 0)
        return 0;
    if (t->op == CU_TOL_EXISTS)
        return 1;
    if (t->op == CU_TOL_EQUAL)
        return strcmp(t->value ? t->value : "", x->value ? x->value : "") == 0;
    return 0;
}

int cu_match_tolerated(const cu_toleration *tols, size_t ntols, const cu_taint *x)
{
    for (size_t i = 0; i < ntols; i++)
        if (cu_match_tolerates(&tols[i], x))
            return 1;
    return 0;
}

int cu_match_taint_filters(const cu_taint *x)
{
    return str_eq(x->effect, "NoSchedule") || str_eq(x->effect, "NoExecute");
}

const cu_taint *cu_match_untolerated(const cu_taint *taints, size_t ntaints,
                                     const cu_toleration *tols, size_t ntols)
{
    for (size_t i = 0; i < ntaints; i++)
        if (cu_match_taint_filters(&taints[i]) && !cu_match_tolerated(tols, ntols, &taints[i]))
            return &taints[i];
    return NULL;
}

/* strconv.ParseInt(s, 10, 64). */
static int parse_i64(const char *s, int64_t *out)
{
    char *end;
    if (!s || !*s || (*s != '-' && *s != '+' && (*s < '0' || *s > '9')))
        return -1;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

static int in_values(const cu_strs *vals, const char *v)
{
    for (size_t i = 0; i < vals->n; i++)
        if (str_eq(vals->items[i], v))
            return 1;
    return 0;
}

int cu_match_selreq(const cu_selreq *r, const char *value)
{
    int64_t a, b;
    switch (r->op) {
    case CU_SEL_IN: return value && in_values(&r->values, value);
    case CU_SEL_NOTIN: return !value || !in_values(&r->values, value);
    case CU_SEL_EXISTS: return value != NULL;
    case CU_SEL_DOESNOTEXIST: return value == NULL;
    case CU_SEL_GT:
    case CU_SEL_LT:
        if (!value || r->values.n != 1 || parse_i64(value, &a) != 0 ||
            parse_i64(r->values.items[0], &b) != 0)
            return 0;
        return r->op == CU_SEL_GT ? a > b : a < b;
    }
    return 0;
}

int cu_match_selreq_labels(const cu_selreq *r, const cu_kvs *labels)
{
    return cu_match_selreq(r, cu_kvs_get(labels, r->key));
}

int cu_match_nodeterm(const cu_nodeterm *t, const cu_kvs *labels, const cu_kvs *fields)
{
    if (t->exprs.n == 0 && t->fields.n == 0)
        return 0;
    for (size_t i = 0; i < t->exprs.n; i++)
        if (!cu_match_selreq_labels(&t->exprs.reqs[i], labels))
            return 0;
    for (size_t i = 0; i < t->fields.n; i++) {
        const cu_selreq *r = &t->fields.reqs[i];
        if (r->op != CU_SEL_IN && r->op != CU_SEL_NOTIN)
            return 0; /* matchFields only supports In and NotIn */
        if (!cu_match_selreq(r, cu_kvs_get(fields, r->key)))
            return 0;
    }
    return 1;
}

int cu_match_nodesel(const cu_nodesel *s, const cu_kvs *labels, const cu_kvs *fields)
{
    for (size_t i = 0; i < s->selector.n; i++)
        if (!str_eq(cu_kvs_get(labels, s->selector.items[i].key), s->selector.items[i].value))
            return 0;
    if (!s->has_required)
        return 1;
    for (size_t i = 0; i < s->nterms; i++)
        if (cu_match_nodeterm(&s->terms[i], labels, fields))
            return 1;
    return 0;
}
