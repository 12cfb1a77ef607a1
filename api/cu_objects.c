/*
 * cu_objects.c - the object helpers of cu_objects.h (kvs/reslist lookup,
 * label selectors, conditions, priority resolution), the world (decoding
 * dispatch by kind, loading files and folders) and the decoders of the
 * queue kinds (ResourceFlavor, ClusterQueue, Cohort, LocalQueue). The
 * decoding context is in cu_decode.c; Workloads in cu_workload.c, the
 * Configuration in cu_config.c, Jobs in cu_job.c, Nodes and Pods in
 * cu_kube.c.
 *
 * Invariants:
 *  - every string stored in an object is a copy in w->arena; the doc tree
 *    is only borrowed for the duration of cu_world_decode;
 *  - an object is appended to its world vector only after it decoded with
 *    no error; a failed object leaves garbage in the arena but nothing
 *    reachable;
 *  - meta.seq is w->nseq++ taken when a known object starts decoding, so
 *    seq follows the order of appearance across all inputs;
 *  - an object with metadata.generateName and no name gets the API
 *    server's kind of generated name, the same for the same input.
 */
#include "cu_decode_int.h"
#include "cu_hash.h"
#include "cu_match.h"
#include "cu_names.h"
#include "cu_objects.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ------------------------------------------------------------------ */
/* small helpers                                                       */

const char *cu_kvs_get(const cu_kvs *kvs, const char *key)
{
    if (!kvs || !key)
        return NULL;
    for (size_t i = 0; i < kvs->n; i++)
        if (strcmp(kvs->items[i].key, key) == 0)
            return kvs->items[i].value;
    return NULL;
}

int64_t cu_reslist_get(const cu_reslist *l, const char *name)
{
    if (!l || !name)
        return 0;
    size_t lo = 0, hi = l->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(l->items[mid].name, name);
        if (c == 0)
            return l->items[mid].milli;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

int cu_strs_has(const cu_strs *s, const char *v)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->items[i], v) == 0)
            return 1;
    return 0;
}

int cu_labelsel_matches(const cu_labelsel *sel, const cu_kvs *labels)
{
    if (!sel || sel->is_null)
        return 0;
    for (size_t i = 0; i < sel->match_labels.n; i++) {
        const char *v = cu_kvs_get(labels, sel->match_labels.items[i].key);
        if (!v || strcmp(v, sel->match_labels.items[i].value) != 0)
            return 0;
    }
    for (size_t i = 0; i < sel->nexpr; i++) {
        const cu_selreq *r = &sel->exprs[i];
        if (r->op == CU_SEL_GT || r->op == CU_SEL_LT)
            return 0; /* Gt/Lt are not valid in a label selector */
        if (!cu_match_selreq_labels(r, labels))
            return 0;
    }
    return 1;
}

const char *cu_kind_name(cu_kind k)
{
    switch (k) {
    case CU_KIND_RESOURCE_FLAVOR: return "ResourceFlavor";
    case CU_KIND_CLUSTER_QUEUE: return "ClusterQueue";
    case CU_KIND_COHORT: return "Cohort";
    case CU_KIND_LOCAL_QUEUE: return "LocalQueue";
    case CU_KIND_WORKLOAD: return "Workload";
    case CU_KIND_WORKLOAD_PRIORITY_CLASS: return "WorkloadPriorityClass";
    case CU_KIND_JOB: return "Job";
    case CU_KIND_NAMESPACE: return "Namespace";
    case CU_KIND_PRIORITY_CLASS: return "PriorityClass";
    case CU_KIND_CONFIGURATION: return "Configuration";
    case CU_KIND_ADMISSION_CHECK: return "AdmissionCheck";
    case CU_KIND_JOBSET: return "JobSet";
    case CU_KIND_TOPOLOGY: return "Topology";
    case CU_KIND_NODE: return "Node";
    case CU_KIND_POD: return "Pod";
    case CU_KIND_UNKNOWN: break;
    }
    return "Unknown";
}

const cu_condition *cu_workload_cond(const cu_workload *wl, const char *type)
{
    for (size_t i = 0; i < wl->nconds; i++)
        if (wl->conds[i].type && strcmp(wl->conds[i].type, type) == 0)
            return &wl->conds[i];
    return NULL;
}

static int cond_true(const cu_workload *wl, const char *type)
{
    const cu_condition *c = cu_workload_cond(wl, type);
    return c && c->status && strcmp(c->status, "True") == 0;
}

int cu_workload_has_quota(const cu_workload *wl)
{
    return wl->has_admission && cond_true(wl, "QuotaReserved");
}

int cu_workload_finished(const cu_workload *wl) { return cond_true(wl, "Finished"); }

const char *cu_check_state_name(cu_check_state st)
{
    switch (st) {
    case CU_CHECK_PENDING: return "Pending";
    case CU_CHECK_READY: return "Ready";
    case CU_CHECK_RETRY: return "Retry";
    case CU_CHECK_REJECTED: return "Rejected";
    }
    return "?";
}

const cu_acstate *cu_workload_check(const cu_workload *wl, const char *name)
{
    for (size_t i = 0; i < wl->nchecks; i++)
        if (wl->checks[i].name && strcmp(wl->checks[i].name, name) == 0)
            return &wl->checks[i];
    return NULL;
}

/* 1 when flavor f is one of cq's flavors. */
static int cq_has_flavor(const cu_cluster_queue *cq, const char *f)
{
    for (size_t g = 0; g < cq->groups.n; g++)
        for (size_t i = 0; i < cq->groups.items[g].nflavors; i++)
            if (strcmp(cq->groups.items[g].flavors[i].name, f) == 0)
                return 1;
    return 0;
}

/* 1 when check k runs on every flavor of cq (no onFlavors, or onFlavors
 * is the same set as cq's flavors). */
