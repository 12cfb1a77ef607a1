/*
 * test_informer.c - the informer against a real `cueue cluster` (started
 * here with fork/exec, faults injected through POST /cueue/faults):
 * paginated initial LIST, events in order, resume after dropped watches
 * without duplicates, 410 (in-stream and on watch open) -> relist with
 * deletions for vanished objects, silent-watch restart, selectors, and
 * bad options.
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

#include "cu_informer.h"
#include "cu_json.h"
#include "cu_kconfig.h"

/* ---------------- harness: a cluster process and a client ---------------- */

#define TEST_NAME "test_informer"
#include "test_cluster.h"
#include "test_deep.h"

/* ---------------- objects ---------------- */

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

static void mk_cm(cluster *k, const char *ns, const char *name, const char *app, const char *v)
{
    char b[512], p[256];
    snprintf(b, sizeof b,
             "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"%s\","
             "\"labels\":{\"app\":\"%s\"}},\"data\":{\"v\":\"%s\"}}",
             name, app, v);
    snprintf(p, sizeof p, "/api/v1/namespaces/%s/configmaps", ns);
    assert_int_equal(kreq(k, "POST", p, b, NULL), 201);
}

static void patch_cm(cluster *k, const char *ns, const char *name, const char *patch)
{
    char p[256];
    snprintf(p, sizeof p, "/api/v1/namespaces/%s/configmaps/%s", ns, name);
    assert_int_equal(kreq(k, "PATCH", p, patch, NULL), 200);
}

static void set_v(cluster *k, const char *ns, const char *name, const char *v)
{
    char b[128];
    snprintf(b, sizeof b, "{\"data\":{\"v\":\"%s\"}}", v);
    patch_cm(k, ns, name, b);
}

static void rm_cm(cluster *k, const char *ns, const char *name)
{
    char p[256];
    snprintf(p, sizeof p, "/api/v1/namespaces/%s/configmaps/%s", ns, name);
    assert_int_equal(kreq(k, "DELETE", p, NULL, NULL), 200);
}

/* ---------------- a consumer: decodes into C structs at once ---------------- */

typedef struct rec {
    cu_ievent ev;
    char name[64], ns[64], rv[32], v[32];
} rec;

typedef struct recorder {
    rec r[512];
    int n;
    int synced;    /* on_synced calls */
    int n_at_sync; /* events before on_synced */
    int want;      /* for wait_events */
} recorder;

static const char *js(json_object *o, const char *k)
{
    const char *s = cu_jstr(o, k);
    return s ? s : "";
}

static void on_event(cu_informer *inf, cu_ievent ev, json_object *obj, void *ud)
{
    recorder *R = ud;
    (void)inf;
    if (R->n >= (int)(sizeof R->r / sizeof R->r[0]))
        return;
    rec *r = &R->r[R->n++];
    json_object *md = NULL, *data = NULL;
    json_object_object_get_ex(obj, "metadata", &md);
    json_object_object_get_ex(obj, "data", &data);
    r->ev = ev;
    snprintf(r->name, sizeof r->name, "%s", js(md, "name"));
    snprintf(r->ns, sizeof r->ns, "%s", js(md, "namespace"));
    snprintf(r->rv, sizeof r->rv, "%s", js(md, "resourceVersion"));
    snprintf(r->v, sizeof r->v, "%s", js(data, "v"));
}

static void on_synced(cu_informer *inf, void *ud)
{
    recorder *R = ud;
    (void)inf;
    R->synced++;
    R->n_at_sync = R->n;
}

static int is_synced(void *ud) { return ((recorder *)ud)->synced > 0; }

static int has_events(void *ud)
{
    recorder *R = ud;
    return R->n >= R->want;
}

static cu_informer *start(cluster *k, recorder *R, const char *ns, int page, int silence_ms,
                          const char *lsel, const char *fsel)
{
    char path[256];
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/configmaps", ns);
    cu_informer_opts o;
    memset(&o, 0, sizeof o);
    o.path = path;
    o.page_size = page;
    o.silence_ms = silence_ms;
    o.label_selector = lsel;
    o.field_selector = fsel;
    o.on_event = on_event;
    o.on_synced = on_synced;
    o.ud = R;
    cu_diag d;
    cu_diag_init(&d);
    cu_informer *inf = cu_informer_start(k->c, &o, &d);
    assert_non_null(inf);
    assert_int_equal(d.n, 0);
    cu_diag_free(&d);
    assert_false(cu_informer_synced(inf)); /* nothing is delivered from inside start */
    assert_int_equal(R->n, 0);
    assert_true(run_until(k, is_synced, R, 10000));
    assert_true(cu_informer_synced(inf));
    return inf;
}

