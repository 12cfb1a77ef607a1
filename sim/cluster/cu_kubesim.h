/*
 * cu_kubesim.h - the simulated part of the embedded cluster: Nodes (from
 * a file or a default GPU set), a Job controller (pods for unsuspended
 * Jobs, deleted on suspend, Job status), a default-scheduler model
 * (filter: resources by requests, nodeSelector, required node affinity,
 * taints/tolerations, scheduling gates; score: LeastAllocated or
 * MostAllocated; bind; FailedScheduling events in kube-scheduler's words)
 * and a pod lifecycle (Running after binding, Succeeded after the runtime
 * in annotation cueue.dev/simulated-runtime).
 *
 * It runs in its own thread against the store, woken by store change
 * hooks and by its timers.
 */
#ifndef CU_KUBESIM_H
#define CU_KUBESIM_H

#include "cu_store.h"

typedef struct cu_kubesim_opts {
    const char *nodes_file;   /* v1 Node YAML (multi-document), NULL = default set */
    int most_allocated;       /* score with MostAllocated instead of LeastAllocated */
    int tick_ms;              /* timer resolution (0: 100 ms) */
} cu_kubesim_opts;

typedef struct cu_kubesim cu_kubesim;

/* Creates the nodes and starts the controllers on s (borrowed). */
cu_kubesim *cu_kubesim_start(cu_store *s, const cu_kubesim_opts *o, char *err, size_t errn);
void cu_kubesim_stop(cu_kubesim *k);

/* ---- the scheduler model, also usable without the thread (tests) ---- */
/* Filters and scores nodes (json-c Node objects, borrowed) for pod (a
 * json-c Pod, borrowed) given the pods already bound (borrowed array).
 * Returns the index of the chosen node, or -1 with the FailedScheduling
 * message in msg, e.g. "0/4 nodes are available: 2 Insufficient
 * nvidia.com/gpu, 1 node(s) had untolerated taint {maintenance: }, 1
 * node(s) didn't match Pod's node affinity/selector. preemption: 0/4
 * nodes are available: 4 Preemption is not helpful for scheduling." */
int cu_sched_pick(json_object *const *nodes, size_t nnodes, json_object *const *bound,
                  size_t nbound, json_object *pod, int most_allocated, char *msg, size_t msgn);

#endif
