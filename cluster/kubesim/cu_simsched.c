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
#include "cu_clock.h"
#include "cu_hash.h"
#include "cu_match.h"
#include "cu_podreq.h"
#include "cu_strmap.h"

#include <time.h>

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

/* ================= decoded nodes and pods ================= */

/* The scheduler works on decoded objects: a Node or a Pod is decoded once
 * per change (from the store's watch, or from a list), never looked up in
 * JSON per pod x node. Resource names of pods are interned in the world
 * (pod JSON is dropped once bound); a node keeps its JSON, which its
 * decoded parts borrow (nodes are few). */

static char *xstrdup(const char *s) { return s ? strdup(s) : NULL; }

static const char *intern(ks_world *w, const char *name)
{
    int i = cu_strmap_get(&w->names, name);
    if (i >= 0)
        return w->owned[i];
    if (w->nowned == w->capowned) {
        size_t cap = w->capowned ? w->capowned * 2 : 16;
        char **o = realloc(w->owned, cap * sizeof(*o));
        if (!o)
            return NULL;
        w->owned = o;
        w->capowned = cap;
    }
    char *c = strdup(name);
    if (!c)
        return NULL;
    if (cu_strmap_put(&w->names, c, (int)w->nowned) != CU_OK) {
        free(c);
        return NULL;
    }
    w->owned[w->nowned++] = c;
    return c;
}

/* Copies t into out with interned names; -1 when out of memory. */
static int restab_intern(ks_world *w, const cu_restab *t, cu_restab *out)
{
    out->n = 0;
    for (size_t i = 0; i < t->n; i++) {
        const char *nm = intern(w, t->it[i].name);
        if (!nm || cu_restab_add_sat(out, nm, t->it[i].milli) != 0)
            return -1;
    }
    return 0;
}

static void restab_add(cu_restab *t, const cu_restab *d, int sign)
{
    for (size_t i = 0; i < d->n; i++) {
        cu_res *r = cu_restab_slot(t, d->it[i].name);
        if (r)
            r->milli = sign > 0 ? cu_qty_sat_add(r->milli, d->it[i].milli)
                                : cu_qty_sat_sub(r->milli, d->it[i].milli);
    }
}

static void world_init(ks_world *w)
{
    memset(w, 0, sizeof(*w));
    cu_strmap_init(&w->node_ix);
    cu_strmap_init(&w->names);
    w->freelist = -1;
    w->epoch = 1;
}

/* ---- Jobs: uid -> entry, each with the list of its pods ---- */

static uint64_t job_bucket(const ks_world *w, const char *uid)
{
    return cu_hash_str(uid ? uid : "") % w->njbuckets;
}

static int job_find(const ks_world *w, const char *uid)
{
    if (!w->njbuckets)
        return -1;
    for (int i = w->jbuckets[job_bucket(w, uid)]; i >= 0; i = w->jobs[i].next)
        if (str_eq(w->jobs[i].uid, uid ? uid : ""))
            return i;
    return -1;
}

static void job_dirty(ks_world *w, int j)
{
    if (j < 0 || w->jobs[j].dirty)
        return;
    if (w->ndirty == w->capdirty) {
        size_t cap = w->capdirty ? w->capdirty * 2 : 64;
        int *d = realloc(w->dirty, cap * sizeof(*d));
        if (!d)
            return;
        w->dirty = d;
        w->capdirty = cap;
    }
    w->jobs[j].dirty = 1;
    w->dirty[w->ndirty++] = j;
}

/* The entry of uid, added (not existing yet) when missing; -1 on OOM. */
static int job_get(ks_world *w, const char *uid)
{
    int j = job_find(w, uid);
    if (j >= 0)
        return j;
    if (w->njobs == w->capjobs) {
        size_t cap = w->capjobs ? w->capjobs * 2 : 256;
        ks_job *nj = realloc(w->jobs, cap * sizeof(*nj));
        if (!nj)
            return -1;
        w->jobs = nj;
        w->capjobs = cap;
    }
    if (!w->njbuckets || w->njobs >= w->njbuckets / 2) {
        size_t nb = w->njbuckets ? w->njbuckets * 4 : 1024;
        int *b = malloc(nb * sizeof(*b));
        if (!b)
            return -1;
        for (size_t i = 0; i < nb; i++)
            b[i] = -1;
        free(w->jbuckets);
        w->jbuckets = b;
        w->njbuckets = nb;
        for (size_t i = 0; i < w->njobs; i++) {
            uint64_t h = job_bucket(w, w->jobs[i].uid);
            w->jobs[i].next = b[h];
            b[h] = (int)i;
        }
    }
    j = (int)w->njobs;
    ks_job *e = &w->jobs[j];
    memset(e, 0, sizeof(*e));
    if (!(e->uid = strdup(uid ? uid : "")))
        return -1;
    e->first = -1;
    e->due = INT64_MAX;
    uint64_t h = job_bucket(w, e->uid);
    e->next = w->jbuckets[h];
    w->jbuckets[h] = j;
    w->njobs++;
    return j;
}

static void job_unlink_pod(ks_world *w, ks_pod *p)
{
    int idx = (int)(p - w->pods);
    if (p->job < 0)
        return;
    for (int *link = &w->jobs[p->job].first; *link >= 0; link = &w->pods[*link].sib)
        if (*link == idx) {
            *link = p->sib;
            break;
        }
    job_dirty(w, p->job);
    p->job = -1;
    p->sib = -1;
}

