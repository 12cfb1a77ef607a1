/*
 * cu_ctrlcycle.c - the admission cycle: admissions, evictions, pending
 * reasons, waitForPodsReady, deactivations, queue statuses.
 */
#include "cu_ctrl_int.h"
#include "cu_wlstatus.h"

/* ---------------- the admission cycle ---------------- */

static int log_admission(ctrl *c, const cu_wl_info *info, const rec *w)
{
    char flv[400] = "";
    size_t off = 0;
    for (size_t i = 0; i < info->npsa; i++)
        for (size_t r = 0; r < info->psa[i].n && off < sizeof(flv) - 1; r++)
            off += (size_t)snprintf(flv + off, sizeof(flv) - off, "%s%s=%s", off ? "," : "",
                                    info->psa[i].resources[r], info->psa[i].flavors[r]);
    ctrl_log(c, 0, "admitted Workload %s to ClusterQueue %s (%s)%s%s%s%s", w->key,
             info->cluster_queue, flv, w->owner ? " for " : "",
             w->owner ? res_tab[w->owner_r].kind : "", w->owner ? " " : "",
             w->owner ? w->owner : "");
    return 0;
}

/* Puts w back in the engine: as pending again (undo 0: a write of it is
 * in flight), or with its assumed admission undone (undo 1). */
static void redo_apply(ctrl *c, rec *w, int undo)
{
    if (undo)
        ctrl_undo_admission(c, w);
    else {
        ctrl_eng_remove(c, w);
        ctrl_eng_add(c, w);
    }
}

/* redo_apply, once the cycle's admissions are all read; at once when out
 * of memory (slowly but correctly). */
static void redo_push(ctrl *c, rec *w, int undo)
{
    struct ctrl_redo r = { w, undo };
    if (CU_VEC_PUSH(c->redo, r, 64))
        redo_apply(c, w, undo);
}

/* Sends spec.active=false for Workload w (resourceVersion precondition);
 * the eviction (reason Deactivated) follows once it is seen, as for any
 * deactivated Workload (deactivate_one). Returns 1 when sent. */
static int send_deactivation(ctrl *c, rec *w, const cu_workload *wl)
{
    json_object *sp = json_object_new_object(), *spec = json_object_new_object();
    json_object *md = json_object_new_object();
    json_object_object_add(md, "resourceVersion", json_object_new_string(w->rv));
    json_object_object_add(sp, "metadata", md);
    json_object_object_add(sp, "spec", spec);
    json_object_object_add(spec, "active", json_object_new_boolean(0));
    char op[1100], path[1200], what[1300];
    snprintf(op, sizeof(op), "spec:%s", w->key);
    snprintf(path, sizeof(path), "%s/%s/workloads/%s", WLPATH, wl->meta.ns, wl->meta.name);
    snprintf(what, sizeof(what), "deactivating Workload %s", w->key);
    return ctrl_send_write(c, OP_OTHER, R_WL, op, w->key, "PATCH", path, MERGE, sp, what);
}

static void admit(ctrl *c, int idx)
{
    rec *w = (size_t)idx < c->nby ? c->by_idx[idx] : NULL;
    const cu_wl_info *info = cu_engine_workload_info_one(c->eng, idx);
    const cu_workload *wl = ctrl_wl_of(w);
    if (!w || !wl || !info || !info->cluster_queue || w->assumed || cu_workload_has_quota(wl))
        return;
    char op[1100];
    snprintf(op, sizeof(op), "status:%s", w->key);
    if (ctrl_inflight(c, op)) {
        /* another status write of this Workload is on its way: the engine
         * must not count an admission that is not written; retry later */
        redo_push(c, w, 0);
        return;
    }
    int64_t now = cu_clock_system_now(NULL);
    json_object *k = ctrl_conds_json(wl);
    /* Kueue: a new reservation turns Evicted/Preempted False, "Previously: ..." */
    static const char *const was[] = { "Evicted", "Preempted" };
    for (int i = 0; i < 2; i++) {
        const cu_condition *e = cu_workload_cond(wl, was[i]);
        if (e && e->status && strcmp(e->status, "True") == 0) {
            char m[1100];
            cu_wlcond r;
            cu_wlstatus_readmitted(was[i], e->message, m, sizeof(m), &r);
            k = ctrl_cset(k, r.type, r.status ? "True" : "False", r.reason, r.message, now);
        }
    }
    json_object *acs = w->acs ? cu_json_parse_str(w->acs) : NULL;
    json_object *p = cu_ctrl_admission_patch(info, w->rv, k, acs, now);
    json_object_put(acs);
    json_object_put(k);
    w->adm_checks = info->checks_pending;
    w->assumed = 1;
    c->nassumed++;
    char what[1300], path[1200];
    snprintf(what, sizeof(what), "writing the admission of Workload %s", w->key);
    snprintf(path, sizeof(path), "%s/%s/workloads/%s/status", WLPATH, wl->meta.ns, wl->meta.name);
    if (!ctrl_send_write(c, OP_ADMIT, R_WL, op, w->key, "PATCH", path, MERGE, p, what)) {
        /* another write of this Workload is in flight, or this version was
         * written already: wait for a newer one (not logged nor counted:
         * it is admitted when the write is sent) */
        w->hold = 1;
        redo_push(c, w, 1);
        return;
    }
    c->n.admissions++;
    log_admission(c, info, w);
    double wait = ctrl_secs(now - ctrl_queued_at(wl));
    ctrl_m_wl(c, c->km.quota_reserved_workloads_total,
              c->km.local_queue_quota_reserved_workloads_total, wl, info->cluster_queue, 0, 1);
    ctrl_m_wl(c, c->km.quota_reserved_wait_time_seconds,
              c->km.local_queue_quota_reserved_wait_time_seconds, wl, info->cluster_queue, 1, wait);
    char m[600];
    int64_t since = wl->meta.has_created ? now - wl->meta.created_ms : 0;
    ctrl_emit_wl(c, wl, "Normal", CU_EV_QUOTA_RESERVED,
                 cu_ctrl_event_msg_quota_reserved(m, sizeof(m), info->cluster_queue, since));
    if (info->checks_pending)
        return; /* Admitted once its AdmissionChecks are Ready (sync_checks) */
    ctrl_m_wl(c, c->km.admitted_workloads_total, c->km.local_queue_admitted_workloads_total, wl,
              info->cluster_queue, 0, 1);
    ctrl_m_wl(c, c->km.admission_wait_time_seconds, c->km.local_queue_admission_wait_time_seconds,
              wl, info->cluster_queue, 1, wait);
    /* every cohort up the tree counts it (read from the objects, not the
     * engine's views, which an admission would make it rebuild) */
    rec *cqr = ctrl_omap_get(&c->objs[R_CQ], info->cluster_queue);
    const char *co = cqr && cqr->w && cqr->w->cqs.n ? cqr->w->cqs.items[0]->cohort : NULL;
    for (int depth = 0; co && depth < 64; depth++, co = ctrl_cohort_parent(c, co)) {
        const char *lv[] = { co, ctrl_pclass(wl), ctrl_role(c) };
        cu_metric_inc(c->km.cohort_subtree_admitted_workloads_total, lv, 1);
    }
    ctrl_emit_wl(c, wl, "Normal", CU_EV_ADMITTED,
                 cu_ctrl_event_msg_admitted(m, sizeof(m), info->cluster_queue, 0));
}

