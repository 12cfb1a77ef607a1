/*
 * cu_sim.c - `cueue simulate`: load manifests, validate them, run the
 * admission engine with a fake clock until nothing changes, and render the
 * engine's views as a table (for people), JSON (for scripts) or a YAML
 * stream of the objects with the status the controller would write.
 * With --explain, the explanations of the named Workloads (or Jobs) from
 * cu_engine_explain replace (or, with an explicit -o table, follow) that
 * rendering.
 *
 * Every renderer reads the engine only through the cu_engine_*_info views
 * and copies what it keeps (node trees copy their strings), so no view is
 * held across another engine call. Output order never depends on the
 * engine's internal order: JSON and YAML lists are sorted here.
 */
#include "cu_sim.h"

#include "cu_exclude.h"
#include "cu_explain.h"
#include "cu_json.h"
#include "cu_status.h"
#include "cu_topology.h"
#include "cu_wlstatus.h"

#include <stdlib.h>
#include <string.h>

/* 2026-01-01T00:00:00Z, the default simulated "now". */
#define SIM_DEFAULT_NOW_MS INT64_C(1767225600000)
#define SIM_DEFAULT_MAX_CYCLES 100000

static int64_t sim_now(const cu_sim_opts *opts)
{
    return (opts && opts->now_ms) ? opts->now_ms : SIM_DEFAULT_NOW_MS;
}

/* ---------------- small node helpers ---------------- */

/* The build context: an arena plus a sticky failure flag so the builders
 * can be chained without checking every call. */
typedef struct sim_tb {
    cu_arena *a;
    int failed;
} sim_tb;

static cu_node *tb_check(sim_tb *tb, cu_node *n)
{
    if (!n)
        tb->failed = 1;
    return n;
}

static cu_node *tb_map(sim_tb *tb) { return tb_check(tb, cu_node_new_map(tb->a)); }
static cu_node *tb_seq(sim_tb *tb) { return tb_check(tb, cu_node_new_seq(tb->a)); }

/* A string scalar, or null when s is NULL. */
static cu_node *tb_str(sim_tb *tb, const char *s)
{
    return tb_check(tb, s ? cu_node_new_str(tb->a, s) : cu_node_new_null(tb->a));
}

static cu_node *tb_int(sim_tb *tb, int64_t v) { return tb_check(tb, cu_node_new_int(tb->a, v)); }
static cu_node *tb_bool(sim_tb *tb, int v) { return tb_check(tb, cu_node_new_bool(tb->a, v)); }

static cu_node *tb_qty(sim_tb *tb, const char *res, int64_t milli)
{
    char q[40];
    cu_qty_format_res(res, milli, q, sizeof q);
    return tb_str(tb, q);
}

static void tb_set(sim_tb *tb, cu_node *map, const char *key, cu_node *v)
{
    if (!map || !v || cu_node_set(tb->a, map, key, v) != CU_OK)
        tb->failed = 1;
}

static void tb_push(sim_tb *tb, cu_node *seq, cu_node *v)
{
    if (!seq || !v || cu_node_push(tb->a, seq, v) != CU_OK)
        tb->failed = 1;
}

/* Sort key of a built object: "ns/name" from metadata, or its "name". */
static const char *node_sort_ns(const cu_node *n)
{
    const char *ns = cu_node_scalar(cu_node_path(n, "metadata.namespace"));
    return ns ? ns : "";
}

static const char *node_sort_name(const cu_node *n)
{
    const char *s = cu_node_scalar(cu_node_path(n, "metadata.name"));
    if (!s)
        s = cu_node_scalar(cu_node_get(n, "name"));
    return s ? s : "";
}

static int node_cmp(const void *pa, const void *pb)
{
    const cu_node *a = *(cu_node *const *)pa, *b = *(cu_node *const *)pb;
    int c = strcmp(node_sort_ns(a), node_sort_ns(b));
    return c ? c : strcmp(node_sort_name(a), node_sort_name(b));
}

static void sort_seq(cu_node *seq)
{
    if (seq && seq->n > 1)
        qsort(seq->vals, seq->n, sizeof(seq->vals[0]), node_cmp);
}

/* Fills idx[0..n) with the indexes of strs in strcmp order (insertion sort:
 * pod sets assign a handful of resources). */
