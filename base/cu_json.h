/*
 * cu_json.h - reading API objects as JSON, as deep as kube-apiserver
 * serves them (CU_JSON_MAX_DEPTH).
 *
 * A json-c tokener preallocates its depth stack, so a tokener as deep as
 * CU_JSON_MAX_DEPTH costs ~320 KiB. cu_json_parse tries a shallow tokener
 * first (the caller's, kept across calls, or a fresh one) and parses again
 * with a deep one, allocated for the call, only when the document is
 * nested deeper: the common case costs nothing extra.
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

#endif
