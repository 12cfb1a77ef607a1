/*
 * cu_prom.c - metrics registry and Prometheus / OpenMetrics writer.
 *
 * Invariants:
 *  - m->fams is sorted by name (strcmp), so lookups bisect and the writer
 *    walks families in order without sorting;
 *  - every series of a family sits in exactly one hash chain of f->tab,
 *    keyed by hash_values() of its label values; f->n counts them and
 *    m->nseries is the sum over families;
 *  - a histogram series keeps per-bucket (not cumulative) counts, one per
 *    bound plus one for +Inf, and count == sum of those counts; the writer
 *    accumulates them;
 *  - a counter's value only grows while its series exists.
 */
#include "cu_prom.h"

#include "cu_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct series {
    struct series *next; /* hash chain */
    uint64_t hash;
    double value;     /* counter, gauge, info */
    double sum;       /* histogram */
    uint64_t count;   /* histogram */
    uint64_t *bucket; /* histogram: nbuckets + 1 per-bucket counts */
    size_t nl;
    char *vals[]; /* nl strings, stored after the array */
} series;

struct cu_metric_family {
    cu_metrics *m;
    char *name, *help;
    cu_metric_type type;
    size_t nlabels;
    char **labels;
    size_t nbuckets;
    double *buckets;
    series **tab;
    size_t cap, n;
    int om_plain; /* OpenMetrics: written under its full name as "unknown"
                       (counter) or "gauge" (info), because its suffix-less
                       family name is taken by another family */
};

struct cu_metrics {
    cu_metric_family **fams;
    size_t n, cap;
    size_t nseries, max_series;
    uint64_t nerrors;
    cu_metric_family *errfam; /* cueue_metrics_errors_total, once registered */
    int in_err;
    char err[320];
};

/* ---------------- small helpers ---------------- */

static void set_err(cu_metrics *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_err(cu_metrics *m, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->err, sizeof(m->err), fmt, ap);
    va_end(ap);
}

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

static int valid_metric_name(const char *s)
{
    if (!s || !*s)
        return 0;
    for (size_t i = 0; s[i]; i++) {
        char c = s[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
                 (i > 0 && c >= '0' && c <= '9');
        if (!ok)
            return 0;
    }
    return 1;
}

static int valid_label_name(const char *s)
{
    if (!s || !*s || (s[0] == '_' && s[1] == '_'))
        return 0;
    for (size_t i = 0; s[i]; i++) {
        char c = s[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
                 (i > 0 && c >= '0' && c <= '9');
        if (!ok)
            return 0;
    }
    return 1;
}

/* Returns 1 when s is well-formed UTF-8 (no overlongs, no surrogates). */
static int valid_utf8(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned c = *p;
        size_t n;
        unsigned cp;
        if (c < 0x80) {
            p++;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            n = 1;
            cp = c & 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            n = 2;
            cp = c & 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            n = 3;
            cp = c & 0x07;
        } else {
            return 0;
        }
        for (size_t i = 1; i <= n; i++) {
            if ((p[i] & 0xC0) != 0x80)
                return 0;
            cp = (cp << 6) | (p[i] & 0x3F);
        }
        if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
            cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return 0;
        p += n + 1;
    }
    return 1;
}

static const char *val_at(const char *const values[], size_t i)
{
    return values && values[i] ? values[i] : "";
}

static uint64_t hash_values(const char *const values[], size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) {
        for (const unsigned char *p = (const unsigned char *)val_at(values, i); *p; p++) {
            h ^= *p;
            h *= 1099511628211ULL;
        }
        h ^= 0xFF; /* never a byte of valid UTF-8: separates values */
        h *= 1099511628211ULL;
    }
    return h;
}

/* Counts a rejected update: in m->nerrors and, once a family is set by
 * cu_metrics_count_errors_in, in it (label reason). */
static void count_error(cu_metrics *m, const char *reason)
{
    m->nerrors++;
    if (m->errfam && !m->in_err) {
        m->in_err = 1;
        const char *v[1] = { reason };
        (void)cu_metric_inc(m->errfam, v, 1);
        m->in_err = 0;
    }
}

/* ---------------- registry ---------------- */

