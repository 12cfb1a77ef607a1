/*
 * cu_config.c - the controller Configuration (config.kueue.x-k8s.io):
 * decoding with Kueue's strictness and defaults, and the queries on it.
 */
#include "cu_decode_int.h"
#include "cu_duration.h"
#include "cu_names.h"
#include "cu_quantity.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A metav1.Duration field (a Go duration string) in milliseconds; returns
 * 1 when present and valid (and not negative). */
static int get_duration(dctx *c, const cu_node *map, const char *key, const char *base,
                        int64_t *out_ms)
{
    const cu_node *n = cu_node_get(map, key);
    char p[PATHMAX];
    if (!n || cu_node_is_null(n))
        return 0;
    cu_dec_path(p, base, "%s", key);
    if (n->type != CU_NODE_SCALAR) {
        cu_dec_err(c, p, "must be a duration string such as \"5m\" or \"168h\"");
        return 0;
    }
    int64_t ms;
    if (cu_duration_parse_ms(n->str, &ms) != CU_OK) {
        cu_dec_err(c, p,
                   "invalid duration \"%s\" (use Go duration syntax such as \"168h\", "
                   "\"1h30m\" or \"300s\")",
                   n->str);
        return 0;
    }
    if (ms < 0) {
        cu_dec_err(c, p, "must not be negative, got \"%s\"", n->str);
        return 0;
    }
    *out_ms = ms;
    return 1;
}

static const char *const fs_strategy_names[] = {
    [CU_FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE] = "LessThanOrEqualToFinalShare",
    [CU_FS_LESS_THAN_INITIAL_SHARE] = "LessThanInitialShare",
};

/* fairSharing.preemptionStrategies: each value known, and the list one of
 * Kueue's allowed combinations. An empty or absent list keeps the
 * default (nstrategies 0). */
static void dec_fs_strategies(dctx *c, const cu_node *fs, cu_config *x)
{
    const char *path = "fairSharing.preemptionStrategies";
    const cu_node *seq = cu_dec_want_seq(c, cu_node_get(fs, "preemptionStrategies"), path);
    if (!seq || seq->n == 0)
        return;
    int vals[8];
    size_t n = 0;
    int bad = 0;
    for (size_t i = 0; i < seq->n; i++) {
        char p[PATHMAX];
        const cu_node *v = seq->vals[i];
        cu_dec_path(p, path, "[%zu]", i);
        if (v->type != CU_NODE_SCALAR || cu_node_is_null(v)) {
            cu_dec_err(c, p, "must be a string");
            bad = 1;
            continue;
        }
        int k = -1;
        for (int s = 0; s < 2; s++)
            if (strcmp(v->str, fs_strategy_names[s]) == 0)
                k = s;
        if (k < 0) {
            cu_dec_err(c, p, "Unsupported value: \"%s\": supported values: \"%s\", \"%s\"", v->str,
                       fs_strategy_names[0], fs_strategy_names[1]);
            bad = 1;
            continue;
        }
        if (n < sizeof(vals) / sizeof(vals[0]))
            vals[n] = k;
        n++;
    }
    if (bad)
        return;
    int ok = (n == 1) || (n == 2 && vals[0] == CU_FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE &&
                          vals[1] == CU_FS_LESS_THAN_INITIAL_SHARE);
    if (!ok) {
        cu_dec_err(c, path, "Invalid value: allowed lists are [%s], [%s] and [%s, %s]",
                   fs_strategy_names[0], fs_strategy_names[1], fs_strategy_names[0],
                   fs_strategy_names[1]);
        return;
    }
    x->nstrategies = n;
    for (size_t i = 0; i < n; i++)
        x->strategies[i] = (cu_fs_strategy)vals[i];
}

/* admissionFairSharing {usageHalfLifeTime, usageSamplingInterval,
 * resourceWeights}. */
static void dec_afs(dctx *c, const cu_node *afs, cu_config *x)
{
    const char *base = "admissionFairSharing";
    x->afs = 1;
    x->afs_sampling_ms = 5 * 60 * 1000;
    get_duration(c, afs, "usageHalfLifeTime", base, &x->afs_half_life_ms);
    int64_t si = 0;
    if (get_duration(c, afs, "usageSamplingInterval", base, &si) && si > 0)
        x->afs_sampling_ms = si; /* 0 keeps the default, as Kueue's defaulting */
    const cu_node *rw = cu_dec_want_map(c, cu_node_get(afs, "resourceWeights"),
                                        "admissionFairSharing.resourceWeights");
    if (!rw || rw->n == 0)
        return;
    x->afs_weights.items = cu_dec_alloc(c, rw->n * sizeof(*x->afs_weights.items));
    if (!x->afs_weights.items)
        return;
    for (size_t i = 0; i < rw->n; i++) {
        char p[PATHMAX];
        int64_t v;
        cu_dec_path(p, "admissionFairSharing.resourceWeights", "%s", rw->keys[i]);
        if (!cu_dec_node_qty(c, rw->vals[i], p, &v))
            continue;
        if (v < 0) {
            cu_dec_err(c, p, "must be greater than or equal to 0");
            continue;
        }
        cu_res *r = &x->afs_weights.items[x->afs_weights.n++];
        r->name = cu_dec_strdup(c, rw->keys[i]);
        r->milli = v;
    }
    if (x->afs_weights.n > 1)
        qsort(x->afs_weights.items, x->afs_weights.n, sizeof(cu_res), cu_res_cmp);
}