static int check_on_all(const cu_cluster_queue *cq, const cu_cqcheck *k)
{
    if (!k->on_flavors.n)
        return 1;
    for (size_t i = 0; i < k->on_flavors.n; i++)
        if (!cq_has_flavor(cq, k->on_flavors.items[i]))
            return 0;
    for (size_t g = 0; g < cq->groups.n; g++)
        for (size_t i = 0; i < cq->groups.items[g].nflavors; i++)
            if (!cu_strs_has(&k->on_flavors, cq->groups.items[g].flavors[i].name))
                return 0;
    return 1;
}

int cu_strp_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

size_t cu_cq_checks_for(const cu_cluster_queue *cq, int has_admission, const char *const *flavors,
                        size_t nflavors, const char **out, size_t max)
{
    int all = 1;
    for (size_t i = 0; i < cq->nchecks && all; i++)
        all = check_on_all(cq, &cq->checks[i]);
    if (!all && !has_admission)
        return 0;
    size_t n = 0;
    for (size_t i = 0; i < cq->nchecks; i++) {
        const cu_cqcheck *k = &cq->checks[i];
        int applies = all || !k->on_flavors.n;
        for (size_t f = 0; !applies && f < nflavors; f++)
            applies = flavors[f] && cu_strs_has(&k->on_flavors, flavors[f]);
        if (!applies)
            continue;
        if (n < max)
            out[n] = k->name;
        n++;
    }
    qsort(out, n < max ? n : max, sizeof(*out), cu_strp_cmp);
    return n;
}

int cu_workload_checks_ready(const cu_workload *wl, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!cu_workload_check(wl, names[i]))
            return 0;
    for (size_t i = 0; i < wl->nchecks; i++)
        if (wl->checks[i].state != CU_CHECK_READY)
            return 0;
    return 1;
}

void cu_world_init(cu_world *w)
{
    memset(w, 0, sizeof(*w));
    cu_arena_init(&w->arena, 0);
}

void cu_world_free(cu_world *w)
{
    cu_group_pods_free(w); /* its records are in the arena */
    cu_arena_free(&w->arena);
    free(w->flavors.items);
    free(w->cqs.items);
    free(w->cohorts.items);
    free(w->lqs.items);
    free(w->workloads.items);
    free(w->wpcs.items);
    free(w->pcs.items);
    free(w->namespaces.items);
    free(w->configs.items);
    free(w->checks.items);
    free(w->topologies.items);
    free(w->nodes.items);
    free(w->pods.items);
    memset(w, 0, sizeof(*w));
}

#define VEC_PUSH(v, x) CU_VEC_PUSH(v, x, 16)

/* ------------------------------------------------------------------ */
/* ClusterQueue, Cohort, LocalQueue, ResourceFlavor                   */

/* resourceGroups of a ClusterQueue or a Cohort. */
/* A quota quantity: as cu_dec_node_qty, except that a well-formed one too
 * large to hold is no decode error (the object would be lost, and its
 * workloads told it does not exist): *big keeps the string, the value is
 * 0, and validation makes the object invalid, naming field and value. */
static int quota_qty(dctx *c, const cu_node *n, const char *path, const char *res, int64_t *out,
                     const char **big)
{
    *big = NULL;
    if (n && n->type == CU_NODE_SCALAR && !cu_node_is_null(n)) {
        int64_t v;
        if (cu_qty_parse_res(res, n->str, &v, NULL) == CU_EOVERFLOW) {
            *big = cu_dec_strdup(c, n->str);
            *out = 0;
            return 1;
        }
    }
    return cu_dec_node_amount(c, n, path, res, out);
}

static void dec_rgroups(dctx *c, const cu_node *spec, cu_rgroups *out)
{
    char p[PATHMAX];
    out->n = 0;
    out->items = NULL;
    const cu_node *s = cu_dec_want_seq(c, cu_node_get(spec, "resourceGroups"),
                                       cu_dec_path(p, "spec", "resourceGroups"));
    if (!s || s->n == 0)
        return;
    out->items = cu_dec_alloc(c, s->n * sizeof(*out->items));
    if (!out->items)
        return;
    for (size_t g = 0; g < s->n; g++) {
        char gp[PATHMAX];
        cu_dec_path(gp, p, "[%zu]", g);
        const cu_node *gn = cu_dec_want_map(c, s->vals[g], gp);
        if (!gn)
            continue;
        cu_rgroup *rg = &out->items[out->n++];
        cu_dec_strs(c, gn, "coveredResources", gp, &rg->covered);
        char fp[PATHMAX];
        const cu_node *fl =
            cu_dec_want_seq(c, cu_node_get(gn, "flavors"), cu_dec_path(fp, gp, "flavors"));
        if (!fl || fl->n == 0)
            continue;
        rg->flavors = cu_dec_alloc(c, fl->n * sizeof(*rg->flavors));
        if (!rg->flavors)
            return;
        for (size_t f = 0; f < fl->n; f++) {
            char fq[PATHMAX];
            cu_dec_path(fq, fp, "[%zu]", f);
            const cu_node *fnode = cu_dec_want_map(c, fl->vals[f], fq);
            if (!fnode)
                continue;
            cu_fquota *fqo = &rg->flavors[rg->nflavors++];
            fqo->name = cu_dec_str(c, fnode, "name", fq);
            if (!fqo->name) {
                char q[PATHMAX];
                cu_dec_err(c, cu_dec_path(q, fq, "name"), "Required value");
            }
            char rp[PATHMAX];
            const cu_node *rs = cu_dec_want_seq(c, cu_node_get(fnode, "resources"),
                                                cu_dec_path(rp, fq, "resources"));
            if (!rs || rs->n == 0)
                continue;
            fqo->res = cu_dec_alloc(c, rs->n * sizeof(*fqo->res));
            if (!fqo->res)
                return;
            for (size_t r = 0; r < rs->n; r++) {
                char rq[PATHMAX], q[PATHMAX];
                cu_dec_path(rq, rp, "[%zu]", r);
                const cu_node *rn = cu_dec_want_map(c, rs->vals[r], rq);
                if (!rn)
                    continue;
                cu_rquota *qo = &fqo->res[fqo->n++];
                qo->name = cu_dec_str(c, rn, "name", rq);
                if (!qo->name)
                    cu_dec_err(c, cu_dec_path(q, rq, "name"), "Required value");
                const cu_node *nq = cu_node_get(rn, "nominalQuota");
                if (!nq || cu_node_is_null(nq))
                    cu_dec_err(c, cu_dec_path(q, rq, "nominalQuota"), "Required value");
                else
                    quota_qty(c, nq, cu_dec_path(q, rq, "nominalQuota"), qo->name, &qo->nominal,
                              &qo->big_nominal);
                qo->has_blimit = quota_qty(c, cu_node_get(rn, "borrowingLimit"),
                                           cu_dec_path(q, rq, "borrowingLimit"), qo->name,
                                           &qo->blimit, &qo->big_blimit);
                qo->has_llimit = quota_qty(c, cu_node_get(rn, "lendingLimit"),
                                           cu_dec_path(q, rq, "lendingLimit"), qo->name,
                                           &qo->llimit, &qo->big_llimit);
            }
        }
    }
}

