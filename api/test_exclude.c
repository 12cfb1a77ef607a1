/*
 * test_exclude.c - a Workload's effective requests: excludeResourcePrefixes
 * drop the requests they start, in every pod set of every Workload, the
 * others keep their order; no Configuration or no prefixes change nothing.
 * Transformations (Kueue's applyResourceTransformations): Retain and
 * Replace, outputs per whole unit of input, multiplyBy, sums, rounding,
 * after the exclusions, and what `explain` is told (from, pre_xform).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "cu_exclude.h"
#include "cu_quantity.h"

/* Asserts that l holds exactly the resources names, in that order, each
 * with the amount the fixture gave it (pod set p: (p + 1) * 1000 + its
 * index among the four names). */
static void assert_names(const cu_reslist *l, int p, const char *const names[])
{
    static const char *const all[4] = { "cpu", "example.com/gpu", "ephemeral-storage", "memory" };
    size_t n = 0;
    while (names[n])
        n++;
    assert_int_equal(l->n, n);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(l->items[i].name, names[i]);
        int k = 0;
        while (k < 4 && strcmp(all[k], names[i]) != 0)
            k++;
        assert_int_equal(l->items[i].milli, (p + 1) * 1000 + k);
    }
}

/* Two Workloads, the first with two pod sets, over the same resources. */
typedef struct fixture {
    cu_res res[3][4];
    cu_podset ps[3];
    cu_workload wl[2];
    cu_workload *wls[2];
    cu_world w;
} fixture;

static void fixture_init(fixture *f)
{
    static const char *const names[4] = { "cpu", "example.com/gpu", "ephemeral-storage", "memory" };
    memset(f, 0, sizeof(*f));
    for (int p = 0; p < 3; p++) {
        for (int i = 0; i < 4; i++)
            f->res[p][i] = (cu_res){ names[i], (p + 1) * 1000 + i };
        f->ps[p].requests = (cu_reslist){ 4, f->res[p] };
    }
    f->wl[0].npodsets = 2;
    f->wl[0].podsets = &f->ps[0];
    f->wl[1].npodsets = 1;
    f->wl[1].podsets = &f->ps[2];
    f->wls[0] = &f->wl[0];
    f->wls[1] = &f->wl[1];
    f->w.workloads.n = 2;
    f->w.workloads.cap = 2;
    f->w.workloads.items = f->wls;
}

static void test_prefixes_drop_requests(void **state)
{
    (void)state;
    fixture f;
    fixture_init(&f);
    const char *px[] = { "example.com/", "ephemeral-", "mem" };
    cu_config cf;
    memset(&cf, 0, sizeof(cf));
    cf.exclude_resource_prefixes = (cu_strs){ 2, px };
    (void)cu_world_effective_requests(&f.w, &cf);
    const char *const cpu_mem[] = { "cpu", "memory", NULL };
    assert_names(&f.ps[0].requests, 0, cpu_mem);
    assert_names(&f.ps[1].requests, 1, cpu_mem);
    assert_names(&f.ps[2].requests, 2, cpu_mem);
    /* applied again with one more prefix: only memory goes */
    cf.exclude_resource_prefixes = (cu_strs){ 3, px };
    (void)cu_world_effective_requests(&f.w, &cf);
    const char *const cpu[] = { "cpu", NULL };
    assert_names(&f.ps[2].requests, 2, cpu);
}

static void test_nothing_to_exclude(void **state)
{
    (void)state;
    fixture f;
    fixture_init(&f);
    cu_config cf;
    memset(&cf, 0, sizeof(cf));
    (void)cu_world_effective_requests(&f.w, &cf);  /* no prefixes */
    (void)cu_world_effective_requests(&f.w, NULL); /* no Configuration */
    (void)cu_world_effective_requests(NULL, &cf);
    const char *px[] = { "cpus", "gpu" }; /* longer than a name; not a prefix */
    cf.exclude_resource_prefixes = (cu_strs){ 2, px };
    (void)cu_world_effective_requests(&f.w, &cf);
    const char *const every[] = { "cpu", "example.com/gpu", "ephemeral-storage", "memory", NULL };
    assert_names(&f.ps[1].requests, 1, every);
}

