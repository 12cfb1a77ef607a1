/*
 * test_tas.c - Topology-Aware Scheduling in the engine, on worlds built in
 * C: a TAS flavor's placement in flavor assignment (issue 18's "Done
 * when": 4 nodes of 8 GPUs with 6 used by bound pods each), the flavor
 * match rule, TopologyNotFound, preemption that frees a domain, capacity
 * freed by pods, assignments read back from status, and the invariants
 * (quota and nodes) after every step.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_engine.h"
#include "test_world.h"
#include "cu_explain.h"
#include "cu_tas.h"

#define GPU "nvidia.com/gpu"
#define RACK "cloud.provider.com/rack"

static int64_t now_ms = 1767225600000LL;

static cu_kvs kvs(cu_world *w, size_t n, const char *const *kv)
{
    cu_kvs k = { n, al(w, (n ? n : 1) * sizeof(cu_kv)) };
    for (size_t i = 0; i < n; i++) {
        k.items[i].key = s(w, "%s", kv[2 * i]);
        k.items[i].value = s(w, "%s", kv[2 * i + 1]);
    }
    return k;
}

/* One resource list of up to two resources (sorted by the caller). */
static cu_reslist res2(cu_world *w, const char *r1, int64_t v1, const char *r2, int64_t v2)
{
    cu_reslist l = { 0, al(w, 2 * sizeof(cu_res)) };
    if (r1)
        l.items[l.n++] = (cu_res){ r1, v1 };
    if (r2)
        l.items[l.n++] = (cu_res){ r2, v2 };
    return l;
}

static void add_node(cu_world *w, const char *name, const char *rack, int64_t gpus)
{
    cu_kube_node *n = al(w, sizeof(*n));
    n->meta.name = s(w, "%s", name);
    const char *kv[] = { "pool", "gpu", RACK, rack, CU_TAS_HOSTNAME, name };
    n->meta.labels = kvs(w, 3, kv);
    n->allocatable = res2(w, GPU, gpus, "pods", 110);
    n->ready = 1;
    PUSH(w->nodes, n);
}

static void add_pod(cu_world *w, const char *name, const char *node, int64_t gpus)
{
    cu_kube_pod *p = al(w, sizeof(*p));
    p->meta.name = s(w, "%s", name);
    p->meta.ns = "kube-system";
    p->node_name = s(w, "%s", node);
    p->phase = "Running";
    p->requests = res2(w, GPU, gpus, NULL, 0);
    PUSH(w->pods, p);
}

static void add_topology(cu_world *w, const char *name, const char *l1, const char *l2)
{
    cu_topology *t = al(w, sizeof(*t));
    t->meta.name = s(w, "%s", name);
    t->nlevels = l2 ? 2 : 1;
    t->levels = al(w, 2 * sizeof(char *));
    t->levels[0] = l1;
    t->levels[1] = l2;
    PUSH(w->topologies, t);
}

static void add_flavor(cu_world *w, const char *name, const char *topology)
{
    cu_resource_flavor *f = al(w, sizeof(*f));
    f->meta.name = s(w, "%s", name);
    const char *kv[] = { "pool", topology ? "gpu" : "cpu" };
    f->node_labels = kvs(w, 1, kv);
    f->topology_name = topology;
    PUSH(w->flavors, f);
}

/* A ClusterQueue covering nvidia.com/gpu with flavors flv[i] of nom[i]
 * GPUs each, and its LocalQueue lq-NAME. */
static cu_cluster_queue *add_cq(cu_world *w, const char *name, size_t n, const char *const *flv,
                                const int64_t *nom)
{
    cu_cluster_queue *q = al(w, sizeof(*q));
    q->meta.name = s(w, "%s", name);
    q->queueing = CU_BEST_EFFORT_FIFO;
    q->fs_weight = 1000;
    q->groups.n = 1;
    q->groups.items = al(w, sizeof(cu_rgroup));
    cu_rgroup *g = &q->groups.items[0];
    g->covered.n = 1;
    g->covered.items = al(w, sizeof(char *));
    g->covered.items[0] = GPU;
    g->nflavors = n;
    g->flavors = al(w, n * sizeof(cu_fquota));
    for (size_t i = 0; i < n; i++) {
        g->flavors[i].name = flv[i];
        g->flavors[i].n = 1;
        g->flavors[i].res = al(w, sizeof(cu_rquota));
        g->flavors[i].res[0].name = GPU;
        g->flavors[i].res[0].nominal = nom[i];
    }
    PUSH(w->cqs, q);
    cu_local_queue *lq = al(w, sizeof(*lq));
    lq->meta.name = s(w, "lq-%s", name);
    lq->meta.ns = "ns";
    lq->cluster_queue = q->meta.name;
    lq->fs_weight = 1000;
    PUSH(w->lqs, lq);
    return q;
}

