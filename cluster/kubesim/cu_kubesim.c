/*
 * cu_kubesim.c - the simulated part of the embedded cluster: Nodes, a
 * Job controller, a default-scheduler model and a kubelet model, working
 * on the object store.
 *
 * The scheduler model (cu_sched_pick) follows kube-scheduler's default
 * profile as far as Cueue's users can see it:
 *  - Filter, in plugin order, the first failing plugin giving the node's
 *    reasons: NodeUnschedulable ("node(s) were unschedulable"),
 *    TaintToleration (NoSchedule/NoExecute; "node(s) had untolerated taint
 *    {key: value}"), NodeAffinity (nodeSelector and required node
 *    affinity; "node(s) didn't match Pod's node affinity/selector"),
 *    NodeResourcesFit ("Too many pods", "Insufficient <resource>" per
 *    resource, pod requests against allocatable minus the requests of the
 *    non-terminal pods bound to the node).
 *  - Score: NodeResourcesFit with LeastAllocated (default) or
 *    MostAllocated over cpu and memory, weight 1 each, using the non-zero
 *    requests (a container without a cpu or memory request counts 100m /
 *    200Mi). Ties go to the first node name (kube-scheduler picks at
 *    random among ties; we want determinism).
 *  - The message is FitError.Error(): "0/N nodes are available: " then
 *    "<count> <reason>" strings sorted as strings (so "10 ..." sorts
 *    before "2 ..."), then the DefaultPreemption PostFilter's
 *    "preemption: 0/N nodes are available: ..." where nodes rejected by
 *    an unresolvable filter count as "Preemption is not helpful for
 *    scheduling" and nodes short of resources as "No preemption victims
 *    found for incoming pod" (or their Insufficient reasons when even
 *    evicting every lower-priority pod would not make room). The model
 *    never preempts.
 *
 * The controllers are stateless passes over the store (each lists what it
 * needs, writes what must change and returns how many writes it made), so
 * they converge: a pass over an unchanged store writes nothing. The
 * thread runs them when the store's resourceVersion moved and when a timed
 * transition is due (see "the thread" below).
 *
 * Job pods carry the finalizer batch.kubernetes.io/job-tracking, as with
 * the real Job controller: a terminal pod is first recorded in the Job's
 * status.uncountedTerminatedPods, then its finalizer is removed, then it
 * is folded into status.succeeded / status.failed, so a pod is counted
 * exactly once even across restarts. Pods the controller deletes itself
 * (suspension, completion, failure, lowered parallelism) lose their
 * finalizer first and are not counted as failed. Orphan pods (their Job
 * is gone) lose the finalizer so garbage collection can remove them.
 *
 * The kubelet model: a bound pod goes Running at once; with the annotation
 * cueue.dev/simulated-runtime (a Go duration) it Succeeds that long after
 * its (second-precision) startTime, all containers exiting 0; a malformed
 * annotation is ignored (the pod runs until deleted). A pod being deleted
 * goes Failed (containers exit 137), so the store can drop it once its
 * finalizers are gone.
 *
 * Not modelled (deliberately): preemption, preferred affinity and
 * PreferNoSchedule scoring, BalancedAllocation, inter-pod affinity and
 * topology spread, NoExecute eviction of running pods, Indexed completion
 * mode, podFailurePolicy, successPolicy, the exponential backoff between
 * pod failures, restartPolicy OnFailure restarts (pods never fail by
 * themselves).
 */
#include "cu_kubesim.h"
#include "cu_doc.h"
#include "cu_quantity.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define KS_TRACKING_FINALIZER "batch.kubernetes.io/job-tracking"
#define KS_RUNTIME_ANNOTATION "cueue.dev/simulated-runtime"
#define KS_NZ_CPU_MILLI 100LL                             /* 100m */
#define KS_NZ_MEM_MILLI (200LL * 1024 * 1024 * 1000)      /* 200Mi */
#define KS_EVENT_REPEAT_MS 10000    /* an identical event is bumped at most this often */
#define KS_MSG_MAX 1024             /* kube-scheduler truncates event messages to 1024 */

/* ================= json helpers ================= */

static json_object *jget(json_object *o, const char *k)
{
    json_object *v = NULL;
    if (!o || !json_object_is_type(o, json_type_object))
        return NULL;
    return json_object_object_get_ex(o, k, &v) ? v : NULL;
}

/* Follows a dotted path of keys (keys themselves must not hold dots). */
static json_object *jpath(json_object *o, const char *dotted)
{
    char key[128];
    const char *p = dotted;
    while (o && *p) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        if (n >= sizeof key)
            return NULL;
        memcpy(key, p, n);
        key[n] = '\0';
        o = jget(o, key);
        p = dot ? dot + 1 : p + n;
    }
    return o;
}

static const char *jstr(json_object *o)
{
    return o && json_object_is_type(o, json_type_string) ? json_object_get_string(o) : NULL;
}

static const char *jpstr(json_object *o, const char *dotted) { return jstr(jpath(o, dotted)); }

static int64_t jint(json_object *o, int64_t def)
{
    if (o && json_object_is_type(o, json_type_int))
        return json_object_get_int64(o);
    if (o && json_object_is_type(o, json_type_double))
        return (int64_t)json_object_get_double(o);
    return def;
}

static int jtrue(json_object *o)
{
    return o && json_object_is_type(o, json_type_boolean) && json_object_get_boolean(o);
}

static size_t jlen(json_object *a)
{
    return a && json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
}

static json_object *jidx(json_object *a, size_t i) { return json_object_array_get_idx(a, i); }

/* Returns o[k] as an object, creating (or replacing a non-object) when needed. */
static json_object *jchild(json_object *o, const char *k)
{
    json_object *v = jget(o, k);
    if (v && json_object_is_type(v, json_type_object))
        return v;
    v = json_object_new_object();
    json_object_object_add(o, k, v);
    return v;
}

/* A deep copy (new reference), or NULL. */
static json_object *jcopy(json_object *o)
{
    json_object *d = NULL;
    if (!o)
        return NULL;
    if (json_object_deep_copy(o, &d, NULL) != 0)
        return NULL;
    return d;
}

static void jset_str(json_object *o, const char *k, const char *v)
{
    json_object_object_add(o, k, json_object_new_string(v));
}

static void jset_int(json_object *o, const char *k, int64_t v)
{
    json_object_object_add(o, k, json_object_new_int64(v));
}

static int str_eq(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }

static void fmt_time(int64_t ms, char out[32]) { cu_time_format(ms, out, 32); }

/* A quantity given as a JSON string or number; 0 on success. */
static int qty_json(json_object *v, int64_t *milli)
{
    char buf[64];
    const char *s;
    if (!v)
        return -1;
    switch (json_object_get_type(v)) {
    case json_type_string:
        s = json_object_get_string(v);
        break;
    case json_type_int:
        snprintf(buf, sizeof buf, "%" PRId64, json_object_get_int64(v));
        s = buf;
        break;
    case json_type_double:
        snprintf(buf, sizeof buf, "%.15g", json_object_get_double(v));
        s = buf;
        break;
    default:
        return -1;
    }
    return cu_qty_parse(s, milli, NULL) == CU_OK ? 0 : -1;
}

static uint64_t fnv1a(uint64_t h, const char *s)
{
    if (!h)
        h = 1469598103934665603ULL;
    for (; s && *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    h ^= 0xff; /* separator */
    h *= 1099511628211ULL;
    return h;
}

/* ================= resource lists ================= */

typedef struct rent { const char *name; int64_t v; } rent;   /* name borrowed */
typedef struct rlist { size_t n, cap; rent *it; } rlist;

static rent *rl_find(const rlist *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->it[i].name, name) == 0)
            return &l->it[i];
    return NULL;
}

static int64_t rl_get(const rlist *l, const char *name)
{
    rent *e = rl_find(l, name);
    return e ? e->v : 0;
}

/* Adds v to name's entry (created at 0); -1 on OOM. */
static int rl_add(rlist *l, const char *name, int64_t v)
{
    rent *e = rl_find(l, name);
    if (!e) {
        if (l->n == l->cap) {
            size_t cap = l->cap ? l->cap * 2 : 8;
            rent *p = realloc(l->it, cap * sizeof(*p));
            if (!p)
                return -1;
            l->it = p;
            l->cap = cap;
        }
        e = &l->it[l->n++];
        e->name = name;
        e->v = 0;
    }
    e->v = cu_qty_sat_add(e->v, v);
    return 0;
}

static void rl_free(rlist *l)
{
    free(l->it);
    memset(l, 0, sizeof(*l));
}

/* ================= pod requests ================= */

/* What container c asks for res: requests[res], else limits[res] (the API
 * server defaults a missing request to the limit). nonzero: a missing cpu
 * or memory request counts as kube-scheduler's scoring defaults. */
static int64_t ctr_amount(json_object *c, const char *res, int nonzero)
{
    json_object *r = jget(c, "resources");
    json_object *v = jget(jget(r, "requests"), res);
    int64_t m = 0;
    if (!v)
        v = jget(jget(r, "limits"), res);
    if (v) {
        if (qty_json(v, &m) != 0 || m < 0)
            m = 0;
        return m;
    }
    if (nonzero && strcmp(res, "cpu") == 0)
        return KS_NZ_CPU_MILLI;
    if (nonzero && strcmp(res, "memory") == 0)
        return KS_NZ_MEM_MILLI;
    return 0;
}

/* The pod's effective request of res (Kubernetes' PodRequests):
 * max(sum(containers) + sum(sidecars), max over plain init containers of
 * (init + sidecars started before it)) + overhead. */
static int64_t pod_amount(json_object *spec, const char *res, int nonzero)
{
    json_object *cs = jget(spec, "containers"), *ics = jget(spec, "initContainers");
    int64_t sum = 0, sidecars = 0, init_max = 0, o = 0;
    for (size_t i = 0; i < jlen(cs); i++)
        sum = cu_qty_sat_add(sum, ctr_amount(jidx(cs, i), res, nonzero));
    for (size_t i = 0; i < jlen(ics); i++) {
        json_object *ic = jidx(ics, i);
        int64_t a = ctr_amount(ic, res, nonzero);
        if (str_eq(jstr(jget(ic, "restartPolicy")), "Always")) {
            sum = cu_qty_sat_add(sum, a);
            sidecars = cu_qty_sat_add(sidecars, a);
            a = sidecars;
        } else {
            a = cu_qty_sat_add(a, sidecars);
        }
        if (a > init_max)
            init_max = a;
    }
    if (init_max > sum)
        sum = init_max;
    if (qty_json(jget(jget(spec, "overhead"), res), &o) == 0 && o > 0)
        sum = cu_qty_sat_add(sum, o);
    return sum;
}

