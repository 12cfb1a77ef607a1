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
    int one_head_per_cycle;     /* run Kueue's exact one-head loop */
    int max_cycles;             /* 0 = default (100000) */
    int64_t now_ms;             /* simulated "now"; 0 = 2026-01-01T00:00:00Z */
    int fair_sharing;           /* cu_sim_run: force Kueue's fair sharing on
                                  (--fair-sharing), whatever the
                                  Configuration says. cu_sim_render: render
                                  the fair-sharing status (weightedShare,
                                  cohorts) */
    const char *config_path;    /* Kueue's controller Configuration file
                                  (--config), or NULL. Without it, a
                                  Configuration found among the inputs is
                                  used; with it, those are ignored with a
                                  warning */
    const char *const *explain; /* --explain: nexplain "[NAMESPACE/]NAME"
                                    (no namespace: "default") of Workloads
                                    or Jobs (a Job stands for the Workload
                                    built from it). When nexplain > 0,
                                    cu_sim_run appends the explanation of
                                    each (cu_engine_explain, in the order
                                    given) instead of the rendering: text
                                    for CU_SIM_TABLE (after the table when
                                    explain_after_table is set), a JSON
                                    array of cu_engine_explain_doc
                                    documents for CU_SIM_JSON, a YAML
                                    stream of them for CU_SIM_YAML. A name
                                    the inputs do not have is CU_ENOTFOUND
                                    with an error in d, checked before the
                                    engine runs. Borrowed. */
    size_t nexplain;
    int explain_after_table; /* -o table given explicitly */
} cu_sim_opts;

/* Loads paths, validates, reads the controller Configuration (opts->
 * config_path, else the one among the inputs; more than one among the
 * inputs is an error), runs the engine with its fairSharing and
 * admissionFairSharing settings until nothing changes and appends the
 * rendering (or the explanations, see opts->explain) to out. Diagnostics
 * (warnings too) go to d.
 * Returns CU_OK; CU_ESYNTAX or CU_EINVAL (nothing rendered) on bad input;
 * CU_ENOTFOUND (nothing rendered) for an --explain name the inputs do not
 * have; CU_ENOMEM. Borrows everything. */
cu_err cu_sim_run(const char *const *paths, size_t npaths, const cu_sim_opts *opts, cu_buf *out,
                  cu_diag *d);

/* Renders an engine's current state (after cu_engine_run) into out; the
 * fair-sharing fields only when opts->fair_sharing is set. */
cu_err cu_sim_render(cu_engine *e, const cu_world *w, const cu_sim_opts *opts, cu_buf *out);

#endif
