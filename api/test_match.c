/*
 * test_match.c - the matching rules of cu_match.h: tolerations against
 * taints, node selector requirements (Gt/Lt as strconv.ParseInt), terms
 * with matchFields, and NodeAffinity's filter.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "cu_match.h"

static void test_tolerates(void **state)
{
    (void)state;
    const cu_taint spot = { "spot", "true", "NoSchedule" };
    const cu_taint bare = { "gpu", NULL, "NoExecute" };
    static const struct {
        cu_toleration t;
        int spot, bare;
    } cases[] = {
        { { "spot", CU_TOL_EQUAL, "true", "NoSchedule" }, 1, 0 },
        { { "spot", CU_TOL_EQUAL, "false", NULL }, 0, 0 },       /* other value */
        { { "spot", CU_TOL_EQUAL, "true", "NoExecute" }, 0, 0 }, /* other effect */
        { { "spot", CU_TOL_EXISTS, NULL, "" }, 1, 0 },           /* "" effect: all */
        { { "gpu", CU_TOL_EQUAL, "", NULL }, 0, 1 },             /* NULL value is "" */
        { { "gpu", CU_TOL_EQUAL, NULL, NULL }, 0, 1 },
        { { NULL, CU_TOL_EXISTS, NULL, NULL }, 1, 1 }, /* tolerates everything */
        { { "", CU_TOL_EXISTS, NULL, "NoExecute" }, 0, 1 },
        /* an empty key with Equal compares the value (ToleratesTaint) */
        { { "", CU_TOL_EQUAL, "true", NULL }, 1, 0 },
        { { "spot", (cu_tolop)7, "true", NULL }, 0, 0 }, /* unknown operator */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_int_equal(cu_match_tolerates(&cases[i].t, &spot), cases[i].spot);
        assert_int_equal(cu_match_tolerates(&cases[i].t, &bare), cases[i].bare);
    }
}

static void test_untolerated(void **state)
{
    (void)state;
    const cu_taint taints[] = {
        { "soft", "", "PreferNoSchedule" }, /* never filters */
        { "spot", "true", "NoSchedule" },
        { "maintenance", NULL, "NoExecute" },
        { "odd", "", NULL }, /* no effect: never filters */
    };
    const cu_toleration spot[] = { { "spot", CU_TOL_EXISTS, NULL, NULL } };
    const cu_toleration all[] = { { "spot", CU_TOL_EXISTS, NULL, NULL },
                                  { "maintenance", CU_TOL_EQUAL, NULL, "NoExecute" } };
    assert_int_equal(cu_match_taint_filters(&taints[0]), 0);
    assert_int_equal(cu_match_taint_filters(&taints[1]), 1);
    assert_int_equal(cu_match_taint_filters(&taints[2]), 1);
    assert_int_equal(cu_match_taint_filters(&taints[3]), 0);
    assert_ptr_equal(cu_match_untolerated(taints, 4, NULL, 0), &taints[1]);
    assert_ptr_equal(cu_match_untolerated(taints, 4, spot, 1), &taints[2]);
    assert_null(cu_match_untolerated(taints, 4, all, 2));
    assert_null(cu_match_untolerated(NULL, 0, NULL, 0));
    assert_int_equal(cu_match_tolerated(all, 2, &taints[2]), 1);
    assert_int_equal(cu_match_tolerated(spot, 1, &taints[2]), 0);
}

static cu_selreq req(const char *key, cu_selop op, size_t n, const char **vals)
{
    cu_selreq r = { key, op, { n, vals } };
    return r;
}

static void test_selreq(void **state)
{
    (void)state;
    const char *ab[] = { "a", "b" }, *five[] = { "5" }, *plus[] = { "+5" };
    const char *huge[] = { "9223372036854775808" }, *space[] = { " 5" }, *nul[] = { NULL };
    const char *two[] = { "1", "2" };
    cu_selreq r;

    r = req("k", CU_SEL_IN, 2, ab);
    assert_true(cu_match_selreq(&r, "a"));
    assert_false(cu_match_selreq(&r, "c"));
    assert_false(cu_match_selreq(&r, NULL));
    r = req("k", CU_SEL_NOTIN, 2, ab);
    assert_false(cu_match_selreq(&r, "b"));
    assert_true(cu_match_selreq(&r, "c"));
    assert_true(cu_match_selreq(&r, NULL)); /* absent is not in */
    r = req("k", CU_SEL_IN, 1, nul);        /* a NULL value equals nothing */
    assert_false(cu_match_selreq(&r, ""));
    r = req("k", CU_SEL_IN, 0, NULL);
    assert_false(cu_match_selreq(&r, "a"));
    r = req("k", CU_SEL_EXISTS, 0, NULL);
    assert_true(cu_match_selreq(&r, ""));
    assert_false(cu_match_selreq(&r, NULL));
    r = req("k", CU_SEL_DOESNOTEXIST, 0, NULL);
    assert_true(cu_match_selreq(&r, NULL));
    assert_false(cu_match_selreq(&r, "x"));

    r = req("k", CU_SEL_GT, 1, five);
    assert_true(cu_match_selreq(&r, "6"));
    assert_false(cu_match_selreq(&r, "5"));
    assert_true(cu_match_selreq(&r, "+6"));
    assert_false(cu_match_selreq(&r, "-6"));
    assert_false(cu_match_selreq(&r, "6x"));
    assert_false(cu_match_selreq(&r, " 6"));                   /* ParseInt takes no spaces */
    assert_false(cu_match_selreq(&r, "99999999999999999999")); /* out of range */
    assert_false(cu_match_selreq(&r, NULL));
    assert_false(cu_match_selreq(&r, ""));
    r = req("k", CU_SEL_LT, 1, five);
    assert_true(cu_match_selreq(&r, "4"));
    assert_true(cu_match_selreq(&r, "-9223372036854775808"));
    assert_false(cu_match_selreq(&r, "-9223372036854775809"));
    r = req("k", CU_SEL_LT, 1, plus);
    assert_true(cu_match_selreq(&r, "4"));
    r = req("k", CU_SEL_GT, 1, huge); /* the value out of range */
    assert_false(cu_match_selreq(&r, "1"));
    r = req("k", CU_SEL_GT, 1, space);
    assert_false(cu_match_selreq(&r, "9"));
    r = req("k", CU_SEL_GT, 2, two); /* exactly one value */
    assert_false(cu_match_selreq(&r, "9"));
    r = req("k", CU_SEL_GT, 1, nul);
    assert_false(cu_match_selreq(&r, "9"));

    cu_kv kv[] = { { "zone", "a" }, { "gen", "7" } };
    cu_kvs labels = { 2, kv };
    r = req("gen", CU_SEL_GT, 1, five);
    assert_true(cu_match_selreq_labels(&r, &labels));
    r = req(NULL, CU_SEL_DOESNOTEXIST, 0, NULL);
    assert_true(cu_match_selreq_labels(&r, &labels));
    r = req("zone", CU_SEL_NOTIN, 2, ab);
    assert_false(cu_match_selreq_labels(&r, &labels));
}

