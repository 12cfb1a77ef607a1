/*
 * test_fields.c - field management: field sets of objects, ownership
 * transfer on updates, server-side apply (conflicts, force, shared
 * ownership, removal of dropped fields, the status subresource) and the
 * managedFields encoding.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "cu_fields.h"
#include "cu_patch.h"

static json_object *J(const char *s)
{
    json_object *o = json_tokener_parse(s);
    if (!o)
        fail_msg("bad JSON in test: %s", s);
    return o;
}

static void assert_json(json_object *got, const char *want)
{
    json_object *w = J(want);
    if (!json_object_equal(got, w))
        fail_msg("got  %s\nwant %s", json_object_to_json_string(got), want);
    json_object_put(w);
}

/* Workload-like CRD schema: status.conditions is a map keyed by type,
 * spec.podSets a map keyed by name, spec.tags a set, spec.args atomic,
 * spec.selector an atomic map, spec.res a map of objects. */
static const char *SCHEMA =
    "{\"type\":\"object\",\"properties\":{"
    "\"spec\":{\"type\":\"object\",\"properties\":{"
    "  \"queue\":{\"type\":\"string\"},\"replicas\":{\"type\":\"integer\"},"
    "  \"podSets\":{\"type\":\"array\",\"x-kubernetes-list-type\":\"map\","
    "    \"x-kubernetes-list-map-keys\":[\"name\"],"
    "    \"items\":{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"},"
    "      \"count\":{\"type\":\"integer\"}}}},"
    "  \"ports\":{\"type\":\"array\",\"x-kubernetes-list-type\":\"map\","
    "    \"x-kubernetes-list-map-keys\":[\"proto\",\"port\"],"
    "    \"items\":{\"type\":\"object\"}},"
    "  \"tags\":{\"type\":\"array\",\"x-kubernetes-list-type\":\"set\",\"items\":{\"type\":\"string\"}},"
    "  \"args\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
    "  \"selector\":{\"type\":\"object\",\"x-kubernetes-map-type\":\"atomic\"},"
    "  \"res\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"object\","
    "    \"properties\":{\"cpu\":{\"type\":\"string\"}}}}}},"
    "\"status\":{\"type\":\"object\",\"properties\":{"
    "  \"admission\":{\"type\":\"object\",\"properties\":{\"clusterQueue\":{\"type\":\"string\"},"
    "    \"podSetAssignments\":{\"type\":\"array\",\"x-kubernetes-list-type\":\"map\","
    "      \"x-kubernetes-list-map-keys\":[\"name\"],\"items\":{\"type\":\"object\"}}}},"
    "  \"conditions\":{\"type\":\"array\",\"x-kubernetes-list-type\":\"map\","
    "    \"x-kubernetes-list-map-keys\":[\"type\"],\"items\":{\"type\":\"object\"}}}}}}";

typedef struct set_case {
    const char *name;
    const char *kind; /* built-in kind ("v1" core) or NULL = the CRD schema */
    const char *api_version;
    int scope;
    const char *obj;
    const char *want;
} set_case;

