/*
 * cu_controller.c - `cueue controller`: informers, the reconcile loop of
 * the Job integration and the admission cycles.
 *
 * State: the last seen JSON of every watched object (json-c, keyed
 * "ns/name"), the admissions written but not yet seen back from the
 * watch ("assumed": the Workload as it will be, so they count at once),
 * and the writes in flight (so none is sent twice).
 *
 * A cycle (after every informer synced, and then at most every 50 ms
 * after a change): reconcile Jobs (create missing Workloads, finish
 * Workloads of finished Jobs, unsuspend Jobs whose Workload holds quota,
 * suspend managed Jobs that run without it); then decode everything into
 * a fresh cu_world, load a fresh engine (admission state comes from the
 * Workloads' status, assumed ones included), run it, write the new
 * admissions and the pending reasons. Rebuilding per cycle keeps the
 * engine exactly in line with the API: a failed write is forgotten by
 * dropping the assumed object, and the next cycle retries.
 */
#include "cu_controller.h"
#include "cu_informer.h"
#include "cu_lease.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
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

typedef struct ctrl ctrl;
typedef struct rctx { ctrl *c; int r; } rctx;

/* One connection to the health probe server (a request, one response). */
typedef struct hconn {
    ctrl *c;
    int fd;
    ev_io io;
    ev_timer timeout;
    size_t len;
    char buf[2048];
    struct hconn *next;
} hconn;

struct ctrl {
    struct ev_loop *loop;
    cu_kclient *kc;
    cu_informer *inf[NRES];
    rctx rc[NRES];
    json_object *objs[NRES];   /* key -> last seen object */
    json_object *assumed;      /* Workload key -> Workload as admitted (written, unconfirmed) */
    json_object *inflight;     /* operation key -> true */
    int nsynced, dirty, verbose, started;
    cu_engine_opts eopts;
    ev_timer tick;
    ev_signal sigterm, sigint;
    unsigned long admissions;

    /* leader election (--leader-elect): only the leader cycles and writes */
    int elect, leading, stopping;
    cu_lease_opts lopts;
    cu_lease *lease;
    const char *lease_ns;      /* --leader-elect-namespace, NULL: kueue-system or default */
    char ident[300];
    ev_timer stop_timer;       /* exit even if the release does not answer */

    /* health probes (--health-probe-bind-address) */
    int hfd;
    ev_io hio;
    hconn *hconns;
    int exit_rc;
};

typedef enum { OP_CREATE, OP_ADMIT, OP_PENDING, OP_FINISH, OP_START, OP_STOP } opkind;
typedef struct wctx { ctrl *c; opkind kind; char *op, *key, *what; } wctx;

