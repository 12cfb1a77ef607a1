/*
 * cu_registry.c - the store's served types: the built-in resources and
 * CustomResourceDefinitions (validation, registration, versions, status
 * conditions). See internal/cu_store_int.h.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cu_schema.h"
#include "cu_store.h"
#include "cu_objmeta.h"

#include "cu_store_int.h"

static char **split_list(const char *s, size_t *n)
{
    *n = 0;
    if (!s || !*s)
        return NULL;
    size_t cnt = 1;
    for (const char *p = s; *p; p++)
        cnt += *p == ',';
    char **v = calloc(cnt, sizeof(*v));
    if (!v)
        return NULL;
    const char *p = s;
    while (*p) {
        const char *c = strchr(p, ',');
        size_t l = c ? (size_t)(c - p) : strlen(p);
        v[(*n)++] = strndup(p, l);
        p += l + (c ? 1 : 0);
    }
    return v;
}

void free_strv(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

void free_cols(cu_pcol *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(c[i].name);
        free(c[i].type);
        free(c[i].format);
        free(c[i].description);
        free(c[i].json_path);
    }
    free(c);
}

res_t *res_find_q(cu_store *s, const char *group, const char *plural)
{
    for (size_t i = 0; i < s->nres; i++)
        if (strcmp(s->res[i]->group, group) == 0 && strcmp(s->res[i]->plural, plural) == 0)
            return s->res[i];
    return NULL;
}

res_t *res_by_qname(cu_store *s, const char *qname)
{
    for (size_t i = 0; i < s->nres; i++)
        if (strcmp(s->res[i]->qname, qname) == 0)
            return s->res[i];
    return NULL;
}

static res_t *res_add(cu_store *s, const char *group, const char *plural)
{
    res_t *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    r->group = strdup(group);
    r->plural = strdup(plural);
    size_t ql = strlen(group) + strlen(plural) + 2;
    r->qname = malloc(ql);
    if (!r->group || !r->plural || !r->qname)
        goto fail;
    if (*group)
        snprintf(r->qname, ql, "%s.%s", plural, group);
    else
        snprintf(r->qname, ql, "%s", plural);
    r->sorted = 1;
    if (cu_vec_reserve(&s->res, s->nres, &s->capres, sizeof(*s->res), 32))
        goto fail;
    s->res[s->nres++] = r;
    return r;
fail:
    free(r->group);
    free(r->plural);
    free(r->qname);
    free(r);
    return NULL;
}

static rt_ent *rt_add(cu_store *s)
{
    rt_ent *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    if (cu_vec_reserve(&s->rts, s->nrts, &s->caprts, sizeof(*s->rts), 32)) {
        free(t);
        return NULL;
    }
    s->rts[s->nrts++] = t;
    return t;
}

int add_builtin(cu_store *s, const bdef *d)
{
    res_t *r = res_add(s, d->group, d->plural);
    rt_ent *t = r ? rt_add(s) : NULL;
    if (!t)
        return -1;
    cu_rtype *p = &t->pub;
    p->group = strdup(d->group);
    p->version = strdup(d->version);
    p->resource = strdup(d->plural);
    p->singular = strdup(d->singular);
    p->kind = strdup(d->kind);
    size_t ll = strlen(d->kind) + 5;
    p->list_kind = malloc(ll);
    if (p->list_kind)
        snprintf(p->list_kind, ll, "%sList", d->kind);
    p->namespaced = d->namespaced;
    p->status_sub = d->status_sub;
    p->short_names = split_list(d->shorts, &p->nshort);
    p->categories = split_list(d->cats, &p->ncat);
    if (d->cols && *d->cols) {
        size_t n = 1;
        for (const char *c = d->cols; *c; c++)
            n += *c == ';';
        p->cols = calloc(n, sizeof(*p->cols));
        const char *c = d->cols;
        while (p->cols && *c) {
            const char *e = strchr(c, ';');
            size_t l = e ? (size_t)(e - c) : strlen(c);
            char tmp[256];
            snprintf(tmp, sizeof(tmp), "%.*s", (int)l, c);
            char *save = NULL, *nm = strtok_r(tmp, "|", &save), *ty = strtok_r(NULL, "|", &save);
            char *jp = strtok_r(NULL, "|", &save), *pr = strtok_r(NULL, "|", &save);
            cu_pcol *pc = &p->cols[p->ncols++];
            pc->name = xstrdup(nm);
            pc->type = xstrdup(ty);
            pc->json_path = xstrdup(jp);
            pc->priority = pr ? atoi(pr) : 0;
            c += l + (e ? 1 : 0);
        }
    }
    p->storage = 1;
    t->res = r;
    t->served = 1;
    t->gen = d->gen;
    t->uncond = 1;
    t->kid = d->kid;
    t->fields = d->fields;
    r->storage_rt = t;
    r->namespaced = d->namespaced;
    r->kid = d->kid;
    if (d->kid == K_NS)
        s->r_ns = r;
    return 0;
}

static int name_match(const cu_rtype *p, const char *name)
{
    if (strcmp(p->resource, name) == 0 || strcmp(p->singular, name) == 0)
        return 1;
    for (size_t i = 0; i < p->nshort; i++)
        if (strcmp(p->short_names[i], name) == 0)
            return 1;
    return strcasecmp(p->kind, name) == 0;
}

static rt_ent *rt_lookup(cu_store *s, const char *group, const char *version, const char *name)
{
    /* exact plural first, then the other names */
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < s->nrts; i++) {
            rt_ent *t = s->rts[i];
            if (!t->served)
                continue;
            if (group && strcmp(t->pub.group, group) != 0)
                continue;
            if (version && strcmp(t->pub.version, version) != 0)
                continue;
            if (pass == 0 ? strcmp(t->pub.resource, name) == 0 : name_match(&t->pub, name))
                return t;
        }
    return NULL;
}

