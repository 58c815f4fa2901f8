/* SPDX-License-Identifier: Apache-2.0 */
/* advisor_child.c - proviso-prover as a child of the advisor
 *
 * The process contract of docs/operations.md#contract, from the parent's
 * side: pick a free loopback port, generate a per-run token and hand it to
 * the child through an inherited pipe (--token-fd 3; never argv or the
 * environment), poll GET /healthz until it answers, then publish the
 * address to the advisor's prover clients. A supervisor thread waits for
 * the child; when it dies it is started again with back-off (100 ms
 * doubling to 10 s, reset after a minute of health), on a new port with a
 * new token. Stopping sends SIGTERM, then SIGKILL after the grace period.
 * The child gets PR_SET_PDEATHSIG, so a killed advisor leaves no prover
 * behind.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "advisor/proc/proc.h"
#include "common/pv_log.h"
#include "common/pv_time.h"

#define START_TIMEOUT_MS 15000
#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 10000

struct advisor_child {
    struct advisor *a;
    char exe[1024];
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t member; /* its index in a->pool */
    pid_t pid;     /* 0 when none runs */
    bool stop;
    bool joined;
    bool thread_started;
};

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static uint16_t free_port(void)
{
    struct sockaddr_in sa;
    socklen_t len = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    uint16_t port = 0;

    if (fd < 0) {
        return 0;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
        getsockname(fd, (struct sockaddr *)&sa, &len) == 0) {
        port = ntohs(sa.sin_port);
    }
    close(fd);
    return port;
}

/* Start one child and wait for its health. The pid into c->pid. */
static pv_result spawn(struct advisor_child *c, char *err, size_t errlen)
{
    struct httpd_token tok;
    char portbuf[16];
    char url[64];
    int fds[2];
    pid_t parent = getpid();
    pid_t pid;
    uint16_t port = free_port();
    size_t off = 0;

    if (port == 0) {
        snprintf(err, errlen, "no free loopback port");
        PV_BAIL(PV_ERR_IO);
    }
    /* cppcheck-suppress uninitvar ; cppcheck misreads the returned pv_result */
    if (!pv_ok(httpd_token_random(&tok))) {
        snprintf(err, errlen, "cannot generate a token");
        PV_BAIL(PV_ERR_INTERNAL);
    }
    if (pipe2(fds, O_CLOEXEC) != 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        httpd_token_free(&tok);
        PV_BAIL(PV_ERR_IO);
    }
    /* The token fits the pipe buffer: write it before the child starts. */
    while (off < tok.len) {
        ssize_t n = write(fds[1], tok.buf + off, tok.len - off);
        if (n <= 0) {
            break;
        }
        off += (size_t)n;
    }
    close(fds[1]);
    snprintf(portbuf, sizeof(portbuf), "%u", (unsigned)port);
    pid = fork();
    if (pid == 0) {
        /* Only async-signal-safe calls from here to exec. */
        static char a_name[] = "proviso-prover", a_port[] = "--port", a_bind[] = "--bind",
                    a_addr[] = "127.0.0.1", a_tok[] = "--token-fd", a_fd[] = "3";
        char *argv[] = {a_name, a_port, portbuf, a_bind, a_addr, a_tok, a_fd, NULL};
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent) {
            _exit(127);
        }
        /* dup2 onto itself would keep FD_CLOEXEC: clear it instead. */
        if (fds[0] == 3 ? fcntl(3, F_SETFD, 0) != 0 : dup2(fds[0], 3) < 0) {
            _exit(127);
        }
        execv(c->exe, argv);
        _exit(127);
    }
    close(fds[0]);
    if (pid < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        httpd_token_free(&tok);
        PV_BAIL(PV_ERR_IO);
    }
    snprintf(url, sizeof(url), "http://127.0.0.1:%u", (unsigned)port);
    for (int waited = 0; waited < START_TIMEOUT_MS; waited += 20) {
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) {
            snprintf(err, errlen, "%s exited during start-up (status %d)", c->exe,
                     WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
            httpd_token_free(&tok);
            PV_BAIL(PV_ERR_IO);
        }
        if (advisor_prover_healthy(url)) {
            char token[HTTPD_TOKEN_MAX + 1];
            memcpy(token, tok.buf, tok.len);
            token[tok.len] = '\0';
            advisor_pool_set(c->a->pool, c->member, url, token);
            OPENSSL_cleanse(token, sizeof(token));
            httpd_token_free(&tok);
            pthread_mutex_lock(&c->mu);
            c->pid = pid;
            pthread_mutex_unlock(&c->mu);
            pv_log_info("prover: child %ld listening on %s", (long)pid, url);
            return PV_RESULT_OK;
        }
        sleep_ms(20);
    }
    kill(pid, SIGKILL);
    (void)waitpid(pid, NULL, 0);
    httpd_token_free(&tok);
    snprintf(err, errlen, "%s did not answer /healthz within %d ms", c->exe, START_TIMEOUT_MS);
    PV_BAIL(PV_ERR_IO);
}

