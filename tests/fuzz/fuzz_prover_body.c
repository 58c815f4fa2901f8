/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_prover_body.c - libFuzzer target: proviso-prover's request body decoder
 *
 * Every input is decoded as a /v1/prove, /v1/check and /v1/discover body.
 * A decode must either fail with PV_ERR_PARSE or PV_ERR_USAGE and a non-empty
 * message, or succeed with a body that passes prover_body_validate() (every
 * span inside the input, strings from the parsed tree); anything else aborts
 * so libFuzzer keeps the input. The input is copied into an exact-size heap
 * buffer so ASan sees any read past 'size'.
 *   ./tests/fuzz/fuzz_prover_body -max_total_time=120 CORPUS_DIR
 */
#include "config.h"

#include <stdint.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prover/prover.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const enum prover_body_kind kinds[] = {PROVER_BODY_PROVE, PROVER_BODY_CHECK,
                                                  PROVER_BODY_DISCOVER};
    char *buf = malloc(size == 0 ? 1 : size);

    if (buf == NULL) {
        return 0;
    }
    if (size > 0) {
        memcpy(buf, data, size);
    }
    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        struct prover_body b;
        char err[512] = "";
        pv_result r = prover_body_decode(kinds[k], buf, size, 30000, &b, err, sizeof(err));

        if (!pv_ok(r)) {
            if ((r.err != PV_ERR_PARSE && r.err != PV_ERR_USAGE) || err[0] == '\0' ||
                b.root != NULL) {
                fprintf(stderr, "fuzz_prover_body: bad failure %d '%s'\n", r.err, err);
                abort();
            }
            continue;
        }
        if (!prover_body_validate(&b, buf, size) || b.timeout_ms > 30000) {
            fprintf(stderr, "fuzz_prover_body: invalid decoded body\n");
            abort();
        }
        prover_body_free(&b);
    }
    free(buf);
    return 0;
}
