/*
 * test_objects.c - decoding of every kind from YAML text, v1beta1/v1beta2
 * equivalence, defaults, Job -> Workload, error messages (and that other
 * objects survive a bad one), label selectors, priorities, conversion and
 * loading files and folders; core/v1 Nodes and Pods.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cu_json.h"
#include "cu_objects.h"
#include "cu_pod.h"

typedef struct fx {
    cu_world w;
    cu_diag d;
    cu_arena a; /* parse arena, freed at teardown (decode must not need it) */
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof(*f));
    if (!f)
        return -1;
    cu_world_init(&f->w);
    cu_diag_init(&f->d);
    cu_arena_init(&f->a, 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    cu_world_free(&f->w);
    cu_diag_free(&f->d);
    cu_arena_free(&f->a);
    free(f);
    return 0;
}

static void dump_diag(const cu_diag *d)
{
    for (size_t i = 0; i < d->n; i++)
        fprintf(stderr, "  diag: %s\n", d->msgs[i]);
}

/* Parses yaml (multi-document) into a temporary arena, decodes every
 * document into f->w, frees the temporary arena (so the test also checks
 * that decoded objects do not point into the doc tree). Returns the first
 * non-OK decode result. */
static cu_err load(fx *f, const char *yaml)
{
    cu_arena tmp;
    cu_doc *docs = NULL;
    size_t n = 0;
    cu_arena_init(&tmp, 0);
    cu_err err = cu_doc_parse("test.yaml", yaml, strlen(yaml), &tmp, &docs, &n, &f->d);
    if (err)
        dump_diag(&f->d);
    assert_int_equal(err, CU_OK);
    cu_err ret = CU_OK;
    for (size_t i = 0; i < n; i++) {
        cu_err e = cu_world_decode(&f->w, &docs[i], &f->d);
        if (e && !ret)
            ret = e;
    }
    /* scribble over the freed tree's memory is not possible portably;
     * freeing is enough under ASan */
    cu_arena_free(&tmp);
    return ret;
}

static int has_msg(const cu_diag *d, const char *msg)
{
    for (size_t i = 0; i < d->n; i++)
        if (strcmp(d->msgs[i], msg) == 0)
            return 1;
    return 0;
}

#define assert_msg(d, m) \
    do { \
        if (!has_msg((d), (m))) { \
            dump_diag(d); \
            fprintf(stderr, "  missing: %s\n", (m)); \
        } \
        assert_true(has_msg((d), (m))); \
    } while (0)

/* ------------------------------------------------------------------ */

/* Quotas the CRD pattern accepts: up to 2^63-1 milli-units they are held
 * exactly (8Pi of memory, 9.2e15 cpu); beyond (9Pi, 1Ei, 1e18, 1e400) the
 * ClusterQueue still decodes (it must not vanish, its workloads would be
 * told it does not exist) and validation names the field and the value. */
static void test_quota_too_large(void **state)
{
    fx *f = *state;
    const char *yaml =
        "apiVersion: kueue.x-k8s.io/v1beta2\n"
        "kind: ClusterQueue\n"
        "metadata: {name: huge}\n"
        "spec:\n"
        "  cohortName: co\n"
        "  resourceGroups:\n"
        "  - coveredResources: [cpu, memory, example.com/x]\n"
        "    flavors:\n"
        "    - name: f\n"
        "      resources:\n"
        "      - {name: cpu, nominalQuota: 9223372036854775807m, lendingLimit: 1e400}\n"
        "      - {name: memory, nominalQuota: 9Pi, borrowingLimit: 8Ei}\n"
        "      - {name: example.com/x, nominalQuota: 1e19, lendingLimit: 1e18}\n";
    assert_int_equal(load(f, yaml), CU_OK);
    assert_int_equal(f->d.n, 0);
    assert_int_equal(f->w.cqs.n, 1);
    const cu_cluster_queue *cq = f->w.cqs.items[0];
    const cu_rquota *r = cq->groups.items[0].flavors[0].res;
    assert_int_equal(r[0].nominal, INT64_MAX);
    assert_null(r[0].big_nominal);
    assert_true(r[0].has_llimit);
    assert_string_equal(r[0].big_llimit, "1e400");
    assert_int_equal(r[1].nominal, INT64_C(10133099161583616)); /* 9Pi, in bytes */
    assert_null(r[1].big_nominal);
    assert_string_equal(r[1].big_blimit, "8Ei");
    assert_string_equal(r[2].big_nominal, "1e19");
    assert_null(r[2].big_llimit);
    assert_int_equal(r[2].llimit, INT64_C(1000000000000000000)); /* 1e18 units */
    cu_diag d;
    cu_diag_init(&d);
    assert_int_not_equal(cu_object_validate(CU_KIND_CLUSTER_QUEUE, cq, &d), CU_OK);
    const char *base = "ClusterQueue huge: spec.resourceGroups[0].flavors[0].resources";
    char m[400];
    snprintf(m, sizeof m,
             "%s[0].lendingLimit: Invalid value: \"1e400\": too large: Cueue holds an amount of "
             "cpu up to 9223372036854775807m, as Kueue (int64 milli-units)",
             base);
    assert_msg(&d, m);
    snprintf(m, sizeof m,
             "%s[1].borrowingLimit: Invalid value: \"8Ei\": too large: Cueue holds an amount of "
             "memory up to 9223372036854775807, as Kueue (int64 whole units)",
             base);
    assert_msg(&d, m);
    snprintf(m, sizeof m,
             "%s[2].nominalQuota: Invalid value: \"1e19\": too large: Cueue holds an amount of "
             "example.com/x up to 9223372036854775807, as Kueue (int64 whole units)",
             base);
    assert_msg(&d, m);
    assert_int_equal(d.n, 3); /* nothing else: 1e400 is not compared with the nominal */
    cu_diag_free(&d);

    /* a request too large stays a decode error of the Workload (it gets
     * the DecodeFailed condition in the controller) */
    cu_diag_free(&f->d);
    cu_diag_init(&f->d);
    const char *wl = "apiVersion: kueue.x-k8s.io/v1beta2\n"
                     "kind: Workload\n"
                     "metadata: {name: w, namespace: ns}\n"
                     "spec:\n"
                     "  queueName: lq\n"
                     "  podSets:\n"
                     "  - {name: main, count: 1, template: {spec: {containers: [{name: c, "
                     "resources: {requests: {memory: 8Ei}}}]}}}\n";
    load(f, wl);
    assert_true(f->d.n > 0);
    assert_non_null(strstr(f->d.msgs[0], "\"8Ei\" is too large"));
}

static void test_kvs_reslist(void **state)
{
    (void)state;
    cu_kv kv[] = { { "a", "1" }, { "b", "2" } };
    cu_kvs kvs = { 2, kv };
    assert_string_equal(cu_kvs_get(&kvs, "b"), "2");
    assert_null(cu_kvs_get(&kvs, "c"));
    cu_res r[] = { { "cpu", 5 }, { "memory", 7 }, { "pods", 9 } };
    cu_reslist l = { 3, r };
    assert_int_equal(cu_reslist_get(&l, "cpu"), 5);
    assert_int_equal(cu_reslist_get(&l, "pods"), 9);
    assert_int_equal(cu_reslist_get(&l, "memory"), 7);
    assert_int_equal(cu_reslist_get(&l, "gpu"), 0);
    assert_string_equal(cu_kind_name(CU_KIND_CLUSTER_QUEUE), "ClusterQueue");
    assert_string_equal(cu_kind_name(CU_KIND_WORKLOAD_PRIORITY_CLASS), "WorkloadPriorityClass");
}

static void test_resource_flavor(void **state)
{
    fx *f = *state;
    assert_int_equal(
        load(
            f,
            "apiVersion: kueue.x-k8s.io/v1beta2\n"
            "kind: ResourceFlavor\n"
            "metadata: {name: spot, labels: {tier: cheap}}\n"
            "spec:\n"
            "  nodeLabels: {instance-type: spot}\n"
            "  nodeTaints: [{key: spot, value: 'true', effect: NoSchedule}]\n"
            "  tolerations: [{key: spot-taint, operator: Exists, effect: NoSchedule}, {key: k, value: v}]\n"
            "  topologyName: default\n"),
        CU_OK);
    assert_int_equal(f->w.flavors.n, 1);
    const cu_resource_flavor *rf = f->w.flavors.items[0];
    assert_string_equal(rf->meta.name, "spot");
    assert_null(rf->meta.ns);
    assert_string_equal(rf->meta.api_version, "kueue.x-k8s.io/v1beta2");
    assert_string_equal(cu_kvs_get(&rf->meta.labels, "tier"), "cheap");
    assert_string_equal(cu_kvs_get(&rf->node_labels, "instance-type"), "spot");
    assert_int_equal(rf->ntaints, 1);
    assert_string_equal(rf->taints[0].key, "spot");
    assert_string_equal(rf->taints[0].value, "true");
    assert_string_equal(rf->taints[0].effect, "NoSchedule");
    assert_int_equal(rf->ntols, 2);
    assert_int_equal(rf->tols[0].op, CU_TOL_EXISTS);
    assert_null(rf->tols[0].value);
    assert_int_equal(rf->tols[1].op, CU_TOL_EQUAL);
    assert_string_equal(rf->tols[1].value, "v");
    assert_null(rf->tols[1].effect);
    assert_string_equal(rf->topology_name, "default");
    assert_string_equal(rf->meta.file, "test.yaml");
    assert_int_equal(rf->meta.line, 1);
    assert_int_equal(f->d.n, 0);
}

static const char *cq_full_v1beta2 =
    "apiVersion: kueue.x-k8s.io/v1beta2\n"
    "kind: ClusterQueue\n"
    "metadata: {name: team-a-cq, creationTimestamp: '2024-01-02T03:04:05Z'}\n"
    "spec:\n"
    "  namespaceSelector: {matchLabels: {team: a}}\n"
    "  cohortName: team-ab\n"
    "  queueingStrategy: StrictFIFO\n"
    "  resourceGroups:\n"
    "  - coveredResources: [cpu, memory, pods]\n"
    "    flavors:\n"
    "    - name: default-flavor\n"
    "      resources:\n"
    "      - {name: cpu, nominalQuota: 9, borrowingLimit: 1}\n"
    "      - {name: memory, nominalQuota: 36Gi, lendingLimit: 10Gi}\n"
    "      - {name: pods, nominalQuota: 5}\n"
    "    - name: spot\n"
    "      resources:\n"
    "      - {name: cpu, nominalQuota: 500m}\n"
    "      - {name: memory, nominalQuota: 0}\n"
    "      - {name: pods, nominalQuota: 0}\n"
    "  - coveredResources: [nvidia.com/gpu]\n"
    "    flavors: [{name: a100, resources: [{name: nvidia.com/gpu, nominalQuota: 8}]}]\n"
    "  preemption:\n"
    "    reclaimWithinCohort: Any\n"
    "    borrowWithinCohort: {policy: LowerPriority, maxPriorityThreshold: 100}\n"
    "    withinClusterQueue: LowerOrNewerEqualPriority\n"
    "  flavorFungibility: {whenCanBorrow: TryNextFlavor, whenCanPreempt: MayStopSearch,\n"
    "                      preference: PreemptionOverBorrowing}\n"
    "  fairSharing: {weight: '0.5'}\n"
    "  stopPolicy: HoldAndDrain\n"
    "  admissionScope: {admissionMode: UsageBasedAdmissionFairSharing}\n";

