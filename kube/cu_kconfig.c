/*
 * cu_kconfig.c - kubeconfig and in-cluster configuration, and the
 * credential cache behind cu_kconfig_token.
 *
 * Loading follows kubectl: an explicit path is the only file read; else
 * $KUBECONFIG is a colon-separated list of files, missing ones skipped,
 * merged so that the first file to define a cluster, user or context name
 * (or current-context) wins; else ~/.kube/config; else, when
 * KUBERNETES_SERVICE_HOST is set, the in-cluster configuration. Relative
 * paths inside a file (certificate-authority, client-certificate,
 * client-key, tokenFile, an exec command containing a '/') are resolved
 * against the directory of the file that defined the entry.
 *
 * Invariants: every string in cu_kconfig is malloc-owned by it (freed by
 * cu_kconfig_free); cred_ is never NULL after a successful load; the token
 * returned by cu_kconfig_token is cred_->cur (or c->token) and stays valid
 * until the next call.
 */
#include "cu_kconfig.h"
#include "cu_base64.h"
#include "cu_clock.h"
#include "cu_doc.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define KC_FILE_MAX ((size_t)1 << 20)     /* certs, keys, tokens */
#define KC_EXEC_OUT_MAX ((size_t)1 << 20) /* plugin stdout */
#define KC_EXEC_ERR_MAX ((size_t)4096)    /* plugin stderr kept for messages */
#define KC_EXEC_TIMEOUT_MS 60000
#define KC_DEFAULT_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"
/* For tests only: where the in-cluster configuration finds token, ca.crt
 * and namespace instead of KC_DEFAULT_SA_DIR, so that a test can run the
 * controller as a pod would, against a real API server, without root.
 * Pods never set it. */
#define KC_SA_DIR_ENV "CUEUE_TEST_SERVICEACCOUNT_DIR"

struct cu_kcred {
    char *cur; /* token handed out last (token file / exec) */
    /* token file */
    int file_seen;
    dev_t dev;
    ino_t ino;
    int64_t mtime_ns;
    off_t size;
    /* exec plugin */
    int exec_valid;
    int64_t exec_expiry_ms; /* INT64_MAX: no expiry */
    unsigned exec_runs;     /* for messages and tests */
};

/* ---------------- small helpers ---------------- */

static char *xstrdup(const char *s) { return s ? strdup(s) : NULL; }

/* Reads a whole file (at most max bytes) into a new NUL-terminated buffer;
 * caller frees. On failure returns NULL with errno-ish text in why. */
static char *read_all(const char *path, size_t max, size_t *len_out, const char **why)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        *why = strerror(errno);
        return NULL;
    }
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    if (!buf) {
        close(fd);
        *why = "out of memory";
        return NULL;
    }
    for (;;) {
        if (len + 1 >= cap) {
            if (cap > max) {
                free(buf);
                close(fd);
                *why = "file too large";
                return NULL;
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                close(fd);
                *why = "out of memory";
                return NULL;
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t n = read(fd, buf + len, cap - len - 1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            *why = strerror(errno);
            free(buf);
            close(fd);
            return NULL;
        }
        if (n == 0)
            break;
        len += (size_t)n;
        if (len > max) {
            free(buf);
            close(fd);
            *why = "file too large";
            return NULL;
        }
    }
    close(fd);
    buf[len] = '\0';
    if (len_out)
        *len_out = len;
    return buf;
}

char *cu_read_file(const char *path, size_t max, size_t *len_out, const char **why)
{
    return read_all(path, max, len_out, why);
}

/* Strips leading and trailing whitespace in place; returns s. */
static char *trim(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
    size_t i = 0;
    while (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')
        i++;
    if (i)
        memmove(s, s + i, n - i + 1);
    return s;
}

/* Returns a new string: path itself when absolute (or dir is NULL), else
 * dir/path. Caller frees. */
static char *resolve_path(const char *dir, const char *path)
{
    if (path[0] == '/' || !dir || !dir[0])
        return strdup(path);
    size_t n = strlen(dir) + strlen(path) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, path);
    return p;
}

/* Returns the directory part of path as a new string ("." when none). */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    size_t n = (size_t)(slash - path);
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, path, n);
        d[n] = '\0';
    }
    return d;
}

static void kexec_free(cu_kexec *e)
{
    if (!e)
        return;
    free(e->command);
    for (size_t i = 0; i < e->nargs; i++)
        free(e->args[i]);
    free(e->args);
    for (size_t i = 0; i < e->nenv; i++)
        free(e->env[i]);
    free(e->env);
    free(e->api_version);
    free(e);
}

void cu_kconfig_free(cu_kconfig *c)
{
    if (!c)
        return;
    free(c->server);
    free(c->context);
    free(c->cluster);
    free(c->user);
    free(c->namespace_);
    free(c->ca_pem);
    free(c->cert_pem);
    free(c->key_pem);
    free(c->tls_server_name);
    free(c->token);
    free(c->token_file);
    kexec_free(c->exec);
    if (c->cred_)
        free(c->cred_->cur);
    free(c->cred_);
    free(c);
}

