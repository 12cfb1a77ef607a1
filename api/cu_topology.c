/*
 * cu_topology.c - the TAS API (cu_topology.h): pod-set topology requests
 * from the pod-template annotations, Kueue's webhook rules on them, the
 * Topology level syntax, and the topology assignment in v1beta2's shape
 * (the compression itself is cu_convert.c's, reached through
 * cu_conv_topology_json).
 */
#include "cu_topology.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_convert_int.h"
#include "cu_json.h"
#include "cu_names.h"

int cu_go_parse_bool(const char *s)
{
    static const char *const t[] = { "1", "t", "T", "TRUE", "true", "True" };
    static const char *const f[] = { "0", "f", "F", "FALSE", "false", "False" };
    for (size_t i = 0; s && i < 6; i++) {
        if (!strcmp(s, t[i]))
            return 1;
        if (!strcmp(s, f[i]))
            return 0;
    }
    return -1;
}

/* Go's strconv.ParseInt(s, 10, 32): 0 and *out, or -1. */
static int parse_i32(const char *s, int32_t *out)
{
    const char *p = s;
    if (*p == '+' || *p == '-')
        p++;
    if (!*p)
        return -1;
    for (const char *c = p; *c; c++)
        if (*c < '0' || *c > '9')
            return -1;
    errno = 0;
    long long v = strtoll(s, NULL, 10);
    if (errno == ERANGE || v < INT32_MIN || v > INT32_MAX)
        return -1;
    *out = (int32_t)v;
    return 0;
}

int cu_topology_label_ok(const char *s)
{
    if (!s || !*s)
        return 0;
    const char *slash = strchr(s, '/');
    if (!slash)
        return cu_qname_part_ok(s, strlen(s));
    if (strchr(slash + 1, '/') || slash == s)
        return 0;
    return cu_dns1123_subdomain_ok(s, (size_t)(slash - s), 0) &&
           cu_qname_part_ok(slash + 1, strlen(slash + 1));
}

const char *cu_ann_get_json(void *ud, const char *key) { return cu_jstr(ud, key); }

int cu_topology_pod_is_tas(cu_ann_get get, void *ud)
{
    return get(ud, CU_ANN_TAS_REQUIRED) || get(ud, CU_ANN_TAS_PREFERRED) ||
           get(ud, CU_ANN_TAS_UNCONSTRAINED);
}

int cu_topo_request_build(cu_ann_get get, void *ud, const char *pod_index_label,
                          const char *subgroup_label, const int32_t *subgroup_count,
                          cu_topo_request *out)
{
    memset(out, 0, sizeof(*out));
    const char *req = get(ud, CU_ANN_TAS_REQUIRED), *pref = get(ud, CU_ANN_TAS_PREFERRED);
    const char *unc = get(ud, CU_ANN_TAS_UNCONSTRAINED);
    const char *sreq = get(ud, CU_ANN_TAS_SLICE_REQUIRED), *ssize = get(ud, CU_ANN_TAS_SLICE_SIZE);
    const char *group = get(ud, CU_ANN_PODSET_GROUP_NAME);
    if (req) {
        out->required = req;
    } else if (pref) {
        out->preferred = pref;
    } else if (unc) {
        int b = cu_go_parse_bool(unc);
        if (b < 0)
            return -1;
        out->unconstrained = b;
        out->has_unconstrained = 1;
    } else if (!(sreq && ssize) && !pod_index_label && !subgroup_label && !subgroup_count) {
        return 0;
    }
    /* the multi-layer constraints need an alpha gate that is off: ignored */
    if (sreq && ssize) {
        if (parse_i32(ssize, &out->slice_size) != 0) {
            memset(out, 0, sizeof(*out));
            return -1;
        }
        out->slice_required = sreq;
        out->has_slice_size = 1;
    }
    out->pod_index_label = pod_index_label;
    out->subgroup_index_label = subgroup_label;
    if (subgroup_count) {
        out->has_subgroup_count = 1;
        out->subgroup_count = *subgroup_count;
    }
    if (group && (req || pref))
        out->podset_group_name = group;
    out->present = 1;
    return 0;
}

