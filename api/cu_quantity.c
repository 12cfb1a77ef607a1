/*
 * cu_quantity.c - Kubernetes resource quantities as exact int64 counts of
 * milli-units (scale 3) or whole units (scale 0), the unit of a resource
 * being Kueue's (cu_qty_res_scale).
 *
 * Parsing is exact: the digits are never converted through a double. The
 * value of "<digits>[.<digits>]<suffix>" is D * 10^E * 2^B where D is the
 * digit string with its decimal point removed, E collects the decimal
 * suffix (or exponent), the scale (+3 for milli-units, 0 for whole units)
 * and the fraction length, and
 * B is the binary suffix (Ki = 10 ... Ei = 60). Leading and trailing zeros
 * of D are stripped first (trailing ones move into E), so D's first and
 * last digits are non-zero, which bounds all loops by the input length
 * (plus ~20 steps) whatever the exponent.
 *
 * Rounding: a value that is not a whole number of the unit has its
 * magnitude rounded up (away from zero), like Kubernetes' ScaledValue
 * (MilliValue / Value): in milli "0.1m" -> 1, "1n" -> 1, "-0.1m" -> -1; in
 * whole units "1.5" -> 2, "500m" -> 1. So parse("-x") is always
 * -parse("x").
 *
 * Overflow: magnitudes above INT64_MAX (positive) or 2^63 (negative) in the
 * unit are CU_EOVERFLOW. Kubernetes itself keeps arbitrary precision, but
 * Kueue counts in int64 of the same units, so what fits here is what it
 * can count; we refuse instead of wrapping.
 *
 * Stricter than Kubernetes: it accepts a number without digits ("-", "+",
 * ".", "Mi" all parse as 0 there); we require at least one digit.
 */
#include "cu_quantity.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Exponents beyond this are clamped: no string that fits in memory has
 * enough digits to bring them back into int64 range. */
#define QTY_EXP_CLAMP INT64_C(1000000000000000) /* 1e15 */

/* The digits of a number: integer part s[ib,ie) then fraction s[fb,fe). */
typedef struct qty_digits {
    const char *s;
    size_t ib, ie, fb, fe;
} qty_digits;

static size_t digits_len(const qty_digits *d) { return (d->ie - d->ib) + (d->fe - d->fb); }

/* Returns digit j (0-based, left to right) of the concatenated digits. */
static unsigned digit_at(const qty_digits *d, size_t j)
{
    size_t ni = d->ie - d->ib;
    char c = j < ni ? d->s[d->ib + j] : d->s[d->fb + (j - ni)];
    return (unsigned)(c - '0');
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* Parses the suffix s (the whole rest of the string). Sets *dec (power of
 * ten), *bin (power of two) and *fmt. Returns 0 when s is not a suffix. */
static int parse_suffix(const char *s, int64_t *dec, int *bin, cu_qfmt *fmt)
{
    static const struct {
        const char *name;
        int dec;
        int bin;
    } tab[] = {
        { "", 0, 0 },    { "n", -9, 0 },  { "u", -6, 0 },  { "m", -3, 0 },
        { "k", 3, 0 },   { "M", 6, 0 },   { "G", 9, 0 },   { "T", 12, 0 },
        { "P", 15, 0 },  { "E", 18, 0 },  { "Ki", 0, 10 }, { "Mi", 0, 20 },
        { "Gi", 0, 30 }, { "Ti", 0, 40 }, { "Pi", 0, 50 }, { "Ei", 0, 60 },
    };
    for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
        if (strcmp(s, tab[i].name) == 0) {
            *dec = tab[i].dec;
            *bin = tab[i].bin;
            *fmt = tab[i].bin ? CU_QFMT_BINARY_SI : CU_QFMT_DECIMAL_SI;
            return 1;
        }
    }
    /* decimal exponent: [eE][+-]?[0-9]+ ("E" alone is exa, matched above) */
    if (*s != 'e' && *s != 'E')
        return 0;
    s++;
    int neg = 0;
    if (*s == '+' || *s == '-')
        neg = *s++ == '-';
    if (!is_digit(*s))
        return 0;
    int64_t e = 0;
    for (; is_digit(*s); s++) {
        if (e < QTY_EXP_CLAMP)
            e = e * 10 + (*s - '0');
    }
    if (*s != '\0')
        return 0;
    if (e > QTY_EXP_CLAMP)
        e = QTY_EXP_CLAMP;
    *dec = neg ? -e : e;
    *bin = 0;
    *fmt = CU_QFMT_DECIMAL_EXP;
    return 1;
}

