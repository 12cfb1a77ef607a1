/*
 * cu_authn.c - see cu_authn.h.
 */
#include "cu_authn.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cu_store.h"
#include "cu_json.h"

#define TOKENREVIEWS "/apis/authentication.k8s.io/v1/tokenreviews"
#define SARS "/apis/authorization.k8s.io/v1/subjectaccessreviews"

typedef struct user {
    char *token, *name, *uid;
    char **groups;
    size_t ngroups;
} user;

struct cu_authn {
    user *u;
    size_t n;
};

static void user_free(user *u)
{
    free(u->token);
    free(u->name);
    free(u->uid);
    for (size_t i = 0; i < u->ngroups; i++)
        free(u->groups[i]);
    free(u->groups);
}

void cu_authn_free(cu_authn *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->n; i++)
        user_free(&a->u[i]);
    free(a->u);
    free(a);
}

/* The next CSV field of *p (a "quoted" field may hold commas; "" is a
 * quote), trimmed; *p moves past its comma. A new string, or NULL. */
static char *field(const char **p)
{
    const char *s = *p;
    while (*s == ' ' || *s == '\t')
        s++;
    size_t cap = strlen(s) + 1, n = 0;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    if (*s == '"') {
        s++;
        while (*s && !(*s == '"' && s[1] != '"')) {
            if (*s == '"')
                s++;
            out[n++] = *s++;
        }
        if (*s == '"')
            s++;
        while (*s && *s != ',')
            s++;
    } else {
        while (*s && *s != ',' && *s != '\r' && *s != '\n')
            out[n++] = *s++;
        while (n && isspace((unsigned char)out[n - 1]))
            n--;
    }
    out[n] = 0;
    *p = *s == ',' ? s + 1 : s;
    return out;
}

static int add_group(user *u, const char *g, size_t len)
{
    while (len && isspace((unsigned char)*g)) {
        g++;
        len--;
    }
    while (len && isspace((unsigned char)g[len - 1]))
        len--;
    if (!len)
        return 0;
    char **ng = realloc(u->groups, (u->ngroups + 1) * sizeof(*ng));
    if (!ng)
        return -1;
    u->groups = ng;
    if (!(ng[u->ngroups] = strndup(g, len)))
        return -1;
    u->ngroups++;
    return 0;
}

cu_authn *cu_authn_load(const char *file, char *err, size_t errn)
{
    FILE *f = fopen(file, "r");
    if (!f) {
        snprintf(err, errn, "--token-file %s: %s", file, strerror(errno));
        return NULL;
    }
    cu_authn *a = calloc(1, sizeof(*a));
    char line[4096];
    int bad = !a;
    while (!bad && fgets(line, sizeof line, f)) {
        const char *p = line;
        while (isspace((unsigned char)*p))
            p++;
        if (!*p || *p == '#')
            continue;
        user u = { 0 };
        char *tok = field(&p), *name = *p ? field(&p) : NULL, *uid = *p ? field(&p) : NULL;
        char *groups = *p ? field(&p) : NULL;
        bad = !tok;
        if (!bad && !*tok) {
            free(tok);
            free(name);
            free(uid);
            free(groups);
            continue;
        }
        u.token = tok;
        if (!bad && (!name || !*name)) {
            /* a token only: an administrator */
            char nm[64];
            snprintf(nm, sizeof(nm), "cueue-token-%zu", a->n + 1);
            free(name);
            name = strdup(nm);
            bad = !name || add_group(&u, "system:masters", 14) != 0;
        }
        u.name = name;
        u.uid = uid;
        for (const char *g = groups; !bad && g && *g;) {
            size_t l = strcspn(g, ",");
            bad = add_group(&u, g, l) != 0;
            g += l + (g[l] == ',');
        }
        free(groups);
        user *nu = bad ? NULL : realloc(a->u, (a->n + 1) * sizeof(*nu));
        if (!nu) {
            user_free(&u);
            bad = 1;
            break;
        }
        a->u = nu;
        a->u[a->n++] = u;
    }
    fclose(f);
    if (bad) {
        snprintf(err, errn, "--token-file %s: out of memory", file);
        cu_authn_free(a);
        return NULL;
    }
    return a;
}

/* ---- the reviews ---- */

static json_object *status_obj(int code, const char *reason, const char *fmt, const char *arg)
{
    cu_status st;
    memset(&st, 0, sizeof(st));
    cu_status_set(&st, code, reason, fmt, arg);
    return cu_status_json(&st);
}

static int in_list(json_object *groups, const char *g)
{
    if (!groups || !json_object_is_type(groups, json_type_array))
        return 0;
    for (size_t i = 0; i < json_object_array_length(groups); i++) {
        json_object *e = json_object_array_get_idx(groups, i);
        if (json_object_is_type(e, json_type_string) && strcmp(json_object_get_string(e), g) == 0)
            return 1;
    }
    return 0;
}

/* RBAC's nonResourceURLs match: exact, or "PREFIX*". */
static int url_match(const char *path, const char *rule)
{
    size_t n = strlen(rule);
    if (n && rule[n - 1] == '*')
        return strncmp(path, rule, n - 1) == 0;
    return strcmp(path, rule) == 0;
}

