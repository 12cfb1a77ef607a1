/*
 * cu_ctrlwrite.c - the controller's writes (one request per object at a time,
 * retried until observed), the Events queue, and Workload conditions.
 */
#include "cu_ctrl_int.h"

/* ---------------- writes ---------------- */

typedef struct wctx {
    ctrl *c;
    opkind kind;
    int r; /* the resource of the record key names */
    char *op, *key, *what;
} wctx;

int ctrl_leading(const ctrl *c)
{
    return (!c->elect || (c->leading && cu_lease_leading(c->lease))) && !c->stopping;
}

/* The guard slot of a write: Workload status (admission included) and
 * spec writes, Job patches. NULL for writes without one. */
static char **guard_slot(ctrl *c, opkind kind, int r, const char *op, const char *key, rec **out)
{
    rec *x = NULL;
    int slot = 0;
    if (kind == OP_STATUS || kind == OP_ADMIT) {
        x = ctrl_omap_get(&c->objs[R_WL], key);
    } else if (kind == OP_JOB) {
        x = ctrl_omap_get(&c->objs[r], key);
    } else if (kind == OP_OTHER && strncmp(op, "spec:", 5) == 0) {
        x = ctrl_omap_get(&c->objs[R_WL], key);
        slot = 1;
    } else if (kind == OP_OTHER && strncmp(op, "fin:", 4) == 0) {
        /* the finalizer of a ClusterQueue ("fin:cq:NAME") or ResourceFlavor */
        x = ctrl_omap_get(&c->objs[strncmp(op + 4, "cq:", 3) == 0 ? R_CQ : R_RF], key);
        slot = 1;
    }
    *out = x;
    return x ? &x->sent_rv[slot] : NULL;
}

/* Every API request attempt (the kube client's hook): counted by verb
 * (LIST and WATCH told apart from GET) and status code, timed. */
void ctrl_on_attempt(void *ud, const char *method, int watch, int code, double seconds)
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
void ctrl_on_outcome(void *ud, int code, const char *error, const char *body)
{
    ctrl *c = ud;
    char line[1500];
    if (cu_ctrl_api_outcome(&c->apih, c->server ? c->server : "?", code, error, body, line,
                            sizeof(line)))
        cu_log_kv(&c->log, 0, code >= 200 && code < 300 ? "info" : "error", line, NULL);
}

typedef struct rrctx {
    ctrl *c;
    int r;
} rrctx;

static void reread_done(cu_kclient *kc, const cu_kresp *r, void *ud)
{
    (void)kc;
    rrctx *x = ud;
    if (r->code == 200 && r->body) {
        json_object *o = cu_json_parse_str(r->body);
        if (o)
            ctrl_on_event(NULL, CU_IEV_MODIFIED, o, &x->c->rc[x->r]);
        json_object_put(o);
    }
    free(x);
}

void ctrl_obj_path(int r, const char *key, char *out, size_t n)
{
    const char *path = res_tab[r].path, *plural = strrchr(path, '/');
    const char *sl = strchr(key, '/');
    if (sl)
        snprintf(out, n, "%.*s/namespaces/%.*s%s/%s", (int)(plural - path), path, (int)(sl - key),
                 key, plural, sl + 1);
    else
        snprintf(out, n, "%s/%s", path, key);
}

/* GETs one Workload or owner object again and feeds it through
 * ctrl_on_event (as the watch would). */
