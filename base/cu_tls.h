/*
 * cu_tls.h - certificates generated for one run (GnuTLS): the embedded
 * cluster's HTTPS, and the controller's secure metrics server when no
 * certificate files are given (as controller-runtime's metrics server
 * generates a self-signed one).
 */
#ifndef CU_TLS_H
#define CU_TLS_H

#include <stddef.h>
#include <stdint.h>

#include "cu_base.h"

/* Generates a CA and a server certificate signed by it, valid for
 * 127.0.0.1, ::1, localhost and host (when not NULL and not a wildcard).
 * Returns malloc'ed PEM strings (caller frees). */
cu_err cu_tls_generate(const char *host, char **ca_pem, char **cert_pem, char **key_pem, char *err,
                       size_t errn);

/* Generates a CA and a client certificate (TLS client authentication)
 * with common name cn signed by it, as the front proxy of an API server
 * presents to aggregated servers. Returns malloc'ed PEM strings. */
cu_err cu_tls_generate_client(const char *cn, char **ca_pem, char **cert_pem, char **key_pem,
                              char *err, size_t errn);

/* A serving certificate to issue (cu_tls_issue_server). */
typedef struct cu_tls_issue {
    const char *ca_cn;        /* the CA's common name (NULL: "cueue-ca") */
    const char *cn;           /* the certificate's (NULL: "cueue-apiserver") */
    const char *org;          /* both subjects' organization (NULL: "cueue") */
    const char *const *names; /* subject alternative names: IP addresses or DNS names */
    size_t nnames;
    int64_t valid_s; /* both valid from an hour ago for this long (0: a year) */
} cu_tls_issue;

/* Generates a CA and a server certificate signed by it as o says.
 * Returns malloc'ed PEM strings (caller frees), the CA's key too. */
cu_err cu_tls_issue_server(const cu_tls_issue *o, char **ca_pem, char **ca_key_pem, char **cert_pem,
                           char **key_pem, char *err, size_t errn);

/* The notAfter of the first certificate in pem (seconds since the epoch).
 * CU_EINVAL with the problem in err when it cannot be read. */
cu_err cu_tls_cert_expiry(const char *pem, int64_t *not_after, char *err, size_t errn);

/* 1 when cert_pem is signed by ca_pem, key_pem is its key, it names name
 * (a DNS name or an IP address; NULL: not checked), and both it and the CA
 * are valid at time at (seconds since the epoch); else 0 with why. */
int cu_tls_server_ok(const char *ca_pem, const char *cert_pem, const char *key_pem,
                     const char *name, int64_t at, char *why, size_t n);

#endif
