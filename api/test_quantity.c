/*
 * test_quantity.c - table-driven tests for cu_quantity: parsing (each
 * suffix, exponents, signs, rounding, overflow boundaries, malformed
 * input), canonical printing per format, round-trips and the checked and
 * saturating arithmetic.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cu_quantity.h"

#define DSI CU_QFMT_DECIMAL_SI
#define BSI CU_QFMT_BINARY_SI
#define DEX CU_QFMT_DECIMAL_EXP

#define KI INT64_C(1024)
#define MI (KI * KI)
#define GI (MI * KI)
#define TI (GI * KI)
#define PI (TI * KI)

/* ---------------- parse ---------------- */

typedef struct parse_case {
    const char *in;
    cu_err err;
    int64_t milli; /* checked only when err == CU_OK */
    cu_qfmt fmt;
} parse_case;

static const parse_case parse_cases[] = {
    /* plain numbers and signs */
    { "0", CU_OK, 0, DSI },
    { "-0", CU_OK, 0, DSI },
    { "1", CU_OK, 1000, DSI },
    { "+1", CU_OK, 1000, DSI },
    { "-1", CU_OK, -1000, DSI },
    { "007", CU_OK, 7000, DSI },
    { "1.5", CU_OK, 1500, DSI },
    { ".5", CU_OK, 500, DSI },
    { "5.", CU_OK, 5000, DSI },
    { "-.5", CU_OK, -500, DSI },
    { "+5.", CU_OK, 5000, DSI },
    { "1.000000000000000000000000000000", CU_OK, 1000, DSI },
    { "000000000000000000000000000000012", CU_OK, 12000, DSI },
    { "0.000", CU_OK, 0, DSI },
    /* decimal SI suffixes */
    { "1500m", CU_OK, 1500, DSI },
    { "-500m", CU_OK, -500, DSI },
    { "1000000n", CU_OK, 1, DSI },
    { "1000u", CU_OK, 1, DSI },
    { "2k", CU_OK, 2000000, DSI },
    { "1.5k", CU_OK, 1500000, DSI },
    { "3M", CU_OK, INT64_C(3000000000), DSI },
    { "1G", CU_OK, INT64_C(1000000000000), DSI },
    { "1T", CU_OK, INT64_C(1000000000000000), DSI },
    { "1P", CU_OK, INT64_C(1000000000000000000), DSI },
    { "9P", CU_OK, INT64_C(9000000000000000000), DSI },
    { "0.001E", CU_OK, INT64_C(1000000000000000000), DSI },
    { "0E", CU_OK, 0, DSI },
    /* binary SI suffixes */
    { "1Ki", CU_OK, KI * 1000, BSI },
    { "1Mi", CU_OK, MI * 1000, BSI },
    { "1.5Gi", CU_OK, GI * 1500, BSI },
    { "2Ti", CU_OK, TI * 2000, BSI },
    { "1Pi", CU_OK, PI * 1000, BSI },
    { "8Pi", CU_OK, PI * 8000, BSI },
    { "0.5Ki", CU_OK, 512000, BSI },
    { "-3Mi", CU_OK, -MI * 3000, BSI },
    { "0Ei", CU_OK, 0, BSI },
    { "0.0000001Ei", CU_OK, INT64_C(115292150460685), BSI }, /* 2^60*1e-7, up */
    /* decimal exponents */
    { "1e3", CU_OK, 1000000, DEX },
    { "1E3", CU_OK, 1000000, DEX },
    { "1e+3", CU_OK, 1000000, DEX },
    { "2E-3", CU_OK, 2, DEX },
    { "1.5e3", CU_OK, 1500000, DEX },
    { "-1.5e-3", CU_OK, -2, DEX },
    { "12e0", CU_OK, 12000, DEX },
    { "1e15", CU_OK, INT64_C(1000000000000000000), DEX },
    { "1e16", CU_EOVERFLOW, 0, DEX },
    { "1e999999999999", CU_EOVERFLOW, 0, DEX },
    { "1e99999999999999999999999999999999", CU_EOVERFLOW, 0, DEX },
    { "0e999999999999", CU_OK, 0, DEX },
    { "1e-999999999999", CU_OK, 1, DEX },
    { "-1e-999999999999", CU_OK, -1, DEX },
    { "100000e-999999999999", CU_OK, 1, DEX },
    { "0.00001e8", CU_OK, 1000000, DEX },
    /* rounding: magnitude rounds up to the next milli (away from zero) */
    { "0.1m", CU_OK, 1, DSI },
    { "-0.1m", CU_OK, -1, DSI },
    { "1n", CU_OK, 1, DSI },
    { "-1n", CU_OK, -1, DSI },
    { "1000001n", CU_OK, 2, DSI },
    { "1500u", CU_OK, 2, DSI },
    { "1.0001m", CU_OK, 2, DSI },
    { "0.0001", CU_OK, 1, DSI },
    { "0.0001Ki", CU_OK, 103, BSI }, /* 102.4 milli */
    { "-0.0001Ki", CU_OK, -103, BSI },
    { "0.001Ki", CU_OK, 1024, BSI }, /* exactly 1.024 */
    { "0.00000000000000000000000000000000000000001", CU_OK, 1, DSI },
    /* overflow boundaries */
    { "9223372036854775807m", CU_OK, INT64_MAX, DSI },
    { "9223372036854775808m", CU_EOVERFLOW, 0, DSI },
    { "-9223372036854775808m", CU_OK, INT64_MIN, DSI },
    { "-9223372036854775809m", CU_EOVERFLOW, 0, DSI },
    { "9223372036854775.807", CU_OK, INT64_MAX, DSI },
    { "9223372036854775.8069", CU_OK, INT64_MAX, DSI },
    { "9223372036854775.8071", CU_EOVERFLOW, 0, DSI },
    { "-9223372036854775.8079", CU_OK, INT64_MIN, DSI },
    { "-9223372036854775.8081", CU_EOVERFLOW, 0, DSI },
    { "9223372036854775807000000n", CU_OK, INT64_MAX, DSI },
    { "9223372036854775807000001n", CU_EOVERFLOW, 0, DSI },
    { "10P", CU_EOVERFLOW, 0, DSI },
    { "1E", CU_EOVERFLOW, 0, DSI },
    { "10E", CU_EOVERFLOW, 0, DSI },
    { "9Pi", CU_EOVERFLOW, 0, BSI },
    { "1Ei", CU_EOVERFLOW, 0, BSI },
    { "100000000000000000000000000000", CU_EOVERFLOW, 0, DSI },
    { "-100000000000000000000000000000", CU_EOVERFLOW, 0, DSI },
    /* the examples: large quotas the CRD pattern accepts; beyond
     * int64 milli-units each is refused, never wrapped (the ClusterQueue
     * is then invalid, api/test_objects.c test_quota_too_large) */
    { "1e18", CU_EOVERFLOW, 0, DEX },
    { "1e400", CU_EOVERFLOW, 0, DEX },
    { "-1e400", CU_EOVERFLOW, 0, DEX },
    { "99999999999999999999", CU_EOVERFLOW, 0, DSI },
    { "9223372036854775", CU_OK, INT64_C(9223372036854775000), DSI },
    { "9223372036854776", CU_EOVERFLOW, 0, DSI },
    { "8192Ti", CU_OK, PI * 8000, BSI },
    /* malformed */
    { "", CU_EINVAL, 0, DSI },
    { " ", CU_EINVAL, 0, DSI },
    { " 1", CU_EINVAL, 0, DSI },
    { "1 ", CU_EINVAL, 0, DSI },
    { "1 Mi", CU_EINVAL, 0, DSI },
    { "1.2.3", CU_EINVAL, 0, DSI },
    { "1..2", CU_EINVAL, 0, DSI },
    { "1Kb", CU_EINVAL, 0, DSI },
    { "1K", CU_EINVAL, 0, DSI },
    { "1ki", CU_EINVAL, 0, DSI },
    { "1mi", CU_EINVAL, 0, DSI },
    { "1i", CU_EINVAL, 0, DSI },
    { "Mi", CU_EINVAL, 0, DSI },
    { "+", CU_EINVAL, 0, DSI },
    { "-", CU_EINVAL, 0, DSI },
    { ".", CU_EINVAL, 0, DSI },
    { "+-1", CU_EINVAL, 0, DSI },
    { "--1", CU_EINVAL, 0, DSI },
    { "1e", CU_EINVAL, 0, DSI },
    { "1e+", CU_EINVAL, 0, DSI },
    { "1E-", CU_EINVAL, 0, DSI },
    { "1e1.5", CU_EINVAL, 0, DSI },
    { "1e3k", CU_EINVAL, 0, DSI },
    { "1Ee3", CU_EINVAL, 0, DSI },
    { "1m5", CU_EINVAL, 0, DSI },
    { ".e3", CU_EINVAL, 0, DSI },
    { "1x", CU_EINVAL, 0, DSI },
    { "0x10", CU_EINVAL, 0, DSI },
    { "1_000", CU_EINVAL, 0, DSI },
    { "abc", CU_EINVAL, 0, DSI },
    { "1\n", CU_EINVAL, 0, DSI },
};

