/*
 * cu_discovery.c - discovery (/api, /apis, aggregated discovery) and
 * /openapi/v3. See internal/cu_apiserver_int.h.
 */
#include "cu_apiserver.h"
#include "cu_authn.h"
#include "cu_objmeta.h"
#include "cu_doc.h"
#include "cu_hash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_apiserver_int.h"

/* ---------------- discovery ---------------- */

typedef struct rt_vec {
    const cu_rtype **v;
    size_t n, cap;
} rt_vec;

static void collect_rt(const cu_rtype *rt, void *ud)
{
    rt_vec *vec = ud;
    if (cu_vec_reserve(&vec->v, vec->n, &vec->cap, sizeof(*vec->v), 32))
        return;
    vec->v[vec->n++] = rt;
}

static rt_vec all_types(cu_store *s)
{
    rt_vec vec = { NULL, 0, 0 };
    cu_store_each_rtype(s, collect_rt, &vec);
    return vec;
}

static json_object *str_array(char **v, size_t n)
{
    json_object *a = json_object_new_array();
    for (size_t i = 0; i < n; i++)
        json_object_array_add(a, json_object_new_string(v[i]));
    return a;
}

static json_object *verbs(const char *const *v)
{
    json_object *a = json_object_new_array();
    for (; *v; v++)
        json_object_array_add(a, json_object_new_string(*v));
    return a;
}

static const char *const verbs_all[] = { "create", "delete", "deletecollection",
                                         "get",    "list",   "patch",
                                         "update", "watch",  NULL };
static const char *const verbs_status[] = { "get", "patch", "update", NULL };
static const char *const verbs_create[] = { "create", NULL };

int has_status(const cu_rtype *rt) { return rt->status_sub || !rt->from_crd; }

static json_object *sub_resource(const cu_rtype *rt, const char *sub, const char *kind,
                                 const char *const *v)
{
    char name[300];
    json_object *r = json_object_new_object();
    snprintf(name, sizeof name, "%s/%s", rt->resource, sub);
    cu_jset_str(r, "name", name);
    cu_jset_str(r, "singularName", "");
    json_object_object_add(r, "namespaced", json_object_new_boolean(rt->namespaced));
    cu_jset_str(r, "kind", kind);
    json_object_object_add(r, "verbs", verbs(v));
    return r;
}

json_object *resource_list(cu_store *s, const char *group, const char *version)
{
    rt_vec vec = all_types(s);
    json_object *l = json_object_new_object(), *res = json_object_new_array();
    char gv[200];
    snprintf(gv, sizeof gv, "%s%s%s", group, *group ? "/" : "", version);
    cu_jset_str(l, "kind", "APIResourceList");
    cu_jset_str(l, "apiVersion", "v1");
    cu_jset_str(l, "groupVersion", gv);
    size_t found = 0;
    for (size_t i = 0; i < vec.n; i++) {
        const cu_rtype *rt = vec.v[i];
        if (strcmp(rt->group, group) != 0 || strcmp(rt->version, version) != 0)
            continue;
        found++;
        json_object *r = json_object_new_object();
        cu_jset_str(r, "name", rt->resource);
        cu_jset_str(r, "singularName", rt->singular ? rt->singular : "");
        json_object_object_add(r, "namespaced", json_object_new_boolean(rt->namespaced));
        cu_jset_str(r, "kind", rt->kind);
        json_object_object_add(r, "verbs", verbs(verbs_all));
        if (rt->nshort)
            json_object_object_add(r, "shortNames", str_array(rt->short_names, rt->nshort));
        if (rt->ncat)
            json_object_object_add(r, "categories", str_array(rt->categories, rt->ncat));
        json_object_array_add(res, r);
        if (!*group && strcmp(rt->resource, "pods") == 0)
            json_object_array_add(res, sub_resource(rt, "binding", "Binding", verbs_create));
        if (has_status(rt))
            json_object_array_add(res, sub_resource(rt, "status", rt->kind, verbs_status));
    }
    free(vec.v);
    json_object_object_add(l, "resources", res);
    if (!found) {
        json_object_put(l);
        return NULL;
    }
    return l;
}

/* The distinct group/versions served, in registration order. */
typedef struct gv_ent {
    const char *group, *version;
    int storage;
} gv_ent;

static size_t group_versions(const rt_vec *vec, gv_ent *out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < vec->n; i++) {
        const cu_rtype *rt = vec->v[i];
        size_t j;
        for (j = 0; j < n; j++)
            if (strcmp(out[j].group, rt->group) == 0 && strcmp(out[j].version, rt->version) == 0)
                break;
        if (j < n) {
            out[j].storage |= rt->storage;
            continue;
        }
        if (n < max)
            out[n++] = (gv_ent){ rt->group, rt->version, rt->storage };
    }
    return n;
}

