/* SPDX-License-Identifier: Apache-2.0 */
/* check_common.c - unit tests for common/: UTF-8, dynbuf caps, number parsing */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/pv.h"
#include "common/pv_args.h"
#include "common/pv_file.h"
#include "common/pv_settings.h"
#include "common/pv_dynbuf.h"
#include "common/pv_text.h"
#include "common/pv_time.h"
#include "common/pv_token.h"

static const struct {
    const char *s;
    size_t len;
    bool valid;
} utf8_rows[] = {
    {"", 0, true},
    {"ascii only", 10, true},
    {"\xc3\xa9", 2, true},          /* U+00E9 */
    {"\xe2\x82\xac", 3, true},      /* U+20AC */
    {"\xf0\x9f\x98\x80", 4, true},  /* U+1F600 */
    {"\xf4\x8f\xbf\xbf", 4, true},  /* U+10FFFF */
    {"\xc0\xaf", 2, false},         /* overlong '/' */
    {"\xc1\xbf", 2, false},         /* overlong */
    {"\xe0\x80\xaf", 3, false},     /* overlong */
    {"\xed\xa0\x80", 3, false},     /* surrogate U+D800 */
    {"\xf4\x90\x80\x80", 4, false}, /* above U+10FFFF */
    {"\xf5\x80\x80\x80", 4, false}, /* invalid lead byte */
    {"\xc3", 1, false},             /* truncated */
    {"\xe2\x82", 2, false},         /* truncated */
    {"\x80", 1, false},             /* lone continuation */
    {"a\xc3(", 3, false},           /* bad continuation */
    {"\xff", 1, false},
};

START_TEST(utf8_table)
{
    ck_assert_msg(pv_utf8_valid((const unsigned char *)utf8_rows[_i].s, utf8_rows[_i].len) ==
                      utf8_rows[_i].valid,
                  "row %d", _i);
}
END_TEST

/* The Cf table's edges: each range's first and last code point, and the
 * neighbours just outside it (Unicode 15.1 General Category). */
static const struct {
    uint32_t cp;
    bool format;
} cf_rows[] = {
    {0x00AC, false},  {0x00AD, true},   {0x00AE, false},   {0x05FF, false},  {0x0600, true},
    {0x0605, true},   {0x0606, false},  {0x061B, false},   {0x061C, true},   {0x061D, false},
    {0x06DD, true},   {0x070F, true},   {0x088F, false},   {0x0890, true},   {0x0891, true},
    {0x0892, false},  {0x08E2, true},   {0x180E, true},    {0x200A, false},  {0x200B, true},
    {0x200D, true},   {0x200E, true},   {0x200F, true},    {0x2010, false},  {0x2029, false},
    {0x202A, true},   {0x202E, true},   {0x202F, false},   {0x205F, false},  {0x2060, true},
    {0x2064, true},   {0x2065, false},  {0x2066, true},    {0x2069, true},   {0x206F, true},
    {0x2070, false},  {0xFEFE, false},  {0xFEFF, true},    {0xFF00, false},  {0xFFF8, false},
    {0xFFF9, true},   {0xFFFB, true},   {0xFFFC, false},   {0x110BD, true},  {0x110CD, true},
    {0x1342F, false}, {0x13430, true},  {0x1343F, true},   {0x13440, false}, {0x1BC9F, false},
    {0x1BCA0, true},  {0x1BCA3, true},  {0x1BCA4, false},  {0x1D172, false}, {0x1D173, true},
    {0x1D17A, true},  {0x1D17B, false}, {0xE0000, false},  {0xE0001, true},  {0xE0002, false},
    {0xE001F, false}, {0xE0020, true},  {0xE007F, true},   {0xE0080, false}, {0x0000, false},
    {0x0041, false},  {0x00E9, false},  {0x10FFFF, false},
};

START_TEST(cf_table)
{
    ck_assert_msg(pv_unicode_is_format(cf_rows[_i].cp) == cf_rows[_i].format, "U+%04X",
                  (unsigned)cf_rows[_i].cp);
}
END_TEST

/* pv_hexval: the sixteen digits in both cases, nothing else (every byte). */
START_TEST(hexval_bytes)
{
    for (unsigned c = 0; c < 256; c++) {
        int want = c >= '0' && c <= '9'   ? (int)(c - '0')
                   : c >= 'a' && c <= 'f' ? (int)(c - 'a' + 10)
                   : c >= 'A' && c <= 'F' ? (int)(c - 'A' + 10)
                                          : -1;
        ck_assert_int_eq(pv_hexval((unsigned char)c), want);
    }
}
END_TEST

