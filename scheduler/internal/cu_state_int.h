/*
 * cu_state_int.h - the engine's state (the core layer): its records (flavors,
 * ClusterQueues, cohorts, LocalQueues, workloads), the engine struct and the
 * core operations on usage and queues (cu_engine.c, cu_build.c,
 * cu_workloads.c, cu_load.c, cu_afs.c). Every layer above includes it:
 * drs <- preemption <- flavor assignment <- cycle <- views, explain.
 * Internal to cueue_scheduler.
 */
#ifndef CU_STATE_INT_H
#define CU_STATE_INT_H

#include "cu_engine.h"
#include "cu_quota.h"
#include "cu_queue.h"
#include "cu_strmap.h"
#include "cu_tas.h"

enum { WL_NONE = 0, WL_QUEUED, WL_ADMITTED, WL_FINISHED };

/* QuotaReserved=False reasons (severity increases downwards for the
 * flavor-assignment ones). */
enum {
    R_NONE = 0,
    R_PENDING,
    R_WAITING_FOR_QUOTA,
    R_EXCEEDS_MAX_QUOTA,
    R_NO_MATCHING_FLAVOR,
    R_INADMISSIBLE
};

typedef struct ewl ewl;

/* Preemption targets: a victim and its Preempted reason. */
typedef struct target {
    ewl *wl;
    const char *reason;
} target;
typedef struct targets {
    size_t n;
    target *t;
} targets;

typedef struct eflavor {
    const char *name;
    const cu_resource_flavor *obj; /* NULL when missing */
    const char *bad;               /* why it fails validation, NULL if valid */
    int tas;                       /* its TAS snapshot (e->tas), -1: not a TAS flavor
                                      or its Topology is missing */
} eflavor;

/* One TAS flavor (cu_tasstate.c): a ResourceFlavor whose topologyName
 * names a loaded Topology, and the placement snapshot of the nodes for
 * it (levels from the Topology, nodeLabels and tolerations from the
 * flavor). */
typedef struct etas {
    int flv;              /* flavor id */
    const char *flavor;   /* its name */
    const char *topology; /* the Topology's name */
    const char **levels;  /* the Topology's levels (e->arena) */
    size_t nlevels;
    cu_tas *t;        /* owned */
    cu_reslist shape; /* cu_engine_tas_pending_shape (malloc'd items) */
    int has_shape;
} etas;

/* What placement as if empty (no admitted TAS workload) said for a
 * scheduling shape (ewl.shape, the plan's counts and flavors), valid while
 * the nodes and bound pods are as they were (cu_engine.tas_nodes_gen). */
#define TAS_EMPTY_CACHE 32
typedef struct tas_empty {
    uint64_t key, gen; /* gen 0: unused */
    int fits;
} tas_empty;

/* One pod set's topology assignment held by an admitted workload: the
 * TAS snapshot it counts on, the view (levels borrowed from the etas,
 * values and counts owned) and the per-pod requests counted per domain
 * (the resources assigned the TAS flavor; names borrowed from
 * e->res_names). */
typedef struct etopo {
    int tas; /* index in e->tas, -1: none */
    cu_topo_assign ta;
    cu_reslist per_pod;
} etopo;

typedef struct egroup {
    size_t nres;
    int *res; /* covered resource ids, in order */
    size_t nflv;
    int *flv; /* flavor ids, in order */
    int *fr;  /* fr[f * nres + r] */
    size_t nkeys;
    const char **keys; /* union of the flavors' nodeLabels keys */
} egroup;

