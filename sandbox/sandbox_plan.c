/* SPDX-License-Identifier: Apache-2.0 */
/* sandbox_plan.c - from a policy's filesystem_policy, landlock and process
 * sections to what the sandbox does (docs/sandbox.md#plan).
 *
 * Every decision that can fail is taken here, before a namespace exists:
 * the user (never root), the paths (missing ones are skipped with a
 * warning, as the reference's best_effort does), the kernel's Landlock,
 * and the binaries the policy names (none may lie where the command can
 * write: it could put its own program there and take that identity).
 */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/pv.h"
#include "sandbox/sandbox_int.h"

/* The schema's restrictive default (the reference's
 * restrictive_default_policy) when filesystem_policy is absent. */
static const char *const default_ro[] = {"/usr", "/lib", "/proc",   "/dev/urandom",
                                         "/app", "/etc", "/var/log"};
static const char *const default_rw[] = {"/tmp", "/dev/null"};

static void real_dir(const char *dir, char *out, size_t len);

static bool identity_id(const char *s, unsigned long *out)
{
    char *end = NULL;

    if (s == NULL || *s < '0' || *s > '9') {
        return false;
    }
    errno = 0;
    *out = strtoul(s, &end, 10);
    return errno == 0 && end != NULL && *end == '\0';
}

/* process.run_as_user / run_as_group: "sandbox" (the schema's default) or a
 * number; never 0. */
static bool plan_user(const struct model_sandbox_spec *spec, struct sandbox_plan *plan, char *err,
                      size_t errlen)
{
    const char *user = spec->run_as_user != NULL ? spec->run_as_user : "sandbox";
    const char *group = spec->run_as_group;
    unsigned long n;
    const struct passwd *pw = NULL;

    snprintf(plan->user, sizeof(plan->user), "%s", user);
    if (identity_id(user, &n)) {
        plan->uid = (uid_t)n;
        plan->gid = (gid_t)n;
        pw = getpwuid(plan->uid);
    } else {
        pw = getpwnam(user);
        if (pw == NULL) {
            snprintf(err, errlen,
                     "process.run_as_user '%s': no such user on this host (create it: useradd "
                     "--system --user-group --home-dir /sandbox --shell /usr/sbin/nologin %s; or "
                     "name a numeric UID)",
                     user, user);
            return false;
        }
        plan->uid = pw->pw_uid;
    }
    if (pw != NULL) {
        plan->gid = pw->pw_gid;
        snprintf(plan->home, sizeof(plan->home), "%s", pw->pw_dir);
    }
    if (group != NULL) {
        if (identity_id(group, &n)) {
            plan->gid = (gid_t)n;
        } else {
            const struct group *gr = getgrnam(group);
            if (gr == NULL) {
                snprintf(err, errlen, "process.run_as_group '%s': no such group on this host",
                         group);
                return false;
            }
            plan->gid = gr->gr_gid;
        }
    }
    if (plan->uid == 0 || plan->gid == 0) {
        snprintf(err, errlen,
                 "the command would run as root (uid %lu, gid %lu): a sandbox never does",
                 (unsigned long)plan->uid, (unsigned long)plan->gid);
        return false;
    }
    return true;
}

static bool under(const char *path, const char *dir)
{
    size_t n = strlen(dir);

    if (n == 1 && dir[0] == '/') {
        return path[0] == '/';
    }
    return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static struct sandbox_path *find_path(struct sandbox_plan *plan, const char *path)
{
    for (size_t i = 0; i < plan->npaths; i++) {
        if (strcmp(plan->paths[i].path, path) == 0) {
            return &plan->paths[i];
        }
    }
    return NULL;
}

/* A policy path is walked by root, on the host, to be bound into the
 * sandbox: a symbolic link in it must be root's (one the command made in a
 * read_write path in an earlier run, "cache -> ../../..", would bind the
 * host's root). */
static bool links_owned_by_root(const char *path, char *err, size_t errlen)
{
    char buf[PATH_MAX];
    struct stat st;

    snprintf(buf, sizeof(buf), "%s", path);
    for (char *s = buf + 1;; s++) {
        bool end = *s == '\0';
        if (*s == '/' || end) {
            *s = '\0';
            if (lstat(buf, &st) == 0 && S_ISLNK(st.st_mode) && st.st_uid != 0) {
                snprintf(err, errlen,
                         "filesystem_policy path %s: %s is a symbolic link owned by uid %lu "
                         "(the command may have made it); remove it or name the target",
                         path, buf, (unsigned long)st.st_uid);
                return false;
            }
            if (end) {
                return true;
            }
            *s = '/';
        }
    }
}

/* Add one path; a missing one is skipped with a warning. */
static bool add_path(struct sandbox_plan *plan, const char *path, bool write, char *err,
                     size_t errlen)
{
    struct stat st;
    struct sandbox_path *sp = find_path(plan, path);

    if (sp != NULL) {
        sp->write = (sp->write || write) && !sp->proc;
        return true;
    }
    if (strcmp(path, "/") == 0) {
        snprintf(err, errlen,
                 "filesystem_policy: '/' cannot be a sandbox path (it would hide nothing); list "
                 "the directories the command needs");
        return false;
    }
    if (!links_owned_by_root(path, err, errlen)) {
        return false;
    }
    if (stat(path, &st) != 0) {
        fprintf(stderr, "proviso: sandbox: %s path %s: %s (skipped)\n",
                write ? "read_write" : "read_only", path, strerror(errno));
        return true;
    }
    if (plan->npaths == SANDBOX_PATHS_MAX) {
        snprintf(err, errlen, "filesystem_policy: more than %d paths", SANDBOX_PATHS_MAX);
        return false;
    }
    sp = &plan->paths[plan->npaths++];
    memset(sp, 0, sizeof(*sp));
    snprintf(sp->path, sizeof(sp->path), "%s", path);
    if (realpath(path, sp->real) == NULL) {
        snprintf(sp->real, sizeof(sp->real), "%s", path);
    }
    sp->write = write;
    sp->dir = S_ISDIR(st.st_mode);
    sp->dev = S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode);
    sp->proc = under(path, "/proc");
    sp->tmp = strcmp(path, "/tmp") == 0;
    if (sp->proc) {
        sp->write = false; /* /proc/PID/mem of a policy binary would be its identity */
    }
    return true;
}