/* A Job-like Workload: count pods of gpus each, asking for required (or
 * preferred) level, or none (NULL, NULL). */
static cu_workload *add_wl(cu_world *w, const char *name, const char *cq, int32_t count,
                           int64_t gpus, const char *required, const char *preferred, int32_t prio)
{
    cu_workload *wl = tw_workload(w, name, cq, count, prio, now_ms + (int64_t)w->nseq);
    cu_podset *ps = &wl->podsets[0];
    ps->requests = res2(w, GPU, gpus, NULL, 0);
    ps->topo.present = 1;
    ps->topo.pod_index_label = "batch.kubernetes.io/job-completion-index";
    ps->topo.required = required;
    ps->topo.preferred = preferred;
    return wl;
}

static cu_engine *engine(const cu_world *w)
{
    cu_engine_opts o = { .clock = { cu_clock_fake_now, &now_ms }, .max_rounds = 200 };
    cu_engine *e = cu_engine_new(&o);
    assert_non_null(e);
    cu_diag d;
    cu_diag_init(&d);
    assert_int_equal(cu_engine_load(e, w, &d), CU_OK);
    cu_diag_free(&d);
    return e;
}

static void check(cu_engine *e)
{
    cu_diag d;
    cu_diag_init(&d);
    cu_err err = cu_engine_check_invariants(e, &d);
    if (err)
        fail_msg("invariant broken: %s", d.n ? d.msgs[0] : "?");
    cu_diag_free(&d);
}

static void run(cu_engine *e)
{
    for (int i = 0; i < 1000; i++) {
        cu_cycle_stats st;
        assert_int_equal(cu_engine_cycle(e, &st), CU_OK);
        check(e);
        if (!st.progress)
            return;
    }
    fail_msg("no steady state");
}

static const cu_wl_info *find(cu_engine *e, const char *name)
{
    for (size_t i = 0; i < cu_engine_nworkloads(e); i++) {
        const cu_wl_info *v = cu_engine_workload_info(e, i);
        if (strcmp(v->name, name) == 0)
            return v;
    }
    fail_msg("workload %s not found", name);
    return NULL;
}

static int64_t node_free(cu_engine *e, const char *node)
{
    cu_tas *t = cu_engine_tas(e, 0, NULL);
    assert_non_null(t);
    int64_t v = -1;
    assert_int_equal(cu_tas_node_free(t, node, GPU, &v), CU_OK);
    return v;
}

/* "values=count ..." of pod set p's assignment. */
static void assignment_ps(const cu_wl_info *v, size_t p, char *out, size_t n)
{
    size_t l = 0;
    out[0] = 0;
    assert_true(v->admitted);
    const cu_topo_assign *ta = v->psa[p].topo;
    assert_non_null(ta);
    for (size_t d = 0; d < ta->ndomains; d++) {
        l += (size_t)snprintf(out + l, n - l, "%s", d ? " " : "");
        for (size_t k = 0; k < ta->nlevels; k++)
            l += (size_t)snprintf(out + l, n - l, "%s%s", k ? "/" : "",
                                  ta->values[d * ta->nlevels + k]);
        l += (size_t)snprintf(out + l, n - l, "=%d", ta->counts[d]);
    }
}

static void assignment(const cu_wl_info *v, char *out, size_t n) { assignment_ps(v, 0, out, n); }

/* The world: gpu-a..gpu-d in rack r1, 8 GPUs each, 6 used by
 * bound pods; flavor h100 on Topology gpu [rack, hostname]; ClusterQueue
 * tas (TAS-only) with 32 GPUs on h100. */
static void gpu_world(cu_world *w)
{
    cu_world_init(w);
    const char *nodes[] = { "gpu-a", "gpu-b", "gpu-c", "gpu-d" };
    for (int i = 0; i < 4; i++) {
        add_node(w, nodes[i], "r1", 8);
        add_pod(w, s(w, "hog-%d", i), nodes[i], 6);
    }
    add_topology(w, "gpu", RACK, CU_TAS_HOSTNAME);
    add_flavor(w, "h100", "gpu");
    const char *f[] = { "h100" };
    int64_t nom[] = { 32 };
    add_cq(w, "tas", 1, f, nom);
}

