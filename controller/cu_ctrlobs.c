/*
 * cu_ctrlobs.c - observability: Kueue's metrics fed from events and
 * refreshed from the engine, /healthz and /readyz, /metrics and the debug pages.
 */
#include "cu_ctrl_int.h"

/* ---------------- metrics (events) ---------------- */

const char *ctrl_role(const ctrl *c)
{
    return !c->elect ? "standalone" : c->leading ? "leader" : "follower";
}

const char *ctrl_pclass(const cu_workload *wl) { return wl && wl->pc_name ? wl->pc_name : ""; }

double ctrl_secs(int64_t ms) { return ms > 0 ? (double)ms / 1000.0 : 0.0; }

/* When the workload entered its queue last: the Requeued transition, else
 * its creation. */
int64_t ctrl_queued_at(const cu_workload *wl)
{
    const cu_condition *rq = cu_workload_cond(wl, "Requeued");
    if (rq && rq->status && strcmp(rq->status, "True") == 0 && rq->ltt_ms)
        return rq->ltt_ms;
    return wl->meta.has_created ? wl->meta.created_ms : 0;
}

/* The parent of cohort name, from the Cohort objects (NULL: a root, or not
 * known), and the root of its tree (name itself for a root). Cohort
 * chains are at most 64 deep here (a cycle makes no cohort active). */
const char *ctrl_cohort_parent(ctrl *c, const char *name)
{
    /* the Cohort object's spec.parentName; a Cohort only ClusterQueues
     * name has no object and no parent */
    rec *x = ctrl_omap_get(&c->objs[R_COHORT], name);
    return x && x->w && x->w->cohorts.n ? x->w->cohorts.items[0]->parent : NULL;
}

static const char *cohort_root(ctrl *c, const char *name)
{
    for (int depth = 0; name && depth < 64; depth++) {
        const char *parent = ctrl_cohort_parent(c, name);
        if (!parent)
            break;
        name = parent;
    }
    return name;
}