/* ---- transformations ---- */

/* One Workload with one pod set whose requests are given as name and
 * amount (in the resource's unit: milli for cpu, whole units otherwise)
 * pairs, in w's arena. Transformation outputs are milli per whole unit. */
typedef struct xw {
    cu_world w;
    cu_workload wl;
    cu_workload *wls[1];
    cu_podset ps;
} xw;

static void xw_init(xw *x, const char *const *names, const int64_t *milli, size_t n)
{
    memset(x, 0, sizeof(*x));
    cu_arena_init(&x->w.arena, 0);
    cu_res *r = cu_arena_alloc(&x->w.arena, n * sizeof(*r));
    assert_non_null(r);
    for (size_t i = 0; i < n; i++)
        r[i] = (cu_res){ names[i], milli[i] };
    x->ps.name = "main";
    x->ps.count = 1;
    x->ps.requests = (cu_reslist){ n, r };
    x->wl.npodsets = 1;
    x->wl.podsets = &x->ps;
    x->wls[0] = &x->wl;
    x->w.workloads.n = 1;
    x->w.workloads.cap = 1;
    x->w.workloads.items = x->wls;
}

/* Asserts the requests are exactly names[i] = milli[i], in that order. */
static void xw_expect(const xw *x, const char *const *names, const int64_t *milli, size_t n)
{
    const cu_reslist *l = &x->ps.requests;
    if (l->n != n) {
        for (size_t i = 0; i < l->n; i++)
            print_message("  %s=%lld\n", l->items[i].name, (long long)l->items[i].milli);
        fail_msg("%zu requests, want %zu", l->n, n);
    }
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(l->items[i].name, names[i]);
        assert_int_equal(l->items[i].milli, milli[i]);
    }
}

static const char *from_of(const xw *x, const char *name)
{
    for (size_t i = 0; i < x->ps.requests.n; i++)
        if (strcmp(x->ps.requests.items[i].name, name) == 0)
            return x->ps.from ? x->ps.from[i] : NULL;
    fail_msg("no request %s", name);
    return NULL;
}

/* The credits example: Retain keeps cpu and adds 1 cpu_credits per CPU;
 * a 2500m request counts 3 whole CPUs (Quantity.Value rounds up), the
 * retained cpu stays 2500m. */
static void test_retain_adds_outputs(void **state)
{
    (void)state;
    cu_res out[] = { { "cpu_credits", 1000 } };
    cu_xform t = { .input = "cpu", .outputs = { 1, out } };
    cu_config cf = { 0 };
    cf.nxforms = 1;
    cf.xforms = &t;
    xw x;
    const char *in[] = { "cpu", "memory" };
    xw_init(&x, in, (int64_t[]){ 2500, 4096 }, 2);
    assert_int_equal(cu_world_effective_requests(&x.w, &cf), CU_OK);
    const char *want[] = { "cpu", "cpu_credits", "memory" }; /* sorted, as every list */
    xw_expect(&x, want, (int64_t[]){ 2500, 3, 4096 }, 3);
    assert_string_equal(from_of(&x, "cpu_credits"), "cpu");
    assert_null(from_of(&x, "cpu"));
    assert_int_equal(x.ps.pre_xform.n, 2);
    assert_string_equal(x.ps.pre_xform.items[0].name, "cpu");
    assert_int_equal(x.ps.pre_xform.items[0].milli, 2500);
    cu_arena_free(&x.w.arena);
}

/* Replace drops the input; outputs are a multiplier per unit (250m per
 * GPU as cpu stays milli, 5Gi per GPU rounded to whole units); outputs of
 * two inputs and a resource also requested as is add up. A pod set no
 * transformation matches is left as it was (no from, no pre_xform). */
