/*
 * cu_dev.c - `cueue dev`: a local trial environment in one command.
 *
 * Starts `cueue cluster` (this same binary, /proc/self/exe) on a free port,
 * creates the objects of the CRD folder and then of the samples folder
 * through the API (YAML documents converted to JSON and POSTed; Jobs with
 * the queue-name label are created suspended; a Workload's status is
 * written to /status after the create), starts `cueue controller` against
 * it, and then polls Workloads and Jobs once a second, printing one line
 * per change. SIGINT/SIGTERM (or --duration) stop the controller, then the
 * cluster. With --kubeconfig FILE it uses that cluster instead (no `cueue
 * cluster`; nothing is deleted when it stops).
 *
 * Signals are handled without globals: SIGINT, SIGTERM and SIGCHLD are
 * blocked and collected with sigtimedwait, which is also the loop's sleep.
 * The children get the original mask back and their own process group, so
 * a Ctrl-C reaches only this process, which stops them in order.
 */
#include "cu_cli.h"
#include "cu_clock.h"
#include "cu_dev_int.h"
#include "cu_walk.h"
#include "cu_controller.h"
#include "cu_doc.h"
#include "cu_json.h"
#include "cu_kconfig.h"
#include "cu_webhook.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DEV_MAX_DEPTH 16
#define DEV_START_TIMEOUT_S 20
#define DEV_PATH_MAX 4096

static const char dev_help[] =
    "Usage: cueue dev [OPTIONS]\n"
    "\n"
    "Starts a local trial environment and shows what the controller does:\n"
    "  1. 'cueue cluster' on a free port of 127.0.0.1, with its built-in\n"
    "     simulated GPU and CPU nodes (log: DIR/cluster.log);\n"
    "  2. creates the objects of the CRD folder, then of the samples folder\n"
    "     (Jobs with the kueue.x-k8s.io/queue-name label are created\n"
    "     suspended; a Workload's status is written after it is created);\n"
    "  3. 'cueue controller' against it (log: DIR/controller.log), with Kueue's\n"
    "     visibility API on a free port of 127.0.0.1, registered in the cluster\n"
    "     as the APIService v1beta2.visibility.kueue.x-k8s.io (through the\n"
    "     Service default/visibility-server), so that\n"
    "       kubectl get --raw /apis/visibility.kueue.x-k8s.io/v1beta2/\\\n"
    "         clusterqueues/CQ/pendingworkloads\n"
    "     works, and its admission and conversion webhooks on another,\n"
    "     routed as dist/install.yaml routes them (Service\n"
    "     cueue-system/cueue-webhook-service, the webhook configurations\n"
    "     cueue-mutating/validating-webhook-configuration; the controller\n"
    "     makes the certificate and puts its CA in): a queued Job created\n"
    "     unsuspended is suspended, a bad ClusterQueue refused, v1beta1\n"
    "     converted. With --config, the Service is its namespace's\n"
    "     internalCertManagement.webhookServiceName (none when that is\n"
    "     disabled); with --kubeconfig, no webhooks are installed;\n"
    "  4. prints one line per change until Ctrl-C:\n"
    "       admitted NS/JOB to ClusterQueue CQ (flavors F...)\n"
    "       started NS/JOB\n"
    "       finished NS/JOB (Succeeded)   or (Failed: MESSAGE)\n"
    "       waiting NS/JOB: MESSAGE       (QuotaReserved=False; when it changes)\n"
    "       evicted NS/JOB: MESSAGE\n"
    "       deleted NS/JOB\n"
    "     Workloads created directly (without a Job) are shown as\n"
    "     'Workload NS/NAME'.\n"
    "The kubeconfig is written to DIR/kubeconfig; submit your own Jobs with\n"
    "  kubectl --kubeconfig DIR/kubeconfig apply -f job.yaml\n"
    "(with the kueue.x-k8s.io/queue-name label; the webhook suspends them).\n"
    "Pods run for the time in their cueue.dev/simulated-runtime annotation\n"
    "(a duration such as \"30s\"), or else for the N of a plain 'sleep N'\n"
    "command (sh -c \"sleep 60\"); with neither they run until deleted.\n"
    "\n"
    "Options:\n"
    "      --dir DIR           where the kubeconfig and the logs go (default\n"
    "                          ./cueue-dev; created if missing)\n"
    "      --samples DIR       the objects to create after the CRDs (default\n"
    "                          config/samples); files or folders of *.yaml,\n"
    "                          *.yml and *.json, folders read in name order\n"
    "      --crds DIR          the CustomResourceDefinitions (default crds)\n"
    "      --config FILE       Kueue's controller Configuration\n"
    "                          (config.kueue.x-k8s.io/v1beta2 or v1beta1: fair\n"
    "                          sharing, waitForPodsReady, resource\n"
    "                          transformations...), given to the controller\n"
    "                          as 'cueue controller --config FILE'; checked\n"
    "                          first, as the manifests are\n"
    "      --kubeconfig FILE   use the cluster of FILE instead of starting\n"
    "                          'cueue cluster' (step 1): a real cluster, whose\n"
    "                          nodes run the pods; nothing is deleted when\n"
    "                          it stops\n"
    "      --nodes FILE        the simulated nodes instead of the built-in ones\n"
    "                          (v1 Node YAML, as 'cueue cluster --nodes FILE'):\n"
    "                          e.g. GPU nodes with topology labels for\n"
    "                          Topology-Aware Scheduling (docs/cluster.md)\n"
    "      --duration SECONDS  stop after SECONDS (for tests; default: run\n"
    "                          until Ctrl-C or SIGTERM)\n"
    "      --quiet             print only the change lines and errors (no\n"
    "                          banner, no setup progress)\n"
    "  -h, --help              show this help\n"
    "\n"
    "Exit codes: 0 stopped by Ctrl-C, SIGTERM or --duration; 1 the cluster or\n"
    "the controller failed (see the logs in DIR); 2 bad usage or unreadable\n"
    "or malformed manifests (nothing is started then).\n";

/* ---------------- manifests ---------------- */

void cli_dev_objs_free(dev_objs *l)
{
    for (size_t i = 0; i < l->n; i++) {
        json_object_put(l->items[i].obj);
        free(l->items[i].where);
    }
    free(l->items);
    l->items = NULL;
    l->n = l->cap = 0;
}

/* Takes ownership of obj. Returns 0 or -1 (OOM; obj is freed). */
static int objs_add(dev_objs *l, json_object *obj, const char *file, int line)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 32;
        dev_obj *p = realloc(l->items, cap * sizeof(*p));
        if (!p) {
            json_object_put(obj);
            return -1;
        }
        l->items = p;
        l->cap = cap;
    }
    char where[DEV_PATH_MAX + 16];
    snprintf(where, sizeof where, "%s:%d", file, line);
    char *w = strdup(where);
    if (!w) {
        json_object_put(obj);
        return -1;
    }
    l->items[l->n].obj = obj;
    l->items[l->n].where = w;
    l->n++;
    return 0;
}

/* Parses one file and appends its objects (List items expanded). Returns
 * 0, 2 (unreadable or malformed; message printed) or 1 (OOM). */
