/*
 * cu_mauth.c - see cu_mauth.h. Two small caches (token digests -> the
 * user a TokenReview named; user and path -> the SubjectAccessReview's
 * answer) in one array searched linearly (at most MAX_ENTRIES; a scrape
 * target sees a handful of scrapers), and the reviews in flight, each
 * with the held requests waiting for it.
 */
#include "cu_mauth.h"
#include "cu_json.h"

#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cu_kconfig.h"
#include "cu_sha1.h"
#include "cu_tls.h"

#define MAX_ENTRIES 4096
#define LOG_EVERY_S 10.0

enum { K_TOKEN, K_ACCESS };

typedef struct centry {
    int kind;
    char key[41];      /* SHA-1 of the token, or of the user and the path */
    double expires;    /* ev_now() time */
    int ok;            /* authenticated, or allowed */
    json_object *user; /* K_TOKEN and ok: the TokenReview's status.user (owned) */
} centry;

typedef struct waiter {
    uint64_t id;
    struct waiter *next;
    char path[];
} waiter;

typedef struct pending {
    cu_mauth *a;
    int kind;
    char key[41];
    char name[128]; /* K_ACCESS: the user's name, for the messages */
    cu_kreq *req;
    waiter *w;
    struct pending *next;
} pending;

struct cu_mauth {
    cu_kclient *kc;
    cu_httpd *s;
    cu_mauth_opts o;
    centry *e;
    size_t n, cap;
    pending *p;
    unsigned long reviews;
    char lastlog[256];
    double lastlog_at;
};

static double now(const cu_mauth *a) { return ev_now(cu_kclient_loop(a->kc)); }

/* A refusal's message: the caller's (o.refuse), else one line. code: 401,
 * 403, or 500 (authn: the TokenReview failed, else the access review). */
static void refusal(cu_mauth *a, int code, int authn, const char *name, const char *path, char *msg,
                    size_t msgn)
{
    if (a->o.refuse) {
        a->o.refuse(a->o.refuse_ud, code, name, path, msg, msgn);
        return;
    }
    if (code == 401)
        snprintf(msg, msgn, "Unauthorized");
    else if (code == 403)
        snprintf(msg, msgn, "Authorization denied for user %s", name);
    else if (authn)
        snprintf(msg, msgn, "Authentication failed");
    else
        snprintf(msg, msgn, "Authorization for user %s failed", name);
}

