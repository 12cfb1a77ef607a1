/*
 * cu_strmap.c - linear probing, FNV-1a hashing, load factor <= 1/2.
 */
#include "cu_strmap.h"
#include "cu_hash.h"

#include <stdlib.h>
#include <string.h>

void cu_strmap_init(cu_strmap *m) { memset(m, 0, sizeof(*m)); }

void cu_strmap_free(cu_strmap *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof(*m));
}

int cu_strmap_get(const cu_strmap *m, const char *key)
{
    if (!m->cap)
        return -1;
    size_t mask = m->cap - 1;
    for (size_t i = cu_hash_str(key) & mask;; i = (i + 1) & mask) {
        if (!m->keys[i])
            return -1;
        if (strcmp(m->keys[i], key) == 0)
            return m->vals[i];
    }
}

static cu_err grow(cu_strmap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 16;
    const char **keys = calloc(cap, sizeof(*keys));
    int *vals = calloc(cap, sizeof(*vals));
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return CU_ENOMEM;
    }
    for (size_t j = 0; j < m->cap; j++) {
        if (!m->keys[j])
            continue;
        size_t i = cu_hash_str(m->keys[j]) & (cap - 1);
        while (keys[i])
            i = (i + 1) & (cap - 1);
        keys[i] = m->keys[j];
        vals[i] = m->vals[j];
    }
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
    return CU_OK;
}

cu_err cu_strmap_put(cu_strmap *m, const char *key, int val)
{
    if ((m->n + 1) * 2 > m->cap) {
        cu_err err = grow(m);
        if (err)
            return err;
    }
    size_t mask = m->cap - 1;
    size_t i = cu_hash_str(key) & mask;
    while (m->keys[i]) {
        if (strcmp(m->keys[i], key) == 0) {
            m->vals[i] = val;
            return CU_OK;
        }
        i = (i + 1) & mask;
    }
    m->keys[i] = key;
    m->vals[i] = val;
    m->n++;
    return CU_OK;
}