static int load_file(dev_objs *l, const char *file)
{
    cu_arena a;
    cu_arena_init(&a, 0);
    cu_diag d;
    cu_diag_init(&d);
    cu_doc *docs = NULL;
    size_t ndocs = 0;
    int rc = 0;
    cu_err err = cu_doc_parse_file(file, &a, &docs, &ndocs, &d);
    if (err) {
        for (size_t i = 0; i < d.n; i++)
            fprintf(stderr, "cueue: dev: %s\n", d.msgs[i]);
        if (d.n == 0)
            fprintf(stderr, "cueue: dev: %s: %s\n", file, cu_strerror(err));
        rc = err == CU_ENOMEM ? 1 : 2;
    } else {
        for (size_t i = 0; i < d.n; i++) /* warnings: duplicate keys */
            fprintf(stderr, "cueue: dev: %s\n", d.msgs[i]);
    }
    for (size_t i = 0; i < ndocs && !rc; i++) {
        if (!docs[i].root)
            continue;
        cu_buf b;
        cu_buf_init(&b, 0);
        if (cu_node_emit_json(docs[i].root, &b, 0) != CU_OK) {
            cu_buf_free(&b);
            rc = 1;
            break;
        }
        json_object *o = cu_json_parse_str(cu_buf_str(&b));
        cu_buf_free(&b);
        if (!o || !json_object_is_type(o, json_type_object)) {
            fprintf(stderr, "cueue: dev: %s:%d: the document is not an object\n", file,
                    docs[i].root->line);
            json_object_put(o);
            rc = 2;
            break;
        }
        const char *kind = cu_jstr(o, "kind");
        json_object *items = cu_jget(o, "items");
        if (kind && strlen(kind) > 4 && strcmp(kind + strlen(kind) - 4, "List") == 0 && items &&
            json_object_is_type(items, json_type_array)) {
            for (size_t k = 0; k < json_object_array_length(items) && !rc; k++) {
                json_object *it = json_object_get(json_object_array_get_idx(items, k));
                if (objs_add(l, it, file, docs[i].root->line))
                    rc = 1;
            }
            json_object_put(o);
        } else if (objs_add(l, o, file, docs[i].root->line)) {
            rc = 1;
        }
    }
    cu_diag_free(&d);
    cu_arena_free(&a);
    return rc;
}

/* cli_walk_fn: load_file into the list (ud). */
static int load_one(const char *file, void *ud) { return load_file(ud, file); }

int cli_dev_load_path(dev_objs *l, const char *path)
{
    return cli_walk_manifests(path, "cueue: dev: ", DEV_MAX_DEPTH, load_one, l);
}

/* ---------------- HTTP ---------------- */

typedef struct dev_http {
    CURL *curl;
    char *server;            /* without a trailing '/' */
    struct curl_slist *auth; /* Authorization header or NULL */
    cu_kconfig *kc;
} dev_http;

static size_t on_body(char *p, size_t sz, size_t nm, void *ud)
{
    cu_buf *b = ud;
    return cu_buf_append(b, p, sz * nm) == CU_OK ? sz * nm : 0;
}

/* Sends one request; body may be NULL. Returns the HTTP code (0 when the
 * request failed; *resp then holds curl's message). resp is reset. */
static long http_do(dev_http *h, const char *method, const char *path, const char *ctype,
                    const char *body, cu_buf *resp)
{
    char url[DEV_PATH_MAX];
    snprintf(url, sizeof url, "%s%s", h->server, path);
    cu_buf_free(resp);
    cu_buf_init(resp, 64u << 20);
    struct curl_slist *hdrs = NULL;
    for (struct curl_slist *s = h->auth; s; s = s->next)
        hdrs = curl_slist_append(hdrs, s->data);
    hdrs = curl_slist_append(hdrs, "Accept: application/json");
    if (ctype) {
        char ct[128];
        snprintf(ct, sizeof ct, "Content-Type: %s", ctype);
        hdrs = curl_slist_append(hdrs, ct);
    }
    CURL *c = h->curl;
    curl_easy_reset(c);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, resp);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 15L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    if (body) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
    }
    if (h->kc->ca_pem) {
        struct curl_blob blob = { h->kc->ca_pem, strlen(h->kc->ca_pem), CURL_BLOB_COPY };
        curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &blob);
    }
    if (h->kc->insecure) {
        curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    if (h->kc->cert_pem && h->kc->key_pem) {
        struct curl_blob cb = { h->kc->cert_pem, strlen(h->kc->cert_pem), CURL_BLOB_COPY };
        struct curl_blob kb = { h->kc->key_pem, strlen(h->kc->key_pem), CURL_BLOB_COPY };
        curl_easy_setopt(c, CURLOPT_SSLCERT_BLOB, &cb);
        curl_easy_setopt(c, CURLOPT_SSLCERTTYPE, "PEM");
        curl_easy_setopt(c, CURLOPT_SSLKEY_BLOB, &kb);
        curl_easy_setopt(c, CURLOPT_SSLKEYTYPE, "PEM");
    }
    CURLcode cc = curl_easy_perform(c);
    curl_slist_free_all(hdrs);
    if (cc != CURLE_OK) {
        cu_buf_free(resp);
        cu_buf_init(resp, 0);
        cu_buf_puts(resp, curl_easy_strerror(cc));
        return 0;
    }
    long code = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    return code;
}

/* The message of a Status body, or the body itself. Borrows resp; the
 * result lives in out (size n). */
static const char *status_msg(const cu_buf *resp, char *out, size_t n)
{
    json_object *j = cu_json_parse_str(cu_buf_str(resp));
    const char *m = cu_jstr(j, "message");
    snprintf(out, n, "%s", m ? m : cu_buf_str(resp));
    json_object_put(j);
    return out;
}

/* ---------------- creating objects ---------------- */

static const struct {
    const char *kind, *plural;
    int namespaced;
} k_kinds[] = {
    { "Namespace", "namespaces", 0 },
    { "Node", "nodes", 0 },
    { "CustomResourceDefinition", "customresourcedefinitions", 0 },
    { "PriorityClass", "priorityclasses", 0 },
    { "Topology", "topologies", 0 },
    { "ResourceFlavor", "resourceflavors", 0 },
    { "ClusterQueue", "clusterqueues", 0 },
    { "Cohort", "cohorts", 0 },
    { "WorkloadPriorityClass", "workloadpriorityclasses", 0 },
    { "AdmissionCheck", "admissionchecks", 0 },
    { "LocalQueue", "localqueues", 1 },
    { "Workload", "workloads", 1 },
    { "Job", "jobs", 1 },
    { "Pod", "pods", 1 },
    { "ConfigMap", "configmaps", 1 },
    { "Secret", "secrets", 1 },
    { "ServiceAccount", "serviceaccounts", 1 },
    { "Lease", "leases", 1 },
    { "Event", "events", 1 },
};

/* Writes the collection path of obj into out; returns 0, or -1 when
 * apiVersion or kind is missing. */
