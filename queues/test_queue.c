/*
 * test_queue.c - tests for cu_queue: Kueue's heap order (priority
 * descending, queue timestamp ascending, key ascending; kueue-semantics.md
 * §3.1), push/pop/peek, the inadmissible set (park, remove, requeue_all),
 * re-sorting after a priority change, and a seeded randomized run against
 * a sorted-array reference model that also checks the pos/where
 * invariants after every operation.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_queue.h"

/* The order written out independently of cu_qitem_cmp: <0 when a goes
 * first. */
static int ref_cmp(const cu_qitem *a, const cu_qitem *b)
{
    if (a->prio > b->prio)
        return -1;
    if (a->prio < b->prio)
        return 1;
    if (a->ts < b->ts)
        return -1;
    if (a->ts > b->ts)
        return 1;
    return strcmp(a->key, b->key);
}

static int sign(int v) { return (v > 0) - (v < 0); }

/* Asserts the structural invariants of q: heap[i]->pos == i and where ==
 * HEAP, the heap property (no child goes before its parent), and the same
 * pos/where bookkeeping for the inadmissible array. */
static void check_invariants(const cu_pqueue *q)
{
    assert_true(q->n <= q->cap);
    assert_true(q->ninadm <= q->capinadm);
    for (size_t i = 0; i < q->n; i++) {
        assert_non_null(q->heap[i]);
        assert_int_equal(q->heap[i]->pos, i);
        assert_int_equal(q->heap[i]->where, CU_QI_HEAP);
        if (i > 0)
            assert_true(ref_cmp(q->heap[(i - 1) / 2], q->heap[i]) < 0);
    }
    for (size_t i = 0; i < q->ninadm; i++) {
        assert_non_null(q->inadm[i]);
        assert_int_equal(q->inadm[i]->pos, i);
        assert_int_equal(q->inadm[i]->where, CU_QI_INADMISSIBLE);
    }
}

static cu_qitem item(int32_t prio, int64_t ts, const char *key)
{
    cu_qitem it;
    memset(&it, 0, sizeof(it));
    it.prio = prio;
    it.ts = ts;
    it.key = key;
    return it;
}

/* ---------------- order ---------------- */

typedef struct cmp_case {
    int32_t pa;
    int64_t ta;
    const char *ka;
    int32_t pb;
    int64_t tb;
    const char *kb;
    int want; /* sign of cmp(a, b) */
} cmp_case;

static const cmp_case cmp_cases[] = {
    /* priority descending wins over everything */
    { 10, 500, "ns/z", 5, 100, "ns/a", -1 },
    { 5, 100, "ns/a", 10, 500, "ns/z", 1 },
    { 0, 0, "a", -1, 0, "a", -1 },
    { INT32_MAX, INT64_MAX, "z", INT32_MIN, INT64_MIN, "a", -1 },
    { INT32_MIN, 0, "a", INT32_MAX, 0, "a", 1 },
    { -5, 0, "a", -4, 0, "a", 1 },
    /* equal priority: older timestamp first */
    { 3, 100, "ns/z", 3, 200, "ns/a", -1 },
    { 3, 200, "ns/a", 3, 100, "ns/z", 1 },
    { 3, INT64_MIN, "b", 3, INT64_MAX, "a", -1 },
    { 3, -1, "b", 3, 0, "a", -1 },
    /* equal priority and timestamp: key ascending */
    { 3, 100, "ns/a", 3, 100, "ns/b", -1 },
    { 3, 100, "ns/b", 3, 100, "ns/a", 1 },
    { 3, 100, "ns/a", 3, 100, "ns/a-1", -1 },
    { 3, 100, "default/x", 3, 100, "kube/x", -1 },
    { 3, 100, "ns/a", 3, 100, "ns/a", 0 },
};