static const struct {
    const char *s;
    enum pv_text_verdict want;
    uint32_t cp;
    size_t off;
} text_rows[] = {
    {"", PV_TEXT_OK, 0, 0},
    {"gh_api caf\xc3\xa9", PV_TEXT_OK, 0, 12},
    {"a\xe2\x80\xae"
     "b",
     PV_TEXT_FORMAT_CHAR, 0x202E, 1},                      /* RIGHT-TO-LEFT OVERRIDE */
    {"ab\xe2\x80\x8b", PV_TEXT_FORMAT_CHAR, 0x200B, 2},    /* ZERO WIDTH SPACE */
    {"\xef\xbb\xbfx", PV_TEXT_FORMAT_CHAR, 0xFEFF, 0},     /* BOM */
    {"x\xe2\x81\xa6", PV_TEXT_FORMAT_CHAR, 0x2066, 1},     /* LEFT-TO-RIGHT ISOLATE */
    {"\xf3\xa0\x80\x81", PV_TEXT_FORMAT_CHAR, 0xE0001, 0}, /* LANGUAGE TAG */
    {"\xc2\xad", PV_TEXT_FORMAT_CHAR, 0x00AD, 0},          /* SOFT HYPHEN */
    {"ok\xc0\xaf", PV_TEXT_BAD_UTF8, 0, 2},                /* overlong */
    {"\xed\xa0\x80", PV_TEXT_BAD_UTF8, 0, 0},              /* surrogate */
    {"abc\xe2\x80", PV_TEXT_BAD_UTF8, 0, 3},               /* truncated */
};