static void test_cluster_queue_full(void **state)
{
    fx *f = *state;
    assert_int_equal(load(f, cq_full_v1beta2), CU_OK);
    assert_int_equal(f->w.cqs.n, 1);
    const cu_cluster_queue *cq = f->w.cqs.items[0];
    assert_string_equal(cq->meta.name, "team-a-cq");
    assert_true(cq->meta.has_created);
    assert_int_equal(cq->meta.created_ms, 1704164645000LL);
    assert_string_equal(cq->cohort, "team-ab");
    assert_int_equal(cq->queueing, CU_STRICT_FIFO);
    assert_false(cq->ns_selector.is_null);
    assert_string_equal(cu_kvs_get(&cq->ns_selector.match_labels, "team"), "a");
    assert_int_equal(cq->groups.n, 2);
    const cu_rgroup *g = &cq->groups.items[0];
    assert_int_equal(g->covered.n, 3);
    assert_string_equal(g->covered.items[2], "pods");
    assert_int_equal(g->nflavors, 2);
    assert_string_equal(g->flavors[0].name, "default-flavor");
    assert_int_equal(g->flavors[0].n, 3);
    assert_string_equal(g->flavors[0].res[0].name, "cpu");
    assert_int_equal(g->flavors[0].res[0].nominal, 9000);
    assert_true(g->flavors[0].res[0].has_blimit);
    assert_int_equal(g->flavors[0].res[0].blimit, 1000);
    assert_false(g->flavors[0].res[0].has_llimit);
    assert_int_equal(g->flavors[0].res[1].nominal, 36LL * 1073741824);
    assert_true(g->flavors[0].res[1].has_llimit);
    assert_int_equal(g->flavors[0].res[1].llimit, 10LL * 1073741824);
    assert_int_equal(g->flavors[1].res[0].nominal, 500);
    assert_string_equal(cq->groups.items[1].flavors[0].res[0].name, "nvidia.com/gpu");
    assert_int_equal(cq->groups.items[1].flavors[0].res[0].nominal, 8);
    assert_int_equal(cq->preemption.reclaim, CU_PP_ANY);
    assert_int_equal(cq->preemption.within_cq, CU_PP_LOWER_OR_NEWER_EQUAL_PRIORITY);
    assert_int_equal(cq->preemption.borrow_policy, CU_PP_LOWER_PRIORITY);
    assert_true(cq->preemption.has_threshold);
    assert_int_equal(cq->preemption.threshold, 100);
    assert_int_equal(cq->fungibility.when_can_borrow, CU_FUNG_TRY_NEXT_FLAVOR);
    assert_int_equal(cq->fungibility.when_can_preempt, CU_FUNG_MAY_STOP_SEARCH);
    assert_int_equal(cq->fungibility.preference, CU_PREF_PREEMPTION_OVER_BORROWING);
    assert_int_equal(cq->fs_weight, 500);
    assert_int_equal(cq->stop_policy, CU_STOP_HOLD_AND_DRAIN);
    assert_true(cq->afs);
}

static void test_cluster_queue_defaults(void **state)
{
    fx *f = *state;
    assert_int_equal(
        load(f, "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: a}\n"
                "---\n"
                "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: b}\n"
                "spec: {namespaceSelector: {}, preemption: {}, flavorFungibility: {}}\n"
                "---\n"
                "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: c}\n"
                "spec: {namespaceSelector: null}\n"),
        CU_OK);
    assert_int_equal(f->w.cqs.n, 3);
    for (size_t i = 0; i < 3; i++) {
        const cu_cluster_queue *cq = f->w.cqs.items[i];
        assert_null(cq->cohort);
        assert_int_equal(cq->groups.n, 0);
        assert_int_equal(cq->queueing, CU_BEST_EFFORT_FIFO);
        assert_int_equal(cq->fungibility.when_can_borrow, CU_FUNG_MAY_STOP_SEARCH);
        assert_int_equal(cq->fungibility.when_can_preempt, CU_FUNG_TRY_NEXT_FLAVOR);
        assert_int_equal(cq->fungibility.preference, CU_PREF_UNSET);
        assert_int_equal(cq->preemption.within_cq, CU_PP_NEVER);
        assert_int_equal(cq->preemption.reclaim, CU_PP_NEVER);
        assert_int_equal(cq->preemption.borrow_policy, CU_PP_NEVER);
        assert_false(cq->preemption.has_threshold);
        assert_int_equal(cq->stop_policy, CU_STOP_NONE);
        assert_int_equal(cq->fs_weight, 1000);
        assert_false(cq->afs);
        assert_false(cq->meta.has_created);
        assert_int_equal(cq->meta.seq, i);
    }
    cu_kv kv = { "kubernetes.io/metadata.name", "x" };
    cu_kvs labels = { 1, &kv };
    assert_true(f->w.cqs.items[0]->ns_selector.is_null);
    assert_false(cu_labelsel_matches(&f->w.cqs.items[0]->ns_selector, &labels));
    assert_false(f->w.cqs.items[1]->ns_selector.is_null);
    assert_true(cu_labelsel_matches(&f->w.cqs.items[1]->ns_selector, &labels));
    assert_true(f->w.cqs.items[2]->ns_selector.is_null);
}

/* The same objects written in v1beta1 and v1beta2 decode the same. */
static void test_v1beta1_equivalence(void **state)
{
    fx *f = *state;
    assert_int_equal(
        load(
            f,
            "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: old}\n"
            "spec:\n"
            "  cohort: co\n"
            "  flavorFungibility: {whenCanBorrow: Borrow, whenCanPreempt: Preempt}\n"
            "  admissionChecks: [check-a]\n"
            "---\n"
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: new}\n"
            "spec:\n"
            "  cohortName: co\n"
            "  flavorFungibility: {whenCanBorrow: MayStopSearch, whenCanPreempt: MayStopSearch}\n"
            "---\n"
            "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\nmetadata: {name: w1, namespace: ns}\n"
            "spec: {priorityClassName: high, priorityClassSource: kueue.x-k8s.io/workloadpriorityclass}\n"
            "---\n"
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: w2, namespace: ns}\n"
            "spec: {priorityClassRef: {group: kueue.x-k8s.io, kind: WorkloadPriorityClass, name: high}}\n"
            "---\n"
            "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\nmetadata: {name: w3, namespace: ns}\n"
            "spec: {priorityClassName: pc, priorityClassSource: scheduling.k8s.io/priorityclass}\n"
            "---\n"
            "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\nmetadata: {name: w4, namespace: ns}\n"
            "spec: {priorityClassName: pc}\n"
            "---\n"
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: w5, namespace: ns}\n"
            "spec: {priorityClassRef: {group: scheduling.k8s.io, kind: PriorityClass, name: pc}}\n"
            "---\n"
            "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Cohort\nmetadata: {name: c1}\nspec: {parent: root}\n"
            "---\n"
            "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Cohort\nmetadata: {name: c2}\nspec: {parentName: root}\n"
            "---\n"
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: c3}\nspec: {parentName: root}\n"
            "---\n"
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: v2-ignores-cohort}\n"
            "spec: {cohort: co}\n"),
        CU_OK);
    assert_int_equal(f->w.cqs.n, 3);
    for (size_t i = 0; i < 2; i++) {
        const cu_cluster_queue *cq = f->w.cqs.items[i];
        assert_string_equal(cq->cohort, "co");
        assert_int_equal(cq->fungibility.when_can_borrow, CU_FUNG_MAY_STOP_SEARCH);
        assert_int_equal(cq->fungibility.when_can_preempt, CU_FUNG_MAY_STOP_SEARCH);
    }
    assert_null(f->w.cqs.items[2]->cohort); /* v1beta2 has cohortName only */
    assert_int_equal(f->w.workloads.n, 5);
    for (size_t i = 0; i < 2; i++) {
        const cu_workload *wl = f->w.workloads.items[i];
        assert_string_equal(wl->pc_group, "kueue.x-k8s.io");
        assert_string_equal(wl->pc_kind, "WorkloadPriorityClass");
        assert_string_equal(wl->pc_name, "high");
    }
    for (size_t i = 2; i < 5; i++) {
        const cu_workload *wl = f->w.workloads.items[i];
        assert_string_equal(wl->pc_group, "scheduling.k8s.io");
        assert_string_equal(wl->pc_kind, "PriorityClass");
        assert_string_equal(wl->pc_name, "pc");
    }
    assert_int_equal(f->w.cohorts.n, 3);
    for (size_t i = 0; i < 3; i++)
        assert_string_equal(f->w.cohorts.items[i]->parent, "root");
}

static void test_other_kinds(void **state)
{
    fx *f = *state;
    assert_int_equal(
        load(
            f,
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: root}\n"
            "spec:\n"
            "  fairSharing: {weight: 750m}\n"
            "  resourceGroups: [{coveredResources: [cpu], flavors: [{name: f, resources: [{name: cpu, nominalQuota: 12}]}]}]\n"
            "---\n"
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: q, namespace: team-a}\n"
            "spec: {clusterQueue: cq, stopPolicy: Hold, fairSharing: {weight: '2'}}\n"
            "---\n"
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: q2}\nspec: {clusterQueue: cq}\n"
            "---\n"
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata: {name: sample}\n"
            "value: 10000\ndescription: Sample priority\n"
            "---\n"
            "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\n"
            "value: -5\nglobalDefault: true\n"
            "---\n"
            "apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a, labels: {team: a}}\n"
            "---\n"
            "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n"
            "manageJobsWithoutQueueName: true\nfairSharing: {enable: true}\n"
            "---\n"
            "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\nfairSharing: {enable: false}\n"
            "---\n"
            "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
            "metadata: {name: cfg}\nfairSharing: {}\n"
            "---\n"
            "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"),
        CU_OK);
    assert_int_equal(f->d.n, 0);
    assert_int_equal(f->w.cohorts.n, 1);
    const cu_cohort *co = f->w.cohorts.items[0];
    assert_null(co->parent);
    assert_int_equal(co->fs_weight, 750);
    assert_int_equal(co->groups.items[0].flavors[0].res[0].nominal, 12000);
    assert_int_equal(f->w.lqs.n, 2);
    assert_string_equal(f->w.lqs.items[0]->meta.ns, "team-a");
    assert_string_equal(f->w.lqs.items[0]->cluster_queue, "cq");
    assert_int_equal(f->w.lqs.items[0]->stop_policy, CU_STOP_HOLD);
    assert_int_equal(f->w.lqs.items[0]->fs_weight, 2000);
    assert_string_equal(f->w.lqs.items[1]->meta.ns, "default");
    assert_int_equal(f->w.lqs.items[1]->stop_policy, CU_STOP_NONE);
    assert_int_equal(f->w.lqs.items[1]->fs_weight, 1000);
    assert_int_equal(f->w.wpcs.n, 1);
    assert_int_equal(f->w.wpcs.items[0]->value, 10000);
    assert_string_equal(f->w.wpcs.items[0]->description, "Sample priority");
    assert_int_equal(f->w.pcs.n, 1);
    assert_int_equal(f->w.pcs.items[0]->value, -5);
    assert_true(f->w.pcs.items[0]->global_default);
    assert_int_equal(f->w.namespaces.n, 1);
    assert_string_equal(cu_kvs_get(&f->w.namespaces.items[0]->meta.labels, "team"), "a");
    assert_int_equal(f->w.configs.n, 4);
    assert_true(f->w.configs.items[0]->fair_sharing);
    assert_true(f->w.configs.items[0]->manage_jobs_without_queue_name);
    assert_false(f->w.configs.items[1]->fair_sharing);
    assert_true(f->w.configs.items[2]->fair_sharing);
    assert_false(f->w.configs.items[3]->fair_sharing);
    assert_false(f->w.configs.items[3]->manage_jobs_without_queue_name);
}

/* ---- the controller Configuration ---- */

static const cu_config *only_config(fx *f)
{
    assert_int_equal(f->w.configs.n, 1);
    return f->w.configs.items[0];
}

static void test_config_fair_sharing(void **state)
{
    fx *f = *state;
    static const struct {
        const char *name, *yaml;
        int fair_sharing;
        size_t nstrategies;
        cu_fs_strategy s0, s1;
    } cases[] = {
        { "v1beta2 block enables",
          "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
          "fairSharing: {preemptionStrategies: [LessThanOrEqualToFinalShare, LessThanInitialShare]}\n",
          1, 2, CU_FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE, CU_FS_LESS_THAN_INITIAL_SHARE },
        { "v1beta2 one strategy",
          "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
          "fairSharing:\n  preemptionStrategies: [LessThanInitialShare]\n",
          1, 1, CU_FS_LESS_THAN_INITIAL_SHARE, 0 },
        { "v1beta2 S2-a alone",
          "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
          "fairSharing: {preemptionStrategies: [LessThanOrEqualToFinalShare]}\n",
          1, 1, CU_FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE, 0 },
        { "v1beta2 null block is absent",
          "apiVersion: config.kueue.x-k8s.io/v1beta2\n"
          "kind: Configuration\nfairSharing: null\n",
          0, 0, 0, 0 },
        { "v1beta2 no block",
          "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
          "namespace: kueue-system\n",
          0, 0, 0, 0 },
        { "v1beta1 enable true, default strategies",
          "apiVersion: config.kueue.x-k8s.io/v1beta1\n"
          "kind: Configuration\nfairSharing: {enable: true}\n",
          1, 0, 0, 0 },
        { "v1beta1 block without enable",
          "apiVersion: config.kueue.x-k8s.io/v1beta1\n"
          "kind: Configuration\nfairSharing: {preemptionStrategies: [LessThanInitialShare]}\n",
          0, 1, CU_FS_LESS_THAN_INITIAL_SHARE, 0 },
        { "v1beta1 enable false",
          "apiVersion: config.kueue.x-k8s.io/v1beta1\n"
          "kind: Configuration\nfairSharing: {enable: false}\n",
          0, 0, 0, 0 },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        teardown(state);
        setup(state);
        f = *state;
        if (load(f, cases[i].yaml) != CU_OK) {
            dump_diag(&f->d);
            fail_msg("%s: decode failed", cases[i].name);
        }
        const cu_config *x = only_config(f);
        if (x->fair_sharing != cases[i].fair_sharing || x->nstrategies != cases[i].nstrategies)
            fail_msg("%s: fair_sharing %d nstrategies %zu", cases[i].name, x->fair_sharing,
                     x->nstrategies);
        if (x->nstrategies > 0)
            assert_int_equal(x->strategies[0], cases[i].s0);
        if (x->nstrategies > 1)
            assert_int_equal(x->strategies[1], cases[i].s1);
        assert_false(x->afs);
    }
}

