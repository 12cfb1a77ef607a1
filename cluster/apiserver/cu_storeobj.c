/*
 * cu_storeobj.c - the store's objects and indexes, the events, hooks and
 * backend writes of a change, deletion (finalizers, namespaces, CRDs) and
 * owner-reference garbage collection. All with the store's lock held.
 * See internal/cu_store_int.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_store.h"

#include "cu_store_int.h"

const char EV_ADDED[] = "ADDED", EV_MODIFIED[] = "MODIFIED", EV_DELETED[] = "DELETED";
/* ------------------------------------------------------------------ */
/* objects and indexes (lock held)                                      */

ent *ent_new(res_t *r, const char *ns, const char *name)
{
    size_t nsl = (ns && *ns) ? strlen(ns) : 0, nl = strlen(name);
    size_t klen = (nsl ? nsl + 1 : 0) + nl;
    ent *e = calloc(1, sizeof(*e));
    if (!e)
        return NULL;
    e->key = malloc(klen + 1 + nsl + 1);
    if (!e->key) {
        free(e);
        return NULL;
    }
    if (nsl) {
        memcpy(e->key, ns, nsl);
        e->key[nsl] = '/';
        memcpy(e->key + nsl + 1, name, nl);
    } else {
        memcpy(e->key, name, nl);
    }
    e->key[klen] = '\0';
    if (nsl)
        memcpy(e->key + klen + 1, ns, nsl);
    e->key[klen + 1 + nsl] = '\0';
    e->ns = e->key + klen + 1;
    e->name = e->key + (nsl ? nsl + 1 : 0);
    e->nslen = nsl;
    e->res = r;
    return e;
}

void ent_free(ent *e)
{
    if (!e)
        return;
    rstr_unref(e->data);
    free_strv(e->owners, e->nowners);
    free(e->key);
    free(e);
}

ent *ent_find(res_t *r, const char *ns, const char *name)
{
    char key[KEY_MAX];
    if (!name)
        return NULL;
    make_key(key, sizeof(key), r->namespaced ? ns : NULL, name);
    return hm_get(&r->objs, key);
}

static void deps_add(cu_store *s, ent *e)
{
    for (size_t i = 0; i < e->nowners; i++) {
        deplist *d = hm_get(&s->deps, e->owners[i]);
        if (!d) {
            d = calloc(1, sizeof(*d));
            if (!d || !(d->uid = strdup(e->owners[i])) || hm_put(&s->deps, d->uid, d)) {
                if (d)
                    free(d->uid);
                free(d);
                continue;
            }
        }
        if (cu_vec_reserve(&d->v, d->n, &d->cap, sizeof(*d->v), 4))
            continue;
        d->v[d->n++] = e;
    }
}

static void deps_del(cu_store *s, ent *e)
{
    for (size_t i = 0; i < e->nowners; i++) {
        deplist *d = hm_get(&s->deps, e->owners[i]);
        if (!d)
            continue;
        for (size_t j = 0; j < d->n; j++)
            if (d->v[j] == e) {
                d->v[j] = d->v[--d->n];
                break;
            }
        if (!d->n) {
            hm_del(&s->deps, d->uid);
            free(d->uid);
            free(d->v);
            free(d);
        }
    }
}

void ent_set_meta(cu_store *s, ent *e, json_object *o)
{
    json_object *m = cu_jget(o, "metadata");
    deps_del(s, e);
    free_strv(e->owners, e->nowners);
    e->owners = NULL;
    e->nowners = 0;
    json_object *refs = cu_jget(m, "ownerReferences");
    size_t n = cu_jarr_len(refs);
    if (n)
        e->owners = calloc(n, sizeof(char *));
    for (size_t i = 0; e->owners && i < n; i++) {
        const char *u = cu_jstr(json_object_array_get_idx(refs, i), "uid");
        if (u && *u)
            e->owners[e->nowners++] = strdup(u);
    }
    deps_add(s, e);
    e->terminating = cu_jget(m, "deletionTimestamp") != NULL;
}

