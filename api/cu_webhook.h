/*
 * cu_webhook.h - Kueue's admission webhooks and its v1beta1 <-> v1beta2
 * conversion, as pure functions over JSON objects (json-c). No I/O: the
 * controller's webhook server (controller/cu_ctrlwebhook.c) decodes an
 * AdmissionReview or ConversionReview, calls these, and encodes the answer;
 * tests call them directly.
 *
 * The table of hooks carries Kueue's webhook names and paths (Kueue's
 * config/components/webhook manifests), so the manifests Cueue ships, the
 * server's routes and the tests agree on one list.
 */
#ifndef CU_WEBHOOK_H
#define CU_WEBHOOK_H

#include <json-c/json.h>
#include <stddef.h>

#include "cu_base.h"
#include "cu_objects.h"

/* What a hook may ask of the cluster: answered from the controller's
 * informers. Every callback may be NULL (then: unknown / none). */
typedef struct cu_wh_env {
    const cu_config *cfg; /* the controller's Configuration; NULL: Kueue's defaults */
    /* The labels of Namespace ns, or NULL when it is not known. Borrowed. */
    const cu_kvs *(*ns_labels)(void *ud, const char *ns);
    /* 1 when the LocalQueue ns/name exists. */
    int (*lq_exists)(void *ud, const char *ns, const char *name);
    void *ud;
} cu_wh_env;

typedef enum cu_wh_op { CU_WH_CREATE, CU_WH_UPDATE, CU_WH_DELETE, CU_WH_CONNECT } cu_wh_op;

/* One AdmissionReview request, decoded. */
typedef struct cu_wh_req {
    const char *group, *version, *kind; /* request.kind ("" for the core group) */
    cu_wh_op op;
    const char *ns, *name; /* request.namespace / request.name (may be "" or NULL) */
    /* request.object: NULL for DELETE. A mutating hook edits it in place;
     * the server answers with the JSON Patch from the object it received to
     * the edited one. Owned by the caller. */
    json_object *object;
    json_object *old_object; /* request.oldObject (UPDATE, DELETE), else NULL; borrowed */
    int dry_run;
} cu_wh_req;

/* The answer of one hook. */
typedef struct cu_wh_resp {
    int allowed;        /* cu_wh_resp_init sets 1 */
    int code;           /* a denial's HTTP status: 403 (Forbidden, as controller-runtime's
                           Denied) unless the hook says otherwise */
    const char *reason; /* a denial's Status reason ("Forbidden", "Invalid"); static */
    cu_buf message;     /* a denial's message, Kueue's wording */
    cu_diag warnings;   /* warnings passed back to the client (AdmissionResponse.warnings) */
} cu_wh_resp;

void cu_wh_resp_init(cu_wh_resp *r);
void cu_wh_resp_free(cu_wh_resp *r);
/* Denies with a message (printf style): allowed = 0, code 403, "Forbidden". */
void cu_wh_deny(cu_wh_resp *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

typedef void (*cu_wh_fn)(const cu_wh_env *env, cu_wh_req *req, cu_wh_resp *resp);

/* One webhook Cueue serves, as Kueue's manifests declare it. */
typedef struct cu_wh_hook {
    const char *name;     /* "mjob.kb.io" */
    const char *path;     /* "/mutate-batch-v1-job" */
    int mutating;         /* 1: MutatingWebhookConfiguration */
    const char *group;    /* rule: apiGroups[0] ("" for the core group) */
    const char *version;  /* rule: apiVersions[0] */
    const char *resource; /* rule: resources[0] ("jobs") */
    unsigned ops;         /* rule: operations, bits (1u << cu_wh_op) */
    cu_wh_fn fn;
} cu_wh_hook;

/* The table of Cueue's webhooks; *n gets its length. Static. */
const cu_wh_hook *cu_wh_hooks(size_t *n);
/* The hook served at path, or NULL. */
const cu_wh_hook *cu_wh_hook_by_path(const char *path);

/* ---- conversion (the CRDs' conversion webhook, path "/convert") ---- */

/* Converts obj, an object of a kueue.x-k8s.io kind in v1beta1 or v1beta2,
 * to desired ("kueue.x-k8s.io/v1beta1" or "kueue.x-k8s.io/v1beta2"). A
 * new object in *out (caller puts it); obj is borrowed. Round trips are
 * lossless (v1beta1 -> v1beta2 -> v1beta1 and the reverse give back the
 * object). An object already in desired is copied.
 * Returns CU_OK, or CU_EINVAL with the reason in msg (may be NULL). */
cu_err cu_wh_convert(json_object *obj, const char *desired, json_object **out, cu_buf *msg);

/* ---- added by the hooks' owner ---- */

/* Every resource of h's rule, as Kueue's manifests list them: one for most
 * hooks, "workloads" and "workloads/status" for vworkload.kb.io (Kueue
 * validates Workload status writes too). *n gets the count. Static. */
const char *const *cu_wh_hook_resources(const cu_wh_hook *h, size_t *n);

#endif
