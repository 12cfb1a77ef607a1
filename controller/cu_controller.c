/*
 * cu_controller.c - `cueue controller`: informers, the Job integration,
 * the admission cycle and the writes.
 *
 * State. Every watched object is decoded at the informer boundary into a
 * record of C structs (a one-object cu_world in a small arena, or for a
 * Job a handful of fields and the text of the Workload it needs); no
 * JSON tree is kept. Records live in one hash map per resource.
 *
 * The engine is long-lived. It is rebuilt (from the records, in memory)
 * only when a queue-shaping object changes (ResourceFlavor, ClusterQueue,
 * Cohort, LocalQueue, priority classes, Namespaces), when leadership is
 * gained, or when removed workloads pile up; never while an admission is
 * written but not yet seen back, so a rebuild cannot forget quota.
 * Workload events are applied incrementally: a new Workload is added, a
 * Finished or deleted one is removed, an eviction whose Job stopped is
 * completed, and anything the engine did not expect (an admission made or
 * cleared by someone else) replaces the engine's copy.
 *
 * Writes. An admission is assumed at once (the engine counts it), written
 * with a resourceVersion precondition, confirmed by the watch, and undone
 * if the write fails. Every other write is "desired state, retried until
 * observed": the reconcilers compare what they see with what should be and
 * send one request per object at a time.
 */
#include "cu_controller.h"
#include "cu_httpd.h"
#include "cu_ctrlretry.h"
#include "cu_mauth.h"
#include "cu_ctrlstatus.h"
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

#ifndef CUEUE_VERSION_STRING
#define CUEUE_VERSION_STRING "0.1.0"
#endif

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