static void job_apply(ks_world *w, json_object *obj)
{
    int j = ks_uid_of(obj) ? job_get(w, ks_uid_of(obj)) : -1;
    if (j < 0)
        return;
    ks_job *e = &w->jobs[j];
    free(e->ns);
    free(e->name);
    e->ns = xstrdup(ks_ns_of(obj));
    e->name = xstrdup(ks_name_of(obj));
    e->exists = 1;
    e->deleting = cu_jpath(obj, "metadata.deletionTimestamp") != NULL;
    job_dirty(w, j);
}

static void job_delete(ks_world *w, json_object *obj)
{
    int j = job_find(w, ks_uid_of(obj));
    if (j < 0)
        return;
    w->jobs[j].exists = 0;
    w->jobs[j].due = INT64_MAX;
    job_dirty(w, j);
}

static void pod_clear_pending(ks_pod *p)
{
    if (p->obj)
        json_object_put(p->obj);
    p->obj = NULL;
    cu_arena_free(&p->ar);
    p->tols = NULL;
    p->ntols = 0;
    memset(&p->sel, 0, sizeof p->sel);
    free(p->bad);
    p->bad = NULL;
}

static void pod_clear(ks_pod *p)
{
    pod_clear_pending(p);
    free(p->ns);
    free(p->name);
    free(p->uid);
    free(p->node);
    free(p->ctime);
    cu_restab_free(&p->req);
    int next = p->next;
    memset(p, 0, sizeof(*p));
    p->next = next;
}

static void node_clear(ks_node *n)
{
    if (n->obj)
        json_object_put(n->obj);
    n->obj = NULL;
    cu_arena_free(&n->ar);
    n->taints = NULL;
    n->ntaints = 0;
    memset(&n->labels, 0, sizeof n->labels);
    cu_restab_free(&n->alloc);
}

static void world_free(ks_world *w)
{
    for (size_t i = 0; i < w->nnodes; i++) {
        node_clear(&w->nodes[i]);
        cu_restab_free(&w->nodes[i].used);
        for (size_t k = 0; k < w->nodes[i].nprios; k++)
            cu_restab_free(&w->nodes[i].prios[k].used);
        free(w->nodes[i].prios);
        free(w->nodes[i].name);
    }
    free(w->nodes);
    for (size_t i = 0; i < w->npods; i++)
        pod_clear(&w->pods[i]);
    free(w->pods);
    free(w->buckets);
    for (size_t i = 0; i < w->njobs; i++) {
        free(w->jobs[i].uid);
        free(w->jobs[i].ns);
        free(w->jobs[i].name);
    }
    free(w->jobs);
    free(w->jbuckets);
    free(w->dirty);
    cu_strmap_free(&w->node_ix);
    cu_strmap_free(&w->names);
    for (size_t i = 0; i < w->nowned; i++)
        free(w->owned[i]);
    free(w->owned);
    world_init(w);
}

static ks_node *node_of(ks_world *w, const char *name)
{
    int i = name ? cu_strmap_get(&w->node_ix, name) : -1;
    return i >= 0 && w->nodes[i].live ? &w->nodes[i] : NULL;
}

/* Adds (sign 1) or removes (-1) pod p's requests on node n. */
static void node_account(ks_world *w, ks_node *n, const ks_pod *p, int sign)
{
    ks_prio *pr = NULL;
    restab_add(&n->used, &p->req, sign);
    n->npods += sign;
    n->nz_cpu =
        sign > 0 ? cu_qty_sat_add(n->nz_cpu, p->nz_cpu) : cu_qty_sat_sub(n->nz_cpu, p->nz_cpu);
    n->nz_mem =
        sign > 0 ? cu_qty_sat_add(n->nz_mem, p->nz_mem) : cu_qty_sat_sub(n->nz_mem, p->nz_mem);
    for (size_t k = 0; k < n->nprios; k++)
        if (n->prios[k].prio == p->prio)
            pr = &n->prios[k];
    if (!pr) {
        ks_prio *np = realloc(n->prios, (n->nprios + 1) * sizeof(*np));
        if (np) {
            n->prios = np;
            pr = &np[n->nprios++];
            memset(pr, 0, sizeof(*pr));
            pr->prio = p->prio;
        }
    }
    if (pr) {
        restab_add(&pr->used, &p->req, sign);
        pr->npods += sign;
    }
    n->epoch = ++w->epoch;
}

/* Counts p on its node when it should be and is not, or the reverse. */
static void pod_recount(ks_world *w, ks_pod *p, int want)
{
    ks_node *n = want ? node_of(w, p->node) : NULL;
    if (p->counted && !want) {
        ks_node *o = node_of(w, p->node);
        if (o)
            node_account(w, o, p, -1);
        p->counted = 0;
    } else if (!p->counted && n) {
        node_account(w, n, p, 1);
        p->counted = 1;
    }
}

static uint64_t pod_bucket(const ks_world *w, const char *ns, const char *name)
{
    return cu_hash_field(cu_hash_field(CU_HASH_INIT, ns ? ns : ""), name ? name : "") % w->nbuckets;
}

static ks_pod *pod_find(ks_world *w, const char *ns, const char *name)
{
    if (!w->nbuckets)
        return NULL;
    for (int i = w->buckets[pod_bucket(w, ns, name)]; i >= 0; i = w->pods[i].next)
        if (str_eq(w->pods[i].name, name) &&
            str_eq(w->pods[i].ns ? w->pods[i].ns : "", ns ? ns : ""))
            return &w->pods[i];
    return NULL;
}

