/*
 * test_simsched.c - the incremental scheduler of the simulated cluster
 * (ks_sched_pass on a kept ks_state, internal/ks_int.h) on a real store: a pod that did not fit is
 * placed when a node frees up and only then looked at again; a node added
 * later gets the pending pods; no pod is placed twice and no node's
 * capacity is exceeded, however the passes are cut by their budget; and
 * its decisions are those of the stateless pass (cu_kubesim_schedule, a
 * fresh look at the whole store) on the same changes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_clock.h"
#include "ks_int.h"

typedef struct fx {
    cu_clock clock;
    int64_t now;
    cu_store *s;
    ks_types t;
} fx;

static fx *fx_new(void)
{
    fx *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    f->now = 1767225600000LL; /* 2026-01-01T00:00:00Z */
    f->clock.now_ms = cu_clock_fake_now;
    f->clock.ud = &f->now;
    f->s = cu_store_new(0, &f->clock);
    assert_non_null(f->s);
    assert_int_equal(ks_types_get(f->s, &f->t), 0);
    return f;
}

static void fx_free(fx *f)
{
    cu_store_free(f->s);
    free(f);
}

static void create(fx *f, const cu_rtype *rt, const char *ns, const char *js)
{
    cu_status st;
    json_object *out = NULL, *o = json_tokener_parse(js);
    assert_non_null(o);
    if (cu_store_create(f->s, rt, ns, o, &out, &st) != CU_OK)
        fail_msg("create: %s", st.message);
    json_object_put(out);
}

static void add_node_pods(fx *f, const char *name, int cpu, int pods, const char *labels,
                          const char *taints)
{
    char js[1024];
    snprintf(js, sizeof js,
             "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\","
             "\"labels\":{%s}},\"spec\":{\"taints\":[%s]},\"status\":{\"capacity\":{\"cpu\":"
             "\"%d\",\"memory\":\"64Gi\",\"pods\":\"%d\"}}}",
             name, labels ? labels : "", taints ? taints : "", cpu, pods);
    create(f, f->t.nodes, NULL, js);
}

static void add_node(fx *f, const char *name, int cpu, const char *labels, const char *taints)
{
    add_node_pods(f, name, cpu, 110, labels, taints);
}

static void add_pod(fx *f, const char *name, const char *cpu, int prio, const char *extra)
{
    char js[1024];
    snprintf(js, sizeof js,
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\"},\"spec\":{"
             "\"priority\":%d,\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{"
             "\"requests\":{\"cpu\":\"%s\"}}}]%s},\"status\":{\"phase\":\"Pending\"}}",
             name, prio, cpu, extra ? extra : "");
    create(f, f->t.pods, "default", js);
}

static json_object *get_pod(fx *f, const char *name)
{
    cu_status st;
    json_object *out = NULL;
    assert_int_equal(cu_store_get(f->s, f->t.pods, "default", name, &out, &st), CU_OK);
    return out;
}

/* spec.nodeName of pod name ("" when unbound), into buf. */
static const char *node_of_pod(fx *f, const char *name, char *buf, size_t n)
{
    json_object *p = get_pod(f, name);
    const char *nn = cu_jpath_str(p, "spec.nodeName");
    snprintf(buf, n, "%s", nn ? nn : "");
    json_object_put(p);
    return buf;
}

static void set_phase(fx *f, const char *name, const char *phase)
{
    cu_status st;
    json_object *p = get_pod(f, name), *out = NULL;
    cu_jset_str(cu_jchild(p, "status"), "phase", phase);
    assert_int_equal(cu_store_update(f->s, f->t.pods, "default", name, "status", p, &out, &st),
                     CU_OK);
    json_object_put(out);
}

static int pass(fx *f, ks_state *ss, int max_writes, int *more)
{
    return ks_sched_pass(ss, f->s, 0, f->now, max_writes, 0, NULL, more);
}

/* Every pod: bound at most once (its node never changes once set, checked
 * against seen[]), and every node's cpu within its capacity. Returns the
 * number of bound pods. */
