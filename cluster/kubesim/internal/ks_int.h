/*
 * ks_int.h - what the parts of the simulated cluster share: json-c
 * helpers, the resource types of the store, writes, conditions and
 * finalizers (cu_ksutil.c). Private to cluster/kubesim/ and its tests.
 *
 * The parts: cu_kubesim.c (the thread), cu_simsched.c (the scheduler
 * model and pass), cu_simnodes.c (Nodes), cu_jobctl.c (the Job
 * controller), cu_kubelet.c (the kubelet model).
 */
#ifndef KS_INT_H
#define KS_INT_H

#include "cu_json.h"
#include "cu_kubesim.h"
#include "cu_quantity.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KS_TRACKING_FINALIZER "batch.kubernetes.io/job-tracking"
#define KS_RUNTIME_ANNOTATION "cueue.dev/simulated-runtime"
#define KS_NZ_CPU_MILLI 100LL                        /* 100m */
#define KS_NZ_MEM_MILLI (200LL * 1024 * 1024 * 1000) /* 200Mi */
#define KS_EVENT_REPEAT_MS 10000 /* an identical event is bumped at most this often */
#define KS_MSG_MAX 1024          /* kube-scheduler truncates event messages to 1024 */

/* json-c accessors: cu_json.h (cu_jget, cu_jstr, cu_jpath...); and: */

/* a[i] of an array whose length was checked (cu_jarr_len). */
static inline json_object *jidx(json_object *a, size_t i)
{
    return json_object_array_get_idx(a, i);
}

static inline int str_eq(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }

static inline void fmt_time(int64_t ms, char out[32]) { cu_time_format(ms, out, 32); }

typedef struct ks_types {
    const cu_rtype *pods, *nodes, *events, *jobs, *pcs;
} ks_types;

/* A quantity given as a JSON string or number; 0 on success. */
int ks_qty_json(json_object *v, int64_t *milli);
/* Whether the pod is in phase Succeeded or Failed. */
int ks_phase_terminal(json_object *pod);
/* metadata.namespace, .name, .uid (borrowed from o), or NULL. */
const char *ks_ns_of(json_object *o);
const char *ks_name_of(json_object *o);
const char *ks_uid_of(json_object *o);
/* The resource types the simulator uses; -1 when the store lacks one
 * (priorityclasses may be NULL). */
int ks_types_get(cu_store *s, ks_types *t);
/* LIST (all namespaces when ns is NULL); a new reference or NULL. */
json_object *ks_list(cu_store *s, const cu_rtype *rt, const char *ns, const char *lsel);
/* PUT of obj (taken) to the main resource or "status"; 1 when written. */
int ks_put(cu_store *s, const cu_rtype *rt, json_object *obj, const char *sub, json_object **out);
/* Sets a condition of status.conditions. job: Job-style condition (with
 * lastProbeTime; a change of reason alone is not a change, as
 * ensureJobConditionStatus). Returns 1 when something changed. */
int ks_cond_set(json_object *status, const char *type, const char *cstatus, const char *reason,
                const char *message, const char *now, int job);
json_object *ks_cond_get(json_object *obj, const char *type);
int ks_cond_true(json_object *obj, const char *type);
int ks_has_finalizer(json_object *obj, const char *f);
/* Removes the Job tracking finalizer from pod (borrowed). 1 when written. */
int ks_pod_drop_finalizer(cu_store *s, const cu_rtype *pods, json_object *pod);
/* Drops the tracking finalizer and deletes pod; the number of writes. */
int ks_pod_delete(cu_store *s, const cu_rtype *pods, json_object *pod);
/* The QoS class of a pod spec (static string). */
const char *ks_pod_qos(json_object *spec);

/* ================= the simulation's state (cu_simsched.c) =================
 * Nodes, Pods and Jobs decoded once per change, kept up to date from
 * watches on the store (ks_state_new(1); the thread keeps one) or built
 * from one list (ks_state_new(0): what the stateless passes of
 * cu_kubesim.h do on each call). Each controller's pass looks only at
 * what changed: the scheduler at pending pods that are new or did not fit
 * before some node (or the pods on it) changed, the Job controller at the
 * Jobs that changed or whose pods changed, the kubelet at decoded pod
 * fields (no JSON) and fetches the pods it acts on. */

#include "cu_strmap.h"
#include "cu_podreq.h"
#include "cu_match.h"

typedef struct ks_prio { /* the usage of a node's pods of one priority */
    int64_t prio, npods;
    cu_restab used;
} ks_prio;

typedef struct ks_node {
    char *name;       /* owned; also the key of world.node_ix */
    json_object *obj; /* owned; taints, labels and alloc borrow from it */
    cu_arena ar;
    cu_taint *taints;
    size_t ntaints;
    cu_kvs labels;
    int unschedulable, live;
    cu_restab alloc; /* allocatable (or capacity) by resource */
    int64_t alloc_pods, alloc_cpu, alloc_mem;
    /* what is bound to it: the non-terminal pods (names interned) */
    cu_restab used;
    int64_t npods, nz_cpu, nz_mem;
    ks_prio *prios;
    size_t nprios;
    uint64_t epoch; /* world.epoch when it or its pods last changed */
} ks_node;

