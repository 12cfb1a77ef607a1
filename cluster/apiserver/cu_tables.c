/*
 * cu_tables.c - Table output (meta.k8s.io/v1 Table): the built-in column
 * sets, printer columns of custom resources, kubectl's ages.
 * See internal/cu_apiserver_int.h.
 */
#include "cu_apiserver.h"
#include "cu_authn.h"
#include "cu_objmeta.h"
#include "cu_doc.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_apiserver_int.h"

/* ---------------- Table output ---------------- */

typedef struct tcol {
    const char *name, *type, *format;
    int priority;
} tcol;

static const tcol cols_pod[] = { { "Name", "string", "name", 0 },
                                 { "Ready", "string", "", 0 },
                                 { "Status", "string", "", 0 },
                                 { "Restarts", "string", "", 0 },
                                 { "Age", "string", "", 0 },
                                 { "IP", "string", "", 1 },
                                 { "Node", "string", "", 1 },
                                 { "Nominated Node", "string", "", 1 },
                                 { "Readiness Gates", "string", "", 1 },
                                 { NULL, NULL, NULL, 0 } };
static const tcol cols_node[] = { { "Name", "string", "name", 0 }, { "Status", "string", "", 0 },
                                  { "Roles", "string", "", 0 },    { "Age", "string", "", 0 },
                                  { "Version", "string", "", 0 },  { NULL, NULL, NULL, 0 } };
static const tcol cols_job[] = {
    { "Name", "string", "name", 0 },    { "Status", "string", "", 0 },
    { "Completions", "string", "", 0 }, { "Duration", "string", "", 0 },
    { "Age", "string", "", 0 },         { "Containers", "string", "", 1 },
    { "Images", "string", "", 1 },      { NULL, NULL, NULL, 0 }
};
static const tcol cols_ns[] = { { "Name", "string", "name", 0 },
                                { "Status", "string", "", 0 },
                                { "Age", "string", "", 0 },
                                { NULL, NULL, NULL, 0 } };
static const tcol cols_cm[] = { { "Name", "string", "name", 0 },
                                { "Data", "integer", "", 0 },
                                { "Age", "string", "", 0 },
                                { NULL, NULL, NULL, 0 } };
static const tcol cols_secret[] = { { "Name", "string", "name", 0 },
                                    { "Type", "string", "", 0 },
                                    { "Data", "integer", "", 0 },
                                    { "Age", "string", "", 0 },
                                    { NULL, NULL, NULL, 0 } };
static const tcol cols_event[] = {
    { "Last Seen", "string", "", 0 }, { "Type", "string", "", 0 },
    { "Reason", "string", "", 0 },    { "Object", "string", "", 0 },
    { "Message", "string", "", 0 },   { "Name", "string", "name", 1 },
    { NULL, NULL, NULL, 0 }
};
static const tcol cols_crd[] = { { "Name", "string", "name", 0 },
                                 { "Created At", "date", "", 0 },
                                 { NULL, NULL, NULL, 0 } };
static const tcol cols_lease[] = { { "Name", "string", "name", 0 },
                                   { "Holder", "string", "", 0 },
                                   { "Age", "string", "", 0 },
                                   { NULL, NULL, NULL, 0 } };
static const tcol cols_pc[] = { { "Name", "string", "name", 0 },
                                { "Value", "integer", "", 0 },
                                { "Global-Default", "boolean", "", 0 },
                                { "Age", "string", "", 0 },
                                { NULL, NULL, NULL, 0 } };
static const tcol cols_sa[] = { { "Name", "string", "name", 0 },
                                { "Secrets", "integer", "", 0 },
                                { "Age", "string", "", 0 },
                                { NULL, NULL, NULL, 0 } };
static const tcol cols_apisvc[] = { { "Name", "string", "name", 0 },
                                    { "Service", "string", "", 0 },
                                    { "Available", "string", "", 0 },
                                    { "Age", "string", "", 0 },
                                    { NULL, NULL, NULL, 0 } };
static const tcol cols_whc[] = { { "Name", "string", "name", 0 },
                                 { "Webhooks", "integer", "", 0 },
                                 { "Age", "string", "", 0 },
                                 { NULL, NULL, NULL, 0 } };
