/*
 * fuzz_visibility.c - libFuzzer target for the visibility API's request
 * side (cu_visibility.h): arbitrary bytes are a request line as the
 * controller's server hands it over, "PATH?QUERY" (the first '?' splits
 * them; no '?' means no query). Each request is answered (cu_vis_serve)
 * over a small fixed set of pending workloads, and its SubjectAccessReview
 * attributes (cu_vis_attrs) and refusal (cu_vis_refuse) are built. Checked
 * beyond memory safety: every answer has a content type and a status the
 * API uses (200, 400, 404, 503), and is a JSON object unless it is the
 * plain "ok" of a health path; the
 * query parameter reader never writes past its buffer and gives a
 * terminated string.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cu_json.h"
#include "cu_visibility.h"

#define NW 4

static cu_workload objs[NW];
static cu_wl_info infos[NW];

static const cu_wl_info **pending(void *ud, size_t *n, int *oom)
{
    (void)ud;
    const cu_wl_info **v = calloc(NW, sizeof(*v));
    *oom = !v;
    for (int i = 0; v && i < NW; i++)
        v[i] = &infos[i];
    *n = v ? NW : 0;
    return v;
}

static int cq_known(void *ud, const char *name)
{
    (void)ud;
    return strcmp(name, "cq") == 0;
}

static int lq_known(void *ud, const char *ns, const char *name)
{
    (void)ud;
    return strcmp(ns, "team") == 0 && strcmp(name, "lq") == 0;
}

static const char *not_ready(void *ud)
{
    (void)ud;
    return NULL;
}

static void init(void)
{
    static const char *const names[NW] = { "w0", "w1", "w2", "w3" };
    for (int i = 0; i < NW; i++) {
        objs[i].meta.name = names[i];
        objs[i].meta.ns = "team";
        objs[i].meta.has_created = 1;
        objs[i].meta.created_ms = 1700000000000LL + i;
        infos[i].obj = &objs[i];
        infos[i].name = names[i];
        infos[i].ns = "team";
        infos[i].local_queue = "lq";
        infos[i].cluster_queue = "cq";
        infos[i].position = i;
        infos[i].priority = i;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    if (!ready) {
        init();
        ready = 1;
    }
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = 0;
    char *q = strchr(s, '?');
    if (q)
        *q++ = 0;
    cu_vis_src src = {
        .pending = pending, .cq_known = cq_known, .lq_known = lq_known, .not_ready = not_ready
    };
    cu_buf b;
    cu_buf_init(&b, 0);
    const char *ctype = NULL;
    int code = cu_vis_serve(&src, s, q, &b, &ctype);
    if (code != 200 && code != 400 && code != 404 && code != 503)
        abort();
    if (!ctype || !b.data)
        abort();
    if (strncmp(ctype, "text/plain", 10) != 0) { /* /healthz, /livez, /readyz: "ok" */
        json_object *doc = cu_json_parse_str(b.data);
        if (!doc || !json_object_is_type(doc, json_type_object))
            abort();
        json_object_put(doc);
    }
    cu_buf_free(&b);
    json_object_put(cu_vis_attrs(NULL, s));
    char msg[512];
    cu_vis_refuse(NULL, 403, "user", s, msg, sizeof msg);
    if (!memchr(msg, 0, sizeof msg))
        abort();
    char v[16];
    memset(v, 'x', sizeof v);
    const char *p = cu_vis_qparam(q ? q : "", "limit", v, sizeof v);
    if (p && !memchr(v, 0, sizeof v))
        abort();
    free(s);
    return 0;
}
