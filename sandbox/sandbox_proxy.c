/* SPDX-License-Identifier: Apache-2.0 */
/* sandbox_proxy.c - the sandbox's proxy: a proviso-proxy process in the
 * host's namespaces, started with --sandbox-init so that its listening
 * socket (127.0.0.1:3128) and its socket lookups live in the sandbox's
 * network namespace and its identity scan reads the sandbox's own /proc
 * (docs/sandbox.md#proxy). Its data directory is inside the sandbox's root
 * (/.proviso-proxy, root's alone), so it goes with the sandbox's mount
 * namespace, whatever ends proviso; the kernel ends the proxy itself
 * (PR_SET_PDEATHSIG) when proviso ends.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/pv.h"
#include "common/pv_file.h"
#include "model/model.h"
#include "sandbox/sandbox_int.h"

#define PROXY_ARGS_MAX 40
#define PROXY_START_MS 15000
#define SYSTEM_CA "/etc/ssl/certs/ca-certificates.crt"

static void proxy_program(const struct sandbox_opts *o, char *out, size_t len)
{
    char self[PATH_MAX - 32];
    ssize_t n;
    char *slash;

    if (o->proxy_program != NULL) {
        snprintf(out, len, "%s", o->proxy_program);
        return;
    }
    n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n > 0) {
        self[n] = '\0';
        slash = strrchr(self, '/');
        if (slash != NULL) {
            *slash = '\0';
            snprintf(out, len, "%s/proviso-proxy", self);
            if (access(out, X_OK) == 0) {
                return;
            }
        }
    }
    snprintf(out, len, "proviso-proxy"); /* from PATH */
}

struct argv_buf {
    char *v[PROXY_ARGS_MAX + 1];
    size_t n;
};

static void arg(struct argv_buf *a, const char *s)
{
    if (a->n < PROXY_ARGS_MAX) {
        a->v[a->n++] = PV_UNCONST(s);
        a->v[a->n] = NULL;
    }
}

static void arg2(struct argv_buf *a, const char *opt, const char *val)
{
    if (val != NULL) {
        arg(a, opt);
        arg(a, val);
    }
}

static double now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Wait for the port file; false when the proxy ended or took too long. */
static bool wait_ready(struct sandbox_proxy *px, const char *portfile, char *err, size_t errlen)
{
    double until = now_ms() + PROXY_START_MS;
    int status;

    for (;;) {
        FILE *f = fopen(portfile, "re");
        if (f != NULL) {
            unsigned port = 0;
            unsigned admin = 0;
            int got = fscanf(f, "%u %u", &port, &admin);
            fclose(f);
            if (got == 2) {
                px->admin_port = admin;
                return true;
            }
        }
        if (waitpid(px->pid, &status, WNOHANG) == px->pid) {
            px->pid = -1;
            snprintf(err, errlen,
                     "the sandbox's proxy did not start (status %d; its reason is above)",
                     WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
            return false;
        }
        if (now_ms() > until) {
            snprintf(err, errlen, "the sandbox's proxy did not listen within %d ms",
                     PROXY_START_MS);
            return false;
        }
        usleep(2000);
    }
}

static bool append_file(FILE *out, const char *path)
{
    char buf[8192];
    size_t n;
    FILE *in = fopen(path, "re");

    if (in == NULL) {
        return false;
    }
    while ((n = fread(buf, 1, sizeof(buf), in)) > 0) {
        if (fwrite(buf, 1, n, out) != n) {
            fclose(in);
            return false;
        }
    }
    fclose(in);
    return true;
}

/* /.proviso/ca.crt (the proxy's CA alone) and /.proviso/ca-bundle.crt (the
 * system's CAs too, for clients that replace their store with one file). */
static bool copy_ca(const char *root, char *err, size_t errlen)
{
    char src[PATH_MAX];
    char dst[PATH_MAX + 32];
    FILE *f;
    bool ok;

    snprintf(src, sizeof(src), "%s" SANDBOX_PROXY_DIR "/ca.crt", root);
    snprintf(dst, sizeof(dst), "%s" SANDBOX_DIR "/ca.crt", root);
    f = fopen(dst, "we");
    ok = f != NULL && append_file(f, src);
    ok = (f == NULL || fclose(f) == 0) && ok;
    snprintf(dst, sizeof(dst), "%s" SANDBOX_DIR "/ca-bundle.crt", root);
    f = ok ? fopen(dst, "we") : NULL;
    ok = f != NULL && (access(SYSTEM_CA, R_OK) != 0 || append_file(f, SYSTEM_CA)) &&
         append_file(f, src);
    ok = (f == NULL || fclose(f) == 0) && ok;
    if (!ok) {
        snprintf(err, errlen, "cannot copy the proxy's CA into the sandbox: %s", strerror(errno));
    }
    return ok;
}

/* Write 'len' bytes to DATA/NAME (0600, root's directory): the proxy reads
 * its policy and credentials there, where the command cannot write them
 * (a FILE in a read_write path would otherwise be reloaded after the
 * command rewrote it). */
static bool private_file(const char *data, const char *name, const char *buf, size_t len, char *out,
                         size_t outlen, char *err, size_t errlen)
{
    int fd;

    snprintf(out, outlen, "%s/%s", data, name);
    fd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 || write(fd, buf, len) != (ssize_t)len || close(fd) != 0) {
        snprintf(err, errlen, "cannot give the proxy its %s: %s", name, strerror(errno));
        return false;
    }
    return true;
}

