/*
 * test_podsready.c - waitForPodsReady decisions: the PodsReady condition,
 * the start and recovery timeouts, the requeue backoff (doubling, cap,
 * jitter), the backoff limit, blockAdmission and the queue-order time.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "cu_podsready.h"

#define T0 1700000000000LL        /* Admitted lastTransitionTime */
#define TIMEOUT (5 * 60 * 1000LL) /* 5m */
#define RECOVERY (2 * 60 * 1000LL)
#define BASE (60 * 1000LL)
#define MAXB (3600 * 1000LL)

static cu_pr_config cfg_base(void)
{
    cu_pr_config c = { .enable = 1,
                       .timeout_ms = TIMEOUT,
                       .recovery_timeout_ms = RECOVERY,
                       .backoff_limit = -1,
                       .backoff_base_ms = BASE,
                       .backoff_max_ms = MAXB };
    return c;
}

enum { CFG_BASE, CFG_NO_RECOVERY, CFG_LIMIT3, CFG_LIMIT0, CFG_DISABLED };

static cu_pr_config cfg_of(int which)
{
    cu_pr_config c = cfg_base();
    switch (which) {
    case CFG_NO_RECOVERY: c.recovery_timeout_ms = -1; break;
    case CFG_LIMIT3: c.backoff_limit = 3; break;
    case CFG_LIMIT0: c.backoff_limit = 0; break;
    case CFG_DISABLED: c.enable = 0; break;
    default: break;
    }
    return c;
}

/* a workload in a given state */
#define WL(adm, cond, rdy, reason, rltt, pods, count) \
    { \
        .ns = "ns1", .name = "wl1", .admitted = (adm), .admitted_ltt_ms = T0, \
        .has_ready_cond = (cond), .ready = (rdy), .ready_reason = (reason), \
        .ready_ltt_ms = (rltt), .job_pods_ready = (pods), .requeue_count = (count) \
    }

typedef struct pr_case {
    const char *name;
    int cfg;
    cu_pr_wl w;
    int64_t now;
    cu_pr_action_kind kind;
    /* SET_CONDITION (and DEACTIVATE's target) */
    int ready;
    const char *reason, *message;
    /* EVICT / DEACTIVATE */
    const char *evict_reason, *cause, *evict_message;
    int32_t count;
    int64_t backoff_lo; /* requeueAt - now must lie in [lo, lo + lo/10000] */
    int64_t recheck;
} pr_case;

static const char TIMEOUT_MSG[] = "Exceeded the PodsReady timeout ns1/wl1";

