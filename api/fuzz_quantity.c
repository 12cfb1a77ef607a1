/*
 * fuzz_quantity.c - libFuzzer target for cu_qty_parse_scaled /
 * cu_qty_format_scaled, at both scales (milli-units and whole units).
 *
 * The input bytes, up to the first NUL, are parsed as a quantity. When
 * parsing succeeds the value is printed in the parsed format, the printed
 * text is parsed again and must give the same value, and printing that
 * value again must give the same text (the canonical form is a fixed
 * point). The value is also printed in the other two formats and must
 * round-trip there too. A value that fits in milli-units must also fit in
 * whole units, as the milli value divided by 1000 rounded away from zero.
 * Any mismatch aborts.
 *
 * Build: clang -fsanitize=fuzzer,address,undefined -I api \
 *            api/fuzz_quantity.c api/cu_quantity.c base/cu_base.c
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_quantity.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok, const char *what, const char *in, const char *out)
{
    if (!ok) {
        fprintf(stderr, "fuzz_quantity: %s: input \"%s\" printed \"%s\"\n", what, in, out);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0'; /* parse stops at the first NUL in data */

    int64_t vals[2] = { 0, 0 };
    cu_err errs[2];
    for (int sc = 0; sc < 2; sc++) {
        int scale = sc ? CU_QTY_SCALE_MILLI : CU_QTY_SCALE_UNIT;
        int64_t v = 0;
        cu_qfmt fmt = CU_QFMT_DECIMAL_SI;
        cu_err err = cu_qty_parse_scaled(s, scale, &v, &fmt);
        errs[sc] = err;
        vals[sc] = v;
        check(err == CU_OK || err == CU_EINVAL || err == CU_EOVERFLOW, "unexpected error code", s,
              "");
        if (err != CU_OK)
            continue;
        for (int k = 0; k < 3; k++) {
            cu_qfmt f = k == 0 ? fmt : (cu_qfmt)(((unsigned)fmt + (unsigned)k) % 3u);
            char out[32], out2[32];
            memset(out, 'x', sizeof(out));
            cu_qty_format_scaled(v, scale, f, out, sizeof(out));
            check(memchr(out, '\0', sizeof(out)) != NULL && strlen(out) < sizeof(out) - 1,
                  "output not terminated or 32 bytes not enough", s, "");
            int64_t back = 0;
            cu_err err2 = cu_qty_parse_scaled(out, scale, &back, NULL);
            check(err2 == CU_OK, "canonical form does not parse", s, out);
            check(back == v, "value does not round-trip", s, out);
            cu_qty_format_scaled(back, scale, f, out2, sizeof(out2));
            check(strcmp(out, out2) == 0, "canonical form not stable", s, out);
        }
    }
    if (errs[1] == CU_OK) {
        int64_t m = vals[1];
        int64_t want = m / 1000 + (m % 1000 > 0) - (m % 1000 < 0);
        check(errs[0] == CU_OK && vals[0] == want, "whole units disagree with milli", s, "");
    }
    free(s);
    return 0;
}
