/*
 * test_whconvert.c - the conversion webhook's v1beta1 <-> v1beta2
 * conversion (cu_wh_convert): each kind's mapping with the exact JSON
 * expected, the losses Kueue's conversion has, errors naming the object
 * and the field, lists, and lossless round trips both ways over every
 * Kueue object the project has in YAML (files, Markdown code blocks and
 * shell here-documents), cross-checked against `cueue convert`'s rewrite
 * (cu_convert_v1beta2), which shares the rules.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cu_json.h"
#include "cu_objects.h"
#include "cu_webhook.h"

#define V1 "kueue.x-k8s.io/v1beta1"
#define V2 "kueue.x-k8s.io/v1beta2"

static char *plain(json_object *o)
{
    return strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
}

/* Converts the JSON text in to desired; the result, serialized, must be
 * want (compared as text: key order too). */
static void conv_eq(const char *in, const char *desired, const char *want)
{
    json_object *o = cu_json_parse_str(in), *out = NULL;
    assert_non_null(o);
    cu_buf msg;
    cu_buf_init(&msg, 0);
    cu_err rc = cu_wh_convert(o, desired, &out, &msg);
    if (rc != CU_OK)
        fprintf(stderr, "convert: %s\n", cu_buf_str(&msg));
    assert_int_equal(rc, CU_OK);
    assert_true(out != o);
    json_object *w = cu_json_parse_str(want);
    assert_non_null(w);
    char *got = plain(out), *exp = plain(w);
    if (strcmp(got, exp) != 0)
        fprintf(stderr, "got:  %s\nwant: %s\n", got, exp);
    assert_string_equal(got, exp);
    /* the input is not touched */
    json_object *again = cu_json_parse_str(in);
    assert_true(json_object_equal(o, again));
    free(got);
    free(exp);
    json_object_put(again);
    json_object_put(w);
    json_object_put(out);
    json_object_put(o);
    cu_buf_free(&msg);
}

/* Conversion must fail with a message containing each of the strings. */
static void conv_err(const char *in, const char *desired, ...)
{
    json_object *o = cu_json_parse_str(in), *out = (json_object *)1;
    assert_non_null(o);
    cu_buf msg;
    cu_buf_init(&msg, 0);
    assert_int_equal(cu_wh_convert(o, desired, &out, &msg), CU_EINVAL);
    assert_null(out);
    va_list ap;
    va_start(ap, desired);
    for (const char *s; (s = va_arg(ap, const char *));) {
        if (!strstr(cu_buf_str(&msg), s))
            fprintf(stderr, "message: %s\nmissing: %s\n", cu_buf_str(&msg), s);
        assert_non_null(strstr(cu_buf_str(&msg), s));
    }
    va_end(ap);
    cu_buf_free(&msg);
    json_object_put(o);
}

/* ---- per kind ---- */

