/*
 * test_topology.c - the TAS snapshot and placement (cu_tas.h) on
 * Kueue's cases: the issue's fragmented GPUs, required / preferred /
 * unconstrained, BestFit packing against LeastFreeCapacity, slices, the
 * nodes a flavor or a pod set cannot use, usage updates and the
 * diagnosis of a pod set that waits.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "cu_tas.h"
#include "test_topo_check.h"

#define GPU "nvidia.com/gpu"
#define BLOCK "cloud.provider.com/block"
#define RACK "cloud.provider.com/rack"

static const char *const levels3[] = { BLOCK, RACK, CU_TAS_HOSTNAME };

static cu_tas *topo3(void)
{
    cu_tas_flavor f = { .name = "default", .nlevels = 3, .levels = levels3 };
    cu_tas *t = cu_tas_new(&f);
    assert_non_null(t);
    return t;
}

/* A ready node in block/rack with gpus GPUs, 32 cpus and 110 pods. */
static void node(cu_tas *t, const char *name, const char *block, const char *rack, int64_t gpus)
{
    cu_kv l[] = { { BLOCK, block }, { RACK, rack }, { CU_TAS_HOSTNAME, name }, { "pool", "h100" } };
    cu_kvs labels = { 4, l };
    cu_res a[] = { { "cpu", 32000 }, { GPU, gpus }, { "pods", 110 } };
    cu_reslist alloc = { 3, a };
    cu_tas_node n = { .name = name, .labels = &labels, .allocatable = &alloc, .ready = 1 };
    assert_int_equal(cu_tas_node_set(t, &n), CU_OK);
}

/* count pods of gpus GPUs (and 1 cpu) bound to the node. */
static void bind(cu_tas *t, const char *nodename, int64_t gpus, int32_t count, int sign)
{
    cu_res r[] = { { "cpu", 1000 }, { GPU, gpus } };
    cu_reslist l = { 2, r };
    assert_int_equal(cu_tas_usage(t, nodename, &l, count, sign), CU_OK);
}

/* One pod's requests: gpus GPUs and 1 cpu, in the caller's req[2]. */
#define PER_POD(name, gpus) \
    cu_res name##_r[] = { { "cpu", 1000 }, { GPU, gpus } }; \
    cu_reslist name = { 2, name##_r }

/* The assignment as "v1/v2:count v1/v2:count" for comparisons. */
static const char *show(const cu_tas_result *r)
{
    static char buf[1024];
    size_t o = 0;
    buf[0] = 0;
    for (size_t i = 0; i < r->ndomains; i++) {
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%s", i ? " " : "");
        for (size_t k = 0; k < r->nlevels; k++)
            o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s", k ? "/" : "",
                                  r->domains[i].values[k]);
        o += (size_t)snprintf(buf + o, sizeof buf - o, ":%d", r->domains[i].count);
    }
    return buf;
}

static cu_err place1(cu_tas *t, cu_tas_request *q, cu_tas_profile p, cu_tas_result *r)
{
    cu_tas_opts o = { .profile = p };
    return cu_tas_place(t, q, 1, &o, r);
}

/* Four 8-GPU nodes with single-GPU pods holding 6 on each: 8 GPUs free by
 * quota, 2 per node. */
static cu_tas *fragmented(void)
{
    cu_tas *t = topo3();
    const char *names[] = { "gpu-a", "gpu-b", "gpu-c", "gpu-d" };
    for (int i = 0; i < 4; i++) {
        node(t, names[i], "b1", i < 2 ? "r1" : "r2", 8);
        bind(t, names[i], 1, 6, 1);
    }
    return t;
}

static void test_issue_example(void **state)
{
    (void)state;
    cu_tas *t = fragmented();
    PER_POD(three, 3);
    cu_tas_request q = { .count = 2, .per_pod = &three, .mode = CU_TAS_UNCONSTRAINED };
    cu_tas_result r;
    assert_int_equal(place1(t, &q, CU_TAS_PROFILE_MIXED, &r), CU_EINVAL);
    assert_false(r.ok);
    assert_string_equal(r.reason, "topology \"default\" doesn't allow to fit any of 2 pod(s). "
                                  "Total nodes: 4; excluded: resource \"nvidia.com/gpu\": 4");
    assert_int_equal(r.diag.requested, 2);
    assert_int_equal(r.diag.fit_one, 0);
    assert_int_equal(r.diag.fit_total, 0);
    assert_string_equal(r.diag.resource, GPU);
    assert_int_equal(r.diag.per_pod, 3);
    assert_int_equal(r.diag.max_free, 2);
    assert_int_equal(r.diag.ntop, 4);
    assert_string_equal(r.diag.top[0].node, "gpu-a");
    assert_int_equal(r.diag.top[0].free, 2);
    assert_string_equal(r.diag.top[3].node, "gpu-d");
    assert_int_equal(r.diag.nodes_member, 4);
    cu_buf b;
    cu_buf_init(&b, 4096);
    assert_int_equal(cu_tas_diag_text(&r.diag, &b), CU_OK);
    assert_string_equal(b.data, "no node has 3 nvidia.com/gpu free: largest free per node 2 "
                                "(gpu-a 2, gpu-b 2, gpu-c 2, gpu-d 2)");
    cu_buf_free(&b);
    cu_tas_result_free(&r);
    /* required on a host: the same */
    q.mode = CU_TAS_REQUIRED;
    q.level = CU_TAS_HOSTNAME;
    assert_int_equal(place1(t, &q, CU_TAS_PROFILE_MIXED, &r), CU_EINVAL);
    assert_int_equal(r.diag.max_free, 2);
    cu_tas_result_free(&r);
    assert_int_equal(cu_tas_placeable(t, &three, NULL, NULL, 0), 0);

    /* 2 pods x 2 GPUs fits on two nodes, one pod each */
    PER_POD(two, 2);
    q = (cu_tas_request){ .count = 2, .per_pod = &two, .mode = CU_TAS_PREFERRED, .level = RACK };
    assert_int_equal(place1(t, &q, CU_TAS_PROFILE_MIXED, &r), CU_OK);
    assert_true(r.ok);
    assert_int_equal(r.nlevels, 1);
    assert_string_equal(r.levels[0], CU_TAS_HOSTNAME);
    assert_string_equal(show(&r), "gpu-a:1 gpu-b:1");
    cu_tas_result_free(&r);
    assert_int_equal(cu_tas_placeable(t, &two, NULL, NULL, 0), 4);
    const char *best = NULL;
    assert_int_equal(cu_tas_max_free(t, GPU, &best), 2);
    assert_string_equal(best, "gpu-a");

    /* a node frees 3 GPUs on two nodes: now the 3-GPU gang fits */
    bind(t, "gpu-c", 1, 1, -1);
    bind(t, "gpu-d", 1, 1, -1);
    assert_int_equal(cu_tas_max_free(t, GPU, &best), 3);
    assert_string_equal(best, "gpu-c");
    q = (cu_tas_request){ .count = 2, .per_pod = &three, .mode = CU_TAS_REQUIRED, .level = RACK };
    assert_int_equal(place1(t, &q, CU_TAS_PROFILE_MIXED, &r), CU_OK);
    assert_string_equal(show(&r), "gpu-c:1 gpu-d:1");
    cu_tas_result_free(&r);
    cu_tas_free(t);
}