static int64_t real_now(void *ud)
{
    (void)ud;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("cueue controller: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

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

static void obj_key(json_object *o, char *out, size_t n)
{
    const char *ns = jstr2(o, "metadata", "namespace"), *name = jstr2(o, "metadata", "name");
    if (ns)
        snprintf(out, n, "%s/%s", ns, name ? name : "");
    else
        snprintf(out, n, "%s", name ? name : "");
}

/* condition type's status in a json object's status.conditions, or NULL */
static json_object *jcond(json_object *o, const char *type)
{
    json_object *conds = jget(jget(o, "status"), "conditions");
    size_t n = json_object_is_type(conds, json_type_array) ? json_object_array_length(conds) : 0;
    for (size_t i = 0; i < n; i++) {
        json_object *c = json_object_array_get_idx(conds, i);
        const char *t = jstr2(c, "type", NULL);
        if (t && strcmp(t, type) == 0)
            return c;
    }
    return NULL;
}

static int jcond_true(json_object *o, const char *type)
{
    const char *s = jstr2(jcond(o, type), "status", NULL);
    return s && strcmp(s, "True") == 0;
}

static int wl_holds_quota(json_object *wl)
{
    return jget(jget(wl, "status"), "admission") && jcond_true(wl, "QuotaReserved");
}

/* ---------------- writes ---------------- */

static void write_done(cu_kclient *kc, const cu_kresp *r, void *ud)
{
    (void)kc;
    wctx *w = ud;
    ctrl *c = w->c;
    int ok = r->code >= 200 && r->code < 300;
    if (!ok && w->kind == OP_CREATE && r->code == 409)
        ok = 1;   /* AlreadyExists: the watch will bring it */
    if (!ok) {
        logf_("%s failed: %s%d %.300s", w->what, r->error ? r->error : "HTTP ", r->code,
              r->body ? r->body : "");
        if (w->kind == OP_ADMIT)
            json_object_object_del(c->assumed, w->key);   /* forget; retried next cycle */
    }
    json_object_object_del(c->inflight, w->op);
    c->dirty = 1;
    free(w->op);
    free(w->key);
    free(w->what);
    free(w);
}

/* Sends body (taken) unless op is in flight. */
static void send_write(ctrl *c, opkind kind, const char *op, const char *key, const char *method,
                       const char *path, const char *ctype, json_object *body, const char *what)
{
    if (jget(c->inflight, op) || (c->elect && !c->leading)) {
        json_object_put(body);   /* in flight, or not leading: no writes */
        return;
    }
    wctx *w = calloc(1, sizeof(*w));
    if (!w) {
        json_object_put(body);
        return;
    }
    w->c = c;
    w->kind = kind;
    w->op = strdup(op);
    w->key = strdup(key);
    w->what = strdup(what);
    const char *s = json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN);
    if (c->verbose >= 2)
        logf_("%s %s %s", method, path, s);
    cu_kreq *rq = w->op && w->key && w->what
                      ? cu_kclient_request(c->kc, method, path, s, strlen(s), ctype, write_done, w)
                      : NULL;
    json_object_put(body);
    if (!rq) {
        logf_("%s: could not start the request", what);
        free(w->op);
        free(w->key);
        free(w->what);
        free(w);
        return;
    }
    json_object_object_add(c->inflight, op, json_object_new_boolean(1));
}

static const char MERGE[] = "application/merge-patch+json";

/* ---------------- Job integration ---------------- */

static void reconcile_job(ctrl *c, json_object *job)
{
    const char *queue = jstr2(jget(job, "metadata"), "labels", CU_LABEL_QUEUE_NAME);
    const char *ns = jstr2(job, "metadata", "namespace"), *name = jstr2(job, "metadata", "name");
    const char *uid = jstr2(job, "metadata", "uid");
    if (!queue || !*queue || !ns || !name || !uid || jget(jget(job, "metadata"), "deletionTimestamp"))
        return;
    cu_arena a;
    cu_arena_init(&a, 0);
    const char *wlname = cu_job_workload_name(&a, name, uid);
    char wlkey[600], jkey[600], op[2048], path[2048], what[2048];
    snprintf(wlkey, sizeof(wlkey), "%s/%s", ns, wlname ? wlname : "");
    snprintf(jkey, sizeof(jkey), "%s/%s", ns, name);
    json_object *wl = jget(c->objs[R_WL], wlkey);
    int failed = 0, finished = cu_ctrl_job_finished(job, &failed);
    json_object *susp = jget(jget(job, "spec"), "suspend");
    int suspended = susp && json_object_get_boolean(susp);

    if (!wlname) {
    } else if (!wl) {
        if (!finished) {
            cu_diag d;
            cu_diag_init(&d);
            json_object *body = cu_ctrl_workload_for_job(job, &d);
            if (!body) {
                if (c->verbose)
                    for (size_t i = 0; i < d.n; i++)
                        logf_("%s", d.msgs[i]);
            } else {
                snprintf(op, sizeof(op), "create:%s", wlkey);
                snprintf(path, sizeof(path), "/apis/kueue.x-k8s.io/v1beta2/namespaces/%s/workloads", ns);
                snprintf(what, sizeof(what), "creating Workload %s for Job %s", wlkey, jkey);
                send_write(c, OP_CREATE, op, wlkey, "POST", path, "application/json", body, what);
            }
            cu_diag_free(&d);
        }
    } else if (finished) {
        if (!jcond_true(wl, "Finished")) {
            json_object *fc = jcond(job, failed ? "Failed" : "Complete");
            const char *msg = failed ? jstr2(fc, "message", NULL) : "Job finished successfully";
            json_object *conds = cu_ctrl_set_condition(jget(jget(wl, "status"), "conditions"),
                                                       "Finished", "True",
                                                       failed ? "Failed" : "Succeeded",
                                                       msg ? msg : "Job failed", real_now(NULL));
            json_object *p = json_object_new_object(), *st = json_object_new_object();
            json_object_object_add(p, "status", st);
            json_object_object_add(st, "conditions", conds);
            snprintf(op, sizeof(op), "finish:%s", wlkey);
            snprintf(path, sizeof(path),
                     "/apis/kueue.x-k8s.io/v1beta2/namespaces/%s/workloads/%s/status", ns, wlname);
            snprintf(what, sizeof(what), "finishing Workload %s", wlkey);
            send_write(c, OP_FINISH, op, wlkey, "PATCH", path, MERGE, p, what);
            logf_("Workload %s finished (Job %s %s)", wlkey, jkey, failed ? "failed" : "succeeded");
        }
    } else if (wl_holds_quota(wl) && suspended) {
        cu_diag d;
        cu_diag_init(&d);
        json_object *p = cu_ctrl_job_start_patch(job, wl, c->objs[R_RF], &d);
        if (!p) {
            for (size_t i = 0; i < d.n; i++)
                logf_("%s", d.msgs[i]);
        } else {
            snprintf(op, sizeof(op), "job:%s", jkey);
            snprintf(path, sizeof(path), "/apis/batch/v1/namespaces/%s/jobs/%s", ns, name);
            snprintf(what, sizeof(what), "starting Job %s", jkey);
            send_write(c, OP_START, op, wlkey, "PATCH", path, MERGE, p, what);
            if (c->verbose)
                logf_("starting Job %s", jkey);
        }
        cu_diag_free(&d);
    } else if (!wl_holds_quota(wl) && !suspended && !jget(c->assumed, wlkey)) {
        /* Kueue keeps a Job without quota suspended. */
        json_object *p = json_object_new_object(), *spec = json_object_new_object();
        json_object_object_add(p, "spec", spec);
        json_object_object_add(spec, "suspend", json_object_new_boolean(1));
        snprintf(op, sizeof(op), "job:%s", jkey);
        snprintf(path, sizeof(path), "/apis/batch/v1/namespaces/%s/jobs/%s", ns, name);
        snprintf(what, sizeof(what), "suspending Job %s", jkey);
        send_write(c, OP_STOP, op, wlkey, "PATCH", path, MERGE, p, what);
        logf_("suspending Job %s: its Workload %s holds no quota", jkey, wlkey);
    }
    cu_arena_free(&a);
}

/* ---------------- admission cycle ---------------- */

static void admit(ctrl *c, cu_engine *e, const cu_workload *wl)
{
    const cu_wl_info *info = NULL;
    for (size_t i = 0, n = cu_engine_nworkloads(e); i < n && !info; i++) {
        const cu_wl_info *x = cu_engine_workload_info(e, i);
        if (x->obj == wl)
            info = x;
    }
    char key[600], op[2048], path[2048], what[2048];
    snprintf(key, sizeof(key), "%s/%s", wl->meta.ns, wl->meta.name);
    json_object *cur = jget(c->objs[R_WL], key);
    if (!info || !info->cluster_queue || !cur || jget(c->assumed, key))
        return;
    int64_t now = real_now(NULL);
    json_object *p = cu_ctrl_admission_patch(info, jstr2(cur, "metadata", "resourceVersion"),
                                             jget(jget(cur, "status"), "conditions"), now);
    /* assume: the Workload as it will be once written */
    json_object *as = NULL;
    if (json_object_deep_copy(cur, &as, NULL) != 0) {
        json_object_put(p);
        return;
    }
    json_object *st = jget(as, "status");
    if (!st) {
        st = json_object_new_object();
        json_object_object_add(as, "status", st);
    }
    json_object *pst = jget(p, "status");
    json_object_object_add(st, "admission", json_object_get(jget(pst, "admission")));
    json_object_object_add(st, "conditions", json_object_get(jget(pst, "conditions")));
    json_object_object_add(c->assumed, key, as);

    char flv[400] = "";
    size_t off = 0;
    for (size_t i = 0; i < info->npsa; i++)
        for (size_t r = 0; r < info->psa[i].n && off < sizeof(flv) - 1; r++)
            off += (size_t)snprintf(flv + off, sizeof(flv) - off, "%s%s=%s", off ? "," : "",
                                    info->psa[i].resources[r], info->psa[i].flavors[r]);
    logf_("admitted Workload %s in ClusterQueue %s (%s)", key, info->cluster_queue, flv);
    c->admissions++;
    snprintf(op, sizeof(op), "status:%s", key);
    snprintf(path, sizeof(path), "/apis/kueue.x-k8s.io/v1beta2/namespaces/%s/workloads/%s/status",
             wl->meta.ns, wl->meta.name);
    snprintf(what, sizeof(what), "writing the admission of Workload %s", key);
    send_write(c, OP_ADMIT, op, key, "PATCH", path, MERGE, p, what);
}

static void write_pending(ctrl *c, const cu_wl_info *info)
{
    char key[600], op[2048], path[2048], what[2048];
    snprintf(key, sizeof(key), "%s/%s", info->ns, info->name);
    json_object *cur = jget(c->objs[R_WL], key);
    if (!cur || jget(c->assumed, key) || !info->message)
        return;
    const char *reason = info->reason ? info->reason : "Pending";
    json_object *qr = jcond(cur, "QuotaReserved");
    const char *s = jstr2(qr, "status", NULL), *rs = jstr2(qr, "reason", NULL),
               *m = jstr2(qr, "message", NULL);
    if (s && rs && m && strcmp(s, "False") == 0 && strcmp(rs, reason) == 0 &&
        strcmp(m, info->message) == 0)
        return;
    json_object *conds = cu_ctrl_set_condition(jget(jget(cur, "status"), "conditions"),
                                               "QuotaReserved", "False", reason, info->message,
                                               real_now(NULL));
    json_object *p = json_object_new_object(), *md = json_object_new_object(),
                *st = json_object_new_object();
    const char *rv = jstr2(cur, "metadata", "resourceVersion");
    if (rv)
        json_object_object_add(md, "resourceVersion", json_object_new_string(rv));
    json_object_object_add(p, "metadata", md);
    json_object_object_add(p, "status", st);
    json_object_object_add(st, "conditions", conds);
    snprintf(op, sizeof(op), "status:%s", key);
    snprintf(path, sizeof(path), "/apis/kueue.x-k8s.io/v1beta2/namespaces/%s/workloads/%s/status",
             info->ns, info->name);
    snprintf(what, sizeof(what), "writing the pending reason of Workload %s", key);
    if (c->verbose)
        logf_("Workload %s pending: %s", key, info->message);
    send_write(c, OP_PENDING, op, key, "PATCH", path, MERGE, p, what);
}

static void schedule(ctrl *c)
{
    cu_world w;
    cu_diag d;
    cu_world_init(&w);
    cu_diag_init(&d);
    for (int r = 0; r < R_JOB; r++) {
        json_object_object_foreach(c->objs[r], key, obj) {
            json_object *src = obj;
            if (r == R_WL) {
                json_object *as = jget(c->assumed, key);
                if (as)
                    src = as;
            }
            cu_node *n = cu_ctrl_json_to_node(&w.arena, src);
            if (!n)
                continue;
            cu_node_set(&w.arena, n, "apiVersion", cu_node_new_str(&w.arena, res_tab[r].api_version));
            cu_node_set(&w.arena, n, "kind", cu_node_new_str(&w.arena, res_tab[r].kind));
            cu_doc doc = { .file = "api", .root = n };
            cu_world_decode(&w, &doc, &d);
        }
    }
    if (c->verbose >= 1)
        for (size_t i = 0; i < d.n; i++)
            logf_("%s", d.msgs[i]);
    cu_diag_free(&d);
    cu_diag_init(&d);
    cu_engine *e = cu_engine_new(&c->eopts);
    if (!e || cu_engine_load(e, &w, &d) != CU_OK) {
        for (size_t i = 0; i < d.n; i++)
            logf_("%s", d.msgs[i]);
        logf_("could not load the engine");
    } else {
        cu_engine_run(e, 1000);
        int idx[64];
        size_t n;
        while ((n = cu_engine_take_admitted(e, idx, 64)) > 0)
            for (size_t i = 0; i < n; i++) {
                const cu_workload *wl = w.workloads.items[idx[i]];
                if (!cu_workload_has_quota(wl))
                    admit(c, e, wl);
            }
        for (size_t i = 0, nw = cu_engine_nworkloads(e); i < nw; i++) {
            const cu_wl_info *info = cu_engine_workload_info(e, i);
            if (!info->admitted && !info->finished && !info->evicting)
                write_pending(c, info);
        }
    }
    cu_engine_free(e);
    cu_diag_free(&d);
    cu_world_free(&w);
}

static void on_tick(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)loop;
    (void)revents;
    ctrl *c = t->data;
    if (c->nsynced < NRES || !c->dirty || c->stopping || (c->elect && !c->leading))
        return;
    if (!c->started) {
        c->started = 1;
        logf_(c->elect ? "starting admission cycles as the leader"
                       : "all informers synced; starting admission cycles");
    }
    c->dirty = 0;
    json_object_object_foreach(c->objs[R_JOB], k, job) {
        (void)k;
        reconcile_job(c, job);
    }
    schedule(c);
}

