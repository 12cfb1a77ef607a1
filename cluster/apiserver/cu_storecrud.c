/*
 * cu_storecrud.c - create, get, update and delete of one object: type and
 * object-meta checks, schema validation, defaults, conflicts.
 * See internal/cu_store_int.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_schema.h"
#include "cu_store.h"
#include "cu_names.h"
#include "cu_objmeta.h"

#include "cu_store_int.h"

/* ------------------------------------------------------------------ */
/* create, get, update, delete                                          */

static void check_name(const rt_ent *rt, const char *name, size_t len, ferrs *fe)
{
    int label = rt->kid == K_NS;
    size_t max = label ? 63 : 253;
    const char *chars = cu_name_detail(label ? CU_DNS_LABEL_CHARS : CU_DNS_SUBDOMAIN_CHARS);
    if (strlen(name) != len) /* a NUL: never truncate a name silently */
        ferr_add(fe, "metadata.name", "FieldValueInvalid", "Invalid value: \"%s\\x00...\": %s",
                 name, chars);
    else if (strlen(name) > max)
        ferr_add(fe, "metadata.name", "FieldValueInvalid",
                 "Invalid value: \"%s\": must be no more than %zu characters", name, max);
    else if (!(label ? cu_dns1123_label_ok(name, len) : cu_dns1123_subdomain_ok(name, len, 0)))
        ferr_add(fe, "metadata.name", "FieldValueInvalid", "Invalid value: \"%s\": %s", name,
                 chars);
}

/* ObjectMeta and the built-in kinds' field types (cu_objmeta.c), on
 * every write before anything else reads the metadata. */
static cu_err objmeta_check(const rt_ent *rt, json_object *o, cu_status *st)
{
    ferrs fe;
    fe.n = fe.total = 0;
    size_t n = cu_objmeta_validate(o, rt->pub.kind, !rt->pub.from_crd, fe.e, 32);
    if (!n)
        return CU_OK;
    fe.n = n < 32 ? n : 32;
    fe.total = n;
    json_object *nm = cu_jget(cu_jget(o, "metadata"), "name");
    return err_invalid(
        st, rt, json_object_is_type(nm, json_type_string) ? json_object_get_string(nm) : "", &fe);
}

static void schema_check_with(json_object *schema, const cu_schema_rx *rx, json_object *o,
                              ferrs *fe)
{
    if (!schema)
        return;
    cu_schema_err errs[32];
    size_t n = cu_schema_validate_rx(schema, rx, o, 0, errs, 32);
    for (size_t i = 0; i < n && i < 32; i++)
        ferr_add(fe, errs[i].field, errs[i].type, "%s", errs[i].message);
    fe->total += n > 32 ? n - 32 : 0;
}

static void schema_check(rt_ent *rt, json_object *o, ferrs *fe)
{
    schema_check_with(rt->pub.schema, rt->pub.schema_rx, o, fe);
}

static const char *qos_class(json_object *pod)
{
    json_object *spec = cu_jget(pod, "spec");
    const char *lists[] = { "containers", "initContainers" };
    int any = 0, guaranteed = 1, n = 0;
    for (int l = 0; l < 2; l++) {
        json_object *cs = cu_jget(spec, lists[l]);
        for (size_t i = 0; i < cu_jarr_len(cs); i++) {
            json_object *res = cu_jget(json_object_array_get_idx(cs, i), "resources");
            json_object *req = cu_jget(res, "requests"), *lim = cu_jget(res, "limits");
            n++;
            const char *rn[] = { "cpu", "memory" };
            for (int k = 0; k < 2; k++) {
                json_object *rq = cu_jget(req, rn[k]), *lm = cu_jget(lim, rn[k]);
                if (rq || lm)
                    any = 1;
                if (!lm)
                    guaranteed = 0;
                else if (rq && strcmp(json_object_get_string(rq), json_object_get_string(lm)))
                    guaranteed = 0;
            }
        }
    }
    if (!any)
        return "BestEffort";
    return guaranteed && n ? "Guaranteed" : "Burstable";
}

