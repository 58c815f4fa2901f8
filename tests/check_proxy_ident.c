/* SPDX-License-Identifier: Apache-2.0 */
/* check_proxy_ident.c - unit tests of proxy_ident.c (socket owner identity)
 *
 * A child process connects to a listener of this process; the lookup must
 * find the child (its pid and the image /proc shows for it), for IPv4
 * and IPv6. A peer address no process owns gives an unknown identity, which
 * no binary pattern can match. The pin of an executable survives repeated
 * lookups (no false integrity failure). The scan's shortcuts are exact:
 * a process skipped as a kernel thread stops being skipped once it exits
 * (its pid may be reused), kernel threads are learned, and a socket that
 * joins a lap in progress is resolved to its holder whether that holder's
 * pid lies after the lap's position or before it (read in the next lap).
 * Both ways of finding holders (the /proc scan and the BPF task-file
 * iterator, where this machine allows it) find the owner, and find a socket
 * hidden from /proc/PID/fd: in a thread's own file table, or in a thread
 * left after the main thread exited, or reachable only through an
 * io_uring instance it was registered with - alone (the owner) or shared
 * with another binary (ambiguous, denied).
 */
#include "config.h"

#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/syscall.h>
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

/* A cache that finds holders the given way; NULL (the test is skipped)
 * when the BPF iterator cannot be used here. */
static struct proxy_ident_cache *cache_for(enum proxy_ident_scan how)
{
    struct proxy_ident_cache *c = proxy_ident_cache_new();
    char why[256];

    ck_assert_ptr_nonnull(c);
    if (!proxy_ident_use(c, how, why, sizeof(why))) {
        ck_assert(how == PROXY_IDENT_BPF);
        ck_assert_str_ne(why, "");
        fprintf(stderr, "check_proxy_ident: BPF iterator unavailable here (%s): skipped\n", why);
        proxy_ident_cache_free(c);
        return NULL;
    }
    ck_assert_str_eq(proxy_ident_scan_name(c), how == PROXY_IDENT_PROC ? "proc" : "bpf");
    return c;
}

static const enum proxy_ident_scan scans[] = {PROXY_IDENT_PROC, PROXY_IDENT_BPF};