static int by_length(const void *a, const void *b)
{
    size_t la = strlen(((const struct sandbox_path *)a)->path);
    size_t lb = strlen(((const struct sandbox_path *)b)->path);

    return la < lb ? -1 : la > lb;
}

static bool plan_paths(const struct model_policy *p, const struct model_sandbox_spec *spec,
                       const struct sandbox_opts *o, struct sandbox_plan *plan, char *err,
                       size_t errlen)
{
    bool workdir = spec->has_fs ? spec->include_workdir : true;
    char cwd[PATH_MAX];

    for (size_t i = 0; !spec->has_fs && i < PV_ARRAY_LEN(default_ro); i++) {
        (void)add_path(plan, default_ro[i], false, err, errlen); /* never fails */
    }
    for (size_t i = 0; !spec->has_fs && i < PV_ARRAY_LEN(default_rw); i++) {
        (void)add_path(plan, default_rw[i], true, err, errlen);
    }
    for (size_t i = 0; i < spec->nread_only; i++) {
        if (!add_path(plan, model_policy_fs_path(p, false, i), false, err, errlen)) {
            return false;
        }
    }
    for (size_t i = 0; i < spec->nread_write; i++) {
        if (!add_path(plan, model_policy_fs_path(p, true, i), true, err, errlen)) {
            return false;
        }
    }
    if (o->workdir != NULL) {
        snprintf(cwd, sizeof(cwd), "%s", o->workdir);
    } else if (getcwd(cwd, sizeof(cwd)) == NULL) {
        snprintf(err, errlen, "cannot read the working directory: %s", strerror(errno));
        return false;
    }
    snprintf(plan->cwd, sizeof(plan->cwd), "%s", cwd);
    if (workdir && strcmp(cwd, "/") != 0 && !add_path(plan, cwd, true, err, errlen)) {
        return false;
    }
    qsort(plan->paths, plan->npaths, sizeof(plan->paths[0]), by_length);
    for (size_t i = 0; i < plan->npaths; i++) {
        for (size_t j = 0; j < i; j++) {
            const struct sandbox_path *w = &plan->paths[j];
            if (w->write && !w->tmp &&
                (under(plan->paths[i].path, w->path) || under(plan->paths[i].real, w->real))) {
                plan->paths[i].nested = true;
            }
        }
    }
    return true;
}

/* proviso's own inputs (the policy, the credentials, the sandbox token) and
 * the decision log must lie outside every path the command can write: a
 * policy there is the one the next run would enforce, and a log there is
 * a path the command can turn into a link to anything root then writes. */
static bool plan_own_files(const struct sandbox_opts *o, const struct sandbox_plan *plan, char *err,
                           size_t errlen)
{
    const struct {
        const char *opt;
        const char *path;
    } own[] = {{"--policy", o->policy_path},
               {"--credentials", o->credentials},
               {"--sandbox-token", o->token_file},
               {"--log", o->proxy_log}};

    for (size_t k = 0; k < PV_ARRAY_LEN(own); k++) {
        char real[PATH_MAX];
        char abs[2 * PATH_MAX + 2];
        char cwd[PATH_MAX];
        if (own[k].path == NULL || strncmp(own[k].path, "/dev/", 5) == 0) {
            continue;
        }
        if (own[k].path[0] == '/') {
            snprintf(abs, sizeof(abs), "%s", own[k].path);
        } else if (getcwd(cwd, sizeof(cwd)) != NULL) {
            snprintf(abs, sizeof(abs), "%s/%s", cwd, own[k].path);
        } else {
            snprintf(err, errlen, "cannot read the working directory: %s", strerror(errno));
            return false;
        }
        real_dir(abs, real, sizeof(real));
        for (size_t i = 0; i < plan->npaths; i++) {
            const struct sandbox_path *sp = &plan->paths[i];
            if (sp->write && !sp->tmp && under(real, sp->real)) {
                snprintf(err, errlen,
                         "%s %s lies where the command can write ('%s' is read_write): it could "
                         "rewrite it for the next run or turn a directory on its way into a "
                         "link; keep proviso's files outside the sandbox's writable paths",
                         own[k].opt, own[k].path, sp->path);
                return false;
            }
        }
    }
    return true;
}