static void sort_idx(const char *const *strs, size_t n, size_t *idx)
{
    for (size_t i = 0; i < n; i++) {
        size_t j = i;
        while (j > 0 && strcmp(strs[idx[j - 1]], strs[i]) > 0) {
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = i;
    }
}

/* A map resource -> flavor (or resource -> usage) of one pod set
 * assignment, keys sorted. */
static cu_node *psa_map(sim_tb *tb, const cu_psa_info *p, int usage)
{
    cu_node *m = tb_map(tb);
    if (p->n == 0)
        return m;
    size_t *idx = cu_arena_alloc(tb->a, p->n * sizeof(*idx));
    if (!idx) {
        tb->failed = 1;
        return m;
    }
    sort_idx(p->resources, p->n, idx);
    for (size_t k = 0; k < p->n; k++) {
        size_t i = idx[k];
        cu_node *v = usage ? tb_qty(tb, p->resources[i], p->usage[i]) : tb_str(tb, p->flavors[i]);
        tb_set(tb, m, p->resources[i], v);
    }
    return m;
}

/* A pod set's topology assignment (TAS) in Kueue's v1beta2 shape
 * (api's cu_topo_assign_json), or NULL when it has none. */
static cu_node *psa_topo(sim_tb *tb, const cu_psa_info *p)
{
    if (!p->topo)
        return NULL;
    json_object *j = cu_topo_assign_json(p->topo);
    cu_node *n = j ? cu_node_from_json(tb->a, j) : NULL;
    json_object_put(j);
    return tb_check(tb, n);
}

/* The ClusterQueue a workload is queued in or admitted to. */
static const char *wl_cq(const cu_wl_info *wi)
{
    if (wi->cluster_queue)
        return wi->cluster_queue;
    if (wi->admitted && wi->obj && wi->obj->adm_cq)
        return wi->obj->adm_cq;
    return NULL;
}

/* The state of check name on wi (its status entry; Pending when none). */
static const cu_acstate *wl_check_state(const cu_wl_info *wi, const char *name)
{
    return wi->obj ? cu_workload_check(wi->obj, name) : NULL;
}

/* Check i of wi: {name, state} and, with full (the YAML status entry),
 * lastTransitionTime (its own, else the reservation's, else now) and
 * message. */
static cu_node *check_node(sim_tb *tb, const cu_wl_info *wi, size_t i, int full, int64_t now)
{
    const cu_acstate *ac = wl_check_state(wi, wi->checks[i]);
    cu_node *c = tb_map(tb);
    tb_set(tb, c, "name", tb_str(tb, wi->checks[i]));
    tb_set(tb, c, "state", tb_str(tb, cu_check_state_name(ac ? ac->state : CU_CHECK_PENDING)));
    if (!full)
        return c;
    char ts[32];
    int64_t at = ac && ac->ltt_ms ? ac->ltt_ms : wi->admitted_at_ms ? wi->admitted_at_ms : now;
    cu_time_format(at, ts, sizeof(ts));
    tb_set(tb, c, "lastTransitionTime", tb_str(tb, ts));
    tb_set(tb, c, "message", tb_str(tb, ac && ac->message ? ac->message : ""));
    return c;
}

/* ---------------- JSON ---------------- */

/* "waiting for AdmissionCheck(s): a (Pending), b (Retry)" */
static const char *checks_reason(cu_arena *a, const cu_wl_info *wi)
{
    cu_buf b;
    cu_buf_init(&b, 64 * 1024);
    cu_buf_puts(&b, "waiting for AdmissionCheck(s): ");
    for (size_t i = 0; i < wi->nchecks; i++) {
        const cu_acstate *st = wl_check_state(wi, wi->checks[i]);
        cu_buf_printf(&b, "%s%s (%s)", i ? ", " : "", wi->checks[i],
                      cu_check_state_name(st ? st->state : CU_CHECK_PENDING));
    }
    const char *out = cu_arena_strdup(a, b.data ? b.data : "");
    cu_buf_free(&b);
    return out;
}

static cu_node *json_workload(sim_tb *tb, const cu_wl_info *wi)
{
    cu_node *w = tb_map(tb);
    char *full = cu_arena_printf(tb->a, "%s/%s", wi->ns ? wi->ns : "", wi->name);
    tb_set(tb, w, "name", tb_str(tb, full ? full : ""));
    tb_set(tb, w, "admitted", tb_bool(tb, wi->admitted && !wi->checks_pending));
    if (wi->nchecks) { /* in a ClusterQueue with AdmissionChecks */
        tb_set(tb, w, "quotaReserved", tb_bool(tb, wi->admitted));
        cu_node *cs = tb_seq(tb);
        for (size_t i = 0; i < wi->nchecks; i++)
            tb_push(tb, cs, check_node(tb, wi, i, 0, 0));
        tb_set(tb, w, "admissionChecks", cs);
    }
    tb_set(tb, w, "clusterQueue", tb_str(tb, wl_cq(wi)));
    cu_node *pss = tb_seq(tb);
    if (wi->admitted) {
        for (size_t i = 0; i < wi->npsa; i++) {
            const cu_psa_info *p = &wi->psa[i];
            cu_node *ps = tb_map(tb);
            tb_set(tb, ps, "name", tb_str(tb, p->name));
            tb_set(tb, ps, "count", tb_int(tb, p->count));
            tb_set(tb, ps, "flavors", psa_map(tb, p, 0));
            if (p->topo)
                tb_set(tb, ps, "topologyAssignment", psa_topo(tb, p));
            tb_push(tb, pss, ps);
        }
    }
    tb_set(tb, w, "podSets", pss);
    tb_set(tb, w, "evictions", tb_int(tb, wi->evictions));
    tb_set(tb, w, "reason",
           tb_str(tb, wi->checks_pending ? checks_reason(tb->a, wi)
                      : wi->admitted     ? NULL
                                         : wi->message));
    return w;
}

static cu_node *json_cq(sim_tb *tb, const cu_cq_info *ci, int fs)
{
    cu_node *c = tb_map(tb);
    tb_set(tb, c, "name", tb_str(tb, ci->name));
    tb_set(tb, c, "cohort", tb_str(tb, ci->cohort));
    tb_set(tb, c, "pending", tb_int(tb, ci->pending));
    tb_set(tb, c, "admitted", tb_int(tb, ci->admitted));
    if (ci->reserving != ci->admitted) /* quota reserved, admission checks not all Ready */
        tb_set(tb, c, "reserving", tb_int(tb, ci->reserving));
    cu_node *us = tb_seq(tb);
    for (size_t i = 0; i < ci->nusage; i++) {
        const cu_fr_usage *u = &ci->usage[i];
        cu_node *e = tb_map(tb);
        tb_set(tb, e, "flavor", tb_str(tb, u->flavor));
        tb_set(tb, e, "resource", tb_str(tb, u->resource));
        tb_set(tb, e, "total", tb_qty(tb, u->resource, u->total));
        tb_set(tb, e, "borrowed", tb_qty(tb, u->resource, u->borrowed));
        tb_set(tb, e, "nominal", tb_qty(tb, u->resource, u->nominal));
        tb_push(tb, us, e);
    }
    tb_set(tb, c, "usage", us);
    if (fs)
        tb_set(tb, c, "weightedShare", tb_int(tb, ci->weighted_share));
    return c;
}

static cu_node *json_cohort(sim_tb *tb, const cu_cohort_info *hi)
{
    cu_node *c = tb_map(tb);
    tb_set(tb, c, "name", tb_str(tb, hi->name));
    tb_set(tb, c, "parent", tb_str(tb, hi->parent));
    tb_set(tb, c, "weightedShare", tb_int(tb, hi->weighted_share));
    return c;
}

static cu_err render_json(cu_engine *e, cu_arena *a, int fs, cu_buf *out)
{
    sim_tb tb = { a, 0 };
    cu_node *root = tb_map(&tb);
    cu_node *wls = tb_seq(&tb);
    size_t n = cu_engine_nworkloads(e);
    for (size_t i = 0; i < n && !tb.failed; i++)
        tb_push(&tb, wls, json_workload(&tb, cu_engine_workload_info(e, i)));
    cu_node *cqs = tb_seq(&tb);
    n = cu_engine_ncqs(e);
    for (size_t i = 0; i < n && !tb.failed; i++)
        tb_push(&tb, cqs, json_cq(&tb, cu_engine_cq_info(e, i), fs));
    cu_node *cos = NULL;
    if (fs) {
        cos = tb_seq(&tb);
        n = cu_engine_ncohorts(e);
        for (size_t i = 0; i < n && !tb.failed; i++)
            tb_push(&tb, cos, json_cohort(&tb, cu_engine_cohort_info(e, i)));
    }
    if (tb.failed)
        return CU_ENOMEM;
    sort_seq(wls);
    sort_seq(cqs);
    sort_seq(cos);
    tb_set(&tb, root, "workloads", wls);
    tb_set(&tb, root, "clusterQueues", cqs);
    if (fs)
        tb_set(&tb, root, "cohorts", cos);
    if (tb.failed)
        return CU_ENOMEM;
    cu_err err = cu_node_emit_json(root, out, 2);
    if (!err)
        err = cu_buf_puts(out, "\n");
    return err;
}

/* ---------------- YAML ---------------- */

static cu_node *yaml_obj(sim_tb *tb, const char *kind, const char *ns, const char *name)
{
    cu_node *o = tb_map(tb);
    tb_set(tb, o, "apiVersion", tb_str(tb, CU_GROUP "/v1beta2"));
    tb_set(tb, o, "kind", tb_str(tb, kind));
    cu_node *md = tb_map(tb);
    tb_set(tb, md, "name", tb_str(tb, name));
    if (ns)
        tb_set(tb, md, "namespace", tb_str(tb, ns));
    tb_set(tb, o, "metadata", md);
    return o;
}

/* A Workload condition (status/'s layout). */
static cu_node *yaml_cond(sim_tb *tb, const char *type, int status, const char *reason,
                          const char *message, int64_t ltt_ms)
{
    return tb_check(tb, cu_status_cond_node(tb->a, type, status, reason, message, ltt_ms));
}

/* A Workload condition status/ decided (cu_wlstatus.h). */
static cu_node *yaml_wlcond(sim_tb *tb, const cu_wlcond *k, int64_t ltt_ms)
{
    return yaml_cond(tb, k->type, k->status, k->reason, k->message, ltt_ms);
}

/* A queue object with the status status/ computes (NULL on OOM). */
static cu_node *yaml_queue(sim_tb *tb, const char *kind, const char *ns, const char *name,
                           const cu_qstatus *qs, cu_err err, int64_t now)
{
    cu_node *o = yaml_obj(tb, kind, ns, name);
    tb_set(tb, o, "status", err ? NULL : cu_qstatus_node(tb->a, qs, now));
    return o;
}

static cu_node *yaml_cq(sim_tb *tb, const cu_cq_info *ci, int fs, int64_t now)
{
    cu_qstatus qs;
    cu_err err = cu_qstatus_cq(tb->a, ci, fs, &qs);
    return yaml_queue(tb, "ClusterQueue", NULL, ci->name, &qs, err, now);
}

/* A Cohort object: its status has only fairSharing in Kueue. */
static cu_node *yaml_cohort(sim_tb *tb, const cu_cohort_info *hi)
{
    cu_qstatus qs;
    cu_qstatus_cohort(hi, 1, &qs);
    return yaml_queue(tb, "Cohort", NULL, hi->name, &qs, CU_OK, 0);
}

static cu_node *yaml_lq(sim_tb *tb, const cu_lq_info *li, int64_t now)
{
    cu_qstatus qs;
    cu_err err = cu_qstatus_lq(tb->a, li, &qs);
    return yaml_queue(tb, "LocalQueue", li->ns, li->name, &qs, err, now);
}

/* The conditions an eviction leaves, as Kueue writes them:
 *  - while the victim still holds quota (evicting): Evicted=True with the
 *    eviction reason and, for a preemption, Preempted=True with the
 *    preemption reason; both carry the eviction message;
 *  - once the quota is released and the workload is pending again, the
 *    same two stay True (until it is admitted again) and Requeued is set:
 *    True for a preemption, False (reason = the eviction reason) for the
 *    others (stopped queues, deactivation), which wait to be restarted;
 *  - when it is admitted again, Evicted and Preempted turn False with
 *    reason QuotaReserved and the message "Previously: <message>";
 *    Requeued stays as it was. */
static void yaml_eviction_conds(sim_tb *tb, cu_node *conds, const cu_wl_info *wi, int64_t now)
{
    if (!wi->evicted_reason)
        return;
    const char *msg = wi->evicted_message ? wi->evicted_message : "";
    int64_t at = wi->evicted_at_ms ? wi->evicted_at_ms : now;
    int preempted = strcmp(wi->evicted_reason, "Preempted") == 0;
    if (wi->admitted && !wi->evicting) {
        /* admitted again after the eviction */
        int64_t adm = wi->admitted_at_ms ? wi->admitted_at_ms : now;
        size_t n = strlen(msg) + sizeof("Previously: ");
        char *buf = cu_arena_alloc(tb->a, n);
        if (!buf) {
            tb->failed = 1;
            return;
        }
        cu_wlcond k;
        cu_wlstatus_readmitted("Evicted", msg, buf, n, &k);
        tb_push(tb, conds, yaml_wlcond(tb, &k, adm));
        if (wi->preempted_reason) {
            cu_wlstatus_readmitted("Preempted", msg, buf, n, &k);
            tb_push(tb, conds, yaml_wlcond(tb, &k, adm));
        }
        tb_push(tb, conds, yaml_cond(tb, "Requeued", preempted, wi->evicted_reason, msg, at));
        return;
    }
    cu_wlcond ev[2];
    size_t nev = cu_wlstatus_evicted(wi->evicted_reason, wi->preempted_reason, msg, ev);
    for (size_t i = 0; i < nev; i++)
        tb_push(tb, conds, yaml_wlcond(tb, &ev[i], at));
    if (!wi->admitted)
        tb_push(tb, conds, yaml_cond(tb, "Requeued", preempted, wi->evicted_reason, msg, at));
}

static cu_node *yaml_wl(sim_tb *tb, const cu_wl_info *wi, int64_t now)
{
    cu_node *o = yaml_obj(tb, "Workload", wi->ns, wi->name);
    cu_node *st = tb_map(tb);
    cu_node *conds = tb_seq(tb);
    if (wi->admitted) {
        const char *cq = wl_cq(wi);
        cu_node *adm = tb_map(tb);
        tb_set(tb, adm, "clusterQueue", tb_str(tb, cq));
        cu_node *psas = tb_seq(tb);
        for (size_t i = 0; i < wi->npsa; i++) {
            const cu_psa_info *p = &wi->psa[i];
            cu_node *ps = tb_map(tb);
            tb_set(tb, ps, "name", tb_str(tb, p->name));
            tb_set(tb, ps, "flavors", psa_map(tb, p, 0));
            tb_set(tb, ps, "resourceUsage", psa_map(tb, p, 1));
            tb_set(tb, ps, "count", tb_int(tb, p->count));
            if (p->topo)
                tb_set(tb, ps, "topologyAssignment", psa_topo(tb, p));
            tb_push(tb, psas, ps);
        }
        tb_set(tb, adm, "podSetAssignments", psas);
        tb_set(tb, st, "admission", adm);
        int64_t at = wi->admitted_at_ms ? wi->admitted_at_ms : now;
        size_t bn = (cq ? strlen(cq) : 0) + sizeof("Quota reserved in ClusterQueue ");
        char *buf = cu_arena_alloc(tb->a, bn);
        if (!buf) {
            tb->failed = 1;
            return o;
        }
        cu_wlcond k[2];
        size_t nk = cu_wlstatus_admission(cq, wi->checks_pending, buf, bn, k);
        for (size_t i = 0; i < nk; i++)
            tb_push(tb, conds, yaml_wlcond(tb, &k[i], at));
    } else {
        tb_push(tb, conds,
                yaml_cond(tb, "QuotaReserved", 0, wi->reason ? wi->reason : "Pending", wi->message,
                          now));
        if (wi->evicted_reason)
            tb_push(tb, conds,
                    yaml_cond(tb, "Admitted", 0, "NoReservation", "The workload has no reservation",
                              wi->evicted_at_ms ? wi->evicted_at_ms : now));
    }
    yaml_eviction_conds(tb, conds, wi, now);
    if (wi->nchecks) {
        cu_node *cs = tb_seq(tb);
        for (size_t i = 0; i < wi->nchecks; i++)
            tb_push(tb, cs, check_node(tb, wi, i, 1, now));
        tb_set(tb, st, "admissionChecks", cs);
    }
    if (wi->finished && wi->obj) {
        const cu_condition *f = cu_workload_cond(wi->obj, "Finished");
        if (f)
            tb_push(
                tb, conds,
                yaml_cond(tb, "Finished", 1, f->reason, f->message, f->ltt_ms ? f->ltt_ms : now));
    }
    tb_set(tb, st, "conditions", conds);
    tb_set(tb, o, "status", st);
    return o;
}

static cu_err emit_stream(const cu_node *seq, cu_buf *out, int *first)
{
    for (size_t i = 0; seq && i < seq->n; i++) {
        cu_err err = CU_OK;
        if (!*first)
            err = cu_buf_puts(out, "---\n");
        *first = 0;
        if (!err)
            err = cu_node_emit_yaml(seq->vals[i], out);
        if (!err && out->len > 0 && out->data[out->len - 1] != '\n')
            err = cu_buf_puts(out, "\n");
        if (err)
            return err;
    }
    return CU_OK;
}

static cu_err render_yaml(cu_engine *e, cu_arena *a, int fs, int64_t now, cu_buf *out)
{
    sim_tb tb = { a, 0 };
    cu_node *cqs = tb_seq(&tb), *cos = tb_seq(&tb), *lqs = tb_seq(&tb), *wls = tb_seq(&tb);
    size_t n = cu_engine_ncqs(e);
    for (size_t i = 0; i < n && !tb.failed; i++)
        tb_push(&tb, cqs, yaml_cq(&tb, cu_engine_cq_info(e, i), fs, now));
    /* Cohort objects only: an implicit cohort (named by a ClusterQueue,
     * no Cohort object) has nowhere to write a status */
    n = fs ? cu_engine_ncohorts(e) : 0;
    for (size_t i = 0; i < n && !tb.failed; i++) {
        const cu_cohort_info *hi = cu_engine_cohort_info(e, i);
        if (hi->obj)
            tb_push(&tb, cos, yaml_cohort(&tb, hi));
    }
    n = cu_engine_nlqs(e);
    for (size_t i = 0; i < n && !tb.failed; i++)
        tb_push(&tb, lqs, yaml_lq(&tb, cu_engine_lq_info(e, i), now));
    n = cu_engine_nworkloads(e);
    for (size_t i = 0; i < n && !tb.failed; i++)
        tb_push(&tb, wls, yaml_wl(&tb, cu_engine_workload_info(e, i), now));
    if (tb.failed)
        return CU_ENOMEM;
    sort_seq(cqs);
    sort_seq(cos);
    sort_seq(lqs);
    sort_seq(wls);
    int first = 1;
    cu_err err = emit_stream(cqs, out, &first);
    if (!err)
        err = emit_stream(cos, out, &first);
    if (!err)
        err = emit_stream(lqs, out, &first);
    if (!err)
        err = emit_stream(wls, out, &first);
    return err;
}

/* ---------------- table ---------------- */

#define TABLE_COLS 5

typedef struct sim_row {
    const char *c[TABLE_COLS];
} sim_row;

/* Appends rows (row 0 is the header) with columns padded to the widest
 * cell, indented by two spaces, no trailing blanks. */
static void table_rows(cu_buf *out, const sim_row *rows, size_t n)
{
    size_t w[TABLE_COLS] = { 0 };
    for (size_t r = 0; r < n; r++)
        for (int c = 0; c < TABLE_COLS; c++) {
            size_t l = strlen(rows[r].c[c]);
            if (l > w[c])
                w[c] = l;
        }
    for (size_t r = 0; r < n; r++) {
        cu_buf_puts(out, " ");
        for (int c = 0; c < TABLE_COLS; c++) {
            if (c == TABLE_COLS - 1)
                cu_buf_printf(out, " %s\n", rows[r].c[c]);
            else
                cu_buf_printf(out, " %-*s ", (int)w[c], rows[r].c[c]);
        }
    }
}

/* A topology assignment in short: each domain as its values joined by
 * "/" and ":" its pod count, the values it shares with the domain before
 * it (all but the lowest) left out: "rack-1/gpu-a:1, gpu-b:1, rack-2/gpu-c:2". */
static void table_topo(cu_buf *b, const cu_topo_assign *t)
{
    for (size_t d = 0; d < t->ndomains; d++) {
        const char *const *v = t->values + d * t->nlevels;
        size_t from = 0;
        if (d && t->nlevels > 1) {
            const char *const *pv = v - t->nlevels;
            size_t same = 0;
            while (same < t->nlevels - 1 && strcmp(v[same], pv[same]) == 0)
                same++;
            if (same == t->nlevels - 1)
                from = same;
        }
        cu_buf_puts(b, d ? ", " : "");
        for (size_t l = from; l < t->nlevels; l++)
            cu_buf_printf(b, "%s%s", l > from ? "/" : "", v[l]);
        cu_buf_printf(b, ":%d", (int)t->counts[d]);
    }
}

/* "main=3 [cpu=h100, nvidia.com/gpu=h100]" for every pod set, and its
 * topology assignment when TAS placed it: " on rack-1/gpu-a:2, gpu-b:1". */
static const char *table_podsets(cu_arena *a, const cu_wl_info *wi)
{
    cu_buf b;
    cu_buf_init(&b, 1 << 16);
    for (size_t i = 0; i < wi->npsa; i++) {
        const cu_psa_info *p = &wi->psa[i];
        cu_buf_printf(&b, "%s%s=%d [", i ? "  " : "", p->name, (int)p->count);
        size_t *idx = p->n ? cu_arena_alloc(a, p->n * sizeof(*idx)) : NULL;
        if (idx)
            sort_idx(p->resources, p->n, idx);
        for (size_t k = 0; k < p->n; k++) {
            size_t r = idx ? idx[k] : k;
            cu_buf_printf(&b, "%s%s=%s", k ? ", " : "", p->resources[r], p->flavors[r]);
        }
        cu_buf_puts(&b, "]");
        if (p->topo) {
            cu_buf_puts(&b, " on ");
            table_topo(&b, p->topo);
        }
    }
    const char *s = cu_arena_strdup(a, cu_buf_str(&b));
    cu_buf_free(&b);
    return s ? s : "";
}

/* "once", "2 times", ... */
static const char *table_times(cu_arena *a, int n)
{
    return n == 1 ? "once" : cu_arena_printf(a, "%d times", n);
}

static int cq_known(char **names, size_t n, const char *cq)
{
    for (size_t i = 0; cq && i < n; i++)
        if (strcmp(names[i], cq) == 0)
            return 1;
    return 0;
}

/* Appends the workload lines of one ClusterQueue (cq != NULL) or of the
 * workloads whose queue is missing (cq == NULL). Returns how many. */
static size_t table_workloads(cu_engine *e, cu_arena *a, cu_buf *out, const char *cq,
                              char **cqnames, size_t ncq)
{
    size_t n = cu_engine_nworkloads(e), width = 0, count = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (int admitted = 1; admitted >= 0; admitted--) {
            for (size_t i = 0; i < n; i++) {
                const cu_wl_info *wi = cu_engine_workload_info(e, i);
                const char *wcq = wl_cq(wi);
                int mine = cq ? (wcq && strcmp(wcq, cq) == 0) : !cq_known(cqnames, ncq, wcq);
                if (!mine || wi->finished || !!wi->admitted != admitted)
                    continue;
                size_t len = strlen(wi->ns ? wi->ns : "") + 1 + strlen(wi->name);
                if (pass == 0) {
                    if (len > width)
                        width = len;
                    count++;
                    continue;
                }
                char *full = cu_arena_printf(a, "%s/%s", wi->ns ? wi->ns : "", wi->name);
                const char *what;
                if (wi->admitted) {
                    what = table_podsets(a, wi);
                    if (wi->evicting)
                        what = cu_arena_printf(a, "%s  (being evicted: %s)", what,
                                               wi->evicted_reason ? wi->evicted_reason : "Evicted");
                    else if (wi->evictions)
                        what = cu_arena_printf(a, "%s  (evicted %s before)", what,
                                               table_times(a, wi->evictions));
                    if (wi->checks_pending)
                        what = cu_arena_printf(a, "%s  (%s)", what, checks_reason(a, wi));
                } else {
                    what = wi->message ? wi->message : "(no reason given)";
                    if (wi->evictions)
                        what = cu_arena_printf(a, "%s  (evicted %s)", what,
                                               table_times(a, wi->evictions));
                }
                cu_buf_printf(out, "  %-9s %-*s  %s\n",
                              !admitted            ? "pending:"
                              : wi->checks_pending ? "reserved:"
                                                   : "admitted:",
                              (int)width, full ? full : wi->name, what ? what : "");
            }
        }
    }
    return count;
}