/* Sets apiVersion and kind as served by rt. */
json_object *to_rt(const rt_ent *rt, json_object *o)
{
    if (!o)
        return NULL;
    char av[300];
    if (rt->pub.group[0])
        snprintf(av, sizeof(av), "%s/%s", rt->pub.group, rt->pub.version);
    else
        snprintf(av, sizeof(av), "%s", rt->pub.version);
    const char *cur = cu_jstr(o, "apiVersion");
    if (!cur || strcmp(cur, av))
        cu_jset_str(o, "apiVersion", av);
    const char *k = cu_jstr(o, "kind");
    if (!k || strcmp(k, rt->pub.kind))
        cu_jset_str(o, "kind", rt->pub.kind);
    return o;
}

static cu_err check_type_meta(const rt_ent *rt, json_object *obj, cu_status *st)
{
    char av[300];
    if (rt->pub.group[0])
        snprintf(av, sizeof(av), "%s/%s", rt->pub.group, rt->pub.version);
    else
        snprintf(av, sizeof(av), "%s", rt->pub.version);
    const char *k = cu_jstr(obj, "kind"), *a = cu_jstr(obj, "apiVersion");
    if (k && *k && strcmp(k, rt->pub.kind))
        return cu_status_set(st, 400, "BadRequest",
                             "%s in version \"%s\" cannot be handled as a %s: the kind in the "
                             "request body does not match the resource",
                             k, a ? a : "", rt->pub.kind);
    if (a && *a && strcmp(a, av)) {
        /* another served version of the same resource is fine */
        int ok = 0;
        if (rt->pub.from_crd) {
            const char *sl = strchr(a, '/');
            ok = sl && strncmp(a, rt->pub.group, (size_t)(sl - a)) == 0 &&
                 strlen(rt->pub.group) == (size_t)(sl - a);
        }
        if (!ok)
            return cu_status_set(st, 400, "BadRequest",
                                 "the API version in the data (%s) does not match the expected API "
                                 "version (%s)",
                                 a, av);
    }
    return CU_OK;
}

static void ensure_obj(json_object *o, const char *k)
{
    json_object *v = cu_jget(o, k);
    if (!v || !json_object_is_type(v, json_type_object))
        json_object_object_add(o, k, json_object_new_object());
}

/* kube-apiserver's pod strategy on create: a pod created with scheduling
 * gates gets the condition PodScheduled False, reason SchedulingGated (the
 * scheduler leaves it alone until the gates are gone). ts: now. */
static void pod_gated_condition(json_object *pod, json_object *stt, const char *ts)
{
    if (cu_jarr_len(cu_jpath(pod, "spec.schedulingGates")) == 0)
        return;
    json_object *c = json_object_new_object(), *conds = json_object_new_array();
    cu_jset_str(c, "type", "PodScheduled");
    cu_jset_str(c, "status", "False");
    json_object_object_add(c, "lastProbeTime", NULL);
    cu_jset_str(c, "lastTransitionTime", ts);
    cu_jset_str(c, "reason", "SchedulingGated");
    cu_jset_str(c, "message", "Scheduling is blocked due to non-empty scheduling gates");
    json_object_array_add(conds, c);
    json_object_object_add(stt, "conditions", conds);
}

/* kube-apiserver's pod update rule on spec.schedulingGates: gates may be
 * removed, never added (errors into fe). */
static void pod_gates_update(json_object *nw, json_object *old, ferrs *fe)
{
    json_object *ng = cu_jpath(nw, "spec.schedulingGates"),
                *og = cu_jpath(old, "spec.schedulingGates");
    for (size_t i = 0; i < cu_jarr_len(ng); i++) {
        const char *n = cu_jstr(json_object_array_get_idx(ng, i), "name");
        int found = 0;
        for (size_t k = 0; n && k < cu_jarr_len(og) && !found; k++) {
            const char *o = cu_jstr(json_object_array_get_idx(og, k), "name");
            found = o && !strcmp(o, n);
        }
        if (found)
            continue;
        char field[64];
        snprintf(field, sizeof(field), "spec.schedulingGates[%zu].name", i);
        ferr_add(fe, field, "FieldValueForbidden",
                 "Forbidden: only deletion is allowed, but found new scheduling gate '%s'",
                 n ? n : "");
    }
}

