/*
 * test_status.c - queue status computed once: flavors grouped in
 * first-appearance order and cut to the CRD bounds, the Active condition
 * (defaults, message cut on a UTF-8 boundary), and the two renderings
 * (YAML of the cu_node map as simulate prints it; the json-c merge patch);
 * the Workload conditions of an admission, an eviction and a re-admission.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_status.h"
#include "cu_wlstatus.h"

#define T0 1700000000000LL /* 2023-11-14T22:13:20Z */

static const cu_fr_usage USAGE[] = {
    { .flavor = "on-demand",
      .resource = "cpu",
      .total = 12000,
      .admitted = 12000,
      .borrowed = 3000 },
    { .flavor = "spot", .resource = "cpu", .total = 1500, .admitted = 1500 },
    { .flavor = "on-demand",
      .resource = "memory",
      .total = 40LL * 1024 * 1024 * 1024,
      .admitted = 40LL * 1024 * 1024 * 1024,
      .borrowed = 4LL * 1024 * 1024 * 1024 },
};

static char *yaml(const cu_node *n)
{
    cu_buf b;
    cu_buf_init(&b, 0);
    assert_int_equal(cu_node_emit_yaml(n, &b), CU_OK);
    return b.data;
}

static void test_cq_grouping_and_yaml(void **st)
{
    (void)st;
    cu_arena a;
    cu_arena_init(&a, 0);
    cu_cq_info ci = { .name = "cq",
                      .active = 1,
                      .pending = 1,
                      .reserving = 2,
                      .admitted = 2,
                      .nusage = 3,
                      .usage = USAGE,
                      .weighted_share = 7 };
    cu_qstatus s;
    assert_int_equal(cu_qstatus_cq(&a, &ci, 1, &s), CU_OK);
    assert_int_equal(s.nflavors, 2);
    assert_string_equal(s.flavors[0].name, "on-demand");
    assert_int_equal(s.flavors[0].nres, 2);
    assert_string_equal(s.flavors[0].res[1].name, "memory");
    assert_string_equal(s.flavors[1].name, "spot");
    assert_string_equal(s.reason, "Ready");
    assert_string_equal(s.message, "Can admit new workloads");
    char *y = yaml(cu_qstatus_node(&a, &s, T0));
    const char *fl = "  - name: on-demand\n"
                     "    resources:\n"
                     "      - name: cpu\n"
                     "        total: \"12\"\n"
                     "        borrowed: \"3\"\n"
                     "      - name: memory\n"
                     "        total: 40Gi\n"
                     "        borrowed: 4Gi\n"
                     "  - name: spot\n"
                     "    resources:\n"
                     "      - name: cpu\n"
                     "        total: 1500m\n"
                     "        borrowed: \"0\"\n";
    char want[2048];
    snprintf(want, sizeof want,
             "pendingWorkloads: 1\nreservingWorkloads: 2\nadmittedWorkloads: 2\n"
             "flavorsReservation:\n%sflavorsUsage:\n%s"
             "conditions:\n"
             "  - type: Active\n    status: \"True\"\n    reason: Ready\n"
             "    message: Can admit new workloads\n"
             "    lastTransitionTime: \"2023-11-14T22:13:20Z\"\n"
             "fairSharing:\n  weightedShare: 7\n",
             fl, fl);
    if (strcmp(y, want) != 0)
        fprintf(stderr, "got:\n%s", y);
    assert_string_equal(y, want);
    free(y);
    /* without fair sharing the YAML has no fairSharing; the patch has null */
    assert_int_equal(cu_qstatus_cq(&a, &ci, 0, &s), CU_OK);
    y = yaml(cu_qstatus_node(&a, &s, T0));
    assert_null(strstr(y, "fairSharing"));
    free(y);
    json_object *p = cu_qstatus_json(&s, json_object_new_array());
    json_object *stj = NULL, *fs = (json_object *)1;
    assert_true(json_object_object_get_ex(p, "status", &stj));
    assert_true(json_object_object_get_ex(stj, "fairSharing", &fs));
    assert_null(fs);
    json_object_put(p);
    cu_arena_free(&a);
}