static void wait_events(cluster *k, recorder *R, int n)
{
    R->want = n;
    if (!run_until(k, has_events, R, 10000))
        fail_msg("expected %d events, got %d", n, R->n);
}

static void expect(const rec *r, cu_ievent ev, const char *name, const char *v)
{
    if (r->ev != ev || strcmp(r->name, name) != 0 || (v && strcmp(r->v, v) != 0))
        fail_msg("expected event %d %s v=%s, got %d %s v=%s", (int)ev, name, v ? v : "*",
                 (int)r->ev, r->name, r->v);
}

/* No (name, rv) pair delivered twice. */
static void assert_no_duplicates(const recorder *R)
{
    for (int i = 0; i < R->n; i++)
        for (int j = i + 1; j < R->n; j++)
            if (!strcmp(R->r[i].name, R->r[j].name) && !strcmp(R->r[i].rv, R->r[j].rv) &&
                R->r[i].ev == R->r[j].ev)
                fail_msg("duplicate event %d for %s rv %s (#%d and #%d)", (int)R->r[i].ev,
                         R->r[i].name, R->r[i].rv, i, j);
}

static void stop_and_settle(cluster *k, cu_informer *inf)
{
    cu_informer_stop(inf);
    run_for(k, 50); /* deferred completions of cancelled requests */
}

/* ---------------- tests ---------------- */

static void test_list_paginated(void **state)
{
    cluster *k = *state;
    mk_ns(k, "inf-page");
    const char *names[] = { "cm-0", "cm-1", "cm-2", "cm-3", "cm-4" };
    for (int i = 0; i < 5; i++) {
        char v[8];
        snprintf(v, sizeof v, "%d", i);
        mk_cm(k, "inf-page", names[i], "x", v);
    }
    /* another namespace's objects are not ours */
    mk_ns(k, "inf-other");
    mk_cm(k, "inf-other", "cm-9", "x", "9");

    recorder *R = calloc(1, sizeof *R);
    cu_informer *inf = start(k, R, "inf-page", 2, 0, NULL, NULL);
    assert_int_equal(R->synced, 1);
    assert_int_equal(R->n_at_sync, 5); /* synced only after the whole list */
    assert_int_equal(R->n, 5);
    int seen[5] = { 0 };
    for (int i = 0; i < R->n; i++) {
        assert_int_equal(R->r[i].ev, CU_IEV_ADDED);
        assert_string_equal(R->r[i].ns, "inf-page");
        int idx = R->r[i].name[3] - '0';
        assert_true(idx >= 0 && idx < 5);
        char v[8];
        snprintf(v, sizeof v, "%d", idx);
        assert_string_equal(R->r[i].v, v);
        seen[idx]++;
    }
    for (int i = 0; i < 5; i++)
        assert_int_equal(seen[i], 1);
    cu_informer_stats st;
    cu_informer_stats_get(inf, &st);
    assert_int_equal(st.lists, 3); /* 2 + 2 + 1 */
    assert_int_equal(st.events, 5);
    assert_int_equal(st.relists_410, 0);
    /* the RV to watch from is the list's, not older than any item's */
    long long lrv = atoll(cu_informer_rv(inf));
    for (int i = 0; i < R->n; i++)
        assert_true(lrv >= atoll(R->r[i].rv));
    /* the watch is running: a new object arrives */
    mk_cm(k, "inf-page", "cm-5", "x", "5");
    wait_events(k, R, 6);
    expect(&R->r[5], CU_IEV_ADDED, "cm-5", "5");
    run_for(k, 300);
    assert_int_equal(R->n, 6);
    assert_int_equal(R->synced, 1);
    stop_and_settle(k, inf);
    free(R);
}

static void test_events_in_order(void **state)
{
    cluster *k = *state;
    mk_ns(k, "inf-order");
    recorder *R = calloc(1, sizeof *R);
    cu_informer *inf = start(k, R, "inf-order", 0, 0, NULL, NULL);
    assert_int_equal(R->n, 0);
    mk_cm(k, "inf-order", "a", "x", "1");
    set_v(k, "inf-order", "a", "2");
    mk_cm(k, "inf-order", "b", "x", "1");
    set_v(k, "inf-order", "a", "3");
    rm_cm(k, "inf-order", "a");
    set_v(k, "inf-order", "b", "2");
    wait_events(k, R, 6);
    expect(&R->r[0], CU_IEV_ADDED, "a", "1");
    expect(&R->r[1], CU_IEV_MODIFIED, "a", "2");
    expect(&R->r[2], CU_IEV_ADDED, "b", "1");
    expect(&R->r[3], CU_IEV_MODIFIED, "a", "3");
    expect(&R->r[4], CU_IEV_DELETED, "a", "3"); /* last known state */
    expect(&R->r[5], CU_IEV_MODIFIED, "b", "2");
    for (int i = 1; i < R->n; i++)
        assert_true(atoll(R->r[i].rv) > atoll(R->r[i - 1].rv));
    assert_string_equal(cu_informer_rv(inf), R->r[5].rv);
    run_for(k, 300);
    assert_int_equal(R->n, 6);
    stop_and_settle(k, inf);
    free(R);
}