static const set_case set_cases[] = {
    { "configmap labels and data", "ConfigMap", "v1", CU_SCOPE_ALL,
      "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\",\"namespace\":\"d\","
      "\"resourceVersion\":\"3\",\"labels\":{\"app\":\"x\"}},\"data\":{\"k\":\"v\"}}",
      "{\"f:data\":{\"f:k\":{}},\"f:metadata\":{\"f:labels\":{\"f:app\":{}}}}" },
    { "pod containers keyed by name, env by name", "Pod", "v1", CU_SCOPE_ALL,
      "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\","
      "\"env\":[{\"name\":\"E\",\"value\":\"1\"}],\"args\":[\"a\",\"b\"]}]}}",
      "{\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"c\\\"}\":{\".\":{},\"f:args\":{},"
      "\"f:env\":{\"k:{\\\"name\\\":\\\"E\\\"}\":{\".\":{},\"f:name\":{},\"f:value\":{}}},"
      "\"f:image\":{},\"f:name\":{}}}}}" },
    { "finalizers are a set, ownerReferences keyed by uid", "Job", "batch/v1", CU_SCOPE_ALL,
      "{\"metadata\":{\"name\":\"j\",\"finalizers\":[\"a/b\"],\"ownerReferences\":[{\"uid\":\"u1\","
      "\"name\":\"o\"}]}}",
      "{\"f:metadata\":{\"f:finalizers\":{\"v:\\\"a/b\\\"\":{}},\"f:ownerReferences\":{"
      "\"k:{\\\"uid\\\":\\\"u1\\\"}\":{\".\":{},\"f:name\":{},\"f:uid\":{}}}}}" },
    { "crd: map lists, sets, atomic lists and maps, two keys sorted", NULL, NULL, CU_SCOPE_ALL,
      "{\"spec\":{\"queue\":\"q\",\"podSets\":[{\"name\":\"main\",\"count\":2}],"
      "\"ports\":[{\"proto\":\"TCP\",\"port\":80}],\"tags\":[\"x\"],\"args\":[\"1\"],"
      "\"selector\":{\"a\":\"b\"},\"res\":{\"r1\":{\"cpu\":\"1\"}}}}",
      "{\"f:spec\":{\"f:args\":{},\"f:podSets\":{\"k:{\\\"name\\\":\\\"main\\\"}\":{\".\":{},"
      "\"f:count\":{},\"f:name\":{}}},\"f:ports\":{\"k:{\\\"port\\\":80,\\\"proto\\\":\\\"TCP\\\"}\":"
      "{\".\":{},\"f:port\":{},\"f:proto\":{}}},\"f:queue\":{},\"f:res\":{\"f:r1\":{\".\":{},"
      "\"f:cpu\":{}}},\"f:selector\":{},\"f:tags\":{\"v:\\\"x\\\"\":{}}}}" },
    { "status scope keeps only status", NULL, NULL, CU_SCOPE_STATUS,
      "{\"spec\":{\"queue\":\"q\"},\"status\":{\"conditions\":[{\"type\":\"A\",\"status\":\"True\"}]}}",
      "{\"f:status\":{\"f:conditions\":{\"k:{\\\"type\\\":\\\"A\\\"}\":{\".\":{},\"f:status\":{},"
      "\"f:type\":{}}}}}" },
    { "main scope of a status type drops status", NULL, NULL, CU_SCOPE_NO_STATUS,
      "{\"spec\":{\"queue\":\"q\"},\"status\":{\"conditions\":[]}}",
      "{\"f:spec\":{\"f:queue\":{}}}" },
};

static void oracle_for(const char *kind, const char *av, json_object *schema, cu_field_oracle *o)
{
    if (kind)
        cu_patch_field_oracle(av, kind, o);
    else
        cu_fields_schema_oracle(schema, o);
}

static void test_field_sets(void **state)
{
    (void)state;
    json_object *schema = J(SCHEMA);
    for (size_t i = 0; i < sizeof set_cases / sizeof *set_cases; i++) {
        const set_case *c = &set_cases[i];
        cu_field_oracle o;
        oracle_for(c->kind, c->api_version, schema, &o);
        json_object *obj = J(c->obj);
        json_object *set = cu_fields_of(obj, &o, c->scope);
        cu_fset_sort(set);
        print_message("case: %s\n", c->name);
        assert_json(set, c->want);
        json_object_put(set);
        json_object_put(obj);
    }
    json_object_put(schema);
}

