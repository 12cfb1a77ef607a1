/*
 * cu_aggregator.c - the aggregation layer, as kube-apiserver's
 * kube-aggregator does it: an APIService (apiregistration.k8s.io/v1) with
 * spec.service sends every request under /apis/GROUP/VERSION to that
 * Service, over HTTPS, with the front proxy's client certificate and the
 * requester's identity in X-Remote-User / X-Remote-Group (its
 * Authorization header is not passed on); its group is listed in /apis;
 * a thread checks each such APIService every second (GET
 * /apis/GROUP/VERSION as system:kube-aggregator in system:masters) and
 * writes its Available condition. The front proxy's CA is published, as
 * kube-apiserver does, in the ConfigMap
 * kube-system/extension-apiserver-authentication.
 *
 * A Service is resolved (there is no kube-proxy): ExternalName: its
 * spec.externalName and the APIService's port; otherwise the first ready
 * endpoint of its EndpointSlices (label kubernetes.io/service-name) with
 * the port named as the Service's port the APIService names, as
 * kube-apiserver's --enable-aggregator-routing (loopback addresses
 * allowed). docs/cluster.md, "Aggregated APIs".
 */
#include "cu_apiserver.h"
#include "cu_authn.h"
#include "cu_base64.h"
#include "cu_json.h"
#include "cu_tls.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cu_apiserver_int.h"

#define PROXY_CN "front-proxy-client"
#define PROXY_TIMEOUT_S 60L
#define CHECK_TIMEOUT_S 5L

static const cu_rtype *rtype(cu_apiserver *a, const char *group, const char *plural)
{
    return cu_store_rtype(a->s, group, "v1", plural);
}

/* ---- resolving a Service ---- */

static void set_url(agg_target *t, const char *host, int64_t port)
{
    const char *h = host ? host : "";
    int v6 = strchr(h, ':') != NULL;
    snprintf(t->url, sizeof(t->url), "https://%s%s%s:%lld", v6 ? "[" : "", h, v6 ? "]" : "",
             (long long)port);
}

int agg_resolve_service(cu_apiserver *a, const char *sns, const char *sname, int64_t port,
                        agg_target *t, char *msg, size_t msgn, char *reason, size_t rn)
{
    cu_status st;
    memset(&st, 0, sizeof(st));
    snprintf(t->server_name, sizeof(t->server_name), "%s.%s.svc", sname ? sname : "",
             sns ? sns : "");
    json_object *s = NULL;
    const cu_rtype *srt = rtype(a, "", "services");
    if (!sns || !sname || !srt || cu_store_get(a->s, srt, sns, sname, &s, &st) != CU_OK) {
        snprintf(reason, rn, "ServiceNotFound");
        snprintf(msg, msgn, "service/%s in \"%s\" is not present", sname ? sname : "",
                 sns ? sns : "");
        return 503;
    }
    const char *type = cu_jpath_str(s, "spec.type");
    if (type && strcmp(type, "ExternalName") == 0) {
        set_url(t, cu_jpath_str(s, "spec.externalName"), port);
        json_object_put(s);
        return 0;
    }
    /* the Service's port that is asked for, then an EndpointSlice
     * endpoint with a port of that name */
    const char *pname = NULL;
    int found = 0;
    json_object *ports = cu_jpath(s, "spec.ports");
    for (size_t i = 0;
         json_object_is_type(ports, json_type_array) && i < json_object_array_length(ports); i++) {
        json_object *p = json_object_array_get_idx(ports, i);
        if (cu_jas_int64(cu_jget(p, "port"), -1) == port) {
            pname = cu_jstr(p, "name");
            found = 1;
            break;
        }
    }
    if (!found) {
        snprintf(reason, rn, "ServicePortError");
        snprintf(msg, msgn, "service/%s in \"%s\" is not listening on port %lld", sname, sns,
                 (long long)port);
        json_object_put(s);
        return 503;
    }
    char sel[400];
    snprintf(sel, sizeof(sel), "kubernetes.io/service-name=%s", sname);
    cu_list_opts lo = { .label_selector = sel };
    json_object *slices = NULL;
    const cu_rtype *ert = rtype(a, "discovery.k8s.io", "endpointslices");
    if (ert)
        cu_store_list(a->s, ert, sns, &lo, &slices, &st);
    json_object *items = cu_jget(slices, "items");
    for (size_t i = 0; !t->url[0] && json_object_is_type(items, json_type_array) &&
                       i < json_object_array_length(items);
         i++) {
        json_object *sl = json_object_array_get_idx(items, i);
        json_object *sp = cu_jget(sl, "ports"), *eps = cu_jget(sl, "endpoints");
        int64_t eport = -1;
        for (size_t j = 0;
             json_object_is_type(sp, json_type_array) && j < json_object_array_length(sp); j++) {
            json_object *p = json_object_array_get_idx(sp, j);
            const char *n = cu_jstr(p, "name");
            if (strcmp(n ? n : "", pname ? pname : "") == 0 && cu_jget(p, "port")) {
                eport = cu_jas_int64(cu_jget(p, "port"), -1);
                break;
            }
        }
        for (size_t j = 0; eport > 0 && json_object_is_type(eps, json_type_array) &&
                           j < json_object_array_length(eps);
             j++) {
            json_object *ep = json_object_array_get_idx(eps, j);
            json_object *ready = cu_jpath(ep, "conditions.ready");
            json_object *addrs = cu_jget(ep, "addresses");
            if ((ready && !json_object_get_boolean(ready)) ||
                !json_object_is_type(addrs, json_type_array) || !json_object_array_length(addrs))
                continue;
            set_url(t, json_object_get_string(json_object_array_get_idx(addrs, 0)), eport);
            break;
        }
    }
    json_object_put(slices);
    int code = 0;
    if (!t->url[0]) {
        code = 503;
        snprintf(reason, rn, "MissingEndpoints");
        snprintf(msg, msgn,
                 "endpointslices for service/%s in \"%s\" have no ready addresses with port name "
                 "\"%s\"",
                 sname, sns, pname ? pname : "");
    }
    json_object_put(s);
    return code;
}

