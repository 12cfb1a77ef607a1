/*
 * fuzz_yaml.c - libFuzzer target for cu_doc: parses arbitrary bytes; for
 * every document parsed it emits JSON (compact and pretty) and YAML,
 * re-parses each output and checks that it parses to one document whose
 * JSON form equals the original's.
 *
 * Build: clang -fsanitize=fuzzer,address,undefined -I api api/fuzz_yaml.c
 *        base/cu_doc.c base/cu_base.c -lyaml
 * Known limit: libyaml refuses JSON object keys longer than 1024
 * characters (simple-key limit), so the JSON re-parse is skipped for trees
 * holding long keys (the YAML emitter writes those as "? key").
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_doc.h"

static size_t max_key_len(const cu_node *n)
{
    size_t m = 0;
    for (size_t i = 0; n->type != CU_NODE_SCALAR && i < n->n; i++) {
        if (n->type == CU_NODE_MAP && strlen(n->keys[i]) > m)
            m = strlen(n->keys[i]);
        size_t c = max_key_len(n->vals[i]);
        if (c > m)
            m = c;
    }
    return m;
}

/* Re-parses text (an emitter's output) and checks that it is one
 * document whose compact JSON equals want. */
static void check_reparse(const char *what, const cu_buf *text, const char *want)
{
    cu_arena a;
    cu_arena_init(&a, 0);
    cu_diag d;
    cu_diag_init(&d);
    cu_doc *docs;
    size_t nd;
    cu_err err = cu_doc_parse(what, text->data, text->len, &a, &docs, &nd, &d);
    if (err != CU_OK || nd != 1) {
        fprintf(stderr, "%s output does not re-parse (err %d, %zu docs): %s\n--- text:\n%s\n", what,
                err, nd, d.n ? d.msgs[0] : "", cu_buf_str(text));
        abort();
    }
    cu_buf j;
    cu_buf_init(&j, 0);
    if (cu_node_emit_json(docs[0].root, &j, 0) != CU_OK || strcmp(cu_buf_str(&j), want) != 0) {
        fprintf(stderr, "%s round trip changed the tree:\nwant %s\ngot  %s\n--- text:\n%s\n", what,
                want, cu_buf_str(&j), cu_buf_str(text));
        abort();
    }
    cu_buf_free(&j);
    cu_diag_free(&d);
    cu_arena_free(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cu_arena a;
    cu_arena_init(&a, 0);
    cu_diag d;
    cu_diag_init(&d);
    cu_doc *docs;
    size_t nd;
    if (cu_doc_parse("fuzz", (const char *)data, size, &a, &docs, &nd, &d) == CU_OK) {
        for (size_t i = 0; i < nd; i++) {
            const cu_node *root = docs[i].root;
            if (!root)
                abort(); /* empty documents are skipped by contract */
            cu_buf json, pretty, yaml;
            cu_buf_init(&json, 0);
            cu_buf_init(&pretty, 0);
            cu_buf_init(&yaml, 0);
            if (cu_node_emit_json(root, &json, 0) || cu_node_emit_json(root, &pretty, 2) ||
                cu_node_emit_yaml(root, &yaml))
                abort();
            if (max_key_len(root) < 150) {
                check_reparse("json", &json, json.data);
                check_reparse("json-pretty", &pretty, json.data);
            }
            check_reparse("yaml", &yaml, json.data);
            cu_buf_free(&json);
            cu_buf_free(&pretty);
            cu_buf_free(&yaml);
        }
    } else if (d.n == 0) {
        abort(); /* every failure must say why */
    }
    cu_diag_free(&d);
    cu_arena_free(&a);
    return 0;
}
