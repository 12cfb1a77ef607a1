/*
 * test_kubesim.c - the simulated cluster: the scheduler model on its own
 * (filters, scores, kube-scheduler's FailedScheduling wording) and the
 * controllers (nodes, Job controller, scheduler, kubelet) on a real store.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cu_kubesim.h"
#include "ks_int.h"

/* ================= builders ================= */

static json_object *J(const char *s)
{
    json_object *o = json_tokener_parse(s);
    assert_non_null(o);
    return o;
}

/* "a=1,b=2" -> {"a":"1","b":"2"} (sep between pairs) */
static json_object *kv(const char *spec, char sep)
{
    json_object *m = json_object_new_object();
    char buf[1024], *p, *save = NULL, seps[2] = { sep, 0 };
    if (!spec || !*spec)
        return m;
    snprintf(buf, sizeof buf, "%s", spec);
    for (p = strtok_r(buf, seps, &save); p; p = strtok_r(NULL, seps, &save)) {
        char *eq = strchr(p, '=');
        if (!eq)
            continue;
        *eq = '\0';
        json_object_object_add(m, p, json_object_new_string(eq + 1));
    }
    return m;
}

/* taints "key=value:Effect;key:Effect" */
static json_object *mk_node(const char *name, const char *alloc, const char *labels,
                            const char *taints, int unschedulable)
{
    json_object *n = json_object_new_object(), *md = json_object_new_object();
    json_object *spec = json_object_new_object(), *st = json_object_new_object();
    json_object_object_add(n, "apiVersion", json_object_new_string("v1"));
    json_object_object_add(n, "kind", json_object_new_string("Node"));
    json_object_object_add(md, "name", json_object_new_string(name));
    json_object_object_add(md, "labels", kv(labels, ','));
    json_object_object_add(n, "metadata", md);
    if (taints && *taints) {
        json_object *ts = json_object_new_array();
        char buf[512], *p, *save = NULL;
        snprintf(buf, sizeof buf, "%s", taints);
        for (p = strtok_r(buf, ";", &save); p; p = strtok_r(NULL, ";", &save)) {
            json_object *t = json_object_new_object();
            char *colon = strrchr(p, ':'), *eq;
            assert_non_null(colon);
            *colon = '\0';
            json_object_object_add(t, "effect", json_object_new_string(colon + 1));
            eq = strchr(p, '=');
            if (eq) {
                *eq = '\0';
                json_object_object_add(t, "value", json_object_new_string(eq + 1));
            }
            json_object_object_add(t, "key", json_object_new_string(p));
            json_object_array_add(ts, t);
        }
        json_object_object_add(spec, "taints", ts);
    }
    if (unschedulable)
        json_object_object_add(spec, "unschedulable", json_object_new_boolean(1));
    json_object_object_add(n, "spec", spec);
    json_object_object_add(st, "allocatable", kv(alloc, ','));
    json_object_object_add(st, "capacity", kv(alloc, ','));
    json_object_object_add(n, "status", st);
    return n;
}

/* A pod with one container requesting req ("cpu=1,nvidia.com/gpu=4");
 * extra: a JSON object whose keys are set in spec. */
static json_object *mk_pod(const char *name, const char *req, const char *extra)
{
    char buf[256];
    snprintf(buf, sizeof buf, "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\"}}", name);
    json_object *p = J(buf), *spec = json_object_new_object(), *cs = json_object_new_array();
    json_object *c = json_object_new_object(), *res = json_object_new_object();
    json_object_object_add(c, "name", json_object_new_string("main"));
    json_object_object_add(c, "image", json_object_new_string("busybox"));
    json_object_object_add(res, "requests", kv(req, ','));
    json_object_object_add(c, "resources", res);
    json_object_array_add(cs, c);
    json_object_object_add(spec, "containers", cs);
    if (extra) {
        json_object *e = J(extra);
        json_object_object_foreach (e, k, v)
            json_object_object_add(spec, k, json_object_get(v));
        json_object_put(e);
    }
    json_object_object_add(p, "spec", spec);
    return p;
}

static json_object *on(json_object *pod, const char *node)
{
    json_object *spec;
    json_object_object_get_ex(pod, "spec", &spec);
    json_object_object_add(spec, "nodeName", json_object_new_string(node));
    return pod;
}

typedef struct world {
    json_object *nodes[16];
    size_t nn;
    json_object *bound[32];
    size_t nb;
    char msg[1100];
} world;

static void add_node(world *w, json_object *n) { w->nodes[w->nn++] = n; }
static void add_bound(world *w, json_object *p) { w->bound[w->nb++] = p; }

/* Picks for pod (taken); returns the chosen node name or NULL (msg set). */
static const char *pick(world *w, json_object *pod, int most)
{
    int i = cu_sched_pick(w->nodes, w->nn, w->bound, w->nb, pod, most, w->msg, sizeof w->msg);
    json_object_put(pod);
    if (i < 0)
        return NULL;
    json_object *md, *name;
    json_object_object_get_ex(w->nodes[i], "metadata", &md);
    json_object_object_get_ex(md, "name", &name);
    return json_object_get_string(name);
}

static void world_free(world *w)
{
    for (size_t i = 0; i < w->nn; i++)
        json_object_put(w->nodes[i]);
    for (size_t i = 0; i < w->nb; i++)
        json_object_put(w->bound[i]);
    memset(w, 0, sizeof(*w));
}

/* ================= the scheduler model ================= */

/* Three GPU nodes with 2, 2 and 4 GPUs free: a 4-GPU pod fits only on the
 * third, even though LeastAllocated would prefer emptier nodes. */
static void test_fragmentation(void **state)
{
    (void)state;
    world w = { 0 };
    add_node(&w, mk_node("g1", "cpu=32,memory=256Gi,nvidia.com/gpu=4,pods=110", "", "", 0));
    add_node(&w, mk_node("g2", "cpu=32,memory=256Gi,nvidia.com/gpu=4,pods=110", "", "", 0));
    add_node(&w, mk_node("g3", "cpu=32,memory=256Gi,nvidia.com/gpu=8,pods=110", "", "", 0));
    add_bound(&w, on(mk_pod("a", "nvidia.com/gpu=2", NULL), "g1"));
    add_bound(&w, on(mk_pod("b", "nvidia.com/gpu=2", NULL), "g2"));
    add_bound(&w, on(mk_pod("c", "nvidia.com/gpu=4", NULL), "g3"));
    assert_string_equal(pick(&w, mk_pod("p", "nvidia.com/gpu=4", NULL), 0), "g3");
    /* a 2-GPU pod fits anywhere; the GPU count is not scored, cpu/memory
     * tie, so the first name wins */
    assert_string_equal(pick(&w, mk_pod("p", "nvidia.com/gpu=2", NULL), 0), "g1");
    /* 5 GPUs fit nowhere */
    assert_null(pick(&w, mk_pod("p", "nvidia.com/gpu=5", NULL), 0));
    assert_string_equal(w.msg,
                        "0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 "
                        "nodes are available: 3 No preemption victims found for incoming pod.");
    world_free(&w);
}

/* The example: the reasons are counted per node and the
 * "<count> <reason>" strings sorted as strings. */
static void test_message_mixed_reasons(void **state)
{
    (void)state;
    world w = { 0 };
    add_node(&w, mk_node("a", "cpu=8,memory=64Gi,nvidia.com/gpu=1,pods=110", "pool=gpu", "", 0));
    add_node(&w, mk_node("b", "cpu=8,memory=64Gi,nvidia.com/gpu=2,pods=110", "pool=gpu", "", 0));
    add_node(&w, mk_node("c", "cpu=8,memory=64Gi,nvidia.com/gpu=8,pods=110", "pool=gpu",
                         "maintenance:NoSchedule", 0));
    add_node(&w, mk_node("d", "cpu=8,memory=64Gi,nvidia.com/gpu=8,pods=110", "pool=cpu", "", 0));
    assert_null(
        pick(&w, mk_pod("p", "nvidia.com/gpu=4", "{\"nodeSelector\":{\"pool\":\"gpu\"}}"), 0));
    assert_string_equal(
        w.msg,
        "0/4 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) "
        "had untolerated taint {maintenance: }, 2 Insufficient nvidia.com/gpu. preemption: 0/4 "
        "nodes are available: 2 No preemption victims found for incoming pod, 2 Preemption is "
        "not helpful for scheduling.");
    world_free(&w);
}

