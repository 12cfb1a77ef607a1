/*
 * test_whreview.c - the webhook server's wire side (cu_whreview.h): an
 * AdmissionReview decoded into the cu_wh_req a hook sees (kind, operation,
 * namespace, name, object, oldObject, dryRun) with the env passed through;
 * the answer's uid, allowed, status {code, reason, message} and warnings;
 * a mutating hook's edit answered as a base64 JSON Patch (patchType
 * JSONPatch) and none when it changed nothing or denied; 400 reviews
 * naming the problem of a malformed body; a ConversionReview converted
 * (the conversion's failure as result Failure, all or nothing); routing by
 * path and the Content-Type check.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_base64.h"
#include "cu_json.h"
#include "cu_webhook.h"
#include "cu_whreview.h"

/* what the last hook call saw */
static struct {
    int called;
    char group[64], version[64], kind[64], ns[64], name[64];
    cu_wh_op op;
    int dry_run, has_object, has_old;
    const cu_wh_env *env;
} seen;

static void record(const cu_wh_env *env, cu_wh_req *req)
{
    seen.called++;
    snprintf(seen.group, sizeof seen.group, "%s", req->group);
    snprintf(seen.version, sizeof seen.version, "%s", req->version);
    snprintf(seen.kind, sizeof seen.kind, "%s", req->kind);
    snprintf(seen.ns, sizeof seen.ns, "%s", req->ns ? req->ns : "(null)");
    snprintf(seen.name, sizeof seen.name, "%s", req->name ? req->name : "(null)");
    seen.op = req->op;
    seen.dry_run = req->dry_run;
    seen.has_object = req->object != NULL;
    seen.has_old = req->old_object != NULL;
    seen.env = env;
}

/* suspends the Job and labels it, as the Job defaulter would */
static void suspend(const cu_wh_env *env, cu_wh_req *req, cu_wh_resp *resp)
{
    (void)resp;
    record(env, req);
    if (!req->object)
        return;
    json_object *spec = cu_jchild(req->object, "spec");
    json_object_object_add(spec, "suspend", json_object_new_boolean(1));
    cu_jset_str(cu_jchild(cu_jchild(req->object, "metadata"), "labels"), "a/b", "x");
}

static void noop(const cu_wh_env *env, cu_wh_req *req, cu_wh_resp *resp)
{
    (void)resp;
    record(env, req);
}

static void deny(const cu_wh_env *env, cu_wh_req *req, cu_wh_resp *resp)
{
    record(env, req);
    if (req->object) /* an edit of a denied object is not answered */
        cu_jset_str(req->object, "x", "y");
    cu_wh_deny(resp, "spec.queueName: Invalid value: \"%s\": is immutable", "q");
    cu_diag_warn(&resp->warnings, "first");
    cu_diag_error(&resp->warnings, "second");
}

static void deny_invalid(const cu_wh_env *env, cu_wh_req *req, cu_wh_resp *resp)
{
    record(env, req);
    cu_wh_deny(resp, "bad");
    resp->code = 422;
    resp->reason = "Invalid";
}

static const cu_wh_hook h_mut = { "m.test", "/m", 1, "batch", "v1", "jobs", 1u, suspend };
static const cu_wh_hook h_noop = { "n.test", "/n", 1, "batch", "v1", "jobs", 1u, noop };
static const cu_wh_hook h_val = { "v.test", "/v", 0, "batch", "v1", "jobs", 1u, suspend };
static const cu_wh_hook h_deny = { "d.test", "/d", 1, "batch", "v1", "jobs", 1u, deny };
static const cu_wh_hook h_inv = { "i.test", "/i", 0, "batch", "v1", "jobs", 1u, deny_invalid };

static const char JOB[] = "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":"
                          "\"j\",\"namespace\":\"ns\"},\"spec\":{\"parallelism\":1}}";

static char *review(const char *op, const char *extra)
{
    static char buf[4096];
    snprintf(buf, sizeof buf,
             "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
             "\"uid\":\"u-1\",\"kind\":{\"group\":\"batch\",\"version\":\"v1\",\"kind\":\"Job\"},"
             "\"operation\":\"%s\",\"namespace\":\"ns\",\"name\":\"j\"%s}}",
             op, extra);
    return buf;
}

/* Runs hook h over body; returns the parsed answer (caller puts) and the
 * HTTP code in *code. */
static json_object *run(const cu_wh_env *env, const cu_wh_hook *h, const char *body, int *code)
{
    cu_buf out;
    cu_buf_init(&out, 0);
    memset(&seen, 0, sizeof seen);
    *code = cu_whrev_admission(env, h, body, strlen(body), &out);
    json_object *o = cu_json_parse_str(cu_buf_str(&out));
    if (!o)
        fail_msg("not JSON: %s", cu_buf_str(&out));
    cu_buf_free(&out);
    assert_string_equal(cu_jstr(o, "apiVersion"), "admission.k8s.io/v1");
    assert_string_equal(cu_jstr(o, "kind"), "AdmissionReview");
    return o;
}

