/*
 * fuzz_apiserver.c - libFuzzer target for the embedded API server's request
 * paths, driven in-process through cu_apiserver_handle against a real store
 * holding a ConfigMap, a Pod (status subresource) and a custom resource
 * with a schema.
 *
 * Input: a first line "OP RESOURCE QUERY", the rest is the body.
 *   OP: create put merge strategic json apply smerge sput list watch get delete
 *   RESOURCE: cm pod thing ns whc (a ValidatingWebhookConfiguration)
 *   QUERY: k=v&k=v (values as the server receives them, already decoded)
 * Besides "no crash, no sanitizer report" it checks:
 *  - a refused write (4xx/5xx) leaves the stored object as it was;
 *  - whatever is stored reads back, parses with the server's own limits
 *    and passes the ObjectMeta checks (nothing invalid is persisted).
 * A violated property aborts (a finding).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_apiserver.h"
#include "cu_objmeta.h"
#include "cu_store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char CRD[] =
    "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
    "\"metadata\":{\"name\":\"things.fuzz.example.com\"},\"spec\":{\"group\":\"fuzz.example.com\","
    "\"scope\":\"Namespaced\",\"names\":{\"plural\":\"things\",\"singular\":\"thing\",\"kind\":"
    "\"Thing\",\"listKind\":\"ThingList\"},\"versions\":[{\"name\":\"v1\",\"served\":true,"
    "\"storage\":true,\"subresources\":{\"status\":{}},\"schema\":{\"openAPIV3Schema\":{\"type\":"
    "\"object\",\"properties\":{\"spec\":{\"type\":\"object\",\"properties\":{\"n\":{\"type\":"
    "\"integer\"},\"s\":{\"type\":\"string\",\"maxLength\":10},\"l\":{\"type\":\"array\","
    "\"x-kubernetes-list-type\":\"map\",\"x-kubernetes-list-map-keys\":[\"name\"],\"items\":{"
    "\"type\":\"object\",\"required\":[\"name\"],\"properties\":{\"name\":{\"type\":\"string\"}},"
    "\"x-kubernetes-preserve-unknown-fields\":true}},\"free\":{\"type\":\"object\","
    "\"x-kubernetes-preserve-unknown-fields\":true}}},\"status\":{\"type\":\"object\","
    "\"x-kubernetes-preserve-unknown-fields\":true}}}}}]}}";

static const struct {
    const char *name, *coll, *obj, *create;
} RES[] = {
    { "cm", "/api/v1/namespaces/default/configmaps", "/api/v1/namespaces/default/configmaps/c1",
      "{\"metadata\":{\"name\":\"c1\",\"labels\":{\"a\":\"b\"},\"finalizers\":[\"example.com/f\"]},"
      "\"data\":{\"k\":\"v\"}}" },
    { "pod", "/api/v1/namespaces/default/pods", "/api/v1/namespaces/default/pods/p1",
      "{\"metadata\":{\"name\":\"p1\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}" },
    { "thing", "/apis/fuzz.example.com/v1/namespaces/default/things",
      "/apis/fuzz.example.com/v1/namespaces/default/things/t1",
      "{\"metadata\":{\"name\":\"t1\"},\"spec\":{\"n\":1,\"l\":[{\"name\":\"a\"}],\"free\":{\"x\":[1]}}}" },
    { "ns", "/api/v1/namespaces", "/api/v1/namespaces/default", NULL },
    /* a webhook configuration (defaults, validation); its webhook, on
     * things, is called by their writes and refuses connections at once */
    { "whc", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
      "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/w1",
      "{\"apiVersion\":\"admissionregistration.k8s.io/v1\",\"kind\":"
      "\"ValidatingWebhookConfiguration\",\"metadata\":{\"name\":\"w1\"},\"webhooks\":[{"
      "\"name\":\"w.fuzz.example.com\",\"clientConfig\":{\"url\":\"https://127.0.0.1:1/x\"},"
      "\"rules\":[{\"apiGroups\":[\"fuzz.example.com\"],\"apiVersions\":[\"*\"],"
      "\"operations\":[\"*\"],\"resources\":[\"things\",\"things/status\"]}],"
      "\"failurePolicy\":\"Ignore\",\"sideEffects\":\"None\",\"admissionReviewVersions\":[\"v1\"]}]}" },
};

typedef struct env {
    int64_t now;
    cu_clock clock;
    cu_store *s;
    cu_apiserver *a;
} env;

static int call(env *e, const char *method, const char *path, const char *ct, const char *body,
                size_t blen, const char *const *args, size_t nargs, cu_api_resp *out)
{
    cu_api_req r = { method, path, args, nargs, NULL, ct, NULL, body, blen, 1, "fuzz" };
    cu_apiserver_handle(e->a, &r, out);
    return out->code;
}

/* The stored object as text (malloc'ed) or NULL when absent. */
static char *stored(env *e, const char *path)
{
    cu_api_resp r;
    char *t = NULL;
    if (call(e, "GET", path, NULL, NULL, 0, NULL, 0, &r) == 200 && r.body)
        t = strdup(r.body);
    cu_api_resp_free(&r);
    return t;
}