static void test_replace_multiplier_and_sums(void **state)
{
    (void)state;
    cu_res o1[] = { { "cpu", 250 }, { "example.com/credits", 1500 } };
    cu_res o2[] = { { "example.com/credits", 10000 } };
    cu_xform t[] = {
        { .input = "nvidia.com/gpu", .strategy = CU_XFORM_REPLACE, .outputs = { 2, o1 } },
        { .input = "example.com/fpga", .strategy = CU_XFORM_REPLACE, .outputs = { 1, o2 } },
        { .input = "example.com/unused", .strategy = CU_XFORM_REPLACE },
    };
    cu_config cf = { 0 };
    cf.nxforms = 3;
    cf.xforms = t;
    xw x;
    const char *in[] = { "cpu", "nvidia.com/gpu", "example.com/credits", "example.com/fpga" };
    xw_init(&x, in, (int64_t[]){ 1000, 3, 2, 1 }, 4);
    assert_int_equal(cu_world_effective_requests(&x.w, &cf), CU_OK);
    /* cpu 1 + 3 * 250m; credits 2 + 3 * 1.5 (4.5) + 1 * 10 = 16.5, then up */
    const char *want[] = { "cpu", "example.com/credits" };
    xw_expect(&x, want, (int64_t[]){ 1750, 17 }, 2);
    assert_string_equal(from_of(&x, "cpu"), "nvidia.com/gpu");
    assert_string_equal(from_of(&x, "example.com/credits"), "nvidia.com/gpu, example.com/fpga");

    /* Replace without outputs: the input is ignored; others untouched */
    xw y;
    const char *in2[] = { "example.com/unused", "memory" };
    xw_init(&y, in2, (int64_t[]){ 1, 5 }, 2);
    assert_int_equal(cu_world_effective_requests(&y.w, &cf), CU_OK);
    xw_expect(&y, (const char *[]){ "memory" }, (int64_t[]){ 5 }, 1);
    /* an output of 0 is no request (as cu_pod_requests drops zeros) */
    xw v;
    cu_res zero[] = { { "example.com/credits", 0 } };
    cu_xform tz = { .input = "memory", .outputs = { 1, zero } };
    cu_config cz = { 0 };
    cz.nxforms = 1;
    cz.xforms = &tz;
    xw_init(&v, (const char *[]){ "memory" }, (int64_t[]){ 5 }, 1);
    assert_int_equal(cu_world_effective_requests(&v.w, &cz), CU_OK);
    xw_expect(&v, (const char *[]){ "memory" }, (int64_t[]){ 5 }, 1);
    cu_arena_free(&v.w.arena);
    xw z;
    xw_init(&z, (const char *[]){ "memory" }, (int64_t[]){ 5 }, 1);
    assert_int_equal(cu_world_effective_requests(&z.w, &cf), CU_OK);
    assert_null(z.ps.from);
    assert_int_equal(z.ps.pre_xform.n, 0);
    cu_arena_free(&x.w.arena);
    cu_arena_free(&y.w.arena);
    cu_arena_free(&z.w.arena);
}

/* multiplyBy (Kueue's KEP story 3): 2 GPUs of 1024 gpumem each make 2048
 * total-gpumem; the input is retained multiplied, as Kueue does; without
 * the multiplyBy resource the input counts as is. */
static void test_multiply_by(void **state)
{
    (void)state;
    cu_res out[] = { { "nvidia.com/total-gpumem", 1000 } };
    cu_xform t = { .input = "nvidia.com/gpu",
                   .multiply_by = "nvidia.com/gpumem",
                   .outputs = { 1, out } };
    cu_config cf = { 0 };
    cf.nxforms = 1;
    cf.xforms = &t;
    xw x;
    const char *in[] = { "nvidia.com/gpu", "nvidia.com/gpumem" };
    xw_init(&x, in, (int64_t[]){ 2, 1024 }, 2);
    assert_int_equal(cu_world_effective_requests(&x.w, &cf), CU_OK);
    const char *want[] = { "nvidia.com/gpu", "nvidia.com/gpumem", "nvidia.com/total-gpumem" };
    xw_expect(&x, want, (int64_t[]){ 2048, 1024, 2048 }, 3);
    xw y;
    xw_init(&y, (const char *[]){ "nvidia.com/gpu" }, (int64_t[]){ 2 }, 1);
    assert_int_equal(cu_world_effective_requests(&y.w, &cf), CU_OK);
    const char *want2[] = { "nvidia.com/gpu", "nvidia.com/total-gpumem" };
    xw_expect(&y, want2, (int64_t[]){ 2, 2 }, 2);
    cu_arena_free(&x.w.arena);
    cu_arena_free(&y.w.arena);
}