const cu_rtype *cu_store_rtype(cu_store *s, const char *group, const char *version,
                               const char *name)
{
    if (!s || !name)
        return NULL;
    pthread_mutex_lock(&s->mu);
    rt_ent *t = rt_lookup(s, group, version, name);
    pthread_mutex_unlock(&s->mu);
    return t ? &t->pub : NULL;
}

const cu_rtype *cu_store_rtype_kind(cu_store *s, const char *api_version, const char *kind)
{
    if (!s || !api_version || !kind)
        return NULL;
    char group[256];
    const char *slash = strchr(api_version, '/'), *version = api_version;
    if (slash) {
        snprintf(group, sizeof(group), "%.*s", (int)(slash - api_version), api_version);
        version = slash + 1;
    } else {
        group[0] = '\0';
    }
    const cu_rtype *r = NULL;
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < s->nrts && !r; i++) {
        rt_ent *t = s->rts[i];
        if (t->served && strcmp(t->pub.group, group) == 0 && strcmp(t->pub.version, version) == 0 &&
            strcmp(t->pub.kind, kind) == 0)
            r = &t->pub;
    }
    pthread_mutex_unlock(&s->mu);
    return r;
}

void cu_store_each_rtype(cu_store *s, void (*fn)(const cu_rtype *rt, void *ud), void *ud)
{
    pthread_mutex_lock(&s->mu);
    size_t n = s->nrts;
    rt_ent **v = malloc((n ? n : 1) * sizeof(*v));
    size_t k = 0;
    for (size_t i = 0; v && i < n; i++)
        if (s->rts[i]->served)
            v[k++] = s->rts[i];
    pthread_mutex_unlock(&s->mu);
    for (size_t i = 0; i < k; i++)
        fn(&v[i]->pub, ud);
    free(v);
}

/* Replaces a registry string, keeping the old one alive until the store
 * is freed (readers borrow these without the lock). */
