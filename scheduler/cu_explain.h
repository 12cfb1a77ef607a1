/*
 * cu_explain.h - "why is my workload pending": an explanation of one
 * workload's state computed from a loaded engine (after cycles ran), as
 * human text and as a document tree (JSON/YAML through cu_doc).
 *
 * The explanation covers the queue chain (LocalQueue -> ClusterQueue ->
 * cohorts), the position in the ClusterQueue, what the workload requests,
 * every flavor tried with the reason it did not fit (quota numbers per
 * resource: requested, free, borrowable, limit, missing), what preemption
 * could do, and what would unblock it. It reads the engine's state and
 * never changes what the engine will decide (the preemption search it may
 * run leaves usage as it found it).
 *
 * Both functions need no I/O and no clock other than the engine's; the
 * offline CLI and the controller render the same text.
 */
#ifndef CU_EXPLAIN_H
#define CU_EXPLAIN_H

#include "cu_doc.h"
#include "cu_engine.h"

/* Appends the explanation of workload key ("ns/name"; a name without a
 * namespace means "default/name") to out: short lines, quantities in
 * Kubernetes notation. Borrows e (not changed in any way a later cycle
 * could notice), key and out. Returns CU_OK; CU_ENOTFOUND with a message
 * in d (d may be NULL) when the engine has no such workload; CU_EINVAL for
 * a NULL or empty key; CU_ENOMEM when out hit its bound. */
cu_err cu_engine_explain(cu_engine *e, const char *key, cu_buf *out, cu_diag *d);

/* The same explanation as a document tree built in arena a (arena-owned;
 * emit with cu_node_emit_json / cu_node_emit_yaml). Keys: workload,
 * status, reason, message, queue {chain, clusterQueue, strategy, position,
 * ahead, positionInLocalQueue, blockedBy, inadmissible}, podSets [...]
 * with flavors [...] and per-resource quota numbers (quantity strings),
 * preemption {...}, unblock [...]. Same errors as cu_engine_explain. */
cu_err cu_engine_explain_doc(cu_engine *e, const char *key, cu_arena *a, cu_node **out, cu_diag *d);

#endif
