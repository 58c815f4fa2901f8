/* SPDX-License-Identifier: Apache-2.0 */
/* advisor_settings.c - the settings keys: validation, scopes, resolution
 *
 * Settings live at two scopes: global ("gateway" in the reference's audit
 * words) and per sandbox. The global value wins. Writes are validated
 * against a table of registered keys with the reference's messages; a value
 * already in the store that is not valid (written by an older build, or by
 * hand) resolves to the safe default - an unknown approval mode is manual,
 * and peer_address_ranges that do not parse admit no address.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advisor/core/core.h"
#include "advisor/store/store.h"
#include "model/model.h"

/* The keys are the rows of common/pv_settings.h: the table, the "Allowed
 * keys" message, validation and GET's list read them. */
const char *advisor_setting_keys(void)
{
    return pv_setting_keys();
}

/* ===========================================================================
 * peer_address_ranges: a list of canonical CIDRs (docs/advisor.md#peers)
 * ========================================================================= */

struct advisor_ranges {
    bool bounded;
    size_t n;
    struct model_cidr v[ADVISOR_PEER_RANGES_MAX];
    char *text;       /* the stored value; NULL when unbounded */
    const char *from; /* "global", "sandbox" or "default" */
};

/* One entry: a CIDR or a bare address, strictly in canonical text (the
 * model's strict parser, no host bits, and the text the model would print:
 * "10.0.0.0/8", "fd00::/8", "10.1.2.3"), so the stored list reads as what
 * it admits. False with the reason in 'why'. */
static bool entry_parse(const char *s, struct model_cidr *out, char *why, size_t len)
{
    const char *w = NULL;
    char canon[64];
    size_t at;

    if (!model_cidr_parse(s, strlen(s), out, &w)) {
        snprintf(why, len, "%s", w != NULL ? w : "invalid CIDR");
        return false;
    }
    model_ip_format(&out->net, canon, sizeof(canon));
    at = strlen(canon);
    if (strchr(s, '/') != NULL) {
        /* a v4-mapped network is an IPv4 CIDR: its prefix counts from bit 96 */
        unsigned bits = out->prefix - (model_ip_is_v4(&out->net) ? 96u : 0u);
        snprintf(canon + at, sizeof(canon) - at, "/%u", bits);
    }
    if (strcmp(s, canon) != 0) {
        snprintf(why, len, "not canonical, write '%s'", canon);
        return false;
    }
    return true;
}

/* 'value' as at most ADVISOR_PEER_RANGES_MAX CIDRs in 'v'; NULL when valid,
 * else the message (in 'buf'). */
static const char *ranges_parse(const char *key, const json_t *value, struct model_cidr *v,
                                size_t *n, char *buf, size_t len)
{
    char why[128];

    *n = 0;
    if (!json_is_array(value)) {
        snprintf(buf, len, "setting '%s' expects list value", key);
        return buf;
    }
    if (json_array_size(value) > ADVISOR_PEER_RANGES_MAX) {
        snprintf(buf, len, "setting '%s' expects at most %d CIDRs; got %zu", key,
                 ADVISOR_PEER_RANGES_MAX, json_array_size(value));
        return buf;
    }
    for (size_t i = 0; i < json_array_size(value); i++) {
        const char *s = json_string_value(json_array_get(value, i));

        if (s == NULL) {
            snprintf(buf, len,
                     "setting '%s' expects a list of CIDR strings; entry %zu is not a string", key,
                     i);
            return buf;
        }
        if (!entry_parse(s, &v[i], why, sizeof(why))) {
            snprintf(buf, len, "setting '%s' expects a list of canonical CIDRs; got '%s' (%s)", key,
                     s, why);
            return buf;
        }
        for (size_t k = 0; k < i; k++) {
            if (v[k].prefix == v[i].prefix && memcmp(v[k].net.b, v[i].net.b, 16) == 0) {
                snprintf(buf, len, "setting '%s' expects a list of canonical CIDRs; got '%s' twice",
                         key, s);
                return buf;
            }
        }
        *n = i + 1;
    }
    return NULL;
}

/* ===========================================================================
 * Validation and resolution
 * ========================================================================= */

const char *advisor_setting_check(const char *key, const json_t *value, char *buf, size_t len)
{
    const struct pv_setting_row *row = pv_setting_find(key);

    if (row == NULL) {
        snprintf(buf, len, "unknown setting key '%s'. Allowed keys: %s", key,
                 advisor_setting_keys());
        return buf;
    }
    switch (row->kind) {
    case PV_SETTING_BOOL:
        if (!json_is_boolean(value)) {
            snprintf(buf, len, "setting '%s' expects bool value", key);
            return buf;
        }
        return NULL;
    case PV_SETTING_CHOICE:
        if (!json_is_string(value)) {
            snprintf(buf, len, "setting '%s' expects string value", key);
            return buf;
        }
        /* Exact and case-sensitive: "AUTO", " auto" and "autom" are typos. */
        if (!pv_setting_choice_ok(row, json_string_value(value))) {
            char choices[128];
            size_t at = 0;

            /* "manual|auto" reads "[manual, auto]" */
            for (const char *c = row->values; *c != '\0' && at + 3 < sizeof(choices); c++) {
                if (*c == '|') {
                    choices[at++] = ',';
                    choices[at++] = ' ';
                } else {
                    choices[at++] = *c;
                }
            }
            choices[at] = '\0';
            snprintf(buf, len, "setting '%s' expects one of [%s]; got '%s'", key, choices,
                     json_string_value(value));
            return buf;
        }
        return NULL;
    case PV_SETTING_CIDRS: {
        struct model_cidr v[ADVISOR_PEER_RANGES_MAX];
        size_t n;
        return ranges_parse(key, value, v, &n, buf, len);
    }
    }
    return "invalid setting kind";
}