static void test_order(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(cmp_cases) / sizeof(cmp_cases[0]); i++) {
        const cmp_case *c = &cmp_cases[i];
        cu_qitem a = item(c->pa, c->ta, c->ka), b = item(c->pb, c->tb, c->kb);
        int got = sign(cu_qitem_cmp(&a, &b));
        if (got != c->want)
            fail_msg("case %zu: cmp(%d/%" PRId64 "/%s, %d/%" PRId64 "/%s) = %d, want %d", i, c->pa,
                     c->ta, c->ka, c->pb, c->tb, c->kb, got, c->want);
        /* antisymmetric */
        assert_int_equal(sign(cu_qitem_cmp(&b, &a)), -c->want);
    }
}

/* ---------------- push / pop / peek ---------------- */

static void test_push_pop_peek(void **state)
{
    (void)state;
    cu_pqueue q;
    cu_pq_init(&q);
    assert_null(cu_pq_peek(&q));
    assert_null(cu_pq_pop(&q));
    assert_int_equal(cu_pq_len(&q), 0);

    /* pushed in a scrambled order; the expected pop order is by priority
     * desc, then timestamp asc, then key asc */
    cu_qitem it[] = {
        item(0, 300, "ns/e"),   /* 0 */
        item(10, 200, "ns/b"),  /* 1 */
        item(0, 100, "ns/d"),   /* 2 */
        item(10, 200, "ns/a"),  /* 3 */
        item(-3, 50, "ns/g"),   /* 4 */
        item(10, 100, "ns/c"),  /* 5 */
        item(0, 300, "ns/f"),   /* 6 */
        item(100, 999, "ns/h"), /* 7 */
        item(-3, 50, "ns/0"),   /* 8 */
    };
    static const int want[] = { 7, 5, 3, 1, 2, 0, 6, 8, 4 };
    size_t n = sizeof(it) / sizeof(it[0]);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(cu_pq_push(&q, &it[i]), CU_OK);
        assert_int_equal(it[i].where, CU_QI_HEAP);
        check_invariants(&q);
    }
    assert_int_equal(cu_pq_len(&q), n);
    /* pushing an item already in the heap changes nothing */
    assert_int_equal(cu_pq_push(&q, &it[3]), CU_OK);
    assert_int_equal(cu_pq_len(&q), n);
    check_invariants(&q);

    for (size_t i = 0; i < n; i++) {
        cu_qitem *head = cu_pq_peek(&q);
        assert_ptr_equal(head, &it[want[i]]);
        assert_int_equal(cu_pq_len(&q), n - i); /* peek does not remove */
        cu_qitem *p = cu_pq_pop(&q);
        assert_ptr_equal(p, &it[want[i]]);
        assert_int_equal(p->where, CU_QI_NONE);
        check_invariants(&q);
    }
    assert_null(cu_pq_peek(&q));
    assert_null(cu_pq_pop(&q));
    /* popped items can be pushed again */
    assert_int_equal(cu_pq_push(&q, &it[4]), CU_OK);
    assert_ptr_equal(cu_pq_pop(&q), &it[4]);
    cu_pq_free(&q);
    assert_int_equal(q.n, 0);
    assert_null(q.heap);
}

/* ---------------- inadmissible set ---------------- */

