/*
 * cu_patch.c - the four ways the Kubernetes API changes an object in place:
 * JSON merge patch (RFC 7386), JSON patch (RFC 6902), strategic merge patch
 * (apimachinery's strategicpatch, with a static table of the patch
 * strategies and merge keys that the built-in types declare) and a
 * server-side apply without field ownership.
 *
 * Invariants:
 *  - every public function borrows its inputs, works on a deep copy and
 *    returns it (or NULL with a message naming the field and the problem);
 *    a failed patch never leaves a half-patched copy behind;
 *  - json-c represents JSON null as a NULL json_object pointer, so "member
 *    present with value null" is told apart with json_object_object_get_ex;
 *  - list order after a strategic merge follows apimachinery: items named
 *    by the patch keep the patch's relative order, items only on the
 *    server keep theirs, and the two are interleaved by the live order
 *    (a new item therefore goes before the server-only items that follow
 *    it, exactly as kube-apiserver does).
 */
#include "cu_patch.h"

#include "cu_base.h"
#include "cu_json.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* small helpers                                                        */

static void seterr(char *err, size_t errn, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void seterr(char *err, size_t errn, const char *fmt, ...)
{
    if (!err || errn == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errn, fmt, ap);
    va_end(ap);
}

static int is_obj(json_object *o) { return o && json_object_is_type(o, json_type_object); }
static int is_arr(json_object *o) { return o && json_object_is_type(o, json_type_array); }

/* Inserts v (taken) into arr at idx (<= length), shifting the tail. */
static void array_insert(json_object *arr, size_t idx, json_object *v)
{
    size_t n = json_object_array_length(arr);
    json_object_array_add(arr, NULL);
    for (size_t i = n; i > idx; i--) {
        json_object *e = json_object_array_get_idx(arr, i - 1);
        json_object_array_put_idx(arr, i, json_object_get(e));
    }
    json_object_array_put_idx(arr, idx, v);
}

/* ------------------------------------------------------------------ */
/* JSON merge patch (RFC 7386)                                          */

/* Applies patch (an object, borrowed) to obj (an object, mutated). */
static void mp_merge_into(json_object *obj, json_object *patch)
{
    json_object_object_foreach (patch, k, pv) {
        if (!pv) {
            json_object_object_del(obj, k);
            continue;
        }
        if (is_obj(pv)) {
            json_object *cur = NULL;
            json_object_object_get_ex(obj, k, &cur);
            if (is_obj(cur)) {
                mp_merge_into(cur, pv);
            } else {
                json_object *fresh = json_object_new_object();
                mp_merge_into(fresh, pv);
                json_object_object_add(obj, k, fresh);
            }
            continue;
        }
        json_object_object_add(obj, k, cu_jcopy(pv));
    }
}

json_object *cu_merge_patch(json_object *target, json_object *patch, char *err, size_t errn)
{
    if (!is_obj(patch)) {
        /* RFC 7386: a non-object patch replaces the whole document; an
         * object resource cannot become a scalar, so refuse it here. */
        seterr(err, errn, "merge patch must be a JSON object, got %s",
               patch ? json_type_to_name(json_object_get_type(patch)) : "null");
        return NULL;
    }
    json_object *res = is_obj(target) ? cu_jcopy(target) : json_object_new_object();
    if (!res) {
        seterr(err, errn, "out of memory");
        return NULL;
    }
    mp_merge_into(res, patch);
    return res;
}

/* ------------------------------------------------------------------ */
/* JSON patch (RFC 6902) with JSON pointers (RFC 6901)                  */

/* A pointer has as many tokens as it has '/': as deep as the document
 * (CU_JSON_MAX_DEPTH), no lower limit. */
typedef struct jp_ptr {
    char *buf; /* one block: the token array, then the unescaped
                       * tokens, NUL-separated (free(buf) frees both) */
    const char **tok;
    size_t n;
} jp_ptr;

/* Parses a JSON pointer; returns 0 or -1 with err set. */
static int jp_parse(const char *s, jp_ptr *p, char *err, size_t errn)
{
    p->n = 0;
    p->buf = NULL;
    if (*s == '\0')
        return 0;
    if (*s != '/') {
        seterr(err, errn, "JSON pointer %s must start with '/'", s);
        return -1;
    }
    size_t len = strlen(s), nt = 0;
    for (const char *r = s; *r; r++)
        nt += *r == '/';
    p->buf = malloc(nt * sizeof *p->tok + len + 1);
    if (!p->buf) {
        seterr(err, errn, "out of memory");
        return -1;
    }
    p->tok = (const char **)(void *)p->buf;
    char *w = p->buf + nt * sizeof *p->tok;
    for (const char *r = s; *r; r++) {
        if (*r == '/') {
            if (p->n > 0)
                *w++ = '\0';
            p->tok[p->n++] = w;
        } else if (*r == '~') {
            if (r[1] == '0')
                *w++ = '~';
            else if (r[1] == '1')
                *w++ = '/';
            else {
                seterr(err, errn, "JSON pointer %s has an invalid escape '~%c'", s,
                       r[1] ? r[1] : ' ');
                return -1;
            }
            r++;
        } else {
            *w++ = *r;
        }
    }
    *w = '\0';
    return 0;
}

/* Parses an array index token: digits without leading zeros. */
static int jp_index(const char *t, size_t *out)
{
    if (!*t || (t[0] == '0' && t[1]) || strlen(t) > 18)
        return -1;
    size_t v = 0;
    for (const char *c = t; *c; c++) {
        if (*c < '0' || *c > '9')
            return -1;
        v = v * 10 + (size_t)(*c - '0');
    }
    *out = v;
    return 0;
}

/* Walks tokens [0, upto) from doc; returns the container or NULL. */
static json_object *jp_walk(json_object *doc, const jp_ptr *p, size_t upto, int *found)
{
    json_object *cur = doc;
    *found = 1;
    for (size_t i = 0; i < upto; i++) {
        if (is_obj(cur)) {
            json_object *nx = NULL;
            if (!json_object_object_get_ex(cur, p->tok[i], &nx)) {
                *found = 0;
                return NULL;
            }
            cur = nx;
        } else if (is_arr(cur)) {
            size_t idx;
            if (jp_index(p->tok[i], &idx) != 0 || idx >= json_object_array_length(cur)) {
                *found = 0;
                return NULL;
            }
            cur = json_object_array_get_idx(cur, idx);
        } else {
            *found = 0;
            return NULL;
        }
    }
    return cur;
}

/* Gets the value at p (borrowed) in *out; returns 0 if it exists. */
static int jp_get(json_object *doc, const jp_ptr *p, json_object **out)
{
    int found;
    if (p->n == 0) {
        *out = doc;
        return 0;
    }
    json_object *parent = jp_walk(doc, p, p->n - 1, &found);
    if (!found)
        return -1;
    const char *last = p->tok[p->n - 1];
    if (is_obj(parent))
        return json_object_object_get_ex(parent, last, out) ? 0 : -1;
    if (is_arr(parent)) {
        size_t idx;
        if (jp_index(last, &idx) != 0 || idx >= json_object_array_length(parent))
            return -1;
        *out = json_object_array_get_idx(parent, idx);
        return 0;
    }
    return -1;
}

/* RFC 6902 add: takes v. *doc may be replaced (path ""). */
static int jp_add(json_object **doc, const jp_ptr *p, json_object *v, const char *op,
                  const char *path, char *err, size_t errn)
{
    int found;
    if (p->n == 0) {
        json_object_put(*doc);
        *doc = v;
        return 0;
    }
    json_object *parent = jp_walk(*doc, p, p->n - 1, &found);
    const char *last = p->tok[p->n - 1];
    if (!found || !(is_obj(parent) || is_arr(parent))) {
        seterr(err, errn, "%s operation does not apply: doc is missing path: \"%s\": missing value",
               op, path);
        json_object_put(v);
        return -1;
    }
    if (is_obj(parent)) {
        json_object_object_add(parent, last, v);
        return 0;
    }
    size_t n = json_object_array_length(parent), idx;
    if (strcmp(last, "-") == 0) {
        idx = n;
    } else if (jp_index(last, &idx) != 0 || idx > n) {
        seterr(
            err, errn,
            "%s operation does not apply: index %s is out of bounds for the array at \"%s\" (length %zu)",
            op, last, path, n);
        json_object_put(v);
        return -1;
    }
    array_insert(parent, idx, v);
    return 0;
}

/* RFC 6902 remove; if taken is non-NULL the removed value is handed to
 * the caller instead of being freed. */
static int jp_remove(json_object *doc, const jp_ptr *p, const char *op, const char *path,
                     json_object **taken, char *err, size_t errn)
{
    int found;
    if (p->n == 0) {
        seterr(err, errn, "%s operation does not apply: cannot remove the whole document", op);
        return -1;
    }
    json_object *parent = jp_walk(doc, p, p->n - 1, &found);
    const char *last = p->tok[p->n - 1];
    if (found && is_obj(parent)) {
        json_object *v = NULL;
        if (json_object_object_get_ex(parent, last, &v)) {
            if (taken)
                *taken = json_object_get(v);
            json_object_object_del(parent, last);
            return 0;
        }
    } else if (found && is_arr(parent)) {
        size_t idx;
        if (jp_index(last, &idx) == 0 && idx < json_object_array_length(parent)) {
            if (taken)
                *taken = json_object_get(json_object_array_get_idx(parent, idx));
            json_object_array_del_idx(parent, idx, 1);
            return 0;
        }
    }
    seterr(err, errn, "%s operation does not apply: doc is missing path: \"%s\": missing value", op,
           path);
    return -1;
}

static const char *op_str(json_object *op, const char *key)
{
    json_object *v = NULL;
    if (!json_object_object_get_ex(op, key, &v) || !v || !json_object_is_type(v, json_type_string))
        return NULL;
    return json_object_get_string(v);
}

/* Applies one operation to *doc; returns 0 or -1 with err set. */
static int jp_apply_op(json_object **doc, json_object *opo, size_t i, char *err, size_t errn)
{
    char why[400];
    why[0] = '\0';
    if (!is_obj(opo)) {
        seterr(err, errn, "json patch operation %zu: must be an object", i);
        return -1;
    }
    const char *op = op_str(opo, "op"), *path = op_str(opo, "path");
    if (!op) {
        seterr(err, errn, "json patch operation %zu: missing or non-string \"op\"", i);
        return -1;
    }
    if (!path) {
        seterr(err, errn, "json patch operation %zu (%s): missing or non-string \"path\"", i, op);
        return -1;
    }
    int needs_value = !strcmp(op, "add") || !strcmp(op, "replace") || !strcmp(op, "test");
    int needs_from = !strcmp(op, "move") || !strcmp(op, "copy");
    if (!needs_value && !needs_from && strcmp(op, "remove") != 0) {
        seterr(err, errn, "json patch operation %zu: unexpected kind of operation \"%s\"", i, op);
        return -1;
    }
    json_object *value = NULL;
    if (needs_value && !json_object_object_get_ex(opo, "value", &value)) {
        seterr(err, errn, "json patch operation %zu (%s %s): missing \"value\"", i, op, path);
        return -1;
    }
    const char *from = NULL;
    if (needs_from && !(from = op_str(opo, "from"))) {
        seterr(err, errn, "json patch operation %zu (%s %s): missing or non-string \"from\"", i, op,
               path);
        return -1;
    }
    jp_ptr p, fp;
    fp.buf = NULL;
    if (jp_parse(path, &p, why, sizeof why) != 0) {
        free(p.buf);
        seterr(err, errn, "json patch operation %zu (%s): %s", i, op, why);
        return -1;
    }
    int rc = -1;
    if (from && jp_parse(from, &fp, why, sizeof why) != 0) {
        seterr(err, errn, "json patch operation %zu (%s): %s", i, op, why);
        goto out;
    }
    if (!strcmp(op, "add")) {
        rc = jp_add(doc, &p, cu_jcopy(value), op, path, why, sizeof why);
    } else if (!strcmp(op, "remove")) {
        rc = jp_remove(*doc, &p, op, path, NULL, why, sizeof why);
    } else if (!strcmp(op, "replace")) {
        json_object *old;
        if (jp_get(*doc, &p, &old) != 0) {
            snprintf(why, sizeof why,
                     "replace operation does not apply: doc is missing key: %s: missing value",
                     path);
        } else if (p.n == 0) {
            json_object_put(*doc);
            *doc = cu_jcopy(value);
            rc = 0;
        } else if ((rc = jp_remove(*doc, &p, op, path, NULL, why, sizeof why)) == 0) {
            rc = jp_add(doc, &p, cu_jcopy(value), op, path, why, sizeof why);
        }
    } else if (!strcmp(op, "test")) {
        json_object *cur;
        if (jp_get(*doc, &p, &cur) != 0)
            snprintf(why, sizeof why, "testing value %s failed: missing value", path);
        else if (!cu_json_equal(cur, value))
            snprintf(why, sizeof why, "testing value %s failed: test failed", path);
        else
            rc = 0;
    } else { /* move, copy */
        json_object *src;
        size_t fl = strlen(from);
        if (jp_get(*doc, &fp, &src) != 0) {
            snprintf(why, sizeof why,
                     "%s operation does not apply: doc is missing from path: \"%s\": missing value",
                     op, from);
        } else if (!strcmp(op, "copy")) {
            rc = jp_add(doc, &p, cu_jcopy(src), op, path, why, sizeof why);
        } else if (strncmp(path, from, fl) == 0 && path[fl] == '/') {
            snprintf(why, sizeof why,
                     "move operation does not apply: \"from\" %s is a prefix of \"path\" %s", from,
                     path);
        } else if (strcmp(path, from) == 0) {
            rc = 0;
        } else {
            json_object *taken = NULL;
            if (fp.n == 0) {
                taken = json_object_get(*doc);
                rc = 0;
            } else {
                rc = jp_remove(*doc, &fp, op, from, &taken, why, sizeof why);
            }
            if (rc == 0)
                rc = jp_add(doc, &p, taken, op, path, why, sizeof why);
        }
    }
    if (rc != 0)
        seterr(err, errn, "json patch operation %zu (%s %s): %s", i, op, path, why);
out:
    free(p.buf);
    free(fp.buf);
    return rc;
}

json_object *cu_json_patch(json_object *target, json_object *ops, char *err, size_t errn)
{
    if (!is_arr(ops)) {
        seterr(err, errn, "json patch must be a JSON array of operations");
        return NULL;
    }
    json_object *doc = cu_jcopy(target);
    size_t n = json_object_array_length(ops);
    for (size_t i = 0; i < n; i++) {
        if (jp_apply_op(&doc, json_object_array_get_idx(ops, i), i, err, errn) != 0) {
            json_object_put(doc);
            return NULL;
        }
    }
    if (!doc)
        seterr(err, errn, "json patch left a null document");
    return doc;
}

/* ------------------------------------------------------------------ */
/* Strategic merge patch: patch metadata of the built-in types          */

enum {
    SMP_MERGE = 1,      /* patchStrategy=merge on a list */
    SMP_RETAIN_KEYS = 2 /* patchStrategy=retainKeys (union fields) */
};

typedef struct smp_type smp_type;
typedef struct smp_field {
    const char *name;
    unsigned flags;
    const char *merge_key; /* patchMergeKey of a list of maps; NULL for sets */
    const smp_type *type;  /* type of the map, or of a list's elements */
} smp_field;
struct smp_type {
    const smp_field *fields;
};

/* Only fields that carry patch metadata, or lead to one, are listed;
 * everything else merges maps and replaces lists. Source: the
 * patchStrategy/patchMergeKey tags of k8s.io/api core/v1, apps/v1,
 * batch/v1 and meta/v1 (ObjectMeta). */
static const smp_field F_meta[] = { { "finalizers", SMP_MERGE, NULL, NULL },
                                    { "ownerReferences", SMP_MERGE, "uid", NULL },
                                    { NULL, 0, NULL, NULL } };
static const smp_type T_meta = { F_meta };

static const smp_field F_container[] = { { "ports", SMP_MERGE, "containerPort", NULL },
                                         { "env", SMP_MERGE, "name", NULL },
                                         { "volumeMounts", SMP_MERGE, "mountPath", NULL },
                                         { "volumeDevices", SMP_MERGE, "devicePath", NULL },
                                         { NULL, 0, NULL, NULL } };
static const smp_type T_container = { F_container };

static const smp_field F_podspec[] = {
    { "volumes", SMP_MERGE | SMP_RETAIN_KEYS, "name", NULL },
    { "initContainers", SMP_MERGE, "name", &T_container },
    { "containers", SMP_MERGE, "name", &T_container },
    { "ephemeralContainers", SMP_MERGE, "name", &T_container },
    { "imagePullSecrets", SMP_MERGE, "name", NULL },
    { "hostAliases", SMP_MERGE, "ip", NULL },
    { "topologySpreadConstraints", SMP_MERGE, "topologyKey", NULL },
    { "schedulingGates", SMP_MERGE, "name", NULL },
    { "resourceClaims", SMP_MERGE | SMP_RETAIN_KEYS, "name", NULL },
    { NULL, 0, NULL, NULL }
};
static const smp_type T_podspec = { F_podspec };

static const smp_field F_podstatus[] = { { "conditions", SMP_MERGE, "type", NULL },
                                         { "podIPs", SMP_MERGE, "ip", NULL },
                                         { "hostIPs", SMP_MERGE, "ip", NULL },
                                         { "resourceClaimStatuses", SMP_MERGE | SMP_RETAIN_KEYS,
                                           "name", NULL },
                                         { NULL, 0, NULL, NULL } };
static const smp_type T_podstatus = { F_podstatus };

static const smp_field F_pod[] = { { "metadata", 0, NULL, &T_meta },
                                   { "spec", 0, NULL, &T_podspec },
                                   { "status", 0, NULL, &T_podstatus },
                                   { NULL, 0, NULL, NULL } };
static const smp_type T_pod = { F_pod };

static const smp_field F_podtemplatespec[] = { { "metadata", 0, NULL, &T_meta },
                                               { "spec", 0, NULL, &T_podspec },
                                               { NULL, 0, NULL, NULL } };
static const smp_type T_podtemplatespec = { F_podtemplatespec };

/* PodTemplate (core/v1) keeps its template under "template". */
static const smp_field F_podtemplate[] = { { "metadata", 0, NULL, &T_meta },
                                           { "template", 0, NULL, &T_podtemplatespec },
                                           { NULL, 0, NULL, NULL } };
static const smp_type T_podtemplate = { F_podtemplate };

/* status.conditions merged by type: Job, Deployment, ReplicaSet,
 * StatefulSet, DaemonSet, Namespace, Service all declare it. */
static const smp_field F_condstatus[] = { { "conditions", SMP_MERGE, "type", NULL },
                                          { NULL, 0, NULL, NULL } };
static const smp_type T_condstatus = { F_condstatus };

static const smp_field F_templated_spec[] = { { "template", 0, NULL, &T_podtemplatespec },
                                              { NULL, 0, NULL, NULL } };
static const smp_type T_templated_spec = { F_templated_spec };

static const smp_field F_templated[] = { { "metadata", 0, NULL, &T_meta },
                                         { "spec", 0, NULL, &T_templated_spec },
                                         { "status", 0, NULL, &T_condstatus },
                                         { NULL, 0, NULL, NULL } };
static const smp_type T_templated = { F_templated }; /* Job, ReplicaSet, StatefulSet, DaemonSet */

static const smp_field F_deployspec[] = { { "template", 0, NULL, &T_podtemplatespec },
                                          { "strategy", SMP_RETAIN_KEYS, NULL, NULL },
                                          { NULL, 0, NULL, NULL } };
static const smp_type T_deployspec = { F_deployspec };

static const smp_field F_deploy[] = { { "metadata", 0, NULL, &T_meta },
                                      { "spec", 0, NULL, &T_deployspec },
                                      { "status", 0, NULL, &T_condstatus },
                                      { NULL, 0, NULL, NULL } };
static const smp_type T_deploy = { F_deploy };

static const smp_field F_jobtemplate[] = { { "metadata", 0, NULL, &T_meta },
                                           { "spec", 0, NULL, &T_templated_spec },
                                           { NULL, 0, NULL, NULL } };
static const smp_type T_jobtemplate = { F_jobtemplate };

static const smp_field F_cronspec[] = { { "jobTemplate", 0, NULL, &T_jobtemplate },
                                        { NULL, 0, NULL, NULL } };
static const smp_type T_cronspec = { F_cronspec };

static const smp_field F_cronjob[] = { { "metadata", 0, NULL, &T_meta },
                                       { "spec", 0, NULL, &T_cronspec },
                                       { NULL, 0, NULL, NULL } };
static const smp_type T_cronjob = { F_cronjob };

static const smp_field F_nodespec[] = { { "podCIDRs", SMP_MERGE, NULL, NULL },
                                        { NULL, 0, NULL, NULL } };
static const smp_type T_nodespec = { F_nodespec };

static const smp_field F_nodestatus[] = { { "conditions", SMP_MERGE, "type", NULL },
                                          { "addresses", SMP_MERGE, "type", NULL },
                                          { NULL, 0, NULL, NULL } };
static const smp_type T_nodestatus = { F_nodestatus };

static const smp_field F_node[] = { { "metadata", 0, NULL, &T_meta },
                                    { "spec", 0, NULL, &T_nodespec },
                                    { "status", 0, NULL, &T_nodestatus },
                                    { NULL, 0, NULL, NULL } };
static const smp_type T_node = { F_node };

static const smp_field F_svcspec[] = { { "ports", SMP_MERGE, "port", NULL },
                                       { NULL, 0, NULL, NULL } };
static const smp_type T_svcspec = { F_svcspec };

static const smp_field F_service[] = { { "metadata", 0, NULL, &T_meta },
                                       { "spec", 0, NULL, &T_svcspec },
                                       { "status", 0, NULL, &T_condstatus },
                                       { NULL, 0, NULL, NULL } };
static const smp_type T_service = { F_service };

static const smp_field F_namespace[] = { { "metadata", 0, NULL, &T_meta },
                                         { "status", 0, NULL, &T_condstatus },
                                         { NULL, 0, NULL, NULL } };
static const smp_type T_namespace = { F_namespace };

static const smp_field F_serviceaccount[] = { { "metadata", 0, NULL, &T_meta },
                                              { "secrets", SMP_MERGE, "name", NULL },
                                              { NULL, 0, NULL, NULL } };
static const smp_type T_serviceaccount = { F_serviceaccount };

/* admissionregistration.k8s.io/v1 webhook configurations: webhooks by name */
static const smp_field F_whconfig[] = { { "metadata", 0, NULL, &T_meta },
                                        { "webhooks", SMP_MERGE, "name", NULL },
                                        { NULL, 0, NULL, NULL } };
static const smp_type T_whconfig = { F_whconfig };

static const smp_field F_metaonly[] = { { "metadata", 0, NULL, &T_meta }, { NULL, 0, NULL, NULL } };
static const smp_type T_metaonly = { F_metaonly };

typedef struct smp_kind {
    const char *group, *kind;
    const smp_type *type;
} smp_kind;

static const smp_kind smp_kinds[] = {
    { "", "Pod", &T_pod },
    { "", "PodTemplate", &T_podtemplate },
    { "", "Node", &T_node },
    { "", "Namespace", &T_namespace },
    { "", "Service", &T_service },
    { "", "ServiceAccount", &T_serviceaccount },
    { "", "ConfigMap", &T_metaonly },
    { "", "Secret", &T_metaonly },
    { "", "Event", &T_metaonly },
    { "", "Endpoints", &T_metaonly },
    { "", "PersistentVolumeClaim", &T_namespace },
    { "", "ReplicationController", &T_templated },
    { "batch", "Job", &T_templated },
    { "batch", "CronJob", &T_cronjob },
    { "apps", "Deployment", &T_deploy },
    { "apps", "ReplicaSet", &T_templated },
    { "apps", "StatefulSet", &T_templated },
    { "apps", "DaemonSet", &T_templated },
    { "events.k8s.io", "Event", &T_metaonly },
    { "coordination.k8s.io", "Lease", &T_metaonly },
    { "scheduling.k8s.io", "PriorityClass", &T_metaonly },
    { "apiextensions.k8s.io", "CustomResourceDefinition", &T_metaonly },
    { "admissionregistration.k8s.io", "MutatingWebhookConfiguration", &T_whconfig },
    { "admissionregistration.k8s.io", "ValidatingWebhookConfiguration", &T_whconfig },
    { NULL, NULL, NULL }
};

/* Returns the patch metadata of a built-in kind, NULL if unknown. */
static const smp_type *smp_lookup_kind(const char *api_version, const char *kind)
{
    if (!kind)
        return NULL;
    const char *av = api_version ? api_version : "v1";
    const char *slash = strchr(av, '/');
    size_t glen = slash ? (size_t)(slash - av) : 0;
    for (const smp_kind *k = smp_kinds; k->kind; k++)
        if (strcmp(k->kind, kind) == 0 && strlen(k->group) == glen &&
            strncmp(k->group, av, glen) == 0)
            return k->type;
    return NULL;
}

static const smp_field *smp_lookup_field(const smp_type *t, const char *name)
{
    if (!t)
        return NULL;
    for (const smp_field *f = t->fields; f->name; f++)
        if (strcmp(f->name, name) == 0)
            return f;
    return NULL;
}

static void smp_member(void *ud, const void *pos, const char *key, cu_fkind *out)
{
    (void)ud;
    const smp_field *f = smp_lookup_field(pos, key);
    if (pos == &T_meta && (strcmp(key, "labels") == 0 || strcmp(key, "annotations") == 0))
        out->map_entries = 1;
    if (!f)
        return;
    if (f->flags & SMP_MERGE) {
        out->list = f->merge_key ? CU_LIST_MAP : CU_LIST_SET;
        if (f->merge_key) {
            out->keys[0] = f->merge_key;
            out->nkeys = 1;
        }
    }
    out->pos = f->type;
}

void cu_patch_field_oracle(const char *api_version, const char *kind, cu_field_oracle *out)
{
    out->member = smp_member;
    out->ud = NULL;
    out->root = smp_lookup_kind(api_version, kind);
}

/* ------------------------------------------------------------------ */
/* Strategic merge patch and apply: the merge engine                    */

#define SMP_PATCH "$patch"
#define SMP_RETAIN "$retainKeys"
#define SMP_ORDER "$setElementOrder/"
#define SMP_DELPRIM "$deleteFromPrimitiveList/"

typedef struct smp_ctx {
    int apply; /* server-side apply: nulls and omissions never delete */
    char *err;
    size_t errn;
    int depth;
} smp_ctx;

static int smp_merge_map(smp_ctx *c, json_object *orig, json_object *patch, const smp_type *t,
                         const char *path);

static void child_path(char *out, size_t n, const char *path, const char *key)
{
    if (!path || !*path)
        snprintf(out, n, "%s", key);
    else
        snprintf(out, n, "%s.%s", path, key);
}

/* The merge key value of a list element (borrowed) or NULL if absent;
 * *has tells present-with-null from absent. */
static json_object *elem_key(json_object *e, const char *mk, int *has)
{
    json_object *v = NULL;
    *has = is_obj(e) && json_object_object_get_ex(e, mk, &v);
    return v;
}

/* Index of the element of list l whose identity matches item, or -1.
 * Identity is the merge key value for maps, the value for primitives. */
static long list_index(json_object *l, json_object *item, const char *mk)
{
    if (!l)
        return -1;
    size_t n = json_object_array_length(l);
    int has_i = 1;
    json_object *ki = mk ? elem_key(item, mk, &has_i) : item;
    if (!has_i)
        return -1;
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(l, i);
        int has_e = 1;
        json_object *ke = mk ? elem_key(e, mk, &has_e) : e;
        if (has_e && cu_json_equal(ki, ke))
            return (long)i;
    }
    return -1;
}