static void put_str(json_object *o, const char *k, const char *v)
{
    if (v)
        cu_jset_str(o, k, v);
}

json_object *cu_topo_request_json(const cu_topo_request *r)
{
    if (!r || !r->present)
        return NULL;
    json_object *o = json_object_new_object();
    if (!o)
        return NULL;
    put_str(o, "required", r->required);
    put_str(o, "preferred", r->preferred);
    if (r->has_unconstrained)
        json_object_object_add(o, "unconstrained", json_object_new_boolean(r->unconstrained));
    put_str(o, "podIndexLabel", r->pod_index_label);
    put_str(o, "subGroupIndexLabel", r->subgroup_index_label);
    if (r->has_subgroup_count)
        cu_jset_int(o, "subGroupCount", r->subgroup_count);
    put_str(o, "podSetGroupName", r->podset_group_name);
    put_str(o, "podSetSliceRequiredTopology", r->slice_required);
    if (r->has_slice_size)
        cu_jset_int(o, "podSetSliceSize", r->slice_size);
    return o;
}

int cu_topo_request_add(json_object *ps, json_object *tmpl, const char *pod_index_label,
                        const char *subgroup_label, const int32_t *subgroup_count)
{
    cu_topo_request r;
    int rc = cu_topo_request_build(cu_ann_get_json, cu_jpath(tmpl, "metadata.annotations"),
                                   pod_index_label, subgroup_label, subgroup_count, &r);
    json_object *j = rc == 0 ? cu_topo_request_json(&r) : NULL;
    if (j)
        json_object_object_add(ps, "topologyRequest", j);
    return rc;
}

/* ---------------- Kueue's webhook rules ---------------- */

/* s as a Go %q string, into b (reset). */
static const char *gq(cu_buf *b, const char *s)
{
    cu_buf_free(b);
    cu_buf_init(b, 256);
    cu_json_put_str(b, s, CU_JESC_RAW);
    return cu_buf_str(b);
}

/* ValidateLabelName: one error per problem of the qualified name v. */
static void label_name(cu_diag *e, const char *path, const char *key, const char *v)
{
    unsigned p = cu_qname_problems(v, strlen(v), 0);
    cu_buf b;
    cu_buf_init(&b, 0);
    for (unsigned bit = 1; p; bit <<= 1)
        if (p & bit) {
            cu_diag_error(e, "%s.annotations[%s]: Invalid value: %s: %s", path, key, gq(&b, v),
                          cu_name_detail(bit));
            p &= ~bit;
        }
    cu_buf_free(&b);
}