static void test_done_when(void **state)
{
    (void)state;
    cu_world w;
    gpu_world(&w);
    add_wl(&w, "small", "tas", 2, 2, RACK, NULL, 0);
    add_wl(&w, "big", "tas", 2, 3, NULL, NULL, 0);
    cu_engine *e = engine(&w);
    assert_int_equal(cu_engine_ntas(e), 1);
    const char *fl = NULL;
    assert_non_null(cu_engine_tas(e, 0, &fl));
    assert_string_equal(fl, "h100");
    check(e);
    run(e);
    char buf[512];
    const cu_wl_info *v = find(e, "small");
    assignment(v, buf, sizeof buf);
    assert_string_equal(buf, "gpu-a=1 gpu-b=1");
    assert_int_equal(node_free(e, "gpu-a"), 0);
    assert_int_equal(node_free(e, "gpu-c"), 2);
    v = find(e, "big");
    assert_false(v->admitted);
    assert_string_equal(
        v->message,
        "couldn't assign flavors to pod set main: topology \"gpu\" doesn't allow to fit any of 2 "
        "pod(s). Total nodes: 4; excluded: resource \"nvidia.com/gpu\": 4; quota has 28 nvidia.com/gpu free in flavor h100, but no node has 3 "
        "nvidia.com/gpu free: largest free per node 2 (gpu-c 2, gpu-d 2, gpu-a 0, gpu-b 0)");
    /* the pending shape is big's */
    const cu_reslist *shape = cu_engine_tas_pending_shape(e, 0);
    assert_non_null(shape);
    assert_int_equal(cu_reslist_get(shape, GPU), 3);
    /* one GPU freed on gpu-c and gpu-d: big fits there */
    cu_reslist one = { 1, &(cu_res){ GPU, 1 } };
    assert_int_equal(cu_engine_pod_usage(e, "gpu-c", &one, -1), CU_OK);
    assert_int_equal(cu_engine_pod_usage(e, "gpu-d", &one, -1), CU_OK);
    run(e); /* set aside as inadmissible: not retried until told */
    assert_false(find(e, "big")->admitted);
    assert_true(find(e, "big")->inadmissible);
    cu_engine_capacity_freed(e);
    run(e);
    v = find(e, "big");
    assignment(v, buf, sizeof buf);
    assert_string_equal(buf, "gpu-c=1 gpu-d=1");
    assert_int_equal(node_free(e, "gpu-c"), 0);
    assert_null(cu_engine_tas_pending_shape(e, 0));
    /* finishing releases the nodes */
    assert_int_equal(cu_engine_finish(e, 0), CU_OK); /* small */
    check(e);
    assert_int_equal(node_free(e, "gpu-a"), 2);
    cu_engine_free(e);
    cu_world_free(&w);
}

/* Required hostname: 2 pods x 2 GPUs fit only on the node with 4 free. */
static void test_required_hostname(void **state)
{
    (void)state;
    cu_world w;
    gpu_world(&w);
    w.pods.items[1]->requests.items[0].milli = 4; /* gpu-b: 4 free */
    add_wl(&w, "host", "tas", 2, 2, CU_TAS_HOSTNAME, NULL, 0);
    cu_engine *e = engine(&w);
    run(e);
    char buf[256];
    assignment(find(e, "host"), buf, sizeof buf);
    assert_string_equal(buf, "gpu-b=2");
    assert_int_equal(node_free(e, "gpu-b"), 0);
    cu_engine_free(e);
    cu_world_free(&w);
}

/* A non-TAS flavor is skipped for a TAS pod set, a TAS flavor for a
 * non-TAS pod set (Kueue's messages); a missing Topology makes the
 * ClusterQueue inactive. */