static const tcol cols_default[] = { { "Name", "string", "name", 0 },
                                     { "Age", "string", "", 0 },
                                     { NULL, NULL, NULL, 0 } };

/* The built-in columns for rt, or NULL for a custom resource with printer
 * columns of its own. */
static const tcol *builtin_cols(const cu_rtype *rt)
{
    if (rt->from_crd)
        return rt->ncols ? NULL : cols_default;
    const char *k = rt->kind, *g = rt->group;
    if (strcmp(k, "Pod") == 0)
        return cols_pod;
    if (strcmp(k, "Node") == 0)
        return cols_node;
    if (strcmp(k, "Job") == 0)
        return cols_job;
    if (strcmp(k, "Namespace") == 0)
        return cols_ns;
    if (strcmp(k, "ConfigMap") == 0)
        return cols_cm;
    if (strcmp(k, "Secret") == 0)
        return cols_secret;
    if (strcmp(k, "Event") == 0 && (!*g || strcmp(g, "events.k8s.io") == 0))
        return cols_event;
    if (strcmp(k, "CustomResourceDefinition") == 0)
        return cols_crd;
    if (strcmp(k, "Lease") == 0)
        return cols_lease;
    if (strcmp(k, "PriorityClass") == 0)
        return cols_pc;
    if (strcmp(k, "ServiceAccount") == 0)
        return cols_sa;
    if (strcmp(k, "APIService") == 0)
        return cols_apisvc;
    if (strcmp(g, "admissionregistration.k8s.io") == 0 &&
        (strcmp(k, "MutatingWebhookConfiguration") == 0 ||
         strcmp(k, "ValidatingWebhookConfiguration") == 0))
        return cols_whc;
    return cols_default;
}

static json_object *col_def(const char *name, const char *type, const char *format,
                            const char *desc, int priority)
{
    json_object *c = json_object_new_object();
    cu_jset_str(c, "name", name);
    cu_jset_str(c, "type", type ? type : "string");
    cu_jset_str(c, "format", format ? format : "");
    cu_jset_str(c, "description", desc ? desc : "");
    json_object_object_add(c, "priority", json_object_new_int(priority));
    return c;
}

static json_object *table_defs(const cu_rtype *rt)
{
    json_object *defs = json_object_new_array();
    const tcol *bc = builtin_cols(rt);
    if (bc) {
        for (; bc->name; bc++)
            json_object_array_add(defs, col_def(bc->name, bc->type, bc->format,
                                                strcmp(bc->name, "Name") == 0
                                                    ? "Name must be unique within a namespace."
                                                    : "",
                                                bc->priority));
        return defs;
    }
    json_object_array_add(
        defs, col_def("Name", "string", "name", "Name must be unique within a namespace.", 0));
    for (size_t i = 0; i < rt->ncols; i++) {
        const cu_pcol *c = &rt->cols[i];
        json_object_array_add(defs,
                              col_def(c->name, c->type, c->format, c->description, c->priority));
    }
    return defs;
}

size_t jlen(json_object *o)
{
    if (!o)
        return 0;
    if (json_object_is_type(o, json_type_array))
        return json_object_array_length(o);
    if (json_object_is_type(o, json_type_object))
        return (size_t)json_object_object_length(o);
    return 0;
}

/* The age of an RFC 3339 timestamp, or "<unknown>". */
static json_object *age_cell(const char *ts, int64_t now)
{
    int64_t t;
    char buf[32];
    if (!ts || cu_time_parse(ts, &t) != CU_OK)
        return json_object_new_string("<unknown>");
    cu_duration_human(now - t, buf, sizeof buf);
    return json_object_new_string(buf);
}

static const char *cond_status(json_object *status, const char *type)
{
    json_object *conds = cu_jget(status, "conditions");
    for (size_t i = 0; i < jlen(conds); i++) {
        json_object *c = json_object_array_get_idx(conds, i);
        const char *t = cu_jstr(c, "type");
        if (t && strcmp(t, type) == 0)
            return cu_jstr(c, "status");
    }
    return NULL;
}

