/*
 * test_clock.c - the OS clocks: wall time agrees with time(2), the
 * monotonic clock does not go back, the injected system clock reads the
 * wall clock, deadlines are normalized, MicroTime formatting.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>
#include <time.h>

#include "cu_clock.h"

static void test_wall(void **st)
{
    (void)st;
    int64_t before = (int64_t)time(NULL);
    int64_t ms = cu_clock_wall_ms(), us = cu_clock_wall_us();
    int64_t after = (int64_t)time(NULL);
    assert_true(ms / 1000 >= before && ms / 1000 <= after);
    /* bounds are generous: a loaded machine may stop us between two reads,
     * and a wrong clock (monotonic for wall, s for ms) is off by far more */
    assert_true(us / 1000 >= ms && us / 1000 - ms < 60000);
    cu_clock c = cu_clock_system();
    int64_t now = cu_clock_now(&c);
    assert_true(now >= ms && now - ms < 60000);
    assert_true(cu_clock_system_now(NULL) >= now);
}

static void test_mono(void **st)
{
    (void)st;
    int64_t a = cu_clock_mono_ns(), am = cu_clock_mono_ms();
    struct timespec nap = { 0, 2000000 }; /* 2 ms */
    nanosleep(&nap, NULL);
    int64_t b = cu_clock_mono_ns(), bm = cu_clock_mono_ms();
    assert_true(b - a >= 2000000);
    assert_true(bm - am >= 1);
    assert_true(am >= a / 1000000 && am <= b / 1000000);
}

static void test_after(void **st)
{
    (void)st;
    for (int64_t ms = 0; ms < 3000; ms += 999) {
        int64_t now = cu_clock_mono_ns();
        struct timespec ts = cu_clock_after(CLOCK_MONOTONIC, ms);
        assert_true(ts.tv_nsec >= 0 && ts.tv_nsec < 1000000000L);
        int64_t at = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
        assert_true(at - now >= ms * 1000000);
        assert_true(at - now < ms * 1000000 + INT64_C(60000000000));
    }
    struct timespec neg = cu_clock_after(CLOCK_REALTIME, -5);
    assert_true((int64_t)neg.tv_sec <= (int64_t)time(NULL));
}

static void test_micro(void **st)
{
    (void)st;
    char buf[40];
    cu_time_format_micro(0, buf, sizeof buf);
    assert_string_equal(buf, "1970-01-01T00:00:00.000000Z");
    cu_time_format_micro(INT64_C(1795972801123456), buf, sizeof buf);
    assert_string_equal(buf, "2026-11-29T17:20:01.123456Z");
    cu_time_format_micro(INT64_C(1795972801000007), buf, sizeof buf);
    assert_string_equal(buf, "2026-11-29T17:20:01.000007Z");
    cu_time_format_micro(-1, buf, sizeof buf);
    assert_string_equal(buf, "1969-12-31T23:59:59.999999Z");
    /* it reads back through the one RFC 3339 parser */
    int64_t ms = 0;
    cu_time_format_micro(INT64_C(1795972801123999), buf, sizeof buf);
    assert_int_equal(cu_time_parse(buf, &ms), CU_OK);
    assert_int_equal(ms, INT64_C(1795972801123));
    /* a short buffer truncates, NUL-terminated */
    char small[8];
    cu_time_format_micro(0, small, sizeof small);
    assert_string_equal(small, "1970-01");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wall),
        cmocka_unit_test(test_mono),
        cmocka_unit_test(test_after),
        cmocka_unit_test(test_micro),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