/* flavorsUsage leaves out what workloads waiting for their admission
 * checks hold (and its share of the borrowed part); flavorsReservation
 * has all of it. */
static void test_usage_without_reserved_only(void **st)
{
    (void)st;
    cu_arena a;
    cu_arena_init(&a, 0);
    cu_fr_usage u[] = {
        { .flavor = "f", .resource = "cpu", .total = 3000, .admitted = 1000, .borrowed = 2500 }
    };
    cu_cq_info ci = {
        .name = "cq", .active = 1, .reserving = 2, .admitted = 1, .nusage = 1, .usage = u
    };
    cu_qstatus s;
    assert_int_equal(cu_qstatus_cq(&a, &ci, 0, &s), CU_OK);
    json_object *p = cu_qstatus_json(&s, json_object_new_array());
    json_object *st0 = json_object_object_get(p, "status");
    json_object *res = json_object_array_get_idx(
        json_object_object_get(
            json_object_array_get_idx(json_object_object_get(st0, "flavorsReservation"), 0),
            "resources"),
        0);
    json_object *use = json_object_array_get_idx(
        json_object_object_get(
            json_object_array_get_idx(json_object_object_get(st0, "flavorsUsage"), 0), "resources"),
        0);
    assert_string_equal(json_object_get_string(json_object_object_get(res, "total")), "3");
    assert_string_equal(json_object_get_string(json_object_object_get(res, "borrowed")), "2500m");
    assert_string_equal(json_object_get_string(json_object_object_get(use, "total")), "1");
    assert_string_equal(json_object_get_string(json_object_object_get(use, "borrowed")), "500m");
    assert_int_equal(json_object_get_int(json_object_object_get(st0, "reservingWorkloads")), 2);
    assert_int_equal(json_object_get_int(json_object_object_get(st0, "admittedWorkloads")), 1);
    json_object_put(p);
    cu_arena_free(&a);
}

static void test_inactive_and_cut(void **st)
{
    (void)st;
    cu_arena a;
    cu_arena_init(&a, 0);
    /* a message over 32 KiB whose cut falls inside a 2-byte character */
    size_t len = CU_COND_MESSAGE_MAX + 100;
    char *m = malloc(len + 1);
    memset(m, 'x', len);
    m[CU_COND_MESSAGE_MAX - 5] = (char)0xc3;
    m[CU_COND_MESSAGE_MAX - 4] = (char)0xa9;
    m[len] = '\0';
    cu_cq_info ci = { .name = "cq", .active = 0, .reason = NULL, .message = m };
    cu_qstatus s;
    assert_int_equal(cu_qstatus_cq(&a, &ci, 0, &s), CU_OK);
    assert_false(s.active);
    assert_string_equal(s.reason, "Unknown");
    assert_int_equal(strlen(s.message), CU_COND_MESSAGE_MAX - 1);
    assert_string_equal(s.message + strlen(s.message) - 4, " ...");
    /* a short message is borrowed as it is */
    ci.reason = "Stopped";
    ci.message = "Can't admit new workloads: is stopped";
    assert_int_equal(cu_qstatus_cq(&a, &ci, 0, &s), CU_OK);
    assert_ptr_equal(s.message, ci.message);
    assert_string_equal(s.reason, "Stopped");
    free(m);

    /* a LocalQueue without a reason from the engine */
    cu_lq_info li = { .ns = "n", .name = "lq", .active = 1 };
    assert_int_equal(cu_qstatus_lq(&a, &li, &s), CU_OK);
    assert_string_equal(s.reason, "Ready");
    assert_string_equal(s.message, "Can submit new workloads to localQueue");
    li.active = 0;
    li.message = "why";
    assert_int_equal(cu_qstatus_lq(&a, &li, &s), CU_OK);
    assert_string_equal(s.reason, "Unknown");
    assert_string_equal(s.message, "why");
    cu_arena_free(&a);
}

