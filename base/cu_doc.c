/*
 * cu_doc.c - YAML/JSON document trees: a libyaml event-driven parser that
 * builds cu_node trees in an arena, readers, builders, editing, and the
 * JSON and YAML emitters.
 *
 * Parsing rules (cu_doc_parse):
 *  - Every document of a stream becomes one cu_doc. EMPTY DOCUMENTS ARE
 *    SKIPPED: a trailing "---", a "---" followed by nothing or a file of
 *    only comments contributes no entry, so an empty file gives ndocs == 0
 *    and a returned document never has root == NULL.
 *  - Scalars keep their text; plain = 1 for plain (unquoted, untagged or
 *    non-!!str tagged) scalars, 0 for quoted, block (| >) and !!str ones.
 *    Scalars containing a NUL character (possible only through the "\0"
 *    escape) are rejected as a syntax error, since str is a C string.
 *  - Map keys are scalar text; a mapping or sequence used as a key is a
 *    syntax error. A duplicate key keeps the position of the first one and
 *    the value of the last one ("later wins", as kubectl's YAML to JSON
 *    conversion does), with a warning in d naming the file, the line of
 *    each and the key.
 *  - Aliases are expanded by deep copy (nodes keep the anchor's positions),
 *    so editing one place never changes another. An alias to the node that
 *    contains it, or to an unknown anchor, is a syntax error. The total
 *    number of nodes produced by aliases in one call is capped at
 *    DOC_ALIAS_NODES_MAX ("billion laughs"), and a tree nested deeper than
 *    DOC_DEPTH_MAX levels (also through aliases) is a syntax error.
 *  - Merge keys: a plain "<<" key whose value is a mapping or a sequence of
 *    mappings merges those entries into the enclosing mapping: keys written
 *    in the mapping win wherever they appear, earlier merge sources win
 *    over later ones, and merged entries take the place of the "<<" key.
 *
 * Invariants of a tree: scalars have str != NULL; maps have keys and vals
 * arrays of cap >= n entries with distinct keys; sequences have keys ==
 * NULL; every node and string lives in the arena given to the call that
 * made it.
 *
 * Reader leniency: cu_node_bool and cu_node_int look at the text only, so
 * a quoted "true" or "3" is accepted as well as the plain one.
 */
#include "cu_doc.h"
#include "cu_doc_int.h"
#include "cu_hash.h"
#include "cu_json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#define DOC_DEPTH_MAX CU_JSON_MAX_DEPTH /* the one nesting limit of API objects */
#define DOC_ALIAS_NODES_MAX 1000000
#define DOC_FILE_MAX ((size_t)64 << 20)
/* Maps with at least this many entries get a hash index while parsing. */
#define DOC_HASH_MIN 16

/* ================= string index (open addressing) ================= */

/* Maps a string to an index into an external array of names; slots hold
 * index + 1, 0 meaning empty. Heap-owned, freed with sidx_free. */
typedef struct sidx {
    size_t *slots;
    size_t cap; /* power of two or 0 */
    size_t n;
} sidx;

static void sidx_free(sidx *x)
{
    free(x->slots);
    memset(x, 0, sizeof(*x));
}

/* Returns the index stored for k, or SIZE_MAX. */
static size_t sidx_find(const sidx *x, const char *const *names, const char *k)
{
    if (!x->cap)
        return SIZE_MAX;
    size_t mask = x->cap - 1;
    for (size_t i = (size_t)cu_hash_str(k) & mask;; i = (i + 1) & mask) {
        size_t s = x->slots[i];
        if (!s)
            return SIZE_MAX;
        if (strcmp(names[s - 1], k) == 0)
            return s - 1;
    }
}

static cu_err sidx_grow(sidx *x, const char *const *names)
{
    size_t cap = x->cap ? x->cap * 2 : 64;
    size_t *slots = calloc(cap, sizeof(*slots));
    if (!slots)
        return CU_ENOMEM;
    for (size_t j = 0; j < x->cap; j++) {
        size_t s = x->slots[j];
        if (!s)
            continue;
        size_t i = (size_t)cu_hash_str(names[s - 1]) & (cap - 1);
        while (slots[i])
            i = (i + 1) & (cap - 1);
        slots[i] = s;
    }
    free(x->slots);
    x->slots = slots;
    x->cap = cap;
    return CU_OK;
}