static void test_parse_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(parse_cases) / sizeof(parse_cases[0]); i++) {
        const parse_case *c = &parse_cases[i];
        int64_t milli = 0x5a5a5a5a;
        cu_qfmt fmt = (cu_qfmt)99;
        cu_err err = cu_qty_parse(c->in, &milli, &fmt);
        if (err != c->err) {
            print_error("parse \"%s\": err %d (%s), want %d (%s)\n", c->in, err, cu_strerror(err),
                        c->err, cu_strerror(c->err));
            fail();
        }
        if (err != CU_OK)
            continue;
        if (milli != c->milli || fmt != c->fmt) {
            print_error("parse \"%s\": %" PRId64 " fmt %d, want %" PRId64 " fmt %d\n", c->in, milli,
                        fmt, c->milli, c->fmt);
            fail();
        }
        /* fmt is optional; the value must not depend on it */
        int64_t again = 0;
        assert_int_equal(cu_qty_parse(c->in, &again, NULL), CU_OK);
        assert_true(again == milli);
    }
}

/* Negation symmetry: parse("-x") == -parse("x") for every good row. */
static void test_parse_sign_symmetry(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(parse_cases) / sizeof(parse_cases[0]); i++) {
        const parse_case *c = &parse_cases[i];
        if (c->err != CU_OK || c->in[0] == '-' || c->in[0] == '+')
            continue;
        char neg[128];
        snprintf(neg, sizeof(neg), "-%s", c->in);
        int64_t m = 0;
        assert_int_equal(cu_qty_parse(neg, &m, NULL), CU_OK);
        if (m != -c->milli) {
            print_error("\"%s\" -> %" PRId64 ", want %" PRId64 "\n", neg, m, -c->milli);
            fail();
        }
    }
}

