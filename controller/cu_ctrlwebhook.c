/*
 * cu_ctrlwebhook.c - the webhook server of the controller: HTTPS on the
 * controller's loop (base/cu_httpd.c, POST only for the reviews), every
 * request handed to cu_whrev_serve (cu_whreview.h) with the hooks' view of
 * the cluster taken from the informers (Namespaces' labels, LocalQueues).
 *
 * Its certificate, as Kueue's (internalCertManagement, the
 * open-policy-agent cert-controller's rotator):
 *  - internal (the default): a CA and a serving certificate for
 *    <service>.<namespace>.svc (and .svc.cluster.local, 127.0.0.1,
 *    localhost), kept in the Secret <secret> of the controller's
 *    namespace (ca.crt, ca.key, tls.crt, tls.key): reused when it holds a
 *    valid pair that does not expire within the lookahead, else made anew
 *    and written back (created when missing). The pair is written into the
 *    certificate directory, the server (re)started with it, and the CA
 *    bundle injected into every webhook of the Mutating and Validating
 *    WebhookConfigurations Cueue ships, and into the conversion webhook of
 *    every kueue.x-k8s.io CRD whose strategy is Webhook; informers on those
 *    kinds inject it again when an apply wipes it. A timer checks again
 *    before the lookahead and every 12 hours. When the Secret cannot be
 *    stored (no namespace, no RBAC), the pair is served from memory, and
 *    storing it is tried again later; its CA is injected only once it is
 *    stored: the Secret is what replicas share, and two replicas each
 *    injecting a CA of its own would rewrite the CRDs (and so end every
 *    watch on their objects) in turn forever.
 *  - files (internalCertManagement.enable: false, cert-manager style):
 *    tls.crt and tls.key in the certificate directory, read every 10 s
 *    (every second until first found), and the server restarted when they
 *    change.
 * The server does not listen before it has a certificate, and /readyz says
 * "webhook certificates not ready" until then (and, internal, until the CA
 * bundles are injected), as Kueue's readiness check.
 */
#include "cu_ctrl_int.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "cu_base64.h"
#include "cu_tls.h"
#include "cu_webhook.h"
#include "cu_whreview.h"

#define CERT_VALIDITY_S ((int64_t)10 * 365 * 24 * 3600) /* cert-controller's 10 years */
#define LOOKAHEAD_S ((int64_t)90 * 24 * 3600)           /* renewed 90 days before expiry */
#define CHECK_EVERY_S (12.0 * 3600)                     /* cert-controller's 12 hours */
#define RETRY_S 5.0

enum { INJ_MWC, INJ_VWC, INJ_CRD, NINJ };

static const char *const inj_paths[NINJ] = {
    "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
    "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
};

struct ctrl_wh {
    ctrl *c;
    char addr[300];  /* the bind address; its port fixed once bound */
    char shown[300]; /* as logged */
    char cert_dir[1024];
    int internal;
    const char *ns, *svc, *secret;
    char mwc[2][300], vwc[2][300];
    char dns[600]; /* <svc>.<ns>.svc */
    char *ca, *ca_key, *cert, *key;
    char *ca_b64; /* the CA bundle to inject */
    int64_t not_after;
    int64_t validity_s, lookahead_s; /* CERT_VALIDITY_S and LOOKAHEAD_S, unless a test says */
    int serving;                     /* the server runs with cert */
    int stored;                      /* the pair is in the Secret */
    int stopping;
    int explicit_addr; /* the address was asked for: failing to listen is an error */
    int disabled;      /* the default address was taken: no webhooks */
    double retry_s;    /* the next retry after a failure (5 s, doubling to 60 s) */
    int secret_busy;   /* a Secret request in flight */
    int inflight;      /* injection writes in flight */
    int inj_errors;    /* injection writes that failed since the last success */
    cu_informer *inf[NINJ];
    int synced[NINJ];
    ev_timer check; /* internal: the next look at the Secret; files: the next read */
    char said[300]; /* the last problem logged (said once) */
    cu_httpd *s;
};

