/*
 * cu_informer.c - list-and-watch of one resource, as client-go's reflector.
 *
 * One request is outstanding at a time: a LIST page or the WATCH. The
 * cycle is
 *
 *   LIST (pages, limit/continue) -> WATCH ?resourceVersion=RV&allowWatchBookmarks=true
 *        ^                              |  ADDED/MODIFIED/DELETED: apply, RV = object's
 *        |                              |  BOOKMARK: RV only
 *        +---- ERROR 410 / HTTP 410 ----+  clean close: re-watch from RV at once
 *                                          error: back off (800 ms .. 30 s, jitter), re-watch
 *                                          silence > silence_ms: cancel, re-watch from RV
 *
 * The only state kept per object is its key ("ns/name" or "name") and its
 * resourceVersion, in a hash table. A relist marks every key it sees with
 * the pass number; keys left unmarked at the end vanished while we were
 * not watching and are reported as DELETED with a metadata-only tombstone.
 * Objects themselves are parsed with json-c, handed to on_event (borrowed)
 * and released at once: no JSON tree outlives a callback.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <time.h>

#include <ev.h>

#include "cu_informer.h"
#include "cu_hash.h"
#include "cu_json.h"

#define BACKOFF_INIT_S 0.8
#define BACKOFF_MAX_S 30.0
#define VERY_SHORT_WATCH_S 1.0

typedef struct ient {
    char *key;
    char *rv;
    uint32_t pass; /* last relist pass that saw it */
    struct ient *next;
} ient;

enum { WHY_NONE = 0, WHY_GONE, WHY_SILENT, WHY_ERROR };
enum { ST_IDLE = 0, ST_LIST, ST_WATCH, ST_BACKOFF };

struct cu_informer {
    cu_kclient *c;
    struct ev_loop *loop;
    char *path, *lsel, *fsel; /* selectors percent-encoded */
    int page_size, watch_timeout_s, silence_ms;
    void (*on_event)(cu_informer *, cu_ievent, json_object *, void *);
    void (*on_synced)(cu_informer *, void *);
    void (*on_skip)(cu_informer *, const char *, json_object *, void *);
    void *ud;

    ient **tab;
    size_t nb, n;
    uint32_t pass;

    char *rv;   /* last resourceVersion seen ("" before the first LIST) */
    char *cont; /* continue token of the LIST pass in progress */
    int state;
    cu_kreq *req; /* the outstanding request */
    int why;      /* why we ended the watch ourselves */
    int synced;
    int optional; /* cu_informer_opts.optional */
    int list_is_relist;
    double backoff_s;
    double watch_started; /* ev_now when the watch started */
    uint64_t watch_lines;
    ev_timer silence, backoff;
    uint64_t rng;
    json_tokener *tok;

    cu_informer_stats st;
    int stopping, in_stop, depth;
};

/* The loop the client runs on. */
static struct ev_loop *client_loop(cu_kclient *c) { return cu_kclient_loop(c); }

static char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p)
        memcpy(p, s, n);
    return p;
}

static uint64_t rnd(cu_informer *inf)
{
    uint64_t x = inf->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    inf->rng = x;
    return x;
}

/* ---- key -> resourceVersion table ---- */

static ient *tab_find(cu_informer *inf, const char *key)
{
    if (!inf->nb)
        return NULL;
    for (ient *e = inf->tab[cu_hash_str(key) & (inf->nb - 1)]; e; e = e->next)
        if (strcmp(e->key, key) == 0)
            return e;
    return NULL;
}

static int tab_grow(cu_informer *inf)
{
    size_t nb = inf->nb ? inf->nb * 2 : 64;
    ient **t = calloc(nb, sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < inf->nb; i++) {
        ient *e = inf->tab[i];
        while (e) {
            ient *nx = e->next;
            size_t b = cu_hash_str(e->key) & (nb - 1);
            e->next = t[b];
            t[b] = e;
            e = nx;
        }
    }
    free(inf->tab);
    inf->tab = t;
    inf->nb = nb;
    return 0;
}