static void evict(ctrl *c, int idx)
{
    rec *w = (size_t)idx < c->nby ? c->by_idx[idx] : NULL;
    const cu_wl_info *info = cu_engine_workload_info_one(c->eng, idx);
    if (!w || !info)
        return;
    free(w->ev_reason);
    free(w->ev_msg);
    free(w->pr_reason);
    w->ev_reason = ctrl_sdup(info->evicted_reason ? info->evicted_reason : "Preempted");
    w->ev_msg = ctrl_sdup(info->evicted_message ? info->evicted_message : "Preempted");
    w->pr_reason = ctrl_sdup(info->preempted_reason);
    if (!w->evict_pending) {
        w->evict_pending = 1;
        c->nevict_pending++;
    }
    c->n.preemptions++;
    ctrl_log(c, 0, "evicting Workload %s: %s", w->key, w->ev_msg ? w->ev_msg : "");
    if (ctrl_wl_of(w)) {
        ctrl_m_evicted(c, w, ctrl_wl_of(w), info->cluster_queue, w->ev_reason, "");
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
            const char *lv[] = { pcq, w->pr_reason, ctrl_role(c) };
            cu_metric_inc(c->km.preempted_workloads_total, lv, 1);
        }
    }
    if (w->pr_reason)
        ctrl_emit_wl(c, ctrl_wl_of(w), "Normal", CU_EV_PREEMPTED, w->ev_msg);
    char er[200];
    ctrl_emit_wl(c, ctrl_wl_of(w), "Normal",
                 cu_ctrl_event_reason_evicted(er, sizeof(er), w->ev_reason, NULL), w->ev_msg);
}

/* An eviction resets the Workload's admission checks to Pending (Kueue's
 * prepareForEviction): added to the status patch st when any is not. */
static void evict_reset_checks(const rec *w, json_object *st, int64_t now)
{
    if (!w->acs)
        return;
    json_object *old = cu_json_parse_str(w->acs);
    json_object *nw = cu_ctrl_reset_checks(old, now);
    json_object_put(old);
    if (nw)
        json_object_object_add(st, "admissionChecks", nw);
}

/* Sends the eviction status patch p (taken) of w, evicted for reason with
 * msg by the controller itself; once sent: the log line, the metric and
 * Kueue's Event. */
static void send_eviction(ctrl *c, rec *w, const cu_workload *wl, json_object *p, const char *what,
                          const char *reason, const char *msg)
{
    char er[200];
    if (!ctrl_wl_status_write(c, w, OP_STATUS, p, what))
        return;
    ctrl_log(c, 0, "evicting Workload %s: %s", w->key, msg);
    ctrl_m_evicted(c, w, wl, wl->adm_cq, reason, "");
    ctrl_emit_wl(c, wl, "Normal", cu_ctrl_event_reason_evicted(er, sizeof(er), reason, NULL), msg);
}

static void write_evictions(ctrl *c)
{
    if (!c->nevict_pending)
        return;
    OMAP_FOREACH(&c->objs[R_WL], w)
    {
        const cu_workload *wl = ctrl_wl_of(w);
        if (!w->evict_pending || !wl)
            continue;
        int64_t now = cu_clock_system_now(NULL);
        json_object *st, *p = ctrl_status_patch(w->rv, &st);
        json_object *k = ctrl_conds_json(wl);
        cu_wlcond ev[2];
        size_t nev = cu_wlstatus_evicted(w->ev_reason, w->pr_reason, w->ev_msg, ev);
        for (size_t i = 0; i < nev; i++)
            k = ctrl_cset(k, ev[i].type, ev[i].status ? "True" : "False", ev[i].reason,
                          ev[i].message, now);
        json_object_object_add(st, "conditions", k);
        evict_reset_checks(w, st, now);
        char what[1300];
        snprintf(what, sizeof(what), "evicting Workload %s", w->key);
        ctrl_wl_status_write(c, w, OP_STATUS, p, what);
    }
}

