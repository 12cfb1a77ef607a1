/*
 * test_explain.c - golden tests of cu_engine_explain, and a consistency
 * sweep of its structured form against the engine's own messages.
 *
 * Golden tests: every scheduler/testdata/explain/NAME.yaml is a small
 * world whose header comment names the workload to explain
 * ("# explain: NS/NAME") and optionally engine options ("# engine:
 * manual_evictions"). The world is loaded and validated, the engine runs
 * until nothing changes (fake clock at 2026-01-01T00:00:00Z), and the
 * explanation must equal NAME.txt byte for byte. CUEUE_UPDATE_GOLDEN=1
 * rewrites the .txt files instead (review every change by hand: the text
 * is user-facing).
 *
 * Sweep: for every valid world of sim/scenarios, every workload is
 * explained (text and document); for pending single-pod-set workloads,
 * each per-flavor reason in the engine's message ("untolerated taint ...
 * in flavor F", "flavor F doesn't match node affinity", "request >
 * maximum capacity", "insufficient unused quota for R in flavor F") must
 * agree with the state the explanation gives that flavor.
 *
 * Runs from the repository root (CTest's WORKING_DIRECTORY).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_explain.h"

#define GOLDEN_DIR "scheduler/testdata/explain"
#define SCENARIO_DIR "sim/scenarios"
#define START_MS 1767225600000LL /* 2026-01-01T00:00:00Z */

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    cu_buf b;
    cu_buf_init(&b, 0);
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        cu_buf_append(&b, chunk, n);
    fclose(f);
    char *s = strdup(cu_buf_str(&b));
    cu_buf_free(&b);
    return s;
}

/* Sorted list of the *.yaml names (without extension) in dir. */
static size_t list_yaml(const char *dir, char names[][256], size_t max)
{
    DIR *dp = opendir(dir);
    if (!dp)
        return 0;
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(dp)) != NULL && n < max) {
        size_t len = strlen(de->d_name);
        if (len <= 5 || len - 5 >= 256 || strcmp(de->d_name + len - 5, ".yaml") != 0)
            continue;
        memcpy(names[n], de->d_name, len - 5);
        names[n][len - 5] = '\0';
        n++;
    }
    closedir(dp);
    qsort(names, n, 256, (int (*)(const void *, const void *))strcmp);
    return n;
}

typedef struct world_run {
    cu_world w;
    cu_engine *e;
    int64_t now;
} world_run;

/* Loads path, validates it and runs the engine to a steady state.
 * Returns 0, or -1 when the world does not load or validate. */
static int run_world(world_run *r, const char *path, int manual_evictions)
{
    cu_diag d;
    cu_diag_init(&d);
    cu_world_init(&r->w);
    const char *paths[1] = { path };
    int bad = cu_world_load(&r->w, paths, 1, &d) != CU_OK || cu_world_validate(&r->w, &d) != CU_OK;
    if (bad) {
        for (size_t i = 0; i < d.n; i++)
            fprintf(stderr, "%s: %s\n", path, d.msgs[i]);
        cu_diag_free(&d);
        cu_world_free(&r->w);
        return -1;
    }
    r->now = START_MS;
    cu_engine_opts o;
    memset(&o, 0, sizeof o);
    o.clock.now_ms = cu_clock_fake_now;
    o.clock.ud = &r->now;
    o.manual_evictions = manual_evictions;
    r->e = cu_engine_new(&o);
    assert_non_null(r->e);
    assert_int_equal(cu_engine_load(r->e, &r->w, &d), CU_OK);
    cu_engine_run(r->e, 10000);
    cu_diag_free(&d);
    return 0;
}

static void free_run(world_run *r)
{
    cu_engine_free(r->e);
    cu_world_free(&r->w);
}

/* The value of "# KEY: value" in the header comment of text, or NULL. */
static char *header_value(const char *text, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "# %s:", key);
    const char *p = strstr(text, pat);
    if (!p)
        return NULL;
    p += strlen(pat);
    while (*p == ' ')
        p++;
    size_t n = strcspn(p, "\n");
    char *v = malloc(n + 1);
    memcpy(v, p, n);
    v[n] = '\0';
    return v;
}

