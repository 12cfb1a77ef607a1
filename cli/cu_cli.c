/*
 * cu_cli.c - `cueue explain` and `cueue queue`: what the admission
 * controller knows about a Workload or a queue, for people.
 *
 * Sources, in order:
 *  1. the running controller's read-only endpoints on its metrics server
 *     (GET /debug/explain?workload=NS/NAME[&format=json] and
 *     GET /debug/pending[?clusterQueue=CQ|?localQueue=NS/LQ]);
 *  2. when no controller answers (transport error, including the 2 s
 *     connect timeout, or 503 not ready), the API objects alone: every
 *     queue-shaping object, the Workloads and the labelled Jobs without a
 *     Workload yet are LISTed with the kube client, decoded into one
 *     cu_world, loaded into an engine (manual evictions, so admitted
 *     workloads keep their quota) and run until it settles; the answer is
 *     computed from that engine and the output says so on its first line.
 *
 * Output is built in a buffer and written at the end: a command that fails
 * prints nothing on stdout. Errors go to stderr as "cueue: CMD: message".
 */
#include "cu_cli.h"
#include "cu_controller.h"
#include "cu_ctrlstatus.h"
#include "cu_explain.h"
#include "cu_kclient.h"
#include "cu_kconfig.h"
#include "cu_quantity.h"
#include "cu_strmap.h"

#include <curl/curl.h>
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { RC_OK = 0, RC_FAIL = 1, RC_USAGE = 2 };

#define DEFAULT_CONTROLLER "http://127.0.0.1:8080"
#define CONNECT_TIMEOUT_MS 2000L    /* "unreachable" past this */
#define ENDPOINT_TIMEOUT_MS 5000L   /* a whole answer from the controller */
#define API_TIMEOUT_MS 30000        /* one LIST from the API server */
#define MAX_CYCLES 100000
#define MAX_BODY (256u << 20)

/* ---------------- options and messages ---------------- */

typedef struct cli {
    const char *cmd;            /* "explain" or "queue" */
    char url[512];              /* the controller's base URL, no trailing '/' */
    const char *kubeconfig, *context, *config;
    int json, wide;
    cu_buf notes;               /* "(...)" lines: first on stdout (text), stderr (json) */
    int api_failed;             /* the API server could not be used */
    char fallback[300];         /* why the controller was not used, "" when it was */
} cli;

static void say(const cli *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prints "cueue: CMD: message" to stderr. */
static void say(const cli *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "cueue: %s: ", c->cmd);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static int usage(const cli *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prints the message and a hint to stderr; returns RC_USAGE. */
static int usage(const cli *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "cueue: %s: ", c->cmd);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'cueue %s --help'.\n", c->cmd);
    return RC_USAGE;
}

static void say_diag(const cli *c, const cu_diag *d)
{
    for (size_t i = 0; i < d->n; i++)
        say(c, "%s", d->msgs[i]);
    if (d->dropped)
        say(c, "... and %zu more messages not shown", d->dropped);
}

static int64_t real_now(void *ud)
{
    (void)ud;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Writes the notes (stdout for text output, stderr for JSON) and out;
 * returns the exit code. */
static int emit(const cli *c, const cu_buf *out)
{
    if (out->failed) {
        say(c, "the output is too large (out of memory)");
        return RC_FAIL;
    }
    if (c->notes.len) {
        if (c->json)
            fputs(cu_buf_str(&c->notes), stderr);
        else
            fputs(cu_buf_str(&c->notes), stdout);
    }
    if (out->len && fwrite(out->data, 1, out->len, stdout) != out->len) {
        say(c, "writing the output failed: %s", strerror(errno));
        return RC_FAIL;
    }
    if (fflush(stdout) != 0) {
        say(c, "writing the output failed: %s", strerror(errno));
        return RC_FAIL;
    }
    return RC_OK;
}

/* After a failure to read the API objects: why they were read (the
 * controller was not there), on stderr. */
static void say_fallback(const cli *c, int rc)
{
    if (rc == RC_FAIL && c->api_failed && c->fallback[0])
        say(c, "and the controller at %s did not answer either (%s)", c->url, c->fallback);
}

/* Sets the controller's base URL from s (flag or environment, named by
 * what); returns 0 or RC_USAGE. */
static int set_controller(cli *c, const char *s, const char *what)
{
    if (strncmp(s, "http://", 7) != 0 && strncmp(s, "https://", 8) != 0)
        return usage(c, "%s: expected an http:// or https:// URL such as %s, got '%s'", what,
                     DEFAULT_CONTROLLER, s);
    size_t n = strlen(s);
    while (n > 8 && s[n - 1] == '/')
        n--;
    if (n >= sizeof(c->url))
        return usage(c, "%s: URL too long", what);
    memcpy(c->url, s, n);
    c->url[n] = '\0';
    return 0;
}

/* A Kubernetes object name (DNS subdomain): lowercase letters, digits,
 * '-' and '.', 1..253 characters. */
static int valid_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 253)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-' ||
              s[i] == '.'))
            return 0;
    return 1;
}

/* Appends s percent-encoded for a query value ('/' kept). */
static void put_query_value(cu_buf *b, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
            ch == '-' || ch == '.' || ch == '_' || ch == '~' || ch == '/') {
            cu_buf_append(b, (const char *)&ch, 1);
        } else {
            char e[3] = { '%', hex[ch >> 4], hex[ch & 15] };
            cu_buf_append(b, e, 3);
        }
    }
}

/* kubectl's age notation: 45s, 3m10s, 42m, 2h4m, 30h, 3d4h, 45d, 2y10d. */
static void human_age(int64_t ms, char *out, size_t n)
{
    if (ms < -1000) {
        snprintf(out, n, "<invalid>");
        return;
    }
    long long s = ms < 0 ? 0 : (long long)(ms / 1000);
    long long m = s / 60, h = s / 3600, d = h / 24;
    if (s < 120)
        snprintf(out, n, "%llds", s);
    else if (m < 10 && s % 60)
        snprintf(out, n, "%lldm%llds", m, s % 60);
    else if (m < 180)
        snprintf(out, n, "%lldm", m);
    else if (h < 8 && m % 60)
        snprintf(out, n, "%lldh%lldm", h, m % 60);
    else if (h < 48)
        snprintf(out, n, "%lldh", h);
    else if (h < 24 * 8 && h % 24)
        snprintf(out, n, "%lldd%lldh", d, h % 24);
    else if (d < 365 * 2)
        snprintf(out, n, "%lldd", d);
    else if (d < 365 * 8 && d % 365)
        snprintf(out, n, "%lldy%lldd", d / 365, d % 365);
    else
        snprintf(out, n, "%lldy", d / 365);
}

/* ---------------- tables ---------------- */

typedef struct table {
    size_t ncols, nrows, cap;
    char **cells;               /* nrows * ncols, malloc'd */
    int failed;
} table;

/* Appends a row of t->ncols cells (copied). */
static void tbl_row(table *t, const char *const *cells)
{
    if (t->failed)
        return;
    if (t->nrows == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        char **p = realloc(t->cells, cap * t->ncols * sizeof(*p));
        if (!p) {
            t->failed = 1;
            return;
        }
        t->cells = p;
        t->cap = cap;
    }
    for (size_t i = 0; i < t->ncols; i++) {
        const char *s = cells[i] && *cells[i] ? cells[i] : "-";
        char *copy = malloc(strlen(s) + 1);
        if (!copy) {
            for (size_t k = 0; k < i; k++)
                free(t->cells[t->nrows * t->ncols + k]);
            t->failed = 1;
            return;
        }
        strcpy(copy, s);
        t->cells[t->nrows * t->ncols + i] = copy;
    }
    t->nrows++;
}

/* Appends t to out: columns padded to their widest cell, three spaces
 * apart, the last one unpadded (kubectl's layout). */
static void tbl_print(const table *t, cu_buf *out)
{
    size_t w[16] = { 0 };
    CU_ASSERT(t->ncols <= 16);
    for (size_t r = 0; r < t->nrows; r++)
        for (size_t i = 0; i < t->ncols; i++) {
            size_t l = strlen(t->cells[r * t->ncols + i]);
            if (l > w[i])
                w[i] = l;
        }
    for (size_t r = 0; r < t->nrows; r++)
        for (size_t i = 0; i < t->ncols; i++) {
            const char *s = t->cells[r * t->ncols + i];
            if (i + 1 < t->ncols)
                cu_buf_printf(out, "%-*s   ", (int)w[i], s);
            else
                cu_buf_printf(out, "%s\n", s);
        }
}

static void tbl_free(table *t)
{
    for (size_t i = 0; i < t->nrows * t->ncols; i++)
        free(t->cells[i]);
    free(t->cells);
}

