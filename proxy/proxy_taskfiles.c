/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_taskfiles.c - every socket of every process in one read: a BPF
 * task-file iterator
 *
 * The identity scan must find every process that holds a socket. Read
 * through /proc that costs a directory listing per process and one
 * readlinkat per open descriptor (proxy_ident.c), about a millisecond per
 * lap on a machine with 75 processes, and every new connection waits a lap.
 * The kernel can answer the same question in one pass: a BPF program
 * attached to the "task_file" iterator runs once for every open file of
 * every task of the reader's PID namespace, and this one writes a record
 * (inode, thread group id, descriptor, thread id, kind) for each file that
 * is a socket - on sockfs, not merely a file with the socket mode - and for
 * each anonymous-inode file with an inode of its own, such as an io_uring
 * instance, whose registered sockets the caller reads from its fdinfo
 * (proxy_ident.c). One read of the iterator returns the records of the
 * whole pass, in tens of microseconds.
 *
 * The answer is the /proc scan's, only more complete: the iterator visits
 * every task (a thread whose file table is not its process's, after
 * unshare(CLONE_FILES), and the threads of a process whose main thread has
 * exited, which /proc/PID/fd does not show) and no process can refuse it.
 *
 * The program is written here as instructions, not compiled: it needs the
 * kernel's field offsets (struct file, struct inode, struct task_struct),
 * which come from the kernel's own BTF (/sys/kernel/btf/vmlinux, read with
 * libbpf), so no compiler is needed at build or run time. Before the
 * backend is used, a self-test pass must report a socket this process just
 * opened, with its pid and descriptor; any failure (no BPF, no BTF, no
 * privilege, a kernel whose layout the program misreads, a PID namespace
 * other than the initial one, whose pids the records would not use) leaves
 * the caller on the /proc scan, with the reason.
 *
 * The instructions below are licensed to the kernel as "Dual BSD/GPL":
 * bpf_seq_write() is available to GPL-compatible programs only.
 */
#include "config.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proxy/proxy_int.h"

/* One record, as the program writes it (native byte order). */
struct tf_record {
    uint64_t ino;
    uint32_t tgid;
    uint32_t fd;
    uint32_t tid;
    uint32_t kind; /* enum proxy_taskfiles_kind */
};

#define SOCKFS_MAGIC_NR 0x534F434B
#define ANON_INODE_FS_MAGIC_NR 0x09041934

struct proxy_taskfiles {
    int prog;
    int link;
    size_t len; /* bytes of a partial record carried to the next read */
    union {
        struct tf_record align;
        char b[65536];
    } buf;
};

/* ---------------------------------------------------------------------------
 * Offsets from the kernel's BTF
 * ------------------------------------------------------------------------- */

/* Byte offset of member 'name' in struct or union 't', looking through
 * anonymous members (bpf_iter_meta's seq is inside an unnamed union); -1
 * when absent or a bitfield. */
static long member_in(const struct btf *btf, const struct btf_type *t, const char *name)
{
    const struct btf_member *m = btf_members(t);

    for (unsigned i = 0; i < btf_vlen(t); i++, m++) {
        const char *n = btf__name_by_offset(btf, m->name_off);
        uint32_t bits = btf_member_bit_offset(t, i);
        if (bits % 8 != 0 || btf_member_bitfield_size(t, i) != 0) {
            continue;
        }
        if (n != NULL && strcmp(n, name) == 0) {
            return (long)(bits / 8);
        }
        if (n == NULL || n[0] == '\0') {
            int tid = btf__resolve_type(btf, m->type);
            const struct btf_type *mt = tid < 0 ? NULL : btf__type_by_id(btf, (uint32_t)tid);
            long in = mt != NULL && (btf_is_struct(mt) || btf_is_union(mt))
                          ? member_in(btf, mt, name)
                          : -1;
            if (in >= 0) {
                return (long)(bits / 8) + in;
            }
        }
    }
    return -1;
}

static long member(const struct btf *btf, const char *sname, const char *name)
{
    int id = btf__find_by_name_kind(btf, sname, BTF_KIND_STRUCT);

    return id < 0 ? -1 : member_in(btf, btf__type_by_id(btf, (uint32_t)id), name);
}

/* The position of parameter 'name' of function prototype 'proto'; -1. */
static long param(const struct btf *btf, const struct btf_type *proto, const char *name)
{
    const struct btf_param *p = btf_params(proto);

    for (unsigned i = 0; i < btf_vlen(proto); i++, p++) {
        const char *n = btf__name_by_offset(btf, p->name_off);
        if (n != NULL && strcmp(n, name) == 0) {
            return (long)i;
        }
    }
    return -1;
}

