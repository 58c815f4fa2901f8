/* SPDX-License-Identifier: Apache-2.0 */
/* pv_hash.h - a fast non-cryptographic 64-bit hash for in-memory tables
 *
 * Used where the model and the prover must agree on a hash: the model
 * hashes each endpoint fingerprint once at compile time and the prover
 * reuses it for every proof. Not for anything an attacker must not collide:
 * every table that uses it compares the keys as well.
 */
#ifndef PV_HASH_H
#define PV_HASH_H

#include <stddef.h>
#include <stdint.h>

/* 'len' bytes at 'p' (8 at a time, murmur3's finaliser as the mixer). */
uint64_t pv_hash64(const void *p, size_t len, uint64_t seed);

#endif
