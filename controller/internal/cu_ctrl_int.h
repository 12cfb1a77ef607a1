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
#include "cu_httpd.h"
#include "cu_ctrlretry.h"
#include "cu_mauth.h"
#include "cu_ctrlstatus.h"
#include "cu_exclude.h"
#include "cu_explain.h"
#include "cu_metrics.h"
#include "cu_log.h"
#include "cu_podsready.h"
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

enum { R_RF, R_CQ, R_COHORT, R_LQ, R_WPC, R_PC, R_NS, R_WL, R_JOB, NRES };

static const struct {
    const char *path, *api_version, *kind;
} res_tab[NRES] = {
    { "/apis/kueue.x-k8s.io/v1beta2/resourceflavors", CU_GROUP "/v1beta2", "ResourceFlavor" },
    { "/apis/kueue.x-k8s.io/v1beta2/clusterqueues", CU_GROUP "/v1beta2", "ClusterQueue" },
    { "/apis/kueue.x-k8s.io/v1beta2/cohorts", CU_GROUP "/v1beta2", "Cohort" },
    { "/apis/kueue.x-k8s.io/v1beta2/localqueues", CU_GROUP "/v1beta2", "LocalQueue" },
    { "/apis/kueue.x-k8s.io/v1beta2/workloadpriorityclasses", CU_GROUP "/v1beta2",
      "WorkloadPriorityClass" },
    { "/apis/scheduling.k8s.io/v1/priorityclasses", "scheduling.k8s.io/v1", "PriorityClass" },
    { "/api/v1/namespaces", "v1", "Namespace" },
    { "/apis/kueue.x-k8s.io/v1beta2/workloads", CU_GROUP "/v1beta2", "Workload" },
    { "/apis/batch/v1/jobs", "batch/v1", "Job" },
};

static const char MERGE[] = "application/merge-patch+json";
static const char APPLY[] = "application/apply-patch+yaml";   /* JSON is YAML */
/* The field manager of the queue statuses, written by server-side apply. */
static const char QSTATUS_MANAGER[] = "cueue-queue-status";
static const char WLPATH[] = "/apis/kueue.x-k8s.io/v1beta2/namespaces";

/* ---------------- records ---------------- */

/* What the controller keeps of a batch/v1 Job. */
typedef struct cjob {
    char *ns, *name, *uid;
    char *label_queue;       /* the queue-name label, NULL when absent */
    char *wlkey;             /* ns/name of its Workload */
    int suspended, finished, failed, deleting;
    char *fail_msg;
    int has_par, has_comp;
    int32_t par, comp;
    int64_t created_ms;      /* metadata.creationTimestamp, 0 when absent */
    int64_t active, ready, succeeded;
    char *cur_sel;           /* the template's nodeSelector now (JSON text), NULL if none */
    char *create_body;       /* the Workload to create (JSON text), NULL if unmanaged */
    char *bad;               /* why its Workload cannot be built, NULL */
} cjob;

typedef struct rec {
    struct rec *hnext;
    char *key, *rv;
    int r;
    cu_world *w;             /* kinds decoded by api/: the latest decode, one object */
    const void *obj;
    /* Workloads */
    cu_world *ew;            /* the decode the engine's live copy is from (w, or an
                                older one kept in the grave) */
    int pinned;              /* w is referenced by the engine (live or removed copy) */
    int idx;                 /* engine index, -1 when not in the engine */
    int assumed;             /* admission written or in flight, not seen back yet */
    int adm_written;         /* ... and the write succeeded (the Job may start) */
    int hold;                /* a write of this version conflicted: out of the engine
                                until a newer version arrives */
    char *owner;             /* "ns/job" of its controlling Job, NULL */
    char *tmpl;              /* pod set 0's template spec: {"nodeSelector","tolerations"} */
    int32_t ps_count;
    int32_t rq_count;
    int64_t rq_at;           /* status.requeueState */
    int evict_pending;       /* the engine evicted it: Evicted=True still to be written */
    char *ev_reason, *ev_msg, *pr_reason;
    /* ResourceFlavors: spec.nodeLabels and spec.tolerations (JSON text) */
    char *rf_spec;
    /* ClusterQueues, LocalQueues: status.conditions as read (JSON text) */
    char *st_conds;
    char *deact_msg;         /* why waitForPodsReady deactivated it */
    size_t shape;            /* queue-shaping objects: hash of what the engine reads */
    /* the resourceVersion a write of this object was based on, per kind of
     * write (0 status, 1 spec): no second write until the object changed */
    char *sent_rv[2];
    int64_t pend_at;         /* Workloads: when the pending reason was last written */
    int64_t created_at;      /* Jobs: when their Workload was created (until it is seen) */
    unsigned evicted_once;   /* eviction reasons already counted (evicted_workloads_once) */
    int conflicts;           /* writes refused in a row (409 or another error) */
    int64_t retry_at;        /* after a refused write: when the same version may be written
                                again (Jobs: when their Workload may be created again) */
    size_t refused;          /* Jobs: hash of the Workload body the API server refused
                                for good (4xx): not sent again until it changes */
    size_t create_hash;      /* Jobs: hash of the Workload body sent last */
    char *bad;               /* why the last version could not be decoded (reported once) */
    cjob *job;
} rec;