static int names_add(rlist *names, json_object *map)
{
    if (!map || !json_object_is_type(map, json_type_object))
        return 0;
    json_object_object_foreach(map, k, v) {
        (void)v;
        if (strcmp(k, "pods") == 0 || rl_find(names, k))
            continue;
        if (rl_add(names, k, 0) != 0)
            return -1;
    }
    return 0;
}

/* The pod's requests by resource name (names borrowed from pod). */
static int pod_requests(json_object *pod, rlist *out)
{
    json_object *spec = jget(pod, "spec");
    rlist names = {0};
    const char *lists[2] = { "containers", "initContainers" };
    int rc = 0;
    for (int l = 0; l < 2 && rc == 0; l++) {
        json_object *cs = jget(spec, lists[l]);
        for (size_t i = 0; i < jlen(cs) && rc == 0; i++) {
            json_object *r = jget(jidx(cs, i), "resources");
            rc = names_add(&names, jget(r, "requests"));
            if (rc == 0)
                rc = names_add(&names, jget(r, "limits"));
        }
    }
    if (rc == 0)
        rc = names_add(&names, jget(spec, "overhead"));
    for (size_t i = 0; i < names.n && rc == 0; i++)
        rc = rl_add(out, names.it[i].name, pod_amount(spec, names.it[i].name, 0));
    rl_free(&names);
    return rc;
}

static int check_qty_map(json_object *pod, json_object *map, const char *field, char *msg,
                         size_t msgn)
{
    int64_t m;
    if (!map)
        return 0;
    if (!json_object_is_type(map, json_type_object)) {
        snprintf(msg, msgn, "pod %s/%s: %s: must be a map of quantities",
                 jpstr(pod, "metadata.namespace") ? jpstr(pod, "metadata.namespace") : "",
                 jpstr(pod, "metadata.name") ? jpstr(pod, "metadata.name") : "", field);
        return -1;
    }
    json_object_object_foreach(map, k, v) {
        if (qty_json(v, &m) != 0 || m < 0) {
            snprintf(msg, msgn, "pod %s/%s: %s[%s]: invalid quantity %s",
                     jpstr(pod, "metadata.namespace") ? jpstr(pod, "metadata.namespace") : "",
                     jpstr(pod, "metadata.name") ? jpstr(pod, "metadata.name") : "", field, k,
                     json_object_to_json_string(v));
            return -1;
        }
    }
    return 0;
}

/* Checks every quantity of the pod; -1 with a message naming the field. */
static int pod_check(json_object *pod, char *msg, size_t msgn)
{
    json_object *spec = jget(pod, "spec");
    const char *lists[2] = { "containers", "initContainers" };
    char field[160];
    for (int l = 0; l < 2; l++) {
        json_object *cs = jget(spec, lists[l]);
        for (size_t i = 0; i < jlen(cs); i++) {
            json_object *r = jget(jidx(cs, i), "resources");
            snprintf(field, sizeof field, "spec.%s[%zu].resources.requests", lists[l], i);
            if (check_qty_map(pod, jget(r, "requests"), field, msg, msgn) != 0)
                return -1;
            snprintf(field, sizeof field, "spec.%s[%zu].resources.limits", lists[l], i);
            if (check_qty_map(pod, jget(r, "limits"), field, msg, msgn) != 0)
                return -1;
        }
    }
    return check_qty_map(pod, jget(spec, "overhead"), "spec.overhead", msg, msgn);
}

/* ================= node matching ================= */

/* kube's ToleratesTaint for one taint. */
static int tolerates(json_object *tols, const char *key, const char *value, const char *effect)
{
    for (size_t i = 0; i < jlen(tols); i++) {
        json_object *t = jidx(tols, i);
        const char *te = jstr(jget(t, "effect")), *tk = jstr(jget(t, "key"));
        const char *op = jstr(jget(t, "operator")), *tv = jstr(jget(t, "value"));
        if (te && *te && strcmp(te, effect) != 0)
            continue;
        if (tk && *tk && strcmp(tk, key) != 0)
            continue;
        if (str_eq(op, "Exists"))
            return 1;
        if ((!op || !*op || str_eq(op, "Equal")) && strcmp(tv ? tv : "", value ? value : "") == 0)
            return 1;
    }
    return 0;
}

