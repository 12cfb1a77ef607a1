/*
 * cu_simsched.c - the default-scheduler model of the simulated cluster:
 * the model (cu_sched_pick), its FailedScheduling events and the pass
 * that binds pending pods (cu_kubesim_schedule).
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
 */
#include "ks_int.h"

#include <errno.h>

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
        if (ks_qty_json(v, &m) != 0 || m < 0)
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
    if (ks_qty_json(jget(jget(spec, "overhead"), res), &o) == 0 && o > 0)
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
        if (ks_qty_json(v, &m) != 0 || m < 0) {
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

/* Allocatable amount of res (falls back to capacity when the node has no
 * allocatable map; a node that states neither pod count gets 110). */
static int64_t node_alloc(json_object *node, const char *res)
{
    json_object *al = jpath(node, "status.allocatable");
    json_object *v = al ? jget(al, res) : jget(jpath(node, "status.capacity"), res);
    int64_t m = 0;
    if (!v && strcmp(res, "pods") == 0 && !jget(jpath(node, "status.capacity"), "pods"))
        return 110 * 1000LL;
    if (!v || ks_qty_json(v, &m) != 0)
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
        if (!nn || ks_phase_terminal(bp))
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
    uint64_t h = ks_fnv1a(ks_fnv1a(ks_fnv1a(0, ks_uid_of(pod)), reason), message);
    snprintf(name, sizeof name, "%.200s.%016" PRIx64, ks_name_of(pod), h);
    fmt_time(now, ts);
    if (cu_store_get(s, t->events, ks_ns_of(pod), name, &ev, &st) == CU_OK) {
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
    jset_str(md, "namespace", ks_ns_of(pod));
    json_object *io = jchild(ev, "involvedObject");
    jset_str(io, "apiVersion", "v1");
    jset_str(io, "kind", "Pod");
    jset_str(io, "namespace", ks_ns_of(pod));
    jset_str(io, "name", ks_name_of(pod));
    if (ks_uid_of(pod))
        jset_str(io, "uid", ks_uid_of(pod));
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
    if (cu_store_create(s, t->events, ks_ns_of(pod), ev, &out, &st) != CU_OK)
        return 0;
    if (out)
        json_object_put(out);
    return 1;
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
        if (str_eq(ks_name_of(jidx(pcs, i)), pc))
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
    if ((c = strcmp(ks_ns_of(x) ? ks_ns_of(x) : "", ks_ns_of(y) ? ks_ns_of(y) : "")) != 0)
        return c;
    return strcmp(ks_name_of(x) ? ks_name_of(x) : "", ks_name_of(y) ? ks_name_of(y) : "");
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
            if (!ks_phase_terminal(p))
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
            const char *node = ks_name_of(nodes[idx]);
            jset_str(jget(copy, "spec"), "nodeName", node);
            if (!ks_put(s, t.pods, copy, NULL, &out))
                continue;
            writes++;
            jset_str(jget(p, "spec"), "nodeName", node);
            bound[nb++] = p;
            ks_cond_set(jchild(out, "status"), "PodScheduled", "True", NULL, NULL, ts, 0);
            writes += ks_put(s, t.pods, out, "status", NULL);
            continue;
        }
        json_object *copy = jcopy(p);
        if (ks_cond_set(jchild(copy, "status"), "PodScheduled", "False", "Unschedulable", msg, ts, 0)) {
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