/* Whether the pods of Workload w's owner (no Job) are ready now, as its
 * integration's pods_ready hook counts them; 0 without one. */
static int owner_pods_ready(ctrl *c, rec *w, int32_t pods)
{
    const ctrl_integ *in = w->owner ? ctrl_integ_of(w->owner_r) : NULL;
    int64_t ready = 0, succeeded = 0;
    if (!in || !in->pods_ready || !in->pods_ready(c, w, &ready, &succeeded))
        return 0;
    return cu_pr_job_pods_ready(pods, ready, succeeded);
}

/* The record of a workload pending in the engine (its removed copies show
 * as finished), or NULL. */
rec *ctrl_pending_rec(ctrl *c, const cu_wl_info *info)
{
    if (!info || info->admitted || info->finished || info->evicting)
        return NULL;
    char key[600];
    snprintf(key, sizeof(key), "%s/%s", info->ns, info->name);
    rec *r = ctrl_omap_get(&c->objs[R_WL], key);
    return r && r->idx >= 0 ? r : NULL;
}

/* status.resourceRequests as Kueue's PropagateResourceRequests writes it
 * with a pending reason: each pod set's total effective requests (after
 * excludeResourcePrefixes and transformations), so `kubectl get workload`
 * shows what quota it waits for. */
static json_object *resource_requests(const cu_workload *wl)
{
    json_object *a = json_object_new_array();
    for (size_t i = 0; i < wl->npodsets; i++) {
        const cu_podset *ps = &wl->podsets[i];
        json_object *o = json_object_new_object(), *rs = json_object_new_object();
        json_object_object_add(o, "name", json_object_new_string(ps->name ? ps->name : "main"));
        for (size_t r = 0; r < ps->requests.n; r++) {
            char q[64];
            int64_t t;
            if (cu_qty_mul(ps->requests.items[r].milli, ps->count, &t) != CU_OK)
                t = CU_QTY_INF;
            json_object_object_add(rs, ps->requests.items[r].name,
                                   json_object_new_string(cu_qty_format_res(
                                       ps->requests.items[r].name, t, q, sizeof q)));
        }
        json_object_object_add(o, "resources", rs);
        json_object_array_add(a, o);
    }
    return a;
}

/* Writes w's pending reason when it changed; 1 when a write was sent. */
static int write_pending(ctrl *c, const cu_wl_info *info, rec *w)
{
    const cu_workload *wl = ctrl_wl_of(w);
    if (!wl || w->assumed || !info->message || cu_workload_has_quota(wl))
        return 0;
    /* as Kueue: the reason of a workload a cycle tried and set aside, or
     * of one its queue cannot take (no LocalQueue, an inactive or invalid
     * ClusterQueue, no priority class); one merely waiting its turn in an
     * active queue ("Pending", not set aside) gets none: under load those
     * are thousands, and each write would take an admission's token */
    const char *reason = info->reason ? info->reason : "Pending";
    if (!info->inadmissible && info->position >= 0 && strcmp(reason, "Pending") == 0)
        return 0;
    const cu_condition *qr = cu_workload_cond(wl, "QuotaReserved");
    if (qr && qr->status && qr->reason && qr->message && strcmp(qr->status, "False") == 0 &&
        strcmp(qr->reason, reason) == 0 && strcmp(qr->message, info->message) == 0)
        return 0;
    /* same reason, new numbers: at most one rewrite per 10 s per Workload
     * (messages such as "N more needed" change with every admission) */
    int64_t now = cu_clock_system_now(NULL);
    if (qr && qr->status && qr->reason && strcmp(qr->status, "False") == 0 &&
        strcmp(qr->reason, reason) == 0 && now - w->pend_at < 10000) {
        if (!c->pend_wake || w->pend_at + 10000 < c->pend_wake)
            c->pend_wake = w->pend_at + 10000;
        return 0;
    }
    json_object *st, *p = ctrl_status_patch(w->rv, &st);
    json_object_object_add(st, "conditions",
                           ctrl_cset(ctrl_conds_json(wl), "QuotaReserved", "False", reason,
                                     info->message, cu_clock_system_now(NULL)));
    json_object_object_add(st, "resourceRequests", resource_requests(wl));
    char what[1300];
    snprintf(what, sizeof(what), "writing the pending reason of Workload %s", w->key);
    if (!ctrl_wl_status_write(c, w, OP_STATUS, p, what))
        return 0;
    w->pend_at = now;
    ctrl_log(c, 1, "Workload %s pending: %s", w->key, info->message);
    ctrl_emit_wl(c, wl, "Warning", CU_EV_PENDING, info->message);
    return 1;
}

/* Pending reasons take only the API budget admissions leave
 * (cu_kclient_spare): while writes wait for the rate limiter none is
 * sent, so an admission never queues behind one (under Kueue's load
 * there are thousands of pending workloads and one admission per token).
 * A pass over the workloads stops when the budget runs out and the next
 * one resumes there; at most one pass a second (a pass reads the views,
 * which a change to the engine makes it rebuild). */
static void pending_pump(ctrl *c)
{
    int64_t now = cu_clock_mono_ns() / 1000000;
    if (!c->pend_scan || !c->eng || now - c->pend_pass_at < 1000)
        return;
    int spare = cu_kclient_spare(c->kc);
    if (spare <= 0)
        return;
    if (spare > 16)
        spare = 16; /* and at most 16 a second: they cost the API server too */
    c->pend_pass_at = now;
    size_t nw = cu_engine_nworkloads(c->eng), i = c->pend_cursor < nw ? c->pend_cursor : 0, seen;
    for (seen = 0; seen < nw && spare > 0; seen++, i = i + 1 < nw ? i + 1 : 0) {
        const cu_wl_info *info = cu_engine_workload_info(c->eng, i);
        rec *w = ctrl_pending_rec(c, info);
        if (w && write_pending(c, info, w))
            spare--;
    }
    c->pend_cursor = i;
    if (seen == nw)
        c->pend_scan = 0;
}

