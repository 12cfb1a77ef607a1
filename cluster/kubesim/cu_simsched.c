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
#include "cu_hash.h"
#include "cu_match.h"
#include "cu_podreq.h"

/* ================= pod requests (the rule: api/cu_podreq.h) ================= */

/* Adds the amounts of container c to out (names borrowed from c):
 * requests[r], else limits[r] (the API server defaults a missing request
 * to the limit); a malformed or negative quantity counts 0. nonzero: a
 * container stating no cpu or memory counts kube-scheduler's scoring
 * defaults. -1 when out of memory. */
static int ctr_amounts(json_object *c, int nonzero, cu_restab *out)
{
    json_object *r = cu_jget(c, "resources");
    json_object *maps[2] = { cu_jget(r, "requests"), cu_jget(r, "limits") };
    for (int m = 0; m < 2; m++) {
        if (!maps[m] || !json_object_is_type(maps[m], json_type_object))
            continue;
        json_object_object_foreach (maps[m], k, v) {
            int64_t q = 0;
            if (!v || strcmp(k, "pods") == 0 || cu_restab_find(out, k))
                continue;
            if (ks_qty_json(v, &q) != 0 || q < 0)
                q = 0;
            if (cu_restab_add_sat(out, k, q) != 0)
                return -1;
        }
    }
    if (nonzero && !cu_restab_find(out, "cpu") && cu_restab_add_sat(out, "cpu", KS_NZ_CPU_MILLI))
        return -1;
    if (nonzero && !cu_restab_find(out, "memory") &&
        cu_restab_add_sat(out, "memory", KS_NZ_MEM_MILLI))
        return -1;
    return 0;
}

/* The pod's effective requests by resource name (names borrowed from pod;
 * sums saturate), into out (empty; caller frees with cu_restab_free).
 * nonzero: with the scoring defaults of ctr_amounts. -1 when out of
 * memory. */
static int pod_requests(json_object *pod, int nonzero, cu_restab *out)
{
    json_object *spec = cu_jget(pod, "spec");
    json_object *cs = cu_jget(spec, "containers"), *ics = cu_jget(spec, "initContainers");
    json_object *ov = cu_jget(spec, "overhead");
    cu_restab one = { 0 };
    cu_podreq p;
    int rc = 0;
    cu_podreq_init(&p, 1, NULL, NULL);
    for (size_t i = 0; i < cu_jarr_len(cs) && rc == 0; i++) {
        one.n = 0;
        rc = ctr_amounts(jidx(cs, i), nonzero, &one);
        cu_podreq_add(&p, CU_CTR_REGULAR, one.it, one.n);
    }
    for (size_t i = 0; i < cu_jarr_len(ics) && rc == 0; i++) {
        json_object *ic = jidx(ics, i);
        one.n = 0;
        rc = ctr_amounts(ic, nonzero, &one);
        cu_podreq_add(&p,
                      str_eq(cu_jstr(ic, "restartPolicy"), "Always") ? CU_CTR_SIDECAR : CU_CTR_INIT,
                      one.it, one.n);
    }
    cu_podreq_close(&p);
    one.n = 0;
    if (ov && json_object_is_type(ov, json_type_object)) {
        json_object_object_foreach (ov, k, v) {
            int64_t o;
            if (strcmp(k, "pods") != 0 && ks_qty_json(v, &o) == 0 && o > 0 &&
                cu_restab_add_sat(&one, k, o) != 0)
                rc = -1;
        }
    }
    cu_podreq_overhead(&p, one.it, one.n);
    cu_restab_free(&one);
    if (rc == 0 && cu_podreq_oom(&p))
        rc = -1;
    if (rc == 0) {
        *out = p.total;
        memset(&p.total, 0, sizeof p.total);
    }
    cu_podreq_free(&p);
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
                 ks_ns_of(pod) ? ks_ns_of(pod) : "", ks_name_of(pod) ? ks_name_of(pod) : "", field);
        return -1;
    }
    json_object_object_foreach (map, k, v) {
        if (ks_qty_json(v, &m) != 0 || m < 0) {
            snprintf(msg, msgn, "pod %s/%s: %s[%s]: invalid quantity %s",
                     ks_ns_of(pod) ? ks_ns_of(pod) : "", ks_name_of(pod) ? ks_name_of(pod) : "",
                     field, k, json_object_to_json_string(v));
            return -1;
        }
    }
    return 0;
}