/* ---------------- the controller's endpoints ---------------- */

typedef struct ep_resp {
    long code;                  /* HTTP status; 0 when the controller did not answer */
    int timed_out;              /* connected, but no whole answer in time */
    cu_buf body;
    char err[CURL_ERROR_SIZE];
} ep_resp;

static size_t ep_write(char *p, size_t sz, size_t n, void *ud)
{
    return cu_buf_append(ud, p, sz * n) == CU_OK ? sz * n : 0;
}

/* GETs the controller's base URL + path_query into r (free r->body with
 * cu_buf_free). */
static void ep_get(const cli *c, const char *path_query, ep_resp *r)
{
    cu_buf_init(&r->body, MAX_BODY);
    r->code = 0;
    r->timed_out = 0;
    r->err[0] = '\0';
    cu_buf url;
    cu_buf_init(&url, 0);
    cu_buf_printf(&url, "%s%s", c->url, path_query);
    CURL *h = curl_easy_init();
    if (!h || url.failed) {
        snprintf(r->err, sizeof(r->err), "out of memory");
        cu_buf_free(&url);
        if (h)
            curl_easy_cleanup(h);
        return;
    }
    curl_easy_setopt(h, CURLOPT_URL, cu_buf_str(&url));
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, ep_write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &r->body);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, r->err);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, CONNECT_TIMEOUT_MS);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, ENDPOINT_TIMEOUT_MS);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_NOPROXY, "localhost,127.0.0.1,::1");
    CURLcode rc = curl_easy_perform(h);
    if (rc == CURLE_OK) {
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->code);
    } else {
        r->code = 0;
        double ct = 0;
        r->timed_out = rc == CURLE_OPERATION_TIMEDOUT &&
                       curl_easy_getinfo(h, CURLINFO_CONNECT_TIME, &ct) == CURLE_OK && ct > 0;
        if (!r->err[0])
            snprintf(r->err, sizeof(r->err), "%s", curl_easy_strerror(rc));
    }
    curl_easy_cleanup(h);
    cu_buf_free(&url);
}

/* The first line of a body, for messages. */
static const char *first_line(const cu_buf *b, char *out, size_t n)
{
    const char *s = cu_buf_str(b);
    size_t l = strcspn(s, "\r\n");
    snprintf(out, n, "%.*s", (int)(l < n ? l : n - 1), s);
    return out;
}

/* After an answer that sends us to the API objects (no answer, or 503):
 * records the note saying so. */
static void note_offline(cli *c, const ep_resp *r)
{
    char line[200];
    if (r->timed_out) {
        cu_buf_printf(&c->notes, "(no answer from the controller at %s within %ld s: computed "
                      "from the API objects)\n", c->url, ENDPOINT_TIMEOUT_MS / 1000);
        snprintf(c->fallback, sizeof(c->fallback), "%s", r->err[0] ? r->err : "timeout");
    } else if (r->code == 0) {
        cu_buf_printf(&c->notes, "(no controller reachable at %s: computed from the API objects)\n",
                      c->url);
        snprintf(c->fallback, sizeof(c->fallback), "%s", r->err[0] ? r->err : "unreachable");
    } else {
        first_line(&r->body, line, sizeof(line));
        cu_buf_printf(&c->notes, "(the controller at %s %s (%s): computed from the API "
                      "objects)\n", c->url,
                      r->code == 401 || r->code == 403 ? "refused us" : "is not ready", line);
        snprintf(c->fallback, sizeof(c->fallback), "HTTP %ld: %s", r->code, line);
    }
}

/* 1 when the answer means "ask the API objects instead": none, not
 * ready, or refused (secure metrics: docs/controller.md). */
static int ep_unavailable(const ep_resp *r)
{
    return r->code == 0 || r->code == 503 || r->code == 401 || r->code == 403;
}

/* ---------------- the API server ---------------- */

typedef struct api {
    cu_kconfig *cfg;
    struct ev_loop *loop;
    cu_kclient *kc;
} api;

typedef struct areq {
    char path[600];
    int done, code;
    char *body;                 /* malloc'd, NUL-terminated, NULL when none */
    char *err;                  /* malloc'd transport error, NULL */
} areq;

static void areq_done(cu_kclient *kc, const cu_kresp *r, void *ud)
{
    (void)kc;
    areq *q = ud;
    q->done = 1;
    q->code = r->code;
    if (r->body) {
        q->body = malloc(r->len + 1);
        if (q->body) {
            memcpy(q->body, r->body, r->len);
            q->body[r->len] = '\0';
        }
    }
    if (r->error) {
        q->err = malloc(strlen(r->error) + 1);
        if (q->err)
            strcpy(q->err, r->error);
    }
}

static void areq_clear(areq *q)
{
    free(q->body);
    free(q->err);
    q->body = q->err = NULL;
    q->done = q->code = 0;
}

/* Loads the kubeconfig and starts a client. Returns 0, or RC_FAIL with
 * the problem printed. */
static int api_open(cli *c, api *a)
{
    memset(a, 0, sizeof(*a));
    cu_diag d;
    cu_diag_init(&d);
    a->cfg = cu_kconfig_load(c->kubeconfig, c->context, &d);
    if (!a->cfg) {
        c->api_failed = 1;
        say_diag(c, &d);
        say(c, "cannot read the API objects without a kubeconfig (--kubeconfig, $KUBECONFIG "
            "or ~/.kube/config)");
        cu_diag_free(&d);
        return RC_FAIL;
    }
    a->loop = ev_loop_new(EVFLAG_AUTO);
    cu_kclient_opts ko = { 0 };
    ko.timeout_ms = API_TIMEOUT_MS;
    ko.max_retries = 1;
    ko.max_body = MAX_BODY;
    a->kc = a->loop ? cu_kclient_new(a->loop, a->cfg, &ko, &d) : NULL;
    if (!a->kc) {
        say_diag(c, &d);
        if (!d.n)
            say(c, "cannot start the Kubernetes client (out of memory)");
        cu_diag_free(&d);
        if (a->loop)
            ev_loop_destroy(a->loop);
        cu_kconfig_free(a->cfg);
        memset(a, 0, sizeof(*a));
        return RC_FAIL;
    }
    cu_diag_free(&d);
    return 0;
}

static void api_close(api *a)
{
    if (a->kc)
        cu_kclient_free(a->kc);
    if (a->loop)
        ev_loop_destroy(a->loop);
    if (a->cfg)
        cu_kconfig_free(a->cfg);
    memset(a, 0, sizeof(*a));
}

/* Runs the GETs q[0..n) at once and waits for all of them. */
static void api_run(api *a, areq *q, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        areq_clear(&q[i]);
        if (!cu_kclient_request(a->kc, "GET", q[i].path, NULL, 0, NULL, areq_done, &q[i]))
            q[i].done = 1;   /* code 0, no body: reported as a failure */
    }
    for (;;) {
        size_t left = 0;
        for (size_t i = 0; i < n; i++)
            left += !q[i].done;
        if (!left)
            break;
        ev_run(a->loop, EVRUN_ONCE);
    }
}

/* Prints why GET q failed. */
static void say_api_error(cli *c, const api *a, const areq *q)
{
    c->api_failed = 1;
    if (q->code == 0) {
        say(c, "cannot reach the API server at %s: %s", a->cfg->server,
            q->err ? q->err : "request failed");
        return;
    }
    const char *msg = NULL;
    json_object *j = q->body ? cu_json_parse_str(q->body) : NULL;
    json_object *m = NULL;
    if (j && json_object_object_get_ex(j, "message", &m))
        msg = json_object_get_string(m);
    say(c, "GET %s: HTTP %d%s%s", q->path, q->code, msg ? ": " : "", msg ? msg : "");
    json_object_put(j);
}

/* ---------------- the model computed from the API objects ---------------- */

enum { R_RF, R_CQ, R_COHORT, R_LQ, R_WPC, R_PC, R_NS, R_WL, R_JOB, NRES };

static const struct {
    const char *path, *api_version, *kind;
    int optional;               /* a 404 means "none" (resource not served) */
} res_tab[NRES] = {
    { "/apis/kueue.x-k8s.io/v1beta2/resourceflavors", CU_GROUP "/v1beta2", "ResourceFlavor", 0 },
    { "/apis/kueue.x-k8s.io/v1beta2/clusterqueues", CU_GROUP "/v1beta2", "ClusterQueue", 0 },
    { "/apis/kueue.x-k8s.io/v1beta2/cohorts", CU_GROUP "/v1beta2", "Cohort", 1 },
    { "/apis/kueue.x-k8s.io/v1beta2/localqueues", CU_GROUP "/v1beta2", "LocalQueue", 0 },
    { "/apis/kueue.x-k8s.io/v1beta2/workloadpriorityclasses", CU_GROUP "/v1beta2",
      "WorkloadPriorityClass", 1 },
    { "/apis/scheduling.k8s.io/v1/priorityclasses", "scheduling.k8s.io/v1", "PriorityClass", 1 },
    { "/api/v1/namespaces", "v1", "Namespace", 1 },
    { "/apis/kueue.x-k8s.io/v1beta2/workloads", CU_GROUP "/v1beta2", "Workload", 0 },
    { "/apis/batch/v1/jobs", "batch/v1", "Job", 1 },
};