void ctrl_m_wl(ctrl *c, cu_metric_family *cqf, cu_metric_family *lqf, const cu_workload *wl,
               const char *cq, int observe, double v)
{
    const char *a[] = { cq ? cq : "", ctrl_pclass(wl), ctrl_role(c) };
    const char *b[] = { wl->queue_name ? wl->queue_name : "", wl->meta.ns ? wl->meta.ns : "",
                        ctrl_pclass(wl), ctrl_role(c) };
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
void ctrl_m_evicted(ctrl *c, rec *w, const cu_workload *wl, const char *cq, const char *reason,
                    const char *cause)
{
    const char *a[] = { cq ? cq : "", reason, cause, ctrl_pclass(wl), ctrl_role(c) };
    const char *b[] = { wl->queue_name ? wl->queue_name : "",
                        wl->meta.ns ? wl->meta.ns : "",
                        reason,
                        cause,
                        ctrl_pclass(wl),
                        ctrl_role(c) };
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

/* ---------------- health probes and metrics ---------------- */

static int ready(const ctrl *c, char *why, size_t n)
{
    if (c->stopping)
        snprintf(why, n, "stopping");
    else if (c->nsynced < c->ninf)
        snprintf(why, n, "informers synced: %d of %d", c->nsynced, c->ninf);
    else if (c->elect && c->leading && !c->started)
        snprintf(why, n, "leading, admission cycles not started yet");
    else if (ctrl_webhook_not_ready(c, why, n))
        return 0;
    else
        return 1;
    return 0;
}

int ctrl_health_handler(void *ud, const char *path, const char *query, const char *accept,
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

/* The peak RSS of this process's own memory: VmHWM. Not ru_maxrss,
 * which Linux carries across exec: a parent that starts us with vfork (Go's
 * os/exec does, as Kueue's performance runner) lends us its memory until
 * the exec, and its peak would be reported as ours. */
long ctrl_peak_rss_kib(void)
{
    long kib = -1;
    FILE *f = fopen("/proc/self/status", "r");
    if (f) {
        char line[256];
        while (fgets(line, sizeof(line), f))
            if (strncmp(line, "VmHWM:", 6) == 0) {
                kib = strtol(line + 6, NULL, 10);
                break;
            }
        fclose(f);
    }
    struct rusage ru;
    if (kib < 0 && getrusage(RUSAGE_SELF, &ru) == 0)
        kib = ru.ru_maxrss;
    return kib < 0 ? 0 : kib;
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

static void fset(cu_metric_family *f, const char *const v[], double x) { cu_metric_set(f, v, x); }

/* An amount of resource in whole units (cores, bytes, GPUs): Kueue's
 * ClusterQueue and LocalQueue gauges. */
static double q(const char *resource, int64_t v) { return cu_qty_res_float(resource, v); }

/* Kueue's cohort-subtree gauges carry its internal amounts, not units:
 * millicores for cpu, the plain value for every other resource (bytes,
 * GPUs), which is how the engine counts them (cu_qty_res_scale). Found
 * running Kueue beside Cueue (bench/vs-kueue.sh): a dashboard made for
 * Kueue reads these. */
static double kq(int64_t v) { return (double)v; }

/* The TAS gauges (docs/metrics.md), per TAS flavor: its free quota over
 * the roots of the cohort forest, and from its placement snapshot. */
static void tas_gauges(ctrl *c)
{
    cu_kueue_metrics *k = &c->km;
    size_t ntas = cu_engine_ntas(c->eng), nnodes = 0;
    if (!ntas)
        return;
    const char **nodes = ctrl_tas_node_names(c, &nnodes);
    for (size_t f = 0; f < ntas; f++) {
        const char *flavor = NULL;
        struct cu_tas *t = cu_engine_tas(c->eng, f, &flavor);
        if (!t || !flavor)
            continue;
        const char *res[32];
        size_t nres = 0;
        /* the resources the ClusterQueues give it quota of, and the free
         * quota at the roots (a ClusterQueue in no cohort, a root Cohort) */
        for (size_t i = 0, n = cu_engine_ncqs(c->eng); i < n; i++) {
            const cu_cq_info *ci = cu_engine_cq_info(c->eng, i);
            for (size_t u = 0; u < ci->nusage; u++) {
                const cu_fr_usage *fu = &ci->usage[u];
                if (strcmp(fu->flavor, flavor) != 0)
                    continue;
                int seen = 0;
                for (size_t r = 0; r < nres && !seen; r++)
                    seen = strcmp(res[r], fu->resource) == 0;
                if (!seen && nres < 32)
                    res[nres++] = fu->resource;
                if (!ci->cohort) {
                    const char *a[] = { flavor, fu->resource };
                    int64_t free = fu->subtree - fu->total;
                    cu_metric_inc(k->cueue_tas_quota_free, a, q(fu->resource, free > 0 ? free : 0));
                }
            }
        }
        for (size_t i = 0, n = cu_engine_ncohorts(c->eng); i < n; i++) {
            const cu_cohort_info *hi = cu_engine_cohort_info(c->eng, i);
            for (size_t u = 0; !hi->parent && u < hi->nusage; u++) {
                const cu_fr_usage *fu = &hi->usage[u];
                if (strcmp(fu->flavor, flavor) != 0)
                    continue;
                const char *a[] = { flavor, fu->resource };
                int64_t free = fu->subtree - fu->total;
                cu_metric_inc(k->cueue_tas_quota_free, a, q(fu->resource, free > 0 ? free : 0));
            }
        }
        cu_metrics_tas_flavor(k, flavor, t, res, nres, nodes, nodes ? nnodes : 0,
                              cu_engine_tas_pending_shape(c->eng, f));
    }
    free(nodes);
}

/* Gauges are rebuilt from the engine's views at each scrape (so deleted
 * queues vanish); counters kept by the controller are copied in. */
static void refresh_gauges(ctrl *c)
{
    cu_kueue_metrics *k = &c->km;
    const char *rr = ctrl_role(c);
    cu_metric_family *reset[] = {
        k->pending_workloads,
        k->reserving_active_workloads,
        k->admitted_active_workloads,
        k->cluster_queue_status,
        k->cluster_queue_info,
        k->cluster_queue_resource_reservation,
        k->cluster_queue_resource_usage,
        k->cluster_queue_nominal_quota,
        k->cluster_queue_borrowing_limit,
        k->cluster_queue_lending_limit,
        k->cluster_queue_weighted_share,
        k->finished_workloads,
        k->local_queue_pending_workloads,
        k->local_queue_finished_workloads,
        k->local_queue_reserving_active_workloads,
        k->local_queue_admitted_active_workloads,
        k->local_queue_status,
        k->local_queue_resource_reservation,
        k->local_queue_resource_usage,
        k->cohort_info,
        k->cohort_weighted_share,
        k->cohort_subtree_quota,
        k->cohort_subtree_resource_reservations,
        k->cohort_subtree_admitted_active_workloads,
        k->cueue_pending_workloads_by_reason,
        k->cueue_tas_quota_free,
        k->cueue_tas_placeable,
        k->cueue_tas_largest_node_free,
        k->cueue_tas_node_free,
    };
    for (size_t i = 0; i < sizeof(reset) / sizeof(reset[0]); i++)
        cu_metric_reset_family(reset[i]);
    const char *lv[] = { NULL };
    fset(k->cueue_leader, lv, ctrl_leading(c) ? 1 : 0);
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
    OMAP_FOREACH(&c->objs[R_WL], w)
    {
        const cu_workload *wl = ctrl_wl_of(w);
        if (!wl || !cu_workload_finished(wl) || !wl->adm_cq)
            continue;
        const char *a[] = { wl->adm_cq, rr };
        cu_metric_inc(k->finished_workloads, a, 1);
        const char *b[] = { wl->queue_name ? wl->queue_name : "", wl->meta.ns ? wl->meta.ns : "",
                            rr };
        cu_metric_inc(k->local_queue_finished_workloads, b, 1);
    }
    /* pending: active vs inadmissible, and by reason */
    for (size_t i = 0, n = cu_engine_nworkloads(c->eng); i < n; i++) {
        const cu_wl_info *w = cu_engine_workload_info(c->eng, i);
        if (!ctrl_pending_rec(c, w))
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
        int term = ci->reason && strcmp(ci->reason, "Terminating") == 0;
        int cur = term ? 2 : ci->active ? 1 : 0;
        for (int s2 = 0; s2 < 3; s2++) {
            const char *a[] = { cq, sts[s2], rr };
            fset(k->cluster_queue_status, a, s2 == cur ? 1 : 0);
        }
        for (int s2 = 0; s2 < 2; s2++) { /* every queue has both pending series */
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
            fset(k->cluster_queue_resource_reservation, a, q(fu->resource, fu->total));
            fset(k->cluster_queue_resource_usage, a, q(fu->resource, fu->admitted));
            fset(k->cluster_queue_nominal_quota, a, q(fu->resource, fu->nominal));
            fset(k->cluster_queue_borrowing_limit, a,
                 fu->has_blimit ? q(fu->resource, fu->blimit) : (double)INFINITY);
            fset(k->cluster_queue_lending_limit, a,
                 fu->has_llimit ? q(fu->resource, fu->llimit) : (double)INFINITY);
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
            fset(k->local_queue_resource_reservation, a, q(fu->resource, fu->total));
            fset(k->local_queue_resource_usage, a, q(fu->resource, fu->admitted));
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
            /* as Kueue: the subtree's quota (its own nominal plus what its
             * children put in), and no series for a zero amount */
            if (fu->subtree > 0)
                fset(k->cohort_subtree_quota, a, kq(fu->subtree));
            if (fu->total > 0)
                fset(k->cohort_subtree_resource_reservations, a, kq(fu->total));
        }
        fset(k->cohort_subtree_admitted_active_workloads, ws, 0);
    }
    tas_gauges(c);
    /* admitted workloads in each cohort's subtree: every ClusterQueue adds
     * its own to each cohort up its chain */
    for (size_t j = 0, nq = cu_engine_ncqs(c->eng); j < nq; j++) {
        const cu_cq_info *ci = cu_engine_cq_info(c->eng, j);
        const char *seen[64];
        const char *co = ci->cohort;
        for (int depth = 0; co && depth < 64; depth++, co = ctrl_cohort_parent(c, co)) {
            int again = 0; /* a cohort cycle: count each cohort once */
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

static void json_str_out(cu_buf *b, const char *s)
{
    json_object *o = json_object_new_string(s ? s : "");
    cu_buf_puts(b, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
    json_object_put(o);
}

const cu_wl_info **ctrl_pending_views(ctrl *c, size_t *out_n)
{
    size_t n = c->eng ? cu_engine_nworkloads(c->eng) : 0;
    const cu_wl_info **v = calloc(n ? n : 1, sizeof(*v));
    size_t k = 0;
    for (size_t i = 0; v && i < n; i++) {
        const cu_wl_info *w = cu_engine_workload_info(c->eng, i);
        if (ctrl_pending_rec(c, w) && w->position >= 0)
            v[k++] = w;
    }
    *out_n = k;
    return v;
}

const char *ctrl_engine_not_ready(ctrl *c, char *why, size_t n)
{
    why[0] = 0;
    if (ready(c, why, n) && (!ctrl_leading(c) || !c->eng))
        snprintf(why, n, "%s", !ctrl_leading(c) ? "not leading" : "no engine yet");
    return why[0] ? why : NULL;
}

/* GET /debug/pending[?clusterQueue=CQ|?localQueue=NS/LQ]: the pending
 * workloads in admission order, as the controller's engine sees them. */
static int debug_pending(ctrl *c, const char *query, cu_buf *b)
{
    char cq[300], lq[600];
    const char *want_cq = cu_vis_qparam(query, "clusterQueue", cq, sizeof(cq));
    const char *want_lq = cu_vis_qparam(query, "localQueue", lq, sizeof(lq));
    size_t k = 0;
    const cu_wl_info **v = ctrl_pending_views(c, &k);
    if (!v)
        return 500;
    json_object *doc = cu_status_pending_doc(v, k, want_cq, want_lq, cu_clock_system_now(NULL));
    free(v);
    if (!doc)
        return 500;
    /* each Workload's owner (a Job, a JobSet, a pod group's pods ...) */
    json_object *items = cu_jget(doc, "items");
    for (size_t i = 0, ni = cu_jarr_len(items); i < ni; i++) {
        json_object *it = json_object_array_get_idx(items, i);
        char key[600], own[600];
        snprintf(key, sizeof(key), "%s/%s", cu_jstr(it, "namespace"), cu_jstr(it, "name"));
        rec *x = ctrl_omap_get(&c->objs[R_WL], key);
        json_object *refs = x && x->owners ? cu_json_parse_str(x->owners) : NULL;
        if (cu_status_owner_text(refs, own, sizeof(own)))
            json_object_object_add(it, "owner", json_object_new_string(own));
        json_object_put(refs);
    }
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
    if (ctrl_engine_not_ready(c, why, sizeof(why))) {
        cu_buf_printf(b, "not ready: %s\n", why);
        return 503;
    }
    if (strcmp(path, "/debug/pending") == 0) {
        *ctype = "application/json";
        return debug_pending(c, query, b);
    }
    char key[600], fmt[16];
    if (!cu_vis_qparam(query, "workload", key, sizeof(key))) {
        cu_buf_puts(b, "missing ?workload=NAMESPACE/NAME\n");
        return 400;
    }
    int json = cu_vis_qparam(query, "format", fmt, sizeof(fmt)) && strcmp(fmt, "json") == 0;
    /* Workloads the engine does not hold right now: said from the record */
    char full[620];
    snprintf(full, sizeof(full), "%s%s", strchr(key, '/') ? "" : "default/", key);
    rec *wr = ctrl_omap_get(&c->objs[R_WL], full);
    const cu_workload *wwl = ctrl_wl_of(wr);
    if (wr && wr->idx < 0 && wwl) {
        char ts[40] = "";
        const char *state = cu_workload_finished(wwl) ? "finished"
                            : wr->hold ? "pending (a write conflicted; waiting for a newer version)"
                            : ctrl_in_backoff(c, wr) ? "pending (requeue backoff)"
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
                cu_buf_printf(b,
                              "  requeued after a backoff: considered again at %s "
                              "(requeue %d)\n",
                              ts, (int)wr->rq_count);
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

int ctrl_metrics_handler(void *ud, const char *path, const char *query, const char *accept,
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
