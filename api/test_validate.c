/*
 * test_validate.c - cu_world_validate: worlds built directly in C (no
 * decoder), checked against the exact messages Kueue's rules call for.
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

#define SUB \
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric " \
    "characters, '-' or '.', and must start and end with an alphanumeric character"
#define LABEL \
    "a lowercase RFC 1123 label must consist of lower case alphanumeric " \
    "characters or '-', and must start and end with an alphanumeric character"
#define QN \
    "must consist of alphanumeric characters, '-', '_' or '.', and must start " \
    "and end with an alphanumeric character"
#define LV \
    "a valid label must be an empty string or consist of alphanumeric " \
    "characters, '-', '_' or '.', and must start and end with an alphanumeric character"
#define EFFECTS "supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\""

/* ---------------- builders ---------------- */

static void t_world(cu_world *w)
{
    memset(w, 0, sizeof(*w));
    cu_arena_init(&w->arena, 0);
}

static void *t_alloc(cu_world *w, size_t n)
{
    void *p = cu_arena_alloc(&w->arena, n);
    assert_non_null(p);
    return p;
}

static const char *S(cu_world *w, const char *s)
{
    return s ? cu_arena_strdup(&w->arena, s) : NULL;
}

/* Appends obj to a world vector; storage comes from the arena. */
#define T_PUSH(w, vec, obj) \
    do { \
        if ((vec).n == (vec).cap) { \
            size_t nc_ = (vec).cap ? (vec).cap * 2 : 8; \
            void *ni_ = t_alloc((w), nc_ * sizeof(*(vec).items)); \
            if ((vec).n) \
                memcpy(ni_, (vec).items, (vec).n * sizeof(*(vec).items)); \
            (vec).items = ni_; \
            (vec).cap = nc_; \
        } \
        (vec).items[(vec).n++] = (obj); \
    } while (0)

static void t_meta(cu_world *w, cu_meta *m, const char *ns, const char *name)
{
    m->name = S(w, name);
    m->ns = S(w, ns);
    m->seq = w->nseq++;
    m->file = "t.yaml";
    m->line = (int)m->seq + 1;
}

/* "k=v,k2=v2" -> kvs (values may be empty). */
static void t_kvs(cu_world *w, cu_kvs *kvs, const char *spec)
{
    kvs->n = 0;
    kvs->items = t_alloc(w, 32 * sizeof(cu_kv));
    char *dup = (char *)S(w, spec);
    for (char *tok = strtok(dup, ","); tok; tok = strtok(NULL, ",")) {
        char *eq = strchr(tok, '=');
        assert_non_null(eq);
        *eq = '\0';
        assert_true(kvs->n < 32);
        kvs->items[kvs->n].key = tok;
        kvs->items[kvs->n].value = eq + 1;
        kvs->n++;
    }
}

static cu_resource_flavor *t_rf(cu_world *w, const char *name)
{
    cu_resource_flavor *rf = t_alloc(w, sizeof(*rf));
    t_meta(w, &rf->meta, NULL, name);
    rf->taints = t_alloc(w, 16 * sizeof(cu_taint));
    rf->tols = t_alloc(w, 16 * sizeof(cu_toleration));
    T_PUSH(w, w->flavors, rf);
    return rf;
}

static void t_taint(cu_world *w, cu_resource_flavor *rf, const char *k, const char *v,
                    const char *e)
{
    assert_true(rf->ntaints < 16);
    rf->taints[rf->ntaints++] = (cu_taint){ S(w, k), S(w, v), S(w, e) };
}

static void t_tol(cu_world *w, cu_resource_flavor *rf, const char *k, cu_tolop op, const char *v,
                  const char *e)
{
    assert_true(rf->ntols < 16);
    rf->tols[rf->ntols++] = (cu_toleration){ S(w, k), op, S(w, v), S(w, e) };
}

static cu_cluster_queue *t_cq(cu_world *w, const char *name, const char *cohort)
{
    cu_cluster_queue *cq = t_alloc(w, sizeof(*cq));
    t_meta(w, &cq->meta, NULL, name);
    cq->cohort = S(w, cohort);
    cq->fungibility.when_can_borrow = CU_FUNG_MAY_STOP_SEARCH;
    cq->fungibility.when_can_preempt = CU_FUNG_TRY_NEXT_FLAVOR;
    cq->fs_weight = 1000;
    T_PUSH(w, w->cqs, cq);
    return cq;
}

static cu_cohort *t_cohort(cu_world *w, const char *name, const char *parent)
{
    cu_cohort *co = t_alloc(w, sizeof(*co));
    t_meta(w, &co->meta, NULL, name);
    co->parent = S(w, parent);
    co->fs_weight = 1000;
    T_PUSH(w, w->cohorts, co);
    return co;
}

/* Adds a resource group covering space-separated resource names. */
static cu_rgroup *t_group(cu_world *w, cu_rgroups *gs, const char *covered)
{
    if (!gs->items)
        gs->items = t_alloc(w, 32 * sizeof(cu_rgroup));
    assert_true(gs->n < 32);
    cu_rgroup *rg = &gs->items[gs->n++];
    rg->covered.items = t_alloc(w, 16 * sizeof(char *));
    rg->flavors = t_alloc(w, 128 * sizeof(cu_fquota));
    char *dup = (char *)S(w, covered);
    for (char *tok = strtok(dup, " "); tok; tok = strtok(NULL, " "))
        rg->covered.items[rg->covered.n++] = tok;
    return rg;
}

/* Adds flavor `name` with quotas "res=NOMINAL[/bLIMIT][/lLIMIT] ..."
 * (all values in milli-units). */
