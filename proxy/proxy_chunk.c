/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_chunk.c - strict decoder of chunked bodies that re-emits a canonical stream
 *
 * A chunked body is never forwarded as the client framed it. The decoder
 * reads it byte by byte against RFC 9112 §7.1 and writes a canonical
 * re-chunked copy: "HEX CRLF data CRLF" per chunk, lower-case hex without
 * leading zeros, no chunk extensions, and "0 CRLF CRLF" at the end with no
 * trailer fields. Whatever a lenient upstream would make of odd framing
 * (extensions ending in a bare LF, bare CR, CTLs, obs-fold in trailers,
 * whitespace around sizes), it only ever sees bytes whose framing has one
 * reading, and that reading is the one the proxy decided.
 *
 * Rejected (PROXY_CHUNK_BAD with a static reason): a size line that is not
 * 1*HEXDIG [BWS ";" ext] CRLF; more than 15 hex digits; a CTL (other than
 * HTAB), DEL or bare CR/LF anywhere in a size line or trailer line; chunk
 * data not followed by exactly CRLF; a trailer line that is not
 * token ":" value CRLF (obs-fold included); size lines over
 * PROXY_CHUNK_MAX_LINE bytes; trailer sections over PROXY_CHUNK_MAX_TRAILER.
 *
 * Extensions are validated as bytes only (they are dropped, so their inner
 * grammar never reaches the upstream); trailers are validated and dropped
 * (RFC 9110 §6.5.1 lets a recipient discard trailer fields).
 *
 * Pure: no allocation, no I/O; output goes through the caller's callback.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "common/pv_text.h"
#include "proxy/proxy_int.h"

enum {
    CH_SIZE_START, /* first hex digit of a size line */
    CH_SIZE,       /* more hex digits */
    CH_SIZE_WS,    /* BWS after the size: only ';' may follow */
    CH_EXT,        /* chunk extension bytes up to CR */
    CH_SIZE_LF,    /* CR seen at the end of a size line */
    CH_DATA,
    CH_DATA_CR,
    CH_DATA_LF,
    CH_TR_START, /* start of a trailer line, or of the final CRLF */
    CH_TR_NAME,
    CH_TR_VALUE,
    CH_TR_LF,
    CH_END_LF,
    CH_DONE,
    CH_BAD,
};

void proxy_chunk_init(struct proxy_chunk *d)
{
    memset(d, 0, sizeof(*d));
    d->st = CH_SIZE_START;
    d->why = "";
}

static bool is_tchar(unsigned char c)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
        return true;
    }
    return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/* Field-value and extension bytes: HTAB, SP, VCHAR, obs-text. */
static bool is_vbyte(unsigned char c)
{
    return c == '\t' || (c >= 0x20 && c != 0x7F);
}

static enum proxy_chunk_status fail(struct proxy_chunk *d, const char *why)
{
    d->st = CH_BAD;
    d->why = why;
    return PROXY_CHUNK_BAD;
}

/* long: the chunked-body state machine, one case per state inside one byte loop; split apart,
 * every state would pass the cursor, the counters and the emitter */