/* spec.fairSharing.weight into *out (milli, default 1000). */
static void dec_fs_weight(dctx *c, const cu_node *spec, int64_t *out)
{
    *out = 1000;
    const cu_node *fs = cu_dec_want_map(c, cu_node_get(spec, "fairSharing"), "spec.fairSharing");
    if (fs)
        cu_dec_node_qty(c, cu_node_get(fs, "weight"), "spec.fairSharing.weight", out);
}

static const char *const stop_names[] = { "None", "Hold", "HoldAndDrain" };
/* ------------------------------------------------------------------ */
/* kinds                                                               */

static void dec_flavor(dctx *c, const cu_node *root, cu_resource_flavor *rf)
{
    const cu_node *spec = cu_dec_want_map(c, cu_node_get(root, "spec"), "spec");
    cu_dec_kvs(c, spec, "nodeLabels", "spec", &rf->node_labels);
    cu_dec_taints(c, spec, "nodeTaints", "spec", &rf->ntaints, &rf->taints);
    cu_dec_tolerations(c, spec, "tolerations", "spec", &rf->ntols, &rf->tols);
    rf->topology_name = cu_dec_str(c, spec, "topologyName", "spec");
}

/* A Topology: spec.levels[].nodeLabel (the rules: cu_validate.c). */
static void dec_topology(dctx *c, const cu_node *root, cu_topology *t)
{
    const cu_node *spec = cu_dec_want_map(c, cu_node_get(root, "spec"), "spec");
    const cu_node *lv = cu_dec_want_seq(c, cu_node_get(spec, "levels"), "spec.levels");
    if (!lv || !lv->n)
        return;
    t->levels = cu_dec_alloc(c, lv->n * sizeof(*t->levels));
    for (size_t i = 0; t->levels && i < lv->n; i++) {
        char p[PATHMAX];
        cu_dec_path(p, "spec.levels", "[%zu]", i);
        const cu_node *l = cu_dec_want_map(c, lv->vals[i], p);
        const char *nl = l ? cu_dec_str(c, l, "nodeLabel", p) : NULL;
        t->levels[t->nlevels++] = nl ? nl : "";
    }
}

/* spec.admissionChecksStrategy.admissionChecks (v1beta2), or the v1beta1
 * list of names spec.admissionChecks (read as checks on every flavor). */
static void dec_cq_checks(dctx *c, const cu_node *spec, cu_cluster_queue *cq)
{
    const char *base = "spec.admissionChecksStrategy.admissionChecks";
    const cu_node *list = NULL;
    int names_only = 0;
    if (c->v1beta1 && cu_node_get(spec, "admissionChecks")) {
        base = "spec.admissionChecks";
        list = cu_dec_want_seq(c, cu_node_get(spec, "admissionChecks"), base);
        names_only = 1;
    } else {
        const cu_node *st = cu_dec_want_map(c, cu_node_get(spec, "admissionChecksStrategy"),
                                            "spec.admissionChecksStrategy");
        list = cu_dec_want_seq(c, cu_node_get(st, "admissionChecks"), base);
    }
    if (!list || !list->n)
        return;
    cq->checks = cu_dec_alloc(c, list->n * sizeof(*cq->checks));
    for (size_t i = 0; cq->checks && i < list->n; i++) {
        char p[PATHMAX];
        cu_dec_path(p, base, "[%zu]", i);
        cu_cqcheck *k = &cq->checks[cq->nchecks];
        if (names_only) {
            const cu_node *n = list->vals[i];
            if (!n || n->type != CU_NODE_SCALAR || !*n->str) {
                cu_dec_err(c, p, "must be a non-empty string");
                continue;
            }
            k->name = cu_dec_strdup(c, n->str);
        } else {
            const cu_node *m = cu_dec_want_map(c, list->vals[i], p);
            if (!m)
                continue;
            k->name = cu_dec_str(c, m, "name", p);
            if (!k->name || !*k->name) {
                char q[PATHMAX];
                cu_dec_err(c, cu_dec_path(q, p, "name"), "Required value");
                continue;
            }
            cu_dec_strs(c, m, "onFlavors", p, &k->on_flavors);
        }
        cq->nchecks++;
    }
}

