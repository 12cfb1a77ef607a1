/*
 * test_cli.c - the cli fronts without a cluster: names, query encoding,
 * tables, option parsing and argument errors of every command, and
 * the pending-workloads table computed from a small model (a simulate
 * scenario run through the engine, as `cueue queue pending` does when no
 * controller answers).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_cli_int.h"
#include "cu_front.h"

#define SCENARIO "sim/scenarios/003-exceeds-max-capacity.yaml"

static void test_valid_name(void **st)
{
    (void)st;
    assert_true(cli_valid_name("team-a"));
    assert_true(cli_valid_name("job.v1-2"));
    assert_false(cli_valid_name(""));
    assert_false(cli_valid_name("Team"));
    assert_false(cli_valid_name("a_b"));
    assert_false(cli_valid_name("a/b"));
    char long_name[300];
    memset(long_name, 'a', sizeof long_name);
    long_name[253] = '\0';
    assert_true(cli_valid_name(long_name));
    long_name[253] = 'a';
    long_name[254] = '\0';
    assert_false(cli_valid_name(long_name));
}

static void test_query_value(void **st)
{
    (void)st;
    cu_buf b;
    cu_buf_init(&b, 0);
    cli_put_query_value(&b, "ns/a b&c=d~_.-\xc3\xa9");
    assert_string_equal(cu_buf_str(&b), "ns/a%20b%26c%3Dd~_.-%C3%A9");
    cu_buf_free(&b);
}

static void test_table(void **st)
{
    (void)st;
    table t = { .ncols = 3 };
    cli_tbl_row(&t, (const char *const[]){ "NAME", "CQ", "AGE" });
    cli_tbl_row(&t, (const char *const[]){ "team-a/long-name", "gpu", "3m10s" });
    cli_tbl_row(&t, (const char *const[]){ "x", "cpu-queue", "" }); /* empty: "-" */
    cu_buf out;
    cu_buf_init(&out, 0);
    cli_tbl_print(&t, &out);
    assert_string_equal(cu_buf_str(&out), "NAME               CQ          AGE\n"
                                          "team-a/long-name   gpu         3m10s\n"
                                          "x                  cpu-queue   -\n");
    cu_buf_free(&out);
    cli_tbl_free(&t);
}

/* Fills argv (16 slots) from the NULL-terminated list ap; returns argc. */
static int argv_of(char **argv, va_list ap)
{
    int argc = 0;
    for (char *a; argc < 15 && (a = va_arg(ap, char *)) != NULL;)
        argv[argc++] = a;
    argv[argc] = NULL;
    return argc;
}

/* Runs cli_parse_opts on a NULL-terminated argument list. */
static int parse(cli *c, int allow_wide, int *help, ...)
{
    char *argv[16];
    va_list ap;
    va_start(ap, help);
    int argc = argv_of(argv, ap);
    va_end(ap);
    return cli_parse_opts(c, argc, argv, allow_wide, help);
}

static void test_parse_opts(void **st)
{
    (void)st;
    unsetenv("CUEUE_CONTROLLER");
    int help;
    cli c = { .cmd = "queue" };
    assert_int_equal(parse(&c, 1, &help, "queue", "-o", "wide", "list", NULL), 0);
    assert_true(c.wide);
    assert_false(c.json);
    assert_false(help);
    assert_string_equal(c.url, DEFAULT_CONTROLLER);

    /* the last -o wins; trailing slashes of the URL are dropped */
    cli d = { .cmd = "queue" };
    assert_int_equal(parse(&d, 1, &help, "queue", "-o", "wide", "--output", "json", "--controller",
                           "https://ctl:8443///", "--kubeconfig", "/k", "--context", "kind", NULL),
                     0);
    assert_true(d.json);
    assert_false(d.wide);
    assert_string_equal(d.url, "https://ctl:8443");
    assert_string_equal(d.kubeconfig, "/k");
    assert_string_equal(d.context, "kind");

    /* explain knows text and json, not wide */
    cli e = { .cmd = "explain" };
    assert_int_equal(parse(&e, 0, &help, "explain", "-o", "wide", "x", NULL), RC_USAGE);
    assert_int_equal(parse(&e, 0, &help, "explain", "-o", "text", "x", NULL), 0);
    assert_int_equal(parse(&e, 0, &help, "explain", "--controller", "ftp://x", "x", NULL),
                     RC_USAGE);
    assert_int_equal(parse(&e, 0, &help, "explain", "--config=", "x", NULL), RC_USAGE);
    assert_int_equal(parse(&e, 0, &help, "explain", "-q", "x", NULL), RC_USAGE);
    assert_int_equal(parse(&e, 0, &help, "explain", "--nope", "x", NULL), RC_USAGE);
    assert_int_equal(parse(&e, 0, &help, "explain", "x", "--context", NULL), RC_USAGE);
    assert_int_equal(parse(&e, 0, &help, "explain", "--help", NULL), 0);
    assert_true(help);

    /* the environment, when no flag */
    setenv("CUEUE_CONTROLLER", "http://from-env:9/", 1);
    cli f = { .cmd = "explain" };
    assert_int_equal(parse(&f, 0, &help, "explain", "x", NULL), 0);
    assert_string_equal(f.url, "http://from-env:9");
    setenv("CUEUE_CONTROLLER", "from-env", 1);
    assert_int_equal(parse(&f, 0, &help, "explain", "x", NULL), RC_USAGE);
    unsetenv("CUEUE_CONTROLLER");
}

