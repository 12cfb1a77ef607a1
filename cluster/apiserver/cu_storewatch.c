/*
 * cu_storewatch.c - LIST (pagination with continue tokens, selectors,
 * resourceVersion semantics) and WATCH (initial events, the history ring,
 * bookmarks, expiry). See internal/cu_store_int.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_base64.h"
#include "cu_store.h"

#include "cu_store_int.h"

/* ------------------------------------------------------------------ */
/* list                                                                 */

static char *cont_encode(int64_t rv, const char *key)
{
    json_object *t = json_object_new_object();
    cu_jset_str(t, "v", "meta.k8s.io/v1");
    json_object_object_add(t, "rv", json_object_new_int64(rv));
    cu_jset_str(t, "start", key);
    const char *js = json_object_to_json_string_ext(t, JSON_C_TO_STRING_PLAIN);
    char *r = cu_base64url_encode(js, strlen(js));
    json_object_put(t);
    return r;
}

static int cont_decode(const char *tok, int64_t *rv, char *key, size_t keyn)
{
    size_t n = 0;
    char *raw = cu_base64url_decode(tok, &n);
    if (!raw)
        return -1;
    json_object *t = jparse(raw, n);
    free(raw);
    const char *v = cu_jstr(t, "v"), *start = cu_jstr(t, "start");
    json_object *r = cu_jget(t, "rv");
    int ok =
        v && !strcmp(v, "meta.k8s.io/v1") && start && r && json_object_is_type(r, json_type_int);
    if (ok) {
        *rv = json_object_get_int64(r);
        snprintf(key, keyn, "%s", start);
    }
    json_object_put(t);
    return ok ? 0 : -1;
}

