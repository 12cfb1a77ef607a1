/*
 * cu_protobuf.c - decodes the Kubernetes protobuf encoding
 * (application/vnd.kubernetes.protobuf) of the few built-in kinds that
 * kubectl's typed clients send that way (kubectl create namespace,
 * configmap, secret, serviceaccount, priorityclass) into the JSON form
 * the store keeps. The envelope is the 4-byte magic "k8s\0" and a
 * runtime.Unknown message {typeMeta{apiVersion, kind}, raw}; raw is the
 * kind's own message, read with a field table per kind. Unknown fields
 * are skipped, as a proto reader does.
 */
#include "cu_apiserver.h"
#include "cu_base64.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { F_STR = 1, F_B64, F_INT, F_BOOL, F_MSG, F_MAP_SS, F_MAP_SB, F_REP_STR, F_REP_MSG, F_TIME };

typedef struct pb_field {
    unsigned num;
    const char *name;
    int type;
    const struct pb_field *sub; /* F_MSG / F_REP_MSG */
} pb_field;

static const pb_field f_ownerref[] = { { 1, "kind", F_STR, NULL },
                                       { 3, "name", F_STR, NULL },
                                       { 4, "uid", F_STR, NULL },
                                       { 5, "apiVersion", F_STR, NULL },
                                       { 6, "controller", F_BOOL, NULL },
                                       { 7, "blockOwnerDeletion", F_BOOL, NULL },
                                       { 0, NULL, 0, NULL } };
static const pb_field f_meta[] = { { 1, "name", F_STR, NULL },
                                   { 2, "generateName", F_STR, NULL },
                                   { 3, "namespace", F_STR, NULL },
                                   { 5, "uid", F_STR, NULL },
                                   { 6, "resourceVersion", F_STR, NULL },
                                   { 7, "generation", F_INT, NULL },
                                   { 8, "creationTimestamp", F_TIME, NULL },
                                   { 11, "labels", F_MAP_SS, NULL },
                                   { 12, "annotations", F_MAP_SS, NULL },
                                   { 13, "ownerReferences", F_REP_MSG, f_ownerref },
                                   { 14, "finalizers", F_REP_STR, NULL },
                                   { 0, NULL, 0, NULL } };
static const pb_field f_ns_spec[] = { { 1, "finalizers", F_REP_STR, NULL }, { 0, NULL, 0, NULL } };
static const pb_field f_ns_status[] = { { 1, "phase", F_STR, NULL }, { 0, NULL, 0, NULL } };
static const pb_field f_namespace[] = { { 1, "metadata", F_MSG, f_meta },
                                        { 2, "spec", F_MSG, f_ns_spec },
                                        { 3, "status", F_MSG, f_ns_status },
                                        { 0, NULL, 0, NULL } };
static const pb_field f_configmap[] = { { 1, "metadata", F_MSG, f_meta },
                                        { 2, "data", F_MAP_SS, NULL },
                                        { 3, "binaryData", F_MAP_SB, NULL },
                                        { 4, "immutable", F_BOOL, NULL },
                                        { 0, NULL, 0, NULL } };
static const pb_field f_secret[] = {
    { 1, "metadata", F_MSG, f_meta }, { 2, "data", F_MAP_SB, NULL },
    { 3, "type", F_STR, NULL },       { 4, "stringData", F_MAP_SS, NULL },
    { 5, "immutable", F_BOOL, NULL }, { 0, NULL, 0, NULL }
};
static const pb_field f_objref[] = {
    { 1, "kind", F_STR, NULL }, { 2, "namespace", F_STR, NULL },  { 3, "name", F_STR, NULL },
    { 4, "uid", F_STR, NULL },  { 5, "apiVersion", F_STR, NULL }, { 0, NULL, 0, NULL }
};
static const pb_field f_localref[] = { { 1, "name", F_STR, NULL }, { 0, NULL, 0, NULL } };
static const pb_field f_sa[] = { { 1, "metadata", F_MSG, f_meta },
                                 { 2, "secrets", F_REP_MSG, f_objref },
                                 { 3, "imagePullSecrets", F_REP_MSG, f_localref },
                                 { 4, "automountServiceAccountToken", F_BOOL, NULL },
                                 { 0, NULL, 0, NULL } };
