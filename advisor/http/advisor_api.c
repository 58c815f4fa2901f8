/* SPDX-License-Identifier: Apache-2.0 */
/* advisor_api.c - GET /openapi.json: the advisor's API description
 *
 * The document is advisor/data/openapi.json, compiled in by common/embed.sh
 * (advisor_data_openapi_json) the same way the prover embeds its own
 * (docs/architecture.md, "The service shell"). It is served as the bytes of
 * the file; tests/e2e/advisor_lifecycle.sh checks that routes of
 * advisor_routes.c's table appear in it.
 */
#include "config.h"

#include <stddef.h>

#include "advisor/http/http.h"

extern const char advisor_data_openapi_json[];
extern const size_t advisor_data_openapi_json_len;

const char *advisor_api_text(size_t *len)
{
    *len = advisor_data_openapi_json_len;
    return advisor_data_openapi_json;
}
