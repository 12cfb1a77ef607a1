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
    assert_null(cu_jpath(o, "a.b"));    /* dotted keys cannot be named */
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

static const char *esc(cu_buf *b, const char *s, unsigned flags)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
    assert_int_equal(cu_json_put_str(b, s, flags), CU_OK);
    return cu_buf_str(b);
}

static void test_escape(void **st)
{
    (void)st;
    cu_buf b;
    cu_buf_init(&b, 0);
    /* common to all */
    static const unsigned all[] = { CU_JESC_LOG, CU_JESC_DOC, CU_JESC_RAW, 0 };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        assert_string_equal(esc(&b, "a\"q\"\\b\n\r\t\x01\x1f", all[i]),
                            "\"a\\\"q\\\"\\\\b\\n\\r\\t\\u0001\\u001f\"");
        assert_string_equal(esc(&b, "", all[i]), "\"\"");
        assert_string_equal(esc(&b, NULL, all[i]), "\"\"");
        assert_string_equal(esc(&b, "caf\xc3\xa9 \xf0\x9f\x98\x80", all[i]),
                            "\"caf\xc3\xa9 \xf0\x9f\x98\x80\"");
    }
    /* \b \f: short in the logger's and canonical JSON, \u in the tree's */
    assert_string_equal(esc(&b, "\b\f", CU_JESC_LOG), "\"\\b\\f\"");
    assert_string_equal(esc(&b, "\b\f", CU_JESC_RAW), "\"\\b\\f\"");
    assert_string_equal(esc(&b, "\b\f", CU_JESC_DOC), "\"\\u0008\\u000c\"");
    /* DEL */
    assert_string_equal(esc(&b, "\x7f", CU_JESC_LOG), "\"\\u007f\"");
    assert_string_equal(esc(&b, "\x7f", CU_JESC_DOC), "\"\\u007f\"");
    assert_string_equal(esc(&b, "\x7f", CU_JESC_RAW), "\"\x7f\"");
    /* invalid UTF-8: U+FFFD per bad byte, raw or escaped, or the bytes as they are */
    assert_string_equal(esc(&b,
                            "a\xff"
                            "b\xc3",
                            CU_JESC_LOG),
                        "\"a\xef\xbf\xbd"
                        "b\xef\xbf\xbd\"");
    assert_string_equal(esc(&b,
                            "a\xff"
                            "b\xc3",
                            CU_JESC_DOC),
                        "\"a\\ufffdb\\ufffd\"");
    assert_string_equal(esc(&b,
                            "a\xff"
                            "b\xc3",
                            CU_JESC_RAW),
                        "\"a\xff"
                        "b\xc3\"");
    /* a surrogate's three bytes are three bad bytes */
    assert_string_equal(esc(&b, "\xed\xa0\x80", CU_JESC_DOC), "\"\\ufffd\\ufffd\\ufffd\"");
    /* what YAML refuses raw: escaped only in the tree's flavour */
    assert_string_equal(esc(&b, "\xc2\x85|\xe2\x80\xa8|\xef\xbb\xbf", CU_JESC_DOC),
                        "\"\\u0085|\\u2028|\\ufeff\"");
    assert_string_equal(esc(&b, "\xe2\x80\xa8", CU_JESC_LOG), "\"\xe2\x80\xa8\"");
    /* every flavour reads back through json-c to the same (valid) text */
    const char *raw = "tab\there \"q\" back\\slash \x01\x7f nl\n caf\xc3\xa9 \xe2\x80\xa8 \b\f end";
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        json_object *o = cu_json_parse_str(esc(&b, raw, all[i]));
        assert_non_null(o);
        assert_string_equal(json_object_get_string(o), raw);
        json_object_put(o);
    }
    /* the per-character form, with a bound on the input */
    char piece[CU_JSON_ESC_MAX];
    size_t adv = 0;
    assert_int_equal(cu_json_escape_char("\xc3\xa9", 1, CU_JESC_LOG, piece, &adv), 3);
    assert_int_equal(adv, 1); /* cut sequence: one bad byte */
    assert_memory_equal(piece, "\xef\xbf\xbd", 3);
    assert_int_equal(cu_json_escape_char("\xc3\xa9", 2, CU_JESC_LOG, piece, &adv), 2);
    assert_int_equal(adv, 2);
    /* a bounded buffer reports the failure */
    cu_buf small;
    cu_buf_init(&small, 4);
    assert_int_equal(cu_json_put_str(&small, "abcdef", CU_JESC_LOG), CU_ENOMEM);
    cu_buf_free(&small);
    cu_buf_free(&b);
}

