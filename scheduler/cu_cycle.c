/*
 * cu_cycle.c - the scheduling cycle (Kueue's Scheduler.schedule) and
 * flavor assignment (Kueue's FlavorAssigner), pure: no I/O, no clock
 * other than the injected one.
 *
 * One round is exactly one Kueue cycle: pop one head per active
 * ClusterQueue, assign flavors against current usage, order the entries,
 * admit those that still fit (usage of earlier admissions in the round is
 * visible to later entries), requeue the rest. cu_engine_cycle runs rounds
 * back to back until one makes no progress (unless one_head_per_cycle):
 * since nothing outside the engine changes between those rounds, the
 * result is the one Kueue's one-head-per-cycle loop reaches, with less
 * work per admission (no snapshot is rebuilt between rounds).
 *
 * Per-round memory comes from e->cycle and is released at the start of the
 * next round.
 */
#include "cu_engine_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { RQ_PARK = 0, RQ_HEAP = 1, RQ_DONE = 2 };


/* ---------------- small helpers ---------------- */

void cu_strlist_add(cu_arena *a, cu_strlist *l, const char *s)
{
    if (!s)
        return;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        const char **p = cu_arena_alloc(a, cap * sizeof(*p));
        if (!p)
            return;
        if (l->n)
            memcpy(p, l->s, l->n * sizeof(*p));
        l->s = p;
        l->cap = cap;
    }
    l->s[l->n++] = s;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static const char *qty(cu_engine *e, int res, int64_t v, char *buf, size_t n)
{
    return cu_qty_format_res(e->res_names.items[res], v, buf, n);
}

/* ---------------- eligibility of a flavor ---------------- */

static int tolerates(const cu_toleration *t, const cu_taint *x)
{
    if (t->effect && *t->effect && (!x->effect || strcmp(t->effect, x->effect) != 0))
        return 0;
    if (!t->key || !*t->key)
        return t->op == CU_TOL_EXISTS;
    if (!x->key || strcmp(t->key, x->key) != 0)
        return 0;
    if (t->op == CU_TOL_EXISTS)
        return 1;
    const char *tv = t->value ? t->value : "", *xv = x->value ? x->value : "";
    return strcmp(tv, xv) == 0;
}

/* Returns the first NoSchedule/NoExecute taint of f that neither the pod
 * set nor the flavor's own tolerations tolerate, or NULL. */
const cu_taint *cu_flavor_untolerated(const cu_resource_flavor *f, const cu_podset *ps)
{
    for (size_t i = 0; i < f->ntaints; i++) {
        const cu_taint *x = &f->taints[i];
        if (!x->effect || (strcmp(x->effect, "NoSchedule") != 0 && strcmp(x->effect, "NoExecute") != 0))
            continue;
        int ok = 0;
        for (size_t j = 0; j < ps->ntols && !ok; j++)
            ok = tolerates(&ps->tols[j], x);
        for (size_t j = 0; j < f->ntols && !ok; j++)
            ok = tolerates(&f->tols[j], x);
        if (!ok)
            return x;
    }
    return NULL;
}

int cu_group_has_key(const egroup *g, const char *key)
{
    for (size_t i = 0; i < g->nkeys; i++)
        if (strcmp(g->keys[i], key) == 0)
            return 1;
    return 0;
}

static int parse_i64(const char *s, long long *out)
{
    char *end;
    if (!s || !*s)
        return 0;
    *out = strtoll(s, &end, 10);
    return *end == '\0';
}

int cu_selreq_matches(const cu_selreq *r, const cu_kvs *labels)
{
    const char *v = cu_kvs_get(labels, r->key);
    switch (r->op) {
    case CU_SEL_IN:
    case CU_SEL_NOTIN: {
        int in = 0;
        for (size_t i = 0; v && i < r->values.n && !in; i++)
            in = strcmp(v, r->values.items[i]) == 0;
        return r->op == CU_SEL_IN ? in : !in;
    }
    case CU_SEL_EXISTS:
        return v != NULL;
    case CU_SEL_DOESNOTEXIST:
        return v == NULL;
    case CU_SEL_GT:
    case CU_SEL_LT: {
        long long a, b;
        if (!v || r->values.n != 1 || !parse_i64(v, &a) || !parse_i64(r->values.items[0], &b))
            return 0;
        return r->op == CU_SEL_GT ? a > b : a < b;
    }
    }
    return 0;
}

/* Kueue's flavorSelector: the pod's nodeSelector and required node
 * affinity, restricted to the label keys the group's flavors use, must
 * match the flavor's nodeLabels. */
static int affinity_matches(const egroup *g, const cu_podset *ps, const cu_kvs *labels)
{
    for (size_t i = 0; i < ps->node_selector.n; i++) {
        const cu_kv *kv = &ps->node_selector.items[i];
        if (!cu_group_has_key(g, kv->key))
            continue;
        const char *v = cu_kvs_get(labels, kv->key);
        if (!v || strcmp(v, kv->value) != 0)
            return 0;
    }
    if (!ps->nterms)
        return 1;
    /* a term left with no relevant requirement makes the affinity match
     * anything (terms are ORed) */
    for (size_t t = 0; t < ps->nterms; t++) {
        size_t relevant = 0;
        for (size_t r = 0; r < ps->terms[t].n; r++)
            relevant += cu_group_has_key(g, ps->terms[t].reqs[r].key);
        if (!relevant)
            return 1;
    }
    for (size_t t = 0; t < ps->nterms; t++) {
        int all = 1;
        for (size_t r = 0; r < ps->terms[t].n && all; r++) {
            const cu_selreq *q = &ps->terms[t].reqs[r];
            if (cu_group_has_key(g, q->key))
                all = cu_selreq_matches(q, labels);
        }
        if (all)
            return 1;
    }
    return 0;
}

