/*
 * cu_patch.h - Kubernetes patch types over json-c trees: JSON merge patch
 * (RFC 7386), JSON patch (RFC 6902), strategic merge patch (merge keys of
 * the lists Kubernetes marks, e.g. containers by name, patch directives
 * $patch/$retainKeys/$setElementOrder/$deleteFromPrimitiveList) and a
 * server-side apply good enough for `kubectl apply --server-side` and a
 * controller's status apply (field ownership lives in cu_fields.c).
 *
 * All functions borrow their inputs and return a NEW object (caller puts)
 * or NULL with a message in err (size errn).
 */
#ifndef CU_PATCH_H
#define CU_PATCH_H

#include <json-c/json.h>
#include <stddef.h>

#include "cu_fields.h"
#include "cu_json.h"

json_object *cu_merge_patch(json_object *target, json_object *patch, char *err, size_t errn);
json_object *cu_json_patch(json_object *target, json_object *ops, char *err, size_t errn);
/* kind/api_version select the merge keys (e.g. "Pod"/"v1", "Job"/"batch/v1",
 * "Deployment"...); unknown kinds fall back to merge-patch semantics for
 * lists (replace). */
json_object *cu_strategic_merge_patch(json_object *target, json_object *patch,
                                      const char *api_version, const char *kind, char *err,
                                      size_t errn);
/* Server-side apply: target may be NULL (create). The applied
 * configuration is merged into target like a strategic merge patch,
 * except that apply never deletes fields it does not mention. */
json_object *cu_apply_patch(json_object *target, json_object *applied, const char *api_version,
                            const char *kind, char *err, size_t errn);

/* The list-type oracle of a built-in kind for field management
 * (cu_fields.h): lists with a patchMergeKey are maps keyed by it, merge
 * lists without one are sets, every other list is atomic. Unknown kinds
 * get an oracle that knows nothing (all lists atomic). */
void cu_patch_field_oracle(const char *api_version, const char *kind, cu_field_oracle *out);

/* cu_json_equal (deep JSON equality) is in base/cu_json.h. */

#endif
