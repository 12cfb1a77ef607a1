/*
 * fuzz_schema.c - libFuzzer target for CRD schemas (cu_schema.c) as the
 * embedded API server takes them from clients: an arbitrary
 * openAPIV3Schema is installed as a CustomResourceDefinition in a store,
 * then objects are created against it.
 *
 * The input is one JSON object {"schema": S, "objects": [O, ...]}. Besides
 * "no crash, no sanitizer report, no hang" (libFuzzer's -timeout bounds
 * the time of one input), it checks:
 *  - the CRD is accepted exactly when cu_schema_check finds nothing wrong
 *    with S (the wrapper around S is valid by construction);
 *  - validating with the schema's compiled patterns (cu_schema_validate_rx)
 *    and without them (cu_schema_validate) reports the same number of
 *    problems;
 *  - an object the store accepted validates again without a problem
 *    (defaulting and pruning are idempotent).
 * A violated property aborts (a finding).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_schema.h"
#include "cu_store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static json_object *member(json_object *o, const char *k)
{
    json_object *v = NULL;
    return o && json_object_object_get_ex(o, k, &v) ? v : NULL;
}

static json_object *copy_of(json_object *o)
{
    json_object *c = NULL;
    if (json_object_deep_copy(o, &c, NULL) != 0)
        return NULL;
    return c;
}

static void finding(const char *what, json_object *schema, json_object *obj)
{
    if (getenv("FUZZ_SCHEMA_DEBUG"))
        fprintf(stderr, "%s\nschema: %s\nobject: %s\n", what,
                json_object_to_json_string_ext(schema, JSON_C_TO_STRING_PLAIN),
                obj ? json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN) : "-");
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 64 * 1024)
        return 0;
    json_tokener *tok = json_tokener_new_ex(64);
    if (!tok)
        return 0;
    json_object *in = json_tokener_parse_ex(tok, (const char *)data, (int)size);
    json_tokener_free(tok);
    json_object *schema = member(in, "schema");
    if (!in || !json_object_is_type(in, json_type_object) || !schema) {
        json_object_put(in);
        return 0;
    }
    size_t bad = cu_schema_check(schema, "s", NULL, 0);
    cu_store *s = cu_store_new(64, NULL);
    if (!s) {
        json_object_put(in);
        return 0;
    }
    const cu_rtype *crds =
        cu_store_rtype(s, "apiextensions.k8s.io", "v1", "customresourcedefinitions");
    json_object *crd = json_tokener_parse(
        "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
        "\"metadata\":{\"name\":\"things.fuzz.example.com\"},\"spec\":{\"group\":\"fuzz.example.com\","
        "\"scope\":\"Namespaced\",\"names\":{\"plural\":\"things\",\"kind\":\"Thing\"},"
        "\"versions\":[{\"name\":\"v1\",\"served\":true,\"storage\":true,\"schema\":{}}]}}");
    json_object *ver = json_object_array_get_idx(member(member(crd, "spec"), "versions"), 0);
    json_object_object_add(member(ver, "schema"), "openAPIV3Schema", copy_of(schema));
    cu_status st;
    cu_err err = cu_store_create(s, crds, NULL, crd, NULL, &st);
    if ((err == CU_OK) != (bad == 0))
        finding(err == CU_OK ? "CRD accepted with a bad schema" : "CRD refused with a good schema",
                schema, NULL);
    const cu_rtype *rt =
        err == CU_OK ? cu_store_rtype(s, "fuzz.example.com", "v1", "things") : NULL;
    json_object *objs = member(in, "objects");
    size_t n =
        objs && json_object_is_type(objs, json_type_array) ? json_object_array_length(objs) : 0;
    for (size_t i = 0; i < n && i < 8; i++) {
        json_object *o = json_object_array_get_idx(objs, i);
        json_object *a = copy_of(o), *b = copy_of(o);
        size_t na = cu_schema_validate(schema, a, (int)(i & 1), NULL, 0);
        size_t nb =
            rt ? cu_schema_validate_rx(rt->schema, rt->schema_rx, b, (int)(i & 1), NULL, 0) : na;
        if (na != nb)
            finding("compiled and uncompiled patterns disagree", schema, o);
        json_object_put(a);
        json_object_put(b);
        if (!rt || !o || !json_object_is_type(o, json_type_object))
            continue;
        json_object *c = copy_of(o);
        char name[32];
        snprintf(name, sizeof name, "o%zu", i);
        json_object *m = json_object_new_object();
        json_object_object_add(m, "name", json_object_new_string(name));
        json_object_object_add(c, "metadata", m);
        json_object_object_add(c, "apiVersion", json_object_new_string("fuzz.example.com/v1"));
        json_object_object_add(c, "kind", json_object_new_string("Thing"));
        json_object *out = NULL;
        if (cu_store_create(s, rt, "default", c, &out, &st) == CU_OK) {
            if (cu_schema_validate_rx(rt->schema, rt->schema_rx, out, 0, NULL, 0) != 0)
                finding("a stored object does not validate again", schema, out);
            json_object_put(out);
        }
    }
    cu_store_free(s);
    json_object_put(in);
    return 0;
}
