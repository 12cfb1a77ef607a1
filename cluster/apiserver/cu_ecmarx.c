/*
 * cu_ecmarx.c - ECMA-262 patterns (the OpenAPI "pattern" keyword) translated
 * to POSIX extended regular expressions for the common subset (see the top
 * of cu_schema.c), and the cache of a schema's compiled patterns
 * (cu_schema_rx). See internal/cu_schema_int.h.
 */
#include "cu_schema.h"
#include "cu_base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_schema_int.h"

/* ---- ECMA-262 pattern -> POSIX ERE ---- */

typedef struct rx_buf {
    char *s;
    size_t len, cap;
    int bad;
} rx_buf;

static void rx_put(rx_buf *b, const char *s)
{
    size_t n = strlen(s);
    if (b->bad)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = (b->cap ? b->cap * 2 : 64) + n;
        char *ns = realloc(b->s, cap);
        if (!ns) {
            b->bad = 1;
            return;
        }
        b->s = ns;
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, n + 1);
    b->len += n;
}

static void rx_putc(rx_buf *b, char ch)
{
    char s[2] = { ch, '\0' };
    rx_put(b, s);
}

/* Translates a bracket expression starting after '['; returns the
 * position after the closing ']' or NULL when unsupported. */
static const char *rx_class(const char *p, rx_buf *b)
{
    int neg = 0, has_rbracket = 0, has_dash = 0, has_caret = 0;
    rx_buf body = { 0 };
    if (*p == '^') {
        neg = 1;
        p++;
    }
    while (*p && *p != ']') {
        char lit = 0;
        if (*p == '\\') {
            p++;
            switch (*p) {
            case 'd':
                rx_put(&body, "0-9");
                p++;
                continue;
            case 'w':
                rx_put(&body, "A-Za-z0-9_");
                p++;
                continue;
            case 's':
                rx_put(&body, "[:space:]");
                p++;
                continue;
            case 'n': lit = '\n'; break;
            case 't': lit = '\t'; break;
            case 'r': lit = '\r'; break;
            case 'D':
            case 'W':
            case 'S':
            case 'b':
            case 'u':
            case 'x':
            case '\0': free(body.s); return NULL;
            default: lit = *p; break;
            }
            p++;
        } else {
            lit = *p++;
        }
        /* a range a-z keeps its shape; escaped ends were resolved above */
        if (*p == '-' && p[1] && p[1] != ']') {
            char hi = p[1];
            if (hi == '\\') {
                free(body.s);
                return NULL;
            }
            char r[4] = { lit, '-', hi, '\0' };
            if (lit == ']' || lit == '^' || lit == '-') {
                free(body.s);
                return NULL;
            }
            rx_put(&body, r);
            p += 2;
            continue;
        }
        if (lit == ']')
            has_rbracket = 1;
        else if (lit == '-')
            has_dash = 1;
        else if (lit == '^')
            has_caret = 1;
        else
            rx_putc(&body, lit);
    }
    if (*p != ']') {
        free(body.s);
        return NULL;
    }
    rx_putc(b, '[');
    if (neg)
        rx_putc(b, '^');
    if (has_rbracket)
        rx_putc(b, ']');
    if (body.s)
        rx_put(b, body.s);
    if (has_caret)
        rx_putc(b, '^');
    if (has_dash)
        rx_putc(b, '-');
    rx_putc(b, ']');
    /* "[^]" or "[]" alone would be malformed */
    if (!body.s && !has_rbracket && !has_dash && !has_caret) {
        free(body.s);
        return NULL;
    }
    free(body.s);
    return p + 1;
}

/* RE2's limits on repetition, which kube-apiserver applies to a CRD's
 * patterns and which keep POSIX regcomp bounded (glibc expands a+ into aa*
 * and a{n} into n copies, so a+++... or nested counts grow exponentially):
 * a repetition operator may not follow another ("a**", "a{2}{3}"; a lazy
 * "?" after one is fine), a count is at most 1000, and the pattern expanded
 * by its counts stays under RX_MAX_SIZE atoms. Go's own "expression too
 * large" comes later; ours is lower because glibc's cost is quadratic in
 * the expanded size where stars nest in counts: ((a*){100}){300} (90,000
 * atoms) took 30 s and 7 GB to compile, the worst found under 10,000 took
 * 0.2 s and 160 MB. 1 with the reason in why, else 0. */