static ient *tab_add(cu_informer *inf, const char *key, const char *rv)
{
    if (inf->n + 1 > inf->nb && tab_grow(inf) != 0)
        return NULL;
    ient *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->key = xstrdup(key);
    e->rv = xstrdup(rv);
    if (!e->key || !e->rv) {
        free(e->key);
        free(e->rv);
        free(e);
        return NULL;
    }
    size_t b = cu_hash_str(key) & (inf->nb - 1);
    e->next = inf->tab[b];
    inf->tab[b] = e;
    inf->n++;
    return e;
}

static int ent_set_rv(ient *e, const char *rv)
{
    char *r = xstrdup(rv);
    if (!r)
        return -1;
    free(e->rv);
    e->rv = r;
    return 0;
}

static void tab_del(cu_informer *inf, ient *e)
{
    ient **pp = &inf->tab[cu_hash_str(e->key) & (inf->nb - 1)];
    while (*pp && *pp != e)
        pp = &(*pp)->next;
    if (*pp)
        *pp = e->next;
    free(e->key);
    free(e->rv);
    free(e);
    inf->n--;
}

static void tab_free(cu_informer *inf)
{
    for (size_t i = 0; i < inf->nb; i++) {
        ient *e = inf->tab[i];
        while (e) {
            ient *nx = e->next;
            free(e->key);
            free(e->rv);
            free(e);
            e = nx;
        }
    }
    free(inf->tab);
    inf->tab = NULL;
    inf->nb = inf->n = 0;
}

/* Parses len bytes of text, as deep as the API server serves; returns a
 * new tree (caller puts) or NULL with the reason in why. */
static json_object *parse(cu_informer *inf, const char *s, size_t len, char *why, size_t nwhy)
{
    return cu_json_parse(inf->tok, s, len, why, nwhy);
}

/* Reports an object (or text, obj NULL) that cannot be used and is left
 * out; the informer goes on with the rest. */
static void skip(cu_informer *inf, json_object *obj, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void skip(cu_informer *inf, json_object *obj, const char *fmt, ...)
{
    inf->st.skipped++;
    if (!inf->on_skip)
        return;
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    inf->depth++;
    inf->on_skip(inf, why, obj, inf->ud);
    inf->depth--;
}

/* Writes "ns/name" or "name" for obj into out; returns 0, -1 when obj has
 * no metadata.name, a name or namespace with a '/' (no API server stores
 * one, and the key would be ambiguous: a cluster-scoped "a/b" is not the
 * namespaced b of a) or the key does not fit. */
static int obj_key(json_object *obj, char *out, size_t n, const char **rv)
{
    json_object *md = cu_jget(obj, "metadata");
    const char *name = cu_jstr(md, "name"), *ns = cu_jstr(md, "namespace");
    *rv = cu_jstr(md, "resourceVersion");
    if (!name || !*name || strchr(name, '/') || (ns && strchr(ns, '/')))
        return -1;
    int w = ns && *ns ? snprintf(out, n, "%s/%s", ns, name) : snprintf(out, n, "%s", name);
    return w < 0 || (size_t)w >= n ? -1 : 0;
}

static void set_rv(cu_informer *inf, const char *rv)
{
    if (!rv || !*rv || strcmp(rv, inf->rv) == 0)
        return;
    char *r = xstrdup(rv);
    if (r) {
        free(inf->rv);
        inf->rv = r;
    }
}

/* Percent-encodes s for a query value; returns a new string or NULL. */
static char *qenc(const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = strlen(s);
    char *o = malloc(n * 3 + 1), *p = o;
    if (!o)
        return NULL;
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
            ch == '-' || ch == '_' || ch == '.' || ch == '~') {
            *p++ = (char)ch;
        } else {
            *p++ = '%';
            *p++ = hex[ch >> 4];
            *p++ = hex[ch & 15];
        }
    }
    *p = 0;
    return o;
}