static const pr_case CASES[] = {
    { "pending workload gets PodsReady=False WaitForStart", CFG_BASE, WL(0, 0, 0, NULL, 0, 0, 0),
      T0, CU_PR_SET_CONDITION, 0, "WaitForStart", "Not all pods are ready or succeeded", NULL, NULL,
      NULL, 0, 0, -1 },
    { "pending workload already WaitForStart: nothing", CFG_BASE,
      WL(0, 1, 0, "WaitForStart", T0 - 5, 0, 0), T0 + TIMEOUT * 9, CU_PR_NOTHING, 0, NULL, NULL,
      NULL, NULL, NULL, 0, 0, -1 },
    { "admitted, no condition, before timeout: WaitForStart, recheck at admitted+timeout", CFG_BASE,
      WL(1, 0, 0, NULL, 0, 0, 0), T0 + 1000, CU_PR_SET_CONDITION, 0, "WaitForStart",
      "Not all pods are ready or succeeded", NULL, NULL, NULL, 0, 0, T0 + TIMEOUT },
    { "admitted, WaitForStart, before timeout: wait", CFG_BASE,
      WL(1, 1, 0, "WaitForStart", T0, 0, 0), T0 + TIMEOUT - 1, CU_PR_NOTHING, 0, NULL, NULL, NULL,
      NULL, NULL, 0, 0, T0 + TIMEOUT },
    { "admitted, WaitForStart, timeout reached: evict PodsReadyTimeout", CFG_BASE,
      WL(1, 1, 0, "WaitForStart", T0, 0, 0), T0 + TIMEOUT, CU_PR_EVICT, 0, NULL, NULL,
      "PodsReadyTimeout", "WaitForStart", TIMEOUT_MSG, 1, BASE, -1 },
    { "admitted, no condition yet, timeout passed: evict", CFG_BASE, WL(1, 0, 0, NULL, 0, 0, 0),
      T0 + TIMEOUT + 5000, CU_PR_EVICT, 0, NULL, NULL, "PodsReadyTimeout", "WaitForStart",
      TIMEOUT_MSG, 1, BASE, -1 },
    { "legacy False/PodsReady counts as WaitForStart: evict", CFG_BASE,
      WL(1, 1, 0, "PodsReady", T0, 0, 1), T0 + TIMEOUT + 1, CU_PR_EVICT, 0, NULL, NULL,
      "PodsReadyTimeout", "WaitForStart", TIMEOUT_MSG, 2, 2 * BASE, -1 },
    { "legacy False/PodsReady before timeout: rewritten as WaitForStart", CFG_BASE,
      WL(1, 1, 0, "PodsReady", T0, 0, 0), T0 + 10, CU_PR_SET_CONDITION, 0, "WaitForStart",
      "Not all pods are ready or succeeded", NULL, NULL, NULL, 0, 0, T0 + TIMEOUT },
    { "pods ready: PodsReady=True Started", CFG_BASE, WL(1, 1, 0, "WaitForStart", T0, 1, 0),
      T0 + 2000, CU_PR_SET_CONDITION, 1, "Started",
      "All pods reached readiness and the workload is running", NULL, NULL, NULL, 0, 0, -1 },
    { "pods ready after the deadline: True, not evicted", CFG_BASE,
      WL(1, 1, 0, "WaitForStart", T0, 1, 0), T0 + TIMEOUT * 3, CU_PR_SET_CONDITION, 1, "Started",
      "All pods reached readiness and the workload is running", NULL, NULL, NULL, 0, 0, -1 },
    { "ready and still ready: nothing, no timer", CFG_BASE, WL(1, 1, 1, "Started", T0 + 5, 1, 0),
      T0 + TIMEOUT * 100, CU_PR_NOTHING, 0, NULL, NULL, NULL, NULL, NULL, 0, 0, -1 },
    { "ready then lost: WaitForRecovery, recheck after the recovery timeout", CFG_BASE,
      WL(1, 1, 1, "Started", T0 + 5, 0, 0), T0 + 60000, CU_PR_SET_CONDITION, 0, "WaitForRecovery",
      "At least one pod has failed, waiting for recovery", NULL, NULL, NULL, 0, 0,
      T0 + 60000 + RECOVERY },
    { "waiting for recovery, before its timeout: wait", CFG_BASE,
      WL(1, 1, 0, "WaitForRecovery", T0 + 60000, 0, 2), T0 + 60000 + RECOVERY - 1, CU_PR_NOTHING, 0,
      NULL, NULL, NULL, NULL, NULL, 0, 0, T0 + 60000 + RECOVERY },
    { "waiting for recovery past its timeout: evict with cause WaitForRecovery", CFG_BASE,
      WL(1, 1, 0, "WaitForRecovery", T0 + 60000, 0, 2), T0 + 60000 + RECOVERY, CU_PR_EVICT, 0, NULL,
      NULL, "PodsReadyTimeout", "WaitForRecovery", TIMEOUT_MSG, 3, 4 * BASE, -1 },
    { "recovery uses the PodsReady time, not the admission time", CFG_BASE,
      WL(1, 1, 0, "WaitForRecovery", T0 + TIMEOUT * 10, 0, 0), T0 + TIMEOUT * 10 + 1, CU_PR_NOTHING,
      0, NULL, NULL, NULL, NULL, NULL, 0, 0, T0 + TIMEOUT * 10 + RECOVERY },
    { "recovered: True Recovered", CFG_BASE, WL(1, 1, 0, "WaitForRecovery", T0 + 60000, 1, 0),
      T0 + 70000, CU_PR_SET_CONDITION, 1, "Recovered",
      "All pods reached readiness and the workload is running", NULL, NULL, NULL, 0, 0, -1 },
    { "recovered and still ready: nothing", CFG_BASE, WL(1, 1, 1, "Recovered", T0 + 60000, 1, 0),
      T0 + 70000, CU_PR_NOTHING, 0, NULL, NULL, NULL, NULL, NULL, 0, 0, -1 },
    { "recovered then lost again: WaitForRecovery", CFG_BASE,
      WL(1, 1, 1, "Recovered", T0 + 60000, 0, 0), T0 + 70000, CU_PR_SET_CONDITION, 0,
      "WaitForRecovery", "At least one pod has failed, waiting for recovery", NULL, NULL, NULL, 0,
      0, T0 + 70000 + RECOVERY },
    { "recovery disabled: never evicted while recovering", CFG_NO_RECOVERY,
      WL(1, 1, 0, "WaitForRecovery", T0, 0, 0), T0 + TIMEOUT * 1000, CU_PR_NOTHING, 0, NULL, NULL,
      NULL, NULL, NULL, 0, 0, -1 },
    { "recovery disabled: losing readiness sets the condition, no timer", CFG_NO_RECOVERY,
      WL(1, 1, 1, "Started", T0, 0, 0), T0 + 5, CU_PR_SET_CONDITION, 0, "WaitForRecovery",
      "At least one pod has failed, waiting for recovery", NULL, NULL, NULL, 0, 0, -1 },
    { "recovery disabled: the start timeout still applies", CFG_NO_RECOVERY,
      WL(1, 1, 0, "WaitForStart", T0, 0, 0), T0 + TIMEOUT, CU_PR_EVICT, 0, NULL, NULL,
      "PodsReadyTimeout", "WaitForStart", TIMEOUT_MSG, 1, BASE, -1 },
    { "backoff limit reached: deactivate", CFG_LIMIT3, WL(1, 1, 0, "WaitForStart", T0, 0, 3),
      T0 + TIMEOUT, CU_PR_DEACTIVATE, 0, "RequeuingLimitExceeded",
      "exceeding the maximum number of re-queuing retries", "Deactivated", "RequeuingLimitExceeded",
      "The workload is deactivated due to exceeding the maximum number of re-queuing retries", 0, 0,
      -1 },
    { "backoff limit not yet reached: evict", CFG_LIMIT3, WL(1, 1, 0, "WaitForStart", T0, 0, 2),
      T0 + TIMEOUT, CU_PR_EVICT, 0, NULL, NULL, "PodsReadyTimeout", "WaitForStart", TIMEOUT_MSG, 3,
      4 * BASE, -1 },
    { "backoff limit 0: the first timeout deactivates", CFG_LIMIT0,
      WL(1, 1, 0, "WaitForRecovery", T0, 0, 0), T0 + RECOVERY, CU_PR_DEACTIVATE, 0,
      "RequeuingLimitExceeded", "exceeding the maximum number of re-queuing retries", "Deactivated",
      "RequeuingLimitExceeded",
      "The workload is deactivated due to exceeding the maximum number of re-queuing retries", 0, 0,
      -1 },
    { "unknown False reason: no timer, condition normalised", CFG_BASE,
      WL(1, 1, 0, "Whatever", T0, 0, 0), T0 + TIMEOUT * 2, CU_PR_SET_CONDITION, 0, "WaitForStart",
      "Not all pods are ready or succeeded", NULL, NULL, NULL, 0, 0, -1 },
    { "feature disabled: nothing at all", CFG_DISABLED, WL(1, 0, 0, NULL, 0, 0, 0),
      T0 + TIMEOUT * 2, CU_PR_NOTHING, 0, NULL, NULL, NULL, NULL, NULL, 0, 0, -1 },
};

