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
 *    JobSet, Pod and LeaderWorkerSet share jobframework's steps with it
 *    (default_local_queue, should_suspend, jf_create_rules,
 *    jf_update_rules); the pod webhook adds Kueue's gate, finalizer and
 *    managed label, the LeaderWorkerSet webhook marks the pod templates.
 *
 * Feature gates at Kueue v0.17.0's defaults: PartialAdmission on (so the
 * Workload defaulter keeps minCount: a no-op), TopologyAwareScheduling on
 * (the admission's topology fields may change), LocalQueueDefaulting GA,
 * ElasticJobsViaWorkloadSlices, AdmissionGatedBy and PriorityBoost off.
 * The TAS annotations of pod templates are checked (cu_topology.c's
 * rules) for Jobs, JobSets, LeaderWorkerSets and Pods; vtopology.kb.io is
 * Cueue's own, the Topology CRD's CEL rules for API servers without CEL.
 * Not done: MultiKueue's
 * managedBy defaulting.
 */
#include "cu_webhook.h"

#include "cu_jobset.h"
#include "cu_json.h"
#include "cu_lws.h"
#include "cu_names.h"
#include "cu_pod.h"
#include "cu_topology.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Kueue's pod constant: the annotation naming the label that holds a pod's
 * index in its group (copied into kueue.x-k8s.io/pod-group-pod-index). */
#define CU_ANN_POD_GROUP_INDEX_LABEL "kueue.x-k8s.io/pod-group-pod-index-label"

#define LBL_MAX_EXEC "kueue.x-k8s.io/max-exec-time-seconds"
#define ANN_SYNC_COMPLETIONS "kueue.x-k8s.io/job-completions-equal-parallelism"
#define MSG_IMMUTABLE "field is immutable"
/* the integrations' names in the Configuration's integrations.frameworks */
#define FW_JOB "batch/job"
#define FW_JOBSET "jobset.x-k8s.io/jobset"
#define FW_LWS "leaderworkerset.x-k8s.io/leaderworkerset"
#define FW_POD "pod"

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
        case CU_KIND_TOPOLOGY: out = w->topologies.n == 1 ? w->topologies.items[0] : NULL; break;
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

/* vresourceflavor.kb.io: the object's rules, and on UPDATE the CEL rules of
 * Kueue's CRD for a flavor that had a topologyName (the embedded cluster
 * runs no CEL): its nodeLabels, tolerations and topologyName stay. */
static void v_resource_flavor(const cu_wh_env *env, cu_wh_req *req, cu_wh_resp *resp)
{
    (void)env;
    if (req->op != CU_WH_CREATE && req->op != CU_WH_UPDATE)
        return;
    cu_diag e;
    cu_diag_init(&e);
    api_validate(&e, CU_KIND_RESOURCE_FLAVOR, req->object, req->ns);
    json_object *ns = cu_jget(req->object, "spec"), *os = cu_jget(req->old_object, "spec");
    if (req->op == CU_WH_UPDATE && cu_jget(os, "topologyName")) {
        static const char *const f[] = { "nodeLabels", "tolerations", "topologyName" };
        for (size_t i = 0; i < 3; i++) {
            json_object *a = cu_jget(ns, f[i]), *b = cu_jget(os, f[i]);
            if ((a != NULL) != (b != NULL) || (a && !cu_json_equal(a, b)))
                ferr(&e, "spec",
                     "Invalid value: \"object\": %s %s immutable when topologyName is set", f[i],
                     i < 2 ? "are" : "is");
        }
    }
    errs_deny(resp, &e);
    cu_diag_free(&e);
}

/* vtopology.kb.io: Kueue has no Topology webhook; its CRD's schema and CEL
 * rules check it. This one states them for API servers that do not run
 * CEL (the embedded cluster): the object's rules (cu_validate.c), and on
 * UPDATE that spec.levels did not change. */
static void v_topology(const cu_wh_env *env, cu_wh_req *req, cu_wh_resp *resp)
{
    (void)env;
    if (req->op != CU_WH_CREATE && req->op != CU_WH_UPDATE)
        return;
    cu_diag e;
    cu_diag_init(&e);
    api_validate(&e, CU_KIND_TOPOLOGY, req->object, NULL);
    if (req->op == CU_WH_UPDATE && req->old_object &&
        !cu_json_equal(cu_jpath(req->object, "spec.levels"),
                       cu_jpath(req->old_object, "spec.levels")))
        ferr(&e, "spec.levels", "Invalid value: \"array\": " MSG_IMMUTABLE);
    errs_deny(resp, &e);
    cu_diag_free(&e);
}

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

static int framework_on(const cu_wh_env *env, const char *framework)
{
    return cu_config_framework_enabled(env ? env->cfg : NULL, framework);
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

static const char *queue_name(json_object *obj)
{
    const char *qn = label(obj, CU_LABEL_QUEUE_NAME);
    return qn && *qn ? qn : NULL;
}

/* jobframework's ApplyDefaultLocalQueue: the queue-name label "default"
 * when obj has none, its namespace has the LocalQueue "default" and obj is
 * not controlled by an object of an enabled integration. */
static void default_local_queue(const cu_wh_env *env, cu_wh_req *req, json_object *obj)
{
    const cu_config *cfg = env ? env->cfg : NULL;
    if (!queue_name(obj) && default_lq_exists(env, obj_ns(req, obj)) && !owner_managed(cfg, obj))
        set_label(obj, CU_LABEL_QUEUE_NAME, "default");
}

/* The labels of namespace ns for the managed-namespaces selector: from
 * env, or (no callback) the one label the API server sets on every
 * Namespace. NULL, with resp denied as Kueue's webhooks deny it, when the
 * Namespace is not known. *own backs the made-up labels. */
static const cu_kvs *ns_labels_or_deny(const cu_wh_env *env, const char *ns, cu_kv *own_kv,
                                       cu_kvs *own, cu_wh_resp *resp)
{
    ns = ns ? ns : "";
    if (env && env->ns_labels) {
        const cu_kvs *l = env->ns_labels(env->ud, ns);
        if (!l)
            cu_wh_deny(resp, "failed to get namespace: namespaces \"%s\" not found", ns);
        return l;
    }
    own_kv->key = "kubernetes.io/metadata.name";
    own_kv->value = ns;
    own->n = 1;
    own->items = own_kv;
    return own;
}

/* jobframework's WorkloadShouldBeSuspended: 1 when obj (just defaulted)
 * is to be held for admission, 0 when not, -1 with resp denied when its
 * Namespace is not known. Kueue reads the owner object to see whether it
 * is managed itself; the hooks have no API client, so an owner of an
 * enabled integration counts as managed. */
static int should_suspend(const cu_wh_env *env, cu_wh_req *req, json_object *obj, cu_wh_resp *resp)
{
    const cu_config *cfg = env ? env->cfg : NULL;
    if (owner_managed(cfg, obj))
        return 0;
    if (queue_name(obj))
        return 1;
    if (!cfg || !cfg->manage_jobs_without_queue_name)
        return 0;
    cu_kv kv;
    cu_kvs own;
    const cu_kvs *nsl = ns_labels_or_deny(env, obj_ns(req, obj), &kv, &own, resp);
    if (!nsl)
        return -1;
    return cu_config_manages_unlabelled(cfg, nsl);
}

/* The defaulter of the kinds with spec.suspend (Kueue's Job and JobSet
 * webhooks): the default LocalQueue, then spec.suspend true when managed.
 * A suspended object stays so; nothing is unsuspended here. */
static void default_suspend_spec(const cu_wh_env *env, cu_wh_req *req, cu_wh_resp *resp,
                                 const char *framework)
{
    json_object *obj = req->object;
    if (req->op != CU_WH_CREATE || !framework_on(env, framework) ||
        !json_object_is_type(obj, json_type_object))
        return;
    default_local_queue(env, req, obj);
    int suspend = should_suspend(env, req, obj, resp);
    if (suspend == 1 && !suspended(obj)) {
        json_object *spec = cu_jchild(obj, "spec");
        if (spec)
            json_object_object_add(spec, "suspend", json_object_new_boolean(1));
    }
}

/* mjob.kb.io: Kueue's Job defaulter. */
static void m_job(const cu_wh_env *env, cu_wh_req *req, cu_wh_resp *resp)
{
    default_suspend_spec(env, req, resp, FW_JOB);
}

/* mjobset.kb.io: Kueue's JobSet defaulter (the same steps as the Job's). */
static void m_jobset(const cu_wh_env *env, cu_wh_req *req, cu_wh_resp *resp)
{
    default_suspend_spec(env, req, resp, FW_JOBSET);
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
    int b = cu_go_parse_bool(v);
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
    return v && cu_go_parse_bool(v) == 1;
}

/* jobframework's ValidateJobOnCreate: the labels every integration has. */
static void jf_create_rules(cu_diag *e, json_object *obj)
{
    check_crd_name_label(e, obj, CU_LABEL_QUEUE_NAME);
    check_crd_name_label(e, obj, CU_LABEL_PREBUILT_WORKLOAD);
    check_max_exec(e, obj);
}

/* Kueue's TAS rules on one pod template (tmpl; path: its metadata) of a
 * pod set of count pods; bound_always: the slice-size bound also when the
 * annotations have other errors (JobSet, LeaderWorkerSet; the Job checks
 * it only on otherwise valid annotations). */
static void tas_rules(cu_diag *e, json_object *tmpl, const char *path, int32_t count,
                      int bound_always)
{
    json_object *ann = cu_jpath(tmpl, "metadata.annotations");
    size_t before = e->nerrors;
    cu_topo_request_validate(cu_ann_get_json, ann, path, e);
    if (bound_always || e->nerrors == before)
        cu_topo_slice_bound(cu_ann_get_json, ann, path, count, e);
}

/* jobframework's ValidateJobOnCreate and the Job's own annotation rules. */
static void job_create_rules(cu_diag *e, json_object *job, int min_par)
{
    jf_create_rules(e, job);
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

/* jobframework's rule on the WorkloadPriorityClass label: not added to
 * a running object (nsus: the new one is suspended), never removed. */
static void wpc_update_rules(cu_diag *e, json_object *nw, json_object *old, int nsus)
{
    char path[160];
    cu_buf t;
    cu_buf_init(&t, 0);
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
    cu_buf_free(&t);
}

/* jobframework's ValidateJobOnUpdate; nsus, osus: the new and the old
 * object are suspended (each integration's IsSuspended). */
static void jf_update_rules(const cu_wh_env *env, cu_diag *e, json_object *nw, json_object *old,
                            const char *ns, int nsus, int osus)
{
    char path[160];
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
        check_crd_name_label(e, nw, CU_LABEL_PREBUILT_WORKLOAD);
    else
        immutable_label(e, nw, old, CU_LABEL_PREBUILT_WORKLOAD);
    /* the maximum execution time */
    if (!nsus || !osus)
        immutable_label(e, nw, old, LBL_MAX_EXEC);
    /* the WorkloadPriorityClass */
    wpc_update_rules(e, nw, old, nsus);
}

static void job_update_rules(const cu_wh_env *env, cu_diag *e, json_object *nw, json_object *old,
                             const char *ns)
{
    char path[160];
    int nsus = suspended(nw), osus = suspended(old);
    jf_update_rules(env, e, nw, old, ns, nsus, osus);
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
}

/* vjob.kb.io: Kueue's Job validator. */
static void v_job(const cu_wh_env *env, cu_wh_req *req, cu_wh_resp *resp)
{
    json_object *job = req->object;
    if ((req->op != CU_WH_CREATE && req->op != CU_WH_UPDATE) || !framework_on(env, FW_JOB) ||
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
    tas_rules(&e, cu_jpath(job, "spec.template"), "spec.template.metadata", job_pods(job), 0);
    errs_deny(resp, &e);
    cu_diag_free(&e);
}

/* vjobset.kb.io: Kueue's JobSet validator: jobframework's rules on
 * create; on update those of an update and then those of a create. */
static void v_jobset(const cu_wh_env *env, cu_wh_req *req, cu_wh_resp *resp)
{
    json_object *js = req->object;
    if ((req->op != CU_WH_CREATE && req->op != CU_WH_UPDATE) || !framework_on(env, FW_JOBSET) ||
        !json_object_is_type(js, json_type_object))
        return;
    cu_diag e;
    cu_diag_init(&e);
    json_object *old = req->old_object;
    if (req->op == CU_WH_UPDATE && old)
        jf_update_rules(env, &e, js, old, obj_ns(req, js), suspended(js), suspended(old));
    jf_create_rules(&e, js);
    json_object *rjs = cu_jpath(js, "spec.replicatedJobs");
    size_t n = cu_jarr_len(rjs);
    cu_topo_member *m = calloc(n ? n : 1, sizeof(*m));
    char(*paths)[160] = calloc(n ? n : 1, sizeof(*paths));
    int built = m && paths;
    for (size_t i = 0; m && paths && i < n; i++) {
        json_object *rj = json_object_array_get_idx(rjs, i);
        json_object *jspec = cu_jpath(rj, "template.spec");
        json_object *par = cu_jget(jspec, "parallelism"), *comp = cu_jget(jspec, "completions");
        int32_t replicas = (int32_t)cu_jas_int64(cu_jget(rj, "replicas"), 1);
        m[i].count = cu_jobset_podset_count(replicas, par != NULL, (int32_t)cu_jas_int64(par, 1),
                                            comp != NULL, (int32_t)cu_jas_int64(comp, 1));
        snprintf(paths[i], sizeof(paths[i]),
                 "spec.replicatedJobs[%zu].template.spec.template.metadata.annotations", i);
        m[i].path = paths[i];
        built &=
            cu_topo_request_build(cu_ann_get_json, cu_jpath(jspec, "template.metadata.annotations"),
                                  CU_LABEL_JOB_COMPLETION_INDEX, CU_LABEL_JOBSET_JOB_INDEX,
                                  &replicas, &m[i].req) == 0;
    }
    if (built) /* Kueue: only when the pod sets could be built */
        cu_topo_groups_validate(m, n, &e);
    for (size_t i = 0; m && paths && i < n; i++) {
        json_object *jspec = cu_jpath(json_object_array_get_idx(rjs, i), "template.spec");
        char path[160];
        snprintf(path, sizeof(path), "spec.replicatedJobs[%zu].template.spec.template.metadata", i);
        tas_rules(&e, cu_jget(jspec, "template"), path, m[i].count, 1);
    }
    free(m);
    free(paths);
    errs_deny(resp, &e);
    cu_diag_free(&e);
}

/* ---------------- Pod ---------------- */

static int has_gate(json_object *pod, const char *gate)
{
    json_object *gates = cu_jpath(pod, "spec.schedulingGates");
    for (size_t i = 0; i < cu_jarr_len(gates); i++) {
        const char *n = cu_jstr(json_object_array_get_idx(gates, i), "name");
        if (n && !strcmp(n, gate))
            return 1;
    }
    return 0;
}

/* Kueue's IsSuspended of one pod: gated by Kueue, or ended. */
static int pod_suspended(json_object *pod)
{
    const char *phase = cu_jpath_str(pod, "status.phase");
    return has_gate(pod, CU_POD_SCHEDULING_GATE) ||
           (phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed")));
}

/* Appends s to the string array obj[key] unless it is there (a missing
 * or non-array member becomes a new array). */
static void add_to_list(json_object *obj, const char *key, json_object *item, const char *name)
{
    json_object *arr = NULL;
    if (!json_object_object_get_ex(obj, key, &arr) || !json_object_is_type(arr, json_type_array)) {
        arr = json_object_new_array();
        json_object_object_add(obj, key, arr);
    }
    for (size_t i = 0; i < json_object_array_length(arr); i++) {
        json_object *x = json_object_array_get_idx(arr, i);
        const char *have = item ? cu_jstr(x, "name") : cu_jas_str(x);
        if (have && !strcmp(have, name)) {
            json_object_put(item);
            return;
        }
    }
    json_object_array_add(arr, item ? item : json_object_new_string(name));
}

/* Kueue's pod defaulter, after its namespace and owner filters: 1 when the
 * pod is to be gated, 0 when left alone, -1 with resp denied. */
static int pod_is_managed(const cu_wh_env *env, cu_wh_req *req, json_object *pod, cu_wh_resp *resp)
{
    const cu_config *cfg = env ? env->cfg : NULL; /* set: the pod integration is on */
    cu_kv kv;
    cu_kvs nsown;
    int r = 0;
    const cu_kvs *nsl = ns_labels_or_deny(env, obj_ns(req, pod), &kv, &nsown, resp);
    if (!nsl)
        r = -1;
    else if (cfg && cu_labelsel_matches(&cfg->managed_ns_selector, nsl) &&
             !owner_managed(cfg, pod)) {
        default_local_queue(env, req, pod);
        r = queue_name(pod) || cfg->manage_jobs_without_queue_name;
    }
    return r;
}

/* mpod.kb.io: Kueue's pod defaulter. A pod whose template came from a
 * parent that suspends its pods itself (annotation pod-suspending-parent,
 * as LeaderWorkerSet's) is gated without more; another one is managed when
 * its namespace matches managedJobsNamespaceSelector, it is not controlled
 * by an object of an enabled integration, and it has a queue name (maybe
 * the default LocalQueue) or the Configuration manages unlabelled objects.
 * A managed pod gets the label managed=true, the finalizer and the gate;
 * a pod suspended by its parent the gate only (Kueue's
 * SkipFinalizersForPodsSuspendedByParent, on by default); both get the
 * role-hash annotation (kept when set). */
static void m_pod(const cu_wh_env *env, cu_wh_req *req, cu_wh_resp *resp)
{
    json_object *pod = req->object;
    if (req->op != CU_WH_CREATE || !framework_on(env, FW_POD) ||
        !json_object_is_type(pod, json_type_object))
        return;
    int by_parent = annotation(pod, CU_ANN_POD_SUSPENDING_PARENT) != NULL;
    if (!by_parent) {
        int m = pod_is_managed(env, req, pod, resp);
        if (m != 1)
            return;
        set_label(pod, CU_LABEL_MANAGED, "true");
        add_to_list(cu_jchild(pod, "metadata"), "finalizers", NULL, CU_FINALIZER_MANAGED);
    }
    json_object *gate = json_object_new_object();
    cu_jset_str(gate, "name", CU_POD_SCHEDULING_GATE);
    add_to_list(cu_jchild(pod, "spec"), "schedulingGates", gate, CU_POD_SCHEDULING_GATE);
    /* Topology-Aware Scheduling (on, as in Kueue v0.17): the pod group's
     * index label copied from the label the annotation names, and the
     * topology gate, which the ungater takes off once TAS placed the pod
     * (and Kueue's ungating of a pod set admitted without TAS) */
    const char *ixl = annotation(pod, CU_ANN_POD_GROUP_INDEX_LABEL);
    if (ixl) {
        const char *v = label(pod, ixl);
        set_label(pod, CU_LABEL_POD_GROUP_INDEX, v ? v : "");
    }
    json_object *tgate = json_object_new_object();
    cu_jset_str(tgate, "name", CU_TAS_GATE);
    add_to_list(cu_jchild(pod, "spec"), "schedulingGates", tgate, CU_TAS_GATE);
    /* the role of the pod in its group's Workload (Kueue's addRoleHash) */
    char role[CU_POD_ROLE_MAX + 1];
    json_object *meta = cu_jchild(pod, "metadata");
    json_object *anns = meta ? cu_jchild(meta, "annotations") : NULL;
    if (anns && cu_pod_role(pod, role) == 0)
        cu_jset_str(anns, CU_ANN_POD_ROLE_HASH, role);
}

static void ann_path(char *buf, size_t n, const char *key)
{
    snprintf(buf, n, "metadata.annotations[%s]", key);
}

/* The pod rules of create and update (Kueue's validateCommon). */
static void pod_common_rules(cu_diag *e, json_object *pod)
{
    char path[160], gpath[160], cpath[160];
    cu_buf t;
    cu_buf_init(&t, 0);
    const char *managed = label(pod, CU_LABEL_MANAGED);
    if (managed && strcmp(managed, "true")) {
        labels_path(path, sizeof(path), CU_LABEL_MANAGED);
        ferr(e, path, "Forbidden: managed label value can only be 'true'");
    }
    /* the group's label and annotation */
    const char *group = or_empty(label(pod, CU_LABEL_POD_GROUP_NAME));
    const char *gtc = annotation(pod, CU_ANN_POD_GROUP_TOTAL_COUNT);
    labels_path(gpath, sizeof(gpath), CU_LABEL_POD_GROUP_NAME);
    ann_path(cpath, sizeof(cpath), CU_ANN_POD_GROUP_TOTAL_COUNT);
    static const char both[] =
        "Required value: both the '" CU_ANN_POD_GROUP_TOTAL_COUNT
        "' annotation and the '" CU_LABEL_POD_GROUP_NAME "' label should be set";
    if (!*group && gtc) {
        ferr(e, gpath, "%s", both);
    } else if (*group) {
        check_crd_name_label(e, pod, CU_LABEL_POD_GROUP_NAME);
        if (!gtc) {
            ferr(e, cpath, "%s", both);
        } else {
            long long n;
            char why[512];
            if (go_atoi(gtc, &n, why, sizeof(why)) != 0)
                ferr(e, cpath, "Invalid value: %s: %s", q(&t, gtc), why);
            else if (n < 1)
                ferr(e, cpath,
                     "Invalid value: %s: incorrect annotation value '%s=%s': group total count "
                     "should be greater than zero",
                     q(&t, gtc), CU_ANN_POD_GROUP_TOTAL_COUNT, gtc);
        }
    }
    cu_topo_request_validate(cu_ann_get_json, cu_jpath(pod, "metadata.annotations"), "metadata", e);
    /* a prebuilt Workload must be the group's (Kueue shows the field path
     * as the value, which marshals to {}) */
    const char *pre = label(pod, CU_LABEL_PREBUILT_WORKLOAD);
    if (pre && *group && strcmp(pre, group)) {
        labels_path(path, sizeof(path), CU_LABEL_PREBUILT_WORKLOAD);
        ferr(e, path, "Invalid value: {}: prebuilt workload and pod group should be equal");
    }
    cu_buf_free(&t);
}

/* Kueue's warning for a pod labelled managed=true whose controller is an
 * object of an enabled integration. */
static void pod_managed_warning(const cu_wh_env *env, cu_wh_resp *resp, json_object *pod)
{
    const char *m = label(pod, CU_LABEL_MANAGED);
    if (m && !strcmp(m, "true") && owner_managed(env ? env->cfg : NULL, pod))
        cu_diag_warn(&resp->warnings,
                     "pod owner is managed by kueue, label '%s=true' might lead to unexpected "
                     "behaviour",
                     CU_LABEL_MANAGED);
}

static int unretriable(json_object *pod)
{
    const char *v = annotation(pod, CU_ANN_POD_RETRIABLE_IN_GROUP);
    return v && !strcmp(v, "false");
}

/* vpod.kb.io: Kueue's pod validator. */
static void v_pod(const cu_wh_env *env, cu_wh_req *req, cu_wh_resp *resp)
{
    json_object *pod = req->object, *old = req->old_object;
    if ((req->op != CU_WH_CREATE && req->op != CU_WH_UPDATE) || !framework_on(env, FW_POD) ||
        !json_object_is_type(pod, json_type_object))
        return;
    cu_diag e;
    cu_diag_init(&e);
    if (req->op == CU_WH_CREATE || !old) {
        jf_create_rules(&e, pod);
        pod_common_rules(&e, pod);
        pod_managed_warning(env, resp, pod);
    } else {
        jf_update_rules(env, &e, pod, old, obj_ns(req, pod), pod_suspended(pod),
                        pod_suspended(old));
        pod_common_rules(&e, pod);
        if (label(pod, CU_LABEL_POD_GROUP_NAME) && *label(pod, CU_LABEL_POD_GROUP_NAME) &&
            unretriable(old) && !unretriable(pod)) {
            char path[160];
            ann_path(path, sizeof(path), CU_ANN_POD_RETRIABLE_IN_GROUP);
            ferr(&e, path, "Forbidden: unretriable pod group can't be converted to retriable");
        }
        const char *og = label(old, CU_LABEL_POD_GROUP_NAME);
        if (og && *og)
            immutable_label(&e, pod, old, CU_LABEL_POD_GROUP_NAME);
        if (!annotation(pod, CU_ANN_POD_SUSPENDING_PARENT))
            pod_managed_warning(env, resp, pod);
    }
    errs_deny(resp, &e);
    cu_diag_free(&e);
}

/* ---------------- LeaderWorkerSet ---------------- */

/* The leader's pod template, or NULL when the LeaderWorkerSet has none. */
static json_object *lws_leader(json_object *lws)
{
    json_object *t = cu_jpath(lws, "spec.leaderWorkerTemplate.leaderTemplate");
    return json_object_is_type(t, json_type_object) ? t : NULL;
}

/* What Kueue's LeaderWorkerSet defaulter sets on a pod template of a
 * managed LeaderWorkerSet: the priority-class label, the annotations that
 * make the pod webhook gate its pods as one serving group, and (Topology
 * Aware Scheduling, on by default) the workers' index offset behind a
 * leader. */
static void lws_template_default(json_object *lws, json_object *tmpl, int worker)
{
    json_object *meta = cu_jchild(tmpl, "metadata");
    if (!meta)
        return;
    const char *wpc = label(lws, CU_LABEL_PRIORITY_CLASS);
    if (wpc && *wpc)
        cu_jset_str(cu_jchild(meta, "labels"), CU_LABEL_PRIORITY_CLASS, wpc);
    json_object *ann = cu_jchild(meta, "annotations");
    if (!ann)
        return;
    cu_jset_str(ann, CU_ANN_POD_SUSPENDING_PARENT, FW_LWS);
    cu_jset_str(ann, CU_ANN_POD_GROUP_SERVING, "true");
    if (worker && lws_leader(lws) && !cu_jget(ann, CU_ANN_PODSET_GROUP_NAME))
        cu_jset_str(ann, CU_ANN_POD_INDEX_OFFSET, "1");
}

/* mleaderworkerset.kb.io: Kueue's LeaderWorkerSet defaulter (CREATE and
 * UPDATE): the default LocalQueue, then, when managed, the pod templates
 * (leader and worker). */
static void m_lws(const cu_wh_env *env, cu_wh_req *req, cu_wh_resp *resp)
{
    json_object *lws = req->object;
    if ((req->op != CU_WH_CREATE && req->op != CU_WH_UPDATE) || !framework_on(env, FW_LWS) ||
        !json_object_is_type(lws, json_type_object))
        return;
    default_local_queue(env, req, lws);
    if (should_suspend(env, req, lws, resp) != 1)
        return;
    json_object *lwt = cu_jchild(cu_jchild(lws, "spec"), "leaderWorkerTemplate");
    if (!lwt)
        return;
    json_object *leader = lws_leader(lws);
    if (leader)
        lws_template_default(lws, leader, 0);
    lws_template_default(lws, cu_jchild(lwt, "workerTemplate"), 1);
}

/* 1 when a and b are equal as Kubernetes' semantic equality sees them:
 * absent, null, [] and {} alike; otherwise deep JSON equality. */
static int sem_empty(json_object *v)
{
    return !v || (json_object_is_type(v, json_type_array) && !json_object_array_length(v)) ||
           (json_object_is_type(v, json_type_object) && !json_object_object_length(v));
}

static int sem_equal(json_object *a, json_object *b)
{
    if (sem_empty(a) && sem_empty(b))
        return 1;
    return cu_json_equal(a, b);
}

/* Two resource lists with the same names and quantities of equal value. */
static int requests_equal(json_object *a, json_object *b)
{
    if (sem_empty(a) || sem_empty(b))
        return sem_empty(a) && sem_empty(b);
    if (!json_object_is_type(a, json_type_object) || !json_object_is_type(b, json_type_object) ||
        json_object_object_length(a) != json_object_object_length(b))
        return cu_json_equal(a, b);
    json_object_object_foreach (a, k, va) {
        json_object *vb = cu_jget(b, k);
        const char *sa = cu_jas_str(va), *sb = cu_jas_str(vb);
        int64_t ma, mb;
        if (!sa || !sb || cu_qty_parse(sa, &ma, NULL) != CU_OK ||
            cu_qty_parse(sb, &mb, NULL) != CU_OK) {
            if (!cu_json_equal(va, vb))
                return 0;
        } else if (ma != mb) {
            return 0;
        }
    }
    return 1;
}

/* One container's part of the pod's shape (Kueue's ContainersShape):
 * {"ports":..., "resources":{"requests":...}}, a new object. */
static json_object *ctr_shape(json_object *c)
{
    json_object *o = json_object_new_object(), *r = json_object_new_object();
    json_object *ports = cu_jget(c, "ports"), *req = cu_jpath(c, "resources.requests");
    json_object_object_add(o, "ports", sem_empty(ports) ? NULL : cu_jcopy(ports));
    json_object_object_add(r, "requests", sem_empty(req) ? NULL : cu_jcopy(req));
    json_object_object_add(o, "resources", r);
    return o;
}

static void immutable_err(cu_diag *e, const char *path, json_object *nv)
{
    ferr(e, path, "Invalid value: %s: " MSG_IMMUTABLE, jtext(nv));
}

/* Kueue's ValidateImmutablePodGroupPodSpec: of a pod spec, the fields
 * that make a pod's role (its shape) cannot change; path is the spec's. */
static void shape_immutable(cu_diag *e, json_object *ns, json_object *os, const char *path)
{
    static const char *const ctrs[] = { "initContainers", "containers" };
    static const char *const fields[] = {
        "nodeSelector",     "affinity",       "tolerations",
        "runtimeClassName", "priority",       "topologySpreadConstraints",
        "overhead",         "resourceClaims",
    };
    char p[512];
    for (size_t k = 0; k < 2; k++) {
        json_object *na = cu_jget(ns, ctrs[k]), *oa = cu_jget(os, ctrs[k]);
        size_t nn = cu_jarr_len(na), on = cu_jarr_len(oa);
        snprintf(p, sizeof(p), "%s.%s", path, ctrs[k]);
        if (nn != on) {
            json_object *shape = nn ? json_object_new_array() : NULL;
            for (size_t i = 0; i < nn; i++)
                json_object_array_add(shape, ctr_shape(json_object_array_get_idx(na, i)));
            immutable_err(e, p, shape);
            json_object_put(shape);
            continue;
        }
        for (size_t i = 0; i < nn; i++) {
            json_object *nc = json_object_array_get_idx(na, i),
                        *oc = json_object_array_get_idx(oa, i);
            json_object *nr = cu_jpath(nc, "resources.requests");
            if (!requests_equal(nr, cu_jpath(oc, "resources.requests"))) {
                snprintf(p, sizeof(p), "%s.%s[%zu].resources.requests", path, ctrs[k], i);
                immutable_err(e, p, sem_empty(nr) ? NULL : nr);
            }
            json_object *np = cu_jget(nc, "ports");
            if (!sem_equal(np, cu_jget(oc, "ports"))) {
                snprintf(p, sizeof(p), "%s.%s[%zu].ports", path, ctrs[k], i);
                immutable_err(e, p, sem_empty(np) ? NULL : np);
            }
        }
    }
    for (size_t k = 0; k < sizeof(fields) / sizeof(fields[0]); k++) {
        json_object *nv = cu_jget(ns, fields[k]);
        if (!sem_equal(nv, cu_jget(os, fields[k]))) {
            snprintf(p, sizeof(p), "%s.%s", path, fields[k]);
            immutable_err(e, p, sem_empty(nv) ? NULL : nv);
        }
    }
}

/* A pod template of a managed LeaderWorkerSet keeps its shape; the
 * leader's (optional) added or removed is refused as a whole. */
static void lws_template_immutable(cu_diag *e, json_object *nt, json_object *ot, const char *path,
                                   int optional)
{
    if (optional && (!nt || !ot)) {
        if (nt || ot)
            immutable_err(e, path, nt);
        return;
    }
    char p[256];
    snprintf(p, sizeof(p), "%s.spec", path);
    shape_immutable(e, cu_jget(nt, "spec"), cu_jget(ot, "spec"), p);
}

/* vleaderworkerset.kb.io: Kueue's LeaderWorkerSet validator. */
static void v_lws(const cu_wh_env *env, cu_wh_req *req, cu_wh_resp *resp)
{
    json_object *lws = req->object, *old = req->old_object;
    if ((req->op != CU_WH_CREATE && req->op != CU_WH_UPDATE) || !framework_on(env, FW_LWS) ||
        !json_object_is_type(lws, json_type_object))
        return;
    cu_diag e;
    cu_diag_init(&e);
    check_crd_name_label(&e, lws, CU_LABEL_QUEUE_NAME);
    int32_t size = cu_lws_size(lws);
    json_object *leader = lws_leader(lws);
    json_object *worker = cu_jpath(lws, "spec.leaderWorkerTemplate.workerTemplate");
    if (leader)
        tas_rules(&e, leader, "spec.leaderWorkerTemplate.leaderTemplate.metadata", 1, 1);
    tas_rules(&e, worker, "spec.leaderWorkerTemplate.workerTemplate.metadata",
              leader ? size - 1 : size, 1);
    cu_topo_member m[2] = {
        { "spec.leaderWorkerTemplate.leaderTemplate.metadata.annotations", 1, { 0 } },
        { "spec.leaderWorkerTemplate.workerTemplate.metadata.annotations",
          leader ? size - 1 : size,
          { 0 } },
    };
    if ((!leader || cu_topo_request_build(cu_ann_get_json, cu_jpath(leader, "metadata.annotations"),
                                          NULL, NULL, NULL, &m[0].req) == 0) &&
        cu_topo_request_build(cu_ann_get_json, cu_jpath(worker, "metadata.annotations"),
                              CU_LABEL_LWS_WORKER_INDEX, NULL, NULL, &m[1].req) == 0)
        cu_topo_groups_validate(leader ? m : m + 1, leader ? 2 : 1, &e);
    if (req->op == CU_WH_UPDATE && old) {
        immutable_label(&e, lws, old, CU_LABEL_QUEUE_NAME);
        /* a LeaderWorkerSet counts as suspended while none of its
         * replicas is ready */
        wpc_update_rules(&e, lws, old, cu_jas_int64(cu_jpath(old, "status.readyReplicas"), 0) == 0);
        int s = should_suspend(env, req, lws, resp);
        if (s < 0) {
            cu_diag_free(&e);
            return;
        }
        if (s == 1) {
            lws_template_immutable(&e, lws_leader(lws), lws_leader(old),
                                   "spec.leaderWorkerTemplate.leaderTemplate", 1);
            lws_template_immutable(&e, cu_jpath(lws, "spec.leaderWorkerTemplate.workerTemplate"),
                                   cu_jpath(old, "spec.leaderWorkerTemplate.workerTemplate"),
                                   "spec.leaderWorkerTemplate.workerTemplate", 0);
        }
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
    { "mjobset.kb.io", "/mutate-jobset-x-k8s-io-v1alpha2-jobset", 1, "jobset.x-k8s.io", "v1alpha2",
      "jobsets", OP(CU_WH_CREATE), m_jobset },
    { "mleaderworkerset.kb.io", "/mutate-leaderworkerset-x-k8s-io-v1-leaderworkerset", 1,
      "leaderworkerset.x-k8s.io", "v1", "leaderworkersets", OPS(CU_WH_CREATE, CU_WH_UPDATE),
      m_lws },
    { "mpod.kb.io", "/mutate--v1-pod", 1, "", "v1", "pods", OP(CU_WH_CREATE), m_pod },
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
    { "vjobset.kb.io", "/validate-jobset-x-k8s-io-v1alpha2-jobset", 0, "jobset.x-k8s.io",
      "v1alpha2", "jobsets", OPS(CU_WH_CREATE, CU_WH_UPDATE), v_jobset },
    { "vleaderworkerset.kb.io", "/validate-leaderworkerset-x-k8s-io-v1-leaderworkerset", 0,
      "leaderworkerset.x-k8s.io", "v1", "leaderworkersets", OPS(CU_WH_CREATE, CU_WH_UPDATE),
      v_lws },
    { "vpod.kb.io", "/validate--v1-pod", 0, "", "v1", "pods", OPS(CU_WH_CREATE, CU_WH_UPDATE),
      v_pod },
    { "vresourceflavor.kb.io", "/validate-kueue-x-k8s-io-v1beta2-resourceflavor", 0, KV,
      "resourceflavors", OPS(CU_WH_CREATE, CU_WH_UPDATE), v_resource_flavor },
    { "vtopology.kb.io", "/validate-kueue-x-k8s-io-v1beta2-topology", 0, KV, "topologies",
      OPS(CU_WH_CREATE, CU_WH_UPDATE), v_topology },
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
