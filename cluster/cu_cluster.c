/*
 * cu_cluster.c - `cueue cluster`: flags, the store (with persistence),
 * the simulated nodes and controllers, the API server, and serving until
 * SIGTERM or SIGINT.
 *
 * Signals are blocked in every thread (the mask is set before any thread
 * starts) and collected by the main thread with sigtimedwait, which also
 * runs the garbage collector once a second: no signal handler, no global.
 */
#include "cu_apiserver.h"
#include "cu_kubesim.h"
#include "cu_clock.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char help_cluster[] =
    "Usage: cueue cluster [OPTIONS]\n"
    "\n"
    "Runs an embedded Kubernetes cluster for local trials and tests (never for\n"
    "production): an API server that kubectl and the controller use unmodified,\n"
    "simulated GPU nodes, a default-scheduler model and a Job controller. It\n"
    "serves until SIGTERM or SIGINT (Ctrl-C). Once it listens it writes a\n"
    "kubeconfig (atomically) and prints the URL and the kubeconfig path on stderr.\n"
    "\n"
    "Options:\n"
    "      --listen HOST:PORT    address to serve on (default 127.0.0.1:6443);\n"
    "                            port 0 picks a free port\n"
    "      --data-dir DIR        keep every object in DIR/cluster.db (SQLite, WAL):\n"
    "                            objects, CRDs and the resourceVersion counter\n"
    "                            survive a restart; without it, memory only\n"
    "      --tls                 serve HTTPS with a CA and a certificate generated\n"
    "                            for this run; the kubeconfig carries the CA\n"
    "      --token-file FILE     require `Authorization: Bearer TOKEN` with a token\n"
    "                            from FILE, one per line in kube-apiserver's\n"
    "                            token,user,uid,\"groups\" format (the user is what\n"
    "                            TokenReview reports; a token alone is an admin);\n"
    "                            others get 401. /healthz, /readyz, /livez and\n"
    "                            /version stay open, as kube-apiserver allows them\n"
    "                            anonymously. The kubeconfig carries the first token\n"
    "      --nodes FILE          v1 Node YAML (multi-document) for the simulated\n"
    "                            nodes (default: a built-in set of GPU nodes)\n"
    "      --most-allocated      score nodes with MostAllocated (default\n"
    "                            LeastAllocated)\n"
    "      --kubeconfig-out FILE where to write the kubeconfig (default\n"
    "                            ./cueue-kubeconfig)\n"
    "      --history N           watch events kept for resuming watches\n"
    "                            (default 10000, within 64 MiB of objects); older\n"
    "                            resourceVersions get 410\n"
    "      --max-connections-per-client N\n"
    "                            connections one client address may hold (default\n"
    "                            256); more are closed at once\n"
    "      --idle-timeout SECONDS close connections idle this long, slow TLS\n"
    "                            handshakes and requests included (default 60);\n"
    "                            watches are exempt\n"
    "      --admin               serve the fault-injection endpoint /cueue/faults\n"
    "                            (only to clients on 127.0.0.1)\n"
    "      --fault JSON          apply a fault command at start (repeatable; same\n"
    "                            commands as /cueue/faults)\n"
    "  -v, --verbose             log every request on stderr\n"
    "  -h, --help                show this help\n"
    "\n"
    "Fault injection (POST a JSON command to /cueue/faults, GET lists the active\n"
    "faults, DELETE clears them):\n"
    "  {\"dropWatches\":true}      end every open watch (clients re-watch)\n"
    "  {\"compact\":true}          drop the watch history (old resourceVersions get\n"
    "                            410 Gone)\n"
    "  {\"stallWatches\":true}     stop delivering watch events until false\n"
    "  {\"respond\":{\"match\":\"PATCH .*/workloads/.*\",\"code\":409,\"times\":2}}\n"
    "                            answer matching requests with 409, 429 (with\n"
    "                            Retry-After: \"retryAfter\":S), 500 or 503, N times\n"
    "                            (default 1; -1 = until cleared)\n"
    "  {\"delayMs\":300,\"match\":\"GET .*\"}  delay matching requests\n"
    "  {\"clear\":true}            remove every fault\n"
    "  match is a POSIX extended regex against \"METHOD /path\" (no query).\n"
    "  A clean restart: stop with SIGTERM and start again with the same\n"
    "  --data-dir (and --listen) options.\n"
    "\n"
    "Example:\n"
    "  cueue cluster --listen 127.0.0.1:0 --kubeconfig-out /tmp/kc &\n"
    "  KUBECONFIG=/tmp/kc kubectl get nodes\n"
    "\n"
    "Exit codes: 0 stopped cleanly, 1 could not start, 2 bad usage.\n";

