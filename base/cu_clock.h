/*
 * cu_clock.h - the operating system's clocks, read in one place.
 *
 * Only the edges read these: main()s, the network client and server,
 * threads that sleep. The engine never does: it is handed a cu_clock
 * (cu_base.h), which is cu_clock_system() in the daemons and a fake clock
 * in tests and simulation. Wall time may step; use the monotonic clock
 * for deadlines and elapsed times.
 */
#ifndef CU_CLOCK_H
#define CU_CLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "cu_base.h"

/* Wall clock (CLOCK_REALTIME): milliseconds / microseconds since the
 * Unix epoch, truncated. */
int64_t cu_clock_wall_ms(void);
int64_t cu_clock_wall_us(void);

/* Monotonic clock (CLOCK_MONOTONIC), from an arbitrary origin: ms
 * (truncated: a deadline "now + T" is never early) and ns. */
int64_t cu_clock_mono_ms(void);
int64_t cu_clock_mono_ns(void);

/* A cu_clock.now_ms reading the wall clock; ud is ignored. */
int64_t cu_clock_system_now(void *ud);

/* The injected clock of a real process: { cu_clock_system_now, NULL }. */
cu_clock cu_clock_system(void);

/* The time ms milliseconds (>= 0) from now on clock clk (CLOCK_REALTIME
 * for pthread_cond_timedwait, CLOCK_MONOTONIC for deadlines), normalized
 * (0 <= tv_nsec < 1e9). */
struct timespec cu_clock_after(clockid_t clk, int64_t ms);

/* Formats us (microseconds since the epoch) as RFC 3339 UTC with six
 * fraction digits, metav1.MicroTime ("2026-01-02T03:04:05.000123Z"),
 * into out (>= 28 bytes). */
void cu_time_format_micro(int64_t us, char *out, size_t n);

#endif
