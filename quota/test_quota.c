/*
 * test_quota.c - tests for cu_quota, Kueue's resource-node arithmetic over a
 * cohort tree (kueue-semantics.md §1.3, §1.4, §3.4).
 *
 * Every expected number below was worked out by hand from the §3.4 formulas,
 * restated here so the comments can refer to them:
 *
 *   subtree(CQ)     = nominal
 *   subtree(cohort) = nominal + Σ_children (subtree(c) − local(c))
 *   local(n)        = llimit set ? max(0, subtree − llimit) : 0
 *   usage(cohort)   = Σ_children max(0, usage(c) − local(c))
 *   localAvail(n)   = max(0, local − usage)
 *   available(root) = subtree − usage
 *   available(n)    = localAvail(n) + P, where P = available(parent), and
 *                     with a borrowing limit
 *                     P = min(P, (subtree − local) − max(0, usage − local) + blimit)
 *   potential(root) = subtree
 *   potential(n)    = local + potential(parent), capped by subtree + blimit
 *   borrowing(n)   <=> usage > subtree
 *   addUsage(n, v)  : usage += v; the part beyond localAvail(before) goes up.
 *
 * borrow_level (not in §3.4; Kueue's QuantitiesFitInQuota walk): at each node
 * the request fits when usage + v <= subtree; otherwise v − localAvail(n)
 * goes on to the parent, one level up. A root that does not fit still ends
 * the walk, so the answer is then the root's height.
 *
 * CU_QTY_INF (INT64_MAX) is "unlimited" (§3.4: "Arithmetic saturates at
 * MaxInt64; an unlimited quantity is representable"): unlimited minus a
 * finite usage stays unlimited, sums saturate instead of wrapping. Where a
 * formula subtracts a finite limit from an unlimited quota the result is
 * still the formula's: an unlimited quota with lendingLimit L lends exactly
 * L to its parent.
 *
 * Quantities are int64 milli-units (1 cpu = 1000).
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

#include "cu_quota.h"

#define CPU(x) ((int64_t)(x)*1000)
#define U CU_QUOTA_UNSET
#define INF CU_QTY_INF
#define MAXN 12

/* ---------------- tree building ---------------- */

typedef struct node_spec {
    const char *name;
    int is_cq;
    int parent; /* index into the case's nodes, -1 = root */
    int64_t nominal, blimit, llimit;
} node_spec;

typedef struct tree {
    cu_qnode *n[MAXN];
    size_t count;
} tree;

static void tree_build(tree *t, const node_spec *spec, size_t count, size_t nfr)
{
    memset(t, 0, sizeof(*t));
    assert_true(count <= MAXN);
    t->count = count;
    for (size_t i = 0; i < count; i++) {
        t->n[i] = cu_qnode_new(spec[i].name, spec[i].is_cq, nfr);
        assert_non_null(t->n[i]);
        t->n[i]->id = (int)i;
        for (size_t fr = 0; fr < nfr; fr++) {
            t->n[i]->nominal[fr] = spec[i].nominal;
            t->n[i]->blimit[fr] = spec[i].blimit;
            t->n[i]->llimit[fr] = spec[i].llimit;
        }
    }
    for (size_t i = 0; i < count; i++) {
        if (spec[i].parent >= 0)
            assert_int_equal(cu_qnode_set_parent(t->n[i], t->n[spec[i].parent]), CU_OK);
    }
    for (size_t i = 0; i < count; i++) {
        if (!t->n[i]->parent)
            cu_quota_recompute(t->n[i]);
    }
}

static void tree_free(tree *t)
{
    for (size_t i = 0; i < t->count; i++)
        cu_qnode_free(t->n[i]);
    memset(t, 0, sizeof(*t));
}

/* local(n) straight from the formula, in plain int64 arithmetic (no
 * overflow is possible for non-negative subtree and llimit). */
static int64_t ref_local(const cu_qnode *n, size_t fr)
{
    if (n->llimit[fr] == U)
        return 0;
    int64_t v = n->subtree[fr] - n->llimit[fr];
    return v > 0 ? v : 0;
}

/* Counts the cohorts whose usage differs from Σ max(0, usage(c) − local(c)),
 * printing each. */
static int check_cohort_usage(const tree *t, size_t nfr, const char *ctx)
{
    int bad = 0;
    for (size_t i = 0; i < t->count; i++) {
        const cu_qnode *n = t->n[i];
        if (n->is_cq)
            continue;
        for (size_t fr = 0; fr < nfr; fr++) {
            int64_t want = 0;
            for (size_t k = 0; k < n->nkids; k++) {
                int64_t part = n->kids[k]->usage[fr] - ref_local(n->kids[k], fr);
                want += part > 0 ? part : 0;
            }
            if (n->usage[fr] != want) {
                print_error("%s: cohort %s fr %zu usage %" PRId64
                            ", want sum over children %" PRId64 "\n",
                            ctx, n->name, fr, n->usage[fr], want);
                bad++;
            }
        }
    }
    return bad;
}

/* ---------------- table-driven scenarios ---------------- */

enum { OP_END = 0, OP_ADD, OP_EXP, OP_QUOTA, OP_LEVEL, OP_SETNOM };

typedef struct qop {
    int op;
    int node;
    int64_t a, b, c;
    int d;
} qop;

/* add v (negative removes) of fr 0 at node n */
#define ADD(n, v) \
    { \
        OP_ADD, n, v, 0, 0, 0 \
    }
/* expect usage, available, potential and borrowing of node n */
#define EXP(n, usage, avail, pot, borrowing) \
    { \
        OP_EXP, n, usage, avail, pot, borrowing \
    }
/* expect subtree quota and local quota of node n */
#define QUOTA(n, subtree, local) \
    { \
        OP_QUOTA, n, subtree, local, 0, 0 \
    }
/* expect cu_quota_borrow_level(n, 0, v) == lvl */
#define LEVEL(n, v, lvl) \
    { \
        OP_LEVEL, n, v, 0, 0, lvl \
    }
/* set nominal of node n to v and recompute its tree (a quota change) */
#define SETNOM(n, v) \
    { \
        OP_SETNOM, n, v, 0, 0, 0 \
    }
#define END \
    { \
        OP_END, 0, 0, 0, 0, 0 \
    }

typedef struct quota_case {
    const char *name;
    node_spec nodes[MAXN];
    size_t count;
    const qop *ops;
} quota_case;

/* --- §1.3 worked example: A 9 cpu, B 12 cpu in cohort team-ab --- */

/* B idle -> A can use 21. subtree(team-ab) = 0 + 9 + 12 = 21; no limits so
 * available(A) = 0 + (21 − usage(team-ab)). */
