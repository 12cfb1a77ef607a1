/*
 * cu_apiserver_int.h - the API server's internals, shared by its files
 * (cu_apiserver.c: helpers, routing, the request core, watch streams;
 * cu_apihttp.c: the libmicrohttpd layer and life cycle; cu_jsonpath.c:
 * JSONPath; cu_tables.c: Table output and ages; cu_discovery.c:
 * discovery and /openapi/v3; cu_reqbody.c: request bodies and their
 * validation; cu_verbs.c: the verbs and field management; cu_faults.c:
 * fault injection). Only the server's own files include it. Fault rules are
 * guarded by a->mu; nothing else is mutable after start except the stop
 * flag. Returned strings and JSON are new (caller frees or puts) unless a
 * prototype says they are borrowed.
 */
#ifndef CU_CU_APISERVER_INT_H
#define CU_CU_APISERVER_INT_H

#include <regex.h>
#include <stdatomic.h>
#include <stdint.h>

#include "cu_clock.h"
#include "cu_duration.h"
#include "cu_json.h"
#include "cu_apiserver.h"

/* kube-apiserver's limits: request bodies over 3 MiB get 413 (its
 * MaxRequestBodyBytes), and idle connections are closed after a while. */
#define BODY_LIMIT ((size_t)3 << 20)
#define CONN_PER_CLIENT_DEFAULT 256 /* connections from one address */
#define IDLE_TIMEOUT_DEFAULT 60     /* seconds without traffic (not watches) */
#define WATCH_SLICE_MS 500          /* how often a blocked watch looks around */
#define TABLE_CT "application/json;as=Table;v=v1;g=meta.k8s.io"
/* the stack of a connection thread: recursive json-c code (serialise, free,
 * copy, compare) and the patch, schema and field-management walkers must
 * reach objects nested CU_JSON_MAX_DEPTH deep, under ASan too */
#define CONN_STACK ((intptr_t)64 << 20)

enum { FAULT_RESPOND = 1, FAULT_DELAY = 2 };

typedef struct fault_rule {
    int kind;
    char *match; /* the regex text, for listing */
    regex_t re;
    int code, times, retry_after, delay_ms;
    struct fault_rule *next;
} fault_rule;

struct cu_apiserver {
    cu_store *s;
    struct MHD_Daemon *d;
    int port, tls, admin, verbose;
    char url[300];
    char **tokens;
    size_t ntokens;
    cu_authn *authn; /* TokenReview and SubjectAccessReview (cu_authn.h) */
    char *ca_pem, *cert_pem, *key_pem;
    char *fp_ca, *fp_cert, *fp_key; /* the front proxy (cu_aggregator.c) */
    pthread_t agg_thread;
    int agg_running;
    pthread_mutex_t mu; /* guards faults and stall */
    fault_rule *faults;
    int stall;
    atomic_int stopping;
};

typedef struct watch_stream {
    cu_apiserver *a;
    cu_watch *w;
    const cu_rtype *rt;
    json_object *crd; /* the CRD when events go through its conversion webhook */
    int table, include, first;
    int64_t deadline;    /* monotonic ms (mono_ms); 0 = none */
    int fd;              /* the client socket, -1 in-process */
    cu_watch_ev pending; /* the event being sent: head, object, "}\n" */
    char head[48];       /* {"type":"...","object": */
    size_t hlen, off;    /* off: bytes of the line sent */
    cu_watch_ev held;    /* an event that arrived as a stall began; sent after it */
    int ended;
} watch_stream;

/* o's metadata, created when absent (o an object); a metadata that is not
 * an object is returned as it is (cu_jchild would replace it). Borrowed. */
static inline json_object *jmeta(json_object *o)
{
    json_object *m = cu_jget(o, "metadata");
    if (!m && o && json_object_is_type(o, json_type_object)) {
        m = json_object_new_object();
        json_object_object_add(o, "metadata", m);
    }
    return m;
}

/* cu_apiserver.c */
/* Sleeps ms milliseconds. */
void sleep_ms(int ms);
/* Copies src into dst of size n, truncated and terminated. */
void copy_str(char *dst, size_t n, const char *src);
/* The query parameter k of the request ("" without a value), or NULL. Borrowed. */
const char *arg(const cu_api_req *r, const char *k);
/* 1 if the query parameter k is "true" or "1". */
int arg_true(const cu_api_req *r, const char *k);
/* Sets the response to obj serialized (takes obj). */
void resp_json(cu_api_resp *r, int code, json_object *obj);
/* cu_aggregator.c: a request under /apis/GROUP/VERSION of an APIService
 * with a service, proxied (1, resp filled), else 0; the groups of
 * APIServices added to an APIGroupList (doc may be NULL: a new one for
 * only's group; with only, the APIGroup) - returns doc or the new
 * document; the front proxy's certificate, its ConfigMap and the
 * availability checker started, and stopped. */
