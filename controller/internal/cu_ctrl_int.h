/*
 * cu_ctrl_int.h - the controller's shared state, for its own files only
 * (controller/ and controller/jobs/; off every other target's include
 * path): the resources it watches, the records it keeps of them, the
 * controller struct, and the functions its files call across each other.
 * Every record and the ctrl are owned by the ctrl (freed by
 * cu_controller_main); the functions borrow what they are given unless
 * their definition says otherwise.
 */
#ifndef CU_CTRL_INT_H
#define CU_CTRL_INT_H

#include "cu_controller.h"
#include "cu_clock.h"
#include "cu_duration.h"
#include "cu_hash.h"
#include "cu_httpd.h"
#include "cu_ctrlretry.h"
#include "cu_mauth.h"
#include "cu_ctrlstatus.h"
#include "cu_exclude.h"
#include "cu_explain.h"
#include "cu_metrics.h"
#include "cu_log.h"
#include "cu_lws.h"
#include "cu_podsready.h"
#include "cu_visibility.h"
#include "cu_informer.h"
#include "cu_lease.h"
#include "cu_quantity.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* The resources the controller watches. R_WL and the queue-shaping kinds
 * before it are Kueue's and core's; from R_JOB on, the integrations' kinds
 * (Kueue's "frameworks"): objects that own Workloads, each kind handled by
 * one file in controller/jobs/ through its ctrl_integ. */
enum {
    R_RF,
    R_CQ,
    R_COHORT,
    R_LQ,
    R_WPC,
    R_PC,
    R_NS,
    R_AC,
    R_TOPO, /* Topologies (TAS): queue-shaping */
    R_NODE, /* Nodes (TAS capacity; cu_ctrltas.c keeps them) */
    R_TPOD, /* every Pod (TAS: bound pods' usage, the ungater's gated pods;
               cu_ctrltas.c keeps what it needs of them) */
    R_WL,
    R_JOB,
    R_JOBSET,
    R_LWS,
    R_POD,
    R_LWS_POD, /* the LeaderWorkerSet's pods, managed or not yet (cu_lws.c) */
    NRES
};
#define R_FIRST_OWNER R_JOB

static const struct {
    const char *path, *api_version, *kind;
    const char *framework; /* integrations.frameworks name (owner kinds), NULL */
    int optional;          /* its CRD may be missing: a 404 lists as empty, logged */
    const char *selector;  /* label selector of the informer, NULL: all */
} res_tab[NRES] = {
    { "/apis/kueue.x-k8s.io/v1beta2/resourceflavors", CU_GROUP "/v1beta2", "ResourceFlavor", NULL,
      0, NULL },
    { "/apis/kueue.x-k8s.io/v1beta2/clusterqueues", CU_GROUP "/v1beta2", "ClusterQueue", NULL, 0,
      NULL },
    { "/apis/kueue.x-k8s.io/v1beta2/cohorts", CU_GROUP "/v1beta2", "Cohort", NULL, 0, NULL },
    { "/apis/kueue.x-k8s.io/v1beta2/localqueues", CU_GROUP "/v1beta2", "LocalQueue", NULL, 0,
      NULL },
    { "/apis/kueue.x-k8s.io/v1beta2/workloadpriorityclasses", CU_GROUP "/v1beta2",
      "WorkloadPriorityClass", NULL, 0, NULL },
    { "/apis/scheduling.k8s.io/v1/priorityclasses", "scheduling.k8s.io/v1", "PriorityClass", NULL,
      0, NULL },
    { "/api/v1/namespaces", "v1", "Namespace", NULL, 0, NULL },
    /* AdmissionChecks are new in crds/: a cluster installed before them
     * still runs, with ClusterQueues that name checks inactive */
    { "/apis/kueue.x-k8s.io/v1beta2/admissionchecks", CU_GROUP "/v1beta2", "AdmissionCheck", NULL,
      1, NULL },
    /* Topologies: a cluster installed before them still runs, without TAS */
    { "/apis/kueue.x-k8s.io/v1beta2/topologies", CU_GROUP "/v1beta2", "Topology", NULL, 1, NULL },
    { "/api/v1/nodes", "v1", "Node", NULL, 0, NULL },
    { "/api/v1/pods", "v1", "Pod", NULL, 0, NULL },
    { "/apis/kueue.x-k8s.io/v1beta2/workloads", CU_GROUP "/v1beta2", "Workload", NULL, 0, NULL },
    { "/apis/batch/v1/jobs", "batch/v1", "Job", "batch/job", 0, NULL },
    { "/apis/jobset.x-k8s.io/v1alpha2/jobsets", "jobset.x-k8s.io/v1alpha2", "JobSet",
      "jobset.x-k8s.io/jobset", 1, NULL },
    { "/apis/leaderworkerset.x-k8s.io/v1/leaderworkersets", "leaderworkerset.x-k8s.io/v1",
      "LeaderWorkerSet", "leaderworkerset.x-k8s.io/leaderworkerset", 1, NULL },
    /* only the pods the pod webhook marked managed */
    { "/api/v1/pods", "v1", "Pod", "pod", 0, CU_LABEL_MANAGED "=" CU_LABEL_MANAGED_VALUE },
    /* the LeaderWorkerSet's pods, to be labelled into their group's pod
     * group before the pod integration sees them */
    { "/api/v1/pods", "v1", "Pod", CU_LWS_FRAMEWORK, 0, CU_LWS_LABEL_SET_NAME },
};

static const char MERGE[] = "application/merge-patch+json";
static const char APPLY[] = "application/apply-patch+yaml"; /* JSON is YAML */
/* The field manager of the queue statuses, written by server-side apply. */
static const char QSTATUS_MANAGER[] = "cueue-queue-status";
static const char WLPATH[] = "/apis/kueue.x-k8s.io/v1beta2/namespaces";

/* ---------------- records ---------------- */

/* One pod template of a suspend-based object as it is now (one per pod
 * set of its Workload, in order). */
typedef struct cjob_ps {
    char *sel;   /* its nodeSelector (JSON text), NULL if none */
    char *tol;   /* its tolerations (JSON text), NULL if none */
    char *gates; /* its schedulingGates (JSON text), NULL if none */
    char *meta;  /* its {"labels","annotations"} (JSON text) */
} cjob_ps;

/* What the controller keeps of an object of a suspend-based integration
 * (Kueue's GenericJob: a batch/v1 Job, a JobSet; cu_suspend.c). */
typedef struct cjob {
    char *ns, *name, *uid;
    char *label_queue; /* the queue-name label, NULL when absent */
    char *wlkey;       /* ns/name of its Workload */
    int suspended, finished, failed, deleting;
    char *fin_msg;         /* the finished message, NULL: its kind's default */
    int has_par, has_comp; /* Jobs: spec.parallelism, spec.completions */
    int32_t par, comp;
    int64_t created_ms;               /* metadata.creationTimestamp, 0 when absent */
    int64_t active, ready, succeeded; /* active: status.active + status.terminating */
    cjob_ps *ps;                      /* its pod templates now */
    size_t nps;
    char *own;         /* what the kind's start and restore patches rebuild
                          whole (a JobSet's {"replicatedJobs", "resourceVersion"},
                          JSON text), NULL */
    int has_start;     /* status.startTime is set (the API server then refuses
                          changes to the template's scheduling directives) */
    char *create_body; /* the Workload to create (JSON text), NULL if unmanaged */
    char *bad;         /* why its Workload cannot be built, NULL */
} cjob;

typedef struct rec {
    struct rec *hnext;
    char *key, *rv;
    int r;
    cu_world *w; /* kinds decoded by api/: the latest decode, one object */
    const void *obj;
    /* Workloads */
    cu_world *ew;    /* the decode the engine's live copy is from (w, or an
                                older one kept in the grave) */
    int pinned;      /* w is referenced by the engine (live or removed copy) */
    int idx;         /* engine index, -1 when not in the engine */
    int assumed;     /* admission written or in flight, not seen back yet */
    int adm_written; /* ... and the write succeeded (the Job may start) */
    int hold;        /* a write of this version conflicted: out of the engine
                                until a newer version arrives */
    char *owner;     /* its owner's key in objs[owner_r] ("ns/name"), NULL: none
                        (an integration may key owners that are no single object,
                        e.g. a pod group, in its own way) */
    int owner_r;     /* the owner's resource (R_JOB...) */
    char *owners;    /* metadata.ownerReferences [{apiVersion, kind, name, uid}] (JSON
                        text) for the visibility API, NULL when none */
    char *tmpl;      /* pod set 0's template spec: {"nodeSelector","tolerations"} */
    char *tmeta;     /* pod set 0's template metadata: {"labels","annotations"} */
    char *pstmpls;   /* every pod set's: [{"spec": as tmpl, "meta": as tmeta}] (JSON text) */
    char *acs;       /* status.admissionChecks as read (JSON text), NULL when none */
    int adm_checks;  /* the admission written (assumed) left AdmissionChecks to pass:
                        the Job waits for Admitted */
    int32_t ps_count;
    int32_t rq_count;
    int64_t rq_at;     /* status.requeueState */
    int evict_pending; /* the engine evicted it: Evicted=True still to be written */
    char *ev_reason, *ev_msg, *pr_reason;
    /* ResourceFlavors: spec.nodeLabels and spec.tolerations (JSON text) */
    char *rf_spec;
    /* ClusterQueues, ResourceFlavors: metadata.finalizers as read (JSON
     * text, NULL when none; Workloads too), whether they hold Kueue's
     * resource-in-use, and whether metadata.deletionTimestamp is set */
    char *fins;
    int has_fin, deleting;
    /* ClusterQueues, LocalQueues: status.conditions as read (JSON text) */
    char *st_conds;
    char *deact_msg; /* why waitForPodsReady deactivated it */
    size_t shape;    /* queue-shaping objects: hash of what the engine reads */
    /* the resourceVersion a write of this object was based on, per kind of
     * write (0 status, 1 spec): no second write until the object changed */
    char *sent_rv[2];
    int64_t pend_at;       /* Workloads: when the pending reason was last written */
    int64_t created_at;    /* Jobs: when their Workload was created (until it is seen) */
    int restore;           /* Jobs: suspended by this controller, template not yet restored */
    unsigned evicted_once; /* eviction reasons already counted (evicted_workloads_once) */
    int conflicts;         /* writes refused in a row (409 or another error) */
    int64_t retry_at;      /* after a refused write: when the same version may be written
                                again (Jobs: when their Workload may be created again) */
    size_t refused;        /* Jobs: hash of the Workload body the API server refused
                                for good (4xx): not sent again until it changes */
    size_t create_hash;    /* Jobs: hash of the Workload body sent last */
    char *bad;             /* why the last version could not be decoded (reported once) */
    /* Jobs: the start. start_cq: a start patch is in flight (the
     * ClusterQueue its log line and Started Event name once it succeeds).
     * started_rv: the version the start gave the Job, until the watch shows
     * it started: a suspended version seen before that is older than the
     * start (the watch lags behind the write), not a reason to start it
     * again (for at most CTRL_START_ECHO_MS after started_at). */
    char *start_cq, *started_rv;
    int64_t started_at;
    cjob *job;
    /* owner kinds (R_FIRST_OWNER..): metadata.uid, and the integration's
     * own record of the object (its ctrl_integ's decode and free_data) */
    char *uid;
    int64_t created_ms; /* metadata.creationTimestamp, 0 when absent */
    void *ij;
} rec;

typedef struct omap {
    rec **b;
    size_t nb, n;
} omap;

#define OMAP_FOREACH(m, x) \
    for (size_t x##_i = 0; x##_i < (m)->nb; x##_i++) \
        for (rec *x = (m)->b[x##_i], *x##_n = NULL; x && ((x##_n = x->hnext), 1); x = x##_n)

/* ---------------- the controller ---------------- */

typedef struct ctrl ctrl;
typedef struct ctrl_wh ctrl_wh; /* the webhook server and its certificate (cu_ctrlwebhook.c) */
typedef struct rctx {
    ctrl *c;
    int r;
} rctx;

typedef struct cfgx {
    cu_pr_config pr; /* waitForPodsReady */
    int manage_without_queue;
    const cu_config *cf; /* the Configuration file, NULL */
    int on[NRES];        /* owner kinds: the integration is enabled */
} cfgx;

struct ctrl {
    struct ev_loop *loop;
    cu_kclient *kc;
    /* The client limits (qps, burst) hold per kind of write, as in a
     * controller-runtime manager, where each resource's REST client has a
     * rate limiter of its own (Kueue's case): Events (kc_ev; client-go's
     * event broadcaster has its own client too) and the queue statuses
     * (kc_q: ClusterQueue, LocalQueue, Cohort) have budgets apart from the
     * Workloads and Jobs (kc), so neither delays an admission; LocalQueue
     * statuses have one apart from ClusterQueue and Cohort ones (kc_lq),
     * as Kueue's two REST clients do. NULL: they share kc. */
    cu_kclient *kc_ev, *kc_q, *kc_lq;
    cu_informer *inf[NRES];
    rctx rc[NRES];
    int ninf, nsynced;
    omap objs[NRES];
    omap inflight;    /* operation keys in flight (records with only a key) */
    omap dirty[NRES]; /* owner kinds: the keys their integration is to reconcile */
    omap units[NRES]; /* owner kinds: their integration's own records (e.g. pod
                         groups), keyed as it likes; freed with ctrl_rec_free */
    omap dirty_wls;   /* Workload keys for deactivations() to look at */
    int verbose;
    cu_log log;
    cfgx cfg;

    /* the engine */
    cu_engine_opts eopts;
    cu_engine *eng;
    cu_world vw;  /* view world: pointers into the records */
    rec **by_idx; /* engine index -> Workload record (NULL: removed) */
    size_t nby, capby;
    size_t tombs;     /* removed workloads still in the engine */
    cu_world **grave; /* decodes the engine may still point at */
    size_t ngrave, capgrave;
    int need_rebuild, need_views, started;
    int eng_dirty;    /* something the engine reads changed: run it */
    int startup_done; /* the Jobs found at the start have their Workloads */
    int64_t started_at;
    int64_t eng_ran_at; /* idle: the engine still runs once a second */
    int nassumed, nevict_pending;
    /* admissions the cycle could not write, put back in the engine once
     * every admission of the cycle is read (mutating the engine between
     * two reads would rebuild its views each time) */
    CU_VEC(struct ctrl_redo {
        struct rec *w;
        int undo; /* 1: undo its assumed admission; 0: queue it again */
    })
    redo;
    CU_VEC(int) adm; /* the cycle's admitted indices */
    /* pending reasons to write (pending_pump): a pass is due, where the
     * last one stopped, when it ran (monotonic ms) */
    int pend_scan;
    size_t pend_cursor;
    int64_t pend_pass_at;
    int64_t qstatus_at; /* when queue statuses were last computed */
    int64_t next_wake;  /* earliest requeueAt of a workload in backoff */
    int64_t pr_wake;    /* next waitForPodsReady deadline, 0 none */
    int64_t pend_wake;  /* a held-back pending reason is due, 0 none */
    int64_t resync_at;  /* next full pass over the Jobs */
    int64_t retry_wake; /* a write refused with 409 may be retried */
    uint64_t relists_seen[NRES];
    int pr_dirty;        /* a Job or Workload changed: look again */
    int deact_dirty;     /* a Workload changed: look for deactivated ones */
    size_t pr_not_ready; /* admitted workloads whose pods are not ready */

    ev_timer tick;
    ev_signal sigterm, sigint;
    struct {
        unsigned long admissions, evictions, preemptions, cycles, rebuilds, writes, write_errors,
            conflicts;
    } n;

    /* leader election */
    int elect, leading, stopping;
    cu_lease_opts lopts;
    cu_lease *lease;
    const char *lease_ns;
    char ident[300];
    ev_timer stop_timer, drain;

    struct ctrl_tas *tas; /* Nodes, bound pods, the ungater (cu_ctrltas.c); NULL */

    cu_httpd *health, *metrics;
    cu_mauth *mauth; /* secure metrics: TokenReview and SubjectAccessReview */
    struct {         /* the visibility API server (cu_ctrlvis.c) */
        cu_httpd *s;
        cu_mauth *auth;
        char why[160]; /* not ready: why (the answer of the moment) */
    } vis;
    ctrl_wh *wh;      /* NULL: no webhook server */
    cu_coalescer *co; /* ClusterQueue/LocalQueue/Cohort status writes */
    cu_metrics *m;    /* /metrics */
    cu_kueue_metrics km;
    cu_recorder *ev_adm, *ev_job; /* Events of the scheduler and of the Job integration */
    uint64_t ev_seq;
    unsigned long events, events_dropped;
    struct evctx *evq_head, *evq_tail;
    size_t evq_len;
    int ev_inflight;
    int need_status;
    int exit_rc;
    const char *server;    /* the API server's URL (the kubeconfig's) */
    cu_api_health apih;    /* what fails talking to it, said once */
    size_t skips_said[64]; /* hashes of the informers' last skip reports */
    unsigned nskips_said;
};

typedef enum { OP_CREATE, OP_ADMIT, OP_STATUS, OP_JOB, OP_QSTATUS, OP_OTHER } opkind;

/* ---- cu_controller.c: records, logging, lifecycle ---- */

/* The record of key in m (borrowed), or NULL. */
rec *ctrl_omap_get(const omap *m, const char *key);
/* Adds r (taken; its key must not be in m). Returns 0, or -1 on OOM. */
int ctrl_omap_add(omap *m, rec *r);
/* Unlinks the record of key from m and returns it (the caller's now), or
 * NULL. */
rec *ctrl_omap_del(omap *m, const char *key);
/* Frees a decode (a calloc'd world) / a Job's record; NULL is fine. */
void ctrl_world_free(cu_world *w);
void ctrl_cjob_free(cjob *j);
/* Logs at level v ("error" when the line says failed, could not or
 * cannot). */
void ctrl_log(ctrl *c, int v, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* strdup of s, NULL for NULL. */
char *ctrl_sdup(const char *s);
/* The status of condition type in obj's status.conditions (the last of
 * that type; borrowed), NULL when absent. */
const char *ctrl_cond_status(json_object *obj, const char *type);
/* Sets spec["schedulingGates"] to the gates (a json array, borrowed; NULL:
 * none) without those named drop1 and drop2 (NULL: none), or to null (a
 * merge patch's removal) when none is left. */
void ctrl_gates_without(json_object *spec, json_object *gates, const char *drop1,
                        const char *drop2);
/* o as plain JSON text (new, caller frees), NULL for NULL. */
char *ctrl_jtext(json_object *o);
/* The labels and annotations of a pod template's metadata md (NULL: none)
 * as JSON text {"labels":{...},"annotations":{...}}, each only when it is
 * an object. Malloc'ed. */
char *ctrl_meta_text(json_object *md);

/* ---- cu_ctrlwrite.c: writes, Events, conditions ---- */

/* 1 when this replica may write: not electing, or holding the Lease; and
 * not stopping. */
int ctrl_leading(const ctrl *c);
/* The kube client's hooks (ud is the ctrl): every request attempt counted
 * and timed; the outcome of each request, for the API health report. */
void ctrl_on_attempt(void *ud, const char *method, int watch, int code, double seconds);
void ctrl_on_outcome(void *ud, int code, const char *error, const char *body);
/* Sends body (taken) to path with method and content type ctype, unless
 * op (the operation key, e.g. "status:ns/name") is in flight or this
 * replica must not write; key names the record the write is about (in
 * objs[r]; for OP_CREATE the owner the Workload is created for, whose
 * key op carries after "create:"), what is logged. Returns 1 when sent. */
int ctrl_send_write(ctrl *c, opkind kind, int r, const char *op, const char *key,
                    const char *method, const char *path, const char *ctype, json_object *body,
                    const char *what);
/* The REST path of the object key ("ns/name", or "name" when cluster
 * scoped) of resource r into out. */
void ctrl_obj_path(int r, const char *key, char *out, size_t n);
/* 1 when a write with operation key op is in flight. */
int ctrl_inflight(ctrl *c, const char *op);
/* Queues key (borrowed, copied; NULL: nothing) for reconciling by the
 * integration of owner kind r. */
void ctrl_mark_owner(ctrl *c, int r, const char *key);
/* The same for the Job jkey. */
#define ctrl_mark_job(c, jkey) ctrl_mark_owner((c), R_JOB, (jkey))
void ctrl_mark_wl(ctrl *c, const char *wkey);
/* Frees the Events still queued. */
void ctrl_ev_queue_free(ctrl *c);
/* Records an Event about an object of apiVersion av (job: by the Job
 * integration's recorder, else the scheduler's); fire and forget, the
 * leader only. Borrows the strings. */
void ctrl_emit_av(ctrl *c, int job, const char *av, const char *kind, const char *ns,
                  const char *name, const char *uid, const char *type, const char *reason,
                  const char *msg);
/* The same about a Workload (NULL: nothing). */
void ctrl_emit_wl(ctrl *c, const cu_workload *wl, const char *type, const char *reason,
                  const char *msg);
/* The same about the object of owner record x (of an integration's kind). */
void ctrl_emit_owner(ctrl *c, const rec *x, const char *type, const char *reason, const char *msg);
/* The Workload decoded in r (borrowed from r), or NULL. */
const cu_workload *ctrl_wl_of(const rec *r);
/* 1 when wl (may be NULL) has condition type with status. */
int ctrl_cond_is(const cu_workload *wl, const char *type, const char *status);
/* The Workload's conditions as a json array (new; caller puts). */
json_object *ctrl_conds_json(const cu_workload *wl);
/* conds with type set (taken and returned; lastTransitionTime kept when
 * the status does not change). */
json_object *ctrl_cset(json_object *conds, const char *type, const char *status, const char *reason,
                       const char *message, int64_t now);
/* A new merge patch {metadata: {resourceVersion: rv} (when rv), status:
 * {}}; *st_out borrows its status object. Caller puts the patch. */
json_object *ctrl_status_patch(const char *rv, json_object **st_out);
/* Sends patch p (taken) to the /status of Workload w. Returns 1 when sent. */
int ctrl_wl_status_write(ctrl *c, rec *w, opkind kind, json_object *p, const char *what);

/* ---- cu_ctrlobs.c: metrics, probes, debug pages ---- */

/* The replica_role label value: standalone, leader or follower. */
const char *ctrl_role(const ctrl *c);
/* The priority_class label value of wl ("" when none). */
const char *ctrl_pclass(const cu_workload *wl);
/* ms as seconds (0 when not positive). */
double ctrl_secs(int64_t ms);
/* When wl entered its queue last: the Requeued transition, else its
 * creation. */
int64_t ctrl_queued_at(const cu_workload *wl);
/* The parent of cohort name in the engine's views (NULL: a root, or not
 * known). Borrowed from the engine. */
const char *ctrl_cohort_parent(ctrl *c, const char *name);
/* Adds v to (observe: observes v in) the ClusterQueue family cqf and the
 * LocalQueue family lqf for wl in ClusterQueue cq. */
void ctrl_m_wl(ctrl *c, cu_metric_family *cqf, cu_metric_family *lqf, const cu_workload *wl,
               const char *cq, int observe, double v);
/* The evicted_workloads counters (and the "once" variant), for a
 * Workload of ClusterQueue cq evicted for reason (cause may be ""). */
void ctrl_m_evicted(ctrl *c, rec *w, const cu_workload *wl, const char *cq, const char *reason,
                    const char *cause);
/* The HTTP handlers (ud is the ctrl) of /healthz and /readyz, and of
 * /metrics and the debug pages. Return the status code. */
int ctrl_health_handler(void *ud, const char *path, const char *query, const char *accept,
                        cu_buf *body, const char **ctype);
int ctrl_metrics_handler(void *ud, const char *path, const char *query, const char *accept,
                         cu_buf *b, const char **ctype);
/* The pending workloads the engine holds (positioned, and pending in the
 * API): a new array (caller frees with free; NULL when out of memory),
 * their number in *n. */
const cu_wl_info **ctrl_pending_views(ctrl *c, size_t *n);
/* Why the engine's pending workloads cannot be shown now ("not leading",
 * "informers synced: ..."; in why), or NULL when they can. */
const char *ctrl_engine_not_ready(ctrl *c, char *why, size_t n);

/* ---- cu_ctrlvis.c: the visibility API server ---- */

/* Starts serving visibility.kueue.x-k8s.io on addr over HTTPS (the
 * certificate DIR/CERT and DIR/KEY, or generated), once the requestheader
 * configuration (kube-system/extension-apiserver-authentication) is read.
 * Returns -1 when the controller must not start. */
int ctrl_visibility_start(ctrl *c, const char *addr, const char *cert_dir, const char *cert_name,
                          const char *key_name);
/* Stops it (before the clients are freed), and frees what is left after. */
void ctrl_visibility_stop(ctrl *c);
void ctrl_visibility_free(ctrl *c);

/* The webhook server (cu_ctrlwebhook.c) on addr ("0" or NULL: none;
 * explicit_addr: asked for, so failing to listen is an error, else the
 * webhooks are disabled with a log line), its certificate managed as the
 * Configuration's internalCertManagement says, or read from cert_dir. */
int ctrl_webhook_start(ctrl *c, const char *addr, int explicit_addr, const char *cert_dir);
/* Why /readyz must wait for the webhooks (into why), or NULL. */
const char *ctrl_webhook_not_ready(const ctrl *c, char *why, size_t n);
void ctrl_webhook_stop(ctrl *c);
void ctrl_webhook_free(ctrl *c);

/* The process's peak resident set size in KiB (0 when unknown). */
long ctrl_peak_rss_kib(void);

/* ---- cu_ctrlsync.c: the engine kept in step with the records ---- */

/* 1 when w waits out a requeue backoff (status.requeueState). */
int ctrl_in_backoff(const ctrl *c, const rec *w);
/* Removes w from the engine (its copy stays alive until the next rebuild). */
void ctrl_eng_remove(ctrl *c, rec *w);
/* Replaces the current decode of x with w (taken; the engine may still
 * reference the old one, which is kept until it does not). */
void ctrl_set_decode(ctrl *c, rec *x, cu_world *w);
/* Queue order of a Job's Workload: the Job's creation time when earlier
 * than the Workload's. */
void ctrl_job_order(ctrl *c, rec *w);
/* Adds w's current decode to the engine when it belongs there. */
void ctrl_eng_add(ctrl *c, rec *w);
/* Rebuilds the engine from the records. Not while admissions are assumed
 * (their quota is only in the engine) or informers are not synced. */
void ctrl_rebuild(ctrl *c);
/* Undoes w's assumed admission (its write failed): queued again. */
void ctrl_undo_admission(ctrl *c, rec *w);
/* Brings the engine in line with Workload w's current decode. */
void ctrl_wl_sync(ctrl *c, rec *w);

/* ---- cu_ctrldecode.c: decoding at the informer boundary ---- */

/* Logs, once per version of a queue-shaping object, each problem api/'s
 * validation finds in it, and what the engine does about it. */
void ctrl_log_invalid(ctrl *c, int r, const cu_world *w);
/* obj (borrowed) of resource r decoded into a new one-object world (caller
 * frees with ctrl_world_free), or NULL with the reason in why. */
cu_world *ctrl_decode_obj(ctrl *c, int r, json_object *obj, char *why, size_t nwhy);
/* Reads into x what the controller needs of a Workload beyond the decode:
 * its owner (an integration's object), pod set 0's template,
 * status.requeueState. */
void ctrl_decode_wl_extras(ctrl *c, rec *x, json_object *obj);

/* ---- jobs/: the integrations ---- */

/* An integration (Kueue's "framework"): how the controller handles the
 * objects of one owner kind. Each lives in its own file of controller/jobs/
 * and is found by its resource. A NULL hook does nothing. */
typedef struct ctrl_integ {
    int r; /* its resource */
    /* obj (borrowed), a new version of the owner record x, decoded into x
     * (x->job / x->ij; the old one replaced), and the keys to reconcile
     * marked (ctrl_mark_owner). Undecodable: said with ctrl_report_bad. */
    void (*decode)(ctrl *c, rec *x, json_object *obj);
    /* x is deleted from the API (called before x is freed). */
    void (*deleted)(ctrl *c, rec *x);
    /* frees x->ij. */
    void (*free_data)(rec *x);
    /* brings the object (or unit: a pod group) of a marked key and its
     * Workload to what they should be: one write per object at a time */
    void (*reconcile)(ctrl *c, const char *key);
    /* the answer to an OP_JOB write about owner key (ok: 2xx; body: the
     * object it returned) */
    void (*written)(ctrl *c, const char *key, int ok, const char *body);
    /* 1 when x should have a Workload that is not seen yet (the first
     * cycles after a start wait, at most 5 s, for those to be created) */
    int (*awaits_workload)(ctrl *c, rec *x);
    /* Workload x's owner (x->owner, x->owner_r) when no controlling
     * ownerReference names it (e.g. a pod group); 1 when set. */
    int (*wl_owner)(ctrl *c, rec *x, json_object *obj);
    /* 1 when the owner key (not a record of objs[r]) still exists */
    int (*owner_alive)(ctrl *c, const char *key);
    /* Workload w was added, changed or (deleted: 1) is being deleted; told
     * to every integration, for Workloads it uses but does not own (e.g.
     * prebuilt ones) */
    void (*wl_changed)(ctrl *c, rec *w, int deleted);
    /* for waitForPodsReady: the ready and succeeded pods of Workload w's
     * owner (not a Job) into *ready, *succeeded; 1 when it has started (no
     * pod waits to be let run), 0: not started, nothing counted */
    int (*pods_ready)(ctrl *c, rec *w, int64_t *ready, int64_t *succeeded);
    /* a suspend-based integration's kind rules (cu_suspend.c), NULL */
    const struct ctrl_susp_ops *susp;
} ctrl_integ;

/* The integrations, one per file of controller/jobs/ (cu_jobs.c finds them). */
extern const ctrl_integ ctrl_integ_job, ctrl_integ_jobset, ctrl_integ_lws, ctrl_integ_pod,
    ctrl_integ_lws_pod;
/* The integration of resource r, NULL for a kind that is none. */
const ctrl_integ *ctrl_integ_of(int r);
/* The resource of obj's controlling owner when it is of an enabled
 * integration (Kueue's managed ancestor: obj gets no Workload of its own),
 * else -1. */
int ctrl_managed_parent(ctrl *c, json_object *obj);
/* 1 when Workload w's owner is still there (its record, or as its
 * integration's owner_alive says). */
int ctrl_owner_alive(ctrl *c, const rec *w);
/* Marks Workload w Finished (reason, msg) and counts it in the metrics
 * when it held quota (every integration's end of a Workload). Returns 1
 * when the write was sent. */
int ctrl_finish_workload(ctrl *c, rec *w, const char *reason, const char *msg);
/* Writes into the Workload spec (being created) the value of the priority
 * class its priorityClassRef names, as Kueue does, when that class is
 * known. */
void ctrl_wl_priority(ctrl *c, json_object *spec);
/* Says once per problem (log, Warning Event on obj) that obj, of resource
 * r (record x), cannot be decoded; NULL why: it decodes (again). */
void ctrl_report_bad(ctrl *c, rec *x, int r, json_object *obj, const char *why);

/* ---- jobs/cu_suspend.c: the suspend-based integrations (Kueue's GenericJob) ---- */

/* What differs between the kinds that stop by spec.suspend (a batch/v1 Job,
 * a JobSet); the rest, in cu_suspend.c, is theirs in common: the record,
 * the Workload created, the start, the stop, the restore, the finish. */
typedef struct ctrl_susp_ops {
    /* the name of the Workload of the object name/uid (arena-owned) */
    const char *(*wl_name)(cu_arena *a, const char *name, const char *uid);
    /* obj's pod templates (borrowed from obj) into t, at most max; their number */
    size_t (*templates)(json_object *obj, json_object **t, size_t max);
    /* the kind's own fields of obj into j: finished, failed, fin_msg,
     * active, ready, succeeded, has_start, own ... */
    void (*fill)(cjob *j, json_object *obj);
    /* the Workload body for obj (labelled with a queue), NULL with d */
    json_object *(*workload)(json_object *obj, cu_diag *d);
    /* what the merge patch that suspends j sets in spec besides suspend
     * (w: its Workload record, NULL); NULL: nothing */
    void (*suspend)(const cjob *j, const rec *w, json_object *spec);
    /* the merge patch that changes j's pod templates by tp[i] (merge
     * patches of a pod template, NULL: none; j->nps of them) */
    json_object *(*retemplate)(const cjob *j, const rec *w, json_object *const *tp);
    /* the merge patch that starts j with its Workload's admission wj
     * ({metadata, status: {admission, admissionChecks}}) and flavors
     * ({name: {spec}}), its pod templates being w's; NULL with the
     * problems in d (*permanent: as Kueue, no retry) */
    json_object *(*start)(const cjob *j, const rec *w, json_object *wj, json_object *flavors,
                          cu_diag *d, int *permanent);
    /* the finished messages when fin_msg is NULL */
    const char *ok_msg, *fail_msg;
} ctrl_susp_ops;

/* The hooks of a suspend-based integration (its ctrl_integ's; the kind
 * rules are its susp). */
void ctrl_susp_decode(ctrl *c, rec *x, json_object *obj);
void ctrl_susp_deleted(ctrl *c, rec *x);
void ctrl_susp_reconcile_key(ctrl *c, int r, const char *key);
void ctrl_susp_written(ctrl *c, int r, const char *key, int ok, const char *body);
int ctrl_susp_awaits_workload(ctrl *c, rec *x);
/* The queue of an object: its label; else "default" when its namespace
 * has a LocalQueue named default; else "" when manageJobsWithoutQueueName
 * covers its namespace (managed, no queue); NULL: not managed. */
const char *ctrl_job_queue(ctrl *c, const cjob *j);
/* An evicted Workload whose pods are gone: status.admission cleared,
 * QuotaReserved=False, Admitted=False, Requeued=True. */
void ctrl_release_evicted(ctrl *c, rec *w);
/* How long a started object's suspended versions are taken as older than
 * the start (the watch lagging) before the start may be sent again. */
#define CTRL_START_ECHO_MS 10000

/* ---- cu_ctrlinform.c: informer events ---- */

/* Frees a record and everything it owns. */
void ctrl_rec_free(rec *x);
/* The informers' callbacks (ud is the rctx of the resource). */
void ctrl_on_skip(cu_informer *inf, const char *why, json_object *obj, void *ud);
void ctrl_on_event(cu_informer *inf, cu_ievent ev, json_object *obj, void *ud);

/* ---- cu_ctrltas.c: Topology-Aware Scheduling (Nodes, bound pods, the ungater) ---- */

/* Kueue's names on the pods of a Workload admitted by TAS (its
 * pkg/constants and apis/kueue/v1beta2): the pod set label and the
 * Workload annotation its start puts on the pod templates. */
#define CU_LABEL_PODSET "kueue.x-k8s.io/podset"
#define CU_ANN_TAS_WORKLOAD "kueue.x-k8s.io/workload"

/* An informer event of a Node (r R_NODE) or a Pod (R_TPOD): what TAS
 * needs of it kept, the engine told (cu_engine_node_set/remove,
 * cu_engine_pod_usage paired per pod, cu_engine_capacity_freed), the
 * Workload of a TAS pod marked for the ungater. */
void ctrl_tas_on_event(ctrl *c, int r, cu_ievent ev, json_object *obj);
/* Puts the Topologies, the Nodes and the counted pods into vw (pointers
 * into the records, valid until they change; the engine copies them). */
cu_err ctrl_tas_world(ctrl *c, cu_world *vw);
/* Workload w changed: looked at by the ungater when it has a topology
 * assignment. */
void ctrl_tas_wl_changed(ctrl *c, rec *w);
/* The topology ungater: the gated pods of the marked Workloads admitted
 * by TAS get their domain's node selector and lose the topology gate. */
void ctrl_tas_ungate(ctrl *c);
/* The names of the Nodes kept, sorted (a new array of borrowed names,
 * caller frees; NULL when none), their number in *n. */
const char **ctrl_tas_node_names(ctrl *c, size_t *n);
/* The Nodes kept, the pods whose usage is counted. */
size_t ctrl_tas_nnodes(const ctrl *c);
size_t ctrl_tas_ncounted(const ctrl *c);
void ctrl_tas_free(ctrl *c);

/* ---- cu_ctrlfinal.c: the resource-in-use finalizer ---- */

/* Adds Kueue's finalizer kueue.x-k8s.io/resource-in-use to every
 * ClusterQueue and ResourceFlavor that lacks it, and takes it off one
 * being deleted once nothing uses it: no Workload holds quota in the
 * ClusterQueue; no ClusterQueue names the ResourceFlavor. */
void ctrl_finalizers(ctrl *c);

/* ---- cu_ctrlcycle.c: the admission cycle ---- */

/* The record of a workload pending in the engine (its removed copies show
 * as finished), or NULL. Borrowed. */
rec *ctrl_pending_rec(ctrl *c, const cu_wl_info *info);
/* The loop's tick (data is the ctrl): runs the cycle when something
 * changed or a deadline passed. */
void ctrl_on_tick(struct ev_loop *loop, ev_timer *t, int revents);

#endif