static void prepare_create(rt_ent *rt, json_object *o, const char *ts)
{
    json_object *m = cu_jget(o, "metadata");
    switch (rt->kid) {
    case K_POD: {
        json_object *stt = json_object_new_object();
        cu_jset_str(stt, "phase", "Pending");
        cu_jset_str(stt, "qosClass", qos_class(o));
        pod_gated_condition(o, stt, ts);
        json_object_object_add(o, "status", stt);
        break;
    }
    case K_JOB: json_object_object_add(o, "status", json_object_new_object()); break;
    case K_NS: {
        ensure_obj(o, "spec");
        json_object *spec = cu_jget(o, "spec");
        if (!cu_jget(spec, "finalizers")) {
            json_object *f = json_object_new_array();
            json_object_array_add(f, json_object_new_string("kubernetes"));
            json_object_object_add(spec, "finalizers", f);
        }
        json_object *stt = json_object_new_object();
        cu_jset_str(stt, "phase", "Active");
        json_object_object_add(o, "status", stt);
        break;
    }
    case K_CR:
        if (rt->pub.status_sub)
            json_object_object_del(o, "status");
        break;
    case K_CRD: json_object_object_del(o, "status"); break;
    default: break;
    }
    if (rt->kid == K_NS) {
        ensure_obj(m, "labels");
        cu_jset_str(cu_jget(m, "labels"), "kubernetes.io/metadata.name", cu_jstr(m, "name"));
    }
}

/* The schema of a custom resource (pruning, defaults, validation) before
 * the store's lock is taken, as kube-apiserver validates before admission
 * and storage: the server goes on serving while a large object is checked.
 * A schema replaced meanwhile stays alive (the store keeps old ones). */
static void schema_check_unlocked(cu_store *s, rt_ent *rt, json_object *o, ferrs *fe)
{
    pthread_mutex_lock(&s->mu);
    json_object *schema = rt->pub.schema;
    const cu_schema_rx *rx = rt->pub.schema_rx;
    pthread_mutex_unlock(&s->mu);
    if (rt->pub.status_sub)
        json_object_object_del(o, "status"); /* as prepare_create */
    schema_check_with(schema, rx, o, fe);
}