enum proxy_chunk_status proxy_chunk_feed(struct proxy_chunk *d, const char *buf, size_t len,
                                         size_t *used, proxy_chunk_emit emit, void *arg)
{
    size_t i = 0;

    *used = 0;
    if (d->st == CH_BAD) {
        return PROXY_CHUNK_BAD;
    }
    while (i < len && d->st != CH_DONE) {
        unsigned char c = (unsigned char)buf[i];

        if (d->st == CH_DATA) {
            size_t n = len - i;
            if ((uint64_t)n > d->left) {
                n = (size_t)d->left;
            }
            emit(arg, buf + i, n);
            d->left -= n;
            i += n;
            if (d->left == 0) {
                d->st = CH_DATA_CR;
            }
            continue;
        }
        i++;
        if (d->st <= CH_SIZE_LF && ++d->line > PROXY_CHUNK_MAX_LINE) {
            *used = i;
            return fail(d, "chunk size line too long");
        }
        if (d->st >= CH_TR_START && d->st <= CH_END_LF && ++d->trailer > PROXY_CHUNK_MAX_TRAILER) {
            *used = i;
            return fail(d, "trailer section too large");
        }
        switch (d->st) {
        case CH_SIZE_START:
        case CH_SIZE: {
            int h = pv_hexval(c);
            if (h >= 0) {
                if (d->ndigits == PROXY_CHUNK_MAX_DIGITS) {
                    *used = i;
                    return fail(d, "chunk size too large");
                }
                d->ndigits++;
                d->left = (d->left << 4) | (uint64_t)h;
                d->st = CH_SIZE;
            } else if (d->st == CH_SIZE_START) {
                *used = i;
                return fail(d, "chunk size is not a hex number");
            } else if (c == ';') {
                d->st = CH_EXT;
            } else if (c == ' ' || c == '\t') {
                d->st = CH_SIZE_WS;
            } else if (c == '\r') {
                d->st = CH_SIZE_LF;
            } else {
                *used = i;
                return fail(d, c == '\n' ? "bare LF in chunk size line"
                                         : "invalid byte in chunk size line");
            }
            break;
        }
        case CH_SIZE_WS:
            if (c == ';') {
                d->st = CH_EXT;
            } else if (c != ' ' && c != '\t') {
                *used = i;
                return fail(d, "whitespace after chunk size without an extension");
            }
            break;
        case CH_EXT:
            if (c == '\r') {
                d->st = CH_SIZE_LF;
            } else if (!is_vbyte(c)) {
                *used = i;
                return fail(d, c == '\n' ? "bare LF in chunk extension"
                                         : "control byte in chunk extension");
            }
            break;
        case CH_SIZE_LF:
            if (c != '\n') {
                *used = i;
                return fail(d, "bare CR in chunk size line");
            }
            d->line = 0;
            d->ndigits = 0;
            if (d->left == 0) {
                d->st = CH_TR_START;
            } else {
                char hex[24];
                int n = snprintf(hex, sizeof(hex), "%llx\r\n", (unsigned long long)d->left);
                emit(arg, hex, (size_t)n);
                d->st = CH_DATA;
            }
            break;
        case CH_DATA_CR:
            if (c != '\r') {
                *used = i;
                return fail(d, "chunk data not followed by CRLF");
            }
            d->st = CH_DATA_LF;
            break;
        case CH_DATA_LF:
            if (c != '\n') {
                *used = i;
                return fail(d, "chunk data not followed by CRLF");
            }
            emit(arg, "\r\n", 2);
            d->st = CH_SIZE_START;
            break;
        case CH_TR_START:
            if (c == '\r') {
                d->st = CH_END_LF;
            } else if (is_tchar(c)) {
                d->st = CH_TR_NAME;
            } else {
                *used = i;
                return fail(d, (c == ' ' || c == '\t') ? "obsolete line folding in trailer"
                                                       : "invalid trailer field");
            }
            break;
        case CH_TR_NAME:
            if (c == ':') {
                d->st = CH_TR_VALUE;
            } else if (!is_tchar(c)) {
                *used = i;
                return fail(d, "invalid trailer field name");
            }
            break;
        case CH_TR_VALUE:
            if (c == '\r') {
                d->st = CH_TR_LF;
            } else if (!is_vbyte(c)) {
                *used = i;
                return fail(d, c == '\n' ? "bare LF in trailer" : "control byte in trailer");
            }
            break;
        case CH_TR_LF:
            if (c != '\n') {
                *used = i;
                return fail(d, "bare CR in trailer");
            }
            d->st = CH_TR_START;
            break;
        case CH_END_LF:
            if (c != '\n') {
                *used = i;
                return fail(d, "bare CR after the last chunk");
            }
            emit(arg, "0\r\n\r\n", 5);
            d->st = CH_DONE;
            break;
        default:
            *used = i;
            return fail(d, "chunk decoder state");
        }
    }
    *used = i;
    return d->st == CH_DONE ? PROXY_CHUNK_DONE : PROXY_CHUNK_MORE;
}
