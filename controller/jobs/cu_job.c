/*
 * cu_job.c - the batch/v1 Job integration: a Job's record, its
 * queue, its Workload (created, stopped, finished) and its start.
 */
#include "cu_ctrl_int.h"

cjob *ctrl_decode_job(ctrl *c, json_object *job)
{
    const char *ns = cu_jpath_str(job, "metadata.namespace"),
               *name = cu_jpath_str(job, "metadata.name");
    const char *uid = cu_jpath_str(job, "metadata.uid");
    if (!ns || !name || !uid)
        return NULL;
    cjob *j = calloc(1, sizeof(*j));
    if (!j)
        return NULL;
    j->ns = strdup(ns);
    j->name = strdup(name);
    j->uid = strdup(uid);
    j->label_queue = ctrl_sdup(cu_jstr(cu_jpath(job, "metadata.labels"), CU_LABEL_QUEUE_NAME));
    if (j->label_queue && !*j->label_queue) {
        free(j->label_queue);
        j->label_queue = NULL;
    }
    j->deleting = cu_jpath(job, "metadata.deletionTimestamp") != NULL;
    {
        const char *ct = cu_jpath_str(job, "metadata.creationTimestamp");
        int64_t ms = 0;
        j->created_ms = ct && cu_time_parse(ct, &ms) == 0 ? ms : 0;
    }
    json_object *spec = cu_jget(job, "spec"), *st = cu_jget(job, "status");
    json_object *susp = cu_jget(spec, "suspend");
    j->suspended = susp && json_object_get_boolean(susp);
    j->has_par = cu_jget(spec, "parallelism") != NULL;
    j->par = (int32_t)cu_jas_int64(cu_jget(spec, "parallelism"), 1);
    j->has_comp = cu_jget(spec, "completions") != NULL;
    j->comp = (int32_t)cu_jas_int64(cu_jget(spec, "completions"), 0);
    /* pods being deleted count: they hold their node's resources until
     * they are gone (status.terminating, kube-controller-manager 1.29+) */
    j->active =
        cu_jas_int64(cu_jget(st, "active"), 0) + cu_jas_int64(cu_jget(st, "terminating"), 0);
    j->ready = cu_jas_int64(cu_jget(st, "ready"), 0);
    j->succeeded = cu_jas_int64(cu_jget(st, "succeeded"), 0);
    j->finished = cu_ctrl_job_finished(job, &j->failed);
    if (j->finished && j->failed) {
        json_object *conds = cu_jget(st, "conditions");
        size_t n =
            json_object_is_type(conds, json_type_array) ? json_object_array_length(conds) : 0;
        for (size_t i = 0; i < n; i++) {
            json_object *k = json_object_array_get_idx(conds, i);
            const char *t = cu_jstr(k, "type");
            if (t && strcmp(t, "Failed") == 0)
                j->fail_msg = ctrl_sdup(cu_jstr(k, "message"));
        }
    }
    json_object *sel = cu_jpath(spec, "template.spec.nodeSelector");
    j->cur_sel = json_object_is_type(sel, json_type_object) ? ctrl_jtext(sel) : NULL;
    json_object *tol = cu_jpath(spec, "template.spec.tolerations");
    j->cur_tol = json_object_is_type(tol, json_type_array) ? ctrl_jtext(tol) : NULL;
    j->cur_meta = ctrl_meta_text(cu_jpath(spec, "template.metadata"));
    j->has_start = cu_jget(st, "startTime") != NULL;
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
        maybe = c->cfg.manage_without_queue || ctrl_omap_get(&c->objs[R_LQ], lk) != NULL;
    }
    if (maybe && !j->finished && !j->deleting) {
        json_object *src = job, *copy = NULL;
        if (!j->label_queue) {
            /* build it as if labelled; the queue is decided at creation */
            if (json_object_deep_copy(job, &copy, NULL) == 0) {
                json_object *md = cu_jget(copy, "metadata"), *lb = cu_jget(md, "labels");
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
            j->create_body = ctrl_jtext(body);
            json_object_put(body);
        } else {
            /* reported once */
            j->bad = ctrl_sdup(d.n ? d.msgs[0] : "its Workload cannot be built");
        }
        cu_diag_free(&d);
        json_object_put(copy);
    }
    if (!j->ns || !j->name || !j->uid || !j->wlkey) {
        ctrl_cjob_free(j);
        return NULL;
    }
    return j;
}