static void test_config_afs(void **state)
{
    fx *f = *state;
    assert_int_equal(load(f, "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
                             "admissionFairSharing:\n"
                             "  usageHalfLifeTime: 168h\n"
                             "  usageSamplingInterval: 1h30m\n"
                             "  resourceWeights: {nvidia.com/gpu: 10, cpu: 0.5, memory: '0'}\n"),
                     CU_OK);
    const cu_config *x = only_config(f);
    assert_false(x->fair_sharing);
    assert_true(x->afs);
    assert_int_equal(x->afs_half_life_ms, INT64_C(168) * 3600 * 1000);
    assert_int_equal(x->afs_sampling_ms, 90 * 60 * 1000);
    assert_int_equal(x->afs_weights.n, 3);
    /* sorted by name */
    assert_string_equal(x->afs_weights.items[0].name, "cpu");
    assert_int_equal(x->afs_weights.items[0].milli, 500);
    assert_string_equal(x->afs_weights.items[1].name, "memory");
    assert_int_equal(x->afs_weights.items[1].milli, 0);
    assert_string_equal(x->afs_weights.items[2].name, "nvidia.com/gpu");
    assert_int_equal(cu_reslist_get(&x->afs_weights, "nvidia.com/gpu"), 10000);

    /* usageSamplingInterval defaults to 5m (also when 0); no weights */
    teardown(state);
    setup(state);
    f = *state;
    assert_int_equal(
        load(f, "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n"
                "admissionFairSharing: {usageHalfLifeTime: 0s}\n"
                "---\n"
                "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
                "admissionFairSharing: {usageHalfLifeTime: 300s, usageSamplingInterval: '0'}\n"),
        CU_OK);
    assert_int_equal(f->w.configs.n, 2);
    for (size_t i = 0; i < 2; i++) {
        const cu_config *c = f->w.configs.items[i];
        assert_true(c->afs);
        assert_int_equal(c->afs_sampling_ms, 5 * 60 * 1000);
        assert_int_equal(c->afs_weights.n, 0);
    }
    assert_int_equal(f->w.configs.items[0]->afs_half_life_ms, 0);
    assert_int_equal(f->w.configs.items[1]->afs_half_life_ms, 300 * 1000);
}

/* Go duration syntax, through usageHalfLifeTime. */
static void test_config_durations(void **state)
{
    static const struct {
        const char *text;
        int64_t ms;
    } good[] = {
        { "0", 0 },          { "0s", 0 },
        { "5m", 300000 },    { "1h30m", 5400000 },
        { "300s", 300000 },  { "1.5h", 5400000 },
        { "250ms", 250 },    { "1500us", 1 },
        { "999999ns", 0 },   { "2h45m30.5s", INT64_C(9930500) },
        { "+10s", 10000 },   { ".5s", 500 },
        { "1h1h", 7200000 }, { "2562047h", INT64_C(2562047) * 3600000 },
    };
    static const char *const bad[] = {
        "",   "5", "h",  "1x",          "1.h5",     "10 s", "1hour",
        "s5", "-", ".s", "9999999999h", "2562048h", "1e3s",
    };
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        teardown(state);
        setup(state);
        fx *f = *state;
        char yaml[256];
        snprintf(yaml, sizeof yaml,
                 "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
                 "admissionFairSharing: {usageHalfLifeTime: '%s'}\n",
                 good[i].text);
        if (load(f, yaml) != CU_OK) {
            dump_diag(&f->d);
            fail_msg("\"%s\" should parse", good[i].text);
        }
        if (only_config(f)->afs_half_life_ms != good[i].ms)
            fail_msg("\"%s\": %lld ms, want %lld", good[i].text,
                     (long long)only_config(f)->afs_half_life_ms, (long long)good[i].ms);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        teardown(state);
        setup(state);
        fx *f = *state;
        char yaml[256], want[512];
        snprintf(yaml, sizeof yaml,
                 "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
                 "admissionFairSharing: {usageHalfLifeTime: '%s'}\n",
                 bad[i]);
        if (load(f, yaml) != CU_EINVAL)
            fail_msg("\"%s\" should be rejected", bad[i]);
        snprintf(want, sizeof want,
                 "Configuration test.yaml: admissionFairSharing.usageHalfLifeTime: "
                 "invalid duration \"%s\" (use Go duration syntax such as \"168h\", \"1h30m\" or "
                 "\"300s\")",
                 bad[i]);
        assert_msg(&f->d, want);
        assert_int_equal(f->w.configs.n, 0);
    }
}

static void test_config_errors(void **state)
{
    fx *f = *state;
    assert_int_equal(
        load(
            f,
            "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
            "fairSharing: {preemptionStrategies: [LessThanInitialShare, LessThanOrEqualToFinalShare]}\n"
            "---\n"
            "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
            "fairSharing: {preemptionStrategies: [LessThanInitialShare, LessThanInitialShare]}\n"
            "---\n"
            "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nmetadata: {name: cfg}\n"
            "fairSharing: {preemptionStrategies: [LessThanOrEqualToFinalShare, Fair, [x]]}\n"
            "---\n"
            "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n"
            "fairSharing: {enable: yes-please, preemptionStrategies: LessThanInitialShare}\n"
            "---\n"
            "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
            "fairSharing: true\n"
            "admissionFairSharing:\n"
            "  usageHalfLifeTime: -1h\n"
            "  usageSamplingInterval: [5m]\n"
            "  resourceWeights: {cpu: heavy, memory: -2}\n"
            "---\n"
            "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
            "admissionFairSharing: {resourceWeights: [cpu]}\n"),
        CU_EINVAL);
    static const char *const want[] = {
        "Configuration test.yaml: fairSharing.preemptionStrategies: Invalid value: allowed lists are "
        "[LessThanOrEqualToFinalShare], [LessThanInitialShare] and "
        "[LessThanOrEqualToFinalShare, LessThanInitialShare]",
        "Configuration test.yaml: fairSharing.preemptionStrategies: Invalid value: allowed lists are "
        "[LessThanOrEqualToFinalShare], [LessThanInitialShare] and "
        "[LessThanOrEqualToFinalShare, LessThanInitialShare]",
        "Configuration cfg (test.yaml): fairSharing.preemptionStrategies[1]: Unsupported value: "
        "\"Fair\": supported values: \"LessThanOrEqualToFinalShare\", \"LessThanInitialShare\"",
        "Configuration cfg (test.yaml): fairSharing.preemptionStrategies[2]: must be a string",
        "Configuration test.yaml: fairSharing.enable: must be a boolean",
        "Configuration test.yaml: fairSharing.preemptionStrategies: must be a list",
        "Configuration test.yaml: fairSharing: must be an object",
        "Configuration test.yaml: admissionFairSharing.usageHalfLifeTime: must not be negative, got \"-1h\"",
        "Configuration test.yaml: admissionFairSharing.usageSamplingInterval: must be a duration "
        "string such as \"5m\" or \"168h\"",
        "Configuration test.yaml: admissionFairSharing.resourceWeights.cpu: invalid quantity \"heavy\"",
        "Configuration test.yaml: admissionFairSharing.resourceWeights.memory: must be greater than "
        "or equal to 0",
        "Configuration test.yaml: admissionFairSharing.resourceWeights: must be an object",
    };
    size_t nwant = sizeof(want) / sizeof(want[0]);
    for (size_t i = 0; i < nwant; i++)
        assert_msg(&f->d, want[i]);
    if (f->d.n != nwant)
        dump_diag(&f->d);
    assert_int_equal(f->d.n, nwant);
    assert_int_equal(f->w.configs.n, 0);
}

static const char *wl_full =
    "apiVersion: kueue.x-k8s.io/v1beta2\n"
    "kind: Workload\n"
    "metadata: {name: train, namespace: ml, uid: u-1, creationTimestamp: '2024-05-01T00:00:00Z'}\n"
    "spec:\n"
    "  queueName: team-a-queue\n"
    "  priority: 10000\n"
    "  active: false\n"
    "  podSets:\n"
    "  - name: driver\n"
    "    count: 3\n"
    "    minCount: 2\n"
    "    template:\n"
    "      spec:\n"
    "        priorityClassName: high\n"
    "        nodeSelector: {zone: a}\n"
    "        tolerations: [{operator: Exists}]\n"
    "        affinity:\n"
    "          nodeAffinity:\n"
    "            requiredDuringSchedulingIgnoredDuringExecution:\n"
    "              nodeSelectorTerms:\n"
    "              - matchExpressions:\n"
    "                - {key: type, operator: In, values: [a100, h100]}\n"
    "                - {key: gen, operator: Gt, values: ['3']}\n"
    "              - matchExpressions: [{key: spot, operator: DoesNotExist}]\n"
    "        containers: [{name: c, resources: {requests: {cpu: '1', memory: 200Mi}}}]\n"
    "  - template: {spec: {containers: [{name: c, resources: {limits: {cpu: 2}}}]}}\n"
    "status:\n"
    "  admission:\n"
    "    clusterQueue: cluster-queue\n"
    "    podSetAssignments:\n"
    "    - name: driver\n"
    "      count: 2\n"
    "      flavors: {cpu: default-flavor, memory: default-flavor}\n"
    "      resourceUsage: {memory: 400Mi, cpu: '2'}\n"
    "    - name: main\n"
    "      flavors: {cpu: spot}\n"
    "  conditions:\n"
    "  - {type: QuotaReserved, status: 'True', reason: QuotaReserved, message: Quota reserved in ClusterQueue cluster-queue,\n"
    "     lastTransitionTime: '2024-05-01T00:00:10Z'}\n"
    "  - {type: Admitted, status: 'True', reason: Admitted, message: The workload is admitted}\n";

static void test_workload_full(void **state)
{
    fx *f = *state;
    assert_int_equal(load(f, wl_full), CU_OK);
    assert_int_equal(f->w.workloads.n, 1);
    const cu_workload *wl = f->w.workloads.items[0];
    assert_string_equal(wl->meta.ns, "ml");
    assert_string_equal(wl->meta.uid, "u-1");
    assert_int_equal(wl->meta.created_ms, 1714521600000LL);
    assert_string_equal(wl->queue_name, "team-a-queue");
    assert_true(wl->has_priority);
    assert_int_equal(wl->priority, 10000);
    assert_false(wl->active);
    assert_null(wl->job_name);
    assert_null(wl->pc_name);
    assert_int_equal(wl->npodsets, 2);
    const cu_podset *ps = &wl->podsets[0];
    assert_string_equal(ps->name, "driver");
    assert_int_equal(ps->count, 3);
    assert_true(ps->has_min);
    assert_int_equal(ps->min_count, 2);
    assert_int_equal(ps->requests.n, 2);
    assert_int_equal(cu_reslist_get(&ps->requests, "cpu"), 1000);
    assert_int_equal(cu_reslist_get(&ps->requests, "memory"), 200LL * 1048576);
    assert_string_equal(cu_kvs_get(&ps->node_selector, "zone"), "a");
    assert_int_equal(ps->ntols, 1);
    assert_int_equal(ps->tols[0].op, CU_TOL_EXISTS);
    assert_null(ps->tols[0].key);
    assert_string_equal(ps->priority_class_name, "high");
    assert_int_equal(ps->nterms, 2);
    assert_int_equal(ps->terms[0].n, 2);
    assert_string_equal(ps->terms[0].reqs[0].key, "type");
    assert_int_equal(ps->terms[0].reqs[0].op, CU_SEL_IN);
    assert_int_equal(ps->terms[0].reqs[0].values.n, 2);
    assert_string_equal(ps->terms[0].reqs[0].values.items[1], "h100");
    assert_int_equal(ps->terms[0].reqs[1].op, CU_SEL_GT);
    assert_int_equal(ps->terms[1].reqs[0].op, CU_SEL_DOESNOTEXIST);
    /* defaults of the second pod set */
    assert_string_equal(wl->podsets[1].name, "main");
    assert_int_equal(wl->podsets[1].count, 1);
    assert_false(wl->podsets[1].has_min);
    assert_int_equal(cu_reslist_get(&wl->podsets[1].requests, "cpu"), 2000);
    /* status */
    assert_true(wl->has_admission);
    assert_string_equal(wl->adm_cq, "cluster-queue");
    assert_int_equal(wl->npsa, 2);
    assert_int_equal(wl->psa[0].count, 2);
    assert_string_equal(cu_kvs_get(&wl->psa[0].flavors, "memory"), "default-flavor");
    assert_string_equal(wl->psa[0].usage.items[0].name, "cpu"); /* sorted */
    assert_int_equal(cu_reslist_get(&wl->psa[0].usage, "memory"), 400LL * 1048576);
    assert_int_equal(wl->psa[1].count, 1); /* from the pod set "main" */
    assert_int_equal(wl->nconds, 2);
    const cu_condition *c = cu_workload_cond(wl, "QuotaReserved");
    assert_non_null(c);
    assert_string_equal(c->message, "Quota reserved in ClusterQueue cluster-queue");
    assert_int_equal(c->ltt_ms, 1714521610000LL);
    assert_null(cu_workload_cond(wl, "Evicted"));
    assert_true(cu_workload_has_quota(wl));
    assert_false(cu_workload_finished(wl));
}