cu_err cu_store_create(cu_store *s, const cu_rtype *rtp, const char *ns, json_object *obj,
                       json_object **out, cu_status *st)
{
    rt_ent *rt = (rt_ent *)rtp;
    cu_err err = CU_OK;
    opctx c;
    memset(&c, 0, sizeof(c));
    if (out)
        *out = NULL;
    if (!rt || !obj || !json_object_is_type(obj, json_type_object)) {
        json_object_put(obj);
        return cu_status_set(st, 400, "BadRequest", "the request body must be a JSON object");
    }
    if ((err = check_type_meta(rt, obj, st)) != CU_OK) {
        json_object_put(obj);
        return err;
    }
    if ((err = objmeta_check(rt, obj, st)) != CU_OK) {
        json_object_put(obj);
        return err;
    }
    json_object *m = cu_jchild(obj, "metadata");
    const char *mns = cu_jstr(m, "namespace");
    char nsbuf[300] = "";
    if (rt->pub.namespaced) {
        if (!ns || !*ns)
            ns = mns;
        if (!ns || !*ns) {
            json_object_put(obj);
            return cu_status_set(st, 400, "BadRequest", "the namespace of the object is required");
        }
        if (mns && *mns && strcmp(mns, ns)) {
            json_object_put(obj);
            return cu_status_set(
                st, 400, "BadRequest",
                "the namespace of the provided object does not match the namespace "
                "sent on the request");
        }
        snprintf(nsbuf, sizeof(nsbuf), "%s", ns);
        cu_jset_str(m, "namespace", nsbuf);
    } else {
        json_object_object_del(m, "namespace");
    }
    const char *name = cu_jstr(m, "name"), *gen = cu_jstr(m, "generateName");
    int generate = 0;
    ferrs fe;
    fe.n = fe.total = 0;
    if (!name || !*name) {
        if (gen && *gen)
            generate = 1;
        else
            ferr_add(&fe, "metadata.name", "FieldValueRequired",
                     "Required value: name or generateName is required");
    }
    char namebuf[300];
    if (generate) {
        char probe[300];
        cu_name_generate(probe, sizeof(probe), gen, 0); /* the longest name it can generate */
        check_name(rt, probe, strlen(probe), &fe);
    } else if (name && *name) {
        check_name(rt, name, (size_t)json_object_get_string_len(cu_jget(m, "name")), &fe);
    }
    snprintf(namebuf, sizeof(namebuf), "%s", name ? name : "");
    if (fe.n) {
        err = err_invalid(st, rt, namebuf, &fe);
        json_object_put(obj);
        return err;
    }
    /* system fields are the server's */
    json_object_object_del(m, "uid");
    json_object_object_del(m, "resourceVersion");
    json_object_object_del(m, "deletionTimestamp");
    json_object_object_del(m, "deletionGracePeriodSeconds");
    json_object_object_del(m, "selfLink");
    json_object_object_del(m, "generation");
    if (rt->gen)
        json_object_object_add(m, "generation", json_object_new_int64(1));
    if (rt->kid == K_CR) {
        schema_check_unlocked(s, rt, obj, &fe);
        if (fe.n) {
            err = err_invalid(st, rt, namebuf, &fe);
            json_object_put(obj);
            return err;
        }
    }

    pthread_mutex_lock(&s->mu);
    if (!rt->served) {
        err = err_not_served(st);
        goto out;
    }
    if (rt->res->crd_terminating) {
        err = cu_status_set(st, 405, "MethodNotAllowed",
                            "create not allowed while custom resource definition is terminating");
        goto out;
    }
    if (rt->pub.namespaced && s->r_ns) {
        ent *nse = ent_find(s->r_ns, NULL, nsbuf);
        if (!nse) {
            err = cu_status_set(st, 404, "NotFound", "namespaces \"%s\" not found", nsbuf);
            st_details(st, "namespaces", nsbuf, "");
            goto out;
        }
        if (nse->terminating) {
            err = cu_status_set(st, 403, "Forbidden",
                                "%s \"%s\" is forbidden: unable to create new content in namespace "
                                "%s because it is being terminated",
                                rt->res->qname, namebuf, nsbuf);
            st_details(st, rt->pub.resource, namebuf, rt->pub.group);
            goto out;
        }
    }
    if (generate) {
        int tries = 0;
        do {
            cu_name_generate(namebuf, sizeof(namebuf), gen, rng_next(s));
        } while (ent_find(rt->res, nsbuf, namebuf) && ++tries < 16);
        cu_jset_str(m, "name", namebuf);
    }
    if (ent_find(rt->res, nsbuf, namebuf)) {
        err = cu_status_set(st, 409, "AlreadyExists", "%s \"%s\" already exists", rt->res->qname,
                            namebuf);
        st_details(st, rt->pub.resource, namebuf, rt->pub.group);
        goto out;
    }
    char uid[48], ts[40];
    gen_uid(s, uid);
    now_str(s, ts, sizeof(ts));
    cu_jset_str(m, "uid", uid);
    cu_jset_str(m, "creationTimestamp", ts);
    prepare_create(rt, obj, ts);
    if (rt->kid == K_CRD && (err = register_crd_locked(s, obj, st)) != CU_OK)
        goto out;
    err = commit_put(s, &c, rt, NULL, obj, st);
out:
    op_finish(s, &c);
    if (err == CU_OK && out)
        *out = to_rt(rt, obj);
    else
        json_object_put(obj);
    return err;
}