/* The queue of a Job: its label; else "default" when its namespace has a
 * LocalQueue named default; else "" when manageJobsWithoutQueueName
 * covers its namespace (managed, no queue); NULL: not managed. */
const char *ctrl_job_queue(ctrl *c, const cjob *j)
{
    if (j->label_queue)
        return j->label_queue;
    char lk[600];
    snprintf(lk, sizeof(lk), "%s/default", j->ns);
    if (ctrl_omap_get(&c->objs[R_LQ], lk))
        return "default";
    if (!c->cfg.manage_without_queue)
        return NULL;
    rec *nsr = ctrl_omap_get(&c->objs[R_NS], j->ns);
    const cu_namespace *nso =
        nsr && nsr->w && nsr->w->namespaces.n ? nsr->w->namespaces.items[0] : NULL;
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

/* ---------------- the Job integration ---------------- */

static json_object *parse_or_null(const char *s) { return s ? cu_json_parse_str(s) : NULL; }

/* The merge patch that stops a Job: suspend, and parallelism back to the
 * Workload's count when partial admission lowered it. The template is
 * restored afterwards (job_restore_patch): kube-apiserver lets a Job's
 * nodeSelector and tolerations change only while it is suspended and has
 * no status.startTime, so a patch that suspends and restores at once is
 * refused (422, spec.template: field is immutable) for a Job that ran. */
static json_object *job_suspend_patch(const cjob *j, const rec *w)
{
    json_object *p = json_object_new_object(), *spec = json_object_new_object();
    json_object_object_add(p, "spec", spec);
    json_object_object_add(spec, "suspend", json_object_new_boolean(1));
    if (w && j->has_par && w->ps_count > 0 && j->par != w->ps_count && j->par < w->ps_count)
        json_object_object_add(spec, "parallelism", json_object_new_int(w->ps_count));
    return p;
}

/* 1 when a and b (objects or arrays, NULL for absent) are equal, an empty
 * one counting as absent */
static int same_or_empty(json_object *a, json_object *b)
{
    int ea = !a || (json_object_is_type(a, json_type_object) && !json_object_object_length(a)) ||
             (json_object_is_type(a, json_type_array) && !json_object_array_length(a));
    int eb = !b || (json_object_is_type(b, json_type_object) && !json_object_object_length(b)) ||
             (json_object_is_type(b, json_type_array) && !json_object_array_length(b));
    if (ea || eb)
        return ea && eb;
    return json_object_equal(a, b);
}

/* The merge patch of a map (nodeSelector, labels, annotations) from cur to
 * orig: keys added since removed, orig's values back; NULL when they are
 * the same already (an empty map counting as none). */
static json_object *map_restore(json_object *cur, json_object *orig)
{
    if (same_or_empty(cur, orig))
        return NULL;
    json_object *m = json_object_new_object();
    if (json_object_is_type(cur, json_type_object)) {
        json_object_object_foreach (cur, k, v) {
            (void)v;
            if (!cu_jget(orig, k))
                json_object_object_add(m, k, NULL);
        }
    }
    if (json_object_is_type(orig, json_type_object)) {
        json_object_object_foreach (orig, k, v)
            json_object_object_add(m, k, json_object_get(v));
    }
    return m;
}

/* The merge patch that gives a stopped Job the nodeSelector, tolerations,
 * labels and annotations of its Workload's template (as Kueue restores the
 * pod set info: keys added at admission, by the flavor or an admission
 * check's podSetUpdates, removed), or NULL when it has them already. */
static json_object *job_restore_patch(const cjob *j, const rec *w)
{
    if (!w)
        return NULL;
    json_object *orig = parse_or_null(w->tmpl), *ometa = parse_or_null(w->tmeta);
    json_object *osel = cu_jget(orig, "nodeSelector"), *otol = cu_jget(orig, "tolerations");
    json_object *cur = parse_or_null(j->cur_sel), *ctol = parse_or_null(j->cur_tol);
    json_object *cmeta = parse_or_null(j->cur_meta);
    json_object *sel = map_restore(cur, osel);
    json_object *lab = map_restore(cu_jget(cmeta, "labels"), cu_jget(ometa, "labels"));
    json_object *ann = map_restore(cu_jget(cmeta, "annotations"), cu_jget(ometa, "annotations"));
    int tol = !same_or_empty(ctol, otol);
    json_object *p = NULL;
    if (sel || lab || ann || tol) {
        json_object *spec = json_object_new_object(), *tmpl = json_object_new_object();
        p = json_object_new_object();
        json_object_object_add(p, "spec", spec);
        json_object_object_add(spec, "template", tmpl);
        if (sel || tol) {
            json_object *tspec = json_object_new_object();
            json_object_object_add(tmpl, "spec", tspec);
            if (sel && json_object_object_length(sel))
                json_object_object_add(tspec, "nodeSelector", json_object_get(sel));
            if (tol)
                json_object_object_add(tspec, "tolerations", otol ? json_object_get(otol) : NULL);
        }
        if (lab || ann) {
            json_object *md = json_object_new_object();
            json_object_object_add(tmpl, "metadata", md);
            if (lab)
                json_object_object_add(md, "labels", json_object_get(lab));
            if (ann)
                json_object_object_add(md, "annotations", json_object_get(ann));
        }
    }
    json_object_put(sel);
    json_object_put(lab);
    json_object_put(ann);
    json_object_put(orig);
    json_object_put(ometa);
    json_object_put(cur);
    json_object_put(ctol);
    json_object_put(cmeta);
    return p;
}

/* Marks the Job's Workload w Finished (reason, msg) and counts it in the
 * metrics when it held quota. Returns 1 when the write was sent. */
static int finish_workload(ctrl *c, rec *w, const char *reason, const char *msg)
{
    const cu_workload *wl = ctrl_wl_of(w);
    json_object *st, *p = ctrl_status_patch(NULL, &st);
    json_object_object_add(
        st, "conditions",
        ctrl_cset(ctrl_conds_json(wl), "Finished", "True", reason, msg, cu_clock_system_now(NULL)));
    char what[1300];
    snprintf(what, sizeof(what), "finishing Workload %s", w->key);
    if (!ctrl_wl_status_write(c, w, OP_STATUS, p, what))
        return 0;
    if (cu_workload_has_quota(wl)) {
        ctrl_m_wl(c, c->km.finished_workloads_total, c->km.local_queue_finished_workloads_total, wl,
                  wl->adm_cq, 0, 1);
        const cu_condition *ac = cu_workload_cond(wl, "Admitted");
        if (ac && ac->ltt_ms)
            ctrl_m_wl(c, c->km.execution_time_seconds, c->km.local_queue_execution_time_seconds, wl,
                      wl->adm_cq, 1, ctrl_secs(cu_clock_system_now(NULL) - ac->ltt_ms));
    }
    return 1;
}

/* Sends the status patch that clears a suspended Job's status.startTime
 * (as Kueue does when it stops a Job), after which its template's
 * scheduling directives may change again. Returns 1 when sent. */
static int job_clear_start(ctrl *c, const cjob *j, const char *op, const char *key,
                           const char *path)
{
    json_object *p = json_object_new_object(), *st = json_object_new_object();
    json_object_object_add(p, "status", st);
    json_object_object_add(st, "startTime", NULL);
    char spath[1300], what[1300];
    snprintf(spath, sizeof(spath), "%s/status", path);
    snprintf(what, sizeof(what), "clearing the startTime of suspended Job %s/%s", j->ns, j->name);
    return ctrl_send_write(c, OP_JOB, R_JOB, op, key, "PATCH", spath, MERGE, p, what);
}

static json_object *job_start_patch(ctrl *c, const cjob *j, const rec *w, cu_diag *d,
                                    int *permanent)
{
    const cu_workload *wl = ctrl_wl_of(w);
    json_object *job = json_object_new_object(), *spec = json_object_new_object();
    json_object *tmpl = json_object_new_object();
    json_object_object_add(job, "spec", spec);
    if (j->has_par)
        json_object_object_add(spec, "parallelism",
                               json_object_new_int(j->par > w->ps_count ? j->par : w->ps_count));
    if (j->has_comp)
        json_object_object_add(spec, "completions", json_object_new_int(j->comp));
    json_object *orig = parse_or_null(w->tmpl), *ometa = parse_or_null(w->tmeta);
    json_object_object_add(tmpl, "spec", orig ? orig : json_object_new_object());
    if (ometa)
        json_object_object_add(tmpl, "metadata", ometa);
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
            rec *rf = ctrl_omap_get(&c->objs[R_RF], fn);
            if (rf && !cu_jget(flavors, fn)) {
                json_object *fo = json_object_new_object();
                json_object *sp = parse_or_null(rf->rf_spec);
                json_object_object_add(fo, "spec", sp ? sp : json_object_new_object());
                json_object_object_add(flavors, fn, fo);
            }
        }
        json_object_object_add(o, "flavors", fl);
        json_object_object_add(o, "count",
                               json_object_new_int(vi ? vi->psa[i].count : wl->psa[i].count));
        json_object_array_add(psas, o);
    }
    json_object_object_add(adm, "podSetAssignments", psas);
    json_object_object_add(st, "admission", adm);
    json_object *acs = parse_or_null(w->acs); /* their podSetUpdates */
    if (acs)
        json_object_object_add(st, "admissionChecks", acs);
    json_object_object_add(wj, "status", st);
    json_object *p = cu_ctrl_job_start_patch(job, wj, flavors, d, permanent);
    json_object_put(job);
    json_object_put(wj);
    json_object_put(flavors);
    return p;
}

