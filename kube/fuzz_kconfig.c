/*
 * fuzz_kconfig.c - libFuzzer target for the kubeconfig reader
 * (cu_kconfig.c): YAML or JSON written by users and tools, base64 data
 * fields, merging of several files from $KUBECONFIG, relative paths.
 *
 * Input: one or two kubeconfig files separated by a line "---8<---"
 * (seeds in fuzz-seeds-kconfig/). They are written to a private
 * directory and loaded by path and through KUBECONFIG=first:second. It
 * never asks for a token, so no exec plugin runs. Besides "no crash, no
 * sanitizer report", checked (a violation aborts):
 *  - a refusal says why (an error in the diagnostics); a success has a
 *    server URL and a namespace;
 *  - loading is deterministic, and the same file by path, as
 *    KUBECONFIG=file and as KUBECONFIG=file:file (listed twice) reads
 *    the same (a file listed twice is read once);
 *  - two files merge without a crash, whatever they hold.
 * Files named by a kubeconfig are read: run it with stdin from /dev/null.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cu_kconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void must(int cond)
{
    if (!cond)
        abort();
}

static char dir[64], f1[96], f2[96], both[200], twice[200];

static void cleanup(void)
{
    static const char *const names[] = { "a.yaml", "b.yaml",     "ca.crt",
                                         "token",  "client.crt", "client.key" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char p[160];
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unlink(p);
    }
    rmdir(dir);
}

static void init(void)
{
    snprintf(dir, sizeof dir, "/tmp/fuzz_kconfig.%d", (int)getpid());
    mkdir(dir, 0700);
    snprintf(f1, sizeof f1, "%s/a.yaml", dir);
    snprintf(f2, sizeof f2, "%s/b.yaml", dir);
    snprintf(both, sizeof both, "%s:%s", f1, f2);
    snprintf(twice, sizeof twice, "%s:%s", f1, f1);
    /* files a kubeconfig may name by relative path */
    static const char *const files[][2] = {
        { "ca.crt", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n" },
        { "token", "secret-token\n" },
        { "client.crt", "-----BEGIN CERTIFICATE-----\nMIIC\n-----END CERTIFICATE-----\n" },
        { "client.key", "-----BEGIN PRIVATE KEY-----\nMIID\n-----END PRIVATE KEY-----\n" },
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char p[160];
        snprintf(p, sizeof p, "%s/%s", dir, files[i][0]);
        FILE *f = fopen(p, "w");
        must(f != NULL);
        fputs(files[i][1], f);
        fclose(f);
    }
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("HOME");
    atexit(cleanup);
}

static void put(const char *path, const uint8_t *d, size_t n)
{
    FILE *f = fopen(path, "wb");
    must(f != NULL);
    must(fwrite(d, 1, n, f) == n || n == 0);
    fclose(f);
}

static int same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static void must_same(const cu_kconfig *a, const cu_kconfig *b)
{
    must((a == NULL) == (b == NULL));
    if (!a)
        return;
    must(same_str(a->server, b->server) && same_str(a->context, b->context) &&
         same_str(a->cluster, b->cluster) && same_str(a->user, b->user) &&
         same_str(a->namespace_, b->namespace_) && same_str(a->ca_pem, b->ca_pem) &&
         same_str(a->cert_pem, b->cert_pem) && same_str(a->key_pem, b->key_pem) &&
         same_str(a->tls_server_name, b->tls_server_name) && same_str(a->token, b->token) &&
         same_str(a->token_file, b->token_file) && a->insecure == b->insecure &&
         (a->exec == NULL) == (b->exec == NULL));
    if (a->exec)
        must(same_str(a->exec->command, b->exec->command) && a->exec->nargs == b->exec->nargs &&
             a->exec->nenv == b->exec->nenv);
}

static cu_kconfig *load(const char *path, const char *env)
{
    cu_diag d;
    cu_diag_init(&d);
    if (env)
        setenv("KUBECONFIG", env, 1);
    else
        unsetenv("KUBECONFIG");
    cu_kconfig *c = cu_kconfig_load(path, NULL, &d);
    if (!c)
        must(d.nerrors > 0);
    else
        must(c->server && c->server[0] && c->namespace_ && c->namespace_[0]);
    cu_diag_free(&d);
    return c;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dir[0])
        init();
    if (size > 64 * 1024)
        return 0;
    static const char cut[] = "\n---8<---\n";
    const uint8_t *sep = NULL;
    for (size_t i = 0; i + sizeof cut - 1 <= size && !sep; i++)
        if (memcmp(data + i, cut, sizeof cut - 1) == 0)
            sep = data + i;
    size_t n1 = sep ? (size_t)(sep - data) : size;
    put(f1, data, n1);

    cu_kconfig *a = load(f1, NULL);
    cu_kconfig *a2 = load(f1, NULL);
    must_same(a, a2);
    cu_kconfig_free(a2);
    cu_kconfig *e = load(NULL, f1);
    must_same(a, e);
    cu_kconfig_free(e);
    cu_kconfig *t = load(NULL, twice);
    must_same(a, t);
    cu_kconfig_free(t);

    if (sep) {
        const uint8_t *d2 = sep + sizeof cut - 1;
        put(f2, d2, size - (size_t)(d2 - data));
        cu_kconfig *m = load(NULL, both);
        cu_kconfig_free(m);
        unlink(f2);
    }
    cu_kconfig_free(a);
    unlink(f1);
    return 0;
}
