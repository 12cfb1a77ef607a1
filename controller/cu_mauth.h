/*
 * cu_mauth.h - authentication and authorization of the controller's
 * metrics and /debug/... endpoints, as controller-runtime's secure metrics
 * serving does it (filters.WithAuthenticationAndAuthorization): the
 * bearer token of a request is checked with a TokenReview
 * (authentication.k8s.io/v1), then the user it names with a
 * SubjectAccessReview (authorization.k8s.io/v1) for the non-resource URL
 * (the request's path as sent) and verb "get" (GET and HEAD alike). No or
 * an unknown token: 401 "Unauthorized"; not allowed: 403 "Authorization
 * denied for user NAME"; a review that failed (transport, non-2xx): 500,
 * not cached, logged.
 *
 * Results are cached as controller-runtime's delegating authenticator and
 * authorizer do: a token review 1 minute, an allowed access 5 minutes, a
 * denied one 30 s; tokens are kept only as SHA-1 digests. Concurrent
 * requests with the same token (or the same user and path) share one
 * review. A scrape every few seconds thus costs two API calls per few
 * minutes.
 *
 * Plugged into a cu_httpd as its gate (cu_mauth_gate), on the loop of the
 * client. Shutdown order: cu_httpd_stop, cu_mauth_detach, free the client
 * (pending reviews complete), cu_mauth_free.
 */
#ifndef CU_MAUTH_H
#define CU_MAUTH_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "cu_httpd.h"
#include "cu_kclient.h"

typedef struct cu_mauth cu_mauth;

typedef struct cu_mauth_opts {
    double authn_ttl_s; /* 0: 60 */
    double allow_ttl_s; /* 0: 300 */
    double deny_ttl_s;  /* 0: 30 */
    /* a failed review (once per distinct message and 10 s); may be NULL */
    void (*log)(void *ud, const char *msg);
    void *log_ud;
    /* the SubjectAccessReview's attributes for a path: a new object with
     * resourceAttributes or nonResourceAttributes (taken); NULL (or no
     * function): nonResourceAttributes {path, verb: get} */
    json_object *(*attrs)(void *ud, const char *path);
    void *attrs_ud;
    /* a refusal's message into msg (code 401, 403 or 500; user "" before
     * authentication); NULL: the one-line texts above */
    void (*refuse)(void *ud, int code, const char *user, const char *path, char *msg, size_t msgn);
    void *refuse_ud;
    /* members of this group are allowed without a review (NULL: none) */
    const char *always_allow_group;
} cu_mauth_opts;

/* Reviews through kc (borrowed). Returns NULL when out of memory. */
cu_mauth *cu_mauth_new(cu_kclient *kc, const cu_mauth_opts *o);
/* The server whose held requests it decides (cu_httpd_decide). */
void cu_mauth_attach(cu_mauth *a, cu_httpd *s);
/* After the server stopped: reviews still pending decide nothing. */
void cu_mauth_detach(cu_mauth *a);
/* A cu_httpd_gate; ud is the cu_mauth. */
int cu_mauth_gate(void *ud, const char *authz, const char *path, uint64_t id, char *msg,
                  size_t msgn);
/* A cu_httpd_gate_req: a proxy identity (cu_httpd_greq) is authorized
 * as it is (no TokenReview), with the group system:authenticated added
 * (as the generic API server does); without one, as cu_mauth_gate. */
int cu_mauth_gate_req(void *ud, const cu_httpd_greq *r, uint64_t id, char *msg, size_t msgn);
/* Reviews sent so far (for tests and the log). */
unsigned long cu_mauth_reviews(const cu_mauth *a);
/* Frees a; its client must be freed first (no review pending). */
void cu_mauth_free(cu_mauth *a);

/* Whether HOST:PORT names a loopback host (127.0.0.0/8, ::1, localhost);
 * ":PORT" (every address) does not. */
int cu_mauth_loopback(const char *addr);
/* The host of HOST:PORT or [V6]:PORT into host ("" for ":PORT"), for
 * the certificate; returns the length of the part before the last ':'. */
size_t cu_mauth_addr_host(const char *addr, char *host, size_t n);
/* The metrics server's certificate: DIR/CERT and DIR/KEY (PEM) when dir
 * is given, else a CA and a certificate for host generated now (the
 * chain, certificate then CA, in *cert_pem), as controller-runtime does
 * without a certificate directory. Returns malloc'ed strings, or -1 with
 * "FILE: problem" in err. */
int cu_mauth_certificate(const char *dir, const char *cert_name, const char *key_name,
                         const char *host, char **cert_pem, char **key_pem, char *err, size_t errn);

#endif
