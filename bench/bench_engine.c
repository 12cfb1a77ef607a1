/*
 * bench_engine.c - cueue_bench: drains a backlog shaped like Kueue's
 * scheduler performance workload (test/performance/scheduler, configs
 * baseline and large-scale) through the admission engine, with no API, in
 * simulated time. See bench/README.md for how to run it and what it prints.
 *
 * The world (ResourceFlavor, Cohorts, ClusterQueues, Namespaces,
 * LocalQueues) is built in memory in w.arena; Workloads are created in the
 * same arena when they arrive and handed to cu_engine_add_workload. Time is
 * a fake clock the driver advances from event to event: arrivals (one
 * interval after t=0, then every interval), and finishes (admission time +
 * runtime, kept in a binary heap). At each event time the driver adds the
 * arrivals, finishes what is due, then runs cu_engine_cycle until a cycle
 * makes no progress, and finally takes the workloads that were admitted
 * (cu_engine_take_admitted) to schedule their finishes.
 *
 * Preemption (reclaimWithinCohort Any, withinClusterQueue LowerPriority,
 * optionally fair sharing) is live: a preempted workload goes back to
 * pending and starts its runtime over when admitted again. Each workload
 * has an admission generation, bumped on every admission and eviction;
 * a finish event of an older generation is dropped, so cu_engine_finish
 * is only called on workloads the engine holds as admitted.
 *
 * Only engine calls are timed (CLOCK_PROCESS_CPUTIME_ID); generation and
 * the driver's bookkeeping are not.
 *
 * TAS (--tas): Kueue's TAS performance config (configs/tas: 1 block x 10
 * racks x 64 nodes of 96 cpu; the baseline's queues; small, medium and
 * large workloads of 2, 4 and 8 pods, a third each asking for a required
 * rack, a preferred rack, and slices in a rack) run twice on the same
 * workload set: "tas-quota" with a plain flavor (quota alone), "tas" with
 * the flavor on the Topology and the nodes, every admission placed.
 */
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cu_engine.h"

/* 2026-01-01T00:00:00Z, the simulation start used by `cueue simulate`. */
#define BENCH_T0_MS INT64_C(1767225600000)
#define BENCH_NCLASSES 3
#define BENCH_NOMINAL_MILLI INT64_C(20000)  /* 20 cpu per ClusterQueue */
#define BENCH_BLIMIT_MILLI INT64_C(100000)  /* borrowingLimit 100 cpu */
#define BENCH_MAX_CYCLES_PER_STEP 1000000   /* a stuck engine fails, not hangs */
#define BENCH_MAX_ROUNDS_PER_STEP 2000000LL /* a step that never settles fails */
#define BENCH_DEFAULT_CHECK_EVERY 100
#define BENCH_TARGET_RSS_MIB 64.0

/* ---- the load shapes (performance.md §1.3) ---- */

typedef struct bench_class {
    const char *name;  /* "small", "medium", "large" */
    int count;         /* workloads per ClusterQueue */
    int64_t cpu_milli; /* request of the one pod */
    int64_t runtime_ms;
    int32_t priority;
    int64_t interval_ms; /* creation interval; first one after one interval */
    int32_t pods;        /* pods of the one pod set (0: 1); cpu_milli is their total */
    int32_t slice;       /* the TAS slice size of its third kind (0: 1) */
} bench_class;

typedef struct bench_shape {
    const char *name;
    int ncohorts;
    int cqs_per_cohort;
    bench_class classes[BENCH_NCLASSES]; /* workloadsSets order */
    double target_dps;                   /* decisions/s to beat */
    double kueue_usage_pct;              /* Kueue's published CQ usage */
    double kueue_wall_s;                 /* Kueue's published wallMs / 1000 */
} bench_shape;

static const bench_shape bench_shapes[] = {
    { "baseline",
      5,
      6,
      { { "small", 350, 1000, 200, 50, 100, 1, 1 },
        { "medium", 100, 5000, 500, 100, 500, 1, 1 },
        { "large", 50, 20000, 1000, 200, 1200, 1, 1 } },
      100000.0,
      57.0,
      351.1 },
    { "large",
      10,
      100,
      { { "small", 35, 1000, 150, 50, 60, 1, 1 },
        { "medium", 11, 5000, 350, 100, 300, 1, 1 },
        { "large", 4, 20000, 700, 200, 700, 1, 1 } },
      50000.0,
      38.6,
      1179.4 },
    /* Kueue's configs/tas: the baseline's queues and amounts, in 2, 4 and
     * 8 pods; its published usage and wall time (rangespec means) */
    { "tas",
      5,
      6,
      { { "small", 350, 1000, 200, 50, 100, 2, 1 },
        { "medium", 100, 5000, 500, 100, 500, 4, 2 },
        { "large", 50, 20000, 1000, 200, 1200, 8, 4 } },
      20000.0,
      62.4,
      401.5 },
};
#define BENCH_NSHAPES (sizeof bench_shapes / sizeof bench_shapes[0])

/* A run is one shape, with or without fair sharing. */
typedef struct bench_variant {
    const char *name; /* "baseline", "large", "baseline-fs", "large-fs" */
    size_t shape;     /* index in bench_shapes */
    int fair_sharing; /* engine opts.fair_sharing, default strategies */
    int tas;          /* the flavor on a Topology, the nodes, topology requests */
} bench_variant;

static const bench_variant bench_variants[] = {
    { "baseline", 0, 0, 0 }, { "large", 1, 0, 0 },     { "baseline-fs", 0, 1, 0 },
    { "large-fs", 1, 1, 0 }, { "tas-quota", 2, 0, 0 }, { "tas", 2, 0, 1 },
};
#define BENCH_TAS_MASK 0x30 /* tas-quota and tas */
#define BENCH_TAS_RACKS 10
#define BENCH_TAS_HOSTS 64 /* per rack */
#define BENCH_TAS_KINDS 3  /* required rack, preferred rack, slices in a rack */
#define BENCH_NVARIANTS (sizeof bench_variants / sizeof bench_variants[0])

typedef struct bench_opts {
    int variants_mask; /* bit i: bench_variants[i] */
    int fair_sharing;  /* --fair-sharing: map plain shapes to their -fs variant */
    int one_head_per_cycle;
    int check;
    int check_every;
    int json;
} bench_opts;

/* ---- driver state ---- */

enum { WL_PENDING = 0, WL_ADMITTED, WL_FINISHED };

typedef struct bench_wl {
    const cu_workload *obj;
    int64_t arrival_ms;      /* relative to BENCH_T0_MS */
    int64_t admitted_ms;     /* first admission, relative; -1 until admitted */
    int64_t cur_admitted_ms; /* current (last) admission, relative; -1 */
    int32_t eidx;            /* index returned by cu_engine_add_workload */
    int32_t cq;
    uint32_t gen;       /* admission generation: bumped on every
                                 admission and eviction, so a finish event
                                 of an earlier admission is recognised as
                                 stale and dropped */
    uint16_t evictions; /* preemptions seen by the driver */
    uint8_t cls;
    uint8_t state;
} bench_wl;

typedef struct bench_cq {
    const char *name; /* also its namespace and LocalQueue name */
} bench_cq;

/* A finish event: workload wl finishes at t if it is still in admission
 * generation gen. */
typedef struct bench_ev {
    int64_t t;
    int32_t wl;
    uint32_t gen;
} bench_ev;

typedef struct bench_heap {
    bench_ev *items;
    size_t n, cap;
} bench_heap;

typedef struct bench_i64s {
    int64_t *items;
    size_t n, cap;
} bench_i64s;

