/*
 * fuzz_webhook.c - libFuzzer target for the webhook server's review
 * decoders (cu_whreview.h). The first byte picks the way in: 0 the first
 * hook of the table (cu_whrev_admission), 1 a mutating test hook that
 * edits the object as the input says (members removed and added, arrays
 * cut and grown, a value replaced: the JSON Patch generation), 2 the
 * conversion (/convert through cu_whrev_serve), 3 a path of the table
 * through cu_whrev_serve with a Content-Type, with an env whose
 * Configuration enables every integration Cueue serves (Job, Pod, JobSet,
 * LeaderWorkerSet: their hooks do their work, not the no-op), knows every
 * Namespace but "ghost" and has a LocalQueue "default" in each namespace
 * whose name starts with "d"; the rest is the body.
 * Checked beyond memory safety: the status is one the server answers
 * (200, 400, 404, 500); every answer to a review is a JSON object of the
 * review's apiVersion and kind with a response; an admission's response
 * has a uid string and an allowed boolean, and its patch, when present,
 * is base64 of a JSON array of operations each with an op and a path
 * string, and only for an allowed answer of a mutating hook; the edit the
 * test hook made gives a non-empty patch exactly when the object changed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cu_base64.h"
#include "cu_json.h"
#include "cu_webhook.h"
#include "cu_whreview.h"

static unsigned edit_seed;
static int edited_changed;

/* Edits the object by edit_seed's bits; records whether it changed. */
static void edit(const cu_wh_env *env, cu_wh_req *req, cu_wh_resp *resp)
{
    (void)env, (void)resp;
    edited_changed = 0;
    if (!req->object)
        return;
    json_object *before = cu_jcopy(req->object);
    unsigned s = edit_seed;
    if (s & 1) { /* drop the first member */
        json_object_object_foreach (req->object, k, v) {
            (void)v;
            json_object_object_del(req->object, k);
            break;
        }
    }
    if (s & 2)
        cu_jset_str(cu_jchild(cu_jchild(req->object, "metadata"), "labels"), "a/b~c", "x");
    if (s & 4)
        json_object_object_add(cu_jchild(req->object, "spec"), "suspend",
                               json_object_new_boolean(1));
    json_object_object_foreach (req->object, k, v) { /* arrays: cut or grown */
        (void)k;
        if (json_object_is_type(v, json_type_array)) {
            size_t n = json_object_array_length(v);
            if ((s & 8) && n)
                json_object_array_del_idx(v, n - 1, 1);
            if (s & 16)
                json_object_array_add(v, json_object_new_int(7));
        }
    }
    if (s & 32) /* a value replaced by one of another type */
        json_object_object_add(req->object, "kind", json_object_new_int(1));
    edited_changed = !cu_json_equal(before, req->object);
    json_object_put(before);
}

static const cu_kvs *fz_ns_labels(void *ud, const char *ns)
{
    static cu_kv kv = { "kubernetes.io/metadata.name", "" };
    static cu_kvs l = { 1, &kv };
    (void)ud;
    if (!strcmp(ns, "ghost"))
        return NULL;
    kv.value = ns;
    return &l;
}

static int fz_lq_exists(void *ud, const char *ns, const char *name)
{
    (void)ud;
    return ns[0] == 'd' && !strcmp(name, "default");
}

/* The env of way 3 (made once). */
static const cu_wh_env *fz_env(void)
{
    static cu_arena a;
    static cu_config cfg;
    static cu_wh_env env;
    static const char *fw[] = { "batch/job", "pod", "jobset.x-k8s.io/jobset",
                                "leaderworkerset.x-k8s.io/leaderworkerset" };
    if (!env.cfg) {
        cu_arena_init(&a, 0);
        if (cu_config_init_defaults(&cfg, &a) != CU_OK)
            abort();
        cfg.frameworks.n = 4;
        cfg.frameworks.items = fw;
        env.cfg = &cfg;
        env.ns_labels = fz_ns_labels;
        env.lq_exists = fz_lq_exists;
    }
    return &env;
}

static const cu_wh_hook edit_hook = { "edit.test", "/edit", 1, "", "v1", "x", 1u, edit };

static void check_patch(json_object *resp, int may_patch)
{
    const char *p = cu_jstr(resp, "patch");
    if (!p)
        return;
    if (!may_patch || !cu_jstr(resp, "patchType") ||
        strcmp(cu_jstr(resp, "patchType"), "JSONPatch") != 0)
        abort();
    size_t n = 0;
    char *dec = cu_base64_decode(p, &n);
    json_object *ops = dec ? cu_json_parse(NULL, dec, n, NULL, 0) : NULL;
    if (!ops || !json_object_is_type(ops, json_type_array) || !json_object_array_length(ops))
        abort();
    for (size_t i = 0; i < json_object_array_length(ops); i++) {
        json_object *op = json_object_array_get_idx(ops, i);
        if (!cu_jstr(op, "op") || !cu_jstr(op, "path"))
            abort();
    }
    json_object_put(ops);
    free(dec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned way = data[0] & 3u;
    edit_seed = data[0] >> 2;
    const char *body = (const char *)data + 1;
    size_t len = size - 1;
    size_t nh = 0;
    const cu_wh_hook *hooks = cu_wh_hooks(&nh);
    const cu_wh_hook *h = way == 1 ? &edit_hook : &hooks[0];
    cu_buf out;
    cu_buf_init(&out, 0);
    const char *ctype = "application/json";
    int code, conv = way == 2;
    edited_changed = -1;
    if (way == 0 || way == 1)
        code = cu_whrev_admission(NULL, h, body, len, &out);
    else if (way == 2)
        code =
            cu_whrev_serve(NULL, CU_WH_CONVERT_PATH, "application/json", body, len, &out, &ctype);
    else
        code = cu_whrev_serve(fz_env(), hooks[edit_seed % nh].path,
                              edit_seed & 32 ? "text/plain" : "application/json; charset=utf-8",
                              body, len, &out, &ctype);
    if (code != 200 && code != 400 && code != 404 && code != 500)
        abort();
    if (way == 3)
        h = &hooks[edit_seed % nh];
    json_object *doc = cu_json_parse_str(cu_buf_str(&out));
    if (!doc || !json_object_is_type(doc, json_type_object) || !ctype)
        abort();
    json_object *resp = cu_jget(doc, "response");
    if (!json_object_is_type(resp, json_type_object) || !cu_jstr(resp, "uid"))
        abort();
    if (strcmp(cu_jstr(doc, "apiVersion"),
               conv ? "apiextensions.k8s.io/v1" : "admission.k8s.io/v1") != 0)
        abort();
    if (conv) {
        const char *st = cu_jstr(cu_jget(resp, "result"), "status");
        if (!st || (strcmp(st, "Success") != 0 && strcmp(st, "Failure") != 0) ||
            !json_object_is_type(cu_jget(resp, "convertedObjects"), json_type_array))
            abort();
    } else {
        json_object *allowed = cu_jget(resp, "allowed");
        if (!json_object_is_type(allowed, json_type_boolean))
            abort();
        check_patch(resp, h->mutating && cu_jas_true(allowed));
        if (way == 1 && code == 200 && edited_changed >= 0 &&
            (cu_jstr(resp, "patch") != NULL) != (edited_changed == 1))
            abort();
    }
    json_object_put(doc);
    cu_buf_free(&out);
    return 0;
}