/* Go's sort.Strings puts "10 ..." before "2 ...". */
static void test_message_sort_is_textual(void **state)
{
    (void)state;
    world w = { 0 };
    char name[16];
    for (int i = 0; i < 10; i++) {
        snprintf(name, sizeof name, "n%02d", i);
        add_node(&w, mk_node(name, "cpu=1,memory=1Gi,pods=110", "", "", 0));
    }
    add_node(&w, mk_node("t1", "cpu=64,memory=1Gi,pods=110", "", "a=b:NoExecute", 0));
    add_node(&w, mk_node("t2", "cpu=64,memory=1Gi,pods=110", "", "a=b:NoSchedule", 0));
    assert_null(pick(&w, mk_pod("p", "cpu=2", NULL), 0));
    assert_string_equal(w.msg,
                        "0/12 nodes are available: 10 Insufficient cpu, 2 node(s) had untolerated "
                        "taint {a: b}. preemption: 0/12 nodes are available: 10 No preemption "
                        "victims found for incoming pod, 2 Preemption is not helpful for "
                        "scheduling.");
    world_free(&w);
}

/* One node, one pod: does the pod fit, and if not, which reason. */
static void test_filter_table(void **state)
{
    (void)state;
    static const struct {
        const char *name, *labels, *taints;
        int unschedulable;
        const char *req, *extra;
        const char *reason; /* NULL: fits */
    } cases[] = {
        { "plain", "", "", 0, "cpu=1", NULL, NULL },
        { "nodeSelector match", "zone=a,gpu=h100", "", 0, "cpu=1",
          "{\"nodeSelector\":{\"zone\":\"a\"}}", NULL },
        { "nodeSelector value differs", "zone=b", "", 0, "cpu=1",
          "{\"nodeSelector\":{\"zone\":\"a\"}}",
          "node(s) didn't match Pod's node affinity/selector" },
        { "nodeSelector label missing", "", "", 0, "cpu=1", "{\"nodeSelector\":{\"zone\":\"a\"}}",
          "node(s) didn't match Pod's node affinity/selector" },
#define AFF(terms) \
    "{\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":" terms \
    "}}}}"
        { "In", "zone=a", "", 0, "cpu=1",
          AFF("[{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"In\",\"values\":[\"b\",\"a\"]}]}]"),
          NULL },
        { "In no", "zone=c", "", 0, "cpu=1",
          AFF("[{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"In\",\"values\":[\"b\",\"a\"]}]}]"),
          "node(s) didn't match Pod's node affinity/selector" },
        { "NotIn absent label", "", "", 0, "cpu=1",
          AFF("[{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"NotIn\",\"values\":[\"a\"]}]}]"),
          NULL },
        { "NotIn no", "zone=a", "", 0, "cpu=1",
          AFF("[{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"NotIn\",\"values\":[\"a\"]}]}]"),
          "node(s) didn't match Pod's node affinity/selector" },
        { "Exists", "gpu=", "", 0, "cpu=1",
          AFF("[{\"matchExpressions\":[{\"key\":\"gpu\",\"operator\":\"Exists\"}]}]"), NULL },
        { "DoesNotExist no", "gpu=x", "", 0, "cpu=1",
          AFF("[{\"matchExpressions\":[{\"key\":\"gpu\",\"operator\":\"DoesNotExist\"}]}]"),
          "node(s) didn't match Pod's node affinity/selector" },
        { "Gt", "gen=5", "", 0, "cpu=1",
          AFF("[{\"matchExpressions\":[{\"key\":\"gen\",\"operator\":\"Gt\",\"values\":[\"4\"]}]}]"),
          NULL },
        { "Gt equal", "gen=4", "", 0, "cpu=1",
          AFF("[{\"matchExpressions\":[{\"key\":\"gen\",\"operator\":\"Gt\",\"values\":[\"4\"]}]}]"),
          "node(s) didn't match Pod's node affinity/selector" },
        { "Gt not a number", "gen=v5", "", 0, "cpu=1",
          AFF("[{\"matchExpressions\":[{\"key\":\"gen\",\"operator\":\"Gt\",\"values\":[\"4\"]}]}]"),
          "node(s) didn't match Pod's node affinity/selector" },
        { "Lt", "gen=3", "", 0, "cpu=1",
          AFF("[{\"matchExpressions\":[{\"key\":\"gen\",\"operator\":\"Lt\",\"values\":[\"4\"]}]}]"),
          NULL },
        { "terms are ORed", "zone=b", "", 0, "cpu=1",
          AFF("[{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"In\",\"values\":[\"a\"]}]},"
              "{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"In\",\"values\":[\"b\"]}]}]"),
          NULL },
        { "expressions are ANDed", "zone=a", "", 0, "cpu=1",
          AFF("[{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"In\",\"values\":[\"a\"]},"
              "{\"key\":\"gpu\",\"operator\":\"Exists\"}]}]"),
          "node(s) didn't match Pod's node affinity/selector" },
        { "empty term matches nothing", "zone=a", "", 0, "cpu=1", AFF("[{}]"),
          "node(s) didn't match Pod's node affinity/selector" },
        { "matchFields metadata.name", "", "", 0, "cpu=1",
          AFF("[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"n\"]}]}]"),
          NULL },
        { "matchFields other name", "", "", 0, "cpu=1",
          AFF("[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"m\"]}]}]"),
          "node(s) didn't match Pod's node affinity/selector" },
        { "NoSchedule untolerated", "", "k=v:NoSchedule", 0, "cpu=1", NULL,
          "node(s) had untolerated taint {k: v}" },
        { "NoExecute untolerated", "", "k:NoExecute", 0, "cpu=1", NULL,
          "node(s) had untolerated taint {k: }" },
        { "PreferNoSchedule ignored", "", "k=v:PreferNoSchedule", 0, "cpu=1", NULL, NULL },
        { "tolerated Equal", "", "k=v:NoSchedule", 0, "cpu=1",
          "{\"tolerations\":[{\"key\":\"k\",\"operator\":\"Equal\",\"value\":\"v\",\"effect\":\"NoSchedule\"}]}",
          NULL },
        { "Equal with another value", "", "k=v:NoSchedule", 0, "cpu=1",
          "{\"tolerations\":[{\"key\":\"k\",\"operator\":\"Equal\",\"value\":\"w\"}]}",
          "node(s) had untolerated taint {k: v}" },
        { "Exists any value, any effect", "", "k=v:NoExecute", 0, "cpu=1",
          "{\"tolerations\":[{\"key\":\"k\",\"operator\":\"Exists\"}]}", NULL },
        { "empty key Exists tolerates all", "", "k=v:NoSchedule;x:NoExecute", 0, "cpu=1",
          "{\"tolerations\":[{\"operator\":\"Exists\"}]}", NULL },
        { "other effect", "", "k=v:NoExecute", 0, "cpu=1",
          "{\"tolerations\":[{\"key\":\"k\",\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}]}",
          "node(s) had untolerated taint {k: v}" },
        { "second taint untolerated", "", "a:NoSchedule;b=1:NoSchedule", 0, "cpu=1",
          "{\"tolerations\":[{\"key\":\"a\",\"operator\":\"Exists\"}]}",
          "node(s) had untolerated taint {b: 1}" },
        { "unschedulable", "", "", 1, "cpu=1", NULL, "node(s) were unschedulable" },
        { "unschedulable tolerated", "", "", 1, "cpu=1",
          "{\"tolerations\":[{\"key\":\"node.kubernetes.io/unschedulable\",\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}]}",
          NULL },
        /* filter order: NodeUnschedulable, TaintToleration, NodeAffinity */
        { "taint before selector", "", "k:NoSchedule", 0, "cpu=1",
          "{\"nodeSelector\":{\"z\":\"a\"}}", "node(s) had untolerated taint {k: }" },
        { "unschedulable before taint", "", "k:NoSchedule", 1, "cpu=1", NULL,
          "node(s) were unschedulable" },
        { "too much cpu", "", "", 0, "cpu=9", NULL, "Insufficient cpu" },
        { "exactly all cpu", "", "", 0, "cpu=8", NULL, NULL },
        { "milli cpu over", "", "", 0, "cpu=8001m", NULL, "Insufficient cpu" },
        { "memory binary", "", "", 0, "memory=32Gi", NULL, NULL },
        { "memory over", "", "", 0, "memory=32769Mi", NULL, "Insufficient memory" },
        { "unknown extended resource", "", "", 0, "example.com/fpga=1", NULL,
          "Insufficient example.com/fpga" },
        { "zero extended resource ignored", "", "", 0, "example.com/fpga=0", NULL, NULL },
        { "init container max", "", "", 0, "cpu=1",
          "{\"initContainers\":[{\"name\":\"i\",\"resources\":{\"requests\":{\"cpu\":\"9\"}}}]}",
          "Insufficient cpu" },
        { "init container below sum", "", "", 0, "cpu=6",
          "{\"initContainers\":[{\"name\":\"i\",\"resources\":{\"requests\":{\"cpu\":\"7\"}}}]}",
          NULL },
        { "sidecar adds to the sum", "", "", 0, "cpu=6",
          "{\"initContainers\":[{\"name\":\"s\",\"restartPolicy\":\"Always\",\"resources\":{\"requests\":{\"cpu\":\"3\"}}}]}",
          "Insufficient cpu" },
        { "overhead counts", "", "", 0, "cpu=7500m", "{\"overhead\":{\"cpu\":\"600m\"}}",
          "Insufficient cpu" },
        { "limits stand for missing requests", "", "", 0, "cpu=1",
          "{\"containers\":[{\"name\":\"m\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":1}}}]}",
          "Insufficient nvidia.com/gpu" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        world w = { 0 };
        char want[600];
        add_node(&w, mk_node("n", "cpu=8,memory=32Gi,pods=110", cases[i].labels, cases[i].taints,
                             cases[i].unschedulable));
        const char *got = pick(&w, mk_pod("p", cases[i].req, cases[i].extra), 0);
        if (!cases[i].reason) {
            if (!got)
                fail_msg("case %s: did not fit: %s", cases[i].name, w.msg);
            assert_string_equal(got, "n");
        } else {
            int resources = strncmp(cases[i].reason, "Insufficient", 12) == 0;
            snprintf(want, sizeof want,
                     "0/1 nodes are available: 1 %s. preemption: 0/1 nodes are available: 1 %s.",
                     cases[i].reason,
                     resources ? "No preemption victims found for incoming pod"
                               : "Preemption is not helpful for scheduling");
            if (got)
                fail_msg("case %s: fit on %s", cases[i].name, got);
            if (strcmp(w.msg, want) != 0)
                fail_msg("case %s:\n got %s\nwant %s", cases[i].name, w.msg, want);
        }
        world_free(&w);
    }
}