int agg_proxy(cu_apiserver *a, const cu_api_req *r, cu_api_resp *resp);
/* The requester as the aggregator and webhooks pass it on: {username,
 * groups} of the token file's user, or system:admin in system:masters
 * without one (new). */
json_object *agg_requester(cu_apiserver *a, const cu_api_req *r);
/* Where a Service is reached (there is no kube-proxy), for APIServices and
 * webhooks: url "https://HOST:PORT" (or a webhook's whole URL), the name its
 * certificate must carry (SERVICE.NS.svc; "" for a URL: its host), the CA
 * (PEM, malloc'ed; NULL: the system's). */
typedef struct agg_target {
    char url[2048];
    char server_name[300];
    int skip_verify;
    char *ca;
} agg_target;
/* Resolves Service ns/name at port into t (url, server_name): 0, or 503 with
 * kube-aggregator's reason (ServiceNotFound, ServicePortError,
 * MissingEndpoints) and message. */
int agg_resolve_service(cu_apiserver *a, const char *ns, const char *name, int64_t port,
                        agg_target *t, char *msg, size_t msgn, char *reason, size_t rn);
/* A caBundle (base64 of PEM) decoded: malloc'ed, NULL when empty. */
char *agg_ca_bundle(const char *b64);
/* One HTTPS request (blocking the calling connection thread only; no lock
 * held). user: the requester sent as the front proxy (its client
 * certificate, X-Remote-User/Group), or NULL for none (webhooks). */
typedef struct agg_call {
    const char *method, *path_query, *body;
    size_t blen;
    const char *ctype, *accept;
    json_object *user;
    long timeout_ms;
    cu_buf *out; /* the answer's body */
    /* out: */
    char rctype[96];
    char err[300];
    int curl_rc; /* CURLcode: 0, or the transport error (err says it) */
} agg_call;
/* The answer's HTTP status, or 0 on a transport error (k->err). */
long agg_send(cu_apiserver *a, const agg_target *t, agg_call *k);
json_object *agg_groups(cu_apiserver *a, json_object *doc, const char *only);
cu_err agg_start(cu_apiserver *a, char *err, size_t errn);
void agg_stop(cu_apiserver *a);
/* cu_whcall.c: a review (borrowed) POSTed to a webhook's clientConfig
 * (url, or service resolved by agg_resolve_service; caBundle;
 * ?timeout=Ns), on the calling thread. The answer (new), or NULL with
 * kube-apiserver's wording in err ("failed to call webhook: Post ...").
 * wh_uid: a new review uid. */
json_object *wh_post(cu_apiserver *a, json_object *cc, long timeout_s, json_object *review,
                     char *err, size_t errn);
void wh_uid(char *out, size_t n);
/* cu_crdconv.c: the storage type of rt's resource when a request in rt's
 * version needs the CRD's conversion webhook (strategy Webhook, rt not
 * the storage version; *crd gets the CRD, new), else NULL. conv_objects
 * converts the objects of the array objs in place to version (objects
 * already there are not sent); conv_one one object (*obj replaced). 0, or
 * -1 with kube-apiserver's 500 in st. */
const cu_rtype *conv_storage(cu_apiserver *a, const cu_rtype *rt, json_object **crd);
int conv_objects(cu_apiserver *a, const cu_rtype *rt, json_object *crd, json_object *objs,
                 const char *version, cu_status *st);
int conv_one(cu_apiserver *a, const cu_rtype *rt, json_object *crd, json_object **obj,
             const char *version, cu_status *st);
/* cu_admission.c: the mutating webhooks on a write of rt (sub: the
 * subresource or NULL; op: CREATE, UPDATE, DELETE; *obj the new object,
 * replaced when patched, NULL for DELETE; old the stored one or NULL),
 * then, after defaulting and validation, the validating ones. 0, or -1
 * with the response set (a denial, a failure under failurePolicy Fail).
 * Warnings are added to resp. adm_has_webhooks: 1 when any configuration
 * exists (a cheap test before the work). adm_check_config: kube-apiserver's
 * defaults (in place) and validation of a webhook configuration (0, or -1
 * with the 422 set; 0 for other kinds). */
int adm_mutate(cu_apiserver *a, const cu_api_req *r, const cu_rtype *rt, const char *sub,
               const char *op, const char *ns, const char *name, json_object **obj,
               json_object *old, cu_api_resp *resp);
int adm_validate(cu_apiserver *a, const cu_api_req *r, const cu_rtype *rt, const char *sub,
                 const char *op, const char *ns, const char *name, json_object *obj,
                 json_object *old, cu_api_resp *resp);