static void test_flavor_match(void **state)
{
    (void)state;
    cu_world w;
    gpu_world(&w);
    add_flavor(&w, "plain", NULL);
    const char *f[] = { "plain", "h100" };
    int64_t nom[] = { 32, 32 };
    add_cq(&w, "mixed", 2, f, nom);
    add_wl(&w, "tas-job", "mixed", 1, 1, RACK, NULL, 0);
    cu_workload *plain = add_wl(&w, "plain-job", "mixed", 1, 1, NULL, NULL, 0);
    plain->podsets[0].topo.present = 0;
    /* a pod set asking for a level the Topology lacks */
    add_wl(&w, "bad-level", "mixed", 1, 1, "zone", NULL, 0);
    add_flavor(&w, "lost", "nowhere");
    const char *fl[] = { "lost" };
    add_cq(&w, "orphan", 1, fl, nom);
    cu_engine *e = engine(&w);
    run(e);
    const cu_wl_info *v = find(e, "tas-job");
    assert_true(v->admitted);
    assert_string_equal(v->psa[0].flavors[0], "h100");
    v = find(e, "plain-job");
    assert_true(v->admitted);
    assert_string_equal(v->psa[0].flavors[0], "plain");
    assert_null(v->psa[0].topo);
    v = find(e, "bad-level");
    assert_false(v->admitted);
    assert_string_equal(v->message,
                        "couldn't assign flavors to pod set main: Flavor \"h100\" does not contain "
                        "the requested level, Flavor \"plain\" does not support "
                        "TopologyAwareScheduling");
    int seen = 0;
    for (size_t i = 0; i < cu_engine_ncqs(e); i++) {
        const cu_cq_info *c = cu_engine_cq_info(e, i);
        if (strcmp(c->name, "orphan") != 0)
            continue;
        seen = 1;
        assert_false(c->active);
        assert_string_equal(c->reason, "TopologyNotFound");
        assert_string_equal(c->message, "Can't admit new workloads: there is no Topology "
                                        "\"nowhere\" for TAS flavor \"lost\".");
    }
    assert_true(seen);
    cu_engine_free(e);
    cu_world_free(&w);
}

/* A non-TAS pod set in a ClusterQueue with a TAS flavor first: "supports
 * only TopologyAwareScheduling" on it, the plain flavor taken. */
static void test_tas_flavor_refused(void **state)
{
    (void)state;
    cu_world w;
    gpu_world(&w);
    add_flavor(&w, "plain", NULL);
    const char *f[] = { "h100", "plain" };
    int64_t nom[] = { 32, 1 };
    add_cq(&w, "mixed", 2, f, nom);
    cu_workload *a = add_wl(&w, "a", "mixed", 1, 1, NULL, NULL, 0);
    a->podsets[0].topo.present = 0;
    cu_workload *b = add_wl(&w, "b", "mixed", 1, 1, NULL, NULL, 0);
    b->podsets[0].topo.present = 0;
    cu_engine *e = engine(&w);
    run(e);
    const cu_wl_info *v = find(e, "a");
    assert_true(v->admitted);
    assert_string_equal(v->psa[0].flavors[0], "plain");
    v = find(e, "b");
    assert_false(v->admitted);
    assert_non_null(strstr(v->message, "Flavor \"h100\" supports only TopologyAwareScheduling"));
    cu_engine_free(e);
    cu_world_free(&w);
}

/* Every node's free GPUs are its allocatable minus its bound pods
 * (bound[i] on gpu-a..gpu-d) minus the assignments of the admitted
 * workloads: TAS usage is counted once. */
static void accounting(cu_engine *e, const int64_t *bound)
{
    int64_t used[4] = { 0 };
    for (size_t i = 0; i < cu_engine_nworkloads(e); i++) {
        const cu_wl_info *v = cu_engine_workload_info(e, i);
        if (!v->admitted)
            continue;
        const cu_topo_assign *ta = v->psa[0].topo;
        assert_non_null(ta);
        int64_t per = cu_reslist_get(&v->obj->podsets[0].requests, GPU);
        for (size_t d = 0; d < ta->ndomains; d++) {
            const char *h = ta->values[d * ta->nlevels + ta->nlevels - 1];
            assert_true(strncmp(h, "gpu-", 4) == 0 && h[4] >= 'a' && h[4] <= 'd');
            used[h[4] - 'a'] += per * ta->counts[d];
        }
    }
    for (int i = 0; i < 4; i++) {
        char n[8];
        snprintf(n, sizeof n, "gpu-%c", 'a' + i);
        assert_int_equal(node_free(e, n), 8 - bound[i] - used[i]);
    }
}

/* Four low-priority 3-GPU pods fill the nodes (4 free each) so that no
 * node has 4 free; a high-priority 4-GPU pod preempts exactly one of them
 * (withinClusterQueue LowerPriority), classic and fair sharing. */
