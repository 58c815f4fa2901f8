/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_ident_pid.c - the socket inode of a connection and the identity of one process
 *
 * The half of binary identity (docs/semantics.md#identity) that looks at one
 * process: the client socket's inode (netlink sock_diag exact lookup, falling
 * back to /proc/net/tcp and tcp6), /proc/PID/exe and the PPid chain, and the
 * trust-on-first-use pins (SHA-256 of the running image, recomputed only when
 * the file's fingerprint changes). Which processes hold a socket is decided
 * by proxy_ident.c.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/pv_file.h"
#include "proxy/proxy_ident.h"

/* ---------------------------------------------------------------------------
 * Socket inode
 * ------------------------------------------------------------------------- */

/* Exact sock_diag lookup of the socket whose local end is 'peer' and remote
 * end is 'local'. Returns 0 when not found. */
static unsigned long inode_netlink(struct proxy_ident_cache *c, const struct sockaddr *peer,
                                   const struct sockaddr *local)
{
    struct {
        struct nlmsghdr nlh;
        struct inet_diag_req_v2 r;
    } req;
    union {
        struct nlmsghdr nlh;
        char buf[8192];
    } resp;
    struct sockaddr_nl sa;
    ssize_t n;

    if (c->nl < 0 || peer->sa_family != local->sa_family) {
        return 0;
    }
    memset(&req, 0, sizeof(req));
    req.nlh.nlmsg_len = sizeof(req);
    req.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    req.nlh.nlmsg_flags = NLM_F_REQUEST;
    req.nlh.nlmsg_seq = ++c->nl_seq;
    req.r.sdiag_family = (uint8_t)peer->sa_family;
    req.r.sdiag_protocol = IPPROTO_TCP;
    req.r.idiag_states = ~0u;
    req.r.id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
    req.r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
    if (peer->sa_family == AF_INET) {
        const struct sockaddr_in *p4 = (const struct sockaddr_in *)(const void *)peer;
        const struct sockaddr_in *l4 = (const struct sockaddr_in *)(const void *)local;
        req.r.id.idiag_sport = p4->sin_port;
        req.r.id.idiag_dport = l4->sin_port;
        memcpy(req.r.id.idiag_src, &p4->sin_addr, 4);
        memcpy(req.r.id.idiag_dst, &l4->sin_addr, 4);
    } else if (peer->sa_family == AF_INET6) {
        const struct sockaddr_in6 *p6 = (const struct sockaddr_in6 *)(const void *)peer;
        const struct sockaddr_in6 *l6 = (const struct sockaddr_in6 *)(const void *)local;
        req.r.id.idiag_sport = p6->sin6_port;
        req.r.id.idiag_dport = l6->sin6_port;
        memcpy(req.r.id.idiag_src, &p6->sin6_addr, 16);
        memcpy(req.r.id.idiag_dst, &l6->sin6_addr, 16);
    } else {
        return 0;
    }
    memset(&sa, 0, sizeof(sa));
    sa.nl_family = AF_NETLINK;
    if (sendto(c->nl, &req, sizeof(req), 0, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        return 0;
    }
    n = recv(c->nl, &resp, sizeof(resp), 0);
    if (n < (ssize_t)sizeof(struct nlmsghdr)) {
        return 0;
    }
    for (size_t off = 0; off + sizeof(struct nlmsghdr) <= (size_t)n;) {
        struct nlmsghdr h;
        struct inet_diag_msg m;

        memcpy(&h, resp.buf + off, sizeof(h));
        if (h.nlmsg_type != SOCK_DIAG_BY_FAMILY || h.nlmsg_seq != req.nlh.nlmsg_seq ||
            h.nlmsg_len < NLMSG_LENGTH(sizeof(struct inet_diag_msg)) ||
            h.nlmsg_len > (size_t)n - off) {
            return 0; /* an error, or an answer to another question: use /proc */
        }
        memcpy(&m, resp.buf + off + NLMSG_HDRLEN, sizeof(m));
        if (m.id.idiag_sport == req.r.id.idiag_sport && m.id.idiag_dport == req.r.id.idiag_dport &&
            memcmp(m.id.idiag_src, req.r.id.idiag_src, sizeof(m.id.idiag_src)) == 0 &&
            memcmp(m.id.idiag_dst, req.r.id.idiag_dst, sizeof(m.id.idiag_dst)) == 0) {
            return m.idiag_inode;
        }
        off += NLMSG_ALIGN(h.nlmsg_len);
    }
    return 0;
}

/* The /proc/net/tcp text form of an address: 32-bit words in host order. */
static void proc_addr(const struct sockaddr *sa, char *out, size_t outlen)
{
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *s4 = (const struct sockaddr_in *)(const void *)sa;
        uint32_t w;
        memcpy(&w, &s4->sin_addr, 4);
        snprintf(out, outlen, "%08X:%04X", w, (unsigned)ntohs(s4->sin_port));
    } else {
        const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)(const void *)sa;
        uint32_t w[4];
        memcpy(w, &s6->sin6_addr, 16);
        snprintf(out, outlen, "%08X%08X%08X%08X:%04X", w[0], w[1], w[2], w[3],
                 (unsigned)ntohs(s6->sin6_port));
    }
}