static size_t hstr(const char *s)
{
    size_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static rec *omap_get(const omap *m, const char *key)
{
    if (!m->nb)
        return NULL;
    for (rec *r = m->b[hstr(key) & (m->nb - 1)]; r; r = r->hnext)
        if (strcmp(r->key, key) == 0)
            return r;
    return NULL;
}

static int omap_add(omap *m, rec *r)
{
    if (m->n + 1 > m->nb) {
        size_t nb = m->nb ? m->nb * 2 : 64;
        rec **b = calloc(nb, sizeof(*b));
        if (!b)
            return -1;
        for (size_t i = 0; i < m->nb; i++)
            for (rec *x = m->b[i], *nx; x; x = nx) {
                nx = x->hnext;
                size_t h = hstr(x->key) & (nb - 1);
                x->hnext = b[h];
                b[h] = x;
            }
        free(m->b);
        m->b = b;
        m->nb = nb;
    }
    size_t h = hstr(r->key) & (m->nb - 1);
    r->hnext = m->b[h];
    m->b[h] = r;
    m->n++;
    return 0;
}

static rec *omap_del(omap *m, const char *key)
{
    if (!m->nb)
        return NULL;
    for (rec **pp = &m->b[hstr(key) & (m->nb - 1)]; *pp; pp = &(*pp)->hnext)
        if (strcmp((*pp)->key, key) == 0) {
            rec *r = *pp;
            *pp = r->hnext;
            m->n--;
            return r;
        }
    return NULL;
}

#define OMAP_FOREACH(m, x)                                                                         \
    for (size_t x##_i = 0; x##_i < (m)->nb; x##_i++)                                               \
        for (rec *x = (m)->b[x##_i], *x##_n = NULL; x && ((x##_n = x->hnext), 1); x = x##_n)

static void world_free(cu_world *w)
{
    if (w) {
        cu_world_free(w);
        free(w);
    }
}

static void cjob_free(cjob *j)
{
    if (!j)
        return;
    free(j->ns);
    free(j->name);
    free(j->uid);
    free(j->label_queue);
    free(j->wlkey);
    free(j->fail_msg);
    free(j->cur_sel);
    free(j->create_body);
    free(j->bad);
    free(j);
}

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

static int64_t real_now(void *ud)
{
    (void)ud;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void clog_(ctrl *c, int v, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void clog_(ctrl *c, int v, const char *fmt, ...)
{
    if (!cu_log_enabled(&c->log, v, "info"))
        return;
    char line[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    int err = strstr(line, "failed") || strstr(line, "could not") || strstr(line, "cannot");
    cu_log_kv(&c->log, v, err ? "error" : "info", line, NULL);
}

/* ---------------- json helpers (for decoding at the boundary) ---------------- */

static json_object *jget(json_object *o, const char *k)
{
    json_object *v = NULL;
    if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, k, &v))
        return NULL;
    return v;
}

static const char *jstr2(json_object *o, const char *a, const char *b)
{
    json_object *v = jget(o, a);
    if (b)
        v = jget(v, b);
    return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static char *sdup(const char *s)
{
    return s ? strdup(s) : NULL;
}

static char *jtext(json_object *o)
{
    return o ? strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN)) : NULL;
}

static int64_t jint(json_object *o, int64_t dflt)
{
    return json_object_is_type(o, json_type_int) ? json_object_get_int64(o) : dflt;
}

/* ---------------- writes ---------------- */

typedef enum { OP_CREATE, OP_ADMIT, OP_STATUS, OP_JOB, OP_QSTATUS, OP_OTHER } opkind;
typedef struct wctx {
    ctrl *c;
    opkind kind;
    char *op, *key, *what;
} wctx;

static int leading(const ctrl *c)
{
    return (!c->elect || c->leading) && !c->stopping;
}

static void undo_admission(ctrl *c, rec *w);
static void mark_job(ctrl *c, const char *jkey);
static void emit_job(ctrl *c, const cjob *j, const char *type, const char *reason, const char *msg);

/* The guard slot of a write: Workload status (admission included) and
 * spec writes, Job patches. NULL for writes without one. */
static char **guard_slot(ctrl *c, opkind kind, const char *op, const char *key, rec **out)
{
    rec *x = NULL;
    int slot = 0;
    if (kind == OP_STATUS || kind == OP_ADMIT) {
        x = omap_get(&c->objs[R_WL], key);
    } else if (kind == OP_JOB) {
        x = omap_get(&c->objs[R_JOB], key);
    } else if (kind == OP_OTHER && strncmp(op, "spec:", 5) == 0) {
        x = omap_get(&c->objs[R_WL], key);
        slot = 1;
    }
    *out = x;
    return x ? &x->sent_rv[slot] : NULL;
}

static void on_event(cu_informer *inf, cu_ievent ev, json_object *obj, void *ud);

/* Every API request attempt (the kube client's hook): counted by verb
 * (LIST and WATCH told apart from GET) and status code, timed. */
static void on_attempt(void *ud, const char *method, int watch, int code, double seconds)
{
    ctrl *c = ud;
    char cs[8];
    snprintf(cs, sizeof(cs), "%d", code);
    const char *verb = watch ? "WATCH" : method;
    const char *lv[] = { verb, cs }, *dv[] = { verb };
    cu_metric_inc(c->km.cueue_api_requests_total, lv, 1);
    if (!watch)
        cu_metric_observe(c->km.cueue_api_request_duration_seconds, dv, seconds);
}

/* Every attempt's outcome (the kube client's hook): a TLS failure, a
 * refused token, ... said once at the default level, and the recovery. */
static void on_outcome(void *ud, int code, const char *error, const char *body)
{
    ctrl *c = ud;
    char line[1500];
    if (cu_ctrl_api_outcome(&c->apih, c->server ? c->server : "?", code, error, body, line,
                            sizeof(line)))
        cu_log_kv(&c->log, 0, code >= 200 && code < 300 ? "info" : "error", line, NULL);
}

typedef struct rrctx { ctrl *c; int r; } rrctx;

static void reread_done(cu_kclient *kc, const cu_kresp *r, void *ud)
{
    (void)kc;
    rrctx *x = ud;
    if (r->code == 200 && r->body) {
        json_object *o = cu_json_parse_str(r->body);
        if (o)
            on_event(NULL, CU_IEV_MODIFIED, o, &x->c->rc[x->r]);
        json_object_put(o);
    }
    free(x);
}

/* GETs one Workload or Job again and feeds it through on_event (as the
 * watch would). */
static void reread(ctrl *c, int r, const char *key)
{
    const char *sl = strchr(key, '/');
    if (!sl)
        return;
    char path[1200];
    snprintf(path, sizeof(path), "%s/%.*s/%s/%s",
             r == R_JOB ? "/apis/batch/v1/namespaces" : WLPATH, (int)(sl - key), key,
             r == R_JOB ? "jobs" : "workloads", sl + 1);
    rrctx *x = calloc(1, sizeof(*x));
    if (!x)
        return;
    x->c = c;
    x->r = r;
    if (!cu_kclient_request(c->kc, "GET", path, NULL, 0, NULL, reread_done, x))
        free(x);
}

static void write_done(cu_kclient *kc, const cu_kresp *r, void *ud)
{
    (void)kc;
    wctx *w = ud;
    ctrl *c = w->c;
    int ok = r->code >= 200 && r->code < 300;
    {
        if (r->code == 409) {
            static const char *const kinds[] = { "workload", "workload-admission", "workload-status",
                                                 "job", "queue-status", "workload-spec" };
            const char *kv[] = { kinds[w->kind] };
            cu_metric_inc(c->km.cueue_write_conflicts_total, kv, 1);
        }
    }
    if (!ok && w->kind == OP_CREATE && r->code == 409)
        ok = 1;   /* AlreadyExists: the watch brings it */
    if (!ok && w->kind == OP_CREATE) {
        rec *jr = omap_get(&c->objs[R_JOB], w->key);
        if (jr)
            jr->created_at = 0;   /* failed: create again */
    }
    if (!ok) {
        c->n.write_errors++;
        if (r->code == 409)
            c->n.conflicts++;
        rec *jr = w->kind == OP_CREATE ? omap_get(&c->objs[R_JOB], w->key) : NULL;
        rec *lx = jr ? jr : omap_get(&c->objs[w->kind == OP_JOB ? R_JOB : R_WL], w->key);
        char msg[700];
        cu_ctrl_status_text(r->code, r->error, r->body, msg, sizeof(msg));
        if (jr && jr->job && cu_ctrl_refused_for_good(r->code)) {
            /* it cannot succeed as it is: said once, on the Job, and not
             * sent again until the Job changes what it asks for */
            jr->refused = jr->create_hash;
            clog_(c, 0, "Job %s: the API server refused its Workload %s (%s); not sent again "
                  "until the Job changes", w->key, jr->job->wlkey, msg);
            char m[900];
            snprintf(m, sizeof(m), "Workload %s could not be created: %s",
                     strchr(jr->job->wlkey, '/') + 1, msg);
            emit_job(c, jr->job, "Warning", CU_EV_FAILED_CREATE_WORKLOAD, m);
        } else {
            /* the first failure of a streak at the default level, the
             * retries after it (backing off) only with -v 2 */
            int quiet = r->code == 409 ? 1 : lx && lx->conflicts > 0 ? 2 : 0;
            clog_(c, quiet, "%s failed: %s", w->what, msg);
        }
        if (w->kind == OP_QSTATUS)
            cu_coalescer_written(c->co, w->key, 0);
        rec *gx;
        char **g = guard_slot(c, w->kind, w->op, w->key, &gx);
        if (w->kind == OP_CREATE)
            gx = omap_get(&c->objs[R_JOB], w->key);
        if ((g || w->kind == OP_CREATE) && gx) {
            /* the same version is written again only after a backoff
             * (cu_ctrl_retry_delay_ms); a new version may be written at
             * once. A conflict reads the object again (a newer version
             * may be on its way). */
            gx->conflicts++;
            gx->retry_at = real_now(NULL) + cu_ctrl_retry_delay_ms(r->code, gx->conflicts);
            if (!c->retry_wake || gx->retry_at < c->retry_wake)
                c->retry_wake = gx->retry_at;
            if (r->code == 409 && g)
                reread(c, w->kind == OP_JOB ? R_JOB : R_WL, w->key);
        }
        if (w->kind == OP_ADMIT) {
            rec *x = omap_get(&c->objs[R_WL], w->key);
            if (x) {
                x->hold = r->code == 409;
                undo_admission(c, x);
            }
        }
    }
    if (ok && w->kind == OP_QSTATUS)
        cu_coalescer_written(c->co, w->key, 1);
    rec *cj = ok && w->kind == OP_CREATE ? omap_get(&c->objs[R_JOB], w->key) : NULL;
    if (cj) {
        cj->conflicts = 0;
        cj->retry_at = 0;
    }
    if (cj && r->code != 409) {
        /* in the API now (not on a 409: someone else created it) */
        rec *jr = cj;
        if (jr->job && jr->job->wlkey) {
            const cjob *j = jr->job;
            clog_(c, 1, "Job %s: created Workload %s", jr->key, j->wlkey);
            char m[900];
            emit_job(c, j, "Normal", CU_EV_CREATED_WORKLOAD,
                     cu_ctrl_event_msg_created_workload(m, sizeof(m), j->ns,
                                                        strchr(j->wlkey, '/') + 1));
        }
    }
    if (ok) {
        rec *gx;
        if (guard_slot(c, w->kind, w->op, w->key, &gx) && gx) {
            gx->conflicts = 0;
            gx->retry_at = 0;
        }
    }
    if (ok && w->kind == OP_ADMIT) {
        rec *x = omap_get(&c->objs[R_WL], w->key);
        if (x && x->assumed)
            x->adm_written = 1;   /* in the API now: its Job may start before the watch says so */
    }
    rec *f = omap_del(&c->inflight, w->op);
    if (f) {
        free(f->key);
        free(f);
    }
    /* the object's Job (or the Job itself) gets another look */
    rec *wl = omap_get(&c->objs[R_WL], w->key);
    mark_job(c, wl && wl->owner ? wl->owner : w->key);
    free(w->op);
    free(w->key);
    free(w->what);
    free(w);
}

/* Sends body (taken) unless op is in flight or this replica must not
 * write. Returns 1 when sent. */
static int send_write(ctrl *c, opkind kind, const char *op, const char *key, const char *method,
                      const char *path, const char *ctype, json_object *body, const char *what)
{
    rec *gx = NULL;
    char **g = guard_slot(c, kind, op, key, &gx);
    if (omap_get(&c->inflight, op) || !leading(c) ||
        (g && *g && gx->rv && strcmp(*g, gx->rv) == 0 &&
         (!gx->retry_at || real_now(NULL) < gx->retry_at))) {
        json_object_put(body);   /* in flight, already written at this version, or not leading */
        return 0;
    }
    wctx *w = calloc(1, sizeof(*w));
    rec *f = calloc(1, sizeof(*f));
    if (w) {
        w->c = c;
        w->kind = kind;
        w->op = strdup(op);
        w->key = strdup(key);
        w->what = strdup(what);
    }
    const char *s = body ? json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN) : NULL;
    cu_kreq *rq = NULL;
    if (w && f && w->op && w->key && w->what && (f->key = strdup(op)) != NULL) {
        if (c->verbose >= 3)
            clog_(c, 3, "%s %s %s", method, path, s ? s : "");
        rq = cu_kclient_request(c->kc, method, path, s, s ? strlen(s) : 0, ctype, write_done, w);
    }
    json_object_put(body);
    if (!rq || omap_add(&c->inflight, f) != 0) {
        clog_(c, 0, "%s: could not start the request", what);
        if (w) {
            free(w->op);
            free(w->key);
            free(w->what);
        }
        free(w);
        if (f)
            free(f->key);
        free(f);
        return 0;   /* an rq already sent completes with w freed? never: rq is NULL here */
    }
    c->n.writes++;
    if (g) {
        free(*g);
        *g = sdup(gx->rv);
    }
    return 1;
}

static int inflight(ctrl *c, const char *op)
{
    return omap_get(&c->inflight, op) != NULL;
}

static void mark_job(ctrl *c, const char *jkey)
{
    if (!jkey || omap_get(&c->dirty_jobs, jkey))
        return;
    rec *d = calloc(1, sizeof(*d));
    if (!d || !(d->key = strdup(jkey)) || omap_add(&c->dirty_jobs, d) != 0) {
        if (d)
            free(d->key);
        free(d);
    }
}

/* ---------------- events ---------------- */

/* Events wait in a FIFO and at most EV_INFLIGHT are sent at a time, so
 * that a burst of them never delays admissions and Job starts (which go
 * straight to the client). The FIFO is bounded: past EV_QUEUE_MAX the
 * oldest are dropped (counted). */
enum { EV_INFLIGHT = 4, EV_QUEUE_MAX = 20000 };

typedef struct evctx {
    ctrl *c;
    cu_recorder *r;
    cu_event_req req;          /* body reduced to metadata.name once queued */
    char *text;                /* the body to send */
    struct evctx *next;
} evctx;

static void ev_pump(ctrl *c);

static void event_done(cu_kclient *kc, const cu_kresp *r, void *ud)
{
    (void)kc;
    evctx *e = ud;
    ctrl *c = e->c;
    if (r->code < 200 || r->code >= 300) {
        cu_recorder_failed(e->r, &e->req);
        clog_(c, 2, "event %s %s failed: %d", e->req.method, e->req.path, r->code);
    }
    cu_event_req_free(&e->req);
    free(e->text);
    free(e);
    c->ev_inflight--;
    ev_pump(c);
}

static void ev_pump(ctrl *c)
{
    while (c->evq_head && c->ev_inflight < EV_INFLIGHT && !c->stopping) {
        evctx *e = c->evq_head;
        c->evq_head = e->next;
        if (!c->evq_head)
            c->evq_tail = NULL;
        c->evq_len--;
        if (!cu_kclient_request(c->kc, e->req.method, e->req.path, e->text, strlen(e->text),
                                e->req.content_type, event_done, e)) {
            cu_event_req_free(&e->req);
            free(e->text);
            free(e);
            continue;
        }
        c->ev_inflight++;
        c->events++;
    }
}

static void ev_queue_free(ctrl *c)
{
    while (c->evq_head) {
        evctx *e = c->evq_head;
        c->evq_head = e->next;
        cu_event_req_free(&e->req);
        free(e->text);
        free(e);
    }
    c->evq_tail = NULL;
    c->evq_len = 0;
}

/* Records an event about an object (fire and forget; the leader only). */
static void emit_av(ctrl *c, int job, const char *av, const char *kind, const char *ns,
                    const char *name, const char *uid, const char *type, const char *reason,
                    const char *msg)
{
    if (!leading(c))
        return;
    cu_event_ref ref = {
        .api_version = av,
        .kind = kind, .ns = ns, .name = name, .uid = uid,
    };
    evctx *e = calloc(1, sizeof(*e));
    if (!e)
        return;
    e->c = c;
    e->r = job ? c->ev_job : c->ev_adm;
    if (cu_recorder_record(e->r, &ref, type, reason, msg, real_now(NULL), &e->req) != 1) {
        free(e);
        return;
    }
    /* queued as text: a json-c tree costs ten times more */
    e->text = strdup(json_object_to_json_string_ext(e->req.body, JSON_C_TO_STRING_PLAIN));
    json_object *md = jget(e->req.body, "metadata"), *small = json_object_new_object();
    if (md && jget(md, "name")) {
        json_object *m2 = json_object_new_object();
        json_object_object_add(m2, "name", json_object_get(jget(md, "name")));
        json_object_object_add(small, "metadata", m2);
    }
    json_object_put(e->req.body);
    e->req.body = small;
    if (!e->text) {
        cu_event_req_free(&e->req);
        free(e);
        return;
    }
    if (c->evq_len >= EV_QUEUE_MAX) {
        evctx *old = c->evq_head;
        c->evq_head = old->next;
        if (!c->evq_head)
            c->evq_tail = NULL;
        c->evq_len--;
        cu_event_req_free(&old->req);
        free(old->text);
        free(old);
        c->events_dropped++;
    }
    if (c->evq_tail)
        c->evq_tail->next = e;
    else
        c->evq_head = e;
    c->evq_tail = e;
    c->evq_len++;
    ev_pump(c);
}

static void emit(ctrl *c, int job, const char *kind, const char *ns, const char *name,
                 const char *uid, const char *type, const char *reason, const char *msg)
{
    emit_av(c, job, job ? "batch/v1" : CU_GROUP "/v1beta2", kind, ns, name, uid, type, reason,
            msg);
}

static void emit_wl(ctrl *c, const cu_workload *wl, const char *type, const char *reason,
                    const char *msg)
{
    if (wl)
        emit(c, 0, "Workload", wl->meta.ns, wl->meta.name, wl->meta.uid, type, reason, msg);
}

static void emit_job(ctrl *c, const cjob *j, const char *type, const char *reason, const char *msg)
{
    if (j)
        emit(c, 1, "Job", j->ns, j->name, j->uid, type, reason, msg);
}

/* ---------------- metrics (events) ---------------- */

static const char *role(const ctrl *c)
{
    return !c->elect ? "standalone" : c->leading ? "leader" : "follower";
}

static const char *pclass(const cu_workload *wl)
{
    return wl && wl->pc_name ? wl->pc_name : "";
}

static double secs(int64_t ms)
{
    return ms > 0 ? (double)ms / 1000.0 : 0.0;
}

/* When the workload entered its queue last: the Requeued transition, else
 * its creation. */
static int64_t queued_at(const cu_workload *wl)
{
    const cu_condition *rq = cu_workload_cond(wl, "Requeued");
    if (rq && rq->status && strcmp(rq->status, "True") == 0 && rq->ltt_ms)
        return rq->ltt_ms;
    return wl->meta.has_created ? wl->meta.created_ms : 0;
}

/* The parent of cohort name in the engine's views (NULL: a root, or not
 * known), and the root of its tree (name itself for a root). Cohort
 * chains are at most 64 deep here (a cycle makes no cohort active). */
static const char *cohort_parent(ctrl *c, const char *name)
{
    for (size_t h = 0, nh = cu_engine_ncohorts(c->eng); h < nh; h++) {
        const cu_cohort_info *hi = cu_engine_cohort_info(c->eng, h);
        if (strcmp(hi->name, name) == 0)
            return hi->parent;
    }
    return NULL;
}

static const char *cohort_root(ctrl *c, const char *name)
{
    for (int depth = 0; name && depth < 64; depth++) {
        const char *parent = cohort_parent(c, name);
        if (!parent)
            break;
        name = parent;
    }
    return name;
}

static void m_wl(ctrl *c, cu_metric_family *cqf, cu_metric_family *lqf, const cu_workload *wl,
                 const char *cq, int observe, double v)
{
    const char *a[] = { cq ? cq : "", pclass(wl), role(c) };
    const char *b[] = { wl->queue_name ? wl->queue_name : "", wl->meta.ns ? wl->meta.ns : "",
                        pclass(wl), role(c) };
    if (observe) {
        cu_metric_observe(cqf, a, v);
        cu_metric_observe(lqf, b, v);
    } else {
        cu_metric_inc(cqf, a, v);
        cu_metric_inc(lqf, b, v);
    }
}

/* The evicted_workloads counters (and the "once" variant), for a
 * Workload of ClusterQueue cq evicted for reason (cause may be ""). */
static void m_evicted(ctrl *c, rec *w, const cu_workload *wl, const char *cq, const char *reason,
                      const char *cause)
{
    const char *a[] = { cq ? cq : "", reason, cause, pclass(wl), role(c) };
    const char *b[] = { wl->queue_name ? wl->queue_name : "", wl->meta.ns ? wl->meta.ns : "",
                        reason, cause, pclass(wl), role(c) };
    cu_metric_inc(c->km.evicted_workloads_total, a, 1);
    cu_metric_inc(c->km.local_queue_evicted_workloads_total, b, 1);
    static const char *const known[] = { "Preempted", "PodsReadyTimeout", "Deactivated",
                                         "ClusterQueueStopped", "LocalQueueStopped" };
    for (unsigned i = 0; i < 5; i++)
        if (strcmp(reason, known[i]) == 0 && !(w->evicted_once & (1u << i))) {
            w->evicted_once |= 1u << i;
            cu_metric_inc(c->km.evicted_workloads_once_total, a, 1);
        }
}

/* ---------------- conditions ---------------- */

static const cu_workload *wl_of(const rec *r)
{
    return r && r->w && r->w->workloads.n ? r->w->workloads.items[0] : NULL;
}

static int cond_is(const cu_workload *wl, const char *type, const char *status)
{
    const cu_condition *k = wl ? cu_workload_cond(wl, type) : NULL;
    return k && k->status && strcmp(k->status, status) == 0;
}

/* The Workload's conditions as a json array (new; caller frees). */
static json_object *conds_json(const cu_workload *wl)
{
    json_object *a = json_object_new_array();
    for (size_t i = 0; wl && i < wl->nconds; i++) {
        const cu_condition *k = &wl->conds[i];
        json_object *o = json_object_new_object();
        char ts[40];
        json_object_object_add(o, "type", json_object_new_string(k->type ? k->type : ""));
        json_object_object_add(o, "status", json_object_new_string(k->status ? k->status : "Unknown"));
        json_object_object_add(o, "reason", json_object_new_string(k->reason ? k->reason : "Unknown"));
        json_object_object_add(o, "message", json_object_new_string(k->message ? k->message : ""));
        cu_time_format(k->ltt_ms, ts, sizeof(ts));
        json_object_object_add(o, "lastTransitionTime", json_object_new_string(ts));
        json_object_array_add(a, o);
    }
    return a;
}

/* conds with type set (taken and returned; lastTransitionTime kept when
 * the status does not change). */
static json_object *cset(json_object *conds, const char *type, const char *status,
                         const char *reason, const char *message, int64_t now)
{
    json_object *n = cu_ctrl_set_condition(conds, type, status, reason, message, now);
    json_object_put(conds);
    return n;
}

static json_object *status_patch(const char *rv, json_object **st_out)
{
    json_object *p = json_object_new_object(), *st = json_object_new_object();
    if (rv) {
        json_object *md = json_object_new_object();
        json_object_object_add(md, "resourceVersion", json_object_new_string(rv));
        json_object_object_add(p, "metadata", md);
    }
    json_object_object_add(p, "status", st);
    *st_out = st;
    return p;
}

static int wl_status_write(ctrl *c, rec *w, opkind kind, json_object *p, const char *what)
{
    const cu_workload *wl = wl_of(w);
    char op[1100], path[1200];
    snprintf(op, sizeof(op), "status:%s", w->key);
    snprintf(path, sizeof(path), "%s/%s/workloads/%s/status", WLPATH, wl->meta.ns, wl->meta.name);
    return send_write(c, kind, op, w->key, "PATCH", path, MERGE, p, what);
}

/* ---------------- the engine ---------------- */

static void grave_push(ctrl *c, cu_world *w)
{
    if (!w)
        return;
    if (c->ngrave == c->capgrave) {
        size_t cap = c->capgrave ? c->capgrave * 2 : 64;
        cu_world **g = realloc(c->grave, cap * sizeof(*g));
        if (!g) {
            /* cannot keep it for the engine: rebuild now-ish and leak nothing */
            c->need_rebuild = 1;
            world_free(w);   /* the engine is freed before it is used again */
            if (c->eng) {
                cu_engine_free(c->eng);
                c->eng = NULL;
            }
            return;
        }
        c->grave = g;
        c->capgrave = cap;
    }
    c->grave[c->ngrave++] = w;
}

static int by_idx_set(ctrl *c, int idx, rec *r)
{
    if (idx < 0)
        return -1;
    if ((size_t)idx >= c->capby) {
        size_t cap = c->capby ? c->capby * 2 : 256;
        while (cap <= (size_t)idx)
            cap *= 2;
        rec **p = realloc(c->by_idx, cap * sizeof(*p));
        if (!p)
            return -1;
        memset(p + c->capby, 0, (cap - c->capby) * sizeof(*p));
        c->by_idx = p;
        c->capby = cap;
    }
    c->by_idx[idx] = r;
    if ((size_t)idx >= c->nby)
        c->nby = (size_t)idx + 1;
    return 0;
}

static int in_backoff(const ctrl *c, const rec *w)
{
    (void)c;
    return w->rq_at > 0 && !cu_workload_has_quota(wl_of(w)) && w->rq_at > real_now(NULL);
}

/* Removes w from the engine (its copy stays alive until the next rebuild). */
static void eng_remove(ctrl *c, rec *w)
{
    if (c->eng && w->idx >= 0) {
        cu_engine_finish(c->eng, w->idx);
        c->by_idx[w->idx] = NULL;
        c->tombs++;
        c->need_views = 1;
        c->eng_dirty = 1;
    }
    w->idx = -1;
    w->ew = NULL;   /* still alive: pinned, or in the grave until the next rebuild */
}

/* Replaces the current decode of x (which the engine may reference). */
static void set_decode(ctrl *c, rec *x, cu_world *w)
{
    if (x->w) {
        if (x->pinned && c->eng)
            grave_push(c, x->w);
        else
            world_free(x->w);
    }
    x->w = w;
    x->pinned = 0;
}

/* Adds w's current decode to the engine when it belongs there. */
/* Queue order of a Job's Workload: the Job's creation time when it is
 * earlier than the Workload's (the Workload is created after the Job; after
 * a controller outage, much later, and in no particular order). */
static void job_order(ctrl *c, rec *w)
{
    const cu_workload *wl = wl_of(w);
    rec *jr = w->owner ? omap_get(&c->objs[R_JOB], w->owner) : NULL;
    if (!wl || !jr || !jr->job || !jr->job->created_ms)
        return;
    cu_workload *mw = (cu_workload *)wl;   /* our own decode */
    if (!mw->meta.has_created || jr->job->created_ms < mw->meta.created_ms) {
        mw->meta.created_ms = jr->job->created_ms;
        mw->meta.has_created = 1;
    }
}

static void eng_add(ctrl *c, rec *w)
{
    const cu_workload *wl = wl_of(w);
    if (!c->eng || w->idx >= 0 || !wl || cu_workload_finished(wl) || w->hold)
        return;
    if (in_backoff(c, w)) {
        if (!c->next_wake || w->rq_at < c->next_wake)
            c->next_wake = w->rq_at;
        return;
    }
    job_order(c, w);
    int idx = cu_engine_add_workload(c->eng, wl);
    if (idx < 0 || by_idx_set(c, idx, w) != 0) {
        c->need_rebuild = 1;
        return;
    }
    w->idx = idx;
    w->ew = w->w;
    w->pinned = 1;
    c->need_views = 1;
    c->eng_dirty = 1;
}

/* Rebuilds the engine from the records. Not while admissions are assumed
 * (their quota is only in the engine). */
static void rebuild(ctrl *c)
{
    if (c->nassumed > 0 || c->nsynced < c->ninf)
        return;
    if (c->eng)
        cu_engine_free(c->eng);
    c->eng = NULL;
    for (size_t i = 0; i < c->ngrave; i++)
        world_free(c->grave[i]);
    c->ngrave = 0;
    cu_world_free(&c->vw);
    cu_world_init(&c->vw);
    c->nby = 0;
    c->tombs = 0;
    c->next_wake = 0;
    cu_world *vw = &c->vw;
    size_t cnt[NRES] = { 0 };
    for (int r = 0; r < R_JOB; r++)
        cnt[r] = c->objs[r].n;
#define ALLOCV(vec, r)                                                                             \
    do {                                                                                           \
        vw->vec.items = calloc(cnt[r] ? cnt[r] : 1, sizeof(*vw->vec.items));                       \
        vw->vec.cap = cnt[r];                                                                      \
    } while (0)
    ALLOCV(flavors, R_RF);
    ALLOCV(cqs, R_CQ);
    ALLOCV(cohorts, R_COHORT);
    ALLOCV(lqs, R_LQ);
    ALLOCV(wpcs, R_WPC);
    ALLOCV(pcs, R_PC);
    ALLOCV(namespaces, R_NS);
    ALLOCV(workloads, R_WL);
#undef ALLOCV
    if (!vw->flavors.items || !vw->cqs.items || !vw->cohorts.items || !vw->lqs.items ||
        !vw->wpcs.items || !vw->pcs.items || !vw->namespaces.items || !vw->workloads.items) {
        clog_(c, 0, "out of memory building the engine");
        return;
    }
    for (int r = 0; r < R_WL; r++) {
        OMAP_FOREACH(&c->objs[r], x) {
            cu_world *w = x->w;
            if (!w)
                continue;
            switch (r) {
            case R_RF: if (w->flavors.n) vw->flavors.items[vw->flavors.n++] = w->flavors.items[0]; break;
            case R_CQ: if (w->cqs.n) vw->cqs.items[vw->cqs.n++] = w->cqs.items[0]; break;
            case R_COHORT: if (w->cohorts.n) vw->cohorts.items[vw->cohorts.n++] = w->cohorts.items[0]; break;
            case R_LQ: if (w->lqs.n) vw->lqs.items[vw->lqs.n++] = w->lqs.items[0]; break;
            case R_WPC: if (w->wpcs.n) vw->wpcs.items[vw->wpcs.n++] = w->wpcs.items[0]; break;
            case R_PC: if (w->pcs.n) vw->pcs.items[vw->pcs.n++] = w->pcs.items[0]; break;
            case R_NS: if (w->namespaces.n) vw->namespaces.items[vw->namespaces.n++] = w->namespaces.items[0]; break;
            }
        }
    }
    /* workloads: their engine copy becomes the current decode */
    rec **order = calloc(c->objs[R_WL].n ? c->objs[R_WL].n : 1, sizeof(*order));
    size_t no = 0;
    if (!order) {
        clog_(c, 0, "out of memory building the engine");
        return;
    }
    OMAP_FOREACH(&c->objs[R_WL], x) {
        x->ew = NULL;
        x->idx = -1;
        x->pinned = 0;
        const cu_workload *wl = wl_of(x);
        if (!wl || cu_workload_finished(wl))
            continue;
        if (in_backoff(c, x)) {
            if (!c->next_wake || x->rq_at < c->next_wake)
                c->next_wake = x->rq_at;
            continue;
        }
        job_order(c, x);
        x->ew = x->w;
        x->pinned = 1;
        vw->workloads.items[vw->workloads.n++] = (cu_workload *)wl;
        order[no++] = x;
    }
    cu_diag d;
    cu_diag_init(&d);
    c->eng = cu_engine_new(&c->eopts);
    if (!c->eng || cu_engine_load(c->eng, vw, &d) != CU_OK) {
        for (size_t i = 0; i < d.n; i++)
            clog_(c, 0, "%s", d.msgs[i]);
        clog_(c, 0, "could not load the engine");
        if (c->eng)
            cu_engine_free(c->eng);
        c->eng = NULL;
        for (size_t i = 0; i < no; i++)
            order[i]->ew = NULL;
    } else {
        for (size_t i = 0; i < no; i++) {
            order[i]->idx = (int)i;
            by_idx_set(c, (int)i, order[i]);
        }
        c->need_rebuild = 0;
        c->need_views = 1;
        c->eng_dirty = 1;
        c->n.rebuilds++;
        clog_(c, 2, "engine rebuilt: %zu ClusterQueues, %zu workloads", vw->cqs.n, no);
    }
    cu_diag_free(&d);
    free(order);
}

static void undo_admission(ctrl *c, rec *w)
{
    if (!w->assumed)
        return;
    c->eng_dirty = 1;
    w->assumed = 0;
    w->adm_written = 0;
    c->nassumed--;
    /* the engine admitted a copy that says "pending": take it out and
     * queue the current state again */
    if (w->idx >= 0 && c->eng) {
        eng_remove(c, w);
        if (!w->w)
            return;
        eng_add(c, w);
    }
}

static int same_spec(const cu_workload *a, const cu_workload *b)
{
    if (!a || !b)
        return 0;
    if ((a->queue_name == NULL) != (b->queue_name == NULL) ||
        (a->queue_name && strcmp(a->queue_name, b->queue_name) != 0))
        return 0;
    if (a->active != b->active || a->has_priority != b->has_priority ||
        a->priority != b->priority || a->npodsets != b->npodsets)
        return 0;
    for (size_t i = 0; i < a->npodsets; i++) {
        const cu_podset *x = &a->podsets[i], *y = &b->podsets[i];
        if (x->count != y->count || x->has_min != y->has_min || x->min_count != y->min_count ||
            x->requests.n != y->requests.n)
            return 0;
        /* requests too: a fixed invalid request (negative) must reach the engine */
        for (size_t r = 0; r < x->requests.n; r++)
            if (x->requests.items[r].milli != y->requests.items[r].milli ||
                strcmp(x->requests.items[r].name, y->requests.items[r].name) != 0)
                return 0;
    }
    return 1;
}

/* Brings the engine in line with Workload w's current decode. */
static void wl_sync(ctrl *c, rec *w)
{
    const cu_workload *n = wl_of(w);
    if (!c->eng || !n)
        return;
    if (w->idx < 0) {
        eng_add(c, w);
        return;
    }
    const cu_workload *o = w->ew && w->ew->workloads.n ? w->ew->workloads.items[0] : NULL;
    int q = cu_workload_has_quota(n);
    if (cu_workload_finished(n)) {
        eng_remove(c, w);
        return;
    }
    int eadm = cu_engine_wl_admitted(c->eng, w->idx);
    if (q) {
        if (w->assumed) {
            w->assumed = 0;
            w->adm_written = 0;
            c->nassumed--;
        }
        if (eadm && n->adm_cq && o) {
            const cu_wl_info *vi = cu_engine_workload_info_idx(c->eng, w->idx);
            if (vi && vi->cluster_queue && strcmp(vi->cluster_queue, n->adm_cq) == 0)
                return;   /* confirmation of what the engine holds */
        }
        eng_remove(c, w);   /* admitted by someone else, or differently */
        eng_add(c, w);
        return;
    }
    if (eadm) {
        if (w->assumed)
            return;   /* our admission is not visible yet */
        if (cu_engine_wl_evicting(c->eng, w->idx)) {
            cu_engine_eviction_done(c->eng, w->idx);   /* the Job stopped: quota released */
            c->need_views = 1;
            c->n.evictions++;
            return;
        }
        eng_remove(c, w);   /* admission cleared without the engine */
        eng_add(c, w);
        return;
    }
    if (!same_spec(o, n) || in_backoff(c, w)) {
        eng_remove(c, w);
        eng_add(c, w);
    }
}

/* ---------------- decoding at the boundary ---------------- */

/* Logs, once per version of a queue-shaping object, each problem api/'s
 * validation finds in it (the rules of Kueue's webhooks and CRD schemas,
 * the same as `cueue simulate`), and what the engine does about it. */
static void log_invalid(ctrl *c, int r, const cu_world *w)
{
    static const char *const what[NRES] = {
        [R_RF] = "the ClusterQueues using it are inactive until it is fixed",
        [R_CQ] = "the ClusterQueue is inactive and holds no quota until it is fixed",
        [R_COHORT] = "its ClusterQueues are inactive and it holds no quota until it is fixed",
        [R_LQ] = "its workloads stay pending until it is fixed",
        [R_WPC] = "Kueue's webhook would refuse it",
        [R_PC] = "kube-apiserver would refuse it",
        [R_NS] = "kube-apiserver would refuse it",
    };
    static const cu_kind kinds[NRES] = {
        [R_RF] = CU_KIND_RESOURCE_FLAVOR, [R_CQ] = CU_KIND_CLUSTER_QUEUE,
        [R_COHORT] = CU_KIND_COHORT, [R_LQ] = CU_KIND_LOCAL_QUEUE,
        [R_WPC] = CU_KIND_WORKLOAD_PRIORITY_CLASS, [R_PC] = CU_KIND_PRIORITY_CLASS,
        [R_NS] = CU_KIND_NAMESPACE,
    };
    const void *obj = NULL;
    switch (r) {
    case R_RF: obj = w->flavors.n ? w->flavors.items[0] : NULL; break;
    case R_CQ: obj = w->cqs.n ? w->cqs.items[0] : NULL; break;
    case R_COHORT: obj = w->cohorts.n ? w->cohorts.items[0] : NULL; break;
    case R_LQ: obj = w->lqs.n ? w->lqs.items[0] : NULL; break;
    case R_WPC: obj = w->wpcs.n ? w->wpcs.items[0] : NULL; break;
    case R_PC: obj = w->pcs.n ? w->pcs.items[0] : NULL; break;
    case R_NS: obj = w->namespaces.n ? w->namespaces.items[0] : NULL; break;
    default: return;
    }
    cu_diag d;
    cu_diag_init(&d);
    if (obj && cu_object_validate(kinds[r], obj, &d) != CU_OK) {
        for (size_t i = 0; i < d.n; i++)
            clog_(c, 0, "invalid %s (%s)", d.msgs[i], what[r]);
        if (d.dropped)
            clog_(c, 0, "... and %zu more problems", d.dropped);
    }
    cu_diag_free(&d);
}

static cu_world *decode_obj(ctrl *c, int r, json_object *obj, char *why, size_t nwhy)
{
    if (why && nwhy)
        snprintf(why, nwhy, "not a valid %s", res_tab[r].kind);
    cu_arena tmp;
    cu_arena_init(&tmp, 16 * 1024);
    cu_node *n = cu_ctrl_json_to_node(&tmp, obj);
    cu_world *w = calloc(1, sizeof(*w));
    if (!n || !w) {
        cu_arena_free(&tmp);
        free(w);
        return NULL;
    }
    cu_world_init(w);
    cu_arena_free(&w->arena);
    cu_arena_init(&w->arena, 2048);   /* one object: small chunks */
    cu_node_set(&tmp, n, "apiVersion", cu_node_new_str(&tmp, res_tab[r].api_version));
    cu_node_set(&tmp, n, "kind", cu_node_new_str(&tmp, res_tab[r].kind));
    cu_doc doc = { .file = "api", .root = n };
    cu_diag d;
    cu_diag_init(&d);
    cu_err err = cu_world_decode(w, &doc, &d);
    if (err != CU_OK || d.n) {
        for (size_t i = 0; i < d.n; i++)
            clog_(c, 1, "%s", d.msgs[i]);
        if (why && nwhy && d.n)
            snprintf(why, nwhy, "%s", d.msgs[0]);
    }
    cu_diag_free(&d);
    cu_arena_free(&tmp);
    size_t total = w->flavors.n + w->cqs.n + w->cohorts.n + w->lqs.n + w->workloads.n +
                   w->wpcs.n + w->pcs.n + w->namespaces.n;
    if (total != 1) {
        world_free(w);
        return NULL;
    }
    return w;
}

/* resources.excludeResourcePrefixes: drop those requests (Kueue ignores
 * them in quota accounting). */
static void exclude_resources(ctrl *c, cu_world *w)
{
    const cu_config *cf = c->cfg.cf;
    if (!cf || !w || !w->workloads.n || !cf->exclude_resource_prefixes.n)
        return;
    cu_workload *wl = w->workloads.items[0];
    for (size_t p = 0; p < wl->npodsets; p++) {
        cu_reslist *rl = &wl->podsets[p].requests;
        size_t k = 0;
        for (size_t i = 0; i < rl->n; i++) {
            int drop = 0;
            for (size_t e = 0; e < cf->exclude_resource_prefixes.n && !drop; e++)
                drop = strncmp(rl->items[i].name, cf->exclude_resource_prefixes.items[e],
                               strlen(cf->exclude_resource_prefixes.items[e])) == 0;
            if (!drop)
                rl->items[k++] = rl->items[i];
        }
        rl->n = k;
    }
}

static void decode_wl_extras(rec *x, json_object *obj)
{
    free(x->owner);
    x->owner = NULL;
    json_object *owners = jget(jget(obj, "metadata"), "ownerReferences");
    size_t no = json_object_is_type(owners, json_type_array) ? json_object_array_length(owners) : 0;
    for (size_t i = 0; i < no; i++) {
        json_object *o = json_object_array_get_idx(owners, i);
        const char *kind = jstr2(o, "kind", NULL), *name = jstr2(o, "name", NULL);
        const char *av = jstr2(o, "apiVersion", NULL);
        json_object *ctl = jget(o, "controller");
        if (kind && name && av && strcmp(kind, "Job") == 0 && strcmp(av, "batch/v1") == 0 &&
            ctl && json_object_get_boolean(ctl)) {
            const char *ns = jstr2(obj, "metadata", "namespace");
            size_t l = strlen(ns ? ns : "") + strlen(name) + 2;
            x->owner = malloc(l);
            if (x->owner)
                snprintf(x->owner, l, "%s/%s", ns ? ns : "", name);
        }
    }
    free(x->tmpl);
    x->tmpl = NULL;
    json_object *ps = jget(jget(obj, "spec"), "podSets");
    json_object *p0 = json_object_is_type(ps, json_type_array) && json_object_array_length(ps)
                          ? json_object_array_get_idx(ps, 0)
                          : NULL;
    x->ps_count = (int32_t)jint(jget(p0, "count"), 1);
    json_object *ts = jget(jget(p0, "template"), "spec");
    json_object *t = json_object_new_object();
    json_object *sel = jget(ts, "nodeSelector"), *tols = jget(ts, "tolerations");
    if (sel)
        json_object_object_add(t, "nodeSelector", json_object_get(sel));
    if (tols)
        json_object_object_add(t, "tolerations", json_object_get(tols));
    x->tmpl = jtext(t);
    json_object_put(t);
    json_object *rq = jget(jget(obj, "status"), "requeueState");
    x->rq_count = (int32_t)jint(jget(rq, "count"), 0);
    const char *at = jstr2(rq, "requeueAt", NULL);
    int64_t ms = 0;
    x->rq_at = at && cu_time_parse(at, &ms) == 0 ? ms : 0;
}

static cjob *decode_job(ctrl *c, json_object *job)
{
    const char *ns = jstr2(job, "metadata", "namespace"), *name = jstr2(job, "metadata", "name");
    const char *uid = jstr2(job, "metadata", "uid");
    if (!ns || !name || !uid)
        return NULL;
    cjob *j = calloc(1, sizeof(*j));
    if (!j)
        return NULL;
    j->ns = strdup(ns);
    j->name = strdup(name);
    j->uid = strdup(uid);
    j->label_queue = sdup(jstr2(jget(job, "metadata"), "labels", CU_LABEL_QUEUE_NAME));
    if (j->label_queue && !*j->label_queue) {
        free(j->label_queue);
        j->label_queue = NULL;
    }
    j->deleting = jget(jget(job, "metadata"), "deletionTimestamp") != NULL;
    {
        const char *ct = jstr2(job, "metadata", "creationTimestamp");
        int64_t ms = 0;
        j->created_ms = ct && cu_time_parse(ct, &ms) == 0 ? ms : 0;
    }
    json_object *spec = jget(job, "spec"), *st = jget(job, "status");
    json_object *susp = jget(spec, "suspend");
    j->suspended = susp && json_object_get_boolean(susp);
    j->has_par = jget(spec, "parallelism") != NULL;
    j->par = (int32_t)jint(jget(spec, "parallelism"), 1);
    j->has_comp = jget(spec, "completions") != NULL;
    j->comp = (int32_t)jint(jget(spec, "completions"), 0);
    j->active = jint(jget(st, "active"), 0);
    j->ready = jint(jget(st, "ready"), 0);
    j->succeeded = jint(jget(st, "succeeded"), 0);
    j->finished = cu_ctrl_job_finished(job, &j->failed);
    if (j->finished && j->failed) {
        json_object *conds = jget(st, "conditions");
        size_t n = json_object_is_type(conds, json_type_array) ? json_object_array_length(conds) : 0;
        for (size_t i = 0; i < n; i++) {
            json_object *k = json_object_array_get_idx(conds, i);
            const char *t = jstr2(k, "type", NULL);
            if (t && strcmp(t, "Failed") == 0)
                j->fail_msg = sdup(jstr2(k, "message", NULL));
        }
    }
    json_object *sel = jget(jget(jget(spec, "template"), "spec"), "nodeSelector");
    j->cur_sel = json_object_is_type(sel, json_type_object) ? jtext(sel) : NULL;
    cu_arena a;
    cu_arena_init(&a, 1024);
    const char *wlname = cu_job_workload_name(&a, name, uid);
    if (wlname) {
        size_t l = strlen(ns) + strlen(wlname) + 2;
        j->wlkey = malloc(l);
        if (j->wlkey)
            snprintf(j->wlkey, l, "%s/%s", ns, wlname);
    }
    cu_arena_free(&a);
    /* the Workload it needs: only for Jobs the controller may manage */
    int maybe = j->label_queue != NULL;
    if (!maybe) {
        char lk[600];
        snprintf(lk, sizeof(lk), "%s/default", ns);
        maybe = c->cfg.manage_without_queue || omap_get(&c->objs[R_LQ], lk) != NULL;
    }
    if (maybe && !j->finished && !j->deleting) {
        json_object *src = job, *copy = NULL;
        if (!j->label_queue) {
            /* build it as if labelled; the queue is decided at creation */
            if (json_object_deep_copy(job, &copy, NULL) == 0) {
                json_object *md = jget(copy, "metadata"), *lb = jget(md, "labels");
                if (!lb) {
                    lb = json_object_new_object();
                    json_object_object_add(md, "labels", lb);
                }
                json_object_object_add(lb, CU_LABEL_QUEUE_NAME, json_object_new_string("default"));
                src = copy;
            }
        }
        cu_diag d;
        cu_diag_init(&d);
        json_object *body = cu_ctrl_workload_for_job(src, &d);
        if (body) {
            j->create_body = jtext(body);
            json_object_put(body);
        } else {
            j->bad = sdup(d.n ? d.msgs[0] : "its Workload cannot be built");   /* reported once */
        }
        cu_diag_free(&d);
        json_object_put(copy);
    }
    if (!j->ns || !j->name || !j->uid || !j->wlkey) {
        cjob_free(j);
        return NULL;
    }
    return j;
}

/* The queue of a Job: its label; else "default" when its namespace has a
 * LocalQueue named default; else "" when manageJobsWithoutQueueName
 * covers its namespace (managed, no queue); NULL: not managed. */
static const char *job_queue(ctrl *c, const cjob *j)
{
    if (j->label_queue)
        return j->label_queue;
    char lk[600];
    snprintf(lk, sizeof(lk), "%s/default", j->ns);
    if (omap_get(&c->objs[R_LQ], lk))
        return "default";
    if (!c->cfg.manage_without_queue)
        return NULL;
    rec *nsr = omap_get(&c->objs[R_NS], j->ns);
    const cu_namespace *nso = nsr && nsr->w && nsr->w->namespaces.n ? nsr->w->namespaces.items[0]
                                                                     : NULL;
    static const cu_kvs none = { 0, NULL };
    cu_kv kv[1];
    cu_kvs synth = { 1, kv };
    const cu_kvs *labels = nso ? &nso->meta.labels : &none;
    if (!nso) {
        kv[0].key = "kubernetes.io/metadata.name";
        kv[0].value = j->ns;
        labels = &synth;
    }
    return cu_config_manages_unlabelled(c->cfg.cf, labels) ? "" : NULL;
}

/* ---------------- informer events ---------------- */

static void rec_free(rec *x)
{
    if (!x)
        return;
    free(x->key);
    free(x->rv);
    free(x->owner);
    free(x->tmpl);
    free(x->ev_reason);
    free(x->ev_msg);
    free(x->pr_reason);
    free(x->rf_spec);
    free(x->st_conds);
    free(x->deact_msg);
    free(x->bad);
    free(x->sent_rv[0]);
    free(x->sent_rv[1]);
    cjob_free(x->job);
    free(x);
}

static void obj_key(json_object *o, char *out, size_t n)
{
    const char *ns = jstr2(o, "metadata", "namespace"), *name = jstr2(o, "metadata", "name");
    if (ns)
        snprintf(out, n, "%s/%s", ns, name ? name : "");
    else
        snprintf(out, n, "%s", name ? name : "");
}

/* ---------------- objects that cannot be decoded ---------------- */

/* A Warning Event on obj (of resource r), when it has a name. */
static void emit_obj(ctrl *c, int r, json_object *obj, const char *reason, const char *msg)
{
    const char *name = jstr2(obj, "metadata", "name");
    if (name && *name)
        emit_av(c, r == R_JOB, res_tab[r].api_version, res_tab[r].kind,
                jstr2(obj, "metadata", "namespace"), name, jstr2(obj, "metadata", "uid"),
                "Warning", reason, msg);
}

/* The condition on a Workload the controller cannot decode: set (True,
 * why) or, once it decodes again (why NULL), turned False. Written only
 * when it is not there already as wanted. */
static void wl_decode_cond(ctrl *c, rec *x, json_object *obj, const char *why)
{
    json_object *conds = jget(jget(obj, "status"), "conditions"), *keep = json_object_new_array();
    size_t n = json_object_is_type(conds, json_type_array) ? json_object_array_length(conds) : 0;
    int have = 0, any = 0;
    for (size_t i = 0; i < n; i++) {
        json_object *k = json_object_array_get_idx(conds, i);
        const char *t = jstr2(k, "type", NULL), *st = jstr2(k, "status", NULL);
        const char *m = jstr2(k, "message", NULL);
        if (!t)
            continue;   /* not a condition: left out of what is written back */
        if (strcmp(t, CU_COND_DECODE_FAILED) == 0) {
            any = 1;
            have = why ? st && !strcmp(st, "True") && m && !strcmp(m, why)
                       : st && !strcmp(st, "False");
        }
        json_object_array_add(keep, json_object_get(k));
    }
    if (have || (!why && !any)) {
        json_object_put(keep);
        return;
    }
    keep = cset(keep, CU_COND_DECODE_FAILED, why ? "True" : "False",
                why ? CU_EV_DECODE_FAILED : "Decoded",
                why ? why : "The controller decodes the Workload", real_now(NULL));
    json_object *st, *p = status_patch(x->rv, &st);
    json_object_object_add(st, "conditions", keep);
    const char *sl = strchr(x->key, '/');
    if (!sl) {
        json_object_put(p);
        return;
    }
    char op[1100], path[1200], what[1300];
    snprintf(op, sizeof(op), "status:%s", x->key);
    snprintf(path, sizeof(path), "%s/%.*s/workloads/%s/status", WLPATH, (int)(sl - x->key),
             x->key, sl + 1);
    snprintf(what, sizeof(what), "writing condition %s of Workload %s", CU_COND_DECODE_FAILED,
             x->key);
    send_write(c, OP_STATUS, op, x->key, "PATCH", path, MERGE, p, what);
}

/* Object obj (resource r, record x) cannot be decoded: said once per
 * problem (a log line at the default level and a Warning Event on it),
 * and left out; a Workload also gets the condition. */
static void report_undecodable(ctrl *c, rec *x, int r, json_object *obj, const char *why)
{
    if (r == R_WL)
        wl_decode_cond(c, x, obj, why);
    if (x->bad && strcmp(x->bad, why) == 0)
        return;
    free(x->bad);
    x->bad = sdup(why);
    clog_(c, 0, "%s %s cannot be decoded; left out until it changes: %s", res_tab[r].kind, x->key,
          why);
    emit_obj(c, r, obj, CU_EV_DECODE_FAILED, why);
}

/* Object x decodes (again). */
static void report_decodable(ctrl *c, rec *x, int r, json_object *obj)
{
    if (r == R_WL)
        wl_decode_cond(c, x, obj, NULL);
    if (!x->bad)
        return;
    clog_(c, 0, "%s %s decodes again", res_tab[r].kind, x->key);
    free(x->bad);
    x->bad = NULL;
}

/* The informer left something out (not JSON, too deep, no name). */
static void on_skip(cu_informer *inf, const char *why, json_object *obj, void *ud)
{
    (void)inf;
    rctx *rc = ud;
    ctrl *c = rc->c;
    /* once: a relist meets the same items again */
    size_t h = hstr(why) ^ (size_t)rc->r;
    for (unsigned i = 0; i < 64 && i < c->nskips_said; i++)
        if (c->skips_said[i] == h)
            return;
    c->skips_said[c->nskips_said++ % 64] = h;
    clog_(c, 0, "%s", why);
    if (obj)
        emit_obj(c, rc->r, obj, CU_EV_DECODE_FAILED, why);
}

static void on_event(cu_informer *inf, cu_ievent ev, json_object *obj, void *ud)
{
    (void)inf;
    rctx *rc = ud;
    ctrl *c = rc->c;
    int r = rc->r;
    char key[600];
    obj_key(obj, key, sizeof(key));
    c->eng_dirty = 1;
    rec *x = omap_get(&c->objs[r], key);

    if (ev == CU_IEV_DELETED) {
        if (!x)
            return;
        omap_del(&c->objs[r], key);
        if (r == R_JOB) {
            clog_(c, 1, "Job %s deleted", key);
        } else if (r == R_WL) {
            if (x->assumed) {
                x->assumed = 0;
                c->nassumed--;
            }
            if (x->evict_pending)
                c->nevict_pending--;
            eng_remove(c, x);
            set_decode(c, x, NULL);
            mark_job(c, x->owner);
        } else {
            c->need_rebuild = 1;
            x->pinned = 1;   /* the engine may point into it */
            set_decode(c, x, NULL);
            if (r == R_CQ || r == R_LQ || r == R_COHORT) {
                char ck[700];
                snprintf(ck, sizeof(ck), "%s/%s", r == R_CQ ? "cq" : r == R_LQ ? "lq" : "cohort", key);
                cu_coalescer_forget(c->co, ck);
            }
        }
        rec_free(x);
        return;
    }

    if (!x) {
        x = calloc(1, sizeof(*x));
        if (!x || !(x->key = strdup(key)) || omap_add(&c->objs[r], x) != 0) {
            if (x)
                free(x->key);
            free(x);
            clog_(c, 0, "out of memory keeping %s %s", res_tab[r].kind, key);
            return;
        }
        x->r = r;
        x->idx = -1;
    }
    free(x->rv);
    x->rv = sdup(jstr2(obj, "metadata", "resourceVersion"));

    if (r == R_JOB) {
        cjob *j = decode_job(c, obj);
        if (!j) {
            report_undecodable(c, x, r, obj, "no metadata.namespace, name or uid");
            return;
        }
        if (j->bad)
            report_undecodable(c, x, r, obj, j->bad);
        else
            report_decodable(c, x, r, obj);
        cjob_free(x->job);
        x->job = j;
        mark_job(c, key);
        c->pr_dirty = 1;
        return;
    }

    char why[600];
    cu_world *w = decode_obj(c, r, obj, why, sizeof(why));
    if (r == R_WL) {
        if (!w) {
            report_undecodable(c, x, r, obj, why);
            return;
        }
        report_decodable(c, x, r, obj);
        exclude_resources(c, w);
        set_decode(c, x, w);
        x->hold = 0;
        decode_wl_extras(x, obj);
        /* every decode carries the queue time, not only the engine's copy:
         * the wait-time metrics read the current decode at admission */
        job_order(c, x);
        const cu_workload *wl = wl_of(x);
        if (x->evict_pending && (cond_is(wl, "Evicted", "True") || !cu_workload_has_quota(wl))) {
            x->evict_pending = 0;   /* written (or moot) */
            c->nevict_pending--;
        }
        wl_sync(c, x);
        mark_job(c, x->owner);
        c->need_views = 1;
        c->pr_dirty = 1;
        c->deact_dirty = 1;
        return;
    }

    /* queue-shaping objects: the engine is rebuilt, unless only the status
     * changed (our own status writes come back here) */
    size_t shape;
    {
        json_object *t = json_object_new_object();
        static const char *const parts[] = { "spec", "value", "globalDefault" };
        for (size_t i = 0; i < 3; i++)
            if (jget(obj, parts[i]))
                json_object_object_add(t, parts[i], json_object_get(jget(obj, parts[i])));
        json_object *md = jget(obj, "metadata");
        if (jget(md, "labels"))
            json_object_object_add(t, "labels", json_object_get(jget(md, "labels")));
        if (jget(md, "annotations"))   /* validated too (size, keys) */
            json_object_object_add(t, "annotations", json_object_get(jget(md, "annotations")));
        shape = hstr(json_object_to_json_string_ext(t, JSON_C_TO_STRING_PLAIN)) ^ (w ? 1 : 0);
        json_object_put(t);
    }
    if (x->w && w && x->shape == shape) {
        world_free(w);   /* same for the engine: keep the decode it points at */
        w = x->w;
    } else {
        x->shape = shape;
        if (x->w || w)
            c->need_rebuild = 1;
        if (w)
            log_invalid(c, r, w);
    }
    if (!w)
        report_undecodable(c, x, r, obj, why);
    else
        report_decodable(c, x, r, obj);
    if (w != x->w) {
        x->pinned = 1;   /* the engine may point into it */
        set_decode(c, x, w);
    }
    if (r == R_RF) {
        free(x->rf_spec);
        json_object *spec = jget(obj, "spec"), *t = json_object_new_object();
        if (jget(spec, "nodeLabels"))
            json_object_object_add(t, "nodeLabels", json_object_get(jget(spec, "nodeLabels")));
        if (jget(spec, "tolerations"))
            json_object_object_add(t, "tolerations", json_object_get(jget(spec, "tolerations")));
        x->rf_spec = jtext(t);
        json_object_put(t);
    }
    if (r == R_CQ || r == R_LQ || r == R_COHORT) {
        json_object *status = jget(obj, "status");
        free(x->st_conds);
        x->st_conds = jtext(jget(status, "conditions"));
        if (status) {
            char ck[700];
            snprintf(ck, sizeof(ck), "%s/%s", r == R_CQ ? "cq" : r == R_LQ ? "lq" : "cohort", key);
            json_object *b = json_object_new_object();
            json_object_object_add(b, "status", json_object_get(status));
            cu_coalescer_seed(c->co, ck, b);
            json_object_put(b);
        }
    }
    const char *lqname = jstr2(obj, "metadata", "name");
    if (r == R_LQ && lqname && strcmp(lqname, "default") == 0 && c->need_rebuild) {
        /* Jobs of its namespace may now be managed (LocalQueue "default") */
        OMAP_FOREACH(&c->objs[R_JOB], jr) {
            if (jr->job && !jr->job->label_queue)
                mark_job(c, jr->key);
        }
    }
}

/* ---------------- the Job integration ---------------- */

static json_object *parse_or_null(const char *s)
{
    return s ? cu_json_parse_str(s) : NULL;
}

/* The merge patch that stops a Job and restores its template: suspend,
 * the Workload's original nodeSelector (keys added at admission removed)
 * and tolerations, and parallelism when partial admission changed it. */
static json_object *job_stop_patch(const cjob *j, const rec *w)
{
    json_object *p = json_object_new_object(), *spec = json_object_new_object();
    json_object_object_add(p, "spec", spec);
    json_object_object_add(spec, "suspend", json_object_new_boolean(1));
    if (!w)
        return p;
    json_object *orig = parse_or_null(w->tmpl);
    json_object *osel = jget(orig, "nodeSelector"), *otol = jget(orig, "tolerations");
    json_object *cur = parse_or_null(j->cur_sel);
    json_object *sel = json_object_new_object();
    if (json_object_is_type(cur, json_type_object)) {
        json_object_object_foreach(cur, k, v) {
            (void)v;
            if (!jget(osel, k))
                json_object_object_add(sel, k, NULL);
        }
    }
    if (json_object_is_type(osel, json_type_object)) {
        json_object_object_foreach(osel, k, v)
            json_object_object_add(sel, k, json_object_get(v));
    }
    json_object *tspec = json_object_new_object(), *tmpl = json_object_new_object();
    json_object_object_add(tmpl, "spec", tspec);
    json_object_object_add(spec, "template", tmpl);
    if (json_object_object_length(sel))
        json_object_object_add(tspec, "nodeSelector", sel);
    else
        json_object_put(sel);
    json_object_object_add(tspec, "tolerations", otol ? json_object_get(otol) : NULL);
    if (j->has_par && w->ps_count > 0 && j->par != w->ps_count && j->par < w->ps_count)
        json_object_object_add(spec, "parallelism", json_object_new_int(w->ps_count));
    json_object_put(orig);
    json_object_put(cur);
    return p;
}

static json_object *job_start_patch(ctrl *c, const cjob *j, const rec *w, cu_diag *d)
{
    const cu_workload *wl = wl_of(w);
    json_object *job = json_object_new_object(), *spec = json_object_new_object();
    json_object *tmpl = json_object_new_object();
    json_object_object_add(job, "spec", spec);
    if (j->has_par)
        json_object_object_add(spec, "parallelism", json_object_new_int(j->par > w->ps_count ? j->par : w->ps_count));
    if (j->has_comp)
        json_object_object_add(spec, "completions", json_object_new_int(j->comp));
    json_object *orig = parse_or_null(w->tmpl);
    json_object_object_add(tmpl, "spec", orig ? orig : json_object_new_object());
    json_object_object_add(spec, "template", tmpl);

    json_object *wj = json_object_new_object(), *md = json_object_new_object();
    json_object_object_add(md, "namespace", json_object_new_string(wl->meta.ns ? wl->meta.ns : ""));
    json_object_object_add(md, "name", json_object_new_string(wl->meta.name));
    json_object_object_add(wj, "metadata", md);
    json_object *st = json_object_new_object(), *adm = json_object_new_object();
    json_object *psas = json_object_new_array();
    json_object *flavors = json_object_new_object();
    /* the admission: from the Workload, or, written but not seen back yet,
     * from the engine that made it */
    const cu_wl_info *vi = !cu_workload_has_quota(wl) && w->adm_written && c->eng && w->idx >= 0
                               ? cu_engine_workload_info_idx(c->eng, w->idx)
                               : NULL;
    size_t npsa = vi ? vi->npsa : wl->npsa;
    for (size_t i = 0; i < npsa; i++) {
        json_object *o = json_object_new_object(), *fl = json_object_new_object();
        size_t nf = vi ? vi->psa[i].n : wl->psa[i].flavors.n;
        for (size_t k = 0; k < nf; k++) {
            const char *fn = vi ? vi->psa[i].flavors[k] : wl->psa[i].flavors.items[k].value;
            const char *rn = vi ? vi->psa[i].resources[k] : wl->psa[i].flavors.items[k].key;
            json_object_object_add(fl, rn, json_object_new_string(fn));
            rec *rf = omap_get(&c->objs[R_RF], fn);
            if (rf && !jget(flavors, fn)) {
                json_object *fo = json_object_new_object();
                json_object *sp = parse_or_null(rf->rf_spec);
                json_object_object_add(fo, "spec", sp ? sp : json_object_new_object());
                json_object_object_add(flavors, fn, fo);
            }
        }
        json_object_object_add(o, "flavors", fl);
        json_object_object_add(o, "count", json_object_new_int(vi ? vi->psa[i].count : wl->psa[i].count));
        json_object_array_add(psas, o);
    }
    json_object_object_add(adm, "podSetAssignments", psas);
    json_object_object_add(st, "admission", adm);
    json_object_object_add(wj, "status", st);
    json_object *p = cu_ctrl_job_start_patch(job, wj, flavors, d);
    json_object_put(job);
    json_object_put(wj);
    json_object_put(flavors);
    return p;
}

/* An evicted Workload whose pods are gone: status.admission cleared,
 * QuotaReserved=False, Admitted=False, Requeued=True (Kueue's
 * UnsetQuotaReservation with the eviction's reason and message). */
static void release_evicted(ctrl *c, rec *w)
{
    const cu_workload *wl = wl_of(w);
    const cu_condition *ec = cu_workload_cond(wl, "Evicted");
    const char *er = ec && ec->reason ? ec->reason : "Evicted";
    const char *em = ec && ec->message ? ec->message : "The workload was evicted";
    int64_t now = real_now(NULL);
    json_object *st, *p = status_patch(w->rv, &st);
    json_object_object_add(st, "admission", NULL);
    json_object *k = conds_json(wl);
    k = cset(k, "QuotaReserved", "False", "Pending", em, now);
    k = cset(k, "Admitted", "False", "NoReservation", "The workload has no reservation", now);
    k = cset(k, "Requeued", "True", er, em, now);
    json_object_object_add(st, "conditions", k);
    char what[1300];
    snprintf(what, sizeof(what), "releasing the quota of evicted Workload %s", w->key);
    wl_status_write(c, w, OP_STATUS, p, what);
}

/* 1 when the Workload body the controller would create is invalid by
 * Kueue's rules (the API server would refuse it), the first problem in
 * bad. */
static int workload_invalid(ctrl *c, json_object *body, char *bad, size_t n)
{
    cu_world *w = decode_obj(c, R_WL, body, NULL, 0);
    if (!w) {
        snprintf(bad, n, "it cannot be decoded");
        return 1;
    }
    cu_diag d;
    cu_diag_init(&d);
    int invalid = cu_world_validate(w, &d) != CU_OK && d.n > 0;
    if (invalid)
        snprintf(bad, n, "%s", d.msgs[0]);
    cu_diag_free(&d);
    world_free(w);
    return invalid;
}

static void reconcile_job(ctrl *c, rec *jr)
{
    cjob *j = jr->job;
    if (!j || j->deleting)
        return;
    const char *queue = job_queue(c, j);
    if (!queue)
        return;
    rec *w = omap_get(&c->objs[R_WL], j->wlkey);
    const cu_workload *wl = wl_of(w);
    char op[1100], path[1200], what[1300];
    snprintf(op, sizeof(op), "job:%s", jr->key);
    snprintf(path, sizeof(path), "/apis/batch/v1/namespaces/%s/jobs/%s", j->ns, j->name);

    if (!w || !wl) {
        if (w || j->finished || !j->create_body)
            return;
        if (jr->created_at && real_now(NULL) - jr->created_at < 30000)
            return;   /* created; the watch has not brought it yet */
        if (jr->retry_at && real_now(NULL) < jr->retry_at)
            return;   /* refused a moment ago: backing off */
        json_object *body = cu_json_parse_str(j->create_body);
        if (!body)
            return;
        json_object *spec = jget(body, "spec");
        /* Kueue writes the class's value next to priorityClassRef */
        json_object *ref = jget(spec, "priorityClassRef");
        const char *pk = jstr2(ref, "kind", NULL), *pn = jstr2(ref, "name", NULL);
        if (pk && pn) {
            int wpc = strcmp(pk, "WorkloadPriorityClass") == 0;
            rec *pr = omap_get(&c->objs[wpc ? R_WPC : R_PC], pn);
            if (pr && pr->w && wpc && pr->w->wpcs.n)
                json_object_object_add(spec, "priority",
                                       json_object_new_int(pr->w->wpcs.items[0]->value));
            else if (pr && pr->w && !wpc && pr->w->pcs.n)
                json_object_object_add(spec, "priority",
                                       json_object_new_int(pr->w->pcs.items[0]->value));
        }
        if (*queue)
            json_object_object_add(spec, "queueName", json_object_new_string(queue));
        else
            json_object_object_del(spec, "queueName");
        char cop[1100], cpath[700];
        snprintf(cop, sizeof(cop), "create:%s", j->wlkey);
        snprintf(cpath, sizeof(cpath), "%s/%s/workloads", WLPATH, j->ns);
        snprintf(what, sizeof(what), "creating Workload %s for Job %s", j->wlkey, jr->key);
        size_t h = hstr(json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN));
        if (h == jr->refused) {
            json_object_put(body);   /* refused for good already; reported then */
            return;
        }
        char bad[700];
        if (workload_invalid(c, body, bad, sizeof(bad))) {
            /* the API server would refuse it (a queue-name label that is
             * no LocalQueue name, say): said once, not sent */
            jr->refused = h;
            json_object_put(body);
            clog_(c, 0, "Job %s: its Workload %s is invalid and is not created: %s", jr->key,
                  j->wlkey, bad);
            char m[900];
            snprintf(m, sizeof(m), "Workload %s is invalid: %s", strchr(j->wlkey, '/') + 1, bad);
            emit_job(c, j, "Warning", CU_EV_FAILED_CREATE_WORKLOAD, m);
            return;
        }
        jr->create_hash = h;
        if (send_write(c, OP_CREATE, cop, jr->key, "POST", cpath, "application/json", body, what))
            jr->created_at = real_now(NULL);
        return;
    }
    if (cu_workload_finished(wl))
        return;
    if (j->finished) {
        json_object *st, *p = status_patch(NULL, &st);
        const char *msg = j->failed ? (j->fail_msg ? j->fail_msg : "Job failed")
                                    : "Job finished successfully";
        json_object_object_add(st, "conditions",
                               cset(conds_json(wl), "Finished", "True",
                                    j->failed ? "Failed" : "Succeeded", msg, real_now(NULL)));
        snprintf(what, sizeof(what), "finishing Workload %s", w->key);
        if (!wl_status_write(c, w, OP_STATUS, p, what))
            return;
        if (cu_workload_has_quota(wl)) {
            m_wl(c, c->km.finished_workloads_total, c->km.local_queue_finished_workloads_total, wl,
                 wl->adm_cq, 0, 1);
            const cu_condition *ac = cu_workload_cond(wl, "Admitted");
            if (ac && ac->ltt_ms)
                m_wl(c, c->km.execution_time_seconds, c->km.local_queue_execution_time_seconds, wl,
                     wl->adm_cq, 1, secs(real_now(NULL) - ac->ltt_ms));
        }
        clog_(c, 0, "finished Job %s (%s)%s%s", jr->key, j->failed ? "Failed" : "Succeeded",
              j->failed ? ": " : "", j->failed ? msg : "");
        char m[900];
        emit_job(c, j, "Normal", CU_EV_FINISHED_WORKLOAD,
                 cu_ctrl_event_msg_finished(m, sizeof(m), wl->meta.ns, wl->meta.name));
        return;
    }
    int holds = cu_workload_has_quota(wl) || (w->assumed && w->adm_written);
    int evicted = cond_is(wl, "Evicted", "True");
    const char *wq = wl->queue_name ? wl->queue_name : "";
    if (!holds && !w->assumed && j->suspended && strcmp(wq, queue) != 0) {
        /* Kueue: a new queue-name on a suspended, unadmitted Job moves its Workload */
        json_object *p = json_object_new_object(), *spec = json_object_new_object();
        json_object_object_add(p, "spec", spec);
        json_object_object_add(spec, "queueName", *queue ? json_object_new_string(queue) : NULL);
        char sop[1100], spath[1200];
        snprintf(sop, sizeof(sop), "spec:%s", w->key);
        snprintf(spath, sizeof(spath), "%s/%s/workloads/%s", WLPATH, wl->meta.ns, wl->meta.name);
        snprintf(what, sizeof(what), "moving Workload %s to LocalQueue %s", w->key, queue);
        if (send_write(c, OP_OTHER, sop, w->key, "PATCH", spath, MERGE, p, what))
            clog_(c, 0, "Job %s: queue-name changed to %s; moving its Workload", jr->key, queue);
        return;
    }
    if ((holds && evicted) || (!holds && !w->assumed)) {
        if (!j->suspended) {
            json_object *p = job_stop_patch(j, w);
            snprintf(what, sizeof(what), "suspending Job %s", jr->key);
            if (send_write(c, OP_JOB, op, jr->key, "PATCH", path, MERGE, p, what)) {
                clog_(c, 0, "suspending Job %s: %s", jr->key,
                      evicted ? "its Workload was evicted" : "its Workload holds no quota");
                const cu_condition *ec = cu_workload_cond(wl, "Evicted");
                emit_job(c, j, "Normal", CU_EV_STOPPED,
                         evicted && ec && ec->message ? ec->message : CU_EV_MSG_NOT_ADMITTED);
            }
        } else if (holds && evicted && j->active == 0) {
            release_evicted(c, w);   /* stopped: give the quota back, queue it again */
        }
        return;
    }
    if (holds && j->suspended) {
        cu_diag d;
        cu_diag_init(&d);
        json_object *p = job_start_patch(c, j, w, &d);
        if (!p) {
            for (size_t i = 0; i < d.n; i++)
                clog_(c, 0, "%s", d.msgs[i]);
        } else {
            snprintf(what, sizeof(what), "starting Job %s", jr->key);
            if (send_write(c, OP_JOB, op, jr->key, "PATCH", path, MERGE, p, what)) {
                clog_(c, 0, "started Job %s (Workload %s, ClusterQueue %s)", jr->key, w->key,
                      wl->adm_cq ? wl->adm_cq : "?");
                char m[600];
                emit_job(c, j, "Normal", CU_EV_STARTED,
                         cu_ctrl_event_msg_started(m, sizeof(m), wl->adm_cq ? wl->adm_cq : "?"));
            }
        }
        cu_diag_free(&d);
    }
}

/* ---------------- the admission cycle ---------------- */

static int log_admission(ctrl *c, const cu_wl_info *info, const rec *w)
{
    char flv[400] = "";
    size_t off = 0;
    for (size_t i = 0; i < info->npsa; i++)
        for (size_t r = 0; r < info->psa[i].n && off < sizeof(flv) - 1; r++)
            off += (size_t)snprintf(flv + off, sizeof(flv) - off, "%s%s=%s", off ? "," : "",
                                    info->psa[i].resources[r], info->psa[i].flavors[r]);
    clog_(c, 0, "admitted Workload %s to ClusterQueue %s (%s)%s%s", w->key, info->cluster_queue,
          flv, w->owner ? " for Job " : "", w->owner ? w->owner : "");
    return 0;
}

static void admit(ctrl *c, int idx)
{
    rec *w = (size_t)idx < c->nby ? c->by_idx[idx] : NULL;
    const cu_wl_info *info = cu_engine_workload_info_idx(c->eng, idx);
    const cu_workload *wl = wl_of(w);
    if (!w || !wl || !info || !info->cluster_queue || w->assumed || cu_workload_has_quota(wl))
        return;
    char op[1100];
    snprintf(op, sizeof(op), "status:%s", w->key);
    if (inflight(c, op)) {
        /* another status write of this Workload is on its way: the engine
         * must not count an admission that is not written; retry later */
        eng_remove(c, w);
        eng_add(c, w);
        return;
    }
    int64_t now = real_now(NULL);
    json_object *k = conds_json(wl);
    /* Kueue: a new reservation turns Evicted/Preempted False, "Previously: ..." */
    static const char *const was[] = { "Evicted", "Preempted" };
    for (int i = 0; i < 2; i++) {
        const cu_condition *e = cu_workload_cond(wl, was[i]);
        if (e && e->status && strcmp(e->status, "True") == 0) {
            char m[1100];
            snprintf(m, sizeof(m), "Previously: %s", e->message ? e->message : "");
            k = cset(k, was[i], "False", "QuotaReserved", m, now);
        }
    }
    json_object *p = cu_ctrl_admission_patch(info, w->rv, k, now);
    json_object_put(k);
    w->assumed = 1;
    c->nassumed++;
    char what[1300], path[1200];
    snprintf(what, sizeof(what), "writing the admission of Workload %s", w->key);
    snprintf(path, sizeof(path), "%s/%s/workloads/%s/status", WLPATH, wl->meta.ns, wl->meta.name);
    if (!send_write(c, OP_ADMIT, op, w->key, "PATCH", path, MERGE, p, what)) {
        /* another write of this Workload is in flight, or this version was
         * written already: wait for a newer one (not logged nor counted:
         * it is admitted when the write is sent) */
        w->hold = 1;
        undo_admission(c, w);
        return;
    }
    c->n.admissions++;
    log_admission(c, info, w);
    double wait = secs(now - queued_at(wl));
    m_wl(c, c->km.quota_reserved_workloads_total, c->km.local_queue_quota_reserved_workloads_total,
         wl, info->cluster_queue, 0, 1);
    m_wl(c, c->km.admitted_workloads_total, c->km.local_queue_admitted_workloads_total, wl,
         info->cluster_queue, 0, 1);
    m_wl(c, c->km.quota_reserved_wait_time_seconds,
         c->km.local_queue_quota_reserved_wait_time_seconds, wl, info->cluster_queue, 1, wait);
    m_wl(c, c->km.admission_wait_time_seconds, c->km.local_queue_admission_wait_time_seconds, wl,
         info->cluster_queue, 1, wait);
    for (size_t i = 0, n = cu_engine_ncqs(c->eng); i < n; i++) {
        const cu_cq_info *ci = cu_engine_cq_info(c->eng, i);
        if (strcmp(ci->name, info->cluster_queue) != 0)
            continue;
        /* every cohort up the tree counts it */
        const char *co = ci->cohort;
        for (int depth = 0; co && depth < 64; depth++, co = cohort_parent(c, co)) {
            const char *lv[] = { co, pclass(wl), role(c) };
            cu_metric_inc(c->km.cohort_subtree_admitted_workloads_total, lv, 1);
        }
        break;
    }
    char m[600];
    int64_t since = wl->meta.has_created ? now - wl->meta.created_ms : 0;
    emit_wl(c, wl, "Normal", CU_EV_QUOTA_RESERVED,
            cu_ctrl_event_msg_quota_reserved(m, sizeof(m), info->cluster_queue, since));
    emit_wl(c, wl, "Normal", CU_EV_ADMITTED,
            cu_ctrl_event_msg_admitted(m, sizeof(m), info->cluster_queue));
}

static void evict(ctrl *c, int idx)
{
    rec *w = (size_t)idx < c->nby ? c->by_idx[idx] : NULL;
    const cu_wl_info *info = cu_engine_workload_info_idx(c->eng, idx);
    if (!w || !info)
        return;
    free(w->ev_reason);
    free(w->ev_msg);
    free(w->pr_reason);
    w->ev_reason = sdup(info->evicted_reason ? info->evicted_reason : "Preempted");
    w->ev_msg = sdup(info->evicted_message ? info->evicted_message : "Preempted");
    w->pr_reason = sdup(info->preempted_reason);
    if (!w->evict_pending) {
        w->evict_pending = 1;
        c->nevict_pending++;
    }
    c->n.preemptions++;
    clog_(c, 0, "evicting Workload %s: %s", w->key, w->ev_msg ? w->ev_msg : "");
    if (wl_of(w)) {
        m_evicted(c, w, wl_of(w), info->cluster_queue, w->ev_reason, "");
        if (w->pr_reason) {
            /* the preemptor's ClusterQueue: the last part of "preemptor path: /a/b/cq" */
            char pcq[300] = "";
            const char *pp = w->ev_msg ? strstr(w->ev_msg, "preemptor path: ") : NULL;
            if (pp) {
                pp += 16;
                size_t len = strcspn(pp, ";, ");
                const char *last = pp;
                for (size_t i = 0; i < len; i++)
                    if (pp[i] == '/')
                        last = pp + i + 1;
                snprintf(pcq, sizeof(pcq), "%.*s", (int)(pp + len - last), last);
            }
            const char *lv[] = { pcq, w->pr_reason, role(c) };
            cu_metric_inc(c->km.preempted_workloads_total, lv, 1);
        }
    }
    if (w->pr_reason)
        emit_wl(c, wl_of(w), "Normal", CU_EV_PREEMPTED, w->ev_msg);
    char er[200];
    emit_wl(c, wl_of(w), "Normal",
            cu_ctrl_event_reason_evicted(er, sizeof(er), w->ev_reason, NULL), w->ev_msg);
}

static void write_evictions(ctrl *c)
{
    if (!c->nevict_pending)
        return;
    OMAP_FOREACH(&c->objs[R_WL], w) {
        const cu_workload *wl = wl_of(w);
        if (!w->evict_pending || !wl)
            continue;
        int64_t now = real_now(NULL);
        json_object *st, *p = status_patch(w->rv, &st);
        json_object *k = conds_json(wl);
        k = cset(k, "Evicted", "True", w->ev_reason, w->ev_msg, now);
        if (w->pr_reason)
            k = cset(k, "Preempted", "True", w->pr_reason, w->ev_msg, now);
        json_object_object_add(st, "conditions", k);
        char what[1300];
        snprintf(what, sizeof(what), "evicting Workload %s", w->key);
        wl_status_write(c, w, OP_STATUS, p, what);
    }
}

/* The record of a workload pending in the engine (its removed copies show
 * as finished), or NULL. */
static rec *pending_rec(ctrl *c, const cu_wl_info *info)
{
    if (!info || info->admitted || info->finished || info->evicting)
        return NULL;
    char key[600];
    snprintf(key, sizeof(key), "%s/%s", info->ns, info->name);
    rec *r = omap_get(&c->objs[R_WL], key);
    return r && r->idx >= 0 ? r : NULL;
}

static void write_pending(ctrl *c, const cu_wl_info *info, rec *w)
{
    const cu_workload *wl = wl_of(w);
    if (!wl || w->assumed || !info->message || cu_workload_has_quota(wl))
        return;
    const char *reason = info->reason ? info->reason : "Pending";
    const cu_condition *qr = cu_workload_cond(wl, "QuotaReserved");
    if (qr && qr->status && qr->reason && qr->message && strcmp(qr->status, "False") == 0 &&
        strcmp(qr->reason, reason) == 0 && strcmp(qr->message, info->message) == 0)
        return;
    /* same reason, new numbers: at most one rewrite per 10 s per Workload
     * (messages such as "N more needed" change with every admission) */
    int64_t now = real_now(NULL);
    if (qr && qr->status && qr->reason && strcmp(qr->status, "False") == 0 &&
        strcmp(qr->reason, reason) == 0 && now - w->pend_at < 10000) {
        if (!c->pend_wake || w->pend_at + 10000 < c->pend_wake)
            c->pend_wake = w->pend_at + 10000;
        return;
    }
    json_object *st, *p = status_patch(w->rv, &st);
    json_object_object_add(st, "conditions", cset(conds_json(wl), "QuotaReserved", "False", reason,
                                                  info->message, real_now(NULL)));
    char what[1300];
    snprintf(what, sizeof(what), "writing the pending reason of Workload %s", w->key);
    if (!wl_status_write(c, w, OP_STATUS, p, what))
        return;
    w->pend_at = now;
    clog_(c, 1, "Workload %s pending: %s", w->key, info->message);
    emit_wl(c, wl, "Warning", CU_EV_PENDING, info->message);
}

/* waitForPodsReady: PodsReady conditions, timeouts (eviction with
 * backoff, or deactivation past the limit), and the count of admitted
 * workloads still waiting for their pods (blockAdmission). */
static void pods_ready(ctrl *c)
{
    const cu_pr_config *cfg = &c->cfg.pr;
    int64_t now = real_now(NULL);
    if (!cfg->enable || (!c->pr_dirty && (!c->pr_wake || now < c->pr_wake)))
        return;
    c->pr_dirty = 0;
    c->pr_wake = 0;
    c->pr_not_ready = 0;
    OMAP_FOREACH(&c->objs[R_WL], w) {
        const cu_workload *wl = wl_of(w);
        if (!wl || !cu_workload_has_quota(wl) || cu_workload_finished(wl))
            continue;
        rec *jr = w->owner ? omap_get(&c->objs[R_JOB], w->owner) : NULL;
        const cjob *j = jr ? jr->job : NULL;
        const cu_condition *adm = cu_workload_cond(wl, "Admitted");
        const cu_condition *prc = cu_workload_cond(wl, "PodsReady");
        int32_t pods = 0;
        for (size_t i = 0; i < wl->npsa; i++)
            pods += wl->psa[i].count;
        cu_pr_wl pw = {
            .ns = wl->meta.ns, .name = wl->meta.name,
            .admitted = adm && adm->status && strcmp(adm->status, "True") == 0,
            .admitted_ltt_ms = adm ? adm->ltt_ms : 0,
            .evicted = cond_is(wl, "Evicted", "True") || w->evict_pending,
            .inactive = !wl->active,
            .has_ready_cond = prc != NULL,
            .ready = prc && prc->status && strcmp(prc->status, "True") == 0,
            .ready_reason = prc ? prc->reason : NULL,
            .ready_ltt_ms = prc ? prc->ltt_ms : 0,
            .job_pods_ready = j && !j->suspended && cu_pr_job_pods_ready(pods, j->ready, j->succeeded),
            .requeue_count = w->rq_count,
        };
        if (cu_pr_wl_not_ready(&pw))
            c->pr_not_ready++;
        cu_pr_action a = cu_pr_decide(cfg, &pw, now, hstr(w->key) ^ (uint64_t)w->rq_count);
        if (a.recheck_at_ms > 0 && (!c->pr_wake || a.recheck_at_ms < c->pr_wake))
            c->pr_wake = a.recheck_at_ms;
        if (a.kind == CU_PR_NOTHING)
            continue;
        json_object *st, *p = status_patch(w->rv, &st);
        json_object *k = conds_json(wl);
        char what[1300];
        if (a.kind == CU_PR_SET_CONDITION) {
            k = cset(k, "PodsReady", a.ready ? "True" : "False", a.reason, a.message, now);
            if (a.ready && !pw.ready) {
                m_wl(c, c->km.ready_wait_time_seconds, c->km.local_queue_ready_wait_time_seconds,
                     wl, wl->adm_cq, 1, secs(now - queued_at(wl)));
                m_wl(c, c->km.admitted_until_ready_wait_time_seconds,
                     c->km.local_queue_admitted_until_ready_wait_time_seconds, wl, wl->adm_cq, 1,
                     secs(now - pw.admitted_ltt_ms));
            }
            snprintf(what, sizeof(what), "writing PodsReady of Workload %s", w->key);
        } else {
            k = cset(k, "Evicted", "True", a.evict_reason, a.evict_message, now);
            json_object *rq = json_object_new_object();
            json_object_object_add(rq, "count", json_object_new_int(a.new_requeue_count));
            if (a.requeue_at_ms > 0) {
                char ts[40];
                cu_time_format(a.requeue_at_ms, ts, sizeof(ts));
                json_object_object_add(rq, "requeueAt", json_object_new_string(ts));
            }
            if (a.kind == CU_PR_DEACTIVATE) {
                /* spec.active=false on the main resource; the eviction
                 * (reason Deactivated) follows once it is seen, as for any
                 * deactivated Workload (see deactivations) */
                json_object_put(rq);
                json_object_put(k);
                json_object_put(p);
                free(w->deact_msg);
                w->deact_msg = sdup(a.evict_message);
                json_object *sp = json_object_new_object(), *spec = json_object_new_object();
                json_object *md = json_object_new_object();
                json_object_object_add(md, "resourceVersion", json_object_new_string(w->rv));
                json_object_object_add(sp, "metadata", md);
                json_object_object_add(sp, "spec", spec);
                json_object_object_add(spec, "active", json_object_new_boolean(0));
                char op[1100], path[1200], w2[1300];
                snprintf(op, sizeof(op), "spec:%s", w->key);
                snprintf(path, sizeof(path), "%s/%s/workloads/%s", WLPATH, wl->meta.ns,
                         wl->meta.name);
                snprintf(w2, sizeof(w2), "deactivating Workload %s", w->key);
                if (send_write(c, OP_OTHER, op, w->key, "PATCH", path, MERGE, sp, w2))
                    clog_(c, 0, "deactivating Workload %s: %s", w->key, a.evict_message);
                continue;
            }
            json_object_object_add(st, "requeueState", rq);
            snprintf(what, sizeof(what), "evicting Workload %s (%s)", w->key, a.evict_reason);
            clog_(c, 0, "evicting Workload %s: %s", w->key, a.evict_message);
            m_evicted(c, w, wl, wl->adm_cq, a.evict_reason,
                      a.underlying_cause ? a.underlying_cause : "");
            {
                char er[200];
                emit_wl(c, wl, "Normal",
                        cu_ctrl_event_reason_evicted(er, sizeof(er), a.evict_reason,
                                                     a.underlying_cause),
                        a.evict_message);
            }
            const char *lv[] = { wl->adm_cq ? wl->adm_cq : "", a.evict_reason,
                                 a.underlying_cause ? a.underlying_cause : "", role(c) };
            cu_metric_observe(c->km.pods_ready_to_evicted_time_seconds, lv,
                              secs(now - pw.admitted_ltt_ms));
        }
        json_object_object_add(st, "conditions", k);
        wl_status_write(c, w, OP_STATUS, p, what);
    }
}

/* A Workload with spec.active=false that holds quota is evicted with
 * reason Deactivated (then its Job stops and the quota is released as
 * for any eviction). Kueue's messages: "The workload is deactivated", or
 * the requeuing-limit one when waitForPodsReady deactivated it. */
static void deactivations(ctrl *c)
{
    if (!c->deact_dirty)
        return;
    c->deact_dirty = 0;
    int64_t now = real_now(NULL);
    OMAP_FOREACH(&c->objs[R_WL], w) {
        const cu_workload *wl = wl_of(w);
        if (wl && cu_workload_has_quota(wl) && !cu_workload_finished(wl) &&
            cond_is(wl, "Evicted", "True") &&
            (!w->owner || !omap_get(&c->objs[R_JOB], w->owner))) {
            /* no Job to stop (a Workload created directly, or its Job is
             * gone): the eviction completes at once */
            release_evicted(c, w);
            continue;
        }
        if (!wl || wl->active || !cu_workload_has_quota(wl) || cu_workload_finished(wl) ||
            cond_is(wl, "Evicted", "True"))
            continue;
        const char *msg = w->deact_msg ? w->deact_msg : "The workload is deactivated";
        json_object *st, *p = status_patch(w->rv, &st);
        json_object_object_add(st, "conditions",
                               cset(conds_json(wl), "Evicted", "True", "Deactivated", msg, now));
        if (w->deact_msg)
            json_object_object_add(st, "requeueState", NULL);
        char what[1300];
        snprintf(what, sizeof(what), "evicting deactivated Workload %s", w->key);
        if (wl_status_write(c, w, OP_STATUS, p, what)) {
            clog_(c, 0, "evicting Workload %s: %s", w->key, msg);
            m_evicted(c, w, wl, wl->adm_cq, "Deactivated",
                      w->deact_msg ? "RequeuingLimitExceeded" : "");
            emit_wl(c, wl, "Normal", "EvictedDueToDeactivated", msg);
        }
    }
}

/* Drops the members whose value is null, at every depth: an apply
 * configuration says "not mine" by leaving a field out, and the server
 * then removes what this manager applied before. */
static void drop_nulls(json_object *o)
{
    if (json_object_is_type(o, json_type_array)) {
        for (size_t i = 0, n = json_object_array_length(o); i < n; i++)
            drop_nulls(json_object_array_get_idx(o, i));
        return;
    }
    if (!json_object_is_type(o, json_type_object))
        return;
    const char *gone[64];
    size_t ngone = 0;
    json_object_object_foreach(o, k, v) {
        if (!v) {
            if (ngone < sizeof(gone) / sizeof(gone[0]))
                gone[ngone++] = k;
        } else {
            drop_nulls(v);
        }
    }
    for (size_t i = 0; i < ngone; i++)
        json_object_object_del(o, gone[i]);
}

/* Writes one queue status with server-side apply (field manager
 * QSTATUS_MANAGER, forced: the controller is the authority on these
 * fields). The coalesced body is the whole status, so a flavor or a
 * condition it no longer lists is removed by the server. */
static void qstatus_send(const char *key, const char *body, void *ud)
{
    ctrl *c = ud;
    char path[1500], op[800], what[900];
    const char *name = strchr(key, '/') + 1, *kind;
    char qname[700], qns[300] = "", q[100];
    snprintf(q, sizeof(q), "?fieldManager=%s&force=true", QSTATUS_MANAGER);
    if (strncmp(key, "cq/", 3) == 0) {
        kind = "ClusterQueue";
        snprintf(qname, sizeof(qname), "%s", name);
        snprintf(path, sizeof(path), "/apis/kueue.x-k8s.io/v1beta2/clusterqueues/%s/status%s", name, q);
    } else if (strncmp(key, "cohort/", 7) == 0) {
        kind = "Cohort";
        snprintf(qname, sizeof(qname), "%s", name);
        snprintf(path, sizeof(path), "/apis/kueue.x-k8s.io/v1beta2/cohorts/%s/status%s", name, q);
    } else {
        const char *sl = strchr(name, '/');
        if (!sl)
            return;
        kind = "LocalQueue";
        snprintf(qns, sizeof(qns), "%.*s", (int)(sl - name), name);
        snprintf(qname, sizeof(qname), "%s", sl + 1);
        snprintf(path, sizeof(path), "%s/%s/localqueues/%s/status%s", WLPATH, qns, qname, q);
    }
    snprintf(op, sizeof(op), "qstatus:%s", key);
    snprintf(what, sizeof(what), "writing the status of %s", key);
    json_object *b = cu_json_parse_str(body), *meta = json_object_new_object();
    if (b && meta) {
        drop_nulls(b);
        json_object_object_add(b, "apiVersion", json_object_new_string("kueue.x-k8s.io/v1beta2"));
        json_object_object_add(b, "kind", json_object_new_string(kind));
        json_object_object_add(meta, "name", json_object_new_string(qname));
        if (*qns)
            json_object_object_add(meta, "namespace", json_object_new_string(qns));
        json_object_object_add(b, "metadata", meta);
        meta = NULL;
    }
    json_object_put(meta);
    if (!b || !send_write(c, OP_QSTATUS, op, key, "PATCH", path, APPLY, b, what))
        cu_coalescer_written(c->co, key, 0);
}

static json_object *parse_conds(const rec *x)
{
    return x && x->st_conds ? cu_json_parse_str(x->st_conds) : NULL;
}

/* ClusterQueue, LocalQueue and Cohort status: computed after the engine
 * changed, written at most once a second per object (coalesced). */
static void queue_status(ctrl *c)
{
    int64_t now = real_now(NULL);
    if (c->need_status) {
        c->need_status = 0;
        char key[700];
        for (size_t i = 0, n = cu_engine_ncqs(c->eng); i < n; i++) {
            const cu_cq_info *ci = cu_engine_cq_info(c->eng, i);
            rec *x = omap_get(&c->objs[R_CQ], ci->name);
            if (!x)
                continue;
            json_object *oc = parse_conds(x);
            json_object *b = cu_ctrl_cq_status(ci, c->eopts.fair_sharing, oc, now);
            json_object_put(oc);
            snprintf(key, sizeof(key), "cq/%s", ci->name);
            if (b)
                cu_coalescer_set(c->co, key, b);
            json_object_put(b);
        }
        for (size_t i = 0, n = cu_engine_nlqs(c->eng); i < n; i++) {
            const cu_lq_info *li = cu_engine_lq_info(c->eng, i);
            snprintf(key, sizeof(key), "%s/%s", li->ns, li->name);
            rec *x = omap_get(&c->objs[R_LQ], key);
            if (!x)
                continue;
            json_object *oc = parse_conds(x);
            json_object *b = cu_ctrl_lq_status(li, oc, now);
            json_object_put(oc);
            snprintf(key, sizeof(key), "lq/%s/%s", li->ns, li->name);
            if (b)
                cu_coalescer_set(c->co, key, b);
            json_object_put(b);
        }
        for (size_t i = 0, n = cu_engine_ncohorts(c->eng); i < n; i++) {
            const cu_cohort_info *hi = cu_engine_cohort_info(c->eng, i);
            if (!hi->obj || !omap_get(&c->objs[R_COHORT], hi->name))
                continue;   /* implicit cohorts have no object */
            json_object *b = cu_ctrl_cohort_status(hi, c->eopts.fair_sharing);
            snprintf(key, sizeof(key), "cohort/%s", hi->name);
            if (b)
                cu_coalescer_set(c->co, key, b);
            json_object_put(b);
        }
    }
    cu_coalescer_due(c->co, now, qstatus_send, c);
}

/* At the start of cycling (startup, or a new leader), the Jobs that are
 * already there get their Workloads before anything is admitted, so that
 * they are admitted in queue order rather than in the order their
 * Workload creations happened to land. At most 5 s. */
static int startup_wait(ctrl *c, int64_t now)
{
    if (c->startup_done)
        return 0;
    if (!c->started_at)
        c->started_at = now;
    if (now - c->started_at > 5000) {
        c->startup_done = 1;
        return 0;
    }
    OMAP_FOREACH(&c->objs[R_JOB], jr) {
        cjob *j = jr->job;
        if (!j || j->finished || j->deleting || !j->create_body || !job_queue(c, j))
            continue;
        if (!omap_get(&c->objs[R_WL], j->wlkey))
            return 1;
    }
    c->startup_done = 1;
    return 0;
}

static void cycle(ctrl *c)
{
    int64_t now = real_now(NULL);
    if (c->next_wake && now >= c->next_wake) {
        c->next_wake = 0;
        OMAP_FOREACH(&c->objs[R_WL], w) {
            if (w->idx < 0)
                eng_add(c, w);   /* re-arms next_wake for those still waiting */
        }
    }
    if ((c->need_rebuild || !c->eng ||
         (c->tombs > 1024 && c->tombs > c->objs[R_WL].n)) && c->nassumed == 0)
        rebuild(c);
    if (!c->eng)
        return;

    if (c->retry_wake && now >= c->retry_wake) {
        /* writes refused with 409: look at those objects again */
        c->retry_wake = 0;
        for (int r = R_WL; r <= R_JOB; r++) {
            OMAP_FOREACH(&c->objs[r], x) {
                if (!x->retry_at)
                    continue;
                if (x->retry_at <= now) {
                    if (x->hold) {
                        x->hold = 0;   /* its backoff is over: may be admitted again */
                        eng_add(c, x);
                    }
                    mark_job(c, r == R_JOB ? x->key : x->owner);
                    c->need_views = c->pr_dirty = c->deact_dirty = 1;
                } else if (!c->retry_wake || x->retry_at < c->retry_wake) {
                    c->retry_wake = x->retry_at;
                }
            }
        }
    }
    for (int r = 0; r < NRES; r++) {
        cu_informer_stats is;
        if (!c->inf[r])
            continue;
        cu_informer_stats_get(c->inf[r], &is);
        if (is.relists_410 != c->relists_seen[r]) {
            c->relists_seen[r] = is.relists_410;
            clog_(c, 1, "watch of %s expired (410 Gone): listed again", res_tab[r].path);
        }
    }
    if (c->pend_wake && now >= c->pend_wake) {
        c->pend_wake = 0;
        c->need_views = 1;
    }
    if (now >= c->resync_at) {
        /* a periodic full pass: no lost trigger leaves a Job behind */
        c->resync_at = now + 30000;
        OMAP_FOREACH(&c->objs[R_JOB], jr) mark_job(c, jr->key);
        OMAP_FOREACH(&c->objs[R_WL], wr) {
            if (wr->hold) {
                wr->hold = 0;
                eng_add(c, wr);
            }
        }
        c->need_views = 1;
        c->pr_dirty = 1;
    }
    /* the Job integration first: it creates Workloads and stops evicted Jobs */
    OMAP_FOREACH(&c->dirty_jobs, d) {
        omap_del(&c->dirty_jobs, d->key);
        rec *jr = omap_get(&c->objs[R_JOB], d->key);
        if (jr)
            reconcile_job(c, jr);
        free(d->key);
        free(d);
    }

    pods_ready(c);
    deactivations(c);
    cu_cycle_stats st;
    int ran = 0, progress = 0;
    if (startup_wait(c, now)) {
        queue_status(c);
        return;
    }
    if (!cu_pr_may_admit(&c->cfg.pr, c->pr_not_ready))
        ran = 1000;   /* blockAdmission: no admission until every admitted workload's pods are ready */
    else if (!c->eng_dirty && now - c->eng_ran_at < 1000)
        ran = 1000;   /* nothing changed: no cycle (time-based state is looked at once a second) */
    else do {
        c->eng_dirty = 0;
        c->eng_ran_at = now;
        memset(&st, 0, sizeof(st));
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        if (cu_engine_cycle(c->eng, &st) != CU_OK)
            break;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double dt = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
        const char *res[] = { st.admitted > 0 ? "success" : "inadmissible" };
        const char *rr[] = { res[0], role(c) };
        cu_metric_observe(c->km.cueue_cycle_seconds, res, dt);
        cu_metric_inc(c->km.cueue_cycles_total, res, 1);
        if (st.heads > 0) {
            const char *ok[] = { "success", role(c) }, *no[] = { "inadmissible", role(c) };
            if (st.admitted > 0)
                cu_metric_inc(c->km.admission_attempts_total, ok, st.admitted);
            if (st.heads > st.admitted)
                cu_metric_inc(c->km.admission_attempts_total, no, st.heads - st.admitted);
            cu_metric_observe(c->km.admission_attempt_duration_seconds, rr, dt);
        }
        progress |= st.progress;
        c->n.cycles++;
    } while (st.progress && ++ran < 1000);
    (void)ran;
    int idx[64];
    size_t n;
    while ((n = cu_engine_take_evicted(c->eng, idx, 64)) > 0)
        for (size_t i = 0; i < n; i++)
            evict(c, idx[i]);
    while ((n = cu_engine_take_admitted(c->eng, idx, 64)) > 0)
        for (size_t i = 0; i < n; i++)
            admit(c, idx[i]);
    write_evictions(c);
    if (progress || c->need_views) {
        c->need_views = 0;
        c->need_status = 1;
        for (size_t i = 0, nw = cu_engine_nworkloads(c->eng); i < nw; i++) {
            const cu_wl_info *info = cu_engine_workload_info(c->eng, i);
            rec *w = pending_rec(c, info);
            if (w)
                write_pending(c, info, w);
        }
    }
    queue_status(c);
}

static void on_tick(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)loop;
    (void)revents;
    ctrl *c = t->data;
    if (c->nsynced < c->ninf || c->stopping || !leading(c))
        return;
    if (!c->started) {
        c->started = 1;
        c->need_rebuild = 1;
        clog_(c, 0, c->elect ? "starting admission cycles as the leader"
                             : "all informers synced; starting admission cycles");
    }
    cycle(c);
}

/* ---------------- leader election ---------------- */

static void on_lead_started(cu_lease *l, void *ud)
{
    (void)l;
    ctrl *c = ud;
    c->leading = 1;
    c->started = 0;
    c->need_rebuild = 1;
    c->startup_done = 0;
    c->started_at = 0;
    clog_(c, 0, "became leader (Lease %s/%s, identity %s)", c->lopts.ns, c->lopts.name, c->ident);
}

static void on_lead_stopped(cu_lease *l, void *ud)
{
    (void)l;
    ctrl *c = ud;
    c->leading = 0;
    c->started = 0;
    /* what we assumed may never be written now; the next leader reads the API */
    OMAP_FOREACH(&c->objs[R_WL], w) {
        w->assumed = 0;
        w->evict_pending = 0;
    }
    c->nassumed = 0;
    c->nevict_pending = 0;
    c->need_rebuild = 1;
    clog_(c, 0, c->stopping ? "gave up leadership: releasing the Lease"
                            : "lost leadership: admission cycles and writes stopped");
}

/* Starts the candidate once the Namespaces are known: the namespace is
 * --leader-elect-namespace (or the Configuration's), else kueue-system
 * when it exists, else default. */
static void start_election(ctrl *c)
{
    if (c->lease || c->stopping)
        return;
    c->lopts.ns = c->lease_ns ? c->lease_ns
                  : omap_get(&c->objs[R_NS], "kueue-system") ? "kueue-system" : "default";
    cu_diag d;
    cu_diag_init(&d);
    c->lease = cu_lease_start(c->kc, &c->lopts, &d);
    if (!c->lease) {
        for (size_t i = 0; i < d.n; i++)
            clog_(c, 0, "%s", d.msgs[i]);
        clog_(c, 0, "could not start leader election");
        c->exit_rc = 1;
        ev_break(c->loop, EVBREAK_ALL);
    } else {
        clog_(c, 0, "leader election: Lease %s/%s, identity %s", c->lopts.ns, c->lopts.name,
              c->ident);
    }
    cu_diag_free(&d);
}

/* ---------------- health probes and metrics ---------------- */

static int ready(const ctrl *c, char *why, size_t n)
{
    if (c->stopping)
        snprintf(why, n, "stopping");
    else if (c->nsynced < c->ninf)
        snprintf(why, n, "informers synced: %d of %d", c->nsynced, c->ninf);
    else if (c->elect && c->leading && !c->started)
        snprintf(why, n, "leading, admission cycles not started yet");
    else
        return 1;
    return 0;
}

static int health_handler(void *ud, const char *path, const char *query, const char *accept,
                          cu_buf *body, const char **ctype)
{
    (void)query;
    (void)accept;
    ctrl *c = ud;
    *ctype = "text/plain; charset=utf-8";
    if (strcmp(path, "/healthz") == 0 || strcmp(path, "/livez") == 0) {
        cu_buf_puts(body, "ok");
        return 200;
    }
    if (strcmp(path, "/readyz") == 0) {
        char why[160];
        if (ready(c, why, sizeof(why))) {
            cu_buf_puts(body, "ok");
            return 200;
        }
        cu_buf_printf(body, "not ready: %s\n", why);
        return 503;
    }
    cu_buf_printf(body, "not found: %.150s\n", path);
    return 404;
}

static long peak_rss_kib(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : 0;
}

/* The cause a pending workload waits for, as the values of
 * cueue_pending_workloads_by_reason (docs/metrics.md), from the engine's
 * message (notes on the wording: the engine's message contract). */
static const char *pending_cause(const cu_wl_info *w)
{
    const char *m = w->message ? w->message : "";
    if (!w->cluster_queue || (strstr(m, "doesn't exist") && !strstr(m, "flavor")))
        return "LocalQueueMissing";
    if (strstr(m, "waiting for") && strstr(m, "preempted workload"))
        return "WaitingForPreemption";
    if (strstr(m, "in StrictFIFO ClusterQueue"))
        return "StrictFIFOBlocked";
    if (strstr(m, "LocalQueue") && strstr(m, "is stopped"))
        return "LocalQueueStopped";
    if (strstr(m, "ClusterQueue") && strstr(m, "is inactive"))
        return "ClusterQueueStopped";
    if (strstr(m, "namespace doesn't match"))
        return "NamespaceNotSelected";
    if (strstr(m, "insufficient unused quota") || strstr(m, "more needed"))
        return "InsufficientQuota";
    if (strstr(m, "maximum capacity"))
        return "ExceedsMaximum";
    if (strstr(m, "untolerated taint"))
        return "TaintNotTolerated";
    if (strstr(m, "node affinity") || strstr(m, "unavailable in ClusterQueue") ||
        strstr(m, "doesn't match"))
        return "NoMatchingFlavor";
    if (!*m || (w->reason && strcmp(w->reason, "Pending") == 0 && !strstr(m, "couldn't")))
        return "Queued";
    return "Inadmissible";
}

static void fset(cu_metric_family *f, const char *const v[], double x)
{
    cu_metric_set(f, v, x);
}

static double q(int64_t milli)
{
    return (double)milli / 1000.0;
}

/* Gauges are rebuilt from the engine's views at each scrape (so deleted
 * queues vanish); counters kept by the controller are copied in. */
static void refresh_gauges(ctrl *c)
{
    cu_kueue_metrics *k = &c->km;
    const char *rr = role(c);
    cu_metric_family *reset[] = {
        k->pending_workloads, k->reserving_active_workloads, k->admitted_active_workloads,
        k->cluster_queue_status, k->cluster_queue_info, k->cluster_queue_resource_reservation,
        k->cluster_queue_resource_usage, k->cluster_queue_nominal_quota,
        k->cluster_queue_borrowing_limit, k->cluster_queue_lending_limit,
        k->cluster_queue_weighted_share, k->finished_workloads, k->local_queue_pending_workloads,
        k->local_queue_finished_workloads, k->local_queue_reserving_active_workloads,
        k->local_queue_admitted_active_workloads, k->local_queue_status,
        k->local_queue_resource_reservation, k->local_queue_resource_usage, k->cohort_info,
        k->cohort_weighted_share, k->cohort_subtree_quota, k->cohort_subtree_resource_reservations,
        k->cohort_subtree_admitted_active_workloads, k->cueue_pending_workloads_by_reason,
    };
    for (size_t i = 0; i < sizeof(reset) / sizeof(reset[0]); i++)
        cu_metric_reset_family(reset[i]);
    const char *lv[] = { NULL };
    fset(k->cueue_leader, lv, leading(c) ? 1 : 0);
    cu_metric_set(k->cueue_admissions_total, lv, (double)c->n.admissions);
    cu_metric_set(k->cueue_evictions_total, lv, (double)c->n.evictions);
    cu_metric_set(k->cueue_preemptions_total, lv, (double)c->n.preemptions);
    cu_metric_set(k->cueue_engine_rebuilds_total, lv, (double)c->n.rebuilds);
    cu_metric_set(k->cueue_api_writes_total, lv, (double)c->n.writes);
    cu_metric_set(k->cueue_api_write_errors_total, lv, (double)c->n.write_errors);
    for (int r = 0; r < NRES; r++) {
        if (!c->inf[r])
            continue;
        cu_informer_stats is;
        cu_informer_stats_get(c->inf[r], &is);
        const char *res[] = { res_tab[r].kind };
        cu_metric_set(k->cueue_watch_restarts_total, res,
                      (double)(is.watches > 0 ? is.watches - 1 : 0));
        cu_metric_set(k->cueue_watch_relists_total, res, (double)is.relists_410);
    }
    if (!c->eng)
        return;
    /* finished Workloads per queue (kept, not yet deleted) */
    OMAP_FOREACH(&c->objs[R_WL], w) {
        const cu_workload *wl = wl_of(w);
        if (!wl || !cu_workload_finished(wl) || !wl->adm_cq)
            continue;
        const char *a[] = { wl->adm_cq, rr };
        cu_metric_inc(k->finished_workloads, a, 1);
        const char *b[] = { wl->queue_name ? wl->queue_name : "", wl->meta.ns ? wl->meta.ns : "", rr };
        cu_metric_inc(k->local_queue_finished_workloads, b, 1);
    }
    /* pending: active vs inadmissible, and by reason */
    for (size_t i = 0, n = cu_engine_nworkloads(c->eng); i < n; i++) {
        const cu_wl_info *w = cu_engine_workload_info(c->eng, i);
        if (!pending_rec(c, w))
            continue;
        if (!w->cluster_queue) {
            const char *d[] = { "", "LocalQueueMissing" };
            cu_metric_inc(k->cueue_pending_workloads_by_reason, d, 1);
            continue;
        }
        const char *st = w->inadmissible ? "inadmissible" : "active";
        const char *a[] = { w->cluster_queue, st, rr };
        cu_metric_inc(k->pending_workloads, a, 1);
        const char *b[] = { w->local_queue ? w->local_queue : "", w->ns, st, rr };
        cu_metric_inc(k->local_queue_pending_workloads, b, 1);
        const char *d[] = { w->cluster_queue, pending_cause(w) };
        cu_metric_inc(k->cueue_pending_workloads_by_reason, d, 1);
    }
    /* ClusterQueues */
    for (size_t i = 0, n = cu_engine_ncqs(c->eng); i < n; i++) {
        const cu_cq_info *ci = cu_engine_cq_info(c->eng, i);
        const char *cq = ci->name, *cohort = ci->cohort ? ci->cohort : "";
        static const char *const sts[] = { "pending", "active", "terminating" };
        for (int s2 = 0; s2 < 3; s2++) {
            const char *a[] = { cq, sts[s2], rr };
            fset(k->cluster_queue_status, a, (s2 == 1) == (ci->active != 0) && s2 != 2 ? 1 : 0);
        }
        for (int s2 = 0; s2 < 2; s2++) {   /* every queue has both pending series */
            const char *a[] = { cq, s2 ? "inadmissible" : "active", rr };
            double v = 0;
            if (cu_metric_get(k->pending_workloads, a, &v) != CU_OK)
                fset(k->pending_workloads, a, 0);
        }
        const char *ab[] = { cq, rr };
        fset(k->reserving_active_workloads, ab, ci->reserving);
        fset(k->admitted_active_workloads, ab, ci->admitted);
        const char *root = ci->cohort ? cohort_root(c, ci->cohort) : NULL;
        const char *inf[] = { cq, cohort, root ? root : "" };
        fset(k->cluster_queue_info, inf, 1);
        const char *ws[] = { cq, cohort, rr };
        fset(k->cluster_queue_weighted_share, ws,
             ci->weighted_share == INT64_MAX ? (double)INFINITY : (double)ci->weighted_share);
        for (size_t u = 0; u < ci->nusage; u++) {
            const cu_fr_usage *fu = &ci->usage[u];
            const char *a[] = { cohort, cq, fu->flavor, fu->resource, rr };
            fset(k->cluster_queue_resource_reservation, a, q(fu->total));
            fset(k->cluster_queue_resource_usage, a, q(fu->total));
            fset(k->cluster_queue_nominal_quota, a, q(fu->nominal));
            fset(k->cluster_queue_borrowing_limit, a,
                 fu->has_blimit ? q(fu->blimit) : (double)INFINITY);
            fset(k->cluster_queue_lending_limit, a,
                 fu->has_llimit ? q(fu->llimit) : (double)INFINITY);
        }
    }
    /* LocalQueues */
    for (size_t i = 0, n = cu_engine_nlqs(c->eng); i < n; i++) {
        const cu_lq_info *li = cu_engine_lq_info(c->eng, i);
        const char *ab[] = { li->name, li->ns, rr };
        fset(k->local_queue_reserving_active_workloads, ab, li->reserving);
        fset(k->local_queue_admitted_active_workloads, ab, li->admitted);
        const char *st[] = { li->name, li->ns, li->active ? "True" : "False", rr };
        fset(k->local_queue_status, st, 1);
        for (int s2 = 0; s2 < 2; s2++) {
            const char *a[] = { li->name, li->ns, s2 ? "inadmissible" : "active", rr };
            double v = 0;
            if (cu_metric_get(k->local_queue_pending_workloads, a, &v) != CU_OK)
                fset(k->local_queue_pending_workloads, a, 0);
        }
        for (size_t u = 0; u < li->nusage; u++) {
            const cu_fr_usage *fu = &li->usage[u];
            const char *a[] = { li->name, li->ns, fu->flavor, fu->resource, rr };
            fset(k->local_queue_resource_reservation, a, q(fu->total));
            fset(k->local_queue_resource_usage, a, q(fu->total));
        }
    }
    /* Cohorts */
    for (size_t i = 0, n = cu_engine_ncohorts(c->eng); i < n; i++) {
        const cu_cohort_info *hi = cu_engine_cohort_info(c->eng, i);
        const char *inf[] = { hi->name, hi->parent ? hi->parent : "", cohort_root(c, hi->name) };
        fset(k->cohort_info, inf, 1);
        const char *ws[] = { hi->name, rr };
        fset(k->cohort_weighted_share, ws,
             hi->weighted_share == INT64_MAX ? (double)INFINITY : (double)hi->weighted_share);
        for (size_t u = 0; u < hi->nusage; u++) {
            const cu_fr_usage *fu = &hi->usage[u];
            const char *a[] = { hi->name, fu->flavor, fu->resource, rr };
            fset(k->cohort_subtree_quota, a, q(fu->nominal));
            fset(k->cohort_subtree_resource_reservations, a, q(fu->total));
        }
        fset(k->cohort_subtree_admitted_active_workloads, ws, 0);
    }
    /* admitted workloads in each cohort's subtree: every ClusterQueue adds
     * its own to each cohort up its chain */
    for (size_t j = 0, nq = cu_engine_ncqs(c->eng); j < nq; j++) {
        const cu_cq_info *ci = cu_engine_cq_info(c->eng, j);
        const char *seen[64];
        const char *co = ci->cohort;
        for (int depth = 0; co && depth < 64; depth++, co = cohort_parent(c, co)) {
            int again = 0;   /* a cohort cycle: count each cohort once */
            for (int d2 = 0; d2 < depth && !again; d2++)
                again = strcmp(seen[d2], co) == 0;
            if (again)
                break;
            seen[depth] = co;
            const char *ws[] = { co, rr };
            cu_metric_inc(k->cohort_subtree_admitted_active_workloads, ws, ci->admitted);
        }
    }
}

/* The value of query parameter name (URL-decoded into out), or NULL. */
static const char *qparam(const char *query, const char *name, char *out, size_t n)
{
    size_t nl = strlen(name);
    for (const char *p = query; p && *p;) {
        const char *amp = strchr(p, '&');
        size_t len = amp ? (size_t)(amp - p) : strlen(p);
        if (len > nl && strncmp(p, name, nl) == 0 && p[nl] == '=') {
            size_t k = 0;
            for (size_t i = nl + 1; i < len && k + 1 < n; i++) {
                char ch = p[i];
                if (ch == '%' && i + 2 < len) {
                    char hx[3] = { p[i + 1], p[i + 2], 0 };
                    ch = (char)strtol(hx, NULL, 16);
                    i += 2;
                } else if (ch == '+') {
                    ch = ' ';
                }
                out[k++] = ch;
            }
            out[k] = 0;
            return out;
        }
        p = amp ? amp + 1 : NULL;
    }
    return NULL;
}

static void json_str_out(cu_buf *b, const char *s)
{
    json_object *o = json_object_new_string(s ? s : "");
    cu_buf_puts(b, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
    json_object_put(o);
}

/* GET /debug/pending[?clusterQueue=CQ|?localQueue=NS/LQ]: the pending
 * workloads in admission order, as the controller's engine sees them. */
static int debug_pending(ctrl *c, const char *query, cu_buf *b)
{
    char cq[300], lq[600];
    const char *want_cq = qparam(query, "clusterQueue", cq, sizeof(cq));
    const char *want_lq = qparam(query, "localQueue", lq, sizeof(lq));
    size_t n = cu_engine_nworkloads(c->eng);
    const cu_wl_info **v = calloc(n ? n : 1, sizeof(*v));
    if (!v)
        return 500;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const cu_wl_info *w = cu_engine_workload_info(c->eng, i);
        if (pending_rec(c, w) && w->position >= 0)
            v[k++] = w;
    }
    json_object *doc = cu_ctrl_pending_doc(v, k, want_cq, want_lq, real_now(NULL));
    free(v);
    if (!doc)
        return 500;
    cu_buf_puts(b, json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN));
    cu_buf_puts(b, "\n");
    json_object_put(doc);
    return 200;
}

