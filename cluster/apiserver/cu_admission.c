/*
 * cu_admission.c - admission webhooks, as kube-apiserver calls them:
 * every admissionregistration.k8s.io/v1 MutatingWebhookConfiguration and
 * ValidatingWebhookConfiguration (in name order, their webhooks in order)
 * whose rules (apiGroups, apiVersions, operations, resources with
 * subresources and `*`, scope), namespaceSelector (the Namespace's labels;
 * cluster-scoped objects always match, a Namespace is matched by its own)
 * and objectSelector (the new or the old object's labels) match the write
 * gets an AdmissionReview v1 (cu_whcall.c). matchPolicy Equivalent
 * (the default) also matches a rule naming another served version of the
 * same custom resource: the webhook then gets the object in that version
 * (converted by the CRD's conversion, cu_crdconv.c) and its patch is
 * converted back. Mutating webhooks run first, one after another, their
 * JSONPatch applied (cu_patch.c); a webhook with reinvocationPolicy
 * IfNeeded is called once more when a later one changed the object.
 * Validating webhooks see the object after defaulting and schema
 * validation. A denial is a Status with the webhook's code ("admission
 * webhook NAME denied the request: MSG"); a failed call with failurePolicy
 * Fail (the default) is kube-apiserver's InternalError, with Ignore it is
 * skipped; warnings become Warning headers; a dry run needs sideEffects
 * None or NoneOnDryRun. Webhook configurations themselves are never sent
 * to webhooks, and are validated as kube-apiserver does where it is
 * cheap. See internal/cu_apiserver_int.h.
 */
#include "cu_apiserver.h"
#include "cu_authn.h"
#include "cu_base64.h"
#include "cu_objects.h"
#include "cu_objmeta.h"
#include "cu_patch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_apiserver_int.h"

#define ADM_GROUP "admissionregistration.k8s.io"
#define TIMEOUT_DEFAULT 10L

static int streq(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }

/* 1 if the string array arr holds s or "*". */
static int has_or_star(json_object *arr, const char *s)
{
    for (size_t i = 0; i < cu_jarr_len(arr); i++) {
        const char *v = json_object_get_string(json_object_array_get_idx(arr, i));
        if (streq(v, "*") || streq(v, s))
            return 1;
    }
    return 0;
}

/* A rule's resources against resource[/sub]. */
static int resource_matches(json_object *arr, const char *resource, const char *sub)
{
    for (size_t i = 0; i < cu_jarr_len(arr); i++) {
        const char *v = json_object_get_string(json_object_array_get_idx(arr, i));
        if (!v)
            continue;
        const char *sl = strchr(v, '/');
        size_t rl = sl ? (size_t)(sl - v) : strlen(v);
        int rok = (rl == 1 && v[0] == '*') || (strlen(resource) == rl && !strncmp(v, resource, rl));
        if (!rok)
            continue;
        if (!sl ? !sub : (streq(sl + 1, "*") || streq(sl + 1, sub ? sub : "")))
            return 1;
    }
    return 0;
}

/* The request, as the rules see it. */
typedef struct adm_ctx {
    cu_apiserver *a;
    const cu_api_req *r;
    const cu_rtype *rt;
    const char *sub, *op, *ns, *name;
    json_object *old;
    int dry;
    cu_api_resp *resp;
} adm_ctx;

/* The version of the webhook's rules the request matches: rt's own, an
 * equivalent served version of the same custom resource (matchPolicy
 * Equivalent), or NULL for no match. */
