/*
 * bench_topology.c - figures of topology/ (TAS placement) on a generated
 * cluster: N nodes of 8 GPUs in blocks of 8 racks of 16 nodes, a random
 * third of each node's GPUs held by bound single-GPU pods (seeded), and
 * the time of one tree build and of placements: required rack, preferred
 * rack, unconstrained, and the "pods placeable" helper.
 *
 *   cueue_bench_topology [NODES [ROUNDS]]    (defaults 1000, 200)
 */
#include <stdio.h>
#include <stdlib.h>

#include "cu_clock.h"
#include "cu_tas.h"

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static double time_place(cu_tas *t, const cu_tas_request *q, int rounds, int *ok)
{
    int64_t t0 = cu_clock_mono_ns();
    *ok = 0;
    for (int i = 0; i < rounds; i++) {
        cu_tas_result r;
        if (cu_tas_place(t, q, 1, NULL, &r) == CU_OK)
            (*ok)++;
        cu_tas_result_free(&r);
    }
    return (double)(cu_clock_mono_ns() - t0) / rounds / 1000.0;
}

int main(int argc, char **argv)
{
    int nodes = argc > 1 ? atoi(argv[1]) : 1000, rounds = argc > 2 ? atoi(argv[2]) : 200;
    if (nodes <= 0 || rounds <= 0) {
        fprintf(stderr, "usage: cueue_bench_topology [NODES [ROUNDS]]\n");
        return 2;
    }
    static const char *const levels[] = { "cloud.provider.com/block", "cloud.provider.com/rack",
                                          CU_TAS_HOSTNAME };
    cu_tas_flavor f = { .name = "bench", .nlevels = 3, .levels = levels };
    cu_tas *t = cu_tas_new(&f);
    if (!t)
        return 1;
    uint64_t seed = 42;
    cu_res one_r[] = { { "cpu", 1000 }, { "nvidia.com/gpu", 1 } };
    cu_reslist one = { 2, one_r };
    char name[64], block[32], rack[32];
    for (int i = 0; i < nodes; i++) {
        snprintf(name, sizeof name, "node-%05d", i);
        snprintf(block, sizeof block, "b%d", i / 128);
        snprintf(rack, sizeof rack, "b%d-r%d", i / 128, (i / 16) % 8);
        cu_kv l[] = { { levels[0], block }, { levels[1], rack }, { levels[2], name } };
        cu_kvs labels = { 3, l };
        cu_res a[] = { { "cpu", 64000 }, { "nvidia.com/gpu", 8 }, { "pods", 110 } };
        cu_reslist alloc = { 3, a };
        cu_tas_node n = { .name = name, .labels = &labels, .allocatable = &alloc, .ready = 1 };
        if (cu_tas_node_set(t, &n) != CU_OK ||
            cu_tas_usage(t, name, &one, (int32_t)(rnd(&seed) % 6), 1) != CU_OK)
            return 1;
    }
    int64_t t0 = cu_clock_mono_ns();
    size_t nd = cu_tas_ndomains(t, 2);
    double build_us = (double)(cu_clock_mono_ns() - t0) / 1000.0;
    printf("nodes %d, leaves %zu, racks %zu, blocks %zu; tree build %.0f us\n", nodes, nd,
           cu_tas_ndomains(t, 1), cu_tas_ndomains(t, 0), build_us);
    cu_res four_r[] = { { "cpu", 4000 }, { "nvidia.com/gpu", 4 } };
    cu_reslist four = { 2, four_r };
    struct {
        const char *what;
        cu_tas_request q;
    } cases[] = {
        { "required rack, 8 pods x 4 GPUs",
          { .count = 8, .per_pod = &four, .mode = CU_TAS_REQUIRED, .level = levels[1] } },
        { "preferred rack, 64 pods x 4 GPUs",
          { .count = 64, .per_pod = &four, .mode = CU_TAS_PREFERRED, .level = levels[1] } },
        { "unconstrained, 256 pods x 1 GPU",
          { .count = 256, .per_pod = &one, .mode = CU_TAS_UNCONSTRAINED } },
        { "required rack, 1000 pods (no fit)",
          { .count = 1000, .per_pod = &four, .mode = CU_TAS_REQUIRED, .level = levels[1] } },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int ok;
        double us = time_place(t, &cases[i].q, rounds, &ok);
        printf("%-36s %8.1f us per placement (%s)\n", cases[i].what, us,
               ok ? "fits" : "does not fit");
    }
    t0 = cu_clock_mono_ns();
    int64_t p = 0;
    for (int i = 0; i < rounds; i++)
        p = cu_tas_placeable(t, &four, NULL, NULL, 0);
    printf("%-36s %8.1f us (%lld pods of 4 GPUs)\n", "placeable",
           (double)(cu_clock_mono_ns() - t0) / rounds / 1000.0, (long long)p);
    t0 = cu_clock_mono_ns();
    for (int i = 0; i < rounds; i++)
        cu_tas_usage(t, "node-00000", &one, 1, i % 2 ? -1 : 1);
    printf("%-36s %8.3f us\n", "usage update", (double)(cu_clock_mono_ns() - t0) / rounds / 1000.0);
    cu_tas_free(t);
    return 0;
}