START_TEST(test_owner)
{
    const struct fam_case *tc = &fam_cases[(size_t)_i % PV_ARRAY_LEN(fam_cases)];
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
    struct proxy_ident_cache *c = cache_for(scans[(size_t)_i / PV_ARRAY_LEN(fam_cases)]);
    struct proxy_identity *id;
    pid_t child;
    int afd;
    char ok;

    ck_assert_int_gt(n, 0);
    self[n] = '\0';
    if (c == NULL) {
        close(lfd);
        return;
    }
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

/* A child that connects to 'ls' when told (a byte on 'go'), then holds the
 * socket until 'quit' closes. */
struct holder {
    pid_t pid;
    int go[2];
    int quit[2];
    struct sockaddr_storage peer; /* the child's end, seen by the listener */
    struct sockaddr_storage local;
    int afd;
};

static void holder_start(struct holder *h, const struct sockaddr_storage *ls, socklen_t sl)
{
    ck_assert_int_eq(pipe(h->go), 0);
    ck_assert_int_eq(pipe(h->quit), 0);
    h->afd = -1;
    h->pid = fork();
    ck_assert_int_ge(h->pid, 0);
    if (h->pid == 0) {
        char b;
        int fd;
        close(h->go[1]);
        close(h->quit[1]);
        if (read(h->go[0], &b, 1) != 1) {
            _exit(1);
        }
        fd = socket(ls->ss_family, SOCK_STREAM, 0);
        if (fd < 0 || connect(fd, (const struct sockaddr *)ls, sl) != 0) {
            _exit(1);
        }
        (void)read(h->quit[0], &b, 1);
        _exit(0);
    }
}

static void holder_connect(struct holder *h, int lfd)
{
    socklen_t pl = sizeof(h->peer);
    socklen_t ll = sizeof(h->local);
    char b = 'g';

    ck_assert_int_eq(write(h->go[1], &b, 1), 1);
    h->afd = accept(lfd, (struct sockaddr *)&h->peer, &pl);
    ck_assert_int_ge(h->afd, 0);
    ck_assert_int_eq(getsockname(h->afd, (struct sockaddr *)&h->local, &ll), 0);
}

static void holder_stop(struct holder *h)
{
    char b = 'q';

    /* a byte, not EOF: later children inherited the write end too */
    ck_assert_int_eq(write(h->quit[1], &b, 1), 1);
    close(h->quit[1]);
    close(h->go[1]);
    waitpid(h->pid, NULL, 0);
    close(h->quit[0]);
    close(h->go[0]);
    if (h->afd >= 0) {
        close(h->afd);
    }
}

static int listener(struct sockaddr_storage *ls, socklen_t *sl)
{
    int lfd = socket(AF_INET, SOCK_STREAM, 0);

    *sl = make_addr(AF_INET, "127.0.0.1", 0, ls);
    ck_assert_int_ge(lfd, 0);
    ck_assert_int_eq(bind(lfd, (struct sockaddr *)ls, *sl), 0);
    ck_assert_int_eq(listen(lfd, 8), 0);
    ck_assert_int_eq(getsockname(lfd, (struct sockaddr *)ls, sl), 0);
    return lfd;
}

static struct proxy_identity *lookup(struct proxy_ident_cache *c, const struct holder *h)
{
    return proxy_ident_lookup(c, (const struct sockaddr *)&h->peer,
                              (const struct sockaddr *)&h->local);
}

/* Whether this kernel (or Valgrind, which does not know the call) has
 * pidfd_open: without it no kernel thread is ever skipped - the scan reads
 * every pid, which is slower but exact. */
static bool have_pidfd(void)
{
    int fd = (int)syscall(SYS_pidfd_open, getpid(), 0);

    if (fd < 0) {
        return false;
    }
    close(fd);
    return true;
}

/* A pid skipped as a kernel thread (forced here with the test hook) is
 * really skipped - its socket has no visible holder - and stops being
 * skipped as soon as that process exits: the next lap drops it, so a new
 * process reusing the pid would be read. */
START_TEST(test_kthread_exit)
{
    struct proxy_ident_cache *c = proxy_ident_cache_new();
    struct sockaddr_storage ls;
    socklen_t sl;
    int lfd = listener(&ls, &sl);
    struct holder a;
    struct holder b;
    struct proxy_identity *id;

    holder_start(&a, &ls, sl);
    holder_start(&b, &ls, sl);
    holder_connect(&a, lfd);
    holder_connect(&b, lfd);
    proxy_ident_test_kthread(c, a.pid);
    if (!have_pidfd()) {
        /* nothing can be pinned, so nothing is skipped: a is found */
        ck_assert(!proxy_ident_skips(c, a.pid));
        id = lookup(c, &a);
        ck_assert_ptr_nonnull(id);
        ck_assert(id->known);
        ck_assert_int_eq(id->pid, a.pid);
        proxy_identity_unref(id);
        holder_stop(&a);
        holder_stop(&b);
        close(lfd);
        proxy_ident_cache_free(c);
        return;
    }
    ck_assert(proxy_ident_skips(c, a.pid));
    /* skipped: a's socket has no holder the scan reads (unknown, denies) */
    id = lookup(c, &a);
    ck_assert_ptr_nonnull(id);
    ck_assert(!id->known);
    proxy_identity_unref(id);
    ck_assert(proxy_ident_skips(c, a.pid)); /* still alive: still skipped */
    holder_stop(&a);
    /* a exited: any later lap reads whatever holds that pid now */
    id = lookup(c, &b);
    ck_assert_ptr_nonnull(id);
    ck_assert(id->known);
    ck_assert_int_eq(id->pid, b.pid);
    proxy_identity_unref(id);
    ck_assert(!proxy_ident_skips(c, a.pid));
    holder_stop(&b);
    close(lfd);
    proxy_ident_cache_free(c);
}
END_TEST

/* Real kernel threads are learned by a lap; processes never are. */
START_TEST(test_kthread_learned)
{
    struct proxy_ident_cache *c = proxy_ident_cache_new();
    struct sockaddr_storage ls;
    socklen_t sl;
    int lfd = listener(&ls, &sl);
    struct holder a;
    struct proxy_identity *id;
    char buf[512];
    int fd = open("/proc/2/stat", O_RDONLY);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

    if (fd >= 0) {
        close(fd);
    }
    holder_start(&a, &ls, sl);
    holder_connect(&a, lfd);
    id = lookup(c, &a);
    ck_assert_ptr_nonnull(id);
    ck_assert_int_eq(id->pid, a.pid);
    proxy_identity_unref(id);
    ck_assert(!proxy_ident_skips(c, a.pid));
    ck_assert(!proxy_ident_skips(c, getpid()));
    if (n > 0) {
        buf[n] = '\0';
        if (strstr(buf, "(kthreadd)") != NULL) {
            /* this pid namespace shows kthreadd: skipped when it can be pinned */
            ck_assert(proxy_ident_skips(c, 2) == have_pidfd());
        }
    }
    holder_stop(&a);
    close(lfd);
    proxy_ident_cache_free(c);
}
END_TEST

struct done_slot {
    struct proxy_identity *id;
    bool done;
};

static void slot_done(void *tag, struct proxy_identity *id, void *arg)
{
    struct done_slot *s = tag;

    (void)arg;
    s->id = id;
    s->done = true;
}

static struct proxy_ident_query query_of(const struct holder *h)
{
    struct proxy_ident_query q;

    memset(&q, 0, sizeof(q));
    q.peer = h->peer;
    q.local = h->local;
    return q;
}

/* Sockets joining a lap in progress: one whose holder's pid comes after the
 * lap's position (a process started during the lap) and one whose holder's
 * pid the lap had already passed when the socket appeared (read at the start
 * of the next lap). Both resolve to their holder. */
START_TEST(test_roll_join)
{
    struct proxy_ident_cache *c = proxy_ident_cache_new();
    struct sockaddr_storage ls;
    socklen_t sl;
    int lfd = listener(&ls, &sl);
    struct holder first;
    struct holder early; /* started before the lap, connects after it passed */
    struct holder late;  /* started during the lap */
    struct done_slot s1 = {NULL, false};
    struct done_slot s2 = {NULL, false};
    struct done_slot s3 = {NULL, false};
    struct proxy_ident_query q;
    int steps = 0;

    holder_start(&early, &ls, sl);
    holder_start(&first, &ls, sl);
    holder_connect(&first, lfd);
    q = query_of(&first);
    proxy_ident_roll_add(c, &q, &s1, slot_done, NULL);
    /* read until the lap has passed the early holder's pid */
    while (!s1.done && proxy_ident_roll_cursor(c) <= early.pid && steps++ < 100000) {
        (void)proxy_ident_roll_step(c, slot_done, NULL);
    }
    if (!s1.done) {
        ck_assert_int_gt(proxy_ident_roll_cursor(c), early.pid);
        holder_connect(&early, lfd);
        q = query_of(&early);
        proxy_ident_roll_add(c, &q, &s2, slot_done, NULL);
        holder_start(&late, &ls, sl);
        holder_connect(&late, lfd);
        q = query_of(&late);
        proxy_ident_roll_add(c, &q, &s3, slot_done, NULL);
        while (proxy_ident_roll_step(c, slot_done, NULL)) {
        }
        ck_assert(s2.done && s3.done);
        ck_assert_ptr_nonnull(s2.id);
        ck_assert_ptr_nonnull(s3.id);
        ck_assert_msg(s2.id->known, "early holder found: %s", s2.id->deny);
        ck_assert_int_eq(s2.id->pid, early.pid);
        ck_assert_msg(s3.id->known, "late holder found: %s", s3.id->deny);
        ck_assert_int_eq(s3.id->pid, late.pid);
        proxy_identity_unref(s2.id);
        proxy_identity_unref(s3.id);
        holder_stop(&late);
    } else {
        holder_connect(&early, lfd); /* the lap ended first (few processes) */
    }
    ck_assert(s1.done);
    ck_assert_ptr_nonnull(s1.id);
    ck_assert_int_eq(s1.id->pid, first.pid);
    proxy_identity_unref(s1.id);
    holder_stop(&early);
    holder_stop(&first);
    close(lfd);
    proxy_ident_cache_free(c);
}
END_TEST

/* A child whose socket /proc/PID/fd does not show: created in a thread
 * after unshare(CLONE_FILES) ("thread"), or held by a thread after the main
 * thread exited ("leader"). With 'other', a grandchild running /bin/sleep
 * inherits it too (a second holder with another binary). */
struct hider {
    pid_t pid;
    pid_t other; /* the sleep holder, or 0 */
    int ready[2];
    int quit[2];
    const struct sockaddr_storage *ls;
    socklen_t sl;
    bool unshare;
    bool with_other;
};

static void *hider_thread(void *arg)
{
    struct hider *h = arg;
    pid_t other = 0;
    int fd;
    char b;

    if (h->unshare && unshare(CLONE_FILES) != 0) {
        _exit(3);
    }
    fd = socket(h->ls->ss_family, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (const struct sockaddr *)h->ls, h->sl) != 0) {
        _exit(1);
    }
    if (h->with_other) {
        char link[64];
        char exe[256];
        other = fork();
        if (other == 0) {
            execl("/bin/sleep", "sleep", "20", (char *)NULL);
            _exit(127);
        }
        /* wait until the grandchild runs sleep (it holds fd either way) */
        snprintf(link, sizeof(link), "/proc/%d/exe", (int)other);
        for (int i = 0; i < 2000; i++) {
            ssize_t n = readlink(link, exe, sizeof(exe) - 1);
            if (n > 0) {
                exe[n] = '\0';
            }
            if (n > 0 && strstr(exe, "sleep") != NULL) {
                break;
            }
            usleep(1000);
        }
    }
    if (write(h->ready[1], &other, sizeof(other)) != (ssize_t)sizeof(other)) {
        _exit(1);
    }
    (void)read(h->quit[0], &b, 1);
    if (other > 0) {
        kill(other, SIGKILL);
        waitpid(other, NULL, 0);
    }
    _exit(0);
}