static void test_cluster_queue(void **state)
{
    (void)state;
    conv_eq(
        "{\"apiVersion\":\"" V1 "\",\"kind\":\"ClusterQueue\",\"metadata\":{\"name\":\"cq\"},"
        "\"spec\":{\"cohort\":\"co\",\"admissionChecks\":[\"a\",\"b\"],"
        "\"flavorFungibility\":{\"whenCanBorrow\":\"Borrow\",\"whenCanPreempt\":\"Preempt\"},"
        "\"queueingStrategy\":\"StrictFIFO\"},"
        "\"status\":{\"pendingWorkloads\":2,\"pendingWorkloadsStatus\":{\"clusterQueuePendingWorkload\":[]},"
        "\"fairSharing\":{\"weightedShare\":5,\"admissionFairSharingStatus\":{\"consumedResources\":{}}}}}",
        V2,
        "{\"apiVersion\":\"" V2 "\",\"kind\":\"ClusterQueue\",\"metadata\":{\"name\":\"cq\"},"
        "\"spec\":{\"cohortName\":\"co\",\"admissionChecksStrategy\":{\"admissionChecks\":"
        "[{\"name\":\"a\"},{\"name\":\"b\"}]},"
        "\"flavorFungibility\":{\"whenCanBorrow\":\"MayStopSearch\",\"whenCanPreempt\":\"MayStopSearch\"},"
        "\"queueingStrategy\":\"StrictFIFO\"},"
        "\"status\":{\"pendingWorkloads\":2,\"fairSharing\":{\"weightedShare\":5}}}");
    /* Kueue: a list replaces a strategy given too; an empty list is dropped */
    conv_eq("{\"apiVersion\":\"" V1
            "\",\"kind\":\"ClusterQueue\",\"spec\":{\"admissionChecksStrategy\":"
            "{\"admissionChecks\":[{\"name\":\"x\"}]},\"admissionChecks\":[\"a\"]}}",
            V2,
            "{\"apiVersion\":\"" V2
            "\",\"kind\":\"ClusterQueue\",\"spec\":{\"admissionChecksStrategy\":"
            "{\"admissionChecks\":[{\"name\":\"a\"}]}}}");
    conv_eq("{\"apiVersion\":\"" V1 "\",\"kind\":\"ClusterQueue\",\"spec\":{\"admissionChecks\":[],"
            "\"stopPolicy\":\"Hold\"}}",
            V2,
            "{\"apiVersion\":\"" V2
            "\",\"kind\":\"ClusterQueue\",\"spec\":{\"stopPolicy\":\"Hold\"}}");
    /* down: cohortName -> cohort; the strategy and MayStopSearch stay */
    conv_eq("{\"apiVersion\":\"" V2 "\",\"kind\":\"ClusterQueue\",\"metadata\":{\"name\":\"cq\"},"
            "\"spec\":{\"namespaceSelector\":{},\"cohortName\":\"co\",\"admissionChecksStrategy\":"
            "{\"admissionChecks\":[{\"name\":\"a\",\"onFlavors\":[\"f\"]}]},"
            "\"flavorFungibility\":{\"whenCanBorrow\":\"MayStopSearch\"}},"
            "\"status\":{\"flavorsUsage\":[{\"name\":\"f\",\"resources\":[]}]}}",
            V1,
            "{\"apiVersion\":\"" V1 "\",\"kind\":\"ClusterQueue\",\"metadata\":{\"name\":\"cq\"},"
            "\"spec\":{\"namespaceSelector\":{},\"cohort\":\"co\",\"admissionChecksStrategy\":"
            "{\"admissionChecks\":[{\"name\":\"a\",\"onFlavors\":[\"f\"]}]},"
            "\"flavorFungibility\":{\"whenCanBorrow\":\"MayStopSearch\"}},"
            "\"status\":{\"flavorsUsage\":[{\"name\":\"f\",\"resources\":[]}]}}");
}

static void test_cohort(void **state)
{
    (void)state;
    /* the same spec in both versions; v1beta1's admission fair sharing
     * status has no v1beta2 field */
    conv_eq("{\"apiVersion\":\"" V1 "\",\"kind\":\"Cohort\",\"metadata\":{\"name\":\"c\"},"
            "\"spec\":{\"parentName\":\"root\",\"fairSharing\":{\"weight\":\"2\"}},"
            "\"status\":{\"fairSharing\":{\"weightedShare\":1,\"admissionFairSharingStatus\":{}}}}",
            V2,
            "{\"apiVersion\":\"" V2 "\",\"kind\":\"Cohort\",\"metadata\":{\"name\":\"c\"},"
            "\"spec\":{\"parentName\":\"root\",\"fairSharing\":{\"weight\":\"2\"}},"
            "\"status\":{\"fairSharing\":{\"weightedShare\":1}}}");
    /* spec.parent (v1alpha1) is `cueue convert`'s leniency, not Kueue's */
    conv_eq("{\"apiVersion\":\"" V1 "\",\"kind\":\"Cohort\",\"spec\":{\"parent\":\"p\"}}", V2,
            "{\"apiVersion\":\"" V2 "\",\"kind\":\"Cohort\",\"spec\":{\"parent\":\"p\"}}");
    conv_eq("{\"apiVersion\":\"" V2 "\",\"kind\":\"Cohort\",\"spec\":{\"parentName\":\"p\"}}", V1,
            "{\"apiVersion\":\"" V1 "\",\"kind\":\"Cohort\",\"spec\":{\"parentName\":\"p\"}}");
}

static void test_local_queue(void **state)
{
    (void)state;
    conv_eq(
        "{\"apiVersion\":\"" V1
        "\",\"kind\":\"LocalQueue\",\"metadata\":{\"name\":\"lq\",\"namespace\":\"t\"},"
        "\"spec\":{\"clusterQueue\":\"cq\"},\"status\":{\"pendingWorkloads\":1,"
        "\"flavorUsage\":[{\"name\":\"f\",\"resources\":[{\"name\":\"cpu\",\"total\":\"1\"}]}],"
        "\"flavors\":[{\"name\":\"f\",\"resources\":[\"cpu\"]}],"
        "\"fairSharing\":{\"weightedShare\":0,\"admissionFairSharingStatus\":"
        "{\"consumedResources\":{\"cpu\":\"1\"},\"lastUpdate\":\"2025-01-01T00:00:00Z\"}}}}",
        V2,
        "{\"apiVersion\":\"" V2
        "\",\"kind\":\"LocalQueue\",\"metadata\":{\"name\":\"lq\",\"namespace\":\"t\"},"
        "\"spec\":{\"clusterQueue\":\"cq\"},\"status\":{\"pendingWorkloads\":1,"
        "\"flavorsUsage\":[{\"name\":\"f\",\"resources\":[{\"name\":\"cpu\",\"total\":\"1\"}]}],"
        "\"fairSharing\":{\"weightedShare\":0,\"admissionFairSharingStatus\":"
        "{\"consumedResources\":{\"cpu\":\"1\"},\"lastUpdate\":\"2025-01-01T00:00:00Z\"}}}}");
    conv_eq("{\"apiVersion\":\"" V2 "\",\"kind\":\"LocalQueue\",\"status\":{\"flavorsUsage\":[],"
            "\"admittedWorkloads\":3}}",
            V1,
            "{\"apiVersion\":\"" V1 "\",\"kind\":\"LocalQueue\",\"status\":{\"flavorUsage\":[],"
            "\"admittedWorkloads\":3}}");
}