static void logf_(cu_mauth *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(cu_mauth *a, const char *fmt, ...)
{
    if (!a->o.log)
        return;
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    double t = now(a);
    if (strcmp(msg, a->lastlog) == 0 && t - a->lastlog_at < LOG_EVERY_S)
        return;
    snprintf(a->lastlog, sizeof(a->lastlog), "%s", msg);
    a->lastlog_at = t;
    a->o.log(a->o.log_ud, msg);
}

cu_mauth *cu_mauth_new(cu_kclient *kc, const cu_mauth_opts *o)
{
    cu_mauth *a = calloc(1, sizeof(*a));
    if (!a)
        return NULL;
    a->kc = kc;
    if (o)
        a->o = *o;
    if (a->o.authn_ttl_s <= 0)
        a->o.authn_ttl_s = 60;
    if (a->o.allow_ttl_s <= 0)
        a->o.allow_ttl_s = 300;
    if (a->o.deny_ttl_s <= 0)
        a->o.deny_ttl_s = 30;
    a->lastlog_at = -1e9;
    return a;
}

void cu_mauth_attach(cu_mauth *a, cu_httpd *s) { a->s = s; }

void cu_mauth_detach(cu_mauth *a)
{
    if (a)
        a->s = NULL;
}

unsigned long cu_mauth_reviews(const cu_mauth *a) { return a->reviews; }

/* ---- the cache ---- */

static centry *find(cu_mauth *a, int kind, const char *key)
{
    double t = now(a);
    for (size_t i = 0; i < a->n; i++)
        if (a->e[i].kind == kind && a->e[i].expires > t && strcmp(a->e[i].key, key) == 0)
            return &a->e[i];
    return NULL;
}

static void entry_free(centry *e)
{
    if (e->user)
        json_object_put(e->user);
    e->user = NULL;
}

/* Stores a result (user: taken over). Expired entries make room; when
 * none has expired at MAX_ENTRIES, the cache starts over. */
static void put(cu_mauth *a, int kind, const char *key, int ok, double ttl, json_object *user)
{
    double t = now(a);
    size_t j = 0;
    for (size_t i = 0; i < a->n; i++) {
        if (a->e[i].expires <= t || (a->e[i].kind == kind && strcmp(a->e[i].key, key) == 0))
            entry_free(&a->e[i]);
        else
            a->e[j++] = a->e[i];
    }
    a->n = j;
    if (a->n >= MAX_ENTRIES) {
        for (size_t i = 0; i < a->n; i++)
            entry_free(&a->e[i]);
        a->n = 0;
    }
    if (cu_vec_reserve(&a->e, a->n, &a->cap, sizeof(*a->e), 16)) {
        if (user)
            json_object_put(user);
        return;
    }
    centry *e = &a->e[a->n++];
    e->kind = kind;
    snprintf(e->key, sizeof(e->key), "%s", key);
    e->expires = t + ttl;
    e->ok = ok;
    e->user = user;
}

/* ---- reviews ---- */

static pending *find_pending(cu_mauth *a, int kind, const char *key)
{
    for (pending *p = a->p; p; p = p->next)
        if (p->kind == kind && strcmp(p->key, key) == 0)
            return p;
    return NULL;
}

static int add_waiter(pending *p, uint64_t id, const char *path)
{
    size_t n = strlen(path);
    waiter *w = malloc(sizeof(*w) + n + 1);
    if (!w)
        return -1;
    w->id = id;
    memcpy(w->path, path, n + 1);
    w->next = p->w;
    p->w = w;
    return 0;
}

static void unlink_pending(cu_mauth *a, pending *p)
{
    for (pending **pp = &a->p; *pp; pp = &(*pp)->next)
        if (*pp == p) {
            *pp = p->next;
            return;
        }
}

static void decide(cu_mauth *a, uint64_t id, int status, const char *msg)
{
    if (a->s)
        cu_httpd_decide(a->s, id, status, msg);
}

static void on_review(cu_kclient *c, const cu_kresp *r, void *ud);

static pending *start(cu_mauth *a, int kind, const char *key, json_object *body)
{
    pending *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->a = a;
    p->kind = kind;
    snprintf(p->key, sizeof(p->key), "%s", key);
    const char *text = json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN |
                                                                JSON_C_TO_STRING_NOSLASHESCAPE);
    const char *path = kind == K_TOKEN ? "/apis/authentication.k8s.io/v1/tokenreviews"
                                       : "/apis/authorization.k8s.io/v1/subjectaccessreviews";
    p->req = cu_kclient_request(a->kc, "POST", path, text, strlen(text), "application/json",
                                on_review, p);
    if (!p->req) {
        free(p);
        return NULL;
    }
    a->reviews++;
    p->next = a->p;
    a->p = p;
    return p;
}

static const char *user_name(json_object *user)
{
    const char *name = cu_jstr(user, "username");
    return name ? name : "";
}

/* The access of user (a TokenReview's status.user) to path: 0, 403 with
 * msg, 500 with msg, or CU_HTTPD_WAIT with the request waiting for a
 * SubjectAccessReview. */
