/*
 * cu_apiserver.h - the embedded cluster's HTTP(S) API server
 * (libmicrohttpd): routing of the Kubernetes REST paths onto the store,
 * discovery, /openapi/v3, Table output, watch streaming, metav1.Status
 * errors, bearer-token authentication, TLS with a generated CA, the
 * kubeconfig it writes, and fault injection for tests.
 */
#ifndef CU_APISERVER_H
#define CU_APISERVER_H

#include "cu_store.h"

typedef struct cu_apiserver_opts {
    const char *listen;        /* "127.0.0.1:6443"; port 0 = pick a free one */
    int tls;                   /* HTTPS with a certificate generated for the run */
    const char *token_file;    /* bearer tokens, one per line; NULL = no auth */
    const char *kubeconfig_out;/* written atomically (temp file + rename) once ready */
    int admin;                 /* serve the fault-injection endpoint /cueue/faults */
} cu_apiserver_opts;

typedef struct cu_apiserver cu_apiserver;

/* Starts serving s (borrowed; must outlive the server). Returns NULL with
 * a message in err on failure. */
cu_apiserver *cu_apiserver_start(cu_store *s, const cu_apiserver_opts *o, char *err, size_t errn);
/* The port actually bound. */
int cu_apiserver_port(const cu_apiserver *a);
/* The server's base URL ("https://127.0.0.1:PORT"). Borrowed. */
const char *cu_apiserver_url(const cu_apiserver *a);
/* Stops serving (ends watches, closes connections) and frees. */
void cu_apiserver_stop(cu_apiserver *a);

/* `cueue cluster` (the whole command: flags, nodes, controllers, signal
 * handling, serving until SIGTERM). argv[0] is "cluster". Returns the exit
 * code. */
int cu_cluster_main(int argc, char **argv);

#endif