static int any_url(const char *path, const char *const *rules)
{
    for (; *rules; rules++)
        if (url_match(path, *rules))
            return 1;
    return 0;
}

/* The answer to a SubjectAccessReview spec: allowed, with the reason. */
static int decide(cu_authn *a, json_object *spec, const char **reason)
{
    static const char *const public_urls[] = { "/healthz", "/healthz/*", "/livez",
                                               "/livez/*", "/readyz",    "/readyz/*",
                                               "/version", "/version/",  NULL };
    static const char *const monitoring_urls[] = { "/metrics", "/metrics/*", NULL };
    json_object *groups = NULL, *nra = NULL, *ra = NULL;
    json_object_object_get_ex(spec, "groups", &groups);
    json_object_object_get_ex(spec, "nonResourceAttributes", &nra);
    json_object_object_get_ex(spec, "resourceAttributes", &ra);
    const char *name = cu_jstr(spec, "user");
    if (in_list(groups, "system:masters")) {
        *reason = "cueue cluster: group system:masters may do anything";
        return 1;
    }
    if (nra) {
        const char *path = cu_jstr(nra, "path"), *verb = cu_jstr(nra, "verb");
        if (!path || !verb || strcmp(verb, "get") != 0) {
            *reason = "";
            return 0;
        }
        if (any_url(path, public_urls)) {
            *reason = "cueue cluster: everyone may get the health and version endpoints";
            return 1;
        }
        if (in_list(groups, "system:monitoring") && any_url(path, monitoring_urls)) {
            *reason = "cueue cluster: group system:monitoring may get /metrics";
            return 1;
        }
        *reason = "";
        return 0;
    }
    for (size_t i = 0; name && ra && i < a->n; i++)
        if (strcmp(a->u[i].name, name) == 0) {
            *reason = "cueue cluster: every user of the token file may use the whole API";
            return 1;
        }
    *reason = "";
    return 0;
}

static json_object *user_json(const user *u)
{
    json_object *o = json_object_new_object(), *g = json_object_new_array();
    json_object_object_add(o, "username", json_object_new_string(u->name));
    if (u->uid && *u->uid)
        json_object_object_add(o, "uid", json_object_new_string(u->uid));
    for (size_t i = 0; i < u->ngroups; i++)
        json_object_array_add(g, json_object_new_string(u->groups[i]));
    json_object_array_add(g, json_object_new_string("system:authenticated"));
    json_object_object_add(o, "groups", g);
    return o;
}

/* ---- discovery ---- */

static const struct {
    const char *group, *resource, *singular, *kind;
} review_apis[] = {
    { "authentication.k8s.io", "tokenreviews", "tokenreview", "TokenReview" },
    { "authorization.k8s.io", "subjectaccessreviews", "subjectaccessreview",
      "SubjectAccessReview" },
};

static json_object *api_group(const char *group)
{
    char gv[128];
    snprintf(gv, sizeof(gv), "%s/v1", group);
    json_object *g = json_object_new_object(), *vs = json_object_new_array();
    json_object *v = json_object_new_object();
    json_object_object_add(v, "groupVersion", json_object_new_string(gv));
    json_object_object_add(v, "version", json_object_new_string("v1"));
    json_object_object_add(g, "name", json_object_new_string(group));
    json_object_array_add(vs, json_object_get(v));
    json_object_object_add(g, "versions", vs);
    json_object_object_add(g, "preferredVersion", v);
    return g;
}

void cu_authn_add_groups(json_object *group_list)
{
    json_object *groups;
    if (!group_list || !json_object_object_get_ex(group_list, "groups", &groups) ||
        !json_object_is_type(groups, json_type_array))
        return;
    for (size_t i = 0; i < sizeof(review_apis) / sizeof(review_apis[0]); i++)
        json_object_array_add(groups, api_group(review_apis[i].group));
}

/* GET /apis/GROUP and /apis/GROUP/v1 of the two review groups: 200 with
 * the document in *out, or 0 for another path. */
static int discovery(const char *path, json_object **out)
{
    for (size_t i = 0; i < sizeof(review_apis) / sizeof(review_apis[0]); i++) {
        char base[128], gv[128];
        snprintf(base, sizeof(base), "/apis/%s", review_apis[i].group);
        snprintf(gv, sizeof(gv), "%s/v1", review_apis[i].group);
        if (strcmp(path, base) == 0) {
            *out = api_group(review_apis[i].group);
            json_object_object_add(*out, "kind", json_object_new_string("APIGroup"));
            json_object_object_add(*out, "apiVersion", json_object_new_string("v1"));
            return 200;
        }
        if (strncmp(path, base, strlen(base)) != 0 || strcmp(path + strlen(base), "/v1") != 0)
            continue;
        json_object *l = json_object_new_object(), *rs = json_object_new_array();
        json_object *r = json_object_new_object(), *verbs = json_object_new_array();
        json_object_object_add(l, "kind", json_object_new_string("APIResourceList"));
        json_object_object_add(l, "apiVersion", json_object_new_string("v1"));
        json_object_object_add(l, "groupVersion", json_object_new_string(gv));
        json_object_object_add(r, "name", json_object_new_string(review_apis[i].resource));
        json_object_object_add(r, "singularName", json_object_new_string(review_apis[i].singular));
        json_object_object_add(r, "namespaced", json_object_new_boolean(0));
        json_object_object_add(r, "kind", json_object_new_string(review_apis[i].kind));
        json_object_array_add(verbs, json_object_new_string("create"));
        json_object_object_add(r, "verbs", verbs);
        json_object_array_add(rs, r);
        json_object_object_add(l, "resources", rs);
        *out = l;
        return 200;
    }
    return 0;
}

