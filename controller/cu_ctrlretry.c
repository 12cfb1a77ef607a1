/*
 * cu_ctrlretry.c - refused writes: backoff, which refusals are for good,
 * and their report (see cu_ctrlretry.h).
 */
#include "cu_ctrlretry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_json.h"

int64_t cu_ctrl_retry_delay_ms(int code, int n)
{
    int transient = code == 0 || code == 409 || code == 429 || code >= 500;
    int64_t cap = transient ? 10000 : 1000000;
    if (n < 1)
        n = 1;
    int64_t d = 200;
    for (int i = 1; i < n && d < cap; i++)
        d *= 2;
    return d > cap ? cap : d;
}

int cu_ctrl_refused_for_good(int code)
{
    return code == 400 || code == 403 || code == 404 || code == 422;
}

const char *cu_ctrl_status_text(int code, const char *error, const char *body, char *out, size_t n)
{
    if (!n)
        return out;
    json_object *st = body && *body ? cu_json_parse_str(body) : NULL;
    const char *msg = cu_jstr(st, "message"), *why = cu_jstr(st, "reason");
    if (code == 0)
        snprintf(out, n, "no answer: %s", error && *error ? error : "request failed");
    else if (msg)
        snprintf(out, n, "HTTP %d%s%s: %s", code, why ? " " : "", why ? why : "", msg);
    else
        snprintf(out, n, "HTTP %d%s%.300s", code, body && *body ? ": " : "", body ? body : "");
    json_object_put(st);
    return out;
}

int cu_ctrl_api_outcome(cu_api_health *h, const char *server, int code, const char *error,
                        const char *body, char *out, size_t n)
{
    if (!n)
        return 0;
    char what[700];
    if (code == 0 && error && *error)
        snprintf(what, sizeof(what), "cannot reach the API server at %s: %s", server, error);
    else if (code == 401 || code == 403)
        snprintf(what, sizeof(what), "the API server at %s refused the controller's %s: %s", server,
                 code == 401 ? "credentials" : "request",
                 cu_ctrl_status_text(code, NULL, body, out, n));
    else if (code >= 200 && code < 300 && h->failing) {
        snprintf(out, n, "the API server at %s answers again (after: %s)", server, h->failing);
        free(h->failing);
        h->failing = NULL;
        return 1;
    } else
        return 0;
    if (h->failing && strcmp(h->failing, what) == 0)
        return 0;
    free(h->failing);
    h->failing = strdup(what);
    snprintf(out, n, "%s", what);
    return 1;
}

void cu_ctrl_api_health_free(cu_api_health *h)
{
    free(h->failing);
    h->failing = NULL;
}