static void test_sort_order(void **state)
{
    (void)state;
    json_object *s = J("{\"v:\\\"b\\\"\":{},\"k:{\\\"a\\\":1}\":{\".\":{}},\"f:z\":{},\"f:a\":{},"
                       "\".\":{}}");
    cu_fset_sort(s);
    assert_string_equal(
        json_object_to_json_string_ext(s, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
        "{\".\":{},\"f:a\":{},\"f:z\":{},\"k:{\\\"a\\\":1}\":{},\"v:\\\"b\\\"\":{}}");
    json_object_put(s);
}

static void test_set_ops(void **state)
{
    (void)state;
    json_object *a = J("{\"f:spec\":{\"f:x\":{},\"f:y\":{}},\"f:l\":{}}");
    json_object *b = J("{\"f:spec\":{\"f:x\":{}},\"f:l\":{\"f:k\":{}}}");
    cu_fset_union(a, b);
    /* l was a leaf member: it keeps membership with a "." */
    const char *lk[] = { "f:l", NULL }, *lkk[] = { "f:l", "f:k", NULL };
    assert_true(cu_fset_has(a, lk));
    assert_true(cu_fset_has(a, lkk));
    assert_int_equal(cu_fset_count(a), 4); /* spec.x spec.y l l.k; spec is not a member */
    assert_true(cu_fset_subtract(a, b));
    const char *sy[] = { "f:spec", "f:y", NULL }, *sx[] = { "f:spec", "f:x", NULL };
    assert_true(cu_fset_has(a, sy));
    assert_false(cu_fset_has(a, sx));
    assert_true(cu_fset_has(a, lk));
    assert_false(cu_fset_has(a, lkk));
    assert_false(cu_fset_subtract(a, b));
    json_object_put(a);
    json_object_put(b);
}

static const char *entry_field(json_object *obj, const char *manager, const char *op,
                               const char *field)
{
    json_object *mf = NULL, *m = NULL;
    json_object_object_get_ex(obj, "metadata", &m);
    json_object_object_get_ex(m, "managedFields", &mf);
    for (size_t i = 0; mf && i < json_object_array_length(mf); i++) {
        json_object *e = json_object_array_get_idx(mf, i), *v = NULL, *mv = NULL, *ov = NULL;
        json_object_object_get_ex(e, "manager", &mv);
        json_object_object_get_ex(e, "operation", &ov);
        if (strcmp(json_object_get_string(mv), manager) || strcmp(json_object_get_string(ov), op))
            continue;
        if (!json_object_object_get_ex(e, field, &v))
            return "";
        return json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN |
                                                     JSON_C_TO_STRING_NOSLASHESCAPE);
    }
    return NULL;
}

static size_t n_entries(json_object *obj)
{
    json_object *mf = NULL, *m = NULL;
    json_object_object_get_ex(obj, "metadata", &m);
    return json_object_object_get_ex(m, "managedFields", &mf) ? json_object_array_length(mf) : 0;
}

static cu_fm_req req(const char *mgr, const char *sub, int force)
{
    cu_fm_req r = { mgr, "example.com/v1", sub, "2024-05-01T10:00:00Z", force };
    return r;
}

