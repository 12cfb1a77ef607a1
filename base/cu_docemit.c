/*
 * cu_docemit.c - the document tree written out as JSON or YAML
 * (cu_node_emit_json, cu_node_emit_yaml; see cu_doc.h).
 */
#include "cu_doc.h"
#include "cu_doc_int.h"
#include "cu_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int json_number(const char *p)
{
#define DIG(c) ((c) >= '0' && (c) <= '9')
    if (*p == '-')
        p++;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        while (DIG(*p))
            p++;
    else
        return 0;
    if (*p == '.') {
        p++;
        if (!DIG(*p))
            return 0;
        while (DIG(*p))
            p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!DIG(*p))
            return 0;
        while (DIG(*p))
            p++;
    }
    return *p == '\0';
#undef DIG
}

/* The bare JSON token for a scalar, or NULL when it is a string. */
static const char *json_bare(const cu_node *n)
{
    if (!n->plain)
        return NULL;
    if (cu_node_is_null(n))
        return "null";
    if (cu_doc_word_case(n->str, "true"))
        return "true";
    if (cu_doc_word_case(n->str, "false"))
        return "false";
    return json_number(n->str) ? n->str : NULL;
}

static void put_indent(cu_buf *o, int n)
{
    static const char spaces[] = "                                ";
    while (n > 0) {
        int k = n < 32 ? n : 32;
        cu_buf_append(o, spaces, (size_t)k);
        n -= k;
    }
}

static void json_node(const cu_node *n, cu_buf *o, int indent, int level)
{
    if (!n) {
        cu_buf_puts(o, "null");
        return;
    }
    if (n->type == CU_NODE_SCALAR) {
        const char *bare = json_bare(n);
        if (bare)
            cu_buf_puts(o, bare);
        else
            cu_json_put_str(o, n->str ? n->str : "", CU_JESC_DOC);
        return;
    }
    int map = n->type == CU_NODE_MAP;
    cu_buf_append(o, map ? "{" : "[", 1);
    for (size_t i = 0; i < n->n; i++) {
        if (i)
            cu_buf_append(o, ",", 1);
        if (indent > 0) {
            cu_buf_append(o, "\n", 1);
            put_indent(o, indent * (level + 1));
        }
        if (map) {
            cu_json_put_str(o, n->keys[i], CU_JESC_DOC);
            cu_buf_puts(o, indent > 0 ? ": " : ":");
        }
        json_node(n->vals[i], o, indent, level + 1);
    }
    if (indent > 0 && n->n) {
        cu_buf_append(o, "\n", 1);
        put_indent(o, indent * level);
    }
    cu_buf_append(o, map ? "}" : "]", 1);
}

cu_err cu_node_emit_json(const cu_node *n, cu_buf *out, int indent)
{
    json_node(n, out, indent < 0 ? 0 : indent, 0);
    return out->failed ? CU_ENOMEM : CU_OK;
}

/* ---- YAML ---- */

/* ASCII case-insensitive equality. */
static int ieq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        char x = *a >= 'A' && *a <= 'Z' ? (char)(*a - 'A' + 'a') : *a;
        char y = *b >= 'A' && *b <= 'Z' ? (char)(*b - 'A' + 'a') : *b;
        if (x != y)
            return 0;
    }
    return *a == *b;
}

/* True when a YAML 1.1 or 1.2 reader could take s, written plain, for
 * something other than a string: booleans, nulls, numbers (decimal, hex,
 * octal, binary, floats, .inf/.nan, sexagesimal, with underscores),
 * merge and value keys. Errs on the side of quoting. */
