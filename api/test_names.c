/*
 * test_names.c - the syntax of names: DNS-1123 labels and subdomains,
 * qualified names (label keys) and label values.
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
    static const char *const good_keys[] = { "a", "A.b_c-9", "example.com/x", "k8s.io/Name_1",
                                             "a.b.c/d" };
    static const char *const bad_keys[] = {
        "", "-a", "a-", "a/b/c", "/a", "Example.com/a", "a b", "ex_ample.com/a", "a/"
    };
    for (size_t i = 0; i < sizeof good_keys / sizeof *good_keys; i++)
        if (cu_qname_problems(good_keys[i], strlen(good_keys[i]), 0))
            fail_msg("key %s refused", good_keys[i]);
    for (size_t i = 0; i < sizeof bad_keys / sizeof *bad_keys; i++)
        if (!cu_qname_problems(bad_keys[i], strlen(bad_keys[i]), 0))
            fail_msg("key \"%s\" accepted", bad_keys[i]);
    assert_int_equal(cu_qname_problems("Example.com/a", 13, 1), 0); /* folded */
    assert_int_equal(cu_qname_problems("a/b/c", 5, 0), CU_NAME_SLASHES);
    assert_int_equal(cu_qname_problems("/", 1, 0), CU_NAME_PREFIX_EMPTY | CU_NAME_PART_EMPTY);
    char k64[65];
    memset(k64, 'k', 64);
    k64[64] = '\0';
    assert_int_equal(cu_qname_problems(k64, 64, 0), CU_NAME_PART_LONG);
    assert_string_equal(cu_name_detail(CU_NAME_PART_LONG),
                        "name part must be no more than 63 characters");
    assert_int_equal(cu_qname_problems(k64, 63, 0), 0);
    k64[63] = '-'; /* too long and a bad last character: both listed */
    assert_int_equal(cu_qname_problems(k64, 64, 0), CU_NAME_PART_LONG | CU_NAME_PART_CHARS);
    assert_int_equal(cu_label_value_problems(k64, 64), CU_VALUE_LONG | CU_VALUE_CHARS);
    k64[63] = 'k';
    assert_int_equal(cu_label_value_problems("", 0), 0);
    assert_int_equal(cu_label_value_problems("Team_A.1-x", 10), 0);
    assert_int_equal(cu_label_value_problems(k64, 63), 0);
    assert_int_equal(cu_label_value_problems(k64, 64), CU_VALUE_LONG);
    assert_string_equal(cu_name_detail(CU_VALUE_LONG), "must be no more than 63 characters");
    assert_int_equal(cu_label_value_problems("../../x", 7), CU_VALUE_CHARS);
    assert_int_equal(cu_label_value_problems("a\0b", 3), CU_VALUE_CHARS); /* NUL inside */
    assert_int_equal(cu_label_value_problems("_a", 2), CU_VALUE_CHARS);
}

static void test_dns1123(void **state)
{
    (void)state;
    assert_true(cu_dns1123_label_ok("a-1", 3));
    assert_false(cu_dns1123_label_ok("a.b", 3));
    assert_false(cu_dns1123_label_ok("-a", 2));
    assert_false(cu_dns1123_label_ok("", 0));
    assert_true(cu_dns1123_subdomain_ok("a.b-c.d", 7, 0));
    assert_false(cu_dns1123_subdomain_ok("a..b", 4, 0));
    assert_false(cu_dns1123_subdomain_ok("a.-b", 4, 0));
    assert_false(cu_dns1123_subdomain_ok("a.b-", 4, 0));
    assert_false(cu_dns1123_subdomain_ok("A.b", 3, 0));
    assert_true(cu_dns1123_subdomain_ok("A.b", 3, 1));
    assert_false(cu_dns1123_subdomain_ok("a\0b", 3, 1));
    const char *sub = cu_name_detail(CU_DNS_SUBDOMAIN_CHARS);
    assert_non_null(strstr(sub, "a lowercase RFC 1123 subdomain must consist of"));
    assert_string_equal(cu_name_detail(CU_NAME_PREFIX_CHARS) + strlen("prefix part "), sub);
    assert_non_null(strstr(cu_name_detail(CU_DNS_LABEL_CHARS), "regex used for validation is "
                                                               "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"));
}

/* metadata.generateName: the base cut to 58 and 5 characters of the
 * alphabet, each drawn from r. */
static void test_generate(void **state)
{
    (void)state;
    char out[80];
    cu_name_generate(out, sizeof out, "sample-job-", 0);
    assert_string_equal(out, "sample-job-bbbbb");
    cu_name_generate(out, sizeof out, "x-", 1 + 27 * 2);
    assert_string_equal(out, "x-cdbbb");
    char base[70];
    memset(base, 'a', 69);
    base[69] = '\0';
    cu_name_generate(out, sizeof out, base, UINT64_MAX);
    assert_int_equal(strlen(out), 63);
    assert_memory_equal(out, base, 58);
    for (int i = 58; i < 63; i++)
        assert_non_null(strchr(CU_GENERATE_ALPHABET, out[i]));
    cu_name_generate(out, 4, "abcdef", 0); /* truncated to fit */
    assert_string_equal(out, "abc");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_label_keys_values),
        cmocka_unit_test(test_dns1123),
        cmocka_unit_test(test_generate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