/* The read-only endpoints on the metrics server: /debug/explain and
 * /debug/pending (see docs/troubleshooting.md). */
static int debug_handler(ctrl *c, const char *path, const char *query, cu_buf *b,
                         const char **ctype)
{
    char why[160] = "";
    *ctype = "text/plain; charset=utf-8";
    if (ready(c, why, sizeof(why)) && (!leading(c) || !c->eng))
        snprintf(why, sizeof(why), "%s", !leading(c) ? "not leading" : "no engine yet");
    if (why[0]) {
        cu_buf_printf(b, "not ready: %s\n", why);
        return 503;
    }
    if (strcmp(path, "/debug/pending") == 0) {
        *ctype = "application/json";
        return debug_pending(c, query, b);
    }
    char key[600], fmt[16];
    if (!qparam(query, "workload", key, sizeof(key))) {
        cu_buf_puts(b, "missing ?workload=NAMESPACE/NAME\n");
        return 400;
    }
    int json = qparam(query, "format", fmt, sizeof(fmt)) && strcmp(fmt, "json") == 0;
    /* Workloads the engine does not hold right now: said from the record */
    char full[620];
    snprintf(full, sizeof(full), "%s%s", strchr(key, '/') ? "" : "default/", key);
    rec *wr = omap_get(&c->objs[R_WL], full);
    const cu_workload *wwl = wl_of(wr);
    if (wr && wr->idx < 0 && wwl) {
        char ts[40] = "";
        const char *state = cu_workload_finished(wwl) ? "finished"
                            : wr->hold                ? "pending (a write conflicted; waiting for a newer version)"
                            : in_backoff(c, wr)       ? "pending (requeue backoff)"
                                                      : "pending (not in the scheduler yet)";
        if (wr->rq_at)
            cu_time_format(wr->rq_at, ts, sizeof(ts));
        if (json) {
            *ctype = "application/json";
            cu_buf_puts(b, "{\"workload\":");
            json_str_out(b, full);
            cu_buf_puts(b, ",\"status\":");
            json_str_out(b, cu_workload_finished(wwl) ? "finished" : "pending");
            cu_buf_puts(b, ",\"detail\":");
            json_str_out(b, state);
            cu_buf_printf(b, ",\"requeueCount\":%d", (int)wr->rq_count);
            if (ts[0])
                cu_buf_printf(b, ",\"requeueAt\":\"%s\"", ts);
            cu_buf_puts(b, "}\n");
        } else {
            cu_buf_printf(b, "Workload %s: %s\n", full, state);
            if (ts[0] && !cu_workload_finished(wwl))
                cu_buf_printf(b, "  requeued after a backoff: considered again at %s "
                              "(requeue %d)\n", ts, (int)wr->rq_count);
            const cu_condition *ev = cu_workload_cond(wwl, "Evicted");
            if (ev && ev->message && *ev->message)
                cu_buf_printf(b, "  last eviction: %s: %s\n", ev->reason ? ev->reason : "",
                              ev->message);
        }
        return 200;
    }
    cu_diag d;
    cu_diag_init(&d);
    cu_err err;
    if (json) {
        cu_arena a;
        cu_arena_init(&a, 0);
        cu_node *doc = NULL;
        err = cu_engine_explain_doc(c->eng, key, &a, &doc, &d);
        if (err == CU_OK && cu_node_emit_json(doc, b, 2) == CU_OK)
            *ctype = "application/json";
        cu_arena_free(&a);
    } else {
        err = cu_engine_explain(c->eng, key, b, &d);
    }
    int code = 200;
    if (err != CU_OK) {
        b->len = 0;
        if (b->data)
            b->data[0] = 0;
        cu_buf_printf(b, "%s\n", d.n ? d.msgs[0] : "cannot explain");
        *ctype = "text/plain; charset=utf-8";
        code = err == CU_ENOTFOUND ? 404 : err == CU_EINVAL ? 400 : 500;
    }
    cu_diag_free(&d);
    return code;
}

