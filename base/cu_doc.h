/*
 * cu_doc.h - a small document tree for YAML and JSON, with source
 * positions, plus parsers (libyaml; JSON is read as YAML flow syntax) and
 * emitters (YAML block style and JSON).
 *
 * All nodes live in a caller-provided arena: parse into it, use the tree,
 * free the arena. Nothing here keeps pointers into the input text.
 */
#ifndef CU_DOC_H
#define CU_DOC_H

#include "cu_base.h"

typedef enum cu_ntype { CU_NODE_SCALAR = 0, CU_NODE_MAP, CU_NODE_SEQ } cu_ntype;

typedef struct cu_node cu_node;
struct cu_node {
    cu_ntype type;
    int line, col;     /* 1-based source position; 0 for built nodes */
    const char *str;   /* scalar text (never NULL for scalars) */
    int plain;         /* scalar was unquoted: "null", "true", "3" keep
                             their YAML/JSON meaning; quoted ones are strings */
    size_t n, cap;     /* number of map entries / sequence items */
    const char **keys; /* map keys, n of them (NULL for sequences) */
    cu_node **vals;    /* map values or sequence items */
};

/* One YAML document (or one JSON value) of a file. */
typedef struct cu_doc {
    const char *file; /* arena-owned copy of the path given */
    cu_node *root;    /* NULL for an empty document */
} cu_doc;

/* Parses text (len bytes, multi-document YAML or JSON) into *docs, an
 * arena-owned array of *ndocs documents. Anchors and aliases are resolved;
 * merge keys (<<) are applied. On a syntax error appends
 * "FILE:LINE:COLUMN: message" to d and returns CU_ESYNTAX. Nesting deeper
 * than 256 levels is a syntax error. Borrows file and text. */
cu_err cu_doc_parse(const char *file, const char *text, size_t len, cu_arena *a, cu_doc **docs,
                    size_t *ndocs, cu_diag *d);

/* Reads file and parses it like cu_doc_parse. Files over 64 MiB are
 * refused as bad input (CU_EINVAL with a message); unreadable files give CU_EIO. */
cu_err cu_doc_parse_file(const char *file, cu_arena *a, cu_doc **docs, size_t *ndocs, cu_diag *d);

/* ---- reading ---- */
/* Returns the value for key in map, or NULL (also when map is NULL or not
 * a map). Borrowed. */
cu_node *cu_node_get(const cu_node *map, const char *key);
/* Follows a dotted path of map keys ("spec.template.spec"). Borrowed. */
cu_node *cu_node_path(const cu_node *map, const char *dotted);
/* True when n is NULL or a plain scalar null ("null", "~", ""). */
int cu_node_is_null(const cu_node *n);
/* Returns the scalar text of n, or NULL when n is not a non-null scalar. */
const char *cu_node_scalar(const cu_node *n);
/* Boolean scalar: "true"/"false" (YAML 1.1 yes/no/on/off accepted).
 * Returns CU_EINVAL for anything else. */
cu_err cu_node_bool(const cu_node *n, int *out);
/* Integer scalar (decimal, optional sign, fits int64). */
cu_err cu_node_int(const cu_node *n, int64_t *out);

/* ---- building (all arena-owned) ---- */
cu_node *cu_node_new_map(cu_arena *a);
cu_node *cu_node_new_seq(cu_arena *a);
/* A quoted string scalar (s copied). */
cu_node *cu_node_new_str(cu_arena *a, const char *s);
/* A plain scalar: number, bool or null token (s copied). */
cu_node *cu_node_new_plain(cu_arena *a, const char *s);
cu_node *cu_node_new_int(cu_arena *a, int64_t v);
cu_node *cu_node_new_bool(cu_arena *a, int v);
cu_node *cu_node_new_null(cu_arena *a);
/* Sets key (copied) in map: replaces an existing value, else appends.
 * Returns CU_ENOMEM on failure. */
cu_err cu_node_set(cu_arena *a, cu_node *map, const char *key, cu_node *v);
/* Removes key from map (keeps order of the rest); returns the removed
 * value or NULL. */
cu_node *cu_node_del(cu_node *map, const char *key);
/* Renames key old to new in place (keeps position). Returns 1 if done. */
int cu_node_rename(cu_arena *a, cu_node *map, const char *oldk, const char *newk);
cu_err cu_node_push(cu_arena *a, cu_node *seq, cu_node *v);
/* Deep copy into arena a. */
cu_node *cu_node_clone(cu_arena *a, const cu_node *n);

/* ---- emitting ---- */
/* Appends n as JSON. indent 0 = compact one line; >0 = pretty with that
 * many spaces. Plain scalars that are valid JSON numbers, true, false or
 * null are written bare; everything else is a JSON string. */
cu_err cu_node_emit_json(const cu_node *n, cu_buf *out, int indent);
/* Appends n as a block-style YAML document body (no "---"). Strings that
 * would read back as another type or need escaping are quoted. */
cu_err cu_node_emit_yaml(const cu_node *n, cu_buf *out);

#endif
