/*
 * cu_cycle.c - the scheduling cycle (Kueue's Scheduler.schedule), pure: no
 * I/O, no clock other than the injected one. Flavor assignment is in
 * cu_assign.c.
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
#include "cu_cycle_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { RQ_PARK = 0, RQ_HEAP = 1, RQ_DONE = 2 };
/* rounds a workload with flavors left to try counts as progress */
#define FMEM_RETRIES 8

/* Drops w's flavor memory: its next attempt tries every flavor (Kueue
 * resets LastAssignment on admission, on issued preemptions and when a
 * nominated workload is skipped). */
static void forget_flavors(ewl *w)
{
    free(w->fmem);
    w->fmem = NULL;
    w->fmem_ng = 0;
    w->fmem_retries = 0;
}

/* ---------------- the cycle ---------------- */

/* The order of a round's entries without fair sharing (Kueue's
 * classicalIterator): lower borrowing level first, then higher priority,
 * then older (queue-order timestamp). The level is the height of the
 * lowest cohort subtree the assignment must borrow from (0: no borrowing;
 * cu_engine_borrow_level), the highest over the assignment's pod sets and
 * flavor-resources; a taller tree gives a higher level, so a workload that
 * borrows through the root of a deep tree goes after one that borrows
 * from its own parent cohort, whatever their priorities. Admission Fair
 * Sharing orders each queue, not this list. */
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
    const cu_qitem *qa = &a->wl->qi, *qb = &b->wl->qi;
    if (qa->prio != qb->prio)
        return qa->prio > qb->prio ? -1 : 1;
    if (qa->ts != qb->ts)
        return qa->ts < qb->ts ? -1 : 1;
    return strcmp(qa->key, qb->key);
}

/* Records the placements tres of a's TAS pod sets on w (before its usage
 * is applied). */
static cu_err record_topology(cu_engine *e, ewl *w, const asg *a, const cu_tas_result *tres)
{
    for (size_t i = 0; a->tas && tres && i < a->tas->n; i++) {
        cu_err err = cu_engine_tas_record(e, w, (size_t)a->tas->ps[i], a->tas->ti[i], &tres[i],
                                          &a->tas->use[i]);
        if (err) {
            cu_engine_tas_forget(w);
            return err;
        }
    }
    return CU_OK;
}

static cu_err admit(cu_engine *e, ecq *c, ewl *w, const asg *a, const cu_tas_result *tres)
{
    cu_err terr = record_topology(e, w, a, tres);
    if (terr)
        return terr;
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
    w->tas_wait = 0;
    w->blocked_by = NULL;
    w->waiting_for = 0;
    free(w->plan);
    w->plan = NULL;
    forget_flavors(w);
    if (c->sticky == w)
        c->sticky = NULL;
    cu_engine_apply_usage(e, w, 1);
    cu_engine_tas_check(e, w);
    c->admitted++;
    if (cu_afs_admitted(e, c, w))
        return CU_ENOMEM;
    CU_VEC(int) *log = (void *)&e->admitted_log;
    (void)CU_VEC_RESERVE(*log, 64);
    if (log->n < log->cap)
        log->items[log->n++] = w->idx;
    return CU_OK;
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
        cu_engine_set_msg(same[i], head->reason, head->message);
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
    const char *m = cu_arena_printf(
        ar,
        "Preempted to accommodate a workload (UID: %s, JobUID: %s) due to %s; preemptor path: %s; preemptee path: %s",
        uid, juid && *juid ? juid : "UNKNOWN", human_reason(reason), cq_path(ar, c),
        cq_path(ar, vc));
    const char *cohort = c->obj->cohort ? c->obj->cohort : c->name;
    const char *note;
    if (strcmp(reason, PR_IN_CQ) == 0)
        note = cu_arena_printf(ar, "preempted by %s within ClusterQueue %s", w->key, c->name);
    else if (strcmp(reason, PR_RECLAIM) == 0)
        note = cu_arena_printf(ar, "preempted by %s to reclaim nominal quota in cohort %s", w->key,
                               cohort);
    else if (strcmp(reason, PR_FAIR_SHARING) == 0)
        note = cu_arena_printf(ar, "preempted by %s for fair sharing in cohort %s", w->key, cohort);
    else
        note = cu_arena_printf(ar,
                               "preempted by %s, which borrows in cohort %s with a higher priority",
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
    if (CU_VEC_PUSH(*elog, v->idx, 16))
        return CU_ENOMEM;
    CU_VEC(int) *ev = (void *)&e->evicting;
    if (CU_VEC_PUSH(*ev, v->idx, 16))
        return CU_ENOMEM;
    return CU_OK;
}

/* Temporary usage changes of one round (reservations of preemptors and
 * of entries that could preempt), undone when the round ends. */
typedef struct journal {
    size_t n, cap;
    int *cq;
    int *fr;
    int64_t *amt;
} journal;

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
            forget_flavors(w);
            en->reason = R_PENDING;
            en->requeue = RQ_HEAP;
            return CU_OK;
        }
        /* fits once every victim chosen so far and its own are gone */
        for (size_t k = 0; k < rs->nvict; k++)
            cu_engine_apply_usage(e, rs->victims[k], -1);
        for (size_t k = 0; k < en->t.n; k++)
            cu_engine_apply_usage(e, en->t.t[k].wl, -1);
        int ok = cu_asg_fits(e, c, &en->a, 1, 1);
        for (size_t k = 0; k < en->t.n; k++)
            cu_engine_apply_usage(e, en->t.t[k].wl, 1);
        for (size_t k = 0; k < rs->nvict; k++)
            cu_engine_apply_usage(e, rs->victims[k], 1);
        if (!ok) {
            en->msg = "Workload no longer fits after processing another workload";
            forget_flavors(w);
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
        forget_flavors(w);
        w->waiting_for = (int)en->t.n;
        if (!w->plan)
            w->plan = malloc((w->nps ? w->nps : 1) * sizeof(int32_t));
        if (!w->plan)
            return CU_ENOMEM;
        for (size_t p = 0; p < w->nps; p++)
            w->plan[p] = en->a.ps[p].count;
        en->msg =
            cu_arena_printf(&e->cycle, "waiting for %zu preempted workload%s to release quota",
                            en->t.n, en->t.n == 1 ? "" : "s");
        en->reason = R_PENDING;
        en->requeue = RQ_HEAP;
        if (c->obj->queueing == CU_BEST_EFFORT_FIFO)
            c->sticky = w;
        return CU_OK;
    }
    /* Fit: must fit against real usage plus this round's reservations;
     * Cueue never admits into quota a preempted workload still holds */
    cu_tas_result *tres = NULL;
    int ok = cu_asg_fits(e, c, &en->a, 1, 0);
    const cu_tas_result *use = NULL;
    if (ok && en->a.tas && en->a.tas->n && cu_engine_tas_still_fits(e, en->a.tas)) {
        use = en->a.tas->res; /* its nodes still take it */
    } else if (ok && en->a.tas && en->a.tas->n) {
        /* placed again against the usage of this round's admissions */
        tres = cu_arena_alloc(&e->cycle, en->a.tas->n * sizeof(*tres));
        if (!tres)
            return CU_ENOMEM;
        cu_err perr = cu_engine_tas_place(e, en->a.tas, 0, tres, NULL);
        if (perr == CU_ENOMEM)
            ok = -1;
        else if (perr)
            ok = 0;
    }
    cu_err err = ok < 0 ? CU_ENOMEM : ok ? admit(e, c, w, &en->a, use ? use : tres) : CU_OK;
    for (size_t i = 0; tres && i < en->a.tas->n; i++)
        cu_tas_result_free(&tres[i]);
    if (!ok) {
        en->msg = "Workload no longer fits after processing another workload";
        forget_flavors(w);
        en->reason = R_PENDING;
        en->requeue = RQ_HEAP;
        return CU_OK;
    }
    if (err)
        return err;
    en->requeue = RQ_DONE;
    rs->admitted++;
    return CU_OK;
}

