/*
 * test_prom.h - helpers for the tests of scrapes (base/test_prom.c,
 * controller/test_metrics.c). Include after the cmocka headers and
 * cu_prom.h.
 */
#ifndef CU_TEST_PROM_H
#define CU_TEST_PROM_H

#include <stdlib.h>
#include <string.h>

/* Renders m in the given format into a malloc'd string. */
static char *render(const cu_metrics *m, int om)
{
    cu_buf b;
    cu_buf_init(&b, 0);
    assert_int_equal(cu_metrics_write(m, &b, om), CU_OK);
    char *s = strdup(cu_buf_str(&b));
    cu_buf_free(&b);
    return s;
}

/* Asserts that text contains line as a whole line. */
static void assert_line(const char *text, const char *line)
{
    size_t n = strlen(line);
    for (const char *p = text; (p = strstr(p, line)) != NULL; p++)
        if ((p == text || p[-1] == '\n') && (p[n] == '\n' || p[n] == '\0'))
            return;
    fail_msg("line not found: %s\n--- in ---\n%s", line, text);
}

#endif