/* ---------------- leader election ---------------- */

static void on_lead_started(cu_lease *l, void *ud)
{
    (void)l;
    ctrl *c = ud;
    c->leading = 1;
    c->started = 0;
    c->dirty = 1;
    logf_("became leader (Lease %s/%s, identity %s)", c->lopts.ns, c->lopts.name, c->ident);
}

static void on_lead_stopped(cu_lease *l, void *ud)
{
    (void)l;
    ctrl *c = ud;
    c->leading = 0;
    c->started = 0;
    /* what we assumed may never be written now; the next leader reads the API */
    json_object_put(c->assumed);
    c->assumed = json_object_new_object();
    if (c->stopping)
        logf_("gave up leadership: releasing the Lease");
    else
        logf_("lost leadership: admission cycles and writes stopped");
}

/* Starts the candidate once the Namespaces are known: the namespace is
 * --leader-elect-namespace, else kueue-system when it exists, else default. */
static void start_election(ctrl *c)
{
    if (c->lease || c->stopping)
        return;
    c->lopts.ns = c->lease_ns ? c->lease_ns
                  : jget(c->objs[R_NS], "kueue-system") ? "kueue-system" : "default";
    cu_diag d;
    cu_diag_init(&d);
    c->lease = cu_lease_start(c->kc, &c->lopts, &d);
    if (!c->lease) {
        for (size_t i = 0; i < d.n; i++)
            logf_("%s", d.msgs[i]);
        logf_("could not start leader election");
        c->exit_rc = 1;
        ev_break(c->loop, EVBREAK_ALL);
    } else {
        logf_("leader election: Lease %s/%s, identity %s", c->lopts.ns, c->lopts.name, c->ident);
    }
    cu_diag_free(&d);
}