static void test_preempt_frees_domain(void **state)
{
    (void)state;
    for (int fs = 0; fs < 2; fs++) {
        cu_world w;
        gpu_world(&w);
        for (int i = 0; i < 4; i++)
            w.pods.items[i]->requests.items[0].milli = 4;
        w.cqs.items[0]->preemption.within_cq = CU_PP_LOWER_PRIORITY;
        for (int i = 0; i < 4; i++)
            add_wl(&w, s(&w, "low-%d", i), "tas", 1, 3, NULL, NULL, 0);
        cu_engine_opts o = { .clock = { cu_clock_fake_now, &now_ms },
                             .max_rounds = 200,
                             .fair_sharing = fs };
        cu_engine *e = cu_engine_new(&o);
        cu_diag d;
        cu_diag_init(&d);
        assert_int_equal(cu_engine_load(e, &w, &d), CU_OK);
        cu_diag_free(&d);
        run(e);
        const int64_t bound[4] = { 4, 4, 4, 4 };
        for (int i = 0; i < 4; i++)
            assert_true(find(e, s(&w, "low-%d", i))->admitted);
        accounting(e, bound);
        cu_workload *hi = add_wl(&w, "high", "tas", 1, 4, CU_TAS_HOSTNAME, NULL, 10);
        assert_true(cu_engine_add_workload(e, hi) >= 0);
        run(e);
        const cu_wl_info *v = find(e, "high");
        assert_true(v->admitted);
        int evicted = 0;
        for (int i = 0; i < 4; i++) {
            const cu_wl_info *l = find(e, s(&w, "low-%d", i));
            if (!l->admitted) {
                evicted++;
                assert_string_equal(l->preempted_reason, "InClusterQueue");
            }
        }
        assert_int_equal(evicted, 1);
        accounting(e, bound);
        cu_engine_free(e);
        cu_world_free(&w);
    }
}

/* An admitted Workload's status.admission with a topology assignment
 * counts on the nodes once, at load and again after a reload; eviction
 * and re-admission do not count it twice. */
static void test_status_and_readmission(void **state)
{
    (void)state;
    cu_world w;
    gpu_world(&w);
    w.cqs.items[0]->preemption.within_cq = CU_PP_LOWER_PRIORITY;
    cu_workload *old = add_wl(&w, "old", "tas", 2, 1, NULL, NULL, 0);
    old->has_admission = 1;
    old->adm_cq = "tas";
    old->npsa = 1;
    old->psa = al(&w, sizeof(cu_psa));
    old->psa[0].name = "main";
    old->psa[0].count = 2;
    const char *kv[] = { GPU, "h100" };
    old->psa[0].flavors = kvs(&w, 1, kv);
    old->psa[0].usage = res2(&w, GPU, 2, NULL, 0);
    cu_topo_assign *ta = al(&w, sizeof(*ta));
    ta->nlevels = 1;
    ta->levels = al(&w, sizeof(char *));
    ta->levels[0] = CU_TAS_HOSTNAME;
    ta->ndomains = 1;
    ta->values = al(&w, sizeof(char *));
    ta->values[0] = "gpu-c";
    ta->counts = al(&w, sizeof(int32_t));
    ta->counts[0] = 2;
    old->psa[0].topo = ta;
    old->nconds = 1;
    old->conds = al(&w, sizeof(cu_condition));
    old->conds[0] = (cu_condition){ "QuotaReserved", "True", "QuotaReserved", "", now_ms };
    w.pods.items[2]->requests.items[0].milli = 4; /* gpu-c: 2 free with old */
    const int64_t bound[4] = { 6, 6, 4, 6 };
    for (int round = 0; round < 2; round++) {
        cu_engine *e = engine(&w);
        check(e);
        assert_true(find(e, "old")->admitted);
        assert_int_equal(node_free(e, "gpu-c"), 2);
        accounting(e, bound);
        if (round == 1) {
            /* a higher-priority 4-GPU pod fits only on gpu-c without old:
             * old is preempted, then admitted again on other nodes */
            cu_workload *hi = add_wl(&w, "hi", "tas", 1, 4, CU_TAS_HOSTNAME, NULL, 5);
            int idx = cu_engine_add_workload(e, hi);
            assert_true(idx >= 0);
            run(e);
            accounting(e, bound);
            char buf[128];
            assignment(find(e, "hi"), buf, sizeof buf);
            assert_string_equal(buf, "gpu-c=1");
            const cu_wl_info *v = find(e, "old");
            assert_int_equal(v->evictions, 1);
            assert_true(v->admitted);
            assert_int_equal(node_free(e, "gpu-c"), 0);
        }
        cu_engine_free(e);
    }
    cu_world_free(&w);
}

/* Two ClusterQueues' heads of one round placed (BestFit) on the same
 * node with room for one: the second no longer fits once the first is
 * admitted (Kueue's check), waits a round and goes to another node; no
 * node is ever over its allocatable. */