cu_metrics *cu_metrics_new(void)
{
    cu_metrics *m = calloc(1, sizeof(*m));
    if (m)
        m->max_series = CU_METRICS_DEFAULT_MAX_SERIES;
    return m;
}

static void free_series(series *s)
{
    free(s->bucket);
    free(s);
}

static void family_clear(cu_metric_family *f)
{
    for (size_t i = 0; i < f->cap; i++) {
        series *s = f->tab[i];
        while (s) {
            series *nx = s->next;
            free_series(s);
            s = nx;
        }
        f->tab[i] = NULL;
    }
    f->m->nseries -= f->n;
    f->n = 0;
}

static void family_free(cu_metric_family *f)
{
    if (!f)
        return;
    if (f->tab)
        family_clear(f);
    free(f->tab);
    for (size_t i = 0; i < f->nlabels; i++)
        free(f->labels ? f->labels[i] : NULL);
    free(f->labels);
    free(f->buckets);
    free(f->name);
    free(f->help);
    free(f);
}

void cu_metrics_free(cu_metrics *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++)
        family_free(m->fams[i]);
    free(m->fams);
    free(m);
}

void cu_metrics_set_max_series(cu_metrics *m, size_t max_series) { m->max_series = max_series; }

const char *cu_metrics_last_error(const cu_metrics *m) { return m->err; }

uint64_t cu_metrics_error_count(const cu_metrics *m) { return m->nerrors; }

void cu_metrics_count_errors_in(cu_metrics *m, cu_metric_family *f) { m->errfam = f; }