/* LIST as a json-c tree (out) or as JSON text (raw, rawn). */
static cu_err list_impl(cu_store *s, const cu_rtype *rtp, const char *ns, const cu_list_opts *o,
                        json_object **out, char **raw, size_t *rawn, cu_status *st)
{
    rt_ent *rt = (rt_ent *)rtp;
    selector sl;
    cu_err err;
    if (out)
        *out = NULL;
    if (raw)
        *raw = NULL;
    if ((err = sel_parse(rt, o, &sl, st)) != CU_OK)
        return err;
    const char *cont = o ? o->cont : NULL, *rvq = o ? o->resource_version : NULL;
    const char *match = o ? o->rv_match : NULL;
    int64_t limit = o && o->limit > 0 ? o->limit : 0;
    int64_t crv = 0, qrv = 0;
    char start[KEY_MAX] = "";
    if (cont && *cont) {
        if (rvq && *rvq) {
            sel_free(&sl);
            return cu_status_set(st, 400, "BadRequest",
                                 "specifying resource version is not allowed when using continue");
        }
        if (cont_decode(cont, &crv, start, sizeof(start))) {
            sel_free(&sl);
            return cu_status_set(
                st, 400, "BadRequest",
                "continue key is not valid: incorrect encoded start resourceVersion "
                "(version meta.k8s.io/v1)");
        }
    }
    if (rvq && *rvq && parse_rv(rvq, &qrv)) {
        sel_free(&sl);
        return cu_status_set(st, 400, "BadRequest", "invalid resource version: %s", rvq);
    }
    if (match && *match) {
        /* kube-apiserver's ListOptions validation: 422 Invalid */
        ferrs fe;
        fe.n = fe.total = 0;
        if (!(rvq && *rvq))
            ferr_add(
                &fe, "resourceVersionMatch", "FieldValueForbidden",
                "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided");
        if (cont && *cont)
            ferr_add(&fe, "resourceVersionMatch", "FieldValueForbidden",
                     "Forbidden: resourceVersionMatch is forbidden when continue is provided");
        if (strcmp(match, "NotOlderThan") && strcmp(match, "Exact"))
            ferr_add(
                &fe, "resourceVersionMatch", "FieldValueNotSupported",
                "Unsupported value: \"%s\": supported values: \"Exact\", \"NotOlderThan\", \"\"",
                match);
        if (!strcmp(match, "Exact") && rvq && !strcmp(rvq, "0"))
            ferr_add(
                &fe, "resourceVersionMatch", "FieldValueForbidden",
                "Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"");
        if (fe.n) {
            sel_free(&sl);
            return err_invalid_gk(st, "ListOptions", "meta.k8s.io", "", &fe);
        }
    }

    pthread_mutex_lock(&s->mu);
    if (!rt->served) {
        pthread_mutex_unlock(&s->mu);
        sel_free(&sl);
        return err_not_served(st);
    }
    res_t *r = rt->res;
    int64_t list_rv = s->rv;
    if (cont && *cont) {
        if (crv < s->hist_rv) {
            pthread_mutex_unlock(&s->mu);
            sel_free(&sl);
            return cu_status_set(
                st, 410, "Expired",
                "The provided continue parameter is too old to display a consistent "
                "list result. You can start a new list without the continue "
                "parameter, or use the continue token in this response to retrieve "
                "the remainder of the results. Continuing with the provided token "
                "results in an inconsistent list - objects that were created, "
                "modified, or deleted between the time the first chunk was returned "
                "and now may show up in the list.");
        }
        list_rv = crv;
    } else if (rvq && *rvq && qrv > 0) {
        if (qrv > s->rv) {
            int64_t cur = s->rv;
            pthread_mutex_unlock(&s->mu);
            sel_free(&sl);
            return cu_status_set(st, 504, "Timeout",
                                 "Too large resource version: %lld, current: %lld", (long long)qrv,
                                 (long long)cur);
        }
        if (match && !strcmp(match, "Exact")) {
            /* the state at qrv can be served only if nothing changed since */
            if (r->last_rv > qrv) {
                pthread_mutex_unlock(&s->mu);
                sel_free(&sl);
                return cu_status_set(st, 410, "Expired", "too old resource version: %lld (%lld)",
                                     (long long)qrv, (long long)r->last_rv);
            }
            list_rv = qrv;
        }
    }
    res_sort(r);
    char prefix[KEY_MAX] = "";
    int by_ns = rt->pub.namespaced && ns && *ns;
    if (by_ns)
        snprintf(prefix, sizeof(prefix), "%s/", ns);
    size_t pl = strlen(prefix);
    size_t a = by_ns ? res_bound(r, prefix, 0) : 0;
    if (start[0]) {
        size_t b = res_bound(r, start, 1);
        if (b > a)
            a = b;
    }
    size_t b = a;
    while (b < r->n && (!by_ns || strncmp(r->vec[b]->key, prefix, pl) == 0))
        b++;
    /* without selectors only limit (+1 to know whether more remain) are needed */
    size_t want = b - a;
    if (limit && sel_empty(&sl) && (size_t)limit < want)
        want = (size_t)limit;
    size_t total = b - a;
    rstr **refs = want ? malloc(want * sizeof(*refs)) : NULL;
    char **keys = want ? malloc(want * sizeof(*keys)) : NULL;
    if (want && (!refs || !keys)) {
        pthread_mutex_unlock(&s->mu);
        free(refs);
        free(keys);
        sel_free(&sl);
        return cu_status_set(st, 500, "InternalError", "out of memory");
    }
    for (size_t i = 0; i < want; i++) {
        refs[i] = rstr_ref(r->vec[a + i]->data);
        keys[i] = limit ? strdup(r->vec[a + i]->key) : NULL; /* for the continue token */
    }
    int plain = !r->multi && rt == r->storage_rt;
    pthread_mutex_unlock(&s->mu);

    json_object *items = out ? json_object_new_array_ext(want < 1024 ? (int)want : 1024) : NULL;
    cu_buf rb;
    cu_buf_init(&rb, (size_t)1 << 31);
    size_t used = 0, taken = 0;
    char lastkey[KEY_MAX] = "";
    for (size_t i = 0; i < want; i++) {
        if (limit && taken >= (size_t)limit)
            break;
        used = i + 1;
        json_object *it = NULL;
        if (out || !sel_empty(&sl) || !plain) {
            it = jparse_r(refs[i]);
            if (!it)
                continue;
            if (!sel_empty(&sl) && !sel_match(&sl, it)) {
                json_object_put(it);
                continue;
            }
        }
        if (keys[i])
            snprintf(lastkey, sizeof(lastkey), "%s", keys[i]);
        if (out) {
            json_object_array_add(items, to_rt(rt, it));
        } else {
            if (taken)
                cu_buf_append(&rb, ",", 1);
            if (plain) {
                cu_buf_append(&rb, refs[i]->s, refs[i]->len);
            } else {
                size_t n = 0;
                const char *js = json_object_to_json_string_length(
                    to_rt(rt, it), JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n);
                cu_buf_append(&rb, js, n);
            }
            json_object_put(it);
        }
        taken++;
    }
    size_t remaining = total - used;
    for (size_t i = 0; i < want; i++) {
        rstr_unref(refs[i]);
        free(keys[i]);
    }
    free(refs);
    free(keys);

    json_object *lst = json_object_new_object();
    cu_jset_str(lst, "kind", rt->pub.list_kind);
    char av[300];
    if (rt->pub.group[0])
        snprintf(av, sizeof(av), "%s/%s", rt->pub.group, rt->pub.version);
    else
        snprintf(av, sizeof(av), "%s", rt->pub.version);
    cu_jset_str(lst, "apiVersion", av);
    json_object *lm = json_object_new_object();
    char rvb[32];
    snprintf(rvb, sizeof(rvb), "%lld", (long long)list_rv);
    cu_jset_str(lm, "resourceVersion", rvb);
    if (limit && remaining > 0 && taken > 0) {
        char *tok = cont_encode(list_rv, lastkey);
        if (tok) {
            cu_jset_str(lm, "continue", tok);
            free(tok);
        }
        if (sel_empty(&sl))
            json_object_object_add(lm, "remainingItemCount",
                                   json_object_new_int64((int64_t)remaining));
    }
    /* kube-apiserver's lists of custom resources (unstructured) always
     * carry continue, empty on the last page */
    if (rt->pub.from_crd && !cu_jget(lm, "continue"))
        cu_jset_str(lm, "continue", "");
    if (out) {
        json_object_object_add(lst, "metadata", lm);
        json_object_object_add(lst, "items", items);
        *out = lst;
    } else {
        /* the list's own fields, then the items as stored */
        json_object_object_add(lst, "metadata", lm);
        json_object_object_add(lst, "items", json_object_new_array());
        size_t hn = 0;
        const char *hs = json_object_to_json_string_length(lst, JSON_C_TO_STRING_PLAIN, &hn);
        /* hs ends with "[]}": splice the items between the brackets */
        cu_buf fb;
        cu_buf_init(&fb, (size_t)1 << 31);
        cu_buf_append(&fb, hs, hn - 2);
        cu_buf_append(&fb, rb.data ? rb.data : "", rb.len);
        cu_buf_append(&fb, "]}", 2);
        json_object_put(lst);
        if (fb.failed || rb.failed) {
            cu_buf_free(&fb);
            cu_buf_free(&rb);
            sel_free(&sl);
            return cu_status_set(st, 500, "InternalError", "list too large");
        }
        *raw = fb.data;
        *rawn = fb.len;
    }
    cu_buf_free(&rb);
    sel_free(&sl);
    return CU_OK;
}

cu_err cu_store_list(cu_store *s, const cu_rtype *rtp, const char *ns, const cu_list_opts *o,
                     json_object **out, cu_status *st)
{
    return list_impl(s, rtp, ns, o, out, NULL, NULL, st);
}

cu_err cu_store_list_raw(cu_store *s, const cu_rtype *rtp, const char *ns, const cu_list_opts *o,
                         char **out, size_t *len, cu_status *st)
{
    size_t n = 0;
    cu_err e = list_impl(s, rtp, ns, o, NULL, out, &n, st);
    if (len)
        *len = n;
    return e;
}

/* ------------------------------------------------------------------ */
/* watch                                                                */

cu_err cu_store_watch_open(cu_store *s, const cu_rtype *rtp, const char *ns, const cu_list_opts *o,
                           int bookmarks, cu_watch **out, cu_status *st)
{
    rt_ent *rt = (rt_ent *)rtp;
    *out = NULL;
    if (o && o->send_initial_events && (!o->rv_match || strcmp(o->rv_match, "NotOlderThan"))) {
        ferrs fe;
        fe.n = fe.total = 0;
        ferr_add(&fe, "resourceVersionMatch", "FieldValueForbidden",
                 "Forbidden: sendInitialEvents requires setting resourceVersionMatch to "
                 "NotOlderThan");
        return err_invalid_gk(st, "ListOptions", "meta.k8s.io", "", &fe);
    }
    cu_watch *w = calloc(1, sizeof(*w));
    if (!w)
        return cu_status_set(st, 500, "InternalError", "out of memory");
    cu_err err = sel_parse(rt, o, &w->sel, st);
    if (err != CU_OK) {
        free(w);
        return err;
    }
    w->s = s;
    w->rt = rt;
    w->bookmarks = bookmarks;
    w->ns = (rt->pub.namespaced && ns && *ns) ? strdup(ns) : NULL;
    w->meta_only = sel_meta_only(&w->sel);
    const char *rvq = o ? o->resource_version : NULL;
    int64_t rv = 0;
    int initial = !rvq || !*rvq || strcmp(rvq, "0") == 0;
    w->initial_end = initial && bookmarks && o && o->send_initial_events;
    if (!initial && parse_rv(rvq, &rv)) {
        sel_free(&w->sel);
        free(w->ns);
        free(w);
        return cu_status_set(st, 400, "BadRequest", "invalid resource version: %s", rvq);
    }
    pthread_mutex_lock(&s->mu);
    if (!rt->served) {
        pthread_mutex_unlock(&s->mu);
        sel_free(&w->sel);
        free(w->ns);
        free(w);
        return err_not_served(st);
    }
    if (!initial && rv < s->hist_rv) {
        int64_t h = s->hist_rv;
        pthread_mutex_unlock(&s->mu);
        sel_free(&w->sel);
        free(w->ns);
        free(w);
        return cu_status_set(st, 410, "Expired", "too old resource version: %lld (%lld)",
                             (long long)rv, (long long)h);
    }
    res_t *r = rt->res;
    if (initial) {
        res_sort(r);
        char prefix[KEY_MAX] = "";
        if (w->ns)
            snprintf(prefix, sizeof(prefix), "%s/", w->ns);
        size_t pl = strlen(prefix), a = w->ns ? res_bound(r, prefix, 0) : 0, b = a;
        while (b < r->n && (!w->ns || strncmp(r->vec[b]->key, prefix, pl) == 0))
            b++;
        w->init = b > a ? malloc((b - a) * sizeof(*w->init)) : NULL;
        /* name and namespace requirements are decided here, from the
         * index: nothing else is referenced, parsed or copied for them */
        for (size_t i = a; w->init && i < b; i++)
            if (sel_meta_ok(&w->sel, r->vec[i]))
                w->init[w->ninit++] = rstr_ref(r->vec[i]->data);
        w->init_matched = sel_meta_only(&w->sel);
        w->min_rv = w->last_rv = s->rv;
        w->pos = s->head;
    } else {
        w->min_rv = w->last_rv = rv;
        uint64_t p = s->tail;
        while (p < s->head && s->ring[p % s->hcap].rv <= rv)
            p++;
        w->pos = p;
    }
    w->next = s->watchers;
    if (s->watchers)
        s->watchers->prev = w;
    s->watchers = w;
    pthread_mutex_unlock(&s->mu);
    *out = w;
    return CU_OK;
}

static char *ev_line(const char *type, const char *obj, size_t n)
{
    size_t tl = strlen(type);
    char *l = malloc(tl + n + 32);
    if (!l)
        return NULL;
    size_t k = (size_t)sprintf(l, "{\"type\":\"%s\",\"object\":", type);
    memcpy(l + k, obj, n);
    l[k + n] = '}';
    l[k + n + 1] = '\0';
    return l;
}

static const char EV_BOOKMARK[] = "BOOKMARK", EV_ERROR[] = "ERROR";

/* The event for object data as w's type serves it: the stored bytes
 * themselves (a reference, shared by all watchers) when w's type is the
 * storage version; else the object converted for w (its own copy). 1, or
 * 0 when out of memory. */
static int w_ev(cu_watch *w, const char *type, rstr *data, json_object *parsed, cu_watch_ev *ev)
{
    ev->type = type;
    if (!w->rt->res->multi && w->rt == w->rt->res->storage_rt) {
        ev->obj = rstr_ref(data);
        return 1;
    }
    json_object *o = parsed ? json_object_get(parsed) : jparse_r(data);
    if (!o)
        return 0;
    to_rt(w->rt, o);
    size_t n = 0;
    const char *js = json_object_to_json_string_length(
        o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n);
    ev->obj = rstr_new(js, n);
    json_object_put(o);
    return ev->obj != NULL;
}

static int status_ev(int code, const char *reason, const char *msg, cu_watch_ev *ev)
{
    cu_status st;
    cu_status_set(&st, code, reason, "%s", msg);
    json_object *o = cu_status_json(&st);
    const char *js = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
    ev->type = EV_ERROR;
    ev->obj = rstr_new(js, strlen(js));
    json_object_put(o);
    return ev->obj != NULL;
}

/* A BOOKMARK at the store's resourceVersion, with metadata.annotations
 * ann (a JSON object text) or none (lock held). 1, or 0 without memory. */
static int bookmark_ev(cu_watch *w, const char *ann, cu_watch_ev *ev)
{
    cu_store *s = w->s;
    char b[600];
    char av[300];
    if (w->rt->pub.group[0])
        snprintf(av, sizeof(av), "%s/%s", w->rt->pub.group, w->rt->pub.version);
    else
        snprintf(av, sizeof(av), "%s", w->rt->pub.version);
    int n = snprintf(b, sizeof(b),
                     "{\"kind\":\"%s\",\"apiVersion\":\"%s\",\"metadata\":{\"resourceVersion\":"
                     "\"%lld\",\"creationTimestamp\":null%s%s}}",
                     w->rt->pub.kind, av, (long long)s->rv, ann ? ",\"annotations\":" : "",
                     ann ? ann : "");
    if (n < 0 || (size_t)n >= sizeof b)
        return 0;
    w->last_rv = s->rv;
    w->min_rv = w->min_rv > s->rv ? w->min_rv : s->rv;
    w->sent_bookmark = 1;
    ev->type = EV_BOOKMARK;
    ev->obj = rstr_new(b, (size_t)n);
    return ev->obj != NULL;
}

/* The next event of w's initial list (1), or 0 when it is done. Runs
 * without the store's lock: the list is w's own references to the stored
 * objects, which become the events as they are (no copy per watcher). */
static int w_init_next(cu_watch *w, cu_watch_ev *ev)
{
    while (w->iinit < w->ninit) {
        rstr *d = w->init[w->iinit];
        w->init[w->iinit++] = NULL;
        int got = 0;
        if (sel_empty(&w->sel) || w->init_matched) {
            got = w_ev(w, EV_ADDED, d, NULL, ev);
        } else {
            json_object *o = jparse_r(d);
            if (o && sel_match(&w->sel, o))
                got = w_ev(w, EV_ADDED, d, o, ev);
            json_object_put(o);
        }
        rstr_unref(d);
        if (got)
            return 1;
    }
    return 0;
}

/* The next event for w (1), or 0 when nothing is pending (lock held). */
static int w_poll(cu_watch *w, cu_watch_ev *ev)
{
    cu_store *s = w->s;
    if (w_init_next(w, ev))
        return 1;
    if (w->pos < s->tail) {
        char msg[128];
        snprintf(msg, sizeof(msg), "too old resource version: %lld (%lld)", (long long)w->last_rv,
                 (long long)s->hist_rv);
        w->done = 1;
        return status_ev(410, "Expired", msg, ev);
    }
    while (w->pos < s->head) {
        sev *v = &s->ring[w->pos % s->hcap];
        w->pos++;
        if (v->res != w->rt->res || v->rv <= w->min_rv)
            continue;
        if (w->ns && strcmp(v->ns, w->ns))
            continue;
        const char *type = v->type;
        int got = 0;
        if (sel_empty(&w->sel)) {
            got = w_ev(w, type, v->obj, NULL, ev);
        } else if (w->meta_only) {
            /* name and namespace never change: decided without parsing
             * (under the lock, for every watcher) */
            if (sel_meta_match(&w->sel, v->ns, v->name))
                got = w_ev(w, type, v->obj, NULL, ev);
        } else {
            json_object *no = jparse_r(v->obj);
            int nm = no && sel_match(&w->sel, no);
            int om = 0;
            if (type == EV_MODIFIED && v->old) {
                json_object *oo = jparse_r(v->old);
                om = oo && sel_match(&w->sel, oo);
                json_object_put(oo);
            }
            if (type == EV_MODIFIED) {
                /* an object entering or leaving the selection */
                if (nm && !om)
                    type = EV_ADDED;
                else if (!nm && om)
                    type = EV_DELETED;
                else if (!nm)
                    type = NULL;
            } else if (!nm) {
                type = NULL;
            }
            if (type)
                got = w_ev(w, type, v->obj, no, ev);
            json_object_put(no);
        }
        if (got) {
            w->last_rv = v->rv;
            return 1;
        }
    }
    return 0;
}

int cu_store_watch_next_ev(cu_watch *w, int timeout_ms, cu_watch_ev *ev)
{
    cu_store *s = w->s;
    ev->type = NULL;
    ev->obj = NULL;
    if (!s) {
        w->done = 1;
        return 0;
    }
    struct timespec dl = cu_clock_after(CLOCK_MONOTONIC, timeout_ms);
    if (w_init_next(w, ev))
        return 1;
    int got = 0;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        if (w->done)
            break;
        if ((got = w_poll(w, ev)) != 0)
            break;
        if (w->initial_end) {
            /* sendInitialEvents: the existing objects (and what changed
             * since) are sent; say so at once, at the store's version
             * (client-go's watch-list waits for this bookmark) */
            w->initial_end = 0;
            got = bookmark_ev(w, "{\"k8s.io/initial-events-end\":\"true\"}", ev);
            break;
        }
        if (w->ending || !w->rt->served) {
            w->done = 1;
            break;
        }
        if (timeout_ms <= 0)
            break;
        int rc = pthread_cond_timedwait(&s->cv, &s->mu, &dl);
        if (rc != 0) {
            /* one last look, then a bookmark if the RV moved on */
            if (!w->done)
                got = w_poll(w, ev);
            break;
        }
    }
    if (!got && !w->done && w->bookmarks && (s->rv > w->last_rv || !w->sent_bookmark))
        got = bookmark_ev(w, NULL, ev);
    pthread_mutex_unlock(&s->mu);
    return got;
}

