/*
 * cu_whconvert.c - v1beta1 <-> v1beta2 conversion of Kueue objects.
 *
 * INTERFACE STUB of branch h16-base: only apiVersion is rewritten. The
 * helper that owns this file replaces it with the full conversion.
 */
#include "cu_webhook.h"

#include <string.h>

cu_err cu_wh_convert(json_object *obj, const char *desired, json_object **out, cu_buf *msg)
{
    *out = NULL;
    if (!obj || !desired || (strcmp(desired, "kueue.x-k8s.io/v1beta1") != 0 &&
                             strcmp(desired, "kueue.x-k8s.io/v1beta2") != 0)) {
        if (msg)
            cu_buf_printf(msg, "cannot convert to %s", desired ? desired : "(none)");
        return CU_EINVAL;
    }
    json_object *copy = NULL;
    if (json_object_deep_copy(obj, &copy, NULL) != 0)
        return CU_ENOMEM;
    json_object_object_add(copy, "apiVersion", json_object_new_string(desired));
    *out = copy;
    return CU_OK;
}
