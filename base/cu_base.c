/*
 * cu_base.c - errors, arena, bounded buffers, diagnostics, time helpers.
 *
 * Arena invariant: chunks form a singly linked list, newest first; every
 * pointer handed out stays valid until cu_arena_free.
 */
#include "cu_base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *cu_strerror(cu_err err)
{
    switch (err) {
    case CU_OK: return "ok";
    case CU_ENOMEM: return "out of memory";
    case CU_EINVAL: return "invalid input";
    case CU_EOVERFLOW: return "overflow";
    case CU_ENOTFOUND: return "not found";
    case CU_EEXIST: return "already exists";
    case CU_ECONFLICT: return "conflict";
    case CU_EGONE: return "gone";
    case CU_EIO: return "i/o error";
    case CU_ESYNTAX: return "syntax error";
    case CU_ETRANSIENT: return "transient error";
    }
    return "unknown error";
}

void cu_assert_fail(const char *expr, const char *file, int line)
{
    fprintf(stderr, "cueue: internal error: assertion '%s' failed at %s:%d\n", expr, file, line);
    abort();
}

/* ---------------- arena ---------------- */

struct cu_arena_chunk {
    cu_arena_chunk *next;
    size_t used, size;
    max_align_t data[]; /* payload */
};

void cu_arena_init(cu_arena *a, size_t chunk_size)
{
    a->head = NULL;
    a->chunk_size = chunk_size ? chunk_size : 64 * 1024;
    a->total = 0;
}

void *cu_arena_alloc(cu_arena *a, size_t n)
{
    size_t need = (n + 15) & ~(size_t)15;
    if (need < n)
        return NULL;
    cu_arena_chunk *c = a->head;
    if (!c || c->size - c->used < need) {
        size_t size = a->chunk_size;
        if (need > size / 4) {
            /* big allocation: its own chunk, kept behind the current one
             * so the current chunk's free space is not wasted */
            size = need;
        }
        cu_arena_chunk *nc = malloc(sizeof(*nc) + size);
        if (!nc)
            return NULL;
        nc->used = 0;
        nc->size = size;
        if (size == need && c) {
            nc->next = c->next;
            c->next = nc;
        } else {
            nc->next = c;
            a->head = nc;
        }
        c = nc;
    }
    void *p = (char *)c->data + c->used;
    c->used += need;
    a->total += need;
    memset(p, 0, n);
    return p;
}