typedef struct omap {
    rec **b;
    size_t nb, n;
} omap;

#define OMAP_FOREACH(m, x)                                                                         \
    for (size_t x##_i = 0; x##_i < (m)->nb; x##_i++)                                               \
        for (rec *x = (m)->b[x##_i], *x##_n = NULL; x && ((x##_n = x->hnext), 1); x = x##_n)

/* ---------------- the controller ---------------- */

typedef struct ctrl ctrl;
typedef struct rctx { ctrl *c; int r; } rctx;

typedef struct cfgx {
    cu_pr_config pr;           /* waitForPodsReady */
    int manage_without_queue;
    const cu_config *cf;       /* the Configuration file, NULL */
    int jobs;                  /* batch/job integration on */
} cfgx;

struct ctrl {
    struct ev_loop *loop;
    cu_kclient *kc;
    cu_informer *inf[NRES];
    rctx rc[NRES];
    int ninf, nsynced;
    omap objs[NRES];
    omap inflight;             /* operation keys in flight (records with only a key) */
    omap dirty_jobs;           /* Job keys to reconcile */
    int verbose;
    cu_log log;
    cfgx cfg;

    /* the engine */
    cu_engine_opts eopts;
    cu_engine *eng;
    cu_world vw;               /* view world: pointers into the records */
    rec **by_idx;              /* engine index -> Workload record (NULL: removed) */
    size_t nby, capby;
    size_t tombs;              /* removed workloads still in the engine */
    cu_world **grave;          /* decodes the engine may still point at */
    size_t ngrave, capgrave;
    int need_rebuild, need_views, started;
    int eng_dirty;             /* something the engine reads changed: run it */
    int startup_done;          /* the Jobs found at the start have their Workloads */
    int64_t started_at;
    int64_t eng_ran_at;        /* idle: the engine still runs once a second */
    int nassumed, nevict_pending;
    int64_t next_wake;         /* earliest requeueAt of a workload in backoff */
    int64_t pr_wake;           /* next waitForPodsReady deadline, 0 none */
    int64_t pend_wake;         /* a held-back pending reason is due, 0 none */
    int64_t resync_at;         /* next full pass over the Jobs */
    int64_t retry_wake;        /* a write refused with 409 may be retried */
    uint64_t relists_seen[NRES];
    int pr_dirty;              /* a Job or Workload changed: look again */
    int deact_dirty;           /* a Workload changed: look for deactivated ones */
    size_t pr_not_ready;       /* admitted workloads whose pods are not ready */

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

    cu_httpd *health, *metrics;
    cu_mauth *mauth;           /* secure metrics: TokenReview and SubjectAccessReview */
    cu_coalescer *co;          /* ClusterQueue/LocalQueue/Cohort status writes */
    cu_metrics *m;             /* /metrics */
    cu_kueue_metrics km;
    cu_recorder *ev_adm, *ev_job;   /* Events of the scheduler and of the Job integration */
    uint64_t ev_seq;
    unsigned long events, events_dropped;
    struct evctx *evq_head, *evq_tail;
    size_t evq_len;
    int ev_inflight;
    int need_status;
    int exit_rc;
    const char *server;        /* the API server's URL (the kubeconfig's) */
    cu_api_health apih;        /* what fails talking to it, said once */
    size_t skips_said[64];     /* hashes of the informers' last skip reports */
    unsigned nskips_said;
};

typedef enum { OP_CREATE, OP_ADMIT, OP_STATUS, OP_JOB, OP_QSTATUS, OP_OTHER } opkind;

/* cu_ctrlbuild.c */
json_object *jpath(json_object *o, const char *dotted);
const char *jstr(json_object *o, const char *dotted);

/* cu_controller.c */
size_t hstr(const char *s);
rec *ctrl_omap_get(const omap *m, const char *key);
int ctrl_omap_add(omap *m, rec *r);
rec *ctrl_omap_del(omap *m, const char *key);
void ctrl_world_free(cu_world *w);
void ctrl_cjob_free(cjob *j);
int64_t real_now(void *ud);
void ctrl_log(ctrl *c, int v, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
json_object *jget(json_object *o, const char *k);
const char *jstr2(json_object *o, const char *a, const char *b);
char *sdup(const char *s);
char *jtext(json_object *o);
int64_t jint(json_object *o, int64_t dflt);

/* cu_ctrlwrite.c */
int ctrl_leading(const ctrl *c);
void ctrl_on_attempt(void *ud, const char *method, int watch, int code, double seconds);
void ctrl_on_outcome(void *ud, int code, const char *error, const char *body);
int ctrl_send_write(ctrl *c, opkind kind, const char *op, const char *key, const char *method,
                    const char *path, const char *ctype, json_object *body, const char *what);
int ctrl_inflight(ctrl *c, const char *op);
void ctrl_mark_job(ctrl *c, const char *jkey);
void ctrl_ev_queue_free(ctrl *c);
void ctrl_emit_av(ctrl *c, int job, const char *av, const char *kind, const char *ns,
                  const char *name, const char *uid, const char *type, const char *reason,
                  const char *msg);
void ctrl_emit_wl(ctrl *c, const cu_workload *wl, const char *type, const char *reason,
                  const char *msg);
void ctrl_emit_job(ctrl *c, const cjob *j, const char *type, const char *reason, const char *msg);
const cu_workload *ctrl_wl_of(const rec *r);
int ctrl_cond_is(const cu_workload *wl, const char *type, const char *status);
json_object *ctrl_conds_json(const cu_workload *wl);
json_object *ctrl_cset(json_object *conds, const char *type, const char *status,
                       const char *reason, const char *message, int64_t now);
json_object *ctrl_status_patch(const char *rv, json_object **st_out);
int ctrl_wl_status_write(ctrl *c, rec *w, opkind kind, json_object *p, const char *what);

/* cu_ctrlobs.c */
const char *ctrl_role(const ctrl *c);
const char *ctrl_pclass(const cu_workload *wl);
double ctrl_secs(int64_t ms);
int64_t ctrl_queued_at(const cu_workload *wl);
const char *ctrl_cohort_parent(ctrl *c, const char *name);
void ctrl_m_wl(ctrl *c, cu_metric_family *cqf, cu_metric_family *lqf, const cu_workload *wl,
               const char *cq, int observe, double v);
void ctrl_m_evicted(ctrl *c, rec *w, const cu_workload *wl, const char *cq, const char *reason,
                    const char *cause);
int ctrl_health_handler(void *ud, const char *path, const char *query, const char *accept,
                        cu_buf *body, const char **ctype);
long ctrl_peak_rss_kib(void);
int ctrl_metrics_handler(void *ud, const char *path, const char *query, const char *accept,
                         cu_buf *b, const char **ctype);

/* cu_ctrlsync.c */
int ctrl_in_backoff(const ctrl *c, const rec *w);
void ctrl_eng_remove(ctrl *c, rec *w);
void ctrl_set_decode(ctrl *c, rec *x, cu_world *w);
void ctrl_job_order(ctrl *c, rec *w);
void ctrl_eng_add(ctrl *c, rec *w);
void ctrl_rebuild(ctrl *c);
void ctrl_undo_admission(ctrl *c, rec *w);
void ctrl_wl_sync(ctrl *c, rec *w);

/* cu_ctrldecode.c */
void ctrl_log_invalid(ctrl *c, int r, const cu_world *w);
cu_world *ctrl_decode_obj(ctrl *c, int r, json_object *obj, char *why, size_t nwhy);
void ctrl_decode_wl_extras(rec *x, json_object *obj);

/* jobs/cu_job.c */
cjob *ctrl_decode_job(ctrl *c, json_object *job);
const char *ctrl_job_queue(ctrl *c, const cjob *j);
void ctrl_release_evicted(ctrl *c, rec *w);
void ctrl_reconcile_job(ctrl *c, rec *jr);

/* cu_ctrlinform.c */
void ctrl_rec_free(rec *x);
void ctrl_on_skip(cu_informer *inf, const char *why, json_object *obj, void *ud);
void ctrl_on_event(cu_informer *inf, cu_ievent ev, json_object *obj, void *ud);

/* cu_ctrlcycle.c */
rec *ctrl_pending_rec(ctrl *c, const cu_wl_info *info);
void ctrl_on_tick(struct ev_loop *loop, ev_timer *t, int revents);

#endif
