/* SPDX-License-Identifier: Apache-2.0 */
/* prover_util.c - string map and array growth for libprover
 *
 * The map is open addressing with linear probing over FNV-1a hashes; keys are
 * borrowed (the caller keeps them alive as long as the map) and the load
 * factor stays at or below one half.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "prover/prover_int.h"

uint64_t prover_hash(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ull;

    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return h;
}

void prover_map_free(struct prover_map *m)
{
    PV_SAFE_FREE(m->slots);
    m->cap = 0;
    m->n = 0;
}

static pv_result map_rehash(struct prover_map *m) PV_WUR;
static pv_result map_rehash(struct prover_map *m)
{
    size_t ncap = m->cap ? m->cap * 2 : 16;
    struct prover_map_slot *ns = pv_calloc(ncap, sizeof(*ns));

    PV_GUARD_PTR(ns);
    for (size_t i = 0; i < m->cap; i++) {
        struct prover_map_slot *o = &m->slots[i];
        size_t j;

        if (o->key == NULL) {
            continue;
        }
        j = (size_t)o->hash & (ncap - 1);
        while (ns[j].key != NULL) {
            j = (j + 1) & (ncap - 1);
        }
        ns[j] = *o;
    }
    free(m->slots);
    m->slots = ns;
    m->cap = ncap;
    return PV_RESULT_OK;
}

pv_result prover_map_put(struct prover_map *m, const char *key, size_t len, size_t val,
                         size_t *found, bool *inserted)
{
    uint64_t h = prover_hash(key, len);
    size_t j;

    if ((m->n + 1) * 2 > m->cap) {
        PV_GUARD(map_rehash(m));
    }
    j = (size_t)h & (m->cap - 1);
    while (m->slots[j].key != NULL) {
        struct prover_map_slot *sl = &m->slots[j];

        if (sl->hash == h && sl->len == len && memcmp(sl->key, key, len) == 0) {
            *found = sl->val;
            *inserted = false;
            return PV_RESULT_OK;
        }
        j = (j + 1) & (m->cap - 1);
    }
    m->slots[j].key = key;
    m->slots[j].len = len;
    m->slots[j].hash = h;
    m->slots[j].val = val;
    m->n++;
    *found = val;
    *inserted = true;
    return PV_RESULT_OK;
}

bool prover_map_get(const struct prover_map *m, const char *key, size_t len, size_t *val)
{
    uint64_t h;
    size_t j;

    if (m->cap == 0) {
        return false;
    }
    h = prover_hash(key, len);
    j = (size_t)h & (m->cap - 1);
    while (m->slots[j].key != NULL) {
        const struct prover_map_slot *sl = &m->slots[j];

        if (sl->hash == h && sl->len == len && memcmp(sl->key, key, len) == 0) {
            *val = sl->val;
            return true;
        }
        j = (j + 1) & (m->cap - 1);
    }
    return false;
}

void *prover_grow(void *arr, size_t *cap, size_t n, size_t elsize)
{
    size_t ncap;
    void *na;

    if (n < *cap) {
        return arr;
    }
    ncap = *cap ? *cap * 2 : 8;
    if (ncap > SIZE_MAX / elsize) {
        pv_errno = PV_ERR_NOMEM;
        return NULL;
    }
    na = pv_realloc(arr, ncap * elsize);
    if (na == NULL) {
        return NULL;
    }
    memset((char *)na + *cap * elsize, 0, (ncap - *cap) * elsize);
    *cap = ncap;
    return na;
}