static const cu_rtype *rules_match(adm_ctx *c, json_object *wh)
{
    const cu_rtype *rt = c->rt, *equiv = NULL;
    const char *policy = cu_jstr(wh, "matchPolicy");
    int exact_only = streq(policy, "Exact");
    json_object *rules = cu_jget(wh, "rules");
    for (size_t i = 0; i < cu_jarr_len(rules); i++) {
        json_object *ru = json_object_array_get_idx(rules, i);
        const char *scope = cu_jstr(ru, "scope");
        if (!has_or_star(cu_jget(ru, "operations"), c->op) ||
            !has_or_star(cu_jget(ru, "apiGroups"), rt->group) ||
            !resource_matches(cu_jget(ru, "resources"), rt->resource, c->sub))
            continue;
        if (scope && ((streq(scope, "Cluster") && rt->namespaced) ||
                      (streq(scope, "Namespaced") && !rt->namespaced)))
            continue;
        json_object *vers = cu_jget(ru, "apiVersions");
        if (has_or_star(vers, rt->version))
            return rt;
        for (size_t j = 0; !exact_only && !equiv && rt->from_crd && j < cu_jarr_len(vers); j++) {
            const char *v = json_object_get_string(json_object_array_get_idx(vers, j));
            const cu_rtype *o = v ? cu_store_rtype(c->a->s, rt->group, v, rt->resource) : NULL;
            if (o && o != rt && streq(o->resource, rt->resource))
                equiv = o;
        }
    }
    return equiv;
}

/* The labels of o as cu_kvs (items malloc'ed, strings borrowed from o). */
static cu_kvs labels_of(json_object *o)
{
    cu_kvs k = { 0, NULL };
    json_object *l = cu_jget(cu_jget(o, "metadata"), "labels");
    if (!json_object_is_type(l, json_type_object) || !json_object_object_length(l))
        return k;
    k.items = calloc((size_t)json_object_object_length(l), sizeof *k.items);
    json_object_object_foreach (l, key, val) {
        if (k.items && json_object_is_type(val, json_type_string)) {
            k.items[k.n].key = key;
            k.items[k.n++].value = json_object_get_string(val);
        }
    }
    return k;
}

/* A metav1.LabelSelector (JSON) against the labels of o (NULL: none);
 * absent or {} matches everything. Matched by cu_labelsel_matches. */
static int selector_matches(json_object *sel, json_object *o)
{
    if (!json_object_is_type(sel, json_type_object))
        return 1;
    cu_labelsel ls;
    memset(&ls, 0, sizeof ls);
    json_object *mlj = cu_jget(sel, "matchLabels");
    json_object *fake = json_object_new_object(), *md = json_object_new_object();
    json_object_object_add(md, "labels", json_object_get(mlj));
    json_object_object_add(fake, "metadata", md);
    ls.match_labels = labels_of(fake);
    json_object *ex = cu_jget(sel, "matchExpressions");
    size_t ne = cu_jarr_len(ex);
    ls.exprs = ne ? calloc(ne, sizeof *ls.exprs) : NULL;
    static const char *const ops[] = { "In", "NotIn", "Exists", "DoesNotExist" };
    static const cu_selop opv[] = { CU_SEL_IN, CU_SEL_NOTIN, CU_SEL_EXISTS, CU_SEL_DOESNOTEXIST };
    int ok = 1;
    for (size_t i = 0; ls.exprs && i < ne; i++) {
        json_object *e = json_object_array_get_idx(ex, i);
        cu_selreq *q = &ls.exprs[ls.nexpr];
        q->key = cu_jstr(e, "key");
        const char *op = cu_jstr(e, "operator");
        int found = 0;
        for (int j = 0; j < 4; j++)
            if (streq(op, ops[j])) {
                q->op = opv[j];
                found = 1;
            }
        if (!found || !q->key) {
            ok = 0; /* kube-apiserver refuses such a selector; it matches nothing */
            continue;
        }
        json_object *vals = cu_jget(e, "values");
        q->values.n = cu_jarr_len(vals);
        q->values.items = q->values.n ? calloc(q->values.n, sizeof(char *)) : NULL;
        for (size_t j = 0; q->values.items && j < q->values.n; j++)
            q->values.items[j] = json_object_get_string(json_object_array_get_idx(vals, j));
        ls.nexpr++;
    }
    cu_kvs labels = labels_of(o);
    int m = ok && cu_labelsel_matches(&ls, &labels);
    free(labels.items);
    for (size_t i = 0; i < ls.nexpr; i++)
        free(ls.exprs[i].values.items);
    free(ls.exprs);
    free(ls.match_labels.items);
    json_object_put(fake);
    return m;
}

