/*
 * test_config.c - the controller Configuration (config.kueue.x-k8s.io):
 * Kueue's defaults in v1beta2 and v1beta1, every field read, every
 * validation message (and that one bad field does not hide the others),
 * unknown-field warnings, the managed-namespaces selector, the framework
 * helper, and the sample file config/controller/config.yaml.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_objects.h"

#define HDR2 "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
#define HDR1 "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n"
#define MIN(s) (INT64_C(60000) * (s))

typedef struct fx {
    cu_world w;
    cu_diag d;
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof(*f));
    if (!f)
        return -1;
    cu_world_init(&f->w);
    cu_diag_init(&f->d);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    cu_world_free(&f->w);
    cu_diag_free(&f->d);
    free(f);
    return 0;
}

/* Starts over with an empty world and diag list. */
static fx *reset(void **state)
{
    teardown(state);
    assert_int_equal(setup(state), 0);
    return *state;
}

static void dump_diag(const cu_diag *d)
{
    for (size_t i = 0; i < d->n; i++)
        fprintf(stderr, "  diag: %s\n", d->msgs[i]);
}

/* Parses yaml as file "test.yaml" into a temporary arena (freed before
 * returning, so decoded objects must not point into it) and decodes each
 * document. Returns the first non-OK decode result. */
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
    cu_arena_free(&tmp);
    return ret;
}

/* Loads yaml that must decode cleanly (no errors, no warnings) into one
 * Configuration. */
static const cu_config *load_ok(fx *f, const char *yaml)
{
    cu_err err = load(f, yaml);
    if (err != CU_OK || f->d.n != 0) {
        dump_diag(&f->d);
        fail_msg("decode: %s, %zu messages, for:\n%s", cu_strerror(err), f->d.n, yaml);
    }
    assert_int_equal(f->w.configs.n, 1);
    return f->w.configs.items[0];
}

static int has_msg(const cu_diag *d, const char *want)
{
    for (size_t i = 0; i < d->n; i++)
        if (strcmp(d->msgs[i], want) == 0)
            return 1;
    return 0;
}

