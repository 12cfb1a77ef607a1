/*
 * test_scenarios.c - runs every sim/scenarios/NNN-name.yaml through
 * cu_sim_run (JSON output) and compares the result with the hand-written
 * NNN-name.json next to it.
 *
 * Each scenario is run twice: with Cueue's multi-admission cycle
 * (one_head_per_cycle = 0) and with Kueue's exact one-head-per-ClusterQueue
 * loop (= 1). Both results must equal the expected document, and each
 * other: that is the check that Cueue's faster cycle is Kueue-equivalent.
 *
 * Comparison is structural: objects as key sets (any order), arrays in
 * order, scalars by value. On a mismatch the scenario, the mode, the JSON
 * path of the first difference and both documents are printed.
 *
 * The test runs from the repository root (CTest's WORKING_DIRECTORY), so
 * it reads "sim/scenarios"; CUEUE_SCENARIOS_DIR overrides that.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cu_sim.h"

#define MIN_SCENARIOS 40
#define PATH_MAX_LEN 1024

typedef struct scenario {
    char name[256]; /* "001-basic-fit" */
    char yaml[PATH_MAX_LEN];
    char json[PATH_MAX_LEN];
} scenario;

typedef struct scenario_list {
    size_t n, cap;
    scenario *items;
} scenario_list;

static const char *scenarios_dir(void)
{
    const char *d = getenv("CUEUE_SCENARIOS_DIR");
    return (d && *d) ? d : "sim/scenarios";
}

static int cmp_scenario(const void *a, const void *b)
{
    return strcmp(((const scenario *)a)->name, ((const scenario *)b)->name);
}

/* Fills l with every .yaml file of dir, sorted by name. Returns 0 or -1. */
static int list_scenarios(const char *dir, scenario_list *l)
{
    DIR *dp = opendir(dir);
    if (!dp)
        return -1;
    struct dirent *de;
    while ((de = readdir(dp)) != NULL) {
        size_t len = strlen(de->d_name);
        if (len <= 5 || strcmp(de->d_name + len - 5, ".yaml") != 0)
            continue;
        if (len - 5 >= sizeof(l->items[0].name))
            continue;
        if (l->n == l->cap) {
            size_t cap = l->cap ? l->cap * 2 : 64;
            scenario *p = realloc(l->items, cap * sizeof(*p));
            if (!p) {
                closedir(dp);
                return -1;
            }
            l->items = p;
            l->cap = cap;
        }
        scenario *s = &l->items[l->n++];
        memcpy(s->name, de->d_name, len - 5);
        s->name[len - 5] = '\0';
        snprintf(s->yaml, sizeof(s->yaml), "%s/%s.yaml", dir, s->name);
        snprintf(s->json, sizeof(s->json), "%s/%s.json", dir, s->name);
    }
    closedir(dp);
    if (l->n > 1)
        qsort(l->items, l->n, sizeof(l->items[0]), cmp_scenario);
    return 0;
}

/* Returns a malloc'ed NUL-terminated copy of the file, or NULL. */
static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t got = fread(buf + len, 1, cap - len - 1, f);
        len += got;
        if (got == 0)
            break;
        if (cap - len - 1 == 0) {
            char *p = realloc(buf, cap * 2);
            if (!p) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = p;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf)
        buf[len] = '\0';
    return buf;
}

static const char *type_name(json_type t)
{
    switch (t) {
    case json_type_null: return "null";
    case json_type_boolean: return "boolean";
    case json_type_double: return "number";
    case json_type_int: return "number";
    case json_type_object: return "object";
    case json_type_array: return "array";
    case json_type_string: return "string";
    }
    return "?";
}