static void test_same_round_collision(void **state)
{
    (void)state;
    cu_world w;
    gpu_world(&w);
    for (int i = 1; i < 4; i++)
        w.pods.items[i]->requests.items[0].milli = 4; /* gpu-a 2 free, the others 4 */
    const char *f[] = { "h100" };
    int64_t nom[] = { 32 };
    add_cq(&w, "tas2", 1, f, nom);
    add_wl(&w, "one", "tas", 1, 2, CU_TAS_HOSTNAME, NULL, 0);
    add_wl(&w, "two", "tas2", 1, 2, CU_TAS_HOSTNAME, NULL, 0);
    cu_engine *e = engine(&w);
    run(e);
    char b1[64], b2[64];
    assignment(find(e, "one"), b1, sizeof b1);
    assignment(find(e, "two"), b2, sizeof b2);
    assert_true(strcmp(b1, "gpu-a=1") == 0 || strcmp(b2, "gpu-a=1") == 0);
    assert_string_not_equal(b1, b2);
    const int64_t bound[4] = { 6, 4, 4, 4 };
    accounting(e, bound);
    assert_int_equal(node_free(e, "gpu-a"), 0);
    cu_engine_free(e);
    cu_world_free(&w);
}

/* cueue explain of a TAS-blocked workload: Kueue's message with the
 * numbers, and which admitted workload must end to open a node (golden). */
/* A LeaderWorkerSet group: leader 1 pod x 1 GPU, workers 3 pods x 2 GPUs,
 * both required in a rack, in group (NULL: none). Rack r1 (gpu-a, 6 GPUs
 * free) has room for the workers alone, r2 (gpu-b, gpu-c, 4 free each)
 * for both. */
/* Workload lws in ClusterQueue tas, as a LeaderWorkerSet's: a leader of
 * 1 GPU and 3 workers of 2 GPUs, asking for a rack, in pod-set group group
 * (NULL: none). */
static void add_lws(cu_world *w, const char *group)
{
    cu_workload *wl = add_wl(w, "lws", "tas", 1, 1, RACK, NULL, 0);
    cu_podset *ps = al(w, 2 * sizeof(cu_podset));
    ps[0] = wl->podsets[0];
    ps[0].name = "leader";
    ps[0].topo.pod_index_label = NULL;
    ps[0].topo.podset_group_name = group;
    ps[1] = ps[0];
    ps[1].name = "workers";
    ps[1].count = 3;
    ps[1].requests = res2(w, GPU, 2, NULL, 0);
    wl->podsets = ps;
    wl->npodsets = 2;
}

static cu_engine *lws_world(cu_world *w, const char *group, int64_t hog_b, int64_t hog_c)
{
    cu_world_init(w);
    add_node(w, "gpu-a", "r1", 8);
    add_pod(w, "hog-a", "gpu-a", 2);
    add_node(w, "gpu-b", "r2", 8);
    add_pod(w, "hog-b", "gpu-b", hog_b);
    add_node(w, "gpu-c", "r2", 8);
    add_pod(w, "hog-c", "gpu-c", hog_c);
    add_topology(w, "gpu", RACK, CU_TAS_HOSTNAME);
    add_flavor(w, "h100", "gpu");
    const char *f[] = { "h100" };
    int64_t nom[] = { 32 };
    add_cq(w, "tas", 1, f, nom);
    add_lws(w, group);
    cu_engine *e = engine(w);
    run(e);
    return e;
}

static cu_engine *lws_engine(cu_world *w, const char *group) { return lws_world(w, group, 4, 4); }