static void test_workload_priority(void **state)
{
    (void)state;
    conv_eq("{\"apiVersion\":\"" V1 "\",\"kind\":\"Workload\",\"spec\":{\"queueName\":\"q\","
            "\"priorityClassSource\":\"kueue.x-k8s.io/workloadpriorityclass\","
            "\"priorityClassName\":\"high\",\"priority\":3},"
            "\"status\":{\"accumulatedPastExexcutionTimeSeconds\":7}}",
            V2,
            "{\"apiVersion\":\"" V2 "\",\"kind\":\"Workload\",\"spec\":{\"queueName\":\"q\","
            "\"priorityClassRef\":{\"group\":\"kueue.x-k8s.io\",\"kind\":\"WorkloadPriorityClass\","
            "\"name\":\"high\"},\"priority\":3},"
            "\"status\":{\"accumulatedPastExecutionTimeSeconds\":7}}");
    conv_eq("{\"apiVersion\":\"" V1
            "\",\"kind\":\"Workload\",\"spec\":{\"priorityClassName\":\"pc\","
            "\"priorityClassSource\":\"scheduling.k8s.io/priorityclass\"}}",
            V2,
            "{\"apiVersion\":\"" V2 "\",\"kind\":\"Workload\",\"spec\":{\"priorityClassRef\":"
            "{\"group\":\"scheduling.k8s.io\",\"kind\":\"PriorityClass\",\"name\":\"pc\"}}}");
    /* Kueue: a name without a known source is lost */
    conv_eq("{\"apiVersion\":\"" V1
            "\",\"kind\":\"Workload\",\"spec\":{\"priorityClassName\":\"pc\","
            "\"priorityClassSource\":\"\",\"priority\":1}}",
            V2, "{\"apiVersion\":\"" V2 "\",\"kind\":\"Workload\",\"spec\":{\"priority\":1}}");
    /* down */
    conv_eq(
        "{\"apiVersion\":\"" V2 "\",\"kind\":\"Workload\",\"spec\":{\"priorityClassRef\":"
        "{\"group\":\"kueue.x-k8s.io\",\"kind\":\"WorkloadPriorityClass\",\"name\":\"high\"},"
        "\"priority\":3,\"preemptionGates\":[{\"name\":\"g\"}],\"podSets\":[{\"name\":\"main\","
        "\"count\":1,\"topologyRequest\":{\"required\":\"rack\","
        "\"podsetSliceRequiredTopologyConstraints\":[{\"topology\":\"t\"}]}}]},"
        "\"status\":{\"accumulatedPastExecutionTimeSeconds\":7,\"preemptionGates\":[{\"name\":\"g\",\"state\":\"Open\"}]}}",
        V1,
        "{\"apiVersion\":\"" V1 "\",\"kind\":\"Workload\",\"spec\":{\"priorityClassName\":\"high\","
        "\"priority\":3,\"podSets\":[{\"name\":\"main\",\"count\":1,\"topologyRequest\":"
        "{\"required\":\"rack\"}}],\"priorityClassSource\":\"kueue.x-k8s.io/workloadpriorityclass\"},"
        "\"status\":{\"accumulatedPastExexcutionTimeSeconds\":7}}");
    conv_eq("{\"apiVersion\":\"" V2 "\",\"kind\":\"Workload\",\"spec\":{\"priorityClassRef\":"
            "{\"group\":\"scheduling.k8s.io\",\"kind\":\"PriorityClass\",\"name\":\"p\"}}}",
            V1,
            "{\"apiVersion\":\"" V1
            "\",\"kind\":\"Workload\",\"spec\":{\"priorityClassName\":\"p\","
            "\"priorityClassSource\":\"scheduling.k8s.io/priorityclass\"}}");
    /* a reference of another kind has no v1beta1 form (lost, as Kueue) */
    conv_eq("{\"apiVersion\":\"" V2 "\",\"kind\":\"Workload\",\"spec\":{\"priorityClassRef\":"
            "{\"group\":\"example.com\",\"kind\":\"Tier\",\"name\":\"p\"},\"active\":true}}",
            V1, "{\"apiVersion\":\"" V1 "\",\"kind\":\"Workload\",\"spec\":{\"active\":true}}");
}