START_TEST(text_check_table)
{
    uint32_t cp = 1;
    size_t off = 99;
    const char *s = text_rows[_i].s;

    ck_assert_int_eq(pv_text_check((const unsigned char *)s, strlen(s), &cp, &off),
                     text_rows[_i].want);
    ck_assert_uint_eq(cp, text_rows[_i].cp);
    ck_assert_uint_eq(off, text_rows[_i].off);
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

/* One command line per row: the status pv_args_parse returns and, when it
 * goes on, --port's value, how often --tag was given and the operands. */
static const struct pv_opt args_opts[] = {
    {"port", "N", "a number", 0},
    {"tag", "T", "may repeat", PV_OPT_REPEAT},
    {"quiet", NULL, "a flag", 0},
    {"token", "TOKEN", "never on the command line", PV_OPT_REFUSE},
};
static const struct pv_cmd args_cmd = {
    .prog = "t",
    .synopsis = "[options] FILE...",
    .summary = "test",
    .opts = args_opts,
    .nopts = PV_ARRAY_LEN(args_opts),
    .example = "t --port 1 f",
    .version = "t 1",
};
static const struct {
    const char *line[6];
    enum pv_args_status st;
    const char *port;
    unsigned tags;
    bool quiet;
    const char *pos0, *pos1;
} args_rows[] = {
    {{"--port", "5", "f"}, PV_ARGS_OK, "5", 0, false, "f", NULL},
    {{"--port=6", "f", "g"}, PV_ARGS_OK, "6", 0, false, "f", "g"},
    {{"f", "--port=", "g"}, PV_ARGS_OK, "", 0, false, "f", "g"},
    {{"a", "--tag", "x", "--tag=y", "--quiet", "b"}, PV_ARGS_OK, NULL, 2, true, "a", "b"},
    {{"--", "--port", "-"}, PV_ARGS_OK, NULL, 0, false, "--port", "-"},
    {{"-", "--port", "-1"}, PV_ARGS_OK, "-1", 0, false, "-", NULL},
    {{"--help", "--bogus"}, PV_ARGS_EXIT0, NULL, 0, false, NULL, NULL},
    {{"-h"}, PV_ARGS_EXIT0, NULL, 0, false, NULL, NULL},
    {{"--version"}, PV_ARGS_EXIT0, NULL, 0, false, NULL, NULL},
    /* negative rows */
    {{"--portx", "7"}, PV_ARGS_USAGE, NULL, 0, false, NULL, NULL},
    {{"--por", "7"}, PV_ARGS_USAGE, NULL, 0, false, NULL, NULL},
    {{"--port"}, PV_ARGS_USAGE, NULL, 0, false, NULL, NULL},
    {{"--port", "1", "--port", "2"}, PV_ARGS_USAGE, NULL, 0, false, NULL, NULL},
    {{"--quiet=yes"}, PV_ARGS_USAGE, NULL, 0, false, NULL, NULL},
    {{"--token", "secret"}, PV_ARGS_USAGE, NULL, 0, false, NULL, NULL},
    {{"--token=secret"}, PV_ARGS_USAGE, NULL, 0, false, NULL, NULL},
    {{"-x"}, PV_ARGS_USAGE, NULL, 0, false, NULL, NULL},
    {{"f", "-p", "1"}, PV_ARGS_USAGE, NULL, 0, false, NULL, NULL},
};

START_TEST(args_table)
{
    char *argv[8] = {PV_UNCONST("t")};
    int argc = 1;
    struct pv_args a;

    while (argc < 7 && args_rows[_i].line[argc - 1] != NULL) {
        argv[argc] = PV_UNCONST(args_rows[_i].line[argc - 1]);
        argc++;
    }
    ck_assert_int_eq(pv_args_parse(&args_cmd, argc, argv, &a), args_rows[_i].st);
    if (args_rows[_i].st != PV_ARGS_OK) {
        return;
    }
    if (args_rows[_i].port == NULL) {
        ck_assert_ptr_null(pv_args_get(&a, "port"));
    } else {
        ck_assert_str_eq(pv_args_get(&a, "port"), args_rows[_i].port);
    }
    ck_assert_uint_eq(pv_args_count(&a, "tag"), args_rows[_i].tags);
    ck_assert(pv_args_has(&a, "quiet") == args_rows[_i].quiet);
    ck_assert_int_eq(a.npos, (args_rows[_i].pos0 != NULL) + (args_rows[_i].pos1 != NULL));
    if (args_rows[_i].pos0 != NULL) {
        ck_assert_str_eq(a.pos[0], args_rows[_i].pos0);
    }
    if (args_rows[_i].pos1 != NULL) {
        ck_assert_str_eq(a.pos[1], args_rows[_i].pos1);
    }
    if (args_rows[_i].tags == 2) {
        ck_assert_str_eq(pv_args_nth(&a, "tag", 0), "x");
        ck_assert_str_eq(pv_args_nth(&a, "tag", 1), "y");
        ck_assert_ptr_null(pv_args_nth(&a, "tag", 2));
    }
}
END_TEST

/* The servers' tables: a repeated option takes the last value. */
START_TEST(args_last_wins)
{
    struct pv_cmd cmd = args_cmd;
    char *argv[] = {PV_UNCONST("t"), PV_UNCONST("--port"), PV_UNCONST("1"), PV_UNCONST("--port=2")};
    struct pv_args a;

    cmd.last_wins = true;
    ck_assert_int_eq(pv_args_parse(&cmd, 4, argv, &a), PV_ARGS_OK);
    ck_assert_str_eq(pv_args_get(&a, "port"), "2");
    ck_assert_uint_eq(pv_args_count(&a, "port"), 2);
}
END_TEST

START_TEST(args_number)
{
    char *argv[] = {PV_UNCONST("t"), PV_UNCONST("--port=70000")};
    struct pv_args a;
    uint64_t v = 9;

    ck_assert_int_eq(pv_args_parse(&args_cmd, 2, argv, &a), PV_ARGS_OK);
    ck_assert(!pv_args_number(&a, "port", 0, 65535, &v));
    ck_assert(pv_args_number(&a, "port", 0, 100000, &v));
    ck_assert_uint_eq(v, 70000);
    ck_assert(!pv_args_number(&a, "port", 80000, 100000, &v));
    ck_assert_uint_eq(pv_opt_number("65535", 65535, "--port"), 65535);
}
END_TEST

/* pv_file_read: the messages every command and server prints. */
START_TEST(file_read)
{
    char dir[] = "/tmp/check_common_XXXXXX";
    char path[256];
    char err[512];
    char *buf = PV_UNCONST("x");
    size_t len = 7;
    FILE *f;

    ck_assert_ptr_nonnull(mkdtemp(dir));
    ck_assert(!pv_ok(pv_file_read(dir, 100, false, &buf, &len, err, sizeof(err))));
    ck_assert_ptr_null(buf);
    snprintf(path, sizeof(path), "%s: Is a directory", dir);
    ck_assert_str_eq(err, path);
    snprintf(path, sizeof(path), "%s/none", dir);
    ck_assert(!pv_ok(pv_file_read(path, 100, false, &buf, &len, err, sizeof(err))));
    ck_assert_str_eq(pv_file_reason(path, err), "No such file or directory");
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("0123456789", f);
    fclose(f);
    ck_assert(pv_ok(pv_file_read(path, 10, false, &buf, &len, err, sizeof(err))));
    ck_assert_uint_eq(len, 10);
    ck_assert_str_eq(buf, "0123456789");
    free(buf);
    ck_assert_int_eq(pv_file_read(path, 9, false, &buf, &len, err, sizeof(err)).err, PV_ERR_TOOBIG);
    ck_assert_str_eq(pv_file_reason(path, err), "larger than 9 bytes");
    ck_assert(!pv_ok(pv_file_read("/dev/null", 10, false, &buf, &len, err, sizeof(err))));
    ck_assert_str_eq(err, "/dev/null: not a regular file");
    unlink(path);
    rmdir(dir);
}
END_TEST

/* pv_file_read_fd: a descriptor the caller opened (here a pipe: /proc files
 * are not regular either), read whole, empty, and over the cap. */
START_TEST(file_read_fd)
{
    int p[2];
    char *buf = PV_UNCONST("x");
    size_t len = 7;

    ck_assert_int_eq(pipe(p), 0);
    ck_assert_int_eq(write(p[1], "abcdef", 6), 6);
    close(p[1]);
    ck_assert_int_eq(pv_file_read_fd(p[0], 6, &buf, &len), 0);
    ck_assert_uint_eq(len, 6);
    ck_assert_str_eq(buf, "abcdef");
    free(buf);
    close(p[0]);
    ck_assert_int_eq(pipe(p), 0);
    close(p[1]);
    ck_assert_int_eq(pv_file_read_fd(p[0], 6, &buf, &len), 0);
    ck_assert_uint_eq(len, 0);
    ck_assert_str_eq(buf, "");
    free(buf);
    close(p[0]);
    ck_assert_int_eq(pipe(p), 0);
    ck_assert_int_eq(write(p[1], "abcdefg", 7), 7);
    close(p[1]);
    ck_assert_int_eq(pv_file_read_fd(p[0], 6, &buf, &len), EFBIG);
    ck_assert_ptr_null(buf);
    close(p[0]);
}
END_TEST

/* One token reader for every token (common/pv_token.h): rows of file
 * contents and the expected token or message. */
static const struct {
    const char *content;
    const char *token; /* NULL: refused */
    const char *why;
} token_rows[] = {
    {"0123456789abcdef", "0123456789abcdef", NULL},
    {" \t0123456789abcdef\r\n\n", "0123456789abcdef", NULL},
    {"0123456789abcde\n", NULL, "a token is 16..4096 bytes"},
    {"", NULL, "a token is 16..4096 bytes"},
    {"0123456789 abcdef", NULL, "a token is printable ASCII without spaces"},
    {"0123456789abcdef\x7f", NULL, "a token is printable ASCII without spaces"},
    {"0123456789\xc3\xa9"
     "abcdef",
     NULL, "a token is printable ASCII without spaces"},
};

START_TEST(token_table)
{
    char path[] = "/tmp/check_common_tok_XXXXXX";
    char err[512];
    char want[600];
    char *tok = NULL;
    size_t len = 0;
    unsigned mode = 1;
    int fd = mkstemp(path);
    size_t n = strlen(token_rows[_i].content);

    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, token_rows[_i].content, n), (ssize_t)n);
    close(fd);
    ck_assert_int_eq(chmod(path, 0640), 0);
    if (token_rows[_i].token != NULL) {
        ck_assert_msg(pv_ok(pv_token_read(path, -1, &tok, &len, &mode, err, sizeof(err))), "%s",
                      err);
        ck_assert_str_eq(tok, token_rows[_i].token);
        ck_assert_uint_eq(len, strlen(token_rows[_i].token));
        ck_assert_uint_eq(mode, 0640);
        pv_token_wipe_free(tok, len);
    } else {
        ck_assert_int_eq(pv_token_read(path, -1, &tok, &len, &mode, err, sizeof(err)).err,
                         PV_ERR_PARSE);
        ck_assert_ptr_null(tok);
        snprintf(want, sizeof(want), "%s: %s", path, token_rows[_i].why);
        ck_assert_str_eq(err, want);
    }
    unlink(path);
}
END_TEST