static void test_resume_after_drop(void **state)
{
    cluster *k = *state;
    mk_ns(k, "inf-drop");
    mk_cm(k, "inf-drop", "a", "x", "1");
    mk_cm(k, "inf-drop", "b", "x", "1");
    recorder *R = calloc(1, sizeof *R);
    cu_informer *inf = start(k, R, "inf-drop", 0, 0, NULL, NULL);
    assert_int_equal(R->n, 2);
    mk_cm(k, "inf-drop", "c", "x", "1");
    wait_events(k, R, 3);
    cu_informer_stats before;
    cu_informer_stats_get(inf, &before);

    fault(k, "{\"dropWatches\":true}");
    set_v(k, "inf-drop", "a", "2"); /* while the watch is down or coming back */
    mk_cm(k, "inf-drop", "d", "x", "1");
    wait_events(k, R, 5);
    fault(k, "{\"dropWatches\":true}"); /* twice */
    rm_cm(k, "inf-drop", "b");
    wait_events(k, R, 6);
    run_for(k, 500);

    assert_int_equal(R->n, 6);
    expect(&R->r[3], CU_IEV_MODIFIED, "a", "2");
    expect(&R->r[4], CU_IEV_ADDED, "d", "1");
    expect(&R->r[5], CU_IEV_DELETED, "b", NULL);
    assert_no_duplicates(R);
    cu_informer_stats st;
    cu_informer_stats_get(inf, &st);
    assert_true(st.watches >= before.watches + 2); /* re-watched after each drop */
    assert_int_equal(st.lists, before.lists);      /* ... from the RV, without a relist */
    assert_int_equal(st.relists_410, 0);
    stop_and_settle(k, inf);
    free(R);
}

/* Objects a, b, c, e listed; while the informer cannot see (stalled
 * watch) b is deleted, c changed, d created and the history compacted;
 * drop: re-watch from the old RV gets 410 -> relist. */
static void relist_case(cluster *k, const char *ns, int drop)
{
    mk_ns(k, ns);
    mk_cm(k, ns, "a", "x", "1");
    mk_cm(k, ns, "b", "x", "1");
    mk_cm(k, ns, "c", "x", "1");
    recorder *R = calloc(1, sizeof *R);
    cu_informer *inf = start(k, R, ns, 2, 0, NULL, NULL);
    mk_cm(k, ns, "e", "x", "1");
    wait_events(k, R, 4);

    fault(k, "{\"stallWatches\":true}");
    run_for(k, 700); /* the server looks at the stall flag every 500 ms */
    rm_cm(k, ns, "b");
    set_v(k, ns, "c", "2");
    mk_cm(k, ns, "d", "x", "1");
    rm_cm(k, ns, "e");
    fault(k, "{\"compact\":true}");
    if (drop)
        fault(k, "{\"dropWatches\":true}"); /* ends when the stall ends; re-watch -> HTTP 410 */
    run_for(k, 200);
    assert_int_equal(R->n, 4);            /* nothing seen while stalled */
    fault(k, "{\"stallWatches\":false}"); /* without drop: in-stream ERROR 410 */

    wait_events(k, R, 8);
    run_for(k, 500);
    assert_int_equal(R->n, 8);
    /* relist: changes in list order, then deletions (any order) */
    int got_b = 0, got_e = 0, got_c = 0, got_d = 0;
    for (int i = 4; i < 8; i++) {
        rec *r = &R->r[i];
        if (r->ev == CU_IEV_DELETED && !strcmp(r->name, "b")) {
            got_b++;
            assert_string_equal(r->ns, ns); /* tombstone carries the key */
            assert_true(i >= 6);
        } else if (r->ev == CU_IEV_DELETED && !strcmp(r->name, "e")) {
            got_e++;
            assert_string_equal(r->ns, ns);
            assert_true(i >= 6);
        } else if (r->ev == CU_IEV_MODIFIED && !strcmp(r->name, "c")) {
            got_c++;
            assert_string_equal(r->v, "2");
        } else if (r->ev == CU_IEV_ADDED && !strcmp(r->name, "d")) {
            got_d++;
        } else {
            fail_msg("unexpected event %d for %s after relist", (int)r->ev, r->name);
        }
    }
    assert_int_equal(got_b + got_e + got_c + got_d, 4);
    assert_int_equal(got_b * got_e * got_c * got_d, 1);
    cu_informer_stats st;
    cu_informer_stats_get(inf, &st);
    assert_int_equal(st.relists_410, 1);
    assert_int_equal(st.lists, 2 + 2); /* 2 pages, then 2 pages again */
    /* watching again after the relist */
    mk_cm(k, ns, "f", "x", "1");
    wait_events(k, R, 9);
    expect(&R->r[8], CU_IEV_ADDED, "f", "1");
    fault(k, "{\"clear\":true}");
    stop_and_settle(k, inf);
    free(R);
}