/* *r = a * b, or 0 on uint64 overflow. */
static int mul_u64(uint64_t a, uint64_t b, uint64_t *r)
{
    if (a != 0 && b > UINT64_MAX / a)
        return 0;
    *r = a * b;
    return 1;
}

/* Computes the magnitude ceil(D * 10^E * 2^bin) for D with significant
 * digits d[lo, hi) (first and last non-zero). Returns CU_EOVERFLOW when it
 * exceeds limit. */
static cu_err magnitude(const qty_digits *d, size_t lo, size_t hi, int64_t e, int bin,
                        uint64_t limit, uint64_t *out)
{
    size_t nd = hi - lo;
    uint64_t p2 = (uint64_t)1 << bin;
    if (e >= 0) {
        /* integer: D has >= 20 digits or E >= 20 means >= 1e19 > limit */
        if (nd > 19 || e > 19)
            return CU_EOVERFLOW;
        uint64_t v = 0;
        for (size_t j = lo; j < hi; j++)
            v = v * 10 + digit_at(d, j); /* < 1e19, fits */
        for (int64_t i = 0; i < e; i++)
            if (!mul_u64(v, 10, &v))
                return CU_EOVERFLOW;
        if (!mul_u64(v, p2, &v) || v > limit)
            return CU_EOVERFLOW;
        *out = v;
        return CU_OK;
    }
    /* E < 0: D = H * 10^k + L with L the last k digits (0 < L < 10^k), so
     * value = H*2^bin + L*2^bin/10^k and the second term is in (0, 2^bin). */
    uint64_t k = (uint64_t)(-e);
    uint64_t h = 0;
    size_t split = lo; /* first digit of L */
    if (nd > k) {
        if (nd - k > 19)
            return CU_EOVERFLOW;
        split = hi - (size_t)k;
        for (size_t j = lo; j < split; j++)
            h = h * 10 + digit_at(d, j);
    }
    if (!mul_u64(h, p2, &h))
        return CU_EOVERFLOW;
    /* Multiply the fraction 0.L by 2^bin digit by digit from the right; the
     * carry out of the leftmost digit is floor(L*2^bin/10^k). Digits left of
     * L's first real digit are zeros: once the carry is 0 they add nothing.
     * t <= 9*2^60 + carry < 10*2^60 fits in uint64. */
    uint64_t carry = 0;
    int inexact = 0;
    for (size_t j = hi; j > split; j--) {
        uint64_t t = (uint64_t)digit_at(d, j - 1) * p2 + carry;
        inexact |= (t % 10) != 0;
        carry = t / 10;
    }
    for (uint64_t z = (uint64_t)(hi - split); z < k && carry != 0; z++) {
        inexact |= (carry % 10) != 0;
        carry /= 10;
    }
    uint64_t v = h + carry + (uint64_t)inexact; /* carry < 2^60, no wrap */
    if (v < h || v > limit)
        return CU_EOVERFLOW;
    *out = v;
    return CU_OK;
}

cu_err cu_qty_parse(const char *s, int64_t *milli, cu_qfmt *fmt)
{
    return cu_qty_parse_scaled(s, CU_QTY_SCALE_MILLI, milli, fmt);
}