/* Appends a path component to path (bounded). */
static void path_push(char *path, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void path_push(char *path, size_t n, const char *fmt, ...)
{
    size_t len = strlen(path);
    if (len + 1 >= n)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(path + len, n - len, fmt, ap);
    va_end(ap);
}

/* Keys the engine adds for fair sharing ("weightedShare" of a ClusterQueue,
 * the "cohorts" array): an expected document that does not mention them
 * does not check them, so scenarios written before fair sharing keep
 * passing. When the expected document has them they are compared like
 * everything else. Every other key stays strict. */
static int optional_key(const char *k)
{
    return strcmp(k, "weightedShare") == 0 || strcmp(k, "cohorts") == 0;
}

/* Compares a (actual) with b (expected). Returns 0 when equal; otherwise 1,
 * with the JSON path of the first difference in path and a short
 * description in why. */
static int json_diff(json_object *a, json_object *b, char *path, size_t pn, char *why, size_t wn)
{
    json_type ta = json_object_get_type(a), tb = json_object_get_type(b);
    int anum = ta == json_type_int || ta == json_type_double;
    int bnum = tb == json_type_int || tb == json_type_double;
    if (ta != tb && !(anum && bnum)) {
        snprintf(why, wn, "type %s, expected %s", type_name(ta), type_name(tb));
        return 1;
    }
    switch (tb) {
    case json_type_null: return 0;
    case json_type_boolean:
        if (!json_object_get_boolean(a) != !json_object_get_boolean(b)) {
            snprintf(why, wn, "%s, expected %s", json_object_get_boolean(a) ? "true" : "false",
                     json_object_get_boolean(b) ? "true" : "false");
            return 1;
        }
        return 0;
    case json_type_int:
    case json_type_double:
        if (ta == json_type_int && tb == json_type_int) {
            if (json_object_get_int64(a) != json_object_get_int64(b)) {
                snprintf(why, wn, "%lld, expected %lld", (long long)json_object_get_int64(a),
                         (long long)json_object_get_int64(b));
                return 1;
            }
        } else if (json_object_get_double(a) != json_object_get_double(b)) {
            snprintf(why, wn, "%g, expected %g", json_object_get_double(a),
                     json_object_get_double(b));
            return 1;
        }
        return 0;
    case json_type_string:
        if (strcmp(json_object_get_string(a), json_object_get_string(b)) != 0) {
            snprintf(why, wn, "\"%s\", expected \"%s\"", json_object_get_string(a),
                     json_object_get_string(b));
            return 1;
        }
        return 0;
    case json_type_array: {
        size_t na = json_object_array_length(a), nb = json_object_array_length(b);
        size_t n = na < nb ? na : nb;
        for (size_t i = 0; i < n; i++) {
            size_t mark = strlen(path);
            path_push(path, pn, "[%zu]", i);
            if (json_diff(json_object_array_get_idx(a, i), json_object_array_get_idx(b, i), path,
                          pn, why, wn))
                return 1;
            path[mark] = '\0';
        }
        if (na != nb) {
            snprintf(why, wn, "array length %zu, expected %zu", na, nb);
            return 1;
        }
        return 0;
    }
    case json_type_object: {
        /* Expected keys first, in the expected document's order. */
        json_object_object_foreach (b, kb, vb) {
            json_object *va = NULL;
            size_t mark = strlen(path);
            path_push(path, pn, ".%s", kb);
            if (!json_object_object_get_ex(a, kb, &va)) {
                snprintf(why, wn, "key missing");
                return 1;
            }
            if (json_diff(va, vb, path, pn, why, wn))
                return 1;
            path[mark] = '\0';
        }
        json_object_object_foreach (a, ka, va2) {
            (void)va2;
            if (!json_object_object_get_ex(b, ka, NULL) && !optional_key(ka)) {
                path_push(path, pn, ".%s", ka);
                snprintf(why, wn, "unexpected key");
                return 1;
            }
        }
        return 0;
    }
    }
    snprintf(why, wn, "unknown JSON type");
    return 1;
}

static void print_doc(const char *title, json_object *o)
{
    print_error("---- %s ----\n%s\n", title,
                json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
                                                      JSON_C_TO_STRING_SPACED |
                                                      JSON_C_TO_STRING_NOSLASHESCAPE));
}

/* Runs the scenario in one mode. Returns the parsed output (caller puts
 * it) or NULL after printing why. */
static json_object *run_mode(const scenario *s, int one_head)
{
    const char *paths[1] = { s->yaml };
    cu_sim_opts opts;
    memset(&opts, 0, sizeof(opts));
    opts.format = CU_SIM_JSON;
    opts.one_head_per_cycle = one_head;
    cu_buf out;
    cu_buf_init(&out, 0);
    cu_diag d;
    cu_diag_init(&d);
    cu_err rc = cu_sim_run(paths, 1, &opts, &out, &d);
    json_object *res = NULL;
    if (rc != CU_OK) {
        print_error("%s (one_head_per_cycle=%d): cu_sim_run failed: %s\n", s->name, one_head,
                    cu_strerror(rc));
        for (size_t i = 0; i < d.n; i++)
            print_error("  %s\n", d.msgs[i]);
    } else {
        res = json_tokener_parse(cu_buf_str(&out));
        if (!res)
            print_error("%s (one_head_per_cycle=%d): output is not valid JSON:\n%s\n", s->name,
                        one_head, cu_buf_str(&out));
    }
    cu_diag_free(&d);
    cu_buf_free(&out);
    return res;
}

static void test_scenario(void **state)
{
    const scenario *s = *state;
    char *text = read_file(s->json);
    if (!text) {
        print_error("%s: cannot read %s\n", s->name, s->json);
        fail();
    }
    json_object *want = json_tokener_parse(text);
    free(text);
    if (!want) {
        print_error("%s: %s is not valid JSON\n", s->name, s->json);
        fail();
    }

    json_object *got[2] = { NULL, NULL };
    int failed = 0;
    for (int mode = 0; mode < 2; mode++) {
        got[mode] = run_mode(s, mode);
        if (!got[mode]) {
            failed = 1;
            continue;
        }
        char path[512] = "$", why[512] = "";
        if (json_diff(got[mode], want, path, sizeof(path), why, sizeof(why))) {
            print_error("%s (one_head_per_cycle=%d): first difference at %s: %s\n", s->name, mode,
                        path, why);
            print_doc("expected", want);
            print_doc("actual", got[mode]);
            failed = 1;
        }
    }
    if (got[0] && got[1]) {
        char path[512] = "$", why[512] = "";
        if (json_diff(got[0], got[1], path, sizeof(path), why, sizeof(why))) {
            print_error("%s: Cueue's cycle and Kueue's one-head loop differ at %s: %s "
                        "(one_head_per_cycle=0 vs =1)\n",
                        s->name, path, why);
            print_doc("one_head_per_cycle=1", got[1]);
            print_doc("one_head_per_cycle=0", got[0]);
            failed = 1;
        }
    }
    json_object_put(got[0]);
    json_object_put(got[1]);
    json_object_put(want);
    if (failed)
        fail();
}

