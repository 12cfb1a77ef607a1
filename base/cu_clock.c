/*
 * cu_clock.c - the OS clocks (see cu_clock.h).
 */
#include "cu_clock.h"

#include <stdio.h>
#include <string.h>

static struct timespec now_of(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return ts;
}

int64_t cu_clock_wall_ms(void)
{
    struct timespec ts = now_of(CLOCK_REALTIME);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t cu_clock_wall_us(void)
{
    struct timespec ts = now_of(CLOCK_REALTIME);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t cu_clock_mono_ms(void)
{
    struct timespec ts = now_of(CLOCK_MONOTONIC);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t cu_clock_mono_ns(void)
{
    struct timespec ts = now_of(CLOCK_MONOTONIC);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t cu_clock_system_now(void *ud)
{
    (void)ud;
    return cu_clock_wall_ms();
}

cu_clock cu_clock_system(void)
{
    cu_clock c = { cu_clock_system_now, NULL };
    return c;
}

struct timespec cu_clock_after(clockid_t clk, int64_t ms)
{
    struct timespec ts = now_of(clk);
    if (ms < 0)
        ms = 0;
    ts.tv_sec += (time_t)(ms / 1000);
    ts.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

void cu_time_format_micro(int64_t us, char *out, size_t n)
{
    int64_t frac = us % 1000000;
    if (frac < 0)
        frac += 1000000;
    char secs[32];
    cu_time_format((us - frac) / 1000, secs, sizeof secs); /* "...:SSZ" */
    size_t l = strlen(secs);
    if (l)
        secs[l - 1] = '\0';
    snprintf(out, n, "%s.%06dZ", secs, (int)frac);
}