/* Long inputs: no quadratic blowup or stack use, exact answers. */
static void test_parse_long_digit_strings(void **state)
{
    (void)state;
    enum { N = 200000 };
    static char buf[N + 16];
    int64_t m = 0;

    /* "0.000...0001" with N-3 zeros after the point: rounds up to 1m */
    memset(buf, '0', N);
    buf[1] = '.';
    buf[N - 1] = '1';
    buf[N] = '\0';
    assert_int_equal(cu_qty_parse(buf, &m, NULL), CU_OK);
    assert_true(m == 1);

    /* "1000...000e-(N-1)" is exactly 1 */
    memset(buf, '0', N);
    buf[0] = '1';
    snprintf(buf + N, 16, "e-%d", N - 1);
    assert_int_equal(cu_qty_parse(buf, &m, NULL), CU_OK);
    assert_true(m == 1000);

    /* N digits of integer: overflow */
    memset(buf, '9', N);
    buf[N] = '\0';
    assert_int_equal(cu_qty_parse(buf, &m, NULL), CU_EOVERFLOW);

    /* N leading zeros then 42Ki */
    memset(buf, '0', N);
    snprintf(buf + N, 16, "42Ki");
    assert_int_equal(cu_qty_parse(buf, &m, NULL), CU_OK);
    assert_true(m == 42 * KI * 1000);
}

static void test_parse_null_args(void **state)
{
    (void)state;
    int64_t m = 0;
    assert_int_equal(cu_qty_parse(NULL, &m, NULL), CU_EINVAL);
    assert_int_equal(cu_qty_parse("1", NULL, NULL), CU_EINVAL);
}

/* ---------------- format ---------------- */

typedef struct format_case {
    int64_t milli;
    cu_qfmt fmt;
    const char *want;
} format_case;

