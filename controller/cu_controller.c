/*
 * cu_controller.c - `cueue controller`: informers, the Job integration,
 * the admission cycle and the writes.
 *
 * State. Every watched object is decoded at the informer boundary into a
 * record of C structs (a one-object cu_world in a small arena, or for a
 * Job a handful of fields and the text of the Workload it needs); no
 * JSON tree is kept. Records live in one hash map per resource.
 *
 * The engine is long-lived. It is rebuilt (from the records, in memory)
 * only when a queue-shaping object changes (ResourceFlavor, ClusterQueue,
 * Cohort, LocalQueue, priority classes, Namespaces), when leadership is
 * gained, or when removed workloads pile up; never while an admission is
 * written but not yet seen back, so a rebuild cannot forget quota.
 * Workload events are applied incrementally: a new Workload is added, a
 * Finished or deleted one is removed, an eviction whose Job stopped is
 * completed, and anything the engine did not expect (an admission made or
 * cleared by someone else) replaces the engine's copy.
 *
 * Writes. An admission is assumed at once (the engine counts it), written
 * with a resourceVersion precondition, confirmed by the watch, and undone
 * if the write fails. Every other write is "desired state, retried until
 * observed": the reconcilers compare what they see with what should be and
 * send one request per object at a time.
 */

#include "cu_ctrl_int.h"

#ifndef CUEUE_VERSION_STRING
#define CUEUE_VERSION_STRING "0.1.0"
#endif

rec *ctrl_omap_get(const omap *m, const char *key)
{
    if (!m->nb)
        return NULL;
    for (rec *r = m->b[cu_hash_str(key) & (m->nb - 1)]; r; r = r->hnext)
        if (strcmp(r->key, key) == 0)
            return r;
    return NULL;
}

int ctrl_omap_add(omap *m, rec *r)
{
    if (m->n + 1 > m->nb) {
        size_t nb = m->nb ? m->nb * 2 : 64;
        rec **b = calloc(nb, sizeof(*b));
        if (!b)
            return -1;
        for (size_t i = 0; i < m->nb; i++)
            for (rec *x = m->b[i], *nx; x; x = nx) {
                nx = x->hnext;
                size_t h = cu_hash_str(x->key) & (nb - 1);
                x->hnext = b[h];
                b[h] = x;
            }
        free(m->b);
        m->b = b;
        m->nb = nb;
    }
    size_t h = cu_hash_str(r->key) & (m->nb - 1);
    r->hnext = m->b[h];
    m->b[h] = r;
    m->n++;
    return 0;
}

rec *ctrl_omap_del(omap *m, const char *key)
{
    if (!m->nb)
        return NULL;
    for (rec **pp = &m->b[cu_hash_str(key) & (m->nb - 1)]; *pp; pp = &(*pp)->hnext)
        if (strcmp((*pp)->key, key) == 0) {
            rec *r = *pp;
            *pp = r->hnext;
            m->n--;
            return r;
        }
    return NULL;
}

void ctrl_world_free(cu_world *w)
{
    if (w) {
        cu_world_free(w);
        free(w);
    }
}

void ctrl_cjob_free(cjob *j)
{
    if (!j)
        return;
    free(j->ns);
    free(j->name);
    free(j->uid);
    free(j->label_queue);
    free(j->wlkey);
    free(j->fin_msg);
    for (size_t i = 0; i < j->nps; i++) {
        free(j->ps[i].sel);
        free(j->ps[i].tol);
        free(j->ps[i].gates);
        free(j->ps[i].meta);
    }
    free(j->ps);
    free(j->own);
    free(j->create_body);
    free(j->bad);
    free(j);
}

void ctrl_log(ctrl *c, int v, const char *fmt, ...)
{
    if (!cu_log_enabled(&c->log, v, "info"))
        return;
    char line[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    int err = strstr(line, "failed") || strstr(line, "could not") || strstr(line, "cannot");
    cu_log_kv(&c->log, v, err ? "error" : "info", line, NULL);
}

/* ---------------- json helpers (for decoding at the boundary) ---------------- */

const char *ctrl_cond_status(json_object *obj, const char *type)
{
    json_object *conds = cu_jpath(obj, "status.conditions");
    const char *out = NULL;
    for (size_t i = 0, n = cu_jarr_len(conds); i < n; i++) {
        json_object *k = json_object_array_get_idx(conds, i);
        const char *t = cu_jstr(k, "type");
        if (t && strcmp(t, type) == 0)
            out = cu_jstr(k, "status");
    }
    return out;
}

void ctrl_gates_without(json_object *spec, json_object *gates, const char *drop1, const char *drop2)
{
    json_object *keep = json_object_new_array();
    for (size_t k = 0, n = cu_jarr_len(gates); k < n; k++) {
        json_object *g = json_object_array_get_idx(gates, k);
        const char *gn = cu_jstr(g, "name");
        if (!gn || ((!drop1 || strcmp(gn, drop1) != 0) && (!drop2 || strcmp(gn, drop2) != 0)))
            json_object_array_add(keep, json_object_get(g));
    }
    if (json_object_array_length(keep))
        json_object_object_add(spec, "schedulingGates", keep);
    else {
        json_object_put(keep);
        json_object_object_add(spec, "schedulingGates", NULL);
    }
}

char *ctrl_sdup(const char *s) { return s ? strdup(s) : NULL; }

char *ctrl_jtext(json_object *o)
{
    return o ? strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN)) : NULL;
}

