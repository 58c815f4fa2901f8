/* SPDX-License-Identifier: Apache-2.0 */
/* check_common.c - unit tests for common/: UTF-8, dynbuf caps, number parsing */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "common/pv.h"
#include "common/pv_args.h"
#include "common/pv_dynbuf.h"
#include "common/pv_text.h"

static const struct {
    const char *s;
    size_t len;
    bool valid;
} utf8_rows[] = {
    {"", 0, true},
    {"ascii only", 10, true},
    {"\xc3\xa9", 2, true},                 /* U+00E9 */
    {"\xe2\x82\xac", 3, true},             /* U+20AC */
    {"\xf0\x9f\x98\x80", 4, true},         /* U+1F600 */
    {"\xf4\x8f\xbf\xbf", 4, true},         /* U+10FFFF */
    {"\xc0\xaf", 2, false},                /* overlong '/' */
    {"\xc1\xbf", 2, false},                /* overlong */
    {"\xe0\x80\xaf", 3, false},            /* overlong */
    {"\xed\xa0\x80", 3, false},            /* surrogate U+D800 */
    {"\xf4\x90\x80\x80", 4, false},        /* above U+10FFFF */
    {"\xf5\x80\x80\x80", 4, false},        /* invalid lead byte */
    {"\xc3", 1, false},                    /* truncated */
    {"\xe2\x82", 2, false},                /* truncated */
    {"\x80", 1, false},                    /* lone continuation */
    {"a\xc3(", 3, false},                  /* bad continuation */
    {"\xff", 1, false},
};

START_TEST(utf8_table)
{
    ck_assert_msg(pv_utf8_valid((const unsigned char *)utf8_rows[_i].s, utf8_rows[_i].len) ==
                      utf8_rows[_i].valid,
                  "row %d", _i);
}
END_TEST

static const struct {
    const char *s;
    uint64_t max;
    bool ok;
    uint64_t want;
} num_rows[] = {
    {"0", 10, true, 0},
    {"443", 65535, true, 443},
    {"65535", 65535, true, 65535},
    {"65536", 65535, false, 0},
    {"18446744073709551615", UINT64_MAX, true, UINT64_MAX},
    {"18446744073709551616", UINT64_MAX, false, 0},
    {"", 10, false, 0},
    {"-1", 10, false, 0},
    {"+1", 10, false, 0},
    {" 1", 10, false, 0},
    {"1a", 10, false, 0},
    {"0x10", 100, false, 0},
};

START_TEST(parse_u64_table)
{
    uint64_t v = 12345;
    pv_result r = pv_parse_u64(num_rows[_i].s, strlen(num_rows[_i].s), num_rows[_i].max, &v);
    ck_assert_msg(pv_ok(r) == num_rows[_i].ok, "row %d (%s)", _i, num_rows[_i].s);
    if (num_rows[_i].ok) {
        ck_assert_uint_eq(v, num_rows[_i].want);
    } else {
        ck_assert_int_eq(r.err, PV_ERR_NUMBER);
    }
}
END_TEST

START_TEST(dynbuf_cap)
{
    struct pv_dynbuf b;
    char *out;
    size_t len = 0;

    pv_dynbuf_init(&b, 8);
    ck_assert(pv_dynbuf_validate(&b));
    ck_assert(pv_ok(pv_dynbuf_addstr(&b, "abcd")));
    ck_assert(pv_ok(pv_dynbuf_printf(&b, "%d", 123)));
    ck_assert_str_eq(b.buf, "abcd123");
    /* Past the cap: refused, buffer unchanged. */
    ck_assert_int_eq(pv_dynbuf_addstr(&b, "xy").err, PV_ERR_TOOBIG);
    ck_assert_str_eq(b.buf, "abcd123");
    ck_assert(pv_ok(pv_dynbuf_addc(&b, 'z')));
    ck_assert_int_eq(pv_dynbuf_addc(&b, 'q').err, PV_ERR_TOOBIG);
    ck_assert(pv_dynbuf_validate(&b));
    out = pv_dynbuf_take(&b, &len);
    ck_assert_uint_eq(len, 8);
    ck_assert_str_eq(out, "abcd123z");
    ck_assert_ptr_null(b.buf);
    free(out);
    pv_dynbuf_free(&b);
}
END_TEST

START_TEST(error_table)
{
    ck_assert_str_eq(pv_strerror(PV_ERR_TOOBIG), "input exceeds size limit");
    ck_assert_int_eq(pv_error_category(PV_ERR_TIMEOUT), PV_CAT_SOLVER);
    ck_assert_str_eq(pv_strerror(-1), "unknown error");
    ck_assert_int_eq(pv_error_category(PV_ERR__COUNT), PV_CAT_INTERNAL);
}
END_TEST

START_TEST(long_options)
{
    char *argv[] = {(char *)"x", (char *)"--port=5", (char *)"--port", (char *)"6",
                    (char *)"--portx", (char *)"7", (char *)"--port="};
    int argc = (int)PV_ARRAY_LEN(argv);
    int i = 1;

    ck_assert_str_eq(pv_opt_value(argc, argv, &i, "--port"), "5");
    ck_assert_int_eq(i, 1);
    i = 2;
    ck_assert_str_eq(pv_opt_value(argc, argv, &i, "--port"), "6");
    ck_assert_int_eq(i, 3); /* the separate value is consumed */
    i = 4;
    ck_assert_ptr_null(pv_opt_value(argc, argv, &i, "--port")); /* a longer name */
    ck_assert_int_eq(i, 4);
    i = 6;
    ck_assert_str_eq(pv_opt_value(argc, argv, &i, "--port"), "");
    ck_assert_uint_eq(pv_opt_number("65535", 65535, "--port"), 65535);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("common");
    TCase *tc = tcase_create("common");
    SRunner *sr;
    int failed;

    tcase_add_loop_test(tc, utf8_table, 0, (int)PV_ARRAY_LEN(utf8_rows));
    tcase_add_loop_test(tc, parse_u64_table, 0, (int)PV_ARRAY_LEN(num_rows));
    tcase_add_test(tc, dynbuf_cap);
    tcase_add_test(tc, error_table);
    tcase_add_test(tc, long_options);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
