/*
 * cu_sha256.c - SHA-256 hex digests through GnuTLS.
 */
#include "cu_sha256.h"

#include <gnutls/crypto.h>
#include <stdio.h>

int cu_sha256_hex(const void *data, size_t n, char out[65])
{
    unsigned char dg[32];
    out[0] = '\0';
    if (gnutls_hash_fast(GNUTLS_DIG_SHA256, data, n, dg) != 0)
        return -1;
    for (size_t i = 0; i < sizeof(dg); i++)
        snprintf(out + 2 * i, 3, "%02x", dg[i]);
    return 0;
}