static void emit(cu_informer *inf, cu_ievent ev, json_object *obj)
{
    inf->st.events++;
    if (inf->on_event)
        inf->on_event(inf, ev, obj, inf->ud);
}

/* ---- the cycle ---- */

static void start_list(cu_informer *inf, int new_pass);
static void start_watch(cu_informer *inf);
static void list_done(cu_kclient *c, const cu_kresp *r, void *ud);
static void watch_done(cu_kclient *c, const cu_kresp *r, void *ud);
static int watch_line(cu_kclient *c, const char *line, size_t len, void *ud);

static void really_free(cu_informer *inf)
{
    ev_timer_stop(inf->loop, &inf->silence);
    ev_timer_stop(inf->loop, &inf->backoff);
    tab_free(inf);
    if (inf->tok)
        json_tokener_free(inf->tok);
    free(inf->path);
    free(inf->lsel);
    free(inf->fsel);
    free(inf->rv);
    free(inf->cont);
    free(inf);
}

/* After a callback from the client has unwound: frees a stopped informer
 * once nothing refers to it any more. Returns 1 when it was freed. */
static int reap(cu_informer *inf)
{
    if (inf->stopping && inf->depth == 0 && !inf->in_stop && !inf->req) {
        really_free(inf);
        return 1;
    }
    return 0;
}

static void schedule_backoff(cu_informer *inf)
{
    double b = inf->backoff_s > 0 ? inf->backoff_s : BACKOFF_INIT_S;
    double jitter = (double)(rnd(inf) % 1000) / 1000.0 * b; /* [0, b) */
    inf->backoff_s = b * 2 > BACKOFF_MAX_S ? BACKOFF_MAX_S : b * 2;
    inf->state = ST_BACKOFF;
    ev_timer_stop(inf->loop, &inf->backoff);
    ev_timer_set(&inf->backoff, b + jitter, 0.);
    ev_timer_start(inf->loop, &inf->backoff);
}

static void backoff_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    cu_informer *inf = (cu_informer *)((char *)w - offsetof(cu_informer, backoff));
    (void)loop;
    (void)revents;
    if (inf->stopping)
        return;
    if (inf->list_is_relist || !inf->synced || !*inf->rv)
        start_list(inf, 1);
    else
        start_watch(inf);
}

static void silence_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    cu_informer *inf = (cu_informer *)((char *)w - offsetof(cu_informer, silence));
    (void)loop;
    (void)revents;
    ev_timer_stop(inf->loop, &inf->silence);
    if (inf->stopping || inf->state != ST_WATCH || !inf->req)
        return;
    inf->st.silent_restarts++;
    inf->why = WHY_SILENT;
    /* done comes (now or later) with "cancelled"; watch_done re-watches */
    cu_kclient_cancel(inf->req);
}

static void append_selectors(cu_informer *inf, cu_buf *b)
{
    if (inf->lsel)
        cu_buf_printf(b, "&labelSelector=%s", inf->lsel);
    if (inf->fsel)
        cu_buf_printf(b, "&fieldSelector=%s", inf->fsel);
}

static void start_list(cu_informer *inf, int new_pass)
{
    if (new_pass) {
        free(inf->cont);
        inf->cont = NULL;
        inf->pass++;
    }
    cu_buf b;
    cu_buf_init(&b, 1 << 16);
    cu_buf_printf(&b, "%s?limit=%d", inf->path, inf->page_size);
    append_selectors(inf, &b);
    if (inf->cont) {
        char *e = qenc(inf->cont);
        if (e)
            cu_buf_printf(&b, "&continue=%s", e);
        free(e);
    }
    inf->state = ST_LIST;
    inf->st.lists++;
    inf->req =
        b.failed ? NULL
                 : cu_kclient_request(inf->c, "GET", cu_buf_str(&b), NULL, 0, NULL, list_done, inf);
    cu_buf_free(&b);
    if (!inf->req)
        schedule_backoff(inf);
}

