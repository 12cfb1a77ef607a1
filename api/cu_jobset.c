/*
 * cu_jobset.c - Kueue's rules for a JobSet's Workload.
 */
#include "cu_jobset.h"
#include "cu_decode_int.h"
#include "cu_job.h"
#include "cu_topology.h"

const char *cu_jobset_workload_name(cu_arena *a, const char *name, const char *uid)
{
    return cu_owner_workload_name(a, "JobSet", CU_JOBSET_GROUP, name, uid);
}

int32_t cu_jobset_podset_count(int32_t replicas, int has_par, int32_t par, int has_comp,
                               int32_t comp)
{
    int64_t n = (int64_t)replicas * cu_job_podset_count(has_par, par, has_comp, comp);
    return n < 0 || n > INT32_MAX ? -1 : (int32_t)n;
}

int cu_jobset_cond_finished(const char *t, const char *s, int *failed)
{
    return cu_cond_finished(t, s, "Completed", failed);
}

/* A JobSet with the queue-name label, as the Workload Kueue would create
 * for it: a pod set per replicated Job. */
void cu_dec_jobset(dctx *c, const cu_node *root, const cu_meta *jm, cu_workload *wl)
{
    char q[PATHMAX], b[PATHMAX];
    wl->meta = *jm;
    wl->meta.name = cu_jobset_workload_name(c->a, jm->name, jm->uid);
    if (!wl->meta.name)
        c->oom = 1;
    wl->job_name = jm->name;
    wl->queue_name = cu_kvs_get(&jm->labels, CU_LABEL_QUEUE_NAME);
    wl->active = 1;
    const cu_node *spec = cu_dec_want_map(c, cu_node_get(root, "spec"), "spec");
    const cu_node *rjs =
        cu_dec_want_seq(c, cu_node_get(spec, "replicatedJobs"), "spec.replicatedJobs");
    if (!rjs || !rjs->n) {
        cu_dec_err(c, "spec.replicatedJobs", "Required value: must have at least 1 item");
        return;
    }
    wl->podsets = cu_dec_alloc(c, rjs->n * sizeof(*wl->podsets));
    if (!wl->podsets)
        return;
    wl->npodsets = rjs->n;
    const char *pcn = NULL;
    for (size_t i = 0; i < rjs->n; i++) {
        cu_podset *ps = &wl->podsets[i];
        cu_dec_path(b, "spec.replicatedJobs", "[%zu]", i);
        const cu_node *rj = cu_dec_want_map(c, rjs->vals[i], b);
        ps->name = cu_dec_strdup(c, cu_dec_str(c, rj, "name", b));
        if (!ps->name)
            cu_dec_err(c, cu_dec_path(q, b, "name"), "Required value");
        int32_t replicas = 1, par = 1, comp = 0;
        if (cu_dec_i32(c, rj, "replicas", b, &replicas) && replicas < 0) {
            cu_dec_err(c, cu_dec_path(q, b, "replicas"), "must be greater than or equal to 0");
            replicas = 0;
        }
        const cu_node *js = cu_dec_want_map(c, cu_node_path(rj, "template.spec"),
                                            cu_dec_path(q, b, "template.spec"));
        int has_par = cu_dec_i32(c, js, "parallelism", q, &par);
        int has_comp = cu_dec_i32(c, js, "completions", q, &comp);
        if ((has_par && par < 0) || (has_comp && comp < 0))
            cu_dec_err(c, q, "parallelism and completions must be greater than or equal to 0");
        ps->count = cu_jobset_podset_count(replicas, has_par, par, has_comp, comp);
        if (ps->count < 0) {
            cu_dec_err(c, cu_dec_path(q, b, "replicas"),
                       "replicas times the pods of a Job "
                       "does not fit in an int32");
            ps->count = 0;
        }
        cu_dec_path(q, b, "template.spec.template.spec");
        cu_dec_podspec(c, cu_dec_want_map(c, cu_node_path(js, "template.spec"), q), q, ps);
        cu_dec_topo_template(
            c, cu_node_get(js, "template"), cu_dec_path(q, b, "template.spec.template"),
            CU_LABEL_JOB_COMPLETION_INDEX, CU_LABEL_JOBSET_JOB_INDEX, &replicas, &ps->topo);
        if (!pcn && ps->priority_class_name && *ps->priority_class_name)
            pcn = ps->priority_class_name;
    }
    cu_job_priority_ref(cu_kvs_get(&jm->labels, CU_LABEL_PRIORITY_CLASS), pcn, &wl->pc_group,
                        &wl->pc_kind, &wl->pc_name);
    /* Completed/Failed=True finishes its Workload */
    cu_dec_owner_finished(c, root, wl, cu_jobset_cond_finished);
}
