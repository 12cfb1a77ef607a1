/*
 * cu_json.h - reading API objects as JSON, as deep as kube-apiserver
 * serves them (CU_JSON_MAX_DEPTH).
 *
 * A json-c tokener preallocates its depth stack, so a tokener as deep as
 * CU_JSON_MAX_DEPTH costs ~320 KiB. cu_json_parse tries a shallow tokener
 * first (the caller's, kept across calls, or a fresh one) and parses again
 * with a deep one, allocated for the call, only when the document is
 * nested deeper: the common case costs nothing extra.
 *
 * Also the one home of the small json-c accessors every module used to
 * copy (jget/jstr/jpath/jint...). They never fail loudly: a wrong type, a
 * missing key, a JSON null or a NULL object all read as "absent" (NULL or
 * the default), so a chain like cu_jstr(cu_jget(o, "metadata"), "name")
 * is safe on any input. Results are borrowed from o (json-c's references).
 */
#ifndef CU_JSON_H
#define CU_JSON_H

#include <stddef.h>

#include <json-c/json.h>

#include "cu_base.h"

/* The depth of the shallow first try (and of cu_json_tokener_new). */
#define CU_JSON_SHALLOW_DEPTH 64

/* A shallow tokener for cu_json_parse (caller frees with
 * json_tokener_free), NULL when out of memory. */
json_tokener *cu_json_tokener_new(void);

/* Parses len bytes of s as exactly one JSON value (white space around it
 * allowed), nested up to CU_JSON_MAX_DEPTH. tok: a tokener from
 * cu_json_tokener_new to reuse, or NULL. Returns a new tree (caller puts)
 * or NULL; then *why (when not NULL) says what is wrong, e.g. "nesting
 * deeper than 10000 levels" or "unexpected character at offset 12". */
json_object *cu_json_parse(json_tokener *tok, const char *s, size_t len, char *why, size_t nwhy);

/* cu_json_parse of a NUL-terminated string, no tokener, no reason. */
json_object *cu_json_parse_str(const char *s);

/* ---- accessors (all borrow; NULL o is fine everywhere) ---- */

/* o[key] when o is an object holding key with a non-null value, else NULL. */
json_object *cu_jget(json_object *o, const char *key);

/* o[key] when it is a string, else NULL. */
const char *cu_jstr(json_object *o, const char *key);

/* v itself when it is a string, else NULL (no key: for values in hand). */
const char *cu_jas_str(json_object *v);

/* Follows a dotted path of object keys ("spec.template.spec"): each
 * segment is a cu_jget; keys with dots cannot be named, a segment of 127+
 * bytes reads as absent. "" returns o itself. */
json_object *cu_jpath(json_object *o, const char *dotted);

/* cu_jas_str(cu_jpath(o, dotted)). */
const char *cu_jpath_str(json_object *o, const char *dotted);

/* json_object_get_int of o[key], as json-c coerces it (a double truncates,
 * a numeric string parses, true is 1, saturates at INT32 bounds); 0 when
 * absent. For table cells and counters where "anything number-like" is
 * wanted. */
int cu_jint(json_object *o, const char *key);

/* v's value when v is a JSON integer, else def (no coercion). */
int64_t cu_jas_int64(json_object *v, int64_t def);

/* v's value when v is a JSON integer, or a double truncated toward zero
 * (as a C cast), else def. */
int64_t cu_jas_num(json_object *v, int64_t def);

/* 1 when v is the JSON boolean true, else 0. */
int cu_jas_true(json_object *v);

/* The length of v when it is an array, else 0. */
size_t cu_jarr_len(json_object *v);

/* ---- builders ---- */

/* o[key] = a new string v (NULL: ""). o must be an object. */
void cu_jset_str(json_object *o, const char *key, const char *v);

/* o[key] = a new int64 v. o must be an object. */
void cu_jset_int(json_object *o, const char *key, int64_t v);

/* o[key] when it is an object; else a new empty object put there
 * (replacing any non-object value). o must be an object. Borrowed; NULL
 * only when out of memory. */
json_object *cu_jchild(json_object *o, const char *key);

/* A deep copy of o (new reference, caller puts), NULL when o is NULL or
 * out of memory. */
json_object *cu_jcopy(json_object *o);

#endif
