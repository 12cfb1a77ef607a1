/*
 * cu_kubesim.c - the simulated part of the embedded cluster: Nodes, a
 * Job controller, a default-scheduler model and a kubelet model, working
 * on the object store.
 *
 * The parts: the scheduler model and pass (cu_simsched.c), Nodes
 * (cu_simnodes.c), the Job controller (cu_jobctl.c), the kubelet model
 * (cu_kubelet.c); what they share is in internal/ks_int.h.
 *
 * The controllers are stateless passes over the store (each lists what it
 * needs, writes what must change and returns how many writes it made), so
 * they converge: a pass over an unchanged store writes nothing. The
 * thread runs them when the store's resourceVersion moved and when a timed
 * transition is due (see "the thread" below).
 *
 * Not modelled (deliberately): preemption, preferred affinity and
 * PreferNoSchedule scoring, BalancedAllocation, inter-pod affinity and
 * topology spread, NoExecute eviction of running pods, Indexed completion
 * mode, podFailurePolicy, successPolicy, the exponential backoff between
 * pod failures, restartPolicy OnFailure restarts (pods never fail by
 * themselves).
 */
#include "ks_int.h"
#include "cu_clock.h"

#include <pthread.h>
#include <time.h>

int cu_kubesim_step(cu_store *s, int most_allocated, int64_t now_ms, int64_t *next_due_ms)
{
    int total = 0;
    for (int round = 0; round < 16; round++) {
        int w = cu_kubesim_sync_jobs(s, now_ms, next_due_ms);
        w += cu_kubesim_schedule(s, most_allocated, now_ms);
        w += cu_kubesim_kubelet(s, now_ms, next_due_ms);
        total += w;
        if (!w)
            break;
    }
    return total;
}

/* ================= the thread ================= */

/* The thread polls the store's resourceVersion every tick and runs a pass
 * when it moved (or when a timed transition is due). It does not use
 * cu_store_on_change: the store cannot unregister a hook, and hooks run
 * outside the store lock from a copied list, so the hook's target would
 * have to outlive cu_kubesim_stop. A pass over a store that did not change
 * since the last pass is skipped; our own writes move the RV, so each
 * busy pass is followed by one quiet pass that writes nothing.
 *
 * The controllers share a decoded world kept between passes (ks_state,
 * fed by watches) and each looks only at what changed; each pass is bounded
 * (KS_PASS_WRITES writes; the scheduler's also KS_SCHED_US of time), so
 * the three take turns on a long backlog, and the clock is read again
 * for each round, so pods finish on time. The stop flag is looked at
 * between rounds and between pods. */
#define KS_PASS_WRITES 400
#define KS_SCHED_US 50000
#define KS_GC_MS 200

struct cu_kubesim {
    cu_store *s;
    cu_kubesim_opts o;
    cu_clock clock;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    volatile int stop;
    ks_state *st;
    int64_t busy_us, started_us;
    uint64_t rounds;
};

/* cu_kubesim_step with the thread's scheduler; *more is set when the
 * scheduler stopped with pods left to try. */
static int ks_thread_step(cu_kubesim *k, int64_t *next_due, int *more)
{
    int total = 0;
    for (int round = 0; round < 16 && !k->stop; round++) {
        int64_t now = cu_clock_now(&k->clock);
        int m1 = 0, m2 = 0, m3 = 0;
        int w = ks_jobctl_pass(k->st, k->s, now, next_due, KS_PASS_WRITES, &k->stop, &m1);
        w += ks_sched_pass(k->st, k->s, k->o.most_allocated, cu_clock_now(&k->clock),
                           KS_PASS_WRITES, KS_SCHED_US, &k->stop, &m2);
        w += ks_kubelet_pass(k->st, k->s, cu_clock_now(&k->clock), next_due, KS_PASS_WRITES,
                             &k->stop, &m3);
        k->rounds++;
        total += w;
        *more = m1 || m2 || m3;
        if (!w && !*more)
            break;
    }
    return total;
}

