/*
 * test_job.c - Kueue's rules for a Job's Workload (cu_job.h), shared by
 * the simulate decoder and the controller's Workload builder.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "cu_job.h"

#include <stdio.h>
#include <string.h>

static void test_podset_count(void **state)
{
    (void)state;
    assert_int_equal(cu_job_podset_count(0, 0, 0, 0), 1); /* both absent: 1 */
    assert_int_equal(cu_job_podset_count(1, 4, 0, 0), 4); /* completions = parallelism */
    assert_int_equal(cu_job_podset_count(1, 4, 1, 2), 2);
    assert_int_equal(cu_job_podset_count(1, 2, 1, 9), 2);
    assert_int_equal(cu_job_podset_count(0, 7, 1, 3), 1); /* parallelism defaults to 1 */
    assert_int_equal(cu_job_podset_count(1, 0, 1, 5), 0);
    assert_int_equal(cu_job_podset_count(1, 5, 0, 9), 5); /* an unset completions is ignored */
}

static void test_min_count(void **state)
{
    (void)state;
    int32_t v = -7;
    assert_int_equal(cu_job_min_count("1", 4, &v), 1);
    assert_int_equal(v, 1);
    assert_int_equal(cu_job_min_count("4", 4, &v), 1);
    assert_int_equal(v, 4);
    assert_int_equal(cu_job_min_count("+3", 4, &v), 1); /* strtol's syntax */
    assert_int_equal(v, 3);
    static const char *const bad[] = {
        "", "0", "5", "-1", "x", "2x", "2 ", "1.5", "99999999999999999999", "-99999999999999999999"
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        v = -7;
        if (cu_job_min_count(bad[i], 4, &v) != 0 || v != -7)
            fail_msg("\"%s\" accepted", bad[i]);
    }
    /* out of long's range is refused (ERANGE) even with the largest count */
    v = -7;
    assert_int_equal(cu_job_min_count("99999999999999999999", INT32_MAX, &v), 0);
    assert_int_equal(v, -7);
    assert_int_equal(cu_job_min_count("2147483647", INT32_MAX, &v), 1);
    assert_int_equal(v, INT32_MAX);
    char msg[128];
    snprintf(msg, sizeof msg, CU_JOB_MIN_PARALLELISM_MSG, 4, "x");
    assert_string_equal(msg, "must be an integer between 1 and 4, got \"x\"");
}

static void test_priority_ref(void **state)
{
    (void)state;
    const char *g = NULL, *k = NULL, *n = NULL;
    assert_int_equal(cu_job_priority_ref(NULL, NULL, &g, &k, &n), 0);
    assert_int_equal(cu_job_priority_ref("", "", &g, &k, &n), 0);
    assert_null(g);
    assert_int_equal(cu_job_priority_ref("high", "pc", &g, &k, &n), 1);
    assert_string_equal(g, "kueue.x-k8s.io");
    assert_string_equal(k, "WorkloadPriorityClass");
    assert_string_equal(n, "high");
    assert_int_equal(cu_job_priority_ref("", "pc", &g, &k, &n), 1);
    assert_string_equal(g, "scheduling.k8s.io");
    assert_string_equal(k, "PriorityClass");
    assert_string_equal(n, "pc");
}

static void test_cond_finished(void **state)
{
    (void)state;
    int failed = -1;
    assert_int_equal(cu_job_cond_finished("Complete", "True", &failed), 1);
    assert_int_equal(failed, 0);
    assert_int_equal(cu_job_cond_finished("Failed", "True", &failed), 1);
    assert_int_equal(failed, 1);
    assert_int_equal(cu_job_cond_finished("Failed", "True", NULL), 1);
    failed = -1;
    assert_int_equal(cu_job_cond_finished("Complete", "False", &failed), 0);
    assert_int_equal(cu_job_cond_finished("Suspended", "True", &failed), 0);
    assert_int_equal(cu_job_cond_finished(NULL, "True", &failed), 0);
    assert_int_equal(cu_job_cond_finished("Complete", NULL, &failed), 0);
    assert_int_equal(failed, -1);
}

static void test_workload_name(void **state)
{
    (void)state;
    cu_arena a;
    cu_arena_init(&a, 0);
    /* the uid changes the hash, the name prefix stays */
    const char *x = cu_job_workload_name(&a, "pi", "u-1"),
               *y = cu_job_workload_name(&a, "pi", "u-2");
    assert_non_null(x);
    assert_non_null(y);
    assert_int_equal(strncmp(x, "job-pi-", 7), 0);
    assert_int_equal(strlen(x), strlen("job-pi-") + 5);
    assert_string_not_equal(x, y);
    cu_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_podset_count),  cmocka_unit_test(test_min_count),
        cmocka_unit_test(test_priority_ref),  cmocka_unit_test(test_cond_finished),
        cmocka_unit_test(test_workload_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
