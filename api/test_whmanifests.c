/*
 * test_whmanifests.c - what a user installs agrees with what the controller
 * serves: the webhook configurations of dist/install.yaml (generated from
 * config/webhook/) against the table of hooks (cu_wh_hooks), read with the
 * project's own YAML reader; and the Configuration shipped in the
 * ConfigMap (config/manager/00-config.yaml) decodes without an error.
 *
 * Checked for every webhook: the configuration it is in (mutating or
 * validating, by Cueue's names), its path on cueue-webhook-service in
 * cueue-system, its rule (group, version, resource, operations),
 * failurePolicy Fail, sideEffects None, admissionReviewVersions [v1],
 * timeoutSeconds 10, and for namespaced resources a namespaceSelector that
 * leaves out kube-system and cueue-system. The manifests must hold exactly
 * Kueue's fifteen webhooks (Kueue's config/components/webhook for the kinds
 * Cueue serves) and Cueue's Topology validator; every hook of the table must be in them, and every webhook
 * of them in the table. Tests run in the source root.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cu_doc.h"
#include "cu_objects.h"
#include "cu_webhook.h"

#define INSTALL "dist/install.yaml"
#define MUT "cueue-mutating-webhook-configuration"
#define VAL "cueue-validating-webhook-configuration"

/* Kueue's webhooks for the kinds Cueue serves: name and path. */
static const char *const kueue_hooks[][2] = {
    { "mclusterqueue.kb.io", "/mutate-kueue-x-k8s-io-v1beta2-clusterqueue" },
    { "mjob.kb.io", "/mutate-batch-v1-job" },
    { "mjobset.kb.io", "/mutate-jobset-x-k8s-io-v1alpha2-jobset" },
    { "mleaderworkerset.kb.io", "/mutate-leaderworkerset-x-k8s-io-v1-leaderworkerset" },
    { "mpod.kb.io", "/mutate--v1-pod" },
    { "mresourceflavor.kb.io", "/mutate-kueue-x-k8s-io-v1beta2-resourceflavor" },
    { "mworkload.kb.io", "/mutate-kueue-x-k8s-io-v1beta2-workload" },
    { "vclusterqueue.kb.io", "/validate-kueue-x-k8s-io-v1beta2-clusterqueue" },
    { "vcohort.kb.io", "/validate-kueue-x-k8s-io-v1beta2-cohort" },
    { "vjob.kb.io", "/validate-batch-v1-job" },
    { "vjobset.kb.io", "/validate-jobset-x-k8s-io-v1alpha2-jobset" },
    { "vleaderworkerset.kb.io", "/validate-leaderworkerset-x-k8s-io-v1-leaderworkerset" },
    { "vpod.kb.io", "/validate--v1-pod" },
    { "vresourceflavor.kb.io", "/validate-kueue-x-k8s-io-v1beta2-resourceflavor" },
    { "vworkload.kb.io", "/validate-kueue-x-k8s-io-v1beta2-workload" },
    /* Cueue's own: the Topology's CRD rules for API servers without CEL */
    { "vtopology.kb.io", "/validate-kueue-x-k8s-io-v1beta2-topology" },
};
#define NKUEUE (sizeof(kueue_hooks) / sizeof(kueue_hooks[0]))

typedef struct fx {
    cu_arena a;
    cu_diag d;
    cu_doc *docs;
    size_t ndocs;
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof(*f));
    if (!f)
        return -1;
    cu_arena_init(&f->a, 0);
    cu_diag_init(&f->d);
    cu_err err = cu_doc_parse_file(INSTALL, &f->a, &f->docs, &f->ndocs, &f->d);
    for (size_t i = 0; i < f->d.n; i++)
        fprintf(stderr, "%s\n", f->d.msgs[i]);
    if (err != CU_OK)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    cu_diag_free(&f->d);
    cu_arena_free(&f->a);
    free(f);
    return 0;
}

/* The object of kind and name in dist/install.yaml, or NULL. */
static const cu_node *find_obj(const fx *f, const char *kind, const char *name)
{
    for (size_t i = 0; i < f->ndocs; i++) {
        const cu_node *r = f->docs[i].root;
        const char *k = cu_node_scalar(cu_node_get(r, "kind"));
        const char *n = cu_node_scalar(cu_node_path(r, "metadata.name"));
        if (k && n && strcmp(k, kind) == 0 && strcmp(n, name) == 0)
            return r;
    }
    return NULL;
}