/* Stores idx for names[idx] (replacing an entry with an equal name). */
static cu_err sidx_put(sidx *x, const char *const *names, size_t idx)
{
    if ((x->n + 1) * 2 > x->cap && sidx_grow(x, names))
        return CU_ENOMEM;
    const char *k = names[idx];
    size_t mask = x->cap - 1;
    size_t i = (size_t)cu_hash_str(k) & mask;
    for (; x->slots[i]; i = (i + 1) & mask) {
        if (strcmp(names[x->slots[i] - 1], k) == 0) {
            x->slots[i] = idx + 1;
            return CU_OK;
        }
    }
    x->slots[i] = idx + 1;
    x->n++;
    return CU_OK;
}

/* ================= parser state ================= */

/* One open mapping or sequence. Children collect in heap vectors and are
 * copied into the arena, exactly sized, when the node ends. */
typedef struct pframe {
    cu_node *node;
    const char **keys; /* maps only */
    int *klines;       /* maps only: the line of each key */
    cu_node **vals;
    size_t n, cap;
    sidx idx;        /* maps with >= DOC_HASH_MIN entries */
    const char *key; /* pending key (have_key) */
    int key_line, key_col;
    int have_key, key_is_merge;
    cu_node **merges; /* merge sources in order */
    size_t nmerges, capmerges;
    size_t merge_pos; /* n when the first "<<" was seen */
    long anchor;      /* index in the anchor table, or -1 */
    size_t count;     /* nodes in this subtree */
    int height;       /* container levels in this subtree (>= 1) */
} pframe;

typedef struct pstate {
    const char *file;
    const char *text;
    size_t len;
    cu_arena *a;
    cu_diag *d;
    pframe frames[DOC_DEPTH_MAX];
    int depth;
    /* anchors of the current document */
    const char **anames;
    cu_node **anodes; /* NULL while the anchored node is still open */
    size_t *asizes;
    int *aheights;
    size_t nanchors, capanchors;
    sidx aidx;
    size_t alias_nodes;
    /* finished documents */
    cu_doc *docs;
    size_t ndocs, capdocs;
    cu_node *root;
    int have_root;
} pstate;

static cu_err perr(pstate *st, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* 1-based line and column of a libyaml mark. */
#define MARK(m) (int)(m).line + 1, (int)(m).column + 1

/* Reports "FILE:LINE:COLUMN: message" (1-based line and column). */
static cu_err perr(pstate *st, int line, int col, const char *fmt, ...)
{
    if (st->d) {
        char msg[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        cu_diag_error(st->d, "%s:%d:%d: %s", st->file, line, col, msg);
    }
    return CU_ESYNTAX;
}

static cu_err oom(pstate *st)
{
    if (st->d)
        cu_diag_error(st->d, "%s: out of memory while parsing", st->file);
    return CU_ENOMEM;
}

static void frame_release(pframe *f)
{
    free(f->keys);
    free(f->klines);
    free(f->vals);
    free(f->merges);
    sidx_free(&f->idx);
    memset(f, 0, sizeof(*f));
}

static void anchors_reset(pstate *st)
{
    st->nanchors = 0;
    sidx_free(&st->aidx);
}

static void pstate_release(pstate *st)
{
    while (st->depth > 0)
        frame_release(&st->frames[--st->depth]);
    free(st->anames);
    free(st->anodes);
    free(st->asizes);
    free(st->aheights);
    sidx_free(&st->aidx);
    free(st->docs);
}

/* Registers anchor name (NULL: none); node NULL marks it open. Returns
 * the anchor's index through *out (-1 for none). */
static cu_err anchor_add(pstate *st, const yaml_char_t *name, cu_node *node, size_t size,
                         int height, long *out)
{
    *out = -1;
    if (!name)
        return CU_OK;
    if (st->nanchors == st->capanchors) {
        size_t cap = st->capanchors ? st->capanchors * 2 : 16;
        const char **nn = realloc(st->anames, cap * sizeof(*nn));
        if (nn)
            st->anames = nn;
        cu_node **nd = realloc(st->anodes, cap * sizeof(*nd));
        if (nd)
            st->anodes = nd;
        size_t *ns = realloc(st->asizes, cap * sizeof(*ns));
        if (ns)
            st->asizes = ns;
        int *nh = realloc(st->aheights, cap * sizeof(*nh));
        if (nh)
            st->aheights = nh;
        if (!nn || !nd || !ns || !nh)
            return oom(st);
        st->capanchors = cap;
    }
    size_t i = st->nanchors;
    st->anames[i] = cu_arena_strdup(st->a, (const char *)name);
    if (!st->anames[i])
        return oom(st);
    st->anodes[i] = node;
    st->asizes[i] = size;
    st->aheights[i] = height;
    st->nanchors++;
    if (sidx_put(&st->aidx, st->anames, i))
        return oom(st);
    *out = (long)i;
    return CU_OK;
}

static cu_err vec_reserve(pframe *f, int map)
{
    if (f->n < f->cap)
        return CU_OK;
    size_t cap = f->cap ? f->cap * 2 : 8;
    cu_node **v = realloc(f->vals, cap * sizeof(*v));
    if (!v)
        return CU_ENOMEM;
    f->vals = v;
    if (map) {
        const char **k = realloc(f->keys, cap * sizeof(*k));
        if (!k)
            return CU_ENOMEM;
        f->keys = k;
        int *kl = realloc(f->klines, cap * sizeof(*kl));
        if (!kl)
            return CU_ENOMEM;
        f->klines = kl;
    }
    f->cap = cap;
    return CU_OK;
}

/* Index of key k among the frame's entries, or SIZE_MAX. */
static size_t frame_find(const pframe *f, const char *k)
{
    if (f->idx.cap)
        return sidx_find(&f->idx, f->keys, k);
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->keys[i], k) == 0)
            return i;
    return SIZE_MAX;
}

