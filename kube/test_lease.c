/*
 * test_lease.c - leader election against a real `cueue cluster` (started
 * here with fork/exec; faults through POST /cueue/faults), with short
 * timings (lease 1500 ms, renew 1000 ms, retry 200 ms): two candidates and
 * one leader, renewals, takeover after a killed leader's lease runs out,
 * quick takeover after a release, a leader whose renewals fail stops
 * before its lease could expire, client-go's defaults, bad options.
 *
 * The cueue binary is $CUEUE_BIN, else "cueue" next to this executable.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <ev.h>
#include <json-c/json.h>

#include "cu_kconfig.h"
#include "cu_lease.h"

/* ---------------- harness: a cluster process and a client ---------------- */

#define TEST_NAME "test_lease"
#include "test_cluster.h"

/* ---------------- candidates ---------------- */

typedef struct cand {
    const char *id;
    cu_lease *l;
    int started, stopped;
    int64_t started_mono, stopped_mono, started_wall, stopped_wall;
} cand;

static void on_started(cu_lease *l, void *ud)
{
    cand *c = ud;
    assert_true(cu_lease_leading(l));
    c->started++;
    c->started_mono = cu_clock_mono_ms();
    c->started_wall = cu_clock_wall_ms();
}

static void on_stopped(cu_lease *l, void *ud)
{
    cand *c = ud;
    assert_false(cu_lease_leading(l));
    c->stopped++;
    c->stopped_mono = cu_clock_mono_ms();
    c->stopped_wall = cu_clock_wall_ms();
}

static void cand_start(cluster *k, cand *c, const char *ns, int lease, int renew, int retry)
{
    cu_lease_opts o;
    memset(&o, 0, sizeof o);
    o.ns = ns;
    o.name = "c1f6bfd2.kueue.x-k8s.io";
    o.identity = c->id;
    o.lease_ms = lease;
    o.renew_ms = renew;
    o.retry_ms = retry;
    o.on_started = on_started;
    o.on_stopped = on_stopped;
    o.ud = c;
    cu_diag d;
    cu_diag_init(&d);
    c->l = cu_lease_start(k->c, &o, &d);
    assert_non_null(c->l);
    assert_int_equal(d.n, 0);
    cu_diag_free(&d);
    assert_false(cu_lease_leading(c->l)); /* nothing happens inside start */
}

static void cand_short(cluster *k, cand *c, const char *ns)
{
    cand_start(k, c, ns, 1500, 1000, 200);
}

static int leads(void *ud) { return cu_lease_leading(((cand *)ud)->l); }

static int stopped(void *ud) { return ((cand *)ud)->stopped > 0; }

typedef struct pair {
    cand *a, *b;
    int both; /* ever both leading */
} pair;

static int one_leads(void *ud)
{
    pair *p = ud;
    int a = cu_lease_leading(p->a->l), b = cu_lease_leading(p->b->l);
    if (a && b)
        p->both = 1;
    return a || b;
}

static int never(void *ud)
{
    one_leads(ud);
    return 0;
}

typedef struct lease_rec {
    char holder[128];
    int64_t renew_wall, acquire_wall;
    int transitions, dur_s;
} lease_rec;

static void mk_ns(cluster *k, const char *ns)
{
    char b[256];
    snprintf(b, sizeof b,
             "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":"
             "\"%s\"}}",
             ns);
    int code = kreq(k, "POST", "/api/v1/namespaces", b, NULL);
    assert_true(code == 201 || code == 200);
}

static void get_lease(cluster *k, const char *ns, lease_rec *out)
{
    char p[256], *body = NULL;
    snprintf(p, sizeof p,
             "/apis/coordination.k8s.io/v1/namespaces/%s/leases/"
             "c1f6bfd2.kueue.x-k8s.io",
             ns);
    assert_int_equal(kreq(k, "GET", p, NULL, &body), 200);
    json_object *o = json_tokener_parse(body), *sp = NULL, *v = NULL;
    assert_non_null(o);
    assert_true(json_object_object_get_ex(o, "spec", &sp));
    memset(out, 0, sizeof *out);
    if (json_object_object_get_ex(sp, "holderIdentity", &v))
        snprintf(out->holder, sizeof out->holder, "%s", json_object_get_string(v));
    if (json_object_object_get_ex(sp, "renewTime", &v))
        assert_int_equal(cu_time_parse(json_object_get_string(v), &out->renew_wall), CU_OK);
    if (json_object_object_get_ex(sp, "acquireTime", &v))
        assert_int_equal(cu_time_parse(json_object_get_string(v), &out->acquire_wall), CU_OK);
    if (json_object_object_get_ex(sp, "leaseTransitions", &v))
        out->transitions = json_object_get_int(v);
    if (json_object_object_get_ex(sp, "leaseDurationSeconds", &v))
        out->dur_s = json_object_get_int(v);
    json_object_put(o);
    free(body);
}

