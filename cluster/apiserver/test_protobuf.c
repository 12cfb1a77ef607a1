/*
 * test_protobuf.c - the Kubernetes protobuf decoder (cu_protobuf.c): each
 * of the five kinds it reads, built field by field with a small encoder
 * here and compared with the JSON the store keeps; what Go omits (empty
 * strings, generation 0, a zero time), maps (bytes values as base64),
 * repeated fields and messages, times (before 1970; one too large for
 * milliseconds is refused), unknown fields skipped, and the refusals
 * (magic, kind, wire types, truncation) with their messages.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_apiserver.h"
#include "cu_json.h"
#include "cu_patch.h"

/* ---- a protobuf writer, just enough for the tests ---- */

typedef struct pbw {
    unsigned char b[4096];
    size_t n;
} pbw;

static void varint(pbw *w, uint64_t v)
{
    do {
        unsigned char c = v & 0x7f;
        v >>= 7;
        assert_true(w->n < sizeof w->b);
        w->b[w->n++] = (unsigned char)(c | (v ? 0x80 : 0));
    } while (v);
}

static void raw(pbw *w, const void *p, size_t n)
{
    assert_true(w->n + n <= sizeof w->b);
    memcpy(w->b + w->n, p, n);
    w->n += n;
}

static void f_int(pbw *w, unsigned num, uint64_t v)
{
    varint(w, (uint64_t)num << 3);
    varint(w, v);
}

static void f_bytes(pbw *w, unsigned num, const void *p, size_t n)
{
    varint(w, (uint64_t)num << 3 | 2);
    varint(w, n);
    raw(w, p, n);
}

static void f_str(pbw *w, unsigned num, const char *s) { f_bytes(w, num, s, strlen(s)); }

static void f_msg(pbw *w, unsigned num, const pbw *m) { f_bytes(w, num, m->b, m->n); }

static void f_entry(pbw *w, unsigned num, const char *k, const void *v, size_t vn)
{
    pbw e = { .n = 0 };
    f_str(&e, 1, k);
    f_bytes(&e, 2, v, vn);
    f_msg(w, num, &e);
}

/* "k8s\0" + Unknown{typeMeta{av, kind}, raw: body} */
static void envelope(pbw *out, const char *av, const char *kind, const pbw *body)
{
    pbw tm = { .n = 0 };
    out->n = 0;
    raw(out, "k8s\0", 4);
    f_str(&tm, 1, av);
    f_str(&tm, 2, kind);
    f_msg(out, 1, &tm);
    if (body)
        f_msg(out, 2, body);
}

static void meta(pbw *m, const char *name, const char *ns)
{
    m->n = 0;
    f_str(m, 1, name);
    if (ns)
        f_str(m, 3, ns);
}

static json_object *decode_ok(const pbw *w)
{
    char err[256] = "";
    json_object *o = cu_k8s_protobuf_to_json(w->b, w->n, err, sizeof err);
    if (!o)
        fail_msg("decode failed: %s", err);
    return o;
}

static void expect_json(json_object *o, const char *want)
{
    json_object *w = cu_json_parse_str(want);
    assert_non_null(w);
    if (!cu_json_equal(o, w))
        fail_msg("got %s\nwant %s", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
                 want);
    json_object_put(w);
    json_object_put(o);
}

static void expect_err(const pbw *w, const char *want)
{
    char err[256] = "";
    json_object *o = cu_k8s_protobuf_to_json(w->b, w->n, err, sizeof err);
    assert_null(o);
    if (!strstr(err, want))
        fail_msg("error \"%s\" lacks \"%s\"", err, want);
}

/* ---- the kinds ---- */

static void test_namespace(void **st)
{
    (void)st;
    pbw m, spec = { .n = 0 }, status = { .n = 0 }, body = { .n = 0 }, ts = { .n = 0 }, w;
    meta(&m, "team-a", NULL);
    f_str(&m, 2, ""); /* generateName: empty, omitted */
    f_str(&m, 5, "uid-1");
    f_str(&m, 6, "42");
    f_int(&m, 7, 0);           /* generation 0: omitted */
    f_int(&ts, 1, 1767225600); /* 2026-01-01T00:00:00Z */
    f_int(&ts, 2, 5);          /* nanos: dropped (second precision) */
    f_msg(&m, 8, &ts);
    f_entry(&m, 11, "app", "x", 1);
    f_entry(&m, 11, "tier", "", 0);
    f_entry(&m, 12, "note", "hi", 2);
    f_str(&m, 14, "kubernetes");
    f_str(&m, 14, "custom/f");
    f_msg(&body, 1, &m);
    f_str(&spec, 1, "kubernetes");
    f_msg(&body, 2, &spec);
    f_str(&status, 1, "Active");
    f_msg(&body, 3, &status);
    envelope(&w, "v1", "Namespace", &body);
    expect_json(decode_ok(&w),
                "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"team-a\","
                "\"uid\":\"uid-1\",\"resourceVersion\":\"42\","
                "\"creationTimestamp\":\"2026-01-01T00:00:00Z\","
                "\"labels\":{\"app\":\"x\",\"tier\":\"\"},\"annotations\":{\"note\":\"hi\"},"
                "\"finalizers\":[\"kubernetes\",\"custom/f\"]},"
                "\"spec\":{\"finalizers\":[\"kubernetes\"]},\"status\":{\"phase\":\"Active\"}}");
}