typedef struct ks_pod {
    char *ns, *name, *uid, *node, *ctime; /* owned; node: spec.nodeName */
    int inuse, counted, pending, never_preempt;
    int active; /* bound and not terminal: counts on its node */
    /* for the kubelet and the Job controller */
    int terminal, running, waiting, deleting, has_fin, has_ctrl, has_rt; /* waiting: phase
                                                                         Pending or none */
    int64_t rt_ms, start_ms; /* simulated runtime; status.startTime (-1: none) */
    int job, sib;            /* the owner Job's entry and the next pod of it (-1) */
    int64_t prio;
    cu_restab req; /* effective requests (names interned) */
    int64_t nz_cpu, nz_mem;
    /* pending pods only: the object (tols and sel borrow from it) */
    json_object *obj;
    cu_arena ar;
    cu_toleration *tols;
    size_t ntols;
    cu_nodesel sel;
    char *bad;        /* a malformed quantity: the message naming it */
    uint64_t cls;     /* pods of one class fit the same nodes (0: unique) */
    uint64_t tried;   /* world.epoch at its last attempt (0: never) */
    uint64_t ev_hash; /* the FailedScheduling event last recorded */
    int64_t ev_at;
    int next; /* hash chain */
} ks_pod;

typedef struct ks_job {
    char *uid, *ns, *name; /* uid "": the pods with no controller at all */
    int exists, deleting, dirty;
    int64_t due; /* when its activeDeadlineSeconds runs out (INT64_MAX) */
    int first;   /* its first pod (-1) */
    int next;    /* hash chain */
} ks_job;

typedef struct ks_world {
    ks_node *nodes;
    size_t nnodes, capnodes, nlive;
    cu_strmap node_ix; /* name -> index in nodes */
    ks_pod *pods;
    size_t npods, cappods;
    int *buckets; /* pod hash: ns/name -> first index */
    size_t nbuckets;
    int freelist;
    ks_job *jobs;
    size_t njobs, capjobs;
    int *jbuckets; /* job hash: uid -> first index */
    size_t njbuckets;
    int *dirty; /* the jobs to sync */
    size_t ndirty, capdirty;
    cu_strmap names; /* interned resource names */
    char **owned;
    size_t nowned, capowned;
    uint64_t epoch; /* bumped by every change a pending pod may care about */
} ks_world;

typedef struct ks_state {
    ks_world w;
    int watch, synced;
    cu_watch *wp, *wn, *wj;
    json_tokener *tok;
    struct cu_store *s;
    ks_pod **cand; /* the scheduler pass's candidates */
    size_t capcand;
    uint64_t binds, passes, relists;
    int64_t busy_us;
    const volatile int *stop; /* (may be NULL) set: syncs give up at once */
} ks_state;

ks_state *ks_state_new(int watch);
void ks_state_free(ks_state *st);
/* Catches up with the store (relists when a watch ended). -1 on failure. */
int ks_state_sync(ks_state *st, cu_store *s);

/* The passes. Each stops after max_writes writes or max_us microseconds
 * (0: no limit), or when *stop (may be NULL) is set, with *more (may be
 * NULL) set to 1: the rest waits for the next pass. Each returns its
 * number of writes. next_due_ms (may be NULL) is lowered to the time of
 * the next timed transition. */
/* Scheduler: tries the pending pods that are new or changed, or that did
 * not fit before some node (or the pods on it) changed, in
 * kube-scheduler's order (priority, then creation time). */
int ks_sched_pass(ks_state *st, cu_store *s, int most_allocated, int64_t now_ms, int max_writes,
                  int64_t max_us, const volatile int *stop, int *more);
/* Job controller: syncs the Jobs that changed, whose pods changed or
 * whose deadline is due, and lets orphan pods go. */
int ks_jobctl_pass(ks_state *st, cu_store *s, int64_t now_ms, int64_t *next_due_ms, int max_writes,
                   const volatile int *stop, int *more);
/* Kubelet. */
int ks_kubelet_pass(ks_state *st, cu_store *s, int64_t now_ms, int64_t *next_due_ms, int max_writes,
                    const volatile int *stop, int *more);
/* One Job's sync (cu_jobctl.c) and one pod's kubelet step (cu_kubelet.c)
 * on objects the caller fetched. */
typedef struct ks_podref {
    const char *uid;
    json_object *pod;
} ks_podref;
int ks_sync_job(cu_store *s, const ks_types *t, json_object *job, ks_podref *pods, size_t np,
                int64_t now, int64_t *next_due);
int ks_kubelet_pod(cu_store *s, const ks_types *t, json_object *p, json_object *node,
                   int64_t now_ms, const char *ts, int64_t *next_due_ms);
/* The simulated runtime of pod in ms: its annotation, or else the longest
 * plain `sleep N` of its containers when each runs one; -1 when the
 * annotation is malformed or it has neither (it runs until deleted). */
int64_t ks_pod_runtime(json_object *pod);
/* The uid of pod's controller Job (NULL), and whether any ownerReference
 * of pod is marked controller. */
const char *ks_job_owner_uid(json_object *pod);
int ks_has_controller(json_object *pod);
/* Pods bound so far, and the time the scheduler's passes took. */
uint64_t ks_sched_binds(const ks_state *st);
int64_t ks_sched_busy_us(const ks_state *st);
/* How often a watch ended (fell behind the history) and the state was
 * listed again. */
uint64_t ks_state_relists(const ks_state *st);

#endif