static int namespace_matches(adm_ctx *c, json_object *wh, json_object *obj)
{
    json_object *sel = cu_jget(wh, "namespaceSelector");
    if (!json_object_is_type(sel, json_type_object) || !json_object_object_length(sel))
        return 1;
    if (!c->rt->group[0] && streq(c->rt->resource, "namespaces"))
        return selector_matches(sel, obj ? obj : c->old);
    if (!c->rt->namespaced || !c->ns)
        return 1;
    const cu_rtype *nrt = cu_store_rtype(c->a->s, "", "v1", "namespaces");
    json_object *ns = NULL;
    cu_status st;
    memset(&st, 0, sizeof st);
    if (nrt)
        cu_store_get(c->a->s, nrt, NULL, c->ns, &ns, &st);
    int m = selector_matches(sel, ns);
    json_object_put(ns);
    return m;
}

static int object_matches(adm_ctx *c, json_object *wh, json_object *obj)
{
    json_object *sel = cu_jget(wh, "objectSelector");
    if (!json_object_is_type(sel, json_type_object) || !json_object_object_length(sel))
        return 1;
    return (obj && selector_matches(sel, obj)) || (c->old && selector_matches(sel, c->old));
}

static json_object *gvk(const char *g, const char *v, const char *key, const char *k)
{
    json_object *o = json_object_new_object();
    cu_jset_str(o, "group", g);
    cu_jset_str(o, "version", v);
    cu_jset_str(o, key, k);
    return o;
}

/* Converts o (taken) from rt's resource to version when the CRD needs a
 * webhook for it (else rewrites apiVersion). NULL with st set on failure. */
static json_object *to_version(adm_ctx *c, const cu_rtype *vt, json_object *o, cu_status *st)
{
    if (!o)
        return NULL;
    json_object *crd = NULL;
    const cu_rtype *srt = conv_storage(c->a, c->rt, &crd);
    if (!srt) { /* the CRD's None conversion, or a storage version on either side */
        const cu_rtype *vsrt = conv_storage(c->a, vt, &crd);
        if (!vsrt) {
            char av[300];
            api_version_of(vt, av, sizeof av);
            cu_jset_str(o, "apiVersion", av);
            return o;
        }
    }
    if (conv_one(c->a, vt, crd, &o, vt->version, st) != 0) {
        json_object_put(o);
        o = NULL;
    }
    json_object_put(crd);
    return o;
}

/* The review for webhook wh, matched in version vt. */
static json_object *review_for(adm_ctx *c, const cu_rtype *vt, json_object *obj, json_object *old,
                               char *uid, size_t un)
{
    json_object *rv = json_object_new_object(), *q = json_object_new_object();
    cu_jset_str(rv, "apiVersion", "admission.k8s.io/v1");
    cu_jset_str(rv, "kind", "AdmissionReview");
    wh_uid(uid, un);
    cu_jset_str(q, "uid", uid);
    json_object_object_add(q, "kind", gvk(vt->group, vt->version, "kind", vt->kind));
    json_object_object_add(q, "resource", gvk(vt->group, vt->version, "resource", vt->resource));
    if (c->sub)
        cu_jset_str(q, "subResource", c->sub);
    json_object_object_add(q, "requestKind",
                           gvk(c->rt->group, c->rt->version, "kind", c->rt->kind));
    json_object_object_add(q, "requestResource",
                           gvk(c->rt->group, c->rt->version, "resource", c->rt->resource));
    if (c->sub)
        cu_jset_str(q, "requestSubResource", c->sub);
    const char *name = c->name ? c->name : cu_jstr(cu_jget(obj, "metadata"), "name");
    if (name && *name)
        cu_jset_str(q, "name", name);
    if (c->ns && *c->ns)
        cu_jset_str(q, "namespace", c->ns);
    cu_jset_str(q, "operation", c->op);
    json_object_object_add(q, "userInfo", agg_requester(c->a, c->r));
    json_object_object_add(q, "object", obj ? json_object_get(obj) : NULL);
    json_object_object_add(q, "oldObject", old ? json_object_get(old) : NULL);
    json_object_object_add(q, "dryRun", json_object_new_boolean(c->dry));
    json_object *opts = json_object_new_object();
    cu_jset_str(opts, "kind",
                streq(c->op, "CREATE")   ? "CreateOptions"
                : streq(c->op, "DELETE") ? "DeleteOptions"
                                         : "UpdateOptions");
    cu_jset_str(opts, "apiVersion", "meta.k8s.io/v1");
    json_object_object_add(q, "options", opts);
    json_object_object_add(rv, "request", q);
    return rv;
}

