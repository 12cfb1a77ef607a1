/*
 * cu_log.c - text and JSON log lines (see cu_log.h for the format).
 *
 * A line is built in a fixed buffer by a writer that refuses any piece
 * (one escaped character, one separator) that would cross the content
 * limit; the last CU_LOG_RESERVE bytes stay free for the truncation
 * marker and the line end, so a cut line is still well-formed.
 */
#include "cu_log.h"
#include "cu_json.h"

#include <stdint.h>
#include <string.h>

#define CU_LOG_RESERVE 32

typedef enum { ESC_JSON, ESC_TEXT_QUOTED, ESC_TEXT_BARE, ESC_TEXT_KEY } esc_mode;

typedef struct lw {
    char *b;
    size_t len;
    size_t lim;  /* content limit; the reserve lies above it */
    int trunc;   /* a piece did not fit: nothing more is added */
    int in_str;  /* the cut happened inside a quoted string */
    int in_bare; /* the cut happened inside an unquoted text value */
} lw;

static int put(lw *w, const char *s, size_t n)
{
    if (w->trunc)
        return -1;
    if (n > w->lim - w->len) {
        w->trunc = 1;
        return -1;
    }
    memcpy(w->b + w->len, s, n);
    w->len += n;
    return 0;
}

/* Appends past the content limit (closing pieces only; the reserve holds them). */
static void put_final(lw *w, const char *s)
{
    size_t n = strlen(s);
    if (w->len + n <= CU_LOG_LINE_MAX) {
        memcpy(w->b + w->len, s, n);
        w->len += n;
    }
}

static int key_char_ok(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == ':' || c == '/' || c == '-';
}

/* Appends s escaped for mode, one character at a time. -1 once cut. */
static int put_escaped(lw *w, const char *s, esc_mode mode)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s;
    size_t avail = strlen(s);
    while (avail > 0) {
        unsigned char c = *p;
        char tmp[CU_JSON_ESC_MAX];
        const char *piece = tmp;
        size_t n = 0, adv = 1;
        if (mode == ESC_JSON) {
            n = cu_json_escape_char((const char *)p, avail, CU_JESC_LOG, tmp, &adv);
        } else if (mode == ESC_TEXT_KEY) {
            tmp[0] = key_char_ok(c) ? (char)c : '_';
            n = 1;
            if (c >= 0x80) { /* one '_' per character, not per byte */
                size_t l = cu_utf8_decode(p, avail, NULL);
                adv = l ? l : 1;
            }
        } else if (c == '"' || c == '\\') {
            tmp[0] = '\\', tmp[1] = (char)c, n = 2;
        } else if (c < 0x20 || c == 0x7f) {
            char e = c == '\n' ? 'n' : c == '\r' ? 'r' : c == '\t' ? 't' : 0;
            if (e) {
                tmp[0] = '\\', tmp[1] = e, n = 2;
            } else {
                tmp[0] = '\\', tmp[1] = 'x', tmp[2] = hex[c >> 4], tmp[3] = hex[c & 15], n = 4;
            }
        } else if (c < 0x80) {
            tmp[0] = (char)c, n = 1;
        } else {
            size_t l = cu_utf8_decode(p, avail, NULL);
            if (l) {
                piece = (const char *)p, n = l, adv = l;
            } else {
                piece = "\xEF\xBF\xBD", n = 3; /* U+FFFD for each bad byte */
            }
        }
        if (put(w, piece, n))
            return -1;
        p += adv;
        avail -= adv;
    }
    return 0;
}

static int text_needs_quotes(const char *s)
{
    if (!s || !*s)
        return 1;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p == ' ' || *p == '"' || *p == '=' || *p == '\\' || *p < 0x20 || *p == 0x7f)
            return 1;
    return 0;
}

/* A text value or message: bare or quoted. */
static void text_value(lw *w, const char *v)
{
    if (text_needs_quotes(v)) {
        if (put(w, "\"", 1))
            return;
        w->in_str = 1;
        if (v && put_escaped(w, v, ESC_TEXT_QUOTED))
            return;
        if (put(w, "\"", 1))
            return;
        w->in_str = 0;
    } else {
        w->in_bare = 1;
        if (put_escaped(w, v, ESC_TEXT_BARE))
            return;
        w->in_bare = 0;
    }
}

/* A JSON string value (NULL: null). */
static void json_value(lw *w, const char *v)
{
    if (!v) {
        put(w, "null", 4);
        return;
    }
    if (put(w, "\"", 1))
        return;
    w->in_str = 1;
    if (put_escaped(w, v, ESC_JSON))
        return;
    if (put(w, "\"", 1))
        return;
    w->in_str = 0;
}

static int json_reserved(const char *k)
{
    return !strcmp(k, "ts") || !strcmp(k, "level") || !strcmp(k, "msg") || !strcmp(k, "truncated");
}