/* Checks every quantity of the pod; -1 with a message naming the field. */
static int pod_check(json_object *pod, char *msg, size_t msgn)
{
    json_object *spec = cu_jget(pod, "spec");
    const char *lists[2] = { "containers", "initContainers" };
    char field[160];
    for (int l = 0; l < 2; l++) {
        json_object *cs = cu_jget(spec, lists[l]);
        for (size_t i = 0; i < cu_jarr_len(cs); i++) {
            json_object *r = cu_jget(jidx(cs, i), "resources");
            snprintf(field, sizeof field, "spec.%s[%zu].resources.requests", lists[l], i);
            if (check_qty_map(pod, cu_jget(r, "requests"), field, msg, msgn) != 0)
                return -1;
            snprintf(field, sizeof field, "spec.%s[%zu].resources.limits", lists[l], i);
            if (check_qty_map(pod, cu_jget(r, "limits"), field, msg, msgn) != 0)
                return -1;
        }
    }
    return check_qty_map(pod, cu_jget(spec, "overhead"), "spec.overhead", msg, msgn);
}

/* ================= node matching (the rules: api/cu_match.h) ================= */

/* Decoders of json-c objects into cu_match's structs: strings borrowed
 * from the objects, arrays allocated in a; -1 when out of memory. What
 * the rules would reject is kept as it is (a non-string value is NULL),
 * so the rules see what the object says. */

static void *ks_alloc(cu_arena *a, size_t n, size_t size)
{
    return n ? cu_arena_alloc(a, n * size) : NULL;
}

/* A toleration with an operator other than Exists or Equal tolerates
 * nothing and is left out. */
static int dec_tolerations(cu_arena *a, json_object *tols, cu_toleration **out, size_t *n)
{
    *n = 0;
    if (!(*out = ks_alloc(a, cu_jarr_len(tols), sizeof(**out))) && cu_jarr_len(tols))
        return -1;
    for (size_t i = 0; i < cu_jarr_len(tols); i++) {
        json_object *t = jidx(tols, i);
        const char *op = cu_jstr(t, "operator");
        cu_toleration *x = &(*out)[*n];
        if (str_eq(op, "Exists"))
            x->op = CU_TOL_EXISTS;
        else if (!op || !*op || str_eq(op, "Equal"))
            x->op = CU_TOL_EQUAL;
        else
            continue;
        x->key = cu_jstr(t, "key");
        x->value = cu_jstr(t, "value");
        x->effect = cu_jstr(t, "effect");
        (*n)++;
    }
    return 0;
}

static int dec_taints(cu_arena *a, json_object *taints, cu_taint **out, size_t *n)
{
    *n = cu_jarr_len(taints);
    if (!(*out = ks_alloc(a, *n, sizeof(**out))) && *n)
        return -1;
    for (size_t i = 0; i < *n; i++) {
        json_object *t = jidx(taints, i);
        (*out)[i] = (cu_taint){ cu_jstr(t, "key"), cu_jstr(t, "value"), cu_jstr(t, "effect") };
    }
    return 0;
}

/* A map of strings (labels, nodeSelector); not a map: empty. */
static int dec_kvs(cu_arena *a, json_object *map, cu_kvs *out)
{
    size_t n = 0;
    out->n = 0;
    out->items = NULL;
    if (!map || !json_object_is_type(map, json_type_object))
        return 0;
    if (!(out->items = ks_alloc(a, (size_t)json_object_object_length(map), sizeof(cu_kv))))
        return json_object_object_length(map) ? -1 : 0;
    json_object_object_foreach (map, k, v) {
        out->items[n].key = k;
        out->items[n++].value = cu_jas_str(v);
    }
    out->n = n;
    return 0;
}

