/*
 * test_sha256.c - SHA-256 hex digests: FIPS 180-4 vectors.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "cu_sha256.h"

static void test_vectors(void **st)
{
    (void)st;
    char out[65];
    assert_int_equal(cu_sha256_hex("", 0, out), 0);
    assert_string_equal(out, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    assert_int_equal(cu_sha256_hex("abc", 3, out), 0);
    assert_string_equal(out, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    assert_int_equal(cu_sha256_hex(m, strlen(m), out), 0);
    assert_string_equal(out, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_vectors) };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