typedef struct model {
    cu_world w;                 /* the API objects */
    cu_world cw;                /* the --config file */
    const cu_config *cf;        /* NULL without --config */
    cu_engine *e;
    cu_strmap synth;            /* "ns/name" of Workloads built from Jobs that have none */
    cu_arena keys;              /* the keys of synth */
    int have_ns;                /* the Namespaces were listed */
    int would_admit;            /* pending in the API, admitted by the engine */
} model;

static void model_free(model *m)
{
    if (m->e)
        cu_engine_free(m->e);
    cu_world_free(&m->w);
    cu_world_free(&m->cw);
    cu_strmap_free(&m->synth);
    cu_arena_free(&m->keys);
}

static const char *jstr(json_object *o, const char *k)
{
    json_object *v = NULL;
    return o && json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_string)
               ? json_object_get_string(v) : NULL;
}

static json_object *jget(json_object *o, const char *k)
{
    json_object *v = NULL;
    return o && json_object_object_get_ex(o, k, &v) ? v : NULL;
}

/* Decodes one LIST item of resource r into m->w; problems go to d. */
static void decode_item(model *m, int r, json_object *item, cu_diag *d)
{
    cu_arena tmp;
    cu_arena_init(&tmp, 16 * 1024);
    cu_node *n = cu_ctrl_json_to_node(&tmp, item);
    if (n && n->type == CU_NODE_MAP) {
        cu_node_set(&tmp, n, "apiVersion", cu_node_new_str(&tmp, res_tab[r].api_version));
        cu_node_set(&tmp, n, "kind", cu_node_new_str(&tmp, res_tab[r].kind));
        cu_doc doc = { .file = "api", .root = n };
        cu_world_decode(&m->w, &doc, d);
    }
    cu_arena_free(&tmp);
}

/* resources.excludeResourcePrefixes of the Configuration: those requests
 * are not counted (as the controller does). */
static void exclude_resources(model *m)
{
    if (!m->cf || !m->cf->exclude_resource_prefixes.n)
        return;
    const cu_strs *px = &m->cf->exclude_resource_prefixes;
    for (size_t w = 0; w < m->w.workloads.n; w++) {
        cu_workload *wl = m->w.workloads.items[w];
        for (size_t p = 0; p < wl->npodsets; p++) {
            cu_reslist *rl = &wl->podsets[p].requests;
            size_t k = 0;
            for (size_t i = 0; i < rl->n; i++) {
                int drop = 0;
                for (size_t e = 0; e < px->n && !drop; e++)
                    drop = strncmp(rl->items[i].name, px->items[e], strlen(px->items[e])) == 0;
                if (!drop)
                    rl->items[k++] = rl->items[i];
            }
            rl->n = k;
        }
    }
}

/* Reads the --config file into m->cw / m->cf. Returns 0 or RC_USAGE. */
static int load_config(const cli *c, model *m)
{
    if (!c->config)
        return 0;
    cu_diag d;
    cu_diag_init(&d);
    cu_err err = cu_world_load(&m->cw, &c->config, 1, &d);
    if (err != CU_OK || m->cw.configs.n != 1 || d.nerrors) {
        say_diag(c, &d);
        if (err == CU_OK && m->cw.configs.n != 1)
            say(c, "%s: expected one config.kueue.x-k8s.io Configuration, found %zu", c->config,
                m->cw.configs.n);
        cu_diag_free(&d);
        return RC_USAGE;
    }
    cu_diag_free(&d);
    m->cf = m->cw.configs.items[0];
    return 0;
}

/* LISTs the objects, builds the world and runs the engine on it. Returns
 * 0, or an exit code with the problem printed. */
static int model_load(cli *c, api *a, model *m)
{
    memset(m, 0, sizeof(*m));
    cu_world_init(&m->w);
    cu_world_init(&m->cw);
    cu_strmap_init(&m->synth);
    cu_arena_init(&m->keys, 0);
    int rc = load_config(c, m);
    if (rc)
        return rc;

    areq q[NRES];
    memset(q, 0, sizeof(q));
    for (int r = 0; r < NRES; r++)
        snprintf(q[r].path, sizeof(q[r].path), "%s", res_tab[r].path);
    api_run(a, q, NRES);

    cu_diag d;
    cu_diag_init(&d);
    json_object *lists[NRES] = { 0 };
    for (int r = 0; r < NRES && !rc; r++) {
        if (q[r].code == 404 && res_tab[r].optional)
            continue;
        if (q[r].code == 404) {
            say(c, "the API server at %s does not serve %s (are Kueue's CRDs installed?)",
                a->cfg->server, res_tab[r].path);
            rc = RC_FAIL;
        } else if (q[r].code != 200) {
            say_api_error(c, a, &q[r]);
            rc = RC_FAIL;
        } else if (!q[r].body || !(lists[r] = cu_json_parse_str(q[r].body)) ||
                   !json_object_is_type(jget(lists[r], "items"), json_type_array)) {
            say(c, "GET %s: the answer is not a list", q[r].path);
            rc = RC_FAIL;
        }
    }
    if (!rc) {
        for (int r = 0; r < R_JOB; r++) {
            json_object *items = jget(lists[r], "items");
            size_t n = items ? json_object_array_length(items) : 0;
            for (size_t i = 0; i < n; i++)
                decode_item(m, r, json_object_array_get_idx(items, i), &d);
        }
        m->have_ns = lists[R_NS] != NULL;
        /* labelled Jobs without their Workload yet: the Workload the
         * controller would create for each */
        cu_arena tmp;
        cu_arena_init(&tmp, 0);
        cu_strmap have;
        cu_strmap_init(&have);
        char key[600];
        for (size_t i = 0; i < m->w.workloads.n; i++) {
            const cu_workload *wl = m->w.workloads.items[i];
            snprintf(key, sizeof(key), "%s/%s", wl->meta.ns ? wl->meta.ns : "default",
                     wl->meta.name);
            cu_strmap_put(&have, cu_arena_strdup(&tmp, key), 1);
        }
        /* namespaces with a LocalQueue named "default": their unlabelled
         * Jobs go there, as the controller manages them */
        cu_strmap dflt;
        cu_strmap_init(&dflt);
        json_object *lqs = jget(lists[R_LQ], "items");
        for (size_t i = 0, nl = lqs ? json_object_array_length(lqs) : 0; i < nl; i++) {
            json_object *lmd = jget(json_object_array_get_idx(lqs, i), "metadata");
            const char *ln = jstr(lmd, "name"), *lns = jstr(lmd, "namespace");
            if (ln && lns && strcmp(ln, "default") == 0)
                cu_strmap_put(&dflt, cu_arena_strdup(&tmp, lns), 1);
        }
        json_object *items = jget(lists[R_JOB], "items");
        size_t n = items ? json_object_array_length(items) : 0;
        for (size_t i = 0; i < n; i++) {
            json_object *job = json_object_array_get_idx(items, i);
            json_object *md = jget(job, "metadata");
            const char *q_name = jstr(jget(md, "labels"), CU_LABEL_QUEUE_NAME);
            const char *name = jstr(md, "name"), *ns = jstr(md, "namespace");
            const char *uid = jstr(md, "uid");
            int to_default = (!q_name || !*q_name) && ns && cu_strmap_get(&dflt, ns) >= 0;
            if ((!to_default && (!q_name || !*q_name)) || !name || !ns || !uid ||
                cu_ctrl_job_finished(job, NULL))
                continue;
            const char *wn = cu_job_workload_name(&tmp, name, uid);
            snprintf(key, sizeof(key), "%s/%s", ns, wn ? wn : "");
            if (!wn || cu_strmap_get(&have, key) >= 0)
                continue;
            size_t before = m->w.workloads.n;
            json_object *copy = NULL;
            if (to_default && json_object_deep_copy(job, &copy, NULL) == 0) {
                json_object *cmd = jget(copy, "metadata"), *lb = jget(cmd, "labels");
                if (!lb) {
                    lb = json_object_new_object();
                    json_object_object_add(cmd, "labels", lb);
                }
                json_object_object_add(lb, CU_LABEL_QUEUE_NAME, json_object_new_string("default"));
            }
            decode_item(m, R_JOB, copy ? copy : job, &d);
            json_object_put(copy);
            if (m->w.workloads.n > before)
                cu_strmap_put(&m->synth, cu_arena_strdup(&m->keys, key), 1);
        }
        cu_strmap_free(&dflt);
        cu_arena_free(&tmp);
        cu_strmap_free(&have);
        /* objects that did not decode are left out, as the controller does */
        for (size_t i = 0; i < d.n; i++)
            say(c, "warning: left out: %s", d.msgs[i]);
        cu_diag_free(&d);
        cu_diag_init(&d);
        exclude_resources(m);

        cu_engine_opts eo = { 0 };
        eo.clock.now_ms = real_now;
        eo.manual_evictions = 1;
        if (m->cf) {
            eo.fair_sharing = m->cf->fair_sharing;
            eo.nstrategies = m->cf->nstrategies;
            memcpy(eo.strategies, m->cf->strategies, sizeof(eo.strategies));
            eo.afs = m->cf->afs;
            eo.afs_half_life_ms = m->cf->afs_half_life_ms;
            eo.afs_sampling_ms = m->cf->afs_sampling_ms;
            eo.afs_weights = m->cf->afs_weights.n ? &m->cf->afs_weights : NULL;
        }
        m->e = cu_engine_new(&eo);
        cu_err err = m->e ? cu_engine_load(m->e, &m->w, &d) : CU_ENOMEM;
        if (err != CU_OK) {
            say_diag(c, &d);
            say(c, "cannot load the admission engine: %s", cu_strerror(err));
            rc = RC_FAIL;
        } else {
            cu_engine_run(m->e, MAX_CYCLES);
            size_t nw = cu_engine_nworkloads(m->e);
            for (size_t i = 0; i < nw; i++) {
                const cu_wl_info *wi = cu_engine_workload_info(m->e, i);
                if (wi && wi->admitted && !wi->finished && !cu_workload_has_quota(wi->obj))
                    m->would_admit++;
            }
        }
    }
    cu_diag_free(&d);
    for (int r = 0; r < NRES; r++) {
        json_object_put(lists[r]);
        areq_clear(&q[r]);
    }
    return rc;
}