/* The APIService for group/version: 1 with spec.service (resolved into
 * *t, or *code/msg when it cannot be), 0 when there is none or it is
 * local (no service). */
static int resolve(cu_apiserver *a, const char *group, const char *version, agg_target *t,
                   int *code, char *msg, size_t msgn, char *reason, size_t rn)
{
    memset(t, 0, sizeof(*t));
    *code = 0;
    char name[600];
    snprintf(name, sizeof(name), "%s.%s", version, group);
    const cu_rtype *art = rtype(a, "apiregistration.k8s.io", "apiservices");
    json_object *as = NULL;
    cu_status st;
    memset(&st, 0, sizeof(st));
    if (!art || cu_store_get(a->s, art, NULL, name, &as, &st) != CU_OK)
        return 0;
    json_object *svc = cu_jpath(as, "spec.service");
    if (!json_object_is_type(svc, json_type_object)) {
        json_object_put(as);
        return 0;
    }
    t->skip_verify = cu_jas_true(cu_jpath(as, "spec.insecureSkipTLSVerify"));
    t->ca = agg_ca_bundle(cu_jpath_str(as, "spec.caBundle"));
    *code = agg_resolve_service(a, cu_jstr(svc, "namespace"), cu_jstr(svc, "name"),
                                cu_jas_int64(cu_jget(svc, "port"), 443), t, msg, msgn, reason, rn);
    json_object_put(as);
    return 1;
}

char *agg_ca_bundle(const char *b64)
{
    if (!b64 || !*b64)
        return NULL;
    size_t n = 0;
    return cu_base64_decode(b64, &n);
}

/* ---- one request to an aggregated server ---- */

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
    cu_buf *b = ud;
    cu_buf_append(b, p, size * n);
    return b->failed ? 0 : size * n;
}

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
    agg_call *h = ud;
    size_t len = size * n;
    if (len > 13 && strncasecmp(p, "Content-Type:", 13) == 0) {
        const char *v = p + 13;
        while (*v == ' ')
            v++;
        size_t vl = len - (size_t)(v - p);
        while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n'))
            vl--;
        snprintf(h->rctype, sizeof(h->rctype), "%.*s", (int)vl, v);
    }
    return len;
}