struct tf_layout {
    uint32_t func;  /* BTF id of bpf_iter_task_file, the attach target */
    short ctx_meta; /* the iterator's arguments, 8 bytes each */
    short ctx_task; /* ... */
    short ctx_fd;   /* ... */
    short ctx_file; /* ... */
    short seq;      /* bpf_iter_meta.seq */
    short f_inode;  /* file.f_inode */
    short i_sb;     /* inode.i_sb */
    short s_magic;  /* super_block.s_magic */
    short pid;      /* task_struct.pid (the thread) */
    short i_ino;    /* inode.i_ino */
    short tgid;     /* task_struct.tgid */
};

static bool short_off(long v, short *out)
{
    if (v < 0 || v > 0x7FFF) {
        return false;
    }
    *out = (short)v;
    return true;
}

static bool layout(struct tf_layout *l, char *why, size_t len)
{
    struct btf *btf = btf__load_vmlinux_btf();
    const struct btf_type *fn;
    const struct btf_type *proto;
    int fid;
    bool ok;

    if (btf == NULL) {
        snprintf(why, len, "no kernel BTF (/sys/kernel/btf/vmlinux): %s", strerror(errno));
        return false;
    }
    fid = btf__find_by_name_kind(btf, "bpf_iter_task_file", BTF_KIND_FUNC);
    fn = fid < 0 ? NULL : btf__type_by_id(btf, (uint32_t)fid);
    proto = fn == NULL ? NULL : btf__type_by_id(btf, fn->type);
    if (proto == NULL || !btf_is_func_proto(proto)) {
        snprintf(why, len, "the kernel has no task_file BPF iterator");
        btf__free(btf);
        return false;
    }
    l->func = (uint32_t)fid;
    ok = short_off(param(btf, proto, "meta") * 8, &l->ctx_meta) &&
         short_off(param(btf, proto, "task") * 8, &l->ctx_task) &&
         short_off(param(btf, proto, "fd") * 8, &l->ctx_fd) &&
         short_off(param(btf, proto, "file") * 8, &l->ctx_file) &&
         short_off(member(btf, "bpf_iter_meta", "seq"), &l->seq) &&
         short_off(member(btf, "file", "f_inode"), &l->f_inode) &&
         short_off(member(btf, "inode", "i_sb"), &l->i_sb) &&
         short_off(member(btf, "inode", "i_ino"), &l->i_ino) &&
         short_off(member(btf, "super_block", "s_magic"), &l->s_magic) &&
         short_off(member(btf, "task_struct", "tgid"), &l->tgid) &&
         short_off(member(btf, "task_struct", "pid"), &l->pid);
    btf__free(btf);
    if (!ok) {
        snprintf(why, len, "the kernel's BTF lacks a field the iterator program reads");
    }
    return ok;
}

/* ---------------------------------------------------------------------------
 * The program
 * ------------------------------------------------------------------------- */

#define INSN(code, dst, src, off, imm) ((struct bpf_insn){(code), (dst), (src), (off), (imm)})
#define LDX(size, dst, src, off) INSN(BPF_LDX | BPF_MEM | (size), dst, src, off, 0)
#define STX(size, dst, src, off) INSN(BPF_STX | BPF_MEM | (size), dst, src, off, 0)
#define MOV(dst, src) INSN(BPF_ALU64 | BPF_MOV | BPF_X, dst, src, 0, 0)
#define MOVI(dst, imm) INSN(BPF_ALU64 | BPF_MOV | BPF_K, dst, 0, 0, imm)
#define ADDI(dst, imm) INSN(BPF_ALU64 | BPF_ADD | BPF_K, dst, 0, 0, imm)
#define JEQ_REG(dst, src, off) INSN(BPF_JMP | BPF_JEQ | BPF_X, dst, src, off, 0)
#define JEQI(dst, imm, off) INSN(BPF_JMP | BPF_JEQ | BPF_K, dst, 0, off, imm)
#define JNEI(dst, imm, off) INSN(BPF_JMP | BPF_JNE | BPF_K, dst, 0, off, imm)
#define CALL(fn) INSN(BPF_JMP | BPF_CALL, 0, 0, 0, fn)
#define EXIT() INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
/* jump targets, patched once the program is laid out */
#define TO_OUT 0x7FFF
#define TO_REC 0x7FFE

/* For every (task, file): when the file is a socket (on sockfs: a file
 * that merely has the socket mode, made with mknod elsewhere, is not), or
 * an anonymous-inode file with an inode of its own (an io_uring instance
 * has one; eventfd, epoll, timerfd and the like share 'shared_anon'),
 * write {inode, tgid, fd, tid, kind} to the iterator's output.
 * r6 ctx, r7 task, r8 file, r2 inode, r9 kind. */