static void reg_set(cu_store *s, char **slot, const char *v)
{
    if (*slot && v && strcmp(*slot, v) == 0)
        return;
    grave_add(s, *slot);
    *slot = xstrdup(v);
}

/* Kubernetes' ordering of version names (kube-aware): GA above beta above
 * alpha, then the higher major, then the higher minor ("v2" > "v1" >
 * "v1beta2" > "v1beta1" > "v1alpha1"), as apimachinery's
 * CompareKubeAwareVersionStrings; names not of that form rank below, and
 * among themselves by name. Returns > 0 when a ranks above b. */
static int kube_version_cmp(const char *a, const char *b)
{
    long ma = 0, mb = 0, na = 0, nb = 0;
    int ta = 3, tb = 3; /* 2 GA, 1 beta, 0 alpha, 3 not a kube version */
    char sa[16] = "", sb[16] = "";
    int ka = sscanf(a, "v%ld%15[a-z]%ld", &ma, sa, &na),
        kb = sscanf(b, "v%ld%15[a-z]%ld", &mb, sb, &nb);
    if (ka == 1)
        ta = 2;
    else if (ka == 3 && strcmp(sa, "beta") == 0)
        ta = 1;
    else if (ka == 3 && strcmp(sa, "alpha") == 0)
        ta = 0;
    if (kb == 1)
        tb = 2;
    else if (kb == 3 && strcmp(sb, "beta") == 0)
        tb = 1;
    else if (kb == 3 && strcmp(sb, "alpha") == 0)
        tb = 0;
    if (ta == 3 || tb == 3) {
        if (ta != tb)
            return ta == 3 ? -1 : 1;
        return -strcmp(a, b);
    }
    if (ma != mb)
        return ma > mb ? 1 : -1;
    if (ta != tb)
        return ta > tb ? 1 : -1;
    return na == nb ? 0 : na > nb ? 1 : -1;
}

/* The warning kube-apiserver gives for every request to a deprecated CRD
 * version v (versions: the CRD's): its deprecationWarning, else
 * "GROUP/VERSION KIND is deprecated; use GROUP/NEWER KIND", NEWER the
 * highest served, not deprecated version above it. NULL when v is not
 * deprecated. Written into out. */
static const char *deprecation_warning(json_object *v, json_object *versions, const char *group,
                                       const char *kind, char *out, size_t n)
{
    json_object *dep = cu_jget(v, "deprecated");
    if (!dep || !json_object_get_boolean(dep))
        return NULL;
    const char *w = cu_jstr(v, "deprecationWarning"), *name = cu_jstr(v, "name");
    if (w) {
        snprintf(out, n, "%s", w);
        return out;
    }
    const char *best = NULL;
    for (size_t i = 0; i < cu_jarr_len(versions); i++) {
        json_object *o = json_object_array_get_idx(versions, i);
        const char *on = cu_jstr(o, "name");
        json_object *sv = cu_jget(o, "served"), *od = cu_jget(o, "deprecated");
        if (!on || (sv && !json_object_get_boolean(sv)) || (od && json_object_get_boolean(od)) ||
            kube_version_cmp(name ? name : "", on) >= 0)
            continue;
        if (!best || kube_version_cmp(on, best) > 0)
            best = on;
    }
    if (best)
        snprintf(out, n, "%s/%s %s is deprecated; use %s/%s %s", group, name ? name : "", kind,
                 group, best, kind);
    else
        snprintf(out, n, "%s/%s %s is deprecated", group, name ? name : "", kind);
    return out;
}

static int strv_equal(char **a, size_t na, json_object *arr)
{
    if (na != cu_jarr_len(arr))
        return 0;
    for (size_t i = 0; i < na; i++) {
        json_object *v = json_object_array_get_idx(arr, i);
        if (!json_object_is_type(v, json_type_string) || strcmp(a[i], json_object_get_string(v)))
            return 0;
    }
    return 1;
}

