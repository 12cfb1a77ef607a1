/*
 * test_jobset.c - Kueue's rules for a JobSet's Workload: its name, the pod
 * counts of its replicated Jobs, its finished conditions.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "cu_job.h"
#include "cu_jobset.h"

static void test_workload_name(void **st)
{
    (void)st;
    cu_arena a;
    cu_arena_init(&a, 0);
    /* sha1("JobSet\njobset.x-k8s.io\ntrain\n1b2c-uid") starts 2da5f */
    assert_string_equal(cu_jobset_workload_name(&a, "train", "1b2c-uid"), "jobset-train-2da5f");
    /* the Job's name is the same rule with its kind and group */
    assert_string_equal(cu_job_workload_name(&a, "pi", "u-1"), "job-pi-b921a");
    assert_string_equal(cu_owner_workload_name(&a, "Job", "batch", "pi", "u-1"), "job-pi-b921a");
    /* long names are cut to 247 characters before the hash */
    char longname[400];
    memset(longname, 'x', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    const char *n = cu_jobset_workload_name(&a, longname, "u");
    assert_int_equal(strlen(n), 247 + 1 + 5);
    assert_int_equal(strncmp(n, "jobset-xxx", 10), 0);
    cu_arena_free(&a);
}

static void test_podset_count(void **st)
{
    (void)st;
    /* replicas x min(parallelism, completions), each defaulting as a Job's */
    assert_int_equal(cu_jobset_podset_count(1, 0, 0, 0, 0), 1);
    assert_int_equal(cu_jobset_podset_count(2, 1, 3, 0, 0), 6);
    assert_int_equal(cu_jobset_podset_count(2, 1, 4, 1, 2), 4);
    assert_int_equal(cu_jobset_podset_count(3, 0, 0, 1, 5), 3);
    assert_int_equal(cu_jobset_podset_count(0, 1, 4, 0, 0), 0);
    assert_int_equal(cu_jobset_podset_count(70000, 1, 70000, 0, 0), -1);
}

static void test_finished(void **st)
{
    (void)st;
    int failed = -1;
    assert_true(cu_jobset_cond_finished("Completed", "True", &failed));
    assert_int_equal(failed, 0);
    assert_true(cu_jobset_cond_finished("Failed", "True", &failed));
    assert_int_equal(failed, 1);
    assert_false(cu_jobset_cond_finished("Completed", "False", &failed));
    /* a Job's condition is not a JobSet's */
    assert_false(cu_jobset_cond_finished("Complete", "True", &failed));
    assert_false(cu_jobset_cond_finished("Suspended", "True", NULL));
    assert_false(cu_jobset_cond_finished(NULL, "True", NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_workload_name),
        cmocka_unit_test(test_podset_count),
        cmocka_unit_test(test_finished),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