/* An evicted Workload whose pods are gone: status.admission cleared,
 * QuotaReserved=False, Admitted=False, Requeued=True (Kueue's
 * UnsetQuotaReservation with the eviction's reason and message). */
void ctrl_release_evicted(ctrl *c, rec *w)
{
    const cu_workload *wl = ctrl_wl_of(w);
    const cu_condition *ec = cu_workload_cond(wl, "Evicted");
    const char *er = ec && ec->reason ? ec->reason : "Evicted";
    const char *em = ec && ec->message ? ec->message : "The workload was evicted";
    int64_t now = cu_clock_system_now(NULL);
    json_object *st, *p = ctrl_status_patch(w->rv, &st);
    json_object_object_add(st, "admission", NULL);
    json_object *k = ctrl_conds_json(wl);
    k = ctrl_cset(k, "QuotaReserved", "False", "Pending", em, now);
    /* Kueue's SyncAdmittedCondition: its checks (reset to Pending by the
     * eviction) count too */
    if (cu_workload_checks_ready(wl, NULL, 0))
        k = ctrl_cset(k, "Admitted", "False", "NoReservation", "The workload has no reservation",
                      now);
    else
        k = ctrl_cset(k, "Admitted", "False", "NoReservationUnsatisfiedChecks",
                      "The workload has no reservation and not all checks ready", now);
    if (strcmp(er, "AdmissionCheck") == 0 && w->rq_at <= now)
        /* Kueue: Requeued=False (AdmissionCheck), then at once True
         * "BackoffFinished" when no check asked to wait */
        k = ctrl_cset(k, "Requeued", "True", "BackoffFinished", "The workload backoff was finished",
                      now);
    else
        k = ctrl_cset(k, "Requeued", "True", er, em, now);
    json_object_object_add(st, "conditions", k);
    char what[1300];
    snprintf(what, sizeof(what), "releasing the quota of evicted Workload %s", w->key);
    ctrl_wl_status_write(c, w, OP_STATUS, p, what);
}