static cu_kconfig *kconfig_new(void)
{
    cu_kconfig *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->cred_ = calloc(1, sizeof(*c->cred_));
    if (!c->cred_) {
        free(c);
        return NULL;
    }
    return c;
}

/* ---------------- kubeconfig files ---------------- */

typedef struct kc_file {
    const char *path;    /* arena-owned */
    char *dir;           /* arena-owned */
    const cu_node *root; /* NULL: empty file */
} kc_file;

typedef struct kc_set {
    cu_arena arena;
    kc_file *files;
    size_t n;
    const char *what; /* names the files in messages */
} kc_set;

/* String field: returns CU_OK with *out NULL when absent or null, CU_EINVAL
 * (with a message) when present but not a scalar. */
static cu_err get_str(const cu_node *map, const char *key, const char **out, const char *file,
                      const char *where, cu_diag *d)
{
    *out = NULL;
    const cu_node *n = cu_node_get(map, key);
    if (!n || cu_node_is_null(n))
        return CU_OK;
    if (n->type != CU_NODE_SCALAR) {
        cu_diag_error(d, "%s: %s.%s: must be a string", file, where, key);
        return CU_EINVAL;
    }
    *out = n->str;
    return CU_OK;
}

/* Checks the shape of one file: a map whose clusters/users/contexts are
 * sequences of maps with a string name. */
static cu_err check_shape(const kc_file *f, cu_diag *d)
{
    if (!f->root)
        return CU_OK;
    if (f->root->type != CU_NODE_MAP) {
        cu_diag_error(d, "%s: not a kubeconfig: the document is not a mapping", f->path);
        return CU_EINVAL;
    }
    static const char *const lists[] = { "clusters", "users", "contexts" };
    static const char *const inner[] = { "cluster", "user", "context" };
    for (size_t l = 0; l < 3; l++) {
        const cu_node *seq = cu_node_get(f->root, lists[l]);
        if (!seq || cu_node_is_null(seq))
            continue;
        if (seq->type != CU_NODE_SEQ) {
            cu_diag_error(d, "%s: %s: must be a list (line %d)", f->path, lists[l], seq->line);
            return CU_EINVAL;
        }
        for (size_t i = 0; i < seq->n; i++) {
            const cu_node *it = seq->vals[i];
            const char *name = NULL;
            if (it->type != CU_NODE_MAP) {
                cu_diag_error(d, "%s: %s[%zu]: must be a mapping (line %d)", f->path, lists[l], i,
                              it->line);
                return CU_EINVAL;
            }
            char where[64];
            snprintf(where, sizeof where, "%s[%zu]", lists[l], i);
            if (get_str(it, "name", &name, f->path, where, d))
                return CU_EINVAL;
            if (!name || !name[0]) {
                cu_diag_error(d, "%s: %s: missing name (line %d)", f->path, where, it->line);
                return CU_EINVAL;
            }
            const cu_node *body = cu_node_get(it, inner[l]);
            if (body && !cu_node_is_null(body) && body->type != CU_NODE_MAP) {
                cu_diag_error(d, "%s: %s \"%s\": %s must be a mapping (line %d)", f->path, inner[l],
                              name, inner[l], body->line);
                return CU_EINVAL;
            }
        }
    }
    const cu_node *cc = cu_node_get(f->root, "current-context");
    if (cc && !cu_node_is_null(cc) && cc->type != CU_NODE_SCALAR) {
        cu_diag_error(d, "%s: current-context: must be a string", f->path);
        return CU_EINVAL;
    }
    return CU_OK;
}

/* Finds the first entry named name in list across files (first file wins).
 * Returns the inner map (may be NULL if the entry has none) via *body and
 * the defining file via *file; returns 0 when not found. */
static int find_named(const kc_set *s, const char *list, const char *inner, const char *name,
                      const cu_node **body, const kc_file **file)
{
    for (size_t f = 0; f < s->n; f++) {
        const cu_node *seq = cu_node_get(s->files[f].root, list);
        if (!seq || seq->type != CU_NODE_SEQ)
            continue;
        for (size_t i = 0; i < seq->n; i++) {
            const char *nm = cu_node_scalar(cu_node_get(seq->vals[i], "name"));
            if (nm && strcmp(nm, name) == 0) {
                const cu_node *b = cu_node_get(seq->vals[i], inner);
                *body = (b && b->type == CU_NODE_MAP) ? b : NULL;
                *file = &s->files[f];
                return 1;
            }
        }
    }
    return 0;
}

/* Loads PEM-ish material from "<key>-data" (base64) or "<key>" (file).
 * Both set is an error, as in kubectl. *out is a new string or NULL. */