/* The world's Workload ns/name, or NULL. */
static const cu_workload *find_wl(const model *m, const char *ns, const char *name)
{
    for (size_t i = 0; i < m->w.workloads.n; i++) {
        const cu_workload *wl = m->w.workloads.items[i];
        if (strcmp(wl->meta.name, name) == 0 &&
            strcmp(wl->meta.ns ? wl->meta.ns : "default", ns) == 0)
            return wl;
    }
    return NULL;
}

static int have_namespace(const model *m, const char *ns)
{
    if (!m->have_ns)
        return 1;
    for (size_t i = 0; i < m->w.namespaces.n; i++)
        if (strcmp(m->w.namespaces.items[i]->meta.name, ns) == 0)
            return 1;
    return 0;
}

/* ---------------- pending workloads (both sources) ---------------- */

static void jset_str(json_object *o, const char *k, const char *v)
{
    json_object_object_add(o, k, json_object_new_string(v ? v : ""));
}

/* The PendingWorkloads document of the endpoint, computed from the engine:
 * pending workloads in a queue (filtered by cq, or lq "ns/name"), in
 * admission order; the Workloads built from Jobs that have none are
 * marked noWorkloadYet. Returns a new object (json_object_put) or NULL
 * (OOM). */
static json_object *offline_pending(model *m, const char *cq, const char *lq)
{
    size_t n = cu_engine_nworkloads(m->e), k = 0;
    const cu_wl_info **v = calloc(n ? n : 1, sizeof(*v));
    if (!v)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        const cu_wl_info *w = cu_engine_workload_info(m->e, i);
        if (!w || w->admitted || w->finished || w->evicting || w->position < 0 ||
            !w->cluster_queue)
            continue;
        v[k++] = w;
    }
    json_object *doc = cu_ctrl_pending_doc(v, k, cq, lq, real_now(NULL));
    free(v);
    json_object *items = jget(doc, "items");
    char key[600];
    for (size_t i = 0, ni = items ? json_object_array_length(items) : 0; i < ni; i++) {
        json_object *it = json_object_array_get_idx(items, i);
        snprintf(key, sizeof(key), "%s/%s", jstr(it, "namespace"), jstr(it, "name"));
        if (cu_strmap_get(&m->synth, key) >= 0)
            json_object_object_add(it, "noWorkloadYet", json_object_new_boolean(1));
    }
    return doc;
}

/* Appends the table of doc's items to out. lq: one LocalQueue was asked
 * for (positions in it, names without namespace); all: no filter. */
static void render_pending(const cli *c, json_object *doc, const char *lq, int all, cu_buf *out)
{
    json_object *items = jget(doc, "items");
    size_t n = json_object_is_type(items, json_type_array) ? json_object_array_length(items) : 0;
    table t = { 0 };
    const char *hdr[9];
    size_t nc = 0;
    hdr[nc++] = "POSITION";
    hdr[nc++] = lq ? "NAME" : "NAMESPACE/NAME";
    if (all)
        hdr[nc++] = "CLUSTERQUEUE";
    hdr[nc++] = "LOCALQUEUE";
    hdr[nc++] = "PRIORITY";
    hdr[nc++] = "REQUESTS";
    hdr[nc++] = "AGE";
    hdr[nc++] = "REASON";
    if (c->wide)
        hdr[nc++] = "MESSAGE";
    t.ncols = nc;
    tbl_row(&t, hdr);
    int64_t now = real_now(NULL);
    for (size_t i = 0; i < n; i++) {
        json_object *it = json_object_array_get_idx(items, i);
        char pos[24], name[600], prio[24], age[32];
        cu_buf req;
        cu_buf_init(&req, 4096);
        const char *row[9];
        nc = 0;
        snprintf(pos, sizeof(pos), "%d",
                 json_object_get_int(jget(it, lq ? "positionInLocalQueue"
                                                 : "positionInClusterQueue")));
        row[nc++] = pos;
        if (lq)
            snprintf(name, sizeof(name), "%s", jstr(it, "name") ? jstr(it, "name") : "");
        else
            snprintf(name, sizeof(name), "%s/%s",
                     jstr(it, "namespace") ? jstr(it, "namespace") : "",
                     jstr(it, "name") ? jstr(it, "name") : "");
        row[nc++] = name;
        if (all)
            row[nc++] = jstr(it, "clusterQueue");
        row[nc++] = jstr(it, "localQueue");
        snprintf(prio, sizeof(prio), "%d", json_object_get_int(jget(it, "priority")));
        row[nc++] = prio;
        json_object *rq = jget(it, "requests");
        if (json_object_is_type(rq, json_type_object)) {
            int first = 1;
            json_object_object_foreach(rq, k, v) {
                cu_buf_printf(&req, "%s%s=%s", first ? "" : ",", k, json_object_get_string(v));
                first = 0;
            }
        }
        row[nc++] = cu_buf_str(&req);
        int64_t created;
        const char *ca = jstr(it, "createdAt");
        if (ca && cu_time_parse(ca, &created) == CU_OK)
            human_age(now - created, age, sizeof(age));
        else
            snprintf(age, sizeof(age), "<unknown>");
        row[nc++] = age;
        row[nc++] = jstr(it, "reason");
        if (c->wide)
            row[nc++] = jstr(it, "message");
        tbl_row(&t, row);
        cu_buf_free(&req);
    }
    if (t.failed)
        out->failed = 1;
    else
        tbl_print(&t, out);
    tbl_free(&t);
}

/* ---------------- cueue explain ---------------- */