/* Field 'k' (0-based, whitespace separated) of 'line'. */
static bool field(const char *line, unsigned k, const char **f, size_t *flen)
{
    const char *p = line;

    for (unsigned i = 0;; i++) {
        while (*p == ' ' || *p == '\t') {
            p++;
        }
        if (*p == '\0' || *p == '\n') {
            return false;
        }
        const char *s = p;
        while (*p != '\0' && *p != ' ' && *p != '\t' && *p != '\n') {
            p++;
        }
        if (i == k) {
            *f = s;
            *flen = (size_t)(p - s);
            return true;
        }
    }
}

static unsigned long inode_procfs(const char *file, const struct sockaddr *peer,
                                  const struct sockaddr *local)
{
    char want_l[64];
    char want_r[64];
    FILE *f;
    char *line = NULL;
    size_t cap = 0;
    unsigned long inode = 0;

    proc_addr(peer, want_l, sizeof(want_l));
    proc_addr(local, want_r, sizeof(want_r));
    f = fopen(file, "re");
    if (f == NULL) {
        return 0;
    }
    while (getline(&line, &cap, f) > 0) {
        const char *a;
        const char *b;
        const char *ino;
        size_t al;
        size_t bl;
        size_t il;
        uint64_t v;

        if (!field(line, 1, &a, &al) || !field(line, 2, &b, &bl) || al != strlen(want_l) ||
            bl != strlen(want_r) || memcmp(a, want_l, al) != 0 || memcmp(b, want_r, bl) != 0 ||
            !field(line, 9, &ino, &il)) {
            continue;
        }
        if (pv_ok(pv_parse_u64(ino, il, UINT64_MAX, &v)) && v != 0) {
            inode = (unsigned long)v;
            break;
        }
    }
    free(line);
    fclose(f);
    return inode;
}

/* ---------------------------------------------------------------------------
 * Processes
 * ------------------------------------------------------------------------- */

bool proxy_ident_parse_pid(const char *s, pid_t *pid)
{
    uint64_t v;

    if (!pv_ok(pv_parse_u64(s, strlen(s), 0x7FFFFFFF, &v)) || v == 0) {
        return false;
    }
    *pid = (pid_t)v;
    return true;
}

static char proc_root[PATH_MAX] = "/proc";
static bool proc_foreign;

bool proxy_ident_set_proc(const char *root)
{
    struct stat st;

    if (stat(root, &st) != 0 || !S_ISDIR(st.st_mode) ||
        (size_t)snprintf(proc_root, sizeof(proc_root), "%s", root) >= sizeof(proc_root)) {
        return false;
    }
    proc_foreign = true;
    return true;
}

const char *proxy_ident_proc(void)
{
    return proc_root;
}

bool proxy_ident_proc_foreign(void)
{
    return proc_foreign;
}

/* Field 'k' (4 = ppid, 9 = flags; k >= 3) of /proc/PID/stat, after the comm. */
bool proxy_ident_stat_field(pid_t pid, unsigned k, uint64_t *out)
{
    char p[PATH_MAX + 32];
    char buf[1024];
    ssize_t n;
    int fd;
    char *rp;
    char *s;
    char *e;

    snprintf(p, sizeof(p), "%s/%d/stat", proc_root, (int)pid);
    fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return false;
    }
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0) {
        return false;
    }
    buf[n] = '\0';
    rp = strrchr(buf, ')');
    if (rp == NULL || rp[1] != ' ') {
        return false;
    }
    s = rp + 2; /* field 3, the state */
    for (unsigned i = 3; i < k; i++) {
        s = strchr(s, ' ');
        if (s == NULL) {
            return false;
        }
        s++;
    }
    e = strchr(s, ' ');
    if (e == NULL) {
        e = s + strlen(s);
    }
    return pv_ok(pv_parse_u64(s, (size_t)(e - s), UINT64_MAX, out));
}

/* The parent of 'pid' from /proc/PID/stat. */
static bool parent_of(pid_t pid, pid_t *ppid)
{
    uint64_t v;

    if (!proxy_ident_stat_field(pid, 4, &v) || v > 0x7FFFFFFF) {
        return false;
    }
    *ppid = (pid_t)v;
    return true;
}