static void test_configmap_secret(void **st)
{
    (void)st;
    pbw m, body = { .n = 0 }, w;
    meta(&m, "cm", "default");
    f_int(&m, 7, 3);
    f_msg(&body, 1, &m);
    f_entry(&body, 2, "k", "v", 1);
    f_entry(&body, 2, "k2", "a\nb", 3);
    f_entry(&body, 3, "bin", "\x00\xff\x10", 3);
    f_int(&body, 4, 1);
    envelope(&w, "v1", "ConfigMap", &body);
    expect_json(
        decode_ok(&w),
        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm\","
        "\"namespace\":\"default\",\"generation\":3},\"data\":{\"k\":\"v\",\"k2\":\"a\\nb\"},"
        "\"binaryData\":{\"bin\":\"AP8Q\"},\"immutable\":true}");

    body.n = 0;
    meta(&m, "s", "default");
    f_msg(&body, 1, &m);
    f_entry(&body, 2, "password", "hunter2", 7);
    f_str(&body, 3, "Opaque");
    f_entry(&body, 4, "plain", "text", 4);
    f_int(&body, 5, 0);
    /* a map entry without a value is the empty value */
    pbw e = { .n = 0 };
    f_str(&e, 1, "none");
    f_msg(&body, 2, &e);
    envelope(&w, "v1", "Secret", &body);
    expect_json(decode_ok(&w),
                "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"s\","
                "\"namespace\":\"default\"},\"data\":{\"password\":\"aHVudGVyMg==\",\"none\":\"\"},"
                "\"type\":\"Opaque\",\"stringData\":{\"plain\":\"text\"},\"immutable\":false}");
}

static void test_serviceaccount_priorityclass(void **st)
{
    (void)st;
    pbw m, body = { .n = 0 }, ref = { .n = 0 }, lref = { .n = 0 }, own = { .n = 0 }, w;
    meta(&m, "sa", "ns");
    f_str(&own, 1, "Job");
    f_str(&own, 3, "j");
    f_str(&own, 4, "u2");
    f_str(&own, 5, "batch/v1");
    f_int(&own, 6, 1);
    f_int(&own, 7, 0);
    f_msg(&m, 13, &own);
    f_msg(&body, 1, &m);
    f_str(&ref, 1, "Secret");
    f_str(&ref, 3, "tok");
    f_msg(&body, 2, &ref);
    f_str(&lref, 1, "pull");
    f_msg(&body, 3, &lref);
    f_msg(&body, 3, &lref);
    f_int(&body, 4, 1);
    envelope(&w, "v1", "ServiceAccount", &body);
    expect_json(
        decode_ok(&w),
        "{\"apiVersion\":\"v1\",\"kind\":\"ServiceAccount\",\"metadata\":{\"name\":\"sa\","
        "\"namespace\":\"ns\",\"ownerReferences\":[{\"kind\":\"Job\",\"name\":\"j\","
        "\"uid\":\"u2\",\"apiVersion\":\"batch/v1\",\"controller\":true,"
        "\"blockOwnerDeletion\":false}]},\"secrets\":[{\"kind\":\"Secret\",\"name\":\"tok\"}],"
        "\"imagePullSecrets\":[{\"name\":\"pull\"},{\"name\":\"pull\"}],"
        "\"automountServiceAccountToken\":true}");

    body.n = 0;
    meta(&m, "high", NULL);
    f_msg(&body, 1, &m);
    f_int(&body, 2, 1000000);
    f_int(&body, 3, 1);
    f_str(&body, 4, "important");
    f_str(&body, 5, "Never");
    envelope(&w, "scheduling.k8s.io/v1", "PriorityClass", &body);
    expect_json(decode_ok(&w),
                "{\"apiVersion\":\"scheduling.k8s.io/v1\",\"kind\":\"PriorityClass\","
                "\"metadata\":{\"name\":\"high\"},\"value\":1000000,\"globalDefault\":true,"
                "\"description\":\"important\",\"preemptionPolicy\":\"Never\"}");
}

static void test_times(void **st)
{
    (void)st;
    pbw m, ts = { .n = 0 }, body = { .n = 0 }, w;
    meta(&m, "old", NULL);
    f_int(&ts, 1, (uint64_t)INT64_C(-86400)); /* 1969-12-31 */
    f_msg(&m, 8, &ts);
    f_msg(&body, 1, &m);
    envelope(&w, "v1", "Namespace", &body);
    expect_json(decode_ok(&w),
                "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":"
                "{\"name\":\"old\",\"creationTimestamp\":\"1969-12-31T00:00:00Z\"}}");
    /* a zero time is omitted */
    ts.n = 0;
    f_int(&ts, 2, 5);
    meta(&m, "zero", NULL);
    f_msg(&m, 8, &ts);
    body.n = 0;
    f_msg(&body, 1, &m);
    envelope(&w, "v1", "Namespace", &body);
    expect_json(decode_ok(&w), "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":"
                               "{\"name\":\"zero\"}}");
}

