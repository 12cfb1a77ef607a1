/*
 * cu_webhook.c - Kueue's admission webhooks (v0.17.0) for the kinds Cueue
 * integrates, as pure functions over the AdmissionReview's objects.
 *
 * Kueue's webhooks answer through controller-runtime: a validator's
 * field.ErrorList becomes one denial (HTTP 403, reason Forbidden) whose
 * message is the list's aggregate: each error "path: Type: value: detail",
 * repeats dropped, several errors as "[e1, e2]". The same form here
 * (errs_deny). A value that is not a string or number is rendered as the
 * compact JSON of the object as received (Kueue marshals its Go struct, so
 * the keys' order may differ).
 *
 * Where the rules live:
 *  - ClusterQueue, Cohort, ResourceFlavor and Workload objects are decoded
 *    by api/'s decoders and checked by cu_object_validate (api/cu_validate.c),
 *    the rules `cueue simulate` and the controller use; its messages
 *    "Kind name: path: problem" lose their "Kind name: " prefix here.
 *  - The rules that compare a Workload with its previous version (pod sets
 *    frozen while quota is reserved, the admission frozen, pod set updates
 *    of a Ready check, reclaimable pods, clusterName) and the Workload rules
 *    on fields the decoders do not keep (the reclaimable pods, the pod set
 *    updates' names) compare JSON, here. The reserved "pods" request is the
 *    decoder's (api/cu_podreq.c), in Kueue's words.
 *  - batch/v1 Job defaulting (suspend, the default LocalQueue) and
 *    validation (jobframework's label rules, the Job's annotations) are
 *    here: the decoders turn a Job into a Workload and keep none of this.
 *
 * Feature gates at Kueue v0.17.0's defaults: PartialAdmission on (so the
 * Workload defaulter keeps minCount: a no-op), TopologyAwareScheduling on
 * (the admission's topology fields may change), LocalQueueDefaulting GA,
 * ElasticJobsViaWorkloadSlices, AdmissionGatedBy and PriorityBoost off.
 * Not done: the TAS annotations of the Job's pod template and MultiKueue's
 * managedBy defaulting (Cueue has neither).
 */
#include "cu_webhook.h"

#include "cu_json.h"
#include "cu_names.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LBL_PREBUILT "kueue.x-k8s.io/prebuilt-workload-name"
#define LBL_MAX_EXEC "kueue.x-k8s.io/max-exec-time-seconds"
#define ANN_SYNC_COMPLETIONS "kueue.x-k8s.io/job-completions-equal-parallelism"
#define MSG_IMMUTABLE "field is immutable"

void cu_wh_resp_init(cu_wh_resp *r)
{
    memset(r, 0, sizeof(*r));
    r->allowed = 1;
    cu_buf_init(&r->message, 64 * 1024);
    cu_diag_init(&r->warnings);
}

void cu_wh_resp_free(cu_wh_resp *r)
{
    cu_buf_free(&r->message);
    cu_diag_free(&r->warnings);
}

void cu_wh_deny(cu_wh_resp *r, const char *fmt, ...)
{
    va_list ap;
    r->allowed = 0;
    r->code = 403;
    r->reason = "Forbidden";
    va_start(ap, fmt);
    cu_buf_vprintf(&r->message, fmt, ap);
    va_end(ap);
}

/* ---------------- the error list ---------------- */