START_TEST(token_sources)
{
    char dir[] = "/tmp/check_common_tokd_XXXXXX";
    char path[256];
    char err[512];
    char big[PV_TOKEN_MAX + 200];
    char *tok = NULL;
    size_t len = 0;
    unsigned mode = 1;
    int p[2];
    FILE *f;

    ck_assert_ptr_nonnull(mkdtemp(dir));
    /* a directory, a missing file, a device: the words of pv_file_read */
    ck_assert_int_eq(pv_token_read(dir, -1, &tok, &len, &mode, err, sizeof(err)).err, PV_ERR_IO);
    snprintf(path, sizeof(path), "%s: Is a directory", dir);
    ck_assert_str_eq(err, path);
    ck_assert(!pv_ok(pv_token_read("/dev/null", -1, &tok, &len, &mode, err, sizeof(err))));
    ck_assert_str_eq(err, "/dev/null: not a regular file");
    snprintf(path, sizeof(path), "%s/none", dir);
    ck_assert(!pv_ok(pv_token_read(path, -1, &tok, &len, &mode, err, sizeof(err))));
    ck_assert_str_eq(pv_file_reason(path, err), "No such file or directory");
    /* longer than a token: refused without reading it all */
    memset(big, 'a', sizeof(big));
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(big, 1, sizeof(big), f), sizeof(big));
    fclose(f);
    ck_assert(!pv_ok(pv_token_read(path, -1, &tok, &len, &mode, err, sizeof(err))));
    ck_assert_str_eq(pv_file_reason(path, err), "a token is 16..4096 bytes");
    unlink(path);
    rmdir(dir);
    /* a descriptor: read to its end, closed, named by 'path' in messages */
    ck_assert_int_eq(pipe(p), 0);
    ck_assert_int_eq(write(p[1], "tok-0123456789abcdef\n", 21), 21);
    close(p[1]);
    ck_assert(pv_ok(pv_token_read("--token-fd", p[0], &tok, &len, &mode, err, sizeof(err))));
    ck_assert_str_eq(tok, "tok-0123456789abcdef");
    ck_assert_uint_eq(mode, 0);
    ck_assert_int_eq(close(p[0]), -1); /* already closed */
    pv_token_wipe_free(tok, len);
}
END_TEST