/* kubectl-style references: KIND/NAME, NAMESPACE/KIND/NAME, NAMESPACE/NAME */
static void test_split_ref(void **st)
{
    (void)st;
    cli c = { .cmd = "explain", .kubeconfig = "/nonexistent/kubeconfig" };
    char ns[254], name[254];
    const cli_kind *k = NULL;
    assert_int_equal(cli_split_ref(&c, "jobset/train", ns, &k, name, "workload"), 0);
    assert_non_null(k);
    assert_string_equal(k->kind, "JobSet");
    assert_string_equal(ns, "default");
    assert_string_equal(name, "train");
    assert_int_equal(cli_split_ref(&c, "team/lws/serve", ns, &k, name, "workload"), 0);
    assert_string_equal(k->kind, "LeaderWorkerSet");
    assert_string_equal(ns, "team");
    assert_string_equal(name, "serve");
    assert_int_equal(cli_split_ref(&c, "pods/p-0", ns, &k, name, "workload"), 0);
    assert_string_equal(k->kind, "Pod");
    assert_string_equal(k->plural, "pods");
    assert_int_equal(cli_split_ref(&c, "jobsets.jobset.x-k8s.io/t", ns, &k, name, "workload"), 0);
    assert_string_equal(k->prefix, "/apis/jobset.x-k8s.io/v1alpha2");
    /* two parts that are no kind: NAMESPACE/NAME, as before */
    assert_int_equal(cli_split_ref(&c, "team/train", ns, &k, name, "workload"), 0);
    assert_null(k);
    assert_string_equal(ns, "team");
    assert_int_equal(cli_split_ref(&c, "train", ns, &k, name, "workload"), 0);
    assert_null(k);
    /* a namespace named like a kind: NAMESPACE/KIND/NAME */
    assert_int_equal(cli_split_ref(&c, "pod/workload/w", ns, &k, name, "workload"), 0);
    assert_string_equal(ns, "pod");
    assert_string_equal(k->kind, "Workload");
    /* bad: an unknown kind in the middle, too many parts, bad names */
    assert_int_equal(cli_split_ref(&c, "ns/deployment/x", ns, &k, name, "workload"), RC_USAGE);
    assert_int_equal(cli_split_ref(&c, "a/b/c/d", ns, &k, name, "workload"), RC_USAGE);
    assert_int_equal(cli_split_ref(&c, "jobset/X_1", ns, &k, name, "workload"), RC_USAGE);
    assert_int_equal(cli_split_ref(&c, "Team/jobset/x", ns, &k, name, "workload"), RC_USAGE);
    assert_null(cli_kind_of("deployment"));
    assert_null(cli_kind_of(NULL));
    assert_string_equal(cli_kind_of("job.batch")->kind, "Job");
}

static void test_split_target(void **st)
{
    (void)st;
    cli c = { .cmd = "explain", .kubeconfig = "/nonexistent/kubeconfig" };
    char ns[254], name[254];
    assert_int_equal(cli_split_target(&c, "team-a/job-1", ns, name, "workload"), 0);
    assert_string_equal(ns, "team-a");
    assert_string_equal(name, "job-1");
    /* no namespace and no usable kubeconfig: "default" */
    assert_int_equal(cli_split_target(&c, "job-1", ns, name, "workload"), 0);
    assert_string_equal(ns, "default");
    assert_string_equal(name, "job-1");
    assert_int_equal(cli_split_target(&c, "a/b/c", ns, name, "workload"), RC_USAGE);
    assert_int_equal(cli_split_target(&c, "Team/x", ns, name, "workload"), RC_USAGE);
    assert_int_equal(cli_split_target(&c, "/x", ns, name, "workload"), RC_USAGE);
    assert_int_equal(cli_split_target(&c, "ns/", ns, name, "workload"), RC_USAGE);
    assert_int_equal(cli_split_target(&c, "ns/X_1", ns, name, "workload"), RC_USAGE);
}