/* ---------------- health probes ---------------- */

static int ready(const ctrl *c, char *why, size_t n)
{
    if (c->stopping)
        snprintf(why, n, "stopping");
    else if (c->nsynced < NRES)
        snprintf(why, n, "informers synced: %d of %d", c->nsynced, NRES);
    else if (c->elect && c->leading && !c->started)
        snprintf(why, n, "leading, admission cycles not started yet");
    else
        return 1;
    return 0;
}

static void hconn_close(hconn *h)
{
    ctrl *c = h->c;
    ev_io_stop(c->loop, &h->io);
    ev_timer_stop(c->loop, &h->timeout);
    close(h->fd);
    for (hconn **pp = &c->hconns; *pp; pp = &(*pp)->next)
        if (*pp == h) {
            *pp = h->next;
            break;
        }
    free(h);
}

static void hconn_respond(hconn *h)
{
    char method[8] = "", path[256] = "", body[200], resp[512];
    int code = 404;
    const char *status = "Not Found";
    h->buf[h->len] = 0;
    if (sscanf(h->buf, "%7s %255s", method, path) != 2) {
        code = 400;
        status = "Bad Request";
        snprintf(body, sizeof(body), "bad request\n");
    } else {
        path[strcspn(path, "?")] = 0;
        if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
            code = 405;
            status = "Method Not Allowed";
            snprintf(body, sizeof(body), "only GET and HEAD\n");
        } else if (strcmp(path, "/healthz") == 0 || strcmp(path, "/livez") == 0) {
            code = 200;
            status = "OK";
            snprintf(body, sizeof(body), "ok");
        } else if (strcmp(path, "/readyz") == 0) {
            char why[160];
            if (ready(h->c, why, sizeof(why))) {
                code = 200;
                status = "OK";
                snprintf(body, sizeof(body), "ok");
            } else {
                code = 503;
                status = "Service Unavailable";
                snprintf(body, sizeof(body), "not ready: %s\n", why);
            }
        } else {
            snprintf(body, sizeof(body), "not found: %.150s\n", path);
        }
    }
    int n = snprintf(resp, sizeof(resp),
                     "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
                     "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
                     code, status, strlen(body), strcmp(method, "HEAD") == 0 ? "" : body);
    if (n > 0)   /* small enough for the socket buffer of a fresh connection */
        (void)send(h->fd, resp, (size_t)n < sizeof(resp) ? (size_t)n : sizeof(resp) - 1,
                   MSG_NOSIGNAL);
    hconn_close(h);
}