static int pod_rehash(ks_world *w, size_t nb)
{
    int *b = malloc(nb * sizeof(*b));
    if (!b)
        return -1;
    for (size_t i = 0; i < nb; i++)
        b[i] = -1;
    free(w->buckets);
    w->buckets = b;
    w->nbuckets = nb;
    for (size_t i = 0; i < w->npods; i++) {
        if (!w->pods[i].inuse)
            continue;
        uint64_t h = pod_bucket(w, w->pods[i].ns, w->pods[i].name);
        w->pods[i].next = b[h];
        b[h] = (int)i;
    }
    return 0;
}

/* A new slot for ns/name, linked in the hash; NULL when out of memory. */
static ks_pod *pod_insert(ks_world *w, const char *ns, const char *name)
{
    ks_pod *p;
    int idx;
    /* the table grows before the new slot is taken (a rehash links every
     * slot in use, and the new one is linked below) */
    if ((!w->nbuckets || w->npods + 1 > w->nbuckets / 2) &&
        pod_rehash(w, w->nbuckets ? w->nbuckets * 4 : 1024) != 0)
        return NULL;
    if (w->freelist >= 0) {
        idx = w->freelist;
        w->freelist = w->pods[idx].next;
    } else {
        if (w->npods == w->cappods) {
            size_t cap = w->cappods ? w->cappods * 2 : 256;
            ks_pod *np = realloc(w->pods, cap * sizeof(*np));
            if (!np)
                return NULL;
            w->pods = np;
            w->cappods = cap;
        }
        idx = (int)w->npods++;
        memset(&w->pods[idx], 0, sizeof(ks_pod));
    }
    p = &w->pods[idx];
    p->inuse = 1;
    p->job = -1;
    p->sib = -1;
    p->ns = xstrdup(ns ? ns : "");
    p->name = xstrdup(name);
    uint64_t h = pod_bucket(w, p->ns, p->name);
    p->next = w->buckets[h];
    w->buckets[h] = idx;
    return p;
}

static void pod_remove(ks_world *w, ks_pod *p)
{
    int idx = (int)(p - w->pods);
    uint64_t h = pod_bucket(w, p->ns, p->name);
    pod_recount(w, p, 0);
    job_unlink_pod(w, p);
    for (int *link = &w->buckets[h]; *link >= 0; link = &w->pods[*link].next)
        if (*link == idx) {
            *link = p->next;
            break;
        }
    pod_clear(p);
    p->next = w->freelist;
    w->freelist = idx;
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

typedef struct pcval {
    const char *name;
    int64_t v;
} pcval;

/* spec.priority, else resolved from priorityClassName as the Priority
 * admission plugin would (pcs: the PriorityClass items, may be NULL). */
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

static uint64_t hash_json(uint64_t h, json_object *o)
{
    return cu_hash_field(h, o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN) : "-");
}

/* (Re)decodes pod obj (borrowed; a reference is taken while it is
 * pending) into the world. -1 when out of memory. */