static void test_podset_group(void **state)
{
    (void)state;
    cu_world w;
    char buf[512];
    /* without the group the leader takes the tighter rack r1 and the
     * workers go to r2 */
    cu_engine *e = lws_engine(&w, NULL);
    const cu_wl_info *v = find(e, "lws");
    assignment_ps(v, 0, buf, sizeof buf);
    assert_string_equal(buf, "gpu-a=1");
    assignment_ps(v, 1, buf, sizeof buf);
    assert_string_equal(buf, "gpu-b=2 gpu-c=1");
    cu_engine_free(e);
    cu_world_free(&w);
    /* with it both land in r2, the leader beside a worker */
    e = lws_engine(&w, "lws-0");
    v = find(e, "lws");
    assignment_ps(v, 0, buf, sizeof buf);
    assert_string_equal(buf, "gpu-b=1");
    assignment_ps(v, 1, buf, sizeof buf);
    assert_string_equal(buf, "gpu-b=1 gpu-c=2");
    assert_int_equal(node_free(e, "gpu-a"), 6);
    assert_int_equal(node_free(e, "gpu-b"), 1);
    assert_int_equal(node_free(e, "gpu-c"), 0);
    cu_engine_free(e);
    cu_world_free(&w);
    /* r2 has room for the leader only (gpu-b 1 GPU, gpu-c none): split
     * it would fit, as a group it waits, and explain says so */
    e = lws_world(&w, "lws-0", 7, 8);
    v = find(e, "lws");
    assert_false(v->admitted);
    cu_buf b;
    cu_buf_init(&b, 1 << 20);
    assert_int_equal(cu_engine_explain(e, "ns/lws", &b, NULL), CU_OK);
    const char *why = "but at most 2 of the group's 3 worker pods fit in one "
                      "cloud.provider.com/rack beside its leader (3 without it, 3 on all nodes)";
    char want[1024];
    snprintf(want, sizeof want,
             "couldn't assign flavors to pod set leader: topology \"gpu\" allows to fit only 3 "
             "out of 3 pod(s). Total nodes: 3; excluded: resource \"nvidia.com/gpu\": 2; quota "
             "has 32 nvidia.com/gpu free in flavor h100, %s",
             why);
    assert_string_equal(v->message, want);
    /* explain places the leader with its workers too (alone it fits) */
    snprintf(want, sizeof want,
             "Topology (flavor h100)\n  pod set leader: quota has 32 nvidia.com/gpu free in "
             "flavor h100, %s\n  it does not fit even with every admitted workload of flavor "
             "h100 gone\n",
             why);
    assert_non_null(strstr(cu_buf_str(&b), want));
    cu_buf_free(&b);
    cu_engine_free(e);
    cu_world_free(&w);
}

/* A leader (1 GPU) and 3 workers (2 GPUs each) in a ClusterQueue with
 * flavors small (nom[0] GPUs) and big (nom[1]), both on racks r1 and r2
 * of two free 8-GPU nodes. */
static cu_engine *group_flavor_world(cu_world *w, const char *group, int64_t small, int64_t big)
{
    cu_world_init(w);
    add_node(w, "gpu-a", "r1", 8);
    add_node(w, "gpu-b", "r2", 8);
    add_topology(w, "gpu", RACK, CU_TAS_HOSTNAME);
    add_flavor(w, "small", "gpu");
    add_flavor(w, "big", "gpu");
    const char *f[] = { "small", "big" };
    int64_t nom[] = { small, big };
    add_cq(w, "tas", 2, f, nom);
    add_lws(w, group);
    cu_engine *e = engine(w);
    run(e);
    return e;
}

static void test_podset_group_flavor(void **state)
{
    (void)state;
    cu_world w;
    /* alone, the leader fits small (4 GPUs) and the workers (6) only big */
    cu_engine *e = group_flavor_world(&w, NULL, 4, 32);
    const cu_wl_info *v = find(e, "lws");
    assert_true(v->admitted);
    assert_string_equal(v->psa[0].flavors[0], "small");
    assert_string_equal(v->psa[1].flavors[0], "big");
    cu_engine_free(e);
    cu_world_free(&w);
    /* a group takes one flavor on its summed request (7 GPUs): big */
    e = group_flavor_world(&w, "lws-0", 4, 32);
    v = find(e, "lws");
    assert_true(v->admitted);
    assert_string_equal(v->psa[0].flavors[0], "big");
    assert_string_equal(v->psa[1].flavors[0], "big");
    assert_int_equal(v->psa[0].usage[0], 1);
    assert_int_equal(v->psa[1].usage[0], 6);
    char b0[128], b1[128];
    assignment_ps(v, 0, b0, sizeof b0);
    assignment_ps(v, 1, b1, sizeof b1);
    /* one node (hence one rack) takes the leader and all workers */
    size_t l0 = strcspn(b0, "=");
    assert_true(l0 > 0 && l0 == strcspn(b1, "=") && strncmp(b0, b1, l0) == 0);
    assert_int_equal(strchr(b1, ' ') == NULL, 1);
    cu_engine_free(e);
    cu_world_free(&w);
    /* 7 GPUs fit neither: every pod set of the group carries the reasons */
    e = group_flavor_world(&w, "lws-0", 4, 6);
    v = find(e, "lws");
    assert_false(v->admitted);
    const char *why = "insufficient quota for nvidia.com/gpu in flavor big, request > maximum "
                      "capacity (7 > 6), insufficient quota for nvidia.com/gpu in flavor small, "
                      "request > maximum capacity (7 > 4)";
    char want[1024];
    snprintf(want, sizeof want,
             "couldn't assign flavors to pod set leader: %s; couldn't assign flavors to pod set "
             "workers: %s",
             why, why);
    assert_string_equal(v->message, want);
    cu_engine_free(e);
    cu_world_free(&w);
}

