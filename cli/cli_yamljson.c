/* SPDX-License-Identifier: Apache-2.0 */
/* cli_yamljson.c - a YAML document as a jansson tree (corpus cases, rules)
 *
 * Corpus case files are YAML documents whose parts (baseline, candidate,
 * proposal, credentials, boundary, expect) are handed to libmodel as JSON.
 * The reading is libmodel's (model_yaml_json: the policy reader, so the same
 * limits and refusals); unquoted integers, booleans and null stay JSON
 * numbers, booleans and null, everything else is a string. The first error
 * comes back as "FILE:LINE:COL: message".
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "common/pv.h"
#include "model/model.h"

json_t *cli_yaml_to_json(const char *file, const char *buf, size_t len, bool dup_ok, char *err,
                         size_t errlen)
{
    struct model_diags *d = model_diags_new();
    json_t *root = NULL;

    err[0] = '\0';
    if (d == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    root = model_yaml_json(file, buf, len, dup_ok, d);
    if (root == NULL) {
        snprintf(err, errlen, "%s",
                 model_diags_count(d) > 0 ? model_diags_line(d, 0) : "unreadable YAML");
    }
    model_diags_free(d);
    return root;
}

/* ===========================================================================
 * Which kind of document a file holds (for hints)
 * ========================================================================= */

const char *cli_doc_hint(const char *path, const char *buf, size_t len, enum cli_doc want)
{
    static _Thread_local char hint[512];
    char err[128];
    json_t *j = cli_yaml_to_json(path, buf, len, true, err, sizeof(err));
    bool proposal = json_is_object(j) && (json_object_get(j, "operations") != NULL ||
                                          json_object_get(j, "intent_summary") != NULL);
    bool policy = json_is_object(j) && (json_object_get(j, "network_policies") != NULL ||
                                        json_object_get(j, "filesystem_policy") != NULL);

    json_decref(j);
    if (want == CLI_DOC_POLICY && proposal && !policy) {
        snprintf(hint, sizeof(hint),
                 "%s: hint: this looks like a proposal (intent_summary/operations), not a "
                 "policy; give it with 'proviso prove --proposal %s'",
                 path, path);
        return hint;
    }
    if (want == CLI_DOC_PROPOSAL && policy && !proposal) {
        snprintf(hint, sizeof(hint),
                 "%s: hint: this looks like a policy (network_policies), not a proposal; "
                 "give it with --candidate or --policy",
                 path);
        return hint;
    }
    return NULL;
}