int cu_authn_handle(cu_authn *a, const char *method, const char *path, const char *body, size_t len,
                    json_object **out)
{
    int tr = strcmp(path, TOKENREVIEWS) == 0, sar = strcmp(path, SARS) == 0;
    if (!tr && !sar)
        return strcmp(method, "GET") == 0 ? discovery(path, out) : 0;
    const char *kind = tr ? "TokenReview" : "SubjectAccessReview";
    if (strcmp(method, "POST") != 0) {
        *out = status_obj(405, "MethodNotAllowed",
                          "the server does not allow this method on the requested resource%s", "");
        return 405;
    }
    json_tokener *jt = json_tokener_new();
    json_object *req = jt ? json_tokener_parse_ex(jt, body ? body : "", (int)len) : NULL;
    int complete = jt && json_tokener_get_error(jt) == json_tokener_success;
    if (complete) { /* nothing but white space after the object */
        for (size_t i = json_tokener_get_parse_end(jt); i < len; i++)
            if (!isspace((unsigned char)body[i]))
                complete = 0;
    }
    if (jt)
        json_tokener_free(jt);
    json_object *spec = NULL;
    if (!req || !complete || !json_object_is_type(req, json_type_object) ||
        !json_object_object_get_ex(req, "spec", &spec) ||
        !json_object_is_type(spec, json_type_object)) {
        if (req)
            json_object_put(req);
        *out = status_obj(400, "BadRequest", "the body of a %s must be a JSON object with a spec",
                          kind);
        return 400;
    }
    json_object *st = json_object_new_object();
    if (tr) {
        const char *tok = cu_jstr(spec, "token");
        if (!tok || !*tok) {
            json_object_put(st);
            json_object_put(req);
            *out = status_obj(400, "BadRequest",
                              "token is required for TokenReview in "
                              "authentication%s",
                              "");
            return 400;
        }
        const user *u = NULL;
        for (size_t i = 0; i < a->n && !u; i++)
            if (strcmp(a->u[i].token, tok) == 0)
                u = &a->u[i];
        json_object_object_add(st, "authenticated", json_object_new_boolean(u != NULL));
        json_object_object_add(st, "user", u ? user_json(u) : json_object_new_object());
    } else {
        json_object *groups = NULL;
        const char *name = cu_jstr(spec, "user");
        json_object_object_get_ex(spec, "groups", &groups);
        int has_nra = json_object_object_get_ex(spec, "nonResourceAttributes", NULL);
        int has_ra = json_object_object_get_ex(spec, "resourceAttributes", NULL);
        const char *bad = NULL;
        if ((!name || !*name) && (!groups || !json_object_is_type(groups, json_type_array) ||
                                  !json_object_array_length(groups)))
            bad = "spec.user: Invalid value: \"\": at least one of user or group must be "
                  "specified";
        else if (has_nra == has_ra)
            bad = "spec.resourceAttributes: Invalid value: exactly one of "
                  "nonResourceAttributes or resourceAttributes must be specified";
        if (bad) {
            json_object_put(st);
            json_object_put(req);
            *out = status_obj(422, "Invalid",
                              "SubjectAccessReview.authorization.k8s.io \"\" is invalid: %s", bad);
            return 422;
        }
        const char *reason = "";
        int ok = decide(a, spec, &reason);
        json_object_object_add(st, "allowed", json_object_new_boolean(ok));
        if (*reason)
            json_object_object_add(st, "reason", json_object_new_string(reason));
    }
    json_object_object_add(req, "status", st);
    if (!json_object_object_get_ex(req, "metadata", NULL))
        json_object_object_add(req, "metadata", json_object_new_object());
    json_object_object_add(req, "kind", json_object_new_string(kind));
    json_object_object_add(
        req, "apiVersion",
        json_object_new_string(tr ? "authentication.k8s.io/v1" : "authorization.k8s.io/v1"));
    *out = req;
    return 201;
}

json_object *cu_authn_user(cu_authn *a, const char *authorization)
{
    if (!a || !authorization || strncasecmp(authorization, "Bearer ", 7) != 0)
        return NULL;
    const char *tok = authorization + 7;
    while (*tok == ' ')
        tok++;
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->u[i].token, tok) == 0)
            return user_json(&a->u[i]);
    return NULL;
}