static int authorize(cu_mauth *a, json_object *user, const char *path, uint64_t id, char *msg,
                     size_t msgn)
{
    const char *ujson = json_object_to_json_string_ext(user, JSON_C_TO_STRING_PLAIN);
    cu_sha1 h;
    unsigned char dg[20];
    cu_sha1_init(&h);
    cu_sha1_update(&h, ujson, strlen(ujson));
    cu_sha1_update(&h, "\n", 1);
    cu_sha1_update(&h, path, strlen(path));
    cu_sha1_final(&h, dg);
    char key[41];
    for (int i = 0; i < 20; i++)
        snprintf(key + 2 * i, 3, "%02x", dg[i]);
    const char *name = user_name(user);
    json_object *groups = cu_jget(user, "groups");
    for (size_t i = 0; a->o.always_allow_group && json_object_is_type(groups, json_type_array) &&
                       i < json_object_array_length(groups);
         i++) {
        const char *g = json_object_get_string(json_object_array_get_idx(groups, i));
        if (g && strcmp(g, a->o.always_allow_group) == 0)
            return 0;
    }
    centry *e = find(a, K_ACCESS, key);
    if (e) {
        if (e->ok)
            return 0;
        refusal(a, 403, 0, name, path, msg, msgn);
        return 403;
    }
    pending *p = find_pending(a, K_ACCESS, key);
    if (!p) {
        /* spec: the user as the TokenReview named it, and the path */
        json_object *body = json_object_new_object(), *spec = json_object_new_object();
        json_object_object_add(body, "apiVersion",
                               json_object_new_string("authorization.k8s.io/v1"));
        json_object_object_add(body, "kind", json_object_new_string("SubjectAccessReview"));
        static const char *const copy[] = { "uid", "groups", "extra" };
        json_object_object_add(spec, "user", json_object_new_string(name));
        for (size_t i = 0; i < sizeof(copy) / sizeof(copy[0]); i++) {
            json_object *v = cu_jget(user, copy[i]);
            if (v)
                json_object_object_add(spec, copy[i], json_object_get(v));
        }
        json_object *attrs = a->o.attrs ? a->o.attrs(a->o.attrs_ud, path) : NULL;
        if (attrs) {
            json_object_object_foreach (attrs, ak, av)
                json_object_object_add(spec, ak, json_object_get(av));
            json_object_put(attrs);
        } else {
            json_object *nra = json_object_new_object();
            json_object_object_add(nra, "path", json_object_new_string(path));
            json_object_object_add(nra, "verb", json_object_new_string("get"));
            json_object_object_add(spec, "nonResourceAttributes", nra);
        }
        json_object_object_add(body, "spec", spec);
        p = start(a, K_ACCESS, key, body);
        json_object_put(body);
        if (p)
            snprintf(p->name, sizeof(p->name), "%s", name);
    }
    if (!p || add_waiter(p, id, path) != 0) {
        refusal(a, 500, 0, name, path, msg, msgn);
        return 500;
    }
    return CU_HTTPD_WAIT;
}

/* The answer of a review: its status object, or NULL with why in err. */
static json_object *review_status(const cu_kresp *r, json_object **root, char *err, size_t errn)
{
    *root = NULL;
    if (r->code < 200 || r->code > 299) {
        if (r->code)
            snprintf(err, errn, "HTTP %d: %.160s", r->code, r->body ? r->body : "");
        else
            snprintf(err, errn, "%s", r->error ? r->error : "no response");
        return NULL;
    }
    *root = json_tokener_parse(r->body ? r->body : "");
    json_object *st;
    if (!*root || !json_object_object_get_ex(*root, "status", &st) ||
        !json_object_is_type(st, json_type_object)) {
        snprintf(err, errn, "HTTP %d: no status in the answer", r->code);
        return NULL;
    }
    return st;
}