/* ---------------- tests ---------------- */

static void test_one_leader_and_renewals(void **state)
{
    cluster *k = *state;
    mk_ns(k, "lease-one");
    cand a = { .id = "node-a_1" }, b = { .id = "node-b_2" };
    cand_short(k, &a, "lease-one");
    cand_short(k, &b, "lease-one");
    pair p = { &a, &b, 0 };
    assert_true(run_until(k, one_leads, &p, 3000));
    cand *leader = cu_lease_leading(a.l) ? &a : &b, *other = leader == &a ? &b : &a;
    lease_rec r1, r2;
    get_lease(k, "lease-one", &r1);
    assert_string_equal(r1.holder, leader->id);
    assert_int_equal(r1.dur_s, 2); /* 1500 ms, rounded up to whole seconds */
    assert_int_equal(r1.transitions, 0);

    /* more than two lease durations: the leader renews, nobody else leads */
    run_until(k, never, &p, 3500);
    assert_false(p.both);
    assert_true(cu_lease_leading(leader->l));
    assert_false(cu_lease_leading(other->l));
    assert_int_equal(leader->started, 1);
    assert_int_equal(other->started, 0);
    assert_int_equal(leader->stopped + other->stopped, 0);
    get_lease(k, "lease-one", &r2);
    assert_string_equal(r2.holder, leader->id);
    assert_int_equal(r2.transitions, 0);
    assert_int_equal(r2.acquire_wall, r1.acquire_wall); /* same term */
    assert_true(r2.renew_wall >= r1.renew_wall + 3000);
    assert_true(cu_clock_wall_ms() - r2.renew_wall < 1000); /* renewed recently */

    cu_lease_free(a.l);
    cu_lease_free(b.l);
    run_for(k, 50);
}

static void test_killed_leader_taken_over_after_lease(void **state)
{
    cluster *k = *state;
    mk_ns(k, "lease-kill");
    cand a = { .id = "node-a" }, b = { .id = "node-b" };
    cand_short(k, &a, "lease-kill");
    assert_true(run_until(k, leads, &a, 3000));
    cand_short(k, &b, "lease-kill");
    run_for(k, 700); /* b sees a's renewals */
    assert_false(cu_lease_leading(b.l));

    int64_t kill_mono = cu_clock_mono_ms();
    cu_lease_free(a.l); /* dies without releasing */
    run_for(k, 300);    /* let a renewal already on the wire land */
    lease_rec r;
    get_lease(k, "lease-kill", &r);
    assert_string_equal(r.holder, "node-a");
    assert_true(run_until(k, leads, &b, 6000));
    /* never before the lease ran out after a's last renewal ... */
    if (b.started_wall - r.renew_wall < 1500)
        fail_msg("took over %lld ms after the last renewal (lease 1500 ms)",
                 (long long)(b.started_wall - r.renew_wall));
    /* ... but soon after: lease (rounded to 2 s) + a retry period + slack */
    assert_true(b.started_mono - kill_mono <= 2000 + 200 + 1000);
    assert_int_equal(b.started, 1);
    assert_int_equal(a.started, 1);
    assert_int_equal(a.stopped, 0); /* killed: no callbacks */
    get_lease(k, "lease-kill", &r);
    assert_string_equal(r.holder, "node-b");
    assert_int_equal(r.transitions, 1);
    cu_lease_free(b.l);
    run_for(k, 50);
}

static void rel_done(void *ud) { (*(int *)ud)++; }

typedef struct rel_wait {
    int *done;
    cand *b;
} rel_wait;

static int released_and_taken(void *ud)
{
    rel_wait *w = ud;
    return *w->done && cu_lease_leading(w->b->l);
}