static size_t check_world(fx *f, char seen[][32], size_t npods, const int *node_cpu, size_t nnodes)
{
    int64_t used[16] = { 0 };
    size_t bound = 0;
    char name[32], nn[32];
    assert_true(nnodes <= 16);
    for (size_t i = 0; i < npods; i++) {
        snprintf(name, sizeof name, "p%02zu", i);
        json_object *p = get_pod(f, name);
        const char *ph = cu_jpath_str(p, "status.phase");
        const char *on = cu_jpath_str(p, "spec.nodeName");
        snprintf(nn, sizeof nn, "%s", on ? on : "");
        if (seen[i][0])
            assert_string_equal(seen[i], nn); /* never moved, never placed twice */
        snprintf(seen[i], 32, "%s", nn);
        if (nn[0]) {
            int k = atoi(nn + 1);
            bound++;
            if (!str_eq(ph, "Succeeded"))
                used[k] += 1000;
        }
        json_object_put(p);
    }
    for (size_t k = 0; k < nnodes; k++)
        assert_true(used[k] <= node_cpu[k] * 1000);
    return bound;
}

static void test_freed_node_takes_pending_pod(void **state)
{
    (void)state;
    fx *f = fx_new();
    ks_state *ss = ks_state_new(1);
    char nn[64];
    add_node(f, "n0", 4, NULL, NULL);
    add_pod(f, "a", "3", 0, NULL);
    add_pod(f, "b", "3", 0, NULL);
    assert_true(pass(f, ss, 0, NULL) > 0);
    assert_string_equal(node_of_pod(f, "a", nn, sizeof nn), "n0"); /* older first */
    assert_string_equal(node_of_pod(f, "b", nn, sizeof nn), "");
    json_object *b = get_pod(f, "b");
    json_object *c = ks_cond_get(b, "PodScheduled");
    assert_string_equal(cu_jstr(c, "reason"), "Unschedulable");
    assert_string_equal(cu_jstr(c, "message"),
                        "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are "
                        "available: 1 No preemption victims found for incoming pod.");
    json_object_put(b);
    /* the pass catches up with its own writes; then, nothing changed, b is
     * not looked at again: no write, even seconds later */
    pass(f, ss, 0, NULL);
    f->now += 3000;
    assert_int_equal(pass(f, ss, 0, NULL), 0);
    assert_int_equal(ks_sched_binds(ss), 1);
    /* a finishes: the node frees up and b goes there */
    set_phase(f, "a", "Succeeded");
    assert_true(pass(f, ss, 0, NULL) > 0);
    assert_string_equal(node_of_pod(f, "b", nn, sizeof nn), "n0");
    assert_int_equal(ks_sched_binds(ss), 2);
    ks_state_free(ss);
    fx_free(f);
}

static void test_node_added_later(void **state)
{
    (void)state;
    fx *f = fx_new();
    ks_state *ss = ks_state_new(1);
    char nn[64];
    add_pod(f, "gpu", "1", 0, ",\"nodeSelector\":{\"pool\":\"gpu\"}");
    add_pod(f, "any", "1", 0, NULL);
    pass(f, ss, 0, NULL);
    json_object *p = get_pod(f, "any");
    assert_string_equal(cu_jstr(ks_cond_get(p, "PodScheduled"), "message"),
                        "no nodes available to schedule pods");
    json_object_put(p);
    pass(f, ss, 0, NULL);
    assert_int_equal(pass(f, ss, 0, NULL), 0);
    /* a node without the label: only "any" fits */
    add_node(f, "n0", 8, "\"pool\":\"cpu\"", NULL);
    pass(f, ss, 0, NULL);
    assert_string_equal(node_of_pod(f, "any", nn, sizeof nn), "n0");
    assert_string_equal(node_of_pod(f, "gpu", nn, sizeof nn), "");
    p = get_pod(f, "gpu");
    assert_string_equal(cu_jstr(ks_cond_get(p, "PodScheduled"), "message"),
                        "0/1 nodes are available: 1 node(s) didn't match Pod's node "
                        "affinity/selector. preemption: 0/1 nodes are available: 1 Preemption is "
                        "not helpful for scheduling.");
    json_object_put(p);
    /* a tainted gpu node: still not (no toleration); then an untainted one */
    add_node(f, "n1", 8, "\"pool\":\"gpu\"",
             "{\"key\":\"k\",\"value\":\"v\",\"effect\":\"NoSchedule\"}");
    pass(f, ss, 0, NULL);
    assert_string_equal(node_of_pod(f, "gpu", nn, sizeof nn), "");
    add_node(f, "n2", 8, "\"pool\":\"gpu\"", NULL);
    pass(f, ss, 0, NULL);
    assert_string_equal(node_of_pod(f, "gpu", nn, sizeof nn), "n2");
    ks_state_free(ss);
    fx_free(f);
}