static const qop ops_doc_idle[] = { QUOTA(0, CPU(21), 0),
                                    QUOTA(1, CPU(9), 0),
                                    QUOTA(2, CPU(12), 0),
                                    EXP(1, 0, CPU(21), CPU(21), 0),
                                    EXP(2, 0, CPU(21), CPU(21), 0),
                                    LEVEL(1, CPU(9), 0),     /* 0 + 9 <= 9 */
                                    LEVEL(1, CPU(9) + 1, 1), /* borrows: team-ab 9.001 <= 21 */
                                    ADD(1, CPU(21)), /* A takes everything: team-ab usage 21 */
                                    EXP(0, CPU(21), 0, CPU(21), 0),
                                    EXP(1, CPU(21), 0, CPU(21), 1),
                                    EXP(2, 0, 0, CPU(21), 0), /* B must reclaim by preemption now */
                                    LEVEL(1, 1, 1),   /* nothing fits anywhere: root height */
                                    ADD(1, -CPU(12)), /* A 9, team-ab 9 */
                                    EXP(0, CPU(9), CPU(12), CPU(21), 0),
                                    EXP(1, CPU(9), CPU(12), CPU(21), 0),
                                    EXP(2, 0, CPU(12), CPU(21), 0),
                                    ADD(2, CPU(12)), /* B 12, team-ab 21 */
                                    EXP(1, CPU(9), 0, CPU(21), 0),
                                    EXP(2, CPU(12), 0, CPU(21), 0),
                                    ADD(1, -CPU(9)),
                                    ADD(2, -CPU(12)),
                                    EXP(0, 0, CPU(21), CPU(21), 0),
                                    END };

/* borrowingLimit 1 on A -> A can use 10.
 * potential(A) = min(0 + 21, 9 + 1) = 10;
 * available(A) = 0 + min(21 − u(co), (9 − 0) − max(0, u(A)) + 1). */
static const qop ops_doc_blimit[] = { QUOTA(0, CPU(21), 0),
                                      EXP(1, 0, CPU(10), CPU(10), 0),
                                      EXP(2, 0, CPU(21), CPU(21), 0),
                                      ADD(1, CPU(10)), /* min(11, 9 − 10 + 1 = 0) = 0 */
                                      EXP(1, CPU(10), 0, CPU(10), 1),
                                      EXP(2, 0, CPU(11), CPU(21), 0),
                                      ADD(2, CPU(11)), /* co 21: both 0 left */
                                      EXP(1, CPU(10), 0, CPU(10), 1),
                                      EXP(2, CPU(11), 0, CPU(21), 0),
                                      ADD(1, -CPU(6)), /* A 4, co 15: A min(6, 9 − 4 + 1 = 6) = 6 */
                                      EXP(1, CPU(4), CPU(6), CPU(10), 0),
                                      EXP(2, CPU(11), CPU(6), CPU(21), 0),
                                      ADD(2, CPU(5)), /* B 16, co 20: A min(1, 6) = 1; B 1 */
                                      EXP(1, CPU(4), CPU(1), CPU(10), 0),
                                      EXP(2, CPU(16), CPU(1), CPU(21), 1),
                                      ADD(1, -CPU(4)),
                                      ADD(2, -CPU(16)),
                                      EXP(0, 0, CPU(21), CPU(21), 0),
                                      END };

/* lendingLimit 1 on B -> A can use 10, B always keeps 11.
 * local(B) = max(0, 12 − 1) = 11, subtree(co) = 9 + (12 − 11) = 10.
 * potential(A) = 0 + 10; potential(B) = 11 + 10 = 21. */
static const qop ops_doc_llimit[] = { QUOTA(0, CPU(10), 0),
                                      QUOTA(2, CPU(12), CPU(11)),
                                      QUOTA(1, CPU(9), 0),
                                      EXP(1, 0, CPU(10), CPU(10), 0),
                                      EXP(2, 0, CPU(21), CPU(21), 0),
                                      ADD(1, CPU(10)), /* A takes all it can: co usage 10 */
                                      EXP(0, CPU(10), 0, CPU(10), 0),
                                      EXP(1, CPU(10), 0, CPU(10), 1),
                                      EXP(2, 0, CPU(11), CPU(21), 0), /* B keeps 11 */
                                      LEVEL(2, CPU(11), 0),
                                      ADD(2, CPU(11)), /* inside local(B): nothing goes up */
                                      EXP(0, CPU(10), 0, CPU(10), 0),
                                      EXP(2, CPU(11), 0, CPU(21), 0),
                                      ADD(1, -CPU(10)), /* A idle: B may borrow the 10 of co */
                                      EXP(0, 0, CPU(10), CPU(10), 0),
                                      EXP(1, 0, CPU(10), CPU(10), 0),
                                      EXP(2, CPU(11), CPU(10), CPU(21), 0),
                                      ADD(2, CPU(4)), /* B 15: 4 above local goes up, co 4 */
                                      EXP(0, CPU(4), CPU(6), CPU(10), 0),
                                      EXP(2, CPU(15), CPU(6), CPU(21), 1),
                                      EXP(1, 0, CPU(6), CPU(10), 0),
                                      LEVEL(2, CPU(6), 1), /* B 21 > 12; co 4 + 6 <= 10 */
                                      LEVEL(2, CPU(6) + 1,
                                            1),         /* root does not fit either: root height */
                                      ADD(2, -CPU(13)), /* B 2: co back to 0 */
                                      EXP(0, 0, CPU(10), CPU(10), 0),
                                      EXP(2, CPU(2), CPU(19), CPU(21), 0),
                                      ADD(2, -CPU(2)),
                                      EXP(2, 0, CPU(21), CPU(21), 0),
                                      END };

/* §1.4: the root cohort's own nominalQuota is a shared pool.
 * root (nominal 12) <- org (no quota) <- A (3);  root <- B (5).
 * subtree: A 3, org 0 + 3 = 3, B 5, root 12 + 3 + 5 = 20. */
static const qop ops_pool[] = { QUOTA(0, CPU(20), 0),
                                QUOTA(1, CPU(3), 0),
                                QUOTA(2, CPU(3), 0),
                                QUOTA(3, CPU(5), 0),
                                EXP(2, 0, CPU(20), CPU(20), 0),
                                EXP(3, 0, CPU(20), CPU(20), 0),
                                ADD(2, CPU(4)), /* A 4, org 4, root 4 */
                                EXP(0, CPU(4), CPU(16), CPU(20), 0),
                                EXP(1, CPU(4), CPU(16), CPU(20), 1),
                                EXP(2, CPU(4), CPU(16), CPU(20), 1),
                                EXP(3, 0, CPU(16), CPU(20), 0),
                                LEVEL(2, CPU(1), 2), /* A 5 > 3, org 5 > 3, root 5 <= 20 */
                                LEVEL(3, CPU(5), 0),
                                LEVEL(3, CPU(5) + 1, 1),
                                ADD(3, CPU(16)), /* B 16, root 20 */
                                EXP(0, CPU(20), 0, CPU(20), 0),
                                EXP(2, CPU(4), 0, CPU(20), 1),
                                EXP(3, CPU(16), 0, CPU(20), 1),
                                ADD(2, -CPU(4)),
                                EXP(1, 0, CPU(4), CPU(20), 0),
                                ADD(3, -CPU(16)),
                                EXP(0, 0, CPU(20), CPU(20), 0),
                                END };