static json_object *api_group(const gv_ent *gvs, size_t n, const char *group)
{
    json_object *g = json_object_new_object(), *vs = json_object_new_array();
    const gv_ent *pref = NULL;
    char gv[200];
    cu_jset_str(g, "name", group);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(gvs[i].group, group) != 0)
            continue;
        json_object *v = json_object_new_object();
        snprintf(gv, sizeof gv, "%s/%s", group, gvs[i].version);
        cu_jset_str(v, "groupVersion", gv);
        cu_jset_str(v, "version", gvs[i].version);
        json_object_array_add(vs, v);
        if (!pref || (gvs[i].storage && !pref->storage))
            pref = &gvs[i];
    }
    json_object_object_add(g, "versions", vs);
    if (pref) {
        json_object *p = json_object_new_object();
        snprintf(gv, sizeof gv, "%s/%s", group, pref->version);
        cu_jset_str(p, "groupVersion", gv);
        cu_jset_str(p, "version", pref->version);
        json_object_object_add(g, "preferredVersion", p);
    }
    return g;
}

json_object *group_list(cu_store *s, const char *only)
{
    rt_vec vec = all_types(s);
    gv_ent gvs[256];
    size_t n = group_versions(&vec, gvs, 256);
    json_object *res = NULL;
    if (only) {
        for (size_t i = 0; i < n && !res; i++)
            if (strcmp(gvs[i].group, only) == 0) {
                res = api_group(gvs, n, only);
                json_object_object_add(res, "kind", json_object_new_string("APIGroup"));
                json_object_object_add(res, "apiVersion", json_object_new_string("v1"));
            }
        free(vec.v);
        return res;
    }
    res = json_object_new_object();
    json_object *groups = json_object_new_array();
    cu_jset_str(res, "kind", "APIGroupList");
    cu_jset_str(res, "apiVersion", "v1");
    for (size_t i = 0; i < n; i++) {
        if (!*gvs[i].group)
            continue;
        size_t j;
        for (j = 0; j < i; j++)
            if (strcmp(gvs[j].group, gvs[i].group) == 0)
                break;
        if (j == i)
            json_object_array_add(groups, api_group(gvs, n, gvs[i].group));
    }
    json_object_object_add(res, "groups", groups);
    free(vec.v);
    return res;
}

json_object *version_json(void)
{
    json_object *v = json_object_new_object();
    cu_jset_str(v, "major", "1");
    cu_jset_str(v, "minor", "32");
    cu_jset_str(v, "gitVersion", "v1.32.0-cueue");
    cu_jset_str(v, "gitCommit", "0000000000000000000000000000000000000000");
    cu_jset_str(v, "gitTreeState", "clean");
    cu_jset_str(v, "buildDate", "2026-01-01T00:00:00Z");
    cu_jset_str(v, "goVersion", "go1.23.0");
    cu_jset_str(v, "compiler", "gc");
    cu_jset_str(v, "platform", "linux/amd64");
    return v;
}

/* ---------------- /openapi/v3 ---------------- */

static json_object *oa_param(const char *name, const char *in, int required)
{
    json_object *p = json_object_new_object(), *sc = json_object_new_object();
    cu_jset_str(p, "name", name);
    cu_jset_str(p, "in", in);
    if (required)
        json_object_object_add(p, "required", json_object_new_boolean(1));
    cu_jset_str(sc, "type", "string");
    json_object_object_add(sc, "uniqueItems", json_object_new_boolean(1));
    json_object_object_add(p, "schema", sc);
    return p;
}

static json_object *oa_gvk(const cu_rtype *rt)
{
    json_object *g = json_object_new_object();
    cu_jset_str(g, "group", rt->group);
    cu_jset_str(g, "kind", rt->kind);
    cu_jset_str(g, "version", rt->version);
    return g;
}