static void cells_pod(json_object *cells, json_object *o, json_object *meta, int64_t now)
{
    json_object *spec = cu_jget(o, "spec"), *st = cu_jget(o, "status");
    json_object *cs = cu_jget(st, "containerStatuses");
    size_t total = jlen(cu_jget(spec, "containers")), ready = 0;
    int restarts = 0;
    const char *reason = NULL;
    for (size_t i = 0; i < jlen(cs); i++) {
        json_object *c = json_object_array_get_idx(cs, i);
        json_object *rd = cu_jget(c, "ready");
        if (rd && json_object_get_boolean(rd))
            ready++;
        restarts += cu_jint(c, "restartCount");
        json_object *state = cu_jget(c, "state");
        const char *r = cu_jstr(cu_jget(state, "waiting"), "reason");
        if (!r)
            r = cu_jstr(cu_jget(state, "terminated"), "reason");
        if (r && !reason)
            reason = r;
    }
    const char *phase = cu_jstr(st, "phase");
    char buf[64];
    snprintf(buf, sizeof buf, "%zu/%zu", ready, total);
    json_object_array_add(cells, json_object_new_string(buf));
    const char *status = cu_jstr(st, "reason");
    json_object *conds = cu_jget(st, "conditions");
    for (size_t i = 0; i < jlen(conds); i++) { /* kubectl's printer: a gated pod says so */
        json_object *c = json_object_array_get_idx(conds, i);
        const char *t = cu_jstr(c, "type"), *r = cu_jstr(c, "reason");
        if (t && r && !strcmp(t, "PodScheduled") && !strcmp(r, "SchedulingGated"))
            status = "SchedulingGated";
    }
    if (!status)
        status = reason;
    if (!status && phase)
        status = strcmp(phase, "Succeeded") == 0 ? "Completed"
                 : strcmp(phase, "Failed") == 0  ? "Error"
                                                 : phase;
    if (cu_jget(meta, "deletionTimestamp"))
        status = "Terminating";
    json_object_array_add(cells, json_object_new_string(status ? status : "Pending"));
    snprintf(buf, sizeof buf, "%d", restarts);
    json_object_array_add(cells, json_object_new_string(buf));
    json_object_array_add(cells, age_cell(cu_jstr(meta, "creationTimestamp"), now));
    const char *ip = cu_jstr(st, "podIP"), *node = cu_jstr(spec, "nodeName");
    const char *nom = cu_jstr(st, "nominatedNodeName");
    json_object_array_add(cells, json_object_new_string(ip ? ip : "<none>"));
    json_object_array_add(cells, json_object_new_string(node ? node : "<none>"));
    json_object_array_add(cells, json_object_new_string(nom ? nom : "<none>"));
    json_object_array_add(cells, json_object_new_string("<none>"));
}

static void cells_node(json_object *cells, json_object *o, json_object *meta, int64_t now)
{
    const char *r = cond_status(cu_jget(o, "status"), "Ready");
    char buf[512];
    snprintf(buf, sizeof buf, "%s%s",
             !r                       ? "Unknown"
             : strcmp(r, "True") == 0 ? "Ready"
                                      : "NotReady",
             cu_jget(cu_jget(o, "spec"), "unschedulable") &&
                     json_object_get_boolean(cu_jget(cu_jget(o, "spec"), "unschedulable"))
                 ? ",SchedulingDisabled"
                 : "");
    json_object_array_add(cells, json_object_new_string(buf));
    buf[0] = '\0';
    json_object *labels = cu_jget(meta, "labels");
    if (labels && json_object_is_type(labels, json_type_object)) {
        json_object_object_foreach (labels, k, v) {
            (void)v;
            const char *pfx = "node-role.kubernetes.io/";
            if (strncmp(k, pfx, strlen(pfx)) == 0 && k[strlen(pfx)]) {
                size_t l = strlen(buf);
                snprintf(buf + l, sizeof buf - l, "%s%s", l ? "," : "", k + strlen(pfx));
            }
        }
    }
    json_object_array_add(cells, json_object_new_string(buf[0] ? buf : "<none>"));
    json_object_array_add(cells, age_cell(cu_jstr(meta, "creationTimestamp"), now));
    const char *ver = cu_jstr(cu_jget(cu_jget(o, "status"), "nodeInfo"), "kubeletVersion");
    json_object_array_add(cells, json_object_new_string(ver ? ver : ""));
}

