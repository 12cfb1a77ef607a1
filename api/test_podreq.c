/*
 * test_podreq.c - pod request arithmetic (the cu_podreq accumulator and
 * cu_pod_requests on it), Kueue's Job
 * workload names and the SHA-1 behind them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "cu_objects.h"
#include "cu_podreq.h"
#include "cu_sha1.h"

/* Parses a one-document YAML string into a arena; returns the root. */
static cu_node *parse1(cu_arena *a, const char *yaml)
{
    cu_doc *docs = NULL;
    size_t n = 0;
    cu_diag d;
    cu_diag_init(&d);
    cu_err err = cu_doc_parse("podspec.yaml", yaml, strlen(yaml), a, &docs, &n, &d);
    if (err != CU_OK)
        fprintf(stderr, "parse error: %s\n", d.n ? d.msgs[0] : "?");
    assert_int_equal(err, CU_OK);
    assert_int_equal(n, 1);
    cu_diag_free(&d);
    return docs[0].root;
}

/* "name=milli,name=milli" in list order. */
static void fmt_list(const cu_reslist *l, char *out, size_t n)
{
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < l->n; i++) {
        int k = snprintf(out + len, n - len, "%s%s=%lld", i ? "," : "", l->items[i].name,
                         (long long)l->items[i].milli);
        assert_true(k > 0 && (size_t)k < n - len);
        len += (size_t)k;
    }
}

#define GI "1073741824" /* 1Gi in bytes: memory is counted in whole units */