/* Child cohort with both limits.
 * root R (0) <- C (nominal 2, blimit 3, llimit 4) <- A (6, llimit 1), B (2)
 * root R <- D (10).
 * local(A) = 6 − 1 = 5, A gives C 1; B gives 2; subtree(C) = 2 + 1 + 2 = 5;
 * local(C) = 5 − 4 = 1, C gives R 4; subtree(R) = 4 + 10 = 14.
 * potential: R 14; C min(1 + 14, 5 + 3) = 8; A 5 + 8 = 13; B 8; D 14.
 * available(C) at zero usage: 1 + min(14, (5 − 1) − 0 + 3 = 7) = 8. */
static const qop ops_limits[] = {
    QUOTA(0, CPU(14), 0), QUOTA(1, CPU(5), CPU(1)), QUOTA(2, CPU(6), CPU(5)), QUOTA(3, CPU(2), 0),
    QUOTA(4, CPU(10), 0), EXP(0, 0, CPU(14), CPU(14), 0), EXP(1, 0, CPU(8), CPU(8), 0),
    EXP(2, 0, CPU(13), CPU(13), 0), EXP(3, 0, CPU(8), CPU(8), 0), EXP(4, 0, CPU(14), CPU(14), 0),
    LEVEL(2, CPU(7), 1), /* A 7 > 6; 7 − localAvail(A) 5 = 2 goes up;
                                   * C 2 <= 5 */
    ADD(4, CPU(9)),      /* D 9, R 9: R avail 5; C 1 + min(5, 7) = 6 */
    EXP(0, CPU(9), CPU(5), CPU(14), 0), EXP(1, 0, CPU(6), CPU(8), 0),
    EXP(2, 0, CPU(11), CPU(13), 0), EXP(3, 0, CPU(6), CPU(8), 0),
    EXP(4, CPU(9), CPU(5), CPU(14), 0), ADD(2, 5500), /* A 5.5: 0.5 beyond local(A) -> C 0.5,
                                   * within local(C) = 1 -> R stays 9.
                                   * C: max(0, 1 − 0.5) + min(5, 4 − 0 + 3) = 5.5;
                                   * A: max(0, 5 − 5.5) + 5.5 = 5.5 */
    EXP(0, CPU(9), CPU(5), CPU(14), 0), EXP(1, 500, 5500, CPU(8), 0),
    EXP(2, 5500, 5500, CPU(13), 0), EXP(3, 0, 5500, CPU(8), 0), LEVEL(2, 500, 0), /* A 6 <= 6 */
    LEVEL(2, CPU(1), 1), /* A 6.5 > 6; 1 goes up; C 1.5 <= 5 */
    ADD(3, CPU(3)),      /* B 3 -> C 3.5; beyond local(C):
                                   * max(0, 3.5 − 1) − max(0, 0.5 − 1) = 2.5 -> R 11.5 */
    EXP(0, 11500, 2500, CPU(14), 0),
    /* C: 0 + min(2.5, (5 − 1) − 2.5 + 3 = 4.5) = 2.5 */
    EXP(1, 3500, 2500, CPU(8), 0), EXP(2, 5500, 2500, CPU(13), 0), EXP(3, CPU(3), 2500, CPU(8), 1),
    EXP(4, CPU(9), 2500, CPU(14), 0), LEVEL(3, CPU(1), 1), /* B 4 > 2; C 4.5 <= 5 */
    LEVEL(3, CPU(2), 2), /* C 5.5 > 5; 2 − 0 goes up; R 13.5 <= 14 */
    ADD(4, -CPU(9)),     /* D idle: R 2.5, avail 11.5; the borrowing
                                   * limit caps C at 4.5 */
    EXP(0, 2500, 11500, CPU(14), 0), EXP(1, 3500, 4500, CPU(8), 0), EXP(2, 5500, 4500, CPU(13), 0),
    EXP(3, CPU(3), 4500, CPU(8), 1), EXP(4, 0, 11500, CPU(14), 0),
    ADD(2, -5500), /* A 0: C 3; C beyond local 2 -> R 2 */
    EXP(0, CPU(2), CPU(12), CPU(14), 0),
    /* C: max(0, 1 − 3) + min(12, 4 − 2 + 3 = 5) = 5; A: 5 + 5 */
    EXP(1, CPU(3), CPU(5), CPU(8), 0), EXP(2, 0, CPU(10), CPU(13), 0), ADD(3, -CPU(3)),
    EXP(0, 0, CPU(14), CPU(14), 0), EXP(1, 0, CPU(8), CPU(8), 0), END
};

/* Three levels.
 * R (1) <- C1 (0, blimit 2) <- C2 (0.5, llimit 0) <- A (3)
 *          C1 <- B (4, llimit 1);  R <- E (2)
 * A gives C2 3; subtree(C2) = 3.5, local(C2) = 3.5 (lends nothing);
 * local(B) = 3, B gives 1; subtree(C1) = 0 + 0 + 1 = 1; E 2;
 * subtree(R) = 1 + 1 + 2 = 4.
 * potential: R 4; C1 min(0 + 4, 1 + 2) = 3; C2 3.5 + 3 = 6.5; A 6.5;
 * B 3 + 3 = 6; E 4. */
