/*
 * cu_base64.c - base64 encoders and decoders (see cu_base64.h).
 */
#include "cu_base64.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char STD[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char URL[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static char *encode(const unsigned char *d, size_t n, const char *tab, int pad)
{
    if (n > (SIZE_MAX - 1) / 4 * 3 - 3)
        return NULL;
    char *out = malloc((n + 2) / 3 * 4 + 1);
    if (!out)
        return NULL;
    size_t o = 0, i = 0;
    for (; i + 2 < n; i += 3) {
        unsigned v = (unsigned)d[i] << 16 | (unsigned)d[i + 1] << 8 | d[i + 2];
        out[o++] = tab[v >> 18 & 63];
        out[o++] = tab[v >> 12 & 63];
        out[o++] = tab[v >> 6 & 63];
        out[o++] = tab[v & 63];
    }
    if (i < n) {
        unsigned v = (unsigned)d[i] << 16 | (i + 1 < n ? (unsigned)d[i + 1] << 8 : 0);
        out[o++] = tab[v >> 18 & 63];
        out[o++] = tab[v >> 12 & 63];
        if (i + 1 < n)
            out[o++] = tab[v >> 6 & 63];
        else if (pad)
            out[o++] = '=';
        if (pad)
            out[o++] = '=';
    }
    out[o] = '\0';
    return out;
}

char *cu_base64_encode(const void *data, size_t n) { return encode(data, n, STD, 1); }

char *cu_base64url_encode(const void *data, size_t n) { return encode(data, n, URL, 0); }

static int b64val(int ch)
{
    if (ch >= 'A' && ch <= 'Z')
        return ch - 'A';
    if (ch >= 'a' && ch <= 'z')
        return ch - 'a' + 26;
    if (ch >= '0' && ch <= '9')
        return ch - '0' + 52;
    if (ch == '+' || ch == '-')
        return 62;
    if (ch == '/' || ch == '_')
        return 63;
    return -1;
}

/* token: the continue-token rules (see cu_base64url_decode). */
static char *decode(const char *s, size_t *len_out, int token)
{
    size_t n = strlen(s);
    char *out = malloc(n / 4 * 3 + 4);
    if (!out)
        return NULL;
    size_t o = 0;
    unsigned acc = 0;
    int bits = 0, pad = 0;
    for (size_t i = 0; i < n; i++) {
        int ch = (unsigned char)s[i];
        if (!token && (ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t'))
            continue;
        if (ch == '=') {
            if (token)
                break;
            pad++;
            continue;
        }
        int v = b64val(ch);
        if (v < 0 || pad) {
            free(out);
            return NULL;
        }
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (char)((acc >> bits) & 0xff);
        }
    }
    if (!token && (pad > 2 || bits >= 6)) {
        free(out);
        return NULL;
    }
    out[o] = '\0';
    if (len_out)
        *len_out = o;
    return out;
}

char *cu_base64_decode(const char *s, size_t *len) { return decode(s, len, 0); }

char *cu_base64url_decode(const char *s, size_t *len) { return decode(s, len, 1); }

int cu_base64_valid(const char *s, size_t n)
{
    if (n % 4)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '=') {
            if (i < n - 2 || (i == n - 2 && s[n - 1] != '='))
                return 0;
        } else if (!strchr(STD, c) || c == '\0') {
            return 0;
        }
    }
    return 1;
}