cu_err cu_store_get(cu_store *s, const cu_rtype *rtp, const char *ns, const char *name,
                    json_object **out, cu_status *st)
{
    rt_ent *rt = (rt_ent *)rtp;
    *out = NULL;
    pthread_mutex_lock(&s->mu);
    if (!rt->served) {
        pthread_mutex_unlock(&s->mu);
        return err_not_served(st);
    }
    ent *e = ent_find(rt->res, ns, name ? name : "");
    if (!e) {
        cu_err err = err_notfound(st, rt, name ? name : "");
        pthread_mutex_unlock(&s->mu);
        return err;
    }
    rstr *d = rstr_ref(e->data);
    pthread_mutex_unlock(&s->mu);
    json_object *o = jparse_r(d);
    rstr_unref(d);
    if (!o)
        return cu_status_set(st, 500, "InternalError", "stored object is not valid JSON");
    *out = to_rt(rt, o);
    return CU_OK;
}

/* Copies field k of src into dst (or removes it from dst). */
static void copy_field(json_object *dst, json_object *src, const char *k)
{
    json_object *v = cu_jget(src, k);
    if (!v) {
        json_object_object_del(dst, k);
        return;
    }
    json_object *c = NULL;
    json_object_deep_copy(v, &c, NULL);
    json_object_object_add(dst, k, c);
}

static int field_equal(json_object *a, json_object *b, const char *k)
{
    json_object *x = cu_jget(a, k), *y = cu_jget(b, k);
    if (!x || !y)
        return !x && !y;
    return json_object_equal(x, y);
}

/* Did the object's "spec" change (for CRs: anything but metadata and status)? */
static int spec_changed(const rt_ent *rt, json_object *old, json_object *nw)
{
    if (rt->kid != K_CR)
        return !field_equal(old, nw, "spec");
    json_object_object_foreach (nw, k, v) {
        (void)v;
        if (!strcmp(k, "metadata") || !strcmp(k, "status") || !strcmp(k, "apiVersion") ||
            !strcmp(k, "kind"))
            continue;
        if (!field_equal(old, nw, k))
            return 1;
    }
    json_object_object_foreach (old, k2, v2) {
        (void)v2;
        if (!strcmp(k2, "metadata") || !strcmp(k2, "status") || !strcmp(k2, "apiVersion") ||
            !strcmp(k2, "kind"))
            continue;
        if (!cu_jget(nw, k2))
            return 1;
    }
    return 0;
}