static void test_unknown_fields_skipped(void **st)
{
    (void)st;
    pbw m, body = { .n = 0 }, w;
    meta(&m, "cm", "ns");
    f_int(&m, 99, 7);                  /* unknown varint */
    f_str(&m, 98, "ignored");          /* unknown bytes */
    varint(&m, (uint64_t)97 << 3 | 1); /* unknown fixed64 */
    raw(&m, "12345678", 8);
    varint(&m, (uint64_t)96 << 3 | 5); /* unknown fixed32 */
    raw(&m, "1234", 4);
    f_msg(&body, 1, &m);
    f_entry(&body, 2, "a", "b", 1);
    envelope(&w, "v1", "ConfigMap", &body);
    f_int(&w, 15, 1); /* unknown envelope field */
    f_str(&w, 3, ""); /* contentEncoding, contentType */
    f_str(&w, 4, "");
    expect_json(decode_ok(&w),
                "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm\","
                "\"namespace\":\"ns\"},\"data\":{\"a\":\"b\"}}");
    /* no raw at all: just the type */
    envelope(&w, "v1", "Namespace", NULL);
    expect_json(decode_ok(&w), "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\"}");
}

static void test_refusals(void **st)
{
    (void)st;
    pbw w = { .n = 0 }, body = { .n = 0 }, m;
    raw(&w, "k8s", 3);
    expect_err(&w, "no k8s magic prefix");
    w.n = 0;
    raw(&w, "{\"apiVersion\":\"v1\"}", 19);
    expect_err(&w, "no k8s magic prefix");
    envelope(&w, "apps/v1", "Deployment", NULL);
    expect_err(&w, "not apps/v1 Deployment; send JSON");
    w.n = 0;
    raw(&w, "k8s\0", 4);
    expect_err(&w, "(no apiVersion) (no kind)");
    /* a length past the end */
    envelope(&w, "v1", "Namespace", NULL);
    raw(&w, "\x12\x7f", 2);
    expect_err(&w, "malformed protobuf envelope");
    /* a varint that never ends */
    w.n = 0;
    raw(&w, "k8s\0\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", 15);
    expect_err(&w, "malformed protobuf envelope");
    /* wire type 3 (groups) is not read */
    envelope(&w, "v1", "Namespace", NULL);
    raw(&w, "\x1b", 1);
    expect_err(&w, "malformed protobuf envelope");
    /* a string field sent as a varint */
    meta(&m, "x", NULL);
    f_int(&m, 3, 5);
    f_msg(&body, 1, &m);
    envelope(&w, "v1", "Namespace", &body);
    expect_err(&w, "malformed protobuf Namespace");
    /* a bool sent as bytes */
    body.n = 0;
    f_str(&body, 4, "yes");
    envelope(&w, "v1", "ConfigMap", &body);
    expect_err(&w, "malformed protobuf ConfigMap");
    /* a creationTimestamp whose milliseconds do not fit an int64 */
    pbw ts = { .n = 0 };
    f_int(&ts, 1, UINT64_C(8718322885239716517));
    meta(&m, "x", NULL);
    f_msg(&m, 8, &ts);
    body.n = 0;
    f_msg(&body, 1, &m);
    envelope(&w, "v1", "Namespace", &body);
    expect_err(&w, "malformed protobuf Namespace");
    /* a map entry without a key, or with a NUL in it */
    body.n = 0;
    pbw e = { .n = 0 };
    f_str(&e, 2, "v");
    f_msg(&body, 2, &e);
    envelope(&w, "v1", "ConfigMap", &body);
    expect_err(&w, "malformed protobuf ConfigMap");
    body.n = 0;
    e.n = 0;
    f_bytes(&e, 1, "a\0b", 3);
    f_msg(&body, 2, &e);
    envelope(&w, "v1", "ConfigMap", &body);
    expect_err(&w, "malformed protobuf ConfigMap");
    /* truncated inside raw: every prefix is refused or decodes, never read past */
    body.n = 0;
    meta(&m, "trunc", "ns");
    f_msg(&body, 1, &m);
    f_entry(&body, 2, "k", "v", 1);
    envelope(&w, "v1", "ConfigMap", &body);
    for (size_t n = 0; n < w.n; n++) {
        char err[256] = "";
        json_object *o = cu_k8s_protobuf_to_json(w.b, n, err, sizeof err);
        assert_true(o != NULL || err[0] != '\0');
        json_object_put(o);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_namespace),
        cmocka_unit_test(test_configmap_secret),
        cmocka_unit_test(test_serviceaccount_priorityclass),
        cmocka_unit_test(test_times),
        cmocka_unit_test(test_unknown_fields_skipped),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
