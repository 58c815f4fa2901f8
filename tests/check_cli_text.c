/* SPDX-License-Identifier: Apache-2.0 */
/* check_cli_text.c - unit tests for the reviewer CLI's pure parts: request
 * paths (cli_http.c) and a chunk as text (cli_chunk.c), including answers
 * with missing or mistyped members (an older or newer advisor); and that
 * cli_http sends writes on connections of their own (a loopback server). */
#include "config.h"

#include <check.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/pv_dynbuf.h"
#include "tests/check_net_util.h"

static const struct {
    const char *segs[4];
    const char *qkey, *qval;
    const char *want;
} path_rows[] = {
    {{"v1", "sandboxes", NULL}, NULL, NULL, "/v1/sandboxes"},
    {{"v1", "sandboxes", "sb-1.a_b~", NULL}, NULL, NULL, "/v1/sandboxes/sb-1.a_b~"},
    {{"v1", "sandboxes", "a/b", NULL}, NULL, NULL, "/v1/sandboxes/a%2Fb"},
    {{"v1", "sandboxes", "..", NULL}, NULL, NULL, "/v1/sandboxes/.."},
    {{"v1", "x y?#%", NULL}, NULL, NULL, "/v1/x%20y%3F%23%25"},
    {{"v1", "\xc3\xa9", NULL}, NULL, NULL, "/v1/%C3%A9"},
    {{"v1", "p", NULL}, "status", "pending", "/v1/p?status=pending"},
    {{"v1", "p", NULL}, "status", "a&b=c", "/v1/p?status=a%26b%3Dc"},
    {{"v1", "p", NULL}, "status", NULL, "/v1/p"},
    {{NULL}, NULL, NULL, ""},
};

START_TEST(path_table)
{
    char *p = cli_http_path(path_rows[_i].segs, path_rows[_i].qkey, path_rows[_i].qval);

    ck_assert_ptr_nonnull(p);
    ck_assert_str_eq(p, path_rows[_i].want);
    free(p);
}
END_TEST

static const struct {
    const char *endpoint; /* JSON */
    const char *want;
} ep_rows[] = {
    {"{\"host\":\"api.github.com\",\"port\":443,\"protocol\":\"rest\",\"enforcement\":\"enforce\","
     "\"rules\":[{\"allow\":{\"method\":\"PUT\",\"path\":\"/repos/o/r/contents/**\"}}]}",
     "api.github.com:443 [L7 rest enforce, allow PUT /repos/o/r/contents/**]"},
    {"{\"host\":\"h\",\"ports\":[80,443]}", "h:80,443 [L4]"},
    {"{\"host\":\"h\",\"port\":443,\"protocol\":\"rest\",\"access\":\"read-only\"}",
     "h:443 [L7 rest, access read-only]"},
    {"{\"host\":\"h\",\"port\":443,\"protocol\":\"rest\",\"rules\":[{\"allow\":{}}],"
     "\"deny_rules\":[{\"method\":\"DELETE\",\"path\":\"/x\"}]}",
     "h:443 [L7 rest, allow *, deny DELETE /x]"},
    {"{\"host\":\"h\",\"port\":22,\"tls\":\"skip\",\"allowed_ips\":[\"10.0.0.0/8\"],"
     "\"allow_uninspected_credentials\":true}",
     "h:22 [L4, tls skip, allowed_ips 10.0.0.0/8, allow_uninspected_credentials]"},
    {"{\"port\":443,\"allowed_ips\":[\"10.1.2.3\"]}", "*:443 [L4, allowed_ips 10.1.2.3]"},
    /* Mistyped members print as absent. */
    {"{\"host\":7,\"port\":\"x\",\"rules\":{\"allow\":1},\"allowed_ips\":[1]}",
     ":0 [L4, allowed_ips ?]"},
    {"{}", "*:0 [L4]"},
};

START_TEST(endpoint_table)
{
    json_t *ep = json_loads(ep_rows[_i].endpoint, 0, NULL);
    struct pv_dynbuf b;
    char *s;

    ck_assert_ptr_nonnull(ep);
    pv_dynbuf_init(&b, 4096);
    cli_endpoint_summary(&b, ep);
    s = pv_dynbuf_finish(&b);
    ck_assert_ptr_nonnull(s);
    ck_assert_str_eq(s, ep_rows[_i].want);
    free(s);
    json_decref(ep);
}
END_TEST

