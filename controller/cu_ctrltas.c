/*
 * cu_ctrltas.c - Topology-Aware Scheduling in the controller (Kueue
 * v0.17's pkg/controller/tas): the Nodes the engine's TAS snapshots place
 * pods on (Kueue's node controller and nodes cache), the usage of the pods
 * bound to them that TAS did not place (Kueue's non-TAS usage cache), and
 * the topology ungater: the gated pods of a Workload admitted by TAS get
 * their domain's node selector and lose the kueue.x-k8s.io/topology gate.
 *
 * What is kept: per Node, what TAS reads of it (a cu_kube_node in its own
 * arena); per bound, running pod that is not TAS's, its node and its
 * effective requests, exactly what was counted in the engine (so that the
 * +1 and the -1 pair); per pod of a Workload admitted by TAS, what the
 * ungater needs (its Workload, pod set, gate, labels, nodeSelector, index
 * offset).
 * Nothing else of a pod.
 */
#include <ctype.h>

#include "cu_ctrl_int.h"
#include "cu_podreq.h"
#include "cu_topology.h"

/* ---------------- a small string-keyed map ---------------- */

typedef struct hent {
    struct hent *next;
    char *key;
} hent;

typedef struct hmap {
    hent **b;
    size_t nb, n;
} hmap;

static hent *hget(const hmap *m, const char *key)
{
    if (!m->nb)
        return NULL;
    for (hent *e = m->b[cu_hash_str(key) % m->nb]; e; e = e->next)
        if (strcmp(e->key, key) == 0)
            return e;
    return NULL;
}

static int hadd(hmap *m, hent *e)
{
    if (m->n >= m->nb) {
        size_t nb = m->nb ? m->nb * 2 : 64;
        hent **b = calloc(nb, sizeof(*b));
        if (!b)
            return -1;
        for (size_t i = 0; i < m->nb; i++)
            for (hent *x = m->b[i], *nx; x; x = nx) {
                nx = x->next;
                size_t h = cu_hash_str(x->key) % nb;
                x->next = b[h];
                b[h] = x;
            }
        free(m->b);
        m->b = b;
        m->nb = nb;
    }
    size_t h = cu_hash_str(e->key) % m->nb;
    e->next = m->b[h];
    m->b[h] = e;
    m->n++;
    return 0;
}

static hent *hdel(hmap *m, const char *key)
{
    if (!m->nb)
        return NULL;
    for (hent **p = &m->b[cu_hash_str(key) % m->nb]; *p; p = &(*p)->next)
        if (strcmp((*p)->key, key) == 0) {
            hent *e = *p;
            *p = e->next;
            m->n--;
            return e;
        }
    return NULL;
}

