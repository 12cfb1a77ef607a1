/*
 * fuzz_whconvert.c - libFuzzer target for the v1beta1 <-> v1beta2
 * conversion (cu_wh_convert, and cu_convert_v1beta2 on the same input as
 * a cu_node document: the two share the rules of cu_convert.c).
 *
 * The input is a JSON object. It is converted to both versions. Each
 * conversion either fails with a message, or gives an object in the
 * desired version; that object is taken around the round trip (to the
 * other version and back) again and again: after the first trip the
 * losses Kueue's conversion has are spent (and an object of a list already
 * in the desired version was left alone), so the next trips must give
 * back what they were given, in both versions. The input must not be
 * changed. Any mismatch aborts.
 *
 * Seeds: api/fuzz-seeds-whconvert.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_json.h"
#include "cu_objects.h"
#include "cu_webhook.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const versions[] = { "kueue.x-k8s.io/v1beta1", "kueue.x-k8s.io/v1beta2" };

static void check(int ok, const char *what, json_object *o)
{
    if (!ok) {
        fprintf(stderr, "fuzz_whconvert: %s: %s\n", what,
                o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN) : "(null)");
        abort();
    }
}

/* o converted to v; NULL when it is refused (then with a message). */
static json_object *conv(json_object *o, const char *v)
{
    json_object *out = NULL;
    cu_buf msg;
    cu_buf_init(&msg, 0);
    cu_err rc = cu_wh_convert(o, v, &out, &msg);
    if (rc == CU_OK) {
        check(out != NULL && out != o, "no new object", o);
        const char *api = cu_jstr(out, "apiVersion");
        check(api && strcmp(api, v) == 0, "not in the desired version", out);
    } else {
        check(out == NULL, "an object and an error", o);
        check(rc == CU_ENOMEM || msg.len > 0, "an error without a message", o);
    }
    cu_buf_free(&msg);
    return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_object *in = cu_json_parse(NULL, (const char *)data, size, NULL, 0);
    if (!in)
        return 0;
    json_object *orig = cu_jcopy(in);
    for (int k = 0; k < 2; k++) {
        const char *v = versions[k], *other = versions[1 - k];
        json_object *a = conv(in, v);
        if (!a)
            continue;
        json_object *b = conv(a, other), *a1 = b ? conv(b, v) : NULL;
        check(!b || a1, "a converted object does not convert back", b);
        json_object *b2 = a1 ? conv(a1, other) : NULL, *a2 = b2 ? conv(b2, v) : NULL;
        check(!a1 || (b2 && a2), "a round-tripped object does not convert", a1);
        check(!a1 || json_object_equal(a1, a2), "the second round trip differs", a1);
        json_object *b3 = a2 ? conv(a2, other) : NULL;
        check(!a2 || (b3 && json_object_equal(b2, b3)), "the third trip differs", b2);
        json_object_put(b3);
        json_object_put(a);
        json_object_put(b);
        json_object_put(a1);
        json_object_put(b2);
        json_object_put(a2);
    }
    check(json_object_equal(in, orig), "the input was changed", in);

    /* the same rules on the cu_node tree of `cueue convert` */
    cu_arena ar;
    cu_arena_init(&ar, 0);
    cu_node *n = cu_node_from_json(&ar, in);
    if (n) {
        cu_convert_v1beta2(&ar, n);
        cu_convert_v1beta2(&ar, n); /* again: nothing left to do, and no crash */
    }
    cu_arena_free(&ar);
    json_object_put(orig);
    json_object_put(in);
    return 0;
}