/* Render with 'fn' into a string (caller frees). */
static char *render(void (*fn)(FILE *, const json_t *), const char *json)
{
    json_t *c = json_loads(json, 0, NULL);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    ck_assert_ptr_nonnull(c);
    ck_assert_ptr_nonnull(f);
    fn(f, c);
    fclose(f);
    json_decref(c);
    return buf;
}

static const char chunk[] =
    "{\"chunk_id\":\"25b6e9bf-c314-4953-a45c-d8b801a6b1f8\",\"status\":\"pending\","
    "\"rule_name\":\"gh_write\",\"host\":\"api.github.com\",\"port\":443,"
    "\"validation_result\":\"prover: 1 new finding\\n  credential_reach_expansion: "
    "api.github.com:443 via /usr/bin/curl\",\"application_error\":\"\",\"security_notes\":\"\","
    "\"review_token\":\"83fa\",\"proposed_rule\":{\"endpoints\":[{\"host\":\"api.github.com\","
    "\"port\":443}],\"binaries\":[{\"path\":\"/usr/bin/curl\"},{\"path\":\"/usr/bin/git\"}]},"
    "\"evidence\":{\"diff\":\"+  gh_write:\\n-  old:\",\"prover\":{\"verdict\":\"findings\","
    "\"findings\":[{\"category\":\"capability_expansion\",\"paths\":[{\"binary\":\"/usr/bin/curl\","
    "\"host\":\"api.github.com\",\"port\":443,\"method\":\"PUT\",\"rule\":\"gh_write\","
    "\"credentials\":[\"gh\"],\"witness\":{\"method\":\"PUT\",\"host\":\"api.github.com\","
    "\"port\":443,\"path\":\"/repos/o/r/contents/\",\"query\":\"a=1\",\"binary\":\"/usr/bin/curl\","
    "\"ip\":\"93.184.216.34\"}}]}]}}}";

static const struct {
    const char *needle;
    bool present;
} print_rows[] = {
    {"chunk 25b6e9bf-c314-4953-a45c-d8b801a6b1f8\n", true},
    {"status:           pending\n", true},
    {"endpoint:         api.github.com:443 [L4]\n", true},
    {"binaries:         /usr/bin/curl, /usr/bin/git\n", true},
    {"validation:       prover: 1 new finding\n"
     "                    credential_reach_expansion: api.github.com:443 via /usr/bin/curl\n",
     true},
    {"  - capability_expansion: /usr/bin/curl -> api.github.com:443 PUT (rule gh_write, "
     "credentials gh)\n",
     true},
    {"      witness: PUT api.github.com:443/repos/o/r/contents/?a=1 by /usr/bin/curl to "
     "93.184.216.34\n",
     true},
    {"security notes:   none\n", true},
    {"policy diff:\n  +  gh_write:\n  -  old:\n", true},
    {"application error:", false}, /* empty fields are not printed */
    {"rejection reason:", false},
    {"boundary:", false},
};

START_TEST(print_table)
{
    char *s = render(cli_chunk_print, chunk);

    ck_assert_msg((strstr(s, print_rows[_i].needle) != NULL) == print_rows[_i].present,
                  "row %d: '%s' in:\n%s", _i, print_rows[_i].needle, s);
    free(s);
}
END_TEST

static const struct {
    const char *json;
    const char *want;
} line_rows[] = {
    {chunk, "25b6e9bf  pending    gh_write                  api.github.com:443            "
            "prover: 1 new finding\n"},
    {"{\"chunk_id\":\"abc\",\"status\":\"pending\",\"rule_name\":\"r\",\"host\":\"h\",\"port\":1,"
     "\"validation_result\":\"\",\"application_error\":\"merge failed: x\\ny\","
     "\"security_notes\":\"Port 5432 is a well-known database/service port.\"}",
     "abc       pending    r                         h:1                           "
     "error: merge failed: x  (security notes)\n"},
    /* Missing or mistyped members: empty columns (want NULL: only ":0"). */
    {"{}", NULL},
    {"{\"chunk_id\":1,\"port\":\"x\",\"status\":[]}", NULL},
};