const char *cu_cluster_help(void) { return help_cluster; }

static int usage(const char *fmt, const char *a)
{
    fprintf(stderr, "cueue: cluster: ");
    fprintf(stderr, fmt, a);
    fprintf(stderr, "\nRun 'cueue cluster --help' for the options.\n");
    return 2;
}

/* Matches --name VALUE and --name=VALUE; advances *i. */
static int opt_val(int argc, char **argv, int *i, const char *name, const char **val)
{
    size_t n = strlen(name);
    const char *a = argv[*i];
    if (strncmp(a, name, n) != 0)
        return 0;
    if (a[n] == '=') {
        *val = a + n + 1;
        return 1;
    }
    if (a[n] != '\0')
        return 0;
    if (*i + 1 >= argc) {
        *val = NULL;
        return 1;
    }
    *val = argv[++*i];
    return 1;
}

int cu_cluster_main(int argc, char **argv)
{
    cu_apiserver_opts ao;
    cu_kubesim_opts ko;
    memset(&ao, 0, sizeof ao);
    memset(&ko, 0, sizeof ko);
    ao.listen = "127.0.0.1:6443";
    ao.kubeconfig_out = "./cueue-kubeconfig";
    const char *data_dir = NULL, *history = NULL, *val;
    const char *faults[64];
    size_t nfaults = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(help_cluster, stdout);
            return 0;
        } else if (strcmp(a, "--tls") == 0) {
            ao.tls = 1;
        } else if (strcmp(a, "--admin") == 0) {
            ao.admin = 1;
        } else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
            ao.verbose = 1;
        } else if (strcmp(a, "--most-allocated") == 0) {
            ko.most_allocated = 1;
        } else if (opt_val(argc, argv, &i, "--listen", &val)) {
            if (!val || !*val)
                return usage("%s needs a value (HOST:PORT)", "--listen");
            ao.listen = val;
        } else if (opt_val(argc, argv, &i, "--data-dir", &val)) {
            if (!val || !*val)
                return usage("%s needs a value (a folder)", "--data-dir");
            data_dir = val;
        } else if (opt_val(argc, argv, &i, "--token-file", &val)) {
            if (!val || !*val)
                return usage("%s needs a value (a file)", "--token-file");
            ao.token_file = val;
        } else if (opt_val(argc, argv, &i, "--nodes", &val)) {
            if (!val || !*val)
                return usage("%s needs a value (a Node YAML file)", "--nodes");
            ko.nodes_file = val;
        } else if (opt_val(argc, argv, &i, "--kubeconfig-out", &val)) {
            if (!val || !*val)
                return usage("%s needs a value (a file)", "--kubeconfig-out");
            ao.kubeconfig_out = val;
        } else if (opt_val(argc, argv, &i, "--history", &val)) {
            char *end;
            if (!val || strtol(val, &end, 10) <= 0 || *end)
                return usage("--history needs a positive number, got '%s'", val ? val : "");
            history = val;
        } else if (opt_val(argc, argv, &i, "--max-connections-per-client", &val) ||
                   opt_val(argc, argv, &i, "--idle-timeout", &val)) {
            char *end;
            long n = val ? strtol(val, &end, 10) : 0;
            int conns = strcmp(a, "--idle-timeout") != 0 && strncmp(a, "--idle-timeout=", 15) != 0;
            if (!val || n <= 0 || n > 100000 || *end)
                return usage(conns ? "--max-connections-per-client needs a number from 1 to "
                                     "100000, got '%s'"
                                   : "--idle-timeout needs a number from 1 to 100000, got '%s'",
                             val ? val : "");
            if (conns)
                ao.max_conns_per_client = (int)n;
            else
                ao.idle_timeout_s = (int)n;
        } else if (opt_val(argc, argv, &i, "--fault", &val)) {
            if (!val || !*val)
                return usage("%s needs a value (a JSON fault command)", "--fault");
            if (nfaults == 64)
                return usage("too many %s options (at most 64)", "--fault");
            faults[nfaults++] = val;
        } else if (a[0] == '-') {
            return usage("unknown option '%s'", a);
        } else {
            return usage("unexpected argument '%s' (cluster takes options only)", a);
        }
    }

    /* Parse fault commands before starting anything. */
    json_object *fault_cmds[64];
    for (size_t i = 0; i < nfaults; i++) {
        fault_cmds[i] = json_tokener_parse(faults[i]);
        if (!fault_cmds[i] || !json_object_is_type(fault_cmds[i], json_type_object)) {
            for (size_t j = 0; j <= i; j++)
                json_object_put(fault_cmds[j]);
            return usage("--fault: not a JSON object: %s", faults[i]);
        }
    }

    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    struct sigaction ign;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ign, NULL);

    int rc = 1;
    char err[1024];
    cu_clock clock = cu_clock_system();
    ko.clock = &clock;
    cu_store *s = cu_store_new(history ? (size_t)strtol(history, NULL, 10) : 0, &clock);
    cu_kubesim *k = NULL;
    cu_apiserver *a = NULL;
    if (!s) {
        fprintf(stderr, "cueue: cluster: out of memory\n");
        goto done;
    }
    if (data_dir) {
        cu_status st;
        memset(&st, 0, sizeof st);
        if (cu_store_persist(s, data_dir, &st) != CU_OK) {
            fprintf(stderr, "cueue: cluster: --data-dir %s: %s\n", data_dir, st.message);
            goto done;
        }
    }
    k = cu_kubesim_start(s, &ko, err, sizeof err);
    if (!k) {
        fprintf(stderr, "cueue: cluster: %s\n", err);
        goto done;
    }
    a = cu_apiserver_start(s, &ao, err, sizeof err);
    if (!a) {
        fprintf(stderr, "cueue: cluster: %s\n", err);
        goto done;
    }
    for (size_t i = 0; i < nfaults; i++)
        if (cu_apiserver_fault(a, fault_cmds[i], err, sizeof err) != CU_OK) {
            fprintf(stderr, "cueue: cluster: --fault %s: %s\n", faults[i], err);
            goto done;
        }
    fprintf(stderr, "cueue cluster: serving %s\n", cu_apiserver_url(a));
    fprintf(stderr, "cueue cluster: kubeconfig written to %s (export KUBECONFIG=%s)\n",
            ao.kubeconfig_out, ao.kubeconfig_out);
    for (;;) {
        struct timespec tick = { 1, 0 };
        int sig = sigtimedwait(&set, NULL, &tick);
        if (sig == SIGINT || sig == SIGTERM) {
            fprintf(stderr, "cueue cluster: %s received, stopping\n",
                    sig == SIGINT ? "SIGINT" : "SIGTERM");
            break;
        }
        if (sig < 0 && errno != EAGAIN && errno != EINTR)
            break;
        cu_store_gc(s);
    }
    rc = 0;
done:
    for (size_t i = 0; i < nfaults; i++)
        json_object_put(fault_cmds[i]);
    cu_apiserver_stop(a);
    if (k)
        cu_kubesim_stop(k);
    if (s)
        cu_store_free(s);
    return rc;
}