/* waitForPodsReady: PodsReady conditions, timeouts (eviction with
 * backoff, or deactivation past the limit), and the count of admitted
 * workloads still waiting for their pods (blockAdmission). */
static void pods_ready(ctrl *c)
{
    const cu_pr_config *cfg = &c->cfg.pr;
    int64_t now = cu_clock_system_now(NULL);
    if (!cfg->enable || (!c->pr_dirty && (!c->pr_wake || now < c->pr_wake)))
        return;
    c->pr_dirty = 0;
    c->pr_wake = 0;
    c->pr_not_ready = 0;
    OMAP_FOREACH(&c->objs[R_WL], w)
    {
        const cu_workload *wl = ctrl_wl_of(w);
        if (!wl || !cu_workload_has_quota(wl) || cu_workload_finished(wl))
            continue;
        rec *jr = w->owner ? ctrl_omap_get(&c->objs[w->owner_r], w->owner) : NULL;
        const cjob *j = jr ? jr->job : NULL;
        const cu_condition *adm = cu_workload_cond(wl, "Admitted");
        const cu_condition *prc = cu_workload_cond(wl, "PodsReady");
        int32_t pods = 0;
        for (size_t i = 0; i < wl->npsa; i++)
            pods += wl->psa[i].count;
        cu_pr_wl pw = {
            .ns = wl->meta.ns,
            .name = wl->meta.name,
            .admitted = adm && adm->status && strcmp(adm->status, "True") == 0,
            .admitted_ltt_ms = adm ? adm->ltt_ms : 0,
            .evicted = ctrl_cond_is(wl, "Evicted", "True") || w->evict_pending,
            .inactive = !wl->active,
            .has_ready_cond = prc != NULL,
            .ready = prc && prc->status && strcmp(prc->status, "True") == 0,
            .ready_reason = prc ? prc->reason : NULL,
            .ready_ltt_ms = prc ? prc->ltt_ms : 0,
            .job_pods_ready =
                j ? !j->suspended && cu_pr_job_pods_ready(pods, j->ready, j->succeeded)
                  : owner_pods_ready(c, w, pods),
            .requeue_count = w->rq_count,
        };
        if (cu_pr_wl_not_ready(&pw))
            c->pr_not_ready++;
        cu_pr_action a = cu_pr_decide(cfg, &pw, now, cu_hash_str(w->key) ^ (uint64_t)w->rq_count);
        if (a.recheck_at_ms > 0 && (!c->pr_wake || a.recheck_at_ms < c->pr_wake))
            c->pr_wake = a.recheck_at_ms;
        if (a.kind == CU_PR_NOTHING)
            continue;
        json_object *st, *p = ctrl_status_patch(w->rv, &st);
        json_object *k = ctrl_conds_json(wl);
        char what[1300];
        if (a.kind == CU_PR_SET_CONDITION) {
            k = ctrl_cset(k, "PodsReady", a.ready ? "True" : "False", a.reason, a.message, now);
            if (a.ready && !pw.ready) {
                ctrl_m_wl(c, c->km.ready_wait_time_seconds,
                          c->km.local_queue_ready_wait_time_seconds, wl, wl->adm_cq, 1,
                          ctrl_secs(now - ctrl_queued_at(wl)));
                ctrl_m_wl(c, c->km.admitted_until_ready_wait_time_seconds,
                          c->km.local_queue_admitted_until_ready_wait_time_seconds, wl, wl->adm_cq,
                          1, ctrl_secs(now - pw.admitted_ltt_ms));
            }
            snprintf(what, sizeof(what), "writing PodsReady of Workload %s", w->key);
        } else {
            k = ctrl_cset(k, "Evicted", "True", a.evict_reason, a.evict_message, now);
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
                w->deact_msg = ctrl_sdup(a.evict_message);
                if (send_deactivation(c, w, wl))
                    ctrl_log(c, 0, "deactivating Workload %s: %s", w->key, a.evict_message);
                continue;
            }
            json_object_object_add(st, "requeueState", rq);
            evict_reset_checks(w, st, now);
            snprintf(what, sizeof(what), "evicting Workload %s (%s)", w->key, a.evict_reason);
            ctrl_log(c, 0, "evicting Workload %s: %s", w->key, a.evict_message);
            ctrl_m_evicted(c, w, wl, wl->adm_cq, a.evict_reason,
                           a.underlying_cause ? a.underlying_cause : "");
            {
                char er[200];
                ctrl_emit_wl(c, wl, "Normal",
                             cu_ctrl_event_reason_evicted(er, sizeof(er), a.evict_reason,
                                                          a.underlying_cause),
                             a.evict_message);
            }
            const char *lv[] = { wl->adm_cq ? wl->adm_cq : "", a.evict_reason,
                                 a.underlying_cause ? a.underlying_cause : "", ctrl_role(c) };
            cu_metric_observe(c->km.pods_ready_to_evicted_time_seconds, lv,
                              ctrl_secs(now - pw.admitted_ltt_ms));
        }
        json_object_object_add(st, "conditions", k);
        ctrl_wl_status_write(c, w, OP_STATUS, p, what);
    }
}

/* The record of wl's LocalQueue (spec.queueName in its namespace), or NULL
 * when it names none or the LocalQueue is not known. */