static const pb_field f_pc[] = {
    { 1, "metadata", F_MSG, f_meta },       { 2, "value", F_INT, NULL },
    { 3, "globalDefault", F_BOOL, NULL },   { 4, "description", F_STR, NULL },
    { 5, "preemptionPolicy", F_STR, NULL }, { 0, NULL, 0, NULL }
};

static const struct {
    const char *api_version, *kind;
    const pb_field *fields;
} kinds[] = {
    { "v1", "Namespace", f_namespace },
    { "v1", "ConfigMap", f_configmap },
    { "v1", "Secret", f_secret },
    { "v1", "ServiceAccount", f_sa },
    { "scheduling.k8s.io/v1", "PriorityClass", f_pc },
};

typedef struct pb {
    const unsigned char *p, *end;
} pb;

static int rd_varint(pb *b, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; shift < 64 && b->p < b->end; shift += 7) {
        unsigned char c = *b->p++;
        *v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80))
            return 0;
    }
    return -1;
}

/* Reads one field header and, for length-delimited fields, its bytes. */
static int rd_field(pb *b, unsigned *num, unsigned *wt, uint64_t *v, pb *sub)
{
    uint64_t key;
    if (rd_varint(b, &key) != 0)
        return -1;
    *num = (unsigned)(key >> 3);
    *wt = (unsigned)(key & 7);
    switch (*wt) {
    case 0: return rd_varint(b, v);
    case 1:
        if (b->end - b->p < 8)
            return -1;
        b->p += 8;
        return 0;
    case 5:
        if (b->end - b->p < 4)
            return -1;
        b->p += 4;
        return 0;
    case 2:
        if (rd_varint(b, v) != 0 || *v > (uint64_t)(b->end - b->p))
            return -1;
        sub->p = b->p;
        sub->end = b->p + *v;
        b->p += *v;
        return 0;
    default: return -1;
    }
}

static json_object *str_of(pb s)
{
    return json_object_new_string_len((const char *)s.p, (int)(s.end - s.p));
}

static json_object *b64_of(pb s)
{
    char *e = cu_base64_encode(s.p, (size_t)(s.end - s.p));
    json_object *o = json_object_new_string(e ? e : "");
    free(e);
    return o;
}

static int decode_msg(pb b, const pb_field *fields, json_object *out);

/* A map entry {1: key, 2: value}. */
static int map_entry(pb s, int bytes_val, json_object *map)
{
    unsigned num, wt;
    uint64_t v;
    pb sub, key = { NULL, NULL }, val = { NULL, NULL };
    while (s.p < s.end) {
        if (rd_field(&s, &num, &wt, &v, &sub) != 0)
            return -1;
        if (wt == 2 && num == 1)
            key = sub;
        else if (wt == 2 && num == 2)
            val = sub;
    }
    /* a NUL would cut the key short (json-c keys are C strings): refused,
     * never merged with another key */
    if (!key.p || memchr(key.p, 0, (size_t)(key.end - key.p)))
        return -1;
    char *k = strndup((const char *)key.p, (size_t)(key.end - key.p));
    if (!k)
        return -1;
    pb empty = { key.p, key.p };
    json_object_object_add(map, k,
                           bytes_val ? b64_of(val.p ? val : empty) : str_of(val.p ? val : empty));
    free(k);
    return 0;
}