/* ---- the rest of the controller Configuration ---- */

/* Warns "KIND WHO: path: what[: note]" (WHO when the object has one). */
static void warn_field(dctx *c, const char *path, const char *what, const char *note)
{
    const char *sep = note && *note ? ": " : "";
    if (c->who[0])
        cu_diag_warn(c->d, "%s %s: %s: %s%s%s", c->kind, c->who, path, what, sep,
                     sep[0] ? note : "");
    else
        cu_diag_warn(c->d, "%s: %s: %s%s%s", c->kind, path, what, sep, sep[0] ? note : "");
}

/* Warns about keys of map that are not in known (NULL-terminated): Kueue
 * reads its file strictly, so a misspelt field must not pass silently. */
static void warn_unknown(dctx *c, const cu_node *map, const char *base, const char *const *known)
{
    if (!map || map->type != CU_NODE_MAP)
        return;
    for (size_t i = 0; i < map->n; i++) {
        size_t k = 0;
        while (known[k] && strcmp(known[k], map->keys[i]) != 0)
            k++;
        if (known[k])
            continue;
        char p[PATHMAX];
        warn_field(c, cu_dec_path(p, base, "%s", map->keys[i]), "unknown field, ignored", NULL);
    }
}

/* A field Kueue has and Cueue does not act on, with what to tell the user
 * (NULL: nothing more). A list that Cueue still checks (decoded) is
 * marked seq: if it is not one, its error says so and it is not warned. */
typedef struct ignored_field {
    const char *name, *note;
    int seq;
} ignored_field;

/* Warns about each field of map in ignored (ended by a NULL name) that is
 * set: present and not null, "", {} or []. Cueue accepts Kueue's file, but
 * a setting it does not act on must not pass silently. */
static void warn_ignored(dctx *c, const cu_node *map, const char *base,
                         const ignored_field *ignored)
{
    if (!map || map->type != CU_NODE_MAP)
        return;
    for (size_t k = 0; ignored[k].name; k++) {
        const cu_node *n = cu_node_get(map, ignored[k].name);
        if (!n || cu_node_is_null(n) || (n->type == CU_NODE_SCALAR && !n->str[0]) ||
            (n->type != CU_NODE_SCALAR && n->n == 0) || (ignored[k].seq && n->type != CU_NODE_SEQ))
            continue;
        char p[PATHMAX];
        warn_field(c, cu_dec_path(p, base, "%s", ignored[k].name),
                   "not implemented by Cueue, ignored", ignored[k].note);
    }
}

/* A float field (a plain number); returns 1 when present and valid. */
static int get_float(dctx *c, const cu_node *map, const char *key, const char *base, double *out)
{
    const cu_node *n = cu_node_get(map, key);
    char p[PATHMAX];
    if (!n || cu_node_is_null(n))
        return 0;
    cu_dec_path(p, base, "%s", key);
    char *end = NULL;
    double v = 0;
    if (n->type == CU_NODE_SCALAR && n->plain && n->str[0]) {
        errno = 0;
        v = strtod(n->str, &end);
    }
    if (!end || *end || errno == ERANGE || !isfinite(v)) {
        if (n->type == CU_NODE_SCALAR)
            cu_dec_err(c, p, "must be a number, got \"%s\"", n->str);
        else
            cu_dec_err(c, p, "must be a number");
        return 0;
    }
    *out = v;
    return 1;
}

/* RFC 1123 label: what a namespace name must be. */
static int dns_label_ok(const char *s)
{
    size_t n = strlen(s);
    return n <= 63 && cu_dns1123_label_ok(s, n);
}

/* "HOST:PORT" as Go's net.Listen takes it (HOST may be empty, a name, an
 * IPv4 address or a bracketed IPv6 one), or "0". */
static int bind_addr_ok(const char *s)
{
    if (strcmp(s, "0") == 0)
        return 1;
    const char *colon = strrchr(s, ':');
    if (!colon || !colon[1])
        return 0;
    long port = 0;
    for (const char *q = colon + 1; *q; q++) {
        if (*q < '0' || *q > '9')
            return 0;
        port = port * 10 + (*q - '0');
        if (port > 65535)
            return 0;
    }
    size_t hl = (size_t)(colon - s);
    if (hl > 0 && s[0] == '[')
        return hl >= 2 && s[hl - 1] == ']';
    return memchr(s, ':', hl) == NULL; /* a bare IPv6 host needs brackets */
}

