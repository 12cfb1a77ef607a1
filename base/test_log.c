/*
 * test_log.c - the controller's logger: text quoting and escaping, JSON
 * escaping checked by parsing each line with json-c, invalid UTF-8,
 * verbosity, the 16 KiB line cap, timestamps from the injected clock.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_log.h"

#define NOW_MS 1795972801123LL /* 2026-11-29T17:20:01.123Z */
#define NOW_TS "2026-11-29T17:20:01.123Z"
#define ELLIPSIS "\xE2\x80\xA6"

typedef struct cap {
    char *buf;
    size_t len;
    FILE *f;
    int64_t now;
    cu_log log;
} cap;

static void cap_open(cap *c, cu_log_format fmt, int verbosity)
{
    memset(c, 0, sizeof(*c));
    c->now = NOW_MS;
    c->f = open_memstream(&c->buf, &c->len);
    assert_non_null(c->f);
    cu_clock clk = { cu_clock_fake_now, &c->now };
    cu_log_init(&c->log, c->f, fmt, verbosity, clk);
}

/* Returns everything written so far (valid until cap_close). */
static const char *cap_text(cap *c)
{
    fflush(c->f);
    return c->buf ? c->buf : "";
}

static void cap_close(cap *c)
{
    fclose(c->f);
    free(c->buf);
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* 1 when s[0..n) is valid UTF-8 (own checker, independent of the logger's). */
static int valid_utf8(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        size_t l = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        if (!l || i + l > n)
            return 0;
        for (size_t k = 1; k < l; k++)
            if ((s[i + k] & 0xC0) != 0x80)
                return 0;
        i += l;
    }
    return 1;
}

typedef struct quote_case {
    const char *value;
    const char *want; /* as it appears after "k=" */
} quote_case;

static void test_text_quoting(void **st)
{
    (void)st;
    static const quote_case cases[] = {
        { "cq", "cq" },
        { "ns/name", "ns/name" },
        { "a b", "\"a b\"" },
        { "", "\"\"" },
        { NULL, "\"\"" },
        { "a=b", "\"a=b\"" },
        { "say \"hi\"", "\"say \\\"hi\\\"\"" },
        { "back\\slash", "\"back\\\\slash\"" },
        { "line\nbreak", "\"line\\nbreak\"" },
        { "tab\there", "\"tab\\there\"" },
        { "cr\r", "\"cr\\r\"" },
        { "bell\x07", "\"bell\\x07\"" },
        { "del\x7f", "\"del\\x7f\"" },
        { "h\xC3\xA9llo", "h\xC3\xA9llo" },                     /* valid UTF-8 stays bare */
        { "bad\xFFutf", "bad\xEF\xBF\xBDutf" },                 /* invalid byte -> U+FFFD */
        { "bad \xC0\xAF", "\"bad \xEF\xBF\xBD\xEF\xBF\xBD\"" }, /* overlong: both bytes */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cap c;
        cap_open(&c, CU_LOG_TEXT, 0);
        cu_log_kv(&c.log, 0, "info", "admitted", "k", cases[i].value, NULL);
        char want[256];
        snprintf(want, sizeof(want), NOW_TS " info admitted k=%s\n", cases[i].want);
        assert_string_equal(cap_text(&c), want);
        cap_close(&c);
    }
}

static void test_text_line_shape(void **st)
{
    (void)st;
    cap c;
    cap_open(&c, CU_LOG_TEXT, 0);
    cu_log_kv(&c.log, 0, "info", "admitted", "workload", "ns/name", "clusterQueue", "cq", NULL);
    cu_log_kv(&c.log, 0, NULL, "Workload admitted", "a b=c\"", "v", "", "empty-key", NULL);
    cu_log_kv(&c.log, 0, "error", "", NULL);
    cu_logf(&c.log, 0, "error", "failed %d times: %s", 3, "boom");
    assert_string_equal(cap_text(&c),
                        NOW_TS " info admitted workload=ns/name clusterQueue=cq\n" NOW_TS
                               " info \"Workload admitted\" a_b_c_=v _=empty-key\n" NOW_TS
                               " error \"\"\n" NOW_TS " error \"failed 3 times: boom\"\n");
    cap_close(&c);
}

static json_object *parse_line(const char *line, size_t len)
{
    json_tokener *tok = json_tokener_new();
    json_object *o = json_tokener_parse_ex(tok, line, (int)len);
    assert_int_equal(json_tokener_get_error(tok), json_tokener_success);
    json_tokener_free(tok);
    assert_non_null(o);
    assert_true(json_object_is_type(o, json_type_object));
    return o;
}

static const char *jget(json_object *o, const char *k)
{
    json_object *v = NULL;
    if (!json_object_object_get_ex(o, k, &v))
        return NULL;
    return json_object_get_string(v);
}

static void test_json_escaping(void **st)
{
    (void)st;
    char ctl[40];
    for (int i = 1; i < 32; i++)
        ctl[i - 1] = (char)i;
    ctl[31] = 0x7f;
    ctl[32] = 0;
    cap c;
    cap_open(&c, CU_LOG_JSON, 0);
    cu_log_kv(&c.log, 0, "info", "say \"hi\"\n", "workload", "ns/name", "ctl", ctl, "quote",
              "a\"b\\c", "utf8", "\xC3\xA9\xF0\x9F\x98\x80", "bad", "x\xFFy\xED\xA0\x80z\xE2\x82",
              "msg", "shadow", "nothing", (const char *)NULL, "k\"ey\n", "v", NULL);
    const char *out = cap_text(&c);
    assert_int_equal(count_lines(out), 1);
    size_t len = strlen(out);
    assert_true(len > 2 && out[len - 1] == '\n' && out[len - 2] == '}');
    /* raw line: no control byte inside */
    for (size_t i = 0; i + 1 < len; i++)
        assert_true((unsigned char)out[i] >= 0x20);
    json_object *o = parse_line(out, len - 1);
    assert_string_equal(jget(o, "ts"), NOW_TS);
    assert_string_equal(jget(o, "level"), "info");
    assert_string_equal(jget(o, "msg"), "say \"hi\"\n");
    assert_string_equal(jget(o, "workload"), "ns/name");
    assert_string_equal(jget(o, "ctl"), ctl);
    assert_string_equal(jget(o, "quote"), "a\"b\\c");
    assert_string_equal(jget(o, "utf8"), "\xC3\xA9\xF0\x9F\x98\x80");
    /* each bad byte -> U+FFFD; the surrogate's 3 bytes and the cut sequence's 2 */
    assert_string_equal(jget(o, "bad"), "x\xEF\xBF\xBDy\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBDz"
                                        "\xEF\xBF\xBD\xEF\xBF\xBD");
    assert_string_equal(jget(o, "msg_"), "shadow");
    json_object *nv = NULL;
    assert_true(json_object_object_get_ex(o, "nothing", &nv));
    assert_null(nv);
    assert_string_equal(jget(o, "k\"ey\n"), "v");
    assert_null(jget(o, "truncated"));
    json_object_put(o);
    cap_close(&c);
}

static void test_verbosity(void **st)
{
    (void)st;
    cap c;
    cap_open(&c, CU_LOG_TEXT, 2);
    for (int v = 0; v <= 5; v++)
        cu_log_kv(&c.log, v, "info", "m", "v",
                  v == 0   ? "0"
                  : v == 1 ? "1"
                  : v == 2 ? "2"
                           : "high",
                  NULL);
    cu_log_kv(&c.log, 9, "error", "always", NULL);
    cu_logf(&c.log, 3, "info", "hidden %d", 3);
    cu_logf(&c.log, 2, "info", "shown %d", 2);
    const char *out = cap_text(&c);
    assert_int_equal(count_lines(out), 5);
    assert_null(strstr(out, "high"));
    assert_null(strstr(out, "hidden"));
    assert_non_null(strstr(out, "always"));
    assert_non_null(strstr(out, "shown 2"));
    assert_true(cu_log_enabled(&c.log, 2, "info"));
    assert_false(cu_log_enabled(&c.log, 3, "info"));
    assert_true(cu_log_enabled(&c.log, 3, "error"));
    cap_close(&c);

    /* no output stream: nothing, no crash */
    cu_log off;
    cu_clock clk = { NULL, NULL };
    cu_log_init(&off, NULL, CU_LOG_JSON, 10, clk);
    assert_false(cu_log_enabled(&off, 0, "error"));
    cu_log_kv(&off, 0, "error", "dropped", "k", "v", NULL);
    cu_logf(&off, 0, "error", "dropped %s", "too");
}

static char *repeat(const char *unit, size_t times)
{
    size_t u = strlen(unit);
    char *s = malloc(u * times + 1);
    assert_non_null(s);
    for (size_t i = 0; i < times; i++)
        memcpy(s + i * u, unit, u);
    s[u * times] = 0;
    return s;
}

static void test_text_truncation(void **st)
{
    (void)st;
    static const struct {
        const char *unit;
        const char *tail;
    } cases[] = {
        { "x", "x" ELLIPSIS "\n" },               /* bare value */
        { "x y ", ELLIPSIS "\"\n" },              /* quoted value */
        { "\xC3\xA9", "\xC3\xA9" ELLIPSIS "\n" }, /* cut at a character boundary */
        { "\n", "\\n" ELLIPSIS "\"\n" },          /* cut at an escape boundary */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *big = repeat(cases[i].unit, 20000);
        cap c;
        cap_open(&c, CU_LOG_TEXT, 0);
        cu_log_kv(&c.log, 0, "info", "big", "v", big, "after", "gone", NULL);
        cu_log_kv(&c.log, 0, "info", "next", NULL);
        const char *out = cap_text(&c);
        const char *nl = strchr(out, '\n');
        assert_non_null(nl);
        size_t l1 = (size_t)(nl - out) + 1;
        assert_true(l1 <= CU_LOG_LINE_MAX);
        assert_true(l1 > CU_LOG_LINE_MAX - 64);
        size_t tl = strlen(cases[i].tail);
        assert_memory_equal(out + l1 - tl, cases[i].tail, tl);
        assert_true(valid_utf8((const unsigned char *)out, l1));
        assert_null(strstr(out, "gone"));
        assert_string_equal(nl + 1, NOW_TS " info next\n"); /* the next line is whole */
        cap_close(&c);
        free(big);
    }
}

/* The value of the last member before "truncated" (json-c keeps key order). */
static const char *last_member(json_object *o)
{
    const char *last = NULL;
    json_object_object_foreach (o, k, v) {
        if (strcmp(k, "truncated") != 0)
            last = json_object_get_string(v);
    }
    return last;
}

static void test_json_truncation(void **st)
{
    (void)st;
    /* one huge value, a huge value of escapes, a huge message, many pairs */
    for (int mode = 0; mode < 4; mode++) {
        cap c;
        cap_open(&c, CU_LOG_JSON, 0);
        char *big = repeat(mode == 1 ? "\x01" : mode == 0 ? "\xE2\x82\xAC" : "y", 20000);
        if (mode == 0 || mode == 1)
            cu_log_kv(&c.log, 0, "info", "big", "k", "v", "big", big, "after", "gone", NULL);
        else if (mode == 2)
            cu_log_kv(&c.log, 0, "info", big, "after", "gone", NULL);
        else {
            char *v = repeat("z", 1000);
            cu_log_kv(&c.log, 0, "info", "many", "k0", v, "k1", v, "k2", v, "k3", v, "k4", v, "k5",
                      v, "k6", v, "k7", v, "k8", v, "k9", v, "k10", v, "k11", v, "k12", v, "k13", v,
                      "k14", v, "k15", v, "k16", v, "k17", v, "k18", v, "k19", v, "after", "gone",
                      NULL);
            free(v);
        }
        const char *out = cap_text(&c);
        size_t len = strlen(out);
        assert_int_equal(count_lines(out), 1);
        assert_true(len <= CU_LOG_LINE_MAX);
        assert_true(len > CU_LOG_LINE_MAX - 64);
        json_object *o = parse_line(out, len - 1);
        json_object *t = NULL;
        assert_true(json_object_object_get_ex(o, "truncated", &t));
        assert_true(json_object_get_boolean(t));
        assert_null(jget(o, "after"));
        assert_string_equal(jget(o, "ts"), NOW_TS);
        const char *cut = mode == 2 ? jget(o, "msg") : mode == 3 ? last_member(o) : jget(o, "big");
        assert_non_null(cut);
        size_t cl = strlen(cut);
        assert_true(mode == 3 ? cl > 3 && cl < 1003 : cl > 1000);
        assert_memory_equal(cut + cl - 3, ELLIPSIS, 3);
        if (mode == 3) {
            for (size_t i = 0; i + 3 < cl; i++)
                assert_int_equal(cut[i], 'z');
            assert_string_equal(jget(o, "k15"), jget(o, "k0")); /* earlier pairs whole */
            assert_int_equal(strlen(jget(o, "k0")), 1000);
        }
        if (mode == 1)
            for (size_t i = 0; i + 3 < cl; i++)
                assert_int_equal(cut[i], 1);
        if (mode == 0)
            assert_int_equal((cl - 3) % 3, 0); /* whole euro signs only */
        json_object_put(o);
        cap_close(&c);
        free(big);
    }
}

/* Whatever the cut point, a pair whose key does not fit is dropped whole:
 * the JSON still parses and no partial key shows up. */
static void test_truncation_never_splits_a_key(void **st)
{
    (void)st;
    char *key = repeat("K", 300);
    char *val = repeat("v", 16400);
    for (size_t n = 15700; n <= 16400; n++) {
        val[n] = 0;
        for (int json = 0; json < 2; json++) {
            cap c;
            cap_open(&c, json ? CU_LOG_JSON : CU_LOG_TEXT, 0);
            cu_log_kv(&c.log, 0, "info", "m", "a", val, key, "x", NULL);
            const char *out = cap_text(&c);
            size_t len = strlen(out);
            assert_true(len <= CU_LOG_LINE_MAX);
            assert_int_equal(count_lines(out), 1);
            const char *k = strstr(out, "KK");
            if (k)
                assert_memory_equal(k, key, 300);
            if (json) {
                json_object *o = parse_line(out, len - 1);
                json_object_put(o);
            }
            cap_close(&c);
        }
        val[n] = 'v';
    }
    free(key);
    free(val);
}

typedef struct ts_case {
    int64_t ms;
    const char *want;
} ts_case;

static void test_timestamps(void **st)
{
    (void)st;
    static const ts_case cases[] = {
        { 0, "1970-01-01T00:00:00.000Z" },
        { 1, "1970-01-01T00:00:00.001Z" },
        { -1, "1969-12-31T23:59:59.999Z" },
        { NOW_MS, NOW_TS },
        { 1709208000000LL + 999, "2024-02-29T12:00:00.999Z" },
        { 951868800000LL, "2000-03-01T00:00:00.000Z" },
        { 951868800000LL - 1, "2000-02-29T23:59:59.999Z" },
        { -2208988800000LL, "1900-01-01T00:00:00.000Z" },
        { 253402300799999LL, "9999-12-31T23:59:59.999Z" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char out[64];
        cu_log_time_format(cases[i].ms, out, sizeof(out));
        assert_string_equal(out, cases[i].want);
    }
    /* the injected clock drives each line */
    cap c;
    cap_open(&c, CU_LOG_JSON, 0);
    cu_log_kv(&c.log, 0, "info", "a", NULL);
    c.now = 1709208000000LL + 42;
    cu_log_kv(&c.log, 0, "info", "b", NULL);
    assert_string_equal(cap_text(&c),
                        "{\"ts\":\"" NOW_TS "\",\"level\":\"info\",\"msg\":\"a\"}\n"
                        "{\"ts\":\"2024-02-29T12:00:00.042Z\",\"level\":\"info\",\"msg\":\"b\"}\n");
    cap_close(&c);
    /* extreme values do not crash */
    char out[64];
    cu_log_time_format(INT64_MIN, out, sizeof(out));
    cu_log_time_format(INT64_MAX, out, sizeof(out));
}

static void test_format_parse(void **st)
{
    (void)st;
    cu_log_format f = CU_LOG_JSON;
    assert_int_equal(cu_log_format_parse("text", &f), CU_OK);
    assert_int_equal(f, CU_LOG_TEXT);
    assert_int_equal(cu_log_format_parse("json", &f), CU_OK);
    assert_int_equal(f, CU_LOG_JSON);
    static const char *bad[] = { "JSON", "", "xml", "text ", "jsonl" };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        f = CU_LOG_TEXT;
        assert_int_equal(cu_log_format_parse(bad[i], &f), CU_EINVAL);
        assert_int_equal(f, CU_LOG_TEXT);
    }
    assert_int_equal(cu_log_format_parse(NULL, &f), CU_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_quoting),
        cmocka_unit_test(test_text_line_shape),
        cmocka_unit_test(test_json_escaping),
        cmocka_unit_test(test_verbosity),
        cmocka_unit_test(test_text_truncation),
        cmocka_unit_test(test_json_truncation),
        cmocka_unit_test(test_truncation_never_splits_a_key),
        cmocka_unit_test(test_timestamps),
        cmocka_unit_test(test_format_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
