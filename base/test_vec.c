/*
 * test_vec.c - arrays grown by doubling (cu_vec_reserve, CU_VEC_PUSH).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "cu_base.h"

#include <stdlib.h>

static void test_reserve(void **st)
{
    (void)st;
    double *d = NULL;
    size_t n = 0, cap = 0;
    assert_int_equal(cu_vec_reserve(&d, n, &cap, sizeof(*d), 4), 0);
    assert_non_null(d);
    assert_int_equal(cap, 4);
    for (; n < 4; n++)
        d[n] = (double)n;
    assert_int_equal(cu_vec_reserve(&d, 3, &cap, sizeof(*d), 4), 0); /* room: nothing */
    assert_int_equal(cap, 4);
    assert_int_equal(cu_vec_reserve(&d, n, &cap, sizeof(*d), 4), 0);
    assert_int_equal(cap, 8);
    for (size_t i = 0; i < 4; i++)
        assert_true(d[i] == (double)i); /* kept */
    /* a size that cannot be allocated: -1, the array untouched */
    double *before = d;
    size_t huge = SIZE_MAX / sizeof(*d) / 2 + 1;
    size_t hcap = huge;
    assert_int_equal(cu_vec_reserve(&d, huge, &hcap, sizeof(*d), 4), -1);
    assert_ptr_equal(d, before);
    assert_int_equal(hcap, huge);
    free(d);
}

static void test_push(void **st)
{
    (void)st;
    CU_VEC(int) v = { 0 };
    for (int i = 0; i < 100; i++)
        assert_int_equal(CU_VEC_PUSH(v, i * 3, 2), 0);
    assert_int_equal(v.n, 100);
    assert_int_equal(v.cap, 128);
    for (int i = 0; i < 100; i++)
        assert_int_equal(v.items[i], i * 3);
    free(v.items);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reserve),
        cmocka_unit_test(test_push),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