/* readlink /proc/PID/exe; a " (deleted)" suffix is dropped only when no file
 * of the longer name exists. New string or NULL. NULL too (no identity) for
 * an image that is no file (a memfd's "/memfd:NAME", whose NAME the process
 * chose: "x/curl" would match a "**" + "/curl" pattern) and for a path with
 * a control character (a newline in a name the command chose would forge
 * a decision line). */
static char *exe_of(pid_t pid)
{
    char p[PATH_MAX + 32];
    char buf[4096];
    ssize_t n;
    static const char del[] = " (deleted)";
    size_t dl = sizeof(del) - 1;

    snprintf(p, sizeof(p), "%s/%d/exe", proc_root, (int)pid);
    n = readlink(p, buf, sizeof(buf) - 1);
    if (n <= 0 || (size_t)n == sizeof(buf) - 1) {
        return NULL; /* unreadable, or possibly truncated: a prefix never grants */
    }
    buf[n] = '\0';
    if (buf[0] != '/' || strncmp(buf, "/memfd:", 7) == 0) {
        return NULL;
    }
    for (ssize_t i = 0; i < n; i++) {
        if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f) {
            return NULL;
        }
    }
    if ((size_t)n > dl && memcmp(buf + n - dl, del, dl) == 0 && access(buf, F_OK) != 0) {
        buf[n - (ssize_t)dl] = '\0';
    }
    return pv_strdup(buf);
}

/* ---------------------------------------------------------------------------
 * TOFU pins
 * ------------------------------------------------------------------------- */

static bool sha256_fd(int fd, unsigned char out[32])
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    unsigned char buf[65536];
    unsigned int olen = 0;
    bool ok;
    ssize_t n;

    if (ctx == NULL || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
        EVP_MD_CTX_free(ctx);
        return false;
    }
    for (;;) {
        n = read(fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        if (EVP_DigestUpdate(ctx, buf, (size_t)n) != 1) {
            n = -1;
            break;
        }
    }
    ok = n == 0 && EVP_DigestFinal_ex(ctx, out, &olen) == 1 && olen == 32;
    EVP_MD_CTX_free(ctx);
    return ok;
}

static bool same_print(const struct pin *p, const struct stat *st)
{
    return p->dev == st->st_dev && p->ino == st->st_ino && p->size == st->st_size &&
           p->mtime.tv_sec == st->st_mtim.tv_sec && p->mtime.tv_nsec == st->st_mtim.tv_nsec &&
           p->ctime.tv_sec == st->st_ctim.tv_sec && p->ctime.tv_nsec == st->st_ctim.tv_nsec;
}

static void set_print(struct pin *p, const struct stat *st)
{
    p->dev = st->st_dev;
    p->ino = st->st_ino;
    p->size = st->st_size;
    p->mtime = st->st_mtim;
    p->ctime = st->st_ctim;
}

enum pin_result { PIN_OK, PIN_DENY, PIN_GONE };

/* Whether /proc/PID/exe still names 'path'. */
static bool exe_named(pid_t pid, const char *path)
{
    char *now = exe_of(pid);
    bool same = now != NULL && strcmp(now, path) == 0;

    free(now);
    return same;
}

/* Verify (or pin) the image of 'pid' known as 'path'. PIN_DENY writes the
 * deny reason. PIN_GONE: the image could not be opened and /proc/PID/exe no
 * longer names it (the thread group's leader exited between the readlink and
 * the open, or the process did): the same as an unreadable exe, no identity
 * and no integrity verdict. */