#define PSA_V1(ta) \
    "{\"apiVersion\":\"" V1 \
    "\",\"kind\":\"Workload\",\"status\":{\"admission\":{\"clusterQueue\":" \
    "\"cq\",\"podSetAssignments\":[{\"name\":\"main\",\"topologyAssignment\":" ta "}]}}}"
#define PSA_V2(ta) \
    "{\"apiVersion\":\"" V2 \
    "\",\"kind\":\"Workload\",\"status\":{\"admission\":{\"clusterQueue\":" \
    "\"cq\",\"podSetAssignments\":[{\"name\":\"main\",\"topologyAssignment\":" ta "}]}}}"

static void test_workload_topology(void **state)
{
    (void)state;
    /* one slice; a universal block, a prefix and roots for the racks */
    const char *v1 = "{\"levels\":[\"block\",\"rack\"],\"domains\":["
                     "{\"values\":[\"block-1\",\"rack-1\"],\"count\":4},"
                     "{\"values\":[\"block-1\",\"rack-2\"],\"count\":2}]}";
    const char *v2 = "{\"levels\":[\"block\",\"rack\"],\"slices\":[{\"domainCount\":2,"
                     "\"valuesPerLevel\":[{\"universal\":\"block-1\"},{\"individual\":"
                     "{\"prefix\":\"rack-\",\"roots\":[\"1\",\"2\"]}}],"
                     "\"podCounts\":{\"individual\":[4,2]}}]}";
    char in[1024], want[1024];
    snprintf(in, sizeof(in), PSA_V1("%s"), v1);
    snprintf(want, sizeof(want), PSA_V2("%s"), v2);
    conv_eq(in, V2, want);
    conv_eq(want, V1, in);
    /* prefix and suffix do not overlap ("ababa", "aba": prefix "aba" and
     * suffix "aba" shortened to prefix "" ... as Kueue: minLen - suffix) */
    snprintf(in, sizeof(in), PSA_V1("%s"),
             "{\"levels\":[\"h\"],\"domains\":[{\"values\":[\"ababa\"],\"count\":1},"
             "{\"values\":[\"aba\"],\"count\":1}]}");
    snprintf(
        want, sizeof(want), PSA_V2("%s"),
        "{\"levels\":[\"h\"],\"slices\":[{\"domainCount\":2,\"valuesPerLevel\":[{\"individual\":"
        "{\"suffix\":\"aba\",\"roots\":[\"ab\",\"\"]}}],\"podCounts\":{\"universal\":1}}]}");
    conv_eq(in, V2, want);
    snprintf(in, sizeof(in), PSA_V1("%s"),
             "{\"levels\":[\"h\"],\"domains\":[{\"values\":[\"node-1a\"],\"count\":3},"
             "{\"values\":[\"node-22a\"],\"count\":3}]}");
    snprintf(
        want, sizeof(want), PSA_V2("%s"),
        "{\"levels\":[\"h\"],\"slices\":[{\"domainCount\":2,\"valuesPerLevel\":[{\"individual\":"
        "{\"prefix\":\"node-\",\"suffix\":\"a\",\"roots\":[\"1\",\"22\"]}}],"
        "\"podCounts\":{\"universal\":3}}]}");
    conv_eq(in, V2, want);
    /* no domains: no slices; down, Kueue writes an empty domains list */
    snprintf(in, sizeof(in), PSA_V1("%s"), "{\"levels\":[\"h\"],\"domains\":[]}");
    snprintf(want, sizeof(want), PSA_V2("%s"), "{\"levels\":[\"h\"]}");
    conv_eq(in, V2, want);
    conv_eq(want, V1, in);
    /* down from two slices, universal and individual counts */
    snprintf(
        in, sizeof(in), PSA_V2("%s"),
        "{\"levels\":[\"b\",\"h\"],\"slices\":[{\"domainCount\":1,\"valuesPerLevel\":"
        "[{\"universal\":\"b1\"},{\"universal\":\"n1\"}],\"podCounts\":{\"universal\":5}},"
        "{\"domainCount\":2,\"valuesPerLevel\":[{\"universal\":\"b2\"},{\"individual\":"
        "{\"prefix\":\"n\",\"suffix\":\"x\",\"roots\":[\"2\",\"3\"]}}],\"podCounts\":{\"individual\":[1,2]}}]}");
    snprintf(
        want, sizeof(want), PSA_V1("%s"),
        "{\"levels\":[\"b\",\"h\"],\"domains\":[{\"values\":[\"b1\",\"n1\"],\"count\":5},"
        "{\"values\":[\"b2\",\"n2x\"],\"count\":1},{\"values\":[\"b2\",\"n3x\"],\"count\":2}]}");
    conv_eq(in, V1, want);
}