/* ---------------- flavor assignment ---------------- */

typedef struct item { int res; int64_t amt; int flv; } item;

static int64_t acc_get(const asg *a, int fr)
{
    for (size_t i = 0; i < a->nuse; i++)
        if (a->fr[i] == fr)
            return a->amt[i];
    return 0;
}

static void acc_add(asg *a, int fr, int64_t v)
{
    for (size_t i = 0; i < a->nuse; i++)
        if (a->fr[i] == fr) {
            a->amt[i] = cu_qty_sat_add(a->amt[i], v);
            return;
        }
    a->fr[a->nuse] = fr;
    a->amt[a->nuse++] = v;
}

/* Kueue's canPreemptWhileBorrowing. */
static int can_preempt_while_borrowing(const cu_engine *e, const ecq *c)
{
    return c->obj->preemption.borrow_policy != CU_PP_NEVER ||
           (e->opts.fair_sharing && c->obj->preemption.reclaim != CU_PP_NEVER);
}

/* Kueue's shouldTryNextFlavor. */
static int try_next_flavor(const ecq *c, int mode, int borrows)
{
    cu_fung wb = c->obj->fungibility.when_can_borrow;
    cu_fung wp = c->obj->fungibility.when_can_preempt;
    return mode == MODE_NOFIT || mode == MODE_NOCAND ||
           ((mode == MODE_PREEMPT || mode == MODE_RECLAIM) && wp == CU_FUNG_TRY_NEXT_FLAVOR) ||
           (borrows && wb == CU_FUNG_TRY_NEXT_FLAVOR);
}

/* Kueue's isPreferred: is (mode, borrow) better than (bmode, bborrow)? */
static int preferred(const ecq *c, int mode, int borrow, int bmode, int bborrow)
{
    if (mode == MODE_NOFIT)
        return 0;
    if (bmode == MODE_NOFIT)
        return 1;
    if ((mode == MODE_NOCAND) != (bmode == MODE_NOCAND))
        return mode != MODE_NOCAND;
    if (c->obj->fungibility.preference == CU_PREF_PREEMPTION_OVER_BORROWING) {
        if (borrow != bborrow)
            return borrow < bborrow;
        return mode > bmode;
    }
    if (mode != bmode)
        return mode > bmode;
    return borrow < bborrow;
}

/* Finds the flavor of group g for the items of one pod set. Returns the
 * flavor index within the group, or -1; *mode_out is the chosen flavor's
 * mode. Reasons for flavors that do not fit are appended to reasons. */
static int find_flavor(cu_engine *e, ecq *c, ewl *w, const egroup *g, const cu_podset *pso,
                       item *items, size_t nitems, asg *a, cu_strlist *reasons,
                       int *reason_code, int *borrow_out, int *mode_out)
{
    cu_arena *ar = &e->cycle;
    char b1[40], b2[40], b3[40];
    int best = -1, best_borrow = 0, best_mode = MODE_NOFIT;
    int least = R_INADMISSIBLE + 1;
    for (size_t fi = 0; fi < g->nflv; fi++) {
        const eflavor *fl = &e->flavors.items[g->flv[fi]];
        if (!fl->obj) {
            cu_strlist_add(ar, reasons, cu_arena_printf(ar, "flavor %s not found", fl->name));
            if (R_NO_MATCHING_FLAVOR < least)
                least = R_NO_MATCHING_FLAVOR;
            continue;
        }
        const cu_taint *t = cu_flavor_untolerated(fl->obj, pso);
        if (t) {
            cu_strlist_add(ar, reasons, cu_arena_printf(ar, "untolerated taint {%s %s %s <nil>} in flavor %s",
                                                 t->key ? t->key : "", t->value ? t->value : "",
                                                 t->effect, fl->name));
            if (R_NO_MATCHING_FLAVOR < least)
                least = R_NO_MATCHING_FLAVOR;
            continue;
        }
        if (!affinity_matches(g, pso, &fl->obj->node_labels)) {
            cu_strlist_add(ar, reasons, cu_arena_printf(ar, "flavor %s doesn't match node affinity", fl->name));
            if (R_NO_MATCHING_FLAVOR < least)
                least = R_NO_MATCHING_FLAVOR;
            continue;
        }
        int mode = MODE_FIT, borrow = 0;
        for (size_t i = 0; i < nitems && mode != MODE_NOFIT; i++) {
            size_t rpos;
            for (rpos = 0; rpos < g->nres; rpos++)
                if (g->res[rpos] == items[i].res)
                    break;
            if (rpos == g->nres)
                continue; /* another group's resource */
            int fr = g->fr[fi * g->nres + rpos];
            const char *rname = e->res_names.items[items[i].res];
            if (fr < 0) {
                cu_strlist_add(ar, reasons, cu_arena_printf(ar, "resource %s unavailable in flavor %s", rname, fl->name));
                mode = MODE_NOFIT;
                break;
            }
            int64_t prev = acc_get(a, fr);
            int64_t val = cu_qty_sat_add(items[i].amt, prev);
            int64_t pot = cu_quota_potential(c->node, (size_t)fr);
            if (val > pot) {
                const char *m;
                if (prev > 0)
                    m = cu_arena_printf(ar, "insufficient quota for %s in flavor %s, previously considered podsets requests (%s) + current podset request (%s) > maximum capacity (%s)",
                                        rname, fl->name, qty(e, items[i].res, prev, b1, sizeof b1),
                                        qty(e, items[i].res, items[i].amt, b2, sizeof b2),
                                        qty(e, items[i].res, pot, b3, sizeof b3));
                else
                    m = cu_arena_printf(ar, "insufficient quota for %s in flavor %s, request > maximum capacity (%s > %s)",
                                        rname, fl->name, qty(e, items[i].res, val, b1, sizeof b1),
                                        qty(e, items[i].res, pot, b2, sizeof b2));
                cu_strlist_add(ar, reasons, m);
                if (R_EXCEEDS_MAX_QUOTA < least)
                    least = R_EXCEEDS_MAX_QUOTA;
                mode = MODE_NOFIT;
                break;
            }
            int may_reclaim = 0;
            int lvl = cu_quota_borrow_level_ex(c->node, (size_t)fr, val, &may_reclaim);
            int64_t avail = cu_quota_available(c->node, (size_t)fr);
            if (val <= avail) {
                if (lvl > borrow)
                    borrow = lvl;
                continue;
            }
            cu_strlist_add(ar, reasons, cu_arena_printf(ar, "insufficient unused quota for %s in flavor %s, %s more needed",
                                                 rname, fl->name,
                                                 qty(e, items[i].res, cu_qty_sat_sub(val, avail), b1, sizeof b1)));
            if (R_WAITING_FOR_QUOTA < least)
                least = R_WAITING_FOR_QUOTA;
            int m = MODE_NOFIT;
            int level = lvl; /* a preempting flavor counts the level after preemption */
            if (val <= c->node->nominal[fr] || may_reclaim ||
                c->obj->preemption.within_cq != CU_PP_NEVER || can_preempt_while_borrowing(e, c))
                m = cu_preempt_oracle(e, c, w, fr, val, &level);
            if (level > borrow)
                borrow = level;
            if (m < mode)
                mode = m;
        }
        if (mode == MODE_NOFIT)
            continue;
        if (!try_next_flavor(c, mode, borrow > 0)) {
            *borrow_out = borrow;
            *mode_out = mode;
            return (int)fi;
        }
        if (best < 0 || preferred(c, mode, borrow, best_mode, best_borrow)) {
            best = (int)fi;
            best_borrow = borrow;
            best_mode = mode;
        }
    }
    if (best >= 0) {
        *borrow_out = best_borrow;
        *mode_out = best_mode;
        return best;
    }
    *reason_code = least <= R_INADMISSIBLE ? least : R_NO_MATCHING_FLAVOR;
    return -1;
}