static void test_relist_after_410_in_stream(void **state) { relist_case(*state, "inf-410a", 0); }

static void test_relist_after_410_on_watch(void **state) { relist_case(*state, "inf-410b", 1); }

/* churn elsewhere moves the global RV, so the cluster sends bookmarks */
typedef struct churn {
    cluster *k;
    ev_timer t;
    int n;
} churn;

static void churn_done(cu_kclient *c, const cu_kresp *r, void *ud)
{
    (void)c;
    (void)r;
    (void)ud;
}

static void churn_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    churn *ch = (churn *)((char *)w - offsetof(churn, t));
    (void)loop;
    (void)revents;
    char b[256];
    snprintf(b, sizeof b,
             "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
             "\"churn-%d\"}}",
             ch->n++);
    cu_kclient_request(ch->k->c, "POST", "/api/v1/namespaces/inf-churn/configmaps", b, strlen(b),
                       "application/json", churn_done, NULL);
}

static int restarted(void *ud)
{
    cu_informer_stats st;
    cu_informer_stats_get(ud, &st);
    return st.silent_restarts > 0;
}

static void test_silent_watch_restart(void **state)
{
    cluster *k = *state;
    mk_ns(k, "inf-quiet");
    mk_ns(k, "inf-churn");
    mk_cm(k, "inf-quiet", "a", "x", "1");
    churn ch = { k, { 0 }, 0 };
    ev_timer_init(&ch.t, churn_cb, 0.1, 0.1);
    ev_timer_start(k->loop, &ch.t);

    recorder *R = calloc(1, sizeof *R);
    cu_informer *inf = start(k, R, "inf-quiet", 0, 1500, NULL, NULL);
    char rv0[32];
    snprintf(rv0, sizeof rv0, "%s", cu_informer_rv(inf));
    /* bookmarks (every ~0.5 s while the RV moves) keep a healthy watch alive */
    run_for(k, 3000);
    cu_informer_stats st;
    cu_informer_stats_get(inf, &st);
    assert_int_equal(st.silent_restarts, 0);
    assert_int_equal(st.watches, 1);
    assert_int_equal(R->n, 1);
    assert_true(atoll(cu_informer_rv(inf)) > atoll(rv0)); /* BOOKMARK moved the RV only */

    /* a stalled watch is silent: restarted after silence_ms */
    fault(k, "{\"stallWatches\":true}");
    run_for(k, 700); /* the server looks at the stall flag every 500 ms */
    int64_t t0 = cu_clock_mono_ms();
    mk_cm(k, "inf-quiet", "b", "x", "1");
    assert_true(run_until(k, restarted, inf, 5000));
    assert_true(cu_clock_mono_ms() - t0 <= 1500 + 500); /* silence_ms after the last line */
    assert_int_equal(R->n, 1);
    fault(k, "{\"stallWatches\":false}");
    wait_events(k, R, 2);
    expect(&R->r[1], CU_IEV_ADDED, "b", "1");
    run_for(k, 500);
    assert_int_equal(R->n, 2);
    cu_informer_stats_get(inf, &st);
    assert_true(st.watches >= 2);
    assert_int_equal(st.lists, 1); /* resumed from the RV, no relist */
    assert_int_equal(st.relists_410, 0);
    ev_timer_stop(k->loop, &ch.t);
    fault(k, "{\"clear\":true}");
    stop_and_settle(k, inf);
    free(R);
}