/* A model from the scenario, as model_load builds it from the API. */
static void load_model(model *m)
{
    memset(m, 0, sizeof(*m));
    cu_world_init(&m->w);
    cu_world_init(&m->cw);
    cu_strmap_init(&m->synth);
    cu_arena_init(&m->keys, 0);
    cu_diag d;
    cu_diag_init(&d);
    const char *path = SCENARIO;
    assert_int_equal(cu_world_load(&m->w, &path, 1, &d), CU_OK);
    cu_engine_opts eo = { 0 };
    eo.clock.now_ms = cu_clock_system_now;
    eo.manual_evictions = 1;
    m->e = cu_engine_new(&eo);
    assert_non_null(m->e);
    assert_int_equal(cu_engine_load(m->e, &m->w, &d), CU_OK);
    cu_engine_run(m->e, MAX_CYCLES);
    cu_diag_free(&d);
}

static void test_pending_from_model(void **st)
{
    (void)st;
    model m;
    load_model(&m);
    json_object *doc = cli_offline_pending(&m, NULL, NULL);
    assert_non_null(doc);
    assert_string_equal(cu_jstr(doc, "kind"), "PendingWorkloads");
    json_object *items = cu_jget(doc, "items");
    assert_int_equal(json_object_array_length(items), 1); /* w-ok is admitted */
    json_object *it = json_object_array_get_idx(items, 0);
    assert_string_equal(cu_jstr(it, "namespace"), "ml");
    assert_string_equal(cu_jstr(it, "name"), "w-big");
    assert_string_equal(cu_jstr(it, "clusterQueue"), "gpu-cq");
    assert_string_equal(cu_jstr(it, "localQueue"), "lq");
    assert_string_equal(cu_jstr(cu_jget(it, "requests"), "nvidia.com/gpu"), "10");
    assert_null(cu_jget(it, "noWorkloadYet"));

    /* the table: all queues, then one LocalQueue (names without namespace) */
    cli c = { .cmd = "queue" };
    cu_buf out;
    cu_buf_init(&out, 0);
    cli_render_pending(&c, doc, NULL, 1, &out);
    const char *s = cu_buf_str(&out);
    assert_true(strncmp(s,
                        "POSITION   NAMESPACE/NAME   CLUSTERQUEUE   LOCALQUEUE   PRIORITY   "
                        "REQUESTS",
                        75) == 0);
    assert_non_null(strstr(s, "\n0          ml/w-big         gpu-cq         lq           0"));
    assert_null(strstr(s, "MESSAGE"));
    cu_buf_free(&out);
    cu_buf_init(&out, 0);
    c.wide = 1;
    cli_render_pending(&c, doc, "ml/lq", 0, &out);
    s = cu_buf_str(&out);
    assert_true(strncmp(s, "POSITION   NAME    LOCALQUEUE", 29) == 0);
    assert_null(strstr(s, "CLUSTERQUEUE"));
    assert_non_null(strstr(s, "request > maximum capacity (10 > 8)"));
    assert_non_null(strstr(s, "   OWNER   MESSAGE\n")); /* no owner: "-" */
    cu_buf_free(&out);
    json_object_put(doc);

    /* the owner of a Workload, from its ownerReferences, in the wide table */
    m.owners = json_object_new_object();
    json_object_object_add(m.owners, "ml/w-big", json_object_new_string("JobSet/train"));
    doc = cli_offline_pending(&m, NULL, NULL);
    it = json_object_array_get_idx(cu_jget(doc, "items"), 0);
    assert_string_equal(cu_jstr(it, "owner"), "JobSet/train");
    cu_buf_init(&out, 0);
    cli_render_pending(&c, doc, NULL, 1, &out);
    assert_non_null(strstr(cu_buf_str(&out), " JobSet/train "));
    cu_buf_free(&out);
    json_object_put(doc);

    /* filters, and a Workload the engine made from a Job */
    doc = cli_offline_pending(&m, "other-cq", NULL);
    assert_int_equal(json_object_array_length(cu_jget(doc, "items")), 0);
    json_object_put(doc);
    assert_int_equal(cu_strmap_put(&m.synth, "ml/w-big", 1), CU_OK);
    doc = cli_offline_pending(&m, "gpu-cq", "ml/lq");
    it = json_object_array_get_idx(cu_jget(doc, "items"), 0);
    assert_true(json_object_get_boolean(cu_jget(it, "noWorkloadYet")));
    json_object_put(doc);
    assert_non_null(cli_find_wl(&m, "ml", "w-ok"));
    assert_null(cli_find_wl(&m, "ml", "nope"));
    cli_model_free(&m);
}

/* Runs fn on a NULL-terminated argument list; returns its exit code. */
static int run(int (*fn)(int, char **), ...)
{
    char *argv[16];
    va_list ap;
    va_start(ap, fn);
    int argc = argv_of(argv, ap);
    va_end(ap);
    return fn(argc, argv);
}

