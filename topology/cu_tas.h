/*
 * cu_tas.h - Topology-Aware Scheduling's placement core: the nodes of
 * one TAS ResourceFlavor as a tree of topology domains (one level per
 * label key of the Topology, top to bottom), their free capacity
 * (allocatable minus the requests of the pods bound to them and of the
 * admitted TAS workloads counted on them), and the placement of a pod set
 * on it as Kueue v0.17's TAS flavor snapshot does it: required, preferred
 * and unconstrained levels, slices, the BestFit and LeastFreeCapacity
 * profiles. A failed placement says why in numbers (cu_tas_diag).
 *
 * Pure: no I/O, no clock. The controller feeds a cu_tas from its
 * informers (cu_tas_node_set, cu_tas_node_remove, cu_tas_usage for
 * bound pods, cu_tas_assigned for admitted TAS workloads) and the
 * scheduler asks it (cu_tas_place, cu_tas_placeable, cu_tas_max_free).
 * Every function borrows its arguments; a cu_tas copies what it keeps.
 *
 * Amounts are int64 in the resource's unit (cu_qty_res_scale: milli for
 * cpu, whole units otherwise), as everywhere in api/. The resource "pods"
 * is the count of pods: a node's allocatable "pods" bounds how many land
 * there, and every pod placed or bound uses one (Kueue adds it to every
 * request; a node without allocatable "pods" takes no pod).
 */
#ifndef CU_TAS_H
#define CU_TAS_H

#include "cu_match.h"
#include "cu_objects.h"

#define CU_TAS_HOSTNAME "kubernetes.io/hostname"
#define CU_TAS_PODS "pods"
/* How many nodes a diagnosis lists (largest free first). */
#define CU_TAS_DIAG_TOP 5

typedef struct cu_tas cu_tas;

/* The flavor's side of a snapshot: the Topology's levels (label keys, top
 * to bottom) and the ResourceFlavor's spec.nodeLabels and tolerations.
 * name is the Topology's name (for Kueue's messages). */
typedef struct cu_tas_flavor {
    const char *name;
    size_t nlevels;
    const char *const *levels;
    const cu_kvs *node_labels; /* NULL: none */
    size_t ntols;
    const cu_toleration *tols;
} cu_tas_flavor;

/* One Node as the informer sees it. */
typedef struct cu_tas_node {
    const char *name;
    const cu_kvs *labels;
    const cu_reslist *allocatable; /* status.allocatable */
    int ready;                     /* condition Ready is True */
    int unschedulable;             /* spec.unschedulable */
    size_t ntaints;
    const cu_taint *taints;
} cu_tas_node;

/* Returns a new empty snapshot for f (copied), or NULL when out of memory
 * or f has no level; caller frees with cu_tas_free. */
cu_tas *cu_tas_new(const cu_tas_flavor *f);
void cu_tas_free(cu_tas *t);

/* Adds node n or replaces what is known of the node of that name. A node
 * takes part (is a "member") only when it is ready, schedulable, has every
 * level's label and every pair of the flavor's nodeLabels (Kueue's nodes
 * cache). Its bound usage (cu_tas_usage) is kept across replacements. */
cu_err cu_tas_node_set(cu_tas *t, const cu_tas_node *n);
/* Forgets the node (its bound usage stays counted under its name, for when it
 * comes back, until removed by cu_tas_usage). Unknown names are ignored. */
void cu_tas_node_remove(cu_tas *t, const char *name);

/* The pods bound to a node that TAS did not place (DaemonSets, other
 * workloads: Kueue's non-TAS usage): adds (sign > 0) or removes (sign < 0)
 * count pods of per_pod requests (and count "pods") on node, known or not
 * yet known. */
cu_err cu_tas_usage(cu_tas *t, const char *node, const cu_reslist *per_pod, int32_t count,
                    int sign);