/* The webhook entry named name in either configuration; *mutating says which. */
static const cu_node *find_hook(const fx *f, const char *name, int *mutating)
{
    static const char *const kinds[2][2] = { { "MutatingWebhookConfiguration", MUT },
                                             { "ValidatingWebhookConfiguration", VAL } };
    const cu_node *found = NULL;
    for (int k = 0; k < 2; k++) {
        const cu_node *whs = cu_node_get(find_obj(f, kinds[k][0], kinds[k][1]), "webhooks");
        for (size_t i = 0; whs && i < whs->n; i++) {
            const char *n = cu_node_scalar(cu_node_get(whs->vals[i], "name"));
            if (n && strcmp(n, name) == 0) {
                assert_null(found); /* a name appears once */
                found = whs->vals[i];
                *mutating = k == 0;
            }
        }
    }
    return found;
}

/* The single scalar of a one-item sequence. */
static const char *only(const cu_node *seq, const char *what)
{
    if (!seq || seq->type != CU_NODE_SEQ || seq->n != 1) {
        fail_msg("%s: expected a list of one item", what);
        return NULL;
    }
    const char *s = cu_node_scalar(seq->vals[0]);
    if (!s)
        return ""; /* "" (the core group) reads as a null scalar */
    return s;
}

static const char *str(const cu_node *n, const char *path)
{
    const char *s = cu_node_scalar(cu_node_path(n, path));
    return s ? s : "(none)";
}

static void test_configurations_present(void **state)
{
    fx *f = *state;
    assert_non_null(find_obj(f, "MutatingWebhookConfiguration", MUT));
    assert_non_null(find_obj(f, "ValidatingWebhookConfiguration", VAL));
    assert_non_null(find_obj(f, "Service", "cueue-webhook-service"));
    /* the manifests hold exactly Kueue's fifteen webhooks and vtopology */
    size_t total = 0;
    const cu_node *m = cu_node_get(find_obj(f, "MutatingWebhookConfiguration", MUT), "webhooks");
    const cu_node *v = cu_node_get(find_obj(f, "ValidatingWebhookConfiguration", VAL), "webhooks");
    total = (m ? m->n : 0) + (v ? v->n : 0);
    assert_int_equal(total, NKUEUE);
    for (size_t i = 0; i < NKUEUE; i++) {
        int mut = -1;
        const cu_node *h = find_hook(f, kueue_hooks[i][0], &mut);
        if (!h)
            fail_msg("%s: not in %s", kueue_hooks[i][0], INSTALL);
        assert_int_equal(mut, kueue_hooks[i][0][0] == 'm');
        assert_string_equal(str(h, "clientConfig.service.path"), kueue_hooks[i][1]);
    }
}

/* Every webhook of the manifests, checked against its hook of the table. */
static void check_hook(const cu_node *h, const cu_wh_hook *t, int mutating)
{
    const char *name = t->name;
    if (mutating != t->mutating)
        fail_msg("%s: in the %s configuration, but the table says %s", name,
                 mutating ? "mutating" : "validating", t->mutating ? "mutating" : "validating");
    assert_string_equal(str(h, "clientConfig.service.path"), t->path);
    assert_string_equal(str(h, "clientConfig.service.name"), "cueue-webhook-service");
    assert_string_equal(str(h, "clientConfig.service.namespace"), "cueue-system");
    assert_string_equal(str(h, "failurePolicy"), "Fail");
    assert_string_equal(str(h, "sideEffects"), "None");
    assert_string_equal(str(h, "timeoutSeconds"), "10");
    assert_string_equal(only(cu_node_get(h, "admissionReviewVersions"), name), "v1");
    const cu_node *rules = cu_node_get(h, "rules");
    assert_non_null(rules);
    assert_int_equal(rules->n, 1);
    const cu_node *r = rules->vals[0];
    assert_string_equal(only(cu_node_get(r, "apiGroups"), name), t->group);
    assert_string_equal(only(cu_node_get(r, "apiVersions"), name), t->version);
    const cu_node *res = cu_node_get(r, "resources");
    assert_non_null(res);
    assert_string_equal(cu_node_scalar(res->vals[0]), t->resource);
    unsigned ops = 0;
    const cu_node *o = cu_node_get(r, "operations");
    static const char *const opn[] = { "CREATE", "UPDATE", "DELETE", "CONNECT" };
    for (size_t i = 0; o && i < o->n; i++)
        for (unsigned k = 0; k < 4; k++)
            if (strcmp(cu_node_scalar(o->vals[i]), opn[k]) == 0)
                ops |= 1u << k;
    if (ops != t->ops)
        fail_msg("%s: operations 0x%x in the manifest, 0x%x in the table", name, ops, t->ops);
    /* namespaced resources skip kube-system and the controller's namespace */
    int namespaced =
        strcmp(t->resource, "clusterqueues") != 0 && strcmp(t->resource, "cohorts") != 0 &&
        strcmp(t->resource, "resourceflavors") != 0 && strcmp(t->resource, "topologies") != 0;
    const cu_node *me = cu_node_path(h, "namespaceSelector.matchExpressions");
    if (!namespaced) {
        assert_null(me);
        return;
    }
    assert_non_null(me);
    assert_int_equal(me->n, 1);
    assert_string_equal(str(me->vals[0], "key"), "kubernetes.io/metadata.name");
    assert_string_equal(str(me->vals[0], "operator"), "NotIn");
    const cu_node *vals = cu_node_get(me->vals[0], "values");
    int ks = 0, cs = 0;
    for (size_t i = 0; vals && i < vals->n; i++) {
        ks |= strcmp(cu_node_scalar(vals->vals[i]), "kube-system") == 0;
        cs |= strcmp(cu_node_scalar(vals->vals[i]), "cueue-system") == 0;
    }
    if (!ks || !cs)
        fail_msg("%s: the namespaceSelector must leave out kube-system and cueue-system", name);
}