#define RX_MAX_SIZE 10000
#define RX_MAX_NEST 1000
int rx_too_big(const char *pat, char *why, size_t n)
{
    uint64_t sum[RX_MAX_NEST + 1];           /* atoms in each open group so far */
    uint64_t last = 0;                       /* size of the atom a quantifier applies to */
    int depth = 0, after_rep = 0;            /* after_rep: the previous token was a repetition */
    int lazy_ok = 0;                         /* a "?" right after it would make it lazy */
    const char *rep = NULL, *rep_end = NULL; /* where that repetition starts and ends */
    sum[0] = 0;
    for (const char *p = pat; *p;) {
        const char *tok = p;
        uint64_t mul = 0;
        if (*p == '*' || *p == '+' || *p == '?') {
            mul = 2;
            p++;
        } else if (*p == '{') {
            char *end;
            unsigned long lo = strtoul(p + 1, &end, 10), hi = lo;
            int ok = p[1] >= '0' && p[1] <= '9';
            if (ok && *end == ',') {
                const char *q = end + 1;
                if (*q == '}') {
                    hi = lo + 1; /* {m,}: unbounded, counted as m + 1 */
                    end = (char *)q;
                } else {
                    ok = *q >= '0' && *q <= '9';
                    hi = strtoul(q, &end, 10);
                }
            }
            if (ok && *end == '}') {
                if (lo > 1000 || hi > 1001 || hi < lo) {
                    snprintf(why, n, "error parsing regexp: invalid repeat count: `%.*s`",
                             (int)(end + 1 - p), p);
                    return 1;
                }
                mul = hi ? hi : 1;
                p = end + 1;
            }
        }
        if (mul) {
            if (after_rep && *tok == '?' && tok == rep_end && lazy_ok) {
                lazy_ok = 0; /* a lazy quantifier: "a*?", "a{2}?" */
                rep_end = p;
                continue;
            }
            if (after_rep) {
                snprintf(why, n, "error parsing regexp: invalid nested repetition operator: `%.*s`",
                         (int)(p - rep), rep);
                return 1;
            }
            sum[depth] -= last;
            last *= mul;
            sum[depth] += last;
            after_rep = lazy_ok = 1;
            rep = tok;
            rep_end = p;
            if (sum[depth] > RX_MAX_SIZE) {
                snprintf(why, n, "error parsing regexp: expression too large");
                return 1;
            }
            continue;
        }
        after_rep = 0;
        if (*p == '(') {
            if (depth == RX_MAX_NEST) {
                snprintf(why, n, "error parsing regexp: expression nests too deeply");
                return 1;
            }
            sum[++depth] = 0;
            p++;
            last = 0;
            continue;
        }
        if (*p == ')' && depth > 0) {
            last = sum[depth--] + 1;
            sum[depth] += last;
            p++;
        } else if (*p == '[') {
            p++;
            if (*p == '^')
                p++;
            if (*p == ']')
                p++;
            while (*p && *p != ']')
                p += p[0] == '\\' && p[1] ? 2 : 1;
            if (*p)
                p++;
            last = 1;
            sum[depth] += 1;
        } else {
            p += p[0] == '\\' && p[1] ? 2 : 1;
            last = 1;
            sum[depth] += 1;
        }
        if (sum[depth] > RX_MAX_SIZE) {
            snprintf(why, n, "error parsing regexp: expression too large");
            return 1;
        }
    }
    return 0;
}

/* Returns a malloc'd POSIX ERE for an ECMA-262 pattern, NULL if the
 * pattern uses something outside the supported subset (or is past RE2's
 * repetition limits, which kube-apiserver refuses: see rx_too_big). */
char *rx_translate(const char *p)
{
    rx_buf b = { 0 };
    char why[160];
    if (rx_too_big(p, why, sizeof why))
        return NULL;
    while (*p && !b.bad) {
        char ch = *p;
        if (ch == '\\') {
            p++;
            switch (*p) {
            case 'd': rx_put(&b, "[0-9]"); break;
            case 'D': rx_put(&b, "[^0-9]"); break;
            case 'w': rx_put(&b, "[A-Za-z0-9_]"); break;
            case 'W': rx_put(&b, "[^A-Za-z0-9_]"); break;
            case 's': rx_put(&b, "[[:space:]]"); break;
            case 'S': rx_put(&b, "[^[:space:]]"); break;
            case 'n': rx_putc(&b, '\n'); break;
            case 't': rx_putc(&b, '\t'); break;
            case 'r': rx_putc(&b, '\r'); break;
            case '.':
            case '\\':
            case '+':
            case '*':
            case '?':
            case '(':
            case ')':
            case '[':
            case ']':
            case '{':
            case '}':
            case '|':
            case '^':
            case '$':
                rx_putc(&b, '\\');
                rx_putc(&b, *p);
                break;
            case '/':
            case '-':
            case ':':
            case '=':
            case '!':
            case ',':
            case '#':
            case '@':
            case '_':
            case '%':
            case '&':
            case '~':
            case '"':
            case '\'':
            case '<':
            case '>': rx_putc(&b, *p); break;
            default: free(b.s); return NULL; /* \b, \1, \uXXXX, ... */
            }
            p++;
            continue;
        }
        if (ch == '[') {
            p = rx_class(p + 1, &b);
            if (!p) {
                free(b.s);
                return NULL;
            }
            continue;
        }
        if (ch == '(' && p[1] == '?') {
            if (p[2] == ':') {
                rx_putc(&b, '(');
                p += 3;
                continue;
            }
            free(b.s);
            return NULL; /* look-around, named groups */
        }
        if ((ch == '*' || ch == '+' || ch == '?' || ch == '}') && p[1] == '?') {
            rx_putc(&b, ch); /* lazy quantifier: same language */
            p += 2;
            continue;
        }
        rx_putc(&b, ch);
        p++;
    }
    if (b.bad) {
        free(b.s);
        return NULL;
    }
    if (!b.s)
        rx_put(&b, "");
    return b.s;
}