static char *patch_of(json_object *resp)
{
    const char *p = cu_jstr(resp, "patch");
    if (!p)
        return NULL;
    size_t n = 0;
    return cu_base64_decode(p, &n);
}

static void test_mutating_patch(void **st)
{
    (void)st;
    cu_wh_env env = { 0 };
    char extra[1024];
    snprintf(extra, sizeof extra, ",\"object\":%s,\"dryRun\":true", JOB);
    int code;
    json_object *o = run(&env, &h_mut, review("CREATE", extra), &code);
    assert_int_equal(code, 200);
    json_object *r = cu_jget(o, "response");
    assert_string_equal(cu_jstr(r, "uid"), "u-1");
    assert_true(cu_jas_true(cu_jget(r, "allowed")));
    assert_int_equal(cu_jint(cu_jget(r, "status"), "code"), 200);
    assert_string_equal(cu_jstr(r, "patchType"), "JSONPatch");
    char *p = patch_of(r);
    assert_non_null(p);
    /* in the order of the object received: metadata, then spec */
    assert_string_equal(p, "[{\"op\":\"add\",\"path\":\"/metadata/labels\",\"value\":{\"a/b\":"
                           "\"x\"}},{\"op\":\"add\",\"path\":\"/spec/suspend\",\"value\":true}]");
    free(p);
    /* the request as the hook saw it */
    assert_int_equal(seen.called, 1);
    assert_string_equal(seen.group, "batch");
    assert_string_equal(seen.version, "v1");
    assert_string_equal(seen.kind, "Job");
    assert_string_equal(seen.ns, "ns");
    assert_string_equal(seen.name, "j");
    assert_int_equal(seen.op, CU_WH_CREATE);
    assert_int_equal(seen.dry_run, 1);
    assert_int_equal(seen.has_object, 1);
    assert_int_equal(seen.has_old, 0);
    assert_ptr_equal(seen.env, &env);
    json_object_put(o);

    /* a mutating hook that changes nothing: no patch; a validating one's
     * edits are not answered */
    o = run(&env, &h_noop, review("CREATE", extra), &code);
    assert_null(cu_jstr(cu_jget(o, "response"), "patch"));
    assert_null(cu_jstr(cu_jget(o, "response"), "patchType"));
    json_object_put(o);
    o = run(&env, &h_val, review("CREATE", extra), &code);
    assert_int_equal(code, 200);
    assert_null(cu_jstr(cu_jget(o, "response"), "patch"));
    json_object_put(o);

    /* UPDATE with oldObject; DELETE without object */
    snprintf(extra, sizeof extra, ",\"object\":%s,\"oldObject\":%s", JOB, JOB);
    o = run(&env, &h_noop, review("UPDATE", extra), &code);
    assert_int_equal(seen.op, CU_WH_UPDATE);
    assert_int_equal(seen.has_old, 1);
    assert_int_equal(seen.dry_run, 0);
    json_object_put(o);
    snprintf(extra, sizeof extra, ",\"oldObject\":%s", JOB);
    o = run(&env, &h_mut, review("DELETE", extra), &code);
    assert_int_equal(code, 200);
    assert_int_equal(seen.op, CU_WH_DELETE);
    assert_int_equal(seen.has_object, 0);
    assert_null(cu_jstr(cu_jget(o, "response"), "patch"));
    json_object_put(o);
}

static void test_denials(void **st)
{
    (void)st;
    char extra[1024];
    snprintf(extra, sizeof extra, ",\"object\":%s", JOB);
    int code;
    json_object *o = run(NULL, &h_deny, review("CREATE", extra), &code);
    assert_int_equal(code, 200);
    json_object *r = cu_jget(o, "response");
    assert_false(cu_jas_true(cu_jget(r, "allowed")));
    json_object *s = cu_jget(r, "status");
    assert_int_equal(cu_jint(s, "code"), 403);
    assert_string_equal(cu_jstr(s, "reason"), "Forbidden");
    assert_string_equal(cu_jstr(s, "message"),
                        "spec.queueName: Invalid value: \"q\": is immutable");
    assert_null(cu_jstr(r, "patch")); /* a denial patches nothing */
    json_object *w = cu_jget(r, "warnings");
    assert_int_equal(cu_jarr_len(w), 2);
    assert_string_equal(json_object_get_string(json_object_array_get_idx(w, 0)), "first");
    assert_string_equal(json_object_get_string(json_object_array_get_idx(w, 1)), "second");
    json_object_put(o);

    o = run(NULL, &h_inv, review("CREATE", extra), &code);
    s = cu_jget(cu_jget(o, "response"), "status");
    assert_int_equal(cu_jint(s, "code"), 422);
    assert_string_equal(cu_jstr(s, "reason"), "Invalid");
    assert_null(cu_jget(cu_jget(o, "response"), "warnings"));
    json_object_put(o);
}

