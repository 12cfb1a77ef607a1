/*
 * cu_sim.h - `cueue simulate`: load manifests, run the engine to a steady
 * state, render the result as a table, JSON or YAML.
 */
#ifndef CU_SIM_H
#define CU_SIM_H

#include "cu_engine.h"

typedef enum cu_sim_format { CU_SIM_TABLE = 0, CU_SIM_JSON, CU_SIM_YAML } cu_sim_format;

typedef struct cu_sim_opts {
    cu_sim_format format;
    int one_head_per_cycle;    /* run Kueue's exact one-head loop */
    int max_cycles;            /* 0 = default (100000) */
    int64_t now_ms;            /* simulated "now"; 0 = 2026-01-01T00:00:00Z */
    int fair_sharing;          /* reserved for issue 3 */
} cu_sim_opts;

/* Loads paths, validates, runs the engine until nothing changes and
 * appends the rendering to out. Diagnostics (warnings too) go to d.
 * Returns CU_OK; CU_ESYNTAX or CU_EINVAL (nothing rendered) on bad input;
 * CU_ENOMEM. Borrows everything. */
cu_err cu_sim_run(const char *const *paths, size_t npaths,
                  const cu_sim_opts *opts, cu_buf *out, cu_diag *d);

/* Renders an engine's current state (after cu_engine_run) into out. */
cu_err cu_sim_render(cu_engine *e, const cu_world *w, const cu_sim_opts *opts,
                     cu_buf *out);

#endif
