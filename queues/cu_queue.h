/*
 * cu_queue.h - the pending queue of one ClusterQueue: a binary heap in
 * Kueue's order (priority descending, queue timestamp ascending, then key)
 * plus the inadmissible set of BestEffortFIFO.
 *
 * Items are embedded in the caller's workload records (cu_qitem); the
 * queue only links them. An item is in at most one place: the heap, the
 * inadmissible set, or nowhere.
 */
#ifndef CU_QUEUE_H
#define CU_QUEUE_H

#include "cu_base.h"

enum { CU_QI_NONE = 0, CU_QI_HEAP, CU_QI_INADMISSIBLE };

typedef struct cu_qitem {
    double afs; /* Admission Fair Sharing: its LocalQueue's usage
                            (ordered ascending before everything else; 0
                            when the ClusterQueue does not use AFS) */
    int32_t prio;
    int64_t ts;      /* queue order timestamp, ms */
    const char *key; /* "ns/name", borrowed; last tie-breaker */
    uint32_t pos;    /* index in the heap or the inadmissible array */
    uint8_t where;   /* CU_QI_* */
} cu_qitem;

typedef struct cu_pqueue {
    cu_qitem **heap;
    size_t n, cap;
    cu_qitem **inadm;
    size_t ninadm, capinadm;
} cu_pqueue;

/* Returns <0 when a goes before b in Kueue's order. */
int cu_qitem_cmp(const cu_qitem *a, const cu_qitem *b);

void cu_pq_init(cu_pqueue *q);
void cu_pq_free(cu_pqueue *q);
/* Puts it into the heap (from wherever it is). Borrows it. */
cu_err cu_pq_push(cu_pqueue *q, cu_qitem *it);
/* Returns the first item of the heap without removing it, or NULL. */
cu_qitem *cu_pq_peek(const cu_pqueue *q);
/* Removes and returns the first item of the heap, or NULL. */
cu_qitem *cu_pq_pop(cu_pqueue *q);
/* Moves it into the inadmissible set (from wherever it is). */
cu_err cu_pq_park(cu_pqueue *q, cu_qitem *it);
/* Removes it from the heap or the inadmissible set. */
void cu_pq_remove(cu_pqueue *q, cu_qitem *it);
/* Moves every inadmissible item back into the heap; returns how many. */
size_t cu_pq_requeue_all(cu_pqueue *q);
/* Re-sorts it after its prio/ts changed (it must be in the heap). */
void cu_pq_fix(cu_pqueue *q, cu_qitem *it);
/* Restores the heap order after many keys changed (O(n)). */
void cu_pq_rebuild(cu_pqueue *q);
/* Number of items pending (heap + inadmissible). */
static inline size_t cu_pq_len(const cu_pqueue *q) { return q->n + q->ninadm; }

#endif