static void check_stored(const char *text, const char *kind, int builtin)
{
    char err[300];
    json_object *o = cu_json_parse_checked(text, strlen(text), NULL, err, sizeof err);
    if (!o) {
        fprintf(stderr, "stored object does not parse again: %s\n%.500s\n", err, text);
        abort();
    }
    cu_schema_err errs[4];
    if (cu_objmeta_validate(o, kind, builtin, errs, 4)) {
        fprintf(stderr, "stored object is invalid: %s: %s\n%.500s\n", errs[0].field,
                errs[0].message, text);
        abort();
    }
    json_object_put(o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 256 * 1024)
        return 0;
    const char *nl = memchr(data, '\n', size);
    size_t hl = nl ? (size_t)(nl - (const char *)data) : size;
    if (hl > 2000)
        return 0;
    char head[2001];
    memcpy(head, data, hl);
    head[hl] = '\0';
    if (strlen(head) != hl)
        return 0;
    const char *body = nl ? nl + 1 : NULL;
    size_t blen = nl ? size - hl - 1 : 0;

    char op[32] = "", res[32] = "", query[2001] = "";
    if (sscanf(head, "%31s %31s %2000s", op, res, query) < 2)
        return 0;
    size_t ri = 0;
    while (ri < sizeof RES / sizeof *RES && strcmp(RES[ri].name, res) != 0)
        ri++;
    if (ri == sizeof RES / sizeof *RES)
        return 0;

    /* query arguments */
    const char *args[64];
    size_t nargs = 0;
    for (char *save = NULL, *kv = strtok_r(query, "&", &save); kv && nargs < 32;
         kv = strtok_r(NULL, "&", &save)) {
        char *eq = strchr(kv, '=');
        if (eq)
            *eq = '\0';
        args[2 * nargs] = kv;
        args[2 * nargs + 1] = eq ? eq + 1 : "";
        nargs++;
    }

    env e;
    memset(&e, 0, sizeof e);
    e.now = 1767225600000; /* 2026-01-01 */
    e.clock.now_ms = cu_clock_fake_now;
    e.clock.ud = &e.now;
    e.s = cu_store_new(50, &e.clock);
    cu_apiserver_opts o;
    memset(&o, 0, sizeof o);
    o.admin = 1;
    char err[256];
    e.a = cu_apiserver_new_unbound(e.s, &o, err, sizeof err);
    if (!e.a)
        abort();
    cu_api_resp r;
    call(&e, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "application/json",
         CRD, strlen(CRD), NULL, 0, &r);
    cu_api_resp_free(&r);
    for (size_t i = 0; i < sizeof RES / sizeof *RES; i++) {
        if (!RES[i].create)
            continue;
        if (call(&e, "POST", RES[i].coll, "application/json", RES[i].create, strlen(RES[i].create),
                 NULL, 0, &r) != 201)
            abort();
        cu_api_resp_free(&r);
    }

    char *before = stored(&e, RES[ri].obj);
    static const struct {
        const char *op, *method, *ct;
        int on_obj, status;
    } OPS[] = {
        { "create", "POST", "application/json", 0, 0 },
        { "ycreate", "POST", "application/yaml", 0, 0 },
        { "put", "PUT", "application/json", 1, 0 },
        { "merge", "PATCH", "application/merge-patch+json", 1, 0 },
        { "strategic", "PATCH", "application/strategic-merge-patch+json", 1, 0 },
        { "json", "PATCH", "application/json-patch+json", 1, 0 },
        { "apply", "PATCH", "application/apply-patch+yaml", 1, 0 },
        { "smerge", "PATCH", "application/merge-patch+json", 1, 1 },
        { "sjson", "PATCH", "application/json-patch+json", 1, 1 },
        { "sput", "PUT", "application/json", 1, 1 },
        { "sapply", "PATCH", "application/apply-patch+yaml", 1, 1 },
        { "list", "GET", NULL, 0, 0 },
        { "watch", "GET", NULL, 0, 0 },
        { "get", "GET", NULL, 1, 0 },
        { "delete", "DELETE", "application/json", 1, 0 },
        { "dcoll", "DELETE", "application/json", 0, 0 },
    };
    size_t oi = 0;
    while (oi < sizeof OPS / sizeof *OPS && strcmp(OPS[oi].op, op) != 0)
        oi++;
    if (oi == sizeof OPS / sizeof *OPS)
        goto done;
    char path[300];
    snprintf(path, sizeof path, "%s%s", OPS[oi].on_obj ? RES[ri].obj : RES[ri].coll,
             OPS[oi].status ? "/status" : "");
    if (strcmp(op, "watch") == 0 && nargs < 32) {
        args[2 * nargs] = "watch";
        args[2 * nargs + 1] = "true";
        nargs++;
    }
    int code = call(&e, OPS[oi].method, path, OPS[oi].ct, body, blen, args, nargs, &r);
    if (r.watch) {
        int ended = 0;
        for (int i = 0; i < 8 && !ended; i++)
            free(cu_api_watch_next(&r, 0, &ended));
    }
    cu_api_resp_free(&r);

    /* what is stored now */
    char *after = stored(&e, RES[ri].obj);
    static const char *const kinds[] = { "ConfigMap", "Pod", "Thing", "Namespace",
                                         "ValidatingWebhookConfiguration" };
    if (after)
        check_stored(after, kinds[ri], ri != 2);
    if (code >= 400 && strcmp(OPS[oi].method, "GET") != 0) {
        int same = (!before && !after) || (before && after && strcmp(before, after) == 0);
        if (!same) {
            fprintf(stderr, "a refused write (%d) changed the object:\n%.800s\n->\n%.800s\n", code,
                    before ? before : "(none)", after ? after : "(none)");
            abort();
        }
    }
    /* and the whole list reads back */
    if (call(&e, "GET", RES[ri].coll, NULL, NULL, 0, NULL, 0, &r) != 200)
        abort();
    cu_api_resp_free(&r);
    free(after);
done:
    free(before);
    cu_apiserver_stop(e.a);
    cu_store_free(e.s);
    return 0;
}