static int decode_msg(pb b, const pb_field *fields, json_object *out)
{
    while (b.p < b.end) {
        unsigned num, wt;
        uint64_t v = 0;
        pb sub = { NULL, NULL };
        if (rd_field(&b, &num, &wt, &v, &sub) != 0)
            return -1;
        const pb_field *f = fields;
        while (f->name && f->num != num)
            f++;
        if (!f->name)
            continue;
        json_object *cur = NULL;
        json_object_object_get_ex(out, f->name, &cur);
        switch (f->type) {
        case F_STR:
        case F_B64:
            if (wt != 2)
                return -1;
            if (sub.p == sub.end)
                break; /* Go writes empty strings; JSON omits them */
            json_object_object_add(out, f->name, f->type == F_STR ? str_of(sub) : b64_of(sub));
            break;
        case F_INT:
            if (wt != 0)
                return -1;
            if (v == 0 && strcmp(f->name, "generation") == 0)
                break;
            json_object_object_add(out, f->name, json_object_new_int64((int64_t)v));
            break;
        case F_BOOL:
            if (wt != 0)
                return -1;
            json_object_object_add(out, f->name, json_object_new_boolean(v != 0));
            break;
        case F_TIME: {
            if (wt != 2)
                return -1;
            unsigned n2, w2;
            uint64_t secs = 0, x;
            pb s2;
            while (sub.p < sub.end) {
                if (rd_field(&sub, &n2, &w2, &x, &s2) != 0)
                    return -1;
                if (n2 == 1 && w2 == 0)
                    secs = x;
            }
            if (secs == 0)
                break;                     /* a zero Time */
            int64_t ssecs = (int64_t)secs; /* a varint int64: two's complement */
            if (ssecs > INT64_MAX / 1000 || ssecs < INT64_MIN / 1000)
                return -1; /* no time at all (ms would overflow) */
            char ts[32];
            cu_time_format(ssecs * 1000, ts, sizeof ts);
            json_object_object_add(out, f->name, json_object_new_string(ts));
            break;
        }
        case F_MSG: {
            if (wt != 2)
                return -1;
            if (!cur) {
                cur = json_object_new_object();
                json_object_object_add(out, f->name, cur);
            }
            if (decode_msg(sub, f->sub, cur) != 0)
                return -1;
            break;
        }
        case F_MAP_SS:
        case F_MAP_SB:
            if (wt != 2)
                return -1;
            if (!cur) {
                cur = json_object_new_object();
                json_object_object_add(out, f->name, cur);
            }
            if (map_entry(sub, f->type == F_MAP_SB, cur) != 0)
                return -1;
            break;
        case F_REP_STR:
        case F_REP_MSG:
            if (wt != 2)
                return -1;
            if (!cur) {
                cur = json_object_new_array();
                json_object_object_add(out, f->name, cur);
            }
            if (f->type == F_REP_STR) {
                json_object_array_add(cur, str_of(sub));
            } else {
                json_object *m = json_object_new_object();
                json_object_array_add(cur, m);
                if (decode_msg(sub, f->sub, m) != 0)
                    return -1;
            }
            break;
        default: break;
        }
    }
    return 0;
}

json_object *cu_k8s_protobuf_to_json(const unsigned char *data, size_t n, char *err, size_t errn)
{
    if (n < 4 || memcmp(data, "k8s\0", 4) != 0) {
        snprintf(err, errn, "not a Kubernetes protobuf message (no k8s magic prefix)");
        return NULL;
    }
    pb b = { data + 4, data + n }, raw = { NULL, NULL }, tm = { NULL, NULL };
    while (b.p < b.end) {
        unsigned num, wt;
        uint64_t v;
        pb sub;
        if (rd_field(&b, &num, &wt, &v, &sub) != 0) {
            snprintf(err, errn, "malformed protobuf envelope");
            return NULL;
        }
        if (wt == 2 && num == 1)
            tm = sub;
        else if (wt == 2 && num == 2)
            raw = sub;
    }
    char av[128] = "", kind[128] = "";
    while (tm.p && tm.p < tm.end) {
        unsigned num, wt;
        uint64_t v;
        pb sub;
        if (rd_field(&tm, &num, &wt, &v, &sub) != 0)
            break;
        size_t l = (size_t)(sub.end - sub.p);
        if (wt == 2 && num == 1 && l < sizeof av)
            snprintf(av, sizeof av, "%.*s", (int)l, (const char *)sub.p);
        else if (wt == 2 && num == 2 && l < sizeof kind)
            snprintf(kind, sizeof kind, "%.*s", (int)l, (const char *)sub.p);
    }
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        if (strcmp(kinds[i].api_version, av) != 0 || strcmp(kinds[i].kind, kind) != 0)
            continue;
        json_object *o = json_object_new_object();
        json_object_object_add(o, "apiVersion", json_object_new_string(av));
        json_object_object_add(o, "kind", json_object_new_string(kind));
        if (raw.p && decode_msg(raw, kinds[i].fields, o) != 0) {
            json_object_put(o);
            snprintf(err, errn, "malformed protobuf %s", kind);
            return NULL;
        }
        return o;
    }
    snprintf(err, errn,
             "protobuf bodies are accepted for Namespace, ConfigMap, Secret, "
             "ServiceAccount and PriorityClass only, not %s %s; send JSON",
             av[0] ? av : "(no apiVersion)", kind[0] ? kind : "(no kind)");
    return NULL;
}