static void on_review(cu_kclient *c, const cu_kresp *r, void *ud)
{
    (void)c;
    pending *p = ud;
    cu_mauth *a = p->a;
    unlink_pending(a, p);
    json_object *root = NULL;
    char err[256] = "";
    json_object *st = review_status(r, &root, err, sizeof(err));
    waiter *w = p->w;
    p->w = NULL;
    if (p->kind == K_TOKEN) {
        json_object *user = cu_jget(st, "user");
        int ok = st && cu_jas_true(cu_jget(st, "authenticated")) &&
                 json_object_is_type(user, json_type_object) && *user_name(user);
        if (!st)
            logf_(a, "metrics authentication: TokenReview failed: %s", err);
        else
            put(a, K_TOKEN, p->key, ok, a->o.authn_ttl_s, ok ? json_object_get(user) : NULL);
        while (w) {
            waiter *next = w->next;
            char msg[1024] = "";
            if (!st) {
                refusal(a, 500, 1, "", w->path, msg, sizeof(msg));
                decide(a, w->id, 500, msg);
            } else if (!ok) {
                refusal(a, 401, 1, "", w->path, msg, sizeof(msg));
                decide(a, w->id, 401, msg);
            } else if (a->s) {
                int code = authorize(a, user, w->path, w->id, msg, sizeof(msg));
                if (code != CU_HTTPD_WAIT)
                    decide(a, w->id, code, msg);
            }
            free(w);
            w = next;
        }
    } else {
        int ok = st && cu_jas_true(cu_jget(st, "allowed"));
        if (!st)
            logf_(a, "metrics authorization: SubjectAccessReview for user %s failed: %s", p->name,
                  err);
        else
            put(a, K_ACCESS, p->key, ok, ok ? a->o.allow_ttl_s : a->o.deny_ttl_s, NULL);
        while (w) {
            waiter *next = w->next;
            char msg[1024] = "";
            if (!ok)
                refusal(a, !st ? 500 : 403, 0, p->name, w->path, msg, sizeof(msg));
            decide(a, w->id, !st ? 500 : ok ? 0 : 403, ok ? NULL : msg);
            free(w);
            w = next;
        }
    }
    if (root)
        json_object_put(root);
    free(p);
}

/* ---- the gate ---- */

static int gate(cu_mauth *a, const char *authz, const char *path, uint64_t id, char *msg,
                size_t msgn)
{
    const char *tok = NULL;
    if (strncasecmp(authz, "Bearer ", 7) == 0) {
        tok = authz + 7;
        while (*tok == ' ')
            tok++;
    }
    size_t tl = tok ? strcspn(tok, " \t") : 0;
    if (!tok || !tl || tok[tl]) {
        refusal(a, 401, 1, "", path, msg, msgn);
        return 401;
    }
    char key[41];
    cu_sha1_hex(tok, tl, key);
    centry *e = find(a, K_TOKEN, key);
    if (e) {
        if (!e->ok) {
            refusal(a, 401, 1, "", path, msg, msgn);
            return 401;
        }
        return authorize(a, e->user, path, id, msg, msgn);
    }
    pending *p = find_pending(a, K_TOKEN, key);
    if (!p) {
        json_object *body = json_object_new_object(), *spec = json_object_new_object();
        json_object_object_add(body, "apiVersion",
                               json_object_new_string("authentication.k8s.io/v1"));
        json_object_object_add(body, "kind", json_object_new_string("TokenReview"));
        json_object_object_add(spec, "token", json_object_new_string_len(tok, (int)tl));
        json_object_object_add(body, "spec", spec);
        p = start(a, K_TOKEN, key, body);
        json_object_put(body);
    }
    if (!p || add_waiter(p, id, path) != 0) {
        refusal(a, 500, 1, "", path, msg, msgn);
        return 500;
    }
    return CU_HTTPD_WAIT;
}

int cu_mauth_gate(void *ud, const char *authz, const char *path, uint64_t id, char *msg,
                  size_t msgn)
{
    return gate(ud, authz, path, id, msg, msgn);
}