/* Two blocks of two racks of two nodes, each node with one free GPU. */
static cu_tas *grid(void)
{
    cu_tas *t = topo3();
    const char *blocks[] = { "b1", "b2" }, *racks[] = { "r1", "r2" };
    char name[32];
    for (int b = 0; b < 2; b++)
        for (int r = 0; r < 2; r++)
            for (int n = 0; n < 2; n++) {
                snprintf(name, sizeof name, "%s-%s-n%d", blocks[b], racks[r], n);
                node(t, name, blocks[b], racks[r], 1);
            }
    return t;
}

static void test_required_preferred_unconstrained(void **state)
{
    (void)state;
    cu_tas *t = grid();
    PER_POD(one, 1);
    cu_tas_result r;
    /* required rack: a rack has 2, so 3 do not fit */
    cu_tas_request q = { .count = 3, .per_pod = &one, .mode = CU_TAS_REQUIRED, .level = RACK };
    assert_int_equal(place1(t, &q, CU_TAS_PROFILE_MIXED, &r), CU_EINVAL);
    assert_string_equal(r.reason, "topology \"default\" allows to fit only 2 out of 3 pod(s)");
    assert_int_equal(r.diag.fit_one, 2);
    assert_int_equal(r.diag.fit_total, 8);
    cu_buf b;
    cu_buf_init(&b, 4096);
    assert_int_equal(cu_tas_diag_text(&r.diag, &b), CU_OK);
    assert_string_equal(b.data, "at most 2 of the 3 pods fit in one " RACK " (8 on all nodes)");
    cu_buf_free(&b);
    cu_tas_result_free(&r);
    /* preferred rack: one block, over two racks */
    q.mode = CU_TAS_PREFERRED;
    assert_int_equal(place1(t, &q, CU_TAS_PROFILE_MIXED, &r), CU_OK);
    assert_string_equal(show(&r), "b1-r1-n0:1 b1-r1-n1:1 b1-r2-n0:1");
    cu_tas_result_free(&r);
    /* preferred rack, 5 pods: more than a block, spread at the top */
    q.count = 5;
    assert_int_equal(place1(t, &q, CU_TAS_PROFILE_MIXED, &r), CU_OK);
    assert_string_equal(show(&r), "b1-r1-n0:1 b1-r1-n1:1 b1-r2-n0:1 b1-r2-n1:1 b2-r1-n0:1");
    cu_tas_result_free(&r);
    /* required block: 4 fit, 5 do not */
    q.mode = CU_TAS_REQUIRED;
    q.level = BLOCK;
    assert_int_equal(place1(t, &q, CU_TAS_PROFILE_MIXED, &r), CU_EINVAL);
    assert_int_equal(r.diag.fit_one, 4);
    cu_tas_result_free(&r);
    q.count = 4;
    assert_int_equal(place1(t, &q, CU_TAS_PROFILE_MIXED, &r), CU_OK);
    assert_string_equal(show(&r), "b1-r1-n0:1 b1-r1-n1:1 b1-r2-n0:1 b1-r2-n1:1");
    cu_tas_result_free(&r);
    /* unconstrained: any nodes; 9 is more than there is */
    q = (cu_tas_request){ .count = 8, .per_pod = &one, .mode = CU_TAS_UNCONSTRAINED };
    assert_int_equal(place1(t, &q, CU_TAS_PROFILE_MIXED, &r), CU_OK);
    assert_int_equal(r.ndomains, 8);
    cu_tas_result_free(&r);
    q.count = 9;
    assert_int_equal(place1(t, &q, CU_TAS_PROFILE_MIXED, &r), CU_EINVAL);
    assert_string_equal(r.reason, "topology \"default\" allows to fit only 8 out of 9 pod(s)");
    cu_tas_result_free(&r);
    /* a level the topology does not have */
    q = (cu_tas_request){ .count = 1, .per_pod = &one, .mode = CU_TAS_REQUIRED, .level = "zone" };
    assert_int_equal(place1(t, &q, CU_TAS_PROFILE_MIXED, &r), CU_EINVAL);
    assert_string_equal(r.reason, "no requested topology level: zone");
    cu_tas_result_free(&r);
    cu_tas_free(t);
}