char *cu_arena_strndup(cu_arena *a, const char *s, size_t n)
{
    if (!s)
        return NULL;
    char *p = cu_arena_alloc(a, n + 1);
    if (!p)
        return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *cu_arena_strdup(cu_arena *a, const char *s)
{
    return s ? cu_arena_strndup(a, s, strlen(s)) : NULL;
}

char *cu_arena_printf(cu_arena *a, const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        va_end(ap2);
        return NULL;
    }
    char *p = cu_arena_alloc(a, (size_t)n + 1);
    if (p)
        vsnprintf(p, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return p;
}

void cu_arena_free(cu_arena *a)
{
    cu_arena_chunk *c = a->head;
    while (c) {
        cu_arena_chunk *next = c->next;
        free(c);
        c = next;
    }
    a->head = NULL;
    a->total = 0;
}

/* ---------------- buf ---------------- */

int cu_vec_reserve(void *itemsp, size_t n, size_t *cap, size_t elem, size_t first)
{
    if (n < *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : first;
    if (nc <= *cap || nc > SIZE_MAX / elem)
        return -1;
    void *items;
    memcpy(&items, itemsp, sizeof(items));
    void *p = realloc(items, nc * elem);
    if (!p)
        return -1;
    memcpy(itemsp, &p, sizeof(p));
    *cap = nc;
    return 0;
}

void cu_buf_init(cu_buf *b, size_t limit)
{
    b->data = NULL;
    b->len = b->cap = 0;
    b->limit = limit ? limit : (size_t)256 << 20;
    b->failed = 0;
}

static cu_err buf_reserve(cu_buf *b, size_t extra)
{
    if (b->failed)
        return CU_ENOMEM;
    if (extra > b->limit || b->len + extra + 1 > b->limit) {
        b->failed = 1;
        return CU_ENOMEM;
    }
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return CU_OK;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need)
        cap *= 2;
    if (cap > b->limit)
        cap = b->limit;
    char *p = realloc(b->data, cap);
    if (!p) {
        b->failed = 1;
        return CU_ENOMEM;
    }
    b->data = p;
    b->cap = cap;
    return CU_OK;
}

cu_err cu_buf_append(cu_buf *b, const char *s, size_t n)
{
    cu_err err = buf_reserve(b, n);
    if (err)
        return err;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
    return CU_OK;
}

cu_err cu_buf_puts(cu_buf *b, const char *s) { return cu_buf_append(b, s, strlen(s)); }

cu_err cu_buf_vprintf(cu_buf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return CU_EINVAL;
    cu_err err = buf_reserve(b, (size_t)n);
    if (err)
        return err;
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
    return CU_OK;
}

cu_err cu_buf_printf(cu_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cu_err err = cu_buf_vprintf(b, fmt, ap);
    va_end(ap);
    return err;
}

void cu_buf_free(cu_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
    b->failed = 0;
}

const char *cu_buf_str(const cu_buf *b) { return b->data ? b->data : ""; }

/* ---------------- diag ---------------- */

void cu_diag_init(cu_diag *d)
{
    memset(d, 0, sizeof(*d));
    d->max = 1000;
}

static void diag_add(cu_diag *d, const char *prefix, const char *fmt, va_list ap)
{
    if (d->n >= d->max) {
        d->dropped++;
        return;
    }
    char tmp[2048];
    size_t pl = strlen(prefix);
    memcpy(tmp, prefix, pl);
    vsnprintf(tmp + pl, sizeof(tmp) - pl, fmt, ap);
    if (cu_vec_reserve(&d->msgs, d->n, &d->cap, sizeof(*d->msgs), 16)) {
        d->dropped++;
        return;
    }
    char *m = strdup(tmp);
    if (!m) {
        d->dropped++;
        return;
    }
    d->msgs[d->n++] = m;
}

void cu_diag_error(cu_diag *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    diag_add(d, "", fmt, ap);
    va_end(ap);
    d->nerrors++;
}

void cu_diag_warn(cu_diag *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    diag_add(d, "warning: ", fmt, ap);
    va_end(ap);
}

void cu_diag_free(cu_diag *d)
{
    for (size_t i = 0; i < d->n; i++)
        free(d->msgs[i]);
    free(d->msgs);
    memset(d, 0, sizeof(*d));
}

/* ---------------- UTF-8 ---------------- */

size_t cu_utf8_decode(const unsigned char *p, size_t avail, uint32_t *cp)
{
    if (avail == 0)
        return 0;
    unsigned char c = p[0];
    size_t len;
    uint32_t v, min;
    if (c < 0x80) {
        len = 1, v = c, min = 0;
    } else if ((c & 0xE0) == 0xC0) {
        len = 2, v = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
        len = 3, v = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
        len = 4, v = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (avail < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        v = (v << 6) | (p[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        return 0;
    if (cp)
        *cp = v;
    return len;
}

int cu_yaml_nonprintable(uint32_t cp)
{
    return cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F) || cp == 0x2028 || cp == 0x2029 ||
           cp == 0xFEFF || cp == 0xFFFE || cp == 0xFFFF;
}

/* ---------------- time ---------------- */

int64_t cu_clock_fake_now(void *ud) { return *(const int64_t *)ud; }

/* days since 1970-01-01 for a civil date (proleptic Gregorian). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

void cu_time_format(int64_t ms, char *out, size_t n)
{
    int64_t secs = ms >= 0 ? ms / 1000 : (ms - 999) / 1000;
    int64_t z = (secs >= 0 ? secs : secs - 86399) / 86400;
    int64_t sod = secs - z * 86400;
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t y = (int64_t)yoe + era * 400;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    unsigned d = doy - (153 * mp + 2) / 5 + 1;
    unsigned m = mp < 10 ? mp + 3 : mp - 9;
    y += m <= 2;
    snprintf(out, n, "%04lld-%02u-%02uT%02d:%02d:%02dZ", (long long)y, m, d, (int)(sod / 3600),
             (int)(sod / 60 % 60), (int)(sod % 60));
}

static int parse_digits(const char **p, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        char c = (*p)[i];
        if (c < '0' || c > '9')
            return -1;
        v = v * 10 + (c - '0');
    }
    *p += n;
    *out = v;
    return 0;
}

cu_err cu_time_parse(const char *s, int64_t *ms)
{
    int Y, M, D, h, mi, sec;
    const char *p = s;
    if (parse_digits(&p, 4, &Y) || *p++ != '-' || parse_digits(&p, 2, &M) || *p++ != '-' ||
        parse_digits(&p, 2, &D) || (*p != 'T' && *p != 't' && *p != ' '))
        return CU_EINVAL;
    p++;
    if (parse_digits(&p, 2, &h) || *p++ != ':' || parse_digits(&p, 2, &mi) || *p++ != ':' ||
        parse_digits(&p, 2, &sec))
        return CU_EINVAL;
    if (M < 1 || M > 12 || D < 1 || D > 31 || h > 23 || mi > 59 || sec > 60)
        return CU_EINVAL;
    int frac_ms = 0;
    if (*p == '.') {
        p++;
        int digits = 0;
        while (*p >= '0' && *p <= '9') {
            if (digits < 3)
                frac_ms = frac_ms * 10 + (*p - '0');
            digits++;
            p++;
        }
        if (digits == 0)
            return CU_EINVAL;
        for (int i = digits; i < 3; i++)
            frac_ms *= 10;
    }
    int64_t offset = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int sign = *p == '-' ? -1 : 1, oh, om;
        p++;
        if (parse_digits(&p, 2, &oh) || *p++ != ':' || parse_digits(&p, 2, &om))
            return CU_EINVAL;
        offset = sign * (int64_t)(oh * 3600 + om * 60);
    } else {
        return CU_EINVAL;
    }
    if (*p)
        return CU_EINVAL;
    int64_t days = days_from_civil(Y, (unsigned)M, (unsigned)D);
    *ms = ((days * 86400 + h * 3600 + mi * 60 + sec) - offset) * 1000 + frac_ms;
    return CU_OK;
}
