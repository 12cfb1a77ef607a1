/*
 * cu_kconfig.h - how to reach the Kubernetes API: kubeconfig files
 * (--kubeconfig, $KUBECONFIG (colon-separated, merged as kubectl does),
 * ~/.kube/config; the current context, or a named one) and in-cluster
 * configuration (service-account token re-read as it rotates, CA,
 * KUBERNETES_SERVICE_HOST/PORT).
 *
 * Credentials: bearer token, token file (re-read when it changes), client
 * certificate and key (file or data), CA (file or data),
 * insecure-skip-tls-verify, and exec credential plugins
 * (client.authentication.k8s.io/v1: the plugin's ExecCredential status
 * token or client certificate, cached until expirationTimestamp).
 */
#ifndef CU_KCONFIG_H
#define CU_KCONFIG_H

#include "cu_base.h"

typedef struct cu_kexec { /* users[].user.exec */
    char *command;
    char **args;
    size_t nargs;
    char **env;
    size_t nenv; /* "NAME=value" */
    char *api_version;
    int interactive_never;
} cu_kexec;

typedef struct cu_kconfig {
    char *server;                   /* "https://127.0.0.1:6443" */
    char *context, *cluster, *user; /* names, for messages */
    char *namespace_;               /* context namespace or "default" */
    /* TLS */
    int insecure;
    char *ca_pem;             /* CA bundle (PEM), NULL = system */
    char *cert_pem, *key_pem; /* client certificate, NULL when none */
    char *tls_server_name;
    /* auth */
    char *token;      /* static token */
    char *token_file; /* re-read when modified */
    cu_kexec *exec;   /* exec plugin, NULL when none */
    int in_cluster;
    /* Private to cu_kconfig.c: the cached credential (token file state,
     * exec plugin result and its expiry). Callers leave it alone. */
    struct cu_kcred *cred_;
} cu_kconfig;

/* Loads the configuration: path (NULL = $KUBECONFIG, else ~/.kube/config;
 * if none of those exist and KUBERNETES_SERVICE_HOST is set, in-cluster),
 * context (NULL = current-context). Files referenced by relative paths are
 * resolved against the kubeconfig's directory. On error returns NULL and
 * appends "KUBECONFIG_PATH: problem" messages to d. Caller frees with
 * cu_kconfig_free. */
cu_kconfig *cu_kconfig_load(const char *path, const char *context, cu_diag *d);
/* In-cluster only: token, ca.crt and namespace from token_dir; NULL means
 * $CUEUE_TEST_SERVICEACCOUNT_DIR when set (for tests: pods never set it),
 * else /var/run/secrets/kubernetes.io/serviceaccount. */
cu_kconfig *cu_kconfig_in_cluster(const char *token_dir, cu_diag *d);
void cu_kconfig_free(cu_kconfig *c);

/* Returns the bearer token to send now (static, from the token file if it
 * changed, or from the exec plugin, cached until it expires), or NULL when
 * the config uses no token. May also refresh cert_pem/key_pem from an
 * exec plugin. now_ms from the injected clock. Returned string is owned
 * by c and valid until the next call. */
const char *cu_kconfig_token(cu_kconfig *c, int64_t now_ms, cu_diag *d);

/* Forgets the cached exec-plugin credential and the token file state, so
 * the next cu_kconfig_token runs the plugin / reads the file again (used
 * after a 401). Returns 1 when there was a credential source to refresh
 * (exec plugin or token file), 0 for static credentials. */
int cu_kconfig_invalidate(cu_kconfig *c);

/* Reads a whole file of at most max bytes (certificates, keys, tokens)
 * into a new NUL-terminated buffer (caller frees); *len_out (may be NULL)
 * gets its length. NULL on failure, with the problem in *why (static). */
char *cu_read_file(const char *path, size_t max, size_t *len_out, const char **why);

#endif
