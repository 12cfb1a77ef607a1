/*
 * cu_exclude.h - resources.excludeResourcePrefixes of Kueue's
 * Configuration: requests of those resources are not counted, by
 * `cueue controller` and by the commands that model it (explain, queue).
 */
#ifndef CU_EXCLUDE_H
#define CU_EXCLUDE_H

#include "cu_objects.h"

/* Drops from the pod sets' requests of every Workload of w the resources
 * whose name starts with one of cf's excludeResourcePrefixes, in place
 * (the others keep their order). A NULL w or cf, or no prefixes: nothing.
 * Borrows both. */
void cu_world_exclude_resources(cu_world *w, const cu_config *cf);

#endif
