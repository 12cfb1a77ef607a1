/*
 * test_base64.c - base64: RFC 4648 vectors both ways, the lenient
 * kubeconfig decoder, the continue-token decoder, Go's StdEncoding check,
 * and round trips of every byte.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "cu_base64.h"

static const struct {
    const char *in, *std, *url;
} VEC[] = {
    { "", "", "" },
    { "f", "Zg==", "Zg" },
    { "fo", "Zm8=", "Zm8" },
    { "foo", "Zm9v", "Zm9v" },
    { "foob", "Zm9vYg==", "Zm9vYg" },
    { "fooba", "Zm9vYmE=", "Zm9vYmE" },
    { "foobar", "Zm9vYmFy", "Zm9vYmFy" },
    { "\xfb\xff\xbf", "+/+/", "-_-_" },
};

static void test_encode(void **st)
{
    (void)st;
    for (size_t i = 0; i < sizeof VEC / sizeof VEC[0]; i++) {
        char *s = cu_base64_encode(VEC[i].in, strlen(VEC[i].in));
        char *u = cu_base64url_encode(VEC[i].in, strlen(VEC[i].in));
        assert_string_equal(s, VEC[i].std);
        assert_string_equal(u, VEC[i].url);
        assert_true(cu_base64_valid(s, strlen(s)));
        free(s);
        free(u);
    }
}

static void check_decode(char *(*fn)(const char *, size_t *), const char *in, const char *want,
                         size_t wantlen)
{
    size_t n = 12345;
    char *d = fn(in, &n);
    if (!want) {
        if (d)
            fail_msg("\"%s\" should be refused", in);
        return;
    }
    if (!d)
        fail_msg("\"%s\" should decode", in);
    assert_int_equal(n, wantlen);
    assert_memory_equal(d, want, wantlen);
    assert_int_equal(d[n], '\0');
    free(d);
}

static void test_decode(void **st)
{
    (void)st;
    for (size_t i = 0; i < sizeof VEC / sizeof VEC[0]; i++) {
        size_t l = strlen(VEC[i].in);
        check_decode(cu_base64_decode, VEC[i].std, VEC[i].in, l);
        check_decode(cu_base64_decode, VEC[i].url, VEC[i].in, l);
        check_decode(cu_base64url_decode, VEC[i].std, VEC[i].in, l);
        check_decode(cu_base64url_decode, VEC[i].url, VEC[i].in, l);
    }
    /* lenient: white space, no padding; strict about the rest */
    check_decode(cu_base64_decode, " Zm9v\nYmFy\r\n\t", "foobar", 6);
    check_decode(cu_base64_decode, "Zm8", "fo", 2);
    check_decode(cu_base64_decode, "Zm8 = ", "fo", 2);
    check_decode(cu_base64_decode, "Zm8=Zg==", NULL, 0); /* data after padding */
    check_decode(cu_base64_decode, "Zg===", NULL, 0);
    check_decode(cu_base64_decode, "Zm9vY", NULL, 0); /* a lone final character */
    check_decode(cu_base64_decode, "Zm9v!", NULL, 0);
    check_decode(cu_base64_decode, "Zm\x80v", NULL, 0);
    check_decode(cu_base64_decode, "AAA=", "\0\0", 2); /* NULs come through */
    /* continue tokens: stop at '=', drop left-over bits, no white space */
    check_decode(cu_base64url_decode, "Zm8=garbage!", "fo", 2);
    check_decode(cu_base64url_decode, "Zm9vY", "foo", 3);
    check_decode(cu_base64url_decode, "Zm9v Yg", NULL, 0);
    check_decode(cu_base64url_decode, "Zm9v.", NULL, 0);
    assert_null(cu_base64_decode("!", NULL));
}

static void test_valid(void **st)
{
    (void)st;
    static const struct {
        const char *s;
        int ok;
    } cases[] = {
        { "", 1 },     { "Zg==", 1 }, { "Zm8=", 1 },   { "Zm9v", 1 },   { "+/+/", 1 },
        { "Zg", 0 },   { "Zg=", 0 },  { "Z===", 0 },   { "Zg=a", 0 },   { "=Zg=", 0 },
        { "-_-_", 0 }, { "Zm9 ", 0 }, { "Zm9v\n", 0 }, { "Zm9vZg", 0 }, { "Zm9vZ=g=", 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (cu_base64_valid(cases[i].s, strlen(cases[i].s)) != cases[i].ok)
            fail_msg("\"%s\": want %d", cases[i].s, cases[i].ok);
    assert_false(cu_base64_valid("Zm\0v", 4)); /* a NUL is not in the alphabet */
}

static void test_round_trip(void **st)
{
    (void)st;
    unsigned char all[256];
    for (int i = 0; i < 256; i++)
        all[i] = (unsigned char)i;
    for (size_t n = 0; n <= sizeof all; n += 37) {
        char *s = cu_base64_encode(all, n), *u = cu_base64url_encode(all, n);
        size_t l1 = 0, l2 = 0;
        char *d1 = cu_base64_decode(s, &l1), *d2 = cu_base64url_decode(u, &l2);
        assert_non_null(d1);
        assert_non_null(d2);
        assert_int_equal(l1, n);
        assert_int_equal(l2, n);
        assert_memory_equal(d1, all, n);
        assert_memory_equal(d2, all, n);
        assert_true(cu_base64_valid(s, strlen(s)));
        free(s), free(u), free(d1), free(d2);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encode),
        cmocka_unit_test(test_decode),
        cmocka_unit_test(test_valid),
        cmocka_unit_test(test_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