/* Appends key k (written at line, 0 when merged) -> v to a map frame (no
 * duplicate check). */
static cu_err frame_append(pframe *f, const char *k, int line, cu_node *v)
{
    if (vec_reserve(f, 1))
        return CU_ENOMEM;
    f->keys[f->n] = k;
    f->klines[f->n] = line;
    f->vals[f->n] = v;
    f->n++;
    if (f->idx.cap) {
        if (sidx_put(&f->idx, f->keys, f->n - 1))
            return CU_ENOMEM;
    } else if (f->n >= DOC_HASH_MIN) {
        for (size_t i = 0; i < f->n; i++)
            if (sidx_put(&f->idx, f->keys, i))
                return CU_ENOMEM;
    }
    return CU_OK;
}

static cu_err merge_add(pframe *f, cu_node *m)
{
    if (f->nmerges == f->capmerges) {
        size_t cap = f->capmerges ? f->capmerges * 2 : 4;
        cu_node **p = realloc(f->merges, cap * sizeof(*p));
        if (!p)
            return CU_ENOMEM;
        f->merges = p;
        f->capmerges = cap;
    }
    f->merges[f->nmerges++] = m;
    return CU_OK;
}

/* Hands a finished node (count nodes, height container levels) to the
 * open container or makes it the document root. m is its position. */
static cu_err add_value(pstate *st, cu_node *v, size_t count, int height, int line, int col)
{
    if (st->depth == 0) {
        st->root = v;
        st->have_root = 1;
        return CU_OK;
    }
    pframe *f = &st->frames[st->depth - 1];
    if (f->node->type == CU_NODE_MAP && !f->have_key) {
        if (v->type != CU_NODE_SCALAR)
            return perr(st, line, col, "a mapping key must be a scalar, not a %s",
                        v->type == CU_NODE_MAP ? "mapping" : "sequence");
        f->key = v->str;
        f->key_line = line;
        f->key_col = col;
        f->key_is_merge = v->plain && strcmp(v->str, "<<") == 0;
        f->have_key = 1;
        return CU_OK;
    }
    f->count += count;
    if (height + 1 > f->height)
        f->height = height + 1;
    if (f->node->type == CU_NODE_SEQ) {
        if (vec_reserve(f, 0))
            return oom(st);
        f->vals[f->n++] = v;
        return CU_OK;
    }
    f->have_key = 0;
    if (f->key_is_merge) {
        if (!f->nmerges)
            f->merge_pos = f->n;
        if (v->type == CU_NODE_MAP)
            return merge_add(f, v) ? oom(st) : CU_OK;
        if (v->type == CU_NODE_SEQ) {
            for (size_t i = 0; i < v->n; i++) {
                if (v->vals[i]->type != CU_NODE_MAP)
                    return perr(st, line, col,
                                "merge key << needs a mapping or a sequence of "
                                "mappings, item %zu is not a mapping",
                                i + 1);
                if (merge_add(f, v->vals[i]))
                    return oom(st);
            }
            return CU_OK;
        }
        return perr(st, line, col, "merge key << needs a mapping or a sequence of mappings");
    }
    size_t i = frame_find(f, f->key);
    if (i != SIZE_MAX) {
        f->vals[i] = v; /* duplicate key: the later value wins */
        if (st->d)
            cu_diag_warn(st->d,
                         "%s:%d:%d: mapping key \"%s\" already defined at line %d; "
                         "the later value is used",
                         st->file, f->key_line, f->key_col, f->key, f->klines[i]);
        return CU_OK;
    }
    return frame_append(f, f->key, f->key_line, v) ? oom(st) : CU_OK;
}