/* Free GPUs: a 4, b 1, c 2, all in one rack. */
static cu_tas *uneven(void)
{
    cu_tas *t = topo3();
    node(t, "a", "b1", "r1", 4);
    node(t, "b", "b1", "r1", 1);
    node(t, "c", "b1", "r1", 2);
    return t;
}

static void test_bestfit_packs(void **state)
{
    (void)state;
    cu_tas *t = uneven();
    PER_POD(one, 1);
    cu_tas_result r;
    /* one pod on a host: the fullest node that still fits (b) */
    cu_tas_request q = {
        .count = 1, .per_pod = &one, .mode = CU_TAS_PREFERRED, .level = CU_TAS_HOSTNAME
    };
    assert_int_equal(place1(t, &q, CU_TAS_PROFILE_MIXED, &r), CU_OK);
    assert_string_equal(show(&r), "b:1");
    cu_tas_result_free(&r);
    /* two pods required on one host: c (2) rather than a (4) */
    q.count = 2;
    q.mode = CU_TAS_REQUIRED;
    assert_int_equal(place1(t, &q, CU_TAS_PROFILE_MIXED, &r), CU_OK);
    assert_string_equal(show(&r), "c:2");
    cu_tas_result_free(&r);
    /* five preferred on a host: the rack; BestFit takes a whole (4) and
     * the tightest for the last one (b), keeping c free */
    q.count = 5;
    q.mode = CU_TAS_PREFERRED;
    assert_int_equal(place1(t, &q, CU_TAS_PROFILE_MIXED, &r), CU_OK);
    assert_string_equal(show(&r), "a:4 b:1");
    cu_tas_result_free(&r);
    /* unconstrained: LeastFreeCapacity (TASProfileMixed) fills the least
     * free nodes first; with the gate off, BestFit */
    q = (cu_tas_request){ .count = 5, .per_pod = &one, .mode = CU_TAS_UNCONSTRAINED };
    assert_int_equal(place1(t, &q, CU_TAS_PROFILE_MIXED, &r), CU_OK);
    assert_string_equal(show(&r), "a:2 b:1 c:2");
    cu_tas_result_free(&r);
    assert_int_equal(place1(t, &q, CU_TAS_PROFILE_BEST_FIT, &r), CU_OK);
    assert_string_equal(show(&r), "a:4 b:1");
    cu_tas_result_free(&r);
    /* LeastFreeCapacity, one node fits: the least free that does */
    q.count = 2;
    assert_int_equal(place1(t, &q, CU_TAS_PROFILE_MIXED, &r), CU_OK);
    assert_string_equal(show(&r), "c:2");
    cu_tas_result_free(&r);
    cu_tas_free(t);
}

static void test_racks_pack(void **state)
{
    (void)state;
    /* rack r1 has 4 free, r2 2: two pods required in a rack go to r2 */
    cu_tas *t = topo3();
    node(t, "n1", "b1", "r1", 2);
    node(t, "n2", "b1", "r1", 2);
    node(t, "n3", "b1", "r2", 1);
    node(t, "n4", "b1", "r2", 1);
    PER_POD(one, 1);
    cu_tas_request q = { .count = 2, .per_pod = &one, .mode = CU_TAS_REQUIRED, .level = RACK };
    cu_tas_result r;
    assert_int_equal(place1(t, &q, CU_TAS_PROFILE_MIXED, &r), CU_OK);
    assert_string_equal(show(&r), "n3:1 n4:1");
    cu_tas_result_free(&r);
    /* three: only r1; inside it the fewest nodes: n1 2 then the tightest */
    q.count = 3;
    assert_int_equal(place1(t, &q, CU_TAS_PROFILE_MIXED, &r), CU_OK);
    assert_string_equal(show(&r), "n1:2 n2:1");
    cu_tas_result_free(&r);
    int64_t fr = 0;
    assert_int_equal(cu_tas_ndomains(t, 1), 2);
    const char *const *v = cu_tas_domain(t, 1, 0, GPU, &fr);
    assert_string_equal(v[0], "b1");
    assert_string_equal(v[1], "r1");
    assert_int_equal(fr, 4);
    cu_tas_free(t);
}

static void test_slices(void **state)
{
    (void)state;
    /* block b1: r1 has 2 (one slice of 2), r2 has 1 (none); b2: two racks
     * of 2 (two slices) */
    cu_tas *t = topo3();
    node(t, "n1", "b1", "r1", 1);
    node(t, "n2", "b1", "r1", 1);
    node(t, "n3", "b1", "r2", 1);
    node(t, "n5", "b2", "r3", 1);
    node(t, "n6", "b2", "r3", 1);
    node(t, "n7", "b2", "r4", 2);
    PER_POD(one, 1);
    cu_tas_request q = { .count = 4,
                         .per_pod = &one,
                         .mode = CU_TAS_REQUIRED,
                         .level = BLOCK,
                         .slice_level = RACK,
                         .slice_size = 2 };
    cu_tas_result r;
    assert_int_equal(place1(t, &q, CU_TAS_PROFILE_MIXED, &r), CU_OK);
    assert_string_equal(show(&r), "n5:1 n6:1 n7:2");
    cu_tas_result_free(&r);
    q.count = 6;
    assert_int_equal(place1(t, &q, CU_TAS_PROFILE_MIXED, &r), CU_EINVAL);
    assert_string_equal(r.reason, "topology \"default\" allows to fit only 2 out of 3 slice(s)");
    cu_tas_result_free(&r);
    q.slice_size = 0;
    assert_int_equal(place1(t, &q, CU_TAS_PROFILE_MIXED, &r), CU_EINVAL);
    assert_string_equal(r.reason, "slice topology requested, but slice size not provided");
    cu_tas_result_free(&r);
    q = (cu_tas_request){ .count = 2,
                          .per_pod = &one,
                          .mode = CU_TAS_REQUIRED,
                          .level = RACK,
                          .slice_level = BLOCK,
                          .slice_size = 2 };
    assert_int_equal(place1(t, &q, CU_TAS_PROFILE_MIXED, &r), CU_EINVAL);
    assert_string_equal(r.reason,
                        "podset slice topology " BLOCK " is above the podset topology " RACK);
    cu_tas_result_free(&r);
    cu_tas_free(t);
}

