/*
 * cu_whreview.c - see cu_whreview.h: AdmissionReview and ConversionReview
 * v1 decoded, the hook or the conversion of api/cu_webhook.h called, the
 * review answered.
 */
#include "cu_whreview.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cu_base64.h"
#include "cu_json.h"

static const char JSON_CT[] = "application/json";

/* A review body: one JSON object with apiVersion want_av and kind
 * want_kind, whose request is an object with a string uid. Returns the
 * document (caller puts) with *req and *uid borrowed from it, or NULL
 * with why. */
static json_object *decode_review(const char *data, size_t len, const char *want_av,
                                  const char *want_kind, json_object **req, const char **uid,
                                  char *why, size_t nwhy)
{
    char perr[160] = "";
    json_object *doc = data && len ? cu_json_parse(NULL, data, len, perr, sizeof perr) : NULL;
    *req = NULL;
    *uid = NULL;
    if (!doc) {
        snprintf(why, nwhy, "the request body is not JSON%s%s", perr[0] ? ": " : "",
                 data && len ? perr : " (empty)");
        return NULL;
    }
    const char *av = cu_jstr(doc, "apiVersion"), *kind = cu_jstr(doc, "kind");
    if (!json_object_is_type(doc, json_type_object))
        snprintf(why, nwhy, "the request body is not a JSON object");
    else if (!av || strcmp(av, want_av) != 0)
        snprintf(why, nwhy, "apiVersion: expected \"%s\", got %s%s%s", want_av, av ? "\"" : "",
                 av ? av : "none", av ? "\"" : "");
    else if (!kind || strcmp(kind, want_kind) != 0)
        snprintf(why, nwhy, "kind: expected \"%s\", got %s%s%s", want_kind, kind ? "\"" : "",
                 kind ? kind : "none", kind ? "\"" : "");
    else if (!json_object_is_type(cu_jget(doc, "request"), json_type_object))
        snprintf(why, nwhy, "request: missing or not an object");
    else if (!cu_jstr(cu_jget(doc, "request"), "uid") || !*cu_jstr(cu_jget(doc, "request"), "uid"))
        snprintf(why, nwhy, "request.uid: missing or not a non-empty string");
    else {
        *req = cu_jget(doc, "request");
        *uid = cu_jstr(*req, "uid");
        return doc;
    }
    json_object_put(doc);
    return NULL;
}

/* Writes o as the body (compact) and puts o. */
static int put_body(cu_buf *out, json_object *o, int code)
{
    const char *s = o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
                                                              JSON_C_TO_STRING_NOSLASHESCAPE)
                      : NULL;
    if (!s || cu_buf_puts(out, s) != CU_OK) {
        json_object_put(o);
        out->len = 0;
        out->failed = 0;
        cu_buf_puts(out, "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"out of "
                         "memory\",\"code\":500}");
        return 500;
    }
    json_object_put(o);
    return code;
}

static json_object *review(const char *av, const char *kind)
{
    json_object *o = json_object_new_object();
    if (o) {
        cu_jset_str(o, "apiVersion", av);
        cu_jset_str(o, "kind", kind);
    }
    return o;
}

/* ---- admission ---- */

static json_object *status_obj(int code, const char *reason, const char *message)
{
    json_object *st = json_object_new_object();
    if (!st)
        return NULL;
    json_object_object_add(st, "metadata", json_object_new_object());
    if (code != 200)
        cu_jset_str(st, "status", "Failure");
    if (message && *message)
        cu_jset_str(st, "message", message);
    if (reason && *reason)
        cu_jset_str(st, "reason", reason);
    cu_jset_int(st, "code", code);
    return st;
}

/* An AdmissionReview that refuses with code (400: the review itself is
 * wrong). */
static int admission_error(cu_buf *out, const char *uid, int code, const char *msg)
{
    json_object *o = review("admission.k8s.io/v1", "AdmissionReview");
    json_object *resp = o ? cu_jchild(o, "response") : NULL;
    if (resp) {
        cu_jset_str(resp, "uid", uid ? uid : "");
        json_object_object_add(resp, "allowed", json_object_new_boolean(0));
        json_object_object_add(resp, "status",
                               status_obj(code, code == 400 ? "BadRequest" : "InternalError", msg));
    }
    return put_body(out, o, code);
}

static int parse_op(const char *s, cu_wh_op *op)
{
    static const char *const names[] = { "CREATE", "UPDATE", "DELETE", "CONNECT" };
    for (int i = 0; s && i < 4; i++)
        if (strcmp(s, names[i]) == 0) {
            *op = (cu_wh_op)i;
            return 1;
        }
    return 0;
}