int ent_link(cu_store *s, ent *e)
{
    res_t *r = e->res;
    if (cu_vec_reserve(&r->vec, r->n, &r->cap, sizeof(*r->vec), 64))
        return -1;
    if (hm_put(&r->objs, e->key, e))
        return -1;
    if (e->uid[0] && hm_put(&s->uids, e->uid, e)) {
        hm_del(&r->objs, e->key);
        return -1;
    }
    if (r->n && strcmp(r->vec[r->n - 1]->key, e->key) > 0)
        r->sorted = 0;
    e->vidx = r->n;
    r->vec[r->n++] = e;
    if (e->nslen) {
        nscount *nc = hm_get(&s->nss, e->ns);
        if (!nc) {
            nc = calloc(1, sizeof(*nc));
            if (nc && (nc->ns = strdup(e->ns)) && !hm_put(&s->nss, nc->ns, nc)) {
                /* inserted */
            } else if (nc) {
                free(nc->ns);
                free(nc);
                nc = NULL;
            }
        }
        if (nc)
            nc->n++;
    }
    return 0;
}

void ent_unlink(cu_store *s, ent *e)
{
    res_t *r = e->res;
    hm_del(&r->objs, e->key);
    if (e->uid[0] && hm_get(&s->uids, e->uid) == e)
        hm_del(&s->uids, e->uid);
    deps_del(s, e);
    size_t i = e->vidx;
    if (i != r->n - 1) {
        r->vec[i] = r->vec[r->n - 1];
        r->vec[i]->vidx = i;
        r->sorted = 0;
    }
    r->n--;
    if (e->nslen) {
        nscount *nc = hm_get(&s->nss, e->ns);
        if (nc && --nc->n == 0) {
            hm_del(&s->nss, nc->ns);
            free(nc->ns);
            free(nc);
        }
    }
}

static size_t ns_count(cu_store *s, const char *ns)
{
    nscount *nc = hm_get(&s->nss, ns);
    return nc ? nc->n : 0;
}

static int ent_cmp(const void *a, const void *b)
{
    return strcmp((*(ent *const *)a)->key, (*(ent *const *)b)->key);
}

void res_sort(res_t *r)
{
    if (r->sorted)
        return;
    qsort(r->vec, r->n, sizeof(*r->vec), ent_cmp);
    for (size_t i = 0; i < r->n; i++)
        r->vec[i]->vidx = i;
    r->sorted = 1;
}