static cu_err load_material(const cu_node *body, const char *key, const kc_file *f,
                            const char *what, char **out, cu_diag *d)
{
    *out = NULL;
    char dkey[64];
    snprintf(dkey, sizeof dkey, "%s-data", key);
    const char *file = NULL, *data = NULL;
    if (get_str(body, key, &file, f->path, what, d) || get_str(body, dkey, &data, f->path, what, d))
        return CU_EINVAL;
    if (file && file[0] && data && data[0]) {
        cu_diag_error(d, "%s: %s: %s and %s are both set; use one", f->path, what, key, dkey);
        return CU_EINVAL;
    }
    if (data && data[0]) {
        *out = cu_base64_decode(data, NULL);
        if (!*out) {
            cu_diag_error(d, "%s: %s: %s is not valid base64", f->path, what, dkey);
            return CU_EINVAL;
        }
        return CU_OK;
    }
    if (file && file[0]) {
        char *p = resolve_path(f->dir, file);
        const char *why = "out of memory";
        if (p)
            *out = read_all(p, KC_FILE_MAX, NULL, &why);
        if (!*out) {
            cu_diag_error(d, "%s: %s: %s \"%s\": cannot read: %s", f->path, what, key, p ? p : file,
                          why);
            free(p);
            return CU_EIO;
        }
        free(p);
    }
    return CU_OK;
}

/* Looks an executable up like execvp would (no '/' in name). New string. */
static char *path_lookup(const char *name)
{
    const char *path = getenv("PATH");
    if (!path || !path[0])
        path = "/usr/local/bin:/usr/bin:/bin";
    size_t nl = strlen(name);
    while (*path) {
        const char *end = strchr(path, ':');
        size_t dl = end ? (size_t)(end - path) : strlen(path);
        char *cand = malloc(dl + nl + 3);
        if (!cand)
            return NULL;
        if (dl == 0)
            snprintf(cand, nl + 3, "./%s", name);
        else
            snprintf(cand, dl + nl + 2, "%.*s/%s", (int)dl, path, name);
        struct stat st;
        if (access(cand, X_OK) == 0 && stat(cand, &st) == 0 && S_ISREG(st.st_mode))
            return cand;
        free(cand);
        if (!end)
            break;
        path = end + 1;
    }
    return NULL;
}

static cu_err load_exec(const cu_node *ex, const kc_file *f, const char *where, cu_kexec **out,
                        cu_diag *d)
{
    *out = NULL;
    if (ex->type != CU_NODE_MAP) {
        cu_diag_error(d, "%s: %s.exec: must be a mapping", f->path, where);
        return CU_EINVAL;
    }
    char w[512];
    snprintf(w, sizeof w, "%s.exec", where);
    const char *cmd = NULL, *api = NULL, *mode = NULL;
    if (get_str(ex, "command", &cmd, f->path, w, d) ||
        get_str(ex, "apiVersion", &api, f->path, w, d) ||
        get_str(ex, "interactiveMode", &mode, f->path, w, d))
        return CU_EINVAL;
    if (!cmd || !cmd[0]) {
        cu_diag_error(d, "%s: %s.command: missing", f->path, w);
        return CU_EINVAL;
    }
    if (!api || (strcmp(api, "client.authentication.k8s.io/v1") != 0 &&
                 strcmp(api, "client.authentication.k8s.io/v1beta1") != 0)) {
        cu_diag_error(d,
                      "%s: %s.apiVersion: %s%s%s is not supported (want "
                      "client.authentication.k8s.io/v1 or v1beta1)",
                      f->path, w, api ? "\"" : "", api ? api : "missing", api ? "\"" : "");
        return CU_EINVAL;
    }
    if (mode && strcmp(mode, "Never") != 0 && strcmp(mode, "IfAvailable") != 0) {
        cu_diag_error(d,
                      "%s: %s.interactiveMode: \"%s\" needs a terminal; a controller can only "
                      "run plugins with Never or IfAvailable",
                      f->path, w, mode);
        return CU_EINVAL;
    }
    cu_kexec *e = calloc(1, sizeof(*e));
    if (!e)
        return CU_ENOMEM;
    e->interactive_never = 1; /* we never give the plugin a terminal */
    e->api_version = strdup(api);
    if (strchr(cmd, '/'))
        e->command = resolve_path(f->dir, cmd);
    else {
        e->command = path_lookup(cmd);
        if (!e->command) {
            cu_diag_error(d, "%s: %s.command: \"%s\" not found in PATH", f->path, w, cmd);
            kexec_free(e);
            return CU_EINVAL;
        }
    }
    const cu_node *args = cu_node_get(ex, "args");
    if (args && !cu_node_is_null(args)) {
        if (args->type != CU_NODE_SEQ) {
            cu_diag_error(d, "%s: %s.args: must be a list of strings", f->path, w);
            kexec_free(e);
            return CU_EINVAL;
        }
        e->args = calloc(args->n + 1, sizeof(char *));
        for (size_t i = 0; e->args && i < args->n; i++) {
            const char *a = cu_node_scalar(args->vals[i]);
            if (!a && args->vals[i]->type == CU_NODE_SCALAR)
                a = args->vals[i]->str;
            if (!a) {
                cu_diag_error(d, "%s: %s.args[%zu]: must be a string", f->path, w, i);
                kexec_free(e);
                return CU_EINVAL;
            }
            e->args[e->nargs++] = strdup(a);
        }
    }
    const cu_node *env = cu_node_get(ex, "env");
    if (env && !cu_node_is_null(env)) {
        if (env->type != CU_NODE_SEQ) {
            cu_diag_error(d, "%s: %s.env: must be a list of {name, value}", f->path, w);
            kexec_free(e);
            return CU_EINVAL;
        }
        e->env = calloc(env->n + 1, sizeof(char *));
        for (size_t i = 0; e->env && i < env->n; i++) {
            const char *nm = cu_node_scalar(cu_node_get(env->vals[i], "name"));
            const cu_node *vn = cu_node_get(env->vals[i], "value");
            const char *v = vn && vn->type == CU_NODE_SCALAR ? vn->str : NULL;
            if (!nm || !nm[0] || strchr(nm, '=') || !v) {
                cu_diag_error(d, "%s: %s.env[%zu]: needs a name (without '=') and a string value",
                              f->path, w, i);
                kexec_free(e);
                return CU_EINVAL;
            }
            size_t n = strlen(nm) + strlen(v) + 2;
            char *kv = malloc(n);
            if (kv)
                snprintf(kv, n, "%s=%s", nm, v);
            e->env[e->nenv++] = kv;
        }
    }
    *out = e;
    return CU_OK;
}

