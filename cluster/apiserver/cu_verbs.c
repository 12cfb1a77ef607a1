/*
 * cu_verbs.c - the verbs (get, list, watch, create, update, patch, delete,
 * deletecollection, subresources) on the store, and field management
 * (cu_fields.c). See internal/cu_apiserver_int.h.
 */
#include "cu_apiserver.h"
#include "cu_authn.h"
#include "cu_objmeta.h"
#include "cu_doc.h"
#include "cu_fields.h"
#include "cu_patch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cu_apiserver_int.h"

/* ---------------- verbs ---------------- */

typedef struct req_ctx {
    cu_apiserver *a;
    const cu_api_req *r;
    const cu_rtype *rt;
    const cu_route *route;
    const char *ns; /* NULL for cluster-scoped or all namespaces */
    cu_api_resp *resp;
    /* a version that is not the storage version, of a CRD whose conversion
     * is a webhook (cu_crdconv.c): the storage type and the CRD (owned) */
    const cu_rtype *srt;
    json_object *crd;
    int adm; /* webhook configurations exist (cu_admission.c) */
} req_ctx;

/* ---- the store in the request's version ---- */

/* The type the store is called with. */
static const cu_rtype *store_rt(req_ctx *c) { return c->srt ? c->srt : c->rt; }

/* Converts *o (the store's, in the storage version) to the request's
 * version when that needs the CRD's webhook: CU_OK, or the failure in st. */
static cu_err conv_out(req_ctx *c, json_object **o, cu_status *st)
{
    if (!c->srt || !*o)
        return CU_OK;
    if (conv_one(c->a, c->rt, c->crd, o, c->rt->version, st) == 0)
        return CU_OK;
    json_object_put(*o);
    *o = NULL;
    return CU_EIO;
}

/* Converts a request body to the storage version (see conv_out). */
static cu_err conv_in(req_ctx *c, json_object **o, cu_status *st)
{
    if (!c->srt)
        return CU_OK;
    if (conv_one(c->a, c->rt, c->crd, o, c->srt->version, st) == 0)
        return CU_OK;
    return CU_EIO;
}

static cu_err vget(req_ctx *c, json_object **out, cu_status *st)
{
    cu_err e = cu_store_get(c->a->s, store_rt(c), c->ns, c->route->name, out, st);
    return e == CU_OK ? conv_out(c, out, st) : e;
}

/* PUT of the main resource or the subresource, in the request's version. */
static cu_err vupdate(req_ctx *c, const char *sub, json_object *body, json_object **out,
                      cu_status *st)
{
    if (conv_in(c, &body, st) != CU_OK) {
        json_object_put(body);
        return CU_EIO;
    }
    cu_err e = cu_store_update(c->a->s, store_rt(c), c->ns, c->route->name, sub, body, out, st);
    return e == CU_OK ? conv_out(c, out, st) : e;
}

/* Admission (cu_admission.c) of a create or update: the mutating webhooks
 * on *body, then the validating ones on it defaulted and validated. 0, or
 * -1 with the response set and *body put. */
static int admit(req_ctx *c, const char *op, json_object **body, json_object *old)
{
    if (!c->adm)
        return 0;
    const char *sub = c->route->sub[0] ? c->route->sub : NULL;
    const char *name = c->route->name[0] ? c->route->name : NULL;
    if (adm_mutate(c->a, c->r, c->rt, sub, op, c->ns, name, body, old, c->resp) != 0) {
        json_object_put(*body);
        *body = NULL;
        return -1;
    }
    json_object *v = cu_jcopy(*body);
    int rc = dry_validate(c->rt, v, c->resp) != 0 ||
             adm_validate(c->a, c->r, c->rt, sub, op, c->ns, name, v, old, c->resp) != 0;
    json_object_put(v);
    if (rc) {
        json_object_put(*body);
        *body = NULL;
        return -1;
    }
    return 0;
}

/* Accept: which Table version was asked for (0 = none). */
static int want_table(const char *accept)
{
    return accept && strstr(accept, "as=Table") && strstr(accept, "g=meta.k8s.io");
}

static int include_mode(const cu_api_req *r)
{
    const char *v = arg(r, "includeObject");
    if (v && strcmp(v, "None") == 0)
        return 0;
    if (v && strcmp(v, "Object") == 0)
        return 2;
    return 1;
}

static void respond_object(req_ctx *c, int code, json_object *obj)
{
    if (want_table(c->r->accept)) {
        json_object *t = cu_table_build(c->rt, obj, include_mode(c->r), 1, cu_clock_wall_ms());
        json_object_put(obj);
        resp_json(c->resp, code, t);
        snprintf(c->resp->content_type, sizeof c->resp->content_type, "%s", TABLE_CT);
        return;
    }
    resp_json(c->resp, code, obj);
}

