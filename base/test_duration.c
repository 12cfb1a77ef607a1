/*
 * test_duration.c - the Go duration parser (the union of the cases the
 * three former copies were tested on, in api/, cluster/kubesim/ and the
 * controller, plus both spellings of µs and every overflow edge) and
 * kubectl's age notation.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "cu_duration.h"

#define NS_PER_MS INT64_C(1000000)
#define NS_PER_H INT64_C(3600000000000)

static void test_parse_good(void **st)
{
    (void)st;
    static const struct {
        const char *in;
        int64_t ns;
    } good[] = {
        { "0", 0 },
        { "+0", 0 },
        { "-0", 0 },
        { "0s", 0 },
        { "5m", 300 * INT64_C(1000000000) },
        { "1h30m", 5400000 * NS_PER_MS },
        { "300s", 300000 * NS_PER_MS },
        { "1.5h", 5400000 * NS_PER_MS },
        { "250ms", 250 * NS_PER_MS },
        { "1500us", 1500000 },
        { "1500\xc2\xb5s", 1500000 }, /* U+00B5 MICRO SIGN */
        { "1500\xce\xbcs", 1500000 }, /* U+03BC GREEK SMALL LETTER MU */
        { "999999ns", 999999 },
        { "2h45m30.5s", 9930500 * NS_PER_MS },
        { "+10s", 10000 * NS_PER_MS },
        { "-10s", -10000 * NS_PER_MS },
        { "-1.5h", -5400000 * NS_PER_MS },
        { ".5s", 500 * NS_PER_MS },
        { "5.s", 5000 * NS_PER_MS },
        { "1h1h", 7200000 * NS_PER_MS },
        { "30s", 30000 * NS_PER_MS },
        { "1m30s", 90000 * NS_PER_MS },
        { "2h45m", 9900000 * NS_PER_MS },
        { "0.5m", 30000 * NS_PER_MS },
        { "0.1s", 100 * NS_PER_MS },
        { "3s", 3000 * NS_PER_MS },
        { "1.5ms", 1500000 },
        { "1.000000000000000000001s", 1000000000 }, /* digits past 17 dropped */
        { "2562047h", INT64_C(2562047) * NS_PER_H },
        { "9223372036854775807ns", INT64_MAX },
        { "2562047h47m16.854775807s", INT64_MAX },
        { "-9223372036854775807ns", -INT64_MAX },
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        int64_t ns = 12345;
        cu_err err = cu_duration_parse(good[i].in, &ns);
        if (err != CU_OK)
            fail_msg("\"%s\" should parse", good[i].in);
        if (ns != good[i].ns)
            fail_msg("\"%s\": %lld ns, want %lld", good[i].in, (long long)ns,
                     (long long)good[i].ns);
    }
}

static void test_parse_bad(void **st)
{
    (void)st;
    static const char *const bad[] = {
        "",
        "5",
        "10",
        "h",
        "1x",
        "1.h5",
        "10 s",
        " 1s",
        "1s ",
        "1hour",
        "s5",
        "s",
        "-",
        "+",
        ".s",
        ".",
        "1s2",
        "--1s",
        "+-1s",
        "1e3s",
        "0x10s",
        "inf",
        "NaN",
        "1..5s",
        "1.5.3s",
        "\xc2\xb5s",
        "1\xc2s",
        "1\xce\x62s",
        "1S",
        "1H",
        "1 h",
        /* overflow */
        "9999999999h",
        "2562048h",
        "9223372036854775808ns",
        "99999999999999999999ns",
        "2562047h47m16.854775808s",
        "2562047h1h",
        "9223372036854775807ns1ns",
        "106751d",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t ns = 777;
        if (cu_duration_parse(bad[i], &ns) != CU_EINVAL)
            fail_msg("\"%s\" should be refused", bad[i]);
        assert_int_equal(ns, 777); /* untouched */
    }
    int64_t ns = 777;
    assert_int_equal(cu_duration_parse(NULL, &ns), CU_EINVAL);
    assert_int_equal(ns, 777);
}

static void test_parse_ms(void **st)
{
    (void)st;
    static const struct {
        const char *in;
        int64_t ms;
    } cases[] = {
        { "1500us", 1 },
        { "999999ns", 0 },
        { "-1500us", -1 },
        { "1.5s", 1500 },
        { "2562047h", INT64_C(2562047) * 3600000 },
        { "0", 0 },
        { "500ms", 500 },
        { "1h", 3600000 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t ms = -42;
        assert_int_equal(cu_duration_parse_ms(cases[i].in, &ms), CU_OK);
        if (ms != cases[i].ms)
            fail_msg("\"%s\": %lld ms, want %lld", cases[i].in, (long long)ms,
                     (long long)cases[i].ms);
    }
    int64_t ms = -42;
    assert_int_equal(cu_duration_parse_ms("1x", &ms), CU_EINVAL);
    assert_int_equal(ms, -42);
}

static void test_human(void **st)
{
    (void)st;
    static const struct {
        int64_t ms;
        const char *want;
    } cases[] = {
        { -5000, "<invalid>" },
        { -1001, "<invalid>" },
        { -1000, "0s" },
        { -500, "0s" },
        { 0, "0s" },
        { 999, "0s" },
        { 45000, "45s" },
        { 119000, "119s" },
        { 120000, "2m" },
        { 310000, "5m10s" },
        { 540000, "9m" },
        { 599000, "9m59s" },
        { 600000, "10m" },
        { 610000, "10m" },
        { 10799000, "179m" },
        { 10800000, "3h" },
        { 12600000, "3h30m" },
        { 28800000, "8h" },
        { 28860000, "8h" },
        { 47 * 3600000LL, "47h" },
        { 48 * 3600000LL, "2d" },
        { 50 * 3600000LL, "2d2h" },
        { 191 * 3600000LL, "7d23h" },
        { 8 * 86400000LL, "8d" },
        { 8 * 86400000LL + 3600000, "8d" },
        { 729 * 86400000LL, "729d" },
        { 730 * 86400000LL, "2y" },
        { 735 * 86400000LL, "2y5d" },
        { 2919 * 86400000LL, "7y364d" },
        { 2920 * 86400000LL, "8y" },
        { 3000 * 86400000LL, "8y" },
        { INT64_MAX, "292471208y" },
    };
    char buf[32];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cu_duration_human(cases[i].ms, buf, sizeof buf);
        if (strcmp(buf, cases[i].want) != 0)
            fail_msg("%lld ms: got %s, want %s", (long long)cases[i].ms, buf, cases[i].want);
    }
    char small[4];
    cu_duration_human(310000, small, sizeof small);
    assert_string_equal(small, "5m1");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_good),
        cmocka_unit_test(test_parse_bad),
        cmocka_unit_test(test_parse_ms),
        cmocka_unit_test(test_human),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
