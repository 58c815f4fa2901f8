/* SPDX-License-Identifier: Apache-2.0 */
/* sandbox_landlock.c - filesystem_policy through Landlock
 * (docs/sandbox.md#landlock).
 *
 * The ruleset handles every filesystem right the kernel's ABI knows; a
 * read_only path grants reading and executing, a read_write path every
 * right; /.proviso (the CA and the skill) is readable. From ABI 6 the
 * domain is also scoped: no abstract Unix socket and no signal outside it.
 * The kernel headers of Debian 12 stop at ABI 2, so the later constants are
 * the kernel's fixed values, written here.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/sandbox_int.h"

#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_ABI1 ((1ULL << 13) - 1)      /* EXECUTE .. MAKE_SYM */
#define LL_FS_REFER (1ULL << 13)           /* ABI 2 */
#define LL_FS_TRUNCATE (1ULL << 14)        /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15)       /* ABI 5 */
#define LL_SCOPE_ABSTRACT_UNIX (1ULL << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1)
#define LL_RULE_PATH_BENEATH 1
#define LL_CREATE_VERSION (1U << 0)

/* struct landlock_ruleset_attr as of ABI 6; older kernels read a prefix. */
struct ll_ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
    uint64_t scoped;
};

struct ll_path_beneath {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));

int sandbox_landlock_abi(void)
{
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_VERSION);

    return abi < 0 ? 0 : (int)abi;
}

static uint64_t handled_fs(int abi)
{
    uint64_t fs = LL_FS_ABI1;

    if (abi >= 2) {
        fs |= LL_FS_REFER;
    }
    if (abi >= 3) {
        fs |= LL_FS_TRUNCATE;
    }
    if (abi >= 5) {
        fs |= LL_FS_IOCTL_DEV;
    }
    return fs;
}

/* The rights that apply to a file (not a directory) among 'rights'. */
static uint64_t file_rights(uint64_t rights)
{
    return rights &
           (LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV);
}

static bool add_rule(int ruleset, const char *path, uint64_t rights, char *err, size_t errlen)
{
    struct ll_path_beneath pb;
    int fd = open(path, O_PATH | O_CLOEXEC);
    struct stat st;
    long rc;

    if (fd < 0) {
        return true; /* not in the new root: nothing to grant */
    }
    if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode)) {
        rights = file_rights(rights);
    }
    pb.allowed_access = rights;
    pb.parent_fd = fd;
    rc = syscall(SYS_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &pb, 0);
    close(fd);
    if (rc != 0) {
        snprintf(err, errlen, "landlock: cannot add the rule for %s: %s", path, strerror(errno));
        return false;
    }
    return true;
}

static int make_ruleset(int abi, uint64_t fs)
{
    struct ll_ruleset_attr attr;
    size_t size = sizeof(uint64_t);

    memset(&attr, 0, sizeof(attr));
    attr.handled_access_fs = fs;
    if (abi >= 4) {
        size = 2 * sizeof(uint64_t);
    }
    if (abi >= 6) {
        attr.scoped = LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL;
        size = sizeof(attr);
    }
    return (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
}

bool sandbox_landlock(const struct sandbox_plan *plan, char *err, size_t errlen)
{
    uint64_t fs = handled_fs(plan->landlock_abi);
    uint64_t ro = LL_FS_EXECUTE | LL_FS_READ_FILE | LL_FS_READ_DIR;
    int ruleset;
    bool ok = true;

    if (plan->landlock_abi <= 0) {
        return !plan->landlock_hard; /* the plan warned already */
    }
    ruleset = make_ruleset(plan->landlock_abi, fs);
    if (ruleset < 0) {
        snprintf(err, errlen, "landlock: cannot create the ruleset: %s", strerror(errno));
        return false;
    }
    for (size_t i = 0; ok && i < plan->npaths; i++) {
        const struct sandbox_path *sp = &plan->paths[i];
        ok = add_rule(ruleset, sp->path, sp->write ? fs : ro, err, errlen);
    }
    ok = ok && add_rule(ruleset, SANDBOX_DIR, ro, err, errlen);
    if (ok && syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) {
        snprintf(err, errlen, "landlock: cannot restrict the command: %s", strerror(errno));
        ok = false;
    }
    close(ruleset);
    return ok;
}