/* kube-apiserver's NewInternalError: the message, and one cause with it. */
static void internal_error(cu_api_resp *resp, const char *fmt, const char *name, const char *err)
{
    cu_status st;
    memset(&st, 0, sizeof st);
    char m[1000];
    snprintf(m, sizeof m, fmt, name, err);
    cu_status_set(&st, 500, "InternalError", "Internal error occurred: %s", m);
    copy_str(st.causes[0].message, sizeof st.causes[0].message, m);
    st.ncauses = 1;
    resp_st(resp, &st);
}

/* What one call gave: 0 allowed (*obj maybe patched; *changed set), -1
 * with the response set (a denial or a failure under Fail). */
static int call_one(adm_ctx *c, json_object *wh, const cu_rtype *vt, int mutating,
                    json_object **obj, int *changed)
{
    const char *name = cu_jstr(wh, "name");
    name = name ? name : "";
    const char *se = cu_jstr(wh, "sideEffects");
    if (c->dry && !streq(se, "None") && !streq(se, "NoneOnDryRun")) {
        resp_status(c->resp, 400, "BadRequest", "admission webhook \"%s\" does not support dry run",
                    name);
        return -1;
    }
    int ignore = streq(cu_jstr(wh, "failurePolicy"), "Ignore");
    long timeout = (long)cu_jas_int64(cu_jget(wh, "timeoutSeconds"), TIMEOUT_DEFAULT);
    if (timeout < 1 || timeout > 30)
        timeout = TIMEOUT_DEFAULT;
    cu_status st;
    memset(&st, 0, sizeof st);
    /* the objects in the version the rule names */
    json_object *vo = NULL, *vold = NULL;
    if (*obj)
        vo = vt == c->rt ? json_object_get(*obj) : to_version(c, vt, cu_jcopy(*obj), &st);
    if (c->old && !st.code)
        vold = vt == c->rt ? json_object_get(c->old) : to_version(c, vt, cu_jcopy(c->old), &st);
    char err[1400] = "", uid[64];
    json_object *ans = NULL;
    if (st.code) {
        snprintf(err, sizeof err, "%s", st.message);
    } else {
        json_object *rv = review_for(c, vt, vo, vold, uid, sizeof uid);
        ans = wh_post(c->a, cu_jget(wh, "clientConfig"), timeout, rv, err, sizeof err);
        json_object_put(rv);
    }
    json_object_put(vold);
    json_object *r = cu_jget(ans, "response");
    if (ans && !err[0] && !streq(cu_jstr(r, "uid"), uid))
        snprintf(err, sizeof err,
                 "received invalid webhook response: expected response.uid=\"%s\", got \"%s\"", uid,
                 cu_jstr(r, "uid") ? cu_jstr(r, "uid") : "");
    if (err[0]) {
        json_object_put(ans);
        json_object_put(vo);
        if (ignore) {
            if (c->a->verbose)
                fprintf(stderr, "cueue cluster: webhook %s failed open: %s\n", name, err);
            return 0;
        }
        internal_error(c->resp, "failed calling webhook \"%s\": %s", name, err);
        return -1;
    }
    json_object *warns = cu_jget(r, "warnings");
    for (size_t i = 0; i < cu_jarr_len(warns); i++)
        resp_add_warning(c->resp, json_object_get_string(json_object_array_get_idx(warns, i)));
    if (!cu_jas_true(cu_jget(r, "allowed"))) {
        json_object *s = cu_jget(r, "status");
        int code = (int)cu_jas_int64(cu_jget(s, "code"), 0);
        const char *msg = cu_jstr(s, "message"), *reason = cu_jstr(s, "reason");
        cu_status ds;
        memset(&ds, 0, sizeof ds);
        if (msg && *msg)
            cu_status_set(&ds, code < 400 ? 400 : code, reason ? reason : "",
                          "admission webhook \"%s\" denied the request: %s", name, msg);
        else if (reason && *reason)
            cu_status_set(&ds, code < 400 ? 400 : code, reason,
                          "admission webhook \"%s\" denied the request: %s", name, reason);
        else
            cu_status_set(&ds, code < 400 ? 400 : code, "",
                          "admission webhook \"%s\" denied the request without explanation", name);
        resp_st(c->resp, &ds);
        json_object_put(ans);
        json_object_put(vo);
        return -1;
    }
    const char *patch = cu_jstr(r, "patch");
    if (patch && *patch) {
        const char *pt = cu_jstr(r, "patchType");
        json_object *next = NULL;
        if (!mutating)
            snprintf(err, sizeof err, "validating webhooks may not return patches");
        else if (!vo)
            snprintf(err, sizeof err, "there is no object to patch");
        else if (!streq(pt, "JSONPatch"))
            snprintf(err, sizeof err, "unsupported patch type \"%s\"", pt ? pt : "");
        else {
            size_t n = 0;
            char *raw = cu_base64_decode(patch, &n), perr[300] = "";
            int is_null = 0;
            json_object *ops =
                raw ? cu_json_parse_checked(raw, n, &is_null, perr, sizeof perr) : NULL;
            free(raw);
            next = ops ? cu_json_patch(vo, ops, perr, sizeof perr) : NULL;
            json_object_put(ops);
            if (!next)
                snprintf(err, sizeof err, "JSON Patch: %s", perr[0] ? perr : "not a JSON Patch");
        }
        if (next && vt != c->rt && !(next = to_version(c, c->rt, next, &st)))
            snprintf(err, sizeof err, "%s", st.message);
        if (err[0]) {
            json_object_put(ans);
            json_object_put(vo);
            json_object_put(next);
            internal_error(c->resp, "failed calling webhook \"%s\": %s", name, err);
            return -1;
        }
        if (!json_object_equal(next, *obj)) {
            json_object_put(*obj);
            *obj = next;
            *changed = 1;
        } else {
            json_object_put(next);
        }
    }
    json_object_put(ans);
    json_object_put(vo);
    return 0;
}