static void get_bind_addr(dctx *c, const cu_node *map, const char *key, const char *base,
                          const char **out, int *has)
{
    char p[PATHMAX];
    const char *v = cu_dec_str(c, map, key, base);
    if (!v || !*v)
        return; /* "" means the default, as in Kueue */
    if (!bind_addr_ok(v)) {
        cu_dec_err(c, cu_dec_path(p, base, "%s", key),
                   "must be HOST:PORT such as \":8443\", or \"0\" to disable, got \"%s\"", v);
        return;
    }
    *out = v;
    *has = 1;
}

/* A Go duration where 0 means "the default"; returns 1 when set (> 0). */
static int get_duration_nz(dctx *c, const cu_node *map, const char *key, const char *base,
                           int64_t *out_ms)
{
    int64_t v = 0;
    if (!get_duration(c, map, key, base, &v) || v == 0)
        return 0;
    *out_ms = v;
    return 1;
}

/* Formats ms as a short Go-style duration ("1h30m", "2.5s", "0s"). */
static const char *fmt_ms(char *buf, size_t n, int64_t ms)
{
    int64_t h = ms / 3600000, m = ms / 60000 % 60, s = ms / 1000 % 60, r = ms % 1000;
    size_t len = 0;
    buf[0] = '\0';
    if (h)
        len += (size_t)snprintf(buf + len, n - len, "%lldh", (long long)h);
    if (m && len < n)
        len += (size_t)snprintf(buf + len, n - len, "%lldm", (long long)m);
    if ((s || r || len == 0) && len < n) {
        if (r)
            snprintf(buf + len, n - len, "%lld.%03llds", (long long)s, (long long)r);
        else
            snprintf(buf + len, n - len, "%llds", (long long)s);
    }
    return buf;
}

/* The managed-jobs selector default: kubernetes.io/metadata.name NotIn
 * [kube-system, ns]. */
static cu_err default_ns_selector(cu_arena *a, const char *ns, cu_labelsel *out)
{
    memset(out, 0, sizeof(*out));
    cu_selreq *r = cu_arena_alloc(a, sizeof(*r));
    const char **vals = cu_arena_alloc(a, 2 * sizeof(*vals));
    if (!r || !vals)
        return CU_ENOMEM;
    vals[0] = "kube-system";
    vals[1] = ns;
    r->key = "kubernetes.io/metadata.name";
    r->op = CU_SEL_NOTIN;
    r->values.n = strcmp(ns, "kube-system") == 0 ? 1 : 2;
    r->values.items = vals;
    out->nexpr = 1;
    out->exprs = r;
    return CU_OK;
}

static const char *const kueue_frameworks[] = {
    "batch/job",
    "kubeflow.org/mpijob",
    "kubeflow.org/pytorchjob",
    "kubeflow.org/tfjob",
    "kubeflow.org/xgboostjob",
    "kubeflow.org/paddlejob",
    "kubeflow.org/jaxjob",
    "trainer.kubeflow.org/trainjob",
    "ray.io/rayjob",
    "ray.io/raycluster",
    "ray.io/rayservice",
    "jobset.x-k8s.io/jobset",
    "workload.codeflare.dev/appwrapper",
    "sparkoperator.k8s.io/sparkapplication",
    "pod",
    "deployment",
    "statefulset",
    "leaderworkerset.x-k8s.io/leaderworkerset",
    NULL,
};

static const char *const default_frameworks[] = { "batch/job" };

/* the frameworks Cueue integrates (controller/jobs/) */
static const char *const integrated_frameworks[] = {
    "batch/job", "jobset.x-k8s.io/jobset", "leaderworkerset.x-k8s.io/leaderworkerset", "pod", NULL,
};

/* Everything but the fair-sharing parts and the selector (which depends
 * on the namespace). */
static void config_defaults(cu_config *x, int v1beta1)
{
    x->v1beta1 = v1beta1;
    x->ns = CU_CONFIG_DEFAULT_NAMESPACE;
    x->pods_ready.timeout_ms = (v1beta1 ? 5 : 30) * 60 * 1000;
    x->pods_ready.recovery_enabled = 1;
    x->pods_ready.recovery_timeout_ms = x->pods_ready.timeout_ms;
    x->pods_ready.requeue_timestamp = CU_REQUEUE_EVICTION;
    x->pods_ready.backoff_limit_count = -1;
    x->pods_ready.backoff_base_s = 60;
    x->pods_ready.backoff_max_s = 3600;
    x->frameworks.n = 1;
    /* read-only: cu_strs is not const-qualified, nothing writes through it */
    x->frameworks.items = (const char **)default_frameworks;
    x->client.qps = CU_CONFIG_DEFAULT_QPS;
    x->client.burst = CU_CONFIG_DEFAULT_BURST;
    x->leader_election.leader_elect = 1;
    x->leader_election.resource_name = CU_CONFIG_DEFAULT_LEASE_NAME;
    x->leader_election.lease_duration_ms = 15000;
    x->leader_election.renew_deadline_ms = 10000;
    x->leader_election.retry_period_ms = 2000;
    x->metrics_bind_address = CU_CONFIG_DEFAULT_METRICS_ADDR;
    x->health_bind_address = CU_CONFIG_DEFAULT_HEALTH_ADDR;
    x->webhook.port = 9443;
    x->webhook.host = "";
    x->webhook.cert_dir = "/tmp/k8s-webhook-server/serving-certs";
    x->cert_mgmt.enable = 1;
    x->cert_mgmt.service_name = "kueue-webhook-service";
    x->cert_mgmt.secret_name = "kueue-webhook-server-cert";
}