static void dec_cq(dctx *c, const cu_node *root, cu_cluster_queue *cq)
{
    static const char *const qs[] = { "BestEffortFIFO", "StrictFIFO" };
    static const char *const qs_msg[] = { "StrictFIFO", "BestEffortFIFO" };
    /* index 0: Borrow (v1beta1 only), 1: MayStopSearch, 2: TryNextFlavor */
    static const char *const borrow_v1b1[] = { "Borrow", "MayStopSearch", "TryNextFlavor" };
    static const char *const preempt_v1b1[] = { "Preempt", "MayStopSearch", "TryNextFlavor" };
    static const char *const fung_v1b2[] = { NULL, "MayStopSearch", "TryNextFlavor" };
    static const char *const prefs[] = { NULL, "BorrowingOverPreemption",
                                         "PreemptionOverBorrowing" };
    static const char *const within[] = { "Never", "LowerPriority", "LowerOrNewerEqualPriority" };
    static const char *const reclaim[] = { "Never", "LowerPriority", NULL, "Any" };
    static const char *const bwc[] = { "Never", "LowerPriority" };
    static const char *const afs[] = { "NoAdmissionFairSharing", "UsageBasedAdmissionFairSharing" };
    int v;

    const cu_node *spec = cu_dec_want_map(c, cu_node_get(root, "spec"), "spec");
    cq->cohort = cu_dec_str(c, spec, c->v1beta1 ? "cohort" : "cohortName", "spec");
    if (cq->cohort && !*cq->cohort)
        cq->cohort = NULL;
    dec_rgroups(c, spec, &cq->groups);

    /* queueingStrategy: message lists the values in Kubernetes' order */
    const cu_node *qn = cu_node_get(spec, "queueingStrategy");
    cq->queueing = CU_BEST_EFFORT_FIFO;
    if (qn && !cu_node_is_null(qn)) {
        if (qn->type == CU_NODE_SCALAR && strcmp(qn->str, qs[1]) == 0)
            cq->queueing = CU_STRICT_FIFO;
        else if (!(qn->type == CU_NODE_SCALAR && strcmp(qn->str, qs[0]) == 0))
            cu_dec_enum(c, spec, "queueingStrategy", "spec", qs_msg, 2, 0, &v);
    }

    cu_dec_labelsel(c, spec, "namespaceSelector", "spec", &cq->ns_selector);

    cq->fungibility.when_can_borrow = CU_FUNG_MAY_STOP_SEARCH;
    cq->fungibility.when_can_preempt = CU_FUNG_TRY_NEXT_FLAVOR;
    const cu_node *ff =
        cu_dec_want_map(c, cu_node_get(spec, "flavorFungibility"), "spec.flavorFungibility");
    if (ff) {
        const char *const *bn = c->v1beta1 ? borrow_v1b1 : fung_v1b2;
        const char *const *pn = c->v1beta1 ? preempt_v1b1 : fung_v1b2;
        cu_dec_enum(c, ff, "whenCanBorrow", "spec.flavorFungibility", bn, 3, 1, &v);
        cq->fungibility.when_can_borrow =
            v == 2 ? CU_FUNG_TRY_NEXT_FLAVOR : CU_FUNG_MAY_STOP_SEARCH;
        cu_dec_enum(c, ff, "whenCanPreempt", "spec.flavorFungibility", pn, 3, 2, &v);
        cq->fungibility.when_can_preempt =
            v == 2 ? CU_FUNG_TRY_NEXT_FLAVOR : CU_FUNG_MAY_STOP_SEARCH;
        cu_dec_enum(c, ff, "preference", "spec.flavorFungibility", prefs, 3, 0, &v);
        cq->fungibility.preference = (cu_fpref)v;
    }

    const cu_node *pr = cu_dec_want_map(c, cu_node_get(spec, "preemption"), "spec.preemption");
    if (pr) {
        cu_dec_enum(c, pr, "withinClusterQueue", "spec.preemption", within, 3, 0, &v);
        cq->preemption.within_cq = (cu_ppolicy)v;
        cu_dec_enum(c, pr, "reclaimWithinCohort", "spec.preemption", reclaim, 4, 0, &v);
        cq->preemption.reclaim = (cu_ppolicy)v;
        const cu_node *b = cu_dec_want_map(c, cu_node_get(pr, "borrowWithinCohort"),
                                           "spec.preemption.borrowWithinCohort");
        if (b) {
            cu_dec_enum(c, b, "policy", "spec.preemption.borrowWithinCohort", bwc, 2, 0, &v);
            cq->preemption.borrow_policy = (cu_ppolicy)v;
            cq->preemption.has_threshold =
                cu_dec_i32(c, b, "maxPriorityThreshold", "spec.preemption.borrowWithinCohort",
                           &cq->preemption.threshold);
        }
    }

    cu_dec_enum(c, spec, "stopPolicy", "spec", stop_names, 3, 0, &v);
    cq->stop_policy = (cu_stop)v;
    dec_fs_weight(c, spec, &cq->fs_weight);

    const cu_node *as =
        cu_dec_want_map(c, cu_node_get(spec, "admissionScope"), "spec.admissionScope");
    if (as) {
        cu_dec_enum(c, as, "admissionMode", "spec.admissionScope", afs, 2, 0, &v);
        cq->afs = v == 1;
    }
    dec_cq_checks(c, spec, cq);
}

static void dec_cohort(dctx *c, const cu_node *root, cu_cohort *co)
{
    const cu_node *spec = cu_dec_want_map(c, cu_node_get(root, "spec"), "spec");
    co->parent = cu_dec_str(c, spec, "parentName", "spec");
    if (!co->parent && c->v1beta1)
        co->parent = cu_dec_str(c, spec, "parent", "spec");
    if (co->parent && !*co->parent)
        co->parent = NULL;
    dec_rgroups(c, spec, &co->groups);
    dec_fs_weight(c, spec, &co->fs_weight);
}