static int pod_apply(ks_world *w, json_object *obj, json_object *pcs, const char *ns,
                     const char *name, int force_pending)
{
    ks_pod *p = pod_find(w, ns, name);
    cu_restab tmp = { 0 };
    int rc = 0;
    char msg[KS_MSG_MAX + 1];
    if (!name)
        return 0;
    if (!p && !(p = pod_insert(w, ns, name)))
        return -1;
    pod_clear_pending(p);
    /* what counts on the node, decoded aside first: when it is what
     * already counts there, the node does not change */
    char *node = force_pending ? NULL : xstrdup(cu_jpath_str(obj, "spec.nodeName"));
    int active = node && !ks_phase_terminal(obj);
    int64_t prio = pod_priority(obj, pcs), nz_cpu = 0, nz_mem = 0;
    cu_restab req = { 0 };
    if (pod_requests(obj, 0, &tmp) != 0 || restab_intern(w, &tmp, &req) != 0)
        rc = -1;
    cu_restab_free(&tmp);
    if (pod_requests(obj, 1, &tmp) == 0) {
        nz_cpu = cu_restab_get(&tmp, "cpu");
        nz_mem = cu_restab_get(&tmp, "memory");
    }
    cu_restab_free(&tmp);
    int same = p->counted && active && str_eq(p->node, node) && p->prio == prio &&
               p->nz_cpu == nz_cpu && p->nz_mem == nz_mem && p->req.n == req.n;
    for (size_t i = 0; same && i < req.n; i++)
        same = p->req.it[i].name == req.it[i].name && p->req.it[i].milli == req.it[i].milli;
    if (!same)
        pod_recount(w, p, 0);
    free(p->uid);
    free(p->node);
    free(p->ctime);
    cu_restab_free(&p->req);
    p->uid = xstrdup(ks_uid_of(obj));
    p->node = node;
    p->ctime = xstrdup(cu_jpath_str(obj, "metadata.creationTimestamp"));
    p->prio = prio;
    p->req = req;
    p->nz_cpu = nz_cpu;
    p->nz_mem = nz_mem;
    p->active = active;
    p->pending = force_pending || pod_pending(obj);
    p->tried = 0;
    /* for the kubelet and the Job controller */
    const char *ph = cu_jpath_str(obj, "status.phase");
    const char *owner = ks_job_owner_uid(obj);
    int64_t start;
    p->terminal = ks_phase_terminal(obj);
    p->running = str_eq(ph, "Running");
    p->waiting = !ph || str_eq(ph, "Pending");
    p->deleting = cu_jpath(obj, "metadata.deletionTimestamp") != NULL;
    p->has_fin = ks_has_finalizer(obj, KS_TRACKING_FINALIZER);
    p->has_ctrl = ks_has_controller(obj);
    p->rt_ms = ks_pod_runtime(obj);
    p->has_rt = p->rt_ms >= 0;
    p->start_ms = -1;
    if (cu_jpath_str(obj, "status.startTime") &&
        cu_time_parse(cu_jpath_str(obj, "status.startTime"), &start) == CU_OK)
        p->start_ms = start;
    if (!force_pending) {
        int j = owner ? job_get(w, owner) : !p->has_ctrl ? job_get(w, "") : -1;
        if (j != p->job) {
            job_unlink_pod(w, p);
            if (j >= 0) {
                p->job = j;
                p->sib = w->jobs[j].first;
                w->jobs[j].first = (int)(p - w->pods);
            }
        }
        job_dirty(w, p->job);
    }
    if (p->pending) {
        json_object *spec = cu_jget(obj, "spec");
        p->obj = json_object_get(obj);
        cu_arena_init(&p->ar, 1024);
        p->never_preempt = str_eq(cu_jstr(spec, "preemptionPolicy"), "Never");
        if (pod_check(obj, msg, sizeof msg) != 0)
            p->bad = strdup(msg);
        if (dec_tolerations(&p->ar, cu_jpath(obj, "spec.tolerations"), &p->tols, &p->ntols) != 0 ||
            dec_nodesel(&p->ar, obj, &p->sel) != 0)
            rc = -1;
        /* the class: what decides which nodes fit and the message */
        uint64_t h = hash_json(CU_HASH_INIT, cu_jget(spec, "tolerations"));
        h = hash_json(h, cu_jget(spec, "nodeSelector"));
        h = hash_json(h, cu_jpath(spec, "affinity.nodeAffinity"));
        for (size_t i = 0; i < p->req.n; i++) {
            char q[32];
            snprintf(q, sizeof q, "%" PRId64, p->req.it[i].milli);
            h = cu_hash_field(cu_hash_field(h, p->req.it[i].name), q);
        }
        char pr[48];
        snprintf(pr, sizeof pr, "%" PRId64 "/%d", p->prio, p->never_preempt);
        h = cu_hash_field(h, pr);
        p->cls = (p->bad || rc != 0) ? 0 : (h ? h : 1);
    }
    if (rc != 0) {
        /* out of memory: not schedulable, so nothing is half-decoded */
        p->pending = 0;
        pod_clear_pending(p);
    }
    if (!same)
        pod_recount(w, p, p->active);
    return rc;
}

static void pod_delete(ks_world *w, json_object *obj)
{
    ks_pod *p = pod_find(w, ks_ns_of(obj), ks_name_of(obj));
    if (p)
        pod_remove(w, p);
}

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

/* (Re)decodes node obj (borrowed; a reference is kept). */
static int node_apply(ks_world *w, json_object *obj)
{
    const char *name = ks_name_of(obj);
    int i, added = 0;
    ks_node *n;
    json_object *al, *map;
    if (!name)
        return 0;
    i = cu_strmap_get(&w->node_ix, name);
    if (i < 0) {
        if (w->nnodes == w->capnodes) {
            size_t cap = w->capnodes ? w->capnodes * 2 : 64;
            ks_node *nn = realloc(w->nodes, cap * sizeof(*nn));
            if (!nn)
                return -1;
            w->nodes = nn;
            w->capnodes = cap;
        }
        n = &w->nodes[w->nnodes];
        memset(n, 0, sizeof(*n));
        if (!(n->name = strdup(name)) ||
            cu_strmap_put(&w->node_ix, n->name, (int)w->nnodes) != CU_OK) {
            free(n->name);
            return -1;
        }
        i = (int)w->nnodes++;
    }
    n = &w->nodes[i];
    node_clear(n);
    if (!n->live) {
        added = 1;
        n->live = 1;
        w->nlive++;
    }
    n->obj = json_object_get(obj);
    cu_arena_init(&n->ar, 1024);
    n->unschedulable = cu_jas_true(cu_jpath(obj, "spec.unschedulable"));
    if (dec_taints(&n->ar, cu_jpath(obj, "spec.taints"), &n->taints, &n->ntaints) != 0 ||
        dec_kvs(&n->ar, cu_jpath(obj, "metadata.labels"), &n->labels) != 0)
        return -1;
    al = cu_jpath(obj, "status.allocatable");
    map = al ? al : cu_jpath(obj, "status.capacity");
    if (map && json_object_is_type(map, json_type_object)) {
        json_object_object_foreach (map, k, v) {
            (void)v;
            if (cu_restab_add_sat(&n->alloc, k, node_alloc(obj, k)) != 0)
                return -1;
        }
    }
    n->alloc_pods = node_alloc(obj, "pods");
    n->alloc_cpu = node_alloc(obj, "cpu");
    n->alloc_mem = node_alloc(obj, "memory");
    n->epoch = ++w->epoch;
    if (added) /* pods bound to it before it existed count now */
        for (size_t k = 0; k < w->npods; k++)
            if (w->pods[k].inuse && w->pods[k].active && str_eq(w->pods[k].node, name))
                pod_recount(w, &w->pods[k], 1);
    return 0;
}

