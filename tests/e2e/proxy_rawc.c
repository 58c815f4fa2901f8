/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_rawc.c - raw TCP client for the proviso-proxy end-to-end scripts
 *
 *   proxy_rawc PORT [--shut] [--timeout-ms MS]            < BYTES
 *   proxy_rawc PORT --stall N [--hold-ms MS]
 *
 * First form: connect to 127.0.0.1:PORT, send stdin as is, optionally
 * shutdown(SHUT_WR) (a half-close), then copy what the peer sends to stdout
 * until it closes or MS pass (default 3000). Exit 0 when the peer closed.
 *
 *   proxy_rawc PORT --share N --holder EXE [--hide thread|leader] < BYTES
 *
 * Shared socket: create the socket unconnected, let N processes running EXE
 * ("EXE -c 'read -t 3 x; :'", a shell waiting without a child) inherit it, then a last child (the highest pid,
 * running this program) connects, sends stdin and prints the answer; the
 * parent has closed its copy by then, so N + 1 processes hold the socket.
 * With --hide thread the last child keeps its copy only in a thread's own
 * file table (unshare(CLONE_FILES), the main thread closes it); with --hide
 * leader its main thread exits first and another thread talks. Either way
 * /proc/PID/fd of the talker does not show the socket.
 *
 * Second form (floods): open N connections that each send half a request
 * head and nothing more, keep them open for MS (default 3000), then print
 * "opened A closed-by-peer B" (connections the peer closed while held).
 * Raise `ulimit -n` above N first.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int dial(unsigned port)
{
    struct sockaddr_in sa;
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    if (fd < 0) {
        return -1;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static unsigned num(const char *s)
{
    unsigned v = 0;

    for (; *s >= '0' && *s <= '9'; s++) {
        v = v * 10 + (unsigned)(*s - '0');
    }
    return v;
}

static int stall(unsigned port, unsigned n, unsigned hold)
{
    static const char half[] = "GET http://127.0.0.1/ HTTP/1.1\r\nHost: 127.0";
    int *fds = calloc(n, sizeof(*fds));
    unsigned opened = 0;
    unsigned closed = 0;
    long end;

    if (fds == NULL) {
        return 1;
    }
    for (unsigned i = 0; i < n; i++) {
        fds[i] = dial(port);
        if (fds[i] >= 0) {
            opened++;
            (void)!write(fds[i], half, sizeof(half) - 1);
        }
    }
    end = now_ms() + hold;
    while (now_ms() < end) {
        usleep(50000);
    }
    for (unsigned i = 0; i < n; i++) {
        char b[64];
        if (fds[i] < 0) {
            continue;
        }
        if (recv(fds[i], b, sizeof(b), MSG_DONTWAIT) >= 0) {
            closed++; /* a reply or EOF: the peer gave up on it */
        }
        close(fds[i]);
    }
    free(fds);
    printf("opened %u closed-by-peer %u\n", opened, closed);
    return 0;
}

/* The talker's work, in the thread that holds the socket. */
struct talk {
    int fd;
    unsigned port;
    const char *req;
    size_t len;
    bool unshare;    /* --hide thread: a private table, then the main thread closes its copy */
    atomic_int step; /* 1: table private, 2: main thread's copy closed */
};

static void *talk(void *arg)
{
    struct talk *t = arg;
    struct sockaddr_in sa;
    char buf[4096];
    ssize_t r;

    if (t->unshare) {
        if (unshare(CLONE_FILES) != 0) {
            _exit(3);
        }
        atomic_store(&t->step, 1);
        while (atomic_load(&t->step) != 2) {
            usleep(1000);
        }
    }
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)t->port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(t->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        _exit(1);
    }
    (void)!write(t->fd, t->req, t->len);
    while ((r = read(t->fd, buf, sizeof(buf))) > 0) {
        fwrite(buf, 1, (size_t)r, stdout);
    }
    fflush(stdout);
    _exit(0); /* the whole process, from whichever thread */
}

/* The last child of share(): talk from the main thread, or from a thread
 * that hides the socket from /proc/PID/fd ('hide': NULL, "thread", "leader"). */
static void talker(int fd, unsigned port, const char *req, size_t len, const char *hide)
{
    struct talk t = {fd, port, req, len, false, 0};
    pthread_t th;

    if (hide == NULL) {
        talk(&t);
    }
    t.unshare = strcmp(hide, "thread") == 0;
    if (pthread_create(&th, NULL, talk, &t) != 0) {
        _exit(4);
    }
    if (t.unshare) {
        while (atomic_load(&t.step) != 1) {
            usleep(1000);
        }
        close(fd); /* now only the thread's own table holds it */
        atomic_store(&t.step, 2);
        (void)pthread_join(th, NULL);
        _exit(5);
    }
    pthread_exit(NULL); /* --hide leader: /proc/PID/fd is empty from now on */
}

static int share(unsigned port, unsigned n, const char *holder, const char *req, size_t len,
                 const char *hide)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    pid_t last;

    if (fd < 0) {
        return 1;
    }
    for (unsigned i = 0; i < n; i++) {
        pid_t p = fork();
        if (p == 0) {
            /* a builtin wait (no child of EXE inherits the socket): 'read'
             * on a pipe whose write end this process keeps open */
            int keep[2];
            if (pipe(keep) != 0 || dup2(keep[0], 0) != 0) {
                _exit(126);
            }
            execl(holder, holder, "-c", "read -t 3 x; :", (char *)NULL);
            _exit(127);
        }
    }
    last = fork();
    if (last != 0) {
        int st = 0;
        close(fd);
        (void)waitpid(last, &st, 0);
        return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
    }
    usleep(300000); /* the parent closed its copy, the holders run EXE */
    talker(fd, port, req, len, hide);
    _exit(1);
}