long agg_send(cu_apiserver *a, const agg_target *t, agg_call *k)
{
    CURL *c = curl_easy_init();
    k->curl_rc = 0;
    k->err[0] = k->rctype[0] = '\0';
    if (!c) {
        snprintf(k->err, sizeof(k->err), "out of memory");
        return 0;
    }
    char url[2600], connect_to[700];
    /* with a CA the certificate must name SERVICE.NS.svc: the URL says that
     * name and CONNECT_TO dials the resolved address */
    const char *hostport = t->url + 8;
    struct curl_slist *ct = NULL, *hl = NULL;
    if (!t->skip_verify && t->server_name[0]) {
        const char *colon = strrchr(hostport, ':');
        snprintf(url, sizeof(url), "https://%s%s%s", t->server_name, colon ? colon : "",
                 k->path_query);
        snprintf(connect_to, sizeof(connect_to), "%s%s:%s", t->server_name, colon ? colon : "",
                 hostport);
        ct = curl_slist_append(NULL, connect_to);
        curl_easy_setopt(c, CURLOPT_CONNECT_TO, ct);
    } else {
        snprintf(url, sizeof(url), "%s%s", t->url, k->path_query);
    }
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, k->method);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, k->timeout_ms);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, k->timeout_ms < 5000 ? k->timeout_ms : 5000L);
    if (k->body && k->blen) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, k->body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)k->blen);
    } else if (strcmp(k->method, "HEAD") == 0) {
        curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
    }
    if (k->user) { /* the front proxy: its certificate and the requester */
        struct curl_blob cert = { a->fp_cert, strlen(a->fp_cert), CURL_BLOB_COPY };
        struct curl_blob key = { a->fp_key, strlen(a->fp_key), CURL_BLOB_COPY };
        curl_easy_setopt(c, CURLOPT_SSLCERT_BLOB, &cert);
        curl_easy_setopt(c, CURLOPT_SSLCERTTYPE, "PEM");
        curl_easy_setopt(c, CURLOPT_SSLKEY_BLOB, &key);
        curl_easy_setopt(c, CURLOPT_SSLKEYTYPE, "PEM");
    }
    if (t->skip_verify) {
        curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
    } else if (t->ca) {
        struct curl_blob ca = { t->ca, strlen(t->ca), CURL_BLOB_COPY };
        curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &ca);
    }
    char line[1200];
    if (k->user) {
        const char *uname = cu_jstr(k->user, "username");
        snprintf(line, sizeof(line), "X-Remote-User: %s", uname ? uname : "");
        hl = curl_slist_append(hl, line);
        json_object *groups = cu_jget(k->user, "groups");
        for (size_t i = 0;
             json_object_is_type(groups, json_type_array) && i < json_object_array_length(groups);
             i++) {
            snprintf(line, sizeof(line), "X-Remote-Group: %s",
                     json_object_get_string(json_object_array_get_idx(groups, i)));
            hl = curl_slist_append(hl, line);
        }
    }
    if (k->ctype) {
        snprintf(line, sizeof(line), "Content-Type: %s", k->ctype);
        hl = curl_slist_append(hl, line);
    }
    snprintf(line, sizeof(line), "Accept: %s", k->accept ? k->accept : "application/json");
    hl = curl_slist_append(hl, line);
    hl = curl_slist_append(hl, "Expect:");
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, k->out);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, k);
    long code = 0;
    CURLcode rc = curl_easy_perform(c);
    k->curl_rc = (int)rc;
    if (rc == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    else
        snprintf(k->err, sizeof(k->err), "%s", curl_easy_strerror(rc));
    curl_slist_free_all(hl);
    curl_slist_free_all(ct);
    curl_easy_cleanup(c);
    return code;
}

/* ---- the proxy ---- */

/* "/apis/GROUP/VERSION[/...]": group and version, else 0. */
static int split_gv(const char *p, char *g, size_t gn, char *v, size_t vn)
{
    if (strncmp(p, "/apis/", 6) != 0)
        return 0;
    p += 6;
    size_t gl = strcspn(p, "/");
    if (!gl || gl >= gn || p[gl] != '/')
        return 0;
    memcpy(g, p, gl);
    g[gl] = 0;
    p += gl + 1;
    size_t vl = strcspn(p, "/");
    if (!vl || vl >= vn)
        return 0;
    memcpy(v, p, vl);
    v[vl] = 0;
    return 1;
}