static void test_selectors(void **state)
{
    cluster *k = *state;
    mk_ns(k, "inf-sel");
    mk_cm(k, "inf-sel", "web-1", "web", "1");
    mk_cm(k, "inf-sel", "web-2", "web", "1");
    mk_cm(k, "inf-sel", "db-1", "db", "1");
    mk_cm(k, "inf-sel", "other", "cache", "1");
    recorder *R = calloc(1, sizeof *R);
    /* needs encoding: spaces, parentheses, commas, '!' and '=' */
    cu_informer *inf = start(k, R, "inf-sel", 1, 0, "app in (web, db)", "metadata.name!=web-2");
    assert_int_equal(R->n, 2);
    int w1 = 0, d1 = 0;
    for (int i = 0; i < 2; i++) {
        w1 += !strcmp(R->r[i].name, "web-1");
        d1 += !strcmp(R->r[i].name, "db-1");
    }
    assert_int_equal(w1, 1);
    assert_int_equal(d1, 1);
    mk_cm(k, "inf-sel", "web-3", "web", "1");
    set_v(k, "inf-sel", "web-2", "2"); /* excluded by field */
    set_v(k, "inf-sel", "other", "2"); /* excluded by label */
    patch_cm(k, "inf-sel", "other", "{\"metadata\":{\"labels\":{\"app\":\"web\"}}}"); /* enters */
    patch_cm(k, "inf-sel", "db-1", "{\"metadata\":{\"labels\":{\"app\":\"gone\"}}}"); /* leaves */
    wait_events(k, R, 5);
    run_for(k, 300);
    assert_int_equal(R->n, 5);
    expect(&R->r[2], CU_IEV_ADDED, "web-3", "1");
    expect(&R->r[3], CU_IEV_ADDED, "other", "2");
    expect(&R->r[4], CU_IEV_DELETED, "db-1", NULL);
    stop_and_settle(k, inf);
    free(R);
}

/* The continue token expires between pages (history compacted): the pass
 * starts again from page 1, and nothing is reported twice. */
typedef struct cont_ctx {
    cluster *k;
    recorder R;
    int step;
} cont_ctx;

static void compact_done(cu_kclient *c, const cu_kresp *r, void *ud)
{
    cont_ctx *x = ud;
    (void)c;
    assert_int_equal(r->code, 200);
    x->step = 3;
}

static void moved_done(cu_kclient *c, const cu_kresp *r, void *ud)
{
    cont_ctx *x = ud;
    static const char cmd[] = "{\"compact\":true}";
    assert_int_equal(r->code, 201);
    x->step = 2;
    cu_kclient_request(c, "POST", "/cueue/faults", cmd, strlen(cmd), "application/json",
                       compact_done, x);
}

static void cont_event(cu_informer *inf, cu_ievent ev, json_object *obj, void *ud)
{
    cont_ctx *x = ud;
    on_event(inf, ev, obj, &x->R);
    if (x->step == 0) {
        /* after page 1: move the RV on elsewhere, then compact */
        static const char cm[] = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
                                 "\"metadata\":{\"name\":\"mover\"}}";
        x->step = 1;
        cu_kclient_request(x->k->c, "POST", "/api/v1/namespaces/inf-cont2/configmaps", cm,
                           strlen(cm), "application/json", moved_done, x);
    }
}

static void cont_synced(cu_informer *inf, void *ud) { on_synced(inf, &((cont_ctx *)ud)->R); }

static int cont_is_synced(void *ud) { return ((cont_ctx *)ud)->R.synced > 0; }

static void test_continue_expired_restarts_list(void **state)
{
    cluster *k = *state;
    mk_ns(k, "inf-cont");
    mk_ns(k, "inf-cont2");
    mk_cm(k, "inf-cont", "a", "x", "1");
    mk_cm(k, "inf-cont", "b", "x", "1");
    mk_cm(k, "inf-cont", "c", "x", "1");
    /* pages wait 400 ms at the server, so the compaction lands between them */
    fault(k, "{\"delayMs\":400,\"match\":\"^GET /api/v1/namespaces/inf-cont/configmaps$\"}");
    cont_ctx *x = calloc(1, sizeof *x);
    x->k = k;
    cu_informer_opts o;
    memset(&o, 0, sizeof o);
    o.path = "/api/v1/namespaces/inf-cont/configmaps";
    o.page_size = 1;
    o.on_event = cont_event;
    o.on_synced = cont_synced;
    o.ud = x;
    cu_diag d;
    cu_diag_init(&d);
    cu_informer *inf = cu_informer_start(k->c, &o, &d);
    assert_non_null(inf);
    assert_true(run_until(k, cont_is_synced, x, 15000));
    assert_int_equal(x->step, 3);
    assert_int_equal(x->R.n, 3); /* a, b, c once each */
    assert_int_equal(x->R.n_at_sync, 3);
    const char *want[] = { "a", "b", "c" };
    for (int i = 0; i < 3; i++)
        expect(&x->R.r[i], CU_IEV_ADDED, want[i], "1");
    cu_informer_stats st;
    cu_informer_stats_get(inf, &st);
    assert_int_equal(st.lists, 1 + 1 + 3); /* page 1, the expired page 2, pages 1..3 */
    assert_int_equal(st.relists_410, 0);   /* not a watch 410 */
    fault(k, "{\"clear\":true}");
    stop_and_settle(k, inf);
    cu_diag_free(&d);
    free(x);
}