static void start_watch(cu_informer *inf)
{
    int to = inf->watch_timeout_s > 0 ? inf->watch_timeout_s : 300 + (int)(rnd(inf) % 301);
    cu_buf b;
    cu_buf_init(&b, 1 << 16);
    cu_buf_printf(&b, "%s?watch=true&allowWatchBookmarks=true&timeoutSeconds=%d", inf->path, to);
    if (*inf->rv) {
        char *e = qenc(inf->rv);
        if (e)
            cu_buf_printf(&b, "&resourceVersion=%s", e);
        free(e);
    }
    append_selectors(inf, &b);
    inf->state = ST_WATCH;
    inf->why = WHY_NONE;
    inf->watch_lines = 0;
    ev_now_update(inf->loop);
    inf->watch_started = ev_now(inf->loop);
    inf->st.watches++;
    inf->req =
        b.failed ? NULL : cu_kclient_stream(inf->c, cu_buf_str(&b), watch_line, watch_done, inf);
    cu_buf_free(&b);
    if (!inf->req) {
        schedule_backoff(inf);
        return;
    }
    inf->silence.repeat = inf->silence_ms / 1000.0;
    ev_timer_again(inf->loop, &inf->silence);
}

/* One LIST item: record it and report ADDED or MODIFIED (nothing when the
 * resourceVersion is the one we know). */
static void list_item(cu_informer *inf, json_object *it)
{
    char key[600];
    const char *rv = NULL;
    if (obj_key(it, key, sizeof key, &rv) != 0) {
        skip(inf, it, "%s: LIST item without metadata.name; left out", inf->path);
        return;
    }
    if (!rv)
        rv = "";
    ient *e = tab_find(inf, key);
    if (!e) {
        e = tab_add(inf, key, rv);
        if (!e)
            return;
        e->pass = inf->pass;
        emit(inf, CU_IEV_ADDED, it);
        return;
    }
    e->pass = inf->pass;
    if (strcmp(e->rv, rv) != 0 && ent_set_rv(e, rv) == 0)
        emit(inf, CU_IEV_MODIFIED, it);
}

/* Builds a metadata-only tombstone for key (ns/name or name). */
static json_object *tombstone(const char *key, const char *rv)
{
    json_object *o = json_object_new_object(), *md = json_object_new_object();
    if (!o || !md) {
        json_object_put(o);
        json_object_put(md);
        return NULL;
    }
    const char *slash = strchr(key, '/');
    if (slash) {
        json_object_object_add(md, "namespace",
                               json_object_new_string_len(key, (int)(slash - key)));
        json_object_object_add(md, "name", json_object_new_string(slash + 1));
    } else {
        json_object_object_add(md, "name", json_object_new_string(key));
    }
    json_object_object_add(md, "resourceVersion", json_object_new_string(rv));
    json_object_object_add(o, "metadata", md);
    return o;
}

static void list_complete_(cu_informer *inf, const char *list_rv, int watch);

/* End of a LIST pass: report what vanished, then watch. */
static void list_complete(cu_informer *inf, const char *list_rv)
{
    list_complete_(inf, list_rv, 1);
}

static void list_complete_(cu_informer *inf, const char *list_rv, int watch)
{
    for (size_t i = 0; i < inf->nb && !inf->stopping; i++) {
        ient *e = inf->tab[i];
        while (e && !inf->stopping) {
            ient *nx = e->next;
            if (e->pass != inf->pass) {
                json_object *t = tombstone(e->key, e->rv);
                tab_del(inf, e);
                if (t) {
                    emit(inf, CU_IEV_DELETED, t);
                    json_object_put(t);
                }
            }
            e = nx;
        }
    }
    set_rv(inf, list_rv);
    inf->list_is_relist = 0;
    inf->backoff_s = 0;
    if (!inf->stopping && !inf->synced) {
        inf->synced = 1;
        if (inf->on_synced)
            inf->on_synced(inf, inf->ud);
    }
    if (!inf->stopping && watch)
        start_watch(inf);
}

/* The end of the JSON string starting at s[i] == '"': the index of its
 * closing quote, n when it does not close. */