static void test_park(void **state)
{
    (void)state;
    cu_pqueue q;
    cu_pq_init(&q);
    cu_qitem a = item(5, 1, "a"), b = item(4, 1, "b"), c = item(3, 1, "c"), d = item(2, 1, "d");
    assert_int_equal(cu_pq_push(&q, &a), CU_OK);
    assert_int_equal(cu_pq_push(&q, &b), CU_OK);
    assert_int_equal(cu_pq_push(&q, &c), CU_OK);

    /* parking the head lets the next one become the head (BestEffortFIFO) */
    assert_int_equal(cu_pq_park(&q, &a), CU_OK);
    assert_int_equal(a.where, CU_QI_INADMISSIBLE);
    assert_ptr_equal(cu_pq_peek(&q), &b);
    assert_int_equal(q.n, 2);
    assert_int_equal(q.ninadm, 1);
    assert_int_equal(cu_pq_len(&q), 3);
    check_invariants(&q);

    /* parking twice is a no-op; parking an item that is nowhere works */
    assert_int_equal(cu_pq_park(&q, &a), CU_OK);
    assert_int_equal(q.ninadm, 1);
    assert_int_equal(cu_pq_park(&q, &d), CU_OK);
    assert_int_equal(q.ninadm, 2);
    assert_int_equal(cu_pq_len(&q), 4);
    check_invariants(&q);

    /* a popped head that failed is parked from "nowhere" */
    cu_qitem *h = cu_pq_pop(&q);
    assert_ptr_equal(h, &b);
    assert_int_equal(cu_pq_park(&q, h), CU_OK);
    assert_ptr_equal(cu_pq_peek(&q), &c);
    check_invariants(&q);

    /* pushing a parked item moves it back into the heap */
    assert_int_equal(cu_pq_push(&q, &a), CU_OK);
    assert_int_equal(a.where, CU_QI_HEAP);
    assert_int_equal(q.ninadm, 2);
    assert_ptr_equal(cu_pq_peek(&q), &a);
    check_invariants(&q);

    /* parked items never come out of pop */
    assert_ptr_equal(cu_pq_pop(&q), &a);
    assert_ptr_equal(cu_pq_pop(&q), &c);
    assert_null(cu_pq_pop(&q));
    assert_int_equal(cu_pq_len(&q), 2);
    cu_pq_free(&q);
}

static void test_remove(void **state)
{
    (void)state;
    cu_pqueue q;
    cu_pq_init(&q);
    enum { N = 31 };
    cu_qitem it[N];
    char keys[N][8];
    /* priorities 0..30 pushed ascending: every push sifts to the root */
    for (int i = 0; i < N; i++) {
        snprintf(keys[i], sizeof(keys[i]), "k%02d", i);
        it[i] = item(i, 0, keys[i]);
        assert_int_equal(cu_pq_push(&q, &it[i]), CU_OK);
    }
    check_invariants(&q);
    assert_ptr_equal(cu_pq_peek(&q), &it[30]);

    /* remove from the middle, a leaf, the last slot and the root */
    int removed[N] = { 0 };
    cu_qitem *mid = q.heap[N / 2 - 3];
    cu_qitem *last = q.heap[q.n - 1];
    cu_qitem *leaf = q.heap[q.n - 5];
    cu_qitem *root = q.heap[0];
    cu_qitem *victims[] = { mid, last, leaf, root };
    for (size_t v = 0; v < 4; v++) {
        size_t before = q.n;
        cu_pq_remove(&q, victims[v]);
        assert_int_equal(victims[v]->where, CU_QI_NONE);
        assert_int_equal(q.n, before - 1);
        removed[victims[v] - it] = 1;
        check_invariants(&q);
    }
    /* removing an item that is nowhere is a no-op */
    cu_pq_remove(&q, root);
    assert_int_equal(q.n, N - 4);

    /* the rest pops in priority order */
    int prev = N;
    size_t popped = 0;
    cu_qitem *p = cu_pq_pop(&q);
    while (p) {
        assert_false(removed[p - it]);
        assert_true(p->prio < prev);
        prev = p->prio;
        check_invariants(&q);
        popped++;
        p = cu_pq_pop(&q);
    }
    assert_int_equal(popped, N - 4);

    /* remove from the inadmissible set: first, middle, last */
    for (int i = 0; i < 6; i++)
        assert_int_equal(cu_pq_park(&q, &it[i]), CU_OK);
    cu_pq_remove(&q, &it[2]);
    assert_int_equal(it[2].where, CU_QI_NONE);
    check_invariants(&q);
    cu_pq_remove(&q, &it[0]);
    check_invariants(&q);
    cu_pq_remove(&q, q.inadm[q.ninadm - 1]);
    check_invariants(&q);
    assert_int_equal(q.ninadm, 3);
    assert_int_equal(q.n, 0);
    assert_int_equal(cu_pq_len(&q), 3);
    cu_pq_free(&q);
}