/* apimachinery's ordering rule (normalizeElementOrder): patch_items sorted
 * by `order`, server_only kept in live order, then interleaved using the
 * live order. Returns a new array holding new references. */
static json_object *smp_order(json_object *merged, json_object *order, json_object *live,
                              const char *mk)
{
    size_t n = json_object_array_length(merged);
    json_object **pi = calloc(n ? n : 1, sizeof *pi), **so = calloc(n ? n : 1, sizeof *so);
    long *pidx = calloc(n ? n : 1, sizeof *pidx);
    json_object *out = json_object_new_array_ext((int)n);
    size_t np = 0, ns = 0;
    if (!pi || !so || !pidx || !out) {
        free(pi);
        free(so);
        free(pidx);
        json_object_put(out);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(merged, i);
        long oi = list_index(order, e, mk);
        if (oi >= 0) {
            /* insertion sort by position in order (stable) */
            size_t j = np++;
            while (j > 0 && pidx[j - 1] > oi) {
                pi[j] = pi[j - 1];
                pidx[j] = pidx[j - 1];
                j--;
            }
            pi[j] = e;
            pidx[j] = oi;
        } else {
            so[ns++] = e;
        }
    }
    size_t i = 0, j = 0;
    while (i < ns || j < np) {
        json_object *pick;
        if (i >= ns) {
            pick = pi[j++];
        } else if (j >= np) {
            pick = so[i++];
        } else {
            long li = list_index(live, so[i], mk), ri = list_index(live, pi[j], mk);
            if (li >= 0 && ri >= 0 && li < ri)
                pick = so[i++];
            else
                pick = pi[j++];
        }
        json_object_array_add(out, json_object_get(pick));
    }
    free(pi);
    free(so);
    free(pidx);
    return out;
}