cu_err cu_qty_parse_scaled(const char *s, int scale, int64_t *v, cu_qfmt *fmt)
{
    if (!s || !v || (scale != CU_QTY_SCALE_UNIT && scale != CU_QTY_SCALE_MILLI))
        return CU_EINVAL;
    qty_digits d = { .s = s };
    size_t p = 0;
    int neg = 0;
    if (s[p] == '+' || s[p] == '-')
        neg = s[p++] == '-';
    d.ib = p;
    while (is_digit(s[p]))
        p++;
    d.ie = p;
    d.fb = d.fe = p;
    if (s[p] == '.') {
        d.fb = ++p;
        while (is_digit(s[p]))
            p++;
        d.fe = p;
    }
    if (digits_len(&d) == 0)
        return CU_EINVAL; /* "", "+", ".", "Mi", " 1" */

    int64_t dec = 0;
    int bin = 0;
    cu_qfmt f = CU_QFMT_DECIMAL_SI;
    if (!parse_suffix(s + p, &dec, &bin, &f))
        return CU_EINVAL;

    size_t n = digits_len(&d), lo = 0, hi = n;
    while (lo < hi && digit_at(&d, lo) == 0)
        lo++;
    uint64_t mag = 0;
    if (lo < hi) {
        while (digit_at(&d, hi - 1) == 0)
            hi--;
        /* |dec| <= 1e15 and the lengths are object sizes, so no overflow */
        int64_t e = dec + scale - (int64_t)(d.fe - d.fb) + (int64_t)(n - hi);
        uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
        cu_err err = magnitude(&d, lo, hi, e, bin, limit, &mag);
        if (err != CU_OK)
            return err;
    }
    if (!neg)
        *v = (int64_t)mag;
    else if (mag == (uint64_t)INT64_MAX + 1)
        *v = INT64_MIN;
    else
        *v = -(int64_t)mag;
    if (fmt)
        *fmt = f;
    return CU_OK;
}

/* Prints v * 10^-scale with the largest decimal suffix that keeps it an
 * integer. */
static void format_decimal(int64_t v, int scale, int expo_form, char *out, size_t n)
{
    int e = -scale;
    while (v % 1000 == 0 && e < 18) {
        v /= 1000;
        e += 3;
    }
    if (expo_form) {
        if (e == 0)
            snprintf(out, n, "%" PRId64, v);
        else
            snprintf(out, n, "%" PRId64 "e%d", v, e);
        return;
    }
    static const char *const si[] = { "m", "", "k", "M", "G", "T", "P", "E" };
    snprintf(out, n, "%" PRId64 "%s", v, si[(e + 3) / 3]);
}

char *cu_qty_format(int64_t milli, cu_qfmt fmt, char *out, size_t n)
{
    return cu_qty_format_scaled(milli, CU_QTY_SCALE_MILLI, fmt, out, n);
}