static const char help_explain[] =
    "Usage: cueue explain [OPTIONS] [NAMESPACE/]NAME\n"
    "\n"
    "Explains why a Workload (or the Workload of a batch/v1 Job) is pending, or\n"
    "where it is admitted: the queue chain (LocalQueue -> ClusterQueue ->\n"
    "cohorts), its position, what it requests, for each flavor tried why it did\n"
    "not fit (quota numbers: requested, free, borrowable, limit), what\n"
    "preemption could do and what would unblock it.\n"
    "\n"
    "NAME is a Workload; when no Workload NAMESPACE/NAME exists, a Job of that\n"
    "name is looked up and its Workload explained. Without NAMESPACE, the\n"
    "kubeconfig context's namespace (default \"default\").\n"
    "\n"
    "Sources, in order:\n"
    "  1. the running controller: GET /debug/explain on its metrics server\n"
    "     (what the controller's engine knows now);\n"
    "  2. when no controller answers (connection refused, nothing within 2 s\n"
    "     to connect or 5 s to answer) or it is not ready (a standby replica,\n"
    "     still syncing): the API objects, read with the kubeconfig; the\n"
    "     admission engine runs on them and the first line of the output says\n"
    "     that the answer was computed this way. A labelled Job without a\n"
    "     Workload yet is explained as the Workload the controller would create\n"
    "     for it.\n"
    "\n"
    "Options:\n"
    "      --controller URL   the controller's metrics server (default\n"
    "                         $CUEUE_CONTROLLER, else " DEFAULT_CONTROLLER ")\n"
    "      --kubeconfig FILE  kubeconfig (default $KUBECONFIG, then\n"
    "                         ~/.kube/config, then the in-cluster configuration)\n"
    "      --context NAME     kubeconfig context (default: the current one)\n"
    "      --config FILE      the controller's Configuration\n"
    "                         (config.kueue.x-k8s.io): fair sharing and\n"
    "                         excludeResourcePrefixes, when computing from the\n"
    "                         API objects\n"
    "  -o, --output FORMAT    text (default) or json (the explanation as a\n"
    "                         document: workload, status, reason, message,\n"
    "                         queue, podSets, preemption, unblock); with json,\n"
    "                         the notes go to stderr\n"
    "  -h, --help             show this help\n"
    "\n"
    "Exit codes: 0 explained, 1 no such Workload or Job, or a runtime error (API\n"
    "server unreachable, unexpected answer), 2 bad usage.\n";

/* Splits "[NS/]NAME" into ns and name (buffers of 254); the namespace
 * defaults to the kubeconfig context's. Returns 0 or RC_USAGE. */
static int split_target(const cli *c, const char *arg, char *ns, char *name, const char *what)
{
    const char *slash = strchr(arg, '/');
    if (slash) {
        if (strchr(slash + 1, '/'))
            return usage(c, "%s: expected NAMESPACE/NAME, got '%s'", what, arg);
        snprintf(ns, 254, "%.*s", (int)(slash - arg < 253 ? slash - arg : 253), arg);
        snprintf(name, 254, "%s", slash + 1);
        if ((size_t)(slash - arg) > 253 || !valid_name(ns))
            return usage(c, "%s: '%.*s' is not a valid namespace name (lowercase letters, "
                         "digits and '-')", what, (int)(slash - arg), arg);
    } else {
        snprintf(name, 254, "%s", arg);
        snprintf(ns, 254, "default");
        cu_diag d;
        cu_diag_init(&d);
        cu_kconfig *k = cu_kconfig_load(c->kubeconfig, c->context, &d);
        if (k && k->namespace_ && *k->namespace_)
            snprintf(ns, 254, "%s", k->namespace_);
        cu_kconfig_free(k);
        cu_diag_free(&d);
    }
    if (strlen(slash ? slash + 1 : arg) > 253 || !valid_name(name))
        return usage(c, "%s: '%s' is not a valid name (lowercase letters, digits, '-' and '.')",
                     what, slash ? slash + 1 : arg);
    return 0;
}

/* Asks the controller to explain ns/name; on 200 appends the body to out
 * and returns 1. Leaves the answer in r otherwise (free r->body). */
static int explain_ep(const cli *c, const char *ns, const char *name, ep_resp *r, cu_buf *out)
{
    cu_buf p;
    cu_buf_init(&p, 0);
    cu_buf_puts(&p, "/debug/explain?workload=");
    put_query_value(&p, ns);
    cu_buf_puts(&p, "/");
    put_query_value(&p, name);
    if (c->json)
        cu_buf_puts(&p, "&format=json");
    ep_get(c, cu_buf_str(&p), r);
    cu_buf_free(&p);
    if (r->code != 200)
        return 0;
    cu_buf_append(out, r->body.data ? r->body.data : "", r->body.len);
    if (out->len && out->data[out->len - 1] != '\n')
        cu_buf_puts(out, "\n");
    return 1;
}

/* GET of a namespaced object: 200 -> *obj (json_object_put), 404 -> NULL
 * with 0 returned; other failures print and return RC_FAIL. */
static int api_get_obj(cli *c, api *a, const char *prefix, const char *ns,
                       const char *plural, const char *name, json_object **obj)
{
    areq q;
    memset(&q, 0, sizeof(q));
    snprintf(q.path, sizeof(q.path), "%s/namespaces/%s/%s/%s", prefix, ns, plural, name);
    api_run(a, &q, 1);
    *obj = NULL;
    int rc = 0;
    if (q.code == 200) {
        *obj = q.body ? cu_json_parse_str(q.body) : NULL;
        if (!*obj) {
            say(c, "GET %s: the answer is not JSON", q.path);
            rc = RC_FAIL;
        }
    } else if (q.code != 404) {
        say_api_error(c, a, &q);
        rc = RC_FAIL;
    }
    areq_clear(&q);
    return rc;
}

/* Explains ns/name from the API objects (the notes say why). */
static int explain_offline(cli *c, api *a, const char *ns, const char *name, cu_buf *out)
{
    model m;
    int rc = model_load(c, a, &m);
    if (rc) {
        model_free(&m);
        return rc;
    }
    char wlname[300];
    snprintf(wlname, sizeof(wlname), "%s", name);
    if (!find_wl(&m, ns, name)) {
        json_object *job = NULL;
        rc = api_get_obj(c, a, "/apis/batch/v1", ns, "jobs", name, &job);
        if (rc) {
            model_free(&m);
            return rc;
        }
        if (!job) {
            if (have_namespace(&m, ns))
                say(c, "no Workload or Job %s/%s (namespace %s)", ns, name, ns);
            else
                say(c, "no Workload or Job %s/%s (namespace %s does not exist)", ns, name, ns);
            model_free(&m);
            return RC_FAIL;
        }
        cu_arena tmp;
        cu_arena_init(&tmp, 0);
        const char *uid = jstr(jget(job, "metadata"), "uid");
        const char *wn = uid ? cu_job_workload_name(&tmp, name, uid) : NULL;
        snprintf(wlname, sizeof(wlname), "%s", wn ? wn : "");
        const char *label = jstr(jget(jget(job, "metadata"), "labels"), CU_LABEL_QUEUE_NAME);
        char key[600];
        snprintf(key, sizeof(key), "%s/%s", ns, wlname);
        if (!wn || !find_wl(&m, ns, wlname)) {
            if (!label || !*label)
                say(c, "Job %s/%s has no Workload: it has no %s label", ns, name,
                    CU_LABEL_QUEUE_NAME);
            else
                say(c, "Job %s/%s has no Workload (expected Workload %s)", ns, name, key);
            json_object_put(job);
            cu_arena_free(&tmp);
            model_free(&m);
            return RC_FAIL;
        }
        if (cu_strmap_get(&m.synth, key) >= 0)
            cu_buf_printf(&c->notes, "(Job %s/%s has no Workload yet: explained as the Workload "
                          "%s the controller would create for it)\n", ns, name, key);
        else
            cu_buf_printf(&c->notes, "(Job %s/%s: its Workload is %s)\n", ns, name, key);
        json_object_put(job);
        cu_arena_free(&tmp);
    }
    const cu_workload *wl = find_wl(&m, ns, wlname);
    char key[600];
    snprintf(key, sizeof(key), "%s/%s", ns, wlname);
    /* pending in the API, admitted by the engine: the controller is late or absent */
    size_t nw = cu_engine_nworkloads(m.e);
    for (size_t i = 0; i < nw; i++) {
        const cu_wl_info *wi = cu_engine_workload_info(m.e, i);
        if (wi && wi->obj == wl && wi->admitted && !cu_workload_has_quota(wl))
            cu_buf_printf(&c->notes, "(not admitted in the API yet: the engine admits it on "
                          "these objects; is the controller running?)\n");
    }
    cu_diag d;
    cu_diag_init(&d);
    cu_err err;
    if (c->json) {
        cu_arena ar;
        cu_arena_init(&ar, 0);
        cu_node *doc = NULL;
        err = cu_engine_explain_doc(m.e, key, &ar, &doc, &d);
        if (err == CU_OK)
            err = cu_node_emit_json(doc, out, 2);
        if (err == CU_OK && (!out->len || out->data[out->len - 1] != '\n'))
            cu_buf_puts(out, "\n");
        cu_arena_free(&ar);
    } else {
        err = cu_engine_explain(m.e, key, out, &d);
    }
    if (err != CU_OK) {
        say_diag(c, &d);
        if (!d.n)
            say(c, "cannot explain %s: %s", key, cu_strerror(err));
        rc = RC_FAIL;
    }
    cu_diag_free(&d);
    model_free(&m);
    return rc;
}