static size_t str_end(const char *s, size_t n, size_t i)
{
    for (i++; i < n && s[i] != '"'; i++)
        if (s[i] == '\\')
            i++;
    return i < n ? i : n;
}

static int is_ws(char ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r'; }

/* Finds the array value of the top-level key "items" of a LIST body:
 * s[*b] is its '[' and s[*e] its ']'. A structural scan (strings and
 * nesting only): the parts are parsed, and so validated, one by one.
 * Returns 0 when found. */
static int find_items(const char *s, size_t n, size_t *b, size_t *e)
{
    size_t depth = 0;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (ch == '"') {
            size_t j = str_end(s, n, i);
            if (j >= n)
                return -1;
            if (depth == 1 && j - i == 6 && memcmp(s + i + 1, "items", 5) == 0) {
                size_t k = j + 1;
                while (k < n && is_ws(s[k]))
                    k++;
                if (k < n && s[k] == ':') {
                    for (k++; k < n && is_ws(s[k]); k++)
                        ;
                    if (k >= n || s[k] != '[')
                        return -1;
                    size_t d = 0;
                    for (size_t m = k; m < n; m++) {
                        if (s[m] == '"') {
                            m = str_end(s, n, m);
                        } else if (s[m] == '[' || s[m] == '{') {
                            d++;
                        } else if (s[m] == ']' || s[m] == '}') {
                            if (--d == 0) {
                                *b = k;
                                *e = m;
                                return 0;
                            }
                        }
                    }
                    return -1;
                }
            }
            i = j;
        } else if (ch == '{' || ch == '[') {
            depth++;
        } else if ((ch == '}' || ch == ']') && depth > 0) {
            depth--;
        }
    }
    return -1;
}

/* One element of the items array, s[0..n): parse it and record it. */
static void list_elem(cu_informer *inf, size_t idx, const char *s, size_t n)
{
    char why[200];
    json_object *it = parse(inf, s, n, why, sizeof why);
    if (!it) {
        skip(inf, NULL, "%s: LIST item %zu cannot be parsed (%s); left out", inf->path, idx, why);
        return;
    }
    if (!json_object_is_type(it, json_type_object))
        skip(inf, NULL, "%s: LIST item %zu is not an object; left out", inf->path, idx);
    else
        list_item(inf, it);
    json_object_put(it);
}

/* Reads a LIST body: the list's metadata (*list_rv, *cont: new strings or
 * NULL) and every item, each parsed on its own so that one that cannot be
 * read is left out (reported) and the rest still count. Returns 0, or -1
 * when the body is not a list at all. */
static int read_list(cu_informer *inf, const char *s, size_t n, char **list_rv, char **cont)
{
    *list_rv = *cont = NULL;
    size_t b = 0, e = 0;
    int split = find_items(s, n, &b, &e) == 0;
    json_object *root;
    char why[200];
    if (split) {
        /* the list without its items: "{...,"items":[],...}" */
        char *env = malloc(n - (e - b + 1) + 3);
        if (!env)
            return -1;
        memcpy(env, s, b);
        memcpy(env + b, "[]", 2);
        memcpy(env + b + 2, s + e + 1, n - e - 1);
        root = parse(inf, env, n - (e - b + 1) + 2, why, sizeof why);
        free(env);
    } else {
        root = parse(inf, s, n, why, sizeof why);
    }
    json_object *items = cu_jget(root, "items");
    if (!json_object_is_type(root, json_type_object) ||
        (items && !json_object_is_type(items, json_type_array))) {
        json_object_put(root);
        skip(inf, NULL, "%s: the LIST answer is not a list (%s); listing again later", inf->path,
             root ? "items is not an array" : why);
        return -1;
    }
    json_object *md = cu_jget(root, "metadata");
    const char *c = cu_jstr(md, "continue"), *rv = cu_jstr(md, "resourceVersion");
    *cont = c && *c ? xstrdup(c) : NULL;
    *list_rv = rv ? xstrdup(rv) : NULL;
    if (!split) {
        size_t ni = items ? json_object_array_length(items) : 0;
        for (size_t i = 0; i < ni && !inf->stopping; i++) {
            json_object *it = json_object_array_get_idx(items, i);
            if (json_object_is_type(it, json_type_object))
                list_item(inf, it);
            else
                skip(inf, NULL, "%s: LIST item %zu is not an object; left out", inf->path, i);
        }
    }
    json_object_put(root);
    if (split) {
        size_t d = 0, start = b + 1, idx = 0;
        for (size_t m = b + 1; m <= e && !inf->stopping; m++) {
            char ch = s[m];
            if (ch == '"') {
                m = str_end(s, n, m);
            } else if (ch == '[' || ch == '{') {
                d++;
            } else if ((ch == ']' || ch == '}') && d > 0) {
                d--;
            } else if ((ch == ',' && d == 0) || m == e) {
                size_t x = start, y = m;
                while (x < y && is_ws(s[x]))
                    x++;
                while (y > x && is_ws(s[y - 1]))
                    y--;
                if (y > x || ch == ',')
                    list_elem(inf, idx++, s + x, y - x);
                start = m + 1;
            }
        }
    }
    return 0;
}