static size_t program(const struct tf_layout *l, uint64_t shared_anon, struct bpf_insn *p)
{
    size_t n = 0;
    size_t out;
    size_t rec;

    p[n++] = MOV(6, 1);
    p[n++] = LDX(BPF_DW, 7, 6, l->ctx_task);
    p[n++] = JEQI(7, 0, TO_OUT);
    p[n++] = LDX(BPF_DW, 8, 6, l->ctx_file);
    p[n++] = JEQI(8, 0, TO_OUT);
    p[n++] = LDX(BPF_DW, 2, 8, l->f_inode);
    p[n++] = JEQI(2, 0, TO_OUT);
    p[n++] = LDX(BPF_DW, 3, 2, l->i_sb);
    p[n++] = JEQI(3, 0, TO_OUT);
    p[n++] = LDX(BPF_DW, 3, 3, l->s_magic);
    p[n++] = MOVI(9, PROXY_TASKFILES_SOCKET);
    p[n++] = JEQI(3, SOCKFS_MAGIC_NR, TO_REC);
    p[n++] = JNEI(3, ANON_INODE_FS_MAGIC_NR, TO_OUT);
    p[n++] = LDX(BPF_DW, 4, 2, l->i_ino);
    p[n++] = INSN(BPF_LD | BPF_DW | BPF_IMM, 5, 0, 0, (int32_t)(uint32_t)shared_anon);
    p[n++] = INSN(0, 0, 0, 0, (int32_t)(uint32_t)(shared_anon >> 32));
    p[n++] = JEQ_REG(4, 5, TO_OUT);
    p[n++] = MOVI(9, PROXY_TASKFILES_ANON);
    rec = n;
    p[n++] = LDX(BPF_DW, 4, 2, l->i_ino);
    p[n++] = STX(BPF_DW, 10, 4, -24);
    p[n++] = LDX(BPF_W, 5, 7, l->tgid);
    p[n++] = STX(BPF_W, 10, 5, -16);
    p[n++] = LDX(BPF_W, 5, 6, l->ctx_fd);
    p[n++] = STX(BPF_W, 10, 5, -12);
    p[n++] = LDX(BPF_W, 5, 7, l->pid);
    p[n++] = STX(BPF_W, 10, 5, -8);
    p[n++] = STX(BPF_W, 10, 9, -4);
    p[n++] = LDX(BPF_DW, 1, 6, l->ctx_meta);
    p[n++] = LDX(BPF_DW, 1, 1, l->seq);
    p[n++] = MOV(2, 10);
    p[n++] = ADDI(2, -24);
    p[n++] = MOVI(3, (int32_t)sizeof(struct tf_record));
    p[n++] = CALL(BPF_FUNC_seq_write);
    out = n;
    p[n++] = MOVI(0, 0);
    p[n++] = EXIT();
    for (size_t i = 0; i < out; i++) {
        uint8_t op = BPF_OP(p[i].code);
        if (BPF_CLASS(p[i].code) != BPF_JMP || op == BPF_CALL || op == BPF_EXIT) {
            continue;
        }
        if (p[i].off == TO_OUT) {
            p[i].off = (short)(out - i - 1);
        } else if (p[i].off == TO_REC) {
            p[i].off = (short)(rec - i - 1);
        }
    }
    return n;
}

/* ---------------------------------------------------------------------------
 * Passes
 * ------------------------------------------------------------------------- */

bool proxy_taskfiles_pass(struct proxy_taskfiles *t, proxy_taskfiles_fn fn, void *arg)
{
    int it = bpf_iter_create(t->link);
    bool ok = true;

    if (it < 0) {
        return false;
    }
    t->len = 0;
    for (;;) {
        ssize_t n = read(it, t->buf.b + t->len, sizeof(t->buf.b) - t->len);
        size_t have;
        size_t used = 0;
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
            continue; /* EAGAIN: the kernel paused a long pass; the next read resumes it */
        }
        if (n <= 0) {
            ok = n == 0 && t->len == 0; /* a torn record is a failed pass */
            break;
        }
        have = t->len + (size_t)n;
        for (; have - used >= sizeof(struct tf_record); used += sizeof(struct tf_record)) {
            struct tf_record r;
            memcpy(&r, t->buf.b + used, sizeof(r));
            fn((unsigned long)r.ino, (pid_t)r.tgid, (pid_t)r.tid, (int)r.fd,
               (enum proxy_taskfiles_kind)r.kind, arg);
        }
        t->len = have - used;
        memmove(t->buf.b, t->buf.b + used, t->len);
    }
    close(it);
    return ok;
}

/* ---------------------------------------------------------------------------
 * Set-up and the self-test
 * ------------------------------------------------------------------------- */