static void hider_start(struct hider *h, const char *mode, bool with_other, int lfd,
                        struct holder *peer)
{
    socklen_t pl = sizeof(peer->peer);
    socklen_t ll = sizeof(peer->local);

    h->unshare = strcmp(mode, "thread") == 0;
    h->with_other = with_other;
    ck_assert_int_eq(pipe(h->ready), 0);
    ck_assert_int_eq(pipe(h->quit), 0);
    h->pid = fork();
    ck_assert_int_ge(h->pid, 0);
    if (h->pid == 0) {
        pthread_t th;
        if (pthread_create(&th, NULL, hider_thread, h) != 0) {
            _exit(4);
        }
        if (h->unshare) {
            (void)pthread_join(th, NULL);
            _exit(5);
        }
        pthread_exit(NULL); /* "leader": the main thread goes first */
    }
    peer->afd = accept(lfd, (struct sockaddr *)&peer->peer, &pl);
    ck_assert_int_ge(peer->afd, 0);
    ck_assert_int_eq(getsockname(peer->afd, (struct sockaddr *)&peer->local, &ll), 0);
    ck_assert_int_eq(read(h->ready[0], &h->other, sizeof(h->other)), (ssize_t)sizeof(h->other));
    ck_assert(!with_other || h->other > 0);
}