/* Every webhook of the kind's configurations, in order: a new array of
 * the webhooks (or NULL when there are none). */
static json_object *webhooks_of(cu_apiserver *a, const char *plural)
{
    const cu_rtype *t = cu_store_rtype(a->s, ADM_GROUP, "v1", plural);
    json_object *list = NULL;
    cu_status st;
    memset(&st, 0, sizeof st);
    cu_list_opts lo = { 0 };
    if (!t || cu_store_list(a->s, t, NULL, &lo, &list, &st) != CU_OK)
        return NULL;
    json_object *all = json_object_new_array(), *items = cu_jget(list, "items");
    for (size_t i = 0; i < cu_jarr_len(items); i++) { /* the store lists in name order */
        json_object *whs = cu_jget(json_object_array_get_idx(items, i), "webhooks");
        for (size_t j = 0; j < cu_jarr_len(whs); j++)
            json_object_array_add(all, json_object_get(json_object_array_get_idx(whs, j)));
    }
    json_object_put(list);
    if (!cu_jarr_len(all)) {
        json_object_put(all);
        return NULL;
    }
    return all;
}

static int exempt(const cu_rtype *rt) { return streq(rt->group, ADM_GROUP); }

int adm_mutate(cu_apiserver *a, const cu_api_req *r, const cu_rtype *rt, const char *sub,
               const char *op, const char *ns, const char *name, json_object **obj,
               json_object *old, cu_api_resp *resp)
{
    if (exempt(rt))
        return 0;
    json_object *whs = webhooks_of(a, "mutatingwebhookconfigurations");
    if (!whs)
        return 0;
    adm_ctx c = { a, r, rt, sub, op, ns, name, old, is_dry_run(r), resp };
    size_t n = cu_jarr_len(whs);
    /* for reinvocation: the webhooks called, and whether a later one
     * changed the object */
    int *called = calloc(n + 1, sizeof(int)), *changed_after = calloc(n + 1, sizeof(int));
    int rc = 0, any = 0;
    for (size_t i = 0; i < n && rc == 0 && called && changed_after; i++) {
        json_object *wh = json_object_array_get_idx(whs, i);
        const cu_rtype *vt = rules_match(&c, wh);
        if (!vt || !namespace_matches(&c, wh, *obj) || !object_matches(&c, wh, *obj))
            continue;
        int ch = 0;
        rc = call_one(&c, wh, vt, 1, obj, &ch);
        called[i] = 1;
        if (ch) {
            any = 1;
            for (size_t j = 0; j < i; j++)
                changed_after[j] |= called[j];
        }
    }
    for (size_t i = 0; any && rc == 0 && called && changed_after && i < n; i++) {
        json_object *wh = json_object_array_get_idx(whs, i);
        if (!changed_after[i] || !streq(cu_jstr(wh, "reinvocationPolicy"), "IfNeeded"))
            continue;
        const cu_rtype *vt = rules_match(&c, wh);
        int ch = 0;
        if (vt)
            rc = call_one(&c, wh, vt, 1, obj, &ch);
    }
    if (!called || !changed_after) {
        resp_status(resp, 500, "InternalError", "out of memory");
        rc = -1;
    }
    free(called);
    free(changed_after);
    json_object_put(whs);
    return rc;
}