/* Builds the config from the merged set. */
static cu_kconfig *build(kc_set *s, const char *context, cu_diag *d)
{
    const char *ctxname = context;
    const kc_file *ccfile = NULL;
    if (!ctxname || !ctxname[0]) {
        for (size_t f = 0; f < s->n && !ctxname; f++) {
            const char *cc = cu_node_scalar(cu_node_get(s->files[f].root, "current-context"));
            if (cc && cc[0]) {
                ctxname = cc;
                ccfile = &s->files[f];
            }
        }
        if (!ctxname) {
            cu_diag_error(d, "%s: no current-context is set and no context was given", s->what);
            return NULL;
        }
    }
    const cu_node *ctx = NULL, *cl = NULL, *us = NULL;
    const kc_file *ctxf = NULL, *clf = NULL, *usf = NULL;
    if (!find_named(s, "contexts", "context", ctxname, &ctx, &ctxf)) {
        cu_diag_error(d, "%s: context \"%s\" not found%s", ccfile ? ccfile->path : s->what, ctxname,
                      ccfile ? " (named by current-context)" : "");
        return NULL;
    }
    const char *clname = NULL, *usname = NULL, *ns = NULL;
    char where[300];
    snprintf(where, sizeof where, "context \"%s\"", ctxname);
    if (get_str(ctx, "cluster", &clname, ctxf->path, where, d) ||
        get_str(ctx, "user", &usname, ctxf->path, where, d) ||
        get_str(ctx, "namespace", &ns, ctxf->path, where, d))
        return NULL;
    if (!clname || !clname[0]) {
        cu_diag_error(d, "%s: context \"%s\": no cluster", ctxf->path, ctxname);
        return NULL;
    }
    if (!find_named(s, "clusters", "cluster", clname, &cl, &clf)) {
        cu_diag_error(d, "%s: context \"%s\": cluster \"%s\" not found", ctxf->path, ctxname,
                      clname);
        return NULL;
    }
    if (usname && usname[0] && !find_named(s, "users", "user", usname, &us, &usf)) {
        cu_diag_error(d, "%s: context \"%s\": user \"%s\" not found", ctxf->path, ctxname, usname);
        return NULL;
    }
    cu_kconfig *c = kconfig_new();
    if (!c)
        return NULL;
    c->context = strdup(ctxname);
    c->cluster = strdup(clname);
    c->user = xstrdup(usname);
    c->namespace_ = strdup(ns && ns[0] ? ns : "default");

    /* cluster */
    snprintf(where, sizeof where, "cluster \"%s\"", clname);
    const char *server = NULL, *sni = NULL;
    if (get_str(cl, "server", &server, clf->path, where, d) ||
        get_str(cl, "tls-server-name", &sni, clf->path, where, d))
        goto fail;
    if (!server || !server[0]) {
        cu_diag_error(d, "%s: %s: server is missing", clf->path, where);
        goto fail;
    }
    if (strncmp(server, "https://", 8) != 0 && strncmp(server, "http://", 7) != 0) {
        cu_diag_error(d, "%s: %s: server \"%s\" must start with https:// or http://", clf->path,
                      where, server);
        goto fail;
    }
    c->server = strdup(server);
    /* drop a trailing slash so paths can be appended */
    size_t sl = strlen(c->server);
    while (sl > 8 && c->server[sl - 1] == '/')
        c->server[--sl] = '\0';
    c->tls_server_name = xstrdup(sni && sni[0] ? sni : NULL);
    const cu_node *ins = cu_node_get(cl, "insecure-skip-tls-verify");
    if (ins && !cu_node_is_null(ins) && cu_node_bool(ins, &c->insecure)) {
        cu_diag_error(d, "%s: %s: insecure-skip-tls-verify must be true or false", clf->path,
                      where);
        goto fail;
    }
    if (load_material(cl, "certificate-authority", clf, where, &c->ca_pem, d))
        goto fail;
    if (c->insecure && c->ca_pem) {
        /* kubectl refuses this combination */
        cu_diag_error(d,
                      "%s: %s: insecure-skip-tls-verify and a certificate authority are both "
                      "set; use one",
                      clf->path, where);
        goto fail;
    }

    /* user */
    if (us) {
        snprintf(where, sizeof where, "user \"%s\"", usname);
        if (load_material(us, "client-certificate", usf, where, &c->cert_pem, d) ||
            load_material(us, "client-key", usf, where, &c->key_pem, d))
            goto fail;
        if (!!c->cert_pem != !!c->key_pem) {
            cu_diag_error(d, "%s: %s: %s is set without %s", usf->path, where,
                          c->cert_pem ? "client-certificate" : "client-key",
                          c->cert_pem ? "client-key" : "client-certificate");
            goto fail;
        }
        const char *tok = NULL, *tokfile = NULL;
        if (get_str(us, "token", &tok, usf->path, where, d) ||
            get_str(us, "tokenFile", &tokfile, usf->path, where, d))
            goto fail;
        c->token = xstrdup(tok && tok[0] ? tok : NULL);
        if (tokfile && tokfile[0])
            c->token_file = resolve_path(usf->dir, tokfile);
        const cu_node *ex = cu_node_get(us, "exec");
        if (ex && !cu_node_is_null(ex) && load_exec(ex, usf, where, &c->exec, d))
            goto fail;
        if (cu_node_get(us, "auth-provider")) {
            cu_diag_error(d,
                          "%s: %s: auth-provider plugins are not supported; use an exec "
                          "credential plugin",
                          usf->path, where);
            goto fail;
        }
        if (cu_node_get(us, "username") || cu_node_get(us, "password"))
            cu_diag_warn(d,
                         "%s: %s: basic authentication (username/password) is not supported "
                         "and is ignored",
                         usf->path, where);
    }
    return c;
fail:
    cu_kconfig_free(c);
    return NULL;
}