static void hider_stop(struct hider *h, struct holder *peer)
{
    char b = 'q';

    ck_assert_int_eq(write(h->quit[1], &b, 1), 1);
    waitpid(h->pid, NULL, 0);
    close(h->ready[0]);
    close(h->ready[1]);
    close(h->quit[0]);
    close(h->quit[1]);
    close(peer->afd);
}

/* _i: scan (bit 0), "leader" (bit 1), a second holder (bit 2). */
START_TEST(test_hidden_table)
{
    enum proxy_ident_scan how = scans[_i & 1];
    const char *mode = (_i & 2) != 0 ? "leader" : "thread";
    bool with_other = (_i & 4) != 0;
    struct proxy_ident_cache *c = cache_for(how);
    struct sockaddr_storage ls;
    socklen_t sl;
    int lfd;
    struct hider h;
    struct holder peer;
    struct proxy_identity *id;

    if (c == NULL) {
        return;
    }
    lfd = listener(&ls, &sl);
    memset(&h, 0, sizeof(h));
    h.ls = &ls;
    h.sl = sl;
    hider_start(&h, mode, with_other, lfd, &peer);
    id = lookup(c, &peer);
    ck_assert_ptr_nonnull(id);
    if (with_other) {
        ck_assert_msg(strstr(id->deny, "ambiguous shared socket ownership") != NULL,
                      "%s scan, %s: the hidden holder counts (deny '%s', pid %d)",
                      proxy_ident_scan_name(c), mode, id->deny, (int)id->pid);
    } else {
        /* found; a process whose main thread exited has no readable
         * executable (/proc/PID/exe), so it may be unknown (denied) */
        ck_assert_msg(id->pid == h.pid, "%s scan, %s: the hidden holder is found (pid %d)",
                      proxy_ident_scan_name(c), mode, (int)id->pid);
        ck_assert(id->known || strcmp(mode, "leader") == 0);
        ck_assert_str_eq(id->deny, "");
    }
    proxy_identity_unref(id);
    hider_stop(&h, &peer);
    close(lfd);
    proxy_ident_cache_free(c);
}
END_TEST

