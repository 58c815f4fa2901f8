/* SPDX-License-Identifier: Apache-2.0 */
/* pv_settings.h - the advisor's settings keys: the one table
 *
 * proviso-advisor validates, resolves and lists the settings
 * (advisor/core/advisor_settings.c); the CLI's settings commands print their help
 * and what an unset key means from the same rows, without linking the
 * advisor. A new setting is a row here, its paragraph in docs/advisor.md
 * (tests/docs_settings.sh checks) and the code that reads it.
 *
 * Columns: X(ID, key, kind, dflt, values, max, help)
 *   ID       PV_SET_ID, the enum constant
 *   key      the key the API, the store and the CLI use
 *   kind     PV_SETTING_BOOL, _CHOICE (one of 'values') or _CIDRS (a list
 *            of at most 'max' canonical CIDRs)
 *   dflt     what an unset key means: the value as JSON text, or words
 *            when no value stands for it (the advisor answers null for an
 *            unset key either way)
 *   values   the values in words for help; _CHOICE: the values themselves,
 *            '|'-separated, exact and case-sensitive
 *   max      _CIDRS: the most entries
 *   help     one line for the CLI's help
 */
#ifndef PV_SETTINGS_H
#define PV_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>

#define PV_SETTINGS(X)                                                                             \
    X(PROPOSALS, "agent_policy_proposals_enabled", PV_SETTING_BOOL, "false", "true|false", 0,      \
      "the sandbox may propose")                                                                   \
    X(MODE, "proposal_approval_mode", PV_SETTING_CHOICE, "\"manual\"", "manual|auto", 0,           \
      "auto approves a proof without findings inside the envelope")                                \
    X(PEER_RANGES, "peer_address_ranges", PV_SETTING_CIDRS, "unset (any address may register)",    \
      "list of CIDRs", 64, "where the sandbox may register itself for peers")                      \
    X(ENVELOPE, "auto_approval_envelope", PV_SETTING_BOOL, "true", "true|false", 0,                \
      "auto approvals stay within the envelope")                                                   \
    X(ENV_BINARY_GLOBS, "envelope_allow_binary_globs", PV_SETTING_BOOL, "false", "true|false", 0,  \
      "the envelope admits binary globs")                                                          \
    X(ENV_HOST_WILDCARDS, "envelope_allow_host_wildcards", PV_SETTING_BOOL, "false", "true|false", \
      0, "the envelope admits host wildcards")                                                     \
    X(ENV_UNINSPECTED, "envelope_allow_uninspected", PV_SETTING_BOOL, "false", "true|false", 0,    \
      "the envelope admits uninspected (opaque) grants")                                           \
    X(ENV_ACCESS_PRESETS, "envelope_allow_access_presets", PV_SETTING_BOOL, "false", "true|false", \
      0, "the envelope admits access presets and method wildcards")                                \
    X(ENV_NEW_PORTS, "envelope_allow_new_ports", PV_SETTING_BOOL, "false", "true|false", 0,        \
      "the envelope admits ports other than 443")

enum pv_setting_kind { PV_SETTING_BOOL, PV_SETTING_CHOICE, PV_SETTING_CIDRS };

#define PV_SETTING_ENUM_(id, key, kind, dflt, values, max, help) PV_SET_##id,
enum pv_setting { PV_SETTINGS(PV_SETTING_ENUM_) };
#undef PV_SETTING_ENUM_
#define PV_SETTING_ONE_(id, key, kind, dflt, values, max, help) +1
enum { PV_SET__COUNT = 0 PV_SETTINGS(PV_SETTING_ONE_) };
#undef PV_SETTING_ONE_

/* One row of the table (static storage). */
struct pv_setting_row {
    const char *key;
    enum pv_setting_kind kind;
    const char *dflt;
    const char *values;
    size_t max;
    const char *help;
};

/* Row 's' (borrowed, static); NULL when out of range. */
const struct pv_setting_row *pv_setting_row(enum pv_setting s);
/* The key of 's'; "" when out of range. */
const char *pv_setting_key(enum pv_setting s);
/* The row whose key is 'key', NULL when none. */
const struct pv_setting_row *pv_setting_find(const char *key);
/* The keys, comma-separated ("a, b, c"), for messages (static). */
const char *pv_setting_keys(void);
/* 'value' is one of a _CHOICE row's '|'-separated values (exactly); false
 * for other kinds. */
bool pv_setting_choice_ok(const struct pv_setting_row *row, const char *value);
/* The word of 'words' (a '|'-separated list, such as a _CHOICE row's
 * values) closest to 'word', for a did-you-mean: at most two edits away
 * (case, a swap of neighbours, one inserted, dropped or changed byte each
 * count one), NULL when none is that close. Writes it into 'buf'. */
const char *pv_closest_word(const char *word, const char *words, char *buf, size_t buflen);
/* The key closest to 'key' as pv_closest_word() says (static), or NULL. */
const char *pv_setting_closest(const char *key);

#endif