static int metrics_handler(void *ud, const char *path, const char *query, const char *accept,
                           cu_buf *b, const char **ctype)
{
    (void)accept;
    ctrl *c = ud;
    if (strcmp(path, "/debug/explain") == 0 || strcmp(path, "/debug/pending") == 0)
        return debug_handler(c, path, query, b, ctype);
    if (strcmp(path, "/metrics") != 0) {
        *ctype = "text/plain; charset=utf-8";
        cu_buf_printf(b, "not found: %.150s\n", path);
        return 404;
    }
    refresh_gauges(c);
    int om = cu_metrics_wants_openmetrics(accept);
    *ctype = cu_metrics_content_type(om);
    if (cu_metrics_write(c->m, b, om) != CU_OK) {
        b->len = 0;
        if (b->data)
            b->data[0] = 0;
        *ctype = "text/plain; charset=utf-8";
        cu_buf_puts(b, "metrics too large\n");
        return 500;
    }
    return 200;
}

/* Parses a Go duration ("3s", "500ms", "1m30s", "1.5s") into *ms (at
 * least 1 ms, at most 24 h). Returns 0, or -1 when malformed. */
static int parse_go_duration(const char *s, int *ms)
{
    static const struct { const char *u; double ms; } units[] = {
        { "ns", 1e-6 }, { "us", 1e-3 }, { "\xc2\xb5s", 1e-3 }, { "ms", 1 },
        { "s", 1000 }, { "m", 60000 }, { "h", 3600000 },
    };
    double total = 0;
    const char *p = s;
    if (!*p)
        return -1;
    while (*p) {
        if (!((*p >= '0' && *p <= '9') || *p == '.'))
            return -1;
        char *end;
        double v = strtod(p, &end);
        if (end == p)
            return -1;
        p = end;
        size_t i, nu = sizeof(units) / sizeof(units[0]);
        for (i = 0; i < nu; i++) {
            size_t ul = strlen(units[i].u);
            if (strncmp(p, units[i].u, ul) == 0 && !(ul == 1 && p[0] == 'm' && p[1] == 's')) {
                total += v * units[i].ms;
                p += ul;
                break;
            }
        }
        if (i == nu)
            return -1;
    }
    if (total < 1 || total > 86400000.0)
        return -1;
    *ms = (int)total;
    return 0;
}

