/*
 * cu_tls.h - certificates generated for one run (GnuTLS): the embedded
 * cluster's HTTPS, and the controller's secure metrics server when no
 * certificate files are given (as controller-runtime's metrics server
 * generates a self-signed one).
 */
#ifndef CU_TLS_H
#define CU_TLS_H

#include <stddef.h>

#include "cu_base.h"

/* Generates a CA and a server certificate signed by it, valid for
 * 127.0.0.1, ::1, localhost and host (when not NULL and not a wildcard).
 * Returns malloc'ed PEM strings (caller frees). */
cu_err cu_tls_generate(const char *host, char **ca_pem, char **cert_pem, char **key_pem, char *err,
                       size_t errn);

#endif