static int yaml_typed(const char *s)
{
    static const char *const words[] = { "true", "false", "yes",  "no", "on", "off",
                                         "y",    "n",     "null", "~",  "=",  "<<" };
    if (!*s)
        return 1;
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        if (ieq(s, words[i]))
            return 1;
    const char *p = s;
    /* YAML 1.1 timestamps: 2001-12-14, 2001-12-14t21:59:43.10-05:00, ... */
    if (strlen(s) >= 8 && s[4] == '-' && strspn(s, "0123456789") == 4 && s[5] >= '0' && s[5] <= '9')
        return 1;
    if (*p == '+' || *p == '-')
        p++;
    if (ieq(p, ".inf") || ieq(p, ".nan"))
        return 1;
    int d0 = *p >= '0' && *p <= '9';
    int d1 = p[0] == '.' && p[1] >= '0' && p[1] <= '9';
    if (!d0 && !d1)
        return 0;
    for (; *p; p++)
        if (!strchr("0123456789abcdefABCDEFxXoO_.:+-", *p))
            return 0;
    return 1;
}

/* True when s cannot be written as a block-context plain scalar at all
 * (it would not read back as the same text). Tabs inside are fine. */
static int yaml_plain_unsafe(const char *s)
{
    size_t len = strlen(s);
    if (!len)
        return 1;
    char c0 = s[0], c1 = s[1], last = s[len - 1];
    if (strchr(",[]{}#&*!|>'\"%@`", c0) || c0 == ' ' || c0 == '\t')
        return 1;
    if (strchr("-?:", c0) && (c1 == '\0' || c1 == ' ' || c1 == '\t'))
        return 1;
    if (last == ' ' || last == '\t' || last == ':')
        return 1;
    if (strncmp(s, "---", 3) == 0 || strncmp(s, "...", 3) == 0)
        return 1;
    if (strstr(s, ": ") || strstr(s, ":\t") || strstr(s, " #") || strstr(s, "\t#"))
        return 1;
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        uint32_t cp;
        size_t l = cu_utf8_decode(p, SIZE_MAX, &cp);
        if (!l || (cu_yaml_nonprintable(cp) && cp != '\t'))
            return 1;
        p += l;
    }
    return 0;
}

/* Quoting rule for strings (non-plain scalars) and keys. */
static int yaml_str_needs_quotes(const char *s)
{
    if (!*s || yaml_typed(s) || yaml_plain_unsafe(s))
        return 1;
    if (strchr("-?:,[]{}#&*!|>'\"%@` ", s[0]))
        return 1;
    return strchr(s, '\n') != NULL || strchr(s, '\r') != NULL || strchr(s, '\t') != NULL;
}

static void yaml_quoted(cu_buf *o, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    const unsigned char *p = (const unsigned char *)s;
    cu_buf_append(o, "\"", 1);
    while (*p) {
        unsigned char c = *p;
        if (c == '"' || c == '\\') {
            char e[2] = { '\\', (char)c };
            cu_buf_append(o, e, 2);
            p++;
        } else if (c == '\n') {
            cu_buf_append(o, "\\n", 2);
            p++;
        } else if (c == '\r') {
            cu_buf_append(o, "\\r", 2);
            p++;
        } else if (c == '\t') {
            cu_buf_append(o, "\\t", 2);
            p++;
        } else if (c < 0x20 || c == 0x7F) {
            char e[4] = { '\\', 'x', hex[c >> 4], hex[c & 15] };
            cu_buf_append(o, e, 4);
            p++;
        } else if (c < 0x80) {
            cu_buf_append(o, (const char *)p, 1);
            p++;
        } else {
            uint32_t cp;
            size_t len = cu_utf8_decode(p, SIZE_MAX, &cp);
            if (!len) {
                cu_buf_append(o, "\\uFFFD", 6); /* invalid UTF-8 byte */
                p++;
            } else if (cu_yaml_nonprintable(cp)) {
                char e[6] = {
                    '\\', 'u', hex[cp >> 12], hex[(cp >> 8) & 15], hex[(cp >> 4) & 15], hex[cp & 15]
                };
                cu_buf_append(o, e, 6);
                p += len;
            } else {
                cu_buf_append(o, (const char *)p, len);
                p += len;
            }
        }
    }
    cu_buf_append(o, "\"", 1);
}

typedef struct yemit {
    cu_buf *out;
    cu_buf key; /* scratch: the rendered current key */
} yemit;

