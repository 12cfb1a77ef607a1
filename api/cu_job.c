/*
 * cu_job.c - a batch/v1 Job decoded as the Workload Kueue would create for it.
 */
#include "cu_decode_int.h"
#include "cu_names.h"
#include "cu_sha1.h"
#include "cu_topology.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A batch/v1 Job with the queue-name label, as the Workload Kueue would
 * create for it. */
void cu_dec_job(dctx *c, const cu_node *root, const cu_meta *jm, cu_workload *wl)
{
    wl->meta = *jm;
    wl->meta.name = cu_job_workload_name(c->a, jm->name, jm->uid);
    if (!wl->meta.name)
        c->oom = 1;
    wl->job_name = jm->name;
    wl->queue_name = cu_kvs_get(&jm->labels, CU_LABEL_QUEUE_NAME);
    wl->active = 1;

    const cu_node *spec = cu_dec_want_map(c, cu_node_get(root, "spec"), "spec");
    int32_t par = 1, comp = 0;
    int has_par = cu_dec_i32(c, spec, "parallelism", "spec", &par);
    if (has_par && par < 0)
        cu_dec_err(c, "spec.parallelism", "must be greater than or equal to 0");
    int has_comp = cu_dec_i32(c, spec, "completions", "spec", &comp);
    if (has_comp && comp < 0)
        cu_dec_err(c, "spec.completions", "must be greater than or equal to 0");

    cu_podset *ps = cu_dec_main_podset(c, wl, cu_job_podset_count(has_par, par, has_comp, comp));
    if (!ps)
        return;

    const char *mp = cu_kvs_get(&jm->annotations, CU_ANN_JOB_MIN_PARALLELISM);
    if (mp) {
        if (cu_job_min_count(mp, ps->count, &ps->min_count))
            ps->has_min = 1;
        else
            cu_dec_err(c, "metadata.annotations[" CU_ANN_JOB_MIN_PARALLELISM "]",
                       CU_JOB_MIN_PARALLELISM_MSG, (int)ps->count, mp);
    }

    const cu_node *tmpl = cu_dec_want_map(c, cu_node_get(spec, "template"), "spec.template");
    const cu_node *pspec = cu_dec_want_map(c, cu_node_get(tmpl, "spec"), "spec.template.spec");
    cu_dec_podspec(c, pspec, "spec.template.spec", ps);
    cu_dec_topo_template(c, tmpl, "spec.template", CU_LABEL_JOB_COMPLETION_INDEX, NULL, NULL,
                         &ps->topo);

    cu_job_priority_ref(cu_kvs_get(&jm->labels, CU_LABEL_PRIORITY_CLASS), ps->priority_class_name,
                        &wl->pc_group, &wl->pc_kind, &wl->pc_name);

    /* A finished Job (Complete/Failed=True) finishes its Workload. */
    cu_dec_owner_finished(c, root, wl, cu_job_cond_finished);
}

cu_podset *cu_dec_main_podset(dctx *c, cu_workload *wl, int32_t count)
{
    wl->podsets = cu_dec_alloc(c, sizeof(*wl->podsets));
    if (!wl->podsets)
        return NULL;
    wl->npodsets = 1;
    cu_podset *ps = &wl->podsets[0];
    ps->name = cu_dec_strdup(c, "main");
    ps->count = count;
    return ps;
}

