/*
 * cu_schema_int.h - what cu_schema.c (validation) and cu_ecmarx.c (ECMA-262
 * patterns translated to POSIX ERE, and the compiled-pattern cache) share.
 * Only the schema's own files include it.
 */
#ifndef CU_CU_SCHEMA_INT_H
#define CU_CU_SCHEMA_INT_H

#include <regex.h>

#include "cu_hash.h"
#include "cu_json.h"
#include "cu_schema.h"

/* Compiled patterns: an open-addressing map pattern -> regex, built once
 * per schema (cu_schema_rx_new) and only read afterwards, or built while
 * one validation runs (sv_ctx.local). */
typedef struct rx_ent {
    char *pat; /* NULL: empty slot */
    int ok;    /* 1: re compiled; 0: not enforced (outside the subset) */
    regex_t re;
} rx_ent;

struct cu_schema_rx {
    rx_ent *t;
    size_t cap, n;
};

static inline int is_obj(json_object *o) { return o && json_object_is_type(o, json_type_object); }

static inline int is_arr(json_object *o) { return o && json_object_is_type(o, json_type_array); }

static inline int is_str(json_object *o) { return o && json_object_is_type(o, json_type_string); }

/* cu_ecmarx.c */
/* 1 with the reason in why if the pattern is past RE2's repetition limits
 * (kube-apiserver refuses it), else 0. */
int rx_too_big(const char *pat, char *why, size_t n);
/* A malloc'd POSIX ERE for an ECMA-262 pattern, NULL if the pattern uses
 * something outside the supported subset. */
char *rx_translate(const char *p);
/* The slot of pat in rx (empty slot if absent), or NULL if rx has none. Borrowed. */
rx_ent *rx_find(const cu_schema_rx *rx, const char *pat);
/* Compiles pat into rx (once); returns its entry or NULL without memory. */
rx_ent *rx_add(cu_schema_rx *rx, const char *pat);

#endif