static void hconn_read(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)loop;
    (void)revents;
    hconn *h = w->data;
    ssize_t r = recv(h->fd, h->buf + h->len, sizeof(h->buf) - 1 - h->len, 0);
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return;
    if (r <= 0) {
        hconn_close(h);
        return;
    }
    h->len += (size_t)r;
    h->buf[h->len] = 0;
    if (strstr(h->buf, "\r\n\r\n") || strstr(h->buf, "\n\n") || h->len >= sizeof(h->buf) - 1)
        hconn_respond(h);
}

static void hconn_timeout(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)loop;
    (void)revents;
    hconn_close(t->data);
}

static void health_accept(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)revents;
    ctrl *c = w->data;
    for (;;) {
        int fd = accept(c->hfd, NULL, NULL);
        if (fd < 0)
            return;   /* EAGAIN, or an error the next readiness retries */
        hconn *h = calloc(1, sizeof(*h));
        if (!h || fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0) {
            free(h);
            close(fd);
            continue;
        }
        h->c = c;
        h->fd = fd;
        h->next = c->hconns;
        c->hconns = h;
        ev_io_init(&h->io, hconn_read, fd, EV_READ);
        h->io.data = h;
        ev_io_start(loop, &h->io);
        ev_timer_init(&h->timeout, hconn_timeout, 5.0, 0.);
        h->timeout.data = h;
        ev_timer_start(loop, &h->timeout);
    }
}

/* Listens on addr (HOST:PORT, [V6]:PORT or :PORT for every address; port 0
 * picks one, logged). Returns 0, or -1 with a message on stderr. */