static void test_filters(void **state)
{
    (void)state;
    cu_kv fl[] = { { "pool", "h100" } };
    cu_kvs flabels = { 1, fl };
    cu_toleration ftol = { .key = "reserved", .op = CU_TOL_EXISTS };
    cu_tas_flavor f = { .name = "t",
                        .nlevels = 3,
                        .levels = levels3,
                        .node_labels = &flabels,
                        .ntols = 1,
                        .tols = &ftol };
    cu_tas *t = cu_tas_new(&f);
    assert_non_null(t);
    node(t, "ok", "b1", "r1", 1);
    cu_res a[] = { { GPU, 1 }, { "pods", 10 } };
    cu_reslist alloc = { 2, a };
    cu_kv l[] = { { BLOCK, "b1" }, { RACK, "r1" }, { CU_TAS_HOSTNAME, "x" }, { "pool", "a100" } };
    cu_kvs labels = { 4, l };
    /* another pool */
    cu_tas_node n = { .name = "other-pool", .labels = &labels, .allocatable = &alloc, .ready = 1 };
    assert_int_equal(cu_tas_node_set(t, &n), CU_OK);
    /* no rack label */
    l[3].value = "h100";
    cu_kv l2[] = { { BLOCK, "b1" }, { CU_TAS_HOSTNAME, "norack" }, { "pool", "h100" } };
    cu_kvs labels2 = { 3, l2 };
    n = (cu_tas_node){ .name = "norack", .labels = &labels2, .allocatable = &alloc, .ready = 1 };
    assert_int_equal(cu_tas_node_set(t, &n), CU_OK);
    /* not ready, unschedulable */
    l[2].value = "notready";
    n = (cu_tas_node){ .name = "notready", .labels = &labels, .allocatable = &alloc, .ready = 0 };
    assert_int_equal(cu_tas_node_set(t, &n), CU_OK);
    l[2].value = "cordoned";
    n = (cu_tas_node){
        .name = "cordoned", .labels = &labels, .allocatable = &alloc, .ready = 1, .unschedulable = 1
    };
    assert_int_equal(cu_tas_node_set(t, &n), CU_OK);
    /* tainted: NoSchedule untolerated, the flavor's tolerated one,
     * PreferNoSchedule (not a filter) */
    cu_taint bad = { "dedicated", "infra", "NoSchedule" }, tol = { "reserved", "x", "NoExecute" },
             soft = { "slow", NULL, "PreferNoSchedule" };
    l[2].value = "tainted";
    n = (cu_tas_node){ .name = "tainted",
                       .labels = &labels,
                       .allocatable = &alloc,
                       .ready = 1,
                       .ntaints = 1,
                       .taints = &bad };
    assert_int_equal(cu_tas_node_set(t, &n), CU_OK);
    l[2].value = "tolerated";
    n = (cu_tas_node){ .name = "tolerated",
                       .labels = &labels,
                       .allocatable = &alloc,
                       .ready = 1,
                       .ntaints = 1,
                       .taints = &tol };
    assert_int_equal(cu_tas_node_set(t, &n), CU_OK);
    l[2].value = "soft";
    n = (cu_tas_node){ .name = "soft",
                       .labels = &labels,
                       .allocatable = &alloc,
                       .ready = 1,
                       .ntaints = 1,
                       .taints = &soft };
    assert_int_equal(cu_tas_node_set(t, &n), CU_OK);

    cu_res one_r[] = { { GPU, 1 } };
    cu_reslist one = { 1, one_r };
    assert_int_equal(cu_tas_placeable(t, &one, NULL, NULL, 0), 3);
    cu_tas_request q = { .count = 4, .per_pod = &one, .mode = CU_TAS_UNCONSTRAINED };
    cu_tas_result r;
    assert_int_equal(place1(t, &q, CU_TAS_PROFILE_MIXED, &r), CU_EINVAL);
    assert_string_equal(r.reason,
                        "topology \"t\" allows to fit only 3 out of 4 pod(s). Total nodes: "
                        "4; excluded: taint \"dedicated=infra:NoSchedule\": 1");
    assert_int_equal(r.diag.nodes_known, 8);
    assert_int_equal(r.diag.nodes_member, 4);
    assert_int_equal(r.diag.nodes_not_ready, 1);
    assert_int_equal(r.diag.nodes_unschedulable, 1);
    assert_int_equal(r.diag.nodes_flavor, 2);
    assert_int_equal(r.diag.nodes_taint, 1);
    assert_int_equal(r.diag.fit_total, 3);
    cu_buf b;
    cu_buf_init(&b, 4096);
    assert_int_equal(cu_tas_diag_text(&r.diag, &b), CU_OK);
    assert_string_equal(b.data,
                        "the nodes take only 3 of the 4 pods (largest free nvidia.com/gpu per "
                        "node 1: ok 1, soft 1, tolerated 1); nodes left out: 1 not ready, 1 "
                        "unschedulable, 2 not matching the flavor's node labels or the "
                        "topology's levels, 1 with a taint not tolerated");
    cu_buf_free(&b);
    cu_tas_result_free(&r);
    /* the pod set tolerates the taint itself, and selects by label */
    cu_toleration ptol = { .key = "dedicated", .op = CU_TOL_EQUAL, .value = "infra" };
    q.ntols = 1;
    q.tols = &ptol;
    assert_int_equal(place1(t, &q, CU_TAS_PROFILE_MIXED, &r), CU_OK);
    assert_string_equal(show(&r), "ok:1 soft:1 tainted:1 tolerated:1");
    cu_tas_result_free(&r);
    cu_kv sl[] = { { CU_TAS_HOSTNAME, "ok" } };
    cu_nodesel sel = { .selector = { 1, sl } };
    q.sel = &sel;
    q.count = 1;
    assert_int_equal(place1(t, &q, CU_TAS_PROFILE_MIXED, &r), CU_OK);
    assert_string_equal(show(&r), "ok:1");
    cu_tas_result_free(&r);
    q.count = 2;
    assert_int_equal(place1(t, &q, CU_TAS_PROFILE_MIXED, &r), CU_EINVAL);
    assert_int_equal(r.diag.nodes_selector, 3);
    assert_string_equal(r.reason,
                        "topology \"t\" allows to fit only 1 out of 2 pod(s). Total nodes: "
                        "4; excluded: nodeSelector: 3");
    cu_tas_result_free(&r);
    /* the node becomes ready: it counts */
    l[2].value = "notready";
    n = (cu_tas_node){ .name = "notready", .labels = &labels, .allocatable = &alloc, .ready = 1 };
    assert_int_equal(cu_tas_node_set(t, &n), CU_OK);
    assert_int_equal(cu_tas_placeable(t, &one, NULL, NULL, 0), 4);
    cu_tas_node_remove(t, "notready");
    assert_int_equal(cu_tas_placeable(t, &one, NULL, NULL, 0), 3);
    cu_tas_free(t);
}

