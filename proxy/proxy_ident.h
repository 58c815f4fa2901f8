/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_ident.h - the identity cache shared by proxy_ident.c and proxy_ident_pid.c (proxy/ only)
 *
 * proxy_ident_pid.c finds the socket inode of a connection and computes the
 * identity of one process (its executable and ancestors, each pinned on
 * first use); proxy_ident.c finds the processes that hold a socket (the
 * rolling scan over /proc and the start-up self-check) and owns the cache.
 */
#ifndef PROXY_IDENT_H
#define PROXY_IDENT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "proxy/proxy_int.h"

/* Owners compared per socket. Every owner is compared; a socket held by more
 * processes than this is denied as ambiguous rather than partly checked. */
#define MAX_OWNERS 4096
#define MAX_HOPS 64

struct pin {
    char *path;
    unsigned char sha[32];
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
    struct timespec ctime;
};

/* Kernel threads seen by earlier scans, each with a pidfd (see skip_prune). */
struct kthreads {
    pid_t *pid; /* sorted */
    int *pidfd;
    size_t n;
    size_t cap;
};

struct holders;
struct dents;

/* The rolling scan (see "Rolling scan" below). */
struct roll {
    bool open;   /* a lap is in progress */
    bool resnap; /* a socket joined the open lap: list /proc again */
    uint64_t lap;
    pid_t cursor; /* last pid visited in the lap, 0 before the first */
    pid_t *pids;  /* the lap's listing of /proc, ascending */
    size_t npids;
    size_t pcap;
    size_t pos;          /* next index into pids */
    bool skip_ok;        /* kernel threads were confirmed alive after the listing */
    struct holders *act; /* sockets being resolved, sorted by inode */
    size_t nact;
    size_t acap;
    struct dents *fdd; /* a fd directory */
    struct dents *tdd; /* a task directory */
    int procfd;        /* /proc, -1 until the first lap */
};

struct proxy_ident_cache {
    struct pin *pins;
    size_t npins;
    size_t cap;
    struct kthreads kt;
    struct roll roll;
    int nl; /* netlink sock_diag socket, -1 when unavailable */
    uint32_t nl_seq;
    pid_t self;
    struct proxy_taskfiles *tf; /* the BPF iterator; NULL: the /proc scan */
};

/* The socket inode of a query, 0 when the peer is no local TCP socket. */
unsigned long proxy_ident_query_inode(struct proxy_ident_cache *c,
                                      const struct proxy_ident_query *q);
/* Parse a /proc directory name as a pid; false when it is none. */
bool proxy_ident_parse_pid(const char *s, pid_t *pid);
/* Field 'k' (1-based, as in proc(5)) of /proc/PID/stat; false when unreadable. */
bool proxy_ident_stat_field(pid_t pid, unsigned k, uint64_t *out);
/* Fill 'id' with the executables of 'pid' and its ancestors, pinning each. */
void proxy_ident_of_pid(struct proxy_ident_cache *c, pid_t pid, struct proxy_identity *id);
/* A new identity with one reference; NULL when out of memory. */
struct proxy_identity *proxy_identity_new(void);
/* Same chain, same knowledge, same denial. */
bool proxy_identity_same(const struct proxy_identity *a, const struct proxy_identity *b);

#endif /* PROXY_IDENT_H */
