/*
 * cu_sha1.c - SHA-1 as described in FIPS 180-4 section 6.1: 512-bit blocks,
 * an 80-word message schedule, four 20-round stages with functions
 * Ch / Parity / Maj / Parity and constants 5a827999, 6ed9eba1, 8f1bbcdc,
 * ca62c1d6; padding is 0x80, zeros, then the bit length big-endian.
 *
 * Invariant: s->nblk < 64 between calls; s->nbytes counts every byte fed.
 */
#include "cu_sha1.h"

#include <string.h>

static uint32_t rol32(uint32_t x, unsigned n) { return (x << n) | (x >> (32 - n)); }

static void sha1_block(uint32_t h[5], const unsigned char *p)
{
    uint32_t w[80];
    for (int t = 0; t < 16; t++)
        w[t] = (uint32_t)p[4 * t] << 24 | (uint32_t)p[4 * t + 1] << 16 |
               (uint32_t)p[4 * t + 2] << 8 | (uint32_t)p[4 * t + 3];
    for (int t = 16; t < 80; t++)
        w[t] = rol32(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1);

    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
    for (int t = 0; t < 80; t++) {
        uint32_t f, k;
        if (t < 20) {
            f = (b & c) ^ (~b & d);
            k = 0x5a827999u;
        } else if (t < 40) {
            f = b ^ c ^ d;
            k = 0x6ed9eba1u;
        } else if (t < 60) {
            f = (b & c) ^ (b & d) ^ (c & d);
            k = 0x8f1bbcdcu;
        } else {
            f = b ^ c ^ d;
            k = 0xca62c1d6u;
        }
        uint32_t tmp = rol32(a, 5) + f + e + k + w[t];
        e = d;
        d = c;
        c = rol32(b, 30);
        b = a;
        a = tmp;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
}

void cu_sha1_init(cu_sha1 *s)
{
    s->h[0] = 0x67452301u;
    s->h[1] = 0xefcdab89u;
    s->h[2] = 0x98badcfeu;
    s->h[3] = 0x10325476u;
    s->h[4] = 0xc3d2e1f0u;
    s->nbytes = 0;
    s->nblk = 0;
}

void cu_sha1_update(cu_sha1 *s, const void *data, size_t n)
{
    const unsigned char *p = data;
    s->nbytes += n;
    while (n > 0) {
        size_t take = 64 - s->nblk;
        if (take > n)
            take = n;
        memcpy(s->blk + s->nblk, p, take);
        s->nblk += take;
        p += take;
        n -= take;
        if (s->nblk == 64) {
            sha1_block(s->h, s->blk);
            s->nblk = 0;
        }
    }
}

void cu_sha1_final(cu_sha1 *s, unsigned char out[20])
{
    uint64_t bits = s->nbytes * 8;
    s->blk[s->nblk++] = 0x80;
    if (s->nblk > 56) {
        memset(s->blk + s->nblk, 0, 64 - s->nblk);
        sha1_block(s->h, s->blk);
        s->nblk = 0;
    }
    memset(s->blk + s->nblk, 0, 56 - s->nblk);
    for (int i = 0; i < 8; i++)
        s->blk[56 + i] = (unsigned char)(bits >> (56 - 8 * i));
    sha1_block(s->h, s->blk);
    for (int i = 0; i < 5; i++) {
        out[4 * i] = (unsigned char)(s->h[i] >> 24);
        out[4 * i + 1] = (unsigned char)(s->h[i] >> 16);
        out[4 * i + 2] = (unsigned char)(s->h[i] >> 8);
        out[4 * i + 3] = (unsigned char)s->h[i];
    }
}

void cu_sha1_hex(const void *data, size_t n, char out[41])
{
    static const char hex[] = "0123456789abcdef";
    unsigned char dg[20];
    cu_sha1 s;
    cu_sha1_init(&s);
    cu_sha1_update(&s, data, n);
    cu_sha1_final(&s, dg);
    for (int i = 0; i < 20; i++) {
        out[2 * i] = hex[dg[i] >> 4];
        out[2 * i + 1] = hex[dg[i] & 15];
    }
    out[40] = '\0';
}