static void test_other_kinds(void **state)
{
    (void)state;
    conv_eq(
        "{\"apiVersion\":\"" V1 "\",\"kind\":\"AdmissionCheck\",\"metadata\":{\"name\":\"ac\"},"
        "\"spec\":{\"controllerName\":\"x\",\"retryDelayMinutes\":15,\"parameters\":"
        "{\"apiGroup\":\"g\",\"kind\":\"K\",\"name\":\"n\"}}}",
        V2,
        "{\"apiVersion\":\"" V2 "\",\"kind\":\"AdmissionCheck\",\"metadata\":{\"name\":\"ac\"},"
        "\"spec\":{\"controllerName\":\"x\",\"parameters\":{\"apiGroup\":\"g\",\"kind\":\"K\",\"name\":\"n\"}}}");
    const char *rf =
        "{\"apiVersion\":\"%s\",\"kind\":\"ResourceFlavor\",\"metadata\":{\"name\":\"f\"},"
        "\"spec\":{\"nodeLabels\":{\"a\":\"b\"},\"topologyName\":\"t\"}}";
    const char *wpc = "{\"apiVersion\":\"%s\",\"kind\":\"WorkloadPriorityClass\",\"metadata\":"
                      "{\"name\":\"p\"},\"value\":100,\"description\":\"d\"}";
    const char *fmts[] = { rf, wpc };
    for (size_t i = 0; i < 2; i++) {
        char a[512], b[512];
        snprintf(a, sizeof(a), fmts[i], V1);
        snprintf(b, sizeof(b), fmts[i], V2);
        conv_eq(a, V2, b);
        conv_eq(b, V1, a);
        conv_eq(b, V2, b); /* already there: a copy */
    }
    conv_eq("{\"apiVersion\":\"" V1 "\",\"kind\":\"MultiKueueCluster\",\"spec\":{\"kubeConfig\":"
            "{\"location\":\"s\",\"locationType\":\"Secret\"}}}",
            V2,
            "{\"apiVersion\":\"" V2 "\",\"kind\":\"MultiKueueCluster\",\"spec\":{\"clusterSource\":"
            "{\"kubeConfig\":{\"location\":\"s\",\"locationType\":\"Secret\"}}}}");
    conv_eq("{\"apiVersion\":\"" V2 "\",\"kind\":\"MultiKueueCluster\",\"spec\":{\"clusterSource\":"
            "{\"clusterProfileRef\":{\"name\":\"p\"}}}}",
            V1,
            "{\"apiVersion\":\"" V1
            "\",\"kind\":\"MultiKueueCluster\",\"spec\":{\"clusterProfileRef\":"
            "{\"name\":\"p\"}}}");
}

static void test_lists(void **state)
{
    (void)state;
    conv_eq("{\"apiVersion\":\"" V2 "\",\"kind\":\"ClusterQueueList\",\"metadata\":{},\"items\":["
            "{\"apiVersion\":\"" V2 "\",\"kind\":\"ClusterQueue\",\"spec\":{\"cohortName\":\"a\"}},"
            "{\"spec\":{\"cohortName\":\"b\"}}]}",
            V1,
            "{\"apiVersion\":\"" V1 "\",\"kind\":\"ClusterQueueList\",\"metadata\":{},\"items\":["
            "{\"apiVersion\":\"" V1 "\",\"kind\":\"ClusterQueue\",\"spec\":{\"cohort\":\"a\"}},"
            "{\"spec\":{\"cohort\":\"b\"},\"apiVersion\":\"" V1 "\"}]}");
    conv_err("{\"apiVersion\":\"" V2 "\",\"kind\":\"ClusterQueueList\",\"items\":["
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\"}]}",
             V1, "ClusterQueueList: items[0]", NULL);
}