static void join_into(cu_buf *b, const char *psname, cu_strlist *r)
{
    qsort(r->s, r->n, sizeof(*r->s), cmp_str);
    if (b->len)
        cu_buf_puts(b, "; ");
    cu_buf_printf(b, "couldn't assign flavors to pod set %s: ", psname);
    for (size_t i = 0; i < r->n; i++) {
        if (i)
            cu_buf_puts(b, ", ");
        cu_buf_puts(b, r->s[i]);
    }
}

/* Assigns flavors for all pod sets of w with the given counts. The
 * workload's mode is the worst of its pod sets'. */
static void assign(cu_engine *e, ecq *c, ewl *w, const int32_t *counts, asg *a)
{
    cu_arena *ar = &e->cycle;
    memset(a, 0, sizeof(*a));
    a->mode = MODE_NOFIT;
    size_t total = 1;
    for (size_t i = 0; i < w->nps; i++)
        total += w->ps[i].nreq + 1;
    a->ps = cu_arena_alloc(ar, (w->nps ? w->nps : 1) * sizeof(eassign));
    a->fr = cu_arena_alloc(ar, total * sizeof(int));
    a->amt = cu_arena_alloc(ar, total * sizeof(int64_t));
    item *items = cu_arena_alloc(ar, total * sizeof(item));
    if (!a->ps || !a->fr || !a->amt || !items) {
        a->msg = "out of memory";
        a->reason = R_PENDING;
        return;
    }
    cu_buf msg;
    cu_buf_init(&msg, 1 << 20);
    int wmode = MODE_FIT;
    for (size_t p = 0; p < w->nps; p++) {
        const eps *ps = &w->ps[p];
        const cu_podset *pso = &w->obj->podsets[p];
        int32_t cnt = counts[p];
        size_t n = 0;
        int pods_done = c->pods_res < 0;
        for (size_t r = 0; r <= ps->nreq; r++) {
            if (!pods_done && (r == ps->nreq || strcmp("pods", e->res_names.items[ps->res[r]]) < 0)) {
                items[n].res = c->pods_res;
                items[n].amt = (int64_t)cnt * 1000;
                items[n].flv = -1;
                n++;
                pods_done = 1;
            }
            if (r == ps->nreq)
                break;
            int64_t v = cu_engine_mul_sat(ps->amt[r], cnt);
            if (v == 0)
                continue;
            items[n].res = ps->res[r];
            items[n].amt = v;
            items[n].flv = -1;
            n++;
        }
        cu_strlist reasons = {0};
        int psmode = MODE_FIT;
        for (size_t i = 0; i < n; i++) {
            if (items[i].flv >= 0)
                continue;
            int gi = (size_t)items[i].res < c->nres_group ? c->res_group[items[i].res] : -1;
            if (gi < 0) {
                cu_strlist_add(ar, &reasons, cu_arena_printf(ar, "resource %s unavailable in ClusterQueue",
                                                      e->res_names.items[items[i].res]));
                join_into(&msg, ps->name, &reasons);
                a->msg = cu_arena_strdup(ar, cu_buf_str(&msg));
                a->reason = R_NO_MATCHING_FLAVOR;
                cu_buf_free(&msg);
                return;
            }
            const egroup *g = &c->groups[gi];
            int code = R_PENDING, borrow = 0, mode = MODE_NOFIT;
            size_t before = reasons.n;
            int fi = find_flavor(e, c, w, g, pso, items, n, a, &reasons, &code, &borrow, &mode);
            if (fi < 0) {
                join_into(&msg, ps->name, &reasons);
                a->msg = cu_arena_strdup(ar, cu_buf_str(&msg));
                a->reason = code;
                cu_buf_free(&msg);
                return;
            }
            if (mode == MODE_FIT)
                reasons.n = before; /* a fitting flavor carries no reasons */
            if (mode < psmode)
                psmode = mode;
            if (borrow > a->borrow)
                a->borrow = borrow;
            for (size_t j = 0; j < n; j++) {
                for (size_t rpos = 0; rpos < g->nres; rpos++) {
                    if (g->res[rpos] != items[j].res)
                        continue;
                    items[j].flv = g->flv[fi];
                    acc_add(a, g->fr[(size_t)fi * g->nres + rpos], items[j].amt);
                }
            }
        }
        if (psmode != MODE_FIT && reasons.n)
            join_into(&msg, ps->name, &reasons);
        if (psmode < wmode)
            wmode = psmode;
        eassign *ea = &a->ps[p];
        ea->count = cnt;
        ea->n = n;
        ea->res = cu_arena_alloc(ar, (n ? n : 1) * sizeof(int));
        ea->flv = cu_arena_alloc(ar, (n ? n : 1) * sizeof(int));
        ea->amt = cu_arena_alloc(ar, (n ? n : 1) * sizeof(int64_t));
        if (!ea->res || !ea->flv || !ea->amt) {
            a->msg = "out of memory";
            a->reason = R_PENDING;
            cu_buf_free(&msg);
            return;
        }
        for (size_t i = 0; i < n; i++) {
            ea->res[i] = items[i].res;
            ea->flv[i] = items[i].flv;
            ea->amt[i] = items[i].amt;
        }
    }
    a->mode = wmode;
    if (wmode != MODE_FIT) {
        a->msg = cu_arena_strdup(ar, cu_buf_str(&msg));
        a->reason = R_WAITING_FOR_QUOTA;
    }
    cu_buf_free(&msg);
}