START_TEST(line_table)
{
    char *s = render(cli_chunk_line, line_rows[_i].json);
    char empty[128];

    snprintf(empty, sizeof(empty), "%47s:0%28s\n", "", "");
    ck_assert_str_eq(s, line_rows[_i].want != NULL ? line_rows[_i].want : empty);
    free(s);
}
END_TEST

/* The chunk: auto-approved, verdict empty, one wide grant. The
 * grant comes first, with its breadth, and the text never says the change
 * grants nothing. */
static const char paste_chunk[] =
    "{\"chunk_id\":\"9f00\",\"status\":\"approved\",\"auto_approved\":true,"
    "\"rule_name\":\"paste\",\"validation_result\":\"prover: no new findings\","
    "\"evidence\":{\"prover\":{\"verdict\":\"empty\",\"categories\":[],\"findings\":[],"
    "\"grants\":[{\"change\":\"new\",\"rule\":\"paste\",\"binary\":\"/usr/bin/**\","
    "\"host\":\"**.pastebin.com\",\"ports\":[443],\"route\":\"opaque\",\"access\":"
    "[\"all traffic\"],\"credentials\":[],\"private_destinations\":[],\"breadth\":{"
    "\"binary\":\"glob\",\"host\":\"any-depth\",\"route\":\"opaque\",\"methods\":"
    "\"all\"}}]}}}";

START_TEST(print_grants)
{
    char *s = render(cli_chunk_print, paste_chunk);
    const char *want =
        "chunk 9f00\n"
        "This change grants 1 new unit: /usr/bin/** -> **.pastebin.com:443 opaque, wide: any "
        "binary under /usr/bin, any subdomain of pastebin.com at any depth, all traffic, not "
        "inspected; prover: no new findings.\n\n"
        "+ /usr/bin/** -> **.pastebin.com:443 opaque, all traffic  [binary: glob, host: "
        "any-depth, route: opaque, methods: all]\n"
        "      rule paste; wide: any binary under /usr/bin, any subdomain of pastebin.com at any "
        "depth, all traffic, not inspected\n\n"
        "status:           approved";

    ck_assert_msg(strncmp(s, want, strlen(want)) == 0, "got:\n%s", s);
    ck_assert_ptr_null(strstr(s, "nothing new"));
    free(s);
    /* negative: evidence without a grant list (an older advisor) claims nothing */
    s = render(cli_chunk_print, chunk);
    ck_assert_ptr_null(strstr(s, "This change grants"));
    free(s);
}
END_TEST

START_TEST(print_empty)
{
    /* Nothing but an id: no crash, no invented content. */
    char *s =
        render(cli_chunk_print, "{\"chunk_id\":\"x\",\"evidence\":null,\"proposed_rule\":[]}");

    ck_assert_ptr_nonnull(strstr(s, "chunk x\n"));
    ck_assert_ptr_nonnull(strstr(s, "(the prover did not run)"));
    ck_assert_ptr_null(strstr(s, "endpoint:"));
    ck_assert_ptr_null(strstr(s, "policy diff:"));
    free(s);
}
END_TEST

/* ---------------------------------------------------------------------------
 * cli_http: writes go out on connections of their own
 * ------------------------------------------------------------------------- */

/* A keep-alive server on loopback (a thread per connection) that answers
 * every request "{}" and records, in order, each request's method letter
 * and whether it came on a connection that had carried one before ('r')
 * or on a new one ('n'). */
struct keepalive {
    int lfd;
    pthread_mutex_t mu;
    char seen[32];
    size_t nseen;
    pthread_t conn[8];
    int nconn;
};

struct ka_conn {
    struct keepalive *k;
    int fd;
};