static void test_golden(void **state)
{
    (void)state;
    static char names[128][256];
    size_t n = list_yaml(GOLDEN_DIR, names, 128);
    assert_true(n >= 9);
    int update = getenv("CUEUE_UPDATE_GOLDEN") && strcmp(getenv("CUEUE_UPDATE_GOLDEN"), "1") == 0;
    int failures = 0;
    for (size_t i = 0; i < n; i++) {
        char yaml[600], txt[600];
        snprintf(yaml, sizeof yaml, "%s/%s.yaml", GOLDEN_DIR, names[i]);
        snprintf(txt, sizeof txt, "%s/%s.txt", GOLDEN_DIR, names[i]);
        char *src = read_text(yaml);
        assert_non_null(src);
        char *key = header_value(src, "explain");
        char *eng = header_value(src, "engine");
        if (!key) {
            fprintf(stderr, "%s: no '# explain: NS/NAME' header\n", yaml);
            fail();
        }
        world_run r;
        assert_int_equal(run_world(&r, yaml, eng && strstr(eng, "manual_evictions")), 0);
        cu_buf out;
        cu_buf_init(&out, 0);
        cu_diag d;
        cu_diag_init(&d);
        assert_int_equal(cu_engine_explain(r.e, key, &out, &d), CU_OK);
        /* explaining twice gives the same text: nothing observable changed */
        cu_buf again;
        cu_buf_init(&again, 0);
        assert_int_equal(cu_engine_explain(r.e, key, &again, &d), CU_OK);
        assert_string_equal(cu_buf_str(&out), cu_buf_str(&again));
        cu_buf_free(&again);
        /* the document form names the same workload */
        cu_arena a;
        cu_arena_init(&a, 0);
        cu_node *doc = NULL;
        assert_int_equal(cu_engine_explain_doc(r.e, key, &a, &doc, &d), CU_OK);
        assert_string_equal(cu_node_scalar(cu_node_get(doc, "workload")), key);
        cu_buf js;
        cu_buf_init(&js, 0);
        assert_int_equal(cu_node_emit_json(doc, &js, 2), CU_OK);
        cu_buf_free(&js);
        cu_arena_free(&a);
        if (update) {
            FILE *f = fopen(txt, "wb");
            assert_non_null(f);
            fputs(cu_buf_str(&out), f);
            fclose(f);
        } else {
            char *want = read_text(txt);
            if (!want || strcmp(want, cu_buf_str(&out)) != 0) {
                fprintf(stderr, "--- %s: expected (%s)\n%s--- got\n%s", names[i], txt,
                        want ? want : "(missing file)\n", cu_buf_str(&out));
                failures++;
            }
            free(want);
        }
        cu_diag_free(&d);
        cu_buf_free(&out);
        free_run(&r);
        free(key);
        free(eng);
        free(src);
    }
    assert_int_equal(failures, 0);
}

static void test_errors(void **state)
{
    (void)state;
    world_run r;
    assert_int_equal(run_world(&r, GOLDEN_DIR "/no-quota.yaml", 0), 0);
    cu_buf out;
    cu_buf_init(&out, 0);
    cu_diag d;
    cu_diag_init(&d);
    assert_int_equal(cu_engine_explain(r.e, "team-a/nope", &out, &d), CU_ENOTFOUND);
    assert_int_equal(d.n, 1);
    assert_non_null(strstr(d.msgs[0], "team-a/nope not found"));
    assert_int_equal(cu_engine_explain(r.e, "", &out, &d), CU_EINVAL);
    assert_int_equal(cu_engine_explain(r.e, NULL, &out, &d), CU_EINVAL);
    assert_int_equal(out.len, 0);
    /* a tiny bound is reported, not overrun */
    cu_buf small;
    cu_buf_init(&small, 64);
    assert_int_equal(cu_engine_explain(r.e, "team-a/big", &small, &d), CU_ENOMEM);
    assert_true(small.len <= 64);
    cu_buf_free(&small);
    cu_diag_free(&d);
    cu_buf_free(&out);
    free_run(&r);
}