static int preemptish(int mode)
{
    return mode == MODE_PREEMPT || mode == MODE_RECLAIM || mode == MODE_NOCAND;
}

/* Assigns flavors and, when the assignment needs preemption, finds the
 * targets. Full counts first; with minCount (partial admission) and no
 * way to admit the full count, the largest count that fits or can
 * preempt, found by binary search, as Kueue's pod set reducer does. */
static cu_err nominate_assign(cu_engine *e, ecq *c, ewl *w, asg *out, targets *t)
{
    int32_t *counts = cu_arena_alloc(&e->cycle, (w->nps ? w->nps : 1) * sizeof(int32_t));
    if (!counts)
        return CU_ENOMEM;
    int partial = -1;
    for (size_t i = 0; i < w->nps; i++) {
        counts[i] = w->ps[i].count;
        if (partial < 0 && w->ps[i].min < w->ps[i].count)
            partial = (int)i;
    }
    t->n = 0;
    if (w->plan) {
        /* a preemptor first tries the counts it preempted for */
        assign(e, c, w, w->plan, out);
        if (out->mode == MODE_FIT)
            return CU_OK;
        free(w->plan);
        w->plan = NULL;
    }
    e->oracle.valid = 0;
    assign(e, c, w, counts, out);
    if (preemptish(out->mode)) {
        if (e->oracle.valid && e->oracle.w == w && e->oracle.c == c &&
            e->oracle.round == e->round && out->nuse == 1 && out->fr[0] == e->oracle.fr &&
            out->amt[0] == e->oracle.val) {
            *t = e->oracle.t; /* the same search the oracle just ran */
        } else {
            cu_err err = cu_preempt_targets(e, c, w, out, -1, 0, t);
            if (err)
                return err;
        }
    }
    if (out->mode == MODE_FIT || t->n || partial < 0)
        return CU_OK;
    int32_t lo = w->ps[partial].min, hi = w->ps[partial].count - 1;
    asg best, tmp;
    targets bt = {0, NULL}, tt;
    int found = 0;
    while (lo <= hi) {
        int32_t mid = lo + (hi - lo) / 2;
        counts[partial] = mid;
        assign(e, c, w, counts, &tmp);
        tt.n = 0;
        if (preemptish(tmp.mode)) {
            cu_err err = cu_preempt_targets(e, c, w, &tmp, -1, 0, &tt);
            if (err)
                return err;
        }
        if (tmp.mode == MODE_FIT || tt.n) {
            best = tmp;
            bt = tt;
            found = 1;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    if (found) {
        *out = best;
        *t = bt;
    }
    return CU_OK;
}

/* ---------------- the cycle ---------------- */

static int entry_cmp(const void *pa, const void *pb)
{
    const entry *a = pa, *b = pb;
    /* a workload whose preemptions released quota goes first, so that the
     * quota goes to the workload it was freed for (Kueue's
     * PrioritizePreemptorWorkloads); see docs/DEVELOPING.md */
    int ap = a->wl->plan != NULL, bp = b->wl->plan != NULL;
    if (ap != bp)
        return ap ? -1 : 1;
    int ab = a->a.mode != MODE_NOFIT ? a->a.borrow : 0;
    int bb = b->a.mode != MODE_NOFIT ? b->a.borrow : 0;
    if (ab != bb)
        return ab < bb ? -1 : 1;
    return cu_qitem_cmp(&a->wl->qi, &b->wl->qi);
}

static cu_err admit(cu_engine *e, ecq *c, ewl *w, const asg *a)
{
    eassign *adm = calloc(w->nps ? w->nps : 1, sizeof(eassign));
    int *fr = malloc((a->nuse ? a->nuse : 1) * sizeof(int));
    int64_t *amt = malloc((a->nuse ? a->nuse : 1) * sizeof(int64_t));
    if (!adm || !fr || !amt) {
        free(adm);
        free(fr);
        free(amt);
        return CU_ENOMEM;
    }
    for (size_t p = 0; p < w->nps; p++) {
        const eassign *s = &a->ps[p];
        eassign *d = &adm[p];
        d->count = s->count;
        d->n = s->n;
        d->res = malloc((s->n ? s->n : 1) * sizeof(int));
        d->flv = malloc((s->n ? s->n : 1) * sizeof(int));
        d->amt = malloc((s->n ? s->n : 1) * sizeof(int64_t));
        if (!d->res || !d->flv || !d->amt) {
            for (size_t q = 0; q <= p; q++) {
                free(adm[q].res);
                free(adm[q].flv);
                free(adm[q].amt);
            }
            free(adm);
            free(fr);
            free(amt);
            return CU_ENOMEM;
        }
        if (s->n) {
            memcpy(d->res, s->res, s->n * sizeof(int));
            memcpy(d->flv, s->flv, s->n * sizeof(int));
            memcpy(d->amt, s->amt, s->n * sizeof(int64_t));
        }
    }
    if (a->nuse) {
        memcpy(fr, a->fr, a->nuse * sizeof(int));
        memcpy(amt, a->amt, a->nuse * sizeof(int64_t));
    }
    if (cu_engine_adm_add(c, w)) {
        for (size_t q = 0; q < w->nps; q++) {
            free(adm[q].res);
            free(adm[q].flv);
            free(adm[q].amt);
        }
        free(adm);
        free(fr);
        free(amt);
        return CU_ENOMEM;
    }
    w->adm = adm;
    w->use_fr = fr;
    w->use_amt = amt;
    w->nuse = a->nuse;
    w->state = WL_ADMITTED;
    w->admitted_at = cu_clock_now(&e->opts.clock);
    free(w->message);
    w->message = NULL;
    free(w->note);
    w->note = NULL;
    w->reason = R_NONE;
    w->blocked_by = NULL;
    w->waiting_for = 0;
    free(w->plan);
    w->plan = NULL;
    if (c->sticky == w)
        c->sticky = NULL;
    cu_engine_apply_usage(e, w, 1);
    c->admitted++;
    if (cu_afs_admitted(e, c, w))
        return CU_ENOMEM;
    CU_VEC(int) *log = (void *)&e->admitted_log;
    if (log->n == log->cap) {
        size_t cap = log->cap ? log->cap * 2 : 64;
        int *p = realloc(log->items, cap * sizeof(int));
        if (p) {
            log->items = p;
            log->cap = cap;
        }
    }
    if (log->n < log->cap)
        log->items[log->n++] = w->idx;
    return CU_OK;
}

static void set_msg(ewl *w, int reason, const char *msg)
{
    if (!(w->message && msg && strcmp(w->message, msg) == 0)) {
        free(w->message);
        w->message = msg ? strdup(msg) : NULL;
    }
    w->reason = reason;
}

/* Kueue's SchedulingEquivalenceHashing (BestEffortFIFO): when a head is
 * found inadmissible, every workload waiting in the same heap with the
 * same scheduling hash would get the same answer against the same usage,
 * so they are parked together, with the head's reason. */
static cu_err park_equivalent(cu_engine *e, ecq *c, const ewl *head, int *parked)
{
    if (c->obj->queueing != CU_BEST_EFFORT_FIFO || !c->q.n)
        return CU_OK;
    ewl **same = cu_arena_alloc(&e->cycle, c->q.n * sizeof(*same));
    if (!same)
        return CU_ENOMEM;
    size_t n = 0;
    for (size_t i = 0; i < c->q.n; i++) {
        ewl *w = (ewl *)c->q.heap[i];
        if (w->shape == head->shape && !w->note)
            same[n++] = w;
    }
    for (size_t i = 0; i < n; i++) {
        set_msg(same[i], head->reason, head->message);
        if (cu_pq_park(&c->q, &same[i]->qi))
            return CU_ENOMEM;
        (*parked)++;
    }
    return CU_OK;
}

/* "/root/.../cq": the ClusterQueue's path in its cohort tree. */
static const char *cq_path(cu_arena *ar, const ecq *c)
{
    const cu_qnode *chain[64];
    size_t n = 0;
    for (const cu_qnode *p = c->node; p && n < 64; p = p->parent)
        chain[n++] = p;
    cu_buf b;
    cu_buf_init(&b, 4096);
    while (n--)
        cu_buf_printf(&b, "/%s", chain[n]->name);
    const char *s = cu_arena_strdup(ar, cu_buf_str(&b));
    cu_buf_free(&b);
    return s;
}

static const char *human_reason(const char *r)
{
    if (strcmp(r, PR_IN_CQ) == 0)
        return "prioritization in the ClusterQueue";
    if (strcmp(r, PR_RECLAIM) == 0)
        return "reclamation within the cohort";
    if (strcmp(r, PR_FAIR_SHARING) == 0)
        return "Fair Sharing within the cohort";
    return "reclamation within the cohort while borrowing";
}

/* Marks target v as preempted by w (issue the eviction). Its quota stays
 * reserved until cu_engine_complete_evictions. */
static cu_err issue_preemption(cu_engine *e, ecq *c, ewl *w, ewl *v, const char *reason)
{
    cu_arena *ar = &e->cycle;
    ecq *vc = &e->cqs.items[v->cq];
    const char *uid = w->obj->meta.uid && *w->obj->meta.uid ? w->obj->meta.uid : "UNKNOWN";
    const char *juid = cu_kvs_get(&w->obj->meta.labels, "kueue.x-k8s.io/job-uid");
    const char *m = cu_arena_printf(ar,
        "Preempted to accommodate a workload (UID: %s, JobUID: %s) due to %s; preemptor path: %s; preemptee path: %s",
        uid, juid && *juid ? juid : "UNKNOWN", human_reason(reason), cq_path(ar, c), cq_path(ar, vc));
    const char *cohort = c->obj->cohort ? c->obj->cohort : c->name;
    const char *note;
    if (strcmp(reason, PR_IN_CQ) == 0)
        note = cu_arena_printf(ar, "preempted by %s within ClusterQueue %s", w->key, c->name);
    else if (strcmp(reason, PR_RECLAIM) == 0)
        note = cu_arena_printf(ar, "preempted by %s to reclaim nominal quota in cohort %s", w->key, cohort);
    else if (strcmp(reason, PR_FAIR_SHARING) == 0)
        note = cu_arena_printf(ar, "preempted by %s for fair sharing in cohort %s", w->key, cohort);
    else
        note = cu_arena_printf(ar, "preempted by %s, which borrows in cohort %s with a higher priority",
                               w->key, cohort);
    if (!m || !note)
        return CU_ENOMEM;
    free(v->evict_message);
    free(v->note);
    v->evict_message = strdup(m);
    v->note = strdup(note);
    if (!v->evict_message || !v->note)
        return CU_ENOMEM;
    v->evicting = 1;
    v->evict_reason = "Preempted";
    int64_t now = cu_clock_now(&e->opts.clock);
    int64_t window = e->opts.preemption_window_ms ? e->opts.preemption_window_ms : 600000;
    if (!v->preempt_count || now - v->preempt_window >= window) {
        v->preempt_count = 0;
        v->preempt_window = now;
    }
    v->preempt_count++;
    v->preempt_reason = reason;
    CU_VEC(int) *elog = (void *)&e->evicted_log;
    if (elog->n == elog->cap) {
        size_t cap = elog->cap ? elog->cap * 2 : 16;
        int *p = realloc(elog->items, cap * sizeof(int));
        if (!p)
            return CU_ENOMEM;
        elog->items = p;
        elog->cap = cap;
    }
    elog->items[elog->n++] = v->idx;
    CU_VEC(int) *ev = (void *)&e->evicting;
    if (ev->n == ev->cap) {
        size_t cap = ev->cap ? ev->cap * 2 : 16;
        int *p = realloc(ev->items, cap * sizeof(int));
        if (!p)
            return CU_ENOMEM;
        ev->items = p;
        ev->cap = cap;
    }
    ev->items[ev->n++] = v->idx;
    return CU_OK;
}

/* Temporary usage changes of one round (reservations of preemptors and
 * of entries that could preempt), undone when the round ends. */
typedef struct journal { size_t n, cap; int *cq; int *fr; int64_t *amt; } journal;

static cu_err journal_add(cu_engine *e, journal *j, int cq, int fr, int64_t amt)
{
    if (!amt)
        return CU_OK;
    if (j->n == j->cap) {
        size_t cap = j->cap ? j->cap * 2 : 32;
        int *c = cu_arena_alloc(&e->cycle, cap * sizeof(int));
        int *f = cu_arena_alloc(&e->cycle, cap * sizeof(int));
        int64_t *a = cu_arena_alloc(&e->cycle, cap * sizeof(int64_t));
        if (!c || !f || !a)
            return CU_ENOMEM;
        if (j->n) {
            memcpy(c, j->cq, j->n * sizeof(int));
            memcpy(f, j->fr, j->n * sizeof(int));
            memcpy(a, j->amt, j->n * sizeof(int64_t));
        }
        j->cq = c;
        j->fr = f;
        j->amt = a;
        j->cap = cap;
    }
    j->cq[j->n] = cq;
    j->fr[j->n] = fr;
    j->amt[j->n++] = amt;
    cu_quota_add_usage(e->cqs.items[cq].node, (size_t)fr, amt);
    return CU_OK;
}

static void journal_undo(cu_engine *e, journal *j)
{
    while (j->n) {
        j->n--;
        cu_quota_add_usage(e->cqs.items[j->cq[j->n]].node, (size_t)j->fr[j->n], -j->amt[j->n]);
    }
}

/* Kueue reserves capacity for an entry that needs preemption but found
 * no targets, unless its queue can always reclaim (reclaimWithinCohort
 * Any), so that lower-priority workloads of the tree cannot take it in
 * this cycle: up to nominal quota, or up to nominal + borrowingLimit when
 * the entry borrows. */
static cu_err reserve_capacity(cu_engine *e, ecq *c, const asg *a, journal *j)
{
    int ci = (int)(c - e->cqs.items);
    for (size_t i = 0; i < a->nuse; i++) {
        size_t fr = (size_t)a->fr[i];
        const cu_qnode *n = c->node;
        int64_t r;
        if (a->borrow > 0 && n->blimit[fr] == CU_QUOTA_UNSET) {
            r = a->amt[i];
        } else {
            int64_t limit = n->nominal[fr];
            if (a->borrow > 0)
                limit = cu_qty_sat_add(limit, n->blimit[fr]);
            int64_t room = cu_qty_sat_sub(limit, n->usage[fr]);
            r = a->amt[i] < room ? a->amt[i] : room;
        }
        if (r > 0) {
            cu_err err = journal_add(e, j, ci, (int)fr, r);
            if (err)
                return err;
        }
    }
    return CU_OK;
}

/* State of one round's processing. */
typedef struct rstate {
    journal j;
    ewl **victims;
    size_t nvict, capvict;
    int admitted, issued;
} rstate;

/* Processes one nominated entry: admit it, issue its preemptions,
 * reserve capacity, or leave it for requeueing with a reason. Usage of
 * every entry processed before is visible. */
static cu_err process_entry(cu_engine *e, entry *en, rstate *rs)
{
    ecq *c = en->cq;
    ewl *w = en->wl;
    if (en->a.mode == MODE_NOFIT)
        return CU_OK;
    if (en->a.mode != MODE_FIT && !en->t.n) {
        if (c->obj->preemption.reclaim != CU_PP_ANY) {
            cu_err err = reserve_capacity(e, c, &en->a, &rs->j);
            if (err)
                return err;
        }
        return CU_OK;
    }
    if (en->a.mode != MODE_FIT) {
        int overlap = 0;
        for (size_t k = 0; k < en->t.n && !overlap; k++)
            overlap = en->t.t[k].wl->claimed_round == e->round;
        if (overlap) {
            en->msg = "Workload has overlapping preemption targets with another workload";
            en->reason = R_PENDING;
            en->requeue = RQ_HEAP;
            return CU_OK;
        }
        /* fits once every victim chosen so far and its own are gone */
        for (size_t k = 0; k < rs->nvict; k++)
            cu_engine_apply_usage(e, rs->victims[k], -1);
        for (size_t k = 0; k < en->t.n; k++)
            cu_engine_apply_usage(e, en->t.t[k].wl, -1);
        int ok = cu_asg_fits(c, &en->a, 1);
        for (size_t k = 0; k < en->t.n; k++)
            cu_engine_apply_usage(e, en->t.t[k].wl, 1);
        for (size_t k = 0; k < rs->nvict; k++)
            cu_engine_apply_usage(e, rs->victims[k], 1);
        if (!ok) {
            en->msg = "Workload no longer fits after processing another workload";
            en->reason = R_PENDING;
            en->requeue = RQ_HEAP;
            return CU_OK;
        }
        int ci = (int)(c - e->cqs.items);
        for (size_t k = 0; k < en->a.nuse; k++) {
            cu_err err = journal_add(e, &rs->j, ci, en->a.fr[k], en->a.amt[k]);
            if (err)
                return err;
        }
        int fresh = 0;
        for (size_t k = 0; k < en->t.n; k++) {
            ewl *v = en->t.t[k].wl;
            v->claimed_round = e->round;
            if (rs->nvict == rs->capvict) {
                ewl **nv = cu_arena_alloc(&e->cycle, rs->capvict * 2 * sizeof(ewl *));
                if (!nv)
                    return CU_ENOMEM;
                memcpy(nv, rs->victims, rs->nvict * sizeof(ewl *));
                rs->victims = nv;
                rs->capvict *= 2;
            }
            rs->victims[rs->nvict++] = v;
            if (!v->evicting) {
                cu_err err = issue_preemption(e, c, w, v, en->t.t[k].reason);
                if (err)
                    return err;
                fresh++;
            }
        }
        rs->issued += fresh;
        w->waiting_for = (int)en->t.n;
        if (!w->plan)
            w->plan = malloc((w->nps ? w->nps : 1) * sizeof(int32_t));
        if (!w->plan)
            return CU_ENOMEM;
        for (size_t p = 0; p < w->nps; p++)
            w->plan[p] = en->a.ps[p].count;
        en->msg = cu_arena_printf(&e->cycle, "waiting for %zu preempted workload%s to release quota",
                                  en->t.n, en->t.n == 1 ? "" : "s");
        en->reason = R_PENDING;
        en->requeue = RQ_HEAP;
        if (c->obj->queueing == CU_BEST_EFFORT_FIFO)
            c->sticky = w;
        return CU_OK;
    }
    /* Fit: must fit against real usage plus this round's reservations;
     * Cueue never admits into quota a preempted workload still holds */
    if (!cu_asg_fits(c, &en->a, 1)) {
        en->msg = "Workload no longer fits after processing another workload";
        en->reason = R_PENDING;
        en->requeue = RQ_HEAP;
        return CU_OK;
    }
    cu_err err = admit(e, c, w, &en->a);
    if (err)
        return err;
    en->requeue = RQ_DONE;
    rs->admitted++;
    return CU_OK;
}

/* One Kueue cycle. */
static cu_err round_once(cu_engine *e, cu_cycle_stats *st)
{
    cu_arena_free(&e->cycle);
    e->round++;
    int released = e->opts.manual_evictions ? 0 : cu_engine_complete_evictions(e);
    if (released < 0)
        return CU_ENOMEM;
    size_t nlist = e->nonempty.n;
    int *list = cu_arena_alloc(&e->cycle, (nlist ? nlist : 1) * sizeof(int));
    entry *ents = cu_arena_alloc(&e->cycle, (nlist ? nlist : 1) * sizeof(entry));
    if (!list || !ents)
        return CU_ENOMEM;
    if (nlist)
        memcpy(list, e->nonempty.items, nlist * sizeof(int));
    e->nonempty.n = 0;
    size_t n = 0;
    for (size_t i = 0; i < nlist; i++) {
        ecq *c = &e->cqs.items[list[i]];
        c->in_list = 0;
        if (!c->active || !c->q.n)
            continue;
        cu_qitem *it;
        /* the sticky preemptor heads its BestEffortFIFO queue, unless the
         * queue orders by Admission Fair Sharing, which outranks it */
        if (c->sticky && c->sticky->qi.where == CU_QI_HEAP && !cu_afs_on(e, c)) {
            it = &c->sticky->qi;
            cu_pq_remove(&c->q, it);
        } else {
            c->sticky = NULL;
            it = cu_pq_pop(&c->q);
        }
        entry *en = &ents[n++];
        memset(en, 0, sizeof(*en));
        en->wl = (ewl *)it;
        en->cq = c;
    }
    st->heads += (int)n;
    /* nominate */
    for (size_t i = 0; i < n; i++) {
        entry *en = &ents[i];
        ewl *w = en->wl;
        en->requeue = en->cq->obj->queueing == CU_STRICT_FIFO ? RQ_HEAP : RQ_PARK;
        if (!cu_engine_ns_selected(e, en->cq->obj, w->obj->meta.ns ? w->obj->meta.ns : "default")) {
            en->a.mode = MODE_NOFIT;
            en->msg = "Workload namespace doesn't match ClusterQueue selector";
            en->reason = R_INADMISSIBLE;
            en->requeue = RQ_PARK;
            continue;
        }
        unsigned protected_before = e->protected_seen;
        cu_err err = nominate_assign(e, en->cq, w, &en->a, &en->t);
        if (err)
            return err;
        en->msg = en->a.msg;
        en->reason = en->a.reason;
        if (en->a.mode != MODE_FIT && !en->t.n && en->msg && e->protected_seen != protected_before)
            en->msg = cu_arena_printf(&e->cycle, "%s; workloads that could be preempted have "
                                      "reached their preemption budget", en->msg);
    }
    /* process in order; usage of earlier entries is visible to later ones */
    rstate rs;
    memset(&rs, 0, sizeof(rs));
    rs.capvict = 16;
    rs.victims = cu_arena_alloc(&e->cycle, rs.capvict * sizeof(ewl *));
    if (!rs.victims)
        return CU_ENOMEM;
    if (e->opts.fair_sharing) {
        /* the fair-sharing tournament picks each next entry */
        for (size_t k = 0; k < n; k++) {
            int i = cu_fs_next(e, ents, n);
            if (i < 0)
                break;
            ents[i].done = 1;
            cu_err err = process_entry(e, &ents[i], &rs);
            if (err)
                return err;
        }
    } else {
        qsort(ents, n, sizeof(entry), entry_cmp);
        for (size_t i = 0; i < n; i++) {
            cu_err err = process_entry(e, &ents[i], &rs);
            if (err)
                return err;
        }
    }
    int admitted = rs.admitted, issued = rs.issued, parked = 0;
    journal_undo(e, &rs.j);
    /* requeue the rest */
    for (size_t i = 0; i < n; i++) {
        entry *en = &ents[i];
        if (en->requeue == RQ_DONE)
            continue;
        ewl *w = en->wl;
        if (en->cq->sticky == w && !en->t.n)
            en->cq->sticky = NULL;
        /* a preempted workload keeps explaining why it waits */
        set_msg(w, en->reason, w->note && !w->waiting_for ? w->note : en->msg);
        if (en->requeue == RQ_HEAP) {
            if (cu_pq_push(&en->cq->q, &w->qi))
                return CU_ENOMEM;
        } else {
            if (cu_pq_park(&en->cq->q, &w->qi))
                return CU_ENOMEM;
            parked++;
            cu_err err = park_equivalent(e, en->cq, w, &parked);
            if (err)
                return err;
        }
    }
    for (size_t i = 0; i < nlist; i++)
        cu_engine_mark_nonempty(e, list[i]);
    st->admitted += admitted;
    st->inadmissible += parked;
    st->preempted += issued;
    st->rounds++;
    return (admitted || parked || issued || released) ? CU_OK : CU_ENOTFOUND;
}

cu_err cu_engine_cycle(cu_engine *e, cu_cycle_stats *st)
{
    cu_cycle_stats tmp;
    if (!st)
        st = &tmp;
    memset(st, 0, sizeof(*st));
    /* A cycle runs rounds while they make progress, but never more than
     * max_rounds: a driver that calls cycles in a loop must see every
     * cycle end, even if the workloads never settle. */
    int max_rounds = e->opts.max_rounds > 0 ? e->opts.max_rounds : 100000;
    for (int r = 0; r < max_rounds; r++) {
        cu_err err = round_once(e, st);
        if (err == CU_ENOTFOUND)
            break;
        if (err)
            return err;
        st->progress = 1;
        if (e->opts.one_head_per_cycle)
            break;
    }
    e->views_dirty = 1;
    return CU_OK;
}