int adm_validate(cu_apiserver *a, const cu_api_req *r, const cu_rtype *rt, const char *sub,
                 const char *op, const char *ns, const char *name, json_object *obj,
                 json_object *old, cu_api_resp *resp)
{
    if (exempt(rt))
        return 0;
    json_object *whs = webhooks_of(a, "validatingwebhookconfigurations");
    if (!whs)
        return 0;
    adm_ctx c = { a, r, rt, sub, op, ns, name, old, is_dry_run(r), resp };
    json_object *o = obj ? json_object_get(obj) : NULL;
    int rc = 0;
    for (size_t i = 0; i < cu_jarr_len(whs) && rc == 0; i++) {
        json_object *wh = json_object_array_get_idx(whs, i);
        const cu_rtype *vt = rules_match(&c, wh);
        int ch = 0;
        if (vt && namespace_matches(&c, wh, o) && object_matches(&c, wh, o))
            rc = call_one(&c, wh, vt, 0, &o, &ch);
    }
    json_object_put(o);
    json_object_put(whs);
    return rc;
}

int adm_has_webhooks(cu_apiserver *a, const cu_rtype *rt)
{
    if (exempt(rt))
        return 0;
    static const char *const kinds[] = { "mutatingwebhookconfigurations",
                                         "validatingwebhookconfigurations" };
    for (int i = 0; i < 2; i++) {
        const cu_rtype *t = cu_store_rtype(a->s, ADM_GROUP, "v1", kinds[i]);
        char *raw = NULL;
        size_t len = 0;
        cu_status st;
        memset(&st, 0, sizeof st);
        cu_list_opts lo = { .limit = 1 };
        if (t && cu_store_list_raw(a->s, t, NULL, &lo, &raw, &len, &st) == CU_OK) {
            int some = raw && strstr(raw, "\"items\":[{") != NULL;
            free(raw);
            if (some)
                return 1;
        }
    }
    return 0;
}