/* ---------------- informers, signals ---------------- */

static void on_synced(cu_informer *inf, void *ud)
{
    (void)inf;
    rctx *rc = ud;
    ctrl *c = rc->c;
    c->nsynced++;
    clog_(c, 1, "synced %s (%zu objects)", res_tab[rc->r].path, c->objs[rc->r].n);
    if (c->elect && rc->r == R_NS)
        start_election(c);
    if (c->nsynced == c->ninf)
        clog_(c, 0, "all informers synced%s",
              c->elect && !c->leading ? "; standing by until elected leader" : "");
}

static void on_released(void *ud)
{
    ctrl *c = ud;
    ev_break(c->loop, EVBREAK_ALL);
}

static void on_stop_timer(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)t;
    (void)revents;
    ctrl *c = t->data;
    clog_(c, 0, "grace period over: %zu writes still in flight are cancelled", c->inflight.n);
    ev_break(loop, EVBREAK_ALL);
}

static void on_drain(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)revents;
    ctrl *c = t->data;
    if (c->inflight.n)
        return;   /* writes still on their way */
    ev_timer_stop(loop, t);
    if (c->lease)
        cu_lease_release(c->lease, on_released, c);
    else
        ev_break(loop, EVBREAK_ALL);
}

/* SIGTERM/SIGINT: stop cycling (no new writes), let in-flight writes
 * finish, release the Lease if held, and leave; everything within the
 * grace period (5 s). A second signal leaves at once. */
