/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_policy_yaml.c - libFuzzer target: the YAML policy loader (body in fuzz_policy.h) */
#include "config.h"

#include "tests/fuzz/fuzz_policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_policy_one(data, size, MODEL_FMT_YAML);
    return 0;
}