/* ---- the hooks' view of the cluster ---- */

static const cu_kvs *env_ns_labels(void *ud, const char *ns)
{
    ctrl *c = ud;
    rec *nsr = ns ? ctrl_omap_get(&c->objs[R_NS], ns) : NULL;
    const cu_namespace *nso =
        nsr && nsr->w && nsr->w->namespaces.n ? nsr->w->namespaces.items[0] : NULL;
    return nso ? &nso->meta.labels : NULL;
}

static int env_lq_exists(void *ud, const char *ns, const char *name)
{
    ctrl *c = ud;
    char key[600];
    snprintf(key, sizeof(key), "%s/%s", ns ? ns : "", name ? name : "");
    return ctrl_omap_get(&c->objs[R_LQ], key) != NULL;
}

static int wh_post(void *ud, const char *path, const char *query, const char *ctype_in,
                   const char *data, size_t len, cu_buf *out, const char **ctype)
{
    (void)query;
    ctrl_wh *w = ud;
    ctrl *c = w->c;
    cu_wh_env env = {
        .cfg = c->cfg.cf, .ns_labels = env_ns_labels, .lq_exists = env_lq_exists, .ud = c
    };
    int code = cu_whrev_serve(&env, path, ctype_in, data, len, out, ctype);
    ctrl_log(c, 3, "webhook %s: %d", path, code);
    return code;
}

static int wh_get(void *ud, const char *path, const char *query, const char *accept, cu_buf *body,
                  const char **ctype)
{
    (void)ud, (void)query, (void)accept;
    *ctype = "text/plain; charset=utf-8";
    cu_buf_printf(
        body, "webhooks are served with POST (AdmissionReview, ConversionReview): %.200s\n", path);
    return 405;
}

