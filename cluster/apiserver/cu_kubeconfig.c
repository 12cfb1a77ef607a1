/*
 * cu_kubeconfig.c - the kubeconfig `cueue cluster` writes once it is
 * ready: one cluster, one user and one context, all named "cueue", and
 * current-context set. Written atomically: a temp file in the same folder
 * (mode 0600), fsync'ed, then renamed over the target, so a reader never
 * sees a half-written file.
 */
#include "cu_apiserver.h"
#include "cu_base64.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Writes s as a double-quoted YAML scalar (JSON escaping is valid YAML). */
static void yaml_quoted(cu_buf *b, const char *s)
{
    cu_buf_puts(b, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            cu_buf_printf(b, "\\%c", c);
        else if (c < 0x20)
            cu_buf_printf(b, "\\x%02x", c);
        else
            cu_buf_append(b, s, 1);
    }
    cu_buf_puts(b, "\"");
}

cu_err cu_kubeconfig_write(const char *path, const char *url, const char *ca_pem, const char *token,
                           char *err, size_t errn)
{
    cu_buf b;
    cu_buf_init(&b, 1 << 20);
    cu_buf_puts(&b, "# Written by `cueue cluster` for this run of the embedded cluster.\n"
                    "apiVersion: v1\nkind: Config\nclusters:\n- name: cueue\n  cluster:\n"
                    "    server: ");
    yaml_quoted(&b, url);
    cu_buf_puts(&b, "\n");
    if (ca_pem) {
        char *b64 = cu_base64_encode(ca_pem, strlen(ca_pem));
        if (!b64) {
            cu_buf_free(&b);
            snprintf(err, errn, "%s: out of memory", path);
            return CU_ENOMEM;
        }
        cu_buf_printf(&b, "    certificate-authority-data: %s\n", b64);
        free(b64);
    }
    cu_buf_puts(&b, "contexts:\n- name: cueue\n  context:\n    cluster: cueue\n    user: cueue\n"
                    "current-context: cueue\nusers:\n- name: cueue\n  user:");
    if (token) {
        cu_buf_puts(&b, "\n    token: ");
        yaml_quoted(&b, token);
        cu_buf_puts(&b, "\n");
    } else {
        cu_buf_puts(&b, " {}\n");
    }
    cu_buf_puts(&b, "preferences: {}\n");
    if (b.failed) {
        cu_buf_free(&b);
        snprintf(err, errn, "%s: out of memory", path);
        return CU_ENOMEM;
    }

    size_t pl = strlen(path);
    char *tmp = malloc(pl + 16);
    if (!tmp) {
        cu_buf_free(&b);
        snprintf(err, errn, "%s: out of memory", path);
        return CU_ENOMEM;
    }
    snprintf(tmp, pl + 16, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        snprintf(err, errn, "cannot write kubeconfig %s: %s", path, strerror(errno));
        free(tmp);
        cu_buf_free(&b);
        return CU_EIO;
    }
    const char *p = cu_buf_str(&b);
    size_t left = b.len;
    int ok = fchmod(fd, 0600) == 0;
    while (ok && left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            ok = 0;
            break;
        }
        p += w;
        left -= (size_t)w;
    }
    if (ok)
        ok = fsync(fd) == 0;
    if (close(fd) != 0)
        ok = 0;
    if (ok)
        ok = rename(tmp, path) == 0;
    if (!ok) {
        snprintf(err, errn, "cannot write kubeconfig %s: %s", path, strerror(errno));
        unlink(tmp);
    }
    free(tmp);
    cu_buf_free(&b);
    return ok ? CU_OK : CU_EIO;
}