int cu_mauth_gate_req(void *ud, const cu_httpd_greq *r, uint64_t id, char *msg, size_t msgn)
{
    cu_mauth *a = ud;
    if (!r->proxy_user)
        return gate(a, r->authz, r->path, id, msg, msgn);
    /* the identity an authenticating proxy asserted with its certificate */
    json_object *user = json_object_new_object(), *groups = json_object_new_array();
    if (!user || !groups) {
        json_object_put(user);
        json_object_put(groups);
        refusal(a, 500, 1, "", r->path, msg, msgn);
        return 500;
    }
    json_object_object_add(user, "username", json_object_new_string(r->proxy_user));
    int authenticated = 0;
    for (size_t i = 0; i < r->nproxy_groups; i++) {
        json_object_array_add(groups, json_object_new_string(r->proxy_groups[i]));
        authenticated |= strcmp(r->proxy_groups[i], "system:authenticated") == 0;
    }
    /* as the generic API server's authenticated-group adder: kube-aggregator's
     * legacy discovery request names its user and no group */
    if (!authenticated)
        json_object_array_add(groups, json_object_new_string("system:authenticated"));
    json_object_object_add(user, "groups", groups);
    int code = authorize(a, user, r->path, id, msg, msgn);
    json_object_put(user);
    return code;
}

void cu_mauth_free(cu_mauth *a)
{
    if (!a)
        return;
    /* nothing should be pending (the client was freed first); if it is,
     * its callback still points here: keep the records, drop the rest */
    for (size_t i = 0; i < a->n; i++)
        entry_free(&a->e[i]);
    free(a->e);
    if (a->p)
        return;
    free(a);
}

/* ---- where and with what the server listens ---- */

int cu_mauth_loopback(const char *addr)
{
    const char *colon = strrchr(addr, ':');
    size_t n = colon ? (size_t)(colon - addr) : strlen(addr);
    if (n >= 2 && addr[0] == '[' && addr[n - 1] == ']') {
        addr++;
        n -= 2;
    }
    if (n == 9 && strncasecmp(addr, "localhost", 9) == 0)
        return 1;
    if (n == 3 && strncmp(addr, "::1", 3) == 0)
        return 1;
    return n > 4 && strncmp(addr, "127.", 4) == 0;
}

/* The whole of a certificate or key file (at most 1 MiB). */
static char *slurp(const char *path, char *err, size_t errn)
{
    const char *why = "";
    char *b = cu_read_file(path, (size_t)1 << 20, NULL, &why);
    if (!b)
        snprintf(err, errn, "%s: %s", path, why);
    return b;
}

int cu_mauth_certificate(const char *dir, const char *cert_name, const char *key_name,
                         const char *host, char **cert_pem, char **key_pem, char *err, size_t errn)
{
    *cert_pem = *key_pem = NULL;
    if (dir) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", dir, cert_name);
        if (!(*cert_pem = slurp(path, err, errn)))
            return -1;
        snprintf(path, sizeof(path), "%s/%s", dir, key_name);
        if (!(*key_pem = slurp(path, err, errn))) {
            free(*cert_pem);
            *cert_pem = NULL;
            return -1;
        }
        return 0;
    }
    char *ca = NULL, *cert = NULL, *key = NULL;
    if (cu_tls_generate(host, &ca, &cert, &key, err, errn) != CU_OK)
        return -1;
    size_t a = strlen(cert), b = strlen(ca);
    char *chain = malloc(a + b + 1);
    if (!chain) {
        snprintf(err, errn, "out of memory");
        free(ca);
        free(cert);
        free(key);
        return -1;
    }
    memcpy(chain, cert, a);
    memcpy(chain + a, ca, b + 1);
    free(ca);
    free(cert);
    *cert_pem = chain;
    *key_pem = key;
    return 0;
}

size_t cu_mauth_addr_host(const char *addr, char *host, size_t n)
{
    const char *colon = strrchr(addr, ':');
    size_t hl = colon ? (size_t)(colon - addr) : 0;
    snprintf(host, n, "%.*s", (int)(hl < n ? hl : 0), addr);
    if (hl >= 2 && hl < n && host[0] == '[') {
        memmove(host, host + 1, hl - 2);
        host[hl - 2] = 0;
    }
    return hl;
}