static void test_release_lets_other_take_over_quickly(void **state)
{
    cluster *k = *state;
    mk_ns(k, "lease-rel");
    cand a = { .id = "node-a" }, b = { .id = "node-b" };
    cand_short(k, &a, "lease-rel");
    assert_true(run_until(k, leads, &a, 3000));
    cand_short(k, &b, "lease-rel");
    run_for(k, 700);
    assert_false(cu_lease_leading(b.l));

    int done = 0;
    int64_t t0 = cu_clock_mono_ms();
    cu_lease_release(a.l, rel_done, &done);
    assert_int_equal(done, 0); /* asynchronous */
    assert_false(cu_lease_leading(a.l));
    assert_int_equal(a.stopped, 1); /* gave up: on_stopped */
    rel_wait w = { &done, &b };
    assert_true(run_until(k, released_and_taken, &w, 3000));
    assert_int_equal(done, 1);
    /* well before a's lease would have expired */
    if (b.started_mono - t0 >= 1000)
        fail_msg("takeover after release took %lld ms", (long long)(b.started_mono - t0));
    lease_rec r;
    get_lease(k, "lease-rel", &r);
    assert_string_equal(r.holder, "node-b");
    assert_int_equal(r.transitions, 1);
    run_for(k, 500);
    assert_int_equal(a.started, 1); /* a stopped for good */
    cu_lease_free(a.l);
    cu_lease_free(b.l);
    run_for(k, 50);
}

static void test_failed_renewals_stop_before_expiry(void **state)
{
    cluster *k = *state;
    mk_ns(k, "lease-fail");
    cand a = { .id = "node-a" }, b = { .id = "node-b" };
    cand_short(k, &a, "lease-fail");
    assert_true(run_until(k, leads, &a, 3000));
    cand_short(k, &b, "lease-fail");
    run_for(k, 600);

    fault(k, "{\"respond\":{\"match\":\"^PUT /apis/coordination.k8s.io/v1/namespaces/"
             "lease-fail/leases/\",\"code\":500,\"times\":-1}}");
    run_for(k, 100);
    lease_rec r;
    get_lease(k, "lease-fail", &r); /* the last renewal that got through */
    assert_string_equal(r.holder, "node-a");
    assert_true(run_until(k, stopped, &a, 3000));
    int64_t after = a.stopped_wall - r.renew_wall;
    /* renew_ms after the last good renewal, and before lease_ms */
    if (after >= 1500 || after < 800)
        fail_msg("stopped leading %lld ms after the last renewal (renew 1000, lease 1500)",
                 (long long)after);
    assert_false(cu_lease_leading(a.l));
    /* while writes fail nobody leads */
    run_for(k, 1500);
    assert_false(cu_lease_leading(a.l));
    assert_false(cu_lease_leading(b.l));
    assert_int_equal(a.started, 1);
    assert_int_equal(b.started, 0);
    /* the API recovers: the lease is taken again (whoever gets it), by one */
    fault(k, "{\"clear\":true}");
    pair p = { &a, &b, 0 };
    assert_true(run_until(k, one_leads, &p, 4000));
    run_until(k, never, &p, 1000);
    assert_false(p.both);
    cu_lease_free(a.l);
    cu_lease_free(b.l);
    run_for(k, 50);
}

static int int_set(void *ud) { return *(int *)ud != 0; }

static void test_defaults_and_release_record(void **state)
{
    cluster *k = *state;
    mk_ns(k, "lease-def");
    cand a = { .id = "node-a" };
    cand_start(k, &a, "lease-def", 0, 0, 0);
    assert_true(run_until(k, leads, &a, 3000)); /* the first attempt is immediate */
    lease_rec r;
    get_lease(k, "lease-def", &r);
    assert_string_equal(r.holder, "node-a");
    assert_int_equal(r.dur_s, 15); /* client-go's LeaseDuration */
    int done = 0;
    cu_lease_release(a.l, rel_done, &done);
    assert_true(run_until(k, int_set, &done, 3000));
    assert_int_equal(done, 1);
    get_lease(k, "lease-def", &r);
    assert_string_equal(r.holder, "");
    assert_int_equal(r.transitions, 0);
    cu_lease_free(a.l);
    /* releasing a candidate that never led calls done too */
    cand c = { .id = "node-c" };
    cand_start(k, &c, "lease-none", 1500, 1000, 200); /* its namespace does not exist */
    run_for(k, 300);
    assert_false(cu_lease_leading(c.l));
    done = 0;
    cu_lease_release(c.l, rel_done, &done);
    assert_int_equal(done, 0);
    run_for(k, 100);
    assert_int_equal(done, 1);
    assert_int_equal(c.stopped, 0);
    cu_lease_free(c.l);
}

