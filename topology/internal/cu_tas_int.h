/*
 * cu_tas_int.h - the snapshot's records, shared by cu_tas.c (nodes,
 * usage, the domain tree) and cu_place.c (placement). topology/ only.
 */
#ifndef CU_TAS_INT_H
#define CU_TAS_INT_H

#include "cu_strmap.h"
#include "cu_tas.h"

/* One node by name: what the informer said (in a, replaced as a whole)
 * and the usage counted on it (by resource index, kept across). */
typedef struct topo_node {
    char *name; /* malloc'd, the key of cu_tas.bynode */
    cu_arena a; /* labels, taints, values */
    int known, ready, unsched, flavor_ok, member;
    cu_kvs labels;
    size_t ntaints;
    cu_taint *taints;
    const char **values; /* nvals (the snapshot's nlevels) level values (members only) */
    size_t nvals;
    const char *host; /* its kubernetes.io/hostname label, or NULL */
    size_t nres;      /* alloc, bound: [0, nres), absent = 0 */
    int64_t *alloc, *bound;
} topo_node;

/* The usage of admitted TAS workloads on one leaf domain, by its key
 * (the hostname, or the values joined with ","). */
typedef struct topo_use {
    char *key; /* malloc'd, the key of cu_tas.byuse */
    size_t nres;
    int64_t *v;
} topo_use;

/* One domain of the tree; the domains of a level are sorted by values, so
 * a domain's children are a range of the next level and a leaf's nodes a
 * range of cu_tas.sorted. */
typedef struct topo_dom {
    size_t level;
    const char **values; /* level + 1 values, borrowed from a node */
    size_t first, n;     /* children (or nodes, for a leaf) */
    size_t parent;
    int64_t state, slice; /* placement scratch: pods, slices */
    /* with a group's leader (Kueue's stateWithLeader, sliceStateWithLeader,
     * leaderState): the workers' pods and slices that fit besides one
     * leader pod, and the leader pods that fit (0 or 1; without a leader
     * swl = state, sswl = slice, lead = 0) */
    int64_t swl, sswl, lead;
    /* a leaf's entry in cu_tas.uses (cu_tas_int_use): use_idx, looked up
     * when uses had use_seen - 1 entries (0: not yet); entries are only
     * added, so a found index stays valid and a miss until uses grows */
    size_t use_seen;
    int use_idx;
} topo_dom;

struct cu_tas {
    char *name;
    size_t nlevels;
    char **levels;
    int host_lowest; /* the lowest level is kubernetes.io/hostname */
    cu_kvs node_labels;
    size_t ntols;
    cu_toleration *tols;
    cu_arena fa; /* the flavor's copies */

    CU_VEC(topo_node *) nodes;
    cu_strmap bynode;
    CU_VEC(topo_use) uses;
    cu_strmap byuse;
    CU_VEC(char *) resnames; /* resource index -> name (malloc'd); 0 is "pods" */
    cu_strmap byres;

    int dirty;          /* the tree must be rebuilt */
    cu_arena ta;        /* the tree */
    topo_node **sorted; /* member nodes by values */
    size_t nsorted;
    topo_dom **lv; /* nlevels arrays of domains */
    size_t *nlv;
};

/* Rebuilds the tree when a node changed: CU_OK or CU_ENOMEM. */
cu_err cu_tas_int_tree(cu_tas *t);
/* The index of resource name, interned when new (-1 when out of memory). */
int cu_tas_int_res(cu_tas *t, const char *name);
/* A node's free amount of resource r: allocatable - bound, and, when
 * assigned and the leaves are hosts, minus the assigned usage of its
 * host. */
int64_t cu_tas_int_free(const cu_tas *t, const topo_node *n, int r, int assigned);
/* The assigned usage of resource r on the leaf of key (0 when none). */
int64_t cu_tas_int_assigned(const cu_tas *t, const char *key, int r);
/* The key of leaf domain d: the hostname, or its values joined with ","
 * (on a, NULL when out of memory). */
const char *cu_tas_int_leafkey(const cu_tas *t, const topo_dom *d, cu_arena *a);
/* The assigned usage of leaf d, or NULL (a: scratch for its key); the
 * lookup is cached in d. */
const topo_use *cu_tas_int_use(const cu_tas *t, topo_dom *d, cu_arena *a);
/* Whether the flavor's and tols' tolerations tolerate n's taints (the
 * first untolerated one in *taint, may be NULL). */
int cu_tas_int_tolerated(const cu_tas *t, const topo_node *n, const cu_toleration *tols,
                         size_t ntols, const cu_taint **taint);

#endif
