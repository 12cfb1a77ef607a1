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
#include <stddef.h>

typedef struct cu_schema_err {
    char field[256];          /* "spec.resourceGroups[0].flavors[0].name" */
    char type[32];            /* FieldValueRequired, FieldValueInvalid,
                                 FieldValueNotSupported, FieldValueTooLong,
                                 FieldValueTooMany, FieldValueDuplicate,
                                 FieldValueTypeInvalid, UnknownField */
    char message[512];        /* kube-apiserver's detail, e.g.
                                 `Unsupported value: "Fifo": supported values:
                                  "StrictFIFO", "BestEffortFIFO"` */
} cu_schema_err;

/* Applies defaults from schema to obj (in place), prunes unknown fields
 * (reporting them as UnknownField errors only when strict) and validates.
 * Writes up to max errors to errs and returns how many problems there
 * were (0 = valid). The "metadata", "apiVersion" and "kind" fields of the
 * root are not checked against the schema. */
size_t cu_schema_validate(json_object *schema, json_object *obj, int strict,
                          cu_schema_err *errs, size_t max);

#endif