static void test_update_transfers_ownership(void **state)
{
    (void)state;
    json_object *schema = J(SCHEMA);
    cu_field_oracle o;
    cu_fields_schema_oracle(schema, &o);
    char err[256];
    /* create by A */
    json_object *v1 = J("{\"metadata\":{\"name\":\"w\",\"labels\":{\"a\":\"1\"}},"
                        "\"spec\":{\"queue\":\"q\",\"replicas\":1}}");
    cu_fm_req ra = req("a", NULL, 0);
    assert_int_equal(cu_fields_update(NULL, v1, &o, CU_SCOPE_NO_STATUS, &ra, err, sizeof err), 0);
    assert_string_equal(entry_field(v1, "a", "Update", "fieldsV1"),
                        "{\"f:metadata\":{\"f:labels\":{\".\":{},\"f:a\":{}}},\"f:spec\":{\".\":{},"
                        "\"f:queue\":{},\"f:replicas\":{}}}");
    assert_string_equal(entry_field(v1, "a", "Update", "time"), "\"2024-05-01T10:00:00Z\"");
    assert_string_equal(entry_field(v1, "a", "Update", "apiVersion"), "\"example.com/v1\"");
    assert_string_equal(entry_field(v1, "a", "Update", "subresource"), "");

    /* B changes replicas and removes the label: B owns replicas, A keeps queue only */
    json_object *v2 = NULL;
    json_object_deep_copy(v1, &v2, NULL);
    json_object *spec = NULL, *meta = NULL;
    json_object_object_get_ex(v2, "spec", &spec);
    json_object_object_add(spec, "replicas", json_object_new_int(3));
    json_object_object_get_ex(v2, "metadata", &meta);
    json_object_object_del(meta, "labels");
    cu_fm_req rb = req("b", NULL, 0);
    rb.now = "2024-05-01T11:00:00Z";
    assert_int_equal(cu_fields_update(v1, v2, &o, CU_SCOPE_NO_STATUS, &rb, err, sizeof err), 0);
    assert_string_equal(entry_field(v2, "a", "Update", "fieldsV1"),
                        "{\"f:spec\":{\".\":{},\"f:queue\":{}}}");
    assert_string_equal(entry_field(v2, "b", "Update", "fieldsV1"),
                        "{\"f:spec\":{\"f:replicas\":{}}}");
    /* A's entry keeps its time: only its set changed */
    assert_string_equal(entry_field(v2, "a", "Update", "time"), "\"2024-05-01T10:00:00Z\"");

    /* a no-op update changes nothing, not even times */
    json_object *v3 = NULL;
    json_object_deep_copy(v2, &v3, NULL);
    cu_fm_req rc = req("c", NULL, 0);
    rc.now = "2024-05-01T12:00:00Z";
    assert_int_equal(cu_fields_update(v2, v3, &o, CU_SCOPE_NO_STATUS, &rc, err, sizeof err), 0);
    assert_true(json_object_equal(v2, v3));

    /* status changes through the main endpoint are not tracked */
    json_object_object_add(v3, "status", J("{\"conditions\":[{\"type\":\"X\"}]}"));
    assert_int_equal(cu_fields_update(v2, v3, &o, CU_SCOPE_NO_STATUS, &rc, err, sizeof err), 0);
    assert_null(entry_field(v3, "c", "Update", "fieldsV1"));

    /* [{}] clears tracking; [] keeps the live entries */
    json_object *v4 = NULL;
    json_object_deep_copy(v2, &v4, NULL);
    json_object_object_get_ex(v4, "metadata", &meta);
    json_object_object_add(meta, "managedFields", J("[]"));
    assert_int_equal(cu_fields_update(v2, v4, &o, CU_SCOPE_NO_STATUS, &rc, err, sizeof err), 0);
    assert_int_equal(n_entries(v4), 2);
    json_object_object_add(meta, "managedFields", J("[{}]"));
    assert_int_equal(cu_fields_update(v2, v4, &o, CU_SCOPE_NO_STATUS, &rc, err, sizeof err), 0);
    assert_int_equal(n_entries(v4), 0);

    /* nonsense is refused with the field named */
    json_object_object_add(
        meta, "managedFields",
        J("[{\"manager\":\"x\",\"operation\":\"Delete\",\"fieldsType\":\"FieldsV1\"}]"));
    assert_int_equal(cu_fields_update(v2, v4, &o, CU_SCOPE_NO_STATUS, &rc, err, sizeof err), -1);
    assert_non_null(
        strstr(err, "metadata.managedFields[0].operation: Unsupported value: \"Delete\""));
    json_object_object_add(
        meta, "managedFields",
        J("[{\"manager\":\"x\",\"operation\":\"Update\",\"fieldsType\":\"FieldsV1\","
          "\"fieldsV1\":{\"spec\":{}}}]"));
    assert_int_equal(cu_fields_update(v2, v4, &o, CU_SCOPE_NO_STATUS, &rc, err, sizeof err), -1);
    assert_non_null(strstr(err, "metadata.managedFields[0].fieldsV1"));

    json_object_put(v1);
    json_object_put(v2);
    json_object_put(v3);
    json_object_put(v4);
    json_object_put(schema);
}

/* apply helper: returns the new object or NULL (conflict in *cf) */
static json_object *apply(json_object *live, const char *cfg, const cu_field_oracle *o, int scope,
                          const char *mgr, const char *sub, int force, cu_fm_conflict *cf)
{
    char err[256] = "";
    json_object *a = J(cfg);
    cu_fm_req r = req(mgr, sub, force);
    json_object *n = cu_fields_apply(live, a, o, scope, &r, cf, err, sizeof err);
    if (!n && !cf->n)
        fail_msg("apply failed: %s", err);
    json_object_put(a);
    return n;
}