static void list_opts(const cu_api_req *r, cu_list_opts *lo)
{
    memset(lo, 0, sizeof *lo);
    lo->label_selector = arg(r, "labelSelector");
    lo->field_selector = arg(r, "fieldSelector");
    char err[200];
    /* range-checked by query_ints; 0 or less: no limit, as kube-apiserver */
    if (cu_query_int("limit", arg(r, "limit"), INT64_MIN, INT64_MAX, &lo->limit, err, sizeof err) !=
            0 ||
        lo->limit < 0)
        lo->limit = 0;
    lo->cont = arg(r, "continue");
    lo->resource_version = arg(r, "resourceVersion");
    lo->rv_match = arg(r, "resourceVersionMatch");
    lo->send_initial_events = arg_true(r, "sendInitialEvents");
}

static void do_get(req_ctx *c)
{
    json_object *out = NULL;
    cu_status st;
    memset(&st, 0, sizeof st);
    if (vget(c, &out, &st) != CU_OK) {
        resp_st(c->resp, &st);
        return;
    }
    respond_object(c, 200, out);
}

static void do_watch(req_ctx *c, const cu_list_opts *lo)
{
    cu_status st;
    cu_watch *w = NULL;
    memset(&st, 0, sizeof st);
    if (cu_store_watch_open(c->a->s, store_rt(c), c->ns, lo, arg_true(c->r, "allowWatchBookmarks"),
                            &w, &st) != CU_OK) {
        resp_st(c->resp, &st);
        return;
    }
    watch_stream *ws = calloc(1, sizeof *ws);
    if (!ws) {
        cu_store_watch_close(w);
        resp_status(c->resp, 500, "InternalError", "out of memory");
        return;
    }
    ws->a = c->a;
    ws->w = w;
    ws->rt = c->rt;
    ws->crd = c->crd ? json_object_get(c->crd) : NULL;
    ws->table = want_table(c->r->accept);
    ws->include = include_mode(c->r);
    ws->first = 1;
    ws->fd = -1;
    int64_t to = 0;
    char err[200];
    /* range-checked by query_ints; past ~292 million years: no deadline. The
     * monotonic ms are truncated, hence + 1: a watch never ends before the
     * timeout the client asked for. */
    if (cu_query_int("timeoutSeconds", arg(c->r, "timeoutSeconds"), 0, INT64_MAX, &to, err,
                     sizeof err) == 0 &&
        to > 0 && to < (INT64_MAX - cu_clock_mono_ms()) / 1000 - 1)
        ws->deadline = cu_clock_mono_ms() + 1 + to * 1000;
    c->resp->code = 200;
    c->resp->watch = ws;
    snprintf(c->resp->content_type, sizeof c->resp->content_type, "application/json");
}

static void do_list(req_ctx *c)
{
    cu_list_opts lo;
    list_opts(c->r, &lo);
    if (arg_true(c->r, "watch")) {
        do_watch(c, &lo);
        return;
    }
    cu_status st;
    memset(&st, 0, sizeof st);
    if (!want_table(c->r->accept) && !c->srt) {
        /* plain JSON: the stored text as it is, no json-c trees (a LIST of
         * 10,000 objects is ~100x cheaper this way) */
        char *raw = NULL;
        size_t len = 0;
        if (cu_store_list_raw(c->a->s, c->rt, c->ns, &lo, &raw, &len, &st) != CU_OK) {
            resp_st(c->resp, &st);
            return;
        }
        c->resp->code = 200;
        free(c->resp->body);
        c->resp->body = raw;
        c->resp->body_len = len;
        snprintf(c->resp->content_type, sizeof c->resp->content_type, "application/json");
        return;
    }
    json_object *out = NULL;
    if (cu_store_list(c->a->s, store_rt(c), c->ns, &lo, &out, &st) != CU_OK ||
        (c->srt && conv_objects(c->a, c->rt, c->crd, cu_jget(out, "items"), c->rt->version, &st))) {
        json_object_put(out);
        resp_st(c->resp, &st);
        return;
    }
    if (c->srt) {
        char av[300];
        api_version_of(c->rt, av, sizeof av);
        cu_jset_str(out, "apiVersion", av);
    }
    respond_object(c, 200, out);
}

/* dryRun=All: answer with the validated object instead of storing it
 * (takes obj). */
static void respond_dry_run(req_ctx *c, int code, json_object *obj)
{
    if (dry_validate(c->rt, obj, c->resp) == 0)
        respond_object(c, code, obj);
    else
        json_object_put(obj);
}