static const format_case format_cases[] = {
    /* DecimalSI: largest suffix that keeps an integer */
    { 0, DSI, "0" },
    { 1, DSI, "1m" },
    { 1500, DSI, "1500m" },
    { -500, DSI, "-500m" },
    { 2000, DSI, "2" },
    { -2000, DSI, "-2" },
    { 1500000, DSI, "1500" },
    { 2000000, DSI, "2k" },
    { INT64_C(1000000000), DSI, "1M" },
    { INT64_C(1000000000000), DSI, "1G" },
    { INT64_C(1000000000000000), DSI, "1T" },
    { INT64_C(5000000000000000000), DSI, "5P" },
    { INT64_C(1024000), DSI, "1024" },
    { INT64_MAX, DSI, "9223372036854775807m" },
    { INT64_MIN, DSI, "-9223372036854775808m" },
    /* BinarySI */
    { 0, BSI, "0" },
    { GI * 2000, BSI, "2Gi" },
    { MI * 1536000, BSI, "1536Mi" },
    { GI * 1500, BSI, "1536Mi" },
    { KI * 1000, BSI, "1Ki" },
    { -KI * 1000, BSI, "-1Ki" },
    { KI * 2000 * 1000, BSI, "2000Ki" },
    { PI * 8000, BSI, "8Pi" },
    { TI * 1000 * 1023, BSI, "1023Ti" },
    { 1025000, BSI, "1025" },
    { INT64_C(1000000000), BSI, "1000000" }, /* 1e6 is not a multiple of 1024 */
    { 1023000, BSI, "1023" },                /* |v| < 1024: DecimalSI */
    { 100000, BSI, "100" },
    { 1000000, BSI, "1k" }, /* 1000 < 1024: DecimalSI */
    { -1000000, BSI, "-1k" },
    { 500, BSI, "500m" },
    { 1024500, BSI, "1024500m" }, /* not whole: DecimalSI */
    { INT64_MIN, BSI, "-9223372036854775808m" },
    /* DecimalExponent: exponent a multiple of 3, none when 0 */
    { 0, DEX, "0" },
    { 1000, DEX, "1" },
    { 1000000, DEX, "1e3" },
    { 1500, DEX, "1500e-3" },
    { 500, DEX, "500e-3" },
    { 1500000, DEX, "1500" },
    { -INT64_C(1000000000), DEX, "-1e6" },
    { INT64_C(3000000000000000000), DEX, "3e15" },
    { INT64_MIN, DEX, "-9223372036854775808e-3" },
};

static void test_format_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(format_cases) / sizeof(format_cases[0]); i++) {
        const format_case *c = &format_cases[i];
        char out[32];
        memset(out, 'x', sizeof(out));
        char *r = cu_qty_format(c->milli, c->fmt, out, sizeof(out));
        assert_ptr_equal(r, out);
        if (strcmp(out, c->want) != 0) {
            print_error("format(%" PRId64 ", %d) = \"%s\", want \"%s\"\n", c->milli, c->fmt, out,
                        c->want);
            fail();
        }
    }
}

static void test_format_small_buffer(void **state)
{
    (void)state;
    char out[6];
    memset(out, 'x', sizeof(out));
    cu_qty_format(INT64_MIN, DEX, out, sizeof(out));
    assert_string_equal(out, "-9223"); /* truncated, still terminated */
    char one[1] = { 'x' };
    cu_qty_format(1500, DSI, one, 1);
    assert_int_equal(one[0], '\0');
    assert_null(cu_qty_format(1, DSI, NULL, 0));
}

typedef struct res_case {
    const char *name;
    cu_qfmt want;
} res_case;

static void test_fmt_for_resource(void **state)
{
    (void)state;
    static const res_case cases[] = {
        { "memory", BSI },
        { "ephemeral-storage", BSI },
        { "hugepages-2Mi", BSI },
        { "hugepages-1Gi", BSI },
        { "hugepages", DSI },
        { "Memory", DSI },
        { "memory2", DSI },
        { "cpu", DSI },
        { "nvidia.com/gpu", DSI },
        { "pods", DSI },
        { "", DSI },
        { NULL, DSI },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        if (cu_qty_fmt_for_resource(cases[i].name) != cases[i].want) {
            print_error("fmt_for_resource(%s) wrong\n", cases[i].name ? cases[i].name : "NULL");
            fail();
        }
    }
    char out[32];
    assert_string_equal(cu_qty_format_res("memory", GI * 2, out, 32), "2Gi");
    assert_string_equal(cu_qty_format_res("hugepages-2Mi", MI * 4, out, 32), "4Mi");
    assert_string_equal(cu_qty_format_res("cpu", 1500, out, 32), "1500m");
    assert_string_equal(cu_qty_format_res("cpu", KI * 2000, out, 32), "2048");
    assert_string_equal(cu_qty_format_res("memory", 1500, out, 32), "1500");
    assert_string_equal(cu_qty_format_res("memory", 1000, out, 32), "1k"); /* < 1024: DecimalSI */
    assert_string_equal(cu_qty_format_res("nvidia.com/gpu", 1000, out, 32), "1k");
    assert_string_equal(cu_qty_format_res("nvidia.com/gpu", 3, out, 32), "3");
}

