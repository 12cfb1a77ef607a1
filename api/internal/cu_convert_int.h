/*
 * cu_convert_int.h - the one set of kueue.x-k8s.io v1beta1 <-> v1beta2
 * conversion rules (api/cu_convert.c), applied to either of the two trees
 * Cueue holds objects in: cu_node documents (`cueue convert`, `simulate`:
 * api/cu_convert.c) and json-c objects (the conversion webhook:
 * api/cu_whconvert.c). A tree is reached only through the operations of
 * cu_ctree, so the rules are written once.
 */
#ifndef CU_CONVERT_INT_H
#define CU_CONVERT_INT_H

#include <stddef.h>
#include <stdint.h>

#include "cu_base.h"
#include "cu_doc.h"
#include "cu_json.h"

typedef enum cu_ct_type {
    CU_CT_NONE = 0, /* absent */
    CU_CT_NULL,     /* an explicit null */
    CU_CT_MAP,
    CU_CT_SEQ,
    CU_CT_STR, /* a string (cu_node: any non-null scalar) */
    CU_CT_OTHER
} cu_ct_type;

/* The operations the rules use on a tree; nodes are opaque pointers. */
typedef struct cu_ctree {
    void *ud;
    cu_ct_type (*type)(void *ud, void *n);
    void *(*get)(void *ud, void *map, const char *key); /* NULL: absent */
    const char *(*str)(void *ud, void *n);              /* NULL unless CU_CT_STR */
    int (*num)(void *ud, void *n, int64_t *out);        /* 0: an integer */
    size_t (*len)(void *ud, void *seq);
    void *(*at)(void *ud, void *seq, size_t i);
    void (*del)(void *ud, void *map, const char *key);
    /* Removes map[key] and hands it to the caller (set, push or drop it);
     * NULL when absent or null. */
    void *(*take)(void *ud, void *map, const char *key);
    /* Renames key from to to in place, keeping its position; to is absent. */
    int (*rename)(void *ud, void *map, const char *from, const char *to); /* 0: done */
    void *(*new_map)(void *ud);                                           /* NULL: out of memory */
    void *(*new_seq)(void *ud);
    void *(*new_str)(void *ud, const char *s);
    void *(*new_int)(void *ud, int64_t v);
    /* Sets map[key] = v (replacing in place, else appending); takes v. */
    int (*set)(void *ud, void *map, const char *key, void *v); /* 0: done */
    int (*push)(void *ud, void *seq, void *v);                 /* takes v; 0: done */
    void (*drop)(void *ud, void *n); /* frees a new node never set or pushed */
} cu_ctree;

/* Converts obj (a map whose kind is kind) of kueue.x-k8s.io to v1beta2
 * (down 0) or v1beta1 (down 1), in place, apiVersion included. manifest 1:
 * the rules of `cueue convert` (v1beta1 manifests to v1beta2 only, with
 * its leniencies: a Cohort's pre-v1beta1 spec.parent, and a
 * priorityClassName without a known priorityClassSource read as a
 * PriorityClass; a field of the wrong type is left for the decoder);
 * manifest 0: Kueue v0.17.0's conversion webhook, both ways. Returns CU_OK,
 * CU_EINVAL with "FIELD: problem" in err (may be NULL; the object may then
 * be partly converted), or CU_ENOMEM. */
cu_err cu_conv_object(const cu_ctree *t, void *obj, const char *kind, int down, int manifest,
                      cu_buf *err);

/* The topology assignment ta (status.admission.podSetAssignments[]
 * .topologyAssignment) alone: v1beta1 domains to v1beta2 slices (down 0)
 * or slices to domains (down 1), by the rules of cu_conv_object; a map
 * without the source field is left alone. Errors as cu_conv_object. */
cu_err cu_conv_topology(const cu_ctree *t, void *ta, int down, cu_buf *err);
/* cu_conv_topology on a cu_node map (new nodes from a). */
cu_err cu_conv_topology_node(cu_arena *a, cu_node *ta, int down, cu_buf *err);
/* cu_conv_topology on a json-c object (api/cu_whconvert.c). */
cu_err cu_conv_topology_json(json_object *ta, int down, cu_buf *err);

#endif