/* ---------------- leader election ---------------- */

static void on_lead_started(cu_lease *l, void *ud)
{
    (void)l;
    ctrl *c = ud;
    c->leading = 1;
    c->started = 0;
    c->need_rebuild = 1;
    c->startup_done = 0;
    c->started_at = 0;
    ctrl_log(c, 0, "became leader (Lease %s/%s, identity %s)", c->lopts.ns, c->lopts.name,
             c->ident);
}

static void on_lead_stopped(cu_lease *l, void *ud)
{
    (void)l;
    ctrl *c = ud;
    c->leading = 0;
    c->started = 0;
    /* what we assumed may never be written now; the next leader reads the API */
    OMAP_FOREACH(&c->objs[R_WL], w)
    {
        w->assumed = 0;
        w->evict_pending = 0;
    }
    c->nassumed = 0;
    c->nevict_pending = 0;
    c->need_rebuild = 1;
    ctrl_log(c, 0,
             c->stopping ? "gave up leadership: releasing the Lease"
                         : "lost leadership: admission cycles and writes stopped");
}

/* Starts the candidate once the Namespaces are known: the namespace is
 * --leader-elect-namespace (or the Configuration's), else kueue-system
 * when it exists, else default. */
static void start_election(ctrl *c)
{
    if (c->lease || c->stopping)
        return;
    c->lopts.ns = c->lease_ns                                     ? c->lease_ns
                  : ctrl_omap_get(&c->objs[R_NS], "kueue-system") ? "kueue-system"
                                                                  : "default";
    cu_diag d;
    cu_diag_init(&d);
    c->lease = cu_lease_start(c->kc, &c->lopts, &d);
    if (!c->lease) {
        for (size_t i = 0; i < d.n; i++)
            ctrl_log(c, 0, "%s", d.msgs[i]);
        ctrl_log(c, 0, "could not start leader election");
        c->exit_rc = 1;
        ev_break(c->loop, EVBREAK_ALL);
    } else {
        ctrl_log(c, 0, "leader election: Lease %s/%s, identity %s", c->lopts.ns, c->lopts.name,
                 c->ident);
    }
    cu_diag_free(&d);
}

/* Parses a Go duration ("3s", "500ms", "1m30s", "1.5s") into *ms (at
 * least 1 ms, at most 24 h). Returns 0, or -1 when malformed. */
static int parse_go_duration(const char *s, int *ms)
{
    int64_t ns;
    if (cu_duration_parse(s, &ns) != CU_OK || ns < 1000000 || ns > INT64_C(86400000) * 1000000)
        return -1;
    *ms = (int)(ns / 1000000);
    return 0;
}

/* ---------------- informers, signals ---------------- */

static void on_synced(cu_informer *inf, void *ud)
{
    (void)inf;
    rctx *rc = ud;
    ctrl *c = rc->c;
    c->nsynced++;
    ctrl_log(c, 1, "synced %s (%zu objects)", res_tab[rc->r].path, c->objs[rc->r].n);
    if (c->elect && rc->r == R_NS)
        start_election(c);
    if (c->nsynced == c->ninf)
        ctrl_log(c, 0, "all informers synced%s",
                 c->elect && !c->leading ? "; standing by until elected leader" : "");
}

static void on_released(void *ud)
{
    ctrl *c = ud;
    ev_break(c->loop, EVBREAK_ALL);
}

static void on_stop_timer(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)t;
    (void)revents;
    ctrl *c = t->data;
    ctrl_log(c, 0, "grace period over: %zu writes still in flight are cancelled", c->inflight.n);
    ev_break(loop, EVBREAK_ALL);
}

static void on_drain(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)revents;
    ctrl *c = t->data;
    if (c->inflight.n)
        return; /* writes still on their way */
    ev_timer_stop(loop, t);
    if (c->lease)
        cu_lease_release(c->lease, on_released, c);
    else
        ev_break(loop, EVBREAK_ALL);
}

/* SIGTERM/SIGINT: stop cycling (no new writes), let in-flight writes
 * finish, release the Lease if held, and leave; everything within the
 * grace period (5 s). A second signal leaves at once. */
static void on_signal(struct ev_loop *loop, ev_signal *s, int revents)
{
    (void)revents;
    ctrl *c = s->data;
    if (c->stopping) {
        ev_break(loop, EVBREAK_ALL);
        return;
    }
    c->stopping = 1;
    ctrl_log(c, 0, "stopping: %zu writes in flight", c->inflight.n);
    ev_timer_init(&c->stop_timer, on_stop_timer, 5.0, 0.);
    c->stop_timer.data = c;
    ev_timer_start(loop, &c->stop_timer);
    ev_timer_init(&c->drain, on_drain, 0., 0.02);
    c->drain.data = c;
    ev_timer_start(loop, &c->drain);
}

/* ---------------- main ---------------- */