static cu_err render_table(cu_engine *e, cu_arena *a, int fs, cu_buf *out)
{
    size_t ncq = cu_engine_ncqs(e);
    char **names = cu_arena_alloc(a, (ncq + 1) * sizeof(*names));
    if (!names)
        return CU_ENOMEM;
    for (size_t i = 0; i < ncq; i++) {
        const cu_cq_info *ci = cu_engine_cq_info(e, i);
        names[i] = cu_arena_strdup(a, ci->name);
        if (!names[i])
            return CU_ENOMEM;
    }
    /* ClusterQueues in name order, whatever order the engine keeps. */
    for (size_t i = 1; i < ncq; i++)
        for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            char *t = names[j];
            names[j] = names[j - 1];
            names[j - 1] = t;
        }

    for (size_t k = 0; k < ncq; k++) {
        const cu_cq_info *ci = NULL;
        for (size_t i = 0; i < ncq; i++) {
            ci = cu_engine_cq_info(e, i);
            if (strcmp(ci->name, names[k]) == 0)
                break;
        }
        if (k)
            cu_buf_puts(out, "\n");
        cu_buf_printf(out, "ClusterQueue %s ", ci->name);
        if (ci->cohort)
            cu_buf_printf(out, "(cohort %s)", ci->cohort);
        else
            cu_buf_puts(out, "(no cohort)");
        if (!ci->active)
            cu_buf_printf(out, " [inactive: %s]", ci->reason ? ci->reason : "Inactive");
        if (ci->reserving != ci->admitted) /* quota reserved, checks not all Ready */
            cu_buf_printf(out, "  %d admitted, %d reserved, %d pending\n", ci->admitted,
                          ci->reserving - ci->admitted, ci->pending);
        else
            cu_buf_printf(out, "  %d admitted, %d pending\n", ci->admitted, ci->pending);
        if (!ci->active && ci->message)
            cu_buf_printf(out, "  %s\n", ci->message);
        if (fs && ci->weighted_share == INT64_MAX)
            cu_buf_puts(out, "  weighted share: 9223372036854775807 (weight 0 and borrowing)\n");
        else if (fs)
            cu_buf_printf(out, "  weighted share: %lld\n", (long long)ci->weighted_share);
        if (ci->nusage == 0) {
            cu_buf_puts(out, "  (no quota)\n");
        } else {
            sim_row *rows = cu_arena_alloc(a, (ci->nusage + 1) * sizeof(*rows));
            if (!rows)
                return CU_ENOMEM;
            rows[0] = (sim_row){ { "FLAVOR", "RESOURCE", "NOMINAL", "USED", "BORROWED" } };
            for (size_t i = 0; i < ci->nusage; i++) {
                const cu_fr_usage *u = &ci->usage[i];
                char q[3][40];
                cu_qty_format_res(u->resource, u->nominal, q[0], sizeof q[0]);
                cu_qty_format_res(u->resource, u->total, q[1], sizeof q[1]);
                cu_qty_format_res(u->resource, u->borrowed, q[2], sizeof q[2]);
                rows[i + 1] =
                    (sim_row){ { cu_arena_strdup(a, u->flavor), cu_arena_strdup(a, u->resource),
                                 cu_arena_strdup(a, q[0]), cu_arena_strdup(a, q[1]),
                                 cu_arena_strdup(a, q[2]) } };
                for (int c = 0; c < TABLE_COLS; c++)
                    if (!rows[i + 1].c[c])
                        return CU_ENOMEM;
            }
            table_rows(out, rows, ci->nusage + 1);
        }
        if (table_workloads(e, a, out, names[k], names, ncq) == 0)
            cu_buf_puts(out, "  (no workloads)\n");
    }

    /* Workloads that cannot reach a ClusterQueue: missing LocalQueue, or a
     * LocalQueue pointing at a missing ClusterQueue. */
    cu_buf tail;
    cu_buf_init(&tail, 0);
    size_t nmiss = table_workloads(e, a, &tail, NULL, names, ncq);
    if (nmiss) {
        if (ncq)
            cu_buf_puts(out, "\n");
        cu_buf_puts(out, "Workloads whose LocalQueue or ClusterQueue is missing\n");
        cu_buf_append(out, cu_buf_str(&tail), tail.len);
    }
    int failed = tail.failed;
    cu_buf_free(&tail);
    if (ncq == 0 && nmiss == 0)
        cu_buf_puts(out, "No ClusterQueues and no workloads.\n");
    return (failed || out->failed) ? CU_ENOMEM : CU_OK;
}

