/*
 * test_objmeta.c - the input checks of cu_objmeta.c: ObjectMeta and
 * built-in field types, the JSON prescan (NUL in keys, numbers out of
 * range, nesting), integer query parameters, protobuf map keys.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "cu_apiserver.h"
#include "cu_base.h"
#include "cu_objmeta.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Validates the JSON text j as kind (built-in); returns the error count
 * and the first error in *first. */
static size_t check(const char *kind, int builtin, const char *j, cu_schema_err *first)
{
    char err[200];
    json_object *o = cu_json_parse_checked(j, strlen(j), NULL, err, sizeof err);
    if (!o)
        fail_msg("%s: %s", j, err);
    cu_schema_err errs[8];
    size_t n = cu_objmeta_validate(o, kind, builtin, errs, 8);
    if (n && first)
        *first = errs[0];
    json_object_put(o);
    return n;
}

static void expect_err(const char *kind, const char *j, const char *field, const char *type,
                       const char *msg_part)
{
    cu_schema_err e;
    memset(&e, 0, sizeof e);
    if (check(kind, 1, j, &e) == 0)
        fail_msg("%s: accepted", j);
    assert_string_equal(e.field, field);
    assert_string_equal(e.type, type);
    if (!strstr(e.message, msg_part))
        fail_msg("%s: message \"%s\" lacks \"%s\"", j, e.message, msg_part);
}