int cli_dev_collection_path(json_object *obj, char *out, size_t n)
{
    const char *av = cu_jstr(obj, "apiVersion"), *kind = cu_jstr(obj, "kind");
    if (!av || !kind || !*av || !*kind)
        return -1;
    const char *ns = cu_jstr(cu_jget(obj, "metadata"), "namespace");
    char plural[256];
    int namespaced = ns != NULL;
    size_t i;
    for (i = 0; i < sizeof k_kinds / sizeof k_kinds[0]; i++)
        if (strcmp(k_kinds[i].kind, kind) == 0)
            break;
    if (i < sizeof k_kinds / sizeof k_kinds[0]) {
        snprintf(plural, sizeof plural, "%s", k_kinds[i].plural);
        namespaced = k_kinds[i].namespaced;
    } else {
        size_t k = 0;
        for (; kind[k] && k < sizeof plural - 2; k++)
            plural[k] = (char)(kind[k] >= 'A' && kind[k] <= 'Z' ? kind[k] - 'A' + 'a' : kind[k]);
        plural[k++] = 's';
        plural[k] = '\0';
    }
    const char *root = strchr(av, '/') ? "/apis/" : "/api/";
    if (namespaced)
        snprintf(out, n, "%s%s/namespaces/%s/%s", root, av, ns ? ns : "default", plural);
    else
        snprintf(out, n, "%s%s/%s", root, av, plural);
    return 0;
}

typedef struct dev {
    const char *dir, *samples, *crds;
    const char *ext_kc; /* --kubeconfig: an existing cluster, or NULL */
    const char *config; /* --config: the controller's Configuration, or NULL */
    const char *nodes;  /* --nodes: the cluster's Nodes (cueue cluster --nodes), or NULL */
    /* where the webhooks are routed: the controller's namespace and its
     * webhook Service (the install's, or those of --config); no_webhooks
     * when --config turns internal certificate management off */
    char wh_ns[254], wh_svc[254];
    int no_webhooks;
    long duration;
    int quiet;
    char kubeconfig[DEV_PATH_MAX];
    pid_t cluster, controller;
    sigset_t oldmask, waitmask;
    dev_http http;
    json_object *state; /* key -> {"adm":bool,"msg":str,"start":bool,"fin":bool} */
} dev;

static void say(const dev *dv, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(const dev *dv, const char *fmt, ...)
{
    if (dv->quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fflush(stdout);
}

/* Creates one object. Returns 0 on success (or AlreadyExists), -1 with a
 * message on stderr otherwise. */
static int create_obj(dev *dv, const dev_obj *o)
{
    json_object *obj = o->obj;
    const char *kind = cu_jstr(obj, "kind");
    json_object *meta = cu_jget(obj, "metadata");
    const char *name = cu_jstr(meta, "name"), *ns = cu_jstr(meta, "namespace");
    char what[512];
    snprintf(what, sizeof what, "%s %s%s%s", kind ? kind : "(no kind)", ns ? ns : "", ns ? "/" : "",
             name ? name : "(no name)");
    char path[1024];
    if (cli_dev_collection_path(obj, path, sizeof path)) {
        fprintf(stderr, "cueue: dev: %s: %s: apiVersion and kind are required\n", o->where, what);
        return -1;
    }
    /* Server-assigned fields go; the status is written separately. */
    if (meta && json_object_is_type(meta, json_type_object)) {
        json_object_object_del(meta, "uid");
        json_object_object_del(meta, "resourceVersion");
        json_object_object_del(meta, "creationTimestamp");
    }
    json_object *status = cu_jget(obj, "status");
    if (status)
        status = json_object_get(status);
    json_object_object_del(obj, "status");
    if (kind && strcmp(kind, "Job") == 0 &&
        cu_jstr(cu_jget(meta, "labels"), "kueue.x-k8s.io/queue-name")) {
        json_object *spec = cu_jget(obj, "spec");
        if (spec && json_object_is_type(spec, json_type_object))
            json_object_object_add(spec, "suspend", json_object_new_boolean(1));
    }
    cu_buf resp;
    cu_buf_init(&resp, 0);
    char msg[1024];
    int rc = 0;
    long code = http_do(&dv->http, "POST", path, "application/json",
                        json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN), &resp);
    if (code == 409) {
        say(dv, "  %s already exists\n", what);
    } else if (code < 200 || code >= 300) {
        fprintf(stderr, "cueue: dev: %s: %s: creating it failed (%s%ld): %s\n", o->where, what,
                code ? "HTTP " : "", code, status_msg(&resp, msg, sizeof msg));
        rc = -1;
    } else if (status && kind && strcmp(kind, "Workload") == 0 && name) {
        char sp[1200];
        snprintf(sp, sizeof sp, "%s/%s/status", path, name);
        json_object *patch = json_object_new_object();
        json_object_object_add(patch, "status", json_object_get(status));
        code = http_do(&dv->http, "PATCH", sp, "application/merge-patch+json",
                       json_object_to_json_string_ext(patch, JSON_C_TO_STRING_PLAIN), &resp);
        json_object_put(patch);
        if (code < 200 || code >= 300) {
            fprintf(stderr, "cueue: dev: %s: %s: writing its status failed (%s%ld): %s\n", o->where,
                    what, code ? "HTTP " : "", code, status_msg(&resp, msg, sizeof msg));
            rc = -1;
        }
    }
    json_object_put(status);
    cu_buf_free(&resp);
    return rc;
}

/* 1 when the discovery document resp (of /apis/GROUP/VERSION) lists the
 * resource plural. */
static int discovery_lists(const cu_buf *resp, const char *plural)
{
    json_object *doc = cu_json_parse_str(resp->data ? resp->data : "");
    json_object *res = cu_jget(doc, "resources");
    int found = 0;
    for (size_t i = 0, n = cu_jarr_len(res); i < n && !found; i++) {
        const char *name = cu_jstr(json_object_array_get_idx(res, i), "name");
        found = name && strcmp(name, plural) == 0;
    }
    json_object_put(doc);
    return found;
}

/* Waits until every CRD in l is served: its group/version's discovery
 * lists its resource (at most 10 s each). A real API server serves a
 * group/version as soon as one of its CRDs is established, before the
 * others of the group are. */
static void wait_crds_served(dev *dv, const dev_objs *l)
{
    cu_buf resp;
    cu_buf_init(&resp, 0);
    for (size_t i = 0; i < l->n; i++) {
        json_object *spec = cu_jget(l->items[i].obj, "spec");
        const char *group = cu_jstr(spec, "group");
        json_object *vers = cu_jget(spec, "versions");
        if (!group || !vers || !json_object_is_type(vers, json_type_array) ||
            json_object_array_length(vers) == 0)
            continue;
        const char *v = cu_jstr(json_object_array_get_idx(vers, 0), "name");
        const char *plural = cu_jpath_str(spec, "names.plural");
        if (!v || !plural)
            continue;
        char path[512];
        snprintf(path, sizeof path, "/apis/%s/%s", group, v);
        for (int t = 0; t < 100; t++) {
            if (http_do(&dv->http, "GET", path, NULL, NULL, &resp) == 200 &&
                discovery_lists(&resp, plural))
                break;
            struct timespec ts = { 0, 100 * 1000000L };
            nanosleep(&ts, NULL);
        }
    }
    cu_buf_free(&resp);
}

/* ---------------- processes ---------------- */

/* Starts this binary with args, stdout and stderr to logfile, in its own
 * process group with the original signal mask. Returns the pid or -1. */
static pid_t spawn(dev *dv, char *const args[], const char *logfile)
{
    int fd = open(logfile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        fprintf(stderr, "cueue: dev: %s: %s\n", logfile, strerror(errno));
        return -1;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        sigprocmask(SIG_SETMASK, &dv->oldmask, NULL);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0)
            dup2(devnull, 0);
        dup2(fd, 1);
        dup2(fd, 2);
        execv("/proc/self/exe", args);
        fprintf(stderr, "cueue: dev: cannot run /proc/self/exe: %s\n", strerror(errno));
        _exit(127);
    }
    close(fd);
    if (pid < 0)
        fprintf(stderr, "cueue: dev: fork: %s\n", strerror(errno));
    return pid;
}

