/*
 * test_webhooks.c - the embedded API server calling admission and CRD
 * conversion webhooks (cu_admission.c, cu_crdconv.c, cu_whcall.c), in
 * process: requests through cu_apiserver_handle against a real store, and
 * a small HTTPS webhook server (libmicrohttpd on its own thread, a
 * certificate from cu_tls) answering fixed reviews by path. The webhook
 * configurations as served objects (Table, validation), rule, scope,
 * namespace and object selector matching, the JSONPatch of a mutating
 * webhook, a denial's Status, warnings, failurePolicy Ignore and Fail on
 * an unreachable URL, a wrong CA, a timeout, reinvocation, dry run,
 * a Service reference resolved as APIServices are, matchPolicy
 * Equivalent across CRD versions, and conversion on write, read, list
 * and watch.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "cu_apiserver.h"
#include "cu_base64.h"
#include "cu_clock.h"
#include "cu_json.h"
#include "cu_tls.h"

#include <microhttpd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---------------- the webhook server ---------------- */

typedef struct whs {
    struct MHD_Daemon *d;
    int port;
    char *ca, *cert, *key;
    pthread_mutex_t mu;
    int calls_seen, calls_mutate, calls_validate;
    json_object *last_review; /* the last review received at /seen or /record */
    char seen_labels[256];    /* labels of the object at the last /seen call */
} whs;

static whs W;

typedef struct upload {
    char *data;
    size_t len;
} upload;

static json_object *allowed_response(json_object *req, int allowed)
{
    json_object *ans = json_object_new_object(), *r = json_object_new_object();
    cu_jset_str(ans, "apiVersion", "admission.k8s.io/v1");
    cu_jset_str(ans, "kind", "AdmissionReview");
    cu_jset_str(r, "uid", cu_jstr(req, "uid") ? cu_jstr(req, "uid") : "");
    json_object_object_add(r, "allowed", json_object_new_boolean(allowed));
    json_object_object_add(ans, "response", r);
    return ans;
}

static void set_patch(json_object *ans, const char *patch)
{
    json_object *r = cu_jget(ans, "response");
    char *b = cu_base64_encode(patch, strlen(patch));
    cu_jset_str(r, "patch", b);
    cu_jset_str(r, "patchType", "JSONPatch");
    free(b);
}

/* spec.size (v1) <-> spec.count (v2) */
static json_object *convert(json_object *review)
{
    json_object *req = cu_jget(review, "request");
    const char *desired = cu_jstr(req, "desiredAPIVersion");
    json_object *ans = json_object_new_object(), *r = json_object_new_object(),
                *out = json_object_new_array(), *objs = cu_jget(req, "objects");
    cu_jset_str(ans, "apiVersion", "apiextensions.k8s.io/v1");
    cu_jset_str(ans, "kind", "ConversionReview");
    cu_jset_str(r, "uid", cu_jstr(req, "uid"));
    for (size_t i = 0; i < cu_jarr_len(objs); i++) {
        json_object *o = cu_jcopy(json_object_array_get_idx(objs, i));
        json_object *spec = cu_jget(o, "spec");
        int to_v2 = strstr(desired, "/v2") != NULL;
        const char *from = to_v2 ? "size" : "count", *to = to_v2 ? "count" : "size";
        json_object *v = cu_jget(spec, from);
        if (v) {
            json_object_object_add(spec, to, json_object_get(v));
            json_object_object_del(spec, from);
        }
        cu_jset_str(o, "apiVersion", desired);
        json_object_array_add(out, o);
    }
    json_object_object_add(r, "convertedObjects", out);
    json_object *res = json_object_new_object();
    cu_jset_str(res, "status", "Success");
    json_object_object_add(r, "result", res);
    json_object_object_add(ans, "response", r);
    return ans;
}