/* Returns a new value for a slot that had no original value: the patch
 * value with directives applied against nothing (nulls dropped, maps with
 * $patch: delete dropped). *drop is set when the value must not be set. */
static json_object *smp_fresh(smp_ctx *c, json_object *pv, const smp_field *f, const char *path,
                              int *drop, int *fail);

/* Merges patch list pl into live list ol (either may be NULL) for a field
 * with patchStrategy=merge. Returns a new array, NULL on error. */
static json_object *smp_merge_list(smp_ctx *c, json_object *ol, json_object *pl, const smp_field *f,
                                   const char *path)
{
    const char *mk = f->merge_key;
    size_t on = ol ? json_object_array_length(ol) : 0, pn = json_object_array_length(pl);
    int maps = 0, prims = 0;
    for (size_t i = 0; i < on + pn; i++) {
        json_object *e =
            i < on ? json_object_array_get_idx(ol, i) : json_object_array_get_idx(pl, i - on);
        if (is_obj(e))
            maps = 1;
        else if (is_arr(e)) {
            seterr(c->err, c->errn, "%s: lists of lists cannot be merged", path);
            return NULL;
        } else
            prims = 1;
    }
    if (maps && prims) {
        seterr(c->err, c->errn, "%s: list element types are not identical", path);
        return NULL;
    }
    if (!maps) {
        /* a set of primitives: union, deduplicated */
        json_object *merged = json_object_new_array();
        for (size_t i = 0; i < on + pn; i++) {
            json_object *e =
                i < on ? json_object_array_get_idx(ol, i) : json_object_array_get_idx(pl, i - on);
            if (list_index(merged, e, NULL) < 0)
                json_object_array_add(merged, cu_jcopy(e));
        }
        if (c->apply)
            return merged;
        json_object *res = smp_order(merged, pl, ol, NULL);
        json_object_put(merged);
        return res;
    }
    if (!mk) {
        seterr(c->err, c->errn, "%s: cannot merge lists without merge key", path);
        return NULL;
    }
    /* special elements: {"$patch": "delete", key: v} and {"$patch": "replace"} */
    json_object *live = json_object_new_array(), *plain = json_object_new_array();
    for (size_t i = 0; i < on; i++)
        json_object_array_add(live, json_object_get(json_object_array_get_idx(ol, i)));
    int replace = 0;
    for (size_t i = 0; i < pn; i++) {
        json_object *e = json_object_array_get_idx(pl, i), *d = NULL;
        int has;
        if (!c->apply && json_object_object_get_ex(e, SMP_PATCH, &d)) {
            const char *dv =
                d && json_object_is_type(d, json_type_string) ? json_object_get_string(d) : "";
            if (!strcmp(dv, "delete")) {
                elem_key(e, mk, &has);
                if (!has) {
                    seterr(
                        c->err, c->errn,
                        "%s[%zu]: $patch: delete element does not contain declared merge key: %s",
                        path, i, mk);
                    goto fail;
                }
                long at;
                while ((at = list_index(live, e, mk)) >= 0)
                    json_object_array_del_idx(live, (size_t)at, 1);
            } else if (!strcmp(dv, "replace")) {
                replace = 1;
            } else if (!strcmp(dv, "merge")) {
                seterr(c->err, c->errn,
                       "%s[%zu]: merging lists cannot yet be specified in the patch", path, i);
                goto fail;
            } else {
                seterr(c->err, c->errn, "%s[%zu]: unknown patch type: %s", path, i, dv);
                goto fail;
            }
            continue;
        }
        json_object *kv = elem_key(e, mk, &has);
        if (!has) {
            seterr(c->err, c->errn, "%s[%zu]: map does not contain declared merge key: %s", path, i,
                   mk);
            goto fail;
        }
        /* server-side apply identifies an item by its key: a null key is
         * none (kube-apiserver: "element that omits key field"), and an
         * item without one would be appended again on every apply */
        if (c->apply && !kv) {
            seterr(c->err, c->errn,
                   "%s[%zu]: associative list with keys has an element that omits key field "
                   "\"%s\"",
                   path, i, mk);
            goto fail;
        }
        json_object_array_add(plain, json_object_get(e));
    }
    if (replace) {
        json_object *res = json_object_new_array();
        size_t n = json_object_array_length(plain);
        for (size_t i = 0; i < n; i++)
            json_object_array_add(res, cu_jcopy(json_object_array_get_idx(plain, i)));
        json_object_put(live);
        json_object_put(plain);
        return res;
    }
    /* merged starts as the live items (new references, mutated in place) */
    json_object *merged = json_object_new_array();
    size_t ln = json_object_array_length(live), nplain = json_object_array_length(plain);
    for (size_t i = 0; i < ln; i++)
        json_object_array_add(merged, json_object_get(json_object_array_get_idx(live, i)));
    for (size_t i = 0; i < nplain; i++) {
        json_object *pe = json_object_array_get_idx(plain, i);
        long at = list_index(merged, pe, mk);
        char ep[512];
        snprintf(ep, sizeof ep, "%s[%zu]", path, i);
        if (at >= 0) {
            json_object *oe = json_object_array_get_idx(merged, (size_t)at);
            if (smp_merge_map(c, oe, pe, f->type, ep) != 0) {
                json_object_put(merged);
                goto fail;
            }
        } else {
            int drop = 0, bad = 0;
            json_object *ne = smp_fresh(c, pe, f, ep, &drop, &bad);
            if (bad) {
                json_object_put(merged);
                goto fail;
            }
            if (!drop)
                json_object_array_add(merged, ne);
        }
    }
    json_object *res = c->apply ? json_object_get(merged) : smp_order(merged, plain, live, mk);
    json_object_put(merged);
    if (!res)
        seterr(c->err, c->errn, "%s: out of memory", path);
    json_object_put(live);
    json_object_put(plain);
    return res;
fail:
    json_object_put(live);
    json_object_put(plain);
    return NULL;
}