static int namespace_exists(req_ctx *c)
{
    const cu_rtype *nrt = cu_store_rtype(c->a->s, "", "v1", "namespaces");
    json_object *o = NULL;
    cu_status st;
    memset(&st, 0, sizeof st);
    if (!nrt || !c->ns || cu_store_get(c->a->s, nrt, NULL, c->ns, &o, &st) == CU_OK) {
        json_object_put(o);
        return 1;
    }
    resp_st(c->resp, &st);
    return 0;
}

/* ---- field management (cu_fields.c) ---- */

static const char *status_sub(req_ctx *c);

static void field_oracle(const cu_rtype *rt, cu_field_oracle *o)
{
    if (rt->from_crd) {
        cu_fields_schema_oracle(rt->schema, o);
    } else {
        char av[200];
        api_version_of(rt, av, sizeof av);
        cu_patch_field_oracle(av, rt->kind, o);
    }
}

/* The part of the object a write reaches (the store drops the rest). */
static int write_scope(req_ctx *c, int create)
{
    if (status_sub(c))
        return CU_SCOPE_STATUS;
    if (create)
        return c->rt->from_crd && c->rt->status_sub ? CU_SCOPE_NO_STATUS : CU_SCOPE_ALL;
    return c->rt->status_sub ? CU_SCOPE_NO_STATUS : CU_SCOPE_ALL;
}

