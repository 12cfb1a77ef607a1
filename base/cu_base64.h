/*
 * cu_base64.h - base64 (RFC 4648) in the flavours Kubernetes uses: the
 * standard alphabet with padding ([]byte fields, kubeconfig *-data), and
 * the URL alphabet without padding (list continue tokens).
 *
 * Decoders accept both alphabets ('+' or '-' is 62, '/' or '_' is 63).
 * Decoded bytes may hold NULs: use the returned length; a NUL is appended
 * after them for text.
 */
#ifndef CU_BASE64_H
#define CU_BASE64_H

#include <stddef.h>

/* The standard padded encoding of n bytes of data: a new string, caller
 * frees; NULL when out of memory. */
char *cu_base64_encode(const void *data, size_t n);

/* The URL-alphabet encoding without padding: a new string, caller frees;
 * NULL when out of memory. */
char *cu_base64url_encode(const void *data, size_t n);

/* Decodes s leniently, as kubeconfig readers do: white space skipped,
 * padding optional; refuses other characters, data after '=', more than
 * two '=', or a lone final character. Returns a new buffer (caller frees)
 * with *len (when not NULL) its length, or NULL when s is not base64 or
 * out of memory. */
char *cu_base64_decode(const char *s, size_t *len);

/* Decodes a continue token: stops at the first '=', no white space,
 * bits left over at the end are dropped. Returns a new buffer (caller
 * frees) with *len (when not NULL) its length, or NULL on any other
 * character or out of memory. */
char *cu_base64url_decode(const char *s, size_t *len);

/* 1 when n bytes of s are what Go's base64.StdEncoding accepts (a []byte
 * field of an API object, e.g. a Secret's data): a multiple of 4 of the
 * standard alphabet, '=' only as the last one or two. "" is valid. */
int cu_base64_valid(const char *s, size_t n);

#endif
