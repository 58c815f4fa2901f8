/* SPDX-License-Identifier: Apache-2.0 */
/* pv_hash.c - see pv_hash.h */
#include "config.h"

#include <string.h>

#include "common/pv_hash.h"

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

uint64_t pv_hash64(const void *p, size_t len, uint64_t seed)
{
    const unsigned char *s = p;
    uint64_t h = seed ^ (len * 0x9e3779b97f4a7c15ull);
    uint64_t w;

    while (len >= 8) {
        memcpy(&w, s, 8);
        h = mix(h ^ w) + 0x9e3779b97f4a7c15ull;
        s += 8;
        len -= 8;
    }
    w = 0;
    memcpy(&w, s, len);
    return mix(h ^ w ^ ((uint64_t)len << 56));
}
