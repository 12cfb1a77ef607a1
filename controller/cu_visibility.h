/*
 * cu_visibility.h - Kueue's visibility API (visibility.kueue.x-k8s.io,
 * version v1beta2), as an aggregated API server serves it: the pending
 * workloads of a ClusterQueue or a LocalQueue (PendingWorkloadsSummary,
 * built by status/ in the order `cueue queue pending` shows), the
 * discovery documents kube-apiserver's aggregator and kubectl read, and
 * errors as Kubernetes Status objects. No I/O: the controller serves it
 * (docs/controller.md, "The visibility API"); the request's
 * authentication and authorization are cu_mauth's, with the attributes
 * and refusals made here.
 */
#ifndef CU_VISIBILITY_H
#define CU_VISIBILITY_H

#include <json-c/json.h>

#include "cu_base.h"
#include "cu_status.h"

/* Where the answers come from. */
typedef struct cu_vis_src {
    /* the pending workloads of every queue (any order): a new array,
     * caller frees with free; NULL with *n == 0 when there are none or
     * when out of memory (*oom set) */
    const cu_wl_info **(*pending)(void *ud, size_t *n, int *oom);
    int (*cq_known)(void *ud, const char *name);
    int (*lq_known)(void *ud, const char *ns, const char *name);
    cu_status_owners_fn owners; /* may be NULL */
    /* non-NULL: why the pending workloads cannot be answered now (503) */
    const char *(*not_ready)(void *ud);
    void *ud;
} cu_vis_src;

/* Answers GET path?query (as sent): "/apis" (APIGroupList), "/apis/GROUP"
 * (APIGroup), "/apis/GROUP/v1beta2" (APIResourceList),
 * ".../clusterqueues/NAME/pendingworkloads" and
 * ".../namespaces/NS/localqueues/NAME/pendingworkloads" (query limit,
 * default 1000, and offset), "/healthz", "/livez", "/readyz". Errors are
 * Status objects: 404 for another path or an unknown queue (naming it),
 * 400 for a bad limit or offset, 503 when not ready. Fills body and
 * *ctype; returns the HTTP status. */
int cu_vis_serve(const cu_vis_src *src, const char *path, const char *query, cu_buf *body,
                 const char **ctype);

/* The SubjectAccessReview attributes of a request for path (a
 * cu_mauth_opts.attrs): resourceAttributes {group, version, resource,
 * subresource: pendingworkloads, name, namespace, verb: get} for the
 * pending workloads, nonResourceAttributes {path, verb: get} otherwise.
 * Returns a new object (taken by the caller). */
json_object *cu_vis_attrs(void *ud, const char *path);

/* A refusal as a Status object (a cu_mauth_opts.refuse): 401
 * Unauthorized, 403 Forbidden worded as kube-apiserver's authorizer
 * ("clusterqueues.visibility.kueue.x-k8s.io \"NAME\" is forbidden: User
 * \"U\" cannot get resource ..."), 500 InternalError. */
void cu_vis_refuse(void *ud, int code, const char *user, const char *path, char *msg, size_t msgn);

/* The value of query parameter name, URL-decoded into out (n bytes), or
 * NULL when absent. */
const char *cu_vis_qparam(const char *query, const char *name, char *out, size_t n);

#endif
