/* SPDX-License-Identifier: Apache-2.0 */
/* sandbox_root.c - the sandbox's network and filesystem, built by its init
 * (PID 1 of the new PID namespace, still root) before the command starts
 * (docs/sandbox.md#root).
 *
 * Network: the namespace is new, so it holds only a loopback interface,
 * down; it is brought up, and nothing else will ever exist in it. The
 * proxy's listening socket is made in it from outside (proviso-proxy
 * --sandbox-init).
 *
 * Filesystem: a new root, a tmpfs, holding only the policy's paths, each a
 * bind mount of the host's (read_only ones read-only), nosuid, nodev but
 * for device nodes; the host root's top-level symbolic links (/bin ->
 * usr/bin on Debian); a procfs of the new PID namespace that hides other
 * users' processes (a policy's /proc path grants access to it: the host's
 * /proc is never mounted); /.proviso (the CA and the skill, readable) and
 * /.proviso-proxy (the proxy's data, root's alone). Every source is opened
 * (O_PATH) in the host's root before anything is mounted, and the new root
 * is assembled off the host's tree (BASE, OLD, STAGE below); a final
 * pivot_root(".", ".") then detaches the host's root: paths outside the
 * policy do not exist inside, whatever their permissions (a Unix socket
 * there cannot be reached).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/openat2.h>
#include <unistd.h>

#include "sandbox/sandbox_int.h"

#ifndef MOUNT_ATTR_RDONLY
#define MOUNT_ATTR_RDONLY 0x00000001
#define MOUNT_ATTR_NOSUID 0x00000002
#define MOUNT_ATTR_NODEV 0x00000004
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif

/* A scratch tmpfs is mounted on BASE (a directory every Debian host has)
 * and made the root, the host's root moving to OLD under it, so that no
 * source path's tree contains what is being built (a recursive bind of the
 * host's /tmp would otherwise copy the scratch tmpfs mounted on it). The
 * new root is a second tmpfs at NEW; its sources are the descriptors
 * opened in the host's root before (through OLD's /proc), so symbolic
 * links in a policy path resolve as on the host. */
#define BASE "/tmp"
#define OLD "/.old"
#define STAGE "/new"

struct mount_attr_v0 {
    unsigned long long attr_set;
    unsigned long long attr_clr;
    unsigned long long propagation;
    unsigned long long userns_fd;
};

static bool fail(char *err, size_t errlen, const char *what, const char *path)
{
    snprintf(err, errlen, "%s %s: %s", what, path, strerror(errno));
    return false;
}

static bool loopback_up(char *err, size_t errlen)
{
    struct ifreq ifr;
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    bool ok;

    if (fd < 0) {
        return fail(err, errlen, "socket for", "lo");
    }
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
    ok = ioctl(fd, SIOCGIFFLAGS, &ifr) == 0;
    if (ok) {
        ifr.ifr_flags = (short)(ifr.ifr_flags | IFF_UP | IFF_RUNNING);
        ok = ioctl(fd, SIOCSIFFLAGS, &ifr) == 0;
    }
    close(fd);
    return ok || fail(err, errlen, "cannot bring up", "lo");
}

/* One step of a mount point's path under the new root: the directory or
 * (last, !dir) the file NAME in 'at', made when missing, never through a
 * symbolic link (a read_write path's content is the command's to shape).
 * An O_PATH descriptor, or -1. */
