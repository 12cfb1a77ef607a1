/*
 * test_ctrlretry.c - refused writes: the backoff schedule, which refusals
 * are for good, their report; what fails talking to the API server said
 * once, and its recovery.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "cu_ctrlretry.h"

static void test_delay_schedule(void **state)
{
    (void)state;
    /* 200 ms doubling; 10 s for what may pass by itself, 1000 s else */
    assert_int_equal(cu_ctrl_retry_delay_ms(409, 1), 200);
    assert_int_equal(cu_ctrl_retry_delay_ms(409, 2), 400);
    assert_int_equal(cu_ctrl_retry_delay_ms(409, 6), 6400);
    assert_int_equal(cu_ctrl_retry_delay_ms(409, 7), 10000);
    assert_int_equal(cu_ctrl_retry_delay_ms(500, 100), 10000);
    assert_int_equal(cu_ctrl_retry_delay_ms(0, 1000000), 10000);
    assert_int_equal(cu_ctrl_retry_delay_ms(429, 3), 800);
    assert_int_equal(cu_ctrl_retry_delay_ms(413, 1), 200);
    assert_int_equal(cu_ctrl_retry_delay_ms(413, 13), 819200);
    assert_int_equal(cu_ctrl_retry_delay_ms(413, 14), 1000000);
    assert_int_equal(cu_ctrl_retry_delay_ms(422, 2147483647), 1000000);
    assert_int_equal(cu_ctrl_retry_delay_ms(422, 0), 200);
}

static void test_refused_for_good(void **state)
{
    (void)state;
    static const int good[] = { 400, 403, 404, 422 }, not [] = { 0, 200, 401, 409, 413, 429, 500 };
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        assert_true(cu_ctrl_refused_for_good(good[i]));
    for (size_t i = 0; i < sizeof(not ) / sizeof(not [0]); i++)
        assert_false(cu_ctrl_refused_for_good(not [i]));
}

static void test_status_text(void **state)
{
    (void)state;
    char b[200];
    assert_string_equal(
        cu_ctrl_status_text(422, NULL,
                            "{\"kind\":\"Status\",\"reason\":\"Invalid\",\"message\":"
                            "\"Workload \\\"x\\\" is invalid\"}",
                            b, sizeof(b)),
        "HTTP 422 Invalid: Workload \"x\" is invalid");
    assert_string_equal(cu_ctrl_status_text(0, "SSL certificate problem", NULL, b, sizeof(b)),
                        "no answer: SSL certificate problem");
    assert_string_equal(cu_ctrl_status_text(502, NULL, "bad gateway", b, sizeof(b)),
                        "HTTP 502: bad gateway");
    char small[8];
    cu_ctrl_status_text(422, NULL, "{\"message\":\"a long message\"}", small, sizeof(small));
    assert_int_equal(strlen(small), 7);
}

static void test_api_outcome_once(void **state)
{
    (void)state;
    cu_api_health h = { 0 };
    char out[800];
    const char *srv = "https://10.0.0.1:6443";
    /* healthy: nothing to say */
    assert_false(cu_ctrl_api_outcome(&h, srv, 200, NULL, "{}", out, sizeof(out)));
    /* a TLS failure: said once, with curl's error and the server */
    assert_true(cu_ctrl_api_outcome(&h, srv, 0, "SSL certificate problem: self-signed", NULL, out,
                                    sizeof(out)));
    assert_string_equal(out, "cannot reach the API server at https://10.0.0.1:6443: SSL "
                             "certificate problem: self-signed");
    for (int i = 0; i < 5; i++)
        assert_false(cu_ctrl_api_outcome(&h, srv, 0, "SSL certificate problem: self-signed", NULL,
                                         out, sizeof(out)));
    /* answers that say nothing about the connection change nothing */
    assert_false(cu_ctrl_api_outcome(&h, srv, 404, NULL, NULL, out, sizeof(out)));
    assert_false(cu_ctrl_api_outcome(&h, srv, 503, NULL, NULL, out, sizeof(out)));
    /* another failure: said */
    assert_true(cu_ctrl_api_outcome(&h, srv, 401, NULL,
                                    "{\"kind\":\"Status\",\"reason\":\"Unauthorized\",\"message\":"
                                    "\"Unauthorized\"}",
                                    out, sizeof(out)));
    assert_non_null(strstr(out, "refused the controller's credentials: HTTP 401 Unauthorized"));
    assert_false(cu_ctrl_api_outcome(&h, srv, 401, NULL,
                                     "{\"message\":\"Unauthorized\","
                                     "\"reason\":\"Unauthorized\"}",
                                     out, sizeof(out)));
    /* the recovery: said once, naming what failed */
    assert_true(cu_ctrl_api_outcome(&h, srv, 201, NULL, NULL, out, sizeof(out)));
    assert_non_null(strstr(out, "answers again"));
    assert_non_null(strstr(out, "HTTP 401"));
    assert_false(cu_ctrl_api_outcome(&h, srv, 200, NULL, NULL, out, sizeof(out)));
    /* the same failure again after a recovery is said again */
    assert_true(
        cu_ctrl_api_outcome(&h, srv, 403, NULL, "{\"message\":\"forbidden\"}", out, sizeof(out)));
    cu_ctrl_api_health_free(&h);
    assert_null(h.failing);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_delay_schedule),
        cmocka_unit_test(test_refused_for_good),
        cmocka_unit_test(test_status_text),
        cmocka_unit_test(test_api_outcome_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