static cu_err open_node(pstate *st, cu_ntype type, const yaml_char_t *anchor, yaml_mark_t m)
{
    int line = (int)m.line + 1, col = (int)m.column + 1;
    if (st->depth > 0) {
        pframe *p = &st->frames[st->depth - 1];
        if (p->node->type == CU_NODE_MAP && !p->have_key)
            return perr(st, line, col, "a mapping key must be a scalar, not a %s",
                        type == CU_NODE_MAP ? "mapping" : "sequence");
    }
    if (st->depth >= DOC_DEPTH_MAX)
        return perr(st, line, col, "nesting deeper than %d levels", DOC_DEPTH_MAX);
    pframe *f = &st->frames[st->depth++];
    memset(f, 0, sizeof(*f));
    f->anchor = -1;
    f->count = 1;
    f->height = 1;
    f->node = cu_arena_alloc(st->a, sizeof(cu_node));
    if (!f->node)
        return oom(st);
    f->node->type = type;
    f->node->line = line;
    f->node->col = col;
    return anchor_add(st, anchor, NULL, 0, 0, &f->anchor);
}

/* Swaps entries i and j of a frame (keys too for maps). */
static void frame_swap(pframe *f, size_t i, size_t j)
{
    cu_node *v = f->vals[i];
    f->vals[i] = f->vals[j];
    f->vals[j] = v;
    if (f->keys) {
        const char *k = f->keys[i];
        f->keys[i] = f->keys[j];
        f->keys[j] = k;
        int l = f->klines[i];
        f->klines[i] = f->klines[j];
        f->klines[j] = l;
    }
}

/* Reverses entries [lo, hi). */
static void frame_reverse(pframe *f, size_t lo, size_t hi)
{
    while (hi > lo + 1) {
        frame_swap(f, lo, hi - 1);
        lo++;
        hi--;
    }
}

/* Applies pending merges: entries of the sources whose keys are not yet
 * present are added, then moved to where the first "<<" key stood. */
static cu_err apply_merges(pframe *f)
{
    size_t n0 = f->n;
    for (size_t j = 0; j < f->nmerges; j++) {
        const cu_node *src = f->merges[j];
        for (size_t i = 0; i < src->n; i++)
            if (frame_find(f, src->keys[i]) == SIZE_MAX &&
                frame_append(f, src->keys[i], 0, src->vals[i]))
                return CU_ENOMEM;
    }
    /* rotate [merge_pos, n0) behind [n0, n) */
    frame_reverse(f, f->merge_pos, n0);
    frame_reverse(f, n0, f->n);
    frame_reverse(f, f->merge_pos, f->n);
    return CU_OK;
}

static cu_err close_node(pstate *st)
{
    pframe *f = &st->frames[st->depth - 1];
    cu_node *node = f->node;
    if (node->type == CU_NODE_MAP && f->nmerges && apply_merges(f))
        return oom(st);
    if (f->n) {
        node->vals = cu_arena_alloc(st->a, f->n * sizeof(*node->vals));
        if (!node->vals)
            return oom(st);
        memcpy(node->vals, f->vals, f->n * sizeof(*node->vals));
        if (node->type == CU_NODE_MAP) {
            node->keys = cu_arena_alloc(st->a, f->n * sizeof(*node->keys));
            if (!node->keys)
                return oom(st);
            memcpy(node->keys, f->keys, f->n * sizeof(*node->keys));
        }
    }
    node->n = node->cap = f->n;
    size_t count = f->count;
    int height = f->height;
    long anchor = f->anchor;
    frame_release(f);
    st->depth--;
    if (anchor >= 0) {
        st->anodes[anchor] = node;
        st->asizes[anchor] = count;
        st->aheights[anchor] = height;
    }
    return add_value(st, node, count, height, node->line, node->col);
}

