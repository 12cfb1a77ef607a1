/*
 * cu_suspend.c - the integrations whose objects stop by spec.suspend
 * (Kueue's GenericJob: the batch/v1 Job, the JobSet), in one place: the
 * record of an object (its pod templates now), its queue, its Workload
 * (created, moved, finished), its start (unsuspended with each pod set's
 * flavors and admission checks' updates), its stop (suspended, then its
 * pod templates restored, then the quota released). What differs by kind
 * is its ctrl_susp_ops (cu_job.c, cu_jobset.c).
 */
#include "cu_ctrl_int.h"
#include "cu_topology.h"

static const ctrl_susp_ops *ops_of(int r)
{
    const ctrl_integ *in = ctrl_integ_of(r);
    return in ? in->susp : NULL;
}

static json_object *parse_or_null(const char *s) { return s ? cu_json_parse_str(s) : NULL; }

/* ---------------- the record ---------------- */

/* A new record of obj by the kind rules o, NULL without namespace, name
 * or uid. */
static cjob *susp_decode(ctrl *c, json_object *obj, const ctrl_susp_ops *o)
{
    const char *ns = cu_jpath_str(obj, "metadata.namespace"),
               *name = cu_jpath_str(obj, "metadata.name");
    const char *uid = cu_jpath_str(obj, "metadata.uid");
    if (!ns || !name || !uid)
        return NULL;
    cjob *j = calloc(1, sizeof(*j));
    if (!j)
        return NULL;
    j->ns = strdup(ns);
    j->name = strdup(name);
    j->uid = strdup(uid);
    j->label_queue = ctrl_sdup(cu_jstr(cu_jpath(obj, "metadata.labels"), CU_LABEL_QUEUE_NAME));
    if (j->label_queue && !*j->label_queue) {
        free(j->label_queue);
        j->label_queue = NULL;
    }
    j->deleting = cu_jpath(obj, "metadata.deletionTimestamp") != NULL;
    {
        const char *ct = cu_jpath_str(obj, "metadata.creationTimestamp");
        int64_t ms = 0;
        j->created_ms = ct && cu_time_parse(ct, &ms) == 0 ? ms : 0;
    }
    json_object *susp = cu_jpath(obj, "spec.suspend");
    j->suspended = susp && json_object_get_boolean(susp);
    o->fill(j, obj);
    json_object *t[64];
    size_t nt = o->templates(obj, t, 64);
    j->ps = nt ? calloc(nt, sizeof(*j->ps)) : NULL;
    j->nps = j->ps ? nt : 0;
    for (size_t i = 0; i < j->nps; i++) {
        json_object *sel = cu_jpath(t[i], "spec.nodeSelector");
        j->ps[i].sel = json_object_is_type(sel, json_type_object) ? ctrl_jtext(sel) : NULL;
        json_object *tol = cu_jpath(t[i], "spec.tolerations");
        j->ps[i].tol = json_object_is_type(tol, json_type_array) ? ctrl_jtext(tol) : NULL;
        j->ps[i].meta = ctrl_meta_text(cu_jget(t[i], "metadata"));
        json_object *gates = cu_jpath(t[i], "spec.schedulingGates");
        j->ps[i].gates = json_object_is_type(gates, json_type_array) ? ctrl_jtext(gates) : NULL;
    }
    cu_arena a;
    cu_arena_init(&a, 1024);
    const char *wlname = o->wl_name(&a, name, uid);
    if (wlname) {
        size_t l = strlen(ns) + strlen(wlname) + 2;
        j->wlkey = malloc(l);
        if (j->wlkey)
            snprintf(j->wlkey, l, "%s/%s", ns, wlname);
    }
    cu_arena_free(&a);
    /* the Workload it needs: only for objects the controller may manage,
     * and not for the child of an object of an enabled integration (a
     * JobSet's Job: the parent's Workload holds the quota of all) */
    int maybe = j->label_queue != NULL;
    if (!maybe) {
        char lk[600];
        snprintf(lk, sizeof(lk), "%s/default", ns);
        maybe = c->cfg.manage_without_queue || ctrl_omap_get(&c->objs[R_LQ], lk) != NULL;
    }
    if (maybe && ctrl_managed_parent(c, obj) >= 0)
        maybe = 0;
    if (maybe && !j->finished && !j->deleting) {
        json_object *src = obj, *copy = NULL;
        if (!j->label_queue) {
            /* build it as if labelled; the queue is decided at creation */
            if (json_object_deep_copy(obj, &copy, NULL) == 0) {
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
        json_object *body = o->workload(src, &d);
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

/* The queue of an object: its label; else "default" when its namespace has a
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

/* ---------------- the patches ---------------- */

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

/* The merge patch of a pod template (NULL when it has them already) that
 * gives it back the nodeSelector, tolerations, labels and annotations of
 * its pod set in the Workload (tmpl: {"nodeSelector","tolerations"},
 * meta: {"labels","annotations"}), as Kueue restores the pod set info:
 * keys added at admission, by the flavor or an admission check's
 * podSetUpdates, removed. */
static json_object *tmpl_restore_patch(const cjob_ps *cur, json_object *orig, json_object *ometa)
{
    json_object *osel = cu_jget(orig, "nodeSelector"), *otol = cu_jget(orig, "tolerations");
    json_object *csel = parse_or_null(cur->sel), *ctol = parse_or_null(cur->tol);
    /* the scheduling gates too: a TAS start added the topology gate */
    json_object *ogates = cu_jget(orig, "schedulingGates"), *cgates = parse_or_null(cur->gates);
    int gates = !same_or_empty(cgates, ogates);
    json_object_put(cgates);
    json_object *cmeta = parse_or_null(cur->meta);
    json_object *sel = map_restore(csel, osel);
    json_object *lab = map_restore(cu_jget(cmeta, "labels"), cu_jget(ometa, "labels"));
    json_object *ann = map_restore(cu_jget(cmeta, "annotations"), cu_jget(ometa, "annotations"));
    int tol = !same_or_empty(ctol, otol);
    json_object *tmpl = NULL;
    if (sel || lab || ann || tol || gates) {
        tmpl = json_object_new_object();
        if (sel || tol || gates) {
            json_object *tspec = json_object_new_object();
            json_object_object_add(tmpl, "spec", tspec);
            if (sel && json_object_object_length(sel))
                json_object_object_add(tspec, "nodeSelector", json_object_get(sel));
            if (tol)
                json_object_object_add(tspec, "tolerations", otol ? json_object_get(otol) : NULL);
            if (gates)
                json_object_object_add(tspec, "schedulingGates",
                                       same_or_empty(ogates, NULL) ? NULL
                                                                   : json_object_get(ogates));
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
    json_object_put(csel);
    json_object_put(ctol);
    json_object_put(cmeta);
    return tmpl;
}

/* The merge patch that gives a stopped object its Workload's pod templates
 * back (tmpl_restore_patch per pod set, by the kind's retemplate), or NULL
 * when it has them already. */
static json_object *restore_patch(const cjob *j, const rec *w, const ctrl_susp_ops *o)
{
    if (!w || !j->nps)
        return NULL;
    json_object *all = parse_or_null(w->pstmpls);
    json_object **tp = calloc(j->nps, sizeof(*tp));
    json_object *p = NULL;
    int any = 0;
    if (tp) {
        for (size_t i = 0; i < j->nps; i++) {
            json_object *e = i < cu_jarr_len(all) ? json_object_array_get_idx(all, i) : NULL;
            tp[i] = tmpl_restore_patch(&j->ps[i], cu_jget(e, "spec"), cu_jget(e, "meta"));
            any |= tp[i] != NULL;
        }
        if (any)
            p = o->retemplate(j, w, tp);
        for (size_t i = 0; i < j->nps; i++)
            json_object_put(tp[i]);
        free(tp);
    }
    json_object_put(all);
    return p;
}

/* The start patch of j: its Workload's admission (from the Workload, or,
 * written but not seen back yet, from the engine that made it), the
 * admission checks' podSetUpdates and the flavors it names, handed to the
 * kind's start. */
static json_object *start_patch(ctrl *c, const cjob *j, const rec *w, const ctrl_susp_ops *o,
                                cu_diag *d, int *permanent)
{
    const cu_workload *wl = ctrl_wl_of(w);
    json_object *wj = json_object_new_object(), *md = json_object_new_object();
    json_object_object_add(md, "namespace", json_object_new_string(wl->meta.ns ? wl->meta.ns : ""));
    json_object_object_add(md, "name", json_object_new_string(wl->meta.name));
    json_object_object_add(wj, "metadata", md);
    json_object *st = json_object_new_object(), *adm = json_object_new_object();
    json_object *psas = json_object_new_array();
    json_object *flavors = json_object_new_object();
    const cu_wl_info *vi = !cu_workload_has_quota(wl) && w->adm_written && c->eng && w->idx >= 0
                               ? cu_engine_workload_info_idx(c->eng, w->idx)
                               : NULL;
    size_t npsa = vi ? vi->npsa : wl->npsa;
    for (size_t i = 0; i < npsa; i++) {
        json_object *ps = json_object_new_object(), *fl = json_object_new_object();
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
        if (i < wl->npodsets && wl->podsets[i].name)
            json_object_object_add(ps, "name", json_object_new_string(wl->podsets[i].name));
        json_object_object_add(ps, "flavors", fl);
        json_object_object_add(ps, "count",
                               json_object_new_int(vi ? vi->psa[i].count : wl->psa[i].count));
        const cu_topo_assign *ta = vi ? vi->psa[i].topo : wl->psa[i].topo;
        if (ta)
            json_object_object_add(ps, "topologyAssignment", cu_topo_assign_json(ta));
        json_object_array_add(psas, ps);
    }
    /* the pod sets' topology requests (TAS: an implicit one is marked) */
    json_object *wps = json_object_new_array();
    for (size_t i = 0; i < wl->npodsets; i++) {
        json_object *ps = json_object_new_object();
        json_object *rq = cu_topo_request_json(&wl->podsets[i].topo);
        if (rq)
            json_object_object_add(ps, "topologyRequest", rq);
        json_object_array_add(wps, ps);
    }
    json_object_object_add(cu_jchild(wj, "spec"), "podSets", wps);
    json_object_object_add(adm, "podSetAssignments", psas);
    json_object_object_add(st, "admission", adm);
    json_object *acs = parse_or_null(w->acs); /* their podSetUpdates */
    if (acs)
        json_object_object_add(st, "admissionChecks", acs);
    json_object_object_add(wj, "status", st);
    json_object *p = o->start(j, w, wj, flavors, d, permanent);
    json_object_put(wj);
    json_object_put(flavors);
    return p;
}

/* Sends the status patch that clears a suspended object's
 * status.startTime (as Kueue does when it stops a Job), after which its
 * template's scheduling directives may change again. Returns 1 when sent. */
static int clear_start(ctrl *c, rec *jr, const char *op, const char *path)
{
    json_object *p = json_object_new_object(), *st = json_object_new_object();
    json_object_object_add(p, "status", st);
    json_object_object_add(st, "startTime", NULL);
    char spath[1300], what[1300];
    snprintf(spath, sizeof(spath), "%s/status", path);
    snprintf(what, sizeof(what), "clearing the startTime of suspended %s %s", res_tab[jr->r].kind,
             jr->key);
    return ctrl_send_write(c, OP_JOB, jr->r, op, jr->key, "PATCH", spath, MERGE, p, what);
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

/* Brings the object jr and its Workload to what they should be: creates
 * the Workload, starts the admitted object, stops the evicted or
 * unadmitted one (suspended, its templates restored, the quota released),
 * marks the Workload Finished. One write per object at a time. */
static void reconcile(ctrl *c, rec *jr, const ctrl_susp_ops *o)
{
    cjob *j = jr->job;
    const char *kind = res_tab[jr->r].kind;
    if (!j || j->deleting)
        return;
    const char *queue = ctrl_job_queue(c, j);
    if (!queue)
        return;
    rec *w = ctrl_omap_get(&c->objs[R_WL], j->wlkey);
    const cu_workload *wl = ctrl_wl_of(w);
    char op[1100], path[1200], what[1300];
    snprintf(op, sizeof(op), "job:%s", jr->key);
    ctrl_obj_path(jr->r, jr->key, path, sizeof(path));

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
        ctrl_wl_priority(c, spec);
        if (*queue)
            json_object_object_add(spec, "queueName", json_object_new_string(queue));
        else
            json_object_object_del(spec, "queueName");
        char cop[1100], cpath[700];
        snprintf(cop, sizeof(cop), "create:%s", j->wlkey);
        snprintf(cpath, sizeof(cpath), "%s/%s/workloads", WLPATH, j->ns);
        snprintf(what, sizeof(what), "creating Workload %s for %s %s", j->wlkey, kind, jr->key);
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
            ctrl_log(c, 0, "%s %s: its Workload %s is invalid and is not created: %s", kind,
                     jr->key, j->wlkey, bad);
            char m[900];
            snprintf(m, sizeof(m), "Workload %s is invalid: %s", strchr(j->wlkey, '/') + 1, bad);
            ctrl_emit_owner(c, jr, "Warning", CU_EV_FAILED_CREATE_WORKLOAD, m);
            return;
        }
        jr->create_hash = h;
        if (ctrl_send_write(c, OP_CREATE, jr->r, cop, jr->key, "POST", cpath, "application/json",
                            body, what))
            jr->created_at = cu_clock_system_now(NULL);
        return;
    }
    if (cu_workload_finished(wl))
        return;
    if (j->finished) {
        const char *msg = j->fin_msg ? j->fin_msg : j->failed ? o->fail_msg : o->ok_msg;
        if (!ctrl_finish_workload(c, w, j->failed ? "Failed" : "Succeeded", msg))
            return;
        ctrl_log(c, 0, "finished %s %s (%s)%s%s", kind, jr->key, j->failed ? "Failed" : "Succeeded",
                 j->failed ? ": " : "", j->failed ? msg : "");
        char m[900];
        ctrl_emit_owner(c, jr, "Normal", CU_EV_FINISHED_WORKLOAD,
                        cu_ctrl_event_msg_finished(m, sizeof(m), wl->meta.ns, wl->meta.name));
        return;
    }
    int holds = cu_workload_has_quota(wl) || (w->assumed && w->adm_written);
    int evicted = ctrl_cond_is(wl, "Evicted", "True");
    const char *wq = wl->queue_name ? wl->queue_name : "";
    if (!holds && !w->assumed && j->suspended && strcmp(wq, queue) != 0) {
        /* Kueue: a new queue-name on a suspended, unadmitted object moves its
         * Workload */
        json_object *p = json_object_new_object(), *spec = json_object_new_object();
        json_object_object_add(p, "spec", spec);
        json_object_object_add(spec, "queueName", *queue ? json_object_new_string(queue) : NULL);
        char sop[1100], spath[1200];
        snprintf(sop, sizeof(sop), "spec:%s", w->key);
        snprintf(spath, sizeof(spath), "%s/%s/workloads/%s", WLPATH, wl->meta.ns, wl->meta.name);
        snprintf(what, sizeof(what), "moving Workload %s to LocalQueue %s", w->key, queue);
        if (ctrl_send_write(c, OP_OTHER, R_WL, sop, w->key, "PATCH", spath, MERGE, p, what))
            ctrl_log(c, 0, "%s %s: queue-name changed to %s; moving its Workload", kind, jr->key,
                     queue);
        return;
    }
    if ((holds && evicted) || (!holds && !w->assumed)) {
        if (!j->suspended) {
            json_object *p = json_object_new_object(), *spec = json_object_new_object();
            json_object_object_add(p, "spec", spec);
            json_object_object_add(spec, "suspend", json_object_new_boolean(1));
            if (o->suspend)
                o->suspend(j, w, spec);
            snprintf(what, sizeof(what), "suspending %s %s", kind, jr->key);
            if (ctrl_send_write(c, OP_JOB, jr->r, op, jr->key, "PATCH", path, MERGE, p, what)) {
                jr->restore = 1;
                /* the start is undone: the next admission starts it
                 * again even when the watch never showed it started (it
                 * may bring the started and the suspended version as one) */
                free(jr->started_rv);
                jr->started_rv = NULL;
                ctrl_log(c, 0, "suspending %s %s: %s", kind, jr->key,
                         evicted ? "its Workload was evicted" : "its Workload holds no quota");
                const cu_condition *ec = cu_workload_cond(wl, "Evicted");
                ctrl_emit_owner(c, jr, "Normal", CU_EV_STOPPED,
                                evicted && ec && ec->message ? ec->message
                                                             : CU_EV_MSG_NOT_ADMITTED);
            }
            return;
        }
        /* suspended: its templates restored (a Job that ran first loses its
         * startTime), then the quota released; the restore of a Job that
         * holds no quota only after this controller suspended it (it does
         * not undo a user's change to a suspended Job) */
        json_object *rp = (holds && evicted) || jr->restore ? restore_patch(j, w, o) : NULL;
        if (rp && j->has_start) {
            json_object_put(rp);
            clear_start(c, jr, op, path);
            return;
        }
        if (rp) {
            snprintf(what, sizeof(what), "restoring the template of stopped %s %s", kind, jr->key);
            ctrl_send_write(c, OP_JOB, jr->r, op, jr->key, "PATCH", path, MERGE, rp, what);
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
        clear_start(c, jr, op, path);
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
        json_object *p = start_patch(c, j, w, o, &d, &permanent);
        if (!p) {
            for (size_t i = 0; i < d.n; i++)
                ctrl_log(c, 0, "%s %s cannot start: %s", kind, jr->key, d.msgs[i]);
            /* as Kueue: no point in retrying; the Workload is finished */
            if (permanent && d.n)
                ctrl_finish_workload(c, w, "FailedToStart", d.msgs[0]);
        } else {
            snprintf(what, sizeof(what), "starting %s %s", kind, jr->key);
            if (ctrl_send_write(c, OP_JOB, jr->r, op, jr->key, "PATCH", path, MERGE, p, what)) {
                free(jr->start_cq); /* said when the write succeeds: started() */
                jr->start_cq = ctrl_sdup(wl->adm_cq ? wl->adm_cq : "?");
            }
        }
        cu_diag_free(&d);
    }
}

/* The answer to a write of the object jr (ok: 2xx; body: the object it
 * returned): when it was the start, "started KIND" is logged and the
 * Started Event emitted now, once, and the started version noted. */
static void started(ctrl *c, rec *jr, int ok, const char *body)
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
        ctrl_log(c, 0, "started %s %s (Workload %s, ClusterQueue %s)", res_tab[jr->r].kind, jr->key,
                 jr->job->wlkey ? jr->job->wlkey : "?", cq);
        char m[600];
        ctrl_emit_owner(c, jr, "Normal", CU_EV_STARTED,
                        cu_ctrl_event_msg_started(m, sizeof(m), cq));
    }
    free(cq);
}

/* ---------------- the hooks ---------------- */

void ctrl_susp_decode(ctrl *c, rec *x, json_object *obj)
{
    const ctrl_susp_ops *o = ops_of(x->r);
    cjob *j = o ? susp_decode(c, obj, o) : NULL;
    if (!j) {
        ctrl_report_bad(c, x, x->r, obj, "no metadata.namespace, name or uid");
        return;
    }
    ctrl_report_bad(c, x, x->r, obj, j->bad);
    ctrl_cjob_free(x->job);
    x->job = j;
    ctrl_mark_owner(c, x->r, x->key);
}

void ctrl_susp_deleted(ctrl *c, rec *x)
{
    if (x->job)
        ctrl_mark_wl(c, x->job->wlkey); /* an eviction it held up ends */
}

void ctrl_susp_reconcile_key(ctrl *c, int r, const char *key)
{
    rec *jr = ctrl_omap_get(&c->objs[r], key);
    const ctrl_susp_ops *o = ops_of(r);
    if (jr && o)
        reconcile(c, jr, o);
}

void ctrl_susp_written(ctrl *c, int r, const char *key, int ok, const char *body)
{
    rec *jr = ctrl_omap_get(&c->objs[r], key);
    if (jr)
        started(c, jr, ok, body);
}

int ctrl_susp_awaits_workload(ctrl *c, rec *x)
{
    const cjob *j = x->job;
    return j && !j->finished && !j->deleting && j->create_body && ctrl_job_queue(c, j) &&
           !ctrl_omap_get(&c->objs[R_WL], j->wlkey);
}