typedef struct bench_result {
    size_t ncqs, nworkloads;
    int fair_sharing;
    long long admissions, heads, cycles, rounds, inadmissible;
    long long preemptions;                 /* sum of cu_cycle_stats.preempted */
    long long evictions[BENCH_NCLASSES];   /* per class, seen by the driver */
    long long evicted_wls[BENCH_NCLASSES]; /* workloads evicted at least once */
    int max_evictions;                     /* most evictions of one workload */
    long long reasons[5];                  /* last preempted_reason of evicted workloads
                                 (engine views): InClusterQueue,
                                 InCohortReclamation, InCohortFairSharing,
                                 InCohortReclaimWhileBorrowing, other */
    long long stale_finishes;              /* finish events dropped: workload was evicted */
    long long preempt_steps;               /* event times with at least one preemption */
    long long max_step_preemptions, max_step_rounds;
    int64_t max_step_rounds_t;
    double held_cpu_s;   /* quota held, cpu x s, evicted stretches included */
    double wasted_cpu_s; /* quota held by admissions that were evicted */
    long long checks;
    int64_t ns_add, ns_finish, ns_cycle, ns_take, ns_load;
    int64_t makespan_ms;
    double quota_bound_s, arrival_bound_s, offered_cpu;
    double usage_pct;        /* held_cpu_s / (nominal x makespan) */
    double useful_usage_pct; /* the work alone (no evicted stretches) */
    double cycle_p50_us, cycle_p99_us, cycle_max_us;
    long long busy_cycles; /* cycles that made progress */
    double busy_p50_us, busy_p99_us;
    double wait_mean_ms[BENCH_NCLASSES], wait_p50_ms[BENCH_NCLASSES],
        wait_p99_ms[BENCH_NCLASSES]; /* to the first admission */
    double final_mean_ms[BENCH_NCLASSES], final_p99_ms[BENCH_NCLASSES];
    /* to the admission that ran to the end */
    double rss_mib;
    double driver_mib; /* world, workload objects and bookkeeping */
} bench_result;

typedef struct bench_run {
    const bench_shape *shape;
    const bench_variant *variant;
    const bench_opts *opts;
    cu_world world;
    cu_engine *engine;
    int64_t now_ms; /* absolute; read by the fake clock */
    bench_cq *cqs;
    size_t ncqs;
    bench_wl *wls;
    size_t nwls, capwls;
    int32_t *by_eidx; /* engine index -> wls index, -1 */
    size_t nby_eidx;
    size_t npending;
    long long step_preempted; /* preemptions issued at the current event time */
    bench_heap finishes;
    bench_i64s cycle_ns;                                /* every cycle */
    bench_i64s busy_ns;                                 /* cycles that made progress */
    cu_podset podsets[BENCH_NCLASSES][BENCH_TAS_KINDS]; /* shared by the workloads of a
                                                           class (and TAS kind) */
    cu_res requests[BENCH_NCLASSES];
    cu_kv labels[BENCH_NCLASSES];
    bench_result r;
} bench_run;

/* Prints a message and exits 1. Used for engine failures and for the
 * driver's own allocation failures: the benchmark cannot go on. */
static void bench_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void bench_die(const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    fputs("cueue_bench: error: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static void *bench_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        bench_die("out of memory (%zu bytes)", n);
    return q;
}

static void *bench_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        bench_die("out of memory (%zu x %zu bytes)", n, size);
    return p;
}

/* Grows a {items, n, cap} vector by one slot; evaluates to the new slot. */
#define BENCH_PUSH(v) \
    (((v).n == (v).cap ? ((v).cap = (v).cap ? 2 * (v).cap : 16, \
                          (v).items = bench_xrealloc((v).items, (v).cap * sizeof *(v).items)) \
                       : (void *)0), \
     &(v).items[(v).n++])

static int64_t bench_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static double bench_rss_mib(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0.0;
    return (double)ru.ru_maxrss / 1024.0; /* Linux: KiB */
}

/* ---- finish events: binary min-heap on (t, wl) ---- */

static int bench_ev_less(const bench_ev *a, const bench_ev *b)
{
    return a->t < b->t || (a->t == b->t && a->wl < b->wl);
}

static void bench_heap_push(bench_heap *h, int64_t t, int32_t wl, uint32_t gen)
{
    size_t i;
    if (h->n == h->cap) {
        h->cap = h->cap ? 2 * h->cap : 256;
        h->items = bench_xrealloc(h->items, h->cap * sizeof *h->items);
    }
    i = h->n++;
    h->items[i].t = t;
    h->items[i].wl = wl;
    h->items[i].gen = gen;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        bench_ev tmp;
        if (!bench_ev_less(&h->items[i], &h->items[p]))
            break;
        tmp = h->items[i];
        h->items[i] = h->items[p];
        h->items[p] = tmp;
        i = p;
    }
}

static bench_ev bench_heap_pop(bench_heap *h)
{
    bench_ev top = h->items[0];
    size_t i = 0;
    h->items[0] = h->items[--h->n];
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        bench_ev tmp;
        if (l < h->n && bench_ev_less(&h->items[l], &h->items[m]))
            m = l;
        if (r < h->n && bench_ev_less(&h->items[r], &h->items[m]))
            m = r;
        if (m == i)
            break;
        tmp = h->items[i];
        h->items[i] = h->items[m];
        h->items[m] = tmp;
        i = m;
    }
    return top;
}

/* ---- building the world ---- */

static void bench_meta(bench_run *br, cu_meta *m, const char *name, const char *ns)
{
    m->api_version = "kueue.x-k8s.io/v1beta2";
    m->name = name;
    m->ns = ns;
    m->created_ms = BENCH_T0_MS;
    m->has_created = 1;
    m->file = "cueue_bench";
    m->seq = br->world.nseq++;
}

static void *bench_alloc(bench_run *br, size_t n)
{
    void *p = cu_arena_alloc(&br->world.arena, n);
    if (!p)
        bench_die("out of memory building the %s world", br->variant->name);
    return p;
}