static void reg_set_strv(cu_store *s, char ***slot, size_t *n, json_object *arr)
{
    if (strv_equal(*slot, *n, arr))
        return;
    for (size_t i = 0; i < *n; i++)
        grave_add(s, (*slot)[i]);
    grave_add(s, *slot);
    size_t len = cu_jarr_len(arr);
    *slot = len ? calloc(len, sizeof(char *)) : NULL;
    *n = 0;
    for (size_t i = 0; *slot && i < len; i++) {
        json_object *v = json_object_array_get_idx(arr, i);
        if (json_object_is_type(v, json_type_string))
            (*slot)[(*n)++] = strdup(json_object_get_string(v));
    }
}

static void lower_copy(char *dst, size_t n, const char *src)
{
    size_t i = 0;
    for (; src[i] && i + 1 < n; i++)
        dst[i] = (char)tolower((unsigned char)src[i]);
    dst[i] = '\0';
}

/* Validates a CRD object (borrowed) as kube-apiserver does before it
 * serves it. */
static int crd_validate(json_object *crd, ferrs *fe)
{
    json_object *spec = cu_jget(crd, "spec"), *names = cu_jget(spec, "names");
    const char *group = cu_jstr(spec, "group"), *plural = cu_jstr(names, "plural");
    const char *kind = cu_jstr(names, "kind"), *scope = cu_jstr(spec, "scope");
    const char *name = cu_jstr(cu_jget(crd, "metadata"), "name");
    if (!spec) {
        ferr_add(fe, "spec", "FieldValueRequired", "Required value");
        return -1;
    }
    if (!group || !*group)
        ferr_add(fe, "spec.group", "FieldValueRequired", "Required value");
    else if (!strchr(group, '.'))
        ferr_add(fe, "spec.group", "FieldValueInvalid",
                 "Invalid value: \"%s\": should be a domain with at least one dot", group);
    if (!plural || !*plural)
        ferr_add(fe, "spec.names.plural", "FieldValueRequired", "Required value");
    if (!kind || !*kind)
        ferr_add(fe, "spec.names.kind", "FieldValueRequired", "Required value");
    if (!scope)
        ferr_add(fe, "spec.scope", "FieldValueRequired", "Required value");
    else if (strcmp(scope, "Namespaced") && strcmp(scope, "Cluster"))
        ferr_add(fe, "spec.scope", "FieldValueNotSupported",
                 "Unsupported value: \"%s\": supported values: \"Cluster\", \"Namespaced\"", scope);
    if (group && plural && name) {
        char want[512];
        snprintf(want, sizeof(want), "%s.%s", plural, group);
        if (strcmp(want, name))
            ferr_add(fe, "metadata.name", "FieldValueInvalid",
                     "Invalid value: \"%s\": must be spec.names.plural+\".\"+spec.group", name);
    }
    json_object *vers = cu_jget(spec, "versions");
    size_t nv = cu_jarr_len(vers), nstorage = 0;
    if (!nv)
        ferr_add(fe, "spec.versions", "FieldValueInvalid",
                 "Invalid value: null: must have exactly one version marked as storage version");
    for (size_t i = 0; i < nv; i++) {
        json_object *v = json_object_array_get_idx(vers, i), *sv = cu_jget(v, "storage");
        char f[64];
        if (!cu_jstr(v, "name") || !*cu_jstr(v, "name")) {
            snprintf(f, sizeof(f), "spec.versions[%zu].name", i);
            ferr_add(fe, f, "FieldValueRequired", "Required value");
        }
        if (sv && json_object_get_boolean(sv))
            nstorage++;
        /* the schema itself: counts, multipleOf, patterns, defaults */
        json_object *schema = cu_jget(cu_jget(v, "schema"), "openAPIV3Schema");
        if (schema) {
            char sp[80];
            cu_schema_err se[8];
            snprintf(sp, sizeof(sp), "spec.versions[%zu].schema.openAPIV3Schema", i);
            size_t ns = cu_schema_check(schema, sp, se, 8);
            for (size_t k = 0; k < ns && k < 8; k++)
                ferr_add(fe, se[k].field, se[k].type, "%s", se[k].message);
            fe->total += ns > 8 ? ns - 8 : 0;
        }
    }
    if (nv && nstorage != 1)
        ferr_add(fe, "spec.versions", "FieldValueInvalid",
                 "Invalid value: %zu: must have exactly one version marked as storage version",
                 nstorage);
    return fe->n ? -1 : 0;
}