/* NodeSelectorRequirements; one with an unknown operator becomes In with
 * no values, which matches nothing, as the unknown operator does. */
static int dec_selreqs(cu_arena *a, json_object *reqs, cu_selterm *out)
{
    out->n = cu_jarr_len(reqs);
    if (!(out->reqs = ks_alloc(a, out->n, sizeof(cu_selreq))) && out->n)
        return -1;
    for (size_t i = 0; i < out->n; i++) {
        json_object *e = jidx(reqs, i), *vals = cu_jget(e, "values");
        const char *op = cu_jstr(e, "operator");
        cu_selreq *r = &out->reqs[i];
        int known = 0;
        r->key = cu_jstr(e, "key");
        r->op = CU_SEL_IN;
        for (int k = CU_SEL_IN; k <= CU_SEL_LT && !known; k++)
            if (str_eq(op, cu_selop_name((cu_selop)k))) {
                r->op = (cu_selop)k;
                known = 1;
            }
        r->values.n = known ? cu_jarr_len(vals) : 0;
        if (!(r->values.items = ks_alloc(a, r->values.n, sizeof(char *))) && r->values.n)
            return -1;
        for (size_t k = 0; k < r->values.n; k++)
            r->values.items[k] = cu_jas_str(jidx(vals, k));
    }
    return 0;
}

/* spec.nodeSelector and the required node affinity of pod. */
static int dec_nodesel(cu_arena *a, json_object *pod, cu_nodesel *s)
{
    json_object *req, *terms;
    memset(s, 0, sizeof(*s));
    if (dec_kvs(a, cu_jpath(pod, "spec.nodeSelector"), &s->selector) != 0)
        return -1;
    req =
        cu_jpath(pod, "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution");
    if (!req)
        return 0;
    s->has_required = 1;
    terms = cu_jget(req, "nodeSelectorTerms");
    s->nterms = cu_jarr_len(terms);
    if (!(s->terms = ks_alloc(a, s->nterms, sizeof(*s->terms))) && s->nterms)
        return -1;
    for (size_t i = 0; i < s->nterms; i++) {
        json_object *t = jidx(terms, i);
        if (dec_selreqs(a, cu_jget(t, "matchExpressions"), &s->terms[i].exprs) != 0 ||
            dec_selreqs(a, cu_jget(t, "matchFields"), &s->terms[i].fields) != 0)
            return -1;
    }
    return 0;
}

/* ================= reason histograms ================= */

typedef struct hist {
    size_t n, cap;
    char **r;
    int *c;
} hist;

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
    cu_restab used;     /* requests of the non-terminal pods bound to the node */
    cu_restab used_low; /* the part of it from pods of lower priority */
    int64_t npods, npods_low;
    int64_t nz_cpu, nz_mem;
} nacc;

/* Allocatable amount of res (falls back to capacity when the node has no
 * allocatable map; a node that states neither pod count gets 110). */
static int64_t node_alloc(json_object *node, const char *res)
{
    json_object *al = cu_jpath(node, "status.allocatable");
    json_object *v = al ? cu_jget(al, res) : cu_jget(cu_jpath(node, "status.capacity"), res);
    int64_t m = 0;
    if (!v && strcmp(res, "pods") == 0 && !cu_jget(cu_jpath(node, "status.capacity"), "pods"))
        return 110 * 1000LL;
    if (!v || ks_qty_json(v, &m) != 0)
        return 0;
    return m;
}

/* NodeResourcesFit's filter. exclude_low: as if every lower-priority pod
 * were evicted. Adds the reasons to h (may be NULL); returns their count. */