static const char help_text[] =
    "Usage: cueue controller [OPTIONS]\n"
    "\n"
    "Runs the admission controller against a Kubernetes API server. It watches\n"
    "ResourceFlavors, Cohorts, ClusterQueues, LocalQueues, WorkloadPriorityClasses,\n"
    "PriorityClasses, Namespaces, AdmissionChecks, Workloads and batch/v1 Jobs;\n"
    "creates a Workload for every Job with the kueue.x-k8s.io/queue-name label (or\n"
    "in a namespace with a LocalQueue named \"default\", or every Job of the\n"
    "selected namespaces with manageJobsWithoutQueueName); reserves quota for\n"
    "Workloads when their ClusterQueue has it (status.admission, QuotaReserved),\n"
    "admits them (Admitted) once the ClusterQueue's AdmissionChecks are Ready in\n"
    "status.admissionChecks (at once when there are none), then unsuspends their\n"
    "Jobs with the flavors' nodeLabels and tolerations. Preempted Workloads\n"
    "are evicted: their Jobs are suspended and restored, their quota released,\n"
    "and they are queued again. Its webhook server suspends managed Jobs at\n"
    "creation, validates Kueue's objects and converts them between v1beta1 and\n"
    "v1beta2 (when the webhook configurations are installed); a managed Job\n"
    "running without quota is suspended.\n"
    "\n"
    "Options:\n"
    "      --kubeconfig FILE  kubeconfig to use (default $KUBECONFIG, then\n"
    "                         ~/.kube/config, then the in-cluster configuration)\n"
    "      --context NAME     kubeconfig context (default: the current one)\n"
    "      --config FILE      Kueue's controller Configuration\n"
    "                         (config.kueue.x-k8s.io/v1beta2 or v1beta1; see\n"
    "                         config/controller/config.yaml); flags override it\n"
    "  -v, --verbose N        log level: 0 admissions, evictions, starts,\n"
    "                         finishes, leader changes and errors (default);\n"
    "                         1 also pending reasons, Workload creation, sync;\n"
    "                         2 engine rebuilds; 3 every write request\n"
    "      --log-format F     text (default) or json (one object per line)\n"
    "      --leader-elect     run as one of several replicas: only the holder of\n"
    "                         the coordination.k8s.io Lease runs admission cycles\n"
    "                         and writes; the others keep their caches synced and\n"
    "                         take over when the Lease expires (default: off, or\n"
    "                         the Configuration's leaderElection.leaderElect)\n"
    "      --leader-elect-namespace NS\n"
    "                         namespace of the Lease (default: the Configuration's\n"
    "                         resourceNamespace, else kueue-system when it exists,\n"
    "                         else default)\n"
    "      --leader-elect-lease-duration D   (default 15s)\n"
    "      --leader-elect-renew-deadline D   (default 10s)\n"
    "      --leader-elect-retry-period D     (default 2s)\n"
    "                         Go durations (500ms, 3s, 1m); the lease duration\n"
    "                         must exceed the renew deadline, which must exceed\n"
    "                         the retry period\n"
    "      --health-probe-bind-address HOST:PORT\n"
    "                         serve /healthz (200 once running) and /readyz (200\n"
    "                         once every informer synced, when electing cycling\n"
    "                         as the leader or synced as a standby, and the\n"
    "                         webhook server has its certificate; 503\n"
    "                         otherwise) over HTTP (default 127.0.0.1:8081, or\n"
    "                         the Configuration's; port 0 picks a free one,\n"
    "                         logged; \"0\" disables)\n"
    "      --metrics-bind-address HOST:PORT\n"
    "                         serve Prometheus metrics at /metrics (and /debug/*)\n"
    "                         (default 127.0.0.1:8080, or the Configuration's;\n"
    "                         \"0\" disables)\n"
    "      --metrics-secure[=true|false]\n"
    "                         serve them over HTTPS, to bearer tokens that a\n"
    "                         TokenReview accepts and a SubjectAccessReview allows\n"
    "                         to get the path (default: true unless the address is\n"
    "                         loopback)\n"
    "      --metrics-cert-path DIR, --metrics-cert-name FILE, --metrics-cert-key FILE\n"
    "                         the HTTPS certificate (default tls.crt) and key\n"
    "                         (default tls.key) in DIR; without DIR a self-signed\n"
    "                         one is generated at start\n"
    "      --visibility-bind-address HOST:PORT\n"
    "                         serve Kueue's visibility API (pending workloads of\n"
    "                         a ClusterQueue or LocalQueue,\n"
    "                         /apis/visibility.kueue.x-k8s.io/v1beta2) over HTTPS\n"
    "                         as an aggregated API server: kube-apiserver's front\n"
    "                         proxy (its client certificate checked against the\n"
    "                         requestheader CA of ConfigMap\n"
    "                         kube-system/extension-apiserver-authentication) or\n"
    "                         bearer tokens, authorized by SubjectAccessReviews\n"
    "                         (Kueue serves it on :8082; default \"0\": off)\n"
    "      --visibility-cert-path DIR\n"
    "                         its certificate DIR/tls.crt and key DIR/tls.key\n"
    "                         (default: a self-signed one generated at start)\n"
    "      --webhook-bind-address HOST:PORT\n"
    "                         serve the admission webhooks (AdmissionReview v1,\n"
    "                         at Kueue's paths) and the CRDs' conversion webhook\n"
    "                         (ConversionReview v1, /convert) over HTTPS (default\n"
    "                         the Configuration's webhook.host and port, else\n"
    "                         :9443 as Kueue; \"0\" disables). Not before it has a\n"
    "                         certificate: with internalCertManagement (the\n"
    "                         default) the controller makes a CA and a certificate\n"
    "                         for <webhookServiceName>.<namespace>.svc, keeps them\n"
    "                         in the Secret <webhookSecretName>, injects the CA\n"
    "                         into the webhook configurations and the CRDs and\n"
    "                         renews them 90 days before they expire; without it,\n"
    "                         it reads tls.crt and tls.key from the directory and\n"
    "                         reloads them when they change\n"
    "      --webhook-cert-dir DIR\n"
    "                         the webhook certificate's directory (default the\n"
    "                         Configuration's webhook.certDir, else\n"
    "                         /tmp/k8s-webhook-server/serving-certs)\n"
    "  -h, --help             show this help\n"
    "\n"
    "Stops on SIGTERM or SIGINT: no new writes, in-flight writes finish (at most\n"
    "5 s), the Lease is released when held; exit 0. At exit it logs its request\n"
    "and admission counts. Exit codes: 1 runtime failure, 2 bad usage or bad\n"
    "configuration.\n";

