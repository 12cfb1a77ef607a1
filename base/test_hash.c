/*
 * test_hash.c - the one string hash: the values the former copies
 * computed (hash tables and fingerprints must not move; note the offset
 * basis is not FNV's published one, see cu_hash.h), and field folding
 * with its separator.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "cu_hash.h"

#define HASH_A UINT64_C(0x44bd8ad473cd9906)
#define HASH_FOOBAR UINT64_C(0x88fad7c0a8ff07f2)

/* The loop every former copy wrote (cu_strmap, cu_doc, the informer...). */
static uint64_t reference(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

static void test_vectors(void **st)
{
    (void)st;
    /* pinned: the tree's values, not FNV's published vectors */
    assert_true(cu_hash_str("") == UINT64_C(1469598103934665603));
    assert_true(cu_hash_str("a") == HASH_A);
    assert_true(cu_hash_str("foobar") == HASH_FOOBAR);
    static const char *const s[] = { "", "x", "default/job-1", "caf\xc3\xa9", "\xff\xfe", "kueue" };
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) {
        assert_true(cu_hash_str(s[i]) == reference(s[i]));
        assert_true(cu_hash_bytes(CU_HASH_INIT, s[i], strlen(s[i])) == reference(s[i]));
    }
    assert_true(cu_hash_bytes(CU_HASH_INIT, NULL, 0) == CU_HASH_INIT);
}

static void test_fields(void **st)
{
    (void)st;
    /* the metrics registry's label-values fold: bytes, then 0xFF */
    uint64_t h = CU_HASH_INIT;
    const char *vals[] = { "cq", "", "flavor" };
    for (size_t i = 0; i < 3; i++) {
        for (const unsigned char *p = (const unsigned char *)vals[i]; *p; p++) {
            h ^= *p;
            h *= 1099511628211ULL;
        }
        h ^= 0xFF;
        h *= 1099511628211ULL;
    }
    uint64_t f = CU_HASH_INIT;
    for (size_t i = 0; i < 3; i++)
        f = cu_hash_field(f, vals[i]);
    assert_true(f == h);
    /* NULL folds as "" */
    assert_true(cu_hash_field(CU_HASH_INIT, NULL) == cu_hash_field(CU_HASH_INIT, ""));
    /* the separator tells ("ab","c") from ("a","bc") */
    assert_true(cu_hash_field(cu_hash_field(CU_HASH_INIT, "ab"), "c") !=
                cu_hash_field(cu_hash_field(CU_HASH_INIT, "a"), "bc"));
    /* a NUL-separated fold is strlen + 1 bytes */
    uint64_t a = cu_hash_bytes(cu_hash_bytes(CU_HASH_INIT, "ab", 3), "c", 2);
    uint64_t b = cu_hash_bytes(cu_hash_bytes(CU_HASH_INIT, "a", 2), "bc", 3);
    assert_true(a != b);
    assert_true(cu_hash_bytes(CU_HASH_INIT, "ab\0c", 5) == a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors),
        cmocka_unit_test(test_fields),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
