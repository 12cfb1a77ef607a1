/*
 * cu_hash.h - the one string hash of the tree: 64-bit FNV-1a with the
 * offset basis every former copy used, 1469598103934665603 (one digit
 * short of FNV's 14695981039346656037: so not the published FNV-1a
 * values, but the values the tree has always computed; kept).
 *
 * For hash tables and for fingerprints that fold several fields. Values
 * are stable across runs and machines (no seed), so a caller may persist
 * or compare them; do not change the algorithm. Not for anything an
 * adversary may aim at where collisions matter (use SHA-1, cu_sha1.h).
 *
 * Folding several fields: start from CU_HASH_INIT and fold each with
 * cu_hash_bytes (fixed-size fields) or cu_hash_field (strings, followed
 * by a 0xFF separator, a byte no UTF-8 text holds, so ("ab","c") and
 * ("a","bc") differ). To fold a string with its NUL as the separator,
 * fold strlen(s) + 1 bytes.
 */
#ifndef CU_HASH_H
#define CU_HASH_H

#include <stddef.h>
#include <stdint.h>

#define CU_HASH_INIT UINT64_C(1469598103934665603) /* the tree's offset basis (above) */
#define CU_HASH_PRIME UINT64_C(1099511628211)

/* Folds n bytes at p into h. Borrows p. */
static inline uint64_t cu_hash_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= CU_HASH_PRIME;
    }
    return h;
}

/* The hash of the NUL-terminated s (its NUL not included). */
static inline uint64_t cu_hash_str(const char *s)
{
    uint64_t h = CU_HASH_INIT;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        h ^= *p;
        h *= CU_HASH_PRIME;
    }
    return h;
}

/* Folds the bytes of s (NULL: none) and then a 0xFF separator into h. */
static inline uint64_t cu_hash_field(uint64_t h, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; p && *p; p++) {
        h ^= *p;
        h *= CU_HASH_PRIME;
    }
    h ^= 0xFF;
    h *= CU_HASH_PRIME;
    return h;
}

#endif