static void cells_job(json_object *cells, json_object *o, json_object *meta, int64_t now)
{
    json_object *spec = cu_jget(o, "spec"), *st = cu_jget(o, "status");
    const char *c = cond_status(st, "Complete"), *f = cond_status(st, "Failed");
    const char *sus = cond_status(st, "Suspended");
    json_object *suspend = cu_jget(spec, "suspend");
    const char *status =
        c && strcmp(c, "True") == 0   ? "Complete"
        : f && strcmp(f, "True") == 0 ? "Failed"
        : (sus && strcmp(sus, "True") == 0) || (suspend && json_object_get_boolean(suspend))
            ? "Suspended"
            : "Running";
    json_object_array_add(cells, json_object_new_string(status));
    char buf[128];
    json_object *comp = cu_jget(spec, "completions");
    if (comp)
        snprintf(buf, sizeof buf, "%d/%d", cu_jint(st, "succeeded"), json_object_get_int(comp));
    else
        snprintf(buf, sizeof buf, "%d/1 of %d", cu_jint(st, "succeeded"),
                 cu_jget(spec, "parallelism") ? cu_jint(spec, "parallelism") : 1);
    json_object_array_add(cells, json_object_new_string(buf));
    int64_t t0, t1;
    const char *start = cu_jstr(st, "startTime"), *end = cu_jstr(st, "completionTime");
    buf[0] = '\0';
    if (start && cu_time_parse(start, &t0) == CU_OK) {
        if (!end || cu_time_parse(end, &t1) != CU_OK)
            t1 = now;
        cu_duration_human(t1 - t0, buf, sizeof buf);
    }
    json_object_array_add(cells, json_object_new_string(buf));
    json_object_array_add(cells, age_cell(cu_jstr(meta, "creationTimestamp"), now));
    json_object *ctrs = cu_jget(cu_jget(cu_jget(spec, "template"), "spec"), "containers");
    char names[512] = "", images[1024] = "";
    for (size_t i = 0; i < jlen(ctrs); i++) {
        json_object *ct = json_object_array_get_idx(ctrs, i);
        size_t l = strlen(names), li = strlen(images);
        snprintf(names + l, sizeof names - l, "%s%s", l ? "," : "",
                 cu_jstr(ct, "name") ? cu_jstr(ct, "name") : "");
        snprintf(images + li, sizeof images - li, "%s%s", li ? "," : "",
                 cu_jstr(ct, "image") ? cu_jstr(ct, "image") : "");
    }
    json_object_array_add(cells, json_object_new_string(names));
    json_object_array_add(cells, json_object_new_string(images));
}