static int health_start(ctrl *c, const char *addr)
{
    char host[256], port[32];
    const char *colon = strrchr(addr, ':');
    size_t hl = colon ? (size_t)(colon - addr) : 0;
    if (!colon || !colon[1] || hl >= sizeof(host) || strlen(colon + 1) >= sizeof(port)) {
        fprintf(stderr, "cueue: controller: --health-probe-bind-address: expected HOST:PORT or "
                "\"0\", got '%s'\n", addr);
        return -1;
    }
    memcpy(host, addr, hl);
    host[hl] = 0;
    snprintf(port, sizeof(port), "%s", colon + 1);
    char *h = host;
    if (h[0] == '[' && hl >= 2 && h[hl - 1] == ']') {
        h[hl - 1] = 0;
        h++;
    }
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    int e = getaddrinfo(*h ? h : NULL, port, &hints, &res);
    if (e != 0) {
        fprintf(stderr, "cueue: controller: --health-probe-bind-address %s: %s\n", addr,
                gai_strerror(e));
        return -1;
    }
    int fd = socket(res->ai_family, res->ai_socktype, res->ai_protocol), one = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        bind(fd, res->ai_addr, res->ai_addrlen) != 0 || listen(fd, 16) != 0 ||
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0) {
        fprintf(stderr, "cueue: controller: --health-probe-bind-address %s: %s\n", addr,
                strerror(errno));
        if (fd >= 0)
            close(fd);
        freeaddrinfo(res);
        return -1;
    }
    freeaddrinfo(res);
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    char nh[256] = "?", np[32] = "?";
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
        getnameinfo((struct sockaddr *)&ss, sl, nh, sizeof(nh), np, sizeof(np),
                    NI_NUMERICHOST | NI_NUMERICSERV);
    logf_("health probes on %s%s%s:%s (/healthz, /readyz)", strchr(nh, ':') ? "[" : "", nh,
          strchr(nh, ':') ? "]" : "", np);
    c->hfd = fd;
    ev_io_init(&c->hio, health_accept, fd, EV_READ);
    c->hio.data = c;
    ev_io_start(c->loop, &c->hio);
    return 0;
}

static void health_stop(ctrl *c)
{
    while (c->hconns)
        hconn_close(c->hconns);
    if (c->hfd >= 0) {
        ev_io_stop(c->loop, &c->hio);
        close(c->hfd);
        c->hfd = -1;
    }
}

/* Parses a Go duration ("3s", "500ms", "1m30s", "1.5s") into *ms (at
 * least 1 ms). Returns 0, or -1 when malformed. */
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

/* ---------------- informers ---------------- */

static void on_event(cu_informer *inf, cu_ievent ev, json_object *obj, void *ud)
{
    (void)inf;
    rctx *rc = ud;
    ctrl *c = rc->c;
    char key[600];
    obj_key(obj, key, sizeof(key));
    if (ev == CU_IEV_DELETED) {
        json_object_object_del(c->objs[rc->r], key);
        if (rc->r == R_WL)
            json_object_object_del(c->assumed, key);
    } else {
        json_object_object_add(c->objs[rc->r], key, json_object_get(obj));
        if (rc->r == R_WL && jget(jget(obj, "status"), "admission"))
            json_object_object_del(c->assumed, key);   /* confirmed by the watch */
    }
    c->dirty = 1;
}

static void on_synced(cu_informer *inf, void *ud)
{
    (void)inf;
    rctx *rc = ud;
    ctrl *c = rc->c;
    c->nsynced++;
    c->dirty = 1;
    if (c->verbose)
        logf_("synced %s", res_tab[rc->r].path);
    if (c->elect && rc->r == R_NS)
        start_election(c);
    if (c->elect && c->nsynced == NRES)
        logf_("all informers synced%s", c->leading ? "" : "; standing by until elected leader");
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
    logf_("the Lease release did not finish in time");
    ev_break(loop, EVBREAK_ALL);
}

/* SIGTERM/SIGINT: stop cycling and writing, release the Lease if held
 * (at most 3 s), then leave the loop. A second signal leaves at once. */
static void on_signal(struct ev_loop *loop, ev_signal *s, int revents)
{
    (void)revents;
    ctrl *c = s->data;
    if (c->stopping || !c->lease) {
        c->stopping = 1;
        ev_break(loop, EVBREAK_ALL);
        return;
    }
    c->stopping = 1;
    ev_timer_init(&c->stop_timer, on_stop_timer, 3.0, 0.);
    ev_timer_start(loop, &c->stop_timer);
    cu_lease_release(c->lease, on_released, c);
}

/* ---------------- main ---------------- */