static void dec_lq(dctx *c, const cu_node *root, cu_local_queue *lq)
{
    int v;
    const cu_node *spec = cu_dec_want_map(c, cu_node_get(root, "spec"), "spec");
    lq->cluster_queue = cu_dec_str(c, spec, "clusterQueue", "spec");
    cu_dec_enum(c, spec, "stopPolicy", "spec", stop_names, 3, 0, &v);
    lq->stop_policy = (cu_stop)v;
    dec_fs_weight(c, spec, &lq->fs_weight);
}

/* ------------------------------------------------------------------ */
/* dispatch                                                            */

typedef struct kindinfo {
    const char *group; /* apiVersion group ("" for core) */
    const char *kind;
    cu_kind k;
    int namespaced;
} kindinfo;

static const kindinfo kinds[] = {
    { CU_GROUP, "ResourceFlavor", CU_KIND_RESOURCE_FLAVOR, 0 },
    { CU_GROUP, "ClusterQueue", CU_KIND_CLUSTER_QUEUE, 0 },
    { CU_GROUP, "Cohort", CU_KIND_COHORT, 0 },
    { CU_GROUP, "LocalQueue", CU_KIND_LOCAL_QUEUE, 1 },
    { CU_GROUP, "Workload", CU_KIND_WORKLOAD, 1 },
    { CU_GROUP, "WorkloadPriorityClass", CU_KIND_WORKLOAD_PRIORITY_CLASS, 0 },
    { "batch", "Job", CU_KIND_JOB, 1 },
    { "", "Namespace", CU_KIND_NAMESPACE, 0 },
    { "scheduling.k8s.io", "PriorityClass", CU_KIND_PRIORITY_CLASS, 0 },
    { "config.kueue.x-k8s.io", "Configuration", CU_KIND_CONFIGURATION, 0 },
    { CU_GROUP, "AdmissionCheck", CU_KIND_ADMISSION_CHECK, 0 },
    { "jobset.x-k8s.io", "JobSet", CU_KIND_JOBSET, 1 },
    { CU_GROUP, "Topology", CU_KIND_TOPOLOGY, 0 },
    { "", "Node", CU_KIND_NODE, 0 },
    { "", "Pod", CU_KIND_POD, 1 },
};

/* Finds the kind for apiVersion/kind; sets *v1beta1 for the old kueue
 * versions. Returns NULL when unknown. */
static const kindinfo *find_kind(const char *api, const char *kind, int *v1beta1)
{
    const char *slash = strchr(api, '/');
    size_t glen = slash ? (size_t)(slash - api) : 0;
    const char *ver = slash ? slash + 1 : api;
    *v1beta1 = 0;
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        const kindinfo *ki = &kinds[i];
        if (strcmp(ki->kind, kind) != 0 || strlen(ki->group) != glen ||
            strncmp(ki->group, api, glen) != 0)
            continue;
        if (strcmp(ki->group, CU_GROUP) == 0 || strcmp(ki->group, "config.kueue.x-k8s.io") == 0) {
            if (strcmp(ver, "v1beta2") == 0)
                return ki;
            if (strcmp(ver, "v1beta1") == 0) {
                *v1beta1 = 1;
                return ki;
            }
            return NULL;
        }
        if (strcmp(ver, ki->k == CU_KIND_JOBSET ? "v1alpha2" : "v1") == 0)
            return ki;
        return NULL;
    }
    return NULL;
}

static int ends_with(const char *s, const char *sfx)
{
    size_t n = strlen(s), m = strlen(sfx);
    return n >= m && strcmp(s + n - m, sfx) == 0;
}

static cu_err decode_node(cu_world *w, const cu_node *root, const char *file, cu_diag *d,
                          int depth);

/* An AdmissionCheck: spec.controllerName (required), spec.parameters, and
 * whether status.conditions has Active=True. */
static void dec_admission_check(dctx *c, const cu_node *root, cu_admission_check *x)
{
    const cu_node *spec = cu_dec_want_map(c, cu_node_get(root, "spec"), "spec");
    x->controller = cu_dec_str(c, spec, "controllerName", "spec");
    if (!x->controller || !*x->controller)
        cu_dec_err(c, "spec.controllerName", "Required value");
    const cu_node *pm = cu_dec_want_map(c, cu_node_get(spec, "parameters"), "spec.parameters");
    if (pm) {
        x->param_group = cu_dec_str(c, pm, "apiGroup", "spec.parameters");
        x->param_kind = cu_dec_str(c, pm, "kind", "spec.parameters");
        x->param_name = cu_dec_str(c, pm, "name", "spec.parameters");
    }
    const cu_node *st = cu_dec_want_map(c, cu_node_get(root, "status"), "status");
    const cu_node *cs = cu_dec_want_seq(c, cu_node_get(st, "conditions"), "status.conditions");
    for (size_t i = 0; cs && i < cs->n; i++) {
        const cu_node *cn = cs->vals[i];
        const char *t = cu_node_scalar(cu_node_get(cn, "type"));
        const char *v = cu_node_scalar(cu_node_get(cn, "status"));
        if (t && v && strcmp(t, "Active") == 0)
            x->active = strcmp(v, "True") == 0;
    }
}