static void cells_event(json_object *cells, json_object *o, json_object *meta, int64_t now)
{
    const char *last = cu_jstr(o, "lastTimestamp");
    if (!last)
        last = cu_jstr(o, "eventTime");
    if (!last)
        last = cu_jstr(meta, "creationTimestamp");
    json_object_array_add(cells, age_cell(last, now));
    const char *t = cu_jstr(o, "type"), *r = cu_jstr(o, "reason");
    json_object_array_add(cells, json_object_new_string(t ? t : ""));
    json_object_array_add(cells, json_object_new_string(r ? r : ""));
    json_object *inv = cu_jget(o, "involvedObject");
    if (!inv)
        inv = cu_jget(o, "regarding");
    char buf[600], kind[128];
    snprintf(kind, sizeof kind, "%s", cu_jstr(inv, "kind") ? cu_jstr(inv, "kind") : "");
    for (char *p = kind; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    snprintf(buf, sizeof buf, "%s/%s", kind, cu_jstr(inv, "name") ? cu_jstr(inv, "name") : "");
    json_object_array_add(cells, json_object_new_string(buf));
    const char *m = cu_jstr(o, "message");
    if (!m)
        m = cu_jstr(o, "note");
    json_object_array_add(cells, json_object_new_string(m ? m : ""));
    const char *n = cu_jstr(meta, "name");
    json_object_array_add(cells, json_object_new_string(n ? n : ""));
}

/* A custom resource column cell, as the CRD table convertor does. */
static json_object *crd_cell(const cu_pcol *c, json_object *o, int64_t now)
{
    json_object *v = cu_jsonpath_get(o, c->json_path);
    if (!v)
        return NULL;
    const char *type = c->type ? c->type : "string";
    if (strcmp(type, "date") == 0 && json_object_is_type(v, json_type_string))
        return age_cell(json_object_get_string(v), now);
    if (strcmp(type, "integer") == 0 &&
        (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)))
        return json_object_new_int64(json_object_get_int64(v));
    if (strcmp(type, "number") == 0 &&
        (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)))
        return json_object_new_double(json_object_get_double(v));
    if (strcmp(type, "boolean") == 0 && json_object_is_type(v, json_type_boolean))
        return json_object_new_boolean(json_object_get_boolean(v));
    /* A value of another JSON type than the column's gives an empty cell,
     * as on a real API server; only string columns print any value. */
    if (strcmp(type, "string") != 0)
        return NULL;
    if (json_object_is_type(v, json_type_string))
        return json_object_new_string(json_object_get_string(v));
    return json_object_new_string(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
}