/* SIGTERM, then SIGKILL after 10 s. */
static void stop_child(dev *dv, pid_t *pid, const char *what)
{
    if (*pid <= 0)
        return;
    kill(*pid, SIGTERM);
    for (int i = 0; i < 200; i++) {
        if (waitpid(*pid, NULL, WNOHANG) == *pid) {
            *pid = -1;
            return;
        }
        struct timespec ts = { 0, 50 * 1000000L };
        nanosleep(&ts, NULL);
    }
    fprintf(stderr, "cueue: dev: the %s did not stop within 10 s; killing it\n", what);
    kill(*pid, SIGKILL);
    waitpid(*pid, NULL, 0);
    *pid = -1;
    (void)dv;
}

/* Returns 1 if a child has exited (reported on stderr), else 0. */
static int child_died(dev *dv)
{
    pid_t *pids[2] = { &dv->cluster, &dv->controller };
    const char *names[2] = { "cluster", "controller" };
    for (int i = 0; i < 2; i++) {
        int st;
        if (*pids[i] > 0 && waitpid(*pids[i], &st, WNOHANG) == *pids[i]) {
            *pids[i] = -1;
            if (WIFEXITED(st))
                fprintf(stderr, "cueue: dev: the %s exited with status %d; see %s/%s.log\n",
                        names[i], WEXITSTATUS(st), dv->dir, names[i]);
            else
                fprintf(stderr, "cueue: dev: the %s was killed by signal %d; see %s/%s.log\n",
                        names[i], WIFSIGNALED(st) ? WTERMSIG(st) : 0, dv->dir, names[i]);
            return 1;
        }
    }
    return 0;
}

/* Sleeps up to ms; returns 1 if SIGINT or SIGTERM arrived. */
static int wait_signal(dev *dv, long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    int s = sigtimedwait(&dv->waitmask, NULL, &ts);
    return s == SIGINT || s == SIGTERM;
}

/* ---------------- watching ---------------- */

static json_object *cond(json_object *o, const char *type)
{
    json_object *cs = cu_jget(cu_jget(o, "status"), "conditions");
    if (!cs || !json_object_is_type(cs, json_type_array))
        return NULL;
    for (size_t i = 0; i < json_object_array_length(cs); i++) {
        json_object *c = json_object_array_get_idx(cs, i);
        const char *t = cu_jstr(c, "type");
        if (t && strcmp(t, type) == 0)
            return c;
    }
    return NULL;
}

static int cond_true(json_object *o, const char *type)
{
    const char *s = cu_jstr(cond(o, type), "status");
    return s && strcmp(s, "True") == 0;
}

/* The state entry of key (created on first use). Borrowed from dv->state. */
static json_object *st_get(dev *dv, const char *key)
{
    json_object *s = cu_jget(dv->state, key);
    if (!s) {
        s = json_object_new_object();
        json_object_object_add(dv->state, key, s);
    }
    return s;
}

static int st_flag(json_object *s, const char *k)
{
    json_object *v = cu_jget(s, k);
    return v && json_object_get_boolean(v);
}

static void st_set(json_object *s, const char *k, int v)
{
    json_object_object_add(s, k, json_object_new_boolean(v));
}

static void out_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void out_line(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
}

/* "flavors a, b" from the admission (distinct names, in order), plus
 * "; N of M pods" for a partial admission. */
void cli_dev_describe_admission(json_object *wl, char *out, size_t n)
{
    json_object *psa = cu_jget(cu_jget(cu_jget(wl, "status"), "admission"), "podSetAssignments");
    size_t off = 0;
    long assigned = 0, wanted = 0;
    const char *seen[32];
    size_t nseen = 0;
    out[0] = '\0';
    off += (size_t)snprintf(out, n, "flavors ");
    size_t base = off;
    for (size_t i = 0;
         psa && json_object_is_type(psa, json_type_array) && i < json_object_array_length(psa);
         i++) {
        json_object *a = json_object_array_get_idx(psa, i);
        json_object *cnt = cu_jget(a, "count");
        assigned += cnt ? json_object_get_int(cnt) : 0;
        json_object *fl = cu_jget(a, "flavors");
        if (!fl || !json_object_is_type(fl, json_type_object))
            continue;
        json_object_object_foreach (fl, res, fv) {
            (void)res;
            const char *f = json_object_get_string(fv);
            if (!f || off >= n)
                continue;
            int dup = 0;
            for (size_t k = 0; k < nseen && !dup; k++)
                dup = strcmp(seen[k], f) == 0;
            if (dup || nseen == sizeof seen / sizeof seen[0])
                continue;
            seen[nseen++] = f;
            if (!dup)
                off += (size_t)snprintf(out + off, n - off, "%s%s", off > base ? ", " : "", f);
        }
    }
    if (off == base)
        snprintf(out + base, n - base, "none");
    json_object *ps = cu_jget(cu_jget(wl, "spec"), "podSets");
    for (size_t i = 0;
         ps && json_object_is_type(ps, json_type_array) && i < json_object_array_length(ps); i++) {
        json_object *cnt = cu_jget(json_object_array_get_idx(ps, i), "count");
        wanted += cnt ? json_object_get_int(cnt) : 1;
    }
    off = strlen(out);
    if (assigned && wanted && assigned != wanted && off < n)
        snprintf(out + off, n - off, "; %ld of %ld pods", assigned, wanted);
}

/* Name shown for a Workload: "ns/JOB" when a Job owns it, else
 * "Workload ns/name". *job_owned tells which. */
void cli_dev_wl_display(json_object *wl, char *out, size_t n, int *job_owned)
{
    json_object *meta = cu_jget(wl, "metadata");
    const char *ns = cu_jstr(meta, "namespace"), *name = cu_jstr(meta, "name");
    json_object *refs = cu_jget(meta, "ownerReferences");
    *job_owned = 0;
    for (size_t i = 0;
         refs && json_object_is_type(refs, json_type_array) && i < json_object_array_length(refs);
         i++) {
        json_object *r = json_object_array_get_idx(refs, i);
        const char *k = cu_jstr(r, "kind"), *rn = cu_jstr(r, "name");
        if (k && rn && strcmp(k, "Job") == 0) {
            snprintf(out, n, "%s/%s", ns ? ns : "", rn);
            *job_owned = 1;
            return;
        }
    }
    snprintf(out, n, "Workload %s/%s", ns ? ns : "", name ? name : "");
}