static cu_err decode_object(cu_world *w, const cu_node *root, const char *file, cu_diag *d,
                            const kindinfo *ki, int v1beta1, const char *api, const char *name)
{
    dctx c;
    memset(&c, 0, sizeof(c));
    c.w = w;
    c.a = &w->arena;
    c.d = d;
    c.file = file;
    c.kind = ki->kind;
    c.v1beta1 = v1beta1;
    if (ki->namespaced) {
        const char *ns = cu_node_scalar(cu_node_path(root, "metadata.namespace"));
        snprintf(c.who, sizeof(c.who), "%s/%s", ns && *ns ? ns : "default", name);
    } else {
        snprintf(c.who, sizeof(c.who), "%s", name);
    }

    cu_meta meta;
    memset(&meta, 0, sizeof(meta));

    if (ki->k == CU_KIND_JOB || ki->k == CU_KIND_JOBSET) {
        const cu_node *md = cu_node_get(root, "metadata");
        const cu_node *labels = cu_node_get(md, "labels");
        const char *qn = cu_node_scalar(cu_node_get(labels, CU_LABEL_QUEUE_NAME));
        if (!qn || !*qn) {
            cu_diag_warn(d, "%s:%d: %s %s has no " CU_LABEL_QUEUE_NAME " label; not managed", file,
                         root->line, ki->kind, c.who);
            return CU_OK;
        }
    }
    if (ki->k == CU_KIND_POD) {
        const cu_node *labels = cu_node_path(root, "metadata.labels");
        const char *qn = cu_node_scalar(cu_node_get(labels, CU_LABEL_QUEUE_NAME));
        const char *grp = cu_node_scalar(cu_node_get(labels, CU_LABEL_POD_GROUP_NAME));
        if (qn && *qn && grp && *grp)
            return cu_keep_group_pod(&c, root, name, grp);
    }
    cu_dec_meta(&c, root, api, name, ki->namespaced, &meta);

    void *obj = NULL;
    int pushed = 0;
    switch (ki->k) {
    case CU_KIND_RESOURCE_FLAVOR: {
        cu_resource_flavor *x = cu_dec_alloc(&c, sizeof(*x));
        if (!x)
            break;
        x->meta = meta;
        dec_flavor(&c, root, x);
        obj = x;
        if (!c.nerr && !c.oom)
            pushed = VEC_PUSH(w->flavors, x) == 0 ? 1 : -1;
        break;
    }
    case CU_KIND_CLUSTER_QUEUE: {
        cu_cluster_queue *x = cu_dec_alloc(&c, sizeof(*x));
        if (!x)
            break;
        x->meta = meta;
        dec_cq(&c, root, x);
        obj = x;
        if (!c.nerr && !c.oom)
            pushed = VEC_PUSH(w->cqs, x) == 0 ? 1 : -1;
        break;
    }
    case CU_KIND_COHORT: {
        cu_cohort *x = cu_dec_alloc(&c, sizeof(*x));
        if (!x)
            break;
        x->meta = meta;
        dec_cohort(&c, root, x);
        obj = x;
        if (!c.nerr && !c.oom)
            pushed = VEC_PUSH(w->cohorts, x) == 0 ? 1 : -1;
        break;
    }
    case CU_KIND_LOCAL_QUEUE: {
        cu_local_queue *x = cu_dec_alloc(&c, sizeof(*x));
        if (!x)
            break;
        x->meta = meta;
        dec_lq(&c, root, x);
        obj = x;
        if (!c.nerr && !c.oom)
            pushed = VEC_PUSH(w->lqs, x) == 0 ? 1 : -1;
        break;
    }
    case CU_KIND_WORKLOAD: {
        cu_workload *x = cu_dec_alloc(&c, sizeof(*x));
        if (!x)
            break;
        x->meta = meta;
        cu_dec_workload(&c, root, x);
        obj = x;
        if (!c.nerr && !c.oom)
            pushed = VEC_PUSH(w->workloads, x) == 0 ? 1 : -1;
        break;
    }
    case CU_KIND_JOB:
    case CU_KIND_JOBSET: {
        cu_workload *x = cu_dec_alloc(&c, sizeof(*x));
        if (!x)
            break;
        if (ki->k == CU_KIND_JOB)
            cu_dec_job(&c, root, &meta, x);
        else
            cu_dec_jobset(&c, root, &meta, x);
        obj = x;
        if (!c.nerr && !c.oom)
            pushed = VEC_PUSH(w->workloads, x) == 0 ? 1 : -1;
        break;
    }
    case CU_KIND_WORKLOAD_PRIORITY_CLASS: {
        cu_wpc *x = cu_dec_alloc(&c, sizeof(*x));
        if (!x)
            break;
        x->meta = meta;
        cu_dec_wpc(&c, root, x);
        obj = x;
        if (!c.nerr && !c.oom)
            pushed = VEC_PUSH(w->wpcs, x) == 0 ? 1 : -1;
        break;
    }
    case CU_KIND_PRIORITY_CLASS: {
        cu_priority_class *x = cu_dec_alloc(&c, sizeof(*x));
        if (!x)
            break;
        x->meta = meta;
        cu_dec_pc(&c, root, x);
        obj = x;
        if (!c.nerr && !c.oom)
            pushed = VEC_PUSH(w->pcs, x) == 0 ? 1 : -1;
        break;
    }
    case CU_KIND_NAMESPACE: {
        cu_namespace *x = cu_dec_alloc(&c, sizeof(*x));
        if (!x)
            break;
        x->meta = meta;
        obj = x;
        if (!c.nerr && !c.oom)
            pushed = VEC_PUSH(w->namespaces, x) == 0 ? 1 : -1;
        break;
    }
    case CU_KIND_CONFIGURATION: {
        cu_config *x = cu_dec_alloc(&c, sizeof(*x));
        if (!x)
            break;
        x->meta = meta;
        cu_dec_config(&c, root, x);
        obj = x;
        if (!c.nerr && !c.oom)
            pushed = VEC_PUSH(w->configs, x) == 0 ? 1 : -1;
        break;
    }
    case CU_KIND_ADMISSION_CHECK: {
        cu_admission_check *x = cu_dec_alloc(&c, sizeof(*x));
        if (!x)
            break;
        x->meta = meta;
        dec_admission_check(&c, root, x);
        obj = x;
        if (!c.nerr && !c.oom)
            pushed = VEC_PUSH(w->checks, x) == 0 ? 1 : -1;
        break;
    }
    case CU_KIND_TOPOLOGY: {
        cu_topology *x = cu_dec_alloc(&c, sizeof(*x));
        if (!x)
            break;
        x->meta = meta;
        dec_topology(&c, root, x);
        obj = x;
        if (!c.nerr && !c.oom)
            pushed = VEC_PUSH(w->topologies, x) == 0 ? 1 : -1;
        break;
    }
    case CU_KIND_NODE: {
        cu_kube_node *x = cu_dec_alloc(&c, sizeof(*x));
        if (!x)
            break;
        x->meta = meta;
        cu_dec_node(&c, root, x);
        obj = x;
        if (!c.nerr && !c.oom)
            pushed = VEC_PUSH(w->nodes, x) == 0 ? 1 : -1;
        break;
    }
    case CU_KIND_POD: {
        cu_kube_pod *x = cu_dec_alloc(&c, sizeof(*x));
        cu_workload *wl = cu_dec_alloc(&c, sizeof(*wl));
        if (!x || !wl)
            break;
        x->meta = meta;
        int queued = cu_dec_pod(&c, root, x, wl);
        obj = x;
        if (!c.nerr && !c.oom)
            pushed = (queued ? VEC_PUSH(w->workloads, wl) : VEC_PUSH(w->pods, x)) == 0 ? 1 : -1;
        break;
    }
    case CU_KIND_UNKNOWN: break;
    }
    if (c.oom || pushed < 0 || !obj)
        return CU_ENOMEM;
    return c.nerr ? CU_EINVAL : CU_OK;
}