/* ---------------- the unit of a resource (Kueue's ResourceValue) ---------------- */

typedef struct unit_case {
    const char *res, *in;
    cu_err err;
    int64_t v;
    const char *out; /* cu_qty_format_res(res, v) */
} unit_case;

static const unit_case unit_cases[] = {
    /* cpu: milli-units, rounded up below a milli */
    { "cpu", "1.5", CU_OK, 1500, "1500m" },
    { "cpu", "0.1m", CU_OK, 1, "1m" },
    { "cpu", "2", CU_OK, 2000, "2" },
    { "cpu", "9223372036854775807m", CU_OK, INT64_MAX, "9223372036854775807m" },
    { "cpu", "9223372036854775.807", CU_OK, INT64_MAX, "9223372036854775807m" },
    { "cpu", "9223372036854775808m", CU_EOVERFLOW, 0, NULL },
    { "cpu", "9223372036854776", CU_EOVERFLOW, 0, NULL },
    { "cpu", "9223372036854775", CU_OK, INT64_C(9223372036854775000), "9223372036854775" },
    /* memory: whole bytes, a fraction rounded up (Value()) */
    { "memory", "1.5", CU_OK, 2, "2" },
    { "memory", "1500m", CU_OK, 2, "2" },
    { "memory", "1m", CU_OK, 1, "1" },
    { "memory", "1n", CU_OK, 1, "1" },
    { "memory", "0", CU_OK, 0, "0" },
    { "memory", "1Gi", CU_OK, INT64_C(1073741824), "1Gi" },
    { "memory", "1Ei", CU_OK, INT64_C(1152921504606846976), "1Ei" },
    { "memory", "7Ei", CU_OK, 7 * INT64_C(1152921504606846976), "7Ei" },
    { "memory", "8Ei", CU_EOVERFLOW, 0, NULL },
    { "memory", "9Pi", CU_OK, 9 * INT64_C(1125899906842624), "9Pi" },
    { "memory", "1e18", CU_OK, INT64_C(1000000000000000000), "976562500000000Ki" },
    { "memory", "9223372036854775807", CU_OK, INT64_MAX, "9223372036854775807" },
    { "memory", "9223372036854775808", CU_EOVERFLOW, 0, NULL },
    { "memory", "9223372036854775806.5", CU_OK, INT64_MAX, "9223372036854775807" },
    { "memory", "9223372036854775807.5", CU_EOVERFLOW, 0, NULL },
    { "memory", "1e19", CU_EOVERFLOW, 0, NULL },
    { "memory", "1e400", CU_EOVERFLOW, 0, NULL },
    { "memory", "1000", CU_OK, 1000, "1k" },
    { "memory", "1536", CU_OK, 1536, "1536" },
    { "memory", "2048", CU_OK, 2048, "2Ki" },
    { "ephemeral-storage", "1.5Ki", CU_OK, 1536, "1536" },
    { "hugepages-2Mi", "4Mi", CU_OK, 4 * INT64_C(1048576), "4Mi" },
    /* other resources: whole units, DecimalSI */
    { "nvidia.com/gpu", "500m", CU_OK, 1, "1" },
    { "nvidia.com/gpu", "1.001", CU_OK, 2, "2" },
    { "nvidia.com/gpu", "1E", CU_OK, INT64_C(1000000000000000000), "1E" },
    { "nvidia.com/gpu", "9E", CU_OK, INT64_C(9000000000000000000), "9E" },
    { "nvidia.com/gpu", "10E", CU_EOVERFLOW, 0, NULL },
    { "pods", "3", CU_OK, 3, "3" },
    { "pods", "-1.5", CU_OK, -2, "-2" },
    { "pods", "x", CU_EINVAL, 0, NULL },
};