cu_err cu_config_init_defaults(cu_config *x, cu_arena *a)
{
    memset(x, 0, sizeof(*x));
    config_defaults(x, 0);
    x->leader_election.resource_namespace = x->ns;
    return default_ns_selector(a, x->ns, &x->managed_ns_selector);
}

int cu_config_framework_enabled(const cu_config *cfg, const char *name)
{
    if (!name)
        return 0;
    if (!cfg)
        return strcmp(name, default_frameworks[0]) == 0;
    return cu_strs_has(&cfg->frameworks, name);
}

int cu_config_manages_unlabelled(const cu_config *cfg, const cu_kvs *ns_labels)
{
    return cfg && cfg->manage_jobs_without_queue_name &&
           cu_labelsel_matches(&cfg->managed_ns_selector, ns_labels);
}

static void dec_pods_ready(dctx *c, const cu_node *root, cu_config *x)
{
    static const char *const known[] = {
        "enable", "timeout", "blockAdmission", "requeuingStrategy", "recoveryTimeout", NULL,
    };
    static const char *const known_rs[] = {
        "timestamp", "backoffLimitCount", "backoffBaseSeconds", "backoffMaxSeconds", NULL,
    };
    static const char *const ts_names[] = {
        [CU_REQUEUE_EVICTION] = "Eviction",
        [CU_REQUEUE_CREATION] = "Creation",
    };
    const char *base = "waitForPodsReady";
    const cu_node *w = cu_dec_want_map(c, cu_node_get(root, base), base);
    if (!w)
        return;
    warn_unknown(c, w, base, known);
    x->pods_ready.present = 1;
    if (c->v1beta1) {
        cu_dec_bool(c, w, "enable", base, &x->pods_ready.enabled);
        x->pods_ready.block_admission = x->pods_ready.enabled;
    } else {
        x->pods_ready.enabled = 1;
        if (cu_node_get(w, "enable"))
            cu_dec_err(c, "waitForPodsReady.enable",
                       "not a v1beta2 field: the waitForPodsReady "
                       "block's presence enables it (remove the block to disable it)");
    }
    get_duration_nz(c, w, "timeout", base, &x->pods_ready.timeout_ms);
    cu_dec_bool(c, w, "blockAdmission", base, &x->pods_ready.block_admission);
    int64_t rt = 0;
    if (get_duration(c, w, "recoveryTimeout", base, &rt)) {
        x->pods_ready.recovery_enabled = rt > 0;
        x->pods_ready.recovery_timeout_ms = rt;
    } else {
        x->pods_ready.recovery_timeout_ms = x->pods_ready.timeout_ms;
    }

    const char *rbase = "waitForPodsReady.requeuingStrategy";
    const cu_node *rs = cu_dec_want_map(c, cu_node_get(w, "requeuingStrategy"), rbase);
    if (!rs)
        return;
    warn_unknown(c, rs, rbase, known_rs);
    int ts;
    cu_dec_enum(c, rs, "timestamp", rbase, ts_names, 2, CU_REQUEUE_EVICTION, &ts);
    x->pods_ready.requeue_timestamp = (cu_requeue_ts)ts;
    int32_t v;
    char p[PATHMAX];
    if (cu_dec_i32(c, rs, "backoffLimitCount", rbase, &v)) {
        if (v < 0)
            cu_dec_err(
                c, cu_dec_path(p, rbase, "backoffLimitCount"),
                "must be greater than or equal to 0 (leave it out to requeue forever), got %d",
                (int)v);
        else
            x->pods_ready.backoff_limit_count = v;
    }
    int base_ok = 1, max_ok = 1;
    if (cu_dec_i32(c, rs, "backoffBaseSeconds", rbase, &v)) {
        if (v < 0) {
            cu_dec_err(c, cu_dec_path(p, rbase, "backoffBaseSeconds"),
                       "must be greater than or equal to 0, got %d", (int)v);
            base_ok = 0;
        } else {
            x->pods_ready.backoff_base_s = v;
        }
    } else if (cu_node_get(rs, "backoffBaseSeconds") &&
               !cu_node_is_null(cu_node_get(rs, "backoffBaseSeconds"))) {
        base_ok = 0;
    }
    if (cu_dec_i32(c, rs, "backoffMaxSeconds", rbase, &v)) {
        if (v < 0) {
            cu_dec_err(c, cu_dec_path(p, rbase, "backoffMaxSeconds"),
                       "must be greater than or equal to 0, got %d", (int)v);
            max_ok = 0;
        } else {
            x->pods_ready.backoff_max_s = v;
        }
    } else if (cu_node_get(rs, "backoffMaxSeconds") &&
               !cu_node_is_null(cu_node_get(rs, "backoffMaxSeconds"))) {
        max_ok = 0;
    }
    if (base_ok && max_ok && x->pods_ready.backoff_max_s < x->pods_ready.backoff_base_s)
        cu_dec_err(c, cu_dec_path(p, rbase, "backoffMaxSeconds"),
                   "must be greater than or equal to backoffBaseSeconds (%d), got %d",
                   (int)x->pods_ready.backoff_base_s, (int)x->pods_ready.backoff_max_s);
}