char *cu_qty_format_scaled(int64_t v, int scale, cu_qfmt fmt, char *out, size_t n)
{
    if (!out || n == 0)
        return out;
    if (v == 0) {
        snprintf(out, n, "0");
        return out;
    }
    scale = scale == CU_QTY_SCALE_UNIT ? CU_QTY_SCALE_UNIT : CU_QTY_SCALE_MILLI;
    int64_t one = scale == CU_QTY_SCALE_UNIT ? 1 : 1000;
    switch (fmt) {
    case CU_QFMT_BINARY_SI:
        if (v % one == 0) {
            int64_t w = v / one;
            if (w >= 1024 || w <= -1024) {
                static const char *const bi[] = { "", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei" };
                int e = 0;
                while (w % 1024 == 0 && e < 6) {
                    w /= 1024;
                    e++;
                }
                snprintf(out, n, "%" PRId64 "%s", w, bi[e]);
                return out;
            }
        }
        format_decimal(v, scale, 0, out, n);
        return out;
    case CU_QFMT_DECIMAL_SI: format_decimal(v, scale, 0, out, n); return out;
    case CU_QFMT_DECIMAL_EXP:
    default: /* Kubernetes prints an unknown format as DecimalExponent */
        format_decimal(v, scale, 1, out, n);
        return out;
    }
}

cu_qfmt cu_qty_fmt_for_resource(const char *name)
{
    if (name && (strcmp(name, "memory") == 0 || strcmp(name, "ephemeral-storage") == 0 ||
                 strncmp(name, "hugepages-", 10) == 0))
        return CU_QFMT_BINARY_SI;
    return CU_QFMT_DECIMAL_SI;
}

int cu_qty_res_scale(const char *name)
{
    return name && strcmp(name, "cpu") == 0 ? CU_QTY_SCALE_MILLI : CU_QTY_SCALE_UNIT;
}

int64_t cu_qty_res_one(const char *name)
{
    return cu_qty_res_scale(name) == CU_QTY_SCALE_MILLI ? 1000 : 1;
}

int64_t cu_qty_res_units(const char *name, int64_t count)
{
    int64_t v;
    if (cu_qty_mul(count, cu_qty_res_one(name), &v) != CU_OK)
        return count < 0 ? INT64_MIN : INT64_MAX;
    return v;
}

int64_t cu_qty_res_whole(const char *name, int64_t v)
{
    if (v == CU_QTY_INF)
        return CU_QTY_INF; /* saturated stays saturated */
    int64_t one = cu_qty_res_one(name);
    return v / one + (v % one > 0);
}

double cu_qty_res_float(const char *name, int64_t v)
{
    return (double)v / (double)cu_qty_res_one(name);
}

cu_err cu_qty_parse_res(const char *name, const char *s, int64_t *v, cu_qfmt *fmt)
{
    return cu_qty_parse_scaled(s, cu_qty_res_scale(name), v, fmt);
}

char *cu_qty_format_res(const char *name, int64_t v, char *out, size_t n)
{
    return cu_qty_format_scaled(v, cu_qty_res_scale(name), cu_qty_fmt_for_resource(name), out, n);
}

cu_err cu_qty_add(int64_t a, int64_t b, int64_t *out)
{
    if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b))
        return CU_EOVERFLOW;
    *out = a + b;
    return CU_OK;
}

cu_err cu_qty_mul(int64_t a, int64_t count, int64_t *out)
{
    if (a == 0 || count == 0) {
        *out = 0;
        return CU_OK;
    }
    if ((a == -1 && count == INT64_MIN) || (count == -1 && a == INT64_MIN))
        return CU_EOVERFLOW;
    if (a > 0) {
        if (count > 0 ? count > INT64_MAX / a : count < INT64_MIN / a)
            return CU_EOVERFLOW;
    } else {
        /* a < 0: a*count > 0 for count < 0, < 0 for count > 0 */
        if (count > 0 ? a < INT64_MIN / count : a < INT64_MAX / count)
            return CU_EOVERFLOW;
    }
    *out = a * count;
    return CU_OK;
}

int64_t cu_qty_sat_add(int64_t a, int64_t b)
{
    if (a == CU_QTY_INF || b == CU_QTY_INF)
        return CU_QTY_INF;
    if (b > 0 && a > INT64_MAX - b)
        return INT64_MAX;
    if (b < 0 && a < INT64_MIN - b)
        return INT64_MIN;
    return a + b;
}

int64_t cu_qty_sat_sub(int64_t a, int64_t b)
{
    if (a == CU_QTY_INF)
        return CU_QTY_INF; /* INF - x = INF, including INF - INF */
    if (b == CU_QTY_INF)
        return INT64_MIN; /* finite - INF = -INF, saturated */
    if (b < 0 && a > INT64_MAX + b)
        return INT64_MAX;
    if (b > 0 && a < INT64_MIN + b)
        return INT64_MIN;
    return a - b;
}