static void test_res_units(void **state)
{
    (void)state;
    assert_int_equal(cu_qty_res_scale("cpu"), CU_QTY_SCALE_MILLI);
    assert_int_equal(cu_qty_res_scale("memory"), CU_QTY_SCALE_UNIT);
    assert_int_equal(cu_qty_res_scale("CPU"), CU_QTY_SCALE_UNIT);
    assert_int_equal(cu_qty_res_scale(NULL), CU_QTY_SCALE_UNIT);
    assert_true(cu_qty_res_one("cpu") == 1000 && cu_qty_res_one("pods") == 1);
    assert_true(cu_qty_res_units("cpu", 3) == 3000 && cu_qty_res_units("pods", 3) == 3);
    assert_true(cu_qty_res_units("cpu", INT64_MAX / 10) == INT64_MAX);
    assert_true(cu_qty_res_units("cpu", INT64_MIN / 10) == INT64_MIN);
    assert_true(cu_qty_res_float("cpu", 1500) == 1.5 && cu_qty_res_float("memory", 1500) == 1500.0);
    for (size_t i = 0; i < sizeof(unit_cases) / sizeof(unit_cases[0]); i++) {
        const unit_case *c = &unit_cases[i];
        int64_t v = 0x5a5a;
        cu_err err = cu_qty_parse_res(c->res, c->in, &v, NULL);
        if (err != c->err || (err == CU_OK && v != c->v)) {
            print_error("%s \"%s\": err %d v %" PRId64 ", want err %d v %" PRId64 "\n", c->res,
                        c->in, err, v, c->err, c->v);
            fail();
        }
        if (err != CU_OK)
            continue;
        char out[32];
        cu_qty_format_res(c->res, v, out, sizeof out);
        if (strcmp(out, c->out) != 0) {
            print_error("%s %" PRId64 " printed \"%s\", want \"%s\"\n", c->res, v, out, c->out);
            fail();
        }
        int64_t back = 0;
        assert_int_equal(cu_qty_parse_res(c->res, out, &back, NULL), CU_OK);
        assert_true(back == v);
    }
    int64_t v;
    assert_int_equal(cu_qty_parse_scaled("1", 1, &v, NULL), CU_EINVAL);
    assert_int_equal(cu_qty_parse_scaled("1", 6, &v, NULL), CU_EINVAL);
}

/* Whole units: format then parse is the identity over int64, every format. */
static void test_round_trip_units(void **state)
{
    (void)state;
    const int64_t vals[] = { 1,
                             999,
                             1000,
                             1023,
                             1024,
                             1536,
                             INT64_C(1) << 62,
                             INT64_MAX,
                             INT64_MAX - 1,
                             INT64_MIN,
                             INT64_MIN + 1,
                             INT64_C(1000000000000000000),
                             INT64_C(9000000000000000000) };
    for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
        for (int f = 0; f < 3; f++) {
            char out[32];
            int64_t back = 0;
            cu_qty_format_scaled(vals[i], CU_QTY_SCALE_UNIT, (cu_qfmt)f, out, sizeof out);
            assert_int_equal(cu_qty_parse_scaled(out, CU_QTY_SCALE_UNIT, &back, NULL), CU_OK);
            if (back != vals[i]) {
                print_error("%" PRId64 " fmt %d printed \"%s\" read back %" PRId64 "\n", vals[i], f,
                            out, back);
                fail();
            }
        }
    }
}

/* ---------------- round trips ---------------- */

typedef struct rt_case {
    const char *in;
    const char *canonical; /* cu_qty_format(parse(in), parsed fmt) */
} rt_case;

static const rt_case rt_cases[] = {
    { "1.5", "1500m" },     { "1000", "1k" },       { "1024", "1024" }, { "0.1m", "1m" },
    { "1.5Gi", "1536Mi" },  { "2048Ki", "2Mi" },    { "0.5Ki", "512" }, { "1.5Ki", "1536" },
    { "1000Mi", "1000Mi" }, { "1e3", "1e3" },       { "10e2", "1e3" },  { "12e2", "1200" },
    { "1.5e-3", "2e-3" },   { "-0.0", "0" },        { "-2Gi", "-2Gi" }, { "1E3", "1e3" },
    { "1M", "1M" },         { "0.001Ki", "1024m" },
};

