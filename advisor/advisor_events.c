/* SPDX-License-Identifier: Apache-2.0 */
/* advisor_events.c - decision events: OCSF shorthand line + JSON, one record
 *
 * Every event is written by the transaction that makes the change it
 * describes (store_event_append inside store_begin/commit), so the event
 * log and the state never disagree. The shorthand line keeps the
 * reference's words ("CONFIG:APPROVED [INFO] ..."); the JSON form carries
 * the same facts plus what a replay needs (docs/advisor.md#events). After
 * the commit the caller echoes the line to the log as "OCSF <line>".
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advisor/advisor.h"
#include "advisor/store.h"

void advisor_event_suffix(char *buf, size_t len, int64_t rev, const char *hash)
{
    if (rev > 0 && hash != NULL && hash[0] != '\0') {
        snprintf(buf, len, "version:v%lld hash:sha256:%s", (long long)rev, hash);
    } else if (rev > 0) {
        snprintf(buf, len, "version:v%lld", (long long)rev);
    } else if (hash != NULL && hash[0] != '\0') {
        snprintf(buf, len, "hash:sha256:%s", hash);
    } else {
        buf[0] = '\0';
    }
}

pv_result advisor_event(struct store *st, const char *sandbox, const char *kind,
                        const char *line, json_t *extra)
{
    struct store_event e;
    json_t *j = json_pack("{s:s,s:s,s:s}", "kind", kind, "sandbox", sandbox != NULL ? sandbox : "",
                          "line", line);
    pv_result r;

    if (j == NULL) {
        json_decref(extra);
        PV_BAIL(PV_ERR_NOMEM);
    }
    if (extra != NULL) {
        json_object_update(j, extra);
        json_decref(extra);
    }
    memset(&e, 0, sizeof(e));
    e.sandbox = (char *)(sandbox != NULL ? sandbox : "");
    e.kind = (char *)kind;
    e.line = (char *)line;
    e.json = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(j);
    PV_ENSURE(e.json != NULL, PV_ERR_NOMEM);
    r = store_event_append(st, &e);
    free(e.json);
    return r;
}