void cu_diag_unknown_kind(cu_diag *d, const char *file, const cu_node *doc, const char *verb)
{
    const char *api = cu_node_scalar(cu_node_get(doc, "apiVersion"));
    const char *kind = cu_node_scalar(cu_node_get(doc, "kind"));
    const cu_node *nn = cu_node_path(doc, "metadata.name");
    const char *name = nn && nn->type == CU_NODE_SCALAR ? cu_node_scalar(nn) : NULL;
    cu_diag_warn(d, "%s:%d: %s unknown kind %s (apiVersion %s) %s", file, doc ? doc->line : 0, verb,
                 kind ? kind : "", api ? api : "", name && *name ? name : "(unnamed)");
}

#define CU_LIST_DEPTH_MAX 8

/* The name the API server would give an object with metadata.generateName
 * and no name (a copy in w->arena), "" when it has neither, NULL when out
 * of memory. The suffix is a hash of the base, the kind, the namespace and
 * the order of appearance, not random, so that simulate's output is
 * stable. */
static const char *generated_name(cu_world *w, const cu_node *root, const char *kind)
{
    const char *gen = cu_node_scalar(cu_node_path(root, "metadata.generateName"));
    if (!gen || !*gen)
        return "";
    const char *ns = cu_node_scalar(cu_node_path(root, "metadata.namespace"));
    uint64_t h = cu_hash_field(CU_HASH_INIT, gen);
    h = cu_hash_field(h, kind);
    h = cu_hash_field(h, ns ? ns : "");
    uint64_t seq = w->nseq;
    h = cu_hash_bytes(h, &seq, sizeof(seq));
    char buf[CU_GENERATE_BASE_MAX + CU_GENERATE_SUFFIX_LEN + 1];
    cu_name_generate(buf, sizeof(buf), gen, h);
    return cu_arena_strdup(&w->arena, buf);
}

/* Decodes one document node: a List (expanded), a known kind or an
 * unknown one (warned and skipped). */
static cu_err decode_node(cu_world *w, const cu_node *root, const char *file, cu_diag *d, int depth)
{
    if (!root)
        return CU_OK;
    if (root->type != CU_NODE_MAP) {
        cu_diag_error(d, "%s:%d: document is not a map (expected a Kubernetes object)", file,
                      root->line);
        return CU_EINVAL;
    }
    const cu_node *an = cu_node_get(root, "apiVersion");
    const cu_node *kn = cu_node_get(root, "kind");
    const char *api = cu_node_scalar(an), *kind = cu_node_scalar(kn);
    if (!api || an->type != CU_NODE_SCALAR) {
        cu_diag_error(d, "%s:%d: missing apiVersion", file, root->line);
        return CU_EINVAL;
    }
    if (!kind || kn->type != CU_NODE_SCALAR) {
        cu_diag_error(d, "%s:%d: missing kind", file, root->line);
        return CU_EINVAL;
    }

    if (ends_with(kind, "List")) {
        const cu_node *items = cu_node_get(root, "items");
        if (depth >= CU_LIST_DEPTH_MAX) {
            cu_diag_error(d, "%s:%d: %s nested too deeply", file, root->line, kind);
            return CU_EINVAL;
        }
        if (items && !cu_node_is_null(items) && items->type != CU_NODE_SEQ) {
            cu_diag_error(d, "%s:%d: %s: items: must be a list", file, root->line, kind);
            return CU_EINVAL;
        }
        cu_err ret = CU_OK;
        for (size_t i = 0; items && items->type == CU_NODE_SEQ && i < items->n; i++) {
            cu_err err = decode_node(w, items->vals[i], file, d, depth + 1);
            if (err == CU_ENOMEM)
                return err;
            if (err)
                ret = err;
        }
        return ret;
    }

    int v1beta1 = 0;
    const kindinfo *ki = find_kind(api, kind, &v1beta1);
    const cu_node *nn = cu_node_path(root, "metadata.name");
    const char *name = nn && nn->type == CU_NODE_SCALAR ? cu_node_scalar(nn) : NULL;
    if (!ki) {
        cu_diag_unknown_kind(d, file, root, "skipping");
        return CU_OK;
    }
    if ((!name || !*name) && ki->k != CU_KIND_CONFIGURATION) {
        name = generated_name(w, root, kind);
        if (!name)
            return CU_ENOMEM;
    }
    if (!name || !*name) {
        /* the controller Configuration file usually has no metadata */
        if (ki->k != CU_KIND_CONFIGURATION) {
            cu_diag_error(d, "%s:%d: %s: missing metadata.name", file, root->line, kind);
            return CU_EINVAL;
        }
        name = "";
    }
    return decode_object(w, root, file, d, ki, v1beta1, api, name);
}