static const char *bench_name(bench_run *br, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static const char *bench_name(bench_run *br, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    const char *s;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    s = cu_arena_strdup(&br->world.arena, tmp);
    if (!s)
        bench_die("out of memory building the %s world", br->variant->name);
    return s;
}

#define BENCH_TAS_BLOCK "cloud.provider.com/topology-block"
#define BENCH_TAS_RACK "cloud.provider.com/topology-rack"
#define BENCH_TAS_HOST "kubernetes.io/hostname"

/* TAS: the flavor rf on Topology default-topology (block, rack, host) and
 * its 640 nodes of 96 cpu, as Kueue's configs/tas. */
static void bench_build_tas(bench_run *br, cu_resource_flavor *rf)
{
    cu_world *w = &br->world;
    cu_topology *tp = bench_alloc(br, sizeof *tp);
    const char **levels = bench_alloc(br, 3 * sizeof *levels);
    cu_kv *group = bench_alloc(br, sizeof *group);
    cu_res *alloc = bench_alloc(br, 2 * sizeof *alloc);
    size_t r, h;

    levels[0] = BENCH_TAS_BLOCK;
    levels[1] = BENCH_TAS_RACK;
    levels[2] = BENCH_TAS_HOST;
    bench_meta(br, &tp->meta, "default-topology", NULL);
    tp->nlevels = 3;
    tp->levels = levels;
    *(cu_topology **)BENCH_PUSH(w->topologies) = tp;
    group->key = "tas-node-group";
    group->value = "tas";
    rf->node_labels.n = 1;
    rf->node_labels.items = group;
    rf->topology_name = "default-topology";
    alloc[0] = (cu_res){ "cpu", 96000 };
    alloc[1] = (cu_res){ "pods", 110 };
    for (r = 0; r < BENCH_TAS_RACKS; r++)
        for (h = 0; h < BENCH_TAS_HOSTS; h++) {
            cu_kube_node *n = bench_alloc(br, sizeof *n);
            cu_kv *l = bench_alloc(br, 4 * sizeof *l);
            const char *name = bench_name(br, "node-b0-r%zu-%zu", r, h);
            bench_meta(br, &n->meta, name, NULL);
            l[0] = (cu_kv){ BENCH_TAS_BLOCK, "b0" };
            l[1] = (cu_kv){ BENCH_TAS_RACK, bench_name(br, "b0-r%zu", r) };
            l[2] = (cu_kv){ BENCH_TAS_HOST, name };
            l[3] = (cu_kv){ "tas-node-group", "tas" };
            n->meta.labels.n = 4;
            n->meta.labels.items = l;
            n->allocatable.n = 2;
            n->allocatable.items = alloc;
            n->ready = 1;
            *(cu_kube_node **)BENCH_PUSH(w->nodes) = n;
        }
}

static void bench_build_world(bench_run *br)
{
    const bench_shape *s = br->shape;
    cu_world *w = &br->world;
    cu_resource_flavor *rf;
    const char **covered;
    size_t c, q, k;

    cu_world_init(w);

    rf = bench_alloc(br, sizeof *rf);
    bench_meta(br, &rf->meta, "rf", NULL);
    *(cu_resource_flavor **)BENCH_PUSH(w->flavors) = rf;

    covered = bench_alloc(br, sizeof *covered);
    covered[0] = "cpu";

    br->ncqs = (size_t)s->ncohorts * (size_t)s->cqs_per_cohort;
    br->cqs = bench_xcalloc(br->ncqs, sizeof *br->cqs);

    for (c = 0; c < (size_t)s->ncohorts; c++) {
        cu_cohort *co = bench_alloc(br, sizeof *co);
        const char *coname = bench_name(br, "cohort-%zu", c);
        bench_meta(br, &co->meta, coname, NULL);
        co->fs_weight = 1000;
        *(cu_cohort **)BENCH_PUSH(w->cohorts) = co;

        for (q = 0; q < (size_t)s->cqs_per_cohort; q++) {
            size_t ci = c * (size_t)s->cqs_per_cohort + q;
            const char *name = bench_name(br, "cq-0-%zu-%s", q, coname);
            cu_cluster_queue *cq = bench_alloc(br, sizeof *cq);
            cu_rgroup *rg = bench_alloc(br, sizeof *rg);
            cu_fquota *fq = bench_alloc(br, sizeof *fq);
            cu_rquota *rq = bench_alloc(br, sizeof *rq);
            cu_namespace *ns = bench_alloc(br, sizeof *ns);
            cu_local_queue *lq = bench_alloc(br, sizeof *lq);

            rq->name = "cpu";
            rq->nominal = BENCH_NOMINAL_MILLI;
            rq->has_blimit = 1;
            rq->blimit = BENCH_BLIMIT_MILLI;
            fq->name = "rf";
            fq->n = 1;
            fq->res = rq;
            rg->covered.n = 1;
            rg->covered.items = covered;
            rg->nflavors = 1;
            rg->flavors = fq;

            bench_meta(br, &cq->meta, name, NULL);
            cq->cohort = coname;
            cq->groups.n = 1;
            cq->groups.items = rg;
            cq->queueing = CU_BEST_EFFORT_FIFO;
            cq->ns_selector.is_null = 0; /* {}: every namespace */
            cq->fungibility.when_can_borrow = CU_FUNG_MAY_STOP_SEARCH;
            cq->fungibility.when_can_preempt = CU_FUNG_TRY_NEXT_FLAVOR;
            cq->fungibility.preference = CU_PREF_UNSET;
            /* As the generator sets them; bench_check_policies reads
             * them back from the engine after loading. */
            cq->preemption.reclaim = CU_PP_ANY;
            cq->preemption.within_cq = CU_PP_LOWER_PRIORITY;
            cq->preemption.borrow_policy = CU_PP_NEVER;
            cq->stop_policy = CU_STOP_NONE;
            cq->fs_weight = 1000;
            *(cu_cluster_queue **)BENCH_PUSH(w->cqs) = cq;

            bench_meta(br, &ns->meta, name, NULL);
            *(cu_namespace **)BENCH_PUSH(w->namespaces) = ns;

            bench_meta(br, &lq->meta, name, name);
            lq->cluster_queue = name;
            lq->stop_policy = CU_STOP_NONE;
            lq->fs_weight = 1000;
            *(cu_local_queue **)BENCH_PUSH(w->lqs) = lq;

            br->cqs[ci].name = name;
        }
    }

    for (k = 0; k < BENCH_NCLASSES; k++) {
        const bench_class *cl = &s->classes[k];
        int32_t pods = cl->pods > 0 ? cl->pods : 1;
        br->requests[k].name = "cpu";
        br->requests[k].milli = cl->cpu_milli / pods;
        for (size_t t = 0; t < BENCH_TAS_KINDS; t++) {
            cu_podset *ps = &br->podsets[k][t];
            ps->name = "main";
            ps->count = pods;
            ps->requests.n = 1;
            ps->requests.items = &br->requests[k];
            if (!br->variant->tas)
                continue;
            ps->topo.present = 1;
            ps->topo.pod_index_label = "batch.kubernetes.io/job-completion-index";
            if (t == 0) {
                ps->topo.required = BENCH_TAS_RACK;
            } else if (t == 1) {
                ps->topo.preferred = BENCH_TAS_RACK;
            } else {
                ps->topo.required = BENCH_TAS_RACK;
                ps->topo.slice_required = BENCH_TAS_RACK;
                ps->topo.has_slice_size = 1;
                ps->topo.slice_size = cl->slice > 0 ? cl->slice : 1;
            }
        }
        br->labels[k].key = "kueue.x-k8s.io/performance-scheduler-class";
        br->labels[k].value = cl->name;
    }
    if (br->variant->tas)
        bench_build_tas(br, rf);
}

/* Creates the si-th workload of class k for ClusterQueue cq, arriving at
 * t (relative ms). Returns its bench_wl index. */
static int32_t bench_new_workload(bench_run *br, size_t cq, size_t k, int si, int64_t t)
{
    cu_workload *wl = bench_alloc(br, sizeof *wl);
    bench_wl *bw;
    const char *ns = br->cqs[cq].name;

    bench_meta(br, &wl->meta, bench_name(br, "%s-%zu-%d-0", br->shape->classes[k].name, k, si), ns);
    wl->meta.created_ms = BENCH_T0_MS + t;
    wl->meta.labels.n = 1;
    wl->meta.labels.items = &br->labels[k];
    wl->queue_name = ns;
    wl->has_priority = 1;
    wl->priority = br->shape->classes[k].priority;
    wl->active = 1;
    wl->npodsets = 1;
    wl->podsets = &br->podsets[k][(size_t)si % BENCH_TAS_KINDS];

    if (br->nwls == br->capwls) {
        br->capwls = br->capwls ? 2 * br->capwls : 1024;
        br->wls = bench_xrealloc(br->wls, br->capwls * sizeof *br->wls);
    }
    bw = &br->wls[br->nwls];
    memset(bw, 0, sizeof *bw);
    bw->obj = wl;
    bw->arrival_ms = t;
    bw->admitted_ms = -1;
    bw->cur_admitted_ms = -1;
    bw->eidx = -1;
    bw->cq = (int32_t)cq;
    bw->cls = (uint8_t)k;
    bw->state = WL_PENDING;
    return (int32_t)br->nwls++;
}

/* ---- admissions ---- */

/* Remembers that engine index eidx is workload wl. */
static void bench_map_eidx(bench_run *br, int eidx, int32_t wl)
{
    if ((size_t)eidx >= br->nby_eidx) {
        size_t n = br->nby_eidx ? br->nby_eidx : 1024, i;
        while (n <= (size_t)eidx)
            n *= 2;
        br->by_eidx = bench_xrealloc(br->by_eidx, n * sizeof *br->by_eidx);
        for (i = br->nby_eidx; i < n; i++)
            br->by_eidx[i] = -1;
        br->nby_eidx = n;
    }
    if (br->by_eidx[eidx] >= 0)
        bench_die("%s: cu_engine_add_workload returned index %d twice", br->variant->name, eidx);
    br->by_eidx[eidx] = wl;
}

/* Returns the engine's view of bw (linear search; error reports only). */
static const cu_wl_info *bench_view(bench_run *br, const bench_wl *bw)
{
    size_t i, n = cu_engine_nworkloads(br->engine);
    for (i = 0; i < n; i++) {
        const cu_wl_info *wi = cu_engine_workload_info(br->engine, i);
        if (wi && wi->obj == bw->obj)
            return wi;
    }
    return NULL;
}

/* Records that the driver saw wl lose its admission by preemption at
 * relative time t (the eviction completed during this event time's
 * cycles). Its pending finish event becomes stale; the quota it held
 * since cur_admitted_ms is counted as held and wasted. */
static void bench_evicted(bench_run *br, int32_t wl, int64_t t)
{
    bench_wl *bw = &br->wls[wl];
    const bench_class *cl = &br->shape->classes[bw->cls];
    double held = (double)cl->cpu_milli / 1000.0 * (double)(t - bw->cur_admitted_ms) / 1000.0;
    br->r.held_cpu_s += held;
    br->r.wasted_cpu_s += held;
    if (bw->evictions == 0)
        br->r.evicted_wls[bw->cls]++;
    if (bw->evictions < UINT16_MAX)
        bw->evictions++;
    if (bw->evictions > br->r.max_evictions)
        br->r.max_evictions = bw->evictions;
    br->r.evictions[bw->cls]++;
    bw->state = WL_PENDING;
    bw->cur_admitted_ms = -1;
    bw->gen++;
    br->npending++;
}

/* Records that wl was admitted at relative time t and schedules its
 * finish; the runtime starts over on every admission. A workload the
 * driver still holds as admitted was preempted and admitted again within
 * this event time. */
static void bench_admitted(bench_run *br, int32_t wl, int64_t t)
{
    bench_wl *bw = &br->wls[wl];
    const bench_class *cl = &br->shape->classes[bw->cls];
    if (bw->state == WL_ADMITTED)
        bench_evicted(br, wl, t);
    bw->state = WL_ADMITTED;
    if (bw->admitted_ms < 0)
        bw->admitted_ms = t;
    bw->cur_admitted_ms = t;
    bw->gen++;
    br->npending--;
    bench_heap_push(&br->finishes, t + cl->runtime_ms, wl, bw->gen);
}

/* Finds the workloads that lost their admission during this event time's
 * cycles: every live finish event whose workload the engine no longer
 * holds as admitted. Called after bench_detect when the cycles reported
 * preemptions. Since the driver runs cycles until one makes no progress,
 * and a round releases the evictions issued by the round before it, no
 * eviction is still pending here. */
static void bench_scan_evictions(bench_run *br, int64_t t)
{
    size_t i;
    for (i = 0; i < br->finishes.n; i++) {
        const bench_ev *ev = &br->finishes.items[i];
        bench_wl *bw = &br->wls[ev->wl];
        if (ev->gen != bw->gen || bw->state != WL_ADMITTED)
            continue;
        if (!cu_engine_wl_admitted(br->engine, bw->eidx))
            bench_evicted(br, ev->wl, t);
    }
}

/* Takes the workloads the engine admitted since the last call
 * (cu_engine_take_admitted) and schedules their finishes; `expected` is
 * what the cycle stats counted. Every admission at an event step happens
 * at that step's time t. */
static void bench_detect(bench_run *br, long long expected, int64_t t)
{
    int buf[1024];
    long long found = 0;
    size_t n, i;
    int64_t ts = bench_cpu_ns();

    while ((n = cu_engine_take_admitted(br->engine, buf, sizeof buf / sizeof buf[0])) > 0) {
        br->r.ns_take += bench_cpu_ns() - ts;
        for (i = 0; i < n; i++) {
            int idx = buf[i];
            int32_t wl = idx >= 0 && (size_t)idx < br->nby_eidx ? br->by_eidx[idx] : -1;
            if (wl < 0)
                bench_die("%s: cu_engine_take_admitted returned unknown workload index %d "
                          "at t=%" PRId64 " ms",
                          br->variant->name, idx, t);
            if (br->wls[wl].state == WL_FINISHED)
                bench_die("%s: workload %s/%s (index %d) reported admitted after it finished "
                          "at t=%" PRId64 " ms",
                          br->variant->name, br->wls[wl].obj->meta.ns, br->wls[wl].obj->meta.name,
                          idx, t);
            /* Without a preemption in this event time, an admission
             * cannot have been undone since. */
            if (br->opts->check && br->step_preempted == 0 &&
                !cu_engine_wl_admitted(br->engine, idx))
                bench_die("%s: workload %s/%s (index %d) was taken as admitted but "
                          "cu_engine_wl_admitted says it is not, and no preemption was "
                          "issued at t=%" PRId64 " ms",
                          br->variant->name, br->wls[wl].obj->meta.ns, br->wls[wl].obj->meta.name,
                          idx, t);
            bench_admitted(br, wl, t);
            found++;
        }
        ts = bench_cpu_ns();
    }
    br->r.ns_take += bench_cpu_ns() - ts;
    if (found != expected)
        bench_die("%s: the cycles reported %lld admissions at t=%" PRId64
                  " ms but cu_engine_take_admitted returned %lld",
                  br->variant->name, expected, t, found);
}

/* ---- the simulation ---- */

static void bench_check(bench_run *br, const char *when)
{
    cu_diag d;
    cu_err err;
    cu_diag_init(&d);
    err = cu_engine_check_invariants(br->engine, &d);
    if (err != CU_OK || d.nerrors > 0) {
        size_t i;
        fflush(stdout);
        fprintf(stderr, "cueue_bench: error: %s: invariant check failed %s (%s):\n",
                br->variant->name, when, cu_strerror(err));
        for (i = 0; i < d.n; i++)
            fprintf(stderr, "  %s\n", d.msgs[i]);
        cu_diag_free(&d);
        exit(1);
    }
    cu_diag_free(&d);
    br->r.checks++;
}

/* Runs cycles until one makes no progress; returns the admissions and
 * leaves the preemptions issued in br->step_preempted. A step that needs
 * more than BENCH_MAX_ROUNDS_PER_STEP rounds does not settle (for
 * example a preemption storm): that is an engine failure. */
static long long bench_cycles(bench_run *br, int64_t t)
{
    long long admitted = 0, rounds = 0;
    int n;
    br->step_preempted = 0;
    for (n = 0; n < BENCH_MAX_CYCLES_PER_STEP; n++) {
        cu_cycle_stats st;
        int64_t t0, dt;
        cu_err err;
        memset(&st, 0, sizeof st);
        t0 = bench_cpu_ns();
        err = cu_engine_cycle(br->engine, &st);
        dt = bench_cpu_ns() - t0;
        br->r.ns_cycle += dt;
        *BENCH_PUSH(br->cycle_ns) = dt;
        if (st.progress)
            *BENCH_PUSH(br->busy_ns) = dt;
        if (err != CU_OK)
            bench_die("%s: cu_engine_cycle at t=%" PRId64 " ms: %s", br->variant->name, t,
                      cu_strerror(err));
        br->r.cycles++;
        br->r.rounds += st.rounds;
        br->r.heads += st.heads;
        br->r.inadmissible += st.inadmissible;
        br->r.preemptions += st.preempted;
        br->step_preempted += st.preempted;
        rounds += st.rounds;
        admitted += st.admitted;
        if (br->opts->check && br->r.cycles % br->opts->check_every == 0) {
            char when[64];
            snprintf(when, sizeof when, "after cycle %lld (t=%" PRId64 " ms)", br->r.cycles, t);
            bench_check(br, when);
        }
        if (!st.progress)
            break;
        if (rounds > BENCH_MAX_ROUNDS_PER_STEP)
            bench_die("%s: the engine does not settle at t=%" PRId64 " ms: %lld rounds in "
                      "%d cycles, %lld preemptions and %lld admissions at this event time",
                      br->variant->name, t, rounds, n + 1, br->step_preempted, admitted);
    }
    if (n == BENCH_MAX_CYCLES_PER_STEP)
        bench_die("%s: %d cycles at t=%" PRId64 " ms all reported progress", br->variant->name,
                  BENCH_MAX_CYCLES_PER_STEP, t);
    if (br->step_preempted > 0)
        br->r.preempt_steps++;
    if (br->step_preempted > br->r.max_step_preemptions)
        br->r.max_step_preemptions = br->step_preempted;
    if (rounds > br->r.max_step_rounds) {
        br->r.max_step_rounds = rounds;
        br->r.max_step_rounds_t = t;
    }
    return admitted;
}

static int bench_cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile of a sorted array. */
static int64_t bench_pct(const int64_t *v, size_t n, double p)
{
    size_t i;
    if (n == 0)
        return 0;
    i = (size_t)(p / 100.0 * (double)n + 0.999999);
    if (i < 1)
        i = 1;
    if (i > n)
        i = n;
    return v[i - 1];
}

static void bench_summarize(bench_run *br)
{
    const bench_shape *s = br->shape;
    bench_result *r = &br->r;
    double work = 0.0, nominal;
    size_t k, i;
    int64_t *waits;

    for (k = 0; k < BENCH_NCLASSES; k++) {
        const bench_class *cl = &s->classes[k];
        double per_cq =
            (double)cl->count * (double)cl->cpu_milli / 1000.0 * (double)cl->runtime_ms / 1000.0;
        double last = (double)(cl->count * cl->interval_ms + cl->runtime_ms) / 1000.0;
        work += per_cq * (double)br->ncqs;
        r->offered_cpu +=
            (double)cl->cpu_milli / 1000.0 * (double)cl->runtime_ms / (double)cl->interval_ms;
        if (last > r->arrival_bound_s)
            r->arrival_bound_s = last;
    }
    nominal = (double)br->ncqs * (double)BENCH_NOMINAL_MILLI / 1000.0;
    r->quota_bound_s = work / nominal;
    r->useful_usage_pct =
        r->makespan_ms > 0 ? 100.0 * work / (nominal * (double)r->makespan_ms / 1000.0) : 0.0;
    r->usage_pct = r->makespan_ms > 0
                       ? 100.0 * r->held_cpu_s / (nominal * (double)r->makespan_ms / 1000.0)
                       : 0.0;

    qsort(br->cycle_ns.items, br->cycle_ns.n, sizeof *br->cycle_ns.items, bench_cmp_i64);
    r->cycle_p50_us = (double)bench_pct(br->cycle_ns.items, br->cycle_ns.n, 50) / 1000.0;
    r->cycle_p99_us = (double)bench_pct(br->cycle_ns.items, br->cycle_ns.n, 99) / 1000.0;
    r->cycle_max_us =
        br->cycle_ns.n ? (double)br->cycle_ns.items[br->cycle_ns.n - 1] / 1000.0 : 0.0;
    qsort(br->busy_ns.items, br->busy_ns.n, sizeof *br->busy_ns.items, bench_cmp_i64);
    r->busy_cycles = (long long)br->busy_ns.n;
    r->busy_p50_us = (double)bench_pct(br->busy_ns.items, br->busy_ns.n, 50) / 1000.0;
    r->busy_p99_us = (double)bench_pct(br->busy_ns.items, br->busy_ns.n, 99) / 1000.0;
    r->driver_mib = ((double)br->world.arena.total + (double)br->capwls * sizeof *br->wls +
                     (double)br->nby_eidx * sizeof *br->by_eidx +
                     (double)br->finishes.cap * sizeof *br->finishes.items +
                     (double)(br->cycle_ns.cap + br->busy_ns.cap) * sizeof(int64_t)) /
                    (1024.0 * 1024.0);

    waits = bench_xcalloc(br->nwls, sizeof *waits);
    for (k = 0; k < BENCH_NCLASSES; k++) {
        size_t n = 0;
        double sum = 0.0;
        for (i = 0; i < br->nwls; i++) {
            if (br->wls[i].cls != k || br->wls[i].admitted_ms < 0)
                continue;
            waits[n] = br->wls[i].admitted_ms - br->wls[i].arrival_ms;
            sum += (double)waits[n];
            n++;
        }
        qsort(waits, n, sizeof *waits, bench_cmp_i64);
        r->wait_mean_ms[k] = n ? sum / (double)n : 0.0;
        r->wait_p50_ms[k] = (double)bench_pct(waits, n, 50);
        r->wait_p99_ms[k] = (double)bench_pct(waits, n, 99);

        /* to the admission that ran to the end: its finish - runtime */
        n = 0;
        sum = 0.0;
        for (i = 0; i < br->nwls; i++) {
            if (br->wls[i].cls != k || br->wls[i].cur_admitted_ms < 0)
                continue;
            waits[n] = br->wls[i].cur_admitted_ms - br->wls[i].arrival_ms;
            sum += (double)waits[n];
            n++;
        }
        qsort(waits, n, sizeof *waits, bench_cmp_i64);
        r->final_mean_ms[k] = n ? sum / (double)n : 0.0;
        r->final_p99_ms[k] = (double)bench_pct(waits, n, 99);
    }
    free(waits);
    r->rss_mib = bench_rss_mib();
}

/* Checks that the preemption policy the shape sets on every ClusterQueue
 * is what the engine holds (reclaimWithinCohort Any, withinClusterQueue
 * LowerPriority, borrowWithinCohort Never). */
static void bench_check_policies(bench_run *br)
{
    size_t i, n = cu_engine_ncqs(br->engine);
    for (i = 0; i < n; i++) {
        const cu_cq_info *ci = cu_engine_cq_info(br->engine, i);
        if (!ci || !ci->obj)
            bench_die("%s: no engine view for ClusterQueue %zu", br->variant->name, i);
        if (ci->obj->preemption.reclaim != CU_PP_ANY ||
            ci->obj->preemption.within_cq != CU_PP_LOWER_PRIORITY ||
            ci->obj->preemption.borrow_policy != CU_PP_NEVER)
            bench_die("%s: ClusterQueue %s: spec.preemption is not reclaimWithinCohort Any, "
                      "withinClusterQueue LowerPriority, borrowWithinCohort Never in the engine",
                      br->variant->name, ci->name);
        if (!ci->active)
            bench_die("%s: ClusterQueue %s is inactive: %s", br->variant->name, ci->name,
                      ci->message ? ci->message : "no message");
    }
}

typedef struct bench_objidx {
    const void *obj;
    int32_t wl;
} bench_objidx;

static int bench_cmp_objidx(const void *a, const void *b)
{
    const bench_objidx *x = a, *y = b;
    return (x->obj > y->obj) - (x->obj < y->obj);
}

/* At the end of the run: compares every workload's eviction count in the
 * engine's views with the driver's, counts the last preemption reason of
 * the evicted ones, and compares the evictions with the preemptions the
 * cycles reported. A disagreement is fatal with --check, a note without. */
static void bench_check_evictions(bench_run *br)
{
    static const char *const reasons[] = {
        "InClusterQueue",
        "InCohortReclamation",
        "InCohortFairSharing",
        "InCohortReclaimWhileBorrowing",
    };
    bench_objidx *map = bench_xcalloc(br->nwls, sizeof *map);
    size_t i, n = cu_engine_nworkloads(br->engine), k;
    long long total = 0, mismatches = 0;
    const char *first = NULL;
    int first_view = 0, first_driver = 0;

    for (i = 0; i < br->nwls; i++) {
        map[i].obj = br->wls[i].obj;
        map[i].wl = (int32_t)i;
    }
    qsort(map, br->nwls, sizeof *map, bench_cmp_objidx);
    for (i = 0; i < n; i++) {
        const cu_wl_info *wi = cu_engine_workload_info(br->engine, i);
        bench_objidx key, *hit;
        const bench_wl *bw;
        if (!wi)
            continue;
        key.obj = wi->obj;
        key.wl = -1;
        hit = bsearch(&key, map, br->nwls, sizeof *map, bench_cmp_objidx);
        if (!hit)
            continue;
        bw = &br->wls[hit->wl];
        if (wi->evictions != (int)bw->evictions && mismatches++ == 0) {
            first = wi->name;
            first_view = wi->evictions;
            first_driver = bw->evictions;
        }
        if (bw->evictions > 0) {
            for (k = 0; k < 4; k++)
                if (wi->preempted_reason && strcmp(wi->preempted_reason, reasons[k]) == 0)
                    break;
            br->r.reasons[k]++;
        }
    }
    free(map);
    for (k = 0; k < BENCH_NCLASSES; k++)
        total += br->r.evictions[k];
    if (mismatches > 0 || total != br->r.preemptions) {
        char msg[512];
        if (mismatches > 0)
            snprintf(msg, sizeof msg,
                     "%lld workloads have an engine eviction count that differs "
                     "from the driver's (first: %s: engine %d, driver %d)",
                     mismatches, first ? first : "?", first_view, first_driver);
        else
            snprintf(msg, sizeof msg,
                     "the cycles reported %lld preemptions but the driver saw "
                     "%lld evictions",
                     br->r.preemptions, total);
        if (br->opts->check)
            bench_die("%s: %s", br->variant->name, msg);
        fprintf(stderr, "cueue_bench: note: %s: %s\n", br->variant->name, msg);
    }
}

static void bench_simulate(bench_run *br)
{
    const bench_shape *s = br->shape;
    int next[BENCH_NCLASSES] = { 0 }; /* arrivals made per class and CQ */
    int32_t *batch;
    size_t cap_batch, k, c;
    cu_engine_opts eo;
    cu_diag d;
    cu_err err;
    int64_t t0;

    memset(&eo, 0, sizeof eo);
    eo.clock.now_ms = cu_clock_fake_now;
    eo.clock.ud = &br->now_ms;
    eo.one_head_per_cycle = br->opts->one_head_per_cycle;
    eo.fair_sharing = br->variant->fair_sharing; /* default strategies */
    br->r.fair_sharing = br->variant->fair_sharing;
    br->now_ms = BENCH_T0_MS;

    t0 = bench_cpu_ns();
    br->engine = cu_engine_new(&eo);
    if (!br->engine)
        bench_die("cu_engine_new failed");
    cu_diag_init(&d);
    err = cu_engine_load(br->engine, &br->world, &d);
    br->r.ns_load = bench_cpu_ns() - t0;
    if (err != CU_OK || d.nerrors > 0) {
        size_t i;
        fflush(stdout);
        fprintf(stderr, "cueue_bench: error: %s: cu_engine_load: %s\n", s->name, cu_strerror(err));
        for (i = 0; i < d.n; i++)
            fprintf(stderr, "  %s\n", d.msgs[i]);
        exit(1);
    }
    cu_diag_free(&d);
    if (cu_engine_ncqs(br->engine) != br->ncqs)
        bench_die("%s: the engine loaded %zu ClusterQueues, expected %zu", s->name,
                  cu_engine_ncqs(br->engine), br->ncqs);
    bench_check_policies(br);

    cap_batch = br->ncqs * BENCH_NCLASSES;
    if (cap_batch < 1024)
        cap_batch = 1024;
    batch = bench_xcalloc(cap_batch, sizeof *batch);

    for (;;) {
        int64_t t = INT64_MAX, ts;
        size_t nb = 0, i;
        long long admitted;

        for (k = 0; k < BENCH_NCLASSES; k++)
            if (next[k] < s->classes[k].count) {
                int64_t ta = (int64_t)(next[k] + 1) * s->classes[k].interval_ms;
                if (ta < t)
                    t = ta;
            }
        if (br->finishes.n > 0 && br->finishes.items[0].t < t)
            t = br->finishes.items[0].t;
        if (t == INT64_MAX)
            break;
        br->now_ms = BENCH_T0_MS + t;

        /* Arrivals: every CQ's stream of class k fires at the same times. */
        for (c = 0; c < br->ncqs; c++)
            for (k = 0; k < BENCH_NCLASSES; k++)
                if (next[k] < s->classes[k].count &&
                    (int64_t)(next[k] + 1) * s->classes[k].interval_ms == t)
                    batch[nb++] = bench_new_workload(br, c, k, next[k], t);
        for (k = 0; k < BENCH_NCLASSES; k++)
            if (next[k] < s->classes[k].count &&
                (int64_t)(next[k] + 1) * s->classes[k].interval_ms == t)
                next[k]++;
        if (nb > 0) {
            ts = bench_cpu_ns();
            for (i = 0; i < nb; i++)
                br->wls[batch[i]].eidx =
                    (int32_t)cu_engine_add_workload(br->engine, br->wls[batch[i]].obj);
            br->r.ns_add += bench_cpu_ns() - ts;
            for (i = 0; i < nb; i++) {
                bench_wl *bw = &br->wls[batch[i]];
                if (bw->eidx < 0)
                    bench_die("%s: cu_engine_add_workload(%s/%s) failed (out of memory)", s->name,
                              bw->obj->meta.ns, bw->obj->meta.name);
                bench_map_eidx(br, bw->eidx, batch[i]);
                br->npending++;
            }
        }

        /* Finishes due now. An event of an admission that was since
         * preempted is stale: the workload is pending again (or admitted
         * anew, with an event of its own) and must not be finished. */
        nb = 0;
        while (br->finishes.n > 0 && br->finishes.items[0].t <= t) {
            bench_ev ev = bench_heap_pop(&br->finishes);
            bench_wl *bw = &br->wls[ev.wl];
            if (ev.gen != bw->gen || bw->state != WL_ADMITTED) {
                br->r.stale_finishes++;
                continue;
            }
            if (!cu_engine_wl_admitted(br->engine, bw->eidx))
                bench_die("%s: %s/%s is due to finish at t=%" PRId64 " ms but the engine "
                          "no longer holds it as admitted, and the driver saw no eviction",
                          s->name, bw->obj->meta.ns, bw->obj->meta.name, t);
            if (nb == cap_batch) {
                cap_batch *= 2;
                batch = bench_xrealloc(batch, cap_batch * sizeof *batch);
            }
            batch[nb++] = ev.wl;
        }
        if (nb > 0) {
            ts = bench_cpu_ns();
            for (i = 0; i < nb; i++) {
                err = cu_engine_finish(br->engine, br->wls[batch[i]].eidx);
                if (err != CU_OK)
                    bench_die("%s: cu_engine_finish(%s/%s) at t=%" PRId64 " ms: %s", s->name,
                              br->wls[batch[i]].obj->meta.ns, br->wls[batch[i]].obj->meta.name, t,
                              cu_strerror(err));
            }
            br->r.ns_finish += bench_cpu_ns() - ts;
            for (i = 0; i < nb; i++) {
                bench_wl *bw = &br->wls[batch[i]];
                br->r.held_cpu_s += (double)s->classes[bw->cls].cpu_milli / 1000.0 *
                                    (double)(t - bw->cur_admitted_ms) / 1000.0;
                bw->state = WL_FINISHED;
            }
            br->r.makespan_ms = t;
        }

        admitted = bench_cycles(br, t);
        bench_detect(br, admitted, t);
        if (br->step_preempted > 0)
            bench_scan_evictions(br, t);
        br->r.admissions += admitted;
    }
    free(batch);

    if (br->opts->check)
        bench_check(br, "at the end of the run");
    bench_check_evictions(br);

    {
        size_t pending = 0, admitted_now = 0, i;
        for (i = 0; i < br->nwls; i++) {
            if (br->wls[i].state == WL_PENDING)
                pending++;
            if (br->wls[i].state == WL_ADMITTED)
                admitted_now++;
        }
        if (pending > 0 || admitted_now > 0) {
            for (i = 0; i < br->nwls; i++)
                if (br->wls[i].state == WL_PENDING) {
                    const cu_wl_info *wi = bench_view(br, &br->wls[i]);
                    bench_die("%s: the run ended with %zu workloads never admitted "
                              "(first: %s/%s: %s)",
                              s->name, pending, br->wls[i].obj->meta.ns, br->wls[i].obj->meta.name,
                              wi && wi->message ? wi->message : "no view or no message");
                }
            bench_die("%s: %zu workloads still hold quota at the end", s->name, admitted_now);
        }
    }
    br->r.ncqs = br->ncqs;
    br->r.nworkloads = br->nwls;
}

static void bench_free_run(bench_run *br)
{
    if (br->engine)
        cu_engine_free(br->engine);
    free(br->cqs);
    free(br->by_eidx);
    free(br->wls);
    free(br->finishes.items);
    free(br->cycle_ns.items);
    free(br->busy_ns.items);
    cu_world_free(&br->world);
}

/* ---- output ---- */

static double bench_per_s(long long n, int64_t ns)
{
    return ns > 0 ? (double)n * 1e9 / (double)ns : 0.0;
}

static const char *bench_verdict(int ok) { return ok ? "ok" : "MISSED"; }

static const char *const bench_reason_names[5] = {
    "InClusterQueue", "InCohortReclamation", "InCohortFairSharing", "InCohortReclaimWhileBorrowing",
    "other",
};

static void bench_print_text(const bench_variant *v, const bench_opts *o, const bench_result *r)
{
    const bench_shape *s = &bench_shapes[v->shape];
    int64_t eng = r->ns_add + r->ns_finish + r->ns_cycle + r->ns_take;
    double dps = bench_per_s(r->heads, eng), aps = bench_per_s(r->admissions, eng);
    double ideal = r->quota_bound_s > r->arrival_bound_s ? r->quota_bound_s : r->arrival_bound_s;
    long long evicted = 0;
    size_t k;

    for (k = 0; k < BENCH_NCLASSES; k++)
        evicted += r->evictions[k];
    printf("== %s: %zu ClusterQueues (%d cohorts x %d), %zu workloads, %s cycle, "
           "preemption reclaimWithinCohort Any / withinClusterQueue LowerPriority%s\n",
           v->name, r->ncqs, s->ncohorts, s->cqs_per_cohort, r->nworkloads,
           o->one_head_per_cycle ? "Kueue one-head-per-CQ" : "Cueue draining",
           r->fair_sharing ? ", fair sharing (default strategies)" : "");
    printf("  admissions            %lld (%zu workloads + %lld re-admissions after "
           "preemption)\n",
           r->admissions, r->nworkloads, r->admissions - (long long)r->nworkloads);
    printf("  heads considered      %lld (decisions); moved to the inadmissible set %lld times "
           "(heads and the equivalent workloads parked with them)\n",
           r->heads, r->inadmissible);
    printf("  preemptions           %lld issued (sum of cu_cycle_stats.preempted), at %lld "
           "event times; at most %lld at one event time\n",
           r->preemptions, r->preempt_steps, r->max_step_preemptions);
    printf("  evictions per class   ");
    for (k = BENCH_NCLASSES; k-- > 0;)
        printf("%s %lld (%lld workloads)%s", s->classes[k].name, r->evictions[k], r->evicted_wls[k],
               k ? ", " : "");
    printf("; most for one workload %d\n", r->max_evictions);
    if (evicted > 0) {
        printf("  last preempted reason ");
        for (k = 0; k < 5; k++)
            printf("%s %lld%s", bench_reason_names[k], r->reasons[k], k < 4 ? ", " : "\n");
    }
    printf("  cycles                %lld (Kueue-equivalent rounds %lld; at most %lld rounds "
           "at one event time, t=%.3f s)\n",
           r->cycles, r->rounds, r->max_step_rounds, (double)r->max_step_rounds_t / 1000.0);
    printf("  engine CPU            %.3f s (cycles %.3f, add %.3f, finish %.3f, take_admitted "
           "%.3f); load %.3f ms\n",
           (double)eng / 1e9, (double)r->ns_cycle / 1e9, (double)r->ns_add / 1e9,
           (double)r->ns_finish / 1e9, (double)r->ns_take / 1e9, (double)r->ns_load / 1e6);
    printf("  decisions/s           %.0f   (target >= %.0f: %s)\n", dps, s->target_dps,
           bench_verdict(dps >= s->target_dps));
    printf("  admissions/s          %.0f   (Kueue end to end, API-bound: ~42.7/s)\n", aps);
    printf("  cycle time            p50 %.1f us, p99 %.1f us, max %.1f us (all cycles)\n",
           r->cycle_p50_us, r->cycle_p99_us, r->cycle_max_us);
    printf("                        p50 %.1f us, p99 %.1f us over the %lld cycles that made "
           "progress\n",
           r->busy_p50_us, r->busy_p99_us, r->busy_cycles);
    printf("  simulated makespan    %.3f s; ideal >= %.3f s (quota bound %.3f s = cpu*s / "
           "nominal cpu; last arrival + runtime %.3f s); ratio %.2f\n",
           (double)r->makespan_ms / 1000.0, ideal, r->quota_bound_s, r->arrival_bound_s,
           ideal > 0 ? (double)r->makespan_ms / 1000.0 / ideal : 0.0);
    printf("                        offered %.1f cpu per CQ while every stream runs, against "
           "20 nominal (120 per CQ with borrowing);\n"
           "                        Kueue's harness takes ~%.0f s (admission-throughput-bound, "
           "not quota-bound)\n",
           r->offered_cpu, s->kueue_wall_s);
    printf("  ClusterQueue usage    %.1f%% of nominal, time-weighted over the makespan "
           "(Kueue published ~%.1f%%);\n"
           "                        the work alone %.1f%%; %.1f cpu*s held by admissions that "
           "were preempted\n",
           r->usage_pct, s->kueue_usage_pct, r->useful_usage_pct, r->wasted_cpu_s);
    printf("  wait to admission     first: ");
    for (k = BENCH_NCLASSES; k-- > 0;)
        printf("%s mean %.0f / p50 %.0f / p99 %.0f ms%s", s->classes[k].name, r->wait_mean_ms[k],
               r->wait_p50_ms[k], r->wait_p99_ms[k], k ? "; " : "\n");
    printf("                        last (the one that ran): ");
    for (k = BENCH_NCLASSES; k-- > 0;)
        printf("%s mean %.0f / p99 %.0f ms%s", s->classes[k].name, r->final_mean_ms[k],
               r->final_p99_ms[k], k ? "; " : "\n");
    printf("  peak RSS              %.1f MiB   (target < %.0f MiB: %s); the driver's own "
           "world, workloads and bookkeeping: %.1f MiB\n",
           r->rss_mib, BENCH_TARGET_RSS_MIB, bench_verdict(r->rss_mib < BENCH_TARGET_RSS_MIB),
           r->driver_mib);
    if (o->check)
        printf("  invariant checks      %lld passed (every %d cycles and at the end)\n", r->checks,
               o->check_every);
}

static void bench_print_json(const bench_variant *v, const bench_opts *o, const bench_result *r)
{
    const bench_shape *s = &bench_shapes[v->shape];
    int64_t eng = r->ns_add + r->ns_finish + r->ns_cycle + r->ns_take;
    double dps = bench_per_s(r->heads, eng);
    size_t k;
    printf("{\"variant\":\"%s\",\"shape\":\"%s\",\"fair_sharing\":%s,"
           "\"cluster_queues\":%zu,\"workloads\":%zu,"
           "\"one_head_per_cycle\":%s,\"admissions\":%lld,\"heads\":%lld,"
           "\"inadmissible\":%lld,\"cycles\":%lld,\"rounds\":%lld,"
           "\"max_step_rounds\":%lld,\"preemptions\":%lld,\"preempt_steps\":%lld,"
           "\"max_step_preemptions\":%lld,\"stale_finishes\":%lld,\"evictions\":{",
           v->name, s->name, r->fair_sharing ? "true" : "false", r->ncqs, r->nworkloads,
           o->one_head_per_cycle ? "true" : "false", r->admissions, r->heads, r->inadmissible,
           r->cycles, r->rounds, r->max_step_rounds, r->preemptions, r->preempt_steps,
           r->max_step_preemptions, r->stale_finishes);
    for (k = 0; k < BENCH_NCLASSES; k++)
        printf("\"%s\":%lld%s", s->classes[k].name, r->evictions[k],
               k + 1 < BENCH_NCLASSES ? "," : "");
    printf("},\"evicted_workloads\":{");
    for (k = 0; k < BENCH_NCLASSES; k++)
        printf("\"%s\":%lld%s", s->classes[k].name, r->evicted_wls[k],
               k + 1 < BENCH_NCLASSES ? "," : "");
    printf("},\"max_evictions_per_workload\":%d,\"preempted_reasons\":{", r->max_evictions);
    for (k = 0; k < 5; k++)
        printf("\"%s\":%lld%s", bench_reason_names[k], r->reasons[k], k < 4 ? "," : "");
    printf("},\"engine_cpu_s\":%.6f,\"cycle_cpu_s\":%.6f,\"add_cpu_s\":%.6f,"
           "\"finish_cpu_s\":%.6f,\"take_admitted_cpu_s\":%.6f,\"load_cpu_s\":%.6f,"
           "\"decisions_per_s\":%.0f,\"decisions_per_s_target\":%.0f,"
           "\"admissions_per_s\":%.0f,"
           "\"cycle_us\":{\"p50\":%.2f,\"p99\":%.2f,\"max\":%.2f},"
           "\"busy_cycles\":%lld,\"busy_cycle_us\":{\"p50\":%.2f,\"p99\":%.2f},"
           "\"makespan_s\":%.3f,\"quota_bound_s\":%.3f,\"arrival_bound_s\":%.3f,"
           "\"cq_usage_pct\":%.2f,\"useful_usage_pct\":%.2f,\"wasted_cpu_s\":%.1f,"
           "\"kueue_cq_usage_pct\":%.1f,"
           "\"wait_ms\":{",
           (double)eng / 1e9, (double)r->ns_cycle / 1e9, (double)r->ns_add / 1e9,
           (double)r->ns_finish / 1e9, (double)r->ns_take / 1e9, (double)r->ns_load / 1e9, dps,
           s->target_dps, bench_per_s(r->admissions, eng), r->cycle_p50_us, r->cycle_p99_us,
           r->cycle_max_us, r->busy_cycles, r->busy_p50_us, r->busy_p99_us,
           (double)r->makespan_ms / 1000.0, r->quota_bound_s, r->arrival_bound_s, r->usage_pct,
           r->useful_usage_pct, r->wasted_cpu_s, s->kueue_usage_pct);
    for (k = 0; k < BENCH_NCLASSES; k++)
        printf("\"%s\":{\"mean\":%.1f,\"p50\":%.0f,\"p99\":%.0f}%s", s->classes[k].name,
               r->wait_mean_ms[k], r->wait_p50_ms[k], r->wait_p99_ms[k],
               k + 1 < BENCH_NCLASSES ? "," : "");
    printf("},\"final_wait_ms\":{");
    for (k = 0; k < BENCH_NCLASSES; k++)
        printf("\"%s\":{\"mean\":%.1f,\"p99\":%.0f}%s", s->classes[k].name, r->final_mean_ms[k],
               r->final_p99_ms[k], k + 1 < BENCH_NCLASSES ? "," : "");
    printf("},\"peak_rss_mib\":%.2f,\"peak_rss_target_mib\":%.0f,\"driver_mib\":%.2f,"
           "\"invariant_checks\":%lld,"
           "\"targets_met\":%s}\n",
           r->rss_mib, BENCH_TARGET_RSS_MIB, r->driver_mib, r->checks,
           (dps >= s->target_dps && r->rss_mib < BENCH_TARGET_RSS_MIB) ? "true" : "false");
}

/* Runs one variant in this process and prints its figures. */
static void bench_run_variant(const bench_variant *v, const bench_opts *o)
{
    bench_run *br = bench_xcalloc(1, sizeof *br);
    br->shape = &bench_shapes[v->shape];
    br->variant = v;
    br->opts = o;
    bench_build_world(br);
    bench_simulate(br);
    bench_summarize(br);
    if (o->json)
        bench_print_json(v, o, &br->r);
    else
        bench_print_text(v, o, &br->r);
    fflush(stdout);
    bench_free_run(br);
    free(br);
}

static void bench_usage(FILE *f)
{
    fprintf(f,
            "usage: cueue_bench [--shape baseline|large|baseline-fs|large-fs|both|all|\n"
            "                            tas-quota|tas] [--tas]\n"
            "                   [--fair-sharing] [--one-head-per-cycle]\n"
            "                   [--check] [--check-every N] [--json] [--help]\n"
            "\n"
            "Drains Kueue's scheduler-performance load through the admission engine in\n"
            "simulated time, with Kueue's preemption settings (reclaimWithinCohort Any,\n"
            "withinClusterQueue LowerPriority), and prints engine throughput, preemptions,\n"
            "cycle latency, makespan, ClusterQueue usage and peak RSS.\n"
            "\n"
            "  --shape S             baseline (30 CQs, 15,000 workloads), large (1,000 CQs,\n"
            "                        50,000 workloads), baseline-fs / large-fs (the same\n"
            "                        with fair sharing), both (default: baseline and large)\n"
            "                        or all (the four). With more than one, each runs in\n"
            "                        its own child process so peak RSS is its own\n"
            "  --tas                 Topology-Aware Scheduling: Kueue's TAS config (640\n"
            "                        nodes, 15,000 workloads of 2, 4 and 8 pods asking for a\n"
            "                        rack) run as tas-quota (the same workloads on a plain\n"
            "                        flavor: quota alone) and tas (every admission placed\n"
            "                        on the nodes), to compare their decisions/s\n"
            "  --fair-sharing        run the fair-sharing variant of the chosen shapes\n"
            "                        (engine fairSharing on, default preemption strategies)\n"
            "  --one-head-per-cycle  Kueue's exact loop: one head per ClusterQueue per cycle\n"
            "  --check               run cu_engine_check_invariants every N cycles and at\n"
            "                        the end, and cross-check admissions and evictions with\n"
            "                        the engine; exit 1 on the first violation\n"
            "  --check-every N       N for --check (default %d)\n"
            "  --json                one JSON object per run, one per line\n"
            "  --help                this text\n",
            BENCH_DEFAULT_CHECK_EVERY);
}

static int bench_parse(int argc, char **argv, bench_opts *o)
{
    int i;
    memset(o, 0, sizeof *o);
    o->variants_mask = 3;
    o->check_every = BENCH_DEFAULT_CHECK_EVERY;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            bench_usage(stdout);
            exit(0);
        } else if (strcmp(a, "--one-head-per-cycle") == 0) {
            o->one_head_per_cycle = 1;
        } else if (strcmp(a, "--fair-sharing") == 0) {
            o->fair_sharing = 1;
        } else if (strcmp(a, "--tas") == 0) {
            o->variants_mask = BENCH_TAS_MASK;
        } else if (strcmp(a, "--check") == 0) {
            o->check = 1;
        } else if (strcmp(a, "--json") == 0) {
            o->json = 1;
        } else if (strcmp(a, "--shape") == 0 || strncmp(a, "--shape=", 8) == 0) {
            const char *v = a[7] == '=' ? a + 8 : (i + 1 < argc ? argv[++i] : NULL);
            size_t k;
            if (!v) {
                fprintf(stderr, "cueue_bench: --shape needs a value: baseline, large, "
                                "baseline-fs, large-fs, both, all, tas-quota or tas\n");
                return -1;
            }
            o->variants_mask = 0;
            for (k = 0; k < BENCH_NVARIANTS; k++)
                if (strcmp(v, bench_variants[k].name) == 0)
                    o->variants_mask = 1 << k;
            if (strcmp(v, "both") == 0)
                o->variants_mask = 3;
            else if (strcmp(v, "all") == 0)
                o->variants_mask = 15;
            if (o->variants_mask == 0) {
                fprintf(stderr,
                        "cueue_bench: --shape: unknown shape \"%s\" "
                        "(want baseline, large, baseline-fs, large-fs, both, all, tas-quota "
                        "or tas)\n",
                        v);
                return -1;
            }
        } else if (strcmp(a, "--check-every") == 0 || strncmp(a, "--check-every=", 14) == 0) {
            const char *v = a[13] == '=' ? a + 14 : (i + 1 < argc ? argv[++i] : NULL);
            char *end = NULL;
            long n;
            errno = 0;
            n = v ? strtol(v, &end, 10) : 0;
            if (!v || errno || end == v || *end || n < 1 || n > 1000000000L) {
                fprintf(stderr,
                        "cueue_bench: --check-every: want a whole number of cycles "
                        ">= 1, got \"%s\"\n",
                        v ? v : "");
                return -1;
            }
            o->check_every = (int)n;
            o->check = 1;
        } else {
            fprintf(stderr, "cueue_bench: unknown argument \"%s\" (see --help)\n", a);
            return -1;
        }
    }
    /* --fair-sharing moves baseline and large to their -fs variants (the
     * TAS ones run without) */
    if (o->fair_sharing)
        o->variants_mask = ((o->variants_mask | (o->variants_mask << 2)) & 12) |
                           (o->variants_mask & BENCH_TAS_MASK);
    return 0;
}