static const qop ops_three[] = {
    QUOTA(0, CPU(4), 0), QUOTA(1, CPU(1), 0), QUOTA(2, 3500, 3500), QUOTA(3, CPU(3), 0),
    QUOTA(4, CPU(4), CPU(3)), QUOTA(5, CPU(2), 0), EXP(0, 0, CPU(4), CPU(4), 0),
    EXP(1, 0, CPU(3), CPU(3), 0), EXP(2, 0, 6500, 6500, 0), EXP(3, 0, 6500, 6500, 0),
    EXP(4, 0, CPU(6), CPU(6), 0), EXP(5, 0, CPU(4), CPU(4), 0),
    LEVEL(3, 3600, 2), /* A 3.6 > 3; C2 3.6 > 3.5, 3.6 − 3.5 goes
                                   * up; C1 0.1 <= 1 */
    ADD(3, CPU(4)),    /* A 4 -> C2 4; beyond local(C2) 0.5 ->
                                   * C1 0.5 -> R 0.5 */
    EXP(0, 500, 3500, CPU(4), 0),
    /* C1: 0 + min(3.5, 1 − 0.5 + 2 = 2.5) = 2.5 */
    EXP(1, 500, 2500, CPU(3), 0), EXP(2, CPU(4), 2500, 6500, 1), EXP(3, CPU(4), 2500, 6500, 1),
    EXP(4, 0, 5500, CPU(6), 0),               /* 3 + 2.5 */
    EXP(5, 0, 3500, CPU(4), 0), ADD(5, 1500), /* E 1.5, R 2: C1 min(2, 2.5) = 2 */
    EXP(0, CPU(2), CPU(2), CPU(4), 0), EXP(1, 500, CPU(2), CPU(3), 0),
    EXP(3, CPU(4), CPU(2), 6500, 1), EXP(4, 0, CPU(5), CPU(6), 0), EXP(5, 1500, CPU(2), CPU(4), 0),
    ADD(4, 3500), /* B 3.5: 0.5 beyond local(B) -> C1 1 -> R 2.5
                                   * C1: min(1.5, 1 − 1 + 2 = 2) = 1.5 */
    EXP(0, 2500, 1500, CPU(4), 0), EXP(1, CPU(1), 1500, CPU(3), 0), EXP(2, CPU(4), 1500, 6500, 1),
    EXP(4, 3500, 1500, CPU(6), 0), LEVEL(3, 100, 3), /* A 4.1 > 3; C2 4.1 > 3.5; C1 1.1 > 1;
                                   * R 2.6 <= 4 */
    LEVEL(4, 500, 0),                                /* B 4 <= 4 */
    LEVEL(4, 600, 2),                                /* B 4.1 > 4; C1 1.6 > 1; R 3.1 <= 4 */
    LEVEL(5, 500, 0),                                /* E 2 <= 2 */
    LEVEL(5, 501, 1), ADD(3, -CPU(4)),               /* A 0; C2 0; C1 loses 0.5 -> 0.5; R 2 */
    EXP(0, CPU(2), CPU(2), CPU(4), 0),
    /* C1: min(2, 1 − 0.5 + 2 = 2.5) = 2; C2: 3.5 + 2 */
    EXP(1, 500, CPU(2), CPU(3), 0), EXP(2, 0, 5500, 6500, 0), EXP(3, 0, 5500, 6500, 0),
    ADD(4, -3500), ADD(5, -1500), EXP(0, 0, CPU(4), CPU(4), 0), EXP(1, 0, CPU(3), CPU(3), 0),
    EXP(2, 0, 6500, 6500, 0), END
};

/* A ClusterQueue without a cohort is its own root: available = nominal −
 * usage, which goes negative on overadmission. */
static const qop ops_lone_cq[] = { QUOTA(0, CPU(5), 0),
                                   EXP(0, 0, CPU(5), CPU(5), 0),
                                   LEVEL(0, CPU(7), 0), /* no parent: the walk ends at level 0 */
                                   ADD(0, CPU(7)),
                                   EXP(0, CPU(7), -CPU(2), CPU(5), 1),
                                   ADD(0, -CPU(7)),
                                   EXP(0, 0, CPU(5), CPU(5), 0),
                                   END };

/* Overadmission after a quota cut (§3.4): A 9, B 12; A uses 15; B's nominal
 * is cut to 3 -> subtree(co) 12, available 12 − 15 = −3 for everyone. */
static const qop ops_quota_cut[] = { ADD(1, CPU(15)),
                                     EXP(0, CPU(15), CPU(6), CPU(21), 0),
                                     SETNOM(2, CPU(3)),
                                     QUOTA(0, CPU(12), 0),
                                     EXP(0, CPU(15), -CPU(3), CPU(12), 1),
                                     EXP(1, CPU(15), -CPU(3), CPU(12), 1),
                                     EXP(2, 0, -CPU(3), CPU(12), 0),
                                     ADD(1, -CPU(15)),
                                     EXP(1, 0, CPU(12), CPU(12), 0),
                                     END };

/* Saturation: root pool of unlimited quota.
 * R (INF) <- A (1), B (0, blimit 5), C (2, llimit 0.5)
 * subtree(R) saturates at INF; potential(B) = min(INF, 0 + 5) = 5;
 * local(C) = 1.5, potential(C) = 1.5 + INF = INF. Unlimited minus a finite
 * usage stays unlimited. */
static const qop ops_inf_pool[] = { QUOTA(0, INF, 0),
                                    QUOTA(3, CPU(2), 1500),
                                    EXP(0, 0, INF, INF, 0),
                                    EXP(1, 0, INF, INF, 0),
                                    EXP(2, 0, CPU(5), CPU(5), 0),
                                    EXP(3, 0, INF, INF, 0),
                                    ADD(1, INT64_C(1000000000000000)), /* a billion cpus */
                                    EXP(0, INT64_C(1000000000000000), INF, INF, 0),
                                    EXP(1, INT64_C(1000000000000000), INF, INF, 1),
                                    EXP(2, 0, CPU(5), CPU(5), 0),
                                    LEVEL(1, CPU(1), 1),
                                    ADD(2, CPU(5)), /* B: min(INF, 0 − 5 + 5) = 0 */
                                    EXP(2, CPU(5), 0, CPU(5), 1),
                                    ADD(1, -INT64_C(1000000000000000)),
                                    ADD(2, -CPU(5)),
                                    EXP(0, 0, INF, INF, 0),
                                    END };

/* Saturation: sums near INT64_MAX must not wrap. Two CQs of
 * INT64_MAX/2 + 1 each: subtree(co) saturates at INF. */
static const qop ops_inf_sum[] = { QUOTA(0, INF, 0), EXP(0, 0, INF, INF, 0), EXP(1, 0, INF, INF, 0),
                                   EXP(2, 0, INF, INF, 0), END };

/* Unlimited limits behave like unset ones: A (9, blimit INF),
 * B (12, llimit INF): local(B) = max(0, 12 − INF) = 0, subtree(co) = 21,
 * potential(A) = min(21, 9 + INF) = 21. */
static const qop ops_inf_limits[] = {
    QUOTA(0, CPU(21), 0),           QUOTA(2, CPU(12), 0), EXP(1, 0, CPU(21), CPU(21), 0),
    EXP(2, 0, CPU(21), CPU(21), 0), ADD(2, CPU(20)),      EXP(0, CPU(20), CPU(1), CPU(21), 0),
    EXP(1, 0, CPU(1), CPU(21), 0),  ADD(2, -CPU(20)),     END
};

/* Unlimited nominal with lendingLimit 1: A lends exactly 1.
 * local(A) = INF − 1 (finite), A gives co 1; subtree(co) = 1 + 5 = 6.
 * potential(B) = 6; potential(A) = (INF − 1) + 6, saturated to INF. */