static void bad_review(const char *body, const char *uid, const char *want)
{
    int code;
    json_object *o = run(NULL, &h_mut, body, &code);
    assert_int_equal(code, 400);
    assert_int_equal(seen.called, 0);
    json_object *r = cu_jget(o, "response");
    assert_string_equal(cu_jstr(r, "uid"), uid);
    assert_false(cu_jas_true(cu_jget(r, "allowed")));
    assert_int_equal(cu_jint(cu_jget(r, "status"), "code"), 400);
    const char *m = cu_jstr(cu_jget(r, "status"), "message");
    if (!m || !strstr(m, want))
        fail_msg("message %s, want %s", m ? m : "(none)", want);
    json_object_put(o);
}

static void test_malformed(void **st)
{
    (void)st;
    bad_review("", "", "not JSON (empty)");
    bad_review("{\"apiVersion\":", "", "not JSON");
    bad_review("[]", "", "not a JSON object");
    bad_review("{\"apiVersion\":\"admission.k8s.io/v1beta1\",\"kind\":\"AdmissionReview\"}", "",
               "apiVersion: expected \"admission.k8s.io/v1\", got \"admission.k8s.io/v1beta1\"");
    bad_review("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"X\"}", "",
               "kind: expected \"AdmissionReview\", got \"X\"");
    bad_review("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\"}", "",
               "request: missing");
    bad_review("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
               "\"request\":{\"uid\":7}}",
               "", "request.uid");
    bad_review(review("PATCH", ""), "u-1", "request.operation: expected CREATE");
    bad_review(review("CREATE", ""), "u-1", "request.object: missing for a CREATE");
    bad_review(review("CREATE", ",\"object\":[1]"), "u-1", "must be objects");
    bad_review(review("CREATE", ",\"object\":{},\"dryRun\":\"yes\""), "u-1", "dryRun a boolean");
    bad_review("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
               "\"request\":{\"uid\":\"u\",\"operation\":\"CREATE\",\"object\":{}}}",
               "u", "request.kind");
}

static json_object *convert(const char *body, int *code)
{
    cu_buf out;
    cu_buf_init(&out, 0);
    *code = cu_whrev_conversion(body, strlen(body), &out);
    json_object *o = cu_json_parse_str(cu_buf_str(&out));
    if (!o)
        fail_msg("not JSON: %s", cu_buf_str(&out));
    cu_buf_free(&out);
    assert_string_equal(cu_jstr(o, "apiVersion"), "apiextensions.k8s.io/v1");
    assert_string_equal(cu_jstr(o, "kind"), "ConversionReview");
    return o;
}