int main(int argc, char **argv)
{
    bench_opts o;
    size_t i;
    int nruns = 0, failed = 0;

    if (bench_parse(argc, argv, &o) != 0)
        return 2;
    for (i = 0; i < BENCH_NVARIANTS; i++)
        if (o.variants_mask & (1 << i))
            nruns++;

    for (i = 0; i < BENCH_NVARIANTS; i++) {
        const bench_variant *v = &bench_variants[i];
        pid_t pid;
        int status;
        if (!(o.variants_mask & (1 << i)))
            continue;
        if (nruns == 1) {
            bench_run_variant(v, &o);
            continue;
        }
        /* One child per run, so each peak RSS is that run's alone. */
        fflush(stdout);
        fflush(stderr);
        pid = fork();
        if (pid < 0) {
            fprintf(stderr,
                    "cueue_bench: fork: %s; running %s in-process (peak RSS then "
                    "covers earlier runs too)\n",
                    strerror(errno), v->name);
            bench_run_variant(v, &o);
            continue;
        }
        if (pid == 0) {
            bench_run_variant(v, &o);
            fflush(stdout);
            _exit(0);
        }
        if (waitpid(pid, &status, 0) < 0)
            bench_die("waitpid: %s", strerror(errno));
        /* A failed run does not stop the others; the exit code says it. */
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            if (WIFSIGNALED(status))
                fprintf(stderr, "cueue_bench: error: %s: killed by signal %d\n", v->name,
                        WTERMSIG(status));
            else
                fprintf(stderr, "cueue_bench: error: %s failed (exit %d)\n", v->name,
                        WIFEXITED(status) ? WEXITSTATUS(status) : -1);
            failed = 1;
        }
    }
    return failed;
}