static void test_workload_defaults_and_status(void **state)
{
    fx *f = *state;
    assert_int_equal(
        load(
            f,
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: a}\n"
            "spec: {queueName: q, podSets: [{template: {spec: {containers: []}}}]}\n"
            "---\n"
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: b, namespace: x}\n"
            "spec: {queueName: q}\n"
            "status: {conditions: [{type: QuotaReserved, status: 'True'}, {type: Finished, status: 'True', reason: Succeeded}]}\n"
            "---\n"
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: c, namespace: x}\n"
            "spec: {queueName: q}\n"
            "status: {admission: {clusterQueue: cq}, conditions: [{type: QuotaReserved, status: 'False'}]}\n"),
        CU_OK);
    assert_int_equal(f->w.workloads.n, 3);
    const cu_workload *a = f->w.workloads.items[0];
    assert_string_equal(a->meta.ns, "default");
    assert_true(a->active);
    assert_false(a->has_priority);
    assert_int_equal(a->npodsets, 1);
    assert_string_equal(a->podsets[0].name, "main");
    assert_int_equal(a->podsets[0].count, 1);
    assert_int_equal(a->podsets[0].requests.n, 0);
    assert_false(a->has_admission);
    assert_false(cu_workload_has_quota(a));
    const cu_workload *b = f->w.workloads.items[1];
    assert_false(cu_workload_has_quota(b)); /* no status.admission */
    assert_true(cu_workload_finished(b));
    const cu_workload *c = f->w.workloads.items[2];
    assert_true(c->has_admission);
    assert_false(cu_workload_has_quota(c));
}

/* Job -> Workload. Expected names: see test_podreq.c (hashes computed
 * with sha1sum when the test was written):
 *   printf 'Job\nbatch\nsample-job\na1b2c3d4-0000-4000-8000-000000000001' | sha1sum -> 57a5d...
 *   printf 'Job\nbatch\npi\nuid-1' | sha1sum -> 34650... */
static void test_job(void **state)
{
    fx *f = *state;
    assert_int_equal(
        load(
            f,
            "apiVersion: batch/v1\nkind: Job\n"
            "metadata:\n"
            "  name: sample-job\n"
            "  namespace: team-a\n"
            "  uid: a1b2c3d4-0000-4000-8000-000000000001\n"
            "  creationTimestamp: '2024-01-01T00:00:01Z'\n"
            "  labels: {kueue.x-k8s.io/queue-name: user-queue, kueue.x-k8s.io/priority-class: high}\n"
            "  annotations: {kueue.x-k8s.io/job-min-parallelism: '2'}\n"
            "spec:\n"
            "  parallelism: 3\n"
            "  completions: 10\n"
            "  suspend: false\n"
            "  template:\n"
            "    spec:\n"
            "      priorityClassName: pod-pc\n"
            "      nodeSelector: {disk: ssd}\n"
            "      tolerations: [{key: gpu, operator: Exists, effect: NoSchedule}]\n"
            "      containers: [{name: c, resources: {requests: {cpu: 500m}, limits: {memory: 1Gi}}}]\n"
            "      restartPolicy: Never\n"
            "---\n"
            "apiVersion: batch/v1\nkind: Job\n"
            "metadata: {name: pi, uid: uid-1, labels: {kueue.x-k8s.io/queue-name: q}}\n"
            "spec: {template: {spec: {priorityClassName: pod-pc, containers: [{name: c}]}}}\n"),
        CU_OK);
    assert_int_equal(f->d.n, 0);
    assert_int_equal(f->w.workloads.n, 2);
    const cu_workload *wl = f->w.workloads.items[0];
    assert_string_equal(wl->meta.name, "job-sample-job-57a5d");
    assert_string_equal(wl->meta.ns, "team-a");
    assert_string_equal(wl->job_name, "sample-job");
    assert_string_equal(wl->queue_name, "user-queue");
    assert_true(wl->meta.has_created);
    assert_int_equal(wl->meta.created_ms, 1704067201000LL);
    assert_true(wl->active);
    assert_false(wl->has_admission);
    assert_int_equal(wl->npodsets, 1);
    assert_string_equal(wl->podsets[0].name, "main");
    assert_int_equal(wl->podsets[0].count, 3);
    assert_true(wl->podsets[0].has_min);
    assert_int_equal(wl->podsets[0].min_count, 2);
    assert_int_equal(cu_reslist_get(&wl->podsets[0].requests, "cpu"), 500);
    assert_int_equal(cu_reslist_get(&wl->podsets[0].requests, "memory"), 1073741824LL);
    assert_string_equal(cu_kvs_get(&wl->podsets[0].node_selector, "disk"), "ssd");
    assert_int_equal(wl->podsets[0].ntols, 1);
    /* the priority-class label wins over the pod's priorityClassName */
    assert_string_equal(wl->pc_kind, "WorkloadPriorityClass");
    assert_string_equal(wl->pc_group, "kueue.x-k8s.io");
    assert_string_equal(wl->pc_name, "high");

    const cu_workload *pi = f->w.workloads.items[1];
    assert_string_equal(pi->meta.name, "job-pi-34650");
    assert_string_equal(pi->meta.ns, "default");
    assert_int_equal(pi->podsets[0].count, 1);
    assert_false(pi->podsets[0].has_min);
    assert_string_equal(pi->pc_kind, "PriorityClass");
    assert_string_equal(pi->pc_group, "scheduling.k8s.io");
    assert_string_equal(pi->pc_name, "pod-pc");
}

static void test_job_count_table(void **state)
{
    (void)state;
    static const struct {
        const char *spec;
        int32_t count;
    } cases[] = {
        { "{}", 1 },
        { "{parallelism: 4}", 4 }, /* completions default to parallelism */
        { "{completions: 5}", 1 }, /* parallelism defaults to 1 */
        { "{parallelism: 4, completions: 2}", 2 },
        { "{parallelism: 2, completions: 8}", 2 },
        { "{parallelism: 0}", 0 },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        fx *f;
        void *st = NULL;
        assert_int_equal(setup(&st), 0);
        f = st;
        char yaml[512];
        snprintf(yaml, sizeof(yaml),
                 "apiVersion: batch/v1\nkind: Job\n"
                 "metadata: {name: j, labels: {kueue.x-k8s.io/queue-name: q}}\nspec: %s\n",
                 cases[i].spec);
        assert_int_equal(load(f, yaml), CU_OK);
        assert_int_equal(f->w.workloads.n, 1);
        assert_int_equal(f->w.workloads.items[0]->podsets[0].count, cases[i].count);
        teardown(&st);
    }
}

static void test_job_errors_and_unmanaged(void **state)
{
    fx *f = *state;
    assert_int_equal(
        load(f, "apiVersion: batch/v1\nkind: Job\n"
                "metadata: {name: nolabel, namespace: ns}\nspec: {}\n"
                "---\n"
                "apiVersion: batch/v1\nkind: Job\n"
                "metadata: {name: badmin, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q},\n"
                "           annotations: {kueue.x-k8s.io/job-min-parallelism: '5'}}\n"
                "spec: {parallelism: 4}\n"
                "---\n"
                "apiVersion: batch/v1\nkind: Job\n"
                "metadata: {name: notint, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q},\n"
                "           annotations: {kueue.x-k8s.io/job-min-parallelism: two}}\n"
                "spec: {parallelism: many}\n"
                "---\n"
                "apiVersion: batch/v1\nkind: Job\n"
                "metadata: {name: good, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}\n"),
        CU_EINVAL);
    assert_msg(
        &f->d,
        "warning: test.yaml:1: Job ns/nolabel has no kueue.x-k8s.io/queue-name label; not managed");
    assert_msg(&f->d, "Job ns/badmin: metadata.annotations[kueue.x-k8s.io/job-min-parallelism]: "
                      "must be an integer between 1 and 4, got \"5\"");
    assert_msg(&f->d, "Job ns/notint: spec.parallelism: must be an integer");
    assert_msg(&f->d, "Job ns/notint: metadata.annotations[kueue.x-k8s.io/job-min-parallelism]: "
                      "must be an integer between 1 and 1, got \"two\"");
    assert_int_equal(f->d.nerrors, 3);
    assert_int_equal(f->w.workloads.n, 1);
    assert_string_equal(f->w.workloads.items[0]->job_name, "good");
}

/* JobSet -> Workload (simulate's input): a pod set per replicated Job, its
 * finished conditions, bad fields named on the JobSet. */
static void test_jobset(void **state)
{
    fx *f = *state;
    assert_int_equal(
        load(f, "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\n"
                "metadata: {name: train, namespace: ns, uid: 1b2c-uid,\n"
                "           labels: {kueue.x-k8s.io/queue-name: q}}\n"
                "spec:\n  replicatedJobs:\n"
                "  - {name: a, template: {spec: {template: {spec: {priorityClassName: hi}}}}}\n"
                "  - {name: b, replicas: 3, template: {spec: {parallelism: 2}}}\n"
                "status:\n  conditions:\n"
                "  - {type: Completed, status: 'True', message: done}\n"
                "---\n"
                "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\n"
                "metadata: {name: nolabel, namespace: ns}\n"
                "---\n"
                "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\n"
                "metadata: {name: bad, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}\n"
                "spec:\n  replicatedJobs:\n"
                "  - {name: a, replicas: -1}\n"
                "---\n"
                "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\n"
                "metadata: {name: empty, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}\n"
                "spec: {}\n"),
        CU_EINVAL);
    assert_msg(&f->d, "warning: test.yaml:13: JobSet ns/nolabel has no "
                      "kueue.x-k8s.io/queue-name label; not managed");
    assert_msg(&f->d, "JobSet ns/bad: spec.replicatedJobs[0].replicas: must be greater than or "
                      "equal to 0");
    assert_msg(&f->d, "JobSet ns/empty: spec.replicatedJobs: Required value: must have at least "
                      "1 item");
    assert_int_equal(f->w.workloads.n, 1);
    const cu_workload *wl = f->w.workloads.items[0];
    assert_string_equal(wl->meta.name, "jobset-train-2da5f");
    assert_string_equal(wl->queue_name, "q");
    assert_int_equal(wl->npodsets, 2);
    assert_string_equal(wl->podsets[0].name, "a");
    assert_int_equal(wl->podsets[0].count, 1);
    assert_string_equal(wl->podsets[1].name, "b");
    assert_int_equal(wl->podsets[1].count, 6);
    assert_string_equal(wl->pc_name, "hi");
    assert_int_equal(wl->nconds, 1);
    assert_string_equal(wl->conds[0].reason, "Succeeded");
    assert_string_equal(wl->conds[0].message, "done");
}

static void test_document_errors(void **state)
{
    fx *f = *state;
    assert_int_equal(
        load(f,
             "- just a list\n"
             "---\n"
             "kind: ClusterQueue\nmetadata: {name: x}\n"
             "---\n"
             "apiVersion: kueue.x-k8s.io/v1beta2\nmetadata: {name: x}\n"
             "---\n"
             "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {namespace: x}\n"
             "---\n"
             "apiVersion: kueue.x-k8s.io/v1beta2\nkind: MultiKueueConfig\nmetadata: {name: prov}\n"
             "---\n"
             "apiVersion: kueue.x-k8s.io/v1alpha1\nkind: Cohort\nmetadata: {name: old}\n"
             "---\n"
             "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n"
             "---\n"
             "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: ok}\n"),
        CU_EINVAL);
    assert_msg(&f->d, "test.yaml:1: document is not a map (expected a Kubernetes object)");
    assert_msg(&f->d, "test.yaml:3: missing apiVersion");
    assert_msg(&f->d, "test.yaml:6: missing kind");
    assert_msg(&f->d, "test.yaml:9: ClusterQueue: missing metadata.name");
    assert_msg(
        &f->d,
        "warning: test.yaml:13: skipping unknown kind MultiKueueConfig (apiVersion kueue.x-k8s.io/v1beta2) prov");
    assert_msg(
        &f->d,
        "warning: test.yaml:17: skipping unknown kind Cohort (apiVersion kueue.x-k8s.io/v1alpha1) old");
    assert_msg(&f->d,
               "warning: test.yaml:21: skipping unknown kind Deployment (apiVersion apps/v1) web");
    assert_int_equal(f->d.nerrors, 4);
    assert_int_equal(f->w.flavors.n, 1);
}

