/*
 * fuzz_patch.c - libFuzzer target for the patch bodies the embedded API
 * server applies to stored objects (cu_patch.c): JSON merge patch (RFC
 * 7386), JSON patch (RFC 6902), strategic merge patch and server-side
 * apply, all of them client-written.
 *
 * The input is one JSON object {"target": T, "patch": P, "ops": O,
 * "apiVersion": A, "kind": K}, every member optional (a seed per kind of
 * patch is in fuzz-seeds-patch/). Each patch kind is applied to T, and
 * besides "no crash, no sanitizer report" these properties are checked
 * (a violation aborts, a finding):
 *  - no patch function changes its inputs (they are borrowed);
 *  - a refusal says why (err is not empty); a success returns an object;
 *  - a merge patch applied twice gives what it gave once (RFC 7386 is
 *    idempotent), and so does a server-side apply of the same
 *    configuration;
 *  - a strategic merge patch of a kind without merge keys and without
 *    $-directives is a merge patch; without $-directives, one applied
 *    twice gives what it gave once, for any kind;
 *  - a JSON patch that succeeded: a "test" of the whole result against
 *    the result succeeds and changes nothing.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_json.h"
#include "cu_patch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void must(int cond)
{
    if (!cond)
        abort();
}

/* res or err: exactly one of them says something */
static void check_outcome(json_object *res, const char *err)
{
    if (res)
        must(json_object_is_type(res, json_type_object));
    else
        must(err[0] != '\0');
}

static int has_directive(const char *text) { return strchr(text, '$') != NULL; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 64 * 1024)
        return 0;
    json_object *in = cu_json_parse(NULL, (const char *)data, size, NULL, 0);
    if (!in || !json_object_is_type(in, json_type_object)) {
        json_object_put(in);
        return 0;
    }
    json_object *target = cu_jget(in, "target"), *patch = cu_jget(in, "patch");
    json_object *ops = cu_jget(in, "ops");
    const char *av = cu_jstr(in, "apiVersion"), *kind = cu_jstr(in, "kind");
    if (!av)
        av = "v1";
    if (!kind)
        kind = "Pod";
    json_object *before = cu_jcopy(in);
    char err[512];

    /* merge patch: idempotent */
    err[0] = '\0';
    json_object *m1 = cu_merge_patch(target, patch, err, sizeof err);
    check_outcome(m1, err);
    if (m1) {
        err[0] = '\0';
        json_object *m2 = cu_merge_patch(m1, patch, err, sizeof err);
        must(m2 && cu_json_equal(m1, m2));
        json_object_put(m2);
    }

    /* strategic merge patch, for the kind asked and for one without merge
     * keys (which must then be a merge patch) */
    err[0] = '\0';
    json_object *s1 = cu_strategic_merge_patch(target, patch, av, kind, err, sizeof err);
    check_outcome(s1, err);
    if (s1 && patch &&
        !has_directive(json_object_to_json_string_ext(patch, JSON_C_TO_STRING_PLAIN))) {
        err[0] = '\0';
        json_object *s2 = cu_strategic_merge_patch(s1, patch, av, kind, err, sizeof err);
        must(s2 && cu_json_equal(s1, s2));
        json_object_put(s2);
    }
    json_object_put(s1);
    err[0] = '\0';
    json_object *s0 =
        cu_strategic_merge_patch(target, patch, "fuzz.example.com/v1", "Fuzz", err, sizeof err);
    check_outcome(s0, err);
    if (s0 && m1 && patch &&
        !has_directive(json_object_to_json_string_ext(patch, JSON_C_TO_STRING_PLAIN)))
        must(cu_json_equal(s0, m1));
    json_object_put(s0);
    json_object_put(m1);

    /* server-side apply: applying the same configuration again changes
     * nothing */
    err[0] = '\0';
    json_object *a1 = cu_apply_patch(target, patch, av, kind, err, sizeof err);
    check_outcome(a1, err);
    if (a1) {
        err[0] = '\0';
        json_object *a2 = cu_apply_patch(a1, patch, av, kind, err, sizeof err);
        must(a2 && cu_json_equal(a1, a2));
        json_object_put(a2);
    }
    json_object_put(a1);

    /* JSON patch */
    err[0] = '\0';
    json_object *j1 = cu_json_patch(target, ops, err, sizeof err);
    /* any JSON value: an operation on "" may make the whole document an
     * array or a scalar, which the API server then refuses ("must be of
     * type object") */
    must(j1 ? 1 : err[0] != '\0');
    if (j1) {
        json_object *t = json_object_new_array(), *op = json_object_new_object();
        cu_jset_str(op, "op", "test");
        cu_jset_str(op, "path", "");
        json_object_object_add(op, "value", cu_jcopy(j1));
        json_object_array_add(t, op);
        err[0] = '\0';
        json_object *j2 = cu_json_patch(j1, t, err, sizeof err);
        must(j2 && cu_json_equal(j1, j2));
        json_object_put(j2);
        json_object_put(t);
    }
    json_object_put(j1);

    must(cu_json_equal(in, before)); /* inputs are borrowed, never changed */
    json_object_put(before);
    json_object_put(in);
    return 0;
}
