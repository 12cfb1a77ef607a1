/*
 * cu_engine_int.h - the engine's internal records, shared by its source
 * files (and white-box tests). Not part of the public API.
 */
#ifndef CU_ENGINE_INT_H
#define CU_ENGINE_INT_H

#include "cu_engine.h"
#include "cu_quota.h"
#include "cu_queue.h"
#include "cu_strmap.h"

enum { WL_NONE = 0, WL_QUEUED, WL_ADMITTED, WL_FINISHED };

/* QuotaReserved=False reasons (severity increases downwards for the
 * flavor-assignment ones). */
enum {
    R_NONE = 0, R_PENDING, R_WAITING_FOR_QUOTA, R_EXCEEDS_MAX_QUOTA,
    R_NO_MATCHING_FLAVOR, R_INADMISSIBLE
};

typedef struct eflavor {
    const char *name;
    const cu_resource_flavor *obj;  /* NULL when missing */
} eflavor;

typedef struct egroup {
    size_t nres; int *res;          /* covered resource ids, in order */
    size_t nflv; int *flv;          /* flavor ids, in order */
    int *fr;                        /* fr[f * nres + r] */
    size_t nkeys; const char **keys;/* union of the flavors' nodeLabels keys */
} egroup;

typedef struct ecq {
    const char *name;
    const cu_cluster_queue *obj;
    cu_qnode *node;
    cu_pqueue q;
    int active;
    const char *reason, *message;
    size_t ngroups; egroup *groups;
    int *res_group; size_t nres_group;  /* resource id -> group, -1 */
    int pods_res;                       /* resource id of "pods" if covered, else -1 */
    int in_list;
    int tree;                           /* index of its cohort tree */
    int admitted;
} ecq;

typedef struct ecohort {
    const char *name;
    const cu_cohort *obj;           /* NULL: implicit */
    const char *parent_name;
    cu_qnode *node;
    int parent;                     /* index or -1 */
    int cyclic;                     /* in or below a cycle */
    int tree;
} ecohort;

typedef struct elq {
    const char *key;                /* ns/name */
    const cu_local_queue *obj;
    int cq;                         /* -1: missing */
    int active;
} elq;

typedef struct eps {                /* a pod set's per-pod requests */
    const char *name;
    int32_t count, min;             /* min = count when no minCount */
    size_t nreq; int *res; int64_t *amt;   /* sorted by resource name */
} eps;

typedef struct eassign {            /* one pod set's assignment */
    int32_t count;
    size_t n; int *res; int *flv; int64_t *amt;  /* sorted by resource name */
} eassign;

typedef struct ewl {
    cu_qitem qi;
    const cu_workload *obj;
    char *key;
    int idx;
    int lq, cq;
    const char *cq_name;            /* borrowed: named ClusterQueue, may be missing */
    int state;
    int reason;
    char *message;                  /* owned */
    size_t nps; eps *ps;
    eassign *adm;                   /* nps entries when admitted */
    size_t nuse; int *use_fr; int64_t *use_amt;
    int evictions;
    int64_t admitted_at;
    const char *blocked_by;         /* StrictFIFO: head it waits behind */
    uint64_t shape;                 /* scheduling-equivalence hash */
} ewl;

struct cu_engine {
    cu_engine_opts opts;
    const cu_world *world;
    cu_strmap res_map, flv_map, cq_map, cohort_map, lq_map, ns_map;
    CU_VEC(const char *) res_names;
    CU_VEC(eflavor) flavors;
    size_t nres_fr;                 /* resources known when frs were built */
    size_t nflv_fr;                 /* flavors known when frs were built */
    int *frmat;                     /* [flavor * nres_fr + res] -> fr, -1 */
    size_t nfr;
    int *fr_flv, *fr_res;
    CU_VEC(ecq) cqs;
    CU_VEC(ecohort) cohorts;
    CU_VEC(elq) lqs;
    CU_VEC(ewl *) wls;
    CU_VEC(int) nonempty;           /* ClusterQueues with heads */
    CU_VEC(int) admitted_log;
    size_t admitted_taken;
    int ntrees;
    cu_arena arena;                 /* long-lived strings */
    cu_arena cycle;                 /* per-round memory */
    /* views */
    int views_dirty;
    cu_arena varena;
    cu_wl_info *vwl; size_t nvwl;
    cu_cq_info *vcq;
    cu_lq_info *vlq;
    cu_cohort_info *vco;
    int *wl_order;
};

/* Shared between the engine's source files. */
int cu_engine_fr(const cu_engine *e, int flv, int res);
int64_t cu_engine_mul_sat(int64_t per_pod, int64_t count);
int cu_engine_ns_selected(cu_engine *e, const cu_cluster_queue *cq, const char *ns);
void cu_engine_mark_nonempty(cu_engine *e, int cqi);
void cu_engine_apply_usage(cu_engine *e, ewl *w, int sign);
void cu_engine_requeue_tree(cu_engine *e, int tree);

#endif