void cu_dec_owner_finished(dctx *c, const cu_node *root, cu_workload *wl,
                           int (*fin)(const char *t, const char *s, int *failed))
{
    char q[PATHMAX];
    const cu_node *conds =
        cu_dec_want_seq(c, cu_node_path(root, "status.conditions"), "status.conditions");
    for (size_t i = 0; conds && i < conds->n; i++) {
        const char *t = cu_node_scalar(cu_node_get(conds->vals[i], "type"));
        const char *s = cu_node_scalar(cu_node_get(conds->vals[i], "status"));
        int failed;
        if (!fin(t, s, &failed))
            continue;
        wl->conds = cu_dec_alloc(c, sizeof(*wl->conds));
        if (!wl->conds)
            return;
        wl->nconds = 1;
        wl->conds[0].type = "Finished";
        wl->conds[0].status = "True";
        wl->conds[0].reason = failed ? "Failed" : "Succeeded";
        wl->conds[0].message =
            cu_dec_strdup(c, cu_node_scalar(cu_node_get(conds->vals[i], "message")));
        const char *ltt = cu_node_scalar(cu_node_get(conds->vals[i], "lastTransitionTime"));
        if (ltt && cu_time_parse(ltt, &wl->conds[0].ltt_ms) != CU_OK)
            cu_dec_err(c, cu_dec_path(q, "status.conditions", "[%zu].lastTransitionTime", i),
                       "invalid time \"%s\"", ltt);
        break;
    }
}

#define CU_WL_PREFIX_MAX 247 /* 253 (max object name) - 1 ('-') - 5 (hash) */

const char *cu_owner_workload_name(cu_arena *a, const char *kind, const char *group,
                                   const char *name, const char *uid)
{
    if (!uid)
        uid = "";
    cu_sha1 s;
    unsigned char dg[20];
    cu_sha1_init(&s);
    cu_sha1_update(&s, kind, strlen(kind));
    cu_sha1_update(&s, "\n", 1);
    cu_sha1_update(&s, group, strlen(group));
    cu_sha1_update(&s, "\n", 1);
    cu_sha1_update(&s, name, strlen(name));
    cu_sha1_update(&s, "\n", 1);
    cu_sha1_update(&s, uid, strlen(uid));
    cu_sha1_final(&s, dg);
    char *prefix = cu_arena_printf(a, "%s-%s", kind, name);
    if (!prefix)
        return NULL;
    for (char *p = prefix; *p && *p != '-'; p++)
        if (*p >= 'A' && *p <= 'Z')
            *p = (char)(*p - 'A' + 'a'); /* the kind in lower case */
    if (strlen(prefix) > CU_WL_PREFIX_MAX)
        prefix[CU_WL_PREFIX_MAX] = '\0';
    /* 5 hex digits = the first 2.5 bytes */
    return cu_arena_printf(a, "%s-%02x%02x%x", prefix, dg[0], dg[1], dg[2] >> 4);
}

const char *cu_job_workload_name(cu_arena *a, const char *job_name, const char *uid)
{
    return cu_owner_workload_name(a, "Job", "batch", job_name, uid);
}

int32_t cu_job_podset_count(int has_par, int32_t par, int has_comp, int32_t comp)
{
    if (!has_par)
        par = 1;
    if (!has_comp)
        comp = par;
    return par < comp ? par : comp;
}

int cu_job_min_count(const char *v, int32_t count, int32_t *out)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || end == v || *end || x < 1 || x > count)
        return 0;
    *out = (int32_t)x;
    return 1;
}

int cu_job_priority_ref(const char *wpc, const char *pcn, const char **group, const char **kind,
                        const char **name)
{
    if (wpc && *wpc) {
        *group = CU_GROUP;
        *kind = "WorkloadPriorityClass";
        *name = wpc;
    } else if (pcn && *pcn) {
        *group = "scheduling.k8s.io";
        *kind = "PriorityClass";
        *name = pcn;
    } else
        return 0;
    return 1;
}

int cu_cond_finished(const char *t, const char *s, const char *done, int *failed)
{
    if (!t || !s || strcmp(s, "True") != 0)
        return 0;
    if (strcmp(t, done) != 0 && strcmp(t, "Failed") != 0)
        return 0;
    if (failed)
        *failed = strcmp(t, "Failed") == 0;
    return 1;
}

int cu_job_cond_finished(const char *t, const char *s, int *failed)
{
    return cu_cond_finished(t, s, "Complete", failed);
}