static void test_budget_never_places_twice(void **state)
{
    (void)state;
    fx *f = fx_new();
    ks_state *ss = ks_state_new(1);
    const int cpu[4] = { 4, 4, 3, 5 };
    char seen[40][32], name[32];
    int more = 0;
    memset(seen, 0, sizeof seen);
    for (int k = 0; k < 4; k++) {
        snprintf(name, sizeof name, "n%d", k);
        add_node(f, name, cpu[k], NULL, NULL);
    }
    for (int i = 0; i < 40; i++) {
        snprintf(name, sizeof name, "p%02d", i);
        add_pod(f, name, "1", i % 3, NULL);
        f->now += 1000;
    }
    /* passes cut after 3 writes: each ends with pods left to try */
    int cut = 0;
    for (int round = 0; round < 80; round++) {
        pass(f, ss, 3, &more);
        cut += more;
        check_world(f, seen, 40, cpu, 4);
    }
    assert_true(cut > 5);
    assert_int_equal(check_world(f, seen, 40, cpu, 4), 16); /* the capacity */
    assert_int_equal(ks_sched_binds(ss), 16);
    /* the higher priority went first: every priority-2 pod is placed */
    for (int i = 2; i < 40; i += 3)
        assert_true(seen[i][0] != '\0');
    /* pods finish a few at a time; the freed room is filled, never more */
    for (int wave = 0; wave < 10; wave++) {
        int done = 0;
        for (int i = 0; i < 40 && done < 3; i++) {
            json_object *p;
            snprintf(name, sizeof name, "p%02d", i);
            p = get_pod(f, name);
            if (seen[i][0] && !str_eq(cu_jpath_str(p, "status.phase"), "Succeeded")) {
                set_phase(f, name, "Succeeded");
                done++;
            }
            json_object_put(p);
        }
        for (int round = 0; round < 20; round++) {
            pass(f, ss, 2, &more);
            check_world(f, seen, 40, cpu, 4);
        }
    }
    assert_int_equal(check_world(f, seen, 40, cpu, 4), 40);
    assert_int_equal(ks_sched_binds(ss), 40);
    ks_state_free(ss);
    fx_free(f);
}

static void test_stop_ends_the_pass(void **state)
{
    (void)state;
    fx *f = fx_new();
    ks_state *ss = ks_state_new(1);
    volatile int stop = 1;
    int more = 0;
    char nn[64];
    add_node(f, "n0", 4, NULL, NULL);
    add_pod(f, "a", "1", 0, NULL);
    assert_int_equal(ks_sched_pass(ss, f->s, 0, f->now, 0, 0, &stop, &more), 0);
    assert_int_equal(more, 1);
    assert_string_equal(node_of_pod(f, "a", nn, sizeof nn), "");
    stop = 0;
    assert_true(ks_sched_pass(ss, f->s, 0, f->now, 0, 0, &stop, &more) > 0);
    assert_int_equal(more, 0);
    assert_string_equal(node_of_pod(f, "a", nn, sizeof nn), "n0");
    ks_state_free(ss);
    fx_free(f);
}

/* The same changes on two stores: one scheduled by a kept ks_state cut
 * into small passes, the other by the stateless pass; every pod ends on
 * the same node. */