typedef struct ecq {
    const char *name;
    const cu_cluster_queue *obj;
    cu_qnode *node;
    cu_pqueue q;
    int active;
    const char *reason, *message;
    const char *bad; /* why it fails validation (then inactive,
                                           no groups, no quota, no cohort), NULL */
    size_t ngroups;
    egroup *groups;
    int *res_group;
    size_t nres_group; /* resource id -> group, -1 */
    int pods_res;      /* resource id of "pods" if covered, else -1 */
    int in_list;
    int tree;     /* index of its cohort tree */
    int tas_only; /* every flavor of its groups has a topologyName (Kueue's
                     IsTASOnly; at least one flavor) */
    int admitted;
    ewl **adm;
    size_t nadm, capadm; /* workloads holding quota here */
    ewl *sticky;         /* BestEffortFIFO preemptor kept at the head */
    int64_t rq_due;      /* a batched requeue of its tree's inadmissible
                            workloads is due then (opts.requeue_batch), 0 none */
} ecq;

typedef struct ecohort {
    const char *name;
    const cu_cohort *obj; /* NULL: implicit */
    const char *parent_name;
    cu_qnode *node;
    int parent;         /* index or -1 */
    int cyclic;         /* in or below a cycle */
    const char *bad;    /* why its object fails validation, NULL */
    const char *bad_in; /* name of the invalid cohort it is in or
                                       below (itself included), NULL */
    int tree;
    int height; /* Kueue's getNodeHeight over the scheduler's snapshot: 0
                   without active children, else 1 + the tallest child
                   cohort's height (at least 1); cu_engine_build_tree */
} ecohort;

typedef struct elq {
    const char *key; /* ns/name */
    const cu_local_queue *obj;
    int cq; /* -1: missing */
    int active;
    const char *bad;      /* why it fails validation, NULL if valid */
    double *afs_consumed; /* AFS: decayed usage per resource id */
    double *afs_penalty;  /* AFS: entry penalties not yet sampled */
    size_t afs_n;
} elq;

typedef struct eps { /* a pod set's per-pod requests */
    const char *name;
    int32_t count, min; /* min = count when no minCount */
    size_t nreq;
    int *res;
    int64_t *amt; /* sorted by resource name */
} eps;

typedef struct eassign { /* one pod set's assignment */
    int32_t count;
    size_t n;
    int *res;
    int *flv;
    int64_t *amt; /* sorted by resource name */
} eassign;

struct ewl {
    cu_qitem qi;
    const cu_workload *obj;
    char *key;
    int idx;
    int lq, cq;
    const char *cq_name; /* borrowed: named ClusterQueue, may be missing */
    int state;
    int reason;
    char *message; /* owned */
    char *bad;     /* owned: why it fails validation, NULL */
    size_t nps;
    eps *ps;
    eassign *adm; /* nps entries when admitted */
    etopo *topo;  /* nps entries when admitted with a topology assignment,
                     else NULL (cu_tasstate.c) */
    int tas_wait; /* its last attempt failed TAS placement: flavor tas index + 1 */
    int tas_ps;   /* ... for this pod set */
    size_t nuse;
    int *use_fr;
    int64_t *use_amt;
    int evictions;
    int64_t admitted_at;
    const char *blocked_by; /* StrictFIFO: head it waits behind */
    uint64_t shape;         /* scheduling-equivalence hash */
    /* preemption */
    size_t adm_pos;             /* index in its ClusterQueue's adm list */
    int evicting;               /* preempted; holds quota until released */
    const char *evict_reason;   /* Evicted condition reason, NULL */
    char *evict_message;        /* Evicted/Preempted condition message */
    const char *preempt_reason; /* Preempted condition reason, NULL */
    char *note;                 /* "preempted by ..." shown while pending */
    int64_t evicted_at;
    int waiting_for;        /* preemptor: victims not yet released */
    int32_t *plan;          /* preemptor: goes first next round */
    int preempt_count;      /* preemptions within the current window */
    int64_t preempt_window; /* start of that window (ms) */
    unsigned claimed_round; /* round in which it was chosen as victim */
    char *rel_ns;           /* released (cu_engine_release): "ns\0name" from key */
    /* Kueue's LastAssignment (flavor fungibility): per pod set and
     * resource group of ClusterQueue fmem_cq, the index of the flavor the
     * last attempt stopped at (FMEM_NONE: start at the first, FMEM_LAST:
     * it reached the last flavor). The next attempt starts after it. */
    int16_t *fmem; /* owned, nps * fmem_ng entries, or NULL */
    size_t fmem_ng;
    int fmem_cq;
    int fmem_retries; /* retries for pending flavors since it was dropped */
};