static void test_usage_updates(void **state)
{
    (void)state;
    cu_tas *t = topo3();
    PER_POD(one, 1);
    /* usage before the node arrives is kept */
    bind(t, "n1", 1, 3, 1);
    node(t, "n1", "b1", "r1", 4);
    int64_t f = 0;
    assert_int_equal(cu_tas_node_free(t, "n1", GPU, &f), CU_OK);
    assert_int_equal(f, 1);
    assert_int_equal(cu_tas_node_free(t, "n1", "pods", &f), CU_OK);
    assert_int_equal(f, 107);
    assert_int_equal(cu_tas_node_free(t, "n1", "cpu", &f), CU_OK);
    assert_int_equal(f, 29000);
    assert_int_equal(cu_tas_node_free(t, "nope", GPU, &f), CU_ENOTFOUND);
    /* admitted TAS usage counts, except when simulating an empty flavor;
     * it is kept by the assignment's domain (the hostname here) */
    const char *host[] = { "n1" };
    assert_int_equal(cu_tas_assigned(t, host, 1, &one, 1, 1), CU_OK);
    assert_int_equal(cu_tas_assigned(t, levels3, 3, &one, 1, 1), CU_EINVAL);
    assert_int_equal(cu_tas_placeable(t, &one, NULL, NULL, 0), 0);
    assert_int_equal(cu_tas_node_free(t, "n1", GPU, &f), CU_OK);
    assert_int_equal(f, 0);
    cu_tas_request q = { .count = 1, .per_pod = &one, .mode = CU_TAS_UNCONSTRAINED };
    cu_tas_result r;
    assert_int_equal(place1(t, &q, CU_TAS_PROFILE_MIXED, &r), CU_EINVAL);
    cu_tas_result_free(&r);
    cu_tas_opts o = { .simulate_empty = 1 };
    assert_int_equal(cu_tas_place(t, &q, 1, &o, &r), CU_OK);
    cu_tas_result_free(&r);
    assert_int_equal(cu_tas_assigned(t, host, 1, &one, 1, -1), CU_OK);
    /* a replaced node (more GPUs) keeps its usage; removed and back too */
    node(t, "n1", "b1", "r1", 8);
    assert_int_equal(cu_tas_max_free(t, GPU, NULL), 5);
    cu_tas_node_remove(t, "n1");
    assert_int_equal(cu_tas_max_free(t, GPU, NULL), 0);
    assert_int_equal(cu_tas_ndomains(t, 2), 0);
    node(t, "n1", "b1", "r1", 8);
    assert_int_equal(cu_tas_max_free(t, GPU, NULL), 5);
    bind(t, "n1", 1, 3, -1);
    assert_int_equal(cu_tas_max_free(t, GPU, NULL), 8);
    /* the pods count: 2 allocatable pods take 2 pods whatever the GPUs */
    cu_kv l[] = { { BLOCK, "b1" }, { RACK, "r1" }, { CU_TAS_HOSTNAME, "n1" } };
    cu_kvs labels = { 3, l };
    cu_res a[] = { { "cpu", 32000 }, { GPU, 8 }, { "pods", 2 } };
    cu_reslist alloc = { 3, a };
    cu_tas_node n = { .name = "n1", .labels = &labels, .allocatable = &alloc, .ready = 1 };
    assert_int_equal(cu_tas_node_set(t, &n), CU_OK);
    assert_int_equal(cu_tas_placeable(t, &one, NULL, NULL, 0), 2);
    cu_tas_free(t);
}

