/*
 * cu_match.h - the Kubernetes rules that match a pod against a node (or a
 * ResourceFlavor standing for nodes): taints and tolerations
 * (Toleration.ToleratesTaint, TaintToleration's filter), one
 * NodeSelectorRequirement, a NodeSelectorTerm with its matchFields, and
 * NodeAffinity's filter (spec.nodeSelector and the required node
 * affinity). The one home of these rules for the simulated scheduler
 * (cluster/kubesim) and the engine's flavor eligibility (scheduler/).
 *
 * Everything works on the decoded structs of cu_objects.h, borrows its
 * arguments and allocates nothing. A NULL string in them counts as absent
 * (a label value, a selector value) or as "" (a taint's key and value).
 */
#ifndef CU_MATCH_H
#define CU_MATCH_H

#include "cu_objects.h"

/* Toleration.ToleratesTaint: t's effect (when it names one) and key (when
 * it names one) must be x's; then Exists tolerates and Equal tolerates
 * the same value. */
int cu_match_tolerates(const cu_toleration *t, const cu_taint *x);
/* Whether any of the ntols tolerations tols tolerates x. */
int cu_match_tolerated(const cu_toleration *tols, size_t ntols, const cu_taint *x);
/* Whether TaintToleration's filter looks at x: effect NoSchedule or
 * NoExecute (PreferNoSchedule only scores). */
int cu_match_taint_filters(const cu_taint *x);
/* The first taint of taints that the filter looks at and tols do not
 * tolerate (borrowed from taints), or NULL. */
const cu_taint *cu_match_untolerated(const cu_taint *taints, size_t ntaints,
                                     const cu_toleration *tols, size_t ntols);

/* One NodeSelectorRequirement against value, the label's value or NULL
 * when the node has no such label: In, NotIn, Exists, DoesNotExist; Gt
 * and Lt need exactly one value and compare base-10 int64s parsed as
 * strconv.ParseInt does (sign allowed, no spaces, out of range fails).
 * NULL entries of r->values equal nothing. */
int cu_match_selreq(const cu_selreq *r, const char *value);
/* The same against a node's labels (r->key NULL: absent). */
int cu_match_selreq_labels(const cu_selreq *r, const cu_kvs *labels);

/* A NodeSelectorTerm: its matchExpressions and its matchFields. */
typedef struct cu_nodeterm {
    cu_selterm exprs, fields;
} cu_nodeterm;

/* Every requirement of t holds: exprs against labels, fields against
 * fields (the node's field values by name; Kubernetes has only
 * metadata.name) with In or NotIn only. A term with no requirement
 * matches nothing. */
int cu_match_nodeterm(const cu_nodeterm *t, const cu_kvs *labels, const cu_kvs *fields);

/* What NodeAffinity's filter reads of a pod. */
typedef struct cu_nodesel {
    cu_kvs selector;  /* spec.nodeSelector (a NULL value matches nothing) */
    int has_required; /* requiredDuringSchedulingIgnoredDuringExecution set */
    size_t nterms;    /* its nodeSelectorTerms, ORed */
    cu_nodeterm *terms;
} cu_nodesel;

/* NodeAffinity's filter: every nodeSelector pair is a label of the node,
 * and, when the pod has a required node affinity, one of its terms
 * matches (none with no terms). */
int cu_match_nodesel(const cu_nodesel *s, const cu_kvs *labels, const cu_kvs *fields);

#endif
