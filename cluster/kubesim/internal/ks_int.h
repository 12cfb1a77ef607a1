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

#include "cu_kubesim.h"
#include "cu_quantity.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KS_TRACKING_FINALIZER "batch.kubernetes.io/job-tracking"
#define KS_RUNTIME_ANNOTATION "cueue.dev/simulated-runtime"
#define KS_NZ_CPU_MILLI 100LL                             /* 100m */
#define KS_NZ_MEM_MILLI (200LL * 1024 * 1024 * 1000)      /* 200Mi */
#define KS_EVENT_REPEAT_MS 10000    /* an identical event is bumped at most this often */
#define KS_MSG_MAX 1024             /* kube-scheduler truncates event messages to 1024 */

/* ================= json helpers ================= */

static inline json_object *jget(json_object *o, const char *k)
{
    json_object *v = NULL;
    if (!o || !json_object_is_type(o, json_type_object))
        return NULL;
    return json_object_object_get_ex(o, k, &v) ? v : NULL;
}

/* Follows a dotted path of keys (keys themselves must not hold dots). */
static inline json_object *jpath(json_object *o, const char *dotted)
{
    char key[128];
    const char *p = dotted;
    while (o && *p) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        if (n >= sizeof key)
            return NULL;
        memcpy(key, p, n);
        key[n] = '\0';
        o = jget(o, key);
        p = dot ? dot + 1 : p + n;
    }
    return o;
}

static inline const char *jstr(json_object *o)
{
    return o && json_object_is_type(o, json_type_string) ? json_object_get_string(o) : NULL;
}

static inline const char *jpstr(json_object *o, const char *dotted) { return jstr(jpath(o, dotted)); }

static inline int64_t jint(json_object *o, int64_t def)
{
    if (o && json_object_is_type(o, json_type_int))
        return json_object_get_int64(o);
    if (o && json_object_is_type(o, json_type_double))
        return (int64_t)json_object_get_double(o);
    return def;
}

static inline int jtrue(json_object *o)
{
    return o && json_object_is_type(o, json_type_boolean) && json_object_get_boolean(o);
}

static inline size_t jlen(json_object *a)
{
    return a && json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
}

static inline json_object *jidx(json_object *a, size_t i) { return json_object_array_get_idx(a, i); }

/* Returns o[k] as an object, creating (or replacing a non-object) when needed. */
static inline json_object *jchild(json_object *o, const char *k)
{
    json_object *v = jget(o, k);
    if (v && json_object_is_type(v, json_type_object))
        return v;
    v = json_object_new_object();
    json_object_object_add(o, k, v);
    return v;
}

/* A deep copy (new reference), or NULL. */
static inline json_object *jcopy(json_object *o)
{
    json_object *d = NULL;
    if (!o)
        return NULL;
    if (json_object_deep_copy(o, &d, NULL) != 0)
        return NULL;
    return d;
}

static inline void jset_str(json_object *o, const char *k, const char *v)
{
    json_object_object_add(o, k, json_object_new_string(v));
}

static inline void jset_int(json_object *o, const char *k, int64_t v)
{
    json_object_object_add(o, k, json_object_new_int64(v));
}

static inline int str_eq(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }

static inline void fmt_time(int64_t ms, char out[32]) { cu_time_format(ms, out, 32); }

typedef struct ks_types {
    const cu_rtype *pods, *nodes, *events, *jobs, *pcs;
} ks_types;

/* A quantity given as a JSON string or number; 0 on success. */
int ks_qty_json(json_object *v, int64_t *milli);
/* FNV-1a of s (NULL: empty) continuing h (0: start), then a separator. */
uint64_t ks_fnv1a(uint64_t h, const char *s);
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
int ks_put(cu_store *s, const cu_rtype *rt, json_object *obj, const char *sub,
           json_object **out);
/* Sets a condition of status.conditions. job: Job-style condition (with
 * lastProbeTime; a change of reason alone is not a change, as
 * ensureJobConditionStatus). Returns 1 when something changed. */
int ks_cond_set(json_object *status, const char *type, const char *cstatus,
                const char *reason, const char *message, const char *now, int job);
json_object *ks_cond_get(json_object *obj, const char *type);
int ks_cond_true(json_object *obj, const char *type);
int ks_has_finalizer(json_object *obj, const char *f);
/* Removes the Job tracking finalizer from pod (borrowed). 1 when written. */
int ks_pod_drop_finalizer(cu_store *s, const cu_rtype *pods, json_object *pod);
/* Drops the tracking finalizer and deletes pod; the number of writes. */
int ks_pod_delete(cu_store *s, const cu_rtype *pods, json_object *pod);
/* The QoS class of a pod spec (static string). */
const char *ks_pod_qos(json_object *spec);

#endif
