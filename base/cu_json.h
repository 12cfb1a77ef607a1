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
#include "cu_doc.h"

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

/* ---- writing JSON strings ---- */

/* How cu_json_escape_char escapes; the former escapers' outputs differ
 * and are pinned by tests and goldens, so each caller keeps its set.
 * Always: '"' and '\\' as \" and \\, \n \r \t short, other bytes
 * below 0x20 as \u00XX (lowercase hex). */
enum {
    CU_JESC_SHORT_BF = 1, /* \b and \f short (else \u0008, \u000c) */
    CU_JESC_DEL = 2,      /* DEL as \u007f (else raw) */
    CU_JESC_UTF8 = 4,     /* bytes >= 0x80 checked: each byte that does not
                              start valid UTF-8 becomes U+FFFD (else raw) */
    CU_JESC_FFFD_ESC = 8, /* with UTF8: that U+FFFD as \ufffd (else raw) */
    CU_JESC_YAML = 16,    /* with UTF8: also \uXXXX for the code points a
                              YAML reader refuses raw (C1, U+2028/9, U+FEFF,
                              U+FFFE/F), so the JSON reads back as YAML */
};
#define CU_JESC_LOG (CU_JESC_SHORT_BF | CU_JESC_DEL | CU_JESC_UTF8)                /* cu_log */
#define CU_JESC_DOC (CU_JESC_DEL | CU_JESC_UTF8 | CU_JESC_FFFD_ESC | CU_JESC_YAML) /* cu_doc */
#define CU_JESC_RAW CU_JESC_SHORT_BF /* bytes >= 0x7F as they are (canonical JSON) */

/* The longest piece cu_json_escape_char writes. */
#define CU_JSON_ESC_MAX 8

/* Escapes the one character at s (avail > 0 bytes, need not be
 * NUL-terminated) for the inside of a JSON string: writes its piece into
 * out (not NUL-terminated) and returns the piece's length; *adv is the
 * number of bytes of s it stands for (>= 1). For writers that bound
 * their output per character (the logger). */
size_t cu_json_escape_char(const char *s, size_t avail, unsigned flags, char out[CU_JSON_ESC_MAX],
                           size_t *adv);

/* Appends s (NUL-terminated; NULL is "") to b as a quoted JSON string,
 * escaped per flags. Returns CU_OK or CU_ENOMEM (b's bound). */
cu_err cu_json_put_str(cu_buf *b, const char *s, unsigned flags);

/* ---- numbers as Go writes them ---- */

/* Writes the finite double d as printf's "%.*e" with the fewest digits
 * that strtod reads back to d (out holds 40 bytes); returns that precision
 * (digits after the point, 0..16). The digits of Go's shortest formats. */
int cu_json_shortest_e(double d, char out[40]);

/* The longest text cu_json_go_float writes, with its NUL. */
#define CU_JSON_GO_FLOAT_MAX 32

/* Writes the finite double d as Go's encoding/json writes a float64 (what
 * kube-apiserver answers and stores): the shortest decimal that reads back
 * to d, in plain form when 1e-6 <= |d| < 1e21 or d is 0 (100.0 -> "100",
 * 0.1 -> "0.1", -0.0 -> "-0"), else in exponent form with at least two
 * exponent digits, except that a negative one loses its leading zero
 * (1e21 -> "1e+21", 1e-7 -> "1e-7", 1.5e-10 -> "1.5e-10"). NaN and the
 * infinities (which JSON cannot hold) come out as "0". Returns the
 * length. */
size_t cu_json_go_float(double d, char out[CU_JSON_GO_FLOAT_MAX]);

/* Makes every floating-point number in the tree o serialize as Go does
 * (cu_json_go_float), instead of json-c's way (the literal as it was
 * parsed, or "%.17g"). So does an integer beyond int64 (json-c keeps it as
 * an unsigned one, kube-apiserver reads it as a float64: 2^64-1 ->
 * "18446744073709552000"), and -0.0 is written 0 (kube-apiserver serves
 * what it reads back from its stored "-0": the integer 0). Values stay as
 * they are; an object serialized again gives the same text. */
void cu_json_go_numbers(json_object *o);

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

/* ---- comparing ---- */

/* Deep JSON equality: numbers compare by value (1 == 1.0; NaN, which
 * json-c reads, equals NaN), objects by their member sets, arrays
 * element-wise. Borrows both; NULL (JSON null) equals only NULL. */
int cu_json_equal(json_object *a, json_object *b);

/* The JSON Patch (RFC 6902) that turns from into to: a new array of
 * operations (caller puts), empty when they are equal, NULL when out of
 * memory. Objects are compared member by member (a member only in from is
 * removed, one only in to added, one in both compared again below);
 * arrays element by element over their common length, then the extra
 * elements of to are added at their index or those of from removed from
 * the last; anything else that differs is replaced (the whole document
 * with path ""). Paths are JSON Pointers ("~" as "~0", "/" as "~1").
 * Values are deep copies. Borrows from and to. */
json_object *cu_json_diff(json_object *from, json_object *to);

/* ---- cu_node <-> json-c ---- */

/* Converts a json-c value to a cu_node tree in a (numbers, booleans and
 * null become plain scalars, strings quoted ones). Objects and arrays
 * nested deeper than 64 levels become null (no field the decoders read is
 * that deep; the API server serves up to CU_JSON_MAX_DEPTH). Returns NULL
 * on OOM. Borrows j; the tree is arena-owned. */
cu_node *cu_node_from_json(cu_arena *a, json_object *j);

/* Converts a cu_node tree to json-c: plain scalars resolve as YAML's core
 * schema (null/~/empty -> JSON null, true/false in three spellings,
 * decimal integers, then floats; anything else a string), quoted ones
 * are strings. Returns a new reference (caller puts; NULL for n NULL or a
 * null scalar). Borrows n. */
json_object *cu_node_to_json(const cu_node *n);

#endif
