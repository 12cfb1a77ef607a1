/*
 * fuzz_protobuf.c - libFuzzer target for the Kubernetes protobuf decoder
 * (cu_protobuf.c): the bodies kubectl's typed clients send as
 * application/vnd.kubernetes.protobuf, read straight off the network.
 *
 * The input is the body ("k8s\0" + runtime.Unknown; seeds for every kind
 * the decoder knows are in fuzz-seeds-protobuf/). Besides "no crash, no
 * sanitizer report", these properties are checked (a violation aborts):
 *  - a refusal says why; a success is an object whose apiVersion and
 *    kind are one of the five decoded kinds;
 *  - the result prints as JSON that reads back equal (no value json-c
 *    cannot write, e.g. an invalid number);
 *  - a field the envelope does not know, appended, changes nothing (a
 *    proto reader skips unknown fields), and so does a second copy of
 *    the same body (proto: the last typeMeta/raw wins, and they are the
 *    same);
 *  - decoding is deterministic: the same bytes, the same object.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_apiserver.h"
#include "cu_json.h"
#include "cu_patch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void must(int cond)
{
    if (!cond)
        abort();
}

static json_object *decode(const uint8_t *d, size_t n)
{
    char err[512];
    err[0] = '\0';
    json_object *o = cu_k8s_protobuf_to_json(d, n, err, sizeof err);
    must(o != NULL || err[0] != '\0');
    return o;
}

static int known(const char *av, const char *kind)
{
    static const char *const k[][2] = {
        { "v1", "Namespace" },
        { "v1", "ConfigMap" },
        { "v1", "Secret" },
        { "v1", "ServiceAccount" },
        { "scheduling.k8s.io/v1", "PriorityClass" },
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
        if (av && kind && strcmp(av, k[i][0]) == 0 && strcmp(kind, k[i][1]) == 0)
            return 1;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 256 * 1024)
        return 0;
    json_object *o = decode(data, size);
    if (!o)
        return 0;
    must(json_object_is_type(o, json_type_object));
    must(known(cu_jstr(o, "apiVersion"), cu_jstr(o, "kind")));

    /* prints and reads back */
    const char *text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
    json_object *back = cu_json_parse(NULL, text, strlen(text), NULL, 0);
    must(back && cu_json_equal(o, back));
    json_object_put(back);

    /* deterministic */
    json_object *again = decode(data, size);
    must(again && cu_json_equal(o, again));
    json_object_put(again);

    /* an unknown envelope field (15, varint 1), then the body once more */
    size_t body = size - 4, n = size + 2 + body;
    uint8_t *more = malloc(n);
    if (more) {
        memcpy(more, data, size);
        more[size] = 15 << 3;
        more[size + 1] = 1;
        memcpy(more + size + 2, data + 4, body);
        json_object *x = decode(more, size + 2);
        must(x && cu_json_equal(o, x));
        json_object_put(x);
        json_object *y = decode(more, n);
        must(y && cu_json_equal(o, y));
        json_object_put(y);
        free(more);
    }
    json_object_put(o);
    return 0;
}
