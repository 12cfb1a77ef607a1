/*
 * test_deep.h - JSON text nested n deep, {"d":{"d":...1...}}, for the tests
 * of the one nesting limit, CU_JSON_MAX_DEPTH (kube/test_informer.c,
 * controller/test_controller.c). Include after the cmocka headers.
 */
#ifndef CU_TEST_DEEP_H
#define CU_TEST_DEEP_H

#include <stdlib.h>
#include <string.h>

/* {"d":{"d":...1...}} nested n deep, in a new string (caller frees). */
static char *deep_json(int n)
{
    char *s = malloc((size_t)n * 6 + 2), *p = s;
    assert_non_null(s);
    for (int i = 0; i < n; i++) {
        memcpy(p, "{\"d\":", 5);
        p += 5;
    }
    *p++ = '1';
    memset(p, '}', (size_t)n);
    p[n] = 0;
    return s;
}

#endif
