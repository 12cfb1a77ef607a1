/*
 * test_exclude.c - resources.excludeResourcePrefixes: prefixes drop the
 * requests they start, in every pod set of every Workload, the others
 * keep their order; no Configuration or no prefixes change nothing.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "cu_exclude.h"

/* "name=milli,..." of l, in list order. */
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
    static const char *const names[4] = { "cpu", "example.com/gpu", "ephemeral-storage",
                                          "memory" };
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
    cu_world_exclude_resources(&f.w, &cf);
    char got[256];
    fmt_list(&f.ps[0].requests, got, sizeof(got));
    assert_string_equal(got, "cpu=1000,memory=1003");
    fmt_list(&f.ps[1].requests, got, sizeof(got));
    assert_string_equal(got, "cpu=2000,memory=2003");
    fmt_list(&f.ps[2].requests, got, sizeof(got));
    assert_string_equal(got, "cpu=3000,memory=3003");
    /* applied again with one more prefix: only memory goes */
    cf.exclude_resource_prefixes = (cu_strs){ 3, px };
    cu_world_exclude_resources(&f.w, &cf);
    fmt_list(&f.ps[2].requests, got, sizeof(got));
    assert_string_equal(got, "cpu=3000");
}

static void test_nothing_to_exclude(void **state)
{
    (void)state;
    fixture f;
    fixture_init(&f);
    cu_config cf;
    memset(&cf, 0, sizeof(cf));
    cu_world_exclude_resources(&f.w, &cf);   /* no prefixes */
    cu_world_exclude_resources(&f.w, NULL);  /* no Configuration */
    cu_world_exclude_resources(NULL, &cf);
    const char *px[] = { "cpus", "gpu" };    /* longer than a name; not a prefix */
    cf.exclude_resource_prefixes = (cu_strs){ 2, px };
    cu_world_exclude_resources(&f.w, &cf);
    char got[256];
    fmt_list(&f.ps[1].requests, got, sizeof(got));
    assert_string_equal(got, "cpu=2000,example.com/gpu=2001,ephemeral-storage=2002,memory=2003");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prefixes_drop_requests),
        cmocka_unit_test(test_nothing_to_exclude),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