struct cu_engine {
    cu_engine_opts opts;
    const cu_world *world;
    cu_strmap res_map, flv_map, cq_map, cohort_map, lq_map, ns_map;
    CU_VEC(const char *) res_names;
    CU_VEC(eflavor) flavors;
    CU_VEC(etas) tas;                 /* the TAS flavors (cu_tasstate.c) */
    cu_strmap pod_node;               /* node name -> index in pod_count */
    CU_VEC(int32_t) pod_count;        /* pods bound per node (cu_engine_pod_usage) */
    uint64_t tas_nodes_gen;           /* bumped by every node and bound pod change */
    CU_VEC(cu_tas_result *) tas_kept; /* this round's kept placements */
    CU_VEC(size_t) tas_kept_n;
    tas_empty tas_empty[TAS_EMPTY_CACHE];
    char *tas_over; /* the first admission that put a node over its
                         allocatable (cu_engine_tas_check), NULL: none */
    size_t nres_fr; /* resources known when frs were built */
    size_t nflv_fr; /* flavors known when frs were built */
    int *frmat;     /* [flavor * nres_fr + res] -> fr, -1 */
    size_t nfr;
    int *fr_flv, *fr_res;
    CU_VEC(ecq) cqs;
    CU_VEC(ecohort) cohorts;
    CU_VEC(elq) lqs;
    CU_VEC(ewl *) wls;
    CU_VEC(int) nonempty; /* ClusterQueues with heads */
    CU_VEC(int) admitted_log;
    size_t admitted_taken;
    CU_VEC(int) evicting;    /* workloads whose eviction is pending */
    CU_VEC(int) evicted_log; /* evictions issued, not yet taken */
    size_t evicted_taken;
    unsigned round; /* rounds run so far */
    int ntrees;
    cu_arena arena;          /* long-lived strings */
    cu_arena cycle;          /* per-round memory */
    cu_arena scratch;        /* per-search memory (preemption, tournament) */
    unsigned fs_stamp;       /* fair-sharing picks so far */
    unsigned protected_seen; /* candidates skipped for their preemption budget */
    /* workload keys in strcmp order, for the preemption candidates'
     * order (cu_preempt.c): kord lists the indices 0..nkord-1 of wls
     * sorted by key, krank[idx] is a label of wls[idx]'s key in the
     * same order (equal keys, equal labels). Both owned, nkord entries. */
    uint32_t *kord;
    uint64_t *krank;
    size_t nkord;
    int overcommitted_input; /* workloads admitted in the input exceed
                                       some quota (e.g. after a quota cut) */
    struct {                 /* the last oracle search of this round */
        const ewl *w;
        const ecq *c;
        int fr;
        int64_t val;
        unsigned round;
        int valid;
        targets t;
    } oracle;
    /* fair sharing caches: DRS by node (CQs, then cohorts), valid while
     * the node's gen is unchanged; lendable per node and resource
     * (depends on quotas only) */
    double *drs_ratio;
    uint64_t *drs_gen;
    uint8_t *drs_valid;
    double *lendable;
    uint8_t *lendable_ok;
    struct { /* cu_fs_next's grouping of one round's
                                       entries (cu_tournament.c) */
        unsigned round;
        const void *ents;
        size_t n;
        void *g; /* e->cycle-owned; valid while round,
                                       ents and n match the call */
    } fsr;
    /* views */
    int views_dirty;
    cu_arena varena;
    cu_arena v1arena;     /* cu_engine_workload_info_one's */
    cu_workload released; /* the object of released workloads: empty */
    cu_wl_info v1;
    cu_wl_info *vwl;
    size_t nvwl;
    cu_cq_info *vcq;
    cu_lq_info *vlq;
    cu_cohort_info *vco;
    int *wl_order; /* malloc'ed, kept across builds (see sort_order) */
    int *wl_view;  /* engine index -> position in vwl */
    size_t nord;   /* workloads in wl_order */
};

