/*
 * cu_ctrlvis.c - the visibility API server of the controller
 * (visibility.kueue.x-k8s.io/v1beta2, cu_visibility.h): HTTPS on the
 * controller's loop, its requests authenticated as an aggregated API
 * server's are (the front proxy's client certificate, checked against the
 * requestheader CA that kube-apiserver publishes in the ConfigMap
 * kube-system/extension-apiserver-authentication, then the X-Remote-User
 * and X-Remote-Group headers; or a bearer token, through a TokenReview)
 * and authorized with a SubjectAccessReview of the resource
 * (clusterqueues/pendingworkloads, localqueues/pendingworkloads) or of the
 * path (discovery); members of system:masters are allowed without one, as
 * by the generic API server.
 */
#include "cu_ctrl_int.h"

/* ---- the source of the answers: the controller's engine ---- */

static const cu_wl_info **src_pending(void *ud, size_t *n, int *oom)
{
    const cu_wl_info **v = ctrl_pending_views(ud, n);
    *oom = !v;
    return v;
}

static int src_cq_known(void *ud, const char *name)
{
    ctrl *c = ud;
    for (size_t i = 0, n = cu_engine_ncqs(c->eng); i < n; i++)
        if (strcmp(cu_engine_cq_info(c->eng, i)->name, name) == 0)
            return 1;
    return 0;
}

static int src_lq_known(void *ud, const char *ns, const char *name)
{
    ctrl *c = ud;
    for (size_t i = 0, n = cu_engine_nlqs(c->eng); i < n; i++) {
        const cu_lq_info *li = cu_engine_lq_info(c->eng, i);
        if (strcmp(li->name, name) == 0 && strcmp(li->ns, ns) == 0)
            return 1;
    }
    return 0;
}

static json_object *src_owners(void *ud, const cu_wl_info *w)
{
    ctrl *c = ud;
    char key[600];
    snprintf(key, sizeof(key), "%s/%s", w->ns ? w->ns : "", w->name ? w->name : "");
    rec *x = ctrl_omap_get(&c->objs[R_WL], key);
    return x && x->owners ? cu_json_parse_str(x->owners) : NULL;
}

static const char *src_not_ready(void *ud)
{
    ctrl *c = ud;
    return ctrl_engine_not_ready(c, c->vis.why, sizeof(c->vis.why));
}

static int vis_handler(void *ud, const char *path, const char *query, const char *accept,
                       cu_buf *body, const char **ctype)
{
    (void)accept;
    cu_vis_src src = { .pending = src_pending,
                       .cq_known = src_cq_known,
                       .lq_known = src_lq_known,
                       .owners = src_owners,
                       .not_ready = src_not_ready,
                       .ud = ud };
    return cu_vis_serve(&src, path, query, body, ctype);
}

/* ---- the requestheader configuration ---- */

typedef struct reqhdr {
    int done, code;
    char *ca;                               /* requestheader-client-ca-file (PEM) */
    char *names[16], *users[8], *groups[8]; /* NULL-terminated */
    char why[300];
} reqhdr;

/* A ConfigMap value holding a JSON array of strings, into out (at most
 * max - 1, NULL-terminated, malloc'ed). */
static void str_list(json_object *data, const char *key, char **out, size_t max)
{
    const char *text = cu_jstr(data, key);
    json_object *arr = text ? cu_json_parse_str(text) : NULL;
    size_t k = 0;
    for (size_t i = 0; json_object_is_type(arr, json_type_array) &&
                       i < json_object_array_length(arr) && k + 1 < max;
         i++) {
        const char *s = json_object_get_string(json_object_array_get_idx(arr, i));
        if (s && *s && (out[k] = strdup(s)))
            k++;
    }
    out[k] = NULL;
    json_object_put(arr);
}

static void on_reqhdr(cu_kclient *kc, const cu_kresp *r, void *ud)
{
    (void)kc;
    reqhdr *h = ud;
    h->done = 1;
    h->code = r->code;
    if (r->code != 200) {
        snprintf(h->why, sizeof(h->why), "%s",
                 r->code == 404   ? "not found"
                 : r->code == 403 ? "forbidden (RBAC: get configmaps in kube-system)"
                 : r->code        ? "refused"
                 : r->error       ? r->error
                                  : "no answer");
        return;
    }
    json_object *cm = cu_json_parse_str(r->body ? r->body : "");
    json_object *data = cu_jget(cm, "data");
    const char *ca = cu_jstr(data, "requestheader-client-ca-file");
    if (ca && *ca)
        h->ca = strdup(ca);
    else
        snprintf(h->why, sizeof(h->why), "no requestheader-client-ca-file in it");
    str_list(data, "requestheader-allowed-names", h->names, 16);
    str_list(data, "requestheader-username-headers", h->users, 8);
    str_list(data, "requestheader-group-headers", h->groups, 8);
    json_object_put(cm);
}

static void on_reqhdr_timeout(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)revents;
    (void)t;
    ev_break(loop, EVBREAK_ONE);
}

