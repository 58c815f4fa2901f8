/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_splice.c - zero-copy relay of an opaque tunnel with splice(2)
 *
 * An opaque CONNECT tunnel carries bytes the proxy never looks at, so they
 * need not enter user space: each direction moves socket -> pipe -> socket
 * with splice(2). A direction reads only while its pipe is not full, and
 * writes whenever the pipe holds bytes; a full destination (EAGAIN) parks the
 * pipe and arms a write event (backpressure). EOF on a source is propagated
 * as a half-close (shutdown SHUT_WR) once its pipe is empty; when both
 * directions have ended, or on any error, the owner's 'done' callback runs
 * once, as the last thing the relay does. The relay never closes the sockets.
 */
#include "config.h"

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proxy/proxy_int.h"

#define SPLICE_CHUNK (1u << 20)
#define PIPE_SIZE (1 << 20)

struct dir {
    struct proxy_splice *s;
    int from;
    int to;
    int pipe[2];
    size_t pending;   /* bytes in the pipe */
    bool eof;         /* the source ended */
    bool done;        /* EOF propagated */
    struct event *rd; /* readable(from) */
    struct event *wr; /* writable(to), armed only when the pipe is parked */
};

struct proxy_splice {
    struct dir d[2];
    void (*done)(void *arg, bool error);
    void *arg;
    bool finished;
};

static void finish(struct proxy_splice *s, bool error)
{
    if (s->finished) {
        return;
    }
    s->finished = true;
    for (int i = 0; i < 2; i++) {
        event_del(s->d[i].rd);
        event_del(s->d[i].wr);
    }
    s->done(s->arg, error); /* may free 's': nothing after this */
}

/* Move what the pipe holds to the destination. false on error. */
static bool flush(struct dir *d)
{
    while (d->pending > 0) {
        ssize_t m =
            splice(d->pipe[0], NULL, d->to, NULL, d->pending, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
        if (m > 0) {
            d->pending -= (size_t)m;
            continue;
        }
        if (m < 0 && errno == EINTR) {
            continue;
        }
        if (m < 0 && errno == EAGAIN) {
            event_add(d->wr, NULL);
            event_del(d->rd);
            return true;
        }
        return false;
    }
    if (d->eof && !d->done) {
        d->done = true;
        (void)shutdown(d->to, SHUT_WR);
    }
    if (!d->eof) {
        event_add(d->rd, NULL);
    }
    return true;
}

/* One step of a direction: read what is available, then flush. */
static void step(struct dir *d)
{
    struct proxy_splice *s = d->s;

    while (!d->eof && d->pending < PIPE_SIZE) {
        ssize_t n = splice(d->from, NULL, d->pipe[1], NULL, SPLICE_CHUNK,
                           SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
        if (n > 0) {
            d->pending += (size_t)n;
            if (d->pending >= SPLICE_CHUNK) {
                break; /* flush before reading more */
            }
            continue;
        }
        if (n == 0) {
            d->eof = true;
            event_del(d->rd);
            break;
        }
        if (errno == EINTR) {
            continue;
        }
        if (errno == EAGAIN) {
            break;
        }
        finish(s, true);
        return;
    }
    if (!flush(d)) {
        finish(s, true);
        return;
    }
    if (s->d[0].done && s->d[1].done) {
        finish(s, false);
    }
}

static void on_read(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    step(arg);
}

static void on_write(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    step(arg);
}

void proxy_splice_free(struct proxy_splice *s)
{
    if (s == NULL) {
        return;
    }
    for (int i = 0; i < 2; i++) {
        if (s->d[i].rd != NULL) {
            event_free(s->d[i].rd);
        }
        if (s->d[i].wr != NULL) {
            event_free(s->d[i].wr);
        }
        for (int k = 0; k < 2; k++) {
            if (s->d[i].pipe[k] >= 0) {
                close(s->d[i].pipe[k]);
            }
        }
    }
    free(s);
}

struct proxy_splice *proxy_splice_new(struct event_base *base, int a, int b,
                                      void (*done)(void *arg, bool error), void *arg)
{
    struct proxy_splice *s = pv_calloc(1, sizeof(*s));

    if (s == NULL) {
        return NULL;
    }
    s->done = done;
    s->arg = arg;
    for (int i = 0; i < 2; i++) {
        struct dir *d = &s->d[i];
        d->s = s;
        d->from = i == 0 ? a : b;
        d->to = i == 0 ? b : a;
        d->pipe[0] = -1;
        d->pipe[1] = -1;
    }
    for (int i = 0; i < 2; i++) {
        struct dir *d = &s->d[i];
        if (pipe2(d->pipe, O_NONBLOCK | O_CLOEXEC) != 0) {
            proxy_splice_free(s);
            return NULL;
        }
        (void)fcntl(d->pipe[1], F_SETPIPE_SZ, PIPE_SIZE);
        d->rd = event_new(base, d->from, EV_READ | EV_PERSIST, on_read, d);
        d->wr = event_new(base, d->to, EV_WRITE, on_write, d);
        if (d->rd == NULL || d->wr == NULL) {
            proxy_splice_free(s);
            return NULL;
        }
    }
    for (int i = 0; i < 2; i++) {
        event_add(s->d[i].rd, NULL);
    }
    return s;
}
