/*
 * test_names.c - label keys (qualified names) and label values.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "cu_names.h"

#include <string.h>

static void test_label_keys_values(void **state)
{
    (void)state;
    static const char *const good_keys[] = {"a", "A.b_c-9", "example.com/x", "k8s.io/Name_1",
                                            "a.b.c/d"};
    static const char *const bad_keys[] = {"", "-a", "a-", "a/b/c", "/a", "Example.com/a",
                                           "a b", "ex_ample.com/a", "a/"};
    for (size_t i = 0; i < sizeof good_keys / sizeof *good_keys; i++)
        if (cu_label_key_problem(good_keys[i], strlen(good_keys[i])))
            fail_msg("key %s refused", good_keys[i]);
    for (size_t i = 0; i < sizeof bad_keys / sizeof *bad_keys; i++)
        if (!cu_label_key_problem(bad_keys[i], strlen(bad_keys[i])))
            fail_msg("key \"%s\" accepted", bad_keys[i]);
    char k64[65];
    memset(k64, 'k', 64);
    k64[64] = '\0';
    assert_string_equal(cu_label_key_problem(k64, 64), "name part must be no more than 63 characters");
    assert_null(cu_label_key_problem(k64, 63));
    assert_null(cu_label_value_problem("", 0));
    assert_null(cu_label_value_problem("Team_A.1-x", 10));
    assert_null(cu_label_value_problem(k64, 63));
    assert_string_equal(cu_label_value_problem(k64, 64), "must be no more than 63 characters");
    assert_non_null(cu_label_value_problem("../../x", 7));
    assert_non_null(cu_label_value_problem("a\0b", 3));   /* NUL inside */
    assert_non_null(cu_label_value_problem("_a", 2));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_label_keys_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
