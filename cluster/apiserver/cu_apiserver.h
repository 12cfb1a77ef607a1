/*
 * cu_apiserver.h - the embedded cluster's HTTP(S) API server
 * (libmicrohttpd): routing of the Kubernetes REST paths onto the store,
 * discovery, /openapi/v3, Table output, watch streaming, metav1.Status
 * errors, bearer-token authentication, TLS with a generated CA, the
 * kubeconfig it writes, and fault injection for tests.
 */
#ifndef CU_APISERVER_H
#define CU_APISERVER_H

#include "cu_store.h"
#include "cu_tls.h"

typedef struct cu_apiserver_opts {
    const char *listen;         /* "127.0.0.1:6443"; port 0 = pick a free one */
    int tls;                    /* HTTPS with a certificate generated for the run */
    const char *token_file;     /* bearer tokens, one per line; NULL = no auth */
    const char *kubeconfig_out; /* written atomically (temp file + rename) once ready */
    int admin;                  /* serve the fault-injection endpoint /cueue/faults */
    int verbose;                /* log every request on stderr (added by apiserver) */
    int max_conns_per_client;   /* connections from one address; 0 = 256 */
    int idle_timeout_s;         /* close connections idle this long (watches are
                                  exempt); 0 = 60 */
} cu_apiserver_opts;

typedef struct cu_apiserver cu_apiserver;

/* Starts serving s (borrowed; must outlive the server). Returns NULL with
 * a message in err on failure. */
cu_apiserver *cu_apiserver_start(cu_store *s, const cu_apiserver_opts *o, char *err, size_t errn);
/* The port actually bound. */
int cu_apiserver_port(const cu_apiserver *a);
/* The server's base URL ("https://127.0.0.1:PORT"). Borrowed. */
const char *cu_apiserver_url(const cu_apiserver *a);
/* Stops serving (ends watches, closes connections) and frees. */
void cu_apiserver_stop(cu_apiserver *a);

/* `cueue cluster` (the whole command: flags, nodes, controllers, signal
 * handling, serving until SIGTERM). argv[0] is "cluster". Returns the exit
 * code. */
int cu_cluster_main(int argc, char **argv);

/* The text of `cueue cluster --help` (static). */
const char *cu_cluster_help(void);

/* ---- fault injection (also reachable as POST /cueue/faults) ---- */
/* Applies one fault command (borrowed JSON object): {"dropWatches":true},
 * {"compact":true}, {"stallWatches":BOOL}, {"clear":true},
 * {"respond":{"match":RE,"code":409|429|500,"times":N,"retryAfter":S}},
 * {"delayMs":N,"match":RE,"times":N}. RE is a POSIX extended regex
 * matched against "METHOD /path" (no query). times absent = 1 for respond
 * and unlimited for delayMs; -1 = unlimited. Returns CU_EINVAL with a
 * message in err for a bad command. */
cu_err cu_apiserver_fault(cu_apiserver *a, json_object *cmd, char *err, size_t errn);
/* Returns a new JSON object listing the active faults (caller puts). */
json_object *cu_apiserver_faults_json(cu_apiserver *a);

/* ---- in-process request handling (the HTTP layer's core; tests) ---- */
typedef struct cu_api_req {
    const char *method;      /* "GET", "POST", ... */
    const char *path;        /* URL path without the query */
    const char *const *args; /* decoded query arguments: key, value, key, value... */
    size_t nargs;            /* number of key/value pairs */
    const char *accept;      /* headers, NULL when absent */
    const char *content_type;
    const char *authorization;
    const char *body; /* borrowed; need not be NUL-terminated */
    size_t body_len;
    int loopback;           /* the client connected from a loopback address */
    const char *user_agent; /* names the field manager of updates without fieldManager */
} cu_api_req;

typedef struct cu_api_resp {
    int code;   /* HTTP status */
    char *body; /* malloc'ed, NUL-terminated */
    size_t body_len;
    char content_type[96];
    int retry_after; /* seconds for a Retry-After header; 0 = none */
    char *warning;   /* malloc'ed Warning header value or NULL */
    void *watch;     /* an opened watch stream (body is NULL) */
} cu_api_resp;

/* A server that does not listen (tests): requests go through
 * cu_apiserver_handle. Free with cu_apiserver_stop. */
cu_apiserver *cu_apiserver_new_unbound(cu_store *s, const cu_apiserver_opts *o, char *err,
                                       size_t errn);
/* Handles one request; fills *out (caller frees with cu_api_resp_free). */
void cu_apiserver_handle(cu_apiserver *a, const cu_api_req *r, cu_api_resp *out);
/* For a watch response: the next event line (without newline) as the
 * client would see it (Table events when asked for), a new malloc'ed
 * string; NULL on timeout or when the stream ended (*ended set). */
char *cu_api_watch_next(cu_api_resp *r, int timeout_ms, int *ended);
void cu_api_resp_free(cu_api_resp *r);

/* ---- pieces exposed for tests ---- */
typedef struct cu_route {
    int kind; /* CU_ROUTE_* */
    char group[128], version[32], ns[254], resource[128], name[254], sub[32];
} cu_route;
enum {
    CU_ROUTE_UNKNOWN = 0,
    CU_ROUTE_API,     /* /api */
    CU_ROUTE_APIS,    /* /apis */
    CU_ROUTE_GROUP,   /* /apis/G */
    CU_ROUTE_GV,      /* /api/v1, /apis/G/V (APIResourceList) */
    CU_ROUTE_RESOURCE /* a collection, an object or a subresource */
};
/* Splits a URL path into a route. Returns CU_EINVAL for paths that are
 * not under /api or /apis (or malformed ones). */
cu_err cu_route_parse(const char *path, cu_route *out);

/* Evaluates a kubectl-style JSONPath (".spec.x", ".status.y[0].z",
 * ".metadata.labels['a']", "{.a.b}") on root. Returns the first match
 * (borrowed) or NULL. */
json_object *cu_jsonpath_get(json_object *root, const char *path);
/* Builds a meta.k8s.io/v1 Table for obj (one object or a List, borrowed):
 * columnDefinitions (when with_defs), one row per object with cells and
 * the object as include says (0 None, 1 Metadata, 2 Object). Returns a
 * new object. */
json_object *cu_table_build(const cu_rtype *rt, json_object *obj, int include, int with_defs,
                            int64_t now_ms);
/* Parses YAML or JSON text (one document) into a new json-c tree.
 * Returns NULL with a message in err on a syntax error or an empty
 * document. */
json_object *cu_yaml_to_json(const char *text, size_t len, char *err, size_t errn);

/* Decodes a Kubernetes protobuf body ("k8s\0" + runtime.Unknown) of a
 * Namespace, ConfigMap, Secret, ServiceAccount or PriorityClass (what
 * kubectl's typed clients send) into a new json-c object. Returns NULL
 * with a message in err for other kinds or malformed input. */
json_object *cu_k8s_protobuf_to_json(const unsigned char *data, size_t n, char *err, size_t errn);

/* ---- TLS and kubeconfig (cu_tls.c, cu_kubeconfig.c) ---- */
/* cu_tls_generate: base/cu_tls.h (the controller's metrics server uses it too) */
/* Writes a kubeconfig for url (cluster, user and context "cueue") to path
 * atomically (temp file in the same folder, then rename), mode 0600.
 * ca_pem and token may be NULL. */
cu_err cu_kubeconfig_write(const char *path, const char *url, const char *ca_pem, const char *token,
                           char *err, size_t errn);

#endif
