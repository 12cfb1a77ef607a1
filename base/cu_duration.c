/*
 * cu_duration.c - Go durations and kubectl ages (see cu_duration.h).
 */
#include "cu_duration.h"

#include <stdio.h>
#include <string.h>

cu_err cu_duration_parse(const char *s, int64_t *ns)
{
    static const struct {
        const char *unit;
        int64_t ns;
    } units[] = {
        { "ns", 1 },
        { "us", 1000 },
        { "\xc2\xb5s", 1000 },
        { "\xce\xbcs", 1000 },
        { "ms", 1000000 },
        { "s", INT64_C(1000000000) },
        { "m", INT64_C(60000000000) },
        { "h", INT64_C(3600000000000) },
    };
    if (!s)
        return CU_EINVAL;
    int neg = 0;
    if (*s == '-' || *s == '+')
        neg = *s++ == '-';
    if (strcmp(s, "0") == 0) {
        *ns = 0;
        return CU_OK;
    }
    if (!*s)
        return CU_EINVAL;
    int64_t total = 0;
    while (*s) {
        int64_t whole = 0, frac = 0, scale = 1;
        int digits = 0;
        while (*s >= '0' && *s <= '9') {
            if (whole > (INT64_MAX - (*s - '0')) / 10)
                return CU_EINVAL;
            whole = whole * 10 + (*s - '0');
            s++;
            digits++;
        }
        if (*s == '.') {
            s++;
            while (*s >= '0' && *s <= '9') {
                if (scale <= INT64_MAX / 10 / 10) { /* keep 17 digits at most */
                    frac = frac * 10 + (*s - '0');
                    scale *= 10;
                }
                s++;
                digits++;
            }
        }
        if (digits == 0)
            return CU_EINVAL;
        size_t best = 0, bestlen = 0;
        for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
            size_t l = strlen(units[i].unit);
            if (l > bestlen && strncmp(s, units[i].unit, l) == 0) {
                best = i;
                bestlen = l;
            }
        }
        if (bestlen == 0)
            return CU_EINVAL; /* missing or unknown unit */
        s += bestlen;
        int64_t u = units[best].ns;
        if (whole > INT64_MAX / u)
            return CU_EINVAL;
        int64_t v = whole * u;
        if (frac) {
            double f = (double)frac * ((double)u / (double)scale);
            if (f >= (double)(INT64_MAX - v))
                return CU_EINVAL;
            v += (int64_t)f;
        }
        if (v > INT64_MAX - total)
            return CU_EINVAL;
        total += v;
    }
    *ns = neg ? -total : total;
    return CU_OK;
}

cu_err cu_duration_parse_ms(const char *s, int64_t *ms)
{
    int64_t ns;
    cu_err err = cu_duration_parse(s, &ns);
    if (err == CU_OK)
        *ms = ns / 1000000;
    return err;
}

void cu_duration_human(int64_t ms, char *out, size_t n)
{
    if (ms < -1000) {
        snprintf(out, n, "<invalid>");
        return;
    }
    long long s = ms < 0 ? 0 : (long long)(ms / 1000);
    long long m = s / 60, h = s / 3600, d = h / 24;
    if (s < 120)
        snprintf(out, n, "%llds", s);
    else if (m < 10 && s % 60)
        snprintf(out, n, "%lldm%llds", m, s % 60);
    else if (m < 180)
        snprintf(out, n, "%lldm", m);
    else if (h < 8 && m % 60)
        snprintf(out, n, "%lldh%lldm", h, m % 60);
    else if (h < 48)
        snprintf(out, n, "%lldh", h);
    else if (h < 24 * 8 && h % 24)
        snprintf(out, n, "%lldd%lldh", d, h % 24);
    else if (d < 365 * 2)
        snprintf(out, n, "%lldd", d);
    else if (d < 365 * 8 && d % 365)
        snprintf(out, n, "%lldy%lldd", d / 365, d % 365);
    else
        snprintf(out, n, "%lldy", d / 365);
}