static bool stopping(struct advisor_child *c)
{
    bool s;
    pthread_mutex_lock(&c->mu);
    s = c->stop;
    pthread_mutex_unlock(&c->mu);
    return s;
}

static void *supervise(void *arg)
{
    struct advisor_child *c = arg;
    unsigned backoff = BACKOFF_MIN_MS;

    for (;;) {
        pid_t pid;
        int st = 0;
        time_t started = time(NULL);

        pthread_mutex_lock(&c->mu);
        pid = c->pid;
        pthread_mutex_unlock(&c->mu);
        if (pid > 0) {
            while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
            }
        }
        pthread_mutex_lock(&c->mu);
        c->pid = 0;
        pthread_cond_broadcast(&c->cv);
        pthread_mutex_unlock(&c->mu);
        if (stopping(c)) {
            break;
        }
        /* No prover until the new one answers: proofs fail (pending,
         * never approved) rather than reach a dead port. */
        advisor_pool_set(c->a->pool, c->member, "", "");
        if (pid > 0) {
            pv_log_warnx("prover: child %ld exited (%s %d); restarting in %u ms", (long)pid,
                         WIFSIGNALED(st) ? "signal" : "status",
                         WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st), backoff);
        }
        if (time(NULL) - started > 60) {
            backoff = BACKOFF_MIN_MS;
        }
        for (unsigned slept = 0; slept < backoff && !stopping(c); slept += 50) {
            sleep_ms(50);
        }
        if (stopping(c)) {
            break;
        }
        {
            char err[512];
            if (!pv_ok(spawn(c, err, sizeof(err)))) {
                pv_log_warnx("prover: %s", err);
            }
        }
        backoff = backoff * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : backoff * 2;
    }
    return NULL;
}

struct advisor_child *advisor_child_start(struct advisor *a, const char *exe, char *err,
                                          size_t errlen)
{
    struct advisor_child *c = pv_calloc(1, sizeof(*c));

    if (c == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    c->a = a;
    snprintf(c->exe, sizeof(c->exe), "%s", exe);
    c->member = advisor_pool_size(a->pool);
    if (a->pool == NULL || !pv_ok(advisor_pool_add(a->pool, "child", "", ""))) {
        snprintf(err, errlen, "the prover pool is full or missing");
        free(c);
        return NULL;
    }
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    if (access(exe, X_OK) != 0) {
        snprintf(err, errlen, "%s: %s (pass --prover URL to use a running prover)", exe,
                 strerror(errno));
        free(c);
        return NULL;
    }
    if (!pv_ok(spawn(c, err, errlen))) {
        free(c);
        return NULL;
    }
    if (pthread_create(&c->thread, NULL, supervise, c) != 0) {
        snprintf(err, errlen, "cannot start the prover supervisor");
        kill(c->pid, SIGKILL);
        (void)waitpid(c->pid, NULL, 0);
        free(c);
        return NULL;
    }
    c->thread_started = true;
    return c;
}

void advisor_child_stop(struct advisor_child *c, unsigned grace_ms)
{
    struct timespec ts;
    pid_t pid;

    if (c == NULL) {
        return;
    }
    pthread_mutex_lock(&c->mu);
    c->stop = true;
    pid = c->pid;
    if (pid > 0) {
        kill(pid, SIGTERM);
        pv_deadline(&ts, CLOCK_REALTIME, grace_ms);
        while (c->pid != 0) {
            if (pthread_cond_timedwait(&c->cv, &c->mu, &ts) == ETIMEDOUT) {
                break;
            }
        }
        if (c->pid != 0) {
            pv_log_warnx("prover: child %ld ignored SIGTERM; killing it", (long)c->pid);
            kill(c->pid, SIGKILL);
        }
    }
    pthread_mutex_unlock(&c->mu);
    if (c->thread_started) {
        pthread_join(c->thread, NULL);
    }
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv);
    free(c);
}
