/* SPDX-License-Identifier: Apache-2.0 */
/* check_proxy_ident.c - unit tests of proxy_ident.c (socket owner identity)
 *
 * A child process connects to a listener of this process; the lookup must
 * find the child (its pid and the image /proc shows for it), for IPv4
 * and IPv6. A peer address no process owns gives an unknown identity, which
 * no binary pattern can match. The pin of an executable survives repeated
 * lookups (no false integrity failure).
 */
#include "config.h"

#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proxy/proxy_int.h"

struct fam_case {
    int family;
    const char *addr;
};

static const struct fam_case fam_cases[] = {
    {AF_INET, "127.0.0.1"},
    {AF_INET6, "::1"},
};

static socklen_t make_addr(int fam, const char *a, uint16_t port, struct sockaddr_storage *ss)
{
    memset(ss, 0, sizeof(*ss));
    if (fam == AF_INET) {
        struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
        s4->sin_family = AF_INET;
        s4->sin_port = htons(port);
        inet_pton(AF_INET, a, &s4->sin_addr);
        return sizeof(*s4);
    }
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
    s6->sin6_family = AF_INET6;
    s6->sin6_port = htons(port);
    inet_pton(AF_INET6, a, &s6->sin6_addr);
    return sizeof(*s6);
}

START_TEST(test_owner)
{
    const struct fam_case *tc = &fam_cases[_i];
    struct sockaddr_storage ls;
    struct sockaddr_storage peer;
    struct sockaddr_storage local;
    socklen_t sl = make_addr(tc->family, tc->addr, 0, &ls);
    socklen_t pl = sizeof(peer);
    socklen_t ll = sizeof(local);
    int lfd = socket(tc->family, SOCK_STREAM, 0);
    int pipefd[2];
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    struct proxy_ident_cache *c = proxy_ident_cache_new();
    struct proxy_identity *id;
    pid_t child;
    int afd;
    char ok;

    ck_assert_int_gt(n, 0);
    self[n] = '\0';
    ck_assert_ptr_nonnull(c);
    ck_assert_int_ge(lfd, 0);
    if (bind(lfd, (struct sockaddr *)&ls, sl) != 0) {
        close(lfd);
        proxy_ident_cache_free(c);
        return; /* no IPv6 loopback here */
    }
    ck_assert_int_eq(listen(lfd, 4), 0);
    ck_assert_int_eq(getsockname(lfd, (struct sockaddr *)&ls, &sl), 0);
    ck_assert_int_eq(pipe(pipefd), 0);
    child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        int fd = socket(tc->family, SOCK_STREAM, 0);
        char b = 'x';
        if (fd < 0 || connect(fd, (struct sockaddr *)&ls, sl) != 0) {
            _exit(1);
        }
        /* hold the socket until the parent is done */
        (void)read(pipefd[0], &b, 1);
        _exit(0);
    }
    afd = accept(lfd, (struct sockaddr *)&peer, &pl);
    ck_assert_int_ge(afd, 0);
    {
        /* the child's image as /proc shows it (under valgrind: the tool) */
        char p[64];
        snprintf(p, sizeof(p), "/proc/%d/exe", (int)child);
        n = readlink(p, self, sizeof(self) - 1);
        ck_assert_int_gt(n, 0);
        self[n] = '\0';
    }
    ck_assert_int_eq(getsockname(afd, (struct sockaddr *)&local, &ll), 0);
    for (int round = 0; round < 2; round++) {
        id = proxy_ident_lookup(c, (struct sockaddr *)&peer, (struct sockaddr *)&local);
        ck_assert_ptr_nonnull(id);
        ck_assert_msg(id->known, "owner found (round %d): %s", round, id->deny);
        ck_assert_str_eq(id->deny, "");
        ck_assert_int_eq(id->pid, child);
        ck_assert_uint_ge(id->n, 1);
        ck_assert_str_eq(id->path[0], self);
        proxy_identity_unref(id);
    }
    ok = 'q';
    ck_assert_int_eq(write(pipefd[1], &ok, 1), 1);
    waitpid(child, NULL, 0);
    close(afd);
    close(lfd);
    close(pipefd[0]);
    close(pipefd[1]);
    proxy_ident_cache_free(c);
}
END_TEST

START_TEST(test_unknown)
{
    struct proxy_ident_cache *c = proxy_ident_cache_new();
    struct sockaddr_storage a;
    struct sockaddr_storage b;
    struct proxy_identity *id;

    make_addr(AF_INET, "127.0.0.1", 1, &a);
    make_addr(AF_INET, "127.0.0.1", 2, &b);
    id = proxy_ident_lookup(c, (struct sockaddr *)&a, (struct sockaddr *)&b);
    ck_assert_ptr_nonnull(id);
    ck_assert(!id->known);
    ck_assert_uint_eq(id->n, 0);
    ck_assert_ptr_eq(proxy_identity_ref(id), id);
    proxy_identity_unref(id);
    proxy_identity_unref(id);
    proxy_identity_unref(NULL);
    proxy_ident_cache_free(c);
    proxy_ident_cache_free(NULL);
}
END_TEST

static Suite *ident_suite(void)
{
    Suite *s = suite_create("proxy_ident");
    TCase *tc = tcase_create("ident");

    tcase_add_loop_test(tc, test_owner, 0, (int)PV_ARRAY_LEN(fam_cases));
    tcase_add_test(tc, test_unknown);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(ident_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