static enum pin_result verify_pin(struct proxy_ident_cache *c, pid_t pid, const char *path,
                                  char *deny, size_t dlen)
{
    char p[PATH_MAX + 32];
    struct stat st;
    unsigned char sha[32];
    struct pin *pin = NULL;
    int fd;

    for (size_t i = 0; i < c->npins; i++) {
        if (strcmp(c->pins[i].path, path) == 0) {
            pin = &c->pins[i];
            break;
        }
    }
    snprintf(p, sizeof(p), "%s/%d/exe", proc_root, (int)pid);
    fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) != 0) {
        if (fd >= 0) {
            close(fd);
        }
        if (!exe_named(pid, path)) {
            return PIN_GONE;
        }
        snprintf(deny, dlen, "binary integrity check failed: cannot read %s", path);
        return PIN_DENY;
    }
    if (pin != NULL && same_print(pin, &st)) {
        close(fd);
        return PIN_OK;
    }
    if (!sha256_fd(fd, sha)) {
        close(fd);
        snprintf(deny, dlen, "binary integrity check failed: cannot hash %s", path);
        return PIN_DENY;
    }
    close(fd);
    if (pin != NULL) {
        if (memcmp(pin->sha, sha, 32) != 0) {
            snprintf(deny, dlen,
                     "binary integrity check failed: Binary integrity violation: %s changed "
                     "since it was first seen (SHA-256 pin mismatch)",
                     path);
            return PIN_DENY;
        }
        set_print(pin, &st);
        return PIN_OK;
    }
    if (c->npins == c->cap) {
        size_t ncap = c->cap ? c->cap * 2 : 16;
        struct pin *n = pv_realloc(c->pins, ncap * sizeof(*n));
        if (n == NULL) {
            snprintf(deny, dlen, "binary integrity check failed: out of memory");
            return PIN_DENY;
        }
        c->pins = n;
        c->cap = ncap;
    }
    pin = &c->pins[c->npins];
    pin->path = pv_strdup(path);
    if (pin->path == NULL) {
        snprintf(deny, dlen, "binary integrity check failed: out of memory");
        return PIN_DENY;
    }
    memcpy(pin->sha, sha, 32);
    set_print(pin, &st);
    c->npins++;
    return PIN_OK;
}

/* ---------------------------------------------------------------------------
 * Lookup
 * ------------------------------------------------------------------------- */

static bool add_path(struct proxy_identity *id, char *path)
{
    for (size_t i = 0; i < id->n; i++) {
        if (strcmp(id->path[i], path) == 0) {
            free(path);
            return true;
        }
    }
    if (id->n == MODEL_MAX_IDENTITY) {
        free(path);
        return false;
    }
    id->path[id->n++] = path;
    return true;
}

/* Fill 'id' from process 'pid': its exe (verified) then its ancestors. */
void proxy_ident_of_pid(struct proxy_ident_cache *c, pid_t pid, struct proxy_identity *id)
{
    char *exe = exe_of(pid);
    pid_t cur = pid;

    id->pid = pid;
    if (exe == NULL) {
        return; /* unknown: no binary can match */
    }
    switch (verify_pin(c, pid, exe, id->deny, sizeof(id->deny))) {
    case PIN_OK:
        break;
    case PIN_GONE:
        free(exe);
        return; /* unknown, as when exe_of found nothing */
    case PIN_DENY:
        free(exe);
        return;
    }
    id->known = true;
    (void)add_path(id, exe);
    for (int hop = 0; hop < MAX_HOPS; hop++) {
        pid_t parent;
        char *pexe;

        if (!parent_of(cur, &parent) || parent <= 0 || parent == cur) {
            break;
        }
        if (parent == 1 && proc_foreign) {
            break; /* a sandbox's init (proviso) is every process's ancestor: nobody's identity */
        }
        cur = parent;
        pexe = exe_of(cur);
        if (pexe == NULL) {
            continue; /* unreadable ancestor: it simply grants nothing */
        }
        switch (verify_pin(c, cur, pexe, id->deny, sizeof(id->deny))) {
        case PIN_OK:
            break;
        case PIN_GONE:
            free(pexe);
            continue; /* as an unreadable ancestor */
        case PIN_DENY:
            free(pexe);
            return;
        }
        if (!add_path(id, pexe)) {
            break;
        }
        if (cur == 1) {
            break;
        }
    }
}

bool proxy_identity_same(const struct proxy_identity *a, const struct proxy_identity *b)
{
    if (a->n != b->n || a->known != b->known || strcmp(a->deny, b->deny) != 0) {
        return false;
    }
    for (size_t i = 0; i < a->n; i++) {
        if (strcmp(a->path[i], b->path[i]) != 0) {
            return false;
        }
    }
    return true;
}

struct proxy_identity *proxy_identity_new(void)
{
    struct proxy_identity *id = pv_calloc(1, sizeof(*id));

    if (id != NULL) {
        id->refs = 1;
    }
    return id;
}

/* The socket inode of a query, 0 when the peer is no local TCP socket. */
unsigned long proxy_ident_query_inode(struct proxy_ident_cache *c,
                                      const struct proxy_ident_query *q)
{
    const struct sockaddr *peer = (const struct sockaddr *)&q->peer;
    const struct sockaddr *local = (const struct sockaddr *)&q->local;
    unsigned long inode = inode_netlink(c, peer, local);

    if (inode == 0) {
        char p[PATH_MAX + 32];
        snprintf(p, sizeof(p), "%s/%s/tcp%s", proc_root, proc_foreign ? "1/net" : "net",
                 peer->sa_family == AF_INET6 ? "6" : "");
        inode = inode_procfs(p, peer, local);
    }
    return inode;
}