static void test_errors(void **state)
{
    (void)state;
    const char *cq =
        "{\"apiVersion\":\"" V1 "\",\"kind\":\"ClusterQueue\",\"metadata\":{\"name\":\"cq\"}}";
    conv_err(cq, "kueue.x-k8s.io/v1alpha1", "desiredAPIVersion", "v1alpha1", NULL);
    conv_err(cq, NULL, "desiredAPIVersion", NULL);
    conv_err(
        "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"j\",\"namespace\":\"n\"}}",
        V2, "Job n/j", "apiVersion: batch/v1 is not", NULL);
    conv_err("[1]", V2, "object", NULL);
    conv_err("{\"apiVersion\":\"" V1 "\",\"kind\":\"ClusterQueue\",\"metadata\":{\"name\":\"cq\"},"
             "\"spec\":{\"admissionChecks\":\"a\"}}",
             V2, "ClusterQueue cq: spec.admissionChecks: must be a list", NULL);
    conv_err("{\"apiVersion\":\"" V1
             "\",\"kind\":\"Workload\",\"metadata\":{\"name\":\"w\",\"namespace\":\"n\"},"
             "\"spec\":{\"priorityClassName\":5}}",
             V2, "Workload n/w: spec.priorityClassName: must be a string", NULL);
    conv_err("{\"apiVersion\":\"" V2
             "\",\"kind\":\"Workload\",\"metadata\":{\"name\":\"w\",\"namespace\":\"n\"},"
             "\"spec\":{\"priorityClassRef\":{\"group\":1}}}",
             V1, "Workload n/w: spec.priorityClassRef.group: must be a string", NULL);
    conv_err(
        PSA_V1("{\"levels\":[\"a\",\"b\"],\"domains\":[{\"values\":[\"x\"],\"count\":1}]}"), V2,
        "status.admission.podSetAssignments[0].topologyAssignment.domains: item 0 has 1 values for 2 levels",
        NULL);
    conv_err(PSA_V2("{\"levels\":[\"a\"],\"slices\":[{\"domainCount\":2,\"valuesPerLevel\":"
                    "[{\"individual\":{\"roots\":[\"x\"]}}],\"podCounts\":{\"universal\":1}}]}"),
             V1, "podSetAssignments[0].topologyAssignment.slices: item 0: valuesPerLevel[0]", NULL);
    conv_err(PSA_V2("{\"levels\":[\"a\"],\"slices\":[{\"domainCount\":1,\"valuesPerLevel\":"
                    "[{\"universal\":\"x\"}],\"podCounts\":{}}]}"),
             V1, "slices: item 0: podCounts has no universal count", NULL);
    conv_err(PSA_V2("{\"slices\":[{\"domainCount\":2000000000}]}"), V1, "more than 100000 domains",
             NULL);
}

/* ---- round trips over the project's YAML ---- */

typedef struct corpus {
    size_t objects, v1, v2, lossy, files, chunks;
} corpus;

/* The v1beta1 object as Kueue gives it back after v1beta1 -> v1beta2 ->
 * v1beta1: the documented losses (docs/conversion.md) applied. */
static int normalize_v1(json_object *o)
{
    int lossy = 0;
    const char *kind = cu_jstr(o, "kind");
    json_object *spec = cu_jget(o, "spec");
    if (kind && strcmp(kind, "ClusterQueue") == 0) {
        json_object *ff = cu_jget(spec, "flavorFungibility");
        if (cu_jstr(ff, "whenCanBorrow") && strcmp(cu_jstr(ff, "whenCanBorrow"), "Borrow") == 0)
            lossy = 1, cu_jset_str(ff, "whenCanBorrow", "MayStopSearch");
        if (cu_jstr(ff, "whenCanPreempt") && strcmp(cu_jstr(ff, "whenCanPreempt"), "Preempt") == 0)
            lossy = 1, cu_jset_str(ff, "whenCanPreempt", "MayStopSearch");
        json_object *acs = cu_jget(spec, "admissionChecks");
        if (acs) {
            lossy = 1;
            json_object *list = json_object_new_array();
            for (size_t i = 0; i < cu_jarr_len(acs); i++) {
                json_object *r = json_object_new_object();
                cu_jset_str(r, "name", json_object_get_string(json_object_array_get_idx(acs, i)));
                json_object_array_add(list, r);
            }
            json_object_object_del(spec, "admissionChecks");
            if (json_object_array_length(list)) {
                json_object *s = json_object_new_object();
                json_object_object_add(s, "admissionChecks", list);
                json_object_object_add(spec, "admissionChecksStrategy", s);
            } else {
                json_object_put(list);
            }
        }
    }
    if (kind && strcmp(kind, "Workload") == 0 && cu_jget(spec, "priorityClassName")) {
        const char *src = cu_jstr(spec, "priorityClassSource");
        if (!src || (strcmp(src, "kueue.x-k8s.io/workloadpriorityclass") != 0 &&
                     strcmp(src, "scheduling.k8s.io/priorityclass") != 0)) {
            lossy = 1;
            json_object_object_del(spec, "priorityClassName");
            json_object_object_del(spec, "priorityClassSource");
        }
    }
    return lossy;
}