static json_object *smp_fresh(smp_ctx *c, json_object *pv, const smp_field *f, const char *path,
                              int *drop, int *fail)
{
    *drop = 0;
    *fail = 0;
    if (!pv) {
        *drop = 1;
        return NULL;
    }
    if (is_obj(pv)) {
        json_object *d = NULL;
        if (!c->apply && json_object_object_get_ex(pv, SMP_PATCH, &d)) {
            const char *dv =
                d && json_object_is_type(d, json_type_string) ? json_object_get_string(d) : "";
            if (!strcmp(dv, "delete")) {
                *drop = 1;
                return NULL;
            }
            if (!strcmp(dv, "replace")) {
                json_object *r = cu_jcopy(pv);
                json_object_object_del(r, SMP_PATCH);
                return r;
            }
        }
        json_object *fresh = json_object_new_object();
        if (smp_merge_map(c, fresh, pv, f ? f->type : NULL, path) != 0) {
            json_object_put(fresh);
            *fail = 1;
            return NULL;
        }
        return fresh;
    }
    if (is_arr(pv) && f && (f->flags & SMP_MERGE)) {
        json_object *r = smp_merge_list(c, NULL, pv, f, path);
        if (!r)
            *fail = 1;
        return r;
    }
    return cu_jcopy(pv);
}

