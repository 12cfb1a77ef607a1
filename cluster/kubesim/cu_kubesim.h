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
 * It runs in its own thread against the store: every tick_ms it runs a
 * pass when the store's resourceVersion moved or a timed transition
 * (a simulated runtime, a Job deadline) is due. The thread keeps Nodes,
 * Pods and Jobs decoded from watches and each controller looks only at
 * what changed, in bounded passes (internal/ks_int.h, ks_state); the
 * one-pass functions below build that state from a list on each call.
 */
#ifndef CU_KUBESIM_H
#define CU_KUBESIM_H

#include "cu_store.h"

typedef struct cu_kubesim_opts {
    const char *nodes_file; /* v1 Node YAML (multi-document), NULL = default set */
    int most_allocated;     /* score with MostAllocated instead of LeastAllocated */
    int tick_ms;            /* timer resolution (0: 100 ms) */
    const cu_clock *clock;  /* wall time for timestamps and runtimes (borrowed;
                                 NULL: the system clock) */
} cu_kubesim_opts;

typedef struct cu_kubesim cu_kubesim;

/* Creates the nodes and starts the controllers on s (borrowed; must
 * outlive the simulator). o is copied. Returns NULL with a message in err
 * (e.g. a bad nodes file). Caller stops with cu_kubesim_stop. */
cu_kubesim *cu_kubesim_start(cu_store *s, const cu_kubesim_opts *o, char *err, size_t errn);
/* Stops the thread (waits for the pass in progress) and frees k. */
void cu_kubesim_stop(cu_kubesim *k);

/* ---- the scheduler model, also usable without the thread (tests) ---- */
/* Filters and scores nodes (json-c Node objects, borrowed) for pod (a
 * json-c Pod, borrowed) given the pods already bound (borrowed array).
 * Returns the index of the chosen node, or -1 with the FailedScheduling
 * message in msg, in kube-scheduler's words and order (the "<count>
 * <reason>" strings sorted as strings, as FitError.Error() does), e.g.
 * "0/4 nodes are available: 1 node(s) didn't match Pod's node
 * affinity/selector, 1 node(s) had untolerated taint {maintenance: }, 2
 * Insufficient nvidia.com/gpu. preemption: 0/4 nodes are available: 2 No
 * preemption victims found for incoming pod, 2 Preemption is not helpful
 * for scheduling." */
int cu_sched_pick(json_object *const *nodes, size_t nnodes, json_object *const *bound,
                  size_t nbound, json_object *pod, int most_allocated, char *msg, size_t msgn);
/* Notes on cu_sched_pick: scheduling gates are not looked at (the caller
 * does not offer gated pods at all, as kube-scheduler keeps them out of
 * its active queue); bound pods in phase Succeeded or Failed, or bound to
 * other nodes, are ignored; spec.priority (default 0) decides which bound
 * pods could be preemption victims for the "preemption:" part of the
 * message, but the model never preempts. With no nodes the message is
 * "no nodes available to schedule pods". A pod with a malformed quantity
 * gets -1 and a message naming the field. */

/* ---- the controllers, one pass each: what the thread runs, callable
 * directly on a store (tests). now_ms: wall time. Each returns the number
 * of store writes it made (0: nothing to do). next_due_ms (may be NULL) is
 * lowered to the time the next timed transition is due (a simulated
 * runtime ending, a Job's activeDeadlineSeconds). ---- */
/* Creates the Nodes of nodes_file (v1 Node YAML, multi-document; NULL: the
 * default GPU set) that do not exist yet. Bad input: CU_EINVAL with a
 * message naming the file, document, field and problem in err. */
cu_err cu_kubesim_add_nodes(cu_store *s, const char *nodes_file, int64_t now_ms, char *err,
                            size_t errn);
/* Job controller: pods for unsuspended Jobs, deletion on suspend, status. */
int cu_kubesim_sync_jobs(cu_store *s, int64_t now_ms, int64_t *next_due_ms);
/* Scheduler: binds pending pods or records FailedScheduling. */
int cu_kubesim_schedule(cu_store *s, int most_allocated, int64_t now_ms);
/* Kubelet: Running after binding, Succeeded after the simulated runtime,
 * Failed when deleted. */
int cu_kubesim_kubelet(cu_store *s, int64_t now_ms, int64_t *next_due_ms);
/* Runs the three passes until none writes (at most 16 rounds). */
int cu_kubesim_step(cu_store *s, int most_allocated, int64_t now_ms, int64_t *next_due_ms);
/* Parses a Go duration ("30s", "1m30s", "500ms", "1.5h", "0") into
 * milliseconds (rounded down). Negative or malformed: CU_EINVAL. */
cu_err cu_kubesim_parse_duration(const char *s, int64_t *ms);

#endif