static void test_round_trip_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(rt_cases) / sizeof(rt_cases[0]); i++) {
        const rt_case *c = &rt_cases[i];
        int64_t m = 0, m2 = 0;
        cu_qfmt f;
        char out[32];
        assert_int_equal(cu_qty_parse(c->in, &m, &f), CU_OK);
        cu_qty_format(m, f, out, sizeof(out));
        if (strcmp(out, c->canonical) != 0) {
            print_error("\"%s\" -> \"%s\", want \"%s\"\n", c->in, out, c->canonical);
            fail();
        }
        assert_int_equal(cu_qty_parse(out, &m2, NULL), CU_OK);
        assert_true(m2 == m);
    }
}

/* format then parse is the identity on int64 milli, for every format;
 * values from a fixed LCG plus hand-picked edges. */
static void test_round_trip_values(void **state)
{
    (void)state;
    int64_t edges[] = { 0,
                        1,
                        -1,
                        999,
                        1000,
                        1001,
                        1023000,
                        1024000,
                        -1024000,
                        INT64_MAX,
                        INT64_MIN,
                        INT64_MAX - 1,
                        INT64_MIN + 1,
                        PI * 8000,
                        -PI * 8000,
                        INT64_C(1000000000000000000) };
    uint64_t x = 0x9e3779b97f4a7c15u;
    for (int i = 0; i < 20000; i++) {
        int64_t v;
        if (i < (int)(sizeof(edges) / sizeof(edges[0]))) {
            v = edges[i];
        } else {
            x = x * 6364136223846793005u + 1442695040888963407u;
            /* vary magnitude and make round multiples common */
            uint64_t r = x >> (x & 63);
            static const int64_t mul[] = { 1, 1000, 1024000, MI * 1000, 1000000 };
            int64_t base = (int64_t)(r >> 1) / mul[i % 5];
            v = base * mul[i % 5];
            if (x & 0x100)
                v = -v;
        }
        for (int f = 0; f < 3; f++) {
            char out[32];
            int64_t back = 0;
            cu_qty_format(v, (cu_qfmt)f, out, sizeof(out));
            cu_err err = cu_qty_parse(out, &back, NULL);
            if (err != CU_OK || back != v) {
                print_error("%" PRId64 " fmt %d -> \"%s\" -> %" PRId64 " (%d)\n", v, f, out, back,
                            err);
                fail();
            }
        }
    }
}

/* ---------------- arithmetic ---------------- */

typedef struct arith_case {
    int64_t a, b;
    cu_err err;
    int64_t want;
} arith_case;

static void test_checked_add(void **state)
{
    (void)state;
    static const arith_case cases[] = {
        { 1, 2, CU_OK, 3 },
        { -5, 3, CU_OK, -2 },
        { INT64_MAX, 0, CU_OK, INT64_MAX },
        { INT64_MAX - 1, 1, CU_OK, INT64_MAX },
        { INT64_MAX, 1, CU_EOVERFLOW, 0 },
        { INT64_MIN, -1, CU_EOVERFLOW, 0 },
        { INT64_MIN, INT64_MAX, CU_OK, -1 },
        { INT64_MIN + 1, -1, CU_OK, INT64_MIN },
        { INT64_MAX, INT64_MAX, CU_EOVERFLOW, 0 },
        { INT64_MIN, INT64_MIN, CU_EOVERFLOW, 0 },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t out = 77;
        assert_int_equal(cu_qty_add(cases[i].a, cases[i].b, &out), cases[i].err);
        if (cases[i].err == CU_OK)
            assert_true(out == cases[i].want);
        else
            assert_true(out == 77); /* untouched on failure */
    }
}

