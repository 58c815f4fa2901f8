/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_audit_verify.c - libFuzzer target: `proviso audit verify`'s reader
 *
 * An export is a file an attacker may have touched. Every input is
 * verified (one and two signature threads) and loaded for replay; the
 * verdict must be one of the three statuses with a reason whenever it is
 * not intact, the named line must exist, and the two thread counts must
 * agree. Anything else aborts so libFuzzer keeps the input. The input is
 * copied into an exact-size heap buffer so ASan sees any read past 'size'.
 * Seeds: exports written by tests/e2e/audit_chain.sh (KEEP=1).
 *   ./tests/fuzz/fuzz_audit_verify -max_total_time=120 CORPUS_DIR
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Any valid Ed25519 public key: the fuzzer cannot forge signatures, so
 * inputs reach every check before the signature one. */
static const char pub[] = "eeZKUGI57JcT+oSUSkoKFt+r3BSa517KD0YV0gd5hsQ=";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct audit_key *key;
    struct audit_report r1;
    struct audit_report r2;
    json_t *recs = NULL;
    json_t *blobs = NULL;
    char err[256];
    size_t nlines = 1;
    char *buf = malloc(size == 0 ? 1 : size);

    if (key == NULL) {
        key = audit_key_public(pub, strlen(pub), err, sizeof(err));
        if (key == NULL) {
            abort();
        }
    }
    if (buf == NULL) {
        return 0;
    }
    if (size > 0) {
        memcpy(buf, data, size);
    }
    for (size_t i = 0; i < size; i++) {
        nlines += buf[i] == '\n';
    }
    audit_verify(buf, size, key, 1, false, &r1);
    audit_verify(buf, size, key, 2, false, &r2);
    if (r1.status != r2.status || r1.bad_line != r2.bad_line || r1.bad_seq != r2.bad_seq) {
        abort();
    }
    if (r1.status != AUDIT_INTACT && r1.reason[0] == '\0') {
        abort();
    }
    if (r1.status == AUDIT_TAMPERED && (r1.bad_line == 0 || r1.bad_line > nlines)) {
        abort();
    }
    audit_verify(buf, size, key, 2, true, &r2);
    if (r2.status != AUDIT_INTACT && r2.reason[0] == '\0') {
        abort();
    }
    if (pv_ok(audit_load(buf, size, &recs, &blobs, err, sizeof(err)))) {
        if (!json_is_array(recs) || !json_is_object(blobs)) {
            abort();
        }
        json_decref(recs);
        json_decref(blobs);
    } else if (err[0] == '\0') {
        abort();
    }
    free(buf);
    return 0;
}