static void test_enough_scenarios(void **state)
{
    const scenario_list *l = *state;
    if (l->n < MIN_SCENARIOS)
        print_error("found %zu scenarios in %s, expected at least %d\n", l->n, scenarios_dir(),
                    MIN_SCENARIOS);
    assert_true(l->n >= MIN_SCENARIOS);
    /* Every scenario has its expected result. */
    for (size_t i = 0; i < l->n; i++) {
        FILE *f = fopen(l->items[i].json, "rb");
        if (!f)
            print_error("%s: missing %s\n", l->items[i].name, l->items[i].json);
        assert_non_null(f);
        fclose(f);
    }
}

/* Self-check of the comparator, so a comparator that accepts everything
 * cannot make the scenario tests pass. */
static void test_json_diff(void **state)
{
    (void)state;
    static const struct {
        const char *a, *b;
        int diff;
        const char *path;
    } cases[] = {
        { "{\"x\":1,\"y\":[true,null]}", "{\"y\":[true,null],\"x\":1}", 0, "$" },
        { "{\"x\":1}", "{\"x\":2}", 1, "$.x" },
        { "{\"x\":1}", "{\"x\":1.0}", 0, "$" },
        { "{\"x\":\"1\"}", "{\"x\":1}", 1, "$.x" },
        { "{\"x\":[1,2]}", "{\"x\":[2,1]}", 1, "$.x[0]" },
        { "{\"x\":[1]}", "{\"x\":[1,2]}", 1, "$.x" },
        { "{\"x\":null}", "{\"x\":false}", 1, "$.x" },
        { "{\"x\":1,\"z\":0}", "{\"x\":1}", 1, "$.z" },
        { "{\"x\":1}", "{\"x\":1,\"z\":0}", 1, "$.z" },
        { "{\"w\":[{\"r\":\"a\"}]}", "{\"w\":[{\"r\":\"b\"}]}", 1, "$.w[0].r" },
        /* fair-sharing keys are checked only when expected */
        { "{\"x\":1,\"cohorts\":[],\"c\":[{\"weightedShare\":5}]}", "{\"x\":1,\"c\":[{}]}", 0,
          "$" },
        { "{\"c\":[{\"weightedShare\":5}]}", "{\"c\":[{\"weightedShare\":6}]}", 1,
          "$.c[0].weightedShare" },
        { "{\"x\":1}", "{\"x\":1,\"cohorts\":[]}", 1, "$.cohorts" },
        { "{\"x\":1,\"weightedSharez\":0}", "{\"x\":1}", 1, "$.weightedSharez" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_object *a = json_tokener_parse(cases[i].a);
        json_object *b = json_tokener_parse(cases[i].b);
        assert_non_null(a);
        assert_non_null(b);
        char path[128] = "$", why[256] = "";
        int r = json_diff(a, b, path, sizeof(path), why, sizeof(why));
        if (r != cases[i].diff || strcmp(path, cases[i].path) != 0)
            print_error("case %zu: diff=%d path=%s (%s)\n", i, r, path, why);
        assert_int_equal(r, cases[i].diff);
        assert_string_equal(path, cases[i].path);
        json_object_put(a);
        json_object_put(b);
    }
}

int main(void)
{
    scenario_list l = { 0, 0, NULL };
    if (list_scenarios(scenarios_dir(), &l) != 0) {
        fprintf(stderr,
                "cannot read scenario folder %s (run from the repository root "
                "or set CUEUE_SCENARIOS_DIR)\n",
                scenarios_dir());
        return 1;
    }
    size_t nt = l.n + 2;
    struct CMUnitTest *tests = calloc(nt, sizeof(*tests));
    if (!tests) {
        free(l.items);
        return 1;
    }
    tests[0].name = "json_diff";
    tests[0].test_func = test_json_diff;
    tests[1].name = "enough_scenarios";
    tests[1].test_func = test_enough_scenarios;
    tests[1].initial_state = &l;
    for (size_t i = 0; i < l.n; i++) {
        tests[i + 2].name = l.items[i].name;
        tests[i + 2].test_func = test_scenario;
        tests[i + 2].initial_state = &l.items[i];
    }
    int rc = _cmocka_run_group_tests("sim_scenarios", tests, nt, NULL, NULL);
    free(tests);
    free(l.items);
    return rc;
}