static void test_checked_mul(void **state)
{
    (void)state;
    static const arith_case cases[] = {
        { 1500, 4, CU_OK, 6000 },
        { 0, INT64_MAX, CU_OK, 0 },
        { INT64_MIN, 0, CU_OK, 0 },
        { -3, 4, CU_OK, -12 },
        { -3, -4, CU_OK, 12 },
        { INT64_MAX, 1, CU_OK, INT64_MAX },
        { INT64_MAX, -1, CU_OK, -INT64_MAX },
        { INT64_MIN, 1, CU_OK, INT64_MIN },
        { INT64_MIN, -1, CU_EOVERFLOW, 0 },
        { -1, INT64_MIN, CU_EOVERFLOW, 0 },
        { INT64_MAX / 2, 2, CU_OK, INT64_MAX - 1 },
        { INT64_MAX / 2 + 1, 2, CU_EOVERFLOW, 0 },
        { INT64_MIN / 2, 2, CU_OK, INT64_MIN },
        { INT64_MIN / 2 - 1, 2, CU_EOVERFLOW, 0 },
        { 2, INT64_MIN / 2, CU_OK, INT64_MIN },
        { -2, INT64_MIN / 2, CU_EOVERFLOW, 0 },
        { -2, -(INT64_MAX / 2), CU_OK, INT64_MAX - 1 },
        { -2, -(INT64_MAX / 2) - 1, CU_EOVERFLOW, 0 },
        { INT64_C(4294967296), INT64_C(4294967296), CU_EOVERFLOW, 0 },
        { GI * 1000, 8000000, CU_OK, GI * 8000000000 },
        { GI * 1000, 9000000, CU_EOVERFLOW, 0 },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t out = 77;
        cu_err err = cu_qty_mul(cases[i].a, cases[i].b, &out);
        if (err != cases[i].err) {
            print_error("mul(%" PRId64 ", %" PRId64 ") err %d\n", cases[i].a, cases[i].b, err);
            fail();
        }
        if (err == CU_OK)
            assert_true(out == cases[i].want);
    }
}

typedef struct sat_case {
    int64_t a, b, want;
} sat_case;

static void test_saturating(void **state)
{
    (void)state;
    static const sat_case adds[] = {
        { 1, 2, 3 },
        { -1, -2, -3 },
        { INT64_MAX - 5, 10, INT64_MAX },
        { INT64_MIN + 5, -10, INT64_MIN },
        { CU_QTY_INF, -1000, CU_QTY_INF },
        { -1000, CU_QTY_INF, CU_QTY_INF },
        { CU_QTY_INF, INT64_MIN, CU_QTY_INF },
        { INT64_MIN, INT64_MAX - 1, -2 },
    };
    for (size_t i = 0; i < sizeof(adds) / sizeof(adds[0]); i++) {
        int64_t r = cu_qty_sat_add(adds[i].a, adds[i].b);
        if (r != adds[i].want) {
            print_error("sat_add(%" PRId64 ", %" PRId64 ") = %" PRId64 "\n", adds[i].a, adds[i].b,
                        r);
            fail();
        }
    }
    static const sat_case subs[] = {
        { 5, 3, 2 },
        { 3, 5, -2 },
        { CU_QTY_INF, 1000, CU_QTY_INF },
        { CU_QTY_INF, -1000, CU_QTY_INF },
        { CU_QTY_INF, CU_QTY_INF, CU_QTY_INF },
        { 0, CU_QTY_INF, INT64_MIN },
        { INT64_MIN + 5, 10, INT64_MIN },
        { INT64_MAX - 1, -10, INT64_MAX },
        { 0, INT64_MIN, INT64_MAX },
        { -1, INT64_MIN, INT64_MAX },
        { -2, INT64_MIN, INT64_MAX - 1 },
        { INT64_MIN, 0, INT64_MIN },
    };
    for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++) {
        int64_t r = cu_qty_sat_sub(subs[i].a, subs[i].b);
        if (r != subs[i].want) {
            print_error("sat_sub(%" PRId64 ", %" PRId64 ") = %" PRId64 "\n", subs[i].a, subs[i].b,
                        r);
            fail();
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_table),
        cmocka_unit_test(test_parse_sign_symmetry),
        cmocka_unit_test(test_parse_long_digit_strings),
        cmocka_unit_test(test_parse_null_args),
        cmocka_unit_test(test_format_table),
        cmocka_unit_test(test_format_small_buffer),
        cmocka_unit_test(test_fmt_for_resource),
        cmocka_unit_test(test_res_units),
        cmocka_unit_test(test_round_trip_units),
        cmocka_unit_test(test_round_trip_table),
        cmocka_unit_test(test_round_trip_values),
        cmocka_unit_test(test_checked_add),
        cmocka_unit_test(test_checked_mul),
        cmocka_unit_test(test_saturating),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