cu_err cu_store_update(cu_store *s, const cu_rtype *rtp, const char *ns, const char *name,
                       const char *subresource, json_object *obj, json_object **out, cu_status *st)
{
    rt_ent *rt = (rt_ent *)rtp;
    opctx c;
    memset(&c, 0, sizeof(c));
    cu_err err = CU_OK;
    json_object *old = NULL, *nw = NULL;
    int status_ep = subresource && *subresource;
    if (out)
        *out = NULL;
    if (!rt || !name) {
        json_object_put(obj);
        return cu_status_set(st, 400, "BadRequest", "no name");
    }
    if (status_ep && (strcmp(subresource, "status") || !rt->pub.status_sub)) {
        json_object_put(obj);
        return err_not_served(st);
    }
    if (!obj || !json_object_is_type(obj, json_type_object)) {
        json_object_put(obj);
        return cu_status_set(st, 400, "BadRequest", "the request body must be a JSON object");
    }
    if ((err = check_type_meta(rt, obj, st)) != CU_OK) {
        json_object_put(obj);
        return err;
    }
    if ((err = objmeta_check(rt, obj, st)) != CU_OK) {
        json_object_put(obj);
        return err;
    }
    json_object *m = cu_jchild(obj, "metadata");
    const char *mname = cu_jstr(m, "name"), *mns = cu_jstr(m, "namespace");
    if (mname && *mname && strcmp(mname, name)) {
        err = cu_status_set(st, 400, "BadRequest",
                            "the name of the object (%s) does not match the name on the URL (%s)",
                            mname, name);
        json_object_put(obj);
        return err;
    }
    if (rt->pub.namespaced && ns && *ns && mns && *mns && strcmp(mns, ns)) {
        json_object_put(obj);
        return cu_status_set(st, 400, "BadRequest",
                             "the namespace of the provided object does not match the namespace "
                             "sent on the request");
    }
    pthread_mutex_lock(&s->mu);
    if (!rt->served) {
        err = err_not_served(st);
        goto out;
    }
    ent *e = ent_find(rt->res, ns, name);
    if (!e) {
        err = err_notfound(st, rt, name);
        goto out;
    }
    const char *rvs = cu_jstr(m, "resourceVersion");
    if (rvs && *rvs) {
        int64_t rv;
        if (parse_rv(rvs, &rv)) {
            err = err_invalid1(st, rt, name, "metadata.resourceVersion", "FieldValueInvalid",
                               "Invalid value: \"invalid\": must be a valid resource version");
            goto out;
        }
        if (rv != e->rv) {
            err = err_conflict(st, rt, name);
            goto out;
        }
    } else if (!rt->uncond) {
        err = err_invalid1(st, rt, name, "metadata.resourceVersion", "FieldValueInvalid",
                           "Invalid value: 0x0: must be specified for an update");
        goto out;
    }
    old = jparse_r(e->data);
    if (!old) {
        err = cu_status_set(st, 500, "InternalError", "stored object is not valid JSON");
        goto out;
    }
    if (status_ep) {
        json_object_deep_copy(old, &nw, NULL);
        copy_field(nw, obj, "status");
        /* managedFields carry the status write's ownership (kube-apiserver's
         * status strategies reset all metadata but managedFields) */
        if (cu_jget(cu_jchild(obj, "metadata"), "managedFields"))
            copy_field(cu_jchild(nw, "metadata"), cu_jchild(obj, "metadata"), "managedFields");
        json_object_put(obj);
        obj = NULL;
    } else {
        nw = obj;
        obj = NULL;
        if (rt->pub.status_sub)
            copy_field(nw, old, "status");
        json_object *nm = cu_jchild(nw, "metadata"), *om = cu_jget(old, "metadata");
        cu_jset_str(nm, "name", name);
        if (rt->pub.namespaced)
            cu_jset_str(nm, "namespace", e->ns);
        else
            json_object_object_del(nm, "namespace");
        const char *keep[] = {
            "uid",        "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
            "generation", "selfLink"
        };
        for (size_t i = 0; i < sizeof(keep) / sizeof(*keep); i++)
            copy_field(nm, om, keep[i]);
        if (cu_jget(om, "deletionTimestamp")) {
            json_object *nf = cu_jget(nm, "finalizers"), *of = cu_jget(om, "finalizers");
            char added[512] = "";
            for (size_t i = 0; i < cu_jarr_len(nf); i++) {
                json_object *f = json_object_array_get_idx(nf, i);
                if (json_object_is_type(f, json_type_string) &&
                    !jarr_has_str(of, json_object_get_string(f))) {
                    size_t l = strlen(added);
                    snprintf(added + l, sizeof(added) - l, "%s\"%s\"", l ? ", " : "",
                             json_object_get_string(f));
                }
            }
            if (added[0]) {
                char msg[700];
                snprintf(msg, sizeof(msg),
                         "Forbidden: no new finalizers can be added if the object "
                         "is being deleted, found new finalizers []string{%s}",
                         added);
                /* kube-apiserver 1.35 runs this check twice (the generic
                 * update validation and the strategy's), so it lists the
                 * cause twice; kubectl prints the message once */
                ferrs fe;
                fe.n = fe.total = 0;
                ferr_add(&fe, "metadata.finalizers", "FieldValueForbidden", "%s", msg);
                ferr_add(&fe, "metadata.finalizers", "FieldValueForbidden", "%s", msg);
                err = err_invalid(st, rt, name, &fe);
                goto out;
            }
        }
        if (rt->kid == K_NS) {
            ensure_obj(nw, "spec");
            copy_field(cu_jget(nw, "spec"), cu_jget(old, "spec"), "finalizers");
            ensure_obj(nm, "labels");
            cu_jset_str(cu_jget(nm, "labels"), "kubernetes.io/metadata.name", name);
        }
    }
    {
        ferrs fe;
        fe.n = fe.total = 0;
        if (rt->kid == K_CR)
            schema_check(rt, nw, &fe);
        if (rt->kid == K_POD && !status_ep)
            pod_gates_update(nw, old, &fe);
        if (fe.n) {
            err = err_invalid(st, rt, name, &fe);
            goto out;
        }
    }
    if (rt->kid == K_CRD && !status_ep && !field_equal(old, nw, "spec") &&
        (err = register_crd_locked(s, nw, st)) != CU_OK)
        goto out;
    if (rt->gen && spec_changed(rt, old, nw)) {
        json_object *g = cu_jget(cu_jget(old, "metadata"), "generation");
        int64_t gv = g ? json_object_get_int64(g) : 0;
        json_object_object_add(cu_jchild(nw, "metadata"), "generation",
                               json_object_new_int64(gv + 1));
    }
    /* a no-op update writes nothing and keeps the resourceVersion */
    set_rv(nw, e->rv);
    to_rt(rt->res->storage_rt, nw);
    if (json_object_equal(nw, old))
        goto out;
    err = commit_or_remove(s, &c, rt, e, nw, st);
    cascade(s, &c);
out:
    op_finish(s, &c);
    json_object_put(obj);
    json_object_put(old);
    if (err == CU_OK && out)
        *out = to_rt(rt, nw);
    else
        json_object_put(nw);
    return err;
}

