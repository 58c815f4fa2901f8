/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_framing.c - differential framing driver for proxy_framing.sh
 *
 *   proxy_framing PROXY_PORT ORIGIN_PORT SEED N EXPECTED_FILE
 *
 * Sends N forward requests through the proxy to the strict origin of
 * proxy_upstream (which frames like nginx: lines end at LF), each a POST with
 * a random chunked body: random sizes (hex case, leading zeros), chunk
 * extensions (quoted strings, BWS), trailers, and in about a third of the
 * cases one malformation (bare LF or CR, CTLs, bad hex, obs-fold, missing
 * CRLF after data, oversized sizes). Every body is followed on the same
 * connection by a DELETE that a lenient framer could read as a second
 * request. Half the connections are keep-alive with a second valid POST.
 *
 * The driver knows each body's verdict by construction; it checks the
 * status the proxy answers (200 or 400) and writes the requests the origin
 * must have framed, in order, to EXPECTED_FILE:
 *   REQ POST /ok host=127.0.0.1:PORT body=N sha=XXXXXXXX
 * The script compares that with the origin's log line for line. Exit 1 on
 * a status mismatch (printed).
 */
#include "config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct buf {
    char b[16384];
    size_t n;
};

static uint64_t rng;

static unsigned rnd(unsigned n)
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)((rng >> 33) % n);
}

static void put(struct buf *b, const char *s, size_t n)
{
    if (b->n + n < sizeof(b->b)) {
        memcpy(b->b + b->n, s, n);
        b->n += n;
    }
}

static void puts_(struct buf *b, const char *s)
{
    put(b, s, strlen(s));
}

static const char *const good_ext[] = {
    ";a", ";a=b", " ;a=b", ";a=\"x;y\"", "\t;z", ";a=b;c=d", ";q=\"\\\"\"", ";n=\"caf\xc3\xa9\"",
};
static const char *const good_trailer[] = {"X-T: v\r\n", "Y-T:\r\n", "Z: a b\tc\r\n"};

enum bad {
    BAD_NONE,
    BAD_SIZE_LF,   /* size line ends in a bare LF */
    BAD_EXT_LF,    /* extension ends in a bare LF */
    BAD_EXT_CTL,   /* control byte in an extension */
    BAD_EXT_CR,    /* bare CR inside an extension */
    BAD_DATA_LF,   /* data followed by LF only */
    BAD_DATA_LONG, /* more data than the size */
    BAD_HEX,       /* 0x prefix */
    BAD_SPACE,     /* whitespace before the size */
    BAD_OVERFLOW,  /* 17 hex digits */
    BAD_TR_FOLD,   /* obs-fold in a trailer */
    BAD_TR_LF,     /* trailer ends in a bare LF */
    BAD_END_LF,    /* final line a bare LF */
    BAD_COUNT,
};

/* One chunked body into 'b'; returns the decoded length and hash. */
static void body(struct buf *b, enum bad bad, uint64_t *len, uint32_t *sha)
{
    unsigned k = rnd(4) + (bad != BAD_NONE && bad < BAD_TR_FOLD ? 1 : 0);
    unsigned where = k > 0 ? rnd(k) : 0;

    *len = 0;
    *sha = 2166136261u;
    for (unsigned i = 0; i < k; i++) {
        unsigned s = rnd(20) + 1;
        char line[64];
        bool here = i == where;
        int n = snprintf(line, sizeof(line), "%s%s%x", (here && bad == BAD_SPACE) ? " " : "",
                         (here && bad == BAD_HEX) ? "0x"
                         : rnd(3) == 0            ? "00"
                                                  : "",
                         s);
        if (here && bad == BAD_OVERFLOW) {
            n = snprintf(line, sizeof(line), "1000000000000000%x", s);
        }
        if (rnd(2) == 0) {
            for (int j = 0; j < n; j++) {
                if (line[j] >= 'a' && line[j] <= 'f') {
                    line[j] = (char)(line[j] - 32);
                }
            }
        }
        puts_(b, line);
        if (here && bad == BAD_EXT_LF) {
            puts_(b, ";x\n");
        } else if (here && bad == BAD_EXT_CTL) {
            puts_(b, ";x\x01y\r\n");
        } else if (here && bad == BAD_EXT_CR) {
            puts_(b, ";x\ry\r\n");
        } else {
            if (rnd(2) == 0) {
                puts_(b, good_ext[rnd(sizeof(good_ext) / sizeof(good_ext[0]))]);
            }
            puts_(b, (here && bad == BAD_SIZE_LF) ? "\n" : "\r\n");
        }
        for (unsigned j = 0; j < s; j++) {
            char c = (char)('a' + rnd(26));
            put(b, &c, 1);
            *sha = (*sha ^ (unsigned char)c) * 16777619u;
        }
        *len += s;
        if (here && bad == BAD_DATA_LONG) {
            puts_(b, "zz");
        }
        puts_(b, (here && bad == BAD_DATA_LF) ? "\n" : "\r\n");
    }
    puts_(b, "0");
    if (rnd(3) == 0) {
        puts_(b, ";last");
    }
    puts_(b, (bad == BAD_END_LF) ? "\n" : "\r\n");
    for (unsigned t = rnd(3); t > 0; t--) {
        puts_(b, good_trailer[rnd(3)]);
    }
    if (bad == BAD_TR_FOLD) {
        puts_(b, "X-F: a\r\n b\r\n");
    } else if (bad == BAD_TR_LF) {
        puts_(b, "X-L: a\n");
    }
    puts_(b, "\r\n");
    /* a bad body that happened to need a chunk it did not get is still bad */
    if (bad != BAD_NONE && bad < BAD_TR_FOLD && k == 0) {
        puts_(b, "");
    }
}