/* Requests of bound pods: counted on their node only, terminal ones not;
 * the pod count; several reasons on one node are each counted. */
static void test_bound_pods_usage(void **state)
{
    (void)state;
    world w = { 0 };
    add_node(&w, mk_node("n1", "cpu=4,memory=8Gi,pods=2", "", "", 0));
    add_node(&w, mk_node("n2", "cpu=4,memory=8Gi,pods=110", "", "", 0));
    add_bound(&w, on(mk_pod("x", "cpu=3", NULL), "n1"));
    json_object *done = on(mk_pod("y", "cpu=4", NULL), "n2");
    json_object_object_add(done, "status", J("{\"phase\":\"Succeeded\"}"));
    add_bound(&w, done);
    add_bound(&w, on(mk_pod("z", "cpu=4", NULL), "elsewhere"));
    /* n2's only pod finished: it is free */
    assert_string_equal(pick(&w, mk_pod("p", "cpu=2", NULL), 0), "n2");
    assert_string_equal(pick(&w, mk_pod("p", "cpu=1", NULL), 1), "n1");
    /* n1 holds 1 pod of 2: one more fits; with a second pod bound it is full */
    add_bound(&w, on(mk_pod("x2", "cpu=0", NULL), "n1"));
    assert_null(pick(&w, mk_pod("p", "cpu=5,memory=9Gi", NULL), 0));
    assert_string_equal(w.msg, "0/2 nodes are available: 1 Too many pods, 2 Insufficient cpu, 2 "
                               "Insufficient memory. preemption: 0/2 nodes are available: 2 No "
                               "preemption victims found for incoming pod.");
    world_free(&w);
}

/* LeastAllocated spreads, MostAllocated packs; both score cpu and memory
 * with kube-scheduler's non-zero defaults, and ties go to the first name. */
static void test_scoring(void **state)
{
    (void)state;
    world w = { 0 };
    add_node(&w, mk_node("n1", "cpu=8,memory=32Gi,pods=110", "", "", 0));
    add_node(&w, mk_node("n2", "cpu=8,memory=32Gi,pods=110", "", "", 0));
    add_bound(&w, on(mk_pod("x", "cpu=4", NULL), "n1"));
    assert_string_equal(pick(&w, mk_pod("p", "cpu=1", NULL), 0), "n2");
    assert_string_equal(pick(&w, mk_pod("p", "cpu=1", NULL), 1), "n1");
    world_free(&w);

    /* memory alone decides when cpu is equal */
    add_node(&w, mk_node("a", "cpu=8,memory=32Gi,pods=110", "", "", 0));
    add_node(&w, mk_node("b", "cpu=8,memory=32Gi,pods=110", "", "", 0));
    add_bound(&w, on(mk_pod("x", "cpu=1,memory=16Gi", NULL), "a"));
    add_bound(&w, on(mk_pod("y", "cpu=1,memory=1Gi", NULL), "b"));
    assert_string_equal(pick(&w, mk_pod("p", "cpu=1,memory=1Gi", NULL), 0), "b");
    assert_string_equal(pick(&w, mk_pod("p", "cpu=1,memory=1Gi", NULL), 1), "a");
    world_free(&w);

    /* equal scores: the first name, whatever the order given */
    add_node(&w, mk_node("zeta", "cpu=8,memory=32Gi,pods=110", "", "", 0));
    add_node(&w, mk_node("alpha", "cpu=8,memory=32Gi,pods=110", "", "", 0));
    add_node(&w, mk_node("mid", "cpu=8,memory=32Gi,pods=110", "", "", 0));
    assert_string_equal(pick(&w, mk_pod("p", "cpu=1", NULL), 0), "alpha");
    assert_string_equal(pick(&w, mk_pod("p", "cpu=1", NULL), 1), "alpha");
    world_free(&w);

    /* a pod without requests still counts 100m/200Mi when scoring: n1 holds
     * ten of them, so an empty n2 is preferred */
    add_node(&w, mk_node("n1", "cpu=2,memory=4Gi,pods=110", "", "", 0));
    add_node(&w, mk_node("n2", "cpu=2,memory=4Gi,pods=110", "", "", 0));
    for (int i = 0; i < 10; i++)
        add_bound(&w, on(mk_pod("e", "", NULL), "n1"));
    assert_string_equal(pick(&w, mk_pod("p", "", NULL), 0), "n2");
    assert_string_equal(pick(&w, mk_pod("p", "", NULL), 1), "n1");
    world_free(&w);
    /* the same on cpu alone (nodes without memory are scored on cpu only) */
    add_node(&w, mk_node("n1", "cpu=2,pods=110", "", "", 0));
    add_node(&w, mk_node("n2", "cpu=2,pods=110", "", "", 0));
    for (int i = 0; i < 10; i++)
        add_bound(&w, on(mk_pod("e", "", NULL), "n1"));
    assert_string_equal(pick(&w, mk_pod("p", "", NULL), 0), "n2");
    world_free(&w);
}