static void reread(ctrl *c, int r, const char *key)
{
    if (!strchr(key, '/'))
        return;
    char path[1200];
    ctrl_obj_path(r, key, path, sizeof(path));
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
            static const char *const kinds[] = { "workload",        "workload-admission",
                                                 "workload-status", "job",
                                                 "queue-status",    "workload-spec" };
            const char *kv[] = { kinds[w->kind] };
            cu_metric_inc(c->km.cueue_write_conflicts_total, kv, 1);
        }
    }
    if (!ok && w->kind == OP_CREATE && r->code == 409)
        ok = 1; /* AlreadyExists: the watch brings it */
    if (!ok && w->kind == OP_CREATE) {
        rec *jr = ctrl_omap_get(&c->objs[w->r], w->key);
        if (jr)
            jr->created_at = 0; /* failed: create again */
    }
    /* a finalizer write is based on the version last seen (a precondition,
     * so that another controller's finalizer is not lost): when our own
     * status write got in first, it is written again on the version the
     * watch brings; no error */
    int fin_conflict = !ok && r->code == 409 && strncmp(w->op, "fin:", 4) == 0;
    if (fin_conflict)
        ctrl_log(c, 2, "%s: the object changed meanwhile; written again on its new version",
                 w->what);
    /* a write to an owner's object (a Job, a pod) that was deleted meanwhile,
     * e.g. an LWS pod removed by a scale-down while it was being labelled:
     * nothing is left to write, and its DELETED event is on the way */
    int gone = !ok && r->code == 404 && w->kind == OP_JOB;
    if (gone)
        ctrl_log(c, 2, "%s: the object is gone", w->what);
    if (!ok && !fin_conflict && !gone) {
        c->n.write_errors++;
        if (r->code == 409)
            c->n.conflicts++;
        rec *jr = w->kind == OP_CREATE ? ctrl_omap_get(&c->objs[w->r], w->key) : NULL;
        rec *lx = jr ? jr : ctrl_omap_get(&c->objs[w->kind == OP_JOB ? w->r : R_WL], w->key);
        char msg[700];
        cu_ctrl_status_text(r->code, r->error, r->body, msg, sizeof(msg));
        const char *wlkey = w->kind == OP_CREATE ? w->op + strlen("create:") : "";
        const char *wlname = strchr(wlkey, '/') ? strchr(wlkey, '/') + 1 : wlkey;
        if (jr && cu_ctrl_refused_for_good(r->code)) {
            /* it cannot succeed as it is: said once, on the owner, and not
             * sent again until the owner changes what it asks for */
            jr->refused = jr->create_hash;
            ctrl_log(c, 0,
                     "%s %s: the API server refused its Workload %s (%s); not sent again "
                     "until the %s changes",
                     res_tab[w->r].kind, w->key, wlkey, msg, res_tab[w->r].kind);
            char m[900];
            snprintf(m, sizeof(m), "Workload %s could not be created: %s", wlname, msg);
            ctrl_emit_owner(c, jr, "Warning", CU_EV_FAILED_CREATE_WORKLOAD, m);
        } else {
            /* the first failure of a streak at the default level, the
             * retries after it (backing off) only with -v 2 */
            int quiet = r->code == 409 ? 1 : lx && lx->conflicts > 0 ? 2 : 0;
            ctrl_log(c, quiet, "%s failed: %s", w->what, msg);
        }
        if (w->kind == OP_QSTATUS)
            cu_coalescer_written(c->co, w->key, 0);
        rec *gx;
        char **g = guard_slot(c, w->kind, w->r, w->op, w->key, &gx);
        if (w->kind == OP_CREATE)
            gx = ctrl_omap_get(&c->objs[w->r], w->key);
        if ((g || w->kind == OP_CREATE) && gx) {
            /* the same version is written again only after a backoff
             * (cu_ctrl_retry_delay_ms); a new version may be written at
             * once. A conflict reads the object again (a newer version
             * may be on its way). */
            gx->conflicts++;
            gx->retry_at =
                cu_clock_system_now(NULL) + cu_ctrl_retry_delay_ms(r->code, gx->conflicts);
            if (!c->retry_wake || gx->retry_at < c->retry_wake)
                c->retry_wake = gx->retry_at;
            if (r->code == 409 && g && strncmp(w->op, "fin:", 4) != 0)
                reread(c, w->kind == OP_JOB ? w->r : R_WL, w->key);
        }
        if (w->kind == OP_ADMIT) {
            rec *x = ctrl_omap_get(&c->objs[R_WL], w->key);
            if (x) {
                x->hold = r->code == 409;
                ctrl_undo_admission(c, x);
            }
        }
    }
    if (ok && w->kind == OP_QSTATUS)
        cu_coalescer_written(c->co, w->key, 1);
    rec *cj = ok && w->kind == OP_CREATE ? ctrl_omap_get(&c->objs[w->r], w->key) : NULL;
    if (cj) {
        cj->conflicts = 0;
        cj->retry_at = 0;
    }
    if (cj && r->code != 409) {
        /* in the API now (not on a 409: someone else created it) */
        const char *wlkey = w->op + strlen("create:"), *sl = strchr(wlkey, '/');
        if (sl) {
            char ns[300];
            snprintf(ns, sizeof(ns), "%.*s", (int)(sl - wlkey), wlkey);
            ctrl_log(c, 1, "%s %s: created Workload %s", res_tab[w->r].kind, cj->key, wlkey);
            char m[900];
            ctrl_emit_owner(c, cj, "Normal", CU_EV_CREATED_WORKLOAD,
                            cu_ctrl_event_msg_created_workload(m, sizeof(m), ns, sl + 1));
        }
    }
    if (ok) {
        rec *gx;
        if (guard_slot(c, w->kind, w->r, w->op, w->key, &gx) && gx) {
            gx->conflicts = 0;
            gx->retry_at = 0;
        }
    }
    if (w->kind == OP_JOB) {
        const ctrl_integ *in = ctrl_integ_of(w->r);
        if (in && in->written)
            in->written(c, w->key, ok, r->body);
    }
    if (ok && w->kind == OP_ADMIT) {
        rec *x = ctrl_omap_get(&c->objs[R_WL], w->key);
        if (x && x->assumed)
            x->adm_written = 1; /* in the API now: its Job may start before the watch says so */
    }
    rec *f = ctrl_omap_del(&c->inflight, w->op);
    if (f) {
        free(f->key);
        free(f);
    }
    /* the object's Job (or the Job itself) gets another look, and so do a
     * Workload's eviction and PodsReady state: a write they wanted may
     * have been dropped while this one was in flight (the watch can bring
     * a write's result before its answer) */
    rec *wl = w->r == R_WL ? ctrl_omap_get(&c->objs[R_WL], w->key) : NULL;
    if (wl)
        ctrl_mark_owner(c, wl->owner_r, wl->owner);
    else if (w->r >= R_FIRST_OWNER)
        ctrl_mark_owner(c, w->r, w->key);
    if (wl) {
        c->pr_dirty = 1;
        ctrl_mark_wl(c, wl->key);
    }
    free(w->op);
    free(w->key);
    free(w->what);
    free(w);
}

