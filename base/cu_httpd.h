/*
 * cu_httpd.h - the controller's small HTTP servers (health probes and
 * metrics): libmicrohttpd daemons without threads of their own, driven by
 * the controller's libev loop (one level-triggered ev_io per descriptor
 * MHD wants, its timeouts in an ev_timer). HTTP/1.1 with keep-alive, GET
 * and HEAD (HEAD gets the headers GET would), and POST when a server has
 * a POST handler (cu_httpd_opts.post: webhooks); 405 with Allow otherwise, at most 64 connections (more wait in the listen backlog), each
 * closed after 5 s without progress, or when a request's headers are not
 * in 10 s after it opened or answered the last one (slow clients). The handler runs on the loop, so it
 * sees the controller's state without locks.
 */
#ifndef CU_HTTPD_H
#define CU_HTTPD_H

#include <ev.h>
#include <stddef.h>
#include <stdint.h>

#include "cu_base.h"

typedef struct cu_httpd cu_httpd;

/* Fills body (bounded cu_buf, already initialised, 64 MiB) and *ctype
 * (static string) for path (query string removed; query is the rest, ""
 * when none; both as the client sent them, not URL-decoded) and accept
 * (the Accept header, "" when none), and returns the HTTP status code
 * (100..599; anything else is answered with 500). */
typedef int (*cu_httpd_handler)(void *ud, const char *path, const char *query, const char *accept,
                                cu_buf *body, const char **ctype);

/* A gate sees every GET and HEAD before the handler: authz is the
 * Authorization header ("" when none), path as sent. It returns 0 to let
 * the request through, a status (401, 403, 500...) to refuse it with msg
 * (filled by the gate, one line) as the text body, or CU_HTTPD_WAIT: the
 * request is held (its connection suspended, the loop goes on) until
 * cu_httpd_decide(s, id, ...) is called, later, from the loop. */
#define CU_HTTPD_WAIT (-1)
typedef int (*cu_httpd_gate)(void *ud, const char *authz, const char *path, uint64_t id, char *msg,
                             size_t msgn);

/* What a request-aware gate (cu_httpd_opts.gate_req) sees. The proxy
 * identity is set only over HTTPS with client_ca_pem, when the client
 * presented a certificate that verifies against it, whose common name is
 * one of proxy_names (any when there are none), and sent a user header:
 * an authenticating proxy such as kube-apiserver's aggregator. Strings
 * are valid during the call only. */
typedef struct cu_httpd_greq {
    const char *authz; /* the Authorization header, "" when none */
    const char *path;  /* as sent, without the query */
    const char *proxy_user;
    const char *const *proxy_groups;
    size_t nproxy_groups;
} cu_httpd_greq;
typedef int (*cu_httpd_gate_req)(void *ud, const cu_httpd_greq *r, uint64_t id, char *msg,
                                 size_t msgn);

/* A POST request (cu_httpd_opts.post): its whole body (len bytes, not
 * NUL-terminated; NULL when empty) and Content-Type ("" when none), read
 * before the call (at most post_limit bytes, else 413 without a call).
 * Answers as cu_httpd_handler does. Not gated: a POST handler
 * authenticates on its own (webhooks are called by kube-apiserver). */
typedef int (*cu_httpd_post_handler)(void *ud, const char *path, const char *query,
                                     const char *content_type, const char *data, size_t len,
                                     cu_buf *out, const char **ctype);

typedef struct cu_httpd_opts {
    const char *cert_pem;       /* HTTPS with this certificate (chain, PEM) and key; */
    const char *key_pem;        /* both NULL: plain HTTP */
    cu_httpd_gate gate;         /* NULL: none */
    cu_httpd_gate_req gate_req; /* instead of gate; NULL: none */
    void *gate_ud;
    int gate_json; /* a refusal's msg is a JSON body (application/json); msgn is 1024 */
    /* client certificates (HTTPS only): requested, verified against this
     * CA bundle (PEM); NULL: not requested */
    const char *client_ca_pem;
    const char *const *proxy_names; /* allowed common names; none: any */
    size_t nproxy_names;
    const char *const *user_headers; /* none: X-Remote-User */
    size_t nuser_headers;
    const char *const *group_headers; /* none: X-Remote-Group */
    size_t ngroup_headers;
    double header_timeout_s;    /* a request's headers must be in this long after the
                                 connection opened or its last response; 0: 10 */
    cu_httpd_post_handler post; /* NULL: POST is refused with 405 */
    size_t post_limit;          /* the largest POST body; 0: 8 MiB */
    /* SO_REUSEPORT: a second server on the same address may start before
     * this one stops (a new certificate without a moment of no listener);
     * both must set it */
    int reuse_port;
} cu_httpd_opts;

/* Listens on addr: HOST:PORT, [V6]:PORT or :PORT (every address); port 0
 * picks a free one. what names the server in messages ("health probes").
 * Returns the server (caller frees with cu_httpd_stop), or NULL with
 * "WHAT ADDR: problem" in err. *port_out gets the bound port. */
cu_httpd *cu_httpd_start(struct ev_loop *loop, const char *addr, const char *what,
                         cu_httpd_handler h, void *ud, char *err, size_t errn, int *port_out);
/* The same with options (o may be NULL; borrowed, copied as needed). */
cu_httpd *cu_httpd_start_opts(struct ev_loop *loop, const char *addr, const char *what,
                              cu_httpd_handler h, void *ud, const cu_httpd_opts *o, char *err,
                              size_t errn, int *port_out);
/* The gate's decision on request id (status as the gate's return value,
 * never CU_HTTPD_WAIT; msg may be NULL). An id no longer waiting (the
 * client is gone) is ignored. */
void cu_httpd_decide(cu_httpd *s, uint64_t id, int status, const char *msg);
/* Stops the server; requests still waiting for the gate are answered 503
 * first. The gate is not called again. */
void cu_httpd_stop(cu_httpd *s);

#endif
