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