cu_err cu_store_delete(cu_store *s, const cu_rtype *rtp, const char *ns, const char *name,
                       const char *propagation, const char *precondition_rv, json_object **out,
                       cu_status *st)
{
    rt_ent *rt = (rt_ent *)rtp;
    opctx c;
    memset(&c, 0, sizeof(c));
    cu_err err = CU_OK;
    json_object *o = NULL;
    if (out)
        *out = NULL;
    if (!rt || !name)
        return cu_status_set(st, 400, "BadRequest", "no name");
    if (propagation && *propagation && strcmp(propagation, "Background") &&
        strcmp(propagation, "Foreground") && strcmp(propagation, "Orphan"))
        return cu_status_set(st, 400, "BadRequest",
                             "propagationPolicy: Unsupported value: \"%s\": supported values: "
                             "\"Foreground\", \"Background\", \"Orphan\"",
                             propagation);
    /* batch/v1 Jobs orphan their pods unless told otherwise, as kube-apiserver does */
    if (!propagation || !*propagation)
        propagation = rt->kid == K_JOB ? "Orphan" : "Background";
    pthread_mutex_lock(&s->mu);
    if (!rt->served) {
        err = err_not_served(st);
        goto out;
    }
    ent *e = ent_find(rt->res, ns, name);
    if (!e) {
        err = err_notfound(st, rt, name);
        goto out;
    }
    if (precondition_rv && *precondition_rv) {
        int64_t rv;
        if (parse_rv(precondition_rv, &rv) || rv != e->rv) {
            err =
                cu_status_set(st, 409, "Conflict",
                              "Operation cannot be fulfilled on %s \"%s\": the ResourceVersion in "
                              "the precondition (%s) does not match the ResourceVersion in record "
                              "(%lld). The object might have been modified",
                              rt->pub.kind, name, precondition_rv, (long long)e->rv);
            st_details(st, rt->pub.kind, name, rt->pub.group);
            goto out;
        }
    }
    if (rt->kid == K_NS && (!strcmp(name, "default") || !strcmp(name, "kube-system") ||
                            !strcmp(name, "kube-public"))) {
        err = cu_status_set(st, 403, "Forbidden",
                            "namespaces \"%s\" is forbidden: this namespace may not be deleted",
                            name);
        st_details(st, "namespaces", name, "");
        goto out;
    }
    err = del_ent(s, &c, rt, e, propagation, &o, st);
    cascade(s, &c);
out:
    op_finish(s, &c);
    if (err == CU_OK && out)
        *out = to_rt(rt, o);
    else
        json_object_put(o);
    return err;
}