static json_object *answer(const char *url, json_object *review)
{
    json_object *req = cu_jget(review, "request");
    if (strcmp(url, "/convert") == 0)
        return convert(review);
    json_object *obj = cu_jget(req, "object");
    if (strcmp(url, "/mutate") == 0) { /* adds the label mutated=yes */
        json_object *ans = allowed_response(req, 1);
        pthread_mutex_lock(&W.mu);
        W.calls_mutate++;
        pthread_mutex_unlock(&W.mu);
        json_object *labels = cu_jget(cu_jget(obj, "metadata"), "labels");
        const char *has = cu_jstr(labels, "mutated");
        if (has)
            return ans;
        set_patch(ans, labels ? "[{\"op\":\"add\",\"path\":\"/metadata/labels/mutated\","
                                "\"value\":\"yes\"}]"
                              : "[{\"op\":\"add\",\"path\":\"/metadata/labels\","
                                "\"value\":{\"mutated\":\"yes\"}}]");
        return ans;
    }
    if (strcmp(url, "/seen") == 0 || strcmp(url, "/record") == 0) {
        pthread_mutex_lock(&W.mu);
        if (strcmp(url, "/seen") == 0)
            W.calls_seen++;
        else
            W.calls_validate++;
        json_object_put(W.last_review);
        W.last_review = json_object_get(review);
        json_object *l = cu_jget(cu_jget(obj, "metadata"), "labels");
        snprintf(W.seen_labels, sizeof W.seen_labels, "%s",
                 l ? json_object_to_json_string_ext(l, JSON_C_TO_STRING_PLAIN) : "");
        pthread_mutex_unlock(&W.mu);
        return allowed_response(req, 1);
    }
    if (strcmp(url, "/deny") == 0) {
        json_object *ans = allowed_response(req, 0), *st = json_object_new_object();
        json_object_object_add(st, "code", json_object_new_int(403));
        cu_jset_str(st, "reason", "Forbidden");
        cu_jset_str(st, "message", "no thanks");
        json_object_object_add(cu_jget(ans, "response"), "status", st);
        return ans;
    }
    if (strcmp(url, "/warn") == 0) {
        json_object *ans = allowed_response(req, 1), *w = json_object_new_array();
        json_object_array_add(w, json_object_new_string("be \"careful\""));
        json_object_array_add(w, json_object_new_string("second warning"));
        json_object_object_add(cu_jget(ans, "response"), "warnings", w);
        return ans;
    }
    if (strcmp(url, "/slow") == 0) {
        struct timespec ts = { 2, 500000000L };
        nanosleep(&ts, NULL);
        return allowed_response(req, 1);
    }
    if (strcmp(url, "/baduid") == 0) {
        json_object *ans = allowed_response(req, 1);
        cu_jset_str(cu_jget(ans, "response"), "uid", "not-the-uid");
        return ans;
    }
    return NULL;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *data,
                                  size_t *size, void **con_cls)
{
    (void)cls;
    (void)version;
    (void)method;
    upload *u = *con_cls;
    if (!u) {
        *con_cls = calloc(1, sizeof *u);
        return MHD_YES;
    }
    if (*size) {
        u->data = realloc(u->data, u->len + *size + 1);
        memcpy(u->data + u->len, data, *size);
        u->len += *size;
        u->data[u->len] = 0;
        *size = 0;
        return MHD_YES;
    }
    json_object *review = u->data ? json_tokener_parse(u->data) : NULL;
    json_object *ans = review ? answer(url, review) : NULL;
    json_object_put(review);
    const char *s = ans ? json_object_to_json_string(ans) : "not found";
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(s), (void *)(uintptr_t)s, MHD_RESPMEM_MUST_COPY);
    MHD_add_response_header(r, "Content-Type", "application/json");
    enum MHD_Result ret = MHD_queue_response(conn, ans ? 200 : 404, r);
    MHD_destroy_response(r);
    json_object_put(ans);
    return ret;
}

static void on_done(void *cls, struct MHD_Connection *c, void **con_cls,
                    enum MHD_RequestTerminationCode t)
{
    (void)cls;
    (void)c;
    (void)t;
    upload *u = *con_cls;
    if (u) {
        free(u->data);
        free(u);
    }
    *con_cls = NULL;
}

static int whs_start(void **state)
{
    (void)state;
    char err[256];
    pthread_mutex_init(&W.mu, NULL);
    assert_int_equal(cu_tls_generate("wh.default.svc", &W.ca, &W.cert, &W.key, err, sizeof err),
                     CU_OK);
    W.d = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_TLS, 0, NULL,
        NULL, on_request, NULL, MHD_OPTION_HTTPS_MEM_KEY, W.key, MHD_OPTION_HTTPS_MEM_CERT, W.cert,
        MHD_OPTION_NOTIFY_COMPLETED, on_done, NULL, MHD_OPTION_END);
    assert_non_null(W.d);
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(W.d, MHD_DAEMON_INFO_BIND_PORT);
    W.port = di->port;
    return 0;
}

static int whs_stop(void **state)
{
    (void)state;
    MHD_stop_daemon(W.d);
    free(W.ca);
    free(W.cert);
    free(W.key);
    json_object_put(W.last_review);
    return 0;
}

/* ---------------- the API server in process ---------------- */

typedef struct fx {
    int64_t now;
    cu_clock clock;
    cu_store *s;
    cu_apiserver *a;
} fx;

static int fx_setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    char err[256];
    assert_int_equal(cu_time_parse("2026-01-01T00:00:00Z", &f->now), CU_OK);
    f->clock.now_ms = cu_clock_fake_now;
    f->clock.ud = &f->now;
    f->s = cu_store_new(100, &f->clock);
    cu_apiserver_opts o;
    memset(&o, 0, sizeof o);
    f->a = cu_apiserver_new_unbound(f->s, &o, err, sizeof err);
    assert_non_null(f->a);
    pthread_mutex_lock(&W.mu);
    W.calls_seen = W.calls_mutate = W.calls_validate = 0;
    json_object_put(W.last_review);
    W.last_review = NULL;
    pthread_mutex_unlock(&W.mu);
    *state = f;
    return 0;
}

static int fx_teardown(void **state)
{
    fx *f = *state;
    cu_apiserver_stop(f->a);
    cu_store_free(f->s);
    free(f);
    return 0;
}

