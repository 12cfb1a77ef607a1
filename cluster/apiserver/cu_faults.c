/*
 * cu_faults.c - fault injection: rules that answer or delay matching
 * requests, and the stall, administered through the admin endpoints.
 * See internal/cu_apiserver_int.h.
 */
#include "cu_apiserver.h"
#include "cu_authn.h"
#include "cu_objmeta.h"
#include "cu_doc.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_apiserver_int.h"

/* ---------------- fault injection ---------------- */

void fault_free(fault_rule *f)
{
    regfree(&f->re);
    free(f->match);
    free(f);
}

cu_err cu_apiserver_fault(cu_apiserver *a, json_object *cmd, char *err, size_t errn)
{
    if (!cmd || !json_object_is_type(cmd, json_type_object)) {
        snprintf(err, errn, "a fault command must be a JSON object");
        return CU_EINVAL;
    }
    json_object *v;
    int known = 0;
    if ((v = cu_jget(cmd, "clear")) && json_object_get_boolean(v)) {
        known = 1;
        pthread_mutex_lock(&a->mu);
        while (a->faults) {
            fault_rule *f = a->faults;
            a->faults = f->next;
            fault_free(f);
        }
        a->stall = 0;
        pthread_mutex_unlock(&a->mu);
    }
    if ((v = cu_jget(cmd, "stallWatches"))) {
        known = 1;
        pthread_mutex_lock(&a->mu);
        a->stall = json_object_get_boolean(v);
        pthread_mutex_unlock(&a->mu);
    }
    if ((v = cu_jget(cmd, "compact")) && json_object_get_boolean(v)) {
        known = 1;
        cu_store_compact(a->s);
    }
    if ((v = cu_jget(cmd, "dropWatches")) && json_object_get_boolean(v)) {
        known = 1;
        cu_store_drop_watches(a->s);
    }
    json_object *spec = cu_jget(cmd, "respond");
    int kind = spec ? FAULT_RESPOND : cu_jget(cmd, "delayMs") ? FAULT_DELAY : 0;
    if (kind) {
        if (!spec)
            spec = cmd;
        const char *match = cu_jstr(spec, "match");
        fault_rule *f = calloc(1, sizeof *f);
        if (!f) {
            snprintf(err, errn, "out of memory");
            return CU_ENOMEM;
        }
        f->kind = kind;
        f->match = strdup(match ? match : ".*");
        if (!f->match || regcomp(&f->re, f->match, REG_EXTENDED | REG_NOSUB) != 0) {
            snprintf(err, errn, "fault: match: not a valid POSIX extended regex: \"%s\"",
                     match ? match : "");
            free(f->match);
            free(f);
            return CU_EINVAL;
        }
        json_object *t = cu_jget(spec, "times");
        f->times = t ? json_object_get_int(t) : kind == FAULT_RESPOND ? 1 : -1;
        if (f->times == 0)
            f->times = -1;
        if (kind == FAULT_RESPOND) {
            f->code = cu_jint(spec, "code");
            f->retry_after = cu_jint(spec, "retryAfter");
            if (f->code != 409 && f->code != 429 && f->code != 500 && f->code != 503) {
                snprintf(err, errn,
                         "fault: respond.code: Unsupported value: %d: supported "
                         "values: 409, 429, 500, 503",
                         f->code);
                fault_free(f);
                return CU_EINVAL;
            }
            if (f->code == 429 && f->retry_after <= 0)
                f->retry_after = 1;
        } else {
            f->delay_ms = cu_jint(cmd, "delayMs");
            if (f->delay_ms <= 0 || f->delay_ms > 600000) {
                snprintf(err, errn, "fault: delayMs: Invalid value: %d: must be 1..600000",
                         f->delay_ms);
                fault_free(f);
                return CU_EINVAL;
            }
        }
        pthread_mutex_lock(&a->mu);
        fault_rule **pp = &a->faults;
        while (*pp)
            pp = &(*pp)->next;
        *pp = f;
        pthread_mutex_unlock(&a->mu);
        known = 1;
    }
    if (!known) {
        snprintf(err, errn,
                 "unknown fault command: expected one of dropWatches, compact, "
                 "stallWatches, respond, delayMs, clear");
        return CU_EINVAL;
    }
    return CU_OK;
}

json_object *cu_apiserver_faults_json(cu_apiserver *a)
{
    json_object *o = json_object_new_object(), *list = json_object_new_array();
    pthread_mutex_lock(&a->mu);
    for (fault_rule *f = a->faults; f; f = f->next) {
        json_object *e = json_object_new_object();
        cu_jset_str(e, "match", f->match);
        json_object_object_add(e, "times", json_object_new_int(f->times));
        if (f->kind == FAULT_RESPOND) {
            json_object_object_add(e, "code", json_object_new_int(f->code));
            if (f->retry_after)
                json_object_object_add(e, "retryAfter", json_object_new_int(f->retry_after));
        } else {
            json_object_object_add(e, "delayMs", json_object_new_int(f->delay_ms));
        }
        json_object_array_add(list, e);
    }
    json_object_object_add(o, "stallWatches", json_object_new_boolean(a->stall));
    pthread_mutex_unlock(&a->mu);
    json_object_object_add(o, "faults", list);
    return o;
}

