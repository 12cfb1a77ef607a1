/*
 * cu_cli.c - what `cueue explain` and `cueue queue` (what the admission
 * controller knows about a Workload or a queue, for people) share: options
 * and messages, tables, the controller's endpoints and the API server.
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
#include "cu_cli_int.h"

#include <curl/curl.h>
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---------------- options and messages ---------------- */

/* Prints "cueue: CMD: message" to stderr. */
void cli_say(const cli *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "cueue: %s: ", c->cmd);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* Prints the message and a hint to stderr; returns RC_USAGE. */
int cli_usage(const cli *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "cueue: %s: ", c->cmd);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'cueue %s --help'.\n", c->cmd);
    return RC_USAGE;
}

void cli_say_diag(const cli *c, const cu_diag *d)
{
    for (size_t i = 0; i < d->n; i++)
        cli_say(c, "%s", d->msgs[i]);
    if (d->dropped)
        cli_say(c, "... and %zu more messages not shown", d->dropped);
}

/* Writes the notes (stdout for text output, stderr for JSON) and out;
 * returns the exit code. */
int cli_emit(const cli *c, const cu_buf *out)
{
    if (out->failed) {
        cli_say(c, "the output is too large (out of memory)");
        return RC_FAIL;
    }
    if (c->notes.len) {
        if (c->json)
            fputs(cu_buf_str(&c->notes), stderr);
        else
            fputs(cu_buf_str(&c->notes), stdout);
    }
    if (out->len && fwrite(out->data, 1, out->len, stdout) != out->len) {
        cli_say(c, "writing the output failed: %s", strerror(errno));
        return RC_FAIL;
    }
    if (fflush(stdout) != 0) {
        cli_say(c, "writing the output failed: %s", strerror(errno));
        return RC_FAIL;
    }
    return RC_OK;
}

/* After a failure to read the API objects: why they were read (the
 * controller was not there), on stderr. */
void cli_say_fallback(const cli *c, int rc)
{
    if (rc == RC_FAIL && c->api_failed && c->fallback[0])
        cli_say(c, "and the controller at %s did not answer either (%s)", c->url, c->fallback);
}

/* Sets the controller's base URL from s (flag or environment, named by
 * what); returns 0 or RC_USAGE. */
static int set_controller(cli *c, const char *s, const char *what)
{
    if (strncmp(s, "http://", 7) != 0 && strncmp(s, "https://", 8) != 0)
        return cli_usage(c, "%s: expected an http:// or https:// URL such as %s, got '%s'", what,
                         DEFAULT_CONTROLLER, s);
    size_t n = strlen(s);
    while (n > 8 && s[n - 1] == '/')
        n--;
    if (n >= sizeof(c->url))
        return cli_usage(c, "%s: URL too long", what);
    memcpy(c->url, s, n);
    c->url[n] = '\0';
    return 0;
}

/* A Kubernetes object name (DNS subdomain): lowercase letters, digits,
 * '-' and '.', 1..253 characters. */
int cli_valid_name(const char *s)
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
void cli_put_query_value(cu_buf *b, const char *s)
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

/* ---------------- tables ---------------- */

/* Appends a row of t->ncols cells (copied). */
void cli_tbl_row(table *t, const char *const *cells)
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
void cli_tbl_print(const table *t, cu_buf *out)
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

void cli_tbl_free(table *t)
{
    for (size_t i = 0; i < t->nrows * t->ncols; i++)
        free(t->cells[i]);
    free(t->cells);
}

/* ---------------- the controller's endpoints ---------------- */

static size_t ep_write(char *p, size_t sz, size_t n, void *ud)
{
    return cu_buf_append(ud, p, sz * n) == CU_OK ? sz * n : 0;
}

/* GETs the controller's base URL + path_query into r (free r->body with
 * cu_buf_free). */
void cli_ep_get(const cli *c, const char *path_query, ep_resp *r)
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
const char *cli_first_line(const cu_buf *b, char *out, size_t n)
{
    const char *s = cu_buf_str(b);
    size_t l = strcspn(s, "\r\n");
    snprintf(out, n, "%.*s", (int)(l < n ? l : n - 1), s);
    return out;
}