/* Sends a request; the parsed answer (caller puts), *code, and the
 * Warning header value in *warning (malloc'ed) when asked for. */
static json_object *req(fx *f, const char *method, const char *path, const char *ct,
                        const char *body, int *code, char **warning)
{
    const char *args[4] = { NULL, NULL, NULL, NULL };
    size_t nargs = 0;
    char p[1024];
    snprintf(p, sizeof p, "%s", path);
    char *q = strchr(p, '?');
    if (q) { /* one k=v argument */
        *q++ = 0;
        char *eq = strchr(q, '=');
        *eq++ = 0;
        args[0] = q;
        args[1] = eq;
        nargs = 1;
    }
    cu_api_req r = { method, p,    args,
                     nargs,  NULL, ct ? ct : "application/json",
                     NULL,   body, body ? strlen(body) : 0,
                     1,      NULL };
    cu_api_resp resp;
    cu_apiserver_handle(f->a, &r, &resp);
    *code = resp.code;
    json_object *o = resp.body ? json_tokener_parse(resp.body) : NULL;
    if (warning)
        *warning = resp.warning ? strdup(resp.warning) : NULL;
    cu_api_resp_free(&resp);
    return o;
}

static void ok(fx *f, const char *method, const char *path, const char *body, int want)
{
    int code;
    json_object *o = req(f, method, path, NULL, body, &code, NULL);
    if (code != want)
        fail_msg("%s %s: %d, want %d: %s", method, path, code, want,
                 o ? json_object_to_json_string(o) : "");
    json_object_put(o);
}

static const char *msg_of(json_object *o) { return cu_jstr(o, "message"); }

/* A webhook configuration with one webhook: kind "Mutating" or
 * "Validating"; extra: more fields of the webhook (JSON members, with a
 * leading comma, may be ""). The URL is the test server's PATH. */
static void add_config(fx *f, const char *kind, const char *name, const char *path,
                       const char *rules, const char *extra)
{
    char *ca = cu_base64_encode(W.ca, strlen(W.ca));
    char body[8192], url[512];
    snprintf(url, sizeof url, "/apis/admissionregistration.k8s.io/v1/%swebhookconfigurations",
             strcmp(kind, "Mutating") == 0 ? "mutating" : "validating");
    snprintf(
        body, sizeof body,
        "{\"apiVersion\":\"admissionregistration.k8s.io/v1\",\"kind\":\"%sWebhookConfiguration\","
        "\"metadata\":{\"name\":\"%s\"},\"webhooks\":[{\"name\":\"%s.example.com\","
        "\"clientConfig\":{\"url\":\"https://127.0.0.1:%d%s\",\"caBundle\":\"%s\"},"
        "\"rules\":%s,\"sideEffects\":\"None\",\"admissionReviewVersions\":[\"v1\"]%s}]}",
        kind, name, name, W.port, path, ca, rules, extra);
    free(ca);
    ok(f, "POST", url, body, 201);
}

#define CM_RULES \
    "[{\"apiGroups\":[\"\"],\"apiVersions\":[\"v1\"],\"operations\":[\"CREATE\"]," \
    "\"resources\":[\"configmaps\"]}]"

static const char *cm(const char *name, const char *labels)
{
    static char b[512];
    snprintf(b, sizeof b,
             "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"%s\"%s%s}}",
             name, labels ? ",\"labels\":" : "", labels ? labels : "");
    return b;
}

#define CMS "/api/v1/namespaces/default/configmaps"

/* ---------------- tests ---------------- */