static void *ks_main(void *arg)
{
    cu_kubesim *k = arg;
    int64_t next_due = INT64_MIN, seen_rv = -1, last_gc = INT64_MIN / 2;
    int tick = k->o.tick_ms > 0 ? k->o.tick_ms : 100, more = 0, gc_owed = 0;
    for (;;) {
        int64_t rv = cu_store_rv(k->s), now = cu_clock_now(&k->clock);
        if (rv != seen_rv || now >= next_due || more || gc_owed) {
            int64_t t0 = cu_clock_mono_ns() / 1000;
            /* dependents of deleted objects; a walk over the whole store,
             * so at most every KS_GC_MS however busy the store is (owed
             * until then) */
            gc_owed |= rv != seen_rv;
            if (gc_owed && t0 - last_gc >= KS_GC_MS * 1000) {
                cu_store_gc(k->s);
                last_gc = t0;
                gc_owed = 0;
            }
            next_due = INT64_MAX;
            more = 0;
            ks_thread_step(k, &next_due, &more);
            seen_rv = rv;
            k->busy_us += cu_clock_mono_ns() / 1000 - t0;
        }
        pthread_mutex_lock(&k->mu);
        if (!k->stop && !more) {
            struct timespec ts = cu_clock_after(CLOCK_REALTIME, tick);
            pthread_cond_timedwait(&k->cv, &k->mu, &ts);
        }
        int stop = k->stop;
        pthread_mutex_unlock(&k->mu);
        if (stop)
            break;
    }
    return NULL;
}

cu_kubesim *cu_kubesim_start(cu_store *s, const cu_kubesim_opts *o, char *err, size_t errn)
{
    cu_kubesim *k;
    ks_types t;
    char dummy[8];
    if (!err || !errn) {
        err = dummy;
        errn = sizeof dummy;
    }
    err[0] = '\0';
    if (!s || ks_types_get(s, &t) != 0) {
        snprintf(err, errn, "kubesim: the store does not serve pods, nodes, events and jobs");
        return NULL;
    }
    k = calloc(1, sizeof(*k));
    if (!k) {
        snprintf(err, errn, "kubesim: out of memory");
        return NULL;
    }
    k->s = s;
    if (o)
        k->o = *o;
    if (k->o.clock)
        k->clock = *k->o.clock;
    else
        k->clock = cu_clock_system();
    k->o.clock = NULL; /* copied: the caller's may go away */
    if (cu_kubesim_add_nodes(s, k->o.nodes_file, cu_clock_now(&k->clock), err, errn) != CU_OK) {
        free(k);
        return NULL;
    }
    k->o.nodes_file = NULL; /* used up; not kept */
    k->started_us = cu_clock_mono_ns() / 1000;
    if (!(k->st = ks_state_new(1))) {
        snprintf(err, errn, "kubesim: out of memory");
        free(k);
        return NULL;
    }
    k->st->stop = &k->stop;
    pthread_mutex_init(&k->mu, NULL);
    pthread_cond_init(&k->cv, NULL);
    if (pthread_create(&k->th, NULL, ks_main, k) != 0) {
        snprintf(err, errn, "kubesim: cannot start the controller thread");
        ks_state_free(k->st);
        pthread_cond_destroy(&k->cv);
        pthread_mutex_destroy(&k->mu);
        free(k);
        return NULL;
    }
    return k;
}

void cu_kubesim_stop(cu_kubesim *k)
{
    if (!k)
        return;
    int64_t t0 = cu_clock_mono_ns() / 1000;
    pthread_mutex_lock(&k->mu);
    k->stop = 1;
    pthread_cond_signal(&k->cv);
    pthread_mutex_unlock(&k->mu);
    pthread_join(k->th, NULL);
    int64_t stop_us = cu_clock_mono_ns() / 1000 - t0;
    if (getenv("CUEUE_KUBESIM_STATS"))
        fprintf(stderr,
                "kubesim: %" PRIu64 " pods bound in %.2f s of scheduler passes; %" PRIu64
                " rounds; %" PRIu64 " relists; thread busy %.2f s of %.2f s; stopped in %.3f s\n",
                ks_sched_binds(k->st), (double)ks_sched_busy_us(k->st) / 1e6, k->rounds,
                ks_state_relists(k->st), (double)k->busy_us / 1e6,
                (double)(cu_clock_mono_ns() / 1000 - k->started_us) / 1e6, (double)stop_us / 1e6);
    ks_state_free(k->st);
    pthread_cond_destroy(&k->cv);
    pthread_mutex_destroy(&k->mu);
    free(k);
}
