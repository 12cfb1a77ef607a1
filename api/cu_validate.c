/*
 * cu_validate.c - cu_world_validate: checks every decoded object by the
 * rules Kueue's admission webhooks and CRD schemas (OpenAPI limits and CEL
 * rules) enforce, and reports every problem, not just the first.
 *
 * Message form (Kubernetes field.Error wording where it exists):
 *   "Kind ns/name: field.path: problem"   (namespaced kinds)
 *   "Kind name: field.path: problem"      (cluster-scoped kinds)
 * e.g. "ClusterQueue a: spec.cohortName: Invalid value: \"A\": a lowercase
 * RFC 1123 subdomain must consist of ...".
 *
 * What is NOT checked here, on purpose: references between objects that
 * Kueue's webhooks do not check either. A LocalQueue naming a missing
 * ClusterQueue, a ClusterQueue naming a missing ResourceFlavor, a cohort
 * parent that does not exist, or a cycle of cohorts are all accepted by
 * Kueue's API server; they make queues inactive, which the engine reports
 * as status (conditions), never as a load error. The only cross-object
 * check done here is duplicate objects (same kind, namespace and name),
 * which a real API server cannot hold at all.
 *
 * Stricter than Kueue (the project asks for these; neither configuration
 * has any meaningful use):
 *  - borrowWithinCohort.maxPriorityThreshold is rejected unless the policy
 *    is LowerPriority (Kueue ignores it);
 *  - a Cohort whose parentName is its own name is rejected (Kueue accepts
 *    it and deactivates it as a one-member cycle).
 *
 * Negative requests and counts are refused by the decoder already
 * (cu_world_decode), so they are not checked again here.
 *
 * ObjectMeta is checked for every kind as kube-apiserver does (label keys
 * and values, annotation keys, 256 KiB of annotations): the controller
 * reads objects from API servers that may not have checked them.
 *
 * cu_object_validate runs the same checks on one object: the controller
 * validates each queue object and Workload it uses (through the engine),
 * so that `cueue simulate` and `cueue controller` share one set of rules.
 *
 * Deliberate differences from a literal reading of the Kueue rules:
 *  - the Cohort lendingLimit is not compared with nominalQuota: Kueue's
 *    Cohort webhook turns that check off (a cohort lends its subtree's
 *    quota, which includes its children's nominal quota);
 *  - Workload "priority must be set when priorityClassRef is set" is not
 *    enforced: Cueue resolves the priority from the class itself
 *    (cu_workload_priority), and Workloads built from Jobs carry only the
 *    reference;
 *  - a fairSharing weight in (0, 1e-9] cannot be seen in milli-units, so
 *    only negative weights are rejected.
 *
 * Invariants: the function only reads w; every message goes to d through
 * cu_diag_error; the return value is CU_EINVAL iff at least one error was
 * added by this call.
 */
#include "cu_names.h"
#include "cu_objects.h"
#include "cu_quantity.h"
#include "cu_topology.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Kueue / Kubernetes limits. */
#define MAX_RESOURCE_GROUPS 16
#define MAX_COVERED 64
#define MAX_GROUP_FLAVORS 64
#define MAX_TOTAL_FLAVORS 256
#define MAX_TOTAL_COVERED 256
#define MAX_GROUP_COMBINATIONS 512
#define MAX_FLAVOR_LABELS 8
#define MAX_FLAVOR_TAINTS 8
#define MAX_FLAVOR_TOLERATIONS 8
#define MAX_PODSETS 18
#define MAX_WPC_DESCRIPTION 2048
#define MAX_USER_PRIORITY 1000000000
/* Pairwise duplicate scans run only on lists up to this size; longer lists
 * are already over their Kueue limit and reported as such. */
#define DUP_SCAN_MAX 1024

#define MSG_SUBDOMAIN \
    "a lowercase RFC 1123 subdomain must consist of lower case " \
    "alphanumeric characters, '-' or '.', and must start and end with an " \
    "alphanumeric character"
#define MSG_LABEL \
    "a lowercase RFC 1123 label must consist of lower case " \
    "alphanumeric characters or '-', and must start and end with an " \
    "alphanumeric character"
#define MSG_QNAME \
    "must consist of alphanumeric characters, '-', '_' or '.', " \
    "and must start and end with an alphanumeric character"
#define MSG_LABEL_VALUE \
    "a valid label must be an empty string or consist of " \
    "alphanumeric characters, '-', '_' or '.', and must start and end with an " \
    "alphanumeric character"
#define MSG_NEGATIVE "must be greater than or equal to 0"
/* what a quantity beyond int64 of its resource's unit is told
 * (cu_quantity.h): %s the resource, the largest amount, the unit */
#define MSG_TOO_LARGE "too large: Cueue holds an amount of %s up to %s, as Kueue (int64 %s)"

/* Per-object reporting context. */
typedef struct vctx {
    cu_diag *d;
    size_t nerr; /* errors added by this validation run */
    const char *kind;
    char obj[320]; /* "ns/name" or "name" */
} vctx;

static void set_obj(vctx *v, const char *kind, const cu_meta *m, int namespaced)
{
    v->kind = kind;
    const char *name = m->name && m->name[0] ? m->name : NULL;
    char unnamed[160];
    if (!name) {
        snprintf(unnamed, sizeof(unnamed), "(unnamed at %s:%d)", m->file ? m->file : "?", m->line);
        name = unnamed;
    }
    if (namespaced && m->ns && m->ns[0])
        snprintf(v->obj, sizeof(v->obj), "%s/%s", m->ns, name);
    else
        snprintf(v->obj, sizeof(v->obj), "%s", name);
}