static const char help_text[] =
    "Usage: cueue controller [OPTIONS]\n"
    "\n"
    "Runs the admission controller against a Kubernetes API server: watches\n"
    "ResourceFlavors, Cohorts, ClusterQueues, LocalQueues, WorkloadPriorityClasses,\n"
    "PriorityClasses, Namespaces, Workloads and batch/v1 Jobs; creates a Workload\n"
    "for every Job with the kueue.x-k8s.io/queue-name label; admits Workloads when\n"
    "their ClusterQueue has quota (status.admission, QuotaReserved and Admitted);\n"
    "then unsuspends their Jobs with the flavors' nodeLabels and tolerations.\n"
    "Jobs must be created with spec.suspend: true (there is no webhook to suspend\n"
    "them); a managed Job without quota is suspended.\n"
    "\n"
    "Options:\n"
    "      --kubeconfig FILE  kubeconfig to use (default $KUBECONFIG, then\n"
    "                         ~/.kube/config, then the in-cluster configuration)\n"
    "      --context NAME     kubeconfig context (default: the current one)\n"
    "      --config FILE      Kueue's controller Configuration\n"
    "                         (config.kueue.x-k8s.io; fairSharing and\n"
    "                         admissionFairSharing are used)\n"
    "  -v, --verbose N        log level: 0 admissions and errors (default),\n"
    "                         1 also pending reasons and sync, 2 every write\n"
    "      --leader-elect     run as one of several replicas: only the holder of\n"
    "                         the coordination.k8s.io Lease c1f6bfd2.kueue.x-k8s.io\n"
    "                         runs admission cycles and writes; the others keep\n"
    "                         their informers synced and take over when the\n"
    "                         Lease expires (default: off, always act)\n"
    "      --leader-elect-namespace NS\n"
    "                         namespace of the Lease (default kueue-system when\n"
    "                         it exists, else default)\n"
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
    "                         otherwise) over HTTP (default 127.0.0.1:8081; port\n"
    "                         0 picks a free one, logged; \"0\" disables)\n"
    "  -h, --help             show this help\n"
    "\n"
    "Stops cleanly on SIGTERM or SIGINT (exit 0), releasing the Lease when it\n"
    "leads. Exit codes: 1 runtime failure,\n"
    "2 bad usage or bad configuration.\n";