/* Sends body (taken) unless op is in flight or this replica must not
 * write. Returns 1 when sent. */
int ctrl_send_write(ctrl *c, opkind kind, int r, const char *op, const char *key,
                    const char *method, const char *path, const char *ctype, json_object *body,
                    const char *what)
{
    rec *gx = NULL;
    char **g = guard_slot(c, kind, r, op, key, &gx);
    if (ctrl_omap_get(&c->inflight, op) || !ctrl_leading(c) ||
        (g && *g && gx->rv && strcmp(*g, gx->rv) == 0 &&
         (!gx->retry_at || cu_clock_system_now(NULL) < gx->retry_at))) {
        json_object_put(body); /* in flight, already written at this version, or not leading */
        return 0;
    }
    wctx *w = calloc(1, sizeof(*w));
    rec *f = calloc(1, sizeof(*f));
    if (w) {
        w->c = c;
        w->kind = kind;
        w->r = r;
        w->op = strdup(op);
        w->key = strdup(key);
        w->what = strdup(what);
    }
    /* "/" unescaped: a server-side apply body is read as YAML, and
     * kube-apiserver's YAML 1.1 decoder refuses the escape "\/" (400
     * "found unknown escape character") that json-c writes by default */
    const char *s = body ? json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN |
                                                                    JSON_C_TO_STRING_NOSLASHESCAPE)
                         : NULL;
    cu_kreq *rq = NULL;
    if (w && f && w->op && w->key && w->what && (f->key = strdup(op)) != NULL) {
        if (c->verbose >= 3)
            ctrl_log(c, 3, "%s %s %s", method, path, s ? s : "");
        cu_kclient *kc = c->kc;
        if (kind == OP_QSTATUS)
            kc = strncmp(key, "lq/", 3) == 0 && c->kc_lq ? c->kc_lq : c->kc_q ? c->kc_q : c->kc;
        rq = cu_kclient_request(kc, method, path, s, s ? strlen(s) : 0, ctype, write_done, w);
    }
    json_object_put(body);
    if (!rq || ctrl_omap_add(&c->inflight, f) != 0) {
        ctrl_log(c, 0, "%s: could not start the request", what);
        if (w) {
            free(w->op);
            free(w->key);
            free(w->what);
        }
        free(w);
        if (f)
            free(f->key);
        free(f);
        return 0; /* an rq already sent completes with w freed? never: rq is NULL here */
    }
    c->n.writes++;
    if (g) {
        free(*g);
        *g = ctrl_sdup(gx->rv);
    }
    return 1;
}