/* After an answer that sends us to the API objects (no answer, or 503):
 * records the note saying so. */
void cli_note_offline(cli *c, const ep_resp *r)
{
    char line[200];
    if (r->timed_out) {
        cu_buf_printf(&c->notes,
                      "(no answer from the controller at %s within %ld s: computed "
                      "from the API objects)\n",
                      c->url, ENDPOINT_TIMEOUT_MS / 1000);
        snprintf(c->fallback, sizeof(c->fallback), "%s", r->err[0] ? r->err : "timeout");
    } else if (r->code == 0) {
        cu_buf_printf(&c->notes, "(no controller reachable at %s: computed from the API objects)\n",
                      c->url);
        snprintf(c->fallback, sizeof(c->fallback), "%s", r->err[0] ? r->err : "unreachable");
    } else {
        cli_first_line(&r->body, line, sizeof(line));
        cu_buf_printf(&c->notes,
                      "(the controller at %s %s (%s): computed from the API "
                      "objects)\n",
                      c->url, r->code == 401 || r->code == 403 ? "refused us" : "is not ready",
                      line);
        snprintf(c->fallback, sizeof(c->fallback), "HTTP %ld: %s", r->code, line);
    }
}

/* 1 when the answer means "ask the API objects instead": none, not
 * ready, or refused (secure metrics: docs/controller.md). */
int cli_ep_unavailable(const ep_resp *r)
{
    return r->code == 0 || r->code == 503 || r->code == 401 || r->code == 403;
}

/* ---------------- the API server ---------------- */

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

void cli_areq_clear(areq *q)
{
    free(q->body);
    free(q->err);
    q->body = q->err = NULL;
    q->done = q->code = 0;
}

/* Loads the kubeconfig and starts a client. Returns 0, or RC_FAIL with
 * the problem printed. */