/* Writes a scalar's text, bare or double-quoted. Not for empty plain. */
static void yaml_scalar(cu_buf *o, const char *s, int plain)
{
    if (plain ? yaml_plain_unsafe(s) : yaml_str_needs_quotes(s))
        yaml_quoted(o, s);
    else
        cu_buf_puts(o, s);
}

/* Renders key k into e->key; returns 1 if it can be a simple key. */
static int yaml_key(yemit *e, const char *k)
{
    e->key.len = 0;
    if (e->key.data)
        e->key.data[0] = '\0';
    yaml_scalar(&e->key, k, 0);
    return e->key.len <= DOC_SIMPLE_KEY_MAX;
}

static void yaml_map(yemit *e, const cu_node *m, int ind, int first_inline);
static void yaml_seq(yemit *e, const cu_node *s, int ind);

/* Writes what follows "key:" or "-" up to and including the newline. */
static void yaml_value(yemit *e, const cu_node *v, int ind, int in_seq)
{
    cu_buf *o = e->out;
    if (!v) {
        cu_buf_puts(o, " null\n");
    } else if (v->type == CU_NODE_SCALAR) {
        if (v->plain && !v->str[0]) {
            cu_buf_append(o, "\n", 1);
        } else {
            cu_buf_append(o, " ", 1);
            yaml_scalar(o, v->str, v->plain);
            cu_buf_append(o, "\n", 1);
        }
    } else if (!v->n) {
        cu_buf_puts(o, v->type == CU_NODE_MAP ? " {}\n" : " []\n");
    } else if (v->type == CU_NODE_MAP) {
        if (in_seq && yaml_key(e, v->keys[0])) {
            cu_buf_append(o, " ", 1);
            yaml_map(e, v, ind + 2, 1);
        } else {
            cu_buf_append(o, "\n", 1);
            yaml_map(e, v, ind + 2, 0);
        }
    } else {
        cu_buf_append(o, "\n", 1);
        yaml_seq(e, v, ind + 2);
    }
}

static void yaml_map(yemit *e, const cu_node *m, int ind, int first_inline)
{
    cu_buf *o = e->out;
    for (size_t i = 0; i < m->n; i++) {
        if (i || !first_inline)
            put_indent(o, ind);
        if (yaml_key(e, m->keys[i])) {
            cu_buf_append(o, e->key.data, e->key.len);
            cu_buf_append(o, ":", 1);
        } else {
            /* too long for a simple key: explicit "? key" / ": value" */
            cu_buf_append(o, "? ", 2);
            cu_buf_append(o, e->key.data, e->key.len);
            cu_buf_append(o, "\n", 1);
            put_indent(o, ind);
            cu_buf_append(o, ":", 1);
        }
        yaml_value(e, m->vals[i], ind, 0);
    }
}

static void yaml_seq(yemit *e, const cu_node *s, int ind)
{
    for (size_t i = 0; i < s->n; i++) {
        put_indent(e->out, ind);
        cu_buf_append(e->out, "-", 1);
        yaml_value(e, s->vals[i], ind, 1);
    }
}

cu_err cu_node_emit_yaml(const cu_node *n, cu_buf *out)
{
    yemit e = { .out = out };
    cu_buf_init(&e.key, 0);
    if (!n) {
        cu_buf_puts(out, "null\n");
    } else if (n->type == CU_NODE_SCALAR) {
        if (n->plain && !n->str[0])
            cu_buf_puts(out, "~");
        else
            yaml_scalar(out, n->str, n->plain);
        cu_buf_append(out, "\n", 1);
    } else if (!n->n) {
        cu_buf_puts(out, n->type == CU_NODE_MAP ? "{}\n" : "[]\n");
    } else if (n->type == CU_NODE_MAP) {
        yaml_map(&e, n, 0, 0);
    } else {
        yaml_seq(&e, n, 0);
    }
    int failed = e.key.failed;
    cu_buf_free(&e.key);
    return out->failed || failed ? CU_ENOMEM : CU_OK;
}