json_object *agg_requester(cu_apiserver *a, const cu_api_req *r)
{
    json_object *user = cu_authn_user(a->authn, r->authorization);
    if (!user) { /* no token file (or a token alone): the cluster's admin */
        user = json_object_new_object();
        json_object *gs = json_object_new_array();
        json_object_object_add(user, "username", json_object_new_string("system:admin"));
        json_object_array_add(gs, json_object_new_string("system:masters"));
        json_object_array_add(gs, json_object_new_string("system:authenticated"));
        json_object_object_add(user, "groups", gs);
    }
    return user;
}

int agg_proxy(cu_apiserver *a, const cu_api_req *r, cu_api_resp *resp)
{
    char g[256], v[128];
    if (!a->fp_cert || !split_gv(r->path, g, sizeof(g), v, sizeof(v)))
        return 0;
    agg_target t;
    int code = 0;
    char msg[600] = "", reason[64] = "";
    if (!resolve(a, g, v, &t, &code, msg, sizeof(msg), reason, sizeof(reason)))
        return 0;
    if (code) {
        free(t.ca);
        resp_status(resp, 503, "ServiceUnavailable", "%s", msg);
        return 1;
    }
    /* the path and its query, escaped again */
    cu_buf pq;
    cu_buf_init(&pq, 8192);
    cu_buf_puts(&pq, r->path);
    CURL *esc = curl_easy_init();
    for (size_t i = 0; esc && i < r->nargs; i++) {
        char *k = curl_easy_escape(esc, r->args[2 * i], 0);
        char *val = curl_easy_escape(esc, r->args[2 * i + 1] ? r->args[2 * i + 1] : "", 0);
        cu_buf_printf(&pq, "%c%s=%s", i ? '&' : '?', k ? k : "", val ? val : "");
        curl_free(k);
        curl_free(val);
    }
    if (esc)
        curl_easy_cleanup(esc);
    json_object *user = agg_requester(a, r);
    cu_buf out;
    cu_buf_init(&out, (size_t)64 << 20);
    agg_call k = { .method = r->method,
                   .path_query = cu_buf_str(&pq),
                   .body = r->body,
                   .blen = r->body_len,
                   .ctype = r->content_type,
                   .accept = r->accept,
                   .user = user,
                   .timeout_ms = PROXY_TIMEOUT_S * 1000,
                   .out = &out };
    long st = agg_send(a, &t, &k);
    json_object_put(user);
    cu_buf_free(&pq);
    free(t.ca);
    if (!st) {
        resp_status(resp, 503, "ServiceUnavailable", "error trying to reach service: %s", k.err);
        cu_buf_free(&out);
        return 1;
    }
    resp->code = (int)st;
    resp->body = out.data ? out.data : strdup("");
    resp->body_len = out.len;
    snprintf(resp->content_type, sizeof(resp->content_type), "%s",
             k.rctype[0] ? k.rctype : "application/json");
    return 1;
}

/* ---- discovery ---- */

static json_object *group_doc(const char *group, json_object *versions)
{
    json_object *g = json_object_new_object();
    json_object_object_add(g, "name", json_object_new_string(group));
    json_object_object_add(g, "versions", versions);
    json_object *first = json_object_array_get_idx(versions, 0);
    json_object_object_add(g, "preferredVersion", json_object_get(first));
    return g;
}

/* Every APIService: a new APIServiceList, or NULL. */
static json_object *apiservices(cu_apiserver *a)
{
    const cu_rtype *art = rtype(a, "apiregistration.k8s.io", "apiservices");
    json_object *list = NULL;
    cu_status st;
    memset(&st, 0, sizeof(st));
    cu_list_opts lo = { 0 };
    if (!art || cu_store_list(a->s, art, NULL, &lo, &list, &st) != CU_OK)
        return NULL;
    return list;
}

