/*
 * test_authn.c - the cluster's TokenReview and SubjectAccessReview
 * (cu_authn.h): users and groups from a token file in kube-apiserver's
 * format (quoted groups, a token alone, comments), the reviews' answers,
 * the fixed authorization rules, and bad requests (wrong method, bodies
 * that are not a review, missing token, SubjectAccessReviews kube-apiserver
 * refuses).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cu_authn.h"

#define TR "/apis/authentication.k8s.io/v1/tokenreviews"
#define SAR "/apis/authorization.k8s.io/v1/subjectaccessreviews"

static char tokfile[64];

static int setup(void **state)
{
    snprintf(tokfile, sizeof(tokfile), "/tmp/cueue-test-authn-XXXXXX");
    int fd = mkstemp(tokfile);
    assert_true(fd >= 0);
    static const char text[] = "# tokens\n"
                               "\n"
                               "  admintok  \n"
                               "promtok,prometheus,uid-p,\"system:monitoring,team-a\"\n"
                               "nobodytok,nobody,uid-n\n"
                               "grouptok, grouped , uid-g , solo\n"
                               "secondadmin\n";
    assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)(sizeof(text) - 1));
    close(fd);
    char err[300] = "";
    cu_authn *a = cu_authn_load(tokfile, err, sizeof(err));
    if (!a)
        fail_msg("load: %s", err);
    *state = a;
    return 0;
}

static int teardown(void **state)
{
    cu_authn_free(*state);
    unlink(tokfile);
    return 0;
}

/* POSTs body to path; returns the status and the answer's JSON text. */
static int post(cu_authn *a, const char *path, const char *body, char *out, size_t n)
{
    json_object *o = NULL;
    int code = cu_authn_handle(a, "POST", path, body, strlen(body), &o);
    snprintf(out, n, "%s",
             o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
                                                       JSON_C_TO_STRING_NOSLASHESCAPE)
               : "");
    json_object_put(o);
    return code;
}

static void tokenreview(cu_authn *a, const char *tok, char *out, size_t n)
{
    char body[256];
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":\"TokenReview\","
             "\"spec\":{\"token\":\"%s\"}}",
             tok);
    assert_int_equal(post(a, TR, body, out, n), 201);
}

static void test_token_reviews(void **state)
{
    cu_authn *a = *state;
    char out[1024];
    tokenreview(a, "promtok", out, sizeof(out));
    assert_non_null(strstr(out, "\"status\":{\"authenticated\":true,\"user\":{\"username\":"
                                "\"prometheus\",\"uid\":\"uid-p\",\"groups\":["
                                "\"system:monitoring\",\"team-a\",\"system:authenticated\"]}}"));
    assert_non_null(strstr(out, "\"kind\":\"TokenReview\""));
    assert_non_null(strstr(out, "\"spec\":{\"token\":\"promtok\"}"));
    tokenreview(a, "admintok", out, sizeof(out));
    assert_non_null(strstr(out, "\"username\":\"cueue-token-1\",\"groups\":[\"system:masters\","
                                "\"system:authenticated\"]"));
    tokenreview(a, "secondadmin", out, sizeof(out));
    assert_non_null(strstr(out, "\"username\":\"cueue-token-5\""));
    tokenreview(a, "grouptok", out, sizeof(out));
    assert_non_null(
        strstr(out, "\"username\":\"grouped\",\"uid\":\"uid-g\",\"groups\":[\"solo\","));
    tokenreview(a, "nobodytok", out, sizeof(out));
    assert_non_null(strstr(out, "\"groups\":[\"system:authenticated\"]"));
    /* unknown, and a prefix of a known one */
    tokenreview(a, "promto", out, sizeof(out));
    assert_non_null(strstr(out, "\"status\":{\"authenticated\":false,\"user\":{}}"));
}

static int allowed(cu_authn *a, const char *spec)
{
    char body[512], out[1024];
    snprintf(body, sizeof(body), "{\"kind\":\"SubjectAccessReview\",\"spec\":%s}", spec);
    assert_int_equal(post(a, SAR, body, out, sizeof(out)), 201);
    assert_non_null(strstr(out, "\"apiVersion\":\"authorization.k8s.io/v1\""));
    if (strstr(out, "\"allowed\":true"))
        return 1;
    assert_non_null(strstr(out, "\"allowed\":false"));
    return 0;
}