static void check_case(const pr_case *c, const cu_pr_wl *w)
{
    cu_pr_config cfg = cfg_of(c->cfg);
    cu_pr_action a = cu_pr_decide(&cfg, w, c->now, 12345);
    print_message("case: %s\n", c->name);
    assert_int_equal(a.kind, c->kind);
    assert_int_equal(a.recheck_at_ms, c->recheck);
    if (c->kind == CU_PR_SET_CONDITION || c->kind == CU_PR_DEACTIVATE) {
        assert_int_equal(a.ready, c->ready);
        assert_string_equal(a.reason, c->reason);
        assert_string_equal(a.message, c->message);
    }
    if (c->kind == CU_PR_EVICT || c->kind == CU_PR_DEACTIVATE) {
        assert_string_equal(a.evict_reason, c->evict_reason);
        assert_string_equal(a.underlying_cause, c->cause);
        assert_string_equal(a.evict_message, c->evict_message);
        assert_int_equal(a.new_requeue_count, c->count);
    }
    if (c->kind == CU_PR_EVICT) {
        int64_t b = a.requeue_at_ms - c->now;
        assert_true(b >= c->backoff_lo);
        assert_true(b <= c->backoff_lo + c->backoff_lo / 10000);
    } else {
        assert_int_equal(a.requeue_at_ms, 0);
    }
}