static void test_configs_served(void **state)
{
    fx *f = *state;
    int code;
    add_config(f, "Mutating", "m", "/mutate", CM_RULES, "");
    json_object *o =
        req(f, "GET", "/apis/admissionregistration.k8s.io/v1", NULL, NULL, &code, NULL);
    assert_int_equal(code, 200);
    const char *s = json_object_to_json_string(o);
    assert_non_null(strstr(s, "\"mutatingwebhookconfigurations\""));
    assert_non_null(strstr(s, "\"validatingwebhookconfigurations\""));
    json_object_put(o);
    /* kubectl get: NAME WEBHOOKS AGE */
    cu_api_req r = { "GET",
                     "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
                     NULL,
                     0,
                     "application/json;as=Table;v=v1;g=meta.k8s.io",
                     NULL,
                     NULL,
                     NULL,
                     0,
                     1,
                     NULL };
    cu_api_resp resp;
    cu_apiserver_handle(f->a, &r, &resp);
    assert_int_equal(resp.code, 200);
    o = json_tokener_parse(resp.body);
    cu_api_resp_free(&resp);
    json_object *cols = cu_jget(o, "columnDefinitions");
    assert_string_equal(cu_jstr(json_object_array_get_idx(cols, 1), "name"), "Webhooks");
    json_object *row = json_object_array_get_idx(cu_jget(o, "rows"), 0);
    assert_int_equal(json_object_get_int(json_object_array_get_idx(cu_jget(row, "cells"), 1)), 1);
    json_object_put(o);
    /* a strategic merge patch merges webhooks by name (kubectl apply) */
    o = req(f, "PATCH", "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/m",
            "application/strategic-merge-patch+json",
            "{\"webhooks\":[{\"name\":\"m.example.com\",\"timeoutSeconds\":5}]}", &code, NULL);
    assert_int_equal(code, 200);
    json_object *w0 = json_object_array_get_idx(cu_jget(o, "webhooks"), 0);
    assert_int_equal(json_object_get_int(cu_jget(w0, "timeoutSeconds")), 5);
    assert_non_null(cu_jpath_str(w0, "clientConfig.url"));
    assert_string_equal(cu_jstr(w0, "failurePolicy"), "Fail"); /* defaulted */
    json_object_put(o);
    /* kube-apiserver's validation */
    o = req(f, "POST", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
            NULL,
            "{\"apiVersion\":\"admissionregistration.k8s.io/v1\",\"kind\":"
            "\"ValidatingWebhookConfiguration\",\"metadata\":{\"name\":\"bad\"},\"webhooks\":[{"
            "\"name\":\"short\",\"clientConfig\":{\"url\":\"https://x/\"},"
            "\"admissionReviewVersions\":[\"v1\"]}]}",
            &code, NULL);
    assert_int_equal(code, 422);
    assert_string_equal(
        msg_of(o),
        "ValidatingWebhookConfiguration.admissionregistration.k8s.io \"bad\" is invalid: "
        "[webhooks[0].name: Invalid value: \"short\": should be a domain with at least "
        "three segments separated by dots, webhooks[0].sideEffects: Required value: "
        "must specify one of None, NoneOnDryRun]");
    json_object *c1 = json_object_array_get_idx(cu_jpath(o, "details.causes"), 1);
    assert_string_equal(cu_jstr(c1, "field"), "webhooks[0].sideEffects");
    assert_string_equal(cu_jstr(c1, "reason"), "FieldValueRequired");
    json_object_put(o);
}

static void test_mutating_patch(void **state)
{
    fx *f = *state;
    int code;
    add_config(f, "Mutating", "m", "/mutate", CM_RULES, "");
    ok(f, "POST", CMS, cm("a", NULL), 201);
    ok(f, "POST", CMS, cm("b", "{\"x\":\"1\"}"), 201);
    json_object *o = req(f, "GET", CMS "/a", NULL, NULL, &code, NULL);
    assert_string_equal(cu_jpath_str(o, "metadata.labels.mutated"), "yes");
    json_object_put(o);
    o = req(f, "GET", CMS "/b", NULL, NULL, &code, NULL);
    assert_string_equal(cu_jpath_str(o, "metadata.labels.mutated"), "yes");
    assert_string_equal(cu_jpath_str(o, "metadata.labels.x"), "1");
    json_object_put(o);
    /* UPDATE is not in the rule's operations */
    ok(f, "PUT", CMS "/b", cm("b", "{\"x\":\"2\"}"), 200);
    o = req(f, "GET", CMS "/b", NULL, NULL, &code, NULL);
    assert_null(cu_jpath_str(o, "metadata.labels.mutated"));
    json_object_put(o);
    /* other resources and namespaces-less kinds are not matched */
    ok(f, "POST", "/api/v1/namespaces/default/secrets",
       "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"s\"}}", 201);
    o = req(f, "GET", "/api/v1/namespaces/default/secrets/s", NULL, NULL, &code, NULL);
    assert_null(cu_jpath_str(o, "metadata.labels.mutated"));
    json_object_put(o);
}

static void test_matching(void **state)
{
    fx *f = *state;
    int code;
    /* a namespace selector, an object selector, a status rule, scope */
    add_config(f, "Validating", "nsel", "/record", CM_RULES,
               ",\"namespaceSelector\":{\"matchLabels\":{\"team\":\"a\"}}");
    ok(f, "POST", "/api/v1/namespaces",
       "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"ta\","
       "\"labels\":{\"team\":\"a\"}}}",
       201);
    ok(f, "POST", CMS, cm("c1", NULL), 201);
    assert_int_equal(W.calls_validate, 0);
    ok(f, "POST", "/api/v1/namespaces/ta/configmaps", cm("c2", NULL), 201);
    assert_int_equal(W.calls_validate, 1);
    assert_string_equal(cu_jpath_str(W.last_review, "request.namespace"), "ta");
    assert_string_equal(cu_jpath_str(W.last_review, "request.operation"), "CREATE");
    assert_string_equal(cu_jpath_str(W.last_review, "request.resource.resource"), "configmaps");
    assert_string_equal(cu_jpath_str(W.last_review, "request.userInfo.username"), "system:admin");
    (void)code;
}

/* PATCH needs the content type */
static void patch(fx *f, const char *path, const char *body, int want)
{
    int code;
    json_object *o = req(f, "PATCH", path, "application/merge-patch+json", body, &code, NULL);
    if (code != want)
        fail_msg("PATCH %s: %d: %s", path, code, o ? json_object_to_json_string(o) : "");
    json_object_put(o);
}