static const char *sget(json_object *o, const char *a, const char *b, const char *c)
{
    json_object *v = o;
    const char *p[] = { a, b, c };
    for (int i = 0; i < 3 && p[i]; i++)
        if (!json_object_object_get_ex(v, p[i], &v))
            return NULL;
    return json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
}

static void test_apply_conflicts_force_shared(void **state)
{
    (void)state;
    json_object *schema = J(SCHEMA);
    cu_field_oracle o;
    cu_fields_schema_oracle(schema, &o);
    cu_fm_conflict cf;
    json_object *v1 = apply(NULL,
                            "{\"metadata\":{\"name\":\"w\"},\"spec\":{\"queue\":\"q\","
                            "\"replicas\":1}}",
                            &o, CU_SCOPE_NO_STATUS, "m1", NULL, 0, &cf);
    assert_non_null(v1);
    assert_string_equal(entry_field(v1, "m1", "Apply", "fieldsV1"),
                        "{\"f:spec\":{\"f:queue\":{},\"f:replicas\":{}}}");
    /* m2 applies another replicas: conflict, nothing changes */
    json_object *x = apply(v1, "{\"metadata\":{\"name\":\"w\"},\"spec\":{\"replicas\":2}}", &o,
                           CU_SCOPE_NO_STATUS, "m2", NULL, 0, &cf);
    assert_null(x);
    assert_int_equal(cf.n, 1);
    assert_string_equal(cf.message,
                        "Apply failed with 1 conflict: conflict with \"m1\": .spec.replicas");
    assert_string_equal(cf.causes[0].field, ".spec.replicas");
    assert_string_equal(cf.causes[0].message, "conflict with \"m1\"");
    /* the same value is shared ownership */
    json_object *v2 = apply(v1, "{\"metadata\":{\"name\":\"w\"},\"spec\":{\"replicas\":1}}", &o,
                            CU_SCOPE_NO_STATUS, "m2", NULL, 0, &cf);
    assert_non_null(v2);
    assert_string_equal(entry_field(v2, "m1", "Apply", "fieldsV1"),
                        "{\"f:spec\":{\"f:queue\":{},\"f:replicas\":{}}}");
    assert_string_equal(entry_field(v2, "m2", "Apply", "fieldsV1"),
                        "{\"f:spec\":{\"f:replicas\":{}}}");
    /* two conflicts with two managers: grouped and counted */
    json_object *v3 =
        apply(v2, "{\"metadata\":{\"name\":\"w\"},\"spec\":{\"queue\":\"z\",\"replicas\":5}}", &o,
              CU_SCOPE_NO_STATUS, "m3", NULL, 0, &cf);
    assert_null(v3);
    assert_int_equal(cf.n, 3);
    assert_non_null(
        strstr(cf.message, "Apply failed with 3 conflicts: conflicts with \"m1\":\n- "));
    assert_non_null(strstr(cf.message, "conflicts with \"m2\":\n- .spec.replicas"));
    /* force moves ownership to the applier */
    v3 = apply(v2, "{\"metadata\":{\"name\":\"w\"},\"spec\":{\"replicas\":5}}", &o,
               CU_SCOPE_NO_STATUS, "m3", NULL, 1, &cf);
    assert_non_null(v3);
    assert_string_equal(sget(v3, "spec", "replicas", NULL), "5");
    assert_string_equal(entry_field(v3, "m1", "Apply", "fieldsV1"),
                        "{\"f:spec\":{\"f:queue\":{}}}");
    assert_string_equal(entry_field(v3, "m2", "Apply", "fieldsV1"), "{}");
    assert_string_equal(entry_field(v3, "m3", "Apply", "fieldsV1"),
                        "{\"f:spec\":{\"f:replicas\":{}}}");
    /* an Update manager is named with its API version */
    json_object *v4 = NULL;
    json_object_deep_copy(v3, &v4, NULL);
    json_object *spec = NULL;
    json_object_object_get_ex(v4, "spec", &spec);
    json_object_object_add(spec, "queue", json_object_new_string("upd"));
    char err[128];
    cu_fm_req ru = req("kubectl-edit", NULL, 0);
    assert_int_equal(cu_fields_update(v3, v4, &o, CU_SCOPE_NO_STATUS, &ru, err, sizeof err), 0);
    x = apply(v4, "{\"metadata\":{\"name\":\"w\"},\"spec\":{\"queue\":\"mine\"}}", &o,
              CU_SCOPE_NO_STATUS, "m1", NULL, 0, &cf);
    assert_null(x);
    assert_string_equal(cf.message, "Apply failed with 1 conflict: conflict with \"kubectl-edit\" "
                                    "using example.com/v1: .spec.queue");
    json_object_put(v1);
    json_object_put(v2);
    json_object_put(v3);
    json_object_put(v4);
    json_object_put(schema);
}