static int bad_duration(const char *flag, const char *v)
{
    fprintf(stderr,
            "cueue: controller: %s: expected a Go duration such as 500ms, 3s or 1m (at "
            "least 1ms, at most 24h), got '%s'\n",
            flag, v);
    return 2;
}

static cu_httpd *start_server(ctrl *c, const char *addr, const char *dflt, const char *what,
                              const char *paths, cu_httpd_handler h, const cu_httpd_opts *o,
                              int *fatal)
{
    *fatal = 0;
    const char *a = addr ? addr : dflt;
    if (strcmp(a, "0") == 0)
        return NULL;
    char err[400];
    int port = 0;
    cu_httpd *s = cu_httpd_start_opts(c->loop, a, what, h, c, o, err, sizeof(err), &port);
    if (!s) {
        if (addr) { /* asked for: an error */
            fprintf(stderr, "cueue: controller: %s\n", err);
            *fatal = 1;
        } else { /* the default may be taken (another controller on this host) */
            ctrl_log(c, 0, "%s disabled: %s (choose an address with the flag)", what, err);
        }
        return NULL;
    }
    char shown[300];
    snprintf(shown, sizeof(shown), "%.*s:%d", (int)(strrchr(a, ':') - a), a, port);
    ctrl_log(c, 0, "%s on %s (%s)", what, shown, paths);
    return s;
}

static void mauth_log(void *ud, const char *msg) { ctrl_log(ud, 0, "%s", msg); }

/* The metrics server: plain HTTP, or (secure: 1, or -1 and not loopback)
 * HTTPS with authentication and authorization (cu_mauth.h). Returns -1
 * when the controller must not start. */
static int start_metrics(ctrl *c, const char *addr, int secure, const char *cert_dir,
                         const char *cert_name, const char *key_name)
{
    const char *a = addr ? addr : "127.0.0.1:8080";
    if (strcmp(a, "0") == 0)
        return 0;
    if (secure < 0)
        secure = !cu_mauth_loopback(a);
    int fatal = 0;
    if (!secure) {
        if (!cu_mauth_loopback(a))
            ctrl_log(c, 0,
                     "metrics on %s are served without authentication "
                     "(--metrics-secure=false): anyone who reaches the port reads them",
                     a);
        c->metrics = start_server(c, addr, "127.0.0.1:8080", "metrics", "/metrics",
                                  ctrl_metrics_handler, NULL, &fatal);
        return fatal ? -1 : 0;
    }
    char host[256], err[400];
    cu_mauth_addr_host(a, host, sizeof(host));
    char *cert = NULL, *key = NULL;
    if (cu_mauth_certificate(cert_dir, cert_name, key_name, host, &cert, &key, err, sizeof(err)) !=
        0) {
        fprintf(stderr, "cueue: controller: metrics certificate: %s\n", err);
        return -1;
    }
    cu_mauth_opts mo = { .log = mauth_log, .log_ud = c };
    c->mauth = cu_mauth_new(c->kc, &mo);
    if (!c->mauth) {
        free(cert);
        free(key);
        return -1;
    }
    cu_httpd_opts ho = {
        .cert_pem = cert, .key_pem = key, .gate = cu_mauth_gate, .gate_ud = c->mauth
    };
    c->metrics = start_server(c, addr, "127.0.0.1:8080", "metrics",
                              cert_dir ? "/metrics; HTTPS, authenticated and authorized"
                                       : "/metrics; HTTPS with a self-signed certificate, "
                                         "authenticated and authorized",
                              ctrl_metrics_handler, &ho, &fatal);
    free(cert);
    free(key);
    cu_mauth_attach(c->mauth, c->metrics);
    return fatal ? -1 : 0;
}