static void on_signal(struct ev_loop *loop, ev_signal *s, int revents)
{
    (void)revents;
    ctrl *c = s->data;
    if (c->stopping) {
        ev_break(loop, EVBREAK_ALL);
        return;
    }
    c->stopping = 1;
    clog_(c, 0, "stopping: %zu writes in flight", c->inflight.n);
    ev_timer_init(&c->stop_timer, on_stop_timer, 5.0, 0.);
    c->stop_timer.data = c;
    ev_timer_start(loop, &c->stop_timer);
    ev_timer_init(&c->drain, on_drain, 0., 0.02);
    c->drain.data = c;
    ev_timer_start(loop, &c->drain);
}

/* ---------------- main ---------------- */

static const char help_text[] =
    "Usage: cueue controller [OPTIONS]\n"
    "\n"
    "Runs the admission controller against a Kubernetes API server. It watches\n"
    "ResourceFlavors, Cohorts, ClusterQueues, LocalQueues, WorkloadPriorityClasses,\n"
    "PriorityClasses, Namespaces, Workloads and batch/v1 Jobs; creates a Workload\n"
    "for every Job with the kueue.x-k8s.io/queue-name label (or in a namespace\n"
    "with a LocalQueue named \"default\", or every Job of the selected namespaces\n"
    "with manageJobsWithoutQueueName); admits Workloads when their ClusterQueue\n"
    "has quota (status.admission, QuotaReserved and Admitted), then unsuspends\n"
    "their Jobs with the flavors' nodeLabels and tolerations. Preempted Workloads\n"
    "are evicted: their Jobs are suspended and restored, their quota released,\n"
    "and they are queued again. Jobs should be created with spec.suspend: true\n"
    "(there is no webhook); a managed Job running without quota is suspended.\n"
    "\n"
    "Options:\n"
    "      --kubeconfig FILE  kubeconfig to use (default $KUBECONFIG, then\n"
    "                         ~/.kube/config, then the in-cluster configuration)\n"
    "      --context NAME     kubeconfig context (default: the current one)\n"
    "      --config FILE      Kueue's controller Configuration\n"
    "                         (config.kueue.x-k8s.io/v1beta2 or v1beta1; see\n"
    "                         config/controller/config.yaml); flags override it\n"
    "  -v, --verbose N        log level: 0 admissions, evictions, starts,\n"
    "                         finishes, leader changes and errors (default);\n"
    "                         1 also pending reasons, Workload creation, sync;\n"
    "                         2 engine rebuilds; 3 every write request\n"
    "      --log-format F     text (default) or json (one object per line)\n"
    "      --leader-elect     run as one of several replicas: only the holder of\n"
    "                         the coordination.k8s.io Lease runs admission cycles\n"
    "                         and writes; the others keep their caches synced and\n"
    "                         take over when the Lease expires (default: off, or\n"
    "                         the Configuration's leaderElection.leaderElect)\n"
    "      --leader-elect-namespace NS\n"
    "                         namespace of the Lease (default: the Configuration's\n"
    "                         resourceNamespace, else kueue-system when it exists,\n"
    "                         else default)\n"
    "      --leader-elect-lease-duration D   (default 15s)\n"
    "      --leader-elect-renew-deadline D   (default 10s)\n"
    "      --leader-elect-retry-period D     (default 2s)\n"
    "                         Go durations (500ms, 3s, 1m); the lease duration\n"
    "                         must exceed the renew deadline, which must exceed\n"
    "                         the retry period\n"
    "      --health-probe-bind-address HOST:PORT\n"
    "                         serve /healthz (200 once running) and /readyz (200\n"
    "                         once every informer synced and, when electing,\n"
    "                         cycling as the leader or synced as a standby; 503\n"
    "                         otherwise) over HTTP (default 127.0.0.1:8081, or\n"
    "                         the Configuration's; port 0 picks a free one,\n"
    "                         logged; \"0\" disables)\n"
    "      --metrics-bind-address HOST:PORT\n"
    "                         serve Prometheus metrics at /metrics (and /debug/*)\n"
    "                         (default 127.0.0.1:8080, or the Configuration's;\n"
    "                         \"0\" disables)\n"
    "      --metrics-secure[=true|false]\n"
    "                         serve them over HTTPS, to bearer tokens that a\n"
    "                         TokenReview accepts and a SubjectAccessReview allows\n"
    "                         to get the path (default: true unless the address is\n"
    "                         loopback)\n"
    "      --metrics-cert-path DIR, --metrics-cert-name FILE, --metrics-cert-key FILE\n"
    "                         the HTTPS certificate (default tls.crt) and key\n"
    "                         (default tls.key) in DIR; without DIR a self-signed\n"
    "                         one is generated at start\n"
    "  -h, --help             show this help\n"
    "\n"
    "Stops on SIGTERM or SIGINT: no new writes, in-flight writes finish (at most\n"
    "5 s), the Lease is released when held; exit 0. At exit it logs its request\n"
    "and admission counts. Exit codes: 1 runtime failure, 2 bad usage or bad\n"
    "configuration.\n";

