/*
 * cu_sha256.h - SHA-256 (through GnuTLS), used to reproduce Kueue's pod
 * role hash. Not for anything security related.
 */
#ifndef CU_SHA256_H
#define CU_SHA256_H

#include <stddef.h>

/* Writes the lowercase hex SHA-256 digest of data (64 chars + NUL) to
 * out. Returns 0, or -1 when the digest cannot be computed (out is then
 * the empty string). */
int cu_sha256_hex(const void *data, size_t n, char out[65]);

#endif