/* A child that registers its socket with an io_uring instance and closes
 * the descriptor: it holds the socket through the ring only. With 'other',
 * a /bin/sleep child inherited the descriptor first (a second holder with
 * another binary). Returns false (test skipped) when io_uring is off. */
struct ringer {
    pid_t pid;
    pid_t other;
    int ready[2];
    int quit[2];
};

static bool ringer_start(struct ringer *g, bool with_other, int lfd,
                         const struct sockaddr_storage *ls, socklen_t sl, struct holder *peer)
{
    socklen_t pl = sizeof(peer->peer);
    socklen_t ll = sizeof(peer->local);
    char ok;

    ck_assert_int_eq(pipe(g->ready), 0);
    ck_assert_int_eq(pipe(g->quit), 0);
    g->pid = fork();
    ck_assert_int_ge(g->pid, 0);
    if (g->pid == 0) {
        struct io_uring_params params;
        pid_t other = 0;
        int fd = socket(ls->ss_family, SOCK_STREAM, 0);
        int ring;
        char b;
        if (fd < 0 || connect(fd, (const struct sockaddr *)ls, sl) != 0) {
            _exit(1);
        }
        memset(&params, 0, sizeof(params));
        ring = (int)syscall(SYS_io_uring_setup, 4, &params);
        if (ring < 0 || syscall(SYS_io_uring_register, ring, IORING_REGISTER_FILES, &fd, 1) != 0) {
            b = 'n'; /* io_uring is not available here */
            (void)!write(g->ready[1], &b, 1);
            (void)read(g->quit[0], &b, 1);
            _exit(0);
        }
        if (with_other) {
            other = fork();
            if (other == 0) {
                execl("/bin/sleep", "sleep", "20", (char *)NULL);
                _exit(127);
            }
            usleep(200000); /* sleep runs (it holds fd from the fork on) */
        }
        close(fd); /* from now on only the ring (and sleep) hold it */
        b = 'y';
        (void)!write(g->ready[1], &b, 1);
        (void)read(g->quit[0], &b, 1);
        if (other > 0) {
            kill(other, SIGKILL);
            waitpid(other, NULL, 0);
        }
        _exit(0);
    }
    peer->afd = accept(lfd, (struct sockaddr *)&peer->peer, &pl);
    ck_assert_int_ge(peer->afd, 0);
    ck_assert_int_eq(getsockname(peer->afd, (struct sockaddr *)&peer->local, &ll), 0);
    ck_assert_int_eq(read(g->ready[0], &ok, 1), 1);
    return ok == 'y';
}

/* _i: scan (bit 0), a second holder (bit 1). */
START_TEST(test_ring_holder)
{
    enum proxy_ident_scan how = scans[_i & 1];
    bool with_other = (_i & 2) != 0;
    struct proxy_ident_cache *c = cache_for(how);
    struct sockaddr_storage ls;
    socklen_t sl;
    int lfd;
    struct ringer g;
    struct holder peer;
    struct proxy_identity *id;
    char b = 'q';

    if (c == NULL) {
        return;
    }
    lfd = listener(&ls, &sl);
    memset(&g, 0, sizeof(g));
    if (ringer_start(&g, with_other, lfd, &ls, sl, &peer)) {
        id = lookup(c, &peer);
        ck_assert_ptr_nonnull(id);
        if (with_other) {
            ck_assert_msg(strstr(id->deny, "ambiguous shared socket ownership") != NULL,
                          "%s scan: the ring's holder counts (deny '%s', pid %d)",
                          proxy_ident_scan_name(c), id->deny, (int)id->pid);
        } else {
            ck_assert_msg(id->known && id->pid == g.pid,
                          "%s scan: the ring's holder is the owner (pid %d, known %d)",
                          proxy_ident_scan_name(c), (int)id->pid, (int)id->known);
        }
        proxy_identity_unref(id);
    } else {
        fprintf(stderr, "check_proxy_ident: io_uring unavailable here: ring case skipped\n");
    }
    ck_assert_int_eq(write(g.quit[1], &b, 1), 1);
    waitpid(g.pid, NULL, 0);
    close(g.ready[0]);
    close(g.ready[1]);
    close(g.quit[0]);
    close(g.quit[1]);
    close(peer.afd);
    close(lfd);
    proxy_ident_cache_free(c);
}
END_TEST