static cu_err add_file(kc_set *s, const char *path, cu_diag *d)
{
    cu_doc *docs = NULL;
    size_t nd = 0;
    cu_err err = cu_doc_parse_file(path, &s->arena, &docs, &nd, d);
    if (err)
        return err;
    kc_file *nf = realloc(s->files, (s->n + 1) * sizeof(*nf));
    if (!nf)
        return CU_ENOMEM;
    s->files = nf;
    kc_file *f = &s->files[s->n];
    f->path = cu_arena_strdup(&s->arena, path);
    char *dir = dir_of(path);
    f->dir = cu_arena_strdup(&s->arena, dir ? dir : ".");
    free(dir);
    f->root = nd ? docs[0].root : NULL;
    if (nd > 1) {
        cu_diag_error(d, "%s: a kubeconfig holds one YAML document, found %zu", path, nd);
        return CU_EINVAL;
    }
    s->n++;
    return check_shape(f, d);
}

static int file_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

cu_kconfig *cu_kconfig_load(const char *path, const char *context, cu_diag *d)
{
    kc_set s;
    memset(&s, 0, sizeof s);
    cu_arena_init(&s.arena, 0);
    cu_kconfig *c = NULL;
    char *home_cfg = NULL, *list = NULL;
    if (path && path[0]) {
        s.what = path;
        if (add_file(&s, path, d))
            goto out;
    } else {
        const char *kc = getenv("KUBECONFIG");
        if (kc && kc[0]) {
            s.what = cu_arena_printf(&s.arena, "KUBECONFIG=%s", kc);
            list = strdup(kc);
            char *save = NULL;
            for (char *p = list ? strtok_r(list, ":", &save) : NULL; p;
                 p = strtok_r(NULL, ":", &save)) {
                if (!p[0] || !file_exists(p))
                    continue; /* kubectl skips missing files in the list */
                int dup = 0;
                for (size_t i = 0; i < s.n; i++)
                    dup |= strcmp(s.files[i].path, p) == 0;
                if (!dup && add_file(&s, p, d))
                    goto out;
            }
        } else {
            const char *home = getenv("HOME");
            if (home && home[0]) {
                size_t n = strlen(home) + 16;
                home_cfg = malloc(n);
                if (home_cfg)
                    snprintf(home_cfg, n, "%s/.kube/config", home);
            }
            s.what = home_cfg ? home_cfg : "~/.kube/config";
            if (home_cfg && file_exists(home_cfg) && add_file(&s, home_cfg, d))
                goto out;
        }
        if (s.n == 0) {
            const char *host = getenv("KUBERNETES_SERVICE_HOST");
            if (host && host[0]) {
                c = cu_kconfig_in_cluster(NULL, d);
                goto out;
            }
            cu_diag_error(d,
                          "%s: no kubeconfig file found, and not running in a cluster "
                          "(KUBERNETES_SERVICE_HOST is not set)",
                          s.what);
            goto out;
        }
    }
    c = build(&s, context, d);
out:
    free(list);
    free(home_cfg);
    free(s.files);
    cu_arena_free(&s.arena);
    return c;
}