static size_t count(char **v)
{
    size_t n = 0;
    while (v[n])
        n++;
    return n;
}

static void reqhdr_free(reqhdr *h)
{
    free(h->ca);
    for (size_t i = 0; h->names[i]; i++)
        free(h->names[i]);
    for (size_t i = 0; h->users[i]; i++)
        free(h->users[i]);
    for (size_t i = 0; h->groups[i]; i++)
        free(h->groups[i]);
}

static void vis_log(void *ud, const char *msg) { ctrl_log(ud, 0, "visibility API: %s", msg); }

int ctrl_visibility_start(ctrl *c, const char *addr, const char *cert_dir, const char *cert_name,
                          const char *key_name)
{
    if (!addr || strcmp(addr, "0") == 0)
        return 0;
    char host[256], err[400];
    size_t hl = cu_mauth_addr_host(addr, host, sizeof(host));
    char *cert = NULL, *key = NULL;
    if (cu_mauth_certificate(cert_dir, cert_name, key_name, host, &cert, &key, err, sizeof(err)) !=
        0) {
        fprintf(stderr, "cueue: controller: visibility certificate: %s\n", err);
        return -1;
    }
    /* the requestheader configuration, read before anything else runs
     * (at most 5 s: without it, bearer tokens only) */
    reqhdr h = { 0 };
    cu_kreq *req = cu_kclient_request(c->kc, "GET",
                                      "/api/v1/namespaces/kube-system/configmaps/"
                                      "extension-apiserver-authentication",
                                      NULL, 0, NULL, on_reqhdr, &h);
    ev_timer to;
    ev_timer_init(&to, on_reqhdr_timeout, 5.0, 0.);
    ev_timer_start(c->loop, &to);
    while (req && !h.done && ev_is_active(&to))
        ev_run(c->loop, EVRUN_ONCE);
    ev_timer_stop(c->loop, &to);
    if (req && !h.done) {
        cu_kclient_cancel(req); /* on_reqhdr runs now, with "cancelled" */
        snprintf(h.why, sizeof(h.why), "no answer within 5 s");
    }
    if (!h.ca)
        ctrl_log(c, 0,
                 "visibility API: ConfigMap kube-system/extension-apiserver-authentication: %s; "
                 "requests through kube-apiserver's aggregator cannot be authenticated, "
                 "bearer tokens only",
                 h.why[0] ? h.why : "not read");
    /* the generic API server's delegating caches: 10 s each */
    cu_mauth_opts mo = { .authn_ttl_s = 10,
                         .allow_ttl_s = 10,
                         .deny_ttl_s = 10,
                         .log = vis_log,
                         .log_ud = c,
                         .attrs = cu_vis_attrs,
                         .refuse = cu_vis_refuse,
                         .always_allow_group = "system:masters" };
    c->vis.auth = cu_mauth_new(c->kc, &mo);
    if (!c->vis.auth) {
        reqhdr_free(&h);
        free(cert);
        free(key);
        return -1;
    }
    cu_httpd_opts ho = { .cert_pem = cert,
                         .key_pem = key,
                         .gate_req = cu_mauth_gate_req,
                         .gate_ud = c->vis.auth,
                         .gate_json = 1,
                         .client_ca_pem = h.ca,
                         .proxy_names = (const char *const *)h.names,
                         .nproxy_names = count(h.names),
                         .user_headers = (const char *const *)h.users,
                         .nuser_headers = count(h.users),
                         .group_headers = (const char *const *)h.groups,
                         .ngroup_headers = count(h.groups) };
    int port = 0;
    c->vis.s = cu_httpd_start_opts(c->loop, addr, "visibility API", vis_handler, c, &ho, err,
                                   sizeof(err), &port);
    free(cert);
    free(key);
    if (!c->vis.s) {
        reqhdr_free(&h);
        fprintf(stderr, "cueue: controller: %s\n", err);
        return -1;
    }
    cu_mauth_attach(c->vis.auth, c->vis.s);
    ctrl_log(c, 0,
             "visibility API on %.*s:%d (/apis/" CU_VISIBILITY_GROUP "/" CU_VISIBILITY_VERSION
             "; HTTPS%s%s, authorized with SubjectAccessReviews)",
             (int)hl, addr, port,
             h.ca ? ", front-proxy client certificates checked against the requestheader CA" : "",
             ", bearer tokens");
    reqhdr_free(&h);
    return 0;
}

void ctrl_visibility_stop(ctrl *c)
{
    cu_httpd_stop(c->vis.s);
    c->vis.s = NULL;
    cu_mauth_detach(c->vis.auth);
}

void ctrl_visibility_free(ctrl *c)
{
    if (c->vis.auth) {
        ctrl_log(c, 0, "visibility API authentication: %lu reviews", cu_mauth_reviews(c->vis.auth));
        cu_mauth_free(c->vis.auth);
        c->vis.auth = NULL;
    }
}