/* A list of framework names: duplicates are errors; names Cueue does not
 * integrate (and names Kueue does not know) are recorded for a warning. */
static void dec_frameworks(dctx *c, const cu_node *integ, cu_config *x)
{
    const char *path = "integrations.frameworks";
    cu_strs fw = { 0, NULL };
    cu_dec_strs(c, integ, "frameworks", "integrations", &fw);
    if (fw.n == 0)
        return; /* default ["batch/job"] */
    const char **uns = cu_dec_alloc(c, fw.n * sizeof(*uns));
    const char **unk = cu_dec_alloc(c, fw.n * sizeof(*unk));
    if (!uns || !unk)
        return;
    for (size_t i = 0; i < fw.n; i++) {
        int dup = 0;
        for (size_t j = 0; j < i; j++)
            dup |= strcmp(fw.items[i], fw.items[j]) == 0;
        if (dup) {
            char p[PATHMAX];
            cu_dec_err(c, cu_dec_path(p, path, "[%zu]", i), "Duplicate value: \"%s\"", fw.items[i]);
            continue;
        }
        size_t k = 0;
        while (integrated_frameworks[k] && strcmp(integrated_frameworks[k], fw.items[i]) != 0)
            k++;
        if (integrated_frameworks[k])
            continue;
        uns[x->unsupported_frameworks.n++] = fw.items[i];
        k = 0;
        while (kueue_frameworks[k] && strcmp(kueue_frameworks[k], fw.items[i]) != 0)
            k++;
        if (!kueue_frameworks[k])
            unk[x->unknown_frameworks.n++] = fw.items[i];
    }
    x->frameworks = fw;
    x->unsupported_frameworks.items = uns;
    x->unknown_frameworks.items = unk;
}

/* managedJobsNamespaceSelector: a metav1.LabelSelector checked as the API
 * server checks one, that must not select kube-system nor Kueue's own
 * namespace (Kueue's rule). */
static void dec_managed_ns_selector(dctx *c, const cu_node *root, cu_config *x)
{
    const char *path = "managedJobsNamespaceSelector";
    cu_labelsel sel;
    int nerr = c->nerr;
    cu_dec_labelsel(c, root, path, "", &sel);
    if (sel.is_null) {
        if (default_ns_selector(c->a, x->ns, &x->managed_ns_selector) != CU_OK)
            c->oom = 1;
        return;
    }
    for (size_t i = 0; i < sel.nexpr; i++) {
        const cu_selreq *r = &sel.exprs[i];
        char p[PATHMAX];
        cu_dec_path(p, path, "matchExpressions[%zu].values", i);
        if ((r->op == CU_SEL_IN || r->op == CU_SEL_NOTIN) && r->values.n == 0)
            cu_dec_err(c, p,
                       "Required value: must be specified when `operator` is 'In' or 'NotIn'");
        if ((r->op == CU_SEL_EXISTS || r->op == CU_SEL_DOESNOTEXIST) && r->values.n > 0)
            cu_dec_err(c, p,
                       "Forbidden: may not be specified when `operator` is 'Exists' or "
                       "'DoesNotExist'");
    }
    x->managed_ns_selector = sel;
    x->has_managed_ns_selector = 1;
    if (c->nerr != nerr)
        return;
    const char *prohibited[2] = { "kube-system", x->ns };
    for (size_t i = 0; i < 2; i++) {
        if (i == 1 && strcmp(x->ns, "kube-system") == 0)
            break;
        cu_kv kv = { "kubernetes.io/metadata.name", prohibited[i] };
        cu_kvs labels = { 1, &kv };
        if (cu_labelsel_matches(&sel, &labels))
            cu_dec_err(c, path, "Invalid value: should not match the \"%s\" namespace",
                       prohibited[i]);
    }
}

static void dec_client_connection(dctx *c, const cu_node *root, cu_config *x)
{
    static const char *const known[] = { "qps", "burst", NULL };
    const char *base = "clientConnection";
    const cu_node *cc = cu_dec_want_map(c, cu_node_get(root, base), base);
    if (!cc)
        return;
    warn_unknown(c, cc, base, known);
    x->client.has_qps = get_float(c, cc, "qps", base, &x->client.qps);
    x->client.has_burst = cu_dec_i32(c, cc, "burst", base, &x->client.burst);
    if (x->client.has_qps && x->client.has_burst && x->client.qps > 0 && x->client.burst < 1)
        cu_dec_err(c, "clientConnection.burst", "must be at least 1 when qps is positive, got %d",
                   (int)x->client.burst);
}