/* Exclusions come first (an excluded input transforms nothing) and do not
 * apply to outputs; a product past int64 saturates, never wraps, and one
 * that fits in whole units is exact even where its thousandths would not
 * fit; a cpu output is in milli (0.5 per unit of 3 units: 1500m) and an
 * output in whole units rounds up only once, after the sum. */
static void test_after_exclusions_and_saturation(void **state)
{
    (void)state;
    cu_res o1[] = { { "example.com/credits", 2000 } };
    cu_res o2[] = { { "example.com/credits", 1000 } };
    cu_xform t[] = {
        { .input = "example.com/gpu", .outputs = { 1, o1 } },
        { .input = "cpu", .outputs = { 1, o2 } },
        { .input = "memory", .strategy = CU_XFORM_REPLACE, .outputs = { 1, o1 } },
    };
    const char *px[] = { "example.com/g" };
    cu_config cf = { 0 };
    cf.exclude_resource_prefixes = (cu_strs){ 1, px };
    cf.nxforms = 3;
    cf.xforms = t;
    xw x;
    const char *in[] = { "example.com/gpu", "cpu" };
    xw_init(&x, in, (int64_t[]){ 4, 1000 }, 2);
    assert_int_equal(cu_world_effective_requests(&x.w, &cf), CU_OK);
    const char *want[] = { "cpu", "example.com/credits" };
    xw_expect(&x, want, (int64_t[]){ 1000, 1 }, 2);
    xw y;
    xw_init(&y, (const char *[]){ "memory" }, (int64_t[]){ INT64_MAX / 2 + 1 }, 1);
    assert_int_equal(cu_world_effective_requests(&y.w, &cf), CU_OK);
    xw_expect(&y, (const char *[]){ "example.com/credits" }, (int64_t[]){ CU_QTY_INF }, 1);
    xw z; /* 4e18 bytes * 2 = 8e18 credits: fits, exact */
    xw_init(&z, (const char *[]){ "memory" }, (int64_t[]){ INT64_C(4000000000000000000) }, 1);
    assert_int_equal(cu_world_effective_requests(&z.w, &cf), CU_OK);
    xw_expect(&z, (const char *[]){ "example.com/credits" },
              (int64_t[]){ INT64_C(8000000000000000000) }, 1);
    /* 0.3 + 0.3 + 0.3 credits per unit of three inputs: 0.9, one unit;
     * 0.5 cpu per unit of 3 units: 1500m */
    cu_res h[] = { { "example.com/credits", 300 }, { "cpu", 500 } };
    cu_xform th[] = {
        { .input = "example.com/a", .strategy = CU_XFORM_REPLACE, .outputs = { 2, h } },
        { .input = "example.com/b", .strategy = CU_XFORM_REPLACE, .outputs = { 1, h } },
        { .input = "example.com/c", .strategy = CU_XFORM_REPLACE, .outputs = { 1, h } },
    };
    cu_config ch = { 0 };
    ch.nxforms = 3;
    ch.xforms = th;
    xw u;
    xw_init(&u, (const char *[]){ "example.com/a", "example.com/b", "example.com/c" },
            (int64_t[]){ 3, 1, 1 }, 3);
    assert_int_equal(cu_world_effective_requests(&u.w, &ch), CU_OK);
    xw_expect(&u, (const char *[]){ "cpu", "example.com/credits" }, (int64_t[]){ 1500, 2 }, 2);
    cu_arena_free(&x.w.arena);
    cu_arena_free(&y.w.arena);
    cu_arena_free(&z.w.arena);
    cu_arena_free(&u.w.arena);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prefixes_drop_requests),
        cmocka_unit_test(test_nothing_to_exclude),
        cmocka_unit_test(test_retain_adds_outputs),
        cmocka_unit_test(test_replace_multiplier_and_sums),
        cmocka_unit_test(test_multiply_by),
        cmocka_unit_test(test_after_exclusions_and_saturation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