static void test_matching_status(void **state)
{
    fx *f = *state;
    add_config(f, "Validating", "osel", "/seen",
               "[{\"apiGroups\":[\"*\"],\"apiVersions\":[\"*\"],\"operations\":[\"*\"],"
               "\"resources\":[\"jobs/status\"]}]",
               ",\"objectSelector\":{\"matchExpressions\":[{\"key\":\"watch\",\"operator\":"
               "\"Exists\"}]}");
    const char *jobs = "/apis/batch/v1/namespaces/default/jobs";
    ok(f, "POST", jobs,
       "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"j\","
       "\"labels\":{\"watch\":\"1\"}},\"spec\":{}}",
       201);
    ok(f, "POST", jobs,
       "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"k\"},\"spec\":{}}",
       201);
    assert_int_equal(W.calls_seen, 0); /* jobs, not jobs/status */
    patch(f, "/apis/batch/v1/namespaces/default/jobs/j", "{\"spec\":{\"parallelism\":2}}", 200);
    assert_int_equal(W.calls_seen, 0);
    patch(f, "/apis/batch/v1/namespaces/default/jobs/j/status", "{\"status\":{\"active\":1}}", 200);
    assert_int_equal(W.calls_seen, 1);
    assert_string_equal(cu_jpath_str(W.last_review, "request.subResource"), "status");
    assert_string_equal(cu_jpath_str(W.last_review, "request.operation"), "UPDATE");
    assert_non_null(cu_jpath(W.last_review, "request.oldObject"));
    /* the object selector: k has no label "watch" */
    patch(f, "/apis/batch/v1/namespaces/default/jobs/k/status", "{\"status\":{\"active\":1}}", 200);
    assert_int_equal(W.calls_seen, 1);
    /* scope: Cluster rules do not see namespaced objects */
    add_config(f, "Validating", "scope", "/record",
               "[{\"apiGroups\":[\"\"],\"apiVersions\":[\"v1\"],\"operations\":[\"CREATE\"],"
               "\"resources\":[\"*\"],\"scope\":\"Cluster\"}]",
               "");
    ok(f, "POST", CMS, cm("c3", NULL), 201);
    assert_int_equal(W.calls_validate, 0);
    ok(f, "POST", "/api/v1/namespaces",
       "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"n2\"}}", 201);
    assert_int_equal(W.calls_validate, 1);
    assert_null(cu_jpath(W.last_review, "request.namespace"));
    /* DELETE: the old object, no object */
    add_config(f, "Validating", "del", "/seen",
               "[{\"apiGroups\":[\"\"],\"apiVersions\":[\"v1\"],\"operations\":[\"DELETE\"],"
               "\"resources\":[\"configmaps\"]}]",
               "");
    ok(f, "DELETE", CMS "/c3", NULL, 200);
    assert_int_equal(W.calls_seen, 2);
    assert_string_equal(cu_jpath_str(W.last_review, "request.operation"), "DELETE");
    assert_string_equal(cu_jpath_str(W.last_review, "request.oldObject.metadata.name"), "c3");
    assert_null(cu_jpath(W.last_review, "request.object"));
}

static void test_denial_and_warnings(void **state)
{
    fx *f = *state;
    int code;
    char *warn = NULL;
    add_config(f, "Validating", "a-warn", "/warn", CM_RULES, "");
    json_object *o = req(f, "POST", CMS, NULL, cm("w", NULL), &code, &warn);
    assert_int_equal(code, 201);
    assert_non_null(warn);
    assert_string_equal(warn, "299 - \"be \\\"careful\\\"\"\n299 - \"second warning\"");
    free(warn);
    json_object_put(o);
    add_config(f, "Validating", "deny", "/deny", CM_RULES, "");
    o = req(f, "POST", CMS, NULL, cm("d", NULL), &code, &warn);
    assert_int_equal(code, 403);
    assert_string_equal(cu_jstr(o, "reason"), "Forbidden");
    assert_string_equal(msg_of(o),
                        "admission webhook \"deny.example.com\" denied the request: no thanks");
    assert_non_null(warn); /* the warnings of the webhook before come with the denial */
    free(warn);
    json_object_put(o);
    o = req(f, "GET", CMS "/d", NULL, NULL, &code, NULL);
    assert_int_equal(code, 404);
    json_object_put(o);
}

static void test_failure_policy(void **state)
{
    fx *f = *state;
    int code;
    char body[2048];
    const char *url = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations";
    snprintf(body, sizeof body,
             "{\"apiVersion\":\"admissionregistration.k8s.io/v1\",\"kind\":"
             "\"ValidatingWebhookConfiguration\",\"metadata\":{\"name\":\"gone\"},\"webhooks\":[{"
             "\"name\":\"gone.example.com\",\"clientConfig\":{\"url\":\"https://127.0.0.1:1/x\"},"
             "\"rules\":%s,\"sideEffects\":\"None\",\"admissionReviewVersions\":[\"v1\"],"
             "\"failurePolicy\":\"Ignore\"}]}",
             CM_RULES);
    ok(f, "POST", url, body, 201);
    ok(f, "POST", CMS, cm("i", NULL), 201);
    patch(f, "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/gone",
          "{\"webhooks\":[{\"name\":\"gone.example.com\",\"clientConfig\":{\"url\":"
          "\"https://127.0.0.1:1/x\"},\"rules\":" CM_RULES ",\"sideEffects\":\"None\","
          "\"admissionReviewVersions\":[\"v1\"],\"failurePolicy\":\"Fail\"}]}",
          200);
    json_object *o = req(f, "POST", CMS, NULL, cm("j", NULL), &code, NULL);
    assert_int_equal(code, 500);
    assert_string_equal(cu_jstr(o, "reason"), "InternalError");
    assert_string_equal(msg_of(o), "Internal error occurred: failed calling webhook "
                                   "\"gone.example.com\": failed to call webhook: Post "
                                   "\"https://127.0.0.1:1/x?timeout=10s\": dial tcp 127.0.0.1:1: "
                                   "connect: connection refused");
    json_object_put(o);
}

