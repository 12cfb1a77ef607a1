/*
 * cu_names.h - Kubernetes' syntax of label keys (qualified names) and label
 * values, with kube-apiserver's messages. Used by the cluster's ObjectMeta
 * checks (sim/cluster/cu_objmeta.c); api/cu_validate.c still has its own
 * static copies of these predicates for Kueue's validation.
 */
#ifndef CU_NAMES_H
#define CU_NAMES_H

#include <stddef.h>

/* A label key or other qualified name of len bytes (a NUL inside is
 * invalid): NULL when valid, else kube-apiserver's detail, e.g. "name part
 * must be no more than 63 characters". Static strings. */
const char *cu_label_key_problem(const char *key, size_t len);
/* A label value (may be empty): NULL or the detail. */
const char *cu_label_value_problem(const char *val, size_t len);

#endif
