/*
 * cu_whreview.h - the wire side of the webhooks (no I/O): an
 * AdmissionReview (admission.k8s.io/v1) or ConversionReview
 * (apiextensions.k8s.io/v1) body in, the hook of api/cu_webhook.h called,
 * the review with its response out. The controller's webhook server
 * (cu_ctrlwebhook.c) hands every POST here; tests and the fuzz target call
 * it directly.
 *
 * Answers, as controller-runtime's webhook server gives them:
 *  - an admission: HTTP 200 with the review (response.uid, allowed,
 *    status {code, reason, message}, warnings; for a mutating hook that
 *    changed the object, patch (base64 of a JSON Patch from the object
 *    received to the object the hook left) and patchType "JSONPatch");
 *  - a conversion: HTTP 200 with response.uid, convertedObjects and
 *    result {status: Success}, or result {status: Failure, message} and no
 *    objects when any object cannot be converted;
 *  - a body that is not such a review (not JSON, wrong apiVersion or
 *    kind, no request, no uid, a field of the wrong type, not
 *    application/json): HTTP 400, still a review of the kind asked for
 *    whose response says what is wrong (allowed false and status.code 400;
 *    result Failure);
 *  - a path that is no webhook's: 404.
 */
#ifndef CU_WHREVIEW_H
#define CU_WHREVIEW_H

#include <stddef.h>

#include "cu_base.h"
#include "cu_webhook.h"

/* The path of the conversion webhook. */
#define CU_WH_CONVERT_PATH "/convert"

/* The largest review body served (controller-runtime's limit). */
#define CU_WH_MAX_BODY ((size_t)7 << 20)

/* Serves one POST of data (len bytes) with Content-Type ctype_in ("" when
 * none) at path: a hook of cu_wh_hooks(), or CU_WH_CONVERT_PATH. Writes
 * the body into out and its content type into *ctype (static); returns
 * the HTTP status. */
int cu_whrev_serve(const cu_wh_env *env, const char *path, const char *ctype_in, const char *data,
                   size_t len, cu_buf *out, const char **ctype);

/* The two halves, for tests: an AdmissionReview for hook h, and a
 * ConversionReview. Same answers as cu_whrev_serve (JSON bodies). */
int cu_whrev_admission(const cu_wh_env *env, const cu_wh_hook *h, const char *data, size_t len,
                       cu_buf *out);
int cu_whrev_conversion(const char *data, size_t len, cu_buf *out);

#endif