/* Explaining every workload (the preemption search included) changes
 * nothing the engine decides afterwards: an explained engine and an
 * untouched twin end in the same state once the evictions complete. */
static void test_no_side_effects(void **state)
{
    (void)state;
    const char *worlds[] = { GOLDEN_DIR "/waiting-preempted.yaml",
                             GOLDEN_DIR "/preemption-not-enough.yaml",
                             GOLDEN_DIR "/no-quota.yaml" };
    for (size_t k = 0; k < sizeof worlds / sizeof *worlds; k++) {
        world_run a, b;
        assert_int_equal(run_world(&a, worlds[k], 1), 0);
        assert_int_equal(run_world(&b, worlds[k], 1), 0);
        size_t nw = cu_engine_nworkloads(a.e);
        for (size_t i = 0; i < nw; i++) {
            const cu_wl_info *v = cu_engine_workload_info(a.e, i);
            char key[600];
            snprintf(key, sizeof key, "%s/%s", v->ns, v->name);
            cu_buf out;
            cu_buf_init(&out, 0);
            assert_int_equal(cu_engine_explain(a.e, key, &out, NULL), CU_OK);
            cu_buf_free(&out);
        }
        world_run *rs[2] = { &a, &b };
        for (int j = 0; j < 2; j++) {
            int ev[64];
            size_t n = cu_engine_take_evicted(rs[j]->e, ev, 64);
            for (size_t i = 0; i < n; i++)
                assert_int_equal(cu_engine_eviction_done(rs[j]->e, ev[i]), CU_OK);
            cu_engine_run(rs[j]->e, 10000);
            cu_diag d;
            cu_diag_init(&d);
            assert_int_equal(cu_engine_check_invariants(rs[j]->e, &d), CU_OK);
            cu_diag_free(&d);
        }
        int admitted = 0;
        for (size_t i = 0; i < nw; i++) {
            const cu_wl_info *va = cu_engine_workload_info(a.e, i);
            const cu_wl_info *vb = cu_engine_workload_info(b.e, i);
            assert_string_equal(va->name, vb->name);
            assert_int_equal(va->admitted, vb->admitted);
            assert_int_equal(va->evictions, vb->evictions);
            if (va->message || vb->message)
                assert_string_equal(va->message, vb->message);
            admitted += va->admitted;
        }
        assert_true(admitted > 0);
        free_run(&a);
        free_run(&b);
    }
}

/* ---- sweep ---- */

static const cu_node *doc_flavor(const cu_node *doc, const char *flavor)
{
    const cu_node *pss = cu_node_get(doc, "podSets");
    if (!pss || pss->n != 1)
        return NULL;
    const cu_node *gs = cu_node_get(pss->vals[0], "resourceGroups");
    for (size_t g = 0; gs && g < gs->n; g++) {
        const cu_node *fs = cu_node_get(gs->vals[g], "flavors");
        for (size_t f = 0; fs && f < fs->n; f++)
            if (strcmp(cu_node_scalar(cu_node_get(fs->vals[f], "name")), flavor) == 0)
                return fs->vals[f];
    }
    return NULL;
}

static const cu_node *doc_res(const cu_node *fl, const char *res)
{
    const cu_node *rs = cu_node_get(fl, "resources");
    for (size_t i = 0; rs && i < rs->n; i++)
        if (strcmp(cu_node_scalar(cu_node_get(rs->vals[i], "resource")), res) == 0)
            return rs->vals[i];
    return NULL;
}

/* Checks every per-flavor reason of msg against doc; returns the number
 * of reasons checked, -1 on a disagreement (printed). */