/* Whether this process is in the initial PID namespace: the records carry
 * the kernel's global thread group ids, which are the pids this process
 * sees only there. The initial namespace's inode number is fixed
 * (PROC_PID_INIT_INO); counting "NSpid:" fields would not do, since a
 * container's own /proc shows one field for a child namespace too. */
#define PROC_PID_INIT_INO_NR 0xEFFFFFFCu

static bool initial_pidns(void)
{
    struct stat st;

    return stat("/proc/self/ns/pid", &st) == 0 && st.st_ino == PROC_PID_INIT_INO_NR;
}

struct probe {
    unsigned long ino;
    int fd;
    pid_t self;
    bool seen;  /* the probe socket, as this process's, at its descriptor */
    bool wrong; /* the probe socket with another pid or descriptor */
};

static void probe_cb(unsigned long ino, pid_t tgid, pid_t tid, int fd,
                     enum proxy_taskfiles_kind kind, void *arg)
{
    struct probe *p = arg;

    (void)tid;
    if (ino != p->ino) {
        return;
    }
    if (tgid == p->self && fd == p->fd && kind == PROXY_TASKFILES_SOCKET) {
        p->seen = true;
    } else {
        p->wrong = true;
    }
}

/* A pass must report a socket this process holds, exactly. */
static bool self_test(struct proxy_taskfiles *t, char *why, size_t len)
{
    struct probe p = {0, -1, getpid(), false, false};
    struct stat st;
    bool ok;

    p.fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (p.fd < 0 || fstat(p.fd, &st) != 0) {
        snprintf(why, len, "self-test socket: %s", strerror(errno));
        if (p.fd >= 0) {
            close(p.fd);
        }
        return false;
    }
    p.ino = (unsigned long)st.st_ino;
    ok = proxy_taskfiles_pass(t, probe_cb, &p);
    close(p.fd);
    if (!ok) {
        snprintf(why, len, "self-test pass failed: %s", strerror(errno));
        return false;
    }
    if (!p.seen || p.wrong) {
        snprintf(why, len, "self-test: the iterator did not report this process's socket exactly");
        return false;
    }
    return true;
}

void proxy_taskfiles_free(struct proxy_taskfiles *t)
{
    if (t == NULL) {
        return;
    }
    if (t->link >= 0) {
        close(t->link);
    }
    if (t->prog >= 0) {
        close(t->prog);
    }
    free(t);
}

static int silent(enum libbpf_print_level level, const char *fmt, va_list ap)
{
    (void)level;
    (void)fmt;
    (void)ap;
    return 0;
}

struct proxy_taskfiles *proxy_taskfiles_open(char *why, size_t len)
{
    struct proxy_taskfiles *t;
    struct tf_layout l;
    struct bpf_insn insns[48];
    struct stat st;
    int efd;
    size_t n;
    struct bpf_prog_load_opts opts;

    why[0] = '\0';
    if (!initial_pidns()) {
        snprintf(why, len, "not in the initial PID namespace");
        return NULL;
    }
    (void)libbpf_set_print(silent); /* reasons go to 'why', not stderr */
    if (!layout(&l, why, len)) {
        return NULL;
    }
    t = pv_calloc(1, sizeof(*t));
    if (t == NULL) {
        snprintf(why, len, "out of memory");
        return NULL;
    }
    t->prog = t->link = -1;
    /* the anonymous inode that eventfd, epoll, timerfd ... share */
    efd = eventfd(0, EFD_CLOEXEC);
    if (efd < 0 || fstat(efd, &st) != 0) {
        snprintf(why, len, "eventfd: %s", strerror(errno));
        if (efd >= 0) {
            close(efd);
        }
        proxy_taskfiles_free(t);
        return NULL;
    }
    close(efd);
    n = program(&l, (uint64_t)st.st_ino, insns);
    /* what LIBBPF_OPTS() does, without its GNU extensions */
    memset(&opts, 0, sizeof(opts));
    opts.sz = sizeof(opts);
    opts.expected_attach_type = BPF_TRACE_ITER;
    opts.attach_btf_id = l.func;
    t->prog = bpf_prog_load(BPF_PROG_TYPE_TRACING, "pv_sockets", "Dual BSD/GPL", insns, n, &opts);
    if (t->prog < 0) {
        snprintf(why, len, "cannot load the iterator program: %s", strerror(errno));
        proxy_taskfiles_free(t);
        return NULL;
    }
    t->link = bpf_link_create(t->prog, 0, BPF_TRACE_ITER, NULL);
    if (t->link < 0) {
        snprintf(why, len, "cannot attach the iterator program: %s", strerror(errno));
        proxy_taskfiles_free(t);
        return NULL;
    }
    if (!self_test(t, why, len)) {
        proxy_taskfiles_free(t);
        return NULL;
    }
    return t;
}