static void stop_in_cb(cu_informer *inf, cu_ievent ev, json_object *obj, void *ud)
{
    int *n = ud;
    (void)ev;
    (void)obj;
    if (++*n == 1)
        cu_informer_stop(inf); /* freed once the callback unwinds */
}

static void test_stop_inside_callback(void **state)
{
    cluster *k = *state;
    mk_ns(k, "inf-stop");
    mk_cm(k, "inf-stop", "a", "x", "1");
    mk_cm(k, "inf-stop", "b", "x", "1");
    mk_cm(k, "inf-stop", "c", "x", "1");
    int n = 0;
    cu_informer_opts o;
    memset(&o, 0, sizeof o);
    o.path = "/api/v1/namespaces/inf-stop/configmaps";
    o.on_event = stop_in_cb;
    o.ud = &n;
    cu_diag d;
    cu_diag_init(&d);
    cu_informer *inf = cu_informer_start(k->c, &o, &d);
    assert_non_null(inf);
    run_for(k, 500);
    assert_int_equal(n, 1); /* no event after stop; no leak (ASan) */
    cu_diag_free(&d);
}

/* Creates ConfigMap ns/name with data.v "deep" and more fields (JSON
 * text after the data, starting with a comma). */
static void mk_cm_with(cluster *k, const char *ns, const char *name, const char *more)
{
    size_t n = strlen(more) + 256;
    char *b = malloc(n), p[256];
    assert_non_null(b);
    snprintf(b, n,
             "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"%s\"},"
             "\"data\":{\"v\":\"deep\"}%s}",
             name, more);
    snprintf(p, sizeof p, "/api/v1/namespaces/%s/configmaps", ns);
    assert_int_equal(kreq(k, "POST", p, b, NULL), 201);
    free(b);
}

static void mk_deep_cm(cluster *k, const char *ns, const char *name, int depth)
{
    char *d = deep_json(depth);
    char *more = malloc(strlen(d) + 16);
    assert_non_null(more);
    sprintf(more, ",\"deep\":%s", d);
    mk_cm_with(k, ns, name, more);
    free(more);
    free(d);
}

/* Objects nested deeper than the informer's first tokener (64) and than
 * json-c's default (32), in the LIST and in the watch: all delivered. */
static void test_deep_objects(void **state)
{
    cluster *k = *state;
    mk_ns(k, "inf-deep");
    mk_cm(k, "inf-deep", "plain-1", "x", "1");
    mk_deep_cm(k, "inf-deep", "deep-1", 100);
    mk_cm(k, "inf-deep", "plain-2", "x", "2");
    recorder *R = calloc(1, sizeof *R);
    assert_non_null(R);
    cu_informer *inf = start(k, R, "inf-deep", 0, 0, NULL, NULL);
    assert_int_equal(R->n_at_sync, 3);
    expect(&R->r[0], CU_IEV_ADDED, "deep-1", "deep"); /* listed in name order */
    mk_deep_cm(k, "inf-deep", "deep-2", 150);
    wait_events(k, R, 4);
    expect(&R->r[3], CU_IEV_ADDED, "deep-2", "deep");
    stop_and_settle(k, inf);
    free(R);
}

static int nskips;
static char last_skip[512];
static void on_skip(cu_informer *inf, const char *why, json_object *obj, void *ud)
{
    (void)inf;
    (void)obj;
    (void)ud;
    nskips++;
    snprintf(last_skip, sizeof last_skip, "%s", why);
}

/* A LIST whose items include ones that cannot be read: those are left
 * out (reported), the others delivered, and the pass completes (synced);
 * the same for watch events. Fed directly (cu_informer_feed). */
