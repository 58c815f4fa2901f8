/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_ident.c - which binary is asking: socket owner, ancestors, TOFU pins
 *
 * The identity of a connection is the executable of the process that owns
 * the client end of the TCP socket, then the executables of its ancestors
 * (docs/semantics.md#identity). Steps: the client socket's inode (netlink
 * sock_diag exact lookup, falling back to /proc/net/tcp and tcp6), the
 * processes holding "socket:[inode]" in /proc/PID/fd (several owners with
 * different identities deny: ambiguous), /proc/PID/exe and the PPid chain.
 * Command-line paths are never read: they never grant.
 *
 * Every executable in the chain is pinned on first use (SHA-256 of
 * /proc/PID/exe, i.e. the image actually running); a later image with the
 * same path and another hash denies the connection. Hashes are recomputed
 * only when the file's (dev, ino, size, mtime, ctime) fingerprint changes.
 * Pins live in memory for the life of the process.
 *
 * This file owns the cache and finds the processes that hold a socket (the
 * rolling scan, kernel threads, the start-up self-check); the socket inode,
 * the chain of one process and the pins are in proxy_ident_pid.c.
 */
#include "config.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/pv_file.h"
#include "proxy/proxy_ident.h"

static void roll_free(struct roll *r);

struct proxy_ident_cache *proxy_ident_cache_new(void)
{
    struct proxy_ident_cache *c = pv_calloc(1, sizeof(*c));

    if (c == NULL) {
        return NULL;
    }
    c->nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    c->roll.procfd = -1;
    c->self = proxy_ident_proc_foreign() ? -1 : getpid();
    return c;
}

void proxy_ident_cache_free(struct proxy_ident_cache *c)
{
    if (c == NULL) {
        return;
    }
    for (size_t i = 0; i < c->npins; i++) {
        free(c->pins[i].path);
    }
    free(c->pins);
    for (size_t i = 0; i < c->kt.n; i++) {
        close(c->kt.pidfd[i]);
    }
    free(c->kt.pid);
    free(c->kt.pidfd);
    roll_free(&c->roll);
    proxy_taskfiles_free(c->tf);
    if (c->nl >= 0) {
        close(c->nl);
    }
    free(c);
}

bool proxy_ident_use(struct proxy_ident_cache *c, enum proxy_ident_scan how, char *why, size_t len)
{
    why[0] = '\0';
    if (how == PROXY_IDENT_PROC) {
        proxy_taskfiles_free(c->tf);
        c->tf = NULL;
        return true;
    }
    if (c->tf == NULL) {
        c->tf = proxy_taskfiles_open(why, len);
    }
    return c->tf != NULL || how == PROXY_IDENT_AUTO;
}

const char *proxy_ident_scan_name(const struct proxy_ident_cache *c)
{
    return c->tf != NULL ? "bpf" : "proc";
}

struct proxy_identity *proxy_identity_ref(struct proxy_identity *id)
{
    if (id != NULL) {
        id->refs++;
    }
    return id;
}

void proxy_identity_unref(struct proxy_identity *id)
{
    if (id == NULL || --id->refs > 0) {
        return;
    }
    for (size_t i = 0; i < id->n; i++) {
        free(id->path[i]);
    }
    free(id);
}

/* One socket being resolved by the rolling scan. */
struct holders {
    unsigned long inode;
    void *tag;    /* the caller's, handed back on completion */
    uint64_t lap; /* joined during this lap ... */
    pid_t start;  /* ... after visiting this pid (0: before the lap's first) */
    pid_t *pids;  /* new array */
    size_t n;
    size_t cap;
    bool overflow; /* more than MAX_OWNERS, or no memory: never a subset */
};

static int cmp_holders(const void *a, const void *b)
{
    const struct holders *x = a;
    const struct holders *y = b;

    return x->inode < y->inode ? -1 : x->inode > y->inode ? 1 : 0;
}

static void holders_add(struct holders *h, pid_t pid)
{
    if (h->overflow || (h->n > 0 && h->pids[h->n - 1] == pid)) {
        return; /* a process's second table (a thread's own) adds no holder */
    }
    if (h->n == h->cap) {
        size_t ncap = h->cap ? h->cap * 2 : 8;
        pid_t *nv = ncap <= MAX_OWNERS ? pv_realloc(h->pids, ncap * sizeof(*nv)) : NULL;
        if (nv == NULL) {
            h->overflow = true;
            return;
        }
        h->pids = nv;
        h->cap = ncap;
    }
    h->pids[h->n++] = pid;
}

