/* SPDX-License-Identifier: Apache-2.0 */
/* audit_int.h - internals shared by audit_key.c and audit_chain.c */
#ifndef AUDIT_AUDIT_INT_H
#define AUDIT_AUDIT_INT_H

#include "audit/audit.h"

#define AUDIT_SIG_LEN 64

/* Sign 'len' bytes of 'msg' with private key 'k' into 'sig'. */
pv_result audit_sign(const struct audit_key *k, const void *msg, size_t len,
                     unsigned char sig[AUDIT_SIG_LEN]) PV_WUR;
/* True when 'sig' is k's signature of 'msg'. Thread-safe. */
bool audit_sig_ok(const struct audit_key *k, const void *msg, size_t len, const unsigned char *sig,
                  size_t siglen);

#endif
