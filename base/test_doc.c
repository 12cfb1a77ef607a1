/*
 * test_doc.c - cmocka tests for cu_doc: parsing (positions, errors,
 * anchors and merge keys, JSON input, empty documents, limits), readers,
 * builders and editing, and the JSON and YAML emitters (escaping, quoting,
 * round trips).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cu_doc.h"

/* ---------------- helpers ---------------- */

typedef struct fx {
    cu_arena a;
    cu_diag d;
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof(*f));
    if (!f)
        return -1;
    cu_arena_init(&f->a, 0);
    cu_diag_init(&f->d);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    cu_arena_free(&f->a);
    cu_diag_free(&f->d);
    free(f);
    return 0;
}

/* Parses text that must hold exactly one document; returns its root. */
static cu_node *parse1(fx *f, const char *text)
{
    cu_doc *docs = NULL;
    size_t n = 0;
    cu_err err = cu_doc_parse("t.yaml", text, strlen(text), &f->a, &docs, &n, &f->d);
    if (err != CU_OK)
        fail_msg("parse failed (%d): %s\n%s", err, f->d.n ? f->d.msgs[0] : "", text);
    assert_int_equal(n, 1);
    assert_non_null(docs[0].root);
    return docs[0].root;
}

/* Returns the arena-owned compact JSON of n. */
static const char *json_of(fx *f, const cu_node *n, int indent)
{
    cu_buf b;
    cu_buf_init(&b, 0);
    assert_int_equal(cu_node_emit_json(n, &b, indent), CU_OK);
    char *s = cu_arena_strdup(&f->a, cu_buf_str(&b));
    cu_buf_free(&b);
    return s;
}

static const char *yaml_of(fx *f, const cu_node *n)
{
    cu_buf b;
    cu_buf_init(&b, 0);
    assert_int_equal(cu_node_emit_yaml(n, &b), CU_OK);
    char *s = cu_arena_strdup(&f->a, cu_buf_str(&b));
    cu_buf_free(&b);
    return s;
}

static void assert_scalar(const cu_node *n, const char *text, int plain)
{
    assert_non_null(n);
    assert_int_equal(n->type, CU_NODE_SCALAR);
    assert_string_equal(n->str, text);
    assert_int_equal(n->plain, plain);
}

/* Checks that json is valid JSON (json-c) and returns it parsed. */
static json_object *valid_json(const char *json)
{
    json_tokener *tok = json_tokener_new();
    json_object *o = json_tokener_parse_ex(tok, json, (int)strlen(json));
    enum json_tokener_error jerr = json_tokener_get_error(tok);
    json_tokener_free(tok);
    if (jerr != json_tokener_success)
        fail_msg("invalid JSON (%s): %s", json_tokener_error_desc(jerr), json);
    return o;
}

/* Tree equality for round trips: same shape, keys and scalar text; with
 * strict, a plain scalar must stay plain; a scalar may change between
 * plain and quoted only where that does not change its meaning (its JSON
 * form is the same string). Built plain scalars whose text cannot be
 * written plain ("a: b") come back quoted, so they need strict == 0. */
static void assert_same_tree(fx *f, const cu_node *a, const cu_node *b, const char *where,
                             int strict)
{
    if (!a || !b || a->type != b->type)
        fail_msg("%s: node types differ", where);
    if (a->type == CU_NODE_SCALAR) {
        if (strcmp(a->str, b->str) != 0)
            fail_msg("%s: text \"%s\" came back as \"%s\"", where, a->str, b->str);
        if (strict && a->plain && !b->plain)
            fail_msg("%s: plain \"%s\" came back quoted", where, a->str);
        if (a->plain != b->plain && strcmp(json_of(f, a, 0), json_of(f, b, 0)) != 0)
            fail_msg("%s: string \"%s\" came back with another type", where, a->str);
        return;
    }
    if (a->n != b->n)
        fail_msg("%s: %zu entries came back as %zu", where, a->n, b->n);
    for (size_t i = 0; i < a->n; i++) {
        const char *sub = where;
        if (a->type == CU_NODE_MAP) {
            if (strcmp(a->keys[i], b->keys[i]) != 0)
                fail_msg("%s: key \"%s\" came back as \"%s\"", where, a->keys[i], b->keys[i]);
            sub = cu_arena_printf(&f->a, "%s.%s", where, a->keys[i]);
        } else {
            sub = cu_arena_printf(&f->a, "%s[%zu]", where, i);
        }
        assert_same_tree(f, a->vals[i], b->vals[i], sub, strict);
    }
}

/* Emits n as YAML, re-parses it and checks it is the same tree; also
 * checks the JSON form is valid and unchanged. */
static void assert_yaml_round_trip(fx *f, const cu_node *n, int strict)
{
    const char *y = yaml_of(f, n);
    cu_doc *docs;
    size_t nd;
    cu_err err = cu_doc_parse("rt.yaml", y, strlen(y), &f->a, &docs, &nd, &f->d);
    if (err != CU_OK || nd != 1)
        fail_msg("emitted YAML does not re-parse (%d, %zu docs): %s\n%s", err, nd,
                 f->d.n ? f->d.msgs[f->d.n - 1] : "", y);
    assert_same_tree(f, n, docs[0].root, "$", strict);
    const char *j1 = json_of(f, n, 0);
    json_object_put(valid_json(j1));
    assert_string_equal(j1, json_of(f, docs[0].root, 0));
}

/* ---------------- parsing ---------------- */

static void test_parse_positions(void **state)
{
    fx *f = *state;
    cu_node *r = parse1(f, "# leading comment\n"      /* 1 */
                           "apiVersion: v1\n"         /* 2 */
                           "kind: Pod\n"              /* 3 */
                           "spec:\n"                  /* 4 */
                           "  containers:\n"          /* 5 */
                           "    - name: app\n"        /* 6 */
                           "      image: \"nginx\"\n" /* 7 */
                           "  flags: [a, {b: c}]\n"); /* 8 */
    static const struct {
        const char *path;
        int line, col;
        cu_ntype type;
    } cases[] = {
        { "kind", 3, 7, CU_NODE_SCALAR },
        { "spec", 5, 3, CU_NODE_MAP },
        { "spec.containers", 6, 5, CU_NODE_SEQ },
        { "spec.flags", 8, 10, CU_NODE_SEQ },
    };
    assert_int_equal(r->type, CU_NODE_MAP);
    assert_int_equal(r->line, 2);
    assert_int_equal(r->col, 1);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cu_node *n = cu_node_path(r, cases[i].path);
        assert_non_null(n);
        if (n->line != cases[i].line || n->col != cases[i].col || n->type != cases[i].type)
            fail_msg("%s: got %d:%d type %d, want %d:%d type %d", cases[i].path, n->line, n->col,
                     n->type, cases[i].line, cases[i].col, cases[i].type);
    }
    cu_node *c0 = cu_node_path(r, "spec.containers")->vals[0];
    assert_int_equal(c0->line, 6);
    assert_int_equal(c0->col, 7);
    cu_node *img = cu_node_get(c0, "image");
    assert_scalar(img, "nginx", 0);
    assert_int_equal(img->line, 7);
    assert_int_equal(img->col, 14);
    cu_node *flow = cu_node_path(r, "spec.flags")->vals[1];
    assert_int_equal(flow->type, CU_NODE_MAP);
    assert_int_equal(flow->line, 8);
    assert_int_equal(flow->col, 14);
    assert_scalar(cu_node_get(flow, "b"), "c", 1);
}