static rec *lq_rec_of(ctrl *c, const cu_workload *wl)
{
    if (!wl->queue_name)
        return NULL;
    char lk[700];
    snprintf(lk, sizeof(lk), "%s/%s", wl->meta.ns ? wl->meta.ns : "default", wl->queue_name);
    return ctrl_omap_get(&c->objs[R_LQ], lk);
}

/* The stop policy of the queues of a Workload that holds quota, as
 * Kueue's Workload reconciler applies it: HoldAndDrain on its LocalQueue
 * (looked at first) or on its ClusterQueue evicts it (reason
 * LocalQueueStopped or ClusterQueueStopped). Kueue evicts only an Admitted
 * one, but first makes every one that holds quota Admitted when its
 * admission checks allow (sync_checks). 1 when it evicts. */
static int stopped_queue(ctrl *c, rec *w, const cu_workload *wl, int64_t now)
{
    if (!cu_workload_has_quota(wl))
        return 0;
    const char *reason = NULL, *msg = NULL;
    rec *lr = lq_rec_of(c, wl);
    rec *cr = wl->adm_cq ? ctrl_omap_get(&c->objs[R_CQ], wl->adm_cq) : NULL;
    if (lr && lr->w && lr->w->lqs.n && lr->w->lqs.items[0]->stop_policy == CU_STOP_HOLD_AND_DRAIN) {
        reason = "LocalQueueStopped";
        msg = "The LocalQueue is stopped";
    } else if (cr && cr->w && cr->w->cqs.n &&
               cr->w->cqs.items[0]->stop_policy == CU_STOP_HOLD_AND_DRAIN) {
        reason = "ClusterQueueStopped";
        msg = "The ClusterQueue is stopped";
    }
    if (!reason)
        return 0;
    json_object *st, *p = ctrl_status_patch(w->rv, &st);
    json_object_object_add(st, "conditions",
                           ctrl_cset(ctrl_conds_json(wl), "Evicted", "True", reason, msg, now));
    evict_reset_checks(w, st, now);
    char what[1300];
    snprintf(what, sizeof(what), "evicting Workload %s of a stopped queue", w->key);
    send_eviction(c, w, wl, p, what, reason, msg);
    return 1;
}

/* The AdmissionChecks that apply to wl now (api's cu_cq_checks_for): those
 * of its ClusterQueue (the admission's, else its LocalQueue's), by the
 * flavors it holds. Up to max names, sorted, into out; returns how many,
 * or -1 when its ClusterQueue is not known (Kueue then leaves the list). */
static int wl_checks_now(ctrl *c, const cu_workload *wl, const char **out, size_t max)
{
    int holds = cu_workload_has_quota(wl);
    const char *cqn = holds ? wl->adm_cq : NULL;
    if (!holds) {
        rec *lr = lq_rec_of(c, wl);
        if (lr && lr->w && lr->w->lqs.n)
            cqn = lr->w->lqs.items[0]->cluster_queue;
    }
    rec *cr = cqn ? ctrl_omap_get(&c->objs[R_CQ], cqn) : NULL;
    if (!cr || !cr->w || !cr->w->cqs.n)
        return -1;
    const char *fl[64];
    size_t nf = 0;
    for (size_t p = 0; holds && p < wl->npsa; p++)
        for (size_t i = 0; i < wl->psa[p].flavors.n && nf < 64; i++)
            fl[nf++] = wl->psa[p].flavors.items[i].value;
    size_t n = cu_cq_checks_for(cr->w->cqs.items[0], holds, fl, nf, out, max);
    return (int)(n < max ? n : max);
}

/* Kueue's reaction to a check Rejected on a Workload holding quota: the
 * DeactivationTarget condition (reason AdmissionCheck), then spec.active
 * false (sync_checks), then the eviction of a deactivated Workload
 * (deactivate_one). 1 when it wrote. */
static int checks_rejected(ctrl *c, rec *w, const cu_workload *wl, int64_t now)
{
    char names[1024] = "";
    size_t off = 0;
    const cu_acstate *first = NULL;
    for (size_t i = 0; i < wl->nchecks; i++) {
        if (wl->checks[i].state != CU_CHECK_REJECTED)
            continue;
        if (!first)
            first = &wl->checks[i];
        if (off < sizeof(names) - 1)
            off += (size_t)snprintf(names + off, sizeof(names) - off, "%s%s", off ? "," : "",
                                    wl->checks[i].name ? wl->checks[i].name : "");
    }
    if (!first)
        return 0;
    char msg[1200];
    snprintf(msg, sizeof(msg), "Admission check(s): %s, were rejected", names);
    json_object *st, *p = ctrl_status_patch(w->rv, &st);
    json_object_object_add(
        st, "conditions",
        ctrl_cset(ctrl_conds_json(wl), "DeactivationTarget", "True", "AdmissionCheck", msg, now));
    char what[1300];
    snprintf(what, sizeof(what), "marking Workload %s for deactivation", w->key);
    if (ctrl_wl_status_write(c, w, OP_STATUS, p, what)) {
        ctrl_log(c, 0, "deactivating Workload %s: %s", w->key, msg);
        char ev[1500];
        snprintf(ev, sizeof(ev),
                 "Deactivating workload because AdmissionCheck for %s was Rejected: %s",
                 first->name ? first->name : "", first->message ? first->message : "");
        ctrl_emit_wl(c, wl, "Warning", "AdmissionCheckRejected", ev);
    }
    return 1;
}

/* Kueue's eviction of a Workload holding quota with a check in Retry:
 * Evicted (reason AdmissionCheck), its checks back to Pending, and, when a
 * Retry check asks for requeueAfterSeconds, requeueState.requeueAt (the
 * latest lastTransitionTime + requeueAfterSeconds still to come) keeps it
 * out of the queue until then. 1 when it wrote. */
