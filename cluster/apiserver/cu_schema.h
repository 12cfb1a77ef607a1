/*
 * cu_schema.h - validation of custom resources against a CRD's structural
 * openAPIV3Schema, as kube-apiserver does it: type (object, array,
 * string, integer, number, boolean), required, enum, minimum/maximum
 * (exclusive too), minLength/maxLength, minItems/maxItems,
 * minProperties/maxProperties, pattern (ECMA subset via POSIX regex),
 * format int-or-string (x-kubernetes-int-or-string), nullable,
 * x-kubernetes-preserve-unknown-fields, additionalProperties (schema or
 * bool), x-kubernetes-list-type map/set keys unique; defaults applied
 * first (as the API server does on create and update); unknown fields
 * pruned (reported when strict).
 */
#ifndef CU_SCHEMA_H
#define CU_SCHEMA_H

#include <json-c/json.h>
#include <stdarg.h>
#include <stddef.h>

typedef struct cu_schema_err {
    char field[256];   /* "spec.resourceGroups[0].flavors[0].name" */
    char type[32];     /* FieldValueRequired, FieldValueInvalid,
                                 FieldValueNotSupported, FieldValueTooLong,
                                 FieldValueTooMany, FieldValueDuplicate,
                                 FieldValueTypeInvalid, UnknownField */
    char message[512]; /* kube-apiserver's detail, e.g.
                                 `Unsupported value: "Fifo": supported values:
                                  "StrictFIFO", "BestEffortFIFO"` */
} cu_schema_err;

/* The error list every check that reports cu_schema_err keeps: writes
 * errs[*n] (field, type, the message of fmt) when *n < max and errs is not
 * NULL, and counts it in *n whatever (so *n may pass max: the count of all
 * problems). */
void cu_schema_err_vadd(cu_schema_err *errs, size_t max, size_t *n, const char *field,
                        const char *type, const char *fmt, va_list ap)
    __attribute__((format(printf, 6, 0)));

/* The JSON type name kube-openapi uses in its messages: "integer",
 * "number", "object", ... ("null" for json_type_null). */
const char *cu_schema_type_name(json_type t);

/* Applies defaults from schema to obj (in place), prunes unknown fields
 * (reporting them as UnknownField errors only when strict) and validates.
 * Writes up to max errors to errs and returns how many problems there
 * were (0 = valid). The "metadata", "apiVersion" and "kind" fields of the
 * root are not checked against the schema. */
size_t cu_schema_validate(json_object *schema, json_object *obj, int strict, cu_schema_err *errs,
                          size_t max);

/* The compiled patterns of one schema: every "pattern" in it compiled
 * once, then only read (safe to share between threads). Returns a new
 * cache, caller frees with cu_schema_rx_free, before the schema goes. */
typedef struct cu_schema_rx cu_schema_rx;
cu_schema_rx *cu_schema_rx_new(json_object *schema);
void cu_schema_rx_free(cu_schema_rx *rx);

/* cu_schema_validate with the schema's compiled patterns (borrowed; NULL:
 * each pattern is compiled once for this call). */
size_t cu_schema_validate_rx(json_object *schema, const cu_schema_rx *rx, json_object *obj,
                             int strict, cu_schema_err *errs, size_t max);

/* Checks a schema itself as kube-apiserver's CRD validation does: counts
 * (maxLength, minItems, ...) are integers >= 0, multipleOf > 0, minimum
 * and maximum are numbers, patterns compile, defaults are valid against
 * their schema. path prefixes the fields ("spec.versions[0].schema.
 * openAPIV3Schema"). Writes up to max errors, returns how many. */
size_t cu_schema_check(json_object *schema, const char *path, cu_schema_err *errs, size_t max);

#endif
