/*
 * fuzz_jsonpath.c - libFuzzer target for the embedded API server's
 * kubectl-style JSONPath evaluator (used for -o jsonpath field selection
 * and CRD printer columns, both user-written): the first line of the input
 * is the path, the rest a JSON document. Any crash or sanitizer report is a
 * finding; the result, when there is one, must be part of the document.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cu_apiserver.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = 0;
    char *nl = strchr(s, '\n');
    if (!nl) {
        free(s);
        return 0;
    }
    *nl = 0;
    json_object *doc = json_tokener_parse(nl + 1);
    if (doc) {
        json_object *v = cu_jsonpath_get(doc, s);
        if (v)
            (void)json_object_to_json_string(v); /* borrowed from doc: must be valid */
        json_object_put(doc);
    }
    free(s);
    return 0;
}