int ctrl_inflight(ctrl *c, const char *op) { return ctrl_omap_get(&c->inflight, op) != NULL; }

static void mark(ctrl *c, omap *set, const char *key)
{
    if (!key || ctrl_omap_get(set, key))
        return;
    rec *d = calloc(1, sizeof(*d));
    if (!d || !(d->key = strdup(key)) || ctrl_omap_add(set, d) != 0) {
        if (d)
            free(d->key);
        free(d);
        if (set == &c->dirty_wls)
            c->deact_dirty = 1; /* no memory to note it: look at all */
    }
}

void ctrl_mark_owner(ctrl *c, int r, const char *key)
{
    if (r >= R_FIRST_OWNER && r < NRES)
        mark(c, &c->dirty[r], key);
}

void ctrl_mark_wl(ctrl *c, const char *wkey) { mark(c, &c->dirty_wls, wkey); }

/* ---------------- events ---------------- */

/* Events wait in a FIFO and at most EV_INFLIGHT are sent at a time, so
 * that a burst of them never delays admissions and Job starts (which go
 * straight to the client). The FIFO is bounded: past EV_QUEUE_MAX the
 * oldest are dropped (counted). */
enum { EV_INFLIGHT = 4, EV_QUEUE_MAX = 20000 };

typedef struct evctx {
    ctrl *c;
    cu_recorder *r;
    cu_event_req req; /* body reduced to metadata.name once queued */
    char *text;       /* the body to send */
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
        ctrl_log(c, 2, "event %s %s failed: %d", e->req.method, e->req.path, r->code);
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
        if (!cu_kclient_request(c->kc_ev ? c->kc_ev : c->kc, e->req.method, e->req.path, e->text,
                                strlen(e->text), e->req.content_type, event_done, e)) {
            cu_event_req_free(&e->req);
            free(e->text);
            free(e);
            continue;
        }
        c->ev_inflight++;
        c->events++;
    }
}