/* 1 when the Workload body the controller would create is invalid by
 * Kueue's rules (the API server would refuse it), the first problem in
 * bad. */
static int workload_invalid(ctrl *c, json_object *body, char *bad, size_t n)
{
    cu_world *w = ctrl_decode_obj(c, R_WL, body, NULL, 0);
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
    ctrl_world_free(w);
    return invalid;
}

void ctrl_reconcile_job(ctrl *c, rec *jr)
{
    cjob *j = jr->job;
    if (!j || j->deleting)
        return;
    const char *queue = ctrl_job_queue(c, j);
    if (!queue)
        return;
    rec *w = ctrl_omap_get(&c->objs[R_WL], j->wlkey);
    const cu_workload *wl = ctrl_wl_of(w);
    char op[1100], path[1200], what[1300];
    snprintf(op, sizeof(op), "job:%s", jr->key);
    snprintf(path, sizeof(path), "/apis/batch/v1/namespaces/%s/jobs/%s", j->ns, j->name);

    if (!w || !wl) {
        if (w || j->finished || !j->create_body)
            return;
        if (jr->created_at && cu_clock_system_now(NULL) - jr->created_at < 30000)
            return; /* created; the watch has not brought it yet */
        if (jr->retry_at && cu_clock_system_now(NULL) < jr->retry_at)
            return; /* refused a moment ago: backing off */
        json_object *body = cu_json_parse_str(j->create_body);
        if (!body)
            return;
        json_object *spec = cu_jget(body, "spec");
        /* Kueue writes the class's value next to priorityClassRef */
        json_object *ref = cu_jget(spec, "priorityClassRef");
        const char *pk = cu_jstr(ref, "kind"), *pn = cu_jstr(ref, "name");
        if (pk && pn) {
            int wpc = strcmp(pk, "WorkloadPriorityClass") == 0;
            rec *pr = ctrl_omap_get(&c->objs[wpc ? R_WPC : R_PC], pn);
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
        size_t h = cu_hash_str(json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN));
        if (h == jr->refused) {
            json_object_put(body); /* refused for good already; reported then */
            return;
        }
        char bad[700];
        if (workload_invalid(c, body, bad, sizeof(bad))) {
            /* the API server would refuse it (a queue-name label that is
             * no LocalQueue name, say): said once, not sent */
            jr->refused = h;
            json_object_put(body);
            ctrl_log(c, 0, "Job %s: its Workload %s is invalid and is not created: %s", jr->key,
                     j->wlkey, bad);
            char m[900];
            snprintf(m, sizeof(m), "Workload %s is invalid: %s", strchr(j->wlkey, '/') + 1, bad);
            ctrl_emit_job(c, j, "Warning", CU_EV_FAILED_CREATE_WORKLOAD, m);
            return;
        }
        jr->create_hash = h;
        if (ctrl_send_write(c, OP_CREATE, R_JOB, cop, jr->key, "POST", cpath, "application/json",
                            body, what))
            jr->created_at = cu_clock_system_now(NULL);
        return;
    }
    if (cu_workload_finished(wl))
        return;
    if (j->finished) {
        const char *msg =
            j->failed ? (j->fail_msg ? j->fail_msg : "Job failed") : "Job finished successfully";
        if (!finish_workload(c, w, j->failed ? "Failed" : "Succeeded", msg))
            return;
        ctrl_log(c, 0, "finished Job %s (%s)%s%s", jr->key, j->failed ? "Failed" : "Succeeded",
                 j->failed ? ": " : "", j->failed ? msg : "");
        char m[900];
        ctrl_emit_job(c, j, "Normal", CU_EV_FINISHED_WORKLOAD,
                      cu_ctrl_event_msg_finished(m, sizeof(m), wl->meta.ns, wl->meta.name));
        return;
    }
    int holds = cu_workload_has_quota(wl) || (w->assumed && w->adm_written);
    int evicted = ctrl_cond_is(wl, "Evicted", "True");
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
        if (ctrl_send_write(c, OP_OTHER, R_WL, sop, w->key, "PATCH", spath, MERGE, p, what))
            ctrl_log(c, 0, "Job %s: queue-name changed to %s; moving its Workload", jr->key, queue);
        return;
    }
    if ((holds && evicted) || (!holds && !w->assumed)) {
        if (!j->suspended) {
            json_object *p = job_suspend_patch(j, w);
            snprintf(what, sizeof(what), "suspending Job %s", jr->key);
            if (ctrl_send_write(c, OP_JOB, R_JOB, op, jr->key, "PATCH", path, MERGE, p, what)) {
                jr->restore = 1;
                /* the start is undone: the next admission starts the Job
                 * again even when the watch never showed it started (it
                 * may bring the started and the suspended version as one) */
                free(jr->started_rv);
                jr->started_rv = NULL;
                ctrl_log(c, 0, "suspending Job %s: %s", jr->key,
                         evicted ? "its Workload was evicted" : "its Workload holds no quota");
                const cu_condition *ec = cu_workload_cond(wl, "Evicted");
                ctrl_emit_job(c, j, "Normal", CU_EV_STOPPED,
                              evicted && ec && ec->message ? ec->message : CU_EV_MSG_NOT_ADMITTED);
            }
            return;
        }
        /* suspended: its template restored (a Job that ran first loses its
         * startTime), then the quota released; the restore of a Job that
         * holds no quota only after this controller suspended it (it does
         * not undo a user's change to a suspended Job) */
        json_object *rp = (holds && evicted) || jr->restore ? job_restore_patch(j, w) : NULL;
        if (rp && j->has_start) {
            json_object_put(rp);
            job_clear_start(c, j, op, jr->key, path);
            return;
        }
        if (rp) {
            snprintf(what, sizeof(what), "restoring the template of stopped Job %s", jr->key);
            ctrl_send_write(c, OP_JOB, R_JOB, op, jr->key, "PATCH", path, MERGE, rp, what);
            return;
        }
        jr->restore = 0;
        if (holds && evicted && j->active == 0)
            ctrl_release_evicted(c, w); /* stopped: give the quota back, queue it again */
        return;
    }
    if (holds && j->suspended && j->has_start) {
        /* stopped earlier without clearing it: the start patch's template
         * change would be refused */
        job_clear_start(c, j, op, jr->key, path);
        return;
    }
    if (jr->started_rv && (!j->suspended || (jr->rv && strcmp(jr->rv, jr->started_rv) == 0) ||
                           cu_clock_system_now(NULL) - jr->started_at > CTRL_START_ECHO_MS)) {
        free(jr->started_rv); /* the watch caught up with the start */
        jr->started_rv = NULL;
    }
    /* started once Admitted: with admission checks, QuotaReserved comes
     * first and Admitted when they are all Ready */
    int admitted =
        ctrl_cond_is(wl, "Admitted", "True") || (w->assumed && w->adm_written && !w->adm_checks);
    if (holds && admitted && j->suspended && !jr->started_rv) {
        cu_diag d;
        cu_diag_init(&d);
        int permanent = 0;
        json_object *p = job_start_patch(c, j, w, &d, &permanent);
        if (!p) {
            for (size_t i = 0; i < d.n; i++)
                ctrl_log(c, 0, "Job %s cannot start: %s", jr->key, d.msgs[i]);
            /* as Kueue: no point in retrying; the Workload is finished */
            if (permanent && d.n)
                finish_workload(c, w, "FailedToStart", d.msgs[0]);
        } else {
            snprintf(what, sizeof(what), "starting Job %s", jr->key);
            if (ctrl_send_write(c, OP_JOB, R_JOB, op, jr->key, "PATCH", path, MERGE, p, what)) {
                free(jr->start_cq); /* said when the write succeeds: ctrl_job_started */
                jr->start_cq = ctrl_sdup(wl->adm_cq ? wl->adm_cq : "?");
            }
        }
        cu_diag_free(&d);
    }
}