/* Adds one field error "path: body". */
static void ferr(cu_diag *e, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void ferr(cu_diag *e, const char *path, const char *fmt, ...)
{
    char body[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof(body), fmt, ap);
    va_end(ap);
    cu_diag_error(e, "%s: %s", path, body);
}

/* s as a Go %q string (label values and numbers in strings: printable). */
static const char *q(cu_buf *b, const char *s)
{
    cu_buf_free(b);
    cu_buf_init(b, 4096);
    cu_json_put_str(b, s, CU_JESC_RAW);
    return cu_buf_str(b);
}

/* v as Go's json.Marshal shows a value ("null" for NULL). */
static const char *jtext(json_object *v)
{
    if (!v)
        return "null";
    return json_object_to_json_string_ext(v,
                                          JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
}

/* Denies resp with the aggregate of e's errors (none: allows). */
static void errs_deny(cu_wh_resp *resp, const cu_diag *e)
{
    size_t kept = 0;
    cu_buf m;
    cu_buf_init(&m, 60 * 1024);
    for (size_t i = 0; i < e->n; i++) {
        const char *s = e->msgs[i];
        if (strncmp(s, "warning: ", 9) == 0)
            continue;
        int dup = 0;
        for (size_t j = 0; j < i && !dup; j++)
            dup = strcmp(e->msgs[j], s) == 0;
        if (dup)
            continue;
        cu_buf_printf(&m, "%s%s", kept ? ", " : "", s);
        kept++;
    }
    if (kept == 1)
        cu_wh_deny(resp, "%s", cu_buf_str(&m));
    else if (kept > 1)
        cu_wh_deny(resp, "[%s]", cu_buf_str(&m));
    cu_buf_free(&m);
}

/* Copies the errors of d (api/'s "Kind who: path: problem") into e
 * without their "Kind who: " prefix. */
static void take_api_errs(cu_diag *e, const cu_diag *d, const char *kind)
{
    size_t kl = strlen(kind);
    for (size_t i = 0; i < d->n; i++) {
        const char *s = d->msgs[i];
        if (strncmp(s, "warning: ", 9) == 0)
            continue;
        if (strncmp(s, kind, kl) == 0 && (s[kl] == ' ' || s[kl] == ':')) {
            const char *c = strstr(s + kl, ": ");
            if (c)
                s = c + 2;
        }
        cu_diag_error(e, "%s", s);
    }
}

/* ---------------- small readers ---------------- */

static const char *label(json_object *obj, const char *key)
{
    return cu_jstr(cu_jpath(obj, "metadata.labels"), key);
}

static const char *annotation(json_object *obj, const char *key)
{
    return cu_jstr(cu_jpath(obj, "metadata.annotations"), key);
}

static int suspended(json_object *job) { return cu_jas_true(cu_jpath(job, "spec.suspend")); }

/* The Workload holds quota: condition QuotaReserved is True (Kueue's
 * HasQuotaReservation). */
static int wl_quota_reserved(json_object *wl)
{
    json_object *conds = cu_jpath(wl, "status.conditions");
    for (size_t i = 0; i < cu_jarr_len(conds); i++) {
        json_object *c = json_object_array_get_idx(conds, i);
        const char *t = cu_jstr(c, "type"), *s = cu_jstr(c, "status");
        if (t && s && !strcmp(t, "QuotaReserved") && !strcmp(s, "True"))
            return 1;
    }
    return 0;
}

/* Go's strconv.Atoi: optional sign, decimal digits, int64 range. Returns 0
 * on success; else writes the error text Go gives into why. */
static int go_atoi(const char *s, long long *out, char *why, size_t nwhy)
{
    cu_buf b;
    cu_buf_init(&b, 0);
    const char *p = s;
    if (*p == '+' || *p == '-')
        p++;
    int ok = *p != '\0';
    for (const char *c = p; ok && *c; c++)
        ok = *c >= '0' && *c <= '9';
    if (!ok) {
        snprintf(why, nwhy, "strconv.Atoi: parsing %s: invalid syntax", q(&b, s));
        cu_buf_free(&b);
        return -1;
    }
    errno = 0;
    *out = strtoll(s, NULL, 10);
    if (errno == ERANGE) {
        snprintf(why, nwhy, "strconv.Atoi: parsing %s: value out of range", q(&b, s));
        cu_buf_free(&b);
        return -1;
    }
    cu_buf_free(&b);
    return 0;
}

/* Go's strconv.ParseBool: 1 true, 0 false, -1 invalid. */
static int go_parse_bool(const char *s)
{
    static const char *const t[] = { "1", "t", "T", "TRUE", "true", "True" };
    static const char *const f[] = { "0", "f", "F", "FALSE", "false", "False" };
    for (size_t i = 0; i < 6; i++) {
        if (!strcmp(s, t[i]))
            return 1;
        if (!strcmp(s, f[i]))
            return 0;
    }
    return -1;
}

/* ---------------- Kueue objects through api/'s decoders ---------------- */

/* Decodes obj (a kind object, namespace ns when the object has none) into
 * w. Returns the object, or NULL with the decoder's errors in d. */
static const void *decode_one(cu_world *w, cu_kind kind, json_object *obj, const char *ns,
                              cu_diag *d)
{
    cu_arena tmp;
    cu_arena_init(&tmp, 16 * 1024);
    cu_node *n = cu_node_from_json(&tmp, obj);
    const void *out = NULL;
    if (n && n->type == CU_NODE_MAP) {
        if (!cu_jstr(obj, "apiVersion"))
            cu_node_set(&tmp, n, "apiVersion", cu_node_new_str(&tmp, CU_GROUP "/v1beta2"));
        if (!cu_jstr(obj, "kind"))
            cu_node_set(&tmp, n, "kind", cu_node_new_str(&tmp, cu_kind_name(kind)));
        if (ns && *ns && !cu_jpath_str(obj, "metadata.namespace")) {
            cu_node *meta = cu_node_get(n, "metadata");
            if (meta && meta->type == CU_NODE_MAP)
                cu_node_set(&tmp, meta, "namespace", cu_node_new_str(&tmp, ns));
        }
        cu_doc doc = { .file = "request", .root = n };
        cu_world_decode(w, &doc, d);
        switch (kind) {
        case CU_KIND_CLUSTER_QUEUE: out = w->cqs.n == 1 ? w->cqs.items[0] : NULL; break;
        case CU_KIND_COHORT: out = w->cohorts.n == 1 ? w->cohorts.items[0] : NULL; break;
        case CU_KIND_RESOURCE_FLAVOR: out = w->flavors.n == 1 ? w->flavors.items[0] : NULL; break;
        case CU_KIND_WORKLOAD: out = w->workloads.n == 1 ? w->workloads.items[0] : NULL; break;
        default: break;
        }
    }
    cu_arena_free(&tmp);
    return out;
}

/* Checks obj by api/'s rules, errors into e. */
static void api_validate(cu_diag *e, cu_kind kind, json_object *obj, const char *ns)
{
    cu_world w;
    cu_diag d;
    cu_world_init(&w);
    cu_diag_init(&d);
    const void *o = decode_one(&w, kind, obj, ns, &d);
    if (o)
        cu_object_validate(kind, o, &d);
    else if (d.nerrors == 0)
        cu_diag_error(&d, "%s: Invalid value: the object could not be read as a %s", "metadata",
                      cu_kind_name(kind));
    take_api_errs(e, &d, cu_kind_name(kind));
    cu_diag_free(&d);
    cu_world_free(&w);
}

/* The validators of ClusterQueue, Cohort and ResourceFlavor: the object's
 * rules on CREATE and UPDATE (Kueue checks the new object only). */
static void validate_kind(cu_kind kind, cu_wh_req *req, cu_wh_resp *resp)
{
    if (req->op != CU_WH_CREATE && req->op != CU_WH_UPDATE)
        return;
    cu_diag e;
    cu_diag_init(&e);
    api_validate(&e, kind, req->object, req->ns);
    errs_deny(resp, &e);
    cu_diag_free(&e);
}

#define VALIDATOR(fn, kind) \
    static void fn(const cu_wh_env *env, cu_wh_req *req, cu_wh_resp *resp) \
    { \
        (void)env; \
        validate_kind(kind, req, resp); \
    }
VALIDATOR(v_cluster_queue, CU_KIND_CLUSTER_QUEUE)
VALIDATOR(v_cohort, CU_KIND_COHORT)
VALIDATOR(v_resource_flavor, CU_KIND_RESOURCE_FLAVOR)

/* Kueue's defaulter of ClusterQueues and ResourceFlavors: the
 * resource-in-use finalizer on every new object. */
static void m_add_in_use_finalizer(const cu_wh_env *env, cu_wh_req *req, cu_wh_resp *resp)
{
    (void)env, (void)resp;
    if (!req->object || !json_object_is_type(req->object, json_type_object))
        return;
    json_object *meta = cu_jchild(req->object, "metadata");
    if (!meta)
        return;
    json_object *fin = cu_jget(meta, "finalizers");
    if (!json_object_is_type(fin, json_type_array)) {
        fin = json_object_new_array();
        json_object_object_add(meta, "finalizers", fin);
    }
    for (size_t i = 0; i < cu_jarr_len(fin); i++) {
        const char *f = cu_jas_str(json_object_array_get_idx(fin, i));
        if (f && !strcmp(f, CU_FINALIZER_IN_USE))
            return;
    }
    json_object_array_add(fin, json_object_new_string(CU_FINALIZER_IN_USE));
}

/* ---------------- Workload ---------------- */

/* The pod set names of wl, in order. */
static size_t podset_names(json_object *wl, const char **out, size_t max)
{
    json_object *ps = cu_jpath(wl, "spec.podSets");
    size_t n = 0;
    for (size_t i = 0; i < cu_jarr_len(ps) && n < max; i++) {
        const char *name = cu_jstr(json_object_array_get_idx(ps, i), "name");
        out[n++] = name ? name : "main"; /* the CRD's default */
    }
    return n;
}

static json_object *podset_named(json_object *wl, const char *name)
{
    json_object *ps = cu_jpath(wl, "spec.podSets");
    for (size_t i = 0; i < cu_jarr_len(ps); i++) {
        json_object *p = json_object_array_get_idx(ps, i);
        const char *n = cu_jstr(p, "name");
        if (!strcmp(n ? n : "main", name))
            return p;
    }
    return NULL;
}

static int strp_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* "supported values: "a", "b"" of field.NotSupported; sorted: Go's sets.List. */
static void supported(cu_buf *b, const char **names, size_t n, int sorted)
{
    cu_buf t;
    cu_buf_init(&t, 0);
    if (sorted)
        qsort(names, n, sizeof(*names), strp_cmp);
    cu_buf_puts(b, "supported values: ");
    for (size_t i = 0; i < n; i++) {
        if (sorted && i && !strcmp(names[i], names[i - 1]))
            continue;
        cu_buf_printf(b, "%s%s", i ? ", " : "", q(&t, names[i]));
    }
    cu_buf_free(&t);
}

/* Kueue's ValidateWorkload rules on fields the decoder does not keep. */
static void wl_json_rules(cu_diag *e, json_object *wl)
{
    char path[512];
    cu_buf t;
    cu_buf_init(&t, 0);
    const char *names[64];
    size_t nn = podset_names(wl, names, 64);
    json_object *rps = cu_jpath(wl, "status.reclaimablePods");
    for (size_t i = 0; i < cu_jarr_len(rps); i++) {
        json_object *rp = json_object_array_get_idx(rps, i);
        const char *name = cu_jstr(rp, "name");
        json_object *p = podset_named(wl, name ? name : "");
        if (!p) {
            cu_buf s;
            cu_buf_init(&s, 0);
            const char *copy[64];
            memcpy(copy, names, nn * sizeof(*copy));
            supported(&s, copy, nn, 0);
            snprintf(path, sizeof(path), "status.reclaimablePods[%s].name", name ? name : "");
            ferr(e, path, "Unsupported value: %s: %s", q(&t, name ? name : ""), cu_buf_str(&s));
            cu_buf_free(&s);
        } else {
            int64_t count = cu_jas_int64(cu_jget(rp, "count"), 0);
            int64_t pc = cu_jas_int64(cu_jget(p, "count"), 1);
            if (count > pc) {
                snprintf(path, sizeof(path), "status.reclaimablePods[%s].count", name);
                ferr(e, path, "Invalid value: %lld: should be less or equal to %lld",
                     (long long)count, (long long)pc);
            }
        }
    }
    json_object *acs = cu_jpath(wl, "status.admissionChecks");
    for (size_t i = 0; i < cu_jarr_len(acs); i++) {
        json_object *psus = cu_jget(json_object_array_get_idx(acs, i), "podSetUpdates");
        for (size_t k = 0; k < cu_jarr_len(psus); k++) {
            const char *name = cu_jstr(json_object_array_get_idx(psus, k), "name");
            if (podset_named(wl, name ? name : ""))
                continue;
            cu_buf s;
            cu_buf_init(&s, 0);
            const char *copy[64];
            memcpy(copy, names, nn * sizeof(*copy));
            supported(&s, copy, nn, 1);
            snprintf(path, sizeof(path), "status.admissionChecks[%zu].podSetUpdates[%zu].name", i,
                     k);
            ferr(e, path, "Unsupported value: %s: %s", q(&t, name ? name : ""), cu_buf_str(&s));
            cu_buf_free(&s);
        }
    }
    cu_buf_free(&t);
}

/* A copy of an admission without the fields TAS may change. */
static json_object *adm_without_topology(json_object *adm)
{
    json_object *c = cu_jcopy(adm);
    json_object *psa = cu_jget(c, "podSetAssignments");
    for (size_t i = 0; i < cu_jarr_len(psa); i++) {
        json_object *a = json_object_array_get_idx(psa, i);
        json_object_object_del(a, "topologyAssignment");
        json_object_object_del(a, "delayedTopologyRequest");
    }
    return c;
}

static const char *check_state(json_object *ac) { return cu_jstr(ac, "state"); }

/* Kueue's ValidateWorkloadUpdate rules that compare with the old object. */
static void wl_update_rules(cu_diag *e, json_object *nw, json_object *old)
{
    char path[256];
    cu_buf t;
    cu_buf_init(&t, 0);
    int old_q = wl_quota_reserved(old), new_q = wl_quota_reserved(nw);
    if (old_q) {
        json_object *np = cu_jpath(nw, "spec.podSets"), *op = cu_jpath(old, "spec.podSets");
        if (cu_jarr_len(np) != cu_jarr_len(op)) {
            ferr(e, "spec.podSets", "Invalid value: %s: " MSG_IMMUTABLE, jtext(np));
        } else {
            for (size_t i = 0; i < cu_jarr_len(np); i++) {
                json_object *a = json_object_array_get_idx(np, i);
                if (!json_object_equal(a, json_object_array_get_idx(op, i))) {
                    /* Kueue names it with Child("0"), not Index(0) */
                    snprintf(path, sizeof(path), "spec.podSets.%zu", i);
                    ferr(e, path, "Invalid value: %s: " MSG_IMMUTABLE, jtext(a));
                }
            }
        }
    }
    if (old_q && new_q) {
        json_object *nr = cu_jpath(nw, "status.reclaimablePods");
        json_object *orp = cu_jpath(old, "status.reclaimablePods");
        if (cu_jarr_len(orp) && !json_object_equal(nr, orp)) {
            for (size_t i = 0; i < cu_jarr_len(nr); i++) {
                json_object *r = json_object_array_get_idx(nr, i);
                const char *name = cu_jstr(r, "name");
                int64_t c = cu_jas_int64(cu_jget(r, "count"), 0);
                for (size_t j = 0; name && j < cu_jarr_len(orp); j++) {
                    json_object *o = json_object_array_get_idx(orp, j);
                    const char *on = cu_jstr(o, "name");
                    int64_t oc = cu_jas_int64(cu_jget(o, "count"), 0);
                    if (on && !strcmp(on, name) && c < oc) {
                        snprintf(path, sizeof(path), "status.reclaimablePods[%s].count", name);
                        ferr(e, path, "Invalid value: %lld: cannot be less then %lld", (long long)c,
                             (long long)oc);
                    }
                }
            }
            for (size_t j = 0; j < cu_jarr_len(orp); j++) {
                const char *on = cu_jstr(json_object_array_get_idx(orp, j), "name");
                int found = 0;
                for (size_t i = 0; on && i < cu_jarr_len(nr) && !found; i++) {
                    const char *n = cu_jstr(json_object_array_get_idx(nr, i), "name");
                    found = n && !strcmp(n, on);
                }
                if (on && !found) {
                    snprintf(path, sizeof(path), "status.reclaimablePods[%s]", on);
                    ferr(e, path, "Required value: cannot be removed");
                }
            }
        }
    }
    json_object *na = cu_jpath(nw, "status.admission"), *oa = cu_jpath(old, "status.admission");
    if (na && oa) {
        size_t nl = cu_jarr_len(cu_jget(na, "podSetAssignments"));
        size_t ol = cu_jarr_len(cu_jget(oa, "podSetAssignments"));
        int same;
        if (nl != ol) {
            same = 0;
        } else {
            json_object *x = adm_without_topology(na), *y = adm_without_topology(oa);
            same = json_object_equal(x, y);
            json_object_put(x);
            json_object_put(y);
        }
        if (!same)
            ferr(e, "status.admission", "Invalid value: %s: " MSG_IMMUTABLE, jtext(na));
    }
    json_object *oacs = cu_jpath(old, "status.admissionChecks");
    json_object *nacs = cu_jpath(nw, "status.admissionChecks");
    for (size_t i = 0; i < cu_jarr_len(oacs); i++) {
        json_object *o = json_object_array_get_idx(oacs, i);
        const char *name = cu_jstr(o, "name");
        for (size_t j = 0; name && j < cu_jarr_len(nacs); j++) {
            json_object *n = json_object_array_get_idx(nacs, j);
            const char *nn = cu_jstr(n, "name");
            if (!nn || strcmp(nn, name))
                continue;
            const char *os = check_state(o), *ns = check_state(n);
            json_object *opsu = cu_jget(o, "podSetUpdates"), *npsu = cu_jget(n, "podSetUpdates");
            if (os && ns && !strcmp(os, "Ready") && !strcmp(ns, "Ready") &&
                !json_object_equal(opsu, npsu) && (cu_jarr_len(opsu) || cu_jarr_len(npsu))) {
                snprintf(path, sizeof(path), "status.admissionChecks[%zu].podSetUpdates", i);
                ferr(e, path, "Invalid value: %s: " MSG_IMMUTABLE, jtext(npsu));
            }
            break;
        }
    }
    const char *ncn = cu_jpath_str(nw, "status.clusterName");
    if (!cu_jpath(old, "status.clusterName") && ncn) {
        json_object *nom = cu_jpath(old, "status.nominatedClusterNames");
        int found = 0;
        for (size_t i = 0; i < cu_jarr_len(nom) && !found; i++) {
            const char *c = cu_jas_str(json_object_array_get_idx(nom, i));
            found = c && !strcmp(c, ncn);
        }
        if (!found)
            ferr(e, "status.clusterName",
                 "Invalid value: %s: when setting clusterName it must be one of the "
                 "nominatedClusterNames",
                 q(&t, ncn));
    }
    cu_buf_free(&t);
}

static void v_workload(const cu_wh_env *env, cu_wh_req *req, cu_wh_resp *resp)
{
    (void)env;
    if (req->op != CU_WH_CREATE && req->op != CU_WH_UPDATE)
        return;
    cu_diag e;
    cu_diag_init(&e);
    api_validate(&e, CU_KIND_WORKLOAD, req->object, req->ns);
    wl_json_rules(&e, req->object);
    if (req->op == CU_WH_UPDATE && req->old_object)
        wl_update_rules(&e, req->object, req->old_object);
    errs_deny(resp, &e);
    cu_diag_free(&e);
}

/* Kueue's Workload defaulter drops minCount only when PartialAdmission is
 * off; it is on by default in v0.17, so this allows as is. */
static void m_workload(const cu_wh_env *env, cu_wh_req *req, cu_wh_resp *resp)
{
    (void)env, (void)req, (void)resp;
}

/* ---------------- batch/v1 Job ---------------- */

/* The integrations Kueue knows, as an owner reference names them
 * (apiVersion and kind must both match, as Kueue compares them). */
static const struct {
    const char *framework, *api_version, *kind;
} frameworks[] = {
    { "batch/job", "batch/v1", "Job" },
    { "jobset.x-k8s.io/jobset", "jobset.x-k8s.io/v1alpha2", "JobSet" },
    { "kubeflow.org/mpijob", "kubeflow.org/v2beta1", "MPIJob" },
    { "kubeflow.org/paddlejob", "kubeflow.org/v1", "PaddleJob" },
    { "kubeflow.org/pytorchjob", "kubeflow.org/v1", "PyTorchJob" },
    { "kubeflow.org/tfjob", "kubeflow.org/v1", "TFJob" },
    { "kubeflow.org/xgboostjob", "kubeflow.org/v1", "XGBoostJob" },
    { "kubeflow.org/jaxjob", "kubeflow.org/v1", "JAXJob" },
    { "trainer.kubeflow.org/trainjob", "trainer.kubeflow.org/v1alpha1", "TrainJob" },
    { "ray.io/rayjob", "ray.io/v1", "RayJob" },
    { "ray.io/raycluster", "ray.io/v1", "RayCluster" },
    { "ray.io/rayservice", "ray.io/v1", "RayService" },
    { "workload.codeflare.dev/appwrapper", "workload.codeflare.dev/v1beta2", "AppWrapper" },
    { "leaderworkerset.x-k8s.io/leaderworkerset", "leaderworkerset.x-k8s.io/v1",
      "LeaderWorkerSet" },
    { "sparkoperator.k8s.io/sparkapplication", "sparkoperator.k8s.io/v1beta2", "SparkApplication" },
    { "pod", "v1", "Pod" },
    { "deployment", "apps/v1", "Deployment" },
    { "statefulset", "apps/v1", "StatefulSet" },
};

/* 1 when obj's controller owner is of an integration enabled in cfg
 * (Kueue's IsOwnerManagedByKueue). */
static int owner_managed(const cu_config *cfg, json_object *obj)
{
    json_object *owners = cu_jpath(obj, "metadata.ownerReferences");
    for (size_t i = 0; i < cu_jarr_len(owners); i++) {
        json_object *o = json_object_array_get_idx(owners, i);
        if (!cu_jas_true(cu_jget(o, "controller")))
            continue;
        const char *av = cu_jstr(o, "apiVersion"), *k = cu_jstr(o, "kind");
        for (size_t f = 0; av && k && f < sizeof(frameworks) / sizeof(frameworks[0]); f++)
            if (!strcmp(av, frameworks[f].api_version) && !strcmp(k, frameworks[f].kind))
                return cu_config_framework_enabled(cfg, frameworks[f].framework);
        return 0; /* only the controller owner counts */
    }
    return 0;
}

static int job_integration_on(const cu_wh_env *env)
{
    return cu_config_framework_enabled(env ? env->cfg : NULL, "batch/job");
}

static int default_lq_exists(const cu_wh_env *env, const char *ns)
{
    return env && env->lq_exists && ns && env->lq_exists(env->ud, ns, "default");
}

static const char *obj_ns(cu_wh_req *req, json_object *obj)
{
    const char *ns = cu_jpath_str(obj, "metadata.namespace");
    return ns && *ns ? ns : req->ns;
}

static void set_label(json_object *obj, const char *key, const char *value)
{
    json_object *meta = cu_jchild(obj, "metadata");
    json_object *labels = meta ? cu_jchild(meta, "labels") : NULL;
    if (labels)
        cu_jset_str(labels, key, value);
}

/* mjob.kb.io: Kueue's Job defaulter. */
static void m_job(const cu_wh_env *env, cu_wh_req *req, cu_wh_resp *resp)
{
    json_object *job = req->object;
    if (req->op != CU_WH_CREATE || !job_integration_on(env) ||
        !json_object_is_type(job, json_type_object))
        return;
    const cu_config *cfg = env ? env->cfg : NULL;
    const char *ns = obj_ns(req, job);
    const char *qn = label(job, CU_LABEL_QUEUE_NAME);
    /* the default LocalQueue */
    if ((!qn || !*qn) && default_lq_exists(env, ns) && !owner_managed(cfg, job)) {
        set_label(job, CU_LABEL_QUEUE_NAME, "default");
        qn = label(job, CU_LABEL_QUEUE_NAME);
    }
    /* suspend: not under a parent Kueue manages (Cueue cannot read the
     * parent: an owner of an enabled integration counts as managed) */
    int suspend = 0;
    if (owner_managed(cfg, job))
        suspend = 0;
    else if (qn && *qn)
        suspend = 1;
    else if (cfg && cfg->manage_jobs_without_queue_name) {
        const cu_kvs *nsl = NULL;
        if (env->ns_labels) {
            nsl = env->ns_labels(env->ud, ns ? ns : "");
            if (!nsl) {
                cu_wh_deny(resp, "failed to get namespace: namespaces \"%s\" not found",
                           ns ? ns : "");
                return;
            }
        }
        cu_kvs none = { 0, NULL };
        suspend = cu_config_manages_unlabelled(cfg, nsl ? nsl : &none);
    }
    if (suspend && !suspended(job)) {
        json_object *spec = cu_jchild(job, "spec");
        if (spec)
            json_object_object_add(spec, "suspend", json_object_new_boolean(1));
    }
}

static void labels_path(char *buf, size_t n, const char *key)
{
    snprintf(buf, n, "metadata.labels[%s]", key);
}

/* jobframework's ValidateLabelAsCRDName. */
static void check_crd_name_label(cu_diag *e, json_object *job, const char *key)
{
    const char *v = label(job, key);
    if (!v)
        return;
    char path[160], msg[1024] = "";
    cu_buf t;
    cu_buf_init(&t, 0);
    size_t n = strlen(v);
    if (n > 253)
        snprintf(msg, sizeof(msg), "must be no more than 253 characters");
    if (!cu_dns1123_subdomain_ok(v, n, 0)) {
        size_t l = strlen(msg);
        snprintf(msg + l, sizeof(msg) - l, "%s%s", l ? "," : "",
                 cu_name_detail(CU_DNS_SUBDOMAIN_CHARS));
    }
    if (*msg) {
        labels_path(path, sizeof(path), key);
        ferr(e, path, "Invalid value: %s: %s", q(&t, v), msg);
    }
    cu_buf_free(&t);
}

/* Reads v (the value at path) as Go's strconv.Atoi does; on an error
 * reports it as Kueue does and returns -1. */
static int atoi_field(cu_diag *e, const char *path, const char *v, long long *x)
{
    char why[512];
    if (go_atoi(v, x, why, sizeof(why)) == 0)
        return 0;
    cu_buf t;
    cu_buf_init(&t, 0);
    ferr(e, path, "Invalid value: %s: %s", q(&t, v), why);
    cu_buf_free(&t);
    return -1;
}

static void check_max_exec(cu_diag *e, json_object *job)
{
    const char *v = label(job, LBL_MAX_EXEC);
    char path[160];
    long long x;
    labels_path(path, sizeof(path), LBL_MAX_EXEC);
    if (v && atoi_field(e, path, v, &x) == 0 && x <= 0)
        ferr(e, path, "Invalid value: %lld: should be greater than 0", x);
}

/* The Job's pod count: parallelism (defaulted to 1), at most completions. */
static int32_t job_pods(json_object *job)
{
    json_object *par = cu_jpath(job, "spec.parallelism"), *comp = cu_jpath(job, "spec.completions");
    return cu_job_podset_count(par != NULL, (int32_t)cu_jas_int64(par, 1), comp != NULL,
                               (int32_t)cu_jas_int64(comp, 1));
}

static void check_min_parallelism(cu_diag *e, json_object *job)
{
    const char *v = annotation(job, CU_ANN_JOB_MIN_PARALLELISM);
    char path[160];
    long long x;
    snprintf(path, sizeof(path), "metadata.annotations[%s]", CU_ANN_JOB_MIN_PARALLELISM);
    int32_t pods = job_pods(job);
    if (v && atoi_field(e, path, v, &x) == 0 && ((int32_t)x >= pods || x <= 0))
        ferr(e, path, "Invalid value: %lld: should be between 0 and %d", x, (int)pods - 1);
}

static void check_sync_completions(cu_diag *e, json_object *job)
{
    const char *v = annotation(job, ANN_SYNC_COMPLETIONS);
    if (!v)
        return;
    char path[160];
    cu_buf t;
    cu_buf_init(&t, 0);
    snprintf(path, sizeof(path), "metadata.annotations[%s]", ANN_SYNC_COMPLETIONS);
    int b = go_parse_bool(v);
    if (b < 0) {
        const char *qv = q(&t, v); /* one buffer: quoted once, used twice */
        ferr(e, path, "Invalid value: %s: strconv.ParseBool: parsing %s: invalid syntax", qv, qv);
    }
    if (b == 1) {
        const char *mode = cu_jpath_str(job, "spec.completionMode");
        if (!mode || !strcmp(mode, "NonIndexed"))
            ferr(e, path, "Invalid value: %s: should not be enabled for NonIndexed jobs", q(&t, v));
        json_object *par = cu_jpath(job, "spec.parallelism"),
                    *comp = cu_jpath(job, "spec.completions");
        if (cu_jas_int64(par, 1) != cu_jas_int64(comp, 1))
            ferr(e, "spec.completions",
                 "Invalid value: %s: should be equal to parallelism when %s is annotation is true",
                 jtext(comp), ANN_SYNC_COMPLETIONS);
    }
    cu_buf_free(&t);
}

static int sync_completions(json_object *job)
{
    const char *v = annotation(job, ANN_SYNC_COMPLETIONS);
    return v && go_parse_bool(v) == 1;
}

/* jobframework's ValidateJobOnCreate and the Job's own annotation rules. */
static void job_create_rules(cu_diag *e, json_object *job, int min_par)
{
    check_crd_name_label(e, job, CU_LABEL_QUEUE_NAME);
    check_crd_name_label(e, job, LBL_PREBUILT);
    check_max_exec(e, job);
    if (min_par)
        check_min_parallelism(e, job);
    check_sync_completions(e, job);
}

static const char *or_empty(const char *s) { return s ? s : ""; }

static void immutable_label(cu_diag *e, json_object *nw, json_object *old, const char *key)
{
    const char *a = or_empty(label(nw, key)), *b = or_empty(label(old, key));
    if (strcmp(a, b)) {
        char path[160];
        cu_buf t;
        cu_buf_init(&t, 0);
        labels_path(path, sizeof(path), key);
        ferr(e, path, "Invalid value: %s: " MSG_IMMUTABLE, q(&t, a));
        cu_buf_free(&t);
    }
}

static void job_update_rules(const cu_wh_env *env, cu_diag *e, json_object *nw, json_object *old,
                             const char *ns)
{
    char path[160];
    cu_buf t;
    cu_buf_init(&t, 0);
    int nsus = suspended(nw), osus = suspended(old);
    /* the queue name */
    if (!nsus)
        immutable_label(e, nw, old, CU_LABEL_QUEUE_NAME);
    const char *nq = or_empty(label(nw, CU_LABEL_QUEUE_NAME));
    const char *oq = or_empty(label(old, CU_LABEL_QUEUE_NAME));
    const char *ons = cu_jpath_str(old, "metadata.namespace");
    if (!*nq && *oq && default_lq_exists(env, ons && *ons ? ons : ns)) {
        labels_path(path, sizeof(path), CU_LABEL_QUEUE_NAME);
        ferr(e, path,
             "Invalid value: \"\": queue-name must not be empty in namespace with default queue");
    }
    /* the prebuilt workload */
    if (nsus)
        check_crd_name_label(e, nw, LBL_PREBUILT);
    else
        immutable_label(e, nw, old, LBL_PREBUILT);
    /* the maximum execution time */
    if (!nsus || !osus)
        immutable_label(e, nw, old, LBL_MAX_EXEC);
    /* the WorkloadPriorityClass */
    const char *nc = or_empty(label(nw, CU_LABEL_PRIORITY_CLASS));
    const char *oc = or_empty(label(old, CU_LABEL_PRIORITY_CLASS));
    labels_path(path, sizeof(path), CU_LABEL_PRIORITY_CLASS);
    if (!nsus && !*oc && *nc)
        ferr(e, path,
             "Invalid value: %s: WorkloadPriorityClass cannot be added to a non-suspended "
             "workload",
             q(&t, nc));
    else if (!*nc && *oc)
        ferr(e, path,
             "Invalid value: \"\": WorkloadPriorityClass cannot be removed from a workload");
    /* partial admission */
    if (annotation(old, CU_ANN_JOB_MIN_PARALLELISM) && !osus &&
        cu_jas_int64(cu_jpath(old, "spec.parallelism"), 1) !=
            cu_jas_int64(cu_jpath(nw, "spec.parallelism"), 1))
        ferr(e, "spec.parallelism",
             "Forbidden: cannot change when partial admission is enabled and the job is not "
             "suspended");
    if (osus == nsus && !nsus && sync_completions(old) != sync_completions(nw)) {
        snprintf(path, sizeof(path), "metadata.annotations[%s]", ANN_SYNC_COMPLETIONS);
        ferr(e, path, "Forbidden: " MSG_IMMUTABLE " while the job is not suspended");
    }
    cu_buf_free(&t);
}

/* vjob.kb.io: Kueue's Job validator. */
static void v_job(const cu_wh_env *env, cu_wh_req *req, cu_wh_resp *resp)
{
    json_object *job = req->object;
    if ((req->op != CU_WH_CREATE && req->op != CU_WH_UPDATE) || !job_integration_on(env) ||
        !json_object_is_type(job, json_type_object))
        return;
    cu_diag e;
    cu_diag_init(&e);
    if (req->op == CU_WH_CREATE) {
        job_create_rules(&e, job, 1);
    } else {
        json_object *old = req->old_object;
        int changed = strcmp(or_empty(annotation(job, CU_ANN_JOB_MIN_PARALLELISM)),
                             or_empty(annotation(old, CU_ANN_JOB_MIN_PARALLELISM))) != 0;
        job_create_rules(&e, job, changed);
        if (old)
            job_update_rules(env, &e, job, old, obj_ns(req, job));
    }
    errs_deny(resp, &e);
    cu_diag_free(&e);
}

/* ---------------- the table ---------------- */

#define OP(a) (1u << (a))
#define OPS(a, b) (OP(a) | OP(b))
#define KV CU_GROUP, "v1beta2"
static const cu_wh_hook hooks[] = {
    { "mclusterqueue.kb.io", "/mutate-kueue-x-k8s-io-v1beta2-clusterqueue", 1, KV, "clusterqueues",
      OP(CU_WH_CREATE), m_add_in_use_finalizer },
    { "mjob.kb.io", "/mutate-batch-v1-job", 1, "batch", "v1", "jobs", OP(CU_WH_CREATE), m_job },
    { "mresourceflavor.kb.io", "/mutate-kueue-x-k8s-io-v1beta2-resourceflavor", 1, KV,
      "resourceflavors", OP(CU_WH_CREATE), m_add_in_use_finalizer },
    { "mworkload.kb.io", "/mutate-kueue-x-k8s-io-v1beta2-workload", 1, KV, "workloads",
      OP(CU_WH_CREATE), m_workload },
    { "vclusterqueue.kb.io", "/validate-kueue-x-k8s-io-v1beta2-clusterqueue", 0, KV,
      "clusterqueues", OPS(CU_WH_CREATE, CU_WH_UPDATE), v_cluster_queue },
    { "vcohort.kb.io", "/validate-kueue-x-k8s-io-v1beta2-cohort", 0, KV, "cohorts",
      OPS(CU_WH_CREATE, CU_WH_UPDATE), v_cohort },
    { "vjob.kb.io", "/validate-batch-v1-job", 0, "batch", "v1", "jobs",
      OPS(CU_WH_CREATE, CU_WH_UPDATE), v_job },
    { "vresourceflavor.kb.io", "/validate-kueue-x-k8s-io-v1beta2-resourceflavor", 0, KV,
      "resourceflavors", OPS(CU_WH_CREATE, CU_WH_UPDATE), v_resource_flavor },
    { "vworkload.kb.io", "/validate-kueue-x-k8s-io-v1beta2-workload", 0, KV, "workloads",
      OPS(CU_WH_CREATE, CU_WH_UPDATE), v_workload },
};

const cu_wh_hook *cu_wh_hooks(size_t *n)
{
    *n = sizeof(hooks) / sizeof(hooks[0]);
    return hooks;
}

const cu_wh_hook *cu_wh_hook_by_path(const char *path)
{
    size_t n;
    const cu_wh_hook *h = cu_wh_hooks(&n);
    for (size_t i = 0; path && i < n; i++)
        if (strcmp(h[i].path, path) == 0)
            return &h[i];
    return NULL;
}

const char *const *cu_wh_hook_resources(const cu_wh_hook *h, size_t *n)
{
    static const char *const wl[] = { "workloads", "workloads/status" };
    if (h && !strcmp(h->name, "vworkload.kb.io")) {
        *n = 2;
        return wl;
    }
    *n = h ? 1 : 0;
    return h ? &h->resource : NULL;
}