/* The pods of an admitted TAS workload: one domain of its topology
 * assignment as cu_tas_place gives it (nvalues values for the
 * assignment's levels: the hostname alone when the lowest level is
 * kubernetes.io/hostname, else every level), count pods of per_pod; what
 * placement with simulate_empty leaves out (Kueue's TAS usage, kept by
 * domain, so it outlives the node and is counted again when a node of that
 * domain comes back). CU_EINVAL when nvalues is not the assignment's. */
cu_err cu_tas_assigned(cu_tas *t, const char *const *values, size_t nvalues,
                       const cu_reslist *per_pod, int32_t count, int sign);

/* The free amount of resource on node (allocatable - bound - assigned,
 * the last only when the lowest level is kubernetes.io/hostname);
 * CU_ENOTFOUND when the node is not a member. */
cu_err cu_tas_node_free(const cu_tas *t, const char *node, const char *resource, int64_t *out);

/* The domain tree (rebuilt after node changes, on the next call). */
size_t cu_tas_nlevels(const cu_tas *t);
const char *cu_tas_level(const cu_tas *t, size_t level);
/* The number of domains of level (0 = top). */
size_t cu_tas_ndomains(cu_tas *t, size_t level);
/* Domain i of level (sorted by values): its values for levels 0..level
 * (borrowed until the next node change) and its free amount of resource
 * summed over its member nodes. */
const char *const *cu_tas_domain(cu_tas *t, size_t level, size_t i, const char *resource,
                                 int64_t *free);

/* The kind of a pod set's topology request (Kueue's annotations):
 * podset-required-topology, podset-preferred-topology, and
 * podset-unconstrained-topology (also for a pod set with no annotation in
 * a TAS flavor, Kueue's "implied", and for slices alone). */
typedef enum cu_tas_mode {
    CU_TAS_REQUIRED = 0,
    CU_TAS_PREFERRED,
    CU_TAS_UNCONSTRAINED
} cu_tas_mode;

/* Kueue's profiles (KEP 2724): MIXED is v0.17's default (feature gate
 * TASProfileMixed, beta and on): BestFit for required and preferred,
 * LeastFreeCapacity for unconstrained. BEST_FIT is the gate off: BestFit
 * for all. */
typedef enum cu_tas_profile { CU_TAS_PROFILE_MIXED = 0, CU_TAS_PROFILE_BEST_FIT } cu_tas_profile;

typedef struct cu_tas_request {
    int32_t count;             /* pods */
    const cu_reslist *per_pod; /* one pod's requests (without "pods") */
    cu_tas_mode mode;
    const char *level; /* REQUIRED, PREFERRED: the level's label key */
    /* podset-slice-required-topology and podset-slice-size: slice_level
     * NULL for none (slices of one pod at the lowest level) */
    const char *slice_level;
    int32_t slice_size;
    /* the pods' nodeSelector and required node affinity, and their
     * tolerations (besides the flavor's); checked when the lowest level is
     * kubernetes.io/hostname, as Kueue does. NULL/0: none. */
    const cu_nodesel *sel;
    size_t ntols;
    const cu_toleration *tols;
    /* topologyRequest.podSetGroupName (NULL: none). Two requests of one
     * cu_tas_place call with the same group, one of them of a single pod,
     * are placed jointly as Kueue does a LeaderWorkerSet's or a JobSet's
     * leader and workers: the single pod (the leader; of two single pods,
     * the later) goes with the other's pods (the workers) into the same
     * domains of the workers' level, as one placement governed by the
     * workers' mode, level, slices, selector and tolerations. A group of
     * any other shape (one request, three, no single pod) is placed one
     * request at a time, as without a group. */
    const char *group;
} cu_tas_request;

typedef struct cu_tas_opts {
    cu_tas_profile profile;
    int simulate_empty; /* as if no cu_tas_assigned usage (Kueue's WithSimulateEmpty) */
} cu_tas_opts;

/* One domain of an assignment: its values for the assignment's levels. */
typedef struct cu_tas_assign {
    const char **values;
    int32_t count;
} cu_tas_assign;

typedef struct cu_tas_nodefree {
    const char *node;
    int64_t free;
} cu_tas_nodefree;

