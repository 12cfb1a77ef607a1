/*
 * cu_base.h - the few things every Cueue module shares: the one error enum,
 * a bump arena, a bounded growable buffer, a diagnostics list and the
 * injected clock.
 *
 * Conventions (see docs/DEVELOPING.md):
 *  - every public symbol carries its module prefix (cu_ here);
 *  - functions that can fail return cu_err (CU_OK == 0), results go to
 *    out-parameters; constructors return NULL on failure;
 *  - every prototype comment states ownership: "borrows", "takes",
 *    "returns a new ..., caller frees with ...", "arena-owned";
 *  - no mutable globals outside main().
 */
#ifndef CU_BASE_H
#define CU_BASE_H

#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>

typedef enum cu_err {
    CU_OK = 0,
    CU_ENOMEM = -1,    /* allocation failed or a buffer hit its bound */
    CU_EINVAL = -2,    /* bad input (the diag list says what) */
    CU_EOVERFLOW = -3, /* arithmetic would overflow int64 */
    CU_ENOTFOUND = -4,
    CU_EEXIST = -5,
    CU_ECONFLICT = -6,
    CU_EGONE = -7,
    CU_EIO = -8,
    CU_ESYNTAX = -9, /* YAML/JSON syntax error */
    CU_ETRANSIENT = -10
} cu_err;

/* The deepest nesting of objects and arrays any Kubernetes object may have,
 * in JSON or YAML: kube-apiserver's decoders refuse deeper documents (Go's
 * encoding/json and yaml.v3 both stop at 10000 levels). The embedded API
 * server accepts up to this depth for every input format, and every reader
 * of API objects (the controller's informers, the CLI) reads up to it, so
 * that whatever the server stores can be read back. */
#define CU_JSON_MAX_DEPTH 10000

/* Returns a static string naming err. */
const char *cu_strerror(cu_err err);

/* Invariant check: logs file:line and aborts. Only for internal bugs,
 * never for bad input. */
#define CU_ASSERT(c) \
    do { \
        if (!(c)) \
            cu_assert_fail(#c, __FILE__, __LINE__); \
    } while (0)
void cu_assert_fail(const char *expr, const char *file, int line);

/* ---- arena: bump allocator for per-load and per-cycle memory ---- */
typedef struct cu_arena_chunk cu_arena_chunk;
typedef struct cu_arena {
    cu_arena_chunk *head;
    size_t chunk_size; /* default chunk payload size */
    size_t total;      /* bytes handed out (for stats) */
} cu_arena;

/* Initializes an empty arena (no allocation yet). */
void cu_arena_init(cu_arena *a, size_t chunk_size);
/* Returns zeroed arena-owned memory (8-byte aligned), NULL on OOM. */
void *cu_arena_alloc(cu_arena *a, size_t n);
/* Returns an arena-owned copy of s (NULL if s is NULL or OOM). */
char *cu_arena_strdup(cu_arena *a, const char *s);
char *cu_arena_strndup(cu_arena *a, const char *s, size_t n);
/* Returns an arena-owned formatted string. */
char *cu_arena_printf(cu_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Frees every chunk; the arena is empty and reusable afterwards. */
void cu_arena_free(cu_arena *a);

/* ---- vectors: arrays grown by doubling ---- */
/* items[0..n) used, cap allocated; items is malloc'd (free it). */
#define CU_VEC(T) \
    struct { \
        size_t n, cap; \
        T *items; \
    }

/* Makes room for one more element in an array: itemsp points to the
 * array's pointer (any object type; elem bytes each), n elements used,
 * *cap allocated. When n == *cap, reallocs to twice *cap (first when 0).
 * Returns 0, or -1 when out of memory (array and *cap untouched). */
int cu_vec_reserve(void *itemsp, size_t n, size_t *cap, size_t elem, size_t first);
/* cu_vec_reserve for a CU_VEC-shaped v. */
#define CU_VEC_RESERVE(v, first) \
    cu_vec_reserve(&(v).items, (v).n, &(v).cap, sizeof(*(v).items), (first))
/* Appends x to a CU_VEC-shaped v: 0, or -1 when out of memory. */
#define CU_VEC_PUSH(v, x, first) (CU_VEC_RESERVE(v, first) ? -1 : ((v).items[(v).n++] = (x), 0))

/* ---- buf: growable byte buffer with a hard size bound ---- */
typedef struct cu_buf {
    char *data; /* always NUL-terminated when len > 0 or after init */
    size_t len, cap;
    size_t limit; /* appends that would exceed it fail with CU_ENOMEM */
    int failed;   /* sticky: set once any append failed */
} cu_buf;

/* Initializes an empty buffer bounded by limit bytes (0 = 256 MiB). */
void cu_buf_init(cu_buf *b, size_t limit);
cu_err cu_buf_append(cu_buf *b, const char *s, size_t n);
cu_err cu_buf_puts(cu_buf *b, const char *s);
cu_err cu_buf_printf(cu_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
cu_err cu_buf_vprintf(cu_buf *b, const char *fmt, va_list ap);
/* Releases the memory; b is empty afterwards. */
void cu_buf_free(cu_buf *b);
/* Returns b's data (a valid C string, "" when empty). Borrowed. */
const char *cu_buf_str(const cu_buf *b);

/* ---- diag: a bounded list of human-readable problems ---- */
typedef struct cu_diag {
    char **msgs;
    size_t n, cap;
    size_t max; /* messages beyond max are counted, not stored */
    size_t dropped;
    size_t nerrors; /* errors (warnings do not count) */
} cu_diag;

void cu_diag_init(cu_diag *d);
/* Adds an error message (copied). */
void cu_diag_error(cu_diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Adds a warning message (copied), prefixed with "warning: ". */
void cu_diag_warn(cu_diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cu_diag_free(cu_diag *d);

/* ---- clock: injected, never read from the OS inside the engine ---- */
typedef struct cu_clock {
    /* Returns the current wall time in milliseconds since the Unix epoch. */
    int64_t (*now_ms)(void *ud);
    void *ud;
} cu_clock;

static inline int64_t cu_clock_now(const cu_clock *c) { return c->now_ms(c->ud); }

/* A fake clock for tests and simulation: reads *(int64_t *)ud. */
int64_t cu_clock_fake_now(void *ud);

/* ---- small helpers ---- */
/* The valid UTF-8 sequence at p, at most avail bytes (a NUL byte ends it
 * too): returns its length (1..4) and its code point in *cp (when cp is
 * not NULL), or 0 when it is not valid UTF-8 (bad lead or continuation
 * byte, truncated, overlong, surrogate, above U+10FFFF). Borrows p. */
size_t cu_utf8_decode(const unsigned char *p, size_t avail, uint32_t *cp);
/* 1 for the code points a YAML reader refuses raw or reads as line
 * breaks (C0 and C1 controls, DEL, U+2028/9, U+FEFF, U+FFFE/F). */
int cu_yaml_nonprintable(uint32_t cp);
/* Formats an RFC 3339 UTC timestamp (second precision) into out (>= 21 bytes). */
void cu_time_format(int64_t ms, char *out, size_t n);
/* Parses RFC 3339 ("2024-01-02T03:04:05Z", optional fraction and offset)
 * into milliseconds since the epoch. */
cu_err cu_time_parse(const char *s, int64_t *ms);

#endif
