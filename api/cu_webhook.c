/*
 * cu_webhook.c - the table of Kueue's webhooks and their hooks.
 *
 * INTERFACE STUB of branch h16-base: every hook allows. The helper that owns
 * this file replaces it with Kueue's rules.
 */
#include "cu_webhook.h"

#include <stdarg.h>
#include <string.h>

void cu_wh_resp_init(cu_wh_resp *r)
{
    memset(r, 0, sizeof(*r));
    r->allowed = 1;
    cu_buf_init(&r->message, 64 * 1024);
    cu_diag_init(&r->warnings);
}

void cu_wh_resp_free(cu_wh_resp *r)
{
    cu_buf_free(&r->message);
    cu_diag_free(&r->warnings);
}

void cu_wh_deny(cu_wh_resp *r, const char *fmt, ...)
{
    va_list ap;
    r->allowed = 0;
    r->code = 403;
    r->reason = "Forbidden";
    va_start(ap, fmt);
    cu_buf_vprintf(&r->message, fmt, ap);
    va_end(ap);
}

static void allow(const cu_wh_env *env, cu_wh_req *req, cu_wh_resp *resp)
{
    (void)env, (void)req, (void)resp;
}

#define OPS(a, b) ((1u << (a)) | (1u << (b)))
static const cu_wh_hook hooks[] = {
    { "mjob.kb.io", "/mutate-batch-v1-job", 1, "batch", "v1", "jobs", 1u << CU_WH_CREATE, allow },
    { "vjob.kb.io", "/validate-batch-v1-job", 0, "batch", "v1", "jobs",
      OPS(CU_WH_CREATE, CU_WH_UPDATE), allow },
};

const cu_wh_hook *cu_wh_hooks(size_t *n)
{
    *n = sizeof(hooks) / sizeof(hooks[0]);
    return hooks;
}

const cu_wh_hook *cu_wh_hook_by_path(const char *path)
{
    size_t n;
    const cu_wh_hook *h = cu_wh_hooks(&n);
    for (size_t i = 0; path && i < n; i++)
        if (strcmp(h[i].path, path) == 0)
            return &h[i];
    return NULL;
}
