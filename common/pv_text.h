/* SPDX-License-Identifier: Apache-2.0 */
/* pv_text.h - small text helpers shared by every folder (depends on nothing) */
#ifndef PV_TEXT_H
#define PV_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Strict UTF-8 (RFC 3629): no overlong forms, no surrogates, at most
 * U+10FFFF. 's' is borrowed; NUL bytes are valid UTF-8 (callers that refuse
 * them check separately). */
bool pv_utf8_valid(const unsigned char *s, size_t len);

#endif