/* One key-value pair; a pair whose key does not fit is dropped whole. */
static void member(lw *w, int json, const char *k, const char *v)
{
    size_t mark = w->len;
    int bad;
    if (json)
        bad = put(w, ",\"", 2) || put_escaped(w, k, ESC_JSON) ||
              (json_reserved(k) && put(w, "_", 1)) || put(w, "\":", 2);
    else
        bad = put(w, " ", 1) || (*k ? put_escaped(w, k, ESC_TEXT_KEY) : put(w, "_", 1)) ||
              put(w, "=", 1);
    if (bad) {
        w->len = mark;
        return;
    }
    size_t vstart = w->len;
    if (json)
        json_value(w, v);
    else
        text_value(w, v);
    if (w->trunc && w->len == vstart) /* not even the value's first piece fit */
        w->len = mark;
}

static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

void cu_log_time_format(int64_t ms, char *out, size_t n)
{
    int64_t secs = ms / 1000, frac = ms % 1000;
    if (frac < 0) {
        frac += 1000;
        secs--;
    }
    int64_t days = secs / 86400, sod = secs % 86400;
    if (sod < 0) {
        sod += 86400;
        days--;
    }
    int64_t y;
    unsigned mo, d;
    civil_from_days(days, &y, &mo, &d);
    snprintf(out, n, "%04lld-%02u-%02uT%02d:%02d:%02d.%03dZ", (long long)y, mo, d,
             (int)(sod / 3600), (int)(sod / 60 % 60), (int)(sod % 60), (int)frac);
}

void cu_log_init(cu_log *l, FILE *out, cu_log_format fmt, int verbosity, cu_clock clock)
{
    l->out = out;
    l->fmt = fmt;
    l->verbosity = verbosity;
    l->clock = clock;
}

int cu_log_enabled(const cu_log *l, int v, const char *level)
{
    if (!l || !l->out)
        return 0;
    return (level && !strcmp(level, "error")) || v <= l->verbosity;
}

void cu_log_vkv(cu_log *l, int v, const char *level, const char *msg, va_list ap)
{
    if (!level)
        level = "info";
    if (!cu_log_enabled(l, v, level))
        return;
    char buf[CU_LOG_LINE_MAX];
    lw w = { .b = buf, .len = 0, .lim = CU_LOG_LINE_MAX - CU_LOG_RESERVE };
    int json = l->fmt == CU_LOG_JSON;
    char ts[64];
    cu_log_time_format(l->clock.now_ms ? cu_clock_now(&l->clock) : 0, ts, sizeof(ts));
    if (!msg)
        msg = "";

    if (json) {
        put(&w, "{\"ts\":\"", 7);
        put(&w, ts, strlen(ts));
        put(&w, "\",\"level\":", 10);
        json_value(&w, level);
        put(&w, ",\"msg\":", 7);
        json_value(&w, msg);
    } else {
        put(&w, ts, strlen(ts));
        put(&w, " ", 1);
        text_value(&w, level);
        put(&w, " ", 1);
        text_value(&w, msg);
    }
    for (;;) {
        const char *k = va_arg(ap, const char *);
        if (!k)
            break;
        const char *val = va_arg(ap, const char *);
        if (!w.trunc)
            member(&w, json, k, val);
    }

    if (json) {
        if (w.trunc) {
            if (w.in_str)
                put_final(&w, "\xE2\x80\xA6\"");
            put_final(&w, ",\"truncated\":true");
        }
        put_final(&w, "}\n");
    } else {
        if (w.trunc)
            put_final(&w, w.in_str    ? "\xE2\x80\xA6\""
                          : w.in_bare ? "\xE2\x80\xA6"
                                      : " \xE2\x80\xA6");
        put_final(&w, "\n");
    }
    fwrite(buf, 1, w.len, l->out);
    fflush(l->out);
}

void cu_log_kv(cu_log *l, int v, const char *level, const char *msg, ...)
{
    va_list ap;
    va_start(ap, msg);
    cu_log_vkv(l, v, level, msg, ap);
    va_end(ap);
}

/* Calls cu_log_vkv with an empty key-value list. */
static void log_msg_only(cu_log *l, int v, const char *level, const char *msg, ...)
{
    va_list ap;
    va_start(ap, msg);
    cu_log_vkv(l, v, level, msg, ap);
    va_end(ap);
}

void cu_logf(cu_log *l, int v, const char *level, const char *fmt, ...)
{
    if (!cu_log_enabled(l, v, level ? level : "info"))
        return;
    char msg[CU_LOG_LINE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    log_msg_only(l, v, level, msg, (const char *)NULL);
}

cu_err cu_log_format_parse(const char *s, cu_log_format *out)
{
    if (s && !strcmp(s, "text")) {
        *out = CU_LOG_TEXT;
        return CU_OK;
    }
    if (s && !strcmp(s, "json")) {
        *out = CU_LOG_JSON;
        return CU_OK;
    }
    return CU_EINVAL;
}
