/*
 * cu_store.h - the embedded cluster's object store: a registry of served
 * resource types and the objects of each, with Kubernetes semantics
 * (one global resourceVersion counter, uid, creationTimestamp,
 * generation, generateName, optimistic concurrency, finalizers, status
 * subresource, label and field selectors, pagination, a bounded event
 * history for watches). Objects are json-c trees.
 *
 * Thread safety: every function takes the store's mutex; callers may use
 * the store from several threads (the HTTP server runs one thread per
 * connection). Watchers block on a condition variable.
 *
 * Ownership: functions that return objects return NEW json-c references
 * (deep copies) the caller must json_object_put; functions that take an
 * object take ownership of it ("takes").
 */
#ifndef CU_STORE_H
#define CU_STORE_H

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>

#include "cu_base.h"

/* A Kubernetes error (metav1.Status) produced by a store operation. */
typedef struct cu_status {
    int code;                             /* HTTP code: 404, 409, 422, 410, 400, 405, 429, 500 */
    char reason[32];                      /* NotFound, AlreadyExists, Conflict, Invalid, Gone,
                                BadRequest, MethodNotAllowed, TooManyRequests,
                                InternalError */
    char message[1024];                   /* kube-apiserver's wording, e.g.
                                `pods "a" not found`,
                                `Operation cannot be fulfilled on pods "a": the object
                                 has been modified; please apply your changes to the
                                 latest version and try again` */
    char kind[64], name[256], group[128]; /* details */
    size_t ncauses;
    struct {
        char type[32];
        char field[256];
        char message[512];
    } causes[32];
    int empty_details; /* "details": {} when there are none (kube-apiserver's
                          404 for an unknown resource, 405) */
} cu_status;

