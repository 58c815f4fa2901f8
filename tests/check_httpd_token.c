/* SPDX-License-Identifier: Apache-2.0 */
/* check_httpd_token.c - the bearer token: loading, generation, comparison
 *
 * The comparison table holds the near misses a sloppy check would accept
 * (prefixes, extensions, other schemes, one flipped byte). Loading checks
 * trimming and the length and byte rules; generation checks the file mode,
 * the token's shape, that two runs differ and that free removes the file.
 */
#include "config.h"

#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "httpd/httpd.h"

#define TOK "0123456789abcdef0123456789abcdef"

static const struct {
    const char *header;
    bool ok;
} headers[] = {
    {"Bearer " TOK, true},
    {"bearer " TOK, true},
    {"BEARER " TOK, true},
    {"Bearer   " TOK, true},
    {"Bearer " TOK "  ", true},
    {NULL, false},
    {"", false},
    {"Bearer", false},
    {"Bearer ", false},
    {TOK, false},
    {"Basic " TOK, false},
    {"Bearer " TOK "0", false},
    {"Bearer " TOK "x", false},
    {"Bearer 0123456789abcdef0123456789abcde", false},
    {"Bearer 1123456789abcdef0123456789abcdef", false},
    {"Bearer 0123456789abcdef0123456789abcdeF", false},
    {"Bearer " TOK " extra", false},
    {"Bearer\t" TOK, false},
    {"Bearer" TOK, false},
};

static struct httpd_token fixed_token(void)
{
    struct httpd_token t;
    memset(&t, 0, sizeof(t));
    t.buf = (unsigned char *)strdup(TOK);
    t.len = strlen(TOK);
    ck_assert_ptr_nonnull(t.buf);
    return t;
}

START_TEST(test_auth_check)
{
    struct httpd_token t = fixed_token();

    ck_assert_msg(httpd_token_check(&t, headers[_i].header) == headers[_i].ok, "row %d: '%s'", _i,
                  headers[_i].header != NULL ? headers[_i].header : "(null)");
    httpd_token_free(&t);
    ck_assert_ptr_null(t.buf);
}
END_TEST

static const struct {
    const char *content;
    bool ok;
    const char *want;
} files[] = {
    {TOK "\n", true, TOK},
    {"  " TOK "\r\n\n", true, TOK},
    {TOK, true, TOK},
    {"", false, NULL},
    {"\n\n", false, NULL},
    {"short\n", false, NULL},
    {"0123456789abcde\n", false, NULL}, /* 15 bytes */
    {"0123456789abcdef\n", true, "0123456789abcdef"},
    {"0123456789 abcdef0123\n", false, NULL},
    {"0123456789abcdef\x01"
     "0123\n",
     false, NULL},
    {"0123456789abcdef\xc3\xa9"
     "0123\n",
     false, NULL},
};

START_TEST(test_auth_file)
{
    char path[] = "/tmp/check-server-auth.XXXXXX";
    int fd = mkstemp(path);
    struct httpd_token t;
    char err[256];
    pv_result r;

    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, files[_i].content, strlen(files[_i].content)),
                     (ssize_t)strlen(files[_i].content));
    close(fd);
    r = httpd_token_from_file(&t, path, err, sizeof(err));
    unlink(path);
    if (!files[_i].ok) {
        ck_assert_msg(!pv_ok(r), "row %d accepted", _i);
        ck_assert_ptr_null(t.buf);
        return;
    }
    ck_assert_msg(pv_ok(r), "row %d: %s", _i, err);
    ck_assert_uint_eq(t.len, strlen(files[_i].want));
    ck_assert(memcmp(t.buf, files[_i].want, t.len) == 0);
    ck_assert_ptr_null(t.generated_path);
    httpd_token_free(&t);
}
END_TEST

START_TEST(test_auth_fd)
{
    int p[2];
    struct httpd_token t;
    char err[256];
    char hdr[128];

    ck_assert_int_eq(pipe(p), 0);
    ck_assert_int_eq(write(p[1], TOK "\n", strlen(TOK) + 1), (ssize_t)strlen(TOK) + 1);
    close(p[1]);
    ck_assert(pv_ok(httpd_token_from_fd(&t, p[0], err, sizeof(err))));
    /* The descriptor is closed after reading. */
    ck_assert_int_eq(fcntl(p[0], F_GETFD), -1);
    snprintf(hdr, sizeof(hdr), "Bearer %s", TOK);
    ck_assert(httpd_token_check(&t, hdr));
    httpd_token_free(&t);
    ck_assert(!pv_ok(httpd_token_from_fd(&t, 12345, err, sizeof(err))));
}
END_TEST

START_TEST(test_auth_missing_file)
{
    struct httpd_token t;
    char err[256];

    ck_assert(!pv_ok(httpd_token_from_file(&t, "/nonexistent/token", err, sizeof(err))));
    ck_assert(strstr(err, "/nonexistent/token") != NULL);
    ck_assert(!pv_ok(httpd_token_from_file(&t, "/tmp", err, sizeof(err))));
}
END_TEST

START_TEST(test_auth_generate)
{
    struct httpd_token a;
    struct httpd_token b;
    char err[256];
    char hdr[128];
    char text[80] = "";
    struct stat st;
    char *path;
    FILE *f;

    ck_assert(pv_ok(httpd_token_generate(&a, "/tmp", err, sizeof(err))));
    ck_assert(pv_ok(httpd_token_generate(&b, "/tmp", err, sizeof(err))));
    ck_assert_ptr_nonnull(a.generated_path);
    ck_assert_uint_eq(a.len, 64);
    for (size_t i = 0; i < a.len; i++) {
        ck_assert(strchr("0123456789abcdef", a.buf[i]) != NULL && a.buf[i] != '\0');
    }
    ck_assert(a.len != b.len || memcmp(a.buf, b.buf, a.len) != 0);
    ck_assert_str_ne(a.generated_path, b.generated_path);
    ck_assert_int_eq(stat(a.generated_path, &st), 0);
    ck_assert_uint_eq(st.st_mode & 0777, 0600);
    f = fopen(a.generated_path, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(fgets(text, sizeof(text), f));
    fclose(f);
    ck_assert(strncmp(text, (const char *)a.buf, 64) == 0);
    snprintf(hdr, sizeof(hdr), "Bearer %.64s", text);
    ck_assert(httpd_token_check(&a, hdr));
    ck_assert(!httpd_token_check(&b, hdr));
    path = strdup(a.generated_path);
    httpd_token_free(&a);
    ck_assert_int_ne(access(path, F_OK), 0);
    free(path);
    httpd_token_free(&b);
    ck_assert(!pv_ok(httpd_token_generate(&a, "/nonexistent-dir", err, sizeof(err))));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("server_auth");
    TCase *tc = tcase_create("token");
    SRunner *sr;
    int failed;

    tcase_add_loop_test(tc, test_auth_check, 0, (int)PV_ARRAY_LEN(headers));
    tcase_add_loop_test(tc, test_auth_file, 0, (int)PV_ARRAY_LEN(files));
    tcase_add_test(tc, test_auth_fd);
    tcase_add_test(tc, test_auth_missing_file);
    tcase_add_test(tc, test_auth_generate);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
