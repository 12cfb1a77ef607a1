/*
 * test_topo_check.h - a random TAS flavor (blocks, racks, hosts with GPUs,
 * some used, not ready or tainted) and pod sets drawn from a byte source,
 * placed by cu_tas_place and checked against a plain model of the same
 * nodes: every pod is placed on an eligible node with room for it (the
 * pod sets of one call together), a required pod set stays in one domain
 * of its level, slices stay whole in their domains, the same input gives
 * the same answer, and a pod set fails exactly when the model says no
 * placement of that mode exists. Some draws make the two a group (a
 * leader of one pod and its workers): then they fail or fit together, a
 * required leader stays in the workers' domain, and they fail exactly
 * when no node of such a domain (of the whole flavor otherwise) can take
 * the leader with room left for the workers. Shared by test_topology.c (seeded) and
 * fuzz_topology.c (libFuzzer's bytes). check() returns 0 or a line
 * number.
 */
#ifndef CU_TEST_TOPO_CHECK_H
#define CU_TEST_TOPO_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cu_tas.h"

typedef struct tc_src {
    const uint8_t *p; /* fuzz bytes, or NULL for the PRNG */
    size_t n, i;
    uint64_t seed;
} tc_src;

static unsigned tc_byte(tc_src *s)
{
    if (s->p)
        return s->i < s->n ? s->p[s->i++] : 0;
    s->seed ^= s->seed << 13;
    s->seed ^= s->seed >> 7;
    s->seed ^= s->seed << 17;
    return (unsigned)(s->seed >> 24) & 0xff;
}

#define TC_MAX 36
typedef struct tc_node {
    char name[16], block[16], rack[16];
    int64_t gpu, pods; /* free */
    int member, tainted;
} tc_node;

static const char *const tc_levels[] = { "block", "rack", CU_TAS_HOSTNAME };

/* The model's pods of g GPUs that fit on node x. */
static int64_t tc_fit(const tc_node *x, int64_t g)
{
    if (!x->member || x->tainted || x->gpu < 0 || x->pods <= 0)
        return 0;
    int64_t a = x->gpu / g, b = x->pods;
    return a < b ? a : b;
}

/* The values of node x for levels 0..l joined: its domain at l. */
static void tc_dom(const tc_node *x, size_t l, char *out, size_t n)
{
    snprintf(out, n, "%.7s/%.7s/%.15s", x->block, l >= 1 ? x->rack : "", l >= 2 ? x->name : "");
}

/* Slices that fit under domain key at level l with slices at level sl of
 * size ss (sum over the sl-domains below). */
static int64_t tc_slices(const tc_node *nodes, size_t nn, size_t l, const char *key, size_t sl,
                         int64_t ss, int64_t g)
{
    int64_t total = 0;
    char k[64], sk[64], seen[TC_MAX][64];
    size_t nseen = 0;
    for (size_t i = 0; i < nn; i++) {
        tc_dom(&nodes[i], l, k, sizeof k);
        if (key && strcmp(k, key) != 0)
            continue;
        tc_dom(&nodes[i], sl, sk, sizeof sk);
        int dup = 0;
        for (size_t j = 0; j < nseen; j++)
            dup |= strcmp(seen[j], sk) == 0;
        if (dup)
            continue;
        memcpy(seen[nseen++], sk, sizeof sk);
        int64_t pods = 0;
        char x[64];
        for (size_t j = 0; j < nn; j++) {
            tc_dom(&nodes[j], sl, x, sizeof x);
            if (strcmp(x, sk) == 0)
                pods += tc_fit(&nodes[j], g);
        }
        total += pods / ss;
    }
    return total;
}