/* Parses "k=v,k2=v2" (at most 8 pairs) into kvs backed by buf. */
typedef struct labels {
    char buf[256];
    cu_kv kv[8];
    cu_kvs kvs;
} labels;
static const cu_kvs *mklabels(labels *l, const char *spec)
{
    snprintf(l->buf, sizeof l->buf, "%s", spec);
    l->kvs.n = 0;
    l->kvs.items = l->kv;
    char *save = NULL;
    for (char *tok = strtok_r(l->buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        assert_non_null(eq);
        assert_true(l->kvs.n < 8);
        *eq = '\0';
        l->kv[l->kvs.n].key = tok;
        l->kv[l->kvs.n].value = eq + 1;
        l->kvs.n++;
    }
    return &l->kvs;
}

static int ns_matches(const cu_config *x, const char *ns)
{
    cu_kv kv = { "kubernetes.io/metadata.name", ns };
    cu_kvs l = { 1, &kv };
    return cu_labelsel_matches(&x->managed_ns_selector, &l);
}

/* The controller-side fields shared by every default case. */
static void check_common_defaults(const cu_config *x, const char *ns)
{
    assert_string_equal(x->ns, ns);
    assert_int_equal(x->has_ns, strcmp(ns, "kueue-system") != 0);
    assert_false(x->manage_jobs_without_queue_name);
    assert_false(x->has_managed_ns_selector);
    assert_false(x->managed_ns_selector.is_null);
    assert_int_equal(x->managed_ns_selector.match_labels.n, 0);
    assert_int_equal(x->managed_ns_selector.nexpr, 1);
    const cu_selreq *r = &x->managed_ns_selector.exprs[0];
    assert_string_equal(r->key, "kubernetes.io/metadata.name");
    assert_int_equal(r->op, CU_SEL_NOTIN);
    assert_int_equal(r->values.n, 2);
    assert_string_equal(r->values.items[0], "kube-system");
    assert_string_equal(r->values.items[1], ns);

    assert_int_equal(x->pods_ready.requeue_timestamp, CU_REQUEUE_EVICTION);
    assert_int_equal(x->pods_ready.backoff_limit_count, -1);
    assert_int_equal(x->pods_ready.backoff_base_s, 60);
    assert_int_equal(x->pods_ready.backoff_max_s, 3600);

    assert_int_equal(x->frameworks.n, 1);
    assert_string_equal(x->frameworks.items[0], "batch/job");
    assert_int_equal(x->unsupported_frameworks.n, 0);
    assert_int_equal(x->unknown_frameworks.n, 0);
    assert_true(cu_config_framework_enabled(x, "batch/job"));
    assert_false(cu_config_framework_enabled(x, "pod"));
    assert_int_equal(x->label_keys_to_copy.n, 0);
    assert_int_equal(x->exclude_resource_prefixes.n, 0);
    assert_int_equal(x->nxforms, 0);

    assert_false(x->client.has_qps);
    assert_false(x->client.has_burst);
    assert_true(x->client.qps == 1000.0);
    assert_int_equal(x->client.burst, 1000);

    assert_false(x->leader_election.has_leader_elect);
    assert_true(x->leader_election.leader_elect);
    assert_string_equal(x->leader_election.resource_name, "c1f6bfd2.kueue.x-k8s.io");
    assert_string_equal(x->leader_election.resource_namespace, ns);
    assert_false(x->leader_election.has_lease_duration);
    assert_false(x->leader_election.has_renew_deadline);
    assert_false(x->leader_election.has_retry_period);
    assert_int_equal(x->leader_election.lease_duration_ms, 15000);
    assert_int_equal(x->leader_election.renew_deadline_ms, 10000);
    assert_int_equal(x->leader_election.retry_period_ms, 2000);

    assert_string_equal(x->metrics_bind_address, ":8443");
    assert_false(x->has_metrics_bind_address);
    assert_string_equal(x->health_bind_address, ":8081");
    assert_false(x->has_health_bind_address);
    assert_false(x->fair_sharing);
    assert_false(x->afs);
}

static void test_defaults_v1beta2(void **state)
{
    fx *f = *state;
    const cu_config *x = load_ok(f, HDR2);
    assert_false(x->v1beta1);
    check_common_defaults(x, "kueue-system");
    /* Kueue's webhook defaults */
    assert_int_equal(x->webhook.port, 9443);
    assert_false(x->webhook.has_port);
    assert_string_equal(x->webhook.host, "");
    assert_string_equal(x->webhook.cert_dir, "/tmp/k8s-webhook-server/serving-certs");
    assert_true(x->cert_mgmt.enable);
    assert_string_equal(x->cert_mgmt.service_name, "kueue-webhook-service");
    assert_string_equal(x->cert_mgmt.secret_name, "kueue-webhook-server-cert");
    assert_false(x->pods_ready.present);
    assert_false(x->pods_ready.enabled);
    assert_int_equal(x->pods_ready.timeout_ms, MIN(30));
    assert_false(x->pods_ready.block_admission);
    assert_true(x->pods_ready.recovery_enabled);
    assert_int_equal(x->pods_ready.recovery_timeout_ms, MIN(30));

    /* the same, without a file */
    cu_config d;
    cu_arena a;
    cu_arena_init(&a, 0);
    assert_int_equal(cu_config_init_defaults(&d, &a), CU_OK);
    check_common_defaults(&d, "kueue-system");
    assert_false(d.pods_ready.enabled);
    assert_int_equal(d.pods_ready.timeout_ms, MIN(30));
    assert_int_equal(d.pods_ready.recovery_timeout_ms, MIN(30));
    cu_arena_free(&a);

    /* the namespace flows into the selector and the Lease namespace */
    f = reset(state);
    x = load_ok(f, HDR2 "namespace: cueue\n");
    check_common_defaults(x, "cueue");
    assert_true(ns_matches(x, "kueue-system"));
    assert_false(ns_matches(x, "cueue"));
}

/* waitForPodsReady defaults, v1beta2 and v1beta1. */
static void test_pods_ready_defaults(void **state)
{
    static const struct {
        const char *name, *yaml;
        int present, enabled, block, recovery_enabled;
        int64_t timeout, recovery;
    } cases[] = {
        { "v1beta2 empty block enables", HDR2 "waitForPodsReady: {}\n", 1, 1, 0, 1, MIN(30),
          MIN(30) },
        { "v1beta2 null block is absent", HDR2 "waitForPodsReady: null\n", 0, 0, 0, 1, MIN(30),
          MIN(30) },
        { "v1beta2 recovery follows timeout", HDR2 "waitForPodsReady: {timeout: 10m}\n", 1, 1, 0, 1,
          MIN(10), MIN(10) },
        { "v1beta2 0s timeout is the default", HDR2 "waitForPodsReady: {timeout: 0s}\n", 1, 1, 0, 1,
          MIN(30), MIN(30) },
        { "v1beta2 recovery 0s disables", HDR2 "waitForPodsReady: {recoveryTimeout: 0s}\n", 1, 1, 0,
          0, MIN(30), 0 },
        { "v1beta2 explicit recovery",
          HDR2 "waitForPodsReady: {timeout: 2m, recoveryTimeout: 90s, blockAdmission: true}\n", 1,
          1, 1, 1, MIN(2), 90000 },
        { "v1beta1 no block", HDR1, 0, 0, 0, 1, MIN(5), MIN(5) },
        { "v1beta1 block without enable is off", HDR1 "waitForPodsReady: {}\n", 1, 0, 0, 1, MIN(5),
          MIN(5) },
        { "v1beta1 enable: blockAdmission follows", HDR1 "waitForPodsReady: {enable: true}\n", 1, 1,
          1, 1, MIN(5), MIN(5) },
        { "v1beta1 enable, blockAdmission false",
          HDR1 "waitForPodsReady: {enable: true, blockAdmission: false, timeout: 7m}\n", 1, 1, 0, 1,
          MIN(7), MIN(7) },
        { "v1beta1 enable false, blockAdmission true",
          HDR1 "waitForPodsReady: {enable: false, blockAdmission: true}\n", 1, 0, 1, 1, MIN(5),
          MIN(5) },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        fx *f = reset(state);
        const cu_config *x = load_ok(f, cases[i].yaml);
        if (x->pods_ready.present != cases[i].present ||
            x->pods_ready.enabled != cases[i].enabled ||
            x->pods_ready.block_admission != cases[i].block ||
            x->pods_ready.recovery_enabled != cases[i].recovery_enabled ||
            x->pods_ready.timeout_ms != cases[i].timeout ||
            x->pods_ready.recovery_timeout_ms != cases[i].recovery)
            fail_msg("%s: present %d enabled %d block %d recovery_enabled %d timeout %lld "
                     "recovery %lld",
                     cases[i].name, x->pods_ready.present, x->pods_ready.enabled,
                     x->pods_ready.block_admission, x->pods_ready.recovery_enabled,
                     (long long)x->pods_ready.timeout_ms,
                     (long long)x->pods_ready.recovery_timeout_ms);
        assert_int_equal(x->v1beta1, strstr(cases[i].yaml, "v1beta1") != NULL);
        assert_int_equal(x->pods_ready.backoff_limit_count, -1);
        assert_int_equal(x->pods_ready.backoff_base_s, 60);
        assert_int_equal(x->pods_ready.backoff_max_s, 3600);
    }
}

static void test_defaults_v1beta1(void **state)
{
    fx *f = *state;
    const cu_config *x = load_ok(f, HDR1);
    assert_true(x->v1beta1);
    check_common_defaults(x, "kueue-system");
    assert_int_equal(x->pods_ready.timeout_ms, MIN(5));
}

static const char *full_v1beta2 = HDR2
    "namespace: cueue-system\n"
    "manageJobsWithoutQueueName: true\n"
    "managedJobsNamespaceSelector:\n"
    "  matchLabels: {team: ml}\n"
    "  matchExpressions:\n"
    "  - {key: env, operator: In, values: [dev, test]}\n"
    "  - {key: frozen, operator: DoesNotExist}\n"
    "waitForPodsReady:\n"
    "  timeout: 12m\n"
    "  blockAdmission: true\n"
    "  recoveryTimeout: 3m30s\n"
    "  requeuingStrategy:\n"
    "    timestamp: Creation\n"
    "    backoffLimitCount: 4\n"
    "    backoffBaseSeconds: 5\n"
    "    backoffMaxSeconds: 300\n"
    "integrations:\n"
    "  frameworks: [batch/job, pod, kubeflow.org/pytorchjob, example.com/thing,\n"
    "    jobset.x-k8s.io/jobset]\n"
    "  labelKeysToCopy: [team, cost-center]\n"
    "resources:\n"
    "  excludeResourcePrefixes: [example.com/, ephemeral-]\n"
    "  transformations:\n"
    "  - {input: cpu, outputs: {cpu_credits: 1, example.com/cost: 250m}}\n"
    "  - {input: nvidia.com/mig-1g.5gb, strategy: Replace, outputs: {example.com/gpumem: 5Gi}}\n"
    "  - {input: nvidia.com/gpu, strategy: Retain, multiplyBy: nvidia.com/gpumem,\n"
    "     outputs: {nvidia.com/total-gpumem: 1}}\n"
    "  - {input: example.com/ignored, strategy: Replace}\n"
    "clientConnection: {qps: 12.5, burst: 40}\n"
    "leaderElection:\n"
    "  leaderElect: false\n"
    "  resourceName: cueue-lock\n"
    "  resourceNamespace: locks\n"
    "  resourceLock: leases\n"
    "  leaseDuration: 1m\n"
    "  renewDeadline: 45s\n"
    "  retryPeriod: 500ms\n"
    "metrics: {bindAddress: \"127.0.0.1:9090\", enableClusterQueueResources: true}\n"
    "health: {healthProbeBindAddress: \"[::1]:9091\"}\n"
    "fairSharing: {preemptionStrategies: [LessThanInitialShare]}\n"
    "admissionFairSharing: {usageHalfLifeTime: 1h}\n"
    "webhook: {port: 9444, host: 127.0.0.1, certDir: /certs}\n"
    "internalCertManagement:\n"
    "  enable: false\n"
    "  webhookServiceName: cueue-webhook-service\n"
    "  webhookSecretName: cueue-webhook-server-cert\n";

static void test_every_field(void **state)
{
    fx *f = *state;
    assert_int_equal(load(f, full_v1beta2), CU_OK);
    /* the fields Cueue accepts and does not act on are named, nothing else */
    static const char *const warned[] = {
        "integrations.labelKeysToCopy: not implemented by Cueue, ignored: no labels are copied "
        "to Workloads",
        "metrics.enableClusterQueueResources: not implemented by Cueue, ignored: the "
        "ClusterQueue resource metrics are always exported",
    };
    for (size_t i = 0; i < sizeof(warned) / sizeof(warned[0]); i++) {
        char m[512];
        snprintf(m, sizeof m, "warning: Configuration test.yaml: %s", warned[i]);
        if (!has_msg(&f->d, m)) {
            dump_diag(&f->d);
            fail_msg("missing: %s", m);
        }
    }
    assert_int_equal(f->d.n, sizeof(warned) / sizeof(warned[0]));
    assert_int_equal(f->d.nerrors, 0);
    assert_int_equal(f->w.configs.n, 1);
    const cu_config *x = f->w.configs.items[0];
    assert_string_equal(x->ns, "cueue-system");
    assert_true(x->has_ns);
    assert_int_equal(x->webhook.port, 9444);
    assert_true(x->webhook.has_port);
    assert_string_equal(x->webhook.host, "127.0.0.1");
    assert_string_equal(x->webhook.cert_dir, "/certs");
    assert_true(x->webhook.has_cert_dir);
    assert_int_equal(x->cert_mgmt.enable, 0);
    assert_string_equal(x->cert_mgmt.service_name, "cueue-webhook-service");
    assert_string_equal(x->cert_mgmt.secret_name, "cueue-webhook-server-cert");
    assert_true(x->manage_jobs_without_queue_name);
    assert_true(x->has_managed_ns_selector);
    const cu_labelsel *s = &x->managed_ns_selector;
    assert_int_equal(s->match_labels.n, 1);
    assert_string_equal(s->match_labels.items[0].key, "team");
    assert_string_equal(s->match_labels.items[0].value, "ml");
    assert_int_equal(s->nexpr, 2);
    assert_string_equal(s->exprs[0].key, "env");
    assert_int_equal(s->exprs[0].op, CU_SEL_IN);
    assert_int_equal(s->exprs[0].values.n, 2);
    assert_string_equal(s->exprs[0].values.items[1], "test");
    assert_int_equal(s->exprs[1].op, CU_SEL_DOESNOTEXIST);

    assert_true(x->pods_ready.present);
    assert_true(x->pods_ready.enabled);
    assert_int_equal(x->pods_ready.timeout_ms, MIN(12));
    assert_true(x->pods_ready.block_admission);
    assert_true(x->pods_ready.recovery_enabled);
    assert_int_equal(x->pods_ready.recovery_timeout_ms, 210000);
    assert_int_equal(x->pods_ready.requeue_timestamp, CU_REQUEUE_CREATION);
    assert_int_equal(x->pods_ready.backoff_limit_count, 4);
    assert_int_equal(x->pods_ready.backoff_base_s, 5);
    assert_int_equal(x->pods_ready.backoff_max_s, 300);

    assert_int_equal(x->frameworks.n, 5);
    assert_string_equal(x->frameworks.items[3], "example.com/thing");
    assert_true(cu_config_framework_enabled(x, "jobset.x-k8s.io/jobset")); /* integrated */
    assert_true(cu_config_framework_enabled(x, "batch/job"));
    assert_true(cu_config_framework_enabled(x, "pod"));
    assert_false(cu_config_framework_enabled(x, "deployment"));
    assert_false(cu_config_framework_enabled(x, NULL));
    assert_int_equal(x->unsupported_frameworks.n, 2); /* pod is integrated */
    assert_string_equal(x->unsupported_frameworks.items[0], "kubeflow.org/pytorchjob");
    assert_string_equal(x->unsupported_frameworks.items[1], "example.com/thing");
    assert_int_equal(x->unknown_frameworks.n, 1);
    assert_string_equal(x->unknown_frameworks.items[0], "example.com/thing");
    assert_int_equal(x->label_keys_to_copy.n, 2);
    assert_string_equal(x->label_keys_to_copy.items[0], "team");
    assert_string_equal(x->label_keys_to_copy.items[1], "cost-center");
    assert_int_equal(x->exclude_resource_prefixes.n, 2);
    assert_string_equal(x->exclude_resource_prefixes.items[0], "example.com/");
    assert_string_equal(x->exclude_resource_prefixes.items[1], "ephemeral-");
    assert_int_equal(x->nxforms, 4);
    const cu_xform *t = &x->xforms[0];
    assert_string_equal(t->input, "cpu");
    assert_int_equal(t->strategy, CU_XFORM_RETAIN); /* the default */
    assert_null(t->multiply_by);
    assert_int_equal(t->outputs.n, 2);
    assert_string_equal(t->outputs.items[0].name, "cpu_credits");
    assert_int_equal(t->outputs.items[0].milli, 1000);
    assert_string_equal(t->outputs.items[1].name, "example.com/cost");
    assert_int_equal(t->outputs.items[1].milli, 250);
    t = &x->xforms[1];
    assert_int_equal(t->strategy, CU_XFORM_REPLACE);
    assert_int_equal(t->outputs.items[0].milli, 5LL * 1024 * 1024 * 1024 * 1000);
    t = &x->xforms[2];
    assert_int_equal(t->strategy, CU_XFORM_RETAIN);
    assert_string_equal(t->multiply_by, "nvidia.com/gpumem");
    t = &x->xforms[3];
    assert_int_equal(t->strategy, CU_XFORM_REPLACE);
    assert_int_equal(t->outputs.n, 0); /* Replace without outputs: the input is ignored */

    assert_true(x->client.has_qps);
    assert_true(x->client.qps == 12.5);
    assert_true(x->client.has_burst);
    assert_int_equal(x->client.burst, 40);

    assert_true(x->leader_election.has_leader_elect);
    assert_false(x->leader_election.leader_elect);
    assert_string_equal(x->leader_election.resource_name, "cueue-lock");
    assert_string_equal(x->leader_election.resource_namespace, "locks");
    assert_true(x->leader_election.has_lease_duration);
    assert_int_equal(x->leader_election.lease_duration_ms, 60000);
    assert_true(x->leader_election.has_renew_deadline);
    assert_int_equal(x->leader_election.renew_deadline_ms, 45000);
    assert_true(x->leader_election.has_retry_period);
    assert_int_equal(x->leader_election.retry_period_ms, 500);

    assert_true(x->has_metrics_bind_address);
    assert_string_equal(x->metrics_bind_address, "127.0.0.1:9090");
    assert_true(x->has_health_bind_address);
    assert_string_equal(x->health_bind_address, "[::1]:9091");

    /* the fair-sharing parts still decode as before */
    assert_true(x->fair_sharing);
    assert_int_equal(x->nstrategies, 1);
    assert_int_equal(x->strategies[0], CU_FS_LESS_THAN_INITIAL_SHARE);
    assert_true(x->afs);
    assert_int_equal(x->afs_half_life_ms, MIN(60));
}

/* Odd but valid values. */
static void test_edge_values(void **state)
{
    fx *f = *state;
    const cu_config *x = load_ok(
        f, HDR2
        "clientConnection: {qps: -1}\n"
        "integrations: {frameworks: []}\n"
        "waitForPodsReady: {requeuingStrategy: {backoffLimitCount: null, backoffBaseSeconds: 0,"
        " backoffMaxSeconds: 0}}\n"
        "metrics: {bindAddress: \"0\"}\n"
        "health: {healthProbeBindAddress: \"\"}\n"
        "leaderElection: {leaseDuration: 0s, renewDeadline: 9s, retryPeriod: 7s, resourceName: ''}\n");
    assert_true(x->client.has_qps);
    assert_true(x->client.qps < 0); /* no client-side limit */
    assert_false(x->client.has_burst);
    assert_int_equal(x->frameworks.n, 1); /* an empty list is the default */
    assert_string_equal(x->frameworks.items[0], "batch/job");
    assert_int_equal(x->pods_ready.backoff_limit_count, -1);
    assert_int_equal(x->pods_ready.backoff_base_s, 0);
    assert_int_equal(x->pods_ready.backoff_max_s, 0);
    assert_string_equal(x->metrics_bind_address, "0");
    assert_false(x->has_health_bind_address);
    assert_string_equal(x->health_bind_address, ":8081");
    assert_false(x->leader_election.has_lease_duration); /* 0s = the default */
    assert_int_equal(x->leader_election.lease_duration_ms, 15000);
    assert_int_equal(x->leader_election.renew_deadline_ms, 9000);
    assert_int_equal(x->leader_election.retry_period_ms, 7000);
    assert_string_equal(x->leader_election.resource_name, "c1f6bfd2.kueue.x-k8s.io");

    /* qps with a zero burst is fine when there is no limit */
    f = reset(state);
    x = load_ok(f, HDR2 "clientConnection: {qps: -1, burst: 0}\n");
    assert_int_equal(x->client.burst, 0);

    /* a selector may select everything but the protected namespaces */
    f = reset(state);
    x = load_ok(f, HDR2 "managedJobsNamespaceSelector: {matchExpressions: [{key: "
                        "kubernetes.io/metadata.name, operator: NotIn, values: [kube-system, "
                        "kueue-system, other]}]}\n");
    assert_false(ns_matches(x, "other"));
    assert_true(ns_matches(x, "default"));
}

/* Every validation message, one bad field per case. */
static void test_errors(void **state)
{
    static const struct {
        const char *yaml, *want;
    } cases[] = {
        { HDR2 "waitForPodsReady: {timeout: abc}\n",
          "waitForPodsReady.timeout: invalid duration \"abc\" (use Go duration syntax such as "
          "\"168h\", \"1h30m\" or \"300s\")" },
        { HDR2 "waitForPodsReady: {timeout: [5m]}\n",
          "waitForPodsReady.timeout: must be a duration string such as \"5m\" or \"168h\"" },
        { HDR2 "waitForPodsReady: {recoveryTimeout: -5m}\n",
          "waitForPodsReady.recoveryTimeout: must not be negative, got \"-5m\"" },
        { HDR2 "waitForPodsReady: true\n", "waitForPodsReady: must be an object" },
        { HDR2 "waitForPodsReady: {blockAdmission: maybe}\n",
          "waitForPodsReady.blockAdmission: must be a boolean" },
        { HDR1 "waitForPodsReady: {enable: 1}\n", "waitForPodsReady.enable: must be a boolean" },
        { HDR2 "waitForPodsReady: {enable: false}\n",
          "waitForPodsReady.enable: not a v1beta2 field: the waitForPodsReady block's presence "
          "enables it (remove the block to disable it)" },
        { HDR2 "waitForPodsReady: {requeuingStrategy: [Eviction]}\n",
          "waitForPodsReady.requeuingStrategy: must be an object" },
        { HDR2 "waitForPodsReady: {requeuingStrategy: {timestamp: Now}}\n",
          "waitForPodsReady.requeuingStrategy.timestamp: Unsupported value: \"Now\": supported "
          "values: \"Eviction\", \"Creation\"" },
        { HDR2 "waitForPodsReady: {requeuingStrategy: {backoffLimitCount: -1}}\n",
          "waitForPodsReady.requeuingStrategy.backoffLimitCount: must be greater than or equal "
          "to 0 (leave it out to requeue forever), got -1" },
        { HDR2 "waitForPodsReady: {requeuingStrategy: {backoffLimitCount: lots}}\n",
          "waitForPodsReady.requeuingStrategy.backoffLimitCount: must be an integer" },
        { HDR2 "waitForPodsReady: {requeuingStrategy: {backoffBaseSeconds: -3}}\n",
          "waitForPodsReady.requeuingStrategy.backoffBaseSeconds: must be greater than or equal "
          "to 0, got -3" },
        { HDR2 "waitForPodsReady: {requeuingStrategy: {backoffMaxSeconds: -3}}\n",
          "waitForPodsReady.requeuingStrategy.backoffMaxSeconds: must be greater than or equal "
          "to 0, got -3" },
        { HDR2 "waitForPodsReady: {requeuingStrategy: {backoffBaseSeconds: 120, "
               "backoffMaxSeconds: 60}}\n",
          "waitForPodsReady.requeuingStrategy.backoffMaxSeconds: must be greater than or equal "
          "to backoffBaseSeconds (120), got 60" },
        { HDR2 "waitForPodsReady: {requeuingStrategy: {backoffMaxSeconds: 30}}\n",
          "waitForPodsReady.requeuingStrategy.backoffMaxSeconds: must be greater than or equal "
          "to backoffBaseSeconds (60), got 30" },
        { HDR2 "namespace: Bad_NS\n",
          "namespace: must be a valid namespace name (RFC 1123 label), got \"Bad_NS\"" },
        { HDR2 "namespace: {name: x}\n", "namespace: must be a string" },
        { HDR2 "webhook: {port: 70000}\n",
          "webhook.port: must be between 1 and 65535, inclusive, got 70000" },
        { HDR2 "webhook: {port: nine}\n", "webhook.port: must be an integer" },
        { HDR2 "webhook: 9443\n", "webhook: must be an object" },
        { HDR2 "internalCertManagement: {enable: yes please}\n",
          "internalCertManagement.enable: must be a boolean" },
        { HDR2 "internalCertManagement: {webhookServiceName: Bad.Svc}\n",
          "internalCertManagement.webhookServiceName: must be a valid Service name (RFC 1123 "
          "label), got \"Bad.Svc\"" },
        { HDR2 "internalCertManagement: {webhookSecretName: bad_secret}\n",
          "internalCertManagement.webhookSecretName: must be a valid Secret name (RFC 1123 "
          "subdomain), got \"bad_secret\"" },
        { HDR2 "manageJobsWithoutQueueName: sometimes\n",
          "manageJobsWithoutQueueName: must be a boolean" },
        { HDR2 "managedJobsNamespaceSelector: [x]\n",
          "managedJobsNamespaceSelector: must be an object" },
        { HDR2 "managedJobsNamespaceSelector: {matchExpressions: [{key: team, operator: Gt, "
               "values: ['1']}]}\n",
          "managedJobsNamespaceSelector.matchExpressions[0].operator: Unsupported value: \"Gt\": "
          "supported values: \"In\", \"NotIn\", \"Exists\", \"DoesNotExist\"" },
        { HDR2 "managedJobsNamespaceSelector: {matchExpressions: [{key: team}]}\n",
          "managedJobsNamespaceSelector.matchExpressions[0].operator: Required value" },
        { HDR2 "managedJobsNamespaceSelector: {matchExpressions: [{key: team, operator: In}]}\n",
          "managedJobsNamespaceSelector.matchExpressions[0].values: Required value: must be "
          "specified when `operator` is 'In' or 'NotIn'" },
        { HDR2 "managedJobsNamespaceSelector: {matchExpressions: [{key: team, operator: Exists, "
               "values: [a]}]}\n",
          "managedJobsNamespaceSelector.matchExpressions[0].values: Forbidden: may not be "
          "specified when `operator` is 'Exists' or 'DoesNotExist'" },
        { HDR2 "managedJobsNamespaceSelector: {matchLabels: {kubernetes.io/metadata.name: "
               "kube-system}}\n",
          "managedJobsNamespaceSelector: Invalid value: should not match the \"kube-system\" "
          "namespace" },
        { HDR2 "namespace: cueue\nmanagedJobsNamespaceSelector: {matchExpressions: [{key: "
               "kubernetes.io/metadata.name, operator: NotIn, values: [kube-system]}]}\n",
          "managedJobsNamespaceSelector: Invalid value: should not match the \"cueue\" "
          "namespace" },
        { HDR2 "integrations: {frameworks: batch/job}\n",
          "integrations.frameworks: must be a list" },
        { HDR2 "integrations: {frameworks: [batch/job, {name: pod}]}\n",
          "integrations.frameworks[1]: must be a string" },
        { HDR2 "integrations: {frameworks: [batch/job, pod, batch/job]}\n",
          "integrations.frameworks[2]: Duplicate value: \"batch/job\"" },
        { HDR2 "integrations: {labelKeysToCopy: team}\n",
          "integrations.labelKeysToCopy: must be a list" },
        { HDR2 "integrations: [batch/job]\n", "integrations: must be an object" },
        { HDR2 "resources: {excludeResourcePrefixes: example.com/}\n",
          "resources.excludeResourcePrefixes: must be a list" },
        { HDR2 "resources: []\n", "resources: must be an object" },
        { HDR2 "resources: {transformations: {input: cpu}}\n",
          "resources.transformations: must be a list" },
        { HDR2 "resources: {transformations: [{input: cpu, strategy: Keep}]}\n",
          "resources.transformations[0].strategy: Unsupported value: \"Keep\": supported values: "
          "\"Retain\", \"Replace\"" },
        { HDR2 "resources: {transformations: [{input: cpu}, {input: cpu, strategy: Replace}]}\n",
          "resources.transformations[1].input: Duplicate value: \"cpu\"" },
        { HDR2 "resources: {transformations: [{outputs: {credits: 1}}]}\n",
          "resources.transformations[0].input: Required value" },
        { HDR2 "resources: {transformations: [{input: cpu, outputs: {credits: lots}}]}\n",
          "resources.transformations[0].outputs.credits: invalid quantity \"lots\"" },
        { HDR2 "resources: {transformations: [{input: cpu, outputs: {credits: '-2'}}]}\n",
          "resources.transformations[0].outputs.credits: must be greater than or equal to 0, got "
          "-2" },
        { HDR2 "resources: {transformations: [cpu]}\n",
          "resources.transformations[0]: must be an object" },
        { HDR2 "clientConnection: {qps: fast}\n",
          "clientConnection.qps: must be a number, got \"fast\"" },
        { HDR2 "clientConnection: {qps: '50'}\n",
          "clientConnection.qps: must be a number, got \"50\"" },
        { HDR2 "clientConnection: {qps: [1]}\n", "clientConnection.qps: must be a number" },
        { HDR2 "clientConnection: {burst: 1.5}\n", "clientConnection.burst: must be an integer" },
        { HDR2 "clientConnection: {qps: 10, burst: 0}\n",
          "clientConnection.burst: must be at least 1 when qps is positive, got 0" },
        { HDR2 "clientConnection: 300\n", "clientConnection: must be an object" },
        { HDR2 "leaderElection: {leaderElect: sure}\n",
          "leaderElection.leaderElect: must be a boolean" },
        { HDR2 "leaderElection: {leaseDuration: soon}\n",
          "leaderElection.leaseDuration: invalid duration \"soon\" (use Go duration syntax such "
          "as \"168h\", \"1h30m\" or \"300s\")" },
        { HDR2 "leaderElection: {leaseDuration: 10s}\n",
          "leaderElection.renewDeadline: must be less than leaseDuration (10s), got 10s" },
        { HDR2 "leaderElection: {leaseDuration: 1m30s, renewDeadline: 2m}\n",
          "leaderElection.renewDeadline: must be less than leaseDuration (1m30s), got 2m" },
        { HDR2 "leaderElection: {renewDeadline: 2s}\n",
          "leaderElection.retryPeriod: must be less than renewDeadline (2s) / 1.2, as client-go "
          "requires, got 2s" },
        { HDR2 "leaderElection: {retryPeriod: 9s}\n",
          "leaderElection.retryPeriod: must be less than renewDeadline (10s) / 1.2, as client-go "
          "requires, got 9s" },
        { HDR2 "leaderElection: {retryPeriod: 8500ms, renewDeadline: 10s}\n",
          "leaderElection.retryPeriod: must be less than renewDeadline (10s) / 1.2, as client-go "
          "requires, got 8.500s" },
        { HDR2 "leaderElection: {resourceLock: configmaps}\n",
          "leaderElection.resourceLock: Unsupported value: \"configmaps\": supported values: "
          "\"leases\"" },
        { HDR2 "leaderElection: {resourceNamespace: -locks}\n",
          "leaderElection.resourceNamespace: must be a valid namespace name (RFC 1123 label), "
          "got \"-locks\"" },
        { HDR2 "metrics: {bindAddress: '8443'}\n",
          "metrics.bindAddress: must be HOST:PORT such as \":8443\", or \"0\" to disable, got "
          "\"8443\"" },
        { HDR2 "metrics: {bindAddress: ':http'}\n",
          "metrics.bindAddress: must be HOST:PORT such as \":8443\", or \"0\" to disable, got "
          "\":http\"" },
        { HDR2 "health: {healthProbeBindAddress: ':99999'}\n",
          "health.healthProbeBindAddress: must be HOST:PORT such as \":8443\", or \"0\" to "
          "disable, got \":99999\"" },
        { HDR2 "health: {healthProbeBindAddress: '::1:8081'}\n",
          "health.healthProbeBindAddress: must be HOST:PORT such as \":8443\", or \"0\" to "
          "disable, got \"::1:8081\"" },
        { HDR2 "metrics: ':8443'\n", "metrics: must be an object" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        fx *f = reset(state);
        char want[1024];
        snprintf(want, sizeof want, "Configuration test.yaml: %s", cases[i].want);
        cu_err err = load(f, cases[i].yaml);
        if (err != CU_EINVAL || f->d.n != 1 || !has_msg(&f->d, want)) {
            dump_diag(&f->d);
            fail_msg("case %zu: got %s and %zu messages, want CU_EINVAL and\n  %s\nfor:\n%s", i,
                     cu_strerror(err), f->d.n, want, cases[i].yaml);
        }
        assert_int_equal(f->w.configs.n, 0);
    }
}

/* One bad field does not hide the others; the name is used when present. */
static void test_errors_all_reported(void **state)
{
    fx *f = *state;
    assert_int_equal(
        load(
            f, HDR2
            "metadata: {name: cfg}\n"
            "namespace: NS\n"
            "managedJobsNamespaceSelector: {}\n"
            "waitForPodsReady:\n"
            "  timeout: abc\n"
            "  recoveryTimeout: -1s\n"
            "  requeuingStrategy: {timestamp: Later, backoffLimitCount: -2, backoffBaseSeconds: 10,"
            " backoffMaxSeconds: 5}\n"
            "integrations: {frameworks: [pod, pod], labelKeysToCopy: x}\n"
            "resources: {excludeResourcePrefixes: 3}\n"
            "clientConnection: {qps: 5, burst: -1}\n"
            "leaderElection: {leaseDuration: 5s, renewDeadline: 6s}\n"
            "metrics: {bindAddress: nowhere}\n"
            "health: {healthProbeBindAddress: 'x:'}\n"
            "fairSharing: {preemptionStrategies: [Fair]}\n"),
        CU_EINVAL);
    static const char *const want[] = {
        "namespace: must be a valid namespace name (RFC 1123 label), got \"NS\"",
        "managedJobsNamespaceSelector: Invalid value: should not match the \"kube-system\" "
        "namespace",
        "managedJobsNamespaceSelector: Invalid value: should not match the \"kueue-system\" "
        "namespace",
        "waitForPodsReady.timeout: invalid duration \"abc\" (use Go duration syntax such as "
        "\"168h\", \"1h30m\" or \"300s\")",
        "waitForPodsReady.recoveryTimeout: must not be negative, got \"-1s\"",
        "waitForPodsReady.requeuingStrategy.timestamp: Unsupported value: \"Later\": supported "
        "values: \"Eviction\", \"Creation\"",
        "waitForPodsReady.requeuingStrategy.backoffLimitCount: must be greater than or equal to "
        "0 (leave it out to requeue forever), got -2",
        "waitForPodsReady.requeuingStrategy.backoffMaxSeconds: must be greater than or equal to "
        "backoffBaseSeconds (10), got 5",
        "integrations.frameworks[1]: Duplicate value: \"pod\"",
        "integrations.labelKeysToCopy: must be a list",
        "resources.excludeResourcePrefixes: must be a list",
        "clientConnection.burst: must be at least 1 when qps is positive, got -1",
        "leaderElection.renewDeadline: must be less than leaseDuration (5s), got 6s",
        "metrics.bindAddress: must be HOST:PORT such as \":8443\", or \"0\" to disable, got "
        "\"nowhere\"",
        "health.healthProbeBindAddress: must be HOST:PORT such as \":8443\", or \"0\" to "
        "disable, got \"x:\"",
        "fairSharing.preemptionStrategies[0]: Unsupported value: \"Fair\": supported values: "
        "\"LessThanOrEqualToFinalShare\", \"LessThanInitialShare\"",
    };
    size_t nwant = sizeof(want) / sizeof(want[0]);
    for (size_t i = 0; i < nwant; i++) {
        char m[1024];
        snprintf(m, sizeof m, "Configuration cfg (test.yaml): %s", want[i]);
        if (!has_msg(&f->d, m)) {
            dump_diag(&f->d);
            fail_msg("missing: %s", m);
        }
    }
    if (f->d.n != nwant)
        dump_diag(&f->d);
    assert_int_equal(f->d.n, nwant);
    assert_int_equal(f->d.nerrors, nwant);
    assert_int_equal(f->w.configs.n, 0);
}

/* Fields Kueue does not have are warned about ("unknown field"), and so are
 * Kueue's fields that Cueue does not act on, when set ("not implemented by
 * Cueue"); null, "", {} and [] are not settings. Warnings do not fail the
 * decode. */
static void test_unknown_fields(void **state)
{
    fx *f = *state;
    assert_int_equal(
        load(f, HDR2 "waitForPodReady: {timeout: 5m}\n"
                     "webhook: {port: 9443, certdir: /x}\n"
                     "internalCertManagement: {enable: false, secretName: s}\n"
                     "featureGates: {TopologyAwareScheduling: true}\n"
                     "pprofBindAddress: ''\n"
                     "waitForPodsReady: {timeOut: 5m, requeuingStrategy: {backoffLimit: 3}}\n"
                     "integrations: {framework: [pod], externalFrameworks: [Foo.v1.example.com]}\n"
                     "clientConnection: {qps: 5, bust: 10}\n"
                     "leaderElection: {leaseDurationSeconds: 15}\n"
                     "metrics: {bindAdress: ':1', enableClusterQueueResources: true}\n"
                     "health: {readinessEndpointName: readyz, port: 1}\n"
                     "resources: {excludePrefixes: [x], transformations: [], "
                     "deviceClassMappings: [{name: gpu}], quotaCheckStrategy: null}\n"
                     "fairSharing: {enable: true}\n"
                     "admissionFairSharing: {usageHalfLife: 1h}\n"
                     "objectRetentionPolicies: {}\n"
                     "multiKueue: {gcInterval: 1m}\n"),
        CU_OK);
    static const char *const want[] = {
        "waitForPodReady",
        "waitForPodsReady.timeOut",
        "waitForPodsReady.requeuingStrategy.backoffLimit",
        "integrations.framework",
        "clientConnection.bust",
        "leaderElection.leaseDurationSeconds",
        "metrics.bindAdress",
        "health.port",
        "resources.excludePrefixes",
        "fairSharing.enable", /* v1beta1 only */
        "admissionFairSharing.usageHalfLife",
        "webhook.certdir",
        "internalCertManagement.secretName",
    };
    static const char *const ignored[] = {
        "featureGates: not implemented by Cueue, ignored",
        "multiKueue: not implemented by Cueue, ignored",
        "integrations.externalFrameworks: not implemented by Cueue, ignored: only batch/job is "
        "integrated",
        "metrics.enableClusterQueueResources: not implemented by Cueue, ignored: the "
        "ClusterQueue resource metrics are always exported",
        "health.readinessEndpointName: not implemented by Cueue, ignored: the paths are /readyz "
        "and /healthz",
        "resources.deviceClassMappings: not implemented by Cueue, ignored: Cueue counts no DRA "
        "devices",
    };
    size_t nwant = sizeof(want) / sizeof(want[0]);
    for (size_t i = 0; i < nwant; i++) {
        char m[512];
        snprintf(m, sizeof m, "warning: Configuration test.yaml: %s: unknown field, ignored",
                 want[i]);
        if (!has_msg(&f->d, m)) {
            dump_diag(&f->d);
            fail_msg("missing: %s", m);
        }
    }
    size_t nign = sizeof(ignored) / sizeof(ignored[0]);
    for (size_t i = 0; i < nign; i++) {
        char m[512];
        snprintf(m, sizeof m, "warning: Configuration test.yaml: %s", ignored[i]);
        if (!has_msg(&f->d, m)) {
            dump_diag(&f->d);
            fail_msg("missing: %s", m);
        }
    }
    if (f->d.n != nwant + nign)
        dump_diag(&f->d);
    assert_int_equal(f->d.n, nwant + nign);
    assert_int_equal(f->d.nerrors, 0);
    assert_int_equal(f->w.configs.n, 1);
    assert_true(f->w.configs.items[0]->pods_ready.enabled);
    assert_int_equal(f->w.configs.items[0]->pods_ready.timeout_ms, MIN(30));
}

/* cu_labelsel_matches: the default managedJobsNamespaceSelector and the
 * selector forms a file may use. */
static void test_selector_matching(void **state)
{
    static const struct {
        const char *selector; /* YAML for managedJobsNamespaceSelector, NULL = default */
        const char *labels;   /* "k=v,..." */
        int want;
    } cases[] = {
        { NULL, "kubernetes.io/metadata.name=default", 1 },
        { NULL, "kubernetes.io/metadata.name=kube-system", 0 },
        { NULL, "kubernetes.io/metadata.name=kueue-system", 0 },
        { NULL, "", 1 }, /* NotIn holds when the key is absent */
        { "{matchLabels: {team: ml}}", "team=ml,kubernetes.io/metadata.name=a", 1 },
        { "{matchLabels: {team: ml}}", "team=web", 0 },
        { "{matchLabels: {team: ml}}", "", 0 },
        { "{matchLabels: {team: ml, env: dev}}", "env=dev,team=ml", 1 },
        { "{matchLabels: {team: ml, env: dev}}", "team=ml", 0 },
        { "{matchExpressions: [{key: env, operator: In, values: [dev, test]}]}", "env=test", 1 },
        { "{matchExpressions: [{key: env, operator: In, values: [dev, test]}]}", "env=prod", 0 },
        { "{matchExpressions: [{key: env, operator: In, values: [dev, test]}]}", "", 0 },
        { "{matchExpressions: [{key: env, operator: NotIn, values: [prod]}]}", "env=dev", 1 },
        { "{matchExpressions: [{key: env, operator: NotIn, values: [prod]}]}", "env=prod", 0 },
        { "{matchExpressions: [{key: team, operator: Exists}]}", "team=", 1 },
        { "{matchExpressions: [{key: team, operator: Exists}]}", "other=x", 0 },
        { "{matchExpressions: [{key: frozen, operator: DoesNotExist}]}", "team=x", 1 },
        { "{matchExpressions: [{key: frozen, operator: DoesNotExist}]}", "frozen=yes", 0 },
        { "{matchLabels: {team: ml}, matchExpressions: [{key: frozen, operator: DoesNotExist}]}",
          "team=ml,frozen=no", 0 },
        { "{matchLabels: {team: ml}, matchExpressions: [{key: frozen, operator: DoesNotExist}]}",
          "team=ml", 1 },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        fx *f = reset(state);
        const cu_labelsel *sel;
        if (!cases[i].selector) {
            sel = &load_ok(f, HDR2)->managed_ns_selector;
        } else {
            /* most of these select kube-system, which a Configuration
             * refuses; the ClusterQueue's namespaceSelector is the same
             * type and decoder */
            char yaml[512];
            snprintf(yaml, sizeof yaml,
                     "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\n"
                     "metadata: {name: cq}\nspec: {namespaceSelector: %s}\n",
                     cases[i].selector);
            if (load(f, yaml) != CU_OK || f->w.cqs.n != 1) {
                dump_diag(&f->d);
                fail_msg("case %zu: selector did not decode", i);
            }
            sel = &f->w.cqs.items[0]->ns_selector;
        }
        labels l;
        int got = cu_labelsel_matches(sel, mklabels(&l, cases[i].labels));
        if (got != cases[i].want)
            fail_msg("case %zu: selector %s, labels {%s}: got %d", i,
                     cases[i].selector ? cases[i].selector : "(default)", cases[i].labels, got);
    }
}

static void test_manages_unlabelled(void **state)
{
    fx *f = *state;
    labels l;
    const cu_config *x = load_ok(f, HDR2);
    assert_false(cu_config_manages_unlabelled(x, mklabels(&l, "kubernetes.io/metadata.name=a")));
    assert_false(cu_config_manages_unlabelled(NULL, mklabels(&l, "kubernetes.io/metadata.name=a")));
    f = reset(state);
    x = load_ok(f, HDR2 "manageJobsWithoutQueueName: true\n");
    assert_true(cu_config_manages_unlabelled(x, mklabels(&l, "kubernetes.io/metadata.name=a")));
    assert_false(
        cu_config_manages_unlabelled(x, mklabels(&l, "kubernetes.io/metadata.name=kube-system")));
    assert_false(
        cu_config_manages_unlabelled(x, mklabels(&l, "kubernetes.io/metadata.name=kueue-system")));
    f = reset(state);
    x = load_ok(f, HDR2 "manageJobsWithoutQueueName: true\n"
                        "managedJobsNamespaceSelector: {matchLabels: {kueue: managed}}\n");
    assert_true(cu_config_manages_unlabelled(
        x, mklabels(&l, "kubernetes.io/metadata.name=a,kueue=managed")));
    assert_false(cu_config_manages_unlabelled(x, mklabels(&l, "kubernetes.io/metadata.name=a")));

    /* no Configuration: only batch/job */
    assert_true(cu_config_framework_enabled(NULL, "batch/job"));
    assert_false(cu_config_framework_enabled(NULL, "pod"));
}

/* The sample file decodes without errors or warnings and says what the
 * defaults are (tests run in the source root). */
static void test_sample_file(void **state)
{
    fx *f = *state;
    const char *path = "config/controller/config.yaml";
    cu_err err = cu_world_load(&f->w, &path, 1, &f->d);
    if (err != CU_OK || f->d.n != 0)
        dump_diag(&f->d);
    assert_int_equal(err, CU_OK);
    assert_int_equal(f->d.n, 0);
    assert_int_equal(f->w.configs.n, 1);
    const cu_config *x = f->w.configs.items[0];

    cu_config d;
    cu_arena a;
    cu_arena_init(&a, 0);
    assert_int_equal(cu_config_init_defaults(&d, &a), CU_OK);
    assert_string_equal(x->ns, d.ns);
    assert_int_equal(x->manage_jobs_without_queue_name, d.manage_jobs_without_queue_name);
    labels l;
    static const char *const nss[] = { "default", "kube-system", "kueue-system", "team-a" };
    for (size_t i = 0; i < sizeof(nss) / sizeof(nss[0]); i++) {
        char spec[64];
        snprintf(spec, sizeof spec, "kubernetes.io/metadata.name=%s", nss[i]);
        assert_int_equal(cu_labelsel_matches(&x->managed_ns_selector, mklabels(&l, spec)),
                         cu_labelsel_matches(&d.managed_ns_selector, mklabels(&l, spec)));
    }
    assert_true(x->pods_ready.enabled); /* the sample shows the block */
    assert_int_equal(x->pods_ready.timeout_ms, d.pods_ready.timeout_ms);
    assert_int_equal(x->pods_ready.recovery_timeout_ms, d.pods_ready.recovery_timeout_ms);
    assert_int_equal(x->pods_ready.block_admission, d.pods_ready.block_admission);
    assert_int_equal(x->pods_ready.requeue_timestamp, d.pods_ready.requeue_timestamp);
    assert_int_equal(x->pods_ready.backoff_limit_count, d.pods_ready.backoff_limit_count);
    assert_int_equal(x->pods_ready.backoff_base_s, d.pods_ready.backoff_base_s);
    assert_int_equal(x->pods_ready.backoff_max_s, d.pods_ready.backoff_max_s);
    assert_int_equal(x->frameworks.n, 1);
    assert_string_equal(x->frameworks.items[0], "batch/job");
    assert_true(x->client.qps == d.client.qps);
    assert_int_equal(x->client.burst, d.client.burst);
    assert_int_equal(x->leader_election.leader_elect, d.leader_election.leader_elect);
    assert_string_equal(x->leader_election.resource_name, d.leader_election.resource_name);
    assert_string_equal(x->leader_election.resource_namespace,
                        d.leader_election.resource_namespace);
    assert_int_equal(x->leader_election.lease_duration_ms, d.leader_election.lease_duration_ms);
    assert_int_equal(x->leader_election.renew_deadline_ms, d.leader_election.renew_deadline_ms);
    assert_int_equal(x->leader_election.retry_period_ms, d.leader_election.retry_period_ms);
    assert_string_equal(x->metrics_bind_address, d.metrics_bind_address);
    assert_string_equal(x->health_bind_address, d.health_bind_address);
    assert_false(x->fair_sharing);
    assert_false(x->afs);
    cu_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_defaults_v1beta2, setup, teardown),
        cmocka_unit_test_setup_teardown(test_defaults_v1beta1, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pods_ready_defaults, setup, teardown),
        cmocka_unit_test_setup_teardown(test_every_field, setup, teardown),
        cmocka_unit_test_setup_teardown(test_edge_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors_all_reported, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_fields, setup, teardown),
        cmocka_unit_test_setup_teardown(test_selector_matching, setup, teardown),
        cmocka_unit_test_setup_teardown(test_manages_unlabelled, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sample_file, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