static void test_bad_items_left_out(void **state)
{
    cluster *k = *state;
    recorder *R = calloc(1, sizeof *R);
    assert_non_null(R);
    cu_informer_opts o;
    memset(&o, 0, sizeof o);
    o.path = "/api/v1/namespaces/inf-none/configmaps";
    o.on_event = on_event;
    o.on_synced = on_synced;
    o.on_skip = on_skip;
    o.ud = R;
    cu_diag d;
    cu_diag_init(&d);
    cu_informer *inf = cu_informer_start(k->c, &o, &d);
    assert_non_null(inf);
    cu_diag_free(&d);
    char *too_deep = deep_json(CU_JSON_MAX_DEPTH + 1), *deep = deep_json(300);
    size_t n = strlen(too_deep) + strlen(deep) + 1024;
    char *body = malloc(n);
    assert_non_null(body);
    snprintf(
        body, n,
        "{\"kind\":\"ConfigMapList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":"
        "\"7\"},\"items\":[ {\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"1\"}},"
        "{\"metadata\":{\"name\":\"b\"},\"x\":tru},"
        "{\"metadata\":{\"name\":\"c\"},\"x\":%s},"
        "{\"metadata\":{}}, 5, \"s\\\"]}\", "
        "{\"metadata\":{\"name\":\"d\",\"resourceVersion\":\"2\"},\"x\":%s},"
        "{\"metadata\":{\"name\":\"e\",\"resourceVersion\":\"3\"},\"data\":{\"v\":\"]}\\\"\"}} ]}",
        too_deep, deep);
    nskips = 0;
    cu_informer_feed(inf, 0, body, strlen(body));
    assert_int_equal(R->synced, 1);
    assert_int_equal(R->n, 3);
    expect(&R->r[0], CU_IEV_ADDED, "a", NULL);
    expect(&R->r[1], CU_IEV_ADDED, "d", NULL);
    expect(&R->r[2], CU_IEV_ADDED, "e", "]}\"");
    /* b (not JSON), c (too deep), no name, 5, a string */
    if (nskips != 5)
        fail_msg("%d items left out, want 5 (last: %s)", nskips, last_skip);
    /* watch events: a bad line is left out, the next one delivered */
    static const char bad_line[] = "{\"type\":\"ADDED\",\"object\":{\"metadata\":";
    cu_informer_feed(inf, 1, bad_line, strlen(bad_line));
    assert_int_equal(nskips, 6);
    snprintf(body, n,
             "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"f\","
             "\"resourceVersion\":\"9\"},\"x\":%s}}",
             deep);
    cu_informer_feed(inf, 1, body, strlen(body));
    assert_int_equal(R->n, 4);
    expect(&R->r[3], CU_IEV_ADDED, "f", NULL);
    cu_informer_stats st;
    cu_informer_stats_get(inf, &st);
    assert_int_equal(st.skipped, 6);
    free(body);
    free(deep);
    free(too_deep);
    stop_and_settle(k, inf);
    free(R);
}

static void mk_cm_size(cluster *k, const char *ns, const char *name, size_t size)
{
    char *more = malloc(size + 16);
    assert_non_null(more);
    strcpy(more, ",\"pad\":\"");
    memset(more + 8, 'x', size);
    strcpy(more + 8 + size, "\"");
    mk_cm_with(k, ns, name, more);
    free(more);
}

/* Answers larger than the client takes: a LIST page goes on with smaller
 * pages (at once), a watch event too long for a line is read by listing
 * again. Nothing is lost, the informer syncs. */
static void test_too_large(void **state)
{
    cluster *k = *state;
    mk_ns(k, "inf-big");
    char name[32];
    for (int i = 0; i < 5; i++) {
        snprintf(name, sizeof name, "cm-%d", i);
        mk_cm_size(k, "inf-big", name, 1000);
    }
    cu_kclient_opts ko;
    memset(&ko, 0, sizeof ko);
    ko.max_body = 4500; /* two or three items a page */
    ko.max_line = 3000;
    cu_diag d;
    cu_diag_init(&d);
    cu_kclient *c = cu_kclient_new(k->loop, k->cfg, &ko, &d);
    assert_non_null(c);
    recorder *R = calloc(1, sizeof *R);
    assert_non_null(R);
    cu_informer_opts o;
    memset(&o, 0, sizeof o);
    o.path = "/api/v1/namespaces/inf-big/configmaps";
    o.on_event = on_event;
    o.on_synced = on_synced;
    o.on_skip = on_skip;
    o.ud = R;
    nskips = 0;
    int64_t t0 = cu_clock_mono_ms();
    cu_informer *inf = cu_informer_start(c, &o, &d);
    assert_non_null(inf);
    assert_true(run_until(k, is_synced, R, 10000));
    int64_t took = cu_clock_mono_ms() - t0;
    assert_int_equal(R->n_at_sync, 5);
    assert_true(nskips >= 1);
    assert_non_null(strstr(last_skip, "listing with pages of"));
    if (took > 3000)
        fail_msg("the LIST with smaller pages took %lld ms (backing off?)", (long long)took);
    mk_cm_size(k, "inf-big", "big", 3000); /* a longer watch line than the client takes */
    wait_events(k, R, 6);
    expect(&R->r[5], CU_IEV_ADDED, "big", "deep");
    assert_no_duplicates(R);
    cu_informer_stop(inf);
    run_for(k, 50);
    cu_kclient_free(c);
    cu_diag_free(&d);
    free(R);
}