static void see_workload(dev *dv, json_object *wl, json_object *seen)
{
    json_object *meta = cu_jget(wl, "metadata");
    char key[600], disp[600];
    snprintf(key, sizeof key, "wl:%s/%s",
             cu_jstr(meta, "namespace") ? cu_jstr(meta, "namespace") : "",
             cu_jstr(meta, "name") ? cu_jstr(meta, "name") : "");
    json_object_object_add(seen, key, json_object_new_boolean(1));
    int job_owned;
    cli_dev_wl_display(wl, disp, sizeof disp, &job_owned);
    json_object *s = st_get(dv, key);
    json_object *adm = cu_jget(cu_jget(wl, "status"), "admission");
    int holds = adm && cond_true(wl, "QuotaReserved");
    if (holds && !st_flag(s, "adm")) {
        char fl[1024];
        cli_dev_describe_admission(wl, fl, sizeof fl);
        const char *cq = cu_jstr(adm, "clusterQueue");
        out_line("admitted %s to ClusterQueue %s (%s)", disp, cq ? cq : "?", fl);
        st_set(s, "adm", 1);
        json_object_object_del(s, "msg");
    } else if (!holds && st_flag(s, "adm")) {
        st_set(s, "adm", 0);
        json_object *ev = cond(wl, "Evicted");
        if (ev && cond_true(wl, "Evicted"))
            out_line("evicted %s: %s", disp, cu_jstr(ev, "message") ? cu_jstr(ev, "message") : "");
    }
    if (!holds && !cond_true(wl, "Finished")) {
        json_object *qr = cond(wl, "QuotaReserved");
        const char *status = cu_jstr(qr, "status"), *msg = cu_jstr(qr, "message");
        const char *last = cu_jstr(s, "msg");
        if (qr && status && strcmp(status, "False") == 0 && msg && (!last || strcmp(last, msg))) {
            out_line("waiting %s: %s", disp, msg);
            json_object_object_add(s, "msg", json_object_new_string(msg));
        }
    }
    if (!job_owned && cond_true(wl, "Finished") && !st_flag(s, "fin")) {
        const char *r = cu_jstr(cond(wl, "Finished"), "reason");
        out_line("finished %s (%s)", disp, r ? r : "Finished");
        st_set(s, "fin", 1);
    }
}

static void see_job(dev *dv, json_object *job, json_object *seen)
{
    json_object *meta = cu_jget(job, "metadata");
    char key[600];
    const char *disp;
    snprintf(key, sizeof key, "job:%s/%s",
             cu_jstr(meta, "namespace") ? cu_jstr(meta, "namespace") : "",
             cu_jstr(meta, "name") ? cu_jstr(meta, "name") : "");
    disp = key + 4;
    json_object_object_add(seen, key, json_object_new_boolean(1));
    json_object *s = st_get(dv, key);
    json_object *spec = cu_jget(job, "spec"), *status = cu_jget(job, "status");
    json_object *susp = cu_jget(spec, "suspend");
    int suspended = susp && json_object_get_boolean(susp);
    json_object *active = cu_jget(status, "active");
    if (!suspended &&
        (cu_jget(status, "startTime") || (active && json_object_get_int(active) > 0)) &&
        !st_flag(s, "start")) {
        out_line("started %s", disp);
        st_set(s, "start", 1);
    }
    if (suspended && st_flag(s, "start") && !st_flag(s, "fin")) {
        out_line("suspended %s", disp);
        st_set(s, "start", 0);
    }
    if (!st_flag(s, "fin")) {
        if (cond_true(job, "Complete")) {
            out_line("finished %s (Succeeded)", disp);
            st_set(s, "fin", 1);
        } else if (cond_true(job, "Failed")) {
            const char *m = cu_jstr(cond(job, "Failed"), "message");
            out_line("finished %s (Failed%s%s)", disp, m ? ": " : "", m ? m : "");
            st_set(s, "fin", 1);
        }
    }
}

/* Lists path and feeds every item to fn. Returns 0, or -1 (warned once
 * per failure streak through *warned). */
static int poll_list(dev *dv, const char *path, void (*fn)(dev *, json_object *, json_object *),
                     json_object *seen, int *warned)
{
    cu_buf resp;
    cu_buf_init(&resp, 0);
    long code = http_do(&dv->http, "GET", path, NULL, NULL, &resp);
    json_object *list = code == 200 ? cu_json_parse_str(cu_buf_str(&resp)) : NULL;
    json_object *items = cu_jget(list, "items");
    int rc = 0;
    if (!items || !json_object_is_type(items, json_type_array)) {
        if (!*warned) {
            char msg[512];
            fprintf(stderr, "cueue: dev: listing %s failed (%s%ld): %s\n", path,
                    code ? "HTTP " : "", code, status_msg(&resp, msg, sizeof msg));
        }
        *warned = 1;
        rc = -1;
    } else {
        *warned = 0;
        for (size_t i = 0; i < json_object_array_length(items); i++)
            fn(dv, json_object_array_get_idx(items, i), seen);
    }
    json_object_put(list);
    cu_buf_free(&resp);
    return rc;
}

static void poll_once(dev *dv, int *warned)
{
    json_object *seen = json_object_new_object();
    int ok = poll_list(dv, "/apis/kueue.x-k8s.io/v1beta2/workloads", see_workload, seen,
                       &warned[0]) == 0;
    ok = poll_list(dv, "/apis/batch/v1/jobs", see_job, seen, &warned[1]) == 0 && ok;
    if (ok) {
        /* forget what is gone; say so for Jobs */
        char **gone = NULL;
        size_t ng = 0;
        json_object_object_foreach (dv->state, k, v) {
            (void)v;
            if (!cu_jget(seen, k)) {
                char **p = realloc(gone, (ng + 1) * sizeof(*p));
                if (!p)
                    break;
                gone = p;
                gone[ng++] = strdup(k);
            }
        }
        for (size_t i = 0; i < ng; i++) {
            if (gone[i] && strncmp(gone[i], "job:", 4) == 0)
                out_line("deleted %s", gone[i] + 4);
            if (gone[i])
                json_object_object_del(dv->state, gone[i]);
            free(gone[i]);
        }
        free(gone);
    }
    json_object_put(seen);
}

/* ---------------- main ---------------- */

/* A free port of 127.0.0.1 (0 when none): the controller's visibility
 * API listens there. */
static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0), port = 0;
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t sl = sizeof(sa);
    if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
        getsockname(fd, (struct sockaddr *)&sa, &sl) == 0)
        port = ntohs(sa.sin_port);
    if (fd >= 0)
        close(fd);
    return port;
}

/* Kueue's visibility API through the cluster: the Service
 * default/visibility-server (ExternalName localhost, the controller's
 * port) and the APIService v1beta2.visibility.kueue.x-k8s.io naming it
 * (docs/cluster.md, "Aggregated APIs"). */