/* webhook {port, host, certDir} and internalCertManagement {enable,
 * webhookServiceName, webhookSecretName}. */
static void dec_webhook(dctx *c, const cu_node *root, cu_config *x)
{
    static const char *const known_wh[] = { "port", "host", "certDir", NULL };
    static const char *const known_icm[] = { "enable", "webhookServiceName", "webhookSecretName",
                                             NULL };
    const cu_node *wh = cu_dec_want_map(c, cu_node_get(root, "webhook"), "webhook");
    warn_unknown(c, wh, "webhook", known_wh);
    int32_t port = 0;
    if (wh && cu_dec_i32(c, wh, "port", "webhook", &port) && port != 0) {
        if (port < 1 || port > 65535)
            cu_dec_err(c, "webhook.port", "must be between 1 and 65535, inclusive, got %d",
                       (int)port);
        else {
            x->webhook.port = port;
            x->webhook.has_port = 1;
        }
    }
    const char *v = wh ? cu_dec_str(c, wh, "host", "webhook") : NULL;
    if (v)
        x->webhook.host = v;
    v = wh ? cu_dec_str(c, wh, "certDir", "webhook") : NULL;
    if (v && *v) {
        x->webhook.cert_dir = v;
        x->webhook.has_cert_dir = 1;
    }
    const cu_node *icm =
        cu_dec_want_map(c, cu_node_get(root, "internalCertManagement"), "internalCertManagement");
    warn_unknown(c, icm, "internalCertManagement", known_icm);
    if (!icm)
        return;
    cu_dec_bool(c, icm, "enable", "internalCertManagement", &x->cert_mgmt.enable);
    char p[PATHMAX];
    v = cu_dec_str(c, icm, "webhookServiceName", "internalCertManagement");
    if (v && *v) {
        if (dns_label_ok(v))
            x->cert_mgmt.service_name = v;
        else
            cu_dec_err(c, cu_dec_path(p, "internalCertManagement", "webhookServiceName"),
                       "must be a valid Service name (RFC 1123 label), got \"%s\"", v);
    }
    v = cu_dec_str(c, icm, "webhookSecretName", "internalCertManagement");
    if (v && *v) {
        if (cu_dns1123_subdomain_ok(v, strlen(v), 0))
            x->cert_mgmt.secret_name = v;
        else
            cu_dec_err(c, cu_dec_path(p, "internalCertManagement", "webhookSecretName"),
                       "must be a valid Secret name (RFC 1123 subdomain), got \"%s\"", v);
    }
}

static void dec_leader_election(dctx *c, const cu_node *root, cu_config *x)
{
    static const char *const known[] = {
        "leaderElect",  "leaseDuration", "renewDeadline",     "retryPeriod",
        "resourceLock", "resourceName",  "resourceNamespace", NULL,
    };
    static const char *const locks[] = { "leases" };
    const char *base = "leaderElection";
    const cu_node *le = cu_dec_want_map(c, cu_node_get(root, base), base);
    x->leader_election.resource_namespace = x->ns;
    if (!le)
        return;
    warn_unknown(c, le, base, known);
    int v = -1;
    cu_dec_bool(c, le, "leaderElect", base, &v);
    if (v >= 0) {
        x->leader_election.has_leader_elect = 1;
        x->leader_election.leader_elect = v;
    }
    const char *s = cu_dec_str(c, le, "resourceName", base);
    if (s && *s)
        x->leader_election.resource_name = s;
    s = cu_dec_str(c, le, "resourceNamespace", base);
    if (s && *s) {
        if (!dns_label_ok(s))
            cu_dec_err(c, "leaderElection.resourceNamespace",
                       "must be a valid namespace name (RFC 1123 label), got \"%s\"", s);
        x->leader_election.resource_namespace = s;
    }
    int lk;
    cu_dec_enum(c, le, "resourceLock", base, locks, 1, 0, &lk);

    int nerr = c->nerr;
    x->leader_election.has_lease_duration =
        get_duration_nz(c, le, "leaseDuration", base, &x->leader_election.lease_duration_ms);
    x->leader_election.has_renew_deadline =
        get_duration_nz(c, le, "renewDeadline", base, &x->leader_election.renew_deadline_ms);
    x->leader_election.has_retry_period =
        get_duration_nz(c, le, "retryPeriod", base, &x->leader_election.retry_period_ms);
    if (c->nerr != nerr)
        return;
    int64_t lease = x->leader_election.lease_duration_ms;
    int64_t renew = x->leader_election.renew_deadline_ms;
    int64_t retry = x->leader_election.retry_period_ms;
    char a[32], b[32];
    if (renew >= lease)
        cu_dec_err(c, "leaderElection.renewDeadline",
                   "must be less than leaseDuration (%s), got %s", fmt_ms(a, sizeof a, lease),
                   fmt_ms(b, sizeof b, renew));
    /* client-go: renewDeadline > JitterFactor (1.2) * retryPeriod */
    if (renew * 10 <= retry * 12)
        cu_dec_err(c, "leaderElection.retryPeriod",
                   "must be less than renewDeadline (%s) / 1.2, as client-go requires, got %s",
                   fmt_ms(a, sizeof a, renew), fmt_ms(b, sizeof b, retry));
}