static void test_apply_removes_dropped_fields(void **state)
{
    (void)state;
    json_object *schema = J(SCHEMA);
    cu_field_oracle o;
    cu_fields_schema_oracle(schema, &o);
    cu_fm_conflict cf;
    json_object *v1 = apply(NULL,
                            "{\"metadata\":{\"name\":\"w\",\"labels\":{\"a\":\"1\",\"b\":\"2\"}},"
                            "\"spec\":{\"queue\":\"q\",\"replicas\":1,\"tags\":[\"t1\",\"t2\"],"
                            "\"podSets\":[{\"name\":\"p1\",\"count\":1},{\"name\":\"p2\","
                            "\"count\":2}]}}",
                            &o, CU_SCOPE_NO_STATUS, "m1", NULL, 0, &cf);
    assert_non_null(v1);
    /* m2 shares label b */
    json_object *v2 = apply(v1, "{\"metadata\":{\"name\":\"w\",\"labels\":{\"b\":\"2\"}}}", &o,
                            CU_SCOPE_NO_STATUS, "m2", NULL, 0, &cf);
    assert_non_null(v2);
    /* m1 drops replicas, label a, label b, tag t2 and podSet p2 */
    json_object *v3 = apply(v2,
                            "{\"metadata\":{\"name\":\"w\"},\"spec\":{\"queue\":\"q\","
                            "\"tags\":[\"t1\"],\"podSets\":[{\"name\":\"p1\",\"count\":1}]}}",
                            &o, CU_SCOPE_NO_STATUS, "m1", NULL, 0, &cf);
    assert_non_null(v3);
    assert_null(sget(v3, "spec", "replicas", NULL));
    assert_string_equal(sget(v3, "metadata", "labels", NULL), "{\"b\":\"2\"}");
    assert_string_equal(sget(v3, "spec", "tags", NULL), "[\"t1\"]");
    assert_string_equal(sget(v3, "spec", "podSets", NULL), "[{\"name\":\"p1\",\"count\":1}]");
    /* a field nobody applied (set by an Update) is never removed by apply */
    json_object_put(v1);
    json_object_put(v2);
    json_object_put(v3);
    json_object_put(schema);
}