void ctrl_ev_queue_free(ctrl *c)
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
void ctrl_emit_av(ctrl *c, int job, const char *av, const char *kind, const char *ns,
                  const char *name, const char *uid, const char *type, const char *reason,
                  const char *msg)
{
    if (!ctrl_leading(c))
        return;
    cu_event_ref ref = {
        .api_version = av,
        .kind = kind,
        .ns = ns,
        .name = name,
        .uid = uid,
    };
    evctx *e = calloc(1, sizeof(*e));
    if (!e)
        return;
    e->c = c;
    e->r = job ? c->ev_job : c->ev_adm;
    if (cu_recorder_record(e->r, &ref, type, reason, msg, cu_clock_system_now(NULL), &e->req) !=
        1) {
        free(e);
        return;
    }
    /* queued as text: a json-c tree costs ten times more */
    e->text = strdup(json_object_to_json_string_ext(e->req.body, JSON_C_TO_STRING_PLAIN));
    json_object *md = cu_jget(e->req.body, "metadata"), *small = json_object_new_object();
    if (md && cu_jget(md, "name")) {
        json_object *m2 = json_object_new_object();
        json_object_object_add(m2, "name", json_object_get(cu_jget(md, "name")));
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
    ctrl_emit_av(c, job, job ? "batch/v1" : CU_GROUP "/v1beta2", kind, ns, name, uid, type, reason,
                 msg);
}

void ctrl_emit_wl(ctrl *c, const cu_workload *wl, const char *type, const char *reason,
                  const char *msg)
{
    if (wl)
        emit(c, 0, "Workload", wl->meta.ns, wl->meta.name, wl->meta.uid, type, reason, msg);
}

void ctrl_emit_owner(ctrl *c, const rec *x, const char *type, const char *reason, const char *msg)
{
    const char *sl = x ? strchr(x->key, '/') : NULL;
    if (!sl || x->r < R_FIRST_OWNER)
        return;
    char ns[300];
    snprintf(ns, sizeof(ns), "%.*s", (int)(sl - x->key), x->key);
    ctrl_emit_av(c, 1, res_tab[x->r].api_version, res_tab[x->r].kind, ns, sl + 1,
                 x->uid ? x->uid : (x->job ? x->job->uid : NULL), type, reason, msg);
}

/* ---------------- conditions ---------------- */

const cu_workload *ctrl_wl_of(const rec *r)
{
    return r && r->w && r->w->workloads.n ? r->w->workloads.items[0] : NULL;
}

int ctrl_cond_is(const cu_workload *wl, const char *type, const char *status)
{
    const cu_condition *k = wl ? cu_workload_cond(wl, type) : NULL;
    return k && k->status && strcmp(k->status, status) == 0;
}

/* The Workload's conditions as a json array (new; caller frees). */
json_object *ctrl_conds_json(const cu_workload *wl)
{
    json_object *a = json_object_new_array();
    for (size_t i = 0; wl && i < wl->nconds; i++) {
        const cu_condition *k = &wl->conds[i];
        json_object *o = json_object_new_object();
        char ts[40];
        json_object_object_add(o, "type", json_object_new_string(k->type ? k->type : ""));
        json_object_object_add(o, "status",
                               json_object_new_string(k->status ? k->status : "Unknown"));
        json_object_object_add(o, "reason",
                               json_object_new_string(k->reason ? k->reason : "Unknown"));
        json_object_object_add(o, "message", json_object_new_string(k->message ? k->message : ""));
        cu_time_format(k->ltt_ms, ts, sizeof(ts));
        json_object_object_add(o, "lastTransitionTime", json_object_new_string(ts));
        json_object_array_add(a, o);
    }
    return a;
}

/* conds with type set (taken and returned; lastTransitionTime kept when
 * the status does not change). */
json_object *ctrl_cset(json_object *conds, const char *type, const char *status, const char *reason,
                       const char *message, int64_t now)
{
    json_object *n = cu_ctrl_set_condition(conds, type, status, reason, message, now);
    json_object_put(conds);
    return n;
}

json_object *ctrl_status_patch(const char *rv, json_object **st_out)
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

int ctrl_wl_status_write(ctrl *c, rec *w, opkind kind, json_object *p, const char *what)
{
    const cu_workload *wl = ctrl_wl_of(w);
    char op[1100], path[1200];
    snprintf(op, sizeof(op), "status:%s", w->key);
    snprintf(path, sizeof(path), "%s/%s/workloads/%s/status", WLPATH, wl->meta.ns, wl->meta.name);
    return ctrl_send_write(c, kind, R_WL, op, w->key, "PATCH", path, MERGE, p, what);
}
