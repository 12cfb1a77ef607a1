/*
 * cu_objmeta.h - the input checks kube-apiserver makes on every object
 * whatever its kind, for `cueue cluster`:
 *  - ObjectMeta: the type of each field, label keys and values, annotation
 *    keys and their total size, finalizers, owner references, timestamps,
 *    and NUL characters (names are C strings in the store: a NUL would
 *    truncate them silently);
 *  - the top-level field types of the built-in kinds (ConfigMap data and
 *    binaryData, Secret data and stringData, spec and status objects);
 *  - JSON bodies before json-c parses them: what json-c cannot keep
 *    (a NUL in an object key, a number out of range) and the one nesting
 *    limit, CU_JSON_MAX_DEPTH.
 * Messages are kube-apiserver's wording (field, reason type, detail).
 */
#ifndef CU_OBJMETA_H
#define CU_OBJMETA_H

#include "cu_schema.h"

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>

/* Validates obj's metadata and, when builtin, the top-level fields of
 * kind. Writes up to max errors (field, type, message) to errs and
 * returns how many there were (0 = valid). Borrows obj. */
size_t cu_objmeta_validate(json_object *obj, const char *kind, int builtin, cu_schema_err *errs,
                           size_t max);

/* Checks a JSON text before parsing: nesting deeper than CU_JSON_MAX_DEPTH,
 * a NUL (\u0000) in an object key, a number that is not finite as a
 * float64 (1e400). Integers outside int64 are rewritten as the float64
 * kube-apiserver turns them into (1.2345678901234568e+29): then
 * *rewritten is a new malloc'ed text of *rlen bytes (caller frees), else
 * NULL. Returns 0, or -1 with a message in err. */
int cu_json_prescan(const char *text, size_t len, char **rewritten, size_t *rlen, char *err,
                    size_t errn);

/* Parses a JSON text as every input of the cluster is parsed: prescan,
 * then json-c with depth CU_JSON_MAX_DEPTH + 1 and nothing after the value.
 * Its numbers serialize as Go writes them (cu_json_go_numbers).
 * Returns a new object or NULL with a message in err ("null" parses to
 * NULL too: *is_null is set then, when is_null is not NULL). */
json_object *cu_json_parse_checked(const char *text, size_t len, int *is_null, char *err,
                                   size_t errn);

/* An integer query parameter: 0 when absent (value NULL, *out untouched)
 * or valid in [min, max] (*out set), else -1 with the 400 message in err. */
int cu_query_int(const char *name, const char *value, int64_t min, int64_t max, int64_t *out,
                 char *err, size_t errn);

#endif