static int checks_retry(ctrl *c, rec *w, const cu_workload *wl, int64_t now)
{
    int64_t requeue_at = 0;
    int any = 0;
    for (size_t i = 0; i < wl->nchecks; i++) {
        const cu_acstate *k = &wl->checks[i];
        if (k->state != CU_CHECK_RETRY)
            continue;
        any = 1;
        if (k->has_requeue_after && k->ltt_ms) {
            int64_t at = k->ltt_ms + (int64_t)k->requeue_after_s * 1000;
            if (at > requeue_at)
                requeue_at = at;
        }
    }
    if (!any)
        return 0;
    static const char reason[] = "AdmissionCheck", msg[] = "At least one admission check is false";
    json_object *st, *p = ctrl_status_patch(w->rv, &st);
    json_object_object_add(st, "conditions",
                           ctrl_cset(ctrl_conds_json(wl), "Evicted", "True", reason, msg, now));
    evict_reset_checks(w, st, now);
    if (requeue_at > now) {
        char ts[40];
        json_object *rq = json_object_new_object();
        cu_time_format(requeue_at, ts, sizeof(ts));
        json_object_object_add(rq, "requeueAt", json_object_new_string(ts));
        json_object_object_add(st, "requeueState", rq);
    }
    char what[1300];
    snprintf(what, sizeof(what), "evicting Workload %s (an admission check asks to retry)", w->key);
    send_eviction(c, w, wl, p, what, reason, msg);
    return 1;
}

/* Kueue's Workload reconciler on the admission checks of an active
 * Workload not evicted: spec.active=false once DeactivationTarget is set;
 * status.admissionChecks kept equal to the checks that apply
 * (cu_ctrl_sync_checks: Pending entries added, others dropped); for one
 * holding quota, a Rejected check deactivates it, a Retry one evicts it,
 * and when every check is Ready (or none applies) it is Admitted (also one
 * that another writer, a restore, a test, left with QuotaReserved alone). */
static void sync_checks(ctrl *c, rec *w, const cu_workload *wl, int64_t now)
{
    if (w->assumed)
        return;
    char what[1300];
    if (ctrl_cond_is(wl, "DeactivationTarget", "True")) {
        send_deactivation(c, w, wl);
        return;
    }
    const char *names[64];
    int n = wl_checks_now(c, wl, names, 64);
    if (n >= 0) {
        json_object *old = w->acs ? cu_json_parse_str(w->acs) : NULL;
        int changed = 0;
        json_object *nw = cu_ctrl_sync_checks(old, names, (size_t)n, now, &changed);
        json_object_put(old);
        if (changed) {
            json_object *st, *p = ctrl_status_patch(w->rv, &st);
            json_object_object_add(st, "admissionChecks", nw);
            snprintf(what, sizeof(what), "writing the admission checks of Workload %s", w->key);
            ctrl_wl_status_write(c, w, OP_STATUS, p, what);
            return;
        }
        json_object_put(nw);
    }
    if (!cu_workload_has_quota(wl))
        return;
    if (checks_rejected(c, w, wl, now) || checks_retry(c, w, wl, now))
        return;
    if (ctrl_cond_is(wl, "Admitted", "True") ||
        !cu_workload_checks_ready(wl, names, n > 0 ? (size_t)n : 0))
        return;
    json_object *st, *p = ctrl_status_patch(w->rv, &st);
    json_object_object_add(st, "conditions",
                           ctrl_cset(ctrl_conds_json(wl), "Admitted", "True", "Admitted",
                                     "The workload is admitted", now));
    snprintf(what, sizeof(what), "writing Admitted of Workload %s", w->key);
    if (!ctrl_wl_status_write(c, w, OP_STATUS, p, what) || !wl->nchecks)
        return;
    /* admitted now that its checks are Ready: what admit() leaves out */
    const cu_condition *qr = cu_workload_cond(wl, "QuotaReserved");
    int64_t since = qr && qr->ltt_ms ? now - qr->ltt_ms : 0;
    ctrl_log(c, 0, "Workload %s admitted: its admission checks are Ready", w->key);
    ctrl_m_wl(c, c->km.admitted_workloads_total, c->km.local_queue_admitted_workloads_total, wl,
              wl->adm_cq, 0, 1);
    ctrl_m_wl(c, c->km.admission_wait_time_seconds, c->km.local_queue_admission_wait_time_seconds,
              wl, wl->adm_cq, 1, ctrl_secs(now - ctrl_queued_at(wl)));
    ctrl_m_wl(c, c->km.admission_checks_wait_time_seconds,
              c->km.local_queue_admission_checks_wait_time_seconds, wl, wl->adm_cq, 1,
              ctrl_secs(since));
    char m[600];
    ctrl_emit_wl(c, wl, "Normal", CU_EV_ADMITTED,
                 cu_ctrl_event_msg_admitted(m, sizeof(m), wl->adm_cq ? wl->adm_cq : "", since));
}

/* A Workload with spec.active=false is marked Evicted with reason
 * Deactivated (when it holds quota, its Job then stops and the quota is
 * released as for any eviction). Kueue's messages: "The workload is
 * deactivated", or the requeuing-limit one when waitForPodsReady
 * deactivated it. An active one that holds quota meets its queues' stop
 * policy (stopped_queue), or its admission checks are synced and it is
 * made Admitted (sync_checks). */