int cli_api_open(cli *c, api *a)
{
    memset(a, 0, sizeof(*a));
    cu_diag d;
    cu_diag_init(&d);
    a->cfg = cu_kconfig_load(c->kubeconfig, c->context, &d);
    if (!a->cfg) {
        c->api_failed = 1;
        cli_say_diag(c, &d);
        cli_say(c, "cannot read the API objects without a kubeconfig (--kubeconfig, $KUBECONFIG "
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
        cli_say_diag(c, &d);
        if (!d.n)
            cli_say(c, "cannot start the Kubernetes client (out of memory)");
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

void cli_api_close(api *a)
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
void cli_api_run(api *a, areq *q, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        cli_areq_clear(&q[i]);
        if (!cu_kclient_request(a->kc, "GET", q[i].path, NULL, 0, NULL, areq_done, &q[i]))
            q[i].done = 1; /* code 0, no body: reported as a failure */
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
void cli_say_api_error(cli *c, const api *a, const areq *q)
{
    c->api_failed = 1;
    if (q->code == 0) {
        cli_say(c, "cannot reach the API server at %s: %s", a->cfg->server,
                q->err ? q->err : "request failed");
        return;
    }
    const char *msg = NULL;
    json_object *j = q->body ? cu_json_parse_str(q->body) : NULL;
    json_object *m = NULL;
    if (j && json_object_object_get_ex(j, "message", &m))
        msg = json_object_get_string(m);
    cli_say(c, "GET %s: HTTP %d%s%s", q->path, q->code, msg ? ": " : "", msg ? msg : "");
    json_object_put(j);
}

/* Splits "[NS/]NAME" into ns and name (buffers of 254); the namespace
 * defaults to the kubeconfig context's. Returns 0 or RC_USAGE. */
int cli_split_target(const cli *c, const char *arg, char *ns, char *name, const char *what)
{
    const char *slash = strchr(arg, '/');
    if (slash) {
        if (strchr(slash + 1, '/'))
            return cli_usage(c, "%s: expected NAMESPACE/NAME, got '%s'", what, arg);
        snprintf(ns, 254, "%.*s", (int)(slash - arg < 253 ? slash - arg : 253), arg);
        snprintf(name, 254, "%s", slash + 1);
        if ((size_t)(slash - arg) > 253 || !cli_valid_name(ns))
            return cli_usage(c,
                             "%s: '%.*s' is not a valid namespace name (lowercase letters, "
                             "digits and '-')",
                             what, (int)(slash - arg), arg);
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
    if (strlen(slash ? slash + 1 : arg) > 253 || !cli_valid_name(name))
        return cli_usage(c, "%s: '%s' is not a valid name (lowercase letters, digits, '-' and '.')",
                         what, slash ? slash + 1 : arg);
    return 0;
}

/* GET of a namespaced object: 200 -> *obj (json_object_put), 404 -> NULL
 * with 0 returned; other failures print and return RC_FAIL. */
int cli_api_get_obj(cli *c, api *a, const char *prefix, const char *ns, const char *plural,
                    const char *name, json_object **obj)
{
    areq q;
    memset(&q, 0, sizeof(q));
    snprintf(q.path, sizeof(q.path), "%s/namespaces/%s/%s/%s", prefix, ns, plural, name);
    cli_api_run(a, &q, 1);
    *obj = NULL;
    int rc = 0;
    if (q.code == 200) {
        *obj = q.body ? cu_json_parse_str(q.body) : NULL;
        if (!*obj) {
            cli_say(c, "GET %s: the answer is not JSON", q.path);
            rc = RC_FAIL;
        }
    } else if (q.code != 404) {
        cli_say_api_error(c, a, &q);
        rc = RC_FAIL;
    }
    cli_areq_clear(&q);
    return rc;
}

/* ---------------- option parsing shared by both commands ---------------- */

enum { OPT_CONTROLLER = 256, OPT_KUBECONFIG, OPT_CONTEXT, OPT_CONFIG };

/* Parses the options; sets *help when --help was given. Returns 0 or
 * RC_USAGE. allow_wide: `cueue queue` (-o table|wide|json) rather than
 * `cueue explain` (-o text|json). The controller's URL: --controller,
 * else $CUEUE_CONTROLLER, else the default. */
int cli_parse_opts(cli *c, int argc, char **argv, int allow_wide, int *help)
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
        case 'h': *help = 1; return 0;
        case OPT_CONTROLLER: ctrl = optarg; break;
        case OPT_KUBECONFIG: c->kubeconfig = optarg; break;
        case OPT_CONTEXT: c->context = optarg; break;
        case OPT_CONFIG:
            if (!*optarg)
                return cli_usage(c, "--config needs a FILE");
            c->config = optarg;
            break;
        case 'o':
            c->json = c->wide = 0;
            if (strcmp(optarg, "json") == 0)
                c->json = 1;
            else if (allow_wide && strcmp(optarg, "wide") == 0)
                c->wide = 1;
            else if (strcmp(optarg, allow_wide ? "table" : "text") != 0)
                return cli_usage(c, "unknown output format '%s' (use %s)", optarg,
                                 allow_wide ? "table, wide or json" : "text or json");
            break;
        case ':': return cli_usage(c, "option '%s' needs a value", argv[optind - 1]);
        default:
            if (optopt > 0 && optopt < 256)
                return cli_usage(c, "unknown option '-%c'", optopt);
            return cli_usage(c, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (ctrl)
        return set_controller(c, ctrl, "--controller");
    const char *env = getenv("CUEUE_CONTROLLER");
    if (env && *env)
        return set_controller(c, env, "$CUEUE_CONTROLLER");
    return set_controller(c, DEFAULT_CONTROLLER, "default");
}

int cli_begin(cli *c, int argc, char **argv, int allow_wide, const char *help_text)
{
    cu_buf_init(&c->notes, 1u << 16);
    int help = 0;
    int rc = cli_parse_opts(c, argc, argv, allow_wide, &help);
    if (rc || help) {
        if (help)
            fputs(help_text, stdout);
        cu_buf_free(&c->notes);
        return rc;
    }
    return -1;
}