static void test_status_apply_clears_admission(void **state)
{
    (void)state;
    json_object *schema = J(SCHEMA);
    cu_field_oracle o;
    cu_fields_schema_oracle(schema, &o);
    cu_fm_conflict cf;
    json_object *live = J("{\"metadata\":{\"name\":\"w\"},\"spec\":{\"queue\":\"q\"}}");
    const char *s1 =
        "{\"metadata\":{\"name\":\"w\"},\"spec\":{\"queue\":\"IGNORED\"},\"status\":{"
        "\"admission\":{\"clusterQueue\":\"cq\",\"podSetAssignments\":[{\"name\":\"main\"}]},"
        "\"conditions\":[{\"type\":\"QuotaReserved\",\"status\":\"True\"}]}}";
    json_object *v1 = apply(live, s1, &o, CU_SCOPE_STATUS, "kueue-admission", "status", 0, &cf);
    assert_non_null(v1);
    assert_string_equal(sget(v1, "spec", "queue", NULL), "\"q\"");
    assert_string_equal(entry_field(v1, "kueue-admission", "Apply", "subresource"), "\"status\"");
    assert_string_equal(sget(v1, "status", "admission", "clusterQueue"), "\"cq\"");
    /* another manager adds a condition of its own */
    json_object *v2 =
        apply(v1, "{\"status\":{\"conditions\":[{\"type\":\"Finished\",\"status\":\"False\"}]}}",
              &o, CU_SCOPE_STATUS, "other", "status", 0, &cf);
    assert_non_null(v2);
    /* the admission controller applies without admission: it is gone, the
     * condition of the other manager stays, its own is updated in place */
    json_object *v3 = apply(v2,
                            "{\"status\":{\"conditions\":[{\"type\":\"QuotaReserved\","
                            "\"status\":\"False\"}]}}",
                            &o, CU_SCOPE_STATUS, "kueue-admission", "status", 0, &cf);
    assert_non_null(v3);
    assert_null(sget(v3, "status", "admission", NULL));
    assert_string_equal(sget(v3, "status", "conditions", NULL),
                        "[{\"type\":\"QuotaReserved\",\"status\":\"False\"},"
                        "{\"type\":\"Finished\",\"status\":\"False\"}]");
    /* the other manager now changing QuotaReserved's status conflicts */
    json_object *x = apply(v3,
                           "{\"status\":{\"conditions\":[{\"type\":\"QuotaReserved\","
                           "\"status\":\"True\"}]}}",
                           &o, CU_SCOPE_STATUS, "other", "status", 0, &cf);
    assert_null(x);
    assert_string_equal(
        cf.message,
        "Apply failed with 1 conflict: conflict with \"kueue-admission\" "
        "with subresource \"status\": .status.conditions[type=\"QuotaReserved\"].status");
    json_object_put(live);
    json_object_put(v1);
    json_object_put(v2);
    json_object_put(v3);
    json_object_put(schema);
}

static void test_apply_noop_keeps_entries(void **state)
{
    (void)state;
    cu_field_oracle o;
    cu_patch_field_oracle("v1", "ConfigMap", &o);
    cu_fm_conflict cf;
    json_object *v1 = apply(NULL, "{\"metadata\":{\"name\":\"c\"},\"data\":{\"a\":\"1\"}}", &o,
                            CU_SCOPE_ALL, "m", NULL, 0, &cf);
    char err[64];
    json_object *a = J("{\"metadata\":{\"name\":\"c\"},\"data\":{\"a\":\"1\"}}");
    cu_fm_req r = req("m", NULL, 0);
    r.now = "2030-01-01T00:00:00Z";
    json_object *v2 = cu_fields_apply(v1, a, &o, CU_SCOPE_ALL, &r, &cf, err, sizeof err);
    assert_true(json_object_equal(v1, v2));
    /* the applied configuration must not carry managedFields */
    json_object *b = J("{\"metadata\":{\"name\":\"c\",\"managedFields\":[]}}");
    assert_null(cu_fields_apply(v1, b, &o, CU_SCOPE_ALL, &r, &cf, err, sizeof err));
    assert_string_equal(err, "metadata.managedFields must be nil");
    json_object_put(a);
    json_object_put(b);
    json_object_put(v1);
    json_object_put(v2);
}

/* Found by fuzz_fields: (1) a map list inside an object the live object
 * does not have yet was not checked for its keys (the first apply stored
 * it, the next one failed); (2) a field with an empty name ("f:") was
 * written into managedFields but refused when read back, so the next
 * apply dropped the other managers' entries. */