/* First index whose key is > key (strict) or >= key. */
size_t res_bound(res_t *r, const char *key, int strict)
{
    size_t lo = 0, hi = r->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(r->vec[mid]->key, key);
        if (c < 0 || (strict && c == 0))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* ------------------------------------------------------------------ */
/* events, hooks, backend                                               */

static void pend_add(opctx *c, rt_ent *rt, const char *type, rstr *obj)
{
    if (cu_vec_reserve(&c->p, c->np, &c->capp, sizeof(*c->p), 8))
        return;
    c->p[c->np].rt = rt;
    c->p[c->np].type = type;
    c->p[c->np].obj = rstr_ref(obj);
    c->np++;
}

static void work_push(opctx *c, const char *uid)
{
    if (!uid || !*uid)
        return;
    if (cu_vec_reserve(&c->work, c->nwork, &c->capwork, sizeof(*c->work), 8))
        return;
    char *d = strdup(uid);
    if (d)
        c->work[c->nwork++] = d;
}

static size_t sev_bytes(const sev *v)
{
    return (v->obj ? v->obj->len : 0) + (v->old ? v->old->len : 0);
}

/* Drops the oldest event of the history (its RV becomes too old). */
void ring_pop(cu_store *s)
{
    sev *o = &s->ring[s->tail % s->hcap];
    s->hist_rv = o->rv;
    s->hbytes -= sev_bytes(o);
    rstr_unref(o->obj);
    rstr_unref(o->old);
    free(o->ns);
    s->tail++;
}

static void emit(cu_store *s, opctx *c, rt_ent *rt, const char *type, const char *ns,
                 const char *name, rstr *obj, rstr *old, int64_t rv)
{
    if (s->head - s->tail == s->hcap)
        ring_pop(s);
    /* the history is capped by bytes too: large objects changed often
     * would otherwise keep every version alive (the newest event stays) */
    size_t add = (obj ? obj->len : 0) + (old ? old->len : 0);
    while (s->head > s->tail && s->hbytes + add > s->hbytes_max)
        ring_pop(s);
    sev *v = &s->ring[s->head % s->hcap];
    v->rv = rv;
    v->res = rt->res;
    v->type = type;
    if (!ns)
        ns = "";
    size_t nl = strlen(ns), ml = strlen(name);
    v->ns = malloc(nl + ml + 2);
    if (v->ns) {
        memcpy(v->ns, ns, nl + 1);
        memcpy(v->ns + nl + 1, name, ml + 1);
    }
    v->name = v->ns ? v->ns + nl + 1 : "";
    v->obj = rstr_ref(obj);
    v->old = rstr_ref(old);
    s->hbytes += add;
    s->head++;
    pthread_cond_broadcast(&s->cv);
    if (s->nhooks)
        pend_add(c, rt, type, obj);
}

static void be_write(cu_store *s, ent *e, const char *data)
{
    if (!s->has_be || !s->be.write)
        return;
    if (s->be.write(s->be.ud, e->res->qname, e->ns, e->name, e->rv, data, s->rv) != CU_OK) {
        if (s->be_errors++ == 0)
            fprintf(stderr, "cueue cluster: cannot write %s %s/%s to the database\n", e->res->qname,
                    e->ns, e->name);
    }
}

/* The stored text of o. Its numbers are written first as kube-apiserver
 * stores them (Go's float64 form: 1e+21, 1e-7, 100 for 100.0), not as
 * json-c keeps them (the literal of the request). */
rstr *serialize(json_object *o)
{
    cu_json_go_numbers(o);
    size_t n = 0;
    const char *js = json_object_to_json_string_length(
        o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n);
    return js ? rstr_new(js, n) : NULL;
}

void set_rv(json_object *o, int64_t rv)
{
    char b[32];
    snprintf(b, sizeof(b), "%lld", (long long)rv);
    cu_jset_str(cu_jchild(o, "metadata"), "resourceVersion", b);
}

/* Stores o (borrowed; its resourceVersion is set) as the new state of e,
 * or of a new object when e is NULL (ns/name taken from o). */
cu_err commit_put(cu_store *s, opctx *c, rt_ent *rt, ent *e, json_object *o, cu_status *st)
{
    res_t *r = rt->res;
    int64_t rv = s->rv + 1;
    set_rv(o, rv);
    rt_ent *srt = r->storage_rt ? r->storage_rt : rt;
    char av[300];
    if (srt->pub.group[0])
        snprintf(av, sizeof(av), "%s/%s", srt->pub.group, srt->pub.version);
    else
        snprintf(av, sizeof(av), "%s", srt->pub.version);
    cu_jset_str(o, "apiVersion", av);
    cu_jset_str(o, "kind", srt->pub.kind);
    rstr *data = serialize(o);
    if (!data)
        return cu_status_set(st, 500, "InternalError", "out of memory");
    if (data->len > CU_STORE_OBJECT_MAX) {
        /* what kube-apiserver answers when etcd refuses the write
         * (--max-request-bytes): a 500 with etcd's message and no reason */
        rstr_unref(data);
        return cu_status_set(st, 500, "", "etcdserver: request is too large");
    }
    json_object *m = cu_jget(o, "metadata");
    int is_new = e == NULL;
    if (is_new) {
        e = ent_new(r, r->namespaced ? cu_jstr(m, "namespace") : NULL, cu_jstr(m, "name"));
        if (!e) {
            rstr_unref(data);
            return cu_status_set(st, 500, "InternalError", "out of memory");
        }
        snprintf(e->uid, sizeof(e->uid), "%s", cu_jstr(m, "uid") ? cu_jstr(m, "uid") : "");
        if (ent_link(s, e)) {
            ent_free(e);
            rstr_unref(data);
            return cu_status_set(st, 500, "InternalError", "out of memory");
        }
    }
    rstr *old = e->data;
    e->data = data;
    e->rv = rv;
    ent_set_meta(s, e, o);
    s->rv = rv;
    r->last_rv = rv;
    emit(s, c, rt, is_new ? EV_ADDED : EV_MODIFIED, e->ns, e->name, data, old, rv);
    rstr_unref(old);
    be_write(s, e, data->s);
    return CU_OK;
}

static void container_check(cu_store *s, opctx *c, const char *ns, res_t *r);

/* Removes e; o (borrowed) is its final state, given the deletion RV. */
static void commit_remove(cu_store *s, opctx *c, rt_ent *rt, ent *e, json_object *o)
{
    res_t *r = e->res;
    if (!rt)
        rt = r->storage_rt;
    int64_t rv = s->rv + 1;
    set_rv(o, rv);
    rstr *data = serialize(o);
    if (!data)
        data = rstr_ref(e->data);
    s->rv = rv;
    r->last_rv = rv;
    e->rv = rv;
    emit(s, c, rt, EV_DELETED, e->ns, e->name, data, e->data, rv);
    be_write(s, e, NULL);
    rstr_unref(data);
    ent_unlink(s, e);
    c->removed++;
    work_push(c, e->uid);
    for (size_t i = 0; i < e->nowners; i++)
        work_push(c, e->owners[i]);
    char ns[300];
    snprintf(ns, sizeof(ns), "%s", e->ns);
    int kid = r->kid;
    json_object *spec = kid == K_CRD ? cu_jget(o, "spec") : NULL;
    if (kid == K_CRD) {
        /* the CRD is gone: stop serving its resource */
        res_t *cr = res_find_q(s, cu_jstr(spec, "group") ? cu_jstr(spec, "group") : "",
                               cu_jstr(cu_jget(spec, "names"), "plural")
                                   ? cu_jstr(cu_jget(spec, "names"), "plural")
                                   : "");
        if (cr && cr->crd_name && strcmp(cr->crd_name, e->name) == 0) {
            for (size_t i = 0; i < s->nrts; i++)
                if (s->rts[i]->res == cr)
                    s->rts[i]->served = 0;
            cr->crd_terminating = 0;
            free(cr->crd_name);
            cr->crd_name = NULL;
            for (cu_watch *w = s->watchers; w; w = w->next)
                if (w->rt->res == cr)
                    w->ending = 1;
            pthread_cond_broadcast(&s->cv);
        }
    }
    ent_free(e);
    container_check(s, c, ns, r);
}

/* Removes a terminating container (namespace, CRD) once it is empty and
 * has no finalizers left. */
static void try_finalize(cu_store *s, opctx *c, ent *e)
{
    if (!e || !e->terminating)
        return;
    if (e->res->kid == K_NS && ns_count(s, e->name))
        return;
    json_object *o = jparse_r(e->data);
    if (!o)
        return;
    if (e->res->kid == K_CRD) {
        json_object *spec = cu_jget(o, "spec");
        res_t *cr = res_find_q(s, cu_jstr(spec, "group") ? cu_jstr(spec, "group") : "",
                               cu_jstr(cu_jget(spec, "names"), "plural")
                                   ? cu_jstr(cu_jget(spec, "names"), "plural")
                                   : "");
        if (cr && cr->n) {
            json_object_put(o);
            return;
        }
    }
    if (cu_jarr_len(cu_jget(cu_jget(o, "metadata"), "finalizers")) == 0)
        commit_remove(s, c, NULL, e, o);
    json_object_put(o);
}

static void container_check(cu_store *s, opctx *c, const char *ns, res_t *r)
{
    if (*ns && s->r_ns && ns_count(s, ns) == 0)
        try_finalize(s, c, ent_find(s->r_ns, NULL, ns));
    if (r->crd_terminating && r->n == 0 && r->crd_name) {
        res_t *crds = res_find_q(s, "apiextensions.k8s.io", "customresourcedefinitions");
        if (crds)
            try_finalize(s, c, ent_find(crds, NULL, r->crd_name));
    }
}

/* Unlocks and calls the hooks for the operation's events. */
void op_finish(cu_store *s, opctx *c)
{
    size_t nh = s->nhooks;
    hook *hs = nh ? malloc(nh * sizeof(*hs)) : NULL;
    if (hs)
        memcpy(hs, s->hooks, nh * sizeof(*hs));
    pthread_mutex_unlock(&s->mu);
    for (size_t i = 0; i < c->np; i++) {
        for (size_t h = 0; hs && h < nh; h++) {
            json_object *o = jparse_r(c->p[i].obj);
            if (!o)
                continue;
            hs[h].fn(s, &c->p[i].rt->pub, c->p[i].type, o, hs[h].ud);
            json_object_put(o);
        }
        rstr_unref(c->p[i].obj);
    }
    free(hs);
    free(c->p);
    for (size_t i = 0; i < c->nwork; i++)
        free(c->work[i]);
    free(c->work);
    memset(c, 0, sizeof(*c));
}

void cu_store_on_change(cu_store *s, cu_store_hook fn, void *ud)
{
    pthread_mutex_lock(&s->mu);
    hook *nh = realloc(s->hooks, (s->nhooks + 1) * sizeof(*nh));
    if (nh) {
        s->hooks = nh;
        s->hooks[s->nhooks].fn = fn;
        s->hooks[s->nhooks].ud = ud;
        s->nhooks++;
    }
    pthread_mutex_unlock(&s->mu);
}

/* ------------------------------------------------------------------ */
/* deletion and garbage collection (lock held)                          */

static int jarr_remove_str(json_object *a, const char *s)
{
    int n = 0;
    for (size_t i = cu_jarr_len(a); i-- > 0;) {
        json_object *v = json_object_array_get_idx(a, i);
        if (json_object_is_type(v, json_type_string) && strcmp(json_object_get_string(v), s) == 0) {
            json_object_array_del_idx(a, i, 1);
            n++;
        }
    }
    return n;
}

/* Commits o as e's new state: removes e when it is terminating with no
 * finalizers (and, for a namespace or CRD, empty). */
cu_err commit_or_remove(cu_store *s, opctx *c, rt_ent *rt, ent *e, json_object *o, cu_status *st)
{
    json_object *m = cu_jget(o, "metadata");
    if (cu_jget(m, "deletionTimestamp") && cu_jarr_len(cu_jget(m, "finalizers")) == 0) {
        int empty = 1;
        if (e->res->kid == K_NS)
            empty = ns_count(s, e->name) == 0;
        if (e->res->kid == K_CRD) {
            json_object *spec = cu_jget(o, "spec");
            res_t *cr = res_find_q(s, cu_jstr(spec, "group") ? cu_jstr(spec, "group") : "",
                                   cu_jstr(cu_jget(spec, "names"), "plural")
                                       ? cu_jstr(cu_jget(spec, "names"), "plural")
                                       : "");
            empty = !cr || cr->n == 0;
        }
        if (empty) {
            commit_remove(s, c, rt, e, o);
            return CU_OK;
        }
    }
    return commit_put(s, c, rt, e, o, st);
}

static void drop_finalizer(cu_store *s, opctx *c, ent *e, const char *fin)
{
    json_object *o = jparse_r(e->data);
    if (!o)
        return;
    if (jarr_remove_str(cu_jget(cu_jget(o, "metadata"), "finalizers"), fin))
        commit_or_remove(s, c, NULL, e, o, NULL);
    json_object_put(o);
}

/* Removes ownerReferences of e that point to uid (or, uid NULL, to
 * objects that do not exist). */
static void strip_refs(cu_store *s, opctx *c, ent *e, const char *uid)
{
    json_object *o = jparse_r(e->data);
    if (!o)
        return;
    json_object *m = cu_jget(o, "metadata"), *refs = cu_jget(m, "ownerReferences");
    int changed = 0;
    for (size_t i = cu_jarr_len(refs); i-- > 0;) {
        const char *u = cu_jstr(json_object_array_get_idx(refs, i), "uid");
        if (!u)
            continue;
        if (uid ? strcmp(u, uid) == 0 : hm_get(&s->uids, u) == NULL) {
            json_object_array_del_idx(refs, i, 1);
            changed = 1;
        }
    }
    if (changed) {
        if (!cu_jarr_len(refs))
            json_object_object_del(m, "ownerReferences");
        commit_put(s, c, e->res->storage_rt, e, o, NULL);
    }
    json_object_put(o);
}

/* Deletes every object of a namespace (as the namespace controller). */
static void ns_empty(cu_store *s, opctx *c, const char *ns)
{
    char prefix[KEY_MAX];
    snprintf(prefix, sizeof(prefix), "%s/", ns);
    size_t pl = strlen(prefix);
    for (size_t i = 0; i < s->nres && ns_count(s, ns); i++) {
        res_t *r = s->res[i];
        if (!r->namespaced || !r->n)
            continue;
        res_sort(r);
        size_t a = res_bound(r, prefix, 0), b = a;
        while (b < r->n && strncmp(r->vec[b]->key, prefix, pl) == 0)
            b++;
        size_t n = b - a;
        char **keys = n ? calloc(n, sizeof(char *)) : NULL;
        for (size_t k = 0; keys && k < n; k++)
            keys[k] = strdup(r->vec[a + k]->key);
        for (size_t k = 0; keys && k < n; k++) {
            ent *d = keys[k] ? hm_get(&r->objs, keys[k]) : NULL;
            if (d && !d->terminating)
                del_ent(s, c, r->storage_rt, d, "Background", NULL, NULL);
            free(keys[k]);
        }
        free(keys);
    }
}

/* Deletes every object of a CRD's resource (as the CRD finalizer does). */
static void res_empty(cu_store *s, opctx *c, res_t *r)
{
    size_t n = r->n;
    char **keys = n ? calloc(n, sizeof(char *)) : NULL;
    for (size_t k = 0; keys && k < n; k++)
        keys[k] = strdup(r->vec[k]->key);
    for (size_t k = 0; keys && k < n; k++) {
        ent *d = keys[k] ? hm_get(&r->objs, keys[k]) : NULL;
        if (d && !d->terminating)
            del_ent(s, c, r->storage_rt, d, "Background", NULL, NULL);
        free(keys[k]);
    }
    free(keys);
}

cu_err del_ent(cu_store *s, opctx *c, rt_ent *rt, ent *e, const char *prop, json_object **out,
               cu_status *st)
{
    json_object *o = jparse_r(e->data);
    if (!o)
        return cu_status_set(st, 500, "InternalError", "stored object is not valid JSON");
    json_object *m = cu_jchild(o, "metadata");
    int kid = e->res->kid;
    int orphan = prop && strcmp(prop, "Orphan") == 0, fg = prop && strcmp(prop, "Foreground") == 0;
    deplist *dl = hm_get(&s->deps, e->uid);
    json_object *fins = cu_jget(m, "finalizers");
    int changed = 0;
    if ((orphan || fg) && dl && dl->n) {
        const char *f = orphan ? "orphan" : "foregroundDeletion";
        if (!fins || !json_object_is_type(fins, json_type_array)) {
            fins = json_object_new_array();
            json_object_object_add(m, "finalizers", fins);
        }
        if (!jarr_has_str(fins, f)) {
            json_object_array_add(fins, json_object_new_string(f));
            changed = 1;
        }
    }
    /* containers (namespaces, CRDs) stay terminating while they hold objects */
    res_t *cr = NULL;
    int holds = 0;
    if (kid == K_NS)
        holds = ns_count(s, e->name) > 0;
    if (kid == K_CRD) {
        json_object *spec = cu_jget(o, "spec");
        cr = res_find_q(s, cu_jstr(spec, "group") ? cu_jstr(spec, "group") : "",
                        cu_jstr(cu_jget(spec, "names"), "plural")
                            ? cu_jstr(cu_jget(spec, "names"), "plural")
                            : "");
        if (cr && cr->crd_name && strcmp(cr->crd_name, e->name))
            cr = NULL;
        holds = cr && cr->n > 0;
    }
    char key[KEY_MAX], name[300];
    snprintf(key, sizeof(key), "%s", e->key);
    snprintf(name, sizeof(name), "%s", e->name);
    res_t *r = e->res;
    cu_err err = CU_OK;
    if (cu_jarr_len(fins) > 0 || holds) {
        if (!cu_jget(m, "deletionTimestamp")) {
            char ts[40];
            now_str(s, ts, sizeof(ts));
            cu_jset_str(m, "deletionTimestamp", ts);
            json_object_object_add(m, "deletionGracePeriodSeconds", json_object_new_int64(0));
            json_object *g = cu_jget(m, "generation");
            if (g && json_object_get_int64(g) > 0)
                json_object_object_add(m, "generation",
                                       json_object_new_int64(json_object_get_int64(g) + 1));
            if (kid == K_NS) {
                json_object *stt = cu_jget(o, "status");
                if (!stt || !json_object_is_type(stt, json_type_object)) {
                    stt = json_object_new_object();
                    json_object_object_add(o, "status", stt);
                }
                cu_jset_str(stt, "phase", "Terminating");
            }
            changed = 1;
        }
        if (changed) {
            err = commit_put(s, c, rt, e, o, st);
            work_push(c, e->uid);
        }
        if (err == CU_OK && kid == K_NS)
            ns_empty(s, c, name);
        if (err == CU_OK && cr) {
            cr->crd_terminating = 1;
            res_empty(s, c, cr);
            container_check(s, c, "", cr);
        }
        /* the container may have been finalized meanwhile */
        ent *again = hm_get(&r->objs, key);
        if (again && again->data) {
            json_object_put(o);
            o = jparse_r(again->data);
        }
    } else {
        commit_remove(s, c, rt, e, o);
    }
    if (out && err == CU_OK)
        *out = o;
    else
        json_object_put(o);
    return err;
}

static int ref_blocks(json_object *o, const char *uid)
{
    json_object *refs = cu_jget(cu_jget(o, "metadata"), "ownerReferences");
    for (size_t i = 0; i < cu_jarr_len(refs); i++) {
        json_object *r = json_object_array_get_idx(refs, i);
        const char *u = cu_jstr(r, "uid");
        json_object *b = cu_jget(r, "blockOwnerDeletion");
        if (u && strcmp(u, uid) == 0 && b && json_object_get_boolean(b))
            return 1;
    }
    return 0;
}

/* The garbage collector's reaction to a change of the object with this
 * uid: it disappeared (its dependents are deleted or lose the reference),
 * or it is terminating with the orphan or foregroundDeletion finalizer. */
static void process_owner(cu_store *s, opctx *c, const char *uid)
{
    ent *owner = hm_get(&s->uids, uid);
    deplist *dl = hm_get(&s->deps, uid);
    if (owner && !owner->terminating)
        return;
    size_t nd = dl ? dl->n : 0;
    char(*du)[48] = nd ? calloc(nd, sizeof(*du)) : NULL;
    if (nd && !du)
        return;
    for (size_t i = 0; i < nd; i++)
        snprintf(du[i], sizeof(du[i]), "%s", dl->v[i]->uid);
    if (!owner) {
        for (size_t i = 0; i < nd; i++) {
            ent *d = hm_get(&s->uids, du[i]);
            if (!d)
                continue;
            size_t alive = 0;
            for (size_t k = 0; k < d->nowners; k++)
                alive += hm_get(&s->uids, d->owners[k]) != NULL;
            if (!alive) {
                if (!d->terminating)
                    del_ent(s, c, d->res->storage_rt, d, "Background", NULL, NULL);
            } else {
                strip_refs(s, c, d, NULL);
            }
        }
        free(du);
        return;
    }
    json_object *o = jparse_r(owner->data);
    json_object *fins = cu_jget(cu_jget(o, "metadata"), "finalizers");
    int orphan = jarr_has_str(fins, "orphan"), fg = jarr_has_str(fins, "foregroundDeletion");
    json_object_put(o);
    if (orphan) {
        for (size_t i = 0; i < nd; i++) {
            ent *d = hm_get(&s->uids, du[i]);
            if (d)
                strip_refs(s, c, d, uid);
        }
        owner = hm_get(&s->uids, uid);
        if (owner)
            drop_finalizer(s, c, owner, "orphan");
    } else if (fg) {
        for (size_t i = 0; i < nd; i++) {
            ent *d = hm_get(&s->uids, du[i]);
            if (d && !d->terminating)
                del_ent(s, c, d->res->storage_rt, d, "Background", NULL, NULL);
        }
        int blocking = 0;
        dl = hm_get(&s->deps, uid);
        for (size_t i = 0; dl && i < dl->n && !blocking; i++) {
            json_object *d = jparse_r(dl->v[i]->data);
            blocking = d && ref_blocks(d, uid);
            json_object_put(d);
        }
        owner = hm_get(&s->uids, uid);
        if (owner && !blocking)
            drop_finalizer(s, c, owner, "foregroundDeletion");
    }
    free(du);
}

void cascade(cu_store *s, opctx *c)
{
    size_t guard = 0;
    while (c->nwork && guard++ < 10000000) {
        char *uid = c->work[--c->nwork];
        process_owner(s, c, uid);
        free(uid);
    }
}

int cu_store_gc(cu_store *s)
{
    opctx c;
    memset(&c, 0, sizeof(c));
    pthread_mutex_lock(&s->mu);
    /* owners that are gone, and owners waiting for the collector */
    for (size_t i = 0; i < s->deps.cap; i++) {
        if (!s->deps.t[i].key)
            continue;
        deplist *d = s->deps.t[i].val;
        ent *o = hm_get(&s->uids, d->uid);
        if (!o || o->terminating)
            work_push(&c, d->uid);
    }
    for (size_t i = 0; i < s->nres; i++)
        for (size_t k = 0; k < s->res[i]->n; k++) {
            ent *e = s->res[i]->vec[k];
            if (!e->terminating)
                continue;
            json_object *o = jparse_r(e->data);
            json_object *f = cu_jget(cu_jget(o, "metadata"), "finalizers");
            if (jarr_has_str(f, "orphan") || jarr_has_str(f, "foregroundDeletion"))
                work_push(&c, e->uid);
            json_object_put(o);
        }
    cascade(s, &c);
    int n = c.removed;
    op_finish(s, &c);
    return n;
}