/* Adds "Kind obj: path: <fmt...>" as an error. */
static void verr(vctx *v, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void verr(vctx *v, const char *path, const char *fmt, ...)
{
    char msg[1600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    cu_diag_error(v->d, "%s %s: %s: %s", v->kind, v->obj, path, msg);
    v->nerr++;
}

/* Formats s as a Go %q string (quotes, escapes), truncated to fit n. */
static const char *quote(char *buf, size_t n, const char *s)
{
    size_t j = 0;
    if (!s)
        s = "";
    if (n < 8) {
        buf[0] = '\0';
        return buf;
    }
    buf[j++] = '"';
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char tmp[8];
        size_t tl;
        if (*p == '"' || *p == '\\') {
            tmp[0] = '\\';
            tmp[1] = (char)*p;
            tl = 2;
        } else if (*p == '\n') {
            memcpy(tmp, "\\n", 2);
            tl = 2;
        } else if (*p == '\t') {
            memcpy(tmp, "\\t", 2);
            tl = 2;
        } else if (*p < 0x20 || *p == 0x7f) {
            snprintf(tmp, sizeof(tmp), "\\x%02x", *p);
            tl = 4;
        } else {
            tmp[0] = (char)*p;
            tl = 1;
        }
        if (j + tl + 5 > n) { /* keep room for ..." and NUL */
            memcpy(buf + j, "...", 3);
            j += 3;
            break;
        }
        memcpy(buf + j, tmp, tl);
        j += tl;
    }
    buf[j++] = '"';
    buf[j] = '\0';
    return buf;
}

/* Checks a required DNS-1123 subdomain (object names, references). */
static void check_subdomain(vctx *v, const char *path, const char *s)
{
    char q[320];
    if (!s || !*s) {
        verr(v, path, "Required value");
        return;
    }
    size_t n = strlen(s);
    if (n > 253)
        verr(v, path, "Invalid value: %s: must be no more than 253 characters",
             quote(q, sizeof(q), s));
    if (!cu_dns1123_subdomain_ok(s, n, 0))
        verr(v, path, "Invalid value: %s: " MSG_SUBDOMAIN, quote(q, sizeof(q), s));
}

/* Checks a required DNS-1123 label (namespaces, pod set names). */
static void check_label(vctx *v, const char *path, const char *s)
{
    char q[320];
    if (!s || !*s) {
        verr(v, path, "Required value");
        return;
    }
    size_t n = strlen(s);
    if (n > 63)
        verr(v, path, "Invalid value: %s: must be no more than 63 characters",
             quote(q, sizeof(q), s));
    if (!cu_dns1123_label_ok(s, n))
        verr(v, path, "Invalid value: %s: " MSG_LABEL, quote(q, sizeof(q), s));
}

/* The detail of one problem bit of cu_names.h, in this file's wording
 * (kube-apiserver's without the examples and the regex). */
static const char *name_detail(unsigned problem)
{
    switch (problem) {
    case CU_NAME_SLASHES:
        return "a qualified name " MSG_QNAME
               " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";
    case CU_NAME_PREFIX_CHARS: return "prefix part " MSG_SUBDOMAIN;
    case CU_NAME_PART_CHARS: return "name part " MSG_QNAME;
    case CU_VALUE_CHARS: return MSG_LABEL_VALUE;
    }
    return cu_name_detail(problem); /* the plain ones: "must be non-empty", lengths */
}

/* One error per problem bit, in kube-apiserver's order: the length and
 * the characters both, as its validation lists them. */
static void name_errs(vctx *v, const char *path, const char *s, unsigned problems)
{
    char q[320];
    quote(q, sizeof(q), s);
    for (unsigned b = 1; problems; b <<= 1)
        if (problems & b) {
            verr(v, path, "Invalid value: %s: %s", q, name_detail(b));
            problems &= ~b;
        }
}

/* Checks a Kubernetes qualified name (label keys, taint keys, resource
 * names): optional "prefix/" (a DNS subdomain) and a name part of at most
 * 63 characters. fold: checked lowercased (annotation keys, which
 * kube-apiserver checks lowercased). */
static void check_qname_f(vctx *v, const char *path, const char *s, int fold)
{
    if (!s || !*s) {
        verr(v, path, "Required value");
        return;
    }
    name_errs(v, path, s, cu_qname_problems(s, strlen(s), fold));
}

static void check_qname(vctx *v, const char *path, const char *s) { check_qname_f(v, path, s, 0); }

/* Checks a label value (may be empty). */
static void check_label_value(vctx *v, const char *path, const char *s)
{
    if (!s || !*s)
        return;
    name_errs(v, path, s, cu_label_value_problems(s, strlen(s)));
}

/* Number of Unicode code points in a UTF-8 string. */
static size_t utf8_len(const char *s)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if ((*p & 0xC0) != 0x80)
            n++;
    return n;
}

/* Prints an amount of resource res (in its unit, cu_qty_res_scale; a
 * milli-unit ratio when res is NULL) as a Kubernetes quantity: "1500m",
 * "2", "4k", "3Gi" (binary suffixes for memory-like resources when exact).
 * Returns out. */
