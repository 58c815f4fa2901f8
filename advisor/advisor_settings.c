/* SPDX-License-Identifier: Apache-2.0 */
/* advisor_settings.c - the settings keys: validation, scopes, resolution
 *
 * Settings live at two scopes: global ("gateway" in the reference's audit
 * words) and per sandbox. The global value wins. Writes are validated
 * against a table of registered keys with the reference's messages; a value
 * already in the store that is not valid (written by an older build, or by
 * hand) resolves to the safe default - an unknown approval mode is manual.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advisor/advisor.h"
#include "advisor/store.h"

enum kind { KIND_BOOL, KIND_MODE };

static const struct {
    const char *key;
    enum kind kind;
} keys[] = {
    {ADVISOR_SET_PROPOSALS, KIND_BOOL},
    {ADVISOR_SET_MODE, KIND_MODE},
};

const char *advisor_setting_keys(void)
{
    return ADVISOR_SET_PROPOSALS ", " ADVISOR_SET_MODE;
}

const char *advisor_setting_check(const char *key, const json_t *value, char *buf, size_t len)
{
    for (size_t i = 0; i < PV_ARRAY_LEN(keys); i++) {
        if (strcmp(keys[i].key, key) != 0) {
            continue;
        }
        switch (keys[i].kind) {
        case KIND_BOOL:
            if (!json_is_boolean(value)) {
                snprintf(buf, len, "setting '%s' expects bool value", key);
                return buf;
            }
            return NULL;
        case KIND_MODE:
            if (!json_is_string(value)) {
                snprintf(buf, len, "setting '%s' expects string value", key);
                return buf;
            }
            /* Exact and case-sensitive: "AUTO", " auto" and "autom" are typos. */
            if (strcmp(json_string_value(value), "manual") != 0 &&
                strcmp(json_string_value(value), "auto") != 0) {
                snprintf(buf, len, "setting '%s' expects one of [manual, auto]; got '%s'", key,
                         json_string_value(value));
                return buf;
            }
            return NULL;
        }
        return "invalid setting kind";
    }
    snprintf(buf, len, "unknown setting key '%s'. Allowed keys: %s", key, advisor_setting_keys());
    return buf;
}

json_t *advisor_setting_resolve(struct store *st, const char *sandbox, const char *key,
                                const char **from)
{
    char *text = store_setting_get(st, "", key);

    *from = "global";
    if (text == NULL && sandbox != NULL) {
        text = store_setting_get(st, sandbox, key);
        *from = "sandbox";
    }
    if (text == NULL) {
        *from = "default";
        return json_null();
    }
    {
        json_t *v = json_loads(text, JSON_DECODE_ANY, NULL);
        free(text);
        return v != NULL ? v : json_null();
    }
}

bool advisor_mode_auto(struct store *st, const char *sandbox, const char **resolved_from)
{
    const char *from;
    json_t *v = advisor_setting_resolve(st, sandbox, ADVISOR_SET_MODE, &from);
    bool is_auto = json_is_string(v) && strcmp(json_string_value(v), "auto") == 0;

    json_decref(v);
    *resolved_from = strcmp(from, "global") == 0 ? "gateway" : from;
    return is_auto;
}

bool advisor_proposals_enabled(struct store *st, const char *sandbox)
{
    const char *from;
    json_t *v = advisor_setting_resolve(st, sandbox, ADVISOR_SET_PROPOSALS, &from);
    bool on = json_is_true(v);

    json_decref(v);
    return on;
}

json_t *advisor_settings_json(struct store *st, const char *sandbox)
{
    json_t *out = json_object();

    for (size_t i = 0; i < PV_ARRAY_LEN(keys) && out != NULL; i++) {
        const char *from;
        json_t *v = advisor_setting_resolve(st, sandbox, keys[i].key, &from);
        if (json_object_set_new(out, keys[i].key,
                                json_pack("{s:o,s:s}", "value", v, "resolved_from", from)) != 0) {
            json_decref(out);
            out = NULL;
        }
    }
    return out;
}