static void test_table_in_manifests(void **state)
{
    fx *f = *state;
    size_t n;
    const cu_wh_hook *t = cu_wh_hooks(&n);
    assert_true(n > 0);
    for (size_t i = 0; i < n; i++) {
        int mut = -1;
        const cu_node *h = find_hook(f, t[i].name, &mut);
        if (!h)
            fail_msg("hook %s (%s) of cu_wh_hooks() is not in %s", t[i].name, t[i].path, INSTALL);
        check_hook(h, &t[i], mut);
        assert_ptr_equal(cu_wh_hook_by_path(t[i].path), &t[i]);
    }
}

/* The manifests hold Kueue's fifteen and vtopology (test_configurations_present), so
 * each of those must be in the table. */
static void test_manifests_in_table(void **state)
{
    (void)state;
    size_t n;
    const cu_wh_hook *t = cu_wh_hooks(&n);
    for (size_t i = 0; i < NKUEUE; i++) {
        size_t k = 0;
        while (k < n && strcmp(t[k].name, kueue_hooks[i][0]) != 0)
            k++;
        if (k == n)
            fail_msg("webhook %s of %s is not in cu_wh_hooks()", kueue_hooks[i][0], INSTALL);
    }
}

/* The ConfigMap's Configuration loads with Cueue's decoder, no error. */
static void test_shipped_configuration(void **state)
{
    fx *f = *state;
    const cu_node *cm = find_obj(f, "ConfigMap", "cueue-manager-config");
    assert_non_null(cm);
    assert_string_equal(str(cm, "metadata.namespace"), "cueue-system");
    const char *text =
        cu_node_scalar(cu_node_get(cu_node_get(cm, "data"), "controller_manager_config.yaml"));
    assert_non_null(text);
    char path[] = "/tmp/cueue-test-config-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    size_t len = strlen(text);
    assert_int_equal(write(fd, text, len), (ssize_t)len);
    close(fd);
    cu_world w;
    cu_diag d;
    cu_world_init(&w);
    cu_diag_init(&d);
    const char *p = path;
    cu_err err = cu_world_load(&w, &p, 1, &d);
    unlink(path);
    /* `cueue controller` refuses a Configuration with any message, even a
     * warning. Until the webhook server is merged, the decoder warns that
     * the fields webhook and internalCertManagement are unused ("Cueue
     * serves no webhooks"); nothing else may be said about the file. */
    size_t other = 0;
    for (size_t i = 0; i < d.n; i++) {
        fprintf(stderr, "%s\n", d.msgs[i]);
        other += strstr(d.msgs[i], "Cueue serves no webhooks") == NULL;
    }
    assert_int_equal(err, CU_OK);
    assert_int_equal(d.nerrors, 0);
    assert_int_equal(other, 0);
    assert_int_equal(w.configs.n, 1);
    const cu_config *x = w.configs.items[0];
    assert_string_equal(x->ns, "cueue-system");
    assert_int_equal(x->leader_election.leader_elect, 1);
    assert_string_equal(x->metrics_bind_address, ":8443");
    assert_string_equal(x->health_bind_address, ":8081");
    cu_diag_free(&d);
    cu_world_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_configurations_present),
        cmocka_unit_test(test_table_in_manifests),
        cmocka_unit_test(test_manifests_in_table),
        cmocka_unit_test(test_shipped_configuration),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