/* A read of a process's fd table failed with 'err'. Gone processes hold
 * nothing; processes the proxy may not inspect (EACCES/EPERM: outside its
 * ptrace authority, such as a parent namespace's init) are not holders it
 * can see, a documented deployment requirement (docs/security.md and the
 * start-up self-check); any other failure on a live process leaves the
 * holder lists incomplete. */
static bool read_failed(int proc, const char *pid_name, int err)
{
    if (err == ENOENT || err == ESRCH || err == EACCES || err == EPERM) {
        return false;
    }
    return faccessat(proc, pid_name, F_OK, 0) == 0;
}

/* ---------------------------------------------------------------------------
 * Directory listing with getdents64: no DIR (no fcntl, fstat, malloc per
 * process), one buffer refilled in place.
 * ------------------------------------------------------------------------- */

struct dents {
    int fd;
    size_t len;
    size_t off;
    union {
        struct dirent64 align;
        char b[16384];
    } buf;
};

/* The next entry's name, NULL at the end ('*err' 0) or on error ('*err'). */
static const char *dents_next(struct dents *d, int *err)
{
    for (;;) {
        if (d->off < d->len) {
            struct dirent64 *e = (struct dirent64 *)(void *)(d->buf.b + d->off);
            d->off += e->d_reclen;
            if (e->d_name[0] == '.') {
                continue;
            }
            return e->d_name;
        }
        ssize_t n = getdents64(d->fd, d->buf.b, sizeof(d->buf.b));
        if (n <= 0) {
            *err = n < 0 ? errno : 0;
            return NULL;
        }
        d->len = (size_t)n;
        d->off = 0;
    }
}

/* ---------------------------------------------------------------------------
 * Kernel threads: no file table, ever. A scan skips the ones an earlier scan
 * identified (PF_KTHREAD in /proc/PID/stat), exactly: each is held by a
 * pidfd opened before the flag was read, and every scan first drops the
 * entries whose pidfd reports an exit (one poll for all of them), so a pid
 * is only skipped while the very kernel thread that was checked still holds
 * it - a reused pid is scanned like any other.
 * ------------------------------------------------------------------------- */

#define PF_KTHREAD_FLAG 0x00200000u

static bool kt_find(const struct kthreads *k, pid_t pid, size_t *at)
{
    size_t lo = 0;
    size_t hi = k->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (k->pid[mid] < pid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    *at = lo;
    return lo < k->n && k->pid[lo] == pid;
}

/* Insert 'pid' held by 'pidfd' (steals it). */
static void kt_insert(struct kthreads *k, pid_t pid, int pidfd)
{
    size_t at;

    if (kt_find(k, pid, &at)) {
        close(pidfd);
        return;
    }
    if (k->n == k->cap) {
        size_t ncap = k->cap ? k->cap * 2 : 64;
        pid_t *np = pv_realloc(k->pid, ncap * sizeof(*np));
        if (np == NULL) {
            close(pidfd);
            return;
        }
        k->pid = np;
        int *nf = pv_realloc(k->pidfd, ncap * sizeof(*nf));
        if (nf == NULL) {
            close(pidfd);
            return;
        }
        k->pidfd = nf;
        k->cap = ncap;
    }
    memmove(k->pid + at + 1, k->pid + at, (k->n - at) * sizeof(*k->pid));
    memmove(k->pidfd + at + 1, k->pidfd + at, (k->n - at) * sizeof(*k->pidfd));
    k->pid[at] = pid;
    k->pidfd[at] = pidfd;
    k->n++;
}

/* Remember 'pid' when it is a kernel thread: pidfd first, then the flag. */
static void kt_learn(struct kthreads *k, pid_t pid)
{
    uint64_t flags;
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);

    if (pidfd < 0) {
        return;
    }
    if (!proxy_ident_stat_field(pid, 9, &flags) || (flags & PF_KTHREAD_FLAG) == 0) {
        close(pidfd);
        return;
    }
    kt_insert(k, pid, pidfd);
}

/* Drop every entry whose process exited (or cannot be polled). False when
 * the poll itself failed: then nothing may be skipped. */