int adm_has_webhooks(cu_apiserver *a, const cu_rtype *rt);
int adm_check_config(const cu_rtype *rt, json_object *o, cu_api_resp *resp);
/* Sets the response to the store status st (borrowed). */
void resp_st(cu_api_resp *r, const cu_status *st);
/* Adds a Warning header (299 - "text", quoted as kube-apiserver does) to
 * the response; several are kept one per line of r->warning. */
void resp_add_warning(cu_api_resp *r, const char *text);
/* Sets the response to a metav1.Status with this code, reason and message. */
void resp_status(cu_api_resp *r, int code, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Sets kube-apiserver's 404 for a path nothing serves. */
void resp_not_found_path(cu_api_resp *r);
/* 1 for /healthz, /readyz, /livez and /version (served without a token). */
int open_path(const char *p);
/* 1 if no tokens are configured or the request's bearer token is one. */
int authorized(cu_apiserver *a, const cu_api_req *r);
/* The next event for the client (1, in *ev), or 0: *ended: 1 = end of
 * stream, 2 = the client went away. timeout_ms < 0: wait until something
 * happens. */
int ws_next(watch_stream *ws, int timeout_ms, int *ended, cu_watch_ev *ev);
/* Closes the watch and frees the stream. */
void ws_free(watch_stream *ws);

/* cu_tables.c */
/* The length of o if it is an array, else 0. */
size_t jlen(json_object *o);

/* cu_discovery.c */
/* 1 if the type has a status subresource (every built-in type does). */
int has_status(const cu_rtype *rt);
/* These build discovery and OpenAPI documents: new, caller puts. */
json_object *resource_list(cu_store *s, const char *group, const char *version);
json_object *group_list(cu_store *s, const char *only);
json_object *version_json(void);
json_object *openapi_gv(cu_store *s, const char *group, const char *version);
json_object *openapi_root(cu_store *s);

/* cu_reqbody.c */
/* 1 if the content type ct is want (case-insensitive, parameters ignored). */
int has_ct(const char *ct, const char *want);
/* Decodes the request body (JSON, or YAML when the content type says so;
 * new, caller puts). On failure sets a 400 response and returns NULL. */
json_object *decode_body(const cu_api_req *r, cu_api_resp *resp, int yaml);
/* The type's apiVersion ("v1", "batch/v1") into out. */
void api_version_of(const cu_rtype *rt, char *out, size_t n);
/* Checks and completes apiVersion/kind/namespace/name of a body for rt.
 * Returns 0, or -1 with a 400 response set. */
int fix_identity(const cu_rtype *rt, json_object *o, const char *ns, const char *name,
                 cu_api_resp *resp);
/* Built-in kinds are Go types in kube-apiserver, whose empty maps and
 * lists with omitempty vanish on decoding: drops empty (or null)
 * metadata.labels, annotations, finalizers, ownerReferences and the
 * ConfigMap and Secret data maps of o. Custom resources keep them, and so
 * do Jobs for now (docs/cluster.md, Known differences). */
void drop_empty_builtin(const cu_rtype *rt, json_object *o);
/* fieldValidation of custom resources (Strict, Warn, Ignore): 0, or -1
 * with a 400 set. */
int check_unknown_fields(const cu_api_req *r, const cu_rtype *rt, json_object *o,
                         cu_api_resp *resp);
/* Validates o against its CRD schema without pruning or defaulting: 0, or -1
 * with the 422 set. */
int dry_validate(const cu_rtype *rt, json_object *o, cu_api_resp *resp);
/* ObjectMeta and the built-in kinds' field types (cu_objmeta.c): 0, or -1
 * with kube-apiserver's 422 Invalid set. */
int objmeta_check(const cu_rtype *rt, json_object *o, cu_api_resp *resp);
/* Validates a patch's result as the body of a PUT: 0, or -1 with the
 * response set. */
int check_patched(const cu_rtype *rt, json_object *cur, json_object *next, const char *name,
                  cu_api_resp *resp);
/* 1 if the request has dryRun=All. */
int is_dry_run(const cu_api_req *r);

/* cu_verbs.c */
/* Sets kube-apiserver's 405. */
void method_not_allowed(cu_api_resp *resp);
/* Serves a request routed to a resource (all verbs); fills resp. */
void handle_resource(cu_apiserver *a, const cu_api_req *r, const cu_route *rt_, cu_api_resp *resp);

/* cu_faults.c */
/* Frees a list of fault rules. */
void fault_free(fault_rule *f);
/* Applies the fault rules to a request. Returns 1 when a response was
 * injected. */
int apply_faults(cu_apiserver *a, const cu_api_req *r, cu_api_resp *resp);
/* The admin endpoint that lists, adds and clears fault rules (admin
 * servers only, loopback clients only). */
void handle_faults(cu_apiserver *a, const cu_api_req *r, cu_api_resp *resp);

#endif