void cu_topo_request_validate(cu_ann_get get, void *ud, const char *path, cu_diag *e)
{
    const char *req = get(ud, CU_ANN_TAS_REQUIRED), *pref = get(ud, CU_ANN_TAS_PREFERRED);
    const char *unc = get(ud, CU_ANN_TAS_UNCONSTRAINED);
    const char *sreq = get(ud, CU_ANN_TAS_SLICE_REQUIRED), *ssize = get(ud, CU_ANN_TAS_SLICE_SIZE);
    const char *group = get(ud, CU_ANN_PODSET_GROUP_NAME);
    const char *cons = get(ud, CU_ANN_TAS_SLICE_CONSTRAINTS);
    cu_buf b;
    cu_buf_init(&b, 0);
    if ((req != NULL) + (pref != NULL) + (unc != NULL) > 1)
        cu_diag_error(e,
                      "%s.annotations: Invalid value: must not contain more than one topology "
                      "annotation: [\"%s\", \"%s\", \"%s\"]",
                      path, CU_ANN_TAS_REQUIRED, CU_ANN_TAS_PREFERRED, CU_ANN_TAS_UNCONSTRAINED);
    if (req)
        label_name(e, path, CU_ANN_TAS_REQUIRED, req);
    if (pref)
        label_name(e, path, CU_ANN_TAS_PREFERRED, pref);
    if (sreq)
        label_name(e, path, CU_ANN_TAS_SLICE_REQUIRED, sreq);
    if (group) {
        const char *g = group;
        int digits = *g != '\0';
        for (; *g && digits; g++)
            digits = *g >= '0' && *g <= '9';
        if (digits && strlen(group) <= 20 &&
            (strlen(group) < 20 || strcmp(group, "18446744073709551615") <= 0))
            cu_diag_error(e, "%s.annotations[%s]: Invalid value: %s: must not be a number", path,
                          CU_ANN_PODSET_GROUP_NAME, gq(&b, group));
        if (ssize)
            cu_diag_error(e, "%s.annotations[%s]: Forbidden: may not be set when '%s' is specified",
                          path, CU_ANN_PODSET_GROUP_NAME, CU_ANN_TAS_SLICE_SIZE);
        if (sreq)
            cu_diag_error(e, "%s.annotations[%s]: Forbidden: may not be set when '%s' is specified",
                          path, CU_ANN_PODSET_GROUP_NAME, CU_ANN_TAS_SLICE_REQUIRED);
        if (!pref && !req)
            cu_diag_error(e,
                          "%s.annotations[%s]: Forbidden: may not be set when neither '%s' nor "
                          "'%s' is specified",
                          path, CU_ANN_PODSET_GROUP_NAME, CU_ANN_TAS_PREFERRED,
                          CU_ANN_TAS_REQUIRED);
    }
    if (unc && cu_go_parse_bool(unc) < 0)
        cu_diag_error(e, "%s.annotations[%s]: Invalid value: %s: must be a boolean value", path,
                      CU_ANN_TAS_UNCONSTRAINED, gq(&b, unc));
    int32_t size = 0;
    if (ssize && parse_i32(ssize, &size) != 0)
        cu_diag_error(e, "%s.annotations[%s]: Invalid value: %s: must be a numeric value", path,
                      CU_ANN_TAS_SLICE_SIZE, gq(&b, ssize));
    else if (ssize && size < 1)
        cu_diag_error(e,
                      "%s.annotations[%s]: Invalid value: %s: must be greater than or equal to 1",
                      path, CU_ANN_TAS_SLICE_SIZE, gq(&b, ssize));
    if (sreq && !ssize)
        cu_diag_error(e, "%s.annotations[%s]: Required value: must be set when '%s' is specified",
                      path, CU_ANN_TAS_SLICE_SIZE, CU_ANN_TAS_SLICE_REQUIRED);
    if (!sreq && ssize)
        cu_diag_error(e, "%s.annotations[%s]: Forbidden: may not be set when '%s' is not specified",
                      path, CU_ANN_TAS_SLICE_SIZE, CU_ANN_TAS_SLICE_REQUIRED);
    if (cons)
        cu_diag_error(e,
                      "%s.annotations[%s]: Forbidden: the TASMultiLayerTopology feature gate must "
                      "be enabled to use this annotation",
                      path, CU_ANN_TAS_SLICE_CONSTRAINTS);
    cu_buf_free(&b);
}

void cu_topo_slice_bound(cu_ann_get get, void *ud, const char *path, int32_t count, cu_diag *e)
{
    const char *ssize = get(ud, CU_ANN_TAS_SLICE_SIZE);
    int32_t size = 0;
    if (!ssize)
        return;
    cu_buf b;
    cu_buf_init(&b, 0);
    if (parse_i32(ssize, &size) != 0)
        cu_diag_error(e, "%s.annotations[%s]: Invalid value: %s: must be a numeric value", path,
                      CU_ANN_TAS_SLICE_SIZE, gq(&b, ssize));
    else if (size > count)
        cu_diag_error(e,
                      "%s.annotations[%s]: Invalid value: %s: must not be greater than pod set "
                      "count %d",
                      path, CU_ANN_TAS_SLICE_SIZE, gq(&b, ssize), count);
    cu_buf_free(&b);
}

/* ---------------- the assignment ---------------- */