static int check_reasons(const char *what, const char *msg, const cu_node *doc)
{
    const cu_node *pss = cu_node_get(doc, "podSets");
    if (!pss || pss->n != 1)
        return 0;
    const char *p = strstr(msg, ": ");
    if (!p || strncmp(msg, "couldn't assign flavors to pod set", 34) != 0)
        return 0;
    int checked = 0;
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", p + 2);
    /* reasons are joined by ", " but some contain ", " themselves:
     * split on ", " only before a known reason start */
    const char *starts[] = { "untolerated taint", "flavor ", "insufficient unused quota",
                             "insufficient quota", "resource " };
    char *s = buf;
    while (*s) {
        char *end = NULL;
        for (char *q = strstr(s, ", "); q && !end; q = strstr(q + 2, ", "))
            for (size_t k = 0; k < sizeof starts / sizeof *starts; k++)
                if (strncmp(q + 2, starts[k], strlen(starts[k])) == 0)
                    end = q;
        if (end)
            *end = '\0';
        char flv[128] = "", res[128] = "", more[64] = "";
        const char *want = NULL;
        char *in = strstr(s, " in flavor ");
        if (strncmp(s, "untolerated taint", 17) == 0 && in) {
            sscanf(in + 11, "%127s", flv);
            want = "UntoleratedTaint";
        } else if (sscanf(s, "flavor %127s doesn't match node affinity", flv) == 1) {
            want = "NodeAffinityMismatch";
        } else if (sscanf(
                       s,
                       "insufficient unused quota for %127s in flavor %127[^,], %63s more needed",
                       res, flv, more) == 3) {
            want = "InsufficientUnusedQuota";
        } else if (sscanf(s, "insufficient quota for %127s in flavor %127[^,],", res, flv) == 2) {
            want = "ExceedsMaxQuota";
        }
        if (want) {
            const cu_node *fl = doc_flavor(doc, flv);
            const char *got = fl ? cu_node_scalar(cu_node_get(fl, "state")) : "(none)";
            if (*res && fl) {
                const cu_node *r = doc_res(fl, res);
                got = r ? cu_node_scalar(cu_node_get(r, "state")) : "(no such resource)";
            }
            if (strcmp(got, want) != 0) {
                fprintf(stderr, "%s: engine says \"%s\", explanation says %s for flavor %s %s\n",
                        what, s, got, flv, res);
                return -1;
            }
            checked++;
        }
        if (!end)
            break;
        s = end + 2;
    }
    return checked;
}

static void test_sweep(void **state)
{
    (void)state;
    static char names[512][256];
    size_t n = list_yaml(SCENARIO_DIR, names, 512);
    assert_true(n >= 40);
    int worlds = 0, checked = 0, bad = 0;
    for (size_t i = 0; i < n; i++) {
        char yaml[600];
        snprintf(yaml, sizeof yaml, "%s/%s.yaml", SCENARIO_DIR, names[i]);
        world_run r;
        if (run_world(&r, yaml, 0) != 0)
            continue;
        worlds++;
        size_t nw = cu_engine_nworkloads(r.e);
        for (size_t k = 0; k < nw; k++) {
            const cu_wl_info *v = cu_engine_workload_info(r.e, k);
            char key[600];
            snprintf(key, sizeof key, "%s/%s", v->ns, v->name);
            const char *msg = v->message ? strdup(v->message) : NULL;
            int admitted = v->admitted, reserved = v->checks_pending;
            cu_buf out;
            cu_buf_init(&out, 0);
            cu_diag d;
            cu_diag_init(&d);
            assert_int_equal(cu_engine_explain(r.e, key, &out, &d), CU_OK);
            assert_non_null(strstr(cu_buf_str(&out), key));
            cu_arena a;
            cu_arena_init(&a, 0);
            cu_node *doc = NULL;
            assert_int_equal(cu_engine_explain_doc(r.e, key, &a, &doc, &d), CU_OK);
            if (admitted)
                assert_non_null(
                    strstr(cu_buf_str(&out), reserved ? ": reserved\n" : ": admitted\n"));
            if (msg && !admitted) {
                int c = check_reasons(key, msg, doc);
                if (c < 0) {
                    fprintf(stderr, "  in %s\n%s", yaml, cu_buf_str(&out));
                    bad++;
                } else {
                    checked += c;
                }
            }
            free((void *)msg);
            cu_arena_free(&a);
            cu_diag_free(&d);
            cu_buf_free(&out);
        }
        free_run(&r);
    }
    fprintf(stderr, "sweep: %d worlds, %d flavor reasons checked\n", worlds, checked);
    assert_true(worlds >= 40);
    assert_true(checked >= 20);
    assert_int_equal(bad, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_no_side_effects),
        cmocka_unit_test(test_sweep),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
