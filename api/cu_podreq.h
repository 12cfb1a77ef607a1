/*
 * cu_podreq.h - the Kubernetes rule for a pod's effective requests
 * (PodRequests), the one home of it for Kueue's pod sets
 * (cu_pod_requests, at the end) and the simulated scheduler
 * (cluster/kubesim). For each resource r:
 *   effective(r) = max(sum(containers) + sum(sidecars),
 *                      max over plain init container i of
 *                          (init_i + sum(sidecars declared before i)))
 *                  + overhead(r)
 * where sidecars are initContainers with restartPolicy: Always. The
 * caller reads each container's amounts (requests[r], else limits[r]) from
 * its own document and adds them here in declaration order.
 *
 * Invariant: the tables are malloc-owned and borrow the resource names
 * (which must outlive them); amounts are >= 0.
 */
#ifndef CU_PODREQ_H
#define CU_PODREQ_H

#include "cu_objects.h"

/* A table of amounts by resource name, in order of first use. */
typedef struct cu_restab {
    size_t n, cap;
    cu_res *it;
    int oom; /* an entry could not be added */
} cu_restab;

/* The entry for name, or NULL. */
cu_res *cu_restab_find(const cu_restab *t, const char *name);
/* The amount for name (0 when absent). */
int64_t cu_restab_get(const cu_restab *t, const char *name);
/* The entry for name, added with 0 when missing; NULL (and t->oom) when
 * out of memory. name borrowed. */
cu_res *cu_restab_slot(cu_restab *t, const char *name);
/* Adds v to name's entry, saturating; -1 when out of memory. */
int cu_restab_add_sat(cu_restab *t, const char *name, int64_t v);
/* Frees the entries (not the names); t is empty and reusable. */
void cu_restab_free(cu_restab *t);

typedef enum cu_ctr_kind {
    CU_CTR_REGULAR = 0, /* spec.containers[] */
    CU_CTR_INIT,        /* spec.initContainers[], run to completion */
    CU_CTR_SIDECAR      /* spec.initContainers[] with restartPolicy: Always */
} cu_ctr_kind;

/* Called for an addition that overflows int64 (resource name borrowed):
 * init is 1 when it is an init container's amount plus the sidecars
 * before it, 0 for a sum. */
typedef void (*cu_podreq_overflow_fn)(void *ud, const char *res, int init);

/* The sums being built. */
typedef struct cu_podreq {
    int saturate;                   /* sums saturate at INT64_MAX; else an overflowing
                                 addition is left out and reported */
    cu_podreq_overflow_fn overflow; /* may be NULL */
    void *ud;
    cu_restab total; /* after cu_podreq_overhead: the effective requests
                                 (zeros included) */
    cu_restab side, initmax;
} cu_podreq;

/* Starts empty sums. overflow (may be NULL) gets ud. */
void cu_podreq_init(cu_podreq *p, int saturate, cu_podreq_overflow_fn overflow, void *ud);
/* Adds one container's n amounts (names unique, borrowed), containers of
 * each list in their declaration order. */
void cu_podreq_add(cu_podreq *p, cu_ctr_kind kind, const cu_res *amounts, size_t n);
/* After the last container: folds the sidecars and the init containers
 * into p->total. */
void cu_podreq_close(cu_podreq *p);
/* Adds the pod's overhead (n amounts) to p->total, after cu_podreq_close. */
void cu_podreq_overhead(cu_podreq *p, const cu_res *amounts, size_t n);
/* 1 when a table could not grow (the sums are incomplete). */
int cu_podreq_oom(const cu_podreq *p);
/* Frees the tables. */
void cu_podreq_free(cu_podreq *p);

/* Computes the effective per-pod requests of a pod spec node (the
 * PodSpec map: containers, initContainers, overhead): for each resource
 * max(sum(containers) + sum(sidecars), max over init containers i of
 * (init_i + sum(sidecars started before i))) + overhead, where a
 * container's request is its requests[r], or limits[r] when the request
 * is missing. Appends problems to d prefixed by where. Result is
 * arena-owned and sorted by name. */
cu_err cu_pod_requests(cu_arena *a, const cu_node *podspec, const char *where, cu_reslist *out,
                       cu_diag *d);

#endif