static json_object *oa_op(const cu_rtype *rt, const char *action, int body)
{
    static const char *const patch_types[] = { "application/apply-patch+yaml",
                                               "application/json-patch+json",
                                               "application/merge-patch+json",
                                               "application/strategic-merge-patch+json", NULL };
    json_object *op = json_object_new_object(), *ps = json_object_new_array();
    char id[300];
    snprintf(id, sizeof id, "%s%s", action, rt->kind);
    cu_jset_str(op, "operationId", id);
    cu_jset_str(op, "x-kubernetes-action", action);
    json_object_object_add(op, "x-kubernetes-group-version-kind", oa_gvk(rt));
    json_object_array_add(ps, oa_param("dryRun", "query", 0));
    json_object_array_add(ps, oa_param("fieldManager", "query", 0));
    if (body) {
        json_object_array_add(ps, oa_param("fieldValidation", "query", 0));
        if (strcmp(action, "patch") == 0)
            json_object_array_add(ps, oa_param("force", "query", 0));
        json_object *rb = json_object_new_object(), *content = json_object_new_object();
        for (const char *const *t = patch_types; *t; t++) {
            if (strcmp(action, "patch") != 0 && t != patch_types)
                break;
            json_object *m = json_object_new_object(), *sc = json_object_new_object();
            cu_jset_str(sc, "type", "object");
            json_object_object_add(m, "schema", sc);
            json_object_object_add(content, strcmp(action, "patch") == 0 ? *t : "application/json",
                                   m);
        }
        json_object_object_add(rb, "content", content);
        json_object_object_add(rb, "required", json_object_new_boolean(1));
        json_object_object_add(op, "requestBody", rb);
    }
    json_object *resp = json_object_new_object(), *ok = json_object_new_object();
    cu_jset_str(ok, "description", "OK");
    json_object_object_add(resp, "200", ok);
    json_object_object_add(op, "responses", resp);
    json_object_object_add(op, "parameters", ps);
    return op;
}

/* The OpenAPI v3 document of one group/version: for every kind a path
 * for the collection and for one object, whose PATCH operation names the
 * kind and accepts fieldValidation (which is what kubectl looks for). */
json_object *openapi_gv(cu_store *s, const char *group, const char *version)
{
    rt_vec vec = all_types(s);
    json_object *doc = json_object_new_object(), *info = json_object_new_object();
    json_object *paths = json_object_new_object(), *comp = json_object_new_object();
    size_t found = 0;
    cu_jset_str(doc, "openapi", "3.0.0");
    cu_jset_str(info, "title", "Kubernetes");
    cu_jset_str(info, "version", "v1.32.0-cueue");
    json_object_object_add(doc, "info", info);
    for (size_t i = 0; i < vec.n; i++) {
        const cu_rtype *rt = vec.v[i];
        if (strcmp(rt->group, group) != 0 || strcmp(rt->version, version) != 0)
            continue;
        found++;
        char base[400], p[600];
        if (*group)
            snprintf(base, sizeof base, "/apis/%s/%s%s", group, version,
                     rt->namespaced ? "/namespaces/{namespace}" : "");
        else
            snprintf(base, sizeof base, "/api/%s%s", version,
                     rt->namespaced ? "/namespaces/{namespace}" : "");
        json_object *coll = json_object_new_object(), *one = json_object_new_object();
        json_object_object_add(coll, "get", oa_op(rt, "list", 0));
        json_object_object_add(coll, "post", oa_op(rt, "post", 1));
        json_object_object_add(one, "get", oa_op(rt, "get", 0));
        json_object_object_add(one, "put", oa_op(rt, "put", 1));
        json_object_object_add(one, "patch", oa_op(rt, "patch", 1));
        json_object_object_add(one, "delete", oa_op(rt, "delete", 0));
        json_object *pp = json_object_new_array();
        json_object_array_add(pp, oa_param("name", "path", 1));
        if (rt->namespaced)
            json_object_array_add(pp, oa_param("namespace", "path", 1));
        json_object_object_add(one, "parameters", pp);
        snprintf(p, sizeof p, "%s/%s", base, rt->resource);
        json_object_object_add(paths, p, coll);
        snprintf(p, sizeof p, "%s/%s/{name}", base, rt->resource);
        json_object_object_add(paths, p, one);
    }
    free(vec.v);
    json_object_object_add(doc, "paths", paths);
    json_object_object_add(comp, "schemas", json_object_new_object());
    json_object_object_add(doc, "components", comp);
    if (!found) {
        json_object_put(doc);
        return NULL;
    }
    return doc;
}

json_object *openapi_root(cu_store *s)
{
    rt_vec vec = all_types(s);
    gv_ent gvs[256];
    size_t n = group_versions(&vec, gvs, 256);
    json_object *root = json_object_new_object(), *paths = json_object_new_object();
    for (size_t i = 0; i < n; i++) {
        json_object *doc = openapi_gv(s, gvs[i].group, gvs[i].version);
        if (!doc)
            continue;
        uint64_t h = cu_hash_str(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN));
        json_object_put(doc);
        char key[200], url[400];
        if (*gvs[i].group)
            snprintf(key, sizeof key, "apis/%s/%s", gvs[i].group, gvs[i].version);
        else
            snprintf(key, sizeof key, "api/%s", gvs[i].version);
        snprintf(url, sizeof url, "/openapi/v3/%s?hash=%016llX", key, (unsigned long long)h);
        json_object *e = json_object_new_object();
        cu_jset_str(e, "serverRelativeURL", url);
        json_object_object_add(paths, key, e);
    }
    free(vec.v);
    json_object_object_add(root, "paths", paths);
    return root;
}
