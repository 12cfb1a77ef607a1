/*
 * cu_crdconv.c - CRD conversion webhooks (spec.conversion.strategy:
 * Webhook), as kube-apiserver calls them: a ConversionReview v1 with the
 * objects and the desiredAPIVersion, sent to spec.conversion.webhook.
 * clientConfig (cu_whcall.c), the converted objects checked (as many,
 * the desired apiVersion, the same kind, name, namespace and uid). The
 * verbs (cu_verbs.c) use it for a request in a version that is not the
 * storage version: a write is converted to the storage version before the
 * store sees it, a read, list or watch event back to the version asked
 * for. With strategy None the store itself rewrites apiVersion.
 * See internal/cu_apiserver_int.h.
 */
#include "cu_apiserver.h"
#include "cu_authn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_apiserver_int.h"

#define CONV_TIMEOUT_S 30L /* kube-apiserver's for conversion webhooks */

const cu_rtype *conv_storage(cu_apiserver *a, const cu_rtype *rt, json_object **crd)
{
    *crd = NULL;
    if (!rt->from_crd || rt->storage)
        return NULL;
    const cu_rtype *crt =
        cu_store_rtype(a->s, "apiextensions.k8s.io", "v1", "customresourcedefinitions");
    char name[600];
    snprintf(name, sizeof name, "%s.%s", rt->resource, rt->group);
    json_object *o = NULL;
    cu_status st;
    memset(&st, 0, sizeof st);
    if (!crt || cu_store_get(a->s, crt, NULL, name, &o, &st) != CU_OK)
        return NULL;
    const char *strategy = cu_jpath_str(o, "spec.conversion.strategy");
    json_object *vers = cu_jpath(o, "spec.versions");
    const char *sv = NULL;
    for (size_t i = 0; i < cu_jarr_len(vers); i++) {
        json_object *v = json_object_array_get_idx(vers, i);
        if (cu_jas_true(cu_jget(v, "storage")))
            sv = cu_jstr(v, "name");
    }
    const cu_rtype *srt = sv ? cu_store_rtype(a->s, rt->group, sv, rt->resource) : NULL;
    if (!strategy || strcmp(strategy, "Webhook") != 0 || !srt || srt == rt) {
        json_object_put(o);
        return NULL;
    }
    *crd = o;
    return srt;
}

/* 1 when a and b are the same string (both NULL too). */
static int same(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

int conv_objects(cu_apiserver *a, const cu_rtype *rt, json_object *crd, json_object *objs,
                 const char *version, cu_status *st)
{
    char desired[400], from[400] = "";
    snprintf(desired, sizeof desired, "%s/%s", rt->group, version);
    json_object *send = json_object_new_array();
    for (size_t i = 0; i < cu_jarr_len(objs); i++) {
        json_object *o = json_object_array_get_idx(objs, i);
        const char *av = cu_jstr(o, "apiVersion");
        if (!same(av, desired)) {
            if (!from[0])
                snprintf(from, sizeof from, "%s, Kind=%s", av ? av : "", rt->kind);
            json_object_array_add(send, json_object_get(o));
        }
    }
    size_t n = cu_jarr_len(send);
    if (!n) {
        json_object_put(send);
        return 0;
    }
    json_object *review = json_object_new_object(), *req = json_object_new_object();
    char uid[64], err[1200] = "";
    wh_uid(uid, sizeof uid);
    cu_jset_str(review, "apiVersion", "apiextensions.k8s.io/v1");
    cu_jset_str(review, "kind", "ConversionReview");
    cu_jset_str(req, "uid", uid);
    cu_jset_str(req, "desiredAPIVersion", desired);
    json_object_object_add(req, "objects", send);
    json_object_object_add(review, "request", req);
    json_object *ans = wh_post(a, cu_jpath(crd, "spec.conversion.webhook.clientConfig"),
                               CONV_TIMEOUT_S, review, err, sizeof err);
    json_object_put(review);
    json_object *resp = cu_jget(ans, "response");
    json_object *conv = cu_jget(resp, "convertedObjects");
    const char *rs = cu_jpath_str(resp, "result.status");
    if (ans && !err[0]) {
        if (!same(cu_jstr(resp, "uid"), uid))
            snprintf(err, sizeof err, "expected response.uid=\"%s\", got \"%s\"", uid,
                     cu_jstr(resp, "uid") ? cu_jstr(resp, "uid") : "");
        else if (!rs || strcmp(rs, "Success") != 0) {
            const char *m = cu_jpath_str(resp, "result.message");
            cu_status_set(st, 500, "InternalError",
                          "conversion webhook for %s returned failure: %s", from, m ? m : "");
            json_object_put(ans);
            return -1;
        } else if (cu_jarr_len(conv) != n)
            snprintf(err, sizeof err, "returned %zu objects, expected %zu", cu_jarr_len(conv), n);
    }
    /* the answers in place of the objects sent, checked as kube-apiserver does */
    for (size_t i = 0, j = 0; !err[0] && i < cu_jarr_len(objs); i++) {
        json_object *o = json_object_array_get_idx(objs, i);
        if (same(cu_jstr(o, "apiVersion"), desired))
            continue;
        json_object *c = json_object_array_get_idx(conv, j++);
        json_object *om = cu_jget(o, "metadata"), *cm = cu_jget(c, "metadata");
        if (!json_object_is_type(c, json_type_object) || !same(cu_jstr(c, "apiVersion"), desired))
            snprintf(err, sizeof err, "invalid converted object at index %zu: invalid apiVersion",
                     j - 1);
        else if (!same(cu_jstr(c, "kind"), cu_jstr(o, "kind")))
            snprintf(err, sizeof err, "invalid converted object at index %zu: invalid kind", j - 1);
        else if (!same(cu_jstr(cm, "name"), cu_jstr(om, "name")) ||
                 !same(cu_jstr(cm, "namespace"), cu_jstr(om, "namespace")) ||
                 !same(cu_jstr(cm, "uid"), cu_jstr(om, "uid")))
            snprintf(err, sizeof err,
                     "invalid converted object at index %zu: must have the same name, namespace "
                     "and uid",
                     j - 1);
        else
            json_object_array_put_idx(objs, i, json_object_get(c));
    }
    json_object_put(ans);
    if (err[0]) {
        cu_status_set(st, 500, "InternalError", "conversion webhook for %s failed: %s", from, err);
        return -1;
    }
    return 0;
}

int conv_one(cu_apiserver *a, const cu_rtype *rt, json_object *crd, json_object **obj,
             const char *version, cu_status *st)
{
    json_object *arr = json_object_new_array();
    json_object_array_add(arr, *obj);
    int rc = conv_objects(a, rt, crd, arr, version, st);
    *obj = json_object_get(json_object_array_get_idx(arr, 0));
    json_object_put(arr);
    return rc;
}