static void test_decide_table(void **st)
{
    (void)st;
    for (size_t i = 0; i < sizeof(CASES) / sizeof(CASES[0]); i++)
        check_case(&CASES[i], &CASES[i].w);
}

/* Eviction and deactivation stop the timers: an evicted or inactive
 * workload past every deadline is left alone (only the condition moves). */
static void test_evicted_or_inactive_not_timed_out(void **st)
{
    (void)st;
    cu_pr_config cfg = cfg_base();
    cu_pr_wl w = WL(1, 1, 0, "WaitForStart", T0, 0, 0);
    w.evicted = 1;
    cu_pr_action a = cu_pr_decide(&cfg, &w, T0 + TIMEOUT * 10, 1);
    assert_int_equal(a.kind, CU_PR_NOTHING);
    assert_int_equal(a.recheck_at_ms, -1);
    w.evicted = 0;
    w.inactive = 1;
    a = cu_pr_decide(&cfg, &w, T0 + TIMEOUT * 10, 1);
    assert_int_equal(a.kind, CU_PR_NOTHING);
    /* the same workload active and not evicted is timed out */
    w.inactive = 0;
    a = cu_pr_decide(&cfg, &w, T0 + TIMEOUT * 10, 1);
    assert_int_equal(a.kind, CU_PR_EVICT);
}

static void test_eviction_message_long_names(void **st)
{
    (void)st;
    char ns[64], name[254], want[CU_PR_MSG_MAX];
    memset(ns, 'n', 63);
    ns[63] = 0;
    memset(name, 'w', 253);
    name[253] = 0;
    snprintf(want, sizeof(want), "Exceeded the PodsReady timeout %s/%s", ns, name);
    cu_pr_config cfg = cfg_base();
    cu_pr_wl w = WL(1, 0, 0, NULL, 0, 0, 0);
    w.ns = ns;
    w.name = name;
    cu_pr_action a = cu_pr_decide(&cfg, &w, T0 + TIMEOUT, 7);
    assert_int_equal(a.kind, CU_PR_EVICT);
    assert_string_equal(a.evict_message, want);
    assert_int_equal(strlen(a.evict_message), 31 + 63 + 1 + 253);
}

typedef struct backoff_case {
    int32_t n;
    int64_t lo; /* unjittered value */
    int exact;  /* capped: must equal lo */
} backoff_case;

static void test_backoff_doubling_and_cap(void **st)
{
    (void)st;
    cu_pr_config cfg = cfg_base();
    static const backoff_case cases[] = {
        { 0, BASE, 0 },     { 1, BASE, 0 },      { 2, 2 * BASE, 0 }, { 3, 4 * BASE, 0 },
        { 4, 8 * BASE, 0 }, { 6, 32 * BASE, 0 }, { 7, MAXB, 1 },     { 8, MAXB, 1 },
        { 63, MAXB, 1 },    { 64, MAXB, 1 },     { 1000, MAXB, 1 },  { INT32_MAX, MAXB, 1 },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        for (uint64_t seed = 0; seed < 50; seed++) {
            int64_t b = cu_pr_backoff_ms(&cfg, cases[i].n, seed);
            if (cases[i].exact) {
                assert_int_equal(b, cases[i].lo);
            } else {
                assert_true(b >= cases[i].lo);
                assert_true(b <= cases[i].lo + cases[i].lo / 10000);
            }
        }
    }
    /* a cap just above the 7th step: the 7th is 64 * base, not capped */
    cfg.backoff_max_ms = 64 * BASE + 1;
    int64_t b7 = cu_pr_backoff_ms(&cfg, 7, 99);
    assert_true(b7 >= 64 * BASE && b7 <= 64 * BASE + 1);
    /* huge values saturate instead of overflowing */
    cfg.backoff_base_ms = INT64_MAX / 4;
    cfg.backoff_max_ms = INT64_MAX;
    assert_int_equal(cu_pr_backoff_ms(&cfg, 40, 3), INT64_MAX);
    /* base 0: no wait */
    cfg.backoff_base_ms = 0;
    assert_int_equal(cu_pr_backoff_ms(&cfg, 5, 3), 0);
}