static void deactivate_one(ctrl *c, rec *w, int64_t now)
{
    const cu_workload *wl = ctrl_wl_of(w);
    if (wl && cu_workload_has_quota(wl) && !cu_workload_finished(wl) &&
        ctrl_cond_is(wl, "Evicted", "True") && !ctrl_owner_alive(c, w)) {
        /* nothing to stop (a Workload created directly, or its owner is
         * gone): the eviction completes at once */
        ctrl_release_evicted(c, w);
        return;
    }
    if (!wl || cu_workload_finished(wl) || ctrl_cond_is(wl, "Evicted", "True"))
        return;
    if (wl->active) {
        if (!stopped_queue(c, w, wl, now))
            sync_checks(c, w, wl, now);
        return;
    }
    /* Kueue marks every deactivated Workload Evicted, also one that never
     * held quota (then without a metric or an event: nothing was evicted
     * from a ClusterQueue) */
    int had_quota = cu_workload_has_quota(wl);
    const char *msg = w->deact_msg ? w->deact_msg : "The workload is deactivated";
    /* deactivated for a cause written in DeactivationTarget (a Rejected
     * admission check): Kueue's reason DeactivatedDueTo<cause>, message
     * "The workload is deactivated due to <its message>", and the
     * condition removed */
    const cu_condition *dt = cu_workload_cond(wl, "DeactivationTarget");
    char dreason[200] = "Deactivated", dmsg[1200];
    const char *cause = w->deact_msg ? "RequeuingLimitExceeded" : "";
    if (dt && dt->status && strcmp(dt->status, "True") == 0 && dt->reason) {
        snprintf(dreason, sizeof(dreason), "DeactivatedDueTo%s", dt->reason);
        snprintf(dmsg, sizeof(dmsg), "The workload is deactivated due to %s",
                 dt->message ? dt->message : "");
        msg = dmsg;
        cause = dt->reason;
    }
    json_object *st, *p = ctrl_status_patch(w->rv, &st);
    json_object *k = ctrl_cset(ctrl_conds_json(wl), "Evicted", "True", dreason, msg, now);
    if (dt) {
        json_object *kept = json_object_new_array();
        for (size_t i = 0, nk = cu_jarr_len(k); i < nk; i++) {
            json_object *e = json_object_array_get_idx(k, i);
            const char *t = cu_jstr(e, "type");
            if (!t || strcmp(t, "DeactivationTarget") != 0)
                json_object_array_add(kept, json_object_get(e));
        }
        json_object_put(k);
        k = kept;
    }
    json_object_object_add(st, "conditions", k);
    evict_reset_checks(w, st, now);
    if (w->deact_msg)
        json_object_object_add(st, "requeueState", NULL);
    char what[1300];
    snprintf(what, sizeof(what), "evicting deactivated Workload %s", w->key);
    if (ctrl_wl_status_write(c, w, OP_STATUS, p, what) && had_quota) {
        ctrl_log(c, 0, "evicting Workload %s: %s", w->key, msg);
        ctrl_m_evicted(c, w, wl, wl->adm_cq, "Deactivated", cause);
        char er[300];
        ctrl_emit_wl(c, wl, "Normal",
                     dt ? cu_ctrl_event_reason_evicted(er, sizeof(er), "Deactivated", cause)
                        : "EvictedDueToDeactivated",
                     msg);
    }
}

/* Looks at the Workloads marked (ctrl_mark_wl: they changed, or a write
 * of theirs ended), or at all of them after deact_dirty (a periodic
 * resync, a retry): a scan of every Workload after each change was most
 * of the controller's CPU under load. */
