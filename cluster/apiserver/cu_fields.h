/*
 * cu_fields.h - Kubernetes field management: the field sets of
 * metadata.managedFields (FieldsV1), ownership transfer on updates, and
 * server-side apply with conflicts, forced takeover, shared ownership and
 * removal of fields an applier stopped applying.
 *
 * Field sets are kept in their FieldsV1 form, a json-c trie:
 * {"f:spec":{"f:replicas":{}}, "f:status":{"f:conditions":{
 *   "k:{\"type\":\"Ready\"}":{".":{},"f:status":{}}}}}.
 * A node is in the set when it is a leaf ({}) or holds ".".
 *
 * How lists merge (and so how their items are named) comes from a
 * "list-type oracle": CRD schemas (x-kubernetes-list-type, -list-map-keys,
 * -map-type) or, for built-in kinds, the strategic-merge key table of
 * cu_patch.c. metadata is built in: labels/annotations are granular maps,
 * ownerReferences a map list keyed by uid, finalizers a set.
 */
#ifndef CU_FIELDS_H
#define CU_FIELDS_H

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>

enum { CU_LIST_ATOMIC = 0, CU_LIST_SET, CU_LIST_MAP };

/* What the oracle says about one member of an object. */
typedef struct cu_fkind {
    int list;            /* when the member is a list: CU_LIST_* */
    const char *keys[4]; /* list-map keys (borrowed from the oracle) */
    size_t nkeys;
    int atomic;      /* an atomic object (x-kubernetes-map-type: atomic) */
    int map_entries; /* the member is an object whose keys are map keys
                              (additionalProperties), not declared fields */
    const void *pos; /* oracle position of the member's object value, or
                              of the list's items; NULL = unknown */
} cu_fkind;

/* Describes member key of the object at position pos (NULL = unknown:
 * the oracle may still answer, e.g. from defaults). out is zeroed first. */
typedef void (*cu_field_member_fn)(void *ud, const void *pos, const char *key, cu_fkind *out);

typedef struct cu_field_oracle {
    cu_field_member_fn member; /* NULL: every list atomic, every object a struct */
    void *ud;
    const void *root; /* position of the whole object */
} cu_field_oracle;

/* An oracle over a CRD's openAPIV3Schema (borrowed; may be NULL). */
void cu_fields_schema_oracle(json_object *schema, cu_field_oracle *out);

/* Which part of the object a write touches: everything but status (main
 * endpoint of a type with a status subresource), only status (the status
 * subresource), or everything. */
enum { CU_SCOPE_ALL = 0, CU_SCOPE_NO_STATUS, CU_SCOPE_STATUS };

/* ---- sets (json-c tries, caller puts what is returned) ---- */

/* The set of an applied configuration (what it specifies): leaves, list
 * items ("." of k:/v: nodes), empty objects. Identity metadata (name,
 * namespace, uid, resourceVersion, ...), apiVersion and kind are left
 * out. A new trie. */
json_object *cu_fields_of(json_object *obj, const cu_field_oracle *o, int scope);
/* Update diff old -> new: *changed receives the added or modified paths
 * (with "." for containers that were added), *removed the paths present
 * in old but not in new. Both new tries (caller puts). */
void cu_fields_diff(json_object *old, json_object *nw, const cu_field_oracle *o, int scope,
                    json_object **changed, json_object **removed);
/* dst |= src (dst modified, src borrowed). */
void cu_fset_union(json_object *dst, json_object *src);
/* dst -= src: every member of src leaves dst, and a member whose whole
 * subtree is in src goes with it. Returns 1 when dst changed. */
int cu_fset_subtract(json_object *dst, json_object *src);
/* Number of members (for tests). */
size_t cu_fset_count(json_object *set);
/* Returns 1 when path (a FieldsV1 path like ".spec.replicas" is NOT
 * accepted here: pass the trie keys, NULL-terminated, e.g.
 * {"f:spec","f:replicas",NULL}) is a member of set. */
int cu_fset_has(json_object *set, const char *const *keys);
/* Sorts a trie like Kubernetes serializes it ("." first, then f:, k:,
 * v:, i: entries, each in byte order). In place. */
void cu_fset_sort(json_object *set);

/* ---- managedFields ---- */

typedef struct cu_fm_req {
    const char *manager;     /* fieldManager (or derived from the User-Agent) */
    const char *api_version; /* of the request, e.g. "kueue.x-k8s.io/v1beta1" */
    const char *subresource; /* "status" or NULL */
    const char *now;         /* RFC 3339 time for entries that change */
    int force;               /* apply: take conflicting fields over */
} cu_fm_req;

/* A conflict report: the Status of a 409, ready to be filled into a
 * cu_status by the caller. */
typedef struct cu_fm_conflict {
    size_t n;           /* number of conflicts (may exceed the kept causes) */
    char message[1024]; /* "Apply failed with 1 conflict: conflict with \"m\": .spec.x" */
    size_t ncauses;
    struct {
        char field[256];
        char message[256];
    } causes[32];
} cu_fm_conflict;

/* Records an Update (create, PUT, merge/JSON/strategic patch) that turns
 * old (NULL on create) into nw: nw's metadata.managedFields are rebuilt
 * from old's (or from nw's own when the client changed them; [{}] clears
 * them). Borrows old; modifies nw. Returns 0, or -1 with a message in err
 * when the client sent managedFields that are not valid. */
int cu_fields_update(json_object *old, json_object *nw, const cu_field_oracle *o, int scope,
                     const cu_fm_req *r, char *err, size_t errn);

/* Server-side apply of applied onto live (NULL: the object does not
 * exist yet). Returns the new object (caller puts) with its
 * managedFields, or NULL: with *conflict filled (conflict->n > 0) on
 * ownership conflicts, or with a message in err for a bad configuration.
 * Borrows live and applied. */
json_object *cu_fields_apply(json_object *live, json_object *applied, const cu_field_oracle *o,
                             int scope, const cu_fm_req *r, cu_fm_conflict *conflict, char *err,
                             size_t errn);

/* The default manager for a non-apply write without fieldManager: the
 * User-Agent up to the first "/" ("curl/8.5.0" -> "curl"), at most 128
 * bytes, or "unknown" when there is none. */
void cu_fields_default_manager(const char *user_agent, char *out, size_t n);

#endif