/* resources.transformations: Kueue's validation (strategy Retain or
 * Replace, default Retain; no input twice) and quantities that parse; an
 * output below zero is refused too (Kueue takes it, and it would hand
 * quota back). */
static void dec_transformations(dctx *c, const cu_node *res, cu_config *x)
{
    static const char *const known[] = { "input", "strategy", "multiplyBy", "outputs", NULL };
    static const char *const strategies[] = {
        [CU_XFORM_RETAIN] = "Retain",
        [CU_XFORM_REPLACE] = "Replace",
    };
    const char *path = "resources.transformations";
    const cu_node *seq = cu_dec_want_seq(c, cu_node_get(res, "transformations"), path);
    if (!seq || seq->n == 0)
        return;
    x->xforms = cu_dec_alloc(c, seq->n * sizeof(*x->xforms));
    if (!x->xforms)
        return;
    for (size_t i = 0; i < seq->n; i++) {
        char p[PATHMAX], q[PATHMAX];
        cu_dec_path(p, path, "[%zu]", i);
        const cu_node *t = cu_dec_want_map(c, seq->vals[i], p);
        if (!t)
            continue;
        warn_unknown(c, t, p, known);
        cu_xform *xf = &x->xforms[x->nxforms];
        memset(xf, 0, sizeof(*xf));
        int nerr = c->nerr;
        xf->input = cu_dec_str(c, t, "input", p);
        if (!xf->input || !*xf->input) {
            cu_dec_err(c, cu_dec_path(q, p, "input"), "Required value");
            continue;
        }
        for (size_t j = 0; j < x->nxforms; j++)
            if (strcmp(x->xforms[j].input, xf->input) == 0)
                cu_dec_err(c, cu_dec_path(q, p, "input"), "Duplicate value: \"%s\"", xf->input);
        int st;
        cu_dec_enum(c, t, "strategy", p, strategies, 2, CU_XFORM_RETAIN, &st);
        xf->strategy = (cu_xform_strategy)st;
        const char *mb = cu_dec_str(c, t, "multiplyBy", p);
        xf->multiply_by = mb && *mb ? mb : NULL;
        cu_dec_milli_list(c, t, "outputs", p, &xf->outputs);
        for (size_t k = 0; k < xf->outputs.n; k++)
            if (xf->outputs.items[k].milli < 0) {
                char v[32];
                cu_dec_err(
                    c, cu_dec_path(q, p, "outputs.%s", xf->outputs.items[k].name),
                    "must be greater than or equal to 0, got %s",
                    cu_qty_format(xf->outputs.items[k].milli, CU_QFMT_DECIMAL_SI, v, sizeof v));
            }
        if (c->nerr == nerr)
            x->nxforms++;
    }
}

