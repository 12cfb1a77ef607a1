/*
 * cu_decode_int.h - the decoding context shared by the api/ decoders
 * (cu_objects.c dispatches, cu_decode.c reads fields, cu_workload.c,
 * cu_config.c, cu_job.c decode their kinds). Internal to cueue_api.
 *
 * Every reader reports a bad field with cu_dec_err (counted in c->nerr) and
 * copies strings into c->a; allocation failure sets c->oom. Results are
 * arena-owned; the cu_node tree is only borrowed.
 */
#ifndef CU_DECODE_INT_H
#define CU_DECODE_INT_H

#include "cu_objects.h"

#include <stdarg.h>

#define PATHMAX 512

/* One object being decoded: where its strings go, where errors are told. */
typedef struct dctx {
    cu_world *w;
    cu_arena *a;
    cu_diag *d;
    const char *file; /* arena copy */
    const char *kind; /* for messages */
    char who[600];    /* "ns/name" or "name" */
    int v1beta1;      /* kueue.x-k8s.io/v1beta1 mapping rules */
    int nerr;
    int oom;
} dctx;

/* Reports "kind who: path: message" to c->d and counts it in c->nerr. */
void cu_dec_err(dctx *c, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Writes base + "." + formatted suffix (or base + suffix for "[..]") into buf
 * (PATHMAX bytes); returns buf. */
const char *cu_dec_path(char *buf, const char *base, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Field readers (cu_decode.c). map/n are borrowed; a wrong type is reported
 * and leaves *out unchanged; results are copies in c->a. The int-returning
 * ones return 1 when the field was present and valid. */
void *cu_dec_alloc(dctx *c, size_t n);
const char *cu_dec_strdup(dctx *c, const char *s);
const cu_node *cu_dec_want_map(dctx *c, const cu_node *n, const char *path);
const cu_node *cu_dec_want_seq(dctx *c, const cu_node *n, const char *path);
const char *cu_dec_str(dctx *c, const cu_node *map, const char *key, const char *base);
int cu_dec_node_i32(dctx *c, const cu_node *n, const char *path, int32_t *out);
int cu_dec_i32(dctx *c, const cu_node *map, const char *key, const char *base, int32_t *out);
void cu_dec_bool(dctx *c, const cu_node *map, const char *key, const char *base, int *out);
/* A quantity in milli-units (a ratio: weights, multipliers). */
int cu_dec_node_qty(dctx *c, const cu_node *n, const char *path, int64_t *out);
/* An amount of resource res, in res's unit (cu_qty_res_scale). */
int cu_dec_node_amount(dctx *c, const cu_node *n, const char *path, const char *res, int64_t *out);
void cu_dec_enum(dctx *c, const cu_node *map, const char *key, const char *base,
                 const char *const *names, size_t nnames, int def, int *out);
void cu_dec_kvs(dctx *c, const cu_node *map, const char *key, const char *base, cu_kvs *out);
void cu_dec_strs(dctx *c, const cu_node *map, const char *key, const char *base, cu_strs *out);
/* qsort comparator of cu_res by name. */
int cu_res_cmp(const void *a, const void *b);
/* A ResourceList of amounts, each in its resource's unit. */
void cu_dec_reslist(dctx *c, const cu_node *map, const char *key, const char *base,
                    cu_reslist *out);
/* A resource-name -> quantity map of ratios, in milli-units. */
void cu_dec_milli_list(dctx *c, const cu_node *map, const char *key, const char *base,
                       cu_reslist *out);
/* Sub-structures several kinds share (cu_decode.c). */
void cu_dec_selreqs(dctx *c, const cu_node *seq, const char *path, int allow_gtlt, size_t *nout,
                    cu_selreq **out);
void cu_dec_labelsel(dctx *c, const cu_node *map, const char *key, const char *base,
                     cu_labelsel *out);
void cu_dec_tolerations(dctx *c, const cu_node *map, const char *key, const char *base,
                        size_t *nout, cu_toleration **out);
void cu_dec_taints(dctx *c, const cu_node *map, const char *key, const char *base, size_t *nout,
                   cu_taint **out);
void cu_dec_meta(dctx *c, const cu_node *root, const char *api, const char *name, int namespaced,
                 cu_meta *m);
/* The topology request of pod template tmpl (cu_topo_request_build on its
 * metadata.annotations; path: the template's path, for the error on an
 * annotation that cannot be read), strings copied (cu_workload.c). */
void cu_dec_topo_template(dctx *c, const cu_node *tmpl, const char *path, const char *index_label,
                          const char *subgroup_label, const int32_t *subgroup_count,
                          cu_topo_request *r);
/* 1 when s holds v (cu_objects.c). */
int cu_strs_has(const cu_strs *s, const char *v);
/* The kinds decoded outside cu_objects.c: fill the arena-owned object whose
 * meta the dispatcher already set (cu_dec_job sets it from jm). */
void cu_dec_podspec(dctx *c, const cu_node *pspec, const char *path, cu_podset *ps);
void cu_dec_workload(dctx *c, const cu_node *root, cu_workload *wl);
void cu_dec_wpc(dctx *c, const cu_node *root, cu_wpc *x);
void cu_dec_pc(dctx *c, const cu_node *root, cu_priority_class *x);
void cu_dec_config(dctx *c, const cu_node *root, cu_config *x);
void cu_dec_job(dctx *c, const cu_node *root, const cu_meta *jm, cu_workload *wl);
void cu_dec_jobset(dctx *c, const cu_node *root, const cu_meta *jm, cu_workload *wl);
/* wl's one pod set "main" of count pods (a Job's, a single pod's), NULL
 * when out of memory (cu_job.c). */
cu_podset *cu_dec_main_podset(dctx *c, cu_workload *wl, int32_t count);
/* cu_ann_get over a cu_node annotations map (ud: the map, or NULL). */
const char *cu_dec_node_ann(void *ud, const char *key);
/* A Node (cu_kube.c). */
void cu_dec_node(dctx *c, const cu_node *root, cu_kube_node *x);
/* A Pod (cu_kube.c) whose meta is set: returns 0 with x filled, or 1 when
 * it has the queue-name label and wl (its meta unset) was filled instead
 * as the Workload of the single pod. */
int cu_dec_pod(dctx *c, const cu_node *root, cu_kube_pod *x, cu_workload *wl);
/* Keeps the queued Pod root (named name, in pod group group) for
 * cu_world_pod_groups (cu_kube.c): a JSON copy with its namespace, name
 * and (when it has none) a uid. */
cu_err cu_keep_group_pod(dctx *c, const cu_node *root, const char *name, const char *group);
/* Frees the pods cu_keep_group_pod kept and not yet made into Workloads. */
void cu_group_pods_free(cu_world *w);
/* The Finished condition of an owner's Workload from the first of root's
 * status.conditions that fin (cu_job_cond_finished, ...) says finishes it,
 * with its message and time. */
void cu_dec_owner_finished(dctx *c, const cu_node *root, cu_workload *wl,
                           int (*fin)(const char *t, const char *s, int *failed));

#endif