static json_object *table_row(const cu_rtype *rt, json_object *o, int include, int64_t now)
{
    json_object *row = json_object_new_object(), *cells = json_object_new_array();
    json_object *meta = cu_jget(o, "metadata");
    const char *name = cu_jstr(meta, "name");
    const tcol *bc = builtin_cols(rt);
    int is_event = bc == cols_event;
    if (!is_event)
        json_object_array_add(cells, json_object_new_string(name ? name : ""));
    if (!bc) {
        for (size_t i = 0; i < rt->ncols; i++)
            json_object_array_add(cells, crd_cell(&rt->cols[i], o, now));
    } else if (bc == cols_pod) {
        cells_pod(cells, o, meta, now);
    } else if (bc == cols_node) {
        cells_node(cells, o, meta, now);
    } else if (bc == cols_job) {
        cells_job(cells, o, meta, now);
    } else if (bc == cols_event) {
        cells_event(cells, o, meta, now);
    } else if (bc == cols_ns) {
        const char *ph = cu_jstr(cu_jget(o, "status"), "phase");
        json_object_array_add(cells, json_object_new_string(ph ? ph : "Active"));
        json_object_array_add(cells, age_cell(cu_jstr(meta, "creationTimestamp"), now));
    } else if (bc == cols_cm) {
        json_object_array_add(cells, json_object_new_int((int)(jlen(cu_jget(o, "data")) +
                                                               jlen(cu_jget(o, "binaryData")))));
        json_object_array_add(cells, age_cell(cu_jstr(meta, "creationTimestamp"), now));
    } else if (bc == cols_secret) {
        const char *t = cu_jstr(o, "type");
        json_object_array_add(cells, json_object_new_string(t ? t : "Opaque"));
        json_object_array_add(cells, json_object_new_int((int)(jlen(cu_jget(o, "data")) +
                                                               jlen(cu_jget(o, "stringData")))));
        json_object_array_add(cells, age_cell(cu_jstr(meta, "creationTimestamp"), now));
    } else if (bc == cols_crd) {
        const char *ct = cu_jstr(meta, "creationTimestamp");
        json_object_array_add(cells, json_object_new_string(ct ? ct : ""));
    } else if (bc == cols_apisvc) {
        /* as kube-aggregator's: NS/NAME or Local; True, or False (REASON) */
        json_object *svc = cu_jget(cu_jget(o, "spec"), "service");
        char buf[600];
        if (svc)
            snprintf(buf, sizeof buf, "%s/%s",
                     cu_jstr(svc, "namespace") ? cu_jstr(svc, "namespace") : "",
                     cu_jstr(svc, "name") ? cu_jstr(svc, "name") : "");
        else
            snprintf(buf, sizeof buf, "Local");
        json_object_array_add(cells, json_object_new_string(buf));
        json_object *conds = cu_jget(cu_jget(o, "status"), "conditions");
        snprintf(buf, sizeof buf, "Unknown");
        for (size_t i = 0; i < jlen(conds); i++) {
            json_object *c = json_object_array_get_idx(conds, i);
            const char *ty = cu_jstr(c, "type"), *st = cu_jstr(c, "status");
            const char *rs = cu_jstr(c, "reason");
            if (ty && st && strcmp(ty, "Available") == 0)
                snprintf(buf, sizeof buf, strcmp(st, "True") == 0 || !rs ? "%s" : "%s (%s)", st,
                         rs ? rs : "");
        }
        json_object_array_add(cells, json_object_new_string(buf));
        json_object_array_add(cells, age_cell(cu_jstr(meta, "creationTimestamp"), now));
    } else if (bc == cols_lease) {
        const char *h = cu_jstr(cu_jget(o, "spec"), "holderIdentity");
        json_object_array_add(cells, json_object_new_string(h ? h : "<none>"));
        json_object_array_add(cells, age_cell(cu_jstr(meta, "creationTimestamp"), now));
    } else if (bc == cols_pc) {
        json_object_array_add(cells, json_object_new_int(cu_jint(o, "value")));
        json_object *gd = cu_jget(o, "globalDefault");
        json_object_array_add(cells, json_object_new_boolean(gd && json_object_get_boolean(gd)));
        json_object_array_add(cells, age_cell(cu_jstr(meta, "creationTimestamp"), now));
    } else if (bc == cols_whc) {
        json_object_array_add(cells, json_object_new_int((int)jlen(cu_jget(o, "webhooks"))));
        json_object_array_add(cells, age_cell(cu_jstr(meta, "creationTimestamp"), now));
    } else if (bc == cols_sa) {
        json_object_array_add(cells, json_object_new_int((int)jlen(cu_jget(o, "secrets"))));
        json_object_array_add(cells, age_cell(cu_jstr(meta, "creationTimestamp"), now));
    } else {
        json_object_array_add(cells, age_cell(cu_jstr(meta, "creationTimestamp"), now));
    }
    json_object_object_add(row, "cells", cells);
    if (include == 1) {
        json_object *pom = json_object_new_object(), *mc = NULL;
        cu_jset_str(pom, "kind", "PartialObjectMetadata");
        cu_jset_str(pom, "apiVersion", "meta.k8s.io/v1");
        if (meta)
            json_object_deep_copy(meta, &mc, NULL);
        json_object_object_add(pom, "metadata", mc ? mc : json_object_new_object());
        json_object_object_add(row, "object", pom);
    } else if (include == 2) {
        json_object *copy = NULL;
        json_object_deep_copy(o, &copy, NULL);
        json_object_object_add(row, "object", copy);
    }
    return row;
}

json_object *cu_table_build(const cu_rtype *rt, json_object *obj, int include, int with_defs,
                            int64_t now_ms)
{
    json_object *t = json_object_new_object(), *tm = json_object_new_object();
    json_object *rows = json_object_new_array();
    cu_jset_str(t, "kind", "Table");
    cu_jset_str(t, "apiVersion", "meta.k8s.io/v1");
    json_object *items = cu_jget(obj, "items");
    json_object *om = cu_jget(obj, "metadata");
    const char *rv = cu_jstr(om, "resourceVersion"), *cont = cu_jstr(om, "continue");
    if (rv)
        cu_jset_str(tm, "resourceVersion", rv);
    if (items && cont && *cont)
        cu_jset_str(tm, "continue", cont);
    json_object_object_add(t, "metadata", tm);
    json_object_object_add(t, "columnDefinitions",
                           with_defs ? table_defs(rt) : json_object_new_array());
    if (items && json_object_is_type(items, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(items); i++)
            json_object_array_add(
                rows, table_row(rt, json_object_array_get_idx(items, i), include, now_ms));
    } else if (obj) {
        json_object_array_add(rows, table_row(rt, obj, include, now_ms));
    }
    json_object_object_add(t, "rows", rows);
    return t;
}