static int bad_duration(const char *flag, const char *v)
{
    fprintf(stderr, "cueue: controller: %s: expected a Go duration such as 500ms, 3s or 1m (at "
            "least 1ms, at most 24h), got '%s'\n", flag, v);
    return 2;
}

static cu_httpd *start_server(ctrl *c, const char *addr, const char *dflt, const char *what,
                              const char *paths, cu_httpd_handler h, const cu_httpd_opts *o,
                              int *fatal)
{
    *fatal = 0;
    const char *a = addr ? addr : dflt;
    if (strcmp(a, "0") == 0)
        return NULL;
    char err[400];
    int port = 0;
    cu_httpd *s = cu_httpd_start_opts(c->loop, a, what, h, c, o, err, sizeof(err), &port);
    if (!s) {
        if (addr) {   /* asked for: an error */
            fprintf(stderr, "cueue: controller: %s\n", err);
            *fatal = 1;
        } else {      /* the default may be taken (another controller on this host) */
            clog_(c, 0, "%s disabled: %s (choose an address with the flag)", what, err);
        }
        return NULL;
    }
    char shown[300];
    snprintf(shown, sizeof(shown), "%.*s:%d", (int)(strrchr(a, ':') - a), a, port);
    clog_(c, 0, "%s on %s (%s)", what, shown, paths);
    return s;
}

