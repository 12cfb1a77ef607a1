/*
 * fuzz_fields.c - libFuzzer target for the embedded API server's field
 * management (cu_fields.c), which reads client-written input: applied
 * configurations, metadata.managedFields sent by clients, and CRD schemas.
 *
 * The input is one JSON object {"schema": S, "live": L, "applied": A,
 * "update": U, "force": B}, every member optional. It runs a server-side
 * apply of A onto L (oracle from S), then an Update from L to U, and checks
 * two properties besides "no crash, no sanitizer report":
 *  - an apply that succeeded, applied again unchanged by the same manager,
 *    succeeds (no conflict with itself) and gives the same object;
 *  - the result of a successful apply carries an Apply entry of the manager
 *    in metadata.managedFields.
 * A violated property aborts (a finding).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_fields.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static json_object *member(json_object *o, const char *k)
{
    json_object *v = NULL;
    return o && json_object_object_get_ex(o, k, &v) ? v : NULL;
}

static int has_apply_entry(json_object *obj, const char *manager)
{
    json_object *mf = member(member(obj, "metadata"), "managedFields");
    if (!mf || !json_object_is_type(mf, json_type_array))
        return 0;
    for (size_t i = 0, n = json_object_array_length(mf); i < n; i++) {
        json_object *e = json_object_array_get_idx(mf, i);
        const char *m = json_object_get_string(member(e, "manager"));
        const char *op = json_object_get_string(member(e, "operation"));
        if (m && op && strcmp(m, manager) == 0 && strcmp(op, "Apply") == 0)
            return 1;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 64 * 1024)
        return 0;
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = 0;
    json_object *in = json_tokener_parse(s);
    free(s);
    if (!in || !json_object_is_type(in, json_type_object)) {
        json_object_put(in);
        return 0;
    }
    cu_field_oracle o;
    cu_fields_schema_oracle(member(in, "schema"), &o);
    json_object *live = member(in, "live"), *applied = member(in, "applied");
    if (live && !json_object_is_type(live, json_type_object))
        live = NULL;
    cu_fm_req r = { "fuzz-mgr", "v1", NULL, "2026-01-01T00:00:00Z",
                    json_object_get_boolean(member(in, "force")) };
    char err[512];
    if (applied && json_object_is_type(applied, json_type_object)) {
        cu_fm_conflict c;
        memset(&c, 0, sizeof c);
        json_object *res =
            cu_fields_apply(live, applied, &o, CU_SCOPE_ALL, &r, &c, err, sizeof err);
        if (res) {
            if (!has_apply_entry(res, r.manager))
                abort(); /* an apply that left no trace of its manager */
            cu_fm_conflict c2;
            memset(&c2, 0, sizeof c2);
            json_object *again =
                cu_fields_apply(res, applied, &o, CU_SCOPE_ALL, &r, &c2, err, sizeof err);
            if (!again || c2.n > 0) {
                if (getenv("FUZZ_FIELDS_DEBUG"))
                    fprintf(stderr, "first apply:\n%s\nsecond: %s (conflicts %zu: %s)\n",
                            json_object_to_json_string_ext(res, JSON_C_TO_STRING_PRETTY),
                            again ? "ok" : err, c2.n, c2.message);
                abort();
            }                                     /* the same manager conflicting with itself */
            if (!json_object_equal(res, again)) { /* both applies use one "now" */
                if (getenv("FUZZ_FIELDS_DEBUG"))
                    fprintf(stderr, "first apply:\n%s\nsecond apply:\n%s\n",
                            json_object_to_json_string_ext(res, JSON_C_TO_STRING_PLAIN),
                            json_object_to_json_string_ext(again, JSON_C_TO_STRING_PLAIN));
                abort();
            } /* applying the same configuration twice is not idempotent */
            json_object_put(again);
            json_object_put(res);
        }
    }
    json_object *upd = member(in, "update");
    if (upd && json_object_is_type(upd, json_type_object)) {
        json_object *nw = NULL;
        if (json_object_deep_copy(upd, &nw, NULL) == 0 && nw) {
            cu_fm_req u = r;
            u.manager = "fuzz-update";
            (void)cu_fields_update(live, nw, &o, CU_SCOPE_ALL, &u, err, sizeof err);
            (void)json_object_to_json_string(nw);
            json_object_put(nw);
        }
    }
    json_object_put(in);
    return 0;
}