int cu_controller_main(int argc, char **argv)
{
    static const struct option opts[] = {
        { "kubeconfig", required_argument, NULL, 'k' },
        { "context", required_argument, NULL, 'x' },
        { "config", required_argument, NULL, 'c' },
        { "verbose", required_argument, NULL, 'v' },
        { "help", no_argument, NULL, 'h' },
        { "leader-elect", no_argument, NULL, 'L' },
        { "leader-elect-namespace", required_argument, NULL, 'N' },
        { "leader-elect-lease-duration", required_argument, NULL, 'D' },
        { "leader-elect-renew-deadline", required_argument, NULL, 'R' },
        { "leader-elect-retry-period", required_argument, NULL, 'P' },
        { "health-probe-bind-address", required_argument, NULL, 'H' },
        { NULL, 0, NULL, 0 },
    };
    const char *kubeconfig = NULL, *context = NULL, *config = NULL, *lease_ns = NULL;
    const char *health = NULL;   /* NULL: the default, 127.0.0.1:8081 */
    int verbose = 0, ch, elect = 0, lease_ms = 15000, renew_ms = 10000, retry_ms = 2000;
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
        case 'D': case 'R': case 'P': {
            int *dst = ch == 'D' ? &lease_ms : ch == 'R' ? &renew_ms : &retry_ms;
            if (parse_go_duration(optarg, dst) != 0) {
                fprintf(stderr, "cueue: controller: %s: expected a Go duration such as 500ms, "
                        "3s or 1m (at least 1ms, at most 24h), got '%s'\n",
                        ch == 'D'   ? "--leader-elect-lease-duration"
                        : ch == 'R' ? "--leader-elect-renew-deadline"
                                    : "--leader-elect-retry-period",
                        optarg);
                return 2;
            }
            break;
        }
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
    if (lease_ms < 1000 || lease_ms <= renew_ms || renew_ms <= retry_ms) {
        fprintf(stderr, "cueue: controller: leader election timings: need lease duration "
                "(%d ms, at least 1s) > renew deadline (%d ms) > retry period (%d ms)\n",
                lease_ms, renew_ms, retry_ms);
        return 2;
    }

    int rc = 0;
    cu_diag d;
    cu_diag_init(&d);
    cu_world cw;
    cu_world_init(&cw);
    ctrl c;
    memset(&c, 0, sizeof(c));
    c.verbose = verbose;
    c.hfd = -1;
    c.elect = elect;
    c.lease_ns = lease_ns;
    {
        char hn[256] = "";
        if (gethostname(hn, sizeof(hn) - 1) != 0 || !hn[0])
            snprintf(hn, sizeof(hn), "localhost");
        snprintf(c.ident, sizeof(c.ident), "%s_%ld", hn, (long)getpid());
    }
    c.lopts.name = "c1f6bfd2.kueue.x-k8s.io";
    c.lopts.identity = c.ident;
    c.lopts.lease_ms = lease_ms;
    c.lopts.renew_ms = renew_ms;
    c.lopts.retry_ms = retry_ms;
    c.lopts.on_started = on_lead_started;
    c.lopts.on_stopped = on_lead_stopped;
    c.lopts.ud = &c;
    c.eopts.clock.now_ms = real_now;
    c.eopts.manual_evictions = 1;
    if (config) {
        if (cu_world_load(&cw, &config, 1, &d) != CU_OK || cw.configs.n != 1) {
            for (size_t i = 0; i < d.n; i++)
                fprintf(stderr, "cueue: controller: %s\n", d.msgs[i]);
            if (cw.configs.n != 1)
                fprintf(stderr, "cueue: controller: %s: expected one config.kueue.x-k8s.io "
                        "Configuration, found %zu\n", config, cw.configs.n);
            cu_world_free(&cw);
            cu_diag_free(&d);
            return 2;
        }
        const cu_config *cf = cw.configs.items[0];
        c.eopts.fair_sharing = cf->fair_sharing;
        c.eopts.nstrategies = cf->nstrategies;
        memcpy(c.eopts.strategies, cf->strategies, sizeof(c.eopts.strategies));
        c.eopts.afs = cf->afs;
        c.eopts.afs_half_life_ms = cf->afs_half_life_ms;
        c.eopts.afs_sampling_ms = cf->afs_sampling_ms;
        c.eopts.afs_weights = cf->afs_weights.n ? &cf->afs_weights : NULL;
    }
    cu_kconfig *kcfg = cu_kconfig_load(kubeconfig, context, &d);
    if (!kcfg) {
        for (size_t i = 0; i < d.n; i++)
            fprintf(stderr, "cueue: controller: %s\n", d.msgs[i]);
        cu_world_free(&cw);
        cu_diag_free(&d);
        return 2;
    }
    c.loop = ev_loop_new(EVFLAG_AUTO);
    cu_kclient_opts ko = { 0 };
    c.kc = c.loop ? cu_kclient_new(c.loop, kcfg, &ko, &d) : NULL;
    c.assumed = json_object_new_object();
    c.inflight = json_object_new_object();
    if (!c.kc) {
        for (size_t i = 0; i < d.n; i++)
            fprintf(stderr, "cueue: controller: %s\n", d.msgs[i]);
        rc = 1;
        goto out;
    }
    logf_("connecting to %s", kcfg->server);
    if (!health) {
        /* the default address may be taken (another controller on this
         * host): then run without probes rather than not at all */
        if (health_start(&c, "127.0.0.1:8081") != 0)
            logf_("health probes disabled: the default address 127.0.0.1:8081 is not "
                  "available (choose one with --health-probe-bind-address)");
    } else if (strcmp(health, "0") != 0 && health_start(&c, health) != 0) {
        rc = 2;
        goto out;
    }
    for (int r = 0; r < NRES; r++) {
        c.objs[r] = json_object_new_object();
        c.rc[r].c = &c;
        c.rc[r].r = r;
        cu_informer_opts io = { 0 };
        io.path = res_tab[r].path;
        io.on_event = on_event;
        io.on_synced = on_synced;
        io.ud = &c.rc[r];
        c.inf[r] = cu_informer_start(c.kc, &io, &d);
        if (!c.inf[r]) {
            for (size_t i = 0; i < d.n; i++)
                fprintf(stderr, "cueue: controller: %s\n", d.msgs[i]);
            rc = 1;
            goto out;
        }
    }
    ev_timer_init(&c.tick, on_tick, 0.05, 0.05);
    c.tick.data = &c;
    ev_timer_start(c.loop, &c.tick);
    ev_signal_init(&c.sigterm, on_signal, SIGTERM);
    ev_signal_init(&c.sigint, on_signal, SIGINT);
    c.sigterm.data = &c;
    c.sigint.data = &c;
    ev_signal_start(c.loop, &c.sigterm);
    ev_signal_start(c.loop, &c.sigint);
    ev_run(c.loop, 0);
    rc = c.exit_rc;
    logf_("stopping (%lu admissions)", c.admissions);
    ev_signal_stop(c.loop, &c.sigterm);
    ev_signal_stop(c.loop, &c.sigint);
    ev_timer_stop(c.loop, &c.tick);
    ev_timer_stop(c.loop, &c.stop_timer);
out:
    if (c.lease)
        cu_lease_free(c.lease);
    if (c.loop)
        health_stop(&c);
    for (int r = 0; r < NRES; r++) {
        if (c.inf[r])
            cu_informer_stop(c.inf[r]);
        json_object_put(c.objs[r]);
    }
    if (c.kc)
        cu_kclient_free(c.kc);   /* pending writes complete with "client closed" */
    if (c.loop)
        ev_loop_destroy(c.loop);
    json_object_put(c.assumed);
    json_object_put(c.inflight);
    cu_kconfig_free(kcfg);
    cu_world_free(&cw);
    cu_diag_free(&d);
    return rc;
}