/* ---------------- --explain ---------------- */

/* One --explain argument resolved against the inputs. */
typedef struct sim_target {
    const char *key; /* "ns/name" of the Workload, arena-owned */
    const char *job; /* "ns/name" of the Job it was named by, or NULL */
} sim_target;

/* At most this many names are listed when an --explain name is unknown. */
#define SIM_EXPLAIN_LIST 6

/* Appends ", KIND NAME" (or "; and N more" past the limit) to b. */
static void list_name(cu_buf *b, size_t *count, const char *kind, const char *name)
{
    if (*count < SIM_EXPLAIN_LIST)
        cu_buf_printf(b, "%s%s %s", *count ? ", " : "", kind, name);
    (*count)++;
}

/* Resolves arg ("[NAMESPACE/]NAME") to a Workload of w: a Workload of that
 * name, else the Workload built from a Job of that name. */
static cu_err sim_resolve(const cu_world *w, const char *arg, cu_arena *a, sim_target *t,
                          cu_diag *d)
{
    if (!arg || !*arg) {
        cu_diag_error(d, "--explain needs NAMESPACE/NAME (or NAME in namespace default) of a "
                         "Workload or a Job");
        return CU_EINVAL;
    }
    const char *slash = strchr(arg, '/');
    const char *ns = "default", *name = arg;
    if (slash) {
        ns = cu_arena_printf(a, "%.*s", (int)(slash - arg), arg);
        name = slash + 1;
        if (!ns)
            return CU_ENOMEM;
    }
    if (!*ns || !*name || strchr(name, '/')) {
        cu_diag_error(d,
                      "--explain '%s': expected NAMESPACE/NAME (or NAME in namespace "
                      "default) of a Workload or a Job",
                      arg);
        return CU_EINVAL;
    }
    const cu_workload *by_job = NULL;
    int own = 0; /* named by the Workload's own name, job-NAME-xxxxx */
    for (size_t i = 0; i < w->workloads.n; i++) {
        const cu_workload *wl = w->workloads.items[i];
        if (strcmp(wl->meta.ns ? wl->meta.ns : "default", ns) != 0)
            continue;
        if (!wl->job_name && strcmp(wl->meta.name, name) == 0) {
            t->key = cu_arena_printf(a, "%s/%s", ns, name);
            t->job = NULL;
            return t->key ? CU_OK : CU_ENOMEM;
        }
        if (wl->job_name && !by_job && strcmp(wl->job_name, name) == 0) {
            by_job = wl;
        } else if (wl->job_name && !by_job && strcmp(wl->meta.name, name) == 0) {
            by_job = wl;
            own = 1;
        }
    }
    if (by_job) {
        t->key = cu_arena_printf(a, "%s/%s", ns, by_job->meta.name);
        t->job = own ? NULL : cu_arena_printf(a, "%s/%s", ns, by_job->job_name);
        return t->key && (own || t->job) ? CU_OK : CU_ENOMEM;
    }
    /* Unknown: say what the namespace holds. */
    cu_buf b;
    cu_buf_init(&b, 4096);
    size_t count = 0;
    for (size_t i = 0; i < w->workloads.n; i++) {
        const cu_workload *wl = w->workloads.items[i];
        if (strcmp(wl->meta.ns ? wl->meta.ns : "default", ns) == 0)
            list_name(&b, &count, wl->job_name ? "Job" : "Workload",
                      wl->job_name ? wl->job_name : wl->meta.name);
    }
    if (count == 0)
        cu_diag_error(d,
                      "--explain %s: no Workload or Job %s in namespace %s (the inputs "
                      "have no Workload or Job in namespace %s)",
                      arg, name, ns, ns);
    else if (count > SIM_EXPLAIN_LIST)
        cu_diag_error(d,
                      "--explain %s: no Workload or Job %s in namespace %s (namespace %s "
                      "has %s and %zu more)",
                      arg, name, ns, ns, cu_buf_str(&b), count - SIM_EXPLAIN_LIST);
    else
        cu_diag_error(d,
                      "--explain %s: no Workload or Job %s in namespace %s (namespace %s "
                      "has %s)",
                      arg, name, ns, ns, cu_buf_str(&b));
    cu_buf_free(&b);
    return CU_ENOTFOUND;
}