/* The directory a binary pattern's literal part names: "/usr/bin" for
 * "/usr/bin/curl" and for "/usr/bin/ *" (a glob); "/" for "/ **". */
static void literal_dir(const char *pattern, char *out, size_t len)
{
    size_t n = strcspn(pattern, "*?[{");
    const char *slash;

    snprintf(out, len, "%.*s", (int)n, pattern);
    slash = strrchr(out, '/'); /* the literal file or the glob's directory */
    if (slash == NULL || slash == out) {
        snprintf(out, len, "/");
        return;
    }
    out[slash - out] = '\0';
}

/* What 'dir' names on this host: the realpath of its nearest existing
 * ancestor with the rest appended ("/a/./b" and a symbolic link to it are
 * the same directory). */
static void real_dir(const char *dir, char *out, size_t len)
{
    char head[PATH_MAX];
    char r[PATH_MAX];
    char *slash;

    snprintf(head, sizeof(head), "%s", dir);
    for (;;) {
        if (realpath(head, r) != NULL) {
            snprintf(out, len, "%s%s", strcmp(r, "/") == 0 ? "" : r, dir + strlen(head));
            if (out[0] == '\0') {
                snprintf(out, len, "/");
            }
            return;
        }
        slash = strrchr(head, '/');
        if (slash == NULL || slash == head) {
            snprintf(out, len, "%s", dir);
            return;
        }
        *slash = '\0';
    }
}

/* A binary the policy names must not be writable by the command: it could
 * replace it (or create it) and take its identity. The patterns that match
 * every path ("/" then "**", or "**" alone) name every program already, so
 * writing one gains nothing. */
static bool plan_binaries(const struct model_policy *p, const struct sandbox_plan *plan, char *err,
                          size_t errlen)
{
    for (size_t r = 0; r < model_policy_nrules(p); r++) {
        const struct model_rule *rule = model_policy_rule(p, r);
        for (size_t b = 0; b < model_rule_nbinaries(rule); b++) {
            const char *bin = model_rule_binary(rule, b);
            char dir[PATH_MAX];
            if (strcmp(bin, "/**") == 0 || strcmp(bin, "**") == 0) {
                continue;
            }
            char real[PATH_MAX];
            literal_dir(bin, dir, sizeof(dir));
            real_dir(dir, real, sizeof(real));
            for (size_t i = 0; i < plan->npaths; i++) {
                const struct sandbox_path *sp = &plan->paths[i];
                if (sp->write && (under(sp->path, dir) || under(dir, sp->path) ||
                                  under(sp->real, real) || under(real, sp->real))) {
                    snprintf(err, errlen,
                             "binary '%s' of policy '%s' lies where the command can write ('%s' "
                             "is read_write): it could put its own program there and take that "
                             "identity; keep the policy's binaries out of writable paths",
                             bin, model_rule_display_name(rule), sp->path);
                    return false;
                }
            }
        }
    }
    return true;
}

static bool plan_landlock(const struct model_sandbox_spec *spec, struct sandbox_plan *plan,
                          char *err, size_t errlen)
{
    const char *compat = spec->landlock_compat != NULL ? spec->landlock_compat : "best_effort";

    plan->landlock_abi = sandbox_landlock_abi();
    plan->landlock_hard = strcmp(compat, "hard_requirement") == 0;
    if (plan->landlock_abi > 0) {
        return true;
    }
    if (plan->landlock_hard) {
        snprintf(err, errlen,
                 "landlock.compatibility is hard_requirement, but this kernel offers no Landlock "
                 "(enable CONFIG_SECURITY_LANDLOCK and 'landlock' in the lsm= boot list)");
        return false;
    }
    fprintf(stderr, "proviso: sandbox: warning: this kernel offers no Landlock; "
                    "landlock.compatibility is best_effort, so the filesystem paths are "
                    "enforced by the sandbox's mounts alone (read_only as read-only mounts)\n");
    return true;
}

bool sandbox_plan_make(const struct model_policy *p, const struct sandbox_opts *o,
                       struct sandbox_plan *plan, char *err, size_t errlen)
{
    struct model_sandbox_spec spec;

    memset(plan, 0, sizeof(*plan));
    model_policy_sandbox(p, &spec);
    snprintf(plan->hostname, sizeof(plan->hostname), "%s", o->name != NULL ? o->name : "sandbox");
    if (!plan_user(&spec, plan, err, errlen) || !plan_paths(p, &spec, o, plan, err, errlen) ||
        !plan_binaries(p, plan, err, errlen) || !plan_own_files(o, plan, err, errlen) ||
        !plan_landlock(&spec, plan, err, errlen)) {
        return false;
    }
    if (plan->home[0] == '\0') {
        snprintf(plan->home, sizeof(plan->home), "/");
    }
    return true;
}