/* Fills st (message formatted) and returns a cu_err matching code. */
cu_err cu_status_set(cu_status *st, int code, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Returns a new metav1.Status JSON object for st. */
json_object *cu_status_json(const cu_status *st);

typedef struct cu_pcol { /* additionalPrinterColumns entry */
    char *name, *type, *format, *description, *json_path;
    int priority;
} cu_pcol;

/* A served resource. Strings are owned by the registry. */
typedef struct cu_rtype {
    char *group;     /* "" for the core group */
    char *version;   /* "v1" */
    char *resource;  /* plural, "clusterqueues" */
    char *singular;  /* "clusterqueue" */
    char *kind;      /* "ClusterQueue" */
    char *list_kind; /* "ClusterQueueList" */
    int namespaced;
    int status_sub; /* has a /status subresource */
    char **short_names;
    size_t nshort;
    char **categories;
    size_t ncat;
    cu_pcol *cols;
    size_t ncols;                   /* printer columns (beyond NAME, AGE) */
    json_object *schema;            /* openAPIV3Schema (CRDs), owned, or NULL */
    struct cu_schema_rx *schema_rx; /* its compiled patterns (cu_schema.h), owned */
    int from_crd;                   /* registered by a CustomResourceDefinition */
    int storage;                    /* storage version among the group's versions */
    char *deprecation;              /* a deprecated CRD version's warning, or NULL */
} cu_rtype;

typedef struct cu_store cu_store;

/* Returns a new store with the built-in resources registered (namespaces,
 * pods, nodes, events (v1 and events.k8s.io/v1), configmaps, secrets,
 * serviceaccounts, batch/v1 jobs, coordination.k8s.io/v1 leases,
 * scheduling.k8s.io/v1 priorityclasses, apiextensions.k8s.io/v1
 * customresourcedefinitions) and the namespaces default, kube-system,
 * kube-public and kube-node-lease. history: watch events kept (0: 10000).
 * clock: wall time for timestamps. Caller frees with cu_store_free. */
cu_store *cu_store_new(size_t history, const cu_clock *clock);

/* Objects whose stored JSON is over this are refused as kube-apiserver
 * refuses them when etcd does (its default --max-request-bytes, 1.5 MiB):
 * 500 "etcdserver: request is too large". */
#define CU_STORE_OBJECT_MAX ((size_t)1572864)
/* The watch history holds at most this many bytes of objects (as well as
 * at most `history` events); the oldest events go first (410 for them). */
#define CU_STORE_HISTORY_BYTES ((size_t)64 << 20)
/* Sets the history's byte cap (0 = the default). */
void cu_store_set_history_bytes(cu_store *s, size_t bytes);
void cu_store_free(cu_store *s);

/* ---- registry ---- */
/* Looks a resource up by group, version and plural (or short name, or
 * singular, or kind in lower case). Borrowed; valid until the store is
 * freed (types are never removed, only disabled). NULL when unknown. */
const cu_rtype *cu_store_rtype(cu_store *s, const char *group, const char *version,
                               const char *name);
/* Looks up by apiVersion ("batch/v1") and kind ("Job"). */
const cu_rtype *cu_store_rtype_kind(cu_store *s, const char *api_version, const char *kind);
/* Calls fn for every served type, in registration order. */
void cu_store_each_rtype(cu_store *s, void (*fn)(const cu_rtype *rt, void *ud), void *ud);
/* Registers (or replaces) the types served by a CRD object (borrowed);
 * called by the store itself when a CRD is created or updated. */
cu_err cu_store_register_crd(cu_store *s, json_object *crd, cu_status *st);

/* ---- objects ---- */
typedef struct cu_list_opts {
    const char *label_selector;   /* "a=b,c!=d,e in (x,y),f notin (z),g,!h" or NULL */
    const char *field_selector;   /* metadata.name=, metadata.namespace=, spec.nodeName=,
                                     status.phase= (=, ==, !=) or NULL */
    int64_t limit;                /* 0: no limit */
    const char *cont;             /* continue token from a previous page */
    const char *resource_version; /* "", "0" or an RV */
    const char *rv_match;         /* "", "NotOlderThan", "Exact" */
    int send_initial_events;      /* watch: sendInitialEvents=true */
} cu_list_opts;

/* GET one object. *out is a new reference. */
cu_err cu_store_get(cu_store *s, const cu_rtype *rt, const char *ns, const char *name,
                    json_object **out, cu_status *st);
/* LIST: *out is a new "<Kind>List" object with metadata.resourceVersion
 * and metadata.continue when more remain. */
cu_err cu_store_list(cu_store *s, const cu_rtype *rt, const char *ns, const cu_list_opts *o,
                     json_object **out, cu_status *st);
/* LIST as JSON text, without building json-c trees: the same response as
 * cu_store_list serialized, the items exactly as stored (much faster for
 * big lists). *out is malloc'ed (caller frees), *len its length. */
cu_err cu_store_list_raw(cu_store *s, const cu_rtype *rt, const char *ns, const cu_list_opts *o,
                         char **out, size_t *len, cu_status *st);
/* CREATE: takes obj; sets uid, creationTimestamp, resourceVersion,
 * generation 1, name from generateName, namespace; status is kept only
 * for types without a status subresource... (as kube-apiserver: on
 * create, status is dropped for types with a status subresource? No:
 * kube-apiserver keeps status on create for most built-ins; for CRDs with
 * the status subresource it is dropped). CRDs get schema validation and
 * defaults. *out (may be NULL) is a new reference to the stored object. */
cu_err cu_store_create(cu_store *s, const cu_rtype *rt, const char *ns, json_object *obj,
                       json_object **out, cu_status *st);
/* UPDATE (PUT) of the main resource (subresource NULL) or of "status":
 * takes obj; a metadata.resourceVersion that is set and stale gives 409;
 * the main endpoint keeps the stored status and the status endpoint keeps
 * everything but status (for types with the status subresource);
 * generation is bumped when spec changes; an object with
 * deletionTimestamp and no finalizers left is deleted. */
cu_err cu_store_update(cu_store *s, const cu_rtype *rt, const char *ns, const char *name,
                       const char *subresource, json_object *obj, json_object **out, cu_status *st);
/* DELETE: with finalizers, sets deletionTimestamp (and
 * deletionGracePeriodSeconds 0) and keeps it; otherwise removes it.
 * propagation: "Background" (default), "Foreground" or "Orphan"
 * (dependents are garbage-collected by cu_store_gc unless Orphan).
 * precondition_rv may be NULL. *out is the deleted (or terminating)
 * object. */
cu_err cu_store_delete(cu_store *s, const cu_rtype *rt, const char *ns, const char *name,
                       const char *propagation, const char *precondition_rv, json_object **out,
                       cu_status *st);
/* Garbage collection: deletes objects whose controller ownerReference
 * (or all owner references) point to objects that no longer exist.
 * Returns how many were deleted. */
int cu_store_gc(cu_store *s);

/* ---- watch ---- */
typedef struct cu_watch cu_watch;
/* Opens a watch on rt (ns NULL = all namespaces) starting after
 * resource_version ("" or "0": send ADDED for every existing object
 * first; an RV older than the history gives 410 Gone). Selectors as for
 * LIST. bookmarks: send BOOKMARK events; with o->send_initial_events, the
 * first one, annotated k8s.io/initial-events-end, right after the ADDED
 * events of the existing objects. Caller closes with
 * cu_store_watch_close. */
cu_err cu_store_watch_open(cu_store *s, const cu_rtype *rt, const char *ns, const cu_list_opts *o,
                           int bookmarks, cu_watch **out, cu_status *st);
/* Waits up to timeout_ms for the next event and returns it as one line of
 * JSON ({"type":"ADDED","object":{...}}) without the newline, as a new
 * malloc'ed string (caller frees), or NULL on timeout. An ERROR event
 * (410 Gone) is returned when the watcher fell behind the history; after
 * it the watch is finished (cu_store_watch_done). */
char *cu_store_watch_next(cu_watch *w, int timeout_ms);
/* Immutable reference-counted bytes: an object as the store keeps it,
 * shared by the store, its history and every watcher sending it. */
typedef struct cu_rstr cu_rstr;
const char *cu_rstr_data(const cu_rstr *r, size_t *len);
cu_rstr *cu_rstr_new(const char *s, size_t n); /* NULL when out of memory */
void cu_rstr_unref(cu_rstr *r);
/* One watch event: its line is {"type":TYPE,"object":OBJ}. obj is a
 * reference (the caller unrefs it): for a type served at its storage
 * version it is the stored object itself, the same bytes for every
 * watcher, never copied per watcher. */
typedef struct cu_watch_ev {
    const char *type; /* "ADDED", ..., "BOOKMARK", "ERROR" (static) */
    cu_rstr *obj;
} cu_watch_ev;
/* As cu_store_watch_next, the event in *ev: 1, or 0 on timeout. */
int cu_store_watch_next_ev(cu_watch *w, int timeout_ms, cu_watch_ev *ev);
int cu_store_watch_done(const cu_watch *w);
void cu_store_watch_close(cu_watch *w);

/* ---- faults and maintenance ---- */
/* Drops the event history (watches from older RVs get 410). */
void cu_store_compact(cu_store *s);
/* Ends every open watch (their next call returns NULL and done is set). */
void cu_store_drop_watches(cu_store *s);
/* The current resourceVersion. */
int64_t cu_store_rv(cu_store *s);

/* ---- persistence (cu_persist.c) ---- */
/* Opens (creating) DIR/cluster.db (SQLite, WAL), loads every object, the
 * CRD registrations and the resourceVersion counter, and from then on
 * writes every change through. */
cu_err cu_store_persist(cu_store *s, const char *dir, cu_status *st);

/* ---- change hooks (for the simulated controllers) ---- */
typedef void (*cu_store_hook)(cu_store *s, const cu_rtype *rt, const char *type, json_object *obj,
                              void *ud);
/* Registers a hook called (outside the store lock) after every ADDED,
 * MODIFIED and DELETED event. obj is a fresh deep copy made for this call
 * and borrowed by the hook: the store puts it when the hook returns (take
 * json_object_get to keep it). Hooks may call back into the store. */
void cu_store_on_change(cu_store *s, cu_store_hook fn, void *ud);

/* ---- storage backend: the seam between cu_store.c and cu_persist.c ----
 * Not for other callers. "res" names a stored resource the way error
 * messages do: "pods", "jobs.batch", "clusterqueues.kueue.x-k8s.io". */
typedef struct cu_store_backend {
    void *ud;
    /* Called under the store lock after every change: data is the object's
     * JSON (NULL when it was removed); counter is the new global RV. */
    cu_err (*write)(void *ud, const char *res, const char *ns, const char *name, int64_t rv,
                    const char *data, int64_t counter);
    void (*close)(void *ud); /* called by cu_store_free */
} cu_store_backend;
/* Installs b (copied; the store owns b->ud from now on). */
void cu_store_set_backend(cu_store *s, const cu_store_backend *b);
/* Removes every object (no events, no backend writes). */
void cu_store_reset(cu_store *s);
/* Inserts a stored object as it is (no validation, no events, no backend
 * write); CRDs register their types. data is borrowed. */
cu_err cu_store_load(cu_store *s, const char *res, const char *data, cu_status *st);
/* Ends a load: sets the RV counter (at least the highest loaded RV) and
 * starts the watch history there. */
void cu_store_load_done(cu_store *s, int64_t counter);
/* Calls fn for every stored object (under the lock; fn must not call the
 * store). Stops at the first error and returns it. */
cu_err cu_store_dump(cu_store *s,
                     cu_err (*fn)(void *ud, const char *res, const char *ns, const char *name,
                                  int64_t rv, const char *data),
                     void *ud);

#endif