static int step(int at, const char *name, bool dir)
{
    struct stat st;
    int fd = openat(at, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);

    if (fd < 0 && errno == ENOENT) {
        if (dir) {
            (void)mkdirat(at, name, 0755);
        } else {
            int w = openat(at, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
            if (w >= 0) {
                close(w);
            }
        }
        fd = openat(at, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    }
    if (fd >= 0 && (fstat(fd, &st) != 0 || S_ISLNK(st.st_mode) || S_ISDIR(st.st_mode) != dir)) {
        close(fd);
        errno = ELOOP;
        return -1;
    }
    return fd;
}

/* The mount point of 'path' under STAGE, walked one component at a time
 * without following a symbolic link: an O_PATH descriptor, or -1. */
static int mount_point(const char *path, bool dir)
{
    char buf[PATH_MAX];
    char *save = NULL;
    int cur = open(STAGE, O_PATH | O_DIRECTORY | O_CLOEXEC);

    snprintf(buf, sizeof(buf), "%s", path);
    for (char *c = strtok_r(buf, "/", &save); cur >= 0 && c != NULL;) {
        char *next = strtok_r(NULL, "/", &save);
        int fd = step(cur, c, next != NULL || dir);
        close(cur);
        cur = fd;
        c = next;
    }
    return cur;
}

static bool set_attr(int fd, unsigned long long set)
{
    struct mount_attr_v0 attr;

    memset(&attr, 0, sizeof(attr));
    attr.attr_set = set;
    return syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof(attr)) ==
           0;
}

/* Bind one path of the plan from its O_PATH descriptor onto its mount
 * point, both named through /proc/self/fd (no path is walked again). */
static bool bind_path(const struct sandbox_path *sp, int src, char *err, size_t errlen)
{
    char from[64];
    char to[64];
    unsigned long long attr = MOUNT_ATTR_NOSUID;
    int tfd = mount_point(sp->path, sp->dir);
    bool ok;

    if (tfd < 0) {
        return fail(err, errlen, "cannot make the mount point (never through a symbolic link) for",
                    sp->path);
    }
    snprintf(from, sizeof(from), OLD "/proc/self/fd/%d", src);
    snprintf(to, sizeof(to), OLD "/proc/self/fd/%d", tfd);
    ok = mount(from, to, NULL, MS_BIND | MS_REC, NULL) == 0;
    close(tfd);
    if (!ok) {
        return fail(err, errlen, "cannot bind", sp->path);
    }
    if (!sp->dev) {
        attr |= MOUNT_ATTR_NODEV;
    }
    if (!sp->write) {
        attr |= MOUNT_ATTR_RDONLY;
    }
    tfd = mount_point(sp->path, sp->dir); /* now the mount itself */
    ok = tfd >= 0 && set_attr(tfd, attr);
    if (tfd >= 0) {
        close(tfd);
    }
    return ok || fail(err, errlen, "cannot make read-only/nosuid", sp->path);
}

/* The host root's top-level symbolic links (merged /usr: /bin, /lib64, ...)
 * so that programs and their interpreters are found under the policy's
 * paths exactly as on the host. */
static void mirror_links(int rootfd)
{
    DIR *d = fdopendir(rootfd);
    const struct dirent *e;

    if (d == NULL) {
        close(rootfd);
        return;
    }
    while ((e = readdir(d)) != NULL) {
        char to[PATH_MAX];
        char at[PATH_MAX + 16];
        ssize_t n;
        if (e->d_type != DT_LNK) {
            continue;
        }
        n = readlinkat(dirfd(d), e->d_name, to, sizeof(to) - 1);
        if (n <= 0) {
            continue;
        }
        to[n] = '\0';
        snprintf(at, sizeof(at), STAGE "/%s", e->d_name);
        if (symlink(to, at) != 0 && errno != EEXIST) {
            continue; /* best effort: the link only helps programs find files */
        }
    }
    closedir(d);
}

/* A path nested in a read_write one is the command's to shape (an earlier
 * run may have made a component a link to /, or a process of another
 * sandbox may swap one in while this one starts): it is opened without
 * following any symbolic link, in one call (openat2), so no check can be
 * raced. Other paths are root's, and follow their links (/lib on Debian). */
static int open_source(const struct sandbox_path *sp)
{
    struct open_how how;

    if (!sp->nested) {
        return open(sp->path, O_PATH | O_CLOEXEC);
    }
    memset(&how, 0, sizeof(how));
    how.flags = O_PATH | O_CLOEXEC;
    how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    return (int)syscall(SYS_openat2, AT_FDCWD, sp->path, &how, sizeof(how));
}

/* /tmp is the sandbox's own tmpfs (sticky, like any /tmp): the host's
 * holds other programs' sockets and files. */
static bool private_tmp(char *err, size_t errlen)
{
    int tfd = mount_point("/tmp", true);
    char to[64];
    bool ok;

    if (tfd < 0) {
        return fail(err, errlen, "cannot make the mount point for", "/tmp");
    }
    snprintf(to, sizeof(to), OLD "/proc/self/fd/%d", tfd);
    ok = mount("tmpfs", to, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=25%") == 0;
    close(tfd);
    return ok || fail(err, errlen, "cannot mount a tmpfs on", "/tmp");
}

static bool open_sources(const struct sandbox_plan *plan, int *fds, char *err, size_t errlen)
{
    for (size_t i = 0; i < plan->npaths; i++) {
        if (plan->paths[i].tmp || plan->paths[i].proc) {
            continue; /* the sandbox's own */
        }
        fds[i] = open_source(&plan->paths[i]);
        if (fds[i] < 0) {
            return fail(err, errlen, "cannot open", plan->paths[i].path);
        }
    }
    return true;
}

static bool own_dirs(char *err, size_t errlen)
{
    if (mkdir(STAGE SANDBOX_DIR, 0755) != 0 || mkdir(STAGE SANDBOX_PROXY_DIR, 0700) != 0 ||
        (mkdir(STAGE "/proc", 0555) != 0 && errno != EEXIST)) {
        return fail(err, errlen, "cannot make", "the sandbox's own directories");
    }
    if (mount("proc", STAGE "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
              "hidepid=invisible") != 0) {
        return fail(err, errlen, "cannot mount", "/proc");
    }
    return true;
}

static bool scratch(char *err, size_t errlen)
{
    if (mount("tmpfs", BASE, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700,size=64k") != 0) {
        return fail(err, errlen, "cannot mount the scratch root on", BASE);
    }
    if (mkdir(BASE OLD, 0700) != 0 || chdir(BASE) != 0 ||
        syscall(SYS_pivot_root, ".", "." OLD) != 0 || chdir("/") != 0) {
        return fail(err, errlen, "cannot pivot into", "the scratch root");
    }
    if (mkdir(STAGE, 0755) != 0 ||
        mount("tmpfs", STAGE, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=16m") != 0) {
        return fail(err, errlen, "cannot mount the new root on", STAGE);
    }
    return true;
}

static bool build(const struct sandbox_plan *plan, int *fds, int rootfd, char *err, size_t errlen)
{
    if (!scratch(err, errlen)) {
        close(rootfd);
        return false;
    }
    for (size_t i = 0; i < plan->npaths; i++) {
        const struct sandbox_path *sp = &plan->paths[i];
        bool ok =
            sp->proc || (sp->tmp ? private_tmp(err, errlen) : bind_path(sp, fds[i], err, errlen));
        if (!ok) {
            close(rootfd);
            return false;
        }
    }
    mirror_links(rootfd);
    if (!own_dirs(err, errlen)) {
        return false;
    }
    if (chdir(STAGE) != 0 || syscall(SYS_pivot_root, ".", ".") != 0 ||
        umount2(".", MNT_DETACH) != 0 || chdir("/") != 0) {
        return fail(err, errlen, "cannot pivot into", "the new root");
    }
    return true;
}

bool sandbox_root_build(const struct sandbox_plan *plan, char *err, size_t errlen)
{
    int fds[SANDBOX_PATHS_MAX];
    int rootfd;
    bool ok;

    if (!loopback_up(err, errlen)) {
        return false;
    }
    if (sethostname(plan->hostname, strlen(plan->hostname)) != 0) {
        return fail(err, errlen, "cannot set the host name", plan->hostname);
    }
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
        return fail(err, errlen, "cannot make the mounts private under", "/");
    }
    for (size_t i = 0; i < plan->npaths; i++) {
        fds[i] = -1;
    }
    rootfd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (rootfd < 0) {
        return fail(err, errlen, "cannot open", "/");
    }
    ok = open_sources(plan, fds, err, errlen) && build(plan, fds, rootfd, err, errlen);
    for (size_t i = 0; i < plan->npaths; i++) {
        if (fds[i] >= 0) {
            close(fds[i]);
        }
    }
    return ok;
}