static void test_caps_and_kinds(void **st)
{
    (void)st;
    cu_arena a;
    cu_arena_init(&a, 0);
    /* 20 flavors x 20 resources: a LocalQueue keeps 16 x 16 */
    size_t n = 20 * 20;
    cu_fr_usage *u = calloc(n, sizeof(*u));
    char(*names)[8] = calloc(40, sizeof(*names));
    for (size_t i = 0; i < 40; i++)
        snprintf(names[i], 8, "%c%zu", i < 20 ? 'f' : 'r', i % 20);
    for (size_t i = 0; i < n; i++) {
        u[i].flavor = names[i / 20];
        u[i].resource = names[20 + i % 20];
        u[i].total = 1000;
        u[i].admitted = 1000;
    }
    cu_lq_info li = { .ns = "n",
                      .name = "lq",
                      .active = 1,
                      .reason = "Ready",
                      .message = "m",
                      .nusage = n,
                      .usage = u };
    cu_qstatus s;
    assert_int_equal(cu_qstatus_lq(&a, &li, &s), CU_OK);
    assert_int_equal(s.nflavors, CU_LQ_STATUS_MAX_FLAVORS);
    assert_int_equal(s.flavors[15].nres, CU_LQ_STATUS_MAX_FLAVORS);
    assert_string_equal(s.flavors[15].name, "f15");
    assert_string_equal(s.flavors[15].res[15].name, "r15");
    /* LocalQueues: no borrowed, no fairSharing */
    char *y = yaml(cu_qstatus_node(&a, &s, T0));
    assert_null(strstr(y, "borrowed"));
    assert_null(strstr(y, "fairSharing"));
    free(y);
    cu_cq_info ci = { .name = "cq", .active = 1, .nusage = n, .usage = u };
    assert_int_equal(cu_qstatus_cq(&a, &ci, 0, &s), CU_OK);
    assert_int_equal(s.nflavors, 20);
    assert_int_equal(s.flavors[19].nres, 20);
    free(u);
    free(names);

    /* a Cohort: fairSharing only, conditions ignored */
    cu_cohort_info hi = { .name = "org", .weighted_share = 125 };
    cu_qstatus_cohort(&hi, 1, &s);
    y = yaml(cu_qstatus_node(&a, &s, T0));
    assert_string_equal(y, "fairSharing:\n  weightedShare: 125\n");
    free(y);
    json_object *p = cu_qstatus_json(&s, json_object_new_array());
    assert_string_equal(json_object_to_json_string_ext(p, JSON_C_TO_STRING_PLAIN),
                        "{\"status\":{\"fairSharing\":{\"weightedShare\":125}}}");
    json_object_put(p);
    cu_arena_free(&a);
}

static void test_utf8_cut(void **st)
{
    (void)st;
    assert_int_equal(cu_status_utf8_cut("abc", 10), 3);
    assert_int_equal(cu_status_utf8_cut("ab\xc3\xa9", 3), 2); /* é would be split */
    assert_int_equal(cu_status_utf8_cut("ab\xc3\xa9", 4), 4);
    char *t = cu_status_truncate("hello world", 8, " ...");
    assert_string_equal(t, "hell ...");
    free(t);
    t = cu_status_truncate(NULL, 8, " ...");
    assert_string_equal(t, "");
    free(t);
}

static void test_wl_admission_conds(void **st)
{
    (void)st;
    char buf[64];
    cu_wlcond k[2];
    assert_int_equal(cu_wlstatus_admission("team-a", 0, buf, sizeof buf, k), 2);
    assert_string_equal(k[0].type, "QuotaReserved");
    assert_int_equal(k[0].status, 1);
    assert_string_equal(k[0].reason, "QuotaReserved");
    assert_string_equal(k[0].message, "Quota reserved in ClusterQueue team-a");
    assert_ptr_equal(k[0].message, buf);
    assert_string_equal(k[1].type, "Admitted");
    assert_int_equal(k[1].status, 1);
    assert_string_equal(k[1].reason, "Admitted");
    assert_string_equal(k[1].message, "The workload is admitted");
    /* no ClusterQueue: an empty name; a short buffer cuts the message */
    cu_wlstatus_admission(NULL, 0, buf, sizeof buf, k);
    assert_string_equal(k[0].message, "Quota reserved in ClusterQueue ");
    char small[9];
    cu_wlstatus_admission("team-a", 0, small, sizeof small, k);
    assert_string_equal(k[0].message, "Quota re");
    /* admission checks not all Ready: QuotaReserved alone */
    assert_int_equal(cu_wlstatus_admission("team-a", 1, buf, sizeof buf, k), 1);
    assert_string_equal(k[0].type, "QuotaReserved");
}