const cu_config *cu_controller_load_config(cu_world *cw, const char *path, const char *who)
{
    cu_diag d;
    cu_diag_init(&d);
    const cu_config *cf = NULL;
    if (cu_world_load(cw, &path, 1, &d) != CU_OK || cw->configs.n != 1 || d.n) {
        for (size_t i = 0; i < d.n; i++)
            fprintf(stderr, "cueue: %s: %s\n", who, d.msgs[i]);
        if (cw->configs.n != 1)
            fprintf(stderr,
                    "cueue: %s: %s: expected one config.kueue.x-k8s.io Configuration, found %zu\n",
                    who, path, cw->configs.n);
    } else {
        cf = cw->configs.items[0];
    }
    cu_diag_free(&d);
    return cf;
}

int cu_controller_main(int argc, char **argv)
{
    static const struct option opts[] = {
        { "kubeconfig", required_argument, NULL, 'k' },
        { "context", required_argument, NULL, 'x' },
        { "config", required_argument, NULL, 'c' },
        { "verbose", required_argument, NULL, 'v' },
        { "log-format", required_argument, NULL, 'F' },
        { "help", no_argument, NULL, 'h' },
        { "leader-elect", no_argument, NULL, 'L' },
        { "leader-elect-namespace", required_argument, NULL, 'N' },
        { "leader-elect-lease-duration", required_argument, NULL, 'D' },
        { "leader-elect-renew-deadline", required_argument, NULL, 'R' },
        { "leader-elect-retry-period", required_argument, NULL, 'P' },
        { "health-probe-bind-address", required_argument, NULL, 'H' },
        { "metrics-bind-address", required_argument, NULL, 'M' },
        { "metrics-secure", optional_argument, NULL, 1001 },
        { "metrics-cert-path", required_argument, NULL, 1002 },
        { "metrics-cert-name", required_argument, NULL, 1003 },
        { "metrics-cert-key", required_argument, NULL, 1004 },
        { "visibility-bind-address", required_argument, NULL, 1005 },
        { "visibility-cert-path", required_argument, NULL, 1006 },
        { "webhook-bind-address", required_argument, NULL, 1007 },
        { "webhook-cert-dir", required_argument, NULL, 1008 },
        { NULL, 0, NULL, 0 },
    };
    const char *kubeconfig = NULL, *context = NULL, *config = NULL, *lease_ns = NULL;
    const char *health = NULL, *metrics = NULL, *logfmt = "text";
    const char *mcert_dir = NULL, *mcert_name = "tls.crt", *mcert_key = "tls.key";
    const char *vis_addr = NULL, *vcert_dir = NULL, *wh_addr = NULL, *wh_dir = NULL;
    int msecure = -1;
    int verbose = 0, ch, elect = -1, lease_ms = 0, renew_ms = 0, retry_ms = 0;
    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":v:h", opts, NULL)) != -1) {
        switch (ch) {
        case 'k': kubeconfig = optarg; break;
        case 'x': context = optarg; break;
        case 'c': config = optarg; break;
        case 'v': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (end == optarg || *end || v < 0 || v > 9) {
                fprintf(stderr, "cueue: controller: -v: expected a level 0..9, got '%s'\n", optarg);
                return 2;
            }
            verbose = (int)v;
            break;
        }
        case 'F':
            if (strcmp(optarg, "text") != 0 && strcmp(optarg, "json") != 0) {
                fprintf(stderr,
                        "cueue: controller: --log-format: expected text or json, got "
                        "'%s'\n",
                        optarg);
                return 2;
            }
            logfmt = optarg;
            break;
        case 'h': fputs(help_text, stdout); return 0;
        case 'L': elect = 1; break;
        case 'N':
            if (!*optarg) {
                fprintf(stderr, "cueue: controller: --leader-elect-namespace: empty name\n");
                return 2;
            }
            lease_ns = optarg;
            break;
        case 'H': health = optarg; break;
        case 'M': metrics = optarg; break;
        case 1001:
            if (!optarg || strcmp(optarg, "true") == 0) {
                msecure = 1;
            } else if (strcmp(optarg, "false") == 0) {
                msecure = 0;
            } else {
                fprintf(stderr,
                        "cueue: controller: --metrics-secure: expected true or false, "
                        "got '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case 1002: mcert_dir = optarg; break;
        case 1003: mcert_name = optarg; break;
        case 1004: mcert_key = optarg; break;
        case 1005: vis_addr = optarg; break;
        case 1006: vcert_dir = optarg; break;
        case 1007: wh_addr = optarg; break;
        case 1008: wh_dir = optarg; break;
        case 'D':
            if (parse_go_duration(optarg, &lease_ms) != 0)
                return bad_duration("--leader-elect-lease-duration", optarg);
            break;
        case 'R':
            if (parse_go_duration(optarg, &renew_ms) != 0)
                return bad_duration("--leader-elect-renew-deadline", optarg);
            break;
        case 'P':
            if (parse_go_duration(optarg, &retry_ms) != 0)
                return bad_duration("--leader-elect-retry-period", optarg);
            break;
        case ':':
            fprintf(stderr, "cueue: controller: option '%s' needs a value\n", argv[optind - 1]);
            return 2;
        default:
            fprintf(stderr, "cueue: controller: unknown option '%s'\n", argv[optind - 1]);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "cueue: controller: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }

    /* the Configuration: Kueue's defaults, the file, then the flags */
    cu_diag d;
    cu_diag_init(&d);
    cu_world cw;
    cu_world_init(&cw);
    cu_config defcfg;
    const cu_config *cf = NULL;
    if (config) {
        cf = cu_controller_load_config(&cw, config, "controller");
        if (!cf) {
            cu_world_free(&cw);
            cu_diag_free(&d);
            return 2;
        }
    } else {
        if (cu_config_init_defaults(&defcfg, &cw.arena) != CU_OK) {
            cu_world_free(&cw);
            return 1;
        }
        cf = &defcfg;
    }
#define le (&cf->leader_election)
    if (elect < 0)
        elect = le->has_leader_elect ? le->leader_elect : 0;
    if (!lease_ms)
        lease_ms = le->has_lease_duration ? (int)le->lease_duration_ms : 15000;
    if (!renew_ms)
        renew_ms = le->has_renew_deadline ? (int)le->renew_deadline_ms : 10000;
    if (!retry_ms)
        retry_ms = le->has_retry_period ? (int)le->retry_period_ms : 2000;
    if (!lease_ns && le->resource_namespace && config)
        lease_ns = le->resource_namespace;
    if (lease_ms < 1000 || lease_ms <= renew_ms || renew_ms <= retry_ms) {
        fprintf(stderr,
                "cueue: controller: leader election timings: need lease duration "
                "(%d ms, at least 1s) > renew deadline (%d ms) > retry period (%d ms)\n",
                lease_ms, renew_ms, retry_ms);
        cu_world_free(&cw);
        cu_diag_free(&d);
        return 2;
    }
    if (!health && config && cf->has_health_bind_address)
        health = cf->health_bind_address;
    if (!metrics && config && cf->has_metrics_bind_address)
        metrics = cf->metrics_bind_address;
    /* the webhook server: the flag, else the Configuration's host and port */
    int wh_explicit = wh_addr != NULL || (config && (cf->webhook.has_port || *cf->webhook.host));
    char wh_buf[300];
    if (!wh_addr) {
        const char *h = cf->webhook.host ? cf->webhook.host : "";
        snprintf(wh_buf, sizeof(wh_buf), strchr(h, ':') ? "[%s]:%d" : "%s:%d", h,
                 (int)cf->webhook.port);
        wh_addr = wh_buf;
    }
    if (!wh_dir)
        wh_dir = cf->webhook.cert_dir;

    int rc = 0;
    ctrl *cp = calloc(1, sizeof(ctrl));
    if (!cp) {
        cu_world_free(&cw);
        cu_diag_free(&d);
        return 1;
    }
    ctrl *c = cp;
    c->verbose = verbose;
    {
        cu_log_format lf = CU_LOG_TEXT;
        cu_log_format_parse(logfmt, &lf);
        cu_clock lc = { .now_ms = cu_clock_system_now };
        cu_log_init(&c->log, stderr, lf, verbose, lc);
    }
    c->elect = elect;
    c->lease_ns = lease_ns;
    c->cfg.cf = cf;
    c->cfg.manage_without_queue = cf->manage_jobs_without_queue_name;
    cu_pr_config_default(&c->cfg.pr);
    c->cfg.pr.enable = cf->pods_ready.enabled;
    if (c->cfg.pr.enable) {
        c->cfg.pr.timeout_ms = cf->pods_ready.timeout_ms;
        c->cfg.pr.recovery_timeout_ms =
            cf->pods_ready.recovery_enabled ? cf->pods_ready.recovery_timeout_ms : -1;
        c->cfg.pr.block_admission = cf->pods_ready.block_admission;
        c->cfg.pr.requeue_at_creation = cf->pods_ready.requeue_timestamp == CU_REQUEUE_CREATION;
        c->cfg.pr.backoff_limit = cf->pods_ready.backoff_limit_count;
        c->cfg.pr.backoff_base_ms = (int64_t)cf->pods_ready.backoff_base_s * 1000;
        c->cfg.pr.backoff_max_ms = (int64_t)cf->pods_ready.backoff_max_s * 1000;
    }
    for (int r = R_FIRST_OWNER; r < NRES; r++)
        c->cfg.on[r] = ctrl_integ_of(r) && cu_config_framework_enabled(cf, res_tab[r].framework);
    /* as Kueue: the LeaderWorkerSet integration enables the pod one (its
     * groups are pod groups) */
    c->cfg.on[R_POD] |= c->cfg.on[R_LWS];
    for (size_t i = 0; i < cf->unsupported_frameworks.n; i++)
        ctrl_log(c, 0, "integrations.frameworks: %s is not integrated by Cueue; ignored",
                 cf->unsupported_frameworks.items[i]);
    cu_world_init(&c->vw);
    c->co = cu_coalescer_new(2000);
    c->m = cu_metrics_new();
    if (!c->m || cu_metrics_kueue_register(c->m, &c->km) != CU_OK) {
        fprintf(stderr, "cueue: controller: metrics: %s\n",
                c->m ? cu_metrics_last_error(c->m) : "out of memory");
        cu_metrics_free(c->m);
        free(c);
        cu_world_free(&cw);
        cu_diag_free(&d);
        return 1;
    }
    {
        const char *bi[] = { CUEUE_VERSION_STRING, "", "", ("cc " __VERSION__), "linux" };
        cu_metric_set(c->km.cueue_build_info, bi, 1);
        const char *kb[] = { CUEUE_VERSION_STRING, "", "", "", ("cc " __VERSION__), "linux" };
        cu_metric_set(c->km.build_info, kb, 1);
    }
    {
        cu_recorder_opts ro = { .component = CU_EVENT_COMPONENT_ADMISSION };
        c->ev_adm = cu_recorder_new(&ro);
        ro.component = CU_EVENT_COMPONENT_JOB;
        c->ev_job = cu_recorder_new(&ro);
    }
    if (!c->co || !c->ev_adm || !c->ev_job) {
        cu_metrics_free(c->m);
        cu_coalescer_free(c->co);
        cu_recorder_free(c->ev_adm);
        cu_recorder_free(c->ev_job);
        free(c);
        cu_world_free(&cw);
        cu_diag_free(&d);
        return 1;
    }
    {
        char hn[256] = "";
        if (gethostname(hn, sizeof(hn) - 1) != 0 || !hn[0])
            snprintf(hn, sizeof(hn), "localhost");
        snprintf(c->ident, sizeof(c->ident), "%s_%ld", hn, (long)getpid());
    }
    c->lopts.name = le->resource_name ? le->resource_name : "c1f6bfd2.kueue.x-k8s.io";
#undef le
    c->lopts.identity = c->ident;
    c->lopts.lease_ms = lease_ms;
    c->lopts.renew_ms = renew_ms;
    c->lopts.retry_ms = retry_ms;
    c->lopts.on_started = on_lead_started;
    c->lopts.on_stopped = on_lead_stopped;
    c->lopts.ud = c;
    c->eopts.clock.now_ms = cu_clock_system_now;
    c->eopts.manual_evictions = 1;
    c->eopts.requeue_batch = CU_RQ_TIMED; /* Kueue's 1 s batch */
    c->eopts.fair_sharing = cf->fair_sharing;
    c->eopts.nstrategies = cf->nstrategies;
    memcpy(c->eopts.strategies, cf->strategies, sizeof(c->eopts.strategies));
    c->eopts.afs = cf->afs;
    c->eopts.afs_half_life_ms = cf->afs_half_life_ms;
    c->eopts.afs_sampling_ms = cf->afs_sampling_ms;
    c->eopts.afs_weights = cf->afs_weights.n ? &cf->afs_weights : NULL;

    cu_kconfig *kcfg = cu_kconfig_load(kubeconfig, context, &d);
    if (!kcfg) {
        for (size_t i = 0; i < d.n; i++)
            fprintf(stderr, "cueue: controller: %s\n", d.msgs[i]);
        cu_metrics_free(c->m);
        cu_coalescer_free(c->co);
        cu_recorder_free(c->ev_adm);
        cu_recorder_free(c->ev_job);
        free(c);
        cu_world_free(&cw);
        cu_diag_free(&d);
        return 2;
    }
    c->loop = ev_loop_new(EVFLAG_AUTO);
    cu_kclient_opts ko = { 0 };
    ko.on_attempt = ctrl_on_attempt;
    ko.on_outcome = ctrl_on_outcome;
    ko.attempt_ud = c;
    c->server = kcfg->server;
    if (cf->client.has_qps)
        ko.qps = cf->client.qps < 0 ? 1e9 : cf->client.qps;
    if (cf->client.has_burst)
        ko.burst = cf->client.burst;
    c->kc = c->loop ? cu_kclient_new(c->loop, kcfg, &ko, &d) : NULL;
    if (!c->kc) {
        for (size_t i = 0; i < d.n; i++)
            fprintf(stderr, "cueue: controller: %s\n", d.msgs[i]);
        rc = 1;
        goto out;
    }
    c->kc_ev = cu_kclient_new(c->loop, kcfg, &ko, &d); /* NULL: they share c->kc */
    c->kc_q = cu_kclient_new(c->loop, kcfg, &ko, &d);
    c->kc_lq = cu_kclient_new(c->loop, kcfg, &ko, &d);
    ctrl_log(c, 0, "connecting to %s", kcfg->server);
    int fatal = 0;
    c->health = start_server(c, health, "127.0.0.1:8081", "health probes", "/healthz, /readyz",
                             ctrl_health_handler, NULL, &fatal);
    if (fatal) {
        rc = 2;
        goto out;
    }
    if (start_metrics(c, metrics, msecure, mcert_dir, mcert_name, mcert_key) != 0 ||
        ctrl_visibility_start(c, vis_addr, vcert_dir, "tls.crt", "tls.key") != 0 ||
        ctrl_webhook_start(c, wh_addr, wh_explicit, wh_dir) != 0) {
        rc = 2;
        goto out;
    }
    for (int r = 0; r < NRES; r++) {
        c->rc[r].c = c;
        c->rc[r].r = r;
        if (r >= R_FIRST_OWNER && !c->cfg.on[r])
            continue;
        cu_informer_opts io = { 0 };
        io.path = res_tab[r].path;
        io.on_event = ctrl_on_event;
        io.on_synced = on_synced;
        io.on_skip = ctrl_on_skip;
        io.optional = res_tab[r].optional;
        io.label_selector = res_tab[r].selector;
        io.ud = &c->rc[r];
        c->inf[r] = cu_informer_start(c->kc, &io, &d);
        if (!c->inf[r]) {
            for (size_t i = 0; i < d.n; i++)
                fprintf(stderr, "cueue: controller: %s\n", d.msgs[i]);
            rc = 1;
            goto out;
        }
        c->ninf++;
    }
    ev_timer_init(&c->tick, ctrl_on_tick, 0.05, 0.05);
    c->tick.data = c;
    ev_timer_start(c->loop, &c->tick);
    ev_signal_init(&c->sigterm, on_signal, SIGTERM);
    ev_signal_init(&c->sigint, on_signal, SIGINT);
    c->sigterm.data = c;
    c->sigint.data = c;
    ev_signal_start(c->loop, &c->sigterm);
    ev_signal_start(c->loop, &c->sigint);
    ev_run(c->loop, 0);
    rc = c->exit_rc;
    {
        cu_kclient_stats ks, ke = { 0 };
        cu_kclient_stats_get(c->kc, &ks);
        if (c->kc_ev)
            cu_kclient_stats_get(c->kc_ev, &ke);
        ks.requests += ke.requests;
        if (c->kc_q)
            cu_kclient_stats_get(c->kc_q, &ke);
        ks.requests += c->kc_q ? ke.requests : 0;
        if (c->kc_lq)
            cu_kclient_stats_get(c->kc_lq, &ke);
        ks.requests += c->kc_lq ? ke.requests : 0;
        ctrl_log(c, 0,
                 "stopped: admissions=%lu evictions=%lu preemptions=%lu requests=%llu "
                 "writes=%lu write_errors=%lu conflicts=%lu events=%lu cycles=%lu rebuilds=%lu "
                 "peak_rss_kib=%ld",
                 c->n.admissions, c->n.evictions, c->n.preemptions, (unsigned long long)ks.requests,
                 c->n.writes, c->n.write_errors, c->n.conflicts, c->events, c->n.cycles,
                 c->n.rebuilds, ctrl_peak_rss_kib());
    }
    ev_signal_stop(c->loop, &c->sigterm);
    ev_signal_stop(c->loop, &c->sigint);
    ev_timer_stop(c->loop, &c->tick);
    ev_timer_stop(c->loop, &c->stop_timer);
    ev_timer_stop(c->loop, &c->drain);
out:
    if (c->lease)
        cu_lease_free(c->lease);
    cu_httpd_stop(c->health);
    cu_httpd_stop(c->metrics);
    cu_mauth_detach(c->mauth);
    ctrl_visibility_stop(c);
    ctrl_webhook_stop(c);
    for (int r = 0; r < NRES; r++)
        if (c->inf[r])
            cu_informer_stop(c->inf[r]);
    c->stopping = 1; /* the callbacks below start no new request */
    if (c->kc_ev)
        cu_kclient_free(c->kc_ev);
    if (c->kc_q)
        cu_kclient_free(c->kc_q);
    if (c->kc_lq)
        cu_kclient_free(c->kc_lq);
    if (c->kc)
        cu_kclient_free(c->kc); /* pending writes complete with "client closed" */
    if (c->mauth) {
        ctrl_log(c, 0, "metrics authentication: %lu reviews", cu_mauth_reviews(c->mauth));
        cu_mauth_free(c->mauth);
    }
    ctrl_visibility_free(c);
    ctrl_webhook_free(c);
    if (c->eng)
        cu_engine_free(c->eng);
    for (size_t i = 0; i < c->ngrave; i++)
        ctrl_world_free(c->grave[i]);
    free(c->grave);
    for (int r = 0; r < NRES; r++) {
        OMAP_FOREACH(&c->objs[r], x)
        {
            if (x->ew && x->ew != x->w)
                ctrl_world_free(x->ew);
            ctrl_world_free(x->w);
            ctrl_rec_free(x);
        }
        free(c->objs[r].b);
    }
    for (int r = 0; r < NRES; r++) {
        OMAP_FOREACH(&c->units[r], x) ctrl_rec_free(x);
        free(c->units[r].b);
    }
    OMAP_FOREACH(&c->inflight, x)
    {
        free(x->key);
        free(x);
    }
    free(c->inflight.b);
    for (int r = 0; r < NRES; r++) {
        OMAP_FOREACH(&c->dirty[r], x)
        {
            free(x->key);
            free(x);
        }
        free(c->dirty[r].b);
    }
    OMAP_FOREACH(&c->dirty_wls, x)
    {
        free(x->key);
        free(x);
    }
    free(c->dirty_wls.b);
    ctrl_tas_free(c);
    free(c->by_idx);
    free(c->redo.items);
    free(c->adm.items);
    cu_world_free(&c->vw);
    ctrl_ev_queue_free(c);
    cu_metrics_free(c->m);
    cu_coalescer_free(c->co);
    cu_recorder_free(c->ev_adm);
    cu_recorder_free(c->ev_job);
    cu_ctrl_api_health_free(&c->apih);
    if (c->loop)
        ev_loop_destroy(c->loop);
    free(c);
    cu_kconfig_free(kcfg);
    cu_world_free(&cw);
    cu_diag_free(&d);
    return rc;
}