static void test_pod_sets_share(void **state)
{
    (void)state;
    /* two pod sets of one flavor: the second counts the first */
    cu_tas *t = fragmented();
    PER_POD(two, 2);
    cu_tas_request q[3] = {
        { .count = 2, .per_pod = &two, .mode = CU_TAS_REQUIRED, .level = RACK },
        { .count = 2, .per_pod = &two, .mode = CU_TAS_REQUIRED, .level = RACK },
        { .count = 1, .per_pod = &two, .mode = CU_TAS_UNCONSTRAINED },
    };
    cu_tas_result r[3];
    assert_int_equal(cu_tas_place(t, q, 2, NULL, r), CU_OK);
    assert_string_equal(show(&r[0]), "gpu-a:1 gpu-b:1");
    assert_string_equal(show(&r[1]), "gpu-c:1 gpu-d:1");
    cu_tas_result_free(&r[0]);
    cu_tas_result_free(&r[1]);
    assert_int_equal(cu_tas_place(t, q, 3, NULL, r), CU_EINVAL);
    assert_true(r[0].ok && r[1].ok);
    assert_false(r[2].ok);
    assert_int_equal(r[2].diag.max_free, 0);
    for (int i = 0; i < 3; i++)
        cu_tas_result_free(&r[i]);
    /* nothing was recorded */
    assert_int_equal(cu_tas_placeable(t, &two, NULL, NULL, 0), 4);
    cu_tas_free(t);
}

static void test_rack_leaves(void **state)
{
    (void)state;
    /* the lowest level is a rack: its nodes' capacity is summed, and the
     * assignment names every level */
    static const char *const lv[] = { BLOCK, RACK };
    cu_tas_flavor f = { .name = "racks", .nlevels = 2, .levels = lv };
    cu_tas *t = cu_tas_new(&f);
    node(t, "n1", "b1", "r1", 1);
    node(t, "n2", "b1", "r1", 1);
    node(t, "n3", "b1", "r2", 1);
    PER_POD(one, 1);
    cu_tas_request q = { .count = 2, .per_pod = &one, .mode = CU_TAS_REQUIRED, .level = RACK };
    cu_tas_result r;
    assert_int_equal(place1(t, &q, CU_TAS_PROFILE_MIXED, &r), CU_OK);
    assert_int_equal(r.nlevels, 2);
    assert_string_equal(show(&r), "b1/r1:2");
    /* recorded as admitted: the rack is full, the next pod goes to r2 */
    assert_int_equal(cu_tas_assigned(t, r.domains[0].values, r.nlevels, &one, 2, 1), CU_OK);
    cu_tas_result_free(&r);
    int64_t fr = -1;
    cu_tas_domain(t, 1, 0, GPU, &fr);
    assert_int_equal(fr, 0);
    q.count = 1;
    assert_int_equal(place1(t, &q, CU_TAS_PROFILE_MIXED, &r), CU_OK);
    assert_string_equal(show(&r), "b1/r2:1");
    cu_tas_result_free(&r);
    cu_tas_free(t);
}

/* ---- cases of Kueue's own TAS tests (pkg/cache/scheduler), restated ---- */

/* A ready node named host with cpus cpus (whole) and pods pods; block or
 * rack NULL: no such label. */
static void knode(cu_tas *t, const char *block, const char *rack, const char *host, int64_t cpus,
                  int64_t pods)
{
    cu_kv l[3];
    size_t n = 0;
    if (block)
        l[n++] = (cu_kv){ BLOCK, block };
    if (rack)
        l[n++] = (cu_kv){ RACK, rack };
    l[n++] = (cu_kv){ CU_TAS_HOSTNAME, host };
    cu_kvs labels = { n, l };
    cu_res a[] = { { "cpu", cpus * 1000 }, { "pods", pods } };
    cu_reslist alloc = { 2, a };
    cu_tas_node x = { .name = host, .labels = &labels, .allocatable = &alloc, .ready = 1 };
    assert_int_equal(cu_tas_node_set(t, &x), CU_OK);
}

static cu_tas *klevels(size_t n, const char *const *levels)
{
    cu_tas_flavor f = { .name = "default", .nlevels = n, .levels = levels };
    cu_tas *t = cu_tas_new(&f);
    assert_non_null(t);
    return t;
}

/* Places count pods of one cpu; returns the assignment or the reason. */
static const char *kplace(cu_tas *t, cu_tas_request q, int32_t count)
{
    static char out[1024];
    cu_res c[] = { { "cpu", 1000 } };
    cu_reslist one = { 1, c };
    q.count = count;
    q.per_pod = &one;
    cu_tas_result r;
    cu_err e = place1(t, &q, CU_TAS_PROFILE_MIXED, &r);
    snprintf(out, sizeof out, "%s", e == CU_OK ? show(&r) : r.reason ? r.reason : "?");
    cu_tas_result_free(&r);
    return out;
}

static const char *const two_levels[] = { BLOCK, RACK };

/* Kueue's defaultNodes: b1 {r1 {x3}, r2 {x5 x1 x6}}, b2 {r1 {x2}, r2 {x4}},
 * one cpu each, x4 two. */
static cu_tas *kdefault(size_t n, const char *const *levels)
{
    cu_tas *t = klevels(n, levels);
    knode(t, "b1", "r1", "x3", 1, 10);
    knode(t, "b1", "r2", "x5", 1, 10);
    knode(t, "b1", "r2", "x1", 1, 10);
    knode(t, "b1", "r2", "x6", 1, 10);
    knode(t, "b2", "r1", "x2", 1, 10);
    knode(t, "b2", "r2", "x4", 2, 40);
    return t;
}