static void test_wrong_ca_and_uid(void **state)
{
    fx *f = *state;
    int code;
    char body[8192];
    char *other_ca = NULL, *c2 = NULL, *k2 = NULL, err[200];
    assert_int_equal(cu_tls_generate(NULL, &other_ca, &c2, &k2, err, sizeof err), CU_OK);
    char *b64 = cu_base64_encode(other_ca, strlen(other_ca));
    snprintf(
        body, sizeof body,
        "{\"apiVersion\":\"admissionregistration.k8s.io/v1\",\"kind\":"
        "\"ValidatingWebhookConfiguration\",\"metadata\":{\"name\":\"ca\"},\"webhooks\":[{"
        "\"name\":\"ca.example.com\",\"clientConfig\":{\"url\":\"https://127.0.0.1:%d/record\","
        "\"caBundle\":\"%s\"},\"rules\":%s,\"sideEffects\":\"None\","
        "\"admissionReviewVersions\":[\"v1\"]}]}",
        W.port, b64, CM_RULES);
    free(b64);
    free(other_ca);
    free(c2);
    free(k2);
    ok(f, "POST", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", body,
       201);
    json_object *o = req(f, "POST", CMS, NULL, cm("x", NULL), &code, NULL);
    assert_int_equal(code, 500);
    assert_non_null(strstr(msg_of(o), "x509: certificate signed by unknown authority"));
    assert_int_equal(W.calls_validate, 0);
    json_object_put(o);
    ok(f, "DELETE", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/ca",
       NULL, 200);
    add_config(f, "Validating", "uid", "/baduid", CM_RULES, "");
    o = req(f, "POST", CMS, NULL, cm("y", NULL), &code, NULL);
    assert_int_equal(code, 500);
    assert_non_null(strstr(msg_of(o), "expected response.uid="));
    json_object_put(o);
}

static void test_timeout(void **state)
{
    fx *f = *state;
    int code;
    add_config(f, "Validating", "slow", "/slow", CM_RULES, ",\"timeoutSeconds\":1");
    int64_t t0 = cu_clock_mono_ms();
    json_object *o = req(f, "POST", CMS, NULL, cm("t", NULL), &code, NULL);
    int64_t took = cu_clock_mono_ms() - t0;
    assert_int_equal(code, 500);
    assert_non_null(strstr(msg_of(o), "?timeout=1s\": context deadline exceeded"));
    assert_true(took >= 900 && took < 2400);
    json_object_put(o);
}

static void test_reinvocation(void **state)
{
    fx *f = *state;
    /* "a-seen" runs before "b-mutate" (name order); it is called again
     * because b changed the object after it */
    add_config(f, "Mutating", "a-seen", "/seen", CM_RULES, ",\"reinvocationPolicy\":\"IfNeeded\"");
    ok(f, "POST", CMS, cm("r0", "{\"mutated\":\"already\"}"), 201);
    assert_int_equal(W.calls_seen, 1); /* nothing changed it: once */
    add_config(f, "Mutating", "b-mutate", "/mutate", CM_RULES, "");
    ok(f, "POST", CMS, cm("r1", NULL), 201);
    assert_int_equal(W.calls_seen, 3);
    assert_int_equal(W.calls_mutate, 1);
    assert_string_equal(W.seen_labels, "{\"mutated\":\"yes\"}");
    /* Never (the default): not called again */
    ok(f, "DELETE", "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/a-seen",
       NULL, 200);
    add_config(f, "Mutating", "a-seen", "/seen", CM_RULES, "");
    ok(f, "POST", CMS, cm("r2", NULL), 201);
    assert_int_equal(W.calls_seen, 4);
}

static void test_dry_run(void **state)
{
    fx *f = *state;
    int code;
    add_config(f, "Mutating", "m", "/mutate", CM_RULES, "");
    json_object *o = req(f, "POST", CMS "?dryRun=All", NULL, cm("dr", NULL), &code, NULL);
    assert_int_equal(code, 201);
    assert_string_equal(cu_jpath_str(o, "metadata.labels.mutated"), "yes");
    json_object_put(o);
    o = req(f, "GET", CMS "/dr", NULL, NULL, &code, NULL);
    assert_int_equal(code, 404);
    json_object_put(o);
    ok(f, "PATCH", "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/m", NULL,
       415);
    o = req(f, "PATCH", "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/m",
            "application/json-patch+json",
            "[{\"op\":\"replace\",\"path\":\"/webhooks/0/sideEffects\",\"value\":\"Some\"}]", &code,
            NULL);
    assert_int_equal(code, 422); /* v1 allows None and NoneOnDryRun only */
    json_object_put(o);
}