/* Kueue's LastAssignment: keeps the flavors the attempt stopped at, so
 * the next attempt of w starts after them. */
static cu_err remember_flavors(cu_engine *e, const ecq *c, ewl *w, const asg *a)
{
    size_t n = w->nps * c->ngroups;
    if (!a->tried || !n) {
        forget_flavors(w);
        return CU_OK;
    }
    if (!w->fmem || w->fmem_ng != c->ngroups) {
        int16_t *m = realloc(w->fmem, n * sizeof(int16_t));
        if (!m)
            return CU_ENOMEM;
        w->fmem = m;
    }
    memcpy(w->fmem, a->tried, n * sizeof(int16_t));
    w->fmem_ng = c->ngroups;
    w->fmem_cq = (int)(c - e->cqs.items);
    return CU_OK;
}

/* 1 when w's last attempt left flavors to try (Kueue's PendingFlavors). */
static int pending_flavors(const ewl *w)
{
    if (!w->fmem)
        return 0;
    for (size_t k = 0; k < w->nps * w->fmem_ng; k++)
        if (w->fmem[k] >= 0)
            return 1;
    return 0;
}

/* One Kueue cycle. */
static cu_err round_once(cu_engine *e, cu_cycle_stats *st)
{
    cu_engine_tas_drop(e);
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
        cu_err err = cu_nominate_assign(e, en->cq, w, &en->a, &en->t);
        if (err)
            return err;
        en->msg = en->a.msg;
        en->reason = en->a.reason;
        cu_err merr = remember_flavors(e, en->cq, w, &en->a);
        if (merr)
            return merr;
        if (en->a.mode != MODE_FIT && !en->t.n && en->msg && e->protected_seen != protected_before)
            en->msg = cu_arena_printf(&e->cycle,
                                      "%s; workloads that could be preempted have "
                                      "reached their preemption budget",
                                      en->msg);
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
    int admitted = rs.admitted, issued = rs.issued, parked = 0, retried = 0;
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
        cu_engine_set_msg(w, en->reason, w->note && !w->waiting_for ? w->note : en->msg);
        if (pending_flavors(w)) {
            /* Kueue requeues a workload with flavors left to try at once;
             * the next round tries them (a few times until the memory is
             * dropped: it may wrap around, and rounds must settle) */
            if (w->fmem_retries < FMEM_RETRIES) {
                w->fmem_retries++;
                retried++;
            }
            en->requeue = RQ_HEAP;
        }
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
    return (admitted || parked || issued || released || retried) ? CU_OK : CU_ENOTFOUND;
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
        if (err == CU_ENOTFOUND) {
            /* nothing else to do: the batched requeue of an offline run */
            if (e->opts.requeue_batch == CU_RQ_IDLE && cu_engine_requeue_next(e) &&
                cu_engine_requeue_due(e, INT64_MAX) > 0) {
                st->progress = 1;
                if (e->opts.one_head_per_cycle)
                    break;
                continue;
            }
            break;
        }
        if (err)
            return err;
        st->progress = 1;
        if (e->opts.one_head_per_cycle)
            break;
    }
    e->views_dirty = 1;
    return CU_OK;
}

int cu_engine_run(cu_engine *e, int max_cycles)
{
    int n = 0;
    while (n < max_cycles) {
        cu_cycle_stats st;
        n++;
        if (cu_engine_cycle(e, &st) != CU_OK || !st.progress)
            break;
    }
    return n;
}