static int str_in_list(json_object *l, const char *s)
{
    size_t n = json_object_array_length(l);
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(l, i);
        if (e && json_object_is_type(e, json_type_string) && !strcmp(json_object_get_string(e), s))
            return 1;
    }
    return 0;
}

/* Merges patch (an object, borrowed) into orig (an object, mutated). A
 * "$patch" directive of patch itself is handled by the caller. */
static int smp_merge_map(smp_ctx *c, json_object *orig, json_object *patch, const smp_type *t,
                         const char *path)
{
    if (++c->depth > CU_JSON_MAX_DEPTH) { /* a body is no deeper; a safety net */
        seterr(c->err, c->errn, "%s: patch is nested too deeply", path);
        return -1;
    }
    int rc = -1;
    json_object *rk = NULL;
    char cp[512];
    size_t nsnap = 0;
    const char *snap_name[16];
    json_object *snap_list[16];
    /* $retainKeys: clear the fields of orig the list does not name */
    if (!c->apply && json_object_object_get_ex(patch, SMP_RETAIN, &rk)) {
        if (!is_arr(rk)) {
            seterr(c->err, c->errn, "%s: $retainKeys must be a list of field names", path);
            goto out;
        }
        json_object_object_foreach (patch, pk, pv) {
            if (!pv || pk[0] == '$')
                continue;
            if (!str_in_list(rk, pk)) {
                seterr(c->err, c->errn,
                       "%s: $retainKeys does not contain field %s that the patch sets", path, pk);
                goto out;
            }
        }
        /* collect first: deleting while iterating orig is unsafe */
        size_t nk = (size_t)json_object_object_length(orig), ndel = 0;
        const char **del = calloc(nk ? nk : 1, sizeof *del);
        if (!del)
            goto out;
        json_object_object_foreach (orig, ok, ov) {
            (void)ov;
            if (!str_in_list(rk, ok))
                del[ndel++] = ok;
        }
        for (size_t i = 0; i < ndel; i++) {
            char *k = strdup(del[i]);
            if (k) {
                json_object_object_del(orig, k);
                free(k);
            }
        }
        free(del);
    }
    /* the live lists that $setElementOrder directives reorder, as they
     * were before this patch (apimachinery's "server order") */
    json_object_object_foreach (patch, ok0, ov0) {
        (void)ov0;
        json_object *l = NULL;
        if (c->apply || strncmp(ok0, SMP_ORDER, strlen(SMP_ORDER)) != 0 || nsnap >= 16)
            continue;
        json_object_object_get_ex(orig, ok0 + strlen(SMP_ORDER), &l);
        snap_name[nsnap] = ok0 + strlen(SMP_ORDER);
        snap_list[nsnap++] = is_arr(l) ? json_object_get(l) : NULL;
    }
    /* $deleteFromPrimitiveList/<list> before the list merges */
    json_object_object_foreach (patch, dk, dv) {
        if (c->apply || strncmp(dk, SMP_DELPRIM, strlen(SMP_DELPRIM)) != 0)
            continue;
        const char *lname = dk + strlen(SMP_DELPRIM);
        json_object *ol = NULL;
        if (!is_arr(dv)) {
            seterr(c->err, c->errn, "%s: %s must be a list", path, dk);
            goto out;
        }
        if (!json_object_object_get_ex(orig, lname, &ol) || !is_arr(ol))
            continue;
        json_object *kept = json_object_new_array();
        size_t n = json_object_array_length(ol);
        for (size_t i = 0; i < n; i++) {
            json_object *e = json_object_array_get_idx(ol, i);
            if (list_index(dv, e, NULL) < 0)
                json_object_array_add(kept, cu_jcopy(e));
        }
        json_object_object_add(orig, lname, kept);
    }
    /* the fields */
    json_object_object_foreach (patch, k, pv) {
        if (k[0] == '$') {
            if (c->apply) {
                seterr(c->err, c->errn,
                       "%s: apply configuration may not contain patch directive %s", path, k);
                goto out;
            }
            if (strcmp(k, SMP_PATCH) && strcmp(k, SMP_RETAIN) &&
                strncmp(k, SMP_ORDER, strlen(SMP_ORDER)) &&
                strncmp(k, SMP_DELPRIM, strlen(SMP_DELPRIM))) {
                seterr(c->err, c->errn, "%s: unknown patch directive %s", path, k);
                goto out;
            }
            continue;
        }
        child_path(cp, sizeof cp, path, k);
        const smp_field *f = smp_lookup_field(t, k);
        json_object *ov = NULL;
        int has = json_object_object_get_ex(orig, k, &ov);
        if (!pv) {
            if (!c->apply)
                json_object_object_del(orig, k);
            continue;
        }
        if (is_obj(pv) && is_obj(ov)) {
            json_object *d = NULL;
            if (!c->apply && json_object_object_get_ex(pv, SMP_PATCH, &d)) {
                const char *how =
                    d && json_object_is_type(d, json_type_string) ? json_object_get_string(d) : "";
                if (!strcmp(how, "delete")) {
                    json_object_object_del(orig, k);
                    continue;
                }
                if (!strcmp(how, "replace")) {
                    json_object *r = cu_jcopy(pv);
                    json_object_object_del(r, SMP_PATCH);
                    json_object_object_add(orig, k, r);
                    continue;
                }
                if (strcmp(how, "merge") != 0) {
                    seterr(c->err, c->errn, "%s: unknown patch type: %s", cp, how);
                    goto out;
                }
            }
            if (smp_merge_map(c, ov, pv, f ? f->type : NULL, cp) != 0)
                goto out;
            continue;
        }
        if (is_arr(pv) && f && (f->flags & SMP_MERGE) && (!has || !ov || is_arr(ov))) {
            json_object *m = smp_merge_list(c, is_arr(ov) ? ov : NULL, pv, f, cp);
            if (!m)
                goto out;
            json_object_object_add(orig, k, m);
            continue;
        }
        int drop, bad;
        json_object *nv = smp_fresh(c, pv, f, cp, &drop, &bad);
        if (bad)
            goto out;
        if (drop)
            json_object_object_del(orig, k);
        else
            json_object_object_add(orig, k, nv);
    }
    /* $setElementOrder/<list>: enforce the order the client sent */
    json_object_object_foreach (patch, sk, sv) {
        if (c->apply || strncmp(sk, SMP_ORDER, strlen(SMP_ORDER)) != 0)
            continue;
        const char *lname = sk + strlen(SMP_ORDER);
        const smp_field *f = smp_lookup_field(t, lname);
        json_object *ml = NULL;
        if (!is_arr(sv)) {
            seterr(c->err, c->errn, "%s: %s must be a list", path, sk);
            goto out;
        }
        if (!f || !(f->flags & SMP_MERGE))
            continue; /* replaced lists already have the patch's order */
        if (!json_object_object_get_ex(orig, lname, &ml) || !is_arr(ml))
            continue;
        json_object *before = NULL;
        for (size_t i = 0; i < nsnap; i++)
            if (!strcmp(snap_name[i], lname))
                before = snap_list[i];
        json_object *ordered = smp_order(ml, sv, before, f->merge_key);
        if (!ordered) {
            seterr(c->err, c->errn, "%s: out of memory", path);
            goto out;
        }
        json_object_object_add(orig, lname, ordered);
    }
    rc = 0;
out:
    for (size_t i = 0; i < nsnap; i++)
        json_object_put(snap_list[i]);
    c->depth--;
    return rc;
}