static void test_parse_errors(void **state)
{
    fx *f = *state;
    static const struct {
        const char *name, *text, *want;
    } cases[] = {
        { "bad indentation", "a:\n  b: 1\n c: 2\n",
          "bad.yaml:3:2: did not find expected key while parsing a block mapping" },
        { "value on a key line", "a: 1\n b: 2\n",
          "bad.yaml:2:3: mapping values are not allowed in this context" },
        { "unclosed flow sequence", "items: [1, 2\nnext: 3\n",
          "bad.yaml:2:5: did not find expected ',' or ']' while parsing a flow sequence" },
        { "tab indentation", "a:\n\tb: 1\n",
          "bad.yaml:2:1: found character that cannot start any token while scanning for "
          "the next token" },
        { "unclosed quote", "a: \"x\n",
          "bad.yaml:2:1: found unexpected end of stream while scanning a quoted scalar" },
        { "invalid UTF-8", "a: b\nc: \xff\n", "bad.yaml:2:4: invalid leading UTF-8 octet (#FF)" },
        { "control character", "a: \x01\n",
          "bad.yaml:1:4: control characters are not allowed (#1)" },
        { "mapping as key", "? {a: 1}\n: x\n",
          "bad.yaml:1:3: a mapping key must be a scalar, not a mapping" },
        { "sequence as key", "[a, b]: x\n",
          "bad.yaml:1:1: a mapping key must be a scalar, not a sequence" },
        { "alias of a sequence as key", "a: &s [1]\n*s : x\n",
          "bad.yaml:2:1: a mapping key must be a scalar, not a sequence" },
        { "unknown alias", "a: 1\nb: *nope\n",
          "bad.yaml:2:4: alias *nope refers to an unknown anchor" },
        { "recursive alias", "a: &x\n  b: *x\n",
          "bad.yaml:2:6: alias *x refers to a node that contains it (recursive aliases are not "
          "supported)" },
        { "merge of a scalar", "a: &x 1\nb:\n  <<: *x\n",
          "bad.yaml:3:7: merge key << needs a mapping or a sequence of mappings" },
        { "merge of a list with a scalar", "a: &x {k: 1}\nb:\n  <<: [*x, 2]\n",
          "bad.yaml:3:7: merge key << needs a mapping or a sequence of mappings, item 2 is not "
          "a mapping" },
        { "NUL escape", "a: \"x\\0y\"\n",
          "bad.yaml:1:4: a scalar contains a NUL character (\\0), which is not supported" },
        { "anchors are per document", "a: &x 1\n---\nb: *x\n",
          "bad.yaml:3:4: alias *x refers to an unknown anchor" },
        { "error in a later document", "a: 1\n---\nb: [\n",
          "bad.yaml:4:1: did not find expected node content while parsing a flow node" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cu_diag d;
        cu_diag_init(&d);
        cu_doc *docs = (cu_doc *)1;
        size_t nd = 99;
        cu_err err =
            cu_doc_parse("bad.yaml", cases[i].text, strlen(cases[i].text), &f->a, &docs, &nd, &d);
        if (err != CU_ESYNTAX || d.n != 1 || strcmp(d.msgs[0], cases[i].want) != 0)
            fail_msg("%s: got err %d, %zu messages, first \"%s\"\nwant \"%s\"", cases[i].name, err,
                     d.n, d.n ? d.msgs[0] : "", cases[i].want);
        assert_null(docs);
        assert_int_equal(nd, 0);
        cu_diag_free(&d);
    }
}

static void test_multi_document_yaml(void **state)
{
    fx *f = *state;
    const char *text = "# defaults shared by the queues\n"
                       "defaults: &defaults   # anchor on a mapping\n"
                       "  cpu: 1\n"
                       "  memory: 2Gi\n"
                       "  labels: {team: a}\n"
                       "extra: &extra\n"
                       "  memory: 8Gi\n"
                       "  gpu: 0\n"
                       "queue:\n"
                       "  name: q1\n"
                       "  <<: *defaults\n"
                       "  cpu: 4              # explicit key wins over the merge\n"
                       "both:\n"
                       "  <<: [*extra, *defaults]\n"
                       "script: |\n"
                       "  echo one\n"
                       "  echo two\n"
                       "folded: >\n"
                       "  a long\n"
                       "  line\n"
                       "names: &n [x, y]\n"
                       "copy: *n\n"
                       "---\n"
                       "# second document\n"
                       "- 1\n"
                       "- 'two'\n"
                       "...\n"
                       "---\n"
                       "third: true\n"
                       "---\n";
    cu_doc *docs;
    size_t nd;
    assert_int_equal(cu_doc_parse("multi.yaml", text, strlen(text), &f->a, &docs, &nd, &f->d),
                     CU_OK);
    assert_int_equal(nd, 3); /* the trailing empty document is skipped */
    assert_string_equal(docs[0].file, "multi.yaml");
    cu_node *r = docs[0].root;

    cu_node *q = cu_node_get(r, "queue");
    assert_int_equal(q->n, 4);
    static const char *const qkeys[] = { "name", "memory", "labels", "cpu" };
    for (size_t i = 0; i < 4; i++)
        assert_string_equal(q->keys[i], qkeys[i]); /* merged keys where << stood */
    assert_scalar(cu_node_get(q, "cpu"), "4", 1);
    assert_scalar(cu_node_get(q, "memory"), "2Gi", 1);
    assert_scalar(cu_node_path(q, "labels.team"), "a", 1);

    cu_node *b = cu_node_get(r, "both");
    assert_int_equal(b->n, 4);
    assert_scalar(cu_node_get(b, "memory"), "8Gi", 1); /* earlier source wins */
    assert_scalar(cu_node_get(b, "gpu"), "0", 1);
    assert_scalar(cu_node_get(b, "cpu"), "1", 1);
    assert_null(cu_node_get(b, "<<"));

    assert_scalar(cu_node_get(r, "script"), "echo one\necho two\n", 0);
    assert_scalar(cu_node_get(r, "folded"), "a long line\n", 0);

    /* aliases are copies: editing one does not change the other */
    cu_node *names = cu_node_get(r, "names"), *copy = cu_node_get(r, "copy");
    assert_int_equal(copy->type, CU_NODE_SEQ);
    assert_int_equal(copy->n, 2);
    assert_ptr_not_equal(names, copy);
    assert_int_equal(cu_node_push(&f->a, copy, cu_node_new_str(&f->a, "z")), CU_OK);
    assert_int_equal(names->n, 2);
    cu_node *lab1 = cu_node_path(r, "defaults.labels"), *lab2 = cu_node_get(q, "labels");
    assert_ptr_not_equal(lab1, lab2);

    cu_node *s = docs[1].root;
    assert_int_equal(s->type, CU_NODE_SEQ);
    assert_scalar(s->vals[0], "1", 1);
    assert_scalar(s->vals[1], "two", 0);
    assert_int_equal(s->line, 25);
    int v = 0;
    assert_int_equal(cu_node_bool(cu_node_get(docs[2].root, "third"), &v), CU_OK);
    assert_int_equal(v, 1);
    assert_int_equal(f->d.n, 0);
}

static void test_json_input(void **state)
{
    fx *f = *state;
    const char *text = "{\n"
                       "  \"apiVersion\": \"v1\",\n"
                       "  \"items\": [\n"
                       "    {\n"
                       "      \"name\": \"caf\\u00e9\",\n"
                       "      \"matrix\": [[1, 2], [3, [4.5e-1, -6]], []],\n"
                       "      \"ok\": true,\n"
                       "      \"none\": null,\n"
                       "      \"quoted\": \"42\",\n"
                       "      \"esc\": \"a\\\"b\\\\c\\n\\t\\/\"\n"
                       "    },\n"
                       "    {}\n"
                       "  ]\n"
                       "}\n";
    cu_node *r = parse1(f, text);
    assert_scalar(cu_node_get(r, "apiVersion"), "v1", 0);
    cu_node *items = cu_node_get(r, "items");
    assert_int_equal(items->type, CU_NODE_SEQ);
    assert_int_equal(items->n, 2);
    cu_node *it = items->vals[0];
    assert_int_equal(it->line, 4);
    assert_scalar(cu_node_get(it, "name"), "caf\xc3\xa9", 0);
    cu_node *m = cu_node_get(it, "matrix");
    assert_int_equal(m->n, 3);
    assert_scalar(m->vals[1]->vals[1]->vals[0], "4.5e-1", 1);
    assert_scalar(m->vals[1]->vals[1]->vals[1], "-6", 1);
    assert_int_equal(m->vals[2]->type, CU_NODE_SEQ);
    assert_int_equal(m->vals[2]->n, 0);
    assert_true(cu_node_is_null(cu_node_get(it, "none")));
    assert_scalar(cu_node_get(it, "quoted"), "42", 0);
    assert_scalar(cu_node_get(it, "esc"), "a\"b\\c\n\t/", 0);
    assert_int_equal(items->vals[1]->type, CU_NODE_MAP);
    assert_int_equal(items->vals[1]->n, 0);
    /* JSON in, JSON out: the same values (json-c compares semantically) */
    json_object *want = valid_json(text);
    json_object *got = valid_json(json_of(f, r, 0));
    assert_true(json_object_equal(want, got));
    json_object_put(want);
    json_object_put(got);

    /* several JSON values in one stream, separated by "---" */
    cu_doc *docs;
    size_t nd;
    const char *two = "{\"a\": 1}\n---\n[\"b\"]\n";
    assert_int_equal(cu_doc_parse("two.json", two, strlen(two), &f->a, &docs, &nd, &f->d), CU_OK);
    assert_int_equal(nd, 2);
    assert_string_equal(json_of(f, docs[1].root, 0), "[\"b\"]");
}

static void test_empty_documents(void **state)
{
    fx *f = *state;
    static const struct {
        const char *text;
        size_t ndocs;
    } cases[] = {
        { "", 0 },
        { "\n\n", 0 },
        { "# only\n# comments\n", 0 },
        { "---\n", 0 },
        { "---\n---\n...\n", 0 },
        { "a: 1\n---\n", 1 },
        { "---\n# nothing\n---\nb: 2\n---\n", 1 },
        { "null\n", 1 },   /* an explicit null is a document */
        { "--- ''\n", 1 }, /* and so is an empty string */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cu_doc *docs;
        size_t nd = 99;
        assert_int_equal(
            cu_doc_parse("e.yaml", cases[i].text, strlen(cases[i].text), &f->a, &docs, &nd, &f->d),
            CU_OK);
        if (nd != cases[i].ndocs)
            fail_msg("\"%s\": %zu documents, want %zu", cases[i].text, nd, cases[i].ndocs);
        for (size_t j = 0; j < nd; j++)
            assert_non_null(docs[j].root);
    }
    cu_doc *docs;
    size_t nd;
    assert_int_equal(cu_doc_parse("null.yaml", NULL, 0, &f->a, &docs, &nd, &f->d), CU_OK);
    assert_int_equal(nd, 0);
}

static void test_duplicate_keys(void **state)
{
    fx *f = *state;
    cu_node *r = parse1(f, "a: 1\nb: 2\na: 3\n");
    assert_int_equal(r->n, 2);
    assert_string_equal(r->keys[0], "a");
    assert_scalar(r->vals[0], "3", 1);
    /* a warning naming the file, both lines and the key; not an error */
    assert_int_equal(f->d.n, 1);
    assert_int_equal(f->d.nerrors, 0);
    assert_string_equal(f->d.msgs[0], "warning: t.yaml:3:1: mapping key \"a\" already "
                                      "defined at line 1; the later value is used");

    /* a large mapping (hash index while parsing) behaves the same */
    cu_buf b;
    cu_buf_init(&b, 0);
    for (int i = 0; i < 100; i++)
        cu_buf_printf(&b, "k%d: %d\n", i, i);
    cu_buf_puts(&b, "k7: last\nk99: end\n");
    r = parse1(f, cu_buf_str(&b));
    cu_buf_free(&b);
    assert_int_equal(r->n, 100);
    assert_string_equal(r->keys[7], "k7");
    assert_scalar(r->vals[7], "last", 1);
    assert_scalar(cu_node_get(r, "k99"), "end", 1);
    assert_scalar(cu_node_get(r, "k50"), "50", 1);
    assert_int_equal(f->d.n, 3);
    assert_non_null(strstr(f->d.msgs[1], ":101:1: mapping key \"k7\" already defined at line 8;"));
    assert_non_null(
        strstr(f->d.msgs[2], ":102:1: mapping key \"k99\" already defined at line 100;"));

    /* keys brought in by a merge key are not duplicates */
    r = parse1(f, "base: &b {x: 1, y: 2}\nm:\n  <<: *b\n  x: 3\n");
    assert_scalar(cu_node_get(cu_node_get(r, "m"), "x"), "3", 1);
    assert_int_equal(f->d.n, 3);
}

static void test_limits(void **state)
{
    fx *f = *state;
    /* billion laughs: 10^9 nodes if expanded */
    cu_buf b;
    cu_buf_init(&b, 0);
    cu_buf_puts(&b, "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n");
    for (int i = 1; i < 10; i++) {
        cu_buf_printf(&b, "l%d: &l%d [", i, i);
        for (int j = 0; j < 10; j++)
            cu_buf_printf(&b, "%s*l%d", j ? ", " : "", i - 1);
        cu_buf_puts(&b, "]\n");
    }
    cu_doc *docs;
    size_t nd;
    cu_diag d;
    cu_diag_init(&d);
    assert_int_equal(cu_doc_parse("lol.yaml", b.data, b.len, &f->a, &docs, &nd, &d), CU_ESYNTAX);
    assert_int_equal(d.n, 1);
    assert_non_null(strstr(d.msgs[0], "aliases expand to more than 1000000 nodes"));
    assert_memory_equal(d.msgs[0], "lol.yaml:", 9);
    cu_diag_free(&d);
    cu_buf_free(&b);

    /* a few levels of the same are fine */
    cu_node *r = parse1(f, "a: &a [1, 2]\nb: &b [*a, *a, *a]\nc: [*b, *b]\n");
    assert_int_equal(cu_node_get(r, "c")->n, 2);
    assert_string_equal(json_of(f, cu_node_get(r, "c"), 0),
                        "[[[1,2],[1,2],[1,2]],[[1,2],[1,2],[1,2]]]");

    /* nesting: CU_JSON_MAX_DEPTH levels parse (kube-apiserver's limit),
     * one more does not */
    for (int depth = CU_JSON_MAX_DEPTH - 1; depth <= CU_JSON_MAX_DEPTH + 1; depth++) {
        cu_buf_init(&b, 0);
        for (int i = 0; i < depth; i++)
            cu_buf_puts(&b, "[");
        for (int i = 0; i < depth; i++)
            cu_buf_puts(&b, "]");
        cu_diag_init(&d);
        cu_err err = cu_doc_parse("deep.json", b.data, b.len, &f->a, &docs, &nd, &d);
        if (depth <= CU_JSON_MAX_DEPTH) {
            assert_int_equal(err, CU_OK);
        } else {
            char want[100];
            snprintf(want, sizeof want, "deep.json:1:%d: nesting deeper than %d levels",
                     CU_JSON_MAX_DEPTH + 1, CU_JSON_MAX_DEPTH);
            assert_int_equal(err, CU_ESYNTAX);
            assert_string_equal(d.msgs[0], want);
        }
        cu_diag_free(&d);
        cu_buf_free(&b);
    }

    /* nesting reached through an alias counts too */
    cu_buf_init(&b, 0);
    cu_buf_puts(&b, "a: &deep ");
    for (int i = 0; i < CU_JSON_MAX_DEPTH - 56; i++)
        cu_buf_puts(&b, "[");
    for (int i = 0; i < CU_JSON_MAX_DEPTH - 56; i++)
        cu_buf_puts(&b, "]");
    cu_buf_puts(&b, "\nb: ");
    for (int i = 0; i < 60; i++)
        cu_buf_puts(&b, "[");
    cu_buf_puts(&b, "*deep");
    for (int i = 0; i < 60; i++)
        cu_buf_puts(&b, "]");
    cu_buf_puts(&b, "\n");
    cu_diag_init(&d);
    assert_int_equal(cu_doc_parse("alias.yaml", b.data, b.len, &f->a, &docs, &nd, &d), CU_ESYNTAX);
    char want[100];
    snprintf(want, sizeof want,
             "alias.yaml:2:64: nesting deeper than %d levels (through alias *deep)",
             CU_JSON_MAX_DEPTH);
    assert_string_equal(d.msgs[0], want);
    cu_diag_free(&d);
    cu_buf_free(&b);
}

static void test_parse_file(void **state)
{
    fx *f = *state;
    cu_doc *docs;
    size_t nd;
    cu_diag d;

    cu_diag_init(&d);
    assert_int_equal(cu_doc_parse_file("/nonexistent/x.yaml", &f->a, &docs, &nd, &d), CU_EIO);
    assert_int_equal(d.n, 1);
    assert_string_equal(d.msgs[0], "/nonexistent/x.yaml: No such file or directory");
    cu_diag_free(&d);

    cu_diag_init(&d);
    assert_int_equal(cu_doc_parse_file("/tmp", &f->a, &docs, &nd, &d), CU_EIO);
    assert_string_equal(d.msgs[0], "/tmp: Is a directory");
    cu_diag_free(&d);

    char path[] = "/tmp/cu_test_doc_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *text = "a: 1\n---\nb: [\n";
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    cu_diag_init(&d);
    assert_int_equal(cu_doc_parse_file(path, &f->a, &docs, &nd, &d), CU_ESYNTAX);
    char *want = cu_arena_printf(&f->a,
                                 "%s:4:1: did not find expected node content "
                                 "while parsing a flow node",
                                 path);
    assert_string_equal(d.msgs[0], want);
    cu_diag_free(&d);

    assert_int_equal(ftruncate(fd, 0), 0);
    assert_int_equal(pwrite(fd, "x: 2\n", 5, 0), 5);
    cu_diag_init(&d);
    assert_int_equal(cu_doc_parse_file(path, &f->a, &docs, &nd, &d), CU_OK);
    assert_int_equal(nd, 1);
    assert_string_equal(docs[0].file, path);
    assert_scalar(cu_node_get(docs[0].root, "x"), "2", 1);
    cu_diag_free(&d);

    /* one byte over 64 MiB (a sparse file) is refused */
    assert_int_equal(ftruncate(fd, ((off_t)64 << 20) + 1), 0);
    cu_diag_init(&d);
    assert_int_equal(cu_doc_parse_file(path, &f->a, &docs, &nd, &d), CU_EINVAL);
    assert_non_null(strstr(d.msgs[0], "larger than 64 MiB"));
    assert_memory_equal(d.msgs[0], path, strlen(path));
    cu_diag_free(&d);
    close(fd);
    unlink(path);
}

/* ---------------- readers ---------------- */

static void test_readers(void **state)
{
    fx *f = *state;
    cu_node *r =
        parse1(f, "spec:\n  template:\n    spec: {x: 1}\n  a.b: dotted\nn: ~\nq: 'null'\n");
    assert_scalar(cu_node_path(r, "spec.template.spec.x"), "1", 1);
    assert_ptr_equal(cu_node_path(r, "spec"), cu_node_get(r, "spec"));
    assert_null(cu_node_path(r, "spec.missing.x"));
    assert_null(cu_node_path(r, "spec.template.spec.x.y")); /* through a scalar */
    assert_null(cu_node_path(r, "spec.a"));                 /* keys with dots are not addressable */
    assert_null(cu_node_get(NULL, "a"));
    assert_null(cu_node_get(cu_node_get(r, "n"), "a"));
    assert_true(cu_node_is_null(cu_node_get(r, "n")));
    assert_null(cu_node_scalar(cu_node_get(r, "n")));
    assert_false(cu_node_is_null(cu_node_get(r, "q")));
    assert_string_equal(cu_node_scalar(cu_node_get(r, "q")), "null");
    assert_null(cu_node_scalar(cu_node_get(r, "spec")));

    static const struct {
        const char *text;
        int plain, is_null;
    } nulls[] = {
        { "null", 1, 1 }, { "Null", 1, 1 }, { "NULL", 1, 1 }, { "~", 1, 1 },    { "", 1, 1 },
        { "nULL", 1, 0 }, { "null", 0, 0 }, { "", 0, 0 },     { "none", 1, 0 },
    };
    for (size_t i = 0; i < sizeof(nulls) / sizeof(nulls[0]); i++) {
        cu_node *n = nulls[i].plain ? cu_node_new_plain(&f->a, nulls[i].text)
                                    : cu_node_new_str(&f->a, nulls[i].text);
        if (cu_node_is_null(n) != nulls[i].is_null)
            fail_msg("is_null(\"%s\", plain=%d) != %d", nulls[i].text, nulls[i].plain,
                     nulls[i].is_null);
    }
    assert_true(cu_node_is_null(NULL));

    static const struct {
        const char *text;
        cu_err err;
        int v;
    } bools[] = {
        { "true", CU_OK, 1 },     { "True", CU_OK, 1 },      { "TRUE", CU_OK, 1 },
        { "false", CU_OK, 0 },    { "FALSE", CU_OK, 0 },     { "yes", CU_OK, 1 },
        { "Yes", CU_OK, 1 },      { "NO", CU_OK, 0 },        { "on", CU_OK, 1 },
        { "Off", CU_OK, 0 },      { "tRUE", CU_EINVAL, 0 },  { "1", CU_EINVAL, 0 },
        { "y", CU_EINVAL, 0 },    { "truex", CU_EINVAL, 0 }, { "", CU_EINVAL, 0 },
        { "null", CU_EINVAL, 0 },
    };
    for (size_t i = 0; i < sizeof(bools) / sizeof(bools[0]); i++) {
        int v = -1;
        cu_err err = cu_node_bool(cu_node_new_plain(&f->a, bools[i].text), &v);
        if (err != bools[i].err || (err == CU_OK && v != bools[i].v))
            fail_msg("bool(\"%s\"): err %d v %d", bools[i].text, err, v);
    }
    int bv;
    assert_int_equal(cu_node_bool(cu_node_new_map(&f->a), &bv), CU_EINVAL);
    assert_int_equal(cu_node_bool(NULL, &bv), CU_EINVAL);

    static const struct {
        const char *text;
        cu_err err;
        int64_t v;
    } ints[] = {
        { "0", CU_OK, 0 },
        { "42", CU_OK, 42 },
        { "-17", CU_OK, -17 },
        { "+5", CU_OK, 5 },
        { "9223372036854775807", CU_OK, INT64_MAX },
        { "-9223372036854775808", CU_OK, INT64_MIN },
        { "9223372036854775808", CU_EOVERFLOW, 0 },
        { "-9223372036854775809", CU_EOVERFLOW, 0 },
        { "99999999999999999999999", CU_EOVERFLOW, 0 },
        { "", CU_EINVAL, 0 },
        { "-", CU_EINVAL, 0 },
        { "1.0", CU_EINVAL, 0 },
        { "1e3", CU_EINVAL, 0 },
        { "0x10", CU_EINVAL, 0 },
        { " 1", CU_EINVAL, 0 },
        { "1 ", CU_EINVAL, 0 },
        { "12abc", CU_EINVAL, 0 },
        { "1_000", CU_EINVAL, 0 },
        { "--1", CU_EINVAL, 0 },
    };
    for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
        int64_t v = 12345;
        cu_err err = cu_node_int(cu_node_new_plain(&f->a, ints[i].text), &v);
        if (err != ints[i].err || (err == CU_OK && v != ints[i].v))
            fail_msg("int(\"%s\"): err %d v %lld", ints[i].text, err, (long long)v);
    }
    int64_t iv;
    assert_int_equal(cu_node_int(cu_node_new_str(&f->a, "7"), &iv), CU_OK); /* text counts */
    assert_int_equal(iv, 7);
    assert_int_equal(cu_node_int(cu_node_new_seq(&f->a), &iv), CU_EINVAL);
}

/* ---------------- building and editing ---------------- */

static void test_build_and_edit(void **state)
{
    fx *f = *state;
    cu_arena *a = &f->a;
    cu_node *m = cu_node_new_map(a);
    assert_int_equal(m->type, CU_NODE_MAP);
    assert_int_equal(m->n, 0);
    char key[16];
    for (int i = 0; i < 20; i++) { /* grows past the initial capacity */
        snprintf(key, sizeof(key), "k%d", i);
        assert_int_equal(cu_node_set(a, m, key, cu_node_new_int(a, i)), CU_OK);
    }
    assert_int_equal(m->n, 20);
    /* key is copied */
    snprintf(key, sizeof(key), "zz");
    assert_int_equal(cu_node_set(a, m, key, cu_node_new_bool(a, 1)), CU_OK);
    key[0] = 'q';
    assert_non_null(cu_node_get(m, "zz"));
    /* replacing keeps the position */
    assert_int_equal(cu_node_set(a, m, "k3", cu_node_new_str(a, "three")), CU_OK);
    assert_int_equal(m->n, 21);
    assert_string_equal(m->keys[3], "k3");
    assert_scalar(m->vals[3], "three", 0);

    cu_node *del = cu_node_del(m, "k1");
    assert_scalar(del, "1", 1);
    assert_int_equal(m->n, 20);
    assert_string_equal(m->keys[0], "k0");
    assert_string_equal(m->keys[1], "k2");
    assert_string_equal(m->keys[19], "zz");
    assert_null(cu_node_del(m, "k1"));

    assert_int_equal(cu_node_rename(a, m, "k2", "two"), 1);
    assert_string_equal(m->keys[1], "two");
    assert_null(cu_node_get(m, "k2"));
    assert_int_equal(cu_node_rename(a, m, "two", "k0"), 0); /* would duplicate */
    assert_string_equal(m->keys[1], "two");
    assert_int_equal(cu_node_rename(a, m, "missing", "x"), 0);
    assert_int_equal(cu_node_rename(a, m, "two", "two"), 1);

    cu_node *s = cu_node_new_seq(a);
    for (int i = 0; i < 10; i++)
        assert_int_equal(cu_node_push(a, s, cu_node_new_int(a, i * 10)), CU_OK);
    assert_int_equal(s->n, 10);
    assert_null(s->keys);
    assert_scalar(s->vals[9], "90", 1);
    assert_int_equal(cu_node_set(a, m, "list", s), CU_OK);

    /* wrong node types and NULL values are refused */
    assert_int_equal(cu_node_set(a, s, "x", cu_node_new_null(a)), CU_EINVAL);
    assert_int_equal(cu_node_push(a, m, cu_node_new_null(a)), CU_EINVAL);
    assert_int_equal(cu_node_set(a, m, "x", NULL), CU_EINVAL);
    assert_null(cu_node_del(s, "x"));

    assert_scalar(cu_node_new_int(a, INT64_MIN), "-9223372036854775808", 1);
    assert_scalar(cu_node_new_bool(a, 0), "false", 1);
    assert_scalar(cu_node_new_null(a), "null", 1);
    assert_scalar(cu_node_new_plain(a, "1.5"), "1.5", 1);

    /* clone is deep */
    cu_node *c = cu_node_clone(a, m);
    assert_string_equal(json_of(f, c, 0), json_of(f, m, 0));
    assert_int_equal(cu_node_set(a, c, "k0", cu_node_new_str(a, "changed")), CU_OK);
    assert_int_equal(cu_node_push(a, cu_node_get(c, "list"), cu_node_new_null(a)), CU_OK);
    assert_scalar(cu_node_get(m, "k0"), "0", 1);
    assert_int_equal(cu_node_get(m, "list")->n, 10);
    assert_null(cu_node_clone(a, NULL));

    /* parsed trees can be edited: exact-size arrays grow on demand */
    cu_node *p = parse1(f, "a: [1]\nb: x\n");
    assert_int_equal(cu_node_push(a, cu_node_get(p, "a"), cu_node_new_int(a, 2)), CU_OK);
    assert_int_equal(cu_node_set(a, p, "c", cu_node_new_map(a)), CU_OK);
    assert_string_equal(json_of(f, p, 0), "{\"a\":[1,2],\"b\":\"x\",\"c\":{}}");
}

/* ---------------- emitting ---------------- */

static void test_emit_json(void **state)
{
    fx *f = *state;
    static const struct {
        const char *yaml, *json;
    } cases[] = {
        { "{a: 1, b: [true, x]}", "{\"a\":1,\"b\":[true,\"x\"]}" },
        { "[1, -0, 1.5, -2.5E+3, 1e3, 0x1f, 01, +1, .5, 1., 1_000, .inf, 1.5.2]",
          "[1,-0,1.5,-2.5E+3,1e3,\"0x1f\",\"01\",\"+1\",\".5\",\"1.\",\"1_000\",\".inf\","
          "\"1.5.2\"]" },
        { "[null, Null, NULL, ~, 'null', \"~\", true, True, FALSE, 'true', yes, no]",
          "[null,null,null,null,\"null\",\"~\",true,true,false,\"true\",\"yes\",\"no\"]" },
        { "{a: , b: '', c: \"1\", '2': 3}", "{\"a\":null,\"b\":\"\",\"c\":\"1\",\"2\":3}" },
        { "{}", "{}" },
        { "[]", "[]" },
        { "[{}, [], [[]]]", "[{},[],[[]]]" },
        { "plain text", "\"plain text\"" },
        { "\"caf\\u00e9 \\u2028 \\x85 \\x7f\"", "\"caf\xc3\xa9 \\u2028 \\u0085 \\u007f\"" },
        { "\"q\\\"b\\\\s/\\n\\r\\t\\x01\\x1f\\b\\f\"",
          "\"q\\\"b\\\\s/\\n\\r\\t\\u0001\\u001f\\u0008\\u000c\"" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *got = json_of(f, parse1(f, cases[i].yaml), 0);
        if (strcmp(got, cases[i].json) != 0)
            fail_msg("%s\n got %s\nwant %s", cases[i].yaml, got, cases[i].json);
        json_object_put(valid_json(got));
    }

    /* strings decode back to the same bytes through json-c */
    const char *raw = "tab\there \"q\" back\\slash \x01 nl\n caf\xc3\xa9 \xe2\x80\xa8 end";
    cu_node *m = cu_node_new_map(&f->a);
    assert_int_equal(cu_node_set(&f->a, m, raw, cu_node_new_str(&f->a, raw)), CU_OK);
    json_object *o = valid_json(json_of(f, m, 0));
    json_object *v = NULL;
    assert_true(json_object_object_get_ex(o, raw, &v));
    assert_string_equal(json_object_get_string(v), raw);
    json_object_put(o);

    /* invalid UTF-8 in a built string becomes U+FFFD */
    assert_string_equal(json_of(f,
                                cu_node_new_str(&f->a, "a\xff"
                                                       "b\xc3"),
                                0),
                        "\"a\\ufffdb\\ufffd\"");

    /* pretty printing like json.dumps(indent=2) */
    cu_node *p = parse1(f, "{a: 1, b: [], c: {}, d: [1, {e: f}], g: {h: null}}");
    assert_string_equal(json_of(f, p, 2), "{\n"
                                          "  \"a\": 1,\n"
                                          "  \"b\": [],\n"
                                          "  \"c\": {},\n"
                                          "  \"d\": [\n"
                                          "    1,\n"
                                          "    {\n"
                                          "      \"e\": \"f\"\n"
                                          "    }\n"
                                          "  ],\n"
                                          "  \"g\": {\n"
                                          "    \"h\": null\n"
                                          "  }\n"
                                          "}");
    assert_string_equal(json_of(f, p, 4), json_of(f, parse1(f, json_of(f, p, 4)), 4));
    assert_string_equal(json_of(f, cu_node_new_map(&f->a), 2), "{}");
    assert_string_equal(json_of(f, NULL, 0), "null");

    /* emitting appends and reports a full buffer */
    cu_buf b;
    cu_buf_init(&b, 16);
    cu_buf_puts(&b, "x=");
    assert_int_equal(cu_node_emit_json(cu_node_new_int(&f->a, 5), &b, 0), CU_OK);
    assert_string_equal(cu_buf_str(&b), "x=5");
    assert_int_equal(cu_node_emit_json(p, &b, 0), CU_ENOMEM);
    cu_buf_free(&b);
}

static void test_emit_yaml_layout(void **state)
{
    fx *f = *state;
    cu_node *r = parse1(f, "{apiVersion: v1, kind: List, items: [{name: a, ports: [80, 443], "
                           "env: [], labels: {}}, {name: b, nested: {x: {y: z}}}], "
                           "matrix: [[1, 2], [], [[3]]], empty: '', none: , t: 'true'}");
    assert_string_equal(yaml_of(f, r), "apiVersion: v1\n"
                                       "kind: List\n"
                                       "items:\n"
                                       "  - name: a\n"
                                       "    ports:\n"
                                       "      - 80\n"
                                       "      - 443\n"
                                       "    env: []\n"
                                       "    labels: {}\n"
                                       "  - name: b\n"
                                       "    nested:\n"
                                       "      x:\n"
                                       "        \"y\": z\n"
                                       "matrix:\n"
                                       "  -\n"
                                       "    - 1\n"
                                       "    - 2\n"
                                       "  - []\n"
                                       "  -\n"
                                       "    -\n"
                                       "      - 3\n"
                                       "empty: \"\"\n"
                                       "none:\n"
                                       "t: \"true\"\n");
    assert_string_equal(yaml_of(f, cu_node_new_map(&f->a)), "{}\n");
    assert_string_equal(yaml_of(f, cu_node_new_seq(&f->a)), "[]\n");
    assert_string_equal(yaml_of(f, cu_node_new_str(&f->a, "yes")), "\"yes\"\n");
    assert_string_equal(yaml_of(f, cu_node_new_plain(&f->a, "yes")), "yes\n");
    assert_string_equal(yaml_of(f, NULL), "null\n");
}

static void test_emit_yaml_quoting(void **state)
{
    fx *f = *state;
    static const struct {
        const char *s;
        int plain;
        const char *want; /* emitted scalar */
    } cases[] = {
        { "hello world", 0, "hello world" },
        { "1Gi", 0, "1Gi" },
        { "500m", 0, "500m" },
        { "a:b", 0, "a:b" },
        { "http://x.example/p?q=1#f", 0, "http://x.example/p?q=1#f" },
        { "caf\xc3\xa9", 0, "caf\xc3\xa9" },
        { "a-b", 0, "a-b" },
        { "", 0, "\"\"" },
        { "true", 0, "\"true\"" },
        { "False", 0, "\"False\"" },
        { "yes", 0, "\"yes\"" },
        { "NO", 0, "\"NO\"" },
        { "on", 0, "\"on\"" },
        { "off", 0, "\"off\"" },
        { "null", 0, "\"null\"" },
        { "~", 0, "\"~\"" },
        { "1", 0, "\"1\"" },
        { "-1", 0, "\"-1\"" },
        { "1.5", 0, "\"1.5\"" },
        { "1e3", 0, "\"1e3\"" },
        { "0x1f", 0, "\"0x1f\"" },
        { "0o17", 0, "\"0o17\"" },
        { ".inf", 0, "\".inf\"" },
        { "-.Inf", 0, "\"-.Inf\"" },
        { ".NaN", 0, "\".NaN\"" },
        { "1_000", 0, "\"1_000\"" },
        { "12:30", 0, "\"12:30\"" },
        { "2024-01-02", 0, "\"2024-01-02\"" },
        { "-x", 0, "\"-x\"" },
        { "- x", 0, "\"- x\"" },
        { "?x", 0, "\"?x\"" },
        { ":x", 0, "\":x\"" },
        { ",x", 0, "\",x\"" },
        { "[x", 0, "\"[x\"" },
        { "]x", 0, "\"]x\"" },
        { "{x", 0, "\"{x\"" },
        { "}x", 0, "\"}x\"" },
        { "#x", 0, "\"#x\"" },
        { "&x", 0, "\"&x\"" },
        { "*x", 0, "\"*x\"" },
        { "!x", 0, "\"!x\"" },
        { "|x", 0, "\"|x\"" },
        { ">x", 0, "\">x\"" },
        { "'x", 0, "\"'x\"" },
        { "%x", 0, "\"%x\"" },
        { "@x", 0, "\"@x\"" },
        { "`x", 0, "\"`x\"" },
        { "\"x\"", 0, "\"\\\"x\\\"\"" },
        { " lead", 0, "\" lead\"" },
        { "trail ", 0, "\"trail \"" },
        { "a: b", 0, "\"a: b\"" },
        { "a #b", 0, "\"a #b\"" },
        { "ends:", 0, "\"ends:\"" },
        { "line\nbreak", 0, "\"line\\nbreak\"" },
        { "cr\rx", 0, "\"cr\\rx\"" },
        { "tab\tx", 0, "\"tab\\tx\"" },
        { "back\\slash", 0, "back\\slash" },
        { "bell\x07", 0, "\"bell\\x07\"" },
        { "del\x7f", 0, "\"del\\x7F\"" },
        { "nel\xc2\x85", 0, "\"nel\\u0085\"" },
        { "ls\xe2\x80\xa8", 0, "\"ls\\u2028\"" },
        { "bom\xef\xbb\xbf", 0, "\"bom\\uFEFF\"" },
        { "bad\xff", 0, "\"bad\\uFFFD\"" },
        { "---", 0, "\"---\"" },
        { "...", 0, "\"...\"" },
        /* plain scalars keep their type and stay bare when they can */
        { "true", 1, "true" },
        { "-1", 1, "-1" },
        { "1e3", 1, "1e3" },
        { "~", 1, "~" },
        { "-x", 1, "-x" },
        { "a: b", 1, "\"a: b\"" },
        { "x\ny", 1, "\"x\\ny\"" },
        { "- x", 1, "\"- x\"" },
        { "#c", 1, "\"#c\"" },
        { "tab\tin", 1, "tab\tin" },
        { "tab\t#", 1, "\"tab\\t#\"" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cu_node *m = cu_node_new_map(&f->a);
        cu_node *v = cases[i].plain ? cu_node_new_plain(&f->a, cases[i].s)
                                    : cu_node_new_str(&f->a, cases[i].s);
        assert_int_equal(cu_node_set(&f->a, m, "k", v), CU_OK);
        const char *got = yaml_of(f, m);
        const char *want = cu_arena_printf(&f->a, "k: %s\n", cases[i].want);
        if (strcmp(got, want) != 0)
            fail_msg("value \"%s\" (plain=%d): got %s want %s", cases[i].s, cases[i].plain, got,
                     want);
        if (!strchr(cases[i].s, '\xff')) /* invalid UTF-8 is replaced */
            assert_yaml_round_trip(f, m, cases[i].want[0] != '"');
        /* keys follow the string rule */
        if (!cases[i].plain) {
            cu_node *k = cu_node_new_map(&f->a);
            assert_int_equal(cu_node_set(&f->a, k, cases[i].s, cu_node_new_plain(&f->a, "1")),
                             CU_OK);
            got = yaml_of(f, k);
            want = cu_arena_printf(&f->a, "%s: 1\n", cases[i].want);
            if (strcmp(got, want) != 0)
                fail_msg("key \"%s\": got %s want %s", cases[i].s, got, want);
            if (!strchr(cases[i].s, '\xff'))
                assert_yaml_round_trip(f, k, 1);
        }
    }
    /* "<<" as a key must not turn into a merge key */
    cu_node *m = cu_node_new_map(&f->a);
    assert_int_equal(cu_node_set(&f->a, m, "<<", cu_node_new_map(&f->a)), CU_OK);
    assert_string_equal(yaml_of(f, m), "\"<<\": {}\n");
    assert_yaml_round_trip(f, m, 1);
}

static void test_yaml_round_trips(void **state)
{
    fx *f = *state;
    static const char *const docs[] = {
        "a: 1\nb: [true, x, '3', 3, ~, '']\nc: {d: {e: [[1, [2]], {f: g}]}}\n",
        "- - - deep\n  - x\n- {}\n- []\n- {a: [], b: {}}\n- ''\n-\n- {k: }\n",
        "{\"json\": [1, 2.5, -3e4, \"s\\u0001\\u00e9\"], \"o\": {\"n\": null, \"t\": true}}",
        "s: |\n  multi\n  line\n\n  text\nf: >-\n  folded\n  text\nq: 'it''s'\n"
        "dq: \"\\t tab \\\" quote\"\nspaces: '  x  '\nhash: 'a #b'\ncolon: 'a: b'\n",
        "base: &b {x: 1, y: [1, 2]}\nderived:\n  <<: *b\n  z: 3\nlist: [*b, *b]\n",
        "? complex key with spaces\n: v\n'quoted key': 1\n\"true\": bool-looking key\n"
        "'123': numeric key\n'': empty key\n'-': dash key\n",
        "plain: a\tb c\n",
        "unicode: \"\\u2028 \\x85 \\ufeff caf\xc3\xa9 \xf0\x9f\x98\x80\"\n",
    };
    for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++)
        assert_yaml_round_trip(f, parse1(f, docs[i]), 1);

    /* a key too long for a simple key is written as "? key" */
    char longk[2001];
    memset(longk, 'k', sizeof(longk) - 1);
    longk[sizeof(longk) - 1] = '\0';
    cu_node *m = cu_node_new_map(&f->a);
    cu_node *inner = cu_node_new_map(&f->a);
    assert_int_equal(cu_node_set(&f->a, inner, "a", cu_node_new_int(&f->a, 1)), CU_OK);
    assert_int_equal(cu_node_set(&f->a, m, longk, inner), CU_OK);
    assert_int_equal(cu_node_set(&f->a, m, "short", cu_node_new_str(&f->a, longk)), CU_OK);
    cu_node *s = cu_node_new_seq(&f->a);
    assert_int_equal(cu_node_push(&f->a, s, m), CU_OK);
    const char *y = yaml_of(f, s);
    assert_memory_equal(y, "-\n  ? kkk", 9);
    assert_yaml_round_trip(f, s, 1);

    /* a built tree with every awkward string as key and value */
    static const char *const strs[] = { "",   "true", "1",  "a: b", "#",    "- x", "x\ny", " s ",
                                        "\"", "'",    "\\", "\x01", "null", "~",   "<<",   "?" };
    cu_node *t = cu_node_new_map(&f->a);
    cu_node *seq = cu_node_new_seq(&f->a);
    for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
        cu_node *inner2 = cu_node_new_map(&f->a);
        assert_int_equal(cu_node_set(&f->a, inner2, strs[i], cu_node_new_str(&f->a, strs[i])),
                         CU_OK);
        assert_int_equal(cu_node_set(&f->a, inner2, "p", cu_node_new_plain(&f->a, strs[i])), CU_OK);
        assert_int_equal(cu_node_push(&f->a, seq, inner2), CU_OK);
        assert_int_equal(cu_node_set(&f->a, t, strs[i], cu_node_new_str(&f->a, strs[i])), CU_OK);
    }
    assert_int_equal(cu_node_set(&f->a, t, "seq", seq), CU_OK);
    assert_yaml_round_trip(f, t, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_parse_positions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_parse_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_multi_document_yaml, setup, teardown),
        cmocka_unit_test_setup_teardown(test_json_input, setup, teardown),
        cmocka_unit_test_setup_teardown(test_empty_documents, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duplicate_keys, setup, teardown),
        cmocka_unit_test_setup_teardown(test_limits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_parse_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_readers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_build_and_edit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_emit_json, setup, teardown),
        cmocka_unit_test_setup_teardown(test_emit_yaml_layout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_emit_yaml_quoting, setup, teardown),
        cmocka_unit_test_setup_teardown(test_yaml_round_trips, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