static void test_objmeta_types(void **state)
{
    (void)state;
    assert_int_equal(
        check("ConfigMap", 1,
              "{\"metadata\":{\"name\":\"a\",\"labels\":{\"x\":\"y\"},"
              "\"annotations\":{\"Example.com/A\":\"any thing\"},"
              "\"finalizers\":[\"example.com/f\"],\"ownerReferences\":[{\"apiVersion\":"
              "\"v1\",\"kind\":\"Pod\",\"name\":\"p\",\"uid\":\"u\",\"controller\":true}],"
              "\"creationTimestamp\":\"2026-01-01T00:00:00Z\",\"deletionTimestamp\":"
              "\"2026-01-01T00:00:00.5+01:00\",\"generation\":3},"
              "\"data\":{\"k.1\":\"v\"},\"binaryData\":{\"b\":\"AAE=\"}}",
              NULL),
        0);
    expect_err("ConfigMap", "{\"metadata\":5}", "metadata", "FieldValueTypeInvalid",
               "metadata in body must be of type object: \"integer\"");
    expect_err("ConfigMap", "[1]", "<root>", "FieldValueTypeInvalid", "must be of type object");
    expect_err("ConfigMap", "{\"metadata\":{\"labels\":5}}", "metadata.labels",
               "FieldValueTypeInvalid", "must be of type object");
    expect_err("ConfigMap", "{\"metadata\":{\"labels\":{\"a\":1}}}", "metadata.labels.a",
               "FieldValueTypeInvalid", "must be of type string");
    expect_err("ConfigMap", "{\"metadata\":{\"labels\":{\"a\":\"../../x\"}}}", "metadata.labels",
               "FieldValueInvalid", "Invalid value: \"../../x\": a valid label must be");
    expect_err("ConfigMap", "{\"metadata\":{\"labels\":{\"a\":\"b\\u0000c\"}}}", "metadata.labels",
               "FieldValueInvalid", "Invalid value: \"b\\x00c\"");
    expect_err("ConfigMap", "{\"metadata\":{\"annotations\":[1]}}", "metadata.annotations",
               "FieldValueTypeInvalid", "must be of type object");
    expect_err("ConfigMap", "{\"metadata\":{\"finalizers\":\"x\"}}", "metadata.finalizers",
               "FieldValueTypeInvalid", "must be of type array");
    expect_err("ConfigMap", "{\"metadata\":{\"finalizers\":[\"a/b/c\"]}}", "metadata.finalizers[0]",
               "FieldValueInvalid", "qualified name");
    expect_err("ConfigMap", "{\"metadata\":{\"ownerReferences\":[5]}}",
               "metadata.ownerReferences[0]", "FieldValueTypeInvalid", "must be of type object");
    expect_err(
        "ConfigMap",
        "{\"metadata\":{\"ownerReferences\":[{\"kind\":\"Pod\",\"name\":\"p\",\"uid\":\"u\"}]}}",
        "metadata.ownerReferences.apiVersion", "FieldValueInvalid", "version must not be empty");
    expect_err("ConfigMap", "{\"metadata\":{\"deletionTimestamp\":\"garbage\"}}",
               "metadata.deletionTimestamp", "FieldValueInvalid", "RFC 3339");
    expect_err("ConfigMap", "{\"metadata\":{\"generation\":\"1\"}}", "metadata.generation",
               "FieldValueTypeInvalid", "must be of type integer");
    expect_err("ConfigMap", "{\"metadata\":{\"namespace\":\"a\\u0000b\"}}", "metadata.namespace",
               "FieldValueInvalid", "NUL");
    expect_err("ConfigMap", "{\"data\":\"str\"}", "data", "FieldValueTypeInvalid",
               "data in body must be of type object: \"string\"");
    expect_err("ConfigMap", "{\"data\":{\"k\":5}}", "data[k]", "FieldValueTypeInvalid",
               "must be of type string");
    expect_err("ConfigMap", "{\"data\":{\"a/b\":\"v\"}}", "data[a/b]", "FieldValueInvalid",
               "a valid config key");
    expect_err("ConfigMap", "{\"binaryData\":{\"k\":\"!!\"}}", "binaryData[k]", "FieldValueInvalid",
               "illegal base64 data");
    expect_err("ConfigMap", "{\"data\":{\"k\":\"a\"},\"binaryData\":{\"k\":\"AA==\"}}", "data[k]",
               "FieldValueInvalid", "duplicate of key present in binaryData");
    expect_err("Secret", "{\"data\":{\"k\":\"not base64\"}}", "data[k]", "FieldValueInvalid",
               "illegal base64 data");
    expect_err("Job", "{\"spec\":[1]}", "spec", "FieldValueTypeInvalid", "must be of type object");
    expect_err("Pod", "{\"kind\":5}", "kind", "FieldValueTypeInvalid", "must be of type string");
    expect_err("PriorityClass", "{\"value\":\"high\"}", "value", "FieldValueTypeInvalid",
               "value in body must be of type integer: \"string\"");
    expect_err("PriorityClass", "{\"value\":4294967296}", "value", "FieldValueInvalid",
               "must fit in int32");
    expect_err("Event", "{\"involvedObject\":\"x\"}", "involvedObject", "FieldValueTypeInvalid",
               "must be of type object");
    expect_err("ServiceAccount", "{\"secrets\":{}}", "secrets", "FieldValueTypeInvalid",
               "must be of type array");
    assert_int_equal(check("PriorityClass", 1, "{\"value\":1000,\"globalDefault\":false}", NULL),
                     0);
    /* custom resources: metadata only (their schema checks the rest) */
    assert_int_equal(check("Thing", 0, "{\"spec\":5,\"data\":\"x\"}", NULL), 0);
    assert_int_equal(check("Thing", 0, "{\"metadata\":{\"labels\":[]}}", NULL), 1);

    /* annotations: 256 KiB of keys and values in all */
    size_t big = 256 * 1024;
    char *j = malloc(big + 64);
    int k = snprintf(j, big + 64, "{\"metadata\":{\"annotations\":{\"a\":\"");
    memset(j + k, 'x', big);
    snprintf(j + k + big, 64, "\"}}}");
    expect_err("ConfigMap", j, "metadata.annotations", "FieldValueTooLong",
               "Too long: must have at most 262144 bytes");
    snprintf(j + k + big - 1, 64, "\"}}}"); /* 1 + (big - 1): exactly the limit */
    assert_int_equal(check("ConfigMap", 1, j, NULL), 0);
    free(j);
}

