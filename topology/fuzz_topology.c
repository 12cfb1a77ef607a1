/*
 * fuzz_topology.c - libFuzzer target for topology/: the bytes draw a TAS
 * flavor (blocks, racks, hosts, their GPUs, usage, readiness, taints) and
 * two pod sets, placed and checked against the model of
 * test_topo_check.h (room on every node, required domains, whole slices,
 * determinism, failure exactly when no placement exists).
 */
#include <stdint.h>
#include <stdlib.h>

#include "test_topo_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tc_src s = { .p = data, .n = size };
    int line = tc_check(&s);
    if (line) {
        fprintf(stderr, "fuzz_topology: check at test_topo_check.h:%d failed\n", line);
        abort();
    }
    return 0;
}