static void t_fq(cu_world *w, cu_rgroup *rg, const char *name, const char *quotas)
{
    assert_true(rg->nflavors < 128);
    cu_fquota *fq = &rg->flavors[rg->nflavors++];
    fq->name = S(w, name);
    fq->res = t_alloc(w, 16 * sizeof(cu_rquota));
    char *dup = (char *)S(w, quotas), *save = NULL;
    for (char *tok = strtok_r(dup, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        cu_rquota *r = &fq->res[fq->n++];
        char *eq = strchr(tok, '=');
        assert_non_null(eq);
        *eq = '\0';
        r->name = tok;
        char *p = eq + 1;
        r->nominal = strtoll(p, &p, 10);
        while (*p == '/') {
            char which = p[1];
            int64_t val = strtoll(p + 2, &p, 10);
            if (which == 'b') {
                r->has_blimit = 1;
                r->blimit = val;
            } else {
                assert_int_equal(which, 'l');
                r->has_llimit = 1;
                r->llimit = val;
            }
        }
        assert_int_equal(*p, '\0');
    }
}

static cu_local_queue *t_lq(cu_world *w, const char *ns, const char *name, const char *cq)
{
    cu_local_queue *lq = t_alloc(w, sizeof(*lq));
    t_meta(w, &lq->meta, ns, name);
    lq->cluster_queue = S(w, cq);
    lq->fs_weight = 1000;
    T_PUSH(w, w->lqs, lq);
    return lq;
}

static cu_workload *t_wl(cu_world *w, const char *ns, const char *name, const char *queue)
{
    cu_workload *wl = t_alloc(w, sizeof(*wl));
    t_meta(w, &wl->meta, ns, name);
    wl->queue_name = S(w, queue);
    wl->active = 1;
    wl->podsets = t_alloc(w, 32 * sizeof(cu_podset));
    wl->psa = t_alloc(w, 32 * sizeof(cu_psa));
    T_PUSH(w, w->workloads, wl);
    return wl;
}

static cu_podset *t_ps(cu_world *w, cu_workload *wl, const char *name, int32_t count)
{
    assert_true(wl->npodsets < 32);
    cu_podset *ps = &wl->podsets[wl->npodsets++];
    ps->name = S(w, name);
    ps->count = count;
    return ps;
}

/* Adds a pod set assignment; usage "res=milli ..." sorted by name. */
static cu_psa *t_psa(cu_world *w, cu_workload *wl, const char *name, int32_t count,
                     const char *usage)
{
    assert_true(wl->npsa < 32);
    wl->has_admission = 1;
    cu_psa *a = &wl->psa[wl->npsa++];
    a->name = S(w, name);
    a->count = count;
    a->usage.items = t_alloc(w, 8 * sizeof(cu_res));
    char *dup = (char *)S(w, usage), *save = NULL;
    for (char *tok = strtok_r(dup, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(tok, '=');
        assert_non_null(eq);
        *eq = '\0';
        a->usage.items[a->usage.n++] = (cu_res){ tok, strtoll(eq + 1, NULL, 10) };
    }
    return a;
}

static cu_wpc *t_wpc(cu_world *w, const char *name, int32_t value, const char *desc)
{
    cu_wpc *c = t_alloc(w, sizeof(*c));
    t_meta(w, &c->meta, NULL, name);
    c->value = value;
    c->description = S(w, desc);
    T_PUSH(w, w->wpcs, c);
    return c;
}

static cu_priority_class *t_pc(cu_world *w, const char *name, int32_t value)
{
    cu_priority_class *c = t_alloc(w, sizeof(*c));
    t_meta(w, &c->meta, NULL, name);
    c->value = value;
    T_PUSH(w, w->pcs, c);
    return c;
}

static cu_namespace *t_ns(cu_world *w, const char *name)
{
    cu_namespace *n = t_alloc(w, sizeof(*n));
    t_meta(w, &n->meta, NULL, name);
    T_PUSH(w, w->namespaces, n);
    return n;
}

/* ---------------- worlds ---------------- */

/* Uses every feature in a valid way: must produce no message at all. */
static void build_valid(cu_world *w)
{
    cu_resource_flavor *rf = t_rf(w, "spot");
    t_kvs(w, &rf->node_labels, "cloud.provider.com/instance-type=spot,zone=us-east-1a,empty=");
    t_taint(w, rf, "spot", "true", "NoSchedule");
    t_taint(w, rf, "spot", "", "PreferNoSchedule"); /* same key, other effect */
    t_taint(w, rf, "example.com/maintenance", NULL, "NoExecute");
    t_tol(w, rf, NULL, CU_TOL_EXISTS, NULL, NULL); /* tolerate everything */
    t_tol(w, rf, "example.com/gpu", CU_TOL_EQUAL, "present", "NoExecute");
    t_tol(w, rf, "spot-taint", CU_TOL_EXISTS, NULL, "NoSchedule");
    rf->topology_name = S(w, "default");
    t_rf(w, "default-flavor");

    cu_cluster_queue *cq = t_cq(w, "team-a-cq", "team-ab");
    cu_rgroup *g = t_group(w, &cq->groups, "cpu memory pods");
    t_fq(w, g, "default-flavor", "cpu=9000/b1000 memory=38654705664/l10737418240 pods=5");
    t_fq(w, g, "spot", "cpu=0 memory=0/l0 pods=0/b0");
    g = t_group(w, &cq->groups, "nvidia.com/gpu");
    t_fq(w, g, "a100", "nvidia.com/gpu=8000/b0/l8000");
    cq->fungibility.when_can_borrow = CU_FUNG_TRY_NEXT_FLAVOR;
    cq->fungibility.preference = CU_PREF_PREEMPTION_OVER_BORROWING;
    cq->preemption.within_cq = CU_PP_LOWER_OR_NEWER_EQUAL_PRIORITY;
    cq->preemption.reclaim = CU_PP_ANY;
    cq->preemption.borrow_policy = CU_PP_LOWER_PRIORITY;
    cq->preemption.has_threshold = 1;
    cq->preemption.threshold = 100;
    cq->fs_weight = 0;
    cq->ns_selector.exprs = t_alloc(w, 2 * sizeof(cu_selreq));
    cq->ns_selector.exprs[0] = (cu_selreq){ S(w, "kubernetes.io/metadata.name"),
                                            CU_SEL_IN,
                                            { 1, t_alloc(w, sizeof(char *)) } };
    cq->ns_selector.exprs[0].values.items[0] = S(w, "team-a");
    cq->ns_selector.exprs[1] = (cu_selreq){ S(w, "tier"), CU_SEL_EXISTS, { 0, NULL } };
    cq->ns_selector.nexpr = 2;
    t_kvs(w, &cq->ns_selector.match_labels, "team=a");

    cu_cluster_queue *lone = t_cq(w, "lone", NULL);
    g = t_group(w, &lone->groups, "cpu");
    t_fq(w, g, "default-flavor", "cpu=4000");
    lone->ns_selector.is_null = 1;

    cu_cohort *root = t_cohort(w, "root", NULL);
    g = t_group(w, &root->groups, "cpu");
    t_fq(w, g, "default-flavor", "cpu=12000");
    cu_cohort *child = t_cohort(w, "team-ab", "root");
    g = t_group(w, &child->groups, "cpu");
    /* a cohort may lend more than its own nominal quota (its subtree's) */
    t_fq(w, g, "default-flavor", "cpu=1000/b2000/l5000");
    child->fs_weight = 750;
    t_cohort(w, "org.example", "root");

    t_lq(w, "team-a", "team-a-queue", "team-a-cq");
    t_lq(w, "team-b", "team-a-queue", "team-a-cq"); /* same name, other ns */

    cu_workload *wl = t_wl(w, "team-a", "job-sample-job-7f173", "team-a-queue");
    t_ps(w, wl, "main", 3);
    cu_podset *ps = t_ps(w, wl, "workers", 4);
    ps->has_min = 1;
    ps->min_count = 4;
    wl->pc_group = S(w, "kueue.x-k8s.io");
    wl->pc_kind = S(w, "WorkloadPriorityClass");
    wl->pc_name = S(w, "sample-priority");
    wl->adm_cq = S(w, "team-a-cq");
    t_psa(w, wl, "main", 3, "cpu=3000 memory=629145600");
    t_psa(w, wl, "workers", 2, "cpu=1000 memory=2");

    wl = t_wl(w, "team-b", "job-sample-job-7f173", NULL); /* same name, other ns */
    t_ps(w, wl, "main", 0);
    wl->pc_group = S(w, "scheduling.k8s.io");
    wl->pc_kind = S(w, "PriorityClass");
    wl->pc_name = S(w, "high");

    t_wpc(w, "sample-priority", 10000, "Sample priority");
    /* 2048 two-byte characters: at the limit in characters, not bytes */
    char desc[4097];
    for (int i = 0; i < 2048; i++)
        memcpy(desc + 2 * i, "\xc3\xa9", 2);
    desc[4096] = '\0';
    t_wpc(w, "accented", 1, desc);
    t_pc(w, "high", 1000000000);
    t_pc(w, "system-cluster-critical", 2000000000);
    t_ns(w, "team-a");
    t_ns(w, "team-b");
    t_rf(w, "team-a"); /* same name as a Namespace: other kind, not a duplicate */
}

static void build_flavor_names(cu_world *w)
{
    cu_resource_flavor *rf = t_rf(w, "Spot_1");
    t_kvs(w, &rf->node_labels, "k1=1,k2=2,k3=3,k4=4,k5=5,k6=6,k7=7,k8=8,k9=9");
    t_rf(w, "-a");
    t_rf(w, "a..b");
}

static void build_flavor_labels(cu_world *w)
{
    cu_resource_flavor *rf = t_rf(w, "labels");
    t_kvs(w, &rf->node_labels,
          "a/b/c=x,zone=-x,Example.com/gpu=1,/gpu=1,example.com/=1,"
          "a123456789a123456789a123456789a123456789a123456789a123456789abcd=1");
}

static void build_flavor_taints(cu_world *w)
{
    cu_resource_flavor *rf = t_rf(w, "tainted");
    t_taint(w, rf, "", "", "NoSchedule");
    t_taint(w, rf, "spot", "true", "Sometimes");
    t_taint(w, rf, "spot", "yes", "NoSchedule");
    t_taint(w, rf, "spot", "x", "NoSchedule");
    t_taint(w, rf, "gpu", "a b", "");
    t_tol(w, rf, NULL, CU_TOL_EQUAL, NULL, NULL);
    t_tol(w, rf, "a", CU_TOL_EXISTS, "v", NULL);
    t_tol(w, rf, "b", CU_TOL_EQUAL, "ok", "Never");
    cu_resource_flavor *tas = t_rf(w, "tas");
    tas->topology_name = S(w, "default");
    cu_resource_flavor *many = t_rf(w, "many");
    for (int i = 0; i < 9; i++) {
        char k[32];
        snprintf(k, sizeof(k), "t%d", i);
        t_taint(w, many, k, "", "NoSchedule");
        t_tol(w, many, k, CU_TOL_EXISTS, NULL, NULL);
    }
}

static void build_cq_resources(cu_world *w)
{
    cu_cluster_queue *cq = t_cq(w, "team-a", NULL);
    cu_rgroup *g = t_group(w, &cq->groups, "cpu memory");
    t_fq(w, g, "default", "memory=1000 cpu=1000");
    t_fq(w, g, "spot", "cpu=1000");
    t_fq(w, g, "Spot", "cpu=1000 memory=1000");

    cq = t_cq(w, "overlap", NULL);
    g = t_group(w, &cq->groups, "cpu memory");
    t_fq(w, g, "default", "cpu=1 memory=1");
    g = t_group(w, &cq->groups, "gpu cpu");
    t_fq(w, g, "default", "gpu=1 cpu=1");
    t_fq(w, g, "a100", "gpu=1 cpu=1");
    g = t_group(w, &cq->groups, "pods pods");
    t_fq(w, g, "p", "pods=1 pods=1");
    t_fq(w, g, "p", "pods=1 pods=1");

    cq = t_cq(w, "empty", NULL);
    t_group(w, &cq->groups, "");
}

static void build_cq_quotas(cu_world *w)
{
    cu_cluster_queue *cq = t_cq(w, "quota", NULL);
    cu_rgroup *g = t_group(w, &cq->groups, "cpu memory");
    /* memory: nominal 2Gi, lendingLimit 3Gi (in bytes) */
    t_fq(w, g, "default", "cpu=-500/b1000 memory=2147483648/l3221225472");
    cq = t_cq(w, "quota2", "pool");
    g = t_group(w, &cq->groups, "cpu");
    t_fq(w, g, "default", "cpu=1000/b-1000/l-2000");
}

static void build_cq_policies(cu_world *w)
{
    cu_cluster_queue *cq = t_cq(w, "policies", "Bad_Cohort");
    cq->fungibility.preference = CU_PREF_PREEMPTION_OVER_BORROWING;
    cq->preemption.within_cq = CU_PP_ANY;
    cq->preemption.reclaim = CU_PP_NEVER;
    cq->preemption.borrow_policy = CU_PP_LOWER_PRIORITY;
    cq->fs_weight = -1000;

    cq = t_cq(w, "thresh", "pool");
    cq->preemption.reclaim = CU_PP_LOWER_OR_NEWER_EQUAL_PRIORITY;
    cq->preemption.borrow_policy = CU_PP_NEVER;
    cq->preemption.has_threshold = 1;
    cq->preemption.threshold = 5;

    cq = t_cq(w, "borrow-any", "pool");
    cq->preemption.reclaim = CU_PP_ANY;
    cq->preemption.borrow_policy = CU_PP_ANY;

    cq = t_cq(w, "sel", NULL);
    t_kvs(w, &cq->ns_selector.match_labels, "Bad Key=v");
    cq->ns_selector.exprs = t_alloc(w, 2 * sizeof(cu_selreq));
    cq->ns_selector.exprs[0] = (cu_selreq){ S(w, "env"), CU_SEL_IN, { 0, NULL } };
    cq->ns_selector.exprs[1] =
        (cu_selreq){ S(w, "tier"), CU_SEL_EXISTS, { 1, t_alloc(w, sizeof(char *)) } };
    cq->ns_selector.exprs[1].values.items[0] = S(w, "x");
    cq->ns_selector.nexpr = 2;
}

static void build_cq_sizes(cu_world *w)
{
    char r[32], f[32];
    cu_cluster_queue *cq = t_cq(w, "many", NULL);
    for (int i = 0; i < 17; i++) {
        snprintf(r, sizeof(r), "r%d", i);
        snprintf(f, sizeof(f), "f%d", i);
        cu_rgroup *g = t_group(w, &cq->groups, r);
        char q[64];
        snprintf(q, sizeof(q), "%s=1000", r);
        t_fq(w, g, f, q);
    }
    cq = t_cq(w, "wide", NULL);
    for (int i = 0; i < 5; i++) {
        snprintf(r, sizeof(r), "r%d", i);
        cu_rgroup *g = t_group(w, &cq->groups, r);
        char q[64];
        snprintf(q, sizeof(q), "%s=1000", r);
        for (int j = 0; j < (i == 0 ? 65 : 60); j++) {
            snprintf(f, sizeof(f), "f%d-%d", i, j);
            t_fq(w, g, f, q);
        }
    }
}

static void build_cohorts(cu_world *w)
{
    cu_cohort *co = t_cohort(w, "root", NULL);
    cu_rgroup *g = t_group(w, &co->groups, "cpu");
    t_fq(w, g, "default", "cpu=1000/b500/l2000");
    t_cohort(w, "selfish", "selfish");
    co = t_cohort(w, "child", "root");
    g = t_group(w, &co->groups, "cpu");
    t_fq(w, g, "default", "cpu=1000/b-1/l5000");
    co->fs_weight = -250;
    t_cohort(w, "orphan", "Not.Valid");
}

static void build_local_queues(cu_world *w)
{
    t_lq(w, "team_a", "lq", NULL);
    t_lq(w, "ns", "lq2", "Main");
    cu_local_queue *lq = t_lq(w, "ns", "lq3", "main");
    lq->fs_weight = -1;
}

static void build_workloads(cu_world *w)
{
    cu_workload *wl = t_wl(w, "ns", "wl-bad", "Q!");
    cu_podset *ps = t_ps(w, wl, "main", 3);
    ps->has_min = 1;
    ps->min_count = 5;
    t_ps(w, wl, "main", -1);
    ps = t_ps(w, wl, "Worker", 2);
    ps->has_min = 1;
    ps->min_count = 0;
    wl->pc_group = S(w, "kueue.x-k8s.io");
    wl->pc_kind = S(w, "PriorityClass");
    wl->pc_name = S(w, "high");

    wl = t_wl(w, "ns", "wl-adm", "q");
    t_ps(w, wl, "main", 2);
    t_psa(w, wl, "main", 3, "cpu=3000");
    t_psa(w, wl, "other", 1, "");

    wl = t_wl(w, "ns", "wl-usage", "q");
    t_ps(w, wl, "main", 3);
    wl->adm_cq = S(w, "cq");
    t_psa(w, wl, "main", 3, "cpu=1000 memory=2");

    wl = t_wl(w, "ns", "empty", "q");
    wl->pc_group = S(w, "example.com");
    wl->pc_kind = S(w, "Foo");

    wl = t_wl(w, "ns", "wide", "q");
    for (int i = 0; i < 19; i++) {
        char n[32];
        snprintf(n, sizeof(n), "ps%d", i);
        t_ps(w, wl, n, 1);
    }
}

static void build_classes(cu_world *w)
{
    char desc[2050];
    memset(desc, 'x', 2049);
    desc[2049] = '\0';
    t_wpc(w, "long", 1, desc);
    t_pc(w, "too-high", 1000000001);
    t_ns(w, "Bad.NS");
    t_ns(w, "a123456789a123456789a123456789a123456789a123456789a123456789abcd");
}

static void build_unnamed(cu_world *w)
{
    cu_resource_flavor *rf = t_rf(w, NULL);
    rf->meta.file = "x.yaml";
    rf->meta.line = 12;
    t_lq(w, NULL, "q", "cq");
}

static void build_duplicates(cu_world *w)
{
    cu_cluster_queue *a = t_cq(w, "dup", NULL);
    cu_cluster_queue *b = t_cq(w, "other", NULL);
    cu_cluster_queue *c = t_cq(w, "dup", NULL);
    cu_cluster_queue *d = t_cq(w, "dup", NULL);
    a->meta.file = "a.yaml";
    a->meta.line = 3;
    b->meta.file = "a.yaml";
    b->meta.line = 20;
    c->meta.file = "b.yaml";
    c->meta.line = 7;
    d->meta.file = "c.yaml";
    d->meta.line = 9;
    cu_local_queue *q1 = t_lq(w, "ns1", "q", "cq");
    t_lq(w, "ns2", "q", "cq");
    cu_local_queue *q3 = t_lq(w, "ns1", "q", "cq");
    q1->meta.file = "d.yaml";
    q1->meta.line = 1;
    q3->meta.file = "d.yaml";
    q3->meta.line = 40;
    t_rf(w, "dup"); /* other kind */
}

/* References to missing or cyclic objects are status, not errors. */
static void build_cross_refs(cu_world *w)
{
    t_lq(w, "ns", "lq", "missing-cq");
    cu_cluster_queue *cq = t_cq(w, "cq", "a");
    cu_rgroup *g = t_group(w, &cq->groups, "cpu");
    t_fq(w, g, "ghost-flavor", "cpu=1000");
    t_cohort(w, "a", "b");
    t_cohort(w, "b", "a");
    t_cohort(w, "c", "does-not-exist");
    cu_workload *wl = t_wl(w, "ns", "wl", "nowhere");
    t_ps(w, wl, "main", 1);
    wl->pc_group = S(w, "kueue.x-k8s.io");
    wl->pc_kind = S(w, "WorkloadPriorityClass");
    wl->pc_name = S(w, "missing-class");
    wl->adm_cq = S(w, "no-such-cq");
    t_psa(w, wl, "main", 1, "cpu=1000");
}

/* ---------------- table ---------------- */

typedef struct tcase {
    const char *name;
    void (*build)(cu_world *w);
    const char *want[24]; /* NULL-terminated, in report order */
} tcase;

#define Q(x) "\"" x "\""
#define RG0F0 "spec.resourceGroups[0].flavors[0]"

static const tcase cases[] = {
    { "valid world", build_valid, { NULL } },
    { "cross-object references are not errors", build_cross_refs, { NULL } },
    { "flavor names and label count",
      build_flavor_names,
      { "ResourceFlavor Spot_1: metadata.name: Invalid value: \"Spot_1\": " SUB,
        "ResourceFlavor Spot_1: spec.nodeLabels: Too many: 9: must have at most 8 items",
        "ResourceFlavor -a: metadata.name: Invalid value: \"-a\": " SUB,
        "ResourceFlavor a..b: metadata.name: Invalid value: \"a..b\": " SUB, NULL } },
    { "flavor label keys and values",
      build_flavor_labels,
      { "ResourceFlavor labels: spec.nodeLabels: Invalid value: \"a/b/c\": a qualified name " QN
        " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
        "ResourceFlavor labels: spec.nodeLabels[zone]: Invalid value: \"-x\": " LV,
        "ResourceFlavor labels: spec.nodeLabels: Invalid value: \"Example.com/gpu\": prefix part " SUB,
        "ResourceFlavor labels: spec.nodeLabels: Invalid value: \"/gpu\": prefix part must be non-empty",
        "ResourceFlavor labels: spec.nodeLabels: Invalid value: \"example.com/\": name part must be non-empty",
        "ResourceFlavor labels: spec.nodeLabels: Invalid value: "
        "\"a123456789a123456789a123456789a123456789a123456789a123456789abcd\": "
        "name part must be no more than 63 characters",
        NULL } },
    { "flavor taints, tolerations and topology",
      build_flavor_taints,
      { "ResourceFlavor tainted: spec.nodeTaints[0].key: Required value",
        "ResourceFlavor tainted: spec.nodeTaints[1].effect: Unsupported value: \"Sometimes\": " EFFECTS,
        "ResourceFlavor tainted: spec.nodeTaints[3]: Duplicate value: \"spot:NoSchedule\": "
        "taints must be unique by key and effect pair",
        "ResourceFlavor tainted: spec.nodeTaints[4].value: Invalid value: \"a b\": " LV,
        "ResourceFlavor tainted: spec.nodeTaints[4].effect: Required value",
        "ResourceFlavor tainted: spec.tolerations[0].operator: Invalid value: \"Equal\": operator "
        "must be Exists when `key` is empty, which means \"match all values and all keys\"",
        "ResourceFlavor tainted: spec.tolerations[1].operator: Invalid value: \"Exists\": value "
        "must be empty when `operator` is 'Exists'",
        "ResourceFlavor tainted: spec.tolerations[2].effect: Unsupported value: \"Never\": " EFFECTS,
        "ResourceFlavor tas: spec: Invalid value: \"object\": at least one nodeLabel is required "
        "when topology is set",
        "ResourceFlavor many: spec.nodeTaints: Too many: 9: must have at most 8 items",
        "ResourceFlavor many: spec.tolerations: Too many: 9: must have at most 8 items", NULL } },
    { "cluster queue resources and flavors",
      build_cq_resources,
      { "ClusterQueue team-a: " RG0F0 ".resources: must list exactly the covered resources "
        "[cpu memory] in order",
        "ClusterQueue team-a: spec.resourceGroups[0].flavors[1].resources: must list exactly the "
        "covered resources [cpu memory] in order",
        "ClusterQueue team-a: spec.resourceGroups[0].flavors[2].name: Invalid value: \"Spot\": " SUB,
        "ClusterQueue overlap: spec.resourceGroups[1].coveredResources[1]: Duplicate value: "
        "\"cpu\": already covered by spec.resourceGroups[0]",
        "ClusterQueue overlap: spec.resourceGroups[1].flavors[0].name: Duplicate value: "
        "\"default\": already listed in spec.resourceGroups[0]",
        "ClusterQueue overlap: spec.resourceGroups[2].coveredResources[1]: Duplicate value: \"pods\"",
        "ClusterQueue overlap: spec.resourceGroups[2].flavors[1].name: Duplicate value: \"p\"",
        "ClusterQueue empty: spec.resourceGroups[0].coveredResources: Required value: must have "
        "at least 1 item",
        "ClusterQueue empty: spec.resourceGroups[0].flavors: Required value: must have at least 1 item",
        NULL } },
    { "cluster queue quotas and limits",
      build_cq_quotas,
      { "ClusterQueue quota: " RG0F0 ".resources[0].nominalQuota: Invalid value: \"-500m\": "
        "must be greater than or equal to 0",
        "ClusterQueue quota: " RG0F0 ".resources[0].borrowingLimit: Invalid value: \"1\": "
        "must be nil when cohort is empty",
        "ClusterQueue quota: " RG0F0 ".resources[1].lendingLimit: Invalid value: \"3Gi\": "
        "must be nil when cohort is empty",
        "ClusterQueue quota: " RG0F0 ".resources[1].lendingLimit: Invalid value: \"3Gi\": "
        "must be less than or equal to the nominalQuota",
        "ClusterQueue quota2: " RG0F0 ".resources[0].borrowingLimit: Invalid value: \"-1\": "
        "must be greater than or equal to 0",
        "ClusterQueue quota2: " RG0F0 ".resources[0].lendingLimit: Invalid value: \"-2\": "
        "must be greater than or equal to 0",
        NULL } },
    { "cluster queue policies",
      build_cq_policies,
      { "ClusterQueue policies: spec.cohortName: Invalid value: \"Bad_Cohort\": " SUB,
        "ClusterQueue policies: spec.flavorFungibility.preference: Invalid value: "
        "\"PreemptionOverBorrowing\": preference \"PreemptionOverBorrowing\" requires both "
        "whenCanBorrow and whenCanPreempt to be TryNextFlavor",
        "ClusterQueue policies: spec.preemption.withinClusterQueue: Unsupported value: \"Any\": "
        "supported values: \"Never\", \"LowerPriority\", \"LowerOrNewerEqualPriority\"",
        "ClusterQueue policies: spec.preemption: Invalid value: {\"reclaimWithinCohort\":"
        "\"Never\",\"borrowWithinCohort\":{\"policy\":\"LowerPriority\"},"
        "\"withinClusterQueue\":\"Any\"}: reclaimWithinCohort=Never and "
        "borrowWithinCohort.Policy!=Never",
        "ClusterQueue policies: spec.fairSharing.weight: Invalid value: \"-1\": must be greater "
        "than or equal to 0",
        "ClusterQueue thresh: spec.preemption.reclaimWithinCohort: Unsupported value: "
        "\"LowerOrNewerEqualPriority\": supported values: \"Never\", \"LowerPriority\", \"Any\"",
        "ClusterQueue thresh: spec.preemption.borrowWithinCohort.maxPriorityThreshold: Forbidden: "
        "may only be set when borrowWithinCohort.policy is LowerPriority",
        "ClusterQueue borrow-any: spec.preemption.borrowWithinCohort.policy: Unsupported value: "
        "\"Any\": supported values: \"Never\", \"LowerPriority\"",
        "ClusterQueue sel: spec.namespaceSelector.matchLabels: Invalid value: \"Bad Key\": name part " QN,
        "ClusterQueue sel: spec.namespaceSelector.matchExpressions[0].values: Required value: must "
        "be specified when `operator` is 'In' or 'NotIn'",
        "ClusterQueue sel: spec.namespaceSelector.matchExpressions[1].values: Forbidden: may not be "
        "specified when `operator` is 'Exists' or 'DoesNotExist'",
        NULL } },
    { "cluster queue size limits",
      build_cq_sizes,
      { "ClusterQueue many: spec.resourceGroups: Too many: 17: must have at most 16 items",
        "ClusterQueue wide: spec.resourceGroups[0].flavors: Too many: 65: must have at most 64 items",
        "ClusterQueue wide: spec.resourceGroups: Invalid value: 305: total number of flavors "
        "across all resourceGroups must be \u2264 256, got 305",
        NULL } },
    { "cohorts",
      build_cohorts,
      { "Cohort root: " RG0F0 ".resources[0].borrowingLimit: Invalid value: \"500m\": must be "
        "nil when parent is empty",
        "Cohort root: " RG0F0 ".resources[0].lendingLimit: Invalid value: \"2\": must be nil "
        "when parent is empty",
        "Cohort selfish: spec.parentName: Invalid value: \"selfish\": must not be the Cohort itself",
        "Cohort child: " RG0F0 ".resources[0].borrowingLimit: Invalid value: \"-1m\": must be "
        "greater than or equal to 0",
        "Cohort child: spec.fairSharing.weight: Invalid value: \"-250m\": must be greater than "
        "or equal to 0",
        "Cohort orphan: spec.parentName: Invalid value: \"Not.Valid\": " SUB, NULL } },
    { "local queues",
      build_local_queues,
      { "LocalQueue team_a/lq: metadata.namespace: Invalid value: \"team_a\": " LABEL,
        "LocalQueue team_a/lq: spec.clusterQueue: Required value",
        "LocalQueue ns/lq2: spec.clusterQueue: Invalid value: \"Main\": " SUB,
        "LocalQueue ns/lq3: spec.fairSharing.weight: Invalid value: \"-1m\": must be greater "
        "than or equal to 0",
        NULL } },
    { "workloads",
      build_workloads,
      { "Workload ns/wl-bad: spec.podSets[0].minCount: Invalid value: 5: must be less than or "
        "equal to count (3)",
        "Workload ns/wl-bad: spec.podSets[1].name: Duplicate value: \"main\"",
        "Workload ns/wl-bad: spec.podSets[1].count: Invalid value: -1: must be greater than or "
        "equal to 0",
        "Workload ns/wl-bad: spec.podSets[2].name: Invalid value: \"Worker\": " LABEL,
        "Workload ns/wl-bad: spec.podSets[2].minCount: Invalid value: 0: must be greater than or "
        "equal to 1",
        "Workload ns/wl-bad: spec.podSets: Invalid value: 2: at most one podSet can use minCount",
        "Workload ns/wl-bad: spec.queueName: Invalid value: \"Q!\": " SUB,
        "Workload ns/wl-bad: spec.priorityClassRef.kind: Invalid value: \"PriorityClass\": only "
        "the WorkloadPriorityClass kind is allowed for the kueue.x-k8s.io group",
        "Workload ns/wl-adm: status.admission.clusterQueue: Required value",
        "Workload ns/wl-adm: status.admission.podSetAssignments[0].count: Invalid value: 3: must "
        "be less than or equal to spec.podSets[0].count (2)",
        "Workload ns/wl-adm: status.admission.podSetAssignments[1].name: Not found: \"other\"",
        "Workload ns/wl-usage: status.admission.podSetAssignments[0].resourceUsage[cpu]: Invalid "
        "value: \"1\": is not a multiple of 3",
        "Workload ns/wl-usage: status.admission.podSetAssignments[0].resourceUsage[memory]: "
        "Invalid value: \"2\": is not a multiple of 3",
        "Workload ns/empty: spec.podSets: Required value: must have at least 1 item",
        "Workload ns/empty: spec.priorityClassRef.group: Unsupported value: \"example.com\": "
        "supported values: \"kueue.x-k8s.io\", \"scheduling.k8s.io\"",
        "Workload ns/empty: spec.priorityClassRef.kind: Unsupported value: \"Foo\": supported "
        "values: \"WorkloadPriorityClass\", \"PriorityClass\"",
        "Workload ns/empty: spec.priorityClassRef.name: Required value",
        "Workload ns/wide: spec.podSets: Too many: 19: must have at most 18 items", NULL } },
    { "priority classes and namespaces",
      build_classes,
      { "WorkloadPriorityClass long: description: Too long: may not be more than 2048 characters "
        "(has 2049)",
        "PriorityClass too-high: value: Forbidden: maximum allowed value of a user defined "
        "priority is 1000000000",
        "Namespace Bad.NS: metadata.name: Invalid value: \"Bad.NS\": " LABEL,
        "Namespace a123456789a123456789a123456789a123456789a123456789a123456789abcd: metadata.name: "
        "Invalid value: \"a123456789a123456789a123456789a123456789a123456789a123456789abcd\": "
        "must be no more than 63 characters",
        NULL } },
    { "unnamed objects",
      build_unnamed,
      { "ResourceFlavor (unnamed at x.yaml:12): metadata.name: Required value",
        "LocalQueue q: metadata.namespace: Required value", NULL } },
    { "duplicates name both places",
      build_duplicates,
      { "ClusterQueue dup: metadata.name: Duplicate value: \"dup\": defined at a.yaml:3 and "
        "again at b.yaml:7",
        "ClusterQueue dup: metadata.name: Duplicate value: \"dup\": defined at a.yaml:3 and "
        "again at c.yaml:9",
        "LocalQueue ns1/q: metadata.name: Duplicate value: \"q\": defined at d.yaml:1 and again "
        "at d.yaml:40",
        NULL } },
};

static void dump(const cu_diag *d)
{
    for (size_t i = 0; i < d->n; i++)
        fprintf(stderr, "  got[%zu]: %s\n", i, d->msgs[i]);
}

static void run_case(const tcase *tc)
{
    cu_world w;
    cu_diag d;
    t_world(&w);
    cu_diag_init(&d);
    tc->build(&w);
    cu_err rc = cu_world_validate(&w, &d);

    size_t nwant = 0;
    while (tc->want[nwant])
        nwant++;
    if (d.n != nwant) {
        fprintf(stderr, "case '%s': want %zu messages, got %zu\n", tc->name, nwant, d.n);
        dump(&d);
    }
    assert_int_equal(d.n, nwant);
    assert_int_equal(d.nerrors, nwant);
    for (size_t i = 0; i < nwant; i++) {
        if (strcmp(d.msgs[i], tc->want[i]) != 0)
            fprintf(stderr, "case '%s' message %zu:\n  want: %s\n  got:  %s\n", tc->name, i,
                    tc->want[i], d.msgs[i]);
        assert_string_equal(d.msgs[i], tc->want[i]);
    }
    assert_int_equal(rc, nwant ? CU_EINVAL : CU_OK);
    cu_diag_free(&d);
    cu_arena_free(&w.arena);
}

static void test_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        run_case(&cases[i]);
}

/* One ClusterQueue with three independent problems yields three messages. */
static void test_all_problems_at_once(void **state)
{
    (void)state;
    cu_world w;
    cu_diag d;
    t_world(&w);
    cu_diag_init(&d);
    cu_cluster_queue *cq = t_cq(&w, "team-a", "Team A");
    cu_rgroup *g = t_group(&w, &cq->groups, "cpu memory");
    t_fq(&w, g, "default", "memory=1000 cpu=-1000");

    assert_int_equal(cu_world_validate(&w, &d), CU_EINVAL);
    if (d.n != 3)
        dump(&d);
    assert_int_equal(d.n, 3);
    assert_string_equal(d.msgs[0],
                        "ClusterQueue team-a: spec.cohortName: Invalid value: \"Team A\": " SUB);
    assert_string_equal(d.msgs[1],
                        "ClusterQueue team-a: spec.resourceGroups[0].flavors[0].resources: "
                        "must list exactly the covered resources [cpu memory] in order");
    assert_string_equal(d.msgs[2],
                        "ClusterQueue team-a: spec.resourceGroups[0].flavors[0]"
                        ".resources[1].nominalQuota: Invalid value: \"-1\": must be greater than "
                        "or equal to 0");
    cu_diag_free(&d);
    cu_arena_free(&w.arena);
}

/* Names at and just over the 253-character limit. */
static void test_name_length(void **state)
{
    (void)state;
    char ok[254], bad[255], want[700];
    memset(ok, 'a', 253);
    ok[253] = '\0';
    memset(bad, 'b', 254);
    bad[254] = '\0';
    cu_world w;
    cu_diag d;
    t_world(&w);
    cu_diag_init(&d);
    t_cq(&w, ok, NULL);
    t_cq(&w, bad, NULL);
    assert_int_equal(cu_world_validate(&w, &d), CU_EINVAL);
    assert_int_equal(d.n, 1);
    snprintf(want, sizeof(want),
             "ClusterQueue %s: metadata.name: Invalid value: \"%s\": must be "
             "no more than 253 characters",
             bad, bad);
    assert_string_equal(d.msgs[0], want);
    cu_diag_free(&d);
    cu_arena_free(&w.arena);
}

/* Errors already in d (e.g. from decoding) do not change the result of a
 * validation that finds nothing, and validation appends after them. */
static void test_preexisting_errors(void **state)
{
    (void)state;
    cu_world w;
    cu_diag d;
    t_world(&w);
    cu_diag_init(&d);
    cu_diag_error(&d, "earlier problem");
    build_valid(&w);
    assert_int_equal(cu_world_validate(&w, &d), CU_OK);
    assert_int_equal(d.n, 1);
    t_lq(&w, "ns", "lq", NULL);
    assert_int_equal(cu_world_validate(&w, &d), CU_EINVAL);
    assert_int_equal(d.n, 2);
    assert_string_equal(d.msgs[0], "earlier problem");
    assert_string_equal(d.msgs[1], "LocalQueue ns/lq: spec.clusterQueue: Required value");
    cu_diag_free(&d);
    cu_arena_free(&w.arena);
}

/* An empty world is valid. */
static void test_empty_world(void **state)
{
    (void)state;
    cu_world w;
    cu_diag d;
    t_world(&w);
    cu_diag_init(&d);
    assert_int_equal(cu_world_validate(&w, &d), CU_OK);
    assert_int_equal(d.n, 0);
    cu_diag_free(&d);
    cu_arena_free(&w.arena);
}

/* Many objects with one duplicate: found without pairwise comparison of
 * every object, and reported once. */
static void test_many_objects_one_duplicate(void **state)
{
    (void)state;
    cu_world w;
    cu_diag d;
    t_world(&w);
    cu_diag_init(&d);
    char name[32];
    for (int i = 0; i < 20000; i++) {
        snprintf(name, sizeof(name), "wl-%d", i);
        cu_workload *wl = t_wl(&w, i % 2 ? "odd" : "even", name, "q");
        t_ps(&w, wl, "main", 1);
    }
    cu_workload *wl = t_wl(&w, "odd", "wl-777", "q");
    t_ps(&w, wl, "main", 1);
    wl->meta.file = "late.yaml";
    wl->meta.line = 5;
    assert_int_equal(cu_world_validate(&w, &d), CU_EINVAL);
    assert_int_equal(d.n, 1);
    assert_string_equal(d.msgs[0], "Workload odd/wl-777: metadata.name: Duplicate value: "
                                   "\"wl-777\": defined at t.yaml:778 and again at late.yaml:5");
    cu_diag_free(&d);
    cu_arena_free(&w.arena);
}

/* ObjectMeta labels and annotations, as kube-apiserver validates them for
 * every kind (the API server of a real cluster refuses these objects; the
 * controller must not use them either). */
static void test_metadata(void **state)
{
    (void)state;
    cu_world w;
    cu_diag d;
    t_world(&w);
    cu_diag_init(&d);
    size_t big = 1 << 20;
    char *v = t_alloc(&w, big + 1);
    memset(v, 'x', big);
    v[big] = '\0';
    cu_cluster_queue *cq = t_cq(&w, "big", NULL);
    cq->meta.labels.items = t_alloc(&w, 2 * sizeof(cu_kv));
    cq->meta.labels.items[0] = (cu_kv){ "team", v };
    cq->meta.labels.items[1] = (cu_kv){ "a/b/c", "ok" };
    cq->meta.labels.n = 2;
    cu_local_queue *lq = t_lq(&w, "ns", "lq", "big");
    char *av = t_alloc(&w, (256 << 10) + 1);
    memset(av, 'y', 256 << 10);
    av[256 << 10] = '\0';
    lq->meta.annotations.items = t_alloc(&w, 2 * sizeof(cu_kv));
    lq->meta.annotations.items[0] = (cu_kv){ "example.com/note", av };
    lq->meta.annotations.items[1] = (cu_kv){ "Bad Key", "" };
    lq->meta.annotations.n = 2;
    assert_int_equal(cu_world_validate(&w, &d), CU_EINVAL);
    if (d.n != 4)
        dump(&d);
    assert_int_equal(d.n, 4);
    assert_non_null(
        strstr(d.msgs[0], "ClusterQueue big: metadata.labels[team]: Invalid value: \"xxx"));
    assert_non_null(strstr(d.msgs[0], "...\": must be no more than 63 characters"));
    assert_true(strlen(d.msgs[0]) < 1024);
    assert_string_equal(d.msgs[1],
                        "ClusterQueue big: metadata.labels: Invalid value: \"a/b/c\": "
                        "a qualified name " QN " with an optional DNS subdomain prefix and '/' "
                        "(e.g. 'example.com/MyName')");
    assert_string_equal(d.msgs[2], "LocalQueue ns/lq: metadata.annotations: Invalid value: "
                                   "\"Bad Key\": name part " QN);
    assert_string_equal(d.msgs[3], "LocalQueue ns/lq: metadata.annotations: Too long: must have "
                                   "at most 262144 bytes");
    cu_diag_free(&d);
    cu_arena_free(&w.arena);
}

/* cu_object_validate checks one object by the same rules (the controller
 * validates objects one by one); duplicates need a world. */
static void test_object_validate(void **state)
{
    (void)state;
    cu_world w;
    cu_diag d, dw;
    t_world(&w);
    cu_diag_init(&d);
    cu_diag_init(&dw);
    build_cq_quotas(&w);
    build_cohorts(&w);
    build_local_queues(&w);
    build_workloads(&w);
    build_classes(&w);
    build_flavor_taints(&w);
    assert_int_equal(cu_world_validate(&w, &dw), CU_EINVAL);
    size_t k = 0;
    for (size_t i = 0; i < w.flavors.n; i++)
        cu_object_validate(CU_KIND_RESOURCE_FLAVOR, w.flavors.items[i], &d);
    for (size_t i = 0; i < w.cqs.n; i++)
        cu_object_validate(CU_KIND_CLUSTER_QUEUE, w.cqs.items[i], &d);
    for (size_t i = 0; i < w.cohorts.n; i++)
        cu_object_validate(CU_KIND_COHORT, w.cohorts.items[i], &d);
    for (size_t i = 0; i < w.lqs.n; i++)
        cu_object_validate(CU_KIND_LOCAL_QUEUE, w.lqs.items[i], &d);
    for (size_t i = 0; i < w.workloads.n; i++)
        cu_object_validate(CU_KIND_WORKLOAD, w.workloads.items[i], &d);
    for (size_t i = 0; i < w.wpcs.n; i++)
        cu_object_validate(CU_KIND_WORKLOAD_PRIORITY_CLASS, w.wpcs.items[i], &d);
    for (size_t i = 0; i < w.pcs.n; i++)
        cu_object_validate(CU_KIND_PRIORITY_CLASS, w.pcs.items[i], &d);
    for (size_t i = 0; i < w.namespaces.n; i++)
        cu_object_validate(CU_KIND_NAMESPACE, w.namespaces.items[i], &d);
    /* the same messages in the same order, but for the duplicates */
    size_t j = 0;
    for (k = 0; k < dw.n; k++) {
        if (strstr(dw.msgs[k], "metadata.name: Duplicate value:"))
            continue;
        assert_true(j < d.n);
        assert_string_equal(d.msgs[j], dw.msgs[k]);
        j++;
    }
    assert_int_equal(j, d.n);
    size_t nd = d.n;
    /* a valid object: CU_OK and nothing added */
    cu_arena_free(&w.arena);
    t_world(&w);
    build_valid(&w);
    assert_int_equal(cu_object_validate(CU_KIND_CLUSTER_QUEUE, w.cqs.items[0], &d), CU_OK);
    assert_int_equal(d.n, nd);
    assert_int_equal(cu_object_validate(CU_KIND_JOB, w.cqs.items[0], &d), CU_EINVAL);
    assert_int_equal(d.n, nd + 1);
    cu_diag_free(&d);
    cu_diag_free(&dw);
    cu_arena_free(&w.arena);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),       cmocka_unit_test(test_all_problems_at_once),
        cmocka_unit_test(test_name_length), cmocka_unit_test(test_preexisting_errors),
        cmocka_unit_test(test_empty_world), cmocka_unit_test(test_many_objects_one_duplicate),
        cmocka_unit_test(test_metadata),    cmocka_unit_test(test_object_validate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
