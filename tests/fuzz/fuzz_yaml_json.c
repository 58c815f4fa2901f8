/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_yaml_json.c - libFuzzer target: model_yaml_json, the YAML-to-JSON
 * reading of corpus cases and rule files (model/model_yamljson.c). The
 * first byte chooses whether repeated keys are allowed; a document that
 * converts must serialise again. */
#include "config.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>

#include "model/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct model_diags *d = model_diags_new();
    bool dup_ok = size > 0 && (data[0] & 1) != 0;
    json_t *j;

    if (d == NULL) {
        return 0;
    }
    j = model_yaml_json("fuzz.yaml", (const char *)data, size, dup_ok, d);
    if (j != NULL) {
        char *s = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
        if (s == NULL || model_diags_count(d) != 0) {
            abort();
        }
        free(s);
        json_decref(j);
    } else if (model_diags_count(d) == 0) {
        abort(); /* every refusal says why */
    }
    model_diags_free(d);
    return 0;
}