int main(int argc, char **argv)
{
    unsigned port;
    bool shut = false;
    unsigned timeout = 3000;
    unsigned nstall = 0;
    unsigned hold = 3000;
    unsigned nshare = 0;
    const char *holder = NULL;
    const char *hide = NULL;
    char buf[65536];
    size_t len = 0;
    ssize_t r;
    int fd;
    long end;

    if (argc < 2) {
        fprintf(stderr, "usage: proxy_rawc PORT [--shut] [--timeout-ms MS] | --stall N\n");
        return 2;
    }
    port = num(argv[1]);
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--shut") == 0) {
            shut = true;
        } else if (strcmp(argv[i], "--timeout-ms") == 0 && i + 1 < argc) {
            timeout = num(argv[++i]);
        } else if (strcmp(argv[i], "--stall") == 0 && i + 1 < argc) {
            nstall = num(argv[++i]);
        } else if (strcmp(argv[i], "--share") == 0 && i + 1 < argc) {
            nshare = num(argv[++i]);
        } else if (strcmp(argv[i], "--holder") == 0 && i + 1 < argc) {
            holder = argv[++i];
        } else if (strcmp(argv[i], "--hide") == 0 && i + 1 < argc) {
            hide = argv[++i];
        } else if (strcmp(argv[i], "--hold-ms") == 0 && i + 1 < argc) {
            hold = num(argv[++i]);
        }
    }
    if (nstall > 0) {
        return stall(port, nstall, hold);
    }
    while (len < sizeof(buf) && (r = read(0, buf + len, sizeof(buf) - len)) > 0) {
        len += (size_t)r;
    }
    if (nshare > 0 && holder != NULL) {
        return share(port, nshare, holder, buf, len, hide);
    }
    fd = dial(port);
    if (fd < 0) {
        perror("connect");
        return 1;
    }
    for (size_t off = 0; off < len;) {
        r = write(fd, buf + off, len - off);
        if (r <= 0) {
            break;
        }
        off += (size_t)r;
    }
    if (shut) {
        shutdown(fd, SHUT_WR);
    }
    end = now_ms() + timeout;
    for (;;) {
        struct pollfd p = {fd, POLLIN, 0};
        long left = end - now_ms();
        if (left <= 0 || poll(&p, 1, (int)left) <= 0) {
            close(fd);
            return 3; /* timed out: the peer kept the connection open */
        }
        r = read(fd, buf, sizeof(buf));
        if (r <= 0) {
            break;
        }
        fwrite(buf, 1, (size_t)r, stdout);
    }
    close(fd);
    return 0;
}