json_object *agg_groups(cu_apiserver *a, json_object *doc, const char *only)
{
    json_object *list = apiservices(a);
    if (!list)
        return doc;
    json_object *items = cu_jget(list, "items");
    json_object *groups = NULL;
    if (doc)
        json_object_object_get_ex(doc, "groups", &groups);
    for (size_t i = 0;
         json_object_is_type(items, json_type_array) && i < json_object_array_length(items); i++) {
        json_object *as = json_object_array_get_idx(items, i);
        const char *g = cu_jpath_str(as, "spec.group"), *v = cu_jpath_str(as, "spec.version");
        if (!g || !v || !json_object_is_type(cu_jpath(as, "spec.service"), json_type_object) ||
            (only && strcmp(only, g) != 0))
            continue;
        if (!doc) { /* GET /apis/GROUP of a group served only through APIServices */
            doc = json_object_new_object();
            cu_jset_str(doc, "kind", "APIGroupList");
            groups = json_object_new_array();
            json_object_object_add(doc, "groups", groups);
        }
        json_object *gd = NULL;
        for (size_t j = 0; j < json_object_array_length(groups) && !gd; j++) {
            json_object *e = json_object_array_get_idx(groups, j);
            const char *n = cu_jstr(e, "name");
            if (n && strcmp(n, g) == 0)
                gd = e;
        }
        char gv[400];
        snprintf(gv, sizeof(gv), "%s/%s", g, v);
        json_object *ver = json_object_new_object();
        cu_jset_str(ver, "groupVersion", gv);
        cu_jset_str(ver, "version", v);
        if (!gd) {
            json_object *vs = json_object_new_array();
            json_object_array_add(vs, ver);
            json_object_array_add(groups, group_doc(g, vs));
        } else {
            json_object_array_add(cu_jget(gd, "versions"), ver);
        }
    }
    json_object_put(list);
    if (only && doc && groups && json_object_array_length(groups) == 1 &&
        !cu_jstr(doc, "name")) { /* /apis/GROUP: the APIGroup itself */
        json_object *gd = json_object_get(json_object_array_get_idx(groups, 0));
        json_object_put(doc);
        cu_jset_str(gd, "kind", "APIGroup");
        cu_jset_str(gd, "apiVersion", "v1");
        return gd;
    }
    return doc;
}

/* ---- the front proxy's identity, published ---- */

static void publish(cu_apiserver *a)
{
    const cu_rtype *crt = rtype(a, "", "configmaps");
    if (!crt)
        return;
    json_object *cm = json_object_new_object(), *md = json_object_new_object(),
                *data = json_object_new_object();
    cu_jset_str(cm, "apiVersion", "v1");
    cu_jset_str(cm, "kind", "ConfigMap");
    cu_jset_str(md, "name", "extension-apiserver-authentication");
    cu_jset_str(md, "namespace", "kube-system");
    json_object_object_add(cm, "metadata", md);
    cu_jset_str(data, "requestheader-client-ca-file", a->fp_ca);
    cu_jset_str(data, "requestheader-allowed-names", "[\"" PROXY_CN "\"]");
    cu_jset_str(data, "requestheader-username-headers", "[\"X-Remote-User\"]");
    cu_jset_str(data, "requestheader-group-headers", "[\"X-Remote-Group\"]");
    cu_jset_str(data, "requestheader-extra-headers-prefix", "[\"X-Remote-Extra-\"]");
    json_object_object_add(cm, "data", data);
    cu_status st;
    memset(&st, 0, sizeof(st));
    /* a kept store (--data-dir) has the last run's: replaced */
    if (cu_store_update(a->s, crt, "kube-system", "extension-apiserver-authentication", NULL,
                        json_object_get(cm), NULL, &st) != CU_OK) {
        memset(&st, 0, sizeof(st));
        cu_store_create(a->s, crt, "kube-system", json_object_get(cm), NULL, &st);
    }
    json_object_put(cm);
}

/* ---- availability ---- */

static void set_available(cu_apiserver *a, json_object *as, int ok, const char *reason,
                          const char *message)
{
    json_object *conds = cu_jpath(as, "status.conditions");
    for (size_t i = 0;
         json_object_is_type(conds, json_type_array) && i < json_object_array_length(conds); i++) {
        json_object *c = json_object_array_get_idx(conds, i);
        const char *ty = cu_jstr(c, "type"), *s = cu_jstr(c, "status");
        const char *r = cu_jstr(c, "reason"), *m = cu_jstr(c, "message");
        if (ty && strcmp(ty, "Available") == 0 && s && strcmp(s, ok ? "True" : "False") == 0 && r &&
            strcmp(r, reason) == 0 && m && strcmp(m, message) == 0)
            return; /* as it is */
    }
    char ts[40];
    cu_time_format(cu_clock_wall_ms(), ts, sizeof(ts));
    json_object *obj = json_object_get(as), *status = json_object_new_object(),
                *nc = json_object_new_array(), *c = json_object_new_object();
    cu_jset_str(c, "type", "Available");
    cu_jset_str(c, "status", ok ? "True" : "False");
    cu_jset_str(c, "lastTransitionTime", ts);
    cu_jset_str(c, "reason", reason);
    cu_jset_str(c, "message", message);
    json_object_array_add(nc, c);
    json_object_object_add(status, "conditions", nc);
    json_object_object_add(obj, "status", status);
    cu_status st;
    memset(&st, 0, sizeof(st));
    const char *name = cu_jpath_str(as, "metadata.name");
    cu_store_update(a->s, rtype(a, "apiregistration.k8s.io", "apiservices"), NULL, name ? name : "",
                    "status", obj, NULL, &st);
}