char *cu_store_watch_next(cu_watch *w, int timeout_ms)
{
    cu_watch_ev ev;
    if (!cu_store_watch_next_ev(w, timeout_ms, &ev))
        return NULL;
    char *l = ev_line(ev.type, ev.obj->s, ev.obj->len);
    rstr_unref(ev.obj);
    return l;
}

int cu_store_watch_done(const cu_watch *w) { return w->done; }

void cu_store_watch_close(cu_watch *w)
{
    if (!w)
        return;
    cu_store *s = w->s;
    if (s) {
        pthread_mutex_lock(&s->mu);
        if (w->prev)
            w->prev->next = w->next;
        else
            s->watchers = w->next;
        if (w->next)
            w->next->prev = w->prev;
        pthread_mutex_unlock(&s->mu);
    }
    for (size_t i = w->iinit; i < w->ninit; i++)
        rstr_unref(w->init[i]);
    free(w->init);
    sel_free(&w->sel);
    free(w->ns);
    free(w);
}

void cu_store_set_history_bytes(cu_store *s, size_t bytes)
{
    pthread_mutex_lock(&s->mu);
    s->hbytes_max = bytes ? bytes : CU_STORE_HISTORY_BYTES;
    pthread_mutex_unlock(&s->mu);
}

void cu_store_compact(cu_store *s)
{
    pthread_mutex_lock(&s->mu);
    while (s->tail < s->head)
        ring_pop(s);
    s->hist_rv = s->rv;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

void cu_store_drop_watches(cu_store *s)
{
    pthread_mutex_lock(&s->mu);
    for (cu_watch *w = s->watchers; w; w = w->next)
        w->done = 1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

int64_t cu_store_rv(cu_store *s)
{
    pthread_mutex_lock(&s->mu);
    int64_t rv = s->rv;
    pthread_mutex_unlock(&s->mu);
    return rv;
}
