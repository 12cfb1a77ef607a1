/*
 * cu_kclient.h - asynchronous Kubernetes REST client: libcurl multi
 * driven by a libev loop (curl_multi_socket_action, one ev_timer, one
 * place where transfers complete), keep-alive and HTTP/2 where libcurl has
 * it, per-request timeouts, a client-side token-bucket rate limiter (QPS
 * and burst shared by all requests), retries with exponential backoff and
 * jitter on connection errors, 429 (honouring Retry-After) and 5xx, and
 * bounded response buffers. Streaming requests (watches) deliver complete
 * lines as they arrive.
 *
 * Callbacks are never called from inside the function that started the
 * request (they are deferred to the loop).
 */
#ifndef CU_KCLIENT_H
#define CU_KCLIENT_H

#include <ev.h>
#include <stdint.h>

#include "cu_base.h"
#include "cu_kconfig.h"

typedef struct cu_kclient cu_kclient;
typedef struct cu_kreq cu_kreq;

/* Kueue's current clientConnection defaults (apis/config/v1beta2
 * defaults.go, raised from 50/100 to 300/500 and then to 1000/1000,
 * kueue PR #12440 and #15206). */
#define CU_KCLIENT_DEFAULT_QPS 1000.0
#define CU_KCLIENT_DEFAULT_BURST 1000

typedef struct cu_kclient_opts {
    double qps;            /* 0: Kueue's default (CU_KCLIENT_DEFAULT_QPS) */
    int burst;             /* 0: Kueue's default (CU_KCLIENT_DEFAULT_BURST) */
    int timeout_ms;        /* per request (not watches); 0: 30000 */
    int max_retries;       /* 0: 5 */
    size_t max_body;       /* response cap; 0: 64 MiB */
    size_t max_line;       /* watch line cap; 0: 16 MiB */
    const cu_clock *clock; /* for credential expiry (exec plugins); NULL: the
                                   loop's clock. Rate limiting and backoff always
                                   run on the loop's timers. */
    uint64_t jitter_seed;  /* for deterministic tests */
    /* Optional: called at the end of every attempt (retries and watches
     * included) with the method ("GET" for a watch too; watch = 1), the
     * HTTP status (0: no response) and its duration. For metrics. */
    void (*on_attempt)(void *ud, const char *method, int watch, int code, double seconds);
    void *attempt_ud;
    /* Optional: called at the end of every attempt (not a cancelled one)
     * with its outcome, for reporting failures: the HTTP status (0: no
     * response), curl's error text when there was no response (NULL
     * otherwise; a TLS verification failure, say), and the response body
     * (borrowed, NULL when none; for a watch only a non-2xx answer's).
     * Called with attempt_ud. */
    void (*on_outcome)(void *ud, int code, const char *error, const char *body);
} cu_kclient_opts;

typedef struct cu_kresp {
    int code;         /* HTTP status, 0 on a transport error */
    const char *body; /* borrowed, NUL-terminated; valid during the callback */
    size_t len;
    const char *error; /* transport error text, or NULL */
    int retries;       /* how many retries it took */
} cu_kresp;

typedef void (*cu_kdone_fn)(cu_kclient *c, const cu_kresp *r, void *ud);
/* A watch line (one JSON event, no newline, NUL-terminated; borrowed for
 * the call); return 0 to go on, non-zero to stop the stream. It may start
 * or cancel requests (cancelling its own stream included). */
typedef int (*cu_kline_fn)(cu_kclient *c, const char *line, size_t len, void *ud);

/* Creates a client on loop for cfg (borrowed; must outlive the client).
 * A bearer token is sent over https, and over plain http only to a
 * loopback server. Returns NULL with a message in d on bad options. */
cu_kclient *cu_kclient_new(struct ev_loop *loop, cu_kconfig *cfg, const cu_kclient_opts *o,
                           cu_diag *d);
/* Frees the client (not from inside one of its callbacks). Requests still pending complete during the call
 * (done with error "client closed"); their callbacks must not start new
 * requests. */
void cu_kclient_free(cu_kclient *c);
/* The loop the client runs on (borrowed). */
struct ev_loop *cu_kclient_loop(const cu_kclient *c);

/* Starts a request: method "GET"/"POST"/"PUT"/"PATCH"/"DELETE", path with
 * query ("/api/v1/namespaces/default/pods?limit=500"), body may be NULL,
 * content_type for the body (e.g. "application/merge-patch+json"). done
 * is called once. Returns a handle (valid until done runs) or NULL. */
cu_kreq *cu_kclient_request(cu_kclient *c, const char *method, const char *path, const char *body,
                            size_t len, const char *content_type, cu_kdone_fn done, void *ud);
/* PATCH flavours and their content types. */
typedef enum cu_patch_type {
    CU_PATCH_MERGE = 0, /* application/merge-patch+json (RFC 7386) */
    CU_PATCH_JSON,      /* application/json-patch+json (RFC 6902; "test" ops guard) */
    CU_PATCH_APPLY,     /* application/apply-patch+yaml (server-side apply; JSON is YAML) */
    CU_PATCH_STRATEGIC  /* application/strategic-merge-patch+json (built-in kinds only) */
} cu_patch_type;
const char *cu_patch_content_type(cu_patch_type t);

/* Starts a PATCH of path (no query) with body of type t. Server-side
 * apply needs field_manager (sent as ?fieldManager=); force adds
 * &force=true (take over fields another manager owns). A merge or JSON
 * patch may also carry a field manager (NULL: none). Like
 * cu_kclient_request otherwise; NULL on a bad argument. */
cu_kreq *cu_kclient_patch(cu_kclient *c, const char *path, cu_patch_type t, const char *body,
                          size_t len, const char *field_manager, int force, cu_kdone_fn done,
                          void *ud);

/* Starts a streaming GET (watch): on_line for each line, done at the end
 * (code 200 and error NULL when the server closed it, or when on_line
 * returned non-zero to stop it). A non-2xx answer is not split into lines:
 * done gets its code and body. A partial last line is dropped. No retries
 * and no request timeout. */
cu_kreq *cu_kclient_stream(cu_kclient *c, const char *path, cu_kline_fn on_line, cu_kdone_fn done,
                           void *ud);
/* Cancels a request; done is called with error "cancelled". */
void cu_kclient_cancel(cu_kreq *r);

typedef struct cu_kclient_stats {
    uint64_t requests;        /* HTTP attempts sent (retries included) */
    uint64_t retries;         /* attempts that were retries */
    uint64_t throttled_ms;    /* time requests waited for the rate limiter */
    uint64_t bytes_in;        /* response body bytes received */
    uint64_t by_code[6];      /* per attempt: 0 transport/client errors, 1..5: 1xx..5xx */
    uint64_t new_connections; /* connections opened (CURLINFO_NUM_CONNECTS summed);
                                   with keep-alive it stays below requests */
} cu_kclient_stats;
void cu_kclient_stats_get(const cu_kclient *c, cu_kclient_stats *out);

/* How many requests may start now and still leave half the burst in the
 * rate limiter for others: 0 while any request waits for a token. For
 * writes that can wait (a pending Workload's message): they take only
 * what admissions leave. */
int cu_kclient_spare(cu_kclient *c);

#endif