static void test_same_decisions_as_a_full_pass(void **state)
{
    (void)state;
    fx *a = fx_new(), *b = fx_new();
    fx *both[2] = { a, b };
    ks_state *ss = ks_state_new(1);
    char name[32], na[64], nb[64];
    unsigned seed = 7;
    for (int k = 0; k < 2; k++) {
        add_node(both[k], "n0", 6, "\"zone\":\"a\"", NULL);
        add_node(both[k], "n1", 8, "\"zone\":\"b\"", NULL);
        add_node(both[k], "n2", 4, "\"zone\":\"a\"",
                 "{\"key\":\"spot\",\"value\":\"true\",\"effect\":\"NoSchedule\"}");
    }
    for (int i = 0; i < 60; i++) {
        const char *extra = NULL, *cpu = "1";
        seed = seed * 1103515245u + 12345u;
        switch ((seed >> 16) % 4) {
        case 0: extra = ",\"nodeSelector\":{\"zone\":\"a\"}"; break;
        case 1:
            extra = ",\"tolerations\":[{\"key\":\"spot\",\"operator\":\"Exists\"}]";
            cpu = "2";
            break;
        case 2: cpu = "500m"; break;
        default: break;
        }
        snprintf(name, sizeof name, "p%02d", i);
        for (int k = 0; k < 2; k++) {
            add_pod(both[k], name, cpu, (int)((seed >> 20) % 2), extra);
            both[k]->now += 100;
        }
        if (i % 6 == 5) {
            /* schedule; then finish the oldest running pod */
            int more = 1;
            for (int r = 0; r < 50 && more; r++)
                pass(a, ss, 2, &more);
            pass(a, ss, 2, &more); /* catch up with its own writes */
            cu_kubesim_schedule(b->s, 0, b->now);
            for (int j = 0; j <= i; j++) {
                snprintf(name, sizeof name, "p%02d", j);
                assert_string_equal(node_of_pod(a, name, na, sizeof na),
                                    node_of_pod(b, name, nb, sizeof nb));
            }
            for (int j = 0; j <= i; j++) {
                snprintf(name, sizeof name, "p%02d", j);
                json_object *p = get_pod(a, name);
                int running = node_of_pod(a, name, na, sizeof na)[0] &&
                              !str_eq(cu_jpath_str(p, "status.phase"), "Succeeded");
                json_object_put(p);
                if (running) {
                    set_phase(a, name, "Succeeded");
                    set_phase(b, name, "Succeeded");
                    break;
                }
            }
            if (i == 29)
                for (int k = 0; k < 2; k++)
                    add_node(both[k], "n3", 3, "\"zone\":\"b\"", NULL);
        }
    }
    ks_state_free(ss);
    fx_free(a);
    fx_free(b);
}

/* Enough pods to grow the state's pod table (past 512), half of them
 * deleted and replaced (their slots reused): each placed exactly once. */
static void test_many_pods(void **state)
{
    (void)state;
    fx *f = fx_new();
    ks_state *ss = ks_state_new(1);
    char name[32];
    int more = 1;
    add_node_pods(f, "n0", 4000, 4000, NULL, NULL);
    for (int i = 0; i < 700; i++) {
        snprintf(name, sizeof name, "a%04d", i);
        add_pod(f, name, "1", 0, NULL);
    }
    for (int r = 0; r < 100 && more; r++)
        pass(f, ss, 500, &more);
    assert_int_equal(more, 0);
    assert_int_equal(ks_sched_binds(ss), 700);
    for (int i = 0; i < 700; i += 2) {
        cu_status st;
        json_object *out = NULL;
        snprintf(name, sizeof name, "a%04d", i);
        assert_int_equal(cu_store_delete(f->s, f->t.pods, "default", name, NULL, NULL, &out, &st),
                         CU_OK);
        json_object_put(out);
    }
    for (int i = 0; i < 800; i++) {
        snprintf(name, sizeof name, "b%04d", i);
        add_pod(f, name, "1", 0, NULL);
    }
    more = 1;
    for (int r = 0; r < 100 && more; r++)
        pass(f, ss, 500, &more);
    assert_int_equal(ks_sched_binds(ss), 1500);
    for (int i = 0; i < 800; i += 53) {
        char nn[32];
        snprintf(name, sizeof name, "b%04d", i);
        assert_string_equal(node_of_pod(f, name, nn, sizeof nn), "n0");
    }
    ks_state_free(ss);
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_freed_node_takes_pending_pod),
        cmocka_unit_test(test_node_added_later),
        cmocka_unit_test(test_budget_never_places_twice),
        cmocka_unit_test(test_stop_ends_the_pass),
        cmocka_unit_test(test_same_decisions_as_a_full_pass),
        cmocka_unit_test(test_many_pods),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