/* Resolves every --explain argument (all of them, so that every unknown
 * name is reported in one run) into *out (arena-owned). */
static cu_err sim_resolve_all(const cu_world *w, const cu_sim_opts *opts, cu_arena *a,
                              sim_target **out, cu_diag *d)
{
    sim_target *t = cu_arena_alloc(a, opts->nexplain * sizeof(*t));
    if (!t)
        return CU_ENOMEM;
    cu_err first = CU_OK;
    for (size_t i = 0; i < opts->nexplain; i++) {
        cu_err err = sim_resolve(w, opts->explain[i], a, &t[i], d);
        if (err == CU_ENOMEM)
            return err;
        if (err && !first)
            first = err;
    }
    *out = t;
    return first;
}

/* A copy of the explanation document doc with "job": job right after its
 * "workload" key (arena-owned; shares doc's values). */
static cu_node *doc_with_job(cu_arena *a, const cu_node *doc, const char *job)
{
    cu_node *m = cu_node_new_map(a), *j = cu_node_new_str(a, job);
    if (!m || !j || doc->type != CU_NODE_MAP)
        return NULL;
    for (size_t i = 0; i < doc->n; i++) {
        if (cu_node_set(a, m, doc->keys[i], doc->vals[i]) != CU_OK)
            return NULL;
        if (strcmp(doc->keys[i], "workload") == 0 && cu_node_set(a, m, "job", j) != CU_OK)
            return NULL;
    }
    return m;
}

