/*
 * fuzz_simulate.c - libFuzzer target for the whole `cueue simulate` path:
 * arbitrary bytes are parsed as YAML/JSON, decoded into objects and
 * validated; a world that decoded is loaded into the engine, run to a
 * steady state with the quota invariants checked after every cycle, and
 * rendered in every format. A world that fails validation goes through the
 * engine too (unless two objects share a name, which an API server cannot
 * hold): that is what `cueue controller` does with objects Kueue's
 * webhooks would refuse (the engine makes their queues inactive). Any
 * crash, sanitizer report, invariant violation or error without a message
 * is a finding.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cu_sim.h"

#include <string.h>

/* 1 when two objects of one kind in v share namespace and name. */
#define DUP_IN(v) \
    dup_metas((const void *const *)(v).items, (v).n, \
              (size_t)((const char *)&(v).items[0]->meta - (const char *)(v).items[0]))
static int dup_metas(const void *const *items, size_t n, size_t off)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < i; j++) {
            const cu_meta *a = (const cu_meta *)((const char *)items[i] + off);
            const cu_meta *b = (const cu_meta *)((const char *)items[j] + off);
            if (!strcmp(a->name ? a->name : "", b->name ? b->name : "") &&
                !strcmp(a->ns ? a->ns : "", b->ns ? b->ns : ""))
                return 1;
        }
    return 0;
}

static int has_duplicates(const cu_world *w)
{
    return (w->flavors.n && DUP_IN(w->flavors)) || (w->cqs.n && DUP_IN(w->cqs)) ||
           (w->cohorts.n && DUP_IN(w->cohorts)) || (w->lqs.n && DUP_IN(w->lqs)) ||
           (w->workloads.n && DUP_IN(w->workloads)) || (w->wpcs.n && DUP_IN(w->wpcs)) ||
           (w->pcs.n && DUP_IN(w->pcs)) || (w->namespaces.n && DUP_IN(w->namespaces)) ||
           (w->topologies.n && DUP_IN(w->topologies)) || (w->nodes.n && DUP_IN(w->nodes)) ||
           (w->pods.n && DUP_IN(w->pods));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cu_arena a;
    cu_arena_init(&a, 0);
    cu_diag d;
    cu_diag_init(&d);
    cu_world w;
    cu_world_init(&w);
    cu_doc *docs;
    size_t nd;
    if (cu_doc_parse("fuzz.yaml", (const char *)data, size, &a, &docs, &nd, &d) != CU_OK) {
        if (d.nerrors == 0)
            abort(); /* a failure must say why */
        goto out;
    }
    int bad = 0;
    for (size_t i = 0; i < nd; i++) {
        cu_err err = cu_world_decode(&w, &docs[i], &d);
        if (err == CU_EINVAL && d.nerrors == 0)
            abort();
        bad |= err != CU_OK;
    }
    cu_err gerr = cu_world_pod_groups(&w, &d); /* the pod groups' Workloads */
    if (gerr == CU_EINVAL && d.nerrors == 0)
        abort();
    bad |= gerr != CU_OK;
    if (bad || (cu_world_validate(&w, &d) != CU_OK && has_duplicates(&w)))
        goto out;
    int64_t now = 1767225600000LL;
    cu_engine_opts o = { .clock = { cu_clock_fake_now, &now } };
    cu_engine *e = cu_engine_new(&o);
    if (!e)
        goto out;
    if (cu_engine_load(e, &w, &d) == CU_OK) {
        for (int c = 0; c < 1000; c++) {
            cu_cycle_stats st;
            if (cu_engine_cycle(e, &st) != CU_OK)
                break;
            cu_diag inv;
            cu_diag_init(&inv);
            if (cu_engine_check_invariants(e, &inv) != CU_OK) {
                fprintf(stderr, "invariant: %s\n", inv.n ? inv.msgs[0] : "?");
                abort();
            }
            cu_diag_free(&inv);
            if (!st.progress)
                break;
        }
        for (int f = CU_SIM_TABLE; f <= CU_SIM_YAML; f++) {
            cu_sim_opts so = { .format = (cu_sim_format)f, .now_ms = now };
            cu_buf out;
            cu_buf_init(&out, 0);
            cu_sim_render(e, &w, &so, &out);
            cu_buf_free(&out);
        }
    }
    cu_engine_free(e);
out:
    cu_world_free(&w);
    cu_diag_free(&d);
    cu_arena_free(&a);
    return 0;
}