/* A release while a renewal is in flight (the server delays it): the
 * renewal the server applies must not leave the release with a stale
 * resourceVersion (refused with 409, the Lease kept until it expires). */
static void test_release_during_renewal(void **state)
{
    cluster *k = *state;
    mk_ns(k, "lease-mid");
    cand a = { .id = "node-a" };
    cand_short(k, &a, "lease-mid");
    assert_true(run_until(k, leads, &a, 3000));
    fault(k, "{\"delayMs\":400,\"match\":\"^PUT /apis/coordination.k8s.io/v1/namespaces/"
             "lease-mid/leases/\",\"times\":1}");
    run_for(k, 300); /* a renewal (every 200 ms) is now held by the server */
    int done = 0;
    cu_lease_release(a.l, rel_done, &done);
    assert_true(run_until(k, int_set, &done, 3000));
    lease_rec r;
    get_lease(k, "lease-mid", &r);
    assert_string_equal(r.holder, "");
    cu_lease_free(a.l);
    run_for(k, 50);
}

/* A leader paused past renew_ms (as by SIGSTOP) is not leading the moment
 * it wakes, before its loop has run a single timer. */
static void test_paused_leader_not_leading(void **state)
{
    cluster *k = *state;
    mk_ns(k, "lease-pause");
    cand a = { .id = "node-a" };
    cand_short(k, &a, "lease-pause");
    assert_true(run_until(k, leads, &a, 3000));
    struct timespec ts = { 1, 200 * 1000000L }; /* past renew_ms (1000) */
    nanosleep(&ts, NULL);
    assert_false(cu_lease_leading(a.l));
    cu_lease_free(a.l);
    run_for(k, 50);
}

static void test_bad_options(void **state)
{
    cluster *k = *state;
    struct {
        const char *ns, *name, *id;
        int lease, renew, retry;
        const char *want;
    } cases[] = {
        { "ns", "l", "me", 1000, 1000, 200, "lease_ms: must be greater than renew_ms" },
        { "ns", "l", "me", 15000, 1000, 900, "renew_ms: must be greater than 1.2 x retry_ms" },
        { "ns", "l", "me", 0, 20000, 0, "lease_ms: must be greater than renew_ms (got 15000" },
        { "ns", NULL, "me", 0, 0, 0, "name: missing" },
        { "ns", "l", "", 0, 0, 0, "identity: missing" },
        { NULL, "l", "me", 0, 0, 0, "ns: missing" },
        { "a/b", "l", "me", 0, 0, 0, "ns: must not contain '/'" },
        { "ns", "l", "me", -1, 0, 0, "must be >= 0" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cu_lease_opts o;
        memset(&o, 0, sizeof o);
        o.ns = cases[i].ns;
        o.name = cases[i].name;
        o.identity = cases[i].id;
        o.lease_ms = cases[i].lease;
        o.renew_ms = cases[i].renew;
        o.retry_ms = cases[i].retry;
        cu_diag d;
        cu_diag_init(&d);
        assert_null(cu_lease_start(k->c, &o, &d));
        assert_true(d.n >= 1);
        if (!strstr(d.msgs[0], cases[i].want))
            fail_msg("case %zu: \"%s\" does not contain \"%s\"", i, d.msgs[0], cases[i].want);
        cu_diag_free(&d);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_bad_options, clear_faults),
        cmocka_unit_test_setup(test_one_leader_and_renewals, clear_faults),
        cmocka_unit_test_setup(test_killed_leader_taken_over_after_lease, clear_faults),
        cmocka_unit_test_setup(test_release_lets_other_take_over_quickly, clear_faults),
        cmocka_unit_test_setup(test_failed_renewals_stop_before_expiry, clear_faults),
        cmocka_unit_test_setup(test_defaults_and_release_record, clear_faults),
        cmocka_unit_test_setup(test_release_during_renewal, clear_faults),
        cmocka_unit_test_setup(test_paused_leader_not_leading, clear_faults),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