static cu_err on_alias(pstate *st, const yaml_event_t *ev)
{
    int line = (int)ev->start_mark.line + 1, col = (int)ev->start_mark.column + 1;
    const char *name = (const char *)ev->data.alias.anchor;
    size_t i = sidx_find(&st->aidx, st->anames, name);
    if (i == SIZE_MAX)
        return perr(st, line, col, "alias *%.100s refers to an unknown anchor", name);
    if (!st->anodes[i])
        return perr(st, line, col,
                    "alias *%.100s refers to a node that contains it "
                    "(recursive aliases are not supported)",
                    name);
    if (st->asizes[i] > DOC_ALIAS_NODES_MAX - st->alias_nodes)
        return perr(st, line, col, "aliases expand to more than %d nodes (at alias *%.100s)",
                    DOC_ALIAS_NODES_MAX, name);
    if (st->depth + st->aheights[i] > DOC_DEPTH_MAX)
        return perr(st, line, col, "nesting deeper than %d levels (through alias *%.100s)",
                    DOC_DEPTH_MAX, name);
    st->alias_nodes += st->asizes[i];
    cu_node *c = cu_node_clone(st->a, st->anodes[i]);
    if (!c)
        return oom(st);
    return add_value(st, c, st->asizes[i], st->aheights[i], line, col);
}

static cu_err on_scalar(pstate *st, const yaml_event_t *ev)
{
    int line = (int)ev->start_mark.line + 1, col = (int)ev->start_mark.column + 1;
    const char *val = (const char *)ev->data.scalar.value;
    size_t len = ev->data.scalar.length;
    if (strlen(val) != len)
        return perr(st, line, col,
                    "a scalar contains a NUL character (\\0), which is not supported");
    cu_node *n = cu_arena_alloc(st->a, sizeof(*n));
    if (!n || !(n->str = cu_arena_strndup(st->a, val, len)))
        return oom(st);
    n->type = CU_NODE_SCALAR;
    n->line = line;
    n->col = col;
    const char *tag = (const char *)ev->data.scalar.tag;
    n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
               !(tag && strcmp(tag, YAML_STR_TAG) == 0);
    long dummy;
    cu_err err = anchor_add(st, ev->data.scalar.anchor, n, 1, 0, &dummy);
    if (err)
        return err;
    return add_value(st, n, 1, 0, line, col);
}

static cu_err on_document_end(pstate *st)
{
    cu_node *r = st->root;
    int empty = !st->have_root || (r->type == CU_NODE_SCALAR && r->plain && !r->str[0]);
    st->root = NULL;
    st->have_root = 0;
    if (empty)
        return CU_OK;
    if (st->ndocs == st->capdocs) {
        size_t cap = st->capdocs ? st->capdocs * 2 : 4;
        cu_doc *p = realloc(st->docs, cap * sizeof(*p));
        if (!p)
            return oom(st);
        st->docs = p;
        st->capdocs = cap;
    }
    st->docs[st->ndocs].file = st->file;
    st->docs[st->ndocs].root = r;
    st->ndocs++;
    return CU_OK;
}

static cu_err on_event(pstate *st, const yaml_event_t *ev)
{
    switch (ev->type) {
    case YAML_DOCUMENT_START_EVENT:
        anchors_reset(st);
        st->root = NULL;
        st->have_root = 0;
        return CU_OK;
    case YAML_DOCUMENT_END_EVENT: return on_document_end(st);
    case YAML_ALIAS_EVENT: return on_alias(st, ev);
    case YAML_SCALAR_EVENT: return on_scalar(st, ev);
    case YAML_SEQUENCE_START_EVENT:
        return open_node(st, CU_NODE_SEQ, ev->data.sequence_start.anchor, ev->start_mark);
    case YAML_MAPPING_START_EVENT:
        return open_node(st, CU_NODE_MAP, ev->data.mapping_start.anchor, ev->start_mark);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT: return close_node(st);
    default: return CU_OK;
    }
}