/* The v1beta2 object after v1beta2 -> v1beta1 -> v1beta2 (the v1beta2-only
 * fields are lost). */
static int normalize_v2(json_object *o)
{
    int lossy = 0;
    json_object *spec = cu_jget(o, "spec"), *status = cu_jget(o, "status");
    if (cu_jget(spec, "preemptionGates") || cu_jget(status, "preemptionGates"))
        lossy = 1;
    if (json_object_is_type(spec, json_type_object))
        json_object_object_del(spec, "preemptionGates");
    if (json_object_is_type(status, json_type_object))
        json_object_object_del(status, "preemptionGates");
    return lossy;
}

static void round_trip(json_object *o, corpus *c, const char *where)
{
    const char *api = cu_jstr(o, "apiVersion"), *kind = cu_jstr(o, "kind");
    if (!api || !kind || (strcmp(api, V1) != 0 && strcmp(api, V2) != 0))
        return;
    int v1 = strcmp(api, V1) == 0;
    json_object *there = NULL, *back = NULL, *again = NULL, *back2 = NULL;
    cu_buf msg;
    cu_buf_init(&msg, 0);
    cu_err rc = cu_wh_convert(o, v1 ? V2 : V1, &there, &msg);
    if (rc == CU_OK)
        rc = cu_wh_convert(there, api, &back, &msg);
    if (rc == CU_OK) /* and once more: stable after the first trip */
        rc = cu_wh_convert(back, v1 ? V2 : V1, &again, &msg);
    if (rc == CU_OK)
        rc = cu_wh_convert(again, api, &back2, &msg);
    if (rc != CU_OK)
        fprintf(stderr, "%s: %s\n", where, cu_buf_str(&msg));
    assert_int_equal(rc, CU_OK);
    json_object *want = cu_jcopy(o);
    c->lossy += (size_t)(v1 ? normalize_v1(want) : normalize_v2(want));
    if (!json_object_equal(want, back)) {
        char *a = plain(want), *b = plain(back);
        fprintf(stderr, "%s: %s round trip\nwant: %s\ngot:  %s\n", where, api, a, b);
        free(a);
        free(b);
    }
    assert_true(json_object_equal(want, back));
    assert_true(json_object_equal(there, again));
    assert_true(json_object_equal(back, back2));
    assert_string_equal(cu_jstr(there, "apiVersion"), v1 ? V2 : V1);
    c->objects++;
    if (v1)
        c->v1++;
    else
        c->v2++;
    json_object_put(want);
    json_object_put(there);
    json_object_put(back);
    json_object_put(again);
    json_object_put(back2);
    cu_buf_free(&msg);
}

/* `cueue convert`'s rewrite of a v1beta1 object agrees with the webhook's,
 * except for its two leniencies (a Cohort's spec.parent, a priority name
 * without a known source). */
static void same_as_manifest(cu_arena *a, cu_node *root, json_object *o, const char *where)
{
    const char *api = cu_jstr(o, "apiVersion");
    if (!api || strcmp(api, V1) != 0 || cu_jpath(o, "spec.parent"))
        return;
    if (cu_jpath(o, "spec.priorityClassName") && !cu_jpath(o, "spec.priorityClassSource"))
        return;
    cu_node *copy = cu_node_clone(a, root);
    assert_int_equal(cu_convert_v1beta2(a, copy), 1);
    json_object *m = cu_node_to_json(copy), *w = NULL;
    cu_buf msg;
    cu_buf_init(&msg, 0);
    assert_int_equal(cu_wh_convert(o, V2, &w, &msg), CU_OK);
    if (!json_object_equal(m, w))
        fprintf(stderr, "%s: cueue convert and the webhook differ\n", where);
    assert_true(json_object_equal(m, w));
    json_object_put(m);
    json_object_put(w);
    cu_buf_free(&msg);
}

/* memmem, without _GNU_SOURCE */
static const char *find(const char *s, size_t len, const char *needle)
{
    size_t n = strlen(needle);
    for (size_t i = 0; i + n <= len; i++)
        if (memcmp(s + i, needle, n) == 0)
            return s + i;
    return NULL;
}