static bool kt_prune(struct kthreads *k)
{
    struct pollfd *pf;
    size_t w = 0;

    if (k->n == 0) {
        return true;
    }
    pf = pv_calloc(k->n, sizeof(*pf));
    if (pf == NULL) {
        return false;
    }
    for (size_t i = 0; i < k->n; i++) {
        pf[i].fd = k->pidfd[i];
        pf[i].events = POLLIN;
    }
    if (poll(pf, k->n, 0) < 0) {
        free(pf);
        return false;
    }
    for (size_t i = 0; i < k->n; i++) {
        if (pf[i].revents != 0) {
            close(k->pidfd[i]);
            continue;
        }
        k->pid[w] = k->pid[i];
        k->pidfd[w] = k->pidfd[i];
        w++;
    }
    k->n = w;
    free(pf);
    return true;
}

/* ---------------------------------------------------------------------------
 * Start-up self-check
 * ------------------------------------------------------------------------- */

#define CAP_SYS_PTRACE_BIT 19

bool proxy_ident_privileged(char *why, size_t len)
{
    FILE *f = fopen("/proc/self/status", "re");
    char line[256];
    uint64_t eff = 0;
    bool seen = false;

    if (f == NULL) {
        snprintf(why, len, "cannot read /proc/self/status: %s", strerror(errno));
        return false;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        const char *p = line + 7;
        if (strncmp(line, "CapEff:", 7) != 0) {
            continue;
        }
        while (*p == ' ' || *p == '\t') {
            p++;
        }
        for (; *p != '\0' && *p != '\n'; p++) {
            int d = *p >= '0' && *p <= '9'   ? *p - '0'
                    : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10
                    : *p >= 'A' && *p <= 'F' ? *p - 'A' + 10
                                             : -1;
            if (d < 0 || eff >> 60 != 0) {
                break;
            }
            eff = eff << 4 | (uint64_t)d;
            seen = true;
        }
    }
    fclose(f);
    if (!seen) {
        snprintf(why, len, "no CapEff line in /proc/self/status");
        return false;
    }
    if ((eff >> CAP_SYS_PTRACE_BIT & 1) == 0) {
        snprintf(why, len,
                 "CAP_SYS_PTRACE is not in the effective set (uid %d): the proxy cannot read "
                 "other users' /proc/PID/fd and /proc/PID/exe, so their requests would be "
                 "denied as binary ''",
                 (int)geteuid());
        return false;
    }
    why[0] = '\0';
    return true;
}

size_t proxy_ident_pins(const struct proxy_ident_cache *c)
{
    return c->npins;
}

bool proxy_ident_skips(const struct proxy_ident_cache *c, pid_t pid)
{
    size_t at;

    return kt_find(&c->kt, pid, &at);
}

void proxy_ident_test_kthread(struct proxy_ident_cache *c, pid_t pid)
{
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);

    if (pidfd >= 0) {
        kt_insert(&c->kt, pid, pidfd);
    }
}

/* Add 'pid' to every holder list of 'ino' ('hs' sorted by inode). */
static void note_holder(struct holders *hs, size_t n, unsigned long ino, pid_t pid)
{
    struct holders key = {0};
    struct holders *h;

    key.inode = ino;
    h = bsearch(&key, hs, n, sizeof(*hs), cmp_holders);
    if (h == NULL) {
        return;
    }
    /* several queries may name one inode: add to each */
    while (h > hs && h[-1].inode == ino) {
        h--;
    }
    for (; h < hs + n && h->inode == ino; h++) {
        holders_add(h, pid);
    }
}

/* ---------------------------------------------------------------------------
 * io_uring: a socket registered with a ring (IORING_REGISTER_FILES) stays
 * usable through the ring after its descriptor is closed, so the ring's
 * holder holds it too. The ring's fdinfo lists those files ("UserFiles:",
 * one "N: PATH" line each, a socket's path being socket:[INODE]); the
 * kernel leaves the list out while the ring's lock is taken.
 * ------------------------------------------------------------------------- */

#define RING_LINK "anon_inode:[io_uring]"
#define RING_INFO_MAX (8u << 20)

/* The whole of file 'path' (relative to /proc), NUL-terminated (new
 * string); NULL with errno. */