/* All problems of an object are reported, the object is dropped, the
 * others survive. */
static void test_object_errors(void **state)
{
    fx *f = *state;
    assert_int_equal(
        load(
            f,
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: before}\n"
            "---\n"
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: team-a}\n"
            "spec:\n"
            "  queueingStrategy: Fifo\n"
            "  stopPolicy: Stop\n"
            "  namespaceSelector: {matchExpressions: [{key: a, operator: Gt, values: ['1']}]}\n"
            "  preemption: {withinClusterQueue: Any, reclaimWithinCohort: LowerOrNewerEqualPriority,\n"
            "               borrowWithinCohort: {policy: Any, maxPriorityThreshold: high}}\n"
            "  flavorFungibility: {whenCanBorrow: Borrow, whenCanPreempt: Maybe, preference: Cheapest}\n"
            "  fairSharing: {weight: heavy}\n"
            "  admissionScope: {admissionMode: Fair}\n"
            "  resourceGroups:\n"
            "  - coveredResources: [cpu]\n"
            "    flavors:\n"
            "    - {name: f0, resources: [{name: cpu, nominalQuota: 1}]}\n"
            "    - {name: f1, resources: [{name: cpu, nominalQuota: 12x, borrowingLimit: [1]}, {name: memory}]}\n"
            "---\n"
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: rf}\n"
            "spec: {tolerations: [{key: a, operator: Equals}], nodeLabels: [a]}\n"
            "---\n"
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: train, namespace: ml,\n"
            "  creationTimestamp: yesterday}\n"
            "spec:\n"
            "  active: maybe\n"
            "  priority: 3000000000\n"
            "  priorityClassRef: {group: example.com, kind: PriorityClass}\n"
            "  podSets:\n"
            "  - count: abc\n"
            "    template: {spec: {containers: [{name: a}, {name: b, resources: {requests: {cpu: 12x}}}]}}\n"
            "status: {conditions: [{status: 'True', lastTransitionTime: later}]}\n"
            "---\n"
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: q, namespace: ml}\n"
            "spec: {stopPolicy: hold}\n"
            "---\n"
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: after}\n"),
        CU_EINVAL);
    static const char *const want[] = {
        "ClusterQueue team-a: spec.queueingStrategy: Unsupported value: \"Fifo\": supported values: \"StrictFIFO\", \"BestEffortFIFO\"",
        "ClusterQueue team-a: spec.stopPolicy: Unsupported value: \"Stop\": supported values: \"None\", \"Hold\", \"HoldAndDrain\"",
        "ClusterQueue team-a: spec.namespaceSelector.matchExpressions[0].operator: Unsupported value: \"Gt\": supported values: \"In\", \"NotIn\", \"Exists\", \"DoesNotExist\"",
        "ClusterQueue team-a: spec.preemption.withinClusterQueue: Unsupported value: \"Any\": supported values: \"Never\", \"LowerPriority\", \"LowerOrNewerEqualPriority\"",
        "ClusterQueue team-a: spec.preemption.reclaimWithinCohort: Unsupported value: \"LowerOrNewerEqualPriority\": supported values: \"Never\", \"LowerPriority\", \"Any\"",
        "ClusterQueue team-a: spec.preemption.borrowWithinCohort.policy: Unsupported value: \"Any\": supported values: \"Never\", \"LowerPriority\"",
        "ClusterQueue team-a: spec.preemption.borrowWithinCohort.maxPriorityThreshold: must be an integer",
        "ClusterQueue team-a: spec.flavorFungibility.whenCanBorrow: Unsupported value: \"Borrow\": supported values: \"MayStopSearch\", \"TryNextFlavor\"",
        "ClusterQueue team-a: spec.flavorFungibility.whenCanPreempt: Unsupported value: \"Maybe\": supported values: \"MayStopSearch\", \"TryNextFlavor\"",
        "ClusterQueue team-a: spec.flavorFungibility.preference: Unsupported value: \"Cheapest\": supported values: \"BorrowingOverPreemption\", \"PreemptionOverBorrowing\"",
        "ClusterQueue team-a: spec.fairSharing.weight: invalid quantity \"heavy\"",
        "ClusterQueue team-a: spec.admissionScope.admissionMode: Unsupported value: \"Fair\": supported values: \"NoAdmissionFairSharing\", \"UsageBasedAdmissionFairSharing\"",
        "ClusterQueue team-a: spec.resourceGroups[0].flavors[1].resources[0].nominalQuota: invalid quantity \"12x\"",
        "ClusterQueue team-a: spec.resourceGroups[0].flavors[1].resources[0].borrowingLimit: must be a quantity",
        "ClusterQueue team-a: spec.resourceGroups[0].flavors[1].resources[1].nominalQuota: Required value",
        "ResourceFlavor rf: spec.tolerations[0].operator: Unsupported value: \"Equals\": supported values: \"Equal\", \"Exists\"",
        "ResourceFlavor rf: spec.nodeLabels: must be an object",
        "Workload ml/train: metadata.creationTimestamp: invalid time \"yesterday\"",
        "Workload ml/train: spec.active: must be a boolean",
        "Workload ml/train: spec.priority: must fit in a 32-bit integer",
        "Workload ml/train: spec.priorityClassRef.group: Unsupported value: \"example.com\": supported values: \"kueue.x-k8s.io\", \"scheduling.k8s.io\"",
        "Workload ml/train: spec.priorityClassRef.name: Required value",
        "Workload ml/train: spec.podSets[0].count: must be an integer",
        "Workload ml/train: spec.podSets[0].template.spec.containers[1].resources.requests.cpu: invalid quantity \"12x\"",
        "Workload ml/train: status.conditions[0].type: Required value",
        "Workload ml/train: status.conditions[0].lastTransitionTime: invalid time \"later\"",
        "LocalQueue ml/q: spec.stopPolicy: Unsupported value: \"hold\": supported values: \"None\", \"Hold\", \"HoldAndDrain\"",
    };
    size_t nwant = sizeof(want) / sizeof(want[0]);
    for (size_t i = 0; i < nwant; i++)
        assert_msg(&f->d, want[i]);
    if (f->d.n != nwant)
        dump_diag(&f->d);
    assert_int_equal(f->d.n, nwant);
    assert_int_equal(f->d.nerrors, nwant);
    /* the bad objects are dropped, the good ones survive */
    assert_int_equal(f->w.cqs.n, 2);
    assert_string_equal(f->w.cqs.items[0]->meta.name, "before");
    assert_string_equal(f->w.cqs.items[1]->meta.name, "after");
    assert_int_equal(f->w.flavors.n, 0);
    assert_int_equal(f->w.workloads.n, 0);
    assert_int_equal(f->w.lqs.n, 0);
}

static void test_type_errors(void **state)
{
    fx *f = *state;
    assert_int_equal(
        load(
            f,
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: t}\n"
            "spec: {cohortName: [a], resourceGroups: {a: b}}\n"
            "---\n"
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: w, namespace: n}\n"
            "spec: {queueName: q, podSets: [{count: '3'}, 7]}\n"
            "---\n"
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: w2, namespace: n}\n"
            "spec: {priorityClassRef: {kind: Pod, name: x}, podSets: [{count: -1}]}\n"
            "---\n"
            "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\nmetadata: {name: w3, namespace: n}\n"
            "spec: {priorityClassName: x, priorityClassSource: kueue}\n"),
        CU_EINVAL);
    assert_msg(&f->d, "ClusterQueue t: spec.cohortName: must be a string");
    assert_msg(&f->d, "ClusterQueue t: spec.resourceGroups: must be a list");
    assert_msg(&f->d, "Workload n/w: spec.podSets[0].count: must be an integer");
    assert_msg(&f->d, "Workload n/w: spec.podSets[1]: must be an object");
    assert_msg(
        &f->d,
        "Workload n/w2: spec.priorityClassRef.kind: Unsupported value: \"Pod\": supported values: \"WorkloadPriorityClass\", \"PriorityClass\"");
    assert_msg(&f->d, "Workload n/w2: spec.podSets[0].count: must be greater than or equal to 0");
    assert_msg(
        &f->d,
        "Workload n/w3: spec.priorityClassSource: Unsupported value: \"kueue\": supported values: "
        "\"kueue.x-k8s.io/workloadpriorityclass\", \"scheduling.k8s.io/priorityclass\", \"\"");
    assert_int_equal(f->d.nerrors, 7);
    assert_int_equal(f->w.cqs.n + f->w.workloads.n, 0);
}

static void test_lists_and_order(void **state)
{
    fx *f = *state;
    assert_int_equal(
        load(
            f,
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: first}\n"
            "---\n"
            "apiVersion: v1\n"
            "kind: List\n"
            "items:\n"
            "- apiVersion: kueue.x-k8s.io/v1beta2\n"
            "  kind: ResourceFlavor\n"
            "  metadata: {name: second}\n"
            "- apiVersion: kueue.x-k8s.io/v1beta2\n"
            "  kind: ClusterQueueList\n"
            "  items:\n"
            "  - {apiVersion: kueue.x-k8s.io/v1beta2, kind: ClusterQueue, metadata: {name: third}}\n"
            "- apiVersion: kueue.x-k8s.io/v1beta2\n"
            "  kind: LocalQueue\n"
            "  metadata: {name: fourth, namespace: n}\n"
            "---\n"
            "apiVersion: v1\nkind: List\nitems: []\n"),
        CU_OK);
    assert_int_equal(f->w.flavors.n, 2);
    assert_int_equal(f->w.cqs.n, 1);
    assert_int_equal(f->w.lqs.n, 1);
    assert_int_equal(f->w.flavors.items[0]->meta.seq, 0);
    assert_int_equal(f->w.flavors.items[1]->meta.seq, 1);
    assert_int_equal(f->w.cqs.items[0]->meta.seq, 2);
    assert_int_equal(f->w.lqs.items[0]->meta.seq, 3);
    assert_int_equal(f->w.nseq, 4);
    assert_int_equal(f->w.flavors.items[0]->meta.line, 1);
    assert_int_equal(f->w.flavors.items[1]->meta.line, 8);
    assert_int_equal(f->w.cqs.items[0]->meta.line, 14);
    assert_int_equal(f->w.lqs.items[0]->meta.line, 15);
}

static void test_labelsel_matches(void **state)
{
    fx *f = *state;
    assert_int_equal(
        load(f, "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: s}\n"
                "spec:\n"
                "  namespaceSelector:\n"
                "    matchLabels: {team: a}\n"
                "    matchExpressions:\n"
                "    - {key: env, operator: In, values: [prod, staging]}\n"
                "    - {key: tier, operator: NotIn, values: [free]}\n"
                "    - {key: owner, operator: Exists}\n"
                "    - {key: legacy, operator: DoesNotExist}\n"),
        CU_OK);
    const cu_labelsel *sel = &f->w.cqs.items[0]->ns_selector;
    static const struct {
        const char *labels;
        int want;
    } cases[] = {
        { "team=a,env=prod,owner=x", 1 },
        { "team=a,env=staging,owner=x,tier=paid", 1 },
        { "team=b,env=prod,owner=x", 0 },           /* matchLabels value */
        { "env=prod,owner=x", 0 },                  /* matchLabels key missing */
        { "team=a,env=dev,owner=x", 0 },            /* In */
        { "team=a,owner=x", 0 },                    /* In with key missing */
        { "team=a,env=prod,owner=x,tier=free", 0 }, /* NotIn */
        { "team=a,env=prod", 0 },                   /* Exists */
        { "team=a,env=prod,owner=x,legacy=", 0 },   /* DoesNotExist */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char buf[256];
        cu_kv kv[8];
        cu_kvs labels = { 0, kv };
        snprintf(buf, sizeof(buf), "%s", cases[i].labels);
        for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
            char *eq = strchr(tok, '=');
            *eq = '\0';
            kv[labels.n].key = tok;
            kv[labels.n].value = eq + 1;
            labels.n++;
        }
        if (cu_labelsel_matches(sel, &labels) != cases[i].want)
            fprintf(stderr, "labels %s\n", cases[i].labels);
        assert_int_equal(cu_labelsel_matches(sel, &labels), cases[i].want);
    }
    cu_labelsel null_sel = { .is_null = 1 };
    cu_labelsel all = { 0 };
    cu_kvs none = { 0, NULL };
    assert_false(cu_labelsel_matches(&null_sel, &none));
    assert_true(cu_labelsel_matches(&all, &none));
}