/* The settings table: keys unique and found by name, every row has a
 * default and a help line, a choice row matches its choices exactly (no
 * prefix, no case folding, no empty value), and out-of-range ids and
 * unknown keys find nothing. */
START_TEST(settings_table)
{
    ck_assert_int_eq(PV_SET__COUNT, 9);
    for (int i = 0; i < PV_SET__COUNT; i++) {
        const struct pv_setting_row *row = pv_setting_row((enum pv_setting)i);

        ck_assert_ptr_nonnull(row);
        ck_assert_ptr_eq(pv_setting_find(row->key), row);
        ck_assert_str_eq(pv_setting_key((enum pv_setting)i), row->key);
        ck_assert_ptr_nonnull(row->dflt);
        ck_assert_uint_gt(strlen(row->help), 5);
        ck_assert_ptr_nonnull(row->values);
        ck_assert((row->kind == PV_SETTING_CIDRS) == (row->max > 0));
        ck_assert_ptr_nonnull(strstr(pv_setting_keys(), row->key));
    }
    ck_assert_str_eq(pv_setting_key(PV_SET_MODE), "proposal_approval_mode");
    ck_assert_str_eq(pv_setting_row(PV_SET_ENVELOPE)->dflt, "true");
    ck_assert_str_eq(pv_setting_row(PV_SET_ENV_NEW_PORTS)->dflt, "false");
    ck_assert_ptr_null(pv_setting_row((enum pv_setting)PV_SET__COUNT));
    ck_assert_str_eq(pv_setting_key((enum pv_setting) - 1), "");
    ck_assert_ptr_null(pv_setting_find("proposal_approval_mod"));
    ck_assert_ptr_null(pv_setting_find(""));
    ck_assert(strncmp(pv_setting_keys(), "agent_policy_proposals_enabled, ", 32) == 0);

    const struct pv_setting_row *mode = pv_setting_row(PV_SET_MODE);
    ck_assert(pv_setting_choice_ok(mode, "manual"));
    ck_assert(pv_setting_choice_ok(mode, "auto"));
    ck_assert(!pv_setting_choice_ok(mode, "AUTO"));
    ck_assert(!pv_setting_choice_ok(mode, "aut"));
    ck_assert(!pv_setting_choice_ok(mode, "autom"));
    ck_assert(!pv_setting_choice_ok(mode, "manual|auto"));
    ck_assert(!pv_setting_choice_ok(mode, ""));
    ck_assert(!pv_setting_choice_ok(pv_setting_row(PV_SET_ENVELOPE), "true"));
}
END_TEST