static char *slurp(int proc, const char *path)
{
    int fd = openat(proc, path, O_RDONLY | O_CLOEXEC);
    char *text;
    size_t len;
    int e;

    if (fd < 0) {
        return NULL;
    }
    e = pv_file_read_fd(fd, RING_INFO_MAX, &text, &len);
    close(fd);
    errno = e;
    return text;
}

/* A link target of 'len' bytes: the inode of "socket:[N]" (false for any
 * other target), and whether it is an io_uring instance. */
static bool socket_link(const char *s, size_t len, uint64_t *ino)
{
    return len >= 10 && memcmp(s, "socket:[", 8) == 0 && s[len - 1] == ']' &&
           pv_ok(pv_parse_u64(s + 8, len - 9, UINT64_MAX, ino));
}

static bool ring_link(const char *s, ssize_t len)
{
    return len == (ssize_t)strlen(RING_LINK) && memcmp(s, RING_LINK, (size_t)len) == 0;
}

/* Note every socket registered with the ring whose fdinfo is 'info'
 * (relative to /proc) as held by 'pid'. False when the list could not be
 * read whole; a ring closed meanwhile holds nothing. */
static bool ring_holders(int proc, const char *info, pid_t pid, struct holders *hs, size_t n)
{
    for (int attempt = 0; attempt < 3; attempt++) {
        char *text = slurp(proc, info);
        const char *p;
        if (text == NULL) {
            return errno == ENOENT || errno == ESRCH;
        }
        p = strstr(text, "\nUserFiles:");
        if (p == NULL) {
            free(text); /* the ring was busy: its list was left out */
            continue;
        }
        p = strchr(p + 1, '\n');
        while (p != NULL) {
            const char *line = p + 1;
            const char *end = strchr(line, '\n');
            const char *q = line;
            uint64_t ino;
            while (*q == ' ' || *q == '\t') {
                q++;
            }
            if (*q < '0' || *q > '9') {
                break; /* the next section (UserBufs:) */
            }
            while (*q >= '0' && *q <= '9') {
                q++;
            }
            if (q[0] == ':' && q[1] == ' ') {
                q += 2;
            }
            if (end != NULL && socket_link(q, (size_t)(end - q), &ino)) {
                note_holder(hs, n, (unsigned long)ino, pid);
            }
            p = end;
        }
        free(text);
        return true;
    }
    return false;
}

/* Read the descriptors in directory 'dir' (relative to /proc) as held by
 * 'pid'. False when the read is incomplete on a live process (read_failed).
 * '*entries': how many it listed, -1 when it could not be opened. */