static void test_nodeterm_and_nodesel(void **state)
{
    (void)state;
    const char *a[] = { "a" }, *node1[] = { "node-1" }, *five[] = { "5" };
    cu_kv lkv[] = { { "zone", "a" }, { "pool", "gpu" }, { "odd", NULL } };
    cu_kvs labels = { 3, lkv };
    cu_kv fkv[] = { { "metadata.name", "node-1" } };
    cu_kvs fields = { 1, fkv };
    cu_selreq zone_in_a = req("zone", CU_SEL_IN, 1, a);
    cu_selreq name_in = req("metadata.name", CU_SEL_IN, 1, node1);
    cu_selreq name_notin = req("metadata.name", CU_SEL_NOTIN, 1, node1);
    cu_selreq name_exists = req("metadata.name", CU_SEL_EXISTS, 0, NULL);
    cu_selreq other_field = req("spec.other", CU_SEL_NOTIN, 1, node1);
    cu_selreq gen_gt = req("gen", CU_SEL_GT, 1, five);
    cu_selreq odd_exists = req("odd", CU_SEL_EXISTS, 0, NULL);

    cu_nodeterm empty = { { 0, NULL }, { 0, NULL } };
    cu_nodeterm t_zone = { { 1, &zone_in_a }, { 0, NULL } };
    cu_nodeterm t_name = { { 0, NULL }, { 1, &name_in } };
    cu_nodeterm t_both = { { 1, &zone_in_a }, { 1, &name_notin } };
    cu_nodeterm t_fexists = { { 0, NULL }, { 1, &name_exists } };
    cu_nodeterm t_other = { { 0, NULL }, { 1, &other_field } };
    cu_nodeterm t_gen = { { 1, &gen_gt }, { 0, NULL } };
    cu_nodeterm t_odd = { { 1, &odd_exists }, { 0, NULL } };
    assert_false(cu_match_nodeterm(&empty, &labels, &fields)); /* matches nothing */
    assert_true(cu_match_nodeterm(&t_zone, &labels, &fields));
    assert_true(cu_match_nodeterm(&t_name, &labels, &fields));
    assert_false(cu_match_nodeterm(&t_both, &labels, &fields));
    assert_false(cu_match_nodeterm(&t_fexists, &labels, &fields)); /* fields: In/NotIn only */
    assert_true(cu_match_nodeterm(&t_other, &labels, &fields));    /* unknown field: absent */
    assert_false(cu_match_nodeterm(&t_gen, &labels, &fields));     /* no such label */
    assert_false(cu_match_nodeterm(&t_odd, &labels, &fields));     /* NULL value: absent */

    cu_nodesel none = { { 0, NULL }, 0, 0, NULL };
    assert_true(cu_match_nodesel(&none, &labels, &fields));
    cu_kv want[] = { { "pool", "gpu" } }, wrong[] = { { "pool", "cpu" } };
    cu_kv nullv[] = { { "odd", NULL } };
    cu_nodesel s = { { 1, want }, 0, 0, NULL };
    assert_true(cu_match_nodesel(&s, &labels, &fields));
    s.selector.items = wrong;
    assert_false(cu_match_nodesel(&s, &labels, &fields));
    s.selector.items = nullv; /* a NULL value matches nothing */
    assert_false(cu_match_nodesel(&s, &labels, &fields));

    cu_nodeterm terms[] = { t_gen, t_name };
    cu_nodesel r = { { 1, want }, 1, 0, terms };
    assert_false(cu_match_nodesel(&r, &labels, &fields)); /* required, no terms */
    r.nterms = 1;
    assert_false(cu_match_nodesel(&r, &labels, &fields));
    r.nterms = 2; /* terms are ORed */
    assert_true(cu_match_nodesel(&r, &labels, &fields));
    r.selector.items = wrong; /* and the selector ANDed */
    assert_false(cu_match_nodesel(&r, &labels, &fields));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tolerates),
        cmocka_unit_test(test_untolerated),
        cmocka_unit_test(test_selreq),
        cmocka_unit_test(test_nodeterm_and_nodesel),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