/* Appends the explanation of every target: text, a JSON array or a YAML
 * stream of the documents. A target named by its Job gets a note line
 * (text) or a "job" key after "workload" (documents). */
static cu_err render_explain(cu_engine *e, const sim_target *t, size_t n, cu_sim_format fmt,
                             cu_buf *out, cu_diag *d)
{
    cu_err err = CU_OK;
    if (fmt == CU_SIM_TABLE) {
        for (size_t i = 0; i < n && !err; i++) {
            if (i)
                err = cu_buf_puts(out, "\n");
            if (!err && t[i].job)
                err = cu_buf_printf(out, "(Job %s: its Workload is %s)\n", t[i].job, t[i].key);
            if (!err)
                err = cu_engine_explain(e, t[i].key, out, d);
        }
        return err;
    }
    cu_arena a;
    cu_arena_init(&a, 0);
    cu_node *seq = cu_node_new_seq(&a);
    if (!seq)
        err = CU_ENOMEM;
    for (size_t i = 0; i < n && !err; i++) {
        cu_node *doc = NULL;
        err = cu_engine_explain_doc(e, t[i].key, &a, &doc, d);
        if (!err && t[i].job) {
            doc = doc_with_job(&a, doc, t[i].job);
            if (!doc)
                err = CU_ENOMEM;
        }
        if (!err)
            err = cu_node_push(&a, seq, doc);
    }
    if (!err && fmt == CU_SIM_JSON) {
        err = cu_node_emit_json(seq, out, 2);
        if (!err)
            err = cu_buf_puts(out, "\n");
    } else if (!err) {
        int first = 1;
        err = emit_stream(seq, out, &first);
    }
    cu_arena_free(&a);
    return err;
}