cu_kconfig *cu_kconfig_in_cluster(const char *token_dir, cu_diag *d)
{
    const char *env_dir = getenv(KC_SA_DIR_ENV);
    const char *dir = token_dir && token_dir[0] ? token_dir
                      : env_dir && env_dir[0]   ? env_dir
                                                : KC_DEFAULT_SA_DIR;
    const char *host = getenv("KUBERNETES_SERVICE_HOST");
    const char *port = getenv("KUBERNETES_SERVICE_PORT");
    if (!host || !host[0] || !port || !port[0]) {
        cu_diag_error(d, "in-cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must "
                         "both be set");
        return NULL;
    }
    for (const char *p = port; *p; p++)
        if (*p < '0' || *p > '9') {
            cu_diag_error(d, "in-cluster: KUBERNETES_SERVICE_PORT \"%s\" is not a port number",
                          port);
            return NULL;
        }
    cu_kconfig *c = kconfig_new();
    if (!c)
        return NULL;
    c->in_cluster = 1;
    size_t n = strlen(host) + strlen(port) + 16;
    c->server = malloc(n);
    if (c->server) {
        if (strchr(host, ':'))
            snprintf(c->server, n, "https://[%s]:%s", host, port);
        else
            snprintf(c->server, n, "https://%s:%s", host, port);
    }
    c->context = strdup("in-cluster");
    c->cluster = strdup("in-cluster");
    c->user = strdup("service-account");
    n = strlen(dir) + 16;
    c->token_file = malloc(n);
    char *ca = malloc(n), *nsf = malloc(n);
    if (!c->server || !c->token_file || !ca || !nsf || !c->context || !c->cluster || !c->user) {
        free(ca);
        free(nsf);
        cu_kconfig_free(c);
        return NULL;
    }
    snprintf(c->token_file, n, "%s/token", dir);
    snprintf(ca, n, "%s/ca.crt", dir);
    snprintf(nsf, n, "%s/namespace", dir);
    const char *why = NULL;
    c->ca_pem = read_all(ca, KC_FILE_MAX, NULL, &why);
    if (!c->ca_pem) {
        cu_diag_error(d, "in-cluster: %s: cannot read the CA: %s", ca, why);
        goto fail;
    }
    if (!file_exists(c->token_file)) {
        cu_diag_error(d, "in-cluster: %s: cannot read the service account token: %s", c->token_file,
                      strerror(errno));
        goto fail;
    }
    char *ns = read_all(nsf, 4096, NULL, &why);
    if (ns && trim(ns)[0])
        c->namespace_ = ns;
    else {
        free(ns);
        c->namespace_ = strdup("default");
    }
    free(ca);
    free(nsf);
    return c;
fail:
    free(ca);
    free(nsf);
    cu_kconfig_free(c);
    return NULL;
}

/* ---------------- credentials ---------------- */

