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

/* Generates a CA and a client certificate (TLS client authentication)
 * with common name cn signed by it, as the front proxy of an API server
 * presents to aggregated servers. Returns malloc'ed PEM strings. */
cu_err cu_tls_generate_client(const char *cn, char **ca_pem, char **cert_pem, char **key_pem,
                              char *err, size_t errn);

#endif
