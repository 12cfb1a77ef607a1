/*
 * cu_ctrlinform.c - informer events: records kept per resource, objects
 * that cannot be decoded reported on.
 */
#include "cu_ctrl_int.h"

/* ---------------- informer events ---------------- */

void ctrl_rec_free(rec *x)
{
    if (!x)
        return;
    free(x->key);
    free(x->rv);
    free(x->owner);
    free(x->owners);
    free(x->tmpl);
    free(x->tmeta);
    free(x->pstmpls);
    free(x->acs);
    free(x->ev_reason);
    free(x->ev_msg);
    free(x->pr_reason);
    free(x->rf_spec);
    free(x->fins);
    free(x->st_conds);
    free(x->deact_msg);
    free(x->bad);
    free(x->sent_rv[0]);
    free(x->sent_rv[1]);
    free(x->start_cq);
    free(x->started_rv);
    ctrl_cjob_free(x->job);
    const ctrl_integ *in = ctrl_integ_of(x->r);
    if (x->ij && in && in->free_data)
        in->free_data(x);
    free(x->uid);
    free(x);
}

static void obj_key(json_object *o, char *out, size_t n)
{
    const char *ns = cu_jpath_str(o, "metadata.namespace"),
               *name = cu_jpath_str(o, "metadata.name");
    if (ns)
        snprintf(out, n, "%s/%s", ns, name ? name : "");
    else
        snprintf(out, n, "%s", name ? name : "");
}

/* ---------------- objects that cannot be decoded ---------------- */

/* A Warning Event on obj (of resource r), when it has a name. */
static void emit_obj(ctrl *c, int r, json_object *obj, const char *reason, const char *msg)
{
    const char *name = cu_jpath_str(obj, "metadata.name");
    if (name && *name)
        ctrl_emit_av(c, r >= R_FIRST_OWNER, res_tab[r].api_version, res_tab[r].kind,
                     cu_jpath_str(obj, "metadata.namespace"), name,
                     cu_jpath_str(obj, "metadata.uid"), "Warning", reason, msg);
}

/* The condition on a Workload the controller cannot decode: set (True,
 * why) or, once it decodes again (why NULL), turned False. Written only
 * when it is not there already as wanted. */