/* Admission Fair Sharing (cu_afs.c): 1 when c orders by LocalQueue
 * usage; the usage value of LocalQueue lq; records an admission's entry
 * penalty and re-sorts c's queue. */
int cu_afs_on(const cu_engine *e, const ecq *c);
double cu_afs_usage(const cu_engine *e, int lq);
cu_err cu_afs_admitted(cu_engine *e, ecq *c, ewl *w);

/* Core operations shared with the layers above (cu_engine.c: fr, mul_sat;
 * cu_build.c: ns_selected; cu_workloads.c: the others). */
int cu_engine_fr(const cu_engine *e, int flv, int res);
int64_t cu_engine_mul_sat(int64_t per_pod, int64_t count);
int cu_engine_ns_selected(cu_engine *e, const cu_cluster_queue *cq, const char *ns);
void cu_engine_mark_nonempty(cu_engine *e, int cqi);
void cu_engine_apply_usage(cu_engine *e, ewl *w, int sign);
void cu_engine_requeue_tree(cu_engine *e, int tree);
/* Sets w's pending reason and message (copied; kept when unchanged). */
void cu_engine_set_msg(ewl *w, int reason, const char *msg);
/* Records w as holding quota in c (adm list), or forgets it. */
cu_err cu_engine_adm_add(ecq *c, ewl *w);
void cu_engine_adm_del(ecq *c, ewl *w);
/* Releases the quota of every workload whose preemption was issued and
 * requeues them (the job controller stopped them). Returns how many. */
int cu_engine_complete_evictions(cu_engine *e);

/* Topology-Aware Scheduling's state (cu_tasstate.c): builds a snapshot
 * per TAS flavor of e->world and feeds it the world's nodes and bound
 * pods (cu_engine_load, after the flavors); frees them. */
cu_err cu_engine_tas_load(cu_engine *e);
void cu_engine_tas_free(cu_engine *e);
/* Adds (sign > 0) or removes w's topology assignments' usage on the
 * snapshots (part of cu_engine_apply_usage). */
void cu_engine_tas_apply(cu_engine *e, const ewl *w, int sign);
/* After w's admission: notes in e->tas_over a node of its assignments
 * (when the lowest level is the hostname) left with less than nothing
 * free of a resource it requests (cu_engine_check_invariants reports it). */
void cu_engine_tas_check(cu_engine *e, const ewl *w);
/* The pods bound to node that TAS did not place (cu_engine_pod_usage's
 * count). */
int32_t cu_engine_tas_bound_pods(const cu_engine *e, const char *node);
/* Frees w's topology assignments (w->topo). */
void cu_engine_tas_forget(ewl *w);
/* The TAS pod sets of one flavor assignment (per-round arena): pod set
 * ps[i] placed in TAS flavor ti[i] with request req[i]; use[i] is its
 * per-pod usage there (the requests of the resources assigned that
 * flavor). Sorted by ti, then pod set: each flavor's pod sets are placed
 * together, in order (Kueue's FindTopologyAssignmentsForWorkload). */
typedef struct tasplan {
    size_t n;
    int *ps;
    int *ti;
    cu_tas_request *req;
    cu_reslist *use;
    cu_tas_result *res; /* the placement against the usage of its flavor
                           assignment (mode Fit), NULL: none; freed with
                           the round (cu_engine_tas_keep) */
} tasplan;
/* Keeps the n results r (in e->cycle) until the next round
 * (cu_engine_tas_drop), which frees them; CU_ENOMEM when it cannot. */
cu_err cu_engine_tas_keep(cu_engine *e, cu_tas_result *r, size_t n);
void cu_engine_tas_drop(cu_engine *e);
/* 1 when p->res, placed earlier in the round, still fits every node it
 * uses now (the lowest level is the hostname; its pods' requests, "pods"
 * too, at most each node's free amount), so it may be admitted as is. */