static const char *fmt_qty(const char *res, int64_t amount, char *out, size_t n)
{
    int neg = amount < 0;
    uint64_t mag = neg ? (uint64_t)(-(amount + 1)) + 1 : (uint64_t)amount;
    uint64_t one = res ? (uint64_t)cu_qty_res_one(res) : 1000;
    const char *sign = neg ? "-" : "";
    if (mag % one != 0) {
        snprintf(out, n, "%s%llum", sign, (unsigned long long)mag);
        return out;
    }
    uint64_t v = mag / one;
    if (v != 0 && cu_qty_fmt_for_resource(res) == CU_QFMT_BINARY_SI && v >= 1024) {
        static const char *const bs[] = { "", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei" };
        int k = 0;
        while (k < 6 && v % 1024 == 0) {
            v /= 1024;
            k++;
        }
        if (k > 0) {
            snprintf(out, n, "%s%llu%s", sign, (unsigned long long)v, bs[k]);
            return out;
        }
        v = mag / one;
    }
    static const char *const ds[] = { "", "k", "M", "G", "T", "P", "E" };
    int k = 0;
    while (v != 0 && k < 6 && v % 1000 == 0) {
        v /= 1000;
        k++;
    }
    snprintf(out, n, "%s%llu%s", sign, (unsigned long long)v, ds[k]);
    return out;
}

static const char *s_or_empty(const char *s) { return s ? s : ""; }

static const char *ppolicy_name(cu_ppolicy p)
{
    switch (p) {
    case CU_PP_NEVER: return "Never";
    case CU_PP_LOWER_PRIORITY: return "LowerPriority";
    case CU_PP_LOWER_OR_NEWER_EQUAL_PRIORITY: return "LowerOrNewerEqualPriority";
    case CU_PP_ANY: return "Any";
    }
    return "?";
}

static const char *fpref_name(cu_fpref p)
{
    switch (p) {
    case CU_PREF_UNSET: return "";
    case CU_PREF_BORROWING_OVER_PREEMPTION: return "BorrowingOverPreemption";
    case CU_PREF_PREEMPTION_OVER_BORROWING: return "PreemptionOverBorrowing";
    }
    return "?";
}

static void check_meta_maps(vctx *v, const cu_meta *m);

/* Checks metadata.name (and metadata.namespace for namespaced kinds). */
static void check_meta(vctx *v, const cu_meta *m, int namespaced, int name_is_label)
{
    if (name_is_label)
        check_label(v, "metadata.name", m->name);
    else
        check_subdomain(v, "metadata.name", m->name);
    if (namespaced)
        check_label(v, "metadata.namespace", m->ns);
    check_meta_maps(v, m);
}

static void check_labels_map(vctx *v, const char *path, const cu_kvs *kvs);

/* metadata.labels and metadata.annotations, as kube-apiserver checks them
 * for every object (ValidateObjectMeta): label keys and values, annotation
 * keys, and at most 256 KiB of annotations in total. */
static void check_meta_maps(vctx *v, const cu_meta *m)
{
    check_labels_map(v, "metadata.labels", &m->labels);
    size_t total = 0;
    for (size_t i = 0; i < m->annotations.n; i++) {
        const cu_kv *kv = &m->annotations.items[i];
        check_qname_f(v, "metadata.annotations", kv->key, 1);
        total += strlen(s_or_empty(kv->key)) + strlen(s_or_empty(kv->value));
    }
    if (total > CU_ANNOTATIONS_MAX_BYTES)
        verr(v, "metadata.annotations", "Too long: must have at most %d bytes",
             CU_ANNOTATIONS_MAX_BYTES);
}

static void check_weight(vctx *v, const char *path, int64_t milli)
{
    char q[40];
    if (milli < 0)
        verr(v, path, "Invalid value: \"%s\": " MSG_NEGATIVE, fmt_qty(NULL, milli, q, sizeof(q)));
}

/* ---------------- label selector, taints, tolerations ---------------- */

static void check_labels_map(vctx *v, const char *path, const cu_kvs *kvs)
{
    char p[400];
    for (size_t i = 0; i < kvs->n; i++) {
        check_qname(v, path, kvs->items[i].key);
        snprintf(p, sizeof(p), "%s[%s]", path, s_or_empty(kvs->items[i].key));
        check_label_value(v, p, kvs->items[i].value);
    }
}

static void check_labelsel(vctx *v, const char *path, const cu_labelsel *sel)
{
    char p[400], q[320];
    if (sel->is_null)
        return;
    snprintf(p, sizeof(p), "%s.matchLabels", path);
    check_labels_map(v, p, &sel->match_labels);
    for (size_t i = 0; i < sel->nexpr; i++) {
        const cu_selreq *r = &sel->exprs[i];
        snprintf(p, sizeof(p), "%s.matchExpressions[%zu].key", path, i);
        check_qname(v, p, r->key);
        snprintf(p, sizeof(p), "%s.matchExpressions[%zu].values", path, i);
        switch (r->op) {
        case CU_SEL_IN:
        case CU_SEL_NOTIN:
            if (r->values.n == 0)
                verr(v, p, "Required value: must be specified when `operator` is 'In' or 'NotIn'");
            break;
        case CU_SEL_EXISTS:
        case CU_SEL_DOESNOTEXIST:
            if (r->values.n > 0)
                verr(
                    v, p,
                    "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
            break;
        default:
            snprintf(p, sizeof(p), "%s.matchExpressions[%zu].operator", path, i);
            verr(
                v, p,
                "Unsupported value: %s: supported values: \"In\", \"NotIn\", \"Exists\", \"DoesNotExist\"",
                quote(q, sizeof(q), cu_selop_name(r->op)));
            break;
        }
    }
}

static int effect_ok(const char *e)
{
    return !strcmp(e, "NoSchedule") || !strcmp(e, "PreferNoSchedule") || !strcmp(e, "NoExecute");
}

#define EFFECTS "supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\""

static void check_taints(vctx *v, const char *path, size_t n, const cu_taint *t)
{
    char p[400], q[320];
    if (n > MAX_FLAVOR_TAINTS)
        verr(v, path, "Too many: %zu: must have at most %d items", n, MAX_FLAVOR_TAINTS);
    for (size_t i = 0; i < n; i++) {
        snprintf(p, sizeof(p), "%s[%zu].key", path, i);
        check_qname(v, p, t[i].key);
        snprintf(p, sizeof(p), "%s[%zu].value", path, i);
        check_label_value(v, p, t[i].value);
        snprintf(p, sizeof(p), "%s[%zu].effect", path, i);
        if (!t[i].effect || !*t[i].effect)
            verr(v, p, "Required value");
        else if (!effect_ok(t[i].effect))
            verr(v, p, "Unsupported value: %s: " EFFECTS, quote(q, sizeof(q), t[i].effect));
        /* unique by (key, effect); pairwise, so only for sane sizes */
        for (size_t j = 0; n <= DUP_SCAN_MAX && j < i; j++) {
            if (!strcmp(s_or_empty(t[j].key), s_or_empty(t[i].key)) &&
                !strcmp(s_or_empty(t[j].effect), s_or_empty(t[i].effect))) {
                char kv[600];
                snprintf(kv, sizeof(kv), "%s:%s", s_or_empty(t[i].key), s_or_empty(t[i].effect));
                snprintf(p, sizeof(p), "%s[%zu]", path, i);
                verr(v, p, "Duplicate value: %s: taints must be unique by key and effect pair",
                     quote(q, sizeof(q), kv));
                break;
            }
        }
    }
}

static void check_tolerations(vctx *v, const char *path, size_t n, const cu_toleration *t)
{
    char p[400], q[320];
    if (n > MAX_FLAVOR_TOLERATIONS)
        verr(v, path, "Too many: %zu: must have at most %d items", n, MAX_FLAVOR_TOLERATIONS);
    for (size_t i = 0; i < n; i++) {
        int has_key = t[i].key && *t[i].key;
        if (has_key) {
            snprintf(p, sizeof(p), "%s[%zu].key", path, i);
            check_qname(v, p, t[i].key);
        }
        snprintf(p, sizeof(p), "%s[%zu].operator", path, i);
        if (!has_key && t[i].op != CU_TOL_EXISTS)
            verr(v, p,
                 "Invalid value: \"Equal\": operator must be Exists when `key` is empty, "
                 "which means \"match all values and all keys\"");
        if (t[i].op == CU_TOL_EXISTS && t[i].value && *t[i].value)
            verr(v, p,
                 "Invalid value: \"Exists\": value must be empty when `operator` is 'Exists'");
        if (t[i].op == CU_TOL_EQUAL) {
            snprintf(p, sizeof(p), "%s[%zu].value", path, i);
            check_label_value(v, p, t[i].value);
        }
        if (t[i].effect && *t[i].effect && !effect_ok(t[i].effect)) {
            snprintf(p, sizeof(p), "%s[%zu].effect", path, i);
            verr(v, p, "Unsupported value: %s: " EFFECTS, quote(q, sizeof(q), t[i].effect));
        }
    }
}

/* ---------------- resource groups (ClusterQueue and Cohort) ---------------- */

typedef struct rg_cfg {
    int has_parent; /* cohortName (CQ) or parentName (Cohort) set */
    int is_cohort;
} rg_cfg;

/* big: the limit as written when too large to hold (reported apart) */
static void check_limit(vctx *v, const char *path, const char *res, int64_t milli, const char *big,
                        const rg_cfg *cfg)
{
    char q[80];
    if (big)
        snprintf(q, sizeof(q), "%.64s", big);
    else
        fmt_qty(res, milli, q, sizeof(q));
    if (milli < 0)
        verr(v, path, "Invalid value: \"%s\": " MSG_NEGATIVE, q);
    if (!cfg->has_parent)
        verr(v, path, "Invalid value: \"%s\": must be nil when %s is empty", q,
             cfg->is_cohort ? "parent" : "cohort");
}

static void check_flavor_quotas(vctx *v, const char *gpath, size_t fi, const cu_fquota *fq,
                                const cu_strs *covered, const rg_cfg *cfg)
{
    char p[400], base[128], q[40];
    snprintf(base, sizeof(base), "%s.flavors[%zu]", gpath, fi);
    snprintf(p, sizeof(p), "%s.name", base);
    check_subdomain(v, p, fq->name);

    int same = fq->n == covered->n;
    for (size_t i = 0; same && i < fq->n; i++)
        if (strcmp(s_or_empty(fq->res[i].name), s_or_empty(covered->items[i])))
            same = 0;
    if (!same) {
        char list[1200];
        size_t o = 0;
        list[o++] = '[';
        for (size_t i = 0; i < covered->n && o < sizeof(list) - 2; i++) {
            int w = snprintf(list + o, sizeof(list) - o - 1, "%s%s", i ? " " : "",
                             s_or_empty(covered->items[i]));
            if (w < 0)
                break;
            o += (size_t)w;
            if (o > sizeof(list) - 2)
                o = sizeof(list) - 2;
        }
        list[o++] = ']';
        list[o] = '\0';
        snprintf(p, sizeof(p), "%s.resources", base);
        verr(v, p, "must list exactly the covered resources %s in order", list);
    }

    for (size_t i = 0; i < fq->n; i++) {
        const cu_rquota *r = &fq->res[i];
        static const char *const fields[] = { "nominalQuota", "borrowingLimit", "lendingLimit" };
        const char *big[] = { r->big_nominal, r->big_blimit, r->big_llimit };
        for (size_t k = 0; k < 3; k++)
            if (big[k]) {
                snprintf(p, sizeof(p), "%s.resources[%zu].%s", base, i, fields[k]);
                char most[32];
                int milli = cu_qty_res_scale(r->name) == CU_QTY_SCALE_MILLI;
                verr(v, p, "Invalid value: \"%.64s\": " MSG_TOO_LARGE, big[k], s_or_empty(r->name),
                     cu_qty_format_res(r->name, INT64_MAX, most, sizeof most),
                     milli ? "milli-units" : "whole units");
            }
        if (r->nominal < 0) {
            snprintf(p, sizeof(p), "%s.resources[%zu].nominalQuota", base, i);
            verr(v, p, "Invalid value: \"%s\": " MSG_NEGATIVE,
                 fmt_qty(r->name, r->nominal, q, sizeof(q)));
        }
        if (r->has_blimit) {
            snprintf(p, sizeof(p), "%s.resources[%zu].borrowingLimit", base, i);
            check_limit(v, p, r->name, r->blimit, r->big_blimit, cfg);
        }
        if (r->has_llimit) {
            snprintf(p, sizeof(p), "%s.resources[%zu].lendingLimit", base, i);
            check_limit(v, p, r->name, r->llimit, r->big_llimit, cfg);
            if (!cfg->is_cohort && r->llimit > r->nominal && r->nominal >= 0 && !r->big_llimit &&
                !r->big_nominal)
                verr(v, p, "Invalid value: \"%s\": must be less than or equal to the nominalQuota",
                     fmt_qty(r->name, r->llimit, q, sizeof(q)));
        }
    }
}

static void check_resource_groups(vctx *v, const cu_rgroups *groups, const rg_cfg *cfg)
{
    char p[400], gpath[64], q[320];
    const char *path = "spec.resourceGroups";
    size_t total_flavors = 0, total_covered = 0;

    if (groups->n > MAX_RESOURCE_GROUPS)
        verr(v, path, "Too many: %zu: must have at most %d items", groups->n, MAX_RESOURCE_GROUPS);
    /* the duplicate scans are pairwise: skip them for absurd sizes, which
     * are reported as Too many anyway */
    size_t all_covered = 0, all_flavors = 0;
    for (size_t g = 0; g < groups->n; g++) {
        all_covered += groups->items[g].covered.n;
        all_flavors += groups->items[g].nflavors;
    }
    int scan = all_covered <= DUP_SCAN_MAX && all_flavors <= DUP_SCAN_MAX;

    for (size_t g = 0; g < groups->n; g++) {
        const cu_rgroup *rg = &groups->items[g];
        snprintf(gpath, sizeof(gpath), "%s[%zu]", path, g);
        total_flavors += rg->nflavors;
        total_covered += rg->covered.n;

        snprintf(p, sizeof(p), "%s.coveredResources", gpath);
        if (rg->covered.n == 0)
            verr(v, p, "Required value: must have at least 1 item");
        else if (rg->covered.n > MAX_COVERED)
            verr(v, p, "Too many: %zu: must have at most %d items", rg->covered.n, MAX_COVERED);
        for (size_t j = 0; j < rg->covered.n; j++) {
            const char *name = rg->covered.items[j];
            snprintf(p, sizeof(p), "%s.coveredResources[%zu]", gpath, j);
            check_qname(v, p, name);
            /* a resource may appear once, in one group only */
            int dup = !scan;
            for (size_t g2 = 0; g2 <= g && !dup; g2++) {
                const cu_rgroup *o = &groups->items[g2];
                size_t lim = g2 == g ? j : o->covered.n;
                for (size_t k = 0; k < lim; k++) {
                    if (!strcmp(s_or_empty(o->covered.items[k]), s_or_empty(name))) {
                        if (g2 == g)
                            verr(v, p, "Duplicate value: %s", quote(q, sizeof(q), name));
                        else
                            verr(v, p,
                                 "Duplicate value: %s: already covered by "
                                 "spec.resourceGroups[%zu]",
                                 quote(q, sizeof(q), name), g2);
                        dup = 1;
                        break;
                    }
                }
            }
        }

        snprintf(p, sizeof(p), "%s.flavors", gpath);
        if (rg->nflavors == 0)
            verr(v, p, "Required value: must have at least 1 item");
        else if (rg->nflavors > MAX_GROUP_FLAVORS)
            verr(v, p, "Too many: %zu: must have at most %d items", rg->nflavors,
                 MAX_GROUP_FLAVORS);
        size_t combos = 0;
        for (size_t f = 0; f < rg->nflavors; f++) {
            const cu_fquota *fq = &rg->flavors[f];
            combos += fq->n;
            check_flavor_quotas(v, gpath, f, fq, &rg->covered, cfg);
            /* a flavor may appear once, in one group only */
            int dup = !scan;
            for (size_t g2 = 0; g2 <= g && !dup; g2++) {
                const cu_rgroup *o = &groups->items[g2];
                size_t lim = g2 == g ? f : o->nflavors;
                for (size_t k = 0; k < lim; k++) {
                    if (!strcmp(s_or_empty(o->flavors[k].name), s_or_empty(fq->name))) {
                        snprintf(p, sizeof(p), "%s.flavors[%zu].name", gpath, f);
                        if (g2 == g)
                            verr(v, p, "Duplicate value: %s", quote(q, sizeof(q), fq->name));
                        else
                            verr(v, p,
                                 "Duplicate value: %s: already listed in "
                                 "spec.resourceGroups[%zu]",
                                 quote(q, sizeof(q), fq->name), g2);
                        dup = 1;
                        break;
                    }
                }
            }
        }
        if (combos > MAX_GROUP_COMBINATIONS)
            verr(v, gpath,
                 "Invalid value: %zu: number of flavor-resource combinations in a "
                 "resourceGroup must be \u2264 %d, got %zu",
                 combos, MAX_GROUP_COMBINATIONS, combos);
    }
    if (total_flavors > MAX_TOTAL_FLAVORS)
        verr(v, path,
             "Invalid value: %zu: total number of flavors across all resourceGroups "
             "must be \u2264 %d, got %zu",
             total_flavors, MAX_TOTAL_FLAVORS, total_flavors);
    if (total_covered > MAX_TOTAL_COVERED)
        verr(v, path,
             "Invalid value: %zu: total number of covered resources across all "
             "resourceGroups must be \u2264 %d, got %zu",
             total_covered, MAX_TOTAL_COVERED, total_covered);
}

/* ---------------- per kind ---------------- */

static void check_flavor(vctx *v, const cu_resource_flavor *rf)
{
    set_obj(v, "ResourceFlavor", &rf->meta, 0);
    check_meta(v, &rf->meta, 0, 0);
    if (rf->node_labels.n > MAX_FLAVOR_LABELS)
        verr(v, "spec.nodeLabels", "Too many: %zu: must have at most %d items", rf->node_labels.n,
             MAX_FLAVOR_LABELS);
    check_labels_map(v, "spec.nodeLabels", &rf->node_labels);
    check_taints(v, "spec.nodeTaints", rf->ntaints, rf->taints);
    check_tolerations(v, "spec.tolerations", rf->ntols, rf->tols);
    if (rf->topology_name) {
        check_subdomain(v, "spec.topologyName", rf->topology_name);
        if (rf->node_labels.n == 0) /* Kueue's CEL rule on the spec, its words */
            verr(v, "spec",
                 "Invalid value: \"object\": at least one nodeLabel is required when topology "
                 "is set");
    }
}

static void check_cluster_queue(vctx *v, const cu_cluster_queue *cq)
{
    char q[320];
    set_obj(v, "ClusterQueue", &cq->meta, 0);
    check_meta(v, &cq->meta, 0, 0);
    int has_cohort = cq->cohort && *cq->cohort;
    if (cq->cohort)
        check_subdomain(v, "spec.cohortName", cq->cohort);
    rg_cfg cfg = { has_cohort, 0 };
    check_resource_groups(v, &cq->groups, &cfg);
    check_labelsel(v, "spec.namespaceSelector", &cq->ns_selector);

    if (cq->fungibility.preference != CU_PREF_UNSET &&
        (cq->fungibility.when_can_borrow != CU_FUNG_TRY_NEXT_FLAVOR ||
         cq->fungibility.when_can_preempt != CU_FUNG_TRY_NEXT_FLAVOR))
        verr(v, "spec.flavorFungibility.preference",
             "Invalid value: %s: preference %s requires both whenCanBorrow and whenCanPreempt "
             "to be TryNextFlavor",
             quote(q, sizeof(q), fpref_name(cq->fungibility.preference)), q);

    if (cq->preemption.within_cq == CU_PP_ANY)
        verr(v, "spec.preemption.withinClusterQueue",
             "Unsupported value: \"Any\": supported "
             "values: \"Never\", \"LowerPriority\", \"LowerOrNewerEqualPriority\"");
    if (cq->preemption.reclaim == CU_PP_LOWER_OR_NEWER_EQUAL_PRIORITY)
        verr(
            v, "spec.preemption.reclaimWithinCohort",
            "Unsupported value: "
            "\"LowerOrNewerEqualPriority\": supported values: \"Never\", \"LowerPriority\", \"Any\"");
    if (cq->preemption.borrow_policy != CU_PP_NEVER &&
        cq->preemption.borrow_policy != CU_PP_LOWER_PRIORITY)
        verr(v, "spec.preemption.borrowWithinCohort.policy",
             "Unsupported value: %s: supported "
             "values: \"Never\", \"LowerPriority\"",
             quote(q, sizeof(q), ppolicy_name(cq->preemption.borrow_policy)));
    if (cq->preemption.borrow_policy != CU_PP_NEVER && cq->preemption.reclaim == CU_PP_NEVER) {
        /* Kueue's: the whole preemption as JSON, in its field order */
        char thr[32] = "";
        if (cq->preemption.has_threshold)
            snprintf(thr, sizeof(thr), ",\"maxPriorityThreshold\":%d",
                     (int)cq->preemption.threshold);
        verr(v, "spec.preemption",
             "Invalid value: {\"reclaimWithinCohort\":\"Never\",\"borrowWithinCohort\":"
             "{\"policy\":\"%s\"%s},\"withinClusterQueue\":\"%s\"}: "
             "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never",
             ppolicy_name(cq->preemption.borrow_policy), thr,
             ppolicy_name(cq->preemption.within_cq));
    }
    if (cq->preemption.has_threshold && cq->preemption.borrow_policy != CU_PP_LOWER_PRIORITY)
        verr(v, "spec.preemption.borrowWithinCohort.maxPriorityThreshold",
             "Forbidden: may only "
             "be set when borrowWithinCohort.policy is LowerPriority");

    check_weight(v, "spec.fairSharing.weight", cq->fs_weight);
    /* the CRD: at most 64 checks, names unique (a map list), at most 64
     * flavors each */
    if (cq->nchecks > 64)
        verr(v, "spec.admissionChecksStrategy.admissionChecks",
             "Too many: %zu: must have at most 64 items", cq->nchecks);
    for (size_t i = 0; i < cq->nchecks; i++) {
        char p[96];
        snprintf(p, sizeof(p), "spec.admissionChecksStrategy.admissionChecks[%zu]", i);
        for (size_t j = 0; j < i; j++)
            if (strcmp(cq->checks[i].name, cq->checks[j].name) == 0) {
                char f[128];
                snprintf(f, sizeof(f), "%s.name", p);
                verr(v, f, "Duplicate value: %s", quote(q, sizeof(q), cq->checks[i].name));
                break;
            }
        if (cq->checks[i].on_flavors.n > 64) {
            char f[128];
            snprintf(f, sizeof(f), "%s.onFlavors", p);
            verr(v, f, "Too many: %zu: must have at most 64 items", cq->checks[i].on_flavors.n);
        }
    }
}

static void check_cohort(vctx *v, const cu_cohort *co)
{
    char q[320];
    set_obj(v, "Cohort", &co->meta, 0);
    check_meta(v, &co->meta, 0, 0);
    int has_parent = co->parent && *co->parent;
    if (co->parent) {
        check_subdomain(v, "spec.parentName", co->parent);
        if (has_parent && co->meta.name && !strcmp(co->parent, co->meta.name))
            verr(v, "spec.parentName", "Invalid value: %s: must not be the Cohort itself",
                 quote(q, sizeof(q), co->parent));
    }
    rg_cfg cfg = { has_parent, 1 };
    check_resource_groups(v, &co->groups, &cfg);
    check_weight(v, "spec.fairSharing.weight", co->fs_weight);
}

static void check_local_queue(vctx *v, const cu_local_queue *lq)
{
    set_obj(v, "LocalQueue", &lq->meta, 1);
    check_meta(v, &lq->meta, 1, 0);
    check_subdomain(v, "spec.clusterQueue", lq->cluster_queue);
    check_weight(v, "spec.fairSharing.weight", lq->fs_weight);
}

static const char *const PC_GROUPS = "supported values: \"kueue.x-k8s.io\", \"scheduling.k8s.io\"";
static const char *const PC_KINDS =
    "supported values: \"WorkloadPriorityClass\", \"PriorityClass\"";

static void check_priority_ref(vctx *v, const cu_workload *wl)
{
    char q[320];
    const char *g = wl->pc_group, *k = wl->pc_kind;
    int g_ok = 0, k_ok = 0;
    if (!g || !*g)
        verr(v, "spec.priorityClassRef.group", "Required value");
    else if (!strcmp(g, CU_GROUP) || !strcmp(g, "scheduling.k8s.io"))
        g_ok = 1;
    else
        verr(v, "spec.priorityClassRef.group", "Unsupported value: %s: %s", quote(q, sizeof(q), g),
             PC_GROUPS);
    if (!k || !*k)
        verr(v, "spec.priorityClassRef.kind", "Required value");
    else if (!strcmp(k, "WorkloadPriorityClass") || !strcmp(k, "PriorityClass"))
        k_ok = 1;
    else
        verr(v, "spec.priorityClassRef.kind", "Unsupported value: %s: %s", quote(q, sizeof(q), k),
             PC_KINDS);
    if (g_ok && k_ok) {
        if (!strcmp(g, "scheduling.k8s.io") && strcmp(k, "PriorityClass"))
            verr(v, "spec.priorityClassRef.kind",
                 "Invalid value: %s: only the PriorityClass kind "
                 "is allowed for the scheduling.k8s.io group",
                 quote(q, sizeof(q), k));
        if (!strcmp(g, CU_GROUP) && strcmp(k, "WorkloadPriorityClass"))
            verr(v, "spec.priorityClassRef.kind",
                 "Invalid value: %s: only the WorkloadPriorityClass "
                 "kind is allowed for the kueue.x-k8s.io group",
                 quote(q, sizeof(q), k));
    }
    check_subdomain(v, "spec.priorityClassRef.name", wl->pc_name);
}

static void check_admission(vctx *v, const cu_workload *wl)
{
    char p[400], q[320], qq[40];
    check_subdomain(v, "status.admission.clusterQueue", wl->adm_cq);
    if (wl->npsa > MAX_PODSETS)
        verr(v, "status.admission.podSetAssignments", "Too many: %zu: must have at most %d items",
             wl->npsa, MAX_PODSETS);
    if (wl->npsa > DUP_SCAN_MAX || wl->npodsets > DUP_SCAN_MAX)
        return; /* already far over the limits; skip the pairwise scans */
    for (size_t i = 0; i < wl->npsa; i++) {
        const cu_psa *a = &wl->psa[i];
        const cu_podset *ps = NULL;
        size_t psi = 0;
        for (size_t j = 0; j < wl->npodsets; j++) {
            if (!strcmp(s_or_empty(wl->podsets[j].name), s_or_empty(a->name))) {
                ps = &wl->podsets[j];
                psi = j;
                break;
            }
        }
        snprintf(p, sizeof(p), "status.admission.podSetAssignments[%zu].name", i);
        if (!ps)
            verr(v, p, "Not found: %s", quote(q, sizeof(q), a->name));
        for (size_t j = 0; j < i; j++) {
            if (!strcmp(s_or_empty(wl->psa[j].name), s_or_empty(a->name))) {
                verr(v, p, "Duplicate value: %s", quote(q, sizeof(q), a->name));
                break;
            }
        }
        snprintf(p, sizeof(p), "status.admission.podSetAssignments[%zu].count", i);
        if (a->count < 0)
            verr(v, p, "Invalid value: %d: " MSG_NEGATIVE, (int)a->count);
        else if (ps && a->count > ps->count)
            verr(v, p,
                 "Invalid value: %d: must be less than or equal to spec.podSets[%zu].count (%d)",
                 (int)a->count, psi, (int)ps->count);
        if (a->count > 0) {
            for (size_t r = 0; r < a->usage.n; r++) {
                const cu_res *u = &a->usage.items[r];
                if (u->milli % a->count != 0) { /* in Kueue's ResourceValue unit */
                    snprintf(p, sizeof(p),
                             "status.admission.podSetAssignments[%zu].resourceUsage[%s]", i,
                             s_or_empty(u->name));
                    verr(v, p, "Invalid value: \"%s\": is not a multiple of %d",
                         fmt_qty(u->name, u->milli, qq, sizeof(qq)), (int)a->count);
                }
            }
        }
    }
}

static void check_workload(vctx *v, const cu_workload *wl)
{
    char p[400], q[320];
    set_obj(v, "Workload", &wl->meta, 1);
    check_meta(v, &wl->meta, 1, 0);

    if (wl->npodsets == 0)
        verr(v, "spec.podSets", "Required value: must have at least 1 item");
    else if (wl->npodsets > MAX_PODSETS)
        verr(v, "spec.podSets", "Too many: %zu: must have at most %d items", wl->npodsets,
             MAX_PODSETS);
    size_t nmin = 0;
    for (size_t i = 0; i < wl->npodsets; i++) {
        const cu_podset *ps = &wl->podsets[i];
        snprintf(p, sizeof(p), "spec.podSets[%zu].name", i);
        check_label(v, p, ps->name);
        for (size_t j = 0; wl->npodsets <= DUP_SCAN_MAX && j < i; j++) {
            if (!strcmp(s_or_empty(wl->podsets[j].name), s_or_empty(ps->name))) {
                verr(v, p, "Duplicate value: %s", quote(q, sizeof(q), ps->name));
                break;
            }
        }
        snprintf(p, sizeof(p), "spec.podSets[%zu].count", i);
        if (ps->count < 0)
            verr(v, p, "Invalid value: %d: " MSG_NEGATIVE, (int)ps->count);
        if (ps->has_min) {
            nmin++;
            snprintf(p, sizeof(p), "spec.podSets[%zu].minCount", i);
            if (ps->min_count < 1)
                verr(v, p, "Invalid value: %d: must be greater than or equal to 1",
                     (int)ps->min_count);
            else if (ps->min_count > ps->count)
                verr(v, p, "Invalid value: %d: must be less than or equal to count (%d)",
                     (int)ps->min_count, (int)ps->count);
        }
    }
    if (nmin > 1)
        verr(v, "spec.podSets", "Invalid value: %zu: at most one podSet can use minCount", nmin);

    if (wl->queue_name && *wl->queue_name)
        check_subdomain(v, "spec.queueName", wl->queue_name);
    if (wl->pc_group || wl->pc_kind || wl->pc_name)
        check_priority_ref(v, wl);
    if (wl->has_admission)
        check_admission(v, wl);
}

static void check_wpc(vctx *v, const cu_wpc *c)
{
    set_obj(v, "WorkloadPriorityClass", &c->meta, 0);
    check_meta(v, &c->meta, 0, 0);
    if (c->description) {
        size_t n = utf8_len(c->description);
        if (n > MAX_WPC_DESCRIPTION)
            verr(v, "description", "Too long: may not be more than %d characters (has %zu)",
                 MAX_WPC_DESCRIPTION, n);
    }
}

static void check_pc(vctx *v, const cu_priority_class *c)
{
    set_obj(v, "PriorityClass", &c->meta, 0);
    check_meta(v, &c->meta, 0, 0);
    const char *name = s_or_empty(c->meta.name);
    if (strncmp(name, "system-", 7) != 0 && c->value > MAX_USER_PRIORITY)
        verr(v, "value", "Forbidden: maximum allowed value of a user defined priority is %d",
             MAX_USER_PRIORITY);
}

/* The CRD's rules: controllerName 1..253 characters. */
static void check_admission_check(vctx *v, const cu_admission_check *k)
{
    set_obj(v, "AdmissionCheck", &k->meta, 0);
    check_meta(v, &k->meta, 0, 0);
    size_t n = k->controller ? strlen(k->controller) : 0;
    if (n == 0)
        verr(v, "spec.controllerName", "Required value");
    else if (n > 253)
        verr(v, "spec.controllerName", "Too long: may not be more than 253 bytes (has %zu)", n);
}

/* Kueue's Topology rules (its CRD: 1..16 levels, each nodeLabel 1..316
 * characters of CU_TOPOLOGY_LABEL_PATTERN; and its CEL rules: the levels
 * unique, kubernetes.io/hostname only as the lowest level). The
 * immutability of the levels is the webhook's (an update). */
static void check_topology(vctx *v, const cu_topology *t)
{
    char q[340], p[64];
    set_obj(v, "Topology", &t->meta, 0);
    check_meta(v, &t->meta, 0, 0);
    if (t->nlevels == 0) {
        verr(v, "spec.levels", "Required value");
        return;
    }
    if (t->nlevels > CU_TOPOLOGY_MAX_LEVELS)
        verr(v, "spec.levels", "Too many: %zu: must have at most %d items", t->nlevels,
             CU_TOPOLOGY_MAX_LEVELS);
    int dup = 0, host = 0;
    for (size_t i = 0; i < t->nlevels; i++) {
        const char *l = t->levels[i];
        size_t n = strlen(l);
        snprintf(p, sizeof(p), "spec.levels[%zu].nodeLabel", i);
        if (n == 0)
            verr(v, p, "Required value");
        else if (n > CU_TOPOLOGY_LABEL_MAX)
            verr(v, p, "Too long: may not be more than %d bytes", CU_TOPOLOGY_LABEL_MAX);
        else if (!cu_topology_label_ok(l))
            verr(v, p, "Invalid value: %s: %s in body should match '%s'", quote(q, sizeof(q), l), p,
                 CU_TOPOLOGY_LABEL_PATTERN);
        for (size_t j = 0; j < i; j++)
            dup |= strcmp(t->levels[j], l) == 0;
        host |= strcmp(l, CU_LABEL_HOSTNAME) == 0;
    }
    if (dup)
        verr(v, "spec.levels", "Invalid value: \"array\": must be unique");
    if (host && strcmp(t->levels[t->nlevels - 1], CU_LABEL_HOSTNAME) != 0)
        verr(v, "spec.levels",
             "Invalid value: \"array\": the " CU_LABEL_HOSTNAME
             " label can only be used at the lowest level of topology");
}

static void check_namespace(vctx *v, const cu_namespace *ns)
{
    set_obj(v, "Namespace", &ns->meta, 0);
    check_label(v, "metadata.name", ns->meta.name);
}

/* ---------------- duplicates ---------------- */

static int meta_cmp(const void *a, const void *b)
{
    const cu_meta *x = *(const cu_meta *const *)a, *y = *(const cu_meta *const *)b;
    int c = strcmp(s_or_empty(x->ns), s_or_empty(y->ns));
    if (c)
        return c;
    c = strcmp(s_or_empty(x->name), s_or_empty(y->name));
    if (c)
        return c;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Reports every object of one kind whose (namespace, name) repeats an
 * earlier one. metas: n pointers (reordered). */
static void check_dups(vctx *v, const char *kind, int namespaced, const cu_meta **metas, size_t n)
{
    char q[320];
    if (n < 2)
        return;
    qsort(metas, n, sizeof(*metas), meta_cmp);
    size_t first = 0;
    for (size_t i = 1; i < n; i++) {
        const cu_meta *a = metas[first], *b = metas[i];
        if (strcmp(s_or_empty(a->ns), s_or_empty(b->ns)) ||
            strcmp(s_or_empty(a->name), s_or_empty(b->name))) {
            first = i;
            continue;
        }
        if (!b->name || !*b->name)
            continue; /* already reported as Required */
        set_obj(v, kind, b, namespaced);
        verr(v, "metadata.name", "Duplicate value: %s: defined at %s:%d and again at %s:%d",
             quote(q, sizeof(q), b->name), a->file ? a->file : "?", a->line,
             b->file ? b->file : "?", b->line);
    }
}

/* Collects the metas of a pointer vector into a malloc'ed array and checks
 * duplicates. On OOM the duplicate check is skipped with a warning. */
#define DUPS(v, kind, namespaced, vec) \
    do { \
        size_t n_ = (vec).n; \
        if (n_ >= 2) { \
            const cu_meta **m_ = malloc(n_ * sizeof(*m_)); \
            if (!m_) { \
                cu_diag_warn((v)->d, "%s: duplicate check skipped: out of memory", kind); \
            } else { \
                for (size_t i_ = 0; i_ < n_; i_++) \
                    m_[i_] = &(vec).items[i_]->meta; \
                check_dups((v), (kind), (namespaced), m_, n_); \
                free(m_); \
            } \
        } \
    } while (0)

cu_err cu_object_validate(cu_kind kind, const void *obj, cu_diag *d)
{
    vctx v;
    memset(&v, 0, sizeof(v));
    v.d = d;
    switch (kind) {
    case CU_KIND_RESOURCE_FLAVOR: check_flavor(&v, obj); break;
    case CU_KIND_CLUSTER_QUEUE: check_cluster_queue(&v, obj); break;
    case CU_KIND_COHORT: check_cohort(&v, obj); break;
    case CU_KIND_LOCAL_QUEUE: check_local_queue(&v, obj); break;
    case CU_KIND_WORKLOAD: check_workload(&v, obj); break;
    case CU_KIND_WORKLOAD_PRIORITY_CLASS: check_wpc(&v, obj); break;
    case CU_KIND_PRIORITY_CLASS: check_pc(&v, obj); break;
    case CU_KIND_NAMESPACE: check_namespace(&v, obj); break;
    case CU_KIND_ADMISSION_CHECK: check_admission_check(&v, obj); break;
    case CU_KIND_TOPOLOGY: check_topology(&v, obj); break;
    default:
        cu_diag_error(d, "%s: no validation for this kind", cu_kind_name(kind));
        return CU_EINVAL;
    }
    return v.nerr ? CU_EINVAL : CU_OK;
}

cu_err cu_world_validate(const cu_world *w, cu_diag *d)
{
    vctx v;
    memset(&v, 0, sizeof(v));
    v.d = d;

    for (size_t i = 0; i < w->flavors.n; i++)
        check_flavor(&v, w->flavors.items[i]);
    DUPS(&v, "ResourceFlavor", 0, w->flavors);
    for (size_t i = 0; i < w->cqs.n; i++)
        check_cluster_queue(&v, w->cqs.items[i]);
    DUPS(&v, "ClusterQueue", 0, w->cqs);
    for (size_t i = 0; i < w->cohorts.n; i++)
        check_cohort(&v, w->cohorts.items[i]);
    DUPS(&v, "Cohort", 0, w->cohorts);
    for (size_t i = 0; i < w->lqs.n; i++)
        check_local_queue(&v, w->lqs.items[i]);
    DUPS(&v, "LocalQueue", 1, w->lqs);
    for (size_t i = 0; i < w->workloads.n; i++)
        check_workload(&v, w->workloads.items[i]);
    DUPS(&v, "Workload", 1, w->workloads);
    for (size_t i = 0; i < w->wpcs.n; i++)
        check_wpc(&v, w->wpcs.items[i]);
    DUPS(&v, "WorkloadPriorityClass", 0, w->wpcs);
    for (size_t i = 0; i < w->pcs.n; i++)
        check_pc(&v, w->pcs.items[i]);
    DUPS(&v, "PriorityClass", 0, w->pcs);
    for (size_t i = 0; i < w->namespaces.n; i++)
        check_namespace(&v, w->namespaces.items[i]);
    DUPS(&v, "Namespace", 0, w->namespaces);
    for (size_t i = 0; i < w->checks.n; i++)
        check_admission_check(&v, w->checks.items[i]);
    DUPS(&v, "AdmissionCheck", 0, w->checks);
    for (size_t i = 0; i < w->topologies.n; i++)
        check_topology(&v, w->topologies.items[i]);
    DUPS(&v, "Topology", 0, w->topologies);
    DUPS(&v, "Node", 0, w->nodes);
    DUPS(&v, "Pod", 1, w->pods);

    return v.nerr ? CU_EINVAL : CU_OK;
}