/* Reports the error libyaml's parser stopped with. */
static cu_err yaml_failure(pstate *st, const yaml_parser_t *p)
{
    const char *problem = p->problem ? p->problem : "unknown error";
    switch (p->error) {
    case YAML_MEMORY_ERROR: return oom(st);
    case YAML_READER_ERROR: {
        /* reader errors carry a byte offset, not a mark */
        int line = 1, col = 1;
        size_t end = p->problem_offset < st->len ? p->problem_offset : st->len;
        for (size_t i = 0; i < end; i++) {
            if (st->text[i] == '\n') {
                line++;
                col = 1;
            } else {
                col++;
            }
        }
        if (p->problem_value != -1)
            return perr(st, line, col, "%s (#%X)", problem, (unsigned)p->problem_value);
        return perr(st, line, col, "%s", problem);
    }
    case YAML_SCANNER_ERROR:
    case YAML_PARSER_ERROR:
    default: {
        yaml_mark_t m = p->problem_mark;
        if (!m.line && !m.column && !m.index)
            m = p->context_mark;
        if (p->context)
            return perr(st, MARK(m), "%s %s", problem, p->context);
        return perr(st, MARK(m), "%s", problem);
    }
    }
}

cu_err cu_doc_parse(const char *file, const char *text, size_t len, cu_arena *a, cu_doc **docs,
                    size_t *ndocs, cu_diag *d)
{
    *docs = NULL;
    *ndocs = 0;
    pstate *st = calloc(1, sizeof(*st));
    if (!st) {
        if (d)
            cu_diag_error(d, "%s: out of memory while parsing", file ? file : "<input>");
        return CU_ENOMEM;
    }
    st->text = text ? text : "";
    st->len = text ? len : 0;
    st->a = a;
    st->d = d;
    st->file = cu_arena_strdup(a, file ? file : "<input>");
    yaml_parser_t p;
    if (!st->file || !yaml_parser_initialize(&p)) {
        st->file = file ? file : "<input>";
        cu_err err = oom(st);
        free(st);
        return err;
    }
    yaml_parser_set_input_string(&p, (const unsigned char *)st->text, st->len);
    cu_err err = CU_OK;
    for (;;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&p, &ev)) {
            err = yaml_failure(st, &p);
            break;
        }
        int done = ev.type == YAML_STREAM_END_EVENT;
        err = on_event(st, &ev);
        yaml_event_delete(&ev);
        if (err || done)
            break;
    }
    yaml_parser_delete(&p);
    if (!err && st->ndocs) {
        cu_doc *out = cu_arena_alloc(a, st->ndocs * sizeof(*out));
        if (!out) {
            err = oom(st);
        } else {
            memcpy(out, st->docs, st->ndocs * sizeof(*out));
            *docs = out;
            *ndocs = st->ndocs;
        }
    }
    pstate_release(st);
    free(st);
    return err;
}

cu_err cu_doc_parse_file(const char *file, cu_arena *a, cu_doc **docs, size_t *ndocs, cu_diag *d)
{
    *docs = NULL;
    *ndocs = 0;
    FILE *fp = fopen(file, "rb");
    if (!fp) {
        if (d)
            cu_diag_error(d, "%s: %s", file, strerror(errno));
        return CU_EIO;
    }
    char *buf = NULL;
    size_t len = 0, cap = 0;
    cu_err err = CU_OK;
    for (;;) {
        if (len == cap) {
            if (cap > DOC_FILE_MAX) {
                if (d)
                    cu_diag_error(d, "%s: file is larger than 64 MiB, refusing to read it", file);
                err = CU_EINVAL; /* bad input, not an internal failure */
                break;
            }
            size_t ncap = cap ? cap * 2 : 64 * 1024;
            if (ncap > DOC_FILE_MAX + 1)
                ncap = DOC_FILE_MAX + 1;
            char *nb = realloc(buf, ncap);
            if (!nb) {
                if (d)
                    cu_diag_error(d, "%s: out of memory reading the file", file);
                err = CU_ENOMEM;
                break;
            }
            buf = nb;
            cap = ncap;
        }
        size_t got = fread(buf + len, 1, cap - len, fp);
        len += got;
        if (got == 0) {
            if (ferror(fp)) {
                if (d)
                    cu_diag_error(d, "%s: %s", file, strerror(errno ? errno : EIO));
                err = CU_EIO;
            }
            break;
        }
    }
    fclose(fp);
    if (!err && len > DOC_FILE_MAX) {
        if (d)
            cu_diag_error(d, "%s: file is larger than 64 MiB, refusing to read it", file);
        err = CU_EINVAL;
    }
    if (!err)
        err = cu_doc_parse(file, buf ? buf : "", len, a, docs, ndocs, d);
    free(buf);
    return err;
}

/* ================= reading ================= */

static size_t map_find_n(const cu_node *map, const char *k, size_t klen)
{
    for (size_t i = 0; i < map->n; i++)
        if (strncmp(map->keys[i], k, klen) == 0 && map->keys[i][klen] == '\0')
            return i;
    return SIZE_MAX;
}