static void test_kueue_cases(void **state)
{
    (void)state;
    cu_tas_request req_block = { .mode = CU_TAS_REQUIRED, .level = BLOCK };
    cu_tas_request pref_block = { .mode = CU_TAS_PREFERRED, .level = BLOCK };
    cu_tas_request req_rack = { .mode = CU_TAS_REQUIRED, .level = RACK };
    cu_tas_request pref_rack = { .mode = CU_TAS_PREFERRED, .level = RACK };
    cu_tas_request unc = { .mode = CU_TAS_UNCONSTRAINED };

    /* "minimize the number of used racks before optimizing the number of
     * nodes": r3's four 1-cpu nodes rather than r1 + r2's two 2-cpu ones */
    cu_tas *t = topo3();
    knode(t, "b1", "r1", "x3", 2, 10);
    knode(t, "b1", "r2", "x5", 2, 20);
    knode(t, "b1", "r3", "x1", 1, 10);
    knode(t, "b1", "r3", "x6", 1, 10);
    knode(t, "b1", "r3", "x2", 1, 10);
    knode(t, "b1", "r3", "x4", 1, 10);
    assert_string_equal(kplace(t, req_block, 4), "x1:1 x2:1 x4:1 x6:1");
    cu_tas_free(t);

    /* "choose the node that can accommodate all Pods" */
    t = topo3();
    knode(t, "b1", "r1", "x3", 2, 10);
    knode(t, "b1", "r1", "x5", 1, 10);
    knode(t, "b1", "r1", "x1", 1, 10);
    assert_string_equal(kplace(t, req_block, 2), "x3:2");
    cu_tas_free(t);

    /* "unconstrained; 6 pods fit into hosts scattered across the whole
     * datacenter even they could fit into single rack" (LeastFreeCapacity) */
    t = topo3();
    knode(t, "b1", "r1", "x3", 4, 10);
    knode(t, "b1", "r1", "x5", 1, 10);
    knode(t, "b1", "r1", "x1", 1, 10);
    knode(t, "b2", "r1", "x6", 2, 10);
    knode(t, "b2", "r1", "x2", 1, 10);
    assert_string_equal(kplace(t, unc, 6), "x1:1 x3:1 x5:1 x2:1 x6:2");
    cu_tas_free(t);

    /* "unconstrained; a single pod fits into each host" */
    t = kdefault(3, levels3);
    assert_string_equal(kplace(t, unc, 1), "x3:1");
    cu_tas_free(t);

    /* "block preferred; Pods fit in 2 blocks" (one level) */
    static const char *const one_level[] = { BLOCK };
    t = klevels(1, one_level);
    knode(t, "b1", NULL, "b1", 2, 20);
    knode(t, "b2", NULL, "b2", 1, 10);
    knode(t, "b3", NULL, "b3", 4, 40);
    assert_string_equal(kplace(t, pref_block, 5), "b2:1 b3:4");
    cu_tas_free(t);

    /* two levels: racks are the leaves */
    t = kdefault(2, two_levels);
    assert_string_equal(kplace(t, req_rack, 2), "b2/r2:2");
    assert_string_equal(kplace(t, pref_rack, 4), "b1/r1:1 b1/r2:3");
    assert_string_equal(kplace(t, pref_rack, 6), "b1/r1:1 b1/r2:3 b2/r2:2");
    assert_string_equal(kplace(t, pref_block, 6), "b1/r1:1 b1/r2:3 b2/r2:2");
    assert_string_equal(kplace(t, pref_block, 10),
                        "topology \"default\" allows to fit only 7 out of 10 pod(s)");
    assert_string_equal(kplace(t, req_rack, 4),
                        "topology \"default\" allows to fit only 3 out of 4 pod(s)");
    cu_tas_free(t);

    /* "block required for podset; host required for slices; prioritize
     * more free slice capacity first and then tight fit" */
    cu_tas_request slices = {
        .mode = CU_TAS_REQUIRED, .level = BLOCK, .slice_level = CU_TAS_HOSTNAME, .slice_size = 2
    };
    t = topo3();
    knode(t, "b1", "r1", "x3", 6, 10);
    knode(t, "b1", "r1", "x5", 5, 10);
    knode(t, "b1", "r1", "x1", 4, 10);
    knode(t, "b1", "r1", "x6", 2, 10);
    assert_string_equal(kplace(t, slices, 12), "x1:4 x3:6 x6:2");
    cu_tas_free(t);
    /* "... select domains with tight fit" */
    t = topo3();
    knode(t, "b1", "r1", "x3", 3, 10);
    knode(t, "b1", "r1", "x5", 2, 10);
    knode(t, "b1", "r1", "x1", 2, 10);
    assert_string_equal(kplace(t, slices, 4), "x1:2 x5:2");
    cu_tas_free(t);
}

/* A LeaderWorkerSet's leader (1 pod, 1 GPU) and workers (3 pods, 2 GPUs
 * each) in one group, both required in a rack. */
#define GROUP(q, one, two) \
    PER_POD(one, 1); \
    PER_POD(two, 2); \
    cu_tas_request q[2] = { \
        { .count = 1, .per_pod = &one, .mode = CU_TAS_REQUIRED, .level = RACK, .group = "g" }, \
        { .count = 3, .per_pod = &two, .mode = CU_TAS_REQUIRED, .level = RACK, .group = "g" }, \
    }

/* Rack r1: gpu-a with 6 GPUs free; rack r2: gpu-b and gpu-c, 8 GPUs
 * each, used_b and used_c of them used. */
static cu_tas *two_racks(int32_t used_b, int32_t used_c)
{
    cu_tas *t = topo3();
    node(t, "gpu-a", "b1", "r1", 8);
    bind(t, "gpu-a", 1, 2, 1);
    node(t, "gpu-b", "b1", "r2", 8);
    node(t, "gpu-c", "b1", "r2", 8);
    bind(t, "gpu-b", 1, used_b, 1);
    bind(t, "gpu-c", 1, used_c, 1);
    return t;
}