static void test_priority(void **state)
{
    fx *f = *state;
    assert_int_equal(
        load(
            f,
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata: {name: wpc}\nvalue: 100\n"
            "---\n"
            "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: pc}\nvalue: 50\n"
            "---\n"
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: explicit, namespace: n}\n"
            "spec: {priority: 7, priorityClassRef: {group: kueue.x-k8s.io, kind: WorkloadPriorityClass, name: wpc}}\n"
            "---\n"
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: by-wpc, namespace: n}\n"
            "spec: {priorityClassRef: {group: kueue.x-k8s.io, kind: WorkloadPriorityClass, name: wpc}}\n"
            "---\n"
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: by-pc, namespace: n}\n"
            "spec: {priorityClassRef: {group: scheduling.k8s.io, kind: PriorityClass, name: pc}}\n"
            "---\n"
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: wrong-kind, namespace: n}\n"
            "spec: {priorityClassRef: {group: scheduling.k8s.io, kind: PriorityClass, name: wpc}}\n"
            "---\n"
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: missing, namespace: n}\n"
            "spec: {priorityClassRef: {group: kueue.x-k8s.io, kind: WorkloadPriorityClass, name: x}}\n"
            "---\n"
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: none, namespace: n}\n"
            "---\n"
            "apiVersion: batch/v1\nkind: Job\n"
            "metadata: {name: j, namespace: n, labels: {kueue.x-k8s.io/queue-name: q, kueue.x-k8s.io/priority-class: nope}}\n"),
        CU_OK);
    static const struct {
        cu_err err;
        int32_t prio;
    } want[] = {
        { CU_OK, 7 },        { CU_OK, 100 }, { CU_OK, 50 },       { CU_ENOTFOUND, 0 },
        { CU_ENOTFOUND, 0 }, { CU_OK, 0 },   { CU_ENOTFOUND, 0 },
    };
    assert_int_equal(f->w.workloads.n, 7);
    for (size_t i = 0; i < 7; i++) {
        int32_t p = -1;
        assert_int_equal(cu_workload_priority(&f->w, f->w.workloads.items[i], &p, &f->d),
                         want[i].err);
        assert_int_equal(p, want[i].prio);
    }
    assert_msg(&f->d,
               "Workload n/wrong-kind: spec.priorityClassRef: PriorityClass \"wpc\" not found");
    assert_msg(&f->d,
               "Workload n/missing: spec.priorityClassRef: WorkloadPriorityClass \"x\" not found");
    assert_msg(
        &f->d,
        "Job n/j: metadata.labels[kueue.x-k8s.io/priority-class]: WorkloadPriorityClass \"nope\" not found");

    /* a globalDefault PriorityClass applies when nothing else does */
    assert_int_equal(
        load(f, "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: dflt}\n"
                "value: 42\nglobalDefault: true\n"),
        CU_OK);
    int32_t p = -1;
    assert_int_equal(cu_workload_priority(&f->w, f->w.workloads.items[5], &p, &f->d), CU_OK);
    assert_int_equal(p, 42);
    assert_int_equal(cu_workload_priority(&f->w, f->w.workloads.items[0], &p, &f->d), CU_OK);
    assert_int_equal(p, 7);
}

/* ------------------------------------------------------------------ */
/* conversion                                                          */

static cu_node *parse_root(cu_arena *a, const char *yaml)
{
    cu_doc *docs = NULL;
    size_t n = 0;
    cu_diag d;
    cu_diag_init(&d);
    assert_int_equal(cu_doc_parse("conv.yaml", yaml, strlen(yaml), a, &docs, &n, &d), CU_OK);
    assert_int_equal(n, 1);
    cu_diag_free(&d);
    return docs[0].root;
}

/* AdmissionCheck objects, a ClusterQueue's checks (v1beta2 strategy with
 * onFlavors, v1beta1 names) and a Workload's check states; which checks
 * apply to a workload (Kueue's AdmissionChecksForWorkload). */
static void test_admission_checks(void **state)
{
    fx *f = *state;
    assert_int_equal(
        load(f, "apiVersion: kueue.x-k8s.io/v1beta2\nkind: AdmissionCheck\nmetadata: {name: prov}\n"
                "spec: {controllerName: example.com/prov, parameters: {apiGroup: example.com, "
                "kind: Cfg, name: c}}\n"
                "status: {conditions: [{type: Active, status: 'True', reason: R, message: m}]}\n"
                "---\n"
                "apiVersion: kueue.x-k8s.io/v1beta2\nkind: AdmissionCheck\nmetadata: {name: off}\n"
                "spec: {controllerName: example.com/off}\n"
                "---\n"
                "apiVersion: kueue.x-k8s.io/v1beta2\nkind: AdmissionCheck\nmetadata: {name: bad}\n"
                "spec: {}\n"
                "---\n"
                "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\n"
                "spec:\n"
                "  admissionChecksStrategy:\n"
                "    admissionChecks: [{name: prov}, {name: gpu-only, onFlavors: [gpu]}]\n"
                "  resourceGroups:\n"
                "  - coveredResources: [cpu]\n"
                "    flavors: [{name: cpu, resources: [{name: cpu, nominalQuota: 1}]},\n"
                "              {name: gpu, resources: [{name: cpu, nominalQuota: 1}]}]\n"
                "---\n"
                "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: old}\n"
                "spec: {admissionChecks: [b, a]}\n"
                "---\n"
                "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\n"
                "metadata: {name: w, namespace: ns}\n"
                "spec: {queueName: q, podSets: [{name: main, count: 1, template: {spec: "
                "{containers: []}}}]}\n"
                "status:\n"
                "  admissionChecks:\n"
                "  - {name: prov, state: Ready, message: ok, lastTransitionTime: "
                "'2025-01-01T00:00:00Z'}\n"
                "  - {name: gpu-only, state: Retry, message: again, requeueAfterSeconds: 5,\n"
                "     retryCount: 2, lastTransitionTime: '2025-01-01T00:00:00Z'}\n"
                "---\n"
                "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\n"
                "metadata: {name: bad-state, namespace: ns}\n"
                "spec: {queueName: q}\n"
                "status: {admissionChecks: [{name: prov, state: Done}]}\n"),
        CU_EINVAL);
    assert_msg(&f->d, "AdmissionCheck bad: spec.controllerName: Required value");
    assert_int_equal(f->w.checks.n, 2);
    const cu_admission_check *k = f->w.checks.items[0];
    assert_string_equal(k->controller, "example.com/prov");
    assert_string_equal(k->param_kind, "Cfg");
    assert_true(k->active);
    assert_false(f->w.checks.items[1]->active);
    assert_int_equal(f->w.cqs.n, 2);
    const cu_cluster_queue *cq = f->w.cqs.items[0];
    assert_int_equal(cq->nchecks, 2);
    assert_string_equal(cq->checks[1].name, "gpu-only");
    assert_int_equal(cq->checks[1].on_flavors.n, 1);
    const cu_cluster_queue *old = f->w.cqs.items[1];
    assert_int_equal(old->nchecks, 2);
    assert_string_equal(old->checks[0].name, "b");
    assert_int_equal(old->checks[0].on_flavors.n, 0);
    assert_int_equal(f->w.workloads.n, 1);
    const cu_workload *wl = f->w.workloads.items[0];
    assert_int_equal(wl->nchecks, 2);
    const cu_acstate *st = cu_workload_check(wl, "gpu-only");
    assert_non_null(st);
    assert_int_equal(st->state, CU_CHECK_RETRY);
    assert_true(st->has_requeue_after);
    assert_int_equal(st->requeue_after_s, 5);
    assert_int_equal(st->retry_count, 2);
    assert_string_equal(cu_check_state_name(st->state), "Retry");
    assert_true(f->d.nerrors >= 2);

    /* which checks apply: gpu-only runs on one flavor, so nothing applies
     * before an admission; after it, by the flavors assigned */
    const char *names[4];
    const char *cpu[] = { "cpu" }, *gpu[] = { "cpu", "gpu" };
    assert_int_equal(cu_cq_checks_for(cq, 0, NULL, 0, names, 4), 0);
    assert_int_equal(cu_cq_checks_for(cq, 1, cpu, 1, names, 4), 1);
    assert_string_equal(names[0], "prov");
    assert_int_equal(cu_cq_checks_for(cq, 1, gpu, 2, names, 4), 2);
    assert_string_equal(names[0], "gpu-only"); /* sorted by name */
    assert_string_equal(names[1], "prov");
    assert_false(cu_workload_checks_ready(wl, names, 2));         /* gpu-only is Retry */
    assert_true(cu_workload_checks_ready(wl, names + 1, 1) == 0); /* every entry must be Ready */
    /* checks on every flavor apply before the admission too */
    assert_int_equal(cu_cq_checks_for(old, 0, NULL, 0, names, 1), 2);
    assert_string_equal(names[0], "b");
}

static void test_convert(void **state)
{
    fx *f = *state;
    cu_node *cq = parse_root(
        &f->a, "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: cq}\n"
               "spec:\n"
               "  cohort: co\n"
               "  admissionChecks: [a, b]\n"
               "  flavorFungibility: {whenCanBorrow: Borrow, whenCanPreempt: Preempt}\n"
               "  queueingStrategy: StrictFIFO\n"
               "status: {pendingWorkloadsStatus: {head: []}}\n");
    assert_int_equal(cu_convert_v1beta2(&f->a, cq), 1);
    assert_string_equal(cu_node_scalar(cu_node_get(cq, "apiVersion")), "kueue.x-k8s.io/v1beta2");
    cu_node *spec = cu_node_get(cq, "spec");
    assert_null(cu_node_get(spec, "cohort"));
    assert_string_equal(cu_node_scalar(cu_node_get(spec, "cohortName")), "co");
    assert_string_equal(spec->keys[0], "cohortName"); /* position kept */
    assert_null(cu_node_get(spec, "admissionChecks"));
    cu_node *acs = cu_node_path(spec, "admissionChecksStrategy.admissionChecks");
    assert_non_null(acs);
    assert_int_equal(acs->type, CU_NODE_SEQ);
    assert_int_equal(acs->n, 2);
    assert_string_equal(cu_node_scalar(cu_node_get(acs->vals[1], "name")), "b");
    assert_string_equal(cu_node_scalar(cu_node_path(spec, "flavorFungibility.whenCanBorrow")),
                        "MayStopSearch");
    assert_string_equal(cu_node_scalar(cu_node_path(spec, "flavorFungibility.whenCanPreempt")),
                        "MayStopSearch");
    assert_null(cu_node_path(cq, "status.pendingWorkloadsStatus"));
    /* already v1beta2: unchanged */
    assert_int_equal(cu_convert_v1beta2(&f->a, cq), 0);

    cu_node *wl = parse_root(
        &f->a,
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\nmetadata: {name: w, namespace: n}\n"
        "spec: {queueName: q, priorityClassName: high, priorityClassSource: kueue.x-k8s.io/workloadpriorityclass, priority: 3}\n");
    assert_int_equal(cu_convert_v1beta2(&f->a, wl), 1);
    assert_null(cu_node_path(wl, "spec.priorityClassName"));
    assert_null(cu_node_path(wl, "spec.priorityClassSource"));
    assert_string_equal(cu_node_scalar(cu_node_path(wl, "spec.priorityClassRef.group")),
                        "kueue.x-k8s.io");
    assert_string_equal(cu_node_scalar(cu_node_path(wl, "spec.priorityClassRef.kind")),
                        "WorkloadPriorityClass");
    assert_string_equal(cu_node_scalar(cu_node_path(wl, "spec.priorityClassRef.name")), "high");

    cu_node *wl2 = parse_root(
        &f->a,
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\nmetadata: {name: w2, namespace: n}\n"
        "spec: {priorityClassName: pc, priorityClassSource: ''}\n");
    assert_int_equal(cu_convert_v1beta2(&f->a, wl2), 1);
    assert_string_equal(cu_node_scalar(cu_node_path(wl2, "spec.priorityClassRef.group")),
                        "scheduling.k8s.io");
    assert_string_equal(cu_node_scalar(cu_node_path(wl2, "spec.priorityClassRef.kind")),
                        "PriorityClass");

    cu_node *co = parse_root(
        &f->a,
        "apiVersion: v1\nkind: List\nitems:\n"
        "- {apiVersion: kueue.x-k8s.io/v1beta1, kind: Cohort, metadata: {name: c}, spec: {parent: root}}\n"
        "- {apiVersion: v1, kind: Namespace, metadata: {name: n}}\n");
    assert_int_equal(cu_convert_v1beta2(&f->a, co), 1);
    cu_node *item = cu_node_get(co, "items")->vals[0];
    assert_string_equal(cu_node_scalar(cu_node_path(item, "spec.parentName")), "root");
    assert_null(cu_node_path(item, "spec.parent"));
    assert_string_equal(
        cu_node_scalar(cu_node_get(cu_node_get(co, "items")->vals[1], "apiVersion")), "v1");

    cu_node *job = parse_root(&f->a, "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\n");
    assert_int_equal(cu_convert_v1beta2(&f->a, job), 0);

    /* the converted documents decode to the same objects as the originals */
    cu_doc d1 = { "conv.yaml", cq }, d2 = { "conv.yaml", wl };
    assert_int_equal(cu_world_decode(&f->w, &d1, &f->d), CU_OK);
    assert_int_equal(cu_world_decode(&f->w, &d2, &f->d), CU_OK);
    assert_string_equal(f->w.cqs.items[0]->cohort, "co");
    assert_int_equal(f->w.cqs.items[0]->fungibility.when_can_preempt, CU_FUNG_MAY_STOP_SEARCH);
    assert_int_equal(f->w.cqs.items[0]->queueing, CU_STRICT_FIFO);
    assert_string_equal(f->w.workloads.items[0]->pc_kind, "WorkloadPriorityClass");
    assert_string_equal(f->w.workloads.items[0]->pc_name, "high");
}

