#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# sandbox_escape.py - run INSIDE `proviso sandbox run`: each attempt to get
# out prints "NAME blocked: WHY" or "NAME ESCAPED"; sandbox.sh judges by
# these lines and, above all, by what the host's listeners received.
#   sandbox_escape.py HOST_TCP HOST_TCP6 HOST_UDP ABSTRACT UNIXPATH BINARY
import ctypes
import errno
import fcntl
import os
import socket
import sys
import termios

tcp, tcp6, udp, abstract, unixpath, binary = sys.argv[1:7]
libc = ctypes.CDLL(None, use_errno=True)


def attempt(name, fn):
    try:
        fn()
        print(f"{name} ESCAPED", flush=True)
    except OSError as e:
        print(f"{name} blocked: {errno.errorcode.get(e.errno, e.errno)}", flush=True)


def tcp4():
    with socket.create_connection(("127.0.0.1", int(tcp)), timeout=2) as s:
        s.sendall(b"GET /escape-tcp4 HTTP/1.0\r\n\r\n")


def tcp6_():
    with socket.create_connection(("::1", int(tcp6)), timeout=2) as s:
        s.sendall(b"GET /escape-tcp6 HTTP/1.0\r\n\r\n")


def udp4():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.sendto(b"escape-udp", ("127.0.0.1", int(udp)))
        s.settimeout(1)
        s.recv(10)  # a reply would mean it got there


def dns():
    # a query for escape.example to the host loopback resolver the test runs
    q = bytes.fromhex("abcd01000001000000000000") + b"\x06escape\x07example\x00\x00\x01\x00\x01"
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(1)
        s.sendto(q, ("127.0.0.1", int(udp)))
        s.recv(512)


def name_lookup():
    socket.getaddrinfo("escape.example", 80)


def raw():
    socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP).close()


def packet():
    socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0).close()


def abstract_unix():
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect("\0" + abstract)
        s.sendall(b"escape-abstract")


def path_unix():
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(unixpath)
        s.sendall(b"escape-unix")


def write_binary():
    with open(binary, "r+b") as f:
        f.write(b"X")


def replace_binary():
    os.rename("/tmp/evil-" + str(os.getpid()), binary)


def ptrace_init():
    if libc.ptrace(16, 1, None, None) != 0:  # PTRACE_ATTACH to init
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


def setns_host():
    fd = os.open("/proc/1/ns/net", os.O_RDONLY)
    try:
        if libc.setns(fd, 0) != 0:
            e = ctypes.get_errno()
            raise OSError(e, os.strerror(e))
    finally:
        os.close(fd)


def userns():
    if libc.unshare(0x10000000) != 0:  # CLONE_NEWUSER
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


def tiocsti():
    fcntl.ioctl(0, termios.TIOCSTI, b"x")


def become_root():
    os.setuid(0)


# Red team (branch redteam): the attempts below ESCAPED when they were added.
def vsock():
    # AF_VSOCK is not network-namespaced: its port space is the host's and
    # connect(VMADDR_CID_HOST) leaves the machine. Only the socket is made
    # here: never connect.
    socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM).close()


def vsock_io_uring():
    # the same socket made by IORING_OP_SOCKET, which a seccomp rule on
    # socket() does not see (io_uring_setup must be refused too)
    import mmap
    import struct
    libc.syscall.restype = ctypes.c_long
    params = bytearray(120)
    fd = libc.syscall(425, 4, (ctypes.c_char * 120).from_buffer(params))
    if fd < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    sq_entries, cq_entries = struct.unpack_from("2I", params, 0)
    sq_off = struct.unpack_from("7I", params, 40)
    cq_off = struct.unpack_from("6I", params, 80)
    size = max(sq_off[6] + sq_entries * 4, cq_off[5] + cq_entries * 16)
    ring = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE, offset=0)
    sqes = mmap.mmap(fd, sq_entries * 64, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE,
                     offset=0x10000000)
    sqe = bytearray(64)
    struct.pack_into("B", sqe, 0, 45)  # IORING_OP_SOCKET
    struct.pack_into("i", sqe, 4, socket.AF_VSOCK)
    struct.pack_into("Q", sqe, 8, socket.SOCK_STREAM)
    sqes[0:64] = bytes(sqe)
    tail = struct.unpack_from("I", ring, sq_off[1])[0]
    mask = struct.unpack_from("I", ring, sq_off[2])[0]
    struct.pack_into("I", ring, sq_off[6] + (tail & mask) * 4, 0)
    struct.pack_into("I", ring, sq_off[1], tail + 1)
    libc.syscall(426, fd, 1, 1, 1, None, 0)
    head = struct.unpack_from("I", ring, cq_off[0])[0]
    cmask = struct.unpack_from("I", ring, cq_off[2])[0]
    res = struct.unpack_from("QiI", ring, cq_off[5] + (head & cmask) * 16)[1]
    os.close(fd)
    if res < 0:
        raise OSError(-res, os.strerror(-res))
    os.close(res)


def _idle_policy_binary():
    import subprocess
    import time
    p = subprocess.Popen([binary, "-s", "-K", "-"], stdin=subprocess.PIPE,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.3)
    return p


def ptrace_child():
    # a policy binary's process is the command's to debug: inject code into
    # it and the proxy names that binary
    p = _idle_policy_binary()
    try:
        if libc.ptrace(16, p.pid, None, None) != 0:  # PTRACE_ATTACH
            e = ctypes.get_errno()
            raise OSError(e, os.strerror(e))
        os.waitpid(p.pid, 0)
        libc.ptrace(17, p.pid, None, None)
    finally:
        p.kill()
        p.wait()


def pidfd_getfd_child():
    # take a descriptor (a connection the proxy attributed to it) from a policy binary
    p = _idle_policy_binary()
    try:
        pidfd = os.pidfd_open(p.pid)
        fd = libc.syscall(438, pidfd, 0, 0)
        if fd < 0:
            e = ctypes.get_errno()
            raise OSError(e, os.strerror(e))
        os.close(fd)
        os.close(pidfd)
    finally:
        p.kill()
        p.wait()


def proc_mem_child():
    p = _idle_policy_binary()
    try:
        open("/proc/%d/mem" % p.pid, "r+b").close()
    finally:
        p.kill()
        p.wait()


for name, fn in [("tcp4", tcp4), ("tcp6", tcp6_), ("udp4", udp4), ("dns", dns),
                 ("getaddrinfo", name_lookup), ("raw", raw), ("packet", packet),
                 ("abstract_unix", abstract_unix), ("path_unix", path_unix),
                 ("write_binary", write_binary), ("ptrace_init", ptrace_init),
                 ("setns_host", setns_host), ("userns", userns), ("tiocsti", tiocsti),
                 ("setuid_root", become_root), ("vsock", vsock),
                 ("vsock_io_uring", vsock_io_uring),
                 ("ptrace_child", ptrace_child), ("pidfd_getfd_child", pidfd_getfd_child),
                 ("proc_mem_child", proc_mem_child)]:
    try:
        attempt(name, fn)
    except Exception as e:  # socket.gaierror and timeouts are OSErrors too
        print(f"{name} blocked: {type(e).__name__}", flush=True)