static bool scan_fds(int proc, const char *dir, const char *pid_name, pid_t pid, struct holders *hs,
                     size_t n, struct dents *fdd, long *entries)
{
    const char *name;
    int err = 0;
    bool complete = true;

    *entries = 0;
    fdd->fd = openat(proc, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    fdd->len = fdd->off = 0;
    if (fdd->fd < 0) {
        *entries = -1;
        return !read_failed(proc, pid_name, errno);
    }
    while ((name = dents_next(fdd, &err)) != NULL) {
        char target[64];
        ssize_t tl;
        uint64_t ino;

        ++*entries;
        /* relative to the open fd directory: no path walk per entry */
        tl = readlinkat(fdd->fd, name, target, sizeof(target));
        if (tl < 0 && (errno == EACCES || errno == EPERM)) {
            /* the access check is the process's, not the descriptor's: every
             * other entry would fail alike (an init the proxy may not
             * inspect has hundreds), so stop reading it */
            break;
        }
        if (tl < 0 && read_failed(proc, pid_name, errno)) {
            complete = false;
        }
        if (ring_link(target, tl)) {
            /* DIR is .../fd: the ring's fdinfo is .../fdinfo/NAME */
            char info[96];
            snprintf(info, sizeof(info), "%.*sfdinfo/%s", (int)(strlen(dir) - 2), dir, name);
            if (!ring_holders(proc, info, pid, hs, n)) {
                complete = false;
            }
            continue;
        }
        if (tl < 0 || tl >= (ssize_t)sizeof(target) || !socket_link(target, (size_t)tl, &ino)) {
            continue;
        }
        note_holder(hs, n, (unsigned long)ino, pid);
    }
    if (err != 0 && read_failed(proc, pid_name, err)) {
        complete = false;
    }
    close(fdd->fd);
    return complete;
}

#define KCMP_FILES_TYPE 2 /* linux/kcmp.h KCMP_FILES */

/* Read one process's descriptors: its fd table (/proc/PID/fd, which is the
 * main thread's) and the table of every thread that does not share it - a
 * thread after unshare(CLONE_FILES), or every thread once the main thread
 * exited (its /proc/PID/fd is then empty). kcmp() tells a shared table
 * apart; when it cannot, the thread's table is read too. False when a read
 * is incomplete on a live process. '*empty': the main table had no entry. */
static bool scan_pid(int proc, const char *pid_name, pid_t pid, struct holders *hs, size_t n,
                     struct dents *fdd, struct dents *tdd, bool *empty)
{
    char dir[64];
    const char *tname;
    struct stat st;
    bool complete;
    long entries;
    long ignored;
    pid_t last = pid;
    int err = 0;

    snprintf(dir, sizeof(dir), "%s/fd", pid_name);
    complete = scan_fds(proc, dir, pid_name, pid, hs, n, fdd, &entries);
    *empty = entries == 0;
    snprintf(dir, sizeof(dir), "%s/task", pid_name);
    /* the task directory's link count is 2 + live threads: a single thread
     * whose table listed entries is the main thread, already read (an
     * exited main thread leaves /proc/PID/fd empty or unreadable, so that
     * case lists the threads) */
    if (entries > 0 && fstatat(proc, dir, &st, 0) == 0 && st.st_nlink == 3) {
        return complete;
    }
    tdd->fd = openat(proc, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    tdd->len = tdd->off = 0;
    if (tdd->fd < 0) {
        return complete && !read_failed(proc, pid_name, errno);
    }
    /* threads sharing a table come together: compare each with the last
     * table read (once the main thread exited, the first thread's) */
    while ((tname = dents_next(tdd, &err)) != NULL) {
        pid_t tid;
        if (!proxy_ident_parse_pid(tname, &tid) || tid == pid ||
            syscall(SYS_kcmp, last, tid, KCMP_FILES_TYPE, 0, 0) == 0) {
            continue;
        }
        snprintf(dir, sizeof(dir), "%s/task/%s/fd", pid_name, tname);
        if (!scan_fds(proc, dir, pid_name, pid, hs, n, fdd, &ignored)) {
            complete = false;
        }
        last = tid;
    }
    if (err != 0 && read_failed(proc, pid_name, err)) {
        complete = false;
    }
    close(tdd->fd);
    return complete;
}

/* Identities computed during one batch, by pid (one instant: a process seen
 * twice in a batch is the same process). */
struct memo {
    pid_t pid[64];
    struct proxy_identity *id[64];
    size_t n;
};

/* The identity of 'pid' (new reference), from the memo when already known. */
static struct proxy_identity *identity_for_pid(struct proxy_ident_cache *c, struct memo *m,
                                               pid_t pid)
{
    struct proxy_identity *id;

    for (size_t i = 0; i < m->n; i++) {
        if (m->pid[i] == pid) {
            return proxy_identity_ref(m->id[i]);
        }
    }
    id = proxy_identity_new();
    if (id == NULL) {
        return NULL;
    }
    proxy_ident_of_pid(c, pid, id);
    if (m->n < PV_ARRAY_LEN(m->pid)) {
        m->pid[m->n] = pid;
        m->id[m->n++] = proxy_identity_ref(id);
    }
    return id;
}

static void memo_clear(struct memo *m)
{
    for (size_t i = 0; i < m->n; i++) {
        proxy_identity_unref(m->id[i]);
    }
    m->n = 0;
}

/* A copy of 'a' that can be changed (new reference). */
static struct proxy_identity *identity_dup(const struct proxy_identity *a)
{
    struct proxy_identity *id = proxy_identity_new();

    if (id == NULL) {
        return NULL;
    }
    id->pid = a->pid;
    id->known = a->known;
    memcpy(id->deny, a->deny, sizeof(id->deny));
    for (size_t i = 0; i < a->n; i++) {
        id->path[i] = pv_strdup(a->path[i]);
        if (id->path[i] == NULL) {
            proxy_identity_unref(id);
            return NULL;
        }
        id->n = i + 1;
    }
    return id;
}

/* The identity of one socket from its complete holder list. */
static struct proxy_identity *identity_of_holders(struct proxy_ident_cache *c, struct memo *m,
                                                  struct holders *h)
{
    struct proxy_identity *id;

    if (h->overflow || h->n == 0) {
        id = proxy_identity_new();
        if (id != NULL && h->overflow) {
            snprintf(id->deny, sizeof(id->deny),
                     "ambiguous shared socket ownership: the holders of inode %lu could not "
                     "all be compared",
                     h->inode);
        }
        return id; /* n == 0: gone, or not a local process: unknown */
    }
    /* lowest pid first, as the reference */
    for (size_t i = 1; i < h->n; i++) {
        for (size_t j = i; j > 0 && h->pids[j] < h->pids[j - 1]; j--) {
            pid_t t = h->pids[j];
            h->pids[j] = h->pids[j - 1];
            h->pids[j - 1] = t;
        }
    }
    id = identity_for_pid(c, m, h->pids[0]);
    for (size_t i = 1; id != NULL && i < h->n && id->deny[0] == '\0'; i++) {
        struct proxy_identity *other = identity_for_pid(c, m, h->pids[i]);
        struct proxy_identity *amb;
        bool same;
        if (other == NULL) {
            proxy_identity_unref(id);
            return NULL;
        }
        same = proxy_identity_same(id, other);
        proxy_identity_unref(other);
        if (same) {
            continue;
        }
        /* the memo's identity is shared: the denial goes on a copy */
        amb = identity_dup(id);
        proxy_identity_unref(id);
        if (amb == NULL) {
            return NULL;
        }
        snprintf(amb->deny, sizeof(amb->deny),
                 "ambiguous shared socket ownership: inode %lu is held by PIDs [%d, %d] "
                 "with different policy identities",
                 h->inode, (int)h->pids[0], (int)h->pids[i]);
        id = amb;
    }
    return id;
}

/* ---------------------------------------------------------------------------
 * Rolling scan
 *
 * Every process is read in laps over /proc (ascending pids). A socket joins
 * the lap in progress at the current position instead of waiting for the
 * next lap, and is resolved once every process has been read after it
 * joined: the rest of the lap it joined (from a fresh listing of /proc, so
 * that processes started before it joined are in it) and the start of the
 * next lap up to where it joined. Each socket waits one lap, not up to two,
 * and one lap serves every socket waiting: a process is read once per lap
 * whatever their number. Holder lists stay complete; a read failure on a
 * live process marks every socket in flight incomplete (deny).
 * ------------------------------------------------------------------------- */

#define ROLL_STEP 16 /* processes read between two looks at new sockets */

static void roll_free(struct roll *r)
{
    if (r->procfd >= 0) {
        close(r->procfd);
    }
    for (size_t i = 0; i < r->nact; i++) {
        free(r->act[i].pids);
    }
    free(r->act);
    free(r->pids);
    free(r->fdd);
    free(r->tdd);
    memset(r, 0, sizeof(*r));
}

/* A fresh listing of /proc; the kernel threads still alive after it may be
 * skipped (kt_prune). False on failure. */
static bool roll_list(struct proxy_ident_cache *c)
{
    struct roll *r = &c->roll;
    struct dents *pd = pv_malloc(sizeof(*pd));
    const char *name;
    int err = 0;
    bool ok = true;

    if (pd == NULL) {
        return false;
    }
    r->npids = 0;
    pd->fd = open(proxy_ident_proc(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    pd->len = pd->off = 0;
    if (pd->fd < 0) {
        free(pd);
        return false;
    }
    while ((name = dents_next(pd, &err)) != NULL) {
        pid_t pid;
        if (!proxy_ident_parse_pid(name, &pid) || pid == c->self) {
            continue;
        }
        if (r->npids == r->pcap) {
            size_t ncap = r->pcap ? r->pcap * 2 : 512;
            pid_t *np = pv_realloc(r->pids, ncap * sizeof(*np));
            if (np == NULL) {
                ok = false;
                break;
            }
            r->pids = np;
            r->pcap = ncap;
        }
        r->pids[r->npids++] = pid;
    }
    close(pd->fd);
    free(pd);
    /* ascending already (procfs lists pids in order); make sure */
    for (size_t i = 1; ok && i < r->npids; i++) {
        if (r->pids[i] <= r->pids[i - 1]) {
            ok = false;
        }
    }
    r->skip_ok = kt_prune(&c->kt);
    return ok && err == 0;
}

static void roll_sort(struct roll *r)
{
    qsort(r->act, r->nact, sizeof(*r->act), cmp_holders);
}

/* Resolve act[i] and remove it (the array stays sorted). */
static void roll_finish(struct proxy_ident_cache *c, struct memo *m, size_t i,
                        proxy_ident_done done, void *arg)
{
    struct roll *r = &c->roll;
    struct holders h = r->act[i];

    memmove(r->act + i, r->act + i + 1, (r->nact - i - 1) * sizeof(*r->act));
    r->nact--;
    done(h.tag, identity_of_holders(c, m, &h), arg);
    free(h.pids);
}

/* Every socket in flight is incomplete (a read failed). */
static void roll_taint(struct roll *r)
{
    for (size_t i = 0; i < r->nact; i++) {
        r->act[i].overflow = true;
    }
}

void proxy_ident_roll_add(struct proxy_ident_cache *c, const struct proxy_ident_query *q, void *tag,
                          proxy_ident_done done, void *arg)
{
    struct roll *r = &c->roll;
    unsigned long inode = proxy_ident_query_inode(c, q);
    struct holders *h;

    if (inode == 0) {
        done(tag, proxy_identity_new(), arg); /* not a local process (or gone): unknown */
        return;
    }
    if (r->nact == r->acap) {
        size_t ncap = r->acap ? r->acap * 2 : 64;
        struct holders *na = pv_realloc(r->act, ncap * sizeof(*na));
        if (na == NULL) {
            done(tag, NULL, arg);
            return;
        }
        r->act = na;
        r->acap = ncap;
    }
    h = &r->act[r->nact++];
    memset(h, 0, sizeof(*h));
    h->inode = inode;
    h->tag = tag;
    if (r->open) {
        h->lap = r->lap;
        h->start = r->cursor;
        r->resnap = true;
    } else {
        h->lap = r->lap + 1; /* the next lap, from its start */
        h->start = 0;
    }
    roll_sort(r);
}

/* Before visiting 'next' (0 = the lap ended): resolve the sockets that have
 * now seen every process once. */
static void roll_complete(struct proxy_ident_cache *c, struct memo *m, pid_t next,
                          proxy_ident_done done, void *arg)
{
    struct roll *r = &c->roll;

    for (size_t i = 0; i < r->nact;) {
        const struct holders *h = &r->act[i];
        bool whole = h->lap == r->lap && h->start == 0 && next == 0;
        bool wrapped = h->lap + 1 == r->lap && h->start != 0 && (next == 0 || next > h->start);
        if (whole || wrapped) {
            roll_finish(c, m, i, done, arg);
        } else {
            i++;
        }
    }
}

pid_t proxy_ident_roll_cursor(const struct proxy_ident_cache *c)
{
    return c->roll.open ? c->roll.cursor : 0;
}

/* With the BPF iterator (proxy_taskfiles.c) a lap is one pass: it starts
 * after every socket in flight joined and visits every task, so each of
 * them is resolved when it ends. A failed pass denies them all. */
struct pass {
    struct holders *hs;
    size_t n;
    pid_t self;
    int proc;
    bool incomplete; /* a ring's list could not be read */
};

static void pass_socket(unsigned long ino, pid_t tgid, pid_t tid, int fd,
                        enum proxy_taskfiles_kind kind, void *arg)
{
    struct pass *x = arg;
    char path[96];
    char target[64];
    ssize_t tl;

    if (tgid == x->self) {
        return;
    }
    switch (kind) {
    case PROXY_TASKFILES_SOCKET:
        note_holder(x->hs, x->n, ino, tgid);
        return;
    case PROXY_TASKFILES_ANON:
        /* an io_uring instance? its registered sockets are held too */
        snprintf(path, sizeof(path), "%d/task/%d/fd/%d", (int)tgid, (int)tid, fd);
        tl = readlinkat(x->proc, path, target, sizeof(target));
        if (tl < 0 && errno != ENOENT && errno != ESRCH) {
            x->incomplete = true;
        }
        if (!ring_link(target, tl)) {
            return;
        }
        snprintf(path, sizeof(path), "%d/task/%d/fdinfo/%d", (int)tgid, (int)tid, fd);
        if (!ring_holders(x->proc, path, tgid, x->hs, x->n)) {
            x->incomplete = true;
        }
        return;
    }
    x->incomplete = true; /* a kind this code does not know */
}

static void roll_pass(struct proxy_ident_cache *c, proxy_ident_done done, void *arg)
{
    struct roll *r = &c->roll;
    struct pass x = {r->act, r->nact, c->self, -1, false};
    struct memo m;

    m.n = 0;
    x.proc = r->procfd;
    if (x.proc < 0 || !proxy_taskfiles_pass(c->tf, pass_socket, &x) || x.incomplete) {
        roll_taint(r);
    }
    while (r->nact > 0) {
        roll_finish(c, &m, r->nact - 1, done, arg);
    }
    memo_clear(&m);
}

bool proxy_ident_roll_step(struct proxy_ident_cache *c, proxy_ident_done done, void *arg)
{
    struct roll *r = &c->roll;
    struct memo m;
    unsigned visited = 0;

    m.n = 0;
    if (r->nact == 0) {
        return false;
    }
    if (r->procfd < 0) {
        r->procfd = open(proxy_ident_proc(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    }
    if (c->tf != NULL) {
        roll_pass(c, done, arg);
        return false;
    }
    if (r->fdd == NULL) {
        r->fdd = pv_malloc(sizeof(*r->fdd));
    }
    if (r->tdd == NULL) {
        r->tdd = pv_malloc(sizeof(*r->tdd));
    }
    {
        if (r->fdd == NULL || r->tdd == NULL || r->procfd < 0) {
            roll_taint(r);
            r->open = false;
            r->lap++;
            roll_complete(c, &m, 0, done, arg);
            memo_clear(&m);
            return r->nact > 0;
        }
    }
    if (!r->open || r->resnap) {
        bool ok;
        if (!r->open) {
            r->open = true;
            r->lap++;
            r->cursor = 0;
        }
        r->resnap = false;
        ok = roll_list(c);
        if (!ok) {
            roll_taint(r);
            r->npids = 0;
        }
        /* continue after the cursor in the fresh listing */
        r->pos = 0;
        while (r->pos < r->npids && r->pids[r->pos] <= r->cursor) {
            r->pos++;
        }
    }
    while (r->pos < r->npids && visited < ROLL_STEP) {
        pid_t pid = r->pids[r->pos];
        char name[16];
        size_t at;
        bool empty;

        roll_complete(c, &m, pid, done, arg);
        if (r->nact == 0) {
            break; /* nobody waits: the lap stops here and resumes on demand */
        }
        r->pos++;
        r->cursor = pid;
        if (r->skip_ok && kt_find(&c->kt, pid, &at)) {
            continue;
        }
        visited++;
        snprintf(name, sizeof(name), "%d", (int)pid);
        if (!scan_pid(r->procfd, name, pid, r->act, r->nact, r->fdd, r->tdd, &empty)) {
            roll_taint(r);
        }
        if (empty) {
            kt_learn(&c->kt, pid); /* no fd at all: perhaps a kernel thread */
        }
    }
    if (r->pos >= r->npids) {
        roll_complete(c, &m, 0, done, arg);
        r->open = false; /* the next lap lists /proc again */
    }
    memo_clear(&m);
    return r->nact > 0;
}

static void batch_done(void *tag, struct proxy_identity *id, void *arg)
{
    struct proxy_ident_query *q = tag;

    (void)arg;
    q->id = id;
}

void proxy_ident_lookup_batch(struct proxy_ident_cache *c, struct proxy_ident_query *q, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        q[i].id = NULL;
        proxy_ident_roll_add(c, &q[i], &q[i], batch_done, NULL);
    }
    while (proxy_ident_roll_step(c, batch_done, NULL)) {
    }
}

struct proxy_identity *proxy_ident_lookup(struct proxy_ident_cache *c, const struct sockaddr *peer,
                                          const struct sockaddr *local)
{
    struct proxy_ident_query q;

    memset(&q, 0, sizeof(q));
    memcpy(&q.peer, peer,
           peer->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in));
    memcpy(&q.local, local,
           local->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in));
    proxy_ident_lookup_batch(c, &q, 1);
    return q.id;
}