/* ------------------------------------------------------------------ */
/* loading files and folders                                           */

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[2200];
    snprintf(path, sizeof(path), "%.1023s/%.1023s", dir, name);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

static void rm_rf(const char *dir)
{
    char cmd[1100];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

#define RF(n) "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: " n "}\n"

static void test_load(void **state)
{
    fx *f = *state;
    char dir[] = "/tmp/cu_test_objects_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char sub[1100];
    snprintf(sub, sizeof(sub), "%s/b-sub", dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    write_file(dir, "c.yml", RF("c"));
    write_file(dir, "a.yaml", RF("a1") "---\n" RF("a2"));
    write_file(dir, "notes.txt", RF("ignored"));
    write_file(dir, ".hidden.yaml", RF("hidden"));
    write_file(sub, "x.json",
               "{\"apiVersion\": \"kueue.x-k8s.io/v1beta2\", \"kind\": \"ResourceFlavor\", "
               "\"metadata\": {\"name\": \"b\"}}");
    write_file(dir, "d.yaml",
               "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: bad}\n"
               "spec: {queueingStrategy: Fifo}\n---\n" RF("d"));
    char txt[1100];
    snprintf(txt, sizeof(txt), "%s/notes.txt", dir);

    const char *paths[] = { dir, txt };
    assert_int_equal(cu_world_load(&f->w, paths, 2, &f->d), CU_EINVAL);
    assert_msg(&f->d, "ClusterQueue bad: spec.queueingStrategy: Unsupported value: \"Fifo\": "
                      "supported values: \"StrictFIFO\", \"BestEffortFIFO\"");
    assert_int_equal(f->d.nerrors, 1);
    static const char *const order[] = { "a1", "a2", "b", "c", "d", "ignored" };
    assert_int_equal(f->w.flavors.n, 6);
    for (size_t i = 0; i < 6; i++)
        assert_string_equal(f->w.flavors.items[i]->meta.name, order[i]);
    char want_file[1100];
    snprintf(want_file, sizeof(want_file), "%s/b-sub/x.json", dir);
    assert_string_equal(f->w.flavors.items[2]->meta.file, want_file);
    assert_int_equal(f->w.flavors.items[4]->meta.line, 6);

    /* a syntax error aborts with CU_ESYNTAX */
    write_file(sub, "y.yaml", "apiVersion: [unclosed\n");
    cu_world w2;
    cu_diag d2;
    cu_world_init(&w2);
    cu_diag_init(&d2);
    const char *p1[] = { dir };
    assert_int_equal(cu_world_load(&w2, p1, 1, &d2), CU_ESYNTAX);
    assert_true(d2.nerrors >= 1);
    cu_world_free(&w2);
    cu_diag_free(&d2);

    /* a missing path is an I/O error */
    cu_world_init(&w2);
    cu_diag_init(&d2);
    const char *p2[] = { "/nonexistent/cueue-input.yaml" };
    assert_int_equal(cu_world_load(&w2, p2, 1, &d2), CU_EIO);
    assert_msg(&d2, "/nonexistent/cueue-input.yaml: No such file or directory");
    cu_world_free(&w2);
    cu_diag_free(&d2);
    rm_rf(dir);
}

/* ------------------------------------------------------------------ */
/* core/v1 Nodes and Pods (Topology-Aware Scheduling, cu_kube.c): allocatable
 * or capacity, taints, unschedulable, Ready; a pod's node, phase, effective
 * requests and TAS label; a queued Pod as its single pod's Workload, the
 * one the pod integration's builder (cu_pod_workload) makes. */

static void test_node(void **state)
{
    fx *f = *state;
    assert_int_equal(load(f, "apiVersion: v1\n"
                             "kind: Node\n"
                             "metadata:\n"
                             "  name: gpu-a\n"
                             "  labels: {cloud.com/rack: rack-1, kubernetes.io/hostname: gpu-a}\n"
                             "spec:\n"
                             "  unschedulable: true\n"
                             "  taints: [{key: gpu, value: 'yes', effect: NoSchedule}]\n"
                             "status:\n"
                             "  capacity: {cpu: '64', nvidia.com/gpu: '9'}\n"
                             "  allocatable: {cpu: 63500m, memory: 256Gi, nvidia.com/gpu: '8',"
                             " pods: '110'}\n"
                             "  conditions:\n"
                             "  - {type: MemoryPressure, status: 'False'}\n"
                             "  - {type: Ready, status: 'True'}\n"),
                     CU_OK);
    assert_int_equal(f->w.nodes.n, 1);
    const cu_kube_node *n = f->w.nodes.items[0];
    assert_string_equal(n->meta.name, "gpu-a");
    assert_null(n->meta.ns);
    assert_string_equal(cu_kvs_get(&n->meta.labels, "cloud.com/rack"), "rack-1");
    /* allocatable wins over capacity, each resource in its unit */
    assert_int_equal(n->allocatable.n, 4);
    assert_int_equal(cu_reslist_get(&n->allocatable, "cpu"), 63500);
    assert_int_equal(cu_reslist_get(&n->allocatable, "nvidia.com/gpu"), 8);
    assert_int_equal(cu_reslist_get(&n->allocatable, "memory"), 256LL << 30);
    assert_int_equal(cu_reslist_get(&n->allocatable, "pods"), 110);
    assert_string_equal(n->allocatable.items[0].name, "cpu"); /* sorted */
    assert_int_equal(n->ntaints, 1);
    assert_string_equal(n->taints[0].key, "gpu");
    assert_string_equal(n->taints[0].effect, "NoSchedule");
    assert_true(n->unschedulable);
    assert_true(n->ready);
}

static void test_node_capacity_not_ready(void **state)
{
    fx *f = *state;
    assert_int_equal(load(f, "apiVersion: v1\nkind: Node\nmetadata: {name: a}\n"
                             "status:\n"
                             "  capacity: {nvidia.com/gpu: 4}\n"
                             "  conditions: [{type: Ready, status: Unknown}]\n"
                             "---\n"
                             "apiVersion: v1\nkind: Node\nmetadata: {name: b}\n"),
                     CU_OK);
    assert_int_equal(f->w.nodes.n, 2);
    const cu_kube_node *a = f->w.nodes.items[0], *b = f->w.nodes.items[1];
    assert_int_equal(cu_reslist_get(&a->allocatable, "nvidia.com/gpu"), 4);
    assert_false(a->ready);
    assert_false(a->unschedulable);
    /* no status at all: nothing allocatable, not Ready */
    assert_int_equal(b->allocatable.n, 0);
    assert_false(b->ready);
}

static void test_node_errors(void **state)
{
    fx *f = *state;
    assert_int_equal(load(f, "apiVersion: v1\nkind: Node\nmetadata: {name: bad}\n"
                             "status: {allocatable: {nvidia.com/gpu: eight}}\n"
                             "---\n"
                             "apiVersion: v1\nkind: Node\nmetadata: {name: neg}\n"
                             "status: {capacity: {cpu: '-1'}}\n"
                             "---\n"
                             "apiVersion: v1\nkind: Node\nmetadata: {name: t}\n"
                             "spec: {taints: oops, unschedulable: maybe}\n"
                             "---\n"
                             "apiVersion: v1\nkind: Node\nmetadata: {name: good}\n"),
                     CU_EINVAL);
    assert_msg(&f->d, "Node bad: status.allocatable.nvidia.com/gpu: invalid quantity \"eight\"");
    assert_msg(&f->d, "Node neg: status.capacity.cpu: must be greater than or equal to 0");
    assert_msg(&f->d, "Node t: spec.taints: must be a list");
    assert_msg(&f->d, "Node t: spec.unschedulable: must be a boolean");
    /* the bad ones are dropped, the good one kept */
    assert_int_equal(f->w.nodes.n, 1);
    assert_string_equal(f->w.nodes.items[0]->meta.name, "good");
}

static void test_pod(void **state)
{
    fx *f = *state;
    assert_int_equal(load(f,
                          "apiVersion: v1\nkind: Pod\n"
                          "metadata: {name: p1, namespace: ml, annotations: "
                          "{kueue.x-k8s.io/podset-unconstrained-topology: 'true'}}\n"
                          "spec:\n"
                          "  nodeName: gpu-a\n"
                          "  initContainers:\n"
                          "  - {name: i, resources: {requests: {nvidia.com/gpu: 3}}}\n"
                          "  containers:\n"
                          "  - {name: a, resources: {requests: {cpu: 500m, nvidia.com/gpu: 1}}}\n"
                          "  - {name: b, resources: {limits: {nvidia.com/gpu: 1}}}\n"
                          "  overhead: {cpu: 100m}\n"
                          "status: {phase: Running}\n"
                          "---\n"
                          "apiVersion: v1\nkind: Pod\nmetadata: {name: done}\n"
                          "spec: {nodeName: gpu-b, containers: [{name: c}]}\n"
                          "status: {phase: Succeeded}\n"
                          "---\n"
                          "apiVersion: v1\nkind: Pod\nmetadata: {name: failed}\n"
                          "spec: {containers: [{name: c}]}\nstatus: {phase: Failed}\n"),
                     CU_OK);
    assert_int_equal(f->w.pods.n, 3);
    assert_int_equal(f->w.workloads.n, 0);
    const cu_kube_pod *p = f->w.pods.items[0];
    assert_string_equal(p->meta.ns, "ml");
    assert_string_equal(p->node_name, "gpu-a");
    assert_string_equal(p->phase, "Running");
    assert_false(p->ended);
    assert_true(p->tas);
    /* max(init 3, containers 1 + 1) = 3 GPUs; cpu 500m + overhead 100m */
    assert_int_equal(cu_reslist_get(&p->requests, "nvidia.com/gpu"), 3);
    assert_int_equal(cu_reslist_get(&p->requests, "cpu"), 600);
    const cu_kube_pod *done = f->w.pods.items[1], *failed = f->w.pods.items[2];
    assert_string_equal(done->meta.ns, "default");
    assert_true(done->ended);
    assert_false(done->tas);
    assert_int_equal(done->requests.n, 0);
    assert_true(failed->ended);
    assert_null(failed->node_name);
}

static void test_pod_errors(void **state)
{
    fx *f = *state;
    assert_int_equal(
        load(f, "apiVersion: v1\nkind: Pod\nmetadata: {name: q, namespace: ml}\n"
                "spec:\n"
                "  nodeName: [a]\n"
                "  containers: [{name: a, resources: {requests: {nvidia.com/gpu: two}}}]\n"
                "---\n"
                "apiVersion: v1\nkind: Pod\nmetadata: {name: s, namespace: ml}\n"
                "spec: {containers: []}\nstatus: {phase: {}}\n"
                "---\n"
                "apiVersion: v1\nkind: Pod\nmetadata: {name: ok, namespace: ml}\n"
                "spec: {nodeName: n, containers: [{name: a}]}\n"),
        CU_EINVAL);
    assert_msg(&f->d, "Pod ml/q: spec.nodeName: must be a string");
    assert_msg(&f->d, "Pod ml/q: spec.containers[0].resources.requests.nvidia.com/gpu: invalid "
                      "quantity \"two\"");
    assert_msg(&f->d, "Pod ml/s: status.phase: must be a string");
    assert_int_equal(f->w.pods.n, 1);
    assert_string_equal(f->w.pods.items[0]->meta.name, "ok");
}

/* A Pod with the queue-name label is the Workload of its single pod, the
 * one api/cu_pod.c's builder makes for the controller. */
static void test_queued_pod(void **state)
{
    fx *f = *state;
    static const char pod[] =
        "apiVersion: v1\nkind: Pod\n"
        "metadata:\n"
        "  name: trainer\n"
        "  namespace: ml\n"
        "  uid: 0b1c5c4e-1111-2222-3333-444455556666\n"
        "  labels: {kueue.x-k8s.io/queue-name: lq, kueue.x-k8s.io/priority-class: high}\n"
        "  annotations: {kueue.x-k8s.io/podset-required-topology: cloud.com/rack}\n"
        "spec:\n"
        "  nodeSelector: {gpu: h100}\n"
        "  containers: [{name: a, resources: {requests: {nvidia.com/gpu: 2}}}]\n";
    assert_int_equal(load(f, pod), CU_OK);
    assert_int_equal(f->w.pods.n, 0);
    assert_int_equal(f->w.workloads.n, 1);
    const cu_workload *wl = f->w.workloads.items[0];
    assert_string_equal(wl->queue_name, "lq");
    assert_string_equal(wl->meta.ns, "ml");
    assert_int_equal(wl->npodsets, 1);
    assert_string_equal(wl->podsets[0].name, "main");
    assert_int_equal(wl->podsets[0].count, 1);
    assert_int_equal(cu_reslist_get(&wl->podsets[0].requests, "nvidia.com/gpu"), 2);
    assert_string_equal(cu_kvs_get(&wl->podsets[0].node_selector, "gpu"), "h100");
    assert_true(wl->podsets[0].topo.present);
    assert_string_equal(wl->podsets[0].topo.required, "cloud.com/rack");
    assert_string_equal(wl->podsets[0].topo.pod_index_label, "kueue.x-k8s.io/pod-group-pod-index");
    assert_string_equal(wl->pc_kind, "WorkloadPriorityClass");
    assert_string_equal(wl->pc_name, "high");
    assert_int_equal(wl->nconds, 0);

    /* the same name, queue and pod set as the controller's builder */
    cu_arena a;
    cu_doc *docs = NULL;
    size_t n = 0;
    cu_arena_init(&a, 0);
    assert_int_equal(cu_doc_parse("p.yaml", pod, strlen(pod), &a, &docs, &n, &f->d), CU_OK);
    json_object *pj = cu_node_to_json(docs[0].root);
    json_object *wj = cu_pod_workload(pj, &f->d);
    assert_non_null(wj);
    assert_string_equal(cu_jpath_str(wj, "metadata.name"), wl->meta.name);
    assert_string_equal(cu_jpath_str(wj, "spec.queueName"), wl->queue_name);
    assert_string_equal(cu_jpath_str(wj, "spec.priorityClassRef.name"), wl->pc_name);
    json_object *ps = json_object_array_get_idx(cu_jpath(wj, "spec.podSets"), 0);
    assert_string_equal(cu_jstr(ps, "name"), wl->podsets[0].name);
    assert_int_equal(cu_jint(ps, "count"), wl->podsets[0].count);
    assert_string_equal(cu_jpath_str(ps, "topologyRequest.required"), wl->podsets[0].topo.required);
    assert_string_equal(cu_jpath_str(ps, "topologyRequest.podIndexLabel"),
                        wl->podsets[0].topo.pod_index_label);
    json_object_put(wj);
    json_object_put(pj);
    cu_arena_free(&a);
}

static void test_queued_pod_ended_and_group(void **state)
{
    fx *f = *state;
    assert_int_equal(load(f, "apiVersion: v1\nkind: Pod\n"
                             "metadata: {name: d, labels: {kueue.x-k8s.io/queue-name: lq}}\n"
                             "spec: {containers: [{name: a}]}\nstatus: {phase: Failed}\n"
                             "---\n"
                             "apiVersion: v1\nkind: Pod\n"
                             "metadata: {name: g0, namespace: ml, labels: "
                             "{kueue.x-k8s.io/queue-name: lq, kueue.x-k8s.io/pod-group-name: g}}\n"
                             "spec: {containers: [{name: a}]}\n"),
                     CU_OK);
    assert_int_equal(f->w.workloads.n, 1);
    const cu_workload *wl = f->w.workloads.items[0];
    assert_true(cu_workload_finished(wl));
    assert_string_equal(wl->conds[0].reason, "Failed");
    /* a pod of a group waits for cu_world_pod_groups; without a total
     * count its group is refused there (Kueue's message) */
    assert_int_equal(f->w.pods.n, 0);
    assert_int_equal(cu_world_pod_groups(&f->w, &f->d), CU_EINVAL);
    assert_msg(&f->d,
               "test.yaml:7: Pod ml/g0: metadata.annotations["
               "kueue.x-k8s.io/pod-group-total-count]: must be an integer greater than zero");
    assert_int_equal(f->w.workloads.n, 1);
}

/* A pod of group g (total count total, queue q, phase ph or none),
 * requesting gpus. */
static const char *group_pod(char *b, size_t n, const char *name, const char *g, const char *total,
                             const char *q, int gpus, const char *ph)
{
    snprintf(b, n,
             "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  namespace: ml\n"
             "  labels: {kueue.x-k8s.io/queue-name: %s, kueue.x-k8s.io/pod-group-name: %s}\n"
             "  annotations: {kueue.x-k8s.io/pod-group-total-count: \"%s\"}\n"
             "spec: {containers: [{name: a, resources: {requests: {nvidia.com/gpu: %d}}}]}\n"
             "%s%s%s",
             name, q, g, total, gpus, ph ? "status: {phase: " : "", ph ? ph : "", ph ? "}\n" : "");
    return b;
}

/* A world freed with pods of a group still kept (no cu_world_pod_groups:
 * the webhooks decode one pod so): nothing leaks or is read after free
 * (fuzz_webhook found the free reading the arena it had freed). */
static void test_pod_group_kept_then_freed(void **state)
{
    fx *f = *state;
    char b[1024];
    assert_int_equal(load(f, group_pod(b, sizeof b, "g0", "g", "2", "lq", 1, NULL)), CU_OK);
    assert_int_equal(f->w.group_pods.n, 1);
    cu_world_free(&f->w);
    cu_world_init(&f->w);
}

static void test_pod_groups(void **state)
{
    fx *f = *state;
    char y[8192] = "", b[1024];
    /* complete: a leader and 2 workers (two shapes: two pod sets) */
    strcat(y, group_pod(b, sizeof b, "lead", "ok", "3", "lq", 1, NULL));
    strcat(y, group_pod(b, sizeof b, "w1", "ok", "3", "lq", 2, NULL));
    strcat(y, group_pod(b, sizeof b, "w2", "ok", "3", "lq", 2, "Running"));
    /* incomplete: 1 of 2 (a Failed pod holds no place) */
    strcat(y, group_pod(b, sizeof b, "h0", "half", "2", "lq", 1, NULL));
    strcat(y, group_pod(b, sizeof b, "h1", "half", "2", "lq", 1, "Failed"));
    /* the pods disagree: total count, queue */
    strcat(y, group_pod(b, sizeof b, "t0", "tot", "2", "lq", 1, NULL));
    strcat(y, group_pod(b, sizeof b, "t1", "tot", "3", "lq", 1, NULL));
    strcat(y, group_pod(b, sizeof b, "q0", "que", "2", "lq", 1, NULL));
    strcat(y, group_pod(b, sizeof b, "q1", "que", "2", "other", 1, NULL));
    /* all succeeded: Finished; one too many: the last left out */
    strcat(y, group_pod(b, sizeof b, "s0", "done", "2", "lq", 1, "Succeeded"));
    strcat(y, group_pod(b, sizeof b, "s1", "done", "2", "lq", 1, "Succeeded"));
    strcat(y, group_pod(b, sizeof b, "x0", "extra", "1", "lq", 1, NULL));
    strcat(y, group_pod(b, sizeof b, "x1", "extra", "1", "lq", 1, NULL));
    assert_int_equal(load(f, y), CU_OK);
    assert_int_equal(f->w.workloads.n, 0);
    assert_int_equal(cu_world_pod_groups(&f->w, &f->d), CU_EINVAL);
    assert_int_equal(f->w.group_pods.n, 0);
    assert_int_equal(f->w.workloads.n, 3);
    const cu_workload *ok = f->w.workloads.items[0];
    assert_string_equal(ok->meta.name, "ok");
    assert_string_equal(ok->queue_name, "lq");
    assert_int_equal(ok->npodsets, 2);
    int32_t c0 = ok->podsets[0].count, c1 = ok->podsets[1].count;
    assert_true((c0 == 1 && c1 == 2) || (c0 == 2 && c1 == 1));
    assert_int_equal(cu_reslist_get(&ok->podsets[c0 == 1 ? 0 : 1].requests, "nvidia.com/gpu"), 1);
    assert_int_equal(cu_reslist_get(&ok->podsets[c0 == 1 ? 1 : 0].requests, "nvidia.com/gpu"), 2);
    assert_false(cu_workload_finished(ok));
    assert_msg(&f->d, "warning: test.yaml:30: pod group ml/half has 1 of its 2 pods: Kueue makes "
                      "its Workload when all are there; not simulated");
    assert_msg(&f->d, "test.yaml:58: pod group ml/tot: pods 't0' and 't1' has different "
                      "'kueue.x-k8s.io/pod-group-total-count' values: 2!=3");
    assert_msg(&f->d, "test.yaml:76: pod group ml/que: pods 'q0' and 'q1' has different "
                      "queue names: lq!=other");
    const cu_workload *done = f->w.workloads.items[1];
    assert_string_equal(done->meta.name, "done");
    assert_true(cu_workload_finished(done));
    assert_string_equal(done->conds[0].message, "Pods succeeded: 2/2.");
    const cu_workload *extra = f->w.workloads.items[2];
    assert_string_equal(extra->meta.name, "extra");
    assert_int_equal(extra->npodsets, 1);
    assert_int_equal(extra->podsets[0].count, 1);
    assert_msg(&f->d, "warning: test.yaml:114: pod group ml/extra has 2 pods for 1: the last 1 "
                      "left out");
}

static void test_queued_pod_error(void **state)
{
    fx *f = *state;
    assert_int_equal(load(f, "apiVersion: v1\nkind: Pod\n"
                             "metadata: {name: x, namespace: ml, labels: "
                             "{kueue.x-k8s.io/queue-name: lq}}\n"
                             "spec: {nodeSelector: [a], containers: [{name: a}]}\n"),
                     CU_EINVAL);
    assert_msg(&f->d, "Pod ml/x: spec.nodeSelector: must be an object");
    assert_int_equal(f->w.workloads.n, 0);
}

static void test_node_pod_duplicates(void **state)
{
    fx *f = *state;
    assert_int_equal(load(f, "apiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\n"
                             "apiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\n"
                             "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n---\n"
                             "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: x}\n"),
                     CU_OK);
    assert_int_equal(cu_world_validate(&f->w, &f->d), CU_EINVAL);
    assert_msg(&f->d, "Node a: metadata.name: Duplicate value: \"a\": defined at test.yaml:1 and "
                      "again at test.yaml:5");
    assert_int_equal(f->d.nerrors, 1); /* the pods are in two namespaces */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kvs_reslist),
        cmocka_unit_test_setup_teardown(test_resource_flavor, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cluster_queue_full, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cluster_queue_defaults, setup, teardown),
        cmocka_unit_test_setup_teardown(test_v1beta1_equivalence, setup, teardown),
        cmocka_unit_test_setup_teardown(test_other_kinds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_config_fair_sharing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_config_afs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_config_durations, setup, teardown),
        cmocka_unit_test_setup_teardown(test_config_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_workload_full, setup, teardown),
        cmocka_unit_test_setup_teardown(test_workload_defaults_and_status, setup, teardown),
        cmocka_unit_test_setup_teardown(test_job, setup, teardown),
        cmocka_unit_test(test_job_count_table),
        cmocka_unit_test_setup_teardown(test_job_errors_and_unmanaged, setup, teardown),
        cmocka_unit_test_setup_teardown(test_jobset, setup, teardown),
        cmocka_unit_test_setup_teardown(test_document_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_object_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_type_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lists_and_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_labelsel_matches, setup, teardown),
        cmocka_unit_test_setup_teardown(test_priority, setup, teardown),
        cmocka_unit_test_setup_teardown(test_convert, setup, teardown),
        cmocka_unit_test_setup_teardown(test_admission_checks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_load, setup, teardown),
        cmocka_unit_test_setup_teardown(test_quota_too_large, setup, teardown),
        cmocka_unit_test_setup_teardown(test_node, setup, teardown),
        cmocka_unit_test_setup_teardown(test_node_capacity_not_ready, setup, teardown),
        cmocka_unit_test_setup_teardown(test_node_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pod, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pod_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_queued_pod, setup, teardown),
        cmocka_unit_test_setup_teardown(test_queued_pod_ended_and_group, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pod_groups, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pod_group_kept_then_freed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_queued_pod_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_node_pod_duplicates, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
