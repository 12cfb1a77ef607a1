/*
 * cu_sha1.h - SHA-1 (FIPS 180-4), used only to reproduce Kueue's Workload
 * names for Jobs. Not for anything security related.
 */
#ifndef CU_SHA1_H
#define CU_SHA1_H

#include <stddef.h>
#include <stdint.h>

typedef struct cu_sha1 {
    uint32_t h[5];
    uint64_t nbytes;       /* message length so far */
    unsigned char blk[64]; /* pending partial block */
    size_t nblk;
} cu_sha1;

/* Starts a new digest in s (no allocation). */
void cu_sha1_init(cu_sha1 *s);
/* Feeds n bytes of data (borrowed) into s. */
void cu_sha1_update(cu_sha1 *s, const void *data, size_t n);
/* Finishes s and writes the 20-byte digest to out; s must be re-initialized
 * before reuse. */
void cu_sha1_final(cu_sha1 *s, unsigned char out[20]);
/* One-shot: writes the lowercase hex digest of data (40 chars + NUL) to out. */
void cu_sha1_hex(const void *data, size_t n, char out[41]);

#endif
