/*
 * cu_authn.h - TokenReview (authentication.k8s.io/v1) and
 * SubjectAccessReview (authorization.k8s.io/v1) for `cueue cluster
 * --token-file`: what a component that delegates authentication and
 * authorization to the API server (controller-runtime's secure metrics,
 * kube-rbac-proxy, `cueue controller`'s metrics) asks.
 *
 * Users come from the token file in kube-apiserver's format
 * (token,user,uid,"group1,group2"; docs/cluster.md). A line with a token
 * only is an administrator named cueue-token-N (its N-th token line) in
 * system:masters: such tokens may use the whole API anyway. Every
 * authenticated user is also in system:authenticated.
 *
 * The authorizer is small, not RBAC: system:masters may do anything;
 * everyone may get /healthz, /livez, /readyz and /version (and below);
 * group system:monitoring may get /metrics and /metrics/... (as
 * kube-apiserver's default ClusterRole of that name); a resource request
 * is allowed for every user of the token file (cueue cluster lets every
 * token use the whole API); anything else is not allowed.
 */
#ifndef CU_AUTHN_H
#define CU_AUTHN_H

#include <json-c/json.h>
#include <stddef.h>

typedef struct cu_authn cu_authn;

/* Reads the users of file (already checked by the token loader). Returns
 * NULL with "--token-file FILE: problem" in err. */
cu_authn *cu_authn_load(const char *file, char *err, size_t errn);
void cu_authn_free(cu_authn *a);

/* The two review APIs and their discovery documents (GET /apis/GROUP and
 * /apis/GROUP/v1): 0 when path is none of them (nothing done); else the
 * HTTP status, with *out a new object to answer (the review with its
 * status, a discovery document, or a metav1.Status). */
int cu_authn_handle(cu_authn *a, const char *method, const char *path, const char *body, size_t len,
                    json_object **out);
/* The user of an Authorization header ("Bearer TOKEN"), as a TokenReview
 * names it ({username, uid, groups}): a new object, or NULL when a is
 * NULL or the token is unknown. */
json_object *cu_authn_user(cu_authn *a, const char *authorization);
/* Adds the two groups to an APIGroupList (GET /apis). */
void cu_authn_add_groups(json_object *group_list);

#endif