/* Index of the first family whose name is >= name. */
static size_t fam_lower_bound(const cu_metrics *m, const char *name)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(m->fams[mid]->name, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

cu_metric_family *cu_metrics_find(const cu_metrics *m, const char *name)
{
    size_t i = fam_lower_bound(m, name);
    return i < m->n && strcmp(m->fams[i]->name, name) == 0 ? m->fams[i] : NULL;
}

/* The names a family's lines use in the Prometheus text format (TYPE
 * name and sample names). Writes up to 4 names into out and returns how
 * many. */
static size_t text_names(const char *name, cu_metric_type type, char out[4][256])
{
    size_t n = 0;
    snprintf(out[n++], 256, "%s", name);
    if (type == CU_METRIC_HISTOGRAM) {
        snprintf(out[n++], 256, "%s_bucket", name);
        snprintf(out[n++], 256, "%s_sum", name);
        snprintf(out[n++], 256, "%s_count", name);
    }
    return n;
}

/* Length of the OpenMetrics family name: counters drop "_total", info
 * metrics "_info", unless om_plain. */
static size_t om_name_len(const char *name, cu_metric_type type, int om_plain)
{
    size_t len = strlen(name);
    if (om_plain)
        return len;
    if (type == CU_METRIC_COUNTER)
        return len - 6;
    if (type == CU_METRIC_INFO)
        return len - 5;
    return len;
}

static int om_clash(const char *a, size_t an, const char *b, size_t bn)
{
    return an == bn && memcmp(a, b, an) == 0;
}

/* A counter or info family can fall back to its full name in OpenMetrics. */
static int can_be_plain(cu_metric_type type)
{
    return type == CU_METRIC_COUNTER || type == CU_METRIC_INFO;
}

static const char *type_name(cu_metric_type t)
{
    switch (t) {
    case CU_METRIC_COUNTER: return "counter";
    case CU_METRIC_GAUGE: return "gauge";
    case CU_METRIC_HISTOGRAM: return "histogram";
    case CU_METRIC_INFO: return "info";
    }
    return "?";
}

/* 1 when f was registered with exactly these parameters. */
static int same_family(const cu_metric_family *f, cu_metric_type type, size_t nlabels,
                       const char *const labelnames[], size_t nbuckets, const double *buckets)
{
    if (f->type != type || f->nlabels != nlabels || f->nbuckets != nbuckets)
        return 0;
    for (size_t i = 0; i < nlabels; i++)
        if (strcmp(f->labels[i], labelnames[i]) != 0)
            return 0;
    for (size_t i = 0; i < nbuckets; i++)
        if (f->buckets[i] != buckets[i])
            return 0;
    return 1;
}

cu_metric_family *cu_metrics_family(cu_metrics *m, const char *name, const char *help,
                                    cu_metric_type type, size_t nlabels,
                                    const char *const labelnames[], size_t nbuckets,
                                    const double buckets[])
{
    m->err[0] = '\0';
    if (!valid_metric_name(name) || strlen(name) > 200) {
        set_err(m,
                "metric family \"%.100s\": name is not a valid metric name "
                "([a-zA-Z_:][a-zA-Z0-9_:]*, at most 200 bytes)",
                name ? name : "(null)");
        return NULL;
    }
    if (type != CU_METRIC_COUNTER && type != CU_METRIC_GAUGE && type != CU_METRIC_HISTOGRAM &&
        type != CU_METRIC_INFO) {
        set_err(m, "metric family \"%s\": type %d is not counter, gauge, histogram or info", name,
                (int)type);
        return NULL;
    }
    if (type == CU_METRIC_COUNTER && (!ends_with(name, "_total") || strlen(name) == 6)) {
        set_err(m, "metric family \"%s\": a counter's name must end in \"_total\"", name);
        return NULL;
    }
    if (type == CU_METRIC_INFO && (!ends_with(name, "_info") || strlen(name) == 5)) {
        set_err(m, "metric family \"%s\": an info metric's name must end in \"_info\"", name);
        return NULL;
    }
    if (!help || !valid_utf8(help)) {
        set_err(m, "metric family \"%s\": help text is missing or not valid UTF-8", name);
        return NULL;
    }
    if (nlabels > CU_METRICS_MAX_LABELS || (nlabels && !labelnames)) {
        set_err(m, "metric family \"%s\": %zu label names (at most %d)", name, nlabels,
                CU_METRICS_MAX_LABELS);
        return NULL;
    }
    for (size_t i = 0; i < nlabels; i++) {
        if (!valid_label_name(labelnames[i])) {
            set_err(m,
                    "metric family \"%s\": label name \"%.100s\" is not valid "
                    "([a-zA-Z_][a-zA-Z0-9_]*, not starting with \"__\")",
                    name, labelnames[i] ? labelnames[i] : "(null)");
            return NULL;
        }
        if (type == CU_METRIC_HISTOGRAM && strcmp(labelnames[i], "le") == 0) {
            set_err(m, "metric family \"%s\": label name \"le\" is reserved in histograms", name);
            return NULL;
        }
        for (size_t j = 0; j < i; j++)
            if (strcmp(labelnames[i], labelnames[j]) == 0) {
                set_err(m, "metric family \"%s\": label name \"%s\" given twice", name,
                        labelnames[i]);
                return NULL;
            }
    }
    if (type != CU_METRIC_HISTOGRAM) {
        nbuckets = 0;
        buckets = NULL;
    } else {
        if (nbuckets && !buckets) {
            set_err(m, "metric family \"%s\": %zu buckets but no bounds", name, nbuckets);
            return NULL;
        }
        if (nbuckets && isinf(buckets[nbuckets - 1]) && buckets[nbuckets - 1] > 0)
            nbuckets--; /* the +Inf bucket is implicit */
        if (nbuckets > CU_METRICS_MAX_BUCKETS) {
            set_err(m, "metric family \"%s\": %zu buckets (at most %d)", name, nbuckets,
                    CU_METRICS_MAX_BUCKETS);
            return NULL;
        }
        for (size_t i = 0; i < nbuckets; i++) {
            if (!isfinite(buckets[i])) {
                set_err(m, "metric family \"%s\": bucket %zu is not a finite number", name, i);
                return NULL;
            }
            if (i > 0 && !(buckets[i] > buckets[i - 1])) {
                set_err(m,
                        "metric family \"%s\": bucket bounds must increase strictly "
                        "(bucket %zu is %g after %g)",
                        name, i, buckets[i], buckets[i - 1]);
                return NULL;
            }
        }
    }

    cu_metric_family *old = cu_metrics_find(m, name);
    if (old) {
        if (same_family(old, type, nlabels, labelnames, nbuckets, buckets))
            return old;
        set_err(m,
                "metric family \"%s\": already registered as a %s with other labels or "
                "buckets",
                name, type_name(old->type));
        return NULL;
    }
    char mine[4][256], theirs[4][256];
    size_t nm = text_names(name, type, mine);
    for (size_t k = 0; k < m->n; k++) {
        const cu_metric_family *o = m->fams[k];
        size_t no = text_names(o->name, o->type, theirs);
        for (size_t i = 0; i < nm; i++)
            for (size_t j = 0; j < no; j++)
                if (strcmp(mine[i], theirs[j]) == 0) {
                    set_err(m,
                            "metric family \"%s\" (%s): the name \"%s\" is also used by "
                            "family \"%s\" (%s)",
                            name, type_name(type), mine[i], o->name, type_name(o->type));
                    return NULL;
                }
    }
    /* OpenMetrics family names must be unique too. Kueue itself has
     * kueue_finished_workloads (gauge) next to kueue_finished_workloads_total
     * (counter): the counter then keeps its full name in OpenMetrics. */
    int plain = 0;
    cu_metric_family *make_plain = NULL;
    for (size_t k = 0; k < m->n; k++) {
        cu_metric_family *o = m->fams[k];
        size_t ol = om_name_len(o->name, o->type, o->om_plain);
        if (!om_clash(name, om_name_len(name, type, plain), o->name, ol))
            continue;
        if (!plain && can_be_plain(type)) {
            plain = 1;
            k = (size_t)-1; /* recheck every family under the full name */
        } else if (!make_plain && !o->om_plain && can_be_plain(o->type) &&
                   !om_clash(name, om_name_len(name, type, plain), o->name, strlen(o->name))) {
            make_plain = o;
        } else {
            set_err(m,
                    "metric family \"%s\" (%s): its OpenMetrics family name is also used by "
                    "family \"%s\" (%s)",
                    name, type_name(type), o->name, type_name(o->type));
            return NULL;
        }
    }

    cu_metric_family *f = calloc(1, sizeof(*f));
    if (!f)
        goto oom;
    f->m = m;
    f->type = type;
    f->name = strdup(name);
    f->help = strdup(help);
    f->cap = 16;
    f->tab = calloc(f->cap, sizeof(*f->tab));
    if (nlabels) {
        f->labels = calloc(nlabels, sizeof(*f->labels));
        if (!f->labels)
            goto oom;
        f->nlabels = nlabels;
        for (size_t i = 0; i < nlabels; i++)
            if (!(f->labels[i] = strdup(labelnames[i])))
                goto oom;
    }
    if (nbuckets) {
        f->buckets = malloc(nbuckets * sizeof(double));
        if (!f->buckets)
            goto oom;
        memcpy(f->buckets, buckets, nbuckets * sizeof(double));
        f->nbuckets = nbuckets;
    }
    if (!f->name || !f->help || !f->tab)
        goto oom;
    if (cu_vec_reserve(&m->fams, m->n, &m->cap, sizeof(*m->fams), 64))
        goto oom;
    f->om_plain = plain;
    if (make_plain)
        make_plain->om_plain = 1;
    size_t at = fam_lower_bound(m, name);
    memmove(m->fams + at + 1, m->fams + at, (m->n - at) * sizeof(*m->fams));
    m->fams[at] = f;
    m->n++;
    return f;
oom:
    family_free(f);
    set_err(m, "metric family \"%s\": out of memory", name);
    return NULL;
}

/* ---------------- series ---------------- */

static series *lookup(const cu_metric_family *f, const char *const values[], uint64_t h)
{
    for (series *s = f->tab[h & (f->cap - 1)]; s; s = s->next) {
        if (s->hash != h)
            continue;
        size_t i = 0;
        while (i < f->nlabels && strcmp(s->vals[i], val_at(values, i)) == 0)
            i++;
        if (i == f->nlabels)
            return s;
    }
    return NULL;
}

static int grow(cu_metric_family *f)
{
    size_t nc = f->cap * 2;
    series **nt = calloc(nc, sizeof(*nt));
    if (!nt)
        return -1;
    for (size_t i = 0; i < f->cap; i++) {
        series *s = f->tab[i];
        while (s) {
            series *nx = s->next;
            s->next = nt[s->hash & (nc - 1)];
            nt[s->hash & (nc - 1)] = s;
            s = nx;
        }
    }
    free(f->tab);
    f->tab = nt;
    f->cap = nc;
    return 0;
}

/* Finds or creates the series; NULL (error counted, *err set) when the
 * label values are invalid or memory or the series bound ran out. */
static series *get_series(cu_metric_family *f, const char *const values[], cu_err *err)
{
    uint64_t h = hash_values(values, f->nlabels);
    series *s = lookup(f, values, h);
    if (s)
        return s;
    cu_metrics *m = f->m;
    size_t bytes = 0;
    for (size_t i = 0; i < f->nlabels; i++) {
        const char *v = val_at(values, i);
        if (!valid_utf8(v)) {
            set_err(m, "metric \"%s\": value of label \"%s\" is not valid UTF-8", f->name,
                    f->labels[i]);
            count_error(m, "invalid_label_value");
            *err = CU_EINVAL;
            return NULL;
        }
        bytes += strlen(v) + 1;
    }
    if (m->nseries >= m->max_series) {
        set_err(m, "metric \"%s\": series limit (%zu) reached", f->name, m->max_series);
        count_error(m, "series_limit");
        *err = CU_ENOMEM;
        return NULL;
    }
    if (f->n + 1 > f->cap - f->cap / 4 && grow(f) != 0)
        goto oom;
    s = calloc(1, sizeof(*s) + f->nlabels * sizeof(char *) + bytes);
    if (!s)
        goto oom;
    if (f->type == CU_METRIC_HISTOGRAM) {
        s->bucket = calloc(f->nbuckets + 1, sizeof(uint64_t));
        if (!s->bucket) {
            free(s);
            goto oom;
        }
    }
    s->hash = h;
    s->nl = f->nlabels;
    char *p = (char *)(s->vals + f->nlabels);
    for (size_t i = 0; i < f->nlabels; i++) {
        size_t n = strlen(val_at(values, i)) + 1;
        memcpy(p, val_at(values, i), n);
        s->vals[i] = p;
        p += n;
    }
    s->next = f->tab[h & (f->cap - 1)];
    f->tab[h & (f->cap - 1)] = s;
    f->n++;
    m->nseries++;
    return s;
oom:
    set_err(m, "metric \"%s\": out of memory", f->name);
    count_error(m, "out_of_memory");
    *err = CU_ENOMEM;
    return NULL;
}

static cu_err reject(cu_metric_family *f, const char *reason, const char *what)
{
    set_err(f->m, "metric \"%s\" (%s): %s", f->name, type_name(f->type), what);
    count_error(f->m, reason);
    return CU_EINVAL;
}

cu_err cu_metric_inc(cu_metric_family *f, const char *const values[], double delta)
{
    if (f->type == CU_METRIC_HISTOGRAM || f->type == CU_METRIC_INFO)
        return reject(f, "wrong_type", "inc is for counters and gauges");
    if (!isfinite(delta))
        return reject(f, "not_finite", "delta is NaN or infinite");
    if (f->type == CU_METRIC_COUNTER && delta < 0)
        return reject(f, "counter_decrease", "a counter cannot decrease (negative delta)");
    cu_err err = CU_OK;
    series *s = get_series(f, values, &err);
    if (!s)
        return err;
    s->value += delta;
    return CU_OK;
}

cu_err cu_metric_set(cu_metric_family *f, const char *const values[], double v)
{
    if (f->type == CU_METRIC_HISTOGRAM)
        return reject(f, "wrong_type", "set is for counters, gauges and info metrics");
    if (f->type == CU_METRIC_INFO && v != 1)
        return reject(f, "wrong_value", "an info metric's value is always 1");
    if (f->type == CU_METRIC_COUNTER && !(v >= 0 && isfinite(v)))
        return reject(f, "not_finite", "a counter's value must be finite and >= 0");
    cu_err err = CU_OK;
    if (f->type == CU_METRIC_COUNTER) {
        series *old = lookup(f, values, hash_values(values, f->nlabels));
        if (old && v < old->value)
            return reject(f, "counter_decrease",
                          "a counter cannot decrease (set below "
                          "its value)");
    }
    series *s = get_series(f, values, &err);
    if (!s)
        return err;
    s->value = v;
    return CU_OK;
}

cu_err cu_metric_observe(cu_metric_family *f, const char *const values[], double x)
{
    if (f->type != CU_METRIC_HISTOGRAM)
        return reject(f, "wrong_type", "observe is for histograms");
    if (isnan(x))
        return reject(f, "not_finite", "observation is NaN");
    cu_err err = CU_OK;
    series *s = get_series(f, values, &err);
    if (!s)
        return err;
    /* first bucket whose bound is >= x; nbuckets means +Inf */
    size_t lo = 0, hi = f->nbuckets;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (f->buckets[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    s->bucket[lo]++;
    s->count++;
    s->sum += x;
    return CU_OK;
}

cu_err cu_metric_get(const cu_metric_family *f, const char *const values[], double *out)
{
    if (f->type == CU_METRIC_HISTOGRAM)
        return CU_EINVAL;
    series *s = lookup(f, values, hash_values(values, f->nlabels));
    if (!s)
        return CU_ENOTFOUND;
    *out = s->value;
    return CU_OK;
}

cu_err cu_metric_get_histogram(const cu_metric_family *f, const char *const values[],
                               uint64_t *count, double *sum, uint64_t *bucket_counts)
{
    if (f->type != CU_METRIC_HISTOGRAM)
        return CU_EINVAL;
    series *s = lookup(f, values, hash_values(values, f->nlabels));
    if (!s)
        return CU_ENOTFOUND;
    if (count)
        *count = s->count;
    if (sum)
        *sum = s->sum;
    if (bucket_counts) {
        uint64_t acc = 0;
        for (size_t i = 0; i <= f->nbuckets; i++) {
            acc += s->bucket[i];
            bucket_counts[i] = acc;
        }
    }
    return CU_OK;
}

static void unlink_series(cu_metric_family *f, series **pp)
{
    series *s = *pp;
    *pp = s->next;
    free_series(s);
    f->n--;
    f->m->nseries--;
}

cu_err cu_metric_delete(cu_metric_family *f, const char *const values[])
{
    uint64_t h = hash_values(values, f->nlabels);
    series *s = lookup(f, values, h);
    if (!s)
        return CU_ENOTFOUND;
    for (series **pp = &f->tab[h & (f->cap - 1)]; *pp; pp = &(*pp)->next)
        if (*pp == s) {
            unlink_series(f, pp);
            break;
        }
    return CU_OK;
}

size_t cu_metric_delete_matching(cu_metric_family *f, const char *labelname, const char *value)
{
    size_t li = 0;
    while (li < f->nlabels && strcmp(f->labels[li], labelname) != 0)
        li++;
    if (li == f->nlabels)
        return 0;
    if (!value)
        value = "";
    size_t n = 0;
    for (size_t i = 0; i < f->cap; i++) {
        series **pp = &f->tab[i];
        while (*pp) {
            if (strcmp((*pp)->vals[li], value) == 0) {
                unlink_series(f, pp);
                n++;
            } else {
                pp = &(*pp)->next;
            }
        }
    }
    return n;
}

size_t cu_metrics_delete_label(cu_metrics *m, const char *labelname, const char *value)
{
    size_t n = 0;
    for (size_t i = 0; i < m->n; i++)
        n += cu_metric_delete_matching(m->fams[i], labelname, value);
    return n;
}

void cu_metric_reset_family(cu_metric_family *f) { family_clear(f); }

const char *cu_metric_family_name(const cu_metric_family *f) { return f->name; }
cu_metric_type cu_metric_family_type(const cu_metric_family *f) { return f->type; }
size_t cu_metric_family_nlabels(const cu_metric_family *f) { return f->nlabels; }
size_t cu_metric_family_nseries(const cu_metric_family *f) { return f->n; }

const double *cu_metric_family_buckets(const cu_metric_family *f, size_t *nbuckets)
{
    if (nbuckets)
        *nbuckets = f->nbuckets;
    return f->buckets;
}

/* ---------------- exposition ---------------- */

/* Formats v in the shortest decimal form that strtod reads back to v,
 * the way Prometheus' Go clients do (strconv 'g' with the shortest
 * precision: exponent form when the decimal exponent is < -4 or >= 6, so
 * 10240 -> "10240", 1e6 -> "1e+06", 1e-7 -> "1e-07"); +Inf, -Inf and NaN
 * spelled so. canonical: integral values get
 * ".0" (OpenMetrics' canonical form for le values). */
static void fmt_double(char out[40], double v, int canonical)
{
    if (isnan(v)) {
        strcpy(out, "NaN");
        return;
    }
    if (isinf(v)) {
        strcpy(out, v > 0 ? "+Inf" : "-Inf");
        return;
    }
    char e[40];
    int p = cu_json_shortest_e(v, e); /* digits after the point in the %e form */
    int exp10 = atoi(strchr(e, 'e') + 1);
    if (exp10 < -4 || exp10 >= 6)
        snprintf(out, 40, "%s", e);
    else
        snprintf(out, 40, "%.*f", p - exp10 > 0 ? p - exp10 : 0, v);
    if (canonical && !strpbrk(out, ".e"))
        strcat(out, ".0");
}

/* Appends s with \ " and newline escaped (quote: also escape "). */
static void put_escaped(cu_buf *b, const char *s, int quote)
{
    const char *run = s;
    for (; *s; s++) {
        const char *rep = NULL;
        if (*s == '\\')
            rep = "\\\\";
        else if (*s == '\n')
            rep = "\\n";
        else if (*s == '"' && quote)
            rep = "\\\"";
        if (rep) {
            cu_buf_append(b, run, (size_t)(s - run));
            cu_buf_puts(b, rep);
            run = s + 1;
        }
    }
    cu_buf_append(b, run, (size_t)(s - run));
}

/* Writes {l1="v1",...[,le="B"]} (nothing when there are no labels). */
static void put_labels(cu_buf *b, const cu_metric_family *f, const series *s, const char *le)
{
    if (f->nlabels == 0 && !le)
        return;
    cu_buf_puts(b, "{");
    for (size_t i = 0; i < f->nlabels; i++) {
        if (i)
            cu_buf_puts(b, ",");
        cu_buf_puts(b, f->labels[i]);
        cu_buf_puts(b, "=\"");
        put_escaped(b, s->vals[i], 1);
        cu_buf_puts(b, "\"");
    }
    if (le) {
        if (f->nlabels)
            cu_buf_puts(b, ",");
        cu_buf_puts(b, "le=\"");
        cu_buf_puts(b, le);
        cu_buf_puts(b, "\"");
    }
    cu_buf_puts(b, "}");
}

static int cmp_series(const void *a, const void *b)
{
    const series *x = *(const series *const *)a, *y = *(const series *const *)b;
    for (size_t i = 0; i < x->nl; i++) {
        int c = strcmp(x->vals[i], y->vals[i]);
        if (c)
            return c;
    }
    return 0;
}

static cu_err write_family(const cu_metric_family *f, cu_buf *b, int om)
{
    /* family name as the format wants it */
    int famlen = (int)strlen(f->name);
    const char *tname = type_name(f->type);
    if (f->type == CU_METRIC_INFO && (!om || f->om_plain))
        tname = "gauge";
    if (om) {
        famlen = (int)om_name_len(f->name, f->type, f->om_plain);
        if (f->type == CU_METRIC_COUNTER && f->om_plain)
            tname = "unknown";
    }

    if (om)
        cu_buf_printf(b, "# TYPE %.*s %s\n", famlen, f->name, tname);
    if (f->help[0]) {
        cu_buf_printf(b, "# HELP %.*s ", famlen, f->name);
        put_escaped(b, f->help, om);
        cu_buf_puts(b, "\n");
    }
    if (!om)
        cu_buf_printf(b, "# TYPE %s %s\n", f->name, tname);

    if (f->n == 0)
        return b->failed ? CU_ENOMEM : CU_OK;
    series **v = malloc(f->n * sizeof(*v));
    if (!v)
        return CU_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < f->cap; i++)
        for (series *s = f->tab[i]; s; s = s->next)
            v[k++] = s;
    qsort(v, k, sizeof(*v), cmp_series);

    char num[40];
    for (size_t j = 0; j < k && !b->failed; j++) {
        const series *s = v[j];
        if (f->type != CU_METRIC_HISTOGRAM) {
            cu_buf_puts(b, f->name);
            put_labels(b, f, s, NULL);
            fmt_double(num, s->value, 0);
            cu_buf_printf(b, " %s\n", num);
            continue;
        }
        uint64_t acc = 0;
        for (size_t i = 0; i <= f->nbuckets; i++) {
            acc += s->bucket[i];
            if (i < f->nbuckets)
                fmt_double(num, f->buckets[i], om);
            else
                strcpy(num, "+Inf");
            cu_buf_printf(b, "%s_bucket", f->name);
            put_labels(b, f, s, num);
            cu_buf_printf(b, " %llu\n", (unsigned long long)acc);
        }
        cu_buf_printf(b, "%s_sum", f->name);
        put_labels(b, f, s, NULL);
        fmt_double(num, s->sum, 0);
        cu_buf_printf(b, " %s\n", num);
        cu_buf_printf(b, "%s_count", f->name);
        put_labels(b, f, s, NULL);
        cu_buf_printf(b, " %llu\n", (unsigned long long)s->count);
    }
    free(v);
    return b->failed ? CU_ENOMEM : CU_OK;
}

cu_err cu_metrics_write(const cu_metrics *m, cu_buf *out, int openmetrics)
{
    for (size_t i = 0; i < m->n; i++) {
        cu_err e = write_family(m->fams[i], out, openmetrics);
        if (e != CU_OK)
            return e;
    }
    if (openmetrics)
        cu_buf_puts(out, "# EOF\n");
    return out->failed ? CU_ENOMEM : CU_OK;
}

/* ---------------- Accept negotiation ---------------- */

static int ci_eq(const char *a, size_t an, const char *b)
{
    size_t bn = strlen(b);
    if (an != bn)
        return 0;
    for (size_t i = 0; i < an; i++) {
        char x = a[i], y = b[i];
        if (x >= 'A' && x <= 'Z')
            x = (char)(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z')
            y = (char)(y - 'A' + 'a');
        if (x != y)
            return 0;
    }
    return 1;
}

static void trim(const char **s, const char **e)
{
    while (*s < *e && (**s == ' ' || **s == '\t'))
        (*s)++;
    while (*e > *s && ((*e)[-1] == ' ' || (*e)[-1] == '\t'))
        (*e)--;
}

int cu_metrics_wants_openmetrics(const char *accept)
{
    if (!accept)
        return 0;
    double q_om = 0, q_text = 0;
    const char *p = accept;
    while (*p) {
        const char *end = strchr(p, ',');
        if (!end)
            end = p + strlen(p);
        /* media type up to ';' */
        const char *semi = memchr(p, ';', (size_t)(end - p));
        const char *ts = p, *te = semi ? semi : end;
        trim(&ts, &te);
        double q = 1;
        const char *version = NULL;
        size_t vlen = 0;
        for (const char *a = semi; a && a < end;) {
            const char *ps = a + 1;
            const char *pe = memchr(ps, ';', (size_t)(end - ps));
            const char *next = pe;
            if (!pe)
                pe = end;
            const char *eq = memchr(ps, '=', (size_t)(pe - ps));
            if (eq) {
                const char *ks = ps, *ke = eq, *vs = eq + 1, *ve = pe;
                trim(&ks, &ke);
                trim(&vs, &ve);
                if (ci_eq(ks, (size_t)(ke - ks), "q")) {
                    char tmp[16];
                    size_t n =
                        (size_t)(ve - vs) < sizeof(tmp) - 1 ? (size_t)(ve - vs) : sizeof(tmp) - 1;
                    memcpy(tmp, vs, n);
                    tmp[n] = '\0';
                    char *ep;
                    q = strtod(tmp, &ep);
                    if (ep == tmp || !(q >= 0) || q > 1)
                        q = 0;
                } else if (ci_eq(ks, (size_t)(ke - ks), "version")) {
                    version = vs;
                    vlen = (size_t)(ve - vs);
                }
            }
            a = next;
        }
        size_t tl = (size_t)(te - ts);
        if (ci_eq(ts, tl, "application/openmetrics-text")) {
            int ok = !version || ci_eq(version, vlen, "1.0.0") || ci_eq(version, vlen, "0.0.1");
            if (ok && q > q_om)
                q_om = q;
        } else if (ci_eq(ts, tl, "text/plain") || ci_eq(ts, tl, "*/*") || ci_eq(ts, tl, "text/*")) {
            if (q > q_text)
                q_text = q;
        }
        p = *end ? end + 1 : end;
    }
    return q_om > 0 && q_om >= q_text;
}

const char *cu_metrics_content_type(int openmetrics)
{
    return openmetrics ? CU_METRICS_CONTENT_TYPE_OPENMETRICS : CU_METRICS_CONTENT_TYPE_TEXT;
}