/* Runs the plugin; on success fills *out (new string, caller frees). */
static cu_err exec_run(const cu_kconfig *c, char **out, cu_diag *d)
{
    const cu_kexec *e = c->exec;
    *out = NULL;
    /* everything the child needs is built before fork: no malloc after it */
    size_t nenv = 0;
    while (environ && environ[nenv])
        nenv++;
    char **envp = calloc(nenv + e->nenv + 2, sizeof(char *));
    char **argv = calloc(e->nargs + 2, sizeof(char *));
    char info[256];
    snprintf(info, sizeof info,
             "KUBERNETES_EXEC_INFO={\"apiVersion\":\"%s\",\"kind\":\"ExecCredential\","
             "\"spec\":{\"interactive\":false}}",
             e->api_version);
    if (!envp || !argv) {
        free(envp);
        free(argv);
        return CU_ENOMEM;
    }
    size_t k = 0;
    for (size_t i = 0; i < nenv; i++) {
        const char *kv = environ[i];
        if (strncmp(kv, "KUBERNETES_EXEC_INFO=", 21) == 0)
            continue;
        int overridden = 0;
        for (size_t j = 0; j < e->nenv && !overridden; j++) {
            size_t nl = (size_t)(strchr(e->env[j], '=') - e->env[j]);
            overridden = strncmp(kv, e->env[j], nl + 1) == 0;
        }
        if (!overridden)
            envp[k++] = (char *)kv;
    }
    for (size_t j = 0; j < e->nenv; j++)
        envp[k++] = e->env[j];
    envp[k++] = info;
    argv[0] = e->command;
    for (size_t i = 0; i < e->nargs; i++)
        argv[i + 1] = e->args[i];

    int po[2] = { -1, -1 }, pe[2] = { -1, -1 };
    if (pipe(po) || pipe(pe)) {
        cu_diag_error(d, "user \"%s\": exec plugin \"%s\": pipe: %s", c->user ? c->user : "",
                      e->command, strerror(errno));
        goto fail_early;
    }
    pid_t pid = fork();
    if (pid < 0) {
        cu_diag_error(d, "user \"%s\": exec plugin \"%s\": fork: %s", c->user ? c->user : "",
                      e->command, strerror(errno));
        goto fail_early;
    }
    if (pid == 0) {
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0)
            dup2(devnull, 0);
        dup2(po[1], 1);
        dup2(pe[1], 2);
        close(po[0]);
        close(pe[0]);
        execve(e->command, argv, envp);
        static const char msg[] = "exec failed\n";
        ssize_t w = write(2, msg, sizeof msg - 1);
        (void)w;
        _exit(127);
    }
    close(po[1]);
    close(pe[1]);
    po[1] = pe[1] = -1;
    cu_buf ob, eb;
    cu_buf_init(&ob, KC_EXEC_OUT_MAX);
    cu_buf_init(&eb, 0);
    int64_t deadline = cu_clock_mono_ms() + KC_EXEC_TIMEOUT_MS;
    int open_fds = 2, timed_out = 0, too_big = 0;
    struct pollfd pf[2] = { { po[0], POLLIN, 0 }, { pe[0], POLLIN, 0 } };
    while (open_fds > 0) {
        int64_t left = deadline - cu_clock_mono_ms();
        if (left <= 0) {
            timed_out = 1;
            break;
        }
        int r = poll(pf, 2, (int)left);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            break;
        for (int i = 0; i < 2; i++) {
            if (pf[i].fd < 0 || !pf[i].revents)
                continue;
            char tmp[4096];
            ssize_t n = read(pf[i].fd, tmp, sizeof tmp);
            if (n <= 0) {
                if (n < 0 && errno == EINTR)
                    continue;
                pf[i].fd = -1;
                open_fds--;
                continue;
            }
            if (i == 0) {
                if (cu_buf_append(&ob, tmp, (size_t)n))
                    too_big = 1;
            } else if (eb.len < KC_EXEC_ERR_MAX) {
                size_t room = KC_EXEC_ERR_MAX - eb.len;
                cu_buf_append(&eb, tmp, (size_t)n < room ? (size_t)n : room);
            }
        }
        if (too_big)
            break;
    }
    if (timed_out || too_big)
        kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    close(po[0]);
    close(pe[0]);
    free(envp);
    free(argv);
    char *emsg = eb.data ? trim(eb.data) : NULL;
    cu_err err = CU_OK;
    if (timed_out) {
        cu_diag_error(d, "user \"%s\": exec plugin \"%s\" did not finish within %d s",
                      c->user ? c->user : "", e->command, KC_EXEC_TIMEOUT_MS / 1000);
        err = CU_EIO;
    } else if (too_big) {
        cu_diag_error(d, "user \"%s\": exec plugin \"%s\" wrote more than %zu bytes",
                      c->user ? c->user : "", e->command, KC_EXEC_OUT_MAX);
        err = CU_ENOMEM;
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        cu_diag_error(d, "user \"%s\": exec plugin \"%s\" failed (%s %d)%s%s",
                      c->user ? c->user : "", e->command,
                      WIFEXITED(status) ? "exit status" : "signal",
                      WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
                      emsg && emsg[0] ? ": " : "", emsg ? emsg : "");
        err = CU_EIO;
    }
    if (!err) {
        *out = ob.data ? ob.data : strdup("");
        ob.data = NULL;
    }
    cu_buf_free(&ob);
    cu_buf_free(&eb);
    return err;
fail_early:
    for (int i = 0; i < 2; i++) {
        if (po[i] >= 0)
            close(po[i]);
        if (pe[i] >= 0)
            close(pe[i]);
    }
    free(envp);
    free(argv);
    return CU_EIO;
}