static const char ka_reply[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                               "Content-Length: 2\r\n\r\n{}";

static void *ka_conn_serve(void *arg)
{
    struct ka_conn *c = arg;
    char buf[8192];
    size_t have = 0;
    bool reused = false;

    for (;;) {
        char *end;
        size_t need;
        const char *cl;
        ssize_t n;

        buf[have] = '\0';
        end = strstr(buf, "\r\n\r\n");
        if (end != NULL) {
            cl = strcasestr(buf, "content-length:");
            need = (size_t)(end - buf) + 4 +
                   (cl != NULL && cl < end ? (size_t)strtoul(cl + 15, NULL, 10) : 0);
            if (have >= need) {
                pthread_mutex_lock(&c->k->mu);
                if (c->k->nseen + 2 < sizeof(c->k->seen)) {
                    c->k->seen[c->k->nseen++] = buf[0];
                    c->k->seen[c->k->nseen++] = reused ? 'r' : 'n';
                }
                pthread_mutex_unlock(&c->k->mu);
                reused = true;
                memmove(buf, buf + need, have - need);
                have -= need;
                if (write(c->fd, ka_reply, sizeof(ka_reply) - 1) != (ssize_t)sizeof(ka_reply) - 1) {
                    break;
                }
                continue;
            }
        }
        n = read(c->fd, buf + have, sizeof(buf) - 1 - have);
        if (n <= 0) {
            break;
        }
        have += (size_t)n;
    }
    close(c->fd);
    free(c);
    return NULL;
}

static void *keepalive_serve(void *arg)
{
    struct keepalive *k = arg;

    for (;;) {
        struct ka_conn *c;
        int fd = accept(k->lfd, NULL, NULL);

        if (fd < 0) {
            return NULL; /* the test shut the listener down */
        }
        c = calloc(1, sizeof(*c));
        if (c == NULL || k->nconn == (int)PV_ARRAY_LEN(k->conn)) {
            free(c);
            close(fd);
            continue;
        }
        c->k = k;
        c->fd = fd;
        if (pthread_create(&k->conn[k->nconn], NULL, ka_conn_serve, c) != 0) {
            close(fd);
            free(c);
            continue;
        }
        k->nconn++;
    }
}

START_TEST(writes_fresh)
{
    struct keepalive k = {.mu = PTHREAD_MUTEX_INITIALIZER};
    unsigned port;
    pthread_t tid;
    char base[64];
    struct cli_http *h;
    struct cli_answer a;
    json_t *body = json_object();
    const char *calls[] = {"GET", "GET", "POST", "PUT", "DELETE"};

    k.lfd = check_net_listen(8, &port);
    snprintf(base, sizeof(base), "http://127.0.0.1:%u", port);
    ck_assert_int_eq(pthread_create(&tid, NULL, keepalive_serve, &k), 0);
    h = cli_http_new(base, "t0k3n");
    ck_assert_ptr_nonnull(h);
    for (size_t i = 0; i < PV_ARRAY_LEN(calls); i++) {
        ck_assert_int_eq(
            cli_http_call(h, calls[i], "/v1/x", strcmp(calls[i], "POST") == 0 ? body : NULL, &a),
            0);
        cli_answer_clear(&a);
    }
    cli_http_free(h); /* closes the connections: their threads end */
    shutdown(k.lfd, SHUT_RDWR);
    pthread_join(tid, NULL);
    for (int i = 0; i < k.nconn; i++) {
        pthread_join(k.conn[i], NULL);
    }
    close(k.lfd);
    json_decref(body);
    /* the second GET reuses the first's connection; each write opens one
     * of its own */
    k.seen[k.nseen] = '\0';
    ck_assert_msg(strcmp(k.seen, "GnGrPnPnDn") == 0, "requests (method, connection): %s", k.seen);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cli_text");
    TCase *tc = tcase_create("cli_text");
    SRunner *sr;
    int failed;

    tcase_add_loop_test(tc, path_table, 0, (int)PV_ARRAY_LEN(path_rows));
    tcase_add_loop_test(tc, endpoint_table, 0, (int)PV_ARRAY_LEN(ep_rows));
    tcase_add_loop_test(tc, print_table, 0, (int)PV_ARRAY_LEN(print_rows));
    tcase_add_loop_test(tc, line_table, 0, (int)PV_ARRAY_LEN(line_rows));
    tcase_add_test(tc, print_grants);
    tcase_add_test(tc, print_empty);
    tcase_add_test(tc, writes_fresh);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