static void register_visibility(dev *dv, int port)
{
    char text[1024];
    snprintf(text, sizeof text,
             "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":"
             "\"visibility-server\",\"namespace\":\"default\"},\"spec\":{\"type\":"
             "\"ExternalName\",\"externalName\":\"localhost\",\"ports\":[{\"name\":"
             "\"https\",\"port\":%d}]}}",
             port);
    json_object *svc = cu_json_parse_str(text);
    snprintf(text, sizeof text,
             "{\"apiVersion\":\"apiregistration.k8s.io/v1\",\"kind\":\"APIService\","
             "\"metadata\":{\"name\":\"v1beta2.visibility.kueue.x-k8s.io\"},\"spec\":{"
             "\"group\":\"visibility.kueue.x-k8s.io\",\"version\":\"v1beta2\","
             "\"groupPriorityMinimum\":100,\"versionPriority\":100,"
             "\"insecureSkipTLSVerify\":true,\"service\":{\"namespace\":\"default\","
             "\"name\":\"visibility-server\",\"port\":%d}}}",
             port);
    json_object *as = cu_json_parse_str(text);
    dev_obj objs[2] = { { svc, "cueue dev" }, { as, "cueue dev" } };
    for (int i = 0; i < 2; i++)
        if (objs[i].obj)
            create_obj(dv, &objs[i]);
    json_object_put(svc);
    json_object_put(as);
}

/* The namespace and Service of the webhooks in `cueue dev`: those of
 * dist/install.yaml, so that the CRDs' conversion section (crds/) reaches
 * the controller as on a real install. */
#define DEV_WH_NS "cueue-system"
#define DEV_WH_SVC "cueue-webhook-service"

/* One webhook configuration of kind (Mutating/ValidatingWebhookConfiguration)
 * with the hooks of cu_wh_hooks() that are (not) mutating, each calling the
 * Service DEV_WH_SVC, as config/webhook/ declares them; the controller puts
 * its CA in (internalCertManagement). New object. */
static json_object *dev_webhook_config(const dev *dv, const char *kind, const char *name,
                                       int mutating)
{
    json_object *o = json_object_new_object(), *md = json_object_new_object();
    json_object *hooks = json_object_new_array();
    json_object_object_add(o, "apiVersion",
                           json_object_new_string("admissionregistration.k8s.io/v1"));
    json_object_object_add(o, "kind", json_object_new_string(kind));
    json_object_object_add(md, "name", json_object_new_string(name));
    json_object_object_add(o, "metadata", md);
    size_t n;
    const cu_wh_hook *h = cu_wh_hooks(&n);
    static const char *const opn[] = { "CREATE", "UPDATE", "DELETE", "CONNECT" };
    for (size_t i = 0; i < n; i++) {
        if (h[i].mutating != mutating)
            continue;
        char cfg[2048];
        snprintf(cfg, sizeof cfg,
                 "{\"name\":\"%s\",\"admissionReviewVersions\":[\"v1\"],\"sideEffects\":"
                 "\"None\",\"failurePolicy\":\"Fail\",\"timeoutSeconds\":10,"
                 "\"clientConfig\":{\"service\":{\"namespace\":\"%s\",\"name\":"
                 "\"%s\",\"path\":\"%s\",\"port\":443}},\"namespaceSelector\":"
                 "{\"matchExpressions\":[{\"key\":\"kubernetes.io/metadata.name\",\"operator\":"
                 "\"NotIn\",\"values\":[\"kube-system\",\"%s\"]}]}}",
                 h[i].name, dv->wh_ns, dv->wh_svc, h[i].path, dv->wh_ns);
        json_object *w = cu_json_parse_str(cfg);
        if (!w)
            continue;
        json_object *rule = json_object_new_object(), *v = json_object_new_array();
        json_object_array_add(v, json_object_new_string(h[i].group));
        json_object_object_add(rule, "apiGroups", v);
        v = json_object_new_array();
        json_object_array_add(v, json_object_new_string(h[i].version));
        json_object_object_add(rule, "apiVersions", v);
        v = json_object_new_array();
        for (unsigned k = 0; k < 4; k++)
            if (h[i].ops & (1u << k))
                json_object_array_add(v, json_object_new_string(opn[k]));
        json_object_object_add(rule, "operations", v);
        size_t nr;
        const char *const *res = cu_wh_hook_resources(&h[i], &nr);
        v = json_object_new_array();
        for (size_t k = 0; k < nr; k++)
            json_object_array_add(v, json_object_new_string(res[k]));
        json_object_object_add(rule, "resources", v);
        json_object *rules = json_object_new_array();
        json_object_array_add(rules, rule);
        json_object_object_add(w, "rules", rules);
        json_object_array_add(hooks, w);
    }
    json_object_object_add(o, "webhooks", hooks);
    return o;
}

/* Routes Cueue's webhooks to the controller at 127.0.0.1:port as a real
 * install routes them to its pods: the Namespace, the Service DEV_WH_SVC
 * with an EndpointSlice on loopback, and the two webhook configurations
 * (Jobs created unsuspended are then suspended, bad objects refused, and
 * v1beta1 is converted, once the controller serves). */
static void register_webhooks(dev *dv, int port)
{
    char text[2048];
    json_object *objs[5];
    snprintf(text, sizeof text,
             "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\"}}",
             dv->wh_ns);
    objs[0] = cu_json_parse_str(text);
    snprintf(text, sizeof text,
             "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"%s\"},\"spec\":{\"ports\":[{\"name\":\"https\",\"port\":443,"
             "\"targetPort\":9443}]}}",
             dv->wh_svc, dv->wh_ns);
    objs[1] = cu_json_parse_str(text);
    snprintf(text, sizeof text,
             "{\"apiVersion\":\"discovery.k8s.io/v1\",\"kind\":\"EndpointSlice\",\"metadata\":"
             "{\"name\":\"%s-dev\",\"namespace\":\"%s\",\"labels\":"
             "{\"kubernetes.io/service-name\":\"%s\"}},\"addressType\":\"IPv4\","
             "\"endpoints\":[{\"addresses\":[\"127.0.0.1\"]}],\"ports\":[{\"name\":\"https\","
             "\"port\":%d}]}",
             dv->wh_svc, dv->wh_ns, dv->wh_svc, port);
    objs[2] = cu_json_parse_str(text);
    objs[3] = dev_webhook_config(dv, "MutatingWebhookConfiguration",
                                 "cueue-mutating-webhook-configuration", 1);
    objs[4] = dev_webhook_config(dv, "ValidatingWebhookConfiguration",
                                 "cueue-validating-webhook-configuration", 0);
    for (int i = 0; i < 5; i++) {
        dev_obj o = { objs[i], "cueue dev" };
        if (objs[i])
            create_obj(dv, &o);
        json_object_put(objs[i]);
    }
}

/* Waits (at most 20 s) until the controller has put its CA into the
 * mutating webhook configuration, so that the first Job of the user meets
 * a webhook that answers. Returns 1 when it has. */