static void test_preemption_part(void **state)
{
    (void)state;
    world w = { 0 };
    add_node(&w, mk_node("n", "cpu=4,memory=8Gi,pods=110", "", "", 0));
    add_bound(&w, on(mk_pod("low", "cpu=2", "{\"priority\":-5}"), "n"));
    /* evicting the lower-priority pod would not make room for 8 cpu */
    assert_null(pick(&w, mk_pod("p", "cpu=8", NULL), 0));
    assert_string_equal(w.msg,
                        "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are "
                        "available: 1 Insufficient cpu.");
    assert_null(pick(&w, mk_pod("p", "cpu=8", "{\"preemptionPolicy\":\"Never\"}"), 0));
    assert_string_equal(w.msg,
                        "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible "
                        "due to preemptionPolicy=Never.");
    world_free(&w);
}

static void test_pick_errors(void **state)
{
    (void)state;
    world w = { 0 };
    assert_null(pick(&w, mk_pod("p", "cpu=1", NULL), 0));
    assert_string_equal(w.msg, "no nodes available to schedule pods");
    add_node(&w, mk_node("n", "cpu=8,memory=32Gi,pods=110", "", "", 0));
    assert_null(pick(&w, mk_pod("p", "cpu=lots", NULL), 0));
    assert_string_equal(w.msg, "pod default/p: spec.containers[0].resources.requests[cpu]: invalid "
                               "quantity \"lots\"");
    world_free(&w);
}

static void test_parse_duration(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        cu_err rc;
        int64_t ms;
    } cases[] = {
        { "30s", CU_OK, 30000 },  { "1m30s", CU_OK, 90000 }, { "500ms", CU_OK, 500 },
        { "1h", CU_OK, 3600000 }, { "1.5s", CU_OK, 1500 },   { "2h45m", CU_OK, 9900000 },
        { "0", CU_OK, 0 },        { "+5s", CU_OK, 5000 },    { "1500us", CU_OK, 1 },
        { "0.5m", CU_OK, 30000 }, { "", CU_EINVAL, 0 },      { "10", CU_EINVAL, 0 },
        { "-1s", CU_EINVAL, 0 },  { "1x", CU_EINVAL, 0 },    { "s", CU_EINVAL, 0 },
        { "1s2", CU_EINVAL, 0 },  { ".s", CU_EINVAL, 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t ms = -1;
        cu_err rc = cu_kubesim_parse_duration(cases[i].in, &ms);
        if (rc != cases[i].rc)
            fail_msg("%s: rc %d want %d", cases[i].in, rc, cases[i].rc);
        if (rc == CU_OK && ms != cases[i].ms)
            fail_msg("%s: %lld ms want %lld", cases[i].in, (long long)ms, (long long)cases[i].ms);
    }
}

/* ================= the controllers on a real store ================= */

typedef struct fx {
    int64_t now;
    cu_clock clock;
    cu_store *s;
    const cu_rtype *pods, *nodes, *jobs, *events;
} fx;

static int fx_setup(void **state)
{
    fx *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    f->now = 1767225600000LL; /* 2026-01-01T00:00:00Z */
    f->clock.now_ms = cu_clock_fake_now;
    f->clock.ud = &f->now;
    f->s = cu_store_new(0, &f->clock);
    assert_non_null(f->s);
    f->pods = cu_store_rtype(f->s, "", "v1", "pods");
    f->nodes = cu_store_rtype(f->s, "", "v1", "nodes");
    f->jobs = cu_store_rtype(f->s, "batch", "v1", "jobs");
    f->events = cu_store_rtype(f->s, "", "v1", "events");
    assert_non_null(f->pods);
    assert_non_null(f->jobs);
    *state = f;
    return 0;
}

static int fx_teardown(void **state)
{
    fx *f = *state;
    cu_store_free(f->s);
    free(f);
    return 0;
}

static json_object *path(json_object *o, const char *dotted)
{
    char key[128];
    const char *p = dotted;
    while (o && *p) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        json_object *v = NULL;
        memcpy(key, p, n);
        key[n] = '\0';
        if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v))
            return NULL;
        o = v;
        p = dot ? dot + 1 : p + n;
    }
    return o;
}