static void test_access_reviews(void **state)
{
    cu_authn *a = *state;
    const char *nra = "\"nonResourceAttributes\":{\"path\":\"%s\",\"verb\":\"%s\"}";
    static const struct {
        const char *who, *path, *verb;
        int want;
    } cases[] = {
        { "\"user\":\"prometheus\",\"groups\":[\"system:monitoring\"]", "/metrics", "get", 1 },
        { "\"user\":\"prometheus\",\"groups\":[\"system:monitoring\"]", "/metrics/slis", "get", 1 },
        { "\"user\":\"prometheus\",\"groups\":[\"system:monitoring\"]", "/metricsx", "get", 0 },
        { "\"user\":\"prometheus\",\"groups\":[\"system:monitoring\"]", "/debug/pending", "get",
          0 },
        { "\"user\":\"prometheus\",\"groups\":[\"system:monitoring\"]", "/metrics", "post", 0 },
        { "\"user\":\"nobody\",\"groups\":[\"system:authenticated\"]", "/metrics", "get", 0 },
        { "\"user\":\"nobody\"", "/healthz", "get", 1 },
        { "\"user\":\"nobody\"", "/readyz/ping", "get", 1 },
        { "\"user\":\"nobody\"", "/version", "get", 1 },
        { "\"user\":\"x\",\"groups\":[\"system:masters\"]", "/debug/pending", "get", 1 },
        { "\"user\":\"x\",\"groups\":[\"system:masters\"]", "/anything", "delete", 1 },
        /* the group decides, not the name */
        { "\"user\":\"prometheus\"", "/metrics", "get", 0 },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char spec[400], attrs[200];
        snprintf(attrs, sizeof(attrs), nra, cases[i].path, cases[i].verb);
        snprintf(spec, sizeof(spec), "{%s,%s}", cases[i].who, attrs);
        if (allowed(a, spec) != cases[i].want)
            fail_msg("%s: want allowed=%d", spec, cases[i].want);
    }
    /* resources: every user of the token file, nobody else */
    const char *ra = "\"resourceAttributes\":{\"verb\":\"list\",\"resource\":\"pods\"}";
    char spec[300];
    snprintf(spec, sizeof(spec), "{\"user\":\"nobody\",%s}", ra);
    assert_int_equal(allowed(a, spec), 1);
    snprintf(spec, sizeof(spec), "{\"user\":\"stranger\",%s}", ra);
    assert_int_equal(allowed(a, spec), 0);
}

static void test_bad_requests(void **state)
{
    cu_authn *a = *state;
    char out[1024];
    json_object *o = NULL;
    assert_int_equal(cu_authn_handle(a, "POST", "/api/v1/pods", "{}", 2, &o), 0);
    assert_null(o);
    assert_int_equal(cu_authn_handle(a, "GET", TR, "", 0, &o), 405);
    assert_non_null(strstr(json_object_to_json_string(o), "MethodNotAllowed"));
    json_object_put(o);
    static const char *const bad[] = { "",
                                       "[1]",
                                       "{\"spec\":5}",
                                       "{\"spec\":{}",
                                       "nonsense",
                                       "{\"spec\":{\"token\":\"promtok\"}} x" };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int code = post(a, i % 2 ? TR : SAR, bad[i], out, sizeof(out));
        if (code != 400 || !strstr(out, "\"reason\":\"BadRequest\""))
            fail_msg("'%s': %d %s", bad[i], code, out);
    }
    assert_int_equal(post(a, TR, "{\"spec\":{\"token\":\"\"}}", out, sizeof(out)), 400);
    assert_non_null(strstr(out, "token is required for TokenReview in authentication"));
    assert_int_equal(post(a, SAR,
                          "{\"spec\":{\"nonResourceAttributes\":{\"path\":\"/m\","
                          "\"verb\":\"get\"}}}",
                          out, sizeof(out)),
                     422);
    assert_non_null(strstr(out, "at least one of user or group must be specified"));
    assert_int_equal(post(a, SAR, "{\"spec\":{\"user\":\"u\"}}", out, sizeof(out)), 422);
    assert_non_null(strstr(out, "exactly one of nonResourceAttributes or resourceAttributes"));
    assert_int_equal(post(a, SAR,
                          "{\"spec\":{\"user\":\"u\",\"resourceAttributes\":{},"
                          "\"nonResourceAttributes\":{}}}",
                          out, sizeof(out)),
                     422);
}

static void test_discovery(void **state)
{
    cu_authn *a = *state;
    json_object *o = NULL;
    assert_int_equal(cu_authn_handle(a, "GET", "/apis/authentication.k8s.io/v1", NULL, 0, &o), 200);
    assert_string_equal(
        json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
        "{\"kind\":\"APIResourceList\",\"apiVersion\":\"v1\",\"groupVersion\":"
        "\"authentication.k8s.io/v1\",\"resources\":[{\"name\":\"tokenreviews\","
        "\"singularName\":\"tokenreview\",\"namespaced\":false,\"kind\":"
        "\"TokenReview\",\"verbs\":[\"create\"]}]}");
    json_object_put(o);
    assert_int_equal(cu_authn_handle(a, "GET", "/apis/authorization.k8s.io", NULL, 0, &o), 200);
    assert_non_null(strstr(
        json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
        "\"kind\":\"APIGroup\""));
    assert_non_null(strstr(
        json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
        "\"preferredVersion\":{\"groupVersion\":\"authorization.k8s.io/v1\""));
    json_object_put(o);
    o = NULL;
    assert_int_equal(cu_authn_handle(a, "GET", "/apis/authorization.k8s.io/v2", NULL, 0, &o), 0);
    assert_int_equal(cu_authn_handle(a, "GET", "/apis/authentication.k8s.io/v1x", NULL, 0, &o), 0);
    assert_null(o);
    json_object *l =
        json_tokener_parse("{\"kind\":\"APIGroupList\",\"groups\":[{\"name\":\"x\"}]}");
    cu_authn_add_groups(l);
    json_object *g;
    assert_true(json_object_object_get_ex(l, "groups", &g));
    assert_int_equal(json_object_array_length(g), 3);
    json_object_put(l);
}

static void test_missing_file(void **state)
{
    (void)state;
    char err[300] = "";
    assert_null(cu_authn_load("/nonexistent/tokens.csv", err, sizeof(err)));
    assert_string_equal(err, "--token-file /nonexistent/tokens.csv: No such file or directory");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_token_reviews, setup, teardown),
        cmocka_unit_test_setup_teardown(test_access_reviews, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_requests, setup, teardown),
        cmocka_unit_test_setup_teardown(test_discovery, setup, teardown),
        cmocka_unit_test(test_missing_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
