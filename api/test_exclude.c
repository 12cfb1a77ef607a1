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

#include <string.h>

#include "cu_exclude.h"

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
    cu_world_exclude_resources(&f.w, &cf);
    const char *const cpu_mem[] = { "cpu", "memory", NULL };
    assert_names(&f.ps[0].requests, 0, cpu_mem);
    assert_names(&f.ps[1].requests, 1, cpu_mem);
    assert_names(&f.ps[2].requests, 2, cpu_mem);
    /* applied again with one more prefix: only memory goes */
    cf.exclude_resource_prefixes = (cu_strs){ 3, px };
    cu_world_exclude_resources(&f.w, &cf);
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
    cu_world_exclude_resources(&f.w, &cf);  /* no prefixes */
    cu_world_exclude_resources(&f.w, NULL); /* no Configuration */
    cu_world_exclude_resources(NULL, &cf);
    const char *px[] = { "cpus", "gpu" }; /* longer than a name; not a prefix */
    cf.exclude_resource_prefixes = (cu_strs){ 2, px };
    cu_world_exclude_resources(&f.w, &cf);
    const char *const every[] = { "cpu", "example.com/gpu", "ephemeral-storage", "memory", NULL };
    assert_names(&f.ps[1].requests, 1, every);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prefixes_drop_requests),
        cmocka_unit_test(test_nothing_to_exclude),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