static void test_argument_errors(void **st)
{
    (void)st;
    unsetenv("CUEUE_CONTROLLER");
    /* simulate */
    assert_int_equal(run(cu_simulate_main, "simulate", NULL), EXIT_USAGE);
    assert_int_equal(run(cu_simulate_main, "simulate", "-o", "xml", SCENARIO, NULL), EXIT_USAGE);
    assert_int_equal(run(cu_simulate_main, "simulate", "--max-cycles", "0", SCENARIO, NULL),
                     EXIT_USAGE);
    assert_int_equal(run(cu_simulate_main, "simulate", "--max-cycles", "9x", SCENARIO, NULL),
                     EXIT_USAGE);
    assert_int_equal(run(cu_simulate_main, "simulate", "--now", "yesterday", SCENARIO, NULL),
                     EXIT_USAGE);
    assert_int_equal(
        run(cu_simulate_main, "simulate", "--now", "1960-01-01T00:00:00Z", SCENARIO, NULL),
        EXIT_USAGE);
    assert_int_equal(
        run(cu_simulate_main, "simulate", "--config", "a", "--config", "b", SCENARIO, NULL),
        EXIT_USAGE);
    assert_int_equal(run(cu_simulate_main, "simulate", "--explain=", SCENARIO, NULL), EXIT_USAGE);
    assert_int_equal(run(cu_simulate_main, "simulate", "-o", NULL), EXIT_USAGE);
    assert_int_equal(run(cu_simulate_main, "simulate", "--bogus", SCENARIO, NULL), EXIT_USAGE);
    /* bad input, not bad usage: still 2; an unknown --explain name too */
    assert_int_equal(run(cu_simulate_main, "simulate", "/nonexistent.yaml", NULL), EXIT_USAGE);
    assert_int_equal(run(cu_simulate_main, "simulate", "--explain", "ml/none", SCENARIO, NULL),
                     EXIT_USAGE);
    /* convert */
    assert_int_equal(run(cu_convert_main, "convert", NULL), EXIT_USAGE);
    assert_int_equal(run(cu_convert_main, "convert", "-x", SCENARIO, NULL), EXIT_USAGE);
    assert_int_equal(run(cu_convert_main, "convert", "/nonexistent", NULL), EXIT_USAGE);
    /* help */
    assert_int_equal(run(cu_help_main, "help", "simulate", "extra", NULL), EXIT_USAGE);
    assert_int_equal(run(cu_help_main, "help", "nope", NULL), EXIT_USAGE);
    /* explain and queue: usage problems are found before any connection */
    assert_int_equal(run(cu_explain_main, "explain", NULL), RC_USAGE);
    assert_int_equal(run(cu_explain_main, "explain", "a", "b", NULL), RC_USAGE);
    assert_int_equal(run(cu_explain_main, "explain", "-o", "yaml", "a", NULL), RC_USAGE);
    assert_int_equal(run(cu_explain_main, "explain", "a/b/c", NULL), RC_USAGE);
    assert_int_equal(run(cu_queue_main, "queue", NULL), RC_USAGE);
    assert_int_equal(run(cu_queue_main, "queue", "show", NULL), RC_USAGE);
    assert_int_equal(run(cu_queue_main, "queue", "list", "extra", NULL), RC_USAGE);
    assert_int_equal(run(cu_queue_main, "queue", "pending", "a", "b", NULL), RC_USAGE);
}

static void test_front_helpers(void **st)
{
    (void)st;
    assert_int_equal(cli_exit_code(CU_OK), 0);
    assert_int_equal(cli_exit_code(CU_EINVAL), EXIT_USAGE);
    assert_int_equal(cli_exit_code(CU_ESYNTAX), EXIT_USAGE);
    assert_int_equal(cli_exit_code(CU_EIO), EXIT_USAGE);
    assert_int_equal(cli_exit_code(CU_ENOTFOUND), EXIT_USAGE);
    assert_int_equal(cli_exit_code(CU_ENOMEM), EXIT_INTERNAL);
    char buf[3];
    char *argv[] = { "simulate", "-z", "--long", NULL };
    assert_string_equal(cli_bad_option(argv, 2, 'z', buf), "-z");
    assert_string_equal(cli_bad_option(argv, 3, 0, buf), "--long");
    assert_int_equal(cli_usage_error("simulate", "x"), EXIT_USAGE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_name),
        cmocka_unit_test(test_query_value),
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_parse_opts),
        cmocka_unit_test(test_split_target),
        cmocka_unit_test(test_split_ref),
        cmocka_unit_test(test_pending_from_model),
        cmocka_unit_test(test_argument_errors),
        cmocka_unit_test(test_front_helpers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