/* ---- validation of the configurations (kube-apiserver's, where cheap) ---- */

/* Sets o[key] to a string when it is absent. */
static void default_str(json_object *o, const char *key, const char *v)
{
    if (json_object_is_type(o, json_type_object) && !cu_jget(o, key))
        cu_jset_str(o, key, v);
}

/* kube-apiserver's defaults of a webhook configuration (its v1 types). */
static void config_defaults(json_object *o, int mutating)
{
    json_object *whs = cu_jget(o, "webhooks");
    for (size_t i = 0; i < cu_jarr_len(whs); i++) {
        json_object *w = json_object_array_get_idx(whs, i);
        if (!json_object_is_type(w, json_type_object))
            continue;
        default_str(w, "failurePolicy", "Fail");
        default_str(w, "matchPolicy", "Equivalent");
        if (!cu_jget(w, "namespaceSelector"))
            json_object_object_add(w, "namespaceSelector", json_object_new_object());
        if (!cu_jget(w, "objectSelector"))
            json_object_object_add(w, "objectSelector", json_object_new_object());
        if (!cu_jget(w, "timeoutSeconds"))
            json_object_object_add(w, "timeoutSeconds", json_object_new_int(10));
        if (mutating)
            default_str(w, "reinvocationPolicy", "Never");
        json_object *svc = cu_jget(cu_jget(w, "clientConfig"), "service");
        if (json_object_is_type(svc, json_type_object) && !cu_jget(svc, "port"))
            json_object_object_add(svc, "port", json_object_new_int(443));
        json_object *rules = cu_jget(w, "rules");
        for (size_t j = 0; j < cu_jarr_len(rules); j++)
            default_str(json_object_array_get_idx(rules, j), "scope", "*");
    }
}