static const qop ops_inf_lend_one[] = { QUOTA(0, CPU(6), 0),
                                        QUOTA(1, INF, INF - CPU(1)),
                                        EXP(2, 0, CPU(6), CPU(6), 0),
                                        EXP(1, 0, INF, INF, 0),
                                        ADD(2, CPU(6)),
                                        EXP(0, CPU(6), 0, CPU(6), 0),
                                        EXP(2, CPU(6), 0, CPU(6), 1),
                                        ADD(2, -CPU(6)),
                                        END };

/* Unlimited nominal with lendingLimit 0: A lends nothing.
 * local(A) = INF − 0 = INF, A gives co INF − INF = 0; subtree(co) = 5. */
static const qop ops_inf_lend_zero[] = { QUOTA(0, CPU(5), 0),
                                         QUOTA(1, INF, INF),
                                         EXP(2, 0, CPU(5), CPU(5), 0),
                                         ADD(1, CPU(100)), /* all of it inside local(A) */
                                         EXP(0, 0, CPU(5), CPU(5), 0),
                                         ADD(1, -CPU(100)),
                                         END };

/* Unlimited nominal with unlimited lendingLimit: lends everything, as if
 * unset. local(A) = max(0, INF − INF) = 0, so A's usage is stored in co. */
static const qop ops_inf_lend_all[] = { QUOTA(1, INF, 0),
                                        QUOTA(0, INF, 0),
                                        ADD(1, CPU(7)),
                                        EXP(0, CPU(7), INF, INF, 0),
                                        EXP(1, CPU(7), INF, INF, 0),
                                        EXP(2, 0, INF, INF, 0),
                                        ADD(1, -CPU(7)),
                                        EXP(0, 0, INF, INF, 0),
                                        END };

#define DOC_TREE(blA, llA, blB, llB) \
    { { "team-ab", 0, -1, 0, U, U }, \
      { "team-a-cq", 1, 0, CPU(9), blA, llA }, \
      { "team-b-cq", 1, 0, CPU(12), blB, llB } }, \
        3

static const quota_case quota_cases[] = {
    { "doc: B idle, A uses 21", DOC_TREE(U, U, U, U), ops_doc_idle },
    { "doc: borrowingLimit 1 on A", DOC_TREE(CPU(1), U, U, U), ops_doc_blimit },
    { "doc: lendingLimit 1 on B", DOC_TREE(U, U, U, CPU(1)), ops_doc_llimit },
    { "root cohort nominal is a shared pool",
      { { "root-cohort", 0, -1, CPU(12), U, U },
        { "important-org", 0, 0, 0, U, U },
        { "A", 1, 1, CPU(3), U, U },
        { "B", 1, 0, CPU(5), U, U } },
      4,
      ops_pool },
    { "child cohort with borrowingLimit and lendingLimit",
      { { "R", 0, -1, 0, U, U },
        { "C", 0, 0, CPU(2), CPU(3), CPU(4) },
        { "A", 1, 1, CPU(6), U, CPU(1) },
        { "B", 1, 1, CPU(2), U, U },
        { "D", 1, 0, CPU(10), U, U } },
      5,
      ops_limits },
    { "three levels",
      { { "R", 0, -1, CPU(1), U, U },
        { "C1", 0, 0, 0, CPU(2), U },
        { "C2", 0, 1, 500, U, 0 },
        { "A", 1, 2, CPU(3), U, U },
        { "B", 1, 1, CPU(4), U, CPU(1) },
        { "E", 1, 0, CPU(2), U, U } },
      6,
      ops_three },
    { "ClusterQueue without cohort", { { "lone", 1, -1, CPU(5), U, U } }, 1, ops_lone_cq },
    { "overadmission after a quota cut", DOC_TREE(U, U, U, U), ops_quota_cut },
    { "saturation: unlimited root pool",
      { { "R", 0, -1, INF, U, U },
        { "A", 1, 0, CPU(1), U, U },
        { "B", 1, 0, 0, CPU(5), U },
        { "C", 1, 0, CPU(2), U, 500 } },
      4,
      ops_inf_pool },
    { "saturation: sum of huge quotas",
      { { "co", 0, -1, 0, U, U },
        { "A", 1, 0, INT64_MAX / 2 + 1, U, U },
        { "B", 1, 0, INT64_MAX / 2 + 1, U, U } },
      3,
      ops_inf_sum },
    { "saturation: unlimited limits act as unset", DOC_TREE(INF, U, U, INF), ops_inf_limits },
};

/* Kept apart: these exercise unlimited quotas combined with lending limits,
 * where the formula subtracts INF from INF or a finite limit from INF. */
static const quota_case quota_inf_lend_cases[] = {
    { "saturation: unlimited nominal, lendingLimit 1",
      { { "co", 0, -1, 0, U, U }, { "A", 1, 0, INF, U, CPU(1) }, { "B", 1, 0, CPU(5), U, U } },
      3,
      ops_inf_lend_one },
    { "saturation: unlimited nominal, lendingLimit 0",
      { { "co", 0, -1, 0, U, U }, { "A", 1, 0, INF, U, 0 }, { "B", 1, 0, CPU(5), U, U } },
      3,
      ops_inf_lend_zero },
    { "saturation: unlimited nominal, unlimited lendingLimit",
      { { "co", 0, -1, 0, U, U }, { "A", 1, 0, INF, U, INF }, { "B", 1, 0, CPU(5), U, U } },
      3,
      ops_inf_lend_all },
};

#define CMP(what, got, want) \
    do { \
        int64_t g_ = (got), w_ = (want); \
        if (g_ != w_) { \
            print_error("%s, op %zu: %s of %s is %" PRId64 ", want %" PRId64 "\n", c->name, i, \
                        what, n->name, g_, w_); \
            bad++; \
        } \
    } while (0)

/* Runs one scenario; returns the number of mismatches (all printed). */
static int run_case(const quota_case *c)
{
    tree t;
    tree_build(&t, c->nodes, c->count, 1);
    int bad = 0;
    char ctx[160];
    for (size_t i = 0; c->ops[i].op != OP_END; i++) {
        const qop *o = &c->ops[i];
        cu_qnode *n = t.n[o->node];
        switch (o->op) {
        case OP_ADD:
            cu_quota_add_usage(n, 0, o->a);
            snprintf(ctx, sizeof(ctx), "%s, op %zu", c->name, i);
            bad += check_cohort_usage(&t, 1, ctx);
            break;
        case OP_EXP:
            CMP("usage", n->usage[0], o->a);
            CMP("available", cu_quota_available(n, 0), o->b);
            CMP("potential", cu_quota_potential(n, 0), o->c);
            CMP("borrowing", cu_quota_borrowing(n, 0), o->d);
            break;
        case OP_QUOTA:
            CMP("subtree quota", n->subtree[0], o->a);
            CMP("local quota", cu_quota_local(n, 0), o->b);
            break;
        case OP_LEVEL: CMP("borrow level", cu_quota_borrow_level(n, 0, o->a), o->d); break;
        case OP_SETNOM:
            n->nominal[0] = o->a;
            cu_quota_recompute(cu_quota_root(n));
            break;
        default: fail_msg("bad op %d", o->op);
        }
    }
    /* every scenario ends with all usage removed */
    for (size_t k = 0; k < t.count; k++) {
        if (t.n[k]->usage[0] != 0) {
            print_error("%s: %s usage %" PRId64 " left at the end\n", c->name, t.n[k]->name,
                        t.n[k]->usage[0]);
            bad++;
        }
    }
    tree_free(&t);
    return bad;
}