static void test_prescan(void **state)
{
    (void)state;
    char err[200], *rw;
    size_t rl;
    int is_null;
#define SCAN(s) cu_json_prescan(s, strlen(s), &rw, &rl, err, sizeof err)
    assert_int_equal(SCAN("{\"a\":\"x\\u0000y\",\"b\":[1,2.5,-3e2]}"),
                     0); /* NUL in a value: kept */
    assert_null(rw);
    assert_int_equal(SCAN("{\"a\\u0000x\":\"1\",\"a\\u0000y\":\"2\"}"), -1);
    assert_non_null(strstr(err, "contains a NUL character"));
    assert_int_equal(SCAN("{\"a\\\\u0000x\" : 1}"), 0); /* an escaped backslash, no NUL */
    assert_null(rw);
    /* what json-c takes but JSON (and Go) does not */
    static const char *const lenient[] = {
        "[NaN]", "[-Infinity]", "[Infinity]", "{'a\\u0000b':1}", "/*c*/[1]",
        "[+1]",  "[.5]",        "[\"a\tb\"]", "[nul]",           "[1]#"
    };
    for (size_t i = 0; i < sizeof lenient / sizeof *lenient; i++)
        if (SCAN(lenient[i]) != -1 || !strstr(err, "invalid character"))
            fail_msg("%s: accepted (%s)", lenient[i], err);
    assert_int_equal(SCAN("[\"N\", -1]"), -1 + 1);
    assert_string_equal((SCAN("[NaN]"), err),
                        "invalid character 'N' looking for beginning of value");
    assert_int_equal(SCAN("{\"n\":1e400}"), -1);
    assert_non_null(strstr(err, "1e400 cannot be represented as a float64"));
    assert_int_equal(SCAN("[-1E400]"), -1);
    assert_int_equal(SCAN("[1e-400]"), 0); /* underflow is 0, as in Go */
    assert_null(rw);
    /* integers past int64 become the float64 kube-apiserver makes of them */
    assert_int_equal(
        SCAN("{\"n\":123456789012345678901234567890,\"m\":\"123456789012345678901234567890\"}"), 0);
    assert_non_null(rw);
    assert_string_equal(rw,
                        "{\"n\":1.2345678901234568e+29,\"m\":\"123456789012345678901234567890\"}");
    assert_int_equal(rl, strlen(rw));
    free(rw);
    assert_int_equal(SCAN("[9223372036854775807,-9223372036854775808,9223372036854775808]"), 0);
    assert_string_equal(rw, "[9223372036854775807,-9223372036854775808,9.2233720368547758e+18]");
    free(rw);
    /* nesting: CU_JSON_MAX_DEPTH levels pass, one more does not */
    for (int depth = CU_JSON_MAX_DEPTH; depth <= CU_JSON_MAX_DEPTH + 1; depth++) {
        char *d = malloc((size_t)depth * 2 + 2);
        memset(d, '[', (size_t)depth);
        memset(d + depth, ']', (size_t)depth);
        d[2 * depth] = '\0';
        json_object *o = cu_json_parse_checked(d, strlen(d), NULL, err, sizeof err);
        if (depth <= CU_JSON_MAX_DEPTH) {
            assert_non_null(o);
        } else {
            assert_null(o);
            assert_non_null(strstr(err, "exceeded max depth of 10000"));
        }
        json_object_put(o);
        free(d);
    }
    assert_null(cu_json_parse_checked("null", 4, &is_null, err, sizeof err));
    assert_true(is_null);
    assert_null(cu_json_parse_checked("{} 1", 4, &is_null, err, sizeof err));
    assert_false(is_null);
    assert_non_null(strstr(err, "unexpected data after the top-level value"));
    json_object *o =
        cu_json_parse_checked("{\"n\":123456789012345678901234567890}", 36, NULL, err, sizeof err);
    assert_non_null(o);
    assert_string_equal(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
                        "{\"n\":1.2345678901234568e+29}");
    json_object_put(o);
#undef SCAN
}

static void test_query_int(void **state)
{
    (void)state;
    char err[300];
    int64_t v = 7;
    assert_int_equal(cu_query_int("limit", NULL, 0, INT64_MAX, &v, err, sizeof err), 0);
    assert_int_equal(v, 7);
    assert_int_equal(cu_query_int("limit", "500", 0, INT64_MAX, &v, err, sizeof err), 0);
    assert_int_equal(v, 500);
    assert_int_equal(
        cu_query_int("limit", "9223372036854775807", 0, INT64_MAX, &v, err, sizeof err), 0);
    assert_int_equal(v, INT64_MAX);
    static const char *const bad[] = { "",    "abc",  "1x", "99999999999999999999", "-1", " 1",
                                       "1e3", "0x10", "+" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        if (cu_query_int("timeoutSeconds", bad[i], 0, INT64_MAX, &v, err, sizeof err) != -1)
            fail_msg("\"%s\" accepted", bad[i]);
        assert_non_null(strstr(err, "query parameter timeoutSeconds"));
    }
    assert_int_equal(
        cu_query_int("gracePeriodSeconds", "-5", INT64_MIN, INT64_MAX, &v, err, sizeof err), 0);
    assert_int_equal(v, -5);
}

/* A protobuf ConfigMap whose data keys hold a NUL is refused, never
 * stored under the cut key (issue 10 A2). */
