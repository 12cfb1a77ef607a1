/*
 * test_json.c - the json-c accessors of cu_json.h: absent on a wrong type,
 * a missing key, JSON null or a NULL object; dotted paths; the integer
 * readers' coercion rules; the builders.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "cu_json.h"

static json_object *doc(void)
{
    json_object *o = cu_json_parse_str(
        "{\"s\":\"x\",\"n\":null,\"i\":42,\"big\":9000000000,\"d\":2.9,\"nd\":-2.9,"
        "\"ns\":\"17\",\"t\":true,\"f\":false,\"a\":[1,2,3],"
        "\"m\":{\"k\":{\"leaf\":\"v\",\"num\":7}},\"a.b\":\"dotted\",\"\":\"empty\"}");
    assert_non_null(o);
    return o;
}

static void test_get_and_str(void **st)
{
    (void)st;
    json_object *o = doc();
    assert_non_null(cu_jget(o, "m"));
    assert_null(cu_jget(o, "missing"));
    assert_null(cu_jget(o, "n")); /* JSON null reads as absent */
    assert_null(cu_jget(NULL, "s"));
    assert_null(cu_jget(cu_jget(o, "a"), "0")); /* not an object */
    assert_null(cu_jget(cu_jget(o, "s"), "x"));
    assert_string_equal(cu_jstr(o, "s"), "x");
    assert_null(cu_jstr(o, "i"));
    assert_null(cu_jstr(o, "m"));
    assert_null(cu_jstr(NULL, "s"));
    assert_string_equal(cu_jstr(o, ""), "empty");
    assert_string_equal(cu_jas_str(cu_jget(o, "s")), "x");
    assert_null(cu_jas_str(cu_jget(o, "t")));
    assert_null(cu_jas_str(NULL));
    json_object_put(o);
}

static void test_path(void **st)
{
    (void)st;
    json_object *o = doc();
    assert_string_equal(cu_jpath_str(o, "m.k.leaf"), "v");
    assert_ptr_equal(cu_jpath(o, ""), o);
    assert_ptr_equal(cu_jpath(o, "m.k"), cu_jget(cu_jget(o, "m"), "k"));
    assert_null(cu_jpath(o, "m.k.leaf.more"));
    assert_null(cu_jpath(o, "m.x.leaf"));
    assert_null(cu_jpath(NULL, "m"));
    assert_null(cu_jpath_str(o, "m.k.num"));
    assert_null(cu_jpath(o, "a.b")); /* dotted keys cannot be named */
    assert_non_null(cu_jpath(o, "m.")); /* a trailing dot ends the path */
    char longkey[200];
    memset(longkey, 'k', sizeof longkey - 1);
    longkey[sizeof longkey - 1] = '\0';
    assert_null(cu_jpath(o, longkey));
    json_object_put(o);
}

static void test_ints(void **st)
{
    (void)st;
    json_object *o = doc();
    /* cu_jint coerces as json_object_get_int does */
    assert_int_equal(cu_jint(o, "i"), 42);
    assert_int_equal(cu_jint(o, "d"), 2);
    assert_int_equal(cu_jint(o, "ns"), 17);
    assert_int_equal(cu_jint(o, "t"), 1);
    assert_int_equal(cu_jint(o, "big"), INT32_MAX);
    assert_int_equal(cu_jint(o, "missing"), 0);
    assert_int_equal(cu_jint(NULL, "i"), 0);
    /* cu_jas_int64: integers only */
    assert_int_equal(cu_jas_int64(cu_jget(o, "big"), -1), 9000000000LL);
    assert_int_equal(cu_jas_int64(cu_jget(o, "d"), -1), -1);
    assert_int_equal(cu_jas_int64(cu_jget(o, "ns"), -1), -1);
    assert_int_equal(cu_jas_int64(NULL, 5), 5);
    /* cu_jas_num: integers and doubles (truncated toward zero) */
    assert_int_equal(cu_jas_num(cu_jget(o, "d"), -1), 2);
    assert_int_equal(cu_jas_num(cu_jget(o, "nd"), 0), -2);
    assert_int_equal(cu_jas_num(cu_jget(o, "i"), -1), 42);
    assert_int_equal(cu_jas_num(cu_jget(o, "ns"), -1), -1);
    assert_true(cu_jas_true(cu_jget(o, "t")));
    assert_false(cu_jas_true(cu_jget(o, "f")));
    assert_false(cu_jas_true(cu_jget(o, "i")));
    assert_int_equal(cu_jarr_len(cu_jget(o, "a")), 3);
    assert_int_equal(cu_jarr_len(cu_jget(o, "m")), 0);
    assert_int_equal(cu_jarr_len(NULL), 0);
    json_object_put(o);
}

static void test_builders(void **st)
{
    (void)st;
    json_object *o = doc();
    cu_jset_str(o, "s", "y");
    cu_jset_str(o, "z", NULL);
    cu_jset_int(o, "i", -7);
    assert_string_equal(cu_jstr(o, "s"), "y");
    assert_string_equal(cu_jstr(o, "z"), "");
    assert_int_equal(cu_jas_int64(cu_jget(o, "i"), 0), -7);
    json_object *m = cu_jget(o, "m");
    assert_ptr_equal(cu_jchild(o, "m"), m); /* an object is kept */
    json_object *c = cu_jchild(o, "s");     /* a string is replaced */
    assert_non_null(c);
    assert_true(json_object_is_type(cu_jget(o, "s"), json_type_object));
    json_object *nw = cu_jchild(o, "new");
    assert_non_null(nw);
    assert_ptr_equal(nw, cu_jget(o, "new"));
    json_object *d = cu_jcopy(o);
    assert_non_null(d);
    assert_true(d != o);
    assert_true(json_object_equal(d, o));
    cu_jset_str(cu_jchild(d, "m"), "extra", "1");
    assert_false(json_object_equal(d, o));
    assert_null(cu_jcopy(NULL));
    json_object_put(d);
    json_object_put(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_get_and_str),
        cmocka_unit_test(test_path),
        cmocka_unit_test(test_ints),
        cmocka_unit_test(test_builders),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