static void test_scenarios(void **state)
{
    (void)state;
    int bad = 0;
    for (size_t i = 0; i < sizeof(quota_cases) / sizeof(quota_cases[0]); i++)
        bad += run_case(&quota_cases[i]);
    assert_int_equal(bad, 0);
}

static void test_saturation_lending(void **state)
{
    (void)state;
    int bad = 0;
    for (size_t i = 0; i < sizeof(quota_inf_lend_cases) / sizeof(quota_inf_lend_cases[0]); i++)
        bad += run_case(&quota_inf_lend_cases[i]);
    assert_int_equal(bad, 0);
}

/* ---------------- structure ---------------- */

static void test_parent_links(void **state)
{
    (void)state;
    cu_qnode *r = cu_qnode_new("r", 0, 1);
    cu_qnode *c1 = cu_qnode_new("c1", 0, 1);
    cu_qnode *c2 = cu_qnode_new("c2", 0, 1);
    cu_qnode *q[6];
    assert_non_null(r);
    assert_non_null(c1);
    assert_non_null(c2);
    assert_int_equal(r->blimit[0], U);
    assert_int_equal(r->llimit[0], U);
    assert_int_equal(r->nominal[0], 0);
    assert_int_equal(cu_qnode_set_parent(c1, r), CU_OK);
    assert_int_equal(cu_qnode_set_parent(c2, r), CU_OK);
    /* six children forces the kids array past its first capacity */
    for (int i = 0; i < 6; i++) {
        q[i] = cu_qnode_new("q", 1, 1);
        assert_non_null(q[i]);
        q[i]->nominal[0] = CPU(i + 1);
        assert_int_equal(cu_qnode_set_parent(q[i], c1), CU_OK);
    }
    assert_int_equal(c1->nkids, 6);
    assert_ptr_equal(cu_quota_root(q[5]), r);
    cu_quota_recompute(r);
    /* 1 + 2 + ... + 6 = 21 */
    assert_int_equal(c1->subtree[0], CPU(21));
    assert_int_equal(r->subtree[0], CPU(21));

    /* move q[2] (3 cpu) under c2: c1 21 − 3 = 18, c2 3, r still 21 */
    assert_int_equal(cu_qnode_set_parent(q[2], c2), CU_OK);
    assert_int_equal(c1->nkids, 5);
    assert_int_equal(c2->nkids, 1);
    for (size_t i = 0; i < c1->nkids; i++)
        assert_ptr_not_equal(c1->kids[i], q[2]);
    assert_ptr_equal(q[2]->parent, c2);
    cu_quota_recompute(r);
    assert_int_equal(c1->subtree[0], CPU(18));
    assert_int_equal(c2->subtree[0], CPU(3));
    assert_int_equal(r->subtree[0], CPU(21));

    /* detach q[0] (1 cpu): it becomes a root of its own */
    assert_int_equal(cu_qnode_set_parent(q[0], NULL), CU_OK);
    assert_null(q[0]->parent);
    assert_ptr_equal(cu_quota_root(q[0]), q[0]);
    assert_int_equal(c1->nkids, 4);
    cu_quota_recompute(r);
    cu_quota_recompute(q[0]);
    assert_int_equal(r->subtree[0], CPU(20));
    assert_int_equal(cu_quota_available(q[0], 0), CPU(1));
    assert_int_equal(cu_quota_available(q[1], 0), CPU(20));

    /* re-linking under the same parent does not duplicate it */
    assert_int_equal(cu_qnode_set_parent(q[1], c1), CU_OK);
    assert_int_equal(c1->nkids, 4);

    for (int i = 0; i < 6; i++)
        cu_qnode_free(q[i]);
    cu_qnode_free(c1);
    cu_qnode_free(c2);
    cu_qnode_free(r);
    cu_qnode_free(NULL);
}

/* Two flavor-resources are independent: usage of fr 1 never shows in fr 0. */
static void test_flavor_resources_independent(void **state)
{
    (void)state;
    tree t;
    static const node_spec spec[] = {
        { "co", 0, -1, 0, U, U },
        { "A", 1, 0, CPU(9), U, U },
        { "B", 1, 0, CPU(12), U, U },
    };
    tree_build(&t, spec, 3, 2);
    /* fr 1: B lends at most 2 -> local(B) 10, subtree(co) 9 + 2 = 11 */
    t.n[2]->llimit[1] = CPU(2);
    cu_quota_recompute(t.n[0]);
    assert_int_equal(t.n[0]->subtree[0], CPU(21));
    assert_int_equal(t.n[0]->subtree[1], CPU(11));
    cu_quota_add_usage(t.n[1], 1, CPU(11));
    assert_int_equal(t.n[0]->usage[1], CPU(11));
    assert_int_equal(t.n[0]->usage[0], 0);
    assert_int_equal(cu_quota_available(t.n[1], 0), CPU(21));
    assert_int_equal(cu_quota_available(t.n[1], 1), 0);
    assert_int_equal(cu_quota_available(t.n[2], 1), CPU(10));
    assert_true(cu_quota_borrowing(t.n[1], 1));
    assert_false(cu_quota_borrowing(t.n[1], 0));
    assert_int_equal(cu_quota_borrow_level(t.n[1], 0, CPU(1)), 0);
    cu_quota_add_usage(t.n[1], 1, -CPU(11));
    assert_int_equal(t.n[0]->usage[1], 0);
    assert_int_equal(check_cohort_usage(&t, 2, "fr"), 0);
    tree_free(&t);
}

/* ---------------- cu_quota_check ---------------- */

typedef struct usage_table {
    int64_t cq[MAXN];
} usage_table;

static int64_t table_usage(const cu_qnode *n, size_t fr, void *ud)
{
    (void)fr;
    return ((const usage_table *)ud)->cq[n->id];
}

static int diag_has(const cu_diag *d, const char *a, const char *b)
{
    for (size_t i = 0; i < d->n; i++) {
        if (strstr(d->msgs[i], a) && (!b || strstr(d->msgs[i], b)))
            return 1;
    }
    return 0;
}

static void dump_diag(const cu_diag *d)
{
    for (size_t i = 0; i < d->n; i++)
        print_message("  diag: %s\n", d->msgs[i]);
}