int cu_engine_tas_still_fits(cu_engine *e, const tasplan *p);
/* Places p's pod sets (simulate_empty: as if no admitted TAS workload
 * held the nodes). Returns CU_OK when all fit, CU_EINVAL when one does
 * not (*fail: its index in p), CU_ENOMEM. res (p->n entries, or NULL)
 * receives the results; the caller frees each with cu_tas_result_free. */
cu_err cu_engine_tas_place(cu_engine *e, const tasplan *p, int simulate_empty, cu_tas_result *res,
                           size_t *fail);
/* 1 when every pod set of p (NULL: none) is placed against current usage. */
int cu_engine_tas_fits(cu_engine *e, const tasplan *p);

/* The status.admission.podSetAssignments[] entry of pod set i named name
 * (by name, else the i-th), or NULL. */
const cu_psa *cu_engine_psa_of(const cu_workload *o, size_t i, const char *name);
/* Builds w->topo from its Workload's status.admission (preadmitted):
 * each pod set's topologyAssignment on its TAS flavor. */
cu_err cu_engine_tas_from_status(cu_engine *e, ewl *w);
/* Records pod set p of w as placed in TAS flavor ti by r (a successful
 * cu_tas_place result): copies the domains into w->topo[p] (allocating
 * w->topo) with per-pod requests per_pod. Does not apply the usage. */
cu_err cu_engine_tas_record(cu_engine *e, ewl *w, size_t p, int ti, const cu_tas_result *r,
                            const cu_reslist *per_pod);

/* Appends x to a CU_VEC (base's CU_VEC_PUSH; malloc'd, the owner frees
 * items); 0, or -1 when out of memory. */
#define VEC_PUSH(v, x) CU_VEC_PUSH(v, x, 8)

/* Lifecycle and interning (cu_engine.c). The id of a resource / flavor
 * name, added (copied into e->arena) when new; -1 when out of memory. */
int cu_engine_intern_res(cu_engine *e, const char *name);
int cu_engine_intern_flavor(cu_engine *e, const char *name);
/* Frees w and everything it owns. */
void cu_engine_free_wl(ewl *w);

/* Building the queues (cu_build.c), called by cu_engine_load in order:
 * intern the names of groups gs; give each (flavor, resource) of gs its
 * fr id in e->frmat; add ClusterQueue obj (bad: why it is invalid, NULL);
 * build the cohort tree and attach the ClusterQueues. */
cu_err cu_engine_note_groups(cu_engine *e, const cu_rgroups *gs);
cu_err cu_engine_mark_frs(cu_engine *e, const cu_rgroups *gs);
cu_err cu_engine_build_cq(cu_engine *e, const cu_cluster_queue *obj, const char *bad);
cu_err cu_engine_build_tree(cu_engine *e);
/* Kueue's borrowing level of a request of val more of fr in c (its
 * FindHeightOfLowestSubtreeThatFits): 0 when it fits in c's own nominal
 * quota or c has no cohort; else the height (ecohort.height) of the lowest
 * cohort whose subtree fits it, or of the root when none does. The level
 * orders a cycle's entries: lower first. *may_reclaim is set to 1 when c
 * has a cohort and the request fits below the root (the "hierarchical
 * advantage"). */
int cu_engine_borrow_level(const cu_engine *e, const ecq *c, int fr, int64_t val, int *may_reclaim);
/* Validation of one object by api/'s rules: 0 when valid, else 1 with the
 * problems written into out (n bytes); the _arena form returns them as a
 * string in e->arena, NULL when valid (or out of memory). */
int cu_engine_invalid_text(cu_kind kind, const void *obj, const cu_meta *m, char *out, size_t n);
const char *cu_engine_invalid_arena(cu_engine *e, cu_kind kind, const void *obj, const cu_meta *m);

#endif