static void test_conversion(void **st)
{
    (void)st;
    int code;
    json_object *o = convert(
        "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"ConversionReview\",\"request\":{"
        "\"uid\":\"c-1\",\"desiredAPIVersion\":\"kueue.x-k8s.io/v1beta1\",\"objects\":["
        "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"LocalQueue\",\"metadata\":{"
        "\"name\":\"a\"}},{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Cohort\","
        "\"metadata\":{\"name\":\"b\"}}]}}",
        &code);
    assert_int_equal(code, 200);
    json_object *r = cu_jget(o, "response");
    assert_string_equal(cu_jstr(r, "uid"), "c-1");
    assert_string_equal(cu_jstr(cu_jget(r, "result"), "status"), "Success");
    json_object *objs = cu_jget(r, "convertedObjects");
    assert_int_equal(cu_jarr_len(objs), 2);
    for (size_t i = 0; i < 2; i++)
        assert_string_equal(cu_jstr(json_object_array_get_idx(objs, i), "apiVersion"),
                            "kueue.x-k8s.io/v1beta1");
    assert_string_equal(cu_jpath_str(json_object_array_get_idx(objs, 1), "metadata.name"), "b");
    json_object_put(o);

    /* no objects: an empty list */
    o = convert("{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"ConversionReview\","
                "\"request\":{\"uid\":\"c-2\",\"desiredAPIVersion\":\"kueue.x-k8s.io/v1beta2\"}}",
                &code);
    assert_int_equal(code, 200);
    assert_int_equal(cu_jarr_len(cu_jget(cu_jget(o, "response"), "convertedObjects")), 0);
    json_object_put(o);

    /* a version nobody converts to: Failure, nothing converted */
    o = convert("{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"ConversionReview\","
                "\"request\":{\"uid\":\"c-3\",\"desiredAPIVersion\":\"kueue.x-k8s.io/v9\","
                "\"objects\":[{\"kind\":\"LocalQueue\",\"metadata\":{\"name\":\"a\"}}]}}",
                &code);
    assert_int_equal(code, 200);
    r = cu_jget(o, "response");
    assert_string_equal(cu_jstr(r, "uid"), "c-3");
    assert_string_equal(cu_jstr(cu_jget(r, "result"), "status"), "Failure");
    assert_non_null(strstr(cu_jstr(cu_jget(r, "result"), "message"), "LocalQueue a: "));
    assert_int_equal(cu_jarr_len(cu_jget(r, "convertedObjects")), 0);
    json_object_put(o);

    /* malformed: 400 with the reason */
    static const struct {
        const char *body, *want;
    } bad[] = {
        { "nope", "not JSON" },
        { "{\"apiVersion\":\"apiextensions.k8s.io/v1beta1\",\"kind\":\"ConversionReview\"}",
          "apiVersion: expected" },
        { "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"ConversionReview\","
          "\"request\":{\"uid\":\"u\"}}",
          "desiredAPIVersion: missing" },
        { "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"ConversionReview\","
          "\"request\":{\"uid\":\"u\",\"desiredAPIVersion\":\"kueue.x-k8s.io/v1beta1\","
          "\"objects\":{}}}",
          "request.objects: not an array" },
        { "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"ConversionReview\","
          "\"request\":{\"uid\":\"u\",\"desiredAPIVersion\":\"kueue.x-k8s.io/v1beta1\","
          "\"objects\":[3]}}",
          "request.objects[0]: not an object" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        o = convert(bad[i].body, &code);
        r = cu_jget(o, "response");
        assert_string_equal(cu_jstr(cu_jget(r, "result"), "status"), "Failure");
        const char *m = cu_jstr(cu_jget(r, "result"), "message");
        if (!m || !strstr(m, bad[i].want))
            fail_msg("case %zu: message %s, want %s", i, m ? m : "(none)", bad[i].want);
        assert_int_equal(code, i < 4 ? 400 : 200);
        json_object_put(o);
    }
}

static void test_routing(void **st)
{
    (void)st;
    cu_buf out;
    const char *ct = NULL;
    size_t n;
    const cu_wh_hook *hooks = cu_wh_hooks(&n);
    assert_true(n > 0);
    char extra[1024];
    snprintf(extra, sizeof extra, ",\"object\":%s", JOB);
    const char *body = review("CREATE", extra);
    /* every hook of the table is served at its path */
    for (size_t i = 0; i < n; i++) {
        cu_buf_init(&out, 0);
        int code = cu_whrev_serve(NULL, hooks[i].path, "application/json; charset=utf-8", body,
                                  strlen(body), &out, &ct);
        assert_int_equal(code, 200);
        assert_string_equal(ct, "application/json");
        assert_non_null(strstr(cu_buf_str(&out), "\"uid\":\"u-1\""));
        cu_buf_free(&out);
    }
    /* an unknown path */
    cu_buf_init(&out, 0);
    assert_int_equal(
        cu_whrev_serve(NULL, "/mutate-nothing", "application/json", body, strlen(body), &out, &ct),
        404);
    assert_non_null(strstr(cu_buf_str(&out), "no webhook at /mutate-nothing"));
    cu_buf_free(&out);
    /* not JSON: 400, as a review of the path's kind */
    cu_buf_init(&out, 0);
    assert_int_equal(
        cu_whrev_serve(NULL, hooks[0].path, "text/plain", body, strlen(body), &out, &ct), 400);
    assert_non_null(strstr(cu_buf_str(&out), "Content-Type: expected application/json"));
    assert_non_null(strstr(cu_buf_str(&out), "AdmissionReview"));
    cu_buf_free(&out);
    cu_buf_init(&out, 0);
    assert_int_equal(
        cu_whrev_serve(NULL, CU_WH_CONVERT_PATH, "application/jsonx", "{}", 2, &out, &ct), 400);
    assert_non_null(strstr(cu_buf_str(&out), "ConversionReview"));
    cu_buf_free(&out);
    cu_buf_init(&out, 0);
    assert_int_equal(
        cu_whrev_serve(NULL, CU_WH_CONVERT_PATH, "application/json", "{}", 2, &out, &ct), 400);
    cu_buf_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mutating_patch), cmocka_unit_test(test_denials),
        cmocka_unit_test(test_malformed),      cmocka_unit_test(test_conversion),
        cmocka_unit_test(test_routing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