static void check_text(const char *where, const char *text, size_t len, corpus *c)
{
    if (!find(text, len, "kueue.x-k8s.io/v1beta"))
        return;
    cu_arena a;
    cu_arena_init(&a, 0);
    cu_diag d;
    cu_diag_init(&d);
    cu_doc *docs = NULL;
    size_t n = 0;
    c->chunks++;
    if (cu_doc_parse(where, text, len, &a, &docs, &n, &d) == CU_OK) {
        for (size_t i = 0; i < n; i++) {
            if (!docs[i].root || docs[i].root->type != CU_NODE_MAP)
                continue;
            json_object *o = cu_node_to_json(docs[i].root);
            const char *kind = cu_jstr(o, "kind");
            size_t kl = kind ? strlen(kind) : 0;
            if (kl >= 4 && strcmp(kind + kl - 4, "List") == 0) {
                json_object *items = cu_jget(o, "items");
                for (size_t k = 0; k < cu_jarr_len(items); k++)
                    round_trip(json_object_array_get_idx(items, k), c, where);
            } else {
                round_trip(o, c, where);
                same_as_manifest(&a, docs[i].root, o, where);
            }
            json_object_put(o);
        }
    }
    cu_diag_free(&d);
    cu_arena_free(&a);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    cu_buf b;
    cu_buf_init(&b, 0);
    char tmp[8192];
    size_t r;
    while ((r = fread(tmp, 1, sizeof(tmp), f)) > 0)
        cu_buf_append(&b, tmp, r);
    fclose(f);
    *len = b.len;
    char *s = strdup(cu_buf_str(&b));
    cu_buf_free(&b);
    return s;
}

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

/* The YAML of a Markdown file's ```yaml blocks, or of a shell script's
 * here-documents, one chunk at a time. */
static void check_embedded(const char *path, const char *text, corpus *c)
{
    int md = ends_with(path, ".md");
    const char *p = text;
    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t ll = eol ? (size_t)(eol - p) : strlen(p);
        char end[64] = "";
        if (md && (strncmp(p, "```yaml", 7) == 0 || strncmp(p, "```yml", 6) == 0)) {
            strcpy(end, "```");
        } else if (!md) {
            const char *h = find(p, ll, "<<");
            if (h && h[2] != '<') {
                h += 2;
                if (*h == '-')
                    h++;
                if (*h == '\'' || *h == '"')
                    h++;
                size_t k = 0;
                while (k < sizeof(end) - 1 && (h[k] == '_' || (h[k] >= 'A' && h[k] <= 'Z') ||
                                               (h[k] >= 'a' && h[k] <= 'z')))
                    end[k] = h[k], k++;
                end[k] = 0;
            }
        }
        p = eol ? eol + 1 : p + ll;
        if (!*end)
            continue;
        const char *start = p;
        while (*p) {
            eol = strchr(p, '\n');
            ll = eol ? (size_t)(eol - p) : strlen(p);
            const char *t = p;
            while (*t == ' ' || *t == '\t')
                t++;
            if (strncmp(t, end, strlen(end)) == 0 && (size_t)(t - p) + strlen(end) == ll)
                break;
            p = eol ? eol + 1 : p + ll;
        }
        char where[600];
        snprintf(where, sizeof(where), "%s (block at offset %zu)", path, (size_t)(start - text));
        check_text(where, start, (size_t)(p - start), c);
    }
}

static void walk(const char *path, corpus *c)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode)) {
        DIR *dir = opendir(path);
        assert_non_null(dir);
        for (struct dirent *e; (e = readdir(dir));) {
            if (e->d_name[0] == '.' || strcmp(e->d_name, "build") == 0)
                continue;
            char sub[1024];
            snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
            walk(sub, c);
        }
        closedir(dir);
        return;
    }
    int yaml = ends_with(path, ".yaml") || ends_with(path, ".yml") || ends_with(path, ".json");
    int emb = ends_with(path, ".md") || ends_with(path, ".sh");
    if (!yaml && !emb)
        return;
    size_t len = 0;
    char *text = slurp(path, &len);
    assert_non_null(text);
    c->files++;
    if (yaml)
        check_text(path, text, len, c);
    else
        check_embedded(path, text, c);
    free(text);
}

static void test_round_trips(void **state)
{
    (void)state;
    corpus c = { 0 };
    static const char *const roots[] = { "config",    "sim",  "docs", "e2e",    "bench",    "cmd",
                                         "scheduler", "crds", "dist", "charts", "README.md" };
    for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++)
        walk(roots[i], &c);
    fprintf(stderr,
            "round trips: %zu objects (%zu v1beta1, %zu v1beta2; %zu with Kueue's losses) "
            "from %zu chunks of %zu files\n",
            c.objects, c.v1, c.v2, c.lossy, c.chunks, c.files);
    /* the corpus is there: the test cannot pass on nothing */
    assert_true(c.objects > 500);
    assert_true(c.v1 >= 10);
    assert_true(c.lossy >= 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cluster_queue),
        cmocka_unit_test(test_cohort),
        cmocka_unit_test(test_local_queue),
        cmocka_unit_test(test_workload_priority),
        cmocka_unit_test(test_workload_topology),
        cmocka_unit_test(test_other_kinds),
        cmocka_unit_test(test_lists),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_round_trips),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