static int tc_check(tc_src *s)
{
    tc_node nodes[TC_MAX];
    size_t nn = 0;
    cu_toleration tol = { .key = "ok", .op = CU_TOL_EXISTS };
    cu_tas_flavor f = { .name = "fz", .nlevels = 3, .levels = tc_levels, .ntols = 1, .tols = &tol };
    cu_tas *t = cu_tas_new(&f);
    if (!t)
        return __LINE__;
    unsigned nb = 1 + tc_byte(s) % 3;
    for (unsigned b = 0; b < nb; b++) {
        unsigned nr = 1 + tc_byte(s) % 3;
        for (unsigned r = 0; r < nr; r++) {
            unsigned nh = 1 + tc_byte(s) % 4;
            for (unsigned h = 0; h < nh && nn < TC_MAX; h++) {
                tc_node *x = &nodes[nn++];
                snprintf(x->name, sizeof x->name, "n%zu", nn);
                snprintf(x->block, sizeof x->block, "b%u", b);
                snprintf(x->rack, sizeof x->rack, "r%u", r);
                unsigned k = tc_byte(s);
                int64_t gpus = k % 9, podcap = 2 + (k >> 4) % 9, used = tc_byte(s) % (gpus + 1);
                int ready = tc_byte(s) % 8 != 0;
                unsigned tk = tc_byte(s) % 8;
                cu_taint taint = { tk == 0 ? "bad" : "ok", NULL, "NoSchedule" };
                cu_kv l[] = { { "block", x->block },
                              { "rack", x->rack },
                              { CU_TAS_HOSTNAME, x->name } };
                cu_kvs labels = { 3, l };
                cu_res a[] = { { "gpu", gpus }, { "pods", podcap } };
                cu_reslist alloc = { 2, a };
                cu_tas_node tn = { .name = x->name,
                                   .labels = &labels,
                                   .allocatable = &alloc,
                                   .ready = ready,
                                   .ntaints = tk < 2,
                                   .taints = &taint };
                cu_res u[] = { { "gpu", 1 } };
                cu_reslist ul = { 1, u };
                if (cu_tas_node_set(t, &tn) != CU_OK ||
                    cu_tas_usage(t, x->name, &ul, (int32_t)used, 1) != CU_OK)
                    return __LINE__;
                x->gpu = gpus - used;
                x->pods = podcap - used;
                x->member = ready;
                x->tainted = tk == 0;
            }
        }
    }
    /* two pod sets of one flavor */
    cu_tas_request q[2];
    cu_res per[2][1];
    cu_reslist pl[2];
    int64_t g[2];
    size_t qlvl[2], qsl[2];
    for (int i = 0; i < 2; i++) {
        g[i] = 1 + tc_byte(s) % 3;
        per[i][0] = (cu_res){ "gpu", g[i] };
        pl[i] = (cu_reslist){ 1, per[i] };
        unsigned m = tc_byte(s);
        memset(&q[i], 0, sizeof q[i]);
        q[i].per_pod = &pl[i];
        q[i].mode = (cu_tas_mode)(m % 3);
        qlvl[i] = (m >> 2) % 3;
        q[i].level = tc_levels[qlvl[i]];
        int64_t ss = 1;
        qsl[i] = 2;
        if ((m >> 4) % 4 == 0) {
            qsl[i] = q[i].mode == CU_TAS_UNCONSTRAINED ? (m >> 6) % 3
                                                       : qlvl[i] + (m >> 6) % (3 - qlvl[i]);
            ss = 1 + tc_byte(s) % 3;
            q[i].slice_level = tc_levels[qsl[i]];
            q[i].slice_size = (int32_t)ss;
        }
        q[i].count = (int32_t)((tc_byte(s) % 10) * ss);
        if (q[i].mode == CU_TAS_UNCONSTRAINED)
            qlvl[i] = q[i].slice_level ? 0 : 2;
    }
    cu_tas_opts o = { .profile = (cu_tas_profile)(tc_byte(s) % 2) };
    /* a group: q[0] the leader (one pod), unless q[1] has one pod too
     * (then q[1] is, as in Kueue); no group when q[1] has none */
    int grp = tc_byte(s) % 3 == 0 && q[1].count > 0;
    int w = 0, l = 1;
    if (grp) {
        q[0].count = 1;
        q[0].slice_level = NULL;
        q[0].slice_size = 0;
        q[0].mode = q[1].mode;
        q[0].level = q[1].level;
        qlvl[0] = qlvl[1];
        qsl[0] = 2;
        q[0].group = q[1].group = "g";
        if (q[1].count > 1)
            w = 1, l = 0;
    }
    cu_tas_result r[2], r2[2];
    cu_err e = cu_tas_place(t, q, 2, &o, r);
    cu_err e2 = cu_tas_place(t, q, 2, &o, r2);
    int bad = 0;
    if (e != e2)
        bad = __LINE__;
    for (int i = 0; i < 2 && !bad; i++) {
        if (r[i].ok != r2[i].ok || r[i].ndomains != r2[i].ndomains)
            bad = __LINE__;
        for (size_t d = 0; !bad && d < r[i].ndomains; d++)
            if (strcmp(r[i].domains[d].values[0], r2[i].domains[d].values[0]) ||
                r[i].domains[d].count != r2[i].domains[d].count)
                bad = __LINE__;
    }
    /* a group: can it be placed (a node for the leader, then room for
     * the workers in its domain)? */
    int gcan = 0;
    int64_t wss = q[w].slice_level ? q[w].slice_size : 1;
    for (size_t j = 0; grp && j < nn; j++) {
        if (tc_fit(&nodes[j], g[l]) < 1)
            continue;
        char k[64];
        tc_dom(&nodes[j], qlvl[w], k, sizeof k);
        int req = q[w].mode == CU_TAS_REQUIRED;
        nodes[j].gpu -= g[l];
        nodes[j].pods--;
        if (tc_slices(nodes, nn, req ? qlvl[w] : 0, req ? k : NULL, qsl[w], wss, g[w]) >=
            q[w].count / wss)
            gcan = 1;
        nodes[j].gpu += g[l];
        nodes[j].pods++;
    }
    char gfirst[64] = "";
    int order[2] = { grp ? l : 0, grp ? w : 1 };
    for (int oi = 0; oi < 2 && !bad; oi++) {
        int i = order[oi];
        int64_t ss = q[i].slice_level ? q[i].slice_size : 1, sc = q[i].count / ss;
        if (oi == 1 && !r[order[0]].ok) {
            if (r[i].ok || !r[i].reason != !grp)
                bad = __LINE__;
            if (grp && r[i].diag.requested != q[w].count)
                bad = __LINE__;
            break;
        }
        /* does the model see a placement? */
        int64_t can;
        if (grp) {
            can = gcan;
        } else if (q[i].mode == CU_TAS_REQUIRED) {
            can = 0;
            for (size_t j = 0; j < nn; j++) {
                char k[64];
                tc_dom(&nodes[j], qlvl[i], k, sizeof k);
                if (tc_slices(nodes, nn, qlvl[i], k, qsl[i], ss, g[i]) >= sc)
                    can = 1;
            }
            if (sc == 0)
                can = nn > 0;
        } else {
            can = tc_slices(nodes, nn, 0, NULL, qsl[i], ss, g[i]) >= sc;
        }
        int any_member = 0;
        for (size_t j = 0; j < nn; j++)
            any_member |= nodes[j].member;
        if (!any_member)
            can = 0;
        if (can != r[i].ok) {
            bad = __LINE__;
            break;
        }
        if (!r[i].ok) {
            int wi = grp ? w : i;
            if (!r[i].reason || r[i].diag.requested != q[wi].count)
                bad = __LINE__;
            int64_t total = 0;
            for (size_t j = 0; j < nn; j++)
                total += tc_fit(&nodes[j], g[wi]);
            if (any_member && r[i].diag.fit_total != total)
                bad = __LINE__;
            break;
        }
        int64_t sum = 0;
        char first[64] = "";
        for (size_t d = 0; !bad && d < r[i].ndomains; d++) {
            const cu_tas_assign *a = &r[i].domains[d];
            tc_node *x = NULL;
            for (size_t j = 0; j < nn; j++)
                if (strcmp(nodes[j].name, a->values[0]) == 0)
                    x = &nodes[j];
            if (!x || a->count <= 0 || tc_fit(x, g[i]) < a->count) {
                bad = __LINE__;
                break;
            }
            sum += a->count;
            x->gpu -= a->count * g[i];
            x->pods -= a->count;
            char k[64];
            tc_dom(x, qlvl[i], k, sizeof k);
            if (q[i].mode == CU_TAS_REQUIRED && d > 0 && strcmp(first, k) != 0)
                bad = __LINE__;
            memcpy(first, k, sizeof k);
            /* a group's workers in the leader's domain */
            if (grp && q[i].mode == CU_TAS_REQUIRED) {
                if (oi == 0)
                    memcpy(gfirst, k, sizeof k);
                else if (strcmp(gfirst, k) != 0)
                    bad = __LINE__;
            }
            /* slices whole: the pods under x's slice domain */
            if (ss > 1) {
                char sk[64], y[64];
                tc_dom(x, qsl[i], sk, sizeof sk);
                int64_t in = 0;
                for (size_t d2 = 0; d2 < r[i].ndomains; d2++)
                    for (size_t j = 0; j < nn; j++)
                        if (strcmp(nodes[j].name, r[i].domains[d2].values[0]) == 0) {
                            tc_dom(&nodes[j], qsl[i], y, sizeof y);
                            if (strcmp(y, sk) == 0)
                                in += r[i].domains[d2].count;
                        }
                if (in % ss)
                    bad = __LINE__;
            }
        }
        if (!bad && sum != q[i].count)
            bad = __LINE__;
    }
    /* recorded as admitted, the placements use what the model took */
    for (int i = 0; i < 2 && !bad && r[0].ok && r[1].ok; i++)
        for (size_t d = 0; d < r[i].ndomains && !bad; d++)
            if (cu_tas_assigned(t, r[i].domains[d].values, r[i].nlevels, &pl[i],
                                r[i].domains[d].count, 1) != CU_OK)
                bad = __LINE__;
    if (!bad && r[0].ok && r[1].ok) {
        cu_res one_r[] = { { "gpu", 1 } };
        cu_reslist one = { 1, one_r };
        int64_t total = 0;
        for (size_t j = 0; j < nn; j++)
            total += tc_fit(&nodes[j], 1);
        if (cu_tas_placeable(t, &one, NULL, &tol, 0) != total)
            bad = __LINE__;
    }
    for (int i = 0; i < 2; i++) {
        cu_tas_result_free(&r[i]);
        cu_tas_result_free(&r2[i]);
    }
    cu_tas_free(t);
    return bad;
}

#endif