static void node_delete(ks_world *w, json_object *obj)
{
    ks_node *n = node_of(w, ks_name_of(obj));
    if (!n)
        return;
    for (size_t k = 0; k < w->npods; k++)
        if (w->pods[k].inuse && w->pods[k].counted && str_eq(w->pods[k].node, n->name))
            pod_recount(w, &w->pods[k], 0);
    node_clear(n);
    n->live = 0;
    w->nlive--;
    w->epoch++;
}

/* ================= the scheduler model ================= */

/* The usage of n's pods of priority below prio (the preemption part). */
static void node_low(const ks_node *n, int64_t prio, cu_restab *used, int64_t *npods)
{
    *npods = 0;
    for (size_t k = 0; k < n->nprios; k++)
        if (n->prios[k].prio < prio) {
            restab_add(used, &n->prios[k].used, 1);
            *npods += n->prios[k].npods;
        }
}

/* NodeResourcesFit's filter. low (may be NULL): as if every pod of the
 * usage low_used / low_pods were evicted. Adds the reasons to h (may be
 * NULL); returns their count. */
static int fit_resources(const ks_node *n, const cu_restab *req, const cu_restab *low_used,
                         int64_t low_pods, hist *h)
{
    int bad = 0;
    char buf[320];
    if ((n->npods - low_pods + 1) * 1000 > n->alloc_pods) {
        bad++;
        if (!h)
            return bad;
        hist_add(h, "Too many pods");
    }
    for (size_t i = 0; i < req->n; i++) {
        const char *name = req->it[i].name;
        int64_t want = req->it[i].milli, free_;
        if (want <= 0)
            continue;
        free_ = cu_qty_sat_sub(cu_restab_get(&n->alloc, name), cu_restab_get(&n->used, name));
        if (low_used)
            free_ = cu_qty_sat_add(free_, cu_restab_get(low_used, name));
        if (want > free_) {
            bad++;
            if (!h)
                return bad;
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

static int64_t node_score(const ks_node *n, const ks_pod *p, int most)
{
    int64_t sum = 0, w = 0;
    int64_t cpu = n->alloc_cpu, mem = n->alloc_mem / 1000;
    if (cpu > 0) {
        sum += res_score(cu_qty_sat_add(n->nz_cpu, p->nz_cpu), cpu, most);
        w++;
    }
    if (mem > 0) {
        sum += res_score(cu_qty_sat_add(n->nz_mem, p->nz_mem) / 1000, mem, most);
        w++;
    }
    return w ? sum / w : 0;
}

/* The filters before NodeResourcesFit; the reason (in tbuf or static) or
 * NULL when n passes them. */
static const char *filter_node(const ks_node *n, const ks_pod *p, char *tbuf, size_t tn)
{
    static const cu_taint unschedulable = { "node.kubernetes.io/unschedulable", "", "NoSchedule" };
    const cu_taint *taint;
    cu_kv name = { "metadata.name", n->name };
    cu_kvs fields = { 1, &name };
    if (n->unschedulable && !cu_match_tolerated(p->tols, p->ntols, &unschedulable))
        return "node(s) were unschedulable";
    if ((taint = cu_match_untolerated(n->taints, n->ntaints, p->tols, p->ntols)) != NULL) {
        snprintf(tbuf, tn, "node(s) had untolerated taint {%s: %s}", taint->key ? taint->key : "",
                 taint->value ? taint->value : "");
        return tbuf;
    }
    if (!cu_match_nodesel(&p->sel, &n->labels, &fields))
        return "node(s) didn't match Pod's node affinity/selector";
    return NULL;
}

/* The best node for p among the live nodes changed after epoch `after`
 * (0: all), or NULL. */
static ks_node *pick(ks_world *w, const ks_pod *p, uint64_t after, int most)
{
    ks_node *best = NULL;
    int64_t best_score = -1;
    char tbuf[600];
    for (size_t i = 0; i < w->nnodes; i++) {
        ks_node *n = &w->nodes[i];
        if (!n->live || n->epoch <= after)
            continue;
        if (filter_node(n, p, tbuf, sizeof tbuf) || fit_resources(n, &p->req, NULL, 0, NULL) > 0)
            continue;
        int64_t sc = node_score(n, p, most);
        if (!best || sc > best_score || (sc == best_score && strcmp(n->name, best->name) < 0)) {
            best = n;
            best_score = sc;
        }
    }
    return best;
}

/* FailedScheduling's message for p, which fits no node. */
static void fail_msg(ks_world *w, const ks_pod *p, char *msg, size_t msgn)
{
    hist filt = { 0 }, post = { 0 };
    cu_buf b;
    char tbuf[600];
    if (p->bad) {
        snprintf(msg, msgn, "%s", p->bad);
        return;
    }
    if (w->nlive == 0) {
        snprintf(msg, msgn, "no nodes available to schedule pods");
        return;
    }
    for (size_t i = 0; i < w->nnodes; i++) {
        ks_node *n = &w->nodes[i];
        const char *reason;
        if (!n->live)
            continue;
        if ((reason = filter_node(n, p, tbuf, sizeof tbuf)) != NULL) {
            hist_add(&filt, reason);
            hist_add(&post, "Preemption is not helpful for scheduling");
            continue;
        }
        if (fit_resources(n, &p->req, NULL, 0, &filt) > 0) {
            cu_restab low = { 0 };
            int64_t low_pods = 0;
            node_low(n, p->prio, &low, &low_pods);
            if (low_pods == 0 || fit_resources(n, &p->req, &low, low_pods, &post) == 0)
                hist_add(&post, "No preemption victims found for incoming pod");
            cu_restab_free(&low);
        }
    }
    cu_buf_init(&b, 64 * 1024);
    cu_buf_printf(&b, "0/%zu nodes are available", w->nlive);
    if (filt.n) {
        cu_buf_puts(&b, ": ");
        hist_join(&filt, &b);
        cu_buf_puts(&b, ".");
    }
    if (p->never_preempt) {
        cu_buf_puts(&b, " preemption: not eligible due to preemptionPolicy=Never.");
    } else {
        cu_buf_printf(&b, " preemption: 0/%zu nodes are available: ", w->nlive);
        hist_join(&post, &b);
        cu_buf_puts(&b, ".");
    }
    snprintf(msg, msgn, "%s", cu_buf_str(&b));
    cu_buf_free(&b);
    hist_free(&filt);
    hist_free(&post);
}

int cu_sched_pick(json_object *const *nodes, size_t nnodes, json_object *const *bound,
                  size_t nbound, json_object *pod, int most_allocated, char *msg, size_t msgn)
{
    char dummy[8];
    ks_world w;
    ks_pod *p;
    int best = -1;
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
    world_init(&w);
    int oom = 0;
    for (size_t i = 0; i < nnodes && !oom; i++)
        oom = node_apply(&w, nodes[i]) != 0;
    /* the bound pods (names of their own: the array may repeat one),
     * with the priority of their spec (default 0) */
    for (size_t i = 0; i < nbound && !oom; i++) {
        char key[32];
        if (!cu_jpath_str(bound[i], "spec.nodeName") || ks_phase_terminal(bound[i]))
            continue;
        snprintf(key, sizeof key, "b%zu", i);
        if (pod_apply(&w, bound[i], NULL, "", key, 0) != 0)
            oom = 1;
    }
    /* the pod itself, as pending whatever its fields say */
    if (!oom)
        oom = pod_apply(&w, pod, NULL, "", "pod", 1) != 0;
    p = pod_find(&w, "", "pod");
    if (oom || !p || !p->pending) {
        snprintf(msg, msgn, "out of memory");
    } else {
        ks_node *n = pick(&w, p, 0, most_allocated);
        if (n) {
            for (size_t i = 0; i < nnodes; i++)
                if (str_eq(ks_name_of(nodes[i]), n->name)) {
                    best = (int)i;
                    break;
                }
        } else {
            fail_msg(&w, p, msg, msgn);
        }
    }
    world_free(&w);
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

/* The scheduler's state: the decoded world, kept up to date from watches
 * on pods and nodes (or, without watches, built from one list). */

ks_state *ks_state_new(int watch)
{
    ks_state *ss = calloc(1, sizeof(*ss));
    if (!ss)
        return NULL;
    world_init(&ss->w);
    ss->watch = watch;
    return ss;
}

static void sched_unsync(ks_state *ss)
{
    cu_watch **ws[3] = { &ss->wp, &ss->wn, &ss->wj };
    for (int i = 0; i < 3; i++) {
        if (*ws[i])
            cu_store_watch_close(*ws[i]);
        *ws[i] = NULL;
    }
    world_free(&ss->w);
    ss->synced = 0;
}

void ks_state_free(ks_state *ss)
{
    if (!ss)
        return;
    sched_unsync(ss);
    if (ss->tok)
        json_tokener_free(ss->tok);
    free(ss->cand);
    free(ss);
}

uint64_t ks_sched_binds(const ks_state *ss) { return ss ? ss->binds : 0; }
int64_t ks_sched_busy_us(const ks_state *ss) { return ss ? ss->busy_us : 0; }
uint64_t ks_state_relists(const ks_state *ss) { return ss ? ss->relists : 0; }

enum { K_NODE, K_POD, K_JOB };

static int kind_apply(ks_state *ss, int kind, json_object *o, json_object *pcs)
{
    switch (kind) {
    case K_NODE: return node_apply(&ss->w, o);
    case K_POD: return pod_apply(&ss->w, o, pcs, ks_ns_of(o), ks_name_of(o), 0);
    default: job_apply(&ss->w, o); return 0;
    }
}

/* Lists rt into the world and opens a watch from the list's RV (when
 * watching). -1 on failure. */
/* Lists rt into the world, in pages of KS_LIST_PAGE (the store's lock is
 * held for one page at a time, not for the whole list), and opens a
 * watch from the list's RV (when watching). -1 on failure (an expired
 * continue token included: the caller relists). */
#define KS_LIST_PAGE 500
static int sched_list(ks_state *ss, cu_store *s, const cu_rtype *rt, int kind, json_object *pcs,
                      cu_watch **wout)
{
    char rv[32] = "", *cont = NULL;
    int rc = 0;
    do {
        cu_list_opts o;
        cu_status st;
        json_object *l = NULL, *items;
        memset(&o, 0, sizeof o);
        o.limit = KS_LIST_PAGE;
        o.cont = cont;
        if (!rt || cu_store_list(s, rt, NULL, &o, &l, &st) != CU_OK) {
            rc = -1;
            break;
        }
        if (!rv[0])
            snprintf(rv, sizeof rv, "%s",
                     cu_jpath_str(l, "metadata.resourceVersion")
                         ? cu_jpath_str(l, "metadata.resourceVersion")
                         : "");
        items = cu_jget(l, "items");
        for (size_t i = 0; rc == 0 && i < cu_jarr_len(items); i++)
            rc = ss->stop && *ss->stop ? -1 : kind_apply(ss, kind, jidx(items, i), pcs);
        free(cont);
        cont = xstrdup(cu_jpath_str(l, "metadata.continue"));
        if (cont && !*cont) {
            free(cont);
            cont = NULL;
        }
        json_object_put(l);
    } while (rc == 0 && cont);
    free(cont);
    if (rc == 0 && ss->watch) {
        cu_list_opts o;
        cu_status st;
        memset(&o, 0, sizeof o);
        o.resource_version = rv;
        if (cu_store_watch_open(s, rt, NULL, &o, 0, wout, &st) != CU_OK)
            rc = -1;
    }
    return rc;
}

/* Applies what the watch w has. -1 when it ended (relist). */
static int sched_drain(ks_state *ss, cu_watch *w, int kind, json_object *pcs)
{
    cu_watch_ev ev;
    if (!ss->tok && !(ss->tok = cu_json_tokener_new()))
        return -1;
    while (!(ss->stop && *ss->stop) && cu_store_watch_next_ev(w, 0, &ev)) {
        size_t len = 0;
        const char *data = ev.obj ? cu_rstr_data(ev.obj, &len) : NULL;
        json_object *o = NULL;
        int rc = 0;
        if (str_eq(ev.type, "ERROR")) {
            rc = -1;
        } else if (!str_eq(ev.type, "BOOKMARK") && data &&
                   (o = cu_json_parse(ss->tok, data, len, NULL, 0)) != NULL) {
            if (!str_eq(ev.type, "DELETED"))
                rc = kind_apply(ss, kind, o, pcs);
            else if (kind == K_POD)
                pod_delete(&ss->w, o);
            else if (kind == K_NODE)
                node_delete(&ss->w, o);
            else
                job_delete(&ss->w, o);
        }
        if (o)
            json_object_put(o);
        if (ev.obj)
            cu_rstr_unref(ev.obj);
        if (rc != 0)
            return -1;
    }
    return cu_store_watch_done(w) || (ss->stop && *ss->stop) ? -1 : 0;
}

int ks_state_sync(ks_state *ss, cu_store *s)
{
    ks_types t;
    json_object *pcl = NULL, *pcs;
    int rc = 0;
    if (ks_types_get(s, &t) != 0 || (ss->stop && *ss->stop))
        return -1;
    if (ss->synced && (!ss->watch || ss->s == s)) {
        if (!ss->watch)
            return 0; /* a list-built state: as it was listed */
    }
    if (t.pcs)
        pcl = ks_list(s, t.pcs, NULL, NULL);
    pcs = cu_jget(pcl, "items");
    if (ss->synced && ss->watch && ss->s == s && sched_drain(ss, ss->wn, K_NODE, pcs) == 0 &&
        sched_drain(ss, ss->wj, K_JOB, pcs) == 0 && sched_drain(ss, ss->wp, K_POD, pcs) == 0)
        goto out;
    /* first time, or a watch ended (fell behind the history): relist */
    if (ss->synced)
        ss->relists++;
    sched_unsync(ss);
    ss->s = s;
    if (sched_list(ss, s, t.nodes, K_NODE, pcs, &ss->wn) != 0 ||
        sched_list(ss, s, t.jobs, K_JOB, pcs, &ss->wj) != 0 ||
        sched_list(ss, s, t.pods, K_POD, pcs, &ss->wp) != 0) {
        sched_unsync(ss);
        rc = -1;
        goto out;
    }
    ss->synced = 1;
out:
    if (pcl)
        json_object_put(pcl);
    return rc;
}

static int cmp_cand(const void *a, const void *b)
{
    const ks_pod *x = *(ks_pod *const *)a, *y = *(ks_pod *const *)b;
    int c;
    if (x->prio != y->prio)
        return x->prio > y->prio ? -1 : 1;
    if ((c = strcmp(x->ctime ? x->ctime : "", y->ctime ? y->ctime : "")) != 0)
        return c;
    if ((c = strcmp(x->ns ? x->ns : "", y->ns ? y->ns : "")) != 0)
        return c;
    return strcmp(x->name ? x->name : "", y->name ? y->name : "");
}

/* Binds p to n: the pod (spec.nodeName, and spec.priority as resolved),
 * then its PodScheduled condition. The number of writes. */
static int bind_pod(ks_state *ss, cu_store *s, const ks_types *t, ks_pod *p, ks_node *n,
                    const char *ts)
{
    json_object *copy = cu_jcopy(p->obj), *out = NULL, *spec = cu_jget(copy, "spec");
    int writes = 0;
    if (!copy || !spec) {
        if (copy)
            json_object_put(copy);
        return 0;
    }
    if (!cu_jget(spec, "priority"))
        cu_jset_int(spec, "priority", p->prio);
    cu_jset_str(spec, "nodeName", n->name);
    if (!ks_put(s, t->pods, copy, NULL, &out))
        return 0; /* changed meanwhile: the watch brings it again */
    writes++;
    ss->binds++;
    /* it counts on n at once; the watch's copy of the write changes nothing */
    pod_clear_pending(p);
    p->pending = 0;
    free(p->node);
    p->node = strdup(n->name);
    p->active = p->node != NULL;
    pod_recount(&ss->w, p, p->active);
    ks_cond_set(cu_jchild(out, "status"), "PodScheduled", "True", NULL, NULL, ts, 0);
    writes += ks_put(s, t->pods, out, "status", NULL);
    return writes;
}

/* Records that p fits no node: its PodScheduled condition and (at most
 * every KS_EVENT_REPEAT_MS) the FailedScheduling event. */
static int fail_pod(cu_store *s, const ks_types *t, ks_pod *p, const char *msg, int64_t now,
                    const char *ts)
{
    int writes = 0;
    json_object *c = ks_cond_get(p->obj, "PodScheduled");
    uint64_t h = cu_hash_str(msg);
    if (!(c && str_eq(cu_jstr(c, "status"), "False") &&
          str_eq(cu_jstr(c, "reason"), "Unschedulable") && str_eq(cu_jstr(c, "message"), msg))) {
        json_object *copy = cu_jcopy(p->obj);
        if (copy && ks_cond_set(cu_jchild(copy, "status"), "PodScheduled", "False", "Unschedulable",
                                msg, ts, 0))
            writes += ks_put(s, t->pods, copy, "status", NULL);
        else if (copy)
            json_object_put(copy);
    }
    if (p->ev_hash != h || now - p->ev_at >= KS_EVENT_REPEAT_MS || now < p->ev_at) {
        writes += event_record(s, t, p->obj, "Warning", "FailedScheduling", "Scheduling", msg, now);
        p->ev_hash = h;
        p->ev_at = now;
    }
    return writes;
}

typedef struct clsfail {
    uint64_t cls;
    char *msg;
} clsfail;

int ks_sched_pass(ks_state *ss, cu_store *s, int most_allocated, int64_t now_ms, int max_writes,
                  int64_t max_us, const volatile int *stop, int *more)
{
    ks_types t;
    size_t ncand = 0, nfail = 0, capfail = 0;
    clsfail *fails = NULL;
    int writes = 0;
    int64_t t0 = cu_clock_mono_ns() / 1000;
    char ts[32], msg[KS_MSG_MAX + 1];
    if (more)
        *more = 0;
    if (ks_types_get(s, &t) != 0 || ks_state_sync(ss, s) != 0)
        return 0;
    ss->passes++;
    fmt_time(now_ms, ts);
    /* the candidates: pending pods never tried, or tried before some
     * node (or the pods on it) changed */
    if (ss->capcand < ss->w.npods) {
        ks_pod **c = realloc(ss->cand, ss->w.npods * sizeof(*c));
        if (!c)
            goto out;
        ss->cand = c;
        ss->capcand = ss->w.npods;
    }
    for (size_t i = 0; i < ss->w.npods; i++) {
        ks_pod *p = &ss->w.pods[i];
        if (p->inuse && p->pending && p->obj && (p->tried == 0 || p->tried < ss->w.epoch))
            ss->cand[ncand++] = p;
    }
    if (ncand)
        qsort(ss->cand, ncand, sizeof(*ss->cand), cmp_cand);
    for (size_t i = 0; i < ncand; i++) {
        ks_pod *p = ss->cand[i];
        ks_node *n = NULL;
        const char *m = NULL;
        if ((max_writes > 0 && writes >= max_writes) ||
            (max_us > 0 && cu_clock_mono_ns() / 1000 - t0 >= max_us) || (stop && *stop)) {
            if (more)
                *more = 1;
            break;
        }
        for (size_t k = 0; p->cls && k < nfail; k++)
            if (fails[k].cls == p->cls)
                m = fails[k].msg; /* its class fit nowhere in this pass */
        if (!m && !p->bad)
            n = pick(&ss->w, p, p->tried, most_allocated);
        if (n) {
            writes += bind_pod(ss, s, &t, p, n, ts);
            continue;
        }
        /* nothing changed since its last try fits it now either */
        uint64_t tried = ss->w.epoch;
        if (!m) {
            fail_msg(&ss->w, p, msg, sizeof msg);
            m = msg;
            if (p->cls && nfail == capfail) {
                size_t cap = capfail ? capfail * 2 : 8;
                clsfail *f = realloc(fails, cap * sizeof(*f));
                if (f) {
                    fails = f;
                    capfail = cap;
                }
            }
            if (p->cls && nfail < capfail && (fails[nfail].msg = strdup(msg)) != NULL)
                fails[nfail++].cls = p->cls;
        }
        writes += fail_pod(s, &t, p, m, now_ms, ts);
        p->tried = tried;
    }
out:
    for (size_t k = 0; k < nfail; k++)
        free(fails[k].msg);
    free(fails);
    ss->busy_us += cu_clock_mono_ns() / 1000 - t0;
    return writes;
}

int cu_kubesim_schedule(cu_store *s, int most_allocated, int64_t now_ms)
{
    ks_state *ss = ks_state_new(0);
    int writes;
    if (!ss)
        return 0;
    writes = ks_sched_pass(ss, s, most_allocated, now_ms, 0, 0, NULL, NULL);
    ks_state_free(ss);
    return writes;
}