static int fit_resources(json_object *node, const nacc *na, const cu_restab *req, int exclude_low,
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
        int64_t want = req->it[i].milli, free_;
        if (want <= 0)
            continue;
        free_ = cu_qty_sat_sub(node_alloc(node, name), cu_restab_get(&na->used, name));
        if (exclude_low)
            free_ = cu_qty_sat_add(free_, cu_restab_get(&na->used_low, name));
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
    cu_restab req = { 0 }, nz = { 0 };
    cu_arena ar;
    cu_toleration *tols = NULL;
    size_t ntols = 0;
    cu_nodesel sel;
    nacc *acc = NULL;
    hist filt = { 0 }, post = { 0 };
    cu_buf b;
    int best = -1;
    int64_t best_score = -1, prio, pod_cpu, pod_mem;
    json_object *spec = cu_jget(pod, "spec");

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
    cu_arena_init(&ar, 0);
    acc = calloc(nnodes, sizeof(*acc));
    if (!acc || pod_requests(pod, 0, &req) != 0 || pod_requests(pod, 1, &nz) != 0 ||
        dec_tolerations(&ar, cu_jpath(pod, "spec.tolerations"), &tols, &ntols) != 0 ||
        dec_nodesel(&ar, pod, &sel) != 0) {
        snprintf(msg, msgn, "out of memory");
        free(acc);
        cu_restab_free(&req);
        cu_restab_free(&nz);
        cu_arena_free(&ar);
        return -1;
    }
    prio = cu_jas_num(cu_jget(spec, "priority"), 0);
    pod_cpu = cu_restab_get(&nz, "cpu");
    pod_mem = cu_restab_get(&nz, "memory");

    /* what is already bound to each node */
    for (size_t i = 0; i < nbound; i++) {
        json_object *bp = bound[i], *bspec = cu_jget(bp, "spec");
        const char *nn = cu_jstr(bspec, "nodeName");
        size_t j;
        cu_restab br = { 0 }, bnz = { 0 };
        int low;
        if (!nn || ks_phase_terminal(bp))
            continue;
        for (j = 0; j < nnodes; j++)
            if (str_eq(cu_jpath_str(nodes[j], "metadata.name"), nn))
                break;
        if (j == nnodes)
            continue;
        low = cu_jas_num(cu_jget(bspec, "priority"), 0) < prio;
        if (pod_requests(bp, 0, &br) == 0) {
            for (size_t r = 0; r < br.n; r++) {
                cu_restab_add_sat(&acc[j].used, br.it[r].name, br.it[r].milli);
                if (low)
                    cu_restab_add_sat(&acc[j].used_low, br.it[r].name, br.it[r].milli);
            }
        }
        cu_restab_free(&br);
        acc[j].npods++;
        acc[j].npods_low += low;
        if (pod_requests(bp, 1, &bnz) == 0) {
            acc[j].nz_cpu = cu_qty_sat_add(acc[j].nz_cpu, cu_restab_get(&bnz, "cpu"));
            acc[j].nz_mem = cu_qty_sat_add(acc[j].nz_mem, cu_restab_get(&bnz, "memory"));
        }
        cu_restab_free(&bnz);
    }

    for (size_t i = 0; i < nnodes; i++) {
        static const cu_taint unschedulable = { "node.kubernetes.io/unschedulable", "",
                                                "NoSchedule" };
        json_object *node = nodes[i];
        const cu_taint *taint;
        cu_taint *taints;
        size_t ntaints;
        cu_kvs labels;
        cu_kv name = { "metadata.name", ks_name_of(node) };
        cu_kvs fields = { 1, &name };
        const char *reason = NULL;
        char tbuf[600];
        if (dec_taints(&ar, cu_jpath(node, "spec.taints"), &taints, &ntaints) != 0 ||
            dec_kvs(&ar, cu_jpath(node, "metadata.labels"), &labels) != 0) {
            best = -1;
            snprintf(msg, msgn, "out of memory");
            goto out;
        }
        if (cu_jas_true(cu_jpath(node, "spec.unschedulable")) &&
            !cu_match_tolerated(tols, ntols, &unschedulable)) {
            reason = "node(s) were unschedulable";
        } else if ((taint = cu_match_untolerated(taints, ntaints, tols, ntols)) != NULL) {
            snprintf(tbuf, sizeof tbuf, "node(s) had untolerated taint {%s: %s}",
                     taint->key ? taint->key : "", taint->value ? taint->value : "");
            reason = tbuf;
        } else if (!cu_match_nodesel(&sel, &labels, &fields)) {
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
             strcmp(ks_name_of(node) ? ks_name_of(node) : "",
                    ks_name_of(nodes[best]) ? ks_name_of(nodes[best]) : "") < 0)) {
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
        if (str_eq(cu_jstr(spec, "preemptionPolicy"), "Never")) {
            cu_buf_puts(&b, " preemption: not eligible due to preemptionPolicy=Never.");
        } else {
            cu_buf_printf(&b, " preemption: 0/%zu nodes are available: ", nnodes);
            hist_join(&post, &b);
            cu_buf_puts(&b, ".");
        }
        snprintf(msg, msgn, "%s", cu_buf_str(&b));
        cu_buf_free(&b);
    }
out:
    for (size_t i = 0; i < nnodes; i++) {
        cu_restab_free(&acc[i].used);
        cu_restab_free(&acc[i].used_low);
    }
    free(acc);
    cu_restab_free(&req);
    cu_restab_free(&nz);
    cu_arena_free(&ar);
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
                        const char *reason, const char *action, const char *message, int64_t now)
{
    char name[300], ts[32];
    cu_status st;
    json_object *ev = NULL, *out = NULL;
    uint64_t h =
        cu_hash_field(cu_hash_field(cu_hash_field(CU_HASH_INIT, ks_uid_of(pod)), reason), message);
    snprintf(name, sizeof name, "%.200s.%016" PRIx64, ks_name_of(pod), h);
    fmt_time(now, ts);
    if (cu_store_get(s, t->events, ks_ns_of(pod), name, &ev, &st) == CU_OK) {
        int64_t last = 0;
        if (cu_time_parse(cu_jstr(ev, "lastTimestamp") ? cu_jstr(ev, "lastTimestamp") : "",
                          &last) == CU_OK &&
            now - last < KS_EVENT_REPEAT_MS) {
            json_object_put(ev);
            return 0;
        }
        cu_jset_int(ev, "count", cu_jas_num(cu_jget(ev, "count"), 1) + 1);
        cu_jset_str(ev, "lastTimestamp", ts);
        return ks_put(s, t->events, ev, NULL, NULL);
    }
    ev = json_object_new_object();
    cu_jset_str(ev, "apiVersion", "v1");
    cu_jset_str(ev, "kind", "Event");
    json_object *md = cu_jchild(ev, "metadata");
    cu_jset_str(md, "name", name);
    cu_jset_str(md, "namespace", ks_ns_of(pod));
    json_object *io = cu_jchild(ev, "involvedObject");
    cu_jset_str(io, "apiVersion", "v1");
    cu_jset_str(io, "kind", "Pod");
    cu_jset_str(io, "namespace", ks_ns_of(pod));
    cu_jset_str(io, "name", ks_name_of(pod));
    if (ks_uid_of(pod))
        cu_jset_str(io, "uid", ks_uid_of(pod));
    if (cu_jpath_str(pod, "metadata.resourceVersion"))
        cu_jset_str(io, "resourceVersion", cu_jpath_str(pod, "metadata.resourceVersion"));
    cu_jset_str(ev, "reason", reason);
    cu_jset_str(ev, "message", message);
    cu_jset_str(ev, "type", type);
    cu_jset_str(cu_jchild(ev, "source"), "component", "default-scheduler");
    cu_jset_str(ev, "reportingComponent", "default-scheduler");
    cu_jset_str(ev, "reportingInstance", "default-scheduler");
    cu_jset_str(ev, "action", action);
    cu_jset_str(ev, "firstTimestamp", ts);
    cu_jset_str(ev, "lastTimestamp", ts);
    cu_jset_int(ev, "count", 1);
    if (cu_store_create(s, t->events, ks_ns_of(pod), ev, &out, &st) != CU_OK)
        return 0;
    if (out)
        json_object_put(out);
    return 1;
}

