/*
 * cu_convert.c - in-place rewrite of kueue.x-k8s.io/v1beta1 documents into
 * v1beta2 (the API changes listed in kueue-semantics.md section 1.1).
 *
 * Invariant: only documents whose apiVersion is exactly
 * kueue.x-k8s.io/v1beta1 are touched (and the items of any *List); new
 * nodes are allocated in the caller's arena, existing keys keep their
 * position.
 */
#include "cu_objects.h"

#include <string.h>

static int is_str(const cu_node *n, const char *s)
{
    const char *v = cu_node_scalar(n);
    return v && strcmp(v, s) == 0;
}

static int set_str(cu_arena *a, cu_node *map, const char *key, const char *v)
{
    cu_node *n = cu_node_new_str(a, v);
    return n && cu_node_set(a, map, key, n) == CU_OK;
}

/* spec.admissionChecks: [names] -> spec.admissionChecksStrategy. */
static int conv_admission_checks(cu_arena *a, cu_node *spec)
{
    cu_node *names = cu_node_get(spec, "admissionChecks");
    if (!names)
        return 0;
    if (names->type != CU_NODE_SEQ) {
        if (cu_node_is_null(names)) {
            cu_node_del(spec, "admissionChecks");
            return 1;
        }
        return 0; /* not something we understand: leave it for the decoder */
    }
    cu_node *strategy = cu_node_get(spec, "admissionChecksStrategy");
    cu_node *list = NULL;
    if (strategy && strategy->type == CU_NODE_MAP) {
        list = cu_node_get(strategy, "admissionChecks");
        if (!list || list->type != CU_NODE_SEQ) {
            list = cu_node_new_seq(a);
            if (!list || cu_node_set(a, strategy, "admissionChecks", list) != CU_OK)
                return 0;
        }
        cu_node_del(spec, "admissionChecks");
    } else {
        strategy = cu_node_new_map(a);
        list = cu_node_new_seq(a);
        if (!strategy || !list || cu_node_set(a, strategy, "admissionChecks", list) != CU_OK)
            return 0;
        if (!cu_node_rename(a, spec, "admissionChecks", "admissionChecksStrategy"))
            return 0;
        if (cu_node_set(a, spec, "admissionChecksStrategy", strategy) != CU_OK)
            return 0;
    }
    for (size_t i = 0; i < names->n; i++) {
        cu_node *item = cu_node_new_map(a);
        cu_node *nm = cu_node_clone(a, names->vals[i]);
        if (!item || !nm || cu_node_set(a, item, "name", nm) != CU_OK ||
            cu_node_push(a, list, item) != CU_OK)
            return 1;
    }
    return 1;
}

static void conv_cluster_queue(cu_arena *a, cu_node *doc)
{
    cu_node *spec = cu_node_get(doc, "spec");
    if (spec && spec->type == CU_NODE_MAP) {
        if (cu_node_get(spec, "cohort")) {
            if (cu_node_get(spec, "cohortName"))
                cu_node_del(spec, "cohort");
            else
                cu_node_rename(a, spec, "cohort", "cohortName");
        }
        cu_node *ff = cu_node_get(spec, "flavorFungibility");
        if (ff && ff->type == CU_NODE_MAP) {
            if (is_str(cu_node_get(ff, "whenCanBorrow"), "Borrow"))
                set_str(a, ff, "whenCanBorrow", "MayStopSearch");
            if (is_str(cu_node_get(ff, "whenCanPreempt"), "Preempt"))
                set_str(a, ff, "whenCanPreempt", "MayStopSearch");
        }
        conv_admission_checks(a, spec);
    }
    cu_node *status = cu_node_get(doc, "status");
    if (status && status->type == CU_NODE_MAP)
        cu_node_del(status, "pendingWorkloadsStatus");
}

static void conv_workload(cu_arena *a, cu_node *doc)
{
    cu_node *spec = cu_node_get(doc, "spec");
    if (!spec || spec->type != CU_NODE_MAP)
        return;
    const char *name = cu_node_scalar(cu_node_get(spec, "priorityClassName"));
    const char *src = cu_node_scalar(cu_node_get(spec, "priorityClassSource"));
    cu_node_del(spec, "priorityClassSource");
    if (!name || !*name) {
        cu_node_del(spec, "priorityClassName");
        return;
    }
    int wpc = src && strcmp(src, "kueue.x-k8s.io/workloadpriorityclass") == 0;
    cu_node *ref = cu_node_new_map(a);
    if (!ref || !set_str(a, ref, "group", wpc ? CU_GROUP : "scheduling.k8s.io") ||
        !set_str(a, ref, "kind", wpc ? "WorkloadPriorityClass" : "PriorityClass") ||
        !set_str(a, ref, "name", name))
        return;
    if (cu_node_rename(a, spec, "priorityClassName", "priorityClassRef"))
        cu_node_set(a, spec, "priorityClassRef", ref);
}

static void conv_cohort(cu_arena *a, cu_node *doc)
{
    cu_node *spec = cu_node_get(doc, "spec");
    if (!spec || spec->type != CU_NODE_MAP || !cu_node_get(spec, "parent"))
        return;
    if (cu_node_get(spec, "parentName"))
        cu_node_del(spec, "parent");
    else
        cu_node_rename(a, spec, "parent", "parentName");
}

/* 1 if api is in a Kueue group in a version convert does not know. */
static int kueue_version_unknown(const char *api)
{
    const char *slash = strrchr(api, '/');
    if (!slash)
        return 0;
    size_t glen = (size_t)(slash - api);
    static const char *const groups[] = { CU_GROUP, "config.kueue.x-k8s.io" };
    int kueue = 0;
    for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
        kueue |= strlen(groups[i]) == glen && strncmp(api, groups[i], glen) == 0;
    return kueue && strcmp(slash + 1, "v1beta1") != 0 && strcmp(slash + 1, "v1beta2") != 0;
}

static int conv(cu_arena *a, cu_node *doc, int depth, const char *file, cu_diag *d)
{
    if (!doc || doc->type != CU_NODE_MAP || depth > 8)
        return 0;
    const char *api = cu_node_scalar(cu_node_get(doc, "apiVersion"));
    const char *kind = cu_node_scalar(cu_node_get(doc, "kind"));
    if (!api || !kind)
        return 0;
    size_t kl = strlen(kind);
    if (kl >= 4 && strcmp(kind + kl - 4, "List") == 0) {
        cu_node *items = cu_node_get(doc, "items");
        int changed = 0;
        for (size_t i = 0; items && items->type == CU_NODE_SEQ && i < items->n; i++)
            changed |= conv(a, items->vals[i], depth + 1, file, d);
        return changed;
    }
    if (d && kueue_version_unknown(api))
        cu_diag_unknown_kind(d, file, doc, "passing through");
    if (strcmp(api, CU_GROUP "/v1beta1") != 0)
        return 0;
    if (!set_str(a, doc, "apiVersion", CU_GROUP "/v1beta2"))
        return 0;
    if (strcmp(kind, "ClusterQueue") == 0)
        conv_cluster_queue(a, doc);
    else if (strcmp(kind, "Workload") == 0)
        conv_workload(a, doc);
    else if (strcmp(kind, "Cohort") == 0)
        conv_cohort(a, doc);
    return 1;
}

int cu_convert_v1beta2(cu_arena *a, cu_node *doc) { return conv(a, doc, 0, NULL, NULL); }

int cu_convert_v1beta2_diag(cu_arena *a, cu_node *doc, const char *file, cu_diag *d)
{
    return conv(a, doc, 0, file, d);
}