rx_ent *rx_find(const cu_schema_rx *rx, const char *pat)
{
    if (!rx || !rx->cap)
        return NULL;
    size_t mask = rx->cap - 1;
    for (size_t i = cu_hash_bytes(CU_HASH_INIT, pat, strlen(pat)) & mask;; i = (i + 1) & mask) {
        rx_ent *e = &rx->t[i];
        if (!e->pat || !strcmp(e->pat, pat))
            return e;
    }
}

/* Compiles pat into rx (once); returns its entry or NULL without memory. */
rx_ent *rx_add(cu_schema_rx *rx, const char *pat)
{
    if (rx->n * 2 >= rx->cap) {
        size_t nc = rx->cap ? rx->cap * 2 : 16;
        rx_ent *nt = calloc(nc, sizeof *nt);
        if (!nt)
            return NULL;
        cu_schema_rx old = *rx;
        rx->t = nt;
        rx->cap = nc;
        for (size_t i = 0; i < old.cap; i++)
            if (old.t[i].pat)
                *rx_find(rx, old.t[i].pat) = old.t[i];
        free(old.t);
    }
    rx_ent *e = rx_find(rx, pat);
    if (e->pat)
        return e;
    if (!(e->pat = strdup(pat)))
        return NULL;
    rx->n++;
    char *ere = rx_translate(pat);
    e->ok = ere && regcomp(&e->re, ere, REG_EXTENDED | REG_NOSUB) == 0;
    free(ere);
    return e;
}

static void rx_walk(cu_schema_rx *rx, json_object *schema, int depth);

static void rx_walk_list(cu_schema_rx *rx, json_object *list, int depth)
{
    size_t n = is_arr(list) ? json_object_array_length(list) : 0;
    for (size_t i = 0; i < n; i++)
        rx_walk(rx, json_object_array_get_idx(list, i), depth + 1);
}

static void rx_walk(cu_schema_rx *rx, json_object *schema, int depth)
{
    if (!is_obj(schema) || depth > CU_JSON_MAX_DEPTH)
        return;
    const char *pat = cu_jstr(schema, "pattern");
    if (pat)
        rx_add(rx, pat);
    json_object *props = cu_jget(schema, "properties");
    if (is_obj(props)) {
        json_object_object_foreach (props, k, v) {
            (void)k;
            rx_walk(rx, v, depth + 1);
        }
    }
    rx_walk(rx, cu_jget(schema, "additionalProperties"), depth + 1);
    rx_walk(rx, cu_jget(schema, "items"), depth + 1);
    rx_walk(rx, cu_jget(schema, "not"), depth + 1);
    rx_walk_list(rx, cu_jget(schema, "allOf"), depth);
    rx_walk_list(rx, cu_jget(schema, "anyOf"), depth);
    rx_walk_list(rx, cu_jget(schema, "oneOf"), depth);
}

cu_schema_rx *cu_schema_rx_new(json_object *schema)
{
    cu_schema_rx *rx = calloc(1, sizeof *rx);
    if (rx)
        rx_walk(rx, schema, 0);
    return rx;
}

void cu_schema_rx_free(cu_schema_rx *rx)
{
    if (!rx)
        return;
    for (size_t i = 0; i < rx->cap; i++) {
        if (!rx->t[i].pat)
            continue;
        if (rx->t[i].ok)
            regfree(&rx->t[i].re);
        free(rx->t[i].pat);
    }
    free(rx->t);
    free(rx);
}
