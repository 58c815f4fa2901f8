/* SPDX-License-Identifier: Apache-2.0 */
/* pv_settings.c - the settings table's rows and look-ups (pv_settings.h) */
#include "config.h"

#include <stdbool.h>
#include <string.h>

#include "common/pv.h"
#include "common/pv_settings.h"

#define ROW_(id, key, kind, dflt, values, max, help) \
    [PV_SET_##id] = {key, kind, dflt, values, max, help},
static const struct pv_setting_row rows[PV_SET__COUNT] = {PV_SETTINGS(ROW_)};
#undef ROW_

const struct pv_setting_row *pv_setting_row(enum pv_setting s)
{
    return (unsigned)s < PV_SET__COUNT ? &rows[s] : NULL;
}

const char *pv_setting_key(enum pv_setting s)
{
    return (unsigned)s < PV_SET__COUNT ? rows[s].key : "";
}

const struct pv_setting_row *pv_setting_find(const char *key)
{
    for (size_t i = 0; i < PV_ARRAY_LEN(rows); i++) {
        if (strcmp(rows[i].key, key) == 0) {
            return &rows[i];
        }
    }
    return NULL;
}

const char *pv_setting_keys(void)
{
#define NAME_(id, key, kind, dflt, values, max, help) ", " key
    static const char list[] = PV_SETTINGS(NAME_);
#undef NAME_

    return list + 2; /* past the first ", " */
}

bool pv_setting_choice_ok(const struct pv_setting_row *row, const char *value)
{
    const char *c = row->kind == PV_SETTING_CHOICE ? row->values : NULL;
    size_t n = strlen(value);

    while (c != NULL && *c != '\0') {
        size_t len = strcspn(c, "|");

        if (len == n && n > 0 && memcmp(c, value, n) == 0) {
            return true;
        }
        c += len + (c[len] == '|');
    }
    return false;
}

/* Edit distance (optimal string alignment) of 'a' (alen) and 'b' (blen);
 * 3 stands for "more than two" and for words longer than 40 bytes. */
static size_t distance(const char *a, size_t alen, const char *b, size_t blen)
{
    size_t d[41][41];

    if (alen > 40 || blen > 40) {
        return 3;
    }
    for (size_t i = 0; i <= alen; i++) {
        d[i][0] = i;
    }
    for (size_t j = 0; j <= blen; j++) {
        d[0][j] = j;
    }
    for (size_t i = 1; i <= alen; i++) {
        for (size_t j = 1; j <= blen; j++) {
            char x = a[i - 1];
            char y = b[j - 1];
            size_t best = d[i - 1][j - 1] + (x == y || (x ^ 0x20) == y ? 0 : 1);

            if (d[i - 1][j] + 1 < best) {
                best = d[i - 1][j] + 1;
            }
            if (d[i][j - 1] + 1 < best) {
                best = d[i][j - 1] + 1;
            }
            if (i > 1 && j > 1 && x == b[j - 2] && a[i - 2] == y && d[i - 2][j - 2] + 1 < best) {
                best = d[i - 2][j - 2] + 1;
            }
            d[i][j] = best;
        }
    }
    return d[alen][blen];
}

const char *pv_closest_word(const char *word, const char *words, char *buf, size_t buflen)
{
    const char *best = NULL;
    size_t bestlen = 0;
    size_t bestd = 3;
    size_t n = strlen(word);

    while (words != NULL && *words != '\0') {
        size_t len = strcspn(words, "|");
        size_t dist = distance(word, n, words, len);

        if (dist < bestd) {
            bestd = dist;
            best = words;
            bestlen = len;
        }
        words += len + (words[len] == '|');
    }
    if (best == NULL || bestlen >= buflen) {
        return NULL;
    }
    memcpy(buf, best, bestlen);
    buf[bestlen] = '\0';
    return buf;
}

const char *pv_setting_closest(const char *key)
{
    const char *best = NULL;
    size_t bestd = 3;
    size_t n = strlen(key);

    for (size_t i = 0; i < PV_ARRAY_LEN(rows); i++) {
        size_t dist = distance(key, n, rows[i].key, strlen(rows[i].key));

        if (dist < bestd) {
            bestd = dist;
            best = rows[i].key;
        }
    }
    return best;
}
