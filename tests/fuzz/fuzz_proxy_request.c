/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_proxy_request.c - libFuzzer target: proviso-proxy's request parser
 *
 * Feeds arbitrary bytes to the head scanner, the strict head validator, the
 * absolute-form URI and authority parsers and the tunnel sniffer, as the
 * proxy does with client bytes. Every accepted head must satisfy
 * proxy_request_validate(); nothing may crash, hang or read out of bounds.
 * When an accepted head announces a chunked body, the bytes after the head
 * go through the chunked-body decoder as the proxy relays them (its own
 * invariants are fuzzed by fuzz_proxy_chunked).
 *   ./tests/fuzz/fuzz_proxy_request -max_total_time=120 CORPUS_DIR
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "proxy/proxy_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void sink(void *arg, const char *p, size_t n)
{
    (void)arg;
    (void)p;
    (void)n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *buf = (const char *)data;
    struct proxy_request *req = malloc(sizeof(*req));
    const char *why = NULL;
    size_t hl = 0;
    struct proxy_uri u;
    struct proxy_span h;
    bool br;
    uint16_t port;

    if (req == NULL) {
        return 0;
    }
    (void)proxy_http_sniff(data, size < 24 ? size : 24);
    if (proxy_http_head_end(buf, size, &hl) == PROXY_HEAD_OK) {
        if (proxy_http_parse(buf, hl, req, &why) == PROXY_HEAD_OK) {
            if (!proxy_request_validate(req, buf, hl)) {
                abort();
            }
            if (req->framing == PROXY_BODY_CHUNKED) {
                struct proxy_chunk d;
                size_t used = 0;
                proxy_chunk_init(&d);
                if (proxy_chunk_feed(&d, buf + hl, size - hl, &used, sink, NULL) ==
                        PROXY_CHUNK_BAD &&
                    d.why[0] == '\0') {
                    abort();
                }
                if (used > size - hl) {
                    abort();
                }
            }
            if (pv_ok(proxy_http_parse_uri(buf + req->target.off, req->target.len, &u)) &&
                (u.host.off + u.host.len > req->target.len || u.port == 0 ||
                 u.rest.off + u.rest.len != req->target.len)) {
                abort();
            }
            if (pv_ok(proxy_http_parse_authority(buf + req->target.off, req->target.len, false, &h,
                                                 &br, &port)) &&
                (port == 0 || h.len == 0 || h.off + h.len > req->target.len)) {
                abort();
            }
        } else if (why == NULL || why[0] == '\0') {
            abort(); /* every rejection explains itself */
        }
    }
    /* the raw bytes as a target and as an authority too */
    if (pv_ok(proxy_http_parse_uri(buf, size, &u)) && u.host.off + u.host.len > size) {
        abort();
    }
    if (pv_ok(proxy_http_parse_authority(buf, size, true, &h, &br, &port)) &&
        h.off + h.len > size) {
        abort();
    }
    free(req);
    return 0;
}