/* Explains ns/name: the controller first, then the API objects. */
static int explain(cli *c, const char *ns, const char *name, cu_buf *out)
{
    ep_resp r;
    if (explain_ep(c, ns, name, &r, out)) {
        cu_buf_free(&r.body);
        return 0;
    }
    api a;
    int rc;
    if (ep_unavailable(&r)) {
        note_offline(c, &r);
        cu_buf_free(&r.body);
        rc = api_open(c, &a);
        if (!rc)
            rc = explain_offline(c, &a, ns, name, out);
        api_close(&a);
        return rc;
    }
    if (r.code != 404) {
        char line[300];
        say(c, "the controller at %s answered HTTP %ld: %s", c->url, r.code,
            first_line(&r.body, line, sizeof(line)));
        cu_buf_free(&r.body);
        return RC_FAIL;
    }
    cu_buf_free(&r.body);
    /* the controller's engine does not know ns/name: a Job's name, a
     * finished Workload, or one the controller has not seen */
    rc = api_open(c, &a);
    if (rc) {
        say(c, "the controller at %s does not know Workload %s/%s", c->url, ns, name);
        return rc;
    }
    json_object *wl = NULL, *job = NULL;
    rc = api_get_obj(c, &a, "/apis/kueue.x-k8s.io/v1beta2", ns, "workloads", name, &wl);
    if (!rc && !wl)
        rc = api_get_obj(c, &a, "/apis/batch/v1", ns, "jobs", name, &job);
    if (!rc && job) {
        cu_arena tmp;
        cu_arena_init(&tmp, 0);
        const char *uid = jstr(jget(job, "metadata"), "uid");
        const char *wn = uid ? cu_job_workload_name(&tmp, name, uid) : NULL;
        cu_buf jn;
        cu_buf_init(&jn, 0);
        if (wn && explain_ep(c, ns, wn, &r, &jn)) {
            cu_buf_printf(&c->notes, "(Job %s/%s: its Workload is %s/%s)\n", ns, name, ns, wn);
            cu_buf_append(out, jn.data ? jn.data : "", jn.len);
            cu_buf_free(&r.body);
            cu_buf_free(&jn);
            cu_arena_free(&tmp);
            json_object_put(job);
            api_close(&a);
            return 0;
        }
        if (wn)
            cu_buf_free(&r.body);
        cu_buf_free(&jn);
        cu_buf_printf(&c->notes, "(the controller at %s does not know the Workload of Job "
                      "%s/%s: computed from the API objects)\n", c->url, ns, name);
        cu_arena_free(&tmp);
    } else if (!rc && wl) {
        cu_buf_printf(&c->notes, "(the controller at %s does not know Workload %s/%s: computed "
                      "from the API objects)\n", c->url, ns, name);
    }
    json_object_put(wl);
    json_object_put(job);
    /* explain_offline reports "no Workload or Job" itself */
    if (!rc)
        rc = explain_offline(c, &a, ns, name, out);
    api_close(&a);
    return rc;
}

/* ---------------- option parsing shared by both commands ---------------- */

enum { OPT_CONTROLLER = 256, OPT_KUBECONFIG, OPT_CONTEXT, OPT_CONFIG };

/* Parses the options; sets *help when --help was given. Returns 0 or
 * RC_USAGE. allow_wide: `cueue queue` (-o table|wide|json) rather than
 * `cueue explain` (-o text|json). The controller's URL: --controller,
 * else $CUEUE_CONTROLLER, else the default. */