static void wl_decode_cond(ctrl *c, rec *x, json_object *obj, const char *why)
{
    json_object *conds = cu_jpath(obj, "status.conditions"), *keep = json_object_new_array();
    size_t n = json_object_is_type(conds, json_type_array) ? json_object_array_length(conds) : 0;
    int have = 0, any = 0;
    for (size_t i = 0; i < n; i++) {
        json_object *k = json_object_array_get_idx(conds, i);
        const char *t = cu_jstr(k, "type"), *st = cu_jstr(k, "status");
        const char *m = cu_jstr(k, "message");
        if (!t)
            continue; /* not a condition: left out of what is written back */
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
    keep = ctrl_cset(keep, CU_COND_DECODE_FAILED, why ? "True" : "False",
                     why ? CU_EV_DECODE_FAILED : "Decoded",
                     why ? why : "The controller decodes the Workload", cu_clock_system_now(NULL));
    json_object *st, *p = ctrl_status_patch(x->rv, &st);
    json_object_object_add(st, "conditions", keep);
    const char *sl = strchr(x->key, '/');
    if (!sl) {
        json_object_put(p);
        return;
    }
    char op[1100], path[1200], what[1300];
    snprintf(op, sizeof(op), "status:%s", x->key);
    snprintf(path, sizeof(path), "%s/%.*s/workloads/%s/status", WLPATH, (int)(sl - x->key), x->key,
             sl + 1);
    snprintf(what, sizeof(what), "writing condition %s of Workload %s", CU_COND_DECODE_FAILED,
             x->key);
    ctrl_send_write(c, OP_STATUS, R_WL, op, x->key, "PATCH", path, MERGE, p, what);
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
    x->bad = ctrl_sdup(why);
    ctrl_log(c, 0, "%s %s cannot be decoded; left out until it changes: %s", res_tab[r].kind,
             x->key, why);
    emit_obj(c, r, obj, CU_EV_DECODE_FAILED, why);
}

static void report_decodable(ctrl *c, rec *x, int r, json_object *obj);

void ctrl_report_bad(ctrl *c, rec *x, int r, json_object *obj, const char *why)
{
    if (why)
        report_undecodable(c, x, r, obj, why);
    else
        report_decodable(c, x, r, obj);
}

/* Object x decodes (again). */
static void report_decodable(ctrl *c, rec *x, int r, json_object *obj)
{
    if (r == R_WL)
        wl_decode_cond(c, x, obj, NULL);
    if (!x->bad)
        return;
    ctrl_log(c, 0, "%s %s decodes again", res_tab[r].kind, x->key);
    free(x->bad);
    x->bad = NULL;
}

/* The informer left something out (not JSON, too deep, no name). */
void ctrl_on_skip(cu_informer *inf, const char *why, json_object *obj, void *ud)
{
    (void)inf;
    rctx *rc = ud;
    ctrl *c = rc->c;
    /* once: a relist meets the same items again */
    size_t h = cu_hash_str(why) ^ (size_t)rc->r;
    for (unsigned i = 0; i < 64 && i < c->nskips_said; i++)
        if (c->skips_said[i] == h)
            return;
    c->skips_said[c->nskips_said++ % 64] = h;
    ctrl_log(c, 0, "%s", why);
    if (obj)
        emit_obj(c, rc->r, obj, CU_EV_DECODE_FAILED, why);
}

/* Tells every enabled integration that Workload w changed. */
static void wl_changed(ctrl *c, rec *w, int deleted)
{
    for (int r = R_FIRST_OWNER; r < NRES; r++) {
        const ctrl_integ *in = ctrl_integ_of(r);
        if (in && in->wl_changed && c->cfg.on[r])
            in->wl_changed(c, w, deleted);
    }
}

void ctrl_on_event(cu_informer *inf, cu_ievent ev, json_object *obj, void *ud)
{
    (void)inf;
    rctx *rc = ud;
    ctrl *c = rc->c;
    int r = rc->r;
    if (r == R_NODE || r == R_TPOD) {
        ctrl_tas_on_event(c, r, ev, obj); /* kept apart: only what TAS needs */
        return;
    }
    char key[600];
    obj_key(obj, key, sizeof(key));
    c->eng_dirty = 1;
    rec *x = ctrl_omap_get(&c->objs[r], key);

    if (ev == CU_IEV_DELETED) {
        if (!x)
            return;
        ctrl_omap_del(&c->objs[r], key);
        if (r >= R_FIRST_OWNER) {
            ctrl_log(c, 1, "%s %s deleted", res_tab[r].kind, key);
            const ctrl_integ *in = ctrl_integ_of(r);
            if (in && in->deleted)
                in->deleted(c, x);
        } else if (r == R_WL) {
            if (x->assumed) {
                x->assumed = 0;
                c->nassumed--;
            }
            if (x->evict_pending)
                c->nevict_pending--;
            ctrl_eng_remove(c, x);
            ctrl_set_decode(c, x, NULL);
            ctrl_mark_owner(c, x->owner_r, x->owner);
            wl_changed(c, x, 1);
        } else {
            c->need_rebuild = 1;
            x->pinned = 1; /* the engine may point into it */
            ctrl_set_decode(c, x, NULL);
            if (r == R_CQ || r == R_LQ || r == R_COHORT) {
                char ck[700];
                snprintf(ck, sizeof(ck), "%s/%s",
                         r == R_CQ   ? "cq"
                         : r == R_LQ ? "lq"
                                     : "cohort",
                         key);
                cu_coalescer_forget(c->co, ck);
            }
        }
        ctrl_rec_free(x);
        return;
    }

    if (!x) {
        x = calloc(1, sizeof(*x));
        if (!x || !(x->key = strdup(key)) || ctrl_omap_add(&c->objs[r], x) != 0) {
            if (x)
                free(x->key);
            free(x);
            ctrl_log(c, 0, "out of memory keeping %s %s", res_tab[r].kind, key);
            return;
        }
        x->r = r;
        x->idx = -1;
    }
    free(x->rv);
    x->rv = ctrl_sdup(cu_jpath_str(obj, "metadata.resourceVersion"));

    if (r >= R_FIRST_OWNER) {
        free(x->uid);
        x->uid = ctrl_sdup(cu_jpath_str(obj, "metadata.uid"));
        const char *ct = cu_jpath_str(obj, "metadata.creationTimestamp");
        int64_t ms = 0;
        x->created_ms = ct && cu_time_parse(ct, &ms) == 0 ? ms : 0;
        const ctrl_integ *in = ctrl_integ_of(r);
        if (in && in->decode)
            in->decode(c, x, obj);
        c->pr_dirty = 1;
        return;
    }

    char why[600];
    cu_world *w = ctrl_decode_obj(c, r, obj, why, sizeof(why));
    if (r == R_WL) {
        if (!w) {
            report_undecodable(c, x, r, obj, why);
            return;
        }
        /* Kueue's effective requests: excluded resources, transformations */
        if (cu_world_effective_requests(w, c->cfg.cf) != CU_OK) {
            ctrl_world_free(w);
            report_undecodable(c, x, r, obj, "out of memory computing its effective requests");
            return;
        }
        report_decodable(c, x, r, obj);
        ctrl_set_decode(c, x, w);
        x->hold = 0;
        ctrl_decode_wl_extras(c, x, obj);
        /* every decode carries the queue time, not only the engine's copy:
         * the wait-time metrics read the current decode at admission */
        ctrl_job_order(c, x);
        const cu_workload *wl = ctrl_wl_of(x);
        if (x->evict_pending &&
            (ctrl_cond_is(wl, "Evicted", "True") || !cu_workload_has_quota(wl))) {
            x->evict_pending = 0; /* written (or moot) */
            c->nevict_pending--;
        }
        ctrl_wl_sync(c, x);
        ctrl_mark_owner(c, x->owner_r, x->owner);
        wl_changed(c, x, 0);
        ctrl_tas_wl_changed(c, x);
        c->need_views = 1;
        c->pr_dirty = 1;
        ctrl_mark_wl(c, x->key);
        return;
    }

    /* queue-shaping objects: the engine is rebuilt, unless only the status
     * changed (our own status writes come back here) */
    size_t shape;
    {
        json_object *t = json_object_new_object();
        static const char *const parts[] = { "spec", "value", "globalDefault" };
        for (size_t i = 0; i < 3; i++)
            if (cu_jget(obj, parts[i]))
                json_object_object_add(t, parts[i], json_object_get(cu_jget(obj, parts[i])));
        json_object *md = cu_jget(obj, "metadata");
        if (cu_jget(md, "labels"))
            json_object_object_add(t, "labels", json_object_get(cu_jget(md, "labels")));
        if (cu_jget(md, "annotations")) /* validated too (size, keys) */
            json_object_object_add(t, "annotations", json_object_get(cu_jget(md, "annotations")));
        if (cu_jget(md, "deletionTimestamp")) /* a ClusterQueue turns Terminating */
            json_object_object_add(t, "deleting", json_object_new_boolean(1));
        if (r == R_AC && w && w->checks.n) /* its Active condition makes queues (in)active */
            json_object_object_add(t, "active",
                                   json_object_new_boolean(w->checks.items[0]->active));
        shape =
            cu_hash_str(json_object_to_json_string_ext(t, JSON_C_TO_STRING_PLAIN)) ^ (w ? 1 : 0);
        json_object_put(t);
    }
    if (x->w && w && x->shape == shape) {
        ctrl_world_free(w); /* same for the engine: keep the decode it points at */
        w = x->w;
    } else {
        x->shape = shape;
        if (x->w || w)
            c->need_rebuild = 1;
        if (r == R_CQ || r == R_LQ)
            c->deact_dirty = 1; /* a stop policy may evict admitted Workloads */
        if (w)
            ctrl_log_invalid(c, r, w);
    }
    if (!w)
        report_undecodable(c, x, r, obj, why);
    else
        report_decodable(c, x, r, obj);
    if (w != x->w) {
        x->pinned = 1; /* the engine may point into it */
        ctrl_set_decode(c, x, w);
    }
    if (r == R_CQ || r == R_RF) {
        json_object *md = cu_jget(obj, "metadata");
        free(x->fins);
        json_object *fins = cu_jget(md, "finalizers");
        x->fins = ctrl_jtext(fins);
        x->has_fin = 0;
        for (size_t i = 0, n = cu_jarr_len(fins); i < n; i++) {
            const char *f = json_object_get_string(json_object_array_get_idx(fins, i));
            x->has_fin |= f && strcmp(f, CU_FINALIZER_IN_USE) == 0;
        }
        x->deleting = cu_jget(md, "deletionTimestamp") != NULL;
    }
    if (r == R_RF) {
        free(x->rf_spec);
        json_object *spec = cu_jget(obj, "spec"), *t = json_object_new_object();
        if (cu_jget(spec, "nodeLabels"))
            json_object_object_add(t, "nodeLabels", json_object_get(cu_jget(spec, "nodeLabels")));
        if (cu_jget(spec, "tolerations"))
            json_object_object_add(t, "tolerations", json_object_get(cu_jget(spec, "tolerations")));
        x->rf_spec = ctrl_jtext(t);
        json_object_put(t);
    }
    if (r == R_CQ || r == R_LQ || r == R_COHORT) {
        json_object *status = cu_jget(obj, "status");
        free(x->st_conds);
        x->st_conds = ctrl_jtext(cu_jget(status, "conditions"));
        if (status) {
            char ck[700];
            snprintf(ck, sizeof(ck), "%s/%s", r == R_CQ ? "cq" : r == R_LQ ? "lq" : "cohort", key);
            json_object *b = json_object_new_object();
            json_object_object_add(b, "status", json_object_get(status));
            cu_coalescer_seed(c->co, ck, b);
            json_object_put(b);
        }
    }
    const char *lqname = cu_jpath_str(obj, "metadata.name");
    if (r == R_LQ && lqname && strcmp(lqname, "default") == 0 && c->need_rebuild) {
        /* Jobs of its namespace may now be managed (LocalQueue "default") */
        for (int o = R_FIRST_OWNER; o < NRES; o++) {
            OMAP_FOREACH(&c->objs[o], jr)
            {
                if (o != R_JOB || (jr->job && !jr->job->label_queue))
                    ctrl_mark_owner(c, o, jr->key);
            }
        }
    }
}