static void list_done(cu_kclient *c, const cu_kresp *r, void *ud)
{
    cu_informer *inf = ud;
    (void)c;
    inf->req = NULL;
    inf->depth++;
    if (inf->stopping)
        goto out;
    if (r->code == 410 && inf->cont) {
        /* the continue token expired: start the pass again from page 1 */
        start_list(inf, 1);
        goto out;
    }
    char *list_rv = NULL, *cont = NULL;
    if (r->code != 200 || !r->body || read_list(inf, r->body, r->len, &list_rv, &cont) != 0) {
        if (r->error && strstr(r->error, "exceeds") && inf->page_size > 1) {
            /* a page too large for the client: smaller pages from now on,
             * at once (the server is fine), going on from the same page */
            inf->page_size /= 2;
            skip(inf, NULL, "%s: LIST: %s; listing with pages of %d", inf->path, r->error,
                 inf->page_size);
            if (!inf->stopping)
                start_list(inf, 0);
            goto out;
        }
        if (r->code == 404 && inf->optional && !inf->synced) {
            skip(inf, NULL,
                 "%s: LIST: 404 (the resource is not served: its CRD is not installed?); "
                 "taken as empty, and listed again until it is served",
                 inf->path);
            inf->synced = 1;
            if (inf->on_synced)
                inf->on_synced(inf, inf->ud);
        }
        inf->list_is_relist = 1;
        schedule_backoff(inf);
        goto out;
    }
    free(inf->cont);
    inf->cont = cont;
    if (!inf->stopping) {
        if (inf->cont)
            start_list(inf, 0);
        else
            list_complete(inf, list_rv);
    }
    free(list_rv);
out:
    inf->depth--;
    reap(inf);
}