/* ---------------- entry points ---------------- */

cu_err cu_sim_render(cu_engine *e, const cu_world *w, const cu_sim_opts *opts, cu_buf *out)
{
    (void)w; /* the engine's views carry everything rendered */
    cu_arena a;
    cu_arena_init(&a, 0);
    cu_sim_format fmt = opts ? opts->format : CU_SIM_TABLE;
    int fs = opts ? opts->fair_sharing : 0;
    cu_err err;
    switch (fmt) {
    case CU_SIM_JSON: err = render_json(e, &a, fs, out); break;
    case CU_SIM_YAML: err = render_yaml(e, &a, fs, sim_now(opts), out); break;
    case CU_SIM_TABLE:
    default: err = render_table(e, &a, fs, out); break;
    }
    cu_arena_free(&a);
    if (!err && out->failed)
        err = CU_ENOMEM;
    return err;
}

/* Counts the objects of w other than Configurations. */
static size_t world_nobjects(const cu_world *w)
{
    return w->flavors.n + w->cqs.n + w->cohorts.n + w->lqs.n + w->workloads.n + w->wpcs.n +
           w->pcs.n + w->namespaces.n + w->checks.n + w->topologies.n + w->nodes.n + w->pods.n;
}

/* Reads the --config file into cw and points *out at its Configuration.
 * The file must hold exactly one Configuration and nothing else. */