cu_node *cu_node_get(const cu_node *map, const char *key)
{
    if (!map || map->type != CU_NODE_MAP || !key)
        return NULL;
    size_t i = map_find_n(map, key, strlen(key));
    return i == SIZE_MAX ? NULL : map->vals[i];
}

cu_node *cu_node_path(const cu_node *map, const char *dotted)
{
    if (!map || !dotted)
        return NULL;
    const cu_node *n = map;
    const char *p = dotted;
    for (;;) {
        const char *dot = strchr(p, '.');
        size_t len = dot ? (size_t)(dot - p) : strlen(p);
        if (!n || n->type != CU_NODE_MAP)
            return NULL;
        size_t i = map_find_n(n, p, len);
        if (i == SIZE_MAX)
            return NULL;
        n = n->vals[i];
        if (!dot)
            return (cu_node *)n;
        p = dot + 1;
    }
}

int cu_node_is_null(const cu_node *n)
{
    if (!n)
        return 1;
    if (n->type != CU_NODE_SCALAR || !n->plain)
        return 0;
    const char *s = n->str;
    return !*s || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 || strcmp(s, "Null") == 0 ||
           strcmp(s, "NULL") == 0;
}

const char *cu_node_scalar(const cu_node *n)
{
    if (!n || n->type != CU_NODE_SCALAR || cu_node_is_null(n))
        return NULL;
    return n->str;
}

int cu_doc_word_case(const char *s, const char *w)
{
    size_t len = strlen(w);
    if (strlen(s) != len)
        return 0;
    int lower = 1, upper = 1, title = 1;
    for (size_t i = 0; i < len; i++) {
        char up = (char)(w[i] - 'a' + 'A');
        lower &= s[i] == w[i];
        upper &= s[i] == up;
        title &= s[i] == (i == 0 ? up : w[i]);
    }
    return lower || upper || title;
}

cu_err cu_node_bool(const cu_node *n, int *out)
{
    static const char *const yes[] = { "true", "yes", "on" };
    static const char *const no[] = { "false", "no", "off" };
    const char *s = cu_node_scalar(n);
    if (!s)
        return CU_EINVAL;
    for (size_t i = 0; i < 3; i++) {
        if (cu_doc_word_case(s, yes[i])) {
            *out = 1;
            return CU_OK;
        }
        if (cu_doc_word_case(s, no[i])) {
            *out = 0;
            return CU_OK;
        }
    }
    return CU_EINVAL;
}

cu_err cu_node_int(const cu_node *n, int64_t *out)
{
    const char *s = cu_node_scalar(n);
    if (!s)
        return CU_EINVAL;
    int neg = *s == '-';
    if (*s == '-' || *s == '+')
        s++;
    if (!*s)
        return CU_EINVAL;
    uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    uint64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return CU_EINVAL;
        unsigned dig = (unsigned)(*s - '0');
        if (v > (limit - dig) / 10)
            return CU_EOVERFLOW;
        v = v * 10 + dig;
    }
    if (neg)
        *out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
    else
        *out = (int64_t)v;
    return CU_OK;
}

/* ================= building and editing ================= */

static cu_node *node_new(cu_arena *a, cu_ntype type)
{
    cu_node *n = cu_arena_alloc(a, sizeof(*n));
    if (n)
        n->type = type;
    return n;
}

cu_node *cu_node_new_map(cu_arena *a) { return node_new(a, CU_NODE_MAP); }

cu_node *cu_node_new_seq(cu_arena *a) { return node_new(a, CU_NODE_SEQ); }

static cu_node *scalar_new(cu_arena *a, const char *s, int plain)
{
    if (!s)
        return NULL;
    cu_node *n = node_new(a, CU_NODE_SCALAR);
    if (!n || !(n->str = cu_arena_strdup(a, s)))
        return NULL;
    n->plain = plain;
    return n;
}

cu_node *cu_node_new_str(cu_arena *a, const char *s) { return scalar_new(a, s, 0); }

cu_node *cu_node_new_plain(cu_arena *a, const char *s) { return scalar_new(a, s, 1); }

cu_node *cu_node_new_int(cu_arena *a, int64_t v)
{
    char tmp[32];
    snprintf(tmp, sizeof(tmp), "%lld", (long long)v);
    return scalar_new(a, tmp, 1);
}