static void test_requeue_all(void **state)
{
    (void)state;
    cu_pqueue q;
    cu_pq_init(&q);
    assert_int_equal(cu_pq_requeue_all(&q), 0);

    enum { N = 20 };
    cu_qitem it[N];
    char keys[N][8];
    for (int i = 0; i < N; i++) {
        snprintf(keys[i], sizeof(keys[i]), "k%02d", i);
        /* prio i % 4 descending, then ts descending with i */
        it[i] = item(i % 4, 1000 - i, keys[i]);
        assert_int_equal(cu_pq_push(&q, &it[i]), CU_OK);
    }
    /* park the 12 best ones (each time the head) */
    for (int i = 0; i < 12; i++)
        assert_int_equal(cu_pq_park(&q, cu_pq_pop(&q)), CU_OK);
    check_invariants(&q);
    assert_int_equal(q.n, 8);
    assert_int_equal(q.ninadm, 12);

    assert_int_equal(cu_pq_requeue_all(&q), 12);
    assert_int_equal(q.ninadm, 0);
    assert_int_equal(q.n, N);
    check_invariants(&q);

    /* everything pops in the full order */
    cu_qitem *prev = NULL;
    for (int i = 0; i < N; i++) {
        cu_qitem *p = cu_pq_pop(&q);
        assert_non_null(p);
        if (prev)
            assert_true(ref_cmp(prev, p) < 0);
        prev = p;
    }
    assert_int_equal(cu_pq_requeue_all(&q), 0);
    cu_pq_free(&q);

    /* all parked, nothing in the heap; after the requeue the head is prio 3
     * (i = 3, 7, 11, 15, 19) with the oldest timestamp 1000 − 19: i = 19 */
    cu_pq_init(&q);
    for (int i = 0; i < N; i++) {
        it[i].where = CU_QI_NONE;
        assert_int_equal(cu_pq_park(&q, &it[i]), CU_OK);
    }
    assert_null(cu_pq_peek(&q));
    assert_int_equal(cu_pq_requeue_all(&q), N);
    assert_ptr_equal(cu_pq_peek(&q), &it[19]);
    check_invariants(&q);
    cu_pq_free(&q);
}

static void test_fix(void **state)
{
    (void)state;
    cu_pqueue q;
    cu_pq_init(&q);
    enum { N = 15 };
    cu_qitem it[N];
    char keys[N][8];
    for (int i = 0; i < N; i++) {
        snprintf(keys[i], sizeof(keys[i]), "k%02d", i);
        it[i] = item(10 * i, 0, keys[i]);
        assert_int_equal(cu_pq_push(&q, &it[i]), CU_OK);
    }
    assert_ptr_equal(cu_pq_peek(&q), &it[14]);

    /* raise the lowest one above everyone */
    it[0].prio = 1000;
    cu_pq_fix(&q, &it[0]);
    check_invariants(&q);
    assert_ptr_equal(cu_pq_peek(&q), &it[0]);

    /* drop the head below everyone: 14 (prio 140) leads again */
    it[0].prio = -1;
    cu_pq_fix(&q, &it[0]);
    check_invariants(&q);
    assert_ptr_equal(cu_pq_peek(&q), &it[14]);
    assert_int_equal(it[0].where, CU_QI_HEAP);

    /* tie it[13] with it[14] on priority but make it newer: 14 still
     * leads; then a timestamp change alone makes 13 the older one */
    it[13].prio = 140;
    it[13].ts = 5;
    cu_pq_fix(&q, &it[13]);
    check_invariants(&q);
    assert_ptr_equal(cu_pq_peek(&q), &it[14]);
    it[13].ts = -5;
    cu_pq_fix(&q, &it[13]);
    check_invariants(&q);
    assert_ptr_equal(cu_pq_peek(&q), &it[13]);

    /* an unchanged item stays where it is */
    cu_qitem *head = cu_pq_peek(&q);
    cu_pq_fix(&q, head);
    assert_ptr_equal(cu_pq_peek(&q), head);

    /* fix on a parked item leaves it parked */
    assert_int_equal(cu_pq_park(&q, &it[7]), CU_OK);
    it[7].prio = 5000;
    cu_pq_fix(&q, &it[7]);
    assert_int_equal(it[7].where, CU_QI_INADMISSIBLE);
    assert_ptr_equal(cu_pq_peek(&q), &it[13]);
    check_invariants(&q);

    /* full pop order afterwards: 13, 14, 12, 11, ..., 8, 6, ..., 1, 0 */
    static const int want[] = { 13, 14, 12, 11, 10, 9, 8, 6, 5, 4, 3, 2, 1, 0 };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        assert_ptr_equal(cu_pq_pop(&q), &it[want[i]]);
    assert_null(cu_pq_pop(&q));
    cu_pq_free(&q);
}