static int parse_opts(cli *c, int argc, char **argv, int allow_wide, int *help)
{
    static const struct option opts[] = {
        { "controller", required_argument, NULL, OPT_CONTROLLER },
        { "kubeconfig", required_argument, NULL, OPT_KUBECONFIG },
        { "context", required_argument, NULL, OPT_CONTEXT },
        { "config", required_argument, NULL, OPT_CONFIG },
        { "output", required_argument, NULL, 'o' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *ctrl = NULL;
    int ch;
    *help = 0;
    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
        switch (ch) {
        case 'h':
            *help = 1;
            return 0;
        case OPT_CONTROLLER: ctrl = optarg; break;
        case OPT_KUBECONFIG: c->kubeconfig = optarg; break;
        case OPT_CONTEXT: c->context = optarg; break;
        case OPT_CONFIG:
            if (!*optarg)
                return usage(c, "--config needs a FILE");
            c->config = optarg;
            break;
        case 'o':
            c->json = c->wide = 0;
            if (strcmp(optarg, "json") == 0)
                c->json = 1;
            else if (allow_wide && strcmp(optarg, "wide") == 0)
                c->wide = 1;
            else if (strcmp(optarg, allow_wide ? "table" : "text") != 0)
                return usage(c, "unknown output format '%s' (use %s)", optarg,
                             allow_wide ? "table, wide or json" : "text or json");
            break;
        case ':':
            return usage(c, "option '%s' needs a value", argv[optind - 1]);
        default:
            if (optopt > 0 && optopt < 256)
                return usage(c, "unknown option '-%c'", optopt);
            return usage(c, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (ctrl)
        return set_controller(c, ctrl, "--controller");
    const char *env = getenv("CUEUE_CONTROLLER");
    if (env && *env)
        return set_controller(c, env, "$CUEUE_CONTROLLER");
    return set_controller(c, DEFAULT_CONTROLLER, "default");
}

int cu_explain_main(int argc, char **argv)
{
    cli c = { .cmd = "explain" };
    cu_buf_init(&c.notes, 1u << 16);
    int help = 0;
    int rc = parse_opts(&c, argc, argv, 0, &help);
    if (rc || help) {
        if (help)
            fputs(help_explain, stdout);
        cu_buf_free(&c.notes);
        return rc;
    }
    if (optind >= argc) {
        cu_buf_free(&c.notes);
        return usage(&c, "no workload given (NAMESPACE/NAME of a Workload or a Job)");
    }
    if (argc - optind > 1) {
        cu_buf_free(&c.notes);
        return usage(&c, "one workload at a time, got extra '%s'", argv[optind + 1]);
    }
    char ns[254], name[254];
    rc = split_target(&c, argv[optind], ns, name, "workload");
    if (!rc) {
        cu_buf out;
        cu_buf_init(&out, MAX_BODY);
        rc = explain(&c, ns, name, &out);
        if (!rc)
            rc = emit(&c, &out);
        cu_buf_free(&out);
    }
    say_fallback(&c, rc);
    cu_buf_free(&c.notes);
    return rc;
}

/* ---------------- cueue queue ---------------- */

/* Notes on what the engine computed that the API does not show yet. */
static void note_model(cli *c, const model *m)
{
    if (m->synth.n)
        cu_buf_printf(&c->notes, "(%zu labelled Job%s no Workload yet: queued as the Workload%s "
                      "the controller would create)\n", m->synth.n,
                      m->synth.n == 1 ? " has" : "s have", m->synth.n == 1 ? "" : "s");
    if (m->would_admit)
        cu_buf_printf(&c->notes, "(%d Workload%s pending in the API %s admitted by the engine on "
                      "these objects: is the controller running?)\n", m->would_admit,
                      m->would_admit == 1 ? "" : "s", m->would_admit == 1 ? "is" : "are");
}

static const char help_queue[] =
    "Usage: cueue queue list [OPTIONS]\n"
    "       cueue queue pending [OPTIONS] [CLUSTERQUEUE | NAMESPACE/LOCALQUEUE]\n"
    "\n"
    "Queue visibility: what Kueue's visibility API shows.\n"
    "\n"
    "  list      the ClusterQueues and LocalQueues with their numbers of pending,\n"
    "            reserving and admitted Workloads\n"
    "  pending   the pending Workloads of a ClusterQueue, of a LocalQueue\n"
    "            (NAMESPACE/NAME), or of every ClusterQueue, in admission order:\n"
    "            POSITION (0-based, in the ClusterQueue; in the LocalQueue when one\n"
    "            is given), NAMESPACE/NAME, LOCALQUEUE, PRIORITY, REQUESTS (the\n"
    "            total of all pods: cpu=4,memory=8Gi), AGE and the pending REASON\n"
    "\n"
    "Sources, in order:\n"
    "  1. the running controller: GET /debug/pending on its metrics server (its\n"
    "     queues now); for 'list', the admitted and reserving counts come from\n"
    "     the queues' status, read with the kubeconfig;\n"
    "  2. when no controller answers (connection refused, nothing within 2 s\n"
    "     to connect or 5 s to answer) or it is not ready: the API objects, read\n"
    "     with the kubeconfig; the admission engine runs on them and the first\n"
    "     line of the output says that the answer was computed this way.\n"
    "     Labelled Jobs without a Workload yet are queued as the Workloads the\n"
    "     controller would create for them.\n"
    "\n"
    "Options:\n"
    "      --controller URL   the controller's metrics server (default\n"
    "                         $CUEUE_CONTROLLER, else " DEFAULT_CONTROLLER ")\n"
    "      --kubeconfig FILE  kubeconfig (default $KUBECONFIG, then\n"
    "                         ~/.kube/config, then the in-cluster configuration)\n"
    "      --context NAME     kubeconfig context (default: the current one)\n"
    "      --config FILE      the controller's Configuration\n"
    "                         (config.kueue.x-k8s.io), used when computing from\n"
    "                         the API objects\n"
    "  -o, --output FORMAT    table (default), wide (pending: with the MESSAGE)\n"
    "                         or json: for pending the PendingWorkloads document\n"
    "                         {\"kind\", \"generatedAt\", \"items\": [{\"namespace\",\n"
    "                         \"name\", \"localQueue\", \"clusterQueue\",\n"
    "                         \"positionInClusterQueue\", \"positionInLocalQueue\",\n"
    "                         \"priority\", \"requests\", \"createdAt\", \"reason\",\n"
    "                         \"message\"}]}; for list {\"clusterQueues\": [...],\n"
    "                         \"localQueues\": [...]}; with json, the notes go to\n"
    "                         stderr\n"
    "  -h, --help             show this help\n"
    "\n"
    "Exit codes: 0 ok, 1 no such queue or a runtime error (API server\n"
    "unreachable, unexpected answer), 2 bad usage.\n";

/* Returns the PendingWorkloads document from the controller (0), or NULL
 * with *offline set when it does not answer, or an exit code. */
static int pending_ep(cli *c, const char *cq, const char *lq, json_object **doc, int *offline)
{
    cu_buf p;
    cu_buf_init(&p, 0);
    cu_buf_puts(&p, "/debug/pending");
    if (cq) {
        cu_buf_puts(&p, "?clusterQueue=");
        put_query_value(&p, cq);
    } else if (lq) {
        cu_buf_puts(&p, "?localQueue=");
        put_query_value(&p, lq);
    }
    ep_resp r;
    ep_get(c, cu_buf_str(&p), &r);
    cu_buf_free(&p);
    *doc = NULL;
    *offline = 0;
    int rc = 0;
    char line[300];
    if (ep_unavailable(&r)) {
        note_offline(c, &r);
        *offline = 1;
    } else if (r.code != 200) {
        say(c, "the controller at %s answered HTTP %ld: %s", c->url, r.code,
            first_line(&r.body, line, sizeof(line)));
        rc = RC_FAIL;
    } else if (!(*doc = cu_json_parse_str(cu_buf_str(&r.body))) ||
               !json_object_is_type(jget(*doc, "items"), json_type_array)) {
        say(c, "the controller at %s answered with no PendingWorkloads document", c->url);
        json_object_put(*doc);
        *doc = NULL;
        rc = RC_FAIL;
    }
    cu_buf_free(&r.body);
    return rc;
}

static void emit_json(json_object *o, cu_buf *out)
{
    cu_buf_puts(out, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
                                                       JSON_C_TO_STRING_SPACED |
                                                       JSON_C_TO_STRING_NOSLASHESCAPE));
    cu_buf_puts(out, "\n");
}

static int queue_pending(cli *c, const char *target, cu_buf *out)
{
    char ns[254], name[254], lqkey[600];
    const char *cq = NULL, *lq = NULL;
    if (target && strchr(target, '/')) {
        int rc = split_target(c, target, ns, name, "LocalQueue");
        if (rc)
            return rc;
        snprintf(lqkey, sizeof(lqkey), "%s/%s", ns, name);
        lq = lqkey;
    } else if (target) {
        if (!valid_name(target))
            return usage(c, "'%s' is not a valid ClusterQueue name (lowercase letters, digits, "
                         "'-' and '.')", target);
        cq = target;
    }
    json_object *doc = NULL;
    int offline = 0;
    int rc = pending_ep(c, cq, lq, &doc, &offline);
    if (rc)
        return rc;
    api a = { 0 };
    model m;
    int have_model = 0;
    if (offline) {
        rc = api_open(c, &a);
        if (!rc) {
            rc = model_load(c, &a, &m);
            have_model = 1;
        }
        if (!rc) {
            int found = !target;
            for (size_t i = 0; cq && i < m.w.cqs.n && !found; i++)
                found = strcmp(m.w.cqs.items[i]->meta.name, cq) == 0;
            for (size_t i = 0; lq && i < m.w.lqs.n && !found; i++)
                found = strcmp(m.w.lqs.items[i]->meta.name, name) == 0 &&
                        strcmp(m.w.lqs.items[i]->meta.ns ? m.w.lqs.items[i]->meta.ns : "default",
                               ns) == 0;
            if (!found) {
                say(c, "no %s %s", cq ? "ClusterQueue" : "LocalQueue", target);
                rc = RC_FAIL;
            } else if (!(doc = offline_pending(&m, cq, lq))) {
                say(c, "out of memory");
                rc = RC_FAIL;
            }
            if (!rc)
                note_model(c, &m);
        }
    } else if (target && json_object_array_length(jget(doc, "items")) == 0) {
        /* an empty answer: say so when the queue does not exist at all */
        json_object *obj = NULL;
        if (api_open(c, &a) == 0) {
            int gr;
            if (cq) {
                areq q;
                memset(&q, 0, sizeof(q));
                snprintf(q.path, sizeof(q.path), "/apis/kueue.x-k8s.io/v1beta2/clusterqueues/%s",
                         cq);
                api_run(&a, &q, 1);
                gr = q.code == 404 ? 0 : -1;
                areq_clear(&q);
            } else {
                gr = api_get_obj(c, &a, "/apis/kueue.x-k8s.io/v1beta2", ns, "localqueues", name,
                                 &obj) == 0 && !obj ? 0 : -1;
            }
            if (gr == 0) {
                say(c, "no %s %s", cq ? "ClusterQueue" : "LocalQueue", target);
                rc = RC_FAIL;
            }
            json_object_put(obj);
        }
    }
    if (!rc) {
        if (c->json) {
            emit_json(doc, out);
        } else if (json_object_array_length(jget(doc, "items")) == 0) {
            if (target)
                cu_buf_printf(out, "No pending Workloads in %s %s.\n",
                              cq ? "ClusterQueue" : "LocalQueue", target);
            else
                cu_buf_puts(out, "No pending Workloads.\n");
        } else {
            render_pending(c, doc, lq, !target, out);
        }
    }
    json_object_put(doc);
    if (have_model)
        model_free(&m);
    api_close(&a);
    return rc;
}

typedef struct qrow {
    char ns[254], name[254], cq[254], cohort[254];
    int pending, reserving, admitted;
    int known;                  /* counts beyond pending are known */
} qrow;

typedef struct qrows {
    qrow *v;
    size_t n, cap;
} qrows;

static qrow *qrows_get(qrows *q, const char *ns, const char *name)
{
    for (size_t i = 0; i < q->n; i++)
        if (strcmp(q->v[i].name, name) == 0 && strcmp(q->v[i].ns, ns ? ns : "") == 0)
            return &q->v[i];
    if (q->n == q->cap) {
        size_t cap = q->cap ? q->cap * 2 : 32;
        qrow *p = realloc(q->v, cap * sizeof(*p));
        if (!p)
            return NULL;
        q->v = p;
        q->cap = cap;
    }
    qrow *r = &q->v[q->n++];
    memset(r, 0, sizeof(*r));
    snprintf(r->ns, sizeof(r->ns), "%s", ns ? ns : "");
    snprintf(r->name, sizeof(r->name), "%s", name);
    return r;
}

static int cmp_qrow(const void *pa, const void *pb)
{
    const qrow *a = pa, *b = pb;
    int c = strcmp(a->ns, b->ns);
    return c ? c : strcmp(a->name, b->name);
}

static int jint(json_object *o, const char *k)
{
    json_object *v = jget(o, k);
    return v ? json_object_get_int(v) : 0;
}

static void render_list(const cli *c, qrows *cqs, qrows *lqs, cu_buf *out)
{
    qsort(cqs->v, cqs->n, sizeof(qrow), cmp_qrow);
    qsort(lqs->v, lqs->n, sizeof(qrow), cmp_qrow);
    if (c->json) {
        json_object *doc = json_object_new_object();
        json_object *a = json_object_new_array(), *b = json_object_new_array();
        for (size_t i = 0; i < cqs->n; i++) {
            json_object *o = json_object_new_object();
            jset_str(o, "name", cqs->v[i].name);
            if (cqs->v[i].cohort[0])
                jset_str(o, "cohort", cqs->v[i].cohort);
            json_object_object_add(o, "pending", json_object_new_int(cqs->v[i].pending));
            if (cqs->v[i].known) {
                json_object_object_add(o, "reserving", json_object_new_int(cqs->v[i].reserving));
                json_object_object_add(o, "admitted", json_object_new_int(cqs->v[i].admitted));
            }
            json_object_array_add(a, o);
        }
        for (size_t i = 0; i < lqs->n; i++) {
            json_object *o = json_object_new_object();
            jset_str(o, "namespace", lqs->v[i].ns);
            jset_str(o, "name", lqs->v[i].name);
            jset_str(o, "clusterQueue", lqs->v[i].cq);
            json_object_object_add(o, "pending", json_object_new_int(lqs->v[i].pending));
            if (lqs->v[i].known) {
                json_object_object_add(o, "reserving", json_object_new_int(lqs->v[i].reserving));
                json_object_object_add(o, "admitted", json_object_new_int(lqs->v[i].admitted));
            }
            json_object_array_add(b, o);
        }
        json_object_object_add(doc, "clusterQueues", a);
        json_object_object_add(doc, "localQueues", b);
        emit_json(doc, out);
        json_object_put(doc);
        return;
    }
    for (int pass = 0; pass < 2; pass++) {
        qrows *q = pass ? lqs : cqs;
        table t = { .ncols = 5 };
        const char *hdr[5] = { pass ? "LOCALQUEUE" : "CLUSTERQUEUE",
                               pass ? "CLUSTERQUEUE" : "COHORT",
                               "PENDING", "RESERVING", "ADMITTED" };
        tbl_row(&t, hdr);
        for (size_t i = 0; i < q->n; i++) {
            char name[520], p[16], r[16], a[16];
            if (pass)
                snprintf(name, sizeof(name), "%s/%s", q->v[i].ns, q->v[i].name);
            else
                snprintf(name, sizeof(name), "%s", q->v[i].name);
            snprintf(p, sizeof(p), "%d", q->v[i].pending);
            snprintf(r, sizeof(r), "%d", q->v[i].reserving);
            snprintf(a, sizeof(a), "%d", q->v[i].admitted);
            const char *row[5] = { name, pass ? q->v[i].cq : q->v[i].cohort, p,
                                   q->v[i].known ? r : "?", q->v[i].known ? a : "?" };
            tbl_row(&t, row);
        }
        if (pass)
            cu_buf_puts(out, "\n");
        if (t.failed)
            out->failed = 1;
        else if (q->n)
            tbl_print(&t, out);
        else
            cu_buf_printf(out, "No %s.\n", pass ? "LocalQueues" : "ClusterQueues");
        tbl_free(&t);
    }
}

static int queue_list(cli *c, cu_buf *out)
{
    json_object *doc = NULL;
    int offline = 0;
    int rc = pending_ep(c, NULL, NULL, &doc, &offline);
    if (rc)
        return rc;
    qrows cqs = { 0 }, lqs = { 0 };
    api a = { 0 };
    int oom = 0;
    if (offline) {
        model m;
        rc = api_open(c, &a);
        if (!rc) {
            rc = model_load(c, &a, &m);
            if (!rc) {
                for (size_t i = 0; i < cu_engine_ncqs(m.e) && !oom; i++) {
                    const cu_cq_info *ci = cu_engine_cq_info(m.e, i);
                    qrow *r = qrows_get(&cqs, NULL, ci->name);
                    if (!r) {
                        oom = 1;
                        break;
                    }
                    snprintf(r->cohort, sizeof(r->cohort), "%s", ci->cohort ? ci->cohort : "");
                    r->pending = ci->pending;
                    r->reserving = ci->reserving;
                    r->admitted = ci->admitted;
                    r->known = 1;
                }
                for (size_t i = 0; i < cu_engine_nlqs(m.e) && !oom; i++) {
                    const cu_lq_info *li = cu_engine_lq_info(m.e, i);
                    qrow *r = qrows_get(&lqs, li->ns, li->name);
                    if (!r) {
                        oom = 1;
                        break;
                    }
                    snprintf(r->cq, sizeof(r->cq), "%s",
                             li->cluster_queue ? li->cluster_queue : "");
                    r->pending = li->pending;
                    r->reserving = li->reserving;
                    r->admitted = li->admitted;
                    r->known = 1;
                }
                note_model(c, &m);
            }
            model_free(&m);
        }
    } else {
        /* the queues and their status counts from the API, the pending
         * counts from the controller */
        if (api_open(c, &a) == 0) {
            areq q[2];
            memset(q, 0, sizeof(q));
            snprintf(q[0].path, sizeof(q[0].path), "%s", res_tab[R_CQ].path);
            snprintf(q[1].path, sizeof(q[1].path), "%s", res_tab[R_LQ].path);
            api_run(&a, q, 2);
            for (int k = 0; k < 2 && !oom; k++) {
                json_object *l = q[k].code == 200 && q[k].body ? cu_json_parse_str(q[k].body)
                                                               : NULL;
                json_object *items = jget(l, "items");
                if (!json_object_is_type(items, json_type_array)) {
                    say_api_error(c, &a, &q[k]);
                    say(c, "warning: the %s and their admitted counts are not known",
                        k ? "LocalQueues" : "ClusterQueues");
                }
                size_t n = items ? json_object_array_length(items) : 0;
                for (size_t i = 0; i < n && !oom; i++) {
                    json_object *it = json_object_array_get_idx(items, i);
                    json_object *md = jget(it, "metadata"), *st = jget(it, "status");
                    const char *name = jstr(md, "name");
                    if (!name)
                        continue;
                    qrow *r = qrows_get(k ? &lqs : &cqs, k ? jstr(md, "namespace") : NULL, name);
                    if (!r) {
                        oom = 1;
                        break;
                    }
                    const char *other = jstr(jget(it, "spec"), k ? "clusterQueue" : "cohortName");
                    if (!other && !k)
                        other = jstr(jget(it, "spec"), "cohort");
                    snprintf(k ? r->cq : r->cohort, sizeof(r->cq), "%s", other ? other : "");
                    r->reserving = jint(st, "reservingWorkloads");
                    r->admitted = jint(st, "admittedWorkloads");
                    r->known = 1;
                }
                json_object_put(l);
                areq_clear(&q[k]);
            }
        } else {
            say(c, "warning: the queues' admitted counts are not known");
        }
        json_object *items = jget(doc, "items");
        size_t n = json_object_array_length(items);
        for (size_t i = 0; i < n && !oom; i++) {
            json_object *it = json_object_array_get_idx(items, i);
            const char *cq = jstr(it, "clusterQueue"), *lq = jstr(it, "localQueue");
            const char *ns = jstr(it, "namespace");
            qrow *r = cq && *cq ? qrows_get(&cqs, NULL, cq) : NULL;
            if (r)
                r->pending++;
            r = lq && *lq && ns ? qrows_get(&lqs, ns, lq) : NULL;
            if (r) {
                r->pending++;
                if (!r->cq[0] && cq)
                    snprintf(r->cq, sizeof(r->cq), "%s", cq);
            }
        }
    }
    if (oom) {
        say(c, "out of memory");
        rc = RC_FAIL;
    }
    if (!rc)
        render_list(c, &cqs, &lqs, out);
    free(cqs.v);
    free(lqs.v);
    json_object_put(doc);
    api_close(&a);
    return rc;
}

int cu_queue_main(int argc, char **argv)
{
    cli c = { .cmd = "queue" };
    cu_buf_init(&c.notes, 1u << 16);
    int help = 0;
    int rc = parse_opts(&c, argc, argv, 1, &help);
    if (rc || help) {
        if (help)
            fputs(help_queue, stdout);
        cu_buf_free(&c.notes);
        return rc;
    }
    cu_buf out;
    cu_buf_init(&out, MAX_BODY);
    const char *sub = optind < argc ? argv[optind] : NULL;
    int nargs = argc - optind - 1;
    if (!sub) {
        rc = usage(&c, "no subcommand given (list or pending)");
    } else if (strcmp(sub, "list") == 0) {
        rc = nargs > 0 ? usage(&c, "list takes no arguments, got '%s'", argv[optind + 1])
                       : queue_list(&c, &out);
    } else if (strcmp(sub, "pending") == 0) {
        rc = nargs > 1 ? usage(&c, "pending takes one queue (CLUSTERQUEUE or "
                               "NAMESPACE/LOCALQUEUE), got extra '%s'", argv[optind + 2])
                       : queue_pending(&c, nargs ? argv[optind + 1] : NULL, &out);
    } else {
        rc = usage(&c, "unknown subcommand '%s' (use list or pending)", sub);
    }
    if (!rc)
        rc = emit(&c, &out);
    cu_buf_free(&out);
    say_fallback(&c, rc);
    cu_buf_free(&c.notes);
    return rc;
}