static void fm_request(req_ctx *c, cu_fm_req *fr, char *mgr, size_t mn, char *av, size_t avn,
                       char *now, size_t nown)
{
    const char *m = arg(c->r, "fieldManager");
    if (m && *m)
        copy_str(mgr, mn, m);
    else
        cu_fields_default_manager(c->r->user_agent, mgr, mn);
    api_version_of(c->rt, av, avn);
    time_t t = (time_t)(cu_clock_wall_ms() / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(now, nown, "%Y-%m-%dT%H:%M:%SZ", &tm);
    memset(fr, 0, sizeof *fr);
    fr->manager = mgr;
    fr->api_version = av;
    fr->subresource = status_sub(c);
    fr->now = now;
    fr->force = arg_true(c->r, "force");
}

/* Records an Update on nw (old NULL on create). Returns 0 or -1 with a
 * 422 set. */
static int track_update(req_ctx *c, json_object *old, json_object *nw, int create)
{
    cu_field_oracle o;
    cu_fm_req fr;
    char mgr[200], av[200], now[40], err[512];
    field_oracle(c->rt, &o);
    fm_request(c, &fr, mgr, sizeof mgr, av, sizeof av, now, sizeof now);
    if (cu_fields_update(old, nw, &o, write_scope(c, create), &fr, err, sizeof err) == 0)
        return 0;
    const char *name = cu_jstr(jmeta(nw), "name");
    resp_status(c->resp, 422, "Invalid", "%s \"%s\" is invalid: %s", c->rt->kind, name ? name : "",
                err);
    return -1;
}

/* Server-side apply of patch onto cur (NULL = create). Returns the new
 * object or NULL with the response (409 conflict, 422) set. */
static json_object *track_apply(req_ctx *c, json_object *cur, json_object *patch)
{
    cu_field_oracle o;
    cu_fm_req fr;
    cu_fm_conflict cf;
    char mgr[200], av[200], now[40], err[512] = "";
    field_oracle(c->rt, &o);
    fm_request(c, &fr, mgr, sizeof mgr, av, sizeof av, now, sizeof now);
    json_object *next =
        cu_fields_apply(cur, patch, &o, write_scope(c, cur == NULL), &fr, &cf, err, sizeof err);
    if (next)
        return next;
    if (cf.n) {
        cu_status st;
        memset(&st, 0, sizeof st);
        st.code = 409;
        copy_str(st.reason, sizeof st.reason, "Conflict");
        copy_str(st.message, sizeof st.message, cf.message);
        for (size_t i = 0; i < cf.ncauses && i < 32; i++) {
            copy_str(st.causes[i].type, sizeof st.causes[i].type, "FieldManagerConflict");
            copy_str(st.causes[i].field, sizeof st.causes[i].field, cf.causes[i].field);
            copy_str(st.causes[i].message, sizeof st.causes[i].message, cf.causes[i].message);
        }
        st.ncauses = cf.ncauses < 32 ? cf.ncauses : 32;
        resp_st(c->resp, &st);
        return NULL;
    }
    resp_status(c->resp, 422, "Invalid", "%s", err[0] ? err : "the apply failed");
    return NULL;
}

/* tracked: managedFields are already set (create by apply). */
static void do_create_ex(req_ctx *c, json_object *body, int tracked)
{
    cu_status st;
    memset(&st, 0, sizeof st);
    if (fix_identity(c->rt, body, c->ns, NULL, c->resp) != 0 ||
        (c->rt->namespaced && !namespace_exists(c)) ||
        check_unknown_fields(c->r, c->rt, body, c->resp) != 0 ||
        (!tracked && track_update(c, NULL, body, 1) != 0) ||
        adm_check_config(c->rt, body, c->resp) != 0) {
        json_object_put(body);
        return;
    }
    if (admit(c, "CREATE", &body, NULL) != 0)
        return;
    if (is_dry_run(c->r)) {
        respond_dry_run(c, 201, body);
        return;
    }
    json_object *out = NULL;
    if (conv_in(c, &body, &st) != CU_OK) {
        json_object_put(body);
        resp_st(c->resp, &st);
        return;
    }
    if (cu_store_create(c->a->s, store_rt(c), c->ns, body, &out, &st) != CU_OK ||
        conv_out(c, &out, &st) != CU_OK) {
        resp_st(c->resp, &st);
        return;
    }
    respond_object(c, 201, out);
}

static void do_create(req_ctx *c, json_object *body) { do_create_ex(c, body, 0); }

static const char *status_sub(req_ctx *c) { return c->route->sub[0] ? c->route->sub : NULL; }

static void do_update(req_ctx *c, json_object *body)
{
    cu_status st;
    memset(&st, 0, sizeof st);
    if (fix_identity(c->rt, body, c->ns, c->route->name, c->resp) != 0 ||
        check_unknown_fields(c->r, c->rt, body, c->resp) != 0) {
        json_object_put(body);
        return;
    }
    /* ownership is computed against the live object; a PUT carrying a
     * resourceVersion is checked against the same version by the store */
    json_object *cur = NULL;
    if (vget(c, &cur, &st) != CU_OK) {
        json_object_put(body);
        resp_st(c->resp, &st);
        return;
    }
    int bad = track_update(c, cur, body, 0) || adm_check_config(c->rt, body, c->resp) != 0;
    if (bad) {
        json_object_put(cur);
        json_object_put(body);
        return;
    }
    bad = admit(c, "UPDATE", &body, cur);
    json_object_put(cur);
    if (bad)
        return;
    if (is_dry_run(c->r)) {
        respond_dry_run(c, 200, body);
        return;
    }
    json_object *out = NULL;
    if (vupdate(c, status_sub(c), body, &out, &st) != CU_OK) {
        resp_st(c->resp, &st);
        return;
    }
    respond_object(c, 200, out);
}

enum { PATCH_MERGE = 1, PATCH_JSON, PATCH_STRATEGIC, PATCH_APPLY };

static void do_patch(req_ctx *c)
{
    const char *ct = c->r->content_type;
    int type = has_ct(ct, "application/merge-patch+json")             ? PATCH_MERGE
               : has_ct(ct, "application/json-patch+json")            ? PATCH_JSON
               : has_ct(ct, "application/strategic-merge-patch+json") ? PATCH_STRATEGIC
               : has_ct(ct, "application/apply-patch+yaml")           ? PATCH_APPLY
                                                                      : 0;
    if (!type || (type == PATCH_STRATEGIC && c->rt->from_crd)) {
        resp_status(c->resp, 415, "UnsupportedMediaType",
                    "the body of the request was in an unknown format - accepted media types "
                    "include: application/json-patch+json, application/merge-patch+json, "
                    "application/apply-patch+yaml%s",
                    c->rt->from_crd ? "" : ", application/strategic-merge-patch+json");
        return;
    }
    if (type == PATCH_APPLY && !(arg(c->r, "fieldManager") && *arg(c->r, "fieldManager"))) {
        resp_status(c->resp, 422, "Invalid",
                    "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is "
                    "required for apply patch");
        return;
    }
    json_object *patch = decode_body(c->r, c->resp, type == PATCH_APPLY);
    if (!patch)
        return;
    if ((type == PATCH_JSON) != json_object_is_type(patch, json_type_array) ||
        (type != PATCH_JSON && !json_object_is_type(patch, json_type_object))) {
        resp_status(c->resp, 400, "BadRequest", "%s",
                    type == PATCH_JSON ? "a JSON patch must be an array of operations"
                                       : "the patch must be a JSON object");
        json_object_put(patch);
        return;
    }
    if (type == PATCH_APPLY && objmeta_check(c->rt, patch, c->resp) != 0) {
        json_object_put(patch);
        return;
    }
    char av[200], err[512];
    api_version_of(c->rt, av, sizeof av);
    for (int attempt = 0; attempt < 8; attempt++) {
        json_object *cur = NULL, *next = NULL, *out = NULL;
        cu_status st;
        memset(&st, 0, sizeof st);
        err[0] = '\0';
        cu_err e = vget(c, &cur, &st);
        if (e == CU_ENOTFOUND && type == PATCH_APPLY && !status_sub(c)) {
            json_object *obj = track_apply(c, NULL, patch);
            json_object_put(patch);
            if (obj)
                do_create_ex(c, obj, 1);
            return;
        }
        if (e != CU_OK) {
            resp_st(c->resp, &st);
            json_object_put(patch);
            return;
        }
        switch (type) {
        case PATCH_MERGE: next = cu_merge_patch(cur, patch, err, sizeof err); break;
        case PATCH_JSON: next = cu_json_patch(cur, patch, err, sizeof err); break;
        case PATCH_STRATEGIC:
            next = cu_strategic_merge_patch(cur, patch, av, c->rt->kind, err, sizeof err);
            break;
        default:
            next = track_apply(c, cur, patch);
            if (!next) {
                json_object_put(cur);
                json_object_put(patch);
                return;
            }
            break;
        }
        if (!next) {
            json_object_put(cur);
            json_object_put(patch);
            resp_status(c->resp, 422, "Invalid", "%s", err[0] ? err : "the patch failed");
            return;
        }
        if (check_patched(c->rt, cur, next, c->route->name, c->resp) != 0) {
            json_object_put(cur);
            json_object_put(next);
            json_object_put(patch);
            return;
        }
        const char *crv = cu_jstr(cu_jget(cur, "metadata"), "resourceVersion");
        json_object *nm = jmeta(next);
        const char *nrv = cu_jstr(nm, "resourceVersion");
        int explicit_rv = nrv && crv && strcmp(nrv, crv) != 0;
        if (!nrv && crv)
            cu_jset_str(nm, "resourceVersion", crv);
        drop_empty_builtin(c->rt, next);
        if (type != PATCH_APPLY && track_update(c, cur, next, 0) != 0) {
            json_object_put(cur);
            json_object_put(next);
            json_object_put(patch);
            return;
        }
        if (fix_identity(c->rt, next, c->ns, c->route->name, c->resp) != 0 ||
            check_unknown_fields(c->r, c->rt, next, c->resp) != 0 ||
            adm_check_config(c->rt, next, c->resp) != 0) {
            json_object_put(cur);
            json_object_put(next);
            json_object_put(patch);
            return;
        }
        int denied = admit(c, "UPDATE", &next, cur);
        json_object_put(cur);
        if (denied) {
            json_object_put(patch);
            return;
        }
        if (is_dry_run(c->r)) {
            json_object_put(patch);
            respond_dry_run(c, 200, next);
            return;
        }
        e = vupdate(c, status_sub(c), next, &out, &st);
        if (e == CU_ECONFLICT && !explicit_rv && attempt < 7)
            continue;
        json_object_put(patch);
        if (e != CU_OK) {
            resp_st(c->resp, &st);
            return;
        }
        respond_object(c, 200, out);
        return;
    }
}

/* DeleteOptions from the query and the body. Returns 0, or -1 with a 400
 * set when the body is not a JSON object. */
static int delete_options(const cu_api_req *r, cu_api_resp *resp, const char **prop, char *rv,
                          size_t rvn, int *dry)
{
    *prop = arg(r, "propagationPolicy");
    *dry = is_dry_run(r);
    rv[0] = '\0';
    if (!r->body || !r->body_len)
        return 0;
    char err[300];
    int is_null = 0;
    json_object *o = cu_json_parse_checked(r->body, r->body_len, &is_null, err, sizeof err);
    if (is_null)
        return 0;
    if (!o || !json_object_is_type(o, json_type_object)) {
        resp_status(resp, 400, "BadRequest", "the DeleteOptions body is not a JSON object: %s",
                    o ? json_type_to_name(json_object_get_type(o)) : err);
        json_object_put(o);
        return -1;
    }
    static const char *const props[3] = { "Background", "Foreground", "Orphan" };
    const char *p = cu_jstr(o, "propagationPolicy");
    for (int i = 0; p && i < 3; i++)
        if (strcmp(p, props[i]) == 0)
            *prop = props[i];
    json_object *orphan = cu_jget(o, "orphanDependents");
    if (orphan && json_object_get_boolean(orphan))
        *prop = props[2];
    const char *prv = cu_jstr(cu_jget(o, "preconditions"), "resourceVersion");
    if (prv)
        snprintf(rv, rvn, "%s", prv);
    json_object *dr = cu_jget(o, "dryRun");
    for (size_t i = 0; i < jlen(dr); i++) {
        const char *d = json_object_get_string(json_object_array_get_idx(dr, i));
        if (d && strcmp(d, "All") == 0)
            *dry = 1;
    }
    json_object_put(o);
    return 0;
}

/* Pods and Namespaces answer a DELETE with the object, as kube-apiserver's
 * registries for them do (ReturnDeletedObject); other kinds with a Success
 * Status once the object is gone, and with the object while finalizers keep
 * it. */
static int returns_deleted_object(const cu_rtype *rt)
{
    return !rt->group[0] && (!strcmp(rt->resource, "pods") || !strcmp(rt->resource, "namespaces"));
}

/* The Success Status of a DELETE that removed obj at once (takes obj). */
static void respond_deleted(req_ctx *c, json_object *obj)
{
    json_object *st = json_object_new_object(), *d = json_object_new_object();
    json_object *m = cu_jget(obj, "metadata");
    cu_jset_str(st, "kind", "Status");
    cu_jset_str(st, "apiVersion", "v1");
    json_object_object_add(st, "metadata", json_object_new_object());
    cu_jset_str(st, "status", "Success");
    cu_jset_str(d, "name", c->route->name);
    if (c->rt->group[0])
        cu_jset_str(d, "group", c->rt->group);
    cu_jset_str(d, "kind", c->rt->resource);
    if (cu_jstr(m, "uid"))
        cu_jset_str(d, "uid", cu_jstr(m, "uid"));
    json_object_object_add(st, "details", d);
    json_object_put(obj);
    resp_json(c->resp, 200, st);
}

/* Whether obj (the answer of a delete) is still stored: finalizers hold it. */
static int still_stored(req_ctx *c, json_object *obj)
{
    json_object *cur = NULL;
    cu_status st;
    memset(&st, 0, sizeof st);
    if (cu_store_get(c->a->s, c->rt, c->ns, c->route->name, &cur, &st) != CU_OK)
        return 0;
    const char *u1 = cu_jstr(cu_jget(obj, "metadata"), "uid");
    const char *u2 = cu_jstr(cu_jget(cur, "metadata"), "uid");
    int same = u1 && u2 && !strcmp(u1, u2);
    json_object_put(cur);
    return same;
}

static void do_delete(req_ctx *c)
{
    const char *prop;
    char rv[64];
    int dry;
    if (delete_options(c->r, c->resp, &prop, rv, sizeof rv, &dry) != 0)
        return;
    json_object *out = NULL;
    cu_status st;
    memset(&st, 0, sizeof st);
    if (c->adm) { /* the webhooks see the object as it is (oldObject) */
        json_object *cur = NULL, *none = NULL;
        if (vget(c, &cur, &st) != CU_OK) {
            resp_st(c->resp, &st);
            return;
        }
        const char *sub = NULL;
        int denied = adm_mutate(c->a, c->r, c->rt, sub, "DELETE", c->ns, c->route->name, &none, cur,
                                c->resp) != 0 ||
                     adm_validate(c->a, c->r, c->rt, sub, "DELETE", c->ns, c->route->name, NULL,
                                  cur, c->resp) != 0;
        json_object_put(none);
        json_object_put(cur);
        if (denied)
            return;
    }
    if (dry) {
        if (vget(c, &out, &st) != CU_OK) {
            resp_st(c->resp, &st);
            return;
        }
        if (returns_deleted_object(c->rt) ||
            cu_jarr_len(cu_jget(cu_jget(out, "metadata"), "finalizers")) > 0)
            respond_object(c, 200, out);
        else
            respond_deleted(c, out);
        return;
    }
    if (cu_store_delete(c->a->s, store_rt(c), c->ns, c->route->name, prop, rv[0] ? rv : NULL, &out,
                        &st) != CU_OK ||
        conv_out(c, &out, &st) != CU_OK) {
        resp_st(c->resp, &st);
        return;
    }
    cu_store_gc(c->a->s);
    if (returns_deleted_object(c->rt) || still_stored(c, out)) {
        json_object *m = cu_jget(out, "metadata");
        if (m && !cu_jget(m, "deletionTimestamp") && !strcmp(c->rt->resource, "pods")) {
            /* a pod deleted at once went through a graceful delete of 0 s */
            char now[40];
            time_t t = (time_t)(cu_clock_wall_ms() / 1000);
            struct tm tm;
            gmtime_r(&t, &tm);
            strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", &tm);
            cu_jset_str(m, "deletionTimestamp", now);
            json_object_object_add(m, "deletionGracePeriodSeconds", json_object_new_int64(0));
        }
        respond_object(c, 200, out);
    } else {
        respond_deleted(c, out);
    }
}

static void do_delete_collection(req_ctx *c)
{
    const char *prop;
    char rv[64];
    int dry;
    cu_list_opts lo;
    if (delete_options(c->r, c->resp, &prop, rv, sizeof rv, &dry) != 0)
        return;
    list_opts(c->r, &lo);
    lo.limit = 0;
    lo.cont = NULL;
    json_object *list = NULL;
    cu_status st;
    memset(&st, 0, sizeof st);
    if (cu_store_list(c->a->s, c->rt, c->ns, &lo, &list, &st) != CU_OK) {
        resp_st(c->resp, &st);
        return;
    }
    json_object *items = cu_jget(list, "items"), *done = json_object_new_array();
    for (size_t i = 0; !dry && i < jlen(items); i++) {
        json_object *m = cu_jget(json_object_array_get_idx(items, i), "metadata"), *out = NULL;
        memset(&st, 0, sizeof st);
        if (cu_store_delete(c->a->s, c->rt, c->rt->namespaced ? cu_jstr(m, "namespace") : NULL,
                            cu_jstr(m, "name"), prop, NULL, &out, &st) == CU_OK)
            json_object_array_add(done, out);
    }
    if (!dry) {
        json_object_object_add(list, "items", done);
        cu_store_gc(c->a->s);
    } else {
        json_object_put(done);
    }
    respond_object(c, 200, list);
}

/* POST pods/NAME/binding: what the scheduler does to place a pod. */
static void do_binding(req_ctx *c, json_object *body)
{
    const char *node = cu_jstr(cu_jget(body, "target"), "name");
    cu_status st;
    memset(&st, 0, sizeof st);
    if (!node || !*node) {
        json_object_put(body);
        resp_status(c->resp, 400, "BadRequest", "Binding \"%s\": target.name: Required value",
                    c->route->name);
        return;
    }
    json_object *pod = NULL, *out = NULL;
    if (cu_store_get(c->a->s, c->rt, c->ns, c->route->name, &pod, &st) != CU_OK) {
        json_object_put(body);
        resp_st(c->resp, &st);
        return;
    }
    json_object *spec = cu_jget(pod, "spec");
    if (!spec) {
        spec = json_object_new_object();
        json_object_object_add(pod, "spec", spec);
    }
    const char *cur = cu_jstr(spec, "nodeName");
    if (cur && *cur) {
        resp_status(c->resp, 409, "Conflict", "pod %s is already assigned to node \"%s\"",
                    c->route->name, cur);
        json_object_put(pod);
        json_object_put(body);
        return;
    }
    cu_jset_str(spec, "nodeName", node);
    json_object_put(body);
    if (cu_store_update(c->a->s, c->rt, c->ns, c->route->name, NULL, pod, &out, &st) != CU_OK) {
        resp_st(c->resp, &st);
        return;
    }
    json_object_put(out);
    json_object *ok = json_object_new_object();
    cu_jset_str(ok, "kind", "Status");
    cu_jset_str(ok, "apiVersion", "v1");
    json_object_object_add(ok, "metadata", json_object_new_object());
    cu_jset_str(ok, "status", "Success");
    json_object_object_add(ok, "code", json_object_new_int(201));
    resp_json(c->resp, 201, ok);
}

/* Every integer query parameter the server reads (kube-apiserver decodes
 * them as int64 and refuses the request when that fails): 0, or -1 with a
 * 400 BadRequest naming the parameter. */
static int query_ints(const cu_api_req *r, cu_api_resp *resp)
{
    static const struct {
        const char *name;
        int64_t min;
    } params[] = { { "limit", INT64_MIN },
                   { "timeoutSeconds", 0 },
                   { "gracePeriodSeconds", INT64_MIN } };
    for (size_t i = 0; i < sizeof params / sizeof *params; i++) {
        char err[300];
        int64_t v;
        if (cu_query_int(params[i].name, arg(r, params[i].name), params[i].min, INT64_MAX, &v, err,
                         sizeof err) != 0) {
            resp_status(resp, 400, "BadRequest", "%s", err);
            return -1;
        }
    }
    return 0;
}

void method_not_allowed(cu_api_resp *resp)
{
    cu_status st;
    memset(&st, 0, sizeof st);
    cu_status_set(&st, 405, "MethodNotAllowed",
                  "the server does not allow this method on the requested resource");
    st.empty_details = 1;
    resp_st(resp, &st);
}

/* dryRun other than All: kube-apiserver refuses the request's options
 * with 422 (the object is neither stored nor checked). 0, or -1 with the
 * answer set. */
static int check_dry_run_arg(const cu_api_req *r, cu_api_resp *resp)
{
    const char *d = arg(r, "dryRun");
    if (!d || strcmp(d, "All") == 0)
        return 0;
    const char *m = r->method, *kind = NULL;
    if (strcmp(m, "POST") == 0)
        kind = "CreateOptions";
    else if (strcmp(m, "PUT") == 0)
        kind = "UpdateOptions";
    else if (strcmp(m, "PATCH") == 0)
        kind = "PatchOptions";
    else if (strcmp(m, "DELETE") == 0)
        kind = "DeleteOptions";
    if (!kind)
        return 0;
    cu_status st;
    memset(&st, 0, sizeof st);
    char q[200];
    size_t n = strlen(d);
    snprintf(q, sizeof q, "%.*s", (int)(n > 150 ? 150 : n), d);
    cu_status_set(&st, 422, "Invalid",
                  "%s.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: [\"%s\"]: supported "
                  "values: \"All\"",
                  kind, q);
    copy_str(st.kind, sizeof st.kind, kind);
    copy_str(st.group, sizeof st.group, "meta.k8s.io");
    copy_str(st.causes[0].type, sizeof st.causes[0].type, "FieldValueNotSupported");
    copy_str(st.causes[0].field, sizeof st.causes[0].field, "dryRun");
    snprintf(st.causes[0].message, sizeof st.causes[0].message,
             "Unsupported value: [\"%s\"]: supported values: \"All\"", q);
    st.ncauses = 1;
    resp_st(resp, &st);
    return -1;
}

static void serve(req_ctx *c_);

void handle_resource(cu_apiserver *a, const cu_api_req *r, const cu_route *rt_, cu_api_resp *resp)
{
    const cu_rtype *rt = cu_store_rtype(a->s, rt_->group, rt_->version, rt_->resource);
    if (!rt || strcmp(rt->resource, rt_->resource) != 0 || (rt_->ns[0] && !rt->namespaced)) {
        resp_not_found_path(resp);
        return;
    }
    if (query_ints(r, resp) != 0 || check_dry_run_arg(r, resp) != 0)
        return;
    if (rt->deprecation)
        resp_add_warning(resp, rt->deprecation);
    req_ctx c = {
        a, r, rt, rt_, rt->namespaced && rt_->ns[0] ? rt_->ns : NULL, resp, NULL, NULL, 0
    };
    c.srt = conv_storage(a, rt, &c.crd);
    c.adm = strcmp(r->method, "GET") != 0 && adm_has_webhooks(a, rt);
    serve(&c);
    json_object_put(c.crd);
}

/* The verbs of handle_resource, its checks done. */
static void serve(req_ctx *c_)
{
    req_ctx c = *c_;
    const cu_api_req *r = c.r;
    const cu_route *rt_ = c.route;
    const cu_rtype *rt = c.rt;
    cu_api_resp *resp = c.resp;
    const char *m = r->method;
    const char *sub = rt_->sub;
    if (sub[0]) {
        if (strcmp(sub, "binding") == 0 && strcmp(rt->resource, "pods") == 0 && !*rt->group) {
            if (strcmp(m, "POST") != 0) {
                method_not_allowed(resp);
                return;
            }
            json_object *body = decode_body(r, resp, 0);
            if (body)
                do_binding(&c, body);
            return;
        }
        if (strcmp(sub, "status") != 0 || !has_status(rt)) {
            resp_not_found_path(resp);
            return;
        }
        if (strcmp(m, "GET") == 0)
            do_get(&c);
        else if (strcmp(m, "PUT") == 0) {
            json_object *body = decode_body(r, resp, 0);
            if (body)
                do_update(&c, body);
        } else if (strcmp(m, "PATCH") == 0)
            do_patch(&c);
        else
            method_not_allowed(resp);
        return;
    }
    if (!rt_->name[0]) {
        if (strcmp(m, "GET") == 0)
            do_list(&c);
        else if (strcmp(m, "POST") == 0) {
            if (rt->namespaced && !c.ns) {
                method_not_allowed(resp);
                return;
            }
            json_object *body = decode_body(r, resp, 0);
            if (body)
                do_create(&c, body);
        } else if (strcmp(m, "DELETE") == 0)
            do_delete_collection(&c);
        else
            method_not_allowed(resp);
        return;
    }
    if (rt->namespaced && !c.ns) {
        resp_not_found_path(resp);
        return;
    }
    if (strcmp(m, "GET") == 0)
        do_get(&c);
    else if (strcmp(m, "PUT") == 0) {
        json_object *body = decode_body(r, resp, 0);
        if (body)
            do_update(&c, body);
    } else if (strcmp(m, "PATCH") == 0)
        do_patch(&c);
    else if (strcmp(m, "DELETE") == 0)
        do_delete(&c);
    else
        method_not_allowed(resp);
}