static int in_values(json_object *vals, const char *v)
{
    for (size_t i = 0; i < jlen(vals); i++)
        if (str_eq(jstr(jidx(vals, i)), v))
            return 1;
    return 0;
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

/* One NodeSelectorRequirement; val is the label (or field) value or NULL. */
static int match_req(json_object *req, const char *val, int field)
{
    const char *op = jstr(jget(req, "operator"));
    json_object *vals = jget(req, "values");
    int64_t a, b;
    if (str_eq(op, "In"))
        return val && in_values(vals, val);
    if (str_eq(op, "NotIn"))
        return !val || !in_values(vals, val);
    if (field)
        return 0; /* matchFields only supports In and NotIn */
    if (str_eq(op, "Exists"))
        return val != NULL;
    if (str_eq(op, "DoesNotExist"))
        return val == NULL;
    if (str_eq(op, "Gt") || str_eq(op, "Lt")) {
        if (!val || jlen(vals) != 1 || parse_i64(val, &a) != 0 ||
            parse_i64(jstr(jidx(vals, 0)), &b) != 0)
            return 0;
        return str_eq(op, "Gt") ? a > b : a < b;
    }
    return 0;
}

/* A NodeSelectorTerm: all expressions and fields must match; an empty term
 * matches nothing. */
static int match_term(json_object *term, json_object *node)
{
    json_object *exprs = jget(term, "matchExpressions"), *fields = jget(term, "matchFields");
    json_object *labels = jpath(node, "metadata.labels");
    if (jlen(exprs) == 0 && jlen(fields) == 0)
        return 0;
    for (size_t i = 0; i < jlen(exprs); i++) {
        json_object *e = jidx(exprs, i);
        const char *key = jstr(jget(e, "key"));
        if (!match_req(e, key ? jstr(jget(labels, key)) : NULL, 0))
            return 0;
    }
    for (size_t i = 0; i < jlen(fields); i++) {
        json_object *e = jidx(fields, i);
        const char *key = jstr(jget(e, "key"));
        const char *val = str_eq(key, "metadata.name") ? jpstr(node, "metadata.name") : NULL;
        if (!match_req(e, val, 1))
            return 0;
    }
    return 1;
}

/* NodeAffinity's filter: nodeSelector and the required node affinity. */
static int match_affinity(json_object *pod, json_object *node)
{
    json_object *sel = jpath(pod, "spec.nodeSelector");
    json_object *labels = jpath(node, "metadata.labels");
    json_object *req;
    if (sel && json_object_is_type(sel, json_type_object)) {
        json_object_object_foreach(sel, k, v) {
            if (!str_eq(jstr(jget(labels, k)), jstr(v)))
                return 0;
        }
    }
    req = jpath(pod, "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution");
    if (req) {
        json_object *terms = jget(req, "nodeSelectorTerms");
        for (size_t i = 0; i < jlen(terms); i++)
            if (match_term(jidx(terms, i), node))
                return 1;
        return 0;
    }
    return 1;
}

/* The first NoSchedule/NoExecute taint the pod does not tolerate, or NULL. */
static json_object *untolerated_taint(json_object *pod, json_object *node)
{
    json_object *taints = jpath(node, "spec.taints"), *tols = jpath(pod, "spec.tolerations");
    for (size_t i = 0; i < jlen(taints); i++) {
        json_object *t = jidx(taints, i);
        const char *eff = jstr(jget(t, "effect"));
        if (!str_eq(eff, "NoSchedule") && !str_eq(eff, "NoExecute"))
            continue;
        if (!tolerates(tols, jstr(jget(t, "key")) ? jstr(jget(t, "key")) : "",
                       jstr(jget(t, "value")) ? jstr(jget(t, "value")) : "", eff))
            return t;
    }
    return NULL;
}

/* ================= reason histograms ================= */

typedef struct hist { size_t n, cap; char **r; int *c; } hist;

static void hist_add(hist *h, const char *reason)
{
    if (!h)
        return;
    for (size_t i = 0; i < h->n; i++)
        if (strcmp(h->r[i], reason) == 0) {
            h->c[i]++;
            return;
        }
    if (h->n == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 8;
        char **r = realloc(h->r, cap * sizeof(*r));
        if (!r)
            return;
        h->r = r;
        int *c = realloc(h->c, cap * sizeof(*c));
        if (!c)
            return;
        h->c = c;
        h->cap = cap;
    }
    h->r[h->n] = strdup(reason);
    if (!h->r[h->n])
        return;
    h->c[h->n++] = 1;
}

static void hist_free(hist *h)
{
    for (size_t i = 0; i < h->n; i++)
        free(h->r[i]);
    free(h->r);
    free(h->c);
    memset(h, 0, sizeof(*h));
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Appends "<count> <reason>" strings sorted as strings, joined by ", "
 * (Go's sort.Strings over fmt.Sprintf("%v %v", count, reason)). */
static void hist_join(const hist *h, cu_buf *b)
{
    char **s = calloc(h->n ? h->n : 1, sizeof(*s));
    if (!s)
        return;
    for (size_t i = 0; i < h->n; i++) {
        size_t n = strlen(h->r[i]) + 16;
        s[i] = malloc(n);
        if (s[i])
            snprintf(s[i], n, "%d %s", h->c[i], h->r[i]);
    }
    for (size_t i = 0; i < h->n; i++)
        if (!s[i])
            goto out;
    qsort(s, h->n, sizeof(*s), cmp_str);
    for (size_t i = 0; i < h->n; i++)
        cu_buf_printf(b, "%s%s", i ? ", " : "", s[i]);
out:
    for (size_t i = 0; i < h->n; i++)
        free(s[i]);
    free(s);
}

/* ================= the scheduler model ================= */

typedef struct nacc {
    rlist used;          /* requests of the non-terminal pods bound to the node */
    rlist used_low;      /* the part of it from pods of lower priority */
    int64_t npods, npods_low;
    int64_t nz_cpu, nz_mem;
} nacc;

static int phase_terminal(json_object *pod)
{
    const char *ph = jpstr(pod, "status.phase");
    return str_eq(ph, "Succeeded") || str_eq(ph, "Failed");
}

/* Allocatable amount of res (falls back to capacity when the node has no
 * allocatable map; a node that states neither pod count gets 110). */
static int64_t node_alloc(json_object *node, const char *res)
{
    json_object *al = jpath(node, "status.allocatable");
    json_object *v = al ? jget(al, res) : jget(jpath(node, "status.capacity"), res);
    int64_t m = 0;
    if (!v && strcmp(res, "pods") == 0 && !jget(jpath(node, "status.capacity"), "pods"))
        return 110 * 1000LL;
    if (!v || qty_json(v, &m) != 0)
        return 0;
    return m;
}

/* NodeResourcesFit's filter. exclude_low: as if every lower-priority pod
 * were evicted. Adds the reasons to h (may be NULL); returns their count. */
static int fit_resources(json_object *node, const nacc *na, const rlist *req, int exclude_low,
                         hist *h)
{
    int bad = 0;
    char buf[320];
    int64_t pods = na->npods - (exclude_low ? na->npods_low : 0);
    if ((pods + 1) * 1000 > node_alloc(node, "pods")) {
        bad++;
        hist_add(h, "Too many pods");
    }
    for (size_t i = 0; i < req->n; i++) {
        const char *name = req->it[i].name;
        int64_t want = req->it[i].v, free_;
        if (want <= 0)
            continue;
        free_ = cu_qty_sat_sub(node_alloc(node, name), rl_get(&na->used, name));
        if (exclude_low)
            free_ = cu_qty_sat_add(free_, rl_get(&na->used_low, name));
        if (want > free_) {
            bad++;
            snprintf(buf, sizeof buf, "Insufficient %s", name);
            hist_add(h, buf);
        }
    }
    return bad;
}

static int64_t pct(int64_t a, int64_t c)
{
    if (a > INT64_MAX / 100)
        return (int64_t)((long double)a * 100 / c);
    return a * 100 / c;
}

/* NodeResourcesFit's score for one resource. */
static int64_t res_score(int64_t requested, int64_t alloc, int most)
{
    if (most) {
        if (requested > alloc)
            requested = alloc;
        return pct(requested, alloc);
    }
    if (requested > alloc)
        return 0;
    return pct(alloc - requested, alloc);
}

static int64_t node_score(json_object *node, const nacc *na, int64_t pod_cpu, int64_t pod_mem,
                          int most)
{
    int64_t sum = 0, w = 0;
    int64_t cpu = node_alloc(node, "cpu"), mem = node_alloc(node, "memory") / 1000;
    if (cpu > 0) {
        sum += res_score(cu_qty_sat_add(na->nz_cpu, pod_cpu), cpu, most);
        w++;
    }
    if (mem > 0) {
        sum += res_score(cu_qty_sat_add(na->nz_mem, pod_mem) / 1000, mem, most);
        w++;
    }
    return w ? sum / w : 0;
}

int cu_sched_pick(json_object *const *nodes, size_t nnodes, json_object *const *bound,
                  size_t nbound, json_object *pod, int most_allocated, char *msg, size_t msgn)
{
    char dummy[8];
    rlist req = {0};
    nacc *acc = NULL;
    hist filt = {0}, post = {0};
    cu_buf b;
    int best = -1;
    int64_t best_score = -1, prio, pod_cpu, pod_mem;
    json_object *spec = jget(pod, "spec");

    if (!msg || !msgn) {
        msg = dummy;
        msgn = sizeof dummy;
    }
    msg[0] = '\0';
    if (nnodes == 0) {
        snprintf(msg, msgn, "no nodes available to schedule pods");
        return -1;
    }
    if (pod_check(pod, msg, msgn) != 0)
        return -1;
    acc = calloc(nnodes, sizeof(*acc));
    if (!acc || pod_requests(pod, &req) != 0) {
        snprintf(msg, msgn, "out of memory");
        free(acc);
        rl_free(&req);
        return -1;
    }
    prio = jint(jget(spec, "priority"), 0);
    pod_cpu = pod_amount(spec, "cpu", 1);
    pod_mem = pod_amount(spec, "memory", 1);

    /* what is already bound to each node */
    for (size_t i = 0; i < nbound; i++) {
        json_object *bp = bound[i], *bspec = jget(bp, "spec");
        const char *nn = jstr(jget(bspec, "nodeName"));
        size_t j;
        rlist br = {0};
        int low;
        if (!nn || phase_terminal(bp))
            continue;
        for (j = 0; j < nnodes; j++)
            if (str_eq(jpstr(nodes[j], "metadata.name"), nn))
                break;
        if (j == nnodes)
            continue;
        low = jint(jget(bspec, "priority"), 0) < prio;
        if (pod_requests(bp, &br) == 0) {
            for (size_t r = 0; r < br.n; r++) {
                rl_add(&acc[j].used, br.it[r].name, br.it[r].v);
                if (low)
                    rl_add(&acc[j].used_low, br.it[r].name, br.it[r].v);
            }
        }
        rl_free(&br);
        acc[j].npods++;
        acc[j].npods_low += low;
        acc[j].nz_cpu = cu_qty_sat_add(acc[j].nz_cpu, pod_amount(bspec, "cpu", 1));
        acc[j].nz_mem = cu_qty_sat_add(acc[j].nz_mem, pod_amount(bspec, "memory", 1));
    }

    for (size_t i = 0; i < nnodes; i++) {
        json_object *node = nodes[i], *taint;
        const char *reason = NULL;
        char tbuf[600];
        if (jtrue(jpath(node, "spec.unschedulable")) &&
            !tolerates(jpath(pod, "spec.tolerations"), "node.kubernetes.io/unschedulable", "",
                       "NoSchedule")) {
            reason = "node(s) were unschedulable";
        } else if ((taint = untolerated_taint(pod, node)) != NULL) {
            snprintf(tbuf, sizeof tbuf, "node(s) had untolerated taint {%s: %s}",
                     jstr(jget(taint, "key")) ? jstr(jget(taint, "key")) : "",
                     jstr(jget(taint, "value")) ? jstr(jget(taint, "value")) : "");
            reason = tbuf;
        } else if (!match_affinity(pod, node)) {
            reason = "node(s) didn't match Pod's node affinity/selector";
        }
        if (reason) {
            hist_add(&filt, reason);
            hist_add(&post, "Preemption is not helpful for scheduling");
            continue;
        }
        if (fit_resources(node, &acc[i], &req, 0, &filt) > 0) {
            if (acc[i].npods_low == 0 || fit_resources(node, &acc[i], &req, 1, &post) == 0)
                hist_add(&post, "No preemption victims found for incoming pod");
            continue;
        }
        int64_t sc = node_score(node, &acc[i], pod_cpu, pod_mem, most_allocated);
        if (best < 0 || sc > best_score ||
            (sc == best_score &&
             strcmp(jpstr(node, "metadata.name") ? jpstr(node, "metadata.name") : "",
                    jpstr(nodes[best], "metadata.name") ? jpstr(nodes[best], "metadata.name")
                                                        : "") < 0)) {
            best = (int)i;
            best_score = sc;
        }
    }

    if (best < 0) {
        cu_buf_init(&b, 64 * 1024);
        cu_buf_printf(&b, "0/%zu nodes are available", nnodes);
        if (filt.n) {
            cu_buf_puts(&b, ": ");
            hist_join(&filt, &b);
            cu_buf_puts(&b, ".");
        }
        if (str_eq(jstr(jget(spec, "preemptionPolicy")), "Never")) {
            cu_buf_puts(&b, " preemption: not eligible due to preemptionPolicy=Never.");
        } else {
            cu_buf_printf(&b, " preemption: 0/%zu nodes are available: ", nnodes);
            hist_join(&post, &b);
            cu_buf_puts(&b, ".");
        }
        snprintf(msg, msgn, "%s", cu_buf_str(&b));
        cu_buf_free(&b);
    }
    for (size_t i = 0; i < nnodes; i++) {
        rl_free(&acc[i].used);
        rl_free(&acc[i].used_low);
    }
    free(acc);
    rl_free(&req);
    hist_free(&filt);
    hist_free(&post);
    return best;
}

/* ================= Go durations ================= */

cu_err cu_kubesim_parse_duration(const char *s, int64_t *ms)
{
    static const struct { const char *u; int64_t ns; } units[] = {
        { "ns", 1 }, { "us", 1000 }, { "\xc2\xb5s", 1000 }, { "\xce\xbcs", 1000 },
        { "ms", 1000000 }, { "s", 1000000000LL }, { "m", 60000000000LL },
        { "h", 3600000000000LL },
    };
    long double total = 0;
    const char *p = s;
    if (!s || !*s)
        return CU_EINVAL;
    if (*p == '+')
        p++;
    else if (*p == '-')
        return CU_EINVAL;
    if (strcmp(p, "0") == 0) {
        *ms = 0;
        return CU_OK;
    }
    if (!*p)
        return CU_EINVAL;
    while (*p) {
        long double v = 0, frac = 0, scale = 1;
        int digits = 0;
        size_t best = 0, bi = 0;
        while (*p >= '0' && *p <= '9') {
            v = v * 10 + (*p++ - '0');
            digits++;
        }
        if (*p == '.') {
            p++;
            while (*p >= '0' && *p <= '9') {
                scale /= 10;
                frac += (*p++ - '0') * scale;
                digits++;
            }
        }
        if (!digits)
            return CU_EINVAL;
        for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
            size_t n = strlen(units[i].u);
            if (strncmp(p, units[i].u, n) == 0 && n > best) {
                best = n;
                bi = i;
            }
        }
        if (!best)
            return CU_EINVAL; /* a number without a unit */
        p += best;
        total += (v + frac) * (long double)units[bi].ns;
        if (total > (long double)INT64_MAX)
            return CU_EINVAL;
    }
    *ms = (int64_t)(total / 1000000.0L);
    return CU_OK;
}

/* ================= store helpers ================= */

typedef struct ks_types {
    const cu_rtype *pods, *nodes, *events, *jobs, *pcs;
} ks_types;

static int ks_types_get(cu_store *s, ks_types *t)
{
    t->pods = cu_store_rtype(s, "", "v1", "pods");
    t->nodes = cu_store_rtype(s, "", "v1", "nodes");
    t->events = cu_store_rtype(s, "", "v1", "events");
    t->jobs = cu_store_rtype(s, "batch", "v1", "jobs");
    t->pcs = cu_store_rtype(s, "scheduling.k8s.io", "v1", "priorityclasses");
    return t->pods && t->nodes && t->events && t->jobs ? 0 : -1;
}

/* LIST (all namespaces when ns is NULL); a new reference or NULL. */
static json_object *ks_list(cu_store *s, const cu_rtype *rt, const char *ns, const char *lsel)
{
    cu_list_opts o;
    cu_status st;
    json_object *out = NULL;
    memset(&o, 0, sizeof o);
    o.label_selector = lsel;
    if (!rt || cu_store_list(s, rt, ns, &o, &out, &st) != CU_OK)
        return NULL;
    return out;
}

static const char *ns_of(json_object *o) { return jpstr(o, "metadata.namespace"); }
static const char *name_of(json_object *o) { return jpstr(o, "metadata.name"); }
static const char *uid_of(json_object *o) { return jpstr(o, "metadata.uid"); }

/* PUT of obj (taken) to the main resource or "status"; 1 when written. */
static int ks_put(cu_store *s, const cu_rtype *rt, json_object *obj, const char *sub,
                  json_object **out)
{
    cu_status st;
    json_object *o = NULL;
    char ns[256], name[256];
    snprintf(ns, sizeof ns, "%s", ns_of(obj) ? ns_of(obj) : "");
    snprintf(name, sizeof name, "%s", name_of(obj) ? name_of(obj) : "");
    cu_err e = cu_store_update(s, rt, rt->namespaced ? ns : NULL, name, sub, obj, &o, &st);
    if (e != CU_OK) {
        if (out)
            *out = NULL;
        return 0;
    }
    if (out)
        *out = o;
    else if (o)
        json_object_put(o);
    return 1;
}

/* Sets a condition of status.conditions. job: Job-style condition (with
 * lastProbeTime; a change of reason alone is not a change, as
 * ensureJobConditionStatus). Returns 1 when something changed. */
static int cond_set(json_object *status, const char *type, const char *cstatus,
                    const char *reason, const char *message, const char *now, int job)
{
    json_object *conds = jget(status, "conditions"), *c = NULL;
    if (!conds || !json_object_is_type(conds, json_type_array)) {
        conds = json_object_new_array();
        json_object_object_add(status, "conditions", conds);
    }
    for (size_t i = 0; i < jlen(conds); i++)
        if (str_eq(jstr(jget(jidx(conds, i), "type")), type))
            c = jidx(conds, i);
    if (c && str_eq(jstr(jget(c, "status")), cstatus)) {
        if (job)
            return 0;
        if (str_eq(jstr(jget(c, "reason")), reason ? reason : "") &&
            str_eq(jstr(jget(c, "message")), message ? message : ""))
            return 0;
        if (reason)
            jset_str(c, "reason", reason);
        else
            json_object_object_del(c, "reason");
        if (message)
            jset_str(c, "message", message);
        else
            json_object_object_del(c, "message");
        return 1;
    }
    if (!c) {
        c = json_object_new_object();
        json_object_array_add(conds, c);
        jset_str(c, "type", type);
    }
    jset_str(c, "status", cstatus);
    if (reason)
        jset_str(c, "reason", reason);
    else
        json_object_object_del(c, "reason");
    if (message)
        jset_str(c, "message", message);
    else
        json_object_object_del(c, "message");
    if (job)
        jset_str(c, "lastProbeTime", now);
    else
        json_object_object_add(c, "lastProbeTime", NULL);
    jset_str(c, "lastTransitionTime", now);
    return 1;
}

static json_object *cond_get(json_object *obj, const char *type)
{
    json_object *conds = jpath(obj, "status.conditions");
    for (size_t i = 0; i < jlen(conds); i++)
        if (str_eq(jstr(jget(jidx(conds, i), "type")), type))
            return jidx(conds, i);
    return NULL;
}

static int cond_true(json_object *obj, const char *type)
{
    return str_eq(jstr(jget(cond_get(obj, type), "status")), "True");
}

static int has_finalizer(json_object *obj, const char *f)
{
    json_object *fs = jpath(obj, "metadata.finalizers");
    for (size_t i = 0; i < jlen(fs); i++)
        if (str_eq(jstr(jidx(fs, i)), f))
            return 1;
    return 0;
}

/* Removes the Job tracking finalizer from pod (borrowed). 1 when written. */
static int pod_drop_finalizer(cu_store *s, const cu_rtype *pods, json_object *pod)
{
    json_object *copy, *md, *fs, *nf;
    if (!has_finalizer(pod, KS_TRACKING_FINALIZER))
        return 0;
    copy = jcopy(pod);
    if (!copy)
        return 0;
    md = jget(copy, "metadata");
    fs = jget(md, "finalizers");
    nf = json_object_new_array();
    for (size_t i = 0; i < jlen(fs); i++)
        if (!str_eq(jstr(jidx(fs, i)), KS_TRACKING_FINALIZER))
            json_object_array_add(nf, json_object_get(jidx(fs, i)));
    if (jlen(nf))
        json_object_object_add(md, "finalizers", nf);
    else {
        json_object_put(nf);
        json_object_object_del(md, "finalizers");
    }
    return ks_put(s, pods, copy, NULL, NULL);
}

static int pod_delete(cu_store *s, const cu_rtype *pods, json_object *pod)
{
    cu_status st;
    json_object *out = NULL;
    int w = pod_drop_finalizer(s, pods, pod);
    if (cu_store_delete(s, pods, ns_of(pod), name_of(pod), "Background", NULL, &out, &st) ==
        CU_OK)
        w++;
    if (out)
        json_object_put(out);
    return w;
}

/* ================= events ================= */

/* Records a core v1 Event about pod from the default scheduler. An
 * identical event (same pod, reason and message) is not repeated: its
 * count and lastTimestamp are bumped, at most every KS_EVENT_REPEAT_MS.
 * Returns 1 when written. */
static int event_record(cu_store *s, const ks_types *t, json_object *pod, const char *type,
                        const char *reason, const char *action, const char *message,
                        int64_t now)
{
    char name[300], ts[32];
    cu_status st;
    json_object *ev = NULL, *out = NULL;
    uint64_t h = fnv1a(fnv1a(fnv1a(0, uid_of(pod)), reason), message);
    snprintf(name, sizeof name, "%.200s.%016" PRIx64, name_of(pod), h);
    fmt_time(now, ts);
    if (cu_store_get(s, t->events, ns_of(pod), name, &ev, &st) == CU_OK) {
        int64_t last = 0;
        if (cu_time_parse(jstr(jget(ev, "lastTimestamp")) ? jstr(jget(ev, "lastTimestamp")) : "",
                          &last) == CU_OK &&
            now - last < KS_EVENT_REPEAT_MS) {
            json_object_put(ev);
            return 0;
        }
        jset_int(ev, "count", jint(jget(ev, "count"), 1) + 1);
        jset_str(ev, "lastTimestamp", ts);
        return ks_put(s, t->events, ev, NULL, NULL);
    }
    ev = json_object_new_object();
    jset_str(ev, "apiVersion", "v1");
    jset_str(ev, "kind", "Event");
    json_object *md = jchild(ev, "metadata");
    jset_str(md, "name", name);
    jset_str(md, "namespace", ns_of(pod));
    json_object *io = jchild(ev, "involvedObject");
    jset_str(io, "apiVersion", "v1");
    jset_str(io, "kind", "Pod");
    jset_str(io, "namespace", ns_of(pod));
    jset_str(io, "name", name_of(pod));
    if (uid_of(pod))
        jset_str(io, "uid", uid_of(pod));
    if (jpstr(pod, "metadata.resourceVersion"))
        jset_str(io, "resourceVersion", jpstr(pod, "metadata.resourceVersion"));
    jset_str(ev, "reason", reason);
    jset_str(ev, "message", message);
    jset_str(ev, "type", type);
    jset_str(jchild(ev, "source"), "component", "default-scheduler");
    jset_str(ev, "reportingComponent", "default-scheduler");
    jset_str(ev, "reportingInstance", "default-scheduler");
    jset_str(ev, "action", action);
    jset_str(ev, "firstTimestamp", ts);
    jset_str(ev, "lastTimestamp", ts);
    jset_int(ev, "count", 1);
    if (cu_store_create(s, t->events, ns_of(pod), ev, &out, &st) != CU_OK)
        return 0;
    if (out)
        json_object_put(out);
    return 1;
}

/* ================= nodes ================= */

static json_object *node_default_status_parts(json_object *node, const char *now, int idx)
{
    json_object *status = jchild(node, "status");
    char ip[32];
    if (!jget(status, "conditions")) {
        static const char *const pressure[][3] = {
            { "MemoryPressure", "KubeletHasSufficientMemory",
              "kubelet has sufficient memory available" },
            { "DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure" },
            { "PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available" },
        };
        json_object *conds = json_object_new_array();
        for (size_t i = 0; i < 3; i++) {
            json_object *c = json_object_new_object();
            jset_str(c, "type", pressure[i][0]);
            jset_str(c, "status", "False");
            jset_str(c, "reason", pressure[i][1]);
            jset_str(c, "message", pressure[i][2]);
            jset_str(c, "lastHeartbeatTime", now);
            jset_str(c, "lastTransitionTime", now);
            json_object_array_add(conds, c);
        }
        json_object *c = json_object_new_object();
        jset_str(c, "type", "Ready");
        jset_str(c, "status", "True");
        jset_str(c, "reason", "KubeletReady");
        jset_str(c, "message", "kubelet is posting ready status");
        jset_str(c, "lastHeartbeatTime", now);
        jset_str(c, "lastTransitionTime", now);
        json_object_array_add(conds, c);
        json_object_object_add(status, "conditions", conds);
    }
    if (!jget(status, "addresses")) {
        json_object *a = json_object_new_array(), *e = json_object_new_object();
        snprintf(ip, sizeof ip, "10.0.%d.%d", idx / 250, idx % 250 + 2);
        jset_str(e, "type", "InternalIP");
        jset_str(e, "address", ip);
        json_object_array_add(a, e);
        e = json_object_new_object();
        jset_str(e, "type", "Hostname");
        jset_str(e, "address", name_of(node) ? name_of(node) : "");
        json_object_array_add(a, e);
        json_object_object_add(status, "addresses", a);
    }
    if (!jget(status, "nodeInfo")) {
        json_object *ni = jchild(status, "nodeInfo");
        jset_str(ni, "kubeletVersion", "v1.32.0");
        jset_str(ni, "kubeProxyVersion", "v1.32.0");
        jset_str(ni, "containerRuntimeVersion", "containerd://1.7.24");
        jset_str(ni, "operatingSystem", "linux");
        jset_str(ni, "architecture", "amd64");
        jset_str(ni, "osImage", "Cueue simulated node");
        jset_str(ni, "kernelVersion", "6.1.0-cueue");
        jset_str(ni, "machineID", "");
        jset_str(ni, "systemUUID", "");
        jset_str(ni, "bootID", "");
    }
    if (!jget(status, "allocatable") && jget(status, "capacity"))
        json_object_object_add(status, "allocatable",
                               jcopy(jget(status, "capacity")));
    return node;
}

typedef struct defpool {
    const char *prefix;
    int count;
    const char *product, *itype, *lifecycle, *pool;
    const char *gpus, *cpu, *memory;
    const char *taint_key, *taint_value;
} defpool;

/* The default set: matches the ResourceFlavors of config/samples. */
static const defpool k_default_pools[] = {
    { "gpu-h100-", 4, "NVIDIA-H100-80GB-HBM3", "p5.48xlarge", "on-demand", NULL, "8", "96",
      "1Ti", NULL, NULL },
    { "gpu-a100-", 4, "NVIDIA-A100-SXM4-80GB", "p4de.24xlarge", "on-demand", NULL, "8", "96",
      "1Ti", NULL, NULL },
    { "spot-a100-", 2, "NVIDIA-A100-SXM4-80GB", "p4de.24xlarge", "spot", NULL, "8", "96", "1Ti",
      "cloud.example.com/spot", "true" },
    { "cpu-", 2, NULL, "m6i.8xlarge", "on-demand", "general", NULL, "32", "128Gi", NULL, NULL },
};

static json_object *default_node(const defpool *p, int i, int zone)
{
    char name[64];
    json_object *n = json_object_new_object(), *md, *lb, *cap;
    snprintf(name, sizeof name, "%s%d", p->prefix, i);
    jset_str(n, "apiVersion", "v1");
    jset_str(n, "kind", "Node");
    md = jchild(n, "metadata");
    jset_str(md, "name", name);
    lb = jchild(md, "labels");
    jset_str(lb, "kubernetes.io/hostname", name);
    jset_str(lb, "kubernetes.io/os", "linux");
    jset_str(lb, "kubernetes.io/arch", "amd64");
    jset_str(lb, "node.kubernetes.io/instance-type", p->itype);
    jset_str(lb, "node.kubernetes.io/lifecycle", p->lifecycle);
    jset_str(lb, "topology.kubernetes.io/zone", zone ? "zone-b" : "zone-a");
    if (p->product) {
        jset_str(lb, "nvidia.com/gpu.product", p->product);
        jset_str(lb, "nvidia.com/gpu.count", p->gpus);
        jset_str(lb, "nvidia.com/gpu.present", "true");
    }
    if (p->pool)
        jset_str(lb, "node.example.com/pool", p->pool);
    json_object *spec = jchild(n, "spec");
    if (p->taint_key) {
        json_object *ts = json_object_new_array(), *t = json_object_new_object();
        jset_str(t, "key", p->taint_key);
        jset_str(t, "value", p->taint_value);
        jset_str(t, "effect", "NoSchedule");
        json_object_array_add(ts, t);
        json_object_object_add(spec, "taints", ts);
    }
    cap = jchild(jchild(n, "status"), "capacity");
    jset_str(cap, "cpu", p->cpu);
    jset_str(cap, "memory", p->memory);
    jset_str(cap, "pods", "110");
    jset_str(cap, "ephemeral-storage", "2Ti");
    if (p->gpus)
        jset_str(cap, "nvidia.com/gpu", p->gpus);
    return n;
}

/* Checks a Node from a file; -1 with a message. */
static int node_check(json_object *n, const char *file, size_t doc, char *err, size_t errn)
{
    const char *kind = jstr(jget(n, "kind")), *name = name_of(n);
    const char *maps[2] = { "capacity", "allocatable" };
    int64_t m;
    if (!str_eq(kind, "Node")) {
        snprintf(err, errn, "%s: document %zu: kind: must be Node, got %s", file, doc,
                 kind ? kind : "nothing");
        return -1;
    }
    if (!name || !*name) {
        snprintf(err, errn, "%s: document %zu: Node: metadata.name: required", file, doc);
        return -1;
    }
    for (int i = 0; i < 2; i++) {
        json_object *mp = jget(jget(n, "status"), maps[i]);
        if (!mp)
            continue;
        if (!json_object_is_type(mp, json_type_object)) {
            snprintf(err, errn, "%s: document %zu: Node %s: status.%s: must be a map", file, doc,
                     name, maps[i]);
            return -1;
        }
        json_object_object_foreach(mp, k, v) {
            if (qty_json(v, &m) != 0 || m < 0) {
                snprintf(err, errn, "%s: document %zu: Node %s: status.%s[%s]: invalid quantity %s",
                         file, doc, name, maps[i], k, json_object_to_json_string(v));
                return -1;
            }
        }
    }
    if (!jpath(n, "status.capacity") && !jpath(n, "status.allocatable")) {
        snprintf(err, errn, "%s: document %zu: Node %s: status.capacity: required", file, doc,
                 name);
        return -1;
    }
    json_object *taints = jpath(n, "spec.taints");
    for (size_t i = 0; i < jlen(taints); i++) {
        const char *eff = jstr(jget(jidx(taints, i), "effect"));
        if (!str_eq(eff, "NoSchedule") && !str_eq(eff, "PreferNoSchedule") &&
            !str_eq(eff, "NoExecute")) {
            snprintf(err, errn,
                     "%s: document %zu: Node %s: spec.taints[%zu].effect: must be NoSchedule, "
                     "PreferNoSchedule or NoExecute",
                     file, doc, name, i);
            return -1;
        }
    }
    return 0;
}

/* Creates n (taken) unless a node of that name exists. */
static cu_err node_ensure(cu_store *s, const ks_types *t, json_object *n, char *err, size_t errn)
{
    cu_status st;
    json_object *old = NULL, *out = NULL;
    if (cu_store_get(s, t->nodes, NULL, name_of(n), &old, &st) == CU_OK) {
        json_object_put(old);
        json_object_put(n);
        return CU_OK;
    }
    json_object *want_status = jcopy(jget(n, "status"));
    cu_err e = cu_store_create(s, t->nodes, NULL, n, &out, &st);
    if (e != CU_OK) {
        snprintf(err, errn, "node %s: %s", st.name[0] ? st.name : "?", st.message);
        json_object_put(want_status);
        return e;
    }
    /* a store that drops status on create gets it through /status */
    if (out && want_status && !jpath(out, "status.allocatable")) {
        json_object_object_add(out, "status", want_status);
        want_status = NULL;
        ks_put(s, t->nodes, out, "status", NULL);
        out = NULL;
    }
    if (out)
        json_object_put(out);
    json_object_put(want_status);
    return CU_OK;
}

cu_err cu_kubesim_add_nodes(cu_store *s, const char *nodes_file, int64_t now_ms, char *err,
                            size_t errn)
{
    ks_types t;
    char now[32], dummy[8];
    cu_err rc = CU_OK;
    int idx = 0;
    if (!err || !errn) {
        err = dummy;
        errn = sizeof dummy;
    }
    err[0] = '\0';
    if (ks_types_get(s, &t) != 0) {
        snprintf(err, errn, "the store does not serve pods, nodes, events and batch/v1 jobs");
        return CU_EINVAL;
    }
    fmt_time(now_ms, now);
    if (!nodes_file) {
        for (size_t p = 0; p < sizeof k_default_pools / sizeof k_default_pools[0]; p++)
            for (int i = 0; i < k_default_pools[p].count; i++, idx++) {
                json_object *n = default_node(&k_default_pools[p], i, i % 2);
                node_default_status_parts(n, now, idx);
                if ((rc = node_ensure(s, &t, n, err, errn)) != CU_OK)
                    return rc;
            }
        return CU_OK;
    }
    cu_arena a;
    cu_diag d;
    cu_doc *docs = NULL;
    size_t ndocs = 0;
    json_object **objs = NULL;
    cu_arena_init(&a, 0);
    cu_diag_init(&d);
    rc = cu_doc_parse_file(nodes_file, &a, &docs, &ndocs, &d);
    if (rc != CU_OK) {
        snprintf(err, errn, "%s", d.n ? d.msgs[0] : cu_strerror(rc));
        if (!d.n)
            snprintf(err, errn, "%s: %s", nodes_file, cu_strerror(rc));
        goto out;
    }
    objs = calloc(ndocs ? ndocs : 1, sizeof(*objs));
    if (!objs) {
        rc = CU_ENOMEM;
        goto out;
    }
    /* parse and check every document before creating anything */
    for (size_t i = 0; i < ndocs; i++) {
        cu_buf b;
        if (!docs[i].root)
            continue;
        cu_buf_init(&b, 0);
        if (cu_node_emit_json(docs[i].root, &b, 0) == CU_OK)
            objs[i] = json_tokener_parse(cu_buf_str(&b));
        cu_buf_free(&b);
        if (!objs[i] || !json_object_is_type(objs[i], json_type_object)) {
            snprintf(err, errn, "%s: document %zu: not a Node object", nodes_file, i + 1);
            rc = CU_EINVAL;
            goto out;
        }
        if (node_check(objs[i], nodes_file, i + 1, err, errn) != 0) {
            rc = CU_EINVAL;
            goto out;
        }
    }
    for (size_t i = 0; i < ndocs; i++) {
        if (!objs[i])
            continue;
        json_object *n = objs[i];
        objs[i] = NULL;
        node_default_status_parts(n, now, idx++);
        if ((rc = node_ensure(s, &t, n, err, errn)) != CU_OK)
            goto out;
    }
out:
    for (size_t i = 0; objs && i < ndocs; i++)
        if (objs[i])
            json_object_put(objs[i]);
    free(objs);
    cu_diag_free(&d);
    cu_arena_free(&a);
    return rc;
}

/* ================= the Job controller ================= */

typedef struct podref { const char *uid; json_object *pod; } podref;

static int cmp_podref(const void *a, const void *b)
{
    const podref *x = a, *y = b;
    return strcmp(x->uid, y->uid);
}

/* The uid of pod's controller Job, or NULL. */
/* Whether any ownerReference of pod is marked controller. */
static int has_controller(json_object *pod)
{
    json_object *refs = jpath(pod, "metadata.ownerReferences");
    for (size_t i = 0; i < jlen(refs); i++)
        if (jtrue(jget(jidx(refs, i), "controller")))
            return 1;
    return 0;
}

static const char *job_owner_uid(json_object *pod)
{
    json_object *refs = jpath(pod, "metadata.ownerReferences");
    for (size_t i = 0; i < jlen(refs); i++) {
        json_object *r = jidx(refs, i);
        if (jtrue(jget(r, "controller")) && str_eq(jstr(jget(r, "kind")), "Job"))
            return jstr(jget(r, "uid"));
    }
    return NULL;
}

static const char *pod_qos(json_object *spec)
{
    json_object *cs = jget(spec, "containers");
    int any = 0, guaranteed = jlen(cs) > 0;
    const char *res[2] = { "cpu", "memory" };
    for (size_t i = 0; i < jlen(cs); i++) {
        json_object *r = jget(jidx(cs, i), "resources");
        for (int k = 0; k < 2; k++) {
            json_object *rq = jget(jget(r, "requests"), res[k]), *lm = jget(jget(r, "limits"), res[k]);
            int64_t a = 0, b = 0;
            if (rq || lm)
                any = 1;
            if (!lm) {
                guaranteed = 0;
            } else if (rq && (qty_json(rq, &a) != 0 || qty_json(lm, &b) != 0 || a != b)) {
                guaranteed = 0;
            }
        }
    }
    if (!any)
        return "BestEffort";
    return guaranteed ? "Guaranteed" : "Burstable";
}

static json_object *pod_for_job(json_object *job)
{
    json_object *tmpl = jpath(job, "spec.template"), *pod = json_object_new_object();
    json_object *md, *lb, *refs, *ref, *fins, *spec, *st;
    char gen[300];
    jset_str(pod, "apiVersion", "v1");
    jset_str(pod, "kind", "Pod");
    md = jchild(pod, "metadata");
    snprintf(gen, sizeof gen, "%s-", name_of(job));
    jset_str(md, "generateName", gen);
    jset_str(md, "namespace", ns_of(job));
    lb = jget(jget(tmpl, "metadata"), "labels");
    lb = lb ? jcopy(lb) : json_object_new_object();
    json_object_object_add(md, "labels", lb);
    jset_str(lb, "batch.kubernetes.io/controller-uid", uid_of(job) ? uid_of(job) : "");
    jset_str(lb, "batch.kubernetes.io/job-name", name_of(job));
    jset_str(lb, "controller-uid", uid_of(job) ? uid_of(job) : "");
    jset_str(lb, "job-name", name_of(job));
    if (jget(jget(tmpl, "metadata"), "annotations"))
        json_object_object_add(md, "annotations",
                               jcopy(jget(jget(tmpl, "metadata"), "annotations")));
    refs = json_object_new_array();
    ref = json_object_new_object();
    jset_str(ref, "apiVersion", "batch/v1");
    jset_str(ref, "kind", "Job");
    jset_str(ref, "name", name_of(job));
    jset_str(ref, "uid", uid_of(job) ? uid_of(job) : "");
    json_object_object_add(ref, "controller", json_object_new_boolean(1));
    json_object_object_add(ref, "blockOwnerDeletion", json_object_new_boolean(1));
    json_object_array_add(refs, ref);
    json_object_object_add(md, "ownerReferences", refs);
    fins = json_object_new_array();
    json_object_array_add(fins, json_object_new_string(KS_TRACKING_FINALIZER));
    json_object_object_add(md, "finalizers", fins);
    spec = jget(tmpl, "spec");
    spec = spec ? jcopy(spec) : json_object_new_object();
    json_object_object_add(pod, "spec", spec);
    st = jchild(pod, "status");
    jset_str(st, "phase", "Pending");
    jset_str(st, "qosClass", pod_qos(spec));
    return pod;
}

static int uid_in(json_object *arr, const char *uid)
{
    for (size_t i = 0; i < jlen(arr); i++)
        if (str_eq(jstr(jidx(arr, i)), uid))
            return 1;
    return 0;
}

static json_object *find_pod_uid(podref *pods, size_t n, const char *uid)
{
    for (size_t i = 0; i < n; i++)
        if (str_eq(pods[i].uid, uid))
            return pods[i].pod;
    return NULL;
}

/* Ranks pods for deletion when there are too many: unbound first, then
 * not ready, then the newest. */
static int del_rank(json_object *p)
{
    if (!jpstr(p, "spec.nodeName"))
        return 0;
    if (!cond_true(p, "Ready"))
        return 1;
    return 2;
}

static int cmp_del(const void *a, const void *b)
{
    json_object *x = *(json_object *const *)a, *y = *(json_object *const *)b;
    int rx = del_rank(x), ry = del_rank(y);
    const char *tx = jpstr(x, "metadata.creationTimestamp"), *ty = jpstr(y, "metadata.creationTimestamp");
    if (rx != ry)
        return rx - ry;
    return -strcmp(tx ? tx : "", ty ? ty : ""); /* newest first */
}

/* One Job; pods: its pods (by controller uid). */
static int sync_job(cu_store *s, const ks_types *t, json_object *job, podref *pods, size_t np,
                    int64_t now, int64_t *next_due)
{
    int writes = 0;
    char ts[32];
    json_object *spec = jget(job, "spec"), *cur = jcopy(job), *st, *unc, *before = NULL;
    int suspended = jtrue(jget(spec, "suspend"));
    int has_par = jget(spec, "parallelism") != NULL, has_comp = jget(spec, "completions") != NULL;
    int64_t parallelism = jint(jget(spec, "parallelism"), 1);
    int64_t completions = jint(jget(spec, "completions"), 1);
    int64_t backoff = jint(jget(spec, "backoffLimit"), 6);
    int64_t succeeded, failed, active = 0, ready = 0, terminating = 0;
    int finished = cond_true(job, "Complete") || cond_true(job, "Failed");
    json_object **act = NULL;
    size_t nact = 0;

    if (!cur)
        return 0;
    if (!has_par && !has_comp)
        has_comp = 1; /* the API server defaults both to 1 */
    fmt_time(now, ts);
    st = jchild(cur, "status");
    unc = jchild(st, "uncountedTerminatedPods");

    /* 1. record terminal pods that still carry the tracking finalizer */
    int unc_changed = 0;
    for (size_t i = 0; i < np; i++) {
        json_object *p = pods[i].pod;
        const char *ph = jpstr(p, "status.phase");
        int deleting = jpath(p, "metadata.deletionTimestamp") != NULL;
        int succ = str_eq(ph, "Succeeded");
        int fail = str_eq(ph, "Failed") || (deleting && !succ);
        const char *list = succ ? "succeeded" : "failed";
        if (!has_finalizer(p, KS_TRACKING_FINALIZER) || !(succ || fail))
            continue;
        if (uid_in(jget(unc, "succeeded"), pods[i].uid) || uid_in(jget(unc, "failed"), pods[i].uid))
            continue;
        json_object *arr = jget(unc, list);
        if (!arr) {
            arr = json_object_new_array();
            json_object_object_add(unc, list, arr);
        }
        json_object_array_add(arr, json_object_new_string(pods[i].uid));
        unc_changed = 1;
    }
    if (unc_changed) {
        json_object *out = NULL;
        if (!ks_put(s, t->jobs, cur, "status", &out)) {
            return writes; /* conflict: the next pass retries */
        }
        writes++;
        cur = out;
        st = jchild(cur, "status");
        unc = jchild(st, "uncountedTerminatedPods");
    }
    before = jcopy(jget(cur, "status"));
    /* 2. remove the finalizers of recorded pods; 3. fold them into the counters */
    succeeded = jint(jget(st, "succeeded"), 0);
    failed = jint(jget(st, "failed"), 0);
    const char *lists[2] = { "succeeded", "failed" };
    for (int l = 0; l < 2; l++) {
        json_object *arr = jget(unc, lists[l]), *keep = json_object_new_array();
        for (size_t i = 0; i < jlen(arr); i++) {
            const char *uid = jstr(jidx(arr, i));
            json_object *p = find_pod_uid(pods, np, uid);
            if (p && has_finalizer(p, KS_TRACKING_FINALIZER) && pod_drop_finalizer(s, t->pods, p)) {
                writes++;
                p = NULL;
            }
            if (!p || !has_finalizer(p, KS_TRACKING_FINALIZER)) {
                if (l == 0)
                    succeeded++;
                else
                    failed++;
            } else {
                json_object_array_add(keep, json_object_new_string(uid ? uid : ""));
            }
        }
        if (jlen(keep))
            json_object_object_add(unc, lists[l], keep);
        else {
            json_object_put(keep);
            json_object_object_del(unc, lists[l]);
        }
    }

    /* active, ready, terminating */
    act = calloc(np ? np : 1, sizeof(*act));
    if (!act) {
        json_object_put(cur);
        if (before)
            json_object_put(before);
        return writes;
    }
    for (size_t i = 0; i < np; i++) {
        json_object *p = pods[i].pod;
        int deleting = jpath(p, "metadata.deletionTimestamp") != NULL;
        if (phase_terminal(p))
            continue;
        if (deleting) {
            terminating++;
            continue;
        }
        act[nact++] = p;
        active++;
        if (cond_true(p, "Ready"))
            ready++;
    }

    /* decide */
    int64_t ads = jint(jget(spec, "activeDeadlineSeconds"), -1), start = 0;
    const char *start_s = jstr(jget(st, "startTime"));
    int have_start = start_s && cu_time_parse(start_s, &start) == CU_OK;
    const char *fail_reason = NULL, *fail_msg = NULL;
    int complete = 0;
    int64_t delete_n = 0, create_n = 0;
    if (!finished) {
        if (failed > backoff) {
            fail_reason = "BackoffLimitExceeded";
            fail_msg = "Job has reached the specified backoff limit";
        } else if (ads >= 0 && have_start && !suspended) {
            if (now >= start + ads * 1000) {
                fail_reason = "DeadlineExceeded";
                fail_msg = "Job was active longer than specified deadline";
            } else if (next_due && start + ads * 1000 < *next_due) {
                *next_due = start + ads * 1000;
            }
        }
        if (!fail_reason)
            complete = has_comp ? succeeded >= completions : (succeeded > 0 && active == 0);
    }
    if (finished || fail_reason || complete || suspended) {
        delete_n = (int64_t)nact;
    } else {
        int64_t want;
        if (has_comp) {
            want = completions - succeeded;
            if (want > parallelism)
                want = parallelism;
        } else {
            want = succeeded > 0 ? active : parallelism;
        }
        if (want < 0)
            want = 0;
        if (active < want)
            create_n = want - active;
        else if (active > want)
            delete_n = active - want;
    }
    if (delete_n) {
        qsort(act, nact, sizeof(*act), cmp_del);
        for (int64_t i = 0; i < delete_n && i < (int64_t)nact; i++) {
            int w = pod_delete(s, t->pods, act[i]);
            writes += w;
            if (w) {
                active--;
                if (cond_true(act[i], "Ready"))
                    ready--;
            }
        }
    }
    for (int64_t i = 0; i < create_n; i++) {
        cu_status cst;
        json_object *out = NULL;
        if (cu_store_create(s, t->pods, ns_of(job), pod_for_job(job), &out, &cst) == CU_OK) {
            writes++;
            active++;
        }
        if (out)
            json_object_put(out);
    }
    free(act);

    /* status */
    if (!finished) {
        if (suspended) {
            cond_set(st, "Suspended", "True", "JobSuspended", "Job suspended", ts, 1);
        } else {
            json_object *sc = cond_get(cur, "Suspended");
            if (sc && str_eq(jstr(jget(sc, "status")), "True")) {
                cond_set(st, "Suspended", "False", "JobResumed", "Job resumed", ts, 1);
                jset_str(st, "startTime", ts);
            } else if (!jget(st, "startTime")) {
                jset_str(st, "startTime", ts);
            }
        }
        if (fail_reason) {
            cond_set(st, "FailureTarget", "True", fail_reason, fail_msg, ts, 1);
            cond_set(st, "Failed", "True", fail_reason, fail_msg, ts, 1);
        } else if (complete) {
            cond_set(st, "SuccessCriteriaMet", "True", "CompletionsReached",
                     "Reached expected number of succeeded pods", ts, 1);
            cond_set(st, "Complete", "True", "CompletionsReached",
                     "Reached expected number of succeeded pods", ts, 1);
            jset_str(st, "completionTime", ts);
        }
    }
    if (jlen(jget(st, "conditions")) == 0)
        json_object_object_del(st, "conditions");
    if (active > 0)
        jset_int(st, "active", active);
    else
        json_object_object_del(st, "active");
    if (succeeded > 0)
        jset_int(st, "succeeded", succeeded);
    else
        json_object_object_del(st, "succeeded");
    if (failed > 0)
        jset_int(st, "failed", failed);
    else
        json_object_object_del(st, "failed");
    jset_int(st, "ready", ready < 0 ? 0 : ready);
    jset_int(st, "terminating", terminating);
    if (!json_object_equal(before, st))
        writes += ks_put(s, t->jobs, cur, "status", NULL);
    else
        json_object_put(cur);
    if (before)
        json_object_put(before);
    return writes;
}

int cu_kubesim_sync_jobs(cu_store *s, int64_t now_ms, int64_t *next_due_ms)
{
    ks_types t;
    json_object *jl, *pl, *jobs, *pods;
    podref *refs = NULL, *juids = NULL;
    size_t nref = 0, njobs, npods, nj = 0;
    int writes = 0;
    if (ks_types_get(s, &t) != 0)
        return 0;
    jl = ks_list(s, t.jobs, NULL, NULL);
    pl = ks_list(s, t.pods, NULL, NULL);
    jobs = jget(jl, "items");
    pods = jget(pl, "items");
    njobs = jlen(jobs);
    npods = jlen(pods);
    refs = calloc(npods ? npods : 1, sizeof(*refs));
    juids = calloc(njobs ? njobs : 1, sizeof(*juids));
    if (!jl || !pl || !refs || !juids)
        goto out;
    for (size_t i = 0; i < njobs; i++) {
        json_object *j = jidx(jobs, i);
        if (uid_of(j) && !jpath(j, "metadata.deletionTimestamp")) {
            juids[nj].uid = uid_of(j);
            juids[nj++].pod = j;
        }
    }
    qsort(juids, nj, sizeof(*juids), cmp_podref);
    for (size_t i = 0; i < npods; i++) {
        json_object *p = jidx(pods, i);
        const char *ou = job_owner_uid(p);
        if (!ou && !has_controller(p)) {
            /* orphaned (its Job was deleted with propagationPolicy Orphan):
             * no Job will count it, so the tracking finalizer goes, as the
             * Job controller's orphan-pod handling does */
            writes += pod_drop_finalizer(s, t.pods, p);
            continue;
        }
        if (!ou || !uid_of(p))
            continue;
        podref key = { ou, NULL };
        if (!bsearch(&key, juids, nj, sizeof(*juids), cmp_podref)) {
            /* orphan: its Job is gone (or going); let it be collected */
            writes += pod_drop_finalizer(s, t.pods, p);
            continue;
        }
        refs[nref].uid = ou;
        refs[nref++].pod = p;
    }
    qsort(refs, nref, sizeof(*refs), cmp_podref);
    for (size_t i = 0; i < nj; i++) {
        podref key = { juids[i].uid, NULL };
        podref *first = bsearch(&key, refs, nref, sizeof(*refs), cmp_podref);
        size_t n = 0;
        if (first) {
            while (first > refs && strcmp(first[-1].uid, key.uid) == 0)
                first--;
            while (first + n < refs + nref && strcmp(first[n].uid, key.uid) == 0)
                n++;
        }
        /* the job's pods, each with its own uid for the status lists */
        podref *mine = calloc(n ? n : 1, sizeof(*mine));
        if (!mine)
            break;
        for (size_t k = 0; k < n; k++) {
            mine[k].pod = first[k].pod;
            mine[k].uid = uid_of(first[k].pod);
        }
        writes += sync_job(s, &t, juids[i].pod, mine, n, now_ms, next_due_ms);
        free(mine);
    }
out:
    free(refs);
    free(juids);
    if (jl)
        json_object_put(jl);
    if (pl)
        json_object_put(pl);
    return writes;
}

/* ================= the scheduler ================= */

typedef struct pcval { const char *name; int64_t v; } pcval;

static int64_t pod_priority(json_object *pod, json_object *pcs)
{
    json_object *pr = jpath(pod, "spec.priority");
    const char *pc = jpstr(pod, "spec.priorityClassName");
    if (pr)
        return jint(pr, 0);
    for (size_t i = 0; pc && i < jlen(pcs); i++)
        if (str_eq(name_of(jidx(pcs, i)), pc))
            return jint(jget(jidx(pcs, i), "value"), 0);
    for (size_t i = 0; !pc && i < jlen(pcs); i++)
        if (jtrue(jget(jidx(pcs, i), "globalDefault")))
            return jint(jget(jidx(pcs, i), "value"), 0);
    return 0;
}

static int cmp_pending(const void *a, const void *b)
{
    json_object *x = *(json_object *const *)a, *y = *(json_object *const *)b;
    int64_t px = jint(jpath(x, "spec.priority"), 0), py = jint(jpath(y, "spec.priority"), 0);
    const char *tx = jpstr(x, "metadata.creationTimestamp"), *ty = jpstr(y, "metadata.creationTimestamp");
    int c;
    if (px != py)
        return px > py ? -1 : 1;
    if ((c = strcmp(tx ? tx : "", ty ? ty : "")) != 0)
        return c;
    if ((c = strcmp(ns_of(x) ? ns_of(x) : "", ns_of(y) ? ns_of(y) : "")) != 0)
        return c;
    return strcmp(name_of(x) ? name_of(x) : "", name_of(y) ? name_of(y) : "");
}

static int pod_pending(json_object *p)
{
    const char *ph = jpstr(p, "status.phase");
    const char *sn = jpstr(p, "spec.schedulerName");
    if (jpstr(p, "spec.nodeName") || jpath(p, "metadata.deletionTimestamp"))
        return 0;
    if (ph && !str_eq(ph, "Pending"))
        return 0;
    if (jlen(jpath(p, "spec.schedulingGates")) > 0)
        return 0; /* gated pods are not scheduled at all */
    return !sn || str_eq(sn, "default-scheduler");
}

int cu_kubesim_schedule(cu_store *s, int most_allocated, int64_t now_ms)
{
    ks_types t;
    json_object *nl, *pl, *pcl = NULL, *pods, *pcs;
    json_object **nodes = NULL, **bound = NULL, **pending = NULL;
    size_t nn, np, nb = 0, npend = 0;
    int writes = 0;
    char ts[32], msg[KS_MSG_MAX + 1];
    if (ks_types_get(s, &t) != 0)
        return 0;
    fmt_time(now_ms, ts);
    nl = ks_list(s, t.nodes, NULL, NULL);
    pl = ks_list(s, t.pods, NULL, NULL);
    if (t.pcs)
        pcl = ks_list(s, t.pcs, NULL, NULL);
    pods = jget(pl, "items");
    pcs = jget(pcl, "items");
    nn = jlen(jget(nl, "items"));
    np = jlen(pods);
    nodes = calloc(nn ? nn : 1, sizeof(*nodes));
    bound = calloc(np ? np : 1, sizeof(*bound));
    pending = calloc(np ? np : 1, sizeof(*pending));
    if (!nl || !pl || !nodes || !bound || !pending)
        goto out;
    for (size_t i = 0; i < nn; i++)
        nodes[i] = jidx(jget(nl, "items"), i);
    for (size_t i = 0; i < np; i++) {
        json_object *p = jidx(pods, i);
        /* resolve priorityClassName as the Priority admission plugin would */
        if (!jpath(p, "spec.priority") && jget(p, "spec"))
            jset_int(jget(p, "spec"), "priority", pod_priority(p, pcs));
        if (jpstr(p, "spec.nodeName")) {
            if (!phase_terminal(p))
                bound[nb++] = p;
        } else if (pod_pending(p)) {
            pending[npend++] = p;
        }
    }
    qsort(pending, npend, sizeof(*pending), cmp_pending);
    for (size_t i = 0; i < npend; i++) {
        json_object *p = pending[i];
        int idx = cu_sched_pick(nodes, nn, bound, nb, p, most_allocated, msg, sizeof msg);
        if (idx >= 0) {
            json_object *copy = jcopy(p), *out = NULL;
            const char *node = name_of(nodes[idx]);
            jset_str(jget(copy, "spec"), "nodeName", node);
            if (!ks_put(s, t.pods, copy, NULL, &out))
                continue;
            writes++;
            jset_str(jget(p, "spec"), "nodeName", node);
            bound[nb++] = p;
            cond_set(jchild(out, "status"), "PodScheduled", "True", NULL, NULL, ts, 0);
            writes += ks_put(s, t.pods, out, "status", NULL);
            continue;
        }
        json_object *copy = jcopy(p);
        if (cond_set(jchild(copy, "status"), "PodScheduled", "False", "Unschedulable", msg, ts, 0)) {
            writes += ks_put(s, t.pods, copy, "status", NULL);
        } else {
            json_object_put(copy);
        }
        writes += event_record(s, &t, p, "Warning", "FailedScheduling", "Scheduling", msg, now_ms);
    }
out:
    free(nodes);
    free(bound);
    free(pending);
    if (nl)
        json_object_put(nl);
    if (pl)
        json_object_put(pl);
    if (pcl)
        json_object_put(pcl);
    return writes;
}

/* ================= the kubelet ================= */

static void ctr_statuses(json_object *pod, json_object *status, const char *list_key,
                         const char *status_key, int phase, const char *started,
                         const char *finished, int exit_code)
{
    json_object *cs = jpath(pod, list_key), *arr = json_object_new_array();
    for (size_t i = 0; i < jlen(cs); i++) {
        json_object *c = jidx(cs, i), *o = json_object_new_object(), *state, *sub;
        const char *cname = jstr(jget(c, "name")) ? jstr(jget(c, "name")) : "";
        char cid[96];
        int sidecar = str_eq(jstr(jget(c, "restartPolicy")), "Always");
        int init = strcmp(status_key, "initContainerStatuses") == 0;
        int run = phase == 1 && (!init || sidecar);
        snprintf(cid, sizeof cid, "containerd://%016" PRIx64,
                 fnv1a(fnv1a(0, uid_of(pod)), cname));
        jset_str(o, "name", cname);
        jset_str(o, "image", jstr(jget(c, "image")) ? jstr(jget(c, "image")) : "");
        jset_str(o, "imageID", "");
        jset_str(o, "containerID", cid);
        json_object_object_add(o, "ready", json_object_new_boolean(run));
        json_object_object_add(o, "started", json_object_new_boolean(run));
        jset_int(o, "restartCount", 0);
        state = json_object_new_object();
        if (run) {
            sub = jchild(state, "running");
            jset_str(sub, "startedAt", started);
        } else {
            int code = (init && phase == 1) ? 0 : exit_code;
            sub = jchild(state, "terminated");
            jset_int(sub, "exitCode", code);
            jset_str(sub, "reason", code == 0 ? "Completed" : "Error");
            jset_str(sub, "startedAt", started);
            jset_str(sub, "finishedAt", finished);
            jset_str(sub, "containerID", cid);
        }
        json_object_object_add(o, "state", state);
        json_object_object_add(o, "lastState", json_object_new_object());
        json_object_array_add(arr, o);
    }
    if (jlen(arr))
        json_object_object_add(status, status_key, arr);
    else
        json_object_put(arr);
}

/* phase: 1 Running, 2 Succeeded, 3 Failed (deleted). */
static int pod_transition(cu_store *s, const ks_types *t, json_object *pod, int phase,
                          const char *host_ip, const char *ts)
{
    json_object *copy = jcopy(pod), *st;
    const char *started;
    char ip[32];
    if (!copy)
        return 0;
    st = jchild(copy, "status");
    started = jstr(jget(st, "startTime")) ? jstr(jget(st, "startTime")) : ts;
    if (phase == 1) {
        uint64_t h = fnv1a(0, uid_of(pod));
        jset_str(st, "phase", "Running");
        jset_str(st, "startTime", ts);
        started = ts;
        if (host_ip) {
            json_object *ips = json_object_new_array(), *e = json_object_new_object();
            jset_str(st, "hostIP", host_ip);
            jset_str(e, "ip", host_ip);
            json_object_array_add(ips, e);
            json_object_object_add(st, "hostIPs", ips);
        }
        snprintf(ip, sizeof ip, "10.244.%u.%u", (unsigned)(h % 250), (unsigned)((h >> 8) % 250 + 2));
        jset_str(st, "podIP", ip);
        json_object *pips = json_object_new_array(), *e = json_object_new_object();
        jset_str(e, "ip", ip);
        json_object_array_add(pips, e);
        json_object_object_add(st, "podIPs", pips);
        cond_set(st, "PodReadyToStartContainers", "True", NULL, NULL, ts, 0);
        cond_set(st, "Initialized", "True", NULL, NULL, ts, 0);
        cond_set(st, "Ready", "True", NULL, NULL, ts, 0);
        cond_set(st, "ContainersReady", "True", NULL, NULL, ts, 0);
        cond_set(st, "PodScheduled", "True", NULL, NULL, ts, 0);
    } else {
        jset_str(st, "phase", phase == 2 ? "Succeeded" : "Failed");
        if (!jget(st, "startTime"))
            jset_str(st, "startTime", ts);
        cond_set(st, "PodReadyToStartContainers", "False", NULL, NULL, ts, 0);
        cond_set(st, "Ready", "False", "PodCompleted", NULL, ts, 0);
        cond_set(st, "ContainersReady", "False", "PodCompleted", NULL, ts, 0);
    }
    if (!jget(st, "qosClass"))
        jset_str(st, "qosClass", pod_qos(jget(pod, "spec")));
    ctr_statuses(pod, st, "spec.initContainers", "initContainerStatuses", phase, started, ts,
                 phase == 3 ? 137 : 0);
    ctr_statuses(pod, st, "spec.containers", "containerStatuses", phase, started, ts,
                 phase == 3 ? 137 : 0);
    return ks_put(s, t->pods, copy, "status", NULL);
}

static const char *node_ip(json_object *node)
{
    json_object *a = jpath(node, "status.addresses");
    for (size_t i = 0; i < jlen(a); i++)
        if (str_eq(jstr(jget(jidx(a, i), "type")), "InternalIP"))
            return jstr(jget(jidx(a, i), "address"));
    return NULL;
}

int cu_kubesim_kubelet(cu_store *s, int64_t now_ms, int64_t *next_due_ms)
{
    ks_types t;
    json_object *nl, *pl, *nodes, *pods;
    int writes = 0;
    char ts[32];
    if (ks_types_get(s, &t) != 0)
        return 0;
    fmt_time(now_ms, ts);
    nl = ks_list(s, t.nodes, NULL, NULL);
    pl = ks_list(s, t.pods, NULL, NULL);
    nodes = jget(nl, "items");
    pods = jget(pl, "items");
    for (size_t i = 0; pl && nl && i < jlen(pods); i++) {
        json_object *p = jidx(pods, i), *node = NULL;
        const char *ph = jpstr(p, "status.phase"), *nn = jpstr(p, "spec.nodeName");
        if (phase_terminal(p))
            continue;
        if (jpath(p, "metadata.deletionTimestamp")) {
            /* the kubelet kills it (or, unbound, the pod GC fails it) */
            writes += pod_transition(s, &t, p, 3, NULL, ts);
            continue;
        }
        if (!nn)
            continue;
        for (size_t k = 0; k < jlen(nodes); k++)
            if (str_eq(name_of(jidx(nodes, k)), nn))
                node = jidx(nodes, k);
        if (!node)
            continue;
        if (!ph || str_eq(ph, "Pending")) {
            writes += pod_transition(s, &t, p, 1, node_ip(node), ts);
            ph = "Running";
            /* its runtime counts from the second-precision startTime */
            int64_t rt, start = now_ms - now_ms % 1000;
            json_object *a = jget(jpath(p, "metadata.annotations"), KS_RUNTIME_ANNOTATION);
            if (a && cu_kubesim_parse_duration(jstr(a), &rt) == CU_OK && next_due_ms &&
                start + rt < *next_due_ms)
                *next_due_ms = start + rt;
            continue;
        }
        if (str_eq(ph, "Running")) {
            json_object *a = jget(jpath(p, "metadata.annotations"), KS_RUNTIME_ANNOTATION);
            int64_t rt, start;
            if (!a || cu_kubesim_parse_duration(jstr(a), &rt) != CU_OK)
                continue; /* runs until deleted */
            if (!jpstr(p, "status.startTime") ||
                cu_time_parse(jpstr(p, "status.startTime"), &start) != CU_OK)
                start = now_ms;
            if (now_ms >= start + rt)
                writes += pod_transition(s, &t, p, 2, NULL, ts);
            else if (next_due_ms && start + rt < *next_due_ms)
                *next_due_ms = start + rt;
        }
    }
    if (nl)
        json_object_put(nl);
    if (pl)
        json_object_put(pl);
    return writes;
}

int cu_kubesim_step(cu_store *s, int most_allocated, int64_t now_ms, int64_t *next_due_ms)
{
    int total = 0;
    for (int round = 0; round < 16; round++) {
        int w = cu_kubesim_sync_jobs(s, now_ms, next_due_ms);
        w += cu_kubesim_schedule(s, most_allocated, now_ms);
        w += cu_kubesim_kubelet(s, now_ms, next_due_ms);
        total += w;
        if (!w)
            break;
    }
    return total;
}

/* ================= the thread ================= */

/* The thread polls the store's resourceVersion every tick and runs a pass
 * when it moved (or when a timed transition is due). It does not use
 * cu_store_on_change: the store cannot unregister a hook, and hooks run
 * outside the store lock from a copied list, so the hook's target would
 * have to outlive cu_kubesim_stop. A pass over a store that did not change
 * since the last pass is skipped; our own writes move the RV, so each
 * busy pass is followed by one quiet pass that writes nothing. */
struct cu_kubesim {
    cu_store *s;
    cu_kubesim_opts o;
    cu_clock clock;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop;
};

static int64_t ks_sys_now(void *ud)
{
    struct timespec ts;
    (void)ud;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void *ks_main(void *arg)
{
    cu_kubesim *k = arg;
    int64_t next_due = INT64_MIN, seen_rv = -1;
    int tick = k->o.tick_ms > 0 ? k->o.tick_ms : 100;
    for (;;) {
        int64_t rv = cu_store_rv(k->s), now = cu_clock_now(&k->clock);
        if (rv != seen_rv || now >= next_due) {
            if (rv != seen_rv)
                cu_store_gc(k->s); /* dependents of deleted objects */
            next_due = INT64_MAX;
            cu_kubesim_step(k->s, k->o.most_allocated, now, &next_due);
            seen_rv = rv;
        }
        pthread_mutex_lock(&k->mu);
        if (!k->stop) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += (long)(tick % 1000) * 1000000L;
            ts.tv_sec += tick / 1000 + ts.tv_nsec / 1000000000L;
            ts.tv_nsec %= 1000000000L;
            pthread_cond_timedwait(&k->cv, &k->mu, &ts);
        }
        int stop = k->stop;
        pthread_mutex_unlock(&k->mu);
        if (stop)
            break;
    }
    return NULL;
}

cu_kubesim *cu_kubesim_start(cu_store *s, const cu_kubesim_opts *o, char *err, size_t errn)
{
    cu_kubesim *k;
    ks_types t;
    char dummy[8];
    if (!err || !errn) {
        err = dummy;
        errn = sizeof dummy;
    }
    err[0] = '\0';
    if (!s || ks_types_get(s, &t) != 0) {
        snprintf(err, errn, "kubesim: the store does not serve pods, nodes, events and jobs");
        return NULL;
    }
    k = calloc(1, sizeof(*k));
    if (!k) {
        snprintf(err, errn, "kubesim: out of memory");
        return NULL;
    }
    k->s = s;
    if (o)
        k->o = *o;
    if (k->o.clock)
        k->clock = *k->o.clock;
    else
        k->clock.now_ms = ks_sys_now;
    k->o.clock = NULL; /* copied: the caller's may go away */
    if (cu_kubesim_add_nodes(s, k->o.nodes_file, cu_clock_now(&k->clock), err, errn) != CU_OK) {
        free(k);
        return NULL;
    }
    k->o.nodes_file = NULL; /* used up; not kept */
    pthread_mutex_init(&k->mu, NULL);
    pthread_cond_init(&k->cv, NULL);
    if (pthread_create(&k->th, NULL, ks_main, k) != 0) {
        snprintf(err, errn, "kubesim: cannot start the controller thread");
        pthread_cond_destroy(&k->cv);
        pthread_mutex_destroy(&k->mu);
        free(k);
        return NULL;
    }
    return k;
}

void cu_kubesim_stop(cu_kubesim *k)
{
    if (!k)
        return;
    pthread_mutex_lock(&k->mu);
    k->stop = 1;
    pthread_cond_signal(&k->cv);
    pthread_mutex_unlock(&k->mu);
    pthread_join(k->th, NULL);
    pthread_cond_destroy(&k->cv);
    pthread_mutex_destroy(&k->mu);
    free(k);
}