static void test_wl_evicted_conds(void **st)
{
    (void)st;
    cu_wlcond k[2];
    assert_int_equal(cu_wlstatus_evicted("Preempted", "InClusterQueue", "m", k), 2);
    assert_string_equal(k[0].type, "Evicted");
    assert_int_equal(k[0].status, 1);
    assert_string_equal(k[0].reason, "Preempted");
    assert_string_equal(k[0].message, "m");
    assert_string_equal(k[1].type, "Preempted");
    assert_int_equal(k[1].status, 1);
    assert_string_equal(k[1].reason, "InClusterQueue");
    assert_string_equal(k[1].message, "m");
    /* not a preemption: Evicted alone */
    assert_int_equal(cu_wlstatus_evicted("Deactivated", NULL, "stopped", k), 1);
    assert_string_equal(k[0].type, "Evicted");
    assert_string_equal(k[0].reason, "Deactivated");
}

static void test_wl_readmitted_cond(void **st)
{
    (void)st;
    char buf[64];
    cu_wlcond k;
    cu_wlstatus_readmitted("Preempted", "Preempted to accommodate a workload", buf, sizeof buf, &k);
    assert_string_equal(k.type, "Preempted");
    assert_int_equal(k.status, 0);
    assert_string_equal(k.reason, "QuotaReserved");
    assert_string_equal(k.message, "Previously: Preempted to accommodate a workload");
    cu_wlstatus_readmitted("Evicted", NULL, buf, sizeof buf, &k);
    assert_string_equal(k.type, "Evicted");
    assert_string_equal(k.message, "Previously: ");
}

/* The owner shown for a pending Workload: the controlling reference,
 * else the first, with the number of other owners (a pod group's pods). */
static void test_owner_text(void **st)
{
    (void)st;
    char b[100];
    json_object *r = json_tokener_parse(
        "[{\"kind\":\"Pod\",\"name\":\"p-0\"},{\"kind\":\"Pod\",\"name\":\"p-1\"},"
        "{\"kind\":\"Pod\",\"name\":\"p-2\"}]");
    assert_string_equal(cu_status_owner_text(r, b, sizeof(b)), "Pod/p-0 (+2)");
    json_object_put(r);
    r = json_tokener_parse("[{\"kind\":\"Team\",\"name\":\"t\"},{\"kind\":\"JobSet\","
                           "\"name\":\"train\",\"controller\":true}]");
    assert_string_equal(cu_status_owner_text(r, b, sizeof(b)), "JobSet/train (+1)");
    json_object_put(r);
    r = json_tokener_parse("[{\"kind\":\"Job\",\"name\":\"pi\",\"controller\":true}]");
    assert_string_equal(cu_status_owner_text(r, b, sizeof(b)), "Job/pi");
    json_object_put(r);
    r = json_tokener_parse("[]");
    assert_null(cu_status_owner_text(r, b, sizeof(b)));
    assert_null(cu_status_owner_text(NULL, b, sizeof(b)));
    json_object_put(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cq_grouping_and_yaml),
        cmocka_unit_test(test_inactive_and_cut),
        cmocka_unit_test(test_caps_and_kinds),
        cmocka_unit_test(test_utf8_cut),
        cmocka_unit_test(test_owner_text),
        cmocka_unit_test(test_usage_without_reserved_only),
        cmocka_unit_test(test_wl_admission_conds),
        cmocka_unit_test(test_wl_evicted_conds),
        cmocka_unit_test(test_wl_readmitted_cond),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