/* ================= the scheduler ================= */

typedef struct pcval {
    const char *name;
    int64_t v;
} pcval;

static int64_t pod_priority(json_object *pod, json_object *pcs)
{
    json_object *pr = cu_jpath(pod, "spec.priority");
    const char *pc = cu_jpath_str(pod, "spec.priorityClassName");
    if (pr)
        return cu_jas_num(pr, 0);
    for (size_t i = 0; pc && i < cu_jarr_len(pcs); i++)
        if (str_eq(ks_name_of(jidx(pcs, i)), pc))
            return cu_jas_num(cu_jget(jidx(pcs, i), "value"), 0);
    for (size_t i = 0; !pc && i < cu_jarr_len(pcs); i++)
        if (cu_jas_true(cu_jget(jidx(pcs, i), "globalDefault")))
            return cu_jas_num(cu_jget(jidx(pcs, i), "value"), 0);
    return 0;
}

static int cmp_pending(const void *a, const void *b)
{
    json_object *x = *(json_object *const *)a, *y = *(json_object *const *)b;
    int64_t px = cu_jas_num(cu_jpath(x, "spec.priority"), 0);
    int64_t py = cu_jas_num(cu_jpath(y, "spec.priority"), 0);
    const char *tx = cu_jpath_str(x, "metadata.creationTimestamp");
    const char *ty = cu_jpath_str(y, "metadata.creationTimestamp");
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
    const char *ph = cu_jpath_str(p, "status.phase");
    const char *sn = cu_jpath_str(p, "spec.schedulerName");
    if (cu_jpath_str(p, "spec.nodeName") || cu_jpath(p, "metadata.deletionTimestamp"))
        return 0;
    if (ph && !str_eq(ph, "Pending"))
        return 0;
    if (cu_jarr_len(cu_jpath(p, "spec.schedulingGates")) > 0)
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
    pods = cu_jget(pl, "items");
    pcs = cu_jget(pcl, "items");
    nn = cu_jarr_len(cu_jget(nl, "items"));
    np = cu_jarr_len(pods);
    nodes = calloc(nn ? nn : 1, sizeof(*nodes));
    bound = calloc(np ? np : 1, sizeof(*bound));
    pending = calloc(np ? np : 1, sizeof(*pending));
    if (!nl || !pl || !nodes || !bound || !pending)
        goto out;
    for (size_t i = 0; i < nn; i++)
        nodes[i] = jidx(cu_jget(nl, "items"), i);
    for (size_t i = 0; i < np; i++) {
        json_object *p = jidx(pods, i);
        /* resolve priorityClassName as the Priority admission plugin would */
        if (!cu_jpath(p, "spec.priority") && cu_jget(p, "spec"))
            cu_jset_int(cu_jget(p, "spec"), "priority", pod_priority(p, pcs));
        if (cu_jpath_str(p, "spec.nodeName")) {
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
            json_object *copy = cu_jcopy(p), *out = NULL;
            const char *node = ks_name_of(nodes[idx]);
            cu_jset_str(cu_jget(copy, "spec"), "nodeName", node);
            if (!ks_put(s, t.pods, copy, NULL, &out))
                continue;
            writes++;
            cu_jset_str(cu_jget(p, "spec"), "nodeName", node);
            bound[nb++] = p;
            ks_cond_set(cu_jchild(out, "status"), "PodScheduled", "True", NULL, NULL, ts, 0);
            writes += ks_put(s, t.pods, out, "status", NULL);
            continue;
        }
        json_object *copy = cu_jcopy(p);
        if (ks_cond_set(cu_jchild(copy, "status"), "PodScheduled", "False", "Unschedulable", msg,
                        ts, 0)) {
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