/* optional: a collection not served yet (its CRD missing) is synced empty at
 * once, said once through on_skip, and listed again until it is served;
 * then its objects arrive as events. */
static int skips;
static void count_skip(cu_informer *inf, const char *why, json_object *obj, void *ud)
{
    (void)inf, (void)obj, (void)ud;
    if (strstr(why, "404"))
        skips++;
}

static void test_optional_missing_crd(void **state)
{
    cluster *k = *state;
    recorder R;
    memset(&R, 0, sizeof R);
    skips = 0;
    const char *path = "/apis/optional.cueue.dev/v1/gadgets";
    cu_informer_opts o;
    memset(&o, 0, sizeof o);
    o.path = path;
    o.optional = 1;
    o.on_event = on_event;
    o.on_synced = on_synced;
    o.on_skip = count_skip;
    o.ud = &R;
    cu_diag d;
    cu_diag_init(&d);
    cu_informer *inf = cu_informer_start(k->c, &o, &d);
    assert_non_null(inf);
    cu_diag_free(&d);
    assert_true(run_until(k, is_synced, &R, 10000));
    assert_int_equal(R.n, 0);
    assert_int_equal(skips, 1);
    /* the resource becomes served: its CRD, then an object */
    assert_int_equal(
        kreq(k, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
             "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
             "\"metadata\":{\"name\":\"gadgets.optional.cueue.dev\"},\"spec\":{\"group\":"
             "\"optional.cueue.dev\",\"scope\":\"Cluster\",\"names\":{\"plural\":\"gadgets\","
             "\"singular\":\"gadget\",\"kind\":\"Gadget\"},\"versions\":[{\"name\":\"v1\","
             "\"served\":true,\"storage\":true,\"schema\":{\"openAPIV3Schema\":{\"type\":"
             "\"object\",\"x-kubernetes-preserve-unknown-fields\":true}}}]}}",
             NULL),
        201);
    int code = 0;
    for (int i = 0; i < 50 && code != 201; i++) {
        code = kreq(k, "POST", path,
                    "{\"apiVersion\":\"optional.cueue.dev/v1\",\"kind\":\"Gadget\","
                    "\"metadata\":{\"name\":\"g1\"}}",
                    NULL);
        if (code != 201)
            run_for(k, 100);
    }
    assert_int_equal(code, 201);
    wait_events(k, &R, 1); /* within the backoff of the relists */
    expect(&R.r[0], CU_IEV_ADDED, "g1", NULL);
    assert_int_equal(R.synced, 1);
    assert_int_equal(skips, 1);
    cu_informer_stop(inf);
}

static void test_bad_options(void **state)
{
    cluster *k = *state;
    struct {
        const char *path;
        int page, silence;
        int has_cb;
        const char *want;
    } cases[] = {
        { NULL, 0, 0, 1, "path: must be an API collection path" },
        { "api/v1/configmaps", 0, 0, 1, "path: must be an API collection path" },
        { "/api/v1/configmaps?limit=3", 0, 0, 1, "path: must not carry a query" },
        { "/api/v1/configmaps", -1, 0, 1, "page_size: must be >= 0 (got -1)" },
        { "/api/v1/configmaps", 0, -5, 1, "silence_ms: must be >= 0 (got -5)" },
        { "/api/v1/configmaps", 0, 0, 0, "on_event: missing" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cu_informer_opts o;
        memset(&o, 0, sizeof o);
        o.path = cases[i].path;
        o.page_size = cases[i].page;
        o.silence_ms = cases[i].silence;
        o.on_event = cases[i].has_cb ? on_event : NULL;
        cu_diag d;
        cu_diag_init(&d);
        assert_null(cu_informer_start(k->c, &o, &d));
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
        cmocka_unit_test_setup(test_list_paginated, clear_faults),
        cmocka_unit_test_setup(test_events_in_order, clear_faults),
        cmocka_unit_test_setup(test_resume_after_drop, clear_faults),
        cmocka_unit_test_setup(test_relist_after_410_in_stream, clear_faults),
        cmocka_unit_test_setup(test_relist_after_410_on_watch, clear_faults),
        cmocka_unit_test_setup(test_silent_watch_restart, clear_faults),
        cmocka_unit_test_setup(test_selectors, clear_faults),
        cmocka_unit_test_setup(test_continue_expired_restarts_list, clear_faults),
        cmocka_unit_test_setup(test_stop_inside_callback, clear_faults),
        cmocka_unit_test_setup(test_deep_objects, clear_faults),
        cmocka_unit_test_setup(test_bad_items_left_out, clear_faults),
        cmocka_unit_test_setup(test_too_large, clear_faults),
        cmocka_unit_test_setup(test_optional_missing_crd, clear_faults),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