cu_err cu_world_decode(cu_world *w, const cu_doc *doc, cu_diag *d)
{
    if (!doc || !doc->root)
        return CU_OK;
    const char *file = cu_arena_strdup(&w->arena, doc->file ? doc->file : "<input>");
    if (!file)
        return CU_ENOMEM;
    return decode_node(w, doc->root, file, d, 0);
}

/* ------------------------------------------------------------------ */
/* loading                                                             */

static int has_doc_ext(const char *name)
{
    return ends_with(name, ".yaml") || ends_with(name, ".yml") || ends_with(name, ".json");
}

typedef struct loadctx {
    cu_world *w;
    cu_diag *d;
    cu_err result; /* CU_EINVAL once any decode error happened */
} loadctx;

static cu_err load_file(loadctx *l, const char *path)
{
    cu_arena tmp;
    cu_doc *docs = NULL;
    size_t ndocs = 0;
    cu_arena_init(&tmp, 0);
    cu_err err = cu_doc_parse_file(path, &tmp, &docs, &ndocs, l->d);
    if (err) {
        cu_arena_free(&tmp);
        return err;
    }
    for (size_t i = 0; i < ndocs; i++) {
        cu_err e = cu_world_decode(l->w, &docs[i], l->d);
        if (e == CU_ENOMEM) {
            err = e;
            break;
        }
        if (e)
            l->result = CU_EINVAL;
    }
    cu_arena_free(&tmp);
    return err;
}

#define CU_DIR_DEPTH_MAX 32

static cu_err load_path(loadctx *l, const char *path, int explicit_arg, int depth)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        cu_diag_error(l->d, "%s: %s", path, strerror(errno));
        return CU_EIO;
    }
    if (!S_ISDIR(st.st_mode)) {
        if (!explicit_arg && !has_doc_ext(path))
            return CU_OK;
        return load_file(l, path);
    }
    if (depth >= CU_DIR_DEPTH_MAX) {
        cu_diag_error(l->d, "%s: folders nested too deeply", path);
        return CU_EIO;
    }
    DIR *dir = opendir(path);
    if (!dir) {
        cu_diag_error(l->d, "%s: %s", path, strerror(errno));
        return CU_EIO;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    cu_err err = CU_OK;
    struct dirent *de;
    while ((de = readdir(dir)) != NULL) {
        if (de->d_name[0] == '.')
            continue; /* ".", "..", and hidden files */
        if (cu_vec_reserve(&names, n, &cap, sizeof(*names), 32)) {
            err = CU_ENOMEM;
            break;
        }
        names[n] = strdup(de->d_name);
        if (!names[n]) {
            err = CU_ENOMEM;
            break;
        }
        n++;
    }
    closedir(dir);
    if (!err)
        qsort(names, n, sizeof(*names), cu_strp_cmp);
    for (size_t i = 0; i < n && !err; i++) {
        size_t len = strlen(path) + strlen(names[i]) + 2;
        char *full = malloc(len);
        if (!full) {
            err = CU_ENOMEM;
            break;
        }
        snprintf(full, len, "%s%s%s", path, path[strlen(path) - 1] == '/' ? "" : "/", names[i]);
        err = load_path(l, full, 0, depth + 1);
        free(full);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    if (err == CU_ENOMEM)
        cu_diag_error(l->d, "%s: out of memory", path);
    return err;
}

cu_err cu_world_load(cu_world *w, const char *const *paths, size_t npaths, cu_diag *d)
{
    loadctx l = { w, d, CU_OK };
    for (size_t i = 0; i < npaths; i++) {
        cu_err err = load_path(&l, paths[i], 1, 0);
        if (err)
            return err;
    }
    cu_err err = cu_world_pod_groups(w, d);
    if (err == CU_ENOMEM)
        return err;
    return err ? CU_EINVAL : l.result;
}

/* ------------------------------------------------------------------ */
/* priority                                                            */

cu_err cu_workload_priority(const cu_world *w, const cu_workload *wl, int32_t *out, cu_diag *d)
{
    *out = 0;
    if (wl->has_priority) {
        *out = wl->priority;
        return CU_OK;
    }
    if (wl->pc_name) {
        int is_wpc = wl->pc_kind && strcmp(wl->pc_kind, "WorkloadPriorityClass") == 0;
        if (is_wpc) {
            for (size_t i = 0; i < w->wpcs.n; i++)
                if (strcmp(w->wpcs.items[i]->meta.name, wl->pc_name) == 0) {
                    *out = w->wpcs.items[i]->value;
                    return CU_OK;
                }
        } else {
            for (size_t i = 0; i < w->pcs.n; i++)
                if (strcmp(w->pcs.items[i]->meta.name, wl->pc_name) == 0) {
                    *out = w->pcs.items[i]->value;
                    return CU_OK;
                }
        }
        const char *kind = is_wpc ? "WorkloadPriorityClass" : "PriorityClass";
        if (wl->job_name)
            cu_diag_error(d, "Job %s/%s: %s: %s \"%s\" not found", wl->meta.ns, wl->job_name,
                          is_wpc ? "metadata.labels[" CU_LABEL_PRIORITY_CLASS "]"
                                 : "spec.template.spec.priorityClassName",
                          kind, wl->pc_name);
        else
            cu_diag_error(d, "Workload %s/%s: spec.priorityClassRef: %s \"%s\" not found",
                          wl->meta.ns, wl->meta.name, kind, wl->pc_name);
        return CU_ENOTFOUND;
    }
    for (size_t i = 0; i < w->pcs.n; i++)
        if (w->pcs.items[i]->global_default) {
            *out = w->pcs.items[i]->value;
            return CU_OK;
        }
    return CU_OK;
}
