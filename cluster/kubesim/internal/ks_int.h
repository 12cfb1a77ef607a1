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

/* ---- the incremental scheduler (cu_simsched.c) ----
 * Its state: Nodes and Pods decoded once per change, kept up to date from
 * watches on the store (watch = 1; 0: built from one list per pass, as
 * the stateless cu_kubesim_schedule does). */
typedef struct ks_sched ks_sched;
ks_sched *ks_sched_new(int watch);
void ks_sched_free(ks_sched *ss);
/* One pass: catches up with the store, then tries the pending pods that
 * are new or changed, or that did not fit before some node (or the pods
 * on it) changed, in kube-scheduler's order (priority, then creation
 * time). It stops after max_writes writes or max_us microseconds (0: no
 * limit), or when *stop (may be NULL) is set; *more (may be NULL) is then
 * 1. Returns the number of writes. */
int ks_sched_pass(ks_sched *ss, cu_store *s, int most_allocated, int64_t now_ms, int max_writes,
                  int64_t max_us, const volatile int *stop, int *more);
/* Pods bound so far, and the time its passes took. */
uint64_t ks_sched_binds(const ks_sched *ss);
int64_t ks_sched_busy_us(const ks_sched *ss);

#endif