static bool private_copies(const struct sandbox_opts *o, const struct model_policy *p,
                           const char *data, struct sandbox_proxy *px, char *err, size_t errlen)
{
    bool ok = true;

    if (o->name == NULL) {
        size_t len = 0;
        char *yaml = model_policy_to_yaml(p, &len);
        ok = yaml != NULL && private_file(data, "policy.yaml", yaml, len, px->policy_path,
                                          sizeof(px->policy_path), err, errlen);
        free(yaml);
        if (yaml == NULL) {
            snprintf(err, errlen, "out of memory");
        }
    }
    if (ok && o->credentials != NULL) {
        char ferr[PATH_MAX + 128];
        char *buf = NULL;
        size_t len = 0;
        if (!pv_ok(pv_file_read(o->credentials, MODEL_MAX_POLICY_BYTES, false, &buf, &len, ferr,
                                sizeof(ferr)))) {
            snprintf(err, errlen, "%s", ferr);
            return false;
        }
        ok = private_file(data, "credentials.yaml", buf, len, px->cred_path, sizeof(px->cred_path),
                          err, errlen);
        free(buf);
    }
    return ok;
}

/* The decision log is opened here, once, never through a symbolic link (a
 * path in a read_write directory is the command's to replace), and handed
 * to the proxy as a descriptor. */