static void test_explain_golden(void **state)
{
    (void)state;
    cu_world w;
    gpu_world(&w);
    for (int i = 0; i < 4; i++)
        w.pods.items[i]->requests.items[0].milli = 4;
    add_wl(&w, "train-a", "tas", 2, 3, RACK, NULL, 0);
    add_wl(&w, "train-b", "tas", 2, 3, RACK, NULL, 0);
    add_wl(&w, "big", "tas", 1, 4, CU_TAS_HOSTNAME, NULL, 0);
    cu_engine *e = engine(&w);
    run(e);
    cu_buf b;
    cu_buf_init(&b, 1 << 20);
    assert_int_equal(cu_engine_explain(e, "ns/big", &b, NULL), CU_OK);
    assert_string_equal(
        cu_buf_str(&b),
        "Workload ns/big: pending (WaitingForQuota)\n"
        "  message: couldn't assign flavors to pod set main: topology \"gpu\" doesn't allow to "
        "fit any of 1 pod(s). Total nodes: 4; excluded: resource \"nvidia.com/gpu\": 4; quota "
        "has 20 nvidia.com/gpu free in flavor h100, but no node has 4 nvidia.com/gpu free: "
        "largest free per node 1 (gpu-a 1, gpu-b 1, gpu-c 1, gpu-d 1)\n"
        "\n"
        "Queue\n"
        "  LocalQueue ns/lq-tas -> ClusterQueue tas\n"
        "  ClusterQueue tas: active, BestEffortFIFO\n"
        "  priority 0\n"
        "  position 0 in ClusterQueue tas (nothing ahead of it), 0 in LocalQueue ns/lq-tas\n"
        "  set aside as inadmissible: tried again when quota is freed in its cohort tree\n"
        "\n"
        "Requests\n"
        "  pod set main: 1 pod (nvidia.com/gpu 4)\n"
        "\n"
        "Flavors for pod set main (nvidia.com/gpu), in order\n"
        "  h100: fits now\n"
        "    nvidia.com/gpu: fits (requested 4, available 20)\n"
        "  fits now in flavor h100\n"
        "\n"
        "Preemption\n"
        "  preemption not configured (withinClusterQueue: Never, reclaimWithinCohort: Never)\n"
        "  its quota fits; what holds the nodes: see Topology\n"
        "\n"
        "Topology (flavor h100)\n"
        "  pod set main: quota has 20 nvidia.com/gpu free in flavor h100, but no node has 4 "
        "nvidia.com/gpu free: largest free per node 1 (gpu-a 1, gpu-b 1, gpu-c 1, gpu-d 1)\n"
        "  admitted workloads that would have to finish or be preempted first:\n"
        "    ns/train-a\n"
        "  it would get gpu-a; 1 pod that Kueue did not place also runs there\n"
        "\n"
        "To unblock\n"
        "  - 1 admitted workload of flavor h100 finishing or preempted (see Topology)\n");
    cu_buf_free(&b);
    cu_buf_init(&b, 1 << 20);
    assert_int_equal(cu_engine_explain(e, "ns/train-a", &b, NULL), CU_OK);
    assert_non_null(strstr(cu_buf_str(&b),
                           "  pod set main: 2 pods in flavor h100: nvidia.com/gpu 6\n"
                           "    topology: gpu-a 1, gpu-b 1\n"));
    cu_buf_free(&b);
    /* the document form carries the same */
    cu_arena a;
    cu_arena_init(&a, 0);
    cu_node *doc = NULL;
    assert_int_equal(cu_engine_explain_doc(e, "ns/big", &a, &doc, NULL), CU_OK);
    cu_buf_init(&b, 1 << 20);
    assert_int_equal(cu_node_emit_json(doc, &b, 0), CU_OK);
    assert_non_null(strstr(cu_buf_str(&b), "\"mustFinishOrBePreempted\":[\"ns/train-a\"]"));
    cu_buf_free(&b);
    cu_arena_free(&a);
    const int64_t bound[4] = { 4, 4, 4, 4 };
    accounting(e, bound);
    cu_engine_free(e);
    cu_world_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_done_when),
        cmocka_unit_test(test_required_hostname),
        cmocka_unit_test(test_flavor_match),
        cmocka_unit_test(test_tas_flavor_refused),
        cmocka_unit_test(test_preempt_frees_domain),
        cmocka_unit_test(test_status_and_readmission),
        cmocka_unit_test(test_same_round_collision),
        cmocka_unit_test(test_explain_golden),
        cmocka_unit_test(test_podset_group),
        cmocka_unit_test(test_podset_group_flavor),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