static void test_backoff_jitter_bounded_and_deterministic(void **st)
{
    (void)st;
    cu_pr_config cfg = cfg_base();
    cfg.backoff_base_ms = 10 * 1000 * 1000; /* 10000 s: jitter up to 1000 ms */
    cfg.backoff_max_ms = INT64_MAX;
    int64_t lo = INT64_MAX, hi = 0;
    for (uint64_t seed = 0; seed < 10000; seed++) {
        int64_t b = cu_pr_backoff_ms(&cfg, 1, seed);
        assert_true(b >= cfg.backoff_base_ms);
        assert_true(b < cfg.backoff_base_ms + cfg.backoff_base_ms / 10000);
        assert_int_equal(b, cu_pr_backoff_ms(&cfg, 1, seed));
        if (b < lo)
            lo = b;
        if (b > hi)
            hi = b;
    }
    /* the jitter is spread over its range, not constant */
    assert_true(lo - cfg.backoff_base_ms < 100);
    assert_true(hi - cfg.backoff_base_ms > 900);
}

static void test_job_pods_ready(void **st)
{
    (void)st;
    static const struct {
        int32_t count;
        int64_t ready, succeeded;
        int want;
    } cases[] = {
        { 3, 0, 0, 0 },
        { 3, 1, 1, 0 },
        { 3, 2, 1, 1 },
        { 3, 3, 0, 1 },
        { 3, 0, 3, 1 },
        { 3, 5, 0, 1 },
        { 1, 0, 0, 0 },
        { 0, 0, 0, 1 },
        { 3, -5, 3, 1 },
        { 3, -5, 2, 0 },
        { 2, INT64_MAX, INT64_MAX, 1 },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        assert_int_equal(cu_pr_job_pods_ready(cases[i].count, cases[i].ready, cases[i].succeeded),
                         cases[i].want);
}

static void test_block_admission(void **st)
{
    (void)st;
    static const struct {
        cu_pr_wl w;
        int not_ready;
    } wls[] = {
        { WL(0, 0, 0, NULL, 0, 0, 0), 0 }, /* pending: does not block */
        { WL(1, 0, 0, NULL, 0, 0, 0), 1 }, /* admitted, no condition */
        { WL(1, 1, 0, "WaitForStart", T0, 0, 0), 1 },
        { WL(1, 1, 0, "WaitForRecovery", T0, 0, 0), 1 },
        { WL(1, 1, 1, "Started", T0, 1, 0), 0 },
        { WL(1, 1, 1, "Recovered", T0, 1, 0), 0 },
        { WL(1, 1, 0, "WaitForStart", T0, 1, 0), 1 }, /* pods ready but not yet written */
    };
    for (size_t i = 0; i < sizeof(wls) / sizeof(wls[0]); i++)
        assert_int_equal(cu_pr_wl_not_ready(&wls[i].w), wls[i].not_ready);

    cu_pr_config cfg = cfg_base();
    assert_true(cu_pr_may_admit(&cfg, 3)); /* blockAdmission off */
    cfg.block_admission = 1;
    assert_false(cu_pr_may_admit(&cfg, 1));
    assert_true(cu_pr_may_admit(&cfg, 0));
    cfg.enable = 0;
    assert_true(cu_pr_may_admit(&cfg, 1));
}

static void test_queue_order_and_defaults(void **st)
{
    (void)st;
    cu_pr_config cfg;
    cu_pr_config_default(&cfg);
    assert_true(cfg.enable);
    assert_int_equal(cfg.timeout_ms, 30 * 60 * 1000);
    assert_int_equal(cfg.recovery_timeout_ms, cfg.timeout_ms);
    assert_false(cfg.block_admission);
    assert_false(cfg.requeue_at_creation);
    assert_int_equal(cfg.backoff_limit, -1);
    assert_int_equal(cfg.backoff_base_ms, 60000);
    assert_int_equal(cfg.backoff_max_ms, 3600000);

    assert_int_equal(cu_pr_queue_order_ms(&cfg, 100, 1, 900), 900);
    assert_int_equal(cu_pr_queue_order_ms(&cfg, 100, 0, 900), 100);
    cfg.requeue_at_creation = 1;
    assert_int_equal(cu_pr_queue_order_ms(&cfg, 100, 1, 900), 100);
}

/* A whole life: the caller applies each action the way the controller
 * does, and the clock jumps to each recheck time. */
static void apply(cu_pr_wl *w, const cu_pr_action *a, int64_t now)
{
    if (a->kind == CU_PR_SET_CONDITION) {
        if (!w->has_ready_cond || w->ready != a->ready)
            w->ready_ltt_ms = now;
        w->has_ready_cond = 1;
        w->ready = a->ready;
        w->ready_reason = a->reason;
    } else if (a->kind == CU_PR_EVICT) {
        w->admitted = 0; /* evicted, job suspended, admission cleared */
        w->requeue_count = a->new_requeue_count;
    } else if (a->kind == CU_PR_DEACTIVATE) {
        w->admitted = 0;
        w->inactive = 1;
        w->requeue_count = 0;
    }
}

static void test_lifecycle(void **st)
{
    (void)st;
    cu_pr_config cfg = cfg_base();
    cfg.backoff_limit = 2;
    cu_pr_wl w = WL(0, 0, 0, NULL, 0, 0, 0);
    int64_t now = T0 - 1000;
    cu_pr_action a = cu_pr_decide(&cfg, &w, now, 1);
    assert_int_equal(a.kind, CU_PR_SET_CONDITION);
    apply(&w, &a, now);

    int evictions = 0;
    for (int round = 0; round < 5 && !w.inactive; round++) {
        /* admitted; pods never become ready */
        now += 1000;
        w.admitted = 1;
        w.admitted_ltt_ms = now;
        a = cu_pr_decide(&cfg, &w, now, (uint64_t)round);
        assert_int_equal(a.kind, CU_PR_NOTHING); /* already WaitForStart */
        assert_int_equal(a.recheck_at_ms, now + TIMEOUT);
        now = a.recheck_at_ms;
        a = cu_pr_decide(&cfg, &w, now, (uint64_t)round);
        if (a.kind == CU_PR_EVICT) {
            evictions++;
            assert_int_equal(a.new_requeue_count, evictions);
            assert_true(a.requeue_at_ms >= now + (BASE << (evictions - 1)));
            apply(&w, &a, now);
            now = a.requeue_at_ms; /* backoff over: admitted again */
        } else {
            assert_int_equal(a.kind, CU_PR_DEACTIVATE);
            apply(&w, &a, now);
        }
    }
    assert_int_equal(evictions, 2);
    assert_true(w.inactive);

    /* a new life: starts, loses a pod, recovers, loses it for good */
    w = (cu_pr_wl)WL(1, 1, 0, "WaitForStart", 0, 0, 0);
    w.admitted_ltt_ms = now;
    w.job_pods_ready = 1;
    a = cu_pr_decide(&cfg, &w, now + 10, 2);
    assert_string_equal(a.reason, "Started");
    apply(&w, &a, now + 10);
    w.job_pods_ready = 0;
    a = cu_pr_decide(&cfg, &w, now + 20, 2);
    assert_string_equal(a.reason, "WaitForRecovery");
    apply(&w, &a, now + 20);
    w.job_pods_ready = 1;
    a = cu_pr_decide(&cfg, &w, now + 30, 2);
    assert_string_equal(a.reason, "Recovered");
    apply(&w, &a, now + 30);
    w.job_pods_ready = 0;
    a = cu_pr_decide(&cfg, &w, now + 40, 2);
    assert_string_equal(a.reason, "WaitForRecovery");
    assert_int_equal(a.recheck_at_ms, now + 40 + RECOVERY);
    apply(&w, &a, now + 40);
    a = cu_pr_decide(&cfg, &w, now + 40 + RECOVERY, 2);
    assert_int_equal(a.kind, CU_PR_EVICT);
    assert_string_equal(a.underlying_cause, "WaitForRecovery");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decide_table),
        cmocka_unit_test(test_evicted_or_inactive_not_timed_out),
        cmocka_unit_test(test_eviction_message_long_names),
        cmocka_unit_test(test_backoff_doubling_and_cap),
        cmocka_unit_test(test_backoff_jitter_bounded_and_deterministic),
        cmocka_unit_test(test_job_pods_ready),
        cmocka_unit_test(test_block_admission),
        cmocka_unit_test(test_queue_order_and_defaults),
        cmocka_unit_test(test_lifecycle),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
