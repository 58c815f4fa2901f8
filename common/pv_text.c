/* SPDX-License-Identifier: Apache-2.0 */
/* pv_text.c - small text helpers shared by every folder */
#include "config.h"

#include "common/pv_text.h"

bool pv_utf8_valid(const unsigned char *s, size_t len)
{
    size_t i = 0;

    while (i < len) {
        unsigned char b = s[i];
        size_t n;
        uint32_t cp;
        uint32_t min;
        if (b < 0x80) {
            i++;
            continue;
        }
        if (b >= 0xC2 && b <= 0xDF) {
            n = 1;
            cp = b & 0x1Fu;
            min = 0x80;
        } else if (b >= 0xE0 && b <= 0xEF) {
            n = 2;
            cp = b & 0x0Fu;
            min = 0x800;
        } else if (b >= 0xF0 && b <= 0xF4) {
            n = 3;
            cp = b & 0x07u;
            min = 0x10000;
        } else {
            return false;
        }
        if (len - i <= n) {
            return false;
        }
        for (size_t k = 1; k <= n; k++) {
            if ((s[i + k] & 0xC0) != 0x80) {
                return false;
            }
            cp = (cp << 6) | (s[i + k] & 0x3Fu);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
            return false;
        }
        i += n + 1;
    }
    return true;
}