int adm_check_config(const cu_rtype *rt, json_object *o, cu_api_resp *resp)
{
    if (!streq(rt->group, ADM_GROUP))
        return 0;
    int mutating = streq(rt->kind, "MutatingWebhookConfiguration");
    config_defaults(o, mutating);
    cu_status st;
    memset(&st, 0, sizeof st);
    size_t n = 0;
    char f[256];
#define ADD(FIELD, TYPE, ...) \
    do { \
        if (n < 32) { \
            copy_str(st.causes[n].field, sizeof st.causes[n].field, FIELD); \
            copy_str(st.causes[n].type, sizeof st.causes[n].type, TYPE); \
            snprintf(st.causes[n].message, sizeof st.causes[n].message, __VA_ARGS__); \
            n++; \
        } \
    } while (0)
    json_object *whs = cu_jget(o, "webhooks");
    for (size_t i = 0; i < cu_jarr_len(whs); i++) {
        json_object *w = json_object_array_get_idx(whs, i);
        const char *name = cu_jstr(w, "name");
        snprintf(f, sizeof f, "webhooks[%zu].name", i);
        if (!name || !*name)
            ADD(f, "FieldValueRequired", "Required value");
        else {
            int dots = 0;
            for (const char *p = name; *p; p++)
                dots += *p == '.';
            if (dots < 2)
                ADD(f, "FieldValueInvalid",
                    "Invalid value: \"%s\": should be a domain with at least three segments "
                    "separated by dots",
                    name);
            for (size_t j = 0; j < i; j++)
                if (streq(cu_jstr(json_object_array_get_idx(whs, j), "name"), name))
                    ADD(f, "FieldValueDuplicate", "Duplicate value: \"%s\"", name);
        }
        const char *se = cu_jstr(w, "sideEffects");
        snprintf(f, sizeof f, "webhooks[%zu].sideEffects", i);
        if (!se)
            ADD(f, "FieldValueRequired", "Required value: must specify one of None, NoneOnDryRun");
        else if (!streq(se, "None") && !streq(se, "NoneOnDryRun"))
            ADD(f, "FieldValueNotSupported",
                "Unsupported value: \"%s\": supported values: \"None\", \"NoneOnDryRun\"", se);
        json_object *arv = cu_jget(w, "admissionReviewVersions");
        snprintf(f, sizeof f, "webhooks[%zu].admissionReviewVersions", i);
        int v1 = 0;
        for (size_t j = 0; j < cu_jarr_len(arv); j++)
            v1 |= streq(json_object_get_string(json_object_array_get_idx(arv, j)), "v1");
        if (!cu_jarr_len(arv))
            ADD(f, "FieldValueRequired", "Required value: must specify one of v1, v1beta1");
        else if (!v1 && !has_or_star(arv, "v1beta1")) /* kube-apiserver knows only these two */
            ADD(f, "FieldValueInvalid",
                "Invalid value: %s: must include at least one of v1, v1beta1",
                json_object_to_json_string_ext(arv, JSON_C_TO_STRING_PLAIN));
        json_object *cc = cu_jget(w, "clientConfig");
        const char *url = cu_jstr(cc, "url");
        json_object *svc = cu_jget(cc, "service");
        snprintf(f, sizeof f, "webhooks[%zu].clientConfig", i);
        if ((url != NULL) == (svc != NULL))
            ADD(f, "FieldValueRequired",
                "Required value: exactly one of url or service is required");
        else if (url && strncmp(url, "https://", 8) != 0) {
            snprintf(f, sizeof f, "webhooks[%zu].clientConfig.url", i);
            ADD(f, "FieldValueInvalid",
                "Invalid value: \"%s\": 'https' is the only allowed URL scheme", url);
        }
        int64_t to = cu_jas_int64(cu_jget(w, "timeoutSeconds"), 10);
        snprintf(f, sizeof f, "webhooks[%zu].timeoutSeconds", i);
        if (to < 1 || to > 30)
            ADD(f, "FieldValueInvalid",
                "Invalid value: %lld: the timeout value must be between 1 and 30 seconds",
                (long long)to);
        const char *fp = cu_jstr(w, "failurePolicy");
        snprintf(f, sizeof f, "webhooks[%zu].failurePolicy", i);
        if (fp && !streq(fp, "Fail") && !streq(fp, "Ignore"))
            ADD(f, "FieldValueNotSupported",
                "Unsupported value: \"%s\": supported values: \"Fail\", \"Ignore\"", fp);
        const char *rp = cu_jstr(w, "reinvocationPolicy");
        snprintf(f, sizeof f, "webhooks[%zu].reinvocationPolicy", i);
        if (mutating && rp && !streq(rp, "Never") && !streq(rp, "IfNeeded"))
            ADD(f, "FieldValueNotSupported",
                "Unsupported value: \"%s\": supported values: \"IfNeeded\", \"Never\"", rp);
    }
#undef ADD
    if (!n)
        return 0;
    /* kube-apiserver's message: KIND "NAME" is invalid: [cause, cause] */
    const char *oname = cu_jstr(cu_jget(o, "metadata"), "name");
    cu_buf m;
    cu_buf_init(&m, 1 << 16);
    cu_buf_printf(&m, "%s.%s \"%s\" is invalid: %s", rt->kind, ADM_GROUP, oname ? oname : "",
                  n > 1 ? "[" : "");
    for (size_t i = 0; i < n; i++)
        cu_buf_printf(&m, "%s%s: %s", i ? ", " : "", st.causes[i].field, st.causes[i].message);
    cu_buf_puts(&m, n > 1 ? "]" : "");
    cu_status out; /* cu_status_set starts afresh: the causes are copied after */
    memset(&out, 0, sizeof out);
    cu_status_set(&out, 422, "Invalid", "%s", cu_buf_str(&m));
    cu_buf_free(&m);
    memcpy(out.causes, st.causes, sizeof out.causes);
    out.ncauses = n;
    copy_str(out.kind, sizeof out.kind, rt->kind);
    copy_str(out.group, sizeof out.group, ADM_GROUP);
    copy_str(out.name, sizeof out.name, oname ? oname : "");
    resp_st(resp, &out);
    return -1;
}