/* Runs the plugin and caches its credential. */
static cu_err exec_refresh(cu_kconfig *c, cu_diag *d)
{
    struct cu_kcred *k = c->cred_;
    const char *who = c->user ? c->user : "";
    char *out = NULL;
    cu_err err = exec_run(c, &out, d);
    if (err)
        return err;
    k->exec_runs++;
    cu_arena a;
    cu_arena_init(&a, 0);
    cu_doc *docs = NULL;
    size_t nd = 0;
    char fname[300];
    snprintf(fname, sizeof fname, "exec plugin \"%s\" output", c->exec->command);
    cu_diag pd;
    cu_diag_init(&pd);
    err = cu_doc_parse(fname, out, strlen(out), &a, &docs, &nd, &pd);
    free(out);
    if (err) {
        cu_diag_error(d, "user \"%s\": %s is not an ExecCredential JSON document: %s", who, fname,
                      pd.n ? pd.msgs[0] : cu_strerror(err));
        cu_diag_free(&pd);
        goto done;
    }
    cu_diag_free(&pd);
    const cu_node *root = nd ? docs[0].root : NULL;
    const char *kind = cu_node_scalar(cu_node_get(root, "kind"));
    const char *api = cu_node_scalar(cu_node_get(root, "apiVersion"));
    const cu_node *st = cu_node_get(root, "status");
    err = CU_EINVAL;
    if (!root || root->type != CU_NODE_MAP || !kind || strcmp(kind, "ExecCredential") != 0) {
        cu_diag_error(d, "user \"%s\": %s: not an ExecCredential", who, fname);
        goto done;
    }
    if (!api || strcmp(api, c->exec->api_version) != 0) {
        cu_diag_error(d, "user \"%s\": %s: apiVersion \"%s\" does not match the configured \"%s\"",
                      who, fname, api ? api : "", c->exec->api_version);
        goto done;
    }
    if (!st || st->type != CU_NODE_MAP) {
        cu_diag_error(d, "user \"%s\": %s: status is missing", who, fname);
        goto done;
    }
    const char *tok = cu_node_scalar(cu_node_get(st, "token"));
    const char *cert = cu_node_scalar(cu_node_get(st, "clientCertificateData"));
    const char *key = cu_node_scalar(cu_node_get(st, "clientKeyData"));
    const char *exp = cu_node_scalar(cu_node_get(st, "expirationTimestamp"));
    if (!!cert != !!key) {
        cu_diag_error(d, "user \"%s\": %s: status.%s is set without status.%s", who, fname,
                      cert ? "clientCertificateData" : "clientKeyData",
                      cert ? "clientKeyData" : "clientCertificateData");
        goto done;
    }
    if (!(tok && tok[0]) && !cert) {
        cu_diag_error(d, "user \"%s\": %s: status has neither token nor clientCertificateData", who,
                      fname);
        goto done;
    }
    int64_t expiry = INT64_MAX;
    if (exp && cu_time_parse(exp, &expiry)) {
        cu_diag_error(d,
                      "user \"%s\": %s: status.expirationTimestamp \"%s\" is not an RFC 3339 "
                      "time",
                      who, fname, exp);
        goto done;
    }
    free(k->cur);
    k->cur = tok && tok[0] ? strdup(tok) : NULL;
    if (cert) {
        free(c->cert_pem);
        free(c->key_pem);
        c->cert_pem = strdup(cert);
        c->key_pem = strdup(key);
    }
    k->exec_valid = 1;
    k->exec_expiry_ms = expiry;
    err = CU_OK;
done:
    cu_arena_free(&a);
    return err;
}

const char *cu_kconfig_token(cu_kconfig *c, int64_t now_ms, cu_diag *d)
{
    struct cu_kcred *k = c->cred_;
    if (c->exec) {
        if (k->exec_valid && now_ms < k->exec_expiry_ms)
            return k->cur;
        k->exec_valid = 0;
        if (exec_refresh(c, d))
            return NULL;
        return k->cur;
    }
    if (c->token_file) {
        struct stat st;
        if (stat(c->token_file, &st) != 0) {
            if (k->cur) {
                cu_diag_warn(d, "user \"%s\": token file %s: %s; using the last token read",
                             c->user ? c->user : "", c->token_file, strerror(errno));
                return k->cur;
            }
            cu_diag_error(d, "user \"%s\": token file %s: %s", c->user ? c->user : "",
                          c->token_file, strerror(errno));
            return NULL;
        }
        int64_t mt = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
        if (k->file_seen && k->cur && k->dev == st.st_dev && k->ino == st.st_ino &&
            k->mtime_ns == mt && k->size == st.st_size)
            return k->cur;
        const char *why = NULL;
        char *t = read_all(c->token_file, KC_FILE_MAX, NULL, &why);
        if (!t || !trim(t)[0]) {
            if (t)
                why = "the file is empty";
            free(t);
            if (k->cur) {
                cu_diag_warn(d, "user \"%s\": token file %s: %s; using the last token read",
                             c->user ? c->user : "", c->token_file, why);
                return k->cur;
            }
            cu_diag_error(d, "user \"%s\": token file %s: %s", c->user ? c->user : "",
                          c->token_file, why);
            return NULL;
        }
        free(k->cur);
        k->cur = t;
        k->file_seen = 1;
        k->dev = st.st_dev;
        k->ino = st.st_ino;
        k->mtime_ns = mt;
        k->size = st.st_size;
        return k->cur;
    }
    return c->token;
}

int cu_kconfig_invalidate(cu_kconfig *c)
{
    struct cu_kcred *k = c->cred_;
    if (c->exec) {
        k->exec_valid = 0;
        return 1;
    }
    if (c->token_file) {
        k->file_seen = 0;
        return 1;
    }
    return 0;
}