static void test_requests_table(void **state)
{
    (void)state;
    static const struct {
        const char *name, *spec, *want;
    } cases[] = {
        { "empty pod spec", "{}", "" },
        { "one container",
          "containers: [{name: a, resources: {requests: {cpu: '1', memory: 1Gi}}}]",
          "cpu=1000,memory=" GI },
        { "containers are summed",
          "containers:\n"
          "- {name: a, resources: {requests: {cpu: 250m}}}\n"
          "- {name: b, resources: {requests: {cpu: '1'}}}\n",
          "cpu=1250" },
        { "limits stand in for missing requests only",
          "containers: [{name: a, resources: {requests: {cpu: 500m}, limits: {cpu: '2', memory: 1Gi}}}]",
          "cpu=500,memory=" GI },
        { "explicit zero request beats the limit and is dropped",
          "containers: [{name: a, resources: {requests: {cpu: '0', memory: 1Gi}, limits: {cpu: '2'}}}]",
          "memory=" GI },
        { "zero amounts are dropped",
          "containers: [{name: a, resources: {requests: {cpu: 1m, nvidia.com/gpu: '0'}}}]",
          "cpu=1" },
        { "larger init container wins",
          "initContainers: [{name: i, resources: {requests: {cpu: '3'}}}]\n"
          "containers: [{name: a, resources: {requests: {cpu: '1'}}}]\n",
          "cpu=3000" },
        { "smaller init container does not add",
          "initContainers: [{name: i, resources: {requests: {cpu: 500m}}}]\n"
          "containers: [{name: a, resources: {requests: {cpu: '1'}}}]\n",
          "cpu=1000" },
        { "resource only requested by an init container",
          "initContainers: [{name: i, resources: {requests: {memory: 2Gi}}}]\n"
          "containers: [{name: a, resources: {requests: {cpu: '1'}}}]\n",
          "cpu=1000,memory=2147483648" },
        { "sidecars add to the regular containers",
          "initContainers:\n"
          "- {name: s1, restartPolicy: Always, resources: {requests: {cpu: '1'}}}\n"
          "- {name: s2, restartPolicy: Always, resources: {requests: {cpu: 500m}}}\n"
          "containers: [{name: a, resources: {requests: {cpu: '1'}}}]\n",
          "cpu=2500" },
        { "init container runs next to the sidecars declared before it",
          "initContainers:\n"
          "- {name: s, restartPolicy: Always, resources: {requests: {cpu: '1'}}}\n"
          "- {name: i, resources: {requests: {cpu: '2'}}}\n"
          "containers: [{name: a, resources: {requests: {cpu: '1'}}}]\n",
          "cpu=3000" },
        { "sidecars declared after an init container do not count for it",
          "initContainers:\n"
          "- {name: i, resources: {requests: {cpu: '2'}}}\n"
          "- {name: s, restartPolicy: Always, resources: {requests: {cpu: '1'}}}\n"
          "containers: [{name: a, resources: {requests: {cpu: '1'}}}]\n",
          "cpu=2000" },
        { "sidecar limits used as requests",
          "initContainers: [{name: s, restartPolicy: Always, resources: {limits: {memory: 1Gi}}}]\n"
          "containers: [{name: a}]\n",
          "memory=" GI },
        { "overhead is added on top",
          "containers: [{name: a, resources: {requests: {cpu: '1'}}}]\n"
          "overhead: {cpu: 250m, memory: 120Mi}\n",
          "cpu=1250,memory=125829120" },
        { "overhead added after the init max",
          "initContainers: [{name: i, resources: {requests: {cpu: '4'}}}]\n"
          "containers: [{name: a, resources: {requests: {cpu: '1'}}}]\n"
          "overhead: {cpu: 100m}\n",
          "cpu=4100" },
        { "output sorted by name",
          "containers: [{name: a, resources: {requests: {memory: 1Gi, example.com/foo: '2', cpu: '1'}}}]",
          "cpu=1000,example.com/foo=2,memory=" GI },
        { "whole units round up, as Kueue's Value(); cpu keeps milli",
          "containers: [{name: a, resources: {requests: {memory: '1.5', nvidia.com/gpu: 500m, "
          "cpu: 1500m}}}]",
          "cpu=1500,memory=2,nvidia.com/gpu=1" },
        { "fractions of a unit add up over the containers before rounding",
          "initContainers: [{name: s, restartPolicy: Always, resources: {requests: {memory: '0.5'}}}]\n"
          "containers: [{name: a, resources: {requests: {memory: '1.5', example.com/x: 300m}}},\n"
          "             {name: b, resources: {requests: {memory: '1.5', example.com/x: 300m}}}]\n"
          "overhead: {memory: '0.25', example.com/x: 300m}",
          "example.com/x=1,memory=4" },
        { "memory past 2^63 milli-units is held in bytes",
          "containers: [{name: a, resources: {requests: {memory: 9Pi}}},\n"
          "             {name: b, resources: {requests: {memory: 1e18}}}]",
          "memory=1010133099161583616" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cu_arena a;
        cu_diag d;
        cu_reslist out;
        char got[512];
        cu_arena_init(&a, 0);
        cu_diag_init(&d);
        cu_node *spec = parse1(&a, cases[i].spec);
        cu_err err =
            cu_pod_requests(&a, spec, "Workload ns/w: spec.podSets[0].template.spec", &out, &d);
        if (err != CU_OK || strcmp(cases[i].want, (fmt_list(&out, got, sizeof(got)), got)) != 0)
            fprintf(stderr, "case '%s': err %d got '%s' want '%s' (%s)\n", cases[i].name, err,
                    err ? "" : got, cases[i].want, d.n ? d.msgs[0] : "");
        assert_int_equal(err, CU_OK);
        assert_string_equal(got, cases[i].want);
        assert_int_equal(d.n, 0);
        cu_diag_free(&d);
        cu_arena_free(&a);
    }
}

static void test_requests_errors(void **state)
{
    (void)state;
    static const struct {
        const char *name, *spec;
        cu_err err;
        const char *msgs[3];
    } cases[] = {
        { "invalid quantity",
          "containers:\n"
          "- {name: a, resources: {requests: {cpu: '1'}}}\n"
          "- {name: b, resources: {requests: {cpu: 12x}}}\n",
          CU_EINVAL,
          { "Workload ml/train: spec.podSets[0].template.spec.containers[1].resources.requests.cpu: "
            "invalid quantity \"12x\"" } },
        { "every problem is reported",
          "initContainers: [{name: i, resources: {limits: {memory: lots}}}]\n"
          "containers: [{name: a, resources: {requests: {pods: '1', cpu: -1}}}]\n",
          CU_EINVAL,
          { "Workload ml/train: spec.podSets[0].template.spec.containers[0].resources.requests[pods]: "
            "Invalid value: \"pods\": the key is reserved for internal kueue use",
            "Workload ml/train: spec.podSets[0].template.spec.containers[0].resources.requests.cpu: "
            "must be greater than or equal to 0",
            "Workload ml/train: spec.podSets[0].template.spec.initContainers[0].resources.limits.memory: "
            "invalid quantity \"lots\"" } },
        { "quantity too large",
          "containers: [{name: a, resources: {requests: {cpu: 100P}}}]",
          CU_EINVAL,
          { "Workload ml/train: spec.podSets[0].template.spec.containers[0].resources.requests.cpu: "
            "quantity \"100P\" is too large" } },
        { "sum overflows", /* 9P = 9e18 milli each: fits int64 alone, not twice */
          "containers:\n"
          "- {name: a, resources: {requests: {cpu: 9P}}}\n"
          "- {name: b, resources: {requests: {cpu: 9P}}}\n",
          CU_EINVAL,
          { "Workload ml/train: spec.podSets[0].template.spec: total cpu request overflows" } },
        { "memory sum overflows", /* 5E bytes each: fits int64 alone, not twice */
          "containers:\n"
          "- {name: a, resources: {requests: {memory: 5E}}}\n"
          "- {name: b, resources: {requests: {memory: 5E}}}\n",
          CU_EINVAL,
          { "Workload ml/train: spec.podSets[0].template.spec: total memory request overflows" } },
        { "memory too large", /* 8Ei = 2^63 bytes */
          "containers: [{name: a, resources: {requests: {memory: 8Ei}}}]",
          CU_EINVAL,
          { "Workload ml/train: spec.podSets[0].template.spec.containers[0].resources.requests."
            "memory: quantity \"8Ei\" is too large" } },
        { "containers not a list",
          "containers: {name: a}",
          CU_EINVAL,
          { "Workload ml/train: spec.podSets[0].template.spec.containers: must be a list" } },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cu_arena a;
        cu_diag d;
        cu_reslist out;
        cu_arena_init(&a, 0);
        cu_diag_init(&d);
        cu_node *spec = parse1(&a, cases[i].spec);
        cu_err err =
            cu_pod_requests(&a, spec, "Workload ml/train: spec.podSets[0].template.spec", &out, &d);
        assert_int_equal(err, cases[i].err);
        size_t want = 0;
        while (want < 3 && cases[i].msgs[want])
            want++;
        for (size_t k = 0; k < d.n; k++)
            fprintf(stderr, "  [%s] %s\n", cases[i].name, d.msgs[k]);
        assert_int_equal(d.n, want);
        for (size_t k = 0; k < want; k++) {
            int found = 0;
            for (size_t m = 0; m < d.n; m++)
                found |= strcmp(d.msgs[m], cases[i].msgs[k]) == 0;
            if (!found)
                fprintf(stderr, "missing: %s\n", cases[i].msgs[k]);
            assert_true(found);
        }
        assert_int_equal(out.n, 0);
        cu_diag_free(&d);
        cu_arena_free(&a);
    }
}

static void test_requests_null_where(void **state)
{
    (void)state;
    cu_arena a;
    cu_diag d;
    cu_reslist out;
    cu_arena_init(&a, 0);
    cu_diag_init(&d);
    cu_node *spec = parse1(&a, "containers: [{name: a, resources: {requests: {cpu: x}}}]");
    assert_int_equal(cu_pod_requests(&a, spec, NULL, &out, &d), CU_EINVAL);
    assert_int_equal(d.n, 1);
    assert_string_equal(d.msgs[0], "containers[0].resources.requests.cpu: invalid quantity \"x\"");
    assert_int_equal(cu_pod_requests(&a, NULL, NULL, &out, &d), CU_OK);
    assert_int_equal(out.n, 0);
    cu_diag_free(&d);
    cu_arena_free(&a);
}

#define P9 9000000000000000000LL /* 9P cpu in milli: fits int64 once, not twice */

typedef struct ovf {
    int n;
    char res[4][32];
    int init[4];
} ovf;

static void on_overflow(void *ud, const char *res, int init)
{
    ovf *o = ud;
    if (o->n < 4) {
        snprintf(o->res[o->n], sizeof o->res[0], "%s", res);
        o->init[o->n] = init;
    }
    o->n++;
}

static void test_podreq_rule(void **state)
{
    (void)state;
    cu_podreq p;
    const cu_res app[] = { { "cpu", 1000 }, { "memory", 64 } };
    const cu_res side1[] = { { "cpu", 500 } };
    const cu_res init1[] = { { "cpu", 2000 }, { "gpu", 1000 } };
    const cu_res side2[] = { { "cpu", 4000 } };
    const cu_res init2[] = { { "cpu", 1500 } };
    const cu_res over[] = { { "cpu", 100 }, { "memory", 0 } };
    cu_podreq_init(&p, 0, NULL, NULL);
    cu_podreq_add(&p, CU_CTR_REGULAR, app, 2);
    cu_podreq_add(&p, CU_CTR_SIDECAR, side1, 1);
    cu_podreq_add(&p, CU_CTR_INIT, init1, 2); /* 2000 + 500 before it */
    cu_podreq_add(&p, CU_CTR_SIDECAR, side2, 1);
    cu_podreq_add(&p, CU_CTR_INIT, init2, 1); /* 1500 + 4500 before it */
    cu_podreq_close(&p);
    cu_podreq_overhead(&p, over, 2);
    assert_false(cu_podreq_oom(&p));
    /* cpu: max(1000 + 4500, 2500, 6000) + 100 */
    assert_int_equal(cu_restab_get(&p.total, "cpu"), 6100);
    assert_int_equal(cu_restab_get(&p.total, "memory"), 64);
    assert_int_equal(cu_restab_get(&p.total, "gpu"), 1000); /* only an init container asks */
    assert_int_equal(cu_restab_get(&p.total, "other"), 0);
    assert_null(cu_restab_find(&p.total, "other"));
    cu_podreq_free(&p);
    assert_int_equal(p.total.n, 0);
}

static void test_podreq_overflow(void **state)
{
    (void)state;
    const cu_res big[] = { { "cpu", P9 } }, small[] = { { "cpu", 1 } };
    cu_podreq p;
    ovf o;

    /* checked: an overflowing addition is left out and reported */
    memset(&o, 0, sizeof o);
    cu_podreq_init(&p, 0, on_overflow, &o);
    cu_podreq_add(&p, CU_CTR_REGULAR, big, 1);
    cu_podreq_add(&p, CU_CTR_REGULAR, big, 1);
    cu_podreq_add(&p, CU_CTR_REGULAR, small, 1);
    cu_podreq_add(&p, CU_CTR_SIDECAR, big, 1);
    cu_podreq_add(&p, CU_CTR_INIT, big, 1); /* P9 + the sidecar's P9 */
    cu_podreq_close(&p);                    /* total + sidecars */
    assert_int_equal(o.n, 3);
    assert_string_equal(o.res[0], "cpu");
    assert_int_equal(o.init[0], 0);
    assert_int_equal(o.init[1], 1);
    assert_int_equal(o.init[2], 0);
    assert_int_equal(cu_restab_get(&p.total, "cpu"), P9 + 1);
    assert_null(cu_restab_find(&p.initmax, "cpu"));
    cu_podreq_free(&p);

    /* saturating: sums stop at INT64_MAX, still reported */
    memset(&o, 0, sizeof o);
    cu_podreq_init(&p, 1, on_overflow, &o);
    cu_podreq_add(&p, CU_CTR_SIDECAR, big, 1);
    cu_podreq_add(&p, CU_CTR_INIT, big, 1);
    cu_podreq_add(&p, CU_CTR_REGULAR, small, 1);
    cu_podreq_close(&p);
    cu_podreq_overhead(&p, small, 1);
    assert_int_equal(cu_restab_get(&p.initmax, "cpu"), INT64_MAX);
    assert_int_equal(cu_restab_get(&p.total, "cpu"), INT64_MAX);
    assert_int_equal(o.n, 2); /* the init container, the overhead */
    cu_podreq_free(&p);

    cu_podreq_init(&p, 1, NULL, NULL); /* no callback */
    cu_podreq_add(&p, CU_CTR_REGULAR, big, 1);
    cu_podreq_add(&p, CU_CTR_REGULAR, big, 1);
    cu_podreq_close(&p);
    assert_int_equal(cu_restab_get(&p.total, "cpu"), INT64_MAX);
    cu_podreq_free(&p);
}

static void test_restab(void **state)
{
    (void)state;
    cu_restab t = { 0 };
    char names[20][8];
    for (int i = 0; i < 20; i++) { /* grows past its first block */
        snprintf(names[i], sizeof names[i], "r%d", i);
        assert_int_equal(cu_restab_add_sat(&t, names[i], i), 0);
    }
    assert_int_equal(t.n, 20);
    assert_int_equal(cu_restab_get(&t, "r13"), 13);
    assert_int_equal(cu_restab_add_sat(&t, "r13", INT64_MAX), 0);
    assert_int_equal(cu_restab_get(&t, "r13"), INT64_MAX);
    assert_int_equal(t.n, 20);
    cu_res *r = cu_restab_slot(&t, "new");
    assert_non_null(r);
    assert_int_equal(r->milli, 0);
    assert_ptr_equal(cu_restab_find(&t, "new"), r);
    assert_false(t.oom);
    cu_restab_free(&t);
    assert_int_equal(t.n, 0);
    assert_null(cu_restab_find(&t, "r1"));
}

/* Test vectors from the FIPS 180 examples ("abc", the 448-bit two-block
 * message, one million 'a'); each expected value was also checked with
 * sha1sum when the test was written. */
static void test_sha1_vectors(void **state)
{
    (void)state;
    char hex[41];
    cu_sha1_hex("abc", 3, hex);
    assert_string_equal(hex, "a9993e364706816aba3e25717850c26c9cd0d89d");
    const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    cu_sha1_hex(m, strlen(m), hex);
    assert_string_equal(hex, "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
    cu_sha1_hex("", 0, hex);
    assert_string_equal(hex, "da39a3ee5e6b4b0d3255bfef95601890afd80709");

    cu_sha1 s;
    unsigned char dg[20];
    char chunk[1001];
    memset(chunk, 'a', sizeof(chunk));
    cu_sha1_init(&s);
    for (int i = 0; i < 1000; i++)
        cu_sha1_update(&s, chunk, i % 2 ? 999 : 1001); /* odd split across blocks */
    cu_sha1_final(&s, dg);
    static const unsigned char want[20] = { 0x34, 0xaa, 0x97, 0x3c, 0xd4, 0xc4, 0xda,
                                            0xa4, 0xf6, 0x1e, 0xeb, 0x2b, 0xdb, 0xad,
                                            0x27, 0x31, 0x65, 0x34, 0x01, 0x6f };
    assert_memory_equal(dg, want, 20);
}

/* Expected hashes were computed independently when writing this test:
 *   printf 'Job\nbatch\nsample-job\na1b2c3d4-0000-4000-8000-000000000001' | sha1sum
 *     -> 57a5db0e...
 *   printf 'Job\nbatch\nsample-job\n' | sha1sum -> 4b8c421a...
 *   printf 'Job\nbatch\n<300 x>\nu' | sha1sum -> b01c4af6... */
static void test_job_workload_name(void **state)
{
    (void)state;
    cu_arena a;
    cu_arena_init(&a, 0);
    assert_string_equal(
        cu_job_workload_name(&a, "sample-job", "a1b2c3d4-0000-4000-8000-000000000001"),
        "job-sample-job-57a5d");
    assert_string_equal(cu_job_workload_name(&a, "sample-job", NULL), "job-sample-job-4b8c4");
    assert_string_equal(cu_job_workload_name(&a, "sample-job", ""), "job-sample-job-4b8c4");

    char longname[301];
    memset(longname, 'x', 300);
    longname[300] = '\0';
    const char *n = cu_job_workload_name(&a, longname, "u");
    assert_int_equal(strlen(n), 253);
    assert_memory_equal(n, "job-xxx", 7);
    assert_string_equal(n + 247, "-b01c4");
    cu_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_requests_table),      cmocka_unit_test(test_requests_errors),
        cmocka_unit_test(test_requests_null_where), cmocka_unit_test(test_podreq_rule),
        cmocka_unit_test(test_podreq_overflow),     cmocka_unit_test(test_restab),
        cmocka_unit_test(test_sha1_vectors),        cmocka_unit_test(test_job_workload_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
