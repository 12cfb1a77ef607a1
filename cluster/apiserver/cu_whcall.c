/*
 * cu_whcall.c - calling a webhook's clientConfig, as kube-apiserver does
 * for admission and CRD conversion webhooks: clientConfig.url, or
 * clientConfig.service resolved to an address as the aggregation layer
 * resolves an APIService's Service (agg_resolve_service, cu_aggregator.c:
 * ExternalName, or an EndpointSlice endpoint; there is no kube-proxy),
 * the certificate checked against caBundle (for SERVICE.NS.svc with a
 * service), `?timeout=Ns` appended as kube-apiserver does, and the
 * request sent by agg_send on the calling connection's thread, with no
 * lock held. Transport errors are worded as kube-apiserver's (Go's)
 * messages where the client sees them. See internal/cu_apiserver_int.h.
 */
#include "cu_apiserver.h"
#include "cu_authn.h"
#include "cu_objmeta.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_apiserver_int.h"

/* Go's wording of a transport error of t's URL. */
static void go_error(const agg_call *k, const agg_target *t, char *out, size_t n)
{
    const char *hp = strstr(t->url, "://");
    hp = hp ? hp + 3 : t->url;
    int hl = (int)strcspn(hp, "/?");
    switch (k->curl_rc) {
    case CURLE_COULDNT_CONNECT:
        snprintf(out, n, "dial tcp %.*s: connect: connection refused", hl, hp);
        break;
    case CURLE_OPERATION_TIMEDOUT: snprintf(out, n, "context deadline exceeded"); break;
    case CURLE_PEER_FAILED_VERIFICATION:
        snprintf(out, n,
                 "tls: failed to verify certificate: x509: certificate signed by unknown "
                 "authority");
        break;
    case CURLE_COULDNT_RESOLVE_HOST:
        snprintf(out, n, "dial tcp: lookup %.*s: no such host", hl, hp);
        break;
    default: snprintf(out, n, "%s", k->err); break;
    }
}

json_object *wh_post(cu_apiserver *a, json_object *cc, long timeout_s, json_object *review,
                     char *err, size_t errn)
{
    agg_target t;
    memset(&t, 0, sizeof t);
    char pq[1400], shown[3600], msg[600] = "", reason[64] = "";
    const char *url = cu_jstr(cc, "url");
    json_object *svc = cu_jget(cc, "service");
    t.ca = agg_ca_bundle(cu_jstr(cc, "caBundle"));
    if (url && *url) {
        copy_str(t.url, sizeof t.url, url);
        snprintf(pq, sizeof pq, "%ctimeout=%lds", strchr(url, '?') ? '&' : '?', timeout_s);
        snprintf(shown, sizeof shown, "%s%s", url, pq);
    } else if (json_object_is_type(svc, json_type_object)) {
        const char *sns = cu_jstr(svc, "namespace"), *sn = cu_jstr(svc, "name");
        const char *path = cu_jstr(svc, "path");
        int64_t port = cu_jas_int64(cu_jget(svc, "port"), 443);
        snprintf(pq, sizeof pq, "%s?timeout=%lds", path && *path ? path : "", timeout_s);
        snprintf(shown, sizeof shown, "https://%s.%s.svc:%lld%s", sn ? sn : "", sns ? sns : "",
                 (long long)port, pq);
        if (agg_resolve_service(a, sns, sn, port, &t, msg, sizeof msg, reason, sizeof reason)) {
            snprintf(err, errn, "failed to call webhook: Post \"%s\": %s", shown, msg);
            free(t.ca);
            return NULL;
        }
    } else {
        snprintf(err, errn, "failed to call webhook: clientConfig has neither url nor service");
        free(t.ca);
        return NULL;
    }
    const char *body = json_object_to_json_string_ext(review, JSON_C_TO_STRING_PLAIN |
                                                                  JSON_C_TO_STRING_NOSLASHESCAPE);
    cu_buf out;
    cu_buf_init(&out, (size_t)64 << 20);
    agg_call k = { .method = "POST",
                   .path_query = pq,
                   .body = body,
                   .blen = strlen(body),
                   .ctype = "application/json",
                   .accept = "application/json, */*",
                   .timeout_ms = timeout_s * 1000,
                   .out = &out };
    long code = agg_send(a, &t, &k);
    free(t.ca);
    json_object *ans = NULL;
    if (!code) {
        char ge[400];
        go_error(&k, &t, ge, sizeof ge);
        snprintf(err, errn, "failed to call webhook: Post \"%s\": %s", shown, ge);
    } else if (code < 200 || code >= 300) {
        snprintf(err, errn,
                 "failed to call webhook: the server responded with the status code %ld but did "
                 "not return more information",
                 code);
    } else {
        char perr[200] = "";
        int is_null = 0;
        ans =
            out.data ? cu_json_parse_checked(out.data, out.len, &is_null, perr, sizeof perr) : NULL;
        if (!json_object_is_type(ans, json_type_object)) {
            json_object_put(ans);
            ans = NULL;
            snprintf(err, errn, "received invalid webhook response: %s",
                     perr[0] ? perr : "not a JSON object");
        }
    }
    cu_buf_free(&out);
    return ans;
}

void wh_uid(char *out, size_t n)
{
    /* a version 4 UUID's shape; unique enough to pair a review with its
     * answer */
    static _Atomic unsigned long long seq;
    unsigned long long x = (unsigned long long)cu_clock_wall_ms() * 1000003ULL ^ ++seq * 7919ULL;
    snprintf(out, n, "%08llx-%04llx-4%03llx-8%03llx-%012llx", x & 0xffffffffULL,
             (x >> 32) & 0xffffULL, (seq >> 4) & 0xfffULL, seq & 0xfffULL,
             (x * 2654435761ULL) & 0xffffffffffffULL);
}
