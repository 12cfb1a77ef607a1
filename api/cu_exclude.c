/*
 * cu_exclude.c - resources.excludeResourcePrefixes applied to Workloads.
 */
#include "cu_exclude.h"

#include <string.h>

void cu_world_exclude_resources(cu_world *w, const cu_config *cf)
{
    if (!w || !cf || !cf->exclude_resource_prefixes.n)
        return;
    const cu_strs *px = &cf->exclude_resource_prefixes;
    for (size_t wi = 0; wi < w->workloads.n; wi++) {
        cu_workload *wl = w->workloads.items[wi];
        for (size_t p = 0; p < wl->npodsets; p++) {
            cu_reslist *rl = &wl->podsets[p].requests;
            size_t k = 0;
            for (size_t i = 0; i < rl->n; i++) {
                int drop = 0;
                for (size_t e = 0; e < px->n && !drop; e++)
                    drop = strncmp(rl->items[i].name, px->items[e], strlen(px->items[e])) == 0;
                if (!drop)
                    rl->items[k++] = rl->items[i];
            }
            rl->n = k;
        }
    }
}