static void check_all(cu_apiserver *a)
{
    json_object *list = apiservices(a);
    if (!list)
        return;
    json_object *items = cu_jget(list, "items");
    for (size_t i = 0; json_object_is_type(items, json_type_array) &&
                       i < json_object_array_length(items) && !atomic_load(&a->stopping);
         i++) {
        json_object *as = json_object_array_get_idx(items, i);
        const char *g = cu_jpath_str(as, "spec.group"), *v = cu_jpath_str(as, "spec.version");
        if (!json_object_is_type(cu_jpath(as, "spec.service"), json_type_object)) {
            set_available(a, as, 1, "Local", "Local APIServices are always available");
            continue;
        }
        agg_target t;
        int code = 0;
        char msg[600] = "", reason[64] = "";
        if (!g || !v || !resolve(a, g, v, &t, &code, msg, sizeof(msg), reason, sizeof(reason)))
            continue;
        if (code) {
            free(t.ca);
            set_available(a, as, 0, reason, msg);
            continue;
        }
        char path[400];
        snprintf(path, sizeof(path), "/apis/%s/%s", g, v);
        json_object *user = json_object_new_object(), *gs = json_object_new_array();
        json_object_object_add(user, "username", json_object_new_string("system:kube-aggregator"));
        json_object_array_add(gs, json_object_new_string("system:masters"));
        json_object_object_add(user, "groups", gs);
        cu_buf out;
        cu_buf_init(&out, 1 << 20);
        agg_call k = { .method = "GET",
                       .path_query = path,
                       .user = user,
                       .timeout_ms = CHECK_TIMEOUT_S * 1000,
                       .out = &out };
        long rc = agg_send(a, &t, &k);
        json_object_put(user);
        cu_buf_free(&out);
        if (rc >= 200 && rc < 300) {
            set_available(a, as, 1, "Passed", "all checks passed");
        } else {
            char m2[3200];
            if (rc)
                snprintf(m2, sizeof(m2), "bad status from %s%s: %ld", t.url, path, rc);
            else
                snprintf(m2, sizeof(m2), "failing or missing response from %s%s: %s", t.url, path,
                         k.err);
            set_available(a, as, 0, "FailedDiscoveryCheck", m2);
        }
        free(t.ca);
    }
    json_object_put(list);
}

static void *checker(void *ud)
{
    cu_apiserver *a = ud;
    while (!atomic_load(&a->stopping)) {
        check_all(a);
        for (int i = 0; i < 10 && !atomic_load(&a->stopping); i++)
            sleep_ms(100);
    }
    return NULL;
}

cu_err agg_start(cu_apiserver *a, char *err, size_t errn)
{
    if (cu_tls_generate_client(PROXY_CN, &a->fp_ca, &a->fp_cert, &a->fp_key, err, errn) != CU_OK)
        return CU_EIO;
    publish(a);
    if (pthread_create(&a->agg_thread, NULL, checker, a) != 0) {
        snprintf(err, errn, "cannot start the APIService availability checker");
        return CU_EIO;
    }
    a->agg_running = 1;
    return CU_OK;
}

void agg_stop(cu_apiserver *a)
{
    if (a->agg_running) {
        atomic_store(&a->stopping, 1);
        pthread_join(a->agg_thread, NULL);
        a->agg_running = 0;
    }
    free(a->fp_ca);
    free(a->fp_cert);
    free(a->fp_key);
    a->fp_ca = a->fp_cert = a->fp_key = NULL;
}
