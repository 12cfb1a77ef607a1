/*
 * cu_log.h - the controller's logger: one line per event, text or JSON,
 * filtered by verbosity. No globals: the controller owns a cu_log and
 * passes it to whoever logs.
 *
 * Text:  2026-11-29T17:20:01.123Z info admitted workload="ns/a b" clusterQueue=cq
 *   The message and the values are quoted only when they are empty or
 *   contain a space, '"', '=', '\' or a control character; inside quotes
 *   '"' and '\' are backslash-escaped, \n \r \t are written as such and
 *   other control characters as \xNN. Keys keep [A-Za-z0-9_.:/-] and get
 *   '_' for anything else.
 * JSON:  {"ts":"2026-11-29T17:20:01.123Z","level":"info","msg":"admitted","workload":"ns/a b"}
 *   One object per line; strings escaped per RFC 8259 (control characters
 *   as \n, \t, ... or \u00NN). Keys "ts", "level", "msg" and "truncated"
 *   are reserved: a key-value pair using one is written with a trailing
 *   '_' ("msg_").
 * Both: invalid UTF-8 is replaced by U+FFFD; a NULL value is written as
 *   "" (text) or null (JSON); a line is at most CU_LOG_LINE_MAX bytes
 *   including its newline: a longer one is cut at a character boundary,
 *   marked with "…" (text, and inside the cut JSON string) and, in JSON,
 *   "truncated":true. Each line goes out with one fwrite and one fflush,
 *   so lines of one process never interleave.
 */
#ifndef CU_LOG_H
#define CU_LOG_H

#include <stdarg.h>
#include <stdio.h>

#include "cu_base.h"

#define CU_LOG_LINE_MAX 16384

typedef enum { CU_LOG_TEXT, CU_LOG_JSON } cu_log_format;

typedef struct cu_log {
    FILE *out; /* borrowed; NULL: logging is off */
    cu_log_format fmt;
    int verbosity;  /* -v N: lines with v <= verbosity are written */
    cu_clock clock; /* timestamps; now_ms NULL: the epoch */
} cu_log;

/* Initializes l; borrows out (not closed by the logger). */
void cu_log_init(cu_log *l, FILE *out, cu_log_format fmt, int verbosity, cu_clock clock);

/* 1 when a line at verbosity v and this level would be written: errors
 * always, other levels when v <= l->verbosity. */
int cu_log_enabled(const cu_log *l, int v, const char *level);

/* Writes one line. level: "info", "error" (NULL = "info"); msg: the event;
 * then NULL-terminated key, value string pairs (all borrowed):
 *   cu_log_kv(l, 0, "info", "admitted", "workload", "ns/a", "clusterQueue", "cq", NULL); */
void cu_log_kv(cu_log *l, int v, const char *level, const char *msg, ...);
void cu_log_vkv(cu_log *l, int v, const char *level, const char *msg, va_list ap);

/* Writes one line whose message is printf-formatted (no key-value pairs). */
void cu_logf(cu_log *l, int v, const char *level, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Parses "text" or "json" (the --log-format value). CU_EINVAL otherwise. */
cu_err cu_log_format_parse(const char *s, cu_log_format *out);

/* Formats ms since the epoch as "YYYY-MM-DDTHH:MM:SS.mmmZ" into out
 * (n >= 25). */
void cu_log_time_format(int64_t ms, char *out, size_t n);

#endif