static void mauth_log(void *ud, const char *msg)
{
    clog_(ud, 0, "%s", msg);
}

/* The metrics server: plain HTTP, or (secure: 1, or -1 and not loopback)
 * HTTPS with authentication and authorization (cu_mauth.h). Returns -1
 * when the controller must not start. */
static int start_metrics(ctrl *c, const char *addr, int secure, const char *cert_dir,
                         const char *cert_name, const char *key_name)
{
    const char *a = addr ? addr : "127.0.0.1:8080";
    if (strcmp(a, "0") == 0)
        return 0;
    if (secure < 0)
        secure = !cu_mauth_loopback(a);
    int fatal = 0;
    if (!secure) {
        if (!cu_mauth_loopback(a))
            clog_(c, 0, "metrics on %s are served without authentication "
                  "(--metrics-secure=false): anyone who reaches the port reads them", a);
        c->metrics = start_server(c, addr, "127.0.0.1:8080", "metrics", "/metrics",
                                  metrics_handler, NULL, &fatal);
        return fatal ? -1 : 0;
    }
    char host[256], err[400];
    const char *colon = strrchr(a, ':');
    size_t hl = colon ? (size_t)(colon - a) : 0;
    snprintf(host, sizeof(host), "%.*s", (int)(hl < sizeof(host) ? hl : 0), a);
    if (hl >= 2 && host[0] == '[') {
        memmove(host, host + 1, hl - 2);
        host[hl - 2] = 0;
    }
    char *cert = NULL, *key = NULL;
    if (cu_mauth_certificate(cert_dir, cert_name, key_name, host, &cert, &key, err,
                             sizeof(err)) != 0) {
        fprintf(stderr, "cueue: controller: metrics certificate: %s\n", err);
        return -1;
    }
    cu_mauth_opts mo = { .log = mauth_log, .log_ud = c };
    c->mauth = cu_mauth_new(c->kc, &mo);
    if (!c->mauth) {
        free(cert);
        free(key);
        return -1;
    }
    cu_httpd_opts ho = { .cert_pem = cert, .key_pem = key, .gate = cu_mauth_gate,
                         .gate_ud = c->mauth };
    c->metrics = start_server(c, addr, "127.0.0.1:8080", "metrics",
                              cert_dir ? "/metrics; HTTPS, authenticated and authorized"
                                       : "/metrics; HTTPS with a self-signed certificate, "
                                         "authenticated and authorized",
                              metrics_handler, &ho, &fatal);
    free(cert);
    free(key);
    cu_mauth_attach(c->mauth, c->metrics);
    return fatal ? -1 : 0;
}

int cu_controller_main(int argc, char **argv)
{
    static const struct option opts[] = {
        { "kubeconfig", required_argument, NULL, 'k' },
        { "context", required_argument, NULL, 'x' },
        { "config", required_argument, NULL, 'c' },
        { "verbose", required_argument, NULL, 'v' },
        { "log-format", required_argument, NULL, 'F' },
        { "help", no_argument, NULL, 'h' },
        { "leader-elect", no_argument, NULL, 'L' },
        { "leader-elect-namespace", required_argument, NULL, 'N' },
        { "leader-elect-lease-duration", required_argument, NULL, 'D' },
        { "leader-elect-renew-deadline", required_argument, NULL, 'R' },
        { "leader-elect-retry-period", required_argument, NULL, 'P' },
        { "health-probe-bind-address", required_argument, NULL, 'H' },
        { "metrics-bind-address", required_argument, NULL, 'M' },
        { "metrics-secure", optional_argument, NULL, 1001 },
        { "metrics-cert-path", required_argument, NULL, 1002 },
        { "metrics-cert-name", required_argument, NULL, 1003 },
        { "metrics-cert-key", required_argument, NULL, 1004 },
        { NULL, 0, NULL, 0 },
    };
    const char *kubeconfig = NULL, *context = NULL, *config = NULL, *lease_ns = NULL;
    const char *health = NULL, *metrics = NULL, *logfmt = "text";
    const char *mcert_dir = NULL, *mcert_name = "tls.crt", *mcert_key = "tls.key";
    int msecure = -1;
    int verbose = 0, ch, elect = -1, lease_ms = 0, renew_ms = 0, retry_ms = 0;
    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":v:h", opts, NULL)) != -1) {
        switch (ch) {
        case 'k': kubeconfig = optarg; break;
        case 'x': context = optarg; break;
        case 'c': config = optarg; break;
        case 'v': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (end == optarg || *end || v < 0 || v > 9) {
                fprintf(stderr, "cueue: controller: -v: expected a level 0..9, got '%s'\n", optarg);
                return 2;
            }
            verbose = (int)v;
            break;
        }
        case 'F':
            if (strcmp(optarg, "text") != 0 && strcmp(optarg, "json") != 0) {
                fprintf(stderr, "cueue: controller: --log-format: expected text or json, got "
                        "'%s'\n", optarg);
                return 2;
            }
            logfmt = optarg;
            break;
        case 'h': fputs(help_text, stdout); return 0;
        case 'L': elect = 1; break;
        case 'N':
            if (!*optarg) {
                fprintf(stderr, "cueue: controller: --leader-elect-namespace: empty name\n");
                return 2;
            }
            lease_ns = optarg;
            break;
        case 'H': health = optarg; break;
        case 'M': metrics = optarg; break;
        case 1001:
            if (!optarg || strcmp(optarg, "true") == 0) {
                msecure = 1;
            } else if (strcmp(optarg, "false") == 0) {
                msecure = 0;
            } else {
                fprintf(stderr, "cueue: controller: --metrics-secure: expected true or false, "
                        "got '%s'\n", optarg);
                return 2;
            }
            break;
        case 1002: mcert_dir = optarg; break;
        case 1003: mcert_name = optarg; break;
        case 1004: mcert_key = optarg; break;
        case 'D':
            if (parse_go_duration(optarg, &lease_ms) != 0)
                return bad_duration("--leader-elect-lease-duration", optarg);
            break;
        case 'R':
            if (parse_go_duration(optarg, &renew_ms) != 0)
                return bad_duration("--leader-elect-renew-deadline", optarg);
            break;
        case 'P':
            if (parse_go_duration(optarg, &retry_ms) != 0)
                return bad_duration("--leader-elect-retry-period", optarg);
            break;
        case ':':
            fprintf(stderr, "cueue: controller: option '%s' needs a value\n", argv[optind - 1]);
            return 2;
        default:
            fprintf(stderr, "cueue: controller: unknown option '%s'\n", argv[optind - 1]);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "cueue: controller: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }

    /* the Configuration: Kueue's defaults, the file, then the flags */
    cu_diag d;
    cu_diag_init(&d);
    cu_world cw;
    cu_world_init(&cw);
    cu_config defcfg;
    const cu_config *cf = NULL;
    if (config) {
        if (cu_world_load(&cw, &config, 1, &d) != CU_OK || cw.configs.n != 1 || d.n) {
            for (size_t i = 0; i < d.n; i++)
                fprintf(stderr, "cueue: controller: %s\n", d.msgs[i]);
            if (cw.configs.n != 1)
                fprintf(stderr, "cueue: controller: %s: expected one config.kueue.x-k8s.io "
                        "Configuration, found %zu\n", config, cw.configs.n);
            cu_world_free(&cw);
            cu_diag_free(&d);
            return 2;
        }
        cf = cw.configs.items[0];
    } else {
        if (cu_config_init_defaults(&defcfg, &cw.arena) != CU_OK) {
            cu_world_free(&cw);
            return 1;
        }
        cf = &defcfg;
    }
#define le (&cf->leader_election)
    if (elect < 0)
        elect = le->has_leader_elect ? le->leader_elect : 0;
    if (!lease_ms)
        lease_ms = le->has_lease_duration ? (int)le->lease_duration_ms : 15000;
    if (!renew_ms)
        renew_ms = le->has_renew_deadline ? (int)le->renew_deadline_ms : 10000;
    if (!retry_ms)
        retry_ms = le->has_retry_period ? (int)le->retry_period_ms : 2000;
    if (!lease_ns && le->resource_namespace && config)
        lease_ns = le->resource_namespace;
    if (lease_ms < 1000 || lease_ms <= renew_ms || renew_ms <= retry_ms) {
        fprintf(stderr, "cueue: controller: leader election timings: need lease duration "
                "(%d ms, at least 1s) > renew deadline (%d ms) > retry period (%d ms)\n",
                lease_ms, renew_ms, retry_ms);
        cu_world_free(&cw);
        cu_diag_free(&d);
        return 2;
    }
    if (!health && config && cf->has_health_bind_address)
        health = cf->health_bind_address;
    if (!metrics && config && cf->has_metrics_bind_address)
        metrics = cf->metrics_bind_address;

    int rc = 0;
    ctrl *cp = calloc(1, sizeof(ctrl));
    if (!cp) {
        cu_world_free(&cw);
        cu_diag_free(&d);
        return 1;
    }
    ctrl *c = cp;
    c->verbose = verbose;
    {
        cu_log_format lf = CU_LOG_TEXT;
        cu_log_format_parse(logfmt, &lf);
        cu_clock lc = { .now_ms = real_now };
        cu_log_init(&c->log, stderr, lf, verbose, lc);
    }
    c->elect = elect;
    c->lease_ns = lease_ns;
    c->cfg.cf = cf;
    c->cfg.manage_without_queue = cf->manage_jobs_without_queue_name;
    cu_pr_config_default(&c->cfg.pr);
    c->cfg.pr.enable = cf->pods_ready.enabled;
    if (c->cfg.pr.enable) {
        c->cfg.pr.timeout_ms = cf->pods_ready.timeout_ms;
        c->cfg.pr.recovery_timeout_ms = cf->pods_ready.recovery_enabled
                                            ? cf->pods_ready.recovery_timeout_ms : -1;
        c->cfg.pr.block_admission = cf->pods_ready.block_admission;
        c->cfg.pr.requeue_at_creation = cf->pods_ready.requeue_timestamp == CU_REQUEUE_CREATION;
        c->cfg.pr.backoff_limit = cf->pods_ready.backoff_limit_count;
        c->cfg.pr.backoff_base_ms = (int64_t)cf->pods_ready.backoff_base_s * 1000;
        c->cfg.pr.backoff_max_ms = (int64_t)cf->pods_ready.backoff_max_s * 1000;
    }
    c->cfg.jobs = cu_config_framework_enabled(cf, "batch/job");
    for (size_t i = 0; i < cf->unsupported_frameworks.n; i++)
        clog_(c, 0, "integrations.frameworks: %s is not integrated by Cueue (only batch/job); "
              "ignored", cf->unsupported_frameworks.items[i]);
    cu_world_init(&c->vw);
    c->co = cu_coalescer_new(1000);
    c->m = cu_metrics_new();
    if (!c->m || cu_metrics_kueue_register(c->m, &c->km) != CU_OK) {
        fprintf(stderr, "cueue: controller: metrics: %s\n",
                c->m ? cu_metrics_last_error(c->m) : "out of memory");
        cu_metrics_free(c->m);
        free(c);
        cu_world_free(&cw);
        cu_diag_free(&d);
        return 1;
    }
    {
        const char *bi[] = { CUEUE_VERSION_STRING, "", "", ("cc " __VERSION__), "linux" };
        cu_metric_set(c->km.cueue_build_info, bi, 1);
        const char *kb[] = { CUEUE_VERSION_STRING, "", "", "", ("cc " __VERSION__), "linux" };
        cu_metric_set(c->km.build_info, kb, 1);
    }
    {
        cu_recorder_opts ro = { .component = CU_EVENT_COMPONENT_ADMISSION };
        c->ev_adm = cu_recorder_new(&ro);
        ro.component = CU_EVENT_COMPONENT_JOB;
        c->ev_job = cu_recorder_new(&ro);
    }
    if (!c->co || !c->ev_adm || !c->ev_job) {
        cu_metrics_free(c->m);
        cu_coalescer_free(c->co);
        cu_recorder_free(c->ev_adm);
        cu_recorder_free(c->ev_job);
        free(c);
        cu_world_free(&cw);
        cu_diag_free(&d);
        return 1;
    }
    {
        char hn[256] = "";
        if (gethostname(hn, sizeof(hn) - 1) != 0 || !hn[0])
            snprintf(hn, sizeof(hn), "localhost");
        snprintf(c->ident, sizeof(c->ident), "%s_%ld", hn, (long)getpid());
    }
    c->lopts.name = le->resource_name ? le->resource_name : "c1f6bfd2.kueue.x-k8s.io";
#undef le
    c->lopts.identity = c->ident;
    c->lopts.lease_ms = lease_ms;
    c->lopts.renew_ms = renew_ms;
    c->lopts.retry_ms = retry_ms;
    c->lopts.on_started = on_lead_started;
    c->lopts.on_stopped = on_lead_stopped;
    c->lopts.ud = c;
    c->eopts.clock.now_ms = real_now;
    c->eopts.manual_evictions = 1;
    c->eopts.fair_sharing = cf->fair_sharing;
    c->eopts.nstrategies = cf->nstrategies;
    memcpy(c->eopts.strategies, cf->strategies, sizeof(c->eopts.strategies));
    c->eopts.afs = cf->afs;
    c->eopts.afs_half_life_ms = cf->afs_half_life_ms;
    c->eopts.afs_sampling_ms = cf->afs_sampling_ms;
    c->eopts.afs_weights = cf->afs_weights.n ? &cf->afs_weights : NULL;

    cu_kconfig *kcfg = cu_kconfig_load(kubeconfig, context, &d);
    if (!kcfg) {
        for (size_t i = 0; i < d.n; i++)
            fprintf(stderr, "cueue: controller: %s\n", d.msgs[i]);
        cu_metrics_free(c->m);
        cu_coalescer_free(c->co);
        cu_recorder_free(c->ev_adm);
        cu_recorder_free(c->ev_job);
        free(c);
        cu_world_free(&cw);
        cu_diag_free(&d);
        return 2;
    }
    c->loop = ev_loop_new(EVFLAG_AUTO);
    cu_kclient_opts ko = { 0 };
    ko.on_attempt = on_attempt;
    ko.on_outcome = on_outcome;
    ko.attempt_ud = c;
    c->server = kcfg->server;
    if (cf->client.has_qps)
        ko.qps = cf->client.qps < 0 ? 1e9 : cf->client.qps;
    if (cf->client.has_burst)
        ko.burst = cf->client.burst;
    c->kc = c->loop ? cu_kclient_new(c->loop, kcfg, &ko, &d) : NULL;
    if (!c->kc) {
        for (size_t i = 0; i < d.n; i++)
            fprintf(stderr, "cueue: controller: %s\n", d.msgs[i]);
        rc = 1;
        goto out;
    }
    clog_(c, 0, "connecting to %s", kcfg->server);
    int fatal = 0;
    c->health = start_server(c, health, "127.0.0.1:8081", "health probes", "/healthz, /readyz",
                             health_handler, NULL, &fatal);
    if (fatal) {
        rc = 2;
        goto out;
    }
    if (start_metrics(c, metrics, msecure, mcert_dir, mcert_name, mcert_key) != 0) {
        rc = 2;
        goto out;
    }
    for (int r = 0; r < NRES; r++) {
        c->rc[r].c = c;
        c->rc[r].r = r;
        if (r == R_JOB && !c->cfg.jobs)
            continue;
        cu_informer_opts io = { 0 };
        io.path = res_tab[r].path;
        io.on_event = on_event;
        io.on_synced = on_synced;
        io.on_skip = on_skip;
        io.ud = &c->rc[r];
        c->inf[r] = cu_informer_start(c->kc, &io, &d);
        if (!c->inf[r]) {
            for (size_t i = 0; i < d.n; i++)
                fprintf(stderr, "cueue: controller: %s\n", d.msgs[i]);
            rc = 1;
            goto out;
        }
        c->ninf++;
    }
    ev_timer_init(&c->tick, on_tick, 0.05, 0.05);
    c->tick.data = c;
    ev_timer_start(c->loop, &c->tick);
    ev_signal_init(&c->sigterm, on_signal, SIGTERM);
    ev_signal_init(&c->sigint, on_signal, SIGINT);
    c->sigterm.data = c;
    c->sigint.data = c;
    ev_signal_start(c->loop, &c->sigterm);
    ev_signal_start(c->loop, &c->sigint);
    ev_run(c->loop, 0);
    rc = c->exit_rc;
    {
        cu_kclient_stats ks;
        cu_kclient_stats_get(c->kc, &ks);
        clog_(c, 0, "stopped: admissions=%lu evictions=%lu preemptions=%lu requests=%llu "
              "writes=%lu write_errors=%lu conflicts=%lu events=%lu cycles=%lu rebuilds=%lu "
              "peak_rss_kib=%ld",
              c->n.admissions, c->n.evictions, c->n.preemptions, (unsigned long long)ks.requests,
              c->n.writes, c->n.write_errors, c->n.conflicts, c->events, c->n.cycles, c->n.rebuilds,
              peak_rss_kib());
    }
    ev_signal_stop(c->loop, &c->sigterm);
    ev_signal_stop(c->loop, &c->sigint);
    ev_timer_stop(c->loop, &c->tick);
    ev_timer_stop(c->loop, &c->stop_timer);
    ev_timer_stop(c->loop, &c->drain);
out:
    if (c->lease)
        cu_lease_free(c->lease);
    cu_httpd_stop(c->health);
    cu_httpd_stop(c->metrics);
    cu_mauth_detach(c->mauth);
    for (int r = 0; r < NRES; r++)
        if (c->inf[r])
            cu_informer_stop(c->inf[r]);
    if (c->kc)
        cu_kclient_free(c->kc);   /* pending writes complete with "client closed" */
    if (c->mauth) {
        clog_(c, 0, "metrics authentication: %lu reviews", cu_mauth_reviews(c->mauth));
        cu_mauth_free(c->mauth);
    }
    if (c->eng)
        cu_engine_free(c->eng);
    for (size_t i = 0; i < c->ngrave; i++)
        world_free(c->grave[i]);
    free(c->grave);
    for (int r = 0; r < NRES; r++) {
        OMAP_FOREACH(&c->objs[r], x) {
            world_free(x->w);
            rec_free(x);
        }
        free(c->objs[r].b);
    }
    OMAP_FOREACH(&c->inflight, x) {
        free(x->key);
        free(x);
    }
    free(c->inflight.b);
    OMAP_FOREACH(&c->dirty_jobs, x) {
        free(x->key);
        free(x);
    }
    free(c->dirty_jobs.b);
    free(c->by_idx);
    cu_world_free(&c->vw);
    ev_queue_free(c);
    cu_metrics_free(c->m);
    cu_coalescer_free(c->co);
    cu_recorder_free(c->ev_adm);
    cu_recorder_free(c->ev_job);
    cu_ctrl_api_health_free(&c->apih);
    if (c->loop)
        ev_loop_destroy(c->loop);
    free(c);
    cu_kconfig_free(kcfg);
    cu_world_free(&cw);
    cu_diag_free(&d);
    return rc;
}
