/*
 * cu_queue.c - binary heap keyed by Kueue's queue order, with positions
 * stored in the items so removal and re-sorting are O(log n).
 * Invariant: heap[i]->pos == i and where == CU_QI_HEAP for i < n;
 *            inadm[i]->pos == i and where == CU_QI_INADMISSIBLE for i < ninadm.
 */
#include "cu_queue.h"

#include <stdlib.h>
#include <string.h>

int cu_qitem_cmp(const cu_qitem *a, const cu_qitem *b)
{
    if (a->afs != b->afs)
        return a->afs < b->afs ? -1 : 1;
    if (a->prio != b->prio)
        return a->prio > b->prio ? -1 : 1;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    return strcmp(a->key, b->key);
}

void cu_pq_init(cu_pqueue *q) { memset(q, 0, sizeof(*q)); }

void cu_pq_free(cu_pqueue *q)
{
    free(q->heap);
    free(q->inadm);
    memset(q, 0, sizeof(*q));
}

static void set(cu_pqueue *q, size_t i, cu_qitem *it)
{
    q->heap[i] = it;
    it->pos = (uint32_t)i;
}

static void sift_up(cu_pqueue *q, size_t i)
{
    cu_qitem *it = q->heap[i];
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (cu_qitem_cmp(it, q->heap[p]) >= 0)
            break;
        set(q, i, q->heap[p]);
        i = p;
    }
    set(q, i, it);
}

static void sift_down(cu_pqueue *q, size_t i)
{
    cu_qitem *it = q->heap[i];
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        const cu_qitem *best = it;
        if (l < q->n && cu_qitem_cmp(q->heap[l], best) < 0) {
            m = l;
            best = q->heap[l];
        }
        if (r < q->n && cu_qitem_cmp(q->heap[r], best) < 0)
            m = r;
        if (m == i)
            break;
        set(q, i, q->heap[m]);
        i = m;
    }
    set(q, i, it);
}

static void heap_remove_at(cu_pqueue *q, size_t i)
{
    cu_qitem *it = q->heap[i];
    q->n--;
    if (i != q->n) {
        cu_qitem *moved = q->heap[q->n];
        set(q, i, moved);
        sift_down(q, i);
        sift_up(q, moved->pos);
    }
    it->where = CU_QI_NONE;
}

static void inadm_remove_at(cu_pqueue *q, size_t i)
{
    cu_qitem *it = q->inadm[i];
    q->ninadm--;
    if (i != q->ninadm) {
        q->inadm[i] = q->inadm[q->ninadm];
        q->inadm[i]->pos = (uint32_t)i;
    }
    it->where = CU_QI_NONE;
}

void cu_pq_remove(cu_pqueue *q, cu_qitem *it)
{
    if (it->where == CU_QI_HEAP)
        heap_remove_at(q, it->pos);
    else if (it->where == CU_QI_INADMISSIBLE)
        inadm_remove_at(q, it->pos);
}

cu_err cu_pq_push(cu_pqueue *q, cu_qitem *it)
{
    if (it->where == CU_QI_HEAP)
        return CU_OK;
    if (q->n == q->cap) {
        size_t cap = q->cap ? q->cap * 2 : 8;
        cu_qitem **h = realloc(q->heap, cap * sizeof(*h));
        if (!h)
            return CU_ENOMEM;
        q->heap = h;
        q->cap = cap;
    }
    cu_pq_remove(q, it);
    q->heap[q->n] = it;
    it->pos = (uint32_t)q->n;
    it->where = CU_QI_HEAP;
    q->n++;
    sift_up(q, q->n - 1);
    return CU_OK;
}

cu_qitem *cu_pq_peek(const cu_pqueue *q) { return q->n ? q->heap[0] : NULL; }

cu_qitem *cu_pq_pop(cu_pqueue *q)
{
    if (!q->n)
        return NULL;
    cu_qitem *it = q->heap[0];
    heap_remove_at(q, 0);
    return it;
}

cu_err cu_pq_park(cu_pqueue *q, cu_qitem *it)
{
    if (it->where == CU_QI_INADMISSIBLE)
        return CU_OK;
    if (q->ninadm == q->capinadm) {
        size_t cap = q->capinadm ? q->capinadm * 2 : 8;
        cu_qitem **h = realloc(q->inadm, cap * sizeof(*h));
        if (!h)
            return CU_ENOMEM;
        q->inadm = h;
        q->capinadm = cap;
    }
    cu_pq_remove(q, it);
    q->inadm[q->ninadm] = it;
    it->pos = (uint32_t)q->ninadm;
    it->where = CU_QI_INADMISSIBLE;
    q->ninadm++;
    return CU_OK;
}

size_t cu_pq_requeue_all(cu_pqueue *q)
{
    size_t moved = 0;
    while (q->ninadm) {
        cu_qitem *it = q->inadm[q->ninadm - 1];
        if (cu_pq_push(q, it) != CU_OK)
            break;
        moved++;
    }
    return moved;
}

void cu_pq_fix(cu_pqueue *q, cu_qitem *it)
{
    if (it->where != CU_QI_HEAP)
        return;
    sift_up(q, it->pos);
    sift_down(q, it->pos);
}

void cu_pq_rebuild(cu_pqueue *q)
{
    for (size_t i = q->n / 2; i-- > 0;)
        sift_down(q, i);
}