/* The iterator reports sockets, not files that merely have the socket
 * mode: a bound unix socket's path (an S_IFSOCK inode on a disk or tmpfs
 * filesystem, which anyone can also make with mknod) opened with O_PATH is
 * no socket holder, whatever its inode number; the socket itself is. */
struct seen {
    unsigned long path_ino;
    unsigned long sock_ino;
    pid_t self;
    bool path_seen;
    bool sock_seen;
};

static void seen_cb(unsigned long ino, pid_t tgid, pid_t tid, int fd,
                    enum proxy_taskfiles_kind kind, void *arg)
{
    struct seen *w = arg;

    (void)tid;
    (void)fd;
    if (tgid != w->self || kind != PROXY_TASKFILES_SOCKET) {
        return;
    }
    w->path_seen |= ino == w->path_ino;
    w->sock_seen |= ino == w->sock_ino;
}

START_TEST(test_taskfiles_sockfs_only)
{
    char why[256];
    struct proxy_taskfiles *t = proxy_taskfiles_open(why, sizeof(why));
    char dir[] = "/tmp/pv-tf.XXXXXX";
    char path[64];
    struct sockaddr_un sun;
    struct stat st;
    struct seen w = {0, 0, getpid(), false, false};
    int us;
    int pfd;

    if (t == NULL) {
        fprintf(stderr, "check_proxy_ident: BPF iterator unavailable here (%s): skipped\n", why);
        return;
    }
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/s", dir);
    us = socket(AF_UNIX, SOCK_STREAM, 0);
    ck_assert_int_ge(us, 0);
    memset(&sun, 0, sizeof(sun));
    sun.sun_family = AF_UNIX;
    snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
    ck_assert_int_eq(bind(us, (struct sockaddr *)&sun, sizeof(sun)), 0);
    pfd = open(path, O_PATH | O_CLOEXEC);
    ck_assert_int_ge(pfd, 0);
    ck_assert_int_eq(fstat(pfd, &st), 0);
    ck_assert(S_ISSOCK(st.st_mode));
    w.path_ino = (unsigned long)st.st_ino;
    ck_assert_int_eq(fstat(us, &st), 0);
    w.sock_ino = (unsigned long)st.st_ino;
    ck_assert(proxy_taskfiles_pass(t, seen_cb, &w));
    ck_assert_msg(w.sock_seen, "the socket is reported");
    ck_assert_msg(!w.path_seen, "a socket-mode file of another filesystem is not");
    close(pfd);
    close(us);
    unlink(path);
    rmdir(dir);
    proxy_taskfiles_free(t);
}
END_TEST

/* Choosing the scan: /proc always works; AUTO takes the iterator when it
 * works and says why not otherwise; BPF fails only with a reason. */
START_TEST(test_scan_choice)
{
    struct proxy_ident_cache *c = proxy_ident_cache_new();
    char why[256];
    bool bpf;

    ck_assert_str_eq(proxy_ident_scan_name(c), "proc");
    bpf = proxy_ident_use(c, PROXY_IDENT_BPF, why, sizeof(why));
    ck_assert_str_eq(proxy_ident_scan_name(c), bpf ? "bpf" : "proc");
    ck_assert(bpf == (why[0] == '\0'));
    ck_assert(proxy_ident_use(c, PROXY_IDENT_PROC, why, sizeof(why)));
    ck_assert_str_eq(proxy_ident_scan_name(c), "proc");
    ck_assert_str_eq(why, "");
    ck_assert(proxy_ident_use(c, PROXY_IDENT_AUTO, why, sizeof(why)));
    ck_assert_str_eq(proxy_ident_scan_name(c), bpf ? "bpf" : "proc");
    ck_assert(bpf == (why[0] == '\0'));
    proxy_ident_cache_free(c);
}
END_TEST

static Suite *ident_suite(void)
{
    Suite *s = suite_create("proxy_ident");
    TCase *tc = tcase_create("ident");

    tcase_add_loop_test(tc, test_owner, 0, (int)(PV_ARRAY_LEN(fam_cases) * PV_ARRAY_LEN(scans)));
    tcase_add_loop_test(tc, test_hidden_table, 0, 8);
    tcase_add_test(tc, test_scan_choice);
    tcase_add_loop_test(tc, test_ring_holder, 0, 4);
    tcase_add_test(tc, test_taskfiles_sockfs_only);
    tcase_add_test(tc, test_unknown);
    tcase_add_test(tc, test_kthread_exit);
    tcase_add_test(tc, test_kthread_learned);
    tcase_add_test(tc, test_roll_join);
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