/* One watch event line. Returns non-zero to end the stream. */
static int watch_line(cu_kclient *c, const char *line, size_t len, void *ud)
{
    cu_informer *inf = ud;
    (void)c;
    if (inf->stopping)
        return 1;
    inf->watch_lines++;
    ev_timer_again(inf->loop, &inf->silence);
    while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
        len--;
    if (len == 0)
        return 0;
    char why[200];
    json_object *ev = parse(inf, line, len, why, sizeof why);
    const char *type = cu_jstr(ev, "type");
    json_object *obj = cu_jget(ev, "object");
    if (!ev || !type || !json_object_is_type(obj, json_type_object)) {
        /* the client hands over complete lines only, so this is one bad
         * event (not JSON, nested too deeply, no type): skip it rather
         * than re-watching into it forever */
        skip(inf, NULL, "%s: watch event %s; left out", inf->path,
             !ev     ? why
             : !type ? "without a type"
                     : "without an object");
        json_object_put(ev);
        return 0;
    }
    int stop = 0;
    inf->depth++;
    if (strcmp(type, "BOOKMARK") == 0) {
        set_rv(inf, cu_jstr(cu_jget(obj, "metadata"), "resourceVersion"));
    } else if (strcmp(type, "ERROR") == 0) {
        json_object *code = cu_jget(obj, "code");
        inf->why = code && json_object_get_int(code) == 410 ? WHY_GONE : WHY_ERROR;
        stop = 1;
    } else {
        int is_del = strcmp(type, "DELETED") == 0;
        int known_type = is_del || !strcmp(type, "ADDED") || !strcmp(type, "MODIFIED");
        char key[600];
        const char *rv = NULL;
        if (!known_type) {
            skip(inf, NULL, "%s: watch event of unknown type \"%.40s\"; left out", inf->path, type);
        } else if (obj_key(obj, key, sizeof key, &rv) != 0) {
            skip(inf, obj, "%s: %s watch event without metadata.name; left out", inf->path, type);
        } else {
            ient *e = tab_find(inf, key);
            if (is_del) {
                if (e) {
                    tab_del(inf, e);
                    emit(inf, CU_IEV_DELETED, obj);
                }
            } else if (!e) {
                if (tab_add(inf, key, rv ? rv : ""))
                    emit(inf, CU_IEV_ADDED, obj);
            } else if (!rv || strcmp(e->rv, rv) != 0) {
                /* same RV again is a replay: skip it */
                if (ent_set_rv(e, rv ? rv : "") == 0)
                    emit(inf, CU_IEV_MODIFIED, obj);
            }
            set_rv(inf, rv);
        }
    }
    json_object_put(ev);
    inf->depth--;
    if (inf->stopping)
        stop = 1;
    return stop;
}

static void watch_done(cu_kclient *c, const cu_kresp *r, void *ud)
{
    cu_informer *inf = ud;
    (void)c;
    inf->req = NULL;
    ev_timer_stop(inf->loop, &inf->silence);
    inf->depth++;
    if (inf->stopping)
        goto out;
    ev_now_update(inf->loop);
    double lasted = ev_now(inf->loop) - inf->watch_started;
    if (inf->why == WHY_GONE || r->code == 410) {
        inf->st.relists_410++;
        inf->list_is_relist = 1;
        start_list(inf, 1);
    } else if (inf->why == WHY_SILENT) {
        start_watch(inf);
    } else if (inf->why == WHY_NONE && r->code == 200 && !r->error &&
               (inf->watch_lines > 0 || lasted >= VERY_SHORT_WATCH_S)) {
        /* the server closed a healthy watch (timeout, restart): go on at once */
        if (inf->watch_lines > 0)
            inf->backoff_s = 0;
        start_watch(inf);
    } else {
        if (r->error && strstr(r->error, "exceeds")) {
            /* re-watching from the same resourceVersion would meet the
             * same event again: list instead (items are read one by one) */
            skip(inf, NULL, "%s: watch: %s; listing again", inf->path, r->error);
            inf->list_is_relist = 1;
        }
        schedule_backoff(inf);
    }
out:
    inf->depth--;
    reap(inf);
}

/* ---- public ---- */

static int check_opts(const cu_informer_opts *o, cu_diag *d)
{
    int bad = 0;
    if (!o) {
        cu_diag_error(d, "informer: options: missing");
        return 1;
    }
    const char *who = o->path ? o->path : "informer";
    if (!o->path || o->path[0] != '/') {
        cu_diag_error(d, "%s: path: must be an API collection path starting with '/' (got %s%s%s)",
                      who, o->path ? "\"" : "", o->path ? o->path : "none", o->path ? "\"" : "");
        bad = 1;
    } else if (strchr(o->path, '?')) {
        cu_diag_error(d,
                      "%s: path: must not carry a query; use label_selector, field_selector "
                      "and page_size",
                      who);
        bad = 1;
    }
    if (o->page_size < 0) {
        cu_diag_error(d, "%s: page_size: must be >= 0 (got %d)", who, o->page_size);
        bad = 1;
    }
    if (o->watch_timeout_s < 0) {
        cu_diag_error(d, "%s: watch_timeout_s: must be >= 0 (got %d)", who, o->watch_timeout_s);
        bad = 1;
    }
    if (o->silence_ms < 0) {
        cu_diag_error(d, "%s: silence_ms: must be >= 0 (got %d)", who, o->silence_ms);
        bad = 1;
    }
    if (!o->on_event) {
        cu_diag_error(d, "%s: on_event: missing (the informer would keep nothing)", who);
        bad = 1;
    }
    return bad;
}