/* Applies the fault rules to a request. Returns 1 when a response was
 * injected. */
int apply_faults(cu_apiserver *a, const cu_api_req *r, cu_api_resp *resp)
{
    char key[2100];
    int delay = 0, code = 0, retry = 0;
    snprintf(key, sizeof key, "%s %s", r->method, r->path);
    pthread_mutex_lock(&a->mu);
    for (fault_rule **pp = &a->faults; *pp;) {
        fault_rule *f = *pp;
        int hit = (f->kind == FAULT_DELAY || !code) && regexec(&f->re, key, 0, NULL, 0) == 0;
        if (hit) {
            if (f->kind == FAULT_DELAY)
                delay += f->delay_ms;
            else {
                code = f->code;
                retry = f->retry_after;
            }
            if (f->times > 0 && --f->times == 0) {
                *pp = f->next;
                fault_free(f);
                continue;
            }
        }
        pp = &f->next;
    }
    pthread_mutex_unlock(&a->mu);
    if (delay)
        sleep_ms(delay);
    if (!code)
        return 0;
    if (code == 409)
        resp_status(resp, 409, "Conflict",
                    "Operation cannot be fulfilled on %s: the object has been modified; please "
                    "apply your changes to the latest version and try again (injected fault)",
                    r->path);
    else if (code == 429) {
        cu_status st;
        memset(&st, 0, sizeof st);
        cu_status_set(&st, 429, "TooManyRequests",
                      "Too many requests, please try again later. (injected fault)");
        json_object *j = cu_status_json(&st), *det = cu_jget(j, "details");
        if (!det) {
            det = json_object_new_object();
            json_object_object_add(j, "details", det);
        }
        json_object_object_add(det, "retryAfterSeconds", json_object_new_int(retry));
        resp_json(resp, 429, j);
        resp->retry_after = retry;
    } else if (code == 503) {
        cu_status st;
        memset(&st, 0, sizeof st);
        cu_status_set(&st, 503, "ServiceUnavailable",
                      "the server is currently unable to handle the request (injected fault)");
        json_object *j = cu_status_json(&st);
        if (retry > 0) {
            json_object *det = json_object_new_object();
            json_object_object_add(det, "retryAfterSeconds", json_object_new_int(retry));
            json_object_object_add(j, "details", det);
        }
        resp_json(resp, 503, j);
        resp->retry_after = retry;
    } else
        resp_status(resp, 500, "InternalError", "Internal error occurred: injected fault for %s %s",
                    r->method, r->path);
    return 1;
}

void handle_faults(cu_apiserver *a, const cu_api_req *r, cu_api_resp *resp)
{
    if (!a->admin) {
        resp_not_found_path(resp);
        return;
    }
    if (!r->loopback) {
        resp_status(resp, 403, "Forbidden",
                    "the fault-injection endpoint only answers clients on 127.0.0.1");
        return;
    }
    if (strcmp(r->method, "GET") == 0) {
        resp_json(resp, 200, cu_apiserver_faults_json(a));
        return;
    }
    if (strcmp(r->method, "DELETE") == 0) {
        json_object *clear = json_object_new_object();
        char err[256];
        json_object_object_add(clear, "clear", json_object_new_boolean(1));
        cu_apiserver_fault(a, clear, err, sizeof err);
        json_object_put(clear);
        resp_json(resp, 200, cu_apiserver_faults_json(a));
        return;
    }
    if (strcmp(r->method, "POST") != 0) {
        method_not_allowed(resp);
        return;
    }
    cu_api_req plain = *r;
    plain.content_type = NULL; /* any content type: the body is JSON */
    json_object *cmd = decode_body(&plain, resp, 0);
    if (!cmd)
        return;
    char err[512];
    size_t n = json_object_is_type(cmd, json_type_array) ? json_object_array_length(cmd) : 1;
    for (size_t i = 0; i < n; i++) {
        json_object *one =
            json_object_is_type(cmd, json_type_array) ? json_object_array_get_idx(cmd, i) : cmd;
        if (cu_apiserver_fault(a, one, err, sizeof err) != CU_OK) {
            json_object_put(cmd);
            resp_status(resp, 400, "BadRequest", "%s", err);
            return;
        }
    }
    json_object_put(cmd);
    resp_json(resp, 200, cu_apiserver_faults_json(a));
}