void ctrl_job_started(ctrl *c, rec *jr, int ok, const char *body)
{
    char *cq = jr->start_cq;
    jr->start_cq = NULL;
    if (!cq)
        return; /* not the start */
    if (ok && jr->job) {
        json_object *o = cu_json_parse_str(body);
        free(jr->started_rv);
        jr->started_rv = ctrl_sdup(cu_jpath_str(o, "metadata.resourceVersion"));
        jr->started_at = cu_clock_system_now(NULL);
        json_object_put(o);
        ctrl_log(c, 0, "started Job %s (Workload %s, ClusterQueue %s)", jr->key,
                 jr->job->wlkey ? jr->job->wlkey : "?", cq);
        char m[600];
        ctrl_emit_job(c, jr->job, "Normal", CU_EV_STARTED,
                      cu_ctrl_event_msg_started(m, sizeof(m), cq));
    }
    free(cq);
}

/* ---------------- the integration's hooks ---------------- */

static void job_decode(ctrl *c, rec *x, json_object *obj)
{
    cjob *j = ctrl_decode_job(c, obj);
    if (!j) {
        ctrl_report_bad(c, x, R_JOB, obj, "no metadata.namespace, name or uid");
        return;
    }
    ctrl_report_bad(c, x, R_JOB, obj, j->bad);
    ctrl_cjob_free(x->job);
    x->job = j;
    ctrl_mark_owner(c, R_JOB, x->key);
}

static void job_deleted(ctrl *c, rec *x)
{
    if (x->job)
        ctrl_mark_wl(c, x->job->wlkey); /* an eviction it held up ends */
}

static void job_reconcile(ctrl *c, const char *key)
{
    rec *jr = ctrl_omap_get(&c->objs[R_JOB], key);
    if (jr)
        ctrl_reconcile_job(c, jr);
}

static void job_written(ctrl *c, const char *key, int ok, const char *body)
{
    rec *jr = ctrl_omap_get(&c->objs[R_JOB], key);
    if (jr)
        ctrl_job_started(c, jr, ok, body);
}

static int job_awaits_workload(ctrl *c, rec *x)
{
    const cjob *j = x->job;
    return j && !j->finished && !j->deleting && j->create_body && ctrl_job_queue(c, j) &&
           !ctrl_omap_get(&c->objs[R_WL], j->wlkey);
}

const ctrl_integ ctrl_integ_job = {
    .r = R_JOB,
    .decode = job_decode,
    .deleted = job_deleted,
    .reconcile = job_reconcile,
    .written = job_written,
    .awaits_workload = job_awaits_workload,
};