/* The stored text of 'key' for 'sandbox' (NULL: global only) and its scope;
 * '*text' NULL when unset. The global value wins. */
static pv_result setting_read(struct store *st, const char *sandbox, const char *key, char **text,
                              const char **from)
{
    *from = "global";
    PV_GUARD(store_setting_read(st, "", key, text));
    if (*text == NULL && sandbox != NULL) {
        *from = "sandbox";
        PV_GUARD(store_setting_read(st, sandbox, key, text));
    }
    if (*text == NULL) {
        *from = "default";
    }
    return PV_RESULT_OK;
}

json_t *advisor_setting_resolve(struct store *st, const char *sandbox, const char *key,
                                const char **from)
{
    char *text = NULL;
    json_t *v;

    if (!pv_ok(setting_read(st, sandbox, key, &text, from)) || text == NULL) {
        *from = "default";
        return json_null();
    }
    v = json_loads(text, JSON_DECODE_ANY, NULL);
    free(text);
    return v != NULL ? v : json_null();
}

pv_result advisor_ranges_get(struct store *st, const char *sandbox, struct advisor_ranges **out)
{
    struct advisor_ranges *r = pv_calloc(1, sizeof(*r));
    json_t *v;
    char msg[256];
    pv_result res;

    *out = NULL;
    PV_ENSURE(r != NULL, PV_ERR_NOMEM);
    res = setting_read(st, sandbox, ADVISOR_SET(PEER_RANGES), &r->text, &r->from);
    if (!pv_ok(res)) {
        advisor_ranges_free(r);
        return res;
    }
    r->bounded = r->text != NULL;
    if (r->bounded) {
        /* not valid (an older build, by hand): bounds to no address */
        v = json_loads(r->text, JSON_DECODE_ANY, NULL);
        if (ranges_parse(ADVISOR_SET(PEER_RANGES), v, r->v, &r->n, msg, sizeof(msg)) != NULL) {
            r->n = 0;
        }
        json_decref(v);
    }
    *out = r;
    return PV_RESULT_OK;
}

bool advisor_ranges_admit(const struct advisor_ranges *r, const struct model_ip *ip)
{
    if (!r->bounded) {
        return true;
    }
    for (size_t i = 0; i < r->n; i++) {
        if (model_cidr_contains(&r->v[i], ip)) {
            return true;
        }
    }
    return false;
}

const char *advisor_ranges_text(const struct advisor_ranges *r)
{
    return r->text;
}

const char *advisor_ranges_from(const struct advisor_ranges *r)
{
    return r->from;
}

void advisor_ranges_free(struct advisor_ranges *r)
{
    if (r != NULL) {
        free(r->text);
        free(r);
    }
}

bool advisor_mode_auto(struct store *st, const char *sandbox, const char **resolved_from)
{
    const char *from;
    json_t *v = advisor_setting_resolve(st, sandbox, ADVISOR_SET(MODE), &from);
    bool is_auto = json_is_string(v) && strcmp(json_string_value(v), "auto") == 0;

    json_decref(v);
    *resolved_from = strcmp(from, "global") == 0 ? "gateway" : from;
    return is_auto;
}

pv_result advisor_proposals_on(struct store *st, const char *sandbox, bool *on)
{
    const char *from;
    char *text = NULL;
    json_error_t jerr;
    json_t *v;

    *on = false;
    PV_GUARD(setting_read(st, sandbox, ADVISOR_SET(PROPOSALS), &text, &from));
    if (text == NULL) {
        return PV_RESULT_OK; /* the default: off */
    }
    v = json_loads(text, JSON_DECODE_ANY, &jerr);
    free(text);
    /* a stored value that does not parse is off; memory is ours */
    PV_ENSURE(v != NULL || json_error_code(&jerr) != json_error_out_of_memory, PV_ERR_NOMEM);
    *on = json_is_true(v);
    json_decref(v);
    return PV_RESULT_OK;
}

bool advisor_proposals_enabled(struct store *st, const char *sandbox)
{
    const char *from;
    json_t *v = advisor_setting_resolve(st, sandbox, ADVISOR_SET(PROPOSALS), &from);
    bool on = json_is_true(v);

    json_decref(v);
    return on;
}

json_t *advisor_settings_json(struct store *st, const char *sandbox)
{
    json_t *out = json_object();

    for (int i = 0; i < PV_SET__COUNT && out != NULL; i++) {
        const char *key = pv_setting_key((enum pv_setting)i);
        const char *from;
        json_t *v = advisor_setting_resolve(st, sandbox, key, &from);
        if (json_object_set_new(out, key,
                                json_pack("{s:o,s:s}", "value", v, "resolved_from", from)) != 0) {
            json_decref(out);
            out = NULL;
        }
    }
    return out;
}