static void test_check(void **state)
{
    (void)state;
    tree t;
    static const node_spec spec[] = {
        { "team-ab", 0, -1, 0, U, U },
        { "team-a-cq", 1, 0, CPU(9), U, U },
        { "team-b-cq", 1, 0, CPU(12), CPU(1), U },
    };
    tree_build(&t, spec, 3, 1);
    usage_table ut = { { 0 } };
    cu_diag d;

    /* A 12 (borrowing 3), B 8: team-ab 20 */
    cu_quota_add_usage(t.n[1], 0, CPU(12));
    cu_quota_add_usage(t.n[2], 0, CPU(8));
    ut.cq[1] = CPU(12);
    ut.cq[2] = CPU(8);
    cu_diag_init(&d);
    assert_int_equal(cu_quota_check(t.n[0], table_usage, &ut, &d), CU_OK);
    assert_int_equal(d.nerrors, 0);
    assert_int_equal(cu_quota_check(t.n[0], NULL, NULL, &d), CU_OK);
    assert_int_equal(d.nerrors, 0);
    cu_diag_free(&d);

    /* the workloads say A holds 11, the tree says 12 */
    ut.cq[1] = CPU(11);
    cu_diag_init(&d);
    assert_int_equal(cu_quota_check(t.n[0], table_usage, &ut, &d), CU_EINVAL);
    dump_diag(&d);
    assert_true(d.nerrors >= 1);
    assert_true(diag_has(&d, "team-a-cq", "fr 0"));
    assert_true(diag_has(&d, "12000", "11000"));
    cu_diag_free(&d);
    ut.cq[1] = CPU(12);

    /* cohort usage off by one milli */
    t.n[0]->usage[0] -= 1;
    cu_diag_init(&d);
    assert_int_equal(cu_quota_check(t.n[0], table_usage, &ut, &d), CU_EINVAL);
    dump_diag(&d);
    assert_true(diag_has(&d, "team-ab", "19999"));
    assert_true(diag_has(&d, "team-ab", "20000"));
    cu_diag_free(&d);
    t.n[0]->usage[0] += 1;

    /* a CQ's usage changed without propagation: without cq_usage the
     * cohort's sum catches it */
    t.n[1]->usage[0] += CPU(1);
    cu_diag_init(&d);
    assert_int_equal(cu_quota_check(t.n[0], NULL, NULL, &d), CU_EINVAL);
    dump_diag(&d);
    assert_true(diag_has(&d, "team-ab", "fr 0"));
    cu_diag_free(&d);
    t.n[1]->usage[0] -= CPU(1);

    cu_diag_init(&d);
    assert_int_equal(cu_quota_check(t.n[0], table_usage, &ut, &d), CU_OK);
    cu_diag_free(&d);

    /* B beyond its borrowing limit: potential(B) = min(21, 12 + 1) = 13 */
    cu_quota_add_usage(t.n[1], 0, -CPU(12));
    cu_quota_add_usage(t.n[2], 0, CPU(6));
    ut.cq[1] = 0;
    ut.cq[2] = CPU(14);
    cu_diag_init(&d);
    assert_int_equal(cu_quota_check(t.n[0], table_usage, &ut, &d), CU_EINVAL);
    dump_diag(&d);
    assert_true(diag_has(&d, "team-b-cq", "14000"));
    cu_diag_free(&d);

    cu_quota_add_usage(t.n[2], 0, -CPU(14));
    assert_int_equal(t.n[0]->usage[0], 0);

    /* As the header says, the check rejects usage above a node's potential
     * even when it comes from a quota cut (overadmission, which §3.4
     * allows): A holds 15, B's nominal drops to 3 -> team-ab 12 < 15. */
    cu_quota_add_usage(t.n[1], 0, CPU(15));
    ut.cq[1] = CPU(15);
    ut.cq[2] = 0;
    cu_diag_init(&d);
    assert_int_equal(cu_quota_check(t.n[0], table_usage, &ut, &d), CU_OK);
    cu_diag_free(&d);
    t.n[2]->nominal[0] = CPU(3);
    cu_quota_recompute(t.n[0]);
    cu_diag_init(&d);
    assert_int_equal(cu_quota_check(t.n[0], table_usage, &ut, &d), CU_EINVAL);
    dump_diag(&d);
    assert_true(diag_has(&d, "team-a-cq", "15000"));
    cu_diag_free(&d);
    cu_quota_add_usage(t.n[1], 0, -CPU(15));
    tree_free(&t);
}

/* ---------------- random add/remove symmetry ---------------- */

/* splitmix64: the state lives in the caller, no globals. */
static uint64_t rnd_next(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static int64_t rnd_range(uint64_t *s, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rnd_next(s) % (uint64_t)(hi - lo + 1));
}

#define RNFR 2
#define RMAXW 48

typedef struct rstate {
    tree t;
    size_t ncq;
    int cq_idx[MAXN];
    int64_t w[MAXN][RNFR][RMAXW]; /* admitted "workloads" per CQ and fr */
    size_t nw[MAXN][RNFR];
    usage_table ut[RNFR];
} rstate;

static int64_t rs_usage(const cu_qnode *n, size_t fr, void *ud)
{
    const rstate *rs = ud;
    return rs->ut[fr].cq[n->id];
}

/* Reference subtree quota of node n from the formula, plain int64. */
static int64_t ref_subtree(const cu_qnode *n, size_t fr)
{
    int64_t s = n->nominal[fr];
    if (n->is_cq)
        return s;
    for (size_t k = 0; k < n->nkids; k++) {
        const cu_qnode *c = n->kids[k];
        int64_t cs = ref_subtree(c, fr);
        int64_t loc = 0;
        if (c->llimit[fr] != U && cs - c->llimit[fr] > 0)
            loc = cs - c->llimit[fr];
        s += cs - loc;
    }
    return s;
}

/* A random tree: root cohort, 1..3 child cohorts, maybe a grandchild
 * cohort, CQs hung anywhere; quotas 0..20 cpu, limits unset half the time. */