/* The value at key of req when it is absent/null or of type t; else 0. */
static int field_ok(json_object *req, const char *key, json_type t)
{
    json_object *v = NULL;
    return !json_object_object_get_ex(req, key, &v) || !v || json_object_is_type(v, t);
}

int cu_whrev_admission(const cu_wh_env *env, const cu_wh_hook *h, const char *data, size_t len,
                       cu_buf *out)
{
    char why[300];
    json_object *req = NULL;
    const char *uid = NULL;
    json_object *doc = decode_review(data, len, "admission.k8s.io/v1", "AdmissionReview", &req,
                                     &uid, why, sizeof why);
    if (!doc)
        return admission_error(out, NULL, 400, why);
    json_object *kind = cu_jget(req, "kind");
    cu_wh_req r = { 0 };
    const char *opname = cu_jstr(req, "operation");
    if (!parse_op(opname, &r.op))
        snprintf(why, sizeof why,
                 "request.operation: expected CREATE, UPDATE, DELETE or CONNECT, got %s%s%s",
                 opname ? "\"" : "", opname ? opname : "none", opname ? "\"" : "");
    else if (!json_object_is_type(kind, json_type_object) || !cu_jstr(kind, "kind") ||
             !cu_jstr(kind, "version"))
        snprintf(why, sizeof why, "request.kind: expected {group, version, kind}");
    else if (!field_ok(req, "object", json_type_object) ||
             !field_ok(req, "oldObject", json_type_object))
        snprintf(why, sizeof why, "request.object and request.oldObject must be objects");
    else if (!field_ok(req, "namespace", json_type_string) ||
             !field_ok(req, "name", json_type_string) ||
             !field_ok(req, "dryRun", json_type_boolean))
        snprintf(why, sizeof why,
                 "request.namespace and request.name must be strings, request.dryRun a boolean");
    else if (r.op != CU_WH_DELETE && !cu_jget(req, "object"))
        snprintf(why, sizeof why, "request.object: missing for a %s", opname);
    else
        why[0] = 0;
    if (why[0]) {
        int rc = admission_error(out, uid, 400, why);
        json_object_put(doc);
        return rc;
    }
    r.group = cu_jstr(kind, "group") ? cu_jstr(kind, "group") : "";
    r.version = cu_jstr(kind, "version");
    r.kind = cu_jstr(kind, "kind");
    r.ns = cu_jstr(req, "namespace");
    r.name = cu_jstr(req, "name");
    r.dry_run = cu_jas_true(cu_jget(req, "dryRun"));
    r.old_object = cu_jget(req, "oldObject");
    json_object *orig = cu_jget(req, "object");
    r.object = orig ? cu_jcopy(orig) : NULL;
    if (orig && !r.object) {
        int rc = admission_error(out, uid, 500, "out of memory");
        json_object_put(doc);
        return rc;
    }
    cu_wh_resp resp;
    cu_wh_resp_init(&resp);
    h->fn(env, &r, &resp);

    json_object *o = review("admission.k8s.io/v1", "AdmissionReview");
    json_object *ro = o ? cu_jchild(o, "response") : NULL;
    int code = 200;
    if (!ro) {
        code = admission_error(out, uid, 500, "out of memory");
        goto done;
    }
    cu_jset_str(ro, "uid", uid);
    json_object_object_add(ro, "allowed", json_object_new_boolean(resp.allowed ? 1 : 0));
    if (resp.allowed) {
        json_object_object_add(ro, "status", status_obj(200, NULL, cu_buf_str(&resp.message)));
    } else {
        int dc = resp.code >= 400 && resp.code <= 599 ? resp.code : 403;
        json_object_object_add(
            ro, "status",
            status_obj(dc, resp.reason ? resp.reason : "Forbidden", cu_buf_str(&resp.message)));
    }
    if (resp.warnings.n) {
        json_object *w = json_object_new_array();
        for (size_t i = 0; w && i < resp.warnings.n; i++) {
            const char *m = resp.warnings.msgs[i];
            if (strncmp(m, "warning: ", 9) == 0)
                m += 9;
            json_object_array_add(w, json_object_new_string(m));
        }
        json_object_object_add(ro, "warnings", w);
    }
    if (h->mutating && resp.allowed && orig) {
        json_object *ops = cu_json_diff(orig, r.object);
        if (!ops) {
            json_object_put(o);
            code = admission_error(out, uid, 500, "out of memory");
            goto done;
        }
        if (json_object_array_length(ops)) {
            const char *ps = json_object_to_json_string_ext(
                ops, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
            char *b64 = ps ? cu_base64_encode(ps, strlen(ps)) : NULL;
            if (!b64) {
                json_object_put(ops);
                json_object_put(o);
                code = admission_error(out, uid, 500, "out of memory");
                goto done;
            }
            cu_jset_str(ro, "patch", b64);
            cu_jset_str(ro, "patchType", "JSONPatch");
            free(b64);
        }
        json_object_put(ops);
    }
    code = put_body(out, o, 200);
done:
    cu_wh_resp_free(&resp);
    json_object_put(r.object);
    json_object_put(doc);
    return code;
}

/* ---- conversion ---- */

static int conversion_answer(cu_buf *out, const char *uid, json_object *objs, const char *fail,
                             int code)
{
    json_object *o = review("apiextensions.k8s.io/v1", "ConversionReview");
    json_object *resp = o ? cu_jchild(o, "response") : NULL;
    if (!resp) {
        json_object_put(o);
        json_object_put(objs);
        return put_body(out, NULL, 500);
    }
    cu_jset_str(resp, "uid", uid ? uid : "");
    json_object *res = json_object_new_object();
    if (fail) {
        json_object_put(objs);
        objs = json_object_new_array();
        cu_jset_str(res, "status", "Failure");
        cu_jset_str(res, "message", fail);
    } else {
        cu_jset_str(res, "status", "Success");
    }
    json_object_object_add(resp, "convertedObjects", objs);
    json_object_object_add(resp, "result", res);
    return put_body(out, o, code);
}

int cu_whrev_conversion(const char *data, size_t len, cu_buf *out)
{
    char why[400];
    json_object *req = NULL;
    const char *uid = NULL;
    json_object *doc = decode_review(data, len, "apiextensions.k8s.io/v1", "ConversionReview", &req,
                                     &uid, why, sizeof why);
    if (!doc)
        return conversion_answer(out, NULL, NULL, why, 400);
    const char *desired = cu_jstr(req, "desiredAPIVersion");
    json_object *objs = cu_jget(req, "objects");
    int rc;
    if (!desired || !*desired) {
        rc = conversion_answer(out, uid, NULL, "request.desiredAPIVersion: missing", 400);
    } else if (objs && !json_object_is_type(objs, json_type_array)) {
        rc = conversion_answer(out, uid, NULL, "request.objects: not an array", 400);
    } else {
        json_object *conv = json_object_new_array();
        const char *fail = NULL;
        cu_buf msg;
        cu_buf_init(&msg, 4096);
        for (size_t i = 0; conv && !fail && i < cu_jarr_len(objs); i++) {
            json_object *src = json_object_array_get_idx(objs, i), *dst = NULL;
            if (!json_object_is_type(src, json_type_object)) {
                cu_buf_printf(&msg, "request.objects[%zu]: not an object", i);
                fail = cu_buf_str(&msg);
                break;
            }
            cu_buf one;
            cu_buf_init(&one, 2048);
            cu_err e = cu_wh_convert(src, desired, &dst, &one);
            if (e != CU_OK || !dst) {
                const char *k = cu_jstr(src, "kind"), *n = cu_jpath_str(src, "metadata.name");
                cu_buf_printf(&msg, "%s %s: %s", k ? k : "object", n ? n : "(no name)",
                              one.len          ? cu_buf_str(&one)
                              : e == CU_ENOMEM ? "out of memory"
                                               : "cannot be converted");
                fail = cu_buf_str(&msg);
            } else {
                json_object_array_add(conv, dst);
            }
            cu_buf_free(&one);
        }
        if (!conv)
            fail = "out of memory";
        rc = conversion_answer(out, uid, conv, fail, 200);
        cu_buf_free(&msg);
    }
    json_object_put(doc);
    return rc;
}

/* ---- routing ---- */

int cu_whrev_serve(const cu_wh_env *env, const char *path, const char *ctype_in, const char *data,
                   size_t len, cu_buf *out, const char **ctype)
{
    *ctype = JSON_CT;
    int conv = path && strcmp(path, CU_WH_CONVERT_PATH) == 0;
    const cu_wh_hook *h = conv ? NULL : cu_wh_hook_by_path(path);
    if (!conv && !h) {
        *ctype = "text/plain; charset=utf-8";
        cu_buf_printf(out, "no webhook at %.200s\n", path ? path : "");
        return 404;
    }
    /* application/json, parameters allowed */
    size_t jl = sizeof(JSON_CT) - 1;
    if (!ctype_in || strncasecmp(ctype_in, JSON_CT, jl) != 0 ||
        (ctype_in[jl] && ctype_in[jl] != ';' && ctype_in[jl] != ' ')) {
        char why[200];
        snprintf(why, sizeof why, "Content-Type: expected application/json, got \"%.100s\"",
                 ctype_in ? ctype_in : "");
        return conv ? conversion_answer(out, NULL, NULL, why, 400)
                    : admission_error(out, NULL, 400, why);
    }
    return conv ? cu_whrev_conversion(data, len, out) : cu_whrev_admission(env, h, data, len, out);
}