/* The controller's fields of a Configuration (after fair sharing). */
static void dec_config_controller(dctx *c, const cu_node *root, cu_config *x)
{
    static const char *const known[] = {
        "apiVersion",
        "kind",
        "metadata",
        "namespace",
        "manageJobsWithoutQueueName",
        "managedJobsNamespaceSelector",
        "internalCertManagement",
        "waitForPodsReady",
        "clientConnection",
        "integrations",
        "multiKueue",
        "fairSharing",
        "admissionFairSharing",
        "resources",
        "featureGates",
        "objectRetentionPolicies",
        "webhook",
        "leaderElection",
        "metrics",
        "health",
        "pprofBindAddress",
        "controller",
        "tls",
        "visibilityServer",
        "queueVisibility",
        NULL,
    };
    static const char *const known_integ[] = {
        "frameworks", "externalFrameworks", "labelKeysToCopy", "podOptions", NULL,
    };
    static const char *const known_res[] = {
        "excludeResourcePrefixes",
        "transformations",
        "quotaCheckStrategy",
        "deviceClassMappings",
        NULL,
    };
    static const char *const known_metrics[] = {
        "bindAddress", "enableClusterQueueResources", "customLabels", "localQueueMetrics", NULL,
    };
    static const char *const known_health[] = {
        "healthProbeBindAddress",
        "readinessEndpointName",
        "livenessEndpointName",
        NULL,
    };
    static const ignored_field ignored[] = {
        { "multiKueue", NULL, 0 },
        { "featureGates", NULL, 0 },
        { "objectRetentionPolicies", NULL, 0 },
        { "pprofBindAddress", NULL, 0 },
        { "controller", NULL, 0 },
        { "tls", NULL, 0 },
        { "visibilityServer", NULL, 0 },
        { "queueVisibility", NULL, 0 },
        { NULL, NULL, 0 },
    };
    static const ignored_field ignored_integ[] = {
        { "externalFrameworks", "only batch/job is integrated", 0 },
        { "labelKeysToCopy", "no labels are copied to Workloads", 1 },
        { "podOptions", NULL, 0 },
        { NULL, NULL, 0 },
    };
    static const ignored_field ignored_res[] = {
        { "quotaCheckStrategy", NULL, 0 },
        { "deviceClassMappings", "Cueue counts no DRA devices", 0 },
        { NULL, NULL, 0 },
    };
    static const ignored_field ignored_metrics[] = {
        { "enableClusterQueueResources", "the ClusterQueue resource metrics are always exported",
          0 },
        { "customLabels", NULL, 0 },
        { "localQueueMetrics", NULL, 0 },
        { NULL, NULL, 0 },
    };
    static const ignored_field ignored_health[] = {
        { "readinessEndpointName", "the paths are /readyz and /healthz", 0 },
        { "livenessEndpointName", "the paths are /readyz and /healthz", 0 },
        { NULL, NULL, 0 },
    };
    config_defaults(x, c->v1beta1);
    warn_unknown(c, root, "", known);
    warn_ignored(c, root, "", ignored);

    const char *ns = cu_dec_str(c, root, "namespace", "");
    if (ns) {
        if (dns_label_ok(ns)) {
            x->ns = ns;
            x->has_ns = 1;
        } else
            cu_dec_err(c, "namespace",
                       "must be a valid namespace name (RFC 1123 label), got \"%s\"", ns);
    }
    dec_managed_ns_selector(c, root, x);
    dec_pods_ready(c, root, x);

    const cu_node *integ = cu_dec_want_map(c, cu_node_get(root, "integrations"), "integrations");
    warn_unknown(c, integ, "integrations", known_integ);
    warn_ignored(c, integ, "integrations", ignored_integ);
    dec_frameworks(c, integ, x);
    cu_dec_strs(c, integ, "labelKeysToCopy", "integrations", &x->label_keys_to_copy);

    const cu_node *res = cu_dec_want_map(c, cu_node_get(root, "resources"), "resources");
    warn_unknown(c, res, "resources", known_res);
    warn_ignored(c, res, "resources", ignored_res);
    cu_dec_strs(c, res, "excludeResourcePrefixes", "resources", &x->exclude_resource_prefixes);
    dec_transformations(c, res, x);

    dec_client_connection(c, root, x);
    dec_leader_election(c, root, x);
    dec_webhook(c, root, x);

    const cu_node *m = cu_dec_want_map(c, cu_node_get(root, "metrics"), "metrics");
    warn_unknown(c, m, "metrics", known_metrics);
    warn_ignored(c, m, "metrics", ignored_metrics);
    get_bind_addr(c, m, "bindAddress", "metrics", &x->metrics_bind_address,
                  &x->has_metrics_bind_address);
    const cu_node *h = cu_dec_want_map(c, cu_node_get(root, "health"), "health");
    warn_unknown(c, h, "health", known_health);
    warn_ignored(c, h, "health", ignored_health);
    get_bind_addr(c, h, "healthProbeBindAddress", "health", &x->health_bind_address,
                  &x->has_health_bind_address);
}

/* The controller Configuration. It usually has no metadata.name, so
 * messages name the file it came from. */
void cu_dec_config(dctx *c, const cu_node *root, cu_config *x)
{
    if (c->who[0]) {
        char tmp[sizeof(c->who)];
        snprintf(tmp, sizeof(tmp), "%s", c->who);
        snprintf(c->who, sizeof(c->who), "%.200s (%.390s)", tmp, c->file ? c->file : "<input>");
    } else {
        snprintf(c->who, sizeof(c->who), "%.590s", c->file ? c->file : "<input>");
    }
    static const char *const known_fs[] = { "enable", "preemptionStrategies", NULL };
    static const char *const known_afs[] = {
        "usageHalfLifeTime",
        "usageSamplingInterval",
        "resourceWeights",
        NULL,
    };
    const cu_node *fs = cu_dec_want_map(c, cu_node_get(root, "fairSharing"), "fairSharing");
    if (fs) {
        /* "enable" is v1beta1's only: in v1beta2 the block's presence is */
        warn_unknown(c, fs, "fairSharing", c->v1beta1 ? known_fs : known_fs + 1);
        if (c->v1beta1)
            cu_dec_bool(c, fs, "enable", "fairSharing", &x->fair_sharing);
        else
            x->fair_sharing = 1; /* v1beta2: the block's presence enables it */
        dec_fs_strategies(c, fs, x);
    }
    const cu_node *afs =
        cu_dec_want_map(c, cu_node_get(root, "admissionFairSharing"), "admissionFairSharing");
    if (afs) {
        warn_unknown(c, afs, "admissionFairSharing", known_afs);
        dec_afs(c, afs, x);
    }
    cu_dec_bool(c, root, "manageJobsWithoutQueueName", "", &x->manage_jobs_without_queue_name);
    dec_config_controller(c, root, x);
}
