/*
 * test_engine.c - engine tests built from C objects (no YAML): the
 * documentation's borrowing examples, and a seeded randomized test that
 * builds random cohort trees, quotas and workloads and checks, after every
 * cycle, the quota invariants, and at the end that Cueue's multi-round
 * cycle reaches exactly the state of Kueue's one-head-per-cycle loop.
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

static void add_flavor(cu_world *w, const char *name)
{
    cu_resource_flavor *f = al(w, sizeof(*f));
    f->meta.name = s(w, "%s", name);
    PUSH(w->flavors, f);
}

/* A ClusterQueue with one group [cpu] and the given flavors/quotas (milli).
 * blimit/llimit < 0 mean unset. */
static cu_cluster_queue *add_cq(cu_world *w, const char *name, const char *cohort, int nflv,
                                const char **flv, const int64_t *nom, const int64_t *bl,
                                const int64_t *ll, int strict)
{
    cu_cluster_queue *q = al(w, sizeof(*q));
    q->meta.name = s(w, "%s", name);
    q->cohort = cohort ? s(w, "%s", cohort) : NULL;
    q->queueing = strict ? CU_STRICT_FIFO : CU_BEST_EFFORT_FIFO;
    q->fs_weight = 1000;
    q->fungibility.when_can_preempt = CU_FUNG_TRY_NEXT_FLAVOR;
    q->groups.n = 1;
    q->groups.items = al(w, sizeof(cu_rgroup));
    cu_rgroup *g = &q->groups.items[0];
    g->covered.n = 1;
    g->covered.items = al(w, sizeof(char *));
    g->covered.items[0] = "cpu";
    g->nflavors = (size_t)nflv;
    g->flavors = al(w, (size_t)nflv * sizeof(cu_fquota));
    for (int i = 0; i < nflv; i++) {
        g->flavors[i].name = flv[i];
        g->flavors[i].n = 1;
        g->flavors[i].res = al(w, sizeof(cu_rquota));
        cu_rquota *r = &g->flavors[i].res[0];
        r->name = "cpu";
        r->nominal = nom[i];
        if (bl && bl[i] >= 0) {
            r->has_blimit = 1;
            r->blimit = bl[i];
        }
        if (ll && ll[i] >= 0) {
            r->has_llimit = 1;
            r->llimit = ll[i];
        }
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

static cu_cohort *add_cohort(cu_world *w, const char *name, const char *parent, const char *flv,
                             int64_t nom)
{
    cu_cohort *c = al(w, sizeof(*c));
    c->meta.name = s(w, "%s", name);
    c->parent = parent ? s(w, "%s", parent) : NULL;
    c->fs_weight = 1000;
    if (nom > 0) {
        c->groups.n = 1;
        c->groups.items = al(w, sizeof(cu_rgroup));
        cu_rgroup *g = &c->groups.items[0];
        g->covered.n = 1;
        g->covered.items = al(w, sizeof(char *));
        g->covered.items[0] = "cpu";
        g->nflavors = 1;
        g->flavors = al(w, sizeof(cu_fquota));
        g->flavors[0].name = flv;
        g->flavors[0].n = 1;
        g->flavors[0].res = al(w, sizeof(cu_rquota));
        g->flavors[0].res[0].name = "cpu";
        g->flavors[0].res[0].nominal = nom;
    }
    PUSH(w->cohorts, c);
    return c;
}

static cu_workload *add_wl(cu_world *w, const char *name, const char *cq, int64_t cpu_milli,
                           int32_t count, int32_t min, int32_t prio, int64_t ts)
{
    cu_workload *wl = tw_workload(w, name, cq, count, prio, ts);
    cu_podset *ps = &wl->podsets[0];
    if (min > 0 && min < count) {
        ps->has_min = 1;
        ps->min_count = min;
    }
    ps->requests.n = 1;
    ps->requests.items = al(w, sizeof(cu_res));
    ps->requests.items[0].name = "cpu";
    ps->requests.items[0].milli = cpu_milli;
    return wl;
}

static int64_t now_ms = 1767225600000LL;

static cu_engine *engine_fs(const cu_world *w, int one_head, int fs)
{
    cu_engine_opts o = { .clock = { cu_clock_fake_now, &now_ms },
                         .one_head_per_cycle = one_head,
                         .max_rounds = 200,
                         .fair_sharing = fs };
    cu_engine *e = cu_engine_new(&o);
    assert_non_null(e);
    cu_diag d;
    cu_diag_init(&d);
    assert_int_equal(cu_engine_load(e, w, &d), CU_OK);
    cu_diag_free(&d);
    return e;
}

static cu_engine *engine(const cu_world *w, int one_head) { return engine_fs(w, one_head, 0); }

static const cu_wl_info *find(cu_engine *e, const char *key)
{
    for (size_t i = 0; i < cu_engine_nworkloads(e); i++) {
        const cu_wl_info *v = cu_engine_workload_info(e, i);
        char k[256];
        snprintf(k, sizeof k, "%s/%s", v->ns, v->name);
        if (strcmp(k, key) == 0)
            return v;
    }
    fail_msg("workload %s not found", key);
    return NULL;
}

static void run_checked(cu_engine *e)
{
    for (int i = 0; i < 10000; i++) {
        cu_cycle_stats st;
        assert_int_equal(cu_engine_cycle(e, &st), CU_OK);
        cu_diag d;
        cu_diag_init(&d);
        cu_err err = cu_engine_check_invariants(e, &d);
        if (err)
            fail_msg("invariant broken after cycle %d: %s", i, d.n ? d.msgs[0] : "?");
        cu_diag_free(&d);
        if (!st.progress)
            return;
    }
    fail_msg("no steady state after 10000 cycles");
}

/* Docs (ClusterQueue concept): A has 9 cpu, B 12 in cohort team-ab. With B
 * idle, A can use 21; with borrowingLimit 1 on A only 10. */
static void test_docs_borrowing(void **state)
{
    (void)state;
    for (int variant = 0; variant < 3; variant++) {
        cu_world w;
        cu_world_init(&w);
        add_flavor(&w, "default");
        const char *f[] = { "default" };
        int64_t na[] = { 9000 }, nb[] = { 12000 };
        int64_t bla[] = { variant == 1 ? 1000 : -1 };
        int64_t llb[] = { variant == 2 ? 1000 : -1 };
        add_cq(&w, "a", "team-ab", 1, f, na, bla, NULL, 0);
        add_cq(&w, "b", "team-ab", 1, f, nb, NULL, llb, 0);
        /* 21 one-cpu workloads in A */
        for (int i = 0; i < 21; i++) {
            char n[32];
            snprintf(n, sizeof n, "w%02d", i);
            add_wl(&w, n, "a", 1000, 1, 0, 0, now_ms - 1000 + i);
        }
        cu_engine *e = engine(&w, 0);
        run_checked(e);
        int admitted = 0;
        for (size_t i = 0; i < cu_engine_nworkloads(e); i++)
            admitted += cu_engine_workload_info(e, i)->admitted;
        int want = variant == 0 ? 21 : 10;
        assert_int_equal(admitted, want);
        if (variant) {
            const cu_wl_info *v = find(e, "ns/w20");
            assert_false(v->admitted);
            /* each workload asks 1 cpu; 10 are in use, none available */
            assert_string_equal(
                v->message,
                "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default, 1 more needed");
        }
        cu_engine_free(e);
        cu_world_free(&w);
    }
}

static const cu_cq_info *cq_info(cu_engine *e, const char *name)
{
    for (size_t i = 0; i < cu_engine_ncqs(e); i++)
        if (strcmp(cu_engine_cq_info(e, i)->name, name) == 0)
            return cu_engine_cq_info(e, i);
    fail_msg("ClusterQueue %s not found", name);
    return NULL;
}

static int admitted_count(cu_engine *e)
{
    int n = 0;
    for (size_t i = 0; i < cu_engine_nworkloads(e); i++)
        n += cu_engine_workload_info(e, i)->admitted;
    return n;
}

/* Objects that fail api/'s validation (the controller's world may hold
 * them; a real API server with Kueue's webhooks refuses them): an invalid
 * ClusterQueue is inactive with a message naming the field, and holds no
 * quota for its cohort; the same for a Cohort (its queues inactive), a
 * ResourceFlavor, a LocalQueue, and a pending Workload. */
static void test_invalid_objects(void **state)
{
    (void)state;
    for (int variant = 0; variant < 5; variant++) {
        cu_world w;
        cu_world_init(&w);
        add_flavor(&w, "default");
        const char *f[] = { "default" };
        int64_t good[] = { 2000 }, bad[] = { -5000 }, big[] = { 8000 }, ll[] = { 9000 };
        /* "ok" can borrow from "lender" (8 cpu) in cohort co */
        add_cq(&w, "ok", "co", 1, f, good, NULL, NULL, 0);
        add_cq(&w, "lender", "co", 1, f, big, NULL, variant == 0 ? ll : NULL, 0);
        cu_cohort *co = add_cohort(&w, "co", NULL, "default", 0);
        if (variant == 1)
            co->fs_weight = -1000;
        if (variant == 2)
            w.flavors.items[0]->node_labels = (cu_kvs){ 0 };
        if (variant == 2) {
            cu_resource_flavor *rf = w.flavors.items[0];
            rf->ntaints = 1;
            rf->taints = al(&w, sizeof(cu_taint));
            rf->taints[0] = (cu_taint){ "spot", "", "Sometimes" };
        }
        add_cq(&w, "neg", NULL, 1, f, bad, NULL, NULL, 0);
        add_wl(&w, "big", "ok", 6000, 1, 0, 0, now_ms - 100);
        add_wl(&w, "into-neg", "neg", 1000, 1, 0, 0, now_ms - 99);
        cu_workload *wb = add_wl(&w, "bad-wl", "lender", 1000, 1, 0, 0, now_ms - 98);
        if (variant == 3) {
            wb->podsets[0].has_min = 1;
            wb->podsets[0].min_count = 2; /* > count */
        }
        if (variant == 4)
            w.lqs.items[1]->fs_weight = -1;
        cu_engine *e = engine(&w, 0);
        run_checked(e);

        const cu_cq_info *n = cq_info(e, "neg");
        assert_false(n->active);
        assert_string_equal(n->reason, "Invalid");
        assert_string_equal(n->message,
                            "Can't admit new workloads: spec.resourceGroups[0]."
                            "flavors[0].resources[0].nominalQuota: Invalid value: \"-5\": must "
                            "be greater than or equal to 0");
        assert_int_equal(n->nusage, 0); /* no quota shown, none held */
        const cu_wl_info *v = find(e, "ns/into-neg");
        assert_false(v->admitted);
        assert_string_equal(v->message, "ClusterQueue neg is inactive");

        const cu_cq_info *l = cq_info(e, "lender");
        const cu_wl_info *big_wl = find(e, "ns/big");
        const cu_wl_info *bw = find(e, "ns/bad-wl");
        switch (variant) {
        case 0: /* lendingLimit > nominalQuota: "ok" cannot borrow from it */
            assert_false(l->active);
            assert_string_equal(l->reason, "Invalid");
            assert_non_null(strstr(l->message,
                                   "spec.resourceGroups[0].flavors[0].resources[0]"
                                   ".lendingLimit: Invalid value: \"9\": must be less than or "
                                   "equal to the nominalQuota"));
            assert_false(big_wl->admitted);
            assert_string_equal(bw->message, "ClusterQueue lender is inactive");
            break;
        case 1: /* invalid Cohort: its queues are inactive, nothing borrowed */
            assert_false(l->active);
            assert_string_equal(l->reason, "CohortInvalid");
            assert_string_equal(l->message,
                                "Can't admit new workloads: Cohort co is invalid: "
                                "spec.fairSharing.weight: Invalid value: \"-1\": must be "
                                "greater than or equal to 0");
            assert_false(cq_info(e, "ok")->active);
            assert_false(big_wl->admitted);
            break;
        case 2: /* invalid ResourceFlavor */
            assert_false(l->active);
            assert_string_equal(l->reason, "FlavorInvalid");
            assert_string_equal(l->message,
                                "Can't admit new workloads: ResourceFlavor default is "
                                "invalid: spec.nodeTaints[0].effect: Unsupported value: "
                                "\"Sometimes\": supported values: \"NoSchedule\", "
                                "\"PreferNoSchedule\", \"NoExecute\"");
            assert_false(big_wl->admitted);
            break;
        case 3: /* invalid Workload: pending with the field named, others go on */
            assert_true(l->active);
            assert_true(big_wl->admitted);
            assert_false(bw->admitted);
            assert_string_equal(bw->message,
                                "Workload is invalid: spec.podSets[0].minCount: "
                                "Invalid value: 2: must be less than or equal to count (1)");
            break;
        case 4: { /* invalid LocalQueue */
            assert_true(big_wl->admitted);
            assert_false(bw->admitted);
            assert_string_equal(
                bw->message, "LocalQueue lq-lender is invalid: spec.fairSharing."
                             "weight: Invalid value: \"-1m\": must be greater than or equal to 0");
            const cu_lq_info *q = NULL;
            for (size_t i = 0; i < cu_engine_nlqs(e); i++)
                if (!strcmp(cu_engine_lq_info(e, i)->name, "lq-lender"))
                    q = cu_engine_lq_info(e, i);
            assert_non_null(q);
            assert_false(q->active);
            assert_string_equal(q->reason, "Invalid");
            break;
        }
        }
        if (variant != 0 && variant != 1 && variant != 2)
            assert_int_equal(admitted_count(e), 1);
        cu_engine_free(e);
        cu_world_free(&w);
    }
}

/* Priority decides who gets the last free cpu; the loser's message counts
 * what is missing. */
static void test_priority_and_message(void **state)
{
    (void)state;
    cu_world w;
    cu_world_init(&w);
    add_flavor(&w, "default");
    const char *f[] = { "default" };
    int64_t n[] = { 4000 };
    add_cq(&w, "a", NULL, 1, f, n, NULL, NULL, 0);
    add_wl(&w, "low", "a", 3000, 1, 0, 1, now_ms - 100);
    add_wl(&w, "high", "a", 3000, 1, 0, 10, now_ms - 50);
    cu_engine *e = engine(&w, 0);
    run_checked(e);
    assert_true(find(e, "ns/high")->admitted);
    const cu_wl_info *low = find(e, "ns/low");
    assert_false(low->admitted);
    assert_string_equal(
        low->message,
        "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default, 2 more needed");
    assert_string_equal(low->reason, "WaitingForQuota");
    /* finishing the admitted one frees quota and retries the parked one */
    size_t hi_idx = 1;
    assert_int_equal(cu_engine_finish(e, (int)hi_idx), CU_OK);
    run_checked(e);
    assert_true(find(e, "ns/low")->admitted);
    cu_engine_free(e);
    cu_world_free(&w);
}

/* The order of a cycle's heads across a cohort tree is by borrowing level
 * first (Kueue's classicalIterator), and the level is the height of the
 * cohort the request must borrow from (Kueue's getNodeHeight over the
 * scheduler's snapshot, which holds only active ClusterQueues). Tree:
 * r -> {a {sub-a {cq-s}, cq-q}, b {sub-b {cq-sb}, cq-r}, cq-c}; cohorts a
 * and b hold 4 CPU each, no queue has quota. w-z (cq-c, 6) is admitted
 * first and borrows through r, leaving 2 at the root. Then w-q (cq-q,
 * prio 0, 2) fits in a: level height(a); w-r (cq-r, prio 100, 2) fits in
 * b: level height(b) = 2 (sub-b holds the active cq-sb). Only one fits.
 * With cq-s active, height(a) = 2 too and priority takes w-r; with cq-s
 * stopped, sub-a has no child in the snapshot (height 0), height(a) = 1
 * and w-q goes first. */
static void test_borrow_level_is_cohort_height(void **state)
{
    (void)state;
    for (int stopped = 0; stopped < 2; stopped++) {
        cu_world w;
        cu_world_init(&w);
        add_flavor(&w, "default");
        const char *f[] = { "default" };
        int64_t zero[] = { 0 };
        add_cohort(&w, "r", NULL, NULL, 0);
        add_cohort(&w, "a", "r", "default", 4000);
        add_cohort(&w, "b", "r", "default", 4000);
        add_cohort(&w, "sub-a", "a", NULL, 0);
        add_cohort(&w, "sub-b", "b", NULL, 0);
        cu_cluster_queue *qs = add_cq(&w, "cq-s", "sub-a", 1, f, zero, NULL, NULL, 0);
        if (stopped)
            qs->stop_policy = CU_STOP_HOLD;
        add_cq(&w, "cq-q", "a", 1, f, zero, NULL, NULL, 0);
        add_cq(&w, "cq-sb", "sub-b", 1, f, zero, NULL, NULL, 0);
        add_cq(&w, "cq-r", "b", 1, f, zero, NULL, NULL, 0);
        add_cq(&w, "cq-c", "r", 1, f, zero, NULL, NULL, 0);
        add_wl(&w, "w-z", "cq-c", 6000, 1, 0, 0, now_ms - 300);
        cu_engine *e = engine(&w, 0);
        run_checked(e);
        assert_true(find(e, "ns/w-z")->admitted);
        cu_workload *wr = add_wl(&w, "w-r", "cq-r", 2000, 1, 0, 100, now_ms - 200);
        cu_workload *wq = add_wl(&w, "w-q", "cq-q", 2000, 1, 0, 0, now_ms - 100);
        assert_true(cu_engine_add_workload(e, wr) >= 0);
        assert_true(cu_engine_add_workload(e, wq) >= 0);
        run_checked(e);
        assert_int_equal(find(e, "ns/w-q")->admitted, stopped);
        assert_int_equal(find(e, "ns/w-r")->admitted, !stopped);
        cu_engine_free(e);
        cu_world_free(&w);
    }
}

/* Admission Fair Sharing: within one ClusterQueue, LocalQueues take turns
 * by usage (each admission adds an entry penalty to its LocalQueue), so
 * the older workloads of team a do not take all the quota. */
static void test_afs_alternates_local_queues(void **state)
{
    (void)state;
    for (int afs = 0; afs <= 1; afs++) {
        cu_world w;
        cu_world_init(&w);
        add_flavor(&w, "default");
        const char *f[] = { "default" };
        int64_t n[] = { 4000 };
        cu_cluster_queue *q = add_cq(&w, "cq", NULL, 1, f, n, NULL, NULL, 0);
        q->afs = 1;
        cu_local_queue *lqb = al(&w, sizeof(*lqb));
        lqb->meta.name = "lq-b";
        lqb->meta.ns = "ns";
        lqb->cluster_queue = "cq";
        lqb->fs_weight = 1000;
        PUSH(w.lqs, lqb);
        for (int i = 0; i < 3; i++) {
            char name[8];
            snprintf(name, sizeof name, "a%d", i);
            add_wl(&w, name, "cq", 1000, 1, 0, 0, now_ms - 1000 + i);
        }
        for (int i = 0; i < 3; i++) {
            char name[8];
            snprintf(name, sizeof name, "b%d", i);
            cu_workload *x = add_wl(&w, name, "cq", 1000, 1, 0, 0, now_ms - 500 + i);
            x->queue_name = "lq-b";
        }
        cu_engine_opts o = { .clock = { cu_clock_fake_now, &now_ms },
                             .afs = afs,
                             .afs_half_life_ms = 3600000,
                             .afs_sampling_ms = 300000 };
        cu_engine *e = cu_engine_new(&o);
        cu_diag d;
        cu_diag_init(&d);
        assert_int_equal(cu_engine_load(e, &w, &d), CU_OK);
        cu_diag_free(&d);
        run_checked(e);
        /* without AFS the three older workloads of lq-cq go first */
        assert_int_equal(find(e, "ns/a2")->admitted, !afs);
        assert_int_equal(find(e, "ns/b1")->admitted, afs);
        assert_true(find(e, "ns/a0")->admitted && find(e, "ns/b0")->admitted);
        cu_engine_free(e);
        cu_world_free(&w);
    }
}

/* Dominant Resource Share as Kueue computes it: A borrows 5 cpu of the
 * 20 its parent can lend: 5 * 1000 / 20 = 250, divided by A's weight;
 * the root cohort and the non-borrowing B are at 0. */
static void test_weighted_share(void **state)
{
    (void)state;
    static const struct {
        int64_t weight;
        int64_t want;
    } cases[] = {
        { 1000, 250 }, { 500, 500 }, { 2000, 125 }, { 3000, 84 /* ceil(83.3) */ }, { 0, INT64_MAX },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        cu_world w;
        cu_world_init(&w);
        add_flavor(&w, "default");
        const char *f[] = { "default" };
        int64_t n[] = { 10000 };
        cu_cluster_queue *a = add_cq(&w, "a", "root", 1, f, n, NULL, NULL, 0);
        add_cq(&w, "b", "root", 1, f, n, NULL, NULL, 0);
        a->fs_weight = cases[k].weight;
        for (int i = 0; i < 15; i++) {
            char name[8];
            snprintf(name, sizeof name, "w%02d", i);
            add_wl(&w, name, "a", 1000, 1, 0, 0, now_ms - 100 + i);
        }
        cu_engine *e = engine_fs(&w, 0, 1);
        run_checked(e);
        int64_t got_a = -1, got_b = -1;
        for (size_t i = 0; i < cu_engine_ncqs(e); i++) {
            const cu_cq_info *v = cu_engine_cq_info(e, i);
            if (strcmp(v->name, "a") == 0)
                got_a = v->weighted_share;
            else
                got_b = v->weighted_share;
        }
        assert_int_equal(got_a, cases[k].want);
        assert_int_equal(got_b, 0);
        assert_int_equal(cu_engine_cohort_info(e, 0)->weighted_share, 0);
        cu_engine_free(e);
        cu_world_free(&w);
    }
}

/* Preemption with manual evictions (the controller's mode): the victim
 * keeps its quota, and the preemptor waits, until the driver reports the
 * victim stopped; only then is the preemptor admitted. */
static void test_manual_eviction(void **state)
{
    (void)state;
    cu_world w;
    cu_world_init(&w);
    add_flavor(&w, "default");
    const char *f[] = { "default" };
    int64_t n[] = { 4000 };
    cu_cluster_queue *q = add_cq(&w, "a", NULL, 1, f, n, NULL, NULL, 0);
    q->preemption.within_cq = CU_PP_LOWER_PRIORITY;
    add_wl(&w, "low", "a", 3000, 1, 0, 1, now_ms - 100);
    cu_engine_opts o = { .clock = { cu_clock_fake_now, &now_ms }, .manual_evictions = 1 };
    cu_engine *e = cu_engine_new(&o);
    cu_diag d;
    cu_diag_init(&d);
    assert_int_equal(cu_engine_load(e, &w, &d), CU_OK);
    cu_diag_free(&d);
    run_checked(e);
    assert_true(find(e, "ns/low")->admitted);
    cu_workload *hi = add_wl(&w, "high", "a", 3000, 1, 0, 10, now_ms - 50);
    int hidx = cu_engine_add_workload(e, hi);
    assert_true(hidx >= 0);
    run_checked(e);
    const cu_wl_info *lo = find(e, "ns/low");
    assert_true(lo->admitted && lo->evicting);
    assert_false(find(e, "ns/high")->admitted);
    assert_string_equal(find(e, "ns/high")->message,
                        "waiting for 1 preempted workload to release quota");
    assert_int_equal(cu_engine_eviction_done(e, hidx), CU_ENOTFOUND);
    assert_int_equal(cu_engine_eviction_done(e, 0), CU_OK);
    run_checked(e);
    assert_true(find(e, "ns/high")->admitted);
    lo = find(e, "ns/low");
    assert_false(lo->admitted);
    assert_int_equal(lo->evictions, 1);
    assert_string_equal(lo->message, "preempted by ns/high within ClusterQueue a");
    assert_string_equal(lo->preempted_reason, "InClusterQueue");
    cu_engine_free(e);
    cu_world_free(&w);
}

/* Kueue batches the return of inadmissible workloads to their heaps
 * (pkg/cache/queue inadmissible_workloads.go: requeueBatchPeriod 1 s after
 * quota is freed). Cohort co: a 4 cpu (withinClusterQueue LowerPriority),
 * b 0. v (a, 4) runs; i (b, prio 10, 2) is parked; p (a, prio 50, 2)
 * preempts v. Within the second after v's eviction, h (b, prio 0, 2)
 * arrives and takes the 2 cpu left; i comes back only then, and waits
 * (scenario 166). */
static void test_requeue_batched(void **state)
{
    (void)state;
    int64_t t = now_ms;
    cu_world w;
    cu_world_init(&w);
    add_flavor(&w, "default");
    const char *f[] = { "default" };
    int64_t n4[] = { 4000 }, n0[] = { 0 };
    cu_cluster_queue *a = add_cq(&w, "a", "co", 1, f, n4, NULL, NULL, 0);
    add_cq(&w, "b", "co", 1, f, n0, NULL, NULL, 0);
    a->preemption.within_cq = CU_PP_LOWER_PRIORITY;
    add_wl(&w, "v", "a", 4000, 1, 0, 0, t - 100);
    cu_engine_opts o = { .clock = { cu_clock_fake_now, &t },
                         .manual_evictions = 1,
                         .requeue_batch = CU_RQ_TIMED };
    cu_engine *e = cu_engine_new(&o);
    cu_diag d;
    cu_diag_init(&d);
    assert_int_equal(cu_engine_load(e, &w, &d), CU_OK);
    cu_diag_free(&d);
    run_checked(e);
    assert_true(find(e, "ns/v")->admitted);
    assert_true(cu_engine_add_workload(e, add_wl(&w, "i", "b", 2000, 1, 0, 10, t - 90)) >= 0);
    run_checked(e);
    assert_false(find(e, "ns/i")->admitted);
    assert_true(cu_engine_add_workload(e, add_wl(&w, "p", "a", 2000, 1, 0, 50, t - 80)) >= 0);
    run_checked(e);
    assert_true(find(e, "ns/v")->evicting);
    assert_int_equal(cu_engine_requeue_next(e), 0);
    assert_int_equal(cu_engine_eviction_done(e, 0), CU_OK);
    assert_int_equal(cu_engine_requeue_next(e), t + 1000);
    run_checked(e);
    assert_true(find(e, "ns/p")->admitted);
    assert_false(find(e, "ns/i")->admitted); /* not back yet, though 2 cpu are free */
    t += 500;
    assert_int_equal(cu_engine_requeue_due(e, t), 0);
    assert_true(cu_engine_add_workload(e, add_wl(&w, "h", "b", 2000, 1, 0, 0, t)) >= 0);
    run_checked(e);
    assert_true(find(e, "ns/h")->admitted);
    t += 500;
    assert_int_equal(cu_engine_requeue_due(e, t), 2); /* i, and v (parked when it came back) */
    assert_int_equal(cu_engine_requeue_next(e), 0);
    run_checked(e);
    const cu_wl_info *i = find(e, "ns/i");
    assert_false(i->admitted);
    assert_false(find(e, "ns/v")->admitted);
    assert_string_equal(i->message, "couldn't assign flavors to pod set main: insufficient "
                                    "unused quota for cpu in flavor default, 2 more needed");
    cu_engine_free(e);
    cu_world_free(&w);
}

/* Kueue's gate on preemption (flavorassigner.go, fitsResourceQuota): a
 * request over the ClusterQueue's nominal quota may preempt only when it
 * fits in a cohort below the root as used now, or when the queue may
 * preempt while borrowing (borrowWithinCohort; with fair sharing also
 * reclaimWithinCohort). withinClusterQueue alone never opens it, with or
 * without fair sharing (the gate is in the flavor assigner, before either
 * preemption algorithm; scenarios 160-164 have the classic cases in
 * full). Cohort co: a 4 cpu (withinClusterQueue
 * LowerPriority), b 4 cpu idle; a runs low (4 cpu, priority 0); high
 * (6 cpu, priority 100) fits only by evicting low and borrowing 2. */
static void test_preempt_gate_over_nominal(void **state)
{
    (void)state;
    struct {
        int fs;
        cu_ppolicy reclaim, borrow;
        int preempts;
    } cases[] = {
        { 0, CU_PP_NEVER, CU_PP_NEVER, 0 },                   /* the case */
        { 0, CU_PP_LOWER_PRIORITY, CU_PP_NEVER, 0 },          /* reclaim alone: no */
        { 0, CU_PP_LOWER_PRIORITY, CU_PP_LOWER_PRIORITY, 1 }, /* borrowWithinCohort */
        { 1, CU_PP_NEVER, CU_PP_NEVER, 0 },                   /* fair sharing */
        { 1, CU_PP_LOWER_PRIORITY, CU_PP_NEVER, 1 },          /* fs + reclaim */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        cu_world w;
        cu_world_init(&w);
        add_flavor(&w, "default");
        const char *f[] = { "default" };
        int64_t n[] = { 4000 };
        cu_cluster_queue *a = add_cq(&w, "a", "co", 1, f, n, NULL, NULL, 0);
        add_cq(&w, "b", "co", 1, f, n, NULL, NULL, 0);
        a->preemption.within_cq = CU_PP_LOWER_PRIORITY;
        a->preemption.reclaim = cases[k].reclaim;
        a->preemption.borrow_policy = cases[k].borrow;
        add_wl(&w, "low", "a", 4000, 1, 0, 0, now_ms - 100);
        cu_engine *e = engine_fs(&w, 0, cases[k].fs);
        run_checked(e);
        assert_true(find(e, "ns/low")->admitted);
        cu_workload *hi = add_wl(&w, "high", "a", 6000, 1, 0, 100, now_ms - 50);
        assert_true(cu_engine_add_workload(e, hi) >= 0);
        run_checked(e);
        const cu_wl_info *lo = find(e, "ns/low"), *h = find(e, "ns/high");
        if (cases[k].preempts) {
            assert_true(h->admitted);
            assert_false(lo->admitted);
            assert_int_equal(lo->evictions, 1);
            assert_string_equal(lo->preempted_reason, "InClusterQueue");
        } else {
            assert_false(h->admitted);
            assert_true(lo->admitted);
            assert_int_equal(lo->evictions, 0);
            assert_string_equal(h->message,
                                "couldn't assign flavors to pod set main: insufficient unused "
                                "quota for cpu in flavor default, 2 more needed");
        }
        cu_engine_free(e);
        cu_world_free(&w);
    }
}

/* A partially admissible preemptor that preempted for fewer pods than its
 * count is assigned again from its full count once the victim's quota is
 * released (Kueue's getInitialAssignments keeps no count): here the full
 * count borrows then, so it is admitted with 2 pods, not the 1 it
 * preempted for (scenario 165, diff-kueue case r2-27). */
static void test_partial_preemptor_full_count_after_release(void **state)
{
    (void)state;
    cu_world w;
    cu_world_init(&w);
    add_flavor(&w, "default");
    const char *f[] = { "default" };
    int64_t na[] = { 1000 }, nb[] = { 2000 };
    cu_cluster_queue *a = add_cq(&w, "a", "co", 1, f, na, NULL, NULL, 0);
    add_cq(&w, "b", "co", 1, f, nb, NULL, NULL, 0);
    a->preemption.within_cq = CU_PP_LOWER_PRIORITY;
    add_wl(&w, "v", "a", 3000, 1, 0, 0, now_ms - 100);
    cu_engine *e = engine(&w, 0);
    run_checked(e);
    assert_true(find(e, "ns/v")->admitted);
    cu_workload *p = add_wl(&w, "w", "a", 1000, 2, 1, 100, now_ms - 50);
    assert_true(cu_engine_add_workload(e, p) >= 0);
    run_checked(e);
    const cu_wl_info *v = find(e, "ns/v"), *pw = find(e, "ns/w");
    assert_false(v->admitted);
    assert_int_equal(v->evictions, 1);
    assert_true(pw->admitted);
    assert_int_equal(pw->psa[0].count, 2);
    cu_engine_free(e);
    cu_world_free(&w);
}

/* ---------- randomized: invariants and one-head equivalence ---------- */

static uint64_t rng;
static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

static void random_world(cu_world *w, uint64_t seed, int with_preemption)
{
    rng = seed * 2654435761ULL + 1;
    cu_world_init(w);
    const char *flv[] = { "f0", "f1" };
    add_flavor(w, "f0");
    add_flavor(w, "f1");
    int nco = (int)rnd(4);
    for (int i = 0; i < nco; i++) {
        char name[16], parent[16];
        snprintf(name, sizeof name, "co%d", i);
        snprintf(parent, sizeof parent, "co%d", i ? (int)rnd((uint32_t)i) : 0);
        add_cohort(w, name, i && rnd(2) ? parent : NULL, flv[rnd(2)],
                   rnd(3) ? 0 : (int64_t)rnd(6) * 1000);
    }
    int ncq = 1 + (int)rnd(6);
    for (int i = 0; i < ncq; i++) {
        char name[16], co[16];
        snprintf(name, sizeof name, "cq%d", i);
        snprintf(co, sizeof co, "co%d", nco ? (int)rnd((uint32_t)nco) : 0);
        int has_co = nco && rnd(4);
        int nf = 1 + (int)rnd(2);
        int64_t nom[2], bl[2], ll[2];
        for (int k = 0; k < 2; k++) {
            nom[k] = (int64_t)rnd(8) * 1000;
            bl[k] = has_co && rnd(3) == 0 ? (int64_t)rnd(6) * 1000 : -1;
            ll[k] = has_co && rnd(3) == 0 ? (int64_t)rnd((uint32_t)(nom[k] / 1000 + 1)) * 1000 : -1;
        }
        cu_cluster_queue *q =
            add_cq(w, name, has_co ? co : NULL, nf, flv, nom, bl, ll, rnd(4) == 0);
        if (with_preemption) {
            static const cu_ppolicy within[] = { CU_PP_NEVER, CU_PP_LOWER_PRIORITY,
                                                 CU_PP_LOWER_OR_NEWER_EQUAL_PRIORITY };
            static const cu_ppolicy reclaim[] = { CU_PP_NEVER, CU_PP_LOWER_PRIORITY, CU_PP_ANY };
            q->preemption.within_cq = within[rnd(3)];
            q->preemption.reclaim = reclaim[rnd(3)];
            if (q->preemption.reclaim != CU_PP_NEVER && rnd(2)) {
                q->preemption.borrow_policy = CU_PP_LOWER_PRIORITY;
                if (rnd(2)) {
                    q->preemption.has_threshold = 1;
                    q->preemption.threshold = (int32_t)rnd(3);
                }
            }
            if (rnd(3) == 0)
                q->fungibility.when_can_borrow = CU_FUNG_TRY_NEXT_FLAVOR;
            if (rnd(3) == 0)
                q->fungibility.when_can_preempt = CU_FUNG_MAY_STOP_SEARCH;
        }
    }
    int nwl = (int)rnd(40);
    for (int i = 0; i < nwl; i++) {
        char name[16], cq[16];
        snprintf(name, sizeof name, "w%02d", i);
        snprintf(cq, sizeof cq, "cq%d", (int)rnd((uint32_t)ncq));
        int32_t count = 1 + (int32_t)rnd(4);
        add_wl(w, name, cq, (int64_t)(1 + rnd(4)) * 500, count,
               rnd(3) == 0 ? 1 + (int32_t)rnd((uint32_t)count) : 0, (int32_t)rnd(3),
               now_ms - 10000 + (int64_t)rnd(5000));
    }
}

static void test_random_equivalence(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 800; seed++) {
        cu_world w;
        random_world(&w, seed, seed > 400);
        cu_engine *multi = engine(&w, 0), *single = engine(&w, 1);
        run_checked(multi);
        run_checked(single);
        assert_int_equal(cu_engine_nworkloads(multi), cu_engine_nworkloads(single));
        for (size_t i = 0; i < cu_engine_nworkloads(multi); i++) {
            const cu_wl_info *a = cu_engine_workload_info(multi, i);
            const cu_wl_info *b = cu_engine_workload_info(single, i);
            if (a->admitted != b->admitted)
                fail_msg("seed %llu: %s admitted %d vs %d", (unsigned long long)seed, a->name,
                         a->admitted, b->admitted);
            assert_int_equal(a->evictions, b->evictions);
            if (a->admitted) {
                assert_int_equal(a->psa[0].count, b->psa[0].count);
                assert_string_equal(a->psa[0].flavors[0], b->psa[0].flavors[0]);
            } else {
                assert_string_equal(a->message, b->message);
            }
        }
        cu_engine_free(multi);
        cu_engine_free(single);
        cu_world_free(&w);
    }
}

/* Preemption must reach a steady state: a bounded number of rounds, with
 * the quota invariants holding after every cycle (Kueue's preemption
 * loops, issues #3779 and #14543, are what this guards against). A
 * failing seed becomes a named regression test. */
static void run_random_preemption(int fs)
{
    for (uint64_t seed = 1; seed <= 1500; seed++) {
        cu_world w;
        random_world(&w, seed, 1);
        if (fs)
            for (size_t i = 0; i < w.cqs.n; i++)
                w.cqs.items[i]->fs_weight = (int64_t)(rnd(4)) * 500; /* 0, 0.5, 1, 1.5 */
        for (int one = 0; one <= 1; one++) {
            cu_engine *e = engine_fs(&w, one, fs);
            int cycles = 0, settled = 0;
            /* bound: every workload can be admitted, preempted and
             * readmitted only a few times */
            int bound = 50 + 20 * (int)w.workloads.n;
            for (; cycles < bound && !settled; cycles++) {
                cu_cycle_stats st;
                assert_int_equal(cu_engine_cycle(e, &st), CU_OK);
                cu_diag d;
                cu_diag_init(&d);
                if (cu_engine_check_invariants(e, &d) != CU_OK)
                    fail_msg("seed %llu: invariant broken: %s", (unsigned long long)seed,
                             d.n ? d.msgs[0] : "?");
                cu_diag_free(&d);
                settled = !st.progress;
            }
            if (!settled)
                fail_msg("seed %llu (one_head=%d fs=%d): no steady state after %d cycles",
                         (unsigned long long)seed, one, fs, bound);
            cu_engine_free(e);
        }
        cu_world_free(&w);
    }
}

static void test_random_preemption_terminates(void **state)
{
    (void)state;
    run_random_preemption(0);
}

/* The same with fair sharing: DRS ordering and fair-sharing preemption
 * (Kueue's #14543 is a fair-sharing preemption loop). */
static void test_random_fair_sharing_terminates(void **state)
{
    (void)state;
    run_random_preemption(1);
}

/* Runs one random world to a steady state within bound cycles. */
static void settle_seed_fs(uint64_t seed, int bound, int fs)
{
    cu_world w;
    random_world(&w, seed, 1);
    if (fs)
        for (size_t i = 0; i < w.cqs.n; i++)
            w.cqs.items[i]->fs_weight = (int64_t)(rnd(4)) * 500;
    for (int one = 0; one <= 1; one++) {
        cu_engine *e = engine_fs(&w, one, fs);
        int settled = 0;
        for (int c = 0; c < bound && !settled; c++) {
            cu_cycle_stats st;
            assert_int_equal(cu_engine_cycle(e, &st), CU_OK);
            settled = !st.progress;
        }
        assert_true(settled);
        cu_engine_free(e);
    }
    cu_world_free(&w);
}

static void settle_seed(uint64_t seed, int bound) { settle_seed_fs(seed, bound, 0); }

/* Fair sharing, seed 59 looped: the quota a preemptor freed was taken by
 * its re-queued victim, which the tournament ranked first. Fixed by
 * letting preemptors go first in the tournament too. */
static void test_regression_fs_seed59_preemptor_first(void **state)
{
    (void)state;
    settle_seed_fs(59, 100, 1);
}

/* Fair sharing, seed 263 looped through three preemption kinds (fair
 * sharing between two zero-weight queues, reclaim within nominal, and
 * priority within a queue) that are each legal in Kueue. Bounded by the
 * per-workload preemption budget. */
static void test_regression_fs_seed263_three_way(void **state)
{
    (void)state;
    settle_seed_fs(263, 100, 1);
}

/* Seed 1 looped: a partially admitted preemptor freed quota for 2 pods,
 * then competed with its full count against its re-queued victim of
 * higher priority, lost, and preempted again. Fixed by giving a
 * preemptor precedence in the next cycle (it is then assigned from its
 * full count again, as Kueue does; see
 * test_partial_preemptor_full_count_after_release). */
static void test_regression_seed1_partial_preemptor(void **state)
{
    (void)state;
    settle_seed(1, 100);
}

/* Seed 576 looped: a high-priority workload preempted to borrow
 * (borrowWithinCohort) from a queue whose reclaimWithinCohort: Any took
 * the quota straight back. Fixed by the stability rule in
 * cu_preempt.c (classify_cohort). */
static void test_regression_seed576_borrow_reclaim_ping_pong(void **state)
{
    (void)state;
    settle_seed(576, 100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_docs_borrowing),
        cmocka_unit_test(test_invalid_objects),
        cmocka_unit_test(test_priority_and_message),
        cmocka_unit_test(test_borrow_level_is_cohort_height),
        cmocka_unit_test(test_afs_alternates_local_queues),
        cmocka_unit_test(test_weighted_share),
        cmocka_unit_test(test_manual_eviction),
        cmocka_unit_test(test_preempt_gate_over_nominal),
        cmocka_unit_test(test_requeue_batched),
        cmocka_unit_test(test_partial_preemptor_full_count_after_release),
        cmocka_unit_test(test_random_equivalence),
        cmocka_unit_test(test_random_preemption_terminates),
        cmocka_unit_test(test_random_fair_sharing_terminates),
        cmocka_unit_test(test_regression_seed1_partial_preemptor),
        cmocka_unit_test(test_regression_seed576_borrow_reclaim_ping_pong),
        cmocka_unit_test(test_regression_fs_seed59_preemptor_first),
        cmocka_unit_test(test_regression_fs_seed263_three_way),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