static void random_tree(rstate *rs, uint64_t *seed, node_spec *spec, size_t *count)
{
    static const char *cohorts[] = { "root", "c1", "c2", "c3", "c4" };
    static const char *cqs[] = { "q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8", "q9", "q10" };
    size_t nco = (size_t)rnd_range(seed, 2, 5);
    for (size_t i = 0; i < MAXN; i++) {
        node_spec *s = &spec[i];
        s->is_cq = i >= nco;
        s->name = s->is_cq ? cqs[i - nco] : cohorts[i];
        /* cohorts hang under earlier cohorts, CQs under any cohort */
        if (i == 0)
            s->parent = -1;
        else
            s->parent = (int)rnd_range(seed, 0, (int64_t)(s->is_cq ? nco - 1 : i - 1));
        s->nominal = rnd_range(seed, 0, 4) == 0 ? 0 : CPU(rnd_range(seed, 0, 20));
        /* a root takes no limits (the webhook rejects them) */
        s->blimit = (i == 0 || rnd_range(seed, 0, 1)) ? U : CPU(rnd_range(seed, 0, 10));
        s->llimit = (i == 0 || rnd_range(seed, 0, 1)) ? U : CPU(rnd_range(seed, 0, 15));
    }
    *count = MAXN;
    tree_build(&rs->t, spec, MAXN, RNFR);
    /* fr 1 gets its own quotas so the two resources differ */
    for (size_t i = 0; i < MAXN; i++) {
        cu_qnode *n = rs->t.n[i];
        n->nominal[1] = rnd_range(seed, 0, 4) == 0 ? 0 : CPU(rnd_range(seed, 0, 20));
        n->blimit[1] = (i == 0 || rnd_range(seed, 0, 1)) ? U : CPU(rnd_range(seed, 0, 10));
        n->llimit[1] = (i == 0 || rnd_range(seed, 0, 1)) ? U : CPU(rnd_range(seed, 0, 15));
    }
    cu_quota_recompute(rs->t.n[0]);
    rs->ncq = 0;
    for (size_t i = 0; i < MAXN; i++)
        if (spec[i].is_cq)
            rs->cq_idx[rs->ncq++] = (int)i;
}

/* admit_only: workloads are admitted only when they fit cu_quota_available,
 * as the scheduler would, and then cu_quota_check must hold after every
 * step. Otherwise usage is added unconditionally (overadmission) and only
 * the usage sums are checked. */
static void random_run(uint64_t seed, int admit_only, int steps)
{
    rstate *rs = calloc(1, sizeof(*rs));
    assert_non_null(rs);
    node_spec spec[MAXN];
    size_t count;
    memset(spec, 0, sizeof(spec));
    random_tree(rs, &seed, spec, &count);
    char ctx[96];
    int bad = 0;

    for (size_t i = 0; i < count; i++) {
        for (size_t fr = 0; fr < RNFR; fr++) {
            int64_t want = ref_subtree(rs->t.n[i], fr);
            if (rs->t.n[i]->subtree[fr] != want) {
                print_error("seed %" PRIu64 ": subtree of %s is %" PRId64 ", want %" PRId64 "\n",
                            seed, rs->t.n[i]->name, rs->t.n[i]->subtree[fr], want);
                bad++;
            }
            /* with zero usage everything potential is available */
            if (cu_quota_available(rs->t.n[i], fr) != cu_quota_potential(rs->t.n[i], fr)) {
                print_error("seed %" PRIu64 ": %s available %" PRId64 " != potential %" PRId64 "\n",
                            seed, rs->t.n[i]->name, cu_quota_available(rs->t.n[i], fr),
                            cu_quota_potential(rs->t.n[i], fr));
                bad++;
            }
        }
    }

    int admitted = 0;
    for (int step = 0; step < steps && !bad; step++) {
        size_t qi = (size_t)rnd_range(&seed, 0, (int64_t)rs->ncq - 1);
        int id = rs->cq_idx[qi];
        cu_qnode *q = rs->t.n[id];
        size_t fr = (size_t)rnd_range(&seed, 0, RNFR - 1);
        size_t *nw = &rs->nw[id][fr];
        int remove = *nw == RMAXW || (*nw > 0 && rnd_range(&seed, 0, 2) == 0);
        if (remove) {
            size_t k = (size_t)rnd_range(&seed, 0, (int64_t)*nw - 1);
            int64_t v = rs->w[id][fr][k];
            rs->w[id][fr][k] = rs->w[id][fr][--*nw];
            cu_quota_add_usage(q, fr, -v);
            rs->ut[fr].cq[id] -= v;
        } else {
            int64_t v = rnd_range(&seed, 1, 6000);
            if (admit_only && v > cu_quota_available(q, fr))
                continue;
            cu_quota_add_usage(q, fr, v);
            rs->w[id][fr][(*nw)++] = v;
            rs->ut[fr].cq[id] += v;
            admitted++;
        }
        snprintf(ctx, sizeof(ctx), "seed %" PRIu64 " step %d", seed, step);
        bad += check_cohort_usage(&rs->t, RNFR, ctx);
        if (q->usage[fr] != rs->ut[fr].cq[id]) {
            print_error("%s: %s usage %" PRId64 ", want %" PRId64 "\n", ctx, q->name, q->usage[fr],
                        rs->ut[fr].cq[id]);
            bad++;
        }
        if (admit_only) {
            cu_diag d;
            cu_diag_init(&d);
            if (cu_quota_check(rs->t.n[0], rs_usage, rs, &d) != CU_OK) {
                print_error("%s: check failed after admitting within available\n", ctx);
                dump_diag(&d);
                bad++;
            }
            cu_diag_free(&d);
        }
    }
    assert_int_equal(bad, 0);
    assert_true(admitted > 0);

    /* drain every workload in random order: every node returns to zero */
    for (;;) {
        int left = 0;
        for (size_t qi = 0; qi < rs->ncq; qi++) {
            int id = rs->cq_idx[qi];
            for (size_t fr = 0; fr < RNFR; fr++) {
                if (rs->nw[id][fr]) {
                    size_t k = (size_t)rnd_range(&seed, 0, (int64_t)rs->nw[id][fr] - 1);
                    int64_t v = rs->w[id][fr][k];
                    rs->w[id][fr][k] = rs->w[id][fr][--rs->nw[id][fr]];
                    cu_quota_add_usage(rs->t.n[id], fr, -v);
                    left = 1;
                }
            }
        }
        snprintf(ctx, sizeof(ctx), "seed %" PRIu64 " drain", seed);
        assert_int_equal(check_cohort_usage(&rs->t, RNFR, ctx), 0);
        if (!left)
            break;
    }
    for (size_t i = 0; i < count; i++) {
        for (size_t fr = 0; fr < RNFR; fr++) {
            assert_int_equal(rs->t.n[i]->usage[fr], 0);
            assert_int_equal(cu_quota_available(rs->t.n[i], fr),
                             cu_quota_potential(rs->t.n[i], fr));
        }
    }
    tree_free(&rs->t);
    free(rs);
}

static void test_random_symmetry(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 40; seed++)
        random_run(seed, 0, 1500);
}

static void test_random_admission(void **state)
{
    (void)state;
    for (uint64_t seed = 101; seed <= 140; seed++)
        random_run(seed, 1, 1500);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scenarios),
        cmocka_unit_test(test_saturation_lending),
        cmocka_unit_test(test_parent_links),
        cmocka_unit_test(test_flavor_resources_independent),
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_random_symmetry),
        cmocka_unit_test(test_random_admission),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
