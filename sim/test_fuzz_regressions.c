/*
 * test_fuzz_regressions.c - replays every input the simulate fuzzer once
 * crashed on (sim/fuzz-regressions/) through the same code path, so each
 * fixed finding stays fixed. A crash, sanitizer report or invariant
 * violation fails the test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_simulate.c"

static void test_replay(void **state)
{
    (void)state;
    const char *dir = "sim/fuzz-regressions";
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *de;
    int n = 0;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        static uint8_t buf[1 << 20];
        size_t len = fread(buf, 1, sizeof buf, f);
        fclose(f);
        print_message("replaying %s (%zu bytes)\n", path, len);
        LLVMFuzzerTestOneInput(buf, len);
        n++;
    }
    closedir(d);
    assert_true(n >= 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_replay) };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