static void test_service_reference(void **state)
{
    fx *f = *state;
    int code;
    char body[8192];
    ok(f, "POST", "/api/v1/namespaces/default/services",
       "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"wh\"},"
       "\"spec\":{\"type\":\"ExternalName\",\"externalName\":\"127.0.0.1\"}}",
       201);
    char *ca = cu_base64_encode(W.ca, strlen(W.ca));
    snprintf(body, sizeof body,
             "{\"apiVersion\":\"admissionregistration.k8s.io/v1\",\"kind\":"
             "\"MutatingWebhookConfiguration\",\"metadata\":{\"name\":\"svc\"},\"webhooks\":[{"
             "\"name\":\"svc.example.com\",\"clientConfig\":{\"service\":{\"namespace\":"
             "\"default\",\"name\":\"wh\",\"path\":\"/mutate\",\"port\":%d},\"caBundle\":\"%s\"},"
             "\"rules\":%s,\"sideEffects\":\"None\",\"admissionReviewVersions\":[\"v1\"]}]}",
             W.port, ca, CM_RULES);
    free(ca);
    ok(f, "POST", "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations", body, 201);
    ok(f, "POST", CMS, cm("s", NULL), 201);
    json_object *o = req(f, "GET", CMS "/s", NULL, NULL, &code, NULL);
    assert_string_equal(cu_jpath_str(o, "metadata.labels.mutated"), "yes");
    json_object_put(o);
    /* a Service that is not there */
    ok(f, "DELETE", "/api/v1/namespaces/default/services/wh", NULL, 200);
    o = req(f, "POST", CMS, NULL, cm("s2", NULL), &code, NULL);
    assert_int_equal(code, 500);
    assert_non_null(strstr(msg_of(o), "Post \"https://wh.default.svc:"));
    assert_non_null(strstr(msg_of(o), "service/wh in \"default\" is not present"));
    json_object_put(o);
}

/* ---- CRD conversion ---- */