/* ---------------- randomized against a reference model ---------------- */

static uint64_t rnd_next(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static size_t rnd_below(uint64_t *s, size_t n) { return (size_t)(rnd_next(s) % n); }

enum { POOL = 400 };

typedef struct model {
    cu_qitem it[POOL];
    char keys[POOL][16];
    uint8_t where[POOL];    /* the model's idea of it[i].where */
    cu_qitem *sorted[POOL]; /* heap items in the reference order */
    size_t nsorted;
    size_t ninadm;
} model;

static void model_insert(model *m, cu_qitem *x)
{
    size_t i = 0;
    while (i < m->nsorted && ref_cmp(m->sorted[i], x) < 0)
        i++;
    memmove(&m->sorted[i + 1], &m->sorted[i], (m->nsorted - i) * sizeof(m->sorted[0]));
    m->sorted[i] = x;
    m->nsorted++;
}

static void model_erase(model *m, cu_qitem *x)
{
    for (size_t i = 0; i < m->nsorted; i++) {
        if (m->sorted[i] == x) {
            memmove(&m->sorted[i], &m->sorted[i + 1], (m->nsorted - i - 1) * sizeof(m->sorted[0]));
            m->nsorted--;
            return;
        }
    }
    fail_msg("model: %s not in the sorted array", x->key);
}

/* moves item i to where w in the model */
static void model_move(model *m, size_t i, uint8_t w)
{
    uint8_t old = m->where[i];
    if (old == w)
        return;
    if (old == CU_QI_HEAP)
        model_erase(m, &m->it[i]);
    else if (old == CU_QI_INADMISSIBLE)
        m->ninadm--;
    if (w == CU_QI_HEAP)
        model_insert(m, &m->it[i]);
    else if (w == CU_QI_INADMISSIBLE)
        m->ninadm++;
    m->where[i] = w;
}

static void model_check(const model *m, const cu_pqueue *q, uint64_t seed, int step)
{
    if (q->n != m->nsorted || q->ninadm != m->ninadm)
        fail_msg("seed %" PRIu64 " step %d: heap %zu/%zu inadm %zu/%zu", seed, step, q->n,
                 m->nsorted, q->ninadm, m->ninadm);
    check_invariants(q);
    for (size_t i = 0; i < POOL; i++) {
        if (m->it[i].where != m->where[i])
            fail_msg("seed %" PRIu64 " step %d: %s where %d, want %d", seed, step, m->keys[i],
                     m->it[i].where, m->where[i]);
    }
    assert_ptr_equal(cu_pq_peek(q), m->nsorted ? m->sorted[0] : NULL);
}

/* prio/ts ranges are small so ties on priority and timestamp are common
 * and the key decides often. */
static void random_attrs(uint64_t *s, cu_qitem *x)
{
    x->prio = (int32_t)rnd_below(s, 5) - 2;
    x->ts = (int64_t)rnd_below(s, 8) * 1000;
}

static void random_run(uint64_t seed, int steps)
{
    model *m = calloc(1, sizeof(*m));
    assert_non_null(m);
    cu_pqueue q;
    cu_pq_init(&q);
    uint64_t s = seed;
    for (size_t i = 0; i < POOL; i++) {
        snprintf(m->keys[i], sizeof(m->keys[i]), "ns/w%03zu", (POOL - i) * 7 % POOL);
        m->it[i].key = m->keys[i];
        random_attrs(&s, &m->it[i]);
    }
    size_t counts[8] = { 0 };
    for (int step = 0; step < steps; step++) {
        size_t i = rnd_below(&s, POOL);
        cu_qitem *x = &m->it[i];
        size_t op = rnd_below(&s, 100);
        if (op < 35) { /* push (new, parked or in heap) */
            assert_int_equal(cu_pq_push(&q, x), CU_OK);
            model_move(m, i, CU_QI_HEAP);
            counts[0]++;
        } else if (op < 60) { /* pop */
            cu_qitem *want = m->nsorted ? m->sorted[0] : NULL;
            cu_qitem *got = cu_pq_pop(&q);
            if (got != want)
                fail_msg("seed %" PRIu64 " step %d: pop %s, want %s", seed, step,
                         got ? got->key : "NULL", want ? want->key : "NULL");
            if (got)
                model_move(m, (size_t)(got - m->it), CU_QI_NONE);
            counts[1]++;
        } else if (op < 72) { /* park */
            assert_int_equal(cu_pq_park(&q, x), CU_OK);
            model_move(m, i, CU_QI_INADMISSIBLE);
            counts[2]++;
        } else if (op < 82) { /* remove */
            cu_pq_remove(&q, x);
            model_move(m, i, CU_QI_NONE);
            counts[3]++;
        } else if (op < 95) { /* priority / timestamp change */
            if (m->where[i] == CU_QI_HEAP)
                model_erase(m, x);
            random_attrs(&s, x);
            cu_pq_fix(&q, x);
            if (m->where[i] == CU_QI_HEAP)
                model_insert(m, x);
            counts[4]++;
        } else if (op < 97) { /* requeue all */
            size_t want = m->ninadm;
            assert_int_equal(cu_pq_requeue_all(&q), want);
            for (size_t k = 0; k < POOL; k++)
                if (m->where[k] == CU_QI_INADMISSIBLE)
                    model_move(m, k, CU_QI_HEAP);
            counts[5]++;
        } else { /* pop a long run */
            size_t run = rnd_below(&s, 30);
            for (size_t k = 0; k < run && m->nsorted; k++) {
                cu_qitem *got = cu_pq_pop(&q);
                assert_ptr_equal(got, m->sorted[0]);
                model_move(m, (size_t)(got - m->it), CU_QI_NONE);
            }
            counts[6]++;
        }
        model_check(m, &q, seed, step);
        assert_int_equal(cu_pq_len(&q), m->nsorted + m->ninadm);
    }
    /* every kind of operation ran */
    for (size_t k = 0; k < 7; k++)
        assert_true(counts[k] > 0);

    /* drain: requeue and pop everything in the reference order */
    cu_pq_requeue_all(&q);
    for (size_t k = 0; k < POOL; k++)
        if (m->where[k] == CU_QI_INADMISSIBLE)
            model_move(m, k, CU_QI_HEAP);
    while (m->nsorted) {
        cu_qitem *got = cu_pq_pop(&q);
        assert_ptr_equal(got, m->sorted[0]);
        model_move(m, (size_t)(got - m->it), CU_QI_NONE);
    }
    assert_null(cu_pq_pop(&q));
    assert_int_equal(cu_pq_len(&q), 0);
    cu_pq_free(&q);
    free(m);
}

static void test_random_model(void **state)
{
    (void)state;
    random_run(20240601, 20000);
    random_run(7, 20000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order),        cmocka_unit_test(test_push_pop_peek),
        cmocka_unit_test(test_park),         cmocka_unit_test(test_remove),
        cmocka_unit_test(test_requeue_all),  cmocka_unit_test(test_fix),
        cmocka_unit_test(test_random_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
