/*
 * cu_exclude.h - a Workload's effective requests under Kueue's
 * Configuration `resources`: excludeResourcePrefixes, then transformations.
 * The one home of both, for `cueue controller`, `simulate` and the
 * commands that model the controller (explain, queue).
 */
#ifndef CU_EXCLUDE_H
#define CU_EXCLUDE_H

#include "cu_objects.h"

/* Rewrites, in place, the per-pod requests of every pod set of every
 * Workload of w as Kueue's workload.Info computes them:
 *   1. requests of resources whose name starts with one of
 *      excludeResourcePrefixes are dropped (the others keep their order);
 *   2. each request whose resource is a transformation's input adds, for
 *      each output, output * units, where units is the input's quantity
 *      rounded up to a whole number (times the whole units of multiplyBy
 *      when that is set and requested: the input itself is then retained
 *      multiplied, as Kueue does). Outputs of several inputs add up
 *      exactly and are then rounded up to the output's unit (milli for
 *      cpu, whole units for the rest: cu_qty_res_scale); a resource also
 *      requested as is adds its request. Replace drops the input, Retain
 *      keeps it. Outputs
 *      are not excluded again. A product past int64 saturates (never
 *      fits a finite quota). The result is sorted by name without zeros,
 *      as cu_pod_requests makes every requests list.
 * A pod set that a transformation changed gets ps->from and ps->pre_xform
 * (cu_objects.h) for `explain`. Allocates in w->arena. A NULL w or cf, or
 * neither feature configured: nothing. CU_ENOMEM leaves w partly rewritten
 * (the caller drops it). Borrows cf. */
cu_err cu_world_effective_requests(cu_world *w, const cu_config *cf);

#endif
