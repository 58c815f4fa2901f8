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

/* The value of hexadecimal digit 'c' (0-9, a-f, A-F), -1 for any other
 * byte. */
int pv_hexval(unsigned char c);

/* Whether 'cp' is of Unicode General Category Cf (format characters:
 * bidi controls, zero-width characters, ...); the table is in pv_text.c. */
bool pv_unicode_is_format(uint32_t cp);

/* A Content-Type field value (RFC 9110 §8.3.1): "type/subtype", then
 * parameters ';' name=value, each value a token or a quoted-string. */
struct pv_ctype {
    char media[80];   /* "type/subtype", lower-cased */
    char charset[40]; /* the charset parameter, unquoted, lower-cased; "" when absent */
};

/* Parse Content-Type value 'v' ('len' bytes) into 'out'. False when it does
 * not parse, names a parameter twice (servers disagree on which one
 * counts: the first, the last), or its media type or charset do not fit. */
bool pv_ctype_parse(const char *v, size_t len, struct pv_ctype *out);

/* Whether charset 'cs' (lower-cased, "" for none) is read as UTF-8: none,
 * utf-8, utf8, or us-ascii (a subset). */
bool pv_ctype_utf8(const char *cs);

/* The check of every reader of a request body (JSON-RPC, GraphQL): a
 * Content-Type value 'v' (NULL: absent, *out empty) that parses and names
 * a UTF-8 charset or none. False with the reason in 'why'. */
bool pv_ctype_body_utf8(const char *v, struct pv_ctype *out, char *why, size_t whylen);

enum pv_text_verdict {
    PV_TEXT_OK,
    PV_TEXT_BAD_UTF8,    /* not strict UTF-8 at byte '*off' */
    PV_TEXT_FORMAT_CHAR, /* code point '*cp' (General Category Cf) at byte '*off' */
};

/* Text a reviewer will read: strict UTF-8 without format characters. 's'
 * is borrowed; '*cp' and '*off' name the first offence ('*off' = len when
 * OK). */
enum pv_text_verdict pv_text_check(const unsigned char *s, size_t len, uint32_t *cp, size_t *off);

#endif