cu_informer *cu_informer_start(cu_kclient *c, const cu_informer_opts *o, cu_diag *d)
{
    if (!c) {
        cu_diag_error(d, "informer: client: missing");
        return NULL;
    }
    if (check_opts(o, d))
        return NULL;
    cu_informer *inf = calloc(1, sizeof *inf);
    if (!inf) {
        cu_diag_error(d, "%s: out of memory", o->path);
        return NULL;
    }
    inf->c = c;
    inf->loop = client_loop(c);
    inf->path = xstrdup(o->path);
    inf->lsel = o->label_selector && *o->label_selector ? qenc(o->label_selector) : NULL;
    inf->fsel = o->field_selector && *o->field_selector ? qenc(o->field_selector) : NULL;
    inf->rv = xstrdup("");
    inf->tok = cu_json_tokener_new();
    inf->page_size = o->page_size > 0 ? o->page_size : 500;
    inf->watch_timeout_s = o->watch_timeout_s;
    inf->silence_ms = o->silence_ms > 0 ? o->silence_ms : 120000;
    inf->optional = o->optional;
    inf->on_event = o->on_event;
    inf->on_synced = o->on_synced;
    inf->on_skip = o->on_skip;
    inf->ud = o->ud;
    inf->rng = (uint64_t)(uintptr_t)inf ^ ((uint64_t)time(NULL) << 20) ^ 0x9E3779B97F4A7C15ULL;
    if (!inf->rng)
        inf->rng = 1;
    ev_timer_init(&inf->silence, silence_cb, 0., inf->silence_ms / 1000.0);
    ev_timer_init(&inf->backoff, backoff_cb, 0., 0.);
    if (!inf->path || !inf->rv || !inf->tok ||
        (o->label_selector && *o->label_selector && !inf->lsel) ||
        (o->field_selector && *o->field_selector && !inf->fsel)) {
        cu_diag_error(d, "%s: out of memory", o->path);
        really_free(inf);
        return NULL;
    }
    start_list(inf, 1);
    return inf;
}

void cu_informer_stop(cu_informer *inf)
{
    if (!inf || inf->stopping)
        return;
    inf->stopping = 1;
    ev_timer_stop(inf->loop, &inf->silence);
    ev_timer_stop(inf->loop, &inf->backoff);
    if (inf->depth > 0)
        return; /* inside one of our callbacks: freed when it unwinds */
    if (inf->req) {
        inf->in_stop = 1;
        cu_kclient_cancel(inf->req); /* done runs now or later, then frees */
        inf->in_stop = 0;
    }
    reap(inf);
}

int cu_informer_synced(const cu_informer *inf) { return inf && inf->synced; }

const char *cu_informer_rv(const cu_informer *inf) { return inf ? inf->rv : ""; }

void cu_informer_stats_get(const cu_informer *inf, cu_informer_stats *out)
{
    if (inf)
        *out = inf->st;
    else
        memset(out, 0, sizeof *out);
}

void cu_informer_feed(cu_informer *inf, int watch, const char *s, size_t len)
{
    if (!inf || inf->stopping || !s)
        return;
    if (watch) {
        watch_line(inf->c, s, len, inf);
        return;
    }
    inf->depth++;
    char *list_rv = NULL, *cont = NULL;
    inf->pass++;
    if (read_list(inf, s, len, &list_rv, &cont) == 0 && !inf->stopping)
        list_complete_(inf, list_rv, 0);
    free(list_rv);
    free(cont);
    inf->depth--;
}