static int wait_webhooks(dev *dv)
{
    cu_buf resp;
    cu_buf_init(&resp, 0);
    int ok = 0;
    for (int i = 0; i < 80 && !ok; i++) {
        long code = http_do(&dv->http, "GET",
                            "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/"
                            "cueue-mutating-webhook-configuration",
                            NULL, NULL, &resp);
        json_object *j = code == 200 ? cu_json_parse_str(cu_buf_str(&resp)) : NULL;
        json_object *w = cu_jget(j, "webhooks");
        json_object *w0 = cu_jarr_len(w) ? json_object_array_get_idx(w, 0) : NULL;
        const char *ca = cu_jpath_str(w0, "clientConfig.caBundle");
        ok = ca && *ca;
        json_object_put(j);
        if (!ok && wait_signal(dv, 250))
            break;
    }
    cu_buf_free(&resp);
    return ok;
}

static int usage(const char *fmt, const char *arg)
{
    fputs("cueue: dev: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs("\nTry 'cueue dev --help'.\n", stderr);
    return 2;
}

/* Starts the cluster and waits for its kubeconfig. Returns 0, 1 (failed)
 * or 3 (interrupted). */
static int start_cluster(dev *dv)
{
    char log[DEV_PATH_MAX];
    snprintf(log, sizeof log, "%s/cluster.log", dv->dir);
    unlink(dv->kubeconfig);
    char *args[] = { "cueue",        "cluster", "--listen", "127.0.0.1:0", "--kubeconfig-out",
                     dv->kubeconfig, NULL,      NULL,       NULL };
    if (dv->nodes) {
        args[6] = "--nodes";
        args[7] = (char *)dv->nodes;
    }
    dv->cluster = spawn(dv, args, log);
    if (dv->cluster < 0)
        return 1;
    int64_t end = cu_clock_mono_ms() + DEV_START_TIMEOUT_S * 1000;
    while (cu_clock_mono_ms() < end) {
        struct stat st;
        if (stat(dv->kubeconfig, &st) == 0 && st.st_size > 0)
            return 0;
        if (child_died(dv))
            return 1;
        if (wait_signal(dv, 100))
            return 3;
    }
    fprintf(stderr, "cueue: dev: the cluster wrote no kubeconfig within %d s; see %s\n",
            DEV_START_TIMEOUT_S, log);
    return 1;
}

static int apply_all(dev *dv, const dev_objs *l, const char *what)
{
    int fails = 0;
    for (size_t i = 0; i < l->n; i++)
        if (create_obj(dv, &l->items[i]))
            fails++;
    say(dv, "cueue dev: created %zu of %zu objects of %s\n", l->n - (size_t)fails, l->n, what);
    return fails;
}

int cu_dev_main(int argc, char **argv)
{
    enum { O_DIR = 256, O_SAMPLES, O_CRDS, O_DURATION, O_QUIET, O_KUBECONFIG, O_CONFIG, O_NODES };
    static const struct option opts[] = {
        { "dir", required_argument, NULL, O_DIR },
        { "samples", required_argument, NULL, O_SAMPLES },
        { "crds", required_argument, NULL, O_CRDS },
        { "duration", required_argument, NULL, O_DURATION },
        { "quiet", no_argument, NULL, O_QUIET },
        { "kubeconfig", required_argument, NULL, O_KUBECONFIG },
        { "config", required_argument, NULL, O_CONFIG },
        { "nodes", required_argument, NULL, O_NODES },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    dev dv;
    memset(&dv, 0, sizeof dv);
    dv.dir = "cueue-dev";
    snprintf(dv.wh_ns, sizeof dv.wh_ns, "%s", DEV_WH_NS);
    snprintf(dv.wh_svc, sizeof dv.wh_svc, "%s", DEV_WH_SVC);
    dv.samples = "config/samples";
    dv.crds = "crds";
    dv.duration = -1;
    dv.cluster = dv.controller = -1;
    int ch;
    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (ch) {
        case O_DIR: dv.dir = optarg; break;
        case O_SAMPLES: dv.samples = optarg; break;
        case O_CRDS: dv.crds = optarg; break;
        case O_QUIET: dv.quiet = 1; break;
        case O_KUBECONFIG: dv.ext_kc = optarg; break;
        case O_CONFIG: dv.config = optarg; break;
        case O_NODES: dv.nodes = optarg; break;
        case O_DURATION: {
            char *end;
            errno = 0;
            long v = strtol(optarg, &end, 10);
            if (errno || end == optarg || *end || v < 1 || v > 100000000L)
                return usage("--duration needs a positive number of seconds, got '%s'", optarg);
            dv.duration = v;
            break;
        }
        case 'h': fputs(dev_help, stdout); return 0;
        case ':': return usage("option '%s' needs a value", argv[optind - 1]);
        default: return usage("unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return usage("unexpected argument '%s'", argv[optind]);
    if (!*dv.dir)
        return usage("--dir needs a folder%s", "");
    if (strlen(dv.dir) > DEV_PATH_MAX - 64)
        return usage("--dir: path too long: '%s'", dv.dir);
    if (dv.ext_kc && (!*dv.ext_kc || strlen(dv.ext_kc) >= DEV_PATH_MAX))
        return usage("--kubeconfig needs a file, got '%s'", dv.ext_kc);
    if (dv.nodes && (!*dv.nodes || dv.ext_kc))
        return usage("--nodes needs a file and the embedded cluster (not --kubeconfig), got '%s'",
                     dv.nodes);

    /* Read everything first: a bad Configuration or bad manifests start
     * nothing. */
    if (dv.config && !*dv.config)
        return usage("--config needs a file%s", "");
    if (dv.config) {
        cu_world cw;
        cu_world_init(&cw);
        const cu_config *cf = cu_controller_load_config(&cw, dv.config, "dev");
        int ok = cf != NULL;
        if (cf) {
            snprintf(dv.wh_ns, sizeof dv.wh_ns, "%s", cf->ns ? cf->ns : "kueue-system");
            snprintf(dv.wh_svc, sizeof dv.wh_svc, "%s",
                     cf->cert_mgmt.service_name ? cf->cert_mgmt.service_name
                                                : "kueue-webhook-service");
            dv.no_webhooks = !cf->cert_mgmt.enable;
        }
        cu_world_free(&cw);
        if (!ok)
            return 2;
    }
    dev_objs crds = { 0 }, samples = { 0 };
    int rc = cli_dev_load_path(&crds, dv.crds);
    if (!rc)
        rc = cli_dev_load_path(&samples, dv.samples);
    if (rc) {
        cli_dev_objs_free(&crds);
        cli_dev_objs_free(&samples);
        return rc;
    }
    if (mkdir(dv.dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "cueue: dev: %s: %s\n", dv.dir, strerror(errno));
        cli_dev_objs_free(&crds);
        cli_dev_objs_free(&samples);
        return 1;
    }
    if (dv.ext_kc)
        snprintf(dv.kubeconfig, sizeof dv.kubeconfig, "%s", dv.ext_kc);
    else
        snprintf(dv.kubeconfig, sizeof dv.kubeconfig, "%s/kubeconfig", dv.dir);
    setvbuf(stdout, NULL, _IOLBF, 0);

    sigemptyset(&dv.waitmask);
    sigaddset(&dv.waitmask, SIGINT);
    sigaddset(&dv.waitmask, SIGTERM);
    sigaddset(&dv.waitmask, SIGCHLD);
    sigprocmask(SIG_BLOCK, &dv.waitmask, &dv.oldmask);
    dv.state = json_object_new_object();
    int64_t deadline = dv.duration > 0 ? cu_clock_mono_ms() + dv.duration * 1000 : 0;
    cu_diag d;
    cu_diag_init(&d);

    if (dv.ext_kc) {
        say(&dv, "cueue dev: using the cluster of %s\n", dv.kubeconfig);
        rc = 0;
    } else {
        say(&dv, "cueue dev: starting the cluster (log: %s/cluster.log)\n", dv.dir);
        rc = start_cluster(&dv);
    }
    if (rc == 3) {
        rc = 0;
        goto out;
    }
    if (rc)
        goto out;
    dv.http.kc = cu_kconfig_load(dv.kubeconfig, NULL, &d);
    dv.http.curl = dv.http.kc ? curl_easy_init() : NULL;
    if (!dv.http.kc || !dv.http.curl) {
        for (size_t i = 0; i < d.n; i++)
            fprintf(stderr, "cueue: dev: %s\n", d.msgs[i]);
        if (dv.http.kc)
            fprintf(stderr, "cueue: dev: cannot start libcurl\n");
        rc = 1;
        goto out;
    }
    dv.http.server = strdup(dv.http.kc->server);
    if (dv.http.server) {
        size_t sl = strlen(dv.http.server);
        if (sl && dv.http.server[sl - 1] == '/')
            dv.http.server[sl - 1] = '\0';
    }
    {
        /* a static token, a token file or an exec plugin's, read once */
        const char *t = cu_kconfig_token(dv.http.kc, cu_clock_wall_ms(), &d);
        if (t) {
            size_t tl = strlen(t) + 32;
            char *tok = malloc(tl);
            if (tok) {
                snprintf(tok, tl, "Authorization: Bearer %s", t);
                dv.http.auth = curl_slist_append(NULL, tok);
            }
            free(tok);
        }
    }
    say(&dv, "cueue dev: cluster serving %s\n", dv.http.server ? dv.http.server : "?");
    if (apply_all(&dv, &crds, dv.crds)) {
        fprintf(stderr, "cueue: dev: the CRDs could not all be created; stopping\n");
        rc = 1;
        goto out;
    }
    wait_crds_served(&dv, &crds);
    if (apply_all(&dv, &samples, dv.samples))
        fprintf(stderr,
                "cueue: dev: some objects of %s were not created (see above); "
                "going on with the others\n",
                dv.samples);
    {
        char log[DEV_PATH_MAX], vis[64];
        snprintf(log, sizeof log, "%s/controller.log", dv.dir);
        int vport = free_port();
        snprintf(vis, sizeof vis, "127.0.0.1:%d", vport);
        if (vport)
            register_visibility(&dv, vport);
        /* the webhooks, as dist/install.yaml routes them; without a
         * Configuration of the user's, one with the install's namespace and
         * certificate names, so that the certificate the controller makes
         * is valid for the Service the configurations call */
        char wh[64], wcfg[DEV_PATH_MAX], wdir[DEV_PATH_MAX];
        /* not on a cluster of the user's (--kubeconfig): configurations
         * that outlive this run, failing every create they match, are no
         * trial's business there */
        int wport = dv.ext_kc || dv.no_webhooks ? 0 : free_port();
        snprintf(wh, sizeof wh, "127.0.0.1:%d", wport);
        snprintf(wdir, sizeof wdir, "%s/webhook-certs", dv.dir);
        const char *config = dv.config;
        if (!config && wport) {
            snprintf(wcfg, sizeof wcfg, "%s/controller-config.yaml", dv.dir);
            FILE *f = fopen(wcfg, "w");
            if (f) {
                fputs("# written by cueue dev: the namespace and webhook names of "
                      "dist/install.yaml\n"
                      "apiVersion: config.kueue.x-k8s.io/v1beta2\n"
                      "kind: Configuration\n"
                      "namespace: " DEV_WH_NS "\n"
                      "internalCertManagement:\n"
                      "  enable: true\n"
                      "  webhookServiceName: " DEV_WH_SVC "\n"
                      "  webhookSecretName: cueue-webhook-server-cert\n",
                      f);
                if (fclose(f) == 0)
                    config = wcfg;
            }
        }
        if (wport)
            register_webhooks(&dv, wport);
        char *args[] = { "cueue",
                         "controller",
                         "--kubeconfig",
                         dv.kubeconfig,
                         "--visibility-bind-address",
                         vport ? vis : "0",
                         "--webhook-bind-address",
                         wport ? wh : "0",
                         "--webhook-cert-dir",
                         wdir,
                         config ? "--config" : NULL,
                         (char *)config,
                         NULL };
        say(&dv, "cueue dev: starting the controller (log: %s)\n", log);
        dv.controller = spawn(&dv, args, log);
        if (dv.controller < 0) {
            rc = 1;
            goto out;
        }
        if (wport && !wait_webhooks(&dv))
            fprintf(stderr,
                    "cueue: dev: the controller has not put its CA into the webhook "
                    "configurations yet; creates of Jobs and Kueue objects may fail "
                    "until it has (see %s)\n",
                    log);
    }
    say(&dv,
        "\nTry, in another terminal:\n"
        "  kubectl --kubeconfig %s get workloads -A\n"
        "  kubectl --kubeconfig %s get clusterqueues,jobs -A\n"
        "  kubectl --kubeconfig %s get --raw /apis/visibility.kueue.x-k8s.io/v1beta2/"
        "clusterqueues/CQ/pendingworkloads\n"
        "  kubectl --kubeconfig %s apply -f my-job.yaml   "
        "# suspend: true, label kueue.x-k8s.io/queue-name\n"
        "Ctrl-C stops everything.\n\n",
        dv.kubeconfig, dv.kubeconfig, dv.kubeconfig, dv.kubeconfig);

    int warned[2] = { 0, 0 };
    for (;;) {
        poll_once(&dv, warned);
        if (child_died(&dv)) {
            rc = 1;
            break;
        }
        long wait = 1000;
        if (deadline) {
            int64_t left = deadline - cu_clock_mono_ms();
            if (left <= 0)
                break;
            if (left < wait)
                wait = (long)left;
        }
        if (wait_signal(&dv, wait))
            break;
    }
out:
    if (dv.controller > 0 || dv.cluster > 0)
        say(&dv, "cueue dev: stopping\n");
    stop_child(&dv, &dv.controller, "controller");
    stop_child(&dv, &dv.cluster, "cluster");
    if (dv.http.curl)
        curl_easy_cleanup(dv.http.curl);
    curl_slist_free_all(dv.http.auth);
    free(dv.http.server);
    cu_kconfig_free(dv.http.kc);
    json_object_put(dv.state);
    cu_diag_free(&d);
    cli_dev_objs_free(&crds);
    cli_dev_objs_free(&samples);
    sigprocmask(SIG_SETMASK, &dv.oldmask, NULL);
    return rc;
}
