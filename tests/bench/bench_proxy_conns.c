/* SPDX-License-Identifier: Apache-2.0 */
/* bench_proxy_conns.c - many idle keep-alive connections through a proxy
 *
 *   bench_proxy_conns PROXY_PORT URL N PROXY_PID
 *
 * Opens N connections to the proxy on 127.0.0.1, sends one forward request
 * for URL on each (absolute form, keep-alive) and reads the response, then
 * holds them all idle and reports the proxy's resident memory and open file
 * descriptors per connection; then uses every connection once more (errors
 * are counted), closes them all and reports how many descriptors the proxy
 * still holds compared with before (a leak shows as a positive number).
 * Output: "key value" lines for tests/bench/bench_proxy.sh.
 */
#include "config.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "common/pv.h"

static long rss_kib(int pid)
{
    char p[64];
    char line[256];
    long kib = -1;
    FILE *f;

    snprintf(p, sizeof(p), "/proc/%d/status", pid);
    f = fopen(p, "r");
    if (f == NULL) {
        return -1;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        if (strncmp(line, "VmRSS:", 6) == 0) {
            const char *s = line + 6;
            uint64_t v;
            size_t n;
            while (*s == ' ' || *s == '\t') {
                s++;
            }
            n = strspn(s, "0123456789");
            if (pv_ok(pv_parse_u64(s, n, UINT64_C(1) << 40, &v))) {
                kib = (long)v;
            }
        }
    }
    fclose(f);
    return kib;
}

static int nfds(int pid)
{
    char p[64];
    DIR *d;
    struct dirent *e;
    int n = 0;

    snprintf(p, sizeof(p), "/proc/%d/fd", pid);
    d = opendir(p);
    if (d == NULL) {
        return -1;
    }
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] != '.') {
            n++;
        }
    }
    closedir(d);
    return n;
}

/* Send one request and read one Content-Length response. */
static bool roundtrip(int fd, const char *req, size_t rlen)
{
    char buf[8192];
    size_t have = 0;
    const char *end;
    const char *cl;
    uint64_t want;

    if (write(fd, req, rlen) != (ssize_t)rlen) {
        return false;
    }
    for (;;) {
        ssize_t n = read(fd, buf + have, sizeof(buf) - 1 - have);
        if (n <= 0) {
            return false;
        }
        have += (size_t)n;
        buf[have] = '\0';
        end = strstr(buf, "\r\n\r\n");
        if (end == NULL) {
            continue;
        }
        if (strncmp(buf, "HTTP/1.1 200", 12) != 0) {
            return false;
        }
        cl = strstr(buf, "Content-Length: ");
        if (cl == NULL) {
            return false;
        }
        cl += 16;
        if (!pv_ok(pv_parse_u64(cl, strspn(cl, "0123456789"), 1u << 20, &want))) {
            return false;
        }
        while (have < (size_t)(end + 4 - buf) + want) {
            n = read(fd, buf + have, sizeof(buf) - 1 - have);
            if (n <= 0) {
                return false;
            }
            have += (size_t)n;
        }
        return true;
    }
}

int main(int argc, char **argv)
{
    uint64_t port;
    uint64_t n;
    uint64_t pid;
    struct sockaddr_in sa;
    char req[1024];
    int rl;
    int *fds;
    long rss0;
    long rss1;
    int fd0;
    int fd1;
    int fd2;
    unsigned errors = 0;
    unsigned opened = 0;

    if (argc != 5 || !pv_ok(pv_parse_u64(argv[1], strlen(argv[1]), 65535, &port)) ||
        !pv_ok(pv_parse_u64(argv[3], strlen(argv[3]), 100000, &n)) ||
        !pv_ok(pv_parse_u64(argv[4], strlen(argv[4]), 0x7FFFFFFF, &pid)) || n == 0) {
        fprintf(stderr, "usage: bench_proxy_conns PROXY_PORT URL N PROXY_PID\n");
        return 2;
    }
    fds = calloc((size_t)n, sizeof(int));
    if (fds == NULL) {
        return 1;
    }
    rl = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: bench\r\n\r\n", argv[2]);
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    rss0 = rss_kib((int)pid);
    fd0 = nfds((int)pid);
    for (uint64_t i = 0; i < n; i++) {
        fds[i] = socket(AF_INET, SOCK_STREAM, 0);
        if (fds[i] < 0 || connect(fds[i], (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
            !roundtrip(fds[i], req, (size_t)rl)) {
            errors++;
            continue;
        }
        opened++;
    }
    usleep(500000);
    rss1 = rss_kib((int)pid);
    fd1 = nfds((int)pid);
    for (uint64_t i = 0; i < n; i++) {
        if (fds[i] >= 0 && !roundtrip(fds[i], req, (size_t)rl)) {
            errors++;
        }
    }
    for (uint64_t i = 0; i < n; i++) {
        if (fds[i] >= 0) {
            close(fds[i]);
        }
    }
    /* let the proxy notice every close */
    for (int t = 0; t < 50; t++) {
        usleep(100000);
        fd2 = nfds((int)pid);
        if (fd2 <= fd0) {
            break;
        }
    }
    fd2 = nfds((int)pid);
    printf("connections %u\n", opened);
    printf("errors %u\n", errors);
    printf("rss_before_kib %ld\n", rss0);
    printf("rss_idle_kib %ld\n", rss1);
    printf("bytes_per_idle_conn %ld\n", opened ? (rss1 - rss0) * 1024 / (long)opened : 0);
    printf("fds_before %d\n", fd0);
    printf("fds_idle %d\n", fd1);
    printf("fds_after_close %d\n", fd2);
    printf("fd_leak %d\n", fd2 - fd0);
    free(fds);
    return errors == 0 && fd2 <= fd0 ? 0 : 1;
}