/* Why a pod set does not fit, in numbers (filled on failure). */
typedef struct cu_tas_diag {
    int32_t requested;  /* pods */
    int32_t fit_one;    /* the most pods that fit in one domain of the requested level
                           (the lowest level for unconstrained) */
    int32_t fit_total;  /* pods that fit on all eligible nodes together */
    size_t nodes_known; /* nodes given, members or not */
    size_t nodes_member, nodes_not_ready, nodes_unschedulable, nodes_flavor;
    size_t nodes_taint, nodes_selector, nodes_affinity; /* excluded for the pod set */
    /* the first resource of the request (by name, "pods" included) that no
     * eligible node has per_pod of free, else the one that limits the node
     * that takes the most pods; NULL with no eligible node */
    const char *resource;
    int64_t per_pod;  /* its request per pod */
    int64_t max_free; /* the largest free amount of it on one eligible node */
    size_t neligible; /* nodes the pod set may use */
    size_t ntop;      /* of them, largest free of it first, then by name */
    cu_tas_nodefree top[CU_TAS_DIAG_TOP];
    const char *level; /* the requested level (the lowest for unconstrained) */
    /* a pod-set group (the numbers above are its workers'): fit_one_leader
     * is the most workers that fit in one domain of the level beside the
     * leader */
    int leader;
    int32_t fit_one_leader;
} cu_tas_diag;

/* Appends to out why the pod set waits, in numbers, e.g. "no node has 3
 * nvidia.com/gpu free: largest free per node 2 (gpu-a 2, gpu-b 2, gpu-c 2,
 * gpu-d 2)", "the nodes take only 3 of the 4 pods (...)" or "at most 2 of
 * the 3 pods fit in one cloud.provider.com/rack (8 on all nodes)" (for a
 * group "at most 2 of the group's 3 worker pods fit in one
 * cloud.provider.com/rack beside its leader (3 without it, 3 on all
 * nodes)"), then the nodes left out and why. Amounts as Kueue prints
 * quantities. */
cu_err cu_tas_diag_text(const cu_tas_diag *g, cu_buf *out);

/* A placement: on success levels/domains are Kueue's TopologyAssignment
 * (levels: only kubernetes.io/hostname when it is the lowest level, else
 * all; domains sorted by their values); on failure reason is Kueue's
 * message and diag the numbers. Everything is owned by arena. */
typedef struct cu_tas_result {
    int ok;
    size_t nlevels;
    const char **levels;
    size_t ndomains;
    cu_tas_assign *domains;
    const char *reason;
    cu_tas_diag diag;
    cu_arena arena;
} cu_tas_result;

/* Places the n pod sets of reqs one after the other (a group of two, see
 * cu_tas_request.group, together, when its first member comes), each
 * counting the ones before it (Kueue's assumed usage for the pod sets of
 * one flavor), into out[0..n) (each initialized here; free each with
 * cu_tas_result_free). Returns CU_OK when every pod set fits, CU_EINVAL
 * when one does not (out[i].ok 0 and its reason, the same for both
 * members of a group, and diag the workers' numbers; the ones not yet
 * placed are not tried, ok 0 and reason NULL), CU_ENOMEM. Changes no
 * usage: the caller records an admission with cu_tas_assigned per
 * domain. */
cu_err cu_tas_place(cu_tas *t, const cu_tas_request *reqs, size_t n, const cu_tas_opts *o,
                    cu_tas_result *out);
void cu_tas_result_free(cu_tas_result *r);

/* How many pods of per_pod fit on the eligible member nodes right now, each
 * node on its own (what an unconstrained pod set of that shape could get;
 * sel/tols as in cu_tas_request, may be NULL/0). */
int64_t cu_tas_placeable(cu_tas *t, const cu_reslist *per_pod, const cu_nodesel *sel,
                         const cu_toleration *tols, size_t ntols);
/* The largest free amount of resource on one member node whose taints the
 * flavor tolerates (0 with none); *node (borrowed until the next change,
 * may be NULL) names it. */
int64_t cu_tas_max_free(cu_tas *t, const char *resource, const char **node);

#endif