static void test_utf8(void **st)
{
    (void)st;
    uint32_t cp = 0;
    const unsigned char *u = (const unsigned char *)"A\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";
    assert_int_equal(cu_utf8_decode(u, 1, &cp), 1);
    assert_int_equal(cp, 'A');
    assert_int_equal(cu_utf8_decode(u + 1, 2, &cp), 2);
    assert_int_equal(cp, 0xE9);
    assert_int_equal(cu_utf8_decode(u + 3, 3, &cp), 3);
    assert_int_equal(cp, 0x20AC);
    assert_int_equal(cu_utf8_decode(u + 6, 4, &cp), 4);
    assert_int_equal(cp, 0x1F600);
    assert_int_equal(cu_utf8_decode(u + 6, 3, &cp), 0); /* truncated */
    assert_int_equal(cu_utf8_decode(u, 0, &cp), 0);
    static const char *const bad[] = {
        "\x80",
        "\xbf",
        "\xc0\x80",
        "\xc1\xbf",
        "\xe0\x80\x80",
        "\xed\xa0\x80",
        "\xed\xbf\xbf",
        "\xf4\x90\x80\x80",
        "\xf5\x80\x80\x80",
        "\xf8\x88\x80\x80\x80",
        "\xff",
        "\xc3",
        "\xc3(",
        "\xe2\x82",
        "\xe2\x82\x00",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (cu_utf8_decode((const unsigned char *)bad[i], strlen(bad[i]) + 1, NULL) != 0)
            fail_msg("bad sequence %zu decoded", i);
    assert_int_equal(cu_utf8_decode((const unsigned char *)"\xf4\x8f\xbf\xbf", 4, &cp), 4);
    assert_int_equal(cp, 0x10FFFF);
    assert_true(cu_yaml_nonprintable(0x85));
    assert_true(cu_yaml_nonprintable(0xFEFF));
    assert_false(cu_yaml_nonprintable(0xE9));
    assert_false(cu_yaml_nonprintable(0x10000));
}

/* Floats as Go's encoding/json writes them (the expected texts are
 * json.Marshal's output for these float64 values, Go 1.2x). */
static void test_go_float(void **st)
{
    (void)st;
    static const struct {
        double d;
        const char *want;
    } cases[] = {
        { 0, "0" },
        { -0.0, "-0" },
        { 1, "1" },
        { -1, "-1" },
        { 100, "100" },
        { 0.1, "0.1" },
        { 0.5, "0.5" },
        { 1e21, "1e+21" },
        { 1e-7, "1e-7" },
        { 1e-6, "0.000001" },
        { 9.999999e-7, "9.999999e-7" },
        { 1e20, "100000000000000000000" },
        { 123456789012345678901.0, "123456789012345680000" },
        { 1.5e-10, "1.5e-10" },
        { -2.5e-300, "-2.5e-300" },
        { 1e100, "1e+100" },
        { 1.7976931348623157e308, "1.7976931348623157e+308" },
        { 5e-324, "5e-324" },
        { 0.000001234, "0.000001234" },
        { 3.14159, "3.14159" },
        { 1e15, "1000000000000000" },
        { 123456.789, "123456.789" },
        { 9223372036854775808.0, "9223372036854776000" },
        { 18446744073709551615.0, "18446744073709552000" },
        { 2.2250738585072014e-308, "2.2250738585072014e-308" },
        { 1e-100, "1e-100" },
        { 0.30000000000000004, "0.30000000000000004" },
        { 1e22, "1e+22" },
        { -1e21, "-1e+21" },
        { 999999999999999999999.0, "1e+21" },
        { 4.35e-5, "0.0000435" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char b[CU_JSON_GO_FLOAT_MAX];
        size_t n = cu_json_go_float(cases[i].d, b);
        assert_string_equal(b, cases[i].want);
        assert_int_equal(n, strlen(cases[i].want));
    }
}

/* A parsed tree serializes its numbers as kube-apiserver stores them:
 * floats in Go's form, integers as written, big integers as float64. */
static void test_go_numbers(void **st)
{
    (void)st;
    json_object *o = cu_json_parse_str(
        "{\"a\":1e21,\"b\":[0.0000001,1.0,100.0,1e2,-0.0,2.50],\"c\":12,"
        "\"d\":18446744073709551615,\"e\":\"1e21\",\"f\":{\"g\":[[0.1]]},\"h\":-7,"
        "\"i\":9223372036854775807}");
    assert_non_null(o);
    cu_json_go_numbers(o);
    const char *want = "{\"a\":1e+21,\"b\":[1e-7,1,100,100,0,2.5],\"c\":12,"
                       "\"d\":18446744073709552000,\"e\":\"1e21\",\"f\":{\"g\":[[0.1]]},"
                       "\"h\":-7,\"i\":9223372036854775807}";
    assert_string_equal(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN), want);
    /* values unchanged; a copy and a second pass serialize the same */
    assert_true(json_object_get_double(cu_jget(o, "a")) == 1e21);
    json_object *c = cu_jcopy(o);
    assert_non_null(c);
    cu_json_go_numbers(c);
    assert_string_equal(json_object_to_json_string_ext(c, JSON_C_TO_STRING_PLAIN), want);
    json_object_put(c);
    json_object_put(o);
    cu_json_go_numbers(NULL);
}

static void test_node_json(void **st)
{
    (void)st;
    cu_arena a;
    cu_arena_init(&a, 0);
    json_object *o = doc();
    cu_node *n = cu_node_from_json(&a, o);
    assert_non_null(n);
    assert_int_equal(n->type, CU_NODE_MAP);
    assert_string_equal(cu_node_scalar(cu_node_get(n, "s")), "x");
    assert_false(cu_node_get(n, "s")->plain); /* strings are quoted */
    assert_true(cu_node_is_null(cu_node_get(n, "n")));
    assert_string_equal(cu_node_scalar(cu_node_get(n, "big")), "9000000000");
    assert_true(cu_node_get(n, "big")->plain);
    assert_string_equal(cu_node_scalar(cu_node_get(n, "d")), "2.8999999999999999"); /* %.17g */
    assert_string_equal(cu_node_scalar(cu_node_get(n, "ns")), "17");
    assert_false(cu_node_get(n, "ns")->plain);
    assert_string_equal(cu_node_scalar(cu_node_get(n, "t")), "true");
    assert_int_equal(cu_node_get(n, "a")->type, CU_NODE_SEQ);
    assert_int_equal(cu_node_get(n, "a")->n, 3);
    assert_string_equal(cu_node_scalar(cu_node_path(n, "m.k.leaf")), "v");
    assert_string_equal(cu_node_scalar(cu_node_get(n, "a.b")), "dotted");

    /* and back: the same JSON (the double through %.17g is exact) */
    json_object *back = cu_node_to_json(n);
    assert_non_null(back);
    assert_true(json_object_equal(back, o));
    json_object_put(back);
    json_object_put(o);
    assert_null(cu_node_to_json(NULL));

    /* deeper than 64 levels: the containers there become null */
    char deep[256];
    memset(deep, '[', 100);
    memset(deep + 100, ']', 100);
    deep[200] = '\0';
    o = cu_json_parse_str(deep);
    assert_non_null(o);
    n = cu_node_from_json(&a, o);
    assert_non_null(n);
    int depth = 0;
    while (n->type == CU_NODE_SEQ) {
        assert_int_equal(n->n, 1);
        n = n->vals[0];
        depth++;
    }
    assert_int_equal(depth, 65);
    assert_true(cu_node_is_null(n));
    json_object_put(o);

    /* YAML's plain scalars resolve as the core schema */
    cu_doc *docs = NULL;
    size_t nd = 0;
    cu_diag d;
    cu_diag_init(&d);
    const char *y = "a: ~\nb: True\nc: -12\nd: '5'\ne: 1.5\nf: yes\ng: [null, FALSE]\n";
    assert_int_equal(cu_doc_parse("t", y, strlen(y), &a, &docs, &nd, &d), CU_OK);
    assert_int_equal(nd, 1);
    o = cu_node_to_json(docs[0].root);
    json_object *want =
        cu_json_parse_str("{\"a\":null,\"b\":true,\"c\":-12,\"d\":\"5\",\"e\":1.5,\"f\":\"yes\","
                          "\"g\":[null,false]}");
    assert_non_null(want);
    assert_true(json_object_equal(o, want));
    json_object_put(want);
    json_object_put(o);
    cu_diag_free(&d);
    cu_arena_free(&a);
}

/* cu_json_diff: the operations, their order and paths (escaped). */
static void diff_is(const char *from, const char *to, const char *want)
{
    json_object *a = cu_json_parse_str(from), *b = cu_json_parse_str(to);
    json_object *ops = cu_json_diff(a, b);
    assert_non_null(ops);
    const char *got = json_object_to_json_string_ext(ops, JSON_C_TO_STRING_PLAIN);
    if (strcmp(got, want) != 0)
        fail_msg("diff %s -> %s\n got  %s\n want %s", from, to, got, want);
    json_object_put(ops);
    json_object_put(a);
    json_object_put(b);
}

static void test_diff(void **st)
{
    (void)st;
    diff_is("{\"a\":1,\"b\":[1,2]}", "{\"b\":[1,2],\"a\":1.0}", "[]");
    diff_is(
        "{\"a\":1,\"b\":2,\"c\":{\"d\":\"x\"}}",
        "{\"b\":3,\"c\":{\"d\":\"x\",\"e\":true},\"f\":null}",
        "[{\"op\":\"remove\",\"path\":\"\\/a\"},{\"op\":\"replace\",\"path\":\"\\/b\",\"value\":3},"
        "{\"op\":\"add\",\"path\":\"\\/c\\/e\",\"value\":true},"
        "{\"op\":\"add\",\"path\":\"\\/f\",\"value\":null}]");
    /* keys with / and ~ */
    diff_is("{\"metadata\":{\"labels\":{\"a/b\":\"1\",\"m~n\":\"2\"}}}",
            "{\"metadata\":{\"labels\":{\"a/b\":\"3\"}}}",
            "[{\"op\":\"replace\",\"path\":\"\\/metadata\\/labels\\/a~1b\",\"value\":\"3\"},"
            "{\"op\":\"remove\",\"path\":\"\\/metadata\\/labels\\/m~0n\"}]");
    /* arrays: grow at the end, shrink from the last, change in place */
    diff_is(
        "[1,2]", "[1,3,4,5]",
        "[{\"op\":\"replace\",\"path\":\"\\/1\",\"value\":3},"
        "{\"op\":\"add\",\"path\":\"\\/2\",\"value\":4},{\"op\":\"add\",\"path\":\"\\/3\",\"value\":5}]");
    diff_is("{\"l\":[{\"n\":1},2,3]}", "{\"l\":[{\"n\":2}]}",
            "[{\"op\":\"replace\",\"path\":\"\\/l\\/0\\/n\",\"value\":2},"
            "{\"op\":\"remove\",\"path\":\"\\/l\\/2\"},{\"op\":\"remove\",\"path\":\"\\/l\\/1\"}]");
    /* a type change, a null, the whole document */
    diff_is("{\"a\":[1]}", "{\"a\":{\"x\":1}}",
            "[{\"op\":\"replace\",\"path\":\"\\/a\",\"value\":{\"x\":1}}]");
    diff_is("{\"a\":1}", "{\"a\":null}", "[{\"op\":\"replace\",\"path\":\"\\/a\",\"value\":null}]");
    diff_is("1", "\"x\"", "[{\"op\":\"replace\",\"path\":\"\",\"value\":\"x\"}]");
    /* a key that is empty */
    diff_is("{}", "{\"\":1}", "[{\"op\":\"add\",\"path\":\"\\/\",\"value\":1}]");
    /* cu_json_equal, now here */
    json_object *x = cu_json_parse_str("{\"a\":[1,{\"b\":null}]}");
    json_object *y = cu_json_parse_str("{\"a\":[1.0,{\"b\":null}]}");
    assert_true(cu_json_equal(x, y));
    assert_false(cu_json_equal(x, NULL));
    assert_true(cu_json_equal(NULL, NULL));
    json_object_put(x);
    json_object_put(y);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_get_and_str), cmocka_unit_test(test_path),
        cmocka_unit_test(test_ints),        cmocka_unit_test(test_builders),
        cmocka_unit_test(test_escape),      cmocka_unit_test(test_utf8),
        cmocka_unit_test(test_node_json),   cmocka_unit_test(test_go_float),
        cmocka_unit_test(test_go_numbers),  cmocka_unit_test(test_diff),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
