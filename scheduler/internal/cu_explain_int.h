/*
 * cu_explain_int.h - the explanation model of one workload, built by
 * cu_explain.c and rendered by cu_explain_render.c. Arena-owned (x->ar);
 * the engine is only read.
 */
#ifndef CU_EXPLAIN_INT_H
#define CU_EXPLAIN_INT_H

#include "cu_explain.h"
#include "cu_assign_int.h"

enum { XR_FITS = 0, XR_SHORT, XR_OVER_MAX, XR_NO_QUOTA };
enum { XF_FITS = 0, XF_SHORT, XF_OVER_MAX, XF_NO_QUOTA, XF_MISSING, XF_TAINT, XF_AFFINITY };

typedef struct xres { /* one resource in one flavor */
    int res, fr;
    int state;         /* XR_* */
    int64_t req, prev; /* this pod set's total; earlier pod sets' on fr */
    int64_t nominal, used, free_own, avail, borrowable, lent, potential, more;
    int has_cohort;
    int has_blimit;
    int64_t blimit;
    const char *avail_by;     /* what bounds avail, e.g. "borrowingLimit 4 of Cohort team" */
    const char *pot_by;       /* what bounds potential */
    const cu_qnode *pot_node; /* the node whose limit bounds potential */
    int pot_blimit;           /* ... by its borrowingLimit (else: tree total) */
} xres;

typedef struct xflv {
    const char *name;
    int state; /* XF_* */
    const cu_taint *taint;
    const char *mismatch; /* node affinity detail */
    size_t nres;
    xres *res;
} xflv;

typedef struct xgroup {
    int gi;
    size_t nres;
    const char **res; /* the pod set's resources in this group */
    size_t nflv;
    xflv *flv;
    int fits, would; /* first flavor fitting now / within max, -1 */
} xgroup;

typedef struct xps {
    const char *name;
    int32_t count, min;
    size_t nreq;
    const int *res;
    const int64_t *per_pod;
    cu_strlist uncovered; /* resources no group of the queue covers */
    size_t ngroups;
    xgroup *g;
} xps;

typedef struct xwl {
    cu_engine *e;
    cu_arena *ar;
    ewl *w;
    const cu_wl_info *v;
    const char *state; /* pending, admitted, evicting, finished */
    /* queue */
    const char *lq_name; /* spec.queueName, NULL when unset */
    const elq *lq;
    ecq *c; /* NULL when missing */
    const char *cq_name;
    cu_strlist chain;
    const char *cohort_cycle; /* cohort name when the queue sits on a cycle */
    int queued, inadmissible;
    int ahead, ahead_inadm, lq_ahead;
    const ewl *blocked_by; /* StrictFIFO head */
    int ns_selected;
    /* requests and flavors */
    size_t nps;
    xps *ps;
    int analyzed;
    const char *not_analyzed;
    int64_t *acc;   /* per fr: usage of the chosen flavors */
    int all_chosen; /* every group of every pod set has a flavor */
    int fits_now;   /* every group of every pod set fits now */
    /* preemption */
    int pre_configured;
    int pre_quota; /* quota (not matching) is what blocks it */
    int n_within, n_reclaim;
    /* why preemption is not tried: a contested request over the queue's
     * nominal quota (cu_assign_may_preempt); NULL otherwise */
    const char *over_nominal;
    cu_strlist victims; /* preempted for it, still holding quota */
    int searched;
    cu_strlist targets;
    /* Topology-Aware Scheduling: its last attempt failed placement of
     * pod set psname in TAS flavor flavor */
    struct {
        int on;
        const char *flavor, *psname;
        const char *numbers; /* "quota has ..., but no node has ..." */
        int fits_now;        /* it is placed now (capacity came back) */
        int never;           /* not even with every admitted TAS workload gone */
        cu_strlist blockers; /* admitted workloads whose end opens a domain */
        cu_strlist hosts;    /* the nodes it would get then */
        int64_t other_pods;  /* pods bound there that Kueue did not place */
    } topo;
    /* unblock */
    cu_strlist unblock;
} xwl;

/* Helpers of the model (cu_explain.c) the renderers use. Strings are
 * arena-owned (x->ar) or static. */
/* The name of resource id res; a quantity of res as text ("1500m"). */
const char *cu_x_rname(const xwl *x, int res);
const char *cu_x_qs(xwl *x, int res, int64_t v);
/* Kueue's spelling of a preemption policy / a stop policy. */
const char *cu_x_policy_name(cu_ppolicy p);
const char *cu_x_stop_name(cu_stop s);
/* Builds the model of workload key ("ns/name" or "name") into x, allocating
 * in ar; CU_EINVAL (no key) or CU_ENOTFOUND are also told in d (may be NULL). */
cu_err cu_x_setup(cu_engine *e, const char *key, cu_arena *ar, xwl *x, cu_diag *d);
int64_t cu_x_max64(int64_t a, int64_t b);

#endif