static void test_group_joint(void **state)
{
    (void)state;
    /* r1 has room for the workers alone (6 GPUs), r2 for both (4 + 4):
     * without the group the two are split: the leader first takes the
     * tighter r1, the workers r2; the workers first take r1 (BestFit),
     * the leader r2 */
    cu_tas *t = two_racks(4, 4);
    GROUP(q, one, two);
    cu_tas_result r[2];
    q[0].group = q[1].group = NULL;
    assert_int_equal(cu_tas_place(t, q, 2, NULL, r), CU_OK);
    assert_string_equal(show(&r[0]), "gpu-a:1");
    assert_string_equal(show(&r[1]), "gpu-b:2 gpu-c:1");
    for (int i = 0; i < 2; i++)
        cu_tas_result_free(&r[i]);
    cu_tas_request wl[2] = { q[1], q[0] };
    assert_int_equal(cu_tas_place(t, wl, 2, NULL, r), CU_OK);
    assert_string_equal(show(&r[0]), "gpu-a:3");
    assert_string_equal(show(&r[1]), "gpu-b:1");
    for (int i = 0; i < 2; i++)
        cu_tas_result_free(&r[i]);
    /* the leader first: still placed with the workers, not before them */
    q[0].group = q[1].group = "g";
    assert_int_equal(cu_tas_place(t, q, 2, NULL, r), CU_OK);
    assert_string_equal(show(&r[0]), "gpu-b:1");
    assert_string_equal(show(&r[1]), "gpu-b:1 gpu-c:2");
    for (int i = 0; i < 2; i++)
        cu_tas_result_free(&r[i]);
    /* the same with the workers first; a pod set after the group counts
     * both of its members (r2 keeps 1 GPU, r1 its 6) */
    PER_POD(six, 6);
    cu_tas_request q2[3] = {
        q[1], q[0], { .count = 1, .per_pod = &six, .mode = CU_TAS_REQUIRED, .level = RACK }
    };
    cu_tas_result r3[3];
    assert_int_equal(cu_tas_place(t, q2, 3, NULL, r3), CU_OK);
    assert_string_equal(show(&r3[0]), "gpu-b:1 gpu-c:2");
    assert_string_equal(show(&r3[1]), "gpu-b:1");
    assert_string_equal(show(&r3[2]), "gpu-a:1");
    for (int i = 0; i < 3; i++)
        cu_tas_result_free(&r3[i]);
    /* a group of three is no group: each placed on its own, as above */
    cu_tas_request q3[3] = { q[1], q[0], q[0] };
    assert_int_equal(cu_tas_place(t, q3, 3, NULL, r3), CU_OK);
    assert_string_equal(show(&r3[0]), "gpu-a:3");
    assert_string_equal(show(&r3[1]), "gpu-b:1");
    for (int i = 0; i < 3; i++)
        cu_tas_result_free(&r3[i]);
    cu_tas_free(t);
}

static void test_group_split_refused(void **state)
{
    (void)state;
    /* r1 takes the 3 workers (6 GPUs) but not the leader besides, r2 only
     * the leader (1 GPU on gpu-b, gpu-c full): apart they fit, together
     * they do not */
    cu_tas *t = two_racks(7, 8);
    GROUP(q, one, two);
    cu_tas_result r[2];
    q[0].group = q[1].group = NULL;
    assert_int_equal(cu_tas_place(t, q, 2, NULL, r), CU_OK);
    for (int i = 0; i < 2; i++)
        cu_tas_result_free(&r[i]);
    q[0].group = q[1].group = "g";
    assert_int_equal(cu_tas_place(t, q, 2, NULL, r), CU_EINVAL);
    for (int i = 0; i < 2; i++) {
        assert_false(r[i].ok);
        assert_string_equal(r[i].reason, "topology \"default\" allows to fit only 3 out of 3 "
                                         "pod(s). Total nodes: 3; excluded: resource "
                                         "\"nvidia.com/gpu\": 2");
        assert_int_equal(r[i].diag.requested, 3);
        cu_buf b;
        cu_buf_init(&b, 4096);
        assert_int_equal(cu_tas_diag_text(&r[i].diag, &b), CU_OK);
        assert_string_equal(cu_buf_str(&b),
                            "at most 2 of the group's 3 worker pods fit in one " RACK
                            " beside its leader (3 without it, 3 on all nodes)");
        cu_buf_free(&b);
        cu_tas_result_free(&r[i]);
    }
    /* preferred: one block then, the leader where it costs no worker */
    q[0].mode = q[1].mode = CU_TAS_PREFERRED;
    assert_int_equal(cu_tas_place(t, q, 2, NULL, r), CU_OK);
    assert_string_equal(show(&r[0]), "gpu-b:1");
    assert_string_equal(show(&r[1]), "gpu-a:3");
    for (int i = 0; i < 2; i++)
        cu_tas_result_free(&r[i]);
    cu_tas_free(t);
}

/* Random flavors and pod sets against a model (test_topo_check.h). */
static void test_random_against_model(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 3000; seed++) {
        tc_src s = { .seed = seed * 0x9E3779B97F4A7C15ull };
        int line = tc_check(&s);
        if (line)
            fail_msg("seed %llu: test_topo_check.h:%d", (unsigned long long)seed, line);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_issue_example),
        cmocka_unit_test(test_required_preferred_unconstrained),
        cmocka_unit_test(test_bestfit_packs),
        cmocka_unit_test(test_racks_pack),
        cmocka_unit_test(test_slices),
        cmocka_unit_test(test_filters),
        cmocka_unit_test(test_usage_updates),
        cmocka_unit_test(test_pod_sets_share),
        cmocka_unit_test(test_rack_leaves),
        cmocka_unit_test(test_kueue_cases),
        cmocka_unit_test(test_group_joint),
        cmocka_unit_test(test_group_split_refused),
        cmocka_unit_test(test_random_against_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