/* Says msg once (until another problem or a success). */
static void say(ctrl_wh *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(ctrl_wh *w, const char *fmt, ...)
{
    char m[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    if (strcmp(m, w->said) == 0)
        return;
    snprintf(w->said, sizeof w->said, "%s", m);
    ctrl_log(w->c, 0, "webhooks: %s", m);
}

/* (Re)starts the server with w->cert and w->key: the new one listens
 * (SO_REUSEPORT) before the old one stops, so that a new certificate
 * leaves no moment without a listener; if it cannot start, the old one
 * goes on. */
static int serve(ctrl_wh *w)
{
    cu_httpd_opts ho = { .cert_pem = w->cert,
                         .key_pem = w->key,
                         .post = wh_post,
                         .post_limit = CU_WH_MAX_BODY,
                         .reuse_port = 1 };
    char err[400];
    int port = 0, again = w->s != NULL;
    cu_httpd *s = cu_httpd_start_opts(w->c->loop, w->addr, "webhook server", wh_get, w, &ho, err,
                                      sizeof(err), &port);
    if (!s) {
        if (!w->explicit_addr && !again) { /* the default may be taken */
            ctrl_log(w->c, 0,
                     "webhook server disabled: %s (choose an address with "
                     "--webhook-bind-address)",
                     err);
            w->disabled = 1;
            ev_timer_stop(w->c->loop, &w->check);
            return -1;
        }
        say(w, "%s", err);
        return -1;
    }
    cu_httpd_stop(w->s);
    w->s = s;
    w->serving = 1;
    const char *colon = strrchr(w->addr, ':');
    if (colon && strcmp(colon, ":0") == 0) /* keep the port across restarts */
        snprintf(w->addr + (colon - w->addr), sizeof(w->addr) - (size_t)(colon - w->addr), ":%d",
                 port);
    snprintf(w->shown, sizeof w->shown, "%.*s:%d", (int)(strrchr(w->addr, ':') - w->addr), w->addr,
             port);
    size_t nhooks = 0;
    cu_wh_hooks(&nhooks);
    ctrl_log(w->c, 0, "webhook server %son %s (HTTPS; %zu admission webhooks and %s)",
             again ? "restarted with a new certificate " : "", w->shown, nhooks,
             CU_WH_CONVERT_PATH);
    return 0;
}

/* Reads path (at most 1 MiB) into a new string, NULL when it cannot. */
static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    cu_buf b;
    cu_buf_init(&b, (size_t)1 << 20);
    char tmp[4096];
    size_t n;
    while ((n = fread(tmp, 1, sizeof tmp, f)) > 0)
        cu_buf_append(&b, tmp, n);
    int bad = ferror(f) || b.failed;
    fclose(f);
    if (bad || !b.len) {
        cu_buf_free(&b);
        return NULL;
    }
    return b.data;
}

/* Writes s to dir/name through a temporary file and a rename. */
static int write_file(const char *dir, const char *name, const char *s, mode_t mode)
{
    char path[1200], tmp[1300];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(tmp, sizeof tmp, "%s/.%s.%ld", dir, name, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, mode);
    if (fd < 0)
        return -1;
    size_t len = strlen(s), off = 0;
    while (off < len) {
        ssize_t k = write(fd, s + off, len - off);
        if (k <= 0) {
            close(fd);
            unlink(tmp);
            return -1;
        }
        off += (size_t)k;
    }
    if (close(fd) != 0 || rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* mkdir -p */
static int make_dirs(const char *dir)
{
    char p[1024];
    snprintf(p, sizeof p, "%s", dir);
    for (char *q = p + 1; *q; q++)
        if (*q == '/') {
            *q = 0;
            if (mkdir(p, 0755) != 0 && errno != EEXIST)
                return -1;
            *q = '/';
        }
    return mkdir(p, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

/* ---- CA bundle injection ---- */

static void inject_obj(ctrl_wh *w, int k, json_object *obj);

static void on_inject(cu_kclient *kc, const cu_kresp *r, void *ud)
{
    (void)kc;
    ctrl_wh *w = ud;
    w->inflight--;
    if (w->stopping)
        return;
    if (r->code == 200) {
        w->inj_errors = 0;
        return;
    }
    /* 409: the watch brings the newer version, and it is injected then */
    if (r->code != 409) {
        w->inj_errors++;
        say(w, "injecting the CA bundle: %s", r->code ? "refused" : r->error ? r->error : "failed");
        if (r->code)
            ctrl_log(w->c, 1, "webhooks: injection refused with %d: %.300s", r->code,
                     r->body ? r->body : "");
    }
}

/* Sets cc.caBundle to the CA when it differs; returns 1 when it did. */
static int set_bundle(json_object *cc, const char *b64)
{
    if (!cc)
        return 0;
    const char *cur = cu_jstr(cc, "caBundle");
    if (cur && strcmp(cur, b64) == 0)
        return 0;
    cu_jset_str(cc, "caBundle", b64);
    return 1;
}

static int our_config(const ctrl_wh *w, int k, const char *name)
{
    char(*names)[300] = k == INJ_MWC ? (char(*)[300])w->mwc : (char(*)[300])w->vwc;
    return name && (strcmp(name, names[0]) == 0 || strcmp(name, names[1]) == 0);
}

static void inject_obj(ctrl_wh *w, int k, json_object *obj)
{
    if (!w->ca_b64 || w->stopping || !w->stored)
        return;
    const char *name = cu_jpath_str(obj, "metadata.name");
    if (!name)
        return;
    if (k == INJ_CRD) {
        if (!cu_jpath_str(obj, "spec.group") ||
            strcmp(cu_jpath_str(obj, "spec.group"), CU_GROUP) != 0)
            return;
        const char *st = cu_jpath_str(obj, "spec.conversion.strategy");
        if (!st || strcmp(st, "Webhook") != 0)
            return;
    } else if (!our_config(w, k, name)) {
        return;
    }
    json_object *copy = cu_jcopy(obj);
    if (!copy)
        return;
    int changed = 0;
    if (k == INJ_CRD) {
        json_object *wh = cu_jchild(cu_jchild(cu_jchild(copy, "spec"), "conversion"), "webhook");
        changed = set_bundle(wh ? cu_jchild(wh, "clientConfig") : NULL, w->ca_b64);
    } else {
        json_object *list = cu_jget(copy, "webhooks");
        for (size_t i = 0; i < cu_jarr_len(list); i++) {
            json_object *e = json_object_array_get_idx(list, i);
            if (json_object_is_type(e, json_type_object))
                changed |= set_bundle(cu_jchild(e, "clientConfig"), w->ca_b64);
        }
    }
    if (changed) {
        char path[700];
        snprintf(path, sizeof path, "%s/%s", inj_paths[k], name);
        const char *body = json_object_to_json_string_ext(copy, JSON_C_TO_STRING_PLAIN);
        if (body && cu_kclient_request(w->c->kc, "PUT", path, body, strlen(body),
                                       "application/json", on_inject, w)) {
            w->inflight++;
            ctrl_log(w->c, 1, "webhooks: injecting the CA bundle into %s", path);
        }
    }
    json_object_put(copy);
}

static void on_inj_event(cu_informer *inf, cu_ievent ev, json_object *obj, void *ud)
{
    ctrl_wh *w = ud;
    for (int k = 0; k < NINJ; k++)
        if (w->inf[k] == inf && ev != CU_IEV_DELETED)
            inject_obj(w, k, obj);
}

static void on_inj_synced(cu_informer *inf, void *ud)
{
    ctrl_wh *w = ud;
    for (int k = 0; k < NINJ; k++)
        if (w->inf[k] == inf)
            w->synced[k] = 1;
}

static void on_inj_skip(cu_informer *inf, const char *why, json_object *obj, void *ud)
{
    (void)inf, (void)obj;
    ctrl_log(((ctrl_wh *)ud)->c, 1, "webhooks: %s", why);
}

/* (Re)starts the informers: their LIST injects the CA everywhere. */
static void inject_all(ctrl_wh *w)
{
    for (int k = 0; k < NINJ; k++) {
        if (w->inf[k])
            cu_informer_stop(w->inf[k]);
        w->inf[k] = NULL;
        w->synced[k] = 0;
        cu_informer_opts io = { .path = inj_paths[k],
                                .optional = 1,
                                .on_event = on_inj_event,
                                .on_synced = on_inj_synced,
                                .on_skip = on_inj_skip,
                                .ud = w };
        cu_diag d;
        cu_diag_init(&d);
        w->inf[k] = cu_informer_start(w->c->kc, &io, &d);
        for (size_t i = 0; !w->inf[k] && i < d.n; i++)
            ctrl_log(w->c, 0, "webhooks: %s", d.msgs[i]);
        cu_diag_free(&d);
    }
}

/* ---- the pair in use ---- */

static void set_pair(ctrl_wh *w, char *ca, char *ca_key, char *cert, char *key)
{
    free(w->ca), free(w->ca_key), free(w->cert), free(w->key), free(w->ca_b64);
    w->ca = ca, w->ca_key = ca_key, w->cert = cert, w->key = key;
    w->ca_b64 = ca ? cu_base64_encode(ca, strlen(ca)) : NULL;
    char err[200];
    w->not_after = 0;
    if (cert)
        cu_tls_cert_expiry(cert, &w->not_after, err, sizeof err);
}

/* The pair is valid and not due for renewal. */
static int pair_fresh(const ctrl_wh *w, const char *ca, const char *cert, const char *key,
                      char *why, size_t n)
{
    int64_t now = (int64_t)time(NULL), na = 0;
    char err[200];
    if (!cu_tls_server_ok(ca, cert, key, w->dns, now, why, n))
        return 0;
    if (cu_tls_cert_expiry(cert, &na, err, sizeof err) != CU_OK || na - now <= w->lookahead_s) {
        snprintf(why, n, "the certificate expires within %lld s", (long long)w->lookahead_s);
        return 0;
    }
    return 1;
}

static void arm_check(ctrl_wh *w, double after)
{
    ev_timer_stop(w->c->loop, &w->check);
    ev_timer_set(&w->check, after, 0.);
    ev_timer_start(w->c->loop, &w->check);
}

/* The pair is in place: files, server, injection, next check. */
static void use_pair(ctrl_wh *w, int changed)
{
    if (make_dirs(w->cert_dir) != 0 || write_file(w->cert_dir, "ca.crt", w->ca, 0644) != 0 ||
        write_file(w->cert_dir, "tls.crt", w->cert, 0644) != 0 ||
        write_file(w->cert_dir, "tls.key", w->key, 0600) != 0)
        say(w, "cannot write the certificate into %s: %s (served from memory)", w->cert_dir,
            strerror(errno));
    if (changed || !w->serving)
        serve(w);
    if (w->disabled)
        return;
    if (changed)
        inject_all(w);
    int64_t now = (int64_t)time(NULL);
    double next = CHECK_EVERY_S;
    if (w->not_after && (double)(w->not_after - w->lookahead_s - now) < next)
        next = (double)(w->not_after - w->lookahead_s - now);
    arm_check(w, w->stored ? (next > 1 ? next : 1) : w->retry_s);
}

/* After a failure: the next try, later each time (5 s doubling to 60 s). */
static void retry_later(ctrl_wh *w)
{
    arm_check(w, w->retry_s);
    w->retry_s = w->retry_s * 2 > 60 ? 60 : w->retry_s * 2;
}

static void get_secret(ctrl_wh *w);

static void get_secret(ctrl_wh *w);
static void store(ctrl_wh *w, json_object *secret);

static void on_secret_written(cu_kclient *kc, const cu_kresp *r, void *ud)
{
    (void)kc;
    ctrl_wh *w = ud;
    w->secret_busy = 0;
    if (w->stopping || w->disabled)
        return;
    if (r->code == 200 || r->code == 201) {
        int was_stored = w->stored;
        w->stored = 1;
        w->retry_s = RETRY_S;
        w->said[0] = 0;
        char exp[40];
        cu_time_format((int64_t)w->not_after * 1000, exp, sizeof exp);
        ctrl_log(w->c, 0, "webhooks: certificate for %s stored in Secret %s/%s (expires %s)",
                 w->dns, w->ns, w->secret, exp);
        use_pair(w, 0);
        if (!was_stored)
            inject_all(w); /* now shared: its CA goes into the configurations */
        return;
    }
    if (r->code == 409) { /* another replica wrote it first: use theirs */
        get_secret(w);
        return;
    }
    say(w,
        "cannot store the certificate in Secret %s/%s: %s; served from memory, tried again "
        "later",
        w->ns, w->secret,
        r->code == 404   ? "no such namespace"
        : r->code == 403 ? "forbidden (RBAC: create and update secrets)"
        : r->code        ? "refused"
        : r->error       ? r->error
                         : "no answer");
    retry_later(w);
}

static json_object *b64_str(const char *s)
{
    char *b = cu_base64_encode(s ? s : "", s ? strlen(s) : 0);
    json_object *o = json_object_new_string(b ? b : "");
    free(b);
    return o;
}

/* Writes the pair in use into the Secret: secret is the one read (PUT
 * over it), NULL to create it. */
static void store(ctrl_wh *w, json_object *secret)
{
    json_object *s = secret ? cu_jcopy(secret) : json_object_new_object();
    if (!s) {
        retry_later(w);
        return;
    }
    cu_jset_str(s, "apiVersion", "v1");
    cu_jset_str(s, "kind", "Secret");
    json_object *meta = cu_jchild(s, "metadata");
    cu_jset_str(meta, "name", w->secret);
    cu_jset_str(meta, "namespace", w->ns);
    json_object *data = json_object_new_object();
    json_object_object_add(data, "ca.crt", b64_str(w->ca));
    json_object_object_add(data, "ca.key", b64_str(w->ca_key));
    json_object_object_add(data, "tls.crt", b64_str(w->cert));
    json_object_object_add(data, "tls.key", b64_str(w->key));
    json_object_object_add(s, "data", data);
    json_object_object_del(s, "stringData");
    char path[700];
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/secrets%s%s", w->ns, secret ? "/" : "",
             secret ? w->secret : "");
    const char *body = json_object_to_json_string_ext(s, JSON_C_TO_STRING_PLAIN);
    if (body && cu_kclient_request(w->c->kc, secret ? "PUT" : "POST", path, body, strlen(body),
                                   "application/json", on_secret_written, w))
        w->secret_busy = 1;
    else
        retry_later(w);
    json_object_put(s);
}

/* Makes a new pair, serves it, and stores it (over secret, or a new
 * Secret when NULL). */
static void renew(ctrl_wh *w, json_object *secret, const char *why)
{
    char pd[700], pl[700];
    snprintf(pd, sizeof pd, "%s.cluster.local", w->dns);
    snprintf(pl, sizeof pl, "%s", w->dns);
    const char *names[] = { pl, pd, "127.0.0.1", "::1", "localhost" };
    cu_tls_issue o = { .ca_cn = "cueue-ca",
                       .cn = pl,
                       .org = "cueue",
                       .names = names,
                       .nnames = 5,
                       .valid_s = w->validity_s };
    char *ca, *cak, *cert, *key, err[300];
    if (cu_tls_issue_server(&o, &ca, &cak, &cert, &key, err, sizeof err) != CU_OK) {
        say(w, "%s", err);
        retry_later(w);
        return;
    }
    ctrl_log(w->c, 0, "webhooks: new certificate for %s (%s)", w->dns, why);
    set_pair(w, ca, cak, cert, key);
    w->stored = 0;
    use_pair(w, 1);
    if (!w->disabled)
        store(w, secret);
}

/* A Secret's data[key], decoded. */
static char *secret_val(json_object *data, const char *key)
{
    const char *v = cu_jstr(data, key);
    size_t n = 0;
    char *d = v ? cu_base64_decode(v, &n) : NULL;
    if (d && strlen(d) != n) { /* a NUL inside: not PEM */
        free(d);
        d = NULL;
    }
    return d;
}

/* The pair in use is there and fresh. */
static int ours_fresh(const ctrl_wh *w)
{
    char why[300];
    return w->ca && w->ca_key && pair_fresh(w, w->ca, w->cert, w->key, why, sizeof why);
}

static void on_secret(cu_kclient *kc, const cu_kresp *r, void *ud)
{
    (void)kc;
    ctrl_wh *w = ud;
    w->secret_busy = 0;
    if (w->stopping || w->disabled)
        return;
    if (r->code == 404) {
        if (ours_fresh(w))
            store(w, NULL);
        else
            renew(w, NULL, w->ca ? "the Secret is gone" : "no Secret yet");
        return;
    }
    if (r->code != 200) {
        say(w, "cannot read Secret %s/%s: %s; tried again later", w->ns, w->secret,
            r->code == 403 ? "forbidden (RBAC: get secrets)"
            : r->code      ? "refused"
            : r->error     ? r->error
                           : "no answer");
        if (!w->ca)
            renew(w, NULL, "the Secret cannot be read"); /* served from memory meanwhile */
        else
            retry_later(w);
        return;
    }
    json_object *s = cu_json_parse_str(r->body ? r->body : "");
    json_object *data = cu_jget(s, "data");
    char *ca = secret_val(data, "ca.crt"), *cak = secret_val(data, "ca.key");
    char *cert = secret_val(data, "tls.crt"), *key = secret_val(data, "tls.key");
    char why[300] = "the Secret holds no certificate";
    if (ca && cert && key && pair_fresh(w, ca, cert, key, why, sizeof why)) {
        int changed = !w->cert || strcmp(w->cert, cert) != 0 || !w->ca || strcmp(w->ca, ca) != 0;
        if (changed)
            ctrl_log(w->c, 0, "webhooks: using the certificate of Secret %s/%s", w->ns, w->secret);
        set_pair(w, ca, cak, cert, key);
        w->stored = 1;
        w->retry_s = RETRY_S;
        use_pair(w, changed);
    } else {
        free(ca), free(cak), free(cert), free(key);
        if (ours_fresh(w) && !w->stored)
            store(w, s); /* ours, served from memory until now */
        else
            renew(w, s, why);
    }
    json_object_put(s);
}

static void get_secret(ctrl_wh *w)
{
    if (w->secret_busy || w->stopping || w->disabled)
        return;
    char path[700];
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/secrets/%s", w->ns, w->secret);
    if (cu_kclient_request(w->c->kc, "GET", path, NULL, 0, NULL, on_secret, w))
        w->secret_busy = 1;
    else
        retry_later(w);
}

/* ---- files (cert-manager style) ---- */

static void read_files(ctrl_wh *w)
{
    char p1[1100], p2[1100];
    snprintf(p1, sizeof p1, "%s/tls.crt", w->cert_dir);
    snprintf(p2, sizeof p2, "%s/tls.key", w->cert_dir);
    char *cert = read_file(p1), *key = read_file(p2);
    int64_t na = 0;
    char err[200];
    if (!cert || !key) {
        say(w, "waiting for %s and %s", p1, p2);
    } else if (cu_tls_cert_expiry(cert, &na, err, sizeof err) != CU_OK) {
        say(w, "%s: %s", p1, err);
    } else if (!w->cert || strcmp(cert, w->cert) != 0 || strcmp(key, w->key) != 0) {
        char *ok = w->cert;
        char *okey = w->key;
        w->cert = cert, w->key = key;
        if (serve(w) == 0) {
            w->said[0] = 0;
            char exp[40];
            cu_time_format((int64_t)na * 1000, exp, sizeof exp);
            ctrl_log(w->c, 0, "webhooks: certificate %s %s (expires %s)", p1,
                     ok ? "changed: reloaded" : "loaded", exp);
            w->not_after = na;
            free(ok), free(okey);
            cert = key = NULL;
        } else { /* keep the last good pair */
            w->cert = ok, w->key = okey;
            if (ok)
                serve(w);
        }
    }
    free(cert);
    free(key);
    if (!w->disabled)
        arm_check(w, w->serving ? 10.0 : 1.0);
}

static void on_check(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)loop, (void)revents;
    ctrl_wh *w = t->data;
    if (w->internal)
        get_secret(w);
    else
        read_files(w);
}

/* ---- life cycle ---- */

static void derive_name(char out[300], const char *svc, const char *type)
{
    size_t n = strlen(svc);
    static const char sfx[] = "-webhook-service";
    size_t sl = sizeof(sfx) - 1;
    if (n > sl && strcmp(svc + n - sl, sfx) == 0)
        n -= sl;
    snprintf(out, 300, "%.*s-%s-webhook-configuration", (int)n, svc, type);
}

int ctrl_webhook_start(ctrl *c, const char *addr, int explicit_addr, const char *cert_dir)
{
    if (!addr || strcmp(addr, "0") == 0)
        return 0;
    const cu_config *cf = c->cfg.cf;
    ctrl_wh *w = calloc(1, sizeof(*w));
    if (!w)
        return -1;
    w->c = c;
    snprintf(w->addr, sizeof w->addr, "%s", addr);
    snprintf(w->shown, sizeof w->shown, "%s", addr);
    snprintf(w->cert_dir, sizeof w->cert_dir, "%s", cert_dir);
    w->internal = cf ? cf->cert_mgmt.enable : 1;
    w->ns = cf && cf->ns ? cf->ns : CU_CONFIG_DEFAULT_NAMESPACE;
    w->svc =
        cf && cf->cert_mgmt.service_name ? cf->cert_mgmt.service_name : "kueue-webhook-service";
    w->secret =
        cf && cf->cert_mgmt.secret_name ? cf->cert_mgmt.secret_name : "kueue-webhook-server-cert";
    snprintf(w->dns, sizeof w->dns, "%s.%s.svc", w->svc, w->ns);
    derive_name(w->mwc[0], w->svc, "mutating");
    derive_name(w->vwc[0], w->svc, "validating");
    snprintf(w->mwc[1], 300, "cueue-mutating-webhook-configuration");
    snprintf(w->vwc[1], 300, "cueue-validating-webhook-configuration");
    w->explicit_addr = explicit_addr;
    w->retry_s = RETRY_S;
    w->validity_s = CERT_VALIDITY_S;
    w->lookahead_s = LOOKAHEAD_S;
    /* for tests only: certificates valid this many seconds, renewed at half
     * of it (a pod never sets it) */
    const char *tv = getenv("CUEUE_TEST_WEBHOOK_CERT_SECONDS");
    if (tv && atoll(tv) >= 2) {
        w->validity_s = atoll(tv);
        w->lookahead_s = w->validity_s / 2;
    }
    ev_init(&w->check, on_check);
    w->check.data = w;
    c->wh = w;
    if (explicit_addr) { /* an address asked for must be free: a bind probe */
        char err[400];
        int port = 0;
        cu_httpd_opts po = { .reuse_port = 1 };
        cu_httpd *probe = cu_httpd_start_opts(c->loop, w->addr, "webhook server", wh_get, w, &po,
                                              err, sizeof(err), &port);
        if (!probe) {
            fprintf(stderr, "cueue: controller: %s\n", err);
            return -1;
        }
        cu_httpd_stop(probe);
        const char *colon = strrchr(w->addr, ':');
        if (colon && strcmp(colon, ":0") == 0) /* the port, known from now on */
            snprintf(w->addr + (colon - w->addr), sizeof(w->addr) - (size_t)(colon - w->addr),
                     ":%d", port);
    }
    if (w->internal) {
        ctrl_log(c, 0,
                 "webhooks on %s: internal certificate management (Secret %s/%s, DNS name %s, "
                 "CA injected into %s, %s and the kueue.x-k8s.io CRDs' conversion)",
                 addr, w->ns, w->secret, w->dns, w->mwc[1], w->vwc[1]);
        get_secret(w);
    } else {
        ctrl_log(c, 0, "webhooks on %s: certificate from %s/tls.crt and tls.key", addr, cert_dir);
        read_files(w);
    }
    return 0;
}

const char *ctrl_webhook_not_ready(const ctrl *c, char *why, size_t n)
{
    ctrl_wh *w = c->wh;
    if (!w || w->disabled)
        return NULL;
    if (!w->cert)
        snprintf(why, n, "webhook certificates not ready%s%s", w->said[0] ? ": " : "", w->said);
    else if (!w->serving)
        snprintf(why, n, "webhook server not serving%s%s", w->said[0] ? ": " : "", w->said);
    else if (w->internal && !(w->synced[0] && w->synced[1] && w->synced[2]))
        snprintf(why, n, "webhook CA bundles not injected yet");
    else
        return NULL;
    return why;
}

void ctrl_webhook_stop(ctrl *c)
{
    ctrl_wh *w = c->wh;
    if (!w)
        return;
    w->stopping = 1;
    ev_timer_stop(c->loop, &w->check);
    for (int k = 0; k < NINJ; k++)
        if (w->inf[k]) {
            cu_informer_stop(w->inf[k]);
            w->inf[k] = NULL;
        }
    cu_httpd_stop(w->s);
    w->s = NULL;
    w->serving = 0;
}

void ctrl_webhook_free(ctrl *c)
{
    ctrl_wh *w = c->wh;
    if (!w)
        return;
    set_pair(w, NULL, NULL, NULL, NULL);
    free(w);
    c->wh = NULL;
}