#define HMAP_FOREACH(m, T, x) \
    for (size_t x##_i = 0; x##_i < (m)->nb; x##_i++) \
        for (T *x = (T *)(m)->b[x##_i], *x##_n = NULL; x && ((x##_n = (T *)x->h.next), 1); \
             x = x##_n)

/* ---------------- records ---------------- */

typedef struct tnode {
    hent h; /* key: the node's name */
    size_t shape;
    cu_arena a;
    cu_kube_node n;
} tnode;

typedef struct tpod {
    hent h; /* key: ns/name */
    /* the non-TAS usage counted in the engine: node NULL when none */
    char *node;
    size_t nreq;
    cu_res *req; /* names malloc'd */
    /* a pod of a Workload that TAS placed (wl NULL: none) */
    char *wl;     /* ns/name of the Workload (kueue.x-k8s.io/workload) */
    char *ps;     /* its pod set (kueue.x-k8s.io/podset) */
    char *offset; /* its kueue.x-k8s.io/pod-index-offset, NULL when none */
    int gated, ended;
    json_object *labels, *sel, *gates;
    json_object *sent; /* the node selector an ungate patch sent (until the
                          pod's next event) */
} tpod;

struct ctrl_tas {
    hmap nodes, pods;
    omap dirty;        /* Workload keys for the ungater */
    size_t counted;    /* pods whose usage is counted */
    int64_t resync_at; /* the ungater's next look at every gated pod */
};

/* Marks Workload key for the ungater. */
static void tas_mark(struct ctrl_tas *t, const char *key)
{
    if (!key || ctrl_omap_get(&t->dirty, key))
        return;
    rec *d = calloc(1, sizeof(*d));
    if (!d || !(d->key = strdup(key)) || ctrl_omap_add(&t->dirty, d) != 0) {
        if (d)
            free(d->key);
        free(d);
        t->resync_at = 0; /* no memory to note it: look at all */
    }
}

static void tnode_free(tnode *t)
{
    if (!t)
        return;
    free(t->h.key);
    cu_arena_free(&t->a);
    free(t);
}

static void req_free(tpod *p)
{
    for (size_t i = 0; i < p->nreq; i++)
        free((char *)p->req[i].name);
    free(p->req);
    free(p->node);
    p->req = NULL;
    p->nreq = 0;
    p->node = NULL;
}

static void tas_info_free(tpod *p)
{
    free(p->wl);
    free(p->ps);
    free(p->offset);
    json_object_put(p->labels);
    json_object_put(p->sel);
    json_object_put(p->gates);
    json_object_put(p->sent);
    p->wl = p->ps = p->offset = NULL;
    p->labels = p->sel = p->gates = p->sent = NULL;
}

static void tpod_free(tpod *p)
{
    if (!p)
        return;
    req_free(p);
    tas_info_free(p);
    free(p->h.key);
    free(p);
}

static struct ctrl_tas *tas_of(ctrl *c)
{
    if (!c->tas)
        c->tas = calloc(1, sizeof(*c->tas));
    return c->tas;
}

void ctrl_tas_free(ctrl *c)
{
    struct ctrl_tas *t = c->tas;
    if (!t)
        return;
    HMAP_FOREACH(&t->nodes, tnode, x) tnode_free(x);
    HMAP_FOREACH(&t->pods, tpod, x) tpod_free(x);
    free(t->nodes.b);
    free(t->pods.b);
    OMAP_FOREACH(&t->dirty, d)
    {
        free(d->key);
        free(d);
    }
    free(t->dirty.b);
    free(t);
    c->tas = NULL;
}

/* ---------------- Nodes ---------------- */

static int cmp_res(const void *a, const void *b)
{
    return strcmp(((const cu_res *)a)->name, ((const cu_res *)b)->name);
}

/* The node obj decoded into t->n (t->a), as TAS reads it. Returns 0, or
 * -1 when out of memory. */
static int node_decode(tnode *t, json_object *obj)
{
    cu_arena *a = &t->a;
    cu_kube_node *n = &t->n;
    memset(n, 0, sizeof(*n));
    n->meta.api_version = "v1";
    n->meta.name = cu_arena_strdup(a, t->h.key);
    json_object *labels = cu_jpath(obj, "metadata.labels");
    size_t nl = json_object_is_type(labels, json_type_object)
                    ? (size_t)json_object_object_length(labels)
                    : 0;
    n->meta.labels.items = nl ? cu_arena_alloc(a, nl * sizeof(cu_kv)) : NULL;
    if (nl) {
        if (!n->meta.labels.items)
            return -1;
        json_object_object_foreach (labels, k, v) {
            const char *s = cu_jas_str(v);
            if (!s)
                continue;
            cu_kv *kv = &n->meta.labels.items[n->meta.labels.n++];
            kv->key = cu_arena_strdup(a, k);
            kv->value = cu_arena_strdup(a, s);
        }
    }
    /* status.allocatable, else status.capacity */
    json_object *al = cu_jpath(obj, "status.allocatable");
    if (!json_object_is_type(al, json_type_object) || !json_object_object_length(al))
        al = cu_jpath(obj, "status.capacity");
    size_t na =
        json_object_is_type(al, json_type_object) ? (size_t)json_object_object_length(al) : 0;
    n->allocatable.items = na ? cu_arena_alloc(a, na * sizeof(cu_res)) : NULL;
    if (na) {
        if (!n->allocatable.items)
            return -1;
        json_object_object_foreach (al, k, v) {
            int64_t amt;
            const char *s = cu_jas_str(v);
            if (!s || cu_qty_parse_res(k, s, &amt, NULL) != CU_OK || amt < 0)
                continue; /* not a quantity: none of it */
            cu_res *r = &n->allocatable.items[n->allocatable.n++];
            r->name = cu_arena_strdup(a, k);
            r->milli = amt;
        }
        qsort(n->allocatable.items, n->allocatable.n, sizeof(cu_res), cmp_res);
    }
    json_object *taints = cu_jpath(obj, "spec.taints");
    size_t nt = cu_jarr_len(taints);
    n->taints = nt ? cu_arena_alloc(a, nt * sizeof(cu_taint)) : NULL;
    if (nt && !n->taints)
        return -1;
    for (size_t i = 0; i < nt; i++) {
        json_object *x = json_object_array_get_idx(taints, i);
        const char *k = cu_jstr(x, "key");
        if (!k)
            continue;
        cu_taint *tn = &n->taints[n->ntaints++];
        tn->key = cu_arena_strdup(a, k);
        tn->value = cu_jstr(x, "value") ? cu_arena_strdup(a, cu_jstr(x, "value")) : NULL;
        tn->effect = cu_jstr(x, "effect") ? cu_arena_strdup(a, cu_jstr(x, "effect")) : NULL;
    }
    n->unschedulable = cu_jas_true(cu_jpath(obj, "spec.unschedulable"));
    const char *rs = ctrl_cond_status(obj, "Ready");
    n->ready = rs && strcmp(rs, "True") == 0;
    return 0;
}

/* A hash of what TAS reads of a Node (its heartbeats change nothing). */
static size_t node_shape(json_object *obj)
{
    json_object *t = json_object_new_object();
    json_object_object_add(t, "l", json_object_get(cu_jpath(obj, "metadata.labels")));
    json_object_object_add(t, "a", json_object_get(cu_jpath(obj, "status.allocatable")));
    json_object_object_add(t, "c", json_object_get(cu_jpath(obj, "status.capacity")));
    json_object_object_add(t, "t", json_object_get(cu_jpath(obj, "spec.taints")));
    json_object_object_add(t, "u", json_object_get(cu_jpath(obj, "spec.unschedulable")));
    const char *rs = ctrl_cond_status(obj, "Ready");
    if (rs)
        json_object_object_add(t, "r", json_object_new_string(rs));
    size_t h = cu_hash_str(json_object_to_json_string_ext(t, JSON_C_TO_STRING_PLAIN));
    json_object_put(t);
    return h;
}

static void node_event(ctrl *c, struct ctrl_tas *t, cu_ievent ev, json_object *obj)
{
    const char *name = cu_jpath_str(obj, "metadata.name");
    if (!name)
        return;
    tnode *x = (tnode *)hget(&t->nodes, name);
    if (ev == CU_IEV_DELETED) {
        if (!x)
            return;
        hdel(&t->nodes, name);
        if (c->eng)
            cu_engine_node_remove(c->eng, name);
        tnode_free(x);
        c->eng_dirty = 1;
        return;
    }
    size_t shape = node_shape(obj);
    if (x && x->shape == shape)
        return;
    tnode *n = calloc(1, sizeof(*n));
    if (!n || !(n->h.key = strdup(name))) {
        free(n);
        ctrl_log(c, 0, "out of memory keeping Node %s", name);
        return;
    }
    cu_arena_init(&n->a, 1024);
    n->shape = shape;
    if (node_decode(n, obj) != 0) {
        tnode_free(n);
        ctrl_log(c, 0, "out of memory keeping Node %s", name);
        return;
    }
    if (x) {
        hdel(&t->nodes, name);
        tnode_free(x);
    }
    if (hadd(&t->nodes, &n->h) != 0) {
        tnode_free(n);
        c->need_rebuild = 1;
        return;
    }
    if (c->eng) {
        if (cu_engine_node_set(c->eng, &n->n) != CU_OK)
            c->need_rebuild = 1;
        /* a node added, or changed in a way that may have freed capacity
         * (readiness, taints, labels, allocatable): waiting workloads try
         * again */
        cu_engine_capacity_freed(c->eng);
    }
    c->eng_dirty = 1;
    ctrl_log(c, 2, "Node %s: %s for TAS", name, x ? "changed" : "added");
}

/* ---------------- Pods ---------------- */

/* Kueue's IsTAS (cu_topology_pod_is_tas). */
static int pod_is_tas(json_object *obj)
{
    return cu_topology_pod_is_tas(cu_ann_get_json, cu_jpath(obj, "metadata.annotations"));
}

static int pod_ended(json_object *obj)
{
    const char *ph = cu_jpath_str(obj, "status.phase");
    return ph && (strcmp(ph, "Succeeded") == 0 || strcmp(ph, "Failed") == 0);
}

/* The effective requests of pod obj (cu_pod_requests) into *out, *nout
 * (names malloc'd, sorted). Returns 0, or -1 (nothing to count: the spec
 * cannot be read, or out of memory). */
static int pod_reqs(json_object *obj, cu_res **out, size_t *nout)
{
    *out = NULL;
    *nout = 0;
    cu_arena a;
    cu_arena_init(&a, 4096);
    cu_node *spec = cu_node_from_json(&a, cu_jget(obj, "spec"));
    cu_reslist rl = { 0 };
    cu_diag d;
    cu_diag_init(&d);
    int rc = -1;
    if (spec && cu_pod_requests(&a, spec, "spec", &rl, &d) == CU_OK) {
        rc = 0;
        *out = rl.n ? calloc(rl.n, sizeof(cu_res)) : NULL;
        for (size_t i = 0; *out && i < rl.n; i++) {
            if (rl.items[i].milli == 0)
                continue;
            char *nm = strdup(rl.items[i].name);
            if (!nm) {
                rc = -1;
                break;
            }
            (*out)[*nout].name = nm;
            (*out)[(*nout)++].milli = rl.items[i].milli;
        }
        if (rl.n && !*out)
            rc = -1;
    }
    cu_diag_free(&d);
    cu_arena_free(&a);
    if (rc != 0) {
        for (size_t i = 0; *out && i < *nout; i++)
            free((char *)(*out)[i].name);
        free(*out);
        *out = NULL;
        *nout = 0;
    }
    return rc;
}

static int same_req(const tpod *p, const char *node, const cu_res *r, size_t n)
{
    if (!p->node || strcmp(p->node, node) != 0 || p->nreq != n)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (p->req[i].milli != r[i].milli || strcmp(p->req[i].name, r[i].name) != 0)
            return 0;
    return 1;
}

/* Takes pod p's counted usage out of the engine (and of p). */
static void uncount(ctrl *c, struct ctrl_tas *t, tpod *p)
{
    if (!p->node)
        return;
    if (c->eng) {
        cu_reslist rl = { p->nreq, p->req };
        if (cu_engine_pod_usage(c->eng, p->node, &rl, -1) != CU_OK)
            c->need_rebuild = 1;
        cu_engine_capacity_freed(c->eng);
    }
    t->counted--;
    req_free(p);
    c->eng_dirty = 1;
}

/* Counts r (taken) on node for pod p. */
static void count(ctrl *c, struct ctrl_tas *t, tpod *p, const char *node, cu_res *r, size_t n)
{
    p->node = strdup(node);
    if (!p->node) {
        for (size_t i = 0; i < n; i++)
            free((char *)r[i].name);
        free(r);
        c->need_rebuild = 1; /* it will be counted from the records */
        return;
    }
    p->req = r;
    p->nreq = n;
    t->counted++;
    if (c->eng) {
        cu_reslist rl = { n, r };
        if (cu_engine_pod_usage(c->eng, node, &rl, +1) != CU_OK)
            c->need_rebuild = 1;
    }
    c->eng_dirty = 1;
}

/* The ungater's view of pod p from obj (a TAS pod of an admitted
 * Workload: annotated with its Workload, labelled with its pod set). */
static void tas_info(struct ctrl_tas *t, tpod *p, json_object *obj, int deleted)
{
    const char *ns = cu_jpath_str(obj, "metadata.namespace");
    const char *wl = cu_jstr(cu_jpath(obj, "metadata.annotations"), CU_ANN_TAS_WORKLOAD);
    const char *ps = cu_jstr(cu_jpath(obj, "metadata.labels"), CU_LABEL_PODSET);
    char key[600];
    if (p->wl) /* the Workload it was in looks again (a pod gone counts) */
        tas_mark(t, p->wl);
    tas_info_free(p);
    if (deleted || !ns || !wl || !ps || !pod_is_tas(obj))
        return;
    snprintf(key, sizeof(key), "%s/%s", ns, wl);
    p->wl = strdup(key);
    p->ps = strdup(ps);
    const char *off = cu_jstr(cu_jpath(obj, "metadata.annotations"), CU_ANN_POD_INDEX_OFFSET);
    p->offset = off ? strdup(off) : NULL;
    p->ended = pod_ended(obj);
    p->gated = 0;
    json_object *gates = cu_jpath(obj, "spec.schedulingGates");
    for (size_t i = 0, n = cu_jarr_len(gates); i < n; i++) {
        const char *g = cu_jstr(json_object_array_get_idx(gates, i), "name");
        p->gated |= g && strcmp(g, CU_TAS_GATE) == 0;
    }
    p->labels = json_object_get(cu_jpath(obj, "metadata.labels"));
    p->sel = json_object_get(cu_jpath(obj, "spec.nodeSelector"));
    p->gates = json_object_get(gates);
    if (!p->wl || !p->ps || (off && !p->offset))
        tas_info_free(p);
    else
        tas_mark(t, p->wl);
}

static void pod_event(ctrl *c, struct ctrl_tas *t, cu_ievent ev, json_object *obj)
{
    const char *ns = cu_jpath_str(obj, "metadata.namespace"),
               *name = cu_jpath_str(obj, "metadata.name");
    if (!name)
        return;
    char key[600];
    snprintf(key, sizeof(key), "%s/%s", ns ? ns : "", name);
    tpod *p = (tpod *)hget(&t->pods, key);
    int deleted = ev == CU_IEV_DELETED;
    const char *node = deleted ? NULL : cu_jpath_str(obj, "spec.nodeName");
    int tas = !deleted && pod_is_tas(obj);
    int counts = node && *node && !tas && !pod_ended(obj);
    if (!p && (deleted || (!counts && !tas)))
        return; /* nothing of it is kept */
    if (!p) {
        p = calloc(1, sizeof(*p));
        if (!p || !(p->h.key = strdup(key)) || hadd(&t->pods, &p->h) != 0) {
            if (p)
                free(p->h.key);
            free(p);
            ctrl_log(c, 0, "out of memory keeping Pod %s", key);
            c->need_rebuild = 1;
            return;
        }
    }
    if (counts) {
        cu_res *r = NULL;
        size_t n = 0;
        if (pod_reqs(obj, &r, &n) != 0) {
            uncount(c, t, p); /* cannot be read: counts nothing */
        } else if (same_req(p, node, r, n)) {
            for (size_t i = 0; i < n; i++)
                free((char *)r[i].name);
            free(r);
        } else {
            uncount(c, t, p);
            count(c, t, p, node, r, n);
        }
    } else {
        uncount(c, t, p);
    }
    tas_info(t, p, obj, deleted);
    if (!p->node && !p->wl) {
        hdel(&t->pods, key);
        tpod_free(p);
    }
}

void ctrl_tas_on_event(ctrl *c, int r, cu_ievent ev, json_object *obj)
{
    struct ctrl_tas *t = tas_of(c);
    if (!t) {
        ctrl_log(c, 0, "out of memory keeping TAS state");
        return;
    }
    if (r == R_NODE)
        node_event(c, t, ev, obj);
    else
        pod_event(c, t, ev, obj);
}

/* ---------------- the engine's world ---------------- */

cu_err ctrl_tas_world(ctrl *c, cu_world *vw)
{
    struct ctrl_tas *t = c->tas;
    OMAP_FOREACH(&c->objs[R_TOPO], x)
    {
        if (x->w && x->w->topologies.n &&
            CU_VEC_PUSH(vw->topologies, x->w->topologies.items[0], 16))
            return CU_ENOMEM;
    }
    if (!t)
        return CU_OK;
    HMAP_FOREACH(&t->nodes, tnode, n)
    {
        if (CU_VEC_PUSH(vw->nodes, &n->n, 64))
            return CU_ENOMEM;
    }
    HMAP_FOREACH(&t->pods, tpod, p)
    {
        if (!p->node)
            continue;
        cu_kube_pod *kp = cu_arena_alloc(&vw->arena, sizeof(*kp));
        if (!kp)
            return CU_ENOMEM;
        memset(kp, 0, sizeof(*kp));
        kp->meta.name = p->h.key;
        kp->node_name = p->node;
        kp->phase = "Running";
        kp->requests.n = p->nreq;
        kp->requests.items = p->req;
        if (CU_VEC_PUSH(vw->pods, kp, 256))
            return CU_ENOMEM;
    }
    return CU_OK;
}

const char **ctrl_tas_node_names(ctrl *c, size_t *n)
{
    *n = 0;
    struct ctrl_tas *t = c->tas;
    if (!t || !t->nodes.n)
        return NULL;
    const char **out = calloc(t->nodes.n, sizeof(*out));
    if (!out)
        return NULL;
    HMAP_FOREACH(&t->nodes, tnode, x) out[(*n)++] = x->h.key;
    qsort(out, *n, sizeof(*out), cu_strp_cmp);
    return out;
}

size_t ctrl_tas_nnodes(const ctrl *c) { return c->tas ? c->tas->nodes.n : 0; }
size_t ctrl_tas_ncounted(const ctrl *c) { return c->tas ? c->tas->counted : 0; }

/* ---------------- the topology ungater ---------------- */

void ctrl_tas_wl_changed(ctrl *c, rec *w)
{
    const cu_workload *wl = ctrl_wl_of(w);
    struct ctrl_tas *t = tas_of(c);
    if (!t || !wl || !wl->has_admission)
        return;
    for (size_t i = 0; i < wl->npsa; i++)
        if (wl->psa[i].topo) {
            tas_mark(t, w->key);
            return;
        }
}

/* The pods of pod set ps of Workload key that have not ended, sorted by
 * name (a new array, caller frees), their number in *n. */
static int cmp_pod(const void *a, const void *b)
{
    return strcmp((*(tpod *const *)a)->h.key, (*(tpod *const *)b)->h.key);
}

static tpod **podset_pods(struct ctrl_tas *t, const char *key, const char *ps, size_t *n)
{
    *n = 0;
    tpod **out = NULL;
    size_t cap = 0;
    HMAP_FOREACH(&t->pods, tpod, p)
    {
        if (!p->wl || p->ended || strcmp(p->wl, key) != 0 || strcmp(p->ps, ps) != 0)
            continue;
        if (cu_vec_reserve((void **)&out, *n, &cap, sizeof(*out), 16)) {
            free(out);
            *n = 0;
            return NULL;
        }
        out[(*n)++] = p;
    }
    if (*n)
        qsort(out, *n, sizeof(*out), cmp_pod);
    return out;
}

/* The values of pod p's domain for levels (its nodeSelector, or the one
 * an ungate patch sent it), 1 when it equals domain d of ta. */
static int pod_in_domain(const tpod *p, const cu_topo_assign *ta, size_t d)
{
    json_object *sel = p->sent ? p->sent : p->sel;
    for (size_t l = 0; l < ta->nlevels; l++) {
        const char *v = cu_jstr(sel, ta->levels[l]);
        if (!v || strcmp(v, ta->values[d * ta->nlevels + l]) != 0)
            return 0;
    }
    return 1;
}

/* 1 when p no longer waits for the ungater. */
static int pod_ungated(const tpod *p) { return !p->gated || p->sent; }

/* Kueue's ReadUIntFromLabelBelowBound: the label's value as a decimal
 * integer in [0, bound), else -1. */
static long label_index(const tpod *p, const char *label, long bound)
{
    const char *v = cu_jstr(p->labels, label);
    if (!v || !*v)
        return -1;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || *end || x < 0 || x >= bound)
        return -1;
    return x;
}

/* Sends the ungate patch of pod p: the topology gate off, the domain's
 * level labels added to its nodeSelector. */
static void ungate(ctrl *c, tpod *p, const cu_topo_assign *ta, size_t d)
{
    json_object *patch = json_object_new_object(), *spec = cu_jchild(patch, "spec");
    json_object *sel = cu_jchild(spec, "nodeSelector");
    for (size_t l = 0; l < ta->nlevels; l++)
        cu_jset_str(sel, ta->levels[l], ta->values[d * ta->nlevels + l]);
    ctrl_gates_without(spec, p->gates, CU_TAS_GATE, NULL);
    const char *sl = strchr(p->h.key, '/');
    char op[700], path[900], what[900];
    snprintf(op, sizeof(op), "ungate:%s", p->h.key);
    snprintf(path, sizeof(path), "/api/v1/namespaces/%.*s/pods/%s", (int)(sl - p->h.key), p->h.key,
             sl + 1);
    snprintf(what, sizeof(what), "ungating Pod %s for its topology domain", p->h.key);
    json_object *sent = json_object_get(sel);
    if (ctrl_send_write(c, OP_OTHER, R_TPOD, op, p->h.key, "PATCH", path, MERGE, patch, what)) {
        json_object_put(p->sent);
        p->sent = sent;
        ctrl_log(c, 1, "Pod %s: ungated for topology domain %s", p->h.key,
                 ta->values[d * ta->nlevels + ta->nlevels - 1]);
    } else
        json_object_put(sent);
}

/* Pod set i of Workload w (key) admitted with topology assignment ta: its
 * gated pods ungated as Kueue's topology ungater does it. */
static void ungate_podset(ctrl *c, struct ctrl_tas *t, const char *key, const cu_workload *wl,
                          size_t i)
{
    const cu_psa *psa = &wl->psa[i];
    const cu_topo_assign *ta = psa->topo;
    if (!ta || !ta->nlevels || !ta->ndomains || !psa->name)
        return;
    size_t np;
    tpod **pods = podset_pods(t, key, psa->name, &np);
    if (!pods)
        return;
    const cu_topo_request *rq = NULL;
    for (size_t k = 0; k < wl->npodsets; k++)
        if (wl->podsets[k].name && strcmp(wl->podsets[k].name, psa->name) == 0)
            rq = &wl->podsets[k].topo;
    /* the rank offset of a pod set grouped with another (a leader and
     * its workers: the smaller takes ranks from 0, the larger after it) */
    int32_t offset = 0, max_rank = psa->count;
    if (rq && rq->podset_group_name)
        for (size_t j = 0; j < wl->npsa; j++) {
            if (j == i || !wl->psa[j].name)
                continue;
            for (size_t k = 0; k < wl->npodsets; k++)
                if (wl->podsets[k].name && !strcmp(wl->podsets[k].name, wl->psa[j].name) &&
                    wl->podsets[k].topo.podset_group_name &&
                    !strcmp(wl->podsets[k].topo.podset_group_name, rq->podset_group_name)) {
                    int32_t other = wl->psa[j].count;
                    int smaller = psa->count < other || (psa->count == other && i < j);
                    offset = smaller ? 0 : other;
                    max_rank = smaller ? psa->count : psa->count + other;
                }
        }
    /* plus the pods' index offset (Kueue reads the first pod's) */
    if (np && pods[0]->offset) {
        const char *s = pods[0]->offset;
        char *end;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (!*s || isspace((unsigned char)*s) || *end || errno || v < -INT32_MAX ||
            v > INT32_MAX - (long)max_rank || v > INT32_MAX - (long)offset) {
            ctrl_log(
                c, 0,
                "Pod %s: annotation %s=\"%s\" is not an integer: pod set %s of %s is not ungated",
                pods[0]->h.key, CU_ANN_POD_INDEX_OFFSET, s, psa->name, key);
            free(pods);
            return;
        }
        offset += (int32_t)v;
        max_rank += (int32_t)v;
    }
    /* the domain of each rank, in the assignment's order */
    int64_t total = 0;
    for (size_t d = 0; d < ta->ndomains; d++)
        total += ta->counts[d] > 0 ? ta->counts[d] : 0;
    size_t *rank_dom = total > 0 ? calloc((size_t)total, sizeof(*rank_dom)) : NULL;
    tpod **by_rank = total > 0 ? calloc((size_t)total, sizeof(*by_rank)) : NULL;
    int ranks = rq && rq->pod_index_label && rank_dom && by_rank;
    if (ranks) {
        size_t r0 = 0;
        for (size_t d = 0; d < ta->ndomains; d++)
            for (int32_t k = 0; k < ta->counts[d]; k++)
                rank_dom[r0++] = d;
        int32_t count = psa->count, single = count;
        if (rq->subgroup_index_label && rq->has_subgroup_count && rq->subgroup_count > 0)
            single = count / rq->subgroup_count;
        for (size_t k = 0; ranks && k < np; k++) {
            long idx = label_index(pods[k], rq->pod_index_label, max_rank);
            long rank = idx - offset;
            if (idx >= 0 && rq->subgroup_index_label) {
                long job = rq->has_subgroup_count
                               ? label_index(pods[k], rq->subgroup_index_label, rq->subgroup_count)
                               : -1;
                rank = job < 0 || idx >= single ? -1 : idx + job * single - offset;
            }
            if (idx < 0 || rank < 0 || rank >= count || rank >= total || by_rank[rank])
                ranks = 0; /* no rank, or a conflict: ranks cannot be used */
            else
                by_rank[rank] = pods[k];
        }
        /* an ungated pod must be where its rank says */
        for (int64_t r = 0; ranks && r < total; r++)
            if (by_rank[r] && pod_ungated(by_rank[r]) &&
                !pod_in_domain(by_rank[r], ta, rank_dom[r]))
                ranks = 0;
    }
    if (ranks) {
        for (int64_t r = 0; r < total; r++)
            if (by_rank[r] && !pod_ungated(by_rank[r]))
                ungate(c, by_rank[r], ta, rank_dom[r]);
    } else {
        /* greedy: the ungated pods count against their domains, the gated
         * ones (by name) fill what is left, domain by domain */
        int32_t *left = calloc(ta->ndomains, sizeof(*left));
        if (left) {
            for (size_t d = 0; d < ta->ndomains; d++)
                left[d] = ta->counts[d];
            for (size_t k = 0; k < np; k++)
                for (size_t d = 0; pod_ungated(pods[k]) && d < ta->ndomains; d++)
                    if (pod_in_domain(pods[k], ta, d)) {
                        left[d]--;
                        break;
                    }
            size_t k = 0;
            for (size_t d = 0; d < ta->ndomains; d++)
                for (int32_t m = 0; m < left[d]; m++) {
                    while (k < np && pod_ungated(pods[k]))
                        k++;
                    if (k == np)
                        break;
                    ungate(c, pods[k++], ta, d);
                }
            free(left);
        }
    }
    free(rank_dom);
    free(by_rank);
    free(pods);
}

void ctrl_tas_ungate(ctrl *c)
{
    struct ctrl_tas *t = c->tas;
    if (!t || !ctrl_leading(c))
        return;
    int64_t now = cu_clock_system_now(NULL);
    if (now >= t->resync_at) {
        /* a periodic look at every gated pod: a refused patch is tried again */
        t->resync_at = now + 30000;
        HMAP_FOREACH(&t->pods, tpod, p)
        {
            if (p->wl && p->gated)
                tas_mark(t, p->wl);
        }
    }
    OMAP_FOREACH(&t->dirty, d)
    {
        ctrl_omap_del(&t->dirty, d->key);
        rec *w = ctrl_omap_get(&c->objs[R_WL], d->key);
        const cu_workload *wl = w ? ctrl_wl_of(w) : NULL;
        /* Kueue's IsAdmittedByTAS: admitted, a pod set with an assignment */
        if (wl && wl->has_admission && !cu_workload_finished(wl) &&
            ctrl_cond_is(wl, "Admitted", "True"))
            for (size_t i = 0; i < wl->npsa; i++)
                ungate_podset(c, t, d->key, wl, i);
        free(d->key);
        free(d);
    }
}