json_object *cu_topo_assign_json(const cu_topo_assign *ta)
{
    if (!ta)
        return NULL;
    json_object *o = json_object_new_object(), *lv = json_object_new_array();
    json_object *doms = json_object_new_array();
    if (!o || !lv || !doms) {
        json_object_put(o);
        json_object_put(lv);
        json_object_put(doms);
        return NULL;
    }
    json_object_object_add(o, "levels", lv);
    json_object_object_add(o, "domains", doms);
    for (size_t i = 0; i < ta->nlevels; i++) {
        if (!ta->levels[i]) {
            json_object_put(o);
            return NULL;
        }
        json_object_array_add(lv, json_object_new_string(ta->levels[i]));
    }
    for (size_t d = 0; d < ta->ndomains; d++) {
        json_object *dm = json_object_new_object(), *vals = json_object_new_array();
        json_object_object_add(dm, "values", vals);
        json_object_object_add(dm, "count", json_object_new_int(ta->counts[d]));
        json_object_array_add(doms, dm);
        for (size_t l = 0; l < ta->nlevels; l++) {
            const char *v = ta->values[d * ta->nlevels + l];
            if (!v || ta->counts[d] < 0) {
                json_object_put(o);
                return NULL;
            }
            json_object_array_add(vals, json_object_new_string(v));
        }
    }
    /* v1beta1 -> v1beta2: the one encoder of slices (cu_convert.c) */
    if (cu_conv_topology_json(o, 0, NULL) != CU_OK) {
        json_object_put(o);
        return NULL;
    }
    return o;
}

void cu_topo_groups_validate(const cu_topo_member *m, size_t n, cu_diag *e)
{
    cu_buf b;
    cu_buf_init(&b, 0);
    for (size_t i = 0; i < n; i++) {
        const char *g = m[i].req.podset_group_name;
        if (!g)
            continue;
        int first = 1;
        for (size_t k = 0; k < i && first; k++)
            first = !m[k].req.podset_group_name || strcmp(m[k].req.podset_group_name, g) != 0;
        if (!first)
            continue; /* each group once, at its first pod set */
        size_t idx[2] = { 0, 0 }, size = 0;
        for (size_t k = i; k < n; k++)
            if (m[k].req.podset_group_name && !strcmp(m[k].req.podset_group_name, g)) {
                if (size < 2)
                    idx[size] = k;
                size++;
            }
        if (size != 2) {
            for (size_t k = i; k < n; k++)
                if (m[k].req.podset_group_name && !strcmp(m[k].req.podset_group_name, g))
                    cu_diag_error(e,
                                  "%s[%s]: Invalid value: %s: can only define groups of exactly 2 "
                                  "pod sets, got: %zu pod set(s)",
                                  m[k].path, CU_ANN_PODSET_GROUP_NAME, gq(&b, g), size);
            continue;
        }
        const cu_topo_member *a = &m[idx[0]], *c = &m[idx[1]];
        if (a->count != 1 && c->count != 1)
            for (size_t k = 0; k < 2; k++)
                cu_diag_error(e,
                              "%s[%s]: Invalid value: %s: can only define groups where at least "
                              "one pod set has only 1 replica, got: %d replica(s) and %d "
                              "replica(s) in the group",
                              m[idx[k]].path, CU_ANN_PODSET_GROUP_NAME, gq(&b, g), a->count,
                              c->count);
        const cu_topo_request *ra = &a->req, *rc = &c->req;
        int same = (ra->required || ra->preferred) && (rc->required || rc->preferred) &&
                   !ra->required == !rc->required && !ra->preferred == !rc->preferred &&
                   (!ra->required || !strcmp(ra->required, rc->required)) &&
                   (!ra->preferred || !strcmp(ra->preferred, rc->preferred));
        if (!same)
            for (size_t k = 0; k < 2; k++)
                cu_diag_error(e,
                              "%s: Invalid value: must specify '%s' or '%s' topology consistent "
                              "with '%s' in group '%s'",
                              m[idx[k]].path, CU_ANN_TAS_REQUIRED, CU_ANN_TAS_PREFERRED,
                              m[idx[1 - k]].path, g);
    }
    cu_buf_free(&b);
}