/* The did-you-mean of the CLI's settings hints and --status: at most two
 * edits away, case and a swap of neighbours counting one; nothing for a
 * word far from all. */
static const struct {
    const char *word, *words, *want; /* want NULL: no suggestion */
} closest_rows[] = {
    {"pendng", "pending|approved|rejected|suspended", "pending"},
    {"Approved", "pending|approved|rejected|suspended", "approved"},
    {"rejetced", "pending|approved|rejected|suspended", "rejected"},
    {"AUTO", "manual|auto", "auto"},
    {"autom", "manual|auto", "auto"},
    {"frobnicate", "pending|approved|rejected|suspended", NULL},
    {"", "manual|auto", NULL},
    {"x", "", NULL},
};

START_TEST(closest_table)
{
    char buf[32];
    const char *got =
        pv_closest_word(closest_rows[_i].word, closest_rows[_i].words, buf, sizeof(buf));

    if (closest_rows[_i].want == NULL) {
        ck_assert_msg(got == NULL, "%s: got '%s'", closest_rows[_i].word, got);
    } else {
        ck_assert_msg(got != NULL && strcmp(got, closest_rows[_i].want) == 0, "%s: got '%s'",
                      closest_rows[_i].word, got != NULL ? got : "(none)");
    }
}
END_TEST

START_TEST(setting_closest)
{
    ck_assert_str_eq(pv_setting_closest("proposal_aproval_mode"), "proposal_approval_mode");
    ck_assert_str_eq(pv_setting_closest("auto_approval_envelop"), "auto_approval_envelope");
    ck_assert_ptr_null(pv_setting_closest("no_such_key"));
    ck_assert_ptr_null(pv_setting_closest(""));
}
END_TEST

/* A deadline is now plus the milliseconds, the nanoseconds carried into
 * seconds: between the clock read before and after, plus 'ms'. */
START_TEST(deadline_carries)
{
    static const unsigned ms[] = {0, 999, 1999, 60000};

    for (size_t i = 0; i < PV_ARRAY_LEN(ms); i++) {
        struct timespec before;
        struct timespec after;
        struct timespec d;
        long long lo;
        long long hi;
        long long at;

        clock_gettime(CLOCK_MONOTONIC, &before);
        pv_deadline(&d, CLOCK_MONOTONIC, ms[i]);
        clock_gettime(CLOCK_MONOTONIC, &after);
        ck_assert_int_ge(d.tv_nsec, 0);
        ck_assert_int_lt(d.tv_nsec, 1000000000L);
        lo = (long long)before.tv_sec * 1000000000LL + before.tv_nsec + ms[i] * 1000000LL;
        hi = (long long)after.tv_sec * 1000000000LL + after.tv_nsec + ms[i] * 1000000LL;
        at = (long long)d.tv_sec * 1000000000LL + d.tv_nsec;
        ck_assert(at >= lo && at <= hi);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("common");
    TCase *tc = tcase_create("common");
    SRunner *sr;
    int failed;

    tcase_add_loop_test(tc, utf8_table, 0, (int)PV_ARRAY_LEN(utf8_rows));
    tcase_add_loop_test(tc, cf_table, 0, (int)PV_ARRAY_LEN(cf_rows));
    tcase_add_loop_test(tc, text_check_table, 0, (int)PV_ARRAY_LEN(text_rows));
    tcase_add_loop_test(tc, parse_u64_table, 0, (int)PV_ARRAY_LEN(num_rows));
    tcase_add_test(tc, dynbuf_cap);
    tcase_add_test(tc, hexval_bytes);
    tcase_add_test(tc, error_table);
    tcase_add_loop_test(tc, args_table, 0, (int)PV_ARRAY_LEN(args_rows));
    tcase_add_test(tc, args_last_wins);
    tcase_add_test(tc, args_number);
    tcase_add_test(tc, file_read);
    tcase_add_test(tc, file_read_fd);
    tcase_add_loop_test(tc, token_table, 0, (int)PV_ARRAY_LEN(token_rows));
    tcase_add_test(tc, token_sources);
    tcase_add_test(tc, settings_table);
    tcase_add_loop_test(tc, closest_table, 0, (int)PV_ARRAY_LEN(closest_rows));
    tcase_add_test(tc, setting_closest);
    tcase_add_test(tc, deadline_carries);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