static void add_crd(fx *f, const char *strategy)
{
    char *ca = cu_base64_encode(W.ca, strlen(W.ca));
    char body[8192], conv[2048];
    if (strcmp(strategy, "Webhook") == 0)
        snprintf(
            conv, sizeof conv,
            "{\"strategy\":\"Webhook\",\"webhook\":{\"conversionReviewVersions\":[\"v1\"],"
            "\"clientConfig\":{\"url\":\"https://127.0.0.1:%d/convert\",\"caBundle\":\"%s\"}}}",
            W.port, ca);
    else
        snprintf(conv, sizeof conv, "{\"strategy\":\"None\"}");
    free(ca);
    const char *schema = "\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\",\"properties\":{"
                         "\"spec\":{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":"
                         "true}}}}";
    snprintf(body, sizeof body,
             "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
             "\"metadata\":{\"name\":\"gizmos.example.com\"},\"spec\":{\"group\":\"example.com\","
             "\"scope\":\"Namespaced\",\"names\":{\"plural\":\"gizmos\",\"singular\":\"gizmo\","
             "\"kind\":\"Gizmo\",\"listKind\":\"GizmoList\"},\"conversion\":%s,\"versions\":["
             "{\"name\":\"v1\",\"served\":true,\"storage\":false,%s},"
             "{\"name\":\"v2\",\"served\":true,\"storage\":true,%s}]}}",
             conv, schema, schema);
    ok(f, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", body, 201);
}

#define G1 "/apis/example.com/v1/namespaces/default/gizmos"
#define G2 "/apis/example.com/v2/namespaces/default/gizmos"

static void test_conversion(void **state)
{
    fx *f = *state;
    int code;
    add_crd(f, "Webhook");
    /* a v1 watch, open before the write */
    const char *wargs[2] = { "watch", "true" };
    cu_api_req wr = { "GET", G1, wargs, 1, NULL, NULL, NULL, NULL, 0, 1, NULL };
    cu_api_resp wresp;
    cu_apiserver_handle(f->a, &wr, &wresp);
    assert_int_equal(wresp.code, 200);
    /* written in v1: stored as v2 */
    json_object *o = req(f, "POST", G1, NULL,
                         "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Gizmo\",\"metadata\":{"
                         "\"name\":\"g\"},\"spec\":{\"size\":3}}",
                         &code, NULL);
    assert_int_equal(code, 201);
    assert_string_equal(cu_jstr(o, "apiVersion"), "example.com/v1");
    assert_int_equal(json_object_get_int(cu_jpath(o, "spec.size")), 3);
    json_object_put(o);
    o = req(f, "GET", G2 "/g", NULL, NULL, &code, NULL);
    assert_string_equal(cu_jstr(o, "apiVersion"), "example.com/v2");
    assert_int_equal(json_object_get_int(cu_jpath(o, "spec.count")), 3);
    assert_null(cu_jpath(o, "spec.size"));
    json_object_put(o);
    /* read, list and watch in v1 */
    o = req(f, "GET", G1 "/g", NULL, NULL, &code, NULL);
    assert_int_equal(json_object_get_int(cu_jpath(o, "spec.size")), 3);
    json_object_put(o);
    o = req(f, "GET", G1, NULL, NULL, &code, NULL);
    assert_string_equal(cu_jstr(o, "apiVersion"), "example.com/v1");
    json_object *it = json_object_array_get_idx(cu_jget(o, "items"), 0);
    assert_string_equal(cu_jstr(it, "apiVersion"), "example.com/v1");
    assert_int_equal(json_object_get_int(cu_jpath(it, "spec.size")), 3);
    json_object_put(o);
    int ended = 0;
    char *line = cu_api_watch_next(&wresp, 2000, &ended);
    assert_non_null(line);
    o = json_tokener_parse(line);
    free(line);
    assert_string_equal(cu_jstr(o, "type"), "ADDED");
    assert_int_equal(json_object_get_int(cu_jpath(o, "object.spec.size")), 3);
    assert_string_equal(cu_jpath_str(o, "object.apiVersion"), "example.com/v1");
    json_object_put(o);
    cu_api_resp_free(&wresp);
    /* a merge patch in v1 */
    o = req(f, "PATCH", G1 "/g", "application/merge-patch+json", "{\"spec\":{\"size\":5}}", &code,
            NULL);
    assert_int_equal(code, 200);
    assert_int_equal(json_object_get_int(cu_jpath(o, "spec.size")), 5);
    json_object_put(o);
    o = req(f, "GET", G2 "/g", NULL, NULL, &code, NULL);
    assert_int_equal(json_object_get_int(cu_jpath(o, "spec.count")), 5);
    json_object_put(o);
    /* matchPolicy Equivalent: a rule on v2 sees a v1 write in v2 */
    add_config(f, "Validating", "eq", "/record",
               "[{\"apiGroups\":[\"example.com\"],\"apiVersions\":[\"v2\"],\"operations\":["
               "\"CREATE\"],\"resources\":[\"gizmos\"]}]",
               "");
    ok(f, "POST", G1,
       "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Gizmo\",\"metadata\":{\"name\":\"h\"},"
       "\"spec\":{\"size\":1}}",
       201);
    assert_int_equal(W.calls_validate, 1);
    assert_string_equal(cu_jpath_str(W.last_review, "request.kind.version"), "v2");
    assert_string_equal(cu_jpath_str(W.last_review, "request.requestKind.version"), "v1");
    assert_int_equal(json_object_get_int(cu_jpath(W.last_review, "request.object.spec.count")), 1);
    /* Exact: not called */
    ok(f, "DELETE", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/eq",
       NULL, 200);
    add_config(f, "Validating", "eq", "/record",
               "[{\"apiGroups\":[\"example.com\"],\"apiVersions\":[\"v2\"],\"operations\":["
               "\"CREATE\"],\"resources\":[\"gizmos\"]}]",
               ",\"matchPolicy\":\"Exact\"");
    ok(f, "POST", G1,
       "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Gizmo\",\"metadata\":{\"name\":\"k\"},"
       "\"spec\":{\"size\":1}}",
       201);
    assert_int_equal(W.calls_validate, 1);
    /* the storage version never needs the webhook; an unreachable one fails v1 */
    patch(f, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gizmos.example.com",
          "{\"spec\":{\"conversion\":{\"webhook\":{\"clientConfig\":{\"url\":"
          "\"https://127.0.0.1:1/convert\"}}}}}",
          200);
    ok(f, "GET", G2 "/g", NULL, 200);
    o = req(f, "GET", G1 "/g", NULL, NULL, &code, NULL);
    assert_int_equal(code, 500);
    assert_non_null(strstr(msg_of(o), "conversion webhook for example.com/v2, Kind=Gizmo failed: "
                                      "failed to call webhook: Post "
                                      "\"https://127.0.0.1:1/convert?timeout=30s\""));
    json_object_put(o);
}

static void test_conversion_none(void **state)
{
    fx *f = *state;
    int code;
    add_crd(f, "None");
    ok(f, "POST", G1,
       "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Gizmo\",\"metadata\":{\"name\":\"g\"},"
       "\"spec\":{\"size\":3}}",
       201);
    json_object *o = req(f, "GET", G2 "/g", NULL, NULL, &code, NULL);
    assert_string_equal(cu_jstr(o, "apiVersion"), "example.com/v2");
    assert_int_equal(json_object_get_int(cu_jpath(o, "spec.size")), 3); /* only apiVersion */
    json_object_put(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_configs_served, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_mutating_patch, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_matching, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_matching_status, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_denial_and_warnings, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_failure_policy, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_wrong_ca_and_uid, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_timeout, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_reinvocation, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_dry_run, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_service_reference, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_conversion, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_conversion_none, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, whs_start, whs_stop);
}
