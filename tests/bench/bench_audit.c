/* SPDX-License-Identifier: Apache-2.0 */
/* bench_audit.c - the audit chain's costs: sealing one record, verifying
 * an export
 *
 *   ./tests/bench/bench_audit [records]      (default 20000)
 *
 * Seals 'records' records shaped like the advisor's CONFIG:PROPOSED events
 * (with a referenced blob every tenth record), chained as the advisor
 * chains them, then verifies the export with one thread and with two.
 * Goal (issue 9): verify >= 20,000 records/s. The sealing figure is what
 * each event adds to the advisor's writer; compare it with the time per
 * submission from tests/bench/bench_advisor.sh.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <time.h>
#include <unistd.h>

#include "audit/audit.h"
#include "common/pv_dynbuf.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* This process's CPU time: the machine may be shared, the wall clock
 * then measures the neighbours too. */
static double cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    char dir[] = "/tmp/pv-bench-audit.XXXXXX";
    char path[64];
    char err[256];
    char prev[65] = AUDIT_GENESIS;
    char seal[65];
    char sha[65];
    char pub[AUDIT_PUB_B64_LEN];
    const char *blob =
        "{\"prover\":{\"verdict\":\"empty\",\"validation_result\":\"prover: no new findings\"}}";
    uint64_t n = 20000;
    struct pv_dynbuf body;
    struct pv_dynbuf out;
    struct audit_key *k;
    struct audit_report r;
    double t0;
    double seal_s;
    json_t *h;
    char *text;
    char *b64;

    if (argc > 1 && !pv_ok(pv_parse_u64(argv[1], strlen(argv[1]), 10000000, &n))) {
        fprintf(stderr, "usage: bench_audit [records]\n");
        return 2;
    }
    if (mkdtemp(dir) == NULL) {
        return 1;
    }
    snprintf(path, sizeof(path), "%s/audit.key", dir);
    k = audit_key_open(path, err, sizeof(err));
    if (k == NULL || !pv_ok(audit_key_pub_b64(k, pub))) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    audit_sha256_hex(blob, strlen(blob), sha);
    pv_dynbuf_init(&body, AUDIT_FILE_MAX);
    pv_dynbuf_init(&out, AUDIT_FILE_MAX);
    t0 = cpu();
    for (uint64_t i = 1; i <= n; i++) {
        json_t *data =
            json_pack("{s:s,s:s,s:s,s:s,s:s,s:s}", "chunk_id",
                      "0b8f1f7e-6f1c-4c55-8f5b-1d2e3f4a5b6c", "analysis_mode", "agent", "rule_name",
                      "bench", "validation_result", "prover: no new findings", "rule",
                      "{\"endpoints\":[{\"host\":\"api.example.com\",\"port\":443}]}",
                      "evidence_blob", i % 10 == 0 ? sha : "");
        json_t *rec = json_pack("{s:s,s:I,s:I,s:s,s:s,s:s,s:O,s:o,s:s}", "type", "record", "seq",
                                (json_int_t)i, "ts_ms", (json_int_t)(1700000000000 + i), "kind",
                                "CONFIG:PROPOSED", "sandbox", "bench", "line",
                                "CONFIG:PROPOSED [INFO] agent proposal chunk:0b8f1f7e on "
                                "api.example.com:443 GET /v1/** by /usr/bin/curl",
                                "data", data, "blobs", audit_blob_refs(data), "prev", prev);
        if (rec == NULL || !pv_ok(audit_seal(k, "record", rec, seal, NULL))) {
            return 1;
        }
        text = audit_canonical(rec);
        pv_dynbuf_puts(&body, text);
        pv_dynbuf_putc(&body, '\n');
        free(text);
        json_decref(rec);
        json_decref(data);
        memcpy(prev, seal, sizeof(prev));
    }
    seal_s = cpu() - t0;
    b64 = audit_b64(blob, strlen(blob));
    pv_dynbuf_putf(&body, "{\"data_b64\":\"%s\",\"sha256\":\"%s\",\"type\":\"blob\"}\n", b64, sha);
    free(b64);
    h = json_pack("{s:s,s:s,s:s,s:i,s:s,s:I,s:I,s:s}", "type", "header", "format", AUDIT_FORMAT,
                  "pubkey", pub, "since", 0, "first_prev", AUDIT_GENESIS, "last_seq", (json_int_t)n,
                  "records", (json_int_t)n, "head", prev);
    if (h == NULL || !pv_ok(audit_seal(k, "header", h, seal, NULL))) {
        return 1;
    }
    text = audit_canonical(h);
    pv_dynbuf_puts(&out, text);
    pv_dynbuf_putc(&out, '\n');
    pv_dynbuf_put(&out, body.buf, body.len);
    free(text);
    json_decref(h);
    if (out.failed) {
        return 1;
    }
    printf("seal: %.1f us CPU per record (%llu records, %.2f s)\n", seal_s * 1e6 / (double)n,
           (unsigned long long)n, seal_s);
    for (unsigned mode = 0; mode < 4; mode++) {
        unsigned threads = 1 + mode % 2;
        bool every = mode >= 2;
        double c0 = cpu();
        t0 = now();
        audit_verify(out.buf, out.len, k, threads, every, &r);
        seal_s = now() - t0;
        c0 = cpu() - c0;
        printf("verify (%s, %u thread%s): %.0f records/s wall, %.0f records per CPU-second "
               "(%zu records, %.2f MB, %.2f s) %s\n",
               every ? "every signature" : "chain + head signatures", threads,
               threads > 1 ? "s" : "", (double)r.records / seal_s, (double)r.records / c0,
               r.records, (double)out.len / 1e6, seal_s,
               r.status == AUDIT_INTACT ? "intact" : r.reason);
        if (r.status != AUDIT_INTACT) {
            return 1;
        }
    }
    audit_key_free(k);
    pv_dynbuf_free(&body);
    pv_dynbuf_free(&out);
    (void)unlink(path);
    (void)rmdir(dir);
    return 0;
}