static void test_apply_fuzz_findings(void **state)
{
    (void)state;
    json_object *schema = J(SCHEMA);
    cu_field_oracle o;
    cu_fields_schema_oracle(schema, &o);
    cu_fm_conflict cf;
    char err[256] = "";
    cu_fm_req r = req("m", "status", 0);
    json_object *live = J("{\"metadata\":{\"name\":\"w\"}}");
    json_object *bad = J("{\"status\":{\"conditions\":[{\"status\":\"True\"}]}}");
    assert_null(cu_fields_apply(live, bad, &o, CU_SCOPE_STATUS, &r, &cf, err, sizeof err));
    assert_int_equal(cf.n, 0);
    assert_non_null(strstr(err, "status.conditions: associative list with keys has an element "
                                "that omits a key field"));
    json_object_put(bad);
    json_object_put(live);
    json_object_put(schema);

    cu_field_oracle cm;
    cu_patch_field_oracle("v1", "ConfigMap", &cm);
    json_object *v0 =
        J("{\"metadata\":{\"name\":\"c\",\"managedFields\":[{\"manager\":\"other\","
          "\"operation\":\"Update\",\"apiVersion\":\"v1\",\"fieldsType\":\"FieldsV1\","
          "\"fieldsV1\":{\"f:data\":{\"f:x\":{}}}}]},\"data\":{\"x\":\"1\"}}");
    json_object *v1 = apply(v0, "{\"data\":{\"\":\"e\"}}", &cm, CU_SCOPE_ALL, "m", NULL, 0, &cf);
    assert_non_null(v1);
    assert_string_equal(entry_field(v1, "m", "Apply", "fieldsV1"), "{\"f:data\":{\"f:\":{}}}");
    json_object *v2 = apply(v1, "{\"data\":{\"\":\"e\"}}", &cm, CU_SCOPE_ALL, "m", NULL, 0, &cf);
    assert_non_null(v2);
    assert_true(json_object_equal(v1, v2));
    assert_string_equal(entry_field(v2, "other", "Update", "fieldsV1"),
                        "{\"f:data\":{\"f:x\":{}}}");
    json_object_put(v0);
    json_object_put(v1);
    json_object_put(v2);
}

static void test_default_manager(void **state)
{
    (void)state;
    static const struct {
        const char *ua, *want;
    } t[] = {
        { "curl/8.5.0", "curl" },
        { "kubectl/v1.30.0 (linux/amd64) kubernetes/abc", "kubectl" },
        { "plain", "plain" },
        { NULL, "unknown" },
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        char out[200];
        cu_fields_default_manager(t[i].ua, out, sizeof out);
        assert_string_equal(out, t[i].want);
    }
}

/* big lists: a 20,000-item map list diffed and applied stays linear */
static void test_big_list_linear(void **state)
{
    (void)state;
    json_object *schema = J(SCHEMA);
    cu_field_oracle o;
    cu_fields_schema_oracle(schema, &o);
    json_object *obj = J("{\"metadata\":{\"name\":\"w\"},\"spec\":{}}"), *spec = NULL;
    json_object_object_get_ex(obj, "spec", &spec);
    json_object *ps = json_object_new_array();
    for (int i = 0; i < 20000; i++) {
        char b[64];
        snprintf(b, sizeof b, "{\"name\":\"p%d\",\"count\":%d}", i, i);
        json_object_array_add(ps, J(b));
    }
    json_object_object_add(spec, "podSets", ps);
    json_object *nw = NULL;
    json_object_deep_copy(obj, &nw, NULL);
    json_object_object_get_ex(nw, "spec", &spec);
    json_object_object_get_ex(spec, "podSets", &ps);
    json_object_object_add(json_object_array_get_idx(ps, 19999), "count", json_object_new_int(-1));
    json_object *ch = NULL, *rm = NULL;
    cu_fields_diff(obj, nw, &o, CU_SCOPE_ALL, &ch, &rm);
    assert_int_equal(cu_fset_count(ch), 1);
    assert_int_equal(cu_fset_count(rm), 0);
    json_object_put(ch);
    json_object_put(rm);
    json_object_put(obj);
    json_object_put(nw);
    json_object_put(schema);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_field_sets),
        cmocka_unit_test(test_sort_order),
        cmocka_unit_test(test_set_ops),
        cmocka_unit_test(test_update_transfers_ownership),
        cmocka_unit_test(test_apply_conflicts_force_shared),
        cmocka_unit_test(test_apply_removes_dropped_fields),
        cmocka_unit_test(test_status_apply_clears_admission),
        cmocka_unit_test(test_apply_noop_keeps_entries),
        cmocka_unit_test(test_apply_fuzz_findings),
        cmocka_unit_test(test_default_manager),
        cmocka_unit_test(test_big_list_linear),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