cu_node *cu_node_new_bool(cu_arena *a, int v) { return scalar_new(a, v ? "true" : "false", 1); }

cu_node *cu_node_new_null(cu_arena *a) { return scalar_new(a, "null", 1); }

/* Makes room for one more entry (arena arrays, doubled). */
static cu_err node_reserve(cu_arena *a, cu_node *n)
{
    if (n->n < n->cap)
        return CU_OK;
    size_t cap = n->cap ? n->cap * 2 : 4;
    cu_node **v = cu_arena_alloc(a, cap * sizeof(*v));
    if (!v)
        return CU_ENOMEM;
    if (n->n)
        memcpy(v, n->vals, n->n * sizeof(*v));
    if (n->type == CU_NODE_MAP) {
        const char **k = cu_arena_alloc(a, cap * sizeof(*k));
        if (!k)
            return CU_ENOMEM;
        if (n->n)
            memcpy(k, n->keys, n->n * sizeof(*k));
        n->keys = k;
    }
    n->vals = v;
    n->cap = cap;
    return CU_OK;
}

cu_err cu_node_set(cu_arena *a, cu_node *map, const char *key, cu_node *v)
{
    if (!map || map->type != CU_NODE_MAP || !key || !v)
        return CU_EINVAL;
    size_t i = map_find_n(map, key, strlen(key));
    if (i != SIZE_MAX) {
        map->vals[i] = v;
        return CU_OK;
    }
    const char *k = cu_arena_strdup(a, key);
    if (!k || node_reserve(a, map))
        return CU_ENOMEM;
    map->keys[map->n] = k;
    map->vals[map->n] = v;
    map->n++;
    return CU_OK;
}

cu_node *cu_node_del(cu_node *map, const char *key)
{
    if (!map || map->type != CU_NODE_MAP || !key)
        return NULL;
    size_t i = map_find_n(map, key, strlen(key));
    if (i == SIZE_MAX)
        return NULL;
    cu_node *v = map->vals[i];
    size_t rest = map->n - i - 1;
    memmove(&map->keys[i], &map->keys[i + 1], rest * sizeof(*map->keys));
    memmove(&map->vals[i], &map->vals[i + 1], rest * sizeof(*map->vals));
    map->n--;
    return v;
}

int cu_node_rename(cu_arena *a, cu_node *map, const char *oldk, const char *newk)
{
    if (!map || map->type != CU_NODE_MAP || !oldk || !newk)
        return 0;
    size_t i = map_find_n(map, oldk, strlen(oldk));
    if (i == SIZE_MAX)
        return 0;
    if (strcmp(oldk, newk) == 0)
        return 1;
    if (map_find_n(map, newk, strlen(newk)) != SIZE_MAX)
        return 0; /* would create a duplicate key */
    const char *k = cu_arena_strdup(a, newk);
    if (!k)
        return 0;
    map->keys[i] = k;
    return 1;
}

cu_err cu_node_push(cu_arena *a, cu_node *seq, cu_node *v)
{
    if (!seq || seq->type != CU_NODE_SEQ || !v)
        return CU_EINVAL;
    if (node_reserve(a, seq))
        return CU_ENOMEM;
    seq->vals[seq->n++] = v;
    return CU_OK;
}

cu_node *cu_node_clone(cu_arena *a, const cu_node *n)
{
    if (!n)
        return NULL;
    cu_node *c = cu_arena_alloc(a, sizeof(*c));
    if (!c)
        return NULL;
    c->type = n->type;
    c->line = n->line;
    c->col = n->col;
    c->plain = n->plain;
    if (n->type == CU_NODE_SCALAR) {
        c->str = cu_arena_strdup(a, n->str ? n->str : "");
        return c->str ? c : NULL;
    }
    if (!n->n)
        return c;
    c->vals = cu_arena_alloc(a, n->n * sizeof(*c->vals));
    if (!c->vals)
        return NULL;
    if (n->type == CU_NODE_MAP) {
        c->keys = cu_arena_alloc(a, n->n * sizeof(*c->keys));
        if (!c->keys)
            return NULL;
    }
    for (size_t i = 0; i < n->n; i++) {
        if (c->keys && !(c->keys[i] = cu_arena_strdup(a, n->keys[i])))
            return NULL;
        if (!(c->vals[i] = cu_node_clone(a, n->vals[i])))
            return NULL;
    }
    c->n = c->cap = n->n;
    return c;
}