static json_object *cond_new(const char *type, const char *reason, const char *msg, const char *ts)
{
    json_object *c = json_object_new_object();
    cu_jset_str(c, "type", type);
    cu_jset_str(c, "status", "True");
    cu_jset_str(c, "lastTransitionTime", ts);
    cu_jset_str(c, "reason", reason);
    cu_jset_str(c, "message", msg);
    return c;
}

/* Registers crd's served versions (lock held) and fills its status the
 * way the apiextensions controllers do. crd is modified (defaults, status). */
cu_err register_crd_locked(cu_store *s, json_object *crd, cu_status *st)
{
    ferrs fe;
    fe.n = fe.total = 0;
    rt_ent *crd_rt = rt_lookup(s, "apiextensions.k8s.io", "v1", "customresourcedefinitions");
    const char *crdname = cu_jstr(cu_jget(crd, "metadata"), "name");
    if (crd_validate(crd, &fe))
        return err_invalid(st, crd_rt, crdname ? crdname : "", &fe);
    json_object *spec = cu_jget(crd, "spec"), *names = cu_jget(spec, "names");
    const char *group = cu_jstr(spec, "group"), *plural = cu_jstr(names, "plural");
    const char *kind = cu_jstr(names, "kind");
    char singular[256], list_kind[300];
    if (cu_jstr(names, "singular") && *cu_jstr(names, "singular"))
        snprintf(singular, sizeof(singular), "%s", cu_jstr(names, "singular"));
    else {
        lower_copy(singular, sizeof(singular), kind);
        cu_jset_str(names, "singular", singular);
    }
    if (cu_jstr(names, "listKind") && *cu_jstr(names, "listKind"))
        snprintf(list_kind, sizeof(list_kind), "%s", cu_jstr(names, "listKind"));
    else {
        snprintf(list_kind, sizeof(list_kind), "%sList", kind);
        cu_jset_str(names, "listKind", list_kind);
    }
    if (!cu_jget(spec, "conversion")) {
        json_object *cv = json_object_new_object();
        cu_jset_str(cv, "strategy", "None");
        json_object_object_add(spec, "conversion", cv);
    }
    int namespaced = strcmp(cu_jstr(spec, "scope"), "Namespaced") == 0;
    /* name conflicts with another CRD of the group */
    res_t *r = res_find_q(s, group, plural);
    if (r && r->kid != K_CR)
        return err_invalid1(st, crd_rt, crdname, "spec.group", "FieldValueInvalid",
                            "Invalid value: the resource is served by the API server itself");
    if (r && r->crd_name && strcmp(r->crd_name, crdname)) {
        return cu_status_set(st, 409, "Conflict",
                             "customresourcedefinitions \"%s\": plural %s is "
                             "already served by %s",
                             crdname, plural, r->crd_name);
    }
    if (!r) {
        if (res_find_q(s, group, plural))
            return cu_status_set(st, 500, "InternalError", "dup");
        r = res_add(s, group, plural);
        if (!r)
            return cu_status_set(st, 500, "InternalError", "out of memory");
        r->kid = K_CR;
    }
    if (!r->crd_name)
        r->crd_name = strdup(crdname);
    r->namespaced = namespaced;
    json_object *vers = cu_jget(spec, "versions");
    size_t nv = cu_jarr_len(vers);
    if (nv > 1)
        r->multi = 1;
    const char *storage_version = NULL;
    /* disable versions no longer listed (or not served) first */
    for (size_t i = 0; i < s->nrts; i++) {
        rt_ent *t = s->rts[i];
        if (t->res != r)
            continue;
        int listed = 0;
        for (size_t j = 0; j < nv; j++) {
            json_object *v = json_object_array_get_idx(vers, j);
            json_object *served = cu_jget(v, "served");
            if (strcmp(cu_jstr(v, "name"), t->pub.version) == 0 &&
                (!served || json_object_get_boolean(served)))
                listed = 1;
        }
        if (!listed)
            t->served = 0;
    }
    for (size_t j = 0; j < nv; j++) {
        json_object *v = json_object_array_get_idx(vers, j);
        const char *vname = cu_jstr(v, "name");
        json_object *served = cu_jget(v, "served"), *stor = cu_jget(v, "storage");
        int is_storage = stor && json_object_get_boolean(stor);
        if (is_storage)
            storage_version = vname;
        rt_ent *t = NULL;
        for (size_t i = 0; i < s->nrts && !t; i++)
            if (s->rts[i]->res == r && strcmp(s->rts[i]->pub.version, vname) == 0)
                t = s->rts[i];
        if (!t) {
            t = rt_add(s);
            if (!t)
                return cu_status_set(st, 500, "InternalError", "out of memory");
            t->res = r;
            t->pub.group = strdup(group);
            t->pub.version = strdup(vname);
            t->pub.resource = strdup(plural);
            t->pub.from_crd = 1;
            t->kid = K_CR;
            t->gen = 1;
            t->uncond = 0;
        }
        reg_set(s, &t->pub.singular, singular);
        reg_set(s, &t->pub.kind, kind);
        reg_set(s, &t->pub.list_kind, list_kind);
        char dep[1024];
        reg_set(s, &t->pub.deprecation, deprecation_warning(v, vers, group, kind, dep, sizeof dep));
        t->pub.namespaced = namespaced;
        t->pub.status_sub = cu_jget(cu_jget(v, "subresources"), "status") != NULL;
        reg_set_strv(s, &t->pub.short_names, &t->pub.nshort, cu_jget(names, "shortNames"));
        reg_set_strv(s, &t->pub.categories, &t->pub.ncat, cu_jget(names, "categories"));
        /* printer columns: replaced wholesale, old array kept alive */
        json_object *pcs = cu_jget(v, "additionalPrinterColumns");
        size_t np = cu_jarr_len(pcs);
        cu_pcol *cols = np ? calloc(np, sizeof(*cols)) : NULL;
        size_t nc = 0;
        for (size_t i = 0; cols && i < np; i++) {
            json_object *pc = json_object_array_get_idx(pcs, i);
            if (!cu_jstr(pc, "name") || !cu_jstr(pc, "jsonPath"))
                continue;
            cols[nc].name = xstrdup(cu_jstr(pc, "name"));
            cols[nc].type = xstrdup(cu_jstr(pc, "type") ? cu_jstr(pc, "type") : "string");
            cols[nc].format = xstrdup(cu_jstr(pc, "format"));
            cols[nc].description = xstrdup(cu_jstr(pc, "description"));
            cols[nc].json_path = xstrdup(cu_jstr(pc, "jsonPath"));
            cols[nc].priority =
                cu_jget(pc, "priority") ? json_object_get_int(cu_jget(pc, "priority")) : 0;
            nc++;
        }
        for (size_t i = 0; i < t->pub.ncols; i++) {
            cu_pcol *c = &t->pub.cols[i];
            grave_add(s, c->name);
            grave_add(s, c->type);
            grave_add(s, c->format);
            grave_add(s, c->description);
            grave_add(s, c->json_path);
        }
        grave_add(s, t->pub.cols);
        t->pub.cols = cols;
        t->pub.ncols = nc;
        json_object *schema = cu_jget(cu_jget(v, "schema"), "openAPIV3Schema");
        if (!(t->pub.schema && schema && json_object_equal(t->pub.schema, schema)) &&
            (t->pub.schema || schema)) {
            /* readers may borrow the old schema: keep it until the store goes */
            jgrave_add(s, t->pub.schema);
            rxgrave_add(s, t->pub.schema_rx);
            t->pub.schema = NULL;
            t->pub.schema_rx = NULL;
            if (schema)
                json_object_deep_copy(schema, &t->pub.schema, NULL);
            /* each pattern compiled once, here, not per validated string */
            if (t->pub.schema)
                t->pub.schema_rx = cu_schema_rx_new(t->pub.schema);
        }
        t->pub.storage = is_storage;
        t->served = !served || json_object_get_boolean(served);
    }
    for (size_t i = 0; i < s->nrts; i++)
        if (s->rts[i]->res == r && strcmp(s->rts[i]->pub.version, storage_version) == 0)
            r->storage_rt = s->rts[i];

    /* status: accepted names, conditions, stored versions */
    json_object *status = cu_jget(crd, "status");
    if (!status || !json_object_is_type(status, json_type_object)) {
        status = json_object_new_object();
        json_object_object_add(crd, "status", status);
    }
    json_object *acc = json_object_new_object();
    cu_jset_str(acc, "plural", plural);
    cu_jset_str(acc, "singular", singular);
    if (cu_jget(names, "shortNames")) {
        json_object *c = NULL;
        json_object_deep_copy(cu_jget(names, "shortNames"), &c, NULL);
        json_object_object_add(acc, "shortNames", c);
    }
    cu_jset_str(acc, "kind", kind);
    cu_jset_str(acc, "listKind", list_kind);
    if (cu_jget(names, "categories")) {
        json_object *c = NULL;
        json_object_deep_copy(cu_jget(names, "categories"), &c, NULL);
        json_object_object_add(acc, "categories", c);
    }
    json_object_object_add(status, "acceptedNames", acc);
    char ts[40];
    now_str(s, ts, sizeof(ts));
    json_object *old = cu_jget(status, "conditions");
    char ts_na[40], ts_est[40];
    snprintf(ts_na, sizeof(ts_na), "%s", ts);
    snprintf(ts_est, sizeof(ts_est), "%s", ts);
    for (size_t i = 0; i < cu_jarr_len(old); i++) {
        json_object *c = json_object_array_get_idx(old, i);
        const char *ty = cu_jstr(c, "type"), *lt = cu_jstr(c, "lastTransitionTime");
        if (!ty || !lt || !cu_jstr(c, "status") || strcmp(cu_jstr(c, "status"), "True"))
            continue;
        if (strcmp(ty, "NamesAccepted") == 0)
            snprintf(ts_na, sizeof(ts_na), "%s", lt);
        if (strcmp(ty, "Established") == 0)
            snprintf(ts_est, sizeof(ts_est), "%s", lt);
    }
    json_object *conds = json_object_new_array();
    json_object_array_add(conds,
                          cond_new("NamesAccepted", "NoConflicts", "no conflicts found", ts_na));
    json_object_array_add(conds, cond_new("Established", "InitialNamesAccepted",
                                          "the initial names have been accepted", ts_est));
    json_object_object_add(status, "conditions", conds);
    json_object *sv = cu_jget(status, "storedVersions");
    if (!sv || !json_object_is_type(sv, json_type_array)) {
        sv = json_object_new_array();
        json_object_object_add(status, "storedVersions", sv);
    }
    if (storage_version && !jarr_has_str(sv, storage_version))
        json_object_array_add(sv, json_object_new_string(storage_version));
    return CU_OK;
}

cu_err cu_store_register_crd(cu_store *s, json_object *crd, cu_status *st)
{
    json_object *copy = NULL;
    if (!crd || json_object_deep_copy(crd, &copy, NULL) || !copy)
        return cu_status_set(st, 400, "BadRequest", "not a CustomResourceDefinition object");
    pthread_mutex_lock(&s->mu);
    cu_err e = register_crd_locked(s, copy, st);
    pthread_mutex_unlock(&s->mu);
    json_object_put(copy);
    return e;
}