static void test_protobuf_nul_key(void **state)
{
    (void)state;
    /* "k8s\0" + Unknown{1: TypeMeta{1:"v1", 2:"ConfigMap"}, 2: ConfigMap{2: {1:key, 2:"1"}}} */
    static const unsigned char head[] = { 'k',  '8', 's', 0,    0x0a, 0x0f, 0x0a,
                                          0x02, 'v', '1', 0x12, 0x09, 'C',  'o',
                                          'n',  'f', 'i', 'g',  'M',  'a',  'p' };
    for (int nul = 0; nul <= 1; nul++) {
        unsigned char msg[64];
        size_t n = sizeof head;
        memcpy(msg, head, n);
        const unsigned char key[3] = { 'a', nul ? 0 : 'b', 'x' };
        msg[n++] = 0x12; /* Unknown.raw */
        msg[n++] = 11;
        msg[n++] = 0x12; /* ConfigMap.data entry */
        msg[n++] = 9;
        msg[n++] = 0x0a;
        msg[n++] = 3;
        memcpy(msg + n, key, 3);
        n += 3;
        msg[n++] = 0x12;
        msg[n++] = 2;
        msg[n++] = '1';
        msg[n++] = '2';
        char err[200];
        json_object *o = cu_k8s_protobuf_to_json(msg, n, err, sizeof err);
        if (nul) {
            assert_null(o);
        } else {
            assert_non_null(o);
            json_object *d = NULL;
            assert_true(json_object_object_get_ex(o, "data", &d));
            assert_string_equal(json_object_to_json_string_ext(d, JSON_C_TO_STRING_PLAIN),
                                "{\"abx\":\"12\"}");
            json_object_put(o);
        }
    }
}

/* kube-apiserver lists every problem of a label key or value (the
 * length and the characters both, IsQualifiedName / IsValidLabelValue),
 * and checks annotation keys lowercased, whatever their length. */
static void test_objmeta_every_name_problem(void **state)
{
    (void)state;
    char v[65], j[512];
    memset(v, 'a', 63);
    v[63] = '-';
    v[64] = '\0';
    cu_schema_err errs[8];
    snprintf(j, sizeof j, "{\"metadata\":{\"labels\":{\"a\":\"%s\"}}}", v);
    json_object *o = cu_json_parse_checked(j, strlen(j), NULL, j, sizeof j);
    assert_non_null(o);
    assert_int_equal(cu_objmeta_validate(o, "ConfigMap", 1, errs, 8), 2);
    json_object_put(o);
    assert_non_null(strstr(errs[0].message, ": must be no more than 63 characters"));
    assert_non_null(strstr(errs[1].message, ": a valid label must be"));
    /* a key: name part too long and with a bad character */
    snprintf(j, sizeof j, "{\"metadata\":{\"labels\":{\"%s\":\"x\"}}}", v);
    o = cu_json_parse_checked(j, strlen(j), NULL, j, sizeof j);
    assert_non_null(o);
    assert_int_equal(cu_objmeta_validate(o, "ConfigMap", 1, errs, 8), 2);
    json_object_put(o);
    assert_non_null(strstr(errs[0].message, ": name part must be no more than 63 characters"));
    assert_non_null(strstr(errs[1].message, ": name part must consist of"));
    /* an annotation key longer than any buffer, with an upper-case prefix
     * that is valid lowercased and a name part that is fine */
    char k[400];
    memset(k, 'A', 300);
    memcpy(k + 300, "/ok", 4);
    snprintf(j, sizeof j, "{\"metadata\":{\"annotations\":{\"%s\":\"x\"}}}", k);
    o = cu_json_parse_checked(j, strlen(j), NULL, j, sizeof j);
    assert_non_null(o);
    assert_int_equal(cu_objmeta_validate(o, "ConfigMap", 1, errs, 8), 1);
    json_object_put(o);
    assert_non_null(strstr(errs[0].message, ": prefix part must be no more than 253 characters"));
    k[250] = '/';
    k[251] = '\0'; /* a 250-character prefix, valid lowercased, empty name */
    snprintf(j, sizeof j, "{\"metadata\":{\"annotations\":{\"%sok\":\"x\"}}}", k);
    o = cu_json_parse_checked(j, strlen(j), NULL, j, sizeof j);
    assert_non_null(o);
    assert_int_equal(cu_objmeta_validate(o, "ConfigMap", 1, errs, 8), 0);
    json_object_put(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_objmeta_types),    cmocka_unit_test(test_objmeta_every_name_problem),
        cmocka_unit_test(test_prescan),          cmocka_unit_test(test_query_int),
        cmocka_unit_test(test_protobuf_nul_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