static int dial(unsigned port)
{
    struct sockaddr_in sa;
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Send 'b', read until the proxy closes (3 s at most). */
static size_t exchange(unsigned port, const struct buf *b, char *resp, size_t cap)
{
    int fd = dial(port);
    size_t n = 0;

    if (fd < 0) {
        return 0;
    }
    (void)!write(fd, b->b, b->n);
    for (;;) {
        struct pollfd p = {fd, POLLIN, 0};
        ssize_t r;
        if (poll(&p, 1, 3000) <= 0) {
            break;
        }
        r = read(fd, resp + n, cap - n - 1);
        if (r <= 0) {
            break;
        }
        n += (size_t)r;
    }
    resp[n] = '\0';
    close(fd);
    return n;
}

static unsigned num(const char *s)
{
    unsigned v = 0;

    for (; *s >= '0' && *s <= '9'; s++) {
        v = v * 10 + (unsigned)(*s - '0');
    }
    return v;
}

int main(int argc, char **argv)
{
    unsigned px;
    unsigned up;
    unsigned n;
    FILE *exp;
    unsigned fails = 0;
    unsigned nbad = 0;
    static char resp[65536];

    if (argc != 6) {
        fprintf(stderr, "usage: proxy_framing PROXY_PORT ORIGIN_PORT SEED N EXPECTED\n");
        return 2;
    }
    px = num(argv[1]);
    up = num(argv[2]);
    rng = num(argv[3]);
    n = num(argv[4]);
    exp = fopen(argv[5], "w");
    if (exp == NULL) {
        return 2;
    }
    for (unsigned i = 0; i < n; i++) {
        struct buf b;
        char head[256];
        enum bad bad = rnd(3) == 0 ? (enum bad)(1 + rnd(BAD_COUNT - 1)) : BAD_NONE;
        bool ka = rnd(2) == 0;
        uint64_t len = 0;
        uint32_t sha = 0;
        const char *want;

        b.n = 0;
        snprintf(head, sizeof(head),
                 "POST http://127.0.0.1:%u/ok HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n"
                 "Transfer-Encoding: chunked\r\n%s\r\n",
                 up, up, ka ? "" : "Connection: close\r\n");
        puts_(&b, head);
        body(&b, bad, &len, &sha);
        /* what a lenient framer might read as a request of its own */
        snprintf(head, sizeof(head),
                 "DELETE http://127.0.0.1:%u/smuggled HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n"
                 "Content-Length: 0\r\n\r\n",
                 up, up);
        puts_(&b, head);
        (void)exchange(px, &b, resp, sizeof(resp));
        want = bad == BAD_NONE ? "HTTP/1.1 200 " : "HTTP/1.1 400 ";
        if (strncmp(resp, want, strlen(want)) != 0) {
            fprintf(stdout, "case %u (bad %d, keep-alive %d): want [%s] got [%.40s]\n", i, (int)bad,
                    (int)ka, want, resp);
            fails++;
        }
        if (bad == BAD_NONE) {
            fprintf(exp, "REQ POST /ok host=127.0.0.1:%u body=%llu sha=%08x\n", up,
                    (unsigned long long)len, sha);
            if (ka && strstr(resp, "HTTP/1.1 403 ") == NULL) {
                fprintf(stdout, "case %u: the pipelined DELETE was not denied\n", i);
                fails++;
            }
        } else {
            nbad++;
        }
    }
    fclose(exp);
    printf("framing: %u cases, %u malformed, %u status mismatches\n", n, nbad, fails);
    return fails == 0 ? 0 : 1;
}