static void deactivations(ctrl *c)
{
    int64_t now = cu_clock_system_now(NULL);
    int all = c->deact_dirty;
    c->deact_dirty = 0;
    OMAP_FOREACH(&c->dirty_wls, d)
    {
        ctrl_omap_del(&c->dirty_wls, d->key);
        rec *w = all ? NULL : ctrl_omap_get(&c->objs[R_WL], d->key);
        if (w)
            deactivate_one(c, w, now);
        free(d->key);
        free(d);
    }
    if (all)
        OMAP_FOREACH(&c->objs[R_WL], w) deactivate_one(c, w, now);
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
    json_object_object_foreach (o, k, v) {
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
    snprintf(q, sizeof(q), "?fieldManager=%s", QSTATUS_MANAGER);
    if (strncmp(key, "cq/", 3) == 0) {
        kind = "ClusterQueue";
        snprintf(qname, sizeof(qname), "%s", name);
        snprintf(path, sizeof(path), "/apis/kueue.x-k8s.io/v1beta2/clusterqueues/%s/status%s", name,
                 q);
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
    /* a merge patch: the server does far less work for it than for an
     * apply (no managed-fields merge against the CRD's schema), and the
     * status is ours alone */
    if (!b || !ctrl_send_write(c, OP_QSTATUS, -1, op, key, "PATCH", path, MERGE, b, what))
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
    int64_t now = cu_clock_system_now(NULL);
    /* at most once a second (a status is written at most every 2 s): the
     * views it reads are rebuilt after every change to the engine */
    if (c->need_status && (now - c->qstatus_at >= 1000 || now < c->qstatus_at)) {
        c->need_status = 0;
        c->qstatus_at = now;
        char key[700];
        for (size_t i = 0, n = cu_engine_ncqs(c->eng); i < n; i++) {
            const cu_cq_info *ci = cu_engine_cq_info(c->eng, i);
            rec *x = ctrl_omap_get(&c->objs[R_CQ], ci->name);
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
            rec *x = ctrl_omap_get(&c->objs[R_LQ], key);
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
            if (!hi->obj || !ctrl_omap_get(&c->objs[R_COHORT], hi->name))
                continue; /* implicit cohorts have no object */
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
    for (int r = R_FIRST_OWNER; r < NRES; r++) {
        const ctrl_integ *in = ctrl_integ_of(r);
        if (!in || !in->awaits_workload)
            continue;
        OMAP_FOREACH(&c->objs[r], x)
        {
            if (in->awaits_workload(c, x))
                return 1;
        }
    }
    c->startup_done = 1;
    return 0;
}

static void cycle(ctrl *c)
{
    int64_t now = cu_clock_system_now(NULL);
    if (c->next_wake && now >= c->next_wake) {
        c->next_wake = 0;
        OMAP_FOREACH(&c->objs[R_WL], w)
        {
            if (w->idx < 0)
                ctrl_eng_add(c, w); /* re-arms next_wake for those still waiting */
        }
    }
    if ((c->need_rebuild || !c->eng || (c->tombs > 1024 && c->tombs > c->objs[R_WL].n)) &&
        c->nassumed == 0)
        ctrl_rebuild(c);
    if (!c->eng)
        return;
    ctrl_finalizers(c);

    if (c->retry_wake && now >= c->retry_wake) {
        /* writes refused with 409: look at those objects again */
        c->retry_wake = 0;
        for (int r = R_WL; r < NRES; r++) {
            OMAP_FOREACH(&c->objs[r], x)
            {
                if (!x->retry_at)
                    continue;
                if (x->retry_at <= now) {
                    if (x->hold) {
                        x->hold = 0; /* its backoff is over: may be admitted again */
                        ctrl_eng_add(c, x);
                    }
                    if (r == R_WL)
                        ctrl_mark_owner(c, x->owner_r, x->owner);
                    else
                        ctrl_mark_owner(c, r, x->key);
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
            ctrl_log(c, 1, "watch of %s expired (410 Gone): listed again", res_tab[r].path);
        }
    }
    if (c->pend_wake && now >= c->pend_wake) {
        c->pend_wake = 0;
        c->need_views = 1;
    }
    if (now >= c->resync_at) {
        /* a periodic full pass: no lost trigger leaves a Job behind */
        c->resync_at = now + 30000;
        for (int r = R_FIRST_OWNER; r < NRES; r++)
            OMAP_FOREACH(&c->objs[r], jr) ctrl_mark_owner(c, r, jr->key);
        OMAP_FOREACH(&c->objs[R_WL], wr)
        {
            if (wr->hold) {
                wr->hold = 0;
                ctrl_eng_add(c, wr);
            }
        }
        c->need_views = 1;
        c->pr_dirty = 1;
        c->deact_dirty = 1;
    }
    /* the integrations first: they create Workloads and stop evicted jobs */
    for (int r = R_FIRST_OWNER; r < NRES; r++) {
        const ctrl_integ *in = ctrl_integ_of(r);
        OMAP_FOREACH(&c->dirty[r], d)
        {
            ctrl_omap_del(&c->dirty[r], d->key);
            if (in && in->reconcile && c->cfg.on[r])
                in->reconcile(c, d->key);
            free(d->key);
            free(d);
        }
    }
    ctrl_tas_ungate(c);

    pods_ready(c);
    deactivations(c);
    cu_cycle_stats st;
    int ran = 0, progress = 0;
    if (startup_wait(c, now)) {
        queue_status(c);
        return;
    }
    /* inadmissible workloads back in their heaps, a batch after quota was freed */
    if (cu_engine_requeue_due(c->eng, now) > 0)
        c->eng_dirty = 1;
    if (!cu_pr_may_admit(&c->cfg.pr, c->pr_not_ready))
        ran =
            1000; /* blockAdmission: no admission until every admitted workload's pods are ready */
    else if (!c->eng_dirty && now - c->eng_ran_at < 1000)
        ran = 1000; /* nothing changed: no cycle (time-based state is looked at once a second) */
    else
        do {
            c->eng_dirty = 0;
            c->eng_ran_at = now;
            memset(&st, 0, sizeof(st));
            int64_t t0 = cu_clock_mono_ns();
            if (cu_engine_cycle(c->eng, &st) != CU_OK)
                break;
            double dt = (double)(cu_clock_mono_ns() - t0) / 1e9;
            const char *res[] = { st.admitted > 0 ? "success" : "inadmissible" };
            const char *rr[] = { res[0], ctrl_role(c) };
            cu_metric_observe(c->km.cueue_cycle_seconds, res, dt);
            cu_metric_inc(c->km.cueue_cycles_total, res, 1);
            if (st.heads > 0) {
                const char *ok[] = { "success", ctrl_role(c) },
                           *no[] = { "inadmissible", ctrl_role(c) };
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
    /* every admission first, then the engine changes they call for */
    c->adm.n = 0;
    while ((n = cu_engine_take_admitted(c->eng, idx, 64)) > 0)
        for (size_t i = 0; i < n; i++)
            if (CU_VEC_PUSH(c->adm, idx[i], 256))
                admit(c, idx[i]); /* no memory: admit it now */
    for (size_t i = 0; i < c->adm.n; i++)
        admit(c, c->adm.items[i]);
    for (size_t i = 0; i < c->redo.n; i++)
        redo_apply(c, c->redo.items[i].w, c->redo.items[i].undo);
    c->redo.n = 0;
    write_evictions(c);
    if (progress || c->need_views) {
        c->need_views = 0;
        c->need_status = 1;
        c->pend_scan = 1;
    }
    pending_pump(c);
    queue_status(c);
}

void ctrl_on_tick(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)loop;
    (void)revents;
    ctrl *c = t->data;
    if (c->nsynced < c->ninf || c->stopping || !ctrl_leading(c))
        return;
    if (!c->started) {
        c->started = 1;
        c->need_rebuild = 1;
        ctrl_log(c, 0,
                 c->elect ? "starting admission cycles as the leader"
                          : "all informers synced; starting admission cycles");
    }
    cycle(c);
}