static const char *pstr(json_object *o, const char *dotted)
{
    json_object *v = path(o, dotted);
    return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static int64_t pint(json_object *o, const char *dotted, int64_t def)
{
    json_object *v = path(o, dotted);
    return v ? json_object_get_int64(v) : def;
}

static json_object *cond(json_object *o, const char *type)
{
    json_object *cs = path(o, "status.conditions");
    for (size_t i = 0; cs && i < json_object_array_length(cs); i++) {
        json_object *c = json_object_array_get_idx(cs, i);
        if (strcmp(pstr(c, "type") ? pstr(c, "type") : "", type) == 0)
            return c;
    }
    return NULL;
}

static json_object *list(fx *f, const cu_rtype *rt, const char *ns, const char *lsel)
{
    cu_list_opts o;
    cu_status st;
    json_object *out = NULL;
    memset(&o, 0, sizeof o);
    o.label_selector = lsel;
    assert_int_equal(cu_store_list(f->s, rt, ns, &o, &out, &st), CU_OK);
    return out;
}

static size_t nitems(json_object *l) { return json_object_array_length(path(l, "items")); }
static json_object *item(json_object *l, size_t i)
{
    return json_object_array_get_idx(path(l, "items"), i);
}

static json_object *get(fx *f, const cu_rtype *rt, const char *ns, const char *name)
{
    cu_status st;
    json_object *out = NULL;
    if (cu_store_get(f->s, rt, ns, name, &out, &st) != CU_OK)
        return NULL;
    return out;
}

static void create(fx *f, const cu_rtype *rt, const char *ns, const char *js)
{
    cu_status st;
    json_object *out = NULL;
    cu_err e = cu_store_create(f->s, rt, ns, J(js), &out, &st);
    if (e != CU_OK)
        fail_msg("create: %s", st.message);
    json_object_put(out);
}

static void step(fx *f)
{
    int64_t due = INT64_MAX;
    cu_kubesim_step(f->s, 0, f->now, &due);
    /* a pass over what it just wrote has nothing left to do */
    assert_int_equal(cu_kubesim_step(f->s, 0, f->now, &due), 0);
}

static void add_default_nodes(fx *f)
{
    char err[512];
    assert_int_equal(cu_kubesim_add_nodes(f->s, NULL, f->now, err, sizeof err), CU_OK);
}

static void make_job(fx *f, const char *name, int parallelism, int completions, int suspend,
                     const char *limits, const char *runtime, int backoff)
{
    char js[2048], ann[128] = "";
    if (runtime)
        snprintf(ann, sizeof ann, ",\"annotations\":{\"cueue.dev/simulated-runtime\":\"%s\"}",
                 runtime);
    snprintf(js, sizeof js,
             "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"default\"},\"spec\":{\"parallelism\":%d,\"completions\":%d,"
             "\"suspend\":%s,\"backoffLimit\":%d,\"template\":{\"metadata\":{\"labels\":{\"app\":"
             "\"train\"}%s},\"spec\":{\"restartPolicy\":\"Never\",\"nodeSelector\":{"
             "\"nvidia.com/gpu.product\":\"NVIDIA-H100-80GB-HBM3\"},\"containers\":[{\"name\":"
             "\"main\",\"image\":\"trainer:1\",\"resources\":{\"requests\":{\"cpu\":\"8\","
             "\"memory\":\"64Gi\"},\"limits\":{%s}}}]}}}}",
             name, parallelism, completions, suspend ? "true" : "false", backoff, ann, limits);
    create(f, f->jobs, "default", js);
}

static void set_suspend(fx *f, const char *name, int suspend)
{
    cu_status st;
    json_object *j = get(f, f->jobs, "default", name), *out = NULL;
    assert_non_null(j);
    json_object_object_add(path(j, "spec"), "suspend", json_object_new_boolean(suspend));
    assert_int_equal(cu_store_update(f->s, f->jobs, "default", name, NULL, j, &out, &st), CU_OK);
    json_object_put(out);
}

static void test_default_nodes(void **state)
{
    fx *f = *state;
    add_default_nodes(f);
    add_default_nodes(f); /* idempotent */
    json_object *l = list(f, f->nodes, NULL, NULL);
    assert_int_equal(nitems(l), 12);
    json_object_put(l);
    l = list(f, f->nodes, NULL, "nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3");
    assert_int_equal(nitems(l), 4);
    json_object_put(l);
    l = list(f, f->nodes, NULL, "node.kubernetes.io/lifecycle=spot");
    assert_int_equal(nitems(l), 2);
    json_object *taints = path(item(l, 0), "spec.taints");
    assert_int_equal(json_object_array_length(taints), 1);
    assert_string_equal(pstr(json_object_array_get_idx(taints, 0), "key"),
                        "cloud.example.com/spot");
    json_object_put(l);
    json_object *n = get(f, f->nodes, NULL, "gpu-h100-0");
    assert_non_null(n);
    json_object *alloc = path(n, "status.allocatable"), *gpu = NULL;
    assert_true(json_object_object_get_ex(alloc, "nvidia.com/gpu", &gpu));
    assert_string_equal(json_object_get_string(gpu), "8");
    assert_string_equal(pstr(cond(n, "Ready"), "status"), "True");
    json_object_put(n);
}

static void write_file(const char *p, const char *text)
{
    FILE *fp = fopen(p, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

static void test_nodes_file(void **state)
{
    fx *f = *state;
    char p[] = "/tmp/cu_kubesim_nodes_XXXXXX", err[512];
    int fd = mkstemp(p);
    assert_true(fd >= 0);
    close(fd);
    write_file(p, "apiVersion: v1\nkind: Node\nmetadata:\n  name: big\n  labels:\n    pool: x\n"
                  "spec:\n  taints:\n  - key: maintenance\n    effect: NoSchedule\n"
                  "status:\n  capacity:\n    cpu: \"64\"\n    memory: 512Gi\n"
                  "    nvidia.com/gpu: 8\n    pods: \"110\"\n---\n"
                  "apiVersion: v1\nkind: Node\nmetadata:\n  name: small\n"
                  "status:\n  allocatable:\n    cpu: 4\n    memory: 16Gi\n");
    assert_int_equal(cu_kubesim_add_nodes(f->s, p, f->now, err, sizeof err), CU_OK);
    json_object *l = list(f, f->nodes, NULL, NULL);
    assert_int_equal(nitems(l), 2);
    json_object_put(l);
    json_object *n = get(f, f->nodes, NULL, "big");
    assert_non_null(n);
    /* allocatable defaults to capacity; the node is Ready */
    assert_non_null(path(n, "status.allocatable"));
    assert_string_equal(pstr(cond(n, "Ready"), "status"), "True");
    json_object_put(n);

    static const struct {
        const char *text, *want;
    } bad[] = {
        { "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n",
          "document 1: kind: must be Node, got Pod" },
        { "kind: Node\nmetadata:\n  name: x\nstatus:\n  capacity:\n    cpu: lots\n",
          "document 1: Node x: status.capacity[cpu]: invalid quantity \"lots\"" },
        { "kind: Node\nmetadata:\n  name: ok\nstatus:\n  capacity: {cpu: 1}\n---\nkind: Node\nmetadata: {}\n",
          "document 2: Node: metadata.name: required" },
        { "kind: Node\nmetadata:\n  name: x\n", "document 1: Node x: status.capacity: required" },
        { "kind: Node\nmetadata:\n  name: x\nspec:\n  taints:\n  - key: a\n    effect: Never\n"
          "status:\n  capacity: {cpu: 1}\n",
          "Node x: spec.taints[0].effect: must be NoSchedule, PreferNoSchedule or NoExecute" },
        { "kind: Node\nmetadata: [\n", ":" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_file(p, bad[i].text);
        err[0] = '\0';
        assert_int_not_equal(cu_kubesim_add_nodes(f->s, p, f->now, err, sizeof err), CU_OK);
        if (!strstr(err, bad[i].want) || !strstr(err, p))
            fail_msg("case %zu: %s", i, err);
    }
    /* nothing of a bad file was created */
    l = list(f, f->nodes, NULL, NULL);
    assert_int_equal(nitems(l), 2);
    json_object_put(l);
    write_file(p, "");
    unlink(p);
    assert_int_not_equal(
        cu_kubesim_add_nodes(f->s, "/nonexistent/nodes.yaml", f->now, err, sizeof err), CU_OK);
}

static void test_job_runs_to_completion(void **state)
{
    fx *f = *state;
    add_default_nodes(f);
    make_job(f, "train", 2, 4, 0, "\"nvidia.com/gpu\":4", "30s", 6);
    step(f);
    json_object *pods = list(f, f->pods, "default", "batch.kubernetes.io/job-name=train");
    assert_int_equal(nitems(pods), 2);
    json_object *job = get(f, f->jobs, "default", "train");
    for (size_t i = 0; i < 2; i++) {
        json_object *p = item(pods, i), *ref;
        assert_string_equal(pstr(p, "status.phase"), "Running");
        assert_non_null(strstr(pstr(p, "spec.nodeName"), "gpu-h100-"));
        assert_int_equal(strncmp(pstr(p, "metadata.name"), "train-", 6), 0);
        assert_string_equal(pstr(p, "metadata.labels.app"), "train");
        ref = json_object_array_get_idx(path(p, "metadata.ownerReferences"), 0);
        assert_string_equal(pstr(ref, "uid"), pstr(job, "metadata.uid"));
        assert_true(json_object_get_boolean(path(ref, "controller")));
        assert_true(json_object_get_boolean(path(ref, "blockOwnerDeletion")));
        assert_string_equal(pstr(cond(p, "Ready"), "status"), "True");
        assert_string_equal(pstr(cond(p, "PodScheduled"), "status"), "True");
        assert_string_equal(pstr(p, "status.startTime"), "2026-01-01T00:00:00Z");
    }
    /* LeastAllocated spreads the two 4-GPU pods over two nodes */
    assert_string_not_equal(pstr(item(pods, 0), "spec.nodeName"),
                            pstr(item(pods, 1), "spec.nodeName"));
    json_object_put(pods);
    assert_int_equal(pint(job, "status.active", 0), 2);
    assert_int_equal(pint(job, "status.ready", -1), 2);
    assert_string_equal(pstr(job, "status.startTime"), "2026-01-01T00:00:00Z");
    assert_null(cond(job, "Complete"));
    json_object_put(job);

    f->now += 29000;
    step(f);
    job = get(f, f->jobs, "default", "train");
    assert_int_equal(pint(job, "status.succeeded", 0), 0);
    json_object_put(job);

    f->now += 1000; /* 30 s: the first two finish, two more start */
    step(f);
    job = get(f, f->jobs, "default", "train");
    assert_int_equal(pint(job, "status.succeeded", 0), 2);
    assert_int_equal(pint(job, "status.active", 0), 2);
    json_object_put(job);
    pods = list(f, f->pods, "default", "batch.kubernetes.io/job-name=train");
    assert_int_equal(nitems(pods), 4);
    int done = 0;
    for (size_t i = 0; i < 4; i++) {
        json_object *p = item(pods, i);
        if (strcmp(pstr(p, "status.phase"), "Succeeded") == 0) {
            done++;
            assert_null(path(p, "metadata.finalizers")); /* counted: finalizer gone */
            json_object *cs = json_object_array_get_idx(path(p, "status.containerStatuses"), 0);
            assert_int_equal(pint(cs, "state.terminated.exitCode", -1), 0);
        }
    }
    assert_int_equal(done, 2);
    json_object_put(pods);

    f->now += 30000;
    step(f);
    job = get(f, f->jobs, "default", "train");
    assert_int_equal(pint(job, "status.succeeded", 0), 4);
    assert_null(path(job, "status.active"));
    assert_string_equal(pstr(cond(job, "Complete"), "status"), "True");
    assert_string_equal(pstr(cond(job, "SuccessCriteriaMet"), "status"), "True");
    assert_string_equal(pstr(job, "status.completionTime"), "2026-01-01T00:01:00Z");
    json_object_put(job);
    /* nothing more happens, ever */
    f->now += 600000;
    int64_t due = INT64_MAX;
    assert_int_equal(cu_kubesim_step(f->s, 0, f->now, &due), 0);
}

/* Without the runtime annotation, a pod whose containers run a plain
 * `sleep N` (Kueue's samples: sh -c "sleep 60") runs N; anything else
 * runs until deleted. */
static void test_sleep_runtime(void **state)
{
    (void)state;
    static const struct {
        const char *ctrs; /* spec.containers */
        int64_t ms;
    } cases[] = {
        { "[{\"command\":[\"/bin/sh\"],\"args\":[\"-c\",\"sleep 60\"]}]", 60000 },
        { "[{\"command\":[\"sh\",\"-c\",\"  exec sleep 1.5m \"]}]", 90000 },
        { "[{\"command\":[\"bash\",\"-c\",\"sleep 2h\"]}]", 7200000 },
        { "[{\"command\":[\"sleep\"],\"args\":[\"30\"]}]", 30000 },
        { "[{\"args\":[\"/usr/bin/sleep\",\"0.25\"]}]", 250 },
        { "[{\"command\":[\"sleep\",\"1d\"]}]", 86400000 },
        { "[{\"command\":[\"sleep\",\"5\"]},{\"command\":[\"sleep\",\"9s\"]}]", 9000 },
        /* one container that does not sleep: runs until deleted */
        { "[{\"command\":[\"sleep\",\"5\"]},{\"image\":\"server\"}]", -1 },
        { "[{\"image\":\"x\"}]", -1 },
        { "[{\"command\":[\"sh\",\"-c\",\"sleep 60; echo done\"]}]", -1 },
        { "[{\"command\":[\"sh\",\"-c\",\"sleep 60 && true\"]}]", -1 },
        { "[{\"command\":[\"sh\",\"-c\",\"sleep\"]}]", -1 },
        { "[{\"command\":[\"sleep\",\"-5\"]}]", -1 },
        { "[{\"command\":[\"sleep\",\"5x\"]}]", -1 },
        { "[{\"command\":[\"sleep\",\"inf\"]}]", -1 },
        { "[{\"command\":[\"sleep\",\"1\",\"2\"]}]", -1 },
        { "[{\"command\":[\"notsleep\",\"5\"]}]", -1 },
        { "[{\"command\":[\"sh\",\"-x\",\"sleep 5\"]}]", -1 },
        { "[]", -1 },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char js[512];
        snprintf(js, sizeof js, "{\"spec\":{\"containers\":%s}}", cases[i].ctrs);
        json_object *pod = json_tokener_parse(js);
        assert_non_null(pod);
        int64_t got = ks_pod_runtime(pod);
        if (got != cases[i].ms)
            fail_msg("%s: %lld ms, want %lld", cases[i].ctrs, (long long)got,
                     (long long)cases[i].ms);
        json_object_put(pod);
    }
    /* the annotation wins, even over a sleep */
    json_object *pod = json_tokener_parse(
        "{\"metadata\":{\"annotations\":{\"cueue.dev/simulated-runtime\":\"2s\"}},"
        "\"spec\":{\"containers\":[{\"command\":[\"sleep\",\"60\"]}]}}");
    assert_int_equal(ks_pod_runtime(pod), 2000);
    json_object_put(pod);
}

/* Kueue's sample Job, without the annotation: its pods finish after the
 * 60 s of their `sh -c "sleep 60"` and the Job completes. */
static void test_sleep_job_completes(void **state)
{
    fx *f = *state;
    add_default_nodes(f);
    create(f, f->jobs, "default",
           "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"sample\","
           "\"namespace\":\"default\"},\"spec\":{\"parallelism\":3,\"completions\":3,"
           "\"template\":{\"spec\":{\"restartPolicy\":\"Never\",\"containers\":[{\"name\":"
           "\"dummy-job\",\"image\":\"agnhost:2.53\",\"command\":[\"/bin/sh\"],"
           "\"args\":[\"-c\",\"sleep 60\"],\"resources\":{\"requests\":{\"cpu\":\"1\","
           "\"memory\":\"200Mi\"}}}]}}}}");
    step(f);
    json_object *job = get(f, f->jobs, "default", "sample");
    assert_int_equal(pint(job, "status.active", 0), 3);
    json_object_put(job);
    f->now += 59000;
    step(f);
    job = get(f, f->jobs, "default", "sample");
    assert_int_equal(pint(job, "status.succeeded", 0), 0);
    json_object_put(job);
    f->now += 1000;
    step(f);
    job = get(f, f->jobs, "default", "sample");
    assert_int_equal(pint(job, "status.succeeded", 0), 3);
    assert_string_equal(pstr(cond(job, "Complete"), "status"), "True");
    json_object_put(job);
}

static void test_suspend_and_resume(void **state)
{
    fx *f = *state;
    add_default_nodes(f);
    make_job(f, "j", 3, 3, 1, "\"nvidia.com/gpu\":1", NULL, 6);
    step(f);
    json_object *pods = list(f, f->pods, "default", NULL);
    assert_int_equal(nitems(pods), 0);
    json_object_put(pods);
    json_object *job = get(f, f->jobs, "default", "j");
    assert_string_equal(pstr(cond(job, "Suspended"), "status"), "True");
    assert_string_equal(pstr(cond(job, "Suspended"), "reason"), "JobSuspended");
    assert_null(path(job, "status.startTime"));
    json_object_put(job);

    f->now += 5000;
    set_suspend(f, "j", 0);
    step(f);
    pods = list(f, f->pods, "default", NULL);
    assert_int_equal(nitems(pods), 3);
    json_object_put(pods);
    job = get(f, f->jobs, "default", "j");
    assert_string_equal(pstr(cond(job, "Suspended"), "status"), "False");
    assert_string_equal(pstr(cond(job, "Suspended"), "reason"), "JobResumed");
    assert_string_equal(pstr(job, "status.startTime"), "2026-01-01T00:00:05Z");
    assert_int_equal(pint(job, "status.active", 0), 3);
    json_object_put(job);

    /* suspended again: the pods go, and are not counted as failures */
    f->now += 5000;
    set_suspend(f, "j", 1);
    step(f);
    pods = list(f, f->pods, "default", NULL);
    assert_int_equal(nitems(pods), 0);
    json_object_put(pods);
    job = get(f, f->jobs, "default", "j");
    assert_string_equal(pstr(cond(job, "Suspended"), "status"), "True");
    assert_null(path(job, "status.active"));
    assert_null(path(job, "status.failed"));
    json_object_put(job);
}

static void test_unschedulable_event(void **state)
{
    fx *f = *state;
    add_default_nodes(f);
    /* no node has 16 GPUs; the job's nodeSelector picks the H100s */
    make_job(f, "huge", 1, 1, 0, "\"nvidia.com/gpu\":16", NULL, 6);
    step(f);
    json_object *pods = list(f, f->pods, "default", NULL);
    assert_int_equal(nitems(pods), 1);
    json_object *p = item(pods, 0), *c = cond(p, "PodScheduled");
    const char *want =
        "0/12 nodes are available: 2 node(s) had untolerated taint {cloud.example.com/spot: "
        "true}, 4 Insufficient nvidia.com/gpu, 6 node(s) didn't match Pod's node "
        "affinity/selector. preemption: 0/12 nodes are available: 4 No preemption victims "
        "found for incoming pod, 8 Preemption is not helpful for scheduling.";
    assert_null(path(p, "spec.nodeName"));
    assert_string_equal(pstr(p, "status.phase"), "Pending");
    assert_string_equal(pstr(c, "status"), "False");
    assert_string_equal(pstr(c, "reason"), "Unschedulable");
    assert_string_equal(pstr(c, "message"), want);
    char pname[256];
    snprintf(pname, sizeof pname, "%s", pstr(p, "metadata.name"));
    json_object_put(pods);

    json_object *evs = list(f, f->events, "default", NULL);
    assert_int_equal(nitems(evs), 1);
    json_object *e = item(evs, 0);
    assert_string_equal(pstr(e, "reason"), "FailedScheduling");
    assert_string_equal(pstr(e, "type"), "Warning");
    assert_string_equal(pstr(e, "message"), want);
    assert_string_equal(pstr(e, "involvedObject.kind"), "Pod");
    assert_string_equal(pstr(e, "involvedObject.name"), pname);
    assert_string_equal(pstr(e, "source.component"), "default-scheduler");
    assert_int_equal(pint(e, "count", 0), 1);
    json_object_put(evs);

    /* retried soon: no new event, no bump */
    f->now += 5000;
    step(f);
    evs = list(f, f->events, "default", NULL);
    assert_int_equal(nitems(evs), 1);
    assert_int_equal(pint(item(evs, 0), "count", 0), 1);
    json_object_put(evs);
    /* retried later: the same event, counted */
    f->now += 10000;
    step(f);
    evs = list(f, f->events, "default", NULL);
    assert_int_equal(nitems(evs), 1);
    assert_int_equal(pint(item(evs, 0), "count", 0), 2);
    assert_string_equal(pstr(item(evs, 0), "lastTimestamp"), "2026-01-01T00:00:15Z");
    assert_string_equal(pstr(item(evs, 0), "firstTimestamp"), "2026-01-01T00:00:00Z");
    json_object_put(evs);
}

static void test_gated_pod_waits(void **state)
{
    fx *f = *state;
    add_default_nodes(f);
    create(f, f->pods, "default",
           "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"gated\"},"
           "\"spec\":{\"schedulingGates\":[{\"name\":\"example.com/wait\"}],\"containers\":[{"
           "\"name\":\"c\",\"image\":\"x\"}]}}");
    create(f, f->pods, "default",
           "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"free\"},"
           "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}");
    step(f);
    json_object *p = get(f, f->pods, "default", "gated");
    assert_null(path(p, "spec.nodeName"));
    /* as kube-apiserver writes it on creation, and nothing more */
    json_object *c = cond(p, "PodScheduled");
    assert_non_null(c);
    assert_string_equal(cu_jstr(c, "status"), "False");
    assert_string_equal(cu_jstr(c, "reason"), "SchedulingGated");
    assert_string_equal(cu_jstr(c, "message"),
                        "Scheduling is blocked due to non-empty scheduling gates");
    json_object_put(p);
    p = get(f, f->pods, "default", "free");
    assert_non_null(path(p, "spec.nodeName"));
    assert_string_equal(pstr(p, "status.phase"), "Running");
    assert_null(cond(p, "PodScheduled") ? cu_jstr(cond(p, "PodScheduled"), "reason") : NULL);
    json_object_put(p);
    json_object *evs = list(f, f->events, "default", NULL);
    assert_int_equal(nitems(evs), 0);
    json_object_put(evs);
    /* still gated after more passes */
    f->now += 60 * 1000;
    step(f);
    p = get(f, f->pods, "default", "gated");
    assert_null(path(p, "spec.nodeName"));
    /* a gate cannot be added, as kube-apiserver refuses it */
    cu_status st;
    json_object *out = NULL;
    json_object *add = cu_jcopy(p);
    json_object_array_add(cu_jpath(add, "spec.schedulingGates"),
                          cu_json_parse_str("{\"name\":\"example.com/more\"}"));
    assert_int_equal(cu_store_update(f->s, f->pods, "default", "gated", NULL, add, &out, &st),
                     CU_EINVAL);
    assert_int_equal(st.code, 422);
    assert_non_null(strstr(st.message,
                           "spec.schedulingGates[1].name: Forbidden: only deletion is "
                           "allowed, but found new scheduling gate 'example.com/more'"));
    /* the gate removed: the next pass binds it */
    json_object_object_del(cu_jget(p, "spec"), "schedulingGates");
    assert_int_equal(cu_store_update(f->s, f->pods, "default", "gated", NULL, p, &out, &st), CU_OK);
    json_object_put(out);
    step(f);
    p = get(f, f->pods, "default", "gated");
    assert_non_null(path(p, "spec.nodeName"));
    c = cond(p, "PodScheduled");
    assert_string_equal(cu_jstr(c, "status"), "True");
    assert_string_equal(pstr(p, "status.phase"), "Running");
    json_object_put(p);
    /* without a runtime it keeps running */
    f->now += 3600 * 1000;
    step(f);
    p = get(f, f->pods, "default", "free");
    assert_string_equal(pstr(p, "status.phase"), "Running");
    json_object_put(p);
}

/* Topology-Aware Scheduling's hand-off: Kueue admits a gang onto nodes,
 * its pods wait behind the kueue.x-k8s.io/topology gate, and the ungater
 * removes the gate and adds a nodeSelector per domain in one update. The
 * scheduler must then bind each pod where its selector says, on GPU nodes
 * declared with topology labels (the docs/cluster.md nodes file). */
static void test_tas_ungated_pods_follow_selector(void **state)
{
    fx *f = *state;
    char p[] = "/tmp/cu_kubesim_tas_XXXXXX", err[512];
    int fd = mkstemp(p);
    assert_true(fd >= 0);
    close(fd);
    char nodes[4096] = "";
    static const char *const names[] = { "gpu-a", "gpu-b", "gpu-c", "gpu-d" };
    for (int i = 0; i < 4; i++) {
        char one[512];
        snprintf(one, sizeof one,
                 "%sapiVersion: v1\nkind: Node\nmetadata:\n  name: %s\n  labels:\n"
                 "    cloud.com/rack: rack-%d\n    kubernetes.io/hostname: %s\n"
                 "status:\n  capacity: {cpu: \"32\", memory: 128Gi, nvidia.com/gpu: \"8\","
                 " pods: \"110\"}\n",
                 i ? "---\n" : "", names[i], i / 2 + 1, names[i]);
        strcat(nodes, one);
    }
    write_file(p, nodes);
    assert_int_equal(cu_kubesim_add_nodes(f->s, p, f->now, err, sizeof err), CU_OK);
    unlink(p);
    json_object *n = get(f, f->nodes, NULL, "gpu-c");
    assert_string_equal(cu_jstr(path(n, "status.allocatable"), "nvidia.com/gpu"), "8");
    assert_string_equal(cu_jstr(path(n, "metadata.labels"), "cloud.com/rack"), "rack-2");
    json_object_put(n);
    for (int i = 0; i < 2; i++) {
        char pod[512];
        snprintf(pod, sizeof pod,
                 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"gang-%d\"},"
                 "\"spec\":{\"schedulingGates\":[{\"name\":\"kueue.x-k8s.io/topology\"}],"
                 "\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"requests\":"
                 "{\"nvidia.com/gpu\":\"3\"}}}]}}",
                 i);
        create(f, f->pods, "default", pod);
    }
    step(f);
    for (int i = 0; i < 2; i++) {
        char name[16];
        snprintf(name, sizeof name, "gang-%d", i);
        json_object *pod = get(f, f->pods, "default", name);
        assert_null(path(pod, "spec.nodeName")); /* gated: never scheduled */
        /* the ungater: gate removed, the domain's labels as nodeSelector */
        json_object_object_del(cu_jget(pod, "spec"), "schedulingGates");
        char sel[160];
        snprintf(sel, sizeof sel,
                 "{\"cloud.com/rack\":\"rack-2\",\"kubernetes.io/hostname\":\"%s\"}",
                 i ? "gpu-d" : "gpu-c");
        json_object_object_add(cu_jget(pod, "spec"), "nodeSelector", cu_json_parse_str(sel));
        cu_status st;
        json_object *out = NULL;
        assert_int_equal(cu_store_update(f->s, f->pods, "default", name, NULL, pod, &out, &st),
                         CU_OK);
        json_object_put(out);
    }
    step(f);
    /* without the selectors both would go to gpu-a, the first of four
     * equally free nodes */
    for (int i = 0; i < 2; i++) {
        char name[16];
        snprintf(name, sizeof name, "gang-%d", i);
        json_object *pod = get(f, f->pods, "default", name);
        assert_string_equal(pstr(pod, "spec.nodeName"), i ? "gpu-d" : "gpu-c");
        assert_string_equal(pstr(pod, "status.phase"), "Running");
        json_object_put(pod);
    }
}

static void delete_first_pod(fx *f)
{
    cu_status st;
    json_object *pods = list(f, f->pods, "default", NULL), *out = NULL;
    assert_true(nitems(pods) >= 1);
    assert_int_equal(cu_store_delete(f->s, f->pods, "default", pstr(item(pods, 0), "metadata.name"),
                                     NULL, NULL, &out, &st),
                     CU_OK);
    json_object_put(out);
    json_object_put(pods);
}

static void test_deleted_pod_fails_and_is_replaced(void **state)
{
    fx *f = *state;
    add_default_nodes(f);
    make_job(f, "r", 1, 1, 0, "\"nvidia.com/gpu\":1", NULL, 1);
    step(f);
    delete_first_pod(f);
    step(f);
    json_object *job = get(f, f->jobs, "default", "r");
    assert_int_equal(pint(job, "status.failed", 0), 1);
    assert_int_equal(pint(job, "status.active", 0), 1);
    assert_null(cond(job, "Failed"));
    json_object_put(job);
    json_object *pods = list(f, f->pods, "default", NULL);
    assert_int_equal(nitems(pods), 1); /* the failed one is gone, a new one runs */
    assert_string_equal(pstr(item(pods, 0), "status.phase"), "Running");
    json_object_put(pods);

    /* a second failure exceeds backoffLimit 1 */
    delete_first_pod(f);
    step(f);
    job = get(f, f->jobs, "default", "r");
    assert_int_equal(pint(job, "status.failed", 0), 2);
    assert_null(path(job, "status.active"));
    assert_string_equal(pstr(cond(job, "Failed"), "status"), "True");
    assert_string_equal(pstr(cond(job, "Failed"), "reason"), "BackoffLimitExceeded");
    assert_string_equal(pstr(cond(job, "FailureTarget"), "status"), "True");
    assert_null(path(job, "status.completionTime"));
    json_object_put(job);
    pods = list(f, f->pods, "default", NULL);
    assert_int_equal(nitems(pods), 0);
    json_object_put(pods);
}

static void test_job_deletion_collects_pods(void **state)
{
    fx *f = *state;
    cu_status st;
    json_object *out = NULL;
    add_default_nodes(f);
    make_job(f, "gone", 2, 2, 0, "\"nvidia.com/gpu\":1", NULL, 6);
    step(f);
    json_object *pods = list(f, f->pods, "default", NULL);
    assert_int_equal(nitems(pods), 2);
    json_object_put(pods);
    /* as kubectl does; the API's default for batch/v1 Jobs is Orphan */
    assert_int_equal(
        cu_store_delete(f->s, f->jobs, "default", "gone", "Background", NULL, &out, &st), CU_OK);
    json_object_put(out);
    cu_store_gc(f->s); /* what the thread does after a deletion */
    step(f);
    cu_store_gc(f->s);
    pods = list(f, f->pods, "default", NULL);
    assert_int_equal(nitems(pods), 0);
    json_object_put(pods);
}

/* The thread: a Job with a short runtime completes by itself. */
static int64_t sys_now(void *ud)
{
    struct timespec ts;
    (void)ud;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void test_thread(void **state)
{
    (void)state;
    cu_clock clk = { sys_now, NULL };
    cu_store *s = cu_store_new(0, &clk);
    char err[256];
    cu_kubesim_opts o = { .tick_ms = 20 };
    cu_status st;
    json_object *out = NULL;
    int done = 0;
    assert_non_null(s);
    cu_kubesim *k = cu_kubesim_start(s, &o, err, sizeof err);
    assert_non_null(k);
    const cu_rtype *jobs = cu_store_rtype(s, "batch", "v1", "jobs");
    assert_int_equal(
        cu_store_create(s, jobs, "default",
                        J("{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":"
                          "\"quick\"},\"spec\":{\"parallelism\":2,\"completions\":2,\"template\":{"
                          "\"metadata\":{\"annotations\":{\"cueue.dev/simulated-runtime\":"
                          "\"300ms\"}},\"spec\":{\"restartPolicy\":\"Never\",\"containers\":[{"
                          "\"name\":\"c\",\"image\":\"x\",\"resources\":{\"limits\":{"
                          "\"nvidia.com/gpu\":1}}}]}}}}"),
                        &out, &st),
        CU_OK);
    json_object_put(out);
    for (int i = 0; i < 200 && !done; i++) {
        struct timespec ts = { 0, 25 * 1000000L };
        nanosleep(&ts, NULL);
        json_object *j = NULL;
        if (cu_store_get(s, jobs, "default", "quick", &j, &st) == CU_OK) {
            done = cond(j, "Complete") != NULL;
            if (done)
                assert_int_equal(pint(j, "status.succeeded", 0), 2);
            json_object_put(j);
        }
    }
    assert_true(done);
    cu_kubesim_stop(k);
    cu_store_free(s);
    /* a bad nodes file is refused at start */
    s = cu_store_new(0, &clk);
    o.nodes_file = "/nonexistent/nodes.yaml";
    assert_null(cu_kubesim_start(s, &o, err, sizeof err));
    assert_non_null(strstr(err, "/nonexistent/nodes.yaml"));
    cu_store_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fragmentation),
        cmocka_unit_test(test_message_mixed_reasons),
        cmocka_unit_test(test_message_sort_is_textual),
        cmocka_unit_test(test_filter_table),
        cmocka_unit_test(test_bound_pods_usage),
        cmocka_unit_test(test_scoring),
        cmocka_unit_test(test_preemption_part),
        cmocka_unit_test(test_pick_errors),
        cmocka_unit_test(test_parse_duration),
        cmocka_unit_test(test_sleep_runtime),
        cmocka_unit_test_setup_teardown(test_sleep_job_completes, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_default_nodes, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_nodes_file, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_job_runs_to_completion, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_suspend_and_resume, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_unschedulable_event, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_gated_pod_waits, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_tas_ungated_pods_follow_selector, fx_setup,
                                        fx_teardown),
        cmocka_unit_test_setup_teardown(test_deleted_pod_fails_and_is_replaced, fx_setup,
                                        fx_teardown),
        cmocka_unit_test_setup_teardown(test_job_deletion_collects_pods, fx_setup, fx_teardown),
        cmocka_unit_test(test_thread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