static json_object *smp_run(json_object *target, json_object *patch, const char *api_version,
                            const char *kind, int apply, char *err, size_t errn)
{
    smp_ctx c = { apply, err, errn, 0 };
    const char *what = apply ? "apply configuration" : "strategic merge patch";
    if (!is_obj(patch)) {
        seterr(err, errn, "%s must be a JSON object, got %s", what,
               patch ? json_type_to_name(json_object_get_type(patch)) : "null");
        return NULL;
    }
    const smp_type *t = smp_lookup_kind(api_version, kind);
    json_object *d = NULL;
    if (!apply && json_object_object_get_ex(patch, SMP_PATCH, &d)) {
        const char *dv =
            d && json_object_is_type(d, json_type_string) ? json_object_get_string(d) : "";
        if (!strcmp(dv, "replace")) {
            json_object *r = cu_jcopy(patch);
            json_object_object_del(r, SMP_PATCH);
            return r;
        }
        if (!strcmp(dv, "delete"))
            return json_object_new_object();
        if (strcmp(dv, "merge") != 0) {
            seterr(err, errn, "unknown patch type: %s", dv);
            return NULL;
        }
    }
    json_object *res = is_obj(target) ? cu_jcopy(target) : json_object_new_object();
    if (!res) {
        seterr(err, errn, "out of memory");
        return NULL;
    }
    if (smp_merge_map(&c, res, patch, t, "") != 0) {
        json_object_put(res);
        return NULL;
    }
    return res;
}

json_object *cu_strategic_merge_patch(json_object *target, json_object *patch,
                                      const char *api_version, const char *kind, char *err,
                                      size_t errn)
{
    return smp_run(target, patch, api_version, kind, 0, err, errn);
}

/* Server-side apply, simplified: there are no managedFields and no
 * ownership conflicts. The applied configuration is merged into the live
 * object: maps recursively, lists with a merge key (or primitive sets)
 * by key with live items first and new ones appended, all other lists
 * and scalars replaced. Fields the configuration does not mention, and
 * fields it sets to null, are left as they are. */
json_object *cu_apply_patch(json_object *target, json_object *applied, const char *api_version,
                            const char *kind, char *err, size_t errn)
{
    return smp_run(target, applied, api_version, kind, 1, err, errn);
}
