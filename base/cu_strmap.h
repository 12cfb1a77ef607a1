/*
 * cu_strmap.h - an open-addressing hash map from strings to int, used to
 * intern names (flavors, resources, queues) into dense indices.
 */
#ifndef CU_STRMAP_H
#define CU_STRMAP_H

#include "cu_base.h"

typedef struct cu_strmap {
    const char **keys; /* borrowed: callers keep keys alive */
    int *vals;
    size_t n, cap; /* cap is a power of two, or 0 */
} cu_strmap;

void cu_strmap_init(cu_strmap *m);
void cu_strmap_free(cu_strmap *m);
/* Returns the value for key, or -1. */
int cu_strmap_get(const cu_strmap *m, const char *key);
/* Sets key (borrowed) to val (>= 0), replacing an existing value. */
cu_err cu_strmap_put(cu_strmap *m, const char *key, int val);

#endif