static bool open_log(const struct sandbox_opts *o, struct sandbox_proxy *px, char *err,
                     size_t errlen)
{
    struct stat st;

    px->logfd = -1;
    if (o->proxy_log == NULL) {
        return true;
    }
    px->logfd = open(o->proxy_log, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (px->logfd < 0 || fstat(px->logfd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "--log %s: %s", o->proxy_log,
                 px->logfd < 0 ? strerror(errno) : "not a regular file");
        return false;
    }
    return true;
}

/* A token proviso holds in memory (the sandbox it made for this run) goes
 * to the proxy as a 0600 file in its data directory. */
static bool write_token(const struct sandbox_opts *o, const char *data, struct sandbox_proxy *px,
                        char *err, size_t errlen)
{
    int fd;
    size_t n;

    if (o->token == NULL) {
        return true;
    }
    snprintf(px->token_path, sizeof(px->token_path), "%s/sandbox.token", data);
    fd = open(px->token_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    n = strlen(o->token);
    if (fd < 0 || write(fd, o->token, n) != (ssize_t)n || close(fd) != 0) {
        snprintf(err, errlen, "cannot give the proxy its token: %s", strerror(errno));
        return false;
    }
    return true;
}

/* With --log, the proxy's own messages go there too (the command's
 * standard error is the command's), and its decision log is descriptor 3. */
static void exec_proxy(const char *prog, struct argv_buf *a, pid_t parent, int logfd)
{
    sigset_t none;

    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) {
        _exit(125);
    }
    if (logfd >= 0 && (dup2(logfd, STDERR_FILENO) < 0 || dup2(logfd, 3) < 0)) {
        fprintf(stderr, "proviso: sandbox: --log: %s\n", strerror(errno));
        _exit(125);
    }
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execvp(prog, a->v);
    fprintf(stderr, "proviso: sandbox: cannot run %s: %s\n", prog, strerror(errno));
    _exit(125);
}

bool sandbox_proxy_start(const struct sandbox_opts *o, const struct model_policy *p, pid_t init,
                         struct sandbox_proxy *px, char *err, size_t errlen)
{
    char prog[PATH_MAX];
    char pid[24];
    char root[64];
    char data[128];
    char portfile[160];
    char skills[160];
    struct argv_buf a = {{NULL}, 0};
    pid_t parent = getpid();

    proxy_program(o, prog, sizeof(prog));
    snprintf(pid, sizeof(pid), "%d", (int)init);
    snprintf(root, sizeof(root), "/proc/%d/root", (int)init);
    snprintf(data, sizeof(data), "%s" SANDBOX_PROXY_DIR, root);
    snprintf(portfile, sizeof(portfile), "%s/port", data);
    snprintf(skills, sizeof(skills), "%s" SANDBOX_DIR "/skills", root);
    if (!write_token(o, data, px, err, errlen) || !private_copies(o, p, data, px, err, errlen) ||
        !open_log(o, px, err, errlen)) {
        return false;
    }
    arg(&a, prog);
    arg2(&a, "--sandbox-init", pid);
    arg2(&a, "--data-dir", data);
    arg2(&a, "--port", PV_STR(SANDBOX_PROXY_PORT));
    arg2(&a, "--admin-port", "0");
    arg2(&a, "--port-file", portfile);
    if (o->name != NULL) {
        arg2(&a, "--advisor", o->advisor_url);
        arg2(&a, "--sandbox", o->name);
        arg2(&a, "--token-file", px->token_path[0] != '\0' ? px->token_path : o->token_file);
        arg2(&a, "--skill-dir", skills);
        arg2(&a, "--skill-shown", SANDBOX_DIR "/skills/policy_advisor.md");
    } else {
        arg2(&a, "--policy", px->policy_path);
    }
    arg2(&a, "--credentials", o->credentials != NULL ? px->cred_path : NULL);
    arg2(&a, "--upstream-ca", o->upstream_ca);
    arg2(&a, "--log", px->logfd >= 0 ? "/dev/fd/3" : NULL);
    if (o->test_allow_loopback) {
        arg(&a, "--test-allow-loopback");
    }
    px->pid = fork();
    if (px->pid < 0) {
        snprintf(err, errlen, "cannot start the proxy: %s", strerror(errno));
        return false;
    }
    if (px->pid == 0) {
        exec_proxy(prog, &a, parent, px->logfd);
    }
    if (px->logfd >= 0) {
        close(px->logfd);
        px->logfd = -1;
    }
    return wait_ready(px, portfile, err, errlen) && copy_ca(root, err, errlen);
}

void sandbox_proxy_stop(struct sandbox_proxy *px)
{
    int status;

    if (px->pid <= 0) {
        return;
    }
    kill(px->pid, SIGTERM);
    for (int i = 0; i < 300; i++) { /* the proxy's own grace is 5 s */
        if (waitpid(px->pid, &status, WNOHANG) == px->pid) {
            px->pid = -1;
            return;
        }
        usleep(20000);
    }
    kill(px->pid, SIGKILL);
    (void)waitpid(px->pid, &status, 0);
    px->pid = -1;
}