static cu_err sim_load_config(cu_world *cw, const char *path, const cu_config **out, cu_diag *d)
{
    cu_err err = cu_world_load(cw, &path, 1, d);
    if (err)
        return err;
    if (cw->configs.n != 1 || world_nobjects(cw) != 0) {
        cu_diag_error(d,
                      "%s: --config needs a file holding one Kueue Configuration "
                      "(apiVersion config.kueue.x-k8s.io/v1beta2 or v1beta1, kind "
                      "Configuration); found %zu Configuration(s) and %zu other object(s)",
                      path, cw->configs.n, world_nobjects(cw));
        return CU_EINVAL;
    }
    *out = cw->configs.items[0];
    return CU_OK;
}

/* Picks the Configuration for the run: the --config one (cfg already
 * set), else the only one among the inputs. */
static cu_err sim_pick_config(const cu_world *w, const char *config_path, const cu_config **cfg,
                              cu_diag *d)
{
    if (config_path) {
        for (size_t i = 0; i < w->configs.n; i++) {
            const cu_meta *m = &w->configs.items[i]->meta;
            cu_diag_warn(d, "%s:%d: Configuration ignored: --config %s is used instead",
                         m->file ? m->file : "<input>", m->line, config_path);
        }
        return CU_OK;
    }
    if (w->configs.n == 1) {
        *cfg = w->configs.items[0];
    } else if (w->configs.n > 1) {
        cu_diag_error(d,
                      "%zu Configurations among the inputs (%s and %s%s); keep one, or "
                      "choose one with --config",
                      w->configs.n,
                      w->configs.items[0]->meta.file ? w->configs.items[0]->meta.file : "<input>",
                      w->configs.items[1]->meta.file ? w->configs.items[1]->meta.file : "<input>",
                      w->configs.n > 2 ? ", ..." : "");
        return CU_EINVAL;
    }
    return CU_OK;
}

cu_err cu_sim_run(const char *const *paths, size_t npaths, const cu_sim_opts *opts, cu_buf *out,
                  cu_diag *d)
{
    cu_sim_opts defaults = { 0 };
    if (!opts)
        opts = &defaults;
    int64_t now = sim_now(opts);
    cu_world w, cw; /* the inputs, the --config file */
    cu_world_init(&w);
    cu_world_init(&cw);
    cu_engine *e = NULL;
    const cu_config *cfg = NULL;
    cu_arena xa; /* the resolved --explain targets */
    cu_arena_init(&xa, 0);
    sim_target *targets = NULL;
    cu_err cerr = opts->config_path ? sim_load_config(&cw, opts->config_path, &cfg, d) : CU_OK;
    cu_err err = cu_world_load(&w, paths, npaths, d);
    if (!err || err == CU_EINVAL) {
        /* objects that failed to decode were dropped; validate the rest
         * too so that every problem is reported in one run */
        cu_err verr = cu_world_validate(&w, d);
        if (!err)
            err = verr;
    }
    if (!err)
        err = sim_pick_config(&w, opts->config_path, &cfg, d);
    if (!err && cerr)
        err = cerr;
    if (!err)
        err = cu_world_effective_requests(&w, cfg); /* as the controller counts them */
    if (!err && opts->nexplain)
        err = sim_resolve_all(&w, opts, &xa, &targets, d);
    if (!err) {
        cu_engine_opts eo = { 0 };
        eo.clock.now_ms = cu_clock_fake_now;
        eo.clock.ud = &now;
        eo.one_head_per_cycle = opts->one_head_per_cycle;
        eo.requeue_batch = CU_RQ_IDLE;
        eo.fair_sharing = opts->fair_sharing || (cfg && cfg->fair_sharing);
        if (cfg) {
            eo.nstrategies = cfg->nstrategies;
            for (size_t i = 0; i < cfg->nstrategies && i < 2; i++)
                eo.strategies[i] = cfg->strategies[i];
            eo.afs = cfg->afs;
            eo.afs_half_life_ms = cfg->afs_half_life_ms;
            eo.afs_sampling_ms = cfg->afs_sampling_ms;
            eo.afs_weights = cfg->afs_weights.n ? &cfg->afs_weights : NULL;
        }
        e = cu_engine_new(&eo);
        if (!e)
            err = CU_ENOMEM;
    }
    if (!err)
        err = cu_engine_load(e, &w, d);
    if (!err) {
        int max = opts->max_cycles > 0 ? opts->max_cycles : SIM_DEFAULT_MAX_CYCLES;
        int settled = 0;
        for (int i = 0; i < max && !err && !settled; i++) {
            cu_cycle_stats st;
            err = cu_engine_cycle(e, &st);
            settled = !st.progress;
        }
        if (!err && !settled)
            cu_diag_warn(d,
                         "the engine still made progress after %d cycles "
                         "(--max-cycles); the result is not a steady state",
                         max);
        if (!err) {
            cu_sim_opts ro = *opts;
            ro.fair_sharing = opts->fair_sharing || (cfg && cfg->fair_sharing);
            if (!opts->nexplain) {
                err = cu_sim_render(e, &w, &ro, out);
            } else {
                if (opts->explain_after_table && opts->format == CU_SIM_TABLE) {
                    err = cu_sim_render(e, &w, &ro, out);
                    if (!err)
                        err = cu_buf_puts(out, "\n");
                }
                if (!err)
                    err = render_explain(e, targets, opts->nexplain, opts->format, out, d);
            }
        }
    }
    if (e)
        cu_engine_free(e);
    cu_arena_free(&xa);
    cu_world_free(&w);
    cu_world_free(&cw);
    return err;
}
